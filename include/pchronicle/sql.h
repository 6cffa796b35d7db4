/* SQL over a Storyline root (docs/sql.md): SQLite virtual tables `runs`, `steps`,
** `tool_calls` and `observation_results` (RFC-0006 §13 relations; ARCHITECTURE §5), with
** equality/range pushdown on identity columns and step timestamps and projection pushdown
** (only the columns a statement uses are decoded). Also built as the loadable extension
** build/pchronicle_sqlite.so:
**     .load build/pchronicle_sqlite
**     CREATE VIRTUAL TABLE temp.steps USING storyline('ROOT', 'steps');
**
** Thread rule: a registered module follows the connection's threading rules; each virtual
** table opens its own pinned snapshot of the root (the CURRENT of the moment it connects). */
#ifndef PCHRONICLE_SQL_H
#define PCHRONICLE_SQL_H

#include <stdint.h>
#include <stdio.h>
#include "pchronicle/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sqlite3;

/* Register the "storyline" and "lance" modules on db. Returns an SQLite result code. */
PCH_API int pch_sql_register(struct sqlite3 *db);

/* Create temp.runs, temp.steps, temp.tool_calls, temp.observation_results over root on db
** (after pch_sql_register). Returns an SQLite result code; *errmsg (sqlite3_free) on error. */
PCH_API int pch_sql_attach_root(struct sqlite3 *db, const char *root, char **errmsg);

/* Create temp.records (a compact-jsonl dataset: its columns, JSON as text, plus `record`)
** or temp.dataset (any other Lance dataset) over version `version` (0 = latest) of the Lance
** dataset at `dataset`, through the "lance" module (registered by pch_sql_register). Returns
** an SQLite result code; *errmsg (sqlite3_free) on error. */
PCH_API int pch_sql_attach_dataset(struct sqlite3 *db, const char *dataset, uint64_t version,
                                   char **errmsg);

/* The four relations over root through `module` ("storyline", or a module registered for
** another projection, such as pchronicle-vortex's "vortex"): CREATE VIRTUAL TABLE
** temp.<relation> USING module(root, relation). SQLite result code; *errmsg as above. */
PCH_API int pch_sql_attach_module(struct sqlite3 *db, const char *module, const char *root,
                                  char **errmsg);

/* How rows are written: an aligned table, CSV (RFC 4180), JSON lines; or PCH_SQL_DISCARD:
** every row is produced (the statement runs to its end) and counted, none is formatted or
** written, and out may be NULL. Discard is what an engine-only timing measures: the peers'
** benchmarks time their engines with the results discarded (bench-sql, docs/sql.md). */
typedef enum pch_sql_format { PCH_SQL_TABLE = 0, PCH_SQL_CSV, PCH_SQL_JSONL, PCH_SQL_DISCARD } pch_sql_format;

/* pch_sql_run_at's driver for any relations: an in-memory connection with the modules of
** pch_sql_register, attach(db, payload, &errmsg) creating the relations (an SQLite result
** code), then pch_sql_exec. Errors: PCH_EINVAL (attach or SQL failed: the message says
** why), PCH_ENOMEM. */
PCH_API int pch_sql_run_with(int (*attach)(struct sqlite3 *db, void *payload, char **errmsg),
                             void *payload, const char *sql, pch_sql_format fmt, FILE *out,
                             pch_error *err);

/* Run one or more statements on db and print the rows of each to out (the printing of
** pch_sql_run_at). Errors: PCH_EINVAL (the message is SQLite's), PCH_ENOMEM. */
PCH_API int pch_sql_exec(struct sqlite3 *db, const char *sql, pch_sql_format fmt, FILE *out,
                         pch_error *err);

/* Run one or more statements over `target` and print the rows of each to out. A Storyline
** root gets its relations (runs, steps, tool_calls, observation_results; version must be
** 0), anything else is opened as a Lance dataset (records or dataset, at `version`, 0 =
** latest). Errors: PCH_EINVAL (SQL error: the message is SQLite's; a version with a
** Storyline root), PCH_ENOTFOUND (neither a root nor a dataset), PCH_EIO. */
PCH_API int pch_sql_run_at(const char *target, uint64_t version, const char *sql, pch_sql_format fmt,
                           FILE *out, pch_error *err);
/* pch_sql_run_at(root, 0, ...). */
PCH_API int pch_sql_run(const char *root, const char *sql, pch_sql_format fmt, FILE *out,
                        pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
