/* Mesh and surface readers: the shared meshes, small files in each format
 * written here, and bad input (each must fail with file:line in the message). */
#define _POSIX_C_SOURCE 200809L /* mkdir */
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "mesh.h"
#include "mesher.h"
#include "text_reader.h"
#include "tw_test.h"

static double mesh_volume(const tw_mesh *m)
{
    double v = 0;
    for (int e = 0; e < tw_mesh_tet_count(m); e++) v += tw_mesh_det(m, e) / 6.0;
    return v;
}

/* Writes text to a scratch file; returns its path (static, one per call site). */
static const char *write_file(char *buf, size_t size, const char *name, const char *text)
{
    snprintf(buf, size, "%s", tw_test_tmp_path(name));
    FILE *f = fopen(buf, "wb");
    if (!f) return buf;
    fputs(text, f);
    fclose(f);
    return buf;
}

/* The first two integers of a file's first line (a TetGen header count). */
static int header_count(const char *file)
{
    FILE *f = fopen(tw_test_mesh_path(file), "r");
    int n = -1;
    if (f) {
        if (fscanf(f, "%d", &n) != 1) n = -1;
        fclose(f);
    }
    return n;
}

/* NULL, and the message names `file` and line `line` as "file:line:". */
static int failed_at(const tw_mesh *m, const char *file, int line)
{
    char want[256];
    snprintf(want, sizeof want, "%s:%d:", file, line);
    if (m) {
        fprintf(stderr, "expected a failure at %s, the load succeeded\n", want);
        return 0;
    }
    if (!strstr(tw_last_error(), want)) {
        fprintf(stderr, "expected '%s' in the message: %s\n", want, tw_last_error());
        return 0;
    }
    fprintf(stderr, "message (as expected): %s\n", tw_last_error());
    return 1;
}

static tw_mesh *load_quiet(const char *path, tw_mesh_report *rep)
{
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    return tw_mesh_load(path, &def, rep);
}

/* -------------------------------------------------------- shared meshes */

TW_TEST(load_liver_msh_v1)
{
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("liver_sofa.msh"), NULL, &rep);
    CHECK(m);
    CHECK(tw_mesh_vertex_count(m) == 181); /* $NOD count */
    CHECK(tw_mesh_tet_count(m) == 596);    /* $ELM count, all type 4 */
    CHECK(mesh_volume(m) > 0);
    CHECK(rep.reoriented == 0 && rep.first_index == 1);
    tw_mesh_stats s = tw_mesh_compute_stats(m);
    CHECK(s.boundary_faces == 276);
    CHECK_NEAR(s.bbox_min[0], -4.67928, 1e-12);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(load_dog_tetgen_node)
{
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("dog_shrec398.tet.node"), NULL, &rep);
    CHECK(m);
    CHECK(tw_mesh_vertex_count(m) == header_count("dog_shrec398.tet.node"));
    CHECK(tw_mesh_tet_count(m) == header_count("dog_shrec398.tet.ele"));
    CHECK(tw_mesh_tet_count(m) == 6951);
    CHECK_NEAR(mesh_volume(m), 0.0709617, 1e-6);
    CHECK(rep.reoriented == 0 && rep.first_index == 0);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(load_armadillo_node_and_ele)
{
    tw_mesh *a = tw_mesh_load(tw_test_mesh_path("armadillo_4k.node"), NULL, NULL);
    tw_mesh *b = tw_mesh_load(tw_test_mesh_path("armadillo_4k.ele"), NULL, NULL);
    CHECK(a && b);
    CHECK(tw_mesh_vertex_count(a) == header_count("armadillo_4k.node"));
    CHECK(tw_mesh_tet_count(a) == header_count("armadillo_4k.ele"));
    CHECK(tw_mesh_tet_count(a) == 3717);
    CHECK(memcmp(tw_mesh_tets(a), tw_mesh_tets(b), 4 * 3717 * sizeof(int)) == 0);
    CHECK(mesh_volume(a) > 0);
    tw_mesh_stats s = tw_mesh_compute_stats(a);
    CHECK(s.boundary_faces == 2102);
    tw_mesh_destroy(a);
    tw_mesh_destroy(b);
    return 0;
}

TW_TEST(load_bunny_by_stem)
{
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet"), NULL, &rep);
    CHECK(m);
    CHECK(tw_mesh_vertex_count(m) == header_count("bunny_closed_3485v.tet.node"));
    CHECK(tw_mesh_tet_count(m) == header_count("bunny_closed_3485v.tet.ele"));
    CHECK(tw_mesh_tet_count(m) == 27297);
    CHECK_NEAR(mesh_volume(m), 0.000753934, 1e-9);
    /* the boundary is exactly the 6966 triangles of the OFF surface */
    int *faces = NULL;
    CHECK(tw_mesh_boundary_faces(m, &faces) == 6966);
    free(faces);
    CHECK(rep.reoriented == 0 && rep.unused_vertices == 0);
    tw_mesh_destroy(m);
    return 0;
}

/* ---------------------------------------------------- small written files */

/* Two tets sharing the face (1,2,3): volumes 1/6 and 1/3. */
static const char *msh_v2 =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
    "$PhysicalNames\n1\n3 7 \"body # one\"\n$EndPhysicalNames\n"
    "$Nodes\n5\n"
    "1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n"
    "$EndNodes\n"
    "$Elements\n4\n"
    "1 15 2 0 1 1\n"
    "2 2 2 0 1 1 2 3\n"
    "3 4 2 7 1 1 2 3 4\n"
    "4 4 2 7 1 2 3 4 5\n"
    "$EndElements\n";

TW_TEST(load_msh_v2)
{
    char path[1024];
    write_file(path, sizeof path, "two.msh", msh_v2);
    tw_mesh *m = load_quiet(path, NULL);
    CHECK(m);
    CHECK(tw_mesh_vertex_count(m) == 5 && tw_mesh_tet_count(m) == 2);
    CHECK_NEAR(mesh_volume(m), 0.5, 1e-15);
    CHECK(tw_mesh_regions(m)[0] == 7 && tw_mesh_regions(m)[1] == 7);
    tw_mesh_destroy(m);
    return 0;
}

/* v4.1 with $Entities, non-contiguous node tags, a triangle block. */
static const char *msh_v4 =
    "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
    "$Entities\n0 0 1 1\n1 0 0 0 1 1 1 0 0\n5 0 0 0 1 1 1 0 0\n$EndEntities\n"
    "$Nodes\n2 5 10 90\n"
    "3 5 0 3\n10\n30\n20\n0 0 0\n0 1 0\n1 0 0\n"
    "3 5 0 2\n90\n40\n1 1 1\n0 0 1\n"
    "$EndNodes\n"
    "$Elements\n2 4 1 4\n"
    "2 1 2 2\n1 10 20 30\n2 20 30 40\n"
    "3 5 4 2\n3 10 20 30 40\n4 20 30 40 90\n"
    "$EndElements\n";

TW_TEST(load_msh_v4_noncontiguous_tags)
{
    char path[1024];
    write_file(path, sizeof path, "two_v4.msh", msh_v4);
    tw_mesh *m = load_quiet(path, NULL);
    CHECK(m);
    CHECK(tw_mesh_vertex_count(m) == 5 && tw_mesh_tet_count(m) == 2); /* triangles skipped */
    CHECK_NEAR(mesh_volume(m), 0.5, 1e-15);
    CHECK(tw_mesh_regions(m)[0] == 5 && tw_mesh_regions(m)[1] == 5);
    /* tag 30 is the third node read, at (0,1,0) */
    const double *X = tw_mesh_positions(m);
    int v = tw_mesh_tets(m)[4 + 1]; /* second tet's second node: tag 30 */
    CHECK(X[3 * v] == 0 && X[3 * v + 1] == 1 && X[3 * v + 2] == 0);
    tw_mesh_destroy(m);
    return 0;
}

static const char *medit_two =
    "MeshVersionFormatted 2\n"
    "# a comment\n"
    "Dimension\n3\n"
    "Vertices\n5\n0 0 0 1\n1 0 0 1\n0 1 0 1\n0 0 1 1\n1 1 1 1\n"
    "Triangles\n1\n1 2 3 4\n"
    "Tetrahedra 2\n1 2 3 4 3\n2 3 4 5 4\n"
    "Corners\n1\n1\n"
    "End\n";

TW_TEST(load_medit)
{
    char path[1024];
    write_file(path, sizeof path, "two.mesh", medit_two);
    tw_mesh_report rep;
    tw_mesh *m = load_quiet(path, &rep);
    CHECK(m);
    CHECK(tw_mesh_vertex_count(m) == 5 && tw_mesh_tet_count(m) == 2);
    CHECK_NEAR(mesh_volume(m), 0.5, 1e-15);
    CHECK(tw_mesh_regions(m)[0] == 3 && tw_mesh_regions(m)[1] == 4);
    CHECK(rep.first_index == 1);
    tw_mesh_destroy(m);
    return 0;
}

/* Writes stem.node and stem.ele; returns the stem. */
static const char *write_tetgen(char *stem, size_t size, const char *name, const char *node,
                                const char *ele)
{
    char buf[1024], file[300];
    snprintf(file, sizeof file, "%s.node", name);
    write_file(buf, sizeof buf, file, node);
    snprintf(file, sizeof file, "%s.ele", name);
    write_file(buf, sizeof buf, file, ele);
    snprintf(stem, size, "%s", tw_test_tmp_path(name));
    return stem;
}

TW_TEST(load_tetgen_one_based_with_comments)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "one_based",
                 "# nodes, 1-based\n5 3 1 1\n1 0 0 0 0.5 1\n2 1 0 0 0.5 1 # trailing comment\n"
                 "\n3 0 1 0 0.5 0\n# between\n4 0 0 1 0.5 0\n5 1 1 1 0.5 1\n",
                 "2 10 1\n1 1 2 3 4 9 9 9 9 9 9 -2\n2 2 3 4 5 9 9 9 9 9 9 6\n# Generated by hand\n");
    tw_mesh_report rep;
    tw_mesh *m = load_quiet(stem, &rep);
    CHECK(m);
    CHECK(rep.first_index == 1);
    CHECK(tw_mesh_vertex_count(m) == 5 && tw_mesh_tet_count(m) == 2);
    CHECK(tw_mesh_tets(m)[0] == 0 && tw_mesh_tets(m)[7] == 4);
    CHECK_NEAR(mesh_volume(m), 0.5, 1e-15);
    CHECK(tw_mesh_regions(m)[0] == -2 && tw_mesh_regions(m)[1] == 6);
    tw_mesh_destroy(m);
    return 0;
}

static const char *node_two = "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 1 1 1\n";

TW_TEST(load_inverted_reoriented)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "inverted", node_two, "2 4 0\n0 0 1 2 3\n1 1 3 2 4\n");
    tw_mesh_report rep;
    tw_mesh *m = load_quiet(stem, &rep);
    CHECK(m);
    CHECK(rep.reoriented == 1);
    CHECK(tw_mesh_det(m, 1) > 0);
    CHECK_NEAR(mesh_volume(m), 0.5, 1e-15);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(load_inverted_strict_rejected)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "inverted_strict", node_two, "2 4 0\n0 0 1 2 3\n1 1 3 2 4\n");
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.strict = 1;
    tw_mesh *m = tw_mesh_load(stem, &def, NULL);
    CHECK(failed_at(m, "inverted_strict.ele", 3));
    CHECK(strstr(tw_last_error(), "inverted"));
    return 0;
}

TW_TEST(load_unused_vertex_reported)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "unused", node_two, "1 4 0\n0 0 1 2 3\n");
    tw_mesh_report rep;
    tw_mesh *m = load_quiet(stem, &rep);
    CHECK(m);
    CHECK(rep.unused_vertices == 1 && m->unused[4] == 1);
    tw_mesh_destroy(m);
    return 0;
}

/* --------------------------------------------------------------- surfaces */

TW_TEST(surface_obj_quad_and_negative_indices)
{
    char path[1024];
    write_file(path, sizeof path, "quad.obj",
               "# square and a triangle\nmtllib none.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
               "vt 0 0\nvn 0 0 1\ng sq\nusemtl x\nf 1/1/1 2/1/1 3/1/1 4/1/1\n"
               "v 0 0 1\nf -5//1 -4//1 -1//1\n");
    tw_surface *s = tw_surface_load(path);
    CHECK(s);
    CHECK(s->vertex_count == 5);
    CHECK(s->triangle_count == 3); /* the quad fans into 2 */
    CHECK(s->triangles[0] == 0 && s->triangles[1] == 1 && s->triangles[2] == 2);
    CHECK(s->triangles[3] == 0 && s->triangles[4] == 2 && s->triangles[5] == 3);
    CHECK(s->triangles[6] == 0 && s->triangles[7] == 1 && s->triangles[8] == 4);
    tw_surface_destroy(s);
    return 0;
}

TW_TEST(surface_off_polygons)
{
    char path[1024];
    write_file(path, sizeof path, "quad.off",
               "OFF\n# comment\n5 2 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n0 0 1\n4 0 1 2 3\n3 0 1 4 255 0 0\n");
    tw_surface *s = tw_surface_load(path);
    CHECK(s);
    CHECK(s->vertex_count == 5 && s->triangle_count == 3);
    CHECK(s->triangles[6] == 0 && s->triangles[8] == 4);
    CHECK(s->positions[3 * 4 + 2] == 1.0);
    tw_surface_destroy(s);
    return 0;
}

TW_TEST(surface_shared_files)
{
    tw_surface *off = tw_surface_load(tw_test_mesh_path("bunny_closed_3485v.off"));
    tw_surface *cow = tw_surface_load(tw_test_mesh_path("cow_spot.obj"));      /* f v/vt */
    tw_surface *dog = tw_surface_load(tw_test_mesh_path("dog_shrec398.obj"));  /* f v//vn */
    CHECK(off && cow && dog);
    CHECK(off->vertex_count == 3485 && off->triangle_count == 6966);
    CHECK(cow->vertex_count == 2930 && cow->triangle_count == 5856);
    CHECK(dog->vertex_count == 1480 && dog->triangle_count == 2956);
    tw_surface_destroy(off);
    tw_surface_destroy(cow);
    tw_surface_destroy(dog);
    return 0;
}

TW_TEST(surface_bad_obj_index)
{
    char path[1024];
    write_file(path, sizeof path, "bad_index.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 7\n");
    tw_surface *s = tw_surface_load(path);
    CHECK(s == NULL);
    CHECK(strstr(tw_last_error(), "bad_index.obj:5:"));
    return 0;
}

/* -------------------------------------------------------------- bad input */

TW_TEST(bad_truncated_node)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "truncated", "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n",
                 "1 4 0\n0 0 1 2 3\n");
    CHECK(failed_at(load_quiet(stem, NULL), "truncated.node", 4));
    CHECK(strstr(tw_last_error(), "end of file"));
    return 0;
}

TW_TEST(bad_truncated_line)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "short_line", "4 3 0 0\n0 0 0 0\n1 1 0\n2 0 1 0\n3 0 0 1\n",
                 "1 4 0\n0 0 1 2 3\n");
    CHECK(failed_at(load_quiet(stem, NULL), "short_line.node", 3));
    CHECK(strstr(tw_last_error(), "end of line"));
    return 0;
}

TW_TEST(bad_non_numeric_field)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "non_numeric", "4 3 0 0\n0 0 0 0\n1 1 0 0\n\n2 0 abc 0\n3 0 0 1\n",
                 "1 4 0\n0 0 1 2 3\n");
    CHECK(failed_at(load_quiet(stem, NULL), "non_numeric.node", 5));
    CHECK(strstr(tw_last_error(), "'abc'"));
    return 0;
}

TW_TEST(bad_header_count)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "wrong_count", node_two, "1 4 0\n0 0 1 2 3\n1 1 2 3 4\n");
    CHECK(failed_at(load_quiet(stem, NULL), "wrong_count.ele", 3));
    return 0;
}

TW_TEST(bad_header_count_too_large)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "huge_count", "2000000000 3 0 0\n0 0 0 0\n", "1 4 0\n0 0 1 2 3\n");
    CHECK(failed_at(load_quiet(stem, NULL), "huge_count.node", 1));
    return 0;
}

TW_TEST(bad_negative_index)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "negative", node_two, "2 4 0\n0 0 1 2 3\n1 1 2 -3 4\n");
    CHECK(failed_at(load_quiet(stem, NULL), "negative.ele", 3));
    CHECK(strstr(tw_last_error(), "-3"));
    return 0;
}

TW_TEST(bad_out_of_range_index)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "out_of_range", node_two, "2 4 0\n0 0 1 2 3\n# c\n1 1 2 3 5\n");
    CHECK(failed_at(load_quiet(stem, NULL), "out_of_range.ele", 4));
    CHECK(strstr(tw_last_error(), "vertex 5"));
    return 0;
}

TW_TEST(bad_three_nodes_per_element)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "three_nodes", node_two, "1 3 0\n0 0 1 2\n");
    CHECK(failed_at(load_quiet(stem, NULL), "three_nodes.ele", 1));
    return 0;
}

TW_TEST(bad_element_with_three_indices)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "three_indices", node_two, "2 4 0\n0 0 1 2 3\n1 1 2 3\n");
    CHECK(failed_at(load_quiet(stem, NULL), "three_indices.ele", 3));
    return 0;
}

TW_TEST(bad_zero_volume)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "flat", "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 1 1 0\n",
                 "2 4 0\n0 0 1 2 3\n1 0 1 2 4\n");
    CHECK(failed_at(load_quiet(stem, NULL), "flat.ele", 3));
    CHECK(strstr(tw_last_error(), "element 1 has zero volume (vertices 0 1 2 4)"));
    return 0;
}

TW_TEST(bad_duplicate_element)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "duplicate", node_two, "3 4 0\n0 0 1 2 3\n1 1 2 3 4\n2 3 0 2 1\n");
    CHECK(failed_at(load_quiet(stem, NULL), "duplicate.ele", 4));
    CHECK(strstr(tw_last_error(), "duplicates element 0"));
    return 0;
}

TW_TEST(bad_missing_file)
{
    tw_mesh *m = load_quiet("/nonexistent/dir/missing_mesh.msh", NULL);
    CHECK(m == NULL);
    CHECK(strstr(tw_last_error(), "missing_mesh.msh"));
    CHECK(strstr(tw_last_error(), "No such file"));
    return 0;
}

TW_TEST(bad_missing_ele)
{
    char path[1024];
    write_file(path, sizeof path, "no_ele.node", node_two);
    CHECK(load_quiet(path, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "no_ele.ele"));
    return 0;
}

TW_TEST(bad_binary_msh)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", tw_test_tmp_path("binary.msh"));
    FILE *f = fopen(path, "wb");
    CHECK(f);
    const char head[] = "$MeshFormat\n2.2 1 8\n";
    fwrite(head, 1, sizeof head - 1, f);
    int one = 1;
    fwrite(&one, sizeof one, 1, f);
    const char rest[] = "\n$EndMeshFormat\n$Nodes\n1\n\0\0\0\x01\0\0\0\0\0\0\0\0\n$EndNodes\n";
    fwrite(rest, 1, sizeof rest - 1, f);
    fclose(f);
    CHECK(failed_at(load_quiet(path, NULL), "binary.msh", 2));
    CHECK(strstr(tw_last_error(), "binary msh not supported, re-save as ASCII"));
    return 0;
}

TW_TEST(bad_msh_unknown_node)
{
    char path[1024];
    write_file(path, sizeof path, "unknown_node.msh",
               "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n"
               "$EndNodes\n$Elements\n1\n1 4 2 0 1 1 2 3 8\n$EndElements\n");
    CHECK(failed_at(load_quiet(path, NULL), "unknown_node.msh", 13));
    return 0;
}

TW_TEST(bad_msh_missing_end)
{
    char path[1024];
    write_file(path, sizeof path, "no_end.msh",
               "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n");
    CHECK(failed_at(load_quiet(path, NULL), "no_end.msh", 8));
    return 0;
}

TW_TEST(bad_medit_truncated)
{
    char path[1024];
    write_file(path, sizeof path, "truncated.mesh",
               "MeshVersionFormatted 1\nDimension 3\nVertices\n5\n0 0 0 0\n1 0 0 0\n");
    CHECK(failed_at(load_quiet(path, NULL), "truncated.mesh", 6));
    return 0;
}

TW_TEST(bad_empty_file)
{
    char path[1024];
    write_file(path, sizeof path, "empty.mesh", "");
    CHECK(failed_at(load_quiet(path, NULL), "empty.mesh", 1));
    return 0;
}

/* ------------------------------------- values that once reached undefined
 * behaviour (out-of-range casts, signed overflow): each is rejected, or
 * read, before any arithmetic on it */

/* NULL, and the message contains `text` (besides file:line, checked apart). */
static int message_has(const char *text)
{
    if (!strstr(tw_last_error(), text)) {
        fprintf(stderr, "expected '%s' in the message: %s\n", text, tw_last_error());
        return 0;
    }
    return 1;
}

TW_TEST(bad_msh_version_out_of_range)
{
    char path[1024];
    write_file(path, sizeof path, "huge_version.msh", "$MeshFormat\n2147836480\n$EndMeshFormat\n");
    CHECK(failed_at(load_quiet(path, NULL), "huge_version.msh", 2));
    CHECK(message_has("msh version"));
    CHECK(message_has("2.14784e+09"));
    return 0;
}

/* Two tets on node tags at the top of the long long range: read as tags,
 * without forming tag + count. */
TW_TEST(load_msh_node_tags_near_llong_max)
{
    static const char *files[2] = {
        /* contiguous up to LLONG_MAX */
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n"
        "9223372036854775803 0 0 0\n9223372036854775804 1 0 0\n9223372036854775805 0 1 0\n"
        "9223372036854775806 0 0 1\n9223372036854775807 1 1 1\n$EndNodes\n"
        "$Elements\n2\n1 4 2 7 1 9223372036854775803 9223372036854775804 9223372036854775805 "
        "9223372036854775806\n2 4 2 7 1 9223372036854775804 9223372036854775805 "
        "9223372036854775806 9223372036854775807\n$EndElements\n",
        /* LLONG_MAX first, then small tags */
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n"
        "9223372036854775807 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 1 1 1\n$EndNodes\n"
        "$Elements\n2\n1 4 2 7 1 9223372036854775807 1 2 3\n2 4 2 7 1 1 2 3 4\n$EndElements\n"};
    for (int i = 0; i < 2; i++) {
        char path[1024], name[64];
        snprintf(name, sizeof name, "llong_max_tags_%d.msh", i);
        write_file(path, sizeof path, name, files[i]);
        tw_mesh *m = load_quiet(path, NULL);
        CHECK(m);
        CHECK(tw_mesh_vertex_count(m) == 5 && tw_mesh_tet_count(m) == 2);
        CHECK_NEAR(mesh_volume(m), 0.5, 1e-15);
        tw_mesh_destroy(m);
    }
    return 0;
}

TW_TEST(bad_msh_element_refers_to_llong_min)
{
    char path[1024];
    write_file(path, sizeof path, "llong_min_ref.msh",
               "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n"
               "$EndNodes\n$Elements\n1\n1 4 2 0 1 -9223372036854775808 2 3 4\n$EndElements\n");
    CHECK(failed_at(load_quiet(path, NULL), "llong_min_ref.msh", 13));
    CHECK(message_has("-9223372036854775808"));
    return 0;
}

TW_TEST(bad_medit_index_llong_min)
{
    char path[1024];
    write_file(path, sizeof path, "llong_min.mesh",
               "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n0 0 0 1\n1 0 0 1\n0 1 0 1\n0 0 1 1\n"
               "Tetrahedra\n1\n-9223372036854775808 2 3 4 1\nEnd\n");
    CHECK(failed_at(load_quiet(path, NULL), "llong_min.mesh", 11));
    CHECK(message_has("vertex index -9223372036854775808 is out of range"));
    return 0;
}

TW_TEST(bad_tetgen_one_based_index_llong_min)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "llong_min", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n",
                 "1 4 0\n1 1 2 -9223372036854775808 4\n");
    CHECK(failed_at(load_quiet(stem, NULL), "llong_min.ele", 2));
    CHECK(message_has("vertex index -9223372036854775808 is out of range"));
    return 0;
}

TW_TEST(bad_tetgen_element_index_llong_max)
{
    char stem[1024];
    write_tetgen(stem, sizeof stem, "ele_llong_max", node_two,
                 "2 4 0\n9223372036854775807 0 1 2 3\n9223372036854775808 1 2 3 4\n");
    CHECK(failed_at(load_quiet(stem, NULL), "ele_llong_max.ele", 2));
    CHECK(message_has("9223372036854775807"));
    return 0;
}

/* A closed tetrahedron with coordinates +-1e308: finite, but the extents
 * overflow; rejected naming the file, the vertex and the value. */
TW_TEST(bad_surface_coordinates_1e308)
{
    char path[1024];
    write_file(path, sizeof path, "huge.off",
               "OFF\n4 4 0\n-1e308 -1e308 -1e308\n1e308 -1e308 -1e308\n-1e308 1e308 -1e308\n"
               "-1e308 -1e308 1e308\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n");
    tw_surface *s = tw_mesher_load_surface(path);
    CHECK(s);
    tw_status st = tw_surface_validate(s, path, NULL);
    tw_surface_destroy(s);
    CHECK(st == TW_ERR_INVALID);
    CHECK(message_has("huge.off: vertex 0 (0-based) has x = -1e+308"));
    return 0;
}

TW_TEST(bad_stl_ascii_nan)
{
    char path[1024];
    write_file(path, sizeof path, "nan.stl",
               "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
               "vertex nan 1 0\nendloop\nendfacet\nendsolid t\n");
    CHECK(tw_surface_load_stl(path) == NULL);
    CHECK(message_has("nan.stl:6:"));
    CHECK(message_has("'nan'"));
    return 0;
}

TW_TEST(bad_stl_ascii_vertex_split_over_lines)
{
    char path[1024];
    write_file(path, sizeof path, "split.stl",
               "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0\n0\nvertex 1 0 0\n"
               "vertex 0 1 0\nendloop\nendfacet\nendsolid t\n");
    CHECK(tw_surface_load_stl(path) == NULL);
    CHECK(message_has("split.stl:4: expected 3 finite numbers after 'vertex', found end of line"));
    return 0;
}

TW_TEST(bad_stl_binary_infinity)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", tw_test_tmp_path("inf.stl"));
    unsigned char b[84 + 50];
    memset(b, 0, sizeof b);
    b[80] = 1;                         /* one triangle */
    float inf = INFINITY, one = 1;
    memcpy(b + 84 + 12 + 4 * 4, &inf, 4); /* second corner's y (little-endian host) */
    memcpy(b + 84 + 12 + 4 * 3, &one, 4);
    FILE *f = fopen(path, "wb");
    CHECK(f);
    fwrite(b, 1, sizeof b, f);
    fclose(f);
    CHECK(tw_surface_load_stl(path) == NULL);
    CHECK(message_has("inf.stl: triangle 0 (0-based, byte 112) has a non-finite coordinate (inf)"));
    return 0;
}

/* ---------------------------------------------- messages on non-mesh files */

/* Every byte of the message is printable ASCII (no raw file content). */
static int message_printable(void)
{
    for (const unsigned char *p = (const unsigned char *)tw_last_error(); *p; p++)
        if (*p < 32 || *p > 126) {
            fprintf(stderr, "non-printable byte %d in the message: %s\n", *p, tw_last_error());
            return 0;
        }
    return 1;
}

/* n bytes of fixed pseudo-random content (all 256 values, NULs included). */
static const char *write_noise(char *path, size_t size, const char *name, unsigned seed, int n)
{
    snprintf(path, size, "%s", tw_test_tmp_path(name));
    FILE *f = fopen(path, "wb");
    if (!f) return path;
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        fputc((int)(seed >> 16) & 255, f);
    }
    fclose(f);
    return path;
}

TW_TEST(bad_directory_named_node)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tw_test_tmp_path("folder.node"));
    mkdir(dir, 0755); /* may exist from an earlier run */
    tw_mesh *m = load_quiet(dir, NULL);
    CHECK(m == NULL);
    CHECK(message_has("folder.node: is a directory"));
    CHECK(!strstr(tw_last_error(), "out of memory"));
    return 0;
}

TW_TEST(bad_random_bytes_msh)
{
    char path[1024];
    write_noise(path, sizeof path, "noise.msh", 7, 4096);
    CHECK(load_quiet(path, NULL) == NULL);
    CHECK(message_has("noise.msh:"));
    CHECK(message_has("not a Gmsh file"));
    CHECK(!strstr(tw_last_error(), "binary"));
    CHECK(message_printable());
    return 0;
}

TW_TEST(bad_random_bytes_node_ele_mesh_off_stl)
{
    static const char *names[] = {"noise.node", "noise.mesh", "noise.off", "noise.obj", "noise.stl"};
    char path[1024], ele[1024];
    write_noise(ele, sizeof ele, "noise.ele", 3, 4096);
    for (int i = 0; i < 5; i++) {
        write_noise(path, sizeof path, names[i], 11u + (unsigned)i, 4096);
        if (i < 2) CHECK(load_quiet(path, NULL) == NULL);
        else CHECK(tw_mesher_load_surface(path) == NULL);
        CHECK(message_has(names[i]));
        CHECK(message_printable());
    }
    return 0;
}

/* Words quoted from the file (a section name, a keyword) are escaped too. */
TW_TEST(bad_control_bytes_in_section_names)
{
    char path[1024];
    write_file(path, sizeof path, "escape.msh",
               "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$\x01\x1b[31mRed\n");
    CHECK(failed_at(load_quiet(path, NULL), "escape.msh", 4));
    CHECK(message_has("'$End??[31mRed'"));
    CHECK(message_printable());
    write_file(path, sizeof path, "escape.mesh", "MeshVersionFormatted 1\n\x01\x02\x7f\xfe 3\n");
    CHECK(failed_at(load_quiet(path, NULL), "escape.mesh", 2));
    CHECK(message_has("'\?\?\?\?'"));
    CHECK(message_printable());
    return 0;
}

/* A device or a pipe that never ends is refused at the stream limit, with the
 * path in the message, instead of growing the buffer until memory runs out;
 * a regular file of the same size as the limit is read whole. */
TW_TEST(stream_without_end_refused_at_limit)
{
    size_t n = 12345;
    char *buf = tw_read_file_max("/dev/zero", &n, (size_t)1 << 20);
    CHECK(buf == NULL);
    CHECK(message_has("/dev/zero"));
    CHECK(message_has("not a regular file"));
    char path[1024];
    write_noise(path, sizeof path, "limit.bin", 5, 1 << 20);
    buf = tw_read_file_max(path, &n, (size_t)1 << 10);
    CHECK(buf != NULL);
    CHECK(n == (size_t)1 << 20);
    free(buf);
    return 0;
}
