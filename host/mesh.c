/* The mesh object: validation on adoption, boundary extraction, statistics
 * and writers.
 *
 * Boundary faces, duplicate elements and folded neighbours are all found
 * the same way: every face (or element) becomes a key of sorted vertex
 * indices, the keys are bucketed by their smallest vertex with a counting
 * sort (O(n)), and each bucket, a handful of keys on a real mesh, is sorted
 * on the remaining indices. Equal keys are then neighbours: a face key alone
 * is on the boundary, two equal ones are the two sides of an interior face.
 * No hash table, no per-insert search: a few million tets take well under a
 * second.
 *
 * Folded elements: two tets that share a face must lie on opposite sides of
 * it, so the vertices opposite the face have signed distances of opposite
 * sign. The same sign means the two overlap (a fold, as when one of them was
 * reflected through the face); each is positive on its own, so neither the
 * volume nor the orientation check sees it. */
#include "mesh.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

tw_mesh_load_def tw_default_mesh_load_def(void)
{
    tw_mesh_load_def d;
    d.strict = 0;
    d.quiet = 0;
    return d;
}

double tw_tet_det(const double *a, const double *b, const double *c, const double *d)
{
    double u[3], v[3], w[3];
    for (int i = 0; i < 3; i++) {
        u[i] = b[i] - a[i];
        v[i] = c[i] - a[i];
        w[i] = d[i] - a[i];
    }
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
           u[2] * (v[0] * w[1] - v[1] * w[0]);
}

double tw_mesh_det(const tw_mesh *m, int e)
{
    const int *t = m->tets + 4 * (size_t)e;
    return tw_tet_det(m->X + 3 * (size_t)t[0], m->X + 3 * (size_t)t[1], m->X + 3 * (size_t)t[2],
                      m->X + 3 * (size_t)t[3]);
}

/* ------------------------------------------------------------ key sorting */

/* A key of up to 4 sorted vertex indices (unused slots -1) and its owner. */
typedef struct tw_key {
    int k[4];
    int id;
} tw_key;

static int key_cmp(const tw_key *a, const tw_key *b)
{
    for (int i = 1; i < 4; i++)
        if (a->k[i] != b->k[i]) return a->k[i] < b->k[i] ? -1 : 1;
    return 0;
}

static int key_qcmp(const void *a, const void *b)
{
    int c = key_cmp((const tw_key *)a, (const tw_key *)b);
    if (c) return c;
    return ((const tw_key *)a)->id - ((const tw_key *)b)->id;
}

/* Sorts keys (k[0] in [0,nv)) lexicographically; returns a new array or NULL. */
static tw_key *sort_keys(const tw_key *in, size_t n, int nv)
{
    size_t *start = tw_calloc((size_t)nv + 1, sizeof *start, "key buckets");
    tw_key *out = tw_malloc(n * sizeof *out, "sorted keys");
    if (!start || !out) {
        free(start);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) start[in[i].k[0] + 1]++;
    for (int v = 0; v < nv; v++) start[v + 1] += start[v];
    for (size_t i = 0; i < n; i++) out[start[in[i].k[0]]++] = in[i];
    /* start[v] is now the end of bucket v */
    size_t b0 = 0;
    for (int v = 0; v < nv; v++) {
        size_t b1 = start[v], len = b1 - b0;
        tw_key *b = out + b0;
        if (len > 32) {
            qsort(b, len, sizeof *b, key_qcmp);
        } else {
            for (size_t i = 1; i < len; i++) {
                tw_key x = b[i];
                size_t j = i;
                while (j > 0 && key_qcmp(&b[j - 1], &x) > 0) {
                    b[j] = b[j - 1];
                    j--;
                }
                b[j] = x;
            }
        }
        b0 = b1;
    }
    free(start);
    return out;
}

static void sort4(int *k)
{
    for (int i = 1; i < 4; i++) {
        int x = k[i], j = i;
        while (j > 0 && k[j - 1] > x) {
            k[j] = k[j - 1];
            j--;
        }
        k[j] = x;
    }
}

/* The face opposite vertex i of a positively oriented tet (a,b,c,d),
 * ordered so that its normal points out of the tet. */
static const int tw_face_of[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

/* Every element's 4 faces as sorted keys (id = 4*element + local face,
 * the face opposite that local vertex), sorted so that the faces two
 * elements share are neighbours. 4*nt keys, or NULL when out of memory. */
static tw_key *sorted_face_keys(const int *tets, int nt, int nv)
{
    size_t nf = 4 * (size_t)nt;
    tw_key *keys = tw_malloc(nf * sizeof *keys, "face keys");
    if (!keys) return NULL;
    for (int e = 0; e < nt; e++) {
        const int *t = tets + 4 * (size_t)e;
        for (int f = 0; f < 4; f++) {
            tw_key *k = &keys[4 * (size_t)e + f];
            int a = t[tw_face_of[f][0]], b = t[tw_face_of[f][1]], c = t[tw_face_of[f][2]], s;
            if (a > b) { s = a; a = b; b = s; }
            if (b > c) { s = b; b = c; c = s; }
            if (a > b) { s = a; a = b; b = s; }
            k->k[0] = a;
            k->k[1] = b;
            k->k[2] = c;
            k->k[3] = -1;
            k->id = 4 * e + f;
        }
    }
    tw_key *sorted = sort_keys(keys, nf, nv);
    free(keys);
    return sorted;
}

/* The end of the run of keys equal to sorted[i]. */
static size_t key_run_end(const tw_key *sorted, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && sorted[j].k[0] == sorted[i].k[0] && key_cmp(&sorted[j], &sorted[i]) == 0) j++;
    return j;
}

/* ------------------------------------------------------------- adoption */

/* "path:line: " or "path: " into buf. */
static const char *where(char *buf, size_t size, const tw_mesh_source *src, int e)
{
    if (src->element_line && e >= 0)
        snprintf(buf, size, "%s:%d", src->path, src->element_line[e]);
    else
        snprintf(buf, size, "%s", src->path);
    return buf;
}

/* Pairs of elements that lie on the same side of a face they share (see the
 * top of the file); the first pair found as pair[0] < pair[1] and their
 * face's vertices as pair[2..4] (all -1 when none). -1 when out of memory. */
static int count_folded(const double *X, const int *tets, int nt, int nv, int pair[5])
{
    size_t nf = 4 * (size_t)nt;
    for (int v = 0; v < 5; v++) pair[v] = -1;
    tw_key *sorted = sorted_face_keys(tets, nt, nv);
    if (!sorted) return -1;
    int folded = 0;
    for (size_t i = 0; i < nf;) {
        size_t j = key_run_end(sorted, nf, i);
        const int *k = sorted[i].k;
        const double *a = X + 3 * (size_t)k[0], *b = X + 3 * (size_t)k[1], *c = X + 3 * (size_t)k[2];
        /* a run of two on a sound mesh; more where the mesh is not a manifold */
        for (size_t p = i; p < j; p++)
            for (size_t q = p + 1; q < j; q++) {
                /* id = 4*element + f, and vertex f of the element is the one opposite face f */
                double dp = tw_tet_det(a, b, c, X + 3 * (size_t)tets[sorted[p].id]);
                double dq = tw_tet_det(a, b, c, X + 3 * (size_t)tets[sorted[q].id]);
                if ((dp > 0) != (dq > 0)) continue;
                if (folded++ == 0) { /* ids ascend within a run: pair[0] < pair[1] */
                    pair[0] = sorted[p].id / 4;
                    pair[1] = sorted[q].id / 4;
                    for (int v = 0; v < 3; v++) pair[2 + v] = k[v];
                }
            }
        i = j;
    }
    free(sorted);
    return folded;
}

/* "bar.ele:12: element 10 overlaps element 9 on line 11 across ..." for a
 * pair from count_folded. */
static const char *folded_message(char *buf, size_t size, const tw_mesh_source *src, const int pair[5])
{
    char at[600], at0[32] = "";
    const int base = src->index_base;
    if (src->element_line) snprintf(at0, sizeof at0, " on line %d", src->element_line[pair[0]]);
    snprintf(buf, size,
             "%s: element %d overlaps element %d%s across their shared face (vertices %d %d %d): both lie "
             "on the same side of it (folded)",
             where(at, sizeof at, src, pair[1]), pair[1] + base, pair[0] + base, at0, pair[2] + base,
             pair[3] + base, pair[4] + base);
    return buf;
}

static tw_mesh *adopt_fail(double *X, int *tets, int *region, int *unused)
{
    free(X);
    free(tets);
    free(region);
    free(unused);
    return NULL;
}

tw_mesh *tw_mesh_adopt(double *X, int nv, int *tets, int nt, int *region, const char *source,
                       const tw_mesh_load_def *def, tw_mesh_report *report)
{
    tw_mesh_source src;
    src.path = source;
    src.element_line = NULL;
    src.index_base = 0;
    return tw_mesh_adopt_source(X, nv, tets, nt, region, &src, def, report);
}

tw_mesh *tw_mesh_adopt_source(double *X, int nv, int *tets, int nt, int *region,
                              const tw_mesh_source *srcp, const tw_mesh_load_def *def,
                              tw_mesh_report *report)
{
    tw_mesh_load_def dd = tw_default_mesh_load_def();
    if (!def) def = &dd;
    tw_mesh_source src;
    if (srcp) src = *srcp;
    else {
        src.path = "mesh";
        src.element_line = NULL;
        src.index_base = 0;
    }
    if (!src.path) src.path = "mesh";
    const int base = src.index_base;
    char at[600];
    int *unused = NULL;

    if (report) {
        report->reoriented = report->unused_vertices = report->folded = 0;
        report->folded_first[0] = report->folded_first[1] = -1;
    }
    if (!X || !tets || nv <= 0 || nt <= 0) {
        tw_fail(TW_ERR_INVALID, "%s: a mesh needs vertices and elements (%d vertices, %d elements)",
                src.path, nv, nt);
        return adopt_fail(X, tets, region, NULL);
    }
    if (!region) {
        region = tw_calloc((size_t)nt, sizeof *region, "mesh regions");
        if (!region) return adopt_fail(X, tets, NULL, NULL);
    }
    for (int v = 0; v < nv; v++) {
        const double *p = X + 3 * (size_t)v;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
            tw_fail(TW_ERR_INVALID, "%s: vertex %d has a non-finite coordinate (%g %g %g)", src.path,
                    v + base, p[0], p[1], p[2]);
            return adopt_fail(X, tets, region, NULL);
        }
    }
    /* indices: in range, distinct within each element */
    for (int e = 0; e < nt; e++) {
        int *t = tets + 4 * (size_t)e;
        for (int i = 0; i < 4; i++) {
            if (t[i] < 0 || t[i] >= nv) {
                tw_fail(TW_ERR_INVALID,
                        "%s: element %d refers to vertex %lld, outside the %d vertices (%d..%d)",
                        where(at, sizeof at, &src, e), e + base, (long long)t[i] + base, nv, base,
                        nv - 1 + base);
                return adopt_fail(X, tets, region, NULL);
            }
            for (int j = 0; j < i; j++)
                if (t[j] == t[i]) {
                    tw_fail(TW_ERR_INVALID,
                            "%s: element %d uses vertex %d twice (vertices %d %d %d %d)",
                            where(at, sizeof at, &src, e), e + base, t[i] + base, t[0] + base,
                            t[1] + base, t[2] + base, t[3] + base);
                    return adopt_fail(X, tets, region, NULL);
                }
        }
    }
    /* volumes and orientation */
    int reoriented = 0;
    for (int e = 0; e < nt; e++) {
        int *t = tets + 4 * (size_t)e;
        const double *p[4];
        for (int i = 0; i < 4; i++) p[i] = X + 3 * (size_t)t[i];
        double lmax2 = 0;
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                double dx = p[i][0] - p[j][0], dy = p[i][1] - p[j][1], dz = p[i][2] - p[j][2];
                double l2 = dx * dx + dy * dy + dz * dz;
                if (l2 > lmax2) lmax2 = l2;
            }
        double lmax = sqrt(lmax2);
        double det = tw_tet_det(p[0], p[1], p[2], p[3]);
        if (!(fabs(det) > 1e-12 * lmax * lmax * lmax)) {
            tw_fail(TW_ERR_INVALID,
                    "%s: element %d has zero volume (vertices %d %d %d %d): 6*volume %g, longest "
                    "edge %g",
                    where(at, sizeof at, &src, e), e + base, t[0] + base, t[1] + base, t[2] + base,
                    t[3] + base, det, lmax);
            return adopt_fail(X, tets, region, NULL);
        }
        if (det < 0) {
            if (def->strict) {
                tw_fail(TW_ERR_INVALID,
                        "%s: element %d is inverted (vertices %d %d %d %d, 6*volume %g); strict "
                        "loading does not reorient",
                        where(at, sizeof at, &src, e), e + base, t[0] + base, t[1] + base,
                        t[2] + base, t[3] + base, det);
                return adopt_fail(X, tets, region, NULL);
            }
            int s = t[2];
            t[2] = t[3];
            t[3] = s;
            reoriented++;
        }
    }
    /* duplicates: sort the sorted 4-tuples */
    {
        tw_key *keys = tw_malloc((size_t)nt * sizeof *keys, "element keys");
        if (!keys) return adopt_fail(X, tets, region, NULL);
        for (int e = 0; e < nt; e++) {
            memcpy(keys[e].k, tets + 4 * (size_t)e, 4 * sizeof(int));
            sort4(keys[e].k);
            keys[e].id = e;
        }
        tw_key *sorted = sort_keys(keys, (size_t)nt, nv);
        free(keys);
        if (!sorted) return adopt_fail(X, tets, region, NULL);
        for (int i = 1; i < nt; i++) {
            if (sorted[i].k[0] == sorted[i - 1].k[0] && key_cmp(&sorted[i], &sorted[i - 1]) == 0) {
                int e0 = sorted[i - 1].id, e1 = sorted[i].id; /* e0 < e1 */
                const int *t = tets + 4 * (size_t)e1;
                char at0[32] = "";
                if (src.element_line) snprintf(at0, sizeof at0, " on line %d", src.element_line[e0]);
                tw_fail(TW_ERR_INVALID,
                        "%s: element %d duplicates element %d%s (vertices %d %d %d %d)",
                        where(at, sizeof at, &src, e1), e1 + base, e0 + base, at0, t[0] + base,
                        t[1] + base, t[2] + base, t[3] + base);
                free(sorted);
                return adopt_fail(X, tets, region, NULL);
            }
        }
        free(sorted);
    }
    /* folded neighbours: counted and kept, an error when strict */
    int fold_pair[5];
    int folded = count_folded(X, tets, nt, nv, fold_pair);
    char fold_text[1024] = "";
    if (folded < 0) return adopt_fail(X, tets, region, NULL);
    if (folded) folded_message(fold_text, sizeof fold_text, &src, fold_pair);
    if (folded && def->strict) {
        tw_fail(TW_ERR_INVALID, "%s; strict loading rejects folded elements%s", fold_text,
                folded > 1 ? " (the first of several pairs)" : "");
        return adopt_fail(X, tets, region, NULL);
    }
    /* unused vertices */
    unused = tw_malloc((size_t)nv * sizeof *unused, "unused vertex flags");
    if (!unused) return adopt_fail(X, tets, region, NULL);
    for (int v = 0; v < nv; v++) unused[v] = 1;
    for (size_t i = 0; i < 4 * (size_t)nt; i++) unused[tets[i]] = 0;
    int nunused = 0, first_unused = -1;
    for (int v = 0; v < nv; v++)
        if (unused[v]) {
            if (first_unused < 0) first_unused = v;
            nunused++;
        }

    tw_mesh *m = tw_calloc(1, sizeof *m, "mesh");
    if (!m) return adopt_fail(X, tets, region, unused);
    m->nv = nv;
    m->nt = nt;
    m->X = X;
    m->tets = tets;
    m->region = region;
    m->unused = unused;
    snprintf(m->name, sizeof m->name, "%s", src.path);
    if (report) {
        report->reoriented = reoriented;
        report->unused_vertices = nunused;
        report->folded = folded;
        if (folded) {
            report->folded_first[0] = fold_pair[0];
            report->folded_first[1] = fold_pair[1];
        }
    }
    if (!def->quiet) {
        if (reoriented)
            fprintf(stderr, "tetwarp: warning: %s: %d inverted element%s reoriented\n", src.path,
                    reoriented, reoriented == 1 ? "" : "s");
        if (nunused)
            fprintf(stderr,
                    "tetwarp: warning: %s: %d vertex%s not used by any element (first: %d); "
                    "they will be pinned\n",
                    src.path, nunused, nunused == 1 ? " is" : "es are", first_unused + base);
        if (folded)
            fprintf(stderr, "tetwarp: warning: %d folded element pair%s, kept as they are; first: %s\n", folded,
                    folded == 1 ? "" : "s", fold_text);
    }
    return m;
}

tw_mesh *tw_mesh_create(const double *positions, int vertex_count, const int *tets,
                        int tet_count, const int *region, const tw_mesh_load_def *def,
                        tw_mesh_report *report)
{
    if (!positions || !tets || vertex_count <= 0 || tet_count <= 0) {
        tw_fail(TW_ERR_INVALID,
                "tw_mesh_create: needs positions and tets (vertex_count %d, tet_count %d)",
                vertex_count, tet_count);
        return NULL;
    }
    double *X = tw_malloc(3 * (size_t)vertex_count * sizeof *X, "mesh positions");
    int *T = tw_malloc(4 * (size_t)tet_count * sizeof *T, "mesh tets");
    int *R = region ? tw_malloc((size_t)tet_count * sizeof *R, "mesh regions") : NULL;
    if (!X || !T || (region && !R)) {
        free(X);
        free(T);
        free(R);
        return NULL;
    }
    memcpy(X, positions, 3 * (size_t)vertex_count * sizeof *X);
    memcpy(T, tets, 4 * (size_t)tet_count * sizeof *T);
    if (R) memcpy(R, region, (size_t)tet_count * sizeof *R);
    if (report) report->first_index = 0;
    return tw_mesh_adopt(X, vertex_count, T, tet_count, R, "tw_mesh_create", def, report);
}

void tw_mesh_destroy(tw_mesh *m)
{
    if (!m) return;
    free(m->X);
    free(m->tets);
    free(m->region);
    free(m->unused);
    free(m->body);
    free(m);
}

int tw_mesh_vertex_count(const tw_mesh *m) { return m ? m->nv : 0; }
int tw_mesh_tet_count(const tw_mesh *m) { return m ? m->nt : 0; }
const double *tw_mesh_positions(const tw_mesh *m) { return m ? m->X : NULL; }
const int *tw_mesh_tets(const tw_mesh *m) { return m ? m->tets : NULL; }
const int *tw_mesh_regions(const tw_mesh *m) { return m ? m->region : NULL; }

/* ------------------------------------------------------------- boundary */

int tw_mesh_boundary_faces(const tw_mesh *m, int **faces)
{
    if (faces) *faces = NULL;
    if (!m || !faces) return 0;
    size_t nf = 4 * (size_t)m->nt;
    tw_key *sorted = sorted_face_keys(m->tets, m->nt, m->nv);
    if (!sorted) return -1;
    size_t count = 0;
    for (size_t i = 0; i < nf;) {
        size_t j = key_run_end(sorted, nf, i);
        if (j - i == 1) sorted[count++] = sorted[i];
        i = j;
    }
    int *out = tw_malloc((count ? count : 1) * 3 * sizeof *out, "boundary faces");
    if (!out) {
        free(sorted);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        int e = sorted[i].id / 4, f = sorted[i].id % 4;
        const int *t = m->tets + 4 * (size_t)e;
        for (int j = 0; j < 3; j++) out[3 * i + j] = t[tw_face_of[f][j]];
    }
    free(sorted);
    *faces = out;
    return (int)count;
}

/* ---------------------------------------------------------------- stats */

static void sub3(const double *a, const double *b, double *r)
{
    r[0] = a[0] - b[0];
    r[1] = a[1] - b[1];
    r[2] = a[2] - b[2];
}
static void cross3(const double *a, const double *b, double *r)
{
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

tw_mesh_stats tw_mesh_compute_stats(const tw_mesh *m)
{
    tw_mesh_stats s;
    memset(&s, 0, sizeof s);
    if (!m || m->nv <= 0 || m->nt <= 0) return s;
    s.vertices = m->nv;
    s.tets = m->nt;
    int *faces = NULL;
    int nb = tw_mesh_boundary_faces(m, &faces);
    free(faces);
    s.boundary_faces = nb > 0 ? nb : 0;
    int *r = malloc((size_t)m->nt * sizeof *r);
    if (r) {
        memcpy(r, m->region, (size_t)m->nt * sizeof *r);
        qsort(r, (size_t)m->nt, sizeof *r, int_cmp);
        s.regions = 1;
        for (int e = 1; e < m->nt; e++)
            if (r[e] != r[e - 1]) s.regions++;
        free(r);
    }
    for (int k = 0; k < 3; k++) {
        s.bbox_min[k] = HUGE_VAL;
        s.bbox_max[k] = -HUGE_VAL;
    }
    for (int v = 0; v < m->nv; v++)
        for (int k = 0; k < 3; k++) {
            double x = m->X[3 * (size_t)v + k];
            if (x < s.bbox_min[k]) s.bbox_min[k] = x;
            if (x > s.bbox_max[k]) s.bbox_max[k] = x;
        }
    s.min_dihedral = s.min_volume = s.min_edge = HUGE_VAL;
    s.max_dihedral = s.max_volume = s.max_edge = s.max_aspect = 0;
    double aspect_sum = 0;
    /* edge (i,j) is shared by the faces opposite its two other vertices */
    static const int edges[6][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2},
                                     {1, 2, 0, 3}, {1, 3, 0, 2}, {2, 3, 0, 1}};
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->tets + 4 * (size_t)e;
        const double *p[4];
        for (int i = 0; i < 4; i++) p[i] = m->X + 3 * (size_t)t[i];
        double vol = fabs(tw_mesh_det(m, e)) / 6.0;
        s.volume += vol;
        if (vol < s.min_volume) s.min_volume = vol;
        if (vol > s.max_volume) s.max_volume = vol;
        /* outward face normals (area-weighted, 2*area long) */
        double n[4][3], area = 0;
        for (int f = 0; f < 4; f++) {
            double u[3], w[3];
            sub3(p[tw_face_of[f][1]], p[tw_face_of[f][0]], u);
            sub3(p[tw_face_of[f][2]], p[tw_face_of[f][0]], w);
            cross3(u, w, n[f]);
            double len = sqrt(dot3(n[f], n[f]));
            area += 0.5 * len;
            if (len > 0)
                for (int k = 0; k < 3; k++) n[f][k] /= len;
        }
        double lmax = 0;
        for (int k = 0; k < 6; k++) {
            double d[3];
            sub3(p[edges[k][0]], p[edges[k][1]], d);
            double l = sqrt(dot3(d, d));
            if (l > lmax) lmax = l;
            if (l < s.min_edge) s.min_edge = l;
            if (l > s.max_edge) s.max_edge = l;
            double c = -dot3(n[edges[k][2]], n[edges[k][3]]);
            if (c > 1) c = 1;
            if (c < -1) c = -1;
            double ang = acos(c) * (180.0 / 3.14159265358979323846);
            if (ang < s.min_dihedral) s.min_dihedral = ang;
            if (ang > s.max_dihedral) s.max_dihedral = ang;
        }
        double inradius = area > 0 ? 3.0 * vol / area : 0;
        double aspect = inradius > 0 ? lmax / (2.0 * sqrt(6.0) * inradius) : HUGE_VAL;
        aspect_sum += aspect;
        if (aspect > s.max_aspect) s.max_aspect = aspect;
    }
    s.mean_aspect = aspect_sum / m->nt;
    return s;
}

/* --------------------------------------------------------------- writers */

static tw_status close_checked(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return tw_fail(TW_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return TW_OK;
}

tw_status tw_mesh_write_tetgen(const tw_mesh *m, const char *stem)
{
    if (!m || !stem) return tw_fail(TW_ERR_INVALID, "tw_mesh_write_tetgen: null mesh or stem");
    size_t len = strlen(stem) + 8;
    char *path = tw_malloc(len, "path");
    if (!path) return TW_ERR_NOMEM;
    snprintf(path, len, "%s.node", stem);
    FILE *f = fopen(path, "w");
    if (!f) {
        tw_status s = tw_fail(TW_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
        free(path);
        return s;
    }
    fprintf(f, "%d 3 0 0\n", m->nv);
    for (int v = 0; v < m->nv; v++) {
        const double *p = m->X + 3 * (size_t)v;
        fprintf(f, "%d %.17g %.17g %.17g\n", v, p[0], p[1], p[2]);
    }
    fprintf(f, "# written by tetwarp\n");
    tw_status s = close_checked(f, path);
    if (s != TW_OK) {
        free(path);
        return s;
    }
    snprintf(path, len, "%s.ele", stem);
    f = fopen(path, "w");
    if (!f) {
        s = tw_fail(TW_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
        free(path);
        return s;
    }
    int has_region = 0;
    for (int e = 0; e < m->nt; e++)
        if (m->region[e]) has_region = 1;
    fprintf(f, "%d 4 %d\n", m->nt, has_region);
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->tets + 4 * (size_t)e;
        if (has_region)
            fprintf(f, "%d %d %d %d %d %d\n", e, t[0], t[1], t[2], t[3], m->region[e]);
        else
            fprintf(f, "%d %d %d %d %d\n", e, t[0], t[1], t[2], t[3]);
    }
    fprintf(f, "# written by tetwarp\n");
    s = close_checked(f, path);
    free(path);
    return s;
}

tw_status tw_mesh_write_obj(const tw_mesh *m, const tw_real *positions, const char *path)
{
    if (!m || !path) return tw_fail(TW_ERR_INVALID, "tw_mesh_write_obj: null mesh or path");
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    if (nf < 0) return TW_ERR_NOMEM;
    int *map = tw_malloc((size_t)m->nv * sizeof *map, "obj vertex map");
    if (!map) {
        free(faces);
        return TW_ERR_NOMEM;
    }
    for (int v = 0; v < m->nv; v++) map[v] = -1;
    FILE *f = fopen(path, "w");
    if (!f) {
        free(faces);
        free(map);
        return tw_fail(TW_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    }
    fprintf(f, "# tetwarp boundary surface: %d triangles\n", nf);
    int used = 0;
    for (int i = 0; i < 3 * nf; i++) {
        int v = faces[i];
        if (map[v] >= 0) continue;
        map[v] = ++used;
        if (positions)
            fprintf(f, "v %.9g %.9g %.9g\n", (double)positions[3 * (size_t)v],
                    (double)positions[3 * (size_t)v + 1], (double)positions[3 * (size_t)v + 2]);
        else
            fprintf(f, "v %.17g %.17g %.17g\n", m->X[3 * (size_t)v], m->X[3 * (size_t)v + 1],
                    m->X[3 * (size_t)v + 2]);
    }
    for (int i = 0; i < nf; i++)
        fprintf(f, "f %d %d %d\n", map[faces[3 * i]], map[faces[3 * i + 1]], map[faces[3 * i + 2]]);
    free(faces);
    free(map);
    return close_checked(f, path);
}
