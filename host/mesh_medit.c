/* MEDIT ASCII .mesh: keyword sections (Vertices, Tetrahedra, and others
 * skipped by their count), a count on the keyword's line or the next,
 * 1-based indices, the last field of a tetrahedron its region. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "text_reader.h"

/* The count after a keyword: on the same line or the next. */
static int medit_count(tw_reader *r, char *rest, const char *keyword, long long *out)
{
    char what[96], tok[64];
    snprintf(what, sizeof what, "a count after %s", tw_reader_quote(keyword, tok, sizeof tok));
    char *p = tw_skip_blank(rest);
    if (!*p) {
        p = tw_reader_line(r);
        if (!p) {
            tw_reader_expected(r, NULL, "%s", what);
            return 0;
        }
    }
    return tw_reader_fields(r, p, "i", out, NULL, what);
}

tw_mesh *tw_mesh_load_medit(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report)
{
    tw_reader r;
    double *X = NULL;
    int *tets = NULL, *region = NULL, *lines = NULL;
    int nv = -1, nt = -1;
    if (tw_reader_open(&r, path, 1) != TW_OK) return NULL;
    char *s = tw_reader_line(&r), *rest;
    char *w = s ? tw_word(s, &rest) : NULL;
    if (!w || !tw_ieq(w, "MeshVersionFormatted")) {
        if (!r.line) r.line = 1;
        tw_reader_expected(&r, w, "MeshVersionFormatted on the first line (ASCII MEDIT)");
        goto fail;
    }
    long long c;
    if (!medit_count(&r, rest, "MeshVersionFormatted", &c)) goto fail;
    while ((s = tw_reader_line(&r)) != NULL) {
        w = tw_word(s, &rest);
        if (tw_ieq(w, "End")) break;
        if (!medit_count(&r, rest, w, &c)) goto fail;
        if (tw_ieq(w, "Dimension")) {
            if (c != 3) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected Dimension 3, found %lld", r.path, r.line, c);
                goto fail;
            }
            continue;
        }
        char tok[64];
        const char *quoted = tw_reader_quote(w, tok, sizeof tok);
        if (!tw_reader_count(&r, c, quoted)) goto fail;
        if (tw_ieq(w, "Vertices")) {
            if (X) {
                tw_fail(TW_ERR_PARSE, "%s:%d: expected one Vertices section, found a second", r.path, r.line);
                goto fail;
            }
            nv = (int)c;
            X = tw_malloc(3 * (size_t)nv * sizeof *X, "mesh positions");
            if (!X) goto fail;
            for (int i = 0; i < nv; i++) {
                double dv[3];
                s = tw_reader_line(&r);
                if (!s) {
                    tw_reader_expected(&r, NULL, "%d vertices as Vertices says, after %d", nv, i);
                    goto fail;
                }
                if (!tw_reader_fields(&r, s, "ddd", NULL, dv, "4 numbers (x y z ref)")) goto fail;
                memcpy(X + 3 * (size_t)i, dv, sizeof dv);
            }
        } else if (tw_ieq(w, "Tetrahedra")) {
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
                s = tw_reader_line(&r);
                if (!s) {
                    tw_reader_expected(&r, NULL, "%d tetrahedra as Tetrahedra says, after %d", nt, e);
                    goto fail;
                }
                if (!tw_reader_fields(&r, s, "iiiiI", ev, NULL, "5 numbers (4 vertices and ref)")) goto fail;
                for (int k = 0; k < 4; k++)
                    if (!tw_reader_index(&r, ev[k], 1, nv, &tets[4 * (size_t)e + k])) goto fail;
                region[e] = (ev[4] > INT_MAX || ev[4] < INT_MIN) ? 0 : (int)ev[4];
                lines[e] = r.line;
            }
        } else {
            /* another section (Triangles, Edges, Corners, ...): one record a line */
            for (long long i = 0; i < c; i++)
                if (!tw_reader_line(&r)) {
                    tw_reader_expected(&r, NULL, "%lld records in %s, after %lld", c, quoted, i);
                    goto fail;
                }
        }
    }
    if (!X || !tets || nv == 0 || nt == 0) {
        tw_fail(TW_ERR_PARSE, "%s:%d: expected Vertices and Tetrahedra sections, found %s", r.path,
                r.line, !X || nv == 0 ? "no Vertices" : "no Tetrahedra");
        goto fail;
    }
    tw_reader_close(&r);
    tw_mesh_source src;
    src.path = path;
    src.element_line = lines;
    src.index_base = 1;
    if (report) report->first_index = 1;
    tw_mesh *m = tw_mesh_adopt_source(X, nv, tets, nt, region, &src, def, report);
    free(lines);
    return m;
fail:
    tw_reader_close(&r);
    free(X);
    free(tets);
    free(region);
    free(lines);
    return NULL;
}
