/* GPU parity of the batched polar decomposition: exits 77 (skipped) with no
 * CUDA build or no device. */
#include <stdlib.h>

#include "math3.h"
#include "tw_test.h"
#ifdef TW_HAVE_CUDA
#include "tw_cuda.h"
#endif

TW_TEST(polar_batched_matches_cpu)
{
#ifndef TW_HAVE_CUDA
    printf("built without CUDA (nvcc not found): skipped\n");
    return TW_SKIP;
#else
    if (tw_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return TW_SKIP;
    }
    int count = 100000;
    tw_real *A = malloc(sizeof(tw_real) * 9 * count), *R = malloc(sizeof(tw_real) * 9 * count);
    srand(7);
    for (int i = 0; i < 9 * count; i++) A[i] = (tw_real)(rand() / (double)RAND_MAX * 2 - 1);
    for (int i = 0; i < 9; i++) A[i] = 0; /* a zero matrix */
    CHECK_OK(tw_cuda_polar_batched(A, R, count));
    double worst = 0;
    for (int k = 0; k < count; k++) {
        tw_m3 ref = tw_polar3(tw_m3_load(A + 9 * k));
        for (int i = 0; i < 9; i++) worst = fmax(worst, fabs((double)ref.m[i] - R[9 * k + i]));
    }
    printf("max |R_gpu - R_cpu| over %d matrices: %.3g\n", count, worst);
    CHECK(worst < (sizeof(tw_real) == 8 ? 1e-10 : 1e-3));
    free(A);
    free(R);
    return 0;
#endif
}
