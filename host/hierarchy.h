/* The mesh hierarchy: levels of one body, coarsest first, and per pair of
 * neighbouring levels the transfer P that writes each vertex of the finer
 * level as a barycentric combination of at most four vertices of the
 * coarser one (the tet it lies in, the edge it halves, or itself).
 *
 * Three kinds of level share this one form, so that everything that needs
 * levels (multigrid, the tetra tree, the multiresolution simulation, the
 * graded lattice's hanging vertices) reads the same P:
 * - nested: the finer level refines each tet of the coarser 1:8 by its edge
 *   midpoints (hier_nested.c); every fine tet has a parent tet, and P is
 *   exact for the piecewise-linear fields of the coarse level;
 * - non-nested: independent meshes of the same body (hier_nonnested.c); a
 *   fine vertex takes the barycentric weights of the coarse tet that
 *   contains it (the nearest one, clamped, when it lies outside);
 * - lattice: covering lattices of an embedded mesh (hierarchy.c).
 *
 * P is stored as exactly TW_HIER_ROW entries per fine vertex (unused ones
 * have weight 0 and repeat a used index), so that the CPU loop and a GPU
 * kernel read it with no row pointer. Weights are double: the input
 * precision is kept whatever tw_real is. */
#ifndef TW_HIERARCHY_H
#define TW_HIERARCHY_H
#include "mesh.h"
#include "solver.h"
#include "tetwarp.h"

#define TW_HIER_ROW 4

typedef enum tw_hier_kind {
    TW_HIER_NESTED = 0,
    TW_HIER_NONNESTED = 1,
    TW_HIER_LATTICE = 2
} tw_hier_kind;

/* Fine vertex i = sum over k < TW_HIER_ROW of w[TW_HIER_ROW i + k] times coarse
 * vertex idx[TW_HIER_ROW i + k]. */
typedef struct tw_transfer {
    int n_fine, n_coarse; /* vertices of the finer and the coarser level */
    int *idx;             /* TW_HIER_ROW n_fine coarse vertex indices */
    double *w;            /* TW_HIER_ROW n_fine weights; each row sums to 1 */
} tw_transfer;

typedef struct tw_hierarchy {
    tw_hier_kind kind;
    int n_levels;        /* level 0 is the coarsest, n_levels - 1 the finest */
    tw_mesh **level;     /* n_levels meshes, owned */
    tw_transfer *P;      /* n_levels - 1: P[l] maps level l to level l + 1 */
    int **parent_tet;    /* nested: parent_tet[l][e] is the tet of level l - 1 that tet e of
                            level l refines (parent_tet[0] is NULL); NULL otherwise */
    int **parent_vertex; /* non-nested: parent_vertex[l][i] is the vertex of level l - 1 nearest
                            to vertex i of level l (its Voronoi region); NULL otherwise */
} tw_hierarchy;

/* Nested levels: base refined 1:8 by edge midpoints, levels - 1 times
 * (levels >= 1; level 0 is a copy of base). Region markers are inherited.
 * NULL with tw_last_error set on failure (levels out of range, memory). */
tw_hierarchy *tw_hier_nested(const tw_mesh *base, int levels);

/* Non-nested levels: the given meshes of one body, coarsest first (copied).
 * Builds P by point location and the Voronoi parents. NULL with
 * tw_last_error set on failure. */
tw_hierarchy *tw_hier_nonnested(const tw_mesh *const *meshes, int n);

void tw_hier_free(tw_hierarchy *h);

/* The builders' shared part: an empty hierarchy of n_levels levels of the
 * given kind (the level and transfer arrays, and per level the parent map
 * the kind has: parent_tet for nested, parent_vertex for non-nested), and
 * a level's own copy of a mesh (name kept). NULL with tw_last_error set
 * when memory runs out. */
tw_hierarchy *tw_hier_alloc(tw_hier_kind kind, int n_levels);
tw_mesh *tw_hier_copy_mesh(const tw_mesh *m);

/* The transfer from coarse mesh c to fine mesh f by point location: the
 * barycentric weights of the tet of c containing each vertex of f (the
 * nearest tet's, clamped to it, when outside). Fills *P (allocating);
 * returns TW_OK or an error with tw_last_error set. */
tw_status tw_transfer_locate(const tw_mesh *c, const tw_mesh *f, tw_transfer *P);
void tw_transfer_free(tw_transfer *P);

/* Prolongation: fine (3 n_fine) = P coarse (3 n_coarse), per component. */
void tw_transfer_prolong(const tw_transfer *P, const tw_real *coarse, tw_real *fine);
/* Restriction: coarse (3 n_coarse) = P^T fine (3 n_fine). */
void tw_transfer_restrict(const tw_transfer *P, const tw_real *fine, tw_real *coarse);

/* The largest deviation of a row sum from 1 and the largest error of P
 * reproducing the fine level's rest positions from the coarse level's
 * (exact for nested levels and for fine vertices inside the coarse mesh). */
double tw_transfer_row_sum_error(const tw_transfer *P);
double tw_transfer_position_error(const tw_transfer *P, const tw_mesh *c, const tw_mesh *f);

/* A 3x3-block matrix that owns its arrays (the Galerkin product's result;
 * tw_hier_matrix_bsr gives the solver's view of it). */
typedef struct tw_hier_matrix {
    int n, nnzb;
    int *row_ptr, *col, *diag; /* n + 1, nnzb, n */
    tw_real *val;              /* 9 per block, row-major */
} tw_hier_matrix;
tw_bsr tw_hier_matrix_bsr(const tw_hier_matrix *M);
void tw_hier_matrix_free(tw_hier_matrix *M);

/* The Galerkin product Ac = P^T A P of a 3x3-block matrix A on the fine
 * level into a new block matrix on the coarse level (allocated). */
tw_status tw_transfer_galerkin(const tw_transfer *P, const tw_bsr *A, tw_hier_matrix *Ac);
/* ---- hier: transfers with rows of any length, and the Galerkin product's parts */

/* A transfer's rows as CSR: the form the Galerkin product reads. A tw_transfer
 * is the case ptr == NULL (row i is entries [TW_HIER_ROW i, TW_HIER_ROW (i+1)));
 * the graded lattice's hanging vertices have longer rows (a chain of
 * constraints expands to up to 64 free vertices). Entries of weight 0 are
 * skipped. A view: the arrays belong to the caller. */
typedef struct tw_transfer_rows {
    int n_fine, n_coarse;
    const int *ptr;  /* n_fine + 1, or NULL for TW_HIER_ROW entries per row */
    const int *idx;  /* coarse vertex of each entry */
    const double *w; /* its weight */
} tw_transfer_rows;
tw_transfer_rows tw_transfer_rows_of(const tw_transfer *P);

/* Ac = P^T A P for P with rows of any length (A: n_fine block rows): the
 * pattern (sorted columns, a diagonal block in every row, zero where no
 * product reaches it) and the values, into a new Ac (allocated). */
tw_status tw_transfer_rows_galerkin(const tw_transfer_rows *P, const tw_bsr *A, tw_hier_matrix *Ac);
/* The values only, into Ac's pattern from an earlier tw_transfer_rows_galerkin
 * with the same P and A's pattern (the step's matrix changes, its pattern does
 * not). Each coarse row is summed in a fixed order: the result does not depend
 * on the thread count. */
tw_status tw_transfer_rows_galerkin_values(const tw_transfer_rows *P, const tw_bsr *A, tw_hier_matrix *Ac);

/* The covering-lattice kind: the transfer from a lattice (coarse) to the mesh
 * embedded in it (fine), each mesh vertex as the barycentric weights of the
 * lattice tet that contains it (host/embed.c's search; the nearest tet's,
 * extrapolated, for a vertex outside the lattice), recomputed in double from
 * the rest positions. Fills *P (allocating). */
tw_status tw_transfer_lattice(const tw_mesh *lattice, const tw_mesh *m, tw_transfer *P);
/* ---- end hier */
#endif
