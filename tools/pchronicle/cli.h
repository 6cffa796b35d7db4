/* Shared helpers of the pchronicle command-line program (tools/pchronicle): exit codes,
** error printing, usage and a small option parser. Every verb lives in cmd_<verb>.c and
** is registered in the verb table of main.c; a verb's entry point receives argv with
** argv[0] = the verb name and returns an exit code. tools/ uses only the public API
** (the headers in include/pchronicle/). docs/cli.md documents the conventions. */
#ifndef PCH_CLI_H
#define PCH_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "pchronicle/error.h"

/* Exit codes (docs/cli.md). */
#define PCH_CLI_EXIT_OK 0      /* success */
#define PCH_CLI_EXIT_ERROR 1   /* the operation failed (message on stderr) */
#define PCH_CLI_EXIT_USAGE 2   /* bad command line (message + usage on stderr) */

/* pch_cli_parse result when -h/--help was given (the caller prints its help, exits 0). */
#define PCH_CLI_HELP (-1)

typedef struct pch_cli_verb {
    const char *name;                  /* "lance" */
    const char *summary;               /* one line for `pchronicle --help` */
    int (*run)(int argc, char **argv); /* argv[0] = name; returns an exit code */
} pch_cli_verb;

typedef struct pch_cli_opt {
    const char *name;      /* long option without "--", e.g. "schema" */
    bool has_arg;          /* takes a value: "--name VALUE" or "--name=VALUE" */
    const char **value;    /* has_arg: receives the (last) value */
    bool *flag;            /* !has_arg: set to true when present */
} pch_cli_opt;

/* Print "pchronicle: <message>" on stderr (one line). */
void pch_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print err->msg (or its status name when empty) as above; returns PCH_CLI_EXIT_ERROR. */
int pch_cli_fail(const pch_error *err);
/* Print "pchronicle: <message>" and then `usage` on stderr; returns PCH_CLI_EXIT_USAGE. */
int pch_cli_usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parse argv[1..argc): long options from opts (anywhere on the line), "-h"/"--help",
** "--" ends options; everything else is positional and is stored in pos[] (room for argc
** entries), count in *n_pos. Returns 0, PCH_CLI_HELP, or PCH_CLI_EXIT_USAGE after printing
** the error with `usage`. */
int pch_cli_parse(int argc, char **argv, const pch_cli_opt *opts, size_t n_opts,
                  const char **pos, int *n_pos, const char *usage);

/* Parse a non-negative decimal integer option value; false if malformed or > max. */
bool pch_cli_parse_u64(const char *s, unsigned long long max, unsigned long long *out);

/* Seconds on the monotonic clock (durations: sync's debounce, sql --stats). */
double pch_cli_now(void);

/* --stats of sql and get, on stderr: "stats: bytes_read=N seconds=S" (Lance data bytes read,
** seconds since t0) and, when the process made object-store requests, "stats: s3 gets=N
** ranges=N bytes_requested=N bytes_useful=N requests=N retries=N cache_hits=N" (RFC-0006
** §20.2, §22.2: GETs, ranges and bytes, as pchronicle-vortex prints them). */
void pch_cli_print_stats(double t0);

/* Verb entry points (one per cmd_<verb>.c). */
int pch_cmd_lance(int argc, char **argv);
int pch_cmd_validate(int argc, char **argv);
int pch_cmd_objects(int argc, char **argv);

#endif
