/* Page encoders shared by the Lance data file writer (file_writer.c) and its encoders
** (encode_21.c: format 2.1 structural layouts; encode_20.c: format 2.0 ArrayEncodings).
** lance-format.md §2.3, §2.4, §2.5. Files inside src/lance/ only.
**
** A page encoder turns one page of one column (rows already validated by the writer) into
** up to two page buffers plus the serialized google.protobuf.Any that goes into
** ColumnMetadata.Page.encoding.direct. It never does I/O; the writer places the buffers at
** 64-byte aligned file offsets. */
#ifndef PCH_LANCE_WRITE_INT_H
#define PCH_LANCE_WRITE_INT_H

#include "lance/lance_int.h"

/* One page of one column, as the writer buffered it. */
typedef struct pch_lance_page_in {
    pch_lance_type type;
    size_t n_rows;            /* >= 1 */
    size_t n_nulls;           /* rows with validity[i] == 0 */
    const uint8_t *validity;  /* NULL when n_nulls == 0, else n_rows bytes (1 = valid) */
    const uint8_t *values;    /* fixed width: n_rows * width bytes; bool: n_rows bytes 0/1 */
    const uint64_t *offsets;  /* variable width: n_rows + 1 offsets, offsets[0] == 0 */
    const uint8_t *data;      /* variable width: offsets[n_rows] bytes */
} pch_lance_page_in;

#define PCH_LANCE_PAGE_MAX_BUFS 3   /* mini-block with a dictionary: meta, chunks, dictionary */

/* Encoder output and scratch; reused from page to page so that memory stays bounded by
** the page size (buffers are cleared, never shrunk). */
typedef struct pch_lance_page_out {
    pch_buf bufs[PCH_LANCE_PAGE_MAX_BUFS];
    size_t n_bufs;
    pch_buf any;              /* serialized google.protobuf.Any of the page encoding */
    pch_buf scratch[3];       /* encoder scratch */
    void *zcctx;              /* ZSTD_CCtx, created on first use */
    int zstd_level;           /* < 0: no buffer compression */
    bool page_dict;           /* variable width: try the page dictionary (encode_21.c) */
    pch_buf dict[2];          /* page dictionary scratch: row indices, dictionary block */
    /* what the last call chose (tests, statistics) */
    const char *layout;       /* "mini-block", "mini-block-dict", "full-zip", "all-null",
                              ** "flat", "binary" */
    bool compressed;          /* General{ZSTD} wrapper used */
} pch_lance_page_out;

void pch_lance__page_out_init(pch_lance_page_out *o, pch_ctx *ctx, int zstd_level);
void pch_lance__page_out_dispose(pch_lance_page_out *o);

/* Encode a 2.1 page: mini-block (fixed width; variable width when every value is
** < PCH_LANCE_MINIBLOCK_MAX_VALUE bytes), full-zip (other variable width pages) or
** all-null. Buffer compression General{ZSTD} is used only where it shrinks the page. */
#define PCH_LANCE_MINIBLOCK_MAX_VALUE 256
int pch_lance__encode_page_21(pch_lance_page_out *o, const pch_lance_page_in *in,
                              pch_error *err);
/* Whether a variable-width value can share a mini-block page with others: a non-final
** chunk holds at least two rows, so a value must stay within half a chunk (32 KiB) when
** compressed. Raw values up to PCH_LANCE_CHUNK_SAFE_VALUE bytes always do; larger ones are
** test-compressed (zstd level 1, no better than the page level). The writer gives a value
** that does not fit a page of its own, so that the rows around it keep the compact
** mini-block layout (a page with a value that fits no chunk falls back to full-zip). */
#define PCH_LANCE_CHUNK_SAFE_VALUE 16000u
bool pch_lance__value_fits_chunk(pch_lance_page_out *o, const uint8_t *p, size_t n);
/* Encode a 2.0 page: Nullable{NoNull|SomeNull|AllNull}{Flat} or Binary. */
int pch_lance__encode_page_20(pch_lance_page_out *o, const pch_lance_page_in *in,
                              pch_error *err);

/* Bits per value of a fixed-width type (bool 1), 0 for variable width. */
unsigned pch_lance__type_bits(pch_lance_type t);
/* Offset width in bits of a variable-width type in 2.1 (32 utf8/binary, 64 large/json). */
unsigned pch_lance__type_offset_bits(pch_lance_type t);

/* protobuf helpers for the encoders */
/* Any{type_url, value} */
int pch_lance__pb_any(pch_buf *b, const char *type_url, const pch_buf *value);

#endif
