/* The tetra front's runtime (Imai et al. 2013 sec. 5); the design is at the
 * top of tetra_front.h.
 *
 * Front structures, rebuilt when the front changes:
 * - on_coarse[v]: v lies on a face (or edge) of an active tet without being
 *   its corner, found by subdividing each active tet's faces down to the
 *   finest level through the edge-to-midpoint table;
 * - free vertices: corners of active tets that are not on_coarse; they are
 *   the unknowns, numbered in vertex order;
 * - the expansion of a vertex over free vertices (a row of Q): itself, or
 *   the mean of its parent edge's two ends' expansions. For a vertex on an
 *   active tet T this is T's linear interpolation (the parent edge of a
 *   vertex on T lies on T, and the only free vertices on T are its corners),
 *   so it has at most 3 entries;
 * - per active tet the free vertices its corners expand to (at most 12, its
 *   slots), the corner-by-slot weights and the BSR block of every slot
 *   pair, kept per tree tet as its position in the slot's row;
 * - the reduced lumped mass (row sums of Q^T M Q) and the BSR pattern, kept
 *   also by vertex (each free vertex's sorted neighbour vertices).
 * A switch redoes the vertex marks, the numbering and the slots (linear
 * passes), but sorts only the rows it changed: those of the tets whose
 * slots or weights changed (the switched tets and their neighbours across a
 * face whose T-junctions came or went) and of the tets that left; the other
 * rows are copied, renumbered, and their tets keep their block positions.
 * The reduced numbering follows vertex order, so the system is the one a
 * full rebuild makes, bit for bit. The per-tet data (gradients, K_e) are
 * the tree's and are never recomputed.
 * On the CUDA backend (tw_front_def.backend) the device keeps the pattern,
 * updated at a switch from what the switch changed (tw_front_switch_record,
 * kernels/thrust_front.h), and the gather maps of each rebuild
 * (tw_front_maps_build, tetra_front_maps.h), and runs each step's element
 * pass (the body element_pass calls, hd/front_element.h), the gathered
 * assembly and the block-Jacobi PCG (kernels/cuda_front.h); the switch
 * decisions, the structures and the state stay on the host. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_PROCESS_CPUTIME_ID */
#include "tetra_front.h"

#include <math.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "error.h"
#include "fem.h"
#include "hd/front_element.h"
#include "hd/bsr_row_real.h" /* tw_block_jacobi_product */
#include "hd/math3.h"
#include "mesh.h"
#include "solver.h"
#include "world.h"
#ifdef TW_HAVE_CUDA
#include "cuda_front.h"
#endif

/* the most free vertices a tet's corners expand to (its slots) */
#define MAX_SLOTS TW_FRONT_SLOTS
/* the most anchor unknowns a free vertex expands to (a vertex inside an
 * anchor tet whose corners hang on coarser tets: 4 corners of up to 3) */
#define AX_CAP 12

struct tw_front {
    const tw_tetra_tree *t;
    const tw_hierarchy *h;
    tw_front_def def;
    int L, nv, ntree;
    int *par;              /* 2 per vertex: parent edge's ends (-1 on level 0) */
    uint64_t *hkey;        /* edge -> midpoint table */
    int *hmid;
    size_t hmask;
    double *X, *x, *v;     /* 3 nv */
    unsigned char *pinned; /* nv */
    double *g;             /* 12 per tree tet */
    double *Ke;            /* 144 per tree tet: V B^T C B, row-major 12x12 */
    unsigned char *active; /* ntree */
    long *since;           /* ntree: the step a tet entered the front */
    int nact, *act;        /* the active tets, in tree order */
    long step;
    /* front structures */
    unsigned char *used, *on_coarse, *valid; /* nv */
    int nfree, *rid, *free_list;             /* rid: nv -> reduced index or -1 */
    int *exp_n, *exp_i;                      /* nv, 4 nv: expansions (valid where exp_stamp == stamp) */
    double *exp_w;
    int *exp_stamp, stamp;
    /* per tree tet, current where in_sys: the slots (free vertices its
     * corners expand to, MAX_SLOTS vertex ids), the weight of corner p on
     * slot s (4 * MAX_SLOTS) and each slot pair's block as its position in
     * the slot's row (MAX_SLOTS^2) */
    int *el_n, *el_slot;
    double *el_w;
    unsigned short *el_pos;
    unsigned char *in_sys, *el_changed; /* ntree */
    unsigned char *row_redo; /* nv: the rows a rebuild redoes */
    int *vptr, *vcol;      /* the pattern by vertex: each free vertex's sorted neighbour vertices */
    int tets_changed, rows_redone; /* of the last rebuild */
    int *row_ptr, *col, *diag, nnzb;
    tw_real *val;
    double *mass;          /* nfree */
    tw_real *rhs, *vr;     /* 3 nfree */
    unsigned char *cons;   /* nfree */
    tw_solver_work work;
    int work_n;
    /* per active tet scratch of a step */
    double *elR, *elf, *elK; /* 9, 12, 144 per active tet */
    double *fr;            /* 3 nfree */
    int nhang;
    /* the multigrid preconditioner of a large front: set up for the front
     * of one step (its anchor) and kept across switches while it still
     * serves (see lagged_apply) */
    tw_amg *amg;
    int lagged;            /* 1: amg is an earlier front's; its system's arrays are the a_ ones */
    int lag;               /* 0: a new multigrid after every switch (tw_front_set_mg_lag) */
    int mg_kind;           /* the last step's preconditioner (tw_front_mg_kind) */
    int *a_row_ptr, *a_col, *a_diag; /* owned while lagged: the anchor's system, which amg reads */
    tw_real *a_val;
    int *a_rid, a_n;       /* nv: the anchor's reduced index per vertex (-1: not free there); its size */
    int a_iterations;      /* the PCG's iterations on the anchor's own front */
    int lag_steps;         /* steps solved with the lagged amg */
    int last_iterations;   /* the last step's PCG iterations */
    int t_valid;           /* T below is the current front's */
    int *t_ptr, *t_col;    /* T: each free vertex over the anchor's unknowns (CSR) */
    tw_real *t_w;
    unsigned char *a_changed; /* nv: rows redone since the anchor's front */
    int nnew, *new_list;   /* E: the free vertices whose rows are not the anchor's (new or redone), ascending */
    tw_real *new_dinv;     /* their diagonal blocks' inverses, 9 each */
    tw_real *zs;           /* 3 nfree: the lagged cycle's correction */
    tw_real *ra, *za;      /* 3 a_n: the anchor's residual and correction */
    int *ax_n, *ax_i, ax_stamp_now, *ax_stamp; /* the expansions over the anchor (nv, AX_CAP nv) */
    double *ax_w;
    tw_real *Xr;           /* 3 nfree: the free vertices' rest positions (its rigid modes) */
    double *force, *fq;    /* 3 nv: external forces per finest vertex (NULL: none), and Q^T of them */
    double prof[TW_FRONT_MS_N]; /* the last step's split (tw_front_profile) */
    struct tw_cuda_front *dev; /* the CUDA backend's device front, or NULL */
    int on_device;             /* the last step solved on the device */
    tw_front_maps maps;        /* the device front's gather maps, of the last rebuild */
    double *xu, *vf, *fqf;     /* the device step's packed state (3 nu, 3 n, 3 n) */
};

/* process CPU time, ms: what a part costs whatever else runs on the machine */
static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

tw_front_def tw_default_front_def(void)
{
    tw_front_def d;
    memset(&d, 0, sizeof d);
    d.dt = 0.01;
    d.gravity[2] = -9.81;
    d.damping_mass = 0;
    d.damping_stiffness = 0.01;
    d.cg_tolerance = 1e-4;
    d.cg_max_iterations = 1000;
    d.adapt = 1;
    d.start_level = 0;
    d.coarsen_margin = 0.5;
    d.t3 = 1e-3;
    d.hold_steps = 10;
    d.threads = 0;
    d.precond = TW_PRECOND_AUTO;
    return d;
}

/* ---------------------------------------------------------------- edges */

static uint64_t edge_key(int a, int b)
{
    if (a > b) {
        const int s = a;
        a = b;
        b = s;
    }
    return (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
}

static size_t edge_slot(const tw_front *f, uint64_t key)
{
    size_t s = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & f->hmask;
    while (f->hkey[s] && f->hkey[s] != key)
        s = (s + 1) & f->hmask;
    return s;
}

static int midpoint(const tw_front *f, int a, int b)
{
    const size_t s = edge_slot(f, edge_key(a, b));
    return f->hkey[s] ? f->hmid[s] : -1;
}

/* -------------------------------------------------------------- element */

static int tree_level(const tw_front *f, int id)
{
    return tw_tetra_tree_level(f->t, id);
}

static const int *tree_tet(const tw_front *f, int id)
{
    const int l = tree_level(f, id);
    return f->h->level[l]->tets + 4 * (size_t)(id - f->t->level_start[l]);
}

/* The strain-displacement rows of gradient g (Voigt, engineering shears):
 * B[6][3] with eps = B u for a unit field u g^T. */
static void bmat(const double *g, double B[6][3])
{
    memset(B, 0, 18 * sizeof(double));
    B[0][0] = g[0];
    B[1][1] = g[1];
    B[2][2] = g[2];
    B[3][1] = g[2];
    B[3][2] = g[1];
    B[4][0] = g[2];
    B[4][2] = g[0];
    B[5][0] = g[1];
    B[5][1] = g[0];
}

static void element_stiffness(const double *g, double V, const double *C, double *K)
{
    double B[4][6][3], CB[4][6][3];
    for (int p = 0; p < 4; p++) {
        bmat(g + 3 * p, B[p]);
        for (int i = 0; i < 6; i++)
            for (int c = 0; c < 3; c++) {
                double s = 0;
                for (int k = 0; k < 6; k++)
                    s += C[6 * i + k] * B[p][k][c];
                CB[p][i][c] = s;
            }
    }
    for (int p = 0; p < 4; p++)
        for (int q = 0; q < 4; q++)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    double s = 0;
                    for (int i = 0; i < 6; i++)
                        s += B[p][i][a] * CB[q][i][b];
                    K[12 * (3 * p + a) + 3 * q + b] = V * s;
                }
}

static void deformation(const tw_front *f, int id, double F[9])
{
    tw_front_deformation(f->x, tree_tet(f, id), f->g + 12 * (size_t)id, F);
}

void tw_front_alpha(const tw_front *f, int id, double alpha[6])
{
    double F[9], R[9], U[9];
    deformation(f, id, F);
    tw_front_rotation(F, R);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            U[3 * i + j] = R[i] * F[j] + R[3 + i] * F[3 + j] + R[6 + i] * F[6 + j];
    alpha[0] = U[0] - 1;
    alpha[1] = U[4] - 1;
    alpha[2] = U[8] - 1;
    alpha[3] = U[5] + U[7];
    alpha[4] = U[2] + U[6];
    alpha[5] = U[1] + U[3];
}

/* ------------------------------------------------------------ structure */

static void mark_triangle(tw_front *f, int a, int b, int c, int k)
{
    const int ab = midpoint(f, a, b), bc = midpoint(f, b, c), ca = midpoint(f, c, a);
    if (ab < 0 || bc < 0 || ca < 0)
        return;
    f->on_coarse[ab] = f->on_coarse[bc] = f->on_coarse[ca] = 1;
    if (k + 1 < f->L - 1) {
        mark_triangle(f, a, ab, ca, k + 1);
        mark_triangle(f, ab, b, bc, k + 1);
        mark_triangle(f, ca, bc, c, k + 1);
        mark_triangle(f, ab, bc, ca, k + 1);
    }
}

static const int face_of[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};

/* The expansion of vertex v over free vertices (memoised per rebuild). */
static int expand(tw_front *f, int v)
{
    if (f->exp_stamp[v] == f->stamp)
        return 0;
    int *idx = f->exp_i + 4 * (size_t)v;
    double *w = f->exp_w + 4 * (size_t)v;
    if (f->rid[v] >= 0) {
        f->exp_n[v] = 1;
        idx[0] = f->rid[v];
        w[0] = 1;
        f->exp_stamp[v] = f->stamp;
        return 0;
    }
    const int a = f->par[2 * (size_t)v], b = f->par[2 * (size_t)v + 1];
    if (a < 0)
        return tw_fail(TW_ERR_INVALID, "tetra front: vertex %d of the base is not a free vertex", v);
    if (expand(f, a) || expand(f, b))
        return 1;
    int n = 0;
    for (int s = 0; s < 2; s++) {
        const int u = s ? b : a;
        for (int k = 0; k < f->exp_n[u]; k++) {
            const int r = f->exp_i[4 * (size_t)u + k];
            const double wk = 0.5 * f->exp_w[4 * (size_t)u + k];
            int j = 0;
            while (j < n && idx[j] != r)
                j++;
            if (j == n) {
                if (n == 4)
                    return tw_fail(TW_ERR_INVALID, "tetra front: vertex %d expands to more than 4 free vertices", v);
                idx[n] = r;
                w[n++] = 0;
            }
            w[j] += wk;
        }
    }
    f->exp_n[v] = n;
    f->exp_stamp[v] = f->stamp;
    return 0;
}

/* Makes x, v of vertex u the interpolation of its parent edge when they are
 * stale (u newly in the front). */
static void ensure_valid(tw_front *f, int u)
{
    if (f->valid[u])
        return;
    const int a = f->par[2 * (size_t)u], b = f->par[2 * (size_t)u + 1];
    if (a >= 0) {
        ensure_valid(f, a);
        ensure_valid(f, b);
        for (int d = 0; d < 3; d++) {
            f->x[3 * (size_t)u + d] = 0.5 * (f->x[3 * (size_t)a + d] + f->x[3 * (size_t)b + d]);
            f->v[3 * (size_t)u + d] = 0.5 * (f->v[3 * (size_t)a + d] + f->v[3 * (size_t)b + d]);
        }
    }
    f->valid[u] = 1;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void sync_dependent(tw_front *f);
static tw_status device_pattern(tw_front *f);

/* Rebuilds every front structure from f->active. */
static tw_status rebuild(tw_front *f)
{
    const int nv = f->nv;
    f->nact = 0;
    for (int id = 0; id < f->ntree; id++)
        if (f->active[id])
            f->act[f->nact++] = id;
    memset(f->used, 0, (size_t)nv);
    memset(f->on_coarse, 0, (size_t)nv);
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k];
        const int *t = tree_tet(f, id);
        for (int p = 0; p < 4; p++)
            f->used[t[p]] = 1;
        const int l = tree_level(f, id);
        if (l < f->L - 1)
            for (int s = 0; s < 4; s++)
                mark_triangle(f, t[face_of[s][0]], t[face_of[s][1]], t[face_of[s][2]], l);
    }
    /* a vertex outside the front keeps the position it had when it left (or
     * its rest position): stale, recomputed from its parent edge on entry */
    for (int u = 0; u < nv; u++)
        if (!f->used[u])
            f->valid[u] = 0;
    for (int u = 0; u < nv; u++)
        if (f->used[u])
            ensure_valid(f, u);
    f->nfree = 0;
    f->nhang = 0;
    for (int u = 0; u < nv; u++) {
        f->rid[u] = -1;
        if (f->used[u] && !f->on_coarse[u]) {
            f->rid[u] = f->nfree;
            f->free_list[f->nfree++] = u;
        }
        if (f->used[u] && f->on_coarse[u])
            f->nhang++;
    }
    f->stamp++;
    /* per active tet: its slots (free vertices) and weights; a tet whose
     * slots or weights differ from those of the last system (or that was
     * not in it) is changed, and the rows of its old and new slots are to
     * be redone, as are those of the tets that left the front */
    memset(f->row_redo, 0, (size_t)nv);
    int changed = 0;
    for (int id = 0; id < f->ntree; id++)
        if (f->in_sys[id] && !f->active[id]) {
            for (int s = 0; s < f->el_n[id]; s++)
                f->row_redo[f->el_slot[MAX_SLOTS * (size_t)id + s]] = 1;
            f->in_sys[id] = 0;
        }
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k];
        const int *t = tree_tet(f, id);
        int n = 0, slot[MAX_SLOTS];
        double W[4 * MAX_SLOTS];
        memset(W, 0, sizeof W);
        for (int p = 0; p < 4; p++) {
            if (expand(f, t[p]))
                return TW_ERR_INVALID;
            for (int j = 0; j < f->exp_n[t[p]]; j++) {
                const int r = f->free_list[f->exp_i[4 * (size_t)t[p] + j]];
                int s = 0;
                while (s < n && slot[s] != r)
                    s++;
                if (s == n) {
                    if (n == MAX_SLOTS)
                        return tw_fail(TW_ERR_INVALID, "tetra front: tet %d touches more than %d free vertices", id,
                                       MAX_SLOTS);
                    slot[n++] = r;
                }
                W[MAX_SLOTS * p + s] += f->exp_w[4 * (size_t)t[p] + j];
            }
        }
        int *oslot = f->el_slot + MAX_SLOTS * (size_t)id;
        double *oW = f->el_w + 4 * MAX_SLOTS * (size_t)id;
        const int same = f->in_sys[id] && f->el_n[id] == n && !memcmp(oslot, slot, (size_t)n * sizeof *slot) &&
                         !memcmp(oW, W, sizeof W);
        f->el_changed[id] = !same;
        if (same)
            continue;
        changed++;
        if (f->in_sys[id])
            for (int s = 0; s < f->el_n[id]; s++)
                f->row_redo[oslot[s]] = 1;
        for (int s = 0; s < n; s++)
            f->row_redo[slot[s]] = 1;
        memcpy(oslot, slot, (size_t)n * sizeof *slot);
        memcpy(oW, W, sizeof W);
        f->el_n[id] = n;
        f->in_sys[id] = 1;
    }
    f->tets_changed = changed;
    /* the rows to redo, each the sorted union of the slots of the active
     * tets it is a slot of (by vertex; a vertex's reduced index follows
     * vertex order, so sorting by vertex sorts the reduced columns too);
     * every other free vertex's row is the last system's: a row gains or
     * loses a column only through a changed tet or one that left */
    const int n = f->nfree;
    int *cnt = tw_calloc((size_t)nv + 1, sizeof *cnt, "front pattern");
    if (!cnt)
        return TW_ERR_NOMEM;
    int redo = 0;
    for (int u = 0; u < nv; u++)
        if (f->row_redo[u] && f->rid[u] < 0)
            f->row_redo[u] = 0; /* no longer free: no row */
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k], ne = f->el_n[id];
        const int *slot = f->el_slot + MAX_SLOTS * (size_t)id;
        for (int s = 0; s < ne; s++)
            if (f->row_redo[slot[s]])
                cnt[slot[s] + 1] += ne;
    }
    for (int u = 0; u < nv; u++) {
        redo += f->row_redo[u];
        cnt[u + 1] += cnt[u];
    }
    f->rows_redone = redo;
    if (f->amg && f->a_changed)
        for (int u = 0; u < nv; u++)
            f->a_changed[u] |= f->row_redo[u];
    int *tmp = tw_malloc((size_t)(cnt[nv] ? cnt[nv] : 1) * sizeof *tmp, "front pattern");
    int *fill = tw_malloc((size_t)nv * sizeof *fill, "front pattern");
    int *vptr = tw_malloc(((size_t)nv + 1) * sizeof *vptr, "front pattern");
    if (!tmp || !fill || !vptr) {
        free(cnt);
        free(tmp);
        free(fill);
        free(vptr);
        return TW_ERR_NOMEM;
    }
    memcpy(fill, cnt, (size_t)nv * sizeof *fill);
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k], ne = f->el_n[id];
        const int *slot = f->el_slot + MAX_SLOTS * (size_t)id;
        for (int s = 0; s < ne; s++)
            if (f->row_redo[slot[s]])
                for (int q = 0; q < ne; q++)
                    tmp[fill[slot[s]]++] = slot[q];
    }
    free(fill);
    /* sort and unique each redone row in place (a row keeps its start) */
    int total = 0;
    for (int u = 0; u < nv; u++) {
        vptr[u] = total;
        if (f->rid[u] < 0)
            continue;
        if (!f->row_redo[u]) {
            total += f->vptr[u + 1] - f->vptr[u];
            continue;
        }
        int *r = tmp + cnt[u];
        const int m = cnt[u + 1] - cnt[u];
        qsort(r, (size_t)m, sizeof *r, cmp_int);
        int len = 0;
        for (int j = 0; j < m; j++)
            if (j == 0 || r[j] != r[j - 1])
                r[len++] = r[j];
        total += len;
    }
    vptr[nv] = total;
    /* the vertex rows: the last system's or the redone, in vertex order */
    int *vcol = tw_malloc((size_t)(total ? total : 1) * sizeof *vcol, "front pattern");
    if (!vcol) {
        free(cnt);
        free(tmp);
        free(vptr);
        return TW_ERR_NOMEM;
    }
    for (int u = 0; u < nv; u++) {
        if (f->rid[u] < 0)
            continue;
        const int len = vptr[u + 1] - vptr[u];
        memcpy(vcol + vptr[u], f->row_redo[u] ? tmp + cnt[u] : f->vcol + f->vptr[u], (size_t)len * sizeof *vcol);
    }
    free(cnt);
    free(tmp);
    free(f->vptr);
    free(f->vcol);
    f->vptr = vptr;
    f->vcol = vcol;
    /* the reduced pattern: the vertex rows of the free vertices, renumbered;
     * the last system's arrays stay with a multigrid set up for it */
    if (f->amg && !f->lagged) {
        f->a_row_ptr = f->row_ptr;
        f->a_col = f->col;
        f->a_diag = f->diag;
        f->a_val = f->val;
        f->lagged = 1;
        f->lag_steps = 0;
    } else {
        free(f->row_ptr);
        free(f->col);
        free(f->diag);
        free(f->val);
    }
    f->t_valid = 0;
    f->row_ptr = f->diag = NULL;
    f->col = NULL;
    f->val = NULL;
    f->row_ptr = tw_malloc(((size_t)n + 1) * sizeof *f->row_ptr, "front rows");
    f->diag = tw_malloc((size_t)(n ? n : 1) * sizeof *f->diag, "front diagonal");
    f->col = tw_malloc((size_t)(total ? total : 1) * sizeof *f->col, "front columns");
    if (!f->row_ptr || !f->diag || !f->col)
        return TW_ERR_NOMEM;
    f->row_ptr[0] = 0;
    for (int i = 0; i < n; i++) {
        const int u = f->free_list[i];
        int b = f->row_ptr[i];
        f->diag[i] = -1;
        for (int j = vptr[u]; j < vptr[u + 1]; j++, b++) {
            f->col[b] = f->rid[vcol[j]];
            if (vcol[j] == u)
                f->diag[i] = b;
        }
        f->row_ptr[i + 1] = b;
    }
    f->nnzb = total;
    f->val = tw_malloc(9 * (size_t)(total ? total : 1) * sizeof *f->val, "front values");
    if (!f->val)
        return TW_ERR_NOMEM;
    /* every slot pair's block, as its position in its row: found again
     * only for the tets whose slots or whose slots' rows changed */
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k], ne = f->el_n[id];
        const int *slot = f->el_slot + MAX_SLOTS * (size_t)id;
        int redo_el = f->el_changed[id];
        for (int s = 0; s < ne && !redo_el; s++)
            redo_el = f->row_redo[slot[s]];
        if (!redo_el)
            continue;
        unsigned short *pos = f->el_pos + MAX_SLOTS * MAX_SLOTS * (size_t)id;
        for (int s = 0; s < ne; s++) {
            const int *row = vcol + vptr[slot[s]];
            for (int q = 0; q < ne; q++) {
                int lo = 0, hi = vptr[slot[s] + 1] - vptr[slot[s]] - 1;
                while (lo < hi) {
                    const int mid = (lo + hi) / 2;
                    if (row[mid] < slot[q])
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo > 65535)
                    return tw_fail(TW_ERR_INVALID, "tetra front: a row of more than 65536 blocks (vertex %d)",
                                   slot[s]);
                pos[MAX_SLOTS * s + q] = (unsigned short)lo;
            }
        }
    }
    /* lumped mass: each active tet's rho V / 4 per corner, through Q */
    memset(f->mass, 0, (size_t)(n ? n : 1) * sizeof *f->mass);
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k];
        const double m4 = 0.25 * f->t->density[id] * f->t->vol[id];
        const double *W = f->el_w + 4 * MAX_SLOTS * (size_t)id;
        for (int p = 0; p < 4; p++)
            for (int s = 0; s < f->el_n[id]; s++)
                f->mass[f->rid[f->el_slot[MAX_SLOTS * (size_t)id + s]]] += m4 * W[MAX_SLOTS * p + s];
    }
    for (int i = 0; i < n; i++) {
        f->cons[i] = f->pinned[f->free_list[i]] ? 1 : 0;
        for (int d = 0; d < 3; d++)
            f->Xr[3 * i + d] = (tw_real)f->X[3 * (size_t)f->free_list[i] + d];
    }
    if (f->work_n != n) {
        tw_solver_work_free(&f->work);
        memset(&f->work, 0, sizeof f->work);
        if (tw_solver_work_init(&f->work, n ? n : 1) != TW_OK)
            return TW_ERR_NOMEM;
        f->work_n = n;
    }
    sync_dependent(f);
    return device_pattern(f);
}

/* Positions and velocities of the front's T-junction vertices from the free
 * ones (Q). */
static void sync_dependent(tw_front *f)
{
    for (int u = 0; u < f->nv; u++) {
        if (!f->used[u] || f->rid[u] >= 0)
            continue;
        double xs[3] = {0, 0, 0}, vs[3] = {0, 0, 0};
        for (int j = 0; j < f->exp_n[u]; j++) {
            const int w = f->free_list[f->exp_i[4 * (size_t)u + j]];
            const double wt = f->exp_w[4 * (size_t)u + j];
            for (int d = 0; d < 3; d++) {
                xs[d] += wt * f->x[3 * (size_t)w + d];
                vs[d] += wt * f->v[3 * (size_t)w + d];
            }
        }
        for (int d = 0; d < 3; d++) {
            f->x[3 * (size_t)u + d] = xs[d];
            f->v[3 * (size_t)u + d] = vs[d];
        }
    }
}

tw_status tw_front_switch_record(const tw_front *f, tw_front_switch *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->nv = f->nv;
    rec->n = f->nfree;
    rec->rid = f->rid;
    rec->redo = f->row_redo;
    /* room for every active tet: the record lives only for the upload */
    const size_t cap = TW_FRONT_SLOTS * (size_t)(f->nact ? f->nact : 1);
    rec->slot = tw_malloc(cap * sizeof *rec->slot, "front switch record");
    if (!rec->slot)
        return TW_ERR_NOMEM;
    int ntet = 0;
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k], ne = f->el_n[id];
        const int *slot = f->el_slot + MAX_SLOTS * (size_t)id;
        int redo = 0;
        for (int s = 0; s < ne; s++)
            redo |= f->row_redo[slot[s]];
        if (!redo)
            continue;
        int *o = rec->slot + TW_FRONT_SLOTS * (size_t)ntet++;
        for (int s = 0; s < TW_FRONT_SLOTS; s++)
            o[s] = s < ne ? slot[s] : -1;
    }
    rec->ntet = ntet;
    return TW_OK;
}

void tw_front_switch_free(tw_front_switch *rec)
{
    free(rec->slot);
    memset(rec, 0, sizeof *rec);
}

void tw_front_pattern(const tw_front *f, int *n, int *nnzb, const int **row_ptr, const int **col, const int **diag)
{
    *n = f->nfree;
    *nnzb = f->nnzb;
    *row_ptr = f->row_ptr;
    *col = f->col;
    *diag = f->diag;
}

int tw_front_on_device(const tw_front *f) { return f->on_device; }

tw_status tw_front_device_pattern(const tw_front *f, int *n, int *nnzb, int **row_ptr, int **col, int **diag)
{
#ifdef TW_HAVE_CUDA
    if (f->dev)
        return tw_cuda_front_pattern_to_host(f->dev, n, nnzb, row_ptr, col, diag);
#endif
    (void)n;
    (void)nnzb;
    (void)row_ptr;
    (void)col;
    (void)diag;
    return tw_fail(TW_ERR_INVALID, "tetra front: not on the cuda backend: no device pattern");
}

/* The device front's pattern update after a rebuild (nothing on the CPU
 * backend): what the rebuild redid, handed over; then the rebuilt gather
 * maps and room for the step's packed state. */
static tw_status device_pattern(tw_front *f)
{
#ifdef TW_HAVE_CUDA
    if (!f->dev)
        return TW_OK;
    tw_front_switch rec;
    tw_status r = tw_front_switch_record(f, &rec);
    if (r != TW_OK)
        return r;
    int nnzb = 0;
    r = tw_cuda_front_pattern(f->dev, rec.n, rec.rid, rec.redo, rec.ntet, rec.slot, f->cons, &nnzb);
    tw_front_switch_free(&rec);
    if (r == TW_OK && nnzb != f->nnzb)
        r = tw_fail(TW_ERR_DEVICE, "tetra front: the device pattern has %d blocks, the host's %d", nnzb, f->nnzb);
    if (r != TW_OK)
        return r;
    tw_front_maps_free(&f->maps);
    if ((r = tw_front_maps_build(f, &f->maps)) != TW_OK)
        return r;
    free(f->xu);
    free(f->vf);
    free(f->fqf);
    f->xu = tw_malloc(3 * ((size_t)f->maps.nu + 1) * sizeof *f->xu, "front device state");
    f->vf = tw_malloc(3 * ((size_t)f->nfree + 1) * sizeof *f->vf, "front device state");
    f->fqf = tw_malloc(3 * ((size_t)f->nfree + 1) * sizeof *f->fqf, "front device state");
    if (!f->xu || !f->vf || !f->fqf)
        return TW_ERR_NOMEM;
    return tw_cuda_front_maps(f->dev, &f->maps);
#else
    (void)f;
    return TW_OK;
#endif
}

#ifdef TW_HAVE_CUDA
static void reduce_forces(tw_front *f);

/* The step's state packed over the maps and uploaded, and the device's
 * element pass and assembly at it. */
static tw_status device_assemble(tw_front *f)
{
    if (f->force)
        reduce_forces(f);
    tw_front_maps_pack(&f->maps, f->x, f->v, f->force ? f->fq : NULL, f->xu, f->vf, f->fqf);
    return tw_cuda_front_assemble(f->dev, f->xu, f->vf, f->force ? f->fqf : NULL);
}

/* One step's system and solve on the device: the solution into vr; *t2
 * (wall ms) when the assembly was launched. */
static tw_status device_step(tw_front *f, tw_solve_result *r, double *t2)
{
    memset(r, 0, sizeof *r);
    tw_status s = device_assemble(f);
    *t2 = tw_now_ms();
    if (s != TW_OK)
        return s;
    const double c1 = cpu_ms();
    s = tw_cuda_front_solve(f->dev, f->def.cg_tolerance, f->def.cg_max_iterations, f->vr, &r->iterations,
                            &r->residual, &r->negative_curvature);
    f->prof[TW_FRONT_MS_PCG] = cpu_ms() - c1;
    return s;
}
#endif

tw_status tw_front_device_system(tw_front *f, tw_real *val, tw_real *rhs, tw_real *vr)
{
#ifdef TW_HAVE_CUDA
    if (f->dev) {
        tw_status s = device_assemble(f);
        return s != TW_OK ? s : tw_cuda_front_system_to_host(f->dev, val, rhs, vr);
    }
#endif
    (void)val;
    (void)rhs;
    (void)vr;
    return tw_fail(TW_ERR_INVALID, "tetra front: not on the cuda backend: no device system");
}

/* ------------------------------------------------- the multigrid's anchor */

/* A switch changes the front's unknowns, and a multigrid set up anew for
 * every front costs about as much as a step's assembly. So the multigrid of
 * an earlier front (the anchor) is kept across switches while it serves,
 * through the hierarchy's interpolation. T expands each free vertex over
 * the anchor's free vertices (itself where it was free there, else the mean
 * of its parent edge's ends, recursively: the anchor's interpolation of
 * it); E is the set of free vertices whose rows differ from the anchor's
 * (new to it, or redone by a switch since; pinned ones are the filter's and
 * left out). One application is a symmetric
 * multiplicative two-space cycle: block Gauss-Seidel over E's rows, the
 * anchor's V-cycle (on its own, older system) through T on the residual,
 * Gauss-Seidel over E backwards. Gauss-Seidel converges on any SPD matrix
 * and the anchor's cycle is SPD, so the cycle is SPD, and it spans the
 * front's space (E covers what T misses). Where the front is unchanged it is
 * the anchor's cycle; a switch is local, and Gauss-Seidel on the changed
 * rows takes up what the anchor does not resolve there (an additive block
 * Jacobi instead leaves outlying eigenvalues at every changed spot, each an
 * iteration more). The anchor is set up anew when the change grows (more
 * than LAG_CHANGE of the unknowns new or gone), when its system grows old
 * (LAG_STEPS steps) or when the iterations grow (more than LAG_ITERATIONS
 * times those on the anchor's own front). */
#define LAG_CHANGE 0.1
#define LAG_STEPS 8
#define LAG_ITERATIONS 1.25

static void drop_anchor(tw_front *f)
{
    tw_amg_free(f->amg);
    f->amg = NULL;
    if (f->lagged) {
        free(f->a_row_ptr);
        free(f->a_col);
        free(f->a_diag);
        free(f->a_val);
    }
    f->a_row_ptr = f->a_col = f->a_diag = NULL;
    f->a_val = NULL;
    f->lagged = 0;
    f->t_valid = 0;
}

static void anchor_arrays_free(tw_front *f)
{
    free(f->a_rid);
    free(f->t_ptr);
    free(f->t_col);
    free(f->t_w);
    free(f->new_list);
    free(f->new_dinv);
    free(f->ra);
    free(f->za);
    free(f->ax_n);
    free(f->ax_i);
    free(f->ax_w);
    free(f->ax_stamp);
    free(f->a_changed);
    free(f->zs);
    f->a_rid = f->t_ptr = f->t_col = f->new_list = f->ax_n = f->ax_i = f->ax_stamp = NULL;
    f->t_w = f->new_dinv = f->ra = f->za = f->zs = NULL;
    f->ax_w = NULL;
    f->a_changed = NULL;
}

/* The lagged preconditioner's arrays (per finest vertex, allocated once). */
static tw_status anchor_alloc(tw_front *f)
{
    if (f->a_rid)
        return TW_OK;
    const size_t nv = (size_t)f->nv;
    f->a_rid = tw_malloc(nv * sizeof *f->a_rid, "front anchor");
    f->t_ptr = tw_malloc((nv + 1) * sizeof *f->t_ptr, "front anchor");
    f->t_col = tw_malloc(AX_CAP * nv * sizeof *f->t_col, "front anchor");
    f->t_w = tw_malloc(AX_CAP * nv * sizeof *f->t_w, "front anchor");
    f->new_list = tw_malloc(nv * sizeof *f->new_list, "front anchor");
    f->new_dinv = tw_malloc(9 * nv * sizeof *f->new_dinv, "front anchor");
    f->ra = tw_malloc(3 * nv * sizeof *f->ra, "front anchor");
    f->za = tw_malloc(3 * nv * sizeof *f->za, "front anchor");
    f->ax_n = tw_malloc(nv * sizeof *f->ax_n, "front anchor");
    f->ax_i = tw_malloc(AX_CAP * nv * sizeof *f->ax_i, "front anchor");
    f->ax_w = tw_malloc(AX_CAP * nv * sizeof *f->ax_w, "front anchor");
    f->ax_stamp = tw_calloc(nv, sizeof *f->ax_stamp, "front anchor");
    f->a_changed = tw_calloc(nv, 1, "front anchor");
    f->zs = tw_malloc(3 * nv * sizeof *f->zs, "front anchor");
    if (!f->a_rid || !f->t_ptr || !f->t_col || !f->t_w || !f->new_list || !f->new_dinv || !f->ra || !f->za ||
        !f->ax_n || !f->ax_i || !f->ax_w || !f->ax_stamp || !f->a_changed || !f->zs) {
        anchor_arrays_free(f);
        return TW_ERR_NOMEM;
    }
    return TW_OK;
}

/* The expansion of vertex u over the anchor's unknowns (memoised per
 * build); 1 when it has more than AX_CAP entries. */
static int anchor_expand(tw_front *f, int u)
{
    if (f->ax_stamp[u] == f->ax_stamp_now)
        return f->ax_n[u] < 0;
    f->ax_stamp[u] = f->ax_stamp_now;
    int *idx = f->ax_i + AX_CAP * (size_t)u;
    double *w = f->ax_w + AX_CAP * (size_t)u;
    if (f->a_rid[u] >= 0) {
        f->ax_n[u] = 1;
        idx[0] = f->a_rid[u];
        w[0] = 1;
        return 0;
    }
    f->ax_n[u] = -1;
    const int a = f->par[2 * (size_t)u], b = f->par[2 * (size_t)u + 1];
    if (a < 0 || anchor_expand(f, a) || anchor_expand(f, b))
        return 1;
    int n = 0;
    for (int s = 0; s < 2; s++) {
        const int v = s ? b : a;
        for (int k = 0; k < f->ax_n[v]; k++) {
            const int r = f->ax_i[AX_CAP * (size_t)v + k];
            int j = 0;
            while (j < n && idx[j] != r)
                j++;
            if (j == n) {
                if (n == AX_CAP)
                    return 1;
                idx[n] = r;
                w[n++] = 0;
            }
            w[j] += 0.5 * f->ax_w[AX_CAP * (size_t)v + k];
        }
    }
    f->ax_n[u] = n;
    return 0;
}

/* T and E of the current front over the anchor; 1 when the anchor no
 * longer serves (too much changed, or an expansion too long). */
static int anchor_transfer(tw_front *f)
{
    const int n = f->nfree;
    int nnew = 0, kept = 0, ne = 0;
    for (int i = 0; i < n; i++) {
        const int u = f->free_list[i];
        kept += f->a_rid[u] >= 0;
        nnew += f->a_rid[u] < 0;
        if ((f->a_rid[u] < 0 || f->a_changed[u]) && !f->cons[i])
            f->new_list[ne++] = i; /* a pinned row is the filter's: left out */
    }
    f->nnew = ne;
    if (nnew + (f->a_n - kept) > LAG_CHANGE * n)
        return 1;
    f->ax_stamp_now++;
    f->t_ptr[0] = 0;
    for (int i = 0; i < n; i++) {
        const int u = f->free_list[i];
        if (anchor_expand(f, u))
            return 1;
        int q = f->t_ptr[i];
        for (int k = 0; k < f->ax_n[u]; k++, q++) {
            f->t_col[q] = f->ax_i[AX_CAP * (size_t)u + k];
            f->t_w[q] = (tw_real)f->ax_w[AX_CAP * (size_t)u + k];
        }
        f->t_ptr[i + 1] = q;
    }
    f->t_valid = 1;
    return 0;
}

/* The new vertices' block inverses from the step's matrix. */
static void anchor_new_blocks(tw_front *f)
{
    for (int j = 0; j < f->nnew; j++) {
        const int i = f->new_list[j];
        const tw_real *a = f->val + 9 * (size_t)f->diag[i];
        double m[9], d[9];
        for (int e = 0; e < 9; e++)
            m[e] = (double)a[e];
        d[0] = m[4] * m[8] - m[5] * m[7];
        d[1] = m[2] * m[7] - m[1] * m[8];
        d[2] = m[1] * m[5] - m[2] * m[4];
        d[3] = m[5] * m[6] - m[3] * m[8];
        d[4] = m[0] * m[8] - m[2] * m[6];
        d[5] = m[2] * m[3] - m[0] * m[5];
        d[6] = m[3] * m[7] - m[4] * m[6];
        d[7] = m[1] * m[6] - m[0] * m[7];
        d[8] = m[0] * m[4] - m[1] * m[3];
        const double det = m[0] * d[0] + m[1] * d[3] + m[2] * d[6];
        tw_real *o = f->new_dinv + 9 * (size_t)j;
        for (int e = 0; e < 9; e++)
            o[e] = det != 0 ? (tw_real)(d[e] / det) : (tw_real)(e % 4 == 0);
    }
}

/* z += D_j^-1 (r_j - (A z)_j) for j in E, in order (dir 1) or reversed:
 * a block Gauss-Seidel sweep over E's rows */
static void sweep_changed(tw_front *f, const tw_real *r, tw_real *z, int dir)
{
    for (int k = 0; k < f->nnew; k++) {
        const int e = dir > 0 ? k : f->nnew - 1 - k, j = f->new_list[e];
        tw_real s[3] = {r[3 * (size_t)j], r[3 * (size_t)j + 1], r[3 * (size_t)j + 2]};
        for (int b = f->row_ptr[j]; b < f->row_ptr[j + 1]; b++) {
            const tw_real *a = f->val + 9 * (size_t)b, *x = z + 3 * (size_t)f->col[b];
            for (int d = 0; d < 3; d++)
                s[d] -= a[3 * d] * x[0] + a[3 * d + 1] * x[1] + a[3 * d + 2] * x[2];
        }
        tw_real dz[3];
        tw_block_jacobi_product(f->new_dinv + 9 * (size_t)e, s, dz);
        for (int d = 0; d < 3; d++) z[3 * (size_t)j + d] += dz[d];
    }
}

/* z = B r (above); ctx is the front. The signature of tw_solver_work.precond. */
static void lagged_apply(void *ctx, const tw_real *r, tw_real *z)
{
    tw_front *f = ctx;
    const int n = f->nfree;
    /* Gauss-Seidel over E from z = 0, then the residual r - A z (z lives
     * on E: the rows of E's neighbours, through A's symmetry) */
    tw_real *zs = f->zs, *r1 = z;
    memset(zs, 0, 3 * (size_t)n * sizeof *zs);
    sweep_changed(f, r, zs, 1);
    memcpy(r1, r, 3 * (size_t)n * sizeof *r1);
    for (int k = 0; k < f->nnew; k++) {
        const int j = f->new_list[k];
        const tw_real *x = zs + 3 * (size_t)j;
        for (int b = f->row_ptr[j]; b < f->row_ptr[j + 1]; b++) {
            const tw_real *a = f->val + 9 * (size_t)b; /* A_jc = A_cj^T */
            tw_real *y = r1 + 3 * (size_t)f->col[b];
            for (int d = 0; d < 3; d++)
                y[d] -= a[d] * x[0] + a[3 + d] * x[1] + a[6 + d] * x[2];
        }
    }
    /* the anchor's cycle through T */
    memset(f->ra, 0, 3 * (size_t)f->a_n * sizeof *f->ra);
    for (int i = 0; i < n; i++)
        for (int q = f->t_ptr[i]; q < f->t_ptr[i + 1]; q++) {
            tw_real *ra = f->ra + 3 * (size_t)f->t_col[q];
            const tw_real w = f->t_w[q];
            for (int d = 0; d < 3; d++)
                ra[d] += w * r1[3 * (size_t)i + d];
        }
    tw_amg_apply(f->amg, f->ra, f->za);
    for (int i = 0; i < n; i++) {
        tw_real s[3] = {0, 0, 0};
        for (int q = f->t_ptr[i]; q < f->t_ptr[i + 1]; q++) {
            const tw_real *za = f->za + 3 * (size_t)f->t_col[q];
            const tw_real w = f->t_w[q];
            for (int d = 0; d < 3; d++)
                s[d] += w * za[d];
        }
        for (int d = 0; d < 3; d++)
            z[3 * (size_t)i + d] = zs[3 * (size_t)i + d] + s[d];
    }
    /* Gauss-Seidel over E backwards: the cycle stays symmetric */
    sweep_changed(f, r, z, -1);
}

/* The step's multigrid: the anchor's own (updated with the step's matrix)
 * on the front it was set up for; after a switch the lagged one while it
 * serves, else one set up for this front. Returns the preconditioner, or
 * NULL (block-Jacobi) when none could be set up. */
static void (*step_multigrid(tw_front *f, const tw_bsr *A, const tw_filter *filter))(void *, const tw_real *,
                                                                                    tw_real *)
{
    double c0 = cpu_ms();
    if (f->amg && f->lagged) {
        const int worse = f->a_iterations > 0 && f->last_iterations > LAG_ITERATIONS * f->a_iterations;
        if (!f->lag || worse || f->lag_steps >= LAG_STEPS || (!f->t_valid && anchor_transfer(f)))
            drop_anchor(f);
    }
    if (!f->amg) {
        if (anchor_alloc(f) != TW_OK)
            return NULL;
        f->amg = tw_amg_create(A, f->Xr, filter, NULL);
        if (!f->amg)
            return NULL;
        memcpy(f->a_rid, f->rid, (size_t)f->nv * sizeof *f->a_rid);
        memset(f->a_changed, 0, (size_t)f->nv);
        f->a_n = f->nfree;
        f->a_iterations = 0;
        f->lagged = 0;
    }
    double c1 = cpu_ms();
    f->prof[TW_FRONT_MS_SETUP] = c1 - c0;
    void (*pc)(void *, const tw_real *, tw_real *) = NULL;
    if (!f->lagged) {
        if (tw_amg_update(f->amg, A, filter) == TW_OK) {
            pc = tw_amg_apply;
            f->work.precond_ctx = f->amg;
        }
    } else {
        anchor_new_blocks(f);
        f->lag_steps++;
        pc = lagged_apply;
        f->work.precond_ctx = f;
    }
    f->prof[TW_FRONT_MS_UPDATE] = cpu_ms() - c1;
    return pc;
}

/* ------------------------------------------------------------- lifecycle */

void tw_front_destroy(tw_front *f)
{
    if (!f)
        return;
    free(f->par);
    free(f->hkey);
    free(f->hmid);
    free(f->X);
    free(f->x);
    free(f->v);
    free(f->pinned);
    free(f->g);
    free(f->Ke);
    free(f->active);
    free(f->since);
    free(f->act);
    free(f->used);
    free(f->on_coarse);
    free(f->valid);
    free(f->rid);
    free(f->free_list);
    free(f->exp_n);
    free(f->exp_i);
    free(f->exp_w);
    free(f->exp_stamp);
    free(f->el_n);
    free(f->el_slot);
    free(f->el_w);
    free(f->el_pos);
    free(f->in_sys);
    free(f->el_changed);
    free(f->row_redo);
    free(f->vptr);
    free(f->vcol);
    free(f->row_ptr);
    free(f->col);
    free(f->diag);
    free(f->val);
    free(f->mass);
    free(f->rhs);
    free(f->vr);
    free(f->cons);
    free(f->fr);
    free(f->elR);
    free(f->elf);
    free(f->elK);
    free(f->Xr);
    free(f->force);
    free(f->fq);
    drop_anchor(f);
    anchor_arrays_free(f);
    tw_solver_work_free(&f->work);
#ifdef TW_HAVE_CUDA
    tw_cuda_front_destroy(f->dev);
#endif
    tw_front_maps_free(&f->maps);
    free(f->xu);
    free(f->vf);
    free(f->fqf);
    free(f);
}

tw_front *tw_front_create(const tw_tetra_tree *t, const unsigned char *pinned, const tw_front_def *defp)
{
    tw_front_def def = defp ? *defp : tw_default_front_def();
    if (!t) {
        tw_fail(TW_ERR_INVALID, "tetra front: no tree");
        return NULL;
    }
    if (!(def.dt > 0) || def.start_level < 0 || def.start_level >= t->levels || !(def.coarsen_margin > 0) ||
        !(def.coarsen_margin <= 1) || !(def.t3 >= 0)) {
        tw_fail(TW_ERR_INVALID, "tetra front: dt %g (> 0), start level %d (0..%d), coarsen margin %g (0..1], "
                                "t3 %g (>= 0)", def.dt, def.start_level, t->levels - 1, def.coarsen_margin, def.t3);
        return NULL;
    }
    if (def.backend == TW_BACKEND_CUDA) {
        char why[256] = "";
        if (!tw_backend_usable(TW_BACKEND_CUDA, why, sizeof why)) {
            tw_fail(TW_ERR_INVALID, "tetra front: the cuda backend cannot run here: %s", why);
            return NULL;
        }
        if (def.precond == TW_PRECOND_MG) {
            tw_fail(TW_ERR_INVALID, "tetra front: the cuda backend's PCG is block-Jacobi; the multigrid "
                                    "preconditioner runs on the cpu backend only");
            return NULL;
        }
    } else if (def.backend != TW_BACKEND_CPU && def.backend != TW_BACKEND_AUTO) {
        tw_fail(TW_ERR_INVALID, "tetra front: unknown backend %d", (int)def.backend);
        return NULL;
    }
    tw_front *f = tw_calloc(1, sizeof *f, "tetra front");
    if (!f)
        return NULL;
    f->t = t;
    f->h = t->h;
    f->def = def;
    f->lag = 1;
    f->L = t->levels;
    f->ntree = t->nt;
    const tw_mesh *fm = f->h->level[f->L - 1];
    const int nv = f->nv = fm->nv;
    size_t cap = 16;
    while (cap < 2 * (size_t)nv)
        cap <<= 1;
    f->hmask = cap - 1;
    f->par = tw_malloc(2 * (size_t)nv * sizeof *f->par, "front parents");
    f->hkey = tw_calloc(cap, sizeof *f->hkey, "front edge table");
    f->hmid = tw_malloc(cap * sizeof *f->hmid, "front edge table");
    f->X = tw_malloc(3 * (size_t)nv * sizeof *f->X, "front rest");
    f->x = tw_malloc(3 * (size_t)nv * sizeof *f->x, "front positions");
    f->v = tw_calloc(3 * (size_t)nv, sizeof *f->v, "front velocities");
    f->pinned = tw_calloc((size_t)nv, 1, "front pins");
    f->g = tw_malloc(12 * (size_t)f->ntree * sizeof *f->g, "front gradients");
    f->Ke = tw_malloc(144 * (size_t)f->ntree * sizeof *f->Ke, "front element stiffness");
    f->active = tw_calloc((size_t)f->ntree, 1, "front flags");
    f->since = tw_calloc((size_t)f->ntree, sizeof *f->since, "front ages");
    f->act = tw_malloc((size_t)f->ntree * sizeof *f->act, "front list");
    f->used = tw_malloc((size_t)nv, "front used");
    f->on_coarse = tw_malloc((size_t)nv, "front T-junctions");
    f->valid = tw_calloc((size_t)nv, 1, "front valid");
    f->rid = tw_malloc((size_t)nv * sizeof *f->rid, "front reduced index");
    f->free_list = tw_malloc((size_t)nv * sizeof *f->free_list, "front free list");
    f->exp_n = tw_malloc((size_t)nv * sizeof *f->exp_n, "front expansions");
    f->exp_i = tw_malloc(4 * (size_t)nv * sizeof *f->exp_i, "front expansions");
    f->exp_w = tw_malloc(4 * (size_t)nv * sizeof *f->exp_w, "front expansions");
    f->exp_stamp = tw_calloc((size_t)nv, sizeof *f->exp_stamp, "front expansions");
    f->el_n = tw_malloc((size_t)f->ntree * sizeof *f->el_n, "front slots");
    f->el_slot = tw_malloc(MAX_SLOTS * (size_t)f->ntree * sizeof *f->el_slot, "front slots");
    f->el_w = tw_malloc(4 * MAX_SLOTS * (size_t)f->ntree * sizeof *f->el_w, "front slot weights");
    f->el_pos = tw_malloc(MAX_SLOTS * MAX_SLOTS * (size_t)f->ntree * sizeof *f->el_pos, "front slot blocks");
    f->in_sys = tw_calloc((size_t)f->ntree, 1, "front system tets");
    f->el_changed = tw_calloc((size_t)f->ntree, 1, "front system tets");
    f->row_redo = tw_calloc((size_t)nv, 1, "front rows");
    f->vptr = tw_calloc((size_t)nv + 1, sizeof *f->vptr, "front rows");
    f->mass = tw_malloc((size_t)nv * sizeof *f->mass, "front mass");
    f->rhs = tw_malloc(3 * (size_t)nv * sizeof *f->rhs, "front rhs");
    f->vr = tw_malloc(3 * (size_t)nv * sizeof *f->vr, "front reduced velocity");
    f->fr = tw_malloc(3 * (size_t)nv * sizeof *f->fr, "front reduced force");
    f->cons = tw_malloc((size_t)nv, "front constraints");
    f->Xr = tw_malloc(3 * (size_t)nv * sizeof *f->Xr, "front reduced rest positions");
    if (!f->par || !f->hkey || !f->hmid || !f->X || !f->x || !f->v || !f->pinned || !f->g || !f->Ke || !f->active ||
        !f->since || !f->act || !f->used || !f->on_coarse || !f->valid || !f->rid || !f->free_list || !f->exp_n ||
        !f->exp_i || !f->exp_w || !f->exp_stamp || !f->el_n || !f->el_slot || !f->el_w || !f->el_pos || !f->in_sys ||
        !f->el_changed || !f->row_redo || !f->vptr || !f->mass || !f->rhs ||
        !f->vr || !f->fr || !f->cons || !f->Xr) {
        tw_front_destroy(f);
        return NULL;
    }
    memcpy(f->X, fm->X, 3 * (size_t)nv * sizeof *f->X);
    memcpy(f->x, fm->X, 3 * (size_t)nv * sizeof *f->x);
    if (pinned)
        memcpy(f->pinned, pinned, (size_t)nv);
    /* parents from P; the edge table from the parents */
    for (int u = 0; u < f->h->level[0]->nv; u++)
        f->par[2 * u] = f->par[2 * u + 1] = -1;
    for (int l = 0; l + 1 < f->L; l++) {
        const tw_transfer *P = &f->h->P[l];
        for (int u = P->n_coarse; u < P->n_fine; u++) {
            const int a = P->idx[TW_HIER_ROW * (size_t)u], b = P->idx[TW_HIER_ROW * (size_t)u + 1];
            f->par[2 * (size_t)u] = a;
            f->par[2 * (size_t)u + 1] = b;
            const uint64_t key = edge_key(a, b);
            const size_t s = edge_slot(f, key);
            f->hkey[s] = key;
            f->hmid[s] = u;
        }
    }
    for (int id = 0; id < f->ntree; id++) {
        const int l = tree_level(f, id);
        double g[4][3];
        tw_tet_gradients(f->h->level[l]->X, tree_tet(f, id), g);
        memcpy(f->g + 12 * (size_t)id, g, sizeof g);
        element_stiffness(f->g + 12 * (size_t)id, t->vol[id], t->C + 36 * (size_t)id, f->Ke + 144 * (size_t)id);
    }
    const int l0 = def.adapt ? def.start_level : f->L - 1;
    for (int id = t->level_start[l0]; id < t->level_start[l0 + 1]; id++)
        f->active[id] = 1;
    for (int u = 0; u < nv; u++)
        f->valid[u] = 1; /* at rest every vertex is where every level puts it */
#ifdef TW_HAVE_CUDA
    /* auto is the CPU until the device front has run on a GPU */
    if (def.backend == TW_BACKEND_CUDA && (!(f->dev = tw_cuda_front_create(nv)) ||
                                           tw_cuda_front_tree(f->dev, f->ntree, f->g, f->Ke) != TW_OK)) {
        tw_front_destroy(f);
        return NULL;
    }
#endif
    if (rebuild(f) != TW_OK) {
        tw_front_destroy(f);
        return NULL;
    }
    return f;
}

int tw_front_active_tets(const tw_front *f) { return f->nact; }
int tw_front_mg_kind(const tw_front *f) { return f->mg_kind; }
void tw_front_set_mg_lag(tw_front *f, int lag) { f->lag = lag != 0; }
int tw_front_is_active(const tw_front *f, int id) { return f->active[id] != 0; }
double *tw_front_x(tw_front *f) { return f->x; }
double *tw_front_v(tw_front *f) { return f->v; }

tw_status tw_front_set(tw_front *f, const unsigned char *active)
{
    memcpy(f->active, active, (size_t)f->ntree);
    for (int id = 0; id < f->ntree; id++)
        f->since[id] = f->step;
    return rebuild(f);
}

/* ---------------------------------------------------------- switching */

static int in_range(const tw_front *f, int id, const double a[6], double margin)
{
    const double *lo = f->t->amin + 6 * (size_t)id, *hi = f->t->amax + 6 * (size_t)id;
    for (int m = 0; m < 6; m++)
        if (!(a[m] > margin * lo[m] && a[m] < margin * hi[m]))
            return 0;
    return 1;
}

static int first_child(const tw_front *f, int id)
{
    const int l = tree_level(f, id);
    return f->t->level_start[l + 1] + 8 * (id - f->t->level_start[l]);
}

/* Coarse to fine (eq. 6), repeated on the new children (they start with
 * their parent's strain), then fine to coarse (sec. 5.2). Returns how many
 * parents were refined and restored. */
static void update_front(tw_front *f, int *refined, int *coarsened)
{
    *refined = *coarsened = 0;
    const int finest_start = f->t->level_start[f->L - 1];
    /* a stack: children come later in tree order than their parent */
    int *stack = malloc(((size_t)f->ntree + 1) * sizeof *stack);
    if (!stack)
        return;
    int top = 0;
    for (int id = finest_start - 1; id >= 0; id--)
        if (f->active[id])
            stack[top++] = id;
    while (top > 0) {
        const int id = stack[--top];
        if (id >= finest_start || !f->active[id])
            continue;
        double a[6];
        tw_front_alpha(f, id, a);
        if (in_range(f, id, a, 1.0))
            continue;
        const int c0 = first_child(f, id);
        f->active[id] = 0;
        for (int k = 0; k < 8; k++) {
            f->active[c0 + k] = 1;
            f->since[c0 + k] = f->step;
            const int *t = tree_tet(f, c0 + k);
            for (int p = 0; p < 4; p++)
                ensure_valid(f, t[p]);
            stack[top++] = c0 + k;
        }
        (*refined)++;
    }
    free(stack);
    /* fine to coarse: parents whose 8 children are all in the front (2),
     * whose own strain is well inside its range (1, with the margin as the
     * hysteresis) and whose children strain like it (3) */
    for (int l = f->L - 2; l >= 0; l--)
        for (int id = f->t->level_start[l]; id < f->t->level_start[l + 1]; id++) {
            if (f->active[id])
                continue;
            const int c0 = first_child(f, id);
            int all = 1;
            for (int k = 0; k < 8 && all; k++)
                all = f->active[c0 + k] && f->step - f->since[c0 + k] >= f->def.hold_steps;
            if (!all)
                continue;
            double a[6];
            tw_front_alpha(f, id, a);
            if (!in_range(f, id, a, f->def.coarsen_margin))
                continue;
            double dev = 0;
            for (int k = 0; k < 8; k++) {
                double ac[6];
                tw_front_alpha(f, c0 + k, ac);
                for (int m = 0; m < 6; m++)
                    if (!(fabs(ac[m] - a[m]) <= dev))
                        dev = fabs(ac[m] - a[m]);
            }
            if (!(dev <= f->def.t3))
                continue;
            for (int k = 0; k < 8; k++)
                f->active[c0 + k] = 0;
            f->active[id] = 1;
            f->since[id] = f->step;
            (*coarsened)++;
        }
}

/* ------------------------------------------------------------- the step */

/* The corotated displacement of tet id: its rotation R (polar of F) and
 * u = R^T x - X at its four corners. */
static void rotated_displacement(const tw_front *f, int id, double R[9], double u[12])
{
    tw_front_rotated_displacement(f->x, f->X, tree_tet(f, id), f->g + 12 * (size_t)id, R, u);
}

/* Rotation, force and rotated stiffness of every active tet into the
 * scratch (the device front's kernel runs the same body, hd/front_element.h). */
static void element_pass(tw_front *f)
{
    const int nact = f->nact;
#pragma omp parallel for if (nact > 256) num_threads(TW_THREADS(f->def.threads)) schedule(static)
    for (int k = 0; k < nact; k++) {
        const int id = f->act[k];
        tw_front_element(f->x, f->X, tree_tet(f, id), f->g + 12 * (size_t)id, f->Ke + 144 * (size_t)id,
                         f->elR + 9 * (size_t)k, f->elf + 12 * (size_t)k, f->elK + 144 * (size_t)k);
    }
}

static double tet_energy(const tw_front *f, int id)
{
    double R[9], u[12], e = 0;
    rotated_displacement(f, id, R, u);
    const double *K = f->Ke + 144 * (size_t)id;
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++)
            e += 0.5 * u[i] * K[12 * i + j] * u[j];
    return e;
}

static double elastic_energy(const tw_front *f)
{
    double e = 0;
    for (int k = 0; k < f->nact; k++)
        e += tet_energy(f, f->act[k]);
    return e;
}

/* kinetic and gravity's potential energy of the free vertices */
static double vertex_energy(const tw_front *f)
{
    double e = 0;
    for (int i = 0; i < f->nfree; i++) {
        const double *x = f->x + 3 * (size_t)f->free_list[i], *v = f->v + 3 * (size_t)f->free_list[i];
        e += 0.5 * f->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        e -= f->mass[i] * (f->def.gravity[0] * x[0] + f->def.gravity[1] * x[1] + f->def.gravity[2] * x[2]);
    }
    return e;
}

double tw_front_energy(tw_front *f)
{
    return elastic_energy(f) + vertex_energy(f);
}

/* The front's rebuild with the total energy after it minus before: only the
 * tets whose elastic energy can differ are evaluated, those that left the
 * front or changed their slots or weights (before, at the old positions)
 * and those that entered or changed (after). A tet that kept its slots and
 * weights keeps its corners' positions: they are the same combination of
 * the same free vertices, which a rebuild does not move. */
static tw_status rebuild_energy(tw_front *f, double *jump)
{
    const int nact0 = f->nact;
    int *act0 = tw_malloc(((size_t)nact0 + 1) * sizeof *act0, "front energy");
    double *x0 = tw_malloc(3 * (size_t)f->nv * sizeof *x0, "front energy");
    if (!act0 || !x0) {
        free(act0);
        free(x0);
        return TW_ERR_NOMEM;
    }
    const double c0 = cpu_ms();
    memcpy(act0, f->act, (size_t)nact0 * sizeof *act0);
    memcpy(x0, f->x, 3 * (size_t)f->nv * sizeof *x0);
    const double v0 = vertex_energy(f);
    const double c1 = cpu_ms();
    tw_status r = rebuild(f);
    const double c2 = cpu_ms();
    if (r != TW_OK) {
        free(act0);
        free(x0);
        return r;
    }
    double e = vertex_energy(f) - v0;
    for (int k = 0; k < f->nact; k++)
        if (f->el_changed[f->act[k]])
            e += tet_energy(f, f->act[k]);
    double *x1 = f->x; /* the old front's tets at the old positions */
    f->x = x0;
    for (int k = 0; k < nact0; k++)
        if (!f->active[act0[k]] || f->el_changed[act0[k]])
            e -= tet_energy(f, act0[k]);
    f->x = x1;
    free(act0);
    free(x0);
    *jump = e;
    f->prof[TW_FRONT_MS_REBUILD] = c2 - c1;
    f->prof[TW_FRONT_MS_ENERGY] = cpu_ms() - c2 + c1 - c0;
    return TW_OK;
}

/* Q^T of the external forces into fq (per finest vertex; read at the free
 * ones): a vertex that is not free is the mean of its parent edge's ends,
 * so its force goes half to each, finest first (children follow parents in
 * vertex order). */
static void reduce_forces(tw_front *f)
{
    memcpy(f->fq, f->force, 3 * (size_t)f->nv * sizeof *f->fq);
    for (int u = f->nv - 1; u >= 0; u--) {
        const int a = f->par[2 * (size_t)u], b = f->par[2 * (size_t)u + 1];
        if (f->rid[u] >= 0 || a < 0)
            continue;
        for (int d = 0; d < 3; d++) {
            const double h = 0.5 * f->fq[3 * (size_t)u + d];
            f->fq[3 * (size_t)a + d] += h;
            f->fq[3 * (size_t)b + d] += h;
        }
    }
}

tw_status tw_front_set_forces(tw_front *f, const double *force)
{
    if (!force) {
        free(f->force);
        free(f->fq);
        f->force = f->fq = NULL;
        return TW_OK;
    }
    for (int i = 0; i < 3 * f->nv; i++)
        if (!isfinite(force[i]))
            return tw_fail(TW_ERR_INVALID, "tetra front: force %d of vertex %d is not finite (%g)", i % 3, i / 3,
                           force[i]);
    if (!f->force) {
        f->force = tw_malloc(3 * (size_t)f->nv * sizeof *f->force, "front forces");
        f->fq = tw_malloc(3 * (size_t)f->nv * sizeof *f->fq, "front forces");
        if (!f->force || !f->fq) {
            free(f->force);
            free(f->fq);
            f->force = f->fq = NULL;
            return TW_ERR_NOMEM;
        }
    }
    memcpy(f->force, force, 3 * (size_t)f->nv * sizeof *f->force);
    return TW_OK;
}

void tw_front_profile(const tw_front *f, double ms[TW_FRONT_MS_N])
{
    memcpy(ms, f->prof, sizeof f->prof);
}

/* The system's mass and stiffness factors (1 + h alpha, h beta + h^2). */
static double front_cm(const tw_front *f) { return 1 + f->def.dt * f->def.damping_mass; }
static double front_ck(const tw_front *f) { return f->def.dt * f->def.damping_stiffness + f->def.dt * f->def.dt; }

/* ------------------------------------------------- the scatter's walk */

/* The front's system is Q^T of its active tets' element terms: active tet
 * k's corner p enters the row of its slot sI (a free vertex) with the
 * weight W[p][sI] (the force), and with its corner q of slot sJ the row's
 * block of sJ with ck W[p][sI] W[q][sJ] (the stiffness block pq).
 * front_walk visits these contributions, zero weights left out, in one
 * order (tet, slot sI, corner p; then slot sJ, corner q), and both the
 * CPU's scatter (assemble) and the gather maps (tw_front_maps_build) take
 * them from it: the maps list the scatter's sums in the scatter's order,
 * so a gather over them is the scatter bit for bit. The walk and its
 * visitors are inlined into their callers, so that the scatter is the
 * nested loop it would be written out; a NULL visitor is not called. */
#define FRONT_WALK_INLINE static inline __attribute__((always_inline))
typedef void front_visit_force(void *ctx, int k, int p, int row, double w);
typedef void front_visit_block(void *ctx, int k, int p, int q, int b, double w);

FRONT_WALK_INLINE void front_walk(const tw_front *f, front_visit_force *force, front_visit_block *block, void *ctx)
{
    const double ck = front_ck(f);
    for (int k = 0; k < f->nact; k++) {
        const int id = f->act[k], ne = f->el_n[id];
        const int *slot = f->el_slot + MAX_SLOTS * (size_t)id;
        const unsigned short *pos = f->el_pos + MAX_SLOTS * MAX_SLOTS * (size_t)id;
        const double *W = f->el_w + 4 * MAX_SLOTS * (size_t)id;
        for (int sI = 0; sI < ne; sI++) {
            const int row = f->rid[slot[sI]];
            for (int p = 0; p < 4; p++) {
                const double wp = W[MAX_SLOTS * p + sI];
                if (wp == 0)
                    continue;
                if (force)
                    force(ctx, k, p, row, wp);
                if (!block)
                    continue;
                for (int sJ = 0; sJ < ne; sJ++) {
                    const int b = f->row_ptr[row] + pos[MAX_SLOTS * sI + sJ];
                    for (int q = 0; q < 4; q++) {
                        const double w = ck * wp * W[MAX_SLOTS * q + sJ];
                        if (w == 0)
                            continue;
                        block(ctx, k, p, q, b, w);
                    }
                }
            }
        }
    }
}

/* The scatter's visitors (ctx: the front): a contribution w fe_p added to
 * its row's force, w KR^pq to its block. */
FRONT_WALK_INLINE void scatter_force(void *ctx, int k, int p, int row, double w)
{
    tw_front *f = ctx;
    const double *fe = f->elf + 12 * (size_t)k + 3 * p;
    for (int d = 0; d < 3; d++)
        f->fr[3 * (size_t)row + d] += w * fe[d];
}

FRONT_WALK_INLINE void scatter_block(void *ctx, int k, int p, int q, int b, double w)
{
    tw_front *f = ctx;
    const double *KR = f->elK + 144 * (size_t)k + 12 * (3 * p) + 3 * q;
    tw_real *A = f->val + 9 * (size_t)b;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            A[3 * i + j] += (tw_real)(w * KR[12 * i + j]);
}

/* The host's system of the current front at its state (A, rhs and the
 * PCG's start vr): the element pass, then A = (1 + h alpha) M + (h beta +
 * h^2) Q^T K' Q and Q^T f scattered per active tet. */
static tw_status assemble(tw_front *f)
{
    const double h = f->def.dt;
    const int n = f->nfree;
    /* a failed realloc leaves the old block, still the front's to free */
    double *elR = realloc(f->elR, 9 * ((size_t)f->nact + 1) * sizeof *f->elR);
    if (elR)
        f->elR = elR;
    double *elf = realloc(f->elf, 12 * ((size_t)f->nact + 1) * sizeof *f->elf);
    if (elf)
        f->elf = elf;
    double *elK = realloc(f->elK, 144 * ((size_t)f->nact + 1) * sizeof *f->elK);
    if (elK)
        f->elK = elK;
    if (!elR || !elf || !elK)
        return tw_fail(TW_ERR_NOMEM, "tetra front: element scratch of %d tets", f->nact);
    element_pass(f);
    const double cm = front_cm(f);
    memset(f->val, 0, 9 * (size_t)f->nnzb * sizeof *f->val);
    memset(f->fr, 0, 3 * (size_t)n * sizeof *f->fr);
    front_walk(f, scatter_force, scatter_block, f);
    if (f->force)
        reduce_forces(f);
    for (int i = 0; i < n; i++) {
        tw_real *A = f->val + 9 * (size_t)f->diag[i];
        const double m = f->mass[i];
        const double *v = f->v + 3 * (size_t)f->free_list[i];
        for (int d = 0; d < 3; d++) {
            A[4 * d] += (tw_real)(cm * m);
            double fe = f->fr[3 * i + d] + m * f->def.gravity[d];
            if (f->force)
                fe += f->fq[3 * (size_t)f->free_list[i] + d];
            f->rhs[3 * i + d] = (tw_real)(m * v[d] + h * fe);
            f->vr[3 * i + d] = f->cons[i] ? 0 : (tw_real)v[d];
        }
    }
    return TW_OK;
}

tw_status tw_front_assemble(tw_front *f) { return assemble(f); }

/* ------------------------------------------------------ the gather maps */

/* The walk's contributions as lists (target, code, weight) in its order;
 * counted only while the lists are NULL. */
typedef struct front_list {
    long n;
    int *target, *code;
    double *w;
} front_list;

static inline void front_list_add(front_list *l, int target, int code, double w)
{
    if (l->target) {
        l->target[l->n] = target;
        l->code[l->n] = code;
        l->w[l->n] = w;
    }
    l->n++;
}

/* The maps' visitors (ctx: front_list[2], the blocks' and the forces'). */
FRONT_WALK_INLINE void list_block(void *ctx, int k, int p, int q, int b, double w)
{
    front_list_add((front_list *)ctx, b, tw_front_block_code(k, p, q), w);
}

FRONT_WALK_INLINE void list_force(void *ctx, int k, int p, int row, double w)
{
    front_list_add((front_list *)ctx + 1, row, tw_front_force_code(k, p), w);
}

/* A CSR over ntarget targets of the listed contributions, each target's in
 * list order (a stable counting sort). */
static tw_status front_csr(const front_list *l, int ntarget, int **ptr, int **ocode, double **ow)
{
    const long c = l->n;
    const int *target = l->target, *code = l->code;
    const double *w = l->w;
    *ptr = tw_calloc((size_t)ntarget + 1, sizeof **ptr, "front gather map");
    *ocode = tw_malloc((size_t)(c ? c : 1) * sizeof **ocode, "front gather map");
    *ow = tw_malloc((size_t)(c ? c : 1) * sizeof **ow, "front gather map");
    int *fill = tw_malloc(((size_t)ntarget + 1) * sizeof *fill, "front gather map");
    if (!*ptr || !*ocode || !*ow || !fill) {
        free(fill);
        return TW_ERR_NOMEM;
    }
    for (long e = 0; e < c; e++)
        (*ptr)[target[e] + 1]++;
    for (int b = 0; b < ntarget; b++)
        (*ptr)[b + 1] += (*ptr)[b];
    memcpy(fill, *ptr, ((size_t)ntarget + 1) * sizeof *fill);
    for (long e = 0; e < c; e++) {
        const int at = fill[target[e]]++;
        (*ocode)[at] = code[e];
        (*ow)[at] = w[e];
    }
    free(fill);
    return TW_OK;
}

tw_status tw_front_maps_build(const tw_front *f, tw_front_maps *m)
{
    memset(m, 0, sizeof *m);
    const int n = f->nfree, nact = f->nact, nv = f->nv;
    if (nact >= (1 << 26))
        return tw_fail(TW_ERR_INVALID, "tetra front: %d active tets, more than the gather codes hold (2^26)", nact);
    front_list l[2] = {{0, NULL, NULL, NULL}, {0, NULL, NULL, NULL}}; /* the blocks', the forces' */
    front_walk(f, list_force, list_block, l);
    if (l[0].n > INT32_MAX || l[1].n > INT32_MAX)
        return tw_fail(TW_ERR_INVALID, "tetra front: %ld block and %ld force contributions, more than an int counts",
                       l[0].n, l[1].n);
    for (int i = 0; i < 2; i++) {
        const size_t c = (size_t)l[i].n + 1;
        l[i].target = tw_malloc(c * sizeof *l[i].target, "front gather map");
        l[i].code = tw_malloc(c * sizeof *l[i].code, "front gather map");
        l[i].w = tw_malloc(c * sizeof *l[i].w, "front gather map");
        l[i].n = 0;
    }
    int *uidx = tw_malloc((size_t)nv * sizeof *uidx, "front gather map");
    m->nact = nact;
    m->n = n;
    m->nnzb = f->nnzb;
    m->act = tw_malloc(((size_t)nact + 1) * sizeof *m->act, "front gather map");
    m->corner = tw_malloc(4 * ((size_t)nact + 1) * sizeof *m->corner, "front gather map");
    m->used = tw_malloc((size_t)nv * sizeof *m->used, "front gather map");
    m->Xu = tw_malloc(3 * (size_t)nv * sizeof *m->Xu, "front gather map");
    m->free_used = tw_malloc(((size_t)n + 1) * sizeof *m->free_used, "front gather map");
    m->mass = tw_malloc(((size_t)n + 1) * sizeof *m->mass, "front gather map");
    m->held = tw_malloc((size_t)n + 1, "front gather map");
    m->diag = tw_malloc(((size_t)n + 1) * sizeof *m->diag, "front gather map");
    tw_status r = TW_ERR_NOMEM;
    if (!l[0].target || !l[0].code || !l[0].w || !l[1].target || !l[1].code || !l[1].w || !uidx || !m->act ||
        !m->corner || !m->used || !m->Xu || !m->free_used || !m->mass || !m->held || !m->diag)
        goto done;
    m->nu = 0;
    for (int u = 0; u < nv; u++) {
        uidx[u] = -1;
        if (!f->used[u])
            continue;
        uidx[u] = m->nu;
        memcpy(m->Xu + 3 * (size_t)m->nu, f->X + 3 * (size_t)u, 3 * sizeof *m->Xu);
        m->used[m->nu++] = u;
    }
    for (int k = 0; k < nact; k++) {
        const int *t = tree_tet(f, f->act[k]);
        m->act[k] = f->act[k];
        for (int p = 0; p < 4; p++)
            m->corner[4 * (size_t)k + p] = uidx[t[p]];
    }
    for (int i = 0; i < n; i++) {
        m->free_used[i] = uidx[f->free_list[i]];
        m->mass[i] = f->mass[i];
        m->held[i] = f->cons[i];
        m->diag[i] = f->diag[i];
    }
    front_walk(f, list_force, list_block, l);
    if ((r = front_csr(&l[0], f->nnzb, &m->blk_ptr, &m->blk_code, &m->blk_w)) != TW_OK ||
        (r = front_csr(&l[1], n, &m->frc_ptr, &m->frc_code, &m->frc_w)) != TW_OK)
        goto done;
    m->cm = front_cm(f);
    m->h = f->def.dt;
    memcpy(m->gravity, f->def.gravity, sizeof m->gravity);
    r = TW_OK;
done:
    for (int i = 0; i < 2; i++) {
        free(l[i].target);
        free(l[i].code);
        free(l[i].w);
    }
    free(uidx);
    if (r != TW_OK)
        tw_front_maps_free(m);
    return r;
}

void tw_front_element_data(const tw_front *f, const double **g, const double **Ke)
{
    *g = f->g;
    *Ke = f->Ke;
}

void tw_front_system(const tw_front *f, const tw_real **val, const tw_real **rhs, const tw_real **vr,
                     const double **fq)
{
    *val = f->val;
    *rhs = f->rhs;
    *vr = f->vr;
    *fq = f->force ? f->fq : NULL;
}

tw_status tw_front_step(tw_front *f, tw_front_stats *st)
{
    tw_front_stats s;
    memset(&s, 0, sizeof s);
    const double h = f->def.dt;
    double t0 = tw_now_ms(), c0 = cpu_ms(), c1 = c0;
    memset(f->prof, 0, sizeof f->prof);
    if (f->def.adapt) {
        update_front(f, &s.refined, &s.coarsened);
        c1 = cpu_ms();
        f->prof[TW_FRONT_MS_DECIDE] = c1 - c0;
        if (s.refined || s.coarsened) {
            /* the old front's lists are unchanged until the rebuild, and
             * the update only wrote vertices outside it */
            tw_status r = rebuild_energy(f, &s.energy_jump);
            if (r != TW_OK)
                return r;
            s.rebuilt = 1;
        }
    }
    c0 = cpu_ms();
    double t1 = tw_now_ms();
    s.ms_front = t1 - t0;
    const int n = f->nfree;
    tw_solve_result r;
    double t2 = t1; /* set by device_step or below; initialised for clang's flow analysis */
    f->on_device = 0;
#ifdef TW_HAVE_CUDA
    if (f->dev) {
        /* the element pass, the assembly and the PCG on the device */
        tw_status ds = device_step(f, &r, &t2);
        if (ds != TW_OK)
            return ds;
        s.ms_system = t2 - t1;
        f->prof[TW_FRONT_MS_ASSEMBLE] = cpu_ms() - c0; /* the state's packing */
        f->mg_kind = 0;
        f->on_device = 1;
    }
#endif
    if (!f->on_device) {
        tw_status as = assemble(f);
        if (as != TW_OK)
            return as;
        t2 = tw_now_ms();
        s.ms_system = t2 - t1;
        c1 = cpu_ms();
        f->prof[TW_FRONT_MS_ASSEMBLE] = c1 - c0;
        tw_bsr A;
        memset(&A, 0, sizeof A);
        A.n = n;
        A.nnzb = f->nnzb;
        A.row_ptr = f->row_ptr;
        A.col = f->col;
        A.diag = f->diag;
        A.val = f->val;
        A.threads = f->def.threads;
        tw_filter filter = {f->cons, NULL};
        /* multigrid (TW_PRECOND_AUTO: from TW_FRONT_MG_MIN_TETS active tets
         * on), rebuilt with the pattern */
        const int mg = f->def.precond == TW_PRECOND_MG ||
                       (f->def.precond == TW_PRECOND_AUTO && f->nact >= TW_FRONT_MG_MIN_TETS);
        f->work.precond = NULL;
        if (mg)
            f->work.precond = step_multigrid(f, &A, &filter);
        else if (f->amg)
            drop_anchor(f);
        f->mg_kind = f->work.precond ? 1 + f->lagged : 0;
        c1 = cpu_ms();
        r = tw_pcg(&A, f->rhs, f->vr, &filter, f->def.cg_tolerance, f->def.cg_max_iterations, 0, &f->work);
        f->prof[TW_FRONT_MS_PCG] = cpu_ms() - c1;
    }
    f->work.precond = NULL;
    s.cg_iterations = r.iterations;
    f->last_iterations = r.iterations;
    if (f->amg && !f->lagged)
        f->a_iterations = r.iterations; /* the reference of the lagged steps to come */
    s.cg_residual = r.residual;
    s.ms_solve = tw_now_ms() - t2;
    for (int i = 0; i < n; i++) {
        const int u = f->free_list[i];
        for (int d = 0; d < 3; d++) {
            const double vd = f->cons[i] ? 0 : (double)f->vr[3 * i + d];
            if (!isfinite(vd))
                return tw_fail(TW_ERR_DIVERGED, "tetra front: step %ld: vertex %d's velocity is not finite",
                               f->step, u);
            f->v[3 * (size_t)u + d] = vd;
            f->x[3 * (size_t)u + d] += h * vd;
        }
    }
    sync_dependent(f);
    f->step++;
    s.active_tets = f->nact;
    s.free_vertices = n;
    s.hanging_vertices = f->nhang;
    if (st)
        *st = s;
    return TW_OK;
}

void tw_front_positions(const tw_front *f, double *x)
{
    /* parents precede children in vertex order */
    for (int u = 0; u < f->nv; u++) {
        if (f->used[u]) {
            memcpy(x + 3 * (size_t)u, f->x + 3 * (size_t)u, 3 * sizeof *x);
            continue;
        }
        const int a = f->par[2 * (size_t)u], b = f->par[2 * (size_t)u + 1];
        for (int d = 0; d < 3; d++)
            x[3 * (size_t)u + d] = 0.5 * (x[3 * (size_t)a + d] + x[3 * (size_t)b + d]);
    }
}

/* The largest distance of a front vertex on an active tet (not its corner)
 * from that tet's linear interpolation at its rest barycentric coordinates. */
static double tjunction_tet(const tw_front *f, int id)
{
    const int l = tree_level(f, id);
    const int *t = tree_tet(f, id);
    const double *p[4];
    for (int k = 0; k < 4; k++)
        p[k] = f->X + 3 * (size_t)t[k];
    const double det = tw_tet_det(p[0], p[1], p[2], p[3]);
    double worst = 0;
    /* the candidates: every front vertex born after level l; those on the tet's
     * closure have barycentric coordinates in [0, 1] with one of them 0 */
    for (int u = f->h->level[l]->nv; u < f->nv; u++) {
        if (!f->used[u])
            continue;
        const double *X = f->X + 3 * (size_t)u;
        const double b[4] = {tw_tet_det(X, p[1], p[2], p[3]) / det, tw_tet_det(p[0], X, p[2], p[3]) / det,
                             tw_tet_det(p[0], p[1], X, p[3]) / det, tw_tet_det(p[0], p[1], p[2], X) / det};
        int inside = 1, on_face = 0;
        for (int k = 0; k < 4; k++) {
            if (b[k] < -1e-12)
                inside = 0;
            if (fabs(b[k]) <= 1e-12)
                on_face = 1;
        }
        if (!inside || !on_face)
            continue;
        double e2 = 0;
        for (int d = 0; d < 3; d++) {
            double s = 0;
            for (int k = 0; k < 4; k++)
                s += b[k] * f->x[3 * (size_t)t[k] + d];
            e2 += (s - f->x[3 * (size_t)u + d]) * (s - f->x[3 * (size_t)u + d]);
        }
        if (!(sqrt(e2) <= worst))
            worst = sqrt(e2);
    }
    return worst;
}

double tw_front_tjunction_error(const tw_front *f)
{
    double worst = 0;
    for (int k = 0; k < f->nact; k++)
        if (tree_level(f, f->act[k]) < f->L - 1) {
            const double e = tjunction_tet(f, f->act[k]);
            if (!(e <= worst))
                worst = e;
        }
    return worst;
}
