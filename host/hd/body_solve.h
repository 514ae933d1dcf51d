/* The coupled body-contact solve's per-contact and per-vertex pieces
 * (host/contact_bodies.c tw_bodies_solve: P y, S P^T r, the friction and
 * springs' terms A lacks, the preconditioner's blocks, the springs'
 * right-hand side). TW_HD inline, C11 and nvcc alike (see hd.h):
 * contact_bodies.c's loops call the per-contact terms, and
 * kernels/cuda_bodies.cu runs the same terms on one thread per contact or
 * per vertex.
 *
 * The CPU scatters each contact's terms onto its triangle's vertices in
 * contact order. The device gathers instead, with no atomics: every vertex
 * has the list of (contact, corner) pairs whose triangle holds it, in
 * contact order (tw_body_ops_build), so P^T's additions into a vertex come
 * in the CPU's order. The friction, spring and preconditioner sums gather
 * per vertex by kind (the vertex's own contact, then its corners, then the
 * springs), which orders the float additions differently from the CPU's
 * interleaving: the last bits differ. One more difference: the CPU's
 * preconditioner reads a held vertex's normal diagonal n.D n after the
 * earlier contacts' corner terms were added to D, the device from A's own
 * block; the two differ only where a held vertex is a corner of another
 * contact's triangle (a chain), and only in the preconditioner. */
#ifndef TW_HD_BODY_SOLVE_H
#define TW_HD_BODY_SOLVE_H
#include <stdlib.h>

#include "hd/bsr_row_real.h" /* tw_filter_block */

/* sum_k w_k (n . y_Tk) in double: the normal velocity of the triangle T's
 * point with weights cw along n (P's first term) */
TW_HD double tw_body_point_normal(const int *T, const tw_real *cw, const tw_real *nn, const tw_real *y)
{
    double s = 0;
    for (int j = 0; j < 3; j++) {
        const tw_real *yk = y + 3 * (size_t)T[j];
        s += cw[j] * ((double)yk[0] * nn[0] + (double)yk[1] * nn[1] + (double)yk[2] * nn[2]);
    }
    return s;
}

/* n . r in double */
TW_HD double tw_body_normal_of(const tw_real *r, const tw_real *nn)
{
    return (double)r[0] * nn[0] + (double)r[1] * nn[1] + (double)r[2] * nn[2];
}

/* A chain's term: a held vertex's normal term t (along its normal nq)
 * carried to a contact of normal nn whose triangle holds it with weight w */
TW_HD double tw_body_chain_term(tw_real w, const tw_real *nn, const tw_real *nq, double t)
{
    return w * ((double)nn[0] * nq[0] + (double)nn[1] * nq[1] + (double)nn[2] * nq[2]) * t;
}

/* P^T's term on a triangle vertex: weight w times the contact's normal
 * residual s along n_a */
TW_HD tw_real tw_body_spread(tw_real w, double s, tw_real na) { return (tw_real)(w * s * na); }

/* The relative friction's terms (damping cf of (v_p - v_q)_t, v_q the
 * triangle point's velocity): tu, what the vertex's own block cf T in A
 * does not hold (subtracted at the vertex), and td, the relative tangential
 * velocity times cf (subtracted at corner k with weight w_k) */
TW_HD void tw_body_friction_terms(double cf, const int *T, const tw_real *cw, const tw_real *nn, const tw_real *v,
                                  int i, double tu[3], double td[3])
{
    const tw_real *vi = v + 3 * (size_t)i;
    double u[3], un = 0, dv[3], dn = 0;
    for (int a = 0; a < 3; a++) {
        u[a] = cw[0] * v[3 * (size_t)T[0] + a] + cw[1] * v[3 * (size_t)T[1] + a] + cw[2] * v[3 * (size_t)T[2] + a];
        un += u[a] * nn[a];
        dv[a] = vi[a] - u[a];
    }
    for (int a = 0; a < 3; a++) dn += dv[a] * nn[a];
    for (int a = 0; a < 3; a++) {
        tu[a] = cf * (u[a] - un * nn[a]);
        td[a] = cf * (dv[a] - dn * nn[a]);
    }
}

/* A spring's normal rate n.(v_i - sum_k w_k v_Tk) (its force is pk times it) */
TW_HD double tw_body_spring_rate(const int *T, const tw_real *cw, const tw_real *nn, const tw_real *v, int i)
{
    double u = 0;
    for (int a = 0; a < 3; a++)
        u += nn[a] * (v[3 * (size_t)i + a] - cw[0] * v[3 * (size_t)T[0] + a] - cw[1] * v[3 * (size_t)T[1] + a] -
                      cw[2] * v[3 * (size_t)T[2] + a]);
    return u;
}

/* n . D n of a 3x3 block */
TW_HD double tw_body_normal_diag(const tw_real *nn, const tw_real *D)
{
    double an = 0;
    for (int r0 = 0; r0 < 3; r0++)
        for (int c0 = 0; c0 < 3; c0++) an += nn[r0] * D[3 * r0 + c0] * nn[c0];
    return an;
}

/* The preconditioner's term on a held contact's triangle vertex (weight w):
 * the held vertex's normal diagonal an riding on it, and the relative
 * friction cf, w^2 (an n n^T + cf (I - n n^T)), added to Dk */
TW_HD void tw_body_corner_block(tw_real w, double an, double cf, const tw_real *nn, tw_real *Dk)
{
    for (int r0 = 0; r0 < 3; r0++)
        for (int c0 = 0; c0 < 3; c0++)
            Dk[3 * r0 + c0] += (tw_real)(w * w * (an * nn[r0] * nn[c0] + cf * ((r0 == c0) - nn[r0] * nn[c0])));
}

/* A spring of stiffness k's preconditioner term, ww k n n^T (ww = 1 at its
 * vertex, w_k^2 at corner k: pass w = 1 or w_k), added to D */
TW_HD void tw_body_spring_block(tw_real w, double k, const tw_real *nn, tw_real *D)
{
    for (int r0 = 0; r0 < 3; r0++)
        for (int c0 = 0; c0 < 3; c0++) D[3 * r0 + c0] += (tw_real)(w * w * k * nn[r0] * nn[c0]);
}

/* A spring's stiffness (TW_BODY_SPRING x the vertex's normal diagonal an of
 * A) and its force at the start of the step, -(k/heff)(d - slack), along n
 * (slack: TW_BODY_SLACK x size; d its start distance) */
TW_HD double tw_body_spring_force(double k, double heff, double d, double slack) { return -k / heff * (d - slack); }

/* ---- the device's gather form (kernels/cuda_bodies.cu; tests/test_body_solve.c) ---- */

/* The coupled solve's lists in the form the device gathers from: per
 * contact c (nact of them, in contact_bodies.c's order) its vertex act[c],
 * triangle tri[3c..] and weights cw[3c..], start distance cd[c]; per spring
 * s (npen) the same in pen, ptri, pw, pd; per vertex its contact cidx[i]
 * and spring pidx[i] (-1 none) and the lists inc (contact c, corner j as
 * 3c + j) and pinc (spring s, corner j as 3s + j) of the triangles holding
 * it, in contact order (CSR: inc_ptr, pinc_ptr, n + 1). Per vertex too, the
 * world's (device's) contact normal, friction damping and filter. Scratch:
 * t and s (depth x nact: P's and P^T's chain levels), an (nact: the held
 * vertices' normal diagonal), fr (6 per contact: the friction's tu, td;
 * zero without friction), pk and su (per spring: stiffness, pk times its
 * rate). */
typedef struct tw_body_ops {
    int n, nact, npen, depth;
    const int *act, *tri, *cidx, *inc_ptr, *inc;
    const tw_real *cw, *cd;
    const int *pen, *ptri, *pidx, *pinc_ptr, *pinc;
    const tw_real *pw, *pd;
    const tw_real *cnormal, *cfric;
    const unsigned char *fcons;
    double *t, *s, *an, *fr, *pk, *su;
    double heff, slack;
} tw_body_ops;

/* P's first level at contact c: t[c] = n_c . (triangle point of y) */
TW_HD void tw_body_ops_first(const tw_body_ops *o, int c, const tw_real *y)
{
    int i = o->act[c];
    o->t[c] = tw_body_point_normal(o->tri + 3 * (size_t)c, o->cw + 3 * (size_t)c, o->cnormal + 3 * (size_t)i, y);
}

/* P's level r (1 .. depth-1) at contact c from level r - 1: the held
 * corners' terms carried along the chain */
TW_HD void tw_body_ops_chain(const tw_body_ops *o, int r, int c)
{
    const double *tp = o->t + (size_t)(r - 1) * o->nact;
    const int *T = o->tri + 3 * (size_t)c;
    const tw_real *nn = o->cnormal + 3 * (size_t)o->act[c], *cw = o->cw + 3 * (size_t)c;
    double s = 0;
    for (int j = 0; j < 3; j++) {
        int q = o->cidx[T[j]];
        if (q < 0) continue;
        s += tw_body_chain_term(cw[j], nn, o->cnormal + 3 * (size_t)T[j], tp[q]);
    }
    o->t[(size_t)r * o->nact + c] = s;
}

/* v_i = (P y)_i after the levels: y_i, plus each level's normal term on a
 * held vertex */
TW_HD void tw_body_ops_expand(const tw_body_ops *o, int i, const tw_real *y, tw_real *v)
{
    tw_real *vi = v + 3 * (size_t)i;
    for (int a = 0; a < 3; a++) vi[a] = y[3 * (size_t)i + a];
    int c = o->cidx[i];
    if (c < 0) return;
    const tw_real *nn = o->cnormal + 3 * (size_t)i;
    for (int r = 0; r < o->depth; r++)
        for (int a = 0; a < 3; a++) vi[a] += (tw_real)(o->t[(size_t)r * o->nact + c] * nn[a]);
}

/* P^T's first level at contact c: its vertex's normal residual */
TW_HD void tw_body_ops_normal_residual(const tw_body_ops *o, int c, const tw_real *r)
{
    int i = o->act[c];
    o->s[c] = tw_body_normal_of(r + 3 * (size_t)i, o->cnormal + 3 * (size_t)i);
}

/* P^T's level q on vertex k: each contact whose triangle holds k adds its
 * normal residual by k's weight, in contact order */
TW_HD void tw_body_ops_restrict(const tw_body_ops *o, int q, int k, tw_real *r)
{
    const double *s = o->s + (size_t)q * o->nact;
    tw_real *rk = r + 3 * (size_t)k;
    for (int e = o->inc_ptr[k]; e < o->inc_ptr[k + 1]; e++) {
        int c = o->inc[e] / 3, j = o->inc[e] % 3;
        const tw_real *nn = o->cnormal + 3 * (size_t)o->act[c];
        for (int a = 0; a < 3; a++) rk[a] += tw_body_spread(o->cw[3 * (size_t)c + j], s[c], nn[a]);
    }
}

/* P^T's level q + 1 at held contact k from level q: the residuals of the
 * contacts whose triangles hold k's vertex, carried on along the chain */
TW_HD void tw_body_ops_restrict_chain(const tw_body_ops *o, int q, int k)
{
    const double *s = o->s + (size_t)q * o->nact;
    int i = o->act[k];
    const tw_real *nk = o->cnormal + 3 * (size_t)i;
    double sum = 0;
    for (int e = o->inc_ptr[i]; e < o->inc_ptr[i + 1]; e++) {
        int c = o->inc[e] / 3, j = o->inc[e] % 3;
        sum += tw_body_chain_term(o->cw[3 * (size_t)c + j], o->cnormal + 3 * (size_t)o->act[c], nk, s[c]);
    }
    o->s[(size_t)(q + 1) * o->nact + k] = sum;
}

/* v_i = S v_i (the solvers' filter with the world's fcons and contact
 * normals) */
TW_HD void tw_body_ops_filter(const tw_body_ops *o, int i, tw_real *v)
{
    tw_filter_block(o->fcons[i], o->cnormal, i, v + 3 * (size_t)i);
}

/* Contact c's friction terms at v (zero without friction) */
TW_HD void tw_body_ops_friction(const tw_body_ops *o, int c, const tw_real *v)
{
    int i = o->act[c];
    double cf = o->cfric[i], *f = o->fr + 6 * (size_t)c;
    if (!(cf > 0)) {
        for (int a = 0; a < 6; a++) f[a] = 0;
        return;
    }
    tw_body_friction_terms(cf, o->tri + 3 * (size_t)c, o->cw + 3 * (size_t)c, o->cnormal + 3 * (size_t)i, v, i, f,
                           f + 3);
}

/* Spring s's force rate at v: pk times its normal rate */
TW_HD void tw_body_ops_spring(const tw_body_ops *o, int s, const tw_real *v)
{
    int i = o->pen[s];
    o->su[s] = o->pk[s] * tw_body_spring_rate(o->ptri + 3 * (size_t)s, o->pw + 3 * (size_t)s,
                                              o->cnormal + 3 * (size_t)i, v, i);
}

/* Av_k plus the friction's and the springs' terms on vertex k (after
 * tw_body_ops_friction and tw_body_ops_spring at the same v) */
TW_HD void tw_body_ops_apply(const tw_body_ops *o, int k, tw_real *Av)
{
    tw_real *ak = Av + 3 * (size_t)k;
    int c = o->cidx[k], p = o->pidx[k];
    if (c >= 0 && o->cfric[k] > 0)
        for (int a = 0; a < 3; a++) ak[a] -= (tw_real)o->fr[6 * (size_t)c + a];
    for (int e = o->inc_ptr[k]; e < o->inc_ptr[k + 1]; e++) {
        int q = o->inc[e] / 3, j = o->inc[e] % 3;
        if (!(o->cfric[o->act[q]] > 0)) continue;
        for (int a = 0; a < 3; a++) ak[a] -= (tw_real)(o->cw[3 * (size_t)q + j] * o->fr[6 * (size_t)q + 3 + a]);
    }
    if (p >= 0) {
        const tw_real *nn = o->cnormal + 3 * (size_t)k;
        for (int a = 0; a < 3; a++) ak[a] += (tw_real)(o->su[p] * nn[a]);
    }
    for (int e = o->pinc_ptr[k]; e < o->pinc_ptr[k + 1]; e++) {
        int s = o->pinc[e] / 3, j = o->pinc[e] % 3;
        const tw_real *nn = o->cnormal + 3 * (size_t)o->pen[s];
        for (int a = 0; a < 3; a++) ak[a] -= (tw_real)(o->pw[3 * (size_t)s + j] * o->su[s] * nn[a]);
    }
}

/* Per contact c: an[c], its vertex's normal diagonal of A (diag: the
 * block index of each vertex's diagonal block in val) */
TW_HD void tw_body_ops_contact_diag(const tw_body_ops *o, int c, const int *diag, const tw_real *val)
{
    int i = o->act[c];
    o->an[c] = tw_body_normal_diag(o->cnormal + 3 * (size_t)i, val + 9 * (size_t)diag[i]);
}

/* Per spring s: its stiffness pk[s] = spring x its vertex's normal diagonal of A */
TW_HD void tw_body_ops_spring_stiffness(const tw_body_ops *o, int s, const int *diag, const tw_real *val,
                                        double spring)
{
    int i = o->pen[s];
    o->pk[s] = spring * tw_body_normal_diag(o->cnormal + 3 * (size_t)i, val + 9 * (size_t)diag[i]);
}

/* Vertex k's block of the preconditioner before inversion: A's diagonal
 * block, the held contacts' corner terms, the springs' (after
 * tw_body_ops_contact_diag and tw_body_ops_spring_stiffness) */
TW_HD void tw_body_ops_precond_block(const tw_body_ops *o, int k, const int *diag, const tw_real *val, tw_real *D)
{
    for (int q = 0; q < 9; q++) D[q] = val[9 * (size_t)diag[k] + q];
    for (int e = o->inc_ptr[k]; e < o->inc_ptr[k + 1]; e++) {
        int c = o->inc[e] / 3, j = o->inc[e] % 3, i = o->act[c];
        double cf = o->cfric[i] > 0 ? o->cfric[i] : 0;
        tw_body_corner_block(o->cw[3 * (size_t)c + j], o->an[c], cf, o->cnormal + 3 * (size_t)i, D);
    }
    if (o->pidx[k] >= 0) tw_body_spring_block(1, o->pk[o->pidx[k]], o->cnormal + 3 * (size_t)k, D);
    for (int e = o->pinc_ptr[k]; e < o->pinc_ptr[k + 1]; e++) {
        int s = o->pinc[e] / 3, j = o->pinc[e] % 3;
        tw_body_spring_block(o->pw[3 * (size_t)s + j], o->pk[s], o->cnormal + 3 * (size_t)o->pen[s], D);
    }
}

/* Vertex k's right-hand side with the springs' start forces */
TW_HD void tw_body_ops_rhs(const tw_body_ops *o, int k, const tw_real *b, tw_real *out)
{
    tw_real *ok = out + 3 * (size_t)k;
    for (int a = 0; a < 3; a++) ok[a] = b[3 * (size_t)k + a];
    int p = o->pidx[k];
    if (p >= 0) {
        double f = tw_body_spring_force(o->pk[p], o->heff, o->pd[p], o->slack);
        const tw_real *nn = o->cnormal + 3 * (size_t)k;
        for (int a = 0; a < 3; a++) ok[a] += (tw_real)(f * nn[a]);
    }
    for (int e = o->pinc_ptr[k]; e < o->pinc_ptr[k + 1]; e++) {
        int s = o->pinc[e] / 3, j = o->pinc[e] % 3;
        double f = tw_body_spring_force(o->pk[s], o->heff, o->pd[s], o->slack);
        const tw_real *nn = o->cnormal + 3 * (size_t)o->pen[s];
        for (int a = 0; a < 3; a++) ok[a] -= (tw_real)(o->pw[3 * (size_t)s + j] * f * nn[a]);
    }
}

/* Vertex i's prescribed part s0 from v (v - S v; a held vertex's normal
 * -d/heff) and its free part y = S v */
TW_HD void tw_body_ops_split(const tw_body_ops *o, int i, const tw_real *v, tw_real *y, tw_real *s0)
{
    for (int a = 0; a < 3; a++) y[3 * (size_t)i + a] = v[3 * (size_t)i + a];
    tw_body_ops_filter(o, i, y);
    for (int a = 0; a < 3; a++) s0[3 * (size_t)i + a] = v[3 * (size_t)i + a] - y[3 * (size_t)i + a];
    int c = o->cidx[i];
    if (c < 0) return;
    const tw_real *nn = o->cnormal + 3 * (size_t)i;
    for (int a = 0; a < 3; a++) s0[3 * (size_t)i + a] = (tw_real)(-o->cd[c] / o->heff * nn[a]);
}

/* The lists of a tw_body_ops in host memory, built from contact_bodies.c's
 * (tw_bodies_lists): nact contacts (act: their vertices; ctri: each
 * vertex's triangle; cw 3 per vertex; cd per vertex), npen springs (pen,
 * ptri), tris (3 per surface triangle). One malloc'd block per array (the
 * caller frees them with tw_body_lists_free). Returns 0, or -1 out of
 * memory (nothing left allocated). */
typedef struct tw_body_lists {
    int n, nact, npen;
    int *act, *tri, *cidx, *inc_ptr, *inc, *pen, *ptri, *pidx, *pinc_ptr, *pinc;
    tw_real *cw, *cd, *pw, *pd;
} tw_body_lists;

static inline void tw_body_lists_free(tw_body_lists *l)
{
    free(l->act); free(l->tri); free(l->cidx); free(l->inc_ptr); free(l->inc);
    free(l->pen); free(l->ptri); free(l->pidx); free(l->pinc_ptr); free(l->pinc);
    free(l->cw); free(l->cd); free(l->pw); free(l->pd);
    l->act = l->tri = l->cidx = l->inc_ptr = l->inc = l->pen = l->ptri = l->pidx = l->pinc_ptr = l->pinc = NULL;
    l->cw = l->cd = l->pw = l->pd = NULL;
}

/* The incidence of m triangles (tri, 3 each) on n vertices, CSR in ptr (n +
 * 1) and idx (3m: 3c + j), each vertex's entries in triangle order */
static inline void tw_body_incidence(int n, int m, const int *tri, int *ptr, int *idx)
{
    for (int i = 0; i <= n; i++) ptr[i] = 0;
    for (int e = 0; e < 3 * m; e++) ptr[tri[e] + 1]++;
    for (int i = 0; i < n; i++) ptr[i + 1] += ptr[i];
    for (int e = 0; e < 3 * m; e++) idx[ptr[tri[e]]++] = e; /* e = 3c + j, increasing */
    for (int i = n; i > 0; i--) ptr[i] = ptr[i - 1];
    ptr[0] = 0;
}

static inline int tw_body_lists_build(int n, int nact, const int *act, int npen, const int *pen, const int *ctri,
                                      const int *ptri, const int *tris, const tw_real *cw, const tw_real *cd,
                                      tw_body_lists *l)
{
    size_t a = (size_t)(nact > 0 ? nact : 1), p = (size_t)(npen > 0 ? npen : 1);
    l->n = n;
    l->nact = nact;
    l->npen = npen;
    l->act = (int *)malloc(sizeof(int) * a);
    l->tri = (int *)malloc(sizeof(int) * 3 * a);
    l->cidx = (int *)malloc(sizeof(int) * (size_t)n);
    l->inc_ptr = (int *)malloc(sizeof(int) * ((size_t)n + 1));
    l->inc = (int *)malloc(sizeof(int) * 3 * a);
    l->pen = (int *)malloc(sizeof(int) * p);
    l->ptri = (int *)malloc(sizeof(int) * 3 * p);
    l->pidx = (int *)malloc(sizeof(int) * (size_t)n);
    l->pinc_ptr = (int *)malloc(sizeof(int) * ((size_t)n + 1));
    l->pinc = (int *)malloc(sizeof(int) * 3 * p);
    l->cw = (tw_real *)malloc(sizeof(tw_real) * 3 * a);
    l->cd = (tw_real *)malloc(sizeof(tw_real) * a);
    l->pw = (tw_real *)malloc(sizeof(tw_real) * 3 * p);
    l->pd = (tw_real *)malloc(sizeof(tw_real) * p);
    if (!l->act || !l->tri || !l->cidx || !l->inc_ptr || !l->inc || !l->pen || !l->ptri || !l->pidx ||
        !l->pinc_ptr || !l->pinc || !l->cw || !l->cd || !l->pw || !l->pd) {
        tw_body_lists_free(l);
        return -1;
    }
    for (int i = 0; i < n; i++) l->cidx[i] = l->pidx[i] = -1;
    for (int c = 0; c < nact; c++) {
        int i = act[c];
        l->act[c] = i;
        l->cidx[i] = c;
        l->cd[c] = cd[i];
        for (int j = 0; j < 3; j++) {
            l->tri[3 * c + j] = tris[3 * (size_t)ctri[i] + j];
            l->cw[3 * c + j] = cw[3 * (size_t)i + j];
        }
    }
    for (int s = 0; s < npen; s++) {
        int i = pen[s];
        l->pen[s] = i;
        l->pidx[i] = s;
        l->pd[s] = cd[i];
        for (int j = 0; j < 3; j++) {
            l->ptri[3 * s + j] = tris[3 * (size_t)ptri[i] + j];
            l->pw[3 * s + j] = cw[3 * (size_t)i + j];
        }
    }
    tw_body_incidence(n, nact, l->tri, l->inc_ptr, l->inc);
    tw_body_incidence(n, npen, l->ptri, l->pinc_ptr, l->pinc);
    return 0;
}
#endif
