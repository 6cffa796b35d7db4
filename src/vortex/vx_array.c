/* Canonical in-memory arrays of the Vortex side (vortex-format.md §6.2, §6.4 canonical set):
** allocation, equality, slicing/taking/concatenation, the row builder and the JSON row
** printer used by `pchronicle-vortex dump`. Invariants (see vortex.h): offsets start at 0,
** are non-decreasing and end at data_len / child length; validity NULL = all valid; null
** slots hold zeros/empty values; extension validity lives on the storage child. */
#include "vortex/vortex_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

pch_vx_array *pch_vx__array_new(pch_ctx *ctx, const pch_vx_dtype *dt, uint64_t len,
                                uint32_t n_children)
{
    pch_vx_array *a = pch_calloc(ctx, 1, sizeof(*a));
    if (!a) return NULL;
    a->ctx = ctx;
    a->dtype = dt;
    a->len = len;
    if (n_children) {
        a->children = pch_calloc(ctx, n_children, sizeof(pch_vx_array *));
        if (!a->children) { pch_free(ctx, a); return NULL; }
        a->n_children = n_children;
    }
    return a;
}

void pch_vx_array_free(pch_vx_array *a)
{
    if (!a) return;
    for (uint32_t i = 0; i < a->n_children; i++) pch_vx_array_free(a->children[i]);
    pch_free(a->ctx, a->children);
    pch_free(a->ctx, a->validity);
    pch_free(a->ctx, a->data);
    pch_free(a->ctx, a->offsets);
    pch_free(a->ctx, a->dict_codes);
    pch_vx_array_free(a->dict_values);
    pch_free(a->ctx, a);
}

int pch_vx__array_alloc_data(pch_vx_array *a, size_t n)
{
    a->data = pch_calloc(a->ctx, n ? n : 1, 1);
    a->data_len = n;
    return a->data ? PCH_OK : PCH_ENOMEM;
}

int pch_vx__array_alloc_data_raw(pch_vx_array *a, size_t n)
{
    a->data = pch_malloc(a->ctx, n ? n : 1);
    a->data_len = n;
    return a->data ? PCH_OK : PCH_ENOMEM;
}

int pch_vx__array_alloc_offsets(pch_vx_array *a)
{
    size_t n;
    if (!pch_u64_to_size(&n, a->len) || !pch_add_size(&n, n, 1)) return PCH_ENOMEM;
    /* every caller writes offsets 1..len; only the first is implied */
    if (n > SIZE_MAX / sizeof(int64_t) || !(a->offsets = pch_malloc(a->ctx, n * sizeof(int64_t)))) return PCH_ENOMEM;
    a->offsets[0] = 0;
    return PCH_OK;
}

int pch_vx__array_alloc_validity(pch_vx_array *a)
{
    size_t n = (size_t)((a->len + 7) / 8);
    a->validity = pch_malloc(a->ctx, n ? n : 1);
    if (!a->validity) return PCH_ENOMEM;
    memset(a->validity, 0xff, n ? n : 1);
    return PCH_OK;
}

int pch_vx_array_is_valid(const pch_vx_array *a, uint64_t i)
{
    if (a->dtype->kind == PCH_VX_NULL) return 0;
    if (a->dtype->kind == PCH_VX_EXTENSION) return pch_vx_array_is_valid(a->children[0], i);
    return !a->validity || pch_vx__bit(a->validity, i);
}

int pch_vx__array_null_count(const pch_vx_array *a, uint64_t *out)
{
    uint64_t n = 0;
    if (a->dtype->kind == PCH_VX_NULL) { *out = a->len; return PCH_OK; }
    if (a->dtype->kind == PCH_VX_EXTENSION) return pch_vx__array_null_count(a->children[0], out);
    if (a->validity)
        for (uint64_t i = 0; i < a->len; i++) n += !pch_vx__bit(a->validity, i);
    *out = n;
    return PCH_OK;
}

uint64_t pch_vx__load_uint(const uint8_t *d, unsigned ptype, uint64_t i)
{
    switch (pch_vx_ptype_width(ptype)) {
    case 1: return d[i];
    case 2: return pch_load_le16(d + 2 * i);
    case 4: return pch_load_le32(d + 4 * i);
    default: return pch_load_le64(d + 8 * i);
    }
}

int64_t pch_vx__load_int(const uint8_t *d, unsigned ptype, uint64_t i)
{
    switch (ptype) {
    case PCH_VX_I8: return (int8_t)d[i];
    case PCH_VX_I16: return (int16_t)pch_load_le16(d + 2 * i);
    case PCH_VX_I32: return (int32_t)pch_load_le32(d + 4 * i);
    default: return (int64_t)pch_vx__load_uint(d, ptype, i);
    }
}

void pch_vx__store_uint(uint8_t *d, unsigned ptype, uint64_t i, uint64_t v)
{
    switch (pch_vx_ptype_width(ptype)) {
    case 1: d[i] = (uint8_t)v; break;
    case 2: pch_store_le16(d + 2 * i, (uint16_t)v); break;
    case 4: pch_store_le32(d + 4 * i, (uint32_t)v); break;
    default: pch_store_le64(d + 8 * i, v); break;
    }
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0) v = ldexp(m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

double pch_vx__load_float(const uint8_t *d, unsigned ptype, uint64_t i)
{
    if (ptype == PCH_VX_F16) return half_to_double(pch_load_le16(d + 2 * i));
    if (ptype == PCH_VX_F32) { float f; memcpy(&f, d + 4 * i, 4); return f; }
    if (ptype == PCH_VX_F64) { double f; memcpy(&f, d + 8 * i, 8); return f; }
    if (pch_vx__is_signed(ptype)) return (double)pch_vx__load_int(d, ptype, i);
    return (double)pch_vx__load_uint(d, ptype, i);
}

uint64_t pch_vx__array_nbytes(const pch_vx_array *a)
{
    uint64_t n = a->data_len;
    if (a->validity) n += (a->len + 7) / 8;
    if (a->offsets) n += (a->len + 1) * 4;   /* counted as i32 offsets */
    for (uint32_t i = 0; i < a->n_children; i++) n += pch_vx__array_nbytes(a->children[i]);
    return n;
}

void pch_vx__scalar_of(pch_vx_scalar *s, const pch_vx_array *a, uint64_t i)
{
    const pch_vx_dtype *d = a->dtype;
    memset(s, 0, sizeof(*s));
    if (!pch_vx_array_is_valid(a, i)) { s->kind = PCH_VX_SV_NULL; return; }
    switch (d->kind) {
    case PCH_VX_BOOL: s->kind = PCH_VX_SV_BOOL; s->u = pch_vx__bit(a->data, i); return;
    case PCH_VX_PRIMITIVE:
        if (d->ptype == PCH_VX_F16) { s->kind = PCH_VX_SV_F16; s->u = pch_load_le16(a->data + 2 * i); }
        else if (d->ptype == PCH_VX_F32) { s->kind = PCH_VX_SV_F32; s->f = pch_vx__load_float(a->data, d->ptype, i); }
        else if (d->ptype == PCH_VX_F64) { s->kind = PCH_VX_SV_F64; s->f = pch_vx__load_float(a->data, d->ptype, i); }
        else if (pch_vx__is_signed(d->ptype)) { s->kind = PCH_VX_SV_I64; s->i = pch_vx__load_int(a->data, d->ptype, i); }
        else { s->kind = PCH_VX_SV_U64; s->u = pch_vx__load_uint(a->data, d->ptype, i); }
        return;
    case PCH_VX_DECIMAL: {
        unsigned w = pch_vx_decimal_width(d->precision);
        s->kind = PCH_VX_SV_BYTES; s->p = a->data + (size_t)i * w; s->n = w;
        return;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY:
        s->kind = d->kind == PCH_VX_UTF8 ? PCH_VX_SV_STR : PCH_VX_SV_BYTES;
        s->p = a->data + a->offsets[i];
        s->n = (size_t)(a->offsets[i + 1] - a->offsets[i]);
        return;
    default: s->kind = PCH_VX_SV_NULL; return;
    }
}

/* ------------------------------------------------------------------ validation */

int pch_vx__array_validate(const pch_vx_array *a, const pch_vx_dtype *d, pch_error *err)
{
    uint32_t want = d->kind == PCH_VX_STRUCT ? d->n_fields :
                    (d->kind == PCH_VX_LIST || d->kind == PCH_VX_FIXED_SIZE_LIST || d->kind == PCH_VX_EXTENSION) ? 1 : 0;
    if (!pch_vx_dtype_equal(a->dtype, d)) return pch_error_set(err, PCH_EINVAL, "vortex array: dtype mismatch");
    if (a->n_children != want) return pch_error_set(err, PCH_EINVAL, "vortex array: %u children, want %u", a->n_children, want);
    if (a->validity && (!d->nullable || d->kind == PCH_VX_EXTENSION || d->kind == PCH_VX_NULL))
        return pch_error_set(err, PCH_EINVAL, "vortex array: validity on a non-nullable array");
    switch (d->kind) {
    case PCH_VX_BOOL:
        if (!a->data || a->data_len < (a->len + 7) / 8) return pch_error_set(err, PCH_EINVAL, "vortex array: bool bits too short");
        break;
    case PCH_VX_PRIMITIVE: case PCH_VX_DECIMAL: {
        unsigned w = d->kind == PCH_VX_DECIMAL ? pch_vx_decimal_width(d->precision) : pch_vx_ptype_width(d->ptype);
        if (a->len > SIZE_MAX / w || a->data_len != (size_t)a->len * w || (a->len && !a->data))
            return pch_error_set(err, PCH_EINVAL, "vortex array: %zu value bytes for %" PRIu64 " rows", a->data_len, a->len);
        break;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY: case PCH_VX_LIST: {
        uint64_t end = d->kind == PCH_VX_LIST ? a->children[0]->len : a->data_len;
        if (!a->offsets || a->offsets[0] != 0) return pch_error_set(err, PCH_EINVAL, "vortex array: offsets missing or not from 0");
        for (uint64_t i = 0; i < a->len; i++)
            if (a->offsets[i + 1] < a->offsets[i]) return pch_error_set(err, PCH_EINVAL, "vortex array: offsets decrease at %" PRIu64, i);
        if ((uint64_t)a->offsets[a->len] != end) return pch_error_set(err, PCH_EINVAL, "vortex array: last offset %" PRId64 " != %" PRIu64, a->offsets[a->len], end);
        if (d->kind == PCH_VX_LIST) return pch_vx__array_validate(a->children[0], d->elem, err);
        if (d->kind == PCH_VX_UTF8 && !pch_vx_utf8_rows_valid(a->data, a->offsets, a->len))
            for (uint64_t i = 0; i < a->len; i++)
                if (!pch_vx_utf8_valid(a->data + a->offsets[i], (size_t)(a->offsets[i + 1] - a->offsets[i])))
                    return pch_error_set(err, PCH_EINVAL, "vortex array: invalid UTF-8 at row %" PRIu64, i);
        break;
    }
    case PCH_VX_STRUCT:
        for (uint32_t i = 0; i < d->n_fields; i++) {
            if (a->children[i]->len != a->len)
                return pch_error_set(err, PCH_EINVAL, "vortex array: field '%s' has %" PRIu64 " rows, struct has %" PRIu64, d->names[i], a->children[i]->len, a->len);
            PCH_TRY(pch_vx__array_validate(a->children[i], d->fields[i], err));
        }
        break;
    case PCH_VX_FIXED_SIZE_LIST: case PCH_VX_EXTENSION: {
        uint64_t want_len;
        if (!pch_mul_u64(&want_len, a->len, d->kind == PCH_VX_EXTENSION ? 1 : d->fsl_size) || a->children[0]->len != want_len)
            return pch_error_set(err, PCH_EINVAL, "vortex array: child has %" PRIu64 " rows", a->children[0]->len);
        return pch_vx__array_validate(a->children[0], d->elem, err);
    }
    default: break;
    }
    return PCH_OK;
}

/* ------------------------------------------------------------------ equality */

/* The bytes of valid row i of a utf8/binary array; a codes-only array (a scan's text_codes)
** reads them from its dictionary. */
static void text_at(const pch_vx_array *a, uint64_t i, const uint8_t **p, size_t *n)
{
    if (!a->offsets && a->dict_codes && a->dict_values) {
        i = a->dict_codes[i];
        a = a->dict_values;
    }
    *p = a->data ? a->data + a->offsets[i] : (const uint8_t *)"";
    *n = (size_t)(a->offsets[i + 1] - a->offsets[i]);
}

static int row_equal(const pch_vx_array *a, uint64_t i, const pch_vx_array *b, uint64_t j)
{
    const pch_vx_dtype *d = a->dtype;
    int va = pch_vx_array_is_valid(a, i), vb = pch_vx_array_is_valid(b, j);
    if (va != vb) return 0;
    if (!va) return 1;
    switch (d->kind) {
    case PCH_VX_BOOL: return pch_vx__bit(a->data, i) == pch_vx__bit(b->data, j);
    case PCH_VX_PRIMITIVE: case PCH_VX_DECIMAL: {
        unsigned w = d->kind == PCH_VX_DECIMAL ? pch_vx_decimal_width(d->precision) : pch_vx_ptype_width(d->ptype);
        return memcmp(a->data + i * w, b->data + j * w, w) == 0;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY: {
        const uint8_t *pa, *pb;
        size_t la, lb;
        text_at(a, i, &pa, &la);
        text_at(b, j, &pb, &lb);
        return la == lb && (la == 0 || memcmp(pa, pb, la) == 0);
    }
    case PCH_VX_STRUCT:
        for (uint32_t k = 0; k < a->n_children; k++)
            if (!row_equal(a->children[k], i, b->children[k], j)) return 0;
        return 1;
    case PCH_VX_LIST: {
        int64_t la = a->offsets[i + 1] - a->offsets[i], lb = b->offsets[j + 1] - b->offsets[j];
        if (la != lb) return 0;
        for (int64_t k = 0; k < la; k++)
            if (!row_equal(a->children[0], (uint64_t)(a->offsets[i] + k), b->children[0], (uint64_t)(b->offsets[j] + k)))
                return 0;
        return 1;
    }
    case PCH_VX_FIXED_SIZE_LIST:
        for (uint64_t k = 0; k < d->fsl_size; k++)
            if (!row_equal(a->children[0], i * d->fsl_size + k, b->children[0], j * d->fsl_size + k)) return 0;
        return 1;
    case PCH_VX_EXTENSION: return row_equal(a->children[0], i, b->children[0], j);
    default: return 1;
    }
}

int pch_vx_array_equal(const pch_vx_array *a, const pch_vx_array *b)
{
    if (a->len != b->len || !pch_vx_dtype_equal(a->dtype, b->dtype)) return 0;
    for (uint64_t i = 0; i < a->len; i++)
        if (!row_equal(a, i, b, i)) return 0;
    return 1;
}

/* ------------------------------------------------------------------ take / slice / concat */

static int take_rec(pch_vx_array **out, const pch_vx_array *a, const uint64_t *idx, uint64_t n)
{
    const pch_vx_dtype *d = a->dtype;
    pch_vx_array *r = pch_vx__array_new(a->ctx, d, n, a->n_children);
    uint64_t *cidx = NULL;
    int rc = PCH_ENOMEM;
    *out = NULL;
    if (!r) return PCH_ENOMEM;
    if (a->validity) {
        if (pch_vx__array_alloc_validity(r)) goto done;
        for (uint64_t k = 0; k < n; k++) pch_vx__set_bit(r->validity, k, pch_vx__bit(a->validity, idx[k]));
    }
    switch (d->kind) {
    case PCH_VX_BOOL:
        if (pch_vx__array_alloc_data(r, (size_t)((n + 7) / 8))) goto done;
        for (uint64_t k = 0; k < n; k++) pch_vx__set_bit(r->data, k, pch_vx__bit(a->data, idx[k]));
        break;
    case PCH_VX_PRIMITIVE: case PCH_VX_DECIMAL: {
        unsigned w = d->kind == PCH_VX_DECIMAL ? pch_vx_decimal_width(d->precision) : pch_vx_ptype_width(d->ptype);
        uint8_t *dst;
        const uint8_t *src = a->data;
        if (pch_vx__array_alloc_data_raw(r, (size_t)n * w)) goto done;   /* every byte written below */
        dst = r->data;
        switch (w) {                /* one loop per width: a fixed-size copy, not a call per row */
        case 1: for (uint64_t k = 0; k < n; k++) dst[k] = src[idx[k]]; break;
        case 2: for (uint64_t k = 0; k < n; k++) memcpy(dst + 2 * k, src + 2 * idx[k], 2); break;
        case 4: for (uint64_t k = 0; k < n; k++) memcpy(dst + 4 * k, src + 4 * idx[k], 4); break;
        case 8: for (uint64_t k = 0; k < n; k++) memcpy(dst + 8 * k, src + 8 * idx[k], 8); break;
        default: for (uint64_t k = 0; k < n; k++) memcpy(dst + k * w, src + idx[k] * w, w); break;
        }
        break;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY: {
        size_t total = 0;
        if (pch_vx__array_alloc_offsets(r)) goto done;
        for (uint64_t k = 0; k < n; k++) {
            total += (size_t)(a->offsets[idx[k] + 1] - a->offsets[idx[k]]);
            r->offsets[k + 1] = (int64_t)total;
        }
        if (pch_vx__array_alloc_data_raw(r, total)) goto done;   /* every byte written below */
        for (uint64_t k = 0; k < n; k++) {
            size_t l = (size_t)(r->offsets[k + 1] - r->offsets[k]);
            uint8_t *dst = r->data + r->offsets[k];
            const uint8_t *src = a->data + a->offsets[idx[k]];
            if (l) memcpy(dst, src, l);
        }
        break;
    }
    case PCH_VX_STRUCT:
        for (uint32_t c = 0; c < a->n_children; c++)
            if ((rc = take_rec(&r->children[c], a->children[c], idx, n))) goto done;
        break;
    case PCH_VX_EXTENSION:
        if ((rc = take_rec(&r->children[0], a->children[0], idx, n))) goto done;
        break;
    case PCH_VX_LIST: case PCH_VX_FIXED_SIZE_LIST: {
        uint64_t total = 0, m = 0;
        int fsl = d->kind == PCH_VX_FIXED_SIZE_LIST;
        if (!fsl && pch_vx__array_alloc_offsets(r)) goto done;
        for (uint64_t k = 0; k < n; k++) {
            total += fsl ? d->fsl_size : (uint64_t)(a->offsets[idx[k] + 1] - a->offsets[idx[k]]);
            if (!fsl) r->offsets[k + 1] = (int64_t)total;
        }
        if (total > SIZE_MAX / 8 || !(cidx = pch_malloc(a->ctx, (size_t)(total ? total : 1) * 8))) goto done;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t s = fsl ? idx[k] * d->fsl_size : (uint64_t)a->offsets[idx[k]];
            uint64_t e = fsl ? s + d->fsl_size : (uint64_t)a->offsets[idx[k] + 1];
            for (uint64_t x = s; x < e; x++) cidx[m++] = x;
        }
        if ((rc = take_rec(&r->children[0], a->children[0], cidx, total))) goto done;
        break;
    }
    default: break;
    }
    rc = PCH_OK;
    *out = r;
    r = NULL;
done:
    pch_free(a->ctx, cidx);
    pch_vx_array_free(r);
    return rc;
}

int pch_vx__array_take(pch_vx_array **out, const pch_vx_array *a, const uint64_t *idx,
                       uint64_t n, pch_error *err)
{
    for (uint64_t k = 0; k < n; k++)
        if (idx[k] >= a->len) return pch_error_set(err, PCH_EINVAL, "vortex take: index %" PRIu64 " past %" PRIu64, idx[k], a->len);
    if (take_rec(out, a, idx, n)) return pch_error_set(err, PCH_ENOMEM, "vortex take: out of memory");
    return PCH_OK;
}

int pch_vx__array_slice(pch_vx_array **out, const pch_vx_array *a, uint64_t begin, uint64_t n,
                        pch_error *err)
{
    uint64_t *idx;
    int rc;
    *out = NULL;
    if (begin > a->len || n > a->len - begin)
        return pch_error_set(err, PCH_EINVAL, "vortex slice: rows out of range");
    if (n > SIZE_MAX / 8 || !(idx = pch_malloc(a->ctx, (size_t)(n ? n : 1) * 8)))
        return pch_error_set(err, PCH_ENOMEM, "vortex slice: out of memory");
    for (uint64_t k = 0; k < n; k++) idx[k] = begin + k;
    rc = pch_vx__array_take(out, a, idx, n, err);
    pch_free(a->ctx, idx);
    return rc;
}

static int concat_rec(pch_vx_array **out, const pch_vx_dtype *d, pch_ctx *ctx,
                      pch_vx_array *const *parts, size_t np)
{
    uint64_t len = 0, at = 0;
    int any_validity = 0, rc = PCH_ENOMEM;
    uint32_t nch = d->kind == PCH_VX_STRUCT ? d->n_fields :
                   (d->kind == PCH_VX_LIST || d->kind == PCH_VX_FIXED_SIZE_LIST || d->kind == PCH_VX_EXTENSION) ? 1 : 0;
    pch_vx_array *r, **sub = NULL;
    *out = NULL;
    for (size_t p = 0; p < np; p++) { len += parts[p]->len; any_validity |= parts[p]->validity != NULL; }
    if (!(r = pch_vx__array_new(ctx, d, len, nch))) return PCH_ENOMEM;
    if (any_validity) {
        if (pch_vx__array_alloc_validity(r)) goto done;
        for (size_t p = 0; p < np; p++) {
            if (parts[p]->validity)
                for (uint64_t k = 0; k < parts[p]->len; k++)
                    pch_vx__set_bit(r->validity, at + k, pch_vx__bit(parts[p]->validity, k));
            at += parts[p]->len;
        }
    }
    at = 0;
    switch (d->kind) {
    case PCH_VX_BOOL:
        if (pch_vx__array_alloc_data(r, (size_t)((len + 7) / 8))) goto done;
        for (size_t p = 0; p < np; p++) {
            for (uint64_t k = 0; k < parts[p]->len; k++) pch_vx__set_bit(r->data, at + k, pch_vx__bit(parts[p]->data, k));
            at += parts[p]->len;
        }
        break;
    case PCH_VX_PRIMITIVE: case PCH_VX_DECIMAL: {
        size_t tot = 0;
        for (size_t p = 0; p < np; p++) tot += parts[p]->data_len;
        if (pch_vx__array_alloc_data_raw(r, tot)) goto done;   /* every byte copied below */
        tot = 0;
        for (size_t p = 0; p < np; p++) {
            if (parts[p]->data_len) memcpy(r->data + tot, parts[p]->data, parts[p]->data_len);
            tot += parts[p]->data_len;
        }
        break;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY: case PCH_VX_LIST: {
        int64_t base = 0;
        size_t tot = 0;
        if (pch_vx__array_alloc_offsets(r)) goto done;
        for (size_t p = 0; p < np; p++) {
            for (uint64_t k = 0; k < parts[p]->len; k++) r->offsets[at + k + 1] = base + parts[p]->offsets[k + 1];
            at += parts[p]->len;
            base += parts[p]->offsets[parts[p]->len];
            tot += parts[p]->data_len;
        }
        if (d->kind != PCH_VX_LIST) {
            if (pch_vx__array_alloc_data_raw(r, tot)) goto done;   /* every byte copied below */
            tot = 0;
            for (size_t p = 0; p < np; p++) {
                if (parts[p]->data_len) memcpy(r->data + tot, parts[p]->data, parts[p]->data_len);
                tot += parts[p]->data_len;
            }
        }
        break;
    }
    default: break;
    }
    if (nch) {
        if (!(sub = pch_calloc(ctx, np ? np : 1, sizeof(*sub)))) goto done;
        for (uint32_t c = 0; c < nch; c++) {
            const pch_vx_dtype *cd = d->kind == PCH_VX_STRUCT ? d->fields[c] : d->elem;
            for (size_t p = 0; p < np; p++) sub[p] = parts[p]->children[c];
            if ((rc = concat_rec(&r->children[c], cd, ctx, sub, np))) goto done;
        }
    }
    rc = PCH_OK;
    *out = r;
    r = NULL;
done:
    pch_free(ctx, sub);
    pch_vx_array_free(r);
    return rc;
}

int pch_vx__array_concat(pch_vx_array **out, const pch_vx_dtype *dt, pch_ctx *ctx,
                         pch_vx_array *const *parts, size_t n, pch_error *err)
{
    if (concat_rec(out, dt, ctx, parts, n)) return pch_error_set(err, PCH_ENOMEM, "vortex concat: out of memory");
    return PCH_OK;
}

/* ------------------------------------------------------------------ builder */

struct pch_vx_builder {
    pch_ctx *ctx;
    const pch_vx_dtype *dt;
    uint64_t len;
    pch_buf data;        /* values / bits / bytes */
    pch_buf offs;        /* int64 offsets (varbin, list), first 0 implied */
    pch_buf valid;       /* validity bits */
    size_t data_hint;    /* bytes of data the last finished array held: reserved at the next
                         ** first append, so a chunk's values are not regrown from empty */
    int has_null;
    uint32_t n_children;
    pch_vx_builder **children;
};

static void builder_free_rec(pch_vx_builder *b)
{
    if (!b) return;
    for (uint32_t i = 0; i < b->n_children; i++) builder_free_rec(b->children[i]);
    pch_free(b->ctx, b->children);
    pch_buf_dispose(&b->data);
    pch_buf_dispose(&b->offs);
    pch_buf_dispose(&b->valid);
    pch_free(b->ctx, b);
}

void pch_vx_builder_free(pch_vx_builder *b) { builder_free_rec(b); }

static pch_vx_builder *builder_new_rec(pch_ctx *ctx, const pch_vx_dtype *dt)
{
    pch_vx_builder *b = pch_calloc(ctx, 1, sizeof(*b));
    uint32_t n;
    if (!b) return NULL;
    b->ctx = ctx;
    b->dt = dt;
    pch_buf_init(&b->data, ctx);
    pch_buf_init(&b->offs, ctx);
    pch_buf_init(&b->valid, ctx);
    n = dt->kind == PCH_VX_STRUCT ? dt->n_fields : dt->elem ? 1 : 0;
    if (n) {
        if (!(b->children = pch_calloc(ctx, n, sizeof(*b->children)))) { builder_free_rec(b); return NULL; }
        b->n_children = n;
        for (uint32_t i = 0; i < n; i++)
            if (!(b->children[i] = builder_new_rec(ctx, dt->kind == PCH_VX_STRUCT ? dt->fields[i] : dt->elem))) {
                builder_free_rec(b);
                return NULL;
            }
    }
    return b;
}

int pch_vx_builder_new(pch_vx_builder **out, pch_ctx *ctx, const pch_vx_dtype *dt, pch_error *err)
{
    *out = builder_new_rec(ctx, dt);
    return *out ? PCH_OK : pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
}

pch_vx_builder *pch_vx_builder_child(pch_vx_builder *b, uint32_t i)
{
    return i < b->n_children ? b->children[i] : NULL;
}

const pch_vx_dtype *pch_vx_builder_dtype(const pch_vx_builder *b) { return b->dt; }
uint64_t pch_vx_builder_len(const pch_vx_builder *b) { return b->len; }

static int b_row(pch_vx_builder *b, int valid)
{
    if ((b->len & 7) == 0) PCH_TRY(pch_buf_putc(&b->valid, 0));
    if (valid) b->valid.data[b->len >> 3] |= (uint8_t)(1u << (b->len & 7));
    else b->has_null = 1;
    b->len++;
    return PCH_OK;
}

static int b_default(pch_vx_builder *b, int valid);

static int b_value_default(pch_vx_builder *b)
{
    const pch_vx_dtype *d = b->dt;
    switch (d->kind) {
    case PCH_VX_BOOL:
        if ((b->len & 7) == 0) PCH_TRY(pch_buf_putc(&b->data, 0));
        return PCH_OK;
    case PCH_VX_PRIMITIVE: return pch_buf_zero(&b->data, pch_vx_ptype_width(d->ptype));
    case PCH_VX_DECIMAL: return pch_buf_zero(&b->data, pch_vx_decimal_width(d->precision));
    case PCH_VX_UTF8: case PCH_VX_BINARY: {
        int64_t end = (int64_t)b->data.len;
        return pch_buf_append(&b->offs, &end, 8);
    }
    case PCH_VX_LIST: {
        int64_t end = (int64_t)b->children[0]->len;
        return pch_buf_append(&b->offs, &end, 8);
    }
    case PCH_VX_STRUCT:
        for (uint32_t i = 0; i < b->n_children; i++) PCH_TRY(b_default(b->children[i], 0));
        return PCH_OK;
    case PCH_VX_FIXED_SIZE_LIST:
        for (uint32_t i = 0; i < d->fsl_size; i++) PCH_TRY(b_default(b->children[0], 0));
        return PCH_OK;
    default: return PCH_OK;
    }
}

/* A default row: null when the dtype allows it, else a zero value. */
static int b_default(pch_vx_builder *b, int valid)
{
    if (b->dt->kind == PCH_VX_EXTENSION) {
        PCH_TRY(b_default(b->children[0], valid));
        b->len++;
        return PCH_OK;
    }
    PCH_TRY(b_value_default(b));
    return b_row(b, valid || !b->dt->nullable);
}

int pch_vx_builder_append_null(pch_vx_builder *b, pch_error *err)
{
    if (!b->dt->nullable)
        return pch_error_set(err, PCH_EINVAL, "vortex builder: null in a non-nullable column");
    if (b_default(b, 0)) return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
    return PCH_OK;
}

int pch_vx_builder_append_valid(pch_vx_builder *b, pch_error *err)
{
    const pch_vx_dtype *d = b->dt;
    int rc = PCH_OK;
    switch (d->kind) {
    case PCH_VX_STRUCT:
        for (uint32_t i = 0; i < b->n_children; i++)
            if (b->children[i]->len != b->len + 1)
                return pch_error_set(err, PCH_EINVAL, "vortex builder: struct field '%s' has %" PRIu64 " rows, want %" PRIu64,
                                     d->names[i], b->children[i]->len, b->len + 1);
        break;
    case PCH_VX_LIST: {
        int64_t end = (int64_t)b->children[0]->len;
        rc = pch_buf_append(&b->offs, &end, 8);
        break;
    }
    case PCH_VX_FIXED_SIZE_LIST:
        if (b->children[0]->len != (b->len + 1) * d->fsl_size)
            return pch_error_set(err, PCH_EINVAL, "vortex builder: fixed-size list needs %u elements per row", d->fsl_size);
        break;
    case PCH_VX_EXTENSION:
        if (b->children[0]->len != b->len + 1)
            return pch_error_set(err, PCH_EINVAL, "vortex builder: extension storage row missing");
        b->len++;
        return PCH_OK;
    default:
        return pch_error_set(err, PCH_EINVAL, "vortex builder: append_valid on a leaf column");
    }
    if (rc || b_row(b, 1)) return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
    return PCH_OK;
}

static int b_need(pch_vx_builder *b, unsigned kind, pch_error *err)
{
    if (b->dt->kind != kind)
        return pch_error_set(err, PCH_EINVAL, "vortex builder: value does not match column type");
    return PCH_OK;
}

int pch_vx_builder_append_bool(pch_vx_builder *b, int v, pch_error *err)
{
    PCH_TRY(b_need(b, PCH_VX_BOOL, err));
    if ((b->len & 7) == 0 && pch_buf_putc(&b->data, 0)) goto oom;
    if (v) b->data.data[b->len >> 3] |= (uint8_t)(1u << (b->len & 7));
    if (b_row(b, 1)) goto oom;
    return PCH_OK;
oom:
    return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
}

/* The first values after a finish: room for about as many bytes as the last array held. */
static int b_hint(pch_vx_builder *b)
{
    return b->data.cap || !b->data_hint ? PCH_OK : pch_buf_reserve(&b->data, b->data_hint + b->data_hint / 8);
}

static int put_prim(pch_vx_builder *b, uint64_t bits, pch_error *err)
{
    uint8_t t[8];
    unsigned w = pch_vx_ptype_width(b->dt->ptype);
    pch_store_le64(t, bits);
    if (b_hint(b) || pch_buf_append(&b->data, t, w) || b_row(b, 1))
        return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
    return PCH_OK;
}

static uint16_t double_to_half(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int e = (int)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    if (e >= 31) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return sign;
        m |= 0x800000;
        return (uint16_t)(sign | (m >> (14 - e)));
    }
    return (uint16_t)(sign | (e << 10) | (m >> 13));
}

int pch_vx_builder_append_float(pch_vx_builder *b, double v, pch_error *err)
{
    PCH_TRY(b_need(b, PCH_VX_PRIMITIVE, err));
    switch (b->dt->ptype) {
    case PCH_VX_F16: return put_prim(b, double_to_half(v), err);
    case PCH_VX_F32: { float f = (float)v; uint32_t x; memcpy(&x, &f, 4); return put_prim(b, x, err); }
    case PCH_VX_F64: { uint64_t x; memcpy(&x, &v, 8); return put_prim(b, x, err); }
    default:
        if (v != floor(v) || !isfinite(v))
            return pch_error_set(err, PCH_EINVAL, "vortex builder: non-integer value for an integer column");
        if (pch_vx__is_signed(b->dt->ptype)) {
            if (v < -9.3e18 || v > 9.3e18) return pch_error_set(err, PCH_EINVAL, "vortex builder: integer out of range");
            return pch_vx_builder_append_int(b, (int64_t)v, err);
        }
        if (v < 0 || v > 1.8e19) return pch_error_set(err, PCH_EINVAL, "vortex builder: integer out of range");
        return pch_vx_builder_append_uint(b, (uint64_t)v, err);
    }
}

int pch_vx_builder_append_int(pch_vx_builder *b, int64_t v, pch_error *err)
{
    unsigned p;
    PCH_TRY(b_need(b, PCH_VX_PRIMITIVE, err));
    p = b->dt->ptype;
    if (p >= PCH_VX_F16) return pch_vx_builder_append_float(b, (double)v, err);
    if (!pch_vx__is_signed(p)) {
        if (v < 0) return pch_error_set(err, PCH_EINVAL, "vortex builder: negative value %" PRId64 " for %s", v, pch_vx_ptype_name(p));
        return pch_vx_builder_append_uint(b, (uint64_t)v, err);
    }
    unsigned w = pch_vx_ptype_width(p);
    if (w < 8) {
        int64_t lim = (int64_t)1 << (8 * w - 1);
        if (v < -lim || v >= lim)
            return pch_error_set(err, PCH_EINVAL, "vortex builder: %" PRId64 " out of range for %s", v, pch_vx_ptype_name(p));
    }
    return put_prim(b, (uint64_t)v, err);
}

int pch_vx_builder_append_uint(pch_vx_builder *b, uint64_t v, pch_error *err)
{
    unsigned p;
    PCH_TRY(b_need(b, PCH_VX_PRIMITIVE, err));
    p = b->dt->ptype;
    if (p >= PCH_VX_F16) return pch_vx_builder_append_float(b, (double)v, err);
    if (pch_vx__is_signed(p)) {
        if (v > (uint64_t)INT64_MAX) return pch_error_set(err, PCH_EINVAL, "vortex builder: %" PRIu64 " out of range for %s", v, pch_vx_ptype_name(p));
        return pch_vx_builder_append_int(b, (int64_t)v, err);
    }
    unsigned w = pch_vx_ptype_width(p);
    if (w < 8 && v >> (8 * w))
        return pch_error_set(err, PCH_EINVAL, "vortex builder: %" PRIu64 " out of range for %s", v, pch_vx_ptype_name(p));
    return put_prim(b, v, err);
}

/* Mark n appended rows valid (validity bits of a bulk append). */
static int b_rows_valid(pch_vx_builder *b, size_t n)
{
    uint64_t end = b->len + n;
    size_t need = (size_t)((end + 7) / 8);
    if (need > b->valid.len) PCH_TRY(pch_buf_zero(&b->valid, need - b->valid.len));
    for (uint64_t i = b->len; i < end && (i & 7); i++) b->valid.data[i >> 3] |= (uint8_t)(1u << (i & 7));
    {
        uint64_t i = (b->len + 7) & ~(uint64_t)7;
        if (i < end) {
            uint64_t full = (end - i) / 8;
            memset(b->valid.data + (i >> 3), 0xff, (size_t)full);
            for (i += full * 8; i < end; i++) b->valid.data[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
    }
    b->len = end;
    return PCH_OK;
}

int pch_vx_builder_append_u32s(pch_vx_builder *b, const uint32_t *v, size_t n, pch_error *err)
{
    unsigned p, w;
    uint8_t *d;
    PCH_TRY(b_need(b, PCH_VX_PRIMITIVE, err));
    p = b->dt->ptype;
    if (p >= PCH_VX_F16 || !n) {
        for (size_t i = 0; i < n; i++) PCH_TRY(pch_vx_builder_append_uint(b, v[i], err));
        return PCH_OK;
    }
    w = pch_vx_ptype_width(p);
    if (w < 4)
        for (size_t i = 0; i < n; i++)
            if (v[i] >> (8 * w - (pch_vx__is_signed(p) ? 1 : 0)))
                return pch_error_set(err, PCH_EINVAL, "vortex builder: %u out of range for %s", v[i], pch_vx_ptype_name(p));
    if (w == 4 && pch_vx__is_signed(p))
        for (size_t i = 0; i < n; i++)
            if (v[i] > 0x7fffffffu) return pch_error_set(err, PCH_EINVAL, "vortex builder: %u out of range for %s", v[i], pch_vx_ptype_name(p));
    if (b_hint(b) || pch_buf_reserve(&b->data, n * w) < 0) goto oom;
    d = b->data.data + b->data.len;
    if (w == 4) memcpy(d, v, n * 4);
    else for (size_t i = 0; i < n; i++) { uint8_t t[8]; pch_store_le64(t, v[i]); memcpy(d + i * w, t, w); }
    b->data.len += n * w;
    if (b_rows_valid(b, n)) goto oom;
    return PCH_OK;
oom:
    return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
}

int pch_vx_builder_append_doubles(pch_vx_builder *b, const double *v, size_t n, pch_error *err)
{
    uint8_t *d;
    PCH_TRY(b_need(b, PCH_VX_PRIMITIVE, err));
    if ((b->dt->ptype != PCH_VX_F32 && b->dt->ptype != PCH_VX_F64) || !n) {
        for (size_t i = 0; i < n; i++) PCH_TRY(pch_vx_builder_append_float(b, v[i], err));
        return PCH_OK;
    }
    if (b_hint(b) || pch_buf_reserve(&b->data, n * 8) < 0) goto oom;
    d = b->data.data + b->data.len;
    if (b->dt->ptype == PCH_VX_F64) {
        memcpy(d, v, n * 8);
        b->data.len += n * 8;
    } else {
        for (size_t i = 0; i < n; i++) { float f = (float)v[i]; memcpy(d + 4 * i, &f, 4); }
        b->data.len += n * 4;
    }
    if (b_rows_valid(b, n)) goto oom;
    return PCH_OK;
oom:
    return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
}

int pch_vx_builder_append_bytes(pch_vx_builder *b, const void *p, size_t n, pch_error *err)
{
    int64_t end;
    if (b->dt->kind != PCH_VX_UTF8 && b->dt->kind != PCH_VX_BINARY)
        return pch_error_set(err, PCH_EINVAL, "vortex builder: bytes for a non-string column");
    if (b->dt->kind == PCH_VX_UTF8 && !pch_vx_utf8_valid(p, n))
        return pch_error_set(err, PCH_EINVAL, "vortex builder: invalid UTF-8 in a utf8 column");
    if (b_hint(b) || pch_buf_append(&b->data, p, n)) goto oom;
    end = (int64_t)b->data.len;
    if (pch_buf_append(&b->offs, &end, 8) || b_row(b, 1)) goto oom;
    return PCH_OK;
oom:
    return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
}

int pch_vx_builder_append_decimal(pch_vx_builder *b, const uint8_t *le, size_t n, pch_error *err)
{
    uint8_t t[32];
    unsigned w;
    PCH_TRY(b_need(b, PCH_VX_DECIMAL, err));
    w = pch_vx_decimal_width(b->dt->precision);
    if (n == 0 || n > 32) return pch_error_set(err, PCH_EINVAL, "vortex builder: decimal bytes length %zu", n);
    memset(t, (le[n - 1] & 0x80) ? 0xff : 0, sizeof t);
    memcpy(t, le, n);
    for (size_t i = w; i < 32; i++)
        if (t[i] != ((t[w - 1] & 0x80) ? 0xff : 0))
            return pch_error_set(err, PCH_EINVAL, "vortex builder: decimal value wider than precision %u", b->dt->precision);
    if (pch_buf_append(&b->data, t, w) || b_row(b, 1))
        return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
    return PCH_OK;
}

/* ---- rows copied from a decoded array (compaction, RFC-0006 §12.3) ---- */

static bool bit_at(const uint8_t *bits, uint64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

/* Validity of n appended rows from rows [begin, begin + n) of a. */
static int b_rows_from(pch_vx_builder *b, const pch_vx_array *a, uint64_t begin, uint64_t n)
{
    if (!a->validity) return b_rows_valid(b, (size_t)n);
    for (uint64_t i = 0; i < n; i++) PCH_TRY(b_row(b, bit_at(a->validity, begin + i)));
    return PCH_OK;
}

/* Offsets of rows [begin, end) of a varbin or list array, rebased to base (where the copied
** values or elements begin in the builder); each must stay inside [offsets[begin], limit]. */
static int b_offsets_from(pch_vx_builder *b, const pch_vx_array *a, uint64_t begin, uint64_t end, int64_t base,
                          uint64_t limit, pch_error *err)
{
    int64_t o0 = a->offsets[begin], prev = o0;
    if (pch_buf_reserve(&b->offs, (size_t)(end - begin) * 8) < 0) return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
    for (uint64_t i = begin; i < end; i++) {
        int64_t o = a->offsets[i + 1], v;
        if (o < prev || (uint64_t)o > limit) return pch_error_set(err, PCH_ECORRUPT, "vortex builder: offsets of the copied rows are out of order");
        prev = o;
        v = base + (o - o0);
        memcpy(b->offs.data + b->offs.len, &v, 8);
        b->offs.len += 8;
    }
    return PCH_OK;
}

static int range_rec(pch_vx_builder *b, const pch_vx_array *a, uint64_t begin, uint64_t end, pch_error *err)
{
    const pch_vx_dtype *d = b->dt;
    uint64_t n = end - begin;
    if (end > a->len) return pch_error_set(err, PCH_ECORRUPT, "vortex builder: copied rows past the array's %" PRIu64, a->len);
    switch (d->kind) {
    case PCH_VX_NULL:
        for (uint64_t i = 0; i < n; i++)
            if (b_default(b, 0)) goto oom;
        return PCH_OK;
    case PCH_VX_BOOL:
        if (!a->data && n) break;
        for (uint64_t i = begin; i < end; i++) {
            if ((b->len & 7) == 0 && pch_buf_putc(&b->data, 0)) goto oom;
            if (bit_at(a->data, i)) b->data.data[b->len >> 3] |= (uint8_t)(1u << (b->len & 7));
            if (b_row(b, !a->validity || bit_at(a->validity, i))) goto oom;
        }
        return PCH_OK;
    case PCH_VX_PRIMITIVE: case PCH_VX_DECIMAL: {
        size_t w = d->kind == PCH_VX_PRIMITIVE ? pch_vx_ptype_width(d->ptype) : pch_vx_decimal_width(d->precision);
        if (n && (!a->data || a->data_len < end * w)) break;
        if (b_hint(b) || pch_buf_append(&b->data, a->data + begin * w, (size_t)n * w) || b_rows_from(b, a, begin, n)) goto oom;
        return PCH_OK;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY: {
        if (!a->offsets || !a->data) {     /* dictionary codes alone: row by row through them */
            for (uint64_t i = begin; i < end; i++) {
                const char *p = "";
                size_t len = 0;
                bool ok = pch_vx_row_bytes(a, i, &p, &len);
                if (!ok && pch_vx_row_valid(a, i)) return pch_error_set(err, PCH_ECORRUPT, "vortex builder: copied row %" PRIu64 " unreadable", i);
                if (ok) PCH_TRY(pch_vx_builder_append_bytes(b, p, len, err));
                else PCH_TRY(pch_vx_builder_append_null(b, err));
            }
            return PCH_OK;
        }
        int64_t o0 = a->offsets[begin], o1 = a->offsets[end];
        if (o0 < 0 || o1 < o0 || (uint64_t)o1 > a->data_len) break;
        if (d->kind == PCH_VX_UTF8)
            for (uint64_t i = begin; i < end; i++)
                if (a->offsets[i] >= o0 && a->offsets[i + 1] >= a->offsets[i] && a->offsets[i + 1] <= o1 &&
                    !pch_vx_utf8_valid(a->data + a->offsets[i], (size_t)(a->offsets[i + 1] - a->offsets[i])))
                    return pch_error_set(err, PCH_EINVAL, "vortex builder: invalid UTF-8 in a utf8 column");
        int64_t base = (int64_t)b->data.len;
        if (b_hint(b) || pch_buf_append(&b->data, a->data + o0, (size_t)(o1 - o0))) goto oom;
        PCH_TRY(b_offsets_from(b, a, begin, end, base, (uint64_t)o1, err));
        if (b_rows_from(b, a, begin, n)) goto oom;
        return PCH_OK;
    }
    case PCH_VX_STRUCT:
        if (a->n_children != b->n_children) break;
        for (uint32_t k = 0; k < b->n_children; k++) PCH_TRY(range_rec(b->children[k], a->children[k], begin, end, err));
        if (b_rows_from(b, a, begin, n)) goto oom;
        return PCH_OK;
    case PCH_VX_LIST: {
        if (a->n_children != 1 || !a->offsets) break;
        int64_t c0 = a->offsets[begin], c1 = a->offsets[end];
        int64_t base = (int64_t)b->children[0]->len;
        if (c0 < 0 || c1 < c0 || (uint64_t)c1 > a->children[0]->len) break;
        PCH_TRY(range_rec(b->children[0], a->children[0], (uint64_t)c0, (uint64_t)c1, err));
        PCH_TRY(b_offsets_from(b, a, begin, end, base, (uint64_t)c1, err));
        if (b_rows_from(b, a, begin, n)) goto oom;
        return PCH_OK;
    }
    case PCH_VX_FIXED_SIZE_LIST:
        if (a->n_children != 1) break;
        PCH_TRY(range_rec(b->children[0], a->children[0], begin * d->fsl_size, end * d->fsl_size, err));
        if (b_rows_from(b, a, begin, n)) goto oom;
        return PCH_OK;
    case PCH_VX_EXTENSION:
        if (a->n_children != 1) break;
        PCH_TRY(range_rec(b->children[0], a->children[0], begin, end, err));
        b->len += n;
        return PCH_OK;
    default:
        break;
    }
    return pch_error_set(err, PCH_ECORRUPT, "vortex builder: copied array does not match its dtype");
oom:
    return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
}

int pch_vx_builder_append_range(pch_vx_builder *b, const pch_vx_array *a, uint64_t begin, uint64_t end, pch_error *err)
{
    if (!a || !pch_vx_dtype_equal(b->dt, a->dtype))
        return pch_error_set(err, PCH_EINVAL, "vortex builder: copied rows are of another dtype");
    if (begin > end) return pch_error_set(err, PCH_EINVAL, "vortex builder: copied rows [%" PRIu64 ", %" PRIu64 ")", begin, end);
    return range_rec(b, a, begin, end, err);
}

static int b_finish_rec(pch_vx_builder *b, pch_vx_array **out)
{
    const pch_vx_dtype *d = b->dt;
    pch_vx_array *a = pch_vx__array_new(b->ctx, d, b->len, b->n_children);
    size_t n;
    *out = NULL;
    if (!a) return PCH_ENOMEM;
    for (uint32_t i = 0; i < b->n_children; i++)
        if (b_finish_rec(b->children[i], &a->children[i])) { pch_vx_array_free(a); return PCH_ENOMEM; }
    if (d->kind != PCH_VX_EXTENSION && d->kind != PCH_VX_NULL && b->has_null) {
        if (pch_buf_reserve(&b->valid, 1)) { pch_vx_array_free(a); return PCH_ENOMEM; }
        a->validity = pch_buf_detach(&b->valid, &n);
    }
    pch_buf_clear(&b->valid);
    if (d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY || d->kind == PCH_VX_LIST) {
        if (pch_vx__array_alloc_offsets(a)) { pch_vx_array_free(a); return PCH_ENOMEM; }
        if (b->len) memcpy(a->offsets + 1, b->offs.data, (size_t)b->len * 8);
        pch_buf_clear(&b->offs);
    }
    if (d->kind == PCH_VX_BOOL || d->kind == PCH_VX_PRIMITIVE || d->kind == PCH_VX_DECIMAL ||
        d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY) {
        if (pch_buf_reserve(&b->data, 1)) { pch_vx_array_free(a); return PCH_ENOMEM; }
        a->data = pch_buf_detach(&b->data, &a->data_len);
        b->data_hint = a->data_len;
        if (d->kind == PCH_VX_BOOL) a->data_len = (size_t)((b->len + 7) / 8);
    }
    b->len = 0;
    b->has_null = 0;
    *out = a;
    return PCH_OK;
}

int pch_vx_builder_finish(pch_vx_builder *b, pch_vx_array **out, pch_error *err)
{
    if (b_finish_rec(b, out)) return pch_error_set(err, PCH_ENOMEM, "vortex builder: out of memory");
    return PCH_OK;
}

/* ------------------------------------------------------------------ JSON rows */

void pch_vx_text_dispose(pch_vx_text *t)
{
    pch_free(t->ctx, t->ptr);
    t->ptr = NULL;
    t->len = t->cap = 0;
}

int pch_vx__text_append(pch_vx_text *t, const char *p, size_t n)
{
    if (t->oom) return PCH_ENOMEM;
    if (t->len + n + 1 > t->cap) {
        size_t nc = t->cap ? t->cap : 256;
        while (nc < t->len + n + 1) nc *= 2;
        char *np = pch_realloc(t->ctx, t->ptr, nc);
        if (!np) { t->oom = 1; return PCH_ENOMEM; }
        t->ptr = np;
        t->cap = nc;
    }
    memcpy(t->ptr + t->len, p, n);
    t->len += n;
    t->ptr[t->len] = 0;
    return PCH_OK;
}

int pch_vx__text_printf(pch_vx_text *t, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) return PCH_EINVAL;
    return pch_vx__text_append(t, tmp, (size_t)n);
}

static int json_str(pch_vx_text *t, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    PCH_TRY(pch_vx__text_append(t, "\"", 1));
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        PCH_TRY(pch_vx__text_append(t, (const char *)p + run, i - run));
        run = i + 1;
        if (c == '"') PCH_TRY(pch_vx__text_append(t, "\\\"", 2));
        else if (c == '\\') PCH_TRY(pch_vx__text_append(t, "\\\\", 2));
        else if (c == '\n') PCH_TRY(pch_vx__text_append(t, "\\n", 2));
        else if (c == '\t') PCH_TRY(pch_vx__text_append(t, "\\t", 2));
        else if (c == '\r') PCH_TRY(pch_vx__text_append(t, "\\r", 2));
        else {
            char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            PCH_TRY(pch_vx__text_append(t, u, 6));
        }
    }
    PCH_TRY(pch_vx__text_append(t, (const char *)p + run, n - run));
    return pch_vx__text_append(t, "\"", 1);
}

/* Floats as JavaScript's Number.prototype.toString prints the shortest round-trip digits
** (the same text `pchronicle lance dump` prints; NaN/Infinity as strings). */
static int json_double(pch_vx_text *t, double v, int is_f32)
{
    char tmp[48], dg[24];
    int prec, x;
    size_t nd = 0;
    char *e;
    if (isnan(v)) return pch_vx__text_append(t, "\"NaN\"", 5);
    if (isinf(v)) return v > 0 ? pch_vx__text_append(t, "\"Infinity\"", 10) : pch_vx__text_append(t, "\"-Infinity\"", 11);
    if (v == 0) return signbit(v) ? pch_vx__text_append(t, "-0", 2) : pch_vx__text_append(t, "0", 1);
    for (prec = 1; prec < 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        if (is_f32 ? strtof(tmp, NULL) == (float)v : strtod(tmp, NULL) == v) break;
    }
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
    e = strchr(tmp, 'e');
    x = atoi(e + 1);
    if (x < -6 || x >= 21) {
        *e = 0;
        return pch_vx__text_printf(t, "%se%c%d", tmp, x < 0 ? '-' : '+', x < 0 ? -x : x);
    }
    for (const char *q = tmp; q < e; q++)
        if (*q >= '0' && *q <= '9') dg[nd++] = *q;
    if (v < 0) PCH_TRY(pch_vx__text_append(t, "-", 1));
    if (x < 0) {
        PCH_TRY(pch_vx__text_append(t, "0.", 2));
        for (int i = 0; i < -x - 1; i++) PCH_TRY(pch_vx__text_append(t, "0", 1));
        return pch_vx__text_append(t, dg, nd);
    }
    if ((size_t)x + 1 >= nd) {
        PCH_TRY(pch_vx__text_append(t, dg, nd));
        for (size_t i = nd; i < (size_t)x + 1; i++) PCH_TRY(pch_vx__text_append(t, "0", 1));
        return PCH_OK;
    }
    PCH_TRY(pch_vx__text_append(t, dg, (size_t)x + 1));
    PCH_TRY(pch_vx__text_append(t, ".", 1));
    return pch_vx__text_append(t, dg + x + 1, nd - (size_t)x - 1);
}

/* Unscaled little-endian two's-complement integer → decimal text with scale. */
static int json_decimal(pch_vx_text *t, const uint8_t *le, unsigned w, int scale)
{
    uint8_t mag[32];
    char digits[100];
    int nd = 0, neg = (le[w - 1] & 0x80) != 0;
    memcpy(mag, le, w);
    if (neg) { unsigned carry = 1; for (unsigned i = 0; i < w; i++) { unsigned v = (uint8_t)~mag[i] + carry; mag[i] = (uint8_t)v; carry = v >> 8; } }
    for (;;) {
        unsigned rem = 0, nz = 0;
        for (unsigned i = w; i-- > 0;) {
            unsigned cur = (rem << 8) | mag[i];
            mag[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
            nz |= mag[i];
        }
        digits[nd++] = (char)('0' + rem);
        if (!nz) break;
    }
    PCH_TRY(pch_vx__text_append(t, "\"", 1));
    if (neg) PCH_TRY(pch_vx__text_append(t, "-", 1));
    if (scale <= 0) {
        for (int i = nd; i-- > 0;) PCH_TRY(pch_vx__text_append(t, &digits[i], 1));
        for (int i = 0; i < -scale; i++) PCH_TRY(pch_vx__text_append(t, "0", 1));
    } else {
        int intd = nd - scale;
        if (intd <= 0) {
            PCH_TRY(pch_vx__text_append(t, "0.", 2));
            for (int i = 0; i < -intd; i++) PCH_TRY(pch_vx__text_append(t, "0", 1));
            for (int i = nd; i-- > 0;) PCH_TRY(pch_vx__text_append(t, &digits[i], 1));
        } else {
            for (int i = nd; i-- > 0;) {
                PCH_TRY(pch_vx__text_append(t, &digits[i], 1));
                if (i == scale) PCH_TRY(pch_vx__text_append(t, ".", 1));
            }
        }
    }
    return pch_vx__text_append(t, "\"", 1);
}

int pch_vx_array_row_json(pch_vx_text *t, const pch_vx_array *a, uint64_t i)
{
    const pch_vx_dtype *d = a->dtype;
    if (!pch_vx_array_is_valid(a, i)) return pch_vx__text_append(t, "null", 4);
    switch (d->kind) {
    case PCH_VX_BOOL:
        return pch_vx__bit(a->data, i) ? pch_vx__text_append(t, "true", 4) : pch_vx__text_append(t, "false", 5);
    case PCH_VX_PRIMITIVE:
        if (d->ptype >= PCH_VX_F16) return json_double(t, pch_vx__load_float(a->data, d->ptype, i), d->ptype != PCH_VX_F64);
        if (pch_vx__is_signed(d->ptype)) return pch_vx__text_printf(t, "%" PRId64, pch_vx__load_int(a->data, d->ptype, i));
        return pch_vx__text_printf(t, "%" PRIu64, pch_vx__load_uint(a->data, d->ptype, i));
    case PCH_VX_DECIMAL: {
        unsigned w = pch_vx_decimal_width(d->precision);
        return json_decimal(t, a->data + (size_t)i * w, w, d->scale);
    }
    case PCH_VX_UTF8: {
        const uint8_t *p;
        size_t n;
        text_at(a, i, &p, &n);
        return json_str(t, p, n);
    }
    case PCH_VX_BINARY: {
        pch_buf b64;
        const uint8_t *p;
        size_t n;
        int rc;
        text_at(a, i, &p, &n);
        pch_buf_init(&b64, a->ctx);
        rc = pch_base64_encode(&b64, p, n);
        if (!rc) rc = pch_vx__text_append(t, "{\"base64\":\"", 11);
        if (!rc) rc = pch_vx__text_append(t, (const char *)(b64.data ? b64.data : (const uint8_t *)""), b64.len);
        if (!rc) rc = pch_vx__text_append(t, "\"}", 2);
        pch_buf_dispose(&b64);
        return rc;
    }
    case PCH_VX_STRUCT:
        PCH_TRY(pch_vx__text_append(t, "{", 1));
        for (uint32_t k = 0; k < d->n_fields; k++) {
            if (k) PCH_TRY(pch_vx__text_append(t, ",", 1));
            PCH_TRY(json_str(t, (const uint8_t *)d->names[k], strlen(d->names[k])));
            PCH_TRY(pch_vx__text_append(t, ":", 1));
            PCH_TRY(pch_vx_array_row_json(t, a->children[k], i));
        }
        return pch_vx__text_append(t, "}", 1);
    case PCH_VX_LIST: case PCH_VX_FIXED_SIZE_LIST: {
        uint64_t s = d->kind == PCH_VX_LIST ? (uint64_t)a->offsets[i] : i * d->fsl_size;
        uint64_t e = d->kind == PCH_VX_LIST ? (uint64_t)a->offsets[i + 1] : s + d->fsl_size;
        PCH_TRY(pch_vx__text_append(t, "[", 1));
        for (uint64_t k = s; k < e; k++) {
            if (k > s) PCH_TRY(pch_vx__text_append(t, ",", 1));
            PCH_TRY(pch_vx_array_row_json(t, a->children[0], k));
        }
        return pch_vx__text_append(t, "]", 1);
    }
    case PCH_VX_EXTENSION: return pch_vx_array_row_json(t, a->children[0], i);
    default: return pch_vx__text_append(t, "null", 4);
    }
}

bool pch_vx_row_valid(const pch_vx_array *a, uint64_t i) { return a && i < a->len && pch_vx_array_is_valid(a, i); }

const pch_vx_array *pch_vx_list_items(const pch_vx_array *a) { return a && a->n_children ? a->children[0] : NULL; }

bool pch_vx_list_range(const pch_vx_array *a, uint64_t i, uint64_t *b, uint64_t *e)
{
    if (!a || a->dtype->kind != PCH_VX_LIST || i >= a->len || !a->offsets) return false;
    *b = (uint64_t)a->offsets[i];
    *e = (uint64_t)a->offsets[i + 1];
    return *b <= *e && (!a->n_children || *e <= a->children[0]->len);
}

bool pch_vx_row_bytes(const pch_vx_array *a, uint64_t i, const char **p, size_t *n)
{
    if (!pch_vx_row_valid(a, i)) return false;
    if (!a->offsets && a->dict_codes && a->dict_values)     /* codes only: the dictionary row */
        return a->dict_codes[i] != UINT32_MAX && pch_vx_row_bytes(a->dict_values, a->dict_codes[i], p, n);
    if (!a->offsets) return false;
    *p = (const char *)a->data + a->offsets[i];
    *n = (size_t)(a->offsets[i + 1] - a->offsets[i]);
    return true;
}

uint64_t pch_vx_row_uint(const pch_vx_array *a, uint64_t i)
{
    switch (a->dtype->ptype) {
    case PCH_VX_U8: case PCH_VX_I8: return a->data[i];
    case PCH_VX_U16: case PCH_VX_I16: return pch_load_le16(a->data + 2 * i);
    case PCH_VX_U32: case PCH_VX_I32: return pch_load_le32(a->data + 4 * i);
    default: return pch_load_le64(a->data + 8 * i);
    }
}

/* ------------------------------------------------------------------ row digests */

/* The canonical byte stream of a row range (docs/vortex-projection.md §6 "Row digests"),
** hashed through a staging buffer: a row of a data file is hundreds of short pieces (a
** length, a flag, a short string), and BLAKE3 takes them far faster in one call. */
typedef struct rowdig { pch_blake3 h; size_t n; uint8_t buf[32768]; } rowdig;

static void rd_put(rowdig *d, const void *p, size_t n)
{
    if (n > sizeof d->buf - d->n) {
        pch_blake3_update(&d->h, d->buf, d->n);
        d->n = 0;
        if (n >= sizeof d->buf / 2) { pch_blake3_update(&d->h, p, n); return; }
    }
    memcpy(d->buf + d->n, p, n);
    d->n += n;
}

static void rd_u64(rowdig *d, uint64_t v)
{
    if (sizeof d->buf - d->n < 8) {
        pch_blake3_update(&d->h, d->buf, d->n);
        d->n = 0;
    }
    pch_store_le64(d->buf + d->n, v);
    d->n += 8;
}

/* The lengths of rows [b, e) of offsets, u64 LE each, straight into the staging buffer (a
** row's lanes are thousands of short strings and lists: this loop is most of the digest). */
static void rd_lengths(rowdig *d, const int64_t *off, uint64_t b, uint64_t e)
{
    while (b < e) {
        size_t room = (sizeof d->buf - d->n) / 8;
        uint64_t k = e - b < room ? e - b : room;
        uint8_t *p = d->buf + d->n;
        if (!k) {
            pch_blake3_update(&d->h, d->buf, d->n);
            d->n = 0;
            continue;
        }
        for (uint64_t i = 0; i < k; i++) pch_store_le64(p + 8 * i, (uint64_t)(off[b + i + 1] - off[b + i]));
        d->n += (size_t)k * 8;
        b += k;
    }
}

static void rd_range(rowdig *d, const pch_vx_array *a, uint64_t b, uint64_t e);

/* The values of the valid rows [b, e) of a (all valid), by kind. */
static void rd_values(rowdig *d, const pch_vx_array *a, uint64_t b, uint64_t e)
{
    const pch_vx_dtype *t = a->dtype;
    switch (t->kind) {
    case PCH_VX_BOOL:
        for (uint64_t i = b; i < e; i++) {
            uint8_t v = (uint8_t)pch_vx__bit(a->data, i);
            rd_put(d, &v, 1);
        }
        break;
    case PCH_VX_PRIMITIVE: case PCH_VX_DECIMAL: {
        unsigned w = t->kind == PCH_VX_DECIMAL ? pch_vx_decimal_width(t->precision) : pch_vx_ptype_width(t->ptype);
        if (e > b) rd_put(d, a->data + b * w, (size_t)(e - b) * w);
        break;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY:
        if (a->offsets) rd_lengths(d, a->offsets, b, e);
        else
            for (uint64_t i = b; i < e; i++) {
                const uint8_t *p;
                size_t n;
                text_at(a, i, &p, &n);
                rd_u64(d, n);
            }
        if (a->offsets && e > b) {
            if (a->offsets[e] > a->offsets[b]) rd_put(d, a->data + a->offsets[b], (size_t)(a->offsets[e] - a->offsets[b]));
        } else {
            for (uint64_t i = b; i < e; i++) {
                const uint8_t *p;
                size_t n;
                text_at(a, i, &p, &n);
                if (n) rd_put(d, p, n);
            }
        }
        break;
    case PCH_VX_STRUCT:
        for (uint32_t k = 0; k < a->n_children; k++) rd_range(d, a->children[k], b, e);
        break;
    case PCH_VX_LIST:
        rd_lengths(d, a->offsets, b, e);
        if (e > b) rd_range(d, a->children[0], (uint64_t)a->offsets[b], (uint64_t)a->offsets[e]);
        break;
    case PCH_VX_FIXED_SIZE_LIST:
        rd_range(d, a->children[0], b * t->fsl_size, e * t->fsl_size);
        break;
    default:
        break;
    }
}

/* Rows [b, e) of a: a nullable array's validity (a byte a row), then the values of each run
** of valid rows. Null rows contribute their flag only: what lies under them is not data. */
static void rd_range(rowdig *d, const pch_vx_array *a, uint64_t b, uint64_t e)
{
    if (a->dtype->kind == PCH_VX_NULL) return;
    if (a->dtype->kind == PCH_VX_EXTENSION) { rd_range(d, a->children[0], b, e); return; }
    if (!a->dtype->nullable || !a->validity) {
        for (uint64_t i = b; a->dtype->nullable && i < e; i++) {
            if (d->n == sizeof d->buf) {
                pch_blake3_update(&d->h, d->buf, d->n);
                d->n = 0;
            }
            d->buf[d->n++] = 1;
        }
        rd_values(d, a, b, e);
        return;
    }
    for (uint64_t i = b; i < e; i++) {
        if (d->n == sizeof d->buf) {
            pch_blake3_update(&d->h, d->buf, d->n);
            d->n = 0;
        }
        d->buf[d->n++] = (uint8_t)pch_vx__bit(a->validity, i);
    }
    for (uint64_t i = b; i < e;) {
        uint64_t j = i;
        if (!pch_vx__bit(a->validity, i)) { i++; continue; }
        while (j < e && pch_vx__bit(a->validity, j)) j++;
        rd_values(d, a, i, j);
        i = j;
    }
}

void pch_vx_row_digest(const pch_vx_array *a, uint64_t row, uint8_t out[32])
{
    rowdig d;
    pch_blake3_init(&d.h);
    d.n = 0;
    rd_put(&d, "pch-row-digest-1", 16);
    rd_range(&d, a, row, row + 1);
    pch_blake3_update(&d.h, d.buf, d.n);
    pch_blake3_final(&d.h, out, 32);
}
