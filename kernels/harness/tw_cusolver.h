/* cuSOLVER behind a C entry point: the batched Jacobi SVD (gesvdjBatched)
 * as the oracle the 3x3 SVD / polar kernel is tested against, and timed
 * beside it in the benchmark. */
#ifndef TW_CUSOLVER_H
#define TW_CUSOLVER_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif
/* SVD A = U diag(S) V^T of `count` 3x3 row-major matrices (host arrays: A
 * 9 count, U and V 9 count row-major, S 3 count), by cusolverDn?gesvdjBatched
 * in tw_real's precision: S >= 0 in descending order, U and V orthogonal
 * (their determinants may be -1: this is the textbook SVD, not the
 * rotation-variant one of hd/math3.h). ms (may be NULL): milliseconds of the
 * gesvdjBatched call alone on the device, without the copies. A matrix that
 * does not converge is TW_ERR_DEVICE naming it. */
tw_status tw_cusolver_svd_batched(const tw_real *A, tw_real *U, tw_real *S, tw_real *V, int count, double *ms);
#ifdef __cplusplus
}
#endif
#endif
