/* Fuzz target: the strict JSON parser (src/json/parse.c). Checks that pch_json_validate
** agrees with the parser (code and position), that spans lie inside the input, and that
** serializing (original number text and canonical form) gives text that parses again to
** the same serialization; that text pch_json__is_compact accepts serializes to itself; and
** that the typed array reader (pch_json__number_array) gives exactly the parser's values
** for the arrays it accepts and accepts every array of such numbers. Aborts on any
** disagreement. */
#include <math.h>
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

/* Does element e qualify for the typed reader's kind? */
static int fits(const pch_json_value *e, pch_json__array_kind kind)
{
    if (e->kind != PCH_JSON_NUMBER) return 0;
    if (kind == PCH_JSON__ARRAY_U32)
        return (e->num_flags & (PCH_JSON_NUM_INT | PCH_JSON_NUM_NEG | PCH_JSON_NUM_U64)) ==
                   (PCH_JSON_NUM_INT | PCH_JSON_NUM_U64) && e->u.num.u <= 0xffffffffull;
    return !(e->num_flags & PCH_JSON_NUM_INT) && isfinite(e->u.num.d);
}

/* The typed reader over data against v, the parser's value of the same text (NULL: the
** parser refused it). */
static void check_typed(pch_json_parser *p, const uint8_t *data, size_t size, const pch_json_value *v)
{
    for (int kind = PCH_JSON__ARRAY_U32; kind <= PCH_JSON__ARRAY_REAL; kind++) {
        pch_buf out;
        int r, want = v && v->kind == PCH_JSON_ARRAY;
        size_t w = kind == PCH_JSON__ARRAY_U32 ? 4 : 8;
        pch_buf_init(&out, NULL);
        for (uint32_t k = 0; want && k < v->n; k++) want = fits(&v->u.items[k], (pch_json__array_kind)kind);
        r = pch_json__number_array(p, (const char *)data, size, (pch_json__array_kind)kind, &out, NULL);
        if (r == PCH_ENOMEM) { pch_buf_dispose(&out); continue; }
        if (r != want) abort();
        if (r == 1) {
            if (out.len != (size_t)v->n * w) abort();
            for (uint32_t k = 0; k < v->n; k++) {
                const pch_json_value *e = &v->u.items[k];
                if (kind == PCH_JSON__ARRAY_U32) {
                    uint32_t x;
                    memcpy(&x, out.data + 4 * k, 4);
                    if (x != e->u.num.u) abort();
                } else if (memcmp(out.data + 8 * k, &e->u.num.d, 8) != 0) {
                    abort();
                }
            }
        }
        pch_buf_dispose(&out);
    }
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
    check_typed(p2, data, size, rc == PCH_OK ? v : NULL);
    if (rc == PCH_OK) {
        check_spans(v, size);
        if (pch_json__is_compact((const char *)data, size)) {
            char *out = NULL;
            size_t n = 0;
            if (pch_json_serialize(NULL, v, (const char *)data, &out, &n, &err) == PCH_OK &&
                (n != size || memcmp(out, data, size) != 0))
                abort();
            free(out);
        }
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
