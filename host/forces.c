/* Rotations, elastic forces and system matrices of every method, CPU side.
 *
 * The per-vertex and per-element loop bodies are hd/step.h's (over a
 * tw_step_view of the world, tw_world_view), which the CUDA kernels run one
 * thread per vertex or element; the system matrix's rows use hd/element.h.
 *
 *  method          rotations           force                        system K'
 *  linear          -                   -K(x-X)                      K
 *  warp-vertex     R_i=polar(A_i)      -R_i sum_j K_ij(R_i^T x_j-X_j) sum_e R_e K_e R_e^T, R_e from the
 *                                                                   R_i (sym, hd/step.h) or R_i K_ij R_i^T
 *  warp-edge       R_i=F'_i F_i^T      as warp-vertex               R_i K_ij R_j^T (sym) or R_i K_ij R_i^T
 *  corot-element   R_e=polar(F_e)      -V R_e P_c g_p per element   sum_e R_e K_e R_e^T (from R_e g, one triangle)
 *  green           F_e, S_e            -V F S g_p per element       StVK tangent, its geometric part at S's
 *                                                                   positive part (from a pack, one triangle)
 *  hybrid          R_e=polar(F_e)      -V P_hybrid g_p (hd/element.h)   as corot-element
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hd/element.h"
#include "hd/step.h"
#include "hd/step_fused.h"
#include "world.h"

void tw_compute_rotations(tw_world *w, const tw_real *x)
{
    const tw_fem *f = &w->fem;
    const tw_step_view s = tw_world_view(w);
    w->rot_cached = 0;
    switch (w->def.method) {
    case TW_LINEAR: break;
    case TW_WARP_VERTEX:
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(static)
        for (int i = 0; i < f->n; i++) tw_rotation_warp_vertex(&s, x, i);
        break;
    case TW_WARP_EDGE:
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(static)
        for (int i = 0; i < f->n; i++) tw_rotation_warp_edge(&s, x, i);
        break;
    case TW_COROT_ELEMENT:
    case TW_HYBRID:
    case TW_GREEN: {
        int green = w->def.method == TW_GREEN;
#pragma omp parallel for if (TW_PAR(f->nt)) num_threads(tw_world_threads(w)) schedule(static)
        for (int e = 0; e < f->nt; e++) tw_rotation_element(&s, x, e, green);
        break;
    }
    default: break;
    }
}

void tw_compute_elastic_force(tw_world *w, const tw_real *x, tw_real *out, int ghost_correction)
{
    const tw_fem *f = &w->fem;
    const tw_step_view s = tw_world_view(w);
    tw_method m = w->def.method;
    if (m == TW_LINEAR || m == TW_WARP_VERTEX || m == TW_WARP_EDGE) {
        int warped = m != TW_LINEAR;
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(static)
        for (int i = 0; i < f->n; i++) tw_vertex_force(&s, x, i, warped, out);
        if (warped && ghost_correction) {
            /* internal forces must sum to zero; remove the net force mass-weighted */
            double net[3] = {0, 0, 0}, mt = 0;
            for (int i = 0; i < f->n; i++) {
                for (int c = 0; c < 3; c++) net[c] += out[3 * i + c];
                mt += f->mass[i];
            }
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(static)
            for (int i = 0; i < f->n; i++)
                for (int c = 0; c < 3; c++) out[3 * i + c] -= (tw_real)(net[c] * f->mass[i] / mt);
        }
        return;
    }
    /* per-element forces into fe (unless the energy check's pass left them
     * at this x), then a fixed-order gather per vertex */
    if (!tw_rotations_cached(w, x)) {
#pragma omp parallel for if (TW_PAR(f->nt)) num_threads(tw_world_threads(w)) schedule(static)
        for (int e = 0; e < f->nt; e++) tw_element_force(&s, x, e, m);
    }
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(static)
    for (int i = 0; i < f->n; i++) tw_gather_element_forces(&s, i, out);
}

/* corot-element, hybrid (an approximate Jacobian for hybrid: its pressure is
 * non-linear), warp-vertex's symmetric system (R_e from the vertex
 * rotations, tw_warp_vertex_element_pack): sum_e R_e K_e R_e^T from the
 * packed rotated gradients; green:
 * the StVK tangent from its pack. Either matrix is exactly symmetric
 * (hd/element.h tw_corot_block_add, tw_green_block_add), so row i gathers its
 * blocks (i, j >= i) and writes (j, i) as the transpose: half the block
 * arithmetic, the same numbers as gathering every block. The row is always
 * inlined into one loop per pack kind, so each loop knows its block. */
#if defined(__GNUC__)
#define ROW_INLINE static inline __attribute__((always_inline))
#else
#define ROW_INLINE static inline
#endif
ROW_INLINE void assemble_packed_row(tw_world *w, const tw_step_view *s, int i, double cm, double ck, int green)
{
    const tw_fem *f = &w->fem;
    const int stride = green ? TW_GREEN_PACK : TW_COROT_PACK;
    /* columns ascend: the diagonal block, then j > i */
    int b0 = f->diag[i], b1 = f->row_ptr[i + 1];
    memset(w->A + 9 * (size_t)b0, 0, sizeof(tw_real) * 9 * (size_t)(b1 - b0));
    /* elements around i in element order: each block sums in the order of its contrib list */
    for (int k = f->vt_ptr[i]; k < f->vt_ptr[i + 1]; k++) {
        int e = f->vt[k] >> 2, p = f->vt[k] & 3;
        const int *t = f->tets + 4 * (size_t)e;
        const tw_real *pk = w->S + stride * (size_t)e;
        for (int q = 0; q < 4; q++) {
            if (t[q] < i) continue;
            int b = b0;
            while (f->col[b] != t[q]) b++;
            tw_real *Ab = w->A + 9 * (size_t)b;
            tw_m3 Kb = tw_m3_load(Ab);
            Kb = green ? tw_green_block_add(Kb, pk, p, q) : tw_corot_block_add(Kb, pk, p, q);
            tw_m3_store(Ab, Kb);
        }
    }
    for (int b = b0; b < b1; b++) {
        tw_m3 Kb = tw_system_block(s, tw_m3_load(w->A + 9 * (size_t)b), i, b == b0, cm, ck);
        if (b != b0) tw_m3_store(w->A + 9 * (size_t)tw_fem_block(f, f->col[b], i), tw_m3_transpose(Kb));
        tw_m3_store(w->A + 9 * (size_t)b, Kb);
    }
}

void tw_assemble_system(tw_world *w, double cm, double ck)
{
    const tw_fem *f = &w->fem;
    const tw_step_view s = tw_world_view(w);
    tw_method m = w->def.method;
    int exact_warp = w->def.warp_system == TW_WARP_SYSTEM_BICGSTAB;
    if (m == TW_WARP_VERTEX && !exact_warp) {
#pragma omp parallel for if (TW_PAR(f->nt)) num_threads(tw_world_threads(w)) schedule(static)
        for (int e = 0; e < f->nt; e++) tw_warp_vertex_element_pack(&s, e);
    }
    if (m == TW_COROT_ELEMENT || m == TW_HYBRID || m == TW_GREEN || (m == TW_WARP_VERTEX && !exact_warp)) {
        if (m == TW_GREEN) {
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(dynamic, 256)
            for (int i = 0; i < f->n; i++) assemble_packed_row(w, &s, i, cm, ck, 1);
        } else {
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(dynamic, 256)
            for (int i = 0; i < f->n; i++) assemble_packed_row(w, &s, i, cm, ck, 0);
        }
        return;
    }
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) schedule(dynamic, 256)
    for (int i = 0; i < f->n; i++) {
        tw_m3 Ri = m == TW_LINEAR ? tw_m3_identity() : tw_m3_load(w->R + 9 * (size_t)i); /* warp-*: R_i */
        for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++) {
            tw_m3 Kb = tw_vertex_system_block(&s, b, f->col[b], m == TW_LINEAR ? NULL : &Ri, exact_warp);
            tw_m3_store(w->A + 9 * (size_t)b, tw_system_block(&s, Kb, i, b == f->diag[i], cm, ck));
        }
    }
}

double tw_compute_elastic_energy(tw_world *w, const tw_real *x)
{
    const tw_fem *f = &w->fem;
    const tw_step_view s = tw_world_view(w);
    double energy = 0;
    if (w->def.method == TW_LINEAR) {
#pragma omp parallel for if (TW_PAR(f->n)) num_threads(tw_world_threads(w)) reduction(+ : energy) schedule(static)
        for (int i = 0; i < f->n; i++) energy += tw_linear_vertex_energy(&s, x, i);
        return energy;
    }
    tw_method m = w->def.method;
#pragma omp parallel for if (TW_PAR(f->nt)) num_threads(tw_world_threads(w)) reduction(+ : energy) schedule(static)
    for (int e = 0; e < f->nt; e++) energy += (double)tw_element_energy_density(&s, x, e, m) * f->vol[e];
    return energy;
}

/* The element methods' rotation and force pass (tw_rotation_element_force,
 * hd/step_fused.h) with the energy density asked for: the same F, R,
 * pack and element forces as tw_rotation_element and tw_element_force, the
 * same psi and sum as tw_compute_elastic_energy, so the energy check's pass
 * at a step's end leaves the next step's rotations and element forces. */
double tw_compute_rotations_energy(tw_world *w, const tw_real *x)
{
    const tw_fem *f = &w->fem;
    tw_method m = w->def.method;
    if (m != TW_COROT_ELEMENT && m != TW_HYBRID && m != TW_GREEN) return tw_compute_elastic_energy(w, x);
    size_t n3 = 3 * (size_t)f->n;
    if (!w->rot_x) w->rot_x = malloc(sizeof(tw_real) * n3); /* no copy: no cache, the same energy */
    const tw_step_view s = tw_world_view(w);
    double energy = 0;
#pragma omp parallel for if (TW_PAR(f->nt)) num_threads(tw_world_threads(w)) reduction(+ : energy) schedule(static)
    for (int e = 0; e < f->nt; e++) {
        tw_real psi = 0;
        tw_rotation_element_force(&s, x, e, m, &psi);
        energy += (double)psi * f->vol[e];
    }
    if (w->rot_x) {
        memcpy(w->rot_x, x, sizeof(tw_real) * n3);
        w->rot_cached = 1;
        w->rot_method = m;
    }
    return energy;
}

int tw_rotations_cached(const tw_world *w, const tw_real *x)
{
    return w->rot_cached && w->rot_x && w->rot_method == (int)w->def.method &&
           !memcmp(w->rot_x, x, sizeof(tw_real) * 3 * (size_t)w->fem.n);
}

void tw_external_force(const tw_world *w, const tw_real *x, tw_real *out)
{
    const tw_step_view s = tw_world_view(w);
#pragma omp parallel for if (TW_PAR(s.n)) num_threads(tw_world_threads(w)) schedule(static)
    for (int i = 0; i < s.n; i++) tw_external_force_vertex(&s, x, i, out + 3 * (size_t)i);
}
