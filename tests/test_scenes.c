/* The papers' scenes through their API (scenes.h), without OpenGL: the bone
 * core held at an angle (demo_scene_set_core_angle, what the viewer's core
 * drag and --core-angle call) turns the core rigidly, and the soft skin
 * follows behind it. */
#include "scenes.h"
#include "tw_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEG (3.14159265358979323846 / 180)

static int build(demo_scene *s, const char *name)
{
    demo_options o = demo_default_options();
    o.data_dir = TW_DATA_DIR;
    return demo_scene_build(s, name, &o, "test_scenes");
}

static int steps(demo_scene *s, int n)
{
    for (int k = 0; k < n; k++) {
        demo_body *b = &s->body[0];
        demo_scene_drive(s, tw_world_time(b->world) + tw_world_dt(b->world));
        int cg;
        if (demo_scene_step(s, &cg) != TW_OK) return -1;
    }
    return 0;
}

/* Angle (rad) of point x about the up axis through c, from where X was. */
static double turned(const demo_scene *s, const double c[3], const double X[3], const tw_real *x)
{
    int a = (s->up + 1) % 3, b = (s->up + 2) % 3;
    double r0 = atan2(X[b] - c[b], X[a] - c[a]), r1 = atan2(x[b] - c[b], x[a] - c[a]);
    double d = r1 - r0;
    while (d > 3.14159265358979323846) d -= 2 * 3.14159265358979323846;
    while (d < -3.14159265358979323846) d += 2 * 3.14159265358979323846;
    return d;
}

/* Mean angle the skin (boundary vertices outside the core, at least 2 cm
 * from the axis) has turned, weighted by the distance from the axis. */
static double skin_angle(const demo_scene *s)
{
    const demo_body *b = &s->body[0];
    const double *X = tw_mesh_positions(b->mesh);
    const tw_real *x = tw_world_positions(b->world);
    int a = (s->up + 1) % 3, c = (s->up + 2) % 3;
    unsigned char *on = calloc((size_t)tw_mesh_vertex_count(b->mesh), 1);
    if (!on) return NAN;
    for (int f = 0; f < 3 * b->face_count; f++) on[b->faces[f]] = 1;
    double sum = 0, weight = 0;
    for (int i = 0; i < tw_mesh_vertex_count(b->mesh); i++) {
        if (!on[i] || b->core[i]) continue;
        double r = hypot(X[3 * i + a] - b->core_center[a], X[3 * i + c] - b->core_center[c]);
        if (r < 0.02) continue;
        sum += r * turned(s, b->core_center, X + 3 * i, x + 3 * i);
        weight += r;
    }
    free(on);
    return weight > 0 ? sum / weight : NAN;
}

/* dane, core held at 30 degrees: after 0.5 s every core vertex is where the
 * rigid turn about the vertical puts it. */
TW_TEST(dane_core_angle_turns_core)
{
    demo_scene s;
    CHECK(build(&s, "dane") == 0);
    CHECK(demo_scene_set_core_angle(&s, 0, 30 * DEG) == 0);
    demo_scene_drive(&s, 0);
    CHECK(steps(&s, 30) == 0);
    demo_body *b = &s.body[0];
    const double *X = tw_mesh_positions(b->mesh);
    const tw_real *x = tw_world_positions(b->world);
    double worst = 0;
    int a = (s.up + 1) % 3, c = (s.up + 2) % 3, n = 0;
    for (int i = 0; i < tw_mesh_vertex_count(b->mesh); i++) {
        if (!b->core[i]) continue;
        double ca = cos(30 * DEG), sa = sin(30 * DEG);
        double dx = X[3 * i + a] - b->core_center[a], dy = X[3 * i + c] - b->core_center[c];
        double ex = b->core_center[a] + ca * dx - sa * dy - x[3 * i + a];
        double ey = b->core_center[c] + sa * dx + ca * dy - x[3 * i + c];
        double eu = X[3 * i + s.up] - x[3 * i + s.up];
        double e = sqrt(ex * ex + ey * ey + eu * eu);
        worst = tw_test_max(worst, e);
        n++;
    }
    printf("%d core vertices, worst distance from the turned rest position %.3g m\n", n, worst);
    demo_scene_destroy(&s);
    CHECK(n > 0 && worst < 1e-4);
    return 0;
}

/* The same turn seen from the skin: halfway through the core's ramp to 30
 * degrees (at DEMO_CORE_MAX_SPEED) the skin has turned, but less than the
 * core (it follows by its elasticity, a step behind); 0.1 s later it has
 * come up to the core or swung past it (printed, not checked). */
static int skin_lags(const char *scene)
{
    demo_scene s;
    CHECK(build(&s, scene) == 0);
    CHECK(demo_scene_set_core_angle(&s, 0, 30 * DEG) == 0);
    demo_scene_drive(&s, 0);
    double dt = tw_world_dt(s.body[0].world);
    int n = (int)ceil(15 * DEG / (DEMO_CORE_MAX_SPEED * dt));
    CHECK(steps(&s, n) == 0);
    double skin = skin_angle(&s), core = s.body[0].core_driven;
    int more = (int)ceil(0.1 / dt);
    CHECK(steps(&s, more) == 0);
    printf("%s after %d steps of %.4g s: core %.2f deg, skin %.2f deg; %d steps later: core %.2f, skin %.2f deg\n",
           scene, n, dt, core / DEG, skin / DEG, more, s.body[0].core_driven / DEG, skin_angle(&s) / DEG);
    demo_scene_destroy(&s);
    CHECK(skin > 0.2 * core && skin < core - 0.25 * DEG);
    return 0;
}

TW_TEST(dane_skin_lags_core) { return skin_lags("dane"); }
TW_TEST(bunny_skin_lags_core) { return skin_lags("bunny"); }

/* No core, no angle: bars has none. */
TW_TEST(core_angle_needs_a_core)
{
    demo_scene s;
    CHECK(build(&s, "bars") == 0);
    int r = demo_scene_set_core_angle(&s, 0, 0.5);
    int body = demo_scene_core_body(&s);
    demo_scene_destroy(&s);
    CHECK(r == -1 && body == -1);
    return 0;
}
