/* TetGen .node/.ele: "count 3 attributes markers" then one node a line,
 * "count nodes_per_element attributes" then one element a line; indices
 * 0- or 1-based as the first node says. Header counts are checked against
 * the file size before anything is allocated, and data after the announced
 * count is an error, so a wrong count is caught either way. Element lines are
 * kept per element so that tw_mesh_adopt_source can cite them for geometric
 * errors (zero volume, duplicates). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "text_reader.h"

tw_mesh *tw_mesh_load_tetgen(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report)
{
    size_t n = strlen(path);
    if (tw_ends_with(path, ".node")) n -= 5;
    else if (tw_ends_with(path, ".ele")) n -= 4;
    char *node_path = tw_malloc(n + 8, "path"), *ele_path = tw_malloc(n + 8, "path");
    double *X = NULL;
    int *tets = NULL, *region = NULL, *lines = NULL;
    tw_reader r;
    memset(&r, 0, sizeof r);
    if (!node_path || !ele_path) goto fail;
    memcpy(node_path, path, n);
    strcpy(node_path + n, ".node");
    memcpy(ele_path, path, n);
    strcpy(ele_path + n, ".ele");

    /* .node: "count 3 attributes markers", then "index x y z [attrs] [marker]" */
    if (tw_reader_open(&r, node_path, 1) != TW_OK) goto fail;
    long long h[4], iv[1];
    double dv[3];
    char *s;
    if (!tw_reader_header(&r, "iIII", h, "a header 'nodes 3 attributes markers'")) goto fail;
    if (!tw_reader_count(&r, h[0], "nodes")) goto fail;
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
        s = tw_reader_line(&r);
        if (!s) {
            tw_reader_expected(&r, NULL, "%d nodes as the header says, after %d", nv, i);
            goto fail;
        }
        if (!tw_reader_fields(&r, s, "iddd", iv, dv, "4 numbers (index x y z)")) goto fail;
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
    if (!tw_reader_no_more(&r, nv, "nodes")) goto fail;
    tw_reader_close(&r);

    /* .ele: "count nodes_per_element attributes", then "index a b c d [...] [region]" */
    if (tw_reader_open(&r, ele_path, 1) != TW_OK) goto fail;
    if (!tw_reader_header(&r, "iiI", h, "a header 'elements nodes_per_element attributes'")) goto fail;
    if (!tw_reader_count(&r, h[0], "elements")) goto fail;
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
        s = tw_reader_line(&r);
        if (!s) {
            tw_reader_expected(&r, NULL, "%d elements as the header says, after %d", nt, e);
            goto fail;
        }
        if (!tw_reader_fields(&r, s, fmt, ev, &attr, what)) goto fail;
        if (e == 0) {
            ebase = ev[0];
            if (ebase < -1000000000LL || ebase > 1000000000LL) {
                tw_fail(TW_ERR_PARSE,
                        "%s:%d: expected a first element index in -1000000000..1000000000 "
                        "(TetGen writes 0 or 1), found %lld",
                        r.path, r.line, ebase);
                goto fail;
            }
        } else if (ev[0] != ebase + e) {
            tw_fail(TW_ERR_PARSE, "%s:%d: expected element index %lld, found %lld", r.path, r.line,
                    ebase + e, ev[0]);
            goto fail;
        }
        for (int k = 0; k < 4; k++)
            if (!tw_reader_index(&r, ev[1 + k], base, nv, &tets[4 * (size_t)e + k])) goto fail;
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
    if (!tw_reader_no_more(&r, nt, "elements")) goto fail;
    tw_reader_close(&r);

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
    tw_reader_close(&r);
    free(X);
    free(tets);
    free(region);
    free(lines);
    free(node_path);
    free(ele_path);
    return NULL;
}
