/* Thrust behind C entry points (extern "C", callable from C11): the FEM
 * pattern built on the GPU by sort / unique / scan. The algorithms live in
 * thrust_fem.h; a CPU test
 * (tests/test_thrust_cpu.cpp) runs the same code on Thrust's CPP system
 * against host/fem.c.
 *
 * Every function returns TW_OK, or TW_ERR_INVALID / TW_ERR_NOMEM /
 * TW_ERR_DEVICE with tw_last_error() naming the file, line and call. */
#ifndef TW_THRUST_H
#define TW_THRUST_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The BSR pattern and gather lists of host/fem.h (same arrays, same order),
 * plus block_row, in device memory. */
typedef struct tw_thrust_storage tw_thrust_storage; /* owns the device arrays */
typedef struct tw_thrust_pattern {
    int n, nt, nnzb;
    int *row_ptr;     /* n+1 */
    int *col;         /* nnzb */
    int *diag;        /* n: index of block (i,i) */
    int *block_row;   /* nnzb: the row of each block */
    int *contrib_ptr; /* nnzb+1 */
    int *contrib;     /* 16*nt: e*16 + p*4 + q, per block in element order */
    int *vt_ptr;      /* n+1 */
    int *vt;          /* 4*nt: e*4 + p, per vertex in element order */
    tw_thrust_storage *storage; /* device arrays: tw_thrust_pattern_free; NULL for a host copy: free() each */
} tw_thrust_pattern;

/* Builds the pattern of nt elements over n vertices from tets (4 per
 * element, 0-based), a host array or, with tets_on_device 1, a device one,
 * on `stream` (a cudaStream_t; NULL: the legacy default stream), and waits
 * for it. Indices outside [0, n) are TW_ERR_INVALID. Device memory peaks
 * near 0.4 KB per element (16 pairs of a 64-bit key and an int, sorted with
 * a double buffer): about 2 GB for 5 M elements. */
tw_status tw_thrust_build_pattern(const int *tets, int tets_on_device, int n, int nt, void *stream,
                                  tw_thrust_pattern *out);
/* Copies a device pattern to host memory (malloc'd arrays, storage NULL). */
tw_status tw_thrust_pattern_to_host(const tw_thrust_pattern *device, tw_thrust_pattern *host);
/* Frees either kind and zeroes *p. */
void tw_thrust_pattern_free(tw_thrust_pattern *p);
/* For the benchmark: milliseconds of one tw_thrust_build_pattern from
 * device-resident tets (after a warm-up build; upload not counted), on a
 * stream of its own. */
tw_status tw_thrust_pattern_time(const int *tets, int n, int nt, double *ms);

#ifdef __cplusplus
}
#endif
#endif
