/* Mesh and surface readers: TetGen .node/.ele, Gmsh ASCII .msh (v1, v2, v4),
 * MEDIT .mesh, and OBJ / OFF triangle surfaces.
 *
 * Every reader loads the whole file into one buffer and walks it line by
 * line, cutting each line in place (NUL at its end) and parsing its fields
 * with strtoll/strtod, which can never run past the line. Records are one
 * per line in all these formats, so a short line is reported where it is
 * ("bar.node:7: expected 4 numbers (index x y z), found end of line") rather
 * than misreading the next one. Header counts are checked against the file
 * size before anything is allocated, and data after the announced count is
 * an error, so a wrong count is caught either way. Element lines are kept
 * per element so that tw_mesh_adopt_source can cite them for geometric
 * errors (zero volume, duplicates). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"

/* ---------------------------------------------------------------- reader */

typedef struct reader {
    const char *path;
    char *buf, *p, *end;
    size_t size;
    int line;  /* number of the line last returned */
    int hash;  /* 1: '#' starts a comment */
} reader;

char *tw_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tw_fail(TW_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    if (buf && fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        if (len > 0 && (size_t)len + 1 > cap) {
            char *nb = realloc(buf, (size_t)len + 2);
            if (!nb) {
                free(buf);
                fclose(f);
                tw_fail(TW_ERR_NOMEM, "%s: out of memory reading %ld bytes", path, len);
                return NULL;
            }
            buf = nb;
            cap = (size_t)len + 1; /* one spare byte: the read that finds EOF */
        }
    }
    rewind(f);
    while (buf) {
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        tw_fail(TW_ERR_NOMEM, "%s: out of memory reading the file", path);
        return NULL;
    }
    if (bad) {
        free(buf);
        tw_fail(TW_ERR_IO, "%s: read error: %s", path, strerror(errno));
        return NULL;
    }
    buf[n] = 0;
    *size = n;
    return buf;
}

static tw_status rd_open(reader *r, const char *path, int hash)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->hash = hash;
    size_t n = 0;
    char *buf = tw_read_file(path, &n);
    if (!buf) return TW_ERR_IO; /* the message is set; callers only test != TW_OK */
    r->buf = r->p = buf;
    r->end = buf + n;
    r->size = n;
    return TW_OK;
}

static void rd_close(reader *r)
{
    free(r->buf);
    r->buf = r->p = r->end = NULL;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static char *skip_ws(char *p)
{
    while (is_space(*p)) p++;
    return p;
}

/* The next line with content, NUL-terminated, leading blanks skipped;
 * NULL at end of file. */
static char *rd_line(reader *r)
{
    while (r->p < r->end) {
        char *s = r->p;
        char *nl = memchr(s, '\n', (size_t)(r->end - s));
        char *e = nl ? nl : r->end;
        r->p = nl ? nl + 1 : r->end;
        r->line++;
        *e = 0;
        if (r->hash) {
            char *h = memchr(s, '#', (size_t)(e - s));
            if (h) *h = 0;
        }
        s = skip_ws(s);
        if (*s) return s;
    }
    return NULL;
}

/* "'token'", "end of line" or "end of file" for messages. */
static const char *describe(const char *at, char *buf, size_t size)
{
    if (!at) return "end of file";
    at = skip_ws((char *)at);
    if (!*at) return "end of line";
    size_t n = 0, i = 0;
    buf[n++] = '\'';
    while (at[i] && !is_space(at[i]) && n < size - 6) {
        unsigned char c = (unsigned char)at[i++];
        buf[n++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (at[i] && !is_space(at[i])) {
        buf[n++] = '.';
        buf[n++] = '.';
        buf[n++] = '.';
    }
    buf[n++] = '\'';
    buf[n] = 0;
    return buf;
}

/* Parse error at the current line: "path:line: expected X, found Y". */
static void rd_expected(const reader *r, const char *at, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void rd_expected(const reader *r, const char *at, const char *fmt, ...)
{
    char what[256], tok[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tw_fail(TW_ERR_PARSE, "%s:%d: expected %s, found %s", r->path, r->line, what,
            describe(at, tok, sizeof tok));
}

/* 1: a number was read; 0: end of line; -1: the token is not a number
 * (*pp is left at the token). */
static int get_ll(char **pp, long long *out)
{
    char *p = skip_ws(*pp), *e;
    *pp = p;
    if (!*p) return 0;
    errno = 0;
    long long v = strtoll(p, &e, 10);
    if (e == p || (*e && !is_space(*e)) || errno == ERANGE) return -1;
    *out = v;
    *pp = e;
    return 1;
}

static int get_double(char **pp, double *out)
{
    char *p = skip_ws(*pp), *e;
    *pp = p;
    if (!*p) return 0;
    double v = strtod(p, &e);
    if (e == p || (*e && !is_space(*e)) || !isfinite(v)) return -1;
    *out = v;
    *pp = e;
    return 1;
}

/* Parses the fields of line s by fmt: 'i' integer, 'd' real; upper case
 * ('I', 'D') optional (0 when the line ends). Integers go to iv, reals to dv
 * in order. Extra fields are ignored. On failure sets the message
 * (expected `what`) and returns 0. */
static int fields(const reader *r, char *s, const char *fmt, long long *iv, double *dv,
                  const char *what)
{
    char *p = s;
    for (const char *f = fmt; *f; f++) {
        int optional = (*f == 'I' || *f == 'D');
        int got;
        if (*f == 'i' || *f == 'I') {
            long long v = 0;
            got = get_ll(&p, &v);
            if (got == 0 && optional) v = 0;
            *iv++ = v;
        } else {
            double v = 0;
            got = get_double(&p, &v);
            if (got == 0 && optional) v = 0;
            *dv++ = v;
        }
        if (got < 0 || (got == 0 && !optional)) {
            rd_expected(r, p, "%s", what);
            return 0;
        }
    }
    return 1;
}

/* The header line, parsed by fmt into h (see fields); 0 with the message
 * when the file is empty or the line does not parse. */
static int read_header(reader *r, const char *fmt, long long *h, const char *what)
{
    char *s = rd_line(r);
    if (!s) {
        r->line = r->line ? r->line : 1;
        rd_expected(r, NULL, "%s", what);
        return 0;
    }
    return fields(r, s, fmt, h, NULL, what);
}

/* 1 when nothing but blank lines and comments follow the count records. */
static int read_no_more(reader *r, int count, const char *records)
{
    char *s = rd_line(r);
    if (!s) return 1;
    rd_expected(r, s, "no more %s after the %d the header announces", records, count);
    return 0;
}

/* A record count from a header: non-negative and not more than the file can
 * hold (every record takes at least 2 bytes), so a corrupt count never
 * allocates gigabytes. */
static int check_count(const reader *r, long long n, const char *what)
{
    if (n < 0 || n > INT_MAX / 4 || (size_t)n > r->size / 2 + 1) {
        tw_fail(TW_ERR_PARSE,
                "%s:%d: expected a count of %s that fits the file (%zu bytes), found %lld", r->path,
                r->line, what, r->size, n);
        return 0;
    }
    return 1;
}

/* A vertex index read from a file, minus the file's base, as an int. Far out
 * of range values are caught here; the rest by tw_mesh_adopt_source. */
static int to_index(const reader *r, long long v, long long base, int nv, int *out)
{
    long long i = v - base;
    if (i < -1000000000LL || i > 2000000000LL) {
        tw_fail(TW_ERR_PARSE, "%s:%d: vertex index %lld is out of range (%lld..%lld)", r->path,
                r->line, v, base, (long long)nv - 1 + base);
        return 0;
    }
    *out = (int)i;
    return 1;
}

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return *a == *b;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && ieq(s + n - k, suffix);
}

/* First whitespace-delimited word of s, NUL-cut in place; *rest after it. */
static char *word(char *s, char **rest)
{
    s = skip_ws(s);
    char *e = s;
    while (*e && !is_space(*e)) e++;
    if (*e) *e++ = 0;
    *rest = e;
    return s;
}

/* ----------------------------------------------------------------- TetGen */

tw_mesh *tw_mesh_load_tetgen(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report)
{
    size_t n = strlen(path);
    if (ends_with(path, ".node")) n -= 5;
    else if (ends_with(path, ".ele")) n -= 4;
    char *node_path = tw_malloc(n + 8, "path"), *ele_path = tw_malloc(n + 8, "path");
    double *X = NULL;
    int *tets = NULL, *region = NULL, *lines = NULL;
    reader r;
    memset(&r, 0, sizeof r);
    if (!node_path || !ele_path) goto fail;
    memcpy(node_path, path, n);
    strcpy(node_path + n, ".node");
    memcpy(ele_path, path, n);
    strcpy(ele_path + n, ".ele");

    /* .node: "count 3 attributes markers", then "index x y z [attrs] [marker]" */
    if (rd_open(&r, node_path, 1) != TW_OK) goto fail;
    long long h[4], iv[1];
    double dv[3];
    char *s;
    if (!read_header(&r, "iIII", h, "a header 'nodes 3 attributes markers'")) goto fail;
    if (!check_count(&r, h[0], "nodes")) goto fail;
    if (h[0] == 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected at least 4 nodes, found a count of 0", r.path, r.line);
        goto fail;
    }
    if (h[1] != 3) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected dimension 3 in the header, found %lld", r.path, r.line,
                h[1]);
        goto fail;
    }
    int nv = (int)h[0];
    long long base = 0;
    X = tw_malloc(3 * (size_t)nv * sizeof *X, "mesh positions");
    if (!X) goto fail;
    for (int i = 0; i < nv; i++) {
        s = rd_line(&r);
        if (!s) {
            rd_expected(&r, NULL, "%d nodes as the header says, after %d", nv, i);
            goto fail;
        }
        if (!fields(&r, s, "iddd", iv, dv, "4 numbers (index x y z)")) goto fail;
        if (i == 0) {
            base = iv[0];
            if (base != 0 && base != 1) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected the first node index to be 0 or 1, found %lld",
                        r.path, r.line, base);
                goto fail;
            }
        } else if (iv[0] != base + i) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected node index %lld, found %lld", r.path, r.line,
                    base + i, iv[0]);
            goto fail;
        }
        memcpy(X + 3 * (size_t)i, dv, sizeof dv);
    }
    if (!read_no_more(&r, nv, "nodes")) goto fail;
    rd_close(&r);

    /* .ele: "count nodes_per_element attributes", then "index a b c d [...] [region]" */
    if (rd_open(&r, ele_path, 1) != TW_OK) goto fail;
    if (!read_header(&r, "iiI", h, "a header 'elements nodes_per_element attributes'")) goto fail;
    if (!check_count(&r, h[0], "elements")) goto fail;
    if (h[0] == 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected at least 1 element, found a count of 0", r.path, r.line);
        goto fail;
    }
    if (h[1] < 4 || h[1] > 64) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected 4 or 10 nodes per element, found %lld", r.path,
                r.line, h[1]);
        goto fail;
    }
    if (h[2] < 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected a non-negative attribute count, found %lld", r.path,
                r.line, h[2]);
        goto fail;
    }
    int nt = (int)h[0], npe = (int)h[1], nattr = (int)h[2];
    char fmt[72], what[96];
    fmt[0] = 'i';
    for (int k = 0; k < npe; k++) fmt[1 + k] = 'i';
    fmt[1 + npe] = nattr > 0 ? 'd' : 0;
    fmt[2 + npe] = 0;
    snprintf(what, sizeof what, "%d numbers (index, %d vertices%s)", 1 + npe + (nattr > 0), npe,
             nattr > 0 ? ", region" : "");
    tets = tw_malloc(4 * (size_t)nt * sizeof *tets, "mesh tets");
    region = tw_calloc((size_t)nt, sizeof *region, "mesh regions");
    lines = tw_malloc((size_t)nt * sizeof *lines, "element lines");
    if (!tets || !region || !lines) goto fail;
    long long ebase = 0;
    for (int e = 0; e < nt; e++) {
        long long ev[65];
        double attr = 0;
        s = rd_line(&r);
        if (!s) {
            rd_expected(&r, NULL, "%d elements as the header says, after %d", nt, e);
            goto fail;
        }
        if (!fields(&r, s, fmt, ev, &attr, what)) goto fail;
        if (e == 0) ebase = ev[0];
        else if (ev[0] != ebase + e) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected element index %lld, found %lld", r.path, r.line,
                    ebase + e, ev[0]);
            goto fail;
        }
        for (int k = 0; k < 4; k++)
            if (!to_index(&r, ev[1 + k], base, nv, &tets[4 * (size_t)e + k])) goto fail;
        if (nattr > 0) {
            if (attr != floor(attr) || fabs(attr) > 1e9) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected an integer region attribute, found %g",
                        r.path, r.line, attr);
                goto fail;
            }
            region[e] = (int)attr;
        }
        lines[e] = r.line;
    }
    if (!read_no_more(&r, nt, "elements")) goto fail;
    rd_close(&r);

    tw_mesh_source src;
    src.path = ele_path;
    src.element_line = lines;
    src.index_base = (int)base;
    if (report) report->first_index = (int)base;
    tw_mesh *m = tw_mesh_adopt_source(X, nv, tets, nt, region, &src, def, report);
    if (m) snprintf(m->name, sizeof m->name, "%s", node_path);
    free(lines);
    free(node_path);
    free(ele_path);
    return m;
fail:
    rd_close(&r);
    free(X);
    free(tets);
    free(region);
    free(lines);
    free(node_path);
    free(ele_path);
    return NULL;
}

/* ------------------------------------------------------------------ Gmsh */

typedef struct gmsh {
    int nv, nt, cap_t;
    long long *node_tag;  /* nv */
    int *node_line;       /* nv */
    double *X;            /* 3*nv */
    long long *tet_tag;   /* 4*nt, node tags as in the file */
    int *region, *line;   /* nt */
} gmsh;

static int gmsh_add_tet(const reader *r, gmsh *g, const long long *nodes, long long reg)
{
    if (g->nt == g->cap_t) {
        int cap = g->cap_t ? 2 * g->cap_t : 1024;
        long long *t = realloc(g->tet_tag, 4 * (size_t)cap * sizeof *t);
        if (t) g->tet_tag = t;
        int *rg = realloc(g->region, (size_t)cap * sizeof *rg);
        if (rg) g->region = rg;
        int *ln = realloc(g->line, (size_t)cap * sizeof *ln);
        if (ln) g->line = ln;
        if (!t || !rg || !ln) {
            tw_fail(TW_ERR_NOMEM, "%s: out of memory storing elements", r->path);
            return 0;
        }
        g->cap_t = cap;
    }
    memcpy(g->tet_tag + 4 * (size_t)g->nt, nodes, 4 * sizeof *nodes);
    g->region[g->nt] = (reg > INT_MAX || reg < INT_MIN) ? 0 : (int)reg;
    g->line[g->nt] = r->line;
    g->nt++;
    return 1;
}

/* Skips to the line "$End<name>" (any case). */
static int gmsh_skip_section(reader *r, const char *name)
{
    char want[128];
    snprintf(want, sizeof want, "$End%s", name);
    int start = r->line;
    char *s;
    while ((s = rd_line(r)) != NULL) {
        char *rest;
        if (ieq(word(s, &rest), want)) return 1;
    }
    tw_fail(TW_ERR_PARSE, "%s:%d: expected %s to close the section opened on line %d, found end of file",
            r->path, r->line, want, start);
    return 0;
}

static int gmsh_expect_end(reader *r, const char *name)
{
    char want[128];
    snprintf(want, sizeof want, "$End%s", name);
    char *s = rd_line(r), *rest;
    if (!s || !ieq(word(s, &rest), want)) {
        rd_expected(r, s, "%s after the count the section header announces", want);
        return 0;
    }
    return 1;
}

static int gmsh_alloc_nodes(gmsh *g, int n)
{
    g->node_tag = tw_malloc((size_t)n * sizeof *g->node_tag, "msh node tags");
    g->X = tw_malloc(3 * (size_t)n * sizeof *g->X, "mesh positions");
    g->node_line = tw_malloc((size_t)n * sizeof *g->node_line, "msh node lines");
    return g->node_tag && g->X && g->node_line;
}

/* v1 $NOD / v2 $Nodes: count, then "tag x y z" lines. */
static int gmsh_nodes_v12(reader *r, gmsh *g, const char *end_name)
{
    long long c;
    char *s = rd_line(r);
    if (!s || !fields(r, s, "i", &c, NULL, "the node count")) {
        if (!s) rd_expected(r, NULL, "the node count");
        return 0;
    }
    if (g->X) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected one node section, found a second", r->path, r->line);
        return 0;
    }
    if (!check_count(r, c, "nodes") || !gmsh_alloc_nodes(g, (int)c)) return 0;
    for (int i = 0; i < (int)c; i++) {
        double dv[3];
        s = rd_line(r);
        if (!s) {
            rd_expected(r, NULL, "%lld nodes as the section header says, after %d", c, i);
            return 0;
        }
        if (!fields(r, s, "iddd", &g->node_tag[i], dv, "4 numbers (tag x y z)")) return 0;
        memcpy(g->X + 3 * (size_t)i, dv, sizeof dv);
        g->node_line[i] = r->line;
        g->nv = i + 1;
    }
    return gmsh_expect_end(r, end_name);
}

/* v4 $Nodes: entity blocks; 4.1 gives tags then coordinates, 4.0 "tag x y z". */
static int gmsh_nodes_v4(reader *r, gmsh *g, int minor)
{
    long long h[4];
    char *s = rd_line(r);
    const char *hw = "a header 'blocks nodes min_tag max_tag'";
    if (!s) {
        rd_expected(r, NULL, "%s", hw);
        return 0;
    }
    if (!fields(r, s, minor >= 1 ? "iiii" : "ii", h, NULL, hw)) return 0;
    if (g->X) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected one node section, found a second", r->path, r->line);
        return 0;
    }
    if (!check_count(r, h[0], "node blocks") || !check_count(r, h[1], "nodes")) return 0;
    int total = (int)h[1];
    if (!gmsh_alloc_nodes(g, total)) return 0;
    for (long long b = 0; b < h[0]; b++) {
        long long bh[4];
        s = rd_line(r);
        const char *bw = "a block header 'dim entity parametric count'";
        if (!s) {
            rd_expected(r, NULL, "%s (block %lld of %lld)", bw, b + 1, h[0]);
            return 0;
        }
        if (!fields(r, s, "iiii", bh, NULL, bw)) return 0;
        long long cnt = bh[3];
        if (cnt < 0 || cnt > total - g->nv) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected at most %d nodes in this block (the header says %d in all), found %lld",
                    r->path, r->line, total - g->nv, total, cnt);
            return 0;
        }
        int first = g->nv;
        if (minor >= 1) {
            for (long long i = 0; i < cnt; i++) {
                s = rd_line(r);
                if (!s) {
                    rd_expected(r, NULL, "%lld node tags in this block, after %lld", cnt, i);
                    return 0;
                }
                if (!fields(r, s, "i", &g->node_tag[first + i], NULL, "a node tag")) return 0;
                g->node_line[first + i] = r->line;
            }
            for (long long i = 0; i < cnt; i++) {
                double dv[3];
                s = rd_line(r);
                if (!s) {
                    rd_expected(r, NULL, "%lld node coordinates in this block, after %lld", cnt, i);
                    return 0;
                }
                if (!fields(r, s, "ddd", NULL, dv, "3 numbers (x y z)")) return 0;
                memcpy(g->X + 3 * (size_t)(first + i), dv, sizeof dv);
            }
        } else {
            for (long long i = 0; i < cnt; i++) {
                double dv[3];
                s = rd_line(r);
                if (!s) {
                    rd_expected(r, NULL, "%lld nodes in this block, after %lld", cnt, i);
                    return 0;
                }
                if (!fields(r, s, "iddd", &g->node_tag[first + i], dv, "4 numbers (tag x y z)"))
                    return 0;
                g->node_line[first + i] = r->line;
                memcpy(g->X + 3 * (size_t)(first + i), dv, sizeof dv);
            }
        }
        g->nv = first + (int)cnt;
    }
    if (g->nv != total) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected %d nodes as the section header says, found %d in its blocks",
                r->path, r->line, total, g->nv);
        return 0;
    }
    return gmsh_expect_end(r, "Nodes");
}

/* v1 $ELM: "id type phys elementary n nodes..."; v2 $Elements:
 * "id type ntags tags... nodes...". Only type 4 (4-node tet) is kept. */
static int gmsh_elements_v12(reader *r, gmsh *g, int v1)
{
    long long c;
    char *s = rd_line(r);
    if (!s || !fields(r, s, "i", &c, NULL, "the element count")) {
        if (!s) rd_expected(r, NULL, "the element count");
        return 0;
    }
    if (!check_count(r, c, "elements")) return 0;
    for (long long i = 0; i < c; i++) {
        long long hv[5];
        s = rd_line(r);
        if (!s) {
            rd_expected(r, NULL, "%lld elements as the section header says, after %lld", c, i);
            return 0;
        }
        char *p = s;
        const char *what = v1 ? "5 numbers (id type physical elementary nodes) then the nodes"
                              : "3 numbers (id type tags) then the tags and nodes";
        if (!fields(r, p, v1 ? "iiiii" : "iii", hv, NULL, what)) return 0;
        if (hv[1] != 4) continue;
        /* skip the fields already read */
        int nskip = v1 ? 5 : 3;
        for (int k = 0; k < nskip; k++) {
            long long dummy;
            get_ll(&p, &dummy);
        }
        long long reg = 0, nodes[4];
        if (v1) {
            reg = hv[2];
            if (hv[4] != 4) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected 4 nodes for a tetrahedron (type 4), found %lld",
                        r->path, r->line, hv[4]);
                return 0;
            }
        } else {
            if (hv[2] < 0 || hv[2] > 64) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected a tag count 0..64, found %lld", r->path,
                        r->line, hv[2]);
                return 0;
            }
            for (long long k = 0; k < hv[2]; k++) {
                long long t;
                int got = get_ll(&p, &t);
                if (got != 1) {
                    rd_expected(r, p, "%lld tags", hv[2]);
                    return 0;
                }
                if (k == 0) reg = t;
            }
        }
        for (int k = 0; k < 4; k++) {
            int got = get_ll(&p, &nodes[k]);
            if (got != 1) {
                rd_expected(r, p, "4 node tags for a tetrahedron, got %d", k);
                return 0;
            }
        }
        if (!gmsh_add_tet(r, g, nodes, reg)) return 0;
    }
    return gmsh_expect_end(r, v1 ? "ELM" : "Elements");
}

/* v4 $Elements: entity blocks "dim entity type count" (4.1) or
 * "entity dim type count" (4.0), then "tag nodes..." lines. */
static int gmsh_elements_v4(reader *r, gmsh *g, int minor)
{
    long long h[4];
    char *s = rd_line(r);
    const char *hw = "a header 'blocks elements min_tag max_tag'";
    if (!s) {
        rd_expected(r, NULL, "%s", hw);
        return 0;
    }
    if (!fields(r, s, minor >= 1 ? "iiii" : "ii", h, NULL, hw)) return 0;
    if (!check_count(r, h[0], "element blocks") || !check_count(r, h[1], "elements")) return 0;
    long long seen = 0;
    for (long long b = 0; b < h[0]; b++) {
        long long bh[4];
        const char *bw = "a block header 'dim entity type count'";
        s = rd_line(r);
        if (!s) {
            rd_expected(r, NULL, "%s (block %lld of %lld)", bw, b + 1, h[0]);
            return 0;
        }
        if (!fields(r, s, "iiii", bh, NULL, bw)) return 0;
        long long entity = minor >= 1 ? bh[1] : bh[0], type = bh[2], cnt = bh[3];
        if (cnt < 0 || cnt > h[1] - seen) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected at most %lld elements in this block (the header says %lld in all), found %lld",
                    r->path, r->line, h[1] - seen, h[1], cnt);
            return 0;
        }
        for (long long i = 0; i < cnt; i++) {
            long long ev[5];
            s = rd_line(r);
            if (!s) {
                rd_expected(r, NULL, "%lld elements in this block, after %lld", cnt, i);
                return 0;
            }
            if (type != 4) continue;
            if (!fields(r, s, "iiiii", ev, NULL, "5 numbers (tag and 4 node tags)")) return 0;
            if (!gmsh_add_tet(r, g, ev + 1, entity)) return 0;
        }
        seen += cnt;
    }
    if (seen != h[1]) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected %lld elements as the section header says, found %lld in its blocks",
                r->path, r->line, h[1], seen);
        return 0;
    }
    return gmsh_expect_end(r, "Elements");
}

typedef struct tag_index {
    long long tag;
    int index;
} tag_index;

static int tag_cmp(const void *a, const void *b)
{
    long long x = ((const tag_index *)a)->tag, y = ((const tag_index *)b)->tag;
    return (x > y) - (x < y);
}

tw_mesh *tw_mesh_load_gmsh(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report)
{
    reader r;
    gmsh g;
    memset(&g, 0, sizeof g);
    tag_index *map = NULL;
    int *tets = NULL;
    if (rd_open(&r, path, 0) != TW_OK) return NULL;
    int version = 1, minor = 0;
    char *s = rd_line(&r), *rest;
    char *w = s ? word(s, &rest) : NULL;
    if (w && ieq(w, "$MeshFormat")) {
        long long ft[2];
        double ver;
        s = rd_line(&r);
        if (!s) {
            rd_expected(&r, NULL, "a format line 'version file_type data_size'");
            goto fail;
        }
        if (!fields(&r, s, "dI", ft, &ver, "a format line 'version file_type data_size'")) goto fail;
        if (ft[0] != 0) {
            tw_fail(TW_ERR_UNSUPPORTED,
                    "%s:%d: binary msh not supported, re-save as ASCII (gmsh: File > Export, "
                    "format 'Mesh - Gmsh MSH', untick Binary; or gmsh -save -format msh2)",
                    r.path, r.line);
            goto fail;
        }
        version = (int)floor(ver);
        minor = (int)floor((ver - version) * 10 + 0.5);
        if (version != 2 && version != 4) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected msh version 2.x or 4.x, found %g", r.path, r.line, ver);
            goto fail;
        }
        if (!gmsh_skip_section(&r, "MeshFormat")) goto fail;
        s = rd_line(&r);
    } else if (!w || !ieq(w, "$NOD")) {
        if (r.size > 0 && memchr(r.buf, 0, r.size)) {
            tw_fail(TW_ERR_UNSUPPORTED, "%s:%d: binary msh not supported, re-save as ASCII", r.path,
                    r.line);
        } else {
            if (!r.line) r.line = 1;
            rd_expected(&r, w, "$MeshFormat (msh v2/v4) or $NOD (msh v1) on the first line");
        }
        goto fail;
    } else {
        /* v1: the first line was $NOD */
        if (!gmsh_nodes_v12(&r, &g, "NOD")) goto fail;
        s = rd_line(&r);
    }
    for (; s; s = rd_line(&r)) {
        w = word(s, &rest);
        if (w[0] != '$') {
            rd_expected(&r, w, "a section name starting with '$'");
            goto fail;
        }
        if (version == 1 && ieq(w, "$NOD")) {
            if (!gmsh_nodes_v12(&r, &g, "NOD")) goto fail;
        } else if (version == 1 && ieq(w, "$ELM")) {
            if (!gmsh_elements_v12(&r, &g, 1)) goto fail;
        } else if (version == 2 && ieq(w, "$Nodes")) {
            if (!gmsh_nodes_v12(&r, &g, "Nodes")) goto fail;
        } else if (version == 2 && ieq(w, "$Elements")) {
            if (!gmsh_elements_v12(&r, &g, 0)) goto fail;
        } else if (version == 4 && ieq(w, "$Nodes")) {
            if (!gmsh_nodes_v4(&r, &g, minor)) goto fail;
        } else if (version == 4 && ieq(w, "$Elements")) {
            if (!gmsh_elements_v4(&r, &g, minor)) goto fail;
        } else {
            if (!gmsh_skip_section(&r, w + 1)) goto fail;
        }
    }
    if (!g.X || g.nv == 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected a node section, found none", r.path, r.line);
        goto fail;
    }
    if (g.nt == 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected tetrahedra (element type 4), found none", r.path,
                r.line);
        goto fail;
    }
    /* node tags -> indices: direct when contiguous, else a sorted table */
    int nv = g.nv;
    long long t0 = g.node_tag[0];
    int contiguous = 1;
    for (int i = 1; i < nv && contiguous; i++)
        if (g.node_tag[i] != t0 + i) contiguous = 0;
    if (!contiguous) {
        map = tw_malloc((size_t)nv * sizeof *map, "msh node map");
        if (!map) goto fail;
        for (int i = 0; i < nv; i++) {
            map[i].tag = g.node_tag[i];
            map[i].index = i;
        }
        qsort(map, (size_t)nv, sizeof *map, tag_cmp);
        for (int i = 1; i < nv; i++)
            if (map[i].tag == map[i - 1].tag) {
                int a = map[i - 1].index, b = map[i].index;
                if (a > b) {
                    int t = a;
                    a = b;
                    b = t;
                }
                tw_fail(TW_ERR_PARSE, "%s:%d: node tag %lld is given twice (first on line %d)", r.path,
                        g.node_line[b], map[i].tag, g.node_line[a]);
                goto fail;
            }
    }
    tets = tw_malloc(4 * (size_t)g.nt * sizeof *tets, "mesh tets");
    if (!tets) goto fail;
    for (size_t i = 0; i < 4 * (size_t)g.nt; i++) {
        long long tag = g.tet_tag[i];
        int idx = -1;
        if (contiguous) {
            if (tag >= t0 && tag < t0 + nv) idx = (int)(tag - t0);
        } else {
            tag_index key = {tag, 0};
            tag_index *f = bsearch(&key, map, (size_t)nv, sizeof *map, tag_cmp);
            if (f) idx = f->index;
        }
        if (idx < 0) {
            tw_fail(TW_ERR_PARSE, "%s:%d: element refers to node %lld, which is not in the node section",
                    r.path, g.line[i / 4], tag);
            goto fail;
        }
        tets[i] = idx;
    }
    free(map);
    map = NULL;
    free(g.node_tag);
    free(g.node_line);
    free(g.tet_tag);
    g.node_tag = NULL;
    g.tet_tag = NULL;
    int base = (contiguous && (t0 == 0 || t0 == 1)) ? (int)t0 : 1;
    tw_mesh_source src;
    src.path = path;
    src.element_line = g.line;
    src.index_base = base;
    if (report) report->first_index = base;
    rd_close(&r);
    tw_mesh *m = tw_mesh_adopt_source(g.X, nv, tets, g.nt, g.region, &src, def, report);
    free(g.line);
    return m;
fail:
    rd_close(&r);
    free(map);
    free(tets);
    free(g.node_tag);
    free(g.node_line);
    free(g.X);
    free(g.tet_tag);
    free(g.region);
    free(g.line);
    return NULL;
}

/* ----------------------------------------------------------------- MEDIT */

/* The count after a keyword: on the same line or the next. */
static int medit_count(reader *r, char *rest, const char *keyword, long long *out)
{
    char *p = skip_ws(rest);
    if (!*p) {
        p = rd_line(r);
        if (!p) {
            rd_expected(r, NULL, "a count after %s", keyword);
            return 0;
        }
    }
    char what[96];
    snprintf(what, sizeof what, "a count after %s", keyword);
    return fields(r, p, "i", out, NULL, what);
}

tw_mesh *tw_mesh_load_medit(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report)
{
    reader r;
    double *X = NULL;
    int *tets = NULL, *region = NULL, *lines = NULL;
    int nv = -1, nt = -1;
    if (rd_open(&r, path, 1) != TW_OK) return NULL;
    char *s = rd_line(&r), *rest;
    char *w = s ? word(s, &rest) : NULL;
    if (!w || !ieq(w, "MeshVersionFormatted")) {
        if (!r.line) r.line = 1;
        rd_expected(&r, w, "MeshVersionFormatted on the first line (ASCII MEDIT)");
        goto fail;
    }
    long long c;
    if (!medit_count(&r, rest, "MeshVersionFormatted", &c)) goto fail;
    while ((s = rd_line(&r)) != NULL) {
        w = word(s, &rest);
        if (ieq(w, "End")) break;
        if (!medit_count(&r, rest, w, &c)) goto fail;
        if (ieq(w, "Dimension")) {
            if (c != 3) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected Dimension 3, found %lld", r.path, r.line, c);
                goto fail;
            }
            continue;
        }
        if (!check_count(&r, c, w)) goto fail;
        if (ieq(w, "Vertices")) {
            if (X) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected one Vertices section, found a second", r.path, r.line);
                goto fail;
            }
            nv = (int)c;
            X = tw_malloc(3 * (size_t)nv * sizeof *X, "mesh positions");
            if (!X) goto fail;
            for (int i = 0; i < nv; i++) {
                double dv[3];
                s = rd_line(&r);
                if (!s) {
                    rd_expected(&r, NULL, "%d vertices as Vertices says, after %d", nv, i);
                    goto fail;
                }
                if (!fields(&r, s, "ddd", NULL, dv, "4 numbers (x y z ref)")) goto fail;
                memcpy(X + 3 * (size_t)i, dv, sizeof dv);
            }
        } else if (ieq(w, "Tetrahedra")) {
            if (tets) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected one Tetrahedra section, found a second", r.path, r.line);
                goto fail;
            }
            nt = (int)c;
            tets = tw_malloc(4 * (size_t)nt * sizeof *tets, "mesh tets");
            region = tw_calloc((size_t)nt, sizeof *region, "mesh regions");
            lines = tw_malloc((size_t)nt * sizeof *lines, "element lines");
            if (!tets || !region || !lines) goto fail;
            for (int e = 0; e < nt; e++) {
                long long ev[5];
                s = rd_line(&r);
                if (!s) {
                    rd_expected(&r, NULL, "%d tetrahedra as Tetrahedra says, after %d", nt, e);
                    goto fail;
                }
                if (!fields(&r, s, "iiiiI", ev, NULL, "5 numbers (4 vertices and ref)")) goto fail;
                for (int k = 0; k < 4; k++)
                    if (!to_index(&r, ev[k], 1, nv, &tets[4 * (size_t)e + k])) goto fail;
                region[e] = (ev[4] > INT_MAX || ev[4] < INT_MIN) ? 0 : (int)ev[4];
                lines[e] = r.line;
            }
        } else {
            /* another section (Triangles, Edges, Corners, ...): one record a line */
            for (long long i = 0; i < c; i++)
                if (!rd_line(&r)) {
                    rd_expected(&r, NULL, "%lld records in %s, after %lld", c, w, i);
                    goto fail;
                }
        }
    }
    if (!X || !tets || nv == 0 || nt == 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected Vertices and Tetrahedra sections, found %s", r.path,
                r.line, !X || nv == 0 ? "no Vertices" : "no Tetrahedra");
        goto fail;
    }
    rd_close(&r);
    tw_mesh_source src;
    src.path = path;
    src.element_line = lines;
    src.index_base = 1;
    if (report) report->first_index = 1;
    tw_mesh *m = tw_mesh_adopt_source(X, nv, tets, nt, region, &src, def, report);
    free(lines);
    return m;
fail:
    rd_close(&r);
    free(X);
    free(tets);
    free(region);
    free(lines);
    return NULL;
}

/* -------------------------------------------------------------- dispatch */

tw_mesh *tw_mesh_load(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report)
{
    if (report) memset(report, 0, sizeof *report);
    if (!path) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_load: null path");
        return NULL;
    }
    if (ends_with(path, ".node") || ends_with(path, ".ele")) return tw_mesh_load_tetgen(path, def, report);
    if (ends_with(path, ".msh")) return tw_mesh_load_gmsh(path, def, report);
    if (ends_with(path, ".mesh")) return tw_mesh_load_medit(path, def, report);
    /* a TetGen stem? */
    size_t n = strlen(path);
    char *node = tw_malloc(n + 8, "path");
    if (!node) return NULL;
    snprintf(node, n + 8, "%s.node", path);
    FILE *f = fopen(node, "rb");
    free(node);
    if (f) {
        fclose(f);
        return tw_mesh_load_tetgen(path, def, report);
    }
    f = fopen(path, "rb");
    if (!f) {
        tw_fail(TW_ERR_IO, "%s: cannot open: %s (nor %s.node)", path, strerror(errno), path);
        return NULL;
    }
    fclose(f);
    tw_fail(TW_ERR_INVALID,
            "%s: unknown mesh format: expected .node/.ele (TetGen), .msh (Gmsh) or .mesh (MEDIT)",
            path);
    return NULL;
}

/* -------------------------------------------------------------- surfaces */

typedef struct surf_build {
    double *X;
    int *tri;
    size_t nv, cap_v, nt, cap_t;
} surf_build;

static int sb_vertex(surf_build *b, const double *p, const char *path)
{
    if (b->nv == b->cap_v) {
        size_t cap = b->cap_v ? 2 * b->cap_v : 1024;
        double *x = realloc(b->X, 3 * cap * sizeof *x);
        if (!x) {
            tw_fail(TW_ERR_NOMEM, "%s: out of memory storing vertices", path);
            return 0;
        }
        b->X = x;
        b->cap_v = cap;
    }
    memcpy(b->X + 3 * b->nv++, p, 3 * sizeof *p);
    return 1;
}

static int sb_triangle(surf_build *b, int i, int j, int k, const char *path)
{
    if (b->nt == b->cap_t) {
        size_t cap = b->cap_t ? 2 * b->cap_t : 1024;
        int *t = realloc(b->tri, 3 * cap * sizeof *t);
        if (!t) {
            tw_fail(TW_ERR_NOMEM, "%s: out of memory storing triangles", path);
            return 0;
        }
        b->tri = t;
        b->cap_t = cap;
    }
    b->tri[3 * b->nt] = i;
    b->tri[3 * b->nt + 1] = j;
    b->tri[3 * b->nt + 2] = k;
    b->nt++;
    return 1;
}

/* One polygon's vertex list, grown as needed. */
typedef struct poly {
    int *v;
    int n, cap;
} poly;

static int poly_push(poly *p, int v, const char *path)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        int *nv = realloc(p->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            tw_fail(TW_ERR_NOMEM, "%s: out of memory reading a polygon", path);
            return 0;
        }
        p->v = nv;
        p->cap = cap;
    }
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
static int load_obj(reader *r, surf_build *b)
{
    char *s;
    poly p = {NULL, 0, 0};
    while ((s = rd_line(r)) != NULL) {
        if (s[0] == 'v' && is_space(s[1])) {
            double dv[3];
            if (!fields(r, s + 1, "ddd", NULL, dv, "3 numbers after 'v' (x y z)")) goto fail;
            if (!sb_vertex(b, dv, r->path)) goto fail;
        } else if (s[0] == 'f' && is_space(s[1])) {
            char *q = s + 1;
            p.n = 0;
            for (;;) {
                q = skip_ws(q);
                if (!*q) break;
                char *e;
                errno = 0;
                long long v = strtoll(q, &e, 10);
                if (e == q || (*e && *e != '/' && !is_space(*e)) || errno == ERANGE) {
                    rd_expected(r, q, "a vertex index (a, a/t, a//n or a/t/n)");
                    goto fail;
                }
                long long idx = v < 0 ? (long long)b->nv + v : v - 1;
                if (v == 0 || idx < 0 || idx >= (long long)b->nv) {
                    tw_fail(TW_ERR_PARSE, "%s:%d: expected a vertex index in 1..%zu (or -%zu..-1), found %lld",
                            r->path, r->line, b->nv, b->nv, v);
                    goto fail;
                }
                if (!poly_push(&p, (int)idx, r->path)) goto fail;
                while (*e && !is_space(*e)) e++;
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
static int load_off(reader *r, surf_build *b)
{
    char *s = rd_line(r), *rest;
    char *w = s ? word(s, &rest) : NULL;
    size_t wl = w ? strlen(w) : 0;
    poly p = {NULL, 0, 0};
    if (!w || wl < 3 || wl > 5 || !ieq(w + wl - 3, "OFF")) {
        if (!r->line) r->line = 1;
        rd_expected(r, w, "OFF on the first line");
        return 0;
    }
    long long c[3];
    s = skip_ws(rest);
    if (!*s) s = rd_line(r);
    if (!s) {
        rd_expected(r, NULL, "counts 'vertices faces edges'");
        return 0;
    }
    if (!fields(r, s, "iiI", c, NULL, "counts 'vertices faces edges'")) return 0;
    if (!check_count(r, c[0], "vertices") || !check_count(r, c[1], "faces")) return 0;
    for (long long i = 0; i < c[0]; i++) {
        double dv[3];
        s = rd_line(r);
        if (!s) {
            rd_expected(r, NULL, "%lld vertices as the header says, after %lld", c[0], i);
            return 0;
        }
        if (!fields(r, s, "ddd", NULL, dv, "3 numbers (x y z)")) return 0;
        if (!sb_vertex(b, dv, r->path)) return 0;
    }
    for (long long i = 0; i < c[1]; i++) {
        long long n;
        s = rd_line(r);
        if (!s) {
            rd_expected(r, NULL, "%lld faces as the header says, after %lld", c[1], i);
            goto fail;
        }
        char *q = s;
        int got = get_ll(&q, &n);
        if (got != 1 || n < 3 || n > 1000000) {
            if (got == 1)
                tw_fail(TW_ERR_PARSE, "%s:%d: expected at least 3 vertices in a face, found %lld",
                        r->path, r->line, n);
            else
                rd_expected(r, q, "a face 'n i0 i1 ...'");
            goto fail;
        }
        p.n = 0;
        for (long long k = 0; k < n; k++) {
            long long v;
            got = get_ll(&q, &v);
            if (got != 1) {
                rd_expected(r, q, "%lld vertex indices after the count, got %lld", n, k);
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
    int obj = ends_with(path, ".obj"), off = ends_with(path, ".off");
    if (!obj && !off) {
        tw_fail(TW_ERR_INVALID, "%s: unknown surface format: expected .obj or .off", path);
        return NULL;
    }
    reader r;
    if (rd_open(&r, path, 1) != TW_OK) return NULL;
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
    rd_close(&r);
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
