// One implicit step's kernels (all but the solver): the loop bodies of
// host/forces.c and host/step.c's implicit_solve, one thread per vertex,
// element or BSR block. Where the CPU loop body is a function of hd/step.h
// (rotations, forces, gather, rhs, prescribe, the divergence check's per
// vertex part, the system matrix's blocks) the kernel calls that function
// on a tw_step_view of d (tw_cuda_step_view, cuda_internal.h). The packed
// methods' blocks gather per block here (hd/element.h), where the CPU
// gathers per row and mirrors: the same sums in the same order.
// The step is from d.xbase, d.vbase (x+ = xbase + heff v+): d.x, d.v for
// implicit Euler, BDF2's base terms otherwise (cuda_integrators.cu); the
// rotations and forces are at d.x, as in implicit_solve.
// Per-vertex sums are gathers in element order (vt lists) and per-block sums
// gathers in contribution order (contrib lists): deterministic, no atomics.
//
// Every kernel reads the step's numbers (dt, damping, gravity, spring) from
// d.P in device memory, never from its arguments, so a captured graph stays
// valid when they change; everything launches on cw->stream.
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#include "cuda_internal.h"
#include "cuda_reduce.cuh"
#include "hd/element.h"
#include "hd/step_fused.h"
#include "hd/step_hanging.h"

namespace {

/* ---- rotations (tw_compute_rotations) ---- */

__global__ void rotations_warp_vertex(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_rotation_warp_vertex(&s, d.x, i);
}

__global__ void rotations_warp_edge(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_rotation_warp_edge(&s, d.x, i);
}

__global__ void rotations_element(tw_cuda_data d, int green)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= d.nt) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_rotation_element(&s, d.x, e, green);
}

/* corot-element, hybrid, green with TW_CUDA_ELEMENT=fused: the rotation and
 * the element force of one element, x gathered and F built once
 * (hd/step_fused.h); tw_cuda_elastic_force then only gathers */
__global__ void rotation_force_element(tw_cuda_data d, int method)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= d.nt) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_rotation_element_force(&s, d.x, e, (tw_method)method, NULL);
}

/* ---- elastic forces (tw_compute_elastic_force) ---- */

/* linear, warp-*: one thread per row of K */
__global__ void vertex_force(tw_cuda_data d, int warped)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_vertex_force(&s, d.x, i, warped, d.f);
}

/* ghost forces: the net elastic force, then its mass-weighted removal */
__global__ void net_force_partials(tw_cuda_data d, double *partial)
{
    double s[3] = {0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x)
        for (int c = 0; c < 3; c++) s[c] += d.f[3 * (size_t)i + c];
    tw_block_partials<3>(s, partial);
}

__global__ void remove_net_force(tw_cuda_data d, const double *scalars, double mass_total)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    for (int c = 0; c < 3; c++) d.f[3 * (size_t)i + c] -= (tw_real)(scalars[TW_S_NET + c] * d.mass[i] / mass_total);
}

/* corot-element, hybrid, green: one thread per element into fe */
__global__ void element_force(tw_cuda_data d, int method)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= d.nt) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_element_force(&s, d.x, e, (tw_method)method);
}

/* per vertex, in element order */
__global__ void gather_element_forces(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_gather_element_forces(&s, i, d.f);
}

/* ---- right-hand side (tw_external_force, then implicit_solve's rhs) ---- */

__global__ void rhs_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    tw_step_view s = tw_cuda_step_view(d);
    size_t k = 3 * (size_t)i;
    tw_real ext[3];
    tw_external_force_vertex(&s, d.x, i, ext);
    tw_rhs_vertex(d.mass[i], d.vbase + k, d.P->heff, d.f + k, ext, d.rhs + k);
}

/* ---- the system matrix (tw_assemble_system), one thread per block ---- */

/* warp-vertex's symmetric system: R_e from the vertex rotations, packed */
__global__ void warp_vertex_pack_kernel(tw_cuda_data d)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= d.nt) return;
    tw_step_view s = tw_cuda_step_view(d);
    tw_warp_vertex_element_pack(&s, e);
}

__global__ void assemble_kernel(tw_cuda_data d, int method, int exact_warp)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= d.nnzb) return;
    int i = d.block_row[b];
    tw_step_view s = tw_cuda_step_view(d);
    tw_m3 Kb;
    if (method == TW_LINEAR) {
        Kb = tw_vertex_system_block(&s, b, d.col[b], NULL, exact_warp);
    } else if ((method == TW_WARP_VERTEX && exact_warp) || method == TW_WARP_EDGE) {
        tw_m3 Ri = tw_m3_load(d.R + 9 * (size_t)i);
        Kb = tw_vertex_system_block(&s, b, d.col[b], &Ri, exact_warp);
    } else {
        Kb = tw_m3_zero();
        for (int k = d.contrib_ptr[b]; k < d.contrib_ptr[b + 1]; k++) {
            int c = d.contrib[k], e = c >> 4, p = (c >> 2) & 3, q = c & 3;
            /* every block, the CPU's mirrored triangle bit for bit */
            if (method == TW_COROT_ELEMENT || method == TW_HYBRID || method == TW_WARP_VERTEX)
                Kb = tw_corot_block_add(Kb, d.S + TW_COROT_PACK * (size_t)e, p, q);
            else
                Kb = tw_green_block_add(Kb, d.S + TW_GREEN_PACK * (size_t)e, p, q);
        }
    }
    tw_m3_store(d.A + 9 * (size_t)b, tw_system_block(&s, Kb, i, b == d.diag[i], d.P->cm, d.P->ck));
}

/* ---- prescribed velocities (warm start, prescribe_constrained) ---- */

__global__ void prescribe_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    int warm_start = d.P->warm_start;
    for (int c = 0; c < 3; c++) {
        size_t k = 3 * (size_t)i + c;
        d.vnew[k] = warm_start ? d.v[k] : 0;
    }
    tw_step_view s = tw_cuda_step_view(d);
    tw_prescribe_vertex(&s, i, d.xbase, d.P->heff, d.vnew);
}

/* ---- conserve_momentum (host/step.c) ---- */

__global__ void momentum_partials(tw_cuda_data d, double *partial)
{
    double s[3] = {0, 0, 0}, heff = d.P->heff;
    const double *grav = d.P->gravity;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x)
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            s[c] += d.mass[i] * ((double)d.vnew[k] - d.vbase[k]) - heff * (d.mass[i] * grav[c] + d.fext[k]);
        }
    tw_block_partials<3>(s, partial);
}

/* the spring's share of p, from the spring vertex's xbase and vnew before
 * the shift (as on the CPU): p -= heff k (anchor - xbase - heff vnew); one
 * thread */
__global__ void momentum_spring(tw_cuda_data d, double *scalars)
{
    const tw_cuda_params *P = d.P;
    int i = P->spring_vertex;
    if (i < 0) return;
    for (int c = 0; c < 3; c++) {
        size_t k = 3 * (size_t)i + c;
        scalars[TW_S_MOM + c] -=
            P->heff * P->spring_k * (P->anchor[c] - (double)d.xbase[k] - P->heff * (double)d.vnew[k]);
    }
}

/* vnew -= p / M_total (after momentum_spring); nothing when a contact can
 * push back (the CPU's conserve_momentum returns when any vertex is in its
 * contact filter) */
__global__ void remove_momentum(tw_cuda_data d, const double *scalars, double mass_total)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n || d.st->contacts) return;
    for (int c = 0; c < 3; c++) d.vnew[3 * (size_t)i + c] -= (tw_real)(scalars[TW_S_MOM + c] / mass_total);
}

/* ---- x = xbase + heff v ---- */

__global__ void integrate_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 3 * d.n || !d.st->ok) return; /* a failed check leaves the state as it was */
    if (d.xprev) { /* BDF2: this step's state is the next one's history */
        d.xprev[i] = d.x[i];
        d.vprev[i] = d.v[i];
    }
    d.v[i] = d.vnew[i];
    d.x[i] = d.xbase[i] + (tw_real)d.P->heff * d.v[i]; /* xbase is x itself for implicit Euler */
}

/* ---- the divergence check (host/step.c check_velocities) ---- */

/* One block's (smallest non-finite vertex, largest speed and its vertex, the
 * lower index among equal speeds) into element 0 of the shared arrays. */
__device__ void divergence_block_reduce(int *sh_bad, double *sh_v, int *sh_i, int bad, double vmax, int vi)
{
    int t = threadIdx.x;
    sh_bad[t] = bad; sh_v[t] = vmax; sh_i[t] = vi;
    __syncthreads();
    for (int h = TW_CUDA_THREADS / 2; h > 0; h >>= 1) {
        if (t < h) {
            sh_bad[t] = min(sh_bad[t], sh_bad[t + h]);
            if (sh_v[t + h] > sh_v[t] || (sh_v[t + h] == sh_v[t] && sh_i[t + h] < sh_i[t])) {
                sh_v[t] = sh_v[t + h];
                sh_i[t] = sh_i[t + h];
            }
        }
        __syncthreads();
    }
}

/* (first non-finite vertex, max speed, its vertex): per block into partial
 * (3 rows of gridDim.x: the index as a double, the speed, its index) */
__global__ void divergence_partials(tw_cuda_data d, double *partial)
{
    __shared__ int sh_bad[TW_CUDA_THREADS], sh_i[TW_CUDA_THREADS];
    __shared__ double sh_v[TW_CUDA_THREADS];
    tw_divergence dv = tw_divergence_none(); /* this thread's vertices, i growing: the CPU's loop body */
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x)
        tw_divergence_add(&dv, d.vnew, i);
    int t = threadIdx.x;
    divergence_block_reduce(sh_bad, sh_v, sh_i, dv.nonfinite_vertex < 0 ? d.n : dv.nonfinite_vertex, dv.vmax,
                            dv.vmax_vertex);
    if (t == 0) {
        partial[blockIdx.x] = sh_bad[0];
        partial[gridDim.x + blockIdx.x] = sh_v[0];
        partial[2 * gridDim.x + blockIdx.x] = sh_i[0];
    }
}

/* the nb partials into st (one block) */
__global__ void divergence_finish(tw_cuda_data d, const double *partial, int nb)
{
    __shared__ int sh_bad[TW_CUDA_THREADS], sh_i[TW_CUDA_THREADS];
    __shared__ double sh_v[TW_CUDA_THREADS];
    int t = threadIdx.x, bad = d.n, vi = 0;
    double vmax = 0;
    for (int j = t; j < nb; j += TW_CUDA_THREADS) {
        int b = (int)partial[j], i = (int)partial[2 * nb + j];
        double v = partial[nb + j];
        if (b < bad) bad = b;
        if (v > vmax || (v == vmax && i < vi)) { vmax = v; vi = i; }
    }
    divergence_block_reduce(sh_bad, sh_v, sh_i, bad, vmax, vi);
    if (t == 0) {
        tw_divergence dv;
        dv.nonfinite_vertex = sh_bad[0] < d.n ? sh_bad[0] : -1;
        dv.vmax = sh_v[0];
        dv.vmax_vertex = sh_i[0];
        tw_cuda_status *st = d.st;
        st->nonfinite_vertex = dv.nonfinite_vertex;
        st->vmax = dv.vmax;
        st->vmax_vertex = dv.vmax_vertex;
        st->ok = tw_divergence_ok(&dv, st->residual, d.P->h, d.P->max_move);
    }
}

/* ---- hanging vertices (host/hanging.c), one thread per hanging vertex;
 * P's row of a hanging vertex is its constraint (hd/step_hanging.h) ---- */

__global__ void hanging_targets_kernel(tw_cuda_data d, int nhang, const int *hv, const int *ptr, const int *idx,
                                       const double *wt)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nhang) return;
    int i = hv[k];
    tw_hanging_target(ptr, idx, wt, d.x, d.v, d.P->h, i, d.target + 3 * (size_t)i);
}

/* vnew at the hanging vertices from their constrainers' (never hanging) */
__global__ void hanging_expand_kernel(tw_cuda_data d, int nhang, const int *hv, const int *ptr, const int *idx,
                                      const double *wt)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nhang) return;
    int i = hv[k];
    tw_hanging_row_expand(ptr, idx, wt, d.vnew, i, d.vnew + 3 * (size_t)i);
}

__global__ void hanging_average_kernel(tw_cuda_data d, int nhang, const int *hv, const int *ptr, const int *idx,
                                       const double *wt)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nhang || !d.st->ok) return; /* a failed step leaves the state as it was */
    size_t q = 3 * (size_t)hv[k];
    tw_hanging_average(ptr, idx, wt, d.x, d.v, hv[k], d.x + q, d.v + q);
}

} // namespace

tw_status tw_cuda_hanging_targets(tw_cuda_world *cw)
{
    if (!cw->nhang) return TW_OK;
    hanging_targets_kernel<<<tw_cuda_grid(cw->nhang), TW_CUDA_THREADS, 0, cw->stream>>>(
        cw->d, cw->nhang, cw->hang_vertex, cw->hp_ptr, cw->hp_idx, cw->hp_wt);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_hanging_expand(tw_cuda_world *cw)
{
    if (!cw->nhang) return TW_OK;
    hanging_expand_kernel<<<tw_cuda_grid(cw->nhang), TW_CUDA_THREADS, 0, cw->stream>>>(
        cw->d, cw->nhang, cw->hang_vertex, cw->hp_ptr, cw->hp_idx, cw->hp_wt);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_hanging_average(tw_cuda_world *cw)
{
    if (!cw->nhang) return TW_OK;
    hanging_average_kernel<<<tw_cuda_grid(cw->nhang), TW_CUDA_THREADS, 0, cw->stream>>>(
        cw->d, cw->nhang, cw->hang_vertex, cw->hp_ptr, cw->hp_idx, cw->hp_wt);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_rotations(tw_cuda_world *cw, tw_method m)
{
    const tw_cuda_data &d = cw->d;
    switch (m) {
    case TW_LINEAR: return TW_OK;
    case TW_WARP_VERTEX: rotations_warp_vertex<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d); break;
    case TW_WARP_EDGE: rotations_warp_edge<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d); break;
    case TW_COROT_ELEMENT:
    case TW_HYBRID:
    case TW_GREEN:
        if (cw->fused_element)
            rotation_force_element<<<tw_cuda_grid(d.nt), TW_CUDA_THREADS, 0, cw->stream>>>(d, (int)m);
        else
            rotations_element<<<tw_cuda_grid(d.nt), TW_CUDA_THREADS, 0, cw->stream>>>(d, m == TW_GREEN);
        break;
    default: return tw_fail(TW_ERR_UNSUPPORTED, "CUDA backend: method %d has no rotation kernel", (int)m);
    }
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_elastic_force(tw_cuda_world *cw, tw_method m, int ghost_correction)
{
    const tw_cuda_data &d = cw->d;
    if (m == TW_LINEAR || m == TW_WARP_VERTEX || m == TW_WARP_EDGE) {
        int warped = m != TW_LINEAR;
        vertex_force<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d, warped);
        TW_CUDA_LAUNCHED();
        if (warped && ghost_correction) {
            unsigned nb = tw_cuda_reduce_grid(d.n);
            net_force_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->partial);
            TW_CUDA_LAUNCHED();
            tw_status s = tw_cuda_reduce_finish(cw, 3, (int)nb, TW_S_NET);
            if (s != TW_OK) return s;
            remove_net_force<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->scalars, cw->mass_total);
            TW_CUDA_LAUNCHED();
        }
        return TW_OK;
    }
    if (!cw->fused_element) { /* else the rotations' kernel wrote fe */
        element_force<<<tw_cuda_grid(d.nt), TW_CUDA_THREADS, 0, cw->stream>>>(d, (int)m);
        TW_CUDA_LAUNCHED();
    }
    gather_element_forces<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_rhs(tw_cuda_world *cw)
{
    rhs_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_assemble(tw_cuda_world *cw, tw_method m, int exact_warp)
{
    if (m == TW_WARP_VERTEX && !exact_warp) {
        warp_vertex_pack_kernel<<<tw_cuda_grid(cw->d.nt), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
        TW_CUDA_LAUNCHED();
    }
    assemble_kernel<<<tw_cuda_grid(cw->d.nnzb), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, (int)m, exact_warp);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_prescribe(tw_cuda_world *cw)
{
    prescribe_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

static_assert(TW_CUDA_REDUCE_VALUES >= 3, "the divergence check keeps 3 rows of partials");

tw_status tw_cuda_check_divergence(tw_cuda_world *cw)
{
    unsigned nb = tw_cuda_reduce_grid(cw->d.n); /* 3 rows of nb fit in partial (TW_CUDA_REDUCE_VALUES >= 3) */
    divergence_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, cw->partial);
    TW_CUDA_LAUNCHED();
    divergence_finish<<<1, TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, cw->partial, (int)nb);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_conserve_momentum(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    unsigned nb = tw_cuda_reduce_grid(d.n);
    momentum_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->partial);
    TW_CUDA_LAUNCHED();
    tw_status s = tw_cuda_reduce_finish(cw, 3, (int)nb, TW_S_MOM);
    if (s != TW_OK) return s;
    momentum_spring<<<1, 1, 0, cw->stream>>>(d, cw->scalars);
    TW_CUDA_LAUNCHED();
    remove_momentum<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->scalars, cw->mass_total);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_integrate(tw_cuda_world *cw)
{
    integrate_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}
