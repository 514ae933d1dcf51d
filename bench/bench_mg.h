/* What the multigrid benchmarks share (tw_bench_multigrid,
 * tw_bench_multigrid_smoothers, tw_bench_boomeramg): their scenes and the
 * residual they report. */
#ifndef TW_BENCH_MG_H
#define TW_BENCH_MG_H
#include "tetwarp.h"
#include "world.h"

/* SCENE: bar:NX,NY,NZ (a 1 x NY/NX x NZ/NX m bar, *is_bar set) or a mesh
 * file, loaded quietly; NULL with tw_last_error set on failure */
tw_mesh *bench_mg_scene(const char *scene, int *is_bar);

/* |S(b - A v)| / |S b| in double (|S(b - A v)| when b is 0); fixed: 1 per
 * fully constrained vertex, whose rows and columns are left out */
double bench_mg_rel_residual(const tw_bsr *A, const tw_real *b, const double *v, const unsigned char *fixed);
#endif
