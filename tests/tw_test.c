#include "tw_test.h"

#include <stdlib.h>
#include <string.h>

#define TW_MAX_TESTS 256
static struct { const char *name; tw_test_fn fn; } tw_tests[TW_MAX_TESTS];
static int tw_test_count;

void tw_test_register(const char *name, tw_test_fn fn)
{
    if (tw_test_count < TW_MAX_TESTS) {
        tw_tests[tw_test_count].name = name;
        tw_tests[tw_test_count].fn = fn;
        tw_test_count++;
    }
}

const char *tw_test_tmp_path(const char *file)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", TW_TEST_TMP, file);
    return buf[k];
}

double tw_test_position_error(const tw_world *ref, const tw_world *w, double size, double tol, const char *when)
{
    int n = tw_world_vertex_count(ref), shown = 0;
    const tw_real *a = tw_world_positions(ref), *b = tw_world_positions(w);
    double worst = 0;
    for (int i = 0; i < 3 * n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / size;
        if (!(e <= tol) && shown < 5) {
            printf("  %s: vertex %d component %d: reference %.9g, other %.9g\n", when, i / 3, i % 3, (double)a[i],
                   (double)b[i]);
            shown++;
        }
        worst = tw_test_max(worst, e);
    }
    printf("%s: max |x - x_reference| / size = %.3g (tolerance %.1g)\n", when, worst, tol);
    return worst;
}

int tw_test_gpu_skip(void)
{
    char why[256] = "";
    if (!tw_backend_usable(TW_BACKEND_CUDA, why, sizeof why)) {
        printf("%s: skipped\n", why);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TEST | --list\n", argv[0]);
        return 2;
    }
    for (int i = 0; i < tw_test_count; i++) {
        if (strcmp(argv[1], "--list") == 0) {
            printf("%s\n", tw_tests[i].name);
            continue;
        }
        if (strcmp(argv[1], tw_tests[i].name) == 0) {
            int r = tw_tests[i].fn();
            if (r == TW_SKIP) printf("SKIPPED %s\n", argv[1]);
            else printf("%s %s\n", r == 0 ? "PASSED" : "FAILED", argv[1]);
            return r;
        }
    }
    if (strcmp(argv[1], "--list") == 0) return 0;
    fprintf(stderr, "%s: no test named '%s'\n", argv[0], argv[1]);
    return 2;
}

tw_world_def tw_test_armadillo_def(tw_backend backend, tw_method method, tw_integrator integ)
{
    tw_world_def d = tw_default_world_def();
    d.backend = backend;
    d.method = method;
    d.integrator = integ;
    d.dt = 1.0 / 30;
    d.youngs_modulus = 1e5;
    d.gravity[0] = d.gravity[1] = d.gravity[2] = 0;
    d.gravity[1] = -9.81;
    d.threads = 1;
    return d;
}

tw_world *tw_test_armadillo_drop(tw_mesh **mesh, const tw_world_def *d, double mu, double *size)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *a = tw_mesh_load(tw_test_mesh_path("armadillo_4k.node"), &ld, NULL);
    *mesh = NULL;
    if (!a) return NULL;
    int n = tw_mesh_vertex_count(a);
    const double *X0 = tw_mesh_positions(a);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) { lo[c] = fmin(lo[c], X0[3 * i + c]); hi[c] = fmax(hi[c], X0[3 * i + c]); }
    double k = 0.3 / (hi[1] - lo[1]);
    double *P = malloc(sizeof(double) * 3 * (size_t)n);
    if (P) {
        for (int i = 0; i < 3 * n; i++) P[i] = X0[i] * k;
        *mesh = tw_mesh_create(P, n, tw_mesh_tets(a), tw_mesh_tet_count(a), NULL, NULL, NULL);
    }
    *size = 0;
    for (int c = 0; c < 3; c++) *size += (hi[c] - lo[c]) * k * (hi[c] - lo[c]) * k;
    *size = sqrt(*size);
    free(P);
    tw_mesh_destroy(a);
    if (!*mesh) return NULL;
    tw_world *w = tw_world_create(*mesh, d);
    tw_collider_def fl = tw_default_collider_def();
    fl.normal[0] = fl.normal[1] = fl.normal[2] = 0;
    fl.normal[1] = 1;
    fl.point[1] = lo[1] * k - 0.1;
    fl.friction = mu;
    if (w && tw_world_add_collider(w, &fl) != TW_OK) {
        tw_world_destroy(w);
        return NULL;
    }
    return w;
}
