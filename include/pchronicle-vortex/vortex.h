/* Public API of the Vortex side of pChronicle (pch_vx_ prefix): dtypes, in-memory canonical
** arrays, a file writer with a caller-driven chunking strategy and a sampling compressor,
** and a validating reader with projection, row ranges, selections, zone-map pruning, a
** segment cache and coalesced reads. Format: shared/specs/vortex-format.md (file format
** version 1, the stable core encodings of edition 2025.05 plus vortex.zstd).
**
** Thread rule: every handle is used by one thread at a time. A pch_vx_dtype is immutable
** once built and may be shared read-only. Errors: PCH_ECORRUPT (bytes break the format),
** PCH_EUNSUPPORTED (valid but not implemented here; unknown ids fail closed), PCH_EINVAL,
** PCH_ENOMEM, PCH_EIO, PCH_ELIMIT. */
#ifndef PCHRONICLE_VORTEX_H
#define PCHRONICLE_VORTEX_H

#include <stdbool.h>
#include <stdio.h>
#include "pchronicle/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- dtypes (spec §2.4, §3) */

/* Kinds carry the FlatBuffer union tags of DType. */
typedef enum pch_vx_kind {
    PCH_VX_NULL = 1, PCH_VX_BOOL = 2, PCH_VX_PRIMITIVE = 3, PCH_VX_DECIMAL = 4,
    PCH_VX_UTF8 = 5, PCH_VX_BINARY = 6, PCH_VX_STRUCT = 7, PCH_VX_LIST = 8,
    PCH_VX_EXTENSION = 9, PCH_VX_FIXED_SIZE_LIST = 10
} pch_vx_kind;

/* PType numbering of the format (spec §2.4). */
typedef enum pch_vx_ptype {
    PCH_VX_U8 = 0, PCH_VX_U16, PCH_VX_U32, PCH_VX_U64, PCH_VX_I8, PCH_VX_I16, PCH_VX_I32,
    PCH_VX_I64, PCH_VX_F16, PCH_VX_F32, PCH_VX_F64
} pch_vx_ptype;

/* A dtype tree. Build with the constructors below (or pch_vx_dtype_parse); free the root
** with pch_vx_dtype_free. Fields are read-only views for callers. */
typedef struct pch_vx_dtype pch_vx_dtype;
struct pch_vx_dtype {
    uint8_t kind;              /* pch_vx_kind */
    uint8_t nullable;          /* 0/1; Null is always nullable; Extension follows storage */
    uint8_t ptype;             /* PRIMITIVE */
    uint8_t precision;         /* DECIMAL 1..76 */
    int8_t scale;              /* DECIMAL */
    uint32_t n_fields;         /* STRUCT */
    char **names;              /* STRUCT: n_fields NUL-terminated UTF-8 names */
    pch_vx_dtype **fields;     /* STRUCT: n_fields */
    pch_vx_dtype *elem;        /* LIST/FIXED_SIZE_LIST element; EXTENSION storage */
    uint32_t fsl_size;         /* FIXED_SIZE_LIST */
    char *ext_id;              /* EXTENSION id, e.g. "vortex.timestamp" */
    uint8_t *ext_meta;         /* EXTENSION metadata bytes */
    size_t ext_meta_len;
    pch_ctx *ctx;              /* allocator owner */
};

/* Parse the schema syntax used by the CLI and tests:
**   type   := name ['?']            '?' = nullable
**   name   := null | bool | u8..u64 | i8..i64 | f16 | f32 | f64 | utf8 | binary
**           | decimal(P,S) | list<type> | fsl<type,N> | struct<field,...>
**           | ext<"id",type>         (extension with empty metadata)
**   field  := ident ':' type         a top-level schema is "field,field,..." (a struct)
** *out owned by the caller. Errors: PCH_EINVAL naming the offset, PCH_ENOMEM. */
PCH_API int pch_vx_dtype_parse(pch_vx_dtype **out, pch_ctx *ctx, const char *text,
                               pch_error *err);
/* Format in the same syntax (a struct root prints as struct<...>). Appends to *out
** (malloc'd with the ctx allocator, NUL-terminated; caller frees with pch_free). */
PCH_API int pch_vx_dtype_format(char **out, const pch_vx_dtype *dt, pch_error *err);
PCH_API int pch_vx_dtype_clone(pch_vx_dtype **out, const pch_vx_dtype *dt, pch_error *err);
PCH_API int pch_vx_dtype_equal(const pch_vx_dtype *a, const pch_vx_dtype *b);
PCH_API void pch_vx_dtype_free(pch_vx_dtype *dt);
/* Width in bytes of a ptype (1..8). */
PCH_API unsigned pch_vx_ptype_width(unsigned ptype);
PCH_API const char *pch_vx_ptype_name(unsigned ptype);
/* Byte width of a decimal's values for its precision (1,2,4,8,16,32). */
PCH_API unsigned pch_vx_decimal_width(unsigned precision);

/* ---------------------------------------------------------------- canonical arrays */

/* A decoded (canonical) array. Owns its buffers; borrows its dtype (which must outlive it).
**  NULL: nothing.  BOOL: data = LSB-first bits.  PRIMITIVE: data = len * width LE values.
**  DECIMAL: data = len * pch_vx_decimal_width(precision) LE two's-complement values.
**  UTF8/BINARY: offsets (len+1, from 0) into data.  STRUCT: children = fields (each len).
**  LIST: offsets (len+1) into children[0].  FIXED_SIZE_LIST: children[0] has len*size.
**  EXTENSION: children[0] = storage.  validity: LSB-first bits, 1 = valid; NULL = all valid.
** Null slots hold zero / empty values. */
typedef struct pch_vx_array pch_vx_array;
struct pch_vx_array {
    const pch_vx_dtype *dtype;
    uint64_t len;
    uint8_t *validity;
    uint8_t *data;
    size_t data_len;
    int64_t *offsets;
    uint32_t n_children;
    pch_vx_array **children;
    pch_ctx *ctx;
    /* A utf8/binary array the decoder gathered from a vortex.dict encoding keeps its
    ** dictionary beside the values (RFC-0006 §13.3: scans that group or filter on the codes
    ** test each distinct value once): row i is row dict_codes[i] of dict_values, or null
    ** where dict_codes[i] == UINT32_MAX. NULL otherwise; arrays derived from this one
    ** (take, slice, concat) do not carry it. A scan that asked for codes only
    ** (pch_vx_scan_options.text_codes) gets such arrays with offsets and data NULL: the
    ** codes are then the only form of the values (pch_vx_row_bytes reads through them). */
    uint32_t *dict_codes;
    pch_vx_array *dict_values;
};

PCH_API void pch_vx_array_free(pch_vx_array *a);
PCH_API int pch_vx_array_is_valid(const pch_vx_array *a, uint64_t i);
/* Checked row access for readers of decoded arrays (a NULL array or a row past its end reads
** as absent): row i present and valid; a list's element array; list row i as [*b, *e) inside
** its element array (false when a is not a list or the offsets are out of range); the bytes
** of a valid utf8/binary row; the bits of an integer row widened to 64 (signed types
** reinterpreted by the caller). */
PCH_API bool pch_vx_row_valid(const pch_vx_array *a, uint64_t i);
PCH_API const pch_vx_array *pch_vx_list_items(const pch_vx_array *a);
PCH_API bool pch_vx_list_range(const pch_vx_array *a, uint64_t i, uint64_t *b, uint64_t *e);
PCH_API bool pch_vx_row_bytes(const pch_vx_array *a, uint64_t i, const char **p, size_t *n);
PCH_API uint64_t pch_vx_row_uint(const pch_vx_array *a, uint64_t i);
/* Value equality of two arrays of equal dtype (used by tests and round trips). */
PCH_API int pch_vx_array_equal(const pch_vx_array *a, const pch_vx_array *b);
/* BLAKE3 of row `row` of a in a canonical form that depends on its values only, never on
** how they were encoded or sliced (docs/vortex-projection.md §6 "Row digests"): equal rows of
** equal dtypes have equal digests, so a writer's row and a reader's decoded copy compare. */
PCH_API void pch_vx_row_digest(const pch_vx_array *a, uint64_t row, uint8_t out[32]);
/* Append row i as JSON to out (NUL-terminated, ctx-allocated growing string with *len):
** int64/uint64 exact, floats shortest round-trip (NaN/inf as strings), binary as
** {"base64":"..."}, null as null, structs as objects, lists as arrays. */
typedef struct pch_vx_text { char *ptr; size_t len, cap; pch_ctx *ctx; int oom; } pch_vx_text;
PCH_API int pch_vx_array_row_json(pch_vx_text *out, const pch_vx_array *a, uint64_t i);
PCH_API void pch_vx_text_dispose(pch_vx_text *t);

/* Builder: append values in row order. Obtain the builder of a struct field / list element /
** fsl element / extension storage with pch_vx_builder_child (borrowed, same lifetime).
** Lists: append elements to the child, then pch_vx_builder_append_valid(list).
** Structs: append one value to every field, then append_valid(struct). append_null on a
** struct, list or fsl fills children with nulls/zeros as needed. */
typedef struct pch_vx_builder pch_vx_builder;
PCH_API int pch_vx_builder_new(pch_vx_builder **out, pch_ctx *ctx, const pch_vx_dtype *dt,
                               pch_error *err);
PCH_API void pch_vx_builder_free(pch_vx_builder *b);
PCH_API pch_vx_builder *pch_vx_builder_child(pch_vx_builder *b, uint32_t i);
PCH_API const pch_vx_dtype *pch_vx_builder_dtype(const pch_vx_builder *b);
PCH_API int pch_vx_builder_append_null(pch_vx_builder *b, pch_error *err);
PCH_API int pch_vx_builder_append_valid(pch_vx_builder *b, pch_error *err);
PCH_API int pch_vx_builder_append_bool(pch_vx_builder *b, int v, pch_error *err);
PCH_API int pch_vx_builder_append_int(pch_vx_builder *b, int64_t v, pch_error *err);
PCH_API int pch_vx_builder_append_uint(pch_vx_builder *b, uint64_t v, pch_error *err);
PCH_API int pch_vx_builder_append_float(pch_vx_builder *b, double v, pch_error *err);
PCH_API int pch_vx_builder_append_bytes(pch_vx_builder *b, const void *p, size_t n,
                                        pch_error *err);
/* Decimal: little-endian two's complement, any length up to 32 (sign-extended). */
PCH_API int pch_vx_builder_append_decimal(pch_vx_builder *b, const uint8_t *le, size_t n,
                                          pch_error *err);
/* Append n non-null values to a primitive builder at once: u32 values (for u8..u64 and
** i8..i64 columns, range-checked) or doubles (f32/f64 columns). Errors as the single forms. */
PCH_API int pch_vx_builder_append_u32s(pch_vx_builder *b, const uint32_t *v, size_t n,
                                       pch_error *err);
PCH_API int pch_vx_builder_append_doubles(pch_vx_builder *b, const double *v, size_t n,
                                          pch_error *err);
/* Append rows [begin, end) of the decoded array a, whose dtype must equal the builder's, as
** they are (values, nulls, nested lists and structs; a dictionary array's values). PCH_EINVAL
** for another dtype or invalid UTF-8, PCH_ECORRUPT for offsets out of range. */
PCH_API int pch_vx_builder_append_range(pch_vx_builder *b, const pch_vx_array *a, uint64_t begin, uint64_t end,
                                        pch_error *err);
PCH_API uint64_t pch_vx_builder_len(const pch_vx_builder *b);
/* Move the built rows out (*out owned by the caller); the builder restarts empty. */
PCH_API int pch_vx_builder_finish(pch_vx_builder *b, pch_vx_array **out, pch_error *err);

/* ---------------------------------------------------------------- writer */

typedef struct pch_vx_write_options {
    unsigned version;          /* PCH_VX_WRITE_OPTIONS_VERSION */
    int compress;              /* 1 (default): sampling compressor per chunk; 0: canonical */
    uint32_t zone_len;         /* rows per zone for vortex.stats zone maps; 0 = none */
    int dict_layout;           /* 1: utf8/binary lanes that dictionary-encode well become
                               ** a vortex.dict layout (values once, codes per chunk) */
    int split_structs;         /* 1 (default): non-nullable nested structs become struct
                               ** layouts, so each leaf is its own lane (lane groups) */
    uint32_t sample_rows;      /* compressor sample size (default 1024 rows) */
    uint32_t threads;          /* lanes of one chunk encoded by this many threads (options
                               ** version 2; 0 or 1 = the calling thread). The file is
                               ** byte-identical for every value. */
    uint32_t frame_bytes;      /* options version 3: vortex.zstd arrays are cut into frames of
                               ** about this many payload bytes, each holding whole rows of
                               ** the chunk (a row-range read decompresses only its frames);
                               ** 0 = one frame per array */
    uint32_t *fsst_memo;       /* options version 4: the compressor's per-lane FSST memo (a
                               ** lane that keeps losing to other encodings stops training
                               ** FSST) kept by the caller, so that it carries over from one
                               ** file of a build to the next: fsst_memo_len >= 2 x the lanes,
                               ** zeroed before the first file; NULL = each file starts afresh.
                               ** The choice of FSST depends on it, so files can differ. */
    size_t fsst_memo_len;
    uint32_t zstd_dict_bytes;  /* options version 5: a framed vortex.zstd array (frame_bytes) of
                               ** at least PCH_VX_ZSTD_DICT_RATIO x this many payload bytes
                               ** trains a zstd dictionary of at most this size, shared by its
                               ** frames (ZstdMetadata.dictionary_size: standard Vortex); frames
                               ** of 64 KiB lose the repeats a single frame would share, and the
                               ** dictionary wins much of that back. 0 = none. */
    uint32_t frame_rows;       /* options version 6: in a lane of a few bytes a row, a frame also
                               ** closes once it holds this many rows of the chunk and
                               ** PCH_VX_FRAME_MIN payload bytes: what a one-row read of such a
                               ** lane costs then follows its row, not the chunk. 0 = by bytes */
    int plain_offsets;         /* options version 7: a framed list's top-level offsets stay plain
                               ** (random access, no 1,024-value FastLanes block a one-row read
                               ** must take whole; chunks of many rows: large clusters) */
    uint32_t frame_row_ratio;  /* options version 8: with row weights (pch_vx_writer_write_rows), a
                               ** frame holding a row of weight W < frame_bytes / this ratio
                               ** closes before it exceeds max(PCH_VX_FRAME_SMALL_MIN, ratio x W)
                               ** bytes: a small row's frames follow its own size, not the
                               ** frame size (a one-row read of it). 0 = off */
} pch_vx_write_options;
#define PCH_VX_WRITE_OPTIONS_VERSION 8
#define PCH_VX_WRITE_OPTIONS_INIT { PCH_VX_WRITE_OPTIONS_VERSION, 1, 8192, 1, 1, 1024, 1, 0, NULL, 0, 0, 0, 0, 0 }
#define PCH_VX_FRAME_SMALL_MIN 4096u
#define PCH_VX_FRAME_MIN 1024u
#define PCH_VX_ZSTD_DICT_RATIO 64

/* Per-lane report (RFC-0006 §8.1). Strings borrowed from the writer. */
typedef struct pch_vx_enc_count {
    const char *name;          /* an encoding tree, e.g. "vortex.list(vortex.zstd,vortex.constant)" */
    uint64_t n;                /* chunks encoded with it */
} pch_vx_enc_count;

typedef struct pch_vx_lane_report {
    const char *path;          /* dotted lane path, e.g. "steps.message" */
    const char *encodings;     /* chosen encodings with counts, e.g. "fastlanes.for x3", and
                               ** "[vortex.dict layout: D values]" for a dictionary lane */
    const pch_vx_enc_count *encs;  /* the same, structured (n_encs entries, first-use order) */
    size_t n_encs;
    int dict_layout;           /* the lane has a file-wide vortex.dict layout ... */
    uint64_t dict_values;      /* ... of this many values */
    uint64_t rows;
    uint64_t chunks;
    uint64_t logical_bytes;    /* canonical size of the values */
    uint64_t stored_bytes;     /* bytes of the segments written for this lane */
    double encode_seconds;
} pch_vx_lane_report;

typedef struct pch_vx_writer pch_vx_writer;
/* dt: the file dtype (copied). A non-nullable struct gives one lane per field. */
PCH_API int pch_vx_writer_open(pch_vx_writer **out, pch_ctx *ctx, const pch_vx_dtype *dt,
                               const pch_vx_write_options *opts, pch_error *err);
/* Streaming writer: segments go to a staging file "<dir>/.<name>.tmp-<pid>-<rand>" beside
** path as chunks complete (memory bounded by one chunk, a 1 MiB write buffer, the segment
** map and the per-lane dictionary and zone-map state, not by the file size).
** pch_vx_writer_finish writes the footer, fsyncs, renames the staging file over path (an
** existing file is replaced) and fsyncs the directory; freeing the writer before a
** successful finish removes the staging file, so nothing partial is published.
** pch_vx_writer_bytes gives an empty view for such a writer. Errors: as open, PCH_EIO. */
PCH_API int pch_vx_writer_open_path(pch_vx_writer **out, pch_ctx *ctx, const pch_vx_dtype *dt,
                                    const char *path, const pch_vx_write_options *opts,
                                    pch_error *err);
/* Append one chunk (rows of the file dtype). Chunk boundaries are exactly the calls: the
** writer never splits or merges them, so a caller can keep a trajectory within one chunk
** (RFC-0006 §7). An empty chunk is ignored. */
PCH_API int pch_vx_writer_write(pch_vx_writer *w, const pch_vx_array *chunk, pch_error *err);
/* pch_vx_writer_write with a weight for each row of chunk (chunk->len of them, borrowed for the
** call; NULL = none): with frame_row_ratio, the frames holding a row of small weight are cut
** to its size (the caller's measure of a row, e.g. a trajectory's logical bytes). */
PCH_API int pch_vx_writer_write_rows(pch_vx_writer *w, const pch_vx_array *chunk, const uint64_t *row_weights,
                                     pch_error *err);
/* Write the footer. Afterwards (in-memory writer) pch_vx_writer_bytes gives the whole file
** (borrowed, valid until free) and pch_vx_writer_publish writes it atomically. */
PCH_API int pch_vx_writer_finish(pch_vx_writer *w, pch_error *err);
PCH_API pch_bytes pch_vx_writer_bytes(const pch_vx_writer *w);
/* In-memory writers: write the file atomically (staging name, fsync, rename, fsync the
** directory). Streamed writers published at finish: PCH_OK for their own path, else EINVAL. */
PCH_API int pch_vx_writer_publish(pch_vx_writer *w, const char *path, pch_error *err);
/* Bytes written so far (the file size once finished). */
PCH_API uint64_t pch_vx_writer_file_bytes(const pch_vx_writer *w);
PCH_API size_t pch_vx_writer_n_lanes(const pch_vx_writer *w);
PCH_API int pch_vx_writer_lane(const pch_vx_writer *w, size_t i, pch_vx_lane_report *out);
PCH_API void pch_vx_writer_free(pch_vx_writer *w);

/* ---------------------------------------------------------------- reader */

typedef enum pch_vx_cmp {
    PCH_VX_CMP_NONE = 0, PCH_VX_CMP_EQ, PCH_VX_CMP_NE, PCH_VX_CMP_LT, PCH_VX_CMP_LE,
    PCH_VX_CMP_GT, PCH_VX_CMP_GE
} pch_vx_cmp;

typedef struct pch_vx_scan_options {
    unsigned version;          /* PCH_VX_SCAN_OPTIONS_VERSION */
    const char *const *columns;/* dotted paths ("a", "a.b" through structs); NULL = all */
    size_t n_columns;
    uint64_t row_begin;        /* [row_begin, row_end); row_end 0 = to the end */
    uint64_t row_end;
    const uint64_t *selection; /* strictly increasing row indices, or NULL */
    size_t n_selection;
    const char *filter_column; /* top-level primitive/utf8/binary column, or NULL */
    pch_vx_cmp filter_op;
    int filter_kind;           /* 0 int (filter_i), 1 uint, 2 float, 3 bytes */
    int64_t filter_i;
    uint64_t filter_u;
    double filter_f;
    const void *filter_bytes;
    size_t filter_bytes_len;
    /* Version 2: NULL, or one flag per column. A flagged column's utf8/binary values that
    ** were encoded as vortex.dict or vortex.constant (at its top level, or as list elements
    ** and struct fields below it) come back as codes only: dict_codes and dict_values set,
    ** offsets and data NULL, validity as usual (RFC-0006 §13.3: a scan that groups or
    ** filters on the codes never builds the strings). Text read otherwise is unchanged. */
    const uint8_t *text_codes;
} pch_vx_scan_options;
#define PCH_VX_SCAN_OPTIONS_VERSION 2   /* version 1 (no text_codes) is still accepted */
#define PCH_VX_SCAN_OPTIONS_INIT { PCH_VX_SCAN_OPTIONS_VERSION, NULL, 0, 0, 0, NULL, 0, NULL, \
                                   PCH_VX_CMP_NONE, 0, 0, 0, 0, NULL, 0, NULL }

typedef struct pch_vx_io_stats {
    uint64_t requests;         /* read calls issued (after coalescing) */
    uint64_t bytes_read;       /* bytes fetched by those calls */
    uint64_t segments_read;    /* segments materialised from reads */
    uint64_t cache_hits;       /* segment requests served by the cache */
    uint64_t zones_total;      /* zones considered by pruning */
    uint64_t zones_pruned;     /* zones skipped by zone maps */
    uint64_t segments_partial; /* segments read in part (pch_vx_file_set_partial_reads) */
    uint64_t tail_requests;    /* of requests: reads of the tail's blocks (a paged open) */
    uint64_t tail_bytes;       /* of bytes_read: those reads' bytes */
} pch_vx_io_stats;

typedef struct pch_vx_file pch_vx_file;
/* Open a file: reads the tail, validates trailer, postscript, dtype, layout and footer
** (every FlatBuffer verified, segment map sorted and in bounds, layout ids known, row counts
** consistent). The chunks of a chunked layout are parsed and validated when a read first
** uses them (the rest of the tree at open; pch_vx_file_check and inspect parse them all), so
** opening costs little more for thousands of chunks. Pre-stable files are rejected with
** PCH_EUNSUPPORTED. */
PCH_API int pch_vx_file_open(pch_vx_file **out, pch_ctx *ctx, const char *path, pch_error *err);
/* Same, with the file's last tail_len bytes (from tail_off to its end) already in memory:
** opening uses them instead of reading them again (a caller that checked the tail's digest
** first reads it once). tail is borrowed only during the call (NULL: read everything, as
** pch_vx_file_open); a file of another size fails with PCH_EINVAL. */
PCH_API int pch_vx_file_open_tail(pch_vx_file **out, pch_ctx *ctx, const char *path, const void *tail,
                                  uint64_t tail_off, size_t tail_len, pch_error *err);
/* The smallest read block of partial reads and paged opens (pch_vx_file_set_partial_reads,
** pch_vx_paged_open.block_bytes). */
#define PCH_VX_BLOCK_MIN 32u
/* Paged open (RFC-0006 §13.4, open costs that do not grow with the file): the file's bytes
** from tail_off to its end (postscript, dtype, layout, footer, and whatever else the writer
** put there) are read in blocks of block_bytes when a read first needs them, each passed to
** check (may be NULL) before any of it is used; block k is the bytes [tail_off + k *
** block_bytes, ...), the last one shorter. The layout and footer FlatBuffers are verified in
** place as they are walked, and a segment's spec is read and checked when the segment is
** first used: opening reads the trailer, the dtype and the layout's top, not the segment map
** or the chunks' layouts of clusters it never reads. chunk_starts (n_chunks + 1 entries
** from 0, non-decreasing; may be NULL): the first row of each chunk and the row count,
** shared by every chunked layout of the file with n_chunks chunks (each chunk is checked
** against them when parsed), so that finding a row's chunk reads no other chunk's layout.
** pch_vx_file_check reads and checks everything. also_off/also_len (version 2; len 0: none):
** a range the caller reads next; on object storage it is fetched together with the tail when
** the tail is one block (concurrently: one round trip for both), and read from those bytes
** later (its reads and checks are the caller's, as for any range). */
#define PCH_VX_PAGED_OPEN_VERSION 2
typedef int (*pch_vx_tail_check_fn)(void *payload, uint32_t block, const uint8_t *bytes, uint64_t len,
                                    pch_error *err);
typedef struct pch_vx_paged_open {
    unsigned version;                  /* PCH_VX_PAGED_OPEN_VERSION */
    uint64_t tail_off;
    uint32_t block_bytes;              /* >= PCH_VX_BLOCK_MIN */
    pch_vx_tail_check_fn check;
    void *payload;
    const uint64_t *chunk_starts;
    uint32_t n_chunks;
    uint64_t also_off, also_len;       /* version 2 */
} pch_vx_paged_open;
PCH_API int pch_vx_file_open_paged(pch_vx_file **out, pch_ctx *ctx, const char *path, const pch_vx_paged_open *o,
                                   pch_error *err);
/* A paged file: read every block of the tail not read yet — for a caller about to read many
** chunks, whose layouts would otherwise come a block per read. With whole (may be NULL) the
** whole tail is read in one call and checked by whole in one pass instead of block by block
** (one hash of 200 KB is faster than 50 of 4 KiB); a failed check leaves no block of it
** present. A file opened otherwise: nothing to do. */
typedef int (*pch_vx_tail_whole_fn)(void *payload, const uint8_t *bytes, uint64_t len, pch_error *err);
PCH_API int pch_vx_file_read_tail(pch_vx_file *f, pch_vx_tail_whole_fn whole, void *payload, pch_error *err);
/* A paged file whose every tail block has been read and checked: on object storage, keep the
** tail in the local tail cache (docs/object-storage.md "The tail cache"), so that the next
** process opens the file without a request. Anything else: nothing. */
PCH_API void pch_vx_file_keep_tail(pch_vx_file *f);
/* Same over bytes in memory (borrowed; must outlive the handle). */
PCH_API int pch_vx_file_open_mem(pch_vx_file **out, pch_ctx *ctx, const void *data, size_t len,
                                 pch_error *err);
PCH_API void pch_vx_file_free(pch_vx_file *f);
PCH_API const pch_vx_dtype *pch_vx_file_dtype(const pch_vx_file *f);   /* borrowed */
PCH_API uint64_t pch_vx_file_row_count(const pch_vx_file *f);
/* Read rows. *out: a struct array of the projected columns (dtype borrowed from *dt_out,
** both owned by the caller: free the array first, then the dtype). */
PCH_API int pch_vx_file_scan(pch_vx_file *f, const pch_vx_scan_options *opts,
                             pch_vx_array **out, pch_vx_dtype **dt_out, pch_error *err);
/* Zone-map pruning of one comparison (o->filter_column, filter_op and its literal; the rest
** of o is ignored) from the column's zone table alone, no data segment read: (*pruned)[z] = 1
** when zone z (rows [z * zone_len, (z + 1) * zone_len)) holds no row that satisfies it.
** *pruned = NULL and *n_zones = 0 when the column has no zone map this reader understands
** (nothing can be pruned). *pruned: ctx allocator. */
PCH_API int pch_vx_file_zone_prune(pch_vx_file *f, const pch_vx_scan_options *o, uint8_t **pruned,
                                   uint64_t *n_zones, uint32_t *zone_len, pch_error *err);
/* Decode every segment and array of the file (strict full validation). */
PCH_API int pch_vx_file_check(pch_vx_file *f, pch_error *err);
PCH_API void pch_vx_file_io_stats(const pch_vx_file *f, pch_vx_io_stats *out);
PCH_API void pch_vx_file_reset_io_stats(pch_vx_file *f);
/* Segments: the file's segment map (index order), for a caller that records per-segment
** digests. PCH_EINVAL past the last one; after a paged open, reading the spec can fail. */
PCH_API uint32_t pch_vx_file_n_segments(const pch_vx_file *f);
PCH_API int pch_vx_file_segment(pch_vx_file *f, uint32_t i, uint64_t *off, uint64_t *len, pch_error *err);
/* Called with the exact bytes of every segment read from the file, before anything of it is
** decoded or cached; a negative return fails the read with that code (err set by fn). */
typedef int (*pch_vx_segment_check_fn)(void *payload, uint32_t segment, uint64_t off, const uint8_t *bytes,
                                       uint64_t len, pch_error *err);
PCH_API void pch_vx_file_set_segment_check(pch_vx_file *f, pch_vx_segment_check_fn fn, void *payload);
/* Partial segment reads (RFC-0006 §13.4: a point read reads what its own rows need). With
** block_bytes > 0, a read of one run of rows from a segment longer than two blocks reads the
** segment's tail (its array flatbuffer) and then only the blocks holding the buffers the rows
** decode (for a multi-frame vortex.zstd, its frames for those rows). Block k of a segment is
** its bytes [k * block_bytes, (k + 1) * block_bytes), the last one shorter; fn (may be NULL)
** checks each block read before any of it is used. With a segment check installed and no fn,
** segments are always read whole (every byte read stays checked). 0 turns it off (default).
** PCH_EINVAL for a block under PCH_VX_BLOCK_MIN bytes. Clears the segment cache. */
typedef int (*pch_vx_block_check_fn)(void *payload, uint32_t segment, uint32_t block, const uint8_t *bytes,
                                     uint64_t len, pch_error *err);
PCH_API int pch_vx_file_set_partial_reads(pch_vx_file *f, uint32_t block_bytes, pch_vx_block_check_fn fn,
                                          void *payload, pch_error *err);
/* Segment reads at most this many bytes apart are one read (default 64 KiB). */
PCH_API void pch_vx_file_set_coalesce_gap(pch_vx_file *f, uint64_t bytes);
/* On object storage, a read that misses what was fetched before fetches at least this many
** bytes (default 256 KiB: a point read's small neighbouring reads cost one request); 0:
** exactly the coalesced segment reads (a scan's, planned per cluster). A local file: nothing. */
PCH_API void pch_vx_file_set_min_fetch(pch_vx_file *f, uint64_t bytes);

/* Bytes [off, off + len) of the file will be read soon: a file on object storage fetches them
** with one request now (so the reads that follow make none); a local file ignores it. */
PCH_API int pch_vx_file_prefetch(pch_vx_file *f, uint64_t off, uint64_t len, pch_error *err);
/* Several such ranges (ranges[2i] offset, ranges[2i+1] length), fetched at once: on object
** storage concurrently, each its own request (nearby ones coalesced by the store); at most
** PCH_VX_PREFETCH_MAX of them not fetched already, the rest ignored. For a scan that reads
** ahead (pch_vx_file_scan_ranges gives a scan's reads): one after another its requests'
** latencies add up. A local file ignores it. */
#define PCH_VX_PREFETCH_MAX 16
PCH_API int pch_vx_file_prefetch_ranges(pch_vx_file *f, const uint64_t *ranges, size_t n, pch_error *err);
/* The reads pch_vx_file_scan would make for opts (columns and a row range; no filter or
** selection): the segments it needs that are not cached, coalesced as it would coalesce
** them, as *n (offset, length) pairs in *ranges (freed with pch_free on the file's context).
** Nothing is read. */
PCH_API int pch_vx_file_scan_ranges(pch_vx_file *f, const pch_vx_scan_options *opts, uint64_t **ranges,
                                    size_t *n, pch_error *err);
/* Read bytes [off, off + len) of the file with one request, pass them to check (may be NULL)
** and keep them: reads inside the range then come from these bytes, with no request (a
** segment check set on the file still runs). For a caller that checks a whole range against
** a digest of its own before any of it is decoded, and wants every later read of it to be the
** bytes it checked (RFC-0006 §9.5). One range is held at a time: a new call replaces it, len 0
** drops it. A failed read or check holds nothing. */
typedef int (*pch_vx_range_check_fn)(void *payload, uint64_t off, const uint8_t *bytes, uint64_t len, pch_error *err);
PCH_API int pch_vx_file_hold(pch_vx_file *f, uint64_t off, uint64_t len, pch_vx_range_check_fn check, void *payload,
                             pch_error *err);
/* Segment cache budget in bytes (default 4 MiB; 0 disables caching). Small on purpose: a
** lane scan reads each segment once, and a larger cache only grows the process (every new
** page a fault: 64 MiB made an RL read of `rl` 1.33x slower and 3.5x larger, measured). */
PCH_API void pch_vx_file_set_cache_bytes(pch_vx_file *f, size_t bytes);
/* Human-readable report: versions, segments, layout tree with dtypes, encodings and bytes
** per lane, zone stats. */
PCH_API int pch_vx_file_inspect(pch_vx_file *f, FILE *out, pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
