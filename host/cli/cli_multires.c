/* `tetwarp run --multires LEVELS`: the space- and time-adaptive
 * multiresolution simulation (host/multires.h) with a guaranteed frame rate
 * and a scripted rigid tool; one CSV row per displayed frame. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../multires.h"
#include "cli_args.h"
#include "cli_commands.h"
#include "cli_scene.h"
#include "tetwarp.h"

#define MR_MAX_LEVELS 8

/* This process's CPU time, ms: a frame's own cost, without the time other
 * processes on the cores take from it. */
static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

typedef struct mr_opts {
    int levels;
    const char *level_files[MR_MAX_LEVELS];
    int level_file_count;
    int fine_tets;         /* surface input: the finest level's target tets */
    double level_ratio;    /* tets ratio between neighbouring levels */
    tw_multires_def def;
    int frames;
    double frame_budget_ms;
    double work_budget;
    int fixed_level;       /* >= 0: that level only, no adaptivity */
    int has_tool;
    tw_mr_tool tool;
    const char *csv;
    const char *field_csv; /* every vertex of the probe's level, every frame */
    int probe_level, probe;
    int probe_at_given;
    double probe_at[3];
} mr_opts;

static mr_opts mr_defaults(void)
{
    mr_opts o;
    memset(&o, 0, sizeof o);
    o.levels = 3;
    o.fine_tets = 8000;
    o.level_ratio = 8;
    o.def = tw_default_multires_def();
    o.frames = 90;
    o.fixed_level = -1;
    o.probe_level = -1;
    o.probe = -1;
    return o;
}

void cli_multires_help(FILE *f)
{
    mr_opts d = mr_defaults();
    fprintf(f,
            "Usage: tetwarp run --multires LEVELS [--mesh SURFACE|MESH | --levels M0,M1,..] [options]\n"
            "\n"
            "Space- and time-adaptive multiresolution (Debunne et al. 2001): independent meshes of\n"
            "one body, coarsest first; active and interface nodes; explicit Green-strain FEM with\n"
            "visco-elastic damping; split above gamma_max, merge below gamma_min (gamma = |f|/(mu h),\n"
            "m); per-node steps frame_dt/2^i under the Courant limit; a work budget per frame.\n"
            "CSV, one row per frame: frame,time,active_nodes,interface_nodes,work,predicted_work,\n"
            "frame_ms,splits,merges,refused_splits,kinetic_energy,elastic_energy,gravity_energy,\n"
            "probe_x,probe_y,probe_z,tool_fx,tool_fy,tool_fz,max_gamma,stale_interface,cpu_ms (this\n"
            "process's CPU time in the frame; frame_ms is on the clock).\n"
            "\n"
            "  --multires LEVELS       number of levels, 1..%d (default %d)\n"
            "  --mesh PATH             a closed surface (.obj/.off/.stl: each level meshed with TetGen)\n"
            "                          or a tet mesh (the finest level; coarser ones meshed from its\n"
            "                          boundary)\n"
            "  --levels M0,M1,..       the levels' tet meshes, coarsest first (instead of --mesh)\n"
            "  --tets N                surface input: the finest level's tets (default %d)\n"
            "  --level-ratio R         tets ratio between neighbouring levels, > 1 (default %g)\n"
            "  --E PA, --nu NU, --rho KG_M3, --gravity GX,GY,GZ, --fix AXIS<VALUE  as for `run`\n"
            "  --strain green|cauchy   the strain tensor (default green)\n"
            "  --visco PHI,PSI         visco-elastic damping, Pa s (default %g,%g)\n"
            "  --gamma MIN,MAX         merge and split thresholds, m (default %g,%g)\n"
            "  --frame-dt S            display step, s (default %g)\n"
            "  --frames N              frames to run (default %d)\n"
            "  --max-dt-level K        finest step frame_dt/2^K (default: from the Courant limit)\n"
            "  --courant F             dt <= F h sqrt(rho/(lambda+2mu)), 0 < F <= 1 (default %g)\n"
            "  --step-limit stiffness|altitude  a node's stable step: 2/omega from its rest stiffness\n"
            "                          and mass (default), or eq. 10's smallest tet altitude over the\n"
            "                          wave speed (slivers make it tiny)\n"
            "  --semi-implicit         the filter v *= (I - dt^2/m J)^-1 (eq. 11), a damping; the step\n"
            "                          stays --courant's\n"
            "  --speed-change F        halve a node's step when a step's velocity change moves it by\n"
            "                          more than F h; 0 = off (default %g)\n"
            "  --frame-budget MS       wall time per frame: the work budget follows from the measured\n"
            "                          cost of a tet evaluation, aiming below MS by three times the\n"
            "                          spread of the frames' CPU times about it (default: none)\n"
            "  --work-budget N         tet evaluations per frame at most (default: none)\n"
            "  --start-level L         the level active at the start (default 0)\n"
            "  --fixed-level L         that level only, no adaptivity (a reference run)\n"
            "  --tool X,Y,Z,R          a rigid sphere tool: centre and radius, m\n"
            "  --tool-move DX,DY,DZ,T  the tool moves by D over T s and back over T s\n"
            "  --level-stiffness S0,S1,..  factors on E per level, coarsest first (default 1): below 1\n"
            "                          softens a coarse level towards the finest one's compliance\n"
            "  --tool-margin M         nodes within M of the tool's surface refine ahead of the\n"
            "                          contact and stay refined while the tool moves or holds the\n"
            "                          surface (default 0: only those it touches)\n"
            "  --tool-dt S             nodes near the tool step at least every S s: the force on the\n"
            "                          tool is sampled at 1/S or faster (default %g)\n"
            "  --threads N             a substep's tet kicks on N threads when it has 1024 tets or\n"
            "                          more, the same results for any N; 0 = OpenMP's default\n"
            "                          (default 1: the substeps are short, and on busy cores\n"
            "                          waiting for a thread costs more than it saves)\n"
            "  --csv PATH              per-frame CSV\n"
            "  --probe LEVEL,VERTEX    the vertex the CSV follows (default: the finest level's vertex\n"
            "                          farthest from the fixed ones)\n"
            "  --probe-at X,Y,Z        follow the finest level's vertex nearest to this rest point, m\n"
            "  --field-csv PATH        every vertex of the probe's level at every frame, where the\n"
            "                          simulation puts it (interpolated from the level simulating it\n"
            "                          where it is not active): frame,vertex,level,x,y,z (level: the\n"
            "                          level whose active nodes carry most of its weight)\n",
            MR_MAX_LEVELS, d.levels, d.fine_tets, d.level_ratio, d.def.damping_phi, d.def.damping_psi,
            d.def.gamma_min, d.def.gamma_max, d.def.frame_dt, d.frames, d.def.courant_factor, d.def.speed_change,
            d.def.tool_dt);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

static int is_surface(const char *p)
{
    return has_suffix(p, ".obj") || has_suffix(p, ".off") || has_suffix(p, ".stl") || has_suffix(p, ".OBJ") ||
           has_suffix(p, ".OFF") || has_suffix(p, ".STL");
}

static int mr_parse(cli_args *a, cli_scene_opts *so, mr_opts *o)
{
    while (cli_next(a)) {
        int r = cli_scene_option(so, a);
        if (r < 0) return -1;
        if (r > 0) continue;
        int bad = 0;
        if (cli_is_help(a)) {
            cli_multires_help(stdout);
            return 1;
        } else if (cli_is(a, "--multires")) {
            bad = cli_int(a, "level count", &o->levels) ||
                  cli_require(a, o->levels >= 1 && o->levels <= MR_MAX_LEVELS, "1..8 levels");
        } else if (cli_is(a, "--levels")) {
            const char *v = cli_value(a, "M0,M1,.. tet meshes");
            if (!v) return -1;
            static char buf[8192];
            snprintf(buf, sizeof buf, "%s", v);
            o->level_file_count = 0;
            for (char *p = strtok(buf, ","); p; p = strtok(NULL, ","))
                if (o->level_file_count < MR_MAX_LEVELS) o->level_files[o->level_file_count++] = p;
        } else if (cli_is(a, "--tets")) {
            bad = cli_int(a, "tets", &o->fine_tets) || cli_require(a, o->fine_tets >= 8, ">= 8");
        } else if (cli_is(a, "--level-ratio")) {
            bad = cli_double(a, "ratio", &o->level_ratio) || cli_require(a, o->level_ratio > 1, "> 1");
        } else if (cli_is(a, "--strain")) {
            static const char *const names[2] = {"green", "cauchy"};
            int k = 0;
            bad = cli_choice(a, "strain", names, 2, &k);
            o->def.strain = (tw_mr_strain)k;
        } else if (cli_is(a, "--visco")) {
            double v[2];
            bad = cli_doubles(a, "PHI,PSI in Pa s", 2, v) || cli_require(a, v[0] >= 0 && v[1] >= 0, ">= 0 Pa s");
            o->def.damping_phi = v[0];
            o->def.damping_psi = v[1];
        } else if (cli_is(a, "--gamma")) {
            double v[2];
            bad = cli_doubles(a, "MIN,MAX in m", 2, v) || cli_require(a, v[0] >= 0 && v[0] < v[1], "0 <= MIN < MAX");
            o->def.gamma_min = v[0];
            o->def.gamma_max = v[1];
        } else if (cli_is(a, "--frame-dt")) {
            bad = cli_double(a, "s", &o->def.frame_dt) || cli_require(a, o->def.frame_dt > 0, "> 0 s");
        } else if (cli_is(a, "--frames")) {
            bad = cli_int(a, "frames", &o->frames) || cli_require(a, o->frames >= 1, ">= 1");
        } else if (cli_is(a, "--max-dt-level")) {
            bad = cli_int(a, "level", &o->def.max_dt_level) ||
                  cli_require(a, o->def.max_dt_level >= 1 && o->def.max_dt_level <= 20, "1..20");
        } else if (cli_is(a, "--courant")) {
            bad = cli_double(a, "factor", &o->def.courant_factor) ||
                  cli_require(a, o->def.courant_factor > 0 && o->def.courant_factor <= 1, "in (0, 1]");
        } else if (cli_is(a, "--step-limit")) {
            const char *v = cli_value(a, "stiffness|altitude");
            bad = !v;
            if (v && !strcmp(v, "stiffness")) {
                o->def.step_limit = TW_MR_STEP_STIFFNESS;
            } else if (v && !strcmp(v, "altitude")) {
                o->def.step_limit = TW_MR_STEP_ALTITUDE;
            } else if (v) {
                cli_error(a, "--step-limit %s: stiffness or altitude", v);
                bad = 1;
            }
        } else if (cli_is(a, "--semi-implicit")) {
            bad = cli_flag(a);
            o->def.semi_implicit = 1;
        } else if (cli_is(a, "--speed-change")) {
            bad = cli_double(a, "fraction of h", &o->def.speed_change) || cli_require(a, o->def.speed_change >= 0, ">= 0");
        } else if (cli_is(a, "--frame-budget")) {
            bad = cli_double(a, "ms", &o->frame_budget_ms) || cli_require(a, o->frame_budget_ms > 0, "> 0 ms");
        } else if (cli_is(a, "--work-budget")) {
            bad = cli_double(a, "tet evaluations", &o->work_budget) || cli_require(a, o->work_budget > 0, "> 0");
        } else if (cli_is(a, "--start-level")) {
            bad = cli_int(a, "level", &o->def.start_level) || cli_require(a, o->def.start_level >= 0, ">= 0");
        } else if (cli_is(a, "--fixed-level")) {
            bad = cli_int(a, "level", &o->fixed_level) || cli_require(a, o->fixed_level >= 0, ">= 0");
        } else if (cli_is(a, "--tool")) {
            double v[4];
            bad = cli_doubles(a, "X,Y,Z,R in m", 4, v) || cli_require(a, v[3] > 0, "a radius > 0 m");
            for (int k = 0; k < 3; k++) o->tool.center0[k] = v[k];
            o->tool.radius = v[3];
            o->has_tool = 1;
        } else if (cli_is(a, "--tool-move")) {
            double v[4];
            bad = cli_doubles(a, "DX,DY,DZ in m, T in s", 4, v) || cli_require(a, v[3] > 0, "T > 0 s");
            for (int k = 0; k < 3; k++) o->tool.move[k] = v[k];
            o->tool.move_time = v[3];
        } else if (cli_is(a, "--level-stiffness")) {
            const char *v = cli_value(a, "S0,S1,.. factors on E");
            if (!v) return -1;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            int k = 0;
            for (char *q = strtok(buf, ","); q && k < MR_MAX_LEVELS; q = strtok(NULL, ","), k++) {
                char *end = NULL;
                o->def.level_stiffness[k] = strtod(q, &end);
                if (end == q || *end || !(o->def.level_stiffness[k] > 0)) {
                    cli_error(a, "--level-stiffness %s: factors > 0", v);
                    return -1;
                }
            }
        } else if (cli_is(a, "--tool-margin")) {
            bad = cli_double(a, "m", &o->def.tool_margin) || cli_require(a, o->def.tool_margin >= 0, ">= 0 m");
        } else if (cli_is(a, "--tool-dt")) {
            bad = cli_double(a, "s", &o->def.tool_dt) || cli_require(a, o->def.tool_dt > 0, "> 0 s");
        } else if (cli_is(a, "--csv")) {
            bad = !(o->csv = cli_value(a, "CSV path"));
        } else if (cli_is(a, "--field-csv")) {
            bad = !(o->field_csv = cli_value(a, "CSV path"));
        } else if (cli_is(a, "--probe-at")) {
            bad = cli_doubles(a, "X,Y,Z in m", 3, o->probe_at);
            o->probe_at_given = 1;
        } else if (cli_is(a, "--probe")) {
            double v[2];
            bad = cli_doubles(a, "LEVEL,VERTEX", 2, v) || cli_require(a, v[0] >= 0 && v[1] >= 0, ">= 0");
            o->probe_level = (int)v[0];
            o->probe = (int)v[1];
        } else {
            cli_unknown(a);
            return -1;
        }
        if (bad) return -1;
    }
    return 0;
}

/* The levels: given files, or meshed from a surface (or a tet mesh's boundary). */
static int mr_load_levels(const cli_args *a, const cli_scene_opts *so, const mr_opts *o, tw_mesh **mesh, int *n)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    if (o->level_file_count > 0) {
        *n = o->level_file_count;
        for (int l = 0; l < *n; l++)
            if (!(mesh[l] = tw_mesh_load(o->level_files[l], &ld, NULL))) {
                cli_error(a, "--levels %s: %s", o->level_files[l], tw_last_error());
                return -1;
            }
        return 0;
    }
    if (!so->mesh_path) {
        cli_error(a, "give --mesh SURFACE|MESH or --levels M0,M1,..");
        return -1;
    }
    *n = o->levels;
    char surface[4096];
    tw_mesh *finest = NULL;
    int fine_tets = o->fine_tets;
    if (is_surface(so->mesh_path)) {
        snprintf(surface, sizeof surface, "%s", so->mesh_path);
    } else {
        if (!(finest = tw_mesh_load(so->mesh_path, &ld, NULL))) {
            cli_error(a, "--mesh %s: %s", so->mesh_path, tw_last_error());
            return -1;
        }
        fine_tets = tw_mesh_tet_count(finest);
        snprintf(surface, sizeof surface, "/tmp/tetwarp-multires-%ld.obj", (long)getpid());
        if (tw_mesh_write_obj(finest, NULL, surface) != TW_OK) {
            cli_error(a, "%s: %s", surface, tw_last_error());
            tw_mesh_destroy(finest);
            return -1;
        }
    }
    for (int l = 0; l < *n; l++) {
        if (finest && l == *n - 1) {
            mesh[l] = finest;
            break;
        }
        tw_mesher_def md = tw_default_mesher_def();
        md.target_tets = (int)(fine_tets / pow(o->level_ratio, *n - 1 - l));
        if (md.target_tets < 6) md.target_tets = 6;
        tw_mesher_report rep;
        /* no decimation here: a coarse level the surface cannot give takes the fewest
           tets it can (doubling the target until TetGen meets it) */
        for (int tries = 0; !(mesh[l] = tw_mesh_from_surface(surface, &md, &rep)) && tries < 8; tries++) {
            if (!strstr(tw_last_error(), "below what the surface allows")) break;
            md.target_tets *= 2;
        }
        if (!mesh[l]) {
            cli_error(a, "level %d (%d tets from %s): %s", l, md.target_tets, surface, tw_last_error());
            if (finest) tw_mesh_destroy(finest);
            return -1;
        }
    }
    if (finest) remove(surface);
    return 0;
}

int cli_cmd_run_multires(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp run --multires");
    cli_scene_opts so = cli_default_scene_opts();
    so.threads = tw_default_multires_def().threads; /* one unless --threads says otherwise */
    mr_opts o = mr_defaults();
    int parsed = mr_parse(&a, &so, &o);
    if (parsed) return parsed > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    o.def.youngs = so.youngs;
    o.def.poisson = so.poisson;
    o.def.density = so.density;
    for (int k = 0; k < 3; k++) o.def.gravity[k] = so.gravity[k];
    o.def.work_budget = o.work_budget;
    o.def.threads = so.threads;

    tw_mesh *mesh[MR_MAX_LEVELS] = {0};
    int n = 0, rc = CLI_EXIT_FAIL;
    tw_multires *m = NULL;
    FILE *csv = NULL, *field = NULL;
    if (mr_load_levels(&a, &so, &o, mesh, &n)) goto done;
    if (o.fixed_level >= n || o.def.start_level >= n) {
        cli_error(&a, "--fixed-level/--start-level: the levels are 0..%d", n - 1);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    if (o.fixed_level >= 0) {
        o.def.start_level = o.fixed_level;
        o.def.gamma_min = 0;
        o.def.gamma_max = INFINITY;
        o.def.tool_refine = 0;
    }
    tw_hierarchy *h = tw_hier_nonnested((const tw_mesh *const *)mesh, n);
    if (!h || !(m = tw_multires_create(h, &o.def))) {
        tw_hier_free(h);
        cli_error(&a, "%s", tw_last_error());
        goto done;
    }
    int pinned = 0;
    for (int k = 0; k < so.fix_count; k++) pinned += tw_multires_fix(m, so.fix[k].axis, so.fix[k].less, so.fix[k].value);
    if (o.has_tool) tw_multires_set_tool(m, &o.tool);
    /* the probe: the finest level's vertex farthest from the pinned ones' centroid */
    int pl = o.probe_level >= 0 ? o.probe_level : n - 1, pv = o.probe;
    if (pl >= n || (pv >= 0 && pv >= tw_mesh_vertex_count(tw_multires_mesh(m, pl)))) {
        cli_error(&a, "--probe %d,%d: no such level or vertex", pl, pv);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    const double *X = tw_mesh_positions(tw_multires_mesh(m, pl));
    const int nv = tw_mesh_vertex_count(tw_multires_mesh(m, pl));
    if (pv < 0 && o.probe_at_given) {
        double best = INFINITY;
        for (int i = 0; i < nv; i++) {
            double s = 0;
            for (int d = 0; d < 3; d++) s += (X[3 * i + d] - o.probe_at[d]) * (X[3 * i + d] - o.probe_at[d]);
            if (s < best) {
                best = s;
                pv = i;
            }
        }
    }
    if (pv < 0) {
        double c[3] = {0, 0, 0};
        int cnt = 0;
        for (int i = 0; i < nv; i++) {
            int fixed = 0;
            for (int k = 0; k < so.fix_count; k++) {
                const double x = X[3 * i + so.fix[k].axis];
                fixed |= so.fix[k].less ? x < so.fix[k].value : x > so.fix[k].value;
            }
            if (fixed || so.fix_count == 0) {
                for (int d = 0; d < 3; d++) c[d] += X[3 * i + d];
                cnt++;
            }
        }
        double best = -1;
        for (int i = 0; i < nv; i++) {
            double s = 0;
            for (int d = 0; d < 3; d++) s += (X[3 * i + d] - c[d] / cnt) * (X[3 * i + d] - c[d] / cnt);
            if (s > best) {
                best = s;
                pv = i;
            }
        }
    }
    printf("multires: %d level%s:", n, n == 1 ? "" : "s");
    for (int l = 0; l < n; l++)
        printf(" %d nodes/%d tets", tw_mesh_vertex_count(tw_multires_mesh(m, l)), tw_mesh_tet_count(tw_multires_mesh(m, l)));
    printf("; %d pinned; frame %g s, %d substeps (finest step %g s); %s strain\n", pinned, o.def.frame_dt,
           1 << tw_multires_max_dt_level(m), o.def.frame_dt / (1 << tw_multires_max_dt_level(m)),
           o.def.strain == TW_MR_GREEN ? "Green" : "Cauchy");
    printf("probe: level %d vertex %d (rest %g, %g, %g)\n", pl, pv, X[3 * pv], X[3 * pv + 1], X[3 * pv + 2]);
    if (o.csv) {
        if (!(csv = fopen(o.csv, "w"))) {
            cli_error(&a, "--csv %s: %s", o.csv, strerror(errno));
            goto done;
        }
        setvbuf(csv, NULL, _IOLBF, 0); /* a row a frame: a long run shows its progress */
        fprintf(csv, "frame,time,active_nodes,interface_nodes,work,predicted_work,frame_ms,splits,merges,"
                     "refused_splits,kinetic_energy,elastic_energy,gravity_energy,probe_x,probe_y,probe_z,"
                     "tool_fx,tool_fy,tool_fz,max_gamma,stale_interface,cpu_ms\n");
    }
    if (o.field_csv) {
        if (!(field = fopen(o.field_csv, "w"))) {
            cli_error(&a, "--field-csv %s: %s", o.field_csv, strerror(errno));
            goto done;
        }
        fprintf(field, "frame,vertex,level,x,y,z\n");
    }
    /* the budget from a measured cost per tet evaluation (a running mean), less
       three times the running spread of a frame's time about that prediction: a
       frame's time at the same work varies (the plan rebuilt or not, caches),
       and planning for the mean puts half the frames over the budget. Both
       are measured in this process's CPU time: the wall time adds what other
       processes on the cores take, which no plan can foresee; both are
       reported */
    double ms_per_work = 0, ms_total = 0, ms_max = 0, spread2 = 0;
    int late_cpu = 0;
    long work_total = 0;
    int over = 0, late = 0, tool_frames = 0;
    double tool_updates = 0, tool_ms = 0, substeps = 0; /* the tool force's updates and the substeps, all frames */
    for (int f = 1; f <= o.frames; f++) {
        if (o.frame_budget_ms > 0 && ms_per_work > 0) {
            const double target = fmax(o.frame_budget_ms - 3 * sqrt(spread2), 0.25 * o.frame_budget_ms);
            double w = target / ms_per_work;
            if (o.work_budget > 0 && o.work_budget < w) w = o.work_budget;
            tw_multires_set_budget(m, w);
        }
        tw_mr_frame_stats st;
        double t0 = cli_now_ms(), c0 = cpu_ms();
        tw_status s = tw_multires_frame(m, &st);
        double ms = cli_now_ms() - t0, cms = cpu_ms() - c0;
        if (s != TW_OK) {
            cli_error(&a, "frame %d: %s", f, tw_last_error());
            goto done;
        }
        if (st.work > 0) {
            const double c = cms / st.work;
            if (ms_per_work > 0) {
                const double r = cms - ms_per_work * st.work;
                spread2 = 0.8 * spread2 + 0.2 * r * r;
            }
            ms_per_work = ms_per_work > 0 ? 0.8 * ms_per_work + 0.2 * c : c;
        }
        ms_total += ms;
        ms_max = fmax(ms_max, ms);
        work_total += st.work;
        substeps += st.substeps;
        if (st.tool_step_level >= 0) {
            tool_frames++;
            tool_updates += ldexp(1, st.tool_step_level);
            tool_ms += ms;
        }
        over += st.over_budget;
        late += o.frame_budget_ms > 0 && ms > o.frame_budget_ms;
        late_cpu += o.frame_budget_ms > 0 && cms > o.frame_budget_ms;
        if (csv) {
            double ek, ee, eg, p[3];
            tw_multires_energy(m, &ek, &ee, &eg);
            tw_multires_probe(m, pl, pv, p);
            fprintf(csv, "%d,%.9g,%d,%d,%ld,%ld,%.4f,%d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%d,%.4f\n", f,
                    tw_multires_time(m), st.active_nodes, st.interface_nodes, st.work, st.predicted_work, ms, st.splits,
                    st.merges, st.refused_splits, ek, ee, eg, p[0], p[1], p[2], st.tool_force[0], st.tool_force[1],
                    st.tool_force[2], st.max_gamma, st.stale_interface, cms);
        }
        /* written after the frame's times are taken: they leave it out */
        for (int i = 0; field && i < nv; i++) {
            double p[3];
            tw_multires_probe(m, pl, i, p);
            fprintf(field, "%d,%d,%d,%.9g,%.9g,%.9g\n", f, i, tw_multires_point_level(m, pl, i), p[0], p[1], p[2]);
        }
    }
    printf("%d frames to t = %g s in %.1f ms: %.3f ms a frame (max %.3f), %.1f frames/s achieved, %.2fx real time\n",
           o.frames, tw_multires_time(m), ms_total, ms_total / o.frames, ms_max, 1000.0 * o.frames / ms_total,
           o.frames * o.def.frame_dt * 1000 / ms_total);
    printf("tet evaluations: %.0f a frame; %.1f ns each\n", (double)work_total / o.frames,
           work_total > 0 ? 1e6 * ms_total / work_total : 0.0);
    printf("substeps: %.0f a frame\n", substeps / o.frames);
    if (tool_frames > 0)
        printf("tool force: updated %.1f times a frame (its nodes' finest step) in the %d frames touching it: "
               "%.0f Hz simulated, %.0f Hz on the clock\n",
               tool_updates / tool_frames, tool_frames, tool_updates / tool_frames / o.def.frame_dt,
               1000 * tool_updates / tool_ms);
    if (o.frame_budget_ms > 0)
        printf("frame budget %g ms: %d of %d frames over it on the clock, %d in CPU time, %d planned over the work "
               "budget\n", o.frame_budget_ms, late, o.frames, late_cpu, over);
    rc = CLI_EXIT_OK;
done:
    if (csv && fclose(csv) != 0) rc = CLI_EXIT_FAIL;
    if (field && fclose(field) != 0) rc = CLI_EXIT_FAIL;
    tw_multires_destroy(m);
    for (int l = 0; l < n; l++) tw_mesh_destroy(mesh[l]); /* the hierarchy holds copies */
    return rc;
}
