/* Owned column storage (pch_lance_colbuf, lance_int.h) that the data file decoders append
** to and that backs the borrowed pch_lance_column views handed to callers.
** Invariants: fixed-width types hold n_rows * width bytes in `values` (bool: one 0/1 byte
** per row); variable-width types hold n_rows + 1 u64 offsets (offsets[0] == 0) and the
** bytes in `data`; `validity` holds n_rows bytes (1 = valid) once the first null arrives
** (has_nulls), before that every row is valid. A failed append leaves n_rows unchanged. */
#include "lance/lance_int.h"
#include "lance/lance_read_int.h"

size_t pch_lance__type_bytes(pch_lance_type t)
{
    switch (t) {
    case PCH_LANCE_BOOL: case PCH_LANCE_INT8: case PCH_LANCE_UINT8: return 1;
    case PCH_LANCE_INT16: case PCH_LANCE_UINT16: return 2;
    case PCH_LANCE_INT32: case PCH_LANCE_UINT32: case PCH_LANCE_FLOAT32: return 4;
    case PCH_LANCE_INT64: case PCH_LANCE_UINT64: case PCH_LANCE_FLOAT64: return 8;
    case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8: case PCH_LANCE_BINARY:
    case PCH_LANCE_LARGE_BINARY: case PCH_LANCE_JSON: return 0;
    }
    return 0;
}

void pch_lance__colbuf_init(pch_lance_colbuf *cb, pch_ctx *ctx, pch_lance_type type)
{
    cb->type = type;
    cb->n_rows = 0;
    cb->has_nulls = false;
    pch_buf_init(&cb->validity, ctx);
    pch_buf_init(&cb->values, ctx);
    pch_buf_init(&cb->offsets, ctx);
    pch_buf_init(&cb->data, ctx);
}

void pch_lance__colbuf_reset(pch_lance_colbuf *cb)
{
    cb->n_rows = 0;
    cb->has_nulls = false;
    pch_buf_clear(&cb->validity);
    pch_buf_clear(&cb->values);
    pch_buf_clear(&cb->offsets);
    pch_buf_clear(&cb->data);
}

void pch_lance__colbuf_dispose(pch_lance_colbuf *cb)
{
    pch_buf_dispose(&cb->validity);
    pch_buf_dispose(&cb->values);
    pch_buf_dispose(&cb->offsets);
    pch_buf_dispose(&cb->data);
    cb->n_rows = 0;
    cb->has_nulls = false;
}

void pch_lance__colbuf_view(const pch_lance_colbuf *cb, pch_lance_column *out)
{
    static const uint64_t zero_off = 0;
    memset(out, 0, sizeof(*out));
    out->type = cb->type;
    out->n_rows = cb->n_rows;
    out->validity = cb->has_nulls ? cb->validity.data : NULL;
    if (pch_lance__type_bytes(cb->type) == 0) {
        out->offsets = cb->offsets.len ? (const uint64_t *)(const void *)cb->offsets.data
                                       : &zero_off;
        out->data = cb->data.data;
    } else {
        out->values = cb->values.data;
    }
}

/* Validity byte for the row being appended; materialises the all-valid prefix lazily. */
static int colbuf_put_valid(pch_lance_colbuf *cb, bool valid)
{
    if (valid && !cb->has_nulls) return PCH_OK;
    if (!cb->has_nulls) {
        pch_buf_clear(&cb->validity);
        PCH_TRY(pch_buf_reserve(&cb->validity, cb->n_rows + 1));
        memset(cb->validity.data, 1, cb->n_rows);
        cb->validity.len = cb->n_rows;
        cb->has_nulls = true;
    }
    return pch_buf_putc(&cb->validity, valid ? 1 : 0);
}

static int colbuf_ensure_first_offset(pch_lance_colbuf *cb)
{
    if (cb->offsets.len == 0) return pch_buf_put_le64(&cb->offsets, 0);
    return PCH_OK;
}

int pch_lance__colbuf_append_fixed(pch_lance_colbuf *cb, const void *v, bool valid)
{
    size_t w = pch_lance__type_bytes(cb->type);
    size_t vlen = cb->values.len;
    int rc;
    static const uint8_t zeros[8];

    if (w == 0) return PCH_EINVAL;
    rc = pch_buf_append(&cb->values, v ? v : zeros, w);
    if (rc == PCH_OK && cb->type == PCH_LANCE_BOOL)
        cb->values.data[cb->values.len - 1] = cb->values.data[cb->values.len - 1] ? 1 : 0;
    if (rc == PCH_OK) rc = colbuf_put_valid(cb, valid);
    if (rc != PCH_OK) {
        cb->values.len = vlen;   /* validity is unchanged when its putc failed */
        return rc;
    }
    cb->n_rows++;
    return PCH_OK;
}

int pch_lance__colbuf_append_null(pch_lance_colbuf *cb)
{
    if (pch_lance__type_bytes(cb->type) == 0) return pch_lance__colbuf_append_var(cb, NULL, 0, false);
    return pch_lance__colbuf_append_fixed(cb, NULL, false);
}

int pch_lance__colbuf_append_var(pch_lance_colbuf *cb, const void *p, size_t n, bool valid)
{
    size_t olen, dlen = cb->data.len;
    int rc;

    if (pch_lance__type_bytes(cb->type) != 0) return PCH_EINVAL;
    PCH_TRY(colbuf_ensure_first_offset(cb));
    olen = cb->offsets.len;
    if (!valid) n = 0;
    rc = pch_buf_append(&cb->data, p, n);
    if (rc == PCH_OK) rc = pch_buf_put_le64(&cb->offsets, (uint64_t)cb->data.len);
    if (rc == PCH_OK) rc = colbuf_put_valid(cb, valid);
    if (rc != PCH_OK) {
        cb->data.len = dlen;
        cb->offsets.len = olen;
        return rc;
    }
    cb->n_rows++;
    return PCH_OK;
}

int pch_lance__colbuf_append_rows(pch_lance_colbuf *dst, const pch_lance_colbuf *src,
                                  size_t start, size_t n)
{
    size_t w = pch_lance__type_bytes(dst->type), i, vlen = dst->values.len, olen, dlen;
    size_t vdlen = dst->validity.len;
    bool had_nulls = dst->has_nulls;
    int rc = PCH_OK;
    if (src->type != dst->type || start > src->n_rows || n > src->n_rows - start)
        return PCH_EINVAL;
    if (n == 0) return PCH_OK;
    /* bulk: values (or offsets rebased + bytes), then validity */
    if (w) {
        rc = pch_buf_append(&dst->values, src->values.data + start * w, n * w);
    } else {
        uint64_t a, b, base;
        PCH_TRY(colbuf_ensure_first_offset(dst));
        olen = dst->offsets.len;
        dlen = dst->data.len;
        a = pch_load_le64(src->offsets.data + start * 8);
        b = pch_load_le64(src->offsets.data + (start + n) * 8);
        base = dst->data.len;
        rc = pch_buf_append(&dst->data, b > a ? src->data.data + a : NULL, (size_t)(b - a));
        if (rc == PCH_OK) rc = pch_buf_reserve(&dst->offsets, n * 8);
        if (rc != PCH_OK) {
            dst->data.len = dlen;
            return rc;
        }
        for (i = 1; i <= n; i++) {
            uint64_t o = pch_load_le64(src->offsets.data + (start + i) * 8);
            pch_store_le64(dst->offsets.data + olen + (i - 1) * 8, o - a + base);
        }
        dst->offsets.len = olen + n * 8;
        dst->offsets.data[dst->offsets.len] = 0;
    }
    if (rc == PCH_OK && (src->has_nulls || dst->has_nulls)) {
        if (!dst->has_nulls) {
            pch_buf_clear(&dst->validity);
            rc = pch_buf_reserve(&dst->validity, dst->n_rows + n);
            if (rc == PCH_OK) {
                memset(dst->validity.data, 1, dst->n_rows);
                dst->validity.len = dst->n_rows;
                dst->has_nulls = true;
            }
        }
        if (rc == PCH_OK) {
            if (src->has_nulls) {
                rc = pch_buf_append(&dst->validity, src->validity.data + start, n);
            } else if ((rc = pch_buf_reserve(&dst->validity, n)) == PCH_OK) {
                memset(dst->validity.data + dst->validity.len, 1, n);
                dst->validity.len += n;
                dst->validity.data[dst->validity.len] = 0;
            }
        }
    }
    if (rc != PCH_OK) {
        if (w) {
            dst->values.len = vlen;
        } else {
            dst->offsets.len -= n * 8;
            dst->data.len -= (size_t)(pch_load_le64(src->offsets.data + (start + n) * 8) -
                                      pch_load_le64(src->offsets.data + start * 8));
        }
        dst->has_nulls = had_nulls;
        dst->validity.len = had_nulls ? vdlen : 0;
        return rc;
    }
    dst->n_rows += n;
    return PCH_OK;
}
