/* The viewer's tool (key t): a sphere collider in one body's world that the
 * left drag moves in the plane facing the camera and the wheel pushes along
 * the view, driven each step toward the mouse (at most TOOL_MAX_SPEED) by
 * tw_world_move_collider; drawn as a sphere, its force
 * (tw_world_collider_force) in the window title. */
#ifndef TW_VIEWER_TOOL_H
#define TW_VIEWER_TOOL_H

#include "gl_view.h"
#include "scenes.h"

typedef struct viewer_tool {
    int body;              /* the body whose world holds it, -1: none */
    int index;             /* its collider index there */
    int dragging;          /* the left button holds it */
    double radius;         /* m */
    double pos[3];         /* its centre, body coordinates (render offset removed), m */
    double target[3];      /* where the mouse puts it, m */
    double plane_point[3], plane_normal[3]; /* the drag plane, body coordinates */
    gl_surface surf;
    int have_surf;
} viewer_tool;

void viewer_tool_init(viewer_tool *t);
/* Puts the tool into body b (index `body`) touching the picked point hit
 * (body coordinates) from the camera side (forward: the view direction),
 * or takes it again when it is there; starts a drag. 0, or -1 with a
 * message printed. */
int viewer_tool_grab(viewer_tool *t, demo_body *b, int body, const double hit[3], const double forward[3]);
/* The mouse ray (o, d, world coordinates) onto the drag plane: the target. */
void viewer_tool_aim(viewer_tool *t, const double o[3], const double d[3], const float offset[3]);
/* The wheel: the drag plane and the target move along the view by amount m. */
void viewer_tool_push(viewer_tool *t, double amount);
/* Before a step of body b: the tool moves toward its target. */
void viewer_tool_drive(viewer_tool *t, demo_body *b);
/* Takes the tool out of b's world (b's own colliders stay). */
void viewer_tool_remove(viewer_tool *t, demo_body *b);
/* Draws it (a sphere) when there is one. */
void viewer_tool_draw(viewer_tool *t, gl_view *gl, const float offset[3]);
void viewer_tool_destroy(viewer_tool *t);

#endif
