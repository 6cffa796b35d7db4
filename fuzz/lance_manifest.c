/* Fuzz target: Lance manifest files (lance-format.md §1.3–§1.6) through
** pch_lance__manifest_decode_file. Whatever decodes must re-encode to bytes that decode
** again and re-encode identically (a stable round trip); a mismatch aborts. */
#include <stdlib.h>

#include "lance/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_ctx *ctx = NULL;
    pch_lance_manifest *m = NULL, *m2 = NULL;
    pch_buf a, b;
    pch_error e;
    if (pch_ctx_new(&ctx, NULL, NULL, NULL) < 0) return 0;
    pch_buf_init(&a, ctx);
    pch_buf_init(&b, ctx);
    if (pch_lance__manifest_decode_file(&m, ctx, data, size, &e) == 0) {
        if (pch_lance__manifest_encode_file(&a, m, &e) == 0) {
            if (pch_lance__manifest_decode_file(&m2, ctx, a.data, a.len, &e) != 0) abort();
            if (pch_lance__manifest_encode_file(&b, m2, &e) != 0) abort();
            if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
        }
    }
    pch_lance__manifest_free(m);
    pch_lance__manifest_free(m2);
    pch_buf_dispose(&a);
    pch_buf_dispose(&b);
    pch_ctx_free(ctx);
    return 0;
}
