/* Fuzz target: one serialized array segment (vortex-format.md §6.1) decoded against a dtype
** picked by the first input byte, with a row count from the next two bytes; every encoding id
** of this implementation is in the spec table. A row range of it is decoded too, and must
** equal the slice of the whole decode. */
#include "vortex_fuzz.h"

static const char *const dtypes[] = {
    "i64", "i32?", "u8", "u16?", "f64?", "f32", "bool?", "utf8?", "binary", "decimal(10,2)?",
    "list<i32?>?", "struct<a:i64,b:utf8?>?", "fsl<u8,3>?", "null", "ext<\"vortex.date\",i32?>",
    "list<struct<a:i32,b:utf8?>>?"
};

/* A segment read in part asks for the bytes it uses: all are present here; each request must
** lie inside the segment. */
static int fill_in_bounds(void *payload, size_t off, size_t len, pch_error *err)
{
    (void)err;
    if (off > *(const size_t *)payload || len > *(const size_t *)payload - off) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int16_t map[PCH_VX_E_COUNT];
    pch_vx_decode_ctx dc;
    pch_vx_dtype *dt = NULL;
    pch_vx_array *a = NULL;
    pch_error err;
    uint64_t len;
    if (size < 3 || size > ((size_t)1 << 20)) return 0;
    for (int i = 0; i < PCH_VX_E_COUNT; i++) map[i] = (int16_t)i;
    if (pch_vx_dtype_parse(&dt, NULL, dtypes[data[0] % (sizeof dtypes / sizeof *dtypes)], &err)) abort();
    len = pch_load_le16(data + 1);
    dc.ctx = fz_ctx();
    dc.spec_map = map;
    dc.n_specs = PCH_VX_E_COUNT;
    dc.text_codes = false;
    if (pch_vx__deserialize(&a, &dc, data + 3, size - 3, dt, len, &err) == 0) {
        pch_vx_text t = { NULL, 0, 0, NULL, 0 };
        for (uint64_t r = 0; r < a->len && r < 64; r++) pch_vx_array_row_json(&t, a, r);
        pch_vx_text_dispose(&t);
    }
    {
        /* text as codes only (a scan's text_codes): decodes exactly when the plain decode
        ** does, to the same rows (read through the dictionaries) */
        pch_vx_array *k = NULL;
        int rk;
        dc.text_codes = true;
        rk = pch_vx__deserialize(&k, &dc, data + 3, size - 3, dt, len, &err);
        dc.text_codes = false;
        if ((rk == 0) != (a != NULL) || (k && !pch_vx_array_equal(k, a))) abort();
        if (k) {
            pch_vx_text t = { NULL, 0, 0, NULL, 0 };
            for (uint64_t r = 0; r < k->len && r < 64; r++) pch_vx_array_row_json(&t, k, r);
            pch_vx_text_dispose(&t);
        }
        pch_vx_array_free(k);
    }
    if (len) {
        /* a row range (the point-read path, which decompresses only the frames it needs):
        ** must never crash, and when the whole array decoded it must equal its slice */
        uint64_t b = (uint64_t)size * 7 % len, n = 1 + (uint64_t)size * 13 % (len - b);
        pch_vx_array *part = NULL, *want = NULL;
        if (pch_vx__deserialize_range(&part, &dc, data + 3, size - 3, dt, len, b, n, &err) == 0 && a) {
            if (pch_vx__array_slice(&want, a, b, n, &err) == 0 && !pch_vx_array_equal(part, want)) abort();
        }
        {
            /* the same range as a segment read in part reads it (a fill callback: bit-packed
            ** values word by word, frames skipped), and an empty range: the same answer */
            pch_vx_array *sp = NULL, *none = NULL;
            size_t seg_len = size - 3;
            int rs = pch_vx__deserialize_range_sparse(&sp, &dc, data + 3, seg_len, dt, len, b, n, fill_in_bounds, &seg_len, &err);
            if ((rs == 0) != (part != NULL) || (sp && !pch_vx_array_equal(sp, part))) abort();
            if (pch_vx__deserialize_range_sparse(&none, &dc, data + 3, seg_len, dt, len, b, 0, fill_in_bounds, &seg_len, &err) == 0 &&
                none->len != 0)
                abort();
            pch_vx_array_free(sp);
            pch_vx_array_free(none);
        }
        pch_vx_array_free(part);
        pch_vx_array_free(want);
    }
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    return 0;
}
