/* Training reads (RFC-0006 §13.5; docs/training.md): the RL reader streams, cluster by
** cluster, the steps that have completion_token_ids and are not copied context, straight
** from the typed token lanes — no document is rebuilt, no content lane is decoded.
**
** Bounded memory and backpressure: the caller pulls one batch per cluster
** (pch_vxp_rl_next); a batch points into that cluster's decoded lanes and lives until the
** next call, so at most one cluster's lanes are held. Filters (source, run keys, model, time
** window) are applied per step before anything is copied. */
#include "projection/pj_int.h"

/* the lanes the RL reader reads, in this order */
enum {
    R_SOURCE_ID, R_RUN_KEY, R_TRAJ_KEY, R_PAGE_INDEX, R_STEP_ID, R_TS_MS, R_MODEL, R_COPIED, R_PROMPT,
    R_COMPLETION, R_LP32, R_LP64, R_METRICS_ESCAPE, R_N
};
static const char *const k_rl_lanes[R_N] = {
    "id.source_id", "id.run_key", "id.trajectory_key", "id.page_index", "steps.step_id", "steps.timestamp_ms",
    "steps.model_name", "steps.is_copied_context", "tokens.prompt_token_ids", "tokens.completion_token_ids",
    "tokens.logprobs_f32", "tokens.logprobs_f64", "tokens.metrics_escape"
};

struct pch_vxp_rl_reader {
    pch_vxp_snapshot *s;
    pch_ctx *ctx;
    pch_vxp_train_filter f;
    pch_vxp_lanes *it;
    pch_vxp_rl_step *steps;
    size_t cap;
    uint64_t step_base;             /* steps on the earlier pages of the current trajectory */
    pch_json_parser *jp;
    pch_buf reward;                 /* reward JSON of the batch's steps, back to back */
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

int pch_vxp_rl_open(pch_vxp_rl_reader **out, pch_vxp_snapshot *s, const pch_vxp_train_filter *f, pch_error *err)
{
    pch_vxp_rl_reader *r;
    pch_ctx *ctx = pj_snapshot_ctx(s);
    int rc;
    *out = NULL;
    if (!(r = pch_calloc(ctx, 1, sizeof *r))) return nomem(err);
    rc = PCH_OK;
    r->s = s;
    r->ctx = ctx;
    if (f) r->f = *f;
    pch_buf_init(&r->reward, ctx);
    {
        /* the lanes in k_rl_lanes order; prompt ids replaced by a lane read anyway (step_id)
        ** when skipped, so that the indices stay put */
        const char *lanes[R_N];
        for (int i = 0; i < R_N; i++) lanes[i] = k_rl_lanes[i];
        if (r->f.skip_prompt_ids) lanes[R_PROMPT] = k_rl_lanes[R_STEP_ID];
        rc = pch_vxp_lanes_open(&r->it, s, lanes, R_N, err);
    }
    if (rc == PCH_OK && (r->f.has_time || r->f.model)) {
        /* the time window and model prune clusters and trajectories by their summaries (§13.3) */
        pch_vxp_prune p = PCH_VXP_PRUNE_INIT;
        p.has_ts_lo = p.has_ts_hi = r->f.has_time;
        p.ts_lo = r->f.from_ms;
        p.ts_hi = r->f.to_ms > INT64_MIN ? r->f.to_ms - 1 : INT64_MIN;
        p.model = r->f.model;
        if (r->f.has_time && r->f.to_ms <= r->f.from_ms) {     /* an empty window */
            p.ts_lo = INT64_MAX;
            p.ts_hi = INT64_MIN;
        }
        rc = pch_vxp_lanes_prune(r->it, &p, err);
    }
    if (rc < 0 ||
        (rc = pch_json_parser_new(&r->jp, ctx, NULL, err)) < 0) {
        pch_vxp_rl_free(r);
        return rc;
    }
    *out = r;
    return PCH_OK;
}

void pch_vxp_rl_free(pch_vxp_rl_reader *r)
{
    if (!r) return;
    pch_vxp_lanes_free(r->it);
    pch_json_parser_free(r->jp);
    pch_buf_dispose(&r->reward);
    pch_free(r->ctx, r->steps);
    pch_free(r->ctx, r);
}

static bool wanted_run(const pch_vxp_train_filter *f, const char *p, size_t n)
{
    if (!f->n_run_keys) return true;
    for (size_t i = 0; i < f->n_run_keys; i++)
        if (strlen(f->run_keys[i]) == n && memcmp(f->run_keys[i], p, n) == 0) return true;
    return false;
}

/* metrics.extra.reward of the step (its metrics escape), appended to r->reward; *len 0 = none. */
static int reward_of(pch_vxp_rl_reader *r, const pch_vx_array *esc, uint64_t si, size_t *off, size_t *len,
                     pch_error *err)
{
    const char *p;
    size_t n;
    const pch_json_value *v, *x, *w;
    *off = r->reward.len;
    *len = 0;
    if (!pch_vx_row_bytes(esc, si, &p, &n)) return PCH_OK;
    PCH_TRY(pch_json_parser_parse(r->jp, p, n, &v, err));
    if (!(x = pch_json_get(v, "extra", 5)) || !(w = pch_json_get(x, "reward", 6))) return PCH_OK;
    if (pch_buf_append(&r->reward, p + w->span_off, w->span_len) < 0) return nomem(err);
    *len = w->span_len;
    return PCH_OK;
}

int pch_vxp_rl_next(pch_vxp_rl_reader *r, const pch_vxp_rl_step **out, size_t *n_out, bool *eof, pch_error *err)
{
    const pch_vx_array *const *L;
    uint64_t rows;
    size_t n = 0;
    *out = NULL;
    *n_out = 0;
    for (;;) {
        const uint8_t *keep;
        PCH_TRY(pch_vxp_lanes_next(r->it, &L, &rows, eof, err));
        if (*eof) return PCH_OK;
        keep = pch_vxp_lanes_keep(r->it);
        pch_buf_clear(&r->reward);
        n = 0;
        for (uint64_t row = 0; row < rows; row++) {
            const char *src, *run, *traj;
            size_t srcn, runn, trajn;
            uint64_t sb, se;
            if (!pch_vx_list_range(L[R_STEP_ID], row, &sb, &se) || !pch_vx_row_valid(L[R_PAGE_INDEX], row) ||
                !pch_vx_row_bytes(L[R_SOURCE_ID], row, &src, &srcn) || !pch_vx_row_bytes(L[R_RUN_KEY], row, &run, &runn) ||
                !pch_vx_row_bytes(L[R_TRAJ_KEY], row, &traj, &trajn))
                return pch_error_set(err, PCH_ECORRUPT, "projection: a cluster's identity or step lanes are malformed");
            for (int l = R_STEP_ID; l < R_N; l++) {      /* every step lane covers the same steps */
                if (l == R_PROMPT && r->f.skip_prompt_ids) continue;
                uint64_t b, e;
                if (!pch_vx_list_range(L[l], row, &b, &e) || b != sb || e != se)
                    return pch_error_set(err, PCH_ECORRUPT, "projection: lane %s disagrees with step_id on the steps of a row", k_rl_lanes[l]);
            }
            if (pch_load_le32(L[R_PAGE_INDEX]->data + 4 * row) == 0) r->step_base = 0;
            if ((keep && !keep[row]) ||
                (r->f.source_id && (strlen(r->f.source_id) != srcn || memcmp(r->f.source_id, src, srcn) != 0)) ||
                !wanted_run(&r->f, run, runn)) {
                r->step_base += se - sb;
                continue;
            }
            for (uint64_t si = sb; si < se; si++) {
                const pch_vx_array *ci = pch_vx_list_items(L[R_COMPLETION]), *cp = pch_vx_list_items(L[R_COPIED]);
                const pch_vx_array *pi = r->f.skip_prompt_ids ? NULL : pch_vx_list_items(L[R_PROMPT]);
                const pch_vx_array *l32 = pch_vx_list_items(L[R_LP32]), *l64 = pch_vx_list_items(L[R_LP64]), *ts = pch_vx_list_items(L[R_TS_MS]);
                const pch_vx_array *mn = pch_vx_list_items(L[R_MODEL]), *sid = pch_vx_list_items(L[R_STEP_ID]);
                pch_vxp_rl_step *st;
                uint64_t b, e;
                const char *mp = NULL;
                size_t mlen = 0;
                if (!pch_vx_row_valid(ci, si)) continue;                                     /* no completion ids */
                if (pch_vx_row_valid(cp, si) && (cp->data[si / 8] >> (si % 8) & 1)) continue; /* copied context */
                if (r->f.model && (!pch_vx_row_bytes(mn, si, &mp, &mlen) || strlen(r->f.model) != mlen || memcmp(r->f.model, mp, mlen) != 0))
                    continue;
                if (r->f.has_time) {
                    int64_t t;
                    if (!pch_vx_row_valid(ts, si)) continue;
                    t = (int64_t)pch_load_le64(ts->data + 8 * si);
                    if (t < r->f.from_ms || t >= r->f.to_ms) continue;
                }
                if (n == r->cap) {
                    size_t nc = r->cap ? r->cap * 2 : 256;
                    pch_vxp_rl_step *ns = pch_realloc(r->ctx, r->steps, nc * sizeof *ns);
                    if (!ns) return nomem(err);
                    r->steps = ns;
                    r->cap = nc;
                }
                st = &r->steps[n++];
                memset(st, 0, sizeof *st);
                st->source_id = src; st->source_id_len = srcn;
                st->run_key = run; st->run_key_len = runn;
                st->trajectory_key = traj; st->trajectory_key_len = trajn;
                st->step_ordinal = r->step_base + (si - sb);
                st->has_step_id = pch_vx_row_valid(sid, si);
                st->step_id = st->has_step_id ? (int64_t)pch_load_le64(sid->data + 8 * si) : 0;
                if (pch_vx_row_bytes(mn, si, &mp, &mlen)) { st->model_name = mp; st->model_name_len = mlen; }
                if (!pch_vx_list_range(ci, si, &b, &e)) return pch_error_set(err, PCH_ECORRUPT, "projection: completion_token_ids lane malformed");
                st->completion_ids = pch_vx_list_items(ci)->data + 4 * b;
                st->n_completion = (size_t)(e - b);
                if (pch_vx_row_valid(pi, si)) {
                    if (!pch_vx_list_range(pi, si, &b, &e)) return pch_error_set(err, PCH_ECORRUPT, "projection: prompt_token_ids lane malformed");
                    st->has_prompt = true;
                    st->prompt_ids = pch_vx_list_items(pi)->data + 4 * b;
                    st->n_prompt = (size_t)(e - b);
                }
                if (pch_vx_row_valid(l32, si) || pch_vx_row_valid(l64, si)) {
                    const pch_vx_array *lp = pch_vx_row_valid(l32, si) ? l32 : l64;
                    if (!pch_vx_list_range(lp, si, &b, &e)) return pch_error_set(err, PCH_ECORRUPT, "projection: logprobs lane malformed");
                    st->logprob_bits = lp == l32 ? 32 : 64;
                    st->logprobs = pch_vx_list_items(lp)->data + (size_t)(st->logprob_bits / 8) * b;
                    st->n_logprobs = (size_t)(e - b);
                }
                {
                    size_t off, len;
                    PCH_TRY(reward_of(r, pch_vx_list_items(L[R_METRICS_ESCAPE]), si, &off, &len, err));
                    st->reward_off = off;          /* resolved below: the buffer may move */
                    st->reward_len = len;
                }
            }
            r->step_base += se - sb;
        }
        if (n) break;
    }
    for (size_t i = 0; i < n; i++)
        r->steps[i].reward_json = r->steps[i].reward_len ? (const char *)r->reward.data + r->steps[i].reward_off : NULL;
    *out = r->steps;
    *n_out = n;
    return PCH_OK;
}

/* ---- SFT (§13.5): conversations in order, one example per trainable agent step ----
**
** Messages are the document's own JSON values (message, reasoning_content, tool calls,
** observation results), so the reader rebuilds each document (every value hydrated and
** checked; PJ_FULL_NO_TOKENS leaves out the token arrays no example holds) and walks its
** steps in order. An agent step that is not copied
** context and not a deterministic dispatch (llm_call_count 0) is an example: the
** conversation before it as `messages`, the step itself as `completion`. One batch per
** document: memory is bounded by the largest document's examples. */

struct pch_vxp_sft_reader {
    pch_vxp_snapshot *s;
    pch_ctx *ctx;
    pch_vxp_train_filter f;
    uint64_t *docs, n_docs, pos;
    pch_buf out, conv, msg;
    uint64_t message_bytes;
};

int pch_vxp_sft_open(pch_vxp_sft_reader **out, pch_vxp_snapshot *s, const pch_vxp_train_filter *f, pch_error *err)
{
    pch_vxp_sft_reader *r;
    pch_ctx *ctx = pj_snapshot_ctx(s);
    int rc;
    *out = NULL;
    if (!(r = pch_calloc(ctx, 1, sizeof *r))) return nomem(err);
    r->s = s;
    r->ctx = ctx;
    if (f) r->f = *f;
    pch_buf_init(&r->out, ctx);
    pch_buf_init(&r->conv, ctx);
    pch_buf_init(&r->msg, ctx);
    if ((rc = pch_vxp_documents(s, &r->docs, &r->n_docs, err)) < 0) { pch_vxp_sft_free(r); return rc; }
    *out = r;
    return PCH_OK;
}

void pch_vxp_sft_free(pch_vxp_sft_reader *r)
{
    if (!r) return;
    pch_free(r->ctx, r->docs);
    pch_buf_dispose(&r->out);
    pch_buf_dispose(&r->conv);
    pch_buf_dispose(&r->msg);
    pch_free(r->ctx, r);
}

uint64_t pch_vxp_sft_message_bytes(const pch_vxp_sft_reader *r) { return r->message_bytes; }

static void put_raw_or_null(pch_buf *b, const pch_atif_raw *v)
{
    if (v->ptr) pch_buf_append(b, v->ptr, v->len);
    else pch_buf_append_str(b, "null");
}

static void put_key(pch_buf *b, const char *k, const pch_atif_raw *v)
{
    pch_buf_printf(b, ",\"%s\":", k);
    put_raw_or_null(b, v);
}

/* The step as chat messages into r->msg: the step's own message (role from its source),
** then for an agent step one "tool" message per observation result. *first_len = the
** length of the first one (the completion of an example). */
static void step_messages(pch_vxp_sft_reader *r, const pch_atif_step *st, size_t *first_len)
{
    static const char *const roles[] = { NULL, "system", "user", "assistant" };
    pch_buf *b = &r->msg;
    pch_buf_clear(b);
    pch_buf_append_str(b, "{\"role\":");
    if ((unsigned)st->source < 4 && roles[st->source]) pch_buf_printf(b, "\"%s\"", roles[st->source]);
    else put_raw_or_null(b, &st->f[PCH_ATIF_S_SOURCE]);
    put_key(b, "content", &st->f[PCH_ATIF_S_MESSAGE]);
    r->message_bytes += st->f[PCH_ATIF_S_MESSAGE].len;
    if (st->f[PCH_ATIF_S_REASONING_CONTENT].ptr) put_key(b, "reasoning_content", &st->f[PCH_ATIF_S_REASONING_CONTENT]);
    if (st->has_tool_calls) {
        pch_buf_append_str(b, ",\"tool_calls\":[");
        for (uint32_t c = 0; c < st->n_calls; c++) {
            pch_buf_append_str(b, c ? ",{\"id\":" : "{\"id\":");
            put_raw_or_null(b, &st->calls[c].f[PCH_ATIF_C_TOOL_CALL_ID]);
            put_key(b, "function_name", &st->calls[c].f[PCH_ATIF_C_FUNCTION_NAME]);
            put_key(b, "arguments", &st->calls[c].f[PCH_ATIF_C_ARGUMENTS]);
            pch_buf_putc(b, '}');
        }
        pch_buf_putc(b, ']');
    }
    pch_buf_putc(b, '}');
    *first_len = b->len;
    for (uint32_t k = 0; k < st->n_results; k++) {
        pch_buf_append_str(b, ",{\"role\":\"tool\",\"tool_call_id\":");
        put_raw_or_null(b, &st->results[k].f[PCH_ATIF_R_SOURCE_CALL_ID]);
        put_key(b, "content", &st->results[k].f[PCH_ATIF_R_CONTENT]);
        r->message_bytes += st->results[k].f[PCH_ATIF_R_CONTENT].len;
        pch_buf_putc(b, '}');
    }
}

static bool trainable(const pch_vxp_train_filter *f, const pch_atif_step *st)
{
    if (st->source != PCH_ATIF_SOURCE_AGENT || st->is_copied_context == 1) return false;
    if (st->has_llm_call_count && st->llm_call_count == 0) return false;      /* deterministic dispatch */
    if (f->model && (!st->model_name || strcmp(st->model_name, f->model) != 0)) return false;
    if (f->has_time && (!st->has_timestamp || st->timestamp_ms < f->from_ms || st->timestamp_ms >= f->to_ms)) return false;
    return true;
}

static int sft_traj(pch_vxp_sft_reader *r, const pch_atif_trajectory *t, size_t *n, pch_error *err)
{
    pch_buf_clear(&r->conv);
    for (uint32_t i = 0; i < t->n_steps; i++) {
        const pch_atif_step *st = &t->steps[i];
        size_t first;
        step_messages(r, st, &first);
        if (trainable(&r->f, st)) {
            pch_buf *o = &r->out;
            pch_buf_append_str(o, "{\"source_id\":");
            pch_json__write_string(o, t->source_id, strlen(t->source_id));
            pch_buf_append_str(o, ",\"run_id\":");
            pch_json__write_string(o, t->run_key, strlen(t->run_key));
            pch_buf_append_str(o, ",\"trajectory_key\":");
            pch_json__write_string(o, t->trajectory_key, strlen(t->trajectory_key));
            pch_buf_printf(o, ",\"step_ordinal\":%u", st->ordinal);
            put_key(o, "step_id", &st->f[PCH_ATIF_S_STEP_ID]);
            put_key(o, "model_name", &st->f[PCH_ATIF_S_MODEL_NAME]);
            pch_buf_append_str(o, ",\"messages\":[");
            pch_buf_append(o, r->conv.data, r->conv.len);
            pch_buf_append_str(o, "],\"completion\":");
            pch_buf_append(o, r->msg.data, first);
            pch_buf_append_str(o, "}\n");
            (*n)++;
        }
        if (r->conv.len) pch_buf_putc(&r->conv, ',');
        pch_buf_append(&r->conv, r->msg.data, r->msg.len);
        if (r->out.oom || r->conv.oom || r->msg.oom) return nomem(err);
    }
    return PCH_OK;
}

int pch_vxp_sft_next(pch_vxp_sft_reader *r, const char **text, size_t *len, size_t *n, bool *eof, pch_error *err)
{
    *text = NULL;
    *len = 0;
    *n = 0;
    pch_buf_clear(&r->out);
    while (*n == 0) {
        pch_vxp_doc raw;
        pch_atif_doc *d = NULL;
        int rc = PCH_OK;
        *eof = r->pos >= r->n_docs;
        if (*eof) return PCH_OK;
        PCH_TRY(pch_vxp_get_atif_as(r->s, r->docs[r->pos], PJ_FULL_NO_TOKENS, &raw, &d, err));
        r->pos++;
        for (size_t i = 0; i < pch_atif_doc_count(d) && rc == PCH_OK; i++) {
            const pch_atif_trajectory *t = pch_atif_doc_get(d, i);
            if ((r->f.source_id && strcmp(r->f.source_id, t->source_id) != 0) || !wanted_run(&r->f, t->run_key, strlen(t->run_key)))
                continue;
            rc = sft_traj(r, t, n, err);
        }
        pch_atif_doc_free(d);
        pch_vxp_doc_dispose(r->s, &raw);
        if (rc < 0) return rc;
    }
    *text = (const char *)r->out.data;
    *len = r->out.len;
    return PCH_OK;
}
