/* Tiny protobuf (proto3) encoder/decoder for Vortex metadata and ScalarValue
** (vortex-format.md §4, Appendix B). Decoding reads through a pch_rd cursor; unknown fields
** are skipped as prost does; groups (wire types 3/4) are rejected. */
#include "vortex/vortex_int.h"

int pch_vx__pb_varint(pch_buf *b, uint64_t v) { return pch_buf_put_varint(b, v); }

int pch_vx__pb_uint_force(pch_buf *b, unsigned field, uint64_t v)
{
    PCH_TRY(pch_vx__pb_varint(b, (uint64_t)field << 3));
    return pch_vx__pb_varint(b, v);
}

int pch_vx__pb_uint(pch_buf *b, unsigned field, uint64_t v)
{
    return v ? pch_vx__pb_uint_force(b, field, v) : PCH_OK;
}

int pch_vx__pb_bytes(pch_buf *b, unsigned field, const void *p, size_t n)
{
    PCH_TRY(pch_vx__pb_varint(b, ((uint64_t)field << 3) | 2));
    PCH_TRY(pch_vx__pb_varint(b, n));
    return pch_buf_append(b, p, n);
}

int pch_vx__pb_next(pch_rd *r, pch_vx_pbf *f, pch_error *err)
{
    uint64_t key;
    memset(f, 0, sizeof(*f));
    if (pch_rd_left(r) == 0) return 0;
    if (!pch_rd_varint(r, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
        return pch_error_set(err, PCH_ECORRUPT, "vortex metadata: bad protobuf key");
    f->field = (uint32_t)(key >> 3);
    f->wt = (uint8_t)(key & 7);
    switch (f->wt) {
    case 0:
        if (!pch_rd_varint(r, &f->v)) break;
        return 1;
    case 1:
        if (!pch_rd_le64(r, &f->v)) break;
        return 1;
    case 5: {
        uint32_t v32;
        if (!pch_rd_le32(r, &v32)) break;
        f->v = v32;
        return 1;
    }
    case 2: {
        uint64_t n;
        if (!pch_rd_varint(r, &n) || n > pch_rd_left(r)) break;
        f->n = (size_t)n;
        f->p = r->ptr + r->off;
        r->off += f->n;
        return 1;
    }
    default:
        return pch_error_set(err, PCH_ECORRUPT, "vortex metadata: protobuf wire type %u", f->wt);
    }
    return pch_error_set(err, PCH_ECORRUPT, "vortex metadata: truncated protobuf field %u",
                         f->field);
}

/* ---- ScalarValue ---- */

int pch_vx__scalar_encode(pch_buf *b, const pch_vx_scalar *s)
{
    uint8_t t[8];
    switch (s->kind) {
    case PCH_VX_SV_NULL: return pch_vx__pb_uint_force(b, 1, 0);
    case PCH_VX_SV_BOOL: return pch_vx__pb_uint_force(b, 2, s->u ? 1 : 0);
    case PCH_VX_SV_I64:
        return pch_vx__pb_uint_force(b, 3, ((uint64_t)s->i << 1) ^ (uint64_t)(s->i >> 63));
    case PCH_VX_SV_U64: return pch_vx__pb_uint_force(b, 4, s->u);
    case PCH_VX_SV_F16: return pch_vx__pb_uint_force(b, 4, s->u); /* §4: raw bits, 0.36 form */
    case PCH_VX_SV_F32: {
        float f = (float)s->f;
        PCH_TRY(pch_vx__pb_varint(b, (5 << 3) | 5));
        memcpy(t, &f, 4);
        return pch_buf_append(b, t, 4);
    }
    case PCH_VX_SV_F64:
        PCH_TRY(pch_vx__pb_varint(b, (6 << 3) | 1));
        memcpy(t, &s->f, 8);
        return pch_buf_append(b, t, 8);
    case PCH_VX_SV_STR: return pch_vx__pb_bytes(b, 7, s->p, s->n);
    case PCH_VX_SV_BYTES: return pch_vx__pb_bytes(b, 8, s->p, s->n);
    default: return PCH_EINVAL;
    }
}

int pch_vx__scalar_decode(pch_vx_scalar *s, const uint8_t *p, size_t n, pch_error *err)
{
    pch_rd r = pch_rd_make(p, n);
    pch_vx_pbf f;
    int rc, seen = 0;
    memset(s, 0, sizeof(*s));
    while ((rc = pch_vx__pb_next(&r, &f, err)) == 1) {
        int want = (f.field == 5) ? 5 : (f.field == 6) ? 1 : (f.field == 7 || f.field == 8 ||
                   f.field == 9 || f.field == 11) ? 2 : 0;
        if (f.field > 11) continue;
        if (f.wt != want)
            return pch_error_set(err, PCH_ECORRUPT, "vortex scalar: field %u wire type %u",
                                 f.field, f.wt);
        seen = 1;
        switch (f.field) {
        case 1: s->kind = PCH_VX_SV_NULL; break;
        case 2: s->kind = PCH_VX_SV_BOOL; s->u = f.v != 0; break;
        case 3: s->kind = PCH_VX_SV_I64; s->i = (int64_t)((f.v >> 1) ^ (~(f.v & 1) + 1)); break;
        case 4: s->kind = PCH_VX_SV_U64; s->u = f.v; break;
        case 5: { float x; uint32_t v32 = (uint32_t)f.v; memcpy(&x, &v32, 4);
                  s->kind = PCH_VX_SV_F32; s->f = x; break; }
        case 6: s->kind = PCH_VX_SV_F64; memcpy(&s->f, &f.v, 8); break;
        case 7: s->kind = PCH_VX_SV_STR; s->p = f.p; s->n = f.n; break;
        case 8: s->kind = PCH_VX_SV_BYTES; s->p = f.p; s->n = f.n; break;
        case 10: s->kind = PCH_VX_SV_F16; s->u = f.v; break;
        default:
            return pch_error_set(err, PCH_EUNSUPPORTED, "vortex scalar: list/variant scalars");
        }
    }
    if (rc < 0) return rc;
    if (!seen) return pch_error_set(err, PCH_ECORRUPT, "vortex scalar: empty ScalarValue");
    return PCH_OK;
}
