/* Shared input framing of the Lance page-decoder fuzz targets (lance_page_*.c):
**   u8 type (pch_lance_type, taken mod 16, 0 → int64) | u8 n_bufs (<= 8) | u32 LE n_rows
**   | u32 LE enc_len | enc bytes | n_bufs × (u32 LE len | bytes)
** `wrap` > 0 wraps enc as field `wrap` of a PageLayout (1 mini-block, 3 full-zip).
** Seeds are pages cut from tests/data/lance files (fuzz/corpus/<target>/). */
#ifndef PCH_LANCE_PAGE_FUZZ_H
#define PCH_LANCE_PAGE_FUZZ_H

#include "lance/lance_read_int.h"

static int pch_fuzz_lance_page(const uint8_t *data, size_t size, int v21, uint32_t wrap)
{
    pch_rd r = pch_rd_make(data, size);
    uint8_t type, nb;
    uint32_t n_rows, enc_len, i;
    const uint8_t *enc;
    pch_bytes bufs[8];
    pch_ctx *ctx = NULL;
    pch_lance_colbuf out;
    pch_lance_page_in in;
    pch_error err;
    pch_buf wrapped;
    pch_limits lim = { 0 };

    if (!pch_rd_u8(&r, &type) || !pch_rd_u8(&r, &nb) || !pch_rd_le32(&r, &n_rows) ||
        !pch_rd_le32(&r, &enc_len) || !pch_rd_bytes(&r, enc_len, &enc) || nb > 8)
        return 0;
    for (i = 0; i < nb; i++) {
        uint32_t l;
        if (!pch_rd_le32(&r, &l) || !pch_rd_bytes(&r, l, &bufs[i].ptr)) return 0;
        bufs[i].len = l;
    }
    if (n_rows > (1u << 20)) return 0;           /* keep a single input fast */
    type = (uint8_t)(type % 16);
    if (type == 0) type = PCH_LANCE_INT64;
    lim.max_page_bytes = (size_t)64 << 20;
    if (pch_ctx_new(&ctx, NULL, &lim, NULL) != 0) return 0;
    pch_buf_init(&wrapped, ctx);
    if (wrap) {
        pch_pb_put_bytes(&wrapped, wrap, enc, enc_len);
        if (wrapped.oom) goto done;
    }
    in.ctx = ctx;
    in.bufs = bufs;
    in.n_bufs = nb;
    in.n_rows = n_rows;
    in.enc = wrap ? wrapped.data : enc;
    in.enc_len = wrap ? wrapped.len : enc_len;
    in.type = (pch_lance_type)type;
    in.where = "fuzz";
    pch_lance__colbuf_init(&out, ctx, in.type);
    if (v21) pch_lance__decode_page_v21(&out, &in, &err);
    else pch_lance__decode_page_v20(&out, &in, &err);
    pch_lance__colbuf_dispose(&out);
done:
    pch_buf_dispose(&wrapped);
    pch_ctx_free(ctx);
    return 0;
}

#endif
