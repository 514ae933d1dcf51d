/* The viewer's tool (viewer_tool.h). */
#include "viewer_tool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TOOL_MAX_SPEED 1.0 /* m/s: a mouse jump is followed, not teleported through the body */
#define TOOL_LAT 10
#define TOOL_LON 20
#define PI 3.14159265358979323846

void viewer_tool_init(viewer_tool *t)
{
    memset(t, 0, sizeof *t);
    t->body = t->index = -1;
}

/* the unit sphere's vertices, (TOOL_LAT + 1) x (TOOL_LON + 1), poles repeated */
static void unit_vertex(int i, int j, double u[3])
{
    double th = PI * i / TOOL_LAT, ph = 2 * PI * j / TOOL_LON;
    u[0] = sin(th) * cos(ph);
    u[1] = sin(th) * sin(ph);
    u[2] = cos(th);
}

static int make_surface(viewer_tool *t)
{
    if (t->have_surf) return 0;
    static int tris[6 * TOOL_LAT * TOOL_LON];
    int n = 0, w = TOOL_LON + 1;
    for (int i = 0; i < TOOL_LAT; i++)
        for (int j = 0; j < TOOL_LON; j++) {
            int a = i * w + j, b = a + 1, c = a + w, d = c + 1;
            int q[6] = {a, c, b, b, c, d};
            for (int k = 0; k < 6; k++) tris[n++] = q[k];
        }
    if (gl_surface_create(&t->surf, (TOOL_LAT + 1) * w, tris, n / 3)) return -1;
    t->have_surf = 1;
    return 0;
}

int viewer_tool_grab(viewer_tool *t, demo_body *b, int body, const double hit[3], const double forward[3])
{
    if (t->body != body || t->index >= tw_world_collider_count(b->world) || t->index < 0) {
        /* a new tool: a sphere of 1/12 of the body's size, friction 0.5 */
        tw_mesh_stats ms = tw_mesh_compute_stats(b->mesh);
        double diag = 0;
        for (int k = 0; k < 3; k++) diag += (ms.bbox_max[k] - ms.bbox_min[k]) * (ms.bbox_max[k] - ms.bbox_min[k]);
        tw_collider_def c = tw_default_collider_def();
        c.kind = TW_COLLIDER_SPHERE;
        c.radius = sqrt(diag) / 12;
        c.friction = 0.5;
        for (int k = 0; k < 3; k++) c.center[k] = c.end[k] = hit[k] - 1.05 * c.radius * forward[k];
        if (tw_world_add_collider(b->world, &c) != TW_OK) {
            fprintf(stderr, "tetwarp-view: tool: %s\n", tw_last_error());
            return -1;
        }
        t->body = body;
        t->index = tw_world_collider_count(b->world) - 1;
        t->radius = c.radius;
        memcpy(t->pos, c.center, sizeof t->pos);
        printf("tool: a sphere of radius %.3g m in %s (left-drag moves it, the wheel pushes it; t removes it)\n",
               c.radius, b->name);
    }
    memcpy(t->target, t->pos, sizeof t->pos);
    memcpy(t->plane_point, t->pos, sizeof t->pos);
    memcpy(t->plane_normal, forward, sizeof t->plane_normal);
    t->dragging = 1;
    return make_surface(t);
}

void viewer_tool_aim(viewer_tool *t, const double o[3], const double d[3], const float offset[3])
{
    const double *n = t->plane_normal;
    double dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2], s = 0;
    if (fabs(dn) < 1e-9) return;
    for (int k = 0; k < 3; k++) s += (t->plane_point[k] + offset[k] - o[k]) * n[k];
    s /= dn;
    for (int k = 0; k < 3; k++) t->target[k] = o[k] + s * d[k] - offset[k];
}

void viewer_tool_push(viewer_tool *t, double amount)
{
    for (int k = 0; k < 3; k++) {
        t->plane_point[k] += amount * t->plane_normal[k];
        t->target[k] += amount * t->plane_normal[k];
    }
}

void viewer_tool_drive(viewer_tool *t, demo_body *b)
{
    if (t->index < 0 || t->index >= tw_world_collider_count(b->world)) return;
    double step = TOOL_MAX_SPEED * tw_world_dt(b->world), d2 = 0, p[3];
    for (int k = 0; k < 3; k++) d2 += (t->target[k] - t->pos[k]) * (t->target[k] - t->pos[k]);
    double f = d2 > step * step ? step / sqrt(d2) : 1;
    for (int k = 0; k < 3; k++) p[k] = t->pos[k] + f * (t->target[k] - t->pos[k]);
    if (tw_world_move_collider(b->world, t->index, p, NULL) == TW_OK) memcpy(t->pos, p, sizeof p);
}

void viewer_tool_remove(viewer_tool *t, demo_body *b)
{
    if (t->body < 0) return;
    tw_world_clear_colliders(b->world);
    for (int i = 0; i < b->collider_count; i++) tw_world_add_collider(b->world, &b->colliders[i]);
    t->body = t->index = -1;
    t->dragging = 0;
}

void viewer_tool_draw(viewer_tool *t, gl_view *gl, const float offset[3])
{
    if (t->body < 0 || !t->have_surf) return;
    enum { NV = (TOOL_LAT + 1) * (TOOL_LON + 1) };
    static float pos[3 * NV], nrm[3 * NV], col[3 * NV];
    for (int i = 0; i <= TOOL_LAT; i++)
        for (int j = 0; j <= TOOL_LON; j++) {
            int v = i * (TOOL_LON + 1) + j;
            double u[3];
            unit_vertex(i, j, u);
            for (int k = 0; k < 3; k++) {
                pos[3 * v + k] = (float)(t->pos[k] + t->radius * u[k]);
                nrm[3 * v + k] = (float)u[k];
                col[3 * v + k] = 0.75f;
            }
        }
    gl_surface_update(&t->surf, pos, nrm, col);
    gl_view_draw(gl, &t->surf, offset);
}

void viewer_tool_destroy(viewer_tool *t)
{
    if (t->have_surf) gl_surface_destroy(&t->surf);
    t->have_surf = 0;
}
