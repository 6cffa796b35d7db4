/* The RL reader (RFC-0006 §13.5; docs/training.md; the SFT reader is pj_sft.c) streams, cluster by
** cluster, the steps that have completion_token_ids and are not copied context, straight
** from the typed token lanes — no document is rebuilt, no content lane is decoded.
**
** Bounded memory and backpressure: the caller pulls one batch per cluster
** (pch_vxp_rl_next); a batch points into that cluster's decoded lanes and lives until the
** next call, so at most one cluster's lanes are held. Filters (source, run keys, model, time
** window) are applied per step before anything is copied. */
#include <stdlib.h>

#include "projection/pj_int.h"

/* the lanes the RL reader reads, in this order */
enum {
    R_SOURCE_ID, R_RUN_KEY, R_TRAJ_KEY, R_PAGE_INDEX, R_STEP_ID, R_TS_MS, R_MODEL, R_COPIED, R_PROMPT,
    R_PROMPT_BASE, R_PROMPT_PREFIX, R_PROMPT_SUFFIX, R_PROMPT_LEN, R_COMPLETION, R_LP32, R_LP64,
    R_METRICS_ESCAPE, R_N
};
static const char *const k_rl_lanes[R_N] = {
    "id.source_id", "id.run_key", "id.trajectory_key", "id.page_index", "steps.step_id", "steps.timestamp_ms",
    "steps.model_name", "steps.is_copied_context", "tokens.prompt_token_ids", "tokens.prompt_base",
    "tokens.prompt_prefix_len", "tokens.prompt_suffix_ids", "tokens.prompt_ids_len", "tokens.completion_token_ids",
    "tokens.logprobs_f32", "tokens.logprobs_f64", "tokens.metrics_escape"
};
#define R_SKIPPED_PROMPT(l) ((l) >= R_PROMPT && (l) <= R_PROMPT_LEN)

struct pch_vxp_rl_reader {
    pch_vxp_snapshot *s;
    pch_ctx *ctx;
    pch_vxp_train_filter f;
    pch_vxp_lanes *it;
    pj_lanes_ahead *ahead;          /* the next cluster decoded on the second core */
    pch_vxp_rl_step *steps;
    size_t cap;
    uint64_t step_base;             /* steps on the earlier pages of the current trajectory */
    pch_json_parser *jp;
    pch_buf reward;                 /* reward JSON of the batch's steps, back to back */
    pch_buf prompts;                /* prefix-form prompts of the batch, rebuilt (u32 LE) */
    pj_rows rows;                   /* the prompt lanes of the cluster, for pj_prompt_ids */
    pj_prompt *pcache;              /* per step of the row being read */
    size_t pcache_cap;
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
    pch_buf_init(&r->prompts, ctx);
    {
        /* the lanes in k_rl_lanes order; prompt ids replaced by a lane read anyway (step_id)
        ** when skipped, so that the indices stay put */
        const char *lanes[R_N];
        for (int i = 0; i < R_N; i++) lanes[i] = k_rl_lanes[i];
        for (int i = 0; i < R_N; i++)
            if (r->f.skip_prompt_ids && R_SKIPPED_PROMPT(i)) lanes[i] = k_rl_lanes[R_STEP_ID];
        rc = pch_vxp_lanes_open(&r->it, s, lanes, R_N, err);
    }
    if (rc == PCH_OK) rc = pj_train_prune(r->it, &r->f, 0, -1, err);
    if (rc == PCH_OK) rc = pj_lanes_ahead_open(&r->ahead, r->it, r->f.threads, err);
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
    pj_lanes_ahead_free(r->ahead);      /* first: its thread may be using the iterator */
    pch_vxp_lanes_free(r->it);
    pch_json_parser_free(r->jp);
    pch_buf_dispose(&r->reward);
    pch_buf_dispose(&r->prompts);
    free(r->pcache);
    pch_free(r->ctx, r->steps);
    pch_free(r->ctx, r);
}

bool pj_train_step_in(const pch_vxp_train_filter *f, const pch_vx_array *model, const pch_vx_array *ts, uint64_t s)
{
    const char *p;
    size_t n;
    if (f->model && (!pch_vx_row_bytes(model, s, &p, &n) || strlen(f->model) != n || memcmp(f->model, p, n) != 0))
        return false;
    if (f->has_time) {
        int64_t t;
        if (!pch_vx_row_valid(ts, s)) return false;
        t = (int64_t)pch_vx_row_uint(ts, s);
        if (t < f->from_ms || t >= f->to_ms) return false;
    }
    return true;
}

int pj_train_prune(pch_vxp_lanes *it, const pch_vxp_train_filter *f, uint8_t source_bits, int copied, pch_error *err)
{
    /* the time window and model prune clusters and trajectories by their summaries (§13.3) */
    pch_vxp_prune p = PCH_VXP_PRUNE_INIT;
    if (!f->has_time && !f->model && !source_bits && copied < 0) return PCH_OK;
    p.has_ts_lo = p.has_ts_hi = f->has_time;
    p.ts_lo = f->from_ms;
    p.ts_hi = f->to_ms > INT64_MIN ? f->to_ms - 1 : INT64_MIN;
    p.model = f->model;
    p.source_bits = source_bits;
    p.copied = copied;
    if (f->has_time && f->to_ms <= f->from_ms) {     /* an empty window */
        p.ts_lo = INT64_MAX;
        p.ts_hi = INT64_MIN;
    }
    return pch_vxp_lanes_prune(it, &p, err);
}

bool pj_train_run_wanted(const pch_vxp_train_filter *f, const char *p, size_t n)
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
        PCH_TRY(pj_lanes_ahead_next(r->ahead, &L, &rows, &keep, NULL, eof, err));
        if (*eof) return PCH_OK;
        pch_buf_clear(&r->reward);
        pch_buf_clear(&r->prompts);
        r->rows.l[PJ_TOKENS_PROMPT_IDS] = L[R_PROMPT];
        r->rows.l[PJ_TOKENS_PROMPT_BASE] = L[R_PROMPT_BASE];
        r->rows.l[PJ_TOKENS_PROMPT_PREFIX] = L[R_PROMPT_PREFIX];
        r->rows.l[PJ_TOKENS_PROMPT_SUFFIX] = L[R_PROMPT_SUFFIX];
        r->rows.l[PJ_TOKENS_PROMPT_LEN] = L[R_PROMPT_LEN];
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
                if (R_SKIPPED_PROMPT(l) && r->f.skip_prompt_ids) continue;
                uint64_t b, e;
                if (!pch_vx_list_range(L[l], row, &b, &e) || b != sb || e != se)
                    return pch_error_set(err, PCH_ECORRUPT, "projection: lane %s disagrees with step_id on the steps of a row", k_rl_lanes[l]);
            }
            if (pch_load_le32(L[R_PAGE_INDEX]->data + 4 * row) == 0) r->step_base = 0;
            if ((keep && !keep[row]) ||
                (r->f.source_id && (strlen(r->f.source_id) != srcn || memcmp(r->f.source_id, src, srcn) != 0)) ||
                !pj_train_run_wanted(&r->f, run, runn)) {
                r->step_base += se - sb;
                continue;
            }
            if (!r->f.skip_prompt_ids && pj_prompt_cache(&r->pcache, &r->pcache_cap, (size_t)(se - sb)) < 0) return nomem(err);
            for (uint64_t si = sb; si < se; si++) {
                const pch_vx_array *ci = pch_vx_list_items(L[R_COMPLETION]), *cp = pch_vx_list_items(L[R_COPIED]);
                const pch_vx_array *l32 = pch_vx_list_items(L[R_LP32]), *l64 = pch_vx_list_items(L[R_LP64]), *ts = pch_vx_list_items(L[R_TS_MS]);
                const pch_vx_array *mn = pch_vx_list_items(L[R_MODEL]), *sid = pch_vx_list_items(L[R_STEP_ID]);
                pch_vxp_rl_step *st;
                uint64_t b, e;
                const char *mp = NULL;
                size_t mlen = 0;
                if (!pch_vx_row_valid(ci, si)) continue;                                     /* no completion ids */
                if (pch_vx_row_valid(cp, si) && (cp->data[si / 8] >> (si % 8) & 1)) continue; /* copied context */
                if (!pj_train_step_in(&r->f, mn, ts, si)) continue;
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
                if (!r->f.skip_prompt_ids) {
                    /* a prefix-form prompt (§8.2) is its checkpoint's ids, already decoded,
                    ** copied and followed by its suffix; a plain one stays in place */
                    const pj_prompt *pr = &r->pcache[si - sb];
                    PCH_TRY(pj_prompt_ids(&r->rows, sb, si, &r->prompts, r->pcache, err));
                    st->has_prompt = pr->has;
                    st->prompt_ids = pr->rebuilt ? NULL : pr->ids;
                    st->prompt_off = pr->off;
                    st->n_prompt = pr->n;
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
    for (size_t i = 0; i < n; i++) {
        pch_vxp_rl_step *st = &r->steps[i];
        st->reward_json = st->reward_len ? (const char *)r->reward.data + st->reward_off : NULL;
        if (st->has_prompt && !st->prompt_ids)
            st->prompt_ids = r->prompts.data ? r->prompts.data + st->prompt_off : (const uint8_t *)"";
    }
    *out = r->steps;
    *n_out = n;
    return PCH_OK;
}
