// tw_decimate: a closed triangle surface decimated to a number of faces by
// OpenMesh's quadric edge collapse (Garland and Heckbert 1997; Debian:
// libopenmesh-dev), for the coarse levels of Debunne et al. 2001's
// multiresolution: TetGen keeps a surface's triangles, so a coarse level
// meshed from a fine surface is only as coarse as the surface; its surface
// is decimated first. A separate C++ tool, built where OpenMesh is found;
// the engine itself stays C. Collapses that would flip a face or change the
// topology are refused by OpenMesh, so a closed manifold stays one.
//
// usage: tw_decimate IN.obj|off OUT.obj|off FACES [MAX_ERROR]
//   MAX_ERROR: the largest quadric error a collapse may cost (the surface's
//   units squared); default none
#include <OpenMesh/Core/IO/MeshIO.hh>
#include <OpenMesh/Core/Mesh/TriMesh_ArrayKernelT.hh>
#include <OpenMesh/Tools/Decimater/DecimaterT.hh>
#include <OpenMesh/Tools/Decimater/ModNormalFlippingT.hh>
#include <OpenMesh/Tools/Decimater/ModQuadricT.hh>

#include <cstdio>
#include <cstdlib>

typedef OpenMesh::TriMesh_ArrayKernelT<> Mesh;

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s IN OUT FACES [MAX_ERROR]\n", argv[0]);
        return 2;
    }
    const long faces = std::atol(argv[3]);
    if (faces < 4) {
        std::fprintf(stderr, "%s: FACES %s: at least 4\n", argv[0], argv[3]);
        return 2;
    }
    Mesh mesh;
    if (!OpenMesh::IO::read_mesh(mesh, argv[1])) {
        std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
        return 1;
    }
    const size_t f0 = mesh.n_faces(), v0 = mesh.n_vertices();
    OpenMesh::Decimater::DecimaterT<Mesh> dec(mesh);
    OpenMesh::Decimater::ModQuadricT<Mesh>::Handle quadric;
    OpenMesh::Decimater::ModNormalFlippingT<Mesh>::Handle flipping;
    dec.add(quadric);
    dec.add(flipping);
    if (argc > 4)
        dec.module(quadric).set_max_err(std::atof(argv[4]));
    else
        dec.module(quadric).unset_max_err();
    if (!dec.initialize()) {
        std::fprintf(stderr, "%s: the decimater did not initialise\n", argv[0]);
        return 1;
    }
    const size_t collapses = dec.decimate_to_faces(0, (size_t)faces);
    mesh.garbage_collection();
    if (!OpenMesh::IO::write_mesh(mesh, argv[2])) {
        std::fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[2]);
        return 1;
    }
    std::printf("%s: %zu vertices, %zu faces -> %s: %zu vertices, %zu faces (%zu collapses, OpenMesh quadric)\n",
                argv[1], v0, f0, argv[2], (size_t)mesh.n_vertices(), (size_t)mesh.n_faces(), collapses);
    return 0;
}
