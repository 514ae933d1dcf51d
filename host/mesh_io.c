/* tw_mesh_load: picks the reader by the file's extension (a TetGen stem
 * when "stem.node" exists).
 *
 * ARCHITECTURE: one file per format, each a tw_mesh_load_<format> over the
 * line reader of text_reader.h that hands its arrays to
 * tw_mesh_adopt_source (mesh.c) for validation: mesh_tetgen.c, mesh_gmsh.c,
 * mesh_medit.c; triangle surfaces in surface_io.c. A new mesh format is a
 * new mesh_<format>.c plus one line here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "text_reader.h"

tw_mesh *tw_mesh_load(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report)
{
    if (report) memset(report, 0, sizeof *report);
    if (!path) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_load: null path");
        return NULL;
    }
    if (tw_ends_with(path, ".node") || tw_ends_with(path, ".ele")) return tw_mesh_load_tetgen(path, def, report);
    if (tw_ends_with(path, ".msh")) return tw_mesh_load_gmsh(path, def, report);
    if (tw_ends_with(path, ".mesh")) return tw_mesh_load_medit(path, def, report);
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
