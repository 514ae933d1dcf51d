/* tetwarp — real-time elastic solids on tetrahedral meshes (C11, CUDA).
 *
 * The whole public surface. Objects are opaque handles made from def structs;
 * each def struct has exactly one default function (tw_default_xxx_def), so
 * defaults live in one place and new fields never break callers.
 *
 * Errors: functions return TW_OK / a tw_status, or NULL; tw_last_error() then
 * holds a message naming the file, line, option or value at fault.
 *
 * Units are SI throughout: metres, kilograms, seconds, pascals, newtons.
 */
#ifndef TETWARP_H
#define TETWARP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The simulation's real type: float unless built with TW_DOUBLE. */
#ifdef TW_DOUBLE
typedef double tw_real;
#else
typedef float tw_real;
#endif

typedef enum tw_status {
    TW_OK = 0,
    TW_ERR_IO,          /* a file could not be opened, read or written */
    TW_ERR_PARSE,       /* a file's content is malformed (file:line in the message) */
    TW_ERR_INVALID,     /* an argument or mesh is invalid (value in the message) */
    TW_ERR_NOMEM,       /* an allocation failed */
    TW_ERR_DIVERGED,    /* a solve or step produced NaN or blew up */
    TW_ERR_UNSUPPORTED, /* the build or machine lacks what was asked for */
    TW_ERR_DEVICE       /* a CUDA, cuSPARSE or Thrust error */
} tw_status;

/* The last error message of this thread ("" when none). */
const char *tw_last_error(void);
const char *tw_status_name(tw_status s);
/* "float" or "double": the real type this library was built with. */
const char *tw_real_name(void);

/* ------------------------------------------------------------------ mesh */

typedef struct tw_mesh tw_mesh;

/* What loading or creating a mesh found and repaired. */
typedef struct tw_mesh_report {
    int reoriented;      /* inverted elements whose orientation was flipped */
    int unused_vertices; /* vertices no element references (they get pinned) */
    int first_index;     /* 0 or 1: index base detected in the file */
    int folded;          /* pairs of elements on the same side of a face they share
                            (overlapping); kept as they are, an error when strict */
    int folded_first[2]; /* the first such pair's elements (0-based), -1 when none */
} tw_mesh_report;

typedef struct tw_mesh_load_def {
    int strict;     /* 1: an inverted element is an error instead of being reoriented,
                       and so is a folded pair (two elements overlapping across a face) */
    int quiet;      /* 1: no warnings on stderr (the report still counts them) */
} tw_mesh_load_def;
tw_mesh_load_def tw_default_mesh_load_def(void);

/* Load a tetrahedral mesh; the format is chosen by extension:
 * .node/.ele (TetGen: give either file or the stem), .msh (Gmsh ASCII v1, v2,
 * v4), .mesh (MEDIT). report may be NULL. */
tw_mesh *tw_mesh_load(const char *path, const tw_mesh_load_def *def, tw_mesh_report *report);

/* A mesh from arrays (copied). tets: 4 indices per element, 0-based.
 * region: per-element marker or NULL. Validates like tw_mesh_load. */
tw_mesh *tw_mesh_create(const double *positions, int vertex_count, const int *tets,
                        int tet_count, const int *region, const tw_mesh_load_def *def,
                        tw_mesh_report *report);

/* A box [0,L]x[0,W]x[0,H] of nx*ny*nz cells, each cut into 6 tets that
 * conform across cells. */
tw_mesh *tw_mesh_bar(double length, double width, double height, int nx, int ny, int nz);

/* A tube along x: inner/outer radius, length; nr cells across the wall,
 * nt around, nl along. */
tw_mesh *tw_mesh_tube(double inner_radius, double outer_radius, double length, int nr,
                      int ntheta, int nl);

/* Graded lattice mesh (Zhuang & Canny sec. 5): an octree over a closed
 * surface whose leaf cubes are fine_size at the surface and double in size
 * per level with the distance inward (2:1 balanced: neighbouring leaves,
 * across faces, edges or corners, differ by at most one level). Leaves whose
 * centre is inside the surface are kept and cut into 6 Kuhn tets. A vertex on
 * the edge or face of a larger leaf that is not its corner is a hanging
 * vertex: it must stay at the average of that edge's 2 or that face's 4
 * corners (pass the constraints to tw_world_set_hanging). The small and the
 * large leaves cut their shared face differently, so the tets do not conform
 * there; the hanging constraint is what ties the two sides together. */
typedef struct tw_surface tw_surface; /* (below; C11 allows the repeat) */
typedef struct tw_graded_def {
    double fine_size; /* leaf edge at the surface, m (> 0, required) */
    int levels;       /* leaf sizes fine_size * 2^l, 0 <= l < levels; 1 = the uniform lattice */
    double grading;   /* a leaf of edge a needs its centre at least grading * a from the surface;
                         >= 0.87 (so no leaf above the finest crosses the surface), default 1 */
    int cover;        /* 0 (default): keep the leaves whose centre is inside; 1: also every finest
                         leaf the surface passes near (centre closer than sqrt(3)/2 fine_size), so
                         each surface point lies in a kept leaf (for embedding a fine surface in a
                         coarse lattice; parts closer than a cell may join) */
} tw_graded_def;
tw_graded_def tw_default_graded_def(void);

#define TW_GRADED_MAX_LEVELS 12
typedef struct tw_graded_mesh {
    tw_mesh *mesh;           /* owned: destroyed with the graded mesh */
    int hanging_count;       /* hanging vertices */
    int *hanging_vertex;     /* hanging_count */
    int *hanging_ptr;        /* hanging_count + 1: CSR into idx/weights */
    int *hanging_idx;        /* constraining vertices (never hanging themselves) */
    double *hanging_weights; /* summing to 1 per hanging vertex */
    int leaves[TW_GRADED_MAX_LEVELS]; /* kept leaves per level */
    int fine_cells[3];       /* the lattice, in fine cells */
    double origin[3];        /* the lattice's corner, m */
    double seconds;          /* build time, s */
} tw_graded_mesh;

/* NULL with tw_last_error() on invalid input (open surface, sizes) or when
 * no leaf is inside. Rest positions of hanging vertices are exactly their
 * weighted averages. */
tw_graded_mesh *tw_mesh_graded(const tw_surface *s, const tw_graded_def *def);
void tw_graded_mesh_destroy(tw_graded_mesh *g);

void tw_mesh_destroy(tw_mesh *m);

int tw_mesh_vertex_count(const tw_mesh *m);
int tw_mesh_tet_count(const tw_mesh *m);
const double *tw_mesh_positions(const tw_mesh *m); /* 3 per vertex, rest state, m */
const int *tw_mesh_tets(const tw_mesh *m);         /* 4 per element, 0-based */
const int *tw_mesh_regions(const tw_mesh *m);      /* 1 per element, 0 when none */

/* Boundary faces (triangles of exactly one tet), outward oriented.
 * Returns the count; *faces (3 ints each) is malloc'd, caller frees. */
int tw_mesh_boundary_faces(const tw_mesh *m, int **faces);

typedef struct tw_mesh_stats {
    int vertices, tets, boundary_faces, regions;
    double volume;                      /* m^3 */
    double bbox_min[3], bbox_max[3];    /* m */
    double min_dihedral, max_dihedral;  /* degrees */
    double max_aspect;                  /* longest edge / (2*sqrt(6)*inradius), 1 = regular */
    double mean_aspect;
    double min_volume, max_volume;      /* per element, m^3 */
    double min_edge, max_edge;          /* m */
} tw_mesh_stats;
tw_mesh_stats tw_mesh_compute_stats(const tw_mesh *m);

tw_status tw_mesh_write_tetgen(const tw_mesh *m, const char *stem); /* stem.node, stem.ele */
/* Boundary surface as OBJ. positions: current positions (3 per vertex, same
 * order as the mesh) or NULL for the rest state. */
tw_status tw_mesh_write_obj(const tw_mesh *m, const tw_real *positions, const char *path);

/* Triangle surfaces (for rendering and embedding). */
typedef struct tw_surface {
    int vertex_count, triangle_count;
    double *positions; /* 3 per vertex */
    int *triangles;    /* 3 per triangle, 0-based */
} tw_surface;
/* .obj or .off; returns NULL with tw_last_error() on failure. */
tw_surface *tw_surface_load(const char *path);
void tw_surface_destroy(tw_surface *s);

/* ---------------------------------------------------------------- bodies */

/* Several bodies in one world: copies of `count` meshes, each placed by a
 * rigid motion, joined into one mesh of disconnected components that
 * remembers the body of each vertex (body b = meshes[b]). A world made from
 * it simulates all the bodies in one system, and they collide with each
 * other (body contact: every surface vertex of a body against the other
 * bodies' surface triangles, inside the implicit step like the colliders).
 * placements: 12 per mesh, a rotation R (row-major 3x3, det 1) then a
 * translation t (m): a vertex X goes to R X + t; NULL keeps the meshes where
 * they are. Regions are kept. NULL with tw_last_error() on a bad argument. */
tw_mesh *tw_mesh_merge(const tw_mesh *const *meshes, const double *placements, int count);
/* Bodies of a mesh: tw_mesh_merge's count, 1 for any other mesh. */
int tw_mesh_body_count(const tw_mesh *m);
/* The body of a vertex (0 for a mesh not made by tw_mesh_merge). */
int tw_mesh_vertex_body(const tw_mesh *m, int vertex);
/* Per-element values by body: element e gets values[body of e]
 * (per-body material: element_youngs, element_density). */
void tw_fill_by_body(const tw_mesh *m, const double *values, double *out);

/* --------------------------------------------------------------- meshing */

/* ASCII or binary STL; coincident corners are merged into shared vertices. */
tw_surface *tw_surface_load_stl(const char *path);

/* What tw_surface_validate found. Edges are counted once (undirected). */
typedef struct tw_surface_check {
    int boundary_edges;       /* edges in exactly one triangle: holes */
    int boundary_loops;       /* connected chains of boundary edges */
    int nonmanifold_edges;    /* edges in more than two triangles */
    int misoriented_edges;    /* edges both of whose triangles run the same way */
    int degenerate_triangles; /* repeated corner or zero area */
    int intersecting_pairs;   /* pairs of triangles that cross (sharing no edge) */
    int first_edge[2];        /* vertices of the first offending edge, -1 when none */
    int first_triangle;       /* first degenerate triangle, -1 when none */
    int first_pair[2];        /* first crossing pair of triangles, -1 when none */
    double volume;            /* enclosed volume by the divergence theorem, m^3 (signed) */
} tw_surface_check;

/* Checks that s is a closed, manifold, consistently oriented surface without
 * degenerate or self-intersecting triangles (the last on a uniform grid of
 * triangle boxes). Returns TW_OK, or TW_ERR_INVALID with a message naming
 * `name`, the first fault, the count, and a repair hint. check may be NULL. */
tw_status tw_surface_validate(const tw_surface *s, const char *name, tw_surface_check *check);

/* Enclosed volume of a closed surface (divergence theorem), m^3; positive
 * when the triangles face outwards. */
double tw_surface_volume(const tw_surface *s);

/* Tetrahedralizing a closed surface with TetGen (the `tetgen` command-line
 * tool, Debian package tetgen): the surface triangles are kept (-Y) unless
 * their edges are over 3 times the requested tet edge, the interior is refined
 * to a radius-edge bound (-q) and a maximum volume (-a).
 * Set target_tets or max_edge. */
typedef struct tw_mesher_def {
    int target_tets;       /* > 0: aim at this many tets, within `tolerance` */
    double max_edge;       /* > 0 (when target_tets is 0): edge length H, m; max tet volume H^3/(6 sqrt 2) */
    double quality;        /* TetGen radius-edge bound -q, > 1; relaxed (to 2, then none) when the
                              surface alone needs more tets than target_tets */
    double tolerance;      /* relative tet count tolerance, e.g. 0.2 for +-20 % */
    int max_tries;         /* TetGen runs at most, >= 1 */
    const char *cache_dir; /* NULL: $XDG_CACHE_HOME/tetwarp, else ~/.cache/tetwarp */
    int use_cache;         /* 1: reuse and store meshes keyed by a hash of the surface file and these options */
    int verbose;           /* 1: each TetGen run on stderr */
    const char *tetgen;    /* TetGen executable: NULL = `tetgen` on PATH */
} tw_mesher_def;
tw_mesher_def tw_default_mesher_def(void);

typedef struct tw_mesher_report {
    int tries;               /* TetGen runs (0 when cached) */
    int cached;              /* 1: read from the cache */
    int on_target;           /* 1: tets within tolerance of target_tets (or max_edge mode) */
    int surface_kept;        /* 1: the surface triangles were kept (TetGen -Y); 0: they were
                                refined too, being much larger than the tets asked for */
    int vertices, tets;
    int surface_vertices, surface_triangles;
    double quality_used;     /* radius-edge bound of the last run, 0 = none */
    double max_volume;       /* TetGen -a of the last run, m^3, 0 = none */
    double seconds;          /* wall time of the whole call, s */
    double tetgen_seconds;   /* of which TetGen, s */
    double min_dihedral;     /* degrees */
    double max_radius_edge;  /* circumradius / shortest edge, max over tets (0.612 = regular) */
    double surface_volume, mesh_volume; /* m^3 */
    char cache_path[1024];   /* cache stem (.node/.ele), "" when not cached */
} tw_mesher_report;

/* A tet mesh of the closed surface at surface_path (.obj, .off, .stl).
 * The surface is checked first (tw_surface_validate). NULL on failure with
 * tw_last_error(): a bad surface, TetGen missing ("tetgen not found") or
 * failing (its last lines), or a target below what the surface allows.
 * report may be NULL. */
tw_mesh *tw_mesh_from_surface(const char *surface_path, const tw_mesher_def *def,
                              tw_mesher_report *report);

/* Largest circumradius / shortest edge over the mesh's tets. */
double tw_mesh_max_radius_edge(const tw_mesh *m);

/* ------------------------------------------------- embedding, bone cores */
/* (render surfaces embedded in tets, kinematic bone cores) */

/* A render surface embedded in a tet mesh (Müller 2002 §4.3): each surface
 * vertex follows its containing tet by 4 barycentric weights. A vertex
 * slightly outside every tet takes the nearest tet and the weights of its
 * own position (some negative: extrapolation), so the surface is exact at
 * rest and moves rigidly with a rigidly moved mesh. */
typedef struct tw_embedding tw_embedding;

typedef struct tw_embed_report {
    int vertices;         /* surface vertices embedded */
    int inside;           /* inside a tet */
    int outside;          /* outside every tet, extrapolated from the nearest */
    double max_distance;  /* m: farthest outside vertex to its tet (on failure: the offender's) */
    int farthest_vertex;  /* that vertex, -1 when all are inside */
    double min_weight;    /* smallest barycentric weight (< 0: extrapolated) */
    double limit;         /* m: the distance limit used */
    int grid_cells[3];    /* the search grid */
    double ms;            /* wall time of the embedding, ms, of which: */
    double ms_tet_grid;   /*   the grid over the tets */
    double ms_boundary;   /*   boundary faces and their grid (only when a vertex is outside) */
} tw_embed_report;

/* Embeds s (rest positions) in m (rest positions). max_distance (m): a vertex
 * farther than this from every tet is an error naming the vertex, its
 * position and distance; <= 0 means 5 % of the mesh's bounding-box diagonal.
 * rep may be NULL. The embedding keeps no pointer to m or s. */
tw_embedding *tw_embed_surface(const tw_mesh *m, const tw_surface *s, double max_distance,
                               tw_embed_report *rep);
void tw_embedding_destroy(tw_embedding *e);
int tw_embedding_vertex_count(const tw_embedding *e);
int tw_embedding_triangle_count(const tw_embedding *e);
const int *tw_embedding_triangles(const tw_embedding *e); /* 3 per triangle (the surface's) */
const int *tw_embedding_tets(const tw_embedding *e);      /* 1 per vertex: its tet */
const int *tw_embedding_indices(const tw_embedding *e);   /* 4 per vertex: its tet's vertices */
const float *tw_embedding_weights(const tw_embedding *e); /* 4 per vertex, summing to 1 */
/* Surface positions (3 floats per vertex, the vertex-buffer layout) from the
 * current tet-mesh positions (3 per mesh vertex, e.g. tw_world_positions). */
void tw_embedding_apply(const tw_embedding *e, const tw_real *tet_positions, float *out_xyz);
/* Area-weighted unit vertex normals (3 floats per vertex) of the surface at
 * xyz (from tw_embedding_apply); zero for a vertex in no triangle. */
void tw_embedding_normals(const tw_embedding *e, const float *xyz, float *out_normals);

/* Bone core: marks in inside[nv] (1/0) the vertices whose distance to the
 * boundary surface exceeds depth (m). Returns how many, or -1 with
 * tw_last_error() set when the arguments are invalid or the core would be
 * empty or the whole mesh (the message says which and suggests a depth). */
int tw_mesh_mark_core(const tw_mesh *m, double depth, unsigned char *inside);
/* The same measured from a closed surface s in the mesh's coordinates (the
 * one a covering lattice was built around, tw_graded_def.cover, which sticks
 * out of it by up to a cell): marks the vertices inside s and farther than
 * depth (m) from it. Returns how many, or -1 with tw_last_error() set when s
 * is NULL or malformed, depth is not > 0, or the core would be empty or the
 * whole mesh. */
int tw_mesh_mark_core_surface(const tw_mesh *m, const tw_surface *s, double depth, unsigned char *inside);
typedef struct tw_world tw_world; /* (the world section below; C11 allows the repeat) */
/* Makes every vertex with mask[i] != 0 TW_KINEMATIC (target: where it is). */
tw_status tw_world_set_kinematic_group(tw_world *w, const unsigned char *mask);
/* Moves a rigid group: each masked vertex's target becomes
 * R (X - center) + center + t, X its rest position (R row-major 3x3, t and
 * center in m). The next tw_world_step brings the vertices there. */
tw_status tw_world_drive_group(tw_world *w, const unsigned char *mask, const double R[9], const double t[3],
                               const double center[3]);

/* -------------------------------------------------------------- material */

/* Per-element values from a function of position, averaged over the element.
 * out has one value per element. */
void tw_fill_constant(const tw_mesh *m, double value, double *out);
/* Linear in coordinate `axis` (0,1,2): value0 at the mesh's min, value1 at its max.
 * Linear functions average to their value at the centroid. */
void tw_fill_linear_gradient(const tw_mesh *m, int axis, double value0, double value1,
                             double *out);
/* Per region marker: element with region regions[k] gets values[k]; others keep out[e]. */
void tw_fill_by_region(const tw_mesh *m, int count, const int *regions, const double *values,
                       double *out);

/* ----------------------------------------------------------------- world */

typedef enum tw_method {
    TW_LINEAR = 0,       /* constant K: fast, grows under rotation */
    TW_WARP_VERTEX,      /* Müller 2002: per-vertex rotation by polar(A_i) */
    TW_WARP_EDGE,        /* Müller 2002 eq. 16: per-vertex rotation from edge frames */
    TW_COROT_ELEMENT,    /* per-element polar decomposition (Hauth & Strasser) */
    TW_GREEN,            /* St. Venant-Kirchhoff, Green strain (one Newton step per step) */
    TW_HYBRID,           /* Hauth & Strasser: Green strain for pressure, corotated for shear */
    TW_METHOD_COUNT
} tw_method;
const char *tw_method_name(tw_method m);
/* Parses "linear", "warp-vertex", ...; returns -1 for an unknown name. */
int tw_method_parse(const char *name);

typedef enum tw_backend { TW_BACKEND_CPU = 0, TW_BACKEND_CUDA, TW_BACKEND_AUTO } tw_backend;
const char *tw_backend_name(tw_backend b);
int tw_backend_parse(const char *name);

/* Time integrators. */
typedef enum tw_integrator {
    TW_IMPLICIT_EULER = 0, /* velocity form, one (Newton) linearisation per step: unconditionally stable */
    TW_BDF2,               /* second-order backward differentiation, same linear system; first step is Euler */
    TW_EXPLICIT_NEWMARK,   /* Zhuang & Canny: explicit Newmark (beta 0, gamma 1/2), lumped mass,
                              mass-proportional damping only; dt bounded by the Courant limit */
    TW_INTEGRATOR_COUNT
} tw_integrator;
const char *tw_integrator_name(tw_integrator i);
/* "implicit-euler", "bdf2", "explicit-newmark"; -1 for an unknown name. */
int tw_integrator_parse(const char *name);

/* How warp-vertex's non-symmetric system (blocks R_i K_ij R_i^T) is solved. */
typedef enum tw_warp_system {
    TW_WARP_SYSTEM_SYMMETRIC = 0, /* PCG on a symmetric approximation, force keeps eq. 12: warp-vertex
                                     sum_e R_e K_e R_e^T (R_e from its vertices' R_i), warp-edge blocks
                                     R_i K_ij R_j^T */
    TW_WARP_SYSTEM_BICGSTAB       /* BiCGStab on the exact blocks R_i K_ij R_i^T */
} tw_warp_system;

/* Which form of the system matrix the CPU PCG's product streams. */
typedef enum tw_spmv_form {
    TW_SPMV_FULL = 0, /* every block (the default) */
    TW_SPMV_HALF      /* the diagonal and upper blocks, the lower ones read as their transposes
                         (host/hd/bsr_half.h): about half the matrix traffic, other rounding; only
                         for symmetric systems (every PCG system; warp_system bicgstab's BiCGStab
                         and a multigrid preconditioner's product keep the full matrix).
                         TW_SPMV=half in the environment asks for it too */
} tw_spmv_form;

#define TW_MAX_THREADS 1024
/* The PCG's preconditioner for the step's system. On the CUDA backend mg is
 * the device's V-cycle (kernels/cuda_amg.cu), run only when asked: auto
 * picks block-Jacobi there (the device's multigrid has not run on a GPU
 * yet). */
typedef enum tw_preconditioner {
    TW_PRECOND_JACOBI = 0, /* 3x3 block-Jacobi */
    TW_PRECOND_MG,         /* a smoothed-aggregation multigrid V-cycle (rigid-body modes as the near-null
                              space), rebuilt from each step's matrix */
    TW_PRECOND_AUTO        /* the default: mg from TW_PRECOND_MG_MIN_TETS tets on, where it pays
                              (bench/results/<machine>/multigrid.csv), block-Jacobi below */
} tw_preconditioner;
#define TW_PRECOND_MG_MIN_TETS 2000
/* the tetra tree's front (tw_front_def.precond auto) switches to mg from
 * this many active tets on (its pattern changes at every switch; it keeps a
 * multigrid across switches while that serves, else sets one up anew) */
#define TW_FRONT_MG_MIN_TETS 20000

typedef struct tw_world_def {
    tw_method method;
    tw_backend backend;
    double youngs_modulus;          /* Pa, used where element_youngs is NULL */
    double poisson_ratio;           /* -1 < nu < 0.5 */
    double density;                 /* kg/m^3 */
    const double *element_youngs;   /* per element, Pa, or NULL */
    const double *element_poisson;  /* per element, or NULL */
    const double *element_density;  /* per element, kg/m^3, or NULL */
    double gravity[3];              /* m/s^2 */
    tw_integrator integrator;
    double dt;                      /* time step, s; explicit-newmark: 0 = 0.5 x the Courant limit,
                                       and a dt above the limit is refused */
    double damping_mass;            /* Rayleigh alpha, 1/s */
    double damping_stiffness;       /* Rayleigh beta, s */
    double cg_tolerance;            /* relative residual |r|/|b| */
    int cg_max_iterations;
    int cg_fixed_iterations;        /* > 0: run exactly this many iterations (benchmarks) */
    int newton_iterations;          /* implicit integrators, non-linear methods: Newton iterations per
                                       step (1 = one linearisation, Mueller's choice; more = Newton with a
                                       backtracking line search on the step's residual; 0, the default =
                                       automatic: 2 for BDF2 on the CPU, where one linearisation gains
                                       energy on an undamped rotated body, else 1, and warp-vertex's
                                       implicit steps take a second where the first solve turned a
                                       vertex rotation by more than 0.25 rad: host/hd/step.h
                                       TW_WARP_TURN, both backends) */
    double newton_tolerance;        /* stop when the step's residual fell by this factor */
    int turn_substeps;              /* 1: corot-element and hybrid under implicit Euler (one linearisation
                                       a step, the automatic count), CPU backend, take a step whose
                                       solve turned an element by more than 0.25 rad again as up to 8
                                       substeps, each one linearisation (host/step.c
                                       element_turn_substeps); 0, the default: off */
    int warm_start;                 /* 1: start CG from the last velocity */
    int ghost_force_correction;     /* 1: remove net elastic force (vertex methods) */
    tw_warp_system warp_system;
    tw_preconditioner precond;      /* of the implicit steps' PCG (BiCGStab keeps block-Jacobi) */
    int threads;                    /* OpenMP threads of this world's loops, 0 = the OpenMP default,
                                       at most TW_MAX_THREADS */
    int energy_check;               /* 1: each step compares the mechanical energy before and after
                                       (tw_step_stats.energy_rise; both backends); costs one elastic
                                       energy evaluation a step, about a rotation pass (the CUDA
                                       backend: a device reduction, its sums read back), and a copy of
                                       the state when a step can fail. A step that gains energy and ends above where the
                                       steps nothing did work on began by more than the scale (kinetic +
                                       elastic + weight x size) there, after a step that did the same,
                                       fails as diverged. 0: off
                                       (warp-vertex under BDF2 evaluates the energy either way: its
                                       step gives back energy it gained, see tw_world_step) */
    int contact_passes;             /* implicit, with colliders: solves of the contact active set per step at
                                       most (each after the first follows an update of the set); 0, the
                                       default = 8. Fewer trade accuracy (penetration left to the end-of-step
                                       projection, friction off Coulomb's) for a cheaper step (a tool's
                                       force at a haptic rate: bench/tool_rate.c) */
    tw_spmv_form spmv;              /* the CPU PCG's product: full (default) or the symmetric half */
    int collider_models;            /* implicit, CPU backend: 1: each step also condenses the body's
                                       stiffness onto the contacts of every collider it touches, for
                                       tw_world_collider_model (three more solves a step per such
                                       collider); 0, the default: off */
    double collider_model_tolerance; /* those solves' relative residual (each starts from the last
                                       step's); 0, the default: cg_tolerance. 0.1 serves a haptic loop
                                       (bench/tool_rate.c --multirate) */
} tw_world_def;
tw_world_def tw_default_world_def(void);

typedef struct tw_world tw_world;

/* Precomputes K, mass and the solver; the mesh must outlive the world. */
tw_world *tw_world_create(const tw_mesh *mesh, const tw_world_def *def);
void tw_world_destroy(tw_world *w);
const tw_world_def *tw_world_get_def(const tw_world *w);
tw_status tw_world_set_method(tw_world *w, tw_method m);
tw_status tw_world_set_dt(tw_world *w, double dt);
/* The explicit stability limit min over elements of h_e sqrt(rho/(lambda+2mu)),
 * h_e the element's smallest altitude (Courant condition), s. */
double tw_world_courant_dt(const tw_world *w);
double tw_world_dt(const tw_world *w); /* the time step in use, s */

typedef enum tw_constraint { TW_FREE = 0, TW_PINNED, TW_KINEMATIC } tw_constraint;
/* PINNED holds the vertex at its current position; KINEMATIC moves it to the
 * target set with tw_world_set_target each step. */
tw_status tw_world_set_constraint(tw_world *w, int vertex, tw_constraint c);
tw_constraint tw_world_get_constraint(const tw_world *w, int vertex);
/* Hanging (geometrically constrained) vertices: vertex[k] is kept at
 * sum_j weights[j] x[idx[j]], j in [ptr[k], ptr[k+1]) (ptr[0] = 0). Weights
 * must sum to 1, a constrainer must not be hanging itself. The arrays are
 * copied; each hanging vertex becomes TW_KINEMATIC and is placed at its
 * average at once. Replaces an earlier set (those vertices become TW_FREE);
 * count 0 clears. The implicit step (CPU backend) solves for the
 * non-hanging vertices only, with each hanging vertex's mass and elastic
 * force passed to its constrainers (the reduced system P^T A P), and sets the
 * hanging ones to the averages of their velocities and positions (a
 * hanging vertex follows its constrainers there whatever constraint is set
 * on it later: pin its constrainers instead). The explicit step moves a
 * hanging vertex kinematically: before each step its target is the average
 * of the constrainers' predicted positions, after it the exact average
 * (Zhuang & Canny sec. 5). The CUDA backend runs the same reduced system
 * (not yet run on a GPU); with body contact it refuses hanging vertices
 * (the step says so). */
tw_status tw_world_set_hanging(tw_world *w, int count, const int *vertex, const int *ptr,
                               const int *idx, const double *weights);
tw_status tw_world_set_target(tw_world *w, int vertex, const double pos[3]);
/* Pins every vertex whose coordinate `axis` is < value (less=1) or > value.
 * Returns how many were pinned. */
int tw_world_pin_where(tw_world *w, int axis, int less, double value);

/* A constant external force on a vertex (N), until changed. */
tw_status tw_world_set_force(tw_world *w, int vertex, const double f[3]);
void tw_world_clear_forces(tw_world *w);
/* Mouse spring: pulls `vertex` towards `anchor` with stiffness k (N/m);
 * treated implicitly. vertex < 0 releases it. */
tw_status tw_world_set_spring(tw_world *w, int vertex, const double anchor[3], double k);

/* Colliders (Zhuang & Canny sec. 4): a vertex that touches or penetrates
 * one is projected out, loses its approaching normal velocity, and Coulomb
 * friction removes tangential velocity in proportion to the normal impulse.
 * In the implicit integrators a resting contact is a constrained direction in
 * the PCG filter. A collider may move (a tool): with a velocity, the contact
 * constrains the vertex's normal velocity relative to the collider's and
 * friction acts on the relative tangential velocity; the collider advances
 * by dt x velocity each step (kinematic: nothing the body does moves it). */
typedef enum tw_collider_kind {
    TW_COLLIDER_PLANE = 0,
    TW_COLLIDER_BOX,
    TW_COLLIDER_SPHERE,
    TW_COLLIDER_CAPSULE  /* the points within radius of the segment center..end */
} tw_collider_kind;
typedef struct tw_collider_def {
    tw_collider_kind kind;
    double point[3];        /* plane: a point on it, m */
    double normal[3];       /* plane: the side the body stays on (need not be unit) */
    double center[3];       /* box, sphere: m; capsule: the segment's first end, m */
    double half_extents[3]; /* box: axis-aligned half sizes, m, > 0 */
    double radius;          /* sphere, capsule: m, > 0 */
    double friction;        /* Coulomb coefficient, >= 0 */
    double end[3];          /* capsule: the segment's second end, m (equal to center: a sphere) */
    double velocity[3];     /* m/s: of center (plane: of point); 0 for a static collider */
    double end_velocity[3]; /* capsule: of end, m/s (a capsule may turn); the surface between the ends
                               moves with the velocity interpolated along the segment */
} tw_collider_def;
/* The floor z = 0 with friction 0.5, at rest. */
tw_collider_def tw_default_collider_def(void);
#define TW_MAX_COLLIDERS 16
tw_status tw_world_add_collider(tw_world *w, const tw_collider_def *c);
void tw_world_clear_colliders(tw_world *w);
int tw_world_collider_count(const tw_world *w);
/* Collider `index` as it is now (its position at tw_world_time). */
tw_status tw_world_get_collider(const tw_world *w, int index, tw_collider_def *c);
/* Replaces collider `index` (checked as tw_world_add_collider): the state at
 * the start of the next step, its velocity included. */
tw_status tw_world_set_collider(tw_world *w, int index, const tw_collider_def *c);
/* Drives collider `index` along a path: where it is at the end of the next
 * step (center; for a capsule also end, or NULL to translate end with
 * center). Its velocity becomes (target - now) / dt, and after the step it is
 * exactly at the target (and moves on at that velocity unless moved again). */
tw_status tw_world_move_collider(tw_world *w, int index, const double center[3], const double end[3]);
/* The force the body exerted on collider `index` during the last step, N
 * (the contacts' normal and friction impulses, and what the end-of-step
 * projection gave, divided by the step; a tool pressed into a body is pushed
 * back: the force points out of the body). Zero before the first step.
 * Implicit integrators: BDF2 divides by its effective step 2 dt / 3, and
 * with Newton iterations (BDF2 on the CPU) it is the first solve's. Explicit
 * Newmark: the projection's momentum alone, which a resting contact gives
 * every other step or so: average it over steps. */
tw_status tw_world_collider_force(const tw_world *w, int index, double f[3]);
/* The force on a tool between steps (a haptic loop at a higher rate than
 * the simulation; multirate haptics after Cavusoglu & Tendick 2000): a
 * local linear model of the force on collider `index` around where the last
 * step left it,
 *   F(c, v) = force + stiffness (c - center) + damping (v - velocity),
 * stiffness the body's static stiffness (the method's stiffness at the
 * step's linearisation) seen through the step's contacts on the collider,
 * their set and their friction state held (stuck contacts move with it,
 * sliding ones keep Coulomb's friction; on a sphere or capsule the
 * surface's curvature turns a sliding contact's normal, but along a
 * capsule's axis); damping is the
 * Rayleigh beta times it. It leaves out the contact region's inertia and
 * the contact set's changes, which the next step brings. Three solves a
 * step per collider in contact, each started from the last step's
 * (host/contact_model.c). Needs tw_world_def.collider_models = 1, an
 * implicit integrator, the CPU backend and a world of one body without
 * hanging vertices (else TW_ERR_UNSUPPORTED); zero stiffness before the
 * first step, where the collider had no contact in it, and once the
 * collider is replaced (tw_world_set_collider, or a collider added in its
 * place). tw_world_move_collider for the next step leaves the model as the
 * step left it. */
typedef struct tw_collider_model {
    double center[3];    /* the collider's centre (capsule: its first end) after the last step, m */
    double force[3];     /* tw_world_collider_force there, N */
    double velocity[3];  /* the collider's velocity in the last step, m/s */
    double stiffness[9]; /* dF/dcenter, N/m, row-major: stiffness[3 r + c] = dF_r / dcenter_c */
    double damping[9];   /* dF/dvelocity, N s/m, row-major */
    int contacts;        /* the collider's contacts in the last step (the rows condensed) */
    int cg_iterations;   /* the condensation's CG iterations in the last step */
} tw_collider_model;
tw_status tw_world_collider_model(const tw_world *w, int index, tw_collider_model *m);
/* The model's force with the collider at centre c moving at v (m/s; NULL:
 * at the step's velocity), N (a few nanoseconds: the haptic loop's
 * evaluation). */
void tw_collider_model_force(const tw_collider_model *m, const double c[3], const double v[3], double f[3]);
/* Signed distance of point x to collider c (m, negative inside) and the
 * outward normal there. */
double tw_collider_distance(const tw_collider_def *c, const double x[3], double normal[3]);

/* Body contact (a world of a tw_mesh_merge'd mesh; implicit integrators, CPU
 * backend, one linearisation per step whatever newton_iterations says: the
 * contact passes solve the bodies coupled, a Newton iteration would not).
 * Coulomb friction between the bodies, >= 0 (default 0.5). */
tw_status tw_world_set_body_friction(tw_world *w, double friction);
typedef struct tw_body_stats {
    int bodies;           /* bodies in the world (1: no body contact) */
    int surface_vertices; /* vertices tested against the other bodies */
    int contacts;         /* vertices held by a body contact at the end of the last step */
    double ms_last;       /* the last step's time in body contact (detection, BVHs, gaps, projection), ms */
    double ms_total;      /* summed over the steps, ms */
    int rebuilds;         /* BVH rebuilds so far (the others were refits) */
} tw_body_stats;
/* What body contact did; zeros for a world of one body. */
tw_body_stats tw_world_body_stats(const tw_world *w);
/* The deepest any surface vertex lies inside another body at the current
 * positions, m (0 when none; searched to 5 % of the world's size), and that
 * vertex in *vertex (-1 when none; vertex may be NULL). */
double tw_world_body_penetration(tw_world *w, int *vertex);

typedef struct tw_step_stats {
    int cg_iterations;
    double residual;        /* final relative residual */
    int contacts;           /* vertices in contact with a collider this step */
    int newton_iterations;  /* implicit: linear solves this step (a step taken as k substeps: 1 + k) */
    double newton_residual; /* implicit, non-linear: |G| after the last iteration / |G| after the first */
    double ms_rotations, ms_assembly, ms_solve, ms_other, ms_total;
    /* Warnings, per step (0 or a count; a caller sums them over a run): */
    int cg_capped;           /* 1: a linear solve stopped at cg_max_iterations above cg_tolerance
                                (never with cg_fixed_iterations) */
    int energy_rise;         /* 1: kinetic + elastic + gravity energy rose by more than 1e-4 of its
                                scale while nothing did work (no point force, spring or kinematic
                                vertex); with tw_world_def.energy_check, else 0 */
    int contacts_unresolved; /* implicit: vertices the last contact pass still left wrong (the
                                collider pulls, or the vertex would end inside: TW_CONTACT_PASSES
                                solves were not enough); CPU backend, all integrators, also:
                                vertices the end of the step found more than 1e-4 x the body's
                                size inside a collider */
    int contact_passes;      /* implicit, with colliders: solves of the contact active set */
} tw_step_stats;

/* One time step of dt with the world's integrator (def.integrator: implicit
 * Euler, BDF2 or explicit Newmark). warp-vertex under BDF2 (CPU backend):
 * when nothing does work on the body, a step that ends with more mechanical
 * energy than it began with has the excess taken out of its kinetic energy
 * (the free vertices' velocities scaled), because warp-vertex's force is not
 * the gradient of an energy and gains it. On NaN or blow-up (a vertex
 * moving 10 body sizes in the step, or with the energy check the energy
 * rising out of nothing past its scale two steps in a row) returns TW_ERR_DIVERGED and
 * the message says which step and why; the state is left as before the
 * step. */
tw_status tw_world_step(tw_world *w, tw_step_stats *stats);

int tw_world_vertex_count(const tw_world *w);
int tw_world_tet_count(const tw_world *w);
long tw_world_step_index(const tw_world *w);
double tw_world_time(const tw_world *w);
/* The current state, 3n each, valid until the next step or setter. With the
 * CUDA backend the device holds it and the first call after a step copies it
 * back (positions and velocities separately); NULL only if that copy failed
 * (tw_last_error says why). */
const tw_real *tw_world_positions(const tw_world *w);
const tw_real *tw_world_velocities(const tw_world *w);
/* The setters that replace the state (tw_world_reset: the rest positions,
 * zero velocities, step 0; tw_world_solve_static too) restart what the steps
 * carry from one state to the next: BDF2's history, explicit Newmark's
 * acceleration, the contacts' last normal impulses (which decide whether
 * a contact starts a step stuck), body contacts included, and the tool
 * models (tw_world_collider_model: zero stiffness until the next step). */
tw_status tw_world_set_positions(tw_world *w, const tw_real *x);
tw_status tw_world_set_velocities(tw_world *w, const tw_real *v);
void tw_world_reset(tw_world *w);

double tw_world_volume(const tw_world *w);          /* m^3, current */
double tw_world_kinetic_energy(const tw_world *w);  /* J */
/* Elastic energy of the current method (J): 1/2 u^T K u for linear, the
 * corotated element energy for the warped and corotated methods, StVK for green. */
double tw_world_elastic_energy(const tw_world *w);
double tw_world_gravity_energy(const tw_world *w);  /* J, -sum m g.x relative to rest */
const tw_real *tw_world_vertex_mass(const tw_world *w); /* kg per vertex */
size_t tw_world_memory_bytes(const tw_world *w);

/* Elastic force at the current positions for the current method (3n, N),
 * the same force a step uses (before ghost-force correction). */
void tw_world_elastic_force(tw_world *w, tw_real *f);

/* Iterative solver settings of a world in use, as the def's cg_tolerance
 * (relative residual, > 0), cg_max_iterations (>= 1) and cg_fixed_iterations
 * (> 0: exactly that many iterations, no tolerance test; 0: off). Takes
 * effect at the next step. */
tw_status tw_world_set_solver(tw_world *w, double tolerance, int max_iterations, int fixed_iterations);
/* 3x3 blocks in the system matrix (its BSR non-zeros). */
int tw_world_matrix_blocks(const tw_world *w);

/* The backends. 1 when backend b can run here (cpu always; cuda when this
 * build has it and a device is usable); else 0 with the reason in why. */
int tw_backend_usable(tw_backend b, char *why, size_t why_size);
/* The CUDA backend's world; on a world of another backend these return 0 or
 * NULL and change nothing. Device memory held, bytes: */
size_t tw_world_device_bytes(const tw_world *w);
/* Bytes of vertex data (positions, velocities) copied from the device to the
 * host since the world was created. */
size_t tw_world_device_to_host_bytes(const tw_world *w);
/* 1 (the default unless TW_CUDA_GRAPH=0 is set in the environment): each
 * step runs as one CUDA Graph; 0: host-driven. Takes effect at the next step. */
void tw_world_set_cuda_graph(tw_world *w, int on);
/* 1 when the last step ran as a CUDA Graph. */
int tw_world_cuda_graph(const tw_world *w);
/* The device array of the current positions (3n tw_real) when the device
 * holds the current ones, and in *stream (when stream is not NULL) the
 * cudaStream_t the steps run on, where work that reads the array between
 * steps should run. NULL when the host's positions are the current ones
 * (another backend, or a setter changed the state since the last step:
 * tw_world_positions). Valid until the next step or setter. */
const tw_real *tw_world_device_positions(const tw_world *w, void **stream);

typedef struct tw_static_def {
    int load_steps;       /* non-linear: fraction of the load added per step */
    int max_newton;       /* per load step */
    double tolerance;     /* relative residual norm */
    double cg_tolerance;
    int cg_max_iterations;
    int verbose;          /* 1: progress to stderr */
} tw_static_def;
tw_static_def tw_default_static_def(void);

/* What ended the last load increment's Newton iterations. */
typedef enum tw_static_stop {
    TW_STATIC_RESIDUAL = 0, /* the relative residual fell to the tolerance */
    TW_STATIC_UPDATE,       /* the relative update max|dx|/max|u| fell to the tolerance */
    TW_STATIC_STALLED       /* the residual stopped falling with the update within
                               sqrt(tolerance): the tolerance is not met */
} tw_static_stop;

typedef struct tw_static_stats {
    int newton_iterations, cg_iterations;
    double residual;      /* relative: |r| / |f_ext| */
    double update;        /* the last Newton update, max|dx| / max|u| */
    tw_static_stop stop;
} tw_static_stats;

/* Static equilibrium under gravity and the external forces, pinned vertices
 * fixed. linear: K u = f. corot-element and green: Newton with a
 * backtracking line search and adaptive load stepping. warp-vertex and
 * warp-edge have no consistent tangent: TW_ERR_UNSUPPORTED.
 * The result is left in the world's positions (velocities zero). */
tw_status tw_world_solve_static(tw_world *w, const tw_static_def *def, tw_static_stats *stats);

/* ------------------------------------------------- adaptive tetra tree */

/* Imai, Kanai, Yamaguchi and Hasegawa 2013, "Adaptive inhomogeneous
 * simulation of elastic bodies on a tetra tree": a base mesh refined 1:8
 * into levels, the finest carrying the material, every coarser tet an
 * elasticity matrix estimated bottom-up with the valid range of each strain
 * basis; at run time a front through the tree refines where a tet's strain
 * leaves its range and coarsens back where its children agree. */
typedef struct tw_tetra_tree tw_tetra_tree;
typedef struct tw_tetra_tree_def {
    int levels;                    /* 1 .. 8: the base and levels - 1 refinements */
    double t1;                     /* eq. 4: relative deviation from the fitted line, default 1e-2 */
    double t2;                     /* eq. 5: absolute deviation, in units of the tet's largest
                                      diagonal stiffness entry (so dimensionless), default 1e-4 */
    double youngs_modulus;         /* Pa, where element_youngs is NULL */
    double poisson_ratio;
    double density;                /* kg/m^3 */
    const double *element_youngs;  /* finest level, per element, Pa, or NULL */
    const double *element_poisson; /* finest level, per element, or NULL */
    const double *element_density; /* finest level, per element, kg/m^3, or NULL */
} tw_tetra_tree_def;
tw_tetra_tree_def tw_default_tetra_tree_def(void);

/* The tree's levels (base refined levels - 1 times, 1 .. 8), not yet
 * estimated: set the finest level's material on tw_tetra_tree_mesh(t,
 * levels - 1) (element order is the tree's), then tw_tetra_tree_estimate.
 * NULL with tw_last_error set on failure. */
tw_tetra_tree *tw_tetra_tree_create(const tw_mesh *base, int levels);
int tw_tetra_tree_levels(const tw_tetra_tree *t);
/* Level l's mesh (0 the base, levels - 1 the finest); owned by the tree.
 * A vertex keeps its index on every finer level. */
const tw_mesh *tw_tetra_tree_mesh(const tw_tetra_tree *t, int level);
/* The estimation of every coarser tet from the finest level's material in
 * def (def->levels is not read). */
tw_status tw_tetra_tree_estimate(tw_tetra_tree *t, const tw_tetra_tree_def *def);
void tw_tetra_tree_destroy(tw_tetra_tree *t);

typedef struct tw_front tw_front;
typedef struct tw_front_def {
    double dt;                  /* s */
    double gravity[3];          /* m/s^2 */
    double damping_mass;        /* Rayleigh alpha, 1/s */
    double damping_stiffness;   /* Rayleigh beta, s */
    double cg_tolerance;        /* relative residual */
    int cg_max_iterations;
    int adapt;                  /* 1: the front moves; 0: the finest level throughout */
    int start_level;            /* the front's level at the start (adapt), default 0 */
    double coarsen_margin;      /* hysteresis: a parent returns only with every alpha inside this
                                   fraction of its valid range, default 0.5 */
    double t3;                  /* sec. 5.2 condition 3: every child's strain within t3 (max norm,
                                   strain units) of the parent's, default 1e-3 */
    int hold_steps;             /* a tet refined less than this many steps ago is not coarsened, default 10 */
    int threads;                /* OpenMP threads, 0: the default */
    tw_preconditioner precond;  /* of the step's PCG; auto (the default): multigrid from
                                   TW_FRONT_MG_MIN_TETS active tets on, block-Jacobi below */
    tw_backend backend;         /* cpu (the default) or cuda: the step's element pass, assembly and
                                   PCG (block-Jacobi) and the pattern on the device
                                   (kernels/cuda_front.h); auto is cpu, the device front not having
                                   run on a GPU yet */
} tw_front_def;
tw_front_def tw_default_front_def(void);

typedef struct tw_front_stats {
    int active_tets, free_vertices, hanging_vertices;
    int refined, coarsened;     /* tets switched this step (parents refined, parents restored) */
    int rebuilt;                /* 1 when the reduced system's pattern was rebuilt */
    int cg_iterations;
    double cg_residual;
    double energy_jump;         /* J: total energy after the step's switch minus before (0 without one) */
    double ms_front, ms_system, ms_solve; /* the step's parts, ms */
} tw_front_stats;


/* A front on tree t (which must outlive it), at rest, with vertices whose
 * pinned[v] (finest level, may be NULL) is non-zero held fixed. */
tw_front *tw_front_create(const tw_tetra_tree *t, const unsigned char *pinned, const tw_front_def *def);
void tw_front_destroy(tw_front *f);

/* One step: front update, then implicit Euler. TW_ERR_DIVERGED on NaN. */
tw_status tw_front_step(tw_front *f, tw_front_stats *stats);

int tw_front_active_tets(const tw_front *f);
/* 1 where tree tet id is in the front. */
int tw_front_is_active(const tw_front *f, int id);

/* Every finest vertex's position (3 per vertex): the front's where it is a
 * vertex of it, else the linear interpolation in the active tet holding it. */
void tw_front_positions(const tw_front *f, double *x);

/* Total energy: kinetic + elastic (corotated, at the current rotations) +
 * gravity's potential, J. */
double tw_front_energy(tw_front *f);

/* The strain coordinates alpha (eq. 2) of tree tet id at the current
 * positions: the Voigt components of the stretch U - I, F = R U, engineering
 * shears; its corners must be vertices of the front or interpolated. */
void tw_front_alpha(const tw_front *f, int id, double alpha[6]);


#ifdef __cplusplus
}
#endif
#endif
