/* Compact JSONL (RFC-0014): a tree of .json/.jsonl/.ndjson files <-> one Lance dataset,
** restored byte for byte. Layout and metadata keys: docs/compact-jsonl.md.
**
** Every call writes a complete snapshot into a hidden staging directory beside the target
** and publishes it with one atomic rename (RFC-0014 "Import": same-parent staging, atomic
** replace). On any error, cancellation or crash the previous target is untouched and no
** partial dataset is visible; stale staging directories of an earlier crash are removed
** by the next writer of the same target.
**
** Thread rule: the functions are reentrant; one call uses one thread. */
#ifndef PCHRONICLE_COMPACT_JSONL_H
#define PCHRONICLE_COMPACT_JSONL_H

#include <stdbool.h>
#include <signal.h>
#include "pchronicle/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PCH_CJ_FORMAT "compact-jsonl/v1"

/* One --column NAME=PATH mapping. NAME "id" or "timestamp" overrides the default path of
** that base column; any other NAME adds a nullable JSON column. */
typedef struct pch_cj_mapping {
    const char *name;
    const char *path;
} pch_cj_mapping;

/* Progress snapshot given to the progress callback (about every 256 records and at the
** end). Borrowed for the duration of the callback. */
typedef struct pch_cj_progress {
    uint64_t records;        /* records (rows) done */
    uint64_t files;          /* files done */
    uint64_t bytes;          /* input (import) or output (export) bytes done */
    uint64_t total_bytes;    /* bytes expected in all (0 if unknown) */
    uint64_t total_records;  /* records expected in all (export; 0 if unknown) */
    const char *current;     /* file being processed (relative name) or NULL */
} pch_cj_progress;

typedef enum pch_cj_publish_mode {
    PCH_CJ_CREATE = 0,       /* the target must not exist (PCH_EEXISTS) */
    PCH_CJ_REPLACE           /* replace an existing target (the CLI asks for --yes) */
} pch_cj_publish_mode;

typedef struct pch_cj_options {
    unsigned version;                /* PCH_CJ_OPTIONS_VERSION */
    pch_cj_publish_mode mode;
    const pch_cj_mapping *mappings;  /* user mappings in --column order */
    size_t n_mappings;
    uint64_t offload_threshold;      /* raw bytes >= threshold are offloaded; 0 = never */
    size_t max_record_bytes;         /* one record's raw bytes; 0 = ctx max_line_bytes */
    size_t batch_bytes;              /* rows buffered before a Lance write; 0 = 4 MiB */
    size_t batch_rows;               /* 0 = 8192 */
    void (*progress)(void *payload, const pch_cj_progress *p);  /* may be NULL */
    void *payload;
    volatile sig_atomic_t *cancel;   /* non-zero -> stop with PCH_ECANCELED; may be NULL */
    /* version 2: zstd level of the dataset's pages, 1..22; 0 = PCH_CJ_DEFAULT_ZSTD_LEVEL
    ** (docs/compact-jsonl.md "Benchmark" and "Second round" measure the trade) */
    int zstd_level;
    /* version 2: memory of the id-uniqueness index before it spills sorted runs to a
    ** temporary file beside the target; 0 = PCH_CJ_DEFAULT_ID_INDEX_BYTES */
    size_t id_index_bytes;
} pch_cj_options;
#define PCH_CJ_OPTIONS_VERSION 2
#define PCH_CJ_OPTIONS_INIT { PCH_CJ_OPTIONS_VERSION, PCH_CJ_CREATE, NULL, 0, 0, 0, 0, 0, \
        NULL, NULL, NULL, 0, 0 }
#define PCH_CJ_DEFAULT_ID_INDEX_BYTES ((size_t)64 << 20)
#define PCH_CJ_MAX_ZSTD_LEVEL 22
/* Level 5 (zstd's lazy2 match finder) instead of 3: 12 % smaller datasets on the shared
** scaled corpus (2.45x instead of 2.80x `tar | zstd -3`) for ~25 % more import CPU, spent
** on the page-encoder threads (docs/compact-jsonl.md "Second round"). */
#define PCH_CJ_DEFAULT_ZSTD_LEVEL 5

typedef struct pch_cj_stats {
    uint64_t files;          /* input/output files (including empty ones) */
    uint64_t records;        /* rows */
    uint64_t bytes;          /* raw bytes read (import) or written (export) */
    uint64_t offloaded_rows;
    uint64_t offloaded_bytes;/* raw bytes of offloaded rows (shared objects counted once) */
    uint64_t version;        /* Lance version written / read */
} pch_cj_stats;

/* Import the file or directory `root` into the dataset directory `target`, as one
** complete snapshot. stats_out may be NULL. Errors: PCH_EINVAL (invalid input or mapping:
** the message names file, line, column and what), PCH_EEXISTS (CREATE and the target
** exists), PCH_ELIMIT, PCH_EIO, PCH_ECANCELED, PCH_ENOMEM. */
PCH_API int pch_cj_import(pch_ctx *ctx, const char *root, const char *target,
                          const pch_cj_options *opts, pch_cj_stats *stats_out,
                          pch_error *err);

/* Restore the files of the compact-jsonl dataset `dataset` into the directory `out_dir`.
** The dataset's format and schema are verified before anything is created. mode CREATE
** refuses an existing out_dir; REPLACE (--overwrite) replaces it atomically. Only mode,
** progress, payload and cancel of opts are used (opts may be NULL). Errors:
** PCH_EUNSUPPORTED (format metadata missing or unknown), PCH_ECORRUPT (schema, row state,
** path escape, offload digest), PCH_ENOTFOUND, PCH_EEXISTS, PCH_EIO, PCH_ECANCELED. */
PCH_API int pch_cj_export(pch_ctx *ctx, const char *dataset, const char *out_dir,
                          const pch_cj_options *opts, pch_cj_stats *stats_out,
                          pch_error *err);

/* Whether the Lance dataset at `dataset` (latest version) says it is a compact-jsonl dataset
** (its schema metadata has pchronicle.format; export and inspect then check the value and
** the schema). Errors: those of opening a Lance dataset (not one: PCH_ENOTFOUND / corrupt). */
PCH_API int pch_cj_probe(pch_ctx *ctx, const char *dataset, bool *is_cj, pch_error *err);

/* The record an offloaded row holds elsewhere: `desc` is the row's _offload_ value (JSONB),
** `dataset` the dataset directory, `row` names the row in messages. The object is read and
** its BLAKE3 checked against the descriptor's key before it is returned (PCH_ECORRUPT on a
** bad descriptor, a path escaping the dataset, a missing object or a digest mismatch).
** *out (ctx allocator, NUL-terminated) holds the record bytes exactly as export writes them. */
PCH_API int pch_cj_offload_read(pch_ctx *ctx, const char *dataset, const uint8_t *desc, size_t n,
                                uint64_t row, char **out, size_t *out_len, pch_error *err);

/* What `pchronicle inspect` shows. */
typedef struct pch_cj_column_info {
    char name[64];
    uint64_t value_bytes;    /* bytes of the column's values (logical, uncompressed) */
    uint64_t null_count;
    uint64_t encoded_bytes;  /* bytes of the column's encoded pages on disk */
} pch_cj_column_info;

typedef struct pch_cj_info {
    char format[64];         /* value of pchronicle.format */
    uint64_t version;        /* Lance dataset version */
    char file_version[8];    /* Lance data file version, "2.1" */
    uint64_t rows;
    uint64_t files;          /* distinct source files, including empty ones */
    uint64_t empty_files;
    uint64_t offloaded_rows;
    uint64_t offload_objects;
    uint64_t offload_bytes;  /* bytes of the distinct offload objects on disk */
    uint64_t data_bytes;     /* bytes of the Lance data files on disk */
    uint64_t total_bytes;    /* every file under the dataset directory */
    uint64_t offload_threshold;
    size_t n_columns;
    pch_cj_column_info *columns;  /* n_columns, schema order; freed by pch_cj_info_dispose */
    pch_ctx *ctx;
} pch_cj_info;

/* Verify and summarise a compact-jsonl dataset. Same verification as export (without
** reading offload objects' contents). *out is disposed with pch_cj_info_dispose. */
PCH_API int pch_cj_inspect(pch_ctx *ctx, const char *dataset, pch_cj_info *out,
                           pch_error *err);
PCH_API void pch_cj_info_dispose(pch_cj_info *info);

/* Check one JSON-path of the RFC-0014 subset ($, .identifier, [digits]). PCH_EINVAL with
** the byte offset of the first offending character in the message. */
PCH_API int pch_cj_path_check(const char *path, pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
