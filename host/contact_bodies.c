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
 * together and the other side's vertices stay free. Two sides holding each
 * other at once form a loop the passes below cannot settle (each side's
 * impulse pushed onto the other's held vertices is absorbed by their own
 * constraint and returned), which gained energy in a frictionless stack.
 *
 * In the step. The contact enters the implicit step exactly as a collider's
 * (contact.c's active set, solved inside the step): the constraint is on the
 * relative normal velocity, g = d + heff n.(v_p - v_q) >= 0, v_q the
 * velocity of the triangle's point, held fixed during one solve (the
 * triangle is a collider moving at constant velocity). With v_q fixed this is
 * contact.c's g = d' + heff n.v_p with the effective distance
 * d' = d - heff n.v_q in w->cdist, so contact.c's detection test, landing,
 * release and join, friction and impulses run unchanged. A vertex nearer to
 * a collider than to another body keeps the collider (one constraint per
 * vertex).
 *
 * The two bodies are coupled across the contact passes (block Jacobi): after
 * each solve, the impulse each active contact took (J n and its friction,
 * bounded by Coulomb) goes onto its triangle's vertices by their weights,
 * into the right-hand side, and n.v_q is taken from the solve's velocities;
 * both relaxed by one half, since the plain exchange swings between the
 * bodies (for two rigid masses m_a on m_b its error shrinks by
 * sqrt((1 + m_a/m_b)/4) a pass). The passes go on while that moves a
 * vertex more than TW_BODY_MOVE_TOL of the world's size, at most contact.c's
 * TW_CONTACT_PASSES solves; what is left starts the next step (its
 * reactions are the next step's first guess). A vertex held by its own body
 * contact takes no reaction (it would come back through its constraint).
 * Friction between bodies is contact.c's implicit damping, which damps the
 * vertex's own tangential velocity, not its velocity relative to the
 * triangle: exact for a body on a body at rest, an approximation for one
 * riding on a moving one. Edge-edge crossings (no vertex inside) are not
 * detected; with meshes of similar density they are shallow.
 *
 * After the step, as contact.c projects vertices out of the colliders, a
 * surface vertex found more than TW_BODY_SLACK of the size inside another
 * body is moved onto its surface and its approach to it stopped (the impacts
 * the passes did not settle; at rest nothing is that deep).
 *
 * Only the implicit integrators run body contact, on the CPU backend: a
 * world of several bodies is refused with explicit Newmark or CUDA
 * (world.c). */
#include "contact_bodies.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "error.h"
#include "hd/bodies.h"
#include "hd/contact.h"
#include "mesh.h"
#include "world.h"

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
    tw_real *vq;         /* n: the triangle point's normal velocity the contact holds, m/s */
    tw_real *react;      /* 3n: the impulses the contacts put on the triangles' vertices, in w->rhs, N s */
    tw_real *rnew;       /* 3n: scratch */
    int has_react;
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
    b->react = tw_calloc(3 * (size_t)n, sizeof(tw_real), "body contact reactions");
    b->rnew = tw_calloc(3 * (size_t)n, sizeof(tw_real), "body contact reactions");
    if (nf <= 0 || !faces || !b->vbody || !b->tris || !b->tri_ptr || !b->tri_nbr || !b->surf || !b->bvh ||
        !b->bvh_views || !b->fn ||
        !b->vn || !b->ctri || !b->cw || !b->mass || !b->owns || !b->cd || !b->vq || !b->react || !b->rnew) {
        if (nf == 0) tw_fail(TW_ERR_INVALID, "body contact: the mesh has no boundary faces");
        free(faces);
        tw_bodies_free(b);
        return NULL;
    }
    memcpy(b->vbody, m->body, sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) b->mass[b->vbody[i]] += mass[i];
    for (int i = 0; i < n; i++) b->ctri[i] = -1;
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
    free(b->cd); free(b->vq); free(b->react); free(b->rnew);
    free(b);
}

void tw_bodies_reset(tw_bodies *b)
{
    if (!b) return;
    for (int i = 0; i < b->n; i++) b->ctri[i] = -1;
    memset(b->react, 0, sizeof(tw_real) * 3 * (size_t)b->n);
    b->has_react = 0;
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
    double r = fmax(3 * heff * sqrt(vmax2), 0.02 * w->size), touch = 1e-6 * w->size;
    tw_bvh_view *bv = b->bvh_views;
    tw_bodies_view view = view_of(b, x, bv);
    int added = 0, body_in = 0;
#pragma omp parallel for if (TW_PAR(b->nsurf)) num_threads(tw_world_threads(w)) schedule(dynamic, 64) \
    reduction(+ : added, body_in)
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k];
        b->ctri[i] = -1;
        if (w->cons[i]) continue;
        double wt[3], d, nn[3];
        int t = tw_body_nearest(&view, i, r, 0, TW_BODY_SLACK * w->size, wt, &d, nn);
        if (t < 0) {
            if (!w->ncolliders) w->cimpulse[i] = 0;
            continue;
        }
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
        int in = tw_contact_is_in(d, vp - vq, touch);
        w->fcons[i] = in ? TW_FILTER_NORMAL : w->cons[i];
        if (!in) w->cimpulse[i] = 0; /* as tw_contact_detect: no friction in its first pass */
        added += in - was;
        body_in += in;
    }
    b->contacts = body_in;
    if (b->has_react) { /* last step's reactions: this step's first guess */
        size_t n3 = 3 * (size_t)n;
        for (size_t k = 0; k < n3; k++) w->rhs[k] += b->react[k];
    }
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
    const tw_fem *f = &w->fem;
    size_t n3 = 3 * (size_t)f->n;
    memset(b->rnew, 0, sizeof(tw_real) * n3);
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k], t = b->ctri[i];
        if (t < 0 || w->fcons[i] != TW_FILTER_NORMAL) continue;
        /* the impulse on the vertex: J n and its friction -cf v_t, which
         * Coulomb bounds by mu J (cf was set for the next solve, v_t is this
         * one's) */
        const tw_real *nn = w->cnormal + 3 * (size_t)i, *v = w->vnew + 3 * (size_t)i;
        double vn = v[0] * nn[0] + v[1] * nn[1] + v[2] * nn[2], P[3], vt[3], lt = 0;
        for (int a = 0; a < 3; a++) {
            vt[a] = v[a] - vn * nn[a];
            lt += vt[a] * vt[a];
        }
        double ft = w->cfric[i] * sqrt(lt), fc = w->cmu[i] * w->cimpulse[i], sc = ft > fc ? fc / ft : 1;
        for (int a = 0; a < 3; a++) P[a] = w->cimpulse[i] * nn[a] - sc * w->cfric[i] * vt[a];
        const int *T = b->tris + 3 * (size_t)t;
        for (int j = 0; j < 3; j++) {
            if (b->ctri[T[j]] >= 0 && w->fcons[T[j]] == TW_FILTER_NORMAL) continue; /* held by its own contact */
            for (int a = 0; a < 3; a++) b->rnew[3 * (size_t)T[j] + a] -= (tw_real)(b->cw[3 * (size_t)i + j] * P[a]);
        }
    }
    /* relaxed by one half: the exchange between two bodies unrelaxed swings */
    double moved = 0;
    for (size_t k = 0; k < n3; k++) {
        tw_real r = (tw_real)(0.5 * (b->react[k] + b->rnew[k])), dr = r - b->react[k];
        if (dr == 0) continue;
        b->react[k] = r;
        w->rhs[k] += dr;
        double m = f->mass[k / 3];
        if (m > 0 && !w->cons[k / 3]) moved = fmax(moved, heff * fabs(dr) / m);
    }
    b->has_react = 1;
    for (int k = 0; k < b->nsurf; k++) {
        int i = b->surf[k], t = b->ctri[i];
        if (t < 0) continue;
        const int *T = b->tris + 3 * (size_t)t;
        const tw_real *nn = w->cnormal + 3 * (size_t)i, *cw = b->cw + 3 * (size_t)i;
        double vq = 0;
        for (int a = 0; a < 3; a++)
            vq += nn[a] * (cw[0] * w->vnew[3 * (size_t)T[0] + a] + cw[1] * w->vnew[3 * (size_t)T[1] + a] +
                           cw[2] * w->vnew[3 * (size_t)T[2] + a]);
        vq = 0.5 * (b->vq[i] + vq);
        if (w->fcons[i] == TW_FILTER_NORMAL) moved = fmax(moved, heff * fabs(vq - b->vq[i]));
        b->vq[i] = (tw_real)vq;
        w->cdist[i] = (tw_real)(b->cd[i] - heff * vq);
        if (w->fcons[i] == TW_FILTER_NORMAL) tw_contact_land(w->vnew + 3 * (size_t)i, nn, w->cdist[i], heff, 0);
    }
    double dt = tw_now_ms() - t0;
    b->ms_last += dt;
    b->ms_total += dt;
    return moved > TW_BODY_MOVE_TOL * w->size;
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
        if (t < 0 || !(d < -tol)) continue;
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
