/* `tetwarp run`: time-stepping, per-step CSV and OBJ frames. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_commands.h"
#include "cli_run_tree.h"
#include "cli_scene.h"
#include "cli_tool.h"
#include "scenes.h"
#include "tetwarp.h"

typedef struct run_opts {
    double dt;          /* s */
    int steps;
    double damping[2];  /* Rayleigh alpha (1/s), beta (s) */
    double cg_tol;
    int cg_max;
    int cg_fixed;       /* > 0: exactly this many CG iterations per step */
    tw_warp_system warp_system;
    tw_preconditioner precond;
    tw_integrator integrator;
    int newton;
    tw_collider_def colliders[TW_MAX_COLLIDERS];
    int ncolliders;
    const char *csv;
    int probe;          /* -1: the vertex farthest from the fixed region */
    int obj_every;      /* 0: no frames */
    const char *render_surface; /* embedded OBJ/OFF written as the frames instead of the boundary */
    double bone_depth;  /* > 0: vertices deeper than this are a kinematic bone core */
    int spin_axis;      /* bone core rotation about its centroid: axis 0..2 (-1 none) */
    double spin_rate;   /* degrees per second */
    const char *obj_dir;
    cli_tool tool;      /* --tool: a moving collider and the force on it */
    cli_tree_opts tree; /* --tree-levels: the adaptive tetra tree instead of the world */
    const char *scene;  /* a scene of the demo library (demos/scenes.h), or NULL */
    const char *data_dir; /* the scenes' data folder */
    int dt_given;       /* --dt was given (a scene keeps its own step otherwise) */
} run_opts;

static run_opts run_defaults(void)
{
    tw_world_def w = tw_default_world_def();
    run_opts o;
    o.dt = w.dt;
    o.steps = 100;
    o.damping[0] = w.damping_mass;
    o.damping[1] = w.damping_stiffness;
    o.cg_tol = w.cg_tolerance;
    o.cg_max = w.cg_max_iterations;
    o.cg_fixed = w.cg_fixed_iterations;
    o.warp_system = w.warp_system;
    o.precond = w.precond;
    o.integrator = w.integrator;
    o.newton = w.newton_iterations;
    o.ncolliders = 0;
    o.csv = NULL;
    o.probe = -1;
    o.obj_every = 0;
    o.render_surface = NULL;
    o.bone_depth = 0;
    o.spin_axis = -1;
    o.spin_rate = 0;
    o.obj_dir = "frames";
    o.tool = cli_default_tool();
    o.tree = cli_default_tree_opts();
    o.scene = NULL;
    o.data_dir = demo_default_options().data_dir;
    o.dt_given = 0;
    return o;
}

void cli_run_help(FILE *f)
{
    run_opts d = run_defaults();
    cli_scene_opts s = cli_default_scene_opts();
    fprintf(f,
            "Usage: tetwarp run [scene options] [run options]\n"
            "\n"
            "Time-stepping: implicit Euler, BDF2 or explicit Newmark (--integrator). Prints a\n"
            "summary; with --csv one row per step:\n"
            "step,time,volume,kinetic_energy,elastic_energy,gravity_energy,cg_iterations,\n"
            "residual,step_ms,probe_ux,probe_uy,probe_uz (SI units: s, m^3, J, ms, m).\n"
            "Progress goes to stderr at most once a second; steps whose CG stopped at\n"
            "--cg-max above --cg-tol are counted there and in the summary. A diverged step\n"
            "prints the engine's message and exits 1.\n"
            "\n");
    cli_scene_print_help(f, &s);
    fprintf(f,
            "\nRun options:\n"
            "  --integrator NAME       implicit-euler|bdf2|explicit-newmark (default %s)\n"
            "  --newton N              implicit, non-linear methods: Newton iterations per step with a\n"
            "                          line search, >= 1; 0 = automatic: 2 for bdf2 on the CPU (one\n"
            "                          linearisation gains energy undamped), else 1, Mueller's choice;\n"
            "                          warp-vertex adds a second on a step that turns a vertex\n"
            "                          rotation by more than 0.25 rad (default %d)\n"
            "  --dt S                  time step, s, > 0; explicit-newmark: 0 = 0.5 x the Courant\n"
            "                          limit, and a larger dt is refused (default %g)\n"
            "  --steps N               number of steps, >= 1 (default %d)\n"
            "  --damping ALPHA,BETA    Rayleigh damping C = ALPHA M + BETA K: ALPHA 1/s, BETA s,\n"
            "                          both >= 0 (default %g,%g)\n"
            "  --cg-tol T              CG tolerance, relative residual |r|/|b|, 0 < T < 1 (default %g)\n"
"  --cg-max N              CG iterations per step at most, >= 1 (default %d)\n"
            "  --cg-fixed N            exactly N CG iterations per step, no tolerance test, as a\n"
            "                          real-time budget (default: off, tolerance-driven)\n"
            "  --warp-system NAME      how warp-vertex/warp-edge's non-symmetric system is solved:\n"
            "                          symmetric (PCG on sum_e R_e K_e R_e^T, R_e from the vertex\n"
            "                          rotations; warp-edge: on R_i K_ij R_j^T) or bicgstab (BiCGStab\n"
            "                          on R_i K_ij R_i^T; ignores --cg-fixed) (default %s)\n"
            "  --precond NAME          the implicit solve's preconditioner: jacobi (3x3 block-Jacobi),\n"
            "                          mg (smoothed-aggregation multigrid V-cycle; with --backend cuda\n"
            "                          the device's, never run on a GPU yet) or auto (jacobi on cuda;\n"
            "                          else mg from 20000 tets on, jacobi below) (default %s)\n"
            "  --floor Z,MU            a floor: the plane z = Z m, Coulomb friction MU >= 0 (repeatable\n"
            "                          with the other colliders, %d at most)\n"
            "  --sphere X,Y,Z,R,MU     a static sphere collider: centre m, radius m > 0, friction\n"
            "  --box X,Y,Z,HX,HY,HZ,MU a static axis-aligned box: centre m, half sizes m > 0, friction\n"
            "  --csv PATH              per-step CSV (default: none)\n"
            "  --probe VERTEX          0-based vertex whose displacement (m) the CSV reports\n"
            "                          (default: the vertex farthest from the fixed region; for\n"
            "                          the bar a tip corner)\n"
            "  --obj-every K           write the surface as OBJ every K steps, >= 1, and at step 0\n"
            "                          (default: no frames)\n"
            "  --obj-dir DIR           folder for the frames DIR/frame_NNNNNN.obj (default %s)\n"
            "  --render-surface PATH   a finer OBJ/OFF surface embedded in the tets (Mueller 4.3);\n"
            "                          the frames are that surface instead of the boundary\n"
            "  --bone-core DEPTH       vertices deeper than DEPTH m below the surface become a rigid,\n"
            "                          kinematic bone core (Mueller's bunny and dane)\n"
            "  --bone-spin AXIS,DEG_S  rotate the bone core about its centroid around x, y or z at\n"
            "                          DEG_S degrees per second; the skin follows dynamically\n"
            "  --verbose               say in full why the CUDA backend was not used\n"
            "  --hier-basis L          the hierarchical-basis corotated simulation (Hauth & Strasser):\n"
            "                          its options in `tetwarp run --hier-basis 2 --help`\n"
            "  --multires LEVELS       the space- and time-adaptive multiresolution simulation\n"
            "                          (Debunne 2001): its options in `tetwarp run --multires 1 --help`\n"
            "  --scene NAME            a scene of the demo library instead of --mesh/--bar, with its\n"
            "                          own bodies, material, method, integrator, solver and time step\n"
            "                          (of the options above only --dt, --backend, the colliders and\n"
            "                          the outputs apply): a scene of one world, bunny-block, stack,\n"
            "                          dane-floor or tube\n"
            "  --data DIR              the folder holding the scenes' meshes/ (default the build's data/)\n",
            tw_integrator_name(d.integrator), d.newton, d.dt, d.steps, d.damping[0], d.damping[1], d.cg_tol, d.cg_max,
            d.warp_system == TW_WARP_SYSTEM_BICGSTAB ? "bicgstab" : "symmetric",
            d.precond == TW_PRECOND_MG ? "mg" : d.precond == TW_PRECOND_AUTO ? "auto" : "jacobi", TW_MAX_COLLIDERS,
            d.obj_dir);
    cli_tool_help(f);
    cli_tree_help(f);
}

/* The embedded render surface at the current positions as OBJ. */
static int write_embedded_obj(const tw_embedding *e, const tw_real *x, const char *path, float *xyz)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    tw_embedding_apply(e, x, xyz);
    int nv = tw_embedding_vertex_count(e), nt = tw_embedding_triangle_count(e);
    const int *t = tw_embedding_triangles(e);
    for (int i = 0; i < nv; i++) fprintf(f, "v %.7g %.7g %.7g\n", xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
    for (int i = 0; i < nt; i++) fprintf(f, "f %d %d %d\n", t[3 * i] + 1, t[3 * i + 1] + 1, t[3 * i + 2] + 1);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

static int write_frame(const run_opts *o, const cli_scene *sc, long step, const char *prog,
                       const tw_embedding *emb, float *xyz)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/frame_%06ld.obj", o->obj_dir, step);
    if (emb) {
        if (write_embedded_obj(emb, tw_world_positions(sc->world), path, xyz) != 0) {
            fprintf(stderr, "%s: --obj-dir %s: cannot write %s: %s\n", prog, o->obj_dir, path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (tw_mesh_write_obj(sc->mesh, tw_world_positions(sc->world), path) != TW_OK) {
        fprintf(stderr, "%s: --obj-dir %s: %s\n", prog, o->obj_dir, tw_last_error());
        return -1;
    }
    return 0;
}

/* The bone core's targets for time t: rotated about its centroid. */
static void drive_core(const run_opts *o, cli_scene *sc, const unsigned char *core, const double center[3], double t)
{
    double a = o->spin_rate * t * 3.14159265358979323846 / 180, c = cos(a), s = sin(a);
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero[3] = {0, 0, 0};
    int i = (o->spin_axis + 1) % 3, j = (o->spin_axis + 2) % 3;
    if (o->spin_axis >= 0) {
        R[3 * i + i] = c; R[3 * i + j] = -s;
        R[3 * j + i] = s; R[3 * j + j] = c;
    }
    tw_world_drive_group(sc->world, core, R, zero, center);
}

/* Reads the command line into the scene and run options. Returns 0 to run,
 * 1 when --help was printed, -1 on a bad option (message printed). */
static int run_parse(cli_args *a, cli_scene_opts *so, run_opts *o)
{
    while (cli_next(a)) {
        int r = cli_scene_option(so, a);
        if (r < 0) return -1;
        if (r > 0) continue;
        r = cli_tree_option(&o->tree, a);
        if (r < 0) return -1;
        if (r > 0) continue;
        int bad = 0;
        if ((r = cli_tool_option(&o->tool, a)) != 0) {
            if (r < 0) return -1;
            continue;
        }
        if (cli_is_help(a)) {
            cli_run_help(stdout);
            return 1;
        } else if (cli_is(a, "--scene")) {
            bad = !(o->scene = cli_value(a, "scene name"));
        } else if (cli_is(a, "--data")) {
            bad = !(o->data_dir = cli_value(a, "folder"));
        } else if (cli_is(a, "--dt")) {
            o->dt_given = 1;
            bad = cli_double(a, "time step, s", &o->dt) ||
                  cli_require(a, o->dt > 0 || (o->dt == 0 && o->integrator == TW_EXPLICIT_NEWMARK),
                              "> 0 s (0, the automatic step, only after --integrator explicit-newmark)");
        } else if (cli_is(a, "--newton")) {
            bad = cli_int(a, "Newton iterations", &o->newton) || cli_require(a, o->newton >= 0, ">= 0 (0: automatic)");
        } else if (cli_is(a, "--integrator")) {
            const char *v = cli_value(a, "implicit-euler|bdf2|explicit-newmark");
            int k = v ? tw_integrator_parse(v) : -1;
            bad = !v || cli_require(a, k >= 0, "implicit-euler, bdf2 or explicit-newmark");
            if (!bad) o->integrator = (tw_integrator)k;
        } else if (cli_is(a, "--steps")) {
            bad = cli_int(a, "step count", &o->steps) || cli_require(a, o->steps >= 1, ">= 1");
        } else if (cli_is(a, "--damping")) {
            bad = cli_doubles(a, "ALPHA,BETA: Rayleigh alpha 1/s, beta s", 2, o->damping) ||
                  cli_require(a, o->damping[0] >= 0 && o->damping[1] >= 0,
                              ">= 0 (ALPHA 1/s, BETA s)");
        } else if (cli_is(a, "--cg-tol")) {
            bad = cli_double(a, "relative residual", &o->cg_tol) ||
                  cli_require(a, o->cg_tol > 0 && o->cg_tol < 1, "in (0, 1) (relative residual)");
        } else if (cli_is(a, "--cg-max")) {
            bad = cli_int(a, "CG iterations", &o->cg_max) || cli_require(a, o->cg_max >= 1, ">= 1");
        } else if (cli_is(a, "--cg-fixed")) {
            bad = cli_int(a, "CG iterations", &o->cg_fixed) || cli_require(a, o->cg_fixed >= 1, ">= 1");
        } else if (cli_is(a, "--warp-system")) {
            const char *v = cli_value(a, "symmetric|bicgstab");
            bad = !v;
            if (v && strcmp(v, "symmetric") == 0) o->warp_system = TW_WARP_SYSTEM_SYMMETRIC;
            else if (v && strcmp(v, "bicgstab") == 0) o->warp_system = TW_WARP_SYSTEM_BICGSTAB;
            else if (v) bad = cli_require(a, 0, "symmetric or bicgstab");
        } else if (cli_is(a, "--precond")) {
            const char *v = cli_value(a, "jacobi|mg|auto");
            bad = !v;
            if (v && strcmp(v, "jacobi") == 0) o->precond = TW_PRECOND_JACOBI;
            else if (v && strcmp(v, "mg") == 0) o->precond = TW_PRECOND_MG;
            else if (v && strcmp(v, "auto") == 0) o->precond = TW_PRECOND_AUTO;
            else if (v) bad = cli_require(a, 0, "jacobi, mg or auto");
        } else if (cli_is(a, "--floor") || cli_is(a, "--sphere") || cli_is(a, "--box")) {
            int kind = cli_is(a, "--floor") ? 0 : cli_is(a, "--sphere") ? 1 : 2;
            double v[7];
            static const int counts[3] = {2, 5, 7};
            static const char *forms[3] = {"Z,MU: height m, friction", "X,Y,Z,R,MU: centre m, radius m, friction",
                                           "X,Y,Z,HX,HY,HZ,MU: centre m, half sizes m, friction"};
            bad = cli_require(a, o->ncolliders < TW_MAX_COLLIDERS, "at most 16 colliders in all") ||
                  cli_doubles(a, forms[kind], counts[kind], v);
            if (!bad) {
                tw_collider_def c = tw_default_collider_def();
                if (kind == 0) {
                    c.point[2] = v[0];
                    c.friction = v[1];
                } else if (kind == 1) {
                    c.kind = TW_COLLIDER_SPHERE;
                    for (int k = 0; k < 3; k++) c.center[k] = v[k];
                    c.radius = v[3];
                    c.friction = v[4];
                } else {
                    c.kind = TW_COLLIDER_BOX;
                    for (int k = 0; k < 3; k++) { c.center[k] = v[k]; c.half_extents[k] = v[3 + k]; }
                    c.friction = v[6];
                }
                o->colliders[o->ncolliders++] = c;
            }
        } else if (cli_is(a, "--csv")) {
            bad = !(o->csv = cli_value(a, "CSV path"));
        } else if (cli_is(a, "--probe")) {
            bad = cli_int(a, "0-based vertex index", &o->probe) ||
                  cli_require(a, o->probe >= 0, ">= 0 (a 0-based vertex index)");
        } else if (cli_is(a, "--obj-every")) {
            bad = cli_int(a, "steps between frames", &o->obj_every) ||
                  cli_require(a, o->obj_every >= 1, ">= 1");
        } else if (cli_is(a, "--render-surface")) {
            bad = !(o->render_surface = cli_value(a, "surface path"));
        } else if (cli_is(a, "--bone-core")) {
            bad = cli_double(a, "depth, m", &o->bone_depth) || cli_require(a, o->bone_depth > 0, "> 0 m");
        } else if (cli_is(a, "--bone-spin")) {
            const char *v = cli_value(a, "AXIS,DEG_PER_S");
            char *end = NULL;
            bad = !v || cli_require(a, v && (v[0] == 'x' || v[0] == 'y' || v[0] == 'z') && v[1] == ',',
                                    "AXIS,DEG_PER_S with AXIS x, y or z");
            if (!bad) {
                o->spin_axis = v[0] - 'x';
                o->spin_rate = strtod(v + 2, &end);
                bad = cli_require(a, end != v + 2 && *end == 0 && isfinite(o->spin_rate),
                                  "AXIS,DEG_PER_S with a number of degrees per second");
            }
        } else if (cli_is(a, "--obj-dir")) {
            bad = !(o->obj_dir = cli_value(a, "folder"));
        } else if (cli_is(a, "--verbose")) {
            bad = cli_flag(a);
            so->verbose = 1;
        } else {
            cli_unknown(a);
            return -1;
        }
        if (bad) return -1;
    }
    return cli_tool_check(&o->tool, a->prog);
}

/* What a run holds besides the scene: the output files, the embedded render
 * surface, the bone core and the probe vertex. */
typedef struct run_state {
    FILE *csv;
    tw_surface *render;
    tw_embedding *emb;
    float *emb_xyz;          /* the embedded surface's positions, for the frames */
    unsigned char *core;     /* per vertex: 1 in the kinematic bone core, or NULL */
    double center[3];        /* the bone core's centroid, m */
    int probe;
} run_state;

static void run_state_free(run_state *r)
{
    if (r->csv) fclose(r->csv);
    free(r->emb_xyz);
    tw_embedding_destroy(r->emb);
    tw_surface_destroy(r->render);
    free(r->core);
    memset(r, 0, sizeof *r);
}

/* Colliders, render surface, bone core, probe, CSV header and frame 0.
 * Returns CLI_EXIT_OK or the exit status of the failure (message printed). */
static int run_setup(const cli_args *a, const cli_scene_opts *so, run_opts *o, cli_scene *sc, run_state *r)
{
    memset(r, 0, sizeof *r);
    for (int k = 0; k < o->ncolliders; k++)
        if (tw_world_add_collider(sc->world, &o->colliders[k]) != TW_OK) {
            fprintf(stderr, "%s: %s\n", a->prog, tw_last_error());
            return CLI_EXIT_USAGE;
        }
    if (o->tool.on && cli_tool_add(&o->tool, sc->world) != TW_OK) {
        fprintf(stderr, "%s: --tool: %s\n", a->prog, tw_last_error());
        return CLI_EXIT_USAGE;
    }
    int nv = tw_mesh_vertex_count(sc->mesh);
    if (o->render_surface) {
        tw_embed_report er;
        if (!(r->render = tw_surface_load(o->render_surface)) ||
            !(r->emb = tw_embed_surface(sc->mesh, r->render, 0, &er))) {
            cli_error(a, "--render-surface %s: %s", o->render_surface, tw_last_error());
            return CLI_EXIT_FAIL;
        }
        r->emb_xyz = malloc(sizeof(float) * 3 * (size_t)tw_embedding_vertex_count(r->emb));
        if (!r->emb_xyz) return CLI_EXIT_FAIL;
        printf("render surface %s: %d vertices (%d inside the tets, %d extrapolated, at most %.3g m outside), "
               "embedded in %.1f ms\n",
               o->render_surface, er.vertices, er.inside, er.outside, er.max_distance, er.ms);
    }
    if (o->bone_depth > 0) {
        r->core = calloc((size_t)nv, 1);
        int count = r->core ? tw_mesh_mark_core(sc->mesh, o->bone_depth, r->core) : -1;
        if (count < 0 || tw_world_set_kinematic_group(sc->world, r->core) != TW_OK) {
            cli_error(a, "--bone-core %g: %s", o->bone_depth, tw_last_error());
            return CLI_EXIT_USAGE;
        }
        for (int i = 0; i < nv; i++)
            if (r->core[i])
                for (int c = 0; c < 3; c++) r->center[c] += tw_mesh_positions(sc->mesh)[3 * i + c] / count;
        printf("bone core: %d of %d vertices deeper than %g m, centroid (%g, %g, %g)\n", count, nv, o->bone_depth,
               r->center[0], r->center[1], r->center[2]);
    } else if (o->spin_axis >= 0) {
        cli_error(a, "--bone-spin needs --bone-core DEPTH");
        return CLI_EXIT_USAGE;
    }
    if (o->probe >= nv) {
        cli_error(a, "--probe %d: no such vertex (the mesh has %d vertices, 0..%d)", o->probe, nv,
                  nv - 1);
        return CLI_EXIT_USAGE;
    }
    r->probe = o->probe >= 0 ? o->probe : cli_scene_probe_vertex(sc);
    const double *X = tw_mesh_positions(sc->mesh);
    int probe = r->probe;
    printf("%s: %d vertices, %d tets, %d fixed; %s, %s, dt %g s, %d steps; probe vertex %d "
           "(rest %g, %g, %g)\n",
           sc->description, nv, tw_mesh_tet_count(sc->mesh), sc->pinned,
           tw_method_name(tw_world_get_def(sc->world)->method),
           tw_integrator_name(tw_world_get_def(sc->world)->integrator), tw_world_dt(sc->world), o->steps, probe, X[3 * probe], X[3 * probe + 1],
           X[3 * probe + 2]);

    if (o->csv) {
        r->csv = fopen(o->csv, "w");
        if (!r->csv) {
            cli_error(a, "--csv %s: cannot open for writing: %s", o->csv, strerror(errno));
            return CLI_EXIT_FAIL;
        }
        fprintf(r->csv, "step,time,volume,kinetic_energy,elastic_energy,gravity_energy,"
                        "cg_iterations,residual,step_ms,probe_ux,probe_uy,probe_uz%s%s\n",
                o->tool.on ? ",tool_x,tool_y,tool_z,tool_fx,tool_fy,tool_fz" : "",
                o->tool.model ? ",tool_kxx,tool_kxy,tool_kxz,tool_kyx,tool_kyy,tool_kyz,tool_kzx,tool_kzy,tool_kzz" : "");
    }
    if (o->obj_every > 0) {
        if (mkdir(o->obj_dir, 0777) != 0 && errno != EEXIST) {
            cli_error(a, "--obj-dir %s: cannot create: %s", o->obj_dir, strerror(errno));
            return CLI_EXIT_FAIL;
        }
        if (write_frame(o, sc, 0, a->prog, r->emb, r->emb_xyz)) return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Totals over the steps, for the summary. */
typedef struct run_totals {
    double ms_sum;   /* stepping time, ms */
    long cg_sum;
    int cg_max_seen;
    int cg_capped;   /* steps whose CG stopped at --cg-max above --cg-tol */
    double tool_fmax; /* the largest force on the tool, N */
    double tool_f[3]; /* the last one, N */
} run_totals;

/* CG stopped at its cap short of the tolerance (not under --cg-fixed, where
 * a fixed count is the point). */
static int run_cg_capped(const run_opts *o, const tw_step_stats *st)
{
    return o->cg_fixed == 0 && st->cg_iterations >= o->cg_max && !(st->residual <= o->cg_tol);
}

/* The stepping loop: step, CSV row, bone-core targets, frames, progress at
 * most once a second on stderr. Returns CLI_EXIT_OK or CLI_EXIT_FAIL. */
static int run_steps(const cli_args *a, const run_opts *o, cli_scene *sc, run_state *r, run_totals *tot)
{
    const double *X = tw_mesh_positions(sc->mesh);
    int probe = r->probe;
    double t_report = cli_now_ms();
    for (int n = 1; n <= o->steps; n++) {
        tw_step_stats st;
        memset(&st, 0, sizeof st);
        double t0 = cli_now_ms();
        tw_status s = o->tool.on ? cli_tool_drive(&o->tool, sc->world, tw_world_time(sc->world) + tw_world_dt(sc->world))
                                 : TW_OK;
        if (s == TW_OK) s = tw_world_step(sc->world, &st);
        double tf[3] = {0, 0, 0};
        if (s == TW_OK && o->tool.on) tw_world_collider_force(sc->world, o->tool.index, tf);
        tw_collider_model model;
        if (s == TW_OK && o->tool.model) s = tw_world_collider_model(sc->world, o->tool.index, &model);
        double ms = cli_now_ms() - t0;
        if (s != TW_OK) {
            cli_error(a, "%s", tw_last_error());
            if (s != TW_ERR_DIVERGED) cli_error(a, "step %d failed: %s", n, tw_status_name(s));
            return CLI_EXIT_FAIL;
        }
        tot->ms_sum += ms;
        tot->cg_sum += st.cg_iterations;
        if (st.cg_iterations > tot->cg_max_seen) tot->cg_max_seen = st.cg_iterations;
        tot->cg_capped += run_cg_capped(o, &st);
        const tw_real *x = tw_world_positions(sc->world);
        if (o->tool.on) {
            memcpy(tot->tool_f, tf, sizeof tf);
            tot->tool_fmax = fmax(tot->tool_fmax, sqrt(tf[0] * tf[0] + tf[1] * tf[1] + tf[2] * tf[2]));
        }
        if (r->csv) {
            fprintf(r->csv, "%ld,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%.9g,%.6g,%.9g,%.9g,%.9g",
                    tw_world_step_index(sc->world), tw_world_time(sc->world),
                    tw_world_volume(sc->world), tw_world_kinetic_energy(sc->world),
                    tw_world_elastic_energy(sc->world), tw_world_gravity_energy(sc->world),
                    st.cg_iterations, st.residual, ms, (double)x[3 * probe] - X[3 * probe],
                    (double)x[3 * probe + 1] - X[3 * probe + 1],
                    (double)x[3 * probe + 2] - X[3 * probe + 2]);
            if (o->tool.on) {
                double p[3];
                cli_tool_position(&o->tool, tw_world_time(sc->world), p);
                fprintf(r->csv, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", p[0], p[1], p[2], tf[0], tf[1], tf[2]);
                for (int k = 0; o->tool.model && k < 9; k++) fprintf(r->csv, ",%.9g", model.stiffness[k]);
            }
            fputc('\n', r->csv);
        }
        if (r->core) drive_core(o, sc, r->core, r->center, tw_world_time(sc->world) + tw_world_dt(sc->world));
        if (o->obj_every > 0 && n % o->obj_every == 0 && write_frame(o, sc, n, a->prog, r->emb, r->emb_xyz))
            return CLI_EXIT_FAIL;
        double now = cli_now_ms();
        if (now - t_report >= 1000.0 && n < o->steps) {
            t_report = now;
            fprintf(stderr, "step %d/%d  t = %.4g s  cg %d  %.3g ms/step", n, o->steps,
                    tw_world_time(sc->world), st.cg_iterations, tot->ms_sum / n);
            if (tot->cg_capped)
                fprintf(stderr, "  CG cap %d hit in %d of %d steps (residual %.2g > --cg-tol %g)", o->cg_max,
                        tot->cg_capped, n, st.residual, o->cg_tol);
            if (o->tool.on) fprintf(stderr, "  tool force (%.3g, %.3g, %.3g) N", tf[0], tf[1], tf[2]);
            fputc('\n', stderr);
        }
    }
    if (r->csv) {
        int bad = ferror(r->csv);
        bad |= fclose(r->csv) != 0;
        r->csv = NULL;
        if (bad) {
            cli_error(a, "--csv %s: write failed", o->csv);
            return CLI_EXIT_FAIL;
        }
    }
    return CLI_EXIT_OK;
}

static void run_summary(const run_opts *o, const cli_scene *sc, const run_state *r, const run_totals *tot,
                        double volume0, double ms_total)
{
    const double *X = tw_mesh_positions(sc->mesh);
    const tw_real *x = tw_world_positions(sc->world);
    int probe = r->probe;
    double volume = tw_world_volume(sc->world);
    printf("%d steps to t = %g s in %.1f ms: %.3g ms/step (%s backend)\n", o->steps,
           tw_world_time(sc->world), ms_total, tot->ms_sum / o->steps, tw_backend_name(sc->backend));
    printf("CG iterations per step: mean %.1f, max %d (tolerance %g, at most %d)\n",
           (double)tot->cg_sum / o->steps, tot->cg_max_seen, o->cg_tol, o->cg_max);
    if (tot->cg_capped)
        printf("warning: CG stopped at its cap of %d iterations short of --cg-tol %g in %d of %d steps: "
               "raise --cg-max, or take a smaller --dt or a better-shaped mesh\n",
               o->cg_max, o->cg_tol, tot->cg_capped, o->steps);
    printf("volume %.6g m^3 (rest %.6g, %+.3f %%)\n", volume, volume0,
           volume0 > 0 ? 100.0 * (volume - volume0) / volume0 : 0.0);
    printf("probe vertex %d displacement (%.6g, %.6g, %.6g) m\n", probe,
           (double)x[3 * probe] - X[3 * probe], (double)x[3 * probe + 1] - X[3 * probe + 1],
           (double)x[3 * probe + 2] - X[3 * probe + 2]);
    if (o->tool.on)
        printf("tool: force at the end (%.6g, %.6g, %.6g) N, at most %.6g N\n", tot->tool_f[0], tot->tool_f[1],
               tot->tool_f[2], tot->tool_fmax);
    if (o->csv) printf("wrote %s (%d rows)\n", o->csv, o->steps);
}

/* --scene: a scene of the demo library that is one world (its mesh and
 * world taken over by the run). On failure prints why and returns -1. */
static int run_demo_scene(const run_opts *o, const cli_scene_opts *so, const char *prog, cli_scene *sc)
{
    memset(sc, 0, sizeof *sc);
    demo_options d = demo_default_options();
    d.data_dir = o->data_dir;
    if (o->dt_given) d.dt = o->dt;
    if (so->backend != TW_BACKEND_AUTO) d.backend = so->backend;
    demo_scene ds;
    if (demo_scene_build(&ds, o->scene, &d, prog)) return -1;
    if (ds.body_count != 1) {
        fprintf(stderr, "%s: --scene %s has %d separate worlds; `tetwarp run` runs a scene of one world "
                        "(bunny-block, stack, dane-floor, tube; tetwarp-view runs them all)\n",
                prog, o->scene, ds.body_count);
        demo_scene_destroy(&ds);
        return -1;
    }
    demo_body *b = &ds.body[0];
    sc->mesh = b->mesh;
    sc->world = b->world;
    sc->element_youngs = b->element_youngs; /* the world was made from it: freed with the scene */
    b->mesh = NULL;
    b->world = NULL;
    b->element_youngs = NULL;
    demo_scene_destroy(&ds);
    sc->backend = tw_world_get_def(sc->world)->backend;
    sc->fixed = calloc((size_t)tw_mesh_vertex_count(sc->mesh), 1);
    if (!sc->fixed) {
        cli_scene_destroy(sc);
        return -1;
    }
    for (int i = 0; i < tw_mesh_vertex_count(sc->mesh); i++)
        if (tw_world_get_constraint(sc->world, i) == TW_PINNED) {
            sc->fixed[i] = 1;
            sc->pinned++;
        }
    snprintf(sc->description, sizeof sc->description, "scene %s (%d bodies)", o->scene,
             tw_mesh_body_count(sc->mesh));
    return 0;
}

int cli_cmd_run(int argc, char **argv)
{
    /* the multiresolution simulation has its own options and loop */
    for (int k = 0; k < argc; k++)
        if (strncmp(argv[k], "--multires", 10) == 0 && (argv[k][10] == 0 || argv[k][10] == '='))
            return cli_cmd_run_multires(argc, argv);
        else if (strncmp(argv[k], "--hier-basis", 12) == 0 && (argv[k][12] == 0 || argv[k][12] == '='))
            return cli_cmd_run_hier_basis(argc, argv);
    cli_args a = cli_args_make(argc, argv, "tetwarp run");
    cli_scene_opts so = cli_default_scene_opts();
    run_opts o = run_defaults();
    int parsed = run_parse(&a, &so, &o);
    if (parsed) {
        cli_tool_free(&o.tool);
        return parsed > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (o.scene && o.tool.model) {
        /* the scene's world is its demo's, made without the models: every
           step would fail asking for tw_world_def.collider_models */
        fprintf(stderr, "%s: --tool-model: not with --scene (the scene builds its own world)\n", a.prog);
        cli_tool_free(&o.tool);
        return CLI_EXIT_USAGE;
    }
    if (o.tree.levels > 0) {
        cli_tool_free(&o.tool); /* the tree run takes no tool */
        cli_tree_run tr;
        memset(&tr, 0, sizeof tr);
        tr.dt = o.dt;
        tr.damping[0] = o.damping[0];
        tr.damping[1] = o.damping[1];
        tr.cg_tol = o.cg_tol;
        tr.steps = o.steps;
        tr.cg_max = o.cg_max;
        tr.probe = o.probe;
        tr.csv = o.csv;
        tr.obj_every = o.obj_every;
        tr.obj_dir = o.obj_dir;
        tr.render_surface = o.render_surface;
        return cli_run_tree(a.prog, &so, &o.tree, &tr);
    }

    tw_world_def def = tw_default_world_def();
    def.dt = o.dt;
    def.damping_mass = o.damping[0];
    def.damping_stiffness = o.damping[1];
    def.cg_tolerance = o.cg_tol;
    def.cg_max_iterations = o.cg_max;
    def.cg_fixed_iterations = o.cg_fixed;
    def.warp_system = o.warp_system;
    def.precond = o.precond;
    def.integrator = o.integrator;
    def.newton_iterations = o.newton;
    def.collider_models = o.tool.model;
    cli_scene sc;
    if (o.scene ? run_demo_scene(&o, &so, a.prog, &sc) : cli_scene_build(&so, def, a.prog, &sc)) {
        cli_tool_free(&o.tool);
        return CLI_EXIT_FAIL;
    }
    run_state r;
    int rc = run_setup(&a, &so, &o, &sc, &r);
    if (rc == CLI_EXIT_OK) {
        run_totals tot;
        memset(&tot, 0, sizeof tot);
        double volume0 = tw_world_volume(sc.world), t_start = cli_now_ms();
        rc = run_steps(&a, &o, &sc, &r, &tot);
        if (rc == CLI_EXIT_OK) run_summary(&o, &sc, &r, &tot, volume0, cli_now_ms() - t_start);
    }
    run_state_free(&r);
    cli_scene_destroy(&sc);
    cli_tool_free(&o.tool);
    return rc;
}
