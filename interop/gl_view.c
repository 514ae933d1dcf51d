#include "gl_view.h"

#include <epoxy/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two-sided Lambert with a key light from the eye's upper left, a weak fill
 * from below and a small Blinn highlight; the wireframe is the same
 * program with darker lines. */
static const char *const vertex_src =
    "#version 330 core\n"
    "layout(location = 0) in vec3 pos;\n"
    "layout(location = 1) in vec3 nrm;\n"
    "layout(location = 2) in vec3 col;\n"
    "uniform mat4 mvp;\n"
    "uniform vec3 offset;\n"
    "out vec3 v_pos; out vec3 v_nrm; out vec3 v_col;\n"
    "void main() {\n"
    "  vec3 p = pos + offset;\n"
    "  v_pos = p; v_nrm = nrm; v_col = col;\n"
    "  gl_Position = mvp * vec4(p, 1.0);\n"
    "}\n";

static const char *const fragment_src =
    "#version 330 core\n"
    "in vec3 v_pos; in vec3 v_nrm; in vec3 v_col;\n"
    "uniform vec3 eye;\n"
    "uniform int wire;\n"
    "out vec4 frag;\n"
    "void main() {\n"
    "  vec3 n = normalize(v_nrm + vec3(1e-12));\n"
    "  vec3 e = normalize(eye - v_pos);\n"
    "  if (dot(n, e) < 0.0) n = -n;\n"
    "  vec3 key = normalize(e + 0.6 * cross(e, vec3(0.3, 1.0, 0.2)) + vec3(0.0, 0.4, 0.4));\n"
    "  float d = max(dot(n, key), 0.0) * 0.75 + max(dot(n, e), 0.0) * 0.2;\n"
    "  float s = pow(max(dot(n, normalize(key + e)), 0.0), 48.0) * 0.15;\n"
    "  vec3 c = v_col * (0.18 + d) + vec3(s);\n"
    "  if (wire == 1) c = v_col * 0.35 + vec3(0.05);\n"
    "  frag = vec4(c, 1.0);\n"
    "}\n";

static unsigned compile(GLenum kind, const char *src, char *err, int err_size)
{
    GLuint s = glCreateShader(kind);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        snprintf(err, (size_t)err_size, "%s shader does not compile: %s",
                 kind == GL_VERTEX_SHADER ? "vertex" : "fragment", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

int gl_view_init(gl_view *v, char *err, int err_size)
{
    memset(v, 0, sizeof *v);
    v->background[0] = 0.12f;
    v->background[1] = 0.12f;
    v->background[2] = 0.14f;
    GLuint vs = compile(GL_VERTEX_SHADER, vertex_src, err, err_size);
    if (!vs) return -1;
    GLuint fs = compile(GL_FRAGMENT_SHADER, fragment_src, err, err_size);
    if (!fs) {
        glDeleteShader(vs);
        return -1;
    }
    v->program = glCreateProgram();
    glAttachShader(v->program, vs);
    glAttachShader(v->program, fs);
    glLinkProgram(v->program);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(v->program, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetProgramInfoLog(v->program, sizeof log, NULL, log);
        snprintf(err, (size_t)err_size, "shader program does not link: %s", log);
        return -1;
    }
    v->loc_mvp = glGetUniformLocation(v->program, "mvp");
    v->loc_offset = glGetUniformLocation(v->program, "offset");
    v->loc_eye = glGetUniformLocation(v->program, "eye");
    v->loc_wire = glGetUniformLocation(v->program, "wire");
    return 0;
}

void gl_view_destroy(gl_view *v)
{
    if (v->fbo) glDeleteFramebuffers(1, &v->fbo);
    if (v->fbo_color) glDeleteRenderbuffers(1, &v->fbo_color);
    if (v->fbo_depth) glDeleteRenderbuffers(1, &v->fbo_depth);
    if (v->program) glDeleteProgram(v->program);
    memset(v, 0, sizeof *v);
}

int gl_surface_create(gl_surface *s, int vertex_count, const int *triangles, int triangle_count)
{
    memset(s, 0, sizeof *s);
    s->vertex_count = vertex_count;
    s->index_count = 3 * triangle_count;
    size_t bytes = (size_t)vertex_count * 3 * sizeof(float);
    glGenVertexArrays(1, &s->vao);
    glBindVertexArray(s->vao);
    GLuint *vbos[3] = {&s->vbo_pos, &s->vbo_nrm, &s->vbo_col};
    for (int k = 0; k < 3; k++) {
        glGenBuffers(1, vbos[k]);
        glBindBuffer(GL_ARRAY_BUFFER, *vbos[k]);
        /* positions and normals change every frame: GL_DYNAMIC_DRAW */
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, NULL, GL_DYNAMIC_DRAW);
        glVertexAttribPointer((GLuint)k, 3, GL_FLOAT, GL_FALSE, 0, NULL);
        glEnableVertexAttribArray((GLuint)k);
    }
    glGenBuffers(1, &s->ebo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, s->ebo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)((size_t)s->index_count * sizeof(int)), triangles,
                 GL_STATIC_DRAW);
    glBindVertexArray(0);
    return glGetError() == GL_NO_ERROR ? 0 : -1;
}

void gl_surface_update(gl_surface *s, const float *pos, const float *nrm, const float *col)
{
    GLsizeiptr bytes = (GLsizeiptr)((size_t)s->vertex_count * 3 * sizeof(float));
    if (pos) {
        glBindBuffer(GL_ARRAY_BUFFER, s->vbo_pos);
        glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, pos);
    }
    if (nrm) {
        glBindBuffer(GL_ARRAY_BUFFER, s->vbo_nrm);
        glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, nrm);
    }
    if (col) {
        glBindBuffer(GL_ARRAY_BUFFER, s->vbo_col);
        glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, col);
    }
}

void gl_surface_destroy(gl_surface *s)
{
    if (s->vao) glDeleteVertexArrays(1, &s->vao);
    GLuint b[4] = {s->vbo_pos, s->vbo_nrm, s->vbo_col, s->ebo};
    glDeleteBuffers(4, b);
    memset(s, 0, sizeof *s);
}

void gl_view_begin(gl_view *v, int width, int height, const float mvp[16], const double eye[3],
                   int wireframe)
{
    glViewport(0, 0, width, height);
    glClearColor(v->background[0], v->background[1], v->background[2], 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glUseProgram(v->program);
    glUniformMatrix4fv(v->loc_mvp, 1, GL_FALSE, mvp);
    glUniform3f(v->loc_eye, (float)eye[0], (float)eye[1], (float)eye[2]);
    glUniform1i(v->loc_wire, wireframe);
    glPolygonMode(GL_FRONT_AND_BACK, wireframe ? GL_LINE : GL_FILL);
}

void gl_view_draw(gl_view *v, const gl_surface *s, const float offset[3])
{
    glUniform3f(v->loc_offset, offset[0], offset[1], offset[2]);
    glBindVertexArray(s->vao);
    glDrawElements(GL_TRIANGLES, s->index_count, GL_UNSIGNED_INT, NULL);
    glBindVertexArray(0);
}

int gl_view_offscreen(gl_view *v, int width, int height, char *err, int err_size)
{
    glGenFramebuffers(1, &v->fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, v->fbo);
    glGenRenderbuffers(1, &v->fbo_color);
    glBindRenderbuffer(GL_RENDERBUFFER, v->fbo_color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, v->fbo_color);
    glGenRenderbuffers(1, &v->fbo_depth);
    glBindRenderbuffer(GL_RENDERBUFFER, v->fbo_depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, width, height);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, v->fbo_depth);
    GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    if (st != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(err, (size_t)err_size, "offscreen framebuffer %dx%d incomplete (status 0x%x)", width,
                 height, st);
        return -1;
    }
    v->fbo_w = width;
    v->fbo_h = height;
    return 0;
}

void gl_view_read(int width, int height, unsigned char *rgb)
{
    unsigned char *rgba = malloc((size_t)width * (size_t)height * 4);
    if (!rgba) return;
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    for (int y = 0; y < height; y++) /* GL's rows run bottom to top */
        for (int x = 0; x < width; x++)
            for (int k = 0; k < 3; k++)
                rgb[3 * ((size_t)y * width + x) + k] = rgba[4 * ((size_t)(height - 1 - y) * width + x) + k];
    free(rgba);
}
