/* Line-oriented text reading shared by the mesh and surface readers.
 *
 * A reader holds a whole file in one buffer and walks it line by line,
 * cutting each line in place (NUL at its end) and parsing its fields with
 * strtoll/strtod, which can never run past the line. Records are one per
 * line in every format read here, so a short line is reported where it is
 * ("bar.node:7: expected 4 numbers (index x y z), found end of line") rather
 * than misreading the next one. Messages quote file content through
 * tw_reader_quote, so a binary file never writes raw bytes to a terminal. */
#ifndef TW_TEXT_READER_H
#define TW_TEXT_READER_H
#include <stddef.h>

#include "tetwarp.h"

/* The whole file, NUL-terminated (malloc'd, caller frees); NULL with
 * tw_last_error() naming the path on failure. A regular file is read at its
 * size; anything else (a pipe, a FIFO, a device) until its end or
 * TW_READ_STREAM_MAX bytes, past which it is refused: /dev/zero or a
 * forgotten `mkfifo` would otherwise grow the buffer until memory runs out. */
#define TW_READ_STREAM_MAX ((size_t)1 << 30)
char *tw_read_file(const char *path, size_t *size);
/* tw_read_file with another limit for what is not a regular file. */
char *tw_read_file_max(const char *path, size_t *size, size_t stream_max);

typedef struct tw_reader {
    const char *path;
    char *buf, *p, *end;
    size_t size;
    int line; /* number of the line last returned */
    int hash; /* 1: '#' starts a comment */
} tw_reader;

/* Reads the file at path (hash: 1 when '#' starts a comment). TW_OK, or an
 * error with tw_last_error() naming the path. */
tw_status tw_reader_open(tw_reader *r, const char *path, int hash);
void tw_reader_close(tw_reader *r);

/* The next line with content, NUL-terminated, leading blanks skipped;
 * NULL at end of file. */
char *tw_reader_line(tw_reader *r);

/* "'token'", "end of line" or "end of file" for messages: the token at `at`
 * (NULL: end of file), non-printable bytes as '?', cut with "..." to fit. */
const char *tw_reader_quote(const char *at, char *buf, size_t size);

/* Parse error at the current line: "path:line: expected X, found Y". */
void tw_reader_expected(const tw_reader *r, const char *at, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Parses the fields of line s by fmt: 'i' integer, 'd' real; upper case
 * ('I', 'D') optional (0 when the line ends). Integers go to iv, reals to dv
 * in order. Extra fields are ignored. On failure sets the message
 * (expected `what`) and returns 0. */
int tw_reader_fields(const tw_reader *r, char *s, const char *fmt, long long *iv, double *dv,
                     const char *what);

/* The header line, parsed by fmt into h (see tw_reader_fields); 0 with the
 * message when the file is empty or the line does not parse. */
int tw_reader_header(tw_reader *r, const char *fmt, long long *h, const char *what);

/* 1 when nothing but blank lines and comments follow the count records. */
int tw_reader_no_more(tw_reader *r, int count, const char *records);

/* A record count from a header: non-negative and not more than the file can
 * hold (every record takes at least 2 bytes), so a corrupt count never
 * allocates gigabytes. */
int tw_reader_count(const tw_reader *r, long long n, const char *what);

/* A vertex index read from a file, minus the file's base, as an int. Far out
 * of range values are caught here; the rest by tw_mesh_adopt_source. */
int tw_reader_index(const tw_reader *r, long long v, long long base, int nv, int *out);

/* One token as a number: 1 read (*pp moves past it); 0 end of line; -1 the
 * token is not a number, or not a finite one (*pp is left at the token). */
int tw_token_ll(char **pp, long long *out);
int tw_token_double(char **pp, double *out);

/* First whitespace-delimited word of s, NUL-cut in place; *rest after it. */
char *tw_word(char *s, char **rest);

/* ASCII case-insensitive equality, and suffix test. */
int tw_ieq(const char *a, const char *b);
int tw_ends_with(const char *s, const char *suffix);

static inline int tw_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
static inline char *tw_skip_blank(char *p)
{
    while (tw_is_blank(*p)) p++;
    return p;
}
#endif
