/* Thread-local last-error message. tw_fail formats it (printf-style) and
 * returns the status so call sites read `return tw_fail(TW_ERR_PARSE, ...)`. */
#ifndef TW_ERROR_H
#define TW_ERROR_H
#include "tetwarp.h"
tw_status tw_fail(tw_status s, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void tw_clear_error(void);
/* malloc/calloc that set TW_ERR_NOMEM's message (naming what) on failure. */
void *tw_malloc(size_t bytes, const char *what);
void *tw_calloc(size_t count, size_t size, const char *what);
#endif
