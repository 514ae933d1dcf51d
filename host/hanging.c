/* Hanging (geometrically constrained) vertices of graded meshes (Zhuang &
 * Canny sec. 5): a vertex on the edge or face of a larger neighbour cell is
 * kept at the weighted average of the vertices that constrain it.
 *
 * Implicit step: the hanging vertices are not unknowns. P (n x nr, nr the
 * non-hanging vertices) writes every vertex's velocity as a combination of
 * the non-hanging ones: the identity on those, the constraint's weights on a
 * hanging one. The step's system A v = b becomes P^T A P v_r = P^T b, the
 * same PCG (and preconditioner) on the reduced unknowns, and v = P v_r: the
 * hanging vertices' mass and elastic force act on their constrainers (the
 * minimiser of the step's energy over the constrained velocities), and they
 * stay on their edges and faces exactly. P's rows are a mesh hierarchy's
 * transfer (hierarchy.h) with rows of any length: a chain of constraints
 * expands to more than four constrainers. Ar = P^T A P keeps its pattern;
 * its values are recomputed at each solve (A changes with the rotations, and
 * within a step with the contacts' friction).
 *
 * The explicit step moves a hanging vertex as a kinematic vertex (its
 * target: the average of its constrainers' predicted positions x + h v).
 * After every step the vertices are set exactly to the average, with the
 * average velocity. The CUDA backend runs the same rows (hd/step_hanging.h):
 * P^T A P applied as P, A, P^T inside its PCG and its BiCGStab
 * (kernels/cuda_pcg.cu, cuda_bicgstab.cu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "error.h"
#include "hd/step_hanging.h"
#include "world.h"

static void system_free(tw_hanging_system *r)
{
    if (!r) return;
    free(r->vertex_of);
    free(r->ptr);
    free(r->idx);
    free(r->wt);
    tw_hier_matrix_free(&r->Ar);
    free(r->b);
    free(r->x);
    free(r->normal);
    free(r->X);
    free(r->cons);
    tw_solver_work_free(&r->work);
    tw_amg_free(r->amg);
    free(r);
}

/* P's rows from the world's constraints: reduced unknowns numbered in
 * vertex order. */
static tw_status system_build(tw_world *w)
{
    int n = w->fem.n;
    tw_hanging_system *r = tw_calloc(1, sizeof *r, "hanging system");
    int *red = tw_malloc(sizeof(int) * ((size_t)n + 1), "hanging system");
    if (!r || !red) {
        free(r);
        free(red);
        return TW_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) red[i] = 0;
    for (int k = 0; k < w->nhang; k++) red[w->hang_vertex[k]] = -1;
    int nr = 0;
    for (int i = 0; i < n; i++)
        if (red[i] == 0) red[i] = nr++;
    /* hanging rows first in a scratch CSR by vertex */
    int *row_of = tw_malloc(sizeof(int) * ((size_t)n + 1), "hanging system");
    size_t nnz = (size_t)(n - w->nhang) + (size_t)w->hang_ptr[w->nhang];
    r->nr = nr;
    r->vertex_of = tw_malloc(sizeof(int) * ((size_t)nr + 1), "hanging system");
    r->ptr = tw_malloc(sizeof(int) * ((size_t)n + 1), "hanging system");
    r->idx = tw_malloc(sizeof(int) * (nnz + 1), "hanging system");
    r->wt = tw_malloc(sizeof(double) * (nnz + 1), "hanging system");
    r->b = tw_malloc(sizeof(tw_real) * 3 * ((size_t)nr + 1), "hanging system");
    r->x = tw_malloc(sizeof(tw_real) * 3 * ((size_t)nr + 1), "hanging system");
    r->normal = tw_malloc(sizeof(tw_real) * 3 * ((size_t)nr + 1), "hanging system");
    r->X = tw_malloc(sizeof(tw_real) * 3 * ((size_t)nr + 1), "hanging system");
    r->cons = tw_malloc((size_t)nr + 1, "hanging system");
    tw_status st = TW_OK;
    if (!row_of || !r->vertex_of || !r->ptr || !r->idx || !r->wt || !r->b || !r->x || !r->normal || !r->X ||
        !r->cons)
        st = TW_ERR_NOMEM;
    else
        st = tw_solver_work_init(&r->work, nr);
    if (st == TW_OK) {
        r->work.half = w->work.half > 0; /* the reduced P^T A P is symmetric where A is */
        for (int i = 0; i < n; i++) row_of[i] = -1;
        for (int k = 0; k < w->nhang; k++) row_of[w->hang_vertex[k]] = k;
        size_t q = 0;
        for (int i = 0; i < n; i++) {
            r->ptr[i] = (int)q;
            if (row_of[i] < 0) {
                r->vertex_of[red[i]] = i;
                for (int c = 0; c < 3; c++) r->X[3 * (size_t)red[i] + c] = w->fem.X[3 * (size_t)i + c];
                r->idx[q] = red[i];
                r->wt[q++] = 1;
                continue;
            }
            for (int j = w->hang_ptr[row_of[i]]; j < w->hang_ptr[row_of[i] + 1]; j++) {
                r->idx[q] = red[w->hang_idx[j]]; /* a constrainer is never hanging */
                r->wt[q++] = w->hang_w[j];
            }
        }
        r->ptr[n] = (int)q;
    }
    free(row_of);
    free(red);
    if (st != TW_OK) {
        system_free(r);
        return st;
    }
    w->hsys = r;
    return TW_OK;
}

static tw_transfer_rows system_rows(const tw_world *w)
{
    const tw_hanging_system *r = w->hsys;
    tw_transfer_rows P = {w->fem.n, r->nr, r->ptr, r->idx, r->wt};
    return P;
}

tw_status tw_hanging_reduce(tw_world *w, const tw_real *b, const tw_real *x, const tw_filter *filter,
                            tw_filter *reduced)
{
    tw_hanging_system *r = w->hsys;
    tw_transfer_rows P = system_rows(w);
    tw_bsr A = tw_world_bsr(w);
    tw_status st = r->Ar.row_ptr ? tw_transfer_rows_galerkin_values(&P, &A, &r->Ar)
                                 : tw_transfer_rows_galerkin(&P, &A, &r->Ar);
    if (st != TW_OK) return st;
    /* P^T b: a scatter in vertex order (deterministic) */
    memset(r->b, 0, sizeof(tw_real) * 3 * (size_t)r->nr);
    for (int i = 0; i < P.n_fine; i++)
        for (int k = r->ptr[i]; k < r->ptr[i + 1]; k++)
            for (int c = 0; c < 3; c++)
                r->b[3 * (size_t)r->idx[k] + c] += tw_hanging_restrict_term(r->wt[k], b[3 * (size_t)i + c]);
    for (int J = 0; J < r->nr; J++) {
        int i = r->vertex_of[J];
        r->cons[J] = filter->cons[i];
        for (int c = 0; c < 3; c++) {
            r->x[3 * (size_t)J + c] = x[3 * (size_t)i + c];
            r->normal[3 * (size_t)J + c] = filter->normal ? filter->normal[3 * (size_t)i + c] : 0;
        }
    }
    reduced->cons = r->cons;
    reduced->normal = r->normal;
    return TW_OK;
}

void tw_hanging_expand(const tw_world *w, tw_real *x)
{
    const tw_hanging_system *r = w->hsys;
    for (int i = 0; i < w->fem.n; i++) tw_hanging_row_expand(r->ptr, r->idx, r->wt, r->x, i, x + 3 * (size_t)i);
}

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
    if (count > 0 && w->bodies) /* body contact's coupled solve runs on the full system, not P^T A P */
        return tw_fail(TW_ERR_UNSUPPORTED, "tw_world_set_hanging: a world of %d bodies (body contact) takes no hanging "
                       "vertices", tw_world_body_stats(w).bodies);
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
    for (int k = 0; k < w->nhang; k++) tw_world_set_cons(w, w->hang_vertex[k], TW_FREE);
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
    return count > 0 ? system_build(w) : TW_OK;
}

void tw_hanging_before_step(tw_world *w, double h)
{
    for (int k = 0; k < w->nhang; k++)
        tw_hanging_target(w->hang_ptr, w->hang_idx, w->hang_w, w->x, w->v, h, k,
                          w->target + 3 * (size_t)w->hang_vertex[k]);
}

void tw_hanging_after_step(tw_world *w)
{
    for (int k = 0; k < w->nhang; k++) {
        size_t q = 3 * (size_t)w->hang_vertex[k];
        tw_hanging_average(w->hang_ptr, w->hang_idx, w->hang_w, w->x, w->v, k, w->x + q, w->v + q);
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
    system_free(w->hsys);
    w->hsys = NULL;
}
