/* One step's loop bodies, one vertex or one element each, over a plain view
 * of the world's arrays: host/forces.c and host/step.c run them in OpenMP
 * loops, kernels/cuda_kernels.cu runs each on one thread. A kernel is the
 * CPU loop body on one thread: change a body here and both backends change.
 * TW_HD inline, C11 and nvcc alike (see hd.h).
 *
 * The view holds pointers only (host or device memory, whichever side reads
 * it) and the step's load numbers; the arrays a body writes (R, S, fe, or an
 * out argument) are named at each function. Sums over a vertex's elements
 * and over a row's blocks run in the order of the fixed lists (vt, row_ptr),
 * accumulated in double: the same floats on both backends. */
#ifndef TW_HD_STEP_H
#define TW_HD_STEP_H
#include <math.h>

#include "element.h"

typedef struct tw_step_view {
    int n, nt;
    /* the mesh and the FEM precompute (host/fem.h), constant */
    const int *tets;             /* 4 per element */
    const int *row_ptr, *col;    /* BSR pattern: row i's blocks, their columns */
    const int *vt_ptr, *vt;      /* per vertex its (element, corner) pairs, 4 e + p, in element order */
    const int *edge_nbr;         /* 2 per vertex: warp-edge frame neighbours (-1: none) */
    const tw_real *X;            /* rest positions, 3n */
    const tw_real *g;            /* shape-function gradients, 12 per element */
    const tw_real *vol, *lam, *mu; /* per element: rest volume, Lame constants */
    const tw_real *K;            /* the linear stiffness's blocks, 9 per BSR block */
    const tw_real *mass;         /* lumped, per vertex */
    /* per-step scratch the bodies write */
    tw_real *R;                  /* 9 per vertex (warp-*) or per element (corot, hybrid: R_e; green: F_e) */
    tw_real *S;                  /* per-element packs (element.h): TW_COROT_PACK or TW_GREEN_PACK each */
    tw_real *fe;                 /* element forces, 12 per element */
    /* loads */
    const tw_real *fext;         /* point forces, 3n */
    double gravity[3];           /* m/s^2 */
    int spring_vertex;           /* -1: no spring */
    double spring_anchor[3], spring_k;
    /* constraints */
    const unsigned char *cons;   /* tw_constraint per vertex */
    const tw_real *target;       /* kinematic targets, 3n */
} tw_step_view;

TW_HD tw_v3 tw_view_vertex(const tw_real *x, int i) { return tw_v3_load(x + 3 * (size_t)i); }

/* The displacements u = x - X of element e's vertices. */
TW_HD void tw_element_displacements(const tw_step_view *s, const tw_real *x, int e, tw_v3 us[4])
{
    const int *t = s->tets + 4 * (size_t)e;
    for (int p = 0; p < 4; p++) us[p] = tw_v3_sub(tw_view_vertex(x, t[p]), tw_view_vertex(s->X, t[p]));
}

/* ---- rotations ---- */

/* warp-vertex: R_i = polar(sum_j (x_j - x_i)(X_j - X_i)^T) over row i's columns, into R. */
TW_HD void tw_rotation_warp_vertex(const tw_step_view *s, const tw_real *x, int i)
{
    tw_v3 xi = tw_view_vertex(x, i), Xi = tw_view_vertex(s->X, i);
    tw_m3 A = tw_m3_zero();
    for (int k = s->row_ptr[i]; k < s->row_ptr[i + 1]; k++) {
        int j = s->col[k];
        A = tw_m3_add_outer(A, tw_v3_sub(tw_view_vertex(x, j), xi), tw_v3_sub(tw_view_vertex(s->X, j), Xi), 1);
    }
    tw_m3_store(s->R + 9 * (size_t)i, tw_polar3(A));
}

/* warp-edge: R_i = F'_i F_i^T from the frames of the edges to the two chosen
 * neighbours (the identity without them), into R. */
TW_HD void tw_rotation_warp_edge(const tw_step_view *s, const tw_real *x, int i)
{
    int j = s->edge_nbr[2 * i], k = s->edge_nbr[2 * i + 1];
    tw_m3 R = tw_m3_identity();
    if (j >= 0)
        R = tw_m3_mul_bt(tw_edge_frame(tw_view_vertex(x, i), tw_view_vertex(x, j), tw_view_vertex(x, k)),
                         tw_edge_frame(tw_view_vertex(s->X, i), tw_view_vertex(s->X, j), tw_view_vertex(s->X, k)));
    tw_m3_store(s->R + 9 * (size_t)i, R);
}

/* corot-element, hybrid: R_e = polar(F_e) into R and the rotated gradients
 * for the system matrix into S (tw_corot_pack); green: F_e (raised where
 * crushed: tw_stvk_floor) into R and the tangent's per-element terms into S
 * (tw_green_element). */
TW_HD void tw_rotation_element(const tw_step_view *s, const tw_real *x, int e, int green)
{
    tw_v3 xs[4];
    tw_element_displacements(s, x, e, xs);
    const tw_real *g = s->g + 12 * (size_t)e;
    tw_m3 F = tw_elem_deformation(xs, g);
    if (!green) {
        tw_m3 R = tw_polar3(F);
        tw_m3_store(s->R + 9 * (size_t)e, R);
        tw_corot_pack(s->S + TW_COROT_PACK * (size_t)e, R, g, s->vol[e], s->lam[e], s->mu[e]);
    } else {
        tw_m3 Fc; /* F unless crushed (element.h) */
        tw_green_element(s->S + TW_GREEN_PACK * (size_t)e, F, &Fc, g, s->vol[e], s->lam[e], s->mu[e], NULL);
        tw_m3_store(s->R + 9 * (size_t)e, Fc);
    }
}

/* ---- elastic forces ---- */

/* sum_j K_ij y_j over row i, y_j = R^T x_j - X_j written as
 * R^T u_j + (R^T - I) X_j (the displacement form keeps float's small
 * strains, see element.h); R = NULL means the identity. Accumulated in double. */
TW_HD tw_v3 tw_row_K_times_y(const tw_step_view *s, const tw_real *x, int i, const tw_m3 *R)
{
    double acc[3] = {0, 0, 0};
    for (int k = s->row_ptr[i]; k < s->row_ptr[i + 1]; k++) {
        int j = s->col[k];
        tw_v3 Xj = tw_view_vertex(s->X, j), uj = tw_v3_sub(tw_view_vertex(x, j), Xj);
        tw_v3 y = R ? tw_v3_add(tw_m3_tmulv(*R, uj), tw_v3_sub(tw_m3_tmulv(*R, Xj), Xj)) : uj;
        tw_v3 ky = tw_m3_mulv(tw_m3_load(s->K + 9 * (size_t)k), y);
        acc[0] += ky.x; acc[1] += ky.y; acc[2] += ky.z;
    }
    return tw_v3_make((tw_real)acc[0], (tw_real)acc[1], (tw_real)acc[2]);
}

/* linear: vertex i's term of the elastic energy 1/2 u^T K u, J
 * (tw_compute_elastic_energy's, the energy check's on the device) */
TW_HD double tw_linear_vertex_energy(const tw_step_view *s, const tw_real *x, int i)
{
    tw_v3 ui = tw_v3_sub(tw_view_vertex(x, i), tw_view_vertex(s->X, i));
    return 0.5 * (double)tw_v3_dot(ui, tw_row_K_times_y(s, x, i, NULL));
}

/* linear (warped = 0), warp-vertex, warp-edge: vertex i's force
 * -R_i sum_j K_ij (R_i^T x_j - X_j) into out (3n), before the ghost-force
 * correction. */
TW_HD void tw_vertex_force(const tw_step_view *s, const tw_real *x, int i, int warped, tw_real *out)
{
    tw_m3 Ri = warped ? tw_m3_load(s->R + 9 * (size_t)i) : tw_m3_identity();
    tw_v3 a = tw_row_K_times_y(s, x, i, warped ? &Ri : NULL);
    tw_v3_store(out + 3 * (size_t)i, tw_v3_scale(tw_m3_mulv(Ri, a), -1));
}

/* corot-element, hybrid, green: element e's four corner forces -V P g_p into
 * fe, from the rotations (or F and the pack) tw_rotation_element left. */
TW_HD void tw_element_force(const tw_step_view *s, const tw_real *x, int e, tw_method m)
{
    const tw_real *g = s->g + 12 * (size_t)e;
    tw_m3 P;
    if (m == TW_COROT_ELEMENT || m == TW_HYBRID) {
        tw_v3 xs[4];
        tw_element_displacements(s, x, e, xs);
        tw_m3 F = tw_elem_deformation(xs, g), R = tw_m3_load(s->R + 9 * (size_t)e);
        P = m == TW_HYBRID ? tw_hybrid_P(F, R, s->lam[e], s->mu[e], NULL) : tw_corot_P(F, R, s->lam[e], s->mu[e], NULL);
    } else {
        P = tw_m3_mul(tw_m3_load(s->R + 9 * (size_t)e), tw_sym_load(s->S + TW_GREEN_PACK * (size_t)e + 40));
    }
    tw_v3 fp[4];
    tw_elem_forces_from_P(P, g, s->vol[e], fp);
    for (int p = 0; p < 4; p++) tw_v3_store(s->fe + 12 * (size_t)e + 3 * p, fp[p]);
}

/* The elastic energy density psi of element e at x (its energy: psi V_e):
 * StVK's for green, the hybrid's for hybrid, the corotated one for
 * corot-element and for the vertex methods (whose force has no energy of its
 * own; host/forces.c tw_compute_elastic_energy). The polar factor is
 * computed here, so no rotation need be current. */
TW_HD tw_real tw_element_energy_density(const tw_step_view *s, const tw_real *x, int e, tw_method m)
{
    tw_v3 xs[4];
    tw_element_displacements(s, x, e, xs);
    tw_m3 F = tw_elem_deformation(xs, s->g + 12 * (size_t)e);
    tw_real psi = 0;
    tw_m3 Fc;
    if (m == TW_GREEN) tw_green_S(F, &Fc, s->lam[e], s->mu[e], &psi);
    else if (m == TW_HYBRID) tw_hybrid_P(F, tw_polar3(F), s->lam[e], s->mu[e], &psi);
    else tw_corot_P(F, tw_polar3(F), s->lam[e], s->mu[e], &psi);
    return psi;
}

/* Vertex i's force: its elements' corner forces from fe in element order,
 * summed in double (element forces cancel), into out (3n). */
TW_HD void tw_gather_element_forces(const tw_step_view *s, int i, tw_real *out)
{
    double s0 = 0, s1 = 0, s2 = 0;
    for (int k = s->vt_ptr[i]; k < s->vt_ptr[i + 1]; k++) {
        const tw_real *fp = s->fe + 3 * (size_t)s->vt[k]; /* vt = 4e+p, fe = 12 per e */
        s0 += fp[0]; s1 += fp[1]; s2 += fp[2];
    }
    out[3 * (size_t)i] = (tw_real)s0; out[3 * (size_t)i + 1] = (tw_real)s1; out[3 * (size_t)i + 2] = (tw_real)s2;
}

/* ---- the system matrix ---- */

/* warp-vertex's symmetric system (TW_WARP_SYSTEM_SYMMETRIC) is
 * sum_e R_e K_e R_e^T with R_e the rotation closest to the mean of the
 * element's four vertex rotations (the projected arithmetic mean, Moakher
 * 2002, "Means and averaging in the group of rotations"); this packs
 * element e's rotated gradients (tw_corot_pack) from R (per vertex) into S,
 * and the corot-element gather assembles it.
 *
 * Why not the blocks R_i K_ij R_j^T (warp-edge's): where neighbouring
 * rotations differ, their row sums sum_j R_i K_ij R_j^T are not zero, so the
 * implicit term h^2 K' v+ acts on the body's rigid velocity, which the force
 * (translation invariant) does not see. A body moving d per step meets a
 * spurious stiffness of about d / (element size) times K where its
 * rotations disagree, and the rotations answer the deformation it makes,
 * fastest at a vertex whose neighbourhood is nearly flat: a falling body
 * turns itself inside out. Each R_e K_e R_e^T has the translations in its
 * kernel and is symmetric positive semi-definite, as with the per-element
 * rotation of Hauth and Strasser 2004 ("Corotational simulation of
 * deformable solids"); with all vertex rotations equal the sum is R K R^T,
 * what R_i K_ij R_j^T gives. The force stays Müller et al.'s eq. 12. */
TW_HD void tw_warp_vertex_element_pack(const tw_step_view *s, int e)
{
    const int *t = s->tets + 4 * (size_t)e;
    tw_m3 A = tw_m3_zero();
    for (int p = 0; p < 4; p++) A = tw_m3_add(A, tw_m3_load(s->R + 9 * (size_t)t[p]));
    tw_corot_pack(s->S + TW_COROT_PACK * (size_t)e, tw_polar3(A), s->g + 12 * (size_t)e, s->vol[e], s->lam[e],
                  s->mu[e]);
}

/* warp-vertex's automatic second linearisation (host/step.c
 * warp_turn_iterations, the CUDA step alike): a step whose vertex rotations,
 * recomputed at the first solve's positions, turned at some vertex by more
 * than TW_WARP_TURN from those the step started with (and linearised with)
 * takes a Newton iteration at those positions.
 *
 * Why: the single linearisation holds each R_i at its start-of-step value,
 * and the matrix lacks the rotations' derivative. A rigid turn by theta that
 * the held R_i miss reads as a strain of 1 - cos(theta) ~ theta^2 / 2 (its
 * first order is a rotation, in K's kernel): 3 % at 0.25 rad. Where a step
 * turns vertices that far (an impact at 1/30 s: 0.45-0.7 rad a step at the
 * armadillo's feet), the force the step's end meets is not the one it
 * solved with, and the error feeds the next step's rotations: the frictionless
 * drop gained energy and turned itself inside out in four steps. A second
 * linearisation at the new rotations is what Newton does there. Below the
 * threshold the step is Müller's single linearisation, to the bit. */
#define TW_WARP_TURN 0.25

/* cos of the angle between vertex i's rotations in R0 and R1 (9 per
 * vertex): (tr(R0^T R1) - 1) / 2, in double */
TW_HD double tw_rotation_turn_cos(const tw_real *R0, const tw_real *R1, int i)
{
    const tw_real *a = R0 + 9 * (size_t)i, *b = R1 + 9 * (size_t)i;
    double tr = 0;
    for (int k = 0; k < 9; k++) tr += (double)a[k] * b[k]; /* tr(A^T B) = sum of the entries' products */
    return (tr - 1) / 2;
}

/* Block b (column j) of row i of the stiffness K' for linear (R_i = NULL:
 * K_b) and warp-edge: R_i K_b R_j^T, or R_i K_b R_i^T for the exact
 * non-symmetric system of either vertex method (exact_warp). */
TW_HD tw_m3 tw_vertex_system_block(const tw_step_view *s, int b, int j, const tw_m3 *Ri, int exact_warp)
{
    tw_m3 Kb = tw_m3_load(s->K + 9 * (size_t)b);
    if (!Ri) return Kb;
    tw_m3 Rj = exact_warp ? *Ri : tw_m3_load(s->R + 9 * (size_t)j);
    return tw_m3_mul_bt(tw_m3_mul(*Ri, Kb), Rj);
}

/* A = cm M + ck K' (+ ck k on the spring vertex): stiffness block Kb of row
 * i scaled by ck, plus the mass and spring terms when it is the diagonal. */
TW_HD tw_m3 tw_system_block(const tw_step_view *s, tw_m3 Kb, int i, int diagonal, double cm, double ck)
{
    Kb = tw_m3_scale(Kb, (tw_real)ck);
    if (diagonal) {
        tw_real d = (tw_real)(cm * s->mass[i]);
        if (i == s->spring_vertex) d += (tw_real)(ck * s->spring_k);
        Kb.m[0] += d; Kb.m[4] += d; Kb.m[8] += d;
    }
    return Kb;
}

/* ---- loads, right-hand side, constraints ---- */

/* Vertex i's external force: gravity, its point force, and the spring at x
 * when it is the spring vertex, into out[0..2]. */
TW_HD void tw_external_force_vertex(const tw_step_view *s, const tw_real *x, int i, tw_real *out)
{
    for (int c = 0; c < 3; c++) out[c] = s->mass[i] * (tw_real)s->gravity[c] + s->fext[3 * (size_t)i + c];
    if (i == s->spring_vertex)
        for (int c = 0; c < 3; c++)
            out[c] += (tw_real)(s->spring_k * (s->spring_anchor[c] - x[3 * (size_t)i + c]));
}

/* The implicit step's right-hand side for one vertex of mass m:
 * out = m vbase + heff (f + ext), component by component (out may be ext). */
TW_HD void tw_rhs_vertex(tw_real m, const tw_real *vbase, double heff, const tw_real *f, const tw_real *ext,
                         tw_real *out)
{
    for (int c = 0; c < 3; c++) out[c] = m * vbase[c] + (tw_real)heff * (f[c] + ext[c]);
}

/* Vertex i's prescribed velocity for positions x+ = xbase + heff v+, into
 * v (3n): pinned 0, kinematic onto its target; a free vertex keeps v. */
TW_HD void tw_prescribe_vertex(const tw_step_view *s, int i, const tw_real *xbase, double heff, tw_real *v)
{
    size_t k = 3 * (size_t)i;
    if (s->cons[i] == TW_PINNED)
        for (int c = 0; c < 3; c++) v[k + c] = 0;
    else if (s->cons[i] == TW_KINEMATIC)
        for (int c = 0; c < 3; c++) v[k + c] = (tw_real)((s->target[k + c] - xbase[k + c]) / heff);
}

/* ---- the divergence check ---- */

/* What the check finds in the new velocities: the first vertex with a
 * non-finite component (-1: none) and the largest speed with its vertex
 * (the first of equal maxima). */
typedef struct tw_divergence {
    int nonfinite_vertex;
    int vmax_vertex;
    double vmax; /* m/s */
} tw_divergence;

TW_HD tw_divergence tw_divergence_none(void)
{
    tw_divergence d;
    d.nonfinite_vertex = -1;
    d.vmax_vertex = 0;
    d.vmax = 0;
    return d;
}

/* Adds vertex i of v (3n); vertices are added in increasing order. */
TW_HD void tw_divergence_add(tw_divergence *d, const tw_real *v, int i)
{
    const tw_real *vi = v + 3 * (size_t)i;
    if (d->nonfinite_vertex < 0 && (!isfinite(vi[0]) || !isfinite(vi[1]) || !isfinite(vi[2]))) d->nonfinite_vertex = i;
    double sp = sqrt((double)vi[0] * vi[0] + (double)vi[1] * vi[1] + (double)vi[2] * vi[2]);
    if (sp > d->vmax) {
        d->vmax = sp;
        d->vmax_vertex = i;
    }
}

/* The verdict: 1 when every velocity is finite, the solver's residual is
 * finite and no vertex moves more than max_move (10 x the object's size) in
 * a step of h; host/step.c words the message when it is 0. */
TW_HD int tw_divergence_ok(const tw_divergence *d, double residual, double h, double max_move)
{
    return d->nonfinite_vertex < 0 && isfinite(residual) && !(d->vmax * h > max_move);
}
#endif
