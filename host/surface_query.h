/* Queries against a closed triangle surface: is a point inside, is a
 * triangle within a distance of it. Shared by the graded lattice (which
 * cells to split and keep, graded.c) and the surface bone core (which
 * lattice vertices lie deep inside the surface, bone.c).
 *
 * The triangles' bounding boxes are binned in a tw_box_grid. Near: exact
 * point-to-triangle distances to the triangles listed in the cells of the
 * box [p - r, p + r], stopping at the first one closer than r. Inside: the
 * parity of the crossings of a ray along +x with the triangles; a crossing
 * counts in the grid cell that holds its x, so a triangle spanning several
 * cells counts once. The ray starts a tiny, irrational-looking offset (a
 * 1e-7 fraction of half a cell) off p in y and z, so a point on a lattice
 * whose planes hold surface edges (a cube) does not shoot along an edge. */
#ifndef TW_SURFACE_QUERY_H
#define TW_SURFACE_QUERY_H
#include "embed.h"

typedef struct tw_surface_query {
    const tw_surface *s; /* not owned; must outlive the query */
    tw_box_grid g;       /* the triangles' boxes */
    double offset;       /* m: the ray's offset scale (half a grid cell as asked for) */
} tw_surface_query;

/* Checks s (finite coordinates, corners in range; messages start with who)
 * and bins its triangles in cells of about `cell` m. On failure q needs no
 * tw_surface_query_free. */
tw_status tw_surface_query_init(tw_surface_query *q, const tw_surface *s, double cell, const char *who);
void tw_surface_query_free(tw_surface_query *q);
/* 1 when some triangle is closer than r (m) to p. */
int tw_surface_query_near(const tw_surface_query *q, const double *p, double r);
/* 1 when p is inside the closed surface (ray parity), 0 outside. */
int tw_surface_query_inside(const tw_surface_query *q, const double *p);
#endif
