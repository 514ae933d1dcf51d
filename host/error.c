#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char tw_error_text[1024];

const char *tw_last_error(void) { return tw_error_text; }

void tw_clear_error(void) { tw_error_text[0] = 0; }

tw_status tw_fail(tw_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tw_error_text, sizeof tw_error_text, fmt, ap);
    va_end(ap);
    return s;
}

void *tw_malloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) tw_fail(TW_ERR_NOMEM, "out of memory allocating %zu bytes for %s", bytes, what);
    return p;
}

void *tw_calloc(size_t count, size_t size, const char *what)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) tw_fail(TW_ERR_NOMEM, "out of memory allocating %zu x %zu bytes for %s", count, size, what);
    return p;
}

const char *tw_status_name(tw_status s)
{
    switch (s) {
    case TW_OK: return "ok";
    case TW_ERR_IO: return "io error";
    case TW_ERR_PARSE: return "parse error";
    case TW_ERR_INVALID: return "invalid input";
    case TW_ERR_NOMEM: return "out of memory";
    case TW_ERR_DIVERGED: return "diverged";
    case TW_ERR_UNSUPPORTED: return "unsupported";
    case TW_ERR_DEVICE: return "device error";
    }
    return "unknown status";
}

const char *tw_real_name(void) { return sizeof(tw_real) == 8 ? "double" : "float"; }
