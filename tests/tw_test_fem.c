#include "tw_test_fem.h"

#include <stdio.h>
#include <string.h>

int tw_test_fem_same(const tw_fem *a, const tw_fem *b, int masses_too)
{
    if (a->n != b->n || a->nt != b->nt || a->nnzb != b->nnzb) {
        fprintf(stderr, "sizes differ: n %d/%d nt %d/%d nnzb %d/%d\n", a->n, b->n, a->nt, b->nt, a->nnzb, b->nnzb);
        return 0;
    }
    size_t n = (size_t)a->n, nt = (size_t)a->nt, nb = (size_t)a->nnzb;
    struct { const char *name; const void *x, *y; size_t bytes; } arr[] = {
        {"row_ptr", a->row_ptr, b->row_ptr, sizeof(int) * (n + 1)},
        {"col", a->col, b->col, sizeof(int) * nb},
        {"diag", a->diag, b->diag, sizeof(int) * n},
        {"contrib_ptr", a->contrib_ptr, b->contrib_ptr, sizeof(int) * (nb + 1)},
        {"contrib", a->contrib, b->contrib, sizeof(int) * 16 * nt},
        {"vt_ptr", a->vt_ptr, b->vt_ptr, sizeof(int) * (n + 1)},
        {"vt", a->vt, b->vt, sizeof(int) * 4 * nt},
        {"K", a->K, b->K, sizeof(tw_real) * 9 * nb},
        {"mass", a->mass, b->mass, sizeof(tw_real) * n}, /* these last two only with masses_too */
        {"g", a->g, b->g, sizeof(tw_real) * 12 * nt},
    };
    size_t count = sizeof arr / sizeof arr[0] - (masses_too ? 0 : 2);
    for (size_t k = 0; k < count; k++)
        if (memcmp(arr[k].x, arr[k].y, arr[k].bytes) != 0) {
            fprintf(stderr, "%s differs\n", arr[k].name);
            return 0;
        }
    return 1;
}
