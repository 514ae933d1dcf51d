/* The tetra tree's offline part: the nested levels, the finest level's
 * material, and the bottom-up estimation of every coarser tet's elasticity
 * matrix and valid ranges (Imai et al. 2013, sec. 4.2-4.3).
 *
 * Estimation of a parent tet P, for each strain basis m and each sampled
 * alpha (both signs of TW_TREE_SAMPLES magnitudes):
 * - P's finest descendants form a sub-mesh of P. Its vertices on P's
 *   boundary (P's corners, and every vertex on P's edges and faces) follow
 *   P's linear field u = alpha E^(m) X; the inner vertices start there and
 *   relax. The paper fixes only the vertices P shares with its children and
 *   frees the rest; on one tet's sub-mesh that leaves the edge and face
 *   vertices free, whose condensed response is softer than any material (a
 *   homogeneous parent would not get its own C back), so the whole boundary
 *   follows the parent, as in numerical homogenisation's kinematic boundary
 *   condition. The sub-mesh is the finest one, not the next level with its
 *   own estimates: one level down has no inner vertex at all.
 * - The relaxation is St. Venant-Kirchhoff (Green strain, the isotropic
 *   stress of the finest tets' E and nu), the model of O'Brien and Hodgins
 *   (1999) that the paper simulates with, solved by Newton with a dense
 *   Cholesky factorisation on the inner vertices (a few dozen at most). With
 *   a linear model sigma would be exactly linear in alpha and every range
 *   unbounded; the Green strain's quadratic term is what bends the curve of
 *   the paper's fig. 3 and bounds the valid range.
 * - sigma is the volume average of the finest tets' second Piola-Kirchhoff
 *   stress (the paper: "calculate the stress vector in level n - 1 from the
 *   stress vectors in level n").
 * Fit: the slope C_jm of each stress component through the origin, by least
 * squares on the odd part (sigma(a) - sigma(-a)) / 2 of the samples that
 * satisfy eq. 4 or 5 against the current slope (the outliers are ignored),
 * starting from the smallest pair and repeated until the inliers settle. The
 * odd part drops the quadratic term, so a homogeneous parent gets its C to
 * rounding. The valid range of basis m runs to the largest sampled
 * magnitude (per sign) up to which every sample satisfies eq. 4 or 5 for
 * all six components. Eq. 5's absolute threshold is scaled by the tet's
 * largest diagonal stiffness, so T2 is dimensionless like T1. C is
 * symmetrised at the end (the fit leaves it symmetric to the relaxation's
 * nonlinearity; the system matrix must be symmetric for CG). */
#include "tetra_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "fem.h"
#include "mesh.h"

static const double sample_alpha[TW_TREE_SAMPLES] = {1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3,
                                                    1e-2, 2e-2, 5e-2, 0.1,  0.2,  0.3};

tw_tetra_tree_def tw_default_tetra_tree_def(void)
{
    tw_tetra_tree_def d;
    memset(&d, 0, sizeof d);
    d.levels = 3;
    d.t1 = 1e-2;
    d.t2 = 1e-4;
    d.youngs_modulus = 1e6;
    d.poisson_ratio = 0.3;
    d.density = 1000;
    return d;
}

void tw_isotropic_c(double E, double nu, double C[36])
{
    const double lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    memset(C, 0, 36 * sizeof *C);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            C[6 * i + j] = lam;
        C[6 * i + i] = lam + 2 * mu;
        C[6 * (3 + i) + 3 + i] = mu;
    }
}

/* The symmetric strain tensor of basis m (engineering shears: E_ij = 1/2). */
static void basis_tensor(int m, double H[9])
{
    memset(H, 0, 9 * sizeof *H);
    static const int pair[3][2] = {{1, 2}, {0, 2}, {0, 1}};
    if (m < 3)
        H[4 * m] = 1;
    else {
        const int i = pair[m - 3][0], j = pair[m - 3][1];
        H[3 * i + j] = H[3 * j + i] = 0.5;
    }
}

/* A parent's finest sub-mesh. */
typedef struct sub_mesh {
    int n, nt, nint;
    int *gv;       /* n: global (finest) vertex of each local one */
    int *dof;      /* n: inner vertex index, -1 on the boundary */
    double *X;     /* 3n rest positions */
    int *tets;     /* 4 nt local */
    double *g;     /* 12 nt rest gradients */
    double *V, *lam, *mu; /* nt */
    double vtot;
    /* Newton scratch */
    double *x, *K, *r; /* 3n, (3 nint)^2, 3 nint */
} sub_mesh;

static void sub_free(sub_mesh *s)
{
    free(s->gv);
    free(s->dof);
    free(s->X);
    free(s->tets);
    free(s->g);
    free(s->V);
    free(s->lam);
    free(s->mu);
    free(s->x);
    free(s->K);
    free(s->r);
    memset(s, 0, sizeof *s);
}

/* Builds the sub-mesh of tet e of level l; map is a scratch of the finest
 * level's vertex count, all -1 on entry and on return. */
static tw_status sub_build(sub_mesh *s, const tw_hierarchy *h, int l, int e, const double *E,
                           const double *nu, int *map)
{
    memset(s, 0, sizeof *s);
    const tw_mesh *f = h->level[h->n_levels - 1], *c = h->level[l];
    int d = 1;
    for (int k = l + 1; k < h->n_levels; k++)
        d *= 8;
    s->nt = d;
    s->gv = tw_malloc(4 * (size_t)d * sizeof *s->gv, "sub-mesh vertices");
    s->tets = tw_malloc(4 * (size_t)d * sizeof *s->tets, "sub-mesh tets");
    s->g = tw_malloc(12 * (size_t)d * sizeof *s->g, "sub-mesh gradients");
    s->V = tw_malloc((size_t)d * sizeof *s->V, "sub-mesh volumes");
    s->lam = tw_malloc((size_t)d * sizeof *s->lam, "sub-mesh lambda");
    s->mu = tw_malloc((size_t)d * sizeof *s->mu, "sub-mesh mu");
    if (!s->gv || !s->tets || !s->g || !s->V || !s->lam || !s->mu) {
        sub_free(s);
        return TW_ERR_NOMEM;
    }
    for (int k = 0; k < d; k++) {
        const int fe = e * d + k;
        for (int q = 0; q < 4; q++) {
            const int v = f->tets[4 * (size_t)fe + q];
            if (map[v] < 0) {
                map[v] = s->n;
                s->gv[s->n++] = v;
            }
            s->tets[4 * k + q] = map[v];
        }
        double g[4][3];
        const double det = tw_tet_gradients(f->X, f->tets + 4 * (size_t)fe, g);
        memcpy(s->g + 12 * k, g, sizeof g);
        s->V[k] = det / 6;
        s->vtot += s->V[k];
        const double En = E[fe], n = nu[fe];
        s->lam[k] = En * n / ((1 + n) * (1 - 2 * n));
        s->mu[k] = En / (2 * (1 + n));
    }
    for (int i = 0; i < s->n; i++)
        map[s->gv[i]] = -1;
    s->dof = tw_malloc((size_t)s->n * sizeof *s->dof, "sub-mesh dofs");
    s->X = tw_malloc(3 * (size_t)s->n * sizeof *s->X, "sub-mesh rest");
    s->x = tw_malloc(3 * (size_t)s->n * sizeof *s->x, "sub-mesh positions");
    if (!s->dof || !s->X || !s->x) {
        sub_free(s);
        return TW_ERR_NOMEM;
    }
    /* a vertex is inner when all four barycentric coordinates in the parent
     * are clearly positive */
    const int *pt = c->tets + 4 * (size_t)e;
    const double *p0 = c->X + 3 * (size_t)pt[0], *p1 = c->X + 3 * (size_t)pt[1], *p2 = c->X + 3 * (size_t)pt[2],
                 *p3 = c->X + 3 * (size_t)pt[3];
    const double det = tw_tet_det(p0, p1, p2, p3);
    /* positions relative to the parent's centroid: the strain does not see a
     * translation, and F = sum x_p g_p^T loses less to cancellation */
    double cen[3];
    for (int d = 0; d < 3; d++)
        cen[d] = 0.25 * (p0[d] + p1[d] + p2[d] + p3[d]);
    for (int i = 0; i < s->n; i++) {
        const double *x = f->X + 3 * (size_t)s->gv[i];
        for (int d = 0; d < 3; d++)
            s->X[3 * i + d] = x[d] - cen[d];
        const double lam[4] = {tw_tet_det(x, p1, p2, p3) / det, tw_tet_det(p0, x, p2, p3) / det,
                               tw_tet_det(p0, p1, x, p3) / det, tw_tet_det(p0, p1, p2, x) / det};
        int inner = 1;
        for (int k = 0; k < 4; k++)
            if (!(lam[k] > 1e-9))
                inner = 0;
        s->dof[i] = inner ? s->nint++ : -1;
    }
    const size_t nd = 3 * (size_t)s->nint;
    if (nd) {
        s->K = tw_malloc(nd * nd * sizeof *s->K, "sub-mesh tangent");
        s->r = tw_malloc(nd * sizeof *s->r, "sub-mesh residual");
        if (!s->K || !s->r) {
            sub_free(s);
            return TW_ERR_NOMEM;
        }
    }
    return TW_OK;
}

/* F = sum_p x_p g_p^T of local tet k at s->x. */
static void deformation(const sub_mesh *s, int k, double F[9])
{
    memset(F, 0, 9 * sizeof *F);
    for (int p = 0; p < 4; p++) {
        const double *x = s->x + 3 * s->tets[4 * k + p], *g = s->g + 12 * k + 3 * p;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                F[3 * i + j] += x[i] * g[j];
    }
}

/* StVK second Piola-Kirchhoff stress S of F (lam, mu). */
static void stvk_stress(const double F[9], double lam, double mu, double S[9])
{
    double Eg[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++)
                s += F[3 * k + i] * F[3 * k + j];
            Eg[3 * i + j] = 0.5 * (s - (i == j));
        }
    const double tr = Eg[0] + Eg[4] + Eg[8];
    for (int i = 0; i < 9; i++)
        S[i] = 2 * mu * Eg[i];
    S[0] += lam * tr;
    S[4] += lam * tr;
    S[8] += lam * tr;
}

/* In-place Cholesky of the n x n SPD matrix A (lower triangle); 0 when A is
 * not positive definite. */
static int cholesky(double *A, int n)
{
    for (int j = 0; j < n; j++) {
        double d = A[(size_t)j * n + j];
        for (int k = 0; k < j; k++)
            d -= A[(size_t)j * n + k] * A[(size_t)j * n + k];
        if (!(d > 0))
            return 0;
        d = sqrt(d);
        A[(size_t)j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = A[(size_t)i * n + j];
            for (int k = 0; k < j; k++)
                s -= A[(size_t)i * n + k] * A[(size_t)j * n + k];
            A[(size_t)i * n + j] = s / d;
        }
    }
    return 1;
}

static void cholesky_solve(const double *L, int n, double *b)
{
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++)
            s -= L[(size_t)i * n + k] * b[k];
        b[i] = s / L[(size_t)i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++)
            s -= L[(size_t)k * n + i] * b[k];
        b[i] = s / L[(size_t)i * n + i];
    }
}

/* The inner vertices' force (into s->r, the force itself) and, when K is
 * wanted, the tangent stiffness -df/dx (into s->K). */
static void forces(sub_mesh *s, int tangent)
{
    const int nd = 3 * s->nint;
    memset(s->r, 0, (size_t)nd * sizeof *s->r);
    if (tangent)
        memset(s->K, 0, (size_t)nd * nd * sizeof *s->K);
    for (int k = 0; k < s->nt; k++) {
        const int *t = s->tets + 4 * k;
        if (s->dof[t[0]] < 0 && s->dof[t[1]] < 0 && s->dof[t[2]] < 0 && s->dof[t[3]] < 0)
            continue;
        double F[9], S[9], P[9];
        deformation(s, k, F);
        stvk_stress(F, s->lam[k], s->mu[k], S);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                P[3 * i + j] = F[3 * i] * S[j] + F[3 * i + 1] * S[3 + j] + F[3 * i + 2] * S[6 + j];
        const double V = s->V[k], lam = s->lam[k], mu = s->mu[k];
        const double *g = s->g + 12 * k;
        double Fg[4][3];
        for (int p = 0; p < 4; p++)
            for (int i = 0; i < 3; i++)
                Fg[p][i] = F[3 * i] * g[3 * p] + F[3 * i + 1] * g[3 * p + 1] + F[3 * i + 2] * g[3 * p + 2];
        for (int p = 0; p < 4; p++) {
            const int a = s->dof[t[p]];
            if (a < 0)
                continue;
            for (int i = 0; i < 3; i++)
                s->r[3 * a + i] -= V * (P[3 * i] * g[3 * p] + P[3 * i + 1] * g[3 * p + 1] + P[3 * i + 2] * g[3 * p + 2]);
            if (!tangent)
                continue;
            for (int q = 0; q < 4; q++) {
                const int b = s->dof[t[q]];
                if (b < 0)
                    continue;
                const double *gp = g + 3 * p, *gq = g + 3 * q;
                double gSg = 0, gg = 0;
                for (int i = 0; i < 3; i++) {
                    gg += gp[i] * gq[i];
                    for (int j = 0; j < 3; j++)
                        gSg += gq[i] * S[3 * i + j] * gp[j];
                }
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        double FFt = 0;
                        for (int c = 0; c < 3; c++)
                            FFt += F[3 * i + c] * F[3 * j + c];
                        const double kij = V * ((i == j) * gSg + lam * Fg[p][i] * Fg[q][j] + mu * gg * FFt +
                                                mu * Fg[q][i] * Fg[p][j]);
                        s->K[(size_t)(3 * a + i) * nd + 3 * b + j] += kij;
                    }
            }
        }
    }
}

/* One sample: the boundary on alpha H X, the inner vertices relaxed, the
 * averaged stress into sigma (Voigt). */
static tw_status sample(sub_mesh *s, int m, double alpha, double sigma[6])
{
    double H[9];
    basis_tensor(m, H);
    for (int i = 0; i < s->n; i++)
        for (int d = 0; d < 3; d++) {
            const double *X = s->X + 3 * i;
            s->x[3 * i + d] = X[d] + alpha * (H[3 * d] * X[0] + H[3 * d + 1] * X[1] + H[3 * d + 2] * X[2]);
        }
    const int nd = 3 * s->nint;
    if (nd) {
        double r0 = -1;
        int converged = 0;
        for (int it = 0; it < 30 && !converged; it++) {
            forces(s, 1);
            double rn = 0;
            for (int i = 0; i < nd; i++)
                rn += s->r[i] * s->r[i];
            rn = sqrt(rn);
            if (r0 < 0) {
                /* the scale of a force here: the largest mu times a face area times alpha */
                double mu_max = 0;
                for (int k = 0; k < s->nt; k++)
                    if (s->mu[k] > mu_max)
                        mu_max = s->mu[k];
                /* the tolerance: relative to the sample's force, with a floor at
                 * the rounding of a unit strain's (the Green strain's I cancels) */
                const double unit = mu_max * pow(s->vtot / s->nt, 2.0 / 3.0);
                r0 = 1e-11 * unit * fabs(alpha) + 1e-13 * unit;
            }
            if (!(rn == rn))
                return TW_ERR_DIVERGED;
            if (rn <= r0) {
                converged = 1;
                break;
            }
            if (!cholesky(s->K, nd))
                return TW_ERR_DIVERGED;
            cholesky_solve(s->K, nd, s->r);
            for (int i = 0; i < s->n; i++) {
                const int a = s->dof[i];
                if (a >= 0)
                    for (int d = 0; d < 3; d++)
                        s->x[3 * i + d] += s->r[3 * a + d];
            }
        }
        if (!converged)
            return TW_ERR_DIVERGED;
    }
    double avg[9] = {0};
    for (int k = 0; k < s->nt; k++) {
        double F[9], S[9];
        deformation(s, k, F);
        stvk_stress(F, s->lam[k], s->mu[k], S);
        for (int i = 0; i < 9; i++)
            avg[i] += s->V[k] * S[i];
    }
    static const int voigt[6][2] = {{0, 0}, {1, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
    for (int j = 0; j < 6; j++) {
        const double v = avg[3 * voigt[j][0] + voigt[j][1]] / s->vtot;
        if (!isfinite(v))
            return TW_ERR_DIVERGED;
        sigma[j] = v;
    }
    return TW_OK;
}

tw_status tw_tetra_tree_response(const tw_hierarchy *h, int l, int e, const double *E, const double *nu,
                                 int m, double alpha, double sigma[6])
{
    if (!h || l < 0 || l >= h->n_levels || e < 0 || e >= h->level[l]->nt || m < 0 || m > 5)
        return tw_fail(TW_ERR_INVALID, "tw_tetra_tree_response: no tet %d of level %d, basis %d", e, l, m);
    const tw_mesh *f = h->level[h->n_levels - 1];
    int *map = tw_malloc((size_t)f->nv * sizeof *map, "vertex map");
    if (!map)
        return TW_ERR_NOMEM;
    for (int i = 0; i < f->nv; i++)
        map[i] = -1;
    sub_mesh s;
    tw_status st = sub_build(&s, h, l, e, E, nu, map);
    free(map);
    if (st != TW_OK)
        return st;
    st = sample(&s, m, alpha, sigma);
    sub_free(&s);
    if (st != TW_OK)
        return tw_fail(st, "tw_tetra_tree_response: tet %d of level %d, basis %d, alpha %g: the relaxation "
                           "did not converge", e, l, m, alpha);
    return TW_OK;
}

/* eq. 4 or eq. 5 for one stress component */
static int within(double alpha, double c, double s, double t1, double t2_abs)
{
    const double dev = fabs(alpha * c - s);
    return dev < t1 * fabs(alpha * c) || dev < t2_abs;
}

/* The estimation of one parent from its sub-mesh; returns failed samples. */
static int estimate(sub_mesh *s, double t1, double t2, double C[36], double amin[6], double amax[6])
{
    enum { K = TW_TREE_SAMPLES };
    double sp[6][K][6], sm[6][K][6]; /* [basis][sample][component] at +a and -a */
    int okp[6][K], okm[6][K];
    int failed = 0;
    for (int m = 0; m < 6; m++)
        for (int k = 0; k < K; k++) {
            okp[m][k] = sample(s, m, sample_alpha[k], sp[m][k]) == TW_OK;
            okm[m][k] = sample(s, m, -sample_alpha[k], sm[m][k]) == TW_OK;
            failed += !okp[m][k] + !okm[m][k];
        }
    /* the first slopes from the smallest pair give eq. 5's scale */
    double c[6][6]; /* c[m][j] = C_jm */
    for (int m = 0; m < 6; m++)
        for (int j = 0; j < 6; j++)
            c[m][j] = okp[m][0] && okm[m][0] ? (sp[m][0][j] - sm[m][0][j]) / (2 * sample_alpha[0]) : 0;
    double cref = 0;
    for (int m = 0; m < 6; m++)
        if (fabs(c[m][m]) > cref)
            cref = fabs(c[m][m]);
    const double t2_abs = t2 * cref;
    for (int m = 0; m < 6; m++) {
        int inlier[K];
        for (int k = 0; k < K; k++)
            inlier[k] = k == 0;
        for (int iter = 0; iter < 8; iter++) {
            int changed = 0;
            for (int k = 0; k < K; k++) {
                int in = okp[m][k] && okm[m][k];
                for (int j = 0; j < 6 && in; j++)
                    in = within(sample_alpha[k], c[m][j], sp[m][k][j], t1, t2_abs) &&
                         within(-sample_alpha[k], c[m][j], sm[m][k][j], t1, t2_abs);
                if (k == 0)
                    in = okp[m][0] && okm[m][0]; /* the smallest pair always fits */
                changed |= in != inlier[k];
                inlier[k] = in;
            }
            for (int j = 0; j < 6; j++) {
                double num = 0, den = 0;
                for (int k = 0; k < K; k++)
                    if (inlier[k]) {
                        num += sample_alpha[k] * 0.5 * (sp[m][k][j] - sm[m][k][j]);
                        den += sample_alpha[k] * sample_alpha[k];
                    }
                c[m][j] = den > 0 ? num / den : 0;
            }
            if (!changed && iter > 0)
                break;
        }
        /* the valid range: per sign, up to the first sample out of eq. 4-5 */
        double hi = 0, lo = 0;
        for (int k = 0; k < K; k++) {
            int in = okp[m][k];
            for (int j = 0; j < 6 && in; j++)
                in = within(sample_alpha[k], c[m][j], sp[m][k][j], t1, t2_abs);
            if (!in)
                break;
            hi = sample_alpha[k];
        }
        for (int k = 0; k < K; k++) {
            int in = okm[m][k];
            for (int j = 0; j < 6 && in; j++)
                in = within(-sample_alpha[k], c[m][j], sm[m][k][j], t1, t2_abs);
            if (!in)
                break;
            lo = -sample_alpha[k];
        }
        amin[m] = lo;
        amax[m] = hi;
    }
    for (int j = 0; j < 6; j++)
        for (int m = 0; m < 6; m++)
            C[6 * j + m] = 0.5 * (c[m][j] + c[j][m]);
    return failed;
}

int tw_tetra_tree_estimate_one(const tw_hierarchy *h, int l, int e, const double *E, const double *nu,
                               double t1, double t2, double C[36], double amin[6], double amax[6])
{
    const tw_mesh *f = h->level[h->n_levels - 1];
    int *map = tw_malloc((size_t)f->nv * sizeof *map, "vertex map");
    if (!map)
        return -1;
    for (int i = 0; i < f->nv; i++)
        map[i] = -1;
    sub_mesh s;
    tw_status st = sub_build(&s, h, l, e, E, nu, map);
    free(map);
    if (st != TW_OK)
        return -1;
    const int failed = estimate(&s, t1, t2, C, amin, amax);
    sub_free(&s);
    return failed;
}

void tw_tetra_tree_free(tw_tetra_tree *t)
{
    if (!t)
        return;
    tw_hier_free(t->h);
    free(t->level_start);
    free(t->C);
    free(t->amin);
    free(t->amax);
    free(t->density);
    free(t->vol);
    free(t);
}

int tw_tetra_tree_level(const tw_tetra_tree *t, int id)
{
    int l = 0;
    while (l + 1 < t->levels && id >= t->level_start[l + 1])
        l++;
    return l;
}

static double seconds_now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tw_tetra_tree *tw_tetra_tree_create(const tw_mesh *base, int levels)
{
    if (levels < 1 || levels > 8) {
        tw_fail(TW_ERR_INVALID, "tetra tree: %d levels; 1 to 8 are possible", levels);
        return NULL;
    }
    tw_tetra_tree *t = tw_calloc(1, sizeof *t, "tetra tree");
    if (!t)
        return NULL;
    t->h = tw_hier_nested(base, levels);
    if (!t->h) {
        free(t);
        return NULL;
    }
    const tw_hierarchy *h = t->h;
    t->levels = levels;
    t->level_start = tw_malloc(((size_t)t->levels + 1) * sizeof *t->level_start, "tree levels");
    if (!t->level_start) {
        tw_tetra_tree_free(t);
        return NULL;
    }
    t->level_start[0] = 0;
    for (int l = 0; l < t->levels; l++)
        t->level_start[l + 1] = t->level_start[l] + h->level[l]->nt;
    t->nt = t->level_start[t->levels];
    t->C = tw_malloc(36 * (size_t)t->nt * sizeof *t->C, "tree elasticity");
    t->amin = tw_malloc(6 * (size_t)t->nt * sizeof *t->amin, "tree ranges");
    t->amax = tw_malloc(6 * (size_t)t->nt * sizeof *t->amax, "tree ranges");
    t->density = tw_malloc((size_t)t->nt * sizeof *t->density, "tree density");
    t->vol = tw_malloc((size_t)t->nt * sizeof *t->vol, "tree volumes");
    if (!t->C || !t->amin || !t->amax || !t->density || !t->vol) {
        tw_tetra_tree_free(t);
        return NULL;
    }
    return t;
}

const tw_mesh *tw_tetra_tree_mesh(const tw_tetra_tree *t, int level)
{
    if (!t || level < 0 || level >= t->levels)
        return NULL;
    return t->h->level[level];
}

int tw_tetra_tree_levels(const tw_tetra_tree *t) { return t ? t->levels : 0; }

void tw_tetra_tree_destroy(tw_tetra_tree *t) { tw_tetra_tree_free(t); }

tw_status tw_tetra_tree_estimate(tw_tetra_tree *t, const tw_tetra_tree_def *defp)
{
    const double t0 = seconds_now();
    tw_tetra_tree_def def = defp ? *defp : tw_default_tetra_tree_def();
    if (!t)
        return tw_fail(TW_ERR_INVALID, "tetra tree: no tree");
    if (!(def.t1 > 0) || !(def.t2 >= 0))
        return tw_fail(TW_ERR_INVALID, "tetra tree: thresholds T1 %g (> 0) and T2 %g (>= 0)", def.t1, def.t2);
    const tw_hierarchy *h = t->h;
    const tw_mesh *f = h->level[t->levels - 1];
    double *E = tw_malloc((size_t)f->nt * sizeof *E, "finest E");
    double *nu = tw_malloc((size_t)f->nt * sizeof *nu, "finest nu");
    if (!E || !nu) {
        free(E);
        free(nu);
        return TW_ERR_NOMEM;
    }
    for (int e = 0; e < f->nt; e++) {
        E[e] = def.element_youngs ? def.element_youngs[e] : def.youngs_modulus;
        nu[e] = def.element_poisson ? def.element_poisson[e] : def.poisson_ratio;
        const double rho = def.element_density ? def.element_density[e] : def.density;
        if (!(E[e] > 0) || !(nu[e] > -1 && nu[e] < 0.5) || !(rho > 0)) {
            tw_fail(TW_ERR_INVALID, "tetra tree: finest element %d has E %g, nu %g, density %g (E > 0, -1 < nu "
                                    "< 0.5, density > 0)", e, E[e], nu[e], rho);
            free(E);
            free(nu);
            return TW_ERR_INVALID;
        }
        const int id = t->level_start[t->levels - 1] + e;
        tw_isotropic_c(E[e], nu[e], t->C + 36 * (size_t)id);
        for (int m = 0; m < 6; m++) {
            t->amin[6 * (size_t)id + m] = -INFINITY;
            t->amax[6 * (size_t)id + m] = INFINITY;
        }
        t->density[id] = rho;
        t->vol[id] = tw_mesh_det(f, e) / 6;
    }
    /* masses and volumes upward: a parent holds its children's sums */
    for (int l = t->levels - 2; l >= 0; l--)
        for (int e = 0; e < h->level[l]->nt; e++) {
            const int id = t->level_start[l] + e;
            double V = 0, M = 0;
            for (int k = 0; k < 8; k++) {
                const int c = t->level_start[l + 1] + 8 * e + k;
                V += t->vol[c];
                M += t->vol[c] * t->density[c];
            }
            t->vol[id] = V;
            t->density[id] = M / V;
        }
    int failed = 0, nomem = 0;
#pragma omp parallel reduction(+ : failed, nomem)
    {
        int *map = malloc((size_t)f->nv * sizeof *map);
        if (!map)
            nomem++;
        else
            for (int i = 0; i < f->nv; i++)
                map[i] = -1;
#pragma omp for schedule(dynamic, 4)
        for (int id = 0; id < t->level_start[t->levels - 1]; id++) {
            if (!map)
                continue;
            const int l = tw_tetra_tree_level(t, id), e = id - t->level_start[l];
            sub_mesh s;
            if (sub_build(&s, h, l, e, E, nu, map) != TW_OK) {
                nomem++;
                continue;
            }
            failed += estimate(&s, def.t1, def.t2, t->C + 36 * (size_t)id, t->amin + 6 * (size_t)id,
                               t->amax + 6 * (size_t)id);
            sub_free(&s);
        }
        free(map);
    }
    free(E);
    free(nu);
    if (nomem)
        return tw_fail(TW_ERR_NOMEM, "tetra tree: out of memory in the estimation");
    t->samples_failed = failed;
    t->seconds = seconds_now() - t0;
    return TW_OK;
}

tw_tetra_tree *tw_tetra_tree_build(const tw_mesh *base, const tw_tetra_tree_def *defp)
{
    tw_tetra_tree_def def = defp ? *defp : tw_default_tetra_tree_def();
    tw_tetra_tree *t = tw_tetra_tree_create(base, def.levels);
    if (!t)
        return NULL;
    if (tw_tetra_tree_estimate(t, &def) != TW_OK) {
        tw_tetra_tree_free(t);
        return NULL;
    }
    return t;
}
