/* Lance file format 2.0 page decoder (lance-format.md §2.3, Appendix D `lance.encodings`):
** the ArrayEncoding tree Nullable (NoNull / SomeNull / AllNull), Flat (1-bit validity
** bitmaps and values, optionally compressed whole with zstd or lz4), Binary (u64 end offsets
** with null_adjustment), Dictionary (indices with 0 = null, items decoded recursively),
** Fsst (symbol table + inner Binary) and Constant. Bitpacked / BitpackedForNonNeg (only
** written by lance for 2.1+ files through this path) and anything else fail closed with
** PCH_EUNSUPPORTED naming the encoding.
** Invariants: buffer indices are checked against the page's buffers; every decoded array
** has exactly the number of values its parent asked for before it is used. */
#include "lance/lance_read_int.h"

enum {
    AE_FLAT = 1, AE_NULLABLE = 2, AE_FSL = 3, AE_LIST = 4, AE_STRUCT = 5, AE_BINARY = 6,
    AE_DICTIONARY = 7, AE_FSST = 8, AE_PACKED_STRUCT = 9, AE_BITPACKED = 10, AE_FSB = 11,
    AE_BITPACKED_NONNEG = 12, AE_CONSTANT = 13
};

#define MAX_DEPTH 8

static const char *ae_name(uint32_t k)
{
    static const char *const names[] = { "?", "flat", "nullable", "fixed_size_list", "list",
        "struct", "binary", "dictionary", "fsst", "packed_struct", "bitpacked",
        "fixed_size_binary", "bitpacked_for_non_neg", "constant" };
    return k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown (2.1-only)";
}

static int oom(const char *where, pch_error *err)
{
    return pch_error_set(err, PCH_ENOMEM, "%s: out of memory", where);
}

/* The oneof member of a message (last LEN field). */
static int one_of(const uint8_t *p, size_t n, uint32_t *kind, pch_bytes *body, const char *where,
                  pch_error *err)
{
    pch_rd r = pch_rd_make(p, n);
    pch_pb_field f;
    int rc;
    *kind = 0;
    body->ptr = NULL;
    body->len = 0;
    while ((rc = pch_pb_next(&r, &f, where, err)) == 1) {
        if (f.wire != PCH_PB_LEN) continue;
        *kind = f.num;
        body->ptr = f.ptr;
        body->len = f.len;
    }
    return rc < 0 ? rc : PCH_OK;
}


typedef struct v20_ctx {
    const pch_lance_page_in *in;
    pch_error *err;
} v20_ctx;

/* Result of decoding one ArrayEncoding: values plus validity (len 0 = all valid). */
typedef struct v20_arr {
    pch_lvals v;
    pch_buf valid;
} v20_arr;

static void arr_init(v20_arr *a, pch_ctx *ctx) { pch_lvals_init(&a->v, ctx); pch_buf_init(&a->valid, ctx); }
static void arr_dispose(v20_arr *a) { pch_lvals_dispose(&a->v); pch_buf_dispose(&a->valid); }

static int decode_arr(v20_arr *out, const uint8_t *enc, size_t enc_len, size_t n, int depth,
                      v20_ctx *c);

static int flat(v20_arr *out, pch_bytes body, size_t n, v20_ctx *c)
{
    const char *where = c->in->where;
    pch_error *err = c->err;
    uint64_t bits, index = 0, btype = 0;
    pch_pb_field f;
    int rc, scheme = PCH_LANCE_CMP_NONE;
    pch_bytes buf;

    PCH_TRY(pch_pb_get_u64(body.ptr, body.len, 1, &bits, where, err));
    if ((rc = pch_lance__pb_find(body.ptr, body.len, 2, &f, where, err)) < 0) return rc;
    if (rc == 1) {
        PCH_TRY(pch_pb_get_u64(f.ptr, f.len, 1, &index, where, err));
        PCH_TRY(pch_pb_get_u64(f.ptr, f.len, 2, &btype, where, err));
    }
    if (btype != 0)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: flat buffer of type %llu (column/file buffers)", where,
                             (unsigned long long)btype);
    if (index >= c->in->n_bufs)
        return pch_error_set(err, PCH_ECORRUPT, "%s: buffer index %llu past %zu page buffers", where,
                             (unsigned long long)index, c->in->n_bufs);
    if (bits != 1 && bits != 8 && bits != 16 && bits != 32 && bits != 64)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: flat of %llu bits", where, (unsigned long long)bits);
    buf = c->in->bufs[index];
    if ((rc = pch_lance__pb_find(body.ptr, body.len, 3, &f, where, err)) < 0) return rc;
    if (rc == 1) {
        pch_pb_field s;
        if ((rc = pch_lance__pb_find(f.ptr, f.len, 1, &s, where, err)) < 0) return rc;
        if (rc == 0 || (s.len == 4 && memcmp(s.ptr, "none", 4) == 0)) scheme = PCH_LANCE_CMP_NONE;
        else if (s.len == 4 && memcmp(s.ptr, "zstd", 4) == 0) scheme = PCH_LANCE_CMP_ZSTD;
        else if (s.len == 3 && memcmp(s.ptr, "lz4", 3) == 0) scheme = PCH_LANCE_CMP_LZ4;
        else return pch_error_set(err, PCH_EUNSUPPORTED, "%s: flat compression '%.*s'", where,
                                  (int)(s.len > 32 ? 32 : s.len), (const char *)s.ptr);
    }
    if (scheme != PCH_LANCE_CMP_NONE) {
        pch_buf tmp;
        pch_buf_init(&tmp, c->in->ctx);
        rc = pch_lance__decompress(&tmp, scheme, buf.ptr, buf.len, c->in->ctx, where, err);
        if (rc == PCH_OK) rc = pch_lance__load_fixed(&out->v, tmp.data, tmp.len, n, (unsigned)bits, where, err);
        pch_buf_dispose(&tmp);
        return rc;
    }
    return pch_lance__load_fixed(&out->v, buf.ptr, buf.len, n, (unsigned)bits, where, err);
}

static uint64_t fixed_at(const pch_lvals *v, size_t i)
{
    const uint8_t *q = v->fixed.data + i * (v->bits / 8);
    switch (v->bits) {
    case 8: return q[0];
    case 16: return pch_load_le16(q);
    case 32: return pch_load_le32(q);
    default: return pch_load_le64(q);
    }
}

static bool is_int(const pch_lvals *v)
{
    return v->bits == 8 || v->bits == 16 || v->bits == 32 || v->bits == 64;
}

static int binary(v20_arr *out, pch_bytes body, size_t n, int depth, v20_ctx *c)
{
    const char *where = c->in->where;
    pch_error *err = c->err;
    pch_pb_field fi, fb;
    uint64_t adj, prev = 0;
    v20_arr idx, bytes;
    size_t i;
    int rc;

    if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &fi, where, err)) <= 0 ||
        (rc = pch_lance__pb_find(body.ptr, body.len, 2, &fb, where, err)) <= 0)
        return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: binary without indices or bytes", where);
    PCH_TRY(pch_pb_get_u64(body.ptr, body.len, 3, &adj, where, err));
    arr_init(&idx, c->in->ctx);
    arr_init(&bytes, c->in->ctx);
    rc = decode_arr(&idx, fi.ptr, fi.len, n, depth + 1, c);
    if (rc != PCH_OK) goto done;
    if (!is_int(&idx.v) || idx.v.n != n) {
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: binary indices are not integers", where);
        goto done;
    }
    {   /* the byte count is the largest normalised end offset */
        uint64_t total = 0;
        for (i = 0; i < n; i++) {
            uint64_t e = fixed_at(&idx.v, i);
            if (adj && e >= adj) e -= adj;
            if (e > total) total = e;
        }
        if (total > pch_ctx_limits(c->in->ctx)->max_page_bytes) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: binary offsets claim %llu bytes", where, (unsigned long long)total);
            goto done;
        }
        rc = decode_arr(&bytes, fb.ptr, fb.len, (size_t)total, depth + 1, c);
        if (rc != PCH_OK) goto done;
        if (bytes.v.bits != 8 || bytes.v.n != total || bytes.valid.len) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: binary bytes are not a plain byte array", where);
            goto done;
        }
    }
    pch_lvals_clear(&out->v);
    pch_buf_clear(&out->valid);
    out->v.bits = 0;
    if (pch_buf_reserve(&out->v.offs, (n + 1) * 8) != PCH_OK || pch_buf_reserve(&out->valid, n) != PCH_OK) {
        rc = oom(where, err);
        goto done;
    }
    pch_buf_put_le64(&out->v.offs, 0);
    for (i = 0; i < n; i++) {
        uint64_t e = fixed_at(&idx.v, i);
        bool valid = !(adj && e >= adj) && !(idx.valid.len && !idx.valid.data[i]);
        if (adj && e >= adj) e -= adj;
        if (e < prev) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: binary offsets decrease at row %zu", where, i);
            goto done;
        }
        if (valid && e > prev) {
            if (pch_buf_append(&out->v.data, bytes.v.fixed.data + prev, (size_t)(e - prev)) != PCH_OK) {
                rc = oom(where, err);
                goto done;
            }
        }
        prev = e;
        pch_buf_put_le64(&out->v.offs, out->v.data.len);
        pch_buf_putc(&out->valid, valid);
    }
    if (out->v.offs.oom || out->valid.oom) { rc = oom(where, err); goto done; }
    out->v.n = n;
    rc = PCH_OK;
done:
    arr_dispose(&idx);
    arr_dispose(&bytes);
    return rc;
}

static int dictionary(v20_arr *out, pch_bytes body, size_t n, int depth, v20_ctx *c)
{
    const char *where = c->in->where;
    pch_error *err = c->err;
    pch_pb_field fi, fv;
    uint64_t n_items;
    v20_arr idx, items;
    size_t i, w;
    int rc;

    if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &fi, where, err)) <= 0 ||
        (rc = pch_lance__pb_find(body.ptr, body.len, 2, &fv, where, err)) <= 0)
        return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: dictionary without indices or items", where);
    PCH_TRY(pch_pb_get_u64(body.ptr, body.len, 3, &n_items, where, err));
    if (n_items > 65536)
        return pch_error_set(err, PCH_ECORRUPT, "%s: %llu dictionary items", where, (unsigned long long)n_items);
    arr_init(&idx, c->in->ctx);
    arr_init(&items, c->in->ctx);
    rc = decode_arr(&idx, fi.ptr, fi.len, n, depth + 1, c);
    if (rc == PCH_OK) rc = decode_arr(&items, fv.ptr, fv.len, (size_t)n_items, depth + 1, c);
    if (rc != PCH_OK) goto done;
    if (!is_int(&idx.v) || idx.v.n != n || items.v.n != n_items) {
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: malformed dictionary", where);
        goto done;
    }
    pch_lvals_clear(&out->v);
    pch_buf_clear(&out->valid);
    out->v.bits = items.v.bits;
    w = items.v.bits == 1 ? 1 : items.v.bits / 8;
    if (w == 0) pch_buf_put_le64(&out->v.offs, 0);
    for (i = 0; i < n; i++) {
        uint64_t k = fixed_at(&idx.v, i);
        bool valid = k != 0 && !(idx.valid.len && !idx.valid.data[i]);
        if (k > n_items) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: dictionary index %llu past %llu items", where,
                               (unsigned long long)k, (unsigned long long)n_items);
            goto done;
        }
        if (valid && items.valid.len && !items.valid.data[k - 1]) valid = false;
        if (w) {
            static const uint8_t zeros[8];
            pch_buf_append(&out->v.fixed, valid ? items.v.fixed.data + (k - 1) * w : zeros, w);
        } else {
            if (valid) {
                uint64_t a = pch_load_le64(items.v.offs.data + 8 * (k - 1));
                uint64_t b = pch_load_le64(items.v.offs.data + 8 * k);
                if (b > a) pch_buf_append(&out->v.data, items.v.data.data + a, (size_t)(b - a));
            }
            pch_buf_put_le64(&out->v.offs, out->v.data.len);
        }
        pch_buf_putc(&out->valid, valid);
    }
    if (out->v.fixed.oom || out->v.offs.oom || out->v.data.oom || out->valid.oom) {
        rc = oom(where, err);
        goto done;
    }
    out->v.n = n;
    rc = PCH_OK;
done:
    arr_dispose(&idx);
    arr_dispose(&items);
    return rc;
}

static int decode_arr(v20_arr *out, const uint8_t *enc, size_t enc_len, size_t n, int depth,
                      v20_ctx *c)
{
    const char *where = c->in->where;
    pch_error *err = c->err;
    uint32_t kind;
    pch_bytes body;
    int rc;

    if (depth > MAX_DEPTH) return pch_error_set(err, PCH_ECORRUPT, "%s: encodings nested too deep", where);
    PCH_TRY(one_of(enc, enc_len, &kind, &body, where, err));
    switch (kind) {
    case AE_FLAT:
        pch_buf_clear(&out->valid);
        return flat(out, body, n, c);
    case AE_NULLABLE: {
        uint32_t k2;
        pch_bytes b2;
        pch_pb_field fv;
        PCH_TRY(one_of(body.ptr, body.len, &k2, &b2, where, err));
        if (k2 == 1) {                                    /* no_nulls {1 values} */
            if ((rc = pch_lance__pb_find(b2.ptr, b2.len, 1, &fv, where, err)) <= 0)
                return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: no_nulls without values", where);
            return decode_arr(out, fv.ptr, fv.len, n, depth + 1, c);
        }
        if (k2 == 2) {                                    /* some_nulls {1 validity, 2 values} */
            pch_pb_field fva;
            v20_arr va;
            if ((rc = pch_lance__pb_find(b2.ptr, b2.len, 1, &fva, where, err)) <= 0 ||
                (rc = pch_lance__pb_find(b2.ptr, b2.len, 2, &fv, where, err)) <= 0)
                return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: some_nulls without validity or values", where);
            arr_init(&va, c->in->ctx);
            rc = decode_arr(&va, fva.ptr, fva.len, n, depth + 1, c);
            if (rc == PCH_OK && (va.v.bits != 1 || va.v.n != n || va.valid.len))
                rc = pch_error_set(err, PCH_ECORRUPT, "%s: validity is not a bitmap", where);
            if (rc == PCH_OK) rc = decode_arr(out, fv.ptr, fv.len, n, depth + 1, c);
            if (rc == PCH_OK) {
                size_t i;
                if (out->valid.len == 0) {
                    pch_buf_clear(&out->valid);
                    if (pch_buf_append(&out->valid, va.v.fixed.data, n) != PCH_OK) rc = oom(where, err);
                } else {
                    for (i = 0; i < n; i++) out->valid.data[i] &= va.v.fixed.data[i];
                }
            }
            arr_dispose(&va);
            return rc;
        }
        if (k2 == 3) {                                    /* all_nulls {} */
            size_t w = pch_lance__type_bytes(c->in->type);
            pch_lvals_clear(&out->v);
            pch_buf_clear(&out->valid);
            out->v.bits = c->in->type == PCH_LANCE_BOOL ? 1 : (unsigned)(w * 8);
            if (pch_buf_zero(&out->valid, n) != PCH_OK) return oom(where, err);
            if (w) {
                size_t need;
                if (!pch_mul_size(&need, n, w) || pch_buf_zero(&out->v.fixed, need) != PCH_OK) return oom(where, err);
            } else {
                size_t need;
                if (!pch_mul_size(&need, n + 1, 8) || pch_buf_zero(&out->v.offs, need) != PCH_OK) return oom(where, err);
            }
            out->v.n = n;
            return PCH_OK;
        }
        return pch_error_set(err, PCH_ECORRUPT, "%s: nullable without a nullability", where);
    }
    case AE_BINARY:
        return binary(out, body, n, depth, c);
    case AE_DICTIONARY:
        return dictionary(out, body, n, depth, c);
    case AE_FSST: {
        pch_pb_field fb, fs;
        v20_arr inner;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &fb, where, err)) <= 0 ||
            (rc = pch_lance__pb_find(body.ptr, body.len, 2, &fs, where, err)) <= 0)
            return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: fsst without binary or symbol table", where);
        arr_init(&inner, c->in->ctx);
        rc = decode_arr(&inner, fb.ptr, fb.len, n, depth + 1, c);
        if (rc == PCH_OK) rc = pch_lance__fsst_decode(&out->v, &inner.v, fs.ptr, fs.len, c->in->ctx, where, err);
        if (rc == PCH_OK) pch_buf_move(&inner.valid, &out->valid);
        arr_dispose(&inner);
        return rc;
    }
    case AE_CONSTANT: {
        pch_pb_field fv;
        size_t i;
        if ((rc = pch_lance__pb_find(body.ptr, body.len, 1, &fv, where, err)) < 0) return rc;
        if (rc == 0 || (fv.len != 1 && fv.len != 2 && fv.len != 4 && fv.len != 8))
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: constant of %zu bytes", where, rc ? fv.len : 0);
        pch_lvals_clear(&out->v);
        pch_buf_clear(&out->valid);
        out->v.bits = (unsigned)fv.len * 8;
        for (i = 0; i < n; i++)
            if (pch_buf_append(&out->v.fixed, fv.ptr, fv.len) != PCH_OK) return oom(where, err);
        out->v.n = n;
        return PCH_OK;
    }
    case 0:
        return pch_error_set(err, PCH_ECORRUPT, "%s: empty array encoding", where);
    default:
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: 2.0 array encoding %s", where, ae_name(kind));
    }
}

int pch_lance__decode_page_v20(pch_lance_colbuf *out, const pch_lance_page_in *in,
                               pch_error *err)
{
    v20_ctx c;
    v20_arr a;
    size_t n;
    int rc;

    if (!pch_u64_to_size(&n, in->n_rows) || n > pch_ctx_limits(in->ctx)->max_page_bytes)
        return pch_error_set(err, PCH_ECORRUPT, "%s: page of %llu rows", in->where, (unsigned long long)in->n_rows);
    c.in = in;
    c.err = err;
    arr_init(&a, in->ctx);
    rc = decode_arr(&a, in->enc, in->enc_len, n, 0, &c);
    if (rc == PCH_OK && a.v.n != n)
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: decoded %zu of %zu rows", in->where, a.v.n, n);
    if (rc == PCH_OK)
        rc = pch_lance__emit(out, &a.v, a.valid.len ? a.valid.data : NULL, NULL, in->where, err);
    arr_dispose(&a);
    return rc;
}
