/* Storyline projection (RFC-0006 §2.1 "current model"; ARCHITECTURE.md §5;
** docs/storyline.md is the column contract): ATIF trajectories projected into the Lance
** datasets `runs`, `steps`, `tool_calls` and `objects` under one root, pinned by a small
** `CURRENT` JSON file that names each table's exact Lance version, the source it was built
** from (lineage) and whether the root is self-contained. The projection is rebuildable:
** importing again writes new table versions and swaps CURRENT last, so a failed import
** leaves the previous root readable and unchanged.
**
** Thread rule: every function is independent; a root may be read by many threads and
** processes while one importer writes it (readers follow CURRENT). */
#ifndef PCHRONICLE_STORYLINE_H
#define PCHRONICLE_STORYLINE_H

#include <stdbool.h>
#include <stdio.h>
#include "pchronicle/ctx.h"
#include "pchronicle/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pch_storyline_assets {
    PCH_STORYLINE_ASSETS_EMBED = 0,   /* read image/audio files (confined to the input root)
                                      ** into `objects`; the root stays self-contained */
    PCH_STORYLINE_ASSETS_REFERENCE    /* keep only the path; CURRENT self_contained=false */
} pch_storyline_assets;

typedef struct pch_storyline_import_options {
    unsigned version;            /* PCH_STORYLINE_IMPORT_OPTIONS_VERSION */
    pch_storyline_assets assets;
    bool strict;                 /* ATIF producer deviations are errors (docs/atif.md §1) */
    const char *source_id;       /* TrajectoryKey.source_id; NULL = basename of the input */
    size_t object_threshold;     /* values of at least this many bytes go to `objects`;
                                 ** 0 = PCH_STORYLINE_DEFAULT_OBJECT_THRESHOLD */
    FILE *warnings;              /* findings of rejected documents are printed here (NULL: quiet) */
} pch_storyline_import_options;
#define PCH_STORYLINE_IMPORT_OPTIONS_VERSION 1
#define PCH_STORYLINE_IMPORT_OPTIONS_INIT { PCH_STORYLINE_IMPORT_OPTIONS_VERSION, \
        PCH_STORYLINE_ASSETS_EMBED, false, NULL, 0, NULL }
#define PCH_STORYLINE_DEFAULT_OBJECT_THRESHOLD ((size_t)64 << 10)

typedef struct pch_storyline_stats {
    size_t documents;            /* documents projected */
    size_t rejected;             /* invalid documents skipped (findings printed) */
    size_t input_bytes;          /* bytes of ATIF JSON read */
    size_t runs, steps, tool_calls, objects;   /* rows written */
    size_t object_refs;          /* values moved to objects (before dedup) */
    size_t assets_embedded, assets_missing;
} pch_storyline_stats;

/* Project ATIF documents into the Storyline root `root` (created if absent). `from` is a
** directory of ATIF *.json files or a compact-jsonl dataset (a Lance dataset directory
** written by pch_cj_import) whose records are ATIF documents. Tables are written first
** (each a committed Lance version), then CURRENT is published atomically. stats may be
** NULL. Errors: PCH_ENOTFOUND (no input), PCH_EINVAL (bad options / no valid document),
** PCH_EIO, PCH_ENOMEM, PCH_ECORRUPT (input dataset). On error CURRENT is untouched. */
PCH_API int pch_storyline_import(pch_ctx *ctx, const char *from, const char *root,
                                 const pch_storyline_import_options *opts,
                                 pch_storyline_stats *stats, pch_error *err);

/* Is `path` a Storyline root (a directory holding a CURRENT that names this format)? */
PCH_API bool pch_storyline_is_root(const char *path);

/* Write every trajectory document of the root back as ATIF (pretty JSON) under dir, at
** its original relative path, with embedded assets restored beside it. When
** trajectory_key is not NULL only that trajectory (with its embedded subagents) is
** written, at its document's path. *n_docs_out (may be NULL) counts files written.
** Errors: PCH_ENOTFOUND (no root / no such trajectory), PCH_ECORRUPT, PCH_EIO, PCH_ENOMEM. */
PCH_API int pch_storyline_export(pch_ctx *ctx, const char *root, const char *dir,
                                 const char *trajectory_key, size_t *n_docs_out,
                                 pch_error *err);

/* One trajectory (by trajectory_key; its embedded subagents nested again) as ATIF JSON.
** pretty: 2-space indentation. *out allocated with the context allocator (pch_free),
** NUL-terminated. Errors: PCH_ENOTFOUND, PCH_ECORRUPT, PCH_ENOMEM. */
PCH_API int pch_storyline_get(pch_ctx *ctx, const char *root, const char *trajectory_key,
                              bool pretty, char **out, size_t *len_out, pch_error *err);
/* The same for the trajectory (run_id, trajectory_key) — a trajectory key is unique only
** within its run (several runs may each hold one of the same name); run_id NULL: the first
** trajectory with that key, as pch_storyline_get. */
PCH_API int pch_storyline_get_in_run(pch_ctx *ctx, const char *root, const char *run_id,
                                     const char *trajectory_key, bool pretty, char **out,
                                     size_t *len_out, pch_error *err);

/* Which identity a point-read key is (RFC-0006 §13.4): a trajectory key, the run id or
** producer session id of document roots (several documents may share either), or a producer
** id: the trajectories whose key is "KEY@<document path>" (their trajectory id, or a document
** root's session id: docs/atif.md "Stable keys"). */
typedef enum pch_storyline_key_kind {
    PCH_STORYLINE_KEY_TRAJECTORY = 0, PCH_STORYLINE_KEY_RUN, PCH_STORYLINE_KEY_SESSION,
    PCH_STORYLINE_KEY_PRODUCER_ID
} pch_storyline_key_kind;

typedef struct pch_storyline_match {
    char *run_id, *trajectory_key, *doc_path;   /* NUL-terminated, context allocator */
    size_t key_count;   /* trajectories in the root with this trajectory key (1: it alone) */
} pch_storyline_match;

/* Every trajectory whose `as` identity is key: for TRAJECTORY the rows with that trajectory
** key (embedded subagents included), for RUN / SESSION the document roots (preorder 0) with
** that run_id / session_id, in table order. Scans the identity columns of runs only. *out
** (free with pch_storyline_matches_free) holds *n_out >= 1 matches. Errors: PCH_ENOTFOUND
** (no root, or no match: "no trajectory|run|session 'K'"), PCH_EINVAL, PCH_ECORRUPT,
** PCH_ENOMEM. */
PCH_API int pch_storyline_find(pch_ctx *ctx, const char *root, pch_storyline_key_kind as,
                               const char *key, pch_storyline_match **out, size_t *n_out,
                               pch_error *err);
PCH_API void pch_storyline_matches_free(pch_ctx *ctx, pch_storyline_match *m, size_t n);

/* Print a summary of the root (CURRENT, per-table version/rows/bytes) to out. */
PCH_API int pch_storyline_inspect(pch_ctx *ctx, const char *root, FILE *out, pch_error *err);

/* ---- reading the tables (used by src/sql and tools) ---- */

typedef enum pch_storyline_table {
    PCH_STORYLINE_RUNS = 0, PCH_STORYLINE_STEPS, PCH_STORYLINE_TOOL_CALLS,
    PCH_STORYLINE_OBJECTS, PCH_STORYLINE_N_TABLES
} pch_storyline_table;

/* Table name ("runs", …) or NULL. */
PCH_API const char *pch_storyline_table_name(pch_storyline_table t);

/* A root pinned at its CURRENT: the four datasets at the versions CURRENT names. */
typedef struct pch_storyline_root pch_storyline_root;
/* Errors: PCH_ENOTFOUND (no CURRENT), PCH_ECORRUPT (CURRENT malformed), PCH_EUNSUPPORTED
** (unknown format version), dataset open errors. */
PCH_API int pch_storyline_open(pch_storyline_root **out, pch_ctx *ctx, const char *root,
                               pch_error *err);
PCH_API void pch_storyline_close(pch_storyline_root *r);
/* Borrowed: valid until pch_storyline_close. The dataset is shared by every caller; open
** scanners on it one thread at a time. */
PCH_API pch_lance_dataset *pch_storyline_dataset(pch_storyline_root *r, pch_storyline_table t);
/* Hydrate an object by id into a malloc'd (context allocator) buffer. Errors: PCH_ENOTFOUND. */
PCH_API int pch_storyline_object(pch_storyline_root *r, const char *object_id, char **out,
                                 size_t *len_out, pch_error *err);

/* ---- rows without a root (RFC-0006 §13.1: another projection answers as these tables) ----
**
** The rows runs / steps / tool_calls would hold for a document, computed by the code the
** importer uses, without writing anything. Differences from a root, by design: a JSON value
** of at least the object threshold stays in its column (its *_object column still holds the
** id a root would give it), objects are not collected, and an asset's object id comes from
** the resolver (absent when it returns false). */

struct pch_atif_doc;
typedef struct pch_storyline_rowgen pch_storyline_rowgen;

/* Object id (64 hex digits + NUL) of the asset `path` referenced by document doc_path;
** false when it is not embedded. */
typedef bool (*pch_storyline_asset_fn)(const char *doc_path, const char *path, size_t path_len,
                                       char id_hex[65], void *payload);

/* object_threshold 0 = PCH_STORYLINE_DEFAULT_OBJECT_THRESHOLD; mode as the import option
** (REFERENCE: assets are not listed, as in a root imported so); resolve may be NULL. */
PCH_API int pch_storyline_rowgen_new(pch_storyline_rowgen **out, pch_ctx *ctx,
                                     size_t object_threshold, pch_storyline_assets mode,
                                     pch_storyline_asset_fn resolve, void *payload,
                                     pch_error *err);
PCH_API void pch_storyline_rowgen_free(pch_storyline_rowgen *g);
/* Append the rows of every trajectory of doc (preorder) to the three tables. */
PCH_API int pch_storyline_rowgen_add(pch_storyline_rowgen *g, const struct pch_atif_doc *doc,
                                     pch_error *err);
/* The rows appended since the last reset as a batch of table t (runs, steps or tool_calls),
** every column in table order, JSON columns as JSONB (as a Lance scanner returns them).
** Borrowed until the next add or reset. */
PCH_API int pch_storyline_rowgen_batch(pch_storyline_rowgen *g, pch_storyline_table t,
                                       const pch_lance_batch **out, pch_error *err);
PCH_API void pch_storyline_rowgen_reset(pch_storyline_rowgen *g);
/* Schema of table t as a root stores it (caller frees with pch_lance_schema_free). */
PCH_API int pch_storyline_table_schema(pch_ctx *ctx, pch_storyline_table t,
                                       pch_lance_schema **out, pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
