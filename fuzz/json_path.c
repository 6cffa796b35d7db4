/* Fuzz target: the RFC-0014 JSON-path subset (src/compact_jsonl/cj_path.c). Input: a path,
** a NUL byte, then a JSON document. Checks that the parser and pch_cj_path_check agree,
** that every accepted path matches the grammar (re-rendered from its steps it gives the
** same text, modulo leading zeros in indexes), and that evaluation on the document
** returns NULL or a value inside the parsed tree. Aborts on any violation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact_jsonl/cj_int.h"

static bool inside(const pch_json_value *root, const pch_json_value *v)
{
    if (root == v) return true;
    if (root->kind == PCH_JSON_ARRAY)
        for (uint32_t i = 0; i < root->n; i++) if (inside(&root->u.items[i], v)) return true;
    if (root->kind == PCH_JSON_OBJECT)
        for (uint32_t i = 0; i < root->n; i++) if (inside(&root->u.members[i].value, v)) return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t plen = nul ? (size_t)(nul - data) : size;
    pch_ctx *ctx = NULL;
    if (pch_ctx_new(&ctx, NULL, NULL, NULL) < 0) return 0;
    char *text = malloc(plen + 1);
    if (!text) { pch_ctx_free(ctx); return 0; }
    memcpy(text, data, plen);
    text[plen] = 0;
    pch_cj_path path;
    pch_error err;
    int rc = pch_cj__path_parse(&path, ctx, text, plen, &err);
    if ((rc == PCH_OK) != (pch_cj_path_check(text, NULL) == PCH_OK)) abort();
    if (rc == PCH_OK) {
        /* re-render and compare (indexes without leading zeros on both sides) */
        pch_buf a, b;
        pch_buf_init(&a, NULL);
        pch_buf_init(&b, NULL);
        pch_buf_putc(&a, '$');
        for (size_t i = 0; i < path.n_steps; i++) {
            if (!pch_cj__is_identifier(path.steps[i].name, path.steps[i].name_len)) abort();
            pch_buf_putc(&a, '.');
            pch_buf_append(&a, path.steps[i].name, path.steps[i].name_len);
            if (path.steps[i].has_index) pch_buf_printf(&a, "[%u]", path.steps[i].index);
        }
        for (size_t i = 0; i < plen; i++) {
            if (text[i] == '[') {
                pch_buf_putc(&b, '[');
                i++;
                while (i + 1 < plen && text[i] == '0' && text[i + 1] != ']') i++;
            }
            pch_buf_putc(&b, (uint8_t)text[i]);
        }
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
        pch_buf_dispose(&a);
        pch_buf_dispose(&b);
        if (nul) {
            pch_json_parser *p = NULL;
            pch_json_parse_options o = PCH_JSON_PARSE_OPTIONS_INIT;
            o.max_depth = 256;
            const pch_json_value *root = NULL;
            if (pch_json_parser_new(&p, ctx, &o, NULL) == PCH_OK) {
                if (pch_json_parser_parse(p, (const char *)nul + 1, size - plen - 1, &root, NULL) == PCH_OK) {
                    const pch_json_value *v = pch_cj__path_eval(&path, root);
                    if (v && !inside(root, v)) abort();
                    if (path.n_steps == 0 && v != root) abort();
                }
                pch_json_parser_free(p);
            }
        }
        pch_cj__path_dispose(&path);
    } else if (path.text || path.steps || err.msg[0] == '\0') {
        abort();
    }
    free(text);
    pch_ctx_free(ctx);
    return 0;
}
