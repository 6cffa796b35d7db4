/* Lance JSON physical format: Databend JSONB (lance-format.md §3.2, Appendix C).
**
**   container := header(u32 BE: type in the 3 high bits, count in the low 29)
**                jentry(u32 BE) * k   payload * k
**   ARRAY 0x80000000|n (k = n), OBJECT 0x40000000|n (k = 2n, the n keys first),
**   SCALAR 0x20000000 (top level only, k = 1).
**   jentry := bit 31 offset flag (always 0) | type bits 28..30 | length (low 28 bits);
**   types 0 NULL, 1 STRING, 2 NUMBER, 3 FALSE, 4 TRUE, 5 CONTAINER, 6 EXTENSION.
**   number payload := tag byte + data: 0x00 zero, 0x40 int BE 1/2/4/8, 0x50 uint BE
**   1/2/4/8, 0x60 float64 BE, 0x10 NaN, 0x20 +Inf, 0x30 -Inf, 0x70 decimal.
**
** Encoder: canonical form as lance writes it (keys sorted bytewise, duplicate keys
** rejected, integers in the narrowest width, everything else float64), byte-identical to
** the Appendix C examples. Payloads are written in place after a reserved jentry table that
** is patched once each payload's length is known (offsets, never pointers, across growth).
**
** Decoder: validates everything while rendering (fail closed, PCH_ECORRUPT): header types,
** the offset flag, jentry types, lengths that stay inside and sum exactly to their
** container, key jentries that are strings, number tags and widths, UTF-8 of strings,
** nested containers that are arrays/objects, nesting depth (PCH_ELIMIT). Rendering appends
** compact JSON (keys in stored order) and is rolled back on any error. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "json/json_int.h"

#define JB_ARRAY 0x80000000u
#define JB_OBJECT 0x40000000u
#define JB_SCALAR 0x20000000u
#define JB_TYPE_MASK 0xE0000000u
#define JB_COUNT_MASK 0x1FFFFFFFu
#define JB_LEN_MASK 0x0FFFFFFFu
#define JB_OFFSET_FLAG 0x80000000u

enum { JE_NULL = 0, JE_STRING = 1, JE_NUMBER = 2, JE_FALSE = 3, JE_TRUE = 4, JE_CONTAINER = 5,
       JE_EXTENSION = 6 };

/* ---------------------------------------------------------------- encoder */

typedef struct jb_enc {
    pch_buf *out;
    pch_error *err;
    uint32_t max_depth;
    const pch_json_member **sorted;   /* stack of per-object sorted member pointers */
    size_t slen, scap;
} jb_enc;

static int cmp_member(const void *a, const void *b)
{
    const pch_json_member *x = *(const pch_json_member *const *)a;
    const pch_json_member *y = *(const pch_json_member *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = n ? memcmp(x->key, y->key, n) : 0;
    if (c) return c;
    return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
}

static int enc_oom(jb_enc *e)
{
    return pch_error_set(e->err, PCH_ENOMEM, "jsonb: out of memory encoding");
}

static int put_be(pch_buf *out, uint8_t tag, uint64_t v, int width)
{
    uint8_t t[9];
    t[0] = tag;
    for (int k = 0; k < width; k++) t[1 + k] = (uint8_t)(v >> (8 * (width - 1 - k)));
    return pch_buf_append(out, t, (size_t)width + 1);
}

static int enc_number(jb_enc *e, const pch_json_value *v)
{
    const uint8_t fl = v->num_flags;
    int rc;
    if ((fl & PCH_JSON_NUM_INT) && (fl & (PCH_JSON_NUM_I64 | PCH_JSON_NUM_U64))) {
        if (((fl & PCH_JSON_NUM_U64) && v->u.num.u == 0) ||
            ((fl & PCH_JSON_NUM_I64) && v->u.num.i == 0)) {
            rc = pch_buf_putc(e->out, 0x00);                 /* 0 and -0 */
        } else if (!(fl & PCH_JSON_NUM_NEG) && (fl & PCH_JSON_NUM_U64)) {
            uint64_t u = v->u.num.u;
            int w = u <= 0xFF ? 1 : u <= 0xFFFF ? 2 : u <= 0xFFFFFFFFu ? 4 : 8;
            rc = put_be(e->out, 0x50, u, w);
        } else {
            int64_t i = v->u.num.i;
            int w = i >= INT8_MIN ? 1 : i >= INT16_MIN ? 2 : i >= INT32_MIN ? 4 : 8;
            rc = put_be(e->out, 0x40, (uint64_t)i, w);
        }
    } else {
        double d = v->u.num.d;
        if (isnan(d)) rc = pch_buf_putc(e->out, 0x10);
        else if (isinf(d)) rc = pch_buf_putc(e->out, d > 0 ? 0x20 : 0x30);
        else {
            uint64_t bits;
            memcpy(&bits, &d, 8);
            rc = put_be(e->out, 0x60, bits, 8);
        }
    }
    return rc == PCH_OK ? PCH_OK : enc_oom(e);
}

static int enc_container(jb_enc *e, const pch_json_value *v, uint32_t depth);

/* Write the payload of v and return its jentry type in *type. */
static int enc_payload(jb_enc *e, const pch_json_value *v, uint32_t depth, uint32_t *type)
{
    switch ((pch_json_kind)v->kind) {
    case PCH_JSON_NULL: *type = JE_NULL; return PCH_OK;
    case PCH_JSON_FALSE: *type = JE_FALSE; return PCH_OK;
    case PCH_JSON_TRUE: *type = JE_TRUE; return PCH_OK;
    case PCH_JSON_NUMBER: *type = JE_NUMBER; return enc_number(e, v);
    case PCH_JSON_STRING:
        *type = JE_STRING;
        if (v->u.str.len && pch_json__utf8_check((const uint8_t *)v->u.str.ptr, v->u.str.len) != v->u.str.len)
            return pch_error_set(e->err, PCH_EINVAL, "jsonb: string is not valid UTF-8");
        if (pch_buf_append(e->out, v->u.str.ptr, v->u.str.len) != PCH_OK) return enc_oom(e);
        return PCH_OK;
    case PCH_JSON_ARRAY:
    case PCH_JSON_OBJECT:
        *type = JE_CONTAINER;
        return enc_container(e, v, depth + 1);
    }
    return pch_error_set(e->err, PCH_EINVAL, "jsonb: unknown value kind %u", v->kind);
}

static int patch_jentry(jb_enc *e, size_t at, uint32_t type, size_t len)
{
    if (len > JB_LEN_MASK)
        return pch_error_set(e->err, PCH_ELIMIT, "jsonb: value of %zu bytes exceeds 2^28-1", len);
    pch_store_be32(e->out->data + at, (type << 28) | (uint32_t)len);
    return PCH_OK;
}

/* Reserve a header + k jentries; returns the offset of the first jentry in *jpos. */
static int enc_table(jb_enc *e, uint32_t header, size_t k, size_t *jpos)
{
    size_t bytes;
    uint8_t h[4];
    if (!pch_mul_size(&bytes, k, 4)) return enc_oom(e);
    pch_store_be32(h, header);
    if (pch_buf_append(e->out, h, 4) != PCH_OK) return enc_oom(e);
    *jpos = e->out->len;
    if (pch_buf_zero(e->out, bytes) != PCH_OK) return enc_oom(e);
    return PCH_OK;
}

static int enc_container(jb_enc *e, const pch_json_value *v, uint32_t depth)
{
    size_t jpos, n = v->n, before;
    uint32_t type;
    int rc;

    if (depth > e->max_depth)
        return pch_error_set(e->err, PCH_ELIMIT, "jsonb: nesting deeper than %u", e->max_depth);
    if (n > JB_COUNT_MASK)
        return pch_error_set(e->err, PCH_ELIMIT, "jsonb: container of %zu entries exceeds 2^29-1", n);
    if (v->kind == PCH_JSON_ARRAY) {
        PCH_TRY(enc_table(e, JB_ARRAY | (uint32_t)n, n, &jpos));
        for (size_t k = 0; k < n; k++) {
            before = e->out->len;
            if ((rc = enc_payload(e, &v->u.items[k], depth, &type)) != PCH_OK) return rc;
            PCH_TRY(patch_jentry(e, jpos + 4 * k, type, e->out->len - before));
        }
        return PCH_OK;
    }
    /* Object: sort member pointers on the shared stack (re-read e->sorted after recursion:
    ** nested objects may move it). */
    size_t base = e->slen, need;
    if (!pch_add_size(&need, base, n)) return enc_oom(e);
    if (need > e->scap) {
        size_t ncap = e->scap ? e->scap : 64, bytes;
        while (ncap < need) ncap = ncap > SIZE_MAX / 4 ? need : ncap * 2;
        if (!pch_mul_size(&bytes, ncap, sizeof *e->sorted)) return enc_oom(e);
        const pch_json_member **ns = pch_realloc(e->out->ctx, (void *)e->sorted, bytes);
        if (!ns) return enc_oom(e);
        e->sorted = ns;
        e->scap = ncap;
    }
    for (size_t k = 0; k < n; k++) e->sorted[base + k] = &v->u.members[k];
    if (n > 1) qsort((void *)(e->sorted + base), n, sizeof *e->sorted, cmp_member);
    for (size_t k = 1; k < n; k++)
        if (cmp_member(&e->sorted[base + k - 1], &e->sorted[base + k]) == 0)
            return pch_error_set(e->err, PCH_EINVAL, "jsonb: duplicate object key \"%.*s\"",
                                 (int)(e->sorted[base + k]->key_len > 64 ? 64 : e->sorted[base + k]->key_len),
                                 e->sorted[base + k]->key);
    e->slen = need;
    PCH_TRY(enc_table(e, JB_OBJECT | (uint32_t)n, 2 * n, &jpos));
    for (size_t k = 0; k < n; k++) {
        const pch_json_member *m = e->sorted[base + k];
        if (m->key_len && pch_json__utf8_check((const uint8_t *)m->key, m->key_len) != m->key_len)
            return pch_error_set(e->err, PCH_EINVAL, "jsonb: object key is not valid UTF-8");
        before = e->out->len;
        if (pch_buf_append(e->out, m->key, m->key_len) != PCH_OK) return enc_oom(e);
        PCH_TRY(patch_jentry(e, jpos + 4 * k, JE_STRING, m->key_len));
    }
    for (size_t k = 0; k < n; k++) {
        const pch_json_member *m = e->sorted[base + k];
        before = e->out->len;
        if ((rc = enc_payload(e, &m->value, depth, &type)) != PCH_OK) return rc;
        PCH_TRY(patch_jentry(e, jpos + 4 * (n + k), type, e->out->len - before));
    }
    e->slen = base;
    return PCH_OK;
}

int pch_jsonb__encode(pch_buf *out, const pch_json_value *v, const char *src, pch_error *err)
{
    jb_enc e;
    size_t save = out->len, jpos, before;
    uint32_t type;
    int rc;

    (void)src;
    if (!v) return pch_error_set(err, PCH_EINVAL, "jsonb: no value to encode");
    memset(&e, 0, sizeof e);
    e.out = out;
    e.err = err;
    e.max_depth = out->ctx ? pch_ctx_limits(out->ctx)->max_json_depth : PCH_DEFAULT_MAX_JSON_DEPTH;
    if (v->kind == PCH_JSON_ARRAY || v->kind == PCH_JSON_OBJECT) {
        rc = enc_container(&e, v, 1);
    } else {
        rc = enc_table(&e, JB_SCALAR, 1, &jpos);
        if (rc == PCH_OK) {
            before = out->len;
            rc = enc_payload(&e, v, 0, &type);
            if (rc == PCH_OK) rc = patch_jentry(&e, jpos, type, out->len - before);
        }
    }
    pch_free(out->ctx, (void *)e.sorted);
    if (rc != PCH_OK) {
        out->len = save;
        out->oom = 0;
        if (out->data) out->data[save] = 0;
    }
    return rc;
}

int pch_jsonb_encode(pch_ctx *ctx, const pch_json_value *v, const char *src, uint8_t **out,
                     size_t *len_out, pch_error *err)
{
    pch_buf b;
    int rc;
    *out = NULL;
    if (len_out) *len_out = 0;
    pch_buf_init(&b, ctx);
    rc = pch_jsonb__encode(&b, v, src, err);
    if (rc != PCH_OK) { pch_buf_dispose(&b); return rc; }
    *out = pch_buf_detach(&b, len_out);
    return PCH_OK;
}

/* ---------------------------------------------------------------- decoder */

typedef struct jb_dec {
    pch_buf *out;        /* NULL = validate only */
    pch_error *err;
    uint32_t max_depth;
    const uint8_t *base; /* start of the whole JSONB value, for offsets in messages */
} jb_dec;

__attribute__((cold, noinline)) PCH_PRINTF(3, 4)
static int corrupt(jb_dec *d, const uint8_t *at, const char *fmt, ...)
{
    char what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pch_error_set(d->err, PCH_ECORRUPT, "jsonb: byte %zu: %s", (size_t)(at - d->base), what);
}

static int dec_oom(jb_dec *d)
{
    return pch_error_set(d->err, PCH_ENOMEM, "jsonb: out of memory rendering");
}

static int emit(jb_dec *d, const void *p, size_t n)
{
    if (!d->out) return PCH_OK;
    return pch_buf_append(d->out, p, n) == PCH_OK ? PCH_OK : dec_oom(d);
}

/* Render a decimal: value (two's complement BE, 8 or 16 bytes) scaled by 10^-scale. */
static int emit_decimal(jb_dec *d, const uint8_t *p, size_t w, unsigned scale)
{
    __int128 v = 0;
    unsigned __int128 u;
    char dig[80], txt[96];   /* scale <= 76: at most 77 digits, a sign and a point */
    size_t n = 0, o = 0;
    for (size_t k = 0; k < w; k++) v = (__int128)(((unsigned __int128)v << 8) | p[k]);
    if (w == 8) v = (int64_t)(uint64_t)v;  /* sign-extend the 64-bit form */
    u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    do { dig[n++] = (char)('0' + (int)(u % 10)); u /= 10; } while (u);
    while (n <= scale) dig[n++] = '0';
    if (v < 0) txt[o++] = '-';
    for (size_t k = n; k > 0; k--) {
        txt[o++] = dig[k - 1];
        if (k - 1 == scale && scale) txt[o++] = '.';
    }
    return emit(d, txt, o);
}

static int dec_number(jb_dec *d, const uint8_t *p, size_t len)
{
    char tmp[48];
    size_t n;
    if (len < 1) return corrupt(d, p, "empty number");
    uint8_t tag = p[0];
    size_t w = len - 1;
    switch (tag) {
    case 0x00:
        if (w) return corrupt(d, p, "zero number with %zu data bytes", w);
        return emit(d, "0", 1);
    case 0x10: case 0x20: case 0x30:
        if (w) return corrupt(d, p, "special float with %zu data bytes", w);
        return emit(d, tag == 0x10 ? "NaN" : tag == 0x20 ? "Infinity" : "-Infinity",
                    tag == 0x10 ? 3 : tag == 0x20 ? 8 : 9);
    case 0x40: case 0x50: {
        if (w != 1 && w != 2 && w != 4 && w != 8)
            return corrupt(d, p, "integer of width %zu", w);
        uint64_t u = 0;
        for (size_t k = 0; k < w; k++) u = (u << 8) | p[1 + k];
        bool neg = false;
        if (tag == 0x40) {
            if (w < 8 && (u >> (8 * w - 1)) & 1) u |= ~(uint64_t)0 << (8 * w);  /* sign-extend */
            if (u >> 63) { neg = true; u = ~u + 1; }   /* magnitude, INT64_MIN included */
        }
        n = sizeof tmp;                                 /* digits from the end (no printf) */
        do { tmp[--n] = (char)('0' + u % 10); u /= 10; } while (u);
        if (neg) tmp[--n] = '-';
        return emit(d, tmp + n, sizeof tmp - n);
    }
    case 0x60: {
        if (w != 8) return corrupt(d, p, "float64 of width %zu", w);
        uint64_t bits = pch_load_be64(p + 1);
        double x;
        memcpy(&x, &bits, 8);
        n = pch_json__fmt_double(tmp, x);
        return emit(d, tmp, n);
    }
    case 0x70: {
        if (w != 9 && w != 17 && w != 33) return corrupt(d, p, "decimal of width %zu", w);
        unsigned scale = p[len - 1];
        if (scale > 76) return corrupt(d, p, "decimal scale %u", scale);
        if (!d->out) return PCH_OK;
        if (w == 33) return PCH_EUNSUPPORTED;   /* message set by pch_jsonb__to_json */
        return emit_decimal(d, p + 1, w - 1, scale);
    }
    default:
        return corrupt(d, p, "unknown number tag 0x%02x", tag);
    }
}

static int dec_extension(jb_dec *d, const uint8_t *p, size_t len)
{
    if (len < 1) return corrupt(d, p, "empty extension value");
    size_t want;
    switch (p[0]) {
    case 0x00: want = len; break;        /* binary: any length */
    case 0x10: want = 1 + 4; break;      /* date i32 */
    case 0x20: want = 1 + 8; break;      /* timestamp i64 */
    case 0x30: want = 1 + 8 + 4; break;  /* timestamp_tz i64 + i32 */
    case 0x40: want = 1 + 4 + 4 + 8; break; /* interval */
    default: return corrupt(d, p, "unknown extension tag 0x%02x", p[0]);
    }
    if (len != want) return corrupt(d, p, "extension of %zu bytes", len);
    return d->out ? PCH_EUNSUPPORTED : PCH_OK;   /* message set by pch_jsonb__to_json */
}

static int dec_container(jb_dec *d, const uint8_t *p, size_t len, uint32_t depth, int top);

static int dec_entry(jb_dec *d, uint32_t type, const uint8_t *p, size_t len, uint32_t depth)
{
    switch (type) {
    case JE_NULL:
    case JE_FALSE:
    case JE_TRUE:
        if (len) return corrupt(d, p, "null/boolean entry with length %zu", len);
        return type == JE_NULL ? emit(d, "null", 4) : type == JE_TRUE ? emit(d, "true", 4)
                                                                      : emit(d, "false", 5);
    case JE_STRING:
        if (d->out) {   /* rendering checks UTF-8 as it copies: one pass over the bytes */
            int rc = pch_json__write_string(d->out, (const char *)p, len);
            if (rc == PCH_EINVAL) return corrupt(d, p, "string is not valid UTF-8");
            return rc == PCH_OK ? PCH_OK : dec_oom(d);
        }
        if (pch_json__utf8_check(p, len) != len) return corrupt(d, p, "string is not valid UTF-8");
        return PCH_OK;
    case JE_NUMBER: return dec_number(d, p, len);
    case JE_CONTAINER: return dec_container(d, p, len, depth + 1, 0);
    case JE_EXTENSION: return dec_extension(d, p, len);
    default: return corrupt(d, p, "unknown jentry type %u", type);
    }
}

/* Check jentry je at position `at` against the `left` payload bytes; returns its length. */
static int jentry(jb_dec *d, const uint8_t *at, uint32_t je, size_t left, uint32_t *type,
                  size_t *len)
{
    if (je & JB_OFFSET_FLAG) return corrupt(d, at, "jentry with offset flag");
    *type = (je >> 28) & 7u;
    *len = je & JB_LEN_MASK;
    if (*len > left) return corrupt(d, at, "jentry length %zu past the container end", *len);
    return PCH_OK;
}

/* p[0..len) must be exactly one container. */
static int dec_container(jb_dec *d, const uint8_t *p, size_t len, uint32_t depth, int top)
{
    if (len < 4) return corrupt(d, p, "container shorter than its header");
    if (depth > d->max_depth)
        return pch_error_set(d->err, PCH_ELIMIT, "jsonb: nesting deeper than %u", d->max_depth);
    uint32_t hdr = pch_load_be32(p), htype = hdr & JB_TYPE_MASK, count = hdr & JB_COUNT_MASK;
    uint64_t k;
    if (htype == JB_SCALAR) {
        if (!top) return corrupt(d, p, "scalar header inside a container");
        if (count) return corrupt(d, p, "scalar header with count %u", count);
        k = 1;
    } else if (htype == JB_ARRAY) {
        k = count;
    } else if (htype == JB_OBJECT) {
        k = 2 * (uint64_t)count;
    } else {
        return corrupt(d, p, "unknown container header 0x%08x", hdr);
    }
    if (k > (len - 4) / 4) return corrupt(d, p, "%llu jentries past the end", (unsigned long long)k);
    const uint8_t *je = p + 4;
    size_t off = 4 + 4 * (size_t)k;   /* payload cursor */
    uint32_t type = 0;
    size_t l = 0;
    int rc;

    if (htype == JB_SCALAR) {
        PCH_TRY(jentry(d, je, pch_load_be32(je), len - off, &type, &l));
        if (type == JE_CONTAINER) return corrupt(d, je, "scalar header holding a container");
        if (off + l != len) return corrupt(d, p + off + l, "trailing bytes after the scalar");
        return dec_entry(d, type, p + off, l, depth);
    }
    if (htype == JB_ARRAY) {
        PCH_TRY(emit(d, "[", 1));
        for (uint32_t i = 0; i < count; i++) {
            PCH_TRY(jentry(d, je + 4 * i, pch_load_be32(je + 4 * i), len - off, &type, &l));
            if (i) PCH_TRY(emit(d, ",", 1));
            if ((rc = dec_entry(d, type, p + off, l, depth)) != PCH_OK) return rc;
            off += l;
        }
        if (off != len) return corrupt(d, p + off, "%zu trailing bytes in array", len - off);
        return emit(d, "]", 1);
    }
    /* Object: keys first. Sum key lengths to find where the values start. */
    size_t koff = off, voff = off;
    for (uint32_t i = 0; i < count; i++) {
        PCH_TRY(jentry(d, je + 4 * i, pch_load_be32(je + 4 * i), len - voff, &type, &l));
        if (type != JE_STRING) return corrupt(d, je + 4 * i, "object key of jentry type %u", type);
        voff += l;
    }
    PCH_TRY(emit(d, "{", 1));
    for (uint32_t i = 0; i < count; i++) {
        size_t kl = pch_load_be32(je + 4 * i) & JB_LEN_MASK;
        if (i) PCH_TRY(emit(d, ",", 1));
        if ((rc = dec_entry(d, JE_STRING, p + koff, kl, depth)) != PCH_OK) return rc;
        koff += kl;
        PCH_TRY(emit(d, ":", 1));
        const uint8_t *vj = je + 4 * ((size_t)count + i);
        PCH_TRY(jentry(d, vj, pch_load_be32(vj), len - voff, &type, &l));
        if ((rc = dec_entry(d, type, p + voff, l, depth)) != PCH_OK) return rc;
        voff += l;
    }
    if (voff != len) return corrupt(d, p + voff, "%zu trailing bytes in object", len - voff);
    return emit(d, "}", 1);
}

int pch_jsonb__to_json(pch_buf *out, const uint8_t *p, size_t len, pch_error *err)
{
    jb_dec d;
    size_t save = out->len;
    int rc;
    if (!p && len) return pch_error_set(err, PCH_EINVAL, "jsonb: invalid argument");
    d.out = out;
    d.err = err;
    d.max_depth = out->ctx ? pch_ctx_limits(out->ctx)->max_json_depth : PCH_DEFAULT_MAX_JSON_DEPTH;
    d.base = p;
    rc = dec_container(&d, p, len, 1, 1);
    if (rc == PCH_EUNSUPPORTED) {
        /* Rendering stopped at a valid but unrenderable value: corrupt bytes after it take
        ** precedence, so that the code never depends on where rendering stopped. */
        int vrc = pch_jsonb__validate(p, len, err);
        if (vrc == PCH_OK) pch_error_set(err, rc, "jsonb: extension value or 256-bit decimal has no JSON rendering");
        else rc = vrc;
    }
    if (rc == PCH_OK) rc = pch_buf_reserve(out, 0) == PCH_OK ? PCH_OK : dec_oom(&d);
    if (rc != PCH_OK) {
        out->len = save;
        out->oom = 0;
        if (out->data) out->data[save] = 0;
    }
    return rc;
}

int pch_jsonb__validate(const uint8_t *p, size_t len, pch_error *err)
{
    jb_dec d;
    if (!p && len) return pch_error_set(err, PCH_EINVAL, "jsonb: invalid argument");
    d.out = NULL;
    d.err = err;
    d.max_depth = PCH_DEFAULT_MAX_JSON_DEPTH;
    d.base = p;
    return dec_container(&d, p, len, 1, 1);
}

int pch_jsonb_to_json(pch_ctx *ctx, const uint8_t *jsonb, size_t len, char **out,
                      size_t *len_out, pch_error *err)
{
    pch_buf b;
    int rc;
    *out = NULL;
    if (len_out) *len_out = 0;
    pch_buf_init(&b, ctx);
    rc = pch_jsonb__to_json(&b, jsonb, len, err);
    if (rc != PCH_OK) { pch_buf_dispose(&b); return rc; }
    *out = (char *)pch_buf_detach(&b, len_out);
    return PCH_OK;
}
