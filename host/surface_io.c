/* Triangle surfaces: OBJ ("v", "f" with a, a/t, a//n, a/t/n, negative =
 * relative), OFF (counts, vertices, polygons) and STL (binary or ASCII, a
 * triangle soup). Polygons are fanned into triangles. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "text_reader.h"

typedef struct surf_build {
    double *X;
    int *tri;
    size_t nv, cap_v, nt, cap_t;
} surf_build;

/* items (n used, *cap held, `size` bytes each) with room for one more,
 * doubling from `first`: the same or a reallocated pointer, or NULL with the
 * message naming path and what (items is then still valid). */
static void *grow(void *items, size_t n, size_t *cap, size_t size, size_t first, const char *path, const char *what)
{
    if (n < *cap) return items;
    size_t c = *cap ? 2 * *cap : first;
    void *p = realloc(items, c * size);
    if (!p) {
        tw_fail(TW_ERR_NOMEM, "%s: out of memory %s", path, what);
        return NULL;
    }
    *cap = c;
    return p;
}

static int sb_vertex(surf_build *b, const double *p, const char *path)
{
    double *x = grow(b->X, b->nv, &b->cap_v, 3 * sizeof *b->X, 1024, path, "storing vertices");
    if (!x) return 0;
    b->X = x;
    memcpy(b->X + 3 * b->nv++, p, 3 * sizeof *p);
    return 1;
}

static int sb_triangle(surf_build *b, int i, int j, int k, const char *path)
{
    int *t = grow(b->tri, b->nt, &b->cap_t, 3 * sizeof *b->tri, 1024, path, "storing triangles");
    if (!t) return 0;
    b->tri = t;
    b->tri[3 * b->nt] = i;
    b->tri[3 * b->nt + 1] = j;
    b->tri[3 * b->nt + 2] = k;
    b->nt++;
    return 1;
}

/* One polygon's vertex list, grown as needed. */
typedef struct poly {
    int *v;
    int n;
    size_t cap;
} poly;

static int poly_push(poly *p, int v, const char *path)
{
    int *grown = grow(p->v, (size_t)p->n, &p->cap, sizeof *p->v, 16, path, "reading a polygon");
    if (!grown) return 0;
    p->v = grown;
    p->v[p->n++] = v;
    return 1;
}

static int fan(surf_build *b, const poly *p, const char *path)
{
    for (int i = 1; i + 1 < p->n; i++)
        if (!sb_triangle(b, p->v[0], p->v[i], p->v[i + 1], path)) return 0;
    return 1;
}

/* OBJ: "v x y z", "f a b c ..." with a, a/t, a//n, a/t/n, negative = relative. */
static int load_obj(tw_reader *r, surf_build *b)
{
    char *s;
    poly p = {NULL, 0, 0};
    while ((s = tw_reader_line(r)) != NULL) {
        if (s[0] == 'v' && tw_is_blank(s[1])) {
            double dv[3];
            if (!tw_reader_fields(r, s + 1, "ddd", NULL, dv, "3 numbers after 'v' (x y z)")) goto fail;
            if (!sb_vertex(b, dv, r->path)) goto fail;
        } else if (s[0] == 'f' && tw_is_blank(s[1])) {
            char *q = s + 1;
            p.n = 0;
            for (;;) {
                q = tw_skip_blank(q);
                if (!*q) break;
                char *e;
                errno = 0;
                long long v = strtoll(q, &e, 10);
                if (e == q || (*e && *e != '/' && !tw_is_blank(*e)) || errno == ERANGE) {
                    tw_reader_expected(r, q, "a vertex index (a, a/t, a//n or a/t/n)");
                    goto fail;
                }
                long long idx = v < 0 ? (long long)b->nv + v : v - 1;
                if (v == 0 || idx < 0 || idx >= (long long)b->nv) {
                    tw_fail(TW_ERR_PARSE, "%s:%d: expected a vertex index in 1..%zu (or -%zu..-1), found %lld",
                            r->path, r->line, b->nv, b->nv, v);
                    goto fail;
                }
                if (!poly_push(&p, (int)idx, r->path)) goto fail;
                while (*e && !tw_is_blank(*e)) e++;
                q = e;
            }
            if (p.n < 3) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected at least 3 vertices in a face, found %d",
                        r->path, r->line, p.n);
                goto fail;
            }
            if (!fan(b, &p, r->path)) goto fail;
        }
        /* vt, vn, o, g, s, usemtl, mtllib, l, ...: not needed */
    }
    free(p.v);
    return 1;
fail:
    free(p.v);
    return 0;
}

/* OFF: "OFF" [counts], "nv nf ne", vertices, faces "n i0 i1 ...". */
static int load_off(tw_reader *r, surf_build *b)
{
    char *s = tw_reader_line(r), *rest;
    char *w = s ? tw_word(s, &rest) : NULL;
    size_t wl = w ? strlen(w) : 0;
    poly p = {NULL, 0, 0};
    if (!w || wl < 3 || wl > 5 || !tw_ieq(w + wl - 3, "OFF")) {
        if (!r->line) r->line = 1;
        tw_reader_expected(r, w, "OFF on the first line");
        return 0;
    }
    long long c[3];
    s = tw_skip_blank(rest);
    if (!*s) s = tw_reader_line(r);
    if (!s) {
        tw_reader_expected(r, NULL, "counts 'vertices faces edges'");
        return 0;
    }
    if (!tw_reader_fields(r, s, "iiI", c, NULL, "counts 'vertices faces edges'")) return 0;
    if (!tw_reader_count(r, c[0], "vertices") || !tw_reader_count(r, c[1], "faces")) return 0;
    for (long long i = 0; i < c[0]; i++) {
        double dv[3];
        s = tw_reader_line(r);
        if (!s) {
            tw_reader_expected(r, NULL, "%lld vertices as the header says, after %lld", c[0], i);
            return 0;
        }
        if (!tw_reader_fields(r, s, "ddd", NULL, dv, "3 numbers (x y z)")) return 0;
        if (!sb_vertex(b, dv, r->path)) return 0;
    }
    for (long long i = 0; i < c[1]; i++) {
        long long n;
        s = tw_reader_line(r);
        if (!s) {
            tw_reader_expected(r, NULL, "%lld faces as the header says, after %lld", c[1], i);
            goto fail;
        }
        char *q = s;
        int got = tw_token_ll(&q, &n);
        if (got != 1 || n < 3 || n > 1000000) {
            if (got == 1)
                tw_fail(TW_ERR_PARSE, "%s:%d: expected at least 3 vertices in a face, found %lld",
                        r->path, r->line, n);
            else
                tw_reader_expected(r, q, "a face 'n i0 i1 ...'");
            goto fail;
        }
        p.n = 0;
        for (long long k = 0; k < n; k++) {
            long long v;
            got = tw_token_ll(&q, &v);
            if (got != 1) {
                tw_reader_expected(r, q, "%lld vertex indices after the count, got %lld", n, k);
                goto fail;
            }
            if (v < 0 || v >= c[0]) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected a vertex index in 0..%lld, found %lld",
                        r->path, r->line, c[0] - 1, v);
                goto fail;
            }
            if (!poly_push(&p, (int)v, r->path)) goto fail;
        }
        if (!fan(b, &p, r->path)) goto fail;
    }
    free(p.v);
    return 1;
fail:
    free(p.v);
    return 0;
}

tw_surface *tw_surface_load(const char *path)
{
    if (!path) {
        tw_fail(TW_ERR_INVALID, "tw_surface_load: null path");
        return NULL;
    }
    int obj = tw_ends_with(path, ".obj"), off = tw_ends_with(path, ".off");
    if (!obj && !off) {
        tw_fail(TW_ERR_INVALID, "%s: unknown surface format: expected .obj or .off", path);
        return NULL;
    }
    tw_reader r;
    if (tw_reader_open(&r, path, 1) != TW_OK) return NULL;
    surf_build b;
    memset(&b, 0, sizeof b);
    int ok = obj ? load_obj(&r, &b) : load_off(&r, &b);
    if (ok && b.nt == 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected faces, found none", r.path, r.line);
        ok = 0;
    }
    if (ok && (b.nv > INT_MAX / 3 || b.nt > INT_MAX / 3)) {
        tw_fail(TW_ERR_PARSE, "%s: too many vertices or triangles", r.path);
        ok = 0;
    }
    tw_reader_close(&r);
    tw_surface *s = ok ? tw_calloc(1, sizeof *s, "surface") : NULL;
    if (!s) {
        free(b.X);
        free(b.tri);
        return NULL;
    }
    s->vertex_count = (int)b.nv;
    s->triangle_count = (int)b.nt;
    s->positions = b.X;
    s->triangles = b.tri;
    return s;
}

void tw_surface_destroy(tw_surface *s)
{
    if (!s) return;
    free(s->positions);
    free(s->triangles);
    free(s);
}

/* ------------------------------------------------------------------- STL */

static float le_float(const unsigned char *p)
{
    unsigned u = (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Triangle soup: 9 doubles per triangle. */
static tw_surface *soup_surface(double *corners, int nt)
{
    tw_surface *s = tw_calloc(1, sizeof *s, "surface");
    int *tri = tw_malloc(3 * (size_t)nt * sizeof *tri, "STL triangles");
    if (!s || !tri) {
        free(s);
        free(tri);
        free(corners);
        return NULL;
    }
    for (int i = 0; i < 3 * nt; i++) tri[i] = i;
    s->vertex_count = 3 * nt;
    s->triangle_count = nt;
    s->positions = corners;
    s->triangles = tri;
    return s;
}

tw_surface *tw_surface_load_stl(const char *path)
{
    size_t size = 0;
    unsigned char *buf = (unsigned char *)tw_read_file(path, &size);
    if (!buf) return NULL;
    tw_surface *s = NULL;
    unsigned long nb = size >= 84 ? (unsigned long)buf[80] | (unsigned long)buf[81] << 8 |
                                        (unsigned long)buf[82] << 16 | (unsigned long)buf[83] << 24
                                  : 0;
    if (size >= 84 && nb > 0 && 84 + 50 * (size_t)nb == size && nb < (1ul << 28)) {
        double *X = tw_malloc(9 * (size_t)nb * sizeof *X, "STL corners");
        for (size_t t = 0; X && t < nb; t++)
            for (int k = 0; k < 9; k++) {
                X[9 * t + k] = le_float(buf + 84 + 50 * t + 12 + 4 * k);
                if (!isfinite(X[9 * t + k])) {
                    tw_fail(TW_ERR_PARSE,
                            "%s: triangle %zu (0-based, byte %zu) has a non-finite coordinate (%g)",
                            path, t, 84 + 50 * t + 12 + 4 * (size_t)k, X[9 * t + k]);
                    free(X);
                    X = NULL;
                    break;
                }
            }
        if (X) s = soup_surface(X, (int)nb);
    } else {
        /* ASCII: "vertex x y z" lines, three per facet */
        size_t cap = 1024, n = 0;
        double *X = malloc(cap * sizeof *X);
        int line = 1, ok = X != NULL;
        char *p = (char *)buf;
        while (ok && *p) {
            while (*p == ' ' || *p == '\t' || *p == '\r') p++;
            if (strncmp(p, "vertex", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
                char *q = p + 6;
                for (int k = 0; k < 3 && ok; k++) {
                    char *e, tok[64];
                    q = tw_skip_blank(q);
                    e = q;
                    double v = 0;
                    if (*q && *q != '\n') v = strtod(q, &e); /* never past the line */
                    if (e == q || (*e && !tw_is_blank(*e) && *e != '\n') || !isfinite(v)) {
                        tw_fail(TW_ERR_PARSE, "%s:%d: expected 3 finite numbers after 'vertex', found %s",
                                path, line, tw_reader_quote(q, tok, sizeof tok));
                        ok = 0;
                        break;
                    }
                    if (n == cap) {
                        double *nx = realloc(X, 2 * cap * sizeof *X);
                        if (!nx) {
                            tw_fail(TW_ERR_NOMEM, "%s: out of memory", path);
                            ok = 0;
                            break;
                        }
                        X = nx;
                        cap *= 2;
                    }
                    X[n++] = v;
                    q = e;
                }
            } else if (line == 1 && strncmp(p, "solid", 5) != 0) {
                tw_fail(TW_ERR_PARSE,
                        "%s: not an STL file: binary STL needs 84 + 50 * (triangle count) bytes "
                        "(%zu bytes, count %lu), ASCII STL starts with 'solid'",
                        path, size, nb);
                ok = 0;
            }
            while (*p && *p != '\n') p++;
            if (*p) p++, line++;
        }
        if (ok && (n == 0 || n % 9)) {
            tw_fail(TW_ERR_PARSE, "%s: %zu 'vertex' lines: expected a non-zero multiple of 3",
                    path, n / 3);
            ok = 0;
        }
        if (ok) s = soup_surface(X, (int)(n / 9));
        else free(X);
    }
    free(buf);
    return s;
}
