#include "camera.h"

#include <math.h>

static void cross(const double a[3], const double b[3], double o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(double v[3])
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n > 0)
        for (int k = 0; k < 3; k++) v[k] /= n;
}

void camera_frame(const camera *c, double eye[3], double fwd[3], double right[3], double up[3])
{
    double cp = cos(c->pitch), sp = sin(c->pitch), cy = cos(c->yaw), sy = sin(c->yaw);
    /* (a, b, up) is a cyclic order of the axes (x y z, z x y, y z x): yaw
     * turns the eye from a towards b; with up along the negative axis, b
     * flips too, so that a drag turns the view the same way as with up
     * positive */
    int u = c->up >= 0 && c->up <= 2 ? c->up : 2, a = (u + 1) % 3, b = (u + 2) % 3;
    double s = c->up_sign < 0 ? -1 : 1;
    double d[3], world_up[3] = {0, 0, 0};
    d[a] = cp * cy;
    d[b] = s * cp * sy;
    d[u] = s * sp;
    world_up[u] = s;
    for (int k = 0; k < 3; k++) {
        eye[k] = c->target[k] + c->distance * d[k];
        fwd[k] = -d[k];
    }
    cross(fwd, world_up, right);
    normalize(right);
    cross(right, fwd, up);
}

void camera_matrix(const camera *c, double aspect, float out[16])
{
    double eye[3], f[3], r[3], u[3];
    camera_frame(c, eye, f, r, u);
    double view[16] = {0}, proj[16] = {0};
    /* view: rows r, u, -f */
    for (int k = 0; k < 3; k++) {
        view[4 * k + 0] = r[k];
        view[4 * k + 1] = u[k];
        view[4 * k + 2] = -f[k];
    }
    view[12] = -(r[0] * eye[0] + r[1] * eye[1] + r[2] * eye[2]);
    view[13] = -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
    view[14] = (f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2]);
    view[15] = 1;
    double near = c->distance * 0.01, far = c->distance * 20;
    double t = 1.0 / tan(c->fov_y / 2);
    proj[0] = t / aspect;
    proj[5] = t;
    proj[10] = (far + near) / (near - far);
    proj[11] = -1;
    proj[14] = 2 * far * near / (near - far);
    for (int col = 0; col < 4; col++)
        for (int row = 0; row < 4; row++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += proj[4 * k + row] * view[4 * col + k];
            out[4 * col + row] = (float)s;
        }
}

void camera_ray(const camera *c, double x, double y, int width, int height, double origin[3],
                double dir[3])
{
    double eye[3], f[3], r[3], u[3];
    camera_frame(c, eye, f, r, u);
    double t = tan(c->fov_y / 2), aspect = (double)width / (height > 0 ? height : 1);
    double nx = (2 * x / width - 1) * t * aspect, ny = (1 - 2 * y / height) * t;
    for (int k = 0; k < 3; k++) {
        origin[k] = eye[k];
        dir[k] = f[k] + nx * r[k] + ny * u[k];
    }
    normalize(dir);
}
