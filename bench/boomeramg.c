/* The engine's preconditioners against a library AMG on the same systems:
 * hypre's BoomerAMG (Debian's libhypre-dev) as the PCG preconditioner of
 * the step's matrix, next to the engine's block-Jacobi and smoothed-
 * aggregation multigrid (host/amg.c). A reference in a benchmark, not a
 * dependency of the engine: this program is built only where CMake finds
 * hypre and MPI.
 *
 * For each scene the world runs --steps steps (corot-element, implicit
 * Euler, dt 0.01, E 1e6: the world def's defaults; block-Jacobi, so that no
 * hierarchy exists before the comparison); then the last step's system
 * A v = b (A = M + h^2 K', b its right-hand side) is solved from v = 0 to the
 * relative residual --tol (1e-4, the engine's default) by each solver:
 *   jacobi       the engine's PCG, block-Jacobi
 *   mg           the engine's PCG, its V-cycle (hierarchy built: ms_setup)
 *   mg-jacobi1   the same with tw_amg_def's other smoother, one damped
 *                block-Jacobi sweep before and after the coarse correction
 *   boomeramg    hypre PCG + BoomerAMG, systems AMG for 3D elasticity (3
 *                functions per node, nodal coarsening, HMIS, ext+i
 *                interpolation, l1 symmetric Gauss-Seidel)
 *   boomeramg-rbm  the same with the six rigid-body modes added to the
 *                interpolation (GM variant 2)
 * Pinned vertices are eliminated from hypre's matrix (identity rows and
 * columns, zero right-hand side), which is what the engine's filter does.
 * Both PCGs stop on the same test: the recursively updated residual r_k in
 * the 2-norm against the right-hand side's, |r_k| <= tol |S b| (the engine's
 * tw_pcg from v = 0; hypre's PCG with HYPRE_PCGSetTwoNorm, whose default
 * test is <r_k, r_k> < tol^2 <b, b>, b zero on the pinned rows, with no
 * absolute tolerance, no true-residual recheck and no relative-change test),
 * counted the same way (the iterations done when it holds).
 * Every solver's final relative residual |S(b - A v)| / |S b| is recomputed
 * here in double from A and v (the rel_residual column): in the float build
 * the engine's recursive residual is float and drifts from b - A v by about
 * float rounding times |A| |v|, so its true residual ends above tol while
 * hypre's (double) ends below; the double build compares them at the same
 * precision.
 * hypre is Debian's build (no OpenMP, double): its rows are one thread; the
 * engine's rows are given for one thread and for all threads.
 *
 *   tw_bench_boomeramg [--steps N] [--tol T] SCENE...
 * SCENE: bar:NX,NY,NZ (1 x NY/NX x NZ/NX m, x = 0 pinned) or a mesh file (free). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "HYPRE.h"
#include "HYPRE_parcsr_ls.h"
#include "amg.h"
#include "bench_mg.h"
#include "tetwarp.h"
#include "world.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

typedef struct row {
    const char *solver;
    int threads, iterations;
    double residual, ms_setup, ms_solve;
} row;

static void print_row(const char *scene, int nv, int nt, const row *r)
{
    printf("\"%s\",%d,%d,%s,%d,%d,%.2e,%.1f,%.1f,%.1f\n", scene, nv, nt, r->solver, r->threads, r->iterations,
           r->residual, r->ms_setup, r->ms_solve, r->ms_setup + r->ms_solve);
    fflush(stdout);
}

/* The engine's PCG on A v = b, block-Jacobi (amg 0) or its V-cycle (1: the
 * default def, 2: block-Jacobi smoothing). */
static row run_engine(tw_bsr A, const tw_real *b, const tw_filter *filter, const unsigned char *fixed,
                      const tw_real *X, int threads, int amg, double tol)
{
    row r = {amg == 2 ? "mg-jacobi1" : amg ? "mg" : "jacobi", threads, 0, 0, 0, 0};
    A.threads = threads;
    const int n3 = 3 * A.n;
    tw_real *v = calloc((size_t)n3, sizeof *v);
    double *vd = malloc(sizeof *vd * (size_t)n3);
    tw_solver_work work;
    if (!v || !vd || tw_solver_work_init(&work, A.n) != TW_OK) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    tw_amg *m = NULL;
    if (amg) {
        double t0 = now_ms();
        tw_amg_def def = tw_default_amg_def();
        if (amg == 2) {
            def.smoother = TW_AMG_JACOBI;
            def.smooth_steps = 1;
        }
        m = tw_amg_create(&A, X, filter, &def);
        if (!m || tw_amg_update(m, &A, filter) != TW_OK) {
            fprintf(stderr, "multigrid: %s\n", tw_last_error());
            exit(1);
        }
        r.ms_setup = now_ms() - t0;
        work.precond = tw_amg_apply;
        work.precond_ctx = m;
        work.spmv = tw_amg_spmv; /* as the engine's step does */
        work.spmv_ctx = m;
    }
    double t0 = now_ms();
    tw_solve_result s = tw_pcg(&A, b, v, filter, tol, 10000, 0, &work);
    r.ms_solve = now_ms() - t0;
    r.iterations = s.iterations;
    for (int k = 0; k < n3; k++) vd[k] = v[k];
    r.residual = bench_mg_rel_residual(&A, b, vd, fixed);
    tw_amg_free(m);
    tw_solver_work_free(&work);
    free(v);
    free(vd);
    return r;
}

/* hypre PCG + BoomerAMG on the same system, constrained rows eliminated. */
static row run_hypre(const tw_bsr *A, const tw_real *b, const unsigned char *fixed, const tw_real *X, double tol,
                     int rbm)
{
    row r = {rbm ? "boomeramg-rbm" : "boomeramg", 1, 0, 0, 0, 0};
    const int n3 = 3 * A->n;
    HYPRE_IJMatrix ij;
    HYPRE_IJMatrixCreate(MPI_COMM_WORLD, 0, n3 - 1, 0, n3 - 1, &ij);
    HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
    int *sizes = malloc(sizeof(int) * (size_t)n3);
    for (int i = 0; i < A->n; i++)
        for (int c = 0; c < 3; c++)
            sizes[3 * i + c] = fixed[i] ? 1 : 3 * (A->row_ptr[i + 1] - A->row_ptr[i]);
    HYPRE_IJMatrixSetRowSizes(ij, sizes);
    HYPRE_IJMatrixInitialize(ij);
    int maxrow = 0;
    for (int i = 0; i < n3; i++)
        if (sizes[i] > maxrow) maxrow = sizes[i];
    HYPRE_BigInt *cols = malloc(sizeof *cols * (size_t)maxrow);
    double *vals = malloc(sizeof *vals * (size_t)maxrow);
    for (int i = 0; i < A->n; i++)
        for (int c = 0; c < 3; c++) {
            HYPRE_BigInt rowi = 3 * i + c;
            HYPRE_Int nc = 0;
            if (fixed[i]) {
                cols[0] = rowi;
                vals[0] = 1;
                nc = 1;
            } else
                for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
                    const int j = A->col[k];
                    if (fixed[j]) continue;
                    for (int d = 0; d < 3; d++) {
                        cols[nc] = 3 * j + d;
                        vals[nc++] = A->val[9 * k + 3 * c + d];
                    }
                }
            HYPRE_IJMatrixSetValues(ij, 1, &nc, &rowi, cols, vals);
        }
    HYPRE_IJMatrixAssemble(ij);
    HYPRE_ParCSRMatrix par;
    HYPRE_IJMatrixGetObject(ij, (void **)&par);

    HYPRE_IJVector ib, ix, imodes[6];
    HYPRE_ParVector pb, px, pmodes[6];
    double *bv = malloc(sizeof *bv * (size_t)n3);
    HYPRE_BigInt *idx = malloc(sizeof *idx * (size_t)n3);
    for (int k = 0; k < n3; k++) {
        idx[k] = k;
        bv[k] = fixed[k / 3] ? 0 : b[k];
    }
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, n3 - 1, &ib);
    HYPRE_IJVectorSetObjectType(ib, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(ib);
    HYPRE_IJVectorSetValues(ib, n3, idx, bv);
    HYPRE_IJVectorAssemble(ib);
    HYPRE_IJVectorGetObject(ib, (void **)&pb);
    for (int k = 0; k < n3; k++) bv[k] = 0;
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, n3 - 1, &ix);
    HYPRE_IJVectorSetObjectType(ix, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(ix);
    HYPRE_IJVectorSetValues(ix, n3, idx, bv);
    HYPRE_IJVectorAssemble(ix);
    HYPRE_IJVectorGetObject(ix, (void **)&px);

    HYPRE_Solver amg, pcg;
    HYPRE_BoomerAMGCreate(&amg);
    HYPRE_BoomerAMGSetNumFunctions(amg, 3);
    HYPRE_BoomerAMGSetNodal(amg, 4);           /* nodal coarsening on the row-sum norm of the blocks */
    HYPRE_BoomerAMGSetCoarsenType(amg, 10);    /* HMIS */
    HYPRE_BoomerAMGSetInterpType(amg, 6);      /* extended+i */
    HYPRE_BoomerAMGSetPMaxElmts(amg, 4);
    HYPRE_BoomerAMGSetStrongThreshold(amg, 0.5);
    HYPRE_BoomerAMGSetRelaxType(amg, 8);       /* l1 symmetric Gauss-Seidel */
    HYPRE_BoomerAMGSetMaxIter(amg, 1);
    HYPRE_BoomerAMGSetTol(amg, 0);
    HYPRE_BoomerAMGSetPrintLevel(amg, 0);
    if (rbm) { /* the six rigid-body modes of the rest positions, zero on the pinned vertices */
        double c[3] = {0, 0, 0};
        for (int i = 0; i < A->n; i++)
            for (int d = 0; d < 3; d++) c[d] += X[3 * i + d] / A->n;
        for (int m = 0; m < 6; m++) {
            for (int i = 0; i < A->n; i++) {
                const double p[3] = {(double)X[3 * i] - c[0], (double)X[3 * i + 1] - c[1], (double)X[3 * i + 2] - c[2]};
                double u[3] = {0, 0, 0};
                if (m < 3) u[m] = 1;
                else if (m == 3) { u[1] = -p[2]; u[2] = p[1]; }
                else if (m == 4) { u[0] = p[2]; u[2] = -p[0]; }
                else { u[0] = -p[1]; u[1] = p[0]; }
                for (int d = 0; d < 3; d++) bv[3 * i + d] = fixed[i] ? 0 : u[d];
            }
            HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, n3 - 1, &imodes[m]);
            HYPRE_IJVectorSetObjectType(imodes[m], HYPRE_PARCSR);
            HYPRE_IJVectorInitialize(imodes[m]);
            HYPRE_IJVectorSetValues(imodes[m], n3, idx, bv);
            HYPRE_IJVectorAssemble(imodes[m]);
            HYPRE_IJVectorGetObject(imodes[m], (void **)&pmodes[m]);
        }
        /* the first three (translations) are what nodal coarsening already
         * interpolates; the rotations are added */
        HYPRE_BoomerAMGSetInterpVectors(amg, 3, pmodes + 3);
        HYPRE_BoomerAMGSetInterpVecVariant(amg, 2);
    }
    HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
    HYPRE_PCGSetTol(pcg, tol);
    HYPRE_PCGSetTwoNorm(pcg, 1); /* |r| / |b| in the 2-norm, as the engine */
    HYPRE_PCGSetMaxIter(pcg, 10000);
    HYPRE_ParCSRPCGSetPrecond(pcg, HYPRE_BoomerAMGSolve, HYPRE_BoomerAMGSetup, amg);
    double t0 = now_ms();
    HYPRE_ParCSRPCGSetup(pcg, par, pb, px);
    r.ms_setup = now_ms() - t0;
    t0 = now_ms();
    HYPRE_ParCSRPCGSolve(pcg, par, pb, px);
    r.ms_solve = now_ms() - t0;
    HYPRE_Int its;
    HYPRE_PCGGetNumIterations(pcg, &its);
    r.iterations = its;
    HYPRE_IJVectorGetValues(ix, n3, idx, bv);
    r.residual = bench_mg_rel_residual(A, b, bv, fixed);

    HYPRE_ParCSRPCGDestroy(pcg);
    HYPRE_BoomerAMGDestroy(amg);
    if (rbm)
        for (int m = 0; m < 6; m++) HYPRE_IJVectorDestroy(imodes[m]);
    HYPRE_IJVectorDestroy(ib);
    HYPRE_IJVectorDestroy(ix);
    HYPRE_IJMatrixDestroy(ij);
    free(sizes);
    free(cols);
    free(vals);
    free(bv);
    free(idx);
    return r;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    HYPRE_Init();
    int steps = 3, a = 1;
    double tol = 1e-4;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--steps") && a + 1 < argc) steps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--tol") && a + 1 < argc) tol = atof(argv[++a]);
        else {
            fprintf(stderr, "usage: %s [--steps N] [--tol T] SCENE...\n", argv[0]);
            return 2;
        }
    }
    if (steps < 1) steps = 1;
    printf("scene,vertices,tets,solver,threads,iterations,rel_residual,ms_setup,ms_solve,ms_total\n");
    for (; a < argc; a++) {
        int is_bar;
        tw_mesh *mesh = bench_mg_scene(argv[a], &is_bar);
        if (!mesh) {
            fprintf(stderr, "%s: %s\n", argv[a], tw_last_error());
            return 1;
        }
        tw_world_def def = tw_default_world_def();
        def.precond = TW_PRECOND_JACOBI;
        tw_world *w = tw_world_create(mesh, &def);
        if (!w) {
            fprintf(stderr, "%s: %s\n", argv[a], tw_last_error());
            return 1;
        }
        if (is_bar) tw_world_pin_where(w, 0, 1, 1e-6);
        for (int s = 0; s < steps; s++)
            if (tw_world_step(w, NULL) != TW_OK) {
                fprintf(stderr, "%s: %s\n", argv[a], tw_last_error());
                return 1;
            }
        const tw_bsr A = tw_world_bsr(w);
        const int nv = tw_world_vertex_count(w), nt = tw_world_tet_count(w);
        unsigned char *fixed = calloc((size_t)nv, 1);
        for (int i = 0; i < nv; i++) {
            if (w->fcons[i] == TW_FILTER_NORMAL) {
                fprintf(stderr, "%s: contacts in the system: this comparison takes scenes without colliders\n",
                        argv[a]);
                return 1;
            }
            fixed[i] = w->fcons[i] != 0;
        }
        const tw_filter filter = {w->fcons, w->cnormal};
        const int threads[2] = {1, 0};
        for (int t = 0; t < 2; t++)
            for (int amg = 0; amg < 3; amg++) {
                row r = run_engine(A, w->rhs, &filter, fixed, w->fem.X, threads[t], amg, tol);
                print_row(argv[a], nv, nt, &r);
            }
        for (int rbm = 0; rbm < 2; rbm++) {
            row r = run_hypre(&A, w->rhs, fixed, w->fem.X, tol, rbm);
            print_row(argv[a], nv, nt, &r);
        }
        free(fixed);
        tw_world_destroy(w);
        tw_mesh_destroy(mesh);
    }
    HYPRE_Finalize();
    MPI_Finalize();
    return 0;
}
