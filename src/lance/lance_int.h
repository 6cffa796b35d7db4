/* Private interface between the files of src/lance/ (SQLite btreeInt.h style):
**   pb.c          protobuf wire codec (pb.h)
**   schema.c      pch_lance_schema API, SCHEMA.json, lance.file.Field/Schema protobuf
**   file_writer.c Lance data file writer, format 2.1 (mini-block, full-zip) and 2.0
**   file_reader.c Lance data file reader, formats 2.0 and 2.1 (every encoding lance 8.0
**                 emits for the supported types), decoders in decode_*.c
**   manifest.c    lance.table.Manifest encode/decode, manifest framing (§1.3/§1.4)
**   dataset.c     versions, commit (create-if-absent), writer/reader/scanner public API
**   rowjson.c     pch_lance_row_to_json
** File format references: /shared/specs/lance-format.md §2 (data files), §1 (table). */
#ifndef PCH_LANCE_INT_H
#define PCH_LANCE_INT_H

#include "core/core.h"
#include "lance/pb.h"
#include "pchronicle/lance.h"

/* ---- owned column storage backing a pch_lance_column ---- */
typedef struct pch_lance_colbuf {
    pch_lance_type type;
    size_t n_rows;
    bool has_nulls;     /* validity holds n_rows bytes when true */
    pch_buf validity;   /* 1 byte per row, 1 = valid */
    pch_buf values;     /* fixed width: n_rows * width bytes (bool: 1 byte per row) */
    pch_buf offsets;    /* variable width: (n_rows + 1) u64, offsets[0] == 0 */
    pch_buf data;       /* variable width: value bytes */
} pch_lance_colbuf;

void pch_lance__colbuf_init(pch_lance_colbuf *cb, pch_ctx *ctx, pch_lance_type type);
void pch_lance__colbuf_reset(pch_lance_colbuf *cb);   /* n_rows = 0, keeps capacity */
void pch_lance__colbuf_dispose(pch_lance_colbuf *cb);
/* Borrowed view; valid until the colbuf changes. */
void pch_lance__colbuf_view(const pch_lance_colbuf *cb, pch_lance_column *out);
/* Append helpers used by decoders (validity is materialised lazily on the first null). */
int pch_lance__colbuf_append_null(pch_lance_colbuf *cb);
int pch_lance__colbuf_append_fixed(pch_lance_colbuf *cb, const void *v, bool valid);
int pch_lance__colbuf_append_var(pch_lance_colbuf *cb, const void *p, size_t n, bool valid);

/* ---- schema <-> protobuf (lance.file.Field, lance-format.md §1.6) ---- */
/* Append every field as a repeated message with number field_no (Manifest.fields = 1,
** Schema.fields = 1), in pre-order, with logical_type, encoding, extension_name and
** metadata as official Lance writes them. */
int pch_lance__schema_encode_fields(pch_buf *b, uint32_t field_no, const pch_lance_schema *s);
/* Append schema-level metadata as map<string,bytes> entries with number field_no
** (Manifest.schema_metadata = 5, Schema.metadata = 5). */
int pch_lance__schema_encode_metadata(pch_buf *b, uint32_t field_no, const pch_lance_schema *s);
/* Decode one lance.file.Field message and append it to s. Nested (parent_id != -1),
** unknown logical types and anything else we do not support → PCH_EUNSUPPORTED naming
** the field and type. */
int pch_lance__schema_decode_field(pch_lance_schema *s, const uint8_t *p, size_t len,
                                   pch_error *err);
/* Decode one map<string,bytes> entry and add it as schema metadata. */
int pch_lance__schema_decode_metadata(pch_lance_schema *s, const uint8_t *p, size_t len,
                                      pch_error *err);

/* ---- data file writer ---- */
typedef struct pch_lance_file_writer pch_lance_file_writer;
/* Create the data file at path (O_EXCL). Field ids in the schema are written to the
** FileDescriptor. */
int pch_lance__file_writer_open(pch_lance_file_writer **out, pch_ctx *ctx, const char *path,
                                const pch_lance_schema *schema,
                                const pch_lance_write_options *opts, pch_error *err);
int pch_lance__file_writer_write(pch_lance_file_writer *w, const pch_lance_batch *batch,
                                 pch_error *err);
/* Buffered rows so far (to decide when to start a new file). */
uint64_t pch_lance__file_writer_rows(const pch_lance_file_writer *w);
/* Flush pages, write FileDescriptor, column metadata, CMO/GBO tables, footer; fsync. */
int pch_lance__file_writer_finish(pch_lance_file_writer *w, uint64_t *rows_out,
                                  uint64_t *size_out, pch_error *err);
/* Free; a file that was not finished is unlinked. */
void pch_lance__file_writer_free(pch_lance_file_writer *w);

/* ---- data file reader ---- */
typedef struct pch_lance_file pch_lance_file;
/* Open and validate footer, offset tables, FileDescriptor and every column's metadata
** (before any value is decoded). expected_size = DataFile.file_size_bytes or 0. */
int pch_lance__file_open(pch_lance_file **out, pch_ctx *ctx, const char *path,
                         uint64_t expected_size, pch_error *err);
void pch_lance__file_free(pch_lance_file *f);
uint64_t pch_lance__file_num_rows(const pch_lance_file *f);
/* "2.0" or "2.1" (2.2 files are rejected as unsupported). */
const char *pch_lance__file_version(const pch_lance_file *f);
/* The file's own schema (FileDescriptor). Borrowed. */
const pch_lance_schema *pch_lance__file_schema(const pch_lance_file *f);
uint32_t pch_lance__file_num_columns(const pch_lance_file *f);
/* Sum of the page buffer sizes of column `column` (0 when out of range). */
uint64_t pch_lance__file_column_bytes(const pch_lance_file *f, uint32_t column);
/* Decode rows [row_start, row_start+n_rows) of column `column` as `type`, appending to
** out. Validates every page before decoding it; unknown encodings fail closed with
** PCH_EUNSUPPORTED naming the encoding. */
int pch_lance__file_read(pch_lance_file *f, uint32_t column, pch_lance_type type,
                         uint64_t row_start, uint64_t n_rows, pch_lance_colbuf *out,
                         pch_error *err);

/* Logical type string of lance.file.Field for our types ("int64", "string", "json", …). */
const char *pch_lance__logical_type(pch_lance_type t);

#endif
