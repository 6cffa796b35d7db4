/* Helpers shared by the tests that compare JSON documents: read a file whole, and decide
** whether two JSON texts are the same value — jansson json_equal as the independent oracle,
** with canonical JSONB bytes (keys sorted, so equal values give equal bytes) for documents
** jansson cannot load (integers beyond int64). The including file declares
** `static pch_ctx *g_ctx;` first and links -ljansson. */
#ifndef PCH_TEST_JSON_EQUAL_H
#define PCH_TEST_JSON_EQUAL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>

#include "pchronicle/json.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    if (b) b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int jsonb_of(const char *t, size_t n, uint8_t **out, size_t *out_len)
{
    pch_json_parser *p;
    const pch_json_value *v;
    int rc;
    if (pch_json_parser_new(&p, g_ctx, NULL, NULL) != 0) return -1;
    rc = pch_json_parser_parse(p, t, n, &v, NULL);
    if (rc == 0) rc = pch_jsonb_encode(g_ctx, v, t, out, out_len, NULL);
    pch_json_parser_free(p);
    return rc;
}

static bool same_value(const char *a, size_t an, const char *b, size_t bn)
{
    json_error_t je;
    json_t *ja = json_loadb(a, an, JSON_DECODE_ANY, &je);
    json_t *jb = json_loadb(b, bn, JSON_DECODE_ANY, &je);
    bool eq;
    if (ja && jb) {
        eq = json_equal(ja, jb);
    } else {
        uint8_t *x = NULL, *y = NULL;
        size_t xn = 0, yn = 0;
        eq = jsonb_of(a, an, &x, &xn) == 0 && jsonb_of(b, bn, &y, &yn) == 0 && xn == yn &&
             memcmp(x, y, xn) == 0;
        pch_free(g_ctx, x);
        pch_free(g_ctx, y);
    }
    json_decref(ja);
    json_decref(jb);
    return eq;
}

#endif
