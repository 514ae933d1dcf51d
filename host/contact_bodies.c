/* Contact between bodies (several meshes in one world, tw_mesh_merge).
 *
 * Detection. Each body's boundary triangles are in a BVH (bvh.h) refitted
 * to the positions at the start of each implicit step and rebuilt when the
 * refitted boxes have doubled in area. A surface vertex looks for the
 * nearest triangle of each other body within a search radius (three times
 * the farthest any surface vertex moves in the step at its start velocity,
 * and at least 2 % of the world's size): the closest point q, with
 * barycentric weights w, and the signed distance d, negative when the vertex
 * is inside the other body by the sign of p - q against the angle-weighted
 * pseudo-normal at q (Baerentzen & Aanaes 2005: the face's normal inside a
 * face, the mean of the two faces' at an edge, the angle-weighted vertex
 * normal at a corner), exact for a closed surface. The contact normal is
 * (p - q)/|p - q| (outward from the other body), or the pseudo-normal when p
 * is on the surface.
 *
 * One side holds. Of two bodies in contact, the one with the finer surface
 * (shorter mean edge; on a tie the later body) holds its vertices against
 * the other's triangles; a vertex of the other body counts its distance
 * TW_BODY_SLACK of the world's size larger, so that it joins (and lands) only
 * that deep inside: where the surfaces meet, the holding side has them
 * together and the other side's vertices stay free. A vertex of the other
 * side that is a corner of an active holding contact's triangle leaves the
 * contacts for the rest of the step (tw_bodies_coupled): that contact
 * already carries it, and holding both would close a loop in which each
 * side's normal velocity is given by the other's (for coincident vertices
 * the same constraint twice; a region held from both sides loses its common
 * normal motion). Between the holding vertices the two meshes' surfaces
 * differ under load (a soft cube's loaded face sinks at the held points and
 * not at its rim), so such a vertex would sink into the other body. It is
 * pushed out by a one-sided penalty spring instead of a constraint: when it
 * is inside the other body's triangle at the start of the step, or a solve
 * of the step takes it inside, a spring of stiffness k along the normal
 * acts between it and the triangle's point until a solve ends it outside
 * (where the spring would pull; tw_bodies_pass, and a change is solved
 * again). It acts on the gap at the step's end, g = d + heff n.(v_p - v_q),
 * implicitly: heff^2 k D^T n n^T D in the matrix (D v = v_p - v_q) and
 * -heff k d D^T n on the right-hand side. A spring closes no loop of
 * constraints (the matrix stays symmetric positive definite with both sides
 * held) and it is a force, in equilibrium with the elastic ones at rest,
 * where a projection of positions works against them every step. heff^2 k
 * is TW_BODY_SPRING times the vertex's own normal diagonal of the matrix
 * (m + heff^2 K_pp without damping), so at any dt the spring is stiffer than
 * what holds the vertex in its body and leaves it a fraction of the depth
 * it would reach free. Beyond TW_BODY_UNDER of the size the projection
 * below still moves it.
 *
 * In the step. The contact enters the implicit step through contact.c's
 * active set (detection test, landing, release and join, friction, the
 * impulse J = n.(A v - b)_p all run unchanged) with the constraint on the
 * relative normal velocity, g = d + heff n.(v_p - v_q) >= 0, v_q the
 * velocity of the triangle's point: contact.c's g = d' + heff n.v_p with the
 * effective distance d' = d - heff n.v_q in w->cdist, n.v_q taken from the
 * last solve (tw_bodies_pass) for the join test. A vertex nearer to a
 * collider than to another body keeps the collider (one constraint per
 * vertex).
 *
 * The solve is coupled (tw_bodies_solve): an active contact is an equality
 * n.v_p = n.(sum_k w_k v_k) - d/heff between the vertex and its triangle's
 * vertices, eliminated as the hanging vertices are (a row of P, hanging.c):
 * v = P y + s, where P is the identity on the free directions and gives the
 * held vertex's normal component as its triangle's, and s holds the
 * prescribed parts (pinned, kinematic, collider landings, -d/heff n). PCG on
 * S P^T A P S y = S P^T (b - A s) (Baraff & Witkin's filter S on top) solves
 * both bodies at once, so the contact's reaction J n on the vertex and
 * -w_k J n on the triangle's vertices are one multiplier, consistent within
 * the solve: P^T (A v - b) = 0 leaves (A v - b) = C^T lambda with C the
 * constraint rows. Friction damps the velocity relative to the triangle's
 * point, cf (v_p - v_q)_t: contact.c puts the vertex's own block cf T in A,
 * and the solve adds the rest of cf D^T T D (D v = v_p - v_q), symmetric,
 * so the triangle's body takes the friction too. Its coefficient is set from
 * the vertex's own tangential velocity (exact for a body on a body at rest).
 * The preconditioner is block Jacobi of P^T A P's diagonal blocks (A's, plus
 * w_k^2 (n.A_pp n) n n^T on a triangle's vertex: the held vertex's mass
 * riding on it), whatever def.precond says, and the solve is PCG: it takes
 * warp-vertex's non-symmetric system (warp_system bicgstab) as symmetric.
 * A stuck contact's friction (contact.c's stuck damping) ties the vertex to
 * its triangle's point stiffly, which block Jacobi preconditions poorly:
 * a stack at rest takes several times the CG iterations it takes without
 * friction.
 *
 * Why this: an exchange of impulses between separate solves (each side's
 * reaction put on the other's right-hand side after a solve, block Jacobi
 * across the contact passes) is a Dirichlet-Neumann iteration between the
 * bodies; it converges only under relaxation, by a factor per pass that
 * depends on the bodies' masses and stiffness, and a stack needs more passes
 * than a step affords, so the held vertices end every step off their
 * triangles and the stack trembles. The filtered PCG of Baraff & Witkin
 * (1998) keeps one-sided constraints on single vertices exact inside the
 * solve; a vertex-triangle equality is a row of P as a hanging vertex is, so
 * the same PCG solves it exactly with no loop of its own, at the cost of a
 * few operations per contact per iteration. The inequality (which contacts
 * are active) stays the primal-dual active set across the passes, as for the
 * colliders. Otaduy et al. (2009, implicit contact handling for deformable
 * objects) solve the same coupled LCP with a projected Gauss-Seidel on the
 * Schur complement, which needs the compliance C A^-1 C^T (a solve per
 * contact, or an approximation of it) and an iteration count of its own;
 * eliminating the held side needs neither, as long as the constraint graph
 * has no loops (above). A triangle vertex that is itself held (a chain: a
 * body between two others, one element thick) moves with its own triangle:
 * P = sum_r N^r over the chain's length (at most TW_BODY_CHAIN), exact for a
 * chain. Edge-edge crossings (no vertex inside) are not detected; with
 * meshes of similar density they are shallow.
 *
 * After the step, as contact.c projects vertices out of the colliders, a
 * surface vertex found inside another body deeper than it may be is moved
 * onto its surface and its approach to it stopped (the impacts the passes
 * did not settle): a holding vertex TW_BODY_SLACK of the size, one of the
 * other side twice that (it lands TW_BODY_SLACK deep), one left out under a
 * holding contact TW_BODY_UNDER. At rest none is that deep: a projection
 * there would move vertices against the elastic forces every step.
 *
 * Only the implicit integrators run body contact: a world of several
 * bodies is refused with explicit Newmark (world.c). On the CUDA backend
 * these functions run as they are on the host, on positions and velocities
 * the device step hands them (host/step.c's body hooks), and the coupled
 * solve runs on the device from tw_bodies_lists (kernels/cuda_bodies.cu,
 * its per-contact terms hd/body_solve.h's, which this file's loops call
 * too). */
#include "contact_bodies.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "error.h"
#include "hd/bodies.h"
#include "hd/body_solve.h"
#include "hd/contact.h"
#include "mesh.h"
#include "solver.h"
#include "world.h"

#include "hd/bsr_row_real.h" /* the CPU solvers' row bodies and block-Jacobi preconditioner */

struct tw_bodies {
    int nbodies, n;
    int *vbody;          /* n: body per vertex */
    int ntris;
    int *tris;           /* 3 per surface triangle, grouped by body */
    int *tri_ptr;        /* nbodies + 1 */
    int *tri_nbr;        /* 3 per triangle: the triangle across the edge opposite corner k, -1 none */
    int nsurf, *surf;    /* the surface vertices */
    tw_bvh *bvh;         /* per body */
    tw_bvh_view *bvh_views; /* per body: scratch for view_of */
    double *fn;          /* 3 per triangle: unit normals this step */
    double *vn;          /* 3 per vertex: angle-weighted normals this step (surface vertices) */
    int *ctri;           /* n: the triangle of the vertex's body contact this step, -1 none */
    tw_real *cw;         /* 3 per vertex: its barycentric weights */
    double *mass;        /* nbodies: each body's mass, kg */
    unsigned char *owns; /* nbodies^2: owns[A nbodies + B]: A's vertices hold against B's triangles */
    tw_real *cd;         /* n: the vertex's signed distance to its triangle at the start of the step, m */
    tw_real *vq;         /* n: the triangle point's normal velocity of the last solve, m/s */
    tw_real *rnew;       /* 3n: scratch (the projection's moves; the solve's right-hand side with the springs) */
    tw_real *s0;         /* 3n: the coupled solve's prescribed parts */
    double *rn;          /* n: scratch, per active contact */
    int *act, nact;      /* the active body contacts of the coupled solve */
    int *cidx;           /* n: the vertex's index in act, -1 none */
    unsigned char *under; /* n: left out of this step's contacts under a holding contact's triangle */
    int depth;           /* the longest chain of held vertices in act (P's terms) */
    double *rn2;         /* n: scratch, per active contact */
    int *ptri;           /* n: an under vertex's triangle of its penalty spring this step, -1 none */
    int *pen, npen;      /* the under vertices with a penalty spring this step */
    double *pk;          /* n: scratch, per spring: its stiffness in the system's units (heff^2 k) */
    double mu;           /* Coulomb friction between bodies */
    int contacts, rebuilds;
    double ms_last, ms_total, size;
};

tw_bodies *tw_bodies_create(const tw_mesh *m, const tw_real *x, const tw_real *mass, double size)
{
    tw_bodies *b = tw_calloc(1, sizeof *b, "body contact");
    if (!b) return NULL;
    int n = m->nv;
    b->n = n;
    b->nbodies = m->nbodies;
    b->mu = 0.5;
    b->size = size;
    int *faces = NULL, nf = tw_mesh_boundary_faces(m, &faces);
    b->vbody = tw_malloc(sizeof(int) * (size_t)n, "vertex bodies");
    b->tris = tw_malloc(sizeof(int) * 3 * (size_t)(nf > 0 ? nf : 1), "body surfaces");
    b->tri_ptr = tw_calloc((size_t)b->nbodies + 1, sizeof(int), "body surfaces");
    b->tri_nbr = tw_malloc(sizeof(int) * 3 * (size_t)(nf > 0 ? nf : 1), "surface neighbours");
    b->surf = tw_malloc(sizeof(int) * (size_t)n, "surface vertices");
    b->bvh = tw_calloc((size_t)b->nbodies, sizeof(tw_bvh), "body BVHs");
    b->bvh_views = tw_calloc((size_t)b->nbodies, sizeof(tw_bvh_view), "body BVHs");
    b->fn = tw_malloc(sizeof(double) * 3 * (size_t)(nf > 0 ? nf : 1), "surface normals");
    b->vn = tw_calloc(3 * (size_t)n, sizeof(double), "surface vertex normals");
    b->ctri = tw_malloc(sizeof(int) * (size_t)n, "body contacts");
    b->cw = tw_calloc(3 * (size_t)n, sizeof(tw_real), "body contact weights");
    b->mass = tw_calloc((size_t)b->nbodies, sizeof(double), "body masses");
    b->owns = tw_calloc((size_t)b->nbodies * (size_t)b->nbodies, 1, "body contact owners");
    b->cd = tw_calloc((size_t)n, sizeof(tw_real), "body contact distances");
    b->vq = tw_calloc((size_t)n, sizeof(tw_real), "body contact velocities");
    b->rnew = tw_calloc(3 * (size_t)n, sizeof(tw_real), "body contact scratch");
    b->s0 = tw_calloc(3 * (size_t)n, sizeof(tw_real), "body contact solve");
    b->rn = tw_calloc((size_t)n, sizeof(double), "body contact solve");
    b->act = tw_calloc((size_t)n, sizeof(int), "body contact solve");
    b->cidx = tw_malloc(sizeof(int) * (size_t)n, "body contact solve");
    b->rn2 = tw_calloc((size_t)n, sizeof(double), "body contact solve");
    b->under = tw_calloc((size_t)n, 1, "body contact solve");
    b->ptri = tw_malloc(sizeof(int) * (size_t)n, "body contact springs");
    b->pen = tw_calloc((size_t)n, sizeof(int), "body contact springs");
    b->pk = tw_calloc((size_t)n, sizeof(double), "body contact springs");
    if (nf <= 0 || !faces || !b->vbody || !b->tris || !b->tri_ptr || !b->tri_nbr || !b->surf || !b->bvh ||
        !b->bvh_views || !b->fn || !b->vn || !b->ctri || !b->cw || !b->mass || !b->owns || !b->cd || !b->vq ||
        !b->rnew || !b->s0 || !b->rn || !b->act || !b->cidx || !b->rn2 || !b->under ||
        !b->ptri || !b->pen || !b->pk) {
        if (nf == 0) tw_fail(TW_ERR_INVALID, "body contact: the mesh has no boundary faces");
        free(faces);
        tw_bodies_free(b);
        return NULL;
    }
    memcpy(b->vbody, m->body, sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) b->mass[b->vbody[i]] += mass[i];
    for (int i = 0; i < n; i++) b->ctri[i] = b->cidx[i] = b->ptri[i] = -1;
    /* the faces grouped by body (counting sort, stable) */
    for (int f = 0; f < nf; f++) b->tri_ptr[b->vbody[faces[3 * f]] + 1]++;
    for (int k = 0; k < b->nbodies; k++) b->tri_ptr[k + 1] += b->tri_ptr[k];
    int *fill = tw_malloc(sizeof(int) * (size_t)b->nbodies, "body surfaces");
    unsigned char *on = tw_calloc((size_t)n, 1, "surface vertices");
    if (!fill || !on) {
        free(fill); free(on); free(faces);
        tw_bodies_free(b);
        return NULL;
    }
    memcpy(fill, b->tri_ptr, sizeof(int) * (size_t)b->nbodies);
    for (int f = 0; f < nf; f++) {
        int t = fill[b->vbody[faces[3 * f]]]++;
        for (int k = 0; k < 3; k++) {
            b->tris[3 * t + k] = faces[3 * f + k];
            on[faces[3 * f + k]] = 1;
        }
    }
    free(fill);
    free(faces);
    b->ntris = nf;
    for (int i = 0; i < n; i++)
        if (on[i]) b->surf[b->nsurf++] = i;
    free(on);
    /* edge neighbours: the directed edge (u, v) of one triangle is (v, u)
     * in its neighbour; found through the triangles around each vertex */
    int *vt_ptr = tw_calloc((size_t)n + 1, sizeof(int), "surface adjacency");
    int *vt = tw_malloc(sizeof(int) * 3 * (size_t)nf, "surface adjacency");
    if (!vt_ptr || !vt) {
        free(vt_ptr); free(vt);
        tw_bodies_free(b);
        return NULL;
    }
    for (int t = 0; t < nf; t++)
        for (int k = 0; k < 3; k++) vt_ptr[b->tris[3 * t + k] + 1]++;
    for (int i = 0; i < n; i++) vt_ptr[i + 1] += vt_ptr[i];
    for (int t = 0; t < nf; t++)
        for (int k = 0; k < 3; k++) vt[vt_ptr[b->tris[3 * t + k]]++] = t;
    for (int i = n; i > 0; i--) vt_ptr[i] = vt_ptr[i - 1];
    vt_ptr[0] = 0;
    for (int t = 0; t < nf; t++)
        for (int k = 0; k < 3; k++) {
            int u = b->tris[3 * t + (k + 1) % 3], v = b->tris[3 * t + (k + 2) % 3];
            b->tri_nbr[3 * t + k] = -1;
            for (int j = vt_ptr[v]; j < vt_ptr[v + 1]; j++) {
                int s = vt[j];
                if (s == t) continue;
                const int *S = b->tris + 3 * (size_t)s;
                for (int c = 0; c < 3; c++)
                    if (S[c] == v && S[(c + 1) % 3] == u) b->tri_nbr[3 * t + k] = s;
            }
        }
    free(vt_ptr);
    free(vt);
    /* which side of a pair holds: the body with the finer surface (its mean
     * edge shorter by 1 %; else the later body), its vertices sampling the
     * contact more densely */
    double *h = tw_calloc((size_t)b->nbodies, sizeof(double), "surface edges");
    if (!h) {
        tw_bodies_free(b);
        return NULL;
    }
    for (int k = 0; k < b->nbodies; k++) {
        double sum = 0;
        for (int t = b->tri_ptr[k]; t < b->tri_ptr[k + 1]; t++)
            for (int j = 0; j < 3; j++) {
                const int *T = b->tris + 3 * (size_t)t;
                double e2 = 0;
                for (int a = 0; a < 3; a++) {
                    double dx = (double)x[3 * (size_t)T[j] + a] - x[3 * (size_t)T[(j + 1) % 3] + a];
                    e2 += dx * dx;
                }
                sum += sqrt(e2);
            }
        int c = b->tri_ptr[k + 1] - b->tri_ptr[k];
        h[k] = c > 0 ? sum / (3.0 * c) : 0;
    }
    for (int A = 0; A < b->nbodies; A++)
        for (int B = 0; B < b->nbodies; B++)
            b->owns[A * b->nbodies + B] = A != B && (h[A] < 0.99 * h[B] || (!(h[B] < 0.99 * h[A]) && A > B));
    free(h);
    for (int k = 0; k < b->nbodies; k++) {
        int c = b->tri_ptr[k + 1] - b->tri_ptr[k];
        if (c < 1) {
            tw_fail(TW_ERR_INVALID, "body contact: body %d has no surface triangles", k);
            tw_bodies_free(b);
            return NULL;
        }
        if (tw_bvh_build(&b->bvh[k], b->tris + 3 * (size_t)b->tri_ptr[k], c, x) != TW_OK) {
            tw_bodies_free(b);
            return NULL;
        }
    }
    return b;
}

void tw_bodies_free(tw_bodies *b)
{
    if (!b) return;
    if (b->bvh)
        for (int k = 0; k < b->nbodies; k++) tw_bvh_free(&b->bvh[k]);
    free(b->vbody); free(b->tris); free(b->tri_ptr); free(b->tri_nbr); free(b->surf); free(b->bvh);
    free(b->bvh_views);
    free(b->fn); free(b->vn); free(b->ctri); free(b->cw); free(b->mass); free(b->owns);
    free(b->cd); free(b->vq); free(b->rnew); free(b->s0); free(b->rn); free(b->act);
    free(b->cidx); free(b->rn2); free(b->under); free(b->ptri); free(b->pen); free(b->pk);
    free(b);
}

void tw_bodies_reset(tw_bodies *b)
{
    if (!b) return;
    for (int i = 0; i < b->n; i++) b->ctri[i] = b->cidx[i] = b->ptri[i] = -1;
    b->nact = b->npen = 0;
    b->contacts = 0;
}

/* The BVHs at x (refitted, rebuilt where they grew), the face normals and
 * the angle-weighted vertex normals there. */
static void surfaces_at(tw_bodies *b, const tw_real *x)
{
    for (int k = 0; k < b->nbodies; k++)
        if (tw_bvh_refit(&b->bvh[k], x)) {
            tw_bvh_build(&b->bvh[k], b->bvh[k].tris, b->bvh[k].count, x); /* same sizes: cannot fail but NOMEM */
            b->rebuilds++;
        }
    for (int i = 0; i < b->nsurf; i++) {
        double *v = b->vn + 3 * (size_t)b->surf[i];
        v[0] = v[1] = v[2] = 0;
    }
    for (int t = 0; t < b->ntris; t++) {
        const int *T = b->tris + 3 * (size_t)t;
        double p[3][3], e1[3], e2[3], nn[3];
        for (int j = 0; j < 3; j++)
            for (int a = 0; a < 3; a++) p[j][a] = x[3 * (size_t)T[j] + a];
        for (int a = 0; a < 3; a++) { e1[a] = p[1][a] - p[0][a]; e2[a] = p[2][a] - p[0][a]; }
        nn[0] = e1[1] * e2[2] - e1[2] * e2[1];
        nn[1] = e1[2] * e2[0] - e1[0] * e2[2];
        nn[2] = e1[0] * e2[1] - e1[1] * e2[0];
        double l = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        for (int a = 0; a < 3; a++) b->fn[3 * (size_t)t + a] = l > 0 ? nn[a] / l : 0;
        for (int j = 0; j < 3; j++) { /* the corner's angle */
            const double *o = p[j], *q1 = p[(j + 1) % 3], *q2 = p[(j + 2) % 3];
            double u[3], w[3], lu = 0, lw = 0, dot = 0;
            for (int a = 0; a < 3; a++) {
                u[a] = q1[a] - o[a]; w[a] = q2[a] - o[a];
                lu += u[a] * u[a]; lw += w[a] * w[a]; dot += u[a] * w[a];
            }
            double c = lu > 0 && lw > 0 ? dot / sqrt(lu * lw) : 1;
            double ang = acos(c < -1 ? -1 : c > 1 ? 1 : c);
            double *v = b->vn + 3 * (size_t)T[j];
            for (int a = 0; a < 3; a++) v[a] += ang * b->fn[3 * (size_t)t + a];
        }
    }
}

/* The plain view of b at positions x the per-vertex queries read
 * (hd/bodies.h); bvh: room for b->nbodies views. */
static tw_bodies_view view_of(const tw_bodies *b, const tw_real *x, tw_bvh_view *bvh)
{
    tw_bodies_view v;
    v.nbodies = b->nbodies;
    v.vbody = b->vbody;
    v.tris = b->tris;
    v.tri_ptr = b->tri_ptr;
    v.tri_nbr = b->tri_nbr;
    v.fn = b->fn;
    v.vn = b->vn;
    v.owns = b->owns;
    v.size = b->size;
    v.x = x;
    for (int k = 0; k < b->nbodies; k++) bvh[k] = tw_bvh_view_of(&b->bvh[k], x);
    v.bvh = bvh;
    return v;
}

int tw_bodies_detect(tw_world *w, const tw_real *x, double heff, int contacts)
{
    tw_bodies *b = w->bodies;
    double t0 = tw_now_ms();
    int n = w->fem.n;
    if (!w->ncolliders) /* tw_contact_detect left these: no vertex has a contact yet */
        for (int i = 0; i < n; i++) {
            w->cfric[i] = 0;
            w->cdist[i] = (tw_real)INFINITY;
        }
    surfaces_at(b, x);
    double vmax2 = 0;
    for (int k = 0; k < b->nsurf; k++) {
        const tw_real *v = w->v + 3 * (size_t)b->surf[k];
        double s = (double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2];
        if (s > vmax2) vmax2 = s;
    }
    double r = fmax(3 * heff * sqrt(vmax2), 0.02 * w->size), touch = TW_CONTACT_TOUCH * w->size;
    tw_bvh_view *bv = b->bvh_views;
    tw_bodies_view view = view_of(b, x, bv);
    for (int k = 0; k < b->nsurf; k++) b->ptri[b->surf[k]] = -1;
    b->npen = 0;
    int added = 0, body_in = 0;
#pragma omp parallel for if (TW_PAR(b->nsurf)) num_threads(tw_world_threads(w)) schedule(dynamic, 64) \
    reduction(+ : added, body_in)
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k];
        b->ctri[i] = -1;
        b->under[i] = 0;
        if (w->cons[i]) continue;
        double wt[3], d, nn[3];
        int t = tw_body_nearest(&view, i, r, 0, TW_BODY_SLACK * w->size, wt, &d, nn);
        if (t < 0) continue;
        if (w->ncolliders && w->cdist[i] <= d) continue; /* the collider is nearer */
        const int *T = b->tris + 3 * (size_t)t;
        double vq = 0, vp = 0; /* normal velocities of the triangle's point and of the vertex */
        for (int a = 0; a < 3; a++) {
            double va = wt[0] * w->v[3 * (size_t)T[0] + a] + wt[1] * w->v[3 * (size_t)T[1] + a] +
                        wt[2] * w->v[3 * (size_t)T[2] + a];
            vq += va * nn[a];
            vp += w->v[3 * (size_t)i + a] * nn[a];
        }
        int was = w->fcons[i] == TW_FILTER_NORMAL;
        b->ctri[i] = t;
        /* no collider's: the force on the colliders leaves it out, and the
         * triangle's motion is in the effective distance, not in cvel */
        w->ccol[i] = TW_CONTACT_NONE;
        for (int a = 0; a < 3; a++) {
            w->cvel[3 * (size_t)i + a] = 0;
            b->cw[3 * (size_t)i + a] = (tw_real)wt[a];
            w->cnormal[3 * (size_t)i + a] = (tw_real)nn[a];
        }
        b->cd[i] = (tw_real)d;
        b->vq[i] = (tw_real)vq;
        w->cdist[i] = (tw_real)(d - heff * vq);
        w->cmu[i] = (tw_real)b->mu;
        int in = tw_contact_is_in(d, vp - vq, tw_contact_touch(touch, x + 3 * (size_t)i), heff);
        w->fcons[i] = in ? TW_FILTER_NORMAL : w->cons[i];
        added += in - was;
        body_in += in;
    }
    b->contacts = body_in;
    /* A free vertex that starts the step with neither a collider's nor a
     * body's contact forgets its impulse (no friction in its next first
     * pass, as tw_contact_detect does without bodies). Only here, after both
     * detections: a body contact's vertex has no collider contact, and its
     * last impulse gives its first pass's friction
     * (tw_contact_friction_implicit), which a floor's detection would
     * otherwise take from every body contact. */
    for (int i = 0; i < n; i++)
        if (!w->cons[i] && w->fcons[i] != TW_FILTER_NORMAL) w->cimpulse[i] = 0;
    double dt = tw_now_ms() - t0;
    b->ms_last = dt;
    b->ms_total += dt;
    return contacts + added;
}

int tw_bodies_pass(tw_world *w, double heff)
{
    tw_bodies *b = w->bodies;
    if (!b) return 0;
    double t0 = tw_now_ms();
    /* the springs' active set: on where this solve ends the under vertex
     * inside the other body's triangle (g < 0), off where it ends outside
     * (the spring would pull) */
    int added = 0;
    if (TW_BODY_SPRING > 0) {
        int np = 0;
        for (int k = 0; k < b->nsurf; k++) {
            int i = b->surf[k], t = b->ptri[i];
            if (t < 0 || !b->under[i]) continue;
            const int *T = b->tris + 3 * (size_t)t;
            const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
            double u = 0;
            for (int a = 0; a < 3; a++)
                u += nn[a] * (w->vnew[3 * (size_t)i + a] - cw[0] * w->vnew[3 * (size_t)T[0] + a] -
                              cw[1] * w->vnew[3 * (size_t)T[1] + a] - cw[2] * w->vnew[3 * (size_t)T[2] + a]);
            int on = b->cd[i] - TW_BODY_SLACK * b->size + heff * u < 0;
            added += on != (b->under[i] == 2);
            b->under[i] = (unsigned char)(1 + on);
            if (on) b->pen[np++] = i;
        }
        b->npen = np;
    }
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k], t = b->ctri[i];
        if (t < 0) continue;
        const int *T = b->tris + 3 * (size_t)t;
        const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
        double vq = 0;
        for (int a = 0; a < 3; a++)
            vq += nn[a] * (cw[0] * w->vnew[3 * (size_t)T[0] + a] + cw[1] * w->vnew[3 * (size_t)T[1] + a] +
                           cw[2] * w->vnew[3 * (size_t)T[2] + a]);
        b->vq[i] = (tw_real)vq;
        w->cdist[i] = (tw_real)(b->cd[i] - heff * vq);
    }
    double dt = tw_now_ms() - t0;
    b->ms_last += dt;
    b->ms_total += dt;
    return added;
}

/* Does vertex i's body hold its contacts against triangle t's body? */
static int holds(const tw_bodies *b, int i, int t)
{
    return b->owns[b->vbody[i] * b->nbodies + b->vbody[b->tris[3 * (size_t)t]]];
}

int tw_bodies_coupled(tw_world *w)
{
    tw_bodies *b = w->bodies;
    if (!b) return 0;
    for (int c = 0; c < b->nact; c++) b->cidx[b->act[c]] = -1;
    /* the triangles' vertices of the active holding contacts (marked in
     * cidx by -2) */
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k], t = b->ctri[i];
        if (t < 0 || w->fcons[i] != TW_FILTER_NORMAL || !holds(b, i, t)) continue;
        for (int j = 0; j < 3; j++) b->cidx[b->tris[3 * (size_t)t + j]] = -2;
    }
    /* a vertex of the side that does not hold, under a holding contact's
     * triangle, leaves the contacts for the rest of the step: it already
     * carries that contact, and holding both would close a loop of two
     * constraints on one gap (for coincident vertices the same constraint
     * twice) */
    int c = 0;
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k], t = b->ctri[i];
        if (t < 0) continue;
        if (b->cidx[i] == -2 && !holds(b, i, t)) {
            if (w->fcons[i] == TW_FILTER_NORMAL) {
                size_t i3 = 3 * (size_t)i;
                tw_contact_set_damping(w->A + 9 * (size_t)w->fem.diag[i], w->rhs + i3, w->cnormal + i3, w->cvel + i3,
                                       &w->cfric[i], 0);
                w->fcons[i] = w->cons[i];
                w->cimpulse[i] = 0;
            }
            w->cdist[i] = (tw_real)INFINITY; /* out of the active-set update */
            /* its triangle kept for its spring, on now where it is inside
             * the other body (cd counts TW_BODY_SLACK more on this side);
             * tw_bodies_pass turns it on and off after each solve */
            b->ptri[i] = t;
            b->ctri[i] = -1;
            b->under[i] = 1;
            if (TW_BODY_SPRING > 0 && b->cd[i] - TW_BODY_SLACK * b->size < 0) {
                b->under[i] = 2;
                b->pen[b->npen++] = i;
            }
            continue;
        }
        if (w->fcons[i] == TW_FILTER_NORMAL) b->act[c++] = i;
    }
    for (int k = 0; k < b->nsurf; k++) b->cidx[b->surf[k]] = -1;
    for (int k = 0; k < c; k++) b->cidx[b->act[k]] = k;
    b->nact = c;
    /* the longest chain: a held vertex whose triangle has held vertices
     * moves with their triangles too (P's terms; without loops it ends) */
    int *dep = (int *)b->rn; /* scratch, as many as act */
    for (int k = 0; k < c; k++) dep[k] = 1;
    int depth = c > 0, grew = 1;
    for (int it = 0; grew && it < TW_BODY_CHAIN; it++) {
        grew = 0;
        for (int k = 0; k < c; k++) {
            const int *T = b->tris + 3 * (size_t)b->ctri[b->act[k]];
            for (int j = 0; j < 3; j++) {
                int q = b->cidx[T[j]];
                if (q >= 0 && dep[q] + 1 > dep[k]) {
                    dep[k] = dep[q] + 1;
                    grew = 1;
                }
            }
            if (dep[k] > depth) depth = dep[k];
        }
    }
    b->depth = depth < TW_BODY_CHAIN ? depth : TW_BODY_CHAIN;
    return c + b->npen;
}

tw_status tw_bodies_lists(const tw_world *w, tw_body_lists *out, int *depth)
{
    const tw_bodies *b = w->bodies;
    *depth = 0;
    if (!b) return tw_fail(TW_ERR_INVALID, "tw_bodies_lists: the world has one body");
    if (tw_body_lists_build(b->n, b->nact, b->act, b->npen, b->pen, b->ctri, b->ptri, b->tris, b->cw, b->cd, out))
        return tw_fail(TW_ERR_NOMEM, "out of host memory for the body contacts' lists (%d contacts, %d springs)",
                       b->nact, b->npen);
    *depth = b->depth;
    return TW_OK;
}

/* v = S v (the PCG's filter: fcons, cnormal) */
static void filter(const tw_world *w, tw_real *v)
{
    tw_filter f = {w->fcons, w->cnormal};
    tw_filter_apply(w->fem.n, &f, v, tw_world_threads(w));
}

/* v = P y = sum_{r < depth} N^r y: y, and on each held vertex p the normal
 * velocity of its triangle's point n.(sum_k w_k v_k) added, v_k holding its
 * own triangle's when k is held (a chain). (N u)_p = n_p (n_p.sum_k w_k u_k);
 * after the first term u lives on the held vertices only, u_p = n_p t_p. y's
 * own normal component on a held vertex is 0 or, for s0, the prescribed
 * -d/heff. */
static void couple(tw_bodies *b, const tw_world *w, const tw_real *y, tw_real *v, size_t n3)
{
    memcpy(v, y, sizeof(tw_real) * n3);
    double *t = b->rn, *tn = b->rn2;
    for (int c = 0; c < b->nact; c++) {
        int i = b->act[c];
        const int *T = b->tris + 3 * (size_t)b->ctri[i];
        t[c] = tw_body_point_normal(T, b->cw + 3 * (size_t)i, w->cnormal + 3 * (size_t)i, y);
    }
    for (int r = 0;; r++) {
        for (int c = 0; c < b->nact; c++) {
            const tw_real *nn = w->cnormal + 3 * (size_t)b->act[c];
            for (int a = 0; a < 3; a++) v[3 * (size_t)b->act[c] + a] += (tw_real)(t[c] * nn[a]);
        }
        if (r + 1 >= b->depth) break;
        for (int c = 0; c < b->nact; c++) {
            int i = b->act[c];
            const int *T = b->tris + 3 * (size_t)b->ctri[i];
            const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
            double s = 0;
            for (int j = 0; j < 3; j++) {
                int q = b->cidx[T[j]];
                if (q < 0) continue;
                s += tw_body_chain_term(cw[j], nn, w->cnormal + 3 * (size_t)T[j], t[q]);
            }
            tn[c] = s;
        }
        double *sw = t; t = tn; tn = sw;
    }
}

/* r = S P^T r = S sum_{r < depth} (N^T)^r r, couple's transpose: each held
 * vertex's normal residual onto its triangle's vertices by their weights,
 * and on along the chains, then filtered */
static void couple_t(tw_bodies *b, const tw_world *w, tw_real *r)
{
    double *s = b->rn, *sn = b->rn2;
    for (int c = 0; c < b->nact; c++) { /* all read before any is added */
        int i = b->act[c];
        s[c] = tw_body_normal_of(r + 3 * (size_t)i, w->cnormal + 3 * (size_t)i);
    }
    for (int q = 0;; q++) {
        for (int c = 0; c < b->nact; c++) {
            int i = b->act[c];
            const int *T = b->tris + 3 * (size_t)b->ctri[i];
            const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
            for (int j = 0; j < 3; j++)
                for (int a = 0; a < 3; a++) r[3 * (size_t)T[j] + a] += tw_body_spread(cw[j], s[c], nn[a]);
        }
        if (q + 1 >= b->depth) break;
        for (int c = 0; c < b->nact; c++) sn[c] = 0;
        for (int c = 0; c < b->nact; c++) {
            int i = b->act[c];
            const int *T = b->tris + 3 * (size_t)b->ctri[i];
            const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
            for (int j = 0; j < 3; j++) {
                int k = b->cidx[T[j]];
                if (k < 0) continue;
                sn[k] += tw_body_chain_term(cw[j], nn, w->cnormal + 3 * (size_t)T[j], s[c]);
            }
        }
        double *sw = s; s = sn; sn = sw;
    }
    filter(w, r);
}

/* Av = A v plus the relative friction's part that A lacks: the damping
 * cf D^T T D v (D v = v_p - sum_k w_k v_k, T = I - n n^T) less the vertex's
 * own block cf T, which contact.c put in A. */
static void apply(tw_bodies *b, const tw_world *w, const tw_bsr *A, const tw_real *v, tw_real *Av)
{
    tw_bsr_spmv(A, v, Av);
    for (int c = 0; c < b->nact; c++) {
        int i = b->act[c];
        double cf = w->cfric[i];
        if (!(cf > 0)) continue;
        const int *T = b->tris + 3 * (size_t)b->ctri[i];
        const tw_real *cw = b->cw + 3 * (size_t)i;
        double tu[3], td[3];
        tw_body_friction_terms(cf, T, cw, w->cnormal + 3 * (size_t)i, v, i, tu, td);
        for (int a = 0; a < 3; a++) {
            Av[3 * (size_t)i + a] -= (tw_real)tu[a];
            for (int j = 0; j < 3; j++) Av[3 * (size_t)T[j] + a] -= (tw_real)(cw[j] * td[a]);
        }
    }
    for (int c = 0; c < b->npen; c++) { /* the springs: pk D^T n n^T D v */
        int i = b->pen[c];
        const int *T = b->tris + 3 * (size_t)b->ptri[i];
        const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
        double u = tw_body_spring_rate(T, cw, nn, v, i) * b->pk[c];
        for (int a = 0; a < 3; a++) {
            Av[3 * (size_t)i + a] += (tw_real)(u * nn[a]);
            for (int j = 0; j < 3; j++) Av[3 * (size_t)T[j] + a] -= (tw_real)(cw[j] * u * nn[a]);
        }
    }
}

static double dot(size_t n3, const tw_real *a, const tw_real *c)
{
    double s = 0;
    for (size_t k = 0; k < n3; k++) s += (double)a[k] * c[k];
    return s;
}

tw_solve_result tw_bodies_solve(tw_world *w, const tw_real *rhs, tw_real *v, double heff)
{
    tw_bodies *b = w->bodies;
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    tw_bsr A = tw_world_bsr(w);
    tw_solver_work *wk = &w->work;
    tw_real *y = wk->rhat, *r = wk->r, *z = wk->z, *p = wk->p, *q = wk->q, *Pp = wk->s, *APp = wk->t;
    tw_real *s0 = b->s0, *dinv = wk->dinv;
    tw_filter flt = {w->fcons, w->cnormal};
    /* the prescribed parts s0 = v - S v, a held vertex's normal -d/heff;
     * the free parts y = S v (the warm start) */
    memcpy(y, v, sizeof(tw_real) * n3);
    filter(w, y);
    for (size_t k = 0; k < n3; k++) s0[k] = v[k] - y[k];
    for (int c = 0; c < b->nact; c++) {
        int i = b->act[c];
        const tw_real *nn = w->cnormal + 3 * (size_t)i;
        for (int a = 0; a < 3; a++) s0[3 * (size_t)i + a] = (tw_real)(-b->cd[i] / heff * nn[a]);
    }
    /* the preconditioner: P^T A P's diagonal blocks, inverted */
    for (int i = 0; i < n; i++) memcpy(dinv + 9 * (size_t)i, A.val + 9 * (size_t)A.diag[i], sizeof(tw_real) * 9);
    for (int c = 0; c < b->nact; c++) {
        int i = b->act[c];
        const int *T = b->tris + 3 * (size_t)b->ctri[i];
        const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
        double an = tw_body_normal_diag(nn, dinv + 9 * (size_t)i), cf = w->cfric[i] > 0 ? w->cfric[i] : 0;
        for (int j = 0; j < 3; j++) tw_body_corner_block(cw[j], an, cf, nn, dinv + 9 * (size_t)T[j]);
    }
    /* the springs: stiffness TW_BODY_SPRING times the vertex's own normal
     * diagonal, into the preconditioner; their force at the start of the
     * step, -(pk/heff) d D^T n, into the right-hand side */
    const tw_real *rb = rhs;
    if (b->npen) {
        tw_real *re = b->rnew;
        memcpy(re, rhs, sizeof(tw_real) * n3);
        for (int c = 0; c < b->npen; c++) {
            int i = b->pen[c];
            const int *T = b->tris + 3 * (size_t)b->ptri[i];
            const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
            double k = TW_BODY_SPRING * tw_body_normal_diag(nn, A.val + 9 * (size_t)A.diag[i]);
            double f = tw_body_spring_force(k, heff, b->cd[i], TW_BODY_SLACK * b->size);
            b->pk[c] = k;
            for (int r0 = 0; r0 < 3; r0++) {
                re[3 * (size_t)i + r0] += (tw_real)(f * nn[r0]);
                for (int j = 0; j < 3; j++) re[3 * (size_t)T[j] + r0] -= (tw_real)(cw[j] * f * nn[r0]);
            }
            tw_body_spring_block(1, k, nn, dinv + 9 * (size_t)i);
            for (int j = 0; j < 3; j++) tw_body_spring_block(cw[j], k, nn, dinv + 9 * (size_t)T[j]);
        }
        rb = re;
    }
    for (int i = 0; i < n; i++) tw_block_jacobi_inverse(dinv + 9 * (size_t)i, dinv + 9 * (size_t)i);
    /* r = S P^T (b - A (P y + s)), |S P^T b| */
    for (size_t k = 0; k < n3; k++) z[k] = y[k] + s0[k];
    couple(b, w, z, Pp, n3);
    apply(b, w, &A, Pp, APp);
    for (size_t k = 0; k < n3; k++) r[k] = rb[k] - APp[k];
    couple_t(b, w, r);
    memcpy(z, rb, sizeof(tw_real) * n3);
    couple_t(b, w, z);
    double bnorm = sqrt(dot(n3, z, z));
    if (bnorm < 1e-300) bnorm = 1;
    tw_block_precondition(n, dinv, r, z, &flt, tw_world_threads(w));
    memcpy(p, z, sizeof(tw_real) * n3);
    double rz = dot(n3, r, z), rnorm = sqrt(dot(n3, r, r)), tol = w->def.cg_tolerance;
    int fixed = w->def.cg_fixed_iterations, limit = fixed > 0 ? fixed : w->def.cg_max_iterations, it = 0;
    tw_solve_result res = {0, 0, 0};
    while (it < limit) {
        if (fixed <= 0 && rnorm <= tol * bnorm) break;
        if (!(rz > 0)) break;
        couple(b, w, p, Pp, n3);
        apply(b, w, &A, Pp, APp);
        memcpy(q, APp, sizeof(tw_real) * n3);
        couple_t(b, w, q);
        double pq = dot(n3, p, q);
        if (!(pq > 0)) { res.negative_curvature = 1; break; }
        double alpha = rz / pq;
        for (size_t k = 0; k < n3; k++) {
            y[k] += (tw_real)alpha * p[k];
            r[k] -= (tw_real)alpha * q[k];
        }
        tw_block_precondition(n, dinv, r, z, &flt, tw_world_threads(w));
        double rz_new = dot(n3, r, z), beta = rz_new / rz;
        rz = rz_new;
        for (size_t k = 0; k < n3; k++) p[k] = z[k] + (tw_real)beta * p[k];
        rnorm = sqrt(dot(n3, r, r));
        it++;
    }
    /* v = P (y + s0) */
    for (size_t k = 0; k < n3; k++) z[k] = y[k] + s0[k];
    couple(b, w, z, v, n3);
    res.iterations = it;
    res.residual = rnorm / bnorm;
    return res;
}

int tw_bodies_project(tw_world *w, tw_real *x, tw_real *v)
{
    tw_bodies *b = w->bodies;
    if (!b) return 0;
    double t0 = tw_now_ms();
    surfaces_at(b, x);
    tw_bodies_view view = view_of(b, x, b->bvh_views);
    double tol = TW_BODY_SLACK * w->size, deep = 1e-4 * w->size;
    size_t n3 = 3 * (size_t)w->fem.n;
    tw_real *dx = b->rnew; /* the moves, all read from x before any is made */
    memset(dx, 0, sizeof(tw_real) * n3);
    int count = 0;
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k];
        double wt[3], d, nn[3];
        if (w->cons[i]) continue;
        int t = tw_body_nearest(&view, i, 0.01 * w->size, 1, 0, wt, &d, nn);
        /* the side that does not hold lands TW_BODY_SLACK deep */
        if (t < 0 || !(d < -(b->under[i] ? TW_BODY_UNDER * w->size : holds(b, i, t) ? tol : 2 * tol))) continue;
        count += d < -deep;
        const int *T = b->tris + 3 * (size_t)t;
        double vn = 0;
        for (int a = 0; a < 3; a++) {
            dx[3 * (size_t)i + a] = (tw_real)(-d * nn[a]);
            double vq = wt[0] * v[3 * (size_t)T[0] + a] + wt[1] * v[3 * (size_t)T[1] + a] + wt[2] * v[3 * (size_t)T[2] + a];
            vn += (v[3 * (size_t)i + a] - vq) * nn[a];
        }
        if (vn < 0) /* its approach to the other body's surface stops */
            for (int a = 0; a < 3; a++) v[3 * (size_t)i + a] -= (tw_real)(vn * nn[a]);
    }
    for (size_t k = 0; k < n3; k++) x[k] += dx[k];
    double dt = tw_now_ms() - t0;
    b->ms_last += dt;
    b->ms_total += dt;
    return count;
}

tw_status tw_world_set_body_friction(tw_world *w, double friction)
{
    if (!(friction >= 0) || !isfinite(friction))
        return tw_fail(TW_ERR_INVALID, "body friction %g must be finite and >= 0", friction);
    if (w->bodies) w->bodies->mu = friction;
    return TW_OK;
}

tw_body_stats tw_world_body_stats(const tw_world *w)
{
    tw_body_stats s;
    memset(&s, 0, sizeof s);
    s.bodies = 1;
    const tw_bodies *b = w->bodies;
    if (!b) return s;
    s.bodies = b->nbodies;
    s.surface_vertices = b->nsurf;
    s.contacts = b->contacts;
    s.ms_last = b->ms_last;
    s.ms_total = b->ms_total;
    s.rebuilds = b->rebuilds;
    return s;
}

double tw_world_body_penetration(tw_world *w, int *vertex)
{
    if (vertex) *vertex = -1;
    tw_bodies *b = w->bodies;
    if (!b) return 0;
    const tw_real *x = tw_world_positions(w);
    if (!x) return 0;
    surfaces_at(b, x);
    tw_bodies_view view = view_of(b, x, b->bvh_views);
    double worst = 0;
    int at = -1;
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k];
        double wt[3], d, nn[3];
        if (tw_body_nearest(&view, i, 0.05 * w->size, 1, 0, wt, &d, nn) >= 0 && -d > worst) {
            worst = -d;
            at = i;
        }
    }
    if (vertex) *vertex = at;
    return worst;
}
