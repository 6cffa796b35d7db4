/* Storyline import: ATIF documents → runs / steps / tool_calls / objects (docs/storyline.md
** §2; RFC-0006 §2.1, §5.2–§5.6, §9.6 assets) published under CURRENT (§3).
**
** Streaming: one document at a time comes from pch_atif_dir_import (or from the records
** of a compact-jsonl dataset); rows are buffered per table and flushed to the table's
** Lance writer every few thousand rows. Lossless by construction: a field goes to its
** typed column only when that column reproduces it exactly (same JSON value); otherwise
** it is kept verbatim in `raw_members`, which export merges back. Publish order: the four
** tables are committed (each a new Lance version), then CURRENT is replaced atomically;
** on any failure CURRENT still names the previous versions (§3.4 of RFC-0006). */
#include <stdio.h>
#include <sys/stat.h>

#include "io/rfile.h"
#include "storyline/storyline.h"
#include "pchronicle/io.h"
#include "atif/atif.h"
#include "json/json.h"
#include "pchronicle/compact_jsonl.h"

#define FLUSH_ROWS 4096
#define FLUSH_BYTES ((size_t)32 << 20)
#define MAX_ASSET_BYTES ((size_t)256 << 20)
/* Values per column page. A point read (get, export --trajectory, object hydration) decodes
** whole pages, so pages are kept small: 256 KiB costs ~1.5% in bytes over the 8 MiB Lance
** default on the ATIF corpus and halves the latency of reading one trajectory. */
#define SL_PAGE_BYTES ((uint64_t)256 << 10)

typedef struct idset {              /* open addressing over 32-byte BLAKE3 ids */
    uint8_t *slots;                 /* cap * 33 bytes: used flag + id */
    size_t cap, n;
} idset;

typedef struct imp {
    pch_ctx *ctx;
    const pch_storyline_import_options *opts;
    size_t threshold;
    const char *in_root;            /* directory the documents (and assets) live in */
    const char *root;
    pch_sl_builder b[PCH_STORYLINE_N_TABLES];
    pch_lance_writer *w[PCH_STORYLINE_N_TABLES];
    pch_json_parser *jp;
    pch_buf enc, txt, rm, path;     /* scratch */
    idset ids;
    pch_storyline_stats st;
    bool self_contained, any_asset;
    /* row generator (pch_storyline_rowgen): rows stay in the builders, no writer, no
    ** objects table; large JSON values stay inline beside their id */
    bool gen;
    pch_storyline_asset_fn asset_fn;
    void *asset_payload;
    pch_error *err;
} imp;

static int oom(imp *m) { return pch_error_set(m->err, PCH_ENOMEM, "storyline: out of memory"); }

/* ---- object ids ---- */

static int idset_add(imp *m, const uint8_t id[32])   /* 1 added, 0 present, <0 ENOMEM */
{
    if ((m->ids.n + 1) * 2 > m->ids.cap) {
        size_t nc = m->ids.cap ? m->ids.cap * 2 : 1024;
        uint8_t *ns = pch_calloc(m->ctx, nc, 33);
        if (!ns) return PCH_ENOMEM;
        for (size_t i = 0; i < m->ids.cap; i++) {
            const uint8_t *e = m->ids.slots + i * 33;
            if (!e[0]) continue;
            size_t h = (size_t)pch_load_le64(e + 1) & (nc - 1);
            while (ns[h * 33]) h = (h + 1) & (nc - 1);
            memcpy(ns + h * 33, e, 33);
        }
        pch_free(m->ctx, m->ids.slots);
        m->ids.slots = ns;
        m->ids.cap = nc;
    }
    size_t h = (size_t)pch_load_le64(id) & (m->ids.cap - 1);
    for (;;) {
        uint8_t *e = m->ids.slots + h * 33;
        if (!e[0]) { e[0] = 1; memcpy(e + 1, id, 32); m->ids.n++; return 1; }
        if (memcmp(e + 1, id, 32) == 0) return 0;
        h = (h + 1) & (m->ids.cap - 1);
    }
}

static int flush(imp *m, pch_storyline_table t, bool force)
{
    pch_sl_builder *b = &m->b[t];
    pch_lance_column cols[PCH_SL_MAX_COLS];
    pch_lance_batch batch;
    int rc;
    if (m->gen || b->n_rows == 0 || (!force && b->n_rows < FLUSH_ROWS && b->data_bytes < FLUSH_BYTES)) return PCH_OK;
    rc = pch_sl__batch(b, &batch, cols);
    if (rc < 0) return pch_error_set(m->err, rc, "storyline: table %s: row builder failed", pch_storyline_table_name(t));
    rc = pch_lance_writer_write(m->w[t], &batch, m->err);
    if (rc < 0) return pch_error_prefix(m->err, "storyline: table %s: ", pch_storyline_table_name(t)), rc;
    pch_sl__builder_reset(b);
    return PCH_OK;
}

static int row_end(imp *m, pch_storyline_table t)
{
    int rc = pch_sl__row_end(&m->b[t]);
    if (rc == PCH_ENOMEM) return oom(m);
    if (rc < 0) return pch_error_set(m->err, rc, "storyline: table %s: internal column mismatch", pch_storyline_table_name(t));
    return flush(m, t, false);
}

/* Store bytes as an object (deduplicated by BLAKE3 id); id_hex receives the id. */
static int put_object(imp *m, const void *p, size_t n, const char *kind, const char *media_type,
                      const char *path, char id_hex[65])
{
    uint8_t id[32];
    pch_sl_builder *b = &m->b[PCH_STORYLINE_OBJECTS];
    int rc;
    pch_blake3_hash(id, p, n);
    pch_hex_encode(id_hex, id, 32);
    id_hex[64] = 0;
    if (m->gen) return PCH_OK;       /* the generator only needs the id */
    m->st.object_refs++;
    rc = idset_add(m, id);
    if (rc < 0) return oom(m);
    if (rc == 0) return PCH_OK;
    pch_sl__put_str(b, O_OBJECT_ID, id_hex);
    pch_sl__put_str(b, O_KIND, kind);
    pch_sl__put_str(b, O_MEDIA_TYPE, media_type);
    pch_sl__put_str(b, O_PATH, path);
    pch_sl__put_i64(b, O_SIZE, (int64_t)n);
    pch_sl__put_bytes(b, O_DATA, p, n);
    m->st.objects++;
    if (b->data_bytes >= FLUSH_BYTES / 4) { PCH_TRY(row_end(m, PCH_STORYLINE_OBJECTS)); return flush(m, PCH_STORYLINE_OBJECTS, true); }
    return row_end(m, PCH_STORYLINE_OBJECTS);
}

/* ---- values ---- */

/* JSON text → JSONB in a JSON column (NULL text = null). */
static int put_json(imp *m, pch_storyline_table t, size_t col, const char *p, size_t n)
{
    const pch_json_value *v;
    int rc;
    if (!p) { pch_sl__put_null(&m->b[t], col); return PCH_OK; }
    rc = pch_json_parser_parse(m->jp, p, n, &v, m->err);
    if (rc < 0) return rc;
    pch_buf_clear(&m->enc);
    rc = pch_jsonb__encode(&m->enc, v, p, m->err);
    if (rc < 0) return rc;
    pch_sl__put_bytes(&m->b[t], col, m->enc.data, m->enc.len);
    return PCH_OK;
}

static int put_raw(imp *m, pch_storyline_table t, size_t col, const pch_atif_raw *r)
{
    return put_json(m, t, col, r->ptr, r->len);
}

/* A JSON value that may move to objects when large (column + its *_object column). */
static int put_json_off(imp *m, pch_storyline_table t, size_t col, size_t objcol, const char *p, size_t n)
{
    if (p && n >= m->threshold) {
        char id[65];
        PCH_TRY(put_object(m, p, n, "json", "application/json", NULL, id));
        pch_sl__put_str(&m->b[t], objcol, id);
        if (m->gen) return put_json(m, t, col, p, n);
        pch_sl__put_null(&m->b[t], col);
        return PCH_OK;
    }
    pch_sl__put_null(&m->b[t], objcol);
    return put_json(m, t, col, p, n);
}

/* raw_members: an object built from (key, raw JSON) pairs. */
static void rm_begin(imp *m) { pch_buf_clear(&m->rm); }
static int rm_add(imp *m, const char *k, size_t kn, const pch_atif_raw *r)
{
    if (!r->ptr) return PCH_OK;
    if (pch_buf_putc(&m->rm, m->rm.len ? ',' : '{') < 0 || pch_json__write_string(&m->rm, k, kn) < 0 ||
        pch_buf_putc(&m->rm, ':') < 0 || pch_buf_append(&m->rm, r->ptr, r->len) < 0)
        return pch_error_set(m->err, PCH_EINVAL, "storyline: cannot keep member '%.*s'", (int)kn, k);
    return PCH_OK;
}
static int rm_unknown(imp *m, const pch_atif_member *u, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) PCH_TRY(rm_add(m, u[i].key, u[i].key_len, &u[i].value));
    return PCH_OK;
}
static int rm_end(imp *m, pch_storyline_table t, size_t col)
{
    if (m->rm.len == 0) { pch_sl__put_null(&m->b[t], col); return PCH_OK; }
    if (pch_buf_putc(&m->rm, '}') < 0) return oom(m);
    /* put_json parses m->rm with the shared parser; the text stays alive meanwhile */
    return put_json(m, t, col, (const char *)m->rm.data, m->rm.len);
}

/* The typed column reproduces a string member exactly: it is a JSON string without NUL. */
static bool str_exact(const pch_atif_raw *r, const char *decoded)
{
    return decoded && r->ptr && r->len >= 2 && r->ptr[0] == '"' && !memmem(r->ptr, r->len, "\\u0000", 6);
}
static bool int_exact(const pch_atif_raw *r, int64_t v)
{
    char t[32];
    int n = snprintf(t, sizeof t, "%lld", (long long)v);
    return r->ptr && (size_t)n == r->len && memcmp(t, r->ptr, r->len) == 0;
}

/* Typed string column, or raw_members when the member is not a plain string. */
static int put_str_member(imp *m, pch_storyline_table t, size_t col, const char *key,
                          const pch_atif_raw *r, const char *decoded)
{
    if (str_exact(r, decoded)) { pch_sl__put_str(&m->b[t], col, decoded); return PCH_OK; }
    pch_sl__put_null(&m->b[t], col);
    return rm_add(m, key, strlen(key), r);
}

/* ---- object text of nested ATIF objects (as src/atif/write.c writes them) ---- */

static const char *const k_result_keys[PCH_ATIF_R_N] = { "source_call_id", "content", "subagent_trajectory_ref", "extra" };
static const char *const k_agent_keys[5] = { "name", "version", "model_name", "tool_definitions", "extra" };

static int obj_member(pch_buf *b, bool *first, const char *k, size_t kn, const pch_atif_raw *r)
{
    if (!r->ptr) return PCH_OK;
    if (!*first) PCH_TRY(pch_buf_putc(b, ','));
    *first = false;
    PCH_TRY(pch_json__write_string(b, k, kn));
    PCH_TRY(pch_buf_putc(b, ':'));
    return pch_buf_append(b, r->ptr, r->len);
}

static int obj_text(pch_buf *b, const char *const *keys, const pch_atif_raw *f, int nf,
                    const pch_atif_member *u, uint32_t nu)
{
    bool first = true;
    PCH_TRY(pch_buf_putc(b, '{'));
    for (int k = 0; k < nf; k++) PCH_TRY(obj_member(b, &first, keys[k], strlen(keys[k]), &f[k]));
    for (uint32_t i = 0; i < nu; i++) PCH_TRY(obj_member(b, &first, u[i].key, u[i].key_len, &u[i].value));
    return pch_buf_putc(b, '}');
}

/* ---- assets (RFC-0006 §9.6): image/audio content parts referenced by relative path ---- */

typedef struct asset_list { pch_buf json; size_t n; } asset_list;

static int add_asset(imp *m, const pch_atif_trajectory *t, asset_list *al, const pch_json_value *src)
{
    const pch_json_value *pv = pch_json_get(src, "path", 4), *mv = pch_json_get(src, "media_type", 10);
    char id[65] = "";
    pch_buf data;
    pch_error e;
    int rc = PCH_OK;
    if (!pv || pv->kind != PCH_JSON_STRING) return PCH_OK;
    m->any_asset = true;
    if (m->opts->assets == PCH_STORYLINE_ASSETS_REFERENCE) { m->self_contained = false; return PCH_OK; }
    pch_buf_init(&data, m->ctx);
    pch_error_clear(&e);
    if (m->gen && m->asset_fn && pch_atif_path_check(pv->u.str.ptr, pv->u.str.len, &e) == PCH_OK &&
        !m->asset_fn(t->doc_path ? t->doc_path : "", pv->u.str.ptr, pv->u.str.len, id, m->asset_payload))
        id[0] = 0;
    /* confined to the input root: relative, no "..", resolved beside the document (the
    ** generator has no input root: its resolver answered above) */
    if (pch_atif_path_check(pv->u.str.ptr, pv->u.str.len, &e) == PCH_OK && m->in_root) {
        const char *slash = strrchr(t->doc_path, '/');
        pch_buf_clear(&m->path);
        pch_buf_printf(&m->path, "%s/", m->in_root);
        if (slash) pch_buf_append(&m->path, t->doc_path, (size_t)(slash - t->doc_path + 1));
        pch_buf_append(&m->path, pv->u.str.ptr, pv->u.str.len);
        if (m->path.oom) { rc = oom(m); goto done; }
        struct stat st;
        if (lstat((const char *)m->path.data, &st) == 0 && S_ISREG(st.st_mode) &&
            pch_file_read_all(&data, (const char *)m->path.data, MAX_ASSET_BYTES, &e) == PCH_OK) {
            char mt[64] = "";
            if (mv && mv->kind == PCH_JSON_STRING && mv->u.str.len < sizeof mt) memcpy(mt, mv->u.str.ptr, mv->u.str.len);
            pch_buf_clear(&m->txt);
            if (pch_buf_append(&m->txt, pv->u.str.ptr, pv->u.str.len) < 0) { rc = oom(m); goto done; }
            rc = put_object(m, data.data ? (const void *)data.data : "", data.len, "asset", mt[0] ? mt : NULL,
                            (const char *)m->txt.data, id);
            if (rc < 0) goto done;
            m->st.assets_embedded++;
        }
    }
    if (!id[0]) { m->st.assets_missing++; m->self_contained = false; }
    pch_buf_putc(&al->json, al->n ? ',' : '[');
    pch_buf_append_str(&al->json, "{\"path\":");
    pch_json__write_string(&al->json, pv->u.str.ptr, pv->u.str.len);
    if (id[0]) pch_buf_printf(&al->json, ",\"object_id\":\"%s\"", id);
    pch_buf_putc(&al->json, '}');
    al->n++;
    if (al->json.oom) rc = oom(m);
done:
    pch_buf_dispose(&data);
    return rc;
}

/* Walk a message/content value for {"type":..,"source":{"path":..}} parts. The parser's
** values are used before the next parse. */
static int scan_assets(imp *m, const pch_atif_trajectory *t, asset_list *al, const pch_atif_raw *r)
{
    const pch_json_value *v;
    pch_buf copy;
    int rc = PCH_OK;
    if (!r->ptr || r->ptr[0] != '[' || !memmem(r->ptr, r->len, "\"source\"", 8)) return PCH_OK;
    pch_buf_init(&copy, m->ctx);     /* the parser is shared with put_json: parse a copy */
    if (pch_buf_append(&copy, r->ptr, r->len) < 0) { pch_buf_dispose(&copy); return oom(m); }
    pch_json_parser *jp = NULL;
    rc = pch_json_parser_new(&jp, m->ctx, NULL, m->err);
    if (rc == PCH_OK) rc = pch_json_parser_parse(jp, (const char *)copy.data, copy.len, &v, m->err);
    if (rc == PCH_OK && v->kind == PCH_JSON_ARRAY)
        for (uint32_t i = 0; i < v->n && rc == PCH_OK; i++) {
            const pch_json_value *src = pch_json_get(&v->u.items[i], "source", 6);
            if (src && src->kind == PCH_JSON_OBJECT) rc = add_asset(m, t, al, src);
        }
    pch_json_parser_free(jp);
    pch_buf_dispose(&copy);
    return rc;
}

/* ---- rows ---- */

static void put_identity(imp *m, pch_storyline_table tb, const pch_atif_trajectory *t)
{
    pch_sl_builder *b = &m->b[tb];
    pch_sl__put_str(b, SL_SOURCE_ID, t->source_id ? t->source_id : "");
    pch_sl__put_str(b, SL_RUN_ID, t->run_key ? t->run_key : "");
    pch_sl__put_str(b, SL_SESSION_ID, t->session_id);
    pch_sl__put_str(b, SL_TRAJECTORY_KEY, t->trajectory_key ? t->trajectory_key : "");
}

static int put_metrics(imp *m, const pch_atif_step *s)
{
    pch_sl_builder *b = &m->b[PCH_STORYLINE_STEPS];
    const pch_atif_raw *r = &s->f[PCH_ATIF_S_METRICS];
    const pch_json_value *v;
    bool have[4] = { false, false, false, false };
    int64_t tok[3] = { 0, 0, 0 };
    double cost = 0;
    static const char *const tk[3] = { "prompt_tokens", "completion_tokens", "cached_tokens" };
    int rc;
    if (!r->ptr) {
        for (int i = 0; i < 4; i++) pch_sl__put_null(b, (size_t)(S_PROMPT_TOKENS + i));
        pch_sl__put_null(b, S_METRICS_EXTRA);
        return PCH_OK;
    }
    rc = pch_json_parser_parse(m->jp, r->ptr, r->len, &v, m->err);
    if (rc < 0) return rc;
    if (v->kind != PCH_JSON_OBJECT) {   /* cannot happen after validation; keep it whole */
        for (int i = 0; i < 4; i++) pch_sl__put_null(b, (size_t)(S_PROMPT_TOKENS + i));
        return put_json(m, PCH_STORYLINE_STEPS, S_METRICS_EXTRA, r->ptr, r->len);
    }
    pch_json_member *keep = pch_malloc(m->ctx, (v->n ? v->n : 1) * sizeof *keep);
    pch_json_value obj = *v;
    uint32_t nk = 0;
    if (!keep) return oom(m);
    for (uint32_t i = 0; i < v->n; i++) {
        const pch_json_member *mm = &v->u.members[i];
        const pch_json_value *x = &mm->value;
        bool typed = false;
        for (int k = 0; k < 3; k++)
            if (!have[k] && mm->key_len == strlen(tk[k]) && memcmp(mm->key, tk[k], mm->key_len) == 0 &&
                x->kind == PCH_JSON_NUMBER && (x->num_flags & PCH_JSON_NUM_I64)) {
                pch_atif_raw t = { r->ptr + x->span_off, x->span_len };
                if (int_exact(&t, x->u.num.i)) { have[k] = true; tok[k] = x->u.num.i; typed = true; }
            }
        if (!have[3] && mm->key_len == 8 && memcmp(mm->key, "cost_usd", 8) == 0 && x->kind == PCH_JSON_NUMBER &&
            !(x->num_flags & PCH_JSON_NUM_INT) && x->u.num.d == x->u.num.d &&
            x->u.num.d - x->u.num.d == 0) {          /* a finite real: reproduced by float64 */
            have[3] = true; cost = x->u.num.d; typed = true;
        }
        if (!typed) keep[nk++] = *mm;
    }
    for (int k = 0; k < 3; k++) {
        if (have[k]) pch_sl__put_i64(b, (size_t)(S_PROMPT_TOKENS + k), tok[k]);
        else pch_sl__put_null(b, (size_t)(S_PROMPT_TOKENS + k));
    }
    if (have[3]) pch_sl__put_f64(b, S_COST_USD, cost);
    else pch_sl__put_null(b, S_COST_USD);
    obj.n = nk;
    obj.u.members = keep;
    pch_buf_clear(&m->enc);
    rc = pch_jsonb__encode(&m->enc, &obj, r->ptr, m->err);
    pch_free(m->ctx, keep);
    if (rc < 0) return rc;
    pch_sl__put_bytes(b, S_METRICS_EXTRA, m->enc.data, m->enc.len);
    return PCH_OK;
}

static int put_calls(imp *m, const pch_atif_trajectory *t, const pch_atif_step *s)
{
    pch_sl_builder *b = &m->b[PCH_STORYLINE_TOOL_CALLS];
    for (uint32_t i = 0; i < s->n_calls; i++) {
        const pch_atif_tool_call *c = &s->calls[i];
        size_t nres = 0;
        put_identity(m, PCH_STORYLINE_TOOL_CALLS, t);
        pch_sl__put_i32(b, C_STEP_ORDINAL, (int32_t)s->ordinal);
        if (s->f[PCH_ATIF_S_STEP_ID].ptr && int_exact(&s->f[PCH_ATIF_S_STEP_ID], s->step_id)) pch_sl__put_i64(b, C_STEP_ID, s->step_id);
        else pch_sl__put_null(b, C_STEP_ID);
        pch_sl__put_i32(b, C_CALL_ORDINAL, (int32_t)c->ordinal);
        rm_begin(m);
        PCH_TRY(put_str_member(m, PCH_STORYLINE_TOOL_CALLS, C_TOOL_CALL_ID, "tool_call_id", &c->f[PCH_ATIF_C_TOOL_CALL_ID], c->tool_call_id));
        PCH_TRY(put_str_member(m, PCH_STORYLINE_TOOL_CALLS, C_FUNCTION_NAME, "function_name", &c->f[PCH_ATIF_C_FUNCTION_NAME], c->function_name));
        PCH_TRY(rm_unknown(m, c->unknown, c->n_unknown));
        /* rm holds the call's raw members: encode it last, after the other JSON columns */
        pch_buf saved;
        pch_buf_init(&saved, m->ctx);
        pch_buf_move(&m->rm, &saved);
        pch_buf_init(&m->rm, m->ctx);
        int rc = put_json_off(m, PCH_STORYLINE_TOOL_CALLS, C_ARGUMENTS, C_ARGUMENTS_OBJECT,
                              c->f[PCH_ATIF_C_ARGUMENTS].ptr, c->f[PCH_ATIF_C_ARGUMENTS].len);
        if (rc == PCH_OK) rc = put_raw(m, PCH_STORYLINE_TOOL_CALLS, C_EXTRA, &c->f[PCH_ATIF_C_EXTRA]);
        /* correlated results (RFC-0006 §5.5), in observation order */
        pch_buf_clear(&m->txt);
        for (uint32_t r = 0; r < s->n_results && rc == PCH_OK; r++) {
            const pch_atif_result *res = &s->results[r];
            if (res->call_ordinal != (int32_t)c->ordinal) continue;
            if (pch_buf_putc(&m->txt, nres++ ? ',' : '[') < 0 ||
                obj_text(&m->txt, k_result_keys, res->f, PCH_ATIF_R_N, res->unknown, res->n_unknown) < 0)
                rc = oom(m);
        }
        if (rc == PCH_OK && nres && pch_buf_putc(&m->txt, ']') < 0) rc = oom(m);
        if (rc == PCH_OK) {
            pch_buf res_txt;
            pch_buf_init(&res_txt, m->ctx);
            pch_buf_move(&m->txt, &res_txt);
            pch_buf_init(&m->txt, m->ctx);
            rc = put_json_off(m, PCH_STORYLINE_TOOL_CALLS, C_RESULTS, C_RESULTS_OBJECT,
                              nres ? (const char *)res_txt.data : NULL, res_txt.len);
            pch_buf_dispose(&res_txt);
        }
        pch_buf_dispose(&m->rm);
        pch_buf_move(&saved, &m->rm);
        if (rc == PCH_OK) rc = rm_end(m, PCH_STORYLINE_TOOL_CALLS, C_RAW_MEMBERS);
        if (rc < 0) return rc;
        PCH_TRY(row_end(m, PCH_STORYLINE_TOOL_CALLS));
        m->st.tool_calls++;
    }
    return PCH_OK;
}

static int put_step(imp *m, const pch_atif_trajectory *t, const pch_atif_step *s)
{
    pch_sl_builder *b = &m->b[PCH_STORYLINE_STEPS];
    pch_buf rmsave, tmp;
    asset_list al;
    int rc = PCH_OK;
    put_identity(m, PCH_STORYLINE_STEPS, t);
    pch_sl__put_i32(b, S_STEP_ORDINAL, (int32_t)s->ordinal);
    rm_begin(m);
    if (int_exact(&s->f[PCH_ATIF_S_STEP_ID], s->step_id)) pch_sl__put_i64(b, S_STEP_ID, s->step_id);
    else { pch_sl__put_null(b, S_STEP_ID); PCH_TRY(rm_add(m, "step_id", 7, &s->f[PCH_ATIF_S_STEP_ID])); }
    if (s->has_timestamp) pch_sl__put_i64(b, S_TIMESTAMP_MS, s->timestamp_ms);
    else pch_sl__put_null(b, S_TIMESTAMP_MS);
    PCH_TRY(put_str_member(m, PCH_STORYLINE_STEPS, S_TIMESTAMP, "timestamp", &s->f[PCH_ATIF_S_TIMESTAMP], s->timestamp));
    {
        static const char *const names[] = { NULL, "system", "user", "agent" };
        const char *src = (unsigned)s->source < 4 ? names[s->source] : NULL;
        char q[16];
        const pch_atif_raw *r = &s->f[PCH_ATIF_S_SOURCE];
        int qn = src ? snprintf(q, sizeof q, "\"%s\"", src) : 0;
        if (src && r->ptr && (size_t)qn == r->len && memcmp(q, r->ptr, r->len) == 0) pch_sl__put_str(b, S_SOURCE, src);
        else { pch_sl__put_null(b, S_SOURCE); PCH_TRY(rm_add(m, "source", 6, r)); }
    }
    PCH_TRY(put_str_member(m, PCH_STORYLINE_STEPS, S_MODEL_NAME, "model_name", &s->f[PCH_ATIF_S_MODEL_NAME], s->model_name));
    {
        const pch_atif_raw *r = &s->f[PCH_ATIF_S_REASONING_CONTENT];
        if (str_exact(r, s->reasoning_content)) {
            size_t n = strlen(s->reasoning_content);
            if (n >= m->threshold) {
                char id[65];
                PCH_TRY(put_object(m, s->reasoning_content, n, "text", "text/plain; charset=utf-8", NULL, id));
                pch_sl__put_null(b, S_REASONING_CONTENT);
                pch_sl__put_str(b, S_REASONING_CONTENT_OBJECT, id);
            } else {
                pch_sl__put_str(b, S_REASONING_CONTENT, s->reasoning_content);
                pch_sl__put_null(b, S_REASONING_CONTENT_OBJECT);
            }
        } else {
            pch_sl__put_null(b, S_REASONING_CONTENT);
            pch_sl__put_null(b, S_REASONING_CONTENT_OBJECT);
            PCH_TRY(rm_add(m, "reasoning_content", 17, r));
        }
    }
    {
        const pch_atif_raw *r = &s->f[PCH_ATIF_S_LLM_CALL_COUNT];
        if (s->has_llm_call_count && int_exact(r, s->llm_call_count)) pch_sl__put_i64(b, S_LLM_CALL_COUNT, s->llm_call_count);
        else { pch_sl__put_null(b, S_LLM_CALL_COUNT); PCH_TRY(rm_add(m, "llm_call_count", 14, r)); }
    }
    {
        const pch_atif_raw *r = &s->f[PCH_ATIF_S_IS_COPIED_CONTEXT];
        if (r->ptr && r->len == 4 && memcmp(r->ptr, "true", 4) == 0) pch_sl__put_bool(b, S_IS_COPIED_CONTEXT, true);
        else if (r->ptr && r->len == 5 && memcmp(r->ptr, "false", 5) == 0) pch_sl__put_bool(b, S_IS_COPIED_CONTEXT, false);
        else { pch_sl__put_null(b, S_IS_COPIED_CONTEXT); PCH_TRY(rm_add(m, "is_copied_context", 17, r)); }
    }
    PCH_TRY(rm_unknown(m, s->unknown, s->n_unknown));
    pch_buf_init(&rmsave, m->ctx);
    pch_buf_init(&tmp, m->ctx);
    pch_buf_init(&al.json, m->ctx);
    al.n = 0;
    pch_buf_move(&m->rm, &rmsave);
    pch_buf_init(&m->rm, m->ctx);

    rc = put_raw(m, PCH_STORYLINE_STEPS, S_REASONING_EFFORT, &s->f[PCH_ATIF_S_REASONING_EFFORT]);
    if (rc == PCH_OK) rc = put_json_off(m, PCH_STORYLINE_STEPS, S_MESSAGE, S_MESSAGE_OBJECT,
                                        s->f[PCH_ATIF_S_MESSAGE].ptr, s->f[PCH_ATIF_S_MESSAGE].len);
    if (rc == PCH_OK) rc = put_metrics(m, s);
    if (rc == PCH_OK) rc = put_raw(m, PCH_STORYLINE_STEPS, S_EXTRA, &s->f[PCH_ATIF_S_EXTRA]);
    if (rc == PCH_OK) {
        pch_sl__put_bool(b, S_HAS_TOOL_CALLS, s->has_tool_calls);
        pch_sl__put_i32(b, S_N_TOOL_CALLS, (int32_t)s->n_calls);
    }
    /* observation: its unknown members, then results (uncorrelated ones stay here) */
    if (rc == PCH_OK) {
        if (s->has_observation) {
            bool first = true;
            pch_buf_clear(&tmp);
            if (pch_buf_putc(&tmp, '{') < 0) rc = oom(m);
            for (uint32_t i = 0; i < s->n_obs_unknown && rc == PCH_OK; i++)
                if (obj_member(&tmp, &first, s->obs_unknown[i].key, s->obs_unknown[i].key_len, &s->obs_unknown[i].value) < 0) rc = oom(m);
            if (rc == PCH_OK && pch_buf_putc(&tmp, '}') < 0) rc = oom(m);
            if (rc == PCH_OK) rc = put_json(m, PCH_STORYLINE_STEPS, S_OBSERVATION_EXTRA, (const char *)tmp.data, tmp.len);
        } else {
            pch_sl__put_null(b, S_OBSERVATION_EXTRA);
        }
    }
    if (rc == PCH_OK) {
        size_t nun = 0;
        pch_sl__put_bool(b, S_HAS_OBSERVATION_RESULTS, s->has_results);
        pch_buf_clear(&tmp);
        for (uint32_t r = 0; r < s->n_results && rc == PCH_OK; r++) {
            const pch_atif_result *res = &s->results[r];
            if (res->call_ordinal >= 0) continue;
            if (pch_buf_putc(&tmp, nun++ ? ',' : '[') < 0 ||
                obj_text(&tmp, k_result_keys, res->f, PCH_ATIF_R_N, res->unknown, res->n_unknown) < 0) rc = oom(m);
        }
        if (rc == PCH_OK && nun && pch_buf_putc(&tmp, ']') < 0) rc = oom(m);
        if (rc == PCH_OK) rc = put_json_off(m, PCH_STORYLINE_STEPS, S_OBSERVATION_RESULTS, S_OBSERVATION_RESULTS_OBJECT,
                                            nun ? (const char *)tmp.data : NULL, tmp.len);
    }
    if (rc == PCH_OK) {
        if (s->has_results) {
            pch_buf_clear(&tmp);
            pch_buf_putc(&tmp, '[');
            for (uint32_t r = 0; r < s->n_results; r++) {
                if (r) pch_buf_putc(&tmp, ',');
                if (s->results[r].call_ordinal >= 0) pch_buf_printf(&tmp, "%d", (int)s->results[r].call_ordinal);
                else pch_buf_append_str(&tmp, "null");
            }
            pch_buf_putc(&tmp, ']');
            rc = tmp.oom ? oom(m) : put_json(m, PCH_STORYLINE_STEPS, S_RESULT_CALL_ORDINALS, (const char *)tmp.data, tmp.len);
        } else {
            pch_sl__put_null(b, S_RESULT_CALL_ORDINALS);
        }
    }
    if (rc == PCH_OK) rc = scan_assets(m, t, &al, &s->f[PCH_ATIF_S_MESSAGE]);
    for (uint32_t r = 0; r < s->n_results && rc == PCH_OK; r++)
        rc = scan_assets(m, t, &al, &s->results[r].f[PCH_ATIF_R_CONTENT]);
    if (rc == PCH_OK) {
        if (al.n) {
            rc = pch_buf_putc(&al.json, ']') < 0 ? oom(m) :
                 put_json(m, PCH_STORYLINE_STEPS, S_ASSETS, (const char *)al.json.data, al.json.len);
        } else {
            pch_sl__put_null(b, S_ASSETS);
        }
    }
    pch_buf_dispose(&m->rm);
    pch_buf_move(&rmsave, &m->rm);
    if (rc == PCH_OK) rc = rm_end(m, PCH_STORYLINE_STEPS, S_RAW_MEMBERS);
    pch_buf_dispose(&tmp);
    pch_buf_dispose(&al.json);
    pch_buf_dispose(&rmsave);
    if (rc < 0) return rc;
    PCH_TRY(row_end(m, PCH_STORYLINE_STEPS));
    m->st.steps++;
    return put_calls(m, t, s);
}

static int put_run(imp *m, const pch_atif_doc *d, size_t i)
{
    const pch_atif_trajectory *t = pch_atif_doc_get(d, i);
    pch_sl_builder *b = &m->b[PCH_STORYLINE_RUNS];
    pch_buf rmsave, tmp;
    int64_t first_ts = 0, last_ts = 0;
    bool any_ts = false;
    int rc = PCH_OK;
    put_identity(m, PCH_STORYLINE_RUNS, t);
    pch_sl__put_str(b, R_DOC_PATH, t->doc_path ? t->doc_path : "");
    pch_sl__put_i32(b, R_PREORDER, (int32_t)t->preorder);
    if (t->parent >= 0) {
        const pch_atif_trajectory *p = pch_atif_doc_get(d, (size_t)t->parent);
        pch_sl__put_str(b, R_PARENT_TRAJECTORY_KEY, p ? p->trajectory_key : NULL);
        pch_sl__put_i32(b, R_PARENT_LOCAL_ORDINAL, t->parent_local_ordinal);
    } else {
        pch_sl__put_null(b, R_PARENT_TRAJECTORY_KEY);
        pch_sl__put_null(b, R_PARENT_LOCAL_ORDINAL);
    }
    pch_sl__put_bool(b, R_RUN_KEY_GENERATED, t->run_key_generated);
    pch_sl__put_bool(b, R_TRAJECTORY_KEY_GENERATED, t->trajectory_key_generated);
    rm_begin(m);
    PCH_TRY(put_str_member(m, PCH_STORYLINE_RUNS, R_SCHEMA_VERSION, "schema_version", &t->f[PCH_ATIF_T_SCHEMA_VERSION], t->schema_version));
    PCH_TRY(put_str_member(m, PCH_STORYLINE_RUNS, R_TRAJECTORY_ID, "trajectory_id", &t->f[PCH_ATIF_T_TRAJECTORY_ID], t->trajectory_id));
    if (!str_exact(&t->f[PCH_ATIF_T_SESSION_ID], t->session_id))
        PCH_TRY(rm_add(m, "session_id", 10, &t->f[PCH_ATIF_T_SESSION_ID]));
    pch_sl__put_str(b, R_AGENT_NAME, t->agent_name);
    pch_sl__put_str(b, R_AGENT_VERSION, t->agent_version);
    pch_sl__put_str(b, R_AGENT_MODEL_NAME, t->agent_model_name);
    PCH_TRY(rm_unknown(m, t->unknown, t->n_unknown));
    pch_buf_init(&rmsave, m->ctx);
    pch_buf_init(&tmp, m->ctx);
    pch_buf_move(&m->rm, &rmsave);
    pch_buf_init(&m->rm, m->ctx);
    if (t->has_agent) {
        if (obj_text(&tmp, k_agent_keys, t->agent_f, 5, t->agent_unknown, t->n_agent_unknown) < 0) rc = oom(m);
        else rc = put_json(m, PCH_STORYLINE_RUNS, R_AGENT, (const char *)tmp.data, tmp.len);
    } else {
        pch_sl__put_null(b, R_AGENT);
    }
    if (rc == PCH_OK) rc = put_raw(m, PCH_STORYLINE_RUNS, R_NOTES, &t->f[PCH_ATIF_T_NOTES]);
    if (rc == PCH_OK) rc = put_raw(m, PCH_STORYLINE_RUNS, R_FINAL_METRICS, &t->f[PCH_ATIF_T_FINAL_METRICS]);
    if (rc == PCH_OK) rc = put_raw(m, PCH_STORYLINE_RUNS, R_CONTINUED_TRAJECTORY_REF, &t->f[PCH_ATIF_T_CONTINUED_TRAJECTORY_REF]);
    if (rc == PCH_OK) rc = put_raw(m, PCH_STORYLINE_RUNS, R_EXTRA, &t->f[PCH_ATIF_T_EXTRA]);
    pch_buf_dispose(&m->rm);
    pch_buf_move(&rmsave, &m->rm);
    if (rc == PCH_OK) rc = rm_end(m, PCH_STORYLINE_RUNS, R_RAW_MEMBERS);
    pch_buf_dispose(&rmsave);
    if (rc == PCH_OK) {
        pch_sl__put_bool(b, R_HAS_STEPS, t->has_steps);
        pch_sl__put_bool(b, R_HAS_SUBAGENT_TRAJECTORIES, t->has_subagent_trajectories);
        pch_sl__put_i64(b, R_N_STEPS, (int64_t)t->n_steps);
        pch_sl__put_str(b, R_STATE, pch_atif_state_name(t->state));
        pch_buf_clear(&tmp);
        pch_buf_putc(&tmp, '[');
        int nw = 0;
        for (uint32_t bit = 1; bit && bit <= t->warnings; bit <<= 1)
            if ((t->warnings & bit) && pch_atif_warning_name(bit)) {
                if (nw++) pch_buf_putc(&tmp, ',');
                pch_buf_printf(&tmp, "\"%s\"", pch_atif_warning_name(bit));
            }
        pch_buf_putc(&tmp, ']');
        rc = tmp.oom ? oom(m) : put_json(m, PCH_STORYLINE_RUNS, R_PROJECTION_WARNINGS, (const char *)tmp.data, tmp.len);
    }
    for (uint32_t s = 0; s < t->n_steps; s++)
        if (t->steps[s].has_timestamp) {
            int64_t x = t->steps[s].timestamp_ms;
            if (!any_ts || x < first_ts) first_ts = x;
            if (!any_ts || x > last_ts) last_ts = x;
            any_ts = true;
        }
    if (any_ts) { pch_sl__put_i64(b, R_FIRST_TIMESTAMP_MS, first_ts); pch_sl__put_i64(b, R_LAST_TIMESTAMP_MS, last_ts); }
    else { pch_sl__put_null(b, R_FIRST_TIMESTAMP_MS); pch_sl__put_null(b, R_LAST_TIMESTAMP_MS); }
    pch_buf_dispose(&tmp);
    if (rc < 0) return rc;
    PCH_TRY(row_end(m, PCH_STORYLINE_RUNS));
    m->st.runs++;
    for (uint32_t s = 0; s < t->n_steps; s++) PCH_TRY(put_step(m, t, &t->steps[s]));
    return PCH_OK;
}

static int on_doc(pch_atif_doc *d, void *payload)
{
    imp *m = payload;
    for (size_t i = 0; i < pch_atif_doc_count(d); i++) {
        int rc = put_run(m, d, i);
        if (rc < 0) return rc;
    }
    m->st.documents++;
    return 0;
}

static int on_finding(const pch_atif_finding *f, void *payload)
{
    imp *m = payload;
    if (m->opts->warnings && f->severity == PCH_ATIF_ERROR)
        fprintf(m->opts->warnings, "%s:%s: %s\n", f->file, f->pointer, f->message);
    return 0;
}

/* ---- source lineage: a content digest of a directory (BLAKE3 over path + bytes) ---- */

typedef struct digest_st { pch_blake3 h; size_t skip; pch_buf data; pch_error *err; } digest_st;

static int digest_cb(const char *path, const struct stat *st, void *payload)
{
    (void)st;
    digest_st *d = payload;
    uint8_t fh[32], len[8];
    pch_buf_clear(&d->data);
    PCH_TRY(pch_file_read_all(&d->data, path, (size_t)1 << 31, d->err));
    pch_blake3_hash(fh, d->data.data ? d->data.data : (const uint8_t *)"", d->data.len);
    pch_store_le64(len, (uint64_t)strlen(path + d->skip));
    pch_blake3_update(&d->h, len, 8);
    pch_blake3_update(&d->h, path + d->skip, strlen(path + d->skip));
    pch_blake3_update(&d->h, fh, 32);
    return PCH_OK;
}

static int dir_digest(pch_ctx *ctx, const char *dir, char out[65], pch_error *err)
{
    digest_st d;
    uint8_t h[32];
    int rc;
    pch_blake3_init(&d.h);
    d.skip = strlen(dir) + 1;
    d.err = err;
    pch_buf_init(&d.data, ctx);
    rc = pch_atif__walk(ctx, dir, digest_cb, &d, err);
    pch_buf_dispose(&d.data);
    if (rc < 0) return rc;
    pch_blake3_final(&d.h, h, 32);
    pch_hex_encode(out, h, 32);
    out[64] = 0;
    return PCH_OK;
}

/* ---- compact-jsonl input (RFC-0014 datasets whose records are ATIF documents) ---- */

typedef struct cj_state { imp *m; pch_atif_options ao; pch_atif__keyset keys; } cj_state;

static int cj_doc(const char *path, const char *text, size_t len, void *payload)
{
    cj_state *cs = payload;
    imp *m = cs->m;
    pch_atif_doc *d = NULL;
    pch_error e;
    int rc;
    pch_error_clear(&e);
    m->st.input_bytes += len;
    rc = pch_atif_doc_parse(&d, m->ctx, text, len, path, &cs->ao, on_finding, m, &e);
    if (rc == PCH_EINVAL) { m->st.rejected++; return PCH_OK; }
    if (rc < 0) return pch_error_set(m->err, rc, "%s", e.msg);
    /* keys come from each document alone; one claimed twice fails the import (as a
    ** directory import does: src/atif/keys.c) */
    rc = pch_atif__keys_claim(m->ctx, &cs->keys, d, m->err);
    if (rc >= 0) rc = on_doc(d, m);
    pch_atif_doc_free(d);
    if (rc == PCH_ENOMEM) return oom(m);
    return rc < 0 ? rc : PCH_OK;
}

/* ---- publish ---- */

static int write_current(imp *m, const uint64_t ver[PCH_STORYLINE_N_TABLES], const char *src_kind,
                         const char *src_path, const char *src_version_key, const char *src_version)
{
    pch_buf c, p;
    int rc;
    pch_buf_init(&c, m->ctx);
    pch_buf_init(&p, m->ctx);
    pch_buf_printf(&c, "{\"format\":\"%s\",\"format_version\":%d,\"created_ms\":%lld,\"tables\":{",
                   PCH_SL_FORMAT, PCH_SL_FORMAT_VERSION, (long long)pch_time_now_ms());
    const size_t rows[4] = { m->st.runs, m->st.steps, m->st.tool_calls, m->st.objects };
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++)
        pch_buf_printf(&c, "%s\"%s\":{\"path\":\"%s\",\"version\":%llu,\"rows\":%zu}", t ? "," : "",
                       pch_storyline_table_name((pch_storyline_table)t), pch_sl__dir((pch_storyline_table)t),
                       (unsigned long long)ver[t], rows[t]);
    pch_buf_printf(&c, "},\"source\":{\"kind\":\"%s\",\"path\":", src_kind);
    pch_json__write_string(&c, src_path, strlen(src_path));
    pch_buf_printf(&c, ",\"%s\":%s,\"source_id\":", src_version_key, src_version);
    const char *sid = m->opts->source_id ? m->opts->source_id : "";
    pch_json__write_string(&c, sid, strlen(sid));
    pch_buf_printf(&c, ",\"documents\":%zu,\"rejected\":%zu,\"bytes\":%zu},", m->st.documents, m->st.rejected, m->st.input_bytes);
    pch_buf_printf(&c, "\"assets\":\"%s\",\"self_contained\":%s,\"object_threshold\":%zu}\n",
                   m->opts->assets == PCH_STORYLINE_ASSETS_REFERENCE ? "reference" : "embed",
                   m->self_contained ? "true" : "false", m->threshold);
    if (c.oom || pch_path_join(&p, m->root, "CURRENT") < 0) { rc = oom(m); goto done; }
    if (pch_store_is_s3(m->root)) {   /* on object storage: one PUT, as a rename locally */
        pch_store *st = NULL;
        if ((rc = pch_store_open(m->ctx, m->root, NULL, &st, m->err)) == PCH_OK)
            rc = pch_store_put(st, "CURRENT", c.data, c.len, 0, m->err);
        pch_store_close(st);
    } else {
        rc = pch_file_publish((const char *)p.data, c.data, c.len, m->err);
    }
done:
    pch_buf_dispose(&c);
    pch_buf_dispose(&p);
    return rc;
}

static int any_name(void *arg, const char *name) { (void)name; *(bool *)arg = true; return 1; }

/* Whether the directory p exists (on object storage: whether any key lies below it). */
static bool is_dir(const char *p)
{
    struct stat st;
    if (pch_rfile_is_remote(p)) {
        bool any = false;
        pch_error e;
        (void)pch_rfile_list(NULL, p, any_name, &any, &e);
        return any;
    }
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int pch_storyline_import(pch_ctx *ctx, const char *from, const char *root,
                         const pch_storyline_import_options *opts, pch_storyline_stats *stats,
                         pch_error *err)
{
    static const pch_storyline_import_options k_def = PCH_STORYLINE_IMPORT_OPTIONS_INIT;
    pch_storyline_import_options o = opts ? *opts : k_def;
    imp m;
    uint64_t ver[PCH_STORYLINE_N_TABLES] = { 0 };
    char digest[65] = "", vtext[40] = "";
    char *sid_alloc = NULL;
    bool cj;
    int rc;
    if (stats) memset(stats, 0, sizeof *stats);
    pch_error_clear(err);
    if (!from || !root) return pch_error_set(err, PCH_EINVAL, "storyline: missing input or root");
    if (!is_dir(from)) return pch_error_set(err, PCH_ENOTFOUND, "storyline: %s: no such directory", from);
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.opts = &o;
    m.root = root;
    m.err = err;
    m.threshold = o.object_threshold ? o.object_threshold : PCH_STORYLINE_DEFAULT_OBJECT_THRESHOLD;
    m.self_contained = true;
    pch_buf_init(&m.enc, ctx); pch_buf_init(&m.txt, ctx); pch_buf_init(&m.rm, ctx); pch_buf_init(&m.path, ctx);
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) pch_sl__builder_init(&m.b[t], ctx, (pch_storyline_table)t);
    /* a compact-jsonl dataset is a Lance dataset directory (it has _versions/) */
    pch_buf_clear(&m.path);
    pch_buf_printf(&m.path, "%s/_versions", from);
    cj = !m.path.oom && is_dir((const char *)m.path.data);
    if (!o.source_id) {
        const char *bn = strrchr(from, '/');
        size_t n = strlen(from);
        while (n > 1 && from[n - 1] == '/') n--;
        bn = from + n;
        while (bn > from && bn[-1] != '/') bn--;
        sid_alloc = pch_malloc(ctx, (size_t)(from + n - bn) + 1);
        if (!sid_alloc) { rc = oom(&m); goto done; }
        memcpy(sid_alloc, bn, (size_t)(from + n - bn));
        sid_alloc[from + n - bn] = 0;
        o.source_id = sid_alloc;
    }
    rc = pch_json_parser_new(&m.jp, ctx, NULL, err);
    if (rc < 0) goto done;
    if (!pch_rfile_is_remote(root) && (rc = pch_mkdirs(root, err)) < 0) goto done;
    for (int t = 0; t < PCH_STORYLINE_N_TABLES && rc == PCH_OK; t++) {
        pch_lance_schema *s = NULL;
        pch_lance_write_options wo = PCH_LANCE_WRITE_OPTIONS_INIT;
        pch_buf_clear(&m.path);
        pch_buf_printf(&m.path, "%s/%s/_versions", root, pch_sl__dir((pch_storyline_table)t));
        wo.mode = is_dir((const char *)m.path.data) ? PCH_LANCE_OVERWRITE : PCH_LANCE_CREATE;
        wo.max_bytes_per_page = SL_PAGE_BYTES;
        pch_buf_clear(&m.path);
        pch_buf_printf(&m.path, "%s/%s", root, pch_sl__dir((pch_storyline_table)t));
        if (m.path.oom) { rc = oom(&m); break; }
        rc = pch_sl__schema(&s, ctx, (pch_storyline_table)t, err);
        if (rc == PCH_OK) rc = pch_lance_writer_open(&m.w[t], ctx, (const char *)m.path.data, s, &wo, err);
        pch_lance_schema_free(s);
    }
    if (rc < 0) goto done;
    if (cj) {
        cj_state cs;
        uint64_t v = 0;
        memset(&cs, 0, sizeof cs);
        cs.m = &m;
        cs.ao = (pch_atif_options)PCH_ATIF_OPTIONS_INIT;
        cs.ao.strict = o.strict;
        cs.ao.source_id = o.source_id;
        cs.ao.source_fingerprint = o.source_id;   /* RFC-0006 §5.2: seeds generated keys */
        m.in_root = NULL;         /* records have no directory: assets cannot be embedded */
        rc = pch_sl__cj_each(ctx, from, &v, cj_doc, &cs, err);
        pch_atif__keys_dispose(ctx, &cs.keys);
        snprintf(vtext, sizeof vtext, "%llu", (unsigned long long)v);
    } else {
        pch_atif_options ao = PCH_ATIF_OPTIONS_INIT;
        pch_atif_dir_stats ds;
        pch_error e;
        pch_error_clear(&e);
        ao.strict = o.strict;
        ao.source_id = o.source_id;
        ao.source_fingerprint = o.source_id;      /* as pchronicle-vortex build: same keys */
        m.in_root = from;
        rc = pch_atif_dir_import(ctx, from, &ao, on_doc, NULL, on_finding, &m, &ds, &e);
        if (rc < 0 && err && err->code == 0) pch_error_set(err, rc, "%s", e.msg);
        m.st.rejected = ds.rejected;
        m.st.input_bytes = ds.bytes;
        if (rc == PCH_OK) rc = dir_digest(ctx, from, digest, err);
        snprintf(vtext, sizeof vtext, "\"blake3:%.16s\"", digest);
    }
    if (rc < 0) goto done;
    if (m.st.documents == 0) { rc = pch_error_set(err, PCH_EINVAL, "storyline: %s: no valid ATIF document", from); goto done; }
    for (int t = 0; t < PCH_STORYLINE_N_TABLES && rc == PCH_OK; t++) rc = flush(&m, (pch_storyline_table)t, true);
    for (int t = 0; t < PCH_STORYLINE_N_TABLES && rc == PCH_OK; t++) {
        rc = pch_lance_writer_commit(m.w[t], &ver[t], err);
        if (rc < 0) pch_error_prefix(err, "storyline: table %s: ", pch_storyline_table_name((pch_storyline_table)t));
    }
    if (rc < 0) goto done;
    if (cj) rc = write_current(&m, ver, "compact-jsonl", from, "version", vtext);
    else {
        char dq[80];
        snprintf(dq, sizeof dq, "\"blake3:%s\"", digest);
        rc = write_current(&m, ver, "atif-dir", from, "digest", dq);
    }
    if (rc == PCH_OK && stats) *stats = m.st;
done:
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) {
        pch_lance_writer_free(m.w[t]);
        pch_sl__builder_dispose(&m.b[t]);
    }
    pch_json_parser_free(m.jp);
    pch_free(ctx, m.ids.slots);
    pch_free(ctx, sid_alloc);
    pch_buf_dispose(&m.enc); pch_buf_dispose(&m.txt); pch_buf_dispose(&m.rm); pch_buf_dispose(&m.path);
    return rc;
}

/* ---- row generator (RFC-0006 §13.1): the same rows, computed for another projection ---- */

struct pch_storyline_rowgen {
    imp m;
    pch_storyline_import_options o;
    pch_lance_batch batch;
    pch_lance_column cols[PCH_SL_MAX_COLS];
};

int pch_storyline_rowgen_new(pch_storyline_rowgen **out, pch_ctx *ctx, size_t object_threshold,
                             pch_storyline_assets mode, pch_storyline_asset_fn resolve, void *payload,
                             pch_error *err)
{
    static const pch_storyline_import_options k_def = PCH_STORYLINE_IMPORT_OPTIONS_INIT;
    pch_storyline_rowgen *g;
    *out = NULL;
    if (!(g = pch_calloc(ctx, 1, sizeof *g))) return pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
    g->o = k_def;
    g->o.assets = mode;
    g->m.ctx = ctx;
    g->m.opts = &g->o;
    g->m.threshold = object_threshold ? object_threshold : PCH_STORYLINE_DEFAULT_OBJECT_THRESHOLD;
    g->m.gen = true;
    g->m.asset_fn = resolve;
    g->m.asset_payload = payload;
    g->m.self_contained = true;
    pch_buf_init(&g->m.enc, ctx); pch_buf_init(&g->m.txt, ctx); pch_buf_init(&g->m.rm, ctx); pch_buf_init(&g->m.path, ctx);
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) pch_sl__builder_init(&g->m.b[t], ctx, (pch_storyline_table)t);
    if (pch_json_parser_new(&g->m.jp, ctx, NULL, err) < 0) { pch_storyline_rowgen_free(g); return PCH_ENOMEM; }
    *out = g;
    return PCH_OK;
}

void pch_storyline_rowgen_free(pch_storyline_rowgen *g)
{
    if (!g) return;
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) pch_sl__builder_dispose(&g->m.b[t]);
    pch_json_parser_free(g->m.jp);
    pch_buf_dispose(&g->m.enc); pch_buf_dispose(&g->m.txt); pch_buf_dispose(&g->m.rm); pch_buf_dispose(&g->m.path);
    pch_free(g->m.ctx, g);
}

int pch_storyline_rowgen_add(pch_storyline_rowgen *g, const pch_atif_doc *doc, pch_error *err)
{
    int rc = PCH_OK;
    g->m.err = err;
    for (size_t i = 0; i < pch_atif_doc_count(doc) && rc == PCH_OK; i++) rc = put_run(&g->m, doc, i);
    return rc;
}

int pch_storyline_rowgen_batch(pch_storyline_rowgen *g, pch_storyline_table t, const pch_lance_batch **out,
                               pch_error *err)
{
    int rc;
    *out = NULL;
    if ((unsigned)t >= PCH_STORYLINE_OBJECTS) return pch_error_set(err, PCH_EINVAL, "storyline: the generator has no table %d", (int)t);
    rc = pch_sl__batch(&g->m.b[t], &g->batch, g->cols);
    if (rc < 0) return pch_error_set(err, rc, "storyline: table %s: row builder failed", pch_storyline_table_name(t));
    *out = &g->batch;
    return PCH_OK;
}

void pch_storyline_rowgen_reset(pch_storyline_rowgen *g)
{
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) pch_sl__builder_reset(&g->m.b[t]);
}

int pch_storyline_table_schema(pch_ctx *ctx, pch_storyline_table t, pch_lance_schema **out, pch_error *err)
{
    if ((unsigned)t >= PCH_STORYLINE_N_TABLES) return pch_error_set(err, PCH_EINVAL, "storyline: no table %d", (int)t);
    return pch_sl__schema(out, ctx, t, err);
}
