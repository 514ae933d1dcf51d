// The tetra front's device step (cuda_front.h): the pattern kept and
// updated by Thrust (thrust_front.h); the element pass, one thread per
// active tet, and the gathered assembly, one thread per block and one per
// free vertex, with the CPU front's bodies (host/hd/front_element.h, in
// double) over the gather maps the host builds at a rebuild
// (host/tetra_front_maps.h): each block and force sums its contributions
// in the CPU front's order, so the sums are deterministic and differ from
// the CPU's only by nvcc's fused multiply-adds in the element products;
// then the filtered block-Jacobi PCG of host/solver_impl.h on them.
//
// The PCG's row bodies are the CPU's (host/hd/bsr_row.h: the block product
// and the block inverse), its sums the deterministic two-pass reductions of
// cuda_reduce.cuh, whose per-block partials the host adds in block order.
// The loop is host-driven and plain: one read of the partials after each
// reduction (p.Ap, then r.z and r.r), the stopping rules and the scalar
// updates (alpha, beta in double, applied as tw_real as the CPU does) on the
// host. It does not need a tw_cuda_world: the world's PCG (cuda_pcg.cu)
// keeps its state and stopping rules on the device for its graph, which a
// front whose pattern changes at every switch would have to re-capture.
// Everything runs on the legacy default stream, in order.
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one; the
// pattern update is checked on the CPU (tests/test_thrust_front_cpu.cpp), the
// maps and the gather order too (tests/test_tetra_front_maps.c: the same
// bodies in the same order reproduce the CPU front's system to the bit), the
// kernels and the solve by tests/test_gpu_front.c when a GPU session runs it.
#include <stdlib.h>
#include <string.h>

#include <exception>
#include <new>

#include <thrust/system/cuda/execution_policy.h>

#include "cuda_front.h"
#include "cuda_internal.h" /* TW_CUDA_TRY, grids, tw_fail */
#include "cuda_reduce.cuh"
#include "hd/front_element.h"
#include "solver.h" /* tw_filter_sb2 */
#include "thrust_device.cuh"
#include "thrust_front.h"

#include "hd/bsr_row_real.h" /* the CPU solvers' row bodies and block-Jacobi preconditioner */

namespace {

typedef thrust::device_vector<unsigned char, tw_quiet_allocator<unsigned char> > tw_bvec;
typedef thrust::device_vector<tw_real, tw_quiet_allocator<tw_real> > tw_rvec;
typedef thrust::device_vector<double, tw_quiet_allocator<double> > tw_dvec;

template <class T> T *raw(thrust::device_vector<T, tw_quiet_allocator<T> > &v) { return thrust::raw_pointer_cast(v.data()); }

#define TW_GRID_STRIDE(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

__global__ void front_jacobi_kernel(int n, const int *diag, const tw_real *val, tw_real *dinv)
{
    TW_GRID_STRIDE(i, n) tw_block_jacobi_inverse(val + 9 * (size_t)diag[i], dinv + 9 * (size_t)i);
}

/* r = S (b - A x); partial: |S b|^2 (the held rows' b left out: tw_pcg's
 * initial_residual, whose per-vertex term this is; the front holds a vertex
 * whole, cons 1, or not at all) */
__global__ void front_residual_kernel(int n, const int *row_ptr, const int *col, const tw_real *val,
                                      const unsigned char *cons, const tw_real *b, const tw_real *x, tw_real *r,
                                      double *partial)
{
    double s[1] = {0};
    TW_GRID_STRIDE(i, n) {
        tw_bsr_row_product(row_ptr, col, val, x, r, i);
        const tw_real *bp = b + 3 * (size_t)i;
        const double bi[3] = {bp[0], bp[1], bp[2]};
        for (int d = 0; d < 3; d++) {
            const size_t k = 3 * (size_t)i + d;
            r[k] = cons[i] ? (tw_real)0 : b[k] - r[k];
        }
        s[0] += tw_filter_sb2(cons[i], NULL, i, bi);
    }
    tw_block_partials<1>(s, partial);
}

/* z = S Dinv r (and p = z when p is given); partials: r.z, r.r */
__global__ void front_precondition_kernel(int n, const unsigned char *cons, const tw_real *dinv, const tw_real *r,
                                          tw_real *z, tw_real *p, double *partial)
{
    double s[2] = {0, 0};
    TW_GRID_STRIDE(i, n) {
        const tw_real *ri = r + 3 * (size_t)i;
        tw_real zi[3];
        tw_block_jacobi_vertex(dinv, r, i, cons[i], NULL, zi); /* cons 0 or 1: no normal read */
        for (int d = 0; d < 3; d++) {
            z[3 * (size_t)i + d] = zi[d];
            if (p) p[3 * (size_t)i + d] = zi[d];
            s[0] += (double)ri[d] * (double)zi[d];
            s[1] += (double)ri[d] * (double)ri[d];
        }
    }
    tw_block_partials<2>(s, partial);
}

/* q = S A p; partial: p.q */
__global__ void front_product_kernel(int n, const int *row_ptr, const int *col, const tw_real *val,
                                     const unsigned char *cons, const tw_real *p, tw_real *q, double *partial)
{
    double s[1] = {0};
    TW_GRID_STRIDE(i, n) {
        tw_bsr_row_product(row_ptr, col, val, p, q, i);
        for (int d = 0; d < 3; d++) {
            const size_t k = 3 * (size_t)i + d;
            if (cons[i]) q[k] = 0;
            s[0] += (double)p[k] * (double)q[k];
        }
    }
    tw_block_partials<1>(s, partial);
}

__global__ void front_update_kernel(int n3, tw_real alpha, const tw_real *p, const tw_real *q, tw_real *x, tw_real *r)
{
    TW_GRID_STRIDE(i, n3) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
    }
}

__global__ void front_direction_kernel(int n3, tw_real beta, const tw_real *z, tw_real *p)
{
    TW_GRID_STRIDE(i, n3) p[i] = z[i] + beta * p[i];
}

/* per active tet: R, fe (12) and KR (144), the CPU front's element_pass body */
__global__ void front_element_kernel(int nact, const int *act, const int *corner, const double *g, const double *Ke,
                                     const double *xu, const double *Xu, double *elf, double *elK)
{
    TW_GRID_STRIDE(k, nact) {
        const int id = act[k];
        double R[9];
        tw_front_element(xu, Xu, corner + 4 * (size_t)k, g + 12 * (size_t)id, Ke + 144 * (size_t)id, R,
                         elf + 12 * (size_t)k, elK + 144 * (size_t)k);
    }
}

/* per block: its stiffness contributions gathered in the CPU's order */
__global__ void front_gather_kernel(int nnzb, const int *ptr, const int *code, const double *w, const double *elK,
                                    tw_real *val)
{
    TW_GRID_STRIDE(b, nnzb) {
        tw_real A[9];
        tw_front_block_gather(ptr, code, w, elK, b, A);
        for (int e = 0; e < 9; e++) val[9 * (size_t)b + e] = A[e];
    }
}

/* per free vertex, after the gather: the mass on its diagonal block, its
 * right-hand side and the PCG's start */
__global__ void front_rhs_kernel(int n, const int *diag, const double *mass, const unsigned char *held,
                                 const int *ptr, const int *code, const double *w, const double *elf,
                                 const double *vf, const double *fqf, double cm, double h, double g0, double g1,
                                 double g2, tw_real *val, tw_real *b, tw_real *x)
{
    TW_GRID_STRIDE(i, n) {
        const double gravity[3] = {g0, g1, g2};
        tw_front_diag_mass(val + 9 * (size_t)diag[i], cm, mass[i]);
        tw_front_row_rhs(ptr, code, w, elf, i, mass[i], vf + 3 * (size_t)i, fqf ? fqf + 3 * (size_t)i : NULL,
                         gravity, h, held[i], b + 3 * (size_t)i, x + 3 * (size_t)i);
    }
}

} // namespace

struct tw_cuda_front {
    int nv = 0;
    tw_front_pattern_vectors pat;
    tw_bvec cons;
    tw_rvec val, b, x, r, z, p, q, dinv;
    tw_dvec partial;
    double partial_h[2 * TW_CUDA_REDUCE_BLOCKS];
    size_t step_bytes = 0;
    /* the tree's per-tet data (once) */
    int ntree = 0;
    tw_dvec g, Ke;
    /* the rebuild's maps (tetra_front_maps.h) and the step's state and
     * element scratch */
    int nact = 0, nu = 0, maps_n = -1, maps_nnzb = -1, assembled = 0;
    tw_ivec act, corner, blk_ptr, blk_code, frc_ptr, frc_code;
    tw_dvec Xu, mass, blk_w, frc_w, xu, vf, fqf, elf, elK;
    double cm = 1, h = 0, gravity[3] = {0, 0, 0};
};

extern "C" tw_cuda_front *tw_cuda_front_create(int nv)
{
    if (nv < 1) {
        tw_fail(TW_ERR_INVALID, "tw_cuda_front_create: %d vertices", nv);
        return NULL;
    }
    try {
        tw_cuda_front *d = new tw_cuda_front;
        d->nv = nv;
        d->partial.resize(2 * TW_CUDA_REDUCE_BLOCKS);
        return d;
    } catch (const std::exception &e) {
        cudaGetLastError();
        tw_fail(TW_ERR_DEVICE, "%s:%d: tw_cuda_front_create: %s", __FILE__, __LINE__, e.what());
        return NULL;
    }
}

extern "C" void tw_cuda_front_destroy(tw_cuda_front *d)
{
    delete d; /* the vectors' allocator never throws on free */
}

extern "C" tw_status tw_cuda_front_pattern(tw_cuda_front *d, int n, const int *rid, const unsigned char *redo,
                                           int ntet, const int *slot, const unsigned char *cons, int *nnzb)
{
    if (n < 0 || ntet < 0)
        return tw_fail(TW_ERR_INVALID, "tw_cuda_front_pattern: %d free vertices, %d tets", n, ntet);
    d->maps_n = d->maps_nnzb = -1; /* the maps of the new pattern come next (tw_cuda_front_maps) */
    d->assembled = 0;
    try {
        const size_t nv = (size_t)d->nv, ns = (size_t)TW_FRONT_SLOT_CAP * (size_t)ntet;
        tw_ivec rid_d(nv), slot_d(ns ? ns : 1);
        tw_bvec redo_d(nv);
        TW_CUDA_TRY(cudaMemcpy(raw(rid_d), rid, nv * sizeof *rid, cudaMemcpyHostToDevice));
        TW_CUDA_TRY(cudaMemcpy(raw(redo_d), redo, nv, cudaMemcpyHostToDevice));
        if (ns) TW_CUDA_TRY(cudaMemcpy(raw(slot_d), slot, ns * sizeof *slot, cudaMemcpyHostToDevice));
        tw_temp_allocator temp;
        tw_front_pattern_update(tw_on(0, temp), d->nv, n, raw(rid_d), raw(redo_d), ntet, raw(slot_d), d->pat);
        const size_t n3 = 3 * (size_t)(n ? n : 1);
        d->cons.resize((size_t)(n ? n : 1));
        if (n) TW_CUDA_TRY(cudaMemcpy(raw(d->cons), cons, (size_t)n, cudaMemcpyHostToDevice));
        d->val.resize(9 * (size_t)(d->pat.nnzb ? d->pat.nnzb : 1));
        d->dinv.resize(3 * n3);
        d->b.resize(n3);
        d->x.resize(n3);
        d->r.resize(n3);
        d->z.resize(n3);
        d->p.resize(n3);
        d->q.resize(n3);
        TW_CUDA_TRY(cudaDeviceSynchronize());
        *nnzb = d->pat.nnzb;
        return TW_OK;
    }
    TW_THRUST_CATCH("tw_cuda_front_pattern (the front's pattern update: remove_if / sort / unique / merge)")
}

extern "C" tw_status tw_cuda_front_pattern_to_host(const tw_cuda_front *d, int *n, int *nnzb, int **row_ptr,
                                                   int **col, int **diag)
{
    const int nn = d->pat.n, nb = d->pat.nnzb;
    *n = nn;
    *nnzb = nb;
    *row_ptr = (int *)malloc(((size_t)nn + 1) * sizeof(int));
    *col = (int *)malloc((size_t)(nb ? nb : 1) * sizeof(int));
    *diag = (int *)malloc((size_t)(nn ? nn : 1) * sizeof(int));
    if (!*row_ptr || !*col || !*diag) {
        free(*row_ptr);
        free(*col);
        free(*diag);
        *row_ptr = *col = *diag = NULL;
        return tw_fail(TW_ERR_NOMEM, "tw_cuda_front_pattern_to_host: %d rows, %d blocks", nn, nb);
    }
    try {
        thrust::copy(d->pat.row_ptr.begin(), d->pat.row_ptr.begin() + (nn + 1), *row_ptr);
        thrust::copy(d->pat.col.begin(), d->pat.col.begin() + nb, *col);
        thrust::copy(d->pat.diag.begin(), d->pat.diag.begin() + nn, *diag);
        return TW_OK;
    }
    TW_THRUST_CATCH("tw_cuda_front_pattern_to_host (copies of the pattern)")
}

template <class T> static void upload(thrust::device_vector<T, tw_quiet_allocator<T> > &v, const T *h, size_t count)
{
    v.resize(count ? count : 1);
    if (count) {
        cudaError_t e = cudaMemcpy(raw(v), h, count * sizeof(T), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) throw thrust::system_error(e, thrust::cuda_category(), "cudaMemcpy (front upload)");
    }
}

extern "C" tw_status tw_cuda_front_tree(tw_cuda_front *d, int ntree, const double *g, const double *Ke)
{
    if (ntree < 1) return tw_fail(TW_ERR_INVALID, "tw_cuda_front_tree: %d tree tets", ntree);
    try {
        upload(d->g, g, 12 * (size_t)ntree);
        upload(d->Ke, Ke, 144 * (size_t)ntree);
        d->ntree = ntree;
        return TW_OK;
    }
    TW_THRUST_CATCH("tw_cuda_front_tree (the tree's gradients and element stiffness)")
}

extern "C" tw_status tw_cuda_front_maps(tw_cuda_front *d, const tw_front_maps *m)
{
    if (m->n != d->pat.n || m->nnzb != d->pat.nnzb || !d->ntree)
        return tw_fail(TW_ERR_INVALID, "tw_cuda_front_maps: maps of %d free vertices, %d blocks; pattern %d, %d%s",
                       m->n, m->nnzb, d->pat.n, d->pat.nnzb, d->ntree ? "" : "; no tree data");
    d->assembled = 0;
    try {
        const size_t nact = (size_t)m->nact, n = (size_t)m->n;
        upload(d->act, m->act, nact);
        upload(d->corner, m->corner, 4 * nact);
        upload(d->Xu, m->Xu, 3 * (size_t)m->nu);
        upload(d->mass, m->mass, n);
        upload(d->blk_ptr, m->blk_ptr, (size_t)m->nnzb + 1);
        upload(d->blk_code, m->blk_code, (size_t)m->blk_ptr[m->nnzb]);
        upload(d->blk_w, m->blk_w, (size_t)m->blk_ptr[m->nnzb]);
        upload(d->frc_ptr, m->frc_ptr, n + 1);
        upload(d->frc_code, m->frc_code, (size_t)m->frc_ptr[m->n]);
        upload(d->frc_w, m->frc_w, (size_t)m->frc_ptr[m->n]);
        d->xu.resize(3 * (size_t)m->nu + 1);
        d->vf.resize(3 * n + 1);
        d->fqf.resize(3 * n + 1);
        d->elf.resize(12 * nact + 1);
        d->elK.resize(144 * nact + 1);
        d->nact = m->nact;
        d->nu = m->nu;
        d->maps_n = m->n;
        d->maps_nnzb = m->nnzb;
        d->cm = m->cm;
        d->h = m->h;
        for (int k = 0; k < 3; k++) d->gravity[k] = m->gravity[k];
        return TW_OK;
    }
    TW_THRUST_CATCH("tw_cuda_front_maps (the rebuild's gather maps)")
}

extern "C" tw_status tw_cuda_front_assemble(tw_cuda_front *d, const double *xu, const double *vf, const double *fqf)
{
    const int n = d->pat.n, nnzb = d->pat.nnzb;
    if (d->maps_n != n || d->maps_nnzb != nnzb)
        return tw_fail(TW_ERR_INVALID, "tw_cuda_front_assemble: no maps for the pattern (%d free vertices, %d blocks)",
                       n, nnzb);
    const size_t xb = 3 * (size_t)d->nu * sizeof(double), vb = 3 * (size_t)n * sizeof(double);
    if (xb) TW_CUDA_TRY(cudaMemcpy(raw(d->xu), xu, xb, cudaMemcpyHostToDevice));
    if (vb) TW_CUDA_TRY(cudaMemcpy(raw(d->vf), vf, vb, cudaMemcpyHostToDevice));
    if (vb && fqf) TW_CUDA_TRY(cudaMemcpy(raw(d->fqf), fqf, vb, cudaMemcpyHostToDevice));
    d->step_bytes = xb + vb + (fqf ? vb : 0);
    if (d->nact) {
        front_element_kernel<<<tw_cuda_grid(d->nact), TW_CUDA_THREADS>>>(d->nact, raw(d->act), raw(d->corner),
                                                                         raw(d->g), raw(d->Ke), raw(d->xu),
                                                                         raw(d->Xu), raw(d->elf), raw(d->elK));
        TW_CUDA_LAUNCHED();
    }
    if (nnzb) {
        front_gather_kernel<<<tw_cuda_grid(nnzb), TW_CUDA_THREADS>>>(nnzb, raw(d->blk_ptr), raw(d->blk_code),
                                                                     raw(d->blk_w), raw(d->elK), raw(d->val));
        TW_CUDA_LAUNCHED();
    }
    if (n) {
        front_rhs_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS>>>(
            n, thrust::raw_pointer_cast(d->pat.diag.data()), raw(d->mass), raw(d->cons), raw(d->frc_ptr),
            raw(d->frc_code), raw(d->frc_w), raw(d->elf), raw(d->vf), fqf ? raw(d->fqf) : NULL, d->cm, d->h,
            d->gravity[0], d->gravity[1], d->gravity[2], raw(d->val), raw(d->b), raw(d->x));
        TW_CUDA_LAUNCHED();
    }
    d->assembled = 1;
    return TW_OK;
}

extern "C" tw_status tw_cuda_front_system_to_host(const tw_cuda_front *d, tw_real *val, tw_real *rhs, tw_real *vr)
{
    if (!d->assembled) return tw_fail(TW_ERR_INVALID, "tw_cuda_front_system_to_host: nothing assembled");
    const size_t nb = 9 * (size_t)d->pat.nnzb * sizeof(tw_real), xb = 3 * (size_t)d->pat.n * sizeof(tw_real);
    tw_cuda_front *dm = const_cast<tw_cuda_front *>(d); /* raw() of a const vector */
    if (nb) TW_CUDA_TRY(cudaMemcpy(val, raw(dm->val), nb, cudaMemcpyDeviceToHost));
    if (xb) TW_CUDA_TRY(cudaMemcpy(rhs, raw(dm->b), xb, cudaMemcpyDeviceToHost));
    if (xb) TW_CUDA_TRY(cudaMemcpy(vr, raw(dm->x), xb, cudaMemcpyDeviceToHost));
    return TW_OK;
}

/* The sums of the last reduction's nv values over nb blocks, in block order. */
static tw_status front_sums(tw_cuda_front *d, int nb, int nv, double *sum)
{
    TW_CUDA_TRY(cudaMemcpy(d->partial_h, raw(d->partial), (size_t)nv * (size_t)nb * sizeof(double),
                           cudaMemcpyDeviceToHost));
    for (int k = 0; k < nv; k++) {
        double s = 0;
        for (int j = 0; j < nb; j++) s += d->partial_h[k * nb + j];
        sum[k] = s;
    }
    return TW_OK;
}

extern "C" tw_status tw_cuda_front_solve(tw_cuda_front *d, double tol, int max_iterations, tw_real *x,
                                         int *iterations, double *residual, int *negative_curvature)
{
    const int n = d->pat.n, n3 = 3 * n;
    *iterations = 0;
    *residual = 0;
    *negative_curvature = 0;
    if (n == 0) return TW_OK;
    if (!d->assembled) return tw_fail(TW_ERR_INVALID, "tw_cuda_front_solve: no system assembled");
    d->assembled = 0; /* the solve overwrites the start */
    const size_t xb = (size_t)n3 * sizeof(tw_real);
    const int *row_ptr = thrust::raw_pointer_cast(d->pat.row_ptr.data());
    const int *col = thrust::raw_pointer_cast(d->pat.col.data());
    const int *diag = thrust::raw_pointer_cast(d->pat.diag.data());
    const unsigned char *cons = raw(d->cons);
    tw_real *A = raw(d->val), *xd = raw(d->x), *r = raw(d->r), *z = raw(d->z), *p = raw(d->p), *q = raw(d->q),
            *dinv = raw(d->dinv);
    double *partial = raw(d->partial);
    const unsigned nb = tw_cuda_reduce_grid(n), g = tw_cuda_grid(n), g3 = tw_cuda_grid(n3);

    front_jacobi_kernel<<<g, TW_CUDA_THREADS>>>(n, diag, A, dinv);
    TW_CUDA_LAUNCHED();
    front_residual_kernel<<<nb, TW_CUDA_THREADS>>>(n, row_ptr, col, A, cons, raw(d->b), xd, r, partial);
    TW_CUDA_LAUNCHED();
    double bb;
    tw_status st = front_sums(d, (int)nb, 1, &bb);
    if (st != TW_OK) return st;
    double bnorm = sqrt(bb);
    if (bnorm < 1e-300) bnorm = 1;
    front_precondition_kernel<<<nb, TW_CUDA_THREADS>>>(n, cons, dinv, r, z, p, partial);
    TW_CUDA_LAUNCHED();
    double s2[2];
    if ((st = front_sums(d, (int)nb, 2, s2)) != TW_OK) return st;
    double rz = s2[0], rn = sqrt(s2[1]);
    int it = 0;
    while (it < max_iterations) {
        if (rn <= tol * bnorm) break;
        if (!(rz > 0)) break; /* exact solution (or breakdown) */
        front_product_kernel<<<nb, TW_CUDA_THREADS>>>(n, row_ptr, col, A, cons, p, q, partial);
        TW_CUDA_LAUNCHED();
        double pq;
        if ((st = front_sums(d, (int)nb, 1, &pq)) != TW_OK) return st;
        if (!(pq > 0)) {
            *negative_curvature = 1;
            break;
        }
        const double alpha = rz / pq;
        front_update_kernel<<<g3, TW_CUDA_THREADS>>>(n3, (tw_real)alpha, p, q, xd, r);
        TW_CUDA_LAUNCHED();
        front_precondition_kernel<<<nb, TW_CUDA_THREADS>>>(n, cons, dinv, r, z, NULL, partial);
        TW_CUDA_LAUNCHED();
        if ((st = front_sums(d, (int)nb, 2, s2)) != TW_OK) return st;
        const double beta = s2[0] / rz;
        rz = s2[0];
        front_direction_kernel<<<g3, TW_CUDA_THREADS>>>(n3, (tw_real)beta, z, p);
        TW_CUDA_LAUNCHED();
        rn = sqrt(s2[1]);
        it++;
    }
    TW_CUDA_TRY(cudaMemcpy(x, xd, xb, cudaMemcpyDeviceToHost));
    *iterations = it;
    *residual = rn / bnorm;
    d->step_bytes += xb; /* the assembly's state up, x down (the partials' few doubles aside) */
    return TW_OK;
}

extern "C" size_t tw_cuda_front_step_bytes(const tw_cuda_front *d) { return d->step_bytes; }
