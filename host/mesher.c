/* Tetrahedralizing a closed surface with TetGen's command-line tool.
 *
 * The surface is loaded (OBJ, OFF, STL: surface_io.c), its coincident
 * vertices merged, and checked (surface_check.c) before TetGen sees it, so
 * holes, non-manifold edges and self-intersections get a message a user can
 * act on instead of TetGen's. It is written as a .smesh into a fresh
 * temporary folder and `tetgen -pYF q<Q> a<A>` runs there (fork/exec, output
 * to a log whose last lines are shown when it fails); the .node/.ele it
 * writes are read back with tw_mesh_load.
 *
 * Hitting a tet count. With the surface kept (-Y), TetGen's count behaves
 * like n = n0 + k/a for a maximum volume a: n0, the tets the surface alone
 * needs, is about 6.8 per surface vertex at -q1.414, 4.7 at -q2 and 3.4
 * without -q (bunny and dog, 3.5k and 25k vertices), and k is about 1.5 times
 * the enclosed volume. The first run uses that model; each later run refits
 * k from the last one (and n0 too once two runs share a quality), until the
 * count is within the tolerance or max_tries runs are spent. A request below
 * n0 relaxes the radius-edge bound (Q, then 2, then none) and says so; below
 * the last n0 it is an error naming the smallest count the surface allows.
 *
 * Caching. The key is FNV-1a over the surface file's bytes and the options
 * that shape the result; the mesh is stored as KEY.node/.ele in the cache
 * folder (written under a temporary name, then renamed), with KEY.info
 * holding the runs and the quality used. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "mesh.h"
#include "mesher.h"
#include "text_reader.h"

tw_mesher_def tw_default_mesher_def(void)
{
    tw_mesher_def d;
    memset(&d, 0, sizeof d);
    d.target_tets = 0;
    d.max_edge = 0;
    d.quality = 1.414;
    d.tolerance = 0.2;
    d.max_tries = 4;
    d.cache_dir = NULL;
    d.use_cache = 1;
    d.verbose = 0;
    d.tetgen = NULL;
    return d;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (m > n) return 0;
    for (size_t i = 0; i < m; i++) {
        char a = s[n - m + i], b = suffix[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != b) return 0;
    }
    return 1;
}

uint64_t tw_fnv1a(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static unsigned char *read_all(const char *path, size_t *size)
{
    return (unsigned char *)tw_read_file(path, size);
}

/* ------------------------------------------------------- merge vertices */

static const double *weld_X;
static int weld_cmp(const void *pa, const void *pb)
{
    const double *a = weld_X + 3 * (size_t) * (const int *)pa, *b = weld_X + 3 * (size_t) * (const int *)pb;
    for (int k = 0; k < 3; k++)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return *(const int *)pa - *(const int *)pb;
}

/* Merges exactly coincident vertices and drops unused ones, in place. */
static tw_status weld(tw_surface *s)
{
    int nv = s->vertex_count;
    int *order = tw_malloc((size_t)nv * sizeof *order, "vertex merge");
    int *map = tw_malloc((size_t)nv * sizeof *map, "vertex merge");
    int *used = tw_calloc((size_t)nv, sizeof *used, "vertex merge");
    if (!order || !map || !used) {
        free(order);
        free(map);
        free(used);
        return TW_ERR_NOMEM;
    }
    for (int i = 0; i < nv; i++) order[i] = i;
    weld_X = s->positions;
    qsort(order, (size_t)nv, sizeof *order, weld_cmp);
    for (int i = 0; i < nv; i++) {
        int v = order[i];
        map[v] = (i > 0 && memcmp(s->positions + 3 * (size_t)order[i - 1], s->positions + 3 * (size_t)v,
                                  3 * sizeof(double)) == 0)
                     ? map[order[i - 1]]
                     : v;
    }
    for (int t = 0; t < 3 * s->triangle_count; t++) {
        s->triangles[t] = map[s->triangles[t]];
        used[s->triangles[t]] = 1;
    }
    int n = 0;
    for (int v = 0; v < nv; v++) {
        if (!used[v]) continue;
        memmove(s->positions + 3 * (size_t)n, s->positions + 3 * (size_t)v, 3 * sizeof(double));
        used[v] = n++ + 1;
    }
    for (int t = 0; t < 3 * s->triangle_count; t++) s->triangles[t] = used[s->triangles[t]] - 1;
    s->vertex_count = n;
    free(order);
    free(map);
    free(used);
    return TW_OK;
}

tw_surface *tw_mesher_load_surface(const char *path)
{
    tw_surface *s;
    if (ends_with(path, ".stl")) s = tw_surface_load_stl(path);
    else if (ends_with(path, ".obj") || ends_with(path, ".off")) s = tw_surface_load(path);
    else {
        tw_fail(TW_ERR_INVALID, "%s: unknown surface format: expected .obj, .off or .stl", path);
        return NULL;
    }
    if (s && weld(s) != TW_OK) {
        tw_surface_destroy(s);
        return NULL;
    }
    return s;
}

/* ----------------------------------------------------------------- files */

int tw_mesher_find_tetgen(const char *name, char *out, size_t size)
{
    if (!name) name = "tetgen";
    if (strchr(name, '/')) {
        snprintf(out, size, "%s", name);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(out, size, "%.*s/%s", (int)len, len ? path : ".", name);
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return 1;
        path += len + (colon ? 1 : 0);
    }
    return 0;
}

static tw_status mkdir_p(const char *dir)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return tw_fail(TW_ERR_INVALID, "cache folder %s: path too long", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return tw_fail(TW_ERR_IO, "cache folder %s: cannot create %s: %s", dir, buf,
                               strerror(errno));
            *p = c;
            if (!c) break;
        }
    }
    return TW_OK;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[1300];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static tw_status write_smesh(const tw_surface *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return tw_fail(TW_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    fprintf(f, "# surface for tetgen, written by tetwarp\n%d 3 0 0\n", s->vertex_count);
    for (int v = 0; v < s->vertex_count; v++) {
        const double *p = s->positions + 3 * (size_t)v;
        fprintf(f, "%d %.17g %.17g %.17g\n", v, p[0], p[1], p[2]);
    }
    fprintf(f, "%d 0\n", s->triangle_count);
    for (int t = 0; t < s->triangle_count; t++) {
        const int *q = s->triangles + 3 * (size_t)t;
        fprintf(f, "3 %d %d %d\n", q[0], q[1], q[2]);
    }
    fprintf(f, "0\n0\n");
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    return bad ? tw_fail(TW_ERR_IO, "%s: write failed", path) : TW_OK;
}

/* The last `lines` lines of a text file, indented, into out. */
static void tail_lines(const char *path, int lines, char *out, size_t size)
{
    size_t n = 0;
    unsigned char *buf = read_all(path, &n);
    out[0] = 0;
    if (!buf) return;
    size_t i = n;
    while (i > 0 && (buf[i - 1] == '\n' || buf[i - 1] == '\r' || buf[i - 1] == ' ')) i--;
    size_t end = i;
    int seen = 0;
    while (i > 0 && seen < lines) {
        i--;
        if (buf[i] == '\n') seen++;
    }
    if (buf[i] == '\n') i++;
    size_t o = 0;
    for (size_t j = i; j < end && o + 8 < size; j++) {
        if (j == i || buf[j - 1] == '\n') out[o++] = ' ', out[o++] = ' ', out[o++] = '|', out[o++] = ' ';
        out[o++] = (char)buf[j];
    }
    out[o] = 0;
    free(buf);
}

/* ---------------------------------------------------------------- TetGen */

typedef struct run_ctx {
    const char *tetgen;    /* full path */
    const char *dir;       /* temporary folder holding surface.smesh */
    const char *name;      /* the user's surface file, for messages */
    int verbose;
    int keep_surface;      /* 1: -Y, TetGen keeps the surface triangles */
} run_ctx;

/* One TetGen run at radius-edge bound q (0: none) and max volume a (0: none). */
static tw_mesh *run_tetgen(const run_ctx *c, double q, double a, double *seconds)
{
    char sw[128], input[1100], log[1100], stem[1100];
    int o = snprintf(sw, sizeof sw, "-pF%s", c->keep_surface ? "Y" : "");
    if (q > 0) o += snprintf(sw + o, sizeof sw - o, "q%.6g", q);
    if (a > 0) snprintf(sw + o, sizeof sw - o, "a%.6e", a);
    snprintf(input, sizeof input, "%s/surface.smesh", c->dir);
    snprintf(log, sizeof log, "%s/tetgen.log", c->dir);
    snprintf(stem, sizeof stem, "%s/surface.1", c->dir);
    char node[1200], ele[1200];
    snprintf(node, sizeof node, "%s.node", stem);
    snprintf(ele, sizeof ele, "%s.ele", stem);
    unlink(node);
    unlink(ele);
    if (c->verbose) fprintf(stderr, "tetwarp mesh: %s %s %s (from %s)\n", c->tetgen, sw, input, c->name);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        tw_fail(TW_ERR_IO, "%s: cannot start tetgen: fork: %s", c->name, strerror(errno));
        return NULL;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        /* line-buffered, so that the log keeps what TetGen said before it aborts */
        char stdbuf[1024];
        if (tw_mesher_find_tetgen("stdbuf", stdbuf, sizeof stdbuf))
            execl(stdbuf, stdbuf, "-oL", c->tetgen, sw, input, (char *)NULL);
        execl(c->tetgen, c->tetgen, sw, input, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *seconds += now_s() - t0;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(node, R_OK) == 0 &&
             access(ele, R_OK) == 0;
    if (!ok) {
        char tail[1500];
        tail_lines(log, 6, tail, sizeof tail);
        char why[64];
        if (WIFSIGNALED(status)) snprintf(why, sizeof why, "was killed by signal %d", WTERMSIG(status));
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) snprintf(why, sizeof why, "could not be run");
        else if (WIFEXITED(status) && WEXITSTATUS(status)) snprintf(why, sizeof why, "exited with status %d", WEXITSTATUS(status));
        else snprintf(why, sizeof why, "wrote no mesh");
        const char *hint = strstr(tail, "ntersect") ? " (the surface intersects itself: fix it, e.g. with meshfix)" : "";
        tw_fail(TW_ERR_INVALID, "%s: tetgen %s %s%s; its last lines:\n%s", c->name, sw, why, hint, tail);
        return NULL;
    }
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_load(stem, &ld, &rep);
    if (!m) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        tw_fail(TW_ERR_INVALID, "%s: cannot read tetgen's mesh: %s", c->name, msg);
        return NULL;
    }
    if (rep.unused_vertices > 0) {
        /* drop vertices no tet uses (none expected after merging) */
        int nv = tw_mesh_vertex_count(m), nt = tw_mesh_tet_count(m);
        int *map = tw_malloc((size_t)nv * sizeof *map, "vertex map");
        double *X = tw_malloc(3 * (size_t)nv * sizeof *X, "vertices");
        int *T = tw_malloc(4 * (size_t)nt * sizeof *T, "tets");
        tw_mesh *r = NULL;
        if (map && X && T) {
            int n = 0;
            for (int v = 0; v < nv; v++) {
                map[v] = m->unused[v] ? -1 : n;
                if (!m->unused[v]) memcpy(X + 3 * (size_t)n++, m->X + 3 * (size_t)v, 3 * sizeof(double));
            }
            for (size_t i = 0; i < 4 * (size_t)nt; i++) T[i] = map[m->tets[i]];
            r = tw_mesh_create(X, n, T, nt, m->region, &ld, NULL);
        }
        free(map);
        free(X);
        free(T);
        tw_mesh_destroy(m);
        m = r;
    }
    return m;
}

/* ----------------------------------------------------------------- quality */

double tw_mesh_max_radius_edge(const tw_mesh *m)
{
    double worst = 0;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->tets + 4 * (size_t)e;
        const double *p0 = m->X + 3 * (size_t)t[0];
        double u[3][3];
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) u[i][k] = m->X[3 * (size_t)t[i + 1] + k] - p0[k];
        double shortest = INFINITY;
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                double l2 = 0;
                for (int k = 0; k < 3; k++) {
                    double d = m->X[3 * (size_t)t[i] + k] - m->X[3 * (size_t)t[j] + k];
                    l2 += d * d;
                }
                if (l2 < shortest) shortest = l2;
            }
        /* circumcentre offset: (|a|^2 b x c + |b|^2 c x a + |c|^2 a x b) / (2 a.(b x c)) */
        double bc[3], ca[3], ab[3];
        const double *a = u[0], *b = u[1], *c = u[2];
        bc[0] = b[1] * c[2] - b[2] * c[1], bc[1] = b[2] * c[0] - b[0] * c[2], bc[2] = b[0] * c[1] - b[1] * c[0];
        ca[0] = c[1] * a[2] - c[2] * a[1], ca[1] = c[2] * a[0] - c[0] * a[2], ca[2] = c[0] * a[1] - c[1] * a[0];
        ab[0] = a[1] * b[2] - a[2] * b[1], ab[1] = a[2] * b[0] - a[0] * b[2], ab[2] = a[0] * b[1] - a[1] * b[0];
        double det = 2 * (a[0] * bc[0] + a[1] * bc[1] + a[2] * bc[2]);
        double la = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
        double lb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        double lc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        double r2 = 0;
        for (int k = 0; k < 3; k++) {
            double x = (la * bc[k] + lb * ca[k] + lc * ab[k]) / det;
            r2 += x * x;
        }
        double ratio = sqrt(r2 / shortest);
        if (ratio > worst || !(ratio == ratio)) worst = ratio;
    }
    return worst;
}

/* ------------------------------------------------------------ targeting */

/* Tets per surface vertex the surface alone needs at bound q (0: none). */
static double floor_per_vertex(double q)
{
    if (q <= 0) return 3.4;
    if (q < 1.7) return 6.8;
    if (q < 2.5) return 4.7;
    return 4.0;
}

static tw_mesh *mesh_to_target(const run_ctx *c, const tw_surface *s, double volume,
                               const tw_mesher_def *def, tw_mesher_report *rep)
{
    const int N = def->target_tets;
    const double tol = def->tolerance;
    double levels[3];
    int nlevels = 0;
    levels[nlevels++] = def->quality;
    if (def->quality < 2.0) levels[nlevels++] = 2.0;
    levels[nlevels++] = 0;
    /* start at the first bound whose expected floor leaves room for N */
    int level = 0;
    while (level + 1 < nlevels && floor_per_vertex(levels[level]) * s->vertex_count > (1 + tol) * N)
        level++;
    double n0 = floor_per_vertex(levels[level]) * s->vertex_count, k = 1.5 * volume;
    double a = N > 1.2 * n0 ? k / (N - n0) : 0;
    double last_a = -1, last_n = -1;
    tw_mesh *best = NULL;
    double best_err = INFINITY;
    for (int t = 0; t < def->max_tries; t++) {
        double q = levels[level];
        tw_mesh *m = run_tetgen(c, q, a, &rep->tetgen_seconds);
        rep->tries++;
        if (!m) {
            tw_mesh_destroy(best);
            return NULL;
        }
        int n = tw_mesh_tet_count(m);
        if (def->verbose)
            fprintf(stderr, "tetwarp mesh: try %d: %d tets (asked %d), quality %g, max volume %g\n",
                    rep->tries, n, N, q, a);
        double err = fabs((double)n - N) / N;
        if (err < best_err) {
            tw_mesh_destroy(best);
            best = m;
            best_err = err;
            rep->quality_used = q;
            rep->max_volume = a;
        } else {
            tw_mesh_destroy(m);
        }
        if (err <= tol) break;
        if (n > N) {
            /* more tets than asked: at the floor if unbounded or a bigger a did not help */
            int floor_hit = a == 0 || (last_a > 0 && a > last_a && n > 0.85 * last_n);
            if (floor_hit) {
                if (level + 1 < nlevels) {
                    level++;
                    n0 = floor_per_vertex(levels[level]) * s->vertex_count;
                    k = 1.5 * volume;
                    a = N > 1.2 * n0 ? k / (N - n0) : 0;
                    last_a = last_n = -1;
                    continue;
                }
                tw_mesh_destroy(best);
                tw_fail(TW_ERR_INVALID,
                        "%s: --tets %d is below what the surface allows: its %d triangles need at "
                        "least %d tets even without a quality bound; ask for more, or simplify the "
                        "surface first (e.g. MeshLab's 'quadric edge collapse decimation')",
                        c->name, N, s->triangle_count, n);
                return NULL;
            }
        }
        /* next a from n ~ a^-p: p from the last two runs at this bound (a secant in
         * log-log), else from the model n = n0 + k/a (p = 1 - n0/n); p kept in [0.5, 1.5] */
        double p;
        if (a > 0 && last_a > 0 && last_a != a && last_n > 0 && last_n != n)
            p = log((double)last_n / n) / log(a / last_a);
        else
            p = 1 - n0 / n;
        if (!(p >= 0.5)) p = 0.5;
        if (p > 1.5) p = 1.5;
        last_a = a;
        last_n = n;
        if (a > 0) a *= pow((double)n / N, 1 / p);
        else a = 1.5 * volume / N; /* unbounded and still too few tets */
        (void)k;
    }
    rep->on_target = best_err <= tol;
    return best;
}

/* ----------------------------------------------------------------- cache */

static tw_status cache_key(const char *path, const tw_mesher_def *def, char *hex, size_t size)
{
    size_t n = 0;
    unsigned char *buf = read_all(path, &n);
    if (!buf) return TW_ERR_IO;
    uint64_t h = tw_fnv1a(TW_FNV_OFFSET, buf, n);
    free(buf);
    char opts[256];
    int len = snprintf(opts, sizeof opts, "tetwarp-mesher-2 tets=%d edge=%.17g q=%.17g tol=%.17g tries=%d",
                       def->target_tets, def->target_tets > 0 ? 0.0 : def->max_edge, def->quality,
                       def->tolerance, def->max_tries);
    h = tw_fnv1a(h, opts, (size_t)len);
    snprintf(hex, size, "%016llx", (unsigned long long)h);
    return TW_OK;
}

static void cache_folder(const tw_mesher_def *def, char *out, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (def->cache_dir && *def->cache_dir) snprintf(out, size, "%s", def->cache_dir);
    else if (xdg && *xdg) snprintf(out, size, "%s/tetwarp", xdg);
    else if (home && *home) snprintf(out, size, "%s/.cache/tetwarp", home);
    else snprintf(out, size, "/tmp/tetwarp-cache");
}

static void fill_quality(const tw_mesh *m, tw_mesher_report *rep)
{
    tw_mesh_stats st = tw_mesh_compute_stats(m);
    rep->vertices = st.vertices;
    rep->tets = st.tets;
    rep->min_dihedral = st.min_dihedral;
    rep->mesh_volume = st.volume;
    rep->max_radius_edge = tw_mesh_max_radius_edge(m);
}

/* ------------------------------------------------------------------- API */

tw_mesh *tw_mesh_from_surface(const char *surface_path, const tw_mesher_def *def_in,
                              tw_mesher_report *report)
{
    double t0 = now_s();
    tw_mesher_report rep_local;
    tw_mesher_report *rep = report ? report : &rep_local;
    memset(rep, 0, sizeof *rep);
    tw_mesher_def def = def_in ? *def_in : tw_default_mesher_def();
    if (!surface_path) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_from_surface: null surface path");
        return NULL;
    }
    if (def.target_tets <= 0 && !(def.max_edge > 0)) {
        tw_fail(TW_ERR_INVALID, "%s: give a tet count (target_tets %d) or an edge length (max_edge %g m) > 0",
                surface_path, def.target_tets, def.max_edge);
        return NULL;
    }
    if (!(def.quality > 1.0)) {
        tw_fail(TW_ERR_INVALID, "%s: quality %g: the radius-edge bound must be > 1 (e.g. 1.414)",
                surface_path, def.quality);
        return NULL;
    }
    if (!(def.tolerance > 0) || def.max_tries < 1) {
        tw_fail(TW_ERR_INVALID, "%s: tolerance %g must be > 0 and max_tries %d >= 1", surface_path,
                def.tolerance, def.max_tries);
        return NULL;
    }

    tw_surface *s = tw_mesher_load_surface(surface_path);
    if (!s) return NULL;
    rep->surface_vertices = s->vertex_count;
    rep->surface_triangles = s->triangle_count;
    tw_surface_check chk;
    if (tw_surface_validate(s, surface_path, &chk) != TW_OK) {
        tw_surface_destroy(s);
        return NULL;
    }
    double volume = fabs(chk.volume);
    rep->surface_volume = volume;

    char key[32] = "", folder[1024] = "", stem[1100] = "";
    if (def.use_cache) {
        cache_folder(&def, folder, sizeof folder);
        if (cache_key(surface_path, &def, key, sizeof key) == TW_OK) {
            snprintf(stem, sizeof stem, "%s/%s", folder, key);
            char node[1200], ele[1200];
            snprintf(node, sizeof node, "%s.node", stem);
            snprintf(ele, sizeof ele, "%s.ele", stem);
            if (access(node, R_OK) == 0 && access(ele, R_OK) == 0) {
                tw_mesh_load_def ld = tw_default_mesh_load_def();
                ld.quiet = 1;
                tw_mesh *m = tw_mesh_load(stem, &ld, NULL);
                if (m) {
                    char info[1200];
                    snprintf(info, sizeof info, "%s.info", stem);
                    FILE *f = fopen(info, "r");
                    if (f) {
                        if (fscanf(f, "quality %lf max_volume %lf on_target %d", &rep->quality_used,
                                   &rep->max_volume, &rep->on_target) != 3)
                            rep->on_target = 1;
                        fclose(f);
                    }
                    rep->cached = 1;
                    int shown = snprintf(rep->cache_path, sizeof rep->cache_path, "%s", stem);
                    (void)shown; /* the path is reported, not opened: a longer one is shown cut */
                    fill_quality(m, rep);
                    tw_surface_destroy(s);
                    rep->seconds = now_s() - t0;
                    return m;
                }
            }
        } else {
            stem[0] = 0;
        }
    }

    char tetgen[1024];
    if (!tw_mesher_find_tetgen(def.tetgen, tetgen, sizeof tetgen)) {
        tw_surface_destroy(s);
        tw_fail(TW_ERR_UNSUPPORTED, "%s: tetgen not found%s%s: apt-get install tetgen", surface_path,
                def.tetgen ? " at " : " on PATH", def.tetgen ? def.tetgen : "");
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tetwarp-mesh-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        tw_surface_destroy(s);
        tw_fail(TW_ERR_IO, "%s: cannot create a temporary folder %s: %s", surface_path, dir, strerror(errno));
        return NULL;
    }
    char input[1100];
    snprintf(input, sizeof input, "%s/surface.smesh", dir);
    tw_mesh *m = NULL;
    if (write_smesh(s, input) == TW_OK) {
        /* keep the surface triangles unless they are much larger than the tets asked for:
         * then TetGen could not refine next to them (a 12-triangle cube stays 6 tets) */
        double edge_sum = 0;
        for (int t = 0; t < s->triangle_count; t++)
            for (int k = 0; k < 3; k++) {
                const double *p = s->positions + 3 * (size_t)s->triangles[3 * (size_t)t + k];
                const double *q = s->positions + 3 * (size_t)s->triangles[3 * (size_t)t + (k + 1) % 3];
                edge_sum += sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                                 (p[2] - q[2]) * (p[2] - q[2]));
            }
        double surface_edge = edge_sum / (3.0 * s->triangle_count);
        double h = def.target_tets > 0 ? cbrt(6 * sqrt(2.0) * volume / def.target_tets) : def.max_edge;
        run_ctx c = {tetgen, dir, surface_path, def.verbose, surface_edge <= 3 * h};
        rep->surface_kept = c.keep_surface;
        if (def.target_tets > 0) {
            m = mesh_to_target(&c, s, volume, &def, rep);
        } else {
            double h = def.max_edge, a = h * h * h / (6 * sqrt(2.0));
            m = run_tetgen(&c, def.quality, a, &rep->tetgen_seconds);
            rep->tries = 1;
            rep->quality_used = def.quality;
            rep->max_volume = a;
            rep->on_target = m != NULL;
        }
    }
    remove_dir(dir);
    tw_surface_destroy(s);
    if (!m) return NULL;
    fill_quality(m, rep);

    if (stem[0] && mkdir_p(folder) == TW_OK) {
        char tmpstem[1200], from[1300], to[1300];
        snprintf(tmpstem, sizeof tmpstem, "%s.tmp%ld", stem, (long)getpid());
        if (tw_mesh_write_tetgen(m, tmpstem) == TW_OK) {
            snprintf(from, sizeof from, "%s.info", stem);
            FILE *f = fopen(from, "w");
            if (f) {
                fprintf(f, "quality %.17g max_volume %.17g on_target %d\n", rep->quality_used,
                        rep->max_volume, rep->on_target);
                fclose(f);
            }
            const char *ext[2] = {".node", ".ele"};
            for (int i = 0; i < 2; i++) {
                snprintf(from, sizeof from, "%s%s", tmpstem, ext[i]);
                snprintf(to, sizeof to, "%s%s", stem, ext[i]);
                rename(from, to);
            }
            int shown = snprintf(rep->cache_path, sizeof rep->cache_path, "%s", stem);
            (void)shown; /* the path is reported, not opened: a longer one is shown cut */
        } else if (def.verbose) {
            fprintf(stderr, "tetwarp mesh: not cached: %s\n", tw_last_error());
        }
    } else if (stem[0] && def.verbose) {
        fprintf(stderr, "tetwarp mesh: not cached: %s\n", tw_last_error());
    }
    rep->seconds = now_s() - t0;
    return m;
}
