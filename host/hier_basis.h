/* The hierarchical-basis corotated simulation of Hauth and Straßer ("Corotational
 * simulation of deformable solids", WSCG 2004, sec. "hierarchical
 * approximations" and the hierarchical example).
 *
 * Levels: nested (tw_hier_nested, 1:8), the finest level carries the
 * unknowns. In the hierarchical basis a field is written by its values at
 * the coarsest level's vertices and, on each finer level, the offset of a
 * new vertex's value from the linear interpolation of its parents (the
 * transfer P's row of the vertex). tw_hb_to_hierarchical / tw_hb_to_nodal
 * are that basis change (Yserentant's fast transform: one pass per level).
 *
 * Strain measures per level. With x = P c + d (c the coarse vertices'
 * positions interpolated to the finest level, d the offsets), a finest tet
 * e inside coarse tet T has F_e = F_T + grad d, and its strain is Green's
 * of the coarse part plus the corotated linear strain of the offsets:
 *
 *   eps_e = G(F_T) + sym(R_T^T (F_e - F_T)) = [sym(R_T^T F_e) - I] + Q_T
 *
 * - G(F) = (F^T F - I)/2: the coarsest level carries the large rotations
 *   and stretches non-linearly;
 * - R_T: the polar decomposition of the coarse tet's deformation gradient,
 *   computed on the top level only and used by every finer tet inside it;
 * - Q_T = G(F_T) - (sym(R_T^T F_T) - I) = (U_T - I)^2 / 2 (F_T = R_T U_T):
 *   the coarse level's non-linear part, constant in T.
 *
 * The energy is sum_e V_e psi(eps_e), psi = mu eps:eps + lambda/2 tr(eps)^2,
 * non-negative per tet whatever the levels do (an energy split by level,
 * Green's coarse energy plus the offsets' corotated energy minus the coarse
 * corotated one, is not: it goes negative under compression once the
 * offsets relieve the coarse tets' locking, and the bar buckles away).
 * Forces and the Hessian hold R fixed (the corotational approximation; the
 * term it drops is of the order of the offsets' gradients). With one level
 * eps = G(F): the engine's green method (St. Venant-Kirchhoff) exactly;
 * with coarse_green off, Q = 0: corotated linear with the coarse rotations
 * (one level: corot-element).
 *
 * Time step: implicit Euler in velocity form with Rayleigh damping
 * C = alpha M + beta K' (K' the Hessian of E at fixed R), as the world's:
 * (M + h C + h^2 K') v+ = M v + h (f(x) + f_ext), x+ = x + h v+; more
 * Newton iterations (the rotations and the coarse Green part updated) with
 * a backtracking line search on the step's residual when asked. The linear
 * system is solved by CG in the nodal basis, preconditioned by default with
 * block-Jacobi on the finest level plus the coarse block solved exactly
 * (two-level, added), the coarse part reached through the hierarchical
 * basis' transforms (S^T r, S z); or with the hierarchical-basis
 * preconditioner z = S B S^T r, B = (the coarse block's inverse, the
 * offsets' 3x3 diagonal inverses), Yserentant's (1986), which is CG on
 * S^T A S with a block-diagonal preconditioner (in 3D its condition grows
 * with the levels: it takes more iterations than two-level). The coarse
 * block (lumped coarse mass, the coarse StVK-form tangent) is factored by
 * Cholesky within each row's envelope, or, when large, solved by an inner
 * PCG (then the outer CG takes the flexible Polak-Ribière update).
 *
 * CPU only, double precision state; the element math is the engine's
 * (hd/element.h). */
#ifndef TW_HIER_BASIS_H
#define TW_HIER_BASIS_H
#include "hierarchy.h"
#include "tetwarp.h"

typedef struct tw_hb_def {
    double youngs_modulus; /* Pa */
    double poisson_ratio;
    double density;        /* kg/m^3 */
    double gravity[3];     /* m/s^2 */
    double dt;             /* s */
    double damping_mass;   /* Rayleigh alpha, 1/s */
    double damping_stiffness; /* Rayleigh beta, s */
    double cg_tolerance;   /* relative residual |r|/|b| of the outer CG */
    int cg_max_iterations;
    int newton_iterations; /* >= 1: linearisations per step (1: Baraff-Witkin's single one) */
    double newton_tolerance; /* stop when the step's residual fell by this factor */
    int coarse_green;      /* 1 (default): Green strain on the coarsest level; 0: corotated there
                              too (the bracket's E_cr alone: an ablation) */
    double coarse_tolerance; /* relative residual of the preconditioner's inner coarse solve */
    int precond;           /* tw_hb_precond (default two-level) */
    int coarse_refresh;    /* the dense coarse factor is refreshed every this many assemblies (>= 1; a
                              stale one is still a symmetric positive definite preconditioner) */
} tw_hb_def;

/* Coarse systems of at most this many unknowns (3 per coarse vertex) are
 * factored densely (Cholesky); larger ones are solved by an inner PCG. */
#define TW_HB_DENSE_COARSE 1800

/* The outer CG's preconditioner (one level: block-Jacobi whatever is asked). */
typedef enum tw_hb_precond {
    TW_HB_PRECOND_HIERARCHICAL = 0, /* S B S^T: coarse solve and the offsets' diagonal blocks (Yserentant) */
    TW_HB_PRECOND_TWO_LEVEL,        /* block-Jacobi on the finest level plus the coarse solve, added */
    TW_HB_PRECOND_JACOBI            /* block-Jacobi on the finest level */
} tw_hb_precond;
tw_hb_def tw_default_hb_def(void);

typedef struct tw_hb tw_hb;

typedef struct tw_hb_stats {
    int cg_iterations;     /* outer CG iterations, all Newton iterations */
    int coarse_iterations; /* inner coarse CG iterations, summed */
    int newton_iterations;
    double residual;       /* last outer solve, relative */
    double ms_forces, ms_solve, ms_total;
} tw_hb_stats;

/* A simulation on nested levels h (borrowed: it must outlive the result;
 * h->kind must be TW_HIER_NESTED). NULL with tw_last_error set on failure. */
tw_hb *tw_hb_create(const tw_hierarchy *h, const tw_hb_def *def);
void tw_hb_destroy(tw_hb *hb);

/* Pins the finest level's vertices whose coordinate axis is < value
 * (less = 1) or > value; returns how many are pinned now in all. */
int tw_hb_pin_where(tw_hb *hb, int axis, int less, double value);
/* A point force on a finest-level vertex, N (replaces the vertex's last). */
tw_status tw_hb_set_force(tw_hb *hb, int vertex, const double f[3]);

/* One implicit Euler step. TW_ERR_DIVERGED (state unchanged) on a
 * non-finite or blown-up velocity. */
tw_status tw_hb_step(tw_hb *hb, tw_hb_stats *stats);

/* The finest level's state (3 per vertex; writable, e.g. to impose a
 * deformation), its vertex count and the time. */
double *tw_hb_x(tw_hb *hb);
double *tw_hb_v(tw_hb *hb);
int tw_hb_vertex_count(const tw_hb *hb);
double tw_hb_time(const tw_hb *hb);

/* The elastic force -dE/dx at x (3 per finest vertex) into f, and E (J) as
 * the return value; the rotations are those of x's coarse vertices. */
double tw_hb_elastic_force(tw_hb *hb, const double *x, double *f);
/* Kinetic, elastic and gravity energy (J, gravity relative to rest). */
void tw_hb_energy(tw_hb *hb, double *kinetic, double *elastic, double *gravity);

/* The basis change on the finest level of nested h (3 per vertex; in and
 * out may not alias): nodal values to hierarchical coefficients (coarse
 * vertices' values kept, a new vertex's value minus the interpolation of its
 * parents' nodal values), and back (coarse to fine). */
void tw_hb_to_hierarchical(const tw_hierarchy *h, const double *x, double *y);
void tw_hb_to_nodal(const tw_hierarchy *h, const double *y, double *x);
#endif
