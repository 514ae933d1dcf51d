/* The CUDA backend's world: a device copy of a CPU world's constant FEM data
 * (uploaded once) and state, stepped on the GPU. C interface (extern "C"),
 * implemented in cuda_world.cu; compiled only when nvcc is found.
 *
 * Contract with host/ (which alone owns struct tw_world): tw_world_create
 * builds the CPU world as usual (the precompute is the same), then hands its
 * arrays to tw_cuda_world_create in a tw_cuda_world_init. Each step, host/step.c
 * fills a tw_cuda_step_in (the def, the spring, the integrator's flags, and
 * the host arrays to upload when a setter changed them) and applies the
 * tw_cuda_step_out it gets back (the step counter, the time, which of its
 * flags change, and the divergence check, whose message is host/step.c's for
 * both backends). The device runs the step (as a CUDA Graph, cuda_world.cu)
 * and leaves x and v there: the host's copies go stale and its accessors call
 * tw_cuda_world_download before reading them. A step copies no vertex data
 * to the host. */
#ifndef TW_CUDA_WORLD_H
#define TW_CUDA_WORLD_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef struct tw_cuda_world tw_cuda_world;

/* What tw_cuda_world_create uploads (host memory, read during the call only):
 * the constant FEM data (host/fem.h's tw_fem: BSR pattern, gather lists,
 * stiffness, masses) and the world's state and contact arrays. */
typedef struct tw_cuda_world_init {
    int n, nt, nnzb;
    const int *tets, *row_ptr, *col, *diag, *contrib_ptr, *contrib, *vt_ptr, *vt;
    const int *edge_nbr; /* 2n: warp-edge frame neighbours */
    const tw_real *g, *vol, *lam, *mu, *K, *mass, *X;
    const tw_real *x, *v, *fext, *target; /* 3n each */
    const unsigned char *cons;            /* n */
    const tw_real *cnormal, *cdist, *cmu, *cimpulse, *cfric; /* contact arrays, n (cnormal 3n) */
    const tw_collider_def *colliders;     /* TW_MAX_COLLIDERS of them, ncolliders in use */
    int ncolliders;
    tw_integrator integrator;             /* which integrator's arrays to allocate */
} tw_cuda_world_init;

/* Body contact (a world of several bodies, host/contact_bodies.c) on the
 * device, the simplest correct way: the host keeps detection and the body
 * contacts' part of the active set, running contact.c's and
 * contact_bodies.c's functions as they are on the world's own arrays, and
 * the device runs everything else of the step, each contact pass's solve
 * included (the coupled solve of tw_bodies_solve when body contacts are
 * active: kernels/cuda_bodies.cu). host/step.c fills these; the device step
 * calls them at implicit_solve's points, with what each reads downloaded
 * into the arrays below first and what it wrote uploaded after (the bytes
 * per step: cuda_bodies.cu's top). The step runs host-driven (no graph),
 * with the unfused PCG. */
struct tw_body_lists;
typedef struct tw_cuda_body_hooks {
    void *ctx; /* the world */
    /* the world's per-vertex contact arrays (host/world.h), n or 3n */
    unsigned char *fcons, *ccol;
    tw_real *cnormal, *cdist, *cmu, *cimpulse, *cfric, *cvel;
    /* 3n host arrays the hooks read (and project writes): the step's base
     * positions, the velocities at its start, the solve's velocities, the
     * positions at its end */
    tw_real *xbase, *v, *vnew, *x;
    double slack; /* TW_BODY_SLACK x the world's size, m (the springs' right-hand side) */
    /* after the prescribed velocities: tw_contact_detect and tw_bodies_detect
     * from xbase, v (the first active set); returns the contacts */
    int (*detect)(void *ctx, double heff);
    /* before each solve, fcons current: tw_bodies_coupled; when it returns
     * rows (> 0) the solve is coupled and *lists, *depth hold
     * tw_bodies_lists's (the device frees them); -1: out of memory */
    int (*coupled)(void *ctx, struct tw_body_lists *lists, int *depth);
    /* after each solve, vnew current: tw_bodies_pass (cdist of the body
     * contacts, the springs); returns the springs that changed */
    int (*pass)(void *ctx, double heff);
    /* after a committed step, x and v current: tw_bodies_project on them
     * (uploaded after); returns the vertices found deep inside */
    int (*project)(void *ctx);
} tw_cuda_body_hooks;

/* One step's input, filled by host/step.c. The arrays are host memory, read
 * during the call only, and uploaded only when dirty is set or the collider
 * count changed. */
typedef struct tw_cuda_step_in {
    const tw_world_def *def; /* method, integrator, dt, damping, gravity, CG and Newton settings */
    long step;               /* steps done so far (for messages) */
    int has_history;         /* BDF2: the previous step's state on the device is valid */
    int has_acc;             /* explicit Newmark: the acceleration on the device is valid */
    int spring_vertex;       /* -1: no spring */
    double spring_anchor[3], spring_k;
    double size;             /* bounding-box diagonal, m: the divergence yardstick */
    int nhang;               /* hanging vertices set (tw_world_set_hanging); uploaded when dirty and changed */
    const int *hang_vertex, *hang_ptr, *hang_idx; /* their lists: vertices, CSR rows of constrainers */
    const double *hang_w;    /* the constrainers' weights */
    int dirty;               /* a setter changed what follows: upload it */
    int zero_impulses;       /* with dirty: a setter replaced the state (host/world.h tw_world_restart); the
                                contact impulses start over at 0, as in a new world */
    const tw_real *x, *v;    /* NULL: the device's copy is newer, keep it */
    const tw_real *fext, *target;
    const unsigned char *cons;
    const tw_collider_def *colliders;
    const tw_collider_def *colliders_end; /* where the step leaves them (moving colliders; the projection) */
    int ncolliders;
    int colliders_moving;    /* a collider has a velocity: uploaded every step, the contact solves shifted */
    int newton_iterations;   /* linearisations per implicit step (tw_world_newton_iterations): more than 1 with
                                a non-linear method runs newton_refine's iterations after the first solve */
    int warp_turn_test;      /* tw_world_warp_turn_test: a step whose first solve turned the vertex rotations
                                past TW_WARP_TURN (hd/step.h) takes a second linearisation (host-driven) */
    double patch_mass;       /* tw_contact_patch_mass: the contact set's breakaway estimate (0: none) */
    int energy_projection;   /* warp-vertex under BDF2 with nothing doing work on the body: the step ends with
                                host/step.c's energy projection (bdf2_energy_projection) */
    const tw_cuda_body_hooks *bodies; /* a world of several bodies: body contact (above); NULL: one body */
    int energy_check;        /* the energy check (def->energy_check, nothing doing work on the body): the
                                mechanical energy at the step's start and end comes back in out */
    int energy_snapshot;     /* the check may fail this step: the state at its start (x, v, BDF2's xprev,
                                vprev, Newmark's acc, the contact impulses) is kept for
                                tw_cuda_world_restore */
    int energy_start_known;  /* the check's start energy is the host's (the last step's end): the device
                                computes it only for the projection (out's energy0 is then 0) */
} tw_cuda_step_in;

/* What a step reports, for host/step.c to apply. */
typedef struct tw_cuda_step_out {
    tw_step_stats stats;   /* cg_iterations, residual, newton_iterations, contacts, ms_rotations / assembly / solve */
    int started;           /* the step was supported and began: a later failure may have lost device state */
    int uploaded;          /* the dirty state went up */
    int acc_computed;      /* explicit Newmark: the starting acceleration was computed (kept even when the step fails) */
    /* the new velocities, as host/hd/step.h's tw_divergence */
    int nonfinite_vertex;  /* the first vertex with a non-finite component, -1 when none */
    int vmax_vertex;       /* the fastest vertex (the first of equal maxima) */
    double vmax;           /* its speed, m/s */
    int committed;         /* the device's own verdict passed: x and v there are the new state */
    int impacts;           /* implicit steps with colliders: active contacts that hit their collider
                              (tw_contact_impact); BDF2 restarts with implicit Euler after one */
    double collider_force[TW_MAX_COLLIDERS][3]; /* the force the body exerted on each collider, N */
    /* with in->energy_check: kinetic, elastic and gravity energy (J, host/step.c mechanical_energy's
       terms) at the step's start (unless in->energy_start_known) and at its end (after the
       energy projection) */
    double energy0[3], energy1[3];
} tw_cuda_step_out;

/* 1 when a CUDA device can be used; else 0 with the reason in why. */
int tw_cuda_usable(char *why, size_t why_size);
/* Uploads the world's constant data and state; NULL with tw_last_error() on
 * failure (out of device memory, CUDA error: the message says which call and
 * why). */
tw_cuda_world *tw_cuda_world_create(const tw_cuda_world_init *init);
void tw_cuda_world_destroy(tw_cuda_world *cw);
/* One step of in->def's integrator on the device (see the contract above).
 * TW_OK when the step ran, whether or not its velocities diverged (out says;
 * host/step.c decides and words the message); a feature the device path does
 * not have yet returns TW_ERR_UNSUPPORTED naming it, never a silent fallback;
 * a device error TW_ERR_DEVICE. out is filled as far as the step got. */
tw_status tw_cuda_world_step(tw_cuda_world *cw, const tw_cuda_step_in *in, tw_cuda_step_out *out);
/* Puts back the state kept at the start of the last step that had
 * in->energy_snapshot set (x, v, the integrator's history, the contact
 * impulses): host/step.c's energy check failed that step. TW_ERR_INVALID
 * when none was kept. */
tw_status tw_cuda_world_restore(tw_cuda_world *cw);
/* Device memory held, bytes. */
size_t tw_cuda_world_memory_bytes(const tw_cuda_world *cw);
/* The device array of the current positions (3n tw_real, the state the last
 * step left), valid until cw is destroyed: what CUDA-GL interop reads. */
const tw_real *tw_cuda_world_device_positions(const tw_cuda_world *cw);
/* Copies the device's positions into x and velocities into v (3n each;
 * either may be NULL), counted in tw_cuda_world_d2h_bytes. */
tw_status tw_cuda_world_download(tw_cuda_world *cw, tw_real *x, tw_real *v);
/* on = 0: the host-driven step (the CG loop decided by reading a device flag
 * each iteration); 1 (the default unless TW_CUDA_GRAPH=0 is set in the
 * environment): the step as one CUDA Graph with the CG loop in a conditional
 * while node. Takes effect at the next step. */
void tw_cuda_world_set_graph(tw_cuda_world *cw, int on);
/* 1 when the last step ran as a CUDA Graph; 0 when host-driven (graph off,
 * not built yet, or it could not be built: stderr said why). */
int tw_cuda_world_graph(const tw_cuda_world *cw);
/* The stream every step runs on (a cudaStream_t, non-blocking: it does not
 * wait for the legacy default stream nor it for it). A step returns after
 * its work finished; work that reads the device positions between steps
 * (interop) should run on this stream so the next step waits for it. */
void *tw_cuda_world_stream(const tw_cuda_world *cw);
/* Bytes of vertex data (positions, velocities) copied from the device to the
 * host since cw was created: a frame that draws through interop adds none. */
size_t tw_cuda_world_d2h_bytes(const tw_cuda_world *cw);

/* Diagnostics for the parity tests (tests/test_gpu_stages.c): the per-stage
 * results a step leaves in the device's scratch, to compare with the CPU
 * world's (the CPU world's R, f, rhs, A and vnew after one implicit Euler
 * step). Not for the step loop: each call waits for the
 * stream, and its bytes are counted in tw_cuda_world_d2h_bytes like any
 * other device-to-host copy (a test of "no copies per step" must not call
 * these). */
typedef enum tw_cuda_array {
    TW_CUDA_ARRAY_R,    /* 9 per vertex (warp-vertex, warp-edge: R_i) or per element (corot-element, hybrid:
                           R_e; green: F_e), row-major; sized 9 max(n, nt); linear writes none */
    TW_CUDA_ARRAY_S,    /* per element: corot-element, hybrid 16 (hd/element.h tw_corot_pack); green 48
                           (tw_green_pack); sized 48 nt (TW_GREEN_PACK) */
    TW_CUDA_ARRAY_F,    /* 3n: the elastic force at the step's start (after the ghost-force correction), N */
    TW_CUDA_ARRAY_RHS,  /* 3n: M v + dt (f + f_ext), N s */
    TW_CUDA_ARRAY_A,    /* 9 nnzb: the system matrix's BSR block values (row-major 3x3 blocks, the pattern
                           tw_cuda_world_init gave: row_ptr, col) */
    TW_CUDA_ARRAY_VNEW, /* 3n: the velocities the solve produced, m/s */
    TW_CUDA_ARRAY_COUNT
} tw_cuda_array;
/* How many tw_real the device array `which` holds (0 for an unknown one). */
size_t tw_cuda_world_array_count(const tw_cuda_world *cw, tw_cuda_array which);
/* Copies the first count values of the device array `which` into host
 * (count <= tw_cuda_world_array_count, else TW_ERR_INVALID naming both). */
tw_status tw_cuda_world_download_array(tw_cuda_world *cw, tw_cuda_array which, tw_real *host, size_t count);
/* y = A x (3n each, host memory) with the device's SpMV of the step's
 * (cuSPARSE's BSR SpMV, or the hand-written kernel when that is the one in
 * use: TW_CUDA_SPMV=own or a refusal) on the current system matrix, through
 * the PCG's scratch vectors p and q (free between steps). The download of y
 * is counted in tw_cuda_world_d2h_bytes. */
tw_status tw_cuda_world_spmv(tw_cuda_world *cw, const tw_real *x, tw_real *y);
/* The SpMV in use: "cusparse", "own" (the hand-written kernel, a thread per
 * block row), "warp" (TW_CUDA_SPMV=warp: a group of lanes per block row) or
 * "half" (TW_CUDA_SPMV=half: the symmetric half, a thread per block row). */
const char *tw_cuda_world_spmv_name(const tw_cuda_world *cw);
/* 1 when the PCG runs fused (TW_CUDA_PCG=fused when cw was created): two
 * kernels per iteration, the product in them the warp kernel's whatever
 * tw_cuda_world_spmv_name says (which is then the initial residual's);
 * except in a step with hanging vertices, which runs the unfused
 * iteration (P^T A P), said once on stderr. */
int tw_cuda_world_pcg_fused(const tw_cuda_world *cw);
/* 1 when corot-element, hybrid and green run their rotation and element
 * force as one kernel (TW_CUDA_ELEMENT=fused when cw was created). */
int tw_cuda_world_element_fused(const tw_cuda_world *cw);
#ifdef __cplusplus
}
#endif
#endif
