/* Helpers shared by the Lance page decoders (lance_read_int.h): decoded-value buffers,
** FastLanes bit unpacking (lance-format.md §2.5 "inline_bitpacking"; layout of the
** fastlanes crate: 1024 values, T/8-byte words, lanes = 1024/T, row r of lane l is value
** FL_ORDER[r/8]*16 + (r%8)*128 + l, its bits at r*width in the lane's word stream), the
** general buffer compressors (zstd with or without a u64 length prefix, LZ4 block with a
** u32 length prefix), FSST decoding (lance's symbol-table export: u64 header "FSST"<<32 |
** flags, n symbols as u64 LE, n lengths) and the final emit into a pch_lance_colbuf.
** Invariants: every input length is checked before it is read; outputs are bounded by the
** context's max_page_bytes. */
#include <zstd.h>

#include "lance/lance_read_int.h"

void pch_lvals_init(pch_lvals *v, pch_ctx *ctx)
{
    v->n = 0;
    v->bits = 0;
    pch_buf_init(&v->fixed, ctx);
    pch_buf_init(&v->offs, ctx);
    pch_buf_init(&v->data, ctx);
}

void pch_lvals_clear(pch_lvals *v)
{
    v->n = 0;
    v->bits = 0;
    pch_buf_clear(&v->fixed);
    pch_buf_clear(&v->offs);
    pch_buf_clear(&v->data);
}

void pch_lvals_dispose(pch_lvals *v)
{
    pch_buf_dispose(&v->fixed);
    pch_buf_dispose(&v->offs);
    pch_buf_dispose(&v->data);
    v->n = 0;
}

static const unsigned fl_order[8] = { 0, 4, 2, 6, 1, 5, 3, 7 };

static uint64_t load_word(const uint8_t *p, unsigned t_bits)
{
    switch (t_bits) {
    case 8: return p[0];
    case 16: return pch_load_le16(p);
    case 32: return pch_load_le32(p);
    default: return pch_load_le64(p);
    }
}

void pch_lance__fl_unpack(const uint8_t *in, unsigned t_bits, unsigned width, uint64_t *out)
{
    unsigned lanes = 1024 / t_bits, tb = t_bits / 8, lane, row;
    uint64_t mask = width >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);

    for (lane = 0; lane < lanes; lane++) {
        for (row = 0; row < t_bits; row++) {
            unsigned idx = fl_order[row / 8] * 16 + (row % 8) * 128 + lane;
            uint64_t v = 0;
            if (width) {
                unsigned bit = row * width, word = bit / t_bits, shift = bit % t_bits;
                v = load_word(in + ((size_t)lanes * word + lane) * tb, t_bits) >> shift;
                if (shift + width > t_bits)
                    v |= load_word(in + ((size_t)lanes * (word + 1) + lane) * tb, t_bits)
                         << (t_bits - shift);
                v &= mask;
            }
            out[idx] = v;
        }
    }
}

/* n fixed values of `bits` from p (bits == 1: LSB-first bitmap, unpacked to bytes). */
int pch_lance__load_fixed(pch_lvals *out, const uint8_t *p, size_t len, size_t n, unsigned bits,
                      const char *where, pch_error *err)
{
    size_t need, i;
    pch_lvals_clear(out);
    out->bits = bits;
    if (bits == 1) {
        need = n / 8 + (n % 8 != 0);
        if (need > len) return pch_error_set(err, PCH_ECORRUPT, "%s: bitmap of %zu bytes for %zu values", where, len, n);
        if (pch_buf_reserve(&out->fixed, n) != PCH_OK) return pch_error_set(err, PCH_ENOMEM, "%s: out of memory", where);
        for (i = 0; i < n; i++) out->fixed.data[i] = (p[i / 8] >> (i % 8)) & 1;
        out->fixed.len = n;
    } else {
        if (!pch_mul_size(&need, n, bits / 8) || need > len)
            return pch_error_set(err, PCH_ECORRUPT, "%s: %zu bytes hold fewer than %zu %u-bit values",
                                 where, len, n, bits);
        if (pch_buf_append(&out->fixed, p, need) != PCH_OK) return pch_error_set(err, PCH_ENOMEM, "%s: out of memory", where);
    }
    out->n = n;
    return PCH_OK;
}

/* ---- LZ4 block format (u32 LE uncompressed size prefix, as lance's lz4 crate call) ---- */
static int lz4_block(pch_buf *out, const uint8_t *p, size_t n, size_t want, const char *where,
                     pch_error *err)
{
    size_t i = 0, start = out->len;
    PCH_TRY(pch_buf_reserve(out, want));
    while (i < n) {
        uint8_t tok = p[i++];
        size_t lit = tok >> 4, mlen, off;
        if (lit == 15) {
            uint8_t b;
            do {
                if (i >= n) goto bad;
                b = p[i++];
                if (lit > SIZE_MAX - 255) goto bad;
                lit += b;
            } while (b == 255);
        }
        if (lit > n - i || lit > want - (out->len - start)) goto bad;
        memcpy(out->data + out->len, p + i, lit);
        out->len += lit;
        i += lit;
        if (i == n) break;                       /* last sequence has literals only */
        if (n - i < 2) goto bad;
        off = pch_load_le16(p + i);
        i += 2;
        mlen = (tok & 15u);
        if (mlen == 15) {
            uint8_t b;
            do {
                if (i >= n) goto bad;
                b = p[i++];
                if (mlen > SIZE_MAX - 255) goto bad;
                mlen += b;
            } while (b == 255);
        }
        mlen += 4;
        if (off == 0 || off > out->len - start || mlen > want - (out->len - start)) goto bad;
        {
            size_t k;
            uint8_t *d = out->data + out->len;
            for (k = 0; k < mlen; k++) d[k] = d[(ptrdiff_t)k - (ptrdiff_t)off];
            out->len += mlen;
        }
    }
    if (out->len - start != want) goto bad;
    out->data[out->len] = 0;
    return PCH_OK;
bad:
    out->len = start;
    out->data[out->len] = 0;
    return pch_error_set(err, PCH_ECORRUPT, "%s: malformed lz4 block", where);
}

int pch_lance__decompress(pch_buf *out, int scheme, const uint8_t *p, size_t n, pch_ctx *ctx,
                          const char *where, pch_error *err)
{
    size_t maxb = pch_ctx_limits(ctx)->max_page_bytes;
    if (scheme == PCH_LANCE_CMP_NONE) return pch_buf_append(out, p, n);
    if (scheme == PCH_LANCE_CMP_LZ4) {
        uint32_t want;
        if (n < 4) return pch_error_set(err, PCH_ECORRUPT, "%s: lz4 buffer shorter than its header", where);
        want = pch_load_le32(p);
        if (want > maxb)
            return pch_error_set(err, PCH_ELIMIT, "%s: lz4 buffer of %u bytes exceeds max_page_bytes", where, want);
        return lz4_block(out, p + 4, n - 4, want, where, err);
    }
    if (scheme == PCH_LANCE_CMP_ZSTD) {
        uint64_t want;
        size_t got, start = out->len;
        if (n == 0) return PCH_OK;
        /* A raw frame starts with the zstd magic and a frame header whose reserved bit is 0;
        ** anything else carries lance's u64 LE uncompressed length first (block.rs). */
        if (n >= 8 && !(pch_load_le32(p) == 0xFD2FB528u && (p[4] & 0x10) == 0)) {
            want = pch_load_le64(p);
            p += 8;
            n -= 8;
        } else if (n < 8 && pch_load_le32(p) != 0xFD2FB528u) {
            return pch_error_set(err, PCH_ECORRUPT, "%s: zstd buffer too short", where);
        } else {
            unsigned long long c = ZSTD_getFrameContentSize(p, n);
            if (c == ZSTD_CONTENTSIZE_ERROR)
                return pch_error_set(err, PCH_ECORRUPT, "%s: not a zstd frame", where);
            if (c == ZSTD_CONTENTSIZE_UNKNOWN)
                return pch_error_set(err, PCH_EUNSUPPORTED, "%s: zstd frame without content size", where);
            want = c;
        }
        if (want > maxb)
            return pch_error_set(err, PCH_ELIMIT, "%s: zstd buffer of %llu bytes exceeds max_page_bytes",
                                 where, (unsigned long long)want);
        PCH_TRY(pch_buf_reserve(out, (size_t)want));
        got = ZSTD_decompress(out->data + start, (size_t)want, p, n);
        if (ZSTD_isError(got) || got != want) {
            out->data[start] = 0;
            return pch_error_set(err, PCH_ECORRUPT, "%s: zstd: %s", where,
                                 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "length mismatch");
        }
        out->len = start + got;
        out->data[out->len] = 0;
        return PCH_OK;
    }
    return pch_error_set(err, PCH_EUNSUPPORTED, "%s: buffer compression scheme %d", where, scheme);
}

/* ---- FSST ---- */
int pch_lance__fsst_table(pch_fsst_table *t, const uint8_t *p, size_t n, const char *where,
                          pch_error *err)
{
    uint64_t hdr;
    unsigned i;
    memset(t, 0, sizeof(*t));
    if (n < 8) return pch_error_set(err, PCH_ECORRUPT, "%s: fsst symbol table too short", where);
    hdr = pch_load_le64(p);
    if ((hdr >> 32) != 0x46535354u)
        return pch_error_set(err, PCH_ECORRUPT, "%s: fsst symbol table without magic", where);
    t->enabled = (hdr >> 24) & 1;
    t->n = (unsigned)(hdr & 255);
    if ((size_t)t->n * 9 > n - 8)
        return pch_error_set(err, PCH_ECORRUPT, "%s: fsst symbol table truncated", where);
    for (i = 0; i < t->n; i++) t->sym[i] = pch_load_le64(p + 8 + 8 * (size_t)i);
    for (i = 0; i < t->n; i++) {
        t->len[i] = p[8 + 8 * (size_t)t->n + i];
        if (t->len[i] < 1 || t->len[i] > 8)
            return pch_error_set(err, PCH_ECORRUPT, "%s: fsst symbol %u has length %u", where, i, t->len[i]);
    }
    return PCH_OK;
}

int pch_lance__fsst_one(pch_buf *out, const pch_fsst_table *t, const uint8_t *p, size_t n,
                        const char *where, pch_error *err)
{
    size_t i = 0;
    if (!t->enabled) return pch_buf_append(out, p, n);
    PCH_TRY(pch_buf_reserve(out, n * 2));
    while (i < n) {
        uint8_t c = p[i++];
        if (c == 255) {
            if (i >= n) return pch_error_set(err, PCH_ECORRUPT, "%s: fsst escape at end of value", where);
            PCH_TRY(pch_buf_putc(out, p[i++]));
        } else {
            uint8_t s[8];
            if (c >= t->n) return pch_error_set(err, PCH_ECORRUPT, "%s: fsst code %u past %u symbols", where, c, t->n);
            pch_store_le64(s, t->sym[c]);
            PCH_TRY(pch_buf_append(out, s, t->len[c]));
        }
    }
    if (out->len > pch_ctx_limits(out->ctx)->max_page_bytes)
        return pch_error_set(err, PCH_ELIMIT, "%s: fsst output exceeds max_page_bytes", where);
    return PCH_OK;
}

int pch_lance__fsst_decode(pch_lvals *out, const pch_lvals *in, const uint8_t *table,
                           size_t table_len, pch_ctx *ctx, const char *where, pch_error *err)
{
    pch_fsst_table *t;
    size_t i;
    int rc;
    (void)ctx;
    if (in->bits != 0) return pch_error_set(err, PCH_ECORRUPT, "%s: fsst over fixed-width values", where);
    t = pch_malloc(ctx, sizeof(*t));
    if (!t) return pch_error_set(err, PCH_ENOMEM, "%s: out of memory", where);
    rc = pch_lance__fsst_table(t, table, table_len, where, err);
    pch_lvals_clear(out);
    out->bits = 0;
    if (rc == PCH_OK) rc = pch_buf_put_le64(&out->offs, 0);
    for (i = 0; rc == PCH_OK && i < in->n; i++) {
        uint64_t a = pch_load_le64(in->offs.data + 8 * i), b = pch_load_le64(in->offs.data + 8 * (i + 1));
        rc = pch_lance__fsst_one(&out->data, t, b > a ? in->data.data + a : NULL, (size_t)(b - a), where, err);
        if (rc == PCH_OK) rc = pch_buf_put_le64(&out->offs, out->data.len);
    }
    pch_free(ctx, t);
    if (rc == PCH_ENOMEM) return pch_error_set(err, rc, "%s: out of memory", where);
    out->n = in->n;
    return rc;
}

int pch_lance__pb_find(const uint8_t *p, size_t n, uint32_t num, pch_pb_field *out,
                       const char *what, pch_error *err)
{
    pch_rd r = pch_rd_make(p, n);
    pch_pb_field f;
    int rc, found = 0;
    while ((rc = pch_pb_next(&r, &f, what, err)) == 1) {
        if (f.num == num && f.wire == PCH_PB_LEN) {
            *out = f;
            found = 1;
        }
    }
    return rc < 0 ? rc : found;
}

int pch_lance__emit(pch_lance_colbuf *out, const pch_lvals *v, const uint8_t *validity,
                    const pch_lvals *dict, const char *where, pch_error *err)
{
    size_t w = pch_lance__type_bytes(out->type), i;
    const pch_lvals *src;
    unsigned want_bits = out->type == PCH_LANCE_BOOL ? 1 : (unsigned)(w * 8);
    int rc = PCH_OK;

    /* A dictionary of all-distinct values in row order (what a page dictionary of unique
    ** records holds: indices 0, 1, 2, ...) is the values themselves: take the bulk path. */
    if (dict && !validity && dict->n == v->n && v->n > 0 &&
        (v->bits == 8 || v->bits == 16 || v->bits == 32 || v->bits == 64) &&
        v->fixed.len >= v->n * (v->bits / 8)) {
        for (i = 0; i < v->n; i++) {
            const uint8_t *q = v->fixed.data + i * (v->bits / 8);
            uint64_t ix = v->bits == 8 ? q[0] : v->bits == 16 ? pch_load_le16(q)
                        : v->bits == 32 ? pch_load_le32(q) : pch_load_le64(q);
            if (ix != i) break;
        }
        if (i == v->n) {
            v = dict;
            dict = NULL;
        }
    }
    src = dict ? dict : v;

    if (src->bits != want_bits)
        return pch_error_set(err, PCH_ECORRUPT, "%s: %u-bit values for a %s column", where,
                             src->bits, pch_lance_type_name(out->type));
    if (dict && (v->bits == 0 || v->bits == 1))
        return pch_error_set(err, PCH_ECORRUPT, "%s: dictionary indices are not integers", where);
    if (!dict && !validity && v->n > 0) {
        /* all valid, no dictionary: one bulk copy instead of per-row appends */
        pch_lance_colbuf tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.type = out->type;
        tmp.n_rows = v->n;
        if (w) {
            if (v->fixed.len < v->n * w)
                return pch_error_set(err, PCH_ECORRUPT, "%s: %zu value bytes for %zu values", where,
                                     v->fixed.len, v->n);
            tmp.values = v->fixed;
        } else {
            uint64_t prev = 0;
            if (v->offs.len < (v->n + 1) * 8)
                return pch_error_set(err, PCH_ECORRUPT, "%s: missing offsets", where);
            for (i = 0; i <= v->n; i++) {                 /* monotone and inside data */
                uint64_t o = pch_load_le64(v->offs.data + 8 * i);
                if (o < prev || o > v->data.len)
                    return pch_error_set(err, PCH_ECORRUPT, "%s: offsets out of order", where);
                prev = o;
            }
            tmp.offsets = v->offs;
            tmp.data = v->data;
        }
        rc = pch_lance__colbuf_append_rows(out, &tmp, 0, v->n);
        if (rc != PCH_OK) return pch_error_set(err, rc, "%s: out of memory", where);
        return PCH_OK;
    }
    for (i = 0; i < v->n && rc == PCH_OK; i++) {
        bool valid = !validity || validity[i];
        size_t k = i;
        if (dict) {
            uint64_t ix = 0;
            if (valid) {
                const uint8_t *q = v->fixed.data + i * (v->bits / 8);
                ix = v->bits == 8 ? q[0] : v->bits == 16 ? pch_load_le16(q)
                   : v->bits == 32 ? pch_load_le32(q) : pch_load_le64(q);
                if (ix >= dict->n)
                    return pch_error_set(err, PCH_ECORRUPT, "%s: dictionary index %llu past %zu items",
                                         where, (unsigned long long)ix, dict->n);
            }
            k = (size_t)ix;
        }
        if (w) {
            rc = pch_lance__colbuf_append_fixed(out, valid ? src->fixed.data + k * w : NULL, valid);
        } else {
            uint64_t a = 0, b = 0;
            if (valid) {
                a = pch_load_le64(src->offs.data + 8 * k);
                b = pch_load_le64(src->offs.data + 8 * (k + 1));
            }
            rc = pch_lance__colbuf_append_var(out, b > a ? src->data.data + a : NULL, (size_t)(b - a), valid);
        }
    }
    if (rc != PCH_OK) return pch_error_set(err, rc, "%s: out of memory", where);
    return PCH_OK;
}
