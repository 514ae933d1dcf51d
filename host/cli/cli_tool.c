/* The scripted tool (cli_tool.h). */
#include "cli_tool.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

cli_tool cli_default_tool(void)
{
    cli_tool t;
    memset(&t, 0, sizeof t);
    t.kind = TW_COLLIDER_SPHERE;
    t.friction = 0.5;
    t.index = -1;
    return t;
}

void cli_tool_help(FILE *f)
{
    fprintf(f,
            "  --tool sphere:R         a moving tool: a sphere of radius R m, or\n"
            "  --tool capsule:R:HX,HY,HZ  a capsule of radius R whose segment runs from p - H to p + H;\n"
            "                          the CSV gains tool_x,tool_y,tool_z (m) and tool_fx,tool_fy,\n"
            "                          tool_fz: the force the body exerts on it, N\n"
            "  --tool-at X,Y,Z         its position without a path, m\n"
            "  --tool-path X0,Y0,Z0:X1,Y1,Z1:T  from p0 to p1 in T s (then held at p1), or\n"
            "  --tool-path FILE        keyframes, a line each: t x y z (s, m; t increasing; '#' comments),\n"
            "                          piecewise linear, held before the first and after the last\n"
            "  --tool-osc AX,AY,AZ:F   adds A sin(2 pi F t) to the path (m, Hz)\n"
            "  --tool-friction MU      Coulomb friction on the tool, >= 0 (default 0.5)\n"
            "  --tool-model            the CSV also gains tool_kxx,...,tool_kzz: the stiffness of the force\n"
            "                          (dF/dp, N/m, row-major) for a haptic loop between steps\n"
            "                          (tw_world_collider_model; implicit integrators, CPU backend)\n");
}

/* "a,b,c" into v[3]; -1 on junk. */
static int parse3(const char *s, size_t len, double v[3])
{
    char buf[128];
    if (len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *p = buf;
    for (int k = 0; k < 3; k++) {
        char *comma = strchr(p, ',');
        if ((k < 2) != (comma != NULL)) return -1;
        if (comma) *comma = 0;
        if (cli_parse_double(p, &v[k])) return -1;
        p = comma ? comma + 1 : p;
    }
    return 0;
}

static int read_keys(cli_tool *t, cli_args *a, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return cli_error(a, "--tool-path %s: cannot open: %s", path, strerror(errno));
    char line[512];
    int ln = 0, cap = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *h = strchr(line, '#');
        if (h) *h = 0;
        double k[4];
        char extra;
        int got = sscanf(line, "%lf %lf %lf %lf %c", &k[0], &k[1], &k[2], &k[3], &extra);
        if (got <= 0) {
            char *p = line;
            while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
            if (!*p) continue; /* blank */
        }
        int finite = isfinite(k[0]) && isfinite(k[1]) && isfinite(k[2]) && isfinite(k[3]);
        if (got != 4 || !finite || (t->nkeys && !(k[0] > t->keys[4 * (t->nkeys - 1)]))) {
            fclose(f);
            return cli_error(a, "--tool-path %s:%d: expected 't x y z' (4 finite numbers, t increasing)", path, ln);
        }
        if (t->nkeys == cap) {
            cap = cap ? 2 * cap : 16;
            double *nk = realloc(t->keys, sizeof(double) * 4 * (size_t)cap);
            if (!nk) {
                fclose(f);
                return cli_error(a, "--tool-path %s: out of memory", path);
            }
            t->keys = nk;
        }
        memcpy(t->keys + 4 * t->nkeys++, k, sizeof k);
    }
    fclose(f);
    if (!t->nkeys) return cli_error(a, "--tool-path %s: no keyframe ('t x y z' lines)", path);
    return 0;
}

int cli_tool_option(cli_tool *t, cli_args *a)
{
    if (cli_is(a, "--tool")) {
        const char *v = cli_value(a, "sphere:R or capsule:R:HX,HY,HZ");
        if (!v) return -1;
        t->on = 1;
        const char *c1 = strchr(v, ':');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        int sphere = c1 && (size_t)(c1 - v) == 6 && strncmp(v, "sphere", 6) == 0 && !c2;
        int capsule = c1 && (size_t)(c1 - v) == 7 && strncmp(v, "capsule", 7) == 0 && c2;
        char rbuf[64];
        size_t rlen = c1 ? (c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1)) : 0;
        int bad = !(sphere || capsule) || rlen >= sizeof rbuf;
        if (!bad) {
            memcpy(rbuf, c1 + 1, rlen);
            rbuf[rlen] = 0;
            bad = cli_parse_double(rbuf, &t->radius) || !(t->radius > 0);
        }
        if (!bad && capsule) bad = parse3(c2 + 1, strlen(c2 + 1), t->axis);
        if (bad) {
            cli_require(a, 0, "sphere:R or capsule:R:HX,HY,HZ (radius R > 0 m, half axis H m)");
            return -1;
        }
        t->kind = capsule ? TW_COLLIDER_CAPSULE : TW_COLLIDER_SPHERE;
        return 1;
    }
    if (cli_is(a, "--tool-at")) {
        t->has_at = 1;
        return cli_doubles(a, "X,Y,Z: the tool's position, m", 3, t->at) ? -1 : 1;
    }
    if (cli_is(a, "--tool-model")) {
        t->model = 1;
        return 1;
    }
    if (cli_is(a, "--tool-friction")) {
        if (cli_double(a, "Coulomb friction", &t->friction)) return -1;
        return cli_require(a, t->friction >= 0, ">= 0") ? -1 : 1;
    }
    if (cli_is(a, "--tool-osc")) {
        const char *v = cli_value(a, "AX,AY,AZ:F");
        if (!v) return -1;
        const char *c = strchr(v, ':');
        if (!c || parse3(v, (size_t)(c - v), t->osc_amp) || cli_parse_double(c + 1, &t->osc_freq) || !(t->osc_freq >= 0))
        {
            cli_require(a, 0, "AX,AY,AZ:F (amplitude m, frequency Hz >= 0)");
            return -1;
        }
        return 1;
    }
    if (cli_is(a, "--tool-path")) {
        const char *v = cli_value(a, "X0,Y0,Z0:X1,Y1,Z1:T or a keyframe file");
        if (!v) return -1;
        free(t->keys);
        t->keys = NULL;
        t->nkeys = 0;
        const char *c1 = strchr(v, ':');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c1) return read_keys(t, a, v) ? -1 : 1;
        double p0[3], p1[3], T;
        if (!c2 || parse3(v, (size_t)(c1 - v), p0) || parse3(c1 + 1, (size_t)(c2 - c1 - 1), p1) ||
            cli_parse_double(c2 + 1, &T) || !(T > 0))
        {
            cli_require(a, 0, "X0,Y0,Z0:X1,Y1,Z1:T (m, m, seconds > 0) or a keyframe file");
            return -1;
        }
        t->keys = malloc(sizeof(double) * 8);
        if (!t->keys) return cli_error(a, "--tool-path: out of memory");
        double k[8] = {0, p0[0], p0[1], p0[2], T, p1[0], p1[1], p1[2]};
        memcpy(t->keys, k, sizeof k);
        t->nkeys = 2;
        return 1;
    }
    return 0;
}

int cli_tool_check(const cli_tool *t, const char *prog)
{
    int any = t->has_at || t->nkeys || t->osc_freq > 0 || t->model;
    if (!t->on && any) {
        fprintf(stderr, "%s: --tool-at, --tool-path, --tool-osc and --tool-model need --tool sphere:R or capsule:R:HX,HY,HZ\n",
                prog);
        return -1;
    }
    if (t->on && !t->has_at && !t->nkeys) {
        fprintf(stderr, "%s: --tool needs a position: --tool-at X,Y,Z or --tool-path\n", prog);
        return -1;
    }
    return 0;
}

void cli_tool_position(const cli_tool *t, double s, double p[3])
{
    if (t->nkeys) {
        const double *k = t->keys;
        int j = 0;
        while (j + 1 < t->nkeys && k[4 * (j + 1)] <= s) j++;
        const double *a = k + 4 * j, *b = j + 1 < t->nkeys ? a + 4 : a;
        double u = b != a && s > a[0] ? fmin((s - a[0]) / (b[0] - a[0]), 1.0) : 0;
        for (int c = 0; c < 3; c++) p[c] = a[1 + c] + u * (b[1 + c] - a[1 + c]);
    } else {
        for (int c = 0; c < 3; c++) p[c] = t->at[c];
    }
    double w = sin(2 * PI * t->osc_freq * s);
    for (int c = 0; c < 3; c++) p[c] += t->osc_amp[c] * w;
}

tw_status cli_tool_add(cli_tool *t, tw_world *w)
{
    tw_collider_def c = tw_default_collider_def();
    c.kind = t->kind;
    c.radius = t->radius;
    c.friction = t->friction;
    double p[3];
    cli_tool_position(t, 0, p);
    for (int k = 0; k < 3; k++) {
        c.center[k] = p[k] - t->axis[k];
        c.end[k] = p[k] + t->axis[k];
    }
    t->index = tw_world_collider_count(w);
    return tw_world_add_collider(w, &c);
}

tw_status cli_tool_drive(const cli_tool *t, tw_world *w, double s)
{
    double p[3], a[3], b[3];
    cli_tool_position(t, s, p);
    for (int k = 0; k < 3; k++) {
        a[k] = p[k] - t->axis[k];
        b[k] = p[k] + t->axis[k];
    }
    return tw_world_move_collider(w, t->index, a, b);
}

void cli_tool_free(cli_tool *t)
{
    free(t->keys);
    t->keys = NULL;
    t->nkeys = 0;
}
