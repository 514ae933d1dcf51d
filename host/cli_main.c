/* tetwarp: the command-line tool.
 *
 *   tetwarp info MESH        mesh statistics and quality
 *   tetwarp static [scene]   static equilibrium, displacements to CSV
 *   tetwarp run [scene]      time-stepping, per-step CSV and OBJ frames
 *
 * Every option, its unit and its default are printed by `tetwarp CMD --help`
 * from the same default structs the parsing starts from. Exit status: 0 on
 * success, 1 when the mesh, the solve or a file fails, 2 for a bad command
 * line. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_args.h"
#include "cli_scene.h"
#include "tetwarp.h"

#define CLI_VERSION "0.1"

static void print_usage(FILE *f)
{
    fprintf(f,
            "tetwarp %s: real-time elastic solids on tetrahedral meshes (real type: %s)\n"
            "\n"
            "Usage: tetwarp COMMAND [options]\n"
            "\n"
            "Commands:\n"
            "  info MESH        mesh size, volume, bounding box, element quality\n"
            "  static [scene]   static equilibrium under gravity; displacements to CSV\n"
            "  run [scene]      implicit time-stepping; per-step CSV, OBJ frames\n"
            "  mesh SURFACE     tetrahedralize a closed surface with TetGen (--tets N or --edge H)\n"
            "  help [COMMAND]   this text, or a command's options\n"
            "\n"
            "`tetwarp COMMAND --help` lists every option with its unit and default.\n"
            "Exit status: 0 success, 1 failure (mesh, solve, file), 2 bad command line.\n",
            CLI_VERSION, tw_real_name());
}

/* ------------------------------------------------------------------ info */

static void info_help(FILE *f)
{
    fprintf(f,
            "Usage: tetwarp info MESH [--strict]   (or --mesh MESH)\n"
            "\n"
            "Prints vertices, tets, boundary faces, regions, volume (m^3), bounding box (m),\n"
            "min/max dihedral angle (degrees), max/mean aspect ratio (1 = regular), min/max\n"
            "edge (m), and what loading repaired (reoriented elements, unused vertices).\n"
            "\n"
            "  MESH        .node/.ele (TetGen), .msh (Gmsh ASCII v1/v2/v4) or .mesh (MEDIT)\n"
            "  --strict    an inverted element is an error (default: reoriented and counted)\n");
}

static int cmd_info(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp info");
    const char *path = NULL;
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1; /* the report below says what loading repaired */
    while (cli_next(&a)) {
        if (cli_is_help(&a)) {
            info_help(stdout);
            return CLI_EXIT_OK;
        } else if (cli_is(&a, "--strict")) {
            if (cli_flag(&a)) return CLI_EXIT_USAGE;
            ld.strict = 1;
        } else if (cli_is(&a, "--mesh") && !path) {
            if (!(path = cli_value(&a, "mesh file"))) return CLI_EXIT_USAGE;
        } else if (!cli_is_option(&a) && !path) {
            path = a.arg;
        } else {
            cli_unknown(&a);
            return CLI_EXIT_USAGE;
        }
    }
    if (!path) {
        cli_error(&a, "no mesh file given (usage: tetwarp info MESH [--strict])");
        return CLI_EXIT_USAGE;
    }
    tw_mesh_report rep;
    memset(&rep, 0, sizeof rep);
    tw_mesh *m = tw_mesh_load(path, &ld, &rep);
    if (!m) {
        cli_error(&a, "cannot load the mesh: %s", tw_last_error());
        return CLI_EXIT_FAIL;
    }
    tw_mesh_stats st = tw_mesh_compute_stats(m);
    printf("mesh             %s\n", path);
    printf("vertices         %d\n", st.vertices);
    printf("tets             %d\n", st.tets);
    printf("boundary faces   %d\n", st.boundary_faces);
    printf("regions          %d\n", st.regions);
    printf("volume           %.6g m^3\n", st.volume);
    printf("bounding box     [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g] m\n", st.bbox_min[0],
           st.bbox_max[0], st.bbox_min[1], st.bbox_max[1], st.bbox_min[2], st.bbox_max[2]);
    printf("dihedral angle   min %.4g, max %.4g degrees\n", st.min_dihedral, st.max_dihedral);
    printf("aspect ratio     max %.4g, mean %.4g (1 = regular)\n", st.max_aspect,
           st.mean_aspect);
    printf("edge length      min %.6g, max %.6g m\n", st.min_edge, st.max_edge);
    printf("element volume   min %.6g, max %.6g m^3\n", st.min_volume, st.max_volume);
    printf("index base       %d\n", rep.first_index);
    printf("reoriented       %d elements\n", rep.reoriented);
    printf("unused vertices  %d (pinned when simulated)\n", rep.unused_vertices);
    tw_mesh_destroy(m);
    return CLI_EXIT_OK;
}

/* ---------------------------------------------------------------- static */

typedef struct static_opts {
    const char *out;
    tw_static_def solve;
} static_opts;

static static_opts static_defaults(void)
{
    static_opts o;
    o.out = NULL;
    o.solve = tw_default_static_def();
    return o;
}

static void static_help(FILE *f)
{
    static_opts d = static_defaults();
    cli_scene_opts s = cli_default_scene_opts();
    fprintf(f,
            "Usage: tetwarp static [scene options] [--out disp.csv]\n"
            "\n"
            "Static equilibrium under gravity with the fixed vertices held: linear solves\n"
            "K u = f; corot-element and green run Newton with load stepping (warp-* are\n"
            "solved as corot-element). Prints the largest displacement and the iterations.\n"
            "\n");
    cli_scene_print_help(f, &s);
    fprintf(f,
            "\nStatic options:\n"
            "  --out PATH              CSV `vertex,ux,uy,uz`: one row per mesh vertex in the\n"
            "                          mesh's order, vertex 0-based, displacements in m\n"
            "                          (default: none, summary only)\n"
            "  --load-steps N          load increments for the non-linear methods, >= 1 (default %d)\n"
            "  --tol T                 Newton tolerance, relative residual norm, > 0 (default %g)\n"
            "  --max-newton N          Newton iterations per load step, >= 1 (default %d)\n"
            "  --verbose               Newton progress on stderr\n",
            d.solve.load_steps, d.solve.tolerance, d.solve.max_newton);
}

static int write_displacements(const char *path, const tw_mesh *m, const tw_real *x)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    const double *X = tw_mesh_positions(m);
    int nv = tw_mesh_vertex_count(m);
    fprintf(f, "vertex,ux,uy,uz\n");
    for (int i = 0; i < nv; i++)
        fprintf(f, "%d,%.9g,%.9g,%.9g\n", i, (double)x[3 * i] - X[3 * i],
                (double)x[3 * i + 1] - X[3 * i + 1], (double)x[3 * i + 2] - X[3 * i + 2]);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

static int cmd_static(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp static");
    cli_scene_opts so = cli_default_scene_opts();
    static_opts o = static_defaults();
    while (cli_next(&a)) {
        int r = cli_scene_option(&so, &a);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if (cli_is_help(&a)) {
            static_help(stdout);
            return CLI_EXIT_OK;
        } else if (cli_is(&a, "--out")) {
            if (!(o.out = cli_value(&a, "CSV path"))) return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--load-steps")) {
            if (cli_int(&a, "load increments", &o.solve.load_steps) ||
                cli_require(&a, o.solve.load_steps >= 1, ">= 1"))
                return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--tol")) {
            if (cli_double(&a, "relative residual", &o.solve.tolerance) ||
                cli_require(&a, o.solve.tolerance > 0, "> 0 (relative residual)"))
                return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--max-newton")) {
            if (cli_int(&a, "Newton iterations", &o.solve.max_newton) ||
                cli_require(&a, o.solve.max_newton >= 1, ">= 1"))
                return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--verbose")) {
            if (cli_flag(&a)) return CLI_EXIT_USAGE;
            o.solve.verbose = 1;
        } else {
            cli_unknown(&a);
            return CLI_EXIT_USAGE;
        }
    }
    cli_scene sc;
    if (cli_scene_build(&so, tw_default_world_def(), a.prog, &sc)) return CLI_EXIT_FAIL;
    if (sc.pinned == 0) {
        cli_error(&a, "nothing is fixed, so there is no equilibrium: give --fix (e.g. \"z<0.01\")");
        cli_scene_destroy(&sc);
        return CLI_EXIT_USAGE;
    }
    int nv = tw_mesh_vertex_count(sc.mesh);
    printf("%s: %d vertices, %d tets, %d fixed; %s\n", sc.description, nv,
           tw_mesh_tet_count(sc.mesh), sc.pinned, tw_method_name(so.method));
    tw_static_stats st;
    memset(&st, 0, sizeof st);
    double t0 = cli_now_ms();
    tw_status s = tw_world_solve_static(sc.world, &o.solve, &st);
    double ms = cli_now_ms() - t0;
    if (s != TW_OK) {
        cli_error(&a, "%s: %s", tw_status_name(s), tw_last_error());
        cli_scene_destroy(&sc);
        return CLI_EXIT_FAIL;
    }
    const tw_real *x = tw_world_positions(sc.world);
    const double *X = tw_mesh_positions(sc.mesh);
    int imax = 0;
    double umax = 0;
    for (int i = 0; i < nv; i++) {
        double u2 = 0;
        for (int k = 0; k < 3; k++) {
            double d = (double)x[3 * i + k] - X[3 * i + k];
            u2 += d * d;
        }
        if (u2 > umax) {
            umax = u2;
            imax = i;
        }
    }
    printf("max displacement %.6g m at vertex %d (rest %g, %g, %g): u = (%.6g, %.6g, %.6g) m\n",
           sqrt(umax), imax, X[3 * imax], X[3 * imax + 1], X[3 * imax + 2],
           (double)x[3 * imax] - X[3 * imax], (double)x[3 * imax + 1] - X[3 * imax + 1],
           (double)x[3 * imax + 2] - X[3 * imax + 2]);
    printf("Newton iterations %d, CG iterations %d, residual %.3g, time %.1f ms\n",
           st.newton_iterations, st.cg_iterations, st.residual, ms);
    int rc = CLI_EXIT_OK;
    if (o.out) {
        if (write_displacements(o.out, sc.mesh, x)) {
            cli_error(&a, "--out %s: cannot write: %s", o.out, strerror(errno));
            rc = CLI_EXIT_FAIL;
        } else {
            printf("wrote %s (%d rows)\n", o.out, nv);
        }
    }
    cli_scene_destroy(&sc);
    return rc;
}

/* ------------------------------------------------------------------- run */

typedef struct run_opts {
    double dt;          /* s */
    int steps;
    double damping[2];  /* Rayleigh alpha (1/s), beta (s) */
    double cg_tol;
    int cg_max;
    int cg_fixed;       /* > 0: exactly this many CG iterations per step */
    tw_warp_system warp_system;
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
    return o;
}

static void run_help(FILE *f)
{
    run_opts d = run_defaults();
    cli_scene_opts s = cli_default_scene_opts();
    fprintf(f,
            "Usage: tetwarp run [scene options] [run options]\n"
            "\n"
            "Implicit Euler time-stepping. Prints a summary; with --csv one row per step:\n"
            "step,time,volume,kinetic_energy,elastic_energy,gravity_energy,cg_iterations,\n"
            "residual,step_ms,probe_ux,probe_uy,probe_uz (SI units: s, m^3, J, ms, m).\n"
            "Progress goes to stderr at most once a second. A diverged step prints the\n"
            "engine's message and exits 1.\n"
            "\n");
    cli_scene_print_help(f, &s);
    fprintf(f,
            "\nRun options:\n"
            "  --integrator NAME       implicit-euler|bdf2|explicit-newmark (default %s)\n"
            "  --newton N              implicit, non-linear methods: Newton iterations per step with a\n"
            "                          line search, >= 1 (default %d: one linearisation, Mueller's choice)\n"
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
            "                          symmetric (PCG on R_i K_ij R_j^T) or bicgstab (BiCGStab on\n"
            "                          R_i K_ij R_i^T; ignores --cg-fixed) (default %s)\n"
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
            "                          DEG_S degrees per second; the skin follows dynamically\n",
            tw_integrator_name(d.integrator), d.newton, d.dt, d.steps, d.damping[0], d.damping[1], d.cg_tol, d.cg_max,
            d.warp_system == TW_WARP_SYSTEM_BICGSTAB ? "bicgstab" : "symmetric", TW_MAX_COLLIDERS, d.obj_dir);
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

static int cmd_run(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp run");
    cli_scene_opts so = cli_default_scene_opts();
    run_opts o = run_defaults();
    while (cli_next(&a)) {
        int r = cli_scene_option(&so, &a);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        int bad = 0;
        if (cli_is_help(&a)) {
            run_help(stdout);
            return CLI_EXIT_OK;
        } else if (cli_is(&a, "--dt")) {
            bad = cli_double(&a, "time step, s", &o.dt) ||
                  cli_require(&a, o.dt > 0 || (o.dt == 0 && o.integrator == TW_EXPLICIT_NEWMARK),
                              "> 0 s (0, the automatic step, only after --integrator explicit-newmark)");
        } else if (cli_is(&a, "--newton")) {
            bad = cli_int(&a, "Newton iterations", &o.newton) || cli_require(&a, o.newton >= 1, ">= 1");
        } else if (cli_is(&a, "--integrator")) {
            const char *v = cli_value(&a, "implicit-euler|bdf2|explicit-newmark");
            int k = v ? tw_integrator_parse(v) : -1;
            bad = !v || cli_require(&a, k >= 0, "implicit-euler, bdf2 or explicit-newmark");
            if (!bad) o.integrator = (tw_integrator)k;
        } else if (cli_is(&a, "--steps")) {
            bad = cli_int(&a, "step count", &o.steps) || cli_require(&a, o.steps >= 1, ">= 1");
        } else if (cli_is(&a, "--damping")) {
            bad = cli_doubles(&a, "ALPHA,BETA: Rayleigh alpha 1/s, beta s", 2, o.damping) ||
                  cli_require(&a, o.damping[0] >= 0 && o.damping[1] >= 0,
                              ">= 0 (ALPHA 1/s, BETA s)");
        } else if (cli_is(&a, "--cg-tol")) {
            bad = cli_double(&a, "relative residual", &o.cg_tol) ||
                  cli_require(&a, o.cg_tol > 0 && o.cg_tol < 1, "in (0, 1) (relative residual)");
        } else if (cli_is(&a, "--cg-max")) {
            bad = cli_int(&a, "CG iterations", &o.cg_max) || cli_require(&a, o.cg_max >= 1, ">= 1");
        } else if (cli_is(&a, "--cg-fixed")) {
            bad = cli_int(&a, "CG iterations", &o.cg_fixed) || cli_require(&a, o.cg_fixed >= 1, ">= 1");
        } else if (cli_is(&a, "--warp-system")) {
            const char *v = cli_value(&a, "symmetric|bicgstab");
            bad = !v;
            if (v && strcmp(v, "symmetric") == 0) o.warp_system = TW_WARP_SYSTEM_SYMMETRIC;
            else if (v && strcmp(v, "bicgstab") == 0) o.warp_system = TW_WARP_SYSTEM_BICGSTAB;
            else if (v) bad = cli_require(&a, 0, "symmetric or bicgstab");
        } else if (cli_is(&a, "--floor") || cli_is(&a, "--sphere") || cli_is(&a, "--box")) {
            int kind = cli_is(&a, "--floor") ? 0 : cli_is(&a, "--sphere") ? 1 : 2;
            double v[7];
            static const int counts[3] = {2, 5, 7};
            static const char *forms[3] = {"Z,MU: height m, friction", "X,Y,Z,R,MU: centre m, radius m, friction",
                                           "X,Y,Z,HX,HY,HZ,MU: centre m, half sizes m, friction"};
            bad = cli_require(&a, o.ncolliders < TW_MAX_COLLIDERS, "at most 16 colliders in all") ||
                  cli_doubles(&a, forms[kind], counts[kind], v);
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
                o.colliders[o.ncolliders++] = c;
            }
        } else if (cli_is(&a, "--csv")) {
            bad = !(o.csv = cli_value(&a, "CSV path"));
        } else if (cli_is(&a, "--probe")) {
            bad = cli_int(&a, "0-based vertex index", &o.probe) ||
                  cli_require(&a, o.probe >= 0, ">= 0 (a 0-based vertex index)");
        } else if (cli_is(&a, "--obj-every")) {
            bad = cli_int(&a, "steps between frames", &o.obj_every) ||
                  cli_require(&a, o.obj_every >= 1, ">= 1");
        } else if (cli_is(&a, "--render-surface")) {
            bad = !(o.render_surface = cli_value(&a, "surface path"));
        } else if (cli_is(&a, "--bone-core")) {
            bad = cli_double(&a, "depth, m", &o.bone_depth) || cli_require(&a, o.bone_depth > 0, "> 0 m");
        } else if (cli_is(&a, "--bone-spin")) {
            const char *v = cli_value(&a, "AXIS,DEG_PER_S");
            char *end = NULL;
            bad = !v || cli_require(&a, v && (v[0] == 'x' || v[0] == 'y' || v[0] == 'z') && v[1] == ',',
                                    "AXIS,DEG_PER_S with AXIS x, y or z");
            if (!bad) {
                o.spin_axis = v[0] - 'x';
                o.spin_rate = strtod(v + 2, &end);
                bad = cli_require(&a, end != v + 2 && *end == 0 && isfinite(o.spin_rate),
                                  "AXIS,DEG_PER_S with a number of degrees per second");
            }
        } else if (cli_is(&a, "--obj-dir")) {
            bad = !(o.obj_dir = cli_value(&a, "folder"));
        } else {
            cli_unknown(&a);
            return CLI_EXIT_USAGE;
        }
        if (bad) return CLI_EXIT_USAGE;
    }

    tw_world_def def = tw_default_world_def();
    def.dt = o.dt;
    def.damping_mass = o.damping[0];
    def.damping_stiffness = o.damping[1];
    def.cg_tolerance = o.cg_tol;
    def.cg_max_iterations = o.cg_max;
    def.cg_fixed_iterations = o.cg_fixed;
    def.warp_system = o.warp_system;
    def.integrator = o.integrator;
    def.newton_iterations = o.newton;
    cli_scene sc;
    if (cli_scene_build(&so, def, a.prog, &sc)) return CLI_EXIT_FAIL;
    for (int k = 0; k < o.ncolliders; k++)
        if (tw_world_add_collider(sc.world, &o.colliders[k]) != TW_OK) {
            fprintf(stderr, "%s: %s\n", a.prog, tw_last_error());
            cli_scene_destroy(&sc);
            return CLI_EXIT_USAGE;
        }
    int nv = tw_mesh_vertex_count(sc.mesh);
    int rc = CLI_EXIT_FAIL;
    FILE *csv = NULL;
    tw_surface *render = NULL;
    tw_embedding *emb = NULL;
    float *emb_xyz = NULL;
    unsigned char *core = NULL;
    double center[3] = {0, 0, 0};
    if (o.render_surface) {
        tw_embed_report er;
        if (!(render = tw_surface_load(o.render_surface)) || !(emb = tw_embed_surface(sc.mesh, render, 0, &er))) {
            cli_error(&a, "--render-surface %s: %s", o.render_surface, tw_last_error());
            goto done;
        }
        emb_xyz = malloc(sizeof(float) * 3 * (size_t)tw_embedding_vertex_count(emb));
        if (!emb_xyz) goto done;
        printf("render surface %s: %d vertices (%d inside the tets, %d extrapolated, at most %.3g m outside), "
               "embedded in %.1f ms\n",
               o.render_surface, er.vertices, er.inside, er.outside, er.max_distance, er.ms);
    }
    if (o.bone_depth > 0) {
        core = calloc((size_t)nv, 1);
        int count = core ? tw_mesh_mark_core(sc.mesh, o.bone_depth, core) : -1;
        if (count < 0 || tw_world_set_kinematic_group(sc.world, core) != TW_OK) {
            cli_error(&a, "--bone-core %g: %s", o.bone_depth, tw_last_error());
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        for (int i = 0; i < nv; i++)
            if (core[i])
                for (int c = 0; c < 3; c++) center[c] += tw_mesh_positions(sc.mesh)[3 * i + c] / count;
        printf("bone core: %d of %d vertices deeper than %g m, centroid (%g, %g, %g)\n", count, nv, o.bone_depth,
               center[0], center[1], center[2]);
    } else if (o.spin_axis >= 0) {
        cli_error(&a, "--bone-spin needs --bone-core DEPTH");
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    if (o.probe >= nv) {
        cli_error(&a, "--probe %d: no such vertex (the mesh has %d vertices, 0..%d)", o.probe, nv,
                  nv - 1);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    int probe = o.probe >= 0 ? o.probe : cli_scene_probe_vertex(&sc);
    const double *X = tw_mesh_positions(sc.mesh);
    printf("%s: %d vertices, %d tets, %d fixed; %s, %s, dt %g s, %d steps; probe vertex %d "
           "(rest %g, %g, %g)\n",
           sc.description, nv, tw_mesh_tet_count(sc.mesh), sc.pinned, tw_method_name(so.method),
           tw_integrator_name(o.integrator), tw_world_dt(sc.world), o.steps, probe, X[3 * probe], X[3 * probe + 1], X[3 * probe + 2]);

    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv) {
            cli_error(&a, "--csv %s: cannot open for writing: %s", o.csv, strerror(errno));
            goto done;
        }
        fprintf(csv, "step,time,volume,kinetic_energy,elastic_energy,gravity_energy,"
                     "cg_iterations,residual,step_ms,probe_ux,probe_uy,probe_uz\n");
    }
    if (o.obj_every > 0) {
        if (mkdir(o.obj_dir, 0777) != 0 && errno != EEXIST) {
            cli_error(&a, "--obj-dir %s: cannot create: %s", o.obj_dir, strerror(errno));
            goto done;
        }
        if (write_frame(&o, &sc, 0, a.prog, emb, emb_xyz)) goto done;
    }

    double volume0 = tw_world_volume(sc.world);
    double t_start = cli_now_ms(), t_report = t_start, ms_sum = 0;
    long cg_sum = 0;
    int cg_max_seen = 0;
    for (int n = 1; n <= o.steps; n++) {
        tw_step_stats st;
        memset(&st, 0, sizeof st);
        double t0 = cli_now_ms();
        tw_status s = tw_world_step(sc.world, &st);
        double ms = cli_now_ms() - t0;
        if (s != TW_OK) {
            cli_error(&a, "%s", tw_last_error());
            if (s != TW_ERR_DIVERGED) cli_error(&a, "step %d failed: %s", n, tw_status_name(s));
            goto done;
        }
        ms_sum += ms;
        cg_sum += st.cg_iterations;
        if (st.cg_iterations > cg_max_seen) cg_max_seen = st.cg_iterations;
        const tw_real *x = tw_world_positions(sc.world);
        if (csv)
            fprintf(csv, "%ld,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%.9g,%.6g,%.9g,%.9g,%.9g\n",
                    tw_world_step_index(sc.world), tw_world_time(sc.world),
                    tw_world_volume(sc.world), tw_world_kinetic_energy(sc.world),
                    tw_world_elastic_energy(sc.world), tw_world_gravity_energy(sc.world),
                    st.cg_iterations, st.residual, ms, (double)x[3 * probe] - X[3 * probe],
                    (double)x[3 * probe + 1] - X[3 * probe + 1],
                    (double)x[3 * probe + 2] - X[3 * probe + 2]);
        if (core) drive_core(&o, &sc, core, center, tw_world_time(sc.world) + tw_world_dt(sc.world));
        if (o.obj_every > 0 && n % o.obj_every == 0 && write_frame(&o, &sc, n, a.prog, emb, emb_xyz)) goto done;
        double now = cli_now_ms();
        if (now - t_report >= 1000.0 && n < o.steps) {
            t_report = now;
            fprintf(stderr, "step %d/%d  t = %.4g s  cg %d  %.3g ms/step\n", n, o.steps,
                    tw_world_time(sc.world), st.cg_iterations, ms_sum / n);
        }
    }
    if (csv) {
        int bad = ferror(csv);
        bad |= fclose(csv) != 0;
        csv = NULL;
        if (bad) {
            cli_error(&a, "--csv %s: write failed", o.csv);
            goto done;
        }
    }
    const tw_real *x = tw_world_positions(sc.world);
    double volume = tw_world_volume(sc.world);
    printf("%d steps to t = %g s in %.1f ms: %.3g ms/step (%s backend)\n", o.steps,
           tw_world_time(sc.world), cli_now_ms() - t_start, ms_sum / o.steps,
           tw_backend_name(sc.backend));
    printf("CG iterations per step: mean %.1f, max %d (tolerance %g, at most %d)\n",
           (double)cg_sum / o.steps, cg_max_seen, o.cg_tol, o.cg_max);
    printf("volume %.6g m^3 (rest %.6g, %+.3f %%)\n", volume, volume0,
           volume0 > 0 ? 100.0 * (volume - volume0) / volume0 : 0.0);
    printf("probe vertex %d displacement (%.6g, %.6g, %.6g) m\n", probe,
           (double)x[3 * probe] - X[3 * probe], (double)x[3 * probe + 1] - X[3 * probe + 1],
           (double)x[3 * probe + 2] - X[3 * probe + 2]);
    if (o.csv) printf("wrote %s (%d rows)\n", o.csv, o.steps);
    rc = CLI_EXIT_OK;
done:
    if (csv) fclose(csv);
    free(emb_xyz);
    tw_embedding_destroy(emb);
    tw_surface_destroy(render);
    free(core);
    cli_scene_destroy(&sc);
    return rc;
}

/* ------------------------------------------------------------------ mesh */

static void mesh_help(FILE *f)
{
    tw_mesher_def d = tw_default_mesher_def();
    fprintf(f,
            "Usage: tetwarp mesh SURFACE (--tets N | --edge H) --out PATH [options]\n"
            "\n"
            "Tetrahedralizes a closed triangle surface with TetGen (apt-get install tetgen),\n"
            "keeping its triangles. The surface is checked first: holes, non-manifold edges,\n"
            "inconsistent orientation, degenerate and crossing triangles are errors. Prints\n"
            "the runs, vertices, tets, min dihedral angle, max radius-edge ratio and time.\n"
            "\n"
            "  SURFACE         .obj, .off or .stl (ASCII or binary)\n"
            "  --tets N        aim at N tets, within %g %% (at most %d TetGen runs)\n"
            "  --edge H        target edge length H, m: max tet volume H^3/(6 sqrt 2)\n"
            "  --out PATH      TetGen mesh PATH.node/PATH.ele (PATH may end in .node or .ele)\n"
            "  --quality Q     radius-edge bound, > 1 (default %g); relaxed (to 2, then none)\n"
            "                  when the surface alone needs more than N tets\n"
            "  --cache DIR     cache folder (default $XDG_CACHE_HOME/tetwarp or ~/.cache/tetwarp)\n"
            "  --no-cache      neither read nor write the cache\n"
            "  --verbose       each TetGen run on stderr\n",
            100 * d.tolerance, d.max_tries, d.quality);
}

static int cmd_mesh(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp mesh");
    tw_mesher_def def = tw_default_mesher_def();
    const char *surface = NULL, *out = NULL;
    while (cli_next(&a)) {
        int bad = 0;
        if (cli_is_help(&a)) {
            mesh_help(stdout);
            return CLI_EXIT_OK;
        } else if (cli_is(&a, "--tets")) {
            bad = cli_int(&a, "tet count", &def.target_tets) ||
                  cli_require(&a, def.target_tets >= 1, ">= 1");
        } else if (cli_is(&a, "--edge")) {
            bad = cli_double(&a, "edge length, m", &def.max_edge) ||
                  cli_require(&a, def.max_edge > 0, "> 0 m");
        } else if (cli_is(&a, "--quality")) {
            bad = cli_double(&a, "radius-edge bound", &def.quality) ||
                  cli_require(&a, def.quality > 1, "> 1 (radius-edge bound, e.g. 1.414)");
        } else if (cli_is(&a, "--out")) {
            bad = !(out = cli_value(&a, "mesh path"));
        } else if (cli_is(&a, "--cache")) {
            bad = !(def.cache_dir = cli_value(&a, "folder"));
        } else if (cli_is(&a, "--no-cache")) {
            bad = cli_flag(&a);
            def.use_cache = 0;
        } else if (cli_is(&a, "--verbose")) {
            bad = cli_flag(&a);
            def.verbose = 1;
        } else if (!cli_is_option(&a) && !surface) {
            surface = a.arg;
        } else {
            cli_unknown(&a);
            return CLI_EXIT_USAGE;
        }
        if (bad) return CLI_EXIT_USAGE;
    }
    if (!surface) {
        cli_error(&a, "no surface file given (usage: tetwarp mesh SURFACE --tets N --out PATH)");
        return CLI_EXIT_USAGE;
    }
    if ((def.target_tets > 0) == (def.max_edge > 0)) {
        cli_error(&a, "give --tets N or --edge H (one of them)");
        return CLI_EXIT_USAGE;
    }
    if (!out) {
        cli_error(&a, "no --out PATH given (the mesh is written as PATH.node and PATH.ele)");
        return CLI_EXIT_USAGE;
    }
    char stem[4096];
    snprintf(stem, sizeof stem, "%s", out);
    size_t len = strlen(stem);
    if (len > 5 && strcmp(stem + len - 5, ".node") == 0) stem[len - 5] = 0;
    else if (len > 4 && strcmp(stem + len - 4, ".ele") == 0) stem[len - 4] = 0;
    else if ((len > 4 && strcmp(stem + len - 4, ".msh") == 0) ||
             (len > 5 && strcmp(stem + len - 5, ".mesh") == 0)) {
        cli_error(&a, "--out %s: only TetGen .node/.ele is written; give a stem or PATH.node", out);
        return CLI_EXIT_USAGE;
    }
    tw_mesher_report rep;
    tw_mesh *m = tw_mesh_from_surface(surface, &def, &rep);
    if (!m) {
        cli_error(&a, "%s", tw_last_error());
        return CLI_EXIT_FAIL;
    }
    if (rep.cached) printf("cached: %s.node/.ele (%.3f s)\n", rep.cache_path, rep.seconds);
    printf("surface          %s: %d vertices, %d triangles, volume %.6g m^3\n", surface,
           rep.surface_vertices, rep.surface_triangles, rep.surface_volume);
    if (def.target_tets > 0)
        printf("target           %d tets (+-%g %%): %s after %d TetGen run%s\n", def.target_tets,
               100 * def.tolerance, rep.on_target ? "reached" : "NOT reached", rep.tries,
               rep.tries == 1 ? "" : "s");
    else
        printf("target           edge %g m: max tet volume %.6g m^3, %d TetGen run\n", def.max_edge,
               rep.max_volume, rep.tries);
    if (rep.quality_used != def.quality)
        printf("quality          relaxed from %g to %s: the surface alone needs more tets at %g\n",
               def.quality, rep.quality_used > 0 ? "2" : "none", def.quality);
    printf("vertices         %d\n", rep.vertices);
    printf("tets             %d\n", rep.tets);
    printf("volume           %.6g m^3 (%+.3g %% of the surface's)\n", rep.mesh_volume,
           rep.surface_volume > 0 ? 100 * (rep.mesh_volume - rep.surface_volume) / rep.surface_volume : 0.0);
    printf("min dihedral     %.4g degrees\n", rep.min_dihedral);
    printf("max radius-edge  %.4g (circumradius / shortest edge; 0.612 = regular)\n",
           rep.max_radius_edge);
    printf("time             %.3f s (TetGen %.3f s)\n", rep.seconds, rep.tetgen_seconds);
    int rc = CLI_EXIT_OK;
    if (tw_mesh_write_tetgen(m, stem) != TW_OK) {
        cli_error(&a, "--out %s: %s", out, tw_last_error());
        rc = CLI_EXIT_FAIL;
    } else {
        printf("wrote %s.node, %s.ele\n", stem, stem);
    }
    if (!rep.on_target && rc == CLI_EXIT_OK)
        fprintf(stderr, "tetwarp mesh: warning: %d tets is not within %g %% of --tets %d\n", rep.tets,
                100 * def.tolerance, def.target_tets);
    tw_mesh_destroy(m);
    return rc;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("tetwarp %s (%s)\n", CLI_VERSION, tw_real_name());
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        const char *topic = argc > 2 ? argv[2] : "";
        if (strcmp(topic, "info") == 0) info_help(stdout);
        else if (strcmp(topic, "static") == 0) static_help(stdout);
        else if (strcmp(topic, "run") == 0) run_help(stdout);
        else if (strcmp(topic, "mesh") == 0) mesh_help(stdout);
        else if (!*topic) print_usage(stdout);
        else {
            fprintf(stderr, "tetwarp help: unknown command '%s' (commands: info, static, run, mesh)\n",
                    topic);
            return CLI_EXIT_USAGE;
        }
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "static") == 0) return cmd_static(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "mesh") == 0) return cmd_mesh(argc - 2, argv + 2);
    fprintf(stderr, "tetwarp: unknown command '%s' (commands: info, static, run, mesh; see tetwarp --help)\n",
            cmd);
    return CLI_EXIT_USAGE;
}
