/* The SFT reader (RFC-0006 §13.5; docs/training.md "SFT"): every agent step that is not
** copied context and not a deterministic dispatch becomes an example, the conversation
** before it plus its own message. It reads lanes, never documents: first the identity, page
** and summary lanes (the scan's pruning skips clusters and trajectories without an agent
** step that is not copied, of the model and in the window asked for, §13.3), then per
** trajectory the step lanes the filter needs, and only for a trajectory with a hit step the
** message, reasoning and tool lanes its messages are written from (pj_chat, pj_model.c).
**
** A batch is one trajectory page with examples: its conversation is held once, as the JSON
** array body "m0,m1,...", and every example is an index into it — the shared prefix is not
** repeated (pch_vxp_sft_next_batch). The JSON lines of pch_vxp_sft_next repeat it, as
** trainers take it. Memory: one cluster's lanes plus one trajectory's messages. */
#include <inttypes.h>

#include "projection/pj_int.h"

/* identity and page lanes, the step lanes of the filter, then what pj_chat reads */
static const int k_sft_lanes[] = {
    PJ_ID_SOURCE_ID, PJ_ID_RUN_KEY, PJ_ID_TRAJECTORY_KEY, PJ_ID_KEY_FLAGS, PJ_ID_PAGE_INDEX, PJ_ID_PAGE_COUNT,
    PJ_ID_ESCAPE, PJ_STEPS_STEP_ID, PJ_STEPS_TS_MS, PJ_STEPS_SOURCE, PJ_STEPS_MODEL_NAME, PJ_STEPS_LLM_CALL_COUNT,
    PJ_STEPS_COPIED, PJ_STEPS_ESCAPE,
    PJ_MESSAGE_KIND, PJ_MESSAGE_HOT, PJ_MESSAGE_COLD, PJ_MESSAGE_REF, PJ_MESSAGE_PART_KIND, PJ_MESSAGE_PART_HOT,
    PJ_MESSAGE_PART_COLD, PJ_MESSAGE_PART_REF, PJ_MESSAGE_PART_ESCAPE, PJ_MESSAGE_RKIND, PJ_MESSAGE_RHOT,
    PJ_MESSAGE_RCOLD, PJ_MESSAGE_RREF,
    PJ_TOOLS_CALL_ID, PJ_TOOLS_FUNCTION, PJ_TOOLS_ARGS_HOT, PJ_TOOLS_ARGS_COLD, PJ_TOOLS_ARGS_REF,
    PJ_TOOLS_CALL_ESCAPE, PJ_TOOLS_OBS_KIND, PJ_TOOLS_RES_CALL, PJ_TOOLS_RES_ORIGIN, PJ_TOOLS_RES_KIND,
    PJ_TOOLS_RES_HOT, PJ_TOOLS_RES_COLD, PJ_TOOLS_RES_REF, PJ_TOOLS_RES_ESCAPE
};
#define N_LANES (sizeof k_sft_lanes / sizeof k_sft_lanes[0])

struct pch_vxp_sft_reader {
    pch_vxp_snapshot *s;
    pch_ctx *ctx;
    pch_vxp_train_filter f;
    pch_vxp_sft_format format;
    char path[N_LANES][48];         /* "group.lane" of k_sft_lanes */
    pch_vxp_lanes *it;
    pj_lanes_ahead *ahead;          /* the next cluster decoded on the second core */
    pj_chat *chat;
    pj_rows rows;                   /* the current cluster's lanes, by lane id */
    uint64_t n_rows, row;
    const uint8_t *keep;
    const uint8_t *live;            /* NULL, or 0 for the rows a newer revision shadows (§12.2) */
    pj_page_seq seq;
    bool gap;                       /* the scan skipped clusters right before the row read next */
    /* the conversation of the current trajectory */
    bool drop;                      /* filtered out by its identity */
    uint64_t step_base;             /* steps on its earlier pages */
    pch_buf ident;                  /* source_id, run_key, trajectory_key, tools */
    size_t ident_len[4];
    pch_buf msgs;                   /* "m0,m1,...," */
    size_t *ends, n_msgs, cap_msgs, first_new;
    /* the examples of the current page; meta holds their model names and (ATIF form) the
    ** JSON of their step_id and model_name */
    pch_vxp_sft_example *ex;
    struct ex_meta { size_t model, meta, meta_len; } *ex_at;   /* offsets into meta, per example */
    size_t n_ex, cap_ex;
    pch_buf meta;
    pch_vxp_sft_batch batch;
    pch_buf out;
    bool in_batch;                  /* pch_vxp_sft_next: the batch's examples from next_ex on are due */
    size_t next_ex;
};

/* pch_vxp_sft_next hands out a batch's JSON lines in pieces of about this many bytes (or one
** line when it is longer): each line repeats its conversation so far, so the lines of one long
** trajectory grow with the square of its steps (40,000 steps: hundreds of GB), and one buffer
** for all of them ran out of memory. */
#define SFT_LINES_BYTES ((size_t)1 << 20)

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }
static int corrupt(pch_error *err, const char *what) { return pch_error_set(err, PCH_ECORRUPT, "projection: %s", what); }

int pch_vxp_sft_open_as(pch_vxp_sft_reader **out, pch_vxp_snapshot *s, const pch_vxp_train_filter *f,
                        pch_vxp_sft_format format, pch_error *err)
{
    pch_vxp_sft_reader *r;
    pch_ctx *ctx = pj_snapshot_ctx(s);
    const char *cols[N_LANES];
    pj_blobs *blobs;
    int rc;
    *out = NULL;
    if (format != PCH_VXP_SFT_ATIF && format != PCH_VXP_SFT_MESSAGES)
        return pch_error_set(err, PCH_EINVAL, "projection: unknown SFT format %d", (int)format);
    if (!(r = pch_calloc(ctx, 1, sizeof *r))) return nomem(err);
    r->s = s;
    r->ctx = ctx;
    r->format = format;
    if (f) r->f = *f;
    pch_buf_init(&r->ident, ctx);
    pch_buf_init(&r->msgs, ctx);
    pch_buf_init(&r->meta, ctx);
    pch_buf_init(&r->out, ctx);
    for (size_t i = 0; i < N_LANES; i++) {
        int l = k_sft_lanes[i];
        snprintf(r->path[i], sizeof r->path[i], "%s.%s", pj_group_names[pj_lane_group[l]], pj_lane_names[l]);
        cols[i] = r->path[i];
    }
    rc = pch_vxp_lanes_open(&r->it, s, cols, N_LANES, err);
    /* summaries rule out trajectories without an agent step that is not copied (§14.2) */
    if (rc == PCH_OK) rc = pj_train_prune(r->it, &r->f, 1u << PCH_ATIF_SOURCE_AGENT, 0, err);
    if (rc == PCH_OK) rc = pj_snapshot_blobs(s, &blobs, err);
    if (rc == PCH_OK) rc = pj_chat_new(&r->chat, blobs, err);
    if (rc == PCH_OK) rc = pj_lanes_ahead_open(&r->ahead, r->it, r->f.threads, err);
    if (rc < 0) {
        pch_vxp_sft_free(r);
        return rc;
    }
    *out = r;
    return PCH_OK;
}

int pch_vxp_sft_open(pch_vxp_sft_reader **out, pch_vxp_snapshot *s, const pch_vxp_train_filter *f, pch_error *err)
{
    return pch_vxp_sft_open_as(out, s, f, PCH_VXP_SFT_ATIF, err);
}

void pch_vxp_sft_free(pch_vxp_sft_reader *r)
{
    if (!r) return;
    pj_lanes_ahead_free(r->ahead);      /* first: its thread may be using the iterator */
    pch_vxp_lanes_free(r->it);
    pj_chat_free(r->chat);
    pch_buf_dispose(&r->ident);
    pch_buf_dispose(&r->msgs);
    pch_buf_dispose(&r->meta);
    pch_buf_dispose(&r->out);
    pch_free(r->ctx, r->ends);
    pch_free(r->ctx, r->ex);
    pch_free(r->ctx, r->ex_at);
    pch_free(r->ctx, r);
}

uint64_t pch_vxp_sft_message_bytes(const pch_vxp_sft_reader *r) { return pj_chat_message_bytes(r->chat); }
uint64_t pch_vxp_sft_content_bytes(const pch_vxp_sft_reader *r) { return pj_chat_content_bytes(r->chat); }
void pch_vxp_sft_scan_stats(const pch_vxp_sft_reader *r, pch_vxp_lanes_stats *out) { pj_lanes_ahead_stats(r->ahead, out); }

#define ITEMS(lane) pch_vx_list_items(r->rows.l[lane])

/* An example: an agent step, not copied context, not a deterministic dispatch, of the model
** and in the window asked for. */
static bool trainable(const pch_vxp_sft_reader *r, uint64_t s)
{
    const pch_vx_array *src = ITEMS(PJ_STEPS_SOURCE), *cp = ITEMS(PJ_STEPS_COPIED), *llm = ITEMS(PJ_STEPS_LLM_CALL_COUNT);
    if (!pch_vx_row_valid(src, s) || pch_vx_row_uint(src, s) != PCH_ATIF_SOURCE_AGENT) return false;
    if (pch_vx_row_valid(cp, s) && (cp->data[s / 8] >> (s % 8) & 1)) return false;
    if (pch_vx_row_valid(llm, s) && pch_vx_row_uint(llm, s) == 0) return false;
    return pj_train_step_in(&r->f, ITEMS(PJ_STEPS_MODEL_NAME), ITEMS(PJ_STEPS_TS_MS), s);
}

static int grow(pch_vxp_sft_reader *r, void **p, size_t *cap, size_t need, size_t size)
{
    size_t nc;
    void *np;
    if (need <= *cap) return PCH_OK;
    nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    if (!(np = pch_realloc(r->ctx, *p, nc * size))) return PCH_ENOMEM;
    *p = np;
    *cap = nc;
    return PCH_OK;
}

/* The message just appended to msgs ends here; a comma separates it from the next. */
static int end_message(pch_vxp_sft_reader *r, pch_error *err)
{
    if (grow(r, (void **)&r->ends, &r->cap_msgs, r->n_msgs + 1, sizeof *r->ends) < 0) return nomem(err);
    r->ends[r->n_msgs++] = r->msgs.len;
    if (pch_buf_putc(&r->msgs, ',') < 0 || r->msgs.oom) return nomem(err);
    return PCH_OK;
}

/* Step s becomes example n_ex, its own message being message n_msgs. */
static int add_example(pch_vxp_sft_reader *r, uint64_t s, uint64_t ordinal, pch_error *err)
{
    const pch_vx_array *sid = ITEMS(PJ_STEPS_STEP_ID);
    pch_vxp_sft_example *e;
    const char *p = NULL;
    size_t n = 0, k = r->n_ex + 1, c = r->cap_ex;
    struct ex_meta *m;
    bool model = pch_vx_row_bytes(ITEMS(PJ_STEPS_MODEL_NAME), s, &p, &n);
    /* the two arrays grow alike, from the same capacity */
    if (grow(r, (void **)&r->ex, &c, k, sizeof *r->ex) < 0) return nomem(err);
    c = r->cap_ex;
    if (grow(r, (void **)&r->ex_at, &c, k, sizeof *r->ex_at) < 0) return nomem(err);
    r->cap_ex = c;
    m = &r->ex_at[r->n_ex];
    e = &r->ex[r->n_ex];
    memset(e, 0, sizeof *e);
    e->step_ordinal = ordinal;
    e->has_step_id = pch_vx_row_valid(sid, s);
    e->step_id = e->has_step_id ? (int64_t)pch_vx_row_uint(sid, s) : 0;
    e->model_name_len = model ? n : 0;
    e->message = r->n_msgs;
    m->model = model ? r->meta.len : SIZE_MAX;
    if (model) pch_buf_append(&r->meta, p, n);
    m->meta = r->meta.len;
    if (r->format == PCH_VXP_SFT_ATIF) {
        /* the ATIF form's step_id and model_name: typed, or as the document had them */
        pch_buf_append_str(&r->meta, "\"step_id\":");
        if (e->has_step_id) pch_buf_printf(&r->meta, "%" PRId64, e->step_id);
        else PCH_TRY(pj_chat_escaped(r->chat, &r->meta, &r->rows, s, "step_id", err));
        pch_buf_append_str(&r->meta, ",\"model_name\":");
        if (model) pch_json__write_string(&r->meta, p, n);
        else PCH_TRY(pj_chat_escaped(r->chat, &r->meta, &r->rows, s, "model_name", err));
    }
    m->meta_len = r->meta.len - m->meta;
    if (r->meta.oom) return nomem(err);
    r->n_ex++;
    return PCH_OK;
}

/* A trajectory opens: its identity and tools, an empty conversation. */
static int open_trajectory(pch_vxp_sft_reader *r, uint64_t row, const char *const id[3], const size_t idn[3],
                           pch_error *err)
{
    pch_buf_clear(&r->ident);
    pch_buf_clear(&r->msgs);
    r->n_msgs = 0;
    r->step_base = 0;
    r->drop = (r->f.source_id && (strlen(r->f.source_id) != idn[0] || memcmp(r->f.source_id, id[0], idn[0]) != 0)) ||
              !pj_train_run_wanted(&r->f, id[1], idn[1]);
    if (r->drop) return PCH_OK;
    for (int k = 0; k < 3; k++) {
        pch_buf_append(&r->ident, id[k], idn[k]);
        r->ident_len[k] = idn[k];
    }
    {
        size_t before = r->ident.len;
        PCH_TRY(pj_chat_tools(r->chat, &r->ident, &r->rows, row, err));
        r->ident_len[3] = r->ident.len - before;
    }
    return r->ident.oom ? nomem(err) : PCH_OK;
}

/* Row `row` of the current cluster; *got when it added examples. */
static int read_row(pch_vxp_sft_reader *r, uint64_t row, bool *got, pch_error *err)
{
    const pch_vx_array *const *l = r->rows.l;
    const char *id[3];
    size_t idn[3];
    uint64_t page, pages, sb, se;
    bool cont, want;
    char msg[400];
    *got = false;
    if (!pch_vx_row_bytes(l[PJ_ID_SOURCE_ID], row, &id[0], &idn[0]) || !pch_vx_row_bytes(l[PJ_ID_RUN_KEY], row, &id[1], &idn[1]) ||
        !pch_vx_row_bytes(l[PJ_ID_TRAJECTORY_KEY], row, &id[2], &idn[2]) || !pch_vx_row_valid(l[PJ_ID_PAGE_INDEX], row) ||
        !pch_vx_row_valid(l[PJ_ID_PAGE_COUNT], row) || !pch_vx_list_range(l[PJ_STEPS_STEP_ID], row, &sb, &se))
        return corrupt(err, "a cluster's identity, page or step lanes are malformed");
    page = pch_vx_row_uint(l[PJ_ID_PAGE_INDEX], row);
    pages = pch_vx_row_uint(l[PJ_ID_PAGE_COUNT], row);
    /* a deleted row (§12.2; every page of its trajectory is, and its first pages may lie in a
    ** cluster the scan skipped unread): not even context, and not part of the page sequence */
    if (r->live && !r->live[row]) {
        r->drop = true;
        return PCH_OK;
    }
    if (pj_page_seq_next(&r->seq, page, pages, id[2], idn[2], &cont, msg, sizeof msg) < 0 &&
        !(page == 0 && page < pages && r->gap))
        /* pages missing before a new trajectory are expected only where the scan skipped a
        ** cluster (its last pages held no example) */
        return pch_error_set(err, PCH_ECORRUPT, "projection: %s", msg);
    r->gap = false;
    if (!cont) PCH_TRY(open_trajectory(r, row, id, idn, err));
    if (r->drop) return PCH_OK;
    for (size_t i = 0; i < N_LANES; i++) {         /* every step lane covers the same steps */
        uint64_t b, e;
        int ln = k_sft_lanes[i];
        if (pj_lane_group[ln] < PJ_G_STEPS) continue;
        if (!pch_vx_list_range(l[ln], row, &b, &e) || b != sb || e != se)
            return pch_error_set(err, PCH_ECORRUPT, "projection: lane %s disagrees with step_id on the steps of a row", r->path[i]);
    }
    r->n_ex = 0;
    pch_buf_clear(&r->meta);
    r->first_new = r->n_msgs;
    /* a one-page trajectory is read only when it has an example; a paged one always (its
    ** messages are the context of its later pages) */
    want = pages > 1 || !r->keep || r->keep[row];
    if (want && pages == 1) {
        want = false;
        for (uint64_t s = sb; s < se && !want; s++) want = trainable(r, s);
    }
    if (want) {
        for (uint64_t s = sb; s < se; s++) {
            uint64_t b, e;
            if (trainable(r, s)) PCH_TRY(add_example(r, s, r->step_base + (s - sb), err));
            PCH_TRY(pj_chat_message(r->chat, &r->msgs, &r->rows, s, r->format == PCH_VXP_SFT_MESSAGES ? PJ_CHAT_OPENAI : PJ_CHAT_ATIF, err));
            PCH_TRY(end_message(r, err));
            PCH_TRY(pj_chat_results(r->chat, &r->rows, s, &b, &e, err));
            for (uint64_t q = b; q < e; q++) {
                PCH_TRY(pj_chat_result(r->chat, &r->msgs, &r->rows, s, q, err));
                PCH_TRY(end_message(r, err));
            }
        }
    }
    r->step_base += se - sb;
    *got = r->n_ex > 0;
    return PCH_OK;
}

static void fill_batch(pch_vxp_sft_reader *r)
{
    pch_vxp_sft_batch *b = &r->batch;
    const char *id = (const char *)r->ident.data;
    memset(b, 0, sizeof *b);
    b->source_id = id;
    b->source_id_len = r->ident_len[0];
    b->run_key = id + r->ident_len[0];
    b->run_key_len = r->ident_len[1];
    b->trajectory_key = b->run_key + r->ident_len[1];
    b->trajectory_key_len = r->ident_len[2];
    b->tools = b->trajectory_key + r->ident_len[2];
    b->tools_len = r->ident_len[3];
    b->messages = (const char *)r->msgs.data;
    b->message_end = r->ends;
    b->n_messages = r->n_msgs;
    b->first_new = r->first_new;
    for (size_t i = 0; i < r->n_ex; i++)
        r->ex[i].model_name = r->ex_at[i].model == SIZE_MAX ? NULL : (const char *)r->meta.data + r->ex_at[i].model;
    b->examples = r->ex;
    b->n_examples = r->n_ex;
}

int pch_vxp_sft_next_batch(pch_vxp_sft_reader *r, const pch_vxp_sft_batch **batch, bool *eof, pch_error *err)
{
    *batch = NULL;
    *eof = false;
    for (;;) {
        bool got;
        if (r->row >= r->n_rows) {
            const pch_vx_array *const *L;
            char msg[400];
            const uint8_t *keep, *live;
            PCH_TRY(pj_lanes_ahead_next(r->ahead, &L, &r->n_rows, &keep, &live, eof, err));
            r->gap = pj_lanes_ahead_gap(r->ahead);
            if (*eof) {
                if (!r->gap && pj_page_seq_end(&r->seq, msg, sizeof msg) < 0)
                    return pch_error_set(err, PCH_ECORRUPT, "projection: %s", msg);
                return PCH_OK;
            }
            memset(&r->rows, 0, sizeof r->rows);
            for (size_t i = 0; i < N_LANES; i++) r->rows.l[k_sft_lanes[i]] = L[i];
            r->keep = keep;
            r->live = live;
            r->row = 0;
            continue;
        }
        PCH_TRY(read_row(r, r->row++, &got, err));
        if (got) break;
    }
    fill_batch(r);
    *batch = &r->batch;
    return PCH_OK;
}

/* Message i of the batch: [start, end). */
static size_t msg_start(const pch_vxp_sft_batch *b, size_t i) { return i ? b->message_end[i - 1] + 1 : 0; }

int pch_vxp_sft_next(pch_vxp_sft_reader *r, const char **text, size_t *len, size_t *n, bool *eof, pch_error *err)
{
    const pch_vxp_sft_batch *b = &r->batch;
    pch_buf *o = &r->out;
    size_t k;
    *text = NULL;
    *len = 0;
    *n = 0;
    *eof = false;
    if (!r->in_batch) {
        PCH_TRY(pch_vxp_sft_next_batch(r, &b, eof, err));
        if (*eof) return PCH_OK;
        r->in_batch = true;
        r->next_ex = 0;
    }
    pch_buf_clear(o);
    for (k = r->next_ex; k < b->n_examples && (k == r->next_ex || o->len < SFT_LINES_BYTES); k++) {
        const pch_vxp_sft_example *e = &b->examples[k];
        size_t m0 = msg_start(b, e->message), m1 = b->message_end[e->message];
        if (r->format == PCH_VXP_SFT_MESSAGES) {
            pch_buf_append_str(o, "{\"messages\":[");
            pch_buf_append(o, b->messages, m1);
            pch_buf_append_str(o, "],\"tools\":");
            pch_buf_append(o, b->tools, b->tools_len);
            pch_buf_append_str(o, "}\n");
            continue;
        }
        pch_buf_append_str(o, "{\"source_id\":");
        pch_json__write_string(o, b->source_id, b->source_id_len);
        pch_buf_append_str(o, ",\"run_id\":");
        pch_json__write_string(o, b->run_key, b->run_key_len);
        pch_buf_append_str(o, ",\"trajectory_key\":");
        pch_json__write_string(o, b->trajectory_key, b->trajectory_key_len);
        pch_buf_printf(o, ",\"step_ordinal\":%" PRIu64 ",", e->step_ordinal);
        pch_buf_append(o, r->meta.data + r->ex_at[k].meta, r->ex_at[k].meta_len);
        pch_buf_append_str(o, ",\"messages\":[");
        pch_buf_append(o, b->messages, m0 ? m0 - 1 : 0);
        pch_buf_append_str(o, "],\"completion\":");
        pch_buf_append(o, b->messages + m0, m1 - m0);
        pch_buf_append_str(o, "}\n");
    }
    if (o->oom) return nomem(err);
    *text = (const char *)o->data;
    *len = o->len;
    *n = k - r->next_ex;
    r->next_ex = k;
    if (k == b->n_examples) r->in_batch = false;
    return PCH_OK;
}
