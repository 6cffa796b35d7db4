/* Lance table layer, private to src/lance/ (lance-format.md §1): the decoded
** lance.table.Manifest, its framing (§1.3), manifest file names (§1.2), and small helpers
** shared by schema.c, manifest.c, dataset.c and rowjson.c.
**
** A pch_lance_manifest is immutable after decoding and owns everything it points to. */
#ifndef PCH_LANCE_TABLE_H
#define PCH_LANCE_TABLE_H

#include "lance/lance_int.h"

/* Manifest footer (§1.3): u64 position, u16 major 0, u16 minor 2, "LANC". */
#define PCH_LANCE_MANIFEST_FOOTER_LEN 16
/* Longest manifest file we read (a manifest lists every fragment; 256 MiB is generous). */
#define PCH_LANCE_MANIFEST_MAX_BYTES ((size_t)256 << 20)

/* reader_feature_flags bits (§1.4). */
#define PCH_LANCE_FLAG_DELETION_FILES 1u
#define PCH_LANCE_FLAG_STABLE_ROW_IDS 2u
#define PCH_LANCE_FLAG_USE_V2_FORMAT 4u   /* deprecated bit lance once set; harmless */
#define PCH_LANCE_FLAG_TABLE_CONFIG 8u
#define PCH_LANCE_FLAG_BASE_PATHS 16u

typedef struct pch_lance_data_file {
    char *path;               /* relative to data/, validated: no '/', not "." or ".." */
    int32_t *fields;          /* field ids stored in the file */
    size_t n_fields;
    int32_t *column_indices;  /* top-level column in the file for each entry of fields */
    size_t n_column_indices;
    uint32_t major, minor;    /* file_major_version / file_minor_version */
    uint64_t file_size;       /* 0 = unknown */
    bool has_base_id;         /* data lives under another base path (unsupported) */
} pch_lance_data_file;

typedef struct pch_lance_fragment {
    uint64_t id;
    pch_lance_data_file *files;
    size_t n_files;
    uint64_t physical_rows;   /* 0 = unknown (old writers) */
    bool has_deletion_file;   /* deleted rows: reading them is unsupported (fails closed) */
    bool has_row_ids;         /* inline/external row ids present (ignored for scans) */
} pch_lance_fragment;

typedef struct pch_lance_manifest {
    pch_ctx *ctx;
    pch_lance_schema *schema;     /* fields in pre-order, ids as stored */
    pch_lance_fragment *fragments;
    size_t n_fragments;
    uint64_t version;
    uint64_t reader_flags;
    uint64_t writer_flags;
    bool has_max_fragment_id;
    uint32_t max_fragment_id;
    int64_t ts_seconds;           /* commit timestamp */
    int32_t ts_nanos;
    char *writer_library;         /* writer_version.library, "" if absent */
    char *writer_version;         /* writer_version.version */
    char *format_name;            /* data_format.file_format ("lance"), "" if absent */
    char *format_version;         /* data_format.version ("2.0", "2.1"), "" if absent */
    uint64_t next_row_id;
    bool has_transaction_section; /* embedded transaction (decoded manifests only) */
    uint64_t transaction_section;
} pch_lance_manifest;

/* Allocate an empty manifest owning an empty schema. */
int pch_lance__manifest_new(pch_lance_manifest **out, pch_ctx *ctx, pch_error *err);
void pch_lance__manifest_free(pch_lance_manifest *m);
/* Append a fragment (deep copies of the files). */
int pch_lance__manifest_add_fragment(pch_lance_manifest *m, const pch_lance_fragment *frag,
                                     pch_error *err);
/* Set a string member (writer_library, …) to a copy of s. */
int pch_lance__manifest_set_str(pch_lance_manifest *m, char **slot, const char *s,
                                pch_error *err);

/* Encode the Manifest protobuf message (§1.4; no framing) and append it to b. */
int pch_lance__manifest_encode_msg(pch_buf *b, const pch_lance_manifest *m, pch_error *err);
/* Encode a whole manifest file: u32 len | Manifest | u64 0 | u16 0 | u16 2 | "LANC". */
int pch_lance__manifest_encode_file(pch_buf *b, const pch_lance_manifest *m, pch_error *err);
/* Decode a whole manifest file (strict framing, §1.3). Errors: PCH_ECORRUPT naming what is
** wrong (magic, position, length mismatch, protobuf), PCH_EUNSUPPORTED (schema types,
** nested fields). On error *out is NULL. */
int pch_lance__manifest_decode_file(pch_lance_manifest **out, pch_ctx *ctx,
                                    const uint8_t *p, size_t len, pch_error *err);

/* Manifest file names (§1.2). naming: 1 = V1 "{v}.manifest", 2 = V2 "{u64max-v:020}.manifest".
** out must hold 32 bytes. */
void pch_lance__manifest_name(char out[32], uint64_t version, int naming);
/* Parse a directory entry of _versions/. Returns 0 when name does not end in ".manifest"
** (ignored), 1 or 2 (the naming scheme) with *version_out set, or PCH_ECORRUPT for a
** ".manifest" name that is not a valid version number. */
int pch_lance__manifest_parse_name(const char *name, uint64_t *version_out, pch_error *err);

/* Versions present in <dataset>/_versions, sorted ascending. *naming_out: 1 or 2 (0 when
** no manifest). Mixing V1 and V2 names is PCH_ECORRUPT. No _versions/ or no manifest:
** PCH_ENOTFOUND. *out allocated with the ctx allocator. */
int pch_lance__list_versions(pch_ctx *ctx, const char *dataset, uint64_t **out, size_t *n_out,
                             int *naming_out, pch_error *err);
/* Read and decode the manifest of `version` (0 = latest) of the dataset. */
int pch_lance__load_manifest(pch_lance_manifest **out, pch_ctx *ctx, const char *dataset,
                             uint64_t version, int *naming_out, pch_error *err);

/* JSON helpers shared by schema.c and rowjson.c. */
/* Append s[0..n) as a JSON string literal: escapes like JSON.stringify (", \, control
** characters), invalid UTF-8 sequences become U+FFFD. */
int pch_lance__json_put_string(pch_buf *b, const void *s, size_t n);
/* Shortest decimal text that reads back as the same double (or float when is_f32);
** NaN/±inf as the strings "NaN", "Infinity", "-Infinity" (as the oracle prints them). */
int pch_lance__json_put_float(pch_buf *b, double v, bool is_f32);

/* Schema equality for APPEND: same names, types, nullability, in order. On mismatch err
** names the first difference. */
int pch_lance__schema_check_same(const pch_lance_schema *want, const pch_lance_schema *have,
                                 pch_error *err);

#endif
