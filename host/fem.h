/* FEM precompute: per-element gradients, volumes and Lamé constants, the
 * vertex adjacency as a 3x3-block CSR (BSR) pattern, the gather lists that
 * let every backend assemble a block as a fixed-order sum (no atomics), the
 * lumped mass, and the linear stiffness K in BSR.
 *
 * Gather lists: block b = (row i, col j) receives the contributions of the
 * elements that contain both i and j; contrib[contrib_ptr[b] ..] holds
 * e*16 + p*4 + q for each (local p = i, local q = j), in element order.
 * Per vertex, vt[vt_ptr[i] ..] holds e*4 + p for each element e containing i
 * at local position p, in element order. */
#ifndef TW_FEM_H
#define TW_FEM_H
#include "tetwarp.h"

typedef struct tw_fem {
    int n, nt, nnzb;
    /* elements */
    int *tets;        /* 4*nt (copy of the mesh's) */
    tw_real *g;       /* 12*nt: g_a, g_b, g_c, g_d */
    tw_real *vol;     /* nt, m^3 */
    tw_real *lam, *mu;/* nt, Pa */
    /* BSR pattern */
    int *row_ptr;     /* n+1 */
    int *col;         /* nnzb */
    int *diag;        /* n: index of block (i,i) */
    int *contrib_ptr; /* nnzb+1 */
    int *contrib;     /* 16*nt */
    int *vt_ptr;      /* n+1 */
    int *vt;          /* 4*nt */
    /* constant data */
    tw_real *K;       /* 9*nnzb, linear stiffness */
    tw_real *mass;    /* n, kg */
    tw_real *X;       /* 3n rest positions */
    double courant_dt; /* s: min over elements of (smallest altitude) / (dilatational wave speed) */
    int pattern_builder_used; /* 1 when tw_fem_build_using's pattern builder made the pattern */
} tw_fem;

/* A builder of the pattern arrays (row_ptr, col, diag, contrib_ptr, contrib,
 * vt_ptr, vt: malloc'd, freed by tw_fem_free) and nnzb from fem->n, nt and
 * tets, equal to the CPU's. On failure it says so on stderr and returns the
 * error; tw_fem_build_using then frees what it left and builds the pattern
 * on the CPU. */
typedef tw_status (*tw_fem_pattern_fn)(tw_fem *fem);

/* Builds everything above. Material arrays may be NULL (then the constants
 * are used). Validates E > 0, -1 < nu < 0.5, rho > 0 per element. */
tw_status tw_fem_build(tw_fem *fem, const tw_mesh *mesh, double E, double nu, double rho,
                       const double *elem_E, const double *elem_nu, const double *elem_rho);
/* The same with the pattern made by pattern when it succeeds (NULL: on the
 * CPU, as tw_fem_build). Everything else is computed on the CPU as usual. */
tw_status tw_fem_build_using(tw_fem *fem, const tw_mesh *mesh, double E, double nu, double rho,
                             const double *elem_E, const double *elem_nu, const double *elem_rho,
                             tw_fem_pattern_fn pattern);
void tw_fem_free(tw_fem *fem);
size_t tw_fem_memory_bytes(const tw_fem *fem);

/* Shape-function gradients g[p] (rows of Dm^-1 for b, c, d; g_a = -sum) of
 * the tet t (4 indices into X, 3 doubles per vertex); returns det Dm = 6V
 * (g untouched when it is 0). */
double tw_tet_gradients(const double *X, const int *t, double g[4][3]);

/* Block index of (i, j), or -1. Binary search in row i. */
int tw_fem_block(const tw_fem *fem, int i, int j);
#endif
