/* The element methods' rotation and elastic force of one element in one
 * body, for the fused kernel of kernels/cuda_kernels.cu (TW_CUDA_ELEMENT=fused):
 * tw_rotation_element then tw_element_force (hd/step.h) each gather the
 * element's four positions and rebuild F; here they are gathered and F built
 * once, and the force uses the R (corot-element, hybrid) or the packed
 * second Piola-Kirchhoff stress (green) just computed. The arithmetic is the
 * two bodies', in their order, so R, S and fe are the same numbers
 * (tests/test_step_fused.c checks it bit for bit on the CPU). TW_HD inline,
 * C11 and nvcc alike (see hd.h). */
#ifndef TW_HD_STEP_FUSED_H
#define TW_HD_STEP_FUSED_H
#include "step.h"

/* corot-element, hybrid, green: element e's R, S (as tw_rotation_element)
 * and its corner forces into fe (as tw_element_force); with psi, also its
 * strain energy density (as tw_compute_elastic_energy's) */
TW_HD void tw_rotation_element_force(const tw_step_view *s, const tw_real *x, int e, tw_method m, tw_real *psi)
{
    tw_v3 xs[4];
    tw_element_displacements(s, x, e, xs);
    const tw_real *g = s->g + 12 * (size_t)e;
    tw_m3 F = tw_elem_deformation(xs, g), P;
    if (m != TW_GREEN) {
        tw_m3 R = tw_polar3(F);
        tw_m3_store(s->R + 9 * (size_t)e, R);
        tw_corot_pack(s->S + TW_COROT_PACK * (size_t)e, R, g, s->vol[e], s->lam[e], s->mu[e]);
        P = m == TW_HYBRID ? tw_hybrid_P(F, R, s->lam[e], s->mu[e], psi) : tw_corot_P(F, R, s->lam[e], s->mu[e], psi);
    } else {
        tw_real *pack = s->S + TW_GREEN_PACK * (size_t)e;
        tw_m3 Fc;
        tw_green_element(pack, F, &Fc, g, s->vol[e], s->lam[e], s->mu[e], psi);
        tw_m3_store(s->R + 9 * (size_t)e, Fc);
        P = tw_m3_mul(Fc, tw_sym_load(pack + 40)); /* the stress as stored, as tw_element_force reads it */
    }
    tw_v3 fp[4];
    tw_elem_forces_from_P(P, g, s->vol[e], fp);
    for (int p = 0; p < 4; p++) tw_v3_store(s->fe + 12 * (size_t)e + 3 * p, fp[p]);
}
#endif
