/* The tetra front's gather maps (tetra_front_maps.h): freeing, the step's
 * state packed over them, and the device front's step system run on the
 * CPU in the device's order, which the tests compare with the CPU front's
 * own scatter. The maps are built by the front (tw_front_maps_build,
 * tetra_front.c), whose structures they read. */
#include "tetra_front_maps.h"

#include <stdlib.h>
#include <string.h>

#include "hd/front_element.h"

void tw_front_maps_free(tw_front_maps *m)
{
    free(m->act);
    free(m->corner);
    free(m->used);
    free(m->Xu);
    free(m->free_used);
    free(m->mass);
    free(m->held);
    free(m->diag);
    free(m->blk_ptr);
    free(m->blk_code);
    free(m->blk_w);
    free(m->frc_ptr);
    free(m->frc_code);
    free(m->frc_w);
    memset(m, 0, sizeof *m);
}

void tw_front_maps_pack(const tw_front_maps *m, const double *x, const double *v, const double *fq, double *xu,
                        double *vf, double *fqf)
{
    for (int j = 0; j < m->nu; j++)
        memcpy(xu + 3 * (size_t)j, x + 3 * (size_t)m->used[j], 3 * sizeof *xu);
    for (int i = 0; i < m->n; i++) {
        const size_t u = (size_t)m->used[m->free_used[i]];
        memcpy(vf + 3 * (size_t)i, v + 3 * u, 3 * sizeof *vf);
        if (fq)
            memcpy(fqf + 3 * (size_t)i, fq + 3 * u, 3 * sizeof *fqf);
    }
}

void tw_front_maps_assemble(const tw_front_maps *m, const double *g, const double *Ke, const double *xu,
                            const double *vf, const double *fqf, double *elf, double *elK, tw_real *val,
                            tw_real *rhs, tw_real *vr)
{
    /* one device thread per active tet */
    for (int k = 0; k < m->nact; k++) {
        const int id = m->act[k];
        double R[9];
        tw_front_element(xu, m->Xu, m->corner + 4 * (size_t)k, g + 12 * (size_t)id, Ke + 144 * (size_t)id, R,
                         elf + 12 * (size_t)k, elK + 144 * (size_t)k);
    }
    /* one per block */
    for (int b = 0; b < m->nnzb; b++)
        tw_front_block_gather(m->blk_ptr, m->blk_code, m->blk_w, elK, b, val + 9 * (size_t)b);
    /* one per free vertex, after the blocks: the mass on its diagonal, its
     * right-hand side and start */
    for (int i = 0; i < m->n; i++) {
        tw_front_diag_mass(val + 9 * (size_t)m->diag[i], m->cm, m->mass[i]);
        tw_front_row_rhs(m->frc_ptr, m->frc_code, m->frc_w, elf, i, m->mass[i], vf + 3 * (size_t)i,
                         fqf ? fqf + 3 * (size_t)i : NULL, m->gravity, m->h, m->held[i], rhs + 3 * (size_t)i,
                         vr + 3 * (size_t)i);
    }
}
