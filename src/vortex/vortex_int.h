/* Private interface of src/vortex (vortex-format.md). Only files inside src/vortex include
** this header. */
#ifndef PCH_VORTEX_INT_H
#define PCH_VORTEX_INT_H

#include <inttypes.h>

#include "core/core.h"
#include "pchronicle-vortex/vortex.h"
#include "vortex/vx_fb.h"

/* ---- file constants (§0, §1) ---- */
#define PCH_VX_MAGIC "VTXF"
#define PCH_VX_LEGACY_MAGIC "VRTX"
#define PCH_VX_VERSION 1
#define PCH_VX_EOF_SIZE 8
#define PCH_VX_MAX_POSTSCRIPT 65527u

/* ---- protobuf (§4, Appendix B) ---- */
int pch_vx__pb_varint(pch_buf *b, uint64_t v);
int pch_vx__pb_uint(pch_buf *b, unsigned field, uint64_t v);        /* skipped when 0 */
int pch_vx__pb_uint_force(pch_buf *b, unsigned field, uint64_t v);  /* explicit presence */
int pch_vx__pb_bytes(pch_buf *b, unsigned field, const void *p, size_t n);
typedef struct pch_vx_pbf {
    uint32_t field;
    uint8_t wt;          /* 0 varint, 1 fixed64, 2 bytes, 5 fixed32 */
    uint64_t v;          /* varint / fixed value */
    const uint8_t *p;    /* bytes */
    size_t n;
} pch_vx_pbf;
/* 1 = a field read, 0 = end, <0 = malformed (error set). */
int pch_vx__pb_next(pch_rd *r, pch_vx_pbf *f, pch_error *err);

/* ---- scalars (ScalarValue, §4) ---- */
enum { PCH_VX_SV_NULL = 1, PCH_VX_SV_BOOL, PCH_VX_SV_I64, PCH_VX_SV_U64, PCH_VX_SV_F32,
       PCH_VX_SV_F64, PCH_VX_SV_STR, PCH_VX_SV_BYTES, PCH_VX_SV_F16 };
typedef struct pch_vx_scalar {
    int kind;            /* PCH_VX_SV_* */
    int64_t i;
    uint64_t u;          /* U64, BOOL, F16 raw bits */
    double f;
    const uint8_t *p;    /* STR/BYTES: borrowed */
    size_t n;
} pch_vx_scalar;
int pch_vx__scalar_encode(pch_buf *b, const pch_vx_scalar *s);
int pch_vx__scalar_decode(pch_vx_scalar *s, const uint8_t *p, size_t n, pch_error *err);
/* Scalar of element i of a canonical primitive/utf8/binary/bool/decimal array. */
void pch_vx__scalar_of(pch_vx_scalar *s, const pch_vx_array *a, uint64_t i);

/* ---- dtypes ---- */
pch_vx_dtype *pch_vx__dtype_new(pch_ctx *ctx, unsigned kind, int nullable);
uint32_t pch_vx__dtype_to_fb(pch_vx_fbb *b, const pch_vx_dtype *dt);
int pch_vx__dtype_from_fb(pch_vx_dtype **out, pch_ctx *ctx, const pch_vx_fbt *t,
                          pch_error *err);
/* Make a copy with nullable set (top level only). */
int pch_vx__dtype_with_nullable(pch_vx_dtype **out, const pch_vx_dtype *dt, int nullable,
                                pch_error *err);
static inline int pch_vx__is_int(const pch_vx_dtype *d)
{ return d->kind == PCH_VX_PRIMITIVE && d->ptype <= PCH_VX_I64; }
static inline int pch_vx__is_signed(unsigned ptype)
{ return ptype >= PCH_VX_I8 && ptype <= PCH_VX_I64; }

/* ---- canonical arrays ---- */
pch_vx_array *pch_vx__array_new(pch_ctx *ctx, const pch_vx_dtype *dt, uint64_t len,
                                uint32_t n_children);
/* Allocate zeroed data / offsets / validity (validity all 1). */
int pch_vx__array_alloc_data(pch_vx_array *a, size_t n);
/* Same without zeroing, for a decoder that writes every byte it allocates. */
int pch_vx__array_alloc_data_raw(pch_vx_array *a, size_t n);
int pch_vx__array_alloc_offsets(pch_vx_array *a);
int pch_vx__array_alloc_validity(pch_vx_array *a);
/* Canonical size in bytes (logical bytes of a lane). */
uint64_t pch_vx__array_nbytes(const pch_vx_array *a);
/* Rows [begin, begin+n) as a new canonical array; `take` gathers rows idx[0..n). */
int pch_vx__array_slice(pch_vx_array **out, const pch_vx_array *a, uint64_t begin, uint64_t n,
                        pch_error *err);
int pch_vx__array_take(pch_vx_array **out, const pch_vx_array *a, const uint64_t *idx,
                       uint64_t n, pch_error *err);
/* Concatenate parts (same dtype) into one array. */
int pch_vx__array_concat(pch_vx_array **out, const pch_vx_dtype *dt, pch_ctx *ctx,
                         pch_vx_array *const *parts, size_t n, pch_error *err);
int pch_vx__array_null_count(const pch_vx_array *a, uint64_t *out);
/* Check the canonical invariants of a caller-built array against dtype d (PCH_EINVAL). */
int pch_vx__array_validate(const pch_vx_array *a, const pch_vx_dtype *d, pch_error *err);
static inline int pch_vx__bit(const uint8_t *bits, uint64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }
static inline void pch_vx__set_bit(uint8_t *bits, uint64_t i, int v)
{ if (v) bits[i >> 3] |= (uint8_t)(1u << (i & 7)); else bits[i >> 3] &= (uint8_t)~(1u << (i & 7)); }
/* Bits [off, off + n) of src into dst from bit 0, a byte at a time (the decoders' validity
** and bool copies; a bit at a time they were a tenth of a narrow scan). The bits of dst's
** last byte past n are cleared; src is read only up to the byte holding bit off + n - 1. */
static inline void pch_vx__bits_copy(uint8_t *dst, const uint8_t *src, uint64_t off, uint64_t n)
{
    uint64_t nb = (n + 7) / 8, last;
    unsigned sh = (unsigned)(off & 7);
    if (!n) return;
    src += off >> 3;
    last = (off + n - 1) / 8 - off / 8;          /* the last byte of src read */
    if (!sh) memcpy(dst, src, (size_t)nb);
    else
        for (uint64_t i = 0; i < nb; i++)
            dst[i] = (uint8_t)((src[i] >> sh) | (i + 1 <= last ? src[i + 1] << (8 - sh) : 0));
    if (n & 7) dst[nb - 1] &= (uint8_t)((1u << (n & 7)) - 1);
}
/* Load element i of a primitive integer buffer as int64 (signed) or uint64 bits. */
uint64_t pch_vx__load_uint(const uint8_t *data, unsigned ptype, uint64_t i);
int64_t pch_vx__load_int(const uint8_t *data, unsigned ptype, uint64_t i);
void pch_vx__store_uint(uint8_t *data, unsigned ptype, uint64_t i, uint64_t v);
double pch_vx__load_float(const uint8_t *data, unsigned ptype, uint64_t i);

/* ---- array serialization (§6) ---- */
/* Encoding ids of this implementation (index = our enum). */
enum {
    PCH_VX_E_NULL = 0, PCH_VX_E_BOOL, PCH_VX_E_PRIMITIVE, PCH_VX_E_DECIMAL, PCH_VX_E_VARBIN,
    PCH_VX_E_VARBINVIEW, PCH_VX_E_STRUCT, PCH_VX_E_LIST, PCH_VX_E_FSL, PCH_VX_E_EXT,
    PCH_VX_E_CHUNKED, PCH_VX_E_CONSTANT, PCH_VX_E_DICT, PCH_VX_E_FOR, PCH_VX_E_BITPACKED,
    PCH_VX_E_ZSTD, PCH_VX_E_RUNEND, PCH_VX_E_SPARSE, PCH_VX_E_ZIGZAG, PCH_VX_E_SEQUENCE,
    PCH_VX_E_FSST, PCH_VX_E_ALPRD, PCH_VX_E_COUNT
};
extern const char *const pch_vx__enc_ids[PCH_VX_E_COUNT];
int pch_vx__enc_lookup(const char *id, size_t len);   /* -1 when unknown */

/* Encode tree node (writer side), allocated in an arena. */
#define PCH_VX_NODE_MAX_BUFS 4
typedef struct pch_vx_enode pch_vx_enode;
struct pch_vx_enode {
    uint8_t enc;                                  /* PCH_VX_E_* */
    const uint8_t *meta;
    size_t meta_len;
    uint32_t n_bufs;
    const uint8_t *buf[PCH_VX_NODE_MAX_BUFS];
    size_t buf_len[PCH_VX_NODE_MAX_BUFS];
    uint8_t buf_align[PCH_VX_NODE_MAX_BUFS];      /* exponent */
    uint32_t n_xbufs;                             /* further buffers after buf[] (alignment 1: */
    const uint8_t **xbuf;                         /* the frames of a multi-frame vortex.zstd) */
    size_t *xbuf_len;
    uint32_t n_children;
    pch_vx_enode **children;
};

/* Buffer i of a node (buf[] first, then xbuf[]). */
static inline const uint8_t *pch_vx__ebuf(const pch_vx_enode *n, uint32_t i, size_t *len, uint8_t *align_exp)
{
    if (i < n->n_bufs) { *len = n->buf_len[i]; *align_exp = n->buf_align[i]; return n->buf[i]; }
    *len = n->xbuf_len[i - n->n_bufs];
    *align_exp = 0;
    return n->xbuf[i - n->n_bufs];
}

typedef struct pch_vx_encoder {
    pch_ctx *ctx;
    pch_arena *arena;
    int compress;
    uint32_t sample_rows;
    /* Frames of vortex.zstd (RFC-0006 §7.2): frame_bytes 0 = one frame per array; otherwise a
    ** frame closes at the first allowed cut after frame_bytes of payload. Cuts are allowed
    ** only in cut_arr (the array being encoded, or a child the cuts were carried down to):
    ** cuts NULL = every row boundary (the chunk's top-level rows are whole trajectories),
    ** else the sorted row boundaries cuts[0..n_cuts). Any other array is one frame, so a
    ** frame never splits the values of one top-level row. */
    uint64_t frame_bytes;
    uint32_t frame_rows;          /* ... or holds frame_rows rows and PCH_VX_FRAME_MIN bytes, in
                                  ** a lane of under PCH_VX_FRAME_ROW_BYTES a row on average */
#ifndef PCH_VX_FRAME_ROW_BYTES
#define PCH_VX_FRAME_ROW_BYTES 512u
#endif
    int plain_offsets;            /* a framed list's top-level offsets stay vortex.primitive */
    const uint64_t *row_weights;  /* per top-level row (NULL: none), with row_ratio: a frame
                                  ** holding a row of weight W < frame_bytes / row_ratio closes
                                  ** before it exceeds max(PCH_VX_FRAME_SMALL_MIN, row_ratio x W) */
    uint32_t row_ratio;
    uint32_t dict_bytes;          /* a framed array trains a shared zstd dictionary (options) */
    const pch_vx_array *cut_arr;
    const uint64_t *cuts;
    uint64_t n_cuts;
    /* A lane's FSST memo across its chunks (NULL: none): how many chunks in a row FSST was
    ** tried on and lost. After FSST_LOSSES of them it is tried again only every
    ** FSST_REPROBE-th chunk (chunk = the lane's chunk index): training FSST is the dearest
    ** part of sampling and on content lanes zstd wins nearly always (issue 18 item 4). */
    uint32_t *fsst_losses;
    uint64_t chunk;
    uint32_t **fsst_pairs;        /* the encoding thread's training scratch (NULL: none) */
    /* The FSST table fsst_hopeless trained on the probe it judged, taken by fsst_node for
    ** the same probe instead of training it again (training is deterministic: the same
    ** table); encode_rec frees it when it is done with that probe. */
    struct pch_vx_fsst_table *probe_fsst;
    const pch_vx_array *probe_fsst_of;
} pch_vx_encoder;
#define PCH_VX_FSST_LOSSES 2u
#define PCH_VX_FSST_REPROBE 64u

/* Canonical → node tree (the compressor chooses encodings when enc->compress). Node
** memory and any buffers it creates live in enc->arena; canonical buffers are borrowed. */
int pch_vx__encode(pch_vx_encoder *enc, const pch_vx_array *a, pch_vx_enode **out,
                   pch_error *err);
/* Canonical-only node for a array (no compression). */
int pch_vx__encode_canonical(pch_vx_encoder *enc, const pch_vx_array *a, pch_vx_enode **out,
                             pch_error *err);
/* Force vortex.zstd (frames as e->frame_bytes and the cuts say) for a primitive/utf8/binary
** array (tests). */
int pch_vx__encode_zstd(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err);
/* Force vortex.fsst for a utf8/binary array (tests; the compressor picks it by size). */
int pch_vx__encode_fsst(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out,
                        pch_error *err);
/* Serialize a node tree as a segment (§6.1). enc_map maps PCH_VX_E_* → file array-spec index
** (filled/extended by the caller: used[] marks encodings referenced). *align_exp_out is the
** segment alignment. */
int pch_vx__serialize(pch_buf *out, const pch_vx_enode *root, uint16_t *enc_map,
                      uint8_t *used, uint8_t *align_exp_out, pch_error *err);
/* Comma-joined list of the encodings in a node tree ("fastlanes.for>fastlanes.bitpacked"). */
int pch_vx__describe(pch_buf *out, const pch_vx_enode *n);

/* Decode a segment into a canonical array. spec_map maps a file array-spec index to
** PCH_VX_E_* (-1 = unknown id: fails closed when referenced). */
typedef struct pch_vx_decode_ctx {
    pch_ctx *ctx;
    const int16_t *spec_map;
    uint32_t n_specs;
    /* pch_vx__deserialize only: text from vortex.dict / vortex.constant at the top, or as
    ** list elements and struct fields, comes back as codes only (pch_vx_scan_options.text_codes) */
    bool text_codes;
} pch_vx_decode_ctx;
/* Encoding tree of a segment as text ("fastlanes.for(fastlanes.bitpacked)"). */
int pch_vx__describe_segment(pch_buf *out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                             size_t seg_len, pch_error *err);
int pch_vx__deserialize(pch_vx_array **out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                        size_t seg_len, const pch_vx_dtype *dt, uint64_t len, pch_error *err);
/* Rows [begin, begin + n) of the segment's array of len rows, decompressing only what those
** rows need (list children, struct fields and multi-frame vortex.zstd; other encodings are
** decoded whole and sliced). Same checks as pch_vx__deserialize on what it reads. */
int pch_vx__deserialize_range(pch_vx_array **out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                              size_t seg_len, const pch_vx_dtype *dt, uint64_t len, uint64_t begin,
                              uint64_t n, pch_error *err);
/* The same over a sparse segment: seg has seg_len bytes of which only the array's tail (its
** flatbuffer and length) need be present; fill(payload, off, len) is called before any
** buffer [off, off + len) of the segment is used and must make those bytes present (and
** checked) or fail. A point read then reads only the buffers — e.g. the zstd frames — its
** rows need (RFC-0006 §13.4). */
typedef int (*pch_vx_fill_fn)(void *payload, size_t off, size_t len, pch_error *err);
/* The calling thread's zstd compression context (vx_serde.c keeps one compression and one
** decompression context per thread); NULL when out of memory. */
struct ZSTD_CCtx_s *pch_vx__thread_cctx(void);
int pch_vx__deserialize_range_sparse(pch_vx_array **out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                                     size_t seg_len, const pch_vx_dtype *dt, uint64_t len, uint64_t begin,
                                     uint64_t n, pch_vx_fill_fn fill, void *payload, pch_error *err);

/* FastLanes bit-packing (Appendix A). width in bits of T: 8/16/32/64. */
size_t pch_vx__bp_bytes(uint64_t n, unsigned bit_width);  /* packed bytes for n values */
void pch_vx__bp_pack(uint8_t *out, const uint64_t *vals, uint64_t n, unsigned t_bits,
                     unsigned bit_width);
/* n_blocks*1024 values as t_bits-wide little-endian values (the array layout). */
void pch_vx__bp_unpack(uint8_t *out, const uint8_t *in, uint64_t n_blocks, unsigned t_bits, unsigned bit_width);
/* Element i (< 1024) of a packed block: the byte offset in the block of the word its bits start
** in, and in *hi of the next word of its lane when they continue there (else SIZE_MAX). */
size_t pch_vx__bp_locate(unsigned t_bits, unsigned bit_width, unsigned i, size_t *hi);
uint64_t pch_vx__bp_get(const uint8_t *block, unsigned t_bits, unsigned bit_width, unsigned i);

/* ---- FSST (vx_fsst.c; §6.4 `vortex.fsst`, FSST paper, Boncz et al., VLDB 2020) ----
** Code byte 255 = escape (next byte literal); code c < 255 = symbol c. Symbols are up to 8
** bytes, stored as u64 little-endian (first byte lowest), zero-padded past their length.
** Table order (what the official reader's table rebuild expects): 2-byte symbols, then 3..8
** in non-decreasing length, then all 1-byte symbols last. */
#ifndef PCH_VX_ENABLE_FSST          /* 0: never chosen by the compressor (still decoded) */
#define PCH_VX_ENABLE_FSST 1
#endif
#define PCH_VX_FSST_ESC 255
typedef struct pch_vx_fsst_table {
    uint32_t n;                    /* symbols, <= 255 */
    uint64_t sym[255];
    uint8_t len[255];
    /* encoder index: 1-byte symbol per byte (-1 none); symbols of >= 2 bytes grouped by
    ** their first two bytes (open-addressing hash of the prefix), longest first */
    int16_t one[256];
    uint8_t ids[255];
    struct { uint16_t key; uint8_t start, cnt; } slot[512];
} pch_vx_fsst_table;
/* Train a table on the rows of a utf8/binary array (valid rows only). When ratio_out is
** not NULL it receives code bytes per input byte of the training sample (x 1/65536). */
int pch_vx__fsst_train(pch_vx_fsst_table *t, pch_ctx *ctx, const pch_vx_array *a,
                       uint32_t *ratio_out, pch_error *err);
/* The same with a caller's pair-count scratch (511 x 511 uint32, all zero; allocated into
** *pairs when NULL, and left all zero): a fresh 1 MB table per training costs its page
** faults, up to 256 of them, more than the counting on a small lane (measured). */
int pch_vx__fsst_train_with(pch_vx_fsst_table *t, pch_ctx *ctx, const pch_vx_array *a,
                            uint32_t *ratio_out, uint32_t **pairs, pch_error *err);
/* Build a table from stored symbols/lengths after checking it (PCH_ECORRUPT): n <= 255,
** lengths 1..8, order as above. */
int pch_vx__fsst_table_load(pch_vx_fsst_table *t, const uint8_t *syms, size_t syms_len,
                            const uint8_t *lens, size_t lens_len, pch_error *err);
/* Compress n bytes into out (capacity >= 2 * n); returns the code bytes written. */
size_t pch_vx__fsst_compress(const pch_vx_fsst_table *t, const uint8_t *in, size_t n, uint8_t *out);
/* Decompress codes into out[0..cap) (cap + 8 bytes writable); *out_len = bytes produced.
** PCH_ECORRUPT (no message) on an escape at the end, a code past the table, or output
** longer than cap. */
int pch_vx__fsst_decompress(const pch_vx_fsst_table *t, const uint8_t *codes, size_t n,
                            uint8_t *out, size_t cap, size_t *out_len);

/* JSON text helpers for dumps */
int pch_vx__text_append(pch_vx_text *t, const char *p, size_t n);
int pch_vx__text_printf(pch_vx_text *t, const char *fmt, ...) PCH_PRINTF(2, 3);

#endif
