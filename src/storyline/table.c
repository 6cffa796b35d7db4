/* Storyline tables: the column contract (docs/storyline.md §2), the row builder used by
** the importer and the row cursor used by every reader, and opening a root at the table
** versions its CURRENT pins (docs/storyline.md §3; RFC-0006 §2.1). Invariant: a builder
** holds n_rows complete rows (every column the same length) after each pch_sl__row_end. */
#include "storyline/storyline.h"
#include "json/json.h"

#define U8 PCH_LANCE_UTF8
#define I32 PCH_LANCE_INT32
#define I64 PCH_LANCE_INT64
#define F64 PCH_LANCE_FLOAT64
#define BOOL PCH_LANCE_BOOL
#define JSON PCH_LANCE_JSON
#define IDENTITY { "source_id", U8, false }, { "run_id", U8, false }, \
                 { "session_id", U8, true }, { "trajectory_key", U8, false }

static const pch_sl_coldef k_runs[R_N] = {
    IDENTITY,
    { "doc_path", U8, false }, { "preorder", I32, false },
    { "parent_trajectory_key", U8, true }, { "parent_local_ordinal", I32, true },
    { "run_key_generated", BOOL, false }, { "trajectory_key_generated", BOOL, false },
    { "schema_version", U8, true }, { "trajectory_id", U8, true },
    { "agent_name", U8, true }, { "agent_version", U8, true }, { "agent_model_name", U8, true },
    { "agent", JSON, true }, { "notes", JSON, true }, { "final_metrics", JSON, true },
    { "continued_trajectory_ref", JSON, true }, { "extra", JSON, true },
    { "raw_members", JSON, true }, { "has_steps", BOOL, false },
    { "has_subagent_trajectories", BOOL, false }, { "n_steps", I64, false },
    { "state", U8, false }, { "projection_warnings", JSON, false },
    { "first_timestamp_ms", I64, true }, { "last_timestamp_ms", I64, true },
};
static const pch_sl_coldef k_steps[S_N] = {
    IDENTITY,
    { "step_ordinal", I32, false }, { "step_id", I64, true }, { "timestamp_ms", I64, true },
    { "timestamp", U8, true }, { "source", U8, true }, { "model_name", U8, true },
    { "reasoning_effort", JSON, true }, { "message", JSON, true },
    { "message_object", U8, true }, { "reasoning_content", U8, true },
    { "reasoning_content_object", U8, true }, { "prompt_tokens", I64, true },
    { "completion_tokens", I64, true }, { "cached_tokens", I64, true },
    { "cost_usd", F64, true }, { "metrics_extra", JSON, true },
    { "llm_call_count", I64, true }, { "is_copied_context", BOOL, true },
    { "extra", JSON, true }, { "has_tool_calls", BOOL, false },
    { "n_tool_calls", I32, false }, { "observation_extra", JSON, true },
    { "has_observation_results", BOOL, false }, { "observation_results", JSON, true },
    { "observation_results_object", U8, true }, { "result_call_ordinals", JSON, true },
    { "assets", JSON, true }, { "raw_members", JSON, true },
};
static const pch_sl_coldef k_calls[C_N] = {
    IDENTITY,
    { "step_ordinal", I32, false }, { "step_id", I64, true }, { "call_ordinal", I32, false },
    { "tool_call_id", U8, true }, { "function_name", U8, true }, { "arguments", JSON, true },
    { "arguments_object", U8, true }, { "extra", JSON, true }, { "results", JSON, true },
    { "results_object", U8, true }, { "raw_members", JSON, true },
};
static const pch_sl_coldef k_objects[O_N] = {
    { "object_id", U8, false }, { "kind", U8, false }, { "media_type", U8, true },
    { "path", U8, true }, { "size", I64, false }, { "data", PCH_LANCE_LARGE_BINARY, false },
};

const pch_sl_coldef *pch_sl__columns(pch_storyline_table t, size_t *n)
{
    switch (t) {
    case PCH_STORYLINE_RUNS: *n = R_N; return k_runs;
    case PCH_STORYLINE_STEPS: *n = S_N; return k_steps;
    case PCH_STORYLINE_TOOL_CALLS: *n = C_N; return k_calls;
    case PCH_STORYLINE_OBJECTS: *n = O_N; return k_objects;
    default: *n = 0; return NULL;
    }
}

const char *pch_storyline_table_name(pch_storyline_table t)
{
    static const char *const names[] = { "runs", "steps", "tool_calls", "objects" };
    return (unsigned)t < PCH_STORYLINE_N_TABLES ? names[t] : NULL;
}

const char *pch_sl__dir(pch_storyline_table t)
{
    static const char *const dirs[] = { "runs.lance", "steps.lance", "tool_calls.lance",
                                        "objects.lance" };
    return (unsigned)t < PCH_STORYLINE_N_TABLES ? dirs[t] : NULL;
}

int pch_sl__schema(pch_lance_schema **out, pch_ctx *ctx, pch_storyline_table t, pch_error *err)
{
    size_t n;
    const pch_sl_coldef *d = pch_sl__columns(t, &n);
    pch_lance_schema *s = NULL;
    int rc;
    *out = NULL;
    PCH_TRY(pch_lance_schema_new(&s, ctx, err));
    for (size_t i = 0; i < n; i++) {
        rc = pch_lance_schema_add_field(s, d[i].name, d[i].type, d[i].nullable, err);
        if (rc < 0) { pch_lance_schema_free(s); return rc; }
    }
    rc = pch_lance_schema_add_metadata(s, SIZE_MAX, "pchronicle.format", PCH_SL_FORMAT,
                                       strlen(PCH_SL_FORMAT), err);
    if (rc == PCH_OK) {
        const char *tn = pch_storyline_table_name(t);
        rc = pch_lance_schema_add_metadata(s, SIZE_MAX, "pchronicle.storyline.table", tn,
                                           strlen(tn), err);
    }
    if (rc < 0) { pch_lance_schema_free(s); return rc; }
    *out = s;
    return PCH_OK;
}

/* ---- builder ---- */

void pch_sl__builder_init(pch_sl_builder *b, pch_ctx *ctx, pch_storyline_table t)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->table = t;
    b->defs = pch_sl__columns(t, &b->n_cols);
    assert(b->n_cols <= PCH_SL_MAX_COLS);
    for (size_t i = 0; i < b->n_cols; i++) {
        pch_buf_init(&b->cols[i].val, ctx);
        pch_buf_init(&b->cols[i].off, ctx);
        pch_buf_init(&b->cols[i].data, ctx);
        pch_buf_init(&b->cols[i].valid, ctx);
    }
}

void pch_sl__builder_dispose(pch_sl_builder *b)
{
    for (size_t i = 0; i < b->n_cols; i++) {
        pch_buf_dispose(&b->cols[i].val);
        pch_buf_dispose(&b->cols[i].off);
        pch_buf_dispose(&b->cols[i].data);
        pch_buf_dispose(&b->cols[i].valid);
    }
}

void pch_sl__builder_reset(pch_sl_builder *b)
{
    for (size_t i = 0; i < b->n_cols; i++) {
        pch_buf_clear(&b->cols[i].val);
        pch_buf_clear(&b->cols[i].off);
        pch_buf_clear(&b->cols[i].data);
        pch_buf_clear(&b->cols[i].valid);
        b->cols[i].n = 0;
    }
    b->n_rows = 0;
    b->data_bytes = 0;
}

static pch_sl_col *col_for(pch_sl_builder *b, size_t c, bool var)
{
    if (b->rc < 0) return NULL;
    if (c >= b->n_cols || pch_lance_type_is_var(b->defs[c].type) != var) {
        b->rc = PCH_EINVAL;          /* internal misuse: caught by row_end */
        return NULL;
    }
    return &b->cols[c];
}

static void latch(pch_sl_builder *b, int rc) { if (rc < 0 && b->rc == 0) b->rc = rc; }

static void put_fixed(pch_sl_builder *b, size_t c, const void *v, size_t w, bool valid)
{
    pch_sl_col *col = col_for(b, c, false);
    if (!col) return;
    if (valid) latch(b, pch_buf_append(&col->val, v, w));
    else latch(b, pch_buf_zero(&col->val, w));
    latch(b, pch_buf_putc(&col->valid, valid ? 1 : 0));
    col->n++;
}

static void put_var(pch_sl_builder *b, size_t c, const void *p, size_t n, bool valid)
{
    pch_sl_col *col = col_for(b, c, true);
    if (!col) return;
    if (col->off.len == 0) latch(b, pch_buf_put_le64(&col->off, 0));
    if (valid && n) latch(b, pch_buf_append(&col->data, p, n));
    latch(b, pch_buf_put_le64(&col->off, (uint64_t)col->data.len));
    latch(b, pch_buf_putc(&col->valid, valid ? 1 : 0));
    b->data_bytes += valid ? n : 0;
    col->n++;
}

void pch_sl__put_null(pch_sl_builder *b, size_t c)
{
    if (c < b->n_cols && pch_lance_type_is_var(b->defs[c].type)) put_var(b, c, NULL, 0, false);
    else if (c < b->n_cols) put_fixed(b, c, NULL, pch_lance_type_width(b->defs[c].type) ? pch_lance_type_width(b->defs[c].type) : 1, false);
    else latch(b, PCH_EINVAL);
}
void pch_sl__put_str(pch_sl_builder *b, size_t c, const char *s) { put_var(b, c, s, s ? strlen(s) : 0, s != NULL); }
void pch_sl__put_bytes(pch_sl_builder *b, size_t c, const void *p, size_t n) { put_var(b, c, p, n, true); }
void pch_sl__put_i64(pch_sl_builder *b, size_t c, int64_t v)
{
    if (c < b->n_cols && b->defs[c].type != PCH_LANCE_INT64) { latch(b, PCH_EINVAL); return; }
    put_fixed(b, c, &v, 8, true);
}
void pch_sl__put_i32(pch_sl_builder *b, size_t c, int32_t v)
{
    if (c < b->n_cols && b->defs[c].type != PCH_LANCE_INT32) { latch(b, PCH_EINVAL); return; }
    put_fixed(b, c, &v, 4, true);
}
void pch_sl__put_f64(pch_sl_builder *b, size_t c, double v)
{
    if (c < b->n_cols && b->defs[c].type != PCH_LANCE_FLOAT64) { latch(b, PCH_EINVAL); return; }
    put_fixed(b, c, &v, 8, true);
}
void pch_sl__put_bool(pch_sl_builder *b, size_t c, bool v)
{
    uint8_t x = v ? 1 : 0;
    if (c < b->n_cols && b->defs[c].type != PCH_LANCE_BOOL) { latch(b, PCH_EINVAL); return; }
    put_fixed(b, c, &x, 1, true);
}

int pch_sl__row_end(pch_sl_builder *b)
{
    if (b->rc < 0) return b->rc;
    b->n_rows++;
    for (size_t i = 0; i < b->n_cols; i++)
        if (b->cols[i].n != b->n_rows) { b->rc = PCH_EINVAL; return b->rc; }
    return PCH_OK;
}

int pch_sl__batch(pch_sl_builder *b, pch_lance_batch *batch, pch_lance_column *cols)
{
    if (b->rc < 0) return b->rc;
    for (size_t i = 0; i < b->n_cols; i++) {
        pch_sl_col *c = &b->cols[i];
        memset(&cols[i], 0, sizeof cols[i]);
        cols[i].type = b->defs[i].type;
        cols[i].n_rows = b->n_rows;
        cols[i].validity = c->valid.data;
        if (pch_lance_type_is_var(b->defs[i].type)) {
            if (c->off.len == 0) { b->rc = pch_buf_put_le64(&c->off, 0); if (b->rc < 0) return b->rc; }
            if (!c->data.data) { b->rc = pch_buf_reserve(&c->data, 1); if (b->rc < 0) return b->rc; }
            cols[i].offsets = (const uint64_t *)(const void *)c->off.data;
            cols[i].data = c->data.data;
        } else {
            if (!c->val.data) { b->rc = pch_buf_reserve(&c->val, 8); if (b->rc < 0) return b->rc; }
            cols[i].values = c->val.data;
        }
    }
    batch->n_rows = b->n_rows;
    batch->n_columns = b->n_cols;
    batch->columns = cols;
    return PCH_OK;
}

/* ---- cursor ---- */

static int cursor_open(pch_sl_cursor *c, pch_storyline_root *r, pch_storyline_table t,
                       const int *want, size_t n, const uint64_t *rows, size_t n_rows,
                       bool use_rows, pch_error *err)
{
    pch_lance_dataset *ds = pch_storyline_dataset(r, t);
    const pch_lance_schema *s;
    size_t proj[PCH_SL_MAX_COLS], n_proj = 0;
    memset(c, 0, sizeof *c);
    c->defs = pch_sl__columns(t, &c->n_defs);
    for (size_t i = 0; i < PCH_SL_MAX_COLS; i++) c->map[i] = -1;
    if (!ds) return pch_error_set(err, PCH_ENOTFOUND, "storyline: no table %s", pch_storyline_table_name(t));
    s = pch_lance_dataset_schema(ds);
    for (size_t i = 0; i < (want ? n : c->n_defs); i++) {
        int col = want ? want[i] : (int)i;
        long fi;
        if (col < 0 || (size_t)col >= c->n_defs) return pch_error_set(err, PCH_EINVAL, "storyline: bad column %d", col);
        if (c->map[col] >= 0) continue;
        fi = pch_lance_schema_find(s, c->defs[col].name);
        if (fi < 0 || s->fields[fi].type != c->defs[col].type)
            return pch_error_set(err, PCH_ECORRUPT, "storyline: table %s: column '%s' missing or of another type",
                                 pch_storyline_table_name(t), c->defs[col].name);
        c->map[col] = (int)n_proj;
        proj[n_proj++] = (size_t)fi;
    }
    if (use_rows) return pch_lance_scanner_open_rows(&c->sc, ds, proj, n_proj, rows, n_rows, 4096, err);
    return pch_lance_scanner_open(&c->sc, ds, proj, n_proj, 4096, err);
}

int pch_sl__cursor_open(pch_sl_cursor *c, pch_storyline_root *r, pch_storyline_table t,
                        const int *want, size_t n, pch_error *err)
{
    return cursor_open(c, r, t, want, n, NULL, 0, false, err);
}

int pch_sl__cursor_open_rows(pch_sl_cursor *c, pch_storyline_root *r, pch_storyline_table t,
                             const int *want, size_t n, const uint64_t *rows, size_t n_rows,
                             pch_error *err)
{
    return cursor_open(c, r, t, want, n, rows, n_rows, true, err);
}

/* Row indices of table t whose string column `col` equals one of keys[0..n_keys) (scans
** only that column). */
int pch_sl__find_rows(pch_storyline_root *r, pch_storyline_table t, int col,
                      const char *const *keys, size_t n_keys, uint64_t **rows_out,
                      size_t *n_out, pch_error *err)
{
    pch_sl_cursor c;
    uint64_t *rows = NULL, at = 0;
    size_t n = 0, cap = 0;
    int rc;
    *rows_out = NULL;
    *n_out = 0;
    rc = pch_sl__cursor_open(&c, r, t, &col, 1, err);
    while (rc == PCH_OK && (rc = pch_sl__cursor_next(&c, err)) == 1) {
        const char *p;
        size_t pn;
        bool hit = false;
        rc = PCH_OK;
        if (pch_sl__get_str(&c, col, &p, &pn))
            for (size_t k = 0; k < n_keys && !hit; k++)
                hit = strlen(keys[k]) == pn && memcmp(keys[k], p, pn) == 0;
        if (hit) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 64, bytes;
                uint64_t *nr;
                if (!pch_mul_size(&bytes, nc, sizeof *nr) || !(nr = pch_realloc(pch_sl__root_ctx(r), rows, bytes))) {
                    rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
                    break;
                }
                rows = nr;
                cap = nc;
            }
            rows[n++] = at;
        }
        at++;
    }
    pch_sl__cursor_close(&c);
    if (rc < 0) { pch_free(pch_sl__root_ctx(r), rows); return rc; }
    *rows_out = rows;
    *n_out = n;
    return PCH_OK;
}

void pch_sl__cursor_close(pch_sl_cursor *c)
{
    pch_lance_scanner_free(c->sc);
    c->sc = NULL;
}

int pch_sl__cursor_next(pch_sl_cursor *c, pch_error *err)
{
    if (c->done) return 0;
    if (c->batch && c->row + 1 < c->batch->n_rows) { c->row++; return 1; }
    for (;;) {
        int rc = pch_lance_scanner_next(c->sc, &c->batch, err);
        if (rc == PCH_ITEROVER) { c->done = true; c->batch = NULL; return 0; }
        if (rc < 0) return rc;
        c->row = 0;
        if (c->batch->n_rows > 0) return 1;
    }
}

static const pch_lance_column *cell(const pch_sl_cursor *c, int col)
{
    const pch_lance_column *lc;
    if (!c->batch || col < 0 || col >= PCH_SL_MAX_COLS || c->map[col] < 0) return NULL;
    lc = &c->batch->columns[c->map[col]];
    if (lc->validity && !lc->validity[c->row]) return NULL;
    return lc;
}

bool pch_sl__get_str(const pch_sl_cursor *c, int col, const char **p, size_t *n)
{
    const pch_lance_column *lc = cell(c, col);
    if (!lc || !pch_lance_type_is_var(lc->type)) { *p = NULL; *n = 0; return false; }
    *p = (const char *)lc->data + lc->offsets[c->row];
    *n = (size_t)(lc->offsets[c->row + 1] - lc->offsets[c->row]);
    return true;
}

bool pch_sl__get_i64(const pch_sl_cursor *c, int col, int64_t *v)
{
    const pch_lance_column *lc = cell(c, col);
    if (!lc) return false;
    if (lc->type == PCH_LANCE_INT64) { memcpy(v, lc->values + c->row * 8, 8); return true; }
    if (lc->type == PCH_LANCE_INT32) { int32_t x; memcpy(&x, lc->values + c->row * 4, 4); *v = x; return true; }
    return false;
}

bool pch_sl__get_f64(const pch_sl_cursor *c, int col, double *v)
{
    const pch_lance_column *lc = cell(c, col);
    if (!lc || lc->type != PCH_LANCE_FLOAT64) return false;
    memcpy(v, lc->values + c->row * 8, 8);
    return true;
}

bool pch_sl__get_bool(const pch_sl_cursor *c, int col, bool *v)
{
    const pch_lance_column *lc = cell(c, col);
    if (!lc || lc->type != PCH_LANCE_BOOL) return false;
    *v = lc->values[c->row] != 0;
    return true;
}

int pch_sl__get_json(const pch_sl_cursor *c, int col, pch_buf *out, bool *present, pch_error *err)
{
    const char *p;
    size_t n;
    *present = pch_sl__get_str(c, col, &p, &n);
    if (!*present) return PCH_OK;
    return pch_jsonb__to_json(out, (const uint8_t *)p, n, err);
}
