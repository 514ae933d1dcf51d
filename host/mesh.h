/* The tetrahedral mesh: rest positions in double (input precision is kept
 * whatever tw_real is), 4 vertex indices per element, positively oriented
 * (det[Xb-Xa, Xc-Xa, Xd-Xa] > 0), a region marker per element. */
#ifndef TW_MESH_H
#define TW_MESH_H
#include "tetwarp.h"

struct tw_mesh {
    int nv, nt;
    double *X;    /* 3*nv */
    int *tets;    /* 4*nt */
    int *region;  /* nt */
    int *unused;  /* nv: 1 where no element references the vertex */
    char name[256];
    int nbodies;  /* bodies of a tw_mesh_merge'd mesh (body contact), else 1 */
    int *body;    /* nv: the body of each vertex, or NULL (one body) */
};

/* Takes ownership of X, tets, region (malloc'd) and validates: indices in
 * range, no zero-volume or duplicate elements, reorients inverted ones (or
 * fails when def->strict). `source` names the data in messages. Frees the
 * arrays and returns NULL on failure. */
tw_mesh *tw_mesh_adopt(double *X, int nv, int *tets, int nt, int *region, const char *source,
                       const tw_mesh_load_def *def, tw_mesh_report *report);

/* Where the arrays given to tw_mesh_adopt_source came from, so that its
 * messages cite the file the way a user reads it:
 * "bar.ele:12: element 10 has zero volume (vertices 3 4 5 6)". */
typedef struct tw_mesh_source {
    const char *path;         /* file (or "tw_mesh_create"): names the data in messages */
    const int *element_line;  /* file line of each element, or NULL (not owned) */
    int index_base;           /* added to vertex and element numbers in messages: 0 or 1 */
} tw_mesh_source;

/* tw_mesh_adopt with line numbers and the file's index base in messages.
 * src may be NULL. Takes ownership of X, tets, region (region may be NULL:
 * all zero); frees them and returns NULL on failure. */
tw_mesh *tw_mesh_adopt_source(double *X, int nv, int *tets, int nt, int *region,
                              const tw_mesh_source *src, const tw_mesh_load_def *def,
                              tw_mesh_report *report);

/* Signed 6*volume of element e. */
double tw_mesh_det(const tw_mesh *m, int e);

/* Signed 6*volume of the tet (a,b,c,d) of 3-vectors. */
double tw_tet_det(const double *a, const double *b, const double *c, const double *d);

/* Loaders behind tw_mesh_load, one per format (mesh_tetgen.c, mesh_gmsh.c,
 * mesh_medit.c). */
tw_mesh *tw_mesh_load_tetgen(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report);
tw_mesh *tw_mesh_load_gmsh(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report);
tw_mesh *tw_mesh_load_medit(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report);
#endif
