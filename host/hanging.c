/* Hanging (geometrically constrained) vertices of graded meshes (Zhuang &
 * Canny sec. 5): a vertex on the edge or face of a larger neighbour cell is
 * kept at the weighted average of the vertices that constrain it. It is moved
 * as a kinematic vertex during the step (its target: the average of its
 * constraining vertices' predicted positions x + h v), then set exactly to
 * the average, with the average velocity, after the step. */
#include <stdlib.h>

#include "world.h"

void tw_hanging_before_step(tw_world *w, double h)
{
    for (int k = 0; k < w->nhang; k++) {
        double p[3] = {0, 0, 0};
        for (int j = w->hang_ptr[k]; j < w->hang_ptr[k + 1]; j++)
            for (int c = 0; c < 3; c++) {
                size_t q = 3 * (size_t)w->hang_idx[j] + c;
                p[c] += w->hang_w[j] * ((double)w->x[q] + h * w->v[q]);
            }
        for (int c = 0; c < 3; c++) w->target[3 * (size_t)w->hang_vertex[k] + c] = (tw_real)p[c];
    }
}

void tw_hanging_after_step(tw_world *w)
{
    for (int k = 0; k < w->nhang; k++) {
        double p[3] = {0, 0, 0}, v[3] = {0, 0, 0};
        for (int j = w->hang_ptr[k]; j < w->hang_ptr[k + 1]; j++)
            for (int c = 0; c < 3; c++) {
                size_t q = 3 * (size_t)w->hang_idx[j] + c;
                p[c] += w->hang_w[j] * w->x[q];
                v[c] += w->hang_w[j] * w->v[q];
            }
        for (int c = 0; c < 3; c++) {
            w->x[3 * (size_t)w->hang_vertex[k] + c] = (tw_real)p[c];
            w->v[3 * (size_t)w->hang_vertex[k] + c] = (tw_real)v[c];
        }
    }
}

void tw_hanging_free(tw_world *w)
{
    free(w->hang_vertex);
    free(w->hang_ptr);
    free(w->hang_idx);
    free(w->hang_w);
    w->hang_vertex = w->hang_ptr = w->hang_idx = NULL;
    w->hang_w = NULL;
    w->nhang = 0;
}
