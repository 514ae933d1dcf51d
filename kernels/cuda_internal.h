// The CUDA backend's internals, shared by cuda_world.cu (create, step,
// destroy), cuda_kernels.cu (rotations, forces, assembly, integration) and
// cuda_pcg.cu (the filtered block-Jacobi PCG). C++ linkage: nothing here is
// part of the C interface (that is cuda_world.h).
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#ifndef TW_CUDA_INTERNAL_H
#define TW_CUDA_INTERNAL_H
#include <cuda_runtime.h>
#include <cusparse.h>

#include "cuda_world.h"
extern "C" {
#include "error.h" /* tw_fail: a C function, declared without extern "C" */
}

#define TW_CUDA_THREADS 256 /* every kernel's block size (the reductions assume it) */
#define TW_CUDA_REDUCE_BLOCKS 1024 /* at most this many partial sums per reduction */
#define TW_CUDA_REDUCE_VALUES 4 /* at most this many sums per reduction */

/* Device scalars (doubles) the PCG and the reductions leave on the device,
 * indices into tw_cuda_world.scalars. Contiguous where one reduction writes
 * several: (RZ, RR, BB) by the initial residual, (RZ, RR) per iteration. */
enum {
    TW_S_RZ = 0,      /* r . z, current */
    TW_S_RR = 1,      /* r . r */
    TW_S_BB = 2,      /* |S b|^2 */
    TW_S_PQ = 3,      /* p . A p */
    TW_S_RZ_PREV = 4, /* r . z of the previous iteration (beta's denominator) */
    TW_S_NET = 5,     /* 3: net elastic force (ghost-force correction) */
    TW_S_MOM = 8,     /* 3: momentum excess (conserve_momentum) */
    TW_S_COUNT = 11
};

/* The device arrays every kernel reads, passed by value (one argument). */
typedef struct tw_cuda_data {
    int n, nt, nnzb;
    /* constant (from tw_fem) */
    const int *tets, *row_ptr, *col, *diag, *contrib_ptr, *contrib, *vt_ptr, *vt;
    const int *block_row; /* nnzb: the row of each block (one thread per block) */
    const int *edge_nbr;  /* 2n: warp-edge frame neighbours (from the world) */
    const tw_real *g, *vol, *lam, *mu, *K, *mass, *X;
    /* state */
    tw_real *x, *v, *fext, *target;
    const unsigned char *cons;
    /* scratch */
    tw_real *R, *S, *fe, *f, *rhs, *vnew, *A;
} tw_cuda_data;

struct tw_cuda_world {
    tw_cuda_data d;
    size_t bytes; /* device memory held */
    size_t d2h_bytes; /* vertex data copied device -> host (tw_cuda_world_d2h_bytes) */
    /* the same pointers, owned (d holds const views) */
    int *tets, *row_ptr, *col, *diag, *contrib_ptr, *contrib, *vt_ptr, *vt, *block_row, *edge_nbr;
    tw_real *g, *vol, *lam, *mu, *K, *mass, *X;
    unsigned char *cons;
    double mass_total;   /* sum of the masses, in the CPU's order */
    int any_constrained; /* a pinned or kinematic vertex exists (conserve_momentum does nothing then) */
    /* PCG */
    tw_real *r, *z, *p, *q, *dinv;
    double *partial; /* TW_CUDA_REDUCE_VALUES * TW_CUDA_REDUCE_BLOCKS */
    double *scalars; /* TW_S_COUNT */
    /* cuSPARSE: the BSR system matrix over d.A and dense vectors */
    cusparseHandle_t sparse;
    cusparseSpMatDescr_t matA;
    cusparseDnVecDescr_t vec_vnew, vec_r, vec_p, vec_q;
    void *spmv_buffer;
    size_t spmv_buffer_bytes;
    int own_spmv; /* 1: the hand-written 3x3 BSR SpMV instead of cuSPARSE's */
    cudaEvent_t ev[4];
    int have_events;
};

/* Error checks: each names the file, line and call, sets tw_last_error and
 * returns the status from the enclosing function (which returns tw_status). */
tw_status tw_cuda_check(cudaError_t e, const char *call, const char *file, int line);
tw_status tw_cusparse_check(cusparseStatus_t e, const char *call, const char *file, int line);
#define TW_CUDA_TRY(call)                                                                  \
    do {                                                                                   \
        tw_status s_ = tw_cuda_check((call), #call, __FILE__, __LINE__);                   \
        if (s_ != TW_OK) return s_;                                                        \
    } while (0)
#define TW_CUSPARSE_TRY(call)                                                              \
    do {                                                                                   \
        tw_status s_ = tw_cusparse_check((call), #call, __FILE__, __LINE__);               \
        if (s_ != TW_OK) return s_;                                                        \
    } while (0)
/* After a kernel launch: the launch error (bad configuration, no device). */
#define TW_CUDA_LAUNCHED() TW_CUDA_TRY(cudaGetLastError())

static inline unsigned tw_cuda_grid(long count) { return (unsigned)((count + TW_CUDA_THREADS - 1) / TW_CUDA_THREADS); }
/* Grid of a grid-stride reduction kernel over count items. */
static inline unsigned tw_cuda_reduce_grid(long count)
{
    unsigned g = tw_cuda_grid(count);
    return g < 1 ? 1 : g > TW_CUDA_REDUCE_BLOCKS ? TW_CUDA_REDUCE_BLOCKS : g;
}

/* cuda_kernels.cu: one step's pieces, in the order implicit_solve runs them
 * (host/world.c); each launches on the default stream. */
tw_status tw_cuda_rotations(tw_cuda_world *cw, tw_method m);
tw_status tw_cuda_elastic_force(tw_cuda_world *cw, tw_method m, int ghost_correction);
/* rhs = M v + heff (f + f_ext), f_ext = M g + fext + the spring at x */
tw_status tw_cuda_rhs(tw_cuda_world *cw, double heff, const double gravity[3], int spring_vertex,
                      const double anchor[3], double spring_k);
tw_status tw_cuda_assemble(tw_cuda_world *cw, tw_method m, int exact_warp, double cm, double ck, int spring_vertex,
                           double spring_k);
/* vnew = warm ? v : 0, then pinned 0 and kinematic onto their targets */
tw_status tw_cuda_prescribe(tw_cuda_world *cw, int warm_start, double heff);
/* conserve_momentum of host/world.c on vnew (the caller checks that no vertex is constrained) */
tw_status tw_cuda_conserve_momentum(tw_cuda_world *cw, double heff, const double gravity[3], int spring_vertex,
                                    const double anchor[3], double spring_k);
/* v = vnew, x += heff v */
tw_status tw_cuda_integrate(tw_cuda_world *cw, double heff);

/* cuda_pcg.cu */
typedef struct tw_cuda_solve_result {
    int iterations;
    double residual;
    int negative_curvature;
} tw_cuda_solve_result;
/* Sets up the SpMV (cuSPARSE BSR, or the hand-written kernel). */
tw_status tw_cuda_pcg_init(tw_cuda_world *cw);
void tw_cuda_pcg_free(tw_cuda_world *cw);
/* The filtered block-Jacobi PCG of host/solver_impl.h on A vnew = rhs, from
 * vnew; the filter is cons (pinned, kinematic: fully constrained). */
tw_status tw_cuda_pcg(tw_cuda_world *cw, double tol, int max_iterations, int fixed_iterations,
                      tw_cuda_solve_result *res);

/* Reductions (cuda_reduce.cuh) finish with this: sums nv rows of nb partials
 * into scalars[first .. first + nv - 1]. */
tw_status tw_cuda_reduce_finish(tw_cuda_world *cw, int nv, int nb, int first);
#endif
