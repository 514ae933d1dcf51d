/* The orbit camera and the 4x4 matrices the viewer needs (column-major, as
 * OpenGL takes them). The camera circles `target` at `distance`; yaw turns
 * about the scene's up axis (x, y or z, pointing either way), pitch raises
 * the eye. */
#ifndef TW_CAMERA_H
#define TW_CAMERA_H

typedef struct camera {
    double target[3];  /* m */
    double distance;   /* m */
    double yaw, pitch; /* radians */
    int up;            /* the up axis: 0 x, 1 y, 2 z */
    int up_sign;       /* -1: up is the negative axis (gravity along +axis); else the positive */
    double fov_y;      /* radians */
} camera;

/* eye position and the orthonormal frame (forward, right, up) */
void camera_frame(const camera *c, double eye[3], double fwd[3], double right[3], double up[3]);
/* projection * view, column-major floats */
void camera_matrix(const camera *c, double aspect, float out[16]);
/* A ray from the eye through the window point (x, y in pixels, y down). */
void camera_ray(const camera *c, double x, double y, int width, int height, double origin[3],
                double dir[3]);

#endif
