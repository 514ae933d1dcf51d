/* The surface a viewer draws for one tet mesh, and how it follows the mesh.
 *
 * A render vertex is either a mesh vertex (the mesh's boundary is drawn:
 * render vertex i is mesh vertex i) or a point of a finer surface embedded in
 * the tets (embed.h: the barycentric combination of its tet's 4 vertices).
 * Its normal is the area-weighted normal of its triangles (tw_embed_normal),
 * gathered: each vertex sums its own triangles in the fixed order of a
 * vertex -> triangles CSR built once, so there is no scatter and no atomics.
 *
 * The two TW_HD functions of hd/render.h are the whole per-frame arithmetic. The CPU
 * (tw_render_surface_update) runs them in a loop; the CUDA-GL kernel
 * (interop/cuda_gl.cu) runs them one thread per vertex on a copy of this
 * struct whose arrays live on the device, writing into the mapped OpenGL
 * buffers. Same functions, same order: the same floats (nvcc compiles that
 * file without FMA contraction, as the CPU build has none). */
#ifndef TW_RENDER_SURFACE_H
#define TW_RENDER_SURFACE_H
#include "embed.h"
#include "hd/render.h" /* the struct and its per-vertex TW_HD functions */
#include "tetwarp.h"


/* The vertex -> triangles CSR of ntri triangles over nv vertices: start
 * (nv+1) and list (3*ntri), each vertex's triangles in increasing order. */
void tw_vertex_triangles(int nv, const int *tris, int ntri, int *start, int *list);

/* The boundary of a tet mesh of mesh_nv vertices (faces: 3 per face, e.g.
 * from tw_mesh_boundary_faces) when e is NULL, else e's embedded surface.
 * Copies what it needs (keeps no pointer to faces or e). NULL with
 * tw_last_error() on bad input or out of memory. */
tw_render_surface *tw_render_surface_create(int mesh_nv, const int *faces, int face_count, const tw_embedding *e);
void tw_render_surface_destroy(tw_render_surface *s);

/* Positions and unit normals (3 floats per render vertex) of the surface at
 * mesh positions x. */
void tw_render_surface_update(const tw_render_surface *s, const tw_real *x, float *pos, float *nrm);
#endif
