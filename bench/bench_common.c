#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bench_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int bench_cores(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

void bench_cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, cap, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

const char *const BENCH_CG_NAMES[BENCH_CG_COUNT] = {"fixed20", "tol1e-4"};

int bench_parse_cg(const char *s)
{
    if (strcmp(s, "fixed") == 0 || strcmp(s, "fixed20") == 0) return BENCH_CG_FIXED20;
    if (strcmp(s, "tol") == 0 || strcmp(s, "tol1e-4") == 0) return BENCH_CG_TOL;
    return -1;
}

int bench_parse_list(const char *prog, const char *arg, int *out, int cap, int (*parse)(const char *))
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    int count = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int v = parse(tok);
        if (v < 0 || count >= cap) {
            fprintf(stderr, "%s: bad item '%s' in '%s'\n", prog, tok, arg);
            return -1;
        }
        out[count++] = v;
    }
    return count;
}

size_t bench_read_full(int fd, void *buf, size_t size)
{
    size_t got = 0;
    while (got < size) {
        ssize_t k = read(fd, (char *)buf + got, size - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    return got;
}

int bench_run_forked(void (*fn)(const void *ctx, void *out), const void *ctx, void *out, size_t size, int *status,
                     char *why, size_t why_size)
{
    int fd[2];
    *status = 0;
    if (pipe(fd) != 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        fn(ctx, out);
        ssize_t wrote = write(fd[1], out, size);
        close(fd[1]);
        _exit(wrote == (ssize_t)size ? 0 : 1);
    }
    close(fd[1]);
    size_t got = bench_read_full(fd[0], out, size);
    close(fd[0]);
    waitpid(pid, status, 0);
    return got == size ? 0 : 1;
}
