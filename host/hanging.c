/* Hanging (geometrically constrained) vertices of graded meshes (Zhuang &
 * Canny sec. 5): a vertex on the edge or face of a larger neighbour cell is
 * kept at the weighted average of the vertices that constrain it. It is moved
 * as a kinematic vertex during the step (its target: the average of its
 * constraining vertices' predicted positions x + h v), then set exactly to
 * the average, with the average velocity, after the step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "world.h"

tw_status tw_world_set_hanging(tw_world *w, int count, const int *vertex, const int *ptr,
                               const int *idx, const double *weights)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    tw_status fs = tw_world_fetch(w, 1, 1); /* the vertices are placed from the current state */
    if (fs != TW_OK) return fs;
    int n = w->fem.n;
    if (count < 0 || count > n)
        return tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: count %d out of range [0, %d]", count, n);
    if (count > 0 && (!vertex || !ptr || !idx || !weights))
        return tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: vertex, ptr, idx and weights must not be NULL");
    if (count > 0 && ptr[0] != 0)
        return tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: ptr[0] is %d, must be 0", ptr[0]);
    unsigned char *mark = tw_calloc((size_t)n + 1, 1, "hanging marks");
    if (!mark) return TW_ERR_NOMEM;
    tw_status st = TW_OK;
    for (int k = 0; k < count && st == TW_OK; k++) {
        if (vertex[k] < 0 || vertex[k] >= n)
            st = tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: hanging vertex %d (entry %d) out of range [0, %d)",
                         vertex[k], k, n);
        else if (mark[vertex[k]])
            st = tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: vertex %d is listed twice (entry %d)", vertex[k], k);
        else
            mark[vertex[k]] = 1;
    }
    for (int k = 0; k < count && st == TW_OK; k++) {
        if (ptr[k + 1] <= ptr[k]) {
            st = tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: vertex %d (entry %d) has no constrainers (ptr %d..%d)",
                         vertex[k], k, ptr[k], ptr[k + 1]);
            break;
        }
        double sum = 0;
        for (int j = ptr[k]; j < ptr[k + 1]; j++) {
            if (idx[j] < 0 || idx[j] >= n) {
                st = tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: vertex %d: constrainer %d out of range [0, %d)",
                             vertex[k], idx[j], n);
                break;
            }
            if (idx[j] == vertex[k]) {
                st = tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: vertex %d is among its own constrainers", vertex[k]);
                break;
            }
            if (mark[idx[j]]) {
                st = tw_fail(TW_ERR_INVALID,
                             "tw_world_set_hanging: vertex %d: constrainer %d is hanging itself (substitute its own "
                             "constrainers)", vertex[k], idx[j]);
                break;
            }
            if (!isfinite(weights[j])) {
                st = tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: vertex %d: weight %g is not finite", vertex[k],
                             weights[j]);
                break;
            }
            sum += weights[j];
        }
        if (st == TW_OK && fabs(sum - 1) > 1e-9)
            st = tw_fail(TW_ERR_INVALID, "tw_world_set_hanging: vertex %d: weights sum to %.12g, must be 1", vertex[k],
                         sum);
    }
    free(mark);
    if (st != TW_OK) return st;
    size_t nidx = count > 0 ? (size_t)ptr[count] : 0;
    int *hv = tw_malloc(sizeof(int) * ((size_t)count + 1), "hanging vertices");
    int *hp = tw_malloc(sizeof(int) * ((size_t)count + 1), "hanging ptr");
    int *hi = tw_malloc(sizeof(int) * (nidx + 1), "hanging constrainers");
    double *hw = tw_malloc(sizeof(double) * (nidx + 1), "hanging weights");
    if (!hv || !hp || !hi || !hw) {
        free(hv);
        free(hp);
        free(hi);
        free(hw);
        return TW_ERR_NOMEM;
    }
    for (int k = 0; k < w->nhang; k++) w->cons[w->hang_vertex[k]] = TW_FREE;
    tw_hanging_free(w);
    hp[0] = 0;
    if (count > 0) {
        memcpy(hv, vertex, sizeof(int) * (size_t)count);
        memcpy(hp, ptr, sizeof(int) * ((size_t)count + 1));
        memcpy(hi, idx, sizeof(int) * nidx);
        memcpy(hw, weights, sizeof(double) * nidx);
    }
    w->nhang = count;
    w->hang_vertex = hv;
    w->hang_ptr = hp;
    w->hang_idx = hi;
    w->hang_w = hw;
    tw_hanging_after_step(w); /* at their averages now */
    for (int k = 0; k < count; k++) tw_world_set_constraint(w, hv[k], TW_KINEMATIC);
    return TW_OK;
}

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
