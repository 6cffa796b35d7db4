/* Fuzz target: the strict JSON parser (src/json/parse.c). Checks that pch_json_validate
** agrees with the parser (code and position), that spans lie inside the input, and that
** serializing (original number text and canonical form) gives text that parses again to
** the same serialization. Aborts on any disagreement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

static void check_spans(const pch_json_value *v, size_t len)
{
    if (v->span_off > len || v->span_len > len - v->span_off) abort();
    if (v->kind == PCH_JSON_ARRAY)
        for (uint32_t k = 0; k < v->n; k++) check_spans(&v->u.items[k], len);
    if (v->kind == PCH_JSON_OBJECT)
        for (uint32_t k = 0; k < v->n; k++) check_spans(&v->u.members[k].value, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_json_parser *p = NULL, *p2 = NULL;
    const pch_json_value *v, *v2;
    pch_json_parse_options o = PCH_JSON_PARSE_OPTIONS_INIT;
    pch_json_pos pos, vpos;
    pch_error err;
    o.max_depth = 256;
    if (pch_json_parser_new(&p, NULL, &o, &err) != PCH_OK) return 0;
    if (pch_json_parser_new(&p2, NULL, &o, &err) != PCH_OK) { pch_json_parser_free(p); return 0; }
    int rc = pch_json_parser_parse(p, (const char *)data, size, &v, &err);
    pch_json_parser_error_pos(p, &pos);
    int vrc = pch_json_validate(NULL, (const char *)data, size, &o, NULL, &vpos, NULL);
    if (rc != vrc && rc != PCH_ENOMEM) abort();
    if (rc != PCH_OK && rc != PCH_ENOMEM && vpos.offset != pos.offset) abort();
    if (rc == PCH_OK) {
        check_spans(v, size);
        for (int canon = 0; canon < 2; canon++) {
            char *out = NULL;
            size_t n = 0;
            int src_rc = pch_json_serialize(NULL, v, canon ? NULL : (const char *)data, &out, &n, &err);
            if (src_rc != PCH_OK) continue;   /* canonical form refuses non-finite reals */
            if (pch_json_parser_parse(p2, out, n, &v2, &err) != PCH_OK) abort();
            char *again = NULL;
            size_t n2 = 0;
            if (pch_json_serialize(NULL, v2, canon ? NULL : out, &again, &n2, &err) != PCH_OK) abort();
            if (n2 != n || memcmp(again, out, n) != 0) abort();
            free(again);
            free(out);
        }
    }
    pch_json_parser_free(p);
    pch_json_parser_free(p2);
    return 0;
}
