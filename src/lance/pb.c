/* Protocol Buffers wire encoding/decoding for Lance messages; see pb.h. */
#include "lance/pb.h"

int pch_pb_put_varint(pch_buf *b, uint64_t v) { return pch_buf_put_varint(b, v); }

int pch_pb_put_tag(pch_buf *b, uint32_t field, int wire)
{
    return pch_pb_put_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

int pch_pb_put_u64(pch_buf *b, uint32_t field, uint64_t v)
{
    PCH_TRY(pch_pb_put_tag(b, field, PCH_PB_VARINT));
    return pch_pb_put_varint(b, v);
}

int pch_pb_put_u64_nz(pch_buf *b, uint32_t field, uint64_t v)
{
    return v ? pch_pb_put_u64(b, field, v) : PCH_OK;
}

int pch_pb_put_i64(pch_buf *b, uint32_t field, int64_t v)
{
    return pch_pb_put_u64(b, field, (uint64_t)v);
}

int pch_pb_put_bytes(pch_buf *b, uint32_t field, const void *p, size_t n)
{
    PCH_TRY(pch_pb_put_tag(b, field, PCH_PB_LEN));
    PCH_TRY(pch_pb_put_varint(b, n));
    return pch_buf_append(b, p, n);
}

int pch_pb_put_str(pch_buf *b, uint32_t field, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n ? pch_pb_put_bytes(b, field, s, n) : PCH_OK;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

int pch_pb_put_packed_u64(pch_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (n == 0) return PCH_OK;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += varint_len(v[i]);
    PCH_TRY(pch_pb_put_tag(b, field, PCH_PB_LEN));
    PCH_TRY(pch_pb_put_varint(b, total));
    for (size_t i = 0; i < n; i++) PCH_TRY(pch_pb_put_varint(b, v[i]));
    return PCH_OK;
}

int pch_pb_put_packed_i32(pch_buf *b, uint32_t field, const int32_t *v, size_t n)
{
    if (n == 0) return PCH_OK;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += varint_len((uint64_t)(int64_t)v[i]);
    PCH_TRY(pch_pb_put_tag(b, field, PCH_PB_LEN));
    PCH_TRY(pch_pb_put_varint(b, total));
    for (size_t i = 0; i < n; i++) PCH_TRY(pch_pb_put_varint(b, (uint64_t)(int64_t)v[i]));
    return PCH_OK;
}

int pch_pb_begin(pch_buf *b, uint32_t field, size_t *mark)
{
    PCH_TRY(pch_pb_put_tag(b, field, PCH_PB_LEN));
    *mark = b->len;
    return pch_buf_zero(b, 5);
}

int pch_pb_end(pch_buf *b, size_t mark)
{
    if (b->oom) return PCH_ENOMEM;
    size_t body = b->len - mark - 5;
    size_t vl = varint_len(body);
    uint8_t t[10];
    size_t n = 0;
    uint64_t v = body;
    while (v >= 0x80) { t[n++] = (uint8_t)(v | 0x80); v >>= 7; }
    t[n++] = (uint8_t)v;
    /* Shift the body left so the length prefix is minimal. */
    memmove(b->data + mark + vl, b->data + mark + 5, body);
    memcpy(b->data + mark, t, vl);
    b->len -= 5 - vl;
    b->data[b->len] = 0;
    return PCH_OK;
}

bool pch_pb_read_varint(pch_rd *r, uint64_t *out) { return pch_rd_varint(r, out); }

int pch_pb_next(pch_rd *r, pch_pb_field *f, const char *what, pch_error *err)
{
    uint64_t key;
    memset(f, 0, sizeof *f);
    if (pch_rd_left(r) == 0) return 0;
    if (!pch_pb_read_varint(r, &key))
        return pch_error_set(err, PCH_ECORRUPT, "%s: bad protobuf tag at byte %zu", what, r->off);
    f->num = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    if (f->num == 0 || (key >> 3) > 0x1fffffff)
        return pch_error_set(err, PCH_ECORRUPT, "%s: bad protobuf field number", what);
    switch (f->wire) {
    case PCH_PB_VARINT:
        if (!pch_pb_read_varint(r, &f->v))
            return pch_error_set(err, PCH_ECORRUPT, "%s: truncated varint (field %u)", what, f->num);
        return 1;
    case PCH_PB_I64:
        if (!pch_rd_le64(r, &f->v))
            return pch_error_set(err, PCH_ECORRUPT, "%s: truncated fixed64 (field %u)", what, f->num);
        return 1;
    case PCH_PB_I32: {
        uint32_t v;
        if (!pch_rd_le32(r, &v))
            return pch_error_set(err, PCH_ECORRUPT, "%s: truncated fixed32 (field %u)", what, f->num);
        f->v = v;
        return 1;
    }
    case PCH_PB_LEN: {
        uint64_t n;
        size_t sn;
        if (!pch_pb_read_varint(r, &n) || !pch_u64_to_size(&sn, n) ||
            !pch_rd_bytes(r, sn, &f->ptr))
            return pch_error_set(err, PCH_ECORRUPT, "%s: length of field %u past the end", what, f->num);
        f->len = sn;
        return 1;
    }
    default:
        return pch_error_set(err, PCH_ECORRUPT, "%s: unsupported protobuf wire type %d (field %u)",
                             what, f->wire, f->num);
    }
}

int pch_pb_collect_u64(const pch_pb_field *f, pch_ctx *ctx, uint64_t **arr, size_t *n,
                       size_t *cap, const char *what, pch_error *err)
{
    pch_rd r;
    uint64_t one = f->v;
    bool packed = f->wire == PCH_PB_LEN;
    if (!packed && f->wire != PCH_PB_VARINT)
        return pch_error_set(err, PCH_ECORRUPT, "%s: field %u has wire type %d", what, f->num, f->wire);
    r = pch_rd_make(f->ptr, f->len);
    for (;;) {
        uint64_t v;
        if (packed) {
            if (pch_rd_left(&r) == 0) break;
            if (!pch_pb_read_varint(&r, &v))
                return pch_error_set(err, PCH_ECORRUPT, "%s: bad packed varint in field %u", what, f->num);
        } else {
            v = one;
        }
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 8, bytes;
            if (!pch_mul_size(&bytes, nc, sizeof(uint64_t)))
                return pch_error_set(err, PCH_ELIMIT, "%s: too many values", what);
            uint64_t *na = pch_realloc(ctx, *arr, bytes);
            if (!na) return pch_error_set(err, PCH_ENOMEM, "out of memory");
            *arr = na;
            *cap = nc;
        }
        (*arr)[(*n)++] = v;
        if (!packed) break;
    }
    return PCH_OK;
}

int pch_pb_get_u64(const uint8_t *p, size_t n, uint32_t num, uint64_t *out, const char *where,
                   pch_error *err)
{
    pch_rd r = pch_rd_make(p, n);
    pch_pb_field f;
    int rc;
    *out = 0;
    while ((rc = pch_pb_next(&r, &f, where, err)) == 1)
        if (f.num == num && f.wire == PCH_PB_VARINT) *out = f.v;
    return rc < 0 ? rc : PCH_OK;
}
