/* The OpenGL 3.3 core side of the viewer: the shaded-surface program, one
 * vertex buffer per rendered surface (positions, normals, colours, updated
 * each frame with glBufferSubData from host memory, or positions and
 * normals written by CUDA into the shared buffers: cuda_gl.h), and an offscreen
 * framebuffer for headless capture. Needs a current context (GLFW) with
 * libepoxy resolving the entry points. */
#ifndef TW_GL_VIEW_H
#define TW_GL_VIEW_H

typedef struct gl_surface {
    unsigned vao, vbo_pos, vbo_nrm, vbo_col, ebo;
    int vertex_count, index_count;
} gl_surface;

typedef struct gl_view {
    unsigned program;
    int loc_mvp, loc_offset, loc_eye, loc_wire;
    unsigned fbo, fbo_color, fbo_depth;
    int fbo_w, fbo_h;
    float background[3];
} gl_view;

/* Compiles the shaders. Returns 0, or -1 with a message in err. */
int gl_view_init(gl_view *v, char *err, int err_size);
void gl_view_destroy(gl_view *v);

/* A surface of vertex_count vertices and triangle_count triangles (3 indices
 * each, copied to the GPU once). */
int gl_surface_create(gl_surface *s, int vertex_count, const int *triangles, int triangle_count);
/* Host path: positions, normals and colours (3 floats per vertex each) with
 * glBufferSubData; a NULL array leaves its buffer as it is (the CUDA-GL
 * path writes positions and normals on the device, cuda_gl.h). */
void gl_surface_update(gl_surface *s, const float *pos, const float *nrm, const float *col);
void gl_surface_destroy(gl_surface *s);

/* Clears the bound framebuffer to the background, sets the viewport. */
void gl_view_begin(gl_view *v, int width, int height, const float mvp[16], const double eye[3],
                   int wireframe);
void gl_view_draw(gl_view *v, const gl_surface *s, const float offset[3]);

/* Offscreen target of width x height (for headless frames); 0 or -1. */
int gl_view_offscreen(gl_view *v, int width, int height, char *err, int err_size);
/* Reads the bound framebuffer into rgb (w*h*3, rows top to bottom). */
void gl_view_read(int width, int height, unsigned char *rgb);

#endif
