// Contact with colliders (static or moving) on the device: host/contact.c's
// loops, one thread per vertex, calling the same per-vertex math
// (host/hd/contact.h).
// For the implicit integrators (implicit Euler, BDF2: contacts detected at
// xbase), in implicit_solve's order (cuda_world.cu launches them):
//
//   assembly, prescribe -> contact_mark (nearest collider, first active set,
//   landing, first-pass friction) -> PCG filtered by fcons -> contact_patch
//   (the contact set's sums: tw_contact_patch) -> contact_update (release,
//   join, friction, impulses; counts read back) -> while it changed
//   something (host/step.c's rule): PCG again, contact_update -> divergence
//   check, integrate -> contact_project
//
// The passes are decided on the host from the counts, so a step with
// colliders runs host-driven, outside the CUDA Graph.
//
// For explicit Newmark, by projection (newmark_step): the predicted
// positions projected and marked (contact_project_predicted) before the
// forces, then the marked vertices' new velocity and acceleration
// (contact_project_newmark).
//
// The state kept between steps (each contact's last normal impulse) lives
// only on the device, as on the CPU it lives only in the world. Colliders are
// two small device arrays uploaded every step with colliders (cuda_world.cu
// upload_colliders): where the step starts (detection, landing, friction)
// and where it leaves them (the end-of-step projection); their count is a
// step parameter (tw_cuda_params.ncolliders).
//
// Moving colliders (host/contact.c's design note): the contact solves run
// for vnew - s (contact_shift_*: s the colliders' tangential velocity at
// their active contacts, rhs - A s by the PCG's own SpMV, the rhs saved and
// restored), and the force on each collider is a per-vertex array (cpush:
// contact_impulse_kernel after the passes, the projections' momentum added)
// summed per collider by a deterministic reduction (contact_force_kernel).
//
// NEVER RUN ON A GPU: written and compiled (nvcc 13, sm_90) on a machine
// without one; tests/test_gpu_backend.c's contact cases (cube on a floor
// against the CPU, bar on a sphere) are what a session with a device runs
// first. The moving colliders and the force are compiled only: no GPU
// test covers them yet.
#include "hd/contact.h"
#include "hd/integrator.h" /* tw_newmark_residual_projected */
#include "cuda_internal.h"
#include "cuda_reduce.cuh"

namespace {

/* May vertex i's contact stick (host/contact.c can_stick): a collider's,
 * with friction. */
__device__ int contact_can_stick(const tw_cuda_data &d, int i)
{
    return d.ccol[i] < d.P->ncolliders && d.cmu[i] > 0;
}

/* A stuck vertex's velocity in vnew (host/contact.c stick_velocity): from
 * xbase where the step has a history (BDF2's xb), else from x. By the
 * history, not by xbase != x: on BDF2's first step xb is a copy of x, and
 * that test would take the branch the CPU does not. */
__device__ void contact_stick_velocity(const tw_cuda_data &d, int i)
{
    size_t k = 3 * (size_t)i;
    tw_contact_stick_velocity_at(d.vnew + k, d.cnormal + k, d.cvel + k, d.x + k, d.P->history ? d.xbase + k : NULL,
                                 d.cdist[i], d.P->heff, d.P->h);
}

/* A stuck vertex's constraint impulse p = (A v - b)_i; returns its normal
 * part (host/contact.c stuck_impulse) */
__device__ double contact_stuck_impulse(const tw_cuda_data &d, int i, double p[3])
{
    const tw_real *nn = d.cnormal + 3 * (size_t)i;
    tw_contact_vertex_impulse(d.row_ptr, d.col, d.A, d.vnew, d.rhs, nn, 0, d.cvel + 3 * (size_t)i, i, p);
    return p[0] * nn[0] + p[1] * nn[1] + p[2] * nn[2];
}

/* tw_contact_detect, the landing loop of implicit_solve and
 * tw_contact_friction_implicit for one vertex each; sums the contacts */
__global__ void contact_mark_kernel(tw_cuda_data d, double *partial)
{
    const tw_cuda_params *P = d.P;
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
        unsigned char c = d.cons[i];
        d.fcons[i] = c;
        d.cfric[i] = 0; /* A is freshly assembled */
        d.cfprev[2 * (size_t)i + 1] = -1; /* no earlier solve this step */
        size_t k = 3 * (size_t)i;
        d.cslip[k] = d.cslip[k + 1] = d.cslip[k + 2] = 0; /* rhs is new */
        if (c) continue;
        tw_real *nrm = d.cnormal + k;
        if (!tw_contact_mark_vertex(d.colliders, P->ncolliders, d.xbase + k, d.v + k, d.cimpulse[i], P->touch, P->heff,
                                    nrm, &d.cdist[i], &d.cmu[i], &d.ccol[i], d.cvel + k)) {
            d.cimpulse[i] = 0;
            continue;
        }
        d.fcons[i] = TW_FILTER_NORMAL;
        tw_contact_land(d.vnew + k, nrm, d.cdist[i], P->heff, tw_contact_reach(d.cvel + k, nrm, P->h));
        s[0] += 1;
        if (contact_can_stick(d, i) &&
            tw_contact_starts_stuck(d.v + k, d.cvel + k, nrm, d.cmu[i], d.cimpulse[i], P->vt_min)) {
            d.fcons[i] = TW_CONTACT_STICK;
            contact_stick_velocity(d, i);
            continue;
        }
        /* this thread's row only: the diagonal block and rhs row are no other vertex's */
        tw_contact_friction_block(d.A + 9 * (size_t)d.diag[i], d.rhs + k, nrm, d.v + k, d.cvel + k, d.cmu[i],
                                  d.cimpulse[i], P->vt_min, &d.cfric[i]);
    }
    tw_block_partials<1>(s, partial);
}

__global__ void contact_count_kernel(tw_cuda_status *st, const double *scalars)
{
    st->contacts = (int)scalars[TW_S_CONTACTS];
}

/* tw_contact_patch's sums over the active contacts, values 3 part .. 3 part
 * + 2 of them (a reduction holds at most TW_CUDA_REDUCE_VALUES). */
__global__ void contact_patch_kernel(tw_cuda_data d, int part, double *partial)
{
    double s[3] = {0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
        if (!tw_contact_active(d.fcons[i]) || d.cons[i] || !(d.cdist[i] < INFINITY)) continue;
        size_t k = 3 * (size_t)i;
        double all[TW_CONTACT_PATCH_SUMS] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
        if (d.fcons[i] == TW_CONTACT_STICK) {
            double p[3], J = contact_stuck_impulse(d, i, p);
            for (int a = 0; a < 3; a++) p[a] -= J * d.cnormal[k + a];
            tw_contact_patch_add_impulse(all, p, NULL, d.cvel + k, d.cnormal + k, d.cmu[i], J);
        } else {
            double J = tw_contact_impulse(d.row_ptr, d.col, d.A, d.vnew, d.rhs, d.cnormal + k, i);
            if (tw_contact_slipping(d.cslip + k)) {
                double sl[3] = {d.cslip[k], d.cslip[k + 1], d.cslip[k + 2]};
                tw_contact_patch_add_impulse(all, sl, d.vnew + k, d.cvel + k, d.cnormal + k, d.cmu[i], J);
            } else {
                tw_contact_patch_add(all, d.vnew + k, d.cvel + k, d.cnormal + k, d.cfric[i], d.cmu[i], J);
            }
        }
        for (int a = 0; a < 3; a++) s[a] += all[3 * part + a];
    }
    tw_block_partials<3>(s, partial);
}

/* tw_contact_update for one vertex each (the tolerances are host/contact.c's);
 * sums the active vertices, the changed ones and those with friction off
 * Coulomb's. The impulse reads the row of A and vnew: no vertex's update
 * writes what another's impulse reads (its own diagonal block only, after
 * its impulse; the joined vertices land in contact_land_kernel, after). */
__global__ void contact_update_kernel(tw_cuda_data d, const double *scalars, double *partial)
{
    const tw_cuda_params *P = d.P;
    double patch_v = tw_contact_patch_speed(scalars + TW_S_PATCH, P->patch_mass * P->cm, TW_CONTACT_PTOL, P->vt_min);
    if (patch_v == 0 && P->ncolliders &&
        tw_contact_patch_stops(scalars + TW_S_PATCH, P->patch_mass * P->cm, TW_CONTACT_PTOL, P->vt_min))
        patch_v = TW_CONTACT_PATCH_STOPS; /* host/contact.c tw_contact_patch */
    double gn = sqrt(P->gravity[0] * P->gravity[0] + P->gravity[1] * P->gravity[1] + P->gravity[2] * P->gravity[2]);
    double s[3] = {0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
        if (d.cons[i] || !(d.cdist[i] < INFINITY)) continue;
        size_t k = 3 * (size_t)i;
        double J = 0, p[3];
        int stuck = d.fcons[i] == TW_CONTACT_STICK;
        if (d.fcons[i] == TW_FILTER_NORMAL) J = tw_contact_impulse(d.row_ptr, d.col, d.A, d.vnew, d.rhs, d.cnormal + k, i);
        if (stuck) J = contact_stuck_impulse(d, i, p);
        /* its rhs row only, after its own impulse read it */
        int r = tw_contact_update_vertex(&d.fcons[i], d.A + 9 * (size_t)d.diag[i], d.rhs + k, &d.cfric[i],
                                         &d.cimpulse[i], d.cfprev + 2 * (size_t)i, d.vnew + k, d.cvel + k,
                                         d.cnormal + k, d.cdist[i], tw_contact_reach(d.cvel + k, d.cnormal + k, P->h),
                                         d.cmu[i], J, P->heff, d.mass[i] * P->cm,
                                         TW_CONTACT_JTOL * d.mass[i] * gn * P->heff, P->gtol, P->vt_min,
                                         tw_contact_rounding_speed(P->touch, d.xbase + k, P->heff), TW_CONTACT_FTOL,
                                         patch_v, contact_can_stick(d, i), d.cslip + k, stuck ? p : NULL);
        s[0] += tw_contact_active(d.fcons[i]);
        s[1] += (r & TW_CONTACT_CHANGED) != 0;
        s[2] += (r & TW_CONTACT_FRICTION) != 0;
    }
    tw_block_partials<3>(s, partial);
}

/* tw_contact_newton_hold for one vertex each: an active contact with
 * friction held whole for the Newton iterations (on), or released */
__global__ void contact_newton_hold_kernel(tw_cuda_data d, int on)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < d.n) /* a slip friction held too */
        tw_contact_hold_vertex(&d.fcons[i], tw_contact_slipping(d.cslip + 3 * (size_t)i) ? 1 : d.cfric[i], on);
}

/* the landing loop after tw_contact_update's: every active vertex's normal
 * velocity lands it (the joined ones; the others keep theirs) */
__global__ void contact_land_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < d.n && d.fcons[i] == TW_CONTACT_STICK) contact_stick_velocity(d, i);
    if (i >= d.n || d.fcons[i] != TW_FILTER_NORMAL) return;
    size_t k = 3 * (size_t)i;
    tw_contact_land(d.vnew + k, d.cnormal + k, d.cdist[i], d.P->heff, tw_contact_reach(d.cvel + k, d.cnormal + k, d.P->h));
}

__global__ void contact_update_count_kernel(tw_cuda_status *st, const double *scalars)
{
    st->contacts = (int)scalars[TW_S_CONTACTS];
    st->contact_changed = (int)scalars[TW_S_CONTACTS + 1];
    st->contact_friction = (int)scalars[TW_S_CONTACTS + 2];
}

/* The momentum a projection gave vertex i (velocity v0 -> vi), over h, off
 * its collider's force (projection_force in host/contact.c). */
__device__ void contact_push(const tw_cuda_data &d, int i, const tw_real *v0, const tw_real *vi)
{
    if (d.ccol[i] >= d.P->ncolliders) return;
    double m = d.mass[i];
    for (int a = 0; a < 3; a++) d.cpush[3 * (size_t)i + a] -= (tw_real)(m * ((double)vi[a] - v0[a]) / d.P->h);
}

/* tw_contact_project (positions, then the projected vertices' velocities),
 * against the colliders where the step leaves them */
__global__ void contact_project_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n || !d.st->ok || d.cons[i]) return; /* a failed step changed nothing */
    size_t k = 3 * (size_t)i;
    tw_real nrm[3], mu;
    if (tw_contact_project_vertex(d.colliders_end, d.P->ncolliders, d.x + k, nrm, &mu, &d.ccol[i], d.cvel + k)) {
        tw_real v0[3] = {d.v[k], d.v[k + 1], d.v[k + 2]};
        tw_contact_project_velocity(d.v + k, nrm, mu, d.cvel + k);
        contact_push(d, i, v0, d.v + k);
    }
}

/* After the contact passes: each active contact's impulse over heff, with
 * the sign turned, in cpush (tw_contact_forces); 0 elsewhere. Reads the
 * rows of A and vnew; writes only its own cpush. */
__global__ void contact_impulse_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    size_t k = 3 * (size_t)i;
    double p[3] = {0, 0, 0};
    if (tw_contact_active(d.fcons[i]) && !d.cons[i] && d.ccol[i] < d.P->ncolliders) {
        tw_contact_vertex_impulse(d.row_ptr, d.col, d.A, d.vnew, d.rhs, d.cnormal + k, d.cfric[i], d.cvel + k, i, p);
        for (int a = 0; a < 3; a++) p[a] += d.cslip[k + a]; /* rhs holds it; the body's own rows do not */
    }
    for (int a = 0; a < 3; a++) d.cpush[k + a] = (tw_real)(-p[a] / d.P->heff);
}

/* After the contact passes: the active contacts that the step's start
 * velocity (v, not yet committed) took towards their collider faster than
 * gravity adds in a step (tw_contact_impact; host/step.c restarts BDF2 with
 * an implicit Euler step after one); sums them */
__global__ void contact_impact_kernel(tw_cuda_data d, double *partial)
{
    const tw_cuda_params *P = d.P;
    double vtol = P->h * sqrt(P->gravity[0] * P->gravity[0] + P->gravity[1] * P->gravity[1] +
                              P->gravity[2] * P->gravity[2]);
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
        if (!tw_contact_active(d.fcons[i]) || d.cons[i]) continue;
        size_t k = 3 * (size_t)i;
        s[0] += tw_contact_impact(d.v + k, d.cvel + k, d.cnormal + k, vtol);
    }
    tw_block_partials<1>(s, partial);
}

__global__ void contact_impact_count_kernel(tw_cuda_status *st, const double *scalars)
{
    st->impacts = (int)scalars[TW_S_IMPACTS];
}

/* The force on collider c: cpush summed over the vertices whose contact is
 * on it (deterministic partial sums) */
__global__ void contact_force_kernel(tw_cuda_data d, int c, double *partial)
{
    double s[3] = {0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
        if (d.ccol[i] != c) continue;
        for (int a = 0; a < 3; a++) s[a] += d.cpush[3 * (size_t)i + a];
    }
    tw_block_partials<3>(s, partial);
}

/* The shift of a contact solve (host/step.c solve_contacts): p = s, the
 * colliders' tangential velocity at the active contacts on moving ones
 * (tw_contact_shift), kept in shift */
__global__ void contact_shift_kernel(tw_cuda_data d, tw_real *p, tw_real *shift)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    size_t k = 3 * (size_t)i;
    const tw_real *vc = d.cvel + k, *nn = d.cnormal + k;
    double s[3] = {0, 0, 0};
    if (d.fcons[i] == TW_FILTER_NORMAL && !d.cons[i] && tw_contact_moving(vc)) {
        double vcn = (double)vc[0] * nn[0] + (double)vc[1] * nn[1] + (double)vc[2] * nn[2];
        for (int a = 0; a < 3; a++) s[a] = vc[a] - vcn * nn[a];
    }
    for (int a = 0; a < 3; a++) p[k + a] = shift[k + a] = (tw_real)s[a];
}

/* q = A s: the rhs saved, rhs - A s and vnew - s for the solve */
__global__ void contact_shift_apply_kernel(tw_cuda_data d, const tw_real *q, const tw_real *shift, tw_real *saved)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= 3 * d.n) return;
    saved[j] = d.rhs[j];
    d.rhs[j] -= q[j];
    d.vnew[j] -= shift[j];
}

/* after the solve: rhs restored, vnew + s */
__global__ void contact_shift_end_kernel(tw_cuda_data d, const tw_real *shift, const tw_real *saved)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= 3 * d.n) return;
    d.rhs[j] = saved[j];
    d.vnew[j] += shift[j];
}

/* explicit Newmark: tw_contact_project_positions on the predicted x (marks
 * fcons, normal, friction) and newmark_step's residual along the normal
 * dropped; sums the contacts */
__global__ void contact_project_predicted_kernel(tw_cuda_data d, double *partial)
{
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += gridDim.x * blockDim.x) {
        unsigned char c = d.cons[i];
        d.fcons[i] = c;
        size_t k = 3 * (size_t)i;
        d.cpush[k] = d.cpush[k + 1] = d.cpush[k + 2] = 0;
        if (c) continue;
        if (!tw_contact_project_vertex_touching(d.colliders_end, d.P->ncolliders, d.P->touch, d.x + k, d.cnormal + k,
                                                &d.cmu[i], &d.ccol[i], d.cvel + k))
            continue;
        d.fcons[i] = TW_FILTER_NORMAL;
        tw_newmark_residual_projected(d.xres_next + k, d.cnormal + k);
        s[0] += 1;
    }
    tw_block_partials<1>(s, partial);
}

/* explicit Newmark: tw_contact_project_velocities on vnew and anew */
__global__ void contact_project_newmark_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n || d.fcons[i] != TW_FILTER_NORMAL) return;
    size_t k = 3 * (size_t)i;
    tw_real v0[3] = {d.vnew[k], d.vnew[k + 1], d.vnew[k + 2]};
    tw_contact_project_velocity(d.vnew + k, d.cnormal + k, d.cmu[i], d.cvel + k);
    contact_push(d, i, v0, d.vnew + k);
    tw_contact_project_acceleration(d.anew + k, d.cnormal + k, d.cmu[i], d.vnew + k, d.cvel + k, d.P->h);
}

} // namespace

/* The nb per-block contact counts a kernel left in cw->partial into the
 * step's status (tw_step_stats.contacts). */
static tw_status count_contacts(tw_cuda_world *cw, unsigned nb)
{
    tw_status s = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_CONTACTS);
    if (s != TW_OK) return s;
    contact_count_kernel<<<1, 1, 0, cw->stream>>>(cw->d.st, cw->scalars);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_contact_mark(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    unsigned nb = tw_cuda_reduce_grid(d.n);
    contact_mark_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->partial);
    TW_CUDA_LAUNCHED();
    return count_contacts(cw, nb);
}

tw_status tw_cuda_contact_update(tw_cuda_world *cw, int *changed, int *friction)
{
    const tw_cuda_data &d = cw->d;
    unsigned nb = tw_cuda_reduce_grid(d.n);
    tw_status s;
    for (int part = 0; part < TW_CONTACT_PATCH_SUMS / 3; part++) { /* the contact set's sums (tw_contact_patch) */
        contact_patch_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, part, cw->partial);
        TW_CUDA_LAUNCHED();
        if ((s = tw_cuda_reduce_finish(cw, 3, (int)nb, TW_S_PATCH + 3 * part)) != TW_OK) return s;
    }
    contact_update_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->scalars, cw->partial);
    TW_CUDA_LAUNCHED();
    contact_land_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d);
    TW_CUDA_LAUNCHED();
    if ((s = tw_cuda_reduce_finish(cw, 3, (int)nb, TW_S_CONTACTS)) != TW_OK) return s;
    contact_update_count_kernel<<<1, 1, 0, cw->stream>>>(cw->d.st, cw->scalars);
    TW_CUDA_LAUNCHED();
    if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
    *changed = cw->hstatus.contact_changed;
    *friction = cw->hstatus.contact_friction;
    return TW_OK;
}

tw_status tw_cuda_contact_newton_hold(tw_cuda_world *cw, int on)
{
    contact_newton_hold_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, on);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_contact_project(tw_cuda_world *cw)
{
    contact_project_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_contact_project_predicted(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    unsigned nb = tw_cuda_reduce_grid(d.n);
    contact_project_predicted_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->partial);
    TW_CUDA_LAUNCHED();
    return count_contacts(cw, nb);
}

tw_status tw_cuda_contact_project_newmark(tw_cuda_world *cw)
{
    contact_project_newmark_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_contact_impulses(tw_cuda_world *cw)
{
    contact_impulse_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_contact_impacts(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    unsigned nb = tw_cuda_reduce_grid(d.n);
    contact_impact_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->partial);
    TW_CUDA_LAUNCHED();
    tw_status s = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_IMPACTS);
    if (s != TW_OK) return s;
    contact_impact_count_kernel<<<1, 1, 0, cw->stream>>>(cw->d.st, cw->scalars);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_contact_forces(tw_cuda_world *cw, int nc, double force[][3])
{
    const tw_cuda_data &d = cw->d;
    unsigned nb = tw_cuda_reduce_grid(d.n);
    for (int c = 0; c < nc; c++) {
        contact_force_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(d, c, cw->partial);
        TW_CUDA_LAUNCHED();
        tw_status s = tw_cuda_reduce_finish(cw, 3, (int)nb, TW_S_FORCE);
        if (s != TW_OK) return s;
        TW_CUDA_TRY(cudaMemcpyAsync(force[c], cw->scalars + TW_S_FORCE, 3 * sizeof(double), cudaMemcpyDeviceToHost,
                                    cw->stream));
    }
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    return TW_OK;
}

tw_status tw_cuda_contact_shift_begin(tw_cuda_world *cw)
{
    unsigned g = tw_cuda_grid(cw->d.n), g3 = tw_cuda_grid(3 * (long)cw->d.n);
    contact_shift_kernel<<<g, TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, cw->p, cw->shift);
    TW_CUDA_LAUNCHED();
    tw_status s = tw_cuda_spmv_pq(cw); /* q = A s: p and q are free between solves */
    if (s != TW_OK) return s;
    contact_shift_apply_kernel<<<g3, TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, cw->q, cw->shift, cw->shift_rhs);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_contact_shift_end(tw_cuda_world *cw)
{
    contact_shift_end_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d, cw->shift,
                                                                                                 cw->shift_rhs);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}
