/* What scenes.c asks of a tetra tree body (tree_scenes.c); the scenes
 * themselves are declared in scenes.h. */
#ifndef TW_DEMO_TREE_SCENES_H
#define TW_DEMO_TREE_SCENES_H
#include "scenes.h"

/* The front's positions into the body's world (which the viewer draws). */
void demo_tree_sync(demo_body *b);
/* The front back to rest at its start level (a new front on the same tree). */
tw_status demo_tree_reset(demo_body *b);
/* Colours per render vertex by b->color_mode (levels or stiffness). */
void demo_tree_render_colors(const demo_body *b, float *col);
#endif
