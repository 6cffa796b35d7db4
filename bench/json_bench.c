/* JSON DOM throughput: pChronicle's strict parser beside cJSON and json-c on the same
** in-memory JSONL input, in the same run (specs/dependencies.md §4 method).
**
** The file is preloaded; every non-empty line is parsed into a full DOM, the whole tree is
** walked (counting values and unescaped string bytes of values and keys, so the parsers
** can be checked against each other) and freed. Each parser runs RUNS times (default 3);
** the best wall time gives MB/s with MB = 10^6 bytes of the whole file. Single thread.
**
** usage: json_bench FILE.jsonl [RUNS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <json-c/json.h>

#include "pchronicle/json.h"

typedef struct { size_t nodes, strbytes, errors; } stats;
typedef struct { char *buf; size_t size, n; size_t *off, *len; } input;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int load(input *in, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return -1; }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (sz < 0) { fclose(f); return -1; }
    in->size = (size_t)sz;
    in->buf = malloc(in->size + 1);
    if (!in->buf || fread(in->buf, 1, in->size, f) != in->size) { fclose(f); return -1; }
    fclose(f);
    size_t cap = 1024;
    in->off = malloc(cap * sizeof(size_t));
    in->len = malloc(cap * sizeof(size_t));
    in->n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= in->size; i++) {
        if (i == in->size || in->buf[i] == '\n') {
            if (i > start) {
                if (in->n == cap) {
                    cap *= 2;
                    in->off = realloc(in->off, cap * sizeof(size_t));
                    in->len = realloc(in->len, cap * sizeof(size_t));
                    if (!in->off || !in->len) return -1;
                }
                in->off[in->n] = start;
                in->len[in->n] = i - start;
                in->n++;
            }
            if (i < in->size) in->buf[i] = '\0';   /* cJSON/json-c like NUL-terminated */
            start = i + 1;
        }
    }
    in->buf[in->size] = '\0';
    return 0;
}

/* ---- pChronicle ---- */
static void walk_pch(const pch_json_value *v, stats *st)
{
    st->nodes++;
    switch ((pch_json_kind)v->kind) {
    case PCH_JSON_STRING: st->strbytes += v->u.str.len; break;
    case PCH_JSON_ARRAY:
        for (uint32_t k = 0; k < v->n; k++) walk_pch(&v->u.items[k], st);
        break;
    case PCH_JSON_OBJECT:
        for (uint32_t k = 0; k < v->n; k++) {
            st->strbytes += v->u.members[k].key_len;
            walk_pch(&v->u.members[k].value, st);
        }
        break;
    default: break;
    }
}

static pch_json_parser *g_parser;
static void run_pch(const char *line, size_t len, stats *st)
{
    const pch_json_value *root;
    if (pch_json_parser_parse(g_parser, line, len, &root, NULL) != PCH_OK) { st->errors++; return; }
    walk_pch(root, st);
}

static void run_pch_validate(const char *line, size_t len, stats *st)
{
    if (pch_json_validate(NULL, line, len, NULL, NULL, NULL, NULL) != PCH_OK) st->errors++;
    else st->nodes++;
}

/* ---- cJSON ---- */
static void walk_cjson(const cJSON *v, stats *st)
{
    st->nodes++;
    if (v->string) st->strbytes += strlen(v->string);
    if (cJSON_IsString(v)) st->strbytes += strlen(v->valuestring);
    for (const cJSON *c = v->child; c; c = c->next) walk_cjson(c, st);
}

static void run_cjson(const char *line, size_t len, stats *st)
{
    cJSON *root = cJSON_ParseWithLength(line, len);
    if (!root) { st->errors++; return; }
    walk_cjson(root, st);
    cJSON_Delete(root);
}

/* ---- json-c ---- */
static void walk_jsonc(struct json_object *v, stats *st)
{
    st->nodes++;
    switch (json_object_get_type(v)) {
    case json_type_string: st->strbytes += (size_t)json_object_get_string_len(v); break;
    case json_type_array: {
        size_t n = json_object_array_length(v);
        for (size_t k = 0; k < n; k++) walk_jsonc(json_object_array_get_idx(v, k), st);
        break;
    }
    case json_type_object: {
        json_object_object_foreach(v, key, val) {
            st->strbytes += strlen(key);
            walk_jsonc(val, st);
        }
        break;
    }
    case json_type_null: case json_type_boolean: case json_type_double: case json_type_int:
    default: break;
    }
}

static struct json_tokener *g_tok;
static void run_jsonc(const char *line, size_t len, stats *st)
{
    json_tokener_reset(g_tok);
    struct json_object *root = json_tokener_parse_ex(g_tok, line, (int)len);
    if (!root && json_tokener_get_error(g_tok) != json_tokener_success) { st->errors++; return; }
    walk_jsonc(root, st);   /* json-c represents null as a NULL object: counted as a node */
    json_object_put(root);
}

typedef void (*parse_fn)(const char *, size_t, stats *);

static double bench(const char *name, const input *in, int runs, parse_fn fn, double base)
{
    double best = 1e30;
    stats st = {0, 0, 0};
    for (int r = 0; r < runs; r++) {
        stats s = {0, 0, 0};
        double t0 = now();
        for (size_t i = 0; i < in->n; i++) fn(in->buf + in->off[i], in->len[i], &s);
        double dt = now() - t0;
        if (dt < best) best = dt;
        st = s;
    }
    double mbs = (double)in->size / best / 1e6;
    printf("%-16s %9.1f MB/s  best_of_%d=%.3fs  nodes=%zu strbytes=%zu errors=%zu",
           name, mbs, runs, best, st.nodes, st.strbytes, st.errors);
    if (base > 0) printf("  %.2fx cJSON", mbs / base);
    printf("\n");
    fflush(stdout);
    return mbs;
}

int main(int argc, char **argv)
{
    input in;
    if (argc < 2) { fprintf(stderr, "usage: %s FILE.jsonl [RUNS=3]\n", argv[0]); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (runs < 1) runs = 1;
    if (load(&in, argv[1]) != 0) { fprintf(stderr, "cannot load %s\n", argv[1]); return 2; }
    printf("input %s: %zu bytes, %zu lines\n", argv[1], in.size, in.n);
    if (pch_json_parser_new(&g_parser, NULL, NULL, NULL) != PCH_OK) return 2;
    g_tok = json_tokener_new_ex(10000);
    if (!g_tok) return 2;
    double cj = bench("cJSON 1.7", &in, runs, run_cjson, 0);
    bench("json-c", &in, runs, run_jsonc, cj);
    bench("pchronicle", &in, runs, run_pch, cj);
    bench("pch validate", &in, runs, run_pch_validate, cj);
    json_tokener_free(g_tok);
    pch_json_parser_free(g_parser);
    free(in.buf); free(in.off); free(in.len);
    return 0;
}
