/* Fuzz target: ATIF parser/validator/normaliser and writer (specs/atif.md §2–§3). Any input
** must be rejected cleanly or normalised; a normalised document is written, parsed again
** and written again, and the two writes must be byte-identical (the writer is a fixed
** point), else abort (zstd simple_round_trip). Also exercises validate-only and strict. */
#include <stdlib.h>
#include <string.h>

#include "pchronicle/atif.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_ctx *ctx = NULL;
    pch_atif_doc *d = NULL, *d2 = NULL;
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    size_t ne, nw;
    if (pch_ctx_new(&ctx, NULL, NULL, NULL) != 0) return 0;
    o.strict = size > 0 && (data[0] & 1);
    (void)pch_atif_validate(ctx, (const char *)data, size, "f.json", &o, NULL, NULL, &ne, &nw, NULL);
    if (pch_atif_doc_parse(&d, ctx, (const char *)data, size, "f.json", &o, NULL, NULL, NULL) == 0) {
        for (size_t i = 0; i < pch_atif_doc_count(d); i++) {
            char *a = NULL, *b = NULL;
            size_t an = 0, bn = 0;
            if (pch_atif_doc_write(d, i, false, &a, &an, NULL) != 0) abort();
            if (pch_atif_doc_parse(&d2, ctx, a, an, "f.json", &o, NULL, NULL, NULL) != 0) abort();
            if (pch_atif_doc_write(d2, 0, false, &b, &bn, NULL) != 0) abort();
            if (an != bn || memcmp(a, b, an) != 0) abort();
            pch_atif_doc_free(d2);
            d2 = NULL;
            pch_free(ctx, a);
            pch_free(ctx, b);
        }
        pch_atif_doc_free(d);
    }
    pch_ctx_free(ctx);
    return 0;
}
