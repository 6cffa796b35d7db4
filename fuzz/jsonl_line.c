/* Fuzz target: RFC-0014 line handling of a .jsonl file (src/compact_jsonl/cj_lines.c):
** the input is one file's bytes. Splits it into physical lines (LF/CRLF, last line with
** or without a terminator), checks that the lines tile the input exactly (byte-exact
** restore depends on it), runs the per-line pre-checks and the strict JSON parser on each
** line's content, and checks the name rules on the raw bytes. Aborts on any violation. */
#include <stdlib.h>
#include <string.h>

#include "compact_jsonl/cj_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_ctx *ctx = NULL;
    pch_json_parser *p = NULL;
    pch_json_parse_options o = PCH_JSON_PARSE_OPTIONS_INIT;
    o.max_depth = 256;
    if (pch_ctx_new(&ctx, NULL, NULL, NULL) < 0) return 0;
    if (pch_json_parser_new(&p, ctx, &o, NULL) < 0) { pch_ctx_free(ctx); return 0; }
    size_t off = 0, lines = 0;
    while (off < size) {
        size_t ll;
        if (!pch_cj__next_line(data + off, size - off, &ll)) ll = size - off;
        else if (ll == 0 || data[off + ll - 1] != '\n' || memchr(data + off, '\n', ll - 1)) abort();
        size_t cl = pch_cj__content_len(data + off, ll);
        if (cl > ll || ll - cl > 2) abort();
        if (ll - cl == 2 && !(data[off + cl] == '\r' && data[off + cl + 1] == '\n')) abort();
        size_t col = 0;
        pch_error err;
        if (pch_cj__check_line(data + off, cl, lines == 0, &col, &err) == PCH_OK) {
            if (memchr(data + off, 0, cl)) abort();          /* NUL must have been rejected */
            const pch_json_value *v = NULL;
            if (pch_json_parser_parse(p, (const char *)data + off, cl, &v, &err) == PCH_OK) {
                if (v->span_off > cl || v->span_len > cl - v->span_off) abort();
            }
        } else if (col == 0 || (cl && col > cl) || err.msg[0] == '\0') {
            abort();
        }
        off += ll;
        lines++;
    }
    if (off != size) abort();
    /* name rules never accept an escaping path */
    if (pch_cj__safe_relpath((const char *)data, size)) {
        if (size == 0 || data[0] == '/' || memchr(data, 0, size)) abort();
        for (size_t i = 0; i + 1 < size; i++)
            if (data[i] == '.' && data[i + 1] == '.' && (i == 0 || data[i - 1] == '/') &&
                (i + 2 == size || data[i + 2] == '/'))
                abort();
    }
    pch_json_parser_free(p);
    pch_ctx_free(ctx);
    return 0;
}
