/* The tool scene (tool_press.h). */
#include "tool_press.h"

tw_mesh *demo_tool_block_mesh(int cells)
{
    double e = DEMO_TOOL_BLOCK_EDGE;
    return tw_mesh_bar(e, e, 0.5 * e, cells, cells, (cells + 1) / 2);
}

tw_world *demo_tool_block_world(const tw_mesh *m, const tw_world_def *d, int fixed_base)
{
    tw_world *w = tw_world_create(m, d);
    if (w && fixed_base) tw_world_pin_where(w, 2, 1, 1e-9);
    return w;
}

tw_collider_def demo_tool_sphere(double radius, double depth, double friction)
{
    tw_collider_def c = tw_default_collider_def();
    c.kind = TW_COLLIDER_SPHERE;
    c.radius = radius;
    c.friction = friction;
    c.center[0] = c.center[1] = 0.5 * DEMO_TOOL_BLOCK_EDGE;
    c.center[2] = 0.5 * DEMO_TOOL_BLOCK_EDGE + radius - depth;
    for (int a = 0; a < 3; a++) c.end[a] = c.center[a];
    return c;
}
