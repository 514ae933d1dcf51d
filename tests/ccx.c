/* CalculiX reference solves for tests: see ccx.h.
 *
 * The deck (jobname.inp):
 *   *NODE,NSET=Nall                 1-based ids; every number in the most
 *                                   digits that fit ccx's 20-character fields
 *   *ELEMENT,TYPE=C3D4,ELSET=Eall   a b c d (+1). C3D4's node order is a
 *                                   positively oriented tet: det[b-a,c-a,d-a]
 *                                   > 0 (ccx stops with "nonpositive jacobian"
 *                                   otherwise), the order tw_mesh keeps.
 *   *NSET,NSET=Nfix                 the fixed vertices
 *   *MATERIAL, *ELASTIC E,nu, *DENSITY rho, *SOLID SECTION
 *   *BOUNDARY Nfix,1,3
 *   *STEP[,NLGEOM,INC=n] / *STATIC,SOLVER=SPOOLES (a direct solver)
 *   *DLOAD Eall,GRAV,|g|,gx/|g|,gy/|g|,gz/|g|
 *   *NODE PRINT,NSET=Nall / U       displacements into jobname.dat
 *   *END STEP
 * For NLGEOM the increment is fixed at 1/increments and the Newton
 * convergence criteria are tightened with *CONTROLS so the result is the
 * converged equilibrium, not ccx's default 0.5 % residual.
 *
 * The result is the last "displacements (vx,vy,vz) for set NALL" block of
 * jobname.dat: lines `node ux uy uz`. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "ccx.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double tw_ccx_seconds;

double tw_ccx_last_seconds(void) { return tw_ccx_seconds; }

int tw_ccx_available(void)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char dir[4096], exe[4200];
    while (*path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, path, n);
            dir[n] = '\0';
            snprintf(exe, sizeof exe, "%s/ccx", dir);
            if (access(exe, X_OK) == 0) return 1;
        }
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

/* ccx reads a number from at most 20 characters (a longer one is cut):
 * the most digits of v, up to round-trip, that fit. */
static const char *tw_ccx_num(double v, char buf[32])
{
    for (int prec = 17; prec > 1; prec--) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strlen(buf) <= 20) break;
    }
    return buf;
}

/* A Fortran E-format number; also reads "1.234567-100" (exponent without E). */
static int tw_ccx_number(const char **s, double *v)
{
    char *end;
    *v = strtod(*s, &end);
    if (end == *s) return 0;
    if ((*end == '-' || *end == '+') && end[1] >= '0' && end[1] <= '9') {
        char *e2;
        long ex = strtol(end, &e2, 10);
        *v *= pow(10.0, (double)ex);
        end = e2;
    }
    *s = end;
    return 1;
}

/* Reads the last displacement block of a .dat file into u (3*nv). */
static int tw_ccx_read_dat(const char *path, int nv, double *u)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s:%d: cannot open %s: %s (ccx produced no result; see the .log "
                        "beside it)\n", __FILE__, __LINE__, path, strerror(errno));
        return -1;
    }
    char line[512];
    long line_no = 0, block_line = 0;
    int blocks = 0, in_block = 0, count = 0, ok = 1;
    int *seen = calloc((size_t)nv, sizeof *seen);
    if (!seen) {
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        line_no++;
        if (strstr(line, "displacements (vx,vy,vz) for set NALL")) {
            blocks++;
            in_block = 1;
            block_line = line_no;
            count = 0;
            memset(seen, 0, (size_t)nv * sizeof *seen);
            continue;
        }
        if (!in_block) continue;
        const char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '\n' || *s == '\r' || *s == '\0') {
            if (count > 0) in_block = 0; /* the blank line after the block */
            continue;
        }
        char *end;
        long node = strtol(s, &end, 10);
        if (end == s) {
            in_block = 0;
            continue;
        }
        s = end;
        double d[3];
        if (!tw_ccx_number(&s, &d[0]) || !tw_ccx_number(&s, &d[1]) ||
            !tw_ccx_number(&s, &d[2]) || node < 1 || node > nv) {
            fprintf(stderr, "%s:%ld: bad displacement line: %s", path, line_no, line);
            ok = 0;
            break;
        }
        for (int k = 0; k < 3; k++) u[3 * (node - 1) + k] = d[k];
        if (!seen[node - 1]) count++;
        seen[node - 1] = 1;
    }
    fclose(f);
    free(seen);
    if (!ok) return -1;
    if (blocks == 0) {
        fprintf(stderr, "%s: no \"displacements ... for set NALL\" block (ccx failed? see "
                        "the .log beside it)\n", path);
        return -1;
    }
    if (count != nv) {
        fprintf(stderr, "%s:%ld: the last displacement block has %d of %d nodes\n", path,
                block_line, count, nv);
        return -1;
    }
    return 0;
}

int tw_ccx_static_arrays(const double *X, int nv, const int *tets, int nt, double E, double nu,
                         double rho, const double g[3], const int *fixed, int nlgeom,
                         int increments, const char *workdir, const char *jobname,
                         double *u_out)
{
    char inp[4096], dat[4096], cmd[8192];
    if (mkdir(workdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s:%d: cannot create %s: %s\n", __FILE__, __LINE__, workdir,
                strerror(errno));
        return -1;
    }
    snprintf(inp, sizeof inp, "%s/%s.inp", workdir, jobname);
    snprintf(dat, sizeof dat, "%s/%s.dat", workdir, jobname);
    remove(dat); /* never read a stale result */

    FILE *f = fopen(inp, "w");
    if (!f) {
        fprintf(stderr, "%s:%d: cannot write %s: %s\n", __FILE__, __LINE__, inp,
                strerror(errno));
        return -1;
    }
    fprintf(f, "** tetwarp reference: %d nodes, %d C3D4 elements, %s\n", nv, nt,
            nlgeom ? "NLGEOM" : "linear");
    fprintf(f, "*NODE,NSET=Nall\n");
    char b0[32], b1[32], b2[32], b3[32];
    for (int i = 0; i < nv; i++)
        fprintf(f, "%d,%s,%s,%s\n", i + 1, tw_ccx_num(X[3 * i], b0),
                tw_ccx_num(X[3 * i + 1], b1), tw_ccx_num(X[3 * i + 2], b2));
    fprintf(f, "*ELEMENT,TYPE=C3D4,ELSET=Eall\n");
    for (int e = 0; e < nt; e++)
        fprintf(f, "%d,%d,%d,%d,%d\n", e + 1, tets[4 * e] + 1, tets[4 * e + 1] + 1,
                tets[4 * e + 2] + 1, tets[4 * e + 3] + 1);
    int nfix = 0;
    fprintf(f, "*NSET,NSET=Nfix\n");
    for (int i = 0; i < nv; i++) {
        if (!fixed[i]) continue;
        fprintf(f, "%d,%s", i + 1, (++nfix % 8 == 0) ? "\n" : "");
    }
    if (nfix % 8 != 0) fprintf(f, "\n");
    fprintf(f, "*MATERIAL,NAME=M1\n*ELASTIC\n%s,%s\n*DENSITY\n%s\n", tw_ccx_num(E, b0),
            tw_ccx_num(nu, b1), tw_ccx_num(rho, b2));
    fprintf(f, "*SOLID SECTION,ELSET=Eall,MATERIAL=M1\n");
    fprintf(f, "*BOUNDARY\nNfix,1,3\n");
    if (increments < 1) increments = 1;
    if (nlgeom) {
        double dt = 1.0 / increments;
        fprintf(f, "*STEP,NLGEOM,INC=%d\n", increments * 100 + 1000);
        fprintf(f, "*STATIC,SOLVER=SPOOLES\n%s,1.,%s,%s\n", tw_ccx_num(dt, b0),
                tw_ccx_num(dt * 1e-4, b1), tw_ccx_num(dt, b2));
        /* R_alpha^n, C_alpha^n (residual and correction ratios; defaults
         * 0.005, 0.01) tightened to a converged equilibrium */
        fprintf(f, "*CONTROLS,PARAMETERS=FIELD\n1e-9,1e-7\n");
        /* more iterations before ccx judges convergence slow */
        fprintf(f, "*CONTROLS,PARAMETERS=TIME INCREMENTATION\n8,10,9,200,10,4,,5\n");
    } else {
        fprintf(f, "*STEP\n*STATIC,SOLVER=SPOOLES\n");
    }
    double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    if (gn > 0)
        fprintf(f, "*DLOAD\nEall,GRAV,%s,%s,%s,%s\n", tw_ccx_num(gn, b0),
                tw_ccx_num(g[0] / gn, b1), tw_ccx_num(g[1] / gn, b2), tw_ccx_num(g[2] / gn, b3));
    fprintf(f, "*NODE PRINT,NSET=Nall\nU\n*END STEP\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "%s:%d: error writing %s\n", __FILE__, __LINE__, inp);
        return -1;
    }

    snprintf(cmd, sizeof cmd, "cd '%s' && OMP_NUM_THREADS=2 ccx -i '%s' > '%s.log' 2>&1",
             workdir, jobname, jobname);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = system(cmd);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tw_ccx_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rc != 0) {
        fprintf(stderr, "%s:%d: `%s` failed (status %d); see %s/%s.log\n", __FILE__, __LINE__,
                cmd, rc, workdir, jobname);
        return -1;
    }
    /* ccx may exit 0 after an *ERROR: the log says so */
    char log[4096], line[512];
    snprintf(log, sizeof log, "%s/%s.log", workdir, jobname);
    FILE *lf = fopen(log, "r");
    if (lf) {
        int bad = 0;
        while (fgets(line, sizeof line, lf)) {
            if (strstr(line, "*ERROR")) {
                fprintf(stderr, "%s: %s", log, line);
                bad = 1;
            }
        }
        fclose(lf);
        if (bad) return -1;
    }
    return tw_ccx_read_dat(dat, nv, u_out);
}

int tw_ccx_static(const tw_mesh *m, double E, double nu, double rho, const double g[3],
                  const int *fixed, int nlgeom, int increments, const char *workdir,
                  const char *jobname, double *u_out)
{
    return tw_ccx_static_arrays(tw_mesh_positions(m), tw_mesh_vertex_count(m), tw_mesh_tets(m),
                                tw_mesh_tet_count(m), E, nu, rho, g, fixed, nlgeom, increments,
                                workdir, jobname, u_out);
}
