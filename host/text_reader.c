/* The shared line reader of the mesh and surface readers (text_reader.h). */
#define _POSIX_C_SOURCE 200809L /* fstat, fileno */
#include "text_reader.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"

char *tw_read_file(const char *path, size_t *size)
{
    return tw_read_file_max(path, size, TW_READ_STREAM_MAX);
}

char *tw_read_file_max(const char *path, size_t *size, size_t stream_max)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tw_fail(TW_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    /* fopen opens a directory, whose size ftell gives as LONG_MAX */
    struct stat st;
    const int have_stat = fstat(fileno(f), &st) == 0;
    if (have_stat && S_ISDIR(st.st_mode)) {
        fclose(f);
        tw_fail(TW_ERR_IO, "%s: is a directory, not a file", path);
        return NULL;
    }
    const int stream = !have_stat || !S_ISREG(st.st_mode);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    if (buf && fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        if (len > 0 && (size_t)len + 1 > cap) {
            char *nb = realloc(buf, (size_t)len + 2);
            if (!nb) {
                free(buf);
                fclose(f);
                tw_fail(TW_ERR_NOMEM, "%s: out of memory reading %ld bytes", path, len);
                return NULL;
            }
            buf = nb;
            cap = (size_t)len + 1; /* one spare byte: the read that finds EOF */
        }
    }
    rewind(f);
    while (buf) {
        if (stream && n > stream_max) {
            free(buf);
            fclose(f);
            tw_fail(TW_ERR_IO,
                    "%s: not a regular file (a pipe or a device) and still sending data after %zu "
                    "bytes; give a regular file",
                    path, stream_max);
            return NULL;
        }
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t want = cap - n;
        if (stream && want > stream_max + 1 - n)
            want = stream_max + 1 - n; /* one byte past the limit tells "more" from "exactly" */
        size_t got = fread(buf + n, 1, want, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        tw_fail(TW_ERR_NOMEM, "%s: out of memory reading the file", path);
        return NULL;
    }
    if (bad) {
        free(buf);
        tw_fail(TW_ERR_IO, "%s: read error: %s", path, strerror(errno));
        return NULL;
    }
    buf[n] = 0;
    *size = n;
    return buf;
}

tw_status tw_reader_open(tw_reader *r, const char *path, int hash)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->hash = hash;
    size_t n = 0;
    char *buf = tw_read_file(path, &n);
    if (!buf) return TW_ERR_IO; /* the message is set; callers only test != TW_OK */
    r->buf = r->p = buf;
    r->end = buf + n;
    r->size = n;
    return TW_OK;
}

void tw_reader_close(tw_reader *r)
{
    free(r->buf);
    r->buf = r->p = r->end = NULL;
}

/* The next line with content, NUL-terminated, leading blanks skipped;
 * NULL at end of file. */
char *tw_reader_line(tw_reader *r)
{
    while (r->p < r->end) {
        char *s = r->p;
        char *nl = memchr(s, '\n', (size_t)(r->end - s));
        char *e = nl ? nl : r->end;
        r->p = nl ? nl + 1 : r->end;
        r->line++;
        *e = 0;
        if (r->hash) {
            char *h = memchr(s, '#', (size_t)(e - s));
            if (h) *h = 0;
        }
        s = tw_skip_blank(s);
        if (*s) return s;
    }
    return NULL;
}

/* "'token'", "end of line" or "end of file" for messages. */
const char *tw_reader_quote(const char *at, char *buf, size_t size)
{
    if (!at) return "end of file";
    at = tw_skip_blank((char *)at);
    if (!*at || *at == '\n') return "end of line";
    size_t n = 0, i = 0;
    buf[n++] = '\'';
    while (at[i] && at[i] != '\n' && !tw_is_blank(at[i]) && n < size - 6) {
        unsigned char c = (unsigned char)at[i++];
        buf[n++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (at[i] && at[i] != '\n' && !tw_is_blank(at[i])) {
        buf[n++] = '.';
        buf[n++] = '.';
        buf[n++] = '.';
    }
    buf[n++] = '\'';
    buf[n] = 0;
    return buf;
}

void tw_reader_expected(const tw_reader *r, const char *at, const char *fmt, ...)
{
    char what[256], tok[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tw_fail(TW_ERR_PARSE, "%s:%d: expected %s, found %s", r->path, r->line, what,
            tw_reader_quote(at, tok, sizeof tok));
}

/* 1: a number was read; 0: end of line; -1: the token is not a number
 * (*pp is left at the token). */
int tw_token_ll(char **pp, long long *out)
{
    char *p = tw_skip_blank(*pp), *e;
    *pp = p;
    if (!*p) return 0;
    errno = 0;
    long long v = strtoll(p, &e, 10);
    if (e == p || (*e && !tw_is_blank(*e)) || errno == ERANGE) return -1;
    *out = v;
    *pp = e;
    return 1;
}

int tw_token_double(char **pp, double *out)
{
    char *p = tw_skip_blank(*pp), *e;
    *pp = p;
    if (!*p) return 0;
    double v = strtod(p, &e);
    if (e == p || (*e && !tw_is_blank(*e)) || !isfinite(v)) return -1;
    *out = v;
    *pp = e;
    return 1;
}

/* Parses the fields of line s by fmt: 'i' integer, 'd' real; upper case
 * ('I', 'D') optional (0 when the line ends). Integers go to iv, reals to dv
 * in order. Extra fields are ignored. On failure sets the message
 * (expected `what`) and returns 0. */
int tw_reader_fields(const tw_reader *r, char *s, const char *fmt, long long *iv, double *dv,
                  const char *what)
{
    char *p = s;
    for (const char *f = fmt; *f; f++) {
        int optional = (*f == 'I' || *f == 'D');
        int got;
        if (*f == 'i' || *f == 'I') {
            long long v = 0;
            got = tw_token_ll(&p, &v);
            if (got == 0 && optional) v = 0;
            *iv++ = v;
        } else {
            double v = 0;
            got = tw_token_double(&p, &v);
            if (got == 0 && optional) v = 0;
            *dv++ = v;
        }
        if (got < 0 || (got == 0 && !optional)) {
            tw_reader_expected(r, p, "%s", what);
            return 0;
        }
    }
    return 1;
}

/* The header line, parsed by fmt into h (see fields); 0 with the message
 * when the file is empty or the line does not parse. */
int tw_reader_header(tw_reader *r, const char *fmt, long long *h, const char *what)
{
    char *s = tw_reader_line(r);
    if (!s) {
        r->line = r->line ? r->line : 1;
        tw_reader_expected(r, NULL, "%s", what);
        return 0;
    }
    return tw_reader_fields(r, s, fmt, h, NULL, what);
}

/* 1 when nothing but blank lines and comments follow the count records. */
int tw_reader_no_more(tw_reader *r, int count, const char *records)
{
    char *s = tw_reader_line(r);
    if (!s) return 1;
    tw_reader_expected(r, s, "no more %s after the %d the header announces", records, count);
    return 0;
}

/* A record count from a header: non-negative and not more than the file can
 * hold (every record takes at least 2 bytes), so a corrupt count never
 * allocates gigabytes. */
int tw_reader_count(const tw_reader *r, long long n, const char *what)
{
    if (n < 0 || n > INT_MAX / 4 || (size_t)n > r->size / 2 + 1) {
        tw_fail(TW_ERR_PARSE,
                "%s:%d: expected a count of %s that fits the file (%zu bytes), found %lld", r->path,
                r->line, what, r->size, n);
        return 0;
    }
    return 1;
}

/* A vertex index read from a file, minus the file's base, as an int. Far out
 * of range values are caught here; the rest by tw_mesh_adopt_source. */
int tw_reader_index(const tw_reader *r, long long v, long long base, int nv, int *out)
{
    /* v is checked before the subtraction, which overflows near LLONG_MIN
     * (base is 0 or 1, so v - base then fits an int) */
    if (v < -1000000000LL || v > 2000000000LL) {
        tw_fail(TW_ERR_PARSE, "%s:%d: vertex index %lld is out of range (%lld..%lld)", r->path,
                r->line, v, base, (long long)nv - 1 + base);
        return 0;
    }
    *out = (int)(v - base);
    return 1;
}

int tw_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return *a == *b;
}

int tw_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && tw_ieq(s + n - k, suffix);
}

/* First whitespace-delimited word of s, NUL-cut in place; *rest after it. */
char *tw_word(char *s, char **rest)
{
    s = tw_skip_blank(s);
    char *e = s;
    while (*e && !tw_is_blank(*e)) e++;
    if (*e) *e++ = 0;
    *rest = e;
    return s;
}
