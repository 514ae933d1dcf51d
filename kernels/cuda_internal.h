// The CUDA backend's internals, shared by cuda_world.cu (create, step,
// destroy), cuda_kernels.cu (rotations, forces, assembly, integration),
// cuda_integrators.cu (BDF2, explicit Newmark), cuda_contact.cu (colliders)
// and cuda_pcg.cu (the filtered block-Jacobi PCG). C++ linkage: nothing here is part of the C interface (that is
// cuda_world.h).
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#ifndef TW_CUDA_INTERNAL_H
#define TW_CUDA_INTERNAL_H
#include <cuda_runtime.h>
#include <cusparse.h>

#include "cuda_world.h"
#include "hd/step.h"
extern "C" {
#include "error.h" /* tw_fail: a C function, declared without extern "C" */
}

#define TW_CUDA_THREADS 256 /* every kernel's block size (the reductions assume it) */
#define TW_CUDA_REDUCE_BLOCKS 1024 /* at most this many partial sums per reduction */
#define TW_CUDA_REDUCE_VALUES 4 /* at most this many sums per reduction */

/* Device scalars (doubles) the PCG and the reductions leave on the device,
 * indices into tw_cuda_world.scalars. Contiguous where one reduction writes
 * several: (RZ, RR, BB) by the initial residual, (RZ, RR) per iteration. */
enum {
    TW_S_RZ = 0,      /* r . z, current */
    TW_S_RR = 1,      /* r . r */
    TW_S_BB = 2,      /* |S b|^2 */
    TW_S_PQ = 3,      /* p . A p */
    TW_S_RZ_PREV = 4, /* r . z of the previous iteration (beta's denominator) */
    TW_S_NET = 5,     /* 3: net elastic force (ghost-force correction) */
    TW_S_MOM = 8,     /* 3: momentum excess (conserve_momentum) */
    TW_S_CONTACTS = 11, /* 3: active contact vertices, those that joined or left the active set,
                           those with friction off Coulomb's (cuda_contact.cu) */
    TW_S_FORCE = 14,    /* 3: the force on one collider (tw_cuda_contact_forces) */
    TW_S_ALPHA = 17,    /* the fused PCG (cuda_pcg_fused.cu): rz / pq of this iteration */
    TW_S_BETA = 18,     /* the fused PCG: rz / rz_prev for the next direction (0 before the first) */
    TW_S_IMPACTS = 19,  /* active contacts that hit their collider (tw_cuda_contact_impacts) */
    /* warp-vertex under BDF2's energy projection and the energy check (cuda_integrators.cu) */
    TW_S_E0 = 20,     /* 3: kinetic, elastic, gravity energy at the step's start */
    TW_S_E1 = 23,     /* 3: the same at its end (the check's: after the projection) */
    TW_S_VC = 26,     /* 4: sum m v (3), sum m: the centre of mass's velocity (0 when held) */
    TW_S_KREL = 30,   /* the kinetic energy relative to it */
    TW_S_SCALE = 31,  /* the velocities' factor, or -1: no projection this step */
    TW_S_G = 32,      /* |S G|^2: the Newton residual (tw_cuda_newton_residual) */
    TW_S_BICG = 33,   /* 2: BiCGStab's dots, read back (cuda_bicgstab.cu) */
    TW_S_PATCH = 35,  /* TW_CONTACT_PATCH_SUMS (9): the contact set's sums after a solve (cuda_contact.cu) */
    TW_S_TURN = 44,   /* warp-vertex's turn test: vertices turned past TW_WARP_TURN (tw_cuda_warp_turn) */
    TW_S_COUNT = 45
};

/* The per-step numbers, in device memory (tw_cuda_world.params), written by
 * one host-to-device copy before each step (graph or not) and read by the
 * kernels: a captured graph never bakes one of them into a kernel argument,
 * so changing dt, damping, gravity, the spring or the CG settings needs no
 * new graph. (What changes which kernels run is the graph's shape, below.) */
typedef struct tw_cuda_params {
    double h;            /* dt, s (the divergence check) */
    double heff;         /* the integrator's effective step, s (implicit Euler: h) */
    double cm, ck;       /* system matrix: cm M + ck K (damping folded in) */
    double gravity[3];   /* m/s^2 */
    double anchor[3];    /* spring anchor, m */
    double spring_k;     /* N/m */
    int spring_vertex;   /* -1: no spring */
    int warm_start;      /* 1: CG starts from v */
    int fixed;           /* 1: run exactly limit iterations (no tolerance test) */
    int limit;           /* iteration cap: cg_fixed_iterations or cg_max_iterations */
    double tol;          /* relative residual |r| / |S b| */
    double max_move;     /* 10 x the object's size, m: the divergence yardstick */
    int ncolliders;      /* colliders in tw_cuda_data.colliders (the shape says whether any) */
    double touch;        /* TW_CONTACT_TOUCH x size, m: the touch distance near the origin (tw_contact_touch) */
    double vt_min;       /* TW_CONTACT_TOUCH x size / heff, m/s: the smallest |v_t| implicit friction divides by */
    double gtol;         /* TW_CONTACT_GTOL x size, m: how far inside a landing is noise (tw_contact_update) */
    int history;         /* BDF2: 1 when the step uses the previous one (heff = 2h/3, xbase and vbase from
                            xprev, vprev); 0 on its first step (implicit Euler: heff = h, xbase = x, vbase = v) */
    double alpha;        /* mass-proportional damping, 1/s (explicit Newmark) */
    int energy_held;     /* the energy projection: a vertex is constrained (no centre-of-mass split) */
    double beta;         /* stiffness-proportional damping, s (the Newton residual) */
    int energy_skip_start; /* the energy at the step's start is not needed (the host has it, no projection):
                              its pass sums nothing */
    double patch_mass;   /* the free vertices' mass, kg (tw_contact_patch_mass; 0: no contact-set estimate) */
} tw_cuda_params;

/* What a step leaves on the device for the host: read back once per step
 * (a few scalars, never vertex data). The PCG's state lives here too: the
 * loop is decided on the device (pcg_start / pcg_decide kernels). */
typedef struct tw_cuda_status {
    int active;             /* 1 while the PCG iterates: every per-iteration kernel does nothing once 0 */
    int iterations;         /* CG iterations done */
    int negative_curvature; /* p . A p <= 0 stopped the loop */
    int nonfinite_vertex;   /* the first vertex with a non-finite v+, -1 when none */
    int vmax_vertex;        /* the fastest vertex of v+ (the first on ties) */
    int ok;                 /* 1: the step passed the divergence check, x and v were updated */
    double bnorm;           /* |S b| (1 when it is ~0) */
    double rn;              /* |r| after the last iteration */
    double residual;        /* rn / bnorm */
    double vmax;            /* max |v+|, m/s */
    int contacts;           /* contact vertices marked this step (0 without colliders) */
    int contact_changed;    /* the last active-set update: vertices that joined or left */
    int contact_friction;   /* ... and those whose friction was off Coulomb's */
    int impacts;            /* active contacts that hit their collider this step (BDF2 restarts) */
    int energy_projected;   /* the energy projection scaled the new velocities this step */
} tw_cuda_status;

/* The device arrays every kernel reads, passed by value (one argument). The
 * pointers never change for a world's life, so captured graphs may bake them. */
typedef struct tw_cuda_data {
    int n, nt, nnzb;
    /* constant (from tw_fem) */
    const int *tets, *row_ptr, *col, *diag, *contrib_ptr, *contrib, *vt_ptr, *vt;
    const int *block_row; /* nnzb: the row of each block (one thread per block) */
    const int *edge_nbr;  /* 2n: warp-edge frame neighbours (from the world) */
    const tw_real *g, *vol, *lam, *mu, *K, *mass, *X;
    /* state */
    tw_real *x, *v, *fext, *target;
    const unsigned char *cons;
    /* scratch */
    tw_real *R, *S, *fe, *f, *rhs, *vnew, *A;
    /* contact (cuda_contact.cu, host/contact.c): the colliders (TW_MAX_COLLIDERS,
     * P->ncolliders of them used) and per vertex the step's filter (cons plus
     * TW_FILTER_NORMAL for contacts), normal, distance, friction, the friction
     * damping in A this step, and the state kept between steps: the last
     * normal impulse */
    const tw_collider_def *colliders;
    const tw_collider_def *colliders_end; /* where the step leaves them: the end-of-step projection's */
    unsigned char *fcons;
    tw_real *cnormal, *cdist, *cmu, *cimpulse, *cfric;
    tw_real *cfprev; /* per vertex an earlier solve's damping and the tangential speed it gave (2n, this step only) */
    tw_real *cslip;  /* a contact slipping from stuck: its friction impulse in rhs (3n, this step only) */
    /* moving colliders: per vertex the contact's collider (TW_CONTACT_NONE:
     * none) and its surface velocity (3n), and what the vertex gave its
     * collider this step, N (3n: the force's per-vertex terms) */
    unsigned char *ccol;
    tw_real *cvel, *cpush;
    /* the integrators (cuda_integrators.cu). xbase, vbase: what the implicit
     * kernels step from (x+ = xbase + heff v+, rhs M vbase + ...): x and v
     * themselves for implicit Euler, xb and vb for BDF2 (written each step
     * from x, v and xprev, vprev: the previous step's state, kept here only).
     * Explicit Newmark: acc (a, kept between steps), anew (a+), xstart (x at
     * the start of the step: x holds the predicted positions during it),
     * xres (the rounding the last position update left out of x, carried
     * into the next: tw_newmark_position_carried; kept between steps) and
     * xres_next (this step's, xres once the step commits). The arrays of the
     * other integrators are NULL (xprev non-NULL: a BDF2 world). */
    const tw_real *xbase, *vbase;
    tw_real *xb, *vb, *xprev, *vprev;
    tw_real *acc, *anew, *xstart, *xres, *xres_next;
    /* per step */
    const tw_cuda_params *P;
    tw_cuda_status *st;
} tw_cuda_data;

/* The view hd/step.h's loop bodies read: d's device arrays, and the loads
 * from the step's parameters in device memory (never a kernel argument, so
 * a captured graph stays valid when they change). What a kernel does not
 * read of it is not loaded. */
static __device__ __forceinline__ tw_step_view tw_cuda_step_view(const tw_cuda_data &d)
{
    tw_step_view s;
    s.n = d.n;
    s.nt = d.nt;
    s.tets = d.tets;
    s.row_ptr = d.row_ptr;
    s.col = d.col;
    s.vt_ptr = d.vt_ptr;
    s.vt = d.vt;
    s.edge_nbr = d.edge_nbr;
    s.X = d.X;
    s.g = d.g;
    s.vol = d.vol;
    s.lam = d.lam;
    s.mu = d.mu;
    s.K = d.K;
    s.mass = d.mass;
    s.R = d.R;
    s.S = d.S;
    s.fe = d.fe;
    s.fext = d.fext;
    const tw_cuda_params *P = d.P;
    for (int c = 0; c < 3; c++) {
        s.gravity[c] = P->gravity[c];
        s.spring_anchor[c] = P->anchor[c];
    }
    s.spring_vertex = P->spring_vertex;
    s.spring_k = P->spring_k;
    s.cons = d.cons;
    s.target = d.target;
    return s;
}

/* What decides which kernels a step launches (not their numbers): a new
 * shape captures a new graph. */
typedef struct tw_cuda_shape {
    int method;      /* tw_method */
    int ghost;       /* vertex method with the ghost-force correction */
    int conserve;    /* ghost && nothing constrained: conserve_momentum runs */
    int exact_warp;  /* warp_system bicgstab (host-driven, never captured; kept in the key) */
    int colliders;   /* any collider: contact marking, the normal filter, impulses, projection */
    int integrator;  /* tw_integrator: explicit Newmark is another step (no PCG); BDF2 adds its base terms */
    int energy_projection; /* warp-vertex under BDF2, nothing doing work: the energy before and after, the projection */
    int hanging;     /* hanging vertices: their targets, P^T A P in the PCG, their averages after the step */
    int bodies;      /* several bodies: host-driven, the host's detection and passes (cuda_bodies.cu) */
    int energy_check; /* host/step.c's energy check: the energy at the step's start and end */
} tw_cuda_shape;

struct tw_cuda_world {
    tw_cuda_data d;
    size_t bytes; /* device memory held */
    size_t d2h_bytes; /* vertex data copied device -> host (tw_cuda_world_d2h_bytes) */
    /* the same pointers, owned (d holds const views) */
    int *tets, *row_ptr, *col, *diag, *contrib_ptr, *contrib, *vt_ptr, *vt, *block_row, *edge_nbr;
    tw_real *g, *vol, *lam, *mu, *K, *mass, *X;
    unsigned char *cons;
    tw_collider_def *colliders; /* TW_MAX_COLLIDERS */
    tw_collider_def *colliders_end; /* TW_MAX_COLLIDERS: at the end of the step */
    tw_real *shift, *shift_rhs; /* the contact solve's shift on moving colliders and the saved rhs (3n) */
    int colliders_moving;       /* this step: the contact solves run shifted */
    int contact_passes;         /* this step: contact solves at most (tw_world_def.contact_passes) */
    int ncolliders_up;          /* how many were uploaded */
    int contact_live;           /* a step with colliders ran since the contact state was last cleared */
    const unsigned char *pcg_filter; /* what the PCG filters by: cons, or fcons when the shape has colliders */
    double mass_total;   /* sum of the masses, in the CPU's order */
    int any_constrained; /* a pinned or kinematic vertex exists (conserve_momentum does nothing then) */
    /* PCG */
    tw_real *r, *z, *p, *q, *dinv;
    double *partial; /* TW_CUDA_REDUCE_VALUES * TW_CUDA_REDUCE_BLOCKS */
    double *scalars; /* TW_S_COUNT */
    /* cuSPARSE: the BSR system matrix over d.A and dense vectors */
    cusparseHandle_t sparse;
    cusparseSpMatDescr_t matA;
    cusparseDnVecDescr_t vec_vnew, vec_r, vec_p, vec_q;
    void *spmv_buffer;
    size_t spmv_buffer_bytes;
    int own_spmv; /* 1: the hand-written 3x3 BSR SpMV instead of cuSPARSE's */
    int warp_spmv; /* with own_spmv: the warp-cooperative kernel (TW_CUDA_SPMV=warp, cuda_pcg_fused.cu) */
    /* with own_spmv: the symmetric half (TW_CUDA_SPMV=half, cuda_pcg.cu; host/hd/bsr_half.h), in
     * place in d.A: half_lo_blk (nnzb ints) links each lower position to its upper partner. Not
     * while use_bicgstab (warp_system bicgstab's matrix is not symmetric): the full kernel then */
    int half_spmv;
    int *half_lo_blk;
    /* the fused PCG (TW_CUDA_PCG=fused, cuda_pcg_fused.cu): two kernels per
     * iteration; p2: the second direction buffer, ticket: its two kernels'
     * last-block counters (NULL unless fused) */
    int fused_pcg;
    tw_real *p2;
    unsigned *ticket;
    /* TW_CUDA_ELEMENT=fused (cuda_kernels.cu): corot-element, hybrid and
     * green's rotation and element force in one kernel (tw_cuda_rotations;
     * tw_cuda_elastic_force then only gathers, and the step's ms_rotations
     * includes the element forces) */
    int fused_element;
    /* per step: device copies (d.P, d.st point at them) and the host's */
    tw_cuda_params *params;
    tw_cuda_status *status;
    tw_cuda_status hstatus; /* the last status read back */
    /* every launch and copy goes on this stream (non-blocking) */
    cudaStream_t stream;
    int have_stream;
    cudaEvent_t ev[4]; /* step start, after rotations, after assembly, after the solve */
    int have_events;
    int timing_failed; /* reading the events failed once (said on stderr; the stage times read 0) */
    int capturing; /* 1 while a graph is being captured (events become record nodes) */
    /* the step as a CUDA Graph (cuda_world.cu) */
    int use_graph;          /* 1: run the step as a graph (TW_CUDA_GRAPH=0 turns it off) */
    int graph_failed;       /* building the graph failed once: host-driven from then on */
    cudaGraphExec_t exec;   /* NULL until the first step (or after a shape change) */
    tw_cuda_shape shape;    /* the shape exec was captured for */
#if CUDART_VERSION >= 12040
    cudaGraphConditionalHandle cond; /* the while node's condition (set by the PCG kernels) */
#endif
    int use_cond;           /* 1 while capturing: the PCG kernels set cond */
    /* hanging vertices (host/hanging.c; hd/step_hanging.h): P and P^T in
     * vertex numbering (ptr n + 1, idx, wt), the hanging vertices, the
     * PCG's expanded vector P x (hang_u, with its cuSPARSE descriptor) and
     * P^T rhs (hang_b); nhang 0: none, the arrays NULL. A new set replaces
     * the arrays, and the captured graph with them (its kernels hold the
     * pointers). The host's copy of the lists says whether a re-upload
     * changed them. */
    int nhang;
    int *hang_vertex, *hp_ptr, *hp_idx, *ht_ptr, *ht_idx;
    double *hp_wt, *ht_wt;
    tw_real *hang_u, *hang_b;
    cusparseDnVecDescr_t vec_hang_u;
    int *hang_lists;     /* host: nhang, vertices, ptr, idx (for the comparison) */
    double *hang_wlist;  /* host: the weights */
    size_t hang_bytes;   /* device bytes of the arrays above (P, P^T, the vertices) */
    /* Newton iterations after the first solve (cuda_world.cu newton_refine,
     * host-driven), allocated at the first such step, 3n each: x saved
     * while x holds the iterate's positions, vnew saved while the PCG
     * solves for the update in vnew, the update, the residual G, rhs saved */
    tw_real *newton_x, *newton_v, *newton_dv, *newton_g, *newton_rhs;
    /* warp-vertex's turn test (cuda_world.cu warp_turn_iterations),
     * allocated at its first step: the start's rotations (9n) and x (3n),
     * saved while R and x hold those at the first solve's positions */
    tw_real *turn_R, *turn_x;
    /* BiCGStab (cuda_bicgstab.cu) for warp_system bicgstab with a vertex
     * method: this step solves with it (host-driven), its iteration cap
     * (cg_max_iterations, as tw_bicgstab: no fixed count), and its vectors
     * (3n each, allocated at its first solve) */
    int use_bicgstab, bicg_max;
    tw_real *bicg_p, *bicg_v, *bicg_s, *bicg_t, *bicg_rhat;
    /* the multigrid preconditioner (cuda_amg.cu): NULL until it is set up */
    struct tw_cuda_amg *amg;
    int mg_wanted; /* this step's PCG asks for it (def->precond mg, an implicit integrator) */
    int mg_failed; /* its set-up failed once: block-Jacobi for this world's life */
    int mg_hang_noted; /* stderr has said that hanging vertices turn it off */
    /* body contact's coupled solve (cuda_bodies.cu): NULL until its first step */
    struct tw_cuda_bodies *bodies;
    int fused_hang_noted; /* stderr has said that hanging vertices run the unfused PCG iteration */
    /* the energy check (host/step.c): the state at the start of a step that
     * may fail (x, v, xprev, vprev, acc: the integrator's that exist; 5 x 3n,
     * allocated at the first such step), kept: it holds one */
    tw_real *snap;
    int snap_kept;
};
/* Error checks: each names the file, line and call, sets tw_last_error and
 * returns the status from the enclosing function (which returns tw_status). */
tw_status tw_cuda_check(cudaError_t e, const char *call, const char *file, int line);
tw_status tw_cusparse_check(cusparseStatus_t e, const char *call, const char *file, int line);
#define TW_CUDA_TRY(call)                                                                  \
    do {                                                                                   \
        tw_status s_ = tw_cuda_check((call), #call, __FILE__, __LINE__);                   \
        if (s_ != TW_OK) return s_;                                                        \
    } while (0)
#define TW_CUSPARSE_TRY(call)                                                              \
    do {                                                                                   \
        tw_status s_ = tw_cusparse_check((call), #call, __FILE__, __LINE__);               \
        if (s_ != TW_OK) return s_;                                                        \
    } while (0)
/* cudaMalloc of bytes into *p for `what` (named in the message). Out of
 * device memory: TW_ERR_DEVICE saying how much the device has free, then
 * hint (what the caller's user can do); file and line are the caller's.
 * *p is NULL after any failure. */
tw_status tw_cuda_malloc(void **p, size_t bytes, const char *what, const char *hint, const char *file, int line);
/* After a kernel launch: the launch error (bad configuration, no device). */
#define TW_CUDA_LAUNCHED() TW_CUDA_TRY(cudaGetLastError())

static inline unsigned tw_cuda_grid(long count) { return (unsigned)((count + TW_CUDA_THREADS - 1) / TW_CUDA_THREADS); }
/* Grid of a grid-stride reduction kernel over count items. */
static inline unsigned tw_cuda_reduce_grid(long count)
{
    unsigned g = tw_cuda_grid(count);
    return g < 1 ? 1 : g > TW_CUDA_REDUCE_BLOCKS ? TW_CUDA_REDUCE_BLOCKS : g;
}

/* cuda_kernels.cu: one step's pieces, in the order implicit_solve runs them
 * (host/step.c); each launches on cw->stream and reads its numbers from
 * d.P (tw_cuda_params), so the same launches serve the graph and the
 * host-driven step. */
tw_status tw_cuda_rotations(tw_cuda_world *cw, tw_method m);
/* (with cw->fused_element the element methods' forces came with the
 * rotations: this gathers them; every caller runs the two in this order) */
tw_status tw_cuda_elastic_force(tw_cuda_world *cw, tw_method m, int ghost_correction);
/* rhs = M v + heff (f + f_ext), f_ext = M g + fext + the spring at x */
tw_status tw_cuda_rhs(tw_cuda_world *cw);
tw_status tw_cuda_assemble(tw_cuda_world *cw, tw_method m, int exact_warp);
/* vnew = warm ? v : 0, then pinned 0 and kinematic onto their targets */
tw_status tw_cuda_prescribe(tw_cuda_world *cw);
/* host/step.c check_velocities on vnew, as a device reduction: fills
 * st->nonfinite_vertex, vmax, vmax_vertex and ok (the residual is finite,
 * no velocity is non-finite, no vertex moves more than max_move) */
tw_status tw_cuda_check_divergence(tw_cuda_world *cw);
/* conserve_momentum of host/step.c on vnew (the caller checks that no vertex is constrained) */
tw_status tw_cuda_conserve_momentum(tw_cuda_world *cw);
/* when st->ok: v = vnew, x = xbase + heff v (else nothing: the state stays);
 * a BDF2 world first keeps x, v in xprev, vprev */
tw_status tw_cuda_integrate(tw_cuda_world *cw);

/* cuda_integrators.cu: BDF2 and explicit Newmark (host/step.c), the
 * per-vertex arithmetic in host/hd/integrator.h. */
/* BDF2, before the rotations: xbase, vbase (from x, v and xprev, vprev when
 * P->history, else copies of x, v). */
tw_status tw_cuda_bdf2_base(tw_cuda_world *cw);
/* BDF2, after the assembly: rhs -= heff K' (xbase - x), K' d = (A d - cm M d)
 * / ck (exactly 0 on the first step, where xbase = x); uses the PCG's p, q. */
tw_status tw_cuda_bdf2_rhs(tw_cuda_world *cw);
/* Explicit Newmark's acceleration at the start (the world has none yet: its
 * first step, or after a setter reset it): rotations and forces at x, then
 * acc = M^-1 F - alpha v (0 where constrained), and no rounding carried
 * (xres = 0, as newmark_step zeroes w->xres). Not part of the graph. */
tw_status tw_cuda_newmark_start(tw_cuda_world *cw, tw_method m, int ghost_correction);
/* Explicit Newmark's step, as cuda_world.cu enqueues it: predict, [contact
 * projection of the predicted positions], rotations and elastic forces at x,
 * update, [contact projection of vnew and anew], the divergence check,
 * commit (the bracketed kernels: cuda_contact.cu, with colliders). */
/* The status of a step without CG (0 iterations, residual 0); xstart = x,
 * x = the predicted positions. */
tw_status tw_cuda_newmark_predict(tw_cuda_world *cw);
/* vnew, anew from the elastic force f at the predicted x (+ f_ext there);
 * constrained vertices: their displacement over h, no acceleration. */
tw_status tw_cuda_newmark_update(tw_cuda_world *cw);
/* After the divergence check: st->ok ? (v = vnew, acc = anew,
 * xres = xres_next) : x = xstart (a failed step leaves the state as it was). */
tw_status tw_cuda_newmark_commit(tw_cuda_world *cw);

/* warp-vertex under BDF2 when nothing does work on the body (host/step.c
 * tw_world_step, bdf2_energy_projection) and the energy check, in
 * cuda_integrators.cu: the mechanical energy (kinetic, elastic of method m,
 * gravity) at the step's start into scalars[TW_S_E0], before anything
 * moves x or v; */
tw_status tw_cuda_energy_start(tw_cuda_world *cw, tw_method m);
/* after the step's last kernel: the energy at its end, and when the step
 * committed and gained energy, the free vertices' velocities relative to
 * the centre of mass (P->energy_held: to 0) scaled to take the gain out
 * (st->energy_projected), the factor decided on the device. */
tw_status tw_cuda_energy_projection(tw_cuda_world *cw, tw_method m);
/* the energy check's: the mechanical energy at the step's end (after the
 * projection, when there is one) into scalars[TW_S_E1]; any method (linear:
 * tw_compute_elastic_energy's vertex form) */
tw_status tw_cuda_energy_end(tw_cuda_world *cw, tw_method m);

/* Hanging vertices (cuda_kernels.cu, host/hanging.c's step around the
 * solve; nothing when cw->nhang is 0): their kinematic targets from x, v
 * (tw_hanging_before_step), first in a step; */
tw_status tw_cuda_hanging_targets(tw_cuda_world *cw);
/* after each PCG: vnew at the hanging vertices = P vnew (tw_hanging_expand); */
tw_status tw_cuda_hanging_expand(tw_cuda_world *cw);
/* when the step committed (st->ok): x and v at the hanging vertices set to
 * their constrainers' averages (tw_hanging_after_step). */
tw_status tw_cuda_hanging_average(tw_cuda_world *cw);

/* Newton iterations (cuda_integrators.cu; host/step.c newton_refine, the
 * loop driven by cuda_world.cu): x = xb + heff v (the iterate's positions,
 * where the rotation and force kernels evaluate); */
tw_status tw_cuda_newton_positions(tw_cuda_world *cw, const tw_real *xb, const tw_real *v);
/* G = step_residual at v from Av = A v and the elastic force d.f at x
 * (f_ext there too), filtered by cw's PCG filter, |S G|^2 into
 * scalars[TW_S_G]; */
tw_status tw_cuda_newton_residual(tw_cuda_world *cw, const tw_real *v, const tw_real *Av, tw_real *G);
/* out = v + a dv (out may be v): a line-search trial, or the accepted step
 * (host-driven only: a is an argument). */
tw_status tw_cuda_newton_axpy(tw_cuda_world *cw, const tw_real *v, const tw_real *dv, double a, tw_real *out);
/* out = -G */
tw_status tw_cuda_newton_negate(tw_cuda_world *cw, const tw_real *G, tw_real *out);
/* warp-vertex's turn test (host/step.c warp_turn_iterations): how many
 * vertices' rotations in d.R turned from R0's by more than TW_WARP_TURN
 * (hd/step.h), into scalars[TW_S_TURN] (host-driven only). */
tw_status tw_cuda_warp_turn(tw_cuda_world *cw, const tw_real *R0);

/* cuda_contact.cu: host/contact.c for implicit Euler and BDF2, in
 * implicit_solve's order. After prescribe: the nearest collider of every free
 * vertex, the first active set (fcons), their landing normal velocity in
 * vnew, the first pass's implicit friction on A's diagonal blocks, counted
 * (st->contacts). */
tw_status tw_cuda_contact_mark(tw_cuda_world *cw);
/* After each PCG solve: the active-set update of host/contact.c
 * tw_contact_update (release, join, friction; cimpulse); waits for the
 * stream and returns how many joined or left (*changed) and how many had
 * friction off Coulomb's (*friction); st->contacts is the new active count. */
tw_status tw_cuda_contact_update(tw_cuda_world *cw, int *changed, int *friction);
/* host/contact.c tw_contact_newton_hold: the active contacts with friction
 * held whole in fcons for the Newton iterations (on), or released */
tw_status tw_cuda_contact_newton_hold(tw_cuda_world *cw, int on);
/* After integrate, when st->ok: free vertices inside a collider are
 * projected onto it, their approaching normal velocity removed, friction. */
tw_status tw_cuda_contact_project(tw_cuda_world *cw);
/* Explicit Newmark (tw_contact_project_positions on the predicted x): free
 * vertices inside a collider are moved onto it and marked (fcons, normal,
 * friction), and counted (st->contacts). */
tw_status tw_cuda_contact_project_predicted(tw_cuda_world *cw);
/* Explicit Newmark, after the update (tw_contact_project_velocities): the
 * marked vertices' approaching normal velocity (vnew) and acceleration
 * (anew) removed, friction. */
tw_status tw_cuda_contact_project_newmark(tw_cuda_world *cw);
/* After the last contact pass (implicit): each active contact's impulse
 * (tw_contact_vertex_impulse) over heff into cpush, the others 0. The
 * projections then add their momentum over h. */
tw_status tw_cuda_contact_impulses(tw_cuda_world *cw);
/* After the last contact pass (implicit): the active contacts that hit their
 * collider this step (tw_contact_impact) into the status's impacts. */
tw_status tw_cuda_contact_impacts(tw_cuda_world *cw);
/* The force on each of the nc colliders (cpush summed over its contacts,
 * sign turned) into force; waits for the stream. */
tw_status tw_cuda_contact_forces(tw_cuda_world *cw, int nc, double force[][3]);
/* Around a contact pass's PCG on moving colliders (host/step.c
 * solve_contacts): begin solves for vnew - s with rhs - A s (rhs saved),
 * end restores rhs and adds s back. */
tw_status tw_cuda_contact_shift_begin(tw_cuda_world *cw);
tw_status tw_cuda_contact_shift_end(tw_cuda_world *cw);

/* cuda_pcg.cu: the filtered block-Jacobi PCG of host/solver_impl.h on
 * A vnew = rhs, from vnew; the filter is cw->pcg_filter (pinned, kinematic: fully
 * constrained; TW_FILTER_NORMAL: constrained along cnormal). With hanging
 * vertices (cw->nhang) the operator is P^T A P (applied as P, A, P^T), the
 * right-hand side P^T rhs and block-Jacobi P^T A P's diagonal blocks: the
 * reduced system of host/hanging.c, its unknowns at their vertices (the
 * hanging ones kinematic, so filtered). The stopping rules run on the device (st->active): */
/* Sets up the SpMV (cuSPARSE BSR, or the hand-written kernel). */
tw_status tw_cuda_pcg_init(tw_cuda_world *cw);
void tw_cuda_pcg_free(tw_cuda_world *cw);
/* Preconditioner, initial residual, and the first decision (st->active;
 * and the while node's condition when cw->use_cond). */
tw_status tw_cuda_pcg_begin(tw_cuda_world *cw);
/* One iteration (nothing once st->active is 0), ending with the decision. */
tw_status tw_cuda_pcg_iteration(tw_cuda_world *cw);
/* The host-driven loop: iterations until st->active is 0 (a read of the
 * status per iteration), or, with a fixed count, all of them with no read. */
tw_status tw_cuda_pcg_host_loop(tw_cuda_world *cw, const tw_cuda_params *hp);
/* Copies the device status into cw->hstatus (waits for the stream). */
tw_status tw_cuda_read_status(tw_cuda_world *cw);

/* The solve's system for the solvers (cuda_pcg.cu; the PCG's begin and
 * cuda_bicgstab.cu): block-Jacobi into cw->dinv and *b the right-hand side,
 * of A and rhs, or with hanging vertices of the reduced system P^T A P and
 * P^T rhs (into cw->hang_b; rhs itself stays). */
tw_status tw_cuda_solve_prepare(tw_cuda_world *cw, const tw_real **b);
/* q = A p, or with hanging vertices P^T A P p (P p, A, P^T: the PCG's
 * operator; the hanging rows of q hold A's, which the filter zeroes). */
tw_status tw_cuda_operator_pq(tw_cuda_world *cw);

/* cuda_bicgstab.cu: host/solver_impl.h tw_bicgstab on A vnew = rhs from
 * vnew (with hanging vertices on P^T A P vnew = P^T rhs, as solve_system;
 * the caller expands vnew after it), filtered by cw->pcg_filter, tolerance
 * hp->tol, at most cw->bicg_max iterations; HOST-DRIVEN (its scalars read
 * back every iteration); leaves the solve's count and residual in the
 * status as the PCG does. */
tw_status tw_cuda_bicgstab(tw_cuda_world *cw, const tw_cuda_params *hp);

/* cuda_pcg_fused.cu: y = A x by the warp-cooperative kernel (TW_ROW_LANES
 * lanes per block row); st: nothing once the loop ended (NULL: always runs). */
tw_status tw_cuda_spmv_warp(tw_cuda_world *cw, const tw_real *x, tw_real *y, const tw_cuda_status *st);
/* One iteration of the fused PCG (after tw_cuda_pcg_begin): two kernels,
 * the second ending with the decision (st->active, the while node's
 * condition when cw->use_cond). */
tw_status tw_cuda_pcg_fused_iteration(tw_cuda_world *cw);

/* The while node's condition handle (0 without conditional nodes), set from
 * the PCG kernels by tw_cuda_set_condition when use is 1. */
#if CUDART_VERSION >= 12040
typedef cudaGraphConditionalHandle tw_cuda_cond;
static __device__ __forceinline__ void tw_cuda_set_condition(tw_cuda_cond h, int use, int value)
{
    if (use) cudaGraphSetConditional(h, value ? 1u : 0u);
}
#else
typedef unsigned long long tw_cuda_cond;
static __device__ __forceinline__ void tw_cuda_set_condition(tw_cuda_cond, int, int) {}
#endif
/* cw's condition while capturing (cw->use_cond), else 0 */
static inline tw_cuda_cond tw_cuda_condition(const tw_cuda_world *cw)
{
#if CUDART_VERSION >= 12040
    if (cw->use_cond) return cw->cond;
#endif
    (void)cw;
    return 0;
}
/* what the PCG filters by: fcons when the shape has colliders, else cons */
static inline const unsigned char *tw_cuda_pcg_filter(const tw_cuda_world *cw)
{
    return cw->pcg_filter ? cw->pcg_filter : cw->d.cons;
}

/* Reductions (cuda_reduce.cuh) finish with this: sums nv rows of nb partials
 * into scalars[first .. first + nv - 1]. */
tw_status tw_cuda_reduce_finish(tw_cuda_world *cw, int nv, int nb, int first);

/* cuda_bodies.cu: body contact (cuda_world.h's tw_cuda_body_hooks). What a
 * world of several bodies cannot run on the device yet: TW_ERR_UNSUPPORTED
 * naming it, else TW_OK. */
tw_status tw_cuda_bodies_check(const tw_cuda_world *cw, const tw_cuda_step_in *in);
/* After the prescribed velocities, instead of the contact marking and the
 * PCG: the host's detection, the first solve and the contact passes of
 * host/step.c implicit_solve (each solve coupled when body contacts are
 * active), the collider impulses; fills st's contacts_unresolved,
 * cg_iterations, cg_capped and contact_passes. Host-driven. */
tw_status tw_cuda_bodies_passes(tw_cuda_world *cw, const tw_cuda_params *hp, const tw_cuda_body_hooks *hooks,
                                tw_step_stats *st);
/* After the step's kernels (st->ok read back): when the step committed,
 * the host's end-of-step projection out of the other bodies on x and v
 * (downloaded, then uploaded); adds its count to *unresolved. */
tw_status tw_cuda_bodies_project(tw_cuda_world *cw, const tw_cuda_body_hooks *hooks, int *unresolved);
void tw_cuda_bodies_free(tw_cuda_world *cw);

/* cuda_pcg.cu: q = A p by the SpMV the PCG uses (cuSPARSE or the own
 * kernel), on cw->stream, outside the loop: p and q are free from the end
 * of one PCG to the next pcg_begin (tw_cuda_world_spmv, cuda_integrators.cu). */
tw_status tw_cuda_spmv_pq(tw_cuda_world *cw);
#endif
