/* Per-element material fields: constant, a linear gradient along an axis,
 * and values per region marker. A linear function averages over a tet to its
 * value at the centroid, so the gradient is exact per element. */
#include <stddef.h>

#include "error.h"
#include "mesh.h"

void tw_fill_constant(const tw_mesh *m, double value, double *out)
{
    if (!m || !out) return;
    for (int e = 0; e < m->nt; e++) out[e] = value;
}

void tw_fill_linear_gradient(const tw_mesh *m, int axis, double value0, double value1,
                             double *out)
{
    if (!m || !out) return;
    if (axis < 0 || axis > 2) {
        tw_fail(TW_ERR_INVALID, "tw_fill_linear_gradient: axis %d is not 0, 1 or 2", axis);
        return;
    }
    double lo = m->X[axis], hi = m->X[axis];
    for (int v = 1; v < m->nv; v++) {
        double x = m->X[3 * (size_t)v + axis];
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    double span = hi - lo;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->tets + 4 * (size_t)e;
        double c = 0.25 * (m->X[3 * (size_t)t[0] + axis] + m->X[3 * (size_t)t[1] + axis] +
                           m->X[3 * (size_t)t[2] + axis] + m->X[3 * (size_t)t[3] + axis]);
        double s = span > 0 ? (c - lo) / span : 0.0;
        out[e] = value0 + s * (value1 - value0);
    }
}

void tw_fill_by_region(const tw_mesh *m, int count, const int *regions, const double *values,
                       double *out)
{
    if (!m || !out || count <= 0 || !regions || !values) return;
    for (int e = 0; e < m->nt; e++)
        for (int k = 0; k < count; k++)
            if (m->region[e] == regions[k]) {
                out[e] = values[k];
                break;
            }
}
