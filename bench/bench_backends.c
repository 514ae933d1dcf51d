/* tw_bench_backends — the same scenes on the CPU and the CUDA backend, in one
 * run on one machine.
 *
 * Scenes: "bar" (the benchmark bar of tw_bench_cpu: 1 m long, about 0.15 m
 * square, cubic cells of 6 tets, pinned at x < 1e-6, gravity -z), "bunny"
 * (bunny_closed_3485v.off scaled 6x to about 0.9 m, Y up, pinned below 5 % of
 * its height, gravity -y)
 * and "dog" (dog_tosca_dog0_eyescapped.off scaled from cm to m, Z up, pinned
 * below 5 % of its height, gravity -z). Sizes 10k, 100k, 1m, 5m tets: the
 * bar by cell counts (10 080 / 98 280 / 983 970 / 4 995 000 tets), the
 * bunny and the dog from --mesh-dir/<scene>_<N>.node/.ele when present (what
 * `run_gpu.sh --pack-meshes` writes), else meshed by TetGen through the
 * library's content-hash cache (tw_mesh_from_surface, as `tetwarp mesh`
 * does). A mesh that cannot be had (no TetGen, the dog at 10k) skips its
 * configurations with a line saying why. E 1e6 Pa, nu 0.3, rho 1000,
 * dt 0.01 s, the library's default damping and warm start.
 *
 * Per configuration (scene x size x backend x CG mode x method): warm-up
 * steps, then timed steps until --time seconds and --min-steps are reached,
 * never past --max-seconds (then the row says capped = 1 and stderr says
 * so). ms_step is wall time around tw_world_step; the split rotations /
 * assembly / solve / other is the library's tw_step_stats (CUDA events on
 * the device). CG modes: fixed20 = exactly 20 PCG iterations, tol1e-4 =
 * relative residual 1e-4, cap 500. The CPU backend runs with all host threads.
 *
 * Bytes per CG iteration (a model of kernels/cuda_pcg.cu as of commit
 * f8fcf39; n vertices, b = nnzb 3x3 blocks, r = sizeof(tw_real), nb =
 * reduction blocks = min(ceil(n/256), 1024)):
 *   SpMV q = A p          9 b r (values) + 4 b (columns) + 4 (n+1) (row offsets)
 *                         + 3n r (p, each entry read once) + 3n r (q written)
 *   filter_dot (q = S q)  n (constraint bytes) + 6n r (p, q read)
 *   update (x, r, z)      n + 9n r (Dinv) + 12n r (p, q, x, r read) + 9n r (x, r, z written)
 *   direction (p)         9n r (z, p read, p written)
 *   3 reductions          2 x 8 x 3 nb (partials written and read)
 *   total                 9 b r + 4 b + 4 (n+1) + 2n + 51 n r + 48 nb
 * The fused PCG (cuda-fused rows, kernels/cuda_pcg_fused.cu): two kernels,
 * nb1 = min(ceil(n/16), 1024), nb2 = nb:
 *   row (q = S A (z + beta p), p' = z + beta p, p'.q)
 *                         9 b r + 4 b + 4 (n+1) (matrix) + 6n r (z, p read once)
 *                         + n (constraints) + 6n r (p', q written)
 *   update (x, r, z)      n + 9n r (Dinv) + 12n r (p', q, x, r read) + 9n r (written)
 *   2 reductions          8 x 2 nb1 + 8 x 2 x 2 nb2
 *   total                 9 b r + 4 b + 4 (n+1) + 2n + 42 n r + 16 nb1 + 32 nb2
 * (the direction pass folded into the product: 9n r less than above).
 * and per solve, once (also inside ms_solve): prescribe (n + 6n r), block
 * Jacobi (4n + 18n r), the initial SpMV (matrix + 6n r), the initial residual
 * (n + 24n r), its reduction (48 nb): matrix + 6n + 54 n r + 48 nb. The
 * achieved GB/s of a row is (setup + iterations x per-iteration bytes) /
 * ms_solve: the solve phase as a whole, host round trips per iteration
 * included. CPU rows use the same count (the CPU PCG makes the same passes);
 * their copy bandwidth is a parallel memcpy of host memory.
 *
 * Each (scene, size) group runs in a forked child (the parent never touches
 * CUDA, so every child gets a fresh context): the mesh is loaded once, one
 * world per backend, the CG mode and method switched between
 * configurations (tw_world_reset, tw_world_set_method,
 * tw_world_set_solver). A configuration that crashes, hangs
 * past --config-timeout or hits a CUDA error ends that child; its row says
 * why and a new child goes on with the next one. --budget stops starting
 * configurations after that many seconds (the rest are rows saying skipped).
 */
#define _POSIX_C_SOURCE 200809L
#include "tetwarp.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_common.h"
#include "hd/math3.h"
#ifdef TW_HAVE_CUDA
#include "tw_bandwidth.h"
#include "tw_cuda.h"
#endif
/* Set by bench/CMakeLists.txt in a CUDA build (kernels/harness/, tw_thrust.h, cuda_world.h). */
#ifdef TW_BENCH_CUSOLVER
#include "tw_cusolver.h"
#endif
#ifdef TW_BENCH_THRUST
#include "tw_thrust.h"
#endif

static const char PROG[] = "tw_bench_backends"; /* in bench_common's messages */

/* ------------------------------------------------------------ the scenes */

typedef struct bench_size {
    const char *name;
    int target;     /* tets asked of the mesher */
    int nx, ny, nz; /* the bar's cells: 1 x ny/nx x nz/nx m */
} bench_size;

static const bench_size SIZES[] = {
    {"10k", 10000, 40, 6, 7},        /* bar: 10 080 tets */
    {"100k", 100000, 90, 14, 13},    /* 98 280 */
    {"1m", 1000000, 195, 29, 29},    /* 983 970 */
    {"5m", 5000000, 333, 50, 50},    /* 4 995 000 */
};
enum { SIZE_COUNT = sizeof SIZES / sizeof SIZES[0] };

typedef struct bench_scene {
    const char *name;
    const char *surface; /* NULL: the bar */
    int up;              /* axis: pinned below 5 % of the height, gravity along -up */
    double scale;        /* surface units to m */
} bench_scene;

static const bench_scene SCENES[] = {
    {"bar", NULL, 2, 1.0},
    {"bunny", "bunny_closed_3485v.off", 1, 6.0}, /* 0.155 m scanned: scaled to about 1 m, like the bar and the dog */
    {"dog", "dog_tosca_dog0_eyescapped.off", 2, 0.01},
};
enum { SCENE_COUNT = sizeof SCENES / sizeof SCENES[0] };

/* Backends of a row: the CPU, the CUDA step as a CUDA Graph (the library's
 * default) and the host-driven CUDA step (tw_world_set_cuda_graph);
 * cuda-ownspmv: the graph step with the hand-written 3x3-BSR SpMV instead of
 * cuSPARSE's (TW_CUDA_SPMV=own while its world is created; the other CUDA
 * rows set TW_CUDA_SPMV=cusparse unless the environment sets it);
 * cuda-warpspmv: the same with the warp-cooperative SpMV (TW_CUDA_SPMV=warp);
 * cuda-fused: the graph step with the fused PCG (TW_CUDA_PCG=fused, whose
 * loop has its own product; TW_CUDA_SPMV=warp for the initial residual);
 * cuda-allfused: cuda-fused with TW_CUDA_ELEMENT=fused as well;
 * cuda-mg: the graph step with the multigrid-preconditioned PCG
 * (cuda-mg-warp: with TW_CUDA_MG_SWEEP=warp, the finest sweeps by lanes)
 * (--precond mg, kernels/cuda_amg.cu; the other CUDA rows run block-Jacobi,
 * the cpu rows the default, multigrid from TW_PRECOND_MG_MIN_TETS tets on).
 * The bytes model of the GB/s columns is block-Jacobi's PCG: for cuda-mg
 * rows it leaves the V-cycle's passes out (a lower bound). */
enum {
    BK_CPU = 0,
    BK_CUDA = 1,
    BK_CUDA_NOGRAPH = 2,
    BK_CUDA_OWNSPMV = 3,
    BK_CUDA_WARPSPMV = 4, /* TW_CUDA_SPMV=warp: lanes of a warp per block row */
    BK_CUDA_FUSED = 5,    /* TW_CUDA_PCG=fused (two kernels per CG iteration), the graph step */
    BK_CUDA_ALLFUSED = 6, /* cuda-fused and TW_CUDA_ELEMENT=fused (rotation + element force in one kernel) */
    BK_CUDA_MG = 7,       /* the graph step, PCG preconditioned by the device's multigrid V-cycle */
    BK_CUDA_MG_WARP = 8,  /* cuda-mg with the finest sweeps by lanes (TW_CUDA_MG_SWEEP=warp) */
    BACKEND_MAX = 9
};
static const char *BK_NAMES[] = {"cpu",           "cuda",       "cuda-nograph",  "cuda-ownspmv", "cuda-warpspmv",
                                 "cuda-fused",    "cuda-allfused", "cuda-mg",   "cuda-mg-warp"};

typedef struct options {
    int scenes[SCENE_COUNT], scene_count;
    int sizes[SIZE_COUNT], size_count;
    int methods[TW_METHOD_COUNT], method_count;
    int cg_modes[BENCH_CG_COUNT], cg_count;
    int backends[BACKEND_MAX], backend_count;
    double target_s, max_s, budget_s, config_timeout_s, youngs;
    int min_steps, warmup, copy_mb, extras, append;
    const char *csv, *mesh_dir, *surfaces;
} options;

typedef struct config {
    int scene, size, backend, cg, method;
} config;

/* One configuration's result: a plain struct, sent from the child through a pipe. */
typedef struct result {
    int index; /* into the group's configuration list */
    int ok, skipped, device_error, capped, graph; /* graph: 1 the step ran as a CUDA Graph, 0 not, -1 cpu / unknown */
    int tets, vertices, nnzb, threads, warmup, steps;
    double ms_wall, ms_rot, ms_asm, ms_solve, ms_other, ms_total; /* per step */
    double cg_iterations, residual;
    double host_bytes, gpu_bytes, gpu_delta_bytes; /* the world's memory */
    double mesh_s, world_s;
    char error[1024];
} result;

/* What the probe child measured. */
typedef struct probe {
    int cuda_built, cuda_usable;
    char why[256];
    char device[128];
    double device_mem_gb, copy_gbps, cpu_copy_gbps;
    int polar_count;
    double polar_gpu_ms, polar_cpu_ms;  /* -1: not measured */
    double svd_wall_ms, svd_device_ms;  /* cuSOLVER gesvdjBatched, -1: not measured */
    int pattern_tets;
    double pattern_ms;                  /* Thrust GPU pattern build, -1: not measured */
    char note[300];
} probe;

static double deadline; /* monotonic seconds; 0 = none (shared by fork) */

static int past_deadline(void) { return deadline > 0 && bench_now_s() > deadline; }

/* ---------------------------------------------------------- environment */

/* The variables that choose a CUDA world's kernels when it is created. */
static const char *ENV_VARS[] = {"TW_CUDA_SPMV", "TW_CUDA_PCG", "TW_CUDA_ELEMENT", "TW_CUDA_MG_SWEEP"};
enum { ENV_COUNT = sizeof ENV_VARS / sizeof ENV_VARS[0] };

/* ENV_VARS[k] = value for the next world; value NULL: the value the
 * environment had at the first call, else fallback (NULL: unset). */
static void backend_env(int k, const char *value, const char *fallback)
{
    static int saved[ENV_COUNT], had[ENV_COUNT];
    static char env[ENV_COUNT][64];
    if (!saved[k]) {
        const char *e = getenv(ENV_VARS[k]);
        had[k] = e != NULL;
        snprintf(env[k], sizeof env[k], "%s", e ? e : "");
        saved[k] = 1;
    }
    if (!value) value = had[k] ? env[k] : fallback;
    if (value) setenv(ENV_VARS[k], value, 1);
    else unsetenv(ENV_VARS[k]);
}

/* ---------------------------------------------------------- byte model */

/* See the header comment: bytes one PCG iteration of kernels/cuda_pcg.cu
 * moves, or with fused kernels/cuda_pcg_fused.cu's. */
static double bytes_per_cg_iteration(double n, double nnzb, int fused)
{
    double r = sizeof(tw_real), nb = ceil(n / 256), nb1 = ceil(n / 16);
    if (nb > 1024) nb = 1024;
    if (nb < 1) nb = 1;
    if (nb1 > 1024) nb1 = 1024;
    if (nb1 < 1) nb1 = 1;
    if (fused) return 9 * nnzb * r + 4 * nnzb + 4 * (n + 1) + 2 * n + 42 * n * r + 16 * nb1 + 32 * nb;
    return 9 * nnzb * r + 4 * nnzb + 4 * (n + 1) + 2 * n + 51 * n * r + 48 * nb;
}

/* Bytes a solve moves once, before its iterations (prescribe, Jacobi, initial residual). */
static double bytes_solve_setup(double n, double nnzb)
{
    double r = sizeof(tw_real), nb = ceil(n / 256);
    if (nb > 1024) nb = 1024;
    if (nb < 1) nb = 1;
    return 9 * nnzb * r + 4 * nnzb + 4 * (n + 1) + 6 * n + 54 * n * r + 48 * nb;
}

/* ------------------------------------------------------------ the probe */

/* Host copy bandwidth: a parallel memcpy of `bytes`, best of 5, read + write counted. */
static double cpu_copy_gbps(size_t bytes)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    double best = 0;
    if (!a || !b) goto done;
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    for (int k = 0; k < 6; k++) {
        double t0 = bench_now_s();
#pragma omp parallel
        {
#ifdef _OPENMP
            size_t nt = (size_t)omp_get_num_threads(), id = (size_t)omp_get_thread_num();
#else
            size_t nt = 1, id = 0;
#endif
            size_t chunk = (bytes + nt - 1) / nt, lo = id * chunk, hi = lo + chunk > bytes ? bytes : lo + chunk;
            if (lo < hi) memcpy(b + lo, a + lo, hi - lo);
        }
        double t = bench_now_s() - t0, g = 2.0 * (double)bytes / t / 1e9;
        if (k > 0 && g > best) best = g; /* the first pass faults the pages in */
    }
done:
    free(a);
    free(b);
    return best;
}

/* Polar rotations of `count` near-rotation matrices on the CPU (all threads), ms. */
static double cpu_polar_ms(const tw_real *A, tw_real *R, int count)
{
    double t0 = bench_now_s();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < count; i++) tw_m3_store(R + 9 * (size_t)i, tw_polar3(tw_m3_load(A + 9 * (size_t)i)));
    return 1e3 * (bench_now_s() - t0);
}

static void run_probe(const options *o, int want_cuda, probe *p)
{
    memset(p, 0, sizeof *p);
    p->polar_gpu_ms = p->polar_cpu_ms = p->svd_wall_ms = p->svd_device_ms = p->pattern_ms = -1;
    p->cpu_copy_gbps = cpu_copy_gbps((size_t)o->copy_mb << 20);
#ifdef TW_HAVE_CUDA
    p->cuda_built = 1;
    if (!want_cuda) return;
    p->cuda_usable = tw_backend_usable(TW_BACKEND_CUDA, p->why, sizeof p->why);
    if (!p->cuda_usable) return;
    size_t total = 0;
    if (tw_cuda_device_info(p->device, sizeof p->device, &total) != TW_OK) {
        snprintf(p->why, sizeof p->why, "device info: %s", tw_last_error());
        p->cuda_usable = 0;
        return;
    }
    p->device_mem_gb = total / 1e9;
    if (tw_cuda_copy_bandwidth((size_t)o->copy_mb << 20, &p->copy_gbps) != TW_OK)
        snprintf(p->note, sizeof p->note, "copy bandwidth: %s", tw_last_error());
    if (o->extras) {
        /* the batched polar kernel (host arrays: its time includes cudaMalloc and both transfers) */
        int count = 1 << 20;
        tw_real *A = malloc(sizeof(tw_real) * 9 * (size_t)count), *R = malloc(sizeof(tw_real) * 9 * (size_t)count);
        if (A && R) {
            unsigned s = 12345;
            for (size_t k = 0; k < 9 * (size_t)count; k++) {
                s = s * 1664525u + 1013904223u;
                A[k] = (tw_real)((k % 9 % 4 == 0 ? 1.0 : 0.0) + 0.2 * ((s >> 8) / 16777216.0 - 0.5));
            }
            p->polar_count = count;
            p->polar_cpu_ms = cpu_polar_ms(A, R, count);
            if (tw_cuda_polar_batched(A, R, count) == TW_OK) { /* warm-up: module load */
                double t0 = bench_now_s();
                if (tw_cuda_polar_batched(A, R, count) == TW_OK) p->polar_gpu_ms = 1e3 * (bench_now_s() - t0);
            }
            if (p->polar_gpu_ms < 0) snprintf(p->note, sizeof p->note, "polar batched: %s", tw_last_error());
        }
#ifdef TW_BENCH_CUSOLVER
        /* cuSOLVER's batched Jacobi SVD on the same matrices: wall (with its copies) and the call alone */
        tw_real *U = malloc(sizeof(tw_real) * 9 * (size_t)count), *V = malloc(sizeof(tw_real) * 9 * (size_t)count);
        tw_real *S = malloc(sizeof(tw_real) * 3 * (size_t)count);
        if (A && U && V && S && p->polar_count) {
            double ms = -1;
            if (tw_cusolver_svd_batched(A, U, S, V, count, &ms) == TW_OK) { /* warm-up */
                double t0 = bench_now_s();
                if (tw_cusolver_svd_batched(A, U, S, V, count, &ms) == TW_OK) {
                    p->svd_wall_ms = 1e3 * (bench_now_s() - t0);
                    p->svd_device_ms = ms;
                }
            }
            if (p->svd_wall_ms < 0) snprintf(p->note, sizeof p->note, "cuSOLVER gesvdjBatched: %s", tw_last_error());
        }
        free(U);
        free(V);
        free(S);
#endif
        free(A);
        free(R);
#ifdef TW_BENCH_THRUST
        /* the FEM pattern (BSR rows, columns, gather lists) built on the GPU from the 1M-tet bar */
        const bench_size *sz = &SIZES[2];
        tw_mesh *m = tw_mesh_bar(1.0, (double)sz->ny / sz->nx, (double)sz->nz / sz->nx, sz->nx, sz->ny, sz->nz);
        double ms = -1;
        if (m && tw_thrust_pattern_time(tw_mesh_tets(m), tw_mesh_vertex_count(m), tw_mesh_tet_count(m), &ms) == TW_OK) {
            p->pattern_ms = ms;
            p->pattern_tets = tw_mesh_tet_count(m);
        } else {
            snprintf(p->note, sizeof p->note, "Thrust pattern build: %s", m ? tw_last_error() : "no mesh");
        }
        tw_mesh_destroy(m);
#endif
    }
#else
    (void)want_cuda;
    snprintf(p->why, sizeof p->why, "this build has no CUDA (nvcc was not found when it was configured)");
#endif
}

/* The probe's inputs, as bench_run_forked's child reads them. */
typedef struct probe_ask {
    const options *o;
    int want_cuda;
} probe_ask;

static void run_probe_child(const void *ctx, void *out)
{
    const probe_ask *ask = ctx;
    run_probe(ask->o, ask->want_cuda, out);
}

/* Runs the probe in a child: the parent must not initialise CUDA before forking. */
static void probe_forked(const options *o, int want_cuda, probe *p)
{
    probe_ask ask = {o, want_cuda};
    int status = 0;
    char why[200];
    memset(p, 0, sizeof *p);
    int rc = bench_run_forked(run_probe_child, &ask, p, sizeof *p, &status, why, sizeof why);
    if (rc < 0) {
        snprintf(p->why, sizeof p->why, "%s", why);
    } else if (rc > 0) {
        memset(p, 0, sizeof *p);
        snprintf(p->why, sizeof p->why, "the device probe died (%s %d)", WIFSIGNALED(status) ? "signal" : "status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
}

/* ------------------------------------------------------------- meshes */

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A copy of m with positions scaled (the dog: cm to m); m is destroyed. */
static tw_mesh *scaled(tw_mesh *m, double s)
{
    if (!m || s == 1.0) return m;
    int n = tw_mesh_vertex_count(m);
    double *x = malloc(sizeof(double) * 3 * (size_t)n);
    if (!x) { tw_mesh_destroy(m); return NULL; }
    const double *p = tw_mesh_positions(m);
    for (size_t k = 0; k < 3 * (size_t)n; k++) x[k] = s * p[k];
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *out = tw_mesh_create(x, n, tw_mesh_tets(m), tw_mesh_tet_count(m), NULL, &ld, NULL);
    free(x);
    tw_mesh_destroy(m);
    return out;
}

/* The scene's mesh at a size, or NULL with why. */
static tw_mesh *scene_mesh(const options *o, int scene, int size, char *why, size_t why_size)
{
    const bench_scene *sc = &SCENES[scene];
    const bench_size *sz = &SIZES[size];
    if (!sc->surface) {
        tw_mesh *m = tw_mesh_bar(1.0, (double)sz->ny / sz->nx, (double)sz->nz / sz->nx, sz->nx, sz->ny, sz->nz);
        if (!m) snprintf(why, why_size, "bar: %s", tw_last_error());
        return m;
    }
    char path[1200];
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    if (o->mesh_dir) {
        snprintf(path, sizeof path, "%s/%s_%d.node", o->mesh_dir, sc->name, sz->target);
        if (file_exists(path)) {
            tw_mesh *m = scaled(tw_mesh_load(path, &ld, NULL), sc->scale);
            if (!m) snprintf(why, why_size, "%.300s: %.600s", path, tw_last_error());
            return m;
        }
    }
    snprintf(path, sizeof path, "%s/%s", o->surfaces, sc->surface);
    if (!file_exists(path)) {
        snprintf(why, why_size, "no packed mesh %.300s/%s_%d.node and no surface %.300s to mesh", o->mesh_dir ? o->mesh_dir : "(no --mesh-dir)",
                 sc->name, sz->target, path);
        return NULL;
    }
    tw_mesher_def md = tw_default_mesher_def();
    md.target_tets = sz->target;
    md.use_cache = 1;
    tw_mesher_report rep;
    tw_mesh *m = scaled(tw_mesh_from_surface(path, &md, &rep), sc->scale);
    if (!m) snprintf(why, why_size, "meshing %.300s at %d tets: %.600s", path, sz->target, tw_last_error());
    return m;
}

/* ------------------------------------------------------ one configuration */

static tw_world *make_world(const options *o, const tw_mesh *mesh, int scene, int bk, double *gpu_delta, char *why,
                            size_t why_size)
{
    tw_backend backend = bk == BK_CPU ? TW_BACKEND_CPU : TW_BACKEND_CUDA;
    const bench_scene *sc = &SCENES[scene];
    tw_world_def d = tw_default_world_def();
    d.energy_check = 0; /* timings: the per-step energy comparison is a check, not the step */
    d.backend = backend;
    d.youngs_modulus = o->youngs;
    d.dt = 0.01;
    d.threads = bench_cores();
    d.gravity[0] = d.gravity[1] = d.gravity[2] = 0;
    d.gravity[sc->up] = -9.81;
    if (bk == BK_CUDA_MG || bk == BK_CUDA_MG_WARP) d.precond = TW_PRECOND_MG;
    *gpu_delta = 0;
#ifdef TW_HAVE_CUDA
    size_t free0 = 0, free1 = 0;
    if (backend == TW_BACKEND_CUDA) tw_cuda_memory_info(&free0, NULL); /* creates the context first */
#endif
    /* the SpMV is chosen from TW_CUDA_SPMV when the world is created: "own"
     * for cuda-ownspmv, "warp" for cuda-warpspmv and the fused rows, the
     * environment's own value for the other backends, else "cusparse" (the
     * library picks the hand-written one by itself from a size on; the rows
     * compare the two at every size); TW_CUDA_PCG and TW_CUDA_ELEMENT are
     * "fused" for the fused rows, else the environment's */
    const char *spmv = bk == BK_CUDA_OWNSPMV ? "own"
                       : bk == BK_CUDA_WARPSPMV || bk == BK_CUDA_FUSED || bk == BK_CUDA_ALLFUSED ? "warp"
                                                                                                  : NULL;
    const char *pcg = bk == BK_CUDA_FUSED || bk == BK_CUDA_ALLFUSED ? "fused" : NULL;
    const char *element = bk == BK_CUDA_ALLFUSED ? "fused" : NULL;
    backend_env(0, spmv, "cusparse");
    backend_env(1, pcg, NULL);
    backend_env(2, element, NULL);
    /* read at the multigrid's set-up, the world's first step: still set then */
    backend_env(3, bk == BK_CUDA_MG_WARP ? "warp" : NULL, NULL);
    tw_world *w = tw_world_create(mesh, &d);
    if (!w) {
        snprintf(why, why_size, "world (%s): %s", BK_NAMES[bk], tw_last_error());
        return NULL;
    }
#ifdef TW_HAVE_CUDA
    if (backend == TW_BACKEND_CUDA && tw_cuda_memory_info(&free1, NULL) == TW_OK) *gpu_delta = (double)free0 - (double)free1;
#endif
    if (backend == TW_BACKEND_CUDA) tw_world_set_cuda_graph(w, bk != BK_CUDA_NOGRAPH);
    if (!sc->surface) {
        tw_world_pin_where(w, 0, 1, 1e-6);
    } else {
        tw_mesh_stats st = tw_mesh_compute_stats(mesh);
        double lo = st.bbox_min[sc->up], hi = st.bbox_max[sc->up];
        tw_world_pin_where(w, sc->up, 1, lo + 0.05 * (hi - lo));
    }
    return w;
}

static void run_one(const options *o, tw_world *w, const config *c, result *r)
{
    tw_world_reset(w);
    if (tw_world_set_method(w, (tw_method)c->method) != TW_OK) {
        snprintf(r->error, sizeof r->error, "method: %s", tw_last_error());
        return;
    }
    const tw_world_def *wd = tw_world_get_def(w);
    tw_status cs = c->cg == BENCH_CG_FIXED20 ? tw_world_set_solver(w, wd->cg_tolerance, wd->cg_max_iterations, 20)
                                             : tw_world_set_solver(w, 1e-4, 500, 0);
    if (cs != TW_OK) {
        snprintf(r->error, sizeof r->error, "solver: %s", tw_last_error());
        return;
    }
    tw_step_stats st;
    double t0 = bench_now_s();
    for (int k = 0; k < o->warmup; k++) {
        tw_status s = tw_world_step(w, &st);
        if (s != TW_OK) {
            r->device_error = s == TW_ERR_DEVICE;
            snprintf(r->error, sizeof r->error, "warm-up step %d: %s", k + 1, tw_last_error());
            return;
        }
        r->warmup = k + 1;
        if (bench_now_s() - t0 > 0.25 * o->max_s) break; /* a slow configuration: one warm-up step is enough */
    }
    double start = bench_now_s();
    for (;;) {
        tw_status s = tw_world_step(w, &st);
        if (s != TW_OK) {
            r->device_error = s == TW_ERR_DEVICE;
            snprintf(r->error, sizeof r->error, "step %d: %s", r->steps + 1, tw_last_error());
            return;
        }
        r->steps++;
        r->ms_rot += st.ms_rotations;
        r->ms_asm += st.ms_assembly;
        r->ms_solve += st.ms_solve;
        r->ms_other += st.ms_other;
        r->ms_total += st.ms_total;
        r->cg_iterations += st.cg_iterations;
        r->residual = st.residual;
        double el = bench_now_s() - start;
        if (el >= o->target_s && r->steps >= o->min_steps) break;
        if (el >= o->max_s) {
            r->capped = r->steps < o->min_steps;
            break;
        }
        if (r->steps >= 100000) break;
    }
#ifdef TW_HAVE_CUDA
    if (tw_world_get_def(w)->backend == TW_BACKEND_CUDA && tw_cuda_synchronize() != TW_OK) { /* the steps are synchronous today; this keeps wall time honest */
        r->device_error = 1;
        snprintf(r->error, sizeof r->error, "after the steps: %s", tw_last_error());
        return;
    }
#endif
    double wall = bench_now_s() - start;
    double k = r->steps;
    r->ms_wall = 1e3 * wall / k;
    r->ms_rot /= k;
    r->ms_asm /= k;
    r->ms_solve /= k;
    r->ms_other /= k;
    r->ms_total /= k;
    r->cg_iterations /= k;
    r->ok = 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "tw_bench_backends: --config-timeout reached, ending this child\n";
    ssize_t k = write(2, msg, sizeof msg - 1);
    (void)k;
    _exit(3);
}

/* The child's work: configurations [first, count) of one (scene, size) group,
 * one result each written to fd. Ends after a device error. */
static void run_group_child(const options *o, const config *cs, int first, int count, int fd)
{
    signal(SIGALRM, on_alarm);
    result r;
    alarm((unsigned)o->config_timeout_s);
    char why[1024] = "";
    double t0 = bench_now_s();
    tw_mesh *mesh = scene_mesh(o, cs[first].scene, cs[first].size, why, sizeof why);
    double mesh_s = bench_now_s() - t0;
    tw_world *w = NULL;
    int backend = -1;
    double world_s = 0, gpu_delta = 0;
    char world_why[1024] = "";
    for (int i = first; i < count; i++) {
        memset(&r, 0, sizeof r);
        r.index = i;
        r.mesh_s = mesh_s;
        r.graph = -1;
        const config *c = &cs[i];
        if (!mesh) {
            r.skipped = 1;
            int shown = snprintf(r.error, sizeof r.error, "skipped: %s", why);
            (void)shown; /* a longer reason is reported cut */
        } else if (past_deadline()) {
            r.skipped = 1;
            snprintf(r.error, sizeof r.error, "skipped: the total --budget was spent");
        } else {
            alarm((unsigned)o->config_timeout_s);
            if (c->backend != backend) {
                tw_world_destroy(w);
                double tw = bench_now_s();
                w = make_world(o, mesh, c->scene, c->backend, &gpu_delta, world_why, sizeof world_why);
                world_s = bench_now_s() - tw;
                backend = c->backend;
            }
            if (!w) snprintf(r.error, sizeof r.error, "%s", world_why); /* every configuration of this backend */
            if (w) {
                r.tets = tw_world_tet_count(w);
                r.vertices = tw_world_vertex_count(w);
                r.nnzb = tw_world_matrix_blocks(w);
                r.threads = tw_world_get_def(w)->threads;
                r.host_bytes = (double)tw_world_memory_bytes(w);
                r.gpu_bytes = (double)tw_world_device_bytes(w);
                r.gpu_delta_bytes = gpu_delta;
                r.world_s = world_s;
                run_one(o, w, c, &r);
                r.graph = tw_world_cuda_graph(w);
            }
            alarm(0);
        }
        if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) break;
        if (r.device_error) break; /* a CUDA error may leave the context unusable */
    }
    tw_world_destroy(w);
    tw_mesh_destroy(mesh);
}

/* ------------------------------------------------------------ reporting */

typedef struct derived {
    double steps_per_s, tet_steps_per_s, bytes_iter, bytes_solve, solve_gbps, copy_gbps, pct_copy;
    double host_bpt, gpu_bpt, gpu_delta_bpt;
} derived;

static derived derive(const result *r, int backend, const probe *p)
{
    derived x;
    memset(&x, 0, sizeof x);
    if (!r->ok) return x;
    x.steps_per_s = r->ms_wall > 0 ? 1e3 / r->ms_wall : 0;
    x.tet_steps_per_s = x.steps_per_s * r->tets;
    int fused = backend == BK_CUDA_FUSED || backend == BK_CUDA_ALLFUSED;
    x.bytes_iter = bytes_per_cg_iteration(r->vertices, r->nnzb, fused);
    x.bytes_solve = bytes_solve_setup(r->vertices, r->nnzb) + r->cg_iterations * x.bytes_iter;
    x.solve_gbps = r->ms_solve > 0 ? x.bytes_solve / (1e-3 * r->ms_solve) / 1e9 : 0;
    x.copy_gbps = backend != BK_CPU ? p->copy_gbps : p->cpu_copy_gbps;
    x.pct_copy = x.copy_gbps > 0 ? 100 * x.solve_gbps / x.copy_gbps : 0;
    x.host_bpt = r->tets ? r->host_bytes / r->tets : 0;
    x.gpu_bpt = r->tets ? r->gpu_bytes / r->tets : 0;
    x.gpu_delta_bpt = r->tets ? r->gpu_delta_bytes / r->tets : 0;
    return x;
}

static const char *CSV_HEADER =
    "scene,size,tets,vertices,nnzb,method,backend,graph,threads,cg_mode,warmup,steps,capped,ms_step,ms_rotations,"
    "ms_assembly,ms_solve,ms_other,ms_total,cg_iterations,last_residual,steps_per_s,tet_steps_per_s,"
    "bytes_per_cg_iter,bytes_solve_step,solve_gbps,copy_gbps,pct_copy,host_bytes_per_tet,gpu_bytes_per_tet,"
    "gpu_mem_delta_per_tet,mesh_s,world_s,ok,error\n";

static void print_header(void)
{
    printf("%-5s %-4s %8s %-13s %-12s %-7s %5s %9s %8s %8s %9s %7s %7s %9s %9s %8s %7s %6s %7s\n", "scene", "size", "tets",
           "method", "bk", "cg", "steps", "ms/step", "rot", "asm", "solve", "other", "it/step", "steps/s",
           "Mtet-st/s", "solveGB/s", "%copy", "B/tet", "GPUB/t");
}

static void print_row(const config *c, const result *r, const probe *p)
{
    const char *sc = SCENES[c->scene].name, *sz = SIZES[c->size].name, *m = tw_method_name((tw_method)c->method);
    const char *bk = BK_NAMES[c->backend];
    if (!r->ok) {
        printf("%-5s %-4s %8d %-13s %-12s %-7s %s\n", sc, sz, r->tets, m, bk, BENCH_CG_NAMES[c->cg],
               r->skipped ? r->error : "FAILED");
        if (!r->skipped) printf("      %s\n", r->error);
        fflush(stdout);
        return;
    }
    derived x = derive(r, c->backend, p);
    printf("%-5s %-4s %8d %-13s %-12s %-7s %5d%s %8.3f %8.3f %8.3f %9.3f %7.3f %7.1f %9.2f %9.3f %9.1f %7.1f %6.0f %7.0f\n",
           sc, sz, r->tets, m, bk, BENCH_CG_NAMES[c->cg], r->steps, r->capped ? "*" : " ", r->ms_wall, r->ms_rot, r->ms_asm,
           r->ms_solve, r->ms_other, r->cg_iterations, x.steps_per_s, 1e-6 * x.tet_steps_per_s, x.solve_gbps,
           x.pct_copy, x.host_bpt, x.gpu_bpt);
    fflush(stdout);
}

static void csv_row(FILE *f, const config *c, const result *r, const probe *p)
{
    derived x = derive(r, c->backend, p);
    char err[1024];
    snprintf(err, sizeof err, "%s", r->error);
    for (char *e = err; *e; e++)
        if (*e == '"' || *e == '\n') *e = '\'';
    fprintf(f,
            "%s,%s,%d,%d,%d,%s,%s,%d,%d,%s,%d,%d,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.3g,%.3f,%.4g,%.0f,%.0f,%.2f,%.1f,%.1f,%.1f,"
            "%.1f,%.1f,%.2f,%.2f,%d,\"%s\"\n",
            SCENES[c->scene].name, SIZES[c->size].name, r->tets, r->vertices, r->nnzb, tw_method_name((tw_method)c->method),
            BK_NAMES[c->backend], r->graph, r->threads, BENCH_CG_NAMES[c->cg], r->warmup, r->steps, r->capped,
            r->ms_wall, r->ms_rot, r->ms_asm, r->ms_solve, r->ms_other, r->ms_total, r->cg_iterations, r->residual,
            x.steps_per_s, x.tet_steps_per_s, x.bytes_iter, x.bytes_solve, x.solve_gbps, x.copy_gbps, x.pct_copy,
            x.host_bpt, x.gpu_bpt, x.gpu_delta_bpt, r->mesh_s, r->world_s, r->ok, err);
    fflush(f);
}

/* Runs one (scene, size) group: children until every configuration has a row. */
static int run_group(const options *o, const config *cs, int count, const probe *p, FILE *csv)
{
    int failures = 0, next = 0;
    while (next < count) {
        int fd[2];
        if (pipe(fd) != 0) {
            fprintf(stderr, "tw_bench_backends: pipe: %s\n", strerror(errno));
            return failures + count - next;
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "tw_bench_backends: fork: %s\n", strerror(errno));
            close(fd[0]);
            close(fd[1]);
            return failures + count - next;
        }
        if (pid == 0) {
            close(fd[0]);
            run_group_child(o, cs, next, count, fd[1]);
            close(fd[1]);
            _exit(0);
        }
        close(fd[1]);
        double t0 = bench_now_s();
        for (;;) {
            result r;
            if (bench_read_full(fd[0], &r, sizeof r) != sizeof r) break;
            const config *c = &cs[r.index];
            if (!r.ok && !r.skipped) failures++;
            fprintf(stderr, "  %s %s %s %s %s: %s (%.1f s)%s\n", SCENES[c->scene].name, SIZES[c->size].name,
                    BK_NAMES[c->backend], BENCH_CG_NAMES[c->cg], tw_method_name((tw_method)c->method),
                    r.ok ? "ok" : r.error, bench_now_s() - t0, r.capped ? " — capped by --max-seconds" : "");
            if (r.capped)
                fprintf(stderr, "    capped: %d timed step%s in --max-seconds %g (asked --min-steps %d)\n", r.steps,
                        r.steps == 1 ? "" : "s", o->max_s, o->min_steps);
            print_row(c, &r, p);
            if (csv) csv_row(csv, c, &r, p);
            next = r.index + 1;
            t0 = bench_now_s();
        }
        close(fd[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        if (next < count && (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0))) {
            /* the child died inside configuration `next` */
            result r;
            memset(&r, 0, sizeof r);
            r.index = next;
            if (WIFSIGNALED(status))
                snprintf(r.error, sizeof r.error, "the child died with signal %d (%s)", WTERMSIG(status),
                         WTERMSIG(status) == SIGKILL ? "out of memory?" : "a crash");
            else if (WEXITSTATUS(status) == 3)
                snprintf(r.error, sizeof r.error, "killed after --config-timeout %g s", o->config_timeout_s);
            else
                snprintf(r.error, sizeof r.error, "the child exited with status %d", WEXITSTATUS(status));
            const config *c = &cs[next];
            fprintf(stderr, "  %s %s %s %s %s: %s\n", SCENES[c->scene].name, SIZES[c->size].name,
                    BK_NAMES[c->backend], BENCH_CG_NAMES[c->cg], tw_method_name((tw_method)c->method),
                    r.error);
            print_row(c, &r, p);
            if (csv) csv_row(csv, c, &r, p);
            failures++;
            next++;
        }
    }
    return failures;
}

/* ------------------------------------------------------------- options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tw_bench_backends [--backends cuda,cpu] [--scenes bar,bunny,dog] [--sizes 10k,100k,1m,5m]\n"
            "         [--methods linear,warp-vertex,...] [--cg fixed20,tol] [--time S] [--min-steps N] [--max-seconds S]\n"
            "         [--warmup N] [--budget S] [--config-timeout S] [--mesh-dir DIR] [--surfaces DIR] [--copy-mb N]\n"
            "         [--youngs PA] [--no-extras] [--csv PATH [--append]]\n"
            "  backends: cpu, cuda (CUDA Graph step, cuSPARSE SpMV), cuda-nograph (host-driven step),\n"
            "  cuda-ownspmv (graph step, the hand-written 3x3-BSR SpMV: TW_CUDA_SPMV=own for its worlds),\n"
            "  cuda-warpspmv (the same, lanes of a warp per block row: TW_CUDA_SPMV=warp), cuda-fused (graph step,\n"
            "  the fused PCG: TW_CUDA_PCG=fused TW_CUDA_SPMV=warp), cuda-allfused (cuda-fused and\n"
            "  TW_CUDA_ELEMENT=fused: the element methods' rotation and force in one kernel), cuda-mg (graph\n"
            "  step, the PCG preconditioned by the device's multigrid V-cycle: --precond mg), cuda-mg-warp\n"
            "  (cuda-mg, its finest sweeps by lanes: TW_CUDA_MG_SWEEP=warp).\n"
            "  defaults: cuda,cpu (in that order); bar; 10k,100k; all methods; fixed20,tol; --time 1 --min-steps 5 --max-seconds 10\n"
            "  --warmup 3; --budget 0 (none); --config-timeout 300; --surfaces data/meshes; --copy-mb 512.\n"
            "  --mesh-dir: packed meshes DIR/<scene>_<tets>.node/.ele (bench/run_gpu.sh --pack-meshes), tried before\n"
            "  meshing the surface with TetGen (cached). --append: add rows to an existing CSV.\n");
}

static int parse_size(const char *s)
{
    for (int i = 0; i < SIZE_COUNT; i++)
        if (strcasecmp(s, SIZES[i].name) == 0) return i;
    return -1;
}
static int parse_scene(const char *s)
{
    for (int i = 0; i < SCENE_COUNT; i++)
        if (strcmp(s, SCENES[i].name) == 0) return i;
    return -1;
}
static int parse_backend(const char *s)
{
    for (int b = 0; b < BACKEND_MAX; b++)
        if (strcmp(s, BK_NAMES[b]) == 0) {
            return b;
        }
    return -1;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    o.scenes[0] = 0, o.scene_count = 1;
    o.sizes[0] = 0, o.sizes[1] = 1, o.size_count = 2;
    for (int m = 0; m < TW_METHOD_COUNT; m++) o.methods[m] = m;
    o.method_count = TW_METHOD_COUNT;
    o.cg_modes[0] = BENCH_CG_FIXED20, o.cg_modes[1] = BENCH_CG_TOL, o.cg_count = 2;
    o.backends[0] = BK_CUDA, o.backends[1] = BK_CPU, o.backend_count = 2;
    o.target_s = 1.0;
    o.max_s = 10;
    o.min_steps = 5;
    o.warmup = 3;
    o.config_timeout_s = 300;
    o.youngs = 1e6;
    o.copy_mb = 512;
    o.extras = 1;
    o.surfaces = "data/meshes";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int n = -1;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); return 0; }
        if (strcmp(a, "--no-extras") == 0) { o.extras = 0; continue; }
        if (strcmp(a, "--append") == 0) { o.append = 1; continue; }
        if (!v) { usage(stderr); return 2; }
        i++;
        if (strcmp(a, "--backends") == 0) n = o.backend_count = bench_parse_list(PROG, v, o.backends, BACKEND_MAX, parse_backend);
        else if (strcmp(a, "--scenes") == 0) n = o.scene_count = bench_parse_list(PROG, v, o.scenes, SCENE_COUNT, parse_scene);
        else if (strcmp(a, "--sizes") == 0) n = o.size_count = bench_parse_list(PROG, v, o.sizes, SIZE_COUNT, parse_size);
        else if (strcmp(a, "--methods") == 0) n = o.method_count = bench_parse_list(PROG, v, o.methods, TW_METHOD_COUNT, tw_method_parse);
        else if (strcmp(a, "--cg") == 0) n = o.cg_count = bench_parse_list(PROG, v, o.cg_modes, BENCH_CG_COUNT, bench_parse_cg);
        else if (strcmp(a, "--time") == 0) n = (o.target_s = atof(v)) > 0;
        else if (strcmp(a, "--max-seconds") == 0) n = (o.max_s = atof(v)) > 0;
        else if (strcmp(a, "--min-steps") == 0) n = (o.min_steps = atoi(v)) > 0;
        else if (strcmp(a, "--warmup") == 0) n = (o.warmup = atoi(v)) >= 0;
        else if (strcmp(a, "--budget") == 0) n = (o.budget_s = atof(v)) >= 0;
        else if (strcmp(a, "--config-timeout") == 0) n = (o.config_timeout_s = atof(v)) >= 1;
        else if (strcmp(a, "--copy-mb") == 0) n = (o.copy_mb = atoi(v)) > 0;
        else if (strcmp(a, "--youngs") == 0) n = (o.youngs = atof(v)) > 0;
        else if (strcmp(a, "--mesh-dir") == 0) o.mesh_dir = v, n = 1;
        else if (strcmp(a, "--surfaces") == 0) o.surfaces = v, n = 1;
        else if (strcmp(a, "--csv") == 0) o.csv = v, n = 1;
        else { fprintf(stderr, "tw_bench_backends: unknown option '%s'\n", a); usage(stderr); return 2; }
        if (n <= 0) { fprintf(stderr, "tw_bench_backends: bad value '%s' for %s\n", v, a); return 2; }
    }
    double t_start = bench_now_s();
    if (o.budget_s > 0) deadline = t_start + o.budget_s;

    int want_cuda = 0;
    for (int b = 0; b < o.backend_count; b++) want_cuda |= o.backends[b] != BK_CPU;
    probe p;
    probe_forked(&o, want_cuda, &p);
    if (want_cuda && !p.cuda_usable) {
        fprintf(stderr, "tw_bench_backends: CUDA backend unavailable: %s; running the CPU rows only\n", p.why);
        int k = 0;
        for (int b = 0; b < o.backend_count; b++)
            if (o.backends[b] == BK_CPU) o.backends[k++] = o.backends[b];
        o.backend_count = k;
        if (k == 0) {
            fprintf(stderr, "tw_bench_backends: nothing left to run (--backends cuda only)\n");
            return 0;
        }
    }

    char cpu[256], date[64];
    bench_cpu_model(cpu, sizeof cpu);
    time_t tnow = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tnow));
    char notes[2048];
    int len = snprintf(notes, sizeof notes,
                       "# tw_bench_backends %s\n# cpu: %s\n# cores: %d\n# real: %s\n# cpu_copy_gbps: %.1f (parallel memcpy, "
                       "%d MiB, read+write)\n",
                       date, cpu, bench_cores(), tw_real_name(), p.cpu_copy_gbps, o.copy_mb);
    if (p.cuda_usable)
        len += snprintf(notes + len, sizeof notes - len,
                        "# gpu: %s\n# gpu_memory_gb: %.1f\n# gpu_copy_gbps: %.1f (cudaMemcpy device to device, %d MiB, "
                        "best of 20, read+write)\n",
                        p.device, p.device_mem_gb, p.copy_gbps, o.copy_mb);
    else
        len += snprintf(notes + len, sizeof notes - len, "# gpu: none (%s)\n", p.why);
    if (p.note[0]) len += snprintf(notes + len, sizeof notes - len, "# note: %s\n", p.note);
    {
        const char *vars[] = {"OMP_WAIT_POLICY", "OMP_NUM_THREADS", "TW_CUDA_GRAPH", "TW_CUDA_SPMV", "TW_CUDA_PCG",
                              "TW_CUDA_ELEMENT"};
        len += snprintf(notes + len, sizeof notes - len, "# env:");
        for (int k = 0; k < 6; k++) {
            const char *v = getenv(vars[k]);
            len += snprintf(notes + len, sizeof notes - len, " %s=%s", vars[k], v ? v : "(unset)");
        }
        len += snprintf(notes + len, sizeof notes - len, "\n");
    }
    if (p.polar_count > 0) {
        char gpu_ms[32] = "failed";
        if (p.polar_gpu_ms >= 0) snprintf(gpu_ms, sizeof gpu_ms, "%.2f", p.polar_gpu_ms);
        len += snprintf(notes + len, sizeof notes - len,
                        "# extra: polar of %d 3x3 matrices: CPU %.2f ms (%d threads); tw_cuda_polar_batched %s ms wall "
                        "(host arrays: cudaMalloc + H2D + kernel + D2H)\n",
                        p.polar_count, p.polar_cpu_ms, bench_cores(), gpu_ms);
#ifdef TW_BENCH_CUSOLVER
        if (p.svd_wall_ms >= 0)
            len += snprintf(notes + len, sizeof notes - len,
                            "# extra: cuSOLVER gesvdjBatched (tw_cusolver_svd_batched) of the same matrices: %.2f ms "
                            "wall (with its copies), %.2f ms the call alone\n",
                            p.svd_wall_ms, p.svd_device_ms);
#else
        len += snprintf(notes + len, sizeof notes - len,
                        "# extra: TODO cuSOLVER gesvdjBatched: tw_cusolver_svd_batched not in this build\n");
#endif
    }
#ifdef TW_BENCH_THRUST
    if (p.pattern_ms >= 0)
        len += snprintf(notes + len, sizeof notes - len,
                        "# extra: Thrust GPU pattern build (tw_thrust_pattern_time), bar of %d tets: %.2f ms\n",
                        p.pattern_tets, p.pattern_ms);
#else
    if (p.cuda_usable && o.extras)
        len += snprintf(notes + len, sizeof notes - len,
                        "# extra: TODO Thrust pattern build: tw_thrust_pattern_time not in this build\n");
#endif
    len += snprintf(notes + len, sizeof notes - len,
                    "# scene: E %g Pa, nu 0.3, rho 1000, dt 0.01, damping_stiffness 0.01, warm start; bar pinned at "
                    "x<1e-6, gravity -z; bunny/dog pinned below 5%% of their height\n"
                    "# bytes_per_cg_iter: model of kernels/cuda_pcg.cu at f8fcf39 (bench_backends.c header); "
                    "solve_gbps = bytes_solve_step / ms_solve\n# command:",
                    o.youngs);
    for (int i = 0; i < argc && len < (int)sizeof notes - 2; i++) len += snprintf(notes + len, sizeof notes - len, " %s", argv[i]);
    fputs(notes, stderr);
    fputc('\n', stderr);

    FILE *csv = NULL;
    if (o.csv) {
        struct stat st;
        int fresh = !o.append || stat(o.csv, &st) != 0 || st.st_size == 0;
        csv = fopen(o.csv, fresh ? "w" : "a");
        if (!csv) { fprintf(stderr, "tw_bench_backends: cannot write '%s': %s\n", o.csv, strerror(errno)); return 1; }
        fprintf(csv, "%s\n", notes);
        if (fresh) fputs(CSV_HEADER, csv);
        fflush(csv);
    }
    print_header();
    int failures = 0, skipped = 0;
    config cs[BACKEND_MAX * 2 * TW_METHOD_COUNT];
    for (int sc = 0; sc < o.scene_count; sc++)
        for (int si = 0; si < o.size_count; si++) {
            int count = 0;
            for (int b = 0; b < o.backend_count; b++)
                for (int ci = 0; ci < o.cg_count; ci++)
                    for (int mi = 0; mi < o.method_count; mi++) {
                        config c = {o.scenes[sc], o.sizes[si], o.backends[b], o.cg_modes[ci], o.methods[mi]};
                        cs[count++] = c;
                    }
            if (past_deadline()) {
                for (int k = 0; k < count; k++) {
                    result r;
                    memset(&r, 0, sizeof r);
                    r.skipped = 1;
                    snprintf(r.error, sizeof r.error, "skipped: the total --budget was spent");
                    print_row(&cs[k], &r, &p);
                    if (csv) csv_row(csv, &cs[k], &r, &p);
                }
                skipped += count;
                continue;
            }
            fprintf(stderr, "%s %s (%.0f s into the run)\n", SCENES[o.scenes[sc]].name, SIZES[o.sizes[si]].name,
                    bench_now_s() - t_start);
            failures += run_group(&o, cs, count, &p, csv);
        }
    if (csv) fclose(csv);
    fprintf(stderr, "tw_bench_backends: done in %.0f s, %d failed configuration%s%s\n", bench_now_s() - t_start, failures,
            failures == 1 ? "" : "s", skipped ? " (some skipped by --budget)" : "");
    return failures ? 1 : 0;
}
