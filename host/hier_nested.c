/* Nested levels: each tet of a level is cut 1:8 by its edge midpoints into
 * the next level (the tetra tree of Imai, Kanai, Yamaguchi and Hasegawa 2013,
 * "Adaptive inhomogeneous simulation of elastic bodies on a tetra tree").
 *
 * A tet (v0, v1, v2, v3) with edge midpoints m01 .. m23 gives four corner
 * tets, each the parent scaled by 1/2 about one corner (so they keep the
 * parent's orientation), and an inner octahedron on the six midpoints. The
 * octahedron is cut into four tets around one of its three diagonals
 * (m01-m23, m02-m13, m03-m12); the shortest one keeps the children's shape
 * closest to the parent's, so repeated refinement does not degrade. The
 * choice is interior to the parent and does not change the faces it shares,
 * so the refined mesh conforms wherever the coarse one does.
 *
 * Numbering: the vertices of level l keep their indices on level l + 1 and
 * the midpoints follow, in the order of first appearance (element order, then
 * local edge order), so that the result does not depend on a hash's layout.
 * The children of tet e are tets 8e .. 8e + 7 of the next level. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hierarchy.h"
#include "mesh.h"

/* The local vertices of a tet's six edges; the midpoint of edge k is local
 * vertex 4 + k of the parent's ten. */
static const int edge_ends[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
enum { M01 = 4, M02, M03, M12, M13, M23 };

/* The children of a tet on its ten local vertices (4 corners, 6 midpoints). */
static const int corner_children[4][4] = {
    {0, M01, M02, M03}, {M01, 1, M12, M13}, {M02, M12, 2, M23}, {M03, M13, M23, 3}};
/* Per diagonal: its two ends and the four midpoints around it, in cyclic
 * order (neighbours in the cycle share a parent corner). */
static const int diagonals[3][6] = {{M01, M23, M02, M03, M13, M12},
                                    {M02, M13, M01, M03, M23, M12},
                                    {M03, M12, M01, M02, M23, M13}};

/* An open-addressing table from an edge (a < b) to its midpoint vertex. */
typedef struct edge_table {
    uint64_t *key; /* (a << 32 | b) + 1; 0 marks an empty slot */
    int *mid;
    size_t mask;
} edge_table;

static uint64_t edge_key(int a, int b)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    return (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
}

static size_t edge_slot(const edge_table *t, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    size_t s = (size_t)(h >> 17) & t->mask;
    while (t->key[s] && t->key[s] != key)
        s = (s + 1) & t->mask;
    return s;
}

static double dist2(const double *a, const double *b)
{
    const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return dx * dx + dy * dy + dz * dz;
}

/* Refines m 1:8 into *fine, filling P (coarse m to fine) and parent (8 nt).
 * Returns TW_OK or an error with tw_last_error set. */
static tw_status refine(const tw_mesh *m, int level, tw_mesh **fine, tw_transfer *P, int **parent)
{
    *fine = NULL;
    *parent = NULL;
    memset(P, 0, sizeof *P);
    if (m->nt > INT32_MAX / 8) /* the children's count must fit an int */
        return tw_fail(TW_ERR_INVALID, "tw_hier_nested: level %d has %d tets; 8 times that does not fit an int",
                       level, m->nt);
    edge_table t;
    size_t cap = 16;
    while (cap < 12 * (size_t)m->nt) /* at most 6 nt edges: load factor <= 1/2 */
        cap <<= 1;
    t.mask = cap - 1;
    t.key = tw_calloc(cap, sizeof *t.key, "edge table");
    t.mid = tw_malloc(cap * sizeof *t.mid, "edge table");
    int *emid = tw_malloc(6 * (size_t)m->nt * sizeof *emid, "element midpoints");
    if (!t.key || !t.mid || !emid) {
        free(t.key);
        free(t.mid);
        free(emid);
        return TW_ERR_NOMEM;
    }
    int nv = m->nv;
    for (int e = 0; e < m->nt; e++) {
        const int *v = m->tets + 4 * (size_t)e;
        for (int k = 0; k < 6; k++) {
            const uint64_t key = edge_key(v[edge_ends[k][0]], v[edge_ends[k][1]]);
            const size_t s = edge_slot(&t, key);
            if (!t.key[s]) {
                t.key[s] = key;
                t.mid[s] = nv++;
            }
            emid[6 * (size_t)e + k] = t.mid[s];
        }
    }
    free(t.key);
    free(t.mid);
    if (nv < m->nv) { /* overflow of the vertex count */
        free(emid);
        return tw_fail(TW_ERR_INVALID, "tw_hier_nested: level %d has too many vertices", level + 1);
    }

    const int nt = 8 * m->nt;
    double *X = tw_malloc(3 * (size_t)nv * sizeof *X, "refined positions");
    int *tets = tw_malloc(4 * (size_t)nt * sizeof *tets, "refined tets");
    int *region = tw_malloc((size_t)nt * sizeof *region, "refined regions");
    int *par = tw_malloc((size_t)nt * sizeof *par, "parent tets");
    P->idx = tw_malloc(TW_HIER_ROW * (size_t)nv * sizeof *P->idx, "transfer indices");
    P->w = tw_malloc(TW_HIER_ROW * (size_t)nv * sizeof *P->w, "transfer weights");
    if (!X || !tets || !region || !par || !P->idx || !P->w) {
        free(emid);
        free(X);
        free(tets);
        free(region);
        free(par);
        tw_transfer_free(P);
        return TW_ERR_NOMEM;
    }
    P->n_fine = nv;
    P->n_coarse = m->nv;
    memcpy(X, m->X, 3 * (size_t)m->nv * sizeof *X);
    for (int i = 0; i < m->nv; i++)
        for (int k = 0; k < TW_HIER_ROW; k++) {
            P->idx[TW_HIER_ROW * (size_t)i + k] = i;
            P->w[TW_HIER_ROW * (size_t)i + k] = k == 0 ? 1.0 : 0.0;
        }
    for (int e = 0; e < m->nt; e++) {
        const int *v = m->tets + 4 * (size_t)e;
        int loc[10];
        for (int k = 0; k < 4; k++)
            loc[k] = v[k];
        for (int k = 0; k < 6; k++) {
            const int a = v[edge_ends[k][0]], b = v[edge_ends[k][1]], mid = emid[6 * (size_t)e + k];
            loc[4 + k] = mid;
            /* each midpoint is written by every tet sharing its edge, with the
             * same values: (a + b) / 2 is symmetric in a and b */
            for (int d = 0; d < 3; d++)
                X[3 * (size_t)mid + d] = 0.5 * (m->X[3 * (size_t)a + d] + m->X[3 * (size_t)b + d]);
            const int lo = a < b ? a : b, hi = a < b ? b : a;
            int *row = P->idx + TW_HIER_ROW * (size_t)mid;
            double *w = P->w + TW_HIER_ROW * (size_t)mid;
            row[0] = lo;
            row[1] = hi;
            row[2] = row[3] = lo;
            w[0] = w[1] = 0.5;
            w[2] = w[3] = 0.0;
        }
        int *c = tets + 32 * (size_t)e;
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 4; j++)
                c[4 * k + j] = loc[corner_children[k][j]];
        int best = 0;
        double best_len = INFINITY;
        for (int k = 0; k < 3; k++) {
            const double l2 = dist2(X + 3 * (size_t)loc[diagonals[k][0]], X + 3 * (size_t)loc[diagonals[k][1]]);
            if (l2 < best_len) {
                best_len = l2;
                best = k;
            }
        }
        const int *dg = diagonals[best];
        for (int k = 0; k < 4; k++) {
            int *ch = c + 16 + 4 * k;
            ch[0] = loc[dg[0]];
            ch[1] = loc[dg[1]];
            ch[2] = loc[dg[2 + k]];
            ch[3] = loc[dg[2 + (k + 1) % 4]];
            const double det = tw_tet_det(X + 3 * (size_t)ch[0], X + 3 * (size_t)ch[1],
                                          X + 3 * (size_t)ch[2], X + 3 * (size_t)ch[3]);
            if (det < 0) {
                const int s = ch[2];
                ch[2] = ch[3];
                ch[3] = s;
            }
        }
        for (int k = 0; k < 8; k++) {
            region[8 * (size_t)e + k] = m->region[e];
            par[8 * (size_t)e + k] = e;
        }
    }
    free(emid);
    char name[64];
    snprintf(name, sizeof name, "tw_hier_nested level %d", level + 1);
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.strict = 1; /* the children are oriented here: a flip would be a bug */
    def.quiet = 1;
    tw_mesh *f = tw_mesh_adopt(X, nv, tets, nt, region, name, &def, NULL);
    if (!f) {
        free(par);
        tw_transfer_free(P);
        return TW_ERR_INVALID;
    }
    snprintf(f->name, sizeof f->name, "%.200s (level %d)", m->name, level + 1);
    *fine = f;
    *parent = par;
    return TW_OK;
}

tw_hierarchy *tw_hier_nested(const tw_mesh *base, int levels)
{
    if (!base) {
        tw_fail(TW_ERR_INVALID, "tw_hier_nested: no base mesh");
        return NULL;
    }
    /* 8^(levels-1) children per base tet must fit an int */
    if (levels < 1 || levels > 10) {
        tw_fail(TW_ERR_INVALID, "tw_hier_nested: %d levels; 1 to 10 are possible", levels);
        return NULL;
    }
    tw_hierarchy *h = tw_hier_alloc(TW_HIER_NESTED, levels);
    if (!h)
        return NULL;
    h->level[0] = tw_hier_copy_mesh(base);
    if (!h->level[0]) {
        tw_hier_free(h);
        return NULL;
    }
    for (int l = 1; l < levels; l++)
        if (refine(h->level[l - 1], l - 1, &h->level[l], &h->P[l - 1], &h->parent_tet[l]) != TW_OK) {
            tw_hier_free(h);
            return NULL;
        }
    return h;
}
