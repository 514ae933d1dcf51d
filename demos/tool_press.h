/* The tool scene, shared by the tests (tests/test_tool.c), the force-rate
 * benchmark (bench/tool_rate.c) and the command line: a soft block, fixed at
 * its base or free, and a moving sphere or capsule (a kinematic collider)
 * pressed into the middle of its top face. */
#ifndef TW_DEMO_TOOL_PRESS_H
#define TW_DEMO_TOOL_PRESS_H

#include "tetwarp.h"

/* The block: DEMO_TOOL_BLOCK_EDGE square, half as high, its base on z = 0,
 * cells x cells x ceil(cells / 2) cells of 6 tets (cells 8: 1536 tets;
 * cells 15: 10800). NULL on failure (tw_last_error). */
#define DEMO_TOOL_BLOCK_EDGE 0.2
tw_mesh *demo_tool_block_mesh(int cells);
/* A world for m from d, its base (z = 0) pinned when fixed_base. NULL on
 * failure. */
tw_world *demo_tool_block_world(const tw_mesh *m, const tw_world_def *d, int fixed_base);
/* A sphere of the given radius over the middle of the block's top face,
 * its lowest point `depth` m below the top (0: touching), at rest. */
tw_collider_def demo_tool_sphere(double radius, double depth, double friction);

#endif
