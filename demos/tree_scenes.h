/* What scenes.c asks of a tetra tree body (tree_scenes.c) and of a
 * multiresolution body (mr_scene.c); the scenes
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
/* The multiresolution body's frame: the tool from the world's sphere
 * collider (the viewer's) when it has one, then tw_multires_frame and the
 * positions into the world (mr_scene.c). */
tw_status demo_mr_step(demo_scene *s, demo_body *b, int *cg_iterations);
void demo_mr_render_colors(const demo_body *b, float *col);
#endif
