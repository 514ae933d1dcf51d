/* What the world measures of its state: volume, kinetic, elastic and
 * gravitational energy, and the elastic force for a caller. */
#include <math.h>

#include "hd/hd.h"
#include "world.h"

double tw_world_volume(const tw_world *w)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) return NAN;
    const tw_fem *f = &w->fem;
    double vol = 0;
#pragma omp parallel for if (TW_PAR(f->nt)) num_threads(tw_world_threads(w)) reduction(+ : vol) schedule(static)
    for (int e = 0; e < f->nt; e++) {
        const int *t = f->tets + 4 * (size_t)e;
        double a[3], b[3], c[3];
        for (int k = 0; k < 3; k++) {
            double o = w->x[3 * t[0] + k];
            a[k] = w->x[3 * t[1] + k] - o;
            b[k] = w->x[3 * t[2] + k] - o;
            c[k] = w->x[3 * t[3] + k] - o;
        }
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
    }
    return vol;
}

double tw_world_kinetic_energy(const tw_world *w)
{
    if (tw_world_fetch(w, 0, 1) != TW_OK) return NAN;
    double k = 0;
    for (int i = 0; i < w->fem.n; i++)
        for (int c = 0; c < 3; c++) k += 0.5 * w->fem.mass[i] * (double)w->v[3 * i + c] * w->v[3 * i + c];
    return k;
}

double tw_world_elastic_energy(const tw_world *w)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) return NAN;
    return tw_compute_elastic_energy((tw_world *)w, w->x);
}

double tw_world_gravity_energy(const tw_world *w)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) return NAN;
    double e = 0;
    for (int i = 0; i < w->fem.n; i++)
        for (int c = 0; c < 3; c++)
            e -= w->fem.mass[i] * w->def.gravity[c] * ((double)w->x[3 * i + c] - w->fem.X[3 * i + c]);
    return e;
}

void tw_world_elastic_force(tw_world *w, tw_real *f)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) { /* no silent answer from a stale state */
        for (size_t i = 0; i < 3 * (size_t)w->fem.n; i++) f[i] = (tw_real)NAN;
        return;
    }
    tw_compute_rotations(w, w->x);
    tw_compute_elastic_force(w, w->x, f, 0);
}
