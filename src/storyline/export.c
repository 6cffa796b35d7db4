/* Storyline readers: rebuild ATIF documents from runs / steps / tool_calls (+ objects)
** (docs/storyline.md §4; RFC-0006 §5.3 "reader restores recursive subagent_trajectories",
** §5.5 result placement, §13.6 late hydration). The three tables hold a document's rows
** contiguously and in the same trajectory order (preorder per document, documents in
** import order), so a document is rebuilt by a merge of three forward scans with memory
** bounded by one document. Typed columns and JSON columns give the members back; a member
** kept in raw_members wins over a typed column of the same key (import puts it there when
** the typed column could not reproduce it). The output is the same JSON value as the
** input document (key order and whitespace aside). */
#include <stdio.h>
#include <sys/stat.h>

#include "storyline/storyline.h"
#include "atif/atif.h"
#include "json/json.h"

typedef struct srun {
    char *run_id, *key, *parent, *doc_path;
    int64_t preorder, local_ordinal;
    bool has_steps, has_sub;
    pch_buf text;            /* "{...members...,\"steps\":[...]" without the closing brace */
} srun;

typedef struct rd {
    pch_ctx *ctx;
    pch_storyline_root *r;
    pch_sl_cursor cr, cs, cc;
    int vs, vc;              /* steps / calls cursor holds a current row (1), end (0) */
    pch_json_parser *jp;     /* raw_members */
    pch_buf tmp, ver;
    const char *out_dir;     /* export: where assets are restored (NULL: not restored) */
    const char *want_run;    /* point read: the wanted trajectory's run_id (NULL: any) */
    pch_error *err;
} rd;

static int oom(rd *x) { return pch_error_set(x->err, PCH_ENOMEM, "storyline: out of memory"); }

static char *dup_n(pch_ctx *ctx, const char *p, size_t n)
{
    char *s = pch_malloc(ctx, n + 1);
    if (s) { if (n) memcpy(s, p, n); s[n] = 0; }
    return s;
}

/* Is the string in column col of the current row exactly key? */
static bool col_is(const pch_sl_cursor *c, int col, const char *key)
{
    const char *p;
    size_t n;
    return pch_sl__get_str(c, col, &p, &n) && n == strlen(key) && memcmp(p, key, n) == 0;
}

static bool row_is(const pch_sl_cursor *c, const char *run_id, const char *key)
{
    const char *p, *q;
    size_t n, m;
    if (!pch_sl__get_str(c, SL_TRAJECTORY_KEY, &p, &n) || !pch_sl__get_str(c, SL_RUN_ID, &q, &m)) return false;
    return n == strlen(key) && memcmp(p, key, n) == 0 && m == strlen(run_id) && memcmp(q, run_id, m) == 0;
}

/* ---- member writers ---- */

typedef struct obj { pch_buf *b; bool first; const pch_json_value *raw; const char *raw_src; } obj;

static bool raw_has(const obj *o, const char *k)
{
    return o->raw && pch_json_get(o->raw, k, strlen(k)) != NULL;
}
static int key(obj *o, const char *k)
{
    if (!o->first) PCH_TRY(pch_buf_putc(o->b, ','));
    o->first = false;
    PCH_TRY(pch_json__write_string(o->b, k, strlen(k)));
    return pch_buf_putc(o->b, ':');
}
static int m_str(obj *o, const char *k, const pch_sl_cursor *c, int col)
{
    const char *p;
    size_t n;
    if (raw_has(o, k) || !pch_sl__get_str(c, col, &p, &n)) return PCH_OK;
    PCH_TRY(key(o, k));
    return pch_json__write_string(o->b, p, n);
}
static int m_i64(obj *o, const char *k, const pch_sl_cursor *c, int col)
{
    int64_t v;
    if (raw_has(o, k) || !pch_sl__get_i64(c, col, &v)) return PCH_OK;
    PCH_TRY(key(o, k));
    return pch_buf_printf(o->b, "%lld", (long long)v);
}
static int m_bool(obj *o, const char *k, const pch_sl_cursor *c, int col)
{
    bool v;
    if (raw_has(o, k) || !pch_sl__get_bool(c, col, &v)) return PCH_OK;
    PCH_TRY(key(o, k));
    return pch_buf_append_str(o->b, v ? "true" : "false");
}
/* JSON column, hydrated from objects when its *_object column is set (objcol < 0: none). */
static int m_json(rd *x, obj *o, const char *k, const pch_sl_cursor *c, int col, int objcol)
{
    const char *id;
    size_t idn;
    bool present;
    if (raw_has(o, k)) return PCH_OK;
    if (objcol >= 0 && pch_sl__get_str(c, objcol, &id, &idn)) {
        const char *p;
        size_t n;
        PCH_TRY(pch_sl__object_view(x->r, id, idn, &p, &n, x->err));
        PCH_TRY(key(o, k));
        return pch_buf_append(o->b, p, n);
    }
    if (!pch_sl__get_str(c, col, &id, &idn)) return PCH_OK;
    PCH_TRY(key(o, k));
    return pch_sl__get_json(c, col, o->b, &present, x->err);
}
/* Members of a compact JSON object text ("{...}"), appended in order. */
static int m_inner(obj *o, const char *p, size_t n)
{
    if (n < 2 || p[0] != '{' || p[n - 1] != '}') return PCH_ECORRUPT;
    if (n == 2) return PCH_OK;
    if (!o->first) PCH_TRY(pch_buf_putc(o->b, ','));
    o->first = false;
    return pch_buf_append(o->b, p + 1, n - 2);
}
/* Load raw_members of the current row into o->raw (parsed with x->jp into x->tmp). */
static int raw_load(rd *x, obj *o, const pch_sl_cursor *c, int col)
{
    bool present;
    o->raw = NULL;
    pch_buf_clear(&x->tmp);
    PCH_TRY(pch_sl__get_json(c, col, &x->tmp, &present, x->err));
    if (!present) return PCH_OK;
    PCH_TRY(pch_json_parser_parse(x->jp, (const char *)x->tmp.data, x->tmp.len, &o->raw, x->err));
    o->raw_src = (const char *)x->tmp.data;
    return PCH_OK;
}
static int raw_emit(obj *o)
{
    if (!o->raw) return PCH_OK;
    for (uint32_t i = 0; i < o->raw->n; i++) {
        const pch_json_member *mm = &o->raw->u.members[i];
        if (!o->first) PCH_TRY(pch_buf_putc(o->b, ','));
        o->first = false;
        PCH_TRY(pch_json__write_string(o->b, mm->key, mm->key_len));
        PCH_TRY(pch_buf_putc(o->b, ':'));
        PCH_TRY(pch_json__write_value(o->b, &mm->value, o->raw_src));
    }
    return PCH_OK;
}

/* ---- one trajectory ---- */

typedef struct scall {
    int64_t step_ordinal, call_ordinal;
    pch_buf text;            /* the ToolCall object */
    pch_buf results;         /* JSON array of correlated results, or empty */
} scall;

/* Split a compact JSON array text into its element texts (appends [start,len) pairs). */
static int split_array(rd *x, const char *p, size_t n, pch_buf *out_elems)
{
    const pch_json_value *v;
    pch_buf_clear(out_elems);
    if (n == 0) return PCH_OK;
    PCH_TRY(pch_json_parser_parse(x->jp, p, n, &v, x->err));
    if (v->kind != PCH_JSON_ARRAY) return pch_error_set(x->err, PCH_ECORRUPT, "storyline: results are not an array");
    for (uint32_t i = 0; i < v->n; i++) {
        uint64_t se[2] = { v->u.items[i].span_off, v->u.items[i].span_len };
        PCH_TRY(pch_buf_append(out_elems, se, sizeof se));
    }
    return PCH_OK;
}

static int restore_assets(rd *x, const char *doc_path, const pch_sl_cursor *c)
{
    const pch_json_value *v;
    pch_buf t, path;
    bool present;
    int rc = PCH_OK;
    if (!x->out_dir) return PCH_OK;
    pch_buf_init(&t, x->ctx);
    pch_buf_init(&path, x->ctx);
    rc = pch_sl__get_json(c, S_ASSETS, &t, &present, x->err);
    if (rc == PCH_OK && present) rc = pch_json_parser_parse(x->jp, (const char *)t.data, t.len, &v, x->err);
    for (uint32_t i = 0; rc == PCH_OK && present && v->kind == PCH_JSON_ARRAY && i < v->n; i++) {
        const pch_json_value *p = pch_json_get(&v->u.items[i], "path", 4);
        const pch_json_value *id = pch_json_get(&v->u.items[i], "object_id", 9);
        const char *data, *slash;
        size_t dn;
        if (!p || !id || p->kind != PCH_JSON_STRING || id->kind != PCH_JSON_STRING) continue;
        if (pch_atif_path_check(p->u.str.ptr, p->u.str.len, NULL) != PCH_OK) continue;
        rc = pch_sl__object_view(x->r, id->u.str.ptr, id->u.str.len, &data, &dn, x->err);
        if (rc < 0) break;
        pch_buf_clear(&path);
        pch_buf_printf(&path, "%s/", x->out_dir);
        slash = strrchr(doc_path, '/');
        if (slash) pch_buf_append(&path, doc_path, (size_t)(slash - doc_path + 1));
        pch_buf_append(&path, p->u.str.ptr, p->u.str.len);
        if (path.oom) { rc = oom(x); break; }
        char *last = strrchr((char *)path.data, '/');
        *last = 0;
        rc = pch_mkdirs((const char *)path.data, x->err);
        *last = '/';
        if (rc == PCH_OK) rc = pch_file_publish((const char *)path.data, data, dn, x->err);
    }
    pch_buf_dispose(&t);
    pch_buf_dispose(&path);
    return rc;
}

static int build_step(rd *x, srun *run, pch_buf *b, scall *calls, size_t n_calls, size_t *ci)
{
    const pch_sl_cursor *c = &x->cs;
    obj o = { b, true, NULL, NULL };
    int64_t ord = 0;
    bool has_tc = false, has_res = false, present;
    pch_buf extra, unc, ords, elems;
    int rc;
    pch_sl__get_i64(c, S_STEP_ORDINAL, &ord);
    pch_buf_init(&extra, x->ctx);
    pch_buf_init(&unc, x->ctx);
    pch_buf_init(&ords, x->ctx);
    pch_buf_init(&elems, x->ctx);
    PCH_TRY(pch_buf_putc(b, '{'));
    rc = raw_load(x, &o, c, S_RAW_MEMBERS);
    /* raw_load parsed into x->tmp with x->jp: copy raw out before the parser is reused */
    pch_buf rawcopy;
    pch_buf_init(&rawcopy, x->ctx);
    if (rc == PCH_OK && o.raw) {
        pch_buf_append(&rawcopy, x->tmp.data, x->tmp.len);
        if (rawcopy.oom) rc = oom(x);
        else rc = pch_json_parser_parse(x->jp, (const char *)rawcopy.data, rawcopy.len, &o.raw, x->err);
        o.raw_src = (const char *)rawcopy.data;
    }
    /* the parser now holds raw: later parses (results) need another parser */
    pch_json_parser *jp2 = NULL;
    if (rc == PCH_OK) rc = pch_json_parser_new(&jp2, x->ctx, NULL, x->err);
    pch_json_parser *saved = x->jp;
    if (rc == PCH_OK) {
        x->jp = jp2;
        rc = m_i64(&o, "step_id", c, S_STEP_ID);
        if (rc == PCH_OK) rc = m_str(&o, "timestamp", c, S_TIMESTAMP);
        if (rc == PCH_OK) rc = m_str(&o, "source", c, S_SOURCE);
        if (rc == PCH_OK) rc = m_str(&o, "model_name", c, S_MODEL_NAME);
        if (rc == PCH_OK) rc = m_json(x, &o, "reasoning_effort", c, S_REASONING_EFFORT, -1);
        if (rc == PCH_OK) rc = m_json(x, &o, "message", c, S_MESSAGE, S_MESSAGE_OBJECT);
        if (rc == PCH_OK && !raw_has(&o, "reasoning_content")) {
            const char *id;
            size_t idn;
            if (pch_sl__get_str(c, S_REASONING_CONTENT_OBJECT, &id, &idn)) {
                const char *p;
                size_t n;
                rc = pch_sl__object_view(x->r, id, idn, &p, &n, x->err);
                if (rc == PCH_OK) rc = key(&o, "reasoning_content");
                if (rc == PCH_OK) rc = pch_json__write_string(b, p, n);
            } else {
                rc = m_str(&o, "reasoning_content", c, S_REASONING_CONTENT);
            }
        }
    }
    /* tool_calls of this step come next in the calls list */
    pch_sl__get_bool(c, S_HAS_TOOL_CALLS, &has_tc);
    size_t first_call = *ci;
    while (*ci < n_calls && calls[*ci].step_ordinal == ord) (*ci)++;
    if (rc == PCH_OK && has_tc) {
        rc = key(&o, "tool_calls");
        if (rc == PCH_OK) rc = pch_buf_putc(b, '[');
        for (size_t i = first_call; i < *ci && rc == PCH_OK; i++) {
            if (i > first_call) rc = pch_buf_putc(b, ',');
            if (rc == PCH_OK) rc = pch_buf_append(b, calls[i].text.data, calls[i].text.len);
        }
        if (rc == PCH_OK) rc = pch_buf_putc(b, ']');
    }
    /* observation: results in their original order (result_call_ordinals) */
    if (rc == PCH_OK) rc = pch_sl__get_json(c, S_OBSERVATION_EXTRA, &extra, &present, x->err);
    if (rc == PCH_OK && present && !raw_has(&o, "observation")) {
        obj ob = { b, true, NULL, NULL };
        rc = key(&o, "observation");
        if (rc == PCH_OK) rc = pch_buf_putc(b, '{');
        pch_sl__get_bool(c, S_HAS_OBSERVATION_RESULTS, &has_res);
        if (rc == PCH_OK && has_res) {
            const char *id;
            size_t idn;
            bool op;
            if (pch_sl__get_str(c, S_OBSERVATION_RESULTS_OBJECT, &id, &idn)) {
                const char *p;
                size_t n;
                rc = pch_sl__object_view(x->r, id, idn, &p, &n, x->err);
                if (rc == PCH_OK) rc = pch_buf_append(&unc, p, n);
            } else {
                rc = pch_sl__get_json(c, S_OBSERVATION_RESULTS, &unc, &op, x->err);
            }
            if (rc == PCH_OK) rc = pch_sl__get_json(c, S_RESULT_CALL_ORDINALS, &ords, &op, x->err);
            const pch_json_value *ov = NULL;
            pch_json_parser *jp3 = NULL;
            if (rc == PCH_OK) rc = pch_json_parser_new(&jp3, x->ctx, NULL, x->err);
            if (rc == PCH_OK) rc = pch_json_parser_parse(jp3, ords.len ? (const char *)ords.data : "[]", ords.len ? ords.len : 2, &ov, x->err);
            if (rc == PCH_OK) rc = split_array(x, (const char *)unc.data, unc.len, &elems);
            if (rc == PCH_OK) rc = key(&ob, "results");
            if (rc == PCH_OK) rc = pch_buf_putc(b, '[');
            size_t next_unc = 0;
            size_t *next_call = NULL;
            if (rc == PCH_OK && *ci > first_call) {
                next_call = pch_calloc(x->ctx, *ci - first_call, sizeof *next_call);
                if (!next_call) rc = oom(x);
            }
            pch_buf celems;
            pch_buf_init(&celems, x->ctx);
            for (uint32_t i = 0; rc == PCH_OK && ov && ov->kind == PCH_JSON_ARRAY && i < ov->n; i++) {
                const pch_json_value *e = &ov->u.items[i];
                if (i) rc = pch_buf_putc(b, ',');
                if (rc < 0) break;
                if (e->kind == PCH_JSON_NULL) {
                    uint64_t se[2];
                    if ((next_unc + 1) * sizeof se > elems.len) { rc = pch_error_set(x->err, PCH_ECORRUPT, "storyline: step results missing"); break; }
                    memcpy(se, elems.data + next_unc++ * sizeof se, sizeof se);
                    rc = pch_buf_append(b, unc.data + se[0], (size_t)se[1]);
                } else {
                    int64_t k = e->kind == PCH_JSON_NUMBER ? e->u.num.i : -1;
                    size_t idx = first_call;
                    while (idx < *ci && calls[idx].call_ordinal != k) idx++;
                    if (idx >= *ci) { rc = pch_error_set(x->err, PCH_ECORRUPT, "storyline: result of unknown call %lld", (long long)k); break; }
                    rc = split_array(x, (const char *)calls[idx].results.data, calls[idx].results.len, &celems);
                    uint64_t se[2];
                    size_t j = next_call[idx - first_call]++;
                    if (rc == PCH_OK && (j + 1) * sizeof se > celems.len) rc = pch_error_set(x->err, PCH_ECORRUPT, "storyline: call results missing");
                    if (rc == PCH_OK) {
                        memcpy(se, celems.data + j * sizeof se, sizeof se);
                        rc = pch_buf_append(b, calls[idx].results.data + se[0], (size_t)se[1]);
                    }
                }
            }
            pch_buf_dispose(&celems);
            pch_free(x->ctx, next_call);
            pch_json_parser_free(jp3);
            if (rc == PCH_OK) rc = pch_buf_putc(b, ']');
        }
        if (rc == PCH_OK) rc = m_inner(&ob, (const char *)extra.data, extra.len);
        if (rc == PCH_OK) rc = pch_buf_putc(b, '}');
    }
    /* metrics: typed counts + the rest */
    if (rc == PCH_OK) { pch_buf_clear(&extra); rc = pch_sl__get_json(c, S_METRICS_EXTRA, &extra, &present, x->err); }
    if (rc == PCH_OK && present && !raw_has(&o, "metrics")) {
        obj mo = { b, true, NULL, NULL };
        double cost;
        rc = key(&o, "metrics");
        if (rc == PCH_OK) rc = pch_buf_putc(b, '{');
        if (rc == PCH_OK) rc = m_i64(&mo, "prompt_tokens", c, S_PROMPT_TOKENS);
        if (rc == PCH_OK) rc = m_i64(&mo, "completion_tokens", c, S_COMPLETION_TOKENS);
        if (rc == PCH_OK) rc = m_i64(&mo, "cached_tokens", c, S_CACHED_TOKENS);
        if (rc == PCH_OK && pch_sl__get_f64(c, S_COST_USD, &cost)) {
            char t[32];
            size_t n = pch_json__fmt_double(t, cost);
            rc = key(&mo, "cost_usd");
            if (rc == PCH_OK) rc = pch_buf_append(b, t, n);
        }
        if (rc == PCH_OK) rc = m_inner(&mo, (const char *)extra.data, extra.len);
        if (rc == PCH_OK) rc = pch_buf_putc(b, '}');
    }
    if (rc == PCH_OK) rc = m_i64(&o, "llm_call_count", c, S_LLM_CALL_COUNT);
    if (rc == PCH_OK) rc = m_bool(&o, "is_copied_context", c, S_IS_COPIED_CONTEXT);
    if (rc == PCH_OK) rc = m_json(x, &o, "extra", c, S_EXTRA, -1);
    if (rc == PCH_OK) rc = raw_emit(&o);
    if (rc == PCH_OK) rc = pch_buf_putc(b, '}');
    if (rc == PCH_OK) rc = restore_assets(x, run->doc_path, c);
    x->jp = saved;
    pch_json_parser_free(jp2);
    pch_buf_dispose(&rawcopy);
    pch_buf_dispose(&extra);
    pch_buf_dispose(&unc);
    pch_buf_dispose(&ords);
    pch_buf_dispose(&elems);
    if (rc == PCH_ENOMEM) return oom(x);
    return rc;
}

/* Read the run row at the runs cursor into *run (keys and the members before "steps"). */
static int read_run(rd *x, srun *run)
{
    const pch_sl_cursor *c = &x->cr;
    const char *p;
    size_t n;
    memset(run, 0, sizeof *run);
    pch_buf_init(&run->text, x->ctx);
    pch_sl__get_str(c, SL_RUN_ID, &p, &n); run->run_id = dup_n(x->ctx, p, n);
    pch_sl__get_str(c, SL_TRAJECTORY_KEY, &p, &n); run->key = dup_n(x->ctx, p, n);
    pch_sl__get_str(c, R_DOC_PATH, &p, &n); run->doc_path = dup_n(x->ctx, p, n);
    if (pch_sl__get_str(c, R_PARENT_TRAJECTORY_KEY, &p, &n)) run->parent = dup_n(x->ctx, p, n);
    pch_sl__get_i64(c, R_PREORDER, &run->preorder);
    if (!pch_sl__get_i64(c, R_PARENT_LOCAL_ORDINAL, &run->local_ordinal)) run->local_ordinal = -1;
    pch_sl__get_bool(c, R_HAS_STEPS, &run->has_steps);
    pch_sl__get_bool(c, R_HAS_SUBAGENT_TRAJECTORIES, &run->has_sub);
    if (!run->run_id || !run->key || !run->doc_path) return oom(x);
    return PCH_OK;
}

static void run_dispose(rd *x, srun *run)
{
    pch_free(x->ctx, run->run_id); pch_free(x->ctx, run->key);
    pch_free(x->ctx, run->doc_path); pch_free(x->ctx, run->parent);
    pch_buf_dispose(&run->text);
}

/* Members of the run row (cursor still on it) + steps from the steps/calls cursors. */
static int build_run(rd *x, srun *run)
{
    const pch_sl_cursor *c = &x->cr;
    pch_buf *b = &run->text;
    obj o = { b, true, NULL, NULL };
    pch_buf rawcopy;
    scall *calls = NULL;
    size_t n_calls = 0, cap = 0, ci = 0;
    int rc;
    pch_buf_init(&rawcopy, x->ctx);
    rc = pch_buf_putc(b, '{');
    if (rc == PCH_OK) rc = raw_load(x, &o, c, R_RAW_MEMBERS);
    if (rc == PCH_OK && o.raw) {
        pch_buf_append(&rawcopy, x->tmp.data, x->tmp.len);
        if (rawcopy.oom) rc = oom(x);
    }
    /* tool calls of this trajectory (they precede nothing else: read them all first) */
    while (rc == PCH_OK && x->vc == 1 && row_is(&x->cc, run->run_id, run->key)) {
        if (n_calls == cap) {
            size_t nc = cap ? cap * 2 : 16;
            scall *ncalls = pch_realloc(x->ctx, calls, nc * sizeof *ncalls);
            if (!ncalls) { rc = oom(x); break; }
            calls = ncalls;
            cap = nc;
        }
        scall *sc = &calls[n_calls++];
        obj co = { &sc->text, true, NULL, NULL };
        pch_buf craw;
        pch_buf_init(&sc->text, x->ctx);
        pch_buf_init(&sc->results, x->ctx);
        pch_buf_init(&craw, x->ctx);
        pch_sl__get_i64(&x->cc, C_STEP_ORDINAL, &sc->step_ordinal);
        pch_sl__get_i64(&x->cc, C_CALL_ORDINAL, &sc->call_ordinal);
        rc = raw_load(x, &co, &x->cc, C_RAW_MEMBERS);
        if (rc == PCH_OK && co.raw) {
            pch_buf_append(&craw, x->tmp.data, x->tmp.len);
            rc = craw.oom ? oom(x) : pch_json_parser_parse(x->jp, (const char *)craw.data, craw.len, &co.raw, x->err);
            co.raw_src = (const char *)craw.data;
        }
        if (rc == PCH_OK) rc = pch_buf_putc(&sc->text, '{');
        if (rc == PCH_OK) rc = m_str(&co, "tool_call_id", &x->cc, C_TOOL_CALL_ID);
        if (rc == PCH_OK) rc = m_str(&co, "function_name", &x->cc, C_FUNCTION_NAME);
        if (rc == PCH_OK) rc = m_json(x, &co, "arguments", &x->cc, C_ARGUMENTS, C_ARGUMENTS_OBJECT);
        if (rc == PCH_OK) rc = m_json(x, &co, "extra", &x->cc, C_EXTRA, -1);
        if (rc == PCH_OK) rc = raw_emit(&co);
        if (rc == PCH_OK) rc = pch_buf_putc(&sc->text, '}');
        if (rc == PCH_OK) {
            const char *id;
            size_t idn;
            bool pr;
            if (pch_sl__get_str(&x->cc, C_RESULTS_OBJECT, &id, &idn)) {
                const char *p;
                size_t n;
                rc = pch_sl__object_view(x->r, id, idn, &p, &n, x->err);
                if (rc == PCH_OK) rc = pch_buf_append(&sc->results, p, n);
            } else {
                rc = pch_sl__get_json(&x->cc, C_RESULTS, &sc->results, &pr, x->err);
            }
        }
        pch_buf_dispose(&craw);
        if (rc == PCH_OK) { x->vc = pch_sl__cursor_next(&x->cc, x->err); if (x->vc < 0) rc = x->vc; }
    }
    if (rc == PCH_OK && o.raw) {
        rc = pch_json_parser_parse(x->jp, (const char *)rawcopy.data, rawcopy.len, &o.raw, x->err);
        o.raw_src = (const char *)rawcopy.data;
    }
    pch_json_parser *jp2 = NULL, *saved = x->jp;
    if (rc == PCH_OK) rc = pch_json_parser_new(&jp2, x->ctx, NULL, x->err);
    if (rc == PCH_OK) {
        x->jp = jp2;
        rc = m_str(&o, "schema_version", c, R_SCHEMA_VERSION);
        if (rc == PCH_OK) rc = m_str(&o, "session_id", c, SL_SESSION_ID);
        if (rc == PCH_OK) rc = m_str(&o, "trajectory_id", c, R_TRAJECTORY_ID);
        if (rc == PCH_OK) rc = m_json(x, &o, "agent", c, R_AGENT, -1);
        if (rc == PCH_OK) rc = m_json(x, &o, "notes", c, R_NOTES, -1);
        if (rc == PCH_OK) rc = m_json(x, &o, "final_metrics", c, R_FINAL_METRICS, -1);
        if (rc == PCH_OK) rc = m_json(x, &o, "continued_trajectory_ref", c, R_CONTINUED_TRAJECTORY_REF, -1);
        if (rc == PCH_OK) rc = m_json(x, &o, "extra", c, R_EXTRA, -1);
        if (rc == PCH_OK) rc = raw_emit(&o);
        x->jp = saved;
    }
    pch_json_parser_free(jp2);
    if (rc == PCH_OK && run->has_steps) {
        bool first = true;
        rc = key(&o, "steps");
        if (rc == PCH_OK) rc = pch_buf_putc(b, '[');
        while (rc == PCH_OK && x->vs == 1 && row_is(&x->cs, run->run_id, run->key)) {
            if (!first) rc = pch_buf_putc(b, ',');
            first = false;
            if (rc == PCH_OK) rc = build_step(x, run, b, calls, n_calls, &ci);
            if (rc == PCH_OK) { x->vs = pch_sl__cursor_next(&x->cs, x->err); if (x->vs < 0) rc = x->vs; }
        }
        if (rc == PCH_OK) rc = pch_buf_putc(b, ']');
    }
    if (rc == PCH_OK && ci != n_calls)
        rc = pch_error_set(x->err, PCH_ECORRUPT, "storyline: trajectory %s: tool calls without their step", run->key);
    for (size_t i = 0; i < n_calls; i++) { pch_buf_dispose(&calls[i].text); pch_buf_dispose(&calls[i].results); }
    pch_free(x->ctx, calls);
    pch_buf_dispose(&rawcopy);
    if (rc == PCH_ENOMEM) return oom(x);
    return rc;
}

/* Write runs[i] and its embedded children (by parent key, in local-ordinal order). */
static int emit_traj(rd *x, srun *runs, size_t n, size_t i, pch_buf *out, unsigned depth)
{
    if (depth > pch_ctx_limits(x->ctx)->max_json_depth) return pch_error_set(x->err, PCH_ELIMIT, "storyline: subagent nesting too deep");
    PCH_TRY(pch_buf_append(out, runs[i].text.data, runs[i].text.len));
    if (runs[i].has_sub) {
        bool first = true;
        if (runs[i].text.len > 1) PCH_TRY(pch_buf_putc(out, ','));
        PCH_TRY(pch_buf_append_str(out, "\"subagent_trajectories\":["));
        for (int64_t lo = 0;; lo++) {
            size_t k = n;
            for (size_t j = i + 1; j < n; j++)
                if (runs[j].parent && strcmp(runs[j].parent, runs[i].key) == 0 && runs[j].local_ordinal == lo) { k = j; break; }
            if (k == n) break;
            if (!first) PCH_TRY(pch_buf_putc(out, ','));
            first = false;
            PCH_TRY(emit_traj(x, runs, n, k, out, depth + 1));
        }
        PCH_TRY(pch_buf_putc(out, ']'));
    }
    return pch_buf_putc(out, '}');
}

/* Point read: the runs rows of `key` and its embedded subtree (the rows next_doc takes:
** the key's row, then following rows whose parent is already taken), found by scanning the
** key columns of runs only. first, end: the row range; keys_out: their trajectory keys. */
static int find_subtree(rd *x, const char *key, uint64_t *first, uint64_t *end,
                        char ***keys_out, size_t *n_keys_out)
{
    static const int want[] = { SL_TRAJECTORY_KEY, R_PREORDER, R_PARENT_TRAJECTORY_KEY, SL_RUN_ID };
    pch_sl_cursor c;
    char **keys = NULL;
    size_t n = 0, cap = 0;
    uint64_t at = 0;
    int rc;
    *first = *end = 0;
    rc = pch_sl__cursor_open(&c, x->r, PCH_STORYLINE_RUNS, want, 4, x->err);
    while (rc == PCH_OK && (rc = pch_sl__cursor_next(&c, x->err)) == 1) {
        const char *p;
        size_t pn;
        bool take = false;
        rc = PCH_OK;
        if (n == 0) {
            take = col_is(&c, SL_TRAJECTORY_KEY, key) && (!x->want_run || col_is(&c, SL_RUN_ID, x->want_run));
            if (take) *first = at;
        } else {
            int64_t pre = 0;
            pch_sl__get_i64(&c, R_PREORDER, &pre);
            if (pre > 0 && pch_sl__get_str(&c, R_PARENT_TRAJECTORY_KEY, &p, &pn))
                for (size_t i = 0; i < n && !take; i++) take = strlen(keys[i]) == pn && memcmp(keys[i], p, pn) == 0;
            if (!take) break;
        }
        if (take) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                char **nk = pch_realloc(x->ctx, keys, nc * sizeof *nk);
                if (!nk) { rc = oom(x); break; }
                keys = nk;
                cap = nc;
            }
            if (!pch_sl__get_str(&c, SL_TRAJECTORY_KEY, &p, &pn) || !(keys[n] = dup_n(x->ctx, p, pn))) { rc = oom(x); break; }
            n++;
            *end = at + 1;
        }
        at++;
    }
    pch_sl__cursor_close(&c);
    if (rc < 0) {
        for (size_t i = 0; i < n; i++) pch_free(x->ctx, keys[i]);
        pch_free(x->ctx, keys);
        return rc;
    }
    *keys_out = keys;
    *n_keys_out = n;
    return PCH_OK;
}

/* Open the three cursors. With key != NULL only the rows of that trajectory's subtree are
** read (identity columns are scanned first to find them). */
static int open_cursors(rd *x, const char *key)
{
    char **keys = NULL;
    size_t n_keys = 0, n_rows = 0;
    uint64_t first = 0, end = 0, *rows = NULL;
    int rc;
    if (!key) {
        rc = pch_sl__cursor_open(&x->cr, x->r, PCH_STORYLINE_RUNS, NULL, 0, x->err);
        if (rc == PCH_OK) rc = pch_sl__cursor_open(&x->cs, x->r, PCH_STORYLINE_STEPS, NULL, 0, x->err);
        if (rc == PCH_OK) rc = pch_sl__cursor_open(&x->cc, x->r, PCH_STORYLINE_TOOL_CALLS, NULL, 0, x->err);
        return rc;
    }
    rc = find_subtree(x, key, &first, &end, &keys, &n_keys);
    if (rc == PCH_OK) {
        size_t nr = (size_t)(end - first);      /* <= rows of runs, which we scanned */
        rows = pch_calloc(x->ctx, nr ? nr : 1, sizeof *rows);
        if (!rows) rc = oom(x);
        for (size_t i = 0; rc == PCH_OK && i < nr; i++) rows[i] = first + i;
        if (rc == PCH_OK) rc = pch_sl__cursor_open_rows(&x->cr, x->r, PCH_STORYLINE_RUNS, NULL, 0, rows, nr, x->err);
        pch_free(x->ctx, rows);
        rows = NULL;
    }
    if (rc == PCH_OK) rc = pch_sl__find_rows(x->r, PCH_STORYLINE_STEPS, SL_TRAJECTORY_KEY, (const char *const *)keys, n_keys, &rows, &n_rows, x->err);
    if (rc == PCH_OK) rc = pch_sl__cursor_open_rows(&x->cs, x->r, PCH_STORYLINE_STEPS, NULL, 0, rows, n_rows, x->err);
    pch_free(x->ctx, rows);
    rows = NULL;
    if (rc == PCH_OK) rc = pch_sl__find_rows(x->r, PCH_STORYLINE_TOOL_CALLS, SL_TRAJECTORY_KEY, (const char *const *)keys, n_keys, &rows, &n_rows, x->err);
    if (rc == PCH_OK) rc = pch_sl__cursor_open_rows(&x->cc, x->r, PCH_STORYLINE_TOOL_CALLS, NULL, 0, rows, n_rows, x->err);
    pch_free(x->ctx, rows);
    for (size_t i = 0; i < n_keys; i++) pch_free(x->ctx, keys[i]);
    pch_free(x->ctx, keys);
    return rc;
}

static int rd_open(rd *x, pch_ctx *ctx, const char *root, const char *run_id, const char *key, pch_error *err)
{
    int rc;
    memset(x, 0, sizeof *x);
    x->ctx = ctx;
    x->err = err;
    x->want_run = run_id;
    pch_buf_init(&x->tmp, ctx);
    pch_buf_init(&x->ver, ctx);
    rc = pch_storyline_open(&x->r, ctx, root, err);
    if (rc == PCH_OK) rc = pch_json_parser_new(&x->jp, ctx, NULL, err);
    if (rc == PCH_OK) rc = open_cursors(x, key);
    if (rc == PCH_OK) { x->vs = pch_sl__cursor_next(&x->cs, err); if (x->vs < 0) rc = x->vs; }
    if (rc == PCH_OK) { x->vc = pch_sl__cursor_next(&x->cc, err); if (x->vc < 0) rc = x->vc; }
    return rc;
}

static void rd_close(rd *x)
{
    pch_sl__cursor_close(&x->cr);
    pch_sl__cursor_close(&x->cs);
    pch_sl__cursor_close(&x->cc);
    pch_json_parser_free(x->jp);
    pch_storyline_close(x->r);
    pch_buf_dispose(&x->tmp);
    pch_buf_dispose(&x->ver);
}

/* Skip step/call rows until one belongs to a trajectory in runs[0..n). */
static bool in_set(const pch_sl_cursor *c, srun *runs, size_t n)
{
    for (size_t i = 0; i < n; i++) if (row_is(c, runs[i].run_id, runs[i].key)) return true;
    return false;
}

/* Rebuild the document made of runs[0..n) (preorder; runs[0] is its top) into out. */
static int build_doc(rd *x, srun *runs, size_t n, bool skip, pch_buf *out)
{
    if (skip) {
        while (x->vs == 1 && !in_set(&x->cs, runs, n)) { x->vs = pch_sl__cursor_next(&x->cs, x->err); if (x->vs < 0) return x->vs; }
        while (x->vc == 1 && !in_set(&x->cc, runs, n)) { x->vc = pch_sl__cursor_next(&x->cc, x->err); if (x->vc < 0) return x->vc; }
    }
    (void)runs;
    return emit_traj(x, runs, n, 0, out, 0);
}

/* Collect the runs of the next document (or, when key != NULL, the subtree of key). Each
** run's own members and steps are built as it is read (the cursors advance together). */
static int next_doc(rd *x, const char *want_key, srun **runs_out, size_t *n_out, bool *eof)
{
    srun *runs = NULL;
    size_t n = 0, cap = 0;
    int rc = PCH_OK, vr;
    *runs_out = NULL;
    *n_out = 0;
    *eof = false;
    for (;;) {
        if (!x->cr.started) { x->cr.started = true; vr = pch_sl__cursor_next(&x->cr, x->err); }
        else vr = x->cr.done ? 0 : 1;
        if (vr < 0) { rc = vr; break; }
        if (vr == 0) { if (n == 0) *eof = true; break; }
        int64_t pre = 0;
        const char *p;
        size_t pn;
        pch_sl__get_i64(&x->cr, R_PREORDER, &pre);
        if (want_key) {
            bool take;
            if (n == 0) {
                take = col_is(&x->cr, SL_TRAJECTORY_KEY, want_key) && (!x->want_run || col_is(&x->cr, SL_RUN_ID, x->want_run));
            } else {
                take = false;
                if (pre > 0 && pch_sl__get_str(&x->cr, R_PARENT_TRAJECTORY_KEY, &p, &pn))
                    for (size_t i = 0; i < n && !take; i++) take = strlen(runs[i].key) == pn && memcmp(runs[i].key, p, pn) == 0;
                if (!take) break;
            }
            if (!take) {
                vr = pch_sl__cursor_next(&x->cr, x->err);
                if (vr < 0) { rc = vr; break; }
                if (vr == 0) { *eof = true; break; }
                x->cr.started = true;
                continue;
            }
        } else if (n > 0 && pre == 0) {
            break;                         /* the next document starts */
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            srun *nr = pch_realloc(x->ctx, runs, nc * sizeof *nr);
            if (!nr) { rc = oom(x); break; }
            runs = nr;
            cap = nc;
        }
        rc = read_run(x, &runs[n]);
        n++;
        if (rc < 0) break;
        if (want_key && n == 1) {
            /* skip rows of trajectories before the wanted one */
            while (x->vs == 1 && !row_is(&x->cs, runs[0].run_id, runs[0].key)) { x->vs = pch_sl__cursor_next(&x->cs, x->err); if (x->vs < 0) { rc = x->vs; break; } }
            while (rc == PCH_OK && x->vc == 1 && !row_is(&x->cc, runs[0].run_id, runs[0].key)) { x->vc = pch_sl__cursor_next(&x->cc, x->err); if (x->vc < 0) { rc = x->vc; break; } }
            if (rc < 0) break;
        }
        rc = build_run(x, &runs[n - 1]);
        if (rc < 0) break;
        vr = pch_sl__cursor_next(&x->cr, x->err);
        if (vr < 0) { rc = vr; break; }
    }
    if (rc < 0) {
        for (size_t i = 0; i < n; i++) run_dispose(x, &runs[i]);
        pch_free(x->ctx, runs);
        return rc;
    }
    *runs_out = runs;
    *n_out = n;
    return PCH_OK;
}

static void free_runs(rd *x, srun *runs, size_t n)
{
    for (size_t i = 0; i < n; i++) run_dispose(x, &runs[i]);
    pch_free(x->ctx, runs);
}

int pch_storyline_get(pch_ctx *ctx, const char *root, const char *trajectory_key, bool pretty,
                      char **out, size_t *len_out, pch_error *err)
{
    return pch_storyline_get_in_run(ctx, root, NULL, trajectory_key, pretty, out, len_out, err);
}

int pch_storyline_get_in_run(pch_ctx *ctx, const char *root, const char *run_id, const char *trajectory_key,
                             bool pretty, char **out, size_t *len_out, pch_error *err)
{
    rd x;
    srun *runs = NULL;
    size_t n = 0;
    bool eof;
    pch_buf b, p;
    int rc;
    *out = NULL;
    if (len_out) *len_out = 0;
    pch_buf_init(&b, ctx);
    pch_buf_init(&p, ctx);
    rc = rd_open(&x, ctx, root, run_id, trajectory_key, err);
    if (rc == PCH_OK) rc = next_doc(&x, trajectory_key, &runs, &n, &eof);
    if (rc == PCH_OK && n == 0 && run_id)
        rc = pch_error_set(err, PCH_ENOTFOUND, "storyline: no trajectory '%s' in run '%s'", trajectory_key, run_id);
    if (rc == PCH_OK && n == 0) rc = pch_error_set(err, PCH_ENOTFOUND, "storyline: no trajectory '%s'", trajectory_key);
    if (rc == PCH_OK) rc = build_doc(&x, runs, n, false, &b);
    if (rc == PCH_OK && pretty) {
        if (pch_atif__pretty(&p, (const char *)b.data, b.len) < 0 || pch_buf_putc(&p, '\n') < 0) rc = oom(&x);
        else { pch_buf_dispose(&b); pch_buf_move(&p, &b); }
    }
    if (rc == PCH_OK && pch_buf_reserve(&b, 0) < 0) rc = oom(&x);
    if (rc == PCH_OK) *out = (char *)pch_buf_detach(&b, len_out);
    free_runs(&x, runs, n);
    rd_close(&x);
    pch_buf_dispose(&b);
    pch_buf_dispose(&p);
    return rc;
}

void pch_storyline_matches_free(pch_ctx *ctx, pch_storyline_match *m, size_t n)
{
    if (!m) return;
    for (size_t i = 0; i < n; i++) {
        pch_free(ctx, m[i].run_id);
        pch_free(ctx, m[i].trajectory_key);
        pch_free(ctx, m[i].doc_path);
    }
    pch_free(ctx, m);
}

static char *col_dup(pch_ctx *ctx, const pch_sl_cursor *c, int col)
{
    const char *p = "";
    size_t n = 0;
    pch_sl__get_str(c, col, &p, &n);
    return dup_n(ctx, p, n);
}

/* The row's trajectory key is producer id `id` qualified by its document path ("id@doc",
** src/atif/parse.c). */
static bool is_producer_id(const pch_sl_cursor *c, const char *id)
{
    const char *t = "", *d = "";
    size_t tn = 0, dn = 0, n = strlen(id);
    if (!pch_sl__get_str(c, SL_TRAJECTORY_KEY, &t, &tn) || !pch_sl__get_str(c, R_DOC_PATH, &d, &dn)) return false;
    return tn == n + 1 + dn && memcmp(t, id, n) == 0 && t[n] == '@' && memcmp(t + n + 1, d, dn) == 0;
}

int pch_storyline_find(pch_ctx *ctx, const char *root, pch_storyline_key_kind as, const char *key,
                       pch_storyline_match **out, size_t *n_out, pch_error *err)
{
    static const int want[] = { SL_RUN_ID, SL_SESSION_ID, SL_TRAJECTORY_KEY, R_DOC_PATH, R_PREORDER };
    static const char *const names[] = { "trajectory", "run", "session", "trajectory with producer id" };
    pch_storyline_root *r = NULL;
    pch_storyline_match *m = NULL;
    size_t n = 0, cap = 0;
    pch_sl_cursor c;
    bool opened = false;
    int rc;
    *out = NULL;
    *n_out = 0;
    if ((unsigned)as > PCH_STORYLINE_KEY_PRODUCER_ID) return pch_error_set(err, PCH_EINVAL, "storyline: key kind %d", (int)as);
    rc = pch_storyline_open(&r, ctx, root, err);
    if (rc == PCH_OK) { rc = pch_sl__cursor_open(&c, r, PCH_STORYLINE_RUNS, want, 5, err); opened = rc == PCH_OK; }
    while (rc == PCH_OK && (rc = pch_sl__cursor_next(&c, err)) == 1) {
        int64_t pre = 0;
        bool hit;
        rc = PCH_OK;
        pch_sl__get_i64(&c, R_PREORDER, &pre);
        if (as == PCH_STORYLINE_KEY_TRAJECTORY) hit = col_is(&c, SL_TRAJECTORY_KEY, key);
        else if (as == PCH_STORYLINE_KEY_PRODUCER_ID) hit = is_producer_id(&c, key);
        else hit = pre == 0 && col_is(&c, as == PCH_STORYLINE_KEY_RUN ? SL_RUN_ID : SL_SESSION_ID, key);
        if (!hit) continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 4;
            pch_storyline_match *nm = pch_realloc(ctx, m, nc * sizeof *nm);
            if (!nm) { rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory"); break; }
            m = nm;
            cap = nc;
        }
        m[n].run_id = col_dup(ctx, &c, SL_RUN_ID);
        m[n].trajectory_key = col_dup(ctx, &c, SL_TRAJECTORY_KEY);
        m[n].doc_path = col_dup(ctx, &c, R_DOC_PATH);
        m[n].key_count = 0;
        n++;
        if (!m[n - 1].run_id || !m[n - 1].trajectory_key || !m[n - 1].doc_path)
            rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
    }
    if (opened) pch_sl__cursor_close(&c);
    opened = false;
    /* how many trajectories share each match's trajectory key: when one is not alone, only
    ** (run_id, trajectory_key) selects it (import keeps that pair unique, src/atif/dir.c) */
    for (size_t i = 0; i < n; i++) m[i].key_count = as == PCH_STORYLINE_KEY_TRAJECTORY ? n : 0;
    if (rc == PCH_OK && n && as != PCH_STORYLINE_KEY_TRAJECTORY) {
        static const int kcol[] = { SL_TRAJECTORY_KEY };
        rc = pch_sl__cursor_open(&c, r, PCH_STORYLINE_RUNS, kcol, 1, err);
        opened = rc == PCH_OK;
        while (rc == PCH_OK && (rc = pch_sl__cursor_next(&c, err)) == 1) {
            rc = PCH_OK;
            for (size_t i = 0; i < n; i++) if (col_is(&c, SL_TRAJECTORY_KEY, m[i].trajectory_key)) m[i].key_count++;
        }
    }
    if (opened) pch_sl__cursor_close(&c);
    pch_storyline_close(r);
    if (rc == PCH_OK && n == 0) rc = pch_error_set(err, PCH_ENOTFOUND, "storyline: no %s '%s'", names[as], key);
    if (rc < 0) { pch_storyline_matches_free(ctx, m, n); return rc; }
    *out = m;
    *n_out = n;
    return PCH_OK;
}

int pch_storyline_export(pch_ctx *ctx, const char *root, const char *dir, const char *trajectory_key,
                         size_t *n_docs_out, pch_error *err)
{
    rd x;
    pch_buf b, p, path;
    size_t docs = 0;
    int rc;
    if (n_docs_out) *n_docs_out = 0;
    pch_buf_init(&b, ctx);
    pch_buf_init(&p, ctx);
    pch_buf_init(&path, ctx);
    rc = rd_open(&x, ctx, root, NULL, trajectory_key, err);
    x.out_dir = dir;
    if (rc == PCH_OK) rc = pch_mkdirs(dir, err);
    while (rc == PCH_OK) {
        srun *runs = NULL;
        size_t n = 0;
        bool eof;
        rc = next_doc(&x, trajectory_key, &runs, &n, &eof);
        if (rc < 0 || n == 0) {
            free_runs(&x, runs, n);
            if (rc == PCH_OK && trajectory_key && docs == 0)
                rc = pch_error_set(err, PCH_ENOTFOUND, "storyline: no trajectory '%s'", trajectory_key);
            break;
        }
        pch_buf_clear(&b);
        pch_buf_clear(&p);
        rc = build_doc(&x, runs, n, false, &b);
        if (rc == PCH_OK && (pch_atif__pretty(&p, (const char *)b.data, b.len) < 0 || pch_buf_putc(&p, '\n') < 0)) rc = oom(&x);
        if (rc == PCH_OK && pch_atif_path_check(runs[0].doc_path, strlen(runs[0].doc_path), NULL) != PCH_OK &&
            !strchr(runs[0].doc_path, '#'))
            rc = pch_error_set(err, PCH_ECORRUPT, "storyline: document path '%s' escapes the output", runs[0].doc_path);
        if (rc == PCH_OK) {
            /* records of a .jsonl source ("FILE#LN") become FILE.LN.json */
            pch_buf_clear(&path);
            pch_buf_printf(&path, "%s/", dir);
            for (const char *s = runs[0].doc_path; *s; s++) pch_buf_putc(&path, *s == '#' ? '.' : (uint8_t)*s);
            if (strchr(runs[0].doc_path, '#')) pch_buf_append_str(&path, ".json");
            if (path.oom) rc = oom(&x);
        }
        if (rc == PCH_OK) {
            char *last = strrchr((char *)path.data, '/');
            *last = 0;
            rc = pch_mkdirs((const char *)path.data, err);
            *last = '/';
        }
        if (rc == PCH_OK) rc = pch_file_publish((const char *)path.data, p.data, p.len, err);
        if (rc == PCH_OK) docs++;
        free_runs(&x, runs, n);
        if (trajectory_key) break;
    }
    if (rc == PCH_OK && !trajectory_key && (x.vs == 1 || x.vc == 1))
        rc = pch_error_set(err, PCH_ECORRUPT, "storyline: steps or tool calls without a run");
    if (n_docs_out) *n_docs_out = docs;
    rd_close(&x);
    pch_buf_dispose(&b);
    pch_buf_dispose(&p);
    pch_buf_dispose(&path);
    return rc;
}
