#include "cli_scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cli_axis_names[3] = {"x", "y", "z"};

/* The generated bar's limits: cells per axis, and tets (tw_mesh_bar's, the
 * mesh's int indices with room to spare). */
#define CLI_BAR_MAX_CELLS 100000
#define CLI_BAR_MAX_TETS 2e9

cli_scene_opts cli_default_scene_opts(void)
{
    tw_world_def w = tw_default_world_def();
    cli_scene_opts o;
    memset(&o, 0, sizeof o);
    o.bar_size[0] = 1.0;
    o.bar_size[1] = 0.1;
    o.bar_size[2] = 0.1;
    o.bar_cells[0] = 20;
    o.bar_cells[1] = 2;
    o.bar_cells[2] = 2;
    /* the material, gravity and method defaults are the engine's own */
    o.youngs = w.youngs_modulus;
    o.poisson = w.poisson_ratio;
    o.density = w.density;
    for (int k = 0; k < 3; k++) o.gravity[k] = w.gravity[k];
    o.method = w.method;
    o.backend = TW_BACKEND_AUTO; /* the tool picks the best backend present */
    o.threads = w.threads;
    o.gradient_axis = -1;
    return o;
}

void cli_scene_print_help(FILE *f, const cli_scene_opts *d)
{
    fprintf(f,
            "Scene options:\n"
            "  --mesh PATH             tetrahedral mesh: .node/.ele (TetGen), .msh (Gmsh), .mesh (MEDIT)\n"
            "  --bar L,W,H,NX,NY,NZ    generated bar [0,L]x[0,W]x[0,H] m of NX*NY*NZ cells, 6 tets each\n"
            "                          (default, when no --mesh: %g,%g,%g,%d,%d,%d)\n",
            d->bar_size[0], d->bar_size[1], d->bar_size[2], d->bar_cells[0], d->bar_cells[1],
            d->bar_cells[2]);
    fprintf(f, "  --E PA                  Young's modulus, Pa, > 0 (default %g)\n", d->youngs);
    fprintf(f, "  --nu NU                 Poisson ratio, -1 < NU < 0.5 (default %g)\n", d->poisson);
    fprintf(f, "  --rho RHO               density, kg/m^3, > 0 (default %g)\n", d->density);
    fprintf(f, "  --gravity GX,GY,GZ      gravity, m/s^2 (default %g,%g,%g)\n", d->gravity[0],
            d->gravity[1], d->gravity[2]);
    fprintf(f,
            "  --fix AXIS<VALUE        pin the vertices with coordinate AXIS (x, y or z) below\n"
            "  --fix AXIS>VALUE        (or above) VALUE, m; repeatable (default for the bar:\n"
            "                          \"x<1e-6\", the end at x = 0; for a mesh: nothing fixed)\n"
            "  --fix none              nothing pinned, the bar included (e.g. dropped onto --floor)\n");
    fprintf(f, "  --method NAME           ");
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        fprintf(f, "%s%s", tw_method_name((tw_method)m), m + 1 < TW_METHOD_COUNT ? "|" : "");
    fprintf(f, " (default %s)\n", tw_method_name(d->method));
    fprintf(f,
            "  --backend NAME          cpu|cuda|auto (default %s; auto uses CUDA when the build\n"
            "                          has it and a GPU is present, else the CPU, and says which)\n",
            tw_backend_name(d->backend));
    fprintf(f, "  --threads N             CPU threads, 0 = all (default %d)\n", d->threads);
    fprintf(f,
            "  --E-gradient AXIS,E0,E1 Young's modulus linear along AXIS (x, y or z): E0 Pa at the\n"
            "                          mesh's min, E1 Pa at its max (default: none, uniform --E)\n"
            "  --E-region ID:E[,...]   Young's modulus E Pa for the elements of region ID\n"
            "                          (default: none); applied after --E / --E-gradient\n"
            "  --strict                an inverted element or a folded pair (two elements overlapping\n"
            "                          across a face) in the mesh is an error (default: reoriented,\n"
            "                          or kept, with a warning)\n"
            "  --max-memory MB         refuse a problem whose estimated memory exceeds MB megabytes (1e6 B)\n"
            "                          (default: the machine's available memory, /proc/meminfo)\n");
}

/* "x<0.5", "z > -1e-3": axis, '<' or '>', a finite number. */
static int cli_parse_fix(const char *s, cli_fix *fix)
{
    while (*s == ' ') s++;
    const char *axes = "xyz";
    const char *ax = (*s) ? strchr(axes, *s) : NULL;
    if (!ax) return -1;
    fix->axis = (int)(ax - axes);
    s++;
    while (*s == ' ') s++;
    if (*s != '<' && *s != '>') return -1;
    fix->less = *s == '<';
    s++;
    while (*s == ' ') s++;
    char num[64];
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ') n--;
    if (n == 0 || n >= sizeof num) return -1;
    memcpy(num, s, n);
    num[n] = 0;
    return cli_parse_double(num, &fix->value);
}

/* "x,1e5,1e6" */
static int cli_parse_gradient(const char *s, int *axis, double e[2])
{
    const char *axes = "xyz";
    const char *ax = (*s) ? strchr(axes, *s) : NULL;
    if (!ax || s[1] != ',') return -1;
    *axis = (int)(ax - axes);
    const char *p = s + 2;
    const char *comma = strchr(p, ',');
    if (!comma || comma - p >= 63) return -1;
    char first[64];
    memcpy(first, p, (size_t)(comma - p));
    first[comma - p] = 0;
    if (cli_parse_double(first, &e[0]) || cli_parse_double(comma + 1, &e[1])) return -1;
    return 0;
}

static int cli_positive_modulus(double e) { return isfinite(e) && e > 0; }

/* "1:2e6,3:5e5" appended to o's region list. */
static int cli_parse_regions(cli_args *a, const char *s, cli_scene_opts *o)
{
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64], *colon;
        if (len == 0 || len >= sizeof item)
            return cli_error(a, "%s '%s': malformed item (expected ID:E[,ID:E...], E in Pa)",
                             a->opt, s);
        memcpy(item, p, len);
        item[len] = 0;
        colon = strchr(item, ':');
        if (!colon)
            return cli_error(a, "%s '%s': item '%s' has no ':' (expected ID:E, E in Pa)", a->opt,
                             s, item);
        *colon = 0;
        int id;
        double e;
        if (cli_parse_int(item, &id) || cli_parse_double(colon + 1, &e))
            return cli_error(a, "%s '%s': item '%s:%s' is not ID:E (an integer, a number in Pa)",
                             a->opt, s, item, colon + 1);
        if (!cli_positive_modulus(e))
            return cli_error(a, "%s '%s': region %d's Young's modulus %g must be > 0 Pa", a->opt,
                             s, id, e);
        if (o->region_count == CLI_MAX_REGION)
            return cli_error(a, "%s: at most %d regions", a->opt, CLI_MAX_REGION);
        o->region_id[o->region_count] = id;
        o->region_e[o->region_count] = e;
        o->region_count++;
        if (!comma) return 0;
        p = comma + 1;
    }
}

int cli_scene_option(cli_scene_opts *o, cli_args *a)
{
    if (cli_is(a, "--mesh")) {
        o->mesh_path = cli_value(a, "mesh file");
        return o->mesh_path ? 1 : -1;
    }
    if (cli_is(a, "--bar")) {
        double v[6];
        if (cli_doubles(a, "L,W,H in m and NX,NY,NZ cells", 6, v)) return -1;
        for (int k = 0; k < 3; k++) {
            if (!(v[k] > 0))
                return cli_error(a, "%s %s: the size %s = %g must be > 0 m", a->opt, a->value,
                                 cli_axis_names[k], v[k]);
            if (v[3 + k] != floor(v[3 + k]) || v[3 + k] < 1 || v[3 + k] > CLI_BAR_MAX_CELLS)
                return cli_error(a, "%s %s: the cell count N%c = %g must be a whole number from 1 to %d",
                                 a->opt, a->value, 'X' + k, v[3 + k], CLI_BAR_MAX_CELLS);
        }
        double tets = 6.0 * v[3] * v[4] * v[5];
        if (tets > CLI_BAR_MAX_TETS)
            return cli_error(a, "%s %s: 6 x NX x NY x NZ = %.4g tets; a mesh holds at most %.0e (int indices)",
                             a->opt, a->value, tets, CLI_BAR_MAX_TETS);
        for (int k = 0; k < 3; k++) {
            o->bar_size[k] = v[k];
            o->bar_cells[k] = (int)v[3 + k];
        }
        o->bar_given = 1;
        return 1;
    }
    if (cli_is(a, "--E")) {
        if (cli_double(a, "Young's modulus, Pa", &o->youngs)) return -1;
        return cli_require(a, o->youngs > 0, "> 0 (Young's modulus, Pa)") ? -1 : 1;
    }
    if (cli_is(a, "--nu")) {
        if (cli_double(a, "Poisson ratio", &o->poisson)) return -1;
        return cli_require(a, o->poisson > -1 && o->poisson < 0.5,
                           "in (-1, 0.5) (Poisson ratio; 0.5 is incompressible)")
                   ? -1
                   : 1;
    }
    if (cli_is(a, "--rho")) {
        if (cli_double(a, "density, kg/m^3", &o->density)) return -1;
        return cli_require(a, o->density > 0, "> 0 (density, kg/m^3)") ? -1 : 1;
    }
    if (cli_is(a, "--gravity"))
        return cli_doubles(a, "GX,GY,GZ in m/s^2", 3, o->gravity) ? -1 : 1;
    if (cli_is(a, "--fix")) {
        const char *s = cli_value(a, "AXIS<VALUE, AXIS>VALUE or none");
        if (!s) return -1;
        if (strcmp(s, "none") == 0 || o->fix_none) {
            if (o->fix_count > 0 || o->fix_none)
                return cli_error(a, "%s '%s': --fix none cannot be combined with another --fix", a->opt, s);
            o->fix_none = 1;
            return 1;
        }
        cli_fix f;
        if (cli_parse_fix(s, &f))
            return cli_error(a,
                             "%s '%s': malformed (expected AXIS<VALUE or AXIS>VALUE, AXIS x, y "
                             "or z, VALUE a number in m, e.g. \"x<1e-6\")",
                             a->opt, s);
        if (o->fix_count == CLI_MAX_FIX)
            return cli_error(a, "%s '%s': at most %d --fix options", a->opt, s, CLI_MAX_FIX);
        snprintf(f.text, sizeof f.text, "%s", s);
        o->fix[o->fix_count++] = f;
        return 1;
    }
    if (cli_is(a, "--method")) {
        const char *s = cli_value(a, "method name");
        if (!s) return -1;
        int m = tw_method_parse(s);
        if (m < 0) {
            char list[256] = "";
            for (int k = 0; k < TW_METHOD_COUNT; k++) {
                strncat(list, tw_method_name((tw_method)k), sizeof list - strlen(list) - 1);
                if (k + 1 < TW_METHOD_COUNT) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return cli_error(a, "%s '%s': unknown method (choose %s)", a->opt, s, list);
        }
        o->method = (tw_method)m;
        return 1;
    }
    if (cli_is(a, "--backend")) {
        static const char *const names[] = {"cpu", "cuda", "auto"};
        static const tw_backend values[] = {TW_BACKEND_CPU, TW_BACKEND_CUDA, TW_BACKEND_AUTO};
        int k;
        if (cli_choice(a, "backend", names, 3, &k)) return -1;
        o->backend = values[k];
        return 1;
    }
    if (cli_is(a, "--threads")) {
        if (cli_int(a, "thread count, 0 = all", &o->threads)) return -1;
        return cli_require(a, o->threads >= 0 && o->threads <= TW_MAX_THREADS, "from 0 (all threads) to 1024") ? -1 : 1;
    }
    if (cli_is(a, "--E-gradient")) {
        const char *s = cli_value(a, "AXIS,E0,E1");
        if (!s) return -1;
        if (cli_parse_gradient(s, &o->gradient_axis, o->gradient_e))
            return cli_error(a,
                             "%s '%s': malformed (expected AXIS,E0,E1 with AXIS x, y or z and "
                             "E0, E1 in Pa, e.g. \"x,1e5,1e6\")",
                             a->opt, s);
        if (!cli_positive_modulus(o->gradient_e[0]) || !cli_positive_modulus(o->gradient_e[1]))
            return cli_error(a, "%s '%s': E0 and E1 must be > 0 Pa", a->opt, s);
        return 1;
    }
    if (cli_is(a, "--E-region")) {
        const char *s = cli_value(a, "ID:E[,ID:E...]");
        if (!s) return -1;
        return cli_parse_regions(a, s, o) ? -1 : 1;
    }
    if (cli_is(a, "--strict")) {
        if (cli_flag(a)) return -1;
        o->strict = 1;
        return 1;
    }
    if (cli_is(a, "--max-memory")) {
        if (cli_double(a, "megabytes", &o->max_memory_mb)) return -1;
        return cli_require(a, o->max_memory_mb > 0, "> 0 (megabytes)") ? -1 : 1;
    }
    return 0;
}

/* ------------------------------------------------------------- building */

static void cli_axis_range(const tw_mesh *m, int axis, double *lo, double *hi)
{
    const double *X = tw_mesh_positions(m);
    int nv = tw_mesh_vertex_count(m);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; i < nv; i++) {
        double x = X[3 * i + axis];
        if (x < *lo) *lo = x;
        if (x > *hi) *hi = x;
    }
}

/* Marks the vertices the fixes select in `fixed`; checks each fix selects
 * some vertex and that together they leave some vertex free. */
static int cli_select_fixed(const cli_fix *fix, int count, const tw_mesh *m, const char *prog,
                            unsigned char *fixed, int *pinned)
{
    const double *X = tw_mesh_positions(m);
    int nv = tw_mesh_vertex_count(m);
    memset(fixed, 0, (size_t)nv);
    for (int k = 0; k < count; k++) {
        const cli_fix *f = &fix[k];
        int n = 0;
        for (int i = 0; i < nv; i++) {
            double x = X[3 * i + f->axis];
            if (f->less ? x < f->value : x > f->value) {
                fixed[i] = 1;
                n++;
            }
        }
        if (n == 0 || n == nv) {
            double lo, hi;
            cli_axis_range(m, f->axis, &lo, &hi);
            fprintf(stderr, "%s: --fix '%s' selects %s (%s range of the mesh is [%g, %g])\n",
                    prog, f->text, n ? "every vertex: nothing could move" : "no vertex",
                    cli_axis_names[f->axis], lo, hi);
            return -1;
        }
    }
    *pinned = 0;
    for (int i = 0; i < nv; i++) *pinned += fixed[i];
    if (*pinned == nv) {
        fprintf(stderr, "%s: the --fix options together select every vertex: nothing could move\n",
                prog);
        return -1;
    }
    return 0;
}

static double *cli_element_youngs(const cli_scene_opts *o, const tw_mesh *m, const char *prog)
{
    if (o->gradient_axis < 0 && o->region_count == 0) return NULL;
    int nt = tw_mesh_tet_count(m);
    double *e = malloc(sizeof *e * (size_t)(nt ? nt : 1));
    if (!e) {
        fprintf(stderr, "%s: out of memory for %d per-element moduli\n", prog, nt);
        return NULL;
    }
    if (o->gradient_axis >= 0)
        tw_fill_linear_gradient(m, o->gradient_axis, o->gradient_e[0], o->gradient_e[1], e);
    else
        tw_fill_constant(m, o->youngs, e);
    if (o->region_count > 0) {
        const int *reg = tw_mesh_regions(m);
        int lo = nt ? reg[0] : 0, hi = lo;
        for (int t = 0; t < nt; t++) {
            if (reg[t] < lo) lo = reg[t];
            if (reg[t] > hi) hi = reg[t];
        }
        for (int k = 0; k < o->region_count; k++) {
            int found = 0;
            for (int t = 0; t < nt && !found; t++) found = reg[t] == o->region_id[k];
            if (!found) {
                fprintf(stderr,
                        "%s: --E-region %d:%g: no element has region %d (the mesh's regions "
                        "span %d..%d)\n",
                        prog, o->region_id[k], o->region_e[k], o->region_id[k], lo, hi);
                free(e);
                return NULL;
            }
        }
        tw_fill_by_region(m, o->region_count, o->region_id, o->region_e, e);
    }
    return e;
}

/* A short name for the two ordinary reasons the CUDA backend is not used
 * (the engine's messages: world.c's "not available in this build" and the
 * CUDA world's "no CUDA device (<the runtime's error>)"); NULL for any other
 * failure, which is worth its full message. */
static const char *cli_cuda_short_reason(const char *why)
{
    if (strstr(why, "not available in this build")) return "this build has no CUDA";
    if (strstr(why, "no CUDA device")) return "no CUDA device";
    return NULL;
}

int cli_cuda_probe(char *why, size_t why_size, const char **short_why)
{
    *short_why = NULL;
    if (why_size) why[0] = 0;
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 1, 1, 1);
    if (!m) {
        snprintf(why, why_size, "%s", tw_last_error());
        return 0;
    }
    tw_world_def def = tw_default_world_def();
    def.backend = TW_BACKEND_CUDA;
    tw_world *w = tw_world_create(m, &def);
    if (!w) {
        snprintf(why, why_size, "%s", tw_last_error());
        *short_why = cli_cuda_short_reason(why);
    }
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return w != NULL;
}

/* The world on the requested backend; `auto` tries CUDA, then the CPU, and
 * says which it chose: in one short line for the ordinary reasons (no device,
 * no CUDA in the build), with the engine's whole message under --verbose or
 * when CUDA failed for another reason. */
static tw_world *cli_create_world(const cli_scene_opts *o, tw_world_def def, const char *prog,
                                  cli_scene *s)
{
    if (o->backend != TW_BACKEND_AUTO) {
        def.backend = o->backend;
        tw_world *w = tw_world_create(s->mesh, &def);
        if (!w)
            fprintf(stderr, "%s: --backend %s: %s\n", prog, tw_backend_name(o->backend),
                    tw_last_error());
        s->backend = o->backend;
        return w;
    }
    def.backend = TW_BACKEND_CUDA;
    tw_world *w = tw_world_create(s->mesh, &def);
    if (w) {
        s->backend = TW_BACKEND_CUDA;
        printf("backend: cuda (auto)\n");
        return w;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", tw_last_error());
    def.backend = TW_BACKEND_CPU;
    w = tw_world_create(s->mesh, &def);
    if (!w) {
        fprintf(stderr, "%s: %s\n", prog, tw_last_error());
        return NULL;
    }
    s->backend = TW_BACKEND_CPU;
    const char *short_why = cli_cuda_short_reason(why);
    if (short_why && !o->verbose)
        printf("backend: cpu (%s)\n", short_why);
    else
        printf("backend: cpu (auto; cuda not used: %s)\n", why[0] ? why : "unavailable");
    return w;
}

/* Problems from this many tets on say each phase as it starts and the
 * memory they need: below it every phase takes well under a second. */
#define CLI_LARGE_TETS 100000

double cli_estimate_bytes(double tets, double vertices, tw_world_def def)
{
    /* a 10x10x10-cell bar: per-tet and per-vertex costs in the proportion of
     * a bulky mesh (0.22 vertices a tet; larger meshes have fewer) */
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 10, 10, 10);
    if (!m) return 0;
    def.backend = TW_BACKEND_CPU; /* the host's share, which --backend cuda keeps too */
    def.element_youngs = NULL;
    def.element_density = NULL;
    def.element_poisson = NULL; /* the material does not change the bytes */
    def.poisson_ratio = 0.3;
    tw_world *w = tw_world_create(m, &def);
    double per_tet = w ? (double)tw_world_memory_bytes(w) / tw_mesh_tet_count(m) : 0;
    double per_vertex_extra = 0;
    int nt = tw_mesh_tet_count(m), nv = tw_mesh_vertex_count(m);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    if (!(per_tet > 0)) return 0;
    /* where the mesh has more vertices per tet than the small bar, the
     * excess vertices cost what the small world's did on average */
    if (vertices > tets * nv / nt) per_vertex_extra = (vertices - tets * nv / nt) * per_tet * nt / nv;
    /* the mesh (4 indices + a region a tet, 3 doubles a vertex), the element
     * keys loading sorts (16 bytes a tet) and the precompute's scratch (16
     * ints a tet) live alongside the world while it is built */
    return tets * (per_tet + 20 + 16 + 64) + vertices * 24 + per_vertex_extra;
}

/* MemAvailable from /proc/meminfo, bytes; 0 where it cannot be read. */
static double cli_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

/* "0.442 GB", "39.3 GB", "1470 GB": three figures, never an exponent. */
static const char *cli_gb(char *buf, size_t size, double bytes)
{
    double gb = bytes / 1e9;
    snprintf(buf, size, gb < 100 ? "%.3g GB" : "%.0f GB", gb);
    return buf;
}

/* Checks the estimate against --max-memory or the available memory and, for
 * a large problem, says it. Returns -1 (message printed) when it does not fit. */
static int cli_check_memory(const cli_scene_opts *o, tw_world_def def, double tets, double vertices,
                            const char *what, const char *prog)
{
    if (tets < CLI_LARGE_TETS && !(o->max_memory_mb > 0)) return 0; /* under 0.1 GB: not worth a world */
    double need = cli_estimate_bytes(tets, vertices, def);
    if (!(need > 0)) return 0; /* no estimate: the allocations will say */
    double limit = o->max_memory_mb > 0 ? o->max_memory_mb * 1e6 : cli_available_bytes();
    const char *limit_name = o->max_memory_mb > 0 ? "--max-memory" : "available";
    char a[32], b[32];
    if (limit > 0 && need > limit) {
        fprintf(stderr,
                "%s: %s: %.4g tets need about %s of memory, more than the %s %s; use a coarser mesh%s\n",
                prog, what, tets, cli_gb(a, sizeof a, need), cli_gb(b, sizeof b, limit), limit_name,
                o->max_memory_mb > 0 ? " or raise --max-memory"
                                     : " (the limit is /proc/meminfo's MemAvailable; --max-memory MB sets another)");
        return -1;
    }
    if (tets >= CLI_LARGE_TETS) {
        printf("memory: about %s for %.4g tets", cli_gb(a, sizeof a, need), tets);
        if (limit > 0) printf(" (%s %s)", cli_gb(b, sizeof b, limit), limit_name);
        printf("\n");
        fflush(stdout);
    }
    return 0;
}

int cli_scene_build(const cli_scene_opts *o, tw_world_def def, const char *prog, cli_scene *s)
{
    memset(s, 0, sizeof *s);
    if (o->mesh_path && o->bar_given) {
        fprintf(stderr, "%s: give --mesh or --bar, not both\n", prog);
        return -1;
    }
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.strict = o->strict;
    double t0 = cli_now_ms();
    if (o->mesh_path) {
        s->mesh = tw_mesh_load(o->mesh_path, &ld, &s->report);
        if (!s->mesh) {
            fprintf(stderr, "%s: cannot load --mesh: %s\n", prog, tw_last_error());
            return -1;
        }
        snprintf(s->description, sizeof s->description, "%s", o->mesh_path);
        if (cli_check_memory(o, def, tw_mesh_tet_count(s->mesh), tw_mesh_vertex_count(s->mesh), o->mesh_path, prog))
            goto fail;
    } else {
        const int *c = o->bar_cells;
        double tets = 6.0 * c[0] * c[1] * c[2], vertices = (c[0] + 1.0) * (c[1] + 1.0) * (c[2] + 1.0);
        if (cli_check_memory(o, def, tets, vertices, "--bar", prog)) return -1;
        if (tets >= CLI_LARGE_TETS) {
            printf("generating the bar: %.4g tets...\n", tets);
            fflush(stdout);
        }
        s->mesh = tw_mesh_bar(o->bar_size[0], o->bar_size[1], o->bar_size[2], c[0], c[1], c[2]);
        if (!s->mesh) {
            fprintf(stderr, "%s: --bar: %s\n", prog, tw_last_error());
            return -1;
        }
        snprintf(s->description, sizeof s->description, "bar %g x %g x %g m, %dx%dx%d cells",
                 o->bar_size[0], o->bar_size[1], o->bar_size[2], o->bar_cells[0],
                 o->bar_cells[1], o->bar_cells[2]);
    }
    int large = tw_mesh_tet_count(s->mesh) >= CLI_LARGE_TETS;
    if (large) {
        printf("mesh ready in %.1f s; building the world (mass, stiffness, sparsity)...\n",
               (cli_now_ms() - t0) / 1e3);
        fflush(stdout);
    }
    t0 = cli_now_ms();

    cli_fix bar_fix = {0, 1, 1e-6, "x<1e-6"};
    const cli_fix *fix = o->fix;
    int fix_count = o->fix_count;
    if (fix_count == 0 && !o->mesh_path && !o->fix_none) {
        fix = &bar_fix;
        fix_count = 1;
    }
    int nv = tw_mesh_vertex_count(s->mesh);
    s->fixed = calloc((size_t)(nv ? nv : 1), 1);
    if (!s->fixed) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto fail;
    }
    if (cli_select_fixed(fix, fix_count, s->mesh, prog, s->fixed, &s->pinned)) goto fail;

    if (o->gradient_axis >= 0 || o->region_count > 0) {
        s->element_youngs = cli_element_youngs(o, s->mesh, prog);
        if (!s->element_youngs) goto fail;
    }

    def.method = o->method;
    def.youngs_modulus = o->youngs;
    def.poisson_ratio = o->poisson;
    def.density = o->density;
    def.element_youngs = s->element_youngs;
    for (int k = 0; k < 3; k++) def.gravity[k] = o->gravity[k];
    def.threads = o->threads;
    s->world = cli_create_world(o, def, prog, s);
    if (!s->world) goto fail;
    if (large) {
        char gb[32];
        printf("world ready in %.1f s (%s)\n", (cli_now_ms() - t0) / 1e3,
               cli_gb(gb, sizeof gb, (double)tw_world_memory_bytes(s->world)));
        fflush(stdout);
    }
    for (int k = 0; k < fix_count; k++)
        tw_world_pin_where(s->world, fix[k].axis, fix[k].less, fix[k].value);
    return 0;
fail:
    cli_scene_destroy(s);
    return -1;
}

void cli_scene_destroy(cli_scene *s)
{
    tw_world_destroy(s->world);
    tw_mesh_destroy(s->mesh);
    free(s->element_youngs);
    free(s->fixed);
    memset(s, 0, sizeof *s);
}

int cli_scene_probe_vertex(const cli_scene *s)
{
    const double *X = tw_mesh_positions(s->mesh);
    int nv = tw_mesh_vertex_count(s->mesh);
    double c[3] = {0, 0, 0};
    int n = 0;
    for (int i = 0; i < nv; i++)
        if (s->pinned == 0 || s->fixed[i]) {
            for (int k = 0; k < 3; k++) c[k] += X[3 * i + k];
            n++;
        }
    for (int k = 0; k < 3; k++) c[k] /= n ? n : 1;
    int best = 0;
    double best_d = -1;
    for (int i = 0; i < nv; i++) {
        double d = 0;
        for (int k = 0; k < 3; k++) d += (X[3 * i + k] - c[k]) * (X[3 * i + k] - c[k]);
        if (d > best_d * (1 + 1e-9) + 1e-300) {
            best_d = d;
            best = i;
        }
    }
    return best;
}

int cli_scene_material_on(const cli_scene_opts *o, const tw_mesh *m, const char *prog, double **out)
{
    *out = NULL;
    if (o->gradient_axis < 0 && o->region_count == 0) return 0;
    *out = cli_element_youngs(o, m, prog);
    return *out ? 0 : -1;
}

int cli_scene_fix_on(const cli_scene_opts *o, const tw_mesh *m, const char *prog, unsigned char *fixed,
                     int *pinned)
{
    cli_fix bar_fix = {0, 1, 1e-6, "x<1e-6"};
    const cli_fix *fix = o->fix;
    int fix_count = o->fix_count;
    if (fix_count == 0 && !o->mesh_path && !o->fix_none) {
        fix = &bar_fix;
        fix_count = 1;
    }
    return cli_select_fixed(fix, fix_count, m, prog, fixed, pinned);
}
