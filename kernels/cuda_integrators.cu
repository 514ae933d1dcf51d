// BDF2 and explicit Newmark on the device: host/step.c's tw_world_step and
// newmark_step, one thread per vertex or component, calling the per-vertex
// arithmetic its loops call (host/hd/integrator.h).
//
// BDF2 is implicit Euler's step (cuda_kernels.cu, cuda_pcg.cu) on other
// base terms: every implicit kernel steps from d.xbase / d.vbase, which are
// d.x / d.v themselves in an implicit Euler world and, in a BDF2 world, the
// arrays bdf2_base writes first thing in each step, (4 x_n - x_n-1) / 3 and
// (4 v_n - v_n-1) / 3, with heff = 2h/3 (the step parameters say which:
// tw_cuda_params.history); after the assembly bdf2_rhs subtracts
// heff K' (xbase - x) from the right-hand side (an SpMV with the step's A);
// integrate keeps x, v in xprev, vprev before it writes the new state. On
// the first step (no history, or a setter reset it) xbase, vbase are copies
// of x, v, heff = h and the correction is exactly zero: the CPU's fall back
// to implicit Euler, in the same graph.
//
// Explicit Newmark has no solve: predict (xstart = x, x = the predicted
// positions, so the rotation and force kernels evaluate at x as they always
// do; the update carries its rounding, xres into it and xres_next out, as
// the CPU's does), [contact projection], rotations, elastic forces, update
// (vnew, anew), [contact projection of vnew, anew], the divergence check,
// commit (v, acc, xres = xres_next on success, x restored from xstart on
// failure; the graph keeps its pointers, so xres_next is copied, not
// swapped). The acceleration at the start comes from newmark_start, outside
// the graph, on the world's first step and after a setter reset it
// (tw_cuda_step_in.has_acc), which also zeroes xres.
//
// warp-vertex under BDF2, when nothing does work on the body, ends each
// step with tw_world_step's energy projection (host/step.c
// bdf2_energy_projection): the mechanical energy (kinetic + elastic +
// gravity; hd/integrator.h tw_vertex_mechanical_energy, hd/step.h
// tw_element_energy_density) at the step's start and end as deterministic
// reductions (cuda_reduce.cuh), and when the committed step gained energy
// the free vertices' velocities relative to the centre of mass (to v itself
// when a vertex is constrained) scaled by sqrt(1 - excess / k): the factor
// decided on the device by one thread (energy_decide), nothing read back.
// The CPU sums serially, the device by blocks: the factor agrees to
// rounding, not bit for bit. The energy check (host/step.c, any method and
// integrator, nothing doing work on the body) reads the same sums: the
// energy at the start, and at the end after the projection
// (tw_cuda_energy_end), read back as six scalars; the rule is host/step.c's.
//
// NEVER RUN ON A GPU: written and compiled (float and double builds, nvcc 13,
// sm_90) on a machine without one; tests/test_gpu_backend.c's bdf2 and
// explicit cases against the CPU are what a session with a device runs
// first.
#include "cuda_internal.h"
#include "cuda_reduce.cuh"
#include "hd/integrator.h"

namespace {

/* ---- BDF2 ---- */

__global__ void bdf2_base_kernel(tw_cuda_data d)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    if (d.P->history) {
        d.xb[k] = tw_bdf2_base(d.x[k], d.xprev[k]);
        d.vb[k] = tw_bdf2_base(d.v[k], d.vprev[k]);
    } else { /* the first step: implicit Euler */
        d.xb[k] = d.x[k];
        d.vb[k] = d.v[k];
    }
}

/* p = xbase - x, the displacement the correction applies K' to */
__global__ void bdf2_displacement_kernel(tw_cuda_data d, tw_real *p)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    p[k] = d.xbase[k] - d.x[k];
}

/* rhs -= heff (A p - cm M p) / ck, with q = A p */
__global__ void bdf2_rhs_kernel(tw_cuda_data d, const tw_real *p, const tw_real *q)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    const tw_cuda_params *P = d.P;
    d.rhs[k] = tw_bdf2_rhs_corrected(d.rhs[k], q[k], p[k], d.mass[k / 3], P->heff, P->cm, P->ck);
}

/* ---- explicit Newmark ---- */

/* a = M^-1 (f + f_ext) - alpha v at x (f from the force kernels); no
 * rounding carried into the first position update */
__global__ void newmark_start_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    int moving = d.mass[i] > 0 && !d.cons[i];
    tw_step_view s = tw_cuda_step_view(d);
    tw_real ext[3];
    tw_external_force_vertex(&s, d.x, i, ext); /* tw_external_force's body */
    for (int c = 0; c < 3; c++) {
        size_t k = 3 * (size_t)i + c;
        d.acc[k] = tw_newmark_start_acc(d.f[k] + ext[c], d.mass[i], d.v[k], d.P->alpha, moving);
        d.xres[k] = 0;
    }
}

/* what the host reads of a step without a solve (host/step.c: 0 iterations,
 * residual 0); the divergence check then fills the rest */
__global__ void explicit_status_kernel(tw_cuda_status *st)
{
    st->active = 0;
    st->iterations = 0;
    st->negative_curvature = 0;
    st->bnorm = 1;
    st->rn = 0;
    st->residual = 0;
}

__global__ void newmark_predict_kernel(tw_cuda_data d)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    tw_real x = d.x[k];
    d.xstart[k] = x;
    d.x[k] = tw_newmark_position_carried(d.cons[k / 3], x, d.v[k], d.acc[k], d.target[k], d.P->h, d.xres[k],
                                         &d.xres_next[k]);
}

/* vnew, anew from f at the predicted x (newmark_step's last loop) */
__global__ void newmark_update_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    double h = d.P->h, alpha = d.P->alpha;
    tw_step_view s = tw_cuda_step_view(d);
    tw_real ext[3];
    tw_external_force_vertex(&s, d.x, i, ext); /* tw_external_force's body */
    for (int c = 0; c < 3; c++) {
        size_t k = 3 * (size_t)i + c;
        if (d.cons[i]) {
            d.vnew[k] = tw_newmark_constrained_velocity(d.x[k], d.xstart[k], h);
            d.anew[k] = 0;
            continue;
        }
        tw_newmark_velocity(d.f[k] + ext[c], d.mass[i], d.v[k], d.acc[k], h, alpha, &d.vnew[k],
                            &d.anew[k]);
    }
}

__global__ void newmark_commit_kernel(tw_cuda_data d)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    if (d.st->ok) {
        d.v[k] = d.vnew[k];
        d.acc[k] = d.anew[k];
        d.xres[k] = d.xres_next[k];
    } else {
        d.x[k] = d.xstart[k]; /* a failed check leaves the state as it was */
    }
}

/* ---- the mechanical energy: warp-vertex under BDF2's energy projection, the energy check ---- */

/* Per block (kinetic, elastic, gravity) at x, v: host/step.c
 * mechanical_energy's vertex terms and tw_compute_elastic_energy's element
 * terms, or linear's vertex terms (hd/integrator.h, hd/step.h), one
 * grid-stride loop over both. start: the pass at the step's start, which
 * sums nothing when P->energy_skip_start (uniform: every block still
 * writes its zero partials). */
__global__ void energy_partials(tw_cuda_data d, int method, int start, double *partial)
{
    double s[3] = {0, 0, 0};
    tw_step_view sv = tw_cuda_step_view(d);
    int count = start && d.P->energy_skip_start ? 0 : d.n > d.nt ? d.n : d.nt, linear = method == TW_LINEAR;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        if (i < d.n) {
            size_t q = 3 * (size_t)i;
            tw_vertex_mechanical_energy(d.mass[i], d.v + q, d.x + q, d.X + q, sv.gravity, &s[0], &s[2]);
            if (linear) s[1] += tw_linear_vertex_energy(&sv, d.x, i);
        }
        if (i < d.nt && !linear) s[1] += (double)tw_element_energy_density(&sv, d.x, i, (tw_method)method) * d.vol[i];
    }
    tw_block_partials<3>(s, partial);
}

/* Per block (sum m v, sum m) over the vertices; zeros when a vertex is
 * constrained (bdf2_energy_projection scales v itself then: vc = 0). */
__global__ void centre_partials(tw_cuda_data d, double *partial)
{
    double s[4] = {0, 0, 0, 0};
    if (!d.P->energy_held)
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
            for (int c = 0; c < 3; c++) s[c] += d.mass[i] * (double)d.v[3 * (size_t)i + c];
            s[3] += d.mass[i];
        }
    tw_block_partials<4>(s, partial);
}

/* component c of the centre of mass's velocity from the sums (0 when held) */
__device__ __forceinline__ double centre_velocity(const double *scalars, int c)
{
    double mt = scalars[TW_S_VC + 3];
    return mt > 0 ? scalars[TW_S_VC + c] / mt : 0;
}

/* Per block the kinetic energy relative to the centre of mass. */
__global__ void relative_kinetic_partials(tw_cuda_data d, const double *scalars, double *partial)
{
    double s[1] = {0}, vc[3];
    for (int c = 0; c < 3; c++) vc[c] = centre_velocity(scalars, c);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x)
        for (int c = 0; c < 3; c++) {
            double u = (double)d.v[3 * (size_t)i + c] - vc[c];
            s[0] += 0.5 * d.mass[i] * u * u;
        }
    tw_block_partials<1>(s, partial);
}

/* One thread: does this step project, and by what factor (-1: it does not).
 * The energies add as mechanical_energy's k + e + g. */
__global__ void energy_decide(tw_cuda_data d, double *scalars)
{
    const double *e0 = scalars + TW_S_E0, *e1 = scalars + TW_S_E1;
    double excess = (e1[0] + e1[1] + e1[2]) - (e0[0] + e0[1] + e0[2]), k = scalars[TW_S_KREL];
    int project = d.st->ok && excess > 0 && k > 0;
    scalars[TW_S_SCALE] = project ? tw_energy_projection_scale(excess, k) : -1;
    d.st->energy_projected = project;
}

/* The free vertices' velocities: vc + scale (v - vc). */
__global__ void energy_scale_velocities(tw_cuda_data d, const double *scalars)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double scale = scalars[TW_S_SCALE];
    if (i >= d.n || scale < 0 || d.cons[i]) return;
    for (int c = 0; c < 3; c++) {
        size_t q = 3 * (size_t)i + c;
        d.v[q] = tw_energy_projection_velocity(d.v[q], centre_velocity(scalars, c), scale);
    }
}

/* ---- Newton iterations (newton_refine, step_residual) ---- */

__global__ void newton_positions_kernel(tw_cuda_data d, const tw_real *xb, const tw_real *v)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    d.x[k] = xb[k] + (tw_real)d.P->heff * v[k];
}

/* G per vertex (f_ext at x, then the residual), S G, per block |S G|^2 */
__global__ void newton_residual_partials(tw_cuda_data d, const tw_real *v, const tw_real *Av, tw_real *G,
                                         const unsigned char *fcons, double *partial)
{
    const tw_cuda_params *P = d.P;
    tw_step_view sv = tw_cuda_step_view(d);
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
        size_t k = 3 * (size_t)i;
        tw_external_force_vertex(&sv, d.x, i, G + k); /* tw_external_force's body */
        tw_newton_residual_vertex(d.mass[i], v + k, d.vbase + k, Av + k, d.f + k, P->heff, P->alpha, P->beta, P->cm,
                                  P->ck, G + k);
        s[0] += tw_newton_filter_vertex(fcons[i], d.cnormal + k, G + k);
    }
    tw_block_partials<1>(s, partial);
}

__global__ void newton_axpy_kernel(int n3, const tw_real *v, const tw_real *dv, tw_real a, tw_real *out)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n3) return;
    out[k] = v[k] + a * dv[k];
}

__global__ void newton_negate_kernel(int n3, const tw_real *G, tw_real *out)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n3) return;
    out[k] = -G[k];
}

/* per block the vertices whose rotation in d.R turned from R0's by more
 * than TW_WARP_TURN (tw_rotation_turn_cos, as the CPU's test) */
__global__ void warp_turn_partials(tw_cuda_data d, const tw_real *R0, double *partial)
{
    const double cthr = cos(TW_WARP_TURN);
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x)
        s[0] += tw_rotation_turn_cos(R0, d.R, i) < cthr ? 1 : 0;
    tw_block_partials<1>(s, partial);
}

} // namespace

tw_status tw_cuda_warp_turn(tw_cuda_world *cw, const tw_real *R0)
{
    unsigned nb = tw_cuda_reduce_grid(cw->d.n);
    warp_turn_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, R0, cw->partial);
    TW_CUDA_LAUNCHED();
    return tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_TURN);
}

tw_status tw_cuda_newton_positions(tw_cuda_world *cw, const tw_real *xb, const tw_real *v)
{
    newton_positions_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, xb, v);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newton_residual(tw_cuda_world *cw, const tw_real *v, const tw_real *Av, tw_real *G)
{
    unsigned nb = tw_cuda_reduce_grid(cw->d.n);
    newton_residual_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, v, Av, G, tw_cuda_pcg_filter(cw),
                                                                      cw->partial);
    TW_CUDA_LAUNCHED();
    return tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_G);
}

tw_status tw_cuda_newton_axpy(tw_cuda_world *cw, const tw_real *v, const tw_real *dv, double a, tw_real *out)
{
    int n3 = 3 * cw->d.n;
    newton_axpy_kernel<<<tw_cuda_grid(n3), TW_CUDA_THREADS, 0, cw->stream>>>(n3, v, dv, (tw_real)a, out);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newton_negate(tw_cuda_world *cw, const tw_real *G, tw_real *out)
{
    int n3 = 3 * cw->d.n;
    newton_negate_kernel<<<tw_cuda_grid(n3), TW_CUDA_THREADS, 0, cw->stream>>>(n3, G, out);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

static_assert(TW_CUDA_REDUCE_VALUES >= 4, "the energy projection's centre of mass sums 4 values per block");

/* the energy (kinetic, elastic, gravity) at d.x, d.v into scalars[first..first+2] */
static tw_status energy_into(tw_cuda_world *cw, tw_method m, int first)
{
    const tw_cuda_data &d = cw->d;
    unsigned nb = tw_cuda_reduce_grid(d.n > d.nt ? d.n : d.nt);
    energy_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, (int)m, first == TW_S_E0, cw->partial);
    TW_CUDA_LAUNCHED();
    return tw_cuda_reduce_finish(cw, 3, (int)nb, first);
}

tw_status tw_cuda_energy_start(tw_cuda_world *cw, tw_method m) { return energy_into(cw, m, TW_S_E0); }

tw_status tw_cuda_energy_end(tw_cuda_world *cw, tw_method m) { return energy_into(cw, m, TW_S_E1); }

tw_status tw_cuda_energy_projection(tw_cuda_world *cw, tw_method m)
{
    const tw_cuda_data &d = cw->d;
    tw_status s;
    if ((s = energy_into(cw, m, TW_S_E1)) != TW_OK) return s;
    unsigned nb = tw_cuda_reduce_grid(d.n);
    centre_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->partial);
    TW_CUDA_LAUNCHED();
    if ((s = tw_cuda_reduce_finish(cw, 4, (int)nb, TW_S_VC)) != TW_OK) return s;
    relative_kinetic_partials<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->scalars, cw->partial);
    TW_CUDA_LAUNCHED();
    if ((s = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_KREL)) != TW_OK) return s;
    energy_decide<<<1, 1, 0, cw->stream>>>(d, cw->scalars);
    TW_CUDA_LAUNCHED();
    energy_scale_velocities<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->scalars);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_bdf2_base(tw_cuda_world *cw)
{
    bdf2_base_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_bdf2_rhs(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    unsigned grid = tw_cuda_grid(3 * (long)d.n);
    bdf2_displacement_kernel<<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->p);
    TW_CUDA_LAUNCHED();
    tw_status s = tw_cuda_spmv_pq(cw); /* q = A p: the PCG's vectors are free until pcg_begin */
    if (s != TW_OK) return s;
    bdf2_rhs_kernel<<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->p, cw->q);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_start(tw_cuda_world *cw, tw_method m, int ghost_correction)
{
    tw_status s;
    if ((s = tw_cuda_rotations(cw, m)) != TW_OK) return s;
    if ((s = tw_cuda_elastic_force(cw, m, ghost_correction)) != TW_OK) return s;
    newmark_start_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_predict(tw_cuda_world *cw)
{
    explicit_status_kernel<<<1, 1, 0, cw->stream>>>(cw->d.st);
    TW_CUDA_LAUNCHED();
    newmark_predict_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_update(tw_cuda_world *cw)
{
    newmark_update_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_commit(tw_cuda_world *cw)
{
    newmark_commit_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}
