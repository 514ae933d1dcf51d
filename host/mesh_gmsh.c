/* Gmsh ASCII .msh, versions 1 ($NOD/$ELM), 2 and 4 ($Nodes/$Elements in
 * entity blocks, 4.0 and 4.1 layouts); only 4-node tetrahedra (type 4) are
 * kept, their first tag (v1: physical, v2: first tag, v4: entity) as the
 * region. Node tags map to indices directly when contiguous, else through a
 * sorted table. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "text_reader.h"

typedef struct gmsh {
    int nv, nt, cap_t;
    long long *node_tag;  /* nv */
    int *node_line;       /* nv */
    double *X;            /* 3*nv */
    long long *tet_tag;   /* 4*nt, node tags as in the file */
    int *region, *line;   /* nt */
} gmsh;

static int gmsh_add_tet(const tw_reader *r, gmsh *g, const long long *nodes, long long reg)
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
static int gmsh_skip_section(tw_reader *r, const char *name)
{
    char want[128];
    snprintf(want, sizeof want, "$End%s", name);
    int start = r->line;
    char *s;
    while ((s = tw_reader_line(r)) != NULL) {
        char *rest;
        if (tw_ieq(tw_word(s, &rest), want)) return 1;
    }
    char tok[64];
    tw_fail(TW_ERR_PARSE, "%s:%d: expected %s to close the section opened on line %d, found end of file",
            r->path, r->line, tw_reader_quote(want, tok, sizeof tok), start);
    return 0;
}

static int gmsh_expect_end(tw_reader *r, const char *name)
{
    char want[128];
    snprintf(want, sizeof want, "$End%s", name);
    char *s = tw_reader_line(r), *rest;
    if (!s || !tw_ieq(tw_word(s, &rest), want)) {
        char tok[64];
        tw_reader_expected(r, s, "%s after the count the section header announces",
                           tw_reader_quote(want, tok, sizeof tok));
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
static int gmsh_nodes_v12(tw_reader *r, gmsh *g, const char *end_name)
{
    long long c;
    if (!tw_reader_header(r, "i", &c, "the node count")) return 0;
    char *s;
    if (g->X) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected one node section, found a second", r->path, r->line);
        return 0;
    }
    if (!tw_reader_count(r, c, "nodes") || !gmsh_alloc_nodes(g, (int)c)) return 0;
    for (int i = 0; i < (int)c; i++) {
        double dv[3];
        s = tw_reader_line(r);
        if (!s) {
            tw_reader_expected(r, NULL, "%lld nodes as the section header says, after %d", c, i);
            return 0;
        }
        if (!tw_reader_fields(r, s, "iddd", &g->node_tag[i], dv, "4 numbers (tag x y z)")) return 0;
        memcpy(g->X + 3 * (size_t)i, dv, sizeof dv);
        g->node_line[i] = r->line;
        g->nv = i + 1;
    }
    return gmsh_expect_end(r, end_name);
}

/* v4 $Nodes: entity blocks; 4.1 gives tags then coordinates, 4.0 "tag x y z". */
static int gmsh_nodes_v4(tw_reader *r, gmsh *g, int minor)
{
    long long h[4];
    if (!tw_reader_header(r, minor >= 1 ? "iiii" : "ii", h, "a header 'blocks nodes min_tag max_tag'")) return 0;
    char *s;
    if (g->X) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected one node section, found a second", r->path, r->line);
        return 0;
    }
    if (!tw_reader_count(r, h[0], "node blocks") || !tw_reader_count(r, h[1], "nodes")) return 0;
    int total = (int)h[1];
    if (!gmsh_alloc_nodes(g, total)) return 0;
    for (long long b = 0; b < h[0]; b++) {
        long long bh[4];
        s = tw_reader_line(r);
        const char *bw = "a block header 'dim entity parametric count'";
        if (!s) {
            tw_reader_expected(r, NULL, "%s (block %lld of %lld)", bw, b + 1, h[0]);
            return 0;
        }
        if (!tw_reader_fields(r, s, "iiii", bh, NULL, bw)) return 0;
        long long cnt = bh[3];
        if (cnt < 0 || cnt > total - g->nv) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected at most %d nodes in this block (the header says %d in all), found %lld",
                    r->path, r->line, total - g->nv, total, cnt);
            return 0;
        }
        int first = g->nv;
        if (minor >= 1) {
            for (long long i = 0; i < cnt; i++) {
                s = tw_reader_line(r);
                if (!s) {
                    tw_reader_expected(r, NULL, "%lld node tags in this block, after %lld", cnt, i);
                    return 0;
                }
                if (!tw_reader_fields(r, s, "i", &g->node_tag[first + i], NULL, "a node tag")) return 0;
                g->node_line[first + i] = r->line;
            }
            for (long long i = 0; i < cnt; i++) {
                double dv[3];
                s = tw_reader_line(r);
                if (!s) {
                    tw_reader_expected(r, NULL, "%lld node coordinates in this block, after %lld", cnt, i);
                    return 0;
                }
                if (!tw_reader_fields(r, s, "ddd", NULL, dv, "3 numbers (x y z)")) return 0;
                memcpy(g->X + 3 * (size_t)(first + i), dv, sizeof dv);
            }
        } else {
            for (long long i = 0; i < cnt; i++) {
                double dv[3];
                s = tw_reader_line(r);
                if (!s) {
                    tw_reader_expected(r, NULL, "%lld nodes in this block, after %lld", cnt, i);
                    return 0;
                }
                if (!tw_reader_fields(r, s, "iddd", &g->node_tag[first + i], dv, "4 numbers (tag x y z)"))
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
static int gmsh_elements_v12(tw_reader *r, gmsh *g, int v1)
{
    long long c;
    if (!tw_reader_header(r, "i", &c, "the element count")) return 0;
    char *s;
    if (!tw_reader_count(r, c, "elements")) return 0;
    for (long long i = 0; i < c; i++) {
        long long hv[5];
        s = tw_reader_line(r);
        if (!s) {
            tw_reader_expected(r, NULL, "%lld elements as the section header says, after %lld", c, i);
            return 0;
        }
        char *p = s;
        const char *what = v1 ? "5 numbers (id type physical elementary nodes) then the nodes"
                              : "3 numbers (id type tags) then the tags and nodes";
        if (!tw_reader_fields(r, p, v1 ? "iiiii" : "iii", hv, NULL, what)) return 0;
        if (hv[1] != 4) continue;
        /* skip the fields already read */
        int nskip = v1 ? 5 : 3;
        for (int k = 0; k < nskip; k++) {
            long long dummy;
            tw_token_ll(&p, &dummy);
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
                int got = tw_token_ll(&p, &t);
                if (got != 1) {
                    tw_reader_expected(r, p, "%lld tags", hv[2]);
                    return 0;
                }
                if (k == 0) reg = t;
            }
        }
        for (int k = 0; k < 4; k++) {
            int got = tw_token_ll(&p, &nodes[k]);
            if (got != 1) {
                tw_reader_expected(r, p, "4 node tags for a tetrahedron, got %d", k);
                return 0;
            }
        }
        if (!gmsh_add_tet(r, g, nodes, reg)) return 0;
    }
    return gmsh_expect_end(r, v1 ? "ELM" : "Elements");
}

/* v4 $Elements: entity blocks "dim entity type count" (4.1) or
 * "entity dim type count" (4.0), then "tag nodes..." lines. */
static int gmsh_elements_v4(tw_reader *r, gmsh *g, int minor)
{
    long long h[4];
    if (!tw_reader_header(r, minor >= 1 ? "iiii" : "ii", h, "a header 'blocks elements min_tag max_tag'")) return 0;
    char *s;
    if (!tw_reader_count(r, h[0], "element blocks") || !tw_reader_count(r, h[1], "elements")) return 0;
    long long seen = 0;
    for (long long b = 0; b < h[0]; b++) {
        long long bh[4];
        const char *bw = "a block header 'dim entity type count'";
        s = tw_reader_line(r);
        if (!s) {
            tw_reader_expected(r, NULL, "%s (block %lld of %lld)", bw, b + 1, h[0]);
            return 0;
        }
        if (!tw_reader_fields(r, s, "iiii", bh, NULL, bw)) return 0;
        long long entity = minor >= 1 ? bh[1] : bh[0], type = bh[2], cnt = bh[3];
        if (cnt < 0 || cnt > h[1] - seen) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected at most %lld elements in this block (the header says %lld in all), found %lld",
                    r->path, r->line, h[1] - seen, h[1], cnt);
            return 0;
        }
        for (long long i = 0; i < cnt; i++) {
            long long ev[5];
            s = tw_reader_line(r);
            if (!s) {
                tw_reader_expected(r, NULL, "%lld elements in this block, after %lld", cnt, i);
                return 0;
            }
            if (type != 4) continue;
            if (!tw_reader_fields(r, s, "iiiii", ev, NULL, "5 numbers (tag and 4 node tags)")) return 0;
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
    tw_reader r;
    gmsh g;
    memset(&g, 0, sizeof g);
    tag_index *map = NULL;
    int *tets = NULL;
    if (tw_reader_open(&r, path, 0) != TW_OK) return NULL;
    int version = 1, minor = 0;
    char *s = tw_reader_line(&r), *rest;
    char *w = s ? tw_word(s, &rest) : NULL;
    if (w && tw_ieq(w, "$MeshFormat")) {
        long long ft[2];
        double ver;
        s = tw_reader_line(&r);
        if (!s) {
            tw_reader_expected(&r, NULL, "a format line 'version file_type data_size'");
            goto fail;
        }
        if (!tw_reader_fields(&r, s, "dI", ft, &ver, "a format line 'version file_type data_size'")) goto fail;
        if (ft[0] != 0) {
            tw_fail(TW_ERR_UNSUPPORTED,
                    "%s:%d: binary msh not supported, re-save as ASCII (gmsh: File > Export, "
                    "format 'Mesh - Gmsh MSH', untick Binary; or gmsh -save -format msh2)",
                    r.path, r.line);
            goto fail;
        }
        /* range first: the version becomes an int */
        if (!(ver >= 2 && ver < 3) && !(ver >= 4 && ver < 5)) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected msh version 2.x or 4.x, found %g", r.path, r.line, ver);
            goto fail;
        }
        version = (int)floor(ver);
        minor = (int)floor((ver - version) * 10 + 0.5);
        if (!gmsh_skip_section(&r, "MeshFormat")) goto fail;
        s = tw_reader_line(&r);
    } else if (!w || !tw_ieq(w, "$NOD")) {
        /* a binary msh has an ASCII $MeshFormat section (file type 1, above) */
        char tok[64];
        if (!r.line) r.line = 1;
        tw_fail(TW_ERR_PARSE,
                "%s:%d: not a Gmsh file: expected $MeshFormat (msh v2/v4) or $NOD (msh v1) on the "
                "first line, found %s",
                r.path, r.line, tw_reader_quote(w, tok, sizeof tok));
        goto fail;
    } else {
        /* v1: the first line was $NOD */
        if (!gmsh_nodes_v12(&r, &g, "NOD")) goto fail;
        s = tw_reader_line(&r);
    }
    for (; s; s = tw_reader_line(&r)) {
        w = tw_word(s, &rest);
        if (w[0] != '$') {
            tw_reader_expected(&r, w, "a section name starting with '$'");
            goto fail;
        }
        if (version == 1 && tw_ieq(w, "$NOD")) {
            if (!gmsh_nodes_v12(&r, &g, "NOD")) goto fail;
        } else if (version == 1 && tw_ieq(w, "$ELM")) {
            if (!gmsh_elements_v12(&r, &g, 1)) goto fail;
        } else if (version == 2 && tw_ieq(w, "$Nodes")) {
            if (!gmsh_nodes_v12(&r, &g, "Nodes")) goto fail;
        } else if (version == 2 && tw_ieq(w, "$Elements")) {
            if (!gmsh_elements_v12(&r, &g, 0)) goto fail;
        } else if (version == 4 && tw_ieq(w, "$Nodes")) {
            if (!gmsh_nodes_v4(&r, &g, minor)) goto fail;
        } else if (version == 4 && tw_ieq(w, "$Elements")) {
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
    /* node tags -> indices: direct when contiguous, else a sorted table
     * (tags are any long long: t0 + nv - 1 is formed only where it fits) */
    int nv = g.nv;
    long long t0 = g.node_tag[0];
    int contiguous = t0 <= LLONG_MAX - nv;
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
            if (tag >= t0 && tag <= t0 + (nv - 1)) idx = (int)(tag - t0);
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
    tw_reader_close(&r);
    tw_mesh *m = tw_mesh_adopt_source(g.X, nv, tets, g.nt, g.region, &src, def, report);
    free(g.line);
    return m;
fail:
    tw_reader_close(&r);
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
