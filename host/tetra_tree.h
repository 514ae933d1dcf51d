/* The tetra tree (Imai, Kanai, Yamaguchi and Hasegawa 2013, "Adaptive
 * inhomogeneous simulation of elastic bodies on a tetra tree", sec. 3-4): a
 * base mesh refined 1:8 into nested levels (tw_hier_nested), the finest
 * level carrying the material, and per tet of every coarser level an
 * elasticity matrix C (6x6) estimated bottom-up from its finest descendants,
 * with the valid range [alpha_min, alpha_max] of each strain basis.
 *
 * Voigt order xx, yy, zz, yz, xz, xy, engineering shears (gamma = 2 E_ij):
 * sigma = C eps, and the element stiffness of a tet is V B^T C B.
 *
 * Tree tets are numbered level by level, coarsest first: tet e of level l is
 * tree tet level_start[l] + e; its children are tets 8e .. 8e + 7 of level
 * l + 1, and its finest descendants a contiguous block of the finest level. */
#ifndef TW_TETRA_TREE_H
#define TW_TETRA_TREE_H
#include "hierarchy.h"

/* The sampled strain magnitudes of the estimation (both signs of each). */
#define TW_TREE_SAMPLES 12

struct tw_tetra_tree {
    tw_hierarchy *h;   /* nested levels, owned */
    int levels, nt;    /* levels, tree tets over all levels */
    int *level_start;  /* levels + 1 */
    double *C;         /* 36 per tree tet, row-major */
    double *amin, *amax; /* 6 per tree tet: the valid range of each strain basis (finest: +-inf) */
    double *density;   /* per tree tet, kg/m^3 (coarse: the volume average of its descendants) */
    double *vol;       /* per tree tet, m^3 */
    int samples_failed; /* samples whose relaxation did not converge (counted as outliers) */
    double seconds;    /* estimation time, s */
};

/* tw_tetra_tree_create and tw_tetra_tree_estimate in one (def->levels
 * levels). NULL with tw_last_error set on invalid input. */
tw_tetra_tree *tw_tetra_tree_build(const tw_mesh *base, const tw_tetra_tree_def *def);
void tw_tetra_tree_free(tw_tetra_tree *t);

/* The level of tree tet id, and its index on that level. */
int tw_tetra_tree_level(const tw_tetra_tree *t, int id);

/* The isotropic C of (E, nu) in the Voigt order above. */
void tw_isotropic_c(double E, double nu, double C[36]);

/* One parent's estimation (exposed for the tests): C, and the valid range of
 * each basis, of tet e of level l from its finest descendants whose
 * materials are E, nu (finest level, per element). Returns the samples that
 * did not converge. */
int tw_tetra_tree_estimate_one(const tw_hierarchy *h, int l, int e, const double *E, const double *nu,
                               double t1, double t2, double C[36], double amin[6], double amax[6]);

/* One sample (exposed for the tests and for plotting the paper's fig. 3):
 * the volume-averaged second Piola-Kirchhoff stress sigma (Voigt) of the
 * finest descendants of tet e of level l, relaxed under alpha times strain
 * basis m on their boundary. TW_ERR_DIVERGED when the relaxation fails. */
tw_status tw_tetra_tree_response(const tw_hierarchy *h, int l, int e, const double *E, const double *nu,
                                 int m, double alpha, double sigma[6]);
#endif
