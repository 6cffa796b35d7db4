/* Helpers shared by the compact-jsonl verbs (cmd_import.c, cmd_export.c, cmd_sync.c,
** cmd_inspect.c): --column collection, TTY progress, SIGINT/SIGTERM handling. RFC-0014. */
#ifndef PCH_CJ_CLI_H
#define PCH_CJ_CLI_H

#include <signal.h>
#include <stdbool.h>
#include "pchronicle/compact_jsonl.h"

/* Exit status of an operation stopped by SIGINT/SIGTERM (docs/cli.md). */
#define PCH_CLI_EXIT_INTERRUPTED 130

/* Set by the SIGINT/SIGTERM handler installed by pch_cj_cli_signals(). */
extern volatile sig_atomic_t pch_cj_cli_stop;
void pch_cj_cli_signals(void);

/* Remove every "--column NAME=PATH" / "--column=NAME=PATH" from argv (argc updated) and
** return them as mappings (*maps owned by the caller: free()). Returns 0 or
** PCH_CLI_EXIT_USAGE after printing the error. */
int pch_cj_cli_take_columns(int *argc, char **argv, pch_cj_mapping **maps, size_t *n,
                            const char *usage);

/* Progress on stderr, only when stderr is a TTY and not quiet. */
typedef struct pch_cj_cli_progress {
    bool on;
    const char *verb;
    double t0, last;
    bool drawn;
} pch_cj_cli_progress;
void pch_cj_cli_progress_init(pch_cj_cli_progress *p, const char *verb, bool quiet);
void pch_cj_cli_progress_cb(void *payload, const pch_cj_progress *pr);
void pch_cj_cli_progress_end(pch_cj_cli_progress *p);

/* Fill the import options that import and sync share from their option strings (NULL =
** not given): --offload-threshold, --max-record-bytes, --batch-bytes, --id-index-bytes
** (positive), --zstd-level (1..22), the --column mappings and the SIGINT/SIGTERM cancel
** flag. false after printing a usage error. */
typedef struct pch_cj_cli_import_args {
    const char *thr, *maxrec, *bb, *level, *idx;
} pch_cj_cli_import_args;
bool pch_cj_cli_import_options(pch_cj_options *o, const pch_cj_cli_import_args *a,
                               pch_cj_mapping *maps, size_t n_maps, const char *usage);

/* Run one import/export/sync pass: TTY progress around `op`, then its result as an exit
** status with the error printed. replace_flag names the option that allows replacing an
** existing target ("--yes", "--overwrite"): a create that finds one says so. */
typedef int (*pch_cj_cli_op)(pch_ctx *ctx, const char *from, const char *to,
                             const pch_cj_options *o, pch_cj_stats *st, pch_error *err);
int pch_cj_cli_run(pch_cj_cli_op op, const char *verb, pch_ctx *ctx, const char *from,
                   const char *to, pch_cj_options *o, bool quiet, const char *replace_flag,
                   pch_cj_stats *st);

/* Verb entry points (registered in main.c's verb table). */
int pch_cmd_import(int argc, char **argv);
int pch_cmd_export(int argc, char **argv);
int pch_cmd_sync(int argc, char **argv);
int pch_cmd_inspect(int argc, char **argv);

/* --output-format / --input-format of import, export and sync: every one given must be
** "compact-jsonl". With none given, `dataset` (export's --from, sync's --mirror; NULL for
** import, which needs the flag) decides: an existing path must be a compact-jsonl dataset
** (its schema metadata says so), a new one will be one. Prints the usage error and returns
** false otherwise. */
bool pch_cj_cli_formats_ok(const char *ofmt, const char *ifmt, const char *want,
                           const char *dataset, const char *usage);
/* sync --mirror: an existing path must be a compact-jsonl dataset (a sync replaces it; any
** other directory is refused, whatever the flags). Prints the error and returns false. */
bool pch_cj_cli_mirror_ok(const char *mirror);

#endif
