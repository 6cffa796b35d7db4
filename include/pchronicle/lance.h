/* Lance datasets (lance-format.md): schema, in-memory column batches, the dataset writer
** (create / append / overwrite as new versions, commit by create-if-absent), and the
** dataset reader (any version, 2.0 and 2.1 data files). Types we support are listed in
** pch_lance_type; anything else in a file fails closed with PCH_EUNSUPPORTED naming it.
**
** Thread rule: one thread at a time per handle. An opened dataset is an immutable snapshot.
** A writer may run worker threads of its own (pch_lance_write_options.threads): they only
** encode and compress page copies the writer owns, never touch the caller's batches, call
** no callback, and are joined before pch_lance_writer_commit / pch_lance_writer_free
** return; they allocate through the ctx allocator, which must then be thread-safe (the
** default libc one is). Every call still comes from one thread at a time. */
#ifndef PCHRONICLE_LANCE_H
#define PCHRONICLE_LANCE_H

#include <stdbool.h>
#include "pchronicle/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pch_lance_type {
    PCH_LANCE_BOOL = 1,
    PCH_LANCE_INT8, PCH_LANCE_INT16, PCH_LANCE_INT32, PCH_LANCE_INT64,
    PCH_LANCE_UINT8, PCH_LANCE_UINT16, PCH_LANCE_UINT32, PCH_LANCE_UINT64,
    PCH_LANCE_FLOAT32, PCH_LANCE_FLOAT64,
    PCH_LANCE_UTF8,         /* i32 offsets in Arrow; logical type "string" */
    PCH_LANCE_LARGE_UTF8,   /* "large_string" */
    PCH_LANCE_BINARY,       /* "binary" */
    PCH_LANCE_LARGE_BINARY, /* "large_binary" */
    PCH_LANCE_JSON          /* large_binary + lance.json: values are JSONB bytes */
} pch_lance_type;

/* Name used in SCHEMA.json and dumps ("int64", "utf8", "json", …); NULL if unknown. */
PCH_API const char *pch_lance_type_name(pch_lance_type t);
/* Parse a SCHEMA.json type name; PCH_EUNSUPPORTED names an unknown type. */
PCH_API int pch_lance_type_from_name(pch_lance_type *out, const char *name, pch_error *err);
/* Bytes per value of a fixed-width type (bool: 0 = bit-packed), 0 for variable width. */
PCH_API size_t pch_lance_type_width(pch_lance_type t);
PCH_API bool pch_lance_type_is_var(pch_lance_type t);

typedef struct pch_lance_kv {
    char *key;
    uint8_t *value;       /* bytes (UTF-8 in practice), NUL-terminated past value_len */
    size_t value_len;
} pch_lance_kv;

typedef struct pch_lance_field {
    char *name;
    pch_lance_type type;
    bool nullable;
    int32_t id;           /* Lance field id (assigned 0..n-1 on create) */
    pch_lance_kv *metadata;
    size_t n_metadata;
} pch_lance_field;

/* A flat schema (nested types are out of scope and fail closed). Owned by whoever
** created it; free with pch_lance_schema_free. */
typedef struct pch_lance_schema {
    pch_lance_field *fields;
    size_t n_fields;
    pch_lance_kv *metadata;
    size_t n_metadata;
    pch_ctx *ctx;
} pch_lance_schema;

PCH_API int pch_lance_schema_new(pch_lance_schema **out, pch_ctx *ctx, pch_error *err);
/* Append a field (copies name). Errors: PCH_EINVAL on an empty or duplicate name. */
PCH_API int pch_lance_schema_add_field(pch_lance_schema *s, const char *name,
                                       pch_lance_type type, bool nullable, pch_error *err);
/* Add key/value metadata to field index fi, or to the schema when fi == SIZE_MAX. */
PCH_API int pch_lance_schema_add_metadata(pch_lance_schema *s, size_t fi, const char *key,
                                          const void *value, size_t value_len,
                                          pch_error *err);
PCH_API int pch_lance_schema_clone(pch_lance_schema **out, const pch_lance_schema *s,
                                   pch_error *err);
PCH_API void pch_lance_schema_free(pch_lance_schema *s);
/* Field index by name, or -1. */
PCH_API long pch_lance_schema_find(const pch_lance_schema *s, const char *name);
/* Parse SCHEMA.json: {"fields":[{"name","type","nullable","metadata"}], "metadata":{}}. */
PCH_API int pch_lance_schema_from_json(pch_lance_schema **out, pch_ctx *ctx,
                                       const char *json, size_t len, pch_error *err);
/* Schema as the JSON header line that `pchronicle lance dump` prints. Caller frees *out
** with pch_free. */
PCH_API int pch_lance_schema_to_json(const pch_lance_schema *s, char **out, size_t *len_out,
                                     pch_error *err);

/* One column of a batch, Arrow-like. For fixed-width types `values` holds n_rows values
** of pch_lance_type_width bytes (bool: one byte 0/1 per row). For variable-width types
** `offsets` holds n_rows+1 u64 offsets into `data` (offsets[0] may be non-zero). JSON
** columns hold JSONB bytes. `validity`: NULL = all valid, else n_rows bytes (1 = valid). */
typedef struct pch_lance_column {
    pch_lance_type type;
    size_t n_rows;
    const uint8_t *validity;
    const uint8_t *values;
    const uint64_t *offsets;
    const uint8_t *data;
} pch_lance_column;

/* A batch: n_rows rows, one column per schema field, in schema order. Memory is owned by
** whoever filled it (borrowed by the writer for the duration of the call). */
typedef struct pch_lance_batch {
    size_t n_rows;
    size_t n_columns;
    const pch_lance_column *columns;
} pch_lance_batch;

/* ---- writing ---- */

typedef enum pch_lance_write_mode {
    PCH_LANCE_CREATE = 0,   /* the dataset must not exist (PCH_EEXISTS) */
    PCH_LANCE_APPEND,       /* add fragments as a new version; schema must match */
    PCH_LANCE_OVERWRITE     /* new version with only the new fragments (and this schema) */
} pch_lance_write_mode;

typedef enum pch_lance_file_version {
    PCH_LANCE_FILE_2_1 = 0,  /* default: structural encodings (mini-block / full-zip) */
    PCH_LANCE_FILE_2_0       /* legacy ArrayEncoding family */
} pch_lance_file_version;

typedef struct pch_lance_write_options {
    unsigned version;                  /* PCH_LANCE_WRITE_OPTIONS_VERSION */
    pch_lance_write_mode mode;
    pch_lance_file_version file_version;
    uint64_t max_rows_per_file;        /* 0 = 1,048,576 */
    uint64_t max_bytes_per_page;       /* 0 = 8 MiB (values per column page) */
    int zstd_level;                    /* 0 = 3; < 0 disables buffer compression */
    /* version 2: threads that encode and compress pages, per open data file. 0 = the
    ** online CPUs (at most 64); 1 = everything on the caller's thread. With n > 1 the
    ** writer starts n worker threads and keeps at most 2n encoded-or-encoding pages in
    ** flight besides the pages being filled; the data files are byte-identical whatever
    ** n is. */
    unsigned threads;
    /* version 3: 2.1 variable-width pages as a page dictionary — the page's distinct values
    ** in one zstd block (the compression window is the whole page, and repeated values are
    ** stored once) plus mini-block row indices — wherever that is smaller than the chunked
    ** layouts (lance-format.md §2.4, docs/lance.md). Suits scan-heavy columns of large or
    ** repetitive values; a point read then decompresses the page's whole dictionary. */
    bool page_dictionary;
} pch_lance_write_options;
#define PCH_LANCE_WRITE_OPTIONS_VERSION 3
#define PCH_LANCE_WRITE_OPTIONS_INIT { PCH_LANCE_WRITE_OPTIONS_VERSION, PCH_LANCE_CREATE, \
        PCH_LANCE_FILE_2_1, 0, 0, 0, 0, false }

typedef struct pch_lance_writer pch_lance_writer;

/* Start writing to the dataset directory `path`. Nothing is visible to readers until
** pch_lance_writer_commit. For APPEND the schema must equal the dataset's (names, types,
** nullability); field ids are taken from the dataset. */
PCH_API int pch_lance_writer_open(pch_lance_writer **out, pch_ctx *ctx, const char *path,
                                  const pch_lance_schema *schema,
                                  const pch_lance_write_options *opts, pch_error *err);
/* Add rows. The batch is copied/encoded before return. */
PCH_API int pch_lance_writer_write(pch_lance_writer *w, const pch_lance_batch *batch,
                                   pch_error *err);
/* Finish data files and publish the next manifest (create-if-absent). On PCH_EEXISTS a
** concurrent writer won; nothing of ours is visible. *version_out may be NULL. */
PCH_API int pch_lance_writer_commit(pch_lance_writer *w, uint64_t *version_out,
                                    pch_error *err);
/* Free; an uncommitted writer removes the data files it wrote. */
PCH_API void pch_lance_writer_free(pch_lance_writer *w);

/* ---- reading ---- */

typedef struct pch_lance_dataset pch_lance_dataset;

/* Open version `version` of the dataset at path (0 = latest). Errors: PCH_ENOTFOUND (no
** dataset or version), PCH_ECORRUPT, PCH_EUNSUPPORTED (feature flags, types). */
PCH_API int pch_lance_dataset_open(pch_lance_dataset **out, pch_ctx *ctx, const char *path,
                                   uint64_t version, pch_error *err);
PCH_API void pch_lance_dataset_free(pch_lance_dataset *ds);
PCH_API uint64_t pch_lance_dataset_version(const pch_lance_dataset *ds);
PCH_API uint64_t pch_lance_dataset_num_rows(const pch_lance_dataset *ds);
PCH_API size_t pch_lance_dataset_num_fragments(const pch_lance_dataset *ds);
/* Borrowed; valid until pch_lance_dataset_free. */
PCH_API const pch_lance_schema *pch_lance_dataset_schema(const pch_lance_dataset *ds);
/* Data file storage version of the dataset: "2.0" or "2.1". */
PCH_API const char *pch_lance_dataset_file_version(const pch_lance_dataset *ds);

/* Encoded bytes on disk of schema field `field` (index into the schema): the sum of the
** page buffer sizes recorded in the column metadata of every data file (alignment padding
** and metadata excluded). Opens each data file's footer and metadata, decodes no values.
** Errors: PCH_EINVAL (field out of range), PCH_EIO, PCH_ECORRUPT. */
PCH_API int pch_lance_dataset_column_bytes(const pch_lance_dataset *ds, size_t field,
                                           uint64_t *out, pch_error *err);

/* Bytes read from Lance data files by this process so far (footers, metadata and page
** buffers; every thread, every dataset). */
PCH_API uint64_t pch_lance_bytes_read(void);

typedef struct pch_lance_scanner pch_lance_scanner;

/* Scan columns (indices into the schema; NULL/0 = all) over every fragment in order.
** batch_rows: rows per batch (0 = 8192). */
PCH_API int pch_lance_scanner_open(pch_lance_scanner **out, pch_lance_dataset *ds,
                                   const size_t *columns, size_t n_columns,
                                   size_t batch_rows, pch_error *err);
/* Scan only the rows `rows[0..n_rows)`: dataset row indices, 0 = the first row of the
** first fragment, counting through the fragments in order (the position a full scan
** returns the row at). They must be strictly ascending and below num_rows (else
** PCH_EINVAL); the array is copied. Batches hold the selected rows in that order (at most
** batch_rows, never spanning two fragments); only the pages covering selected rows are
** read and decoded, fragments without one are not opened. n_rows == 0 yields no batch. */
PCH_API int pch_lance_scanner_open_rows(pch_lance_scanner **out, pch_lance_dataset *ds,
                                        const size_t *columns, size_t n_columns,
                                        const uint64_t *rows, size_t n_rows,
                                        size_t batch_rows, pch_error *err);
/* Next batch (columns in projection order). Borrowed: valid until the next call or free.
** Returns PCH_ITEROVER at the end. */
PCH_API int pch_lance_scanner_next(pch_lance_scanner *sc, const pch_lance_batch **batch,
                                   pch_error *err);
PCH_API void pch_lance_scanner_free(pch_lance_scanner *sc);

/* Write one row of a batch as the JSON object `pchronicle lance dump` prints: int64/uint64
** exact, binary as {"base64":"..."}, JSON columns as their JSON value, null as null.
** Appends to *out (realloc'ed with the ctx allocator; *cap tracks its capacity). */
PCH_API int pch_lance_row_to_json(pch_ctx *ctx, const pch_lance_schema *schema,
                                  const size_t *columns, const pch_lance_batch *batch,
                                  size_t row, char **out, size_t *len, size_t *cap,
                                  pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
