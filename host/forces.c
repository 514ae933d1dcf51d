/* Rotations, elastic forces and system matrices of every method, CPU side.
 *
 * Each loop body calls the TW_HD math in hd/element.h / hd/math3.h, so the CUDA
 * kernels can run the same body one thread per vertex, element or block.
 *
 *  method          rotations           force                        system K'
 *  linear          -                   -K(x-X)                      K
 *  warp-vertex     R_i=polar(A_i)      -R_i sum_j K_ij(R_i^T x_j-X_j) R_i K_ij R_j^T (sym) or R_i K_ij R_i^T
 *  warp-edge       R_i=F'_i F_i^T      as warp-vertex               as warp-vertex
 *  corot-element   R_e=polar(F_e)      -V R_e P_c g_p per element   sum_e R_e K_e R_e^T (from R_e g, one triangle)
 *  green           F_e, S_e            -V F S g_p per element       StVK tangent (from a pack, one triangle)
 *  hybrid          R_e=polar(F_e)      -V P_hybrid g_p (hd/element.h)   as corot-element
 */
#include <math.h>
#include <string.h>

#include "hd/element.h"
#include "world.h"

static tw_v3 vtx(const tw_real *x, int i) { return tw_v3_load(x + 3 * (size_t)i); }

/* The displacements u = x - X of element e's vertices. */
static void element_displacements(const tw_world *w, const tw_real *x, int e, tw_v3 us[4])
{
    const int *t = w->fem.tets + 4 * (size_t)e;
    for (int p = 0; p < 4; p++) us[p] = tw_v3_sub(vtx(x, t[p]), vtx(w->fem.X, t[p]));
}

void tw_compute_rotations(tw_world *w, const tw_real *x)
{
    const tw_fem *f = &w->fem;
    const tw_real *X = f->X;
    switch (w->def.method) {
    case TW_LINEAR: break;
    case TW_WARP_VERTEX:
#pragma omp parallel for if (TW_PAR(f->n)) schedule(static)
        for (int i = 0; i < f->n; i++) {
            tw_v3 xi = vtx(x, i), Xi = vtx(X, i);
            tw_m3 A = tw_m3_zero();
            for (int k = f->row_ptr[i]; k < f->row_ptr[i + 1]; k++) {
                int j = f->col[k];
                A = tw_m3_add_outer(A, tw_v3_sub(vtx(x, j), xi), tw_v3_sub(vtx(X, j), Xi), 1);
            }
            tw_m3_store(w->R + 9 * (size_t)i, tw_polar3(A));
        }
        break;
    case TW_WARP_EDGE:
#pragma omp parallel for if (TW_PAR(f->n)) schedule(static)
        for (int i = 0; i < f->n; i++) {
            int j = w->edge_nbr[2 * i], k = w->edge_nbr[2 * i + 1];
            tw_m3 R = tw_m3_identity();
            if (j >= 0)
                R = tw_m3_mul_bt(tw_edge_frame(vtx(x, i), vtx(x, j), vtx(x, k)),
                                 tw_edge_frame(vtx(X, i), vtx(X, j), vtx(X, k)));
            tw_m3_store(w->R + 9 * (size_t)i, R);
        }
        break;
    case TW_COROT_ELEMENT:
    case TW_HYBRID:
    case TW_GREEN:
#pragma omp parallel for if (TW_PAR(f->nt)) schedule(static)
        for (int e = 0; e < f->nt; e++) {
            tw_v3 xs[4];
            element_displacements(w, x, e, xs);
            tw_m3 F = tw_elem_deformation(xs, f->g + 12 * (size_t)e);
            if (w->def.method != TW_GREEN) { /* corot-element, hybrid */
                tw_m3 R = tw_polar3(F);
                tw_m3_store(w->R + 9 * (size_t)e, R);
                /* rotated gradients and V lambda, V mu for the system matrix */
                tw_corot_pack(w->S + TW_COROT_PACK * (size_t)e, R, f->g + 12 * (size_t)e, f->vol[e], f->lam[e], f->mu[e]);
            } else {
                /* F for the force, the tangent's per-element terms and S packed */
                tw_m3_store(w->R + 9 * (size_t)e, F);
                tw_green_pack(w->S + TW_GREEN_PACK * (size_t)e, F, tw_m3_mul_bt(F, F), tw_stvk_S(F, f->lam[e], f->mu[e], NULL),
                              f->g + 12 * (size_t)e, f->vol[e], f->lam[e], f->mu[e]);
            }
        }
        break;
    default: break;
    }
}

/* Per-element forces into fe, then a fixed-order gather per vertex. */
static void gather_element_forces(tw_world *w, tw_real *out)
{
    const tw_fem *f = &w->fem;
#pragma omp parallel for if (TW_PAR(f->n)) schedule(static)
    for (int i = 0; i < f->n; i++) {
        double s0 = 0, s1 = 0, s2 = 0; /* double: element forces cancel */
        for (int k = f->vt_ptr[i]; k < f->vt_ptr[i + 1]; k++) {
            const tw_real *fp = w->fe + 3 * (size_t)f->vt[k]; /* vt = 4e+p, fe = 12 per e */
            s0 += fp[0]; s1 += fp[1]; s2 += fp[2];
        }
        out[3 * i] = (tw_real)s0; out[3 * i + 1] = (tw_real)s1; out[3 * i + 2] = (tw_real)s2;
    }
}

/* sum_j K_ij y_j over row i, y_j = R^T x_j - X_j written as
 * R^T u_j + (R^T - I) X_j (the displacement form keeps float's small
 * strains, see hd/element.h); R = NULL means the identity. Accumulated in double. */
static tw_v3 row_K_times_y(const tw_fem *f, const tw_real *x, int i, const tw_m3 *R)
{
    double acc[3] = {0, 0, 0};
    for (int k = f->row_ptr[i]; k < f->row_ptr[i + 1]; k++) {
        int j = f->col[k];
        tw_v3 Xj = vtx(f->X, j), uj = tw_v3_sub(vtx(x, j), Xj);
        tw_v3 y = R ? tw_v3_add(tw_m3_tmulv(*R, uj), tw_v3_sub(tw_m3_tmulv(*R, Xj), Xj)) : uj;
        tw_v3 ky = tw_m3_mulv(tw_m3_load(f->K + 9 * (size_t)k), y);
        acc[0] += ky.x; acc[1] += ky.y; acc[2] += ky.z;
    }
    return tw_v3_make((tw_real)acc[0], (tw_real)acc[1], (tw_real)acc[2]);
}

void tw_compute_elastic_force(tw_world *w, const tw_real *x, tw_real *out, int ghost_correction)
{
    const tw_fem *f = &w->fem;
    tw_method m = w->def.method;
    if (m == TW_LINEAR || m == TW_WARP_VERTEX || m == TW_WARP_EDGE) {
        int warped = m != TW_LINEAR;
#pragma omp parallel for if (TW_PAR(f->n)) schedule(static)
        for (int i = 0; i < f->n; i++) {
            tw_m3 Ri = warped ? tw_m3_load(w->R + 9 * (size_t)i) : tw_m3_identity();
            tw_v3 a = row_K_times_y(f, x, i, warped ? &Ri : NULL);
            tw_v3_store(out + 3 * (size_t)i, tw_v3_scale(tw_m3_mulv(Ri, a), -1));
        }
        if (warped && ghost_correction) {
            /* internal forces must sum to zero; remove the net force mass-weighted */
            double net[3] = {0, 0, 0}, mt = 0;
            for (int i = 0; i < f->n; i++) {
                for (int c = 0; c < 3; c++) net[c] += out[3 * i + c];
                mt += f->mass[i];
            }
#pragma omp parallel for if (TW_PAR(f->n)) schedule(static)
            for (int i = 0; i < f->n; i++)
                for (int c = 0; c < 3; c++) out[3 * i + c] -= (tw_real)(net[c] * f->mass[i] / mt);
        }
        return;
    }
#pragma omp parallel for if (TW_PAR(f->nt)) schedule(static)
    for (int e = 0; e < f->nt; e++) {
        const tw_real *g = f->g + 12 * (size_t)e;
        tw_m3 P;
        if (m == TW_COROT_ELEMENT || m == TW_HYBRID) {
            tw_v3 xs[4];
            element_displacements(w, x, e, xs);
            tw_m3 F = tw_elem_deformation(xs, g), R = tw_m3_load(w->R + 9 * (size_t)e);
            P = m == TW_HYBRID ? tw_hybrid_P(F, R, f->lam[e], f->mu[e], NULL) : tw_corot_P(F, R, f->lam[e], f->mu[e], NULL);
        } else {
            P = tw_m3_mul(tw_m3_load(w->R + 9 * (size_t)e), tw_sym_load(w->S + TW_GREEN_PACK * (size_t)e + 40));
        }
        tw_v3 fp[4];
        tw_elem_forces_from_P(P, g, f->vol[e], fp);
        for (int p = 0; p < 4; p++) tw_v3_store(w->fe + 12 * (size_t)e + 3 * p, fp[p]);
    }
    gather_element_forces(w, out);
}

/* corot-element, hybrid (an approximate Jacobian for hybrid: its pressure is
 * non-linear): sum_e R_e K_e R_e^T from the packed rotated gradients; green:
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
ROW_INLINE void assemble_packed_row(tw_world *w, int i, double cm, double ck, int green)
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
        tw_m3 Kb = tw_m3_scale(tw_m3_load(w->A + 9 * (size_t)b), (tw_real)ck);
        if (b == b0) {
            tw_real d = (tw_real)(cm * f->mass[i]);
            if (i == w->spring_vertex) d += (tw_real)(ck * w->spring_k);
            Kb.m[0] += d; Kb.m[4] += d; Kb.m[8] += d;
        } else {
            tw_m3_store(w->A + 9 * (size_t)tw_fem_block(f, f->col[b], i), tw_m3_transpose(Kb));
        }
        tw_m3_store(w->A + 9 * (size_t)b, Kb);
    }
}

void tw_assemble_system(tw_world *w, double cm, double ck)
{
    const tw_fem *f = &w->fem;
    tw_method m = w->def.method;
    int exact_warp = w->def.warp_system == TW_WARP_SYSTEM_BICGSTAB;
    if (m == TW_COROT_ELEMENT || m == TW_HYBRID || m == TW_GREEN) {
        if (m == TW_GREEN) {
#pragma omp parallel for if (TW_PAR(f->n)) schedule(dynamic, 256)
            for (int i = 0; i < f->n; i++) assemble_packed_row(w, i, cm, ck, 1);
        } else {
#pragma omp parallel for if (TW_PAR(f->n)) schedule(dynamic, 256)
            for (int i = 0; i < f->n; i++) assemble_packed_row(w, i, cm, ck, 0);
        }
        return;
    }
#pragma omp parallel for if (TW_PAR(f->n)) schedule(dynamic, 256)
    for (int i = 0; i < f->n; i++) {
        tw_m3 Ri = tw_m3_identity();
        if (m == TW_WARP_VERTEX || m == TW_WARP_EDGE) Ri = tw_m3_load(w->R + 9 * (size_t)i);
        for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++) {
            tw_m3 Kb;
            if (m == TW_LINEAR) {
                Kb = tw_m3_load(f->K + 9 * (size_t)b);
            } else { /* warp-vertex, warp-edge */
                tw_m3 Rj = exact_warp ? Ri : tw_m3_load(w->R + 9 * (size_t)f->col[b]);
                Kb = tw_m3_mul_bt(tw_m3_mul(Ri, tw_m3_load(f->K + 9 * (size_t)b)), Rj);
            }
            Kb = tw_m3_scale(Kb, (tw_real)ck);
            if (b == f->diag[i]) {
                tw_real d = (tw_real)(cm * f->mass[i]);
                if (i == w->spring_vertex) d += (tw_real)(ck * w->spring_k);
                Kb.m[0] += d; Kb.m[4] += d; Kb.m[8] += d;
            }
            tw_m3_store(w->A + 9 * (size_t)b, Kb);
        }
    }
}

double tw_compute_elastic_energy(tw_world *w, const tw_real *x)
{
    const tw_fem *f = &w->fem;
    double energy = 0;
    if (w->def.method == TW_LINEAR) {
#pragma omp parallel for if (TW_PAR(f->n)) reduction(+ : energy) schedule(static)
        for (int i = 0; i < f->n; i++) {
            tw_v3 ui = tw_v3_sub(vtx(x, i), vtx(f->X, i));
            energy += 0.5 * (double)tw_v3_dot(ui, row_K_times_y(f, x, i, NULL));
        }
        return energy;
    }
    int green = w->def.method == TW_GREEN;
#pragma omp parallel for if (TW_PAR(f->nt)) reduction(+ : energy) schedule(static)
    for (int e = 0; e < f->nt; e++) {
        tw_v3 xs[4];
        element_displacements(w, x, e, xs);
        tw_m3 F = tw_elem_deformation(xs, f->g + 12 * (size_t)e);
        tw_real psi = 0;
        if (green) tw_stvk_S(F, f->lam[e], f->mu[e], &psi);
        else if (w->def.method == TW_HYBRID) tw_hybrid_P(F, tw_polar3(F), f->lam[e], f->mu[e], &psi);
        else tw_corot_P(F, tw_polar3(F), f->lam[e], f->mu[e], &psi);
        energy += (double)psi * f->vol[e];
    }
    return energy;
}

void tw_external_force(const tw_world *w, const tw_real *x, tw_real *out)
{
    const tw_fem *f = &w->fem;
#pragma omp parallel for if (TW_PAR(f->n)) schedule(static)
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < 3; c++) out[3 * i + c] = f->mass[i] * (tw_real)w->def.gravity[c] + w->fext[3 * i + c];
    if (w->spring_vertex >= 0)
        for (int c = 0; c < 3; c++)
            out[3 * w->spring_vertex + c] +=
                (tw_real)(w->spring_k * (w->spring_anchor[c] - x[3 * w->spring_vertex + c]));
}
