#define _POSIX_C_SOURCE 200809L
#include "cli_args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

cli_args cli_args_make(int argc, char **argv, const char *prog)
{
    cli_args a;
    memset(&a, 0, sizeof a);
    a.argc = argc;
    a.argv = argv;
    a.prog = prog;
    return a;
}

int cli_next(cli_args *a)
{
    if (a->next >= a->argc) return 0;
    a->arg = a->argv[a->next++];
    a->inline_value = NULL;
    a->value = NULL;
    size_t n = strlen(a->arg);
    const char *eq = (a->arg[0] == '-' && a->arg[1] == '-') ? strchr(a->arg, '=') : NULL;
    if (eq) {
        n = (size_t)(eq - a->arg);
        a->inline_value = eq + 1;
    }
    if (n >= sizeof a->opt) n = sizeof a->opt - 1;
    memcpy(a->opt, a->arg, n);
    a->opt[n] = 0;
    return 1;
}

int cli_is_option(const cli_args *a)
{
    double x;
    return a->arg[0] == '-' && a->arg[1] != 0 && cli_parse_double(a->arg, &x) == -1;
}

int cli_is(const cli_args *a, const char *name) { return strcmp(a->opt, name) == 0; }

int cli_is_help(const cli_args *a) { return cli_is(a, "-h") || cli_is(a, "--help"); }

static void cli_vprint(const cli_args *a, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", a->prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_error(const cli_args *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vprint(a, fmt, ap);
    va_end(ap);
    return -1;
}

int cli_unknown(const cli_args *a)
{
    if (cli_is_option(a))
        return cli_error(a, "unknown option '%s' (see `%s --help`)", a->opt, a->prog);
    return cli_error(a, "unexpected argument '%s' (see `%s --help`)", a->arg, a->prog);
}

const char *cli_value(cli_args *a, const char *what)
{
    if (a->inline_value) {
        a->value = a->inline_value;
        return a->value;
    }
    /* "--E --nu 0.3": the next option is not --E's value; "-1" is a value. */
    if (a->next >= a->argc || strncmp(a->argv[a->next], "--", 2) == 0) {
        cli_error(a, "option %s needs a value (%s)", a->opt, what);
        return NULL;
    }
    a->value = a->argv[a->next++];
    return a->value;
}

int cli_flag(const cli_args *a)
{
    return a->inline_value ? cli_error(a, "%s takes no value", a->opt) : 0;
}

int cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != 0) return -1;
    if (!isfinite(x) || errno == ERANGE) return -2;
    *out = x;
    return 0;
}

int cli_parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end != 0) return -1;
    if (errno == ERANGE || x < INT_MIN || x > INT_MAX) return -2;
    *out = (int)x;
    return 0;
}

static int cli_number_error(cli_args *a, const char *text, int code, const char *kind,
                            const char *what)
{
    if (code == -2)
        return cli_error(a, "%s '%s': out of range or not finite (expected %s)", a->opt, text,
                         what);
    return cli_error(a, "%s '%s': not %s (expected %s)", a->opt, text, kind, what);
}

int cli_double(cli_args *a, const char *what, double *out)
{
    const char *s = cli_value(a, what);
    if (!s) return -1;
    int r = cli_parse_double(s, out);
    return r ? cli_number_error(a, s, r, "a number", what) : 0;
}

int cli_int(cli_args *a, const char *what, int *out)
{
    const char *s = cli_value(a, what);
    if (!s) return -1;
    int r = cli_parse_int(s, out);
    return r ? cli_number_error(a, s, r, "an integer", what) : 0;
}

int cli_doubles(cli_args *a, const char *what, int n, double *out)
{
    const char *s = cli_value(a, what);
    if (!s) return -1;
    const char *p = s;
    for (int k = 0; k < n; k++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (len >= sizeof item) len = sizeof item - 1;
        memcpy(item, p, len);
        item[len] = 0;
        int r = cli_parse_double(item, &out[k]);
        if (r)
            return cli_error(a, "%s '%s': item %d '%s' is %s (expected %s)", a->opt, s, k + 1,
                             item, r == -2 ? "out of range or not finite" : "not a number", what);
        if (k + 1 < n && !comma)
            return cli_error(a, "%s '%s': %d comma-separated values expected, got %d (%s)", a->opt,
                             s, n, k + 1, what);
        if (k + 1 == n && comma)
            return cli_error(a, "%s '%s': %d comma-separated values expected, got more (%s)",
                             a->opt, s, n, what);
        p = comma ? comma + 1 : p + len;
    }
    return 0;
}

int cli_choice(cli_args *a, const char *what, const char *const *names, int count, int *out)
{
    const char *s = cli_value(a, what);
    if (!s) return -1;
    for (int k = 0; k < count; k++)
        if (strcmp(s, names[k]) == 0) {
            *out = k;
            return 0;
        }
    char list[256] = "";
    for (int k = 0; k < count; k++) {
        strncat(list, names[k], sizeof list - strlen(list) - 1);
        if (k + 1 < count) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return cli_error(a, "%s '%s': unknown %s (choose %s)", a->opt, s, what, list);
}

int cli_require(cli_args *a, int cond, const char *must)
{
    if (cond) return 0;
    return cli_error(a, "%s %s: must be %s", a->opt, a->value ? a->value : "", must);
}

double cli_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}
