/* Surface tetrahedralization (mesher.c) and surface checks (surface_check.c):
 * internal helpers shared by the two and the tests. */
#ifndef TW_MESHER_H
#define TW_MESHER_H
#include <stdint.h>

#include "tetwarp.h"

/* Loads .obj, .off or .stl, merges coincident vertices and drops vertices
 * no triangle uses, so that holes and non-manifold edges are seen by
 * topology. NULL with tw_last_error() on failure. */
tw_surface *tw_mesher_load_surface(const char *path);

/* 64-bit FNV-1a, continued from h (start with TW_FNV_OFFSET). */
#define TW_FNV_OFFSET 0xcbf29ce484222325ull
uint64_t tw_fnv1a(uint64_t h, const void *data, size_t bytes);

/* Full path of the TetGen executable (PATH search when `name` has no '/'),
 * written to out; 0 when not found or not executable. */
int tw_mesher_find_tetgen(const char *name, char *out, size_t size);
#endif
