/* Space- and time-adaptive multiresolution simulation (Debunne, Desbrun,
 * Cani and Barr 2001, §2-4). multires.h says what the parts are; this file
 * says how they fit.
 *
 * A frame: the nodes the tool may meet are found (§4.2), merges free work,
 * splits spend it while the budget allows (§3.4), each active node gets its
 * step level, the interface plan is rebuilt when the active set changed,
 * forced merges bring a plan that passes the budget back under it, then the
 * frame runs 2^M substeps of the finest step.
 *
 * Energy. Each active node owns a quarter of the energy of each of its
 * tets; an interface node's position is a linear function of active ones
 * (the plan), so the forces are the gradient of that one energy when an
 * interface node's force goes back to its sources by the transpose of the
 * interpolation. Feeding interface nodes one way only (as the paper
 * describes) is not a gradient: undamped, it pumps energy into a cube with
 * one node split.
 *
 * Time. A tet steps with the finest step level of the active nodes its
 * forces reach (directly or through interface nodes): at substep s it is
 * evaluated when s is a multiple of 2^(M-k), and kicks with its own step
 * (asynchronous variational integrators, Lew, Marsden, Ortiz and West
 * 2003); every active node drifts by the finest step. The work of a frame,
 * sum over tets of 2^k, is known before it runs. A node's own step level
 * (eq. 10, the speed change, the tool's sampling) sets when its filter
 * (eq. 11) and its speed test run. Moving a node by its own step while its
 * neighbours wait gains energy; per-tet kicks keep it.
 *
 * The interface plan orders the interface nodes so that each is
 * interpolated from a tet whose nodes are all current: active, pinned, or
 * plan entries earlier in the plan. It is built in passes: a node joins
 * when some other level's tet containing it has every node of non-zero
 * weight current; among such levels the one putting the most weight on
 * active nodes wins (the nearest level on a tie). Where every such tet
 * reads an inactive node, that node joins the plan as an auxiliary entry
 * when it can be filled. The nodes no pass fills read each other in cycles
 * (counted as stale): their equations are solved once per plan for rows
 * over filled nodes, so that every interface value is a fixed linear
 * function of the active nodes and the transpose gives the gradient.
 *
 * Steps. An active node's step level is the finest of its own Courant
 * limit, the stiffness it carries through the interface (finer tets
 * reached through interface nodes), its speed change and the tool's
 * sampling. */
#include "multires.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fem.h"
#include "hd/hd.h"
#include "mesh.h"

#define MR_MAX_DT_LEVEL 20
#define MR_AUX_ROUNDS 8 /* how deep auxiliary nodes chain before a node is left stale */
/* A substep kicks its tets on threads from this many on (about 90 us of kicks
 * on one core): a fork and a barrier each substep cost microseconds on idle
 * cores and can cost a scheduler slice on busy ones, so only the larger
 * substeps share (about 1 in 10 of the mr-liver scene's, with 30 % of its
 * tet evaluations). */
#define MR_PAR_TETS 1024

/* The tet kernel's loops are short and fixed: unrolled, its small arrays
 * live in registers (-O2 does not unroll them). */
#if defined(__GNUC__)
#define TW_MR_UNROLL _Pragma("GCC unroll 16")
#else
#define TW_MR_UNROLL
#endif

/* The kick four tets at a time in AVX's four-double vectors where the CPU
 * has them and the OS saves their registers (x86-64 with GCC or clang: a
 * function built for AVX, chosen at run time by __builtin_cpu_supports,
 * which checks both); elsewhere, other CPUs and compilers included, the
 * one- and two-tet kicks alone; two tets at a time where the compiler has
 * vector types (GCC and clang), else one */
#if defined(__GNUC__) && defined(__x86_64__)
#define TW_MR_QUADS 1
#else
#define TW_MR_QUADS 0
#endif
#if defined(__GNUC__)
#define TW_MR_PAIRS 1
#else
#define TW_MR_PAIRS 0
#endif

typedef struct mr_level {
    const tw_mesh *m;
    int nv, nt;
    double *g;          /* 12 per tet */
    double *vol;        /* nt: the volume times the level's stiffness scale (def.level_stiffness),
                           m^3: every force, stiffness and energy reads it; the mass does not */
    double stiff;       /* the level's stiffness scale */
    double *mass;       /* nv, kg */
    double *h;          /* nv: smallest altitude of the node's tets, m */
    double *h_step;     /* nv: the length its Courant limit uses: h, less where its mass is
                           less than its lumped mass */
    double *dt_limit;   /* nv: the largest step its Courant limit allows, s */
    double *h_edge;     /* nv: distance to its nearest neighbour, m (gamma's h, eq. 9: a sliver's
                           altitude would make its nodes look badly sampled) */
    double *Kd;         /* 9 per node: the linear stiffness's diagonal block at rest */
    int *vt_ptr, *vt;   /* node -> e*4 + p */
    int *nb_ptr, *nb;   /* node -> neighbour nodes */
    int *ch_ptr, *ch;   /* node -> children on the next finer level (NULL on the finest) */
    int *parent;        /* node -> parent on the next coarser level (NULL on the coarsest) */
    tw_transfer *loc;   /* per level k: this level's vertices located in level k's tets */
    int node0;          /* the level's first node in the simulation's pools */
    double *x, *v, *f;  /* 3 nv: positions, velocities (views into the pools), the frame's
                           mean internal force */
    double *v_tick;     /* 3 nv: velocity at the node's last own step (speed change) */
    double *detail;     /* 6 nv: at a split, the node's x and v less the finer level's
                           interpolation of them; a merge adds it back */
    double *gamma;      /* nv, m */
    unsigned char *state, *pinned, *boundary;
    signed char *dtl;   /* time-step level of each active node */
    signed char *courant_level, *boost;
    signed char *eff_level; /* active nodes: the step level their stiffness through the interface
                               needs (effective_levels) */
    double *normal;     /* 3 nv: outward rest normal of boundary nodes */
    double *tet_f;      /* 12 per tet: the last evaluation's forces */
    signed char *tlev;  /* nt: each tet's level as the frame's schedule found it (of the
                           tets in dl) */
    int *dl, dn;        /* the tets with an active node, ascending (active_tets) */
    unsigned char *tmark; /* nt: active_tets' marks, all 0 between calls */
    unsigned char *tool_hit;
    double *tool_f;     /* 3 nv: a tool node's internal impulse over its current step */
    double *tool_last;  /* 3 nv: its internal force over its last step, N */
    unsigned char *tool_held; /* 1: the tool held it in its current step, 2: in its last */
    double *imp;        /* 3 nv: the substep's internal impulses, interface nodes' passed on
                           (a view into the pool) */
    signed char *ilvl;  /* interface nodes: the finest step level among the active nodes
                           they are interpolated from (through other interface nodes too) */
    signed char *psrc;  /* plan entries: the level they are filled from (-1: a cycle's row, or
                           not in the plan) */
    unsigned char *inplan; /* 1: an entry of the plan (an interface node, or an auxiliary
                              inactive node an interface node is filled through) */
    signed char *need;  /* interface nodes: the finest tet level that reads them, directly or
                           through later plan entries (-1: none); the frame's substeps
                           interpolate a node only before a substep that evaluates its readers */
} mr_level;

/* A tet due in the frame: level l, tet e, and its kick scale (its step times
 * its active nodes' share of its energy). */
typedef struct mr_due {
    int level, tet;
    double scale;
} mr_due;

typedef struct mr_plan {
    int level, node, src;
} mr_plan;

/* Four due tets as the substeps read them, due tets 4 q .. 4 q + 3 in
 * record q, lane by lane: each value's lanes are adjacent, so that the
 * two- and four-tet kicks load them as one vector. Per tet: its nodes'
 * offsets in the pools (3 times the pool index), its gradients, volume
 * and kick scale. */
#define MR_KICK_LANES 4
typedef struct mr_kick {
    int n[4][MR_KICK_LANES];
    double g[12][MR_KICK_LANES];
    double vol[MR_KICK_LANES], scale[MR_KICK_LANES];
} mr_kick;

/* A plan entry as the substeps read it: the node and its sources as pool
 * indices, the weights, and the detail it adds (mr_no_detail: none). */
typedef struct mr_interp {
    int node, src[TW_HIER_ROW];
    int pinned;
    int row; /* >= 0: a cycle's node, its row's index (src and w unused) */
    double w[TW_HIER_ROW];
    const double *detail;
} mr_interp;

static const double mr_no_detail[6] = {0, 0, 0, 0, 0, 0};

struct tw_multires {
    tw_multires_def def;
    tw_hierarchy *h;
    int L;
    mr_level *lv;
    double lam, mu, wave;
    int M;
    int tool_level; /* the step level that samples the tool's force at def.tool_dt or finer */
    double time;
    long frame;
    mr_plan *plan;
    int plan_n, stale; /* the last `stale` plan entries are the cycles' nodes, with rows */
    int *srow_ptr, *srow_src, srow_n; /* their rows over pool nodes filled before them */
    double *srow_w, *srow_c;          /* the rows' weights; 6 per row: the constant x, v parts */
    int dirty;
    int tets_stale; /* the active set changed since active_tets listed the levels' tets */
    int has_tool;
    int tool_touched; /* the tool held a node in the last frame */
    int margin_on;    /* def.tool_margin applies this frame: the tool moves or touches */
    tw_mr_tool tool;
    double tool_c0[3], tool_c1[3]; /* the tool's centre at the frame's start and end */
    double budget;
    /* the frame's schedule, kept between frames (no allocation a frame once grown) */
    mr_due *due;      /* tets by level: level k from due_ptr[k] to due_ptr[k + 1] */
    int due_cap, *due_ptr;
    mr_kick *kick;    /* the due tets packed, in the same order, MR_KICK_LANES a record */
    int kick_cap;
    mr_interp *ip;    /* the plan packed, in plan order */
    int ip_cap;
    /* every level's nodes in one index space: x, v, the substep's impulses and the
       rest positions (3 per node) */
    double *xs, *vs, *imps, *Xs;
    double *us; /* 3 per node: the displacements xs - Xs, as the substeps keep them for the
                   kicks and the interpolation (one array to gather, not two) */
    double *eff_rs, *eff_sw; /* effective_levels' scratch: 3 and 1 per node */
    double *eff_cs;          /* and the damping's row sums, 3 per node (NULL undamped) */
    unsigned char *was_state; /* per pool node: the state at the frame's start */
    signed char *was_src;     /* per pool node: the plan source level at the frame's start */
    int nodes;
    int *act, act_cap, *act_ptr; /* active nodes of level l: act[act_ptr[l] .. act_ptr[l + 1]) */
    int *sub, sub_cap, *sub_ptr; /* plan entries in plan order whose need is >= k:
                                    sub[sub_ptr[k] .. sub_ptr[k + 1]) */
    /* the kicks on threads: each due tet's forces (12, unscaled, in due order), and per
       pool node its due tets' entries 4 b + p in ascending b, which a gather adds in the
       serial kick's order: inc[inc_ptr[n] .. inc_ptr[n + 1]) */
    int threads;                 /* this frame's team: 1 runs the serial kick */
    double *kf;
    int kf_cap, *inc, inc_cap, *inc_ptr, *inc_fill;
    int *gnode, *gnode_ptr; /* the due tets' nodes, those of tet levels >= k first:
                               gnode[0 .. gnode_ptr[k]) */
    signed char *gk;        /* per pool node: its finest due tet level (-1: none) */
    int lanes;              /* tets the kick evaluates side by side (def.kick_lanes, or the most the CPU runs) */
};

tw_multires_def tw_default_multires_def(void)
{
    tw_multires_def d;
    memset(&d, 0, sizeof d);
    d.youngs = 1e5;
    d.poisson = 0.3;
    d.density = 1000;
    d.gravity[2] = -9.81;
    d.strain = TW_MR_GREEN;
    d.frame_dt = 1.0 / 30;
    d.max_dt_level = 0;
    d.courant_factor = 0.5;
    d.semi_implicit = 0;
    d.speed_change = 0.05;
    d.gamma_min = 1e-4;
    d.gamma_max = 4e-4;
    d.work_budget = 0;
    d.start_level = 0;
    d.tool_refine = 1;
    d.tool_dt = 1e-3;
    d.threads = 1;
    return d;
}

/* ---- small 3x3 helpers (row-major, double) */

static void m3_inverse(const double *A, double *inv)
{
    const double c0 = A[4] * A[8] - A[5] * A[7], c1 = A[5] * A[6] - A[3] * A[8], c2 = A[3] * A[7] - A[4] * A[6];
    const double det = A[0] * c0 + A[1] * c1 + A[2] * c2, id = 1 / det;
    inv[0] = c0 * id;
    inv[1] = (A[2] * A[7] - A[1] * A[8]) * id;
    inv[2] = (A[1] * A[5] - A[2] * A[4]) * id;
    inv[3] = c1 * id;
    inv[4] = (A[0] * A[8] - A[2] * A[6]) * id;
    inv[5] = (A[2] * A[3] - A[0] * A[5]) * id;
    inv[6] = c2 * id;
    inv[7] = (A[1] * A[6] - A[0] * A[7]) * id;
    inv[8] = (A[0] * A[4] - A[1] * A[3]) * id;
}

/* ---- per-level precompute */

static tw_status csr_from_pairs(int n, int count, const int *key, const int *val, int **ptr_out, int **idx_out,
                                const char *what)
{
    int *ptr = tw_calloc((size_t)n + 1, sizeof *ptr, what);
    int *idx = tw_malloc(sizeof *idx * ((size_t)count + 1), what);
    if (!ptr || !idx) {
        free(ptr);
        free(idx);
        return TW_ERR_NOMEM;
    }
    for (int k = 0; k < count; k++)
        ptr[key[k] + 1]++;
    for (int i = 0; i < n; i++)
        ptr[i + 1] += ptr[i];
    int *fill = tw_malloc(sizeof *fill * ((size_t)n + 1), what);
    if (!fill) {
        free(ptr);
        free(idx);
        return TW_ERR_NOMEM;
    }
    memcpy(fill, ptr, sizeof *fill * ((size_t)n + 1));
    for (int k = 0; k < count; k++)
        idx[fill[key[k]]++] = val[k];
    free(fill);
    *ptr_out = ptr;
    *idx_out = idx;
    return TW_OK;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static tw_status level_build(tw_multires *m, int l)
{
    mr_level *L = &m->lv[l];
    const tw_mesh *me = m->h->level[l];
    L->m = me;
    L->stiff = l < 8 && m->def.level_stiffness[l] > 0 ? m->def.level_stiffness[l] : 1;
    L->nv = me->nv;
    L->nt = me->nt;
    const size_t nv = (size_t)me->nv, nt = (size_t)me->nt;
    L->g = tw_malloc(sizeof(double) * 12 * nt, "multires gradients");
    L->vol = tw_malloc(sizeof(double) * nt, "multires volumes");
    L->mass = tw_calloc(nv, sizeof(double), "multires masses");
    L->h = tw_malloc(sizeof(double) * nv, "multires node sizes");
    L->h_step = tw_malloc(sizeof(double) * nv, "multires node step sizes");
    L->h_edge = tw_malloc(sizeof(double) * nv, "multires node spacings");
    L->dt_limit = tw_malloc(sizeof(double) * nv, "multires node step limits");
    L->Kd = tw_calloc(9 * nv, sizeof(double), "multires node Jacobians");
    /* x, v and imp are views into the simulation's pools (the substeps' kernels
       address every level's nodes by one index) */
    L->x = m->xs + 3 * (size_t)L->node0;
    L->v = m->vs + 3 * (size_t)L->node0;
    L->imp = m->imps + 3 * (size_t)L->node0;
    memcpy(m->Xs + 3 * (size_t)L->node0, me->X, sizeof(double) * 3 * nv);
    L->f = tw_calloc(3 * nv, sizeof(double), "multires forces");
    L->v_tick = tw_calloc(3 * nv, sizeof(double), "multires tick velocities");
    L->detail = tw_calloc(6 * nv, sizeof(double), "multires details");
    L->gamma = tw_calloc(nv, sizeof(double), "multires gamma");
    L->state = tw_calloc(nv, 1, "multires states");
    L->pinned = tw_calloc(nv, 1, "multires pins");
    L->boundary = tw_calloc(nv, 1, "multires boundary");
    L->dtl = tw_calloc(nv, 1, "multires dt levels");
    L->courant_level = tw_calloc(nv, 1, "multires Courant levels");
    L->boost = tw_calloc(nv, 1, "multires dt boosts");
    L->eff_level = tw_calloc(nv, 1, "multires effective step levels");
    L->normal = tw_calloc(3 * nv, sizeof(double), "multires normals");
    L->tet_f = tw_malloc(sizeof(double) * 12 * nt, "multires tet forces");
    L->tlev = tw_malloc(nt + 1, "multires tet levels");
    L->dl = tw_malloc(sizeof(int) * (nt + 1), "multires tet list");
    L->tmark = tw_calloc(nt + 1, 1, "multires tet marks");
    L->tool_hit = tw_calloc(nv, 1, "multires tool contacts");
    L->tool_f = tw_calloc(3 * nv, sizeof(double), "multires tool impulses");
    L->tool_last = tw_calloc(3 * nv, sizeof(double), "multires tool forces");
    L->tool_held = tw_calloc(nv, 1, "multires tool holds");
    L->ilvl = tw_calloc(nv, 1, "multires interface levels");
    L->need = tw_calloc(nv, 1, "multires interface needs");
    L->inplan = tw_calloc(nv, 1, "multires plan flags");
    L->psrc = tw_malloc(nv + 1, "multires plan sources");
    L->loc = tw_calloc((size_t)m->L, sizeof(tw_transfer), "multires locations");
    if (!L->g || !L->vol || !L->mass || !L->h || !L->h_step || !L->dt_limit || !L->h_edge || !L->Kd || !L->x || !L->v || !L->f || !L->v_tick || !L->detail || !L->gamma || !L->state ||
        !L->pinned || !L->boundary || !L->dtl || !L->courant_level || !L->boost || !L->eff_level || !L->normal ||
        !L->tet_f || !L->tlev || !L->dl || !L->tmark || !L->tool_hit || !L->tool_f || !L->tool_last || !L->tool_held || !L->imp || !L->ilvl || !L->need || !L->inplan || !L->psrc || !L->loc)
        return TW_ERR_NOMEM;
    memcpy(L->x, me->X, sizeof(double) * 3 * nv);
    memset(L->tlev, -1, nt);
    for (size_t i = 0; i < nv; i++)
        L->h[i] = DBL_MAX;
    /* elements: gradients, volume, lumped mass, node size, rest diagonal blocks */
    for (int e = 0; e < me->nt; e++) {
        double g[4][3];
        const int *t = me->tets + 4 * e;
        const double det = tw_tet_gradients(me->X, t, g);
        if (!(det > 0))
            return tw_fail(TW_ERR_INVALID, "multires: %s: tet %d is degenerate or inverted (6V = %g)", me->name, e,
                           det);
        const double V = det / 6, Vk = V * L->stiff;
        L->vol[e] = Vk;
        double hmin = DBL_MAX;
        for (int p = 0; p < 4; p++) {
            memcpy(L->g + 12 * e + 3 * p, g[p], sizeof g[p]);
            const double gn = sqrt(g[p][0] * g[p][0] + g[p][1] * g[p][1] + g[p][2] * g[p][2]);
            hmin = fmin(hmin, 1 / gn); /* the altitude over vertex p's opposite face */
        }
        for (int p = 0; p < 4; p++) {
            const int i = t[p];
            L->mass[i] += m->def.density * V / 4;
            L->h[i] = fmin(L->h[i], hmin);
            const double gg = g[p][0] * g[p][0] + g[p][1] * g[p][1] + g[p][2] * g[p][2];
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    L->Kd[9 * i + 3 * r + c] +=
                        Vk * ((m->lam + m->mu) * g[p][r] * g[p][c] + (r == c ? m->mu * gg : 0));
        }
    }
    /* node -> tets, node -> neighbours */
    int *key = tw_malloc(sizeof(int) * 12 * nt, "multires adjacency"), *val = tw_malloc(sizeof(int) * 12 * nt, "multires adjacency");
    if (!key || !val) {
        free(key);
        free(val);
        return TW_ERR_NOMEM;
    }
    for (int e = 0; e < me->nt; e++)
        for (int p = 0; p < 4; p++) {
            key[4 * e + p] = me->tets[4 * e + p];
            val[4 * e + p] = 4 * e + p;
        }
    tw_status s = csr_from_pairs(me->nv, 4 * me->nt, key, val, &L->vt_ptr, &L->vt, "multires node tets");
    int count = 0;
    for (int e = 0; e < me->nt && s == TW_OK; e++)
        for (int p = 0; p < 4; p++)
            for (int q = 0; q < 4; q++)
                if (p != q) {
                    key[count] = me->tets[4 * e + p];
                    val[count++] = me->tets[4 * e + q];
                }
    if (s == TW_OK)
        s = csr_from_pairs(me->nv, count, key, val, &L->nb_ptr, &L->nb, "multires neighbours");
    free(key);
    free(val);
    if (s != TW_OK)
        return s;
    /* neighbours: sorted, unique, compacted in place */
    int w = 0;
    for (int i = 0; i < me->nv; i++) {
        const int a = L->nb_ptr[i], b = L->nb_ptr[i + 1];
        qsort(L->nb + a, (size_t)(b - a), sizeof(int), cmp_int);
        L->nb_ptr[i] = w;
        for (int k = a; k < b; k++)
            if (k == a || L->nb[k] != L->nb[k - 1])
                L->nb[w++] = L->nb[k];
    }
    L->nb_ptr[me->nv] = w;
    for (int i = 0; i < me->nv; i++) {
        double best = DBL_MAX;
        for (int k = L->nb_ptr[i]; k < L->nb_ptr[i + 1]; k++) {
            const double *a = me->X + 3 * i, *b = me->X + 3 * L->nb[k];
            best = fmin(best, sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2])));
        }
        L->h_edge[i] = best;
    }
    /* boundary nodes and area-weighted outward normals */
    int *faces = NULL;
    const int nf = tw_mesh_boundary_faces(me, &faces);
    if (nf < 0 || (nf > 0 && !faces))
        return tw_fail(TW_ERR_NOMEM, "multires: %s: boundary faces", me->name);
    for (int k = 0; k < nf; k++) {
        const double *a = me->X + 3 * faces[3 * k], *b = me->X + 3 * faces[3 * k + 1], *c = me->X + 3 * faces[3 * k + 2];
        const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        const double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        for (int j = 0; j < 3; j++) {
            const int i = faces[3 * k + j];
            L->boundary[i] = 1;
            for (int d = 0; d < 3; d++)
                L->normal[3 * i + d] += n[d];
        }
    }
    free(faces);
    memcpy(L->h_step, L->h, sizeof(double) * nv);
    for (int i = 0; i < me->nv; i++) {
        const double *n = L->normal + 3 * i;
        const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int d = 0; d < 3; d++)
            L->normal[3 * i + d] = len > 0 ? n[d] / len : 0;
    }
    return TW_OK;
}

static void level_free(mr_level *L, int levels)
{
    free(L->g);
    free(L->vol);
    free(L->mass);
    free(L->h);
    free(L->h_step);
    free(L->h_edge);
    free(L->dt_limit);
    free(L->Kd);
    free(L->vt_ptr);
    free(L->vt);
    free(L->nb_ptr);
    free(L->nb);
    free(L->ch_ptr);
    free(L->ch);
    free(L->f);
    free(L->v_tick);
    free(L->detail);
    free(L->gamma);
    free(L->state);
    free(L->pinned);
    free(L->boundary);
    free(L->dtl);
    free(L->courant_level);
    free(L->boost);
    free(L->eff_level);
    free(L->normal);
    free(L->tet_f);
    free(L->tlev);
    free(L->dl);
    free(L->tmark);
    free(L->tool_hit);
    free(L->tool_f);
    free(L->tool_last);
    free(L->tool_held);
    free(L->ilvl);
    free(L->need);
    free(L->inplan);
    free(L->psrc);
    if (L->loc)
        for (int k = 0; k < levels; k++)
            tw_transfer_free(&L->loc[k]);
    free(L->loc);
}

void tw_multires_destroy(tw_multires *m)
{
    if (!m)
        return;
    if (m->lv)
        for (int l = 0; l < m->L; l++)
            level_free(&m->lv[l], m->L);
    free(m->lv);
    free(m->plan);
    free(m->srow_ptr);
    free(m->srow_src);
    free(m->srow_w);
    free(m->srow_c);
    free(m->due);
    free(m->due_ptr);
    free(m->kick);
    free(m->kf);
    free(m->inc);
    free(m->inc_ptr);
    free(m->inc_fill);
    free(m->gnode);
    free(m->gnode_ptr);
    free(m->gk);
    free(m->ip);
    free(m->xs);
    free(m->vs);
    free(m->imps);
    free(m->Xs);
    free(m->us);
    free(m->eff_rs);
    free(m->eff_sw);
    free(m->eff_cs);
    free(m->was_state);
    free(m->was_src);
    free(m->act);
    free(m->act_ptr);
    free(m->sub);
    free(m->sub_ptr);
    tw_hier_free(m->h);
    free(m);
}

static double courant_limit(const tw_multires *m, double h) { return m->def.courant_factor * h / m->wave; }

/* The largest stable step of the damped oscillator m x'' + c x' + k x = 0
 * (w2 = k / m, b = c / m) under the frame's integrator, symplectic Euler
 * with the damping force of the step's starting velocity: the step's
 * matrix on (v, x) has determinant 1 - b dt and trace 2 - b dt - w2 dt^2,
 * stable while w2 dt^2 + 2 b dt <= 4, that is dt <= 2 / (sqrt(w2 + b^2 / 4)
 * + b / 2) = 2 / w (sqrt(1 + zeta^2) - zeta), zeta = b / (2 w). This exact
 * scalar limit rather than the simpler 2 / (w + b), which implies it but
 * is up to 1.25x smaller (near b = 1.5 w) for no gain in safety on one
 * mode. It decreases in both w2 and b, so upper bounds of the two
 * (Gershgorin's) keep it on the safe side, exactly so mode by mode where
 * the damping is proportional to the stiffness (phi / lambda = psi / mu,
 * C and K share their modes); for other ratios it is that per-mode limit
 * at the two largest rates, not a proof, and courant_factor is the margin.
 * With b = 0 it is courant * 2 / sqrt(w2) to the last bit (adding zeros),
 * the undamped limit. */
static double damped_step(double courant, double w2, double b)
{
    return courant * 2 / (sqrt(w2 + 0.25 * b * b) + 0.5 * b);
}

/* Each node's largest step: courant_factor times the damped oscillator's
 * limit (damped_step; 2 / omega undamped), omega^2 the largest row sum of
 * |K| over the node's block row (the rest stiffness, each tet's blocks
 * taken apart: an upper bound of Gershgorin's) over its mass, b the same
 * of the visco-elastic damping matrix C (K's form with phi, psi for
 * lambda, mu: eq. 4's viscous stress is linear in the strain rate as the
 * elastic one is in the strain, and Green's rate is Cauchy's at rest); a
 * bound on the highest frequency and damping rate the node takes part in,
 * so a linear explicit step below the limit is stable. The explicit
 * viscous term alone needs dt < 2 m / c, below the elastic 2 / omega
 * where psi / mu exceeds 1 / omega: far below it at a sliver, whose omega
 * is large. The altitude limit of eq. 10 instead where the def asks for
 * it, damped with b = omega^2 (phi + 2 psi) / (lambda + 2 mu), its viscous
 * counterpart. */
static tw_status step_limits(tw_multires *m, mr_level *L)
{
    const double phi = m->def.damping_phi, psi = m->def.damping_psi, cf = m->def.courant_factor;
    const int damped = phi != 0 || psi != 0;
    if (m->def.step_limit == TW_MR_STEP_ALTITUDE) {
        for (int i = 0; i < L->nv; i++) {
            if (!damped) {
                L->dt_limit[i] = courant_limit(m, L->h_step[i]);
                continue;
            }
            const double w = 2 * m->wave / L->h_step[i], w2 = w * w;
            L->dt_limit[i] = damped_step(cf, w2, w2 * (phi + 2 * psi) / (m->lam + 2 * m->mu));
        }
        return TW_OK;
    }
    double *rs = tw_calloc(3 * (size_t)L->nv * (damped ? 2 : 1), sizeof(double), "multires stiffness row sums");
    if (!rs)
        return TW_ERR_NOMEM;
    double *cs = damped ? rs + 3 * (size_t)L->nv : NULL; /* the damping's row sums */
    for (int e = 0; e < L->nt; e++) {
        const int *t = L->m->tets + 4 * e;
        const double *g = L->g + 12 * e, V = L->vol[e];
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                const double *ga = g + 3 * a, *gb = g + 3 * b;
                const double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) { /* K_ab = V (lam ga gb^T + mu gb ga^T + mu ga.gb I) */
                        rs[3 * t[a] + r] +=
                            fabs(V * (m->lam * ga[r] * gb[c] + m->mu * ga[c] * gb[r] + (r == c ? m->mu * dot : 0)));
                        if (cs) /* C_ab: the same with phi, psi */
                            cs[3 * t[a] + r] +=
                                fabs(V * (phi * ga[r] * gb[c] + psi * ga[c] * gb[r] + (r == c ? psi * dot : 0)));
                    }
            }
    }
    for (int i = 0; i < L->nv; i++) {
        const double k = fmax(rs[3 * i], fmax(rs[3 * i + 1], rs[3 * i + 2]));
        const double c = cs ? fmax(cs[3 * i], fmax(cs[3 * i + 1], cs[3 * i + 2])) : 0;
        L->dt_limit[i] = (k > 0 || c > 0) && L->mass[i] > 0 ? damped_step(cf, k / L->mass[i], c / L->mass[i]) : DBL_MAX;
    }
    free(rs);
    return TW_OK;
}

static tw_status check_def(const tw_multires_def *d, int levels)
{
    if (!(d->youngs > 0) || !(d->poisson > -1 && d->poisson < 0.5) || !(d->density > 0))
        return tw_fail(TW_ERR_INVALID, "multires: material E %g Pa, nu %g, rho %g kg/m^3 (need E > 0, -1 < nu < 0.5, rho > 0)",
                       d->youngs, d->poisson, d->density);
    if (!(d->frame_dt > 0) || !(d->courant_factor > 0 && d->courant_factor <= 1))
        return tw_fail(TW_ERR_INVALID, "multires: frame_dt %g s must be > 0 and courant_factor %g in (0, 1]", d->frame_dt,
                       d->courant_factor);
    if (!(d->gamma_min >= 0 && d->gamma_min < d->gamma_max))
        return tw_fail(TW_ERR_INVALID, "multires: gamma %g,%g m: need 0 <= min < max", d->gamma_min, d->gamma_max);
    if (!(d->damping_phi >= 0 && d->damping_psi >= 0) || !(d->speed_change >= 0) || !(d->work_budget >= 0))
        return tw_fail(TW_ERR_INVALID, "multires: damping %g,%g Pa s, speed change %g and budget %g must be >= 0",
                       d->damping_phi, d->damping_psi, d->speed_change, d->work_budget);
    if (d->step_limit != TW_MR_STEP_STIFFNESS && d->step_limit != TW_MR_STEP_ALTITUDE)
        return tw_fail(TW_ERR_INVALID, "multires: step_limit %d is neither stiffness (0) nor altitude (1)", (int)d->step_limit);
    if (d->max_dt_level < 0 || d->max_dt_level > MR_MAX_DT_LEVEL)
        return tw_fail(TW_ERR_INVALID, "multires: max_dt_level %d out of 0..%d", d->max_dt_level, MR_MAX_DT_LEVEL);
    if (d->threads < 0 || d->threads > TW_MAX_THREADS)
        return tw_fail(TW_ERR_INVALID, "multires: threads %d: must be from 0 (the OpenMP default) to %d", d->threads,
                       TW_MAX_THREADS);
    if (d->kick_lanes != 0 && d->kick_lanes != 1 && d->kick_lanes != 2 && d->kick_lanes != 4)
        return tw_fail(TW_ERR_INVALID, "multires: kick_lanes %d: must be 0 (the most this CPU runs), 1, 2 or 4",
                       d->kick_lanes);
    if (d->start_level < 0 || d->start_level >= levels)
        return tw_fail(TW_ERR_INVALID, "multires: start level %d: the hierarchy has levels 0..%d", d->start_level,
                       levels - 1);
    return TW_OK;
}

/* ---- the active set and the interface plan */

static void build_plan(tw_multires *m);
static int node_level_for_dt(const tw_multires *m, const struct mr_level *L, int i);

/* The kick's lanes from def.kick_lanes (want): 0 the most this CPU and
 * build run (AVX's four where __builtin_cpu_supports finds it, which checks
 * that the OS saves its registers too; else two where the compiler has
 * vector types; else one), or the count asked for where it runs; 0 (with
 * the reason) where it does not. */
static int kick_lanes(int want)
{
    int most = TW_MR_PAIRS ? 2 : 1;
#if TW_MR_QUADS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx"))
        most = 4;
#endif
    if (want > most) {
        tw_fail(TW_ERR_UNSUPPORTED, "multires: kick_lanes %d: this CPU and build kick at most %d tets at a time", want,
                most);
        return 0;
    }
    return want ? want : most;
}

tw_multires *tw_multires_create(tw_hierarchy *h, const tw_multires_def *def)
{
    if (!h || !def || h->n_levels < 1) {
        tw_fail(TW_ERR_INVALID, "tw_multires_create: needs a hierarchy and a def");
        return NULL;
    }
    if (check_def(def, h->n_levels) != TW_OK)
        return NULL;
    if (h->n_levels > 1 && !h->parent_vertex) {
        tw_fail(TW_ERR_INVALID, "tw_multires_create: the hierarchy has no Voronoi parents (build it with tw_hier_nonnested)");
        return NULL;
    }
    const int lanes = kick_lanes(def->kick_lanes);
    if (!lanes)
        return NULL;
    tw_multires *m = tw_calloc(1, sizeof *m, "multires");
    if (!m)
        return NULL;
    m->def = *def;
    m->h = h;
    m->L = h->n_levels;
    m->budget = def->work_budget;
    m->lanes = lanes;
    const double E = def->youngs, nu = def->poisson;
    m->lam = E * nu / ((1 + nu) * (1 - 2 * nu));
    m->mu = E / (2 * (1 + nu));
    m->wave = sqrt((m->lam + 2 * m->mu) / def->density);
    m->lv = tw_calloc((size_t)m->L, sizeof *m->lv, "multires levels");
    if (!m->lv)
        goto fail;
    for (int l = 0; l < m->L; l++) {
        m->lv[l].node0 = m->nodes;
        m->nodes += h->level[l]->nv;
    }
    m->xs = tw_malloc(sizeof(double) * 3 * ((size_t)m->nodes + 1), "multires positions");
    m->vs = tw_calloc(3 * ((size_t)m->nodes + 1), sizeof(double), "multires velocities");
    m->imps = tw_calloc(3 * ((size_t)m->nodes + 1), sizeof(double), "multires impulses");
    m->Xs = tw_malloc(sizeof(double) * 3 * ((size_t)m->nodes + 1), "multires rest positions");
    m->us = tw_calloc(3 * ((size_t)m->nodes + 1), sizeof(double), "multires displacements");
    m->eff_rs = tw_malloc(sizeof(double) * 3 * ((size_t)m->nodes + 1), "multires effective stiffness");
    m->eff_sw = tw_malloc(sizeof(double) * ((size_t)m->nodes + 1), "multires effective weights");
    m->was_state = tw_calloc((size_t)m->nodes + 1, 1, "multires frame-start states");
    m->was_src = tw_calloc((size_t)m->nodes + 1, 1, "multires frame-start sources");
    if (!m->xs || !m->vs || !m->imps || !m->Xs || !m->us || !m->eff_rs || !m->eff_sw || !m->was_state || !m->was_src)
        goto fail;
    if (def->damping_phi != 0 || def->damping_psi != 0) {
        m->eff_cs = tw_malloc(sizeof(double) * 3 * ((size_t)m->nodes + 1), "multires effective damping");
        if (!m->eff_cs)
            goto fail;
    }
    for (int l = 0; l < m->L; l++)
        if (level_build(m, l) != TW_OK)
            goto fail;
    /* locations of every level's vertices in every other level's tets */
    for (int l = 0; l < m->L; l++)
        for (int k = 0; k < m->L; k++)
            if (k != l && tw_transfer_locate(h->level[k], h->level[l], &m->lv[l].loc[k]) != TW_OK)
                goto fail;
    /* children from the Voronoi parents */
    for (int l = 1; l < m->L; l++) {
        mr_level *c = &m->lv[l - 1], *f = &m->lv[l];
        f->parent = h->parent_vertex[l];
        int *idx = tw_malloc(sizeof(int) * ((size_t)f->nv + 1), "multires children");
        if (!idx)
            goto fail;
        for (int i = 0; i < f->nv; i++)
            idx[i] = i;
        tw_status s = csr_from_pairs(c->nv, f->nv, f->parent, idx, &c->ch_ptr, &c->ch, "multires children");
        free(idx);
        if (s != TW_OK)
            goto fail;
    }
    /* masses by Voronoi regions: a node that has children weighs what they weigh,
       so that a split or a merge keeps the mass (and the momentum) of the region */
    for (int l = m->L - 2; l >= 0; l--) {
        mr_level *C = &m->lv[l], *F = &m->lv[l + 1];
        for (int i = 0; i < C->nv; i++) {
            double s = 0;
            for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++)
                s += F->mass[C->ch[k]];
            if (s > 0) {
                /* a lighter node vibrates faster: its step shrinks with sqrt(mass) */
                if (s < C->mass[i])
                    C->h_step[i] = C->h[i] * sqrt(s / C->mass[i]);
                C->mass[i] = s;
            }
        }
    }
    /* time-step levels: the Courant limit of each node */
    int need = 0;
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        if (step_limits(m, L) != TW_OK)
            goto fail;
        for (int i = 0; i < L->nv; i++) {
            const double lim = L->dt_limit[i];
            int k = 0;
            while (def->frame_dt / ldexp(1, k) > lim && k < MR_MAX_DT_LEVEL + 1)
                k++;
            L->courant_level[i] = (signed char)k;
            if (k > need)
                need = k;
        }
    }
    m->M = def->max_dt_level ? def->max_dt_level : need + (def->speed_change > 0 ? 1 : 0);
    if (m->M > MR_MAX_DT_LEVEL)
        m->M = MR_MAX_DT_LEVEL;
    while (m->tool_level < m->M && def->frame_dt / ldexp(1, m->tool_level) > def->tool_dt)
        m->tool_level++;
    if (need > m->M) {
        tw_fail(TW_ERR_INVALID,
                "multires: max_dt_level %d gives steps of %g s, but the finest nodes need %g s or less (level %d)",
                m->M, def->frame_dt / ldexp(1, m->M), def->frame_dt / ldexp(1, need), need);
        goto fail;
    }
    mr_level *S = &m->lv[def->start_level];
    for (int i = 0; i < S->nv; i++)
        if (!S->m->unused || !S->m->unused[i])
            S->state[i] = TW_MR_ACTIVE;
    m->tets_stale = 1;
    build_plan(m);
    return m;
fail:
    m->h = NULL; /* the caller keeps h on failure */
    tw_multires_destroy(m);
    return NULL;
}

/* 1 when vertex j of level k holds a current value: active, or an interface
 * node the plan has already filled (done). */
static int current(const tw_multires *m, int k, int j, unsigned char *const *done)
{
    return m->lv[k].state[j] == TW_MR_ACTIVE || done[k][j] || m->lv[k].pinned[j];
}

/* Node i of level l as level k interpolates it: position and velocity. */
static void interpolate_value(const tw_multires *m, int l, int i, int k, double x[3], double v[3])
{
    const tw_transfer *P = &m->lv[l].loc[k];
    const mr_level *S = &m->lv[k], *D = &m->lv[l];
    for (int d = 0; d < 3; d++) {
        x[d] = D->m->X[3 * i + d];
        v[d] = 0;
    }
    for (int r = 0; r < TW_HIER_ROW; r++) {
        const int j = P->idx[TW_HIER_ROW * i + r];
        const double w = P->w[TW_HIER_ROW * i + r];
        for (int d = 0; d < 3; d++) {
            x[d] += w * (S->x[3 * j + d] - S->m->X[3 * j + d]);
            v[d] += w * S->v[3 * j + d];
        }
    }
}

static void interpolate(tw_multires *m, int l, int i, int k)
{
    const tw_transfer *P = &m->lv[l].loc[k];
    const mr_level *S = &m->lv[k];
    mr_level *D = &m->lv[l];
    double x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
    for (int r = 0; r < TW_HIER_ROW; r++) {
        const int j = P->idx[TW_HIER_ROW * i + r];
        const double w = P->w[TW_HIER_ROW * i + r];
        for (int d = 0; d < 3; d++) {
            /* the displacement is interpolated, so that a node outside the source level's
               mesh (a clamped row) keeps its own rest offset */
            x[d] += w * (S->x[3 * j + d] - S->m->X[3 * j + d]);
            v[d] += w * S->v[3 * j + d];
        }
    }
    /* from the next finer level, a split node keeps its detail: a split leaves it
       where it was, and a merge that follows at once restores it */
    const double *det = k == l + 1 ? D->detail + 6 * (size_t)i : NULL;
    for (int d = 0; d < 3; d++) {
        D->x[3 * i + d] = D->pinned[i] ? D->m->X[3 * i + d] : D->m->X[3 * i + d] + x[d] + (det ? det[d] : 0);
        D->v[3 * i + d] = D->pinned[i] ? 0 : v[d] + (det ? det[3 + d] : 0);
    }
}

/* Whether node i of level l can be filled from level k's tet holding it:
 * every node of non-zero weight current; *wa gets the weight on active
 * nodes. */
static int source_ok(const tw_multires *m, int l, int i, int k, unsigned char *const *done, double *wa)
{
    const tw_transfer *P = &m->lv[l].loc[k];
    int ok = 1;
    *wa = 0;
    for (int r = 0; r < TW_HIER_ROW; r++) {
        const int j = P->idx[TW_HIER_ROW * i + r];
        const double w = P->w[TW_HIER_ROW * i + r];
        if (w == 0)
            continue;
        if (!current(m, k, j, done))
            ok = 0;
        else if (m->lv[k].state[j] == TW_MR_ACTIVE)
            *wa += w;
    }
    return ok;
}

static int uf_find(int *p, int a)
{
    while (p[a] != a)
        a = p[a] = p[p[a]];
    return a;
}

/* The interface nodes no pass fills: the tets of other levels that hold them
 * read each other's unfilled nodes in cycles (with the auxiliary nodes those
 * need). Each takes one tet (the most weight on filled or cyclic nodes), and
 * the cycles' equations u = W u + B (u the displacements, B from the filled
 * nodes and the details) are solved per connected group by Gauss-Seidel
 * sweeps for each node's row over filled nodes: a fixed linear function of
 * the active nodes, so that the forces stay the transpose's gradient (a
 * stale value, a substep behind, pumps energy in). A cycle with no filled
 * node (a hole in the levels) keeps the rest offset its unsolved sweeps give. */
static void solve_cycles(tw_multires *m, const int *wl, int wn, unsigned char *const *done)
{
    int nu = 0;
    int *uid = malloc(sizeof(int) * ((size_t)m->nodes + 1));
    for (int n = 0; n < m->nodes; n++)
        uid[n] = -1;
    for (int q = 0; q < wn; q++)
        if (!done[wl[2 * q]][wl[2 * q + 1]])
            uid[m->lv[wl[2 * q]].node0 + wl[2 * q + 1]] = nu++;
    m->srow_ptr = realloc(m->srow_ptr, sizeof(int) * ((size_t)nu + 1));
    m->srow_ptr[0] = 0;
    m->srow_n = 0;
    if (nu == 0) {
        free(uid);
        return;
    }
    int *ul = malloc(sizeof(int) * (size_t)nu), *ui = malloc(sizeof(int) * (size_t)nu);
    int *usrc = malloc(sizeof(int) * (size_t)nu), *par = malloc(sizeof(int) * (size_t)nu);
    for (int q = 0, u = 0; q < wn; q++)
        if (!done[wl[2 * q]][wl[2 * q + 1]]) {
            ul[u] = wl[2 * q];
            ui[u] = wl[2 * q + 1];
            par[u] = u;
            u++;
        }
    /* each node's tet: the most weight on filled or cyclic nodes, then on filled ones,
       then the nearer level */
    for (int u = 0; u < nu; u++) {
        const int l = ul[u], i = ui[u];
        int best = l == 0 ? 1 : l - 1;
        double bw = -1, bc = -1;
        for (int k = 0; k < m->L; k++) {
            if (k == l)
                continue;
            const tw_transfer *P = &m->lv[l].loc[k];
            double wd = 0, wc = 0;
            for (int r = 0; r < TW_HIER_ROW; r++) {
                const int j = P->idx[TW_HIER_ROW * i + r];
                const double w = P->w[TW_HIER_ROW * i + r];
                if (current(m, k, j, done))
                    wc += w, wd += w;
                else if (uid[m->lv[k].node0 + j] >= 0)
                    wd += w;
            }
            if (wd > bw + 1e-12 || (fabs(wd - bw) <= 1e-12 && (wc > bc + 1e-12 ||
                                                               (fabs(wc - bc) <= 1e-12 && abs(k - l) < abs(best - l))))) {
                best = k;
                bw = wd;
                bc = wc;
            }
        }
        usrc[u] = best;
        const tw_transfer *P = &m->lv[l].loc[best];
        for (int r = 0; r < TW_HIER_ROW; r++) {
            const int v = uid[m->lv[best].node0 + P->idx[TW_HIER_ROW * i + r]];
            if (P->w[TW_HIER_ROW * i + r] != 0 && v >= 0) {
                const int a = uf_find(par, u), b = uf_find(par, v);
                if (a != b)
                    par[a] = b;
            }
        }
    }
    /* per group: its nodes, the filled nodes they read, dense rows, sweeps */
    int *gofs = calloc((size_t)nu + 1, sizeof(int)), *gl = malloc(sizeof(int) * (size_t)nu);
    for (int u = 0; u < nu; u++)
        gofs[uf_find(par, u) + 1]++;
    for (int g = 0; g < nu; g++)
        gofs[g + 1] += gofs[g];
    int *fill = malloc(sizeof(int) * ((size_t)nu + 1));
    memcpy(fill, gofs, sizeof(int) * ((size_t)nu + 1));
    for (int u = 0; u < nu; u++)
        gl[fill[uf_find(par, u)]++] = u;
    free(fill);
    double *rows = NULL, *cs = NULL;
    int *kn = NULL, *kid = malloc(sizeof(int) * ((size_t)m->nodes + 1));
    for (int n = 0; n < m->nodes; n++)
        kid[n] = -1;
    int *uslot = malloc(sizeof(int) * (size_t)nu);
    /* the rows of the interface nodes, in wl order: filled later into srow_* */
    double **urow = calloc((size_t)nu, sizeof *urow);
    int **uknown = calloc((size_t)nu, sizeof *uknown), *ucount = calloc((size_t)nu, sizeof(int));
    double *uc = calloc(6 * (size_t)nu, sizeof(double));
    for (int g = 0; g < nu; g++) {
        const int g0 = gofs[g], gn = gofs[g + 1] - g0;
        if (gn == 0)
            continue;
        int nk = 0;
        for (int a = 0; a < gn; a++) {
            const int u = gl[g0 + a];
            uslot[u] = a;
            const tw_transfer *P = &m->lv[ul[u]].loc[usrc[u]];
            for (int r = 0; r < TW_HIER_ROW; r++) {
                const int j = P->idx[TW_HIER_ROW * ui[u] + r], n = m->lv[usrc[u]].node0 + j;
                if (P->w[TW_HIER_ROW * ui[u] + r] != 0 && current(m, usrc[u], j, done) && !m->lv[usrc[u]].pinned[j] &&
                    kid[n] < 0) {
                    kn = realloc(kn, sizeof(int) * ((size_t)nk + 1));
                    kn[nk] = n;
                    kid[n] = nk++;
                }
            }
        }
        rows = realloc(rows, sizeof(double) * ((size_t)gn * (size_t)(nk + 1)));
        cs = realloc(cs, sizeof(double) * 6 * (size_t)gn);
        memset(rows, 0, sizeof(double) * (size_t)gn * (size_t)(nk + 1));
        memset(cs, 0, sizeof(double) * 6 * (size_t)gn);
        for (int sweep = 0; sweep < 2000; sweep++) {
            double change = 0;
            for (int a = 0; a < gn; a++) {
                const int u = gl[g0 + a], l = ul[u], i = ui[u], k = usrc[u];
                const tw_transfer *P = &m->lv[l].loc[k];
                const mr_level *S = &m->lv[k];
                double *row = rows + (size_t)a * (size_t)(nk + 1), c[6] = {0, 0, 0, 0, 0, 0};
                if (k == l + 1)
                    for (int d = 0; d < 6; d++)
                        c[d] = m->lv[l].detail[6 * (size_t)i + d];
                double *nr = malloc(sizeof(double) * (size_t)(nk + 1));
                memset(nr, 0, sizeof(double) * (size_t)(nk + 1));
                for (int r = 0; r < TW_HIER_ROW; r++) {
                    const int j = P->idx[TW_HIER_ROW * i + r], n = S->node0 + j;
                    const double w = P->w[TW_HIER_ROW * i + r];
                    if (w == 0 || S->pinned[j])
                        continue;
                    if (current(m, k, j, done)) {
                        nr[kid[n]] += w;
                    } else if (uid[n] >= 0) {
                        const double *sr = rows + (size_t)uslot[uid[n]] * (size_t)(nk + 1);
                        for (int z = 0; z < nk; z++)
                            nr[z] += w * sr[z];
                        for (int d = 0; d < 6; d++)
                            c[d] += w * cs[6 * uslot[uid[n]] + d];
                    } else { /* read as it is: a constant */
                        for (int d = 0; d < 3; d++) {
                            c[d] += w * (S->x[3 * j + d] - S->m->X[3 * j + d]);
                            c[3 + d] += w * S->v[3 * j + d];
                        }
                    }
                }
                for (int z = 0; z < nk; z++) {
                    change = fmax(change, fabs(nr[z] - row[z]));
                    row[z] = nr[z];
                }
                for (int d = 0; d < 6; d++) {
                    change = fmax(change, fabs(c[d] - cs[6 * a + d]) / (1 + fabs(c[d])));
                    cs[6 * a + d] = c[d];
                }
                free(nr);
            }
            if (change < 1e-14)
                break;
        }
        for (int a = 0; a < gn; a++) {
            const int u = gl[g0 + a];
            if (m->lv[ul[u]].state[ui[u]] != TW_MR_INTERFACE)
                continue;
            const double *row = rows + (size_t)a * (size_t)(nk + 1);
            int cnt = 0;
            for (int z = 0; z < nk; z++)
                cnt += row[z] != 0;
            urow[u] = malloc(sizeof(double) * ((size_t)cnt + 1));
            uknown[u] = malloc(sizeof(int) * ((size_t)cnt + 1));
            for (int z = 0; z < nk; z++)
                if (row[z] != 0) {
                    urow[u][ucount[u]] = row[z];
                    uknown[u][ucount[u]++] = kn[z];
                }
            memcpy(uc + 6 * (size_t)u, cs + 6 * a, 6 * sizeof(double));
        }
        for (int z = 0; z < nk; z++)
            kid[kn[z]] = -1;
    }
    /* the interface nodes of the cycles join the plan's end with their rows */
    int total = 0, nst = 0;
    for (int u = 0; u < nu; u++)
        if (m->lv[ul[u]].state[ui[u]] == TW_MR_INTERFACE)
            total += ucount[u], nst++;
    m->srow_ptr = realloc(m->srow_ptr, sizeof(int) * ((size_t)nst + 1));
    m->srow_src = realloc(m->srow_src, sizeof(int) * ((size_t)total + 1));
    m->srow_w = realloc(m->srow_w, sizeof(double) * ((size_t)total + 1));
    m->srow_c = realloc(m->srow_c, sizeof(double) * 6 * ((size_t)nst + 1));
    m->srow_ptr[0] = 0;
    int s = 0;
    for (int u = 0; u < nu; u++) {
        const int l = ul[u], i = ui[u];
        if (m->lv[l].state[i] != TW_MR_INTERFACE)
            continue;
        memcpy(m->srow_src + m->srow_ptr[s], uknown[u], sizeof(int) * (size_t)ucount[u]);
        memcpy(m->srow_w + m->srow_ptr[s], urow[u], sizeof(double) * (size_t)ucount[u]);
        memcpy(m->srow_c + 6 * (size_t)s, uc + 6 * (size_t)u, 6 * sizeof(double));
        m->srow_ptr[s + 1] = m->srow_ptr[s] + ucount[u];
        s++;
        m->lv[l].inplan[i] = 1;
        m->plan[m->plan_n].level = l;
        m->plan[m->plan_n].node = i;
        m->plan[m->plan_n].src = usrc[u];
        m->plan_n++;
        m->stale++;
    }
    m->srow_n = nst;
    for (int u = 0; u < nu; u++) {
        free(urow[u]);
        free(uknown[u]);
    }
    free(urow);
    free(uknown);
    free(ucount);
    free(uc);
    free(rows);
    free(cs);
    free(kn);
    free(kid);
    free(uslot);
    free(gofs);
    free(gl);
    free(ul);
    free(ui);
    free(usrc);
    free(par);
    free(uid);
}

/* Each level's tets with an active node, ascending, into dl and dn: marked
 * from the active nodes' tets, then collected by one pass over the marks
 * (no sort). Only when the active set changed since the last call. */
static void active_tets(tw_multires *m)
{
    if (!m->tets_stale)
        return;
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++)
            if (L->state[i] == TW_MR_ACTIVE)
                for (int j = L->vt_ptr[i]; j < L->vt_ptr[i + 1]; j++)
                    L->tmark[L->vt[j] >> 2] = 1;
        L->dn = 0;
        for (int e = 0; e < L->nt; e++)
            if (L->tmark[e]) {
                L->tmark[e] = 0;
                L->dl[L->dn++] = e;
            }
    }
    m->tets_stale = 0;
}

/* Each active node's step level from the stiffness it feels through the
 * interface: an interface node's forces go back to the active nodes it is
 * filled from, so a coarse node can carry a finer level's stiffer tets
 * (its own tets' Courant limit, eq. 10, does not see them). The bound is
 * Gershgorin's on the interpolated stiffness, each tet weighted by its
 * active nodes' share: the row sums of |K| over the tet's nodes, carried
 * back to active nodes by |the interpolation's weights| (their sums along
 * the plan bound the columns); K the rest stiffness scaled by the tet's
 * current stretch and stress (Green strain stiffens under stretch: the rest
 * bound let a mixed undamped run diverge). The visco-elastic damping's
 * matrix alike (K's form with phi, psi; the same factor bounds its growth
 * under stretch, lambda_max(F^T F) <= cmax), into step_limits' damped
 * limit. Run with every plan and every frame. */
static void effective_levels(tw_multires *m)
{
    double *rs = m->eff_rs, *sw = m->eff_sw, *cs = m->eff_cs;
    memset(rs, 0, sizeof(double) * 3 * (size_t)m->nodes);
    if (cs)
        memset(cs, 0, sizeof(double) * 3 * (size_t)m->nodes);
    for (int l = 0; l < m->L; l++) {
        const mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++)
            sw[L->node0 + i] = L->state[i] == TW_MR_ACTIVE && !L->pinned[i] ? 1 : 0;
    }
    const int k0 = m->plan_n - m->stale;
    for (int k = 0; k < m->plan_n; k++) {
        const int l = m->plan[k].level, i = m->plan[k].node, src = m->plan[k].src;
        const mr_level *L = &m->lv[l];
        double s = 0;
        if (!L->pinned[i]) {
            if (k >= k0) {
                for (int q = m->srow_ptr[k - k0]; q < m->srow_ptr[k - k0 + 1]; q++)
                    s += fabs(m->srow_w[q]) * sw[m->srow_src[q]];
            } else {
                const tw_transfer *P = &L->loc[src];
                for (int r = 0; r < TW_HIER_ROW; r++)
                    s += fabs(P->w[TW_HIER_ROW * i + r]) * sw[m->lv[src].node0 + P->idx[TW_HIER_ROW * i + r]];
            }
        }
        sw[L->node0 + i] = s;
    }
    /* lam, mu and the strain in locals: the stores into rs could alias the
       simulation's fields, which the compiler would then reload at every term */
    const double lam = m->lam, mu = m->mu, lam2mu = m->lam + 2 * m->mu;
    const double phi = m->def.damping_phi, psi = m->def.damping_psi;
    const int green = m->def.strain == TW_MR_GREEN;
    active_tets(m);
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        const double *Xl = L->m->X, *xl = L->x, *swl = sw + L->node0;
        double *rsl = rs + 3 * (size_t)L->node0, *csl = cs ? cs + 3 * (size_t)L->node0 : NULL;
        for (int q = 0; q < L->dn; q++) {
            const int e = L->dl[q], *t = L->m->tets + 4 * e;
            int active = 0;
            for (int p = 0; p < 4; p++)
                active += L->state[t[p]] == TW_MR_ACTIVE;
            const double *g = L->g + 12 * e;
            /* the tangent stiffness at the current deformation bounded by the rest one
               times lambda_max(F^T F) (stretched tets stiffen) plus |S| / (lambda + 2 mu)
               (the stress's geometric part), both by their Gershgorin row sums: 1 at
               rest */
            double F[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, C[9], S[9];
            TW_MR_UNROLL
            for (int p = 0; p < 4; p++)
                TW_MR_UNROLL
                for (int r = 0; r < 3; r++) {
                    const double u = xl[3 * t[p] + r] - Xl[3 * t[p] + r];
                    TW_MR_UNROLL
                    for (int c = 0; c < 3; c++)
                        F[3 * r + c] += u * g[3 * p + c];
                }
            TW_MR_UNROLL
            for (int r = 0; r < 3; r++)
                TW_MR_UNROLL
                for (int c = 0; c < 3; c++) {
                    double v = 0;
                    TW_MR_UNROLL
                    for (int q = 0; q < 3; q++)
                        v += F[3 * q + r] * F[3 * q + c];
                    C[3 * r + c] = v;
                }
            const double trE = 0.5 * (C[0] + C[4] + C[8] - 3);
            TW_MR_UNROLL
            for (int q = 0; q < 9; q++)
                S[q] = mu * (C[q] - (q % 4 == 0)) + (q % 4 == 0 ? lam * trE : 0);
            double cmax = 0, smax = 0;
            TW_MR_UNROLL
            for (int r = 0; r < 3; r++) {
                cmax = fmax(cmax, fabs(C[3 * r]) + fabs(C[3 * r + 1]) + fabs(C[3 * r + 2]));
                smax = fmax(smax, fabs(S[3 * r]) + fabs(S[3 * r + 1]) + fabs(S[3 * r + 2]));
            }
            const double cf = green ? fmax(1, cmax + smax / lam2mu) : 1;
            const double V = L->vol[e] * active / 4 * cf;
            double cw[4];
            TW_MR_UNROLL
            for (int b = 0; b < 4; b++)
                cw[b] = swl[t[b]];
            TW_MR_UNROLL
            for (int a = 0; a < 4; a++) {
                /* the row's sums in registers, in the same order (a tet's nodes are
                   distinct: no other row of the tet is this one) */
                double *row = rsl + 3 * (size_t)t[a];
                double acc[3] = {row[0], row[1], row[2]};
                const double *ga = g + 3 * a;
                TW_MR_UNROLL
                for (int b = 0; b < 4; b++) {
                    if (cw[b] == 0)
                        continue;
                    const double *gb = g + 3 * b;
                    const double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
                    TW_MR_UNROLL
                    for (int r = 0; r < 3; r++)
                        TW_MR_UNROLL
                        for (int c = 0; c < 3; c++) {
                            /* off the diagonal the + 0 of the diagonal's term is left out:
                               it can only turn -0 into +0, which the fabs does too (the
                               same bits only where no multiply-add is fused, as the build
                               ensures for this file: fused, mu dot would round once) */
                            const double k = r == c ? lam * ga[r] * gb[c] + mu * ga[c] * gb[r] + mu * dot
                                                    : lam * ga[r] * gb[c] + mu * ga[c] * gb[r];
                            acc[r] += cw[b] * fabs(V * k);
                        }
                }
                row[0] = acc[0];
                row[1] = acc[1];
                row[2] = acc[2];
                if (!csl)
                    continue;
                double *crow = csl + 3 * (size_t)t[a];
                for (int b = 0; b < 4; b++) {
                    if (cw[b] == 0)
                        continue;
                    const double *gb = g + 3 * b;
                    const double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++)
                            crow[r] += cw[b] * fabs(V * (phi * ga[r] * gb[c] + psi * ga[c] * gb[r] +
                                                         (r == c ? psi * dot : 0)));
                }
            }
        }
    }
    for (int k = m->plan_n - 1; k >= 0; k--) {
        const int l = m->plan[k].level, i = m->plan[k].node, src = m->plan[k].src;
        const mr_level *L = &m->lv[l];
        const double *g = rs + 3 * ((size_t)L->node0 + i);
        if (L->pinned[i])
            continue;
        if (k >= k0) {
            for (int q = m->srow_ptr[k - k0]; q < m->srow_ptr[k - k0 + 1]; q++)
                for (int d = 0; d < 3; d++)
                    rs[3 * (size_t)m->srow_src[q] + d] += fabs(m->srow_w[q]) * g[d];
        } else {
            const tw_transfer *P = &L->loc[src];
            for (int r = 0; r < TW_HIER_ROW; r++)
                for (int d = 0; d < 3; d++)
                    rs[3 * ((size_t)m->lv[src].node0 + P->idx[TW_HIER_ROW * i + r]) + d] +=
                        fabs(P->w[TW_HIER_ROW * i + r]) * g[d];
        }
        if (!cs)
            continue;
        const double *gc = cs + 3 * ((size_t)L->node0 + i);
        if (k >= k0) {
            for (int q = m->srow_ptr[k - k0]; q < m->srow_ptr[k - k0 + 1]; q++)
                for (int d = 0; d < 3; d++)
                    cs[3 * (size_t)m->srow_src[q] + d] += fabs(m->srow_w[q]) * gc[d];
        } else {
            const tw_transfer *P = &L->loc[src];
            for (int r = 0; r < TW_HIER_ROW; r++)
                for (int d = 0; d < 3; d++)
                    cs[3 * ((size_t)m->lv[src].node0 + P->idx[TW_HIER_ROW * i + r]) + d] +=
                        fabs(P->w[TW_HIER_ROW * i + r]) * gc[d];
        }
    }
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++) {
            if (L->state[i] != TW_MR_ACTIVE)
                continue;
            const double *row = rs + 3 * ((size_t)L->node0 + i);
            const double kk = fmax(row[0], fmax(row[1], row[2]));
            const double *crow = cs ? cs + 3 * ((size_t)L->node0 + i) : NULL;
            const double cc = crow ? fmax(crow[0], fmax(crow[1], crow[2])) : 0;
            const double lim = (kk > 0 || cc > 0) && L->mass[i] > 0
                                   ? damped_step(m->def.courant_factor, kk / L->mass[i], cc / L->mass[i])
                                   : DBL_MAX;
            int k = 0;
            while (m->def.frame_dt / ldexp(1, k) > lim && k < MR_MAX_DT_LEVEL)
                k++;
            /* finer than the finest step so far (a stretched sliver's light node): the
               frame's finest step follows, unless the def fixes it */
            if (k > m->M && !m->def.max_dt_level)
                m->M = k;
            L->eff_level[i] = (signed char)(k > m->M ? m->M : k);
            L->dtl[i] = (signed char)node_level_for_dt(m, L, i);
        }
    }
}

/* States from the active flags, then the ordered plan. */
static void build_plan(tw_multires *m)
{
    int total = 0;
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        memset(L->inplan, 0, (size_t)L->nv);
        memset(L->psrc, -1, (size_t)L->nv);
        for (int i = 0; i < L->nv; i++) {
            if (L->state[i] == TW_MR_ACTIVE)
                continue;
            L->state[i] = TW_MR_INACTIVE;
            for (int k = L->nb_ptr[i]; k < L->nb_ptr[i + 1]; k++)
                if (L->state[L->nb[k]] == TW_MR_ACTIVE) {
                    L->state[i] = TW_MR_INTERFACE;
                    total++;
                    break;
                }
        }
    }
    free(m->plan);
    m->plan = malloc(sizeof *m->plan * ((size_t)m->nodes + 1));
    m->plan_n = 0;
    m->stale = 0;
    unsigned char **done = calloc((size_t)m->L, sizeof *done), **want = calloc((size_t)m->L, sizeof *want);
    for (int l = 0; l < m->L; l++) {
        done[l] = calloc((size_t)m->lv[l].nv, 1);
        want[l] = calloc((size_t)m->lv[l].nv, 1);
    }
    /* the nodes to fill, (level, node) pairs: the interface nodes, then the auxiliary
       inactive nodes they are found to need */
    int *wl = malloc(sizeof(int) * 2 * ((size_t)m->nodes + 1)), wn = 0;
    for (int l = 0; l < m->L; l++)
        for (int i = 0; i < m->lv[l].nv; i++)
            if (m->lv[l].state[i] == TW_MR_INTERFACE) {
                wl[2 * wn] = l;
                wl[2 * wn++ + 1] = i;
            }
    int unresolved = wn;
    for (int round = 0; unresolved > 0; round++) {
        int progress = 1;
        while (progress && unresolved > 0) {
            progress = 0;
            for (int q = 0; q < wn; q++) {
                const int l = wl[2 * q], i = wl[2 * q + 1];
                if (done[l][i])
                    continue;
                int best = -1;
                double best_active = -1;
                for (int k = 0; k < m->L && !m->lv[l].pinned[i]; k++) {
                    double wa;
                    if (k == l || !source_ok(m, l, i, k, done, &wa))
                        continue;
                    /* more weight on active nodes wins; then the nearer level */
                    if (wa > best_active + 1e-12 ||
                        (fabs(wa - best_active) <= 1e-12 && best >= 0 && abs(k - l) < abs(best - l))) {
                        best = k;
                        best_active = wa;
                    }
                }
                if (m->lv[l].pinned[i]) /* at rest whatever it reads */
                    best = l == 0 ? 1 : l - 1;
                if (best >= 0) {
                    done[l][i] = 1;
                    m->lv[l].inplan[i] = 1;
                    m->lv[l].psrc[i] = (signed char)best;
                    m->plan[m->plan_n].level = l;
                    m->plan[m->plan_n].node = i;
                    m->plan[m->plan_n].src = best;
                    m->plan_n++;
                    unresolved -= m->lv[l].state[i] == TW_MR_INTERFACE;
                    progress = 1;
                }
            }
        }
        if (unresolved == 0 || round == MR_AUX_ROUNDS)
            break;
        /* an interface node that no tet of another level can fill from current nodes
           reads inactive ones: those become auxiliary nodes, filled (when they can
           be) before it, so that every value is a fixed linear function of the active
           nodes and the forces stay its gradient's transpose */
        int added = 0;
        const int wn0 = wn;
        for (int q = 0; q < wn0; q++) {
            const int l = wl[2 * q], i = wl[2 * q + 1];
            if (done[l][i])
                continue;
            for (int k = 0; k < m->L; k++) {
                if (k == l)
                    continue;
                const tw_transfer *P = &m->lv[l].loc[k];
                for (int r = 0; r < TW_HIER_ROW; r++) {
                    const int j = P->idx[TW_HIER_ROW * i + r];
                    if (P->w[TW_HIER_ROW * i + r] == 0 || current(m, k, j, done) || want[k][j] ||
                        m->lv[k].state[j] != TW_MR_INACTIVE)
                        continue;
                    want[k][j] = 1;
                    wl[2 * wn] = k;
                    wl[2 * wn++ + 1] = j;
                    added++;
                }
            }
        }
        if (!added)
            break;
    }
    solve_cycles(m, wl, wn, done);
    (void)total;
    free(wl);
    for (int l = 0; l < m->L; l++) {
        free(done[l]);
        free(want[l]);
    }
    free(done);
    free(want);
    m->dirty = 0;
    effective_levels(m);
}

/* A cycle's node (plan entry plan_n - stale + s) from its row, its
 * displacement (m->us) too. */
static void apply_row(tw_multires *m, int s, int node, int pinned)
{
    const double *X = m->Xs, *c = m->srow_c + 6 * (size_t)s;
    double *xs = m->xs, *vs = m->vs, *us = m->us;
    double x[3] = {c[0], c[1], c[2]}, v[3] = {c[3], c[4], c[5]};
    for (int q = m->srow_ptr[s]; q < m->srow_ptr[s + 1]; q++) {
        const size_t j = 3 * (size_t)m->srow_src[q];
        const double w = m->srow_w[q];
        for (int d = 0; d < 3; d++) {
            x[d] += w * (xs[j + d] - X[j + d]);
            v[d] += w * vs[j + d];
        }
    }
    const size_t i = 3 * (size_t)node;
    for (int d = 0; d < 3; d++) {
        xs[i + d] = pinned ? X[i + d] : X[i + d] + x[d];
        vs[i + d] = pinned ? 0 : v[d];
        us[i + d] = xs[i + d] - X[i + d];
    }
}

static void run_plan(tw_multires *m)
{
    if (m->L < 2)
        return;
    const int k0 = m->plan_n - m->stale;
    for (int k = 0; k < k0; k++)
        interpolate(m, m->plan[k].level, m->plan[k].node, m->plan[k].src);
    for (int k = k0; k < m->plan_n; k++) {
        const mr_level *L = &m->lv[m->plan[k].level];
        apply_row(m, k - k0, L->node0 + m->plan[k].node, L->pinned[m->plan[k].node]);
    }
}

/* The level of pool node n. */
static int pool_level(const tw_multires *m, int n)
{
    int l = 0;
    while (l + 1 < m->L && n >= m->lv[l + 1].node0)
        l++;
    return l;
}

/* The interface nodes' step levels, in plan order (sources first). */
static void plan_levels(tw_multires *m)
{
    for (int k = 0; k < m->plan_n; k++) {
        const int l = m->plan[k].level, i = m->plan[k].node, src = m->plan[k].src;
        const tw_transfer *P = &m->lv[l].loc[src];
        const mr_level *S = &m->lv[src];
        int top = 0;
        if (k >= m->plan_n - m->stale) {
            const int s = k - (m->plan_n - m->stale);
            for (int q = m->srow_ptr[s]; q < m->srow_ptr[s + 1]; q++) {
                const int n = m->srow_src[q], sl = pool_level(m, n), j = n - m->lv[sl].node0;
                const int lv = m->lv[sl].state[j] == TW_MR_ACTIVE ? m->lv[sl].dtl[j] : m->lv[sl].ilvl[j];
                if (lv > top)
                    top = lv;
            }
            m->lv[l].ilvl[i] = (signed char)top;
            continue;
        }
        for (int r = 0; r < TW_HIER_ROW; r++) {
            const int j = P->idx[TW_HIER_ROW * i + r];
            if (P->w[TW_HIER_ROW * i + r] == 0)
                continue;
            const int q = S->state[j] == TW_MR_ACTIVE ? S->dtl[j] : S->inplan[j] ? S->ilvl[j] : 0;
            if (q > top)
                top = q;
        }
        m->lv[l].ilvl[i] = (signed char)top;
    }
}

void tw_multires_update_interface(tw_multires *m)
{
    build_plan(m);
    run_plan(m);
}

/* ---- forces */

/* The internal forces of tet e of level L (elastic and visco-elastic) into
 * L->tet_f; returns the elastic energy when want_energy. */
static double tet_force(const tw_multires *m, mr_level *L, int e, int want_energy)
{
    const int *t = L->m->tets + 4 * e;
    const double *g = L->g + 12 * e;
    double F[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Fd[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int p = 0; p < 4; p++) {
        const int i = t[p];
        for (int r = 0; r < 3; r++) {
            const double u = L->x[3 * i + r] - L->m->X[3 * i + r], v = L->v[3 * i + r];
            for (int c = 0; c < 3; c++) {
                F[3 * r + c] += u * g[3 * p + c];
                Fd[3 * r + c] += v * g[3 * p + c];
            }
        }
    }
    const double lam = m->lam, mu = m->mu, phi = m->def.damping_phi, psi = m->def.damping_psi;
    double E[9], N[9], P[9];
    if (m->def.strain == TW_MR_GREEN) {
        /* E = (F^T F - I)/2, its rate N = (Fd^T F + F^T Fd)/2 */
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                double s = 0, sd = 0;
                for (int k = 0; k < 3; k++) {
                    s += F[3 * k + r] * F[3 * k + c];
                    sd += Fd[3 * k + r] * F[3 * k + c] + F[3 * k + r] * Fd[3 * k + c];
                }
                E[3 * r + c] = 0.5 * (s - (r == c));
                N[3 * r + c] = 0.5 * sd;
            }
    } else {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                E[3 * r + c] = 0.5 * (F[3 * r + c] + F[3 * c + r]) - (r == c);
                N[3 * r + c] = 0.5 * (Fd[3 * r + c] + Fd[3 * c + r]);
            }
    }
    const double trE = E[0] + E[4] + E[8], trN = N[0] + N[4] + N[8];
    double S[9];
    for (int k = 0; k < 9; k++)
        S[k] = 2 * mu * E[k] + 2 * psi * N[k];
    for (int d = 0; d < 3; d++)
        S[4 * d] += lam * trE + phi * trN;
    if (m->def.strain == TW_MR_GREEN) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                P[3 * r + c] = F[3 * r] * S[c] + F[3 * r + 1] * S[3 + c] + F[3 * r + 2] * S[6 + c];
    } else {
        memcpy(P, S, sizeof P);
    }
    const double V = L->vol[e];
    double *out = L->tet_f + 12 * e;
    for (int p = 0; p < 4; p++)
        for (int r = 0; r < 3; r++)
            out[3 * p + r] = -V * (P[3 * r] * g[3 * p] + P[3 * r + 1] * g[3 * p + 1] + P[3 * r + 2] * g[3 * p + 2]);
    if (!want_energy)
        return 0;
    double e2 = 0;
    for (int k = 0; k < 9; k++)
        e2 += E[k] * E[k];
    return V * (mu * e2 + 0.5 * lam * trE * trE);
}

/* The substep's tet kick, one tet at a time (kick_packed) and, where the
 * compiler has vector types, two at a time (kick_pair: SSE2's packed
 * doubles on x86-64, about half the arithmetic instructions of two single
 * kicks) and four (kick_quad, AVX's: half again; the kernel is bound by
 * its floating-point operations, not by its loads): one body,
 * multires_kick.h, the same bits in every form. */
#define MR_K_NAME kick_packed
#define MR_K_ATTR __attribute__((always_inline))
#define MR_K_T double
#define MR_K_LANES 1
#define MR_K_SPLAT(c) (c)
#define MR_K_REC(e) (k->e[lane])
#define MR_K_AT(a, i, o) ((a)[(i)[0] + (o)])
#define MR_K_LANE(v, j) (v)
#include "multires_kick.h"

#if TW_MR_PAIRS
typedef double mr_v2 __attribute__((vector_size(16)));
/* two lanes of a record's value */
static inline __attribute__((always_inline)) mr_v2 mr_lanes2(const double *p)
{
    mr_v2 v;
    memcpy(&v, p, sizeof v);
    return v;
}
#define MR_K_NAME kick_pair
#define MR_K_ATTR __attribute__((always_inline))
#define MR_K_T mr_v2
#define MR_K_LANES 2
#define MR_K_SPLAT(c) ((mr_v2){(c), (c)})
#define MR_K_REC(e) (mr_lanes2(k->e + lane))
#define MR_K_AT(a, i, o) ((mr_v2){(a)[(i)[0] + (o)], (a)[(i)[1] + (o)]})
#define MR_K_LANE(v, j) ((v)[j])
#include "multires_kick.h"
#endif

#if TW_MR_QUADS
typedef double mr_v4 __attribute__((vector_size(32)));
/* the four lanes of a record's value */
static inline __attribute__((always_inline, target("avx"))) mr_v4 mr_lanes4(const double *p)
{
    mr_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
/* not always_inline: the one- and two-lane builds of kick_variant hold a
   call to it in a branch they never take, which must not be inlined there;
   kick_range_avx flattens it in */
#define MR_K_NAME kick_quad
#define MR_K_ATTR __attribute__((target("avx")))
#define MR_K_T mr_v4
#define MR_K_LANES 4
#define MR_K_SPLAT(c) ((mr_v4){(c), (c), (c), (c)})
#define MR_K_REC(e) (mr_lanes4(k->e + lane))
#define MR_K_AT(a, i, o) ((mr_v4){(a)[(i)[0] + (o)], (a)[(i)[1] + (o)], (a)[(i)[2] + (o)], (a)[(i)[3] + (o)]})
#define MR_K_LANE(v, j) ((v)[j])
#include "multires_kick.h"
#endif

/* The kicks of packed tets b0 .. b1 - 1 in one of the four variants, in
 * order (the order the impulses sum in is part of the result): `lanes` 1
 * one at a time; 2 two at a time from a record's first or third lane; 4
 * four at a time from its first; the ends one or two at a time. */
static inline __attribute__((always_inline)) void kick_variant(const tw_multires *m, int b0, int b1, int green,
                                                               int damped, int store, int lanes)
{
    const double lam = m->lam, mu2 = 2 * m->mu, phi = m->def.damping_phi, psi2 = 2 * m->def.damping_psi;
    const mr_kick *k = m->kick;
    const double *u = m->us, *v = m->vs;
    double *imp = m->imps, *kf = m->kf;
#define MR_KICK_ARGS(b) u, v, imp, store ? kf + 12 * (size_t)(b) : NULL, lam, mu2, phi, psi2, green, damped
    (void)lanes; /* a build without vector types has the one-tet kick alone */
    int b = b0;
    if ((b & 1) && b < b1) {
        kick_packed(k + b / MR_KICK_LANES, b % MR_KICK_LANES, MR_KICK_ARGS(b));
        b++;
    }
#if TW_MR_QUADS
    if (lanes == 4) {
        if ((b & 2) && b + 1 < b1) {
            kick_pair(k + b / MR_KICK_LANES, 2, MR_KICK_ARGS(b));
            b += 2;
        }
        for (; b + 3 < b1; b += 4)
            kick_quad(k + b / MR_KICK_LANES, 0, MR_KICK_ARGS(b));
    }
#endif
#if TW_MR_PAIRS
    if (lanes >= 2)
        for (; b + 1 < b1; b += 2)
            kick_pair(k + b / MR_KICK_LANES, b % MR_KICK_LANES, MR_KICK_ARGS(b));
#endif
    for (; b < b1; b++)
        kick_packed(k + b / MR_KICK_LANES, b % MR_KICK_LANES, MR_KICK_ARGS(b));
#undef MR_KICK_ARGS
}

/* store 0: the kicks' impulses added; 1: their forces written to m->kf for
 * kick_gather */
static inline __attribute__((always_inline)) void kick_range_in(const tw_multires *m, int b0, int b1, int store,
                                                                int lanes)
{
    const int damped = m->def.damping_phi != 0 || m->def.damping_psi != 0;
    const int green = m->def.strain == TW_MR_GREEN;
    if (store) {
        if (green && !damped)
            kick_variant(m, b0, b1, 1, 0, 1, lanes);
        else if (green)
            kick_variant(m, b0, b1, 1, 1, 1, lanes);
        else if (!damped)
            kick_variant(m, b0, b1, 0, 0, 1, lanes);
        else
            kick_variant(m, b0, b1, 0, 1, 1, lanes);
    } else if (green && !damped) {
        kick_variant(m, b0, b1, 1, 0, 0, lanes);
    } else if (green) {
        kick_variant(m, b0, b1, 1, 1, 0, lanes);
    } else if (!damped) {
        kick_variant(m, b0, b1, 0, 0, 0, lanes);
    } else {
        kick_variant(m, b0, b1, 0, 1, 0, lanes);
    }
}

/* one tet at a time, on every target */
static void kick_range_single(const tw_multires *m, int b0, int b1, int store) { kick_range_in(m, b0, b1, store, 1); }

/* two at a time where the compiler has vector types (SSE2's packed doubles
 * on x86-64), one at a time elsewhere */
static void kick_range_pair(const tw_multires *m, int b0, int b1, int store) { kick_range_in(m, b0, b1, store, 2); }

#if TW_MR_QUADS
/* AVX's encoding also spares SSE2's register copies (three operands);
 * target("avx") adds no fused multiply-add to what the build allows, so
 * every operation rounds as in kick_range_pair */
__attribute__((target("avx"), flatten)) static void kick_range_avx(const tw_multires *m, int b0, int b1, int store)
{
    kick_range_in(m, b0, b1, store, 4);
}
#endif

static void kick_range(const tw_multires *m, int b0, int b1, int store)
{
#if TW_MR_QUADS
    if (m->lanes == 4) {
        kick_range_avx(m, b0, b1, store);
        return;
    }
#endif
    if (m->lanes == 1)
        kick_range_single(m, b0, b1, store);
    else
        kick_range_pair(m, b0, b1, store);
}

/* The impulses of the due tets from b0 on, from their stored forces: each
 * node of gnode[q0 .. q1) adds its entries in ascending tet order, the
 * serial kick's sums for it, in the same expression (imp += scale f). */
static void kick_gather(const tw_multires *m, int b0, int q0, int q1)
{
    const int *inc = m->inc, *inc_ptr = m->inc_ptr;
    const mr_kick *k = m->kick;
    const double *kf = m->kf;
    for (int q = q0; q < q1; q++) {
        const int n = m->gnode[q];
        double *imp = m->imps + 3 * (size_t)n;
        double a0 = imp[0], a1 = imp[1], a2 = imp[2];
        int z = inc_ptr[n];
        const int z1 = inc_ptr[n + 1];
        while (z < z1 && inc[z] >> 2 < b0)
            z++;
        for (; z < z1; z++) {
            const int b = inc[z] >> 2;
            const double scale = k[b / MR_KICK_LANES].scale[b % MR_KICK_LANES], *f = kf + 12 * (size_t)b + 3 * (inc[z] & 3);
            a0 += scale * f[0];
            a1 += scale * f[1];
            a2 += scale * f[2];
        }
        imp[0] = a0;
        imp[1] = a1;
        imp[2] = a2;
    }
}

/* A substep's kicks of the due tets from level kmin on: on the frame's team
 * when there are enough of them, each thread evaluating an even share (tets
 * in pairs) into m->kf, then the gather over the nodes they touch, shared
 * alike; the same bits as the serial kick for any team size (no sum depends
 * on the threads). */
static void kick_substep(const tw_multires *m, int kmin)
{
    const int b0 = m->due_ptr[kmin], b1 = m->due_ptr[m->M + 1];
#ifdef _OPENMP
    if (m->threads > 1 && b1 - b0 >= MR_PAR_TETS) {
        const int pairs = (b1 - b0 + 1) / 2, ng = m->gnode_ptr[kmin];
#pragma omp parallel num_threads(m->threads)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const int s0 = b0 + 2 * (int)((long)pairs * t / nt);
            const int s1 = t + 1 == nt ? b1 : b0 + 2 * (int)((long)pairs * (t + 1) / nt);
            kick_range(m, s0, s1, 1);
#pragma omp barrier
            kick_gather(m, b0, (int)((long)ng * t / nt), (int)((long)ng * (t + 1) / nt));
        }
        return;
    }
#endif
    kick_range(m, b0, b1, 0);
}

/* ---- work: a tet costs 2^(largest dt level of its active nodes) evaluations a frame */

/* A tet with an active node is evaluated (its forces reach active nodes
 * directly, and through its interface nodes the active nodes those are
 * interpolated from) at the finest step of all those nodes. */
static int tet_level(const mr_level *L, int e)
{
    int top = -1, active = 0;
    for (int p = 0; p < 4; p++) {
        const int i = L->m->tets[4 * e + p];
        if (L->state[i] == TW_MR_ACTIVE) {
            active = 1;
            if (L->dtl[i] > top)
                top = L->dtl[i];
        } else if (L->state[i] == TW_MR_INTERFACE && L->ilvl[i] > top) {
            top = L->ilvl[i];
        }
    }
    return active ? top : -1;
}

static long tet_work(const mr_level *L, int e)
{
    const int k = tet_level(L, e);
    return k < 0 ? 0 : 1L << k;
}

/* Over the tets around active nodes (the others cost nothing), each counted
 * at its first active vertex. */
static long total_work(const tw_multires *m)
{
    long w = 0;
    for (int l = 0; l < m->L; l++) {
        const mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++) {
            if (L->state[i] != TW_MR_ACTIVE)
                continue;
            for (int k = L->vt_ptr[i]; k < L->vt_ptr[i + 1]; k++) {
                const int e = L->vt[k] >> 2, p = L->vt[k] & 3;
                const int *t = L->m->tets + 4 * e;
                int first = 1;
                for (int q = 0; q < p && first; q++)
                    first = L->state[t[q]] != TW_MR_ACTIVE;
                if (first)
                    w += tet_work(L, e);
            }
        }
    }
    return w;
}

/* The work of the tets around node i of L not yet in seen (which it extends):
 * the tets a split touches are few, a list is enough. */
static long work_around(const mr_level *L, int i, int *seen, int *nseen)
{
    long w = 0;
    for (int k = L->vt_ptr[i]; k < L->vt_ptr[i + 1]; k++) {
        const int e = L->vt[k] >> 2;
        int dup = 0;
        for (int s = 0; s < *nseen && !dup; s++)
            dup = seen[s] == e;
        if (dup)
            continue;
        seen[(*nseen)++] = e;
        w += tet_work(L, e);
    }
    return w;
}

/* ---- the tool */

static void tool_center(const tw_multires *m, double t, double c[3])
{
    const tw_mr_tool *T = &m->tool;
    double s = 0;
    if (T->move_time > 0) {
        const double u = t / T->move_time;
        s = u <= 0 ? 0 : u <= 1 ? u : u <= 2 ? 2 - u : 0;
    }
    for (int d = 0; d < 3; d++)
        c[d] = T->center0[d] + s * T->move[d];
}

/* How far node i of level L must move along -normal to leave the tool at
 * centre c; 0 when outside or not a boundary node. */
static double tool_push(const tw_multires *m, const mr_level *L, int i, const double c[3])
{
    if (!m->has_tool || !L->boundary[i])
        return 0;
    const double *x = L->x + 3 * i, *n = L->normal + 3 * i;
    const double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
    const double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], r2 = m->tool.radius * m->tool.radius;
    if (!(dd < r2))
        return 0;
    const double dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2];
    return dn + sqrt(dn * dn + r2 - dd);
}

/* Whether active boundary node i may meet the tool in this frame: it, or
 * where its velocity takes it by the frame's end, is within its size h of
 * the sphere at the frame's start or end. Such nodes are held out of the
 * sphere at every substep. */
static int tool_near(const tw_multires *m, const mr_level *L, int i)
{
    if (!m->has_tool || !L->boundary[i] || L->pinned[i])
        return 0;
    const double T = m->def.frame_dt, r = m->tool.radius + L->h_edge[i];
    const double *x = L->x + 3 * i, *v = L->v + 3 * i;
    for (int k = 0; k < 3; k++) {
        const double *c = k == 0 ? m->tool_c0 : m->tool_c1;
        const double w = k == 2 ? T : 0;
        double d2 = 0;
        for (int d = 0; d < 3; d++)
            d2 += (x[d] + w * v[d] - c[d]) * (x[d] + w * v[d] - c[d]);
        if (d2 < r * r)
            return 1;
    }
    return 0;
}

/* Within two node sizes of the tool: a merge there would undo the
 * refinement the tool asks for at the next frame. */
static int near_tool(const tw_multires *m, const mr_level *L, int i, const double *c)
{
    if (L->tool_hit[i])
        return 1;
    if (!c)
        return 0;
    double d2 = 0;
    for (int d = 0; d < 3; d++)
        d2 += (L->x[3 * i + d] - c[d]) * (L->x[3 * i + d] - c[d]);
    const double r = m->tool.radius + fmax(2 * L->h_edge[i], m->margin_on ? m->def.tool_margin : 0);
    return d2 < r * r;
}

/* Within def.tool_margin of the tool at the frame's end (tool_c): the
 * region whose response the force on the tool and the surface under it
 * depend on most, refined ahead of the contact. */
static int in_tool_margin(const tw_multires *m, const mr_level *L, int i, const double *tool_c)
{
    if (!tool_c || !(m->def.tool_margin > 0) || !m->margin_on)
        return 0;
    double d2 = 0;
    for (int d = 0; d < 3; d++)
        d2 += (L->x[3 * i + d] - tool_c[d]) * (L->x[3 * i + d] - tool_c[d]);
    const double r = m->tool.radius + m->def.tool_margin;
    return d2 < r * r;
}

static int node_level_for_dt(const tw_multires *m, const mr_level *L, int i)
{
    int k = L->courant_level[i] > L->boost[i] ? L->courant_level[i] : L->boost[i];
    if (L->eff_level[i] > k)
        k = L->eff_level[i];
    if (L->tool_hit[i] && m->tool_level > k)
        k = m->tool_level;
    return k > m->M ? m->M : k;
}

/* ---- split and merge */

static int has_children(const tw_multires *m, int l, int i)
{
    return l + 1 < m->L && m->lv[l].ch_ptr[i + 1] > m->lv[l].ch_ptr[i];
}

/* Whether tet e of level L, its nodes all holding values (active or
 * interface), is inverted. */
static int tet_inverted(const mr_level *L, int e)
{
    const int *t = L->m->tets + 4 * e;
    const double *g = L->g + 12 * e;
    for (int p = 0; p < 4; p++)
        if (L->state[t[p]] == TW_MR_INACTIVE)
            return 0;
    double F[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int p = 0; p < 4; p++)
        for (int r = 0; r < 3; r++) {
            const double u = L->x[3 * t[p] + r] - L->m->X[3 * t[p] + r];
            for (int c = 0; c < 3; c++)
                F[3 * r + c] += u * g[3 * p + c];
        }
    const double J = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                     F[2] * (F[3] * F[7] - F[4] * F[6]);
    return !(J > 0);
}

/* Activates the children of (l, i) and deactivates it; their state comes
 * from level l by interpolation; returns the change of planned work. */
static long do_split(tw_multires *m, int l, int i, const double *tool_c)
{
    mr_level *C = &m->lv[l], *F = &m->lv[l + 1];
    int seen[1024], ns = 0;
    long before = 0, after = 0;
    /* the tets whose work can change: around i and around its children */
    int need = C->vt_ptr[i + 1] - C->vt_ptr[i];
    for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++)
        need += F->vt_ptr[C->ch[k] + 1] - F->vt_ptr[C->ch[k]];
    const int big = need > 1024;
    if (!big) {
        before += work_around(C, i, seen, &ns);
        int ns2 = 0, *seen2 = seen + ns;
        for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++)
            before += work_around(F, C->ch[k], seen2, &ns2);
    }
    C->state[i] = TW_MR_INTERFACE;
    m->tets_stale = 1;
    /* the detail: i's state less the finer level's interpolation of it, each finer
       node of the tet holding i taken as level l interpolates it (as the children are) */
    const tw_transfer *Pi = &C->loc[l + 1];
    double *det = C->detail + 6 * (size_t)i;
    for (int d = 0; d < 3; d++) {
        det[d] = C->x[3 * i + d] - C->m->X[3 * i + d];
        det[3 + d] = C->v[3 * i + d];
    }
    for (int r = 0; r < TW_HIER_ROW; r++) {
        const int j = Pi->idx[TW_HIER_ROW * i + r];
        const double w = Pi->w[TW_HIER_ROW * i + r];
        double xj[3], vj[3];
        interpolate_value(m, l + 1, j, l, xj, vj);
        for (int d = 0; d < 3; d++) {
            det[d] -= w * (xj[d] - F->m->X[3 * j + d]);
            det[3 + d] -= w * vj[d];
        }
    }
    for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++) {
        const int j = C->ch[k];
        interpolate(m, l + 1, j, l);
        memset(F->imp + 3 * (size_t)j, 0, 3 * sizeof(double));
        F->state[j] = TW_MR_ACTIVE;
        F->eff_level[j] = 0; /* effective_levels sets it with the plan */
        F->gamma[j] = C->gamma[i];
        F->boost[j] = C->boost[i];
        F->tool_hit[j] = 0;
        if (tool_c && tool_near(m, F, j))
            F->tool_hit[j] = 1;
        F->dtl[j] = (signed char)node_level_for_dt(m, F, j);
    }
    m->dirty = 1;
    if (big)
        return -1; /* unknown: the caller recounts */
    ns = 0;
    after += work_around(C, i, seen, &ns);
    int ns2 = 0, *seen2 = seen + ns;
    for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++)
        after += work_around(F, C->ch[k], seen2, &ns2);
    return after - before;
}

static void undo_split(tw_multires *m, int l, int i)
{
    mr_level *C = &m->lv[l], *F = &m->lv[l + 1];
    C->state[i] = TW_MR_ACTIVE;
    for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++)
        F->state[C->ch[k]] = TW_MR_INTERFACE;
    m->tets_stale = 1;
}

static int can_merge(const tw_multires *m, int l, int i)
{
    if (!has_children(m, l, i) || m->lv[l].state[i] == TW_MR_ACTIVE)
        return 0;
    const mr_level *C = &m->lv[l], *F = &m->lv[l + 1];
    for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++)
        if (F->state[C->ch[k]] != TW_MR_ACTIVE)
            return 0;
    return 1;
}

static void do_merge(tw_multires *m, int l, int i)
{
    mr_level *C = &m->lv[l], *F = &m->lv[l + 1];
    double g = 0;
    int boost = 0;
    for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++) {
        const int j = C->ch[k];
        F->state[j] = TW_MR_INTERFACE;
        g = fmax(g, F->gamma[j]);
        if (F->boost[j] > boost)
            boost = F->boost[j];
    }
    interpolate(m, l, i, l + 1); /* with the detail */
    memset(C->detail + 6 * (size_t)i, 0, 6 * sizeof(double));
    memset(C->imp + 3 * (size_t)i, 0, 3 * sizeof(double));
    C->state[i] = TW_MR_ACTIVE;
    C->eff_level[i] = 0;
    C->gamma[i] = g;
    C->boost[i] = (signed char)boost;
    C->tool_hit[i] = 0;
    C->dtl[i] = (signed char)node_level_for_dt(m, C, i);
    m->dirty = 1;
    m->tets_stale = 1;
}

tw_status tw_multires_split(tw_multires *m, int l, int i)
{
    if (l < 0 || l + 1 >= m->L || i < 0 || i >= m->lv[l].nv || m->lv[l].state[i] != TW_MR_ACTIVE ||
        !has_children(m, l, i))
        return tw_fail(TW_ERR_INVALID, "tw_multires_split: node %d of level %d is not an active node with children", i, l);
    do_split(m, l, i, NULL);
    tw_multires_update_interface(m);
    return TW_OK;
}

tw_status tw_multires_merge(tw_multires *m, int l, int i)
{
    if (l < 0 || l + 1 >= m->L || i < 0 || i >= m->lv[l].nv || !can_merge(m, l, i))
        return tw_fail(TW_ERR_INVALID, "tw_multires_merge: the children of node %d of level %d are not all active", i, l);
    do_merge(m, l, i);
    tw_multires_update_interface(m);
    return TW_OK;
}

/* ---- the frame */

typedef struct mr_candidate {
    double key;
    int level, node;
} mr_candidate;

static int cmp_candidate_desc(const void *a, const void *b)
{
    const mr_candidate *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    if (x->level != y->level)
        return x->level - y->level;
    return x->node - y->node;
}

/* The mergeable group with the smallest largest gamma (groups the tool
 * touches last): the merge that costs the least accuracy. 0 when none. */
static int pick_forced_merge(const tw_multires *m, int *bl, int *bi)
{
    double bg = DBL_MAX;
    *bl = *bi = -1;
    for (int l = m->L - 2; l >= 0; l--) {
        const mr_level *C = &m->lv[l], *F = &m->lv[l + 1];
        for (int i = 0; i < C->nv; i++) {
            if (!can_merge(m, l, i))
                continue;
            double g = 0;
            for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1]; k++)
                g = fmax(g, F->tool_hit[C->ch[k]] ? DBL_MAX / 2 : F->gamma[C->ch[k]]);
            if (g < bg) {
                bg = g;
                *bl = l;
                *bi = i;
            }
        }
    }
    return *bl >= 0;
}

/* Whether node j of level l holds its values differently from the frame's
 * start: its state changed, it is filled from another level, or the nodes it
 * is filled from changed state. */
static int node_changed(const tw_multires *m, int l, int j)
{
    const mr_level *L = &m->lv[l];
    const int n = L->node0 + j;
    if (L->state[j] != m->was_state[n] || L->psrc[j] != m->was_src[n])
        return 1;
    const int k = L->psrc[j];
    if (L->state[j] != TW_MR_INTERFACE || k < 0)
        return 0;
    const tw_transfer *P = &L->loc[k];
    for (int r = 0; r < TW_HIER_ROW; r++) {
        const int a = P->idx[TW_HIER_ROW * j + r];
        if (P->w[TW_HIER_ROW * j + r] != 0 && m->lv[k].state[a] != m->was_state[m->lv[k].node0 + a])
            return 1;
    }
    return 0;
}

/* Where a tet with an active node is inverted once the interface is filled,
 * the coarser side splits: its active nodes that have children, and (below
 * the finest level) the active nodes of a coarser level its interface nodes
 * are filled from; until no such split is left. A node whose motion comes
 * from a coarser level (a new child, a merged parent, an interface node)
 * among neighbours that follow a finer one shares tets (slivers at the
 * surface among them) across the levels' difference; they start inverted
 * and their Green strain's forces blow the frame up. Only tets with a node
 * whose values changed source this frame are looked at (node_changed): a
 * tet that inverts as it vibrates among sources that stay is left to its
 * forces, as the finest level alone leaves its slivers. A finest-level
 * sliver reads any coarse field interpolated onto it with a kink, and
 * inverts for a small one: splitting the coarser sources of its interface
 * nodes there moves the front onto more such slivers, and it spreads over
 * the body. Returns the splits. */
static int split_inverted(tw_multires *m, const double *tool_c)
{
    int n = 0;
    for (int round = 0; round < 2 * m->L; round++) {
        int any = 0;
        for (int l = 0; l < m->L; l++) {
            mr_level *L = &m->lv[l];
            for (int q = 0; q < L->nv; q++) {
                if (L->state[q] != TW_MR_ACTIVE)
                    continue;
                for (int z = L->vt_ptr[q]; z < L->vt_ptr[q + 1] && L->state[q] == TW_MR_ACTIVE; z++) {
                    const int e = L->vt[z] >> 2, *t = L->m->tets + 4 * e;
                    int changed = 0;
                    for (int p = 0; p < 4 && !changed; p++)
                        changed = node_changed(m, l, t[p]);
                    if (!changed || !tet_inverted(L, e))
                        continue;
                    for (int p = 0; p < 4; p++) {
                        const int j = t[p];
                        if (L->state[j] == TW_MR_ACTIVE && has_children(m, l, j)) {
                            do_split(m, l, j, tool_c);
                            n++;
                            any = 1;
                        } else if (l + 1 < m->L && L->state[j] == TW_MR_INTERFACE && L->psrc[j] >= 0 && L->psrc[j] < l) {
                            const int k = L->psrc[j];
                            const tw_transfer *P = &L->loc[k];
                            for (int r = 0; r < TW_HIER_ROW; r++) {
                                const int a = P->idx[TW_HIER_ROW * j + r];
                                if (P->w[TW_HIER_ROW * j + r] != 0 && m->lv[k].state[a] == TW_MR_ACTIVE &&
                                    has_children(m, k, a)) {
                                    do_split(m, k, a, tool_c);
                                    n++;
                                    any = 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        if (!any)
            break;
        build_plan(m);
        run_plan(m);
    }
    return n;
}

/* Merges, splits within the budget, and the forced merges that bring a plan
 * over the budget back under it. Returns the planned work. */
static long adapt(tw_multires *m, const double tool_c[3], tw_mr_frame_stats *st)
{
    const double gmin = m->def.gamma_min, gmax = m->def.gamma_max;
    /* merges: every child active and below gamma_min, none touching the tool */
    for (int l = m->L - 2; l >= 0; l--) {
        mr_level *C = &m->lv[l], *F = &m->lv[l + 1];
        for (int i = 0; i < C->nv; i++) {
            if (!can_merge(m, l, i))
                continue;
            int ok = 1;
            for (int k = C->ch_ptr[i]; k < C->ch_ptr[i + 1] && ok; k++)
                ok = F->gamma[C->ch[k]] < gmin && !near_tool(m, F, C->ch[k], tool_c);
            if (ok) {
                do_merge(m, l, i);
                st->merges++;
            }
        }
    }
    long W = total_work(m);
    /* splits, largest gamma first (touching the tool: first of all) */
    int n = 0, cap = 0;
    for (int l = 0; l + 1 < m->L; l++)
        cap += m->lv[l].nv;
    mr_candidate *cand = malloc(sizeof *cand * ((size_t)cap + 1));
    for (int l = 0; l + 1 < m->L; l++) {
        mr_level *C = &m->lv[l];
        for (int i = 0; i < C->nv; i++) {
            if (C->state[i] != TW_MR_ACTIVE || !has_children(m, l, i))
                continue;
            const int touch = m->def.tool_refine && (C->tool_hit[i] || in_tool_margin(m, C, i, tool_c));
            if (touch || C->gamma[i] > gmax) {
                cand[n].key = touch ? DBL_MAX : C->gamma[i];
                cand[n].level = l;
                cand[n].node = i;
                n++;
            }
        }
    }
    qsort(cand, (size_t)n, sizeof *cand, cmp_candidate_desc);
    for (int k = 0; k < n; k++) {
        const int l = cand[k].level, i = cand[k].node;
        if (m->lv[l].state[i] != TW_MR_ACTIVE)
            continue;
        long d = do_split(m, l, i, tool_c);
        if (d < 0)
            d = total_work(m) - W;
        if (m->budget > 0 && W + d > m->budget) {
            undo_split(m, l, i);
            st->refused_splits += n - k; /* refinement stops here */
            break;
        }
        W += d;
        st->splits++;
    }
    free(cand);
    if (m->budget > 0 && W > m->budget) {
        /* the step levels alone passed the budget: drop the speed boosts */
        for (int l = 0; l < m->L; l++)
            for (int i = 0; i < m->lv[l].nv; i++) {
                m->lv[l].boost[i] = 0;
                if (m->lv[l].state[i] == TW_MR_ACTIVE)
                    m->lv[l].dtl[i] = (signed char)node_level_for_dt(m, &m->lv[l], i);
            }
        W = total_work(m);
    }
    while (m->budget > 0 && W > m->budget) {
        int bl, bi;
        if (!pick_forced_merge(m, &bl, &bi))
            break;
        do_merge(m, bl, bi);
        st->forced_merges++;
        W = total_work(m);
    }
    st->over_budget = m->budget > 0 && W > m->budget;
    return W;
}

/* Grows *buf to hold n items of sz bytes; 0 with tw_last_error when out of memory. */
static int grow(void **buf, int *cap, int n, size_t sz, const char *what)
{
    if (n <= *cap)
        return 1;
    int c = *cap > 0 ? *cap : 64;
    while (c < n)
        c *= 2;
    void *p = realloc(*buf, sz * (size_t)c);
    if (!p) {
        tw_fail(TW_ERR_NOMEM, "multires: %s (%d)", what, n);
        return 0;
    }
    *buf = p;
    *cap = c;
    return 1;
}

/* The gather's lists for kicks on threads (kick_substep), when the frame
 * has a team and tets enough for it: each pool node's entries in ascending
 * tet order, and the nodes by their finest due tet level. */
static tw_status build_gather(tw_multires *m, int nb)
{
    m->threads = 1;
#ifdef _OPENMP
    const int nt = TW_THREADS(m->def.threads);
    if (nt < 2 || nb < MR_PAR_TETS)
        return TW_OK;
    const int M = m->M, nn = m->nodes;
    if (!m->inc_ptr) {
        m->inc_ptr = malloc(sizeof(int) * ((size_t)nn + 1));
        m->inc_fill = malloc(sizeof(int) * ((size_t)nn + 1));
        m->gnode = malloc(sizeof(int) * ((size_t)nn + 1));
        m->gnode_ptr = malloc(sizeof(int) * (MR_MAX_DT_LEVEL + 2));
        m->gk = malloc((size_t)nn + 1);
        if (!m->inc_ptr || !m->inc_fill || !m->gnode || !m->gnode_ptr || !m->gk)
            return tw_fail(TW_ERR_NOMEM, "multires: kick gather lists (%d nodes)", nn);
    }
    if (!grow((void **)&m->inc, &m->inc_cap, 4 * nb, sizeof *m->inc, "kick gather entries") ||
        !grow((void **)&m->kf, &m->kf_cap, 12 * nb, sizeof *m->kf, "kick forces"))
        return TW_ERR_NOMEM;
    int *ptr = m->inc_ptr, *fill = m->inc_fill;
    memset(ptr, 0, sizeof(int) * ((size_t)nn + 1));
    memset(m->gk, -1, (size_t)nn);
    for (int k = 0; k <= M; k++)
        for (int b = m->due_ptr[k]; b < m->due_ptr[k + 1]; b++)
            for (int p = 0; p < 4; p++) {
                const int n = m->kick[b / MR_KICK_LANES].n[p][b % MR_KICK_LANES] / 3;
                ptr[n + 1]++;
                m->gk[n] = (signed char)k; /* ascending k: the finest stays */
            }
    for (int n = 0; n < nn; n++)
        ptr[n + 1] += ptr[n];
    memcpy(fill, ptr, sizeof(int) * (size_t)nn);
    for (int b = 0; b < nb; b++)
        for (int p = 0; p < 4; p++)
            m->inc[fill[m->kick[b / MR_KICK_LANES].n[p][b % MR_KICK_LANES] / 3]++] = 4 * b + p;
    /* gnode_ptr[k]: the nodes of finest level >= k; they start, finest first, at
       gnode_ptr[k + 1] */
    int *gp = m->gnode_ptr;
    memset(gp, 0, sizeof(int) * ((size_t)M + 2));
    for (int n = 0; n < nn; n++)
        if (m->gk[n] >= 0)
            gp[m->gk[n]]++;
    for (int k = M - 1; k >= 0; k--)
        gp[k] += gp[k + 1];
    int start[MR_MAX_DT_LEVEL + 2];
    for (int k = 0; k <= M; k++)
        start[k] = gp[k + 1];
    for (int n = 0; n < nn; n++)
        if (m->gk[n] >= 0)
            m->gnode[start[m->gk[n]]++] = n;
    m->threads = nt;
#endif
    return TW_OK;
}

/* The frame's schedule once the active set and the plan are final: the due
 * tets by level with their kick scales, the active nodes of each level, and
 * per tet level k the plan entries a substep evaluating levels k and finer
 * reads (an interface node is read by the tets it belongs to and by the plan
 * entries interpolated from it; a cycle's node by the tets only, and it
 * reads its row's nodes, which come before the cycles in the plan). */
static tw_status build_schedule(tw_multires *m)
{
    const int M = m->M;
    const double T = m->def.frame_dt;
    if (!m->due_ptr) {
        m->due_ptr = malloc(sizeof(int) * (MR_MAX_DT_LEVEL + 2));
        m->sub_ptr = malloc(sizeof(int) * (MR_MAX_DT_LEVEL + 2));
        m->act_ptr = malloc(sizeof(int) * ((size_t)m->L + 1));
        if (!m->due_ptr || !m->sub_ptr || !m->act_ptr)
            return tw_fail(TW_ERR_NOMEM, "multires: frame schedule (%d levels)", m->L);
    }
    int fill[MR_MAX_DT_LEVEL + 2], nb = 0, na = 0;
    memset(m->due_ptr, 0, sizeof(int) * ((size_t)M + 2));
    /* the tets around active nodes (the others have no level), in ascending order */
    active_tets(m);
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int q = 0; q < L->dn; q++) {
            const int k = tet_level(L, L->dl[q]);
            L->tlev[L->dl[q]] = (signed char)k;
            m->due_ptr[k + 1]++;
        }
        nb += L->dn;
    }
    for (int k = 0; k <= M; k++)
        m->due_ptr[k + 1] += m->due_ptr[k];
    for (int l = 0; l < m->L; l++)
        for (int i = 0; i < m->lv[l].nv; i++)
            na += m->lv[l].state[i] == TW_MR_ACTIVE;
    if (!grow((void **)&m->due, &m->due_cap, nb + 1, sizeof *m->due, "frame tet list") ||
        !grow((void **)&m->kick, &m->kick_cap, nb / MR_KICK_LANES + 1, sizeof *m->kick, "frame tet records") ||
        !grow((void **)&m->ip, &m->ip_cap, m->plan_n + 1, sizeof *m->ip, "frame plan records") ||
        !grow((void **)&m->act, &m->act_cap, na + 1, sizeof *m->act, "frame active nodes"))
        return TW_ERR_NOMEM;
    memcpy(fill, m->due_ptr, sizeof(int) * ((size_t)M + 2));
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int j = 0; j < L->dn; j++) {
            const int e = L->dl[j], k = L->tlev[e];
            const int *t = L->m->tets + 4 * e;
            int active = 0;
            for (int p = 0; p < 4; p++)
                active += L->state[t[p]] == TW_MR_ACTIVE;
            const int b = fill[k]++, j = b % MR_KICK_LANES;
            mr_kick *q = &m->kick[b / MR_KICK_LANES];
            mr_due *d = &m->due[b];
            d->level = l;
            d->tet = e;
            /* each active node owns a quarter of the tet's energy */
            d->scale = T / (1 << k) * active / 4;
            for (int p = 0; p < 4; p++)
                q->n[p][j] = 3 * (L->node0 + t[p]);
            for (int c = 0; c < 12; c++)
                q->g[c][j] = L->g[12 * (size_t)e + c];
            q->vol[j] = L->vol[e];
            q->scale[j] = d->scale;
        }
    }
    for (int k = 0; k < m->plan_n; k++) {
        const int l = m->plan[k].level, i = m->plan[k].node, src = m->plan[k].src;
        mr_level *D = &m->lv[l];
        const tw_transfer *P = &D->loc[src];
        mr_interp *q = &m->ip[k];
        q->node = D->node0 + i;
        q->pinned = D->pinned[i];
        q->row = k >= m->plan_n - m->stale ? k - (m->plan_n - m->stale) : -1;
        q->detail = src == l + 1 ? D->detail + 6 * (size_t)i : mr_no_detail;
        for (int r = 0; r < TW_HIER_ROW; r++) {
            q->src[r] = m->lv[src].node0 + P->idx[TW_HIER_ROW * i + r];
            q->w[r] = P->w[TW_HIER_ROW * i + r];
        }
    }
    na = 0;
    for (int l = 0; l < m->L; l++) {
        m->act_ptr[l] = na;
        for (int i = 0; i < m->lv[l].nv; i++)
            if (m->lv[l].state[i] == TW_MR_ACTIVE)
                m->act[na++] = i;
    }
    m->act_ptr[m->L] = na;
    /* the plan entries' needs: the readers' tet levels, carried back to the sources */
    for (int k = 0; k < m->plan_n; k++)
        m->lv[m->plan[k].level].need[m->plan[k].node] = -1;
    for (int b = 0; b < nb; b++) {
        int k = 0;
        while (b >= m->due_ptr[k + 1])
            k++;
        mr_level *L = &m->lv[m->due[b].level];
        const int *t = L->m->tets + 4 * m->due[b].tet;
        for (int p = 0; p < 4; p++)
            if (L->state[t[p]] == TW_MR_INTERFACE && L->need[t[p]] < k)
                L->need[t[p]] = (signed char)k;
    }
    /* a cycle's node reads its row's nodes: active ones and entries before the
       cycles (no tet or entry reads a cycle's node but the tets) */
    for (int k = m->plan_n - m->stale; k < m->plan_n; k++) {
        const int s = k - (m->plan_n - m->stale), n = m->lv[m->plan[k].level].need[m->plan[k].node];
        for (int q = m->srow_ptr[s]; q < m->srow_ptr[s + 1] && n >= 0; q++) {
            const int j = m->srow_src[q], sl = pool_level(m, j);
            mr_level *S = &m->lv[sl];
            if (S->inplan[j - S->node0] && S->need[j - S->node0] < n)
                S->need[j - S->node0] = (signed char)n;
        }
    }
    int changed = 1;
    while (changed) { /* one pass: sources come first in the plan */
        changed = 0;
        for (int k = m->plan_n - m->stale - 1; k >= 0; k--) {
            const int l = m->plan[k].level, i = m->plan[k].node, src = m->plan[k].src;
            const int n = m->lv[l].need[i];
            if (n < 0)
                continue;
            const tw_transfer *P = &m->lv[l].loc[src];
            mr_level *S = &m->lv[src];
            for (int r = 0; r < TW_HIER_ROW; r++) {
                const int j = P->idx[TW_HIER_ROW * i + r];
                if (P->w[TW_HIER_ROW * i + r] != 0 && S->inplan[j] && S->need[j] < n) {
                    S->need[j] = (signed char)n;
                    changed = 1;
                }
            }
        }
        break;
    }
    int ns = 0;
    for (int k = 0; k < m->plan_n; k++)
        ns += m->lv[m->plan[k].level].need[m->plan[k].node] + 1;
    if (!grow((void **)&m->sub, &m->sub_cap, ns + 1, sizeof *m->sub, "frame plan lists"))
        return TW_ERR_NOMEM;
    ns = 0;
    for (int k = 0; k <= M; k++) {
        m->sub_ptr[k] = ns;
        for (int q = 0; q < m->plan_n; q++)
            if (m->lv[m->plan[q].level].need[m->plan[q].node] >= k)
                m->sub[ns++] = q;
    }
    m->sub_ptr[M + 1] = ns;
    return build_gather(m, nb);
}

/* The plan entries a substep evaluating tet levels kmin and finer reads: in
 * plan order, as run_plan would interpolate them. */
static void run_sub(tw_multires *m, int kmin)
{
    if (m->L < 2)
        return;
    const double *X = m->Xs;
    double *xs = m->xs, *vs = m->vs, *us = m->us;
    for (int q = m->sub_ptr[kmin]; q < m->sub_ptr[kmin + 1]; q++) {
        /* interpolate()'s arithmetic on the packed entry */
        const mr_interp *p = &m->ip[m->sub[q]];
        if (p->row >= 0) {
            apply_row(m, p->row, p->node, p->pinned);
            continue;
        }
        const size_t i = 3 * (size_t)p->node;
        if (p->pinned) {
            for (int d = 0; d < 3; d++) {
                xs[i + d] = X[i + d];
                vs[i + d] = 0;
                us[i + d] = 0; /* X - X */
            }
            continue;
        }
        double x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
        TW_MR_UNROLL
        for (int r = 0; r < TW_HIER_ROW; r++) {
            const size_t j = 3 * (size_t)p->src[r];
            const double w = p->w[r];
            TW_MR_UNROLL
            for (int d = 0; d < 3; d++) {
                x[d] += w * us[j + d];
                v[d] += w * vs[j + d];
            }
        }
        /* an entry without a detail adds zeros, as interpolate() adds 0 */
        const double *det = p->detail;
        TW_MR_UNROLL
        for (int d = 0; d < 3; d++) {
            xs[i + d] = X[i + d] + x[d] + det[d];
            vs[i + d] = v[d] + det[3 + d];
            us[i + d] = xs[i + d] - X[i + d];
        }
    }
}

/* The transpose of the interpolation, in reverse plan order: an interface
 * node's impulse goes to the nodes it is interpolated from, so that the
 * forces are the gradient of one energy of the active nodes (the
 * interface positions being functions of them) and the mixed levels
 * conserve it. A pinned interface node holds its own. Over the entries a
 * substep evaluating tet levels kmin and finer reads: the others hold no
 * impulse. */
static void scatter_sub(tw_multires *m, int kmin)
{
    double *imp = m->imps;
    for (int q = m->sub_ptr[kmin + 1] - 1; q >= m->sub_ptr[kmin]; q--) {
        const mr_interp *p = &m->ip[m->sub[q]];
        double *g = imp + 3 * (size_t)p->node;
        if (p->row >= 0) {
            if (!p->pinned)
                for (int z = m->srow_ptr[p->row]; z < m->srow_ptr[p->row + 1]; z++)
                    for (int d = 0; d < 3; d++)
                        imp[3 * (size_t)m->srow_src[z] + d] += m->srow_w[z] * g[d];
            g[0] = g[1] = g[2] = 0;
            continue;
        }
        if (!p->pinned && (g[0] != 0 || g[1] != 0 || g[2] != 0))
            TW_MR_UNROLL
            for (int r = 0; r < TW_HIER_ROW; r++) {
                const double w = p->w[r];
                TW_MR_UNROLL
                for (int d = 0; d < 3; d++)
                    imp[3 * (size_t)p->src[r] + d] += w * g[d];
            }
        g[0] = g[1] = g[2] = 0;
    }
}

/* A node's impulse g over the frame step T and over its mass: the six
 * quotients, two at a time where the compiler has vector types. Divisions
 * bound the substep's node loop (they are not pipelined); a lane rounds as
 * the scalar division does. */
static inline void node_quotients(const double g[3], double T, double mass, double gt[3], double gm[3])
{
#if TW_MR_PAIRS
    const mr_v2 q0 = (mr_v2){g[0], g[1]} / (mr_v2){T, T}, q1 = (mr_v2){g[2], g[0]} / (mr_v2){T, mass};
    const mr_v2 q2 = (mr_v2){g[1], g[2]} / (mr_v2){mass, mass};
    gt[0] = q0[0];
    gt[1] = q0[1];
    gt[2] = q1[0];
    gm[0] = q1[1];
    gm[1] = q2[0];
    gm[2] = q2[1];
#else
    for (int d = 0; d < 3; d++) {
        gt[d] = g[d] / T;
        gm[d] = g[d] / mass;
    }
#endif
}

tw_status tw_multires_frame(tw_multires *m, tw_mr_frame_stats *stats)
{
    tw_mr_frame_stats st;
    memset(&st, 0, sizeof st);
    const double T = m->def.frame_dt;
    int M = m->M;
    double c_end[3] = {0, 0, 0};
    if (m->has_tool) {
        tool_center(m, m->time, m->tool_c0);
        tool_center(m, m->time + T, m->tool_c1);
        memcpy(c_end, m->tool_c1, sizeof c_end);
    }
    /* the margin refines ahead of a contact: while the tool moves, or holds the
       surface; a tool at rest off the body lets the region merge */
    m->margin_on = m->has_tool && (m->tool_touched || m->tool_c1[0] != m->tool_c0[0] ||
                                   m->tool_c1[1] != m->tool_c0[1] || m->tool_c1[2] != m->tool_c0[2]);
    for (int l = 0; l < m->L; l++) {
        const mr_level *L = &m->lv[l];
        memcpy(m->was_state + L->node0, L->state, (size_t)L->nv);
        memcpy(m->was_src + L->node0, L->psrc, (size_t)L->nv);
    }
    /* contact for the end of the frame, on the active set as it stands */
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++) {
            L->tool_hit[i] = L->state[i] == TW_MR_ACTIVE && tool_near(m, L, i);
            if (L->state[i] == TW_MR_ACTIVE)
                L->dtl[i] = (signed char)node_level_for_dt(m, L, i);
        }
    }
    st.predicted_work = adapt(m, m->has_tool ? c_end : NULL, &st);
    if (m->dirty)
        build_plan(m);
    run_plan(m);
    st.splits += split_inverted(m, m->has_tool ? c_end : NULL);
    effective_levels(m); /* the deformation moved since the plan: the tangent's bound */
    /* the nodes the tool may meet, now that the active set is final */
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++) {
            L->tool_hit[i] = L->state[i] == TW_MR_ACTIVE && tool_near(m, L, i);
            memset(L->tool_f + 3 * i, 0, 3 * sizeof(double));
            memset(L->tool_last + 3 * i, 0, 3 * sizeof(double));
            L->tool_held[i] = 0;
            if (L->tool_hit[i]) {
                st.tool_nodes++;
                L->dtl[i] = (signed char)node_level_for_dt(m, L, i);
            }
        }
    }
    /* the plan's work, now that the interface nodes' levels are known: forced
       merges while it passes the budget */
    plan_levels(m);
    long W = total_work(m);
    /* a plan rebuild costs a pass over every level's nodes: the merges go in
       batches that double, not one rebuild each */
    for (int batch = 1; m->budget > 0 && W > m->budget; batch *= 2) {
        int merged = 0, bl, bi;
        while (merged < batch && pick_forced_merge(m, &bl, &bi)) {
            do_merge(m, bl, bi);
            merged++;
        }
        if (!merged)
            break;
        st.forced_merges += merged;
        build_plan(m);
        run_plan(m);
        plan_levels(m);
        W = total_work(m);
    }
    st.over_budget = m->budget > 0 && W > m->budget;
    st.predicted_work = W;
    /* the tets to evaluate, bucketed by their level (the largest step level of
       their active nodes): level k is due at substeps that are multiples of 2^(M-k) */
    M = m->M; /* effective_levels may have made the finest step finer */
    tw_status rs = build_schedule(m);
    if (rs != TW_OK)
        return rs;
    /* the frame's finest step: that of its finest tet or node (M when the def fixes
       it); a finer drift would only split the same straight lines */
    int Ms = M;
    if (!m->def.max_dt_level) {
        Ms = 0;
        for (int k = 0; k <= M; k++)
            if (m->due_ptr[k + 1] > m->due_ptr[k])
                Ms = k;
        for (int l = 0; l < m->L; l++)
            for (int q = m->act_ptr[l]; q < m->act_ptr[l + 1]; q++)
                if (m->lv[l].dtl[m->act[q]] > Ms)
                    Ms = m->lv[l].dtl[m->act[q]];
    }
    const int N = 1 << Ms;
    st.tool_step_level = -1;
    for (int l = 0; l < m->L; l++)
        for (int q = m->act_ptr[l]; q < m->act_ptr[l + 1]; q++) {
            const int i = m->act[q];
            if (m->lv[l].tool_hit[i] && m->lv[l].dtl[i] > st.tool_step_level)
                st.tool_step_level = m->lv[l].dtl[i];
        }
    /* the frame's mean forces and the speed test's velocities: of active nodes only */
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int q = m->act_ptr[l]; q < m->act_ptr[l + 1]; q++) {
            const int i = m->act[q];
            memset(L->f + 3 * i, 0, 3 * sizeof(double));
            memcpy(L->v_tick + 3 * i, L->v + 3 * i, 3 * sizeof(double));
        }
    }
    /* per-tet kicks, a drift of every node by the finest step (the file's top);
       with one step for all this is symplectic Euler */
    const double ds = T / N;
    /* the displacements the substeps keep, from the positions as the frame's set-up
       left them */
    for (size_t n = 0; n < 3 * (size_t)m->nodes; n++)
        m->us[n] = m->xs[n] - m->Xs[n];
    /* the same products each substep: once (v += gds equals v += ds g where no
       multiply-add is fused, which the build ensures for this file) */
    const double gds[3] = {ds * m->def.gravity[0], ds * m->def.gravity[1], ds * m->def.gravity[2]};
    const int semi = m->def.semi_implicit;
    const double speed_change = m->def.speed_change;
    for (int s = 0; s < N; s++) {
        double tf[3] = {0, 0, 0};
        int held = 0;
        int kmin = 0; /* the coarsest tet level due at s */
        if (s > 0) {
            int tz = 0;
            while (!((s >> tz) & 1))
                tz++;
            kmin = Ms - tz;
        }
        kick_substep(m, kmin);
        st.work += m->due_ptr[M + 1] - m->due_ptr[kmin];
        scatter_sub(m, kmin);
        /* per active node (each reads and writes its own values only): the kick,
           gravity, the node's own step's end (filter, speed change), the drift. The
           level's arrays are in locals: the stores into the byte flags below may alias
           anything, which would reload them at every node */
        for (int l = 0; l < m->L; l++) {
            mr_level *L = &m->lv[l];
            double *const Lx = L->x, *const Lv = L->v, *const Lf = L->f, *const Limp = L->imp;
            double *const Lu = m->us + 3 * (size_t)L->node0;
            const double *const LX = L->m->X;
            double *const Ltool_f = L->tool_f, *const Ltool_last = L->tool_last, *const Lv_tick = L->v_tick;
            const double *const Lmass = L->mass;
            const unsigned char *const Lpinned = L->pinned, *const Lhit = L->tool_hit;
            const signed char *const Ldtl = L->dtl;
            const int *const act = m->act;
            const int q1 = m->act_ptr[l + 1];
            for (int q = m->act_ptr[l]; q < q1; q++) {
                const int i = act[q];
                const int pinned = Lpinned[i], hit = Lhit[i];
                double *g = Limp + 3 * i;
                if (g[0] != 0 || g[1] != 0 || g[2] != 0) {
                    double gt[3], gm[3];
                    node_quotients(g, T, Lmass[i], gt, gm);
                    TW_MR_UNROLL
                    for (int d = 0; d < 3; d++)
                        Lf[3 * i + d] += gt[d];
                    if (hit)
                        TW_MR_UNROLL
                        for (int d = 0; d < 3; d++)
                            Ltool_f[3 * i + d] += g[d];
                    if (!pinned)
                        TW_MR_UNROLL
                        for (int d = 0; d < 3; d++)
                            Lv[3 * i + d] += gm[d];
                    g[0] = g[1] = g[2] = 0;
                }
                double *x = Lx + 3 * i, *v = Lv + 3 * i;
                if (pinned) {
                    memset(v, 0, 3 * sizeof *v);
                    continue;
                }
                TW_MR_UNROLL
                for (int d = 0; d < 3; d++)
                    v[d] += gds[d];
                const int dtl = Ldtl[i];
                const int span = 1 << (Ms - dtl); /* a power of 2: a mask, not a division */
                if (((s + 1) & (span - 1)) == 0) {
                    /* the end of the node's own step */
                    const double dt = T / (1 << dtl);
                    if (hit) {
                        for (int d = 0; d < 3; d++) {
                            Ltool_last[3 * i + d] = Ltool_f[3 * i + d] / dt;
                            Ltool_f[3 * i + d] = 0;
                        }
                        L->tool_held[i] = L->tool_held[i] & 1 ? 2 : 0;
                    }
                    if (semi) {
                        double A[9], Ai[9];
                        for (int k = 0; k < 9; k++)
                            A[k] = (k % 4 == 0) + dt * dt / Lmass[i] * L->Kd[9 * i + k];
                        m3_inverse(A, Ai);
                        const double w[3] = {v[0], v[1], v[2]};
                        for (int r = 0; r < 3; r++)
                            v[r] = Ai[3 * r] * w[0] + Ai[3 * r + 1] * w[1] + Ai[3 * r + 2] * w[2];
                    }
                    if (speed_change > 0) {
                        double dv2 = 0;
                        for (int d = 0; d < 3; d++) {
                            const double q = v[d] - Lv_tick[3 * i + d];
                            dv2 += q * q;
                            Lv_tick[3 * i + d] = v[d];
                        }
                        const double moved = sqrt(dv2) * dt, lim = speed_change * L->h[i];
                        if (moved > lim && dtl + 1 > L->boost[i])
                            L->boost[i] = (signed char)(dtl + 1 > M ? M : dtl + 1);
                        else if (moved < lim / 4 && L->boost[i] > 0 && s + 1 == N)
                            L->boost[i]--; /* calm at the frame's end: relax one level */
                    }
                }
                TW_MR_UNROLL
                for (int d = 0; d < 3; d++)
                    x[d] += ds * v[d];
                if (hit) {
                    /* a one-sided constraint: out of the sphere as it stands at the substep's
                       end, moved along the inward normal (the surface gets out of the tool's
                       way), and not moving towards the tool faster than it moves; where it
                       holds the node, the node's internal force (pressing out, towards the
                       tool) is the force on the tool */
                    const double a = (double)(s + 1) / N;
                    double c[3], vs[3];
                    for (int d = 0; d < 3; d++) {
                        c[d] = m->tool_c0[d] + a * (m->tool_c1[d] - m->tool_c0[d]);
                        vs[d] = (m->tool_c1[d] - m->tool_c0[d]) / T;
                    }
                    const double *n = L->normal + 3 * i;
                    const double sx = tool_push(m, L, i, c);
                    const double *fi = Ltool_last + 3 * i;
                    if (sx > 0) {
                        const double un = (v[0] - vs[0]) * n[0] + (v[1] - vs[1]) * n[1] + (v[2] - vs[2]) * n[2];
                        for (int d = 0; d < 3; d++) {
                            x[d] -= sx * n[d];
                            if (un > 0)
                                v[d] -= un * n[d];
                        }
                        L->tool_held[i] |= 1;
                        held++;
                    }
                    /* in contact: held in this step or the last one, pressing out */
                    if (L->tool_held[i] && fi[0] * n[0] + fi[1] * n[1] + fi[2] * n[2] > 0)
                        for (int d = 0; d < 3; d++)
                            tf[d] += fi[d];
                }
                TW_MR_UNROLL
                for (int d = 0; d < 3; d++)
                    Lu[3 * i + d] = x[d] - LX[3 * i + d];
                if (!isfinite(x[0] + x[1] + x[2]))
                    return tw_fail(TW_ERR_DIVERGED, "multires: node %d of level %d diverged at t = %g s", i, l,
                                   m->time + (double)(s + 1) / N * T);
            }
        }
        /* the interface nodes the next substep reads; all of them after the last */
        if (s + 1 < N) {
            int tz = 0;
            while (!(((s + 1) >> tz) & 1))
                tz++;
            run_sub(m, Ms - tz);
        } else {
            run_plan(m);
        }
        for (int d = 0; d < 3; d++) {
            st.tool_force[d] += tf[d] / N;
            st.tool_force_last[d] = tf[d];
        }
        if (held > st.tool_held)
            st.tool_held = held;
    }
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++)
            if (L->state[i] == TW_MR_ACTIVE) {
                const double *f = L->f + 3 * i;
                L->gamma[i] = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]) / (m->mu * L->stiff * L->h_edge[i]);
            }
    }
    m->tool_touched = st.tool_held > 0;
    m->time += T;
    m->frame++;
    /* stats */
    st.substeps = N;
    st.stale_interface = m->stale;
    for (int l = 0; l < m->L; l++) {
        const mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++) {
            if (L->state[i] == TW_MR_ACTIVE) {
                st.active_nodes++;
                if (l < 8)
                    st.active_per_level[l]++;
                st.max_gamma = fmax(st.max_gamma, L->gamma[i]);
            } else if (L->state[i] == TW_MR_INTERFACE) {
                st.interface_nodes++;
            }
        }
    }
    if (stats)
        *stats = st;
    return TW_OK;
}

/* ---- setup and views */

int tw_multires_fix(tw_multires *m, int axis, int less, double value)
{
    int count = 0;
    if (axis < 0 || axis > 2)
        return 0;
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++) {
            const double x = L->m->X[3 * i + axis];
            if (less ? x < value : x > value) {
                L->pinned[i] = 1;
                memcpy(L->x + 3 * i, L->m->X + 3 * i, 3 * sizeof(double));
                memset(L->v + 3 * i, 0, 3 * sizeof(double));
                count++;
            }
        }
    }
    return count;
}

void tw_multires_set_tool(tw_multires *m, const tw_mr_tool *tool)
{
    m->has_tool = tool != NULL && tool->radius > 0;
    if (m->has_tool)
        m->tool = *tool;
}

void tw_multires_set_budget(tw_multires *m, double work_budget) { m->budget = work_budget > 0 ? work_budget : 0; }

int tw_multires_levels(const tw_multires *m) { return m->L; }
const tw_mesh *tw_multires_mesh(const tw_multires *m, int l) { return m->lv[l].m; }
double *tw_multires_positions(tw_multires *m, int l) { return m->lv[l].x; }
double *tw_multires_velocities(tw_multires *m, int l) { return m->lv[l].v; }
const unsigned char *tw_multires_states(const tw_multires *m, int l) { return m->lv[l].state; }
const signed char *tw_multires_dt_levels(const tw_multires *m, int l) { return m->lv[l].dtl; }
const double *tw_multires_node_h(const tw_multires *m, int l) { return m->lv[l].h; }
const double *tw_multires_node_dt_limit(const tw_multires *m, int l) { return m->lv[l].dt_limit; }
double tw_multires_frame_dt(const tw_multires *m) { return m->def.frame_dt; }
int tw_multires_max_dt_level(const tw_multires *m) { return m->M; }
double tw_multires_time(const tw_multires *m) { return m->time; }
double tw_multires_wave_speed(const tw_multires *m) { return m->wave; }

void tw_multires_energy(tw_multires *m, double *kinetic, double *elastic, double *gravity)
{
    double ek = 0, ee = 0, eg = 0;
    for (int l = 0; l < m->L; l++) {
        mr_level *L = &m->lv[l];
        for (int i = 0; i < L->nv; i++) {
            if (L->state[i] != TW_MR_ACTIVE)
                continue;
            const double *v = L->v + 3 * i;
            ek += 0.5 * L->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            for (int d = 0; d < 3; d++)
                eg -= L->mass[i] * m->def.gravity[d] * (L->x[3 * i + d] - L->m->X[3 * i + d]);
        }
        for (int e = 0; e < L->nt; e++) {
            int act = 0;
            for (int p = 0; p < 4; p++)
                act += L->state[L->m->tets[4 * e + p]] == TW_MR_ACTIVE;
            if (act) {
                /* energy only: the forces it also writes are scratch between substeps */
                ee += act / 4.0 * tet_force(m, L, e, 1);
            }
        }
    }
    if (kinetic)
        *kinetic = ek;
    if (elastic)
        *elastic = ee;
    if (gravity)
        *gravity = eg;
}

int tw_multires_tool_center(const tw_multires *m, double c[3])
{
    if (!m->has_tool)
        return 0;
    tool_center(m, m->time, c);
    return 1;
}

int tw_multires_point_level(const tw_multires *m, int l, int i)
{
    const mr_level *L = &m->lv[l];
    if (L->state[i] == TW_MR_ACTIVE || m->L < 2)
        return l;
    /* the level whose active nodes carry most of the point's weight (an
     * interface node's position comes from active nodes of another level) */
    int best = l;
    double bw = 0;
    for (int k = 0; k < m->L; k++) {
        if (k == l)
            continue;
        double wa = 0;
        for (int r = 0; r < TW_HIER_ROW; r++)
            if (m->lv[k].state[L->loc[k].idx[TW_HIER_ROW * i + r]] == TW_MR_ACTIVE)
                wa += L->loc[k].w[TW_HIER_ROW * i + r];
        if (wa > bw + 1e-12) {
            bw = wa;
            best = k;
        }
    }
    return best;
}

void tw_multires_probe(const tw_multires *m, int l, int i, double x[3])
{
    const mr_level *L = &m->lv[l];
    if (L->state[i] != TW_MR_INACTIVE || m->L < 2) {
        memcpy(x, L->x + 3 * i, 3 * sizeof(double));
        return;
    }
    int best = l == 0 ? 1 : 0;
    double bw = -1;
    for (int k = 0; k < m->L; k++) {
        if (k == l)
            continue;
        double wa = 0;
        for (int r = 0; r < TW_HIER_ROW; r++)
            if (m->lv[k].state[L->loc[k].idx[TW_HIER_ROW * i + r]] != TW_MR_INACTIVE)
                wa += L->loc[k].w[TW_HIER_ROW * i + r];
        if (wa > bw + 1e-12) {
            bw = wa;
            best = k;
        }
    }
    const tw_transfer *P = &L->loc[best];
    const mr_level *S = &m->lv[best];
    for (int d = 0; d < 3; d++) {
        x[d] = L->m->X[3 * i + d];
        for (int r = 0; r < TW_HIER_ROW; r++) {
            const int j = P->idx[TW_HIER_ROW * i + r];
            x[d] += P->w[TW_HIER_ROW * i + r] * (S->x[3 * j + d] - S->m->X[3 * j + d]);
        }
    }
}
