/* What the benchmark programs share (tw_bench_cpu, tw_bench_backends): the
 * clock, the machine's description, a configuration run in a forked child,
 * and the parsing of comma-separated option lists. Messages name the
 * program, passed as prog. */
#ifndef TW_BENCH_COMMON_H
#define TW_BENCH_COMMON_H
#include <stddef.h>

/* Monotonic seconds. */
double bench_now_s(void);
/* Host threads online (at least 1). */
int bench_cores(void);
/* The CPU's "model name" from /proc/cpuinfo, or "unknown". */
void bench_cpu_model(char *out, size_t cap);

/* CG modes of a row: exactly 20 PCG iterations (the GPU target's setting),
 * or a relative residual of 1e-4 with a cap of 500 iterations. */
enum { BENCH_CG_FIXED20 = 0, BENCH_CG_TOL = 1, BENCH_CG_COUNT = 2 };
extern const char *const BENCH_CG_NAMES[BENCH_CG_COUNT];
/* "fixed", "fixed20", "tol" or "tol1e-4" to a CG mode; -1 for anything else. */
int bench_parse_cg(const char *s);

/* Splits the comma list arg, storing parse(item) for each in out (at most
 * cap); returns the count, or -1 after saying on stderr which item is bad. */
int bench_parse_list(const char *prog, const char *arg, int *out, int cap, int (*parse)(const char *));

/* Reads up to size bytes from fd, until end of file or an error; returns
 * how many came. */
size_t bench_read_full(int fd, void *buf, size_t size);

/* Runs fn(ctx, out) in a forked child, whose size bytes of out come back
 * through a pipe into out. Returns 0 when they came back; 1 when the child
 * ended without them (*status: its wait status); -1 when no child ran (why:
 * the failed call and errno). */
int bench_run_forked(void (*fn)(const void *ctx, void *out), const void *ctx, void *out, size_t size, int *status,
                     char *why, size_t why_size);
#endif
