/* The relations of a Vortex projection as Arrow C streams (RFC-0006 §13.1; docs/sql.md
** "Arrow streams"): runs, steps or tool_calls, the columns asked for, one struct batch per
** cluster (narrow scans straight from the lanes) or per document (every other column set),
** with the values the SQL relations give. Built on the Vortex side (src/sql/vx_source.c's
** document source); the consumer pulls batches, which bounds memory to one of them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/core.h"
#include "pchronicle/arrow.h"
#include "pchronicle/json.h"
#include "pchronicle-vortex/projection.h"
#include "sql/sql_int.h"

/* The private data of every stream below starts with its last error (stream_error). */
static const char *stream_error(struct ArrowArrayStream *s)
{
    const pch_error *e = s->private_data;
    return e->msg[0] ? e->msg : NULL;
}

static void stream_init(struct ArrowArrayStream *out, void *x, void (*release)(struct ArrowArrayStream *),
                        int (*schema)(struct ArrowArrayStream *, struct ArrowSchema *),
                        int (*next)(struct ArrowArrayStream *, struct ArrowArray *))
{
    out->private_data = x;
    out->release = release;
    out->get_schema = schema;
    out->get_next = next;
    out->get_last_error = stream_error;
}

typedef struct vx_stream {
    pch_error err;                    /* first: stream_error */
    pch_ctx *ctx;
    const pch_sql_doc_source *src;
    void *h;
    pch_storyline_table t;
    pch_lance_schema *schema;
    int cols[64];
    int n_cols;
    pch_sql_lanes *lanes;             /* narrow scan, or NULL: documents */
    pch_storyline_rowgen *gen;
    uint64_t pos;
    bool done;
    bool traj;                        /* the trajectories relation */
    bool content;                     /* a content column is asked for (late hydration) */
    bool vec;                         /* a narrow steps/tool_calls scan: batches from its vectors */
    bool dict[64];                    /* column i as a dictionary array */
    pch_sql_vec v[64];
} vx_stream;

/* The names a consumer groups and filters by go out as dictionary arrays (int32 codes into
** the batch's distinct values): the identity columns, source, model and function names. */
static bool dict_column(pch_storyline_table t, const char *name)
{
    static const char *const names[] = { "source_id", "run_id", "session_id", "trajectory_key", "source",
                                         "model_name", "function_name" };
    if (pch_sql__vx_lane_kind(t, name) != 's') return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) if (strcmp(name, names[i]) == 0) return true;
    return false;
}

static int st_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    vx_stream *x = s->private_data;
    return pch_sql__arrow_schema(x->schema, x->cols, x->n_cols, x->vec ? x->dict : NULL, out, &x->err) < 0 ? EIO : 0;
}

static int st_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    vx_stream *x = s->private_data;
    const pch_lance_batch *b = NULL;
    memset(out, 0, sizeof *out);
    while (!x->done && x->vec) {
        bool eof = false;
        uint64_t n = 0;
        if (pch_sql__vx_vec_next(x->lanes, x->v, &n, &eof, &x->err) < 0) return EIO;
        if (eof) { x->done = true; break; }
        if (n) return pch_sql__arrow_from_vecs(x->v, x->schema, x->cols, x->n_cols, x->dict, (size_t)n, out, &x->err) < 0 ? EIO : 0;
    }
    while (!x->done) {
        bool eof = false;
        int rc;
        if (x->lanes) {
            rc = x->src->lanes_next(x->lanes, &b, &eof, &x->err);
        } else {
            pch_storyline_rowgen_reset(x->gen);
            rc = x->src->next(x->h, &x->pos, x->gen, x->content, &eof, &x->err);
            if (rc == 0 && !eof) rc = pch_storyline_rowgen_batch(x->gen, x->t, &b, &x->err);
        }
        if (rc < 0) return EIO;
        if (eof) { x->done = true; break; }
        if (b && b->n_rows) return pch_sql__arrow_from_batch(b, x->cols, x->n_cols, x->ctx, out, &x->err) < 0 ? EIO : 0;
    }
    return 0;                         /* out->release NULL: the end of the stream */
}

static void st_release(struct ArrowArrayStream *s)
{
    vx_stream *x = s->private_data;
    if (!s->release) return;
    if (x->lanes) x->src->lanes_close(x->lanes);
    pch_storyline_rowgen_free(x->gen);
    if (x->h) x->src->close(x->h);
    pch_lance_schema_free(x->schema);
    pch_ctx_free(x->ctx);
    free(x);
    s->release = NULL;
}

/* ---- observation_results: its rows come from the virtual table (vtab.c expands each
** results array), read through SQLite and batched 1,024 rows at a time ---- */

static const char *const k_obs_names[] = { "source_id", "run_id", "session_id", "trajectory_key", "step_ordinal",
                                           "step_id", "call_ordinal", "result_index", "source_call_id", "content" };
#define OBS_COLS 10

typedef struct obs_stream_t {
    pch_error err;                    /* first: stream_error */
    sqlite3 *db;
    sqlite3_stmt *st;
    int cols[OBS_COLS], n_cols;
    pch_sql_acol col[OBS_COLS];
    const char *names[OBS_COLS];
    bool done;
} obs_stream_t;

static bool obs_is_int(int c) { return c >= 4 && c <= 7; }

static int obs_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    obs_stream_t *x = s->private_data;
    return pch_sql__acol_schema(x->names, x->col, x->n_cols, out, &x->err) < 0 ? EIO : 0;
}

static int obs_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    obs_stream_t *x = s->private_data;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < x->n_cols; i++) pch_sql__acol_clear(&x->col[i]);
    while (!x->done && n < 1024) {
        int rc = sqlite3_step(x->st);
        if (rc == SQLITE_DONE) { x->done = true; break; }
        if (rc != SQLITE_ROW) {
            pch_error_set(&x->err, PCH_EIO, "arrow: observation_results: %s", sqlite3_errmsg(x->db));
            return EIO;
        }
        for (int i = 0; i < x->n_cols; i++) {
            bool null = sqlite3_column_type(x->st, i) == SQLITE_NULL;
            if (obs_is_int(x->cols[i])) rc = pch_sql__acol_i64(&x->col[i], sqlite3_column_int64(x->st, i), !null);
            else rc = pch_sql__acol_str(&x->col[i], (const char *)sqlite3_column_text(x->st, i),
                                        (size_t)sqlite3_column_bytes(x->st, i), !null);
            if (rc < 0) { pch_error_set(&x->err, PCH_ENOMEM, "arrow: out of memory"); return ENOMEM; }
        }
        n++;
    }
    if (n == 0) return 0;             /* out->release NULL: the end of the stream */
    return pch_sql__acol_batch(x->col, x->n_cols, n, out, &x->err) < 0 ? EIO : 0;
}

static void obs_release(struct ArrowArrayStream *s)
{
    obs_stream_t *x = s->private_data;
    if (!s->release) return;
    sqlite3_finalize(x->st);
    sqlite3_close(x->db);
    for (int i = 0; i < OBS_COLS; i++) pch_sql__acol_dispose(&x->col[i]);
    free(x);
    s->release = NULL;
}

static int obs_stream(const char *root, const char *const *columns, size_t n_columns, struct ArrowArrayStream *out,
                      pch_error *err)
{
    obs_stream_t *x = calloc(1, sizeof *x);
    pch_buf q;
    char *msg = NULL;
    int rc;
    if (!x) return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
    for (int i = 0; i < OBS_COLS; i++) pch_sql__acol_init(&x->col[i], 'U');
    stream_init(out, x, obs_release, obs_schema, obs_next);
    for (size_t i = 0; i < (columns ? n_columns : OBS_COLS); i++) {
        int c = -1;
        for (int k = 0; k < OBS_COLS && columns; k++) if (strcmp(columns[i], k_obs_names[k]) == 0) c = k;
        if (!columns) c = (int)i;
        if (c < 0 || x->n_cols == OBS_COLS) {
            rc = pch_error_set(err, PCH_EINVAL, "arrow: observation_results has no column %s", columns[i]);
            obs_release(out);
            return rc;
        }
        x->cols[x->n_cols] = c;
        x->names[x->n_cols] = k_obs_names[c];
        x->col[x->n_cols].kind = obs_is_int(c) ? 'l' : 'U';
        x->n_cols++;
    }
    if (sqlite3_open_v2(":memory:", &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        pch_vxp_sql_register(x->db) != SQLITE_OK) {
        rc = pch_error_set(err, PCH_ENOMEM, "arrow: cannot open SQLite");
        obs_release(out);
        return rc;
    }
    pch_buf_init(&q, NULL);
    {
        char *ct = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.o USING vortex(%Q, 'observation_results')", root);
        rc = ct ? sqlite3_exec(x->db, ct, NULL, NULL, &msg) : SQLITE_NOMEM;
        sqlite3_free(ct);
    }
    pch_buf_printf(&q, "SELECT ");
    for (int i = 0; i < x->n_cols; i++) pch_buf_printf(&q, "%s%s", i ? ", " : "", x->names[i]);
    pch_buf_printf(&q, " FROM temp.o");
    if (rc == SQLITE_OK && (q.oom || pch_buf_putc(&q, 0) < 0)) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(x->db, (const char *)q.data, -1, &x->st, NULL);
    pch_buf_dispose(&q);
    if (rc != SQLITE_OK) {
        rc = pch_error_set(err, PCH_EINVAL, "arrow: observation_results of %s: %s", root, msg ? msg : sqlite3_errmsg(x->db));
        sqlite3_free(msg);
        obs_release(out);
        return rc;
    }
    return PCH_OK;
}

/* ---- the training readers (§13.5) as Arrow streams: one batch per reader batch ---- */

typedef struct train_stream {
    pch_error err;                    /* first: stream_error */
    pch_ctx *ctx;
    pch_vxp_snapshot *snap;
    pch_vxp_rl_reader *rl;
    pch_vxp_sft_reader *sft;
    pch_json_parser *jp;
    pch_vxp_train_filter f;           /* with owned copies of its strings */
    char *strs;
    const char **keys;
    pch_sql_acol col[10];
    int n_cols;
} train_stream;

static const char *const k_rl_names[] = { "source_id", "run_id", "trajectory_key", "step_ordinal", "step_id",
                                          "model_name", "prompt_token_ids", "completion_token_ids", "logprobs",
                                          "reward" };
static const char k_rl_kinds[] = "UUUllUIIGU";
static const char *const k_sft_names[] = { "source_id", "run_id", "trajectory_key", "step_ordinal", "step_id",
                                           "model_name", "messages", "completion" };
static const char k_sft_kinds[] = "UUUllUUU";

static int tr_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    train_stream *x = s->private_data;
    return pch_sql__acol_schema(x->rl ? k_rl_names : k_sft_names, x->col, x->n_cols, out, &x->err) < 0 ? EIO : 0;
}

static int rl_rows(train_stream *x, const pch_vxp_rl_step *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const pch_vxp_rl_step *p = &st[i];
        PCH_TRY(pch_sql__acol_str(&x->col[0], p->source_id, p->source_id_len, true));
        PCH_TRY(pch_sql__acol_str(&x->col[1], p->run_key, p->run_key_len, true));
        PCH_TRY(pch_sql__acol_str(&x->col[2], p->trajectory_key, p->trajectory_key_len, true));
        PCH_TRY(pch_sql__acol_i64(&x->col[3], (int64_t)p->step_ordinal, true));
        PCH_TRY(pch_sql__acol_i64(&x->col[4], p->step_id, p->has_step_id));
        PCH_TRY(pch_sql__acol_str(&x->col[5], p->model_name, p->model_name_len, p->model_name != NULL));
        PCH_TRY(pch_sql__acol_list(&x->col[6], p->prompt_ids, p->n_prompt, 32, p->has_prompt));
        PCH_TRY(pch_sql__acol_list(&x->col[7], p->completion_ids, p->n_completion, 32, true));
        PCH_TRY(pch_sql__acol_list(&x->col[8], p->logprobs, p->n_logprobs, p->logprob_bits, p->logprob_bits != 0));
        PCH_TRY(pch_sql__acol_str(&x->col[9], p->reward_json, p->reward_len, p->reward_json != NULL));
    }
    return PCH_OK;
}

/* The examples of one SFT batch (JSON lines) as rows. */
static int sft_rows(train_stream *x, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const pch_json_value *v;
        if (n) {
            PCH_TRY(pch_json_parser_parse(x->jp, p, n, &v, &x->err));
            for (int c = 0; c < x->n_cols; c++) {
                const pch_json_value *m = pch_json_get(v, k_sft_names[c], strlen(k_sft_names[c]));
                bool valid = m && m->kind != PCH_JSON_NULL;
                int rc;
                if (c == 3 || c == 4) rc = pch_sql__acol_i64(&x->col[c], valid ? m->u.num.i : 0, valid);
                else if (c < 6) rc = pch_sql__acol_str(&x->col[c], valid ? m->u.str.ptr : NULL, valid ? m->u.str.len : 0, valid);
                else rc = pch_sql__acol_str(&x->col[c], valid ? p + m->span_off : NULL, valid ? m->span_len : 0, valid);
                if (rc < 0) return pch_error_set(&x->err, PCH_ENOMEM, "arrow: out of memory");
            }
        }
        p += n + 1;
    }
    return PCH_OK;
}

static int tr_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    train_stream *x = s->private_data;
    memset(out, 0, sizeof *out);
    for (;;) {
        bool eof = false;
        size_t n = 0;
        int rc;
        for (int i = 0; i < x->n_cols; i++) pch_sql__acol_clear(&x->col[i]);
        if (x->rl) {
            const pch_vxp_rl_step *st;
            rc = pch_vxp_rl_next(x->rl, &st, &n, &eof, &x->err);
            if (rc == 0 && !eof && rl_rows(x, st, n) < 0) rc = pch_error_set(&x->err, PCH_ENOMEM, "arrow: out of memory");
        } else {
            const char *text;
            size_t len;
            rc = pch_vxp_sft_next(x->sft, &text, &len, &n, &eof, &x->err);
            if (rc == 0 && !eof) rc = sft_rows(x, text, len);
            if (rc == 0 && !eof) n = x->col[0].valid.len;
        }
        if (rc < 0) return EIO;
        if (eof) return 0;            /* out->release NULL: the end of the stream */
        if (n) return pch_sql__acol_batch(x->col, x->n_cols, n, out, &x->err) < 0 ? EIO : 0;
    }
}

static void tr_release(struct ArrowArrayStream *s)
{
    train_stream *x = s->private_data;
    if (!s->release) return;
    pch_vxp_rl_free(x->rl);
    pch_vxp_sft_free(x->sft);
    pch_json_parser_free(x->jp);
    pch_vxp_snapshot_free(x->snap);
    for (int i = 0; i < 10; i++) pch_sql__acol_dispose(&x->col[i]);
    free(x->strs);
    free(x->keys);
    pch_ctx_free(x->ctx);
    free(x);
    s->release = NULL;
}

/* x->f = *f with every string copied into x->strs (the stream outlives the caller's filter). */
static int copy_filter(train_stream *x, const pch_vxp_train_filter *f, pch_error *err)
{
    size_t total = 0, at = 0;
    const char *one[2];
    if (!f) return PCH_OK;
    x->f = *f;
    one[0] = f->source_id;
    one[1] = f->model;
    for (int i = 0; i < 2; i++) if (one[i]) total += strlen(one[i]) + 1;
    for (size_t i = 0; i < f->n_run_keys; i++) total += strlen(f->run_keys[i]) + 1;
    if (!(x->strs = malloc(total ? total : 1)) || !(x->keys = calloc(f->n_run_keys ? f->n_run_keys : 1, sizeof *x->keys)))
        return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
#define COPY(dst, src) do { size_t n_ = strlen(src) + 1; memcpy(x->strs + at, (src), n_); (dst) = x->strs + at; at += n_; } while (0)
    if (f->source_id) COPY(x->f.source_id, f->source_id);
    if (f->model) COPY(x->f.model, f->model);
    for (size_t i = 0; i < f->n_run_keys; i++) COPY(x->keys[i], f->run_keys[i]);
#undef COPY
    x->f.run_keys = x->keys;
    return PCH_OK;
}

static int train_stream_open(const char *root, const pch_vxp_train_filter *f, bool rl, struct ArrowArrayStream *out,
                             pch_error *err)
{
    train_stream *x = calloc(1, sizeof *x);
    const char *kinds = rl ? k_rl_kinds : k_sft_kinds;
    int rc;
    memset(out, 0, sizeof *out);
    if (!x) return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
    x->n_cols = (int)strlen(kinds);
    for (int i = 0; i < 10; i++) pch_sql__acol_init(&x->col[i], i < x->n_cols ? kinds[i] : 'U');
    stream_init(out, x, tr_release, tr_schema, tr_next);
    if ((rc = copy_filter(x, f, err)) < 0 || (rc = pch_ctx_new(&x->ctx, NULL, NULL, err)) < 0 ||
        (rc = pch_vxp_snapshot_open(&x->snap, x->ctx, root, err)) < 0 ||
        (rc = rl ? pch_vxp_rl_open(&x->rl, x->snap, f ? &x->f : NULL, err)
                 : pch_vxp_sft_open(&x->sft, x->snap, f ? &x->f : NULL, err)) < 0 ||
        (!rl && (rc = pch_json_parser_new(&x->jp, x->ctx, NULL, err)) < 0)) {
        tr_release(out);
        return rc;
    }
    return PCH_OK;
}

int pch_vxp_arrow_rl(const char *root, const pch_vxp_train_filter *f, struct ArrowArrayStream *out, pch_error *err)
{
    return train_stream_open(root, f, true, out, err);
}

int pch_vxp_arrow_sft(const char *root, const pch_vxp_train_filter *f, struct ArrowArrayStream *out, pch_error *err)
{
    return train_stream_open(root, f, false, out, err);
}

int pch_vxp_arrow_relation(const char *root, const char *relation, const char *const *columns, size_t n_columns,
                           struct ArrowArrayStream *out, pch_error *err)
{
    vx_stream *x;
    uint64_t used = 0;
    int rc;
    memset(out, 0, sizeof *out);
    if (strcmp(relation, "observation_results") == 0) return obs_stream(root, columns, n_columns, out, err);
    if (!(x = calloc(1, sizeof *x))) return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
    if (strcmp(relation, "runs") == 0) x->t = PCH_STORYLINE_RUNS;
    else if (strcmp(relation, "steps") == 0) x->t = PCH_STORYLINE_STEPS;
    else if (strcmp(relation, "tool_calls") == 0) x->t = PCH_STORYLINE_TOOL_CALLS;
    else if (strcmp(relation, "trajectories") == 0) x->traj = true;
    else {
        free(x);
        return pch_error_set(err, PCH_EINVAL, "arrow: no relation %s (runs, steps, tool_calls, observation_results or "
                                              "trajectories)", relation);
    }
    x->src = pch_sql__vortex_source();
    if ((rc = pch_ctx_new(&x->ctx, NULL, NULL, err)) < 0) { free(x); return rc; }
    stream_init(out, x, st_release, st_schema, st_next);
    if (x->traj) {                    /* the summaries: schema and lanes from the source */
        if ((rc = x->src->open(&x->h, x->ctx, root, err)) < 0 || (rc = x->src->traj_schema(x->h, &x->schema, err)) < 0)
            goto fail;
    } else if ((rc = pch_storyline_table_schema(x->ctx, x->t, &x->schema, err)) < 0) {
        goto fail;
    }
    if (!columns) {
        for (size_t i = 0; i < x->schema->n_fields && i < 64; i++) x->cols[x->n_cols++] = (int)i;
    } else {
        for (size_t i = 0; i < n_columns; i++) {
            long fi = pch_lance_schema_find(x->schema, columns[i]);
            if (fi < 0 || fi >= 63 || x->n_cols == 64) {
                rc = pch_error_set(err, PCH_EINVAL, "arrow: %s has no column %s", relation, columns[i]);
                goto fail;
            }
            x->cols[x->n_cols++] = (int)fi;
        }
    }
    for (int i = 0; i < x->n_cols; i++) {
        used |= (uint64_t)1 << x->cols[i];
        x->content = x->content || pch_sql__content_column(x->schema->fields[x->cols[i]].name);
    }
    if (x->traj) {
        if ((rc = x->src->traj_open(x->h, &x->lanes, err)) < 0) goto fail;
        return PCH_OK;
    }
    if ((rc = x->src->open(&x->h, x->ctx, root, err)) < 0) goto fail;
    if ((rc = x->src->lanes_open(x->h, x->t, used, NULL, 0, &x->lanes, err)) < 0) goto fail;
    if (x->lanes && (x->t == PCH_STORYLINE_STEPS || x->t == PCH_STORYLINE_TOOL_CALLS)) {
        x->vec = true;
        for (int i = 0; i < x->n_cols; i++) x->dict[i] = dict_column(x->t, x->schema->fields[x->cols[i]].name);
    }
    if (!x->lanes &&
        (rc = pch_storyline_rowgen_new(&x->gen, x->ctx, 0, x->src->asset_mode(x->h), x->src->assets, x->h, err)) < 0)
        goto fail;
    return PCH_OK;
fail:
    st_release(out);
    return rc;
}
