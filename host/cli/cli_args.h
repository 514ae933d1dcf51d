/* Command-line parsing for the tetwarp tool (and the benchmark and viewer
 * that reuse its scene options).
 *
 * A subcommand walks its arguments with cli_next(); for each option it asks
 * cli_is() and reads the value with one of the cli_* readers. `--opt value`
 * and `--opt=value` are both accepted. Every reader prints a message that
 * names the subcommand, the option and the value at fault, and returns -1;
 * 0 means the value was read. Numbers go through strtod/strtol with the end
 * pointer checked: "1e6x", "", "abc" are errors, never a silent 1e6 or 0. */
#ifndef TW_CLI_ARGS_H
#define TW_CLI_ARGS_H

#include <stdio.h>

/* Exit codes of the tool. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

typedef struct cli_args {
    int argc;
    char **argv;
    int next;                 /* index of the next argument */
    const char *prog;         /* "tetwarp run": prefix of every message */
    const char *arg;          /* the current argument, as given */
    char opt[64];             /* the current option name, without "=value" */
    const char *inline_value; /* the part after '=' in --opt=value, or NULL */
    const char *value;        /* the last value read (for messages) */
} cli_args;

/* argv[0] is the first argument to walk (the one after the subcommand). */
cli_args cli_args_make(int argc, char **argv, const char *prog);

/* Advances to the next argument; returns 0 when there is none. */
int cli_next(cli_args *a);
/* 1 when the current argument is an option (starts with '-', not a number). */
int cli_is_option(const cli_args *a);
/* 1 when the current option is `name`. */
int cli_is(const cli_args *a, const char *name);
/* 1 when the current argument is -h or --help. */
int cli_is_help(const cli_args *a);

/* Prints "PROG: message\n" to stderr. Returns -1. */
int cli_error(const cli_args *a, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* "PROG: unknown option '--x' (see `PROG --help`)"; returns -1. */
int cli_unknown(const cli_args *a);

/* The option's value (next argument or the part after '='); NULL with a
 * message "--opt needs a value (what)" when there is none. */
const char *cli_value(cli_args *a, const char *what);

/* A flag (an option without value): -1 with a message for "--flag=x". */
int cli_flag(const cli_args *a);

/* Readers: value of the current option parsed into *out. `what` names the
 * expected value and unit for messages, e.g. "Young's modulus, Pa". */
int cli_double(cli_args *a, const char *what, double *out);
int cli_int(cli_args *a, const char *what, int *out);
/* Exactly n comma-separated numbers. */
int cli_doubles(cli_args *a, const char *what, int n, double *out);
/* Value must be one of names[0..count-1]; *out = its index. */
int cli_choice(cli_args *a, const char *what, const char *const *names, int count, int *out);

/* Range checks on the value just read: print "--opt VALUE: must be ..." and
 * return -1 when cond is false. */
int cli_require(cli_args *a, int cond, const char *must);

/* Plain parsers with no messages: 0 on success, -1 on junk. A double must
 * be finite; an int must fit. */
int cli_parse_double(const char *s, double *out);
int cli_parse_int(const char *s, int *out);

/* Milliseconds from a monotonic clock. */
double cli_now_ms(void);

#endif
