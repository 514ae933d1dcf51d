/* The tetra front's gather maps: what a device front needs, besides the
 * pattern, to run the step's element pass and assembly itself
 * (kernels/cuda_front.cu), built on the host at every rebuild from the CPU
 * front's structures (host/tetra_front.c) and uploaded once per switch.
 *
 * - the active tets (tree ids) and their corners as indices into the front's
 *   vertices (`used`: the corners of active tets, in vertex order), whose
 *   positions are the element pass's input each step;
 * - per BSR block of the front's system (the CPU front's numbering, which
 *   the device pattern equals) its contributions (active tet k, corners p,
 *   q: tw_front_block_code; weight ck W[p][sI] W[q][sJ]) in the order the
 *   CPU front scatters them (both take them from one walk, front_walk in
 *   tetra_front.c), so that one thread per block gathers the same sum in
 *   the same order (hd/front_element.h);
 * - per free vertex its force contributions (k, p: tw_front_force_code;
 *   weight W[p][sI]) in the same way, its lumped mass, its held flag and its
 *   index into `used`.
 * Plain C, no dependency on the front's private struct: the device side
 * reads the arrays only. */
#ifndef TW_TETRA_FRONT_MAPS_H
#define TW_TETRA_FRONT_MAPS_H
#include "tetwarp.h"

typedef struct tw_front_maps {
    int nact, nu, n, nnzb;
    int *act;            /* nact: tree tet ids, in the front's order */
    int *corner;         /* 4 nact: each active tet's corners, indices into used */
    int *used;           /* nu: the front's vertices (finest ids, ascending) */
    double *Xu;          /* 3 nu: their rest positions */
    int *free_used;      /* n: free vertex i's index into used */
    double *mass;        /* n: lumped mass of free vertex i, kg */
    unsigned char *held; /* n: 1 where free vertex i is held (its row filtered) */
    int *diag;           /* n: free vertex i's diagonal block */
    int *blk_ptr;        /* nnzb + 1 */
    int *blk_code;       /* blk_ptr[nnzb]: tw_front_block_code(k, p, q) */
    double *blk_w;       /* blk_ptr[nnzb]: ck W[p][sI] W[q][sJ] */
    int *frc_ptr;        /* n + 1 */
    int *frc_code;       /* frc_ptr[n]: tw_front_force_code(k, p) */
    double *frc_w;       /* frc_ptr[n]: W[p][sI] */
    double cm, h, gravity[3]; /* the system's mass factor 1 + h alpha, the step, m/s^2 */
} tw_front_maps;

void tw_front_maps_free(tw_front_maps *m);

/* One step's state over the maps: x over the front's vertices (3 nu), v and
 * the reduced external forces fq (NULL: none) over the free vertices (3 n),
 * from the per finest vertex arrays. */
void tw_front_maps_pack(const tw_front_maps *m, const double *x, const double *v, const double *fq, double *xu,
                        double *vf, double *fqf);

/* The device front's step system on the CPU, in the device's order (tests):
 * per active tet the element pass (hd/front_element.h) at xu into elf (12
 * nact) and elK (144 nact), from the tree's gradients g (12 per tree tet)
 * and element stiffness Ke (144 per tree tet); then per block its gather
 * into val (9 nnzb), per free vertex its rhs and start vr (3 n). */
void tw_front_maps_assemble(const tw_front_maps *m, const double *g, const double *Ke, const double *xu,
                            const double *vf, const double *fqf, double *elf, double *elK, tw_real *val,
                            tw_real *rhs, tw_real *vr);
#endif
