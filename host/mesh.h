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
};

/* Takes ownership of X, tets, region (malloc'd) and validates: indices in
 * range, no zero-volume or duplicate elements, reorients inverted ones (or
 * fails when def->strict). `source` names the data in messages. Frees the
 * arrays and returns NULL on failure. */
tw_mesh *tw_mesh_adopt(double *X, int nv, int *tets, int nt, int *region, const char *source,
                       const tw_mesh_load_def *def, tw_mesh_report *report);

/* Signed 6*volume of element e. */
double tw_mesh_det(const tw_mesh *m, int e);
#endif
