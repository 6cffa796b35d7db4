/* pch_lance_row_to_json: one row of a batch as the JSON object `pchronicle lance dump`
** prints (docs/cli.md "dump format"; modelled on the oracle's dump, lance-format.md §4):
** keys in projection order; int64/uint64 as exact integers; floats as the shortest text
** that reads back to the same value (NaN/±Infinity as the strings the oracle prints);
** utf8 as JSON strings (invalid UTF-8 replaced by U+FFFD); binary as {"base64":"..."};
** JSON columns as their JSON value inline (JSONB rendered by pch_jsonb_to_json); null as
** null. Invariant: on error out, len and cap still describe a valid allocation. */
#include "lance/table.h"
#include "pchronicle/json.h"

static int put_value(pch_buf *b, pch_ctx *ctx, const pch_lance_column *col, size_t row,
                     const char *name, pch_error *err)
{
    if (col->validity && !col->validity[row]) return pch_buf_append_str(b, "null");
    const uint8_t *v = col->values;
    switch (col->type) {
    case PCH_LANCE_BOOL: return pch_buf_append_str(b, v[row] ? "true" : "false");
    case PCH_LANCE_INT8: return pch_buf_printf(b, "%d", (int)(int8_t)v[row]);
    case PCH_LANCE_UINT8: return pch_buf_printf(b, "%u", (unsigned)v[row]);
    case PCH_LANCE_INT16: return pch_buf_printf(b, "%d", (int)(int16_t)pch_load_le16(v + row * 2));
    case PCH_LANCE_UINT16: return pch_buf_printf(b, "%u", (unsigned)pch_load_le16(v + row * 2));
    case PCH_LANCE_INT32: return pch_buf_printf(b, "%ld", (long)(int32_t)pch_load_le32(v + row * 4));
    case PCH_LANCE_UINT32: return pch_buf_printf(b, "%lu", (unsigned long)pch_load_le32(v + row * 4));
    case PCH_LANCE_INT64:
        return pch_buf_printf(b, "%lld", (long long)(int64_t)pch_load_le64(v + row * 8));
    case PCH_LANCE_UINT64:
        return pch_buf_printf(b, "%llu", (unsigned long long)pch_load_le64(v + row * 8));
    case PCH_LANCE_FLOAT32: {
        float f;
        memcpy(&f, v + row * 4, 4);
        return pch_lance__json_put_float(b, f, true);
    }
    case PCH_LANCE_FLOAT64: {
        double d;
        memcpy(&d, v + row * 8, 8);
        return pch_lance__json_put_float(b, d, false);
    }
    case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8: case PCH_LANCE_BINARY:
    case PCH_LANCE_LARGE_BINARY: case PCH_LANCE_JSON:
        break;
    }
    uint64_t s = col->offsets[row], e = col->offsets[row + 1];
    size_t n;
    if (e < s || !pch_u64_to_size(&n, e - s))
        return pch_error_set(err, PCH_ECORRUPT, "column '%s' row %zu: bad offsets", name, row);
    const uint8_t *p = col->data + s;
    switch (col->type) {
    case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8:
        return pch_lance__json_put_string(b, p, n);
    case PCH_LANCE_BINARY: case PCH_LANCE_LARGE_BINARY:
        PCH_TRY(pch_buf_append_str(b, "{\"base64\":\""));
        PCH_TRY(pch_base64_encode(b, p, n));
        return pch_buf_append_str(b, "\"}");
    case PCH_LANCE_JSON: {
        char *txt = NULL;
        size_t tl = 0;
        int rc = pch_jsonb_to_json(ctx, p, n, &txt, &tl, err);
        if (rc < 0) return pch_error_prefix(err, "column '%s' row %zu", name, row), rc;
        rc = pch_buf_append(b, txt, tl);
        pch_free(ctx, txt);
        return rc;
    }
    default:
        return pch_error_set(err, PCH_EINVAL, "column '%s': bad type", name);
    }
}

int pch_lance_row_to_json(pch_ctx *ctx, const pch_lance_schema *schema, const size_t *columns,
                          const pch_lance_batch *batch, size_t row, char **out, size_t *len,
                          size_t *cap, pch_error *err)
{
    pch_buf b;
    int rc = PCH_OK;
    if (row >= batch->n_rows) return pch_error_set(err, PCH_EINVAL, "row %zu out of range", row);
    /* Borrow the caller's allocation as a pch_buf and hand it back at the end. */
    pch_buf_init(&b, ctx);
    b.data = (uint8_t *)*out;
    b.len = *out ? *len : 0;
    b.cap = *out ? *cap : 0;
    if ((rc = pch_buf_putc(&b, '{')) < 0) goto done;
    for (size_t i = 0; i < batch->n_columns; i++) {
        size_t c = columns ? columns[i] : i;
        if (c >= schema->n_fields) { rc = pch_error_set(err, PCH_EINVAL, "column %zu out of range", c); goto done; }
        const pch_lance_field *f = &schema->fields[c];
        if (i) pch_buf_putc(&b, ',');
        pch_lance__json_put_string(&b, f->name, strlen(f->name));
        pch_buf_putc(&b, ':');
        if (batch->columns[i].type != f->type) {
            rc = pch_error_set(err, PCH_EINVAL, "column '%s': batch type does not match schema", f->name);
            goto done;
        }
        if ((rc = put_value(&b, ctx, &batch->columns[i], row, f->name, err)) < 0) {
            if (rc == PCH_ENOMEM) pch_error_set(err, PCH_ENOMEM, "out of memory");
            goto done;
        }
    }
    if ((rc = pch_buf_putc(&b, '}')) < 0 || b.oom) rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
done:
    *out = (char *)b.data;
    *len = b.len;
    *cap = b.cap;
    return rc;
}
