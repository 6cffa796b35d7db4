/* Fuzz target: ATIF parser/validator/normaliser and writer (specs/atif.md §2–§3). Any input
** must be rejected cleanly or normalised; a normalised document is written, parsed again
** and written again, and the two writes must be byte-identical (the writer is a fixed
** point), else abort (zstd simple_round_trip). Also exercises validate-only and strict.
** Every metrics token array the parser keeps typed (pch_atif_step.tokens) must be exactly
** what pch_json__number_array reads from the text it names, since the Vortex projection
** takes one for the other. */
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "pchronicle/atif.h"

static void check_tokens(pch_ctx *ctx, const pch_atif_doc *d)
{
    pch_json_parser *jp = NULL;
    pch_buf b;
    if (pch_json_parser_new(&jp, ctx, NULL, NULL) != 0) return;
    pch_buf_init(&b, ctx);
    for (size_t i = 0; i < pch_atif_doc_count(d); i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(d, i);
        for (uint32_t s = 0; s < t->n_steps; s++) {
            const pch_atif_raw *m = &t->steps[s].f[PCH_ATIF_S_METRICS];
            for (int k = 0; k < 3; k++) {
                const pch_atif_tokens *tk = &t->steps[s].tokens[k];
                size_t used = 0, w = k < 2 ? 4 : 8;
                if (!tk->typed) continue;
                if (!m->ptr || tk->off > m->len || tk->len > m->len - tk->off || m->ptr[tk->off] != '[') abort();
                pch_buf_clear(&b);
                if (pch_json__number_array(jp, m->ptr + tk->off, tk->len, k < 2 ? PCH_JSON__ARRAY_U32 : PCH_JSON__ARRAY_REAL,
                                           &b, &used) != 1 || used != tk->len || b.len != tk->n * w ||
                    (b.len && memcmp(b.data, tk->data, b.len) != 0))
                    abort();
            }
        }
    }
    pch_buf_dispose(&b);
    pch_json_parser_free(jp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_ctx *ctx = NULL;
    pch_atif_doc *d = NULL, *d2 = NULL;
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    size_t ne, nw;
    if (pch_ctx_new(&ctx, NULL, NULL, NULL) != 0) return 0;
    o.strict = size > 0 && (data[0] & 1);
    o.tokens = true;
    (void)pch_atif_validate(ctx, (const char *)data, size, "f.json", &o, NULL, NULL, &ne, &nw, NULL);
    if (pch_atif_doc_parse(&d, ctx, (const char *)data, size, "f.json", &o, NULL, NULL, NULL) == 0) {
        check_tokens(ctx, d);
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
