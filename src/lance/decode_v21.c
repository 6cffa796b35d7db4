/* Lance file format 2.1 page decoder (lance-format.md §2.4, Appendix A/C, Appendix D
** `lance.encodings21`): structural layouts MiniBlockLayout, FullZipLayout and
** AllNullLayout for flat (non-list) leaves, with the compressive encodings lance 8.0 emits:
** Flat (+BufferCompression), Variable, InlineBitpacking (FastLanes, 1024 values per chunk,
** bit width inline), OutOfLineBitpacking (def levels), structural Dictionary (page buffer 2),
** Fsst, Rle, ByteStreamSplit, General (zstd / lz4) and Constant.
** Invariants: the PageLayout message is parsed whole before any value is decoded; every
** size read from a chunk header, chunk metadata word or length prefix is checked against
** the bytes actually present; repetition (lists) and other layouts fail closed with
** PCH_EUNSUPPORTED naming what was met. */
#include "lance/lance_read_int.h"

/* CompressiveEncoding oneof numbers (Appendix D). */
enum {
    CE_FLAT = 1, CE_VARIABLE = 2, CE_CONSTANT = 3, CE_OOL_BITPACK = 4, CE_INLINE_BITPACK = 5,
    CE_FSST = 6, CE_DICTIONARY = 7, CE_RLE = 8, CE_BSS = 9, CE_GENERAL = 10, CE_FSL = 11,
    CE_PACKED_STRUCT = 12, CE_VAR_PACKED_STRUCT = 13
};

#define MAX_DEPTH 8

static const char *ce_name(uint32_t k)
{
    static const char *const names[] = { "?", "flat", "variable", "constant",
        "out_of_line_bitpacking", "inline_bitpacking", "fsst", "dictionary", "rle",
        "byte_stream_split", "general", "fixed_size_list", "packed_struct",
        "variable_packed_struct" };
    return k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

/* The single oneof member of a CompressiveEncoding. */
static int ce_get(const uint8_t *p, size_t n, uint32_t *kind, pch_bytes *body, const char *where,
                  pch_error *err)
{
    pch_rd r = pch_rd_make(p, n);
    pch_pb_field f;
    int rc;
    *kind = 0;
    while ((rc = pch_pb_next(&r, &f, where, err)) == 1) {
        if (f.wire != PCH_PB_LEN) continue;
        *kind = f.num;
        body->ptr = f.ptr;
        body->len = f.len;
    }
    if (rc < 0) return rc;
    if (*kind == 0) return pch_error_set(err, PCH_ECORRUPT, "%s: empty compressive encoding", where);
    return PCH_OK;
}


/* BufferCompression {1 scheme, 2 level} → PCH_LANCE_CMP_*. */
static int buffer_compression(const pch_pb_field *f, int *scheme, const char *where, pch_error *err)
{
    uint64_t s;
    PCH_TRY(pch_pb_get_u64(f->ptr, f->len, 1, &s, where, err));
    if (s == 1) *scheme = PCH_LANCE_CMP_LZ4;
    else if (s == 2) *scheme = PCH_LANCE_CMP_ZSTD;
    else if (s == 0) *scheme = PCH_LANCE_CMP_NONE;
    else return pch_error_set(err, PCH_EUNSUPPORTED, "%s: buffer compression scheme %llu", where,
                              (unsigned long long)s);
    return PCH_OK;
}

static bool valid_bits(uint64_t b)
{
    return b == 1 || b == 8 || b == 16 || b == 32 || b == 64;
}

static int oom(const char *where, pch_error *err)
{
    return pch_error_set(err, PCH_ENOMEM, "%s: out of memory", where);
}

static void store_word(uint8_t *p, unsigned bits, uint64_t v)
{
    switch (bits) {
    case 8: p[0] = (uint8_t)v; break;
    case 16: pch_store_le16(p, (uint16_t)v); break;
    case 32: pch_store_le32(p, (uint32_t)v); break;
    default: pch_store_le64(p, v); break;
    }
}

/* Append n (<= 1024) of the 1024 values of one FastLanes block to out->fixed. */
static int unpack_block(pch_lvals *out, const uint8_t *p, unsigned t, unsigned w, size_t n,
                        const char *where, pch_error *err)
{
    uint64_t *tmp = pch_malloc(out->fixed.ctx, 1024 * sizeof(uint64_t));
    size_t i, tb = t / 8;
    if (!tmp || pch_buf_reserve(&out->fixed, n * tb) != PCH_OK) {
        pch_free(out->fixed.ctx, tmp);
        return oom(where, err);
    }
    pch_lance__fl_unpack(p, t, w, tmp);
    for (i = 0; i < n; i++) store_word(out->fixed.data + out->fixed.len + i * tb, t, tmp[i]);
    out->fixed.len += n * tb;
    out->fixed.data[out->fixed.len] = 0;
    pch_free(out->fixed.ctx, tmp);
    return PCH_OK;
}

/* InlineBitpacking chunks: [T-bit width word][1024*width/8 bytes] repeated; n values. */
static int inline_bitpacking(pch_lvals *out, pch_bytes body, pch_bytes buf, size_t n,
                             const char *where, pch_error *err)
{
    uint64_t t;
    pch_pb_field f;
    size_t off = 0, left = n;
    int rc;
    PCH_TRY(pch_pb_get_u64(body.ptr, body.len, 1, &t, where, err));
    if ((rc = pch_lance__pb_find(body.ptr, body.len, 2, &f, where, err)) != 0)
        return rc < 0 ? rc : pch_error_set(err, PCH_EUNSUPPORTED, "%s: compressed inline_bitpacking", where);
    if (t != 8 && t != 16 && t != 32 && t != 64)
        return pch_error_set(err, PCH_ECORRUPT, "%s: inline_bitpacking of %llu-bit values", where, (unsigned long long)t);
    pch_lvals_clear(out);
    out->bits = (unsigned)t;
    do {
        uint64_t w;
        size_t tb = (size_t)t / 8, packed, take = left < 1024 ? left : 1024;
        if (tb > buf.len - off)
            return pch_error_set(err, PCH_ECORRUPT, "%s: inline_bitpacking chunk without bit width", where);
        w = t == 8 ? buf.ptr[off] : t == 16 ? pch_load_le16(buf.ptr + off)
          : t == 32 ? pch_load_le32(buf.ptr + off) : pch_load_le64(buf.ptr + off);
        off += tb;
        if (w > t)
            return pch_error_set(err, PCH_ECORRUPT, "%s: bit width %llu above %llu", where,
                                 (unsigned long long)w, (unsigned long long)t);
        packed = (size_t)w * 128;
        if (packed > buf.len - off)
            return pch_error_set(err, PCH_ECORRUPT, "%s: inline_bitpacking chunk truncated", where);
        PCH_TRY(unpack_block(out, buf.ptr + off, (unsigned)t, (unsigned)w, take, where, err));
        off += packed;
        left -= take;
    } while (left > 0);
    out->n = n;
    return PCH_OK;
}

/* Variable mini-block buffer: (n+1) W-bit offsets relative to the buffer, then bytes. */
static int variable_chunk(pch_lvals *out, pch_bytes body, pch_bytes buf, size_t n,
                          const char *where, pch_error *err)
{
    pch_pb_field f;
    uint32_t kind;
    pch_bytes ob;
    uint64_t w, first, prev, i;
    size_t tb, need;
    int rc;
    if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &f, where, err)) <= 0)
        return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: variable without offsets", where);
    PCH_TRY(ce_get(f.ptr, f.len, &kind, &ob, where, err));
    if (kind != CE_FLAT)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: variable offsets encoded as %s", where, ce_name(kind));
    PCH_TRY(pch_pb_get_u64(ob.ptr, ob.len, 1, &w, where, err));
    if (w != 32 && w != 64)
        return pch_error_set(err, PCH_ECORRUPT, "%s: %llu-bit variable offsets", where, (unsigned long long)w);
    if ((rc = pch_lance__pb_find(body.ptr, body.len, 2, &f, where, err)) != 0)
        return rc < 0 ? rc : pch_error_set(err, PCH_EUNSUPPORTED, "%s: compressed variable values in a mini-block", where);
    tb = (size_t)w / 8;
    if (!pch_mul_size(&need, n + 1, tb) || need > buf.len)
        return pch_error_set(err, PCH_ECORRUPT, "%s: variable chunk of %zu bytes too short for %zu offsets", where, buf.len, n + 1);
    pch_lvals_clear(out);
    out->bits = 0;
    first = w == 32 ? pch_load_le32(buf.ptr) : pch_load_le64(buf.ptr);
    prev = first;
    if (first > buf.len) goto bad;
    if (pch_buf_reserve(&out->offs, (n + 1) * 8) != PCH_OK) return oom(where, err);
    for (i = 0; i <= n; i++) {
        uint64_t o = w == 32 ? pch_load_le32(buf.ptr + i * tb) : pch_load_le64(buf.ptr + i * tb);
        if (o < prev || o > buf.len) goto bad;
        prev = o;
        pch_store_le64(out->offs.data + i * 8, o - first);
    }
    out->offs.len = (n + 1) * 8;
    if (pch_buf_append(&out->data, buf.ptr + first, (size_t)(prev - first)) != PCH_OK) return oom(where, err);
    out->n = n;
    return PCH_OK;
bad:
    return pch_error_set(err, PCH_ECORRUPT, "%s: variable offsets out of order or past the chunk", where);
}

/* Value decompression of one mini-block chunk: bufs[0..nb) → n values. */
static int mb_values(pch_lvals *out, const uint8_t *enc, size_t enc_len, const pch_bytes *bufs,
                     size_t nb, size_t n, pch_ctx *ctx, int depth, const char *where, pch_error *err)
{
    uint32_t kind;
    pch_bytes body = { NULL, 0 };
    pch_pb_field f;
    uint64_t bits;
    int rc;

    if (depth > MAX_DEPTH) return pch_error_set(err, PCH_ECORRUPT, "%s: encodings nested too deep", where);
    PCH_TRY(ce_get(enc, enc_len, &kind, &body, where, err));
    if (nb < 1) return pch_error_set(err, PCH_ECORRUPT, "%s: mini-block chunk without value buffer", where);
    switch (kind) {
    case CE_FLAT: {
        pch_buf tmp;
        int scheme = PCH_LANCE_CMP_NONE;
        PCH_TRY(pch_pb_get_u64(body.ptr, body.len, 1, &bits, where, err));
        if (!valid_bits(bits))
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: flat of %llu bits", where, (unsigned long long)bits);
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 2, &f, where, err)) < 0) return rc;
        if (rc == 1) PCH_TRY(buffer_compression(&f, &scheme, where, err));
        if (scheme == PCH_LANCE_CMP_NONE)
            return pch_lance__load_fixed(out, bufs[0].ptr, bufs[0].len, n, (unsigned)bits, where, err);
        pch_buf_init(&tmp, ctx);
        rc = pch_lance__decompress(&tmp, scheme, bufs[0].ptr, bufs[0].len, ctx, where, err);
        if (rc == PCH_OK) rc = pch_lance__load_fixed(out, tmp.data, tmp.len, n, (unsigned)bits, where, err);
        pch_buf_dispose(&tmp);
        return rc;
    }
    case CE_INLINE_BITPACK:
        if (n > 1024) return pch_error_set(err, PCH_ECORRUPT, "%s: %zu bit-packed values in one chunk", where, n);
        return inline_bitpacking(out, body, bufs[0], n, where, err);
    case CE_VARIABLE:
        return variable_chunk(out, body, bufs[0], n, where, err);
    case CE_FSST: {
        pch_lvals inner;
        pch_pb_field st;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 2, &f, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: fsst without values", where);
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &st, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: fsst without symbol table", where);
        pch_lvals_init(&inner, ctx);
        rc = mb_values(&inner, f.ptr, f.len, bufs, nb, n, ctx, depth + 1, where, err);
        if (rc == PCH_OK) rc = pch_lance__fsst_decode(out, &inner, st.ptr, st.len, ctx, where, err);
        pch_lvals_dispose(&inner);
        return rc;
    }
    case CE_RLE: {
        pch_pb_field fv, fl;
        uint32_t k2;
        pch_bytes b2;
        uint64_t lbits;
        size_t runs, i, pos = 0, vb;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &fv, where, err)) <= 0 ||
            (rc = pch_lance__pb_find(body.ptr, body.len, 2, &fl, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: rle without values or run lengths", where);
        PCH_TRY(ce_get(fv.ptr, fv.len, &k2, &b2, where, err));
        if (k2 != CE_FLAT) return pch_error_set(err, PCH_EUNSUPPORTED, "%s: rle values as %s", where, ce_name(k2));
        PCH_TRY(pch_pb_get_u64(b2.ptr, b2.len, 1, &bits, where, err));
        PCH_TRY(ce_get(fl.ptr, fl.len, &k2, &b2, where, err));
        if (k2 != CE_FLAT) return pch_error_set(err, PCH_EUNSUPPORTED, "%s: rle run lengths as %s", where, ce_name(k2));
        PCH_TRY(pch_pb_get_u64(b2.ptr, b2.len, 1, &lbits, where, err));
        if (!valid_bits(bits) || bits == 1 || lbits != 8)
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: rle of %llu-bit values / %llu-bit runs", where,
                                 (unsigned long long)bits, (unsigned long long)lbits);
        if (nb < 2) return pch_error_set(err, PCH_ECORRUPT, "%s: rle chunk needs two buffers", where);
        vb = (size_t)bits / 8;
        runs = bufs[1].len;
        if (bufs[0].len / vb < runs)
            return pch_error_set(err, PCH_ECORRUPT, "%s: rle has %zu run lengths but fewer values", where, runs);
        pch_lvals_clear(out);
        out->bits = (unsigned)bits;
        if (pch_buf_reserve(&out->fixed, n * vb) != PCH_OK) return oom(where, err);
        for (i = 0; i < runs && pos < n; i++) {
            size_t r = bufs[1].ptr[i], k;
            for (k = 0; k < r && pos < n; k++, pos++)
                memcpy(out->fixed.data + pos * vb, bufs[0].ptr + i * vb, vb);
        }
        if (pos != n) return pch_error_set(err, PCH_ECORRUPT, "%s: rle runs cover %zu of %zu values", where, pos, n);
        out->fixed.len = n * vb;
        out->n = n;
        return PCH_OK;
    }
    case CE_BSS: {
        uint32_t k2;
        pch_bytes b2;
        size_t vb, i, j;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &f, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: byte_stream_split without values", where);
        PCH_TRY(ce_get(f.ptr, f.len, &k2, &b2, where, err));
        if (k2 != CE_FLAT) return pch_error_set(err, PCH_EUNSUPPORTED, "%s: byte_stream_split values as %s", where, ce_name(k2));
        PCH_TRY(pch_pb_get_u64(b2.ptr, b2.len, 1, &bits, where, err));
        if (!valid_bits(bits) || bits == 1)
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: byte_stream_split of %llu bits", where, (unsigned long long)bits);
        vb = (size_t)bits / 8;
        if (bufs[0].len / vb != n || bufs[0].len % vb)
            return pch_error_set(err, PCH_ECORRUPT, "%s: byte_stream_split buffer of %zu bytes for %zu values", where, bufs[0].len, n);
        pch_lvals_clear(out);
        out->bits = (unsigned)bits;
        if (pch_buf_reserve(&out->fixed, n * vb) != PCH_OK) return oom(where, err);
        for (i = 0; i < n; i++)
            for (j = 0; j < vb; j++) out->fixed.data[i * vb + j] = bufs[0].ptr[j * n + i];
        out->fixed.len = n * vb;
        out->n = n;
        return PCH_OK;
    }
    case CE_GENERAL: {
        pch_pb_field fc, fi;
        int scheme = PCH_LANCE_CMP_NONE;
        pch_buf tmp;
        pch_bytes *nbufs;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &fc, where, err)) <= 0 ||
            (rc = pch_lance__pb_find(body.ptr, body.len, 3, &fi, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: general without compression or values", where);
        PCH_TRY(buffer_compression(&fc, &scheme, where, err));
        nbufs = pch_malloc(ctx, nb * sizeof(*nbufs));
        if (!nbufs) return oom(where, err);
        pch_buf_init(&tmp, ctx);
        rc = pch_lance__decompress(&tmp, scheme, bufs[0].ptr, bufs[0].len, ctx, where, err);
        if (rc == PCH_OK) {
            memcpy(nbufs, bufs, nb * sizeof(*nbufs));
            nbufs[0].ptr = tmp.data;
            nbufs[0].len = tmp.len;
            rc = mb_values(out, fi.ptr, fi.len, nbufs, nb, n, ctx, depth + 1, where, err);
        }
        pch_buf_dispose(&tmp);
        pch_free(ctx, nbufs);
        return rc;
    }
    default:
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: mini-block value encoding %s", where, ce_name(kind));
    }
}

/* Block decompression (def levels, dictionaries): one buffer → n values. */
static int blk_values(pch_lvals *out, const uint8_t *enc, size_t enc_len, pch_bytes buf, size_t n,
                      pch_ctx *ctx, int depth, const char *where, pch_error *err)
{
    uint32_t kind;
    pch_bytes body = { NULL, 0 };
    pch_pb_field f;
    int rc;

    if (depth > MAX_DEPTH) return pch_error_set(err, PCH_ECORRUPT, "%s: encodings nested too deep", where);
    PCH_TRY(ce_get(enc, enc_len, &kind, &body, where, err));
    switch (kind) {
    case CE_FLAT:
    case CE_INLINE_BITPACK:
    case CE_FSST:
    case CE_RLE:
    case CE_BSS:
        return mb_values(out, enc, enc_len, &buf, 1, n, ctx, depth + 1, where, err);
    case CE_OOL_BITPACK: {
        uint32_t k2;
        pch_bytes b2;
        uint64_t t, w;
        size_t tb, wpc, whole, tail, i, need;
        PCH_TRY(pch_pb_get_u64(body.ptr, body.len, 1, &t, where, err));
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 3, &f, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: out_of_line_bitpacking without values", where);
        PCH_TRY(ce_get(f.ptr, f.len, &k2, &b2, where, err));
        if (k2 != CE_FLAT)
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: out_of_line_bitpacking values as %s", where, ce_name(k2));
        PCH_TRY(pch_pb_get_u64(b2.ptr, b2.len, 1, &w, where, err));
        if ((t != 8 && t != 16 && t != 32 && t != 64) || w > t)
            return pch_error_set(err, PCH_ECORRUPT, "%s: out_of_line_bitpacking %llu of %llu bits", where,
                                 (unsigned long long)w, (unsigned long long)t);
        tb = (size_t)t / 8;
        wpc = (size_t)((1024 * w + t - 1) / t);          /* words per 1024-value block */
        whole = n / 1024;
        tail = n % 1024;
        if (buf.len % tb)
            return pch_error_set(err, PCH_ECORRUPT, "%s: out_of_line_bitpacking buffer not whole words", where);
        if (!pch_mul_size(&need, whole, wpc) || need > buf.len / tb)
            return pch_error_set(err, PCH_ECORRUPT, "%s: out_of_line_bitpacking buffer too short", where);
        pch_lvals_clear(out);
        out->bits = (unsigned)t;
        for (i = 0; i < whole; i++)
            PCH_TRY(unpack_block(out, buf.ptr + i * wpc * tb, (unsigned)t, (unsigned)w, 1024, where, err));
        if (tail) {
            size_t words = buf.len / tb;
            if (words == need + tail) {                   /* tail stored raw */
                if (pch_buf_append(&out->fixed, buf.ptr + need * tb, tail * tb) != PCH_OK) return oom(where, err);
            } else if (words >= need + wpc) {
                PCH_TRY(unpack_block(out, buf.ptr + need * tb, (unsigned)t, (unsigned)w, tail, where, err));
            } else {
                return pch_error_set(err, PCH_ECORRUPT, "%s: out_of_line_bitpacking tail truncated", where);
            }
        }
        out->n = n;
        return PCH_OK;
    }
    case CE_VARIABLE: {
        /* u32|u64 bits_per_offset, u32|u64 start of bytes, offsets, bytes (binary.rs).
        ** When buf is out->data itself (a block General decompressed in place, below) the
        ** bytes stay where they are and the offsets are made absolute instead of copying. */
        uint64_t w, start, i, hdr, prev = 0;
        size_t tb, need;
        bool in_place = buf.ptr == out->data.data;
        if (buf.len < 8) goto vbad;
        w = pch_load_le32(buf.ptr);
        if (w == 32) { start = pch_load_le32(buf.ptr + 4); hdr = 8; }
        else if (w == 64) { if (buf.len < 16) goto vbad; start = pch_load_le64(buf.ptr + 8); hdr = 16; }
        else return pch_error_set(err, PCH_EUNSUPPORTED, "%s: variable block with %llu-bit offsets", where, (unsigned long long)w);
        tb = (size_t)w / 8;
        if (!pch_mul_size(&need, n + 1, tb) || start > buf.len || start < hdr || need > start - hdr) goto vbad;
        if (in_place) {
            out->n = 0;
            pch_buf_clear(&out->fixed);
            pch_buf_clear(&out->offs);
        } else {
            pch_lvals_clear(out);
        }
        out->bits = 0;
        if (pch_buf_reserve(&out->offs, (n + 1) * 8) != PCH_OK) return oom(where, err);
        for (i = 0; i <= n; i++) {
            const uint8_t *q = buf.ptr + hdr + i * tb;
            uint64_t o = w == 32 ? pch_load_le32(q) : pch_load_le64(q);
            if ((i && o < prev) || o > buf.len - start) goto vbad;
            prev = o;
            pch_store_le64(out->offs.data + i * 8, in_place ? o + start : o);
        }
        out->offs.len = (n + 1) * 8;
        if (!in_place && pch_buf_append(&out->data, buf.ptr + start, (size_t)prev) != PCH_OK)
            return oom(where, err);
        out->n = n;
        return PCH_OK;
    vbad:
        return pch_error_set(err, PCH_ECORRUPT, "%s: malformed variable block", where);
    }
    case CE_GENERAL: {
        pch_pb_field fc, fi;
        int scheme = PCH_LANCE_CMP_NONE;
        pch_buf tmp;
        pch_bytes nb;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &fc, where, err)) <= 0 ||
            (rc = pch_lance__pb_find(body.ptr, body.len, 3, &fi, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: general without compression or values", where);
        PCH_TRY(buffer_compression(&fc, &scheme, where, err));
        {   /* a Variable block (page dictionaries) is decompressed straight into out->data */
            uint32_t k2;
            pch_bytes b2;
            PCH_TRY(ce_get(fi.ptr, fi.len, &k2, &b2, where, err));
            if (k2 == CE_VARIABLE) {
                pch_lvals_clear(out);
                PCH_TRY(pch_lance__decompress(&out->data, scheme, buf.ptr, buf.len, ctx, where, err));
                nb.ptr = out->data.data;
                nb.len = out->data.len;
                return blk_values(out, fi.ptr, fi.len, nb, n, ctx, depth + 1, where, err);
            }
        }
        pch_buf_init(&tmp, ctx);
        rc = pch_lance__decompress(&tmp, scheme, buf.ptr, buf.len, ctx, where, err);
        nb.ptr = tmp.data;
        nb.len = tmp.len;
        if (rc == PCH_OK) rc = blk_values(out, fi.ptr, fi.len, nb, n, ctx, depth + 1, where, err);
        pch_buf_dispose(&tmp);
        return rc;
    }
    case CE_CONSTANT: {
        size_t i;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &f, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_EUNSUPPORTED, "%s: constant without a value", where);
        if (!valid_bits((uint64_t)f.len * 8) || f.len == 0)
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: constant of %zu bytes", where, f.len);
        pch_lvals_clear(out);
        out->bits = (unsigned)f.len * 8;
        for (i = 0; i < n; i++)
            if (pch_buf_append(&out->fixed, f.ptr, f.len) != PCH_OK) return oom(where, err);
        out->n = n;
        return PCH_OK;
    }
    default:
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: block encoding %s", where, ce_name(kind));
    }
}

/* Layers must describe one flat leaf: ALL_VALID_ITEM (1) or NULLABLE_ITEM (3). */
static int check_layers(const uint8_t *p, size_t n, uint32_t num, bool *nullable, const char *where,
                        pch_error *err)
{
    pch_rd r = pch_rd_make(p, n);
    pch_pb_field f;
    uint64_t layers[4];
    size_t nl = 0;
    int rc;
    while ((rc = pch_pb_next(&r, &f, where, err)) == 1) {
        if (f.num != num) continue;
        if (f.wire == PCH_PB_VARINT) {
            if (nl < 4) layers[nl] = f.v;
            nl++;
        } else if (f.wire == PCH_PB_LEN) {
            pch_rd q = pch_rd_make(f.ptr, f.len);
            while (pch_rd_left(&q)) {
                uint64_t v;
                if (!pch_pb_read_varint(&q, &v))
                    return pch_error_set(err, PCH_ECORRUPT, "%s: bad packed layers", where);
                if (nl < 4) layers[nl] = v;
                nl++;
            }
        }
    }
    if (rc < 0) return rc;
    if (nl != 1)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: %zu rep/def layers (nested or list data)", where, nl);
    if (layers[0] == 1) *nullable = false;
    else if (layers[0] == 3) *nullable = true;
    else return pch_error_set(err, PCH_EUNSUPPORTED, "%s: rep/def layer %llu (lists)", where, (unsigned long long)layers[0]);
    return PCH_OK;
}

typedef struct mb_layout {
    pch_pb_field rep, def, val, dict;
    bool has_rep, has_def, has_dict, nullable;
    uint64_t n_dict, n_buffers, rep_depth, n_items, large;
} mb_layout;

static int decode_miniblock(pch_lance_colbuf *out, const pch_lance_page_in *in, pch_bytes lay,
                            pch_error *err)
{
    const char *where = in->where;
    pch_ctx *ctx = in->ctx;
    mb_layout L;
    pch_rd r = pch_rd_make(lay.ptr, lay.len);
    pch_pb_field f;
    pch_lvals vals, dict, levels;
    pch_bytes cbufs[16];
    uint8_t *validity = NULL;
    size_t n_chunks, c, rows_done = 0, data_off = 0;
    int rc;

    memset(&L, 0, sizeof(L));
    while ((rc = pch_pb_next(&r, &f, where, err)) == 1) {
        switch (f.num) {
        case 1: if (f.wire == PCH_PB_LEN) { L.rep = f; L.has_rep = true; } break;
        case 2: if (f.wire == PCH_PB_LEN) { L.def = f; L.has_def = true; } break;
        case 3: if (f.wire == PCH_PB_LEN) L.val = f; break;
        case 4: if (f.wire == PCH_PB_LEN) { L.dict = f; L.has_dict = true; } break;
        case 5: L.n_dict = f.v; break;
        case 7: L.n_buffers = f.v; break;
        case 8: L.rep_depth = f.v; break;
        case 9: L.n_items = f.v; break;
        case 10: L.large = f.v; break;
        default: break;
        }
    }
    if (rc < 0) return rc;
    PCH_TRY(check_layers(lay.ptr, lay.len, 6, &L.nullable, where, err));
    if (L.has_rep || L.rep_depth)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: repetition levels (list data)", where);
    if (L.large)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: large mini-block chunks (2.2)", where);
    if (!L.val.ptr && L.val.len == 0)
        return pch_error_set(err, PCH_ECORRUPT, "%s: mini-block without value compression", where);
    if (L.n_buffers < 1 || L.n_buffers > 16)
        return pch_error_set(err, PCH_ECORRUPT, "%s: mini-block with %llu value buffers", where, (unsigned long long)L.n_buffers);
    if (L.n_items && L.n_items != in->n_rows)
        return pch_error_set(err, PCH_ECORRUPT, "%s: mini-block holds %llu items, page has %llu rows", where,
                             (unsigned long long)L.n_items, (unsigned long long)in->n_rows);
    if (in->n_bufs < (L.has_dict ? 3u : 2u))
        return pch_error_set(err, PCH_ECORRUPT, "%s: mini-block page has %zu buffers", where, in->n_bufs);
    if (in->bufs[0].len % 2)
        return pch_error_set(err, PCH_ECORRUPT, "%s: chunk metadata of odd length", where);
    n_chunks = in->bufs[0].len / 2;
    if (n_chunks == 0 && in->n_rows)
        return pch_error_set(err, PCH_ECORRUPT, "%s: no chunks for %llu rows", where, (unsigned long long)in->n_rows);

    pch_lvals_init(&vals, ctx);
    pch_lvals_init(&dict, ctx);
    pch_lvals_init(&levels, ctx);
    if (L.has_dict) {
        if (L.n_dict / 8 > (uint64_t)in->bufs[2].len) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: %llu dictionary items in %zu bytes", where,
                               (unsigned long long)L.n_dict, in->bufs[2].len);
            goto done;
        }
        rc = blk_values(&dict, L.dict.ptr, L.dict.len, in->bufs[2], (size_t)L.n_dict, ctx, 0, where, err);
        if (rc != PCH_OK) goto done;
    }
    for (c = 0; c < n_chunks; c++) {
        uint16_t word = pch_load_le16(in->bufs[0].ptr + 2 * c);
        size_t csize = ((size_t)(word >> 4) + 1) * 8, items, off, k;
        unsigned lg = word & 15;
        uint16_t n_levels, def_size = 0, sizes[16];
        pch_bytes chunk, defb = { NULL, 0 };
        const uint8_t *vmask = NULL;

        if (c + 1 < n_chunks) {
            items = (size_t)1 << lg;
            if (lg == 0 || items > in->n_rows - rows_done) goto badmeta;
        } else {
            items = (size_t)(in->n_rows - rows_done);
            if (lg && ((size_t)1 << lg) != items) goto badmeta;
        }
        if (csize > in->bufs[1].len - data_off) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: chunk %zu of %zu bytes past the data buffer", where, c, csize);
            goto done;
        }
        chunk.ptr = in->bufs[1].ptr + data_off;
        chunk.len = csize;
        data_off += csize;
        /* header: u16 num_levels, [u16 def bytes], u16 per value buffer, pad to 8 */
        off = 2 + (L.has_def ? 2 : 0) + 2 * (size_t)L.n_buffers;
        if (off > chunk.len) goto badchunk;
        n_levels = pch_load_le16(chunk.ptr);
        if (L.has_def) def_size = pch_load_le16(chunk.ptr + 2);
        for (k = 0; k < L.n_buffers; k++) sizes[k] = pch_load_le16(chunk.ptr + 2 + (L.has_def ? 2 : 0) + 2 * k);
        off = (off + 7) & ~(size_t)7;
        if (L.has_def) {
            if (off > chunk.len || def_size > chunk.len - off) goto badchunk;
            defb.ptr = chunk.ptr + off;
            defb.len = def_size;
            off = (off + def_size + 7) & ~(size_t)7;
        }
        for (k = 0; k < L.n_buffers; k++) {
            if (off > chunk.len || sizes[k] > chunk.len - off) goto badchunk;
            cbufs[k].ptr = chunk.ptr + off;
            cbufs[k].len = sizes[k];
            off = (off + sizes[k] + 7) & ~(size_t)7;
        }
        if (L.has_def && n_levels) {
            size_t i;
            if (n_levels != items) {
                rc = pch_error_set(err, PCH_ECORRUPT, "%s: chunk %zu has %u levels for %zu items", where, c, n_levels, items);
                goto done;
            }
            rc = blk_values(&levels, L.def.ptr, L.def.len, defb, items, ctx, 0, where, err);
            if (rc != PCH_OK) goto done;
            if (levels.bits != 16) {
                rc = pch_error_set(err, PCH_ECORRUPT, "%s: %u-bit definition levels", where, levels.bits);
                goto done;
            }
            pch_free(ctx, validity);
            validity = pch_malloc(ctx, items ? items : 1);
            if (!validity) { rc = oom(where, err); goto done; }
            for (i = 0; i < items; i++) validity[i] = pch_load_le16(levels.fixed.data + 2 * i) == 0;
            vmask = validity;
        } else if (n_levels) {
            goto badchunk;
        }
        rc = mb_values(&vals, L.val.ptr, L.val.len, cbufs, (size_t)L.n_buffers, items, ctx, 0, where, err);
        if (rc == PCH_OK && vals.n != items)
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: chunk %zu decoded %zu of %zu values", where, c, vals.n, items);
        if (rc == PCH_OK)
            rc = pch_lance__emit(out, &vals, vmask, L.has_dict ? &dict : NULL, where, err);
        if (rc != PCH_OK) goto done;
        rows_done += items;
    }
    if (rows_done != in->n_rows) goto badmeta;
    rc = PCH_OK;
    goto done;
badmeta:
    rc = pch_error_set(err, PCH_ECORRUPT, "%s: chunk metadata does not add up to %llu rows", where,
                       (unsigned long long)in->n_rows);
    goto done;
badchunk:
    rc = pch_error_set(err, PCH_ECORRUPT, "%s: mini-block chunk header sizes exceed the chunk", where);
done:
    pch_free(ctx, validity);
    pch_lvals_dispose(&vals);
    pch_lvals_dispose(&dict);
    pch_lvals_dispose(&levels);
    return rc;
}

static int decode_fullzip(pch_lance_colbuf *out, const pch_lance_page_in *in, pch_bytes lay,
                          pch_error *err)
{
    const char *where = in->where;
    pch_ctx *ctx = in->ctx;
    pch_rd r = pch_rd_make(lay.ptr, lay.len);
    pch_pb_field f, venc = { 0, 0, 0, NULL, 0 };
    uint64_t bits_rep = 0, bits_def = 0, bpv = 0, bpo = 0, n_items = 0;
    bool nullable, var;
    uint32_t kind;
    pch_bytes body = { NULL, 0 }, data = { NULL, 0 };
    size_t cw, off = 0, i, w = pch_lance__type_bytes(in->type);
    int rc, scheme = PCH_LANCE_CMP_NONE;
    pch_fsst_table *fsst = NULL;
    pch_buf tmp;

    while ((rc = pch_pb_next(&r, &f, where, err)) == 1) {
        switch (f.num) {
        case 1: bits_rep = f.v; break;
        case 2: bits_def = f.v; break;
        case 3: bpv = f.v; break;
        case 4: bpo = f.v; break;
        case 5: n_items = f.v; break;
        case 7: if (f.wire == PCH_PB_LEN) venc = f; break;
        default: break;
        }
    }
    if (rc < 0) return rc;
    PCH_TRY(check_layers(lay.ptr, lay.len, 8, &nullable, where, err));
    if (bits_rep) return pch_error_set(err, PCH_EUNSUPPORTED, "%s: full-zip repetition (list data)", where);
    if (bits_def > 32) return pch_error_set(err, PCH_ECORRUPT, "%s: full-zip %llu definition bits", where, (unsigned long long)bits_def);
    cw = bits_def == 0 ? 0 : bits_def <= 8 ? 1 : bits_def <= 16 ? 2 : 4;
    if (n_items != in->n_rows)
        return pch_error_set(err, PCH_ECORRUPT, "%s: full-zip holds %llu items, page has %llu rows", where,
                             (unsigned long long)n_items, (unsigned long long)in->n_rows);
    if (!venc.ptr) return pch_error_set(err, PCH_ECORRUPT, "%s: full-zip without value compression", where);
    if (in->n_bufs < 1) return pch_error_set(err, PCH_ECORRUPT, "%s: full-zip page without buffers", where);
    var = bpo != 0;
    if (var == (bpv != 0)) return pch_error_set(err, PCH_ECORRUPT, "%s: full-zip needs bits_per_value xor bits_per_offset", where);
    if (var ? (bpo != 8 && bpo != 16 && bpo != 32 && bpo != 64) : (bpv % 8 || bpv == 0 || bpv > 64))
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: full-zip %llu-bit values/lengths", where,
                             (unsigned long long)(var ? bpo : bpv));
    if (var == (w != 0) || (!var && bpv != w * 8 && in->type != PCH_LANCE_BOOL))
        return pch_error_set(err, PCH_ECORRUPT, "%s: full-zip value width does not match %s", where, pch_lance_type_name(in->type));
    PCH_TRY(ce_get(venc.ptr, venc.len, &kind, &body, where, err));
    if (kind == CE_GENERAL && var) {
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &f, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: general without compression", where);
        PCH_TRY(buffer_compression(&f, &scheme, where, err));
    } else if (kind == CE_FSST && var) {
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &f, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: fsst without symbol table", where);
        fsst = pch_malloc(ctx, sizeof(*fsst));
        if (!fsst) return oom(where, err);
        rc = pch_lance__fsst_table(fsst, f.ptr, f.len, where, err);
        if (rc != PCH_OK) { pch_free(ctx, fsst); return rc; }
    } else if (kind != (var ? CE_VARIABLE : CE_FLAT)) {
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: full-zip value encoding %s", where, ce_name(kind));
    }
    if (kind == CE_FLAT) {
        uint64_t b;
        PCH_TRY(pch_pb_get_u64(body.ptr, body.len, 1, &b, where, err));
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 2, &f, where, err)) != 0) {
            pch_free(ctx, fsst);
            return rc < 0 ? rc : pch_error_set(err, PCH_EUNSUPPORTED, "%s: compressed full-zip flat values", where);
        }
        if (b != bpv) return pch_error_set(err, PCH_ECORRUPT, "%s: full-zip flat width mismatch", where);
    }
    data = in->bufs[0];
    pch_buf_init(&tmp, ctx);
    rc = PCH_OK;
    for (i = 0; i < in->n_rows && rc == PCH_OK; i++) {
        uint64_t def = 0, len;
        bool valid;
        if (cw) {
            if (cw > data.len - off) goto trunc;
            def = cw == 1 ? data.ptr[off] : cw == 2 ? pch_load_le16(data.ptr + off) : pch_load_le32(data.ptr + off);
            off += cw;
        }
        valid = def == 0;
        if (!nullable && !valid) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: null in an all-valid full-zip page", where);
            break;
        }
        if (!var) {
            size_t vb = (size_t)bpv / 8;
            if (vb > data.len - off) goto trunc;   /* fixed width keeps the slot of a null */
            rc = pch_lance__colbuf_append_fixed(out, data.ptr + off, valid);
            off += vb;
            if (rc != PCH_OK) rc = oom(where, err);
            continue;
        }
        if (!valid) {
            rc = pch_lance__colbuf_append_var(out, NULL, 0, false);
            if (rc != PCH_OK) rc = oom(where, err);
            continue;
        }
        {
            size_t lb = (size_t)bpo / 8;
            if (lb > data.len - off) goto trunc;
            len = lb == 1 ? data.ptr[off] : lb == 2 ? pch_load_le16(data.ptr + off)
                : lb == 4 ? pch_load_le32(data.ptr + off) : pch_load_le64(data.ptr + off);
            off += lb;
            if (len > data.len - off) goto trunc;
        }
        if (kind == CE_VARIABLE) {
            rc = pch_lance__colbuf_append_var(out, data.ptr + off, (size_t)len, true);
            if (rc != PCH_OK) rc = oom(where, err);
        } else {
            pch_buf_clear(&tmp);
            if (fsst) rc = pch_lance__fsst_one(&tmp, fsst, data.ptr + off, (size_t)len, where, err);
            else rc = pch_lance__decompress(&tmp, scheme, data.ptr + off, (size_t)len, ctx, where, err);
            if (rc == PCH_OK && pch_lance__colbuf_append_var(out, tmp.data, tmp.len, true) != PCH_OK)
                rc = oom(where, err);
        }
        off += (size_t)len;
    }
    if (rc == PCH_OK && off != data.len)
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: %zu trailing bytes after full-zip rows", where, data.len - off);
    goto done;
trunc:
    rc = pch_error_set(err, PCH_ECORRUPT, "%s: full-zip row %zu runs past the data buffer", where, i);
done:
    pch_buf_dispose(&tmp);
    pch_free(ctx, fsst);
    return rc;
}

int pch_lance__decode_page_v21(pch_lance_colbuf *out, const pch_lance_page_in *in,
                               pch_error *err)
{
    uint32_t kind;
    pch_bytes body = { NULL, 0 };
    uint64_t i;
    int rc;

    PCH_TRY(ce_get(in->enc, in->enc_len, &kind, &body, in->where, err));
    switch (kind) {
    case 1: return decode_miniblock(out, in, body, err);
    case 3: return decode_fullzip(out, in, body, err);
    case 2: {
        bool nullable;
        PCH_TRY(check_layers(body.ptr, body.len, 5, &nullable, in->where, err));
        if (!nullable) return pch_error_set(err, PCH_ECORRUPT, "%s: all-null page of a non-null layer", in->where);
        for (i = 0; i < in->n_rows; i++)
            if ((rc = pch_lance__colbuf_append_null(out)) != PCH_OK) return oom(in->where, err);
        return PCH_OK;
    }
    case 4: return pch_error_set(err, PCH_EUNSUPPORTED, "%s: blob page layout", in->where);
    default: return pch_error_set(err, PCH_EUNSUPPORTED, "%s: page layout %u", in->where, kind);
    }
}
