/* The device transfer (kernels/cuda_hierarchy.h) against the CPU's
 * tw_transfer_prolong and tw_transfer_restrict (the oracle), on a lattice
 * hierarchy (the shipped bunny in its covering lattice) and on a random
 * transfer with unused entries. The kernels sum the CPU's terms in the CPU's
 * order with explicit rounding, so they are expected to agree to the last
 * bit; the check allows |gpu - cpu| <= tol (max|cpu| + |cpu_i|), tol 1e-6
 * (float) or 1e-14 (double), and prints the largest error and how many
 * values differ at all. Every case exits 77 (skipped) in a build without
 * CUDA or on a machine without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "hierarchy.h"
#include "mesh.h"
#include "tw_test.h"
#include "tw_test_scenes.h"
#ifdef TW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda_hierarchy.h"
#endif

#ifdef TW_DOUBLE
#define GPU_TOL 1e-14
#else
#define GPU_TOL 1e-6
#endif

#ifdef TW_HAVE_CUDA
static unsigned long long rng_state = 987654321;
static double rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* llm.c's validate_result: 0 when within tolerance, printing the first
 * mismatches and the largest error. */
static int compare(const char *what, const tw_real *gpu, const tw_real *cpu, int n)
{
    double scale = 0, worst = 0;
    int differ = 0, bad = 0;
    for (int q = 0; q < n; q++) scale = tw_test_max(scale, fabs((double)cpu[q]));
    for (int q = 0; q < n; q++) {
        double e = fabs((double)gpu[q] - cpu[q]);
        differ += gpu[q] != cpu[q];
        worst = tw_test_max(worst, e);
        if (!(e <= GPU_TOL * (scale + fabs((double)cpu[q])))) {
            if (bad < 5) fprintf(stderr, "%s[%d]: gpu %.9g, cpu %.9g\n", what, q, (double)gpu[q], (double)cpu[q]);
            bad++;
        }
    }
    printf("%s: %d values, max error %.3g (scale %.3g), %d differ at all, %d beyond tolerance\n", what, n, worst,
           scale, differ, bad);
    return bad > 0 || !(scale > 0);
}

/* Prolongs and restricts random vectors on both backends. */
static int check_transfer(const tw_transfer *P)
{
    size_t nf3 = 3 * (size_t)P->n_fine, nc3 = 3 * (size_t)P->n_coarse;
    tw_real *c = malloc(sizeof(tw_real) * nc3), *f = malloc(sizeof(tw_real) * nf3);
    tw_real *cpu_f = malloc(sizeof(tw_real) * nf3), *cpu_c = malloc(sizeof(tw_real) * nc3);
    tw_real *gpu_f = malloc(sizeof(tw_real) * nf3), *gpu_c = malloc(sizeof(tw_real) * nc3);
    for (size_t q = 0; q < nc3; q++) c[q] = (tw_real)(rnd() - 0.5);
    for (size_t q = 0; q < nf3; q++) f[q] = (tw_real)(rnd() - 0.5);
    tw_transfer_prolong(P, c, cpu_f);
    tw_transfer_restrict(P, f, cpu_c);
    tw_cuda_transfer *T = tw_cuda_transfer_create(P->n_fine, P->n_coarse, TW_HIER_ROW, P->idx, P->w);
    if (!T) {
        fprintf(stderr, "tw_cuda_transfer_create: %s\n", tw_last_error());
        return 1;
    }
    tw_real *dc = NULL, *df = NULL;
    int fail = cudaMalloc((void **)&dc, sizeof(tw_real) * nc3) != cudaSuccess ||
               cudaMalloc((void **)&df, sizeof(tw_real) * nf3) != cudaSuccess;
    /* prolong: c up, P c down */
    fail = fail || cudaMemcpy(dc, c, sizeof(tw_real) * nc3, cudaMemcpyHostToDevice) != cudaSuccess;
    fail = fail || tw_cuda_transfer_prolong(T, dc, df, NULL) != TW_OK;
    fail = fail || cudaMemcpy(gpu_f, df, sizeof(tw_real) * nf3, cudaMemcpyDeviceToHost) != cudaSuccess;
    /* restrict: f up, P^T f down */
    fail = fail || cudaMemcpy(df, f, sizeof(tw_real) * nf3, cudaMemcpyHostToDevice) != cudaSuccess;
    fail = fail || tw_cuda_transfer_restrict(T, df, dc, NULL) != TW_OK;
    fail = fail || cudaMemcpy(gpu_c, dc, sizeof(tw_real) * nc3, cudaMemcpyDeviceToHost) != cudaSuccess;
    if (fail) fprintf(stderr, "a device call failed: %s / %s\n", tw_last_error(), cudaGetErrorString(cudaGetLastError()));
    if (!fail) fail = compare("prolong", gpu_f, cpu_f, (int)nf3);
    if (!fail) fail = compare("restrict", gpu_c, cpu_c, (int)nc3);
    cudaFree(dc);
    cudaFree(df);
    tw_cuda_transfer_free(T);
    free(c);
    free(f);
    free(cpu_f);
    free(cpu_c);
    free(gpu_f);
    free(gpu_c);
    return fail;
}
#endif

/* The lattice kind: the shipped bunny in its 8 mm covering lattice. */
TW_TEST(transfer_lattice_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *f;
    tw_mesh *lat = tw_test_bunny_lattice(&f);
    CHECK(lat);
    tw_transfer P;
    CHECK_OK(tw_transfer_lattice(lat, f, &P));
    int fail = check_transfer(&P);
    tw_transfer_free(&P);
    tw_mesh_destroy(lat);
    tw_mesh_destroy(f);
    CHECK(!fail);
#endif
    return 0;
}

/* A random transfer with repeated coarse vertices and unused (weight 0)
 * entries, and coarse vertices no fine vertex reaches. */
TW_TEST(transfer_random_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    int nf = 5000, nc = 900;
    tw_transfer P = {nf, nc, malloc(sizeof(int) * 4 * nf), malloc(sizeof(double) * 4 * nf)};
    for (int i = 0; i < nf; i++) {
        double s = 0;
        for (int k = 0; k < 4; k++) {
            P.idx[4 * i + k] = (int)(rnd() * (nc - 10)); /* the last 10 unreached */
            P.w[4 * i + k] = (i + k) % 7 == 0 ? 0 : rnd();
            s += P.w[4 * i + k];
        }
        for (int k = 0; k < 4; k++) P.w[4 * i + k] = s > 0 ? P.w[4 * i + k] / s : 0.25;
    }
    int fail = check_transfer(&P);
    tw_transfer_free(&P);
    CHECK(!fail);
#endif
    return 0;
}

/* Nested levels: a bar refined 1:8 twice, both level pairs. */
TW_TEST(transfer_nested_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *base = tw_mesh_bar(2, 1, 1, 4, 2, 2);
    CHECK(base);
    tw_hierarchy *h = tw_hier_nested(base, 3);
    CHECK(h);
    int fail = 0;
    for (int l = 0; l + 1 < h->n_levels && !fail; l++) fail = check_transfer(&h->P[l]);
    tw_hier_free(h);
    tw_mesh_destroy(base);
    CHECK(!fail);
#endif
    return 0;
}

/* Non-nested levels: a coarse and a finer bar of the same box. */
TW_TEST(transfer_nonnested_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *c = tw_mesh_bar(1, 0.5, 0.5, 3, 2, 2), *f = tw_mesh_bar(1, 0.5, 0.5, 13, 7, 6);
    CHECK(c && f);
    tw_transfer P;
    CHECK_OK(tw_transfer_locate(c, f, &P));
    int fail = check_transfer(&P);
    tw_transfer_free(&P);
    tw_mesh_destroy(c);
    tw_mesh_destroy(f);
    CHECK(!fail);
#endif
    return 0;
}
