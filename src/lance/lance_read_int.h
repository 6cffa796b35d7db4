/* Private interface between the Lance data file reader (file_reader.c) and its page
** decoders (decode_*.c). lance-format.md §2.3 (2.0 ArrayEncoding), §2.4 (2.1 structural
** layouts and compressive encodings). Every decoder works on page buffers already read
** into memory and validated to lie inside the file; every length read from those bytes is
** checked before use. Unknown encodings fail with PCH_EUNSUPPORTED naming them. */
#ifndef PCH_LANCE_READ_INT_H
#define PCH_LANCE_READ_INT_H

#include "lance/lance_int.h"

/* Bytes per value of a fixed-width type, 0 for variable width (bool: 1). */
size_t pch_lance__type_bytes(pch_lance_type t);
/* Append rows [start, start+n) of src to dst (same type). */
int pch_lance__colbuf_append_rows(pch_lance_colbuf *dst, const pch_lance_colbuf *src,
                                  size_t start, size_t n);

/* Decoded values (no validity): fixed width (bits = 1, 8, 16, 32 or 64; bits == 1 keeps one
** 0/1 byte per value) or variable width (bits == 0: n + 1 u64 offsets into data,
** offsets[0] == 0). */
typedef struct pch_lvals {
    size_t n;
    unsigned bits;
    pch_buf fixed;   /* n * max(bits/8, 1) bytes */
    pch_buf offs;    /* n + 1 u64 (variable) */
    pch_buf data;    /* variable bytes */
} pch_lvals;

void pch_lvals_init(pch_lvals *v, pch_ctx *ctx);
void pch_lvals_clear(pch_lvals *v);
void pch_lvals_dispose(pch_lvals *v);

/* One page as the file reader hands it to a decoder. */
typedef struct pch_lance_page_in {
    pch_ctx *ctx;
    const pch_bytes *bufs;  /* page buffers, in Page.buffer_offsets order */
    size_t n_bufs;
    uint64_t n_rows;        /* Page.length */
    const uint8_t *enc;     /* PageLayout (2.1) or ArrayEncoding (2.0) message bytes */
    size_t enc_len;
    pch_lance_type type;    /* the column's logical type */
    const char *where;      /* "column 'x' page 3" for messages */
} pch_lance_page_in;

/* Decode every row of the page, appending n_rows rows to out (whose type is in->type). */
int pch_lance__decode_page_v21(pch_lance_colbuf *out, const pch_lance_page_in *in,
                               pch_error *err);
int pch_lance__decode_page_v20(pch_lance_colbuf *out, const pch_lance_page_in *in,
                               pch_error *err);

/* ---- shared helpers (decode_util.c) ---- */
/* Unpack 1024 values of `width` bits stored in FastLanes transposed order in words of T bits
** (T = 8, 16, 32, 64); `in` holds 1024 * width / 8 bytes. */
void pch_lance__fl_unpack(const uint8_t *in, unsigned t_bits, unsigned width, uint64_t *out);
/* Decompress one buffer compressed with lance's general buffer compressors: scheme
** PCH_LANCE_CMP_ZSTD (raw zstd frame or u64 LE length + frame), PCH_LANCE_CMP_LZ4 (u32 LE
** length + LZ4 block). Appends to out; refuses outputs above max_page_bytes. */
enum { PCH_LANCE_CMP_NONE = 0, PCH_LANCE_CMP_LZ4 = 1, PCH_LANCE_CMP_ZSTD = 2 };
int pch_lance__decompress(pch_buf *out, int scheme, const uint8_t *p, size_t n, pch_ctx *ctx,
                          const char *where, pch_error *err);
/* FSST: decode n values of `in` (variable width) with a lance symbol table into out. */
int pch_lance__fsst_decode(pch_lvals *out, const pch_lvals *in, const uint8_t *table,
                           size_t table_len, pch_ctx *ctx, const char *where, pch_error *err);
/* Decode one FSST-compressed string, appending to out. */
typedef struct pch_fsst_table {
    uint64_t sym[256];
    uint8_t len[256];
    unsigned n;
    bool enabled;
} pch_fsst_table;
int pch_lance__fsst_table(pch_fsst_table *t, const uint8_t *p, size_t n, const char *where,
                          pch_error *err);
int pch_lance__fsst_one(pch_buf *out, const pch_fsst_table *t, const uint8_t *p, size_t n,
                        const char *where, pch_error *err);

/* n fixed values of `bits` (1, 8, 16, 32, 64) from p into out (bits == 1: LSB-first bitmap,
** unpacked to one byte per value). */
int pch_lance__load_fixed(pch_lvals *out, const uint8_t *p, size_t len, size_t n, unsigned bits,
                          const char *where, pch_error *err);
/* Find the last occurrence of LEN field `num` in a message; returns 1 found, 0 absent, <0. */
int pch_lance__pb_find(const uint8_t *p, size_t n, uint32_t num, pch_pb_field *out,
                       const char *what, pch_error *err);
/* Emit decoded values into a column: validity (NULL = all valid, else one byte per value,
** 1 = valid) and, for dictionary pages, `dict` (indices in v). */
int pch_lance__emit(pch_lance_colbuf *out, const pch_lvals *v, const uint8_t *validity,
                    const pch_lvals *dict, const char *where, pch_error *err);

#endif
