/* Round-trip fuzz target (zstd simple_round_trip): JSON text → parse → JSONB encode →
** validate → render → parse → encode must give the same bytes (canonical form is a fixed
** point). Aborts on mismatch. Inputs with non-finite reals (rendered as Infinity/NaN) or
** duplicate keys (rejected by the encoder) stop after the first step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

static int has_nonfinite(const pch_json_value *v)
{
    if (v->kind == PCH_JSON_NUMBER) return !isfinite(v->u.num.d);
    if (v->kind == PCH_JSON_ARRAY)
        for (uint32_t k = 0; k < v->n; k++) if (has_nonfinite(&v->u.items[k])) return 1;
    if (v->kind == PCH_JSON_OBJECT)
        for (uint32_t k = 0; k < v->n; k++) if (has_nonfinite(&v->u.members[k].value)) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_json_parser *p = NULL;
    const pch_json_value *v;
    pch_error err;
    pch_buf b, t, b2;
    pch_json_parse_options o = PCH_JSON_PARSE_OPTIONS_INIT;
    o.max_depth = 256;
    if (pch_json_parser_new(&p, NULL, &o, &err) != PCH_OK) return 0;
    pch_buf_init(&b, NULL);
    pch_buf_init(&t, NULL);
    pch_buf_init(&b2, NULL);
    if (pch_json_parser_parse(p, (const char *)data, size, &v, &err) != PCH_OK || has_nonfinite(v))
        goto done;
    int rc = pch_jsonb__encode(&b, v, (const char *)data, &err);
    if (rc == PCH_EINVAL) goto done;           /* duplicate keys */
    if (rc != PCH_OK) abort();
    if (pch_jsonb__validate(b.data, b.len, &err) != PCH_OK) abort();
    if (pch_jsonb__to_json(&t, b.data, b.len, &err) != PCH_OK) abort();
    if (pch_json_parser_parse(p, (const char *)t.data, t.len, &v, &err) != PCH_OK) abort();
    if (pch_jsonb__encode(&b2, v, (const char *)t.data, &err) != PCH_OK) abort();
    if (b2.len != b.len || memcmp(b2.data, b.data, b.len) != 0) abort();
done:
    pch_buf_dispose(&b);
    pch_buf_dispose(&t);
    pch_buf_dispose(&b2);
    pch_json_parser_free(p);
    return 0;
}
