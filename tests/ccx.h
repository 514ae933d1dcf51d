/* CalculiX (ccx) as a reference solver for tests: write a deck for a tet mesh
 * (C3D4 elements, *ELASTIC + *DENSITY, fixed nodes, gravity as a *DLOAD GRAV
 * dead load), run `ccx -i job` in a work folder and read the nodal
 * displacements back from job.dat.
 *
 * The helper code lives in ccx.c; a test includes it (`#include "ccx.c"`)
 * because each test executable is built from its own file and tw_test.c only.
 *
 * Precision: ccx prints displacements in the .dat file with 7 significant
 * digits (Fortran E13.6), so a comparison against it cannot resolve a
 * relative difference below about 5e-7 of the largest value. */
#ifndef TW_CCX_H
#define TW_CCX_H
#include "tetwarp.h"

/* 1 when an executable `ccx` is on PATH. */
int tw_ccx_available(void);

/* Static solve of the mesh under gravity g (m/s^2) with E (Pa), nu,
 * rho (kg/m^3); fixed[i] = 1 clamps all three dofs of vertex i.
 * nlgeom = 0: linear elasticity; nlgeom = 1: geometrically non-linear
 * (CalculiX then treats *ELASTIC as St. Venant-Kirchhoff), the load applied
 * over `increments` equal increments at most (ccx may cut them).
 * Writes workdir/jobname.inp, runs ccx there (log in jobname.log) and fills
 * u_out (3 per vertex, m, mesh order). Returns 0 on success, else prints why
 * on stderr and returns -1. */
int tw_ccx_static(const tw_mesh *m, double E, double nu, double rho, const double g[3],
                  const int *fixed, int nlgeom, int increments, const char *workdir,
                  const char *jobname, double *u_out);

/* The same from raw arrays (X: 3 per vertex; tets: 4 per element, 0-based,
 * positively oriented). */
int tw_ccx_static_arrays(const double *X, int nv, const int *tets, int nt, double E, double nu,
                         double rho, const double g[3], const int *fixed, int nlgeom,
                         int increments, const char *workdir, const char *jobname,
                         double *u_out);

/* Wall-clock seconds of the last ccx run (the solver process only). */
double tw_ccx_last_seconds(void);
#endif
