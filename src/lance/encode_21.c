/* Lance 2.1 page encoders (lance-format.md §2.4, §2.5; §5.3 pitfalls 4-8).
**
**   fixed width (ints, floats, bool)  → MiniBlockLayout, value Flat(bits) (bool: Flat(1),
**                                       bit-packed LSB first, one byte-aligned run per chunk)
**   variable width, zstd on            → MiniBlockLayout, General{ZSTD}{Variable}, chunks of
**                                       up to 1 MiB raw whose compressed form fits 32 KiB
**                                       (encode_miniblock_z); a page where that does not pay
**                                       or does not fit falls back to the two below
**   variable width, every value < 256 → MiniBlockLayout, value Variable(offsets Flat 32|64)
**   other variable width pages        → FullZipLayout, bits_per_offset 32|64, rep index of
**                                       the narrowest unsigned width that holds the offsets
**   every row null                    → AllNullLayout [NULLABLE_ITEM], no buffers
**   variable width, page_dictionary   → tried first: MiniBlockLayout with the page's distinct
**                                       values as one zstd-compressed dictionary block and
**                                       u8/u16/u32 row indices in the chunks (encode_page_dict)
**
** Nulls: u16 definition levels (0 valid, 1 null) in each mini-block chunk with layer
** NULLABLE_ITEM, or a one-byte control word per row in full-zip (bits_def 1); a page without
** nulls uses ALL_VALID_ITEM and no levels.
**
** Buffer compression (lance-encoding 8.0 readers, General wrapper only — the optional
** `data`/`values` BufferCompression of Flat/Variable is ignored by the official
** decompressors, so it is never written):
**   mini-block: value_compression = General{ZSTD}{Flat|Variable}; each chunk's value buffer
**               is compressed on its own as `u64 LE uncompressed_len | zstd frame` and the
**               chunk header holds the compressed size;
**   full-zip:   value_compression = General{ZSTD}{Variable{Flat W}}; each non-empty valid
**               value is stored as W-bit length + `u64 LE uncompressed_len | zstd frame`.
** Either is chosen per page, only when the compressed page is strictly smaller.
**
** Invariants: every chunk is a multiple of 8 bytes and <= 32 KiB; non-final chunks hold a
** power-of-two number of rows in [2, 4096]; chunk header sizes fit u16. */
#include <assert.h>
#include <zstd.h>

#include "lance/lance_write_int.h"

#define MB_MAX_CHUNK_BYTES 32768u
#define MB_MAX_CHUNK_ROWS 4096u
#define MB_VALUE_TARGET 16384u   /* raw value bytes per chunk we aim for */
#define MB_PAD 0xfe               /* lance's mini-block fill byte */
#define VAR_PAD 0x48              /* lance pads Variable value buffers with 'H' */
#define ZSTD_MIN_PAGE 256u        /* below this compression never pays */

enum { LAYER_ALL_VALID_ITEM = 1, LAYER_NULLABLE_ITEM = 3 };
enum { CE_FLAT = 1, CE_VARIABLE = 2, CE_GENERAL = 10 };
enum { ZSTD_SCHEME = 2 };

/* A page dictionary to describe in a MiniBlockLayout (0 items: none). */
typedef struct mb_dict {
    uint64_t n_items;
    unsigned offset_bits;
} mb_dict;
static const mb_dict no_dict = { 0, 0 };

unsigned pch_lance__type_bits(pch_lance_type t)
{
    switch (t) {
    case PCH_LANCE_BOOL: return 1;
    case PCH_LANCE_INT8: case PCH_LANCE_UINT8: return 8;
    case PCH_LANCE_INT16: case PCH_LANCE_UINT16: return 16;
    case PCH_LANCE_INT32: case PCH_LANCE_UINT32: case PCH_LANCE_FLOAT32: return 32;
    case PCH_LANCE_INT64: case PCH_LANCE_UINT64: case PCH_LANCE_FLOAT64: return 64;
    case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8: case PCH_LANCE_BINARY:
    case PCH_LANCE_LARGE_BINARY: case PCH_LANCE_JSON: return 0;
    }
    return 0;
}

unsigned pch_lance__type_offset_bits(pch_lance_type t)
{
    switch (t) {
    case PCH_LANCE_UTF8: case PCH_LANCE_BINARY: return 32;
    case PCH_LANCE_LARGE_UTF8: case PCH_LANCE_LARGE_BINARY: case PCH_LANCE_JSON: return 64;
    case PCH_LANCE_BOOL: case PCH_LANCE_INT8: case PCH_LANCE_INT16: case PCH_LANCE_INT32:
    case PCH_LANCE_INT64: case PCH_LANCE_UINT8: case PCH_LANCE_UINT16: case PCH_LANCE_UINT32:
    case PCH_LANCE_UINT64: case PCH_LANCE_FLOAT32: case PCH_LANCE_FLOAT64: return 0;
    }
    return 0;
}

void pch_lance__page_out_init(pch_lance_page_out *o, pch_ctx *ctx, int zstd_level)
{
    memset(o, 0, sizeof(*o));
    for (size_t i = 0; i < PCH_LANCE_PAGE_MAX_BUFS; i++) pch_buf_init(&o->bufs[i], ctx);
    for (size_t i = 0; i < 3; i++) pch_buf_init(&o->scratch[i], ctx);
    for (size_t i = 0; i < 2; i++) pch_buf_init(&o->dict[i], ctx);
    pch_buf_init(&o->any, ctx);
    o->zstd_level = zstd_level;
}

void pch_lance__page_out_dispose(pch_lance_page_out *o)
{
    for (size_t i = 0; i < PCH_LANCE_PAGE_MAX_BUFS; i++) pch_buf_dispose(&o->bufs[i]);
    for (size_t i = 0; i < 3; i++) pch_buf_dispose(&o->scratch[i]);
    for (size_t i = 0; i < 2; i++) pch_buf_dispose(&o->dict[i]);
    pch_buf_dispose(&o->any);
    if (o->zcctx) ZSTD_freeCCtx((ZSTD_CCtx *)o->zcctx);
    o->zcctx = NULL;
}

int pch_lance__pb_any(pch_buf *b, const char *type_url, const pch_buf *value)
{
    PCH_TRY(pch_pb_put_str(b, 1, type_url));
    return pch_pb_put_bytes(b, 2, value->data, value->len);
}

static void reset_out(pch_lance_page_out *o)
{
    for (size_t i = 0; i < PCH_LANCE_PAGE_MAX_BUFS; i++) pch_buf_clear(&o->bufs[i]);
    pch_buf_clear(&o->any);
    o->n_bufs = 0;
    o->layout = NULL;
    o->compressed = false;
}

/* ---- protobuf pieces of lance.encodings21 ---- */

/* CompressiveEncoding{flat{bits}} as field `field` */
static int put_flat(pch_buf *b, uint32_t field, uint64_t bits)
{
    size_t m1, m2;
    PCH_TRY(pch_pb_begin(b, field, &m1));
    PCH_TRY(pch_pb_begin(b, CE_FLAT, &m2));
    PCH_TRY(pch_pb_put_u64_nz(b, 1, bits));
    PCH_TRY(pch_pb_end(b, m2));
    return pch_pb_end(b, m1);
}

/* CompressiveEncoding{variable{offsets: flat{bits}}} as field `field` */
static int put_variable(pch_buf *b, uint32_t field, uint64_t offset_bits)
{
    size_t m1, m2;
    PCH_TRY(pch_pb_begin(b, field, &m1));
    PCH_TRY(pch_pb_begin(b, CE_VARIABLE, &m2));
    PCH_TRY(put_flat(b, 1, offset_bits));
    PCH_TRY(pch_pb_end(b, m2));
    return pch_pb_end(b, m1);
}

/* Value compression as field `field`: Flat(bits) or Variable(Flat(offset_bits)),
** optionally wrapped in General{BufferCompression{ZSTD, level}}. */
static int put_value_encoding(pch_buf *b, uint32_t field, bool variable, uint64_t bits,
                              bool zstd, int level)
{
    size_t m1, m2, m3;
    if (!zstd)
        return variable ? put_variable(b, field, bits) : put_flat(b, field, bits);
    PCH_TRY(pch_pb_begin(b, field, &m1));
    PCH_TRY(pch_pb_begin(b, CE_GENERAL, &m2));
    PCH_TRY(pch_pb_begin(b, 1, &m3));                /* General.compression */
    PCH_TRY(pch_pb_put_u64(b, 1, ZSTD_SCHEME));
    PCH_TRY(pch_pb_put_i64(b, 2, level));             /* optional int32 level: explicit */
    PCH_TRY(pch_pb_end(b, m3));
    PCH_TRY(variable ? put_variable(b, 3, bits) : put_flat(b, 3, bits)); /* General.values */
    PCH_TRY(pch_pb_end(b, m2));
    return pch_pb_end(b, m1);
}

static int put_layers(pch_buf *b, uint32_t field, bool nullable)
{
    uint64_t layer = nullable ? LAYER_NULLABLE_ITEM : LAYER_ALL_VALID_ITEM;
    return pch_pb_put_packed_u64(b, field, &layer, 1);
}

/* any = Any{"/lance.encodings21.PageLayout", PageLayout{layout_field: body}} */
static int finish_layout(pch_lance_page_out *o, uint32_t layout_field, pch_buf *body)
{
    pch_buf pl;
    int rc;
    pch_buf_init(&pl, body->ctx);
    rc = pch_pb_put_bytes(&pl, layout_field, body->data, body->len);
    if (rc == 0) rc = pch_lance__pb_any(&o->any, "/lance.encodings21.PageLayout", &pl);
    pch_buf_dispose(&pl);
    return rc;
}

/* The MiniBlockLayout message of a page with one value buffer (lance-format.md §2.4):
** def levels as Flat(16) when the page has nulls, the value encoding, with a page
** dictionary its encoding General{ZSTD}{Variable} and item count, the layer, 1 buffer,
** num_items. */
static int finish_miniblock(pch_lance_page_out *o, bool has_def, bool var, uint64_t bits,
                            bool zstd, uint64_t n_rows, const mb_dict *dict, pch_error *err)
{
    pch_buf body;
    int rc = 0;
    pch_buf_init(&body, o->any.ctx);
    if (has_def) rc = put_flat(&body, 2, 16);                           /* def_compression */
    if (rc == 0) rc = put_value_encoding(&body, 3, var, bits, zstd, o->zstd_level);
    if (rc == 0 && dict->n_items) {
        rc = put_value_encoding(&body, 4, true, dict->offset_bits, true, o->zstd_level);
        if (rc == 0) rc = pch_pb_put_u64(&body, 5, dict->n_items);   /* num_dictionary_items */
    }
    if (rc == 0) rc = put_layers(&body, 6, has_def);
    if (rc == 0) rc = pch_pb_put_u64(&body, 7, 1);                       /* num_buffers */
    if (rc == 0) rc = pch_pb_put_u64_nz(&body, 9, n_rows);               /* num_items */
    if (rc == 0) rc = finish_layout(o, 1, &body);
    pch_buf_dispose(&body);
    if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    o->layout = dict->n_items ? "mini-block-dict" : "mini-block";
    o->compressed = zstd || dict->n_items;
    return PCH_OK;
}


/* ---- zstd in lance's buffer format: u64 LE uncompressed length | zstd frame ---- */

static int zstd_append(pch_lance_page_out *o, pch_buf *dst, const uint8_t *src, size_t n,
                       pch_error *err)
{
    size_t bound = ZSTD_compressBound(n), got;
    if (ZSTD_isError(bound))
        return pch_error_set(err, PCH_ELIMIT, "lance writer: value of %zu bytes too large for zstd", n);
    if (!o->zcctx) {
        o->zcctx = ZSTD_createCCtx();
        if (!o->zcctx) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory (zstd context)");
    }
    if (pch_buf_put_le64(dst, (uint64_t)n) || pch_buf_reserve(dst, bound))
        return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    got = ZSTD_compressCCtx((ZSTD_CCtx *)o->zcctx, dst->data + dst->len, bound, src, n,
                            o->zstd_level);
    if (ZSTD_isError(got))
        return pch_error_set(err, PCH_EIO, "lance writer: zstd: %s", ZSTD_getErrorName(got));
    dst->len += got;
    dst->data[dst->len] = 0;
    return PCH_OK;
}

/* ---- mini-block ---- */

typedef struct mb_ctx {
    const pch_lance_page_in *in;
    bool var;
    unsigned bits;       /* fixed: bits per value; var: offset bits */
    bool has_def;
    size_t *starts;      /* chunk row starts, n_chunks + 1 entries */
    size_t n_chunks;
} mb_ctx;

static size_t pad_to(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* Raw value buffer bytes of rows [r, r+k) (variable: offsets + bytes + pad to W). */
static size_t mb_value_bytes(const mb_ctx *c, size_t r, size_t k)
{
    if (c->var) {
        size_t w = c->bits / 8;
        return pad_to((k + 1) * w + (size_t)(c->in->offsets[r + k] - c->in->offsets[r]), w);
    }
    return c->bits == 1 ? (k + 7) / 8 : k * (c->bits / 8);
}

static size_t mb_chunk_bytes(const mb_ctx *c, size_t k, size_t value_bytes)
{
    size_t hdr = 2 + (c->has_def ? 2 : 0) + 2;
    return pad_to(hdr, 8) + (c->has_def ? pad_to(2 * k, 8) : 0) + pad_to(value_bytes, 8);
}

static bool mb_fits(const mb_ctx *c, size_t r, size_t k)
{
    size_t vb = mb_value_bytes(c, r, k);
    return vb <= MB_VALUE_TARGET && mb_chunk_bytes(c, k, vb) <= MB_MAX_CHUNK_BYTES;
}

/* Split the page into chunks: power-of-two row counts except the last one. */
static int mb_plan(mb_ctx *c, pch_buf *arr, pch_error *err)
{
    size_t n = c->in->n_rows, r = 0;
    pch_buf_clear(arr);
    while (r < n) {
        size_t rem = n - r, k;
        if (pch_buf_append(arr, &r, sizeof(r)))
            return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
        if (rem <= MB_MAX_CHUNK_ROWS && mb_fits(c, r, rem)) {
            r = n;
            break;
        }
        k = 1;
        while (2 * k <= MB_MAX_CHUNK_ROWS && 2 * k <= rem && mb_fits(c, r, 2 * k)) k *= 2;
        r += k;
    }
    if (pch_buf_append(arr, &r, sizeof(r)))
        return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    c->starts = (size_t *)(void *)arr->data;
    c->n_chunks = arr->len / sizeof(size_t) - 1;
    return PCH_OK;
}

/* Build the raw value buffer of chunk i into dst (cleared first). */
static int mb_build_values(const mb_ctx *c, size_t i, pch_buf *dst)
{
    const pch_lance_page_in *in = c->in;
    size_t r = c->starts[i], k = c->starts[i + 1] - r;
    pch_buf_clear(dst);
    if (c->var) {
        size_t w = c->bits / 8, base = (k + 1) * w;
        uint64_t o0 = in->offsets[r];
        PCH_TRY(pch_buf_reserve(dst, mb_value_bytes(c, r, k)));
        for (size_t j = 0; j <= k; j++) {
            uint64_t rel = base + (in->offsets[r + j] - o0);
            if (w == 4) PCH_TRY(pch_buf_put_le32(dst, (uint32_t)rel));
            else PCH_TRY(pch_buf_put_le64(dst, rel));
        }
        PCH_TRY(pch_buf_append(dst, in->data + o0, (size_t)(in->offsets[r + k] - o0)));
        return pch_buf_pad(dst, w, VAR_PAD);
    }
    if (c->bits == 1) {
        size_t nb = (k + 7) / 8;
        PCH_TRY(pch_buf_zero(dst, nb));
        for (size_t j = 0; j < k; j++)
            if (in->values[r + j]) dst->data[j / 8] |= (uint8_t)(1u << (j % 8));
        return PCH_OK;
    }
    return pch_buf_append(dst, in->values + r * (c->bits / 8), k * (c->bits / 8));
}

static int mb_put_chunk(const mb_ctx *c, size_t i, pch_buf *meta, pch_buf *dat,
                        const uint8_t *vals, size_t vlen)
{
    const pch_lance_page_in *in = c->in;
    size_t r = c->starts[i], k = c->starts[i + 1] - r, start = dat->len, bytes, log2k = 0;
    bool last = i + 1 == c->n_chunks;
    PCH_TRY(pch_buf_put_le16(dat, (uint16_t)(c->has_def ? k : 0)));
    if (c->has_def) PCH_TRY(pch_buf_put_le16(dat, (uint16_t)(2 * k)));
    PCH_TRY(pch_buf_put_le16(dat, (uint16_t)vlen));
    PCH_TRY(pch_buf_pad(dat, 8, MB_PAD));
    if (c->has_def) {
        PCH_TRY(pch_buf_reserve(dat, 2 * k + 8));
        for (size_t j = 0; j < k; j++)
            PCH_TRY(pch_buf_put_le16(dat, in->validity[r + j] ? 0 : 1));
        PCH_TRY(pch_buf_pad(dat, 8, MB_PAD));
    }
    PCH_TRY(pch_buf_append(dat, vals, vlen));
    PCH_TRY(pch_buf_pad(dat, 8, MB_PAD));
    bytes = dat->len - start;
    assert(bytes % 8 == 0 && bytes >= 8 && bytes <= MB_MAX_CHUNK_BYTES);
    if (!last) {
        assert((k & (k - 1)) == 0 && k <= MB_MAX_CHUNK_ROWS);
        while (((size_t)1 << log2k) < k) log2k++;
    }
    return pch_buf_put_le16(meta, (uint16_t)(((bytes / 8 - 1) << 4) | log2k));
}

static int encode_miniblock(pch_lance_page_out *o, const pch_lance_page_in *in, bool var,
                            unsigned bits, const mb_dict *dict, pch_error *err)
{
    mb_ctx c = { in, var, bits, in->n_nulls > 0, NULL, 0 };
    pch_buf *raw = &o->scratch[0], *z = &o->scratch[1], *plan = &o->scratch[2];
    bool use_zstd = false;
    size_t raw_total = 0, z_total = 0, zoff = 0;
    int rc;

    PCH_TRY(mb_plan(&c, plan, err));
    pch_buf_clear(z);
    if (o->zstd_level >= 0 &&
        (var ? (size_t)in->offsets[in->n_rows] : in->n_rows * bits / 8) >= ZSTD_MIN_PAGE) {
        /* compress every chunk's value buffer; keep only if the page shrinks and every
        ** compressed chunk still fits the chunk limits */
        bool ok = true;
        for (size_t i = 0; i < c.n_chunks && ok; i++) {
            size_t before = z->len, k = c.starts[i + 1] - c.starts[i], zl;
            if (mb_build_values(&c, i, raw))
                return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
            PCH_TRY(zstd_append(o, z, raw->data, raw->len, err));
            zl = z->len - before;
            if (zl > UINT16_MAX || mb_chunk_bytes(&c, k, zl) > MB_MAX_CHUNK_BYTES) ok = false;
            raw_total += mb_chunk_bytes(&c, k, raw->len);
            z_total += mb_chunk_bytes(&c, k, zl);
        }
        use_zstd = ok && z_total < raw_total;
    }

    reset_out(o);
    for (size_t i = 0; i < c.n_chunks; i++) {
        if (use_zstd) {
            /* z holds back-to-back `u64 len | frame` records; find this one's end */
            size_t fl = ZSTD_findFrameCompressedSize(z->data + zoff + 8, z->len - zoff - 8);
            assert(!ZSTD_isError(fl));
            rc = mb_put_chunk(&c, i, &o->bufs[0], &o->bufs[1], z->data + zoff, 8 + fl);
            zoff += 8 + fl;
        } else {
            rc = mb_build_values(&c, i, raw);
            if (rc == 0) rc = mb_put_chunk(&c, i, &o->bufs[0], &o->bufs[1], raw->data, raw->len);
        }
        if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    }
    o->n_bufs = 2;

    return finish_miniblock(o, c.has_def, var, bits, use_zstd, in->n_rows, dict, err);
}

/* ---- mini-block with large compressed chunks (variable width) ----
**
** The mini-block limits apply to the chunk as stored: every chunk <= 32 KiB, u16 buffer
** sizes, power-of-two row counts <= 4096 (lance-encoding 8.0 miniblock.rs). With the
** General{ZSTD} wrapper the stored value buffer is `u64 LE uncompressed_len | zstd frame`
** and the official GeneralMiniBlockDecompressor decompresses it into a buffer sized by that
** length, with no bound tied to the chunk limit (general.rs, block.rs). So a chunk may carry
** far more than 32 KiB of values as long as its COMPRESSED form fits: rows per chunk are
** picked from the ratio the previous chunk achieved (aiming at MBZ_TARGET compressed bytes)
** and halved when a chunk comes out too large. Large zstd inputs compress like zstd on the
** whole record stream (ratio within a few percent of `zstd -3` on the file) instead of the
** per-value frames of full-zip. */

#define MBZ_TARGET 31744u                     /* compressed chunk bytes aimed at */
#define MBZ_RAW_MIN ((size_t)16384)
#define MBZ_RAW_MAX ((size_t)1 << 20)         /* raw value bytes per chunk, upper bound */
enum { MBZ_OK = 0, MBZ_NOFIT = 1, MBZ_NOGAIN = 2 };

static bool mbz_fits(const mb_ctx *c, size_t k, size_t zl)
{
    return zl <= UINT16_MAX && mb_chunk_bytes(c, k, zl) <= MB_MAX_CHUNK_BYTES;
}

/* Plan and compress the chunks; *res = MBZ_OK, MBZ_NOFIT (one row does not fit a chunk)
** or MBZ_NOGAIN (compression does not shrink the page). On MBZ_OK the compressed chunks
** sit back to back in scratch[1], their starts in scratch[2]. */
static int mbz_compress(pch_lance_page_out *o, mb_ctx *c, int *res, pch_error *err)
{
    const pch_lance_page_in *in = c->in;
    pch_buf *raw = &o->scratch[0], *z = &o->scratch[1], *plan = &o->scratch[2];
    size_t n = in->n_rows, r = 0, raw_total = 0, z_total = 0;
    double est = 4.0;                         /* raw / compressed of the last chunk */

    pch_buf_clear(z);
    pch_buf_clear(plan);
    *res = MBZ_OK;
    while (r < n) {
        size_t rem = n - r, k, before = z->len, zl;
        double b = est * MBZ_TARGET;
        size_t budget = b < (double)MBZ_RAW_MIN ? MBZ_RAW_MIN
                      : b > (double)MBZ_RAW_MAX ? MBZ_RAW_MAX : (size_t)b;
        /* a non-final chunk holds a power of two >= 2 rows (log2 0 marks the last chunk) */
        size_t kmin = rem == 1 ? 1 : 2;
        if (rem <= MB_MAX_CHUNK_ROWS && mb_value_bytes(c, r, rem) <= budget) {
            k = rem;
        } else {
            k = kmin;
            while (2 * k <= MB_MAX_CHUNK_ROWS && 2 * k <= rem && mb_value_bytes(c, r, 2 * k) <= budget)
                k *= 2;
        }
        for (;;) {
            size_t starts[2] = { r, r + k };
            mb_ctx one = *c;
            one.starts = starts;
            one.n_chunks = 1;
            if (mb_build_values(&one, 0, raw))
                return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
            PCH_TRY(zstd_append(o, z, raw->data, raw->len, err));
            zl = z->len - before;
            if (mbz_fits(c, k, zl)) break;
            z->len = before;
            if (k <= kmin) {
                *res = MBZ_NOFIT;
                return PCH_OK;
            }
            est = (double)raw->len / (double)zl * 0.9;
            if ((k & (k - 1)) == 0) {
                k /= 2;
            } else {
                size_t p2 = 1;
                while (2 * p2 < k) p2 *= 2;
                k = p2;
            }
        }
        est = (double)raw->len / (double)(zl ? zl : 1);
        raw_total += mb_chunk_bytes(c, k, raw->len);
        z_total += mb_chunk_bytes(c, k, zl);
        if (pch_buf_append(plan, &r, sizeof(r)))
            return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
        r += k;
    }
    if (pch_buf_append(plan, &r, sizeof(r)))
        return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    c->starts = (size_t *)(void *)plan->data;
    c->n_chunks = plan->len / sizeof(size_t) - 1;
    if (z_total >= raw_total) *res = MBZ_NOGAIN;
    return PCH_OK;
}

/* Variable-width page as mini-block with General{ZSTD} chunks of up to MBZ_RAW_MAX raw
** bytes. *res as mbz_compress; the page is encoded only on MBZ_OK. */
static int encode_miniblock_z(pch_lance_page_out *o, const pch_lance_page_in *in,
                              unsigned obits, int *res, pch_error *err)
{
    mb_ctx c = { in, true, obits, in->n_nulls > 0, NULL, 0 };
    pch_buf *z = &o->scratch[1];
    size_t zoff = 0;

    PCH_TRY(mbz_compress(o, &c, res, err));
    if (*res != MBZ_OK) return PCH_OK;
    reset_out(o);
    for (size_t i = 0; i < c.n_chunks; i++) {
        size_t fl = ZSTD_findFrameCompressedSize(z->data + zoff + 8, z->len - zoff - 8);
        assert(!ZSTD_isError(fl));
        if (mb_put_chunk(&c, i, &o->bufs[0], &o->bufs[1], z->data + zoff, 8 + fl))
            return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
        zoff += 8 + fl;
    }
    o->n_bufs = 2;
    return finish_miniblock(o, c.has_def, true, obits, true, in->n_rows, &no_dict, err);
}

bool pch_lance__value_fits_chunk(pch_lance_page_out *o, const uint8_t *p, size_t n)
{
    size_t bound, got, need;
    uint8_t *tmp;
    if (o->zstd_level < 0 || n <= PCH_LANCE_CHUNK_SAFE_VALUE) return true;
    if (n > MBZ_RAW_MAX) return false;
    if (!o->zcctx && !(o->zcctx = ZSTD_createCCtx())) return false;
    bound = ZSTD_compressBound(n);
    tmp = pch_malloc(o->any.ctx, bound);
    if (!tmp) return false;
    /* level 1 compresses no better than the page's level: a conservative test */
    got = ZSTD_compressCCtx((ZSTD_CCtx *)o->zcctx, tmp, bound, p, n, 1);
    pch_free(o->any.ctx, tmp);
    /* at most half a chunk, so that any two such values fit one chunk together (a
    ** non-final chunk holds at least two rows) */
    need = ZSTD_isError(got) ? SIZE_MAX : got;
    return need <= PCH_LANCE_CHUNK_SAFE_VALUE;
}

/* ---- page dictionary (variable width; write option page_dictionary) ----
**
** MiniBlockLayout with a dictionary (lance-format.md §2.4; the official MiniBlockScheduler
** reads it as a block): buffer 2 holds the page's distinct values, in order of first
** appearance, as one Variable block (`u32|u64 bits_per_offset, u32|u64 bytes_start,
** offsets from 0, bytes`, the offset width of the column's Arrow type) compressed as one
** `u64 LE len | zstd frame` (General block compression); the mini-block chunks hold one
** u8/u16/u32 index per row (a null row points at item 0 and its def level hides it).
** Readers decompress the dictionary once per page and gather rows by index. Against
** mini-block chunks of <= 32 KiB compressed, zstd sees the whole page, so matches reach
** across all of its records, and an exact repeat costs one index.
**
** Taken when the dictionary block compresses below the raw values and either values
** repeat (at most half of the valid rows distinct) or are long (>= PDICT_MIN_AVG bytes on
** average): for short unique values (ids, timestamps) the per-row index (1.7 bytes a row for
** sequential u16 indices under zstd -3) outweighs the wider window. */
#define PDICT_MIN_AVG 256u

/* Distinct values of the page: idx (dict[0]) gets one u32 item number per row, first
** (scratch[1]) the first row of each item. */
static int pdict_dedupe(pch_lance_page_out *o, const pch_lance_page_in *in, size_t *n_items,
                        uint64_t *distinct_bytes)
{
    size_t n = in->n_rows, cap = 16, mask, k = 0;
    uint32_t *table, *idx, *first;
    uint64_t bytes = 0;
    while (cap < 2 * n) cap *= 2;
    mask = cap - 1;
    pch_buf_clear(&o->scratch[0]);
    pch_buf_clear(&o->scratch[1]);
    pch_buf_clear(&o->dict[0]);
    PCH_TRY(pch_buf_zero(&o->scratch[0], cap * sizeof(uint32_t)));
    PCH_TRY(pch_buf_zero(&o->scratch[1], n * sizeof(uint32_t)));
    PCH_TRY(pch_buf_zero(&o->dict[0], n * sizeof(uint32_t)));
    table = (uint32_t *)(void *)o->scratch[0].data;
    first = (uint32_t *)(void *)o->scratch[1].data;
    idx = (uint32_t *)(void *)o->dict[0].data;
    for (size_t r = 0; r < n; r++) {
        const uint8_t *p = in->data + in->offsets[r];
        size_t len = (size_t)(in->offsets[r + 1] - in->offsets[r]), slot;
        if (in->validity && !in->validity[r]) continue;          /* idx 0 */
        slot = (size_t)pch_hash64(p, len) & mask;   /* a collision costs a comparison */
        for (;;) {
            uint32_t v = table[slot];
            if (v == 0) {
                table[slot] = (uint32_t)(k + 1);
                first[k] = (uint32_t)r;
                idx[r] = (uint32_t)k++;
                bytes += len;
                break;
            }
            {
                size_t f = first[v - 1];
                if (in->offsets[f + 1] - in->offsets[f] == len &&
                    memcmp(in->data + in->offsets[f], p, len) == 0) {
                    idx[r] = v - 1;
                    break;
                }
            }
            slot = (slot + 1) & mask;
        }
    }
    *n_items = k;
    *distinct_bytes = bytes;
    return PCH_OK;
}

/* Try the page dictionary; *used says whether the page was encoded. */
static int encode_page_dict(pch_lance_page_out *o, const pch_lance_page_in *in,
                            unsigned obits, bool *used, pch_error *err)
{
    size_t n = in->n_rows, n_valid = n - in->n_nulls, n_items, w = obits / 8, hdr, ibits;
    uint64_t distinct, start, off = 0;
    const uint32_t *first, *idx;
    pch_buf *blk = &o->scratch[2], *z = &o->dict[1];
    pch_lance_page_in ip;
    mb_dict d;

    *used = false;
    if (n > UINT32_MAX) return PCH_OK;
    if (pdict_dedupe(o, in, &n_items, &distinct))
        return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    if (n_items == 0 ||
        !(n_items * 2 <= n_valid || in->offsets[n] >= (uint64_t)PDICT_MIN_AVG * n_valid))
        return PCH_OK;
    /* the Variable block: header, n_items + 1 offsets, the distinct bytes */
    hdr = w == 4 ? 8 : 16;
    start = hdr + (n_items + 1) * w;
    if (w == 4 && start + distinct > UINT32_MAX) return PCH_OK;
    first = (const uint32_t *)(void *)o->scratch[1].data;
    pch_buf_clear(blk);
    if (pch_buf_reserve(blk, (size_t)(start + distinct)) ||
        (w == 4 ? pch_buf_put_le32(blk, 32) || pch_buf_put_le32(blk, (uint32_t)start)
                : pch_buf_put_le64(blk, 64) || pch_buf_put_le64(blk, start)))
        return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    for (size_t k = 0; k <= n_items; k++) {
        if (w == 4) (void)pch_buf_put_le32(blk, (uint32_t)off);     /* reserved above */
        else (void)pch_buf_put_le64(blk, off);
        if (k < n_items) off += in->offsets[first[k] + 1] - in->offsets[first[k]];
    }
    for (size_t k = 0; k < n_items; k++)
        (void)pch_buf_append(blk, in->data + in->offsets[first[k]],
                             (size_t)(in->offsets[first[k] + 1] - in->offsets[first[k]]));
    assert(blk->len == start + distinct);
    pch_buf_clear(z);
    PCH_TRY(zstd_append(o, z, blk->data, blk->len, err));
    if (z->len >= in->offsets[n]) return PCH_OK;      /* no gain: the index is pure cost */

    /* the indices, narrowed in place to the smallest width that holds n_items - 1 */
    ibits = n_items <= 256 ? 8 : n_items <= 65536 ? 16 : 32;
    idx = (const uint32_t *)(void *)o->dict[0].data;
    if (ibits < 32) {
        uint8_t *dst = o->dict[0].data;
        for (size_t r = 0; r < n; r++) {
            uint32_t v = idx[r];
            if (ibits == 8) dst[r] = (uint8_t)v;
            else pch_store_le16(dst + 2 * r, (uint16_t)v);
        }
    }
    memset(&ip, 0, sizeof ip);
    ip.type = ibits == 8 ? PCH_LANCE_UINT8 : ibits == 16 ? PCH_LANCE_UINT16 : PCH_LANCE_UINT32;
    ip.n_rows = n;
    ip.n_nulls = in->n_nulls;
    ip.validity = in->validity;
    ip.values = o->dict[0].data;
    d.n_items = n_items;
    d.offset_bits = obits;
    PCH_TRY(encode_miniblock(o, &ip, false, (unsigned)ibits, &d, err));
    {
        pch_buf t = o->bufs[2];
        o->bufs[2] = *z;
        *z = t;
    }
    o->n_bufs = 3;
    *used = true;
    return PCH_OK;
}

/* ---- full-zip (variable width) ---- */

static int put_uint_le(pch_buf *b, uint64_t v, size_t w)
{
    uint8_t t[8];
    pch_store_le64(t, v);
    return pch_buf_append(b, t, w);
}

static int encode_fullzip(pch_lance_page_out *o, const pch_lance_page_in *in, unsigned obits,
                          pch_error *err)
{
    size_t n = in->n_rows, w = obits / 8, ew = 1, raw_total = 0;
    bool has_def = in->n_nulls > 0, use_zstd = false;
    pch_buf *z = &o->scratch[1], *zoffs = &o->scratch[2], *dat, *rep;
    pch_buf body;
    uint64_t total;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t len = in->offsets[i + 1] - in->offsets[i];
        if (w == 4 && len > UINT32_MAX)
            return pch_error_set(err, PCH_ELIMIT,
                                 "lance writer: value of %llu bytes exceeds a 32-bit offset",
                                 (unsigned long long)len);
    }
    pch_buf_clear(z);
    pch_buf_clear(zoffs);
    if (o->zstd_level >= 0 && in->offsets[n] >= ZSTD_MIN_PAGE) {
        /* every non-empty valid value becomes u64 len | zstd frame */
        size_t z_total = 0;
        bool ok = true;
        for (size_t i = 0; i < n; i++) {
            size_t before = z->len, len = (size_t)(in->offsets[i + 1] - in->offsets[i]);
            uint64_t end;
            if (len > 0 && (!in->validity || in->validity[i]))
                PCH_TRY(zstd_append(o, z, in->data + in->offsets[i], len, err));
            end = z->len;
            if (pch_buf_append(zoffs, &end, sizeof(end)))
                return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
            if (w == 4 && z->len - before > UINT32_MAX) ok = false;
            z_total += z->len - before;
            raw_total += len;
        }
        use_zstd = ok && z_total < raw_total;
    }

    reset_out(o);
    dat = &o->bufs[0];
    rep = &o->bufs[1];
    /* zipped data: [control byte] [W-byte length | bytes] per row */
    for (size_t i = 0; i < n && rc == 0; i++) {
        bool valid = !in->validity || in->validity[i];
        if (has_def) rc = pch_buf_putc(dat, valid ? 0 : 1);
        if (rc == 0 && valid) {
            const uint8_t *p;
            uint64_t len;
            if (use_zstd) {
                const uint64_t *zo = (const uint64_t *)(void *)zoffs->data;
                uint64_t s = i ? zo[i - 1] : 0;
                p = z->data + s;
                len = zo[i] - s;
            } else {
                p = in->data + in->offsets[i];
                len = in->offsets[i + 1] - in->offsets[i];
            }
            rc = put_uint_le(dat, len, w);
            if (rc == 0) rc = pch_buf_append(dat, p, (size_t)len);
        }
    }
    if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    /* repetition index: n + 1 byte offsets of one width (1, 2, 4 or 8 bytes) */
    total = dat->len;
    while (ew < 8 && total >= ((uint64_t)1 << (8 * ew))) ew *= 2;
    {
        uint64_t off = 0;
        if (pch_buf_reserve(rep, (n + 1) * ew))
            return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
        for (size_t i = 0; i < n && rc == 0; i++) {
            bool valid = !in->validity || in->validity[i];
            rc = put_uint_le(rep, off, ew);
            off += has_def ? 1 : 0;
            if (valid) {
                if (use_zstd) {
                    const uint64_t *zo = (const uint64_t *)(void *)zoffs->data;
                    off += w + (zo[i] - (i ? zo[i - 1] : 0));
                } else {
                    off += w + (in->offsets[i + 1] - in->offsets[i]);
                }
            }
        }
        if (rc == 0) rc = put_uint_le(rep, off, ew);
        assert(rc != 0 || off == total);
    }
    if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    o->n_bufs = 2;

    pch_buf_init(&body, o->any.ctx);
    rc = pch_pb_put_u64_nz(&body, 2, has_def ? 1 : 0);                   /* bits_def */
    if (rc == 0) rc = pch_pb_put_u64(&body, 4, obits);                   /* bits_per_offset */
    if (rc == 0) rc = pch_pb_put_u64_nz(&body, 5, n);                    /* num_items */
    if (rc == 0) rc = pch_pb_put_u64_nz(&body, 6, n);                    /* num_visible_items */
    if (rc == 0) rc = put_value_encoding(&body, 7, true, obits, use_zstd, o->zstd_level);
    if (rc == 0) rc = put_layers(&body, 8, has_def);
    if (rc == 0) rc = finish_layout(o, 3, &body);
    pch_buf_dispose(&body);
    if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    o->layout = "full-zip";
    o->compressed = use_zstd;
    return PCH_OK;
}

static int encode_all_null(pch_lance_page_out *o, pch_error *err)
{
    pch_buf body;
    int rc;
    reset_out(o);
    pch_buf_init(&body, o->any.ctx);
    rc = put_layers(&body, 5, true);
    if (rc == 0) rc = finish_layout(o, 2, &body);
    pch_buf_dispose(&body);
    if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    o->layout = "all-null";
    return PCH_OK;
}

int pch_lance__encode_page_21(pch_lance_page_out *o, const pch_lance_page_in *in,
                              pch_error *err)
{
    unsigned bits = pch_lance__type_bits(in->type);
    unsigned obits = pch_lance__type_offset_bits(in->type);
    if (in->n_rows == 0 || (bits == 0 && obits == 0))
        return pch_error_set(err, PCH_EINVAL, "lance writer: empty page or unknown type %d",
                             (int)in->type);
    if (in->n_nulls == in->n_rows) return encode_all_null(o, err);
    if (bits) return encode_miniblock(o, in, false, bits, &no_dict, err);
    if (o->page_dict && o->zstd_level >= 0 && in->offsets[in->n_rows] >= ZSTD_MIN_PAGE) {
        bool used;
        PCH_TRY(encode_page_dict(o, in, obits, &used, err));
        if (used) return PCH_OK;
    }
    if (o->zstd_level >= 0 && in->offsets[in->n_rows] >= ZSTD_MIN_PAGE &&
        !(in->n_rows == 1 && in->offsets[1] > PCH_LANCE_CHUNK_SAFE_VALUE)) {
        int res;
        PCH_TRY(encode_miniblock_z(o, in, obits, &res, err));
        if (res == MBZ_OK) return PCH_OK;
        if (res == MBZ_NOGAIN) {
            /* incompressible: the plain layouts without trying zstd again */
            int level = o->zstd_level, rc;
            o->zstd_level = -1;
            rc = pch_lance__encode_page_21(o, in, err);
            o->zstd_level = level;
            return rc;
        }
        /* MBZ_NOFIT: a value too large for a chunk even compressed → full-zip below */
    }
    for (size_t i = 0; i < in->n_rows; i++)
        if (in->offsets[i + 1] - in->offsets[i] >= PCH_LANCE_MINIBLOCK_MAX_VALUE)
            return encode_fullzip(o, in, obits, err);
    return encode_miniblock(o, in, true, obits, &no_dict, err);
}
