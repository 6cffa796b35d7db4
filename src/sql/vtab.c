/* SQLite virtual tables over a Storyline root (docs/sql.md; STYLE §10; RFC-0006 §13).
**
** CREATE VIRTUAL TABLE t USING storyline('ROOT', 'runs'|'steps'|'tool_calls'|'observation_results')
**
** The same module code serves the relations computed from another projection: a document
** source (sql_int.h pch_sql_doc_source, registered under its own module name, e.g. "vortex")
** hands over ATIF documents that the Storyline row generator turns into the same rows, or,
** for narrow column sets of steps/tool_calls, batches it builds straight from its lanes; an
** equality on trajectory_key asks the source for the documents holding that key.
**
** runs/steps/tool_calls expose the table's Lance columns in dataset order (docs/storyline.md
** §2): text → TEXT, integers and bools → INTEGER, float64 → REAL, JSON → TEXT (compact JSON;
** a value moved to objects is hydrated from its *_object column only when the column is
** read). observation_results has one row per observation result: the correlated ones from
** tool_calls.results, then the uncorrelated ones from steps.observation_results.
**
** Plans (xBestIndex → xFilter) are encoded as sql_int.h says (colUsed, then column + op
** per pushed constraint).
**
** Pushable columns: source_id, run_id, session_id, trajectory_key (every relation) and
** timestamp_ms (steps). A constraint is applied in xFilter only when the value's type is
** the column's (TEXT vs TEXT with binary collation, INTEGER/REAL vs INTEGER); we never set
** `omit`, so SQLite re-checks every row and the filter is purely an optimisation. Rows a
** constraint rejects are skipped before any other column is decoded; an equality on a TEXT
** identity column first scans that column alone and then reads only the matching rows
** (pch_lance_scanner_open_rows). Projection: the
** scanner reads only columns in colUsed, the pushed columns and the *_object companions of
** used JSON columns. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pchronicle/json.h"
#include "pchronicle/lance.h"
#include "pchronicle/sql.h"
#include "pchronicle/storyline.h"
#include "sql/sql_int.h"

#define OBS_N 10
#define SL_COL_TRAJECTORY_KEY 3     /* identity columns come first in every relation */

enum { REL_RUNS, REL_STEPS, REL_CALLS, REL_OBS, REL_TRAJ };

static const char *const k_obs_cols[OBS_N] = {
    "source_id", "run_id", "session_id", "trajectory_key", "step_ordinal", "step_id",
    "call_ordinal", "result_index", "source_call_id", "content"
};

typedef struct sl_vtab {
    sqlite3_vtab base;              /* must be first */
    pch_ctx *ctx;
    pch_storyline_root *root;       /* NULL over a document source */
    const pch_sql_doc_source *src;  /* documents instead of a root (RFC-0006 §13.1) */
    void *src_h;
    pch_lance_schema *own_schema;   /* the table's schema over a document source */
    int rel;
    const pch_lance_schema *schema; /* runs/steps/tool_calls */
    int n_cols;
    int obj_of[64];                 /* JSON column -> its *_object column, -1 */
} sl_vtab;

typedef struct sl_cursor {
    sqlite3_vtab_cursor base;       /* must be first */
    pch_lance_scanner *sc;
    const pch_lance_batch *batch;
    size_t row;
    int map[64];                    /* SQL column -> batch column, -1 */
    pch_storyline_rowgen *gen;      /* over a document source: the current document's rows */
    uint64_t pos;                   /* next document of the source */
    uint64_t *only;                 /* NULL, or the only document positions to read */
    size_t n_only, i_only;
    pch_sql_lanes *lanes;           /* a narrow scan straight from the source's lanes */
    bool content;                   /* the statement reads a content column (late hydration) */
    pch_sql_cons cons[PCH_SQL_MAX_CONS];
    int n_cons;
    bool eof;
    sqlite3_int64 rowid;
    /* observation_results */
    int phase;                      /* 0 tool_calls, 1 steps, 2 done */
    int omap[9];                    /* obs_open_phase's columns -> batch columns */
    pch_json_parser *jp;
    char *arr; size_t arr_len;      /* JSON text of the current row's results */
    const pch_json_value *items;
    uint32_t n_items, item;
} sl_cursor;

static int rel_of(const char *s)
{
    size_t n;
    char t[32];
    s = pch_sql__unquote(s, &n);
    if (n >= sizeof t) return -1;
    memcpy(t, s, n);
    t[n] = 0;
    if (!strcmp(t, "runs")) return REL_RUNS;
    if (!strcmp(t, "steps")) return REL_STEPS;
    if (!strcmp(t, "tool_calls")) return REL_CALLS;
    if (!strcmp(t, "observation_results")) return REL_OBS;
    if (!strcmp(t, "trajectories")) return REL_TRAJ;
    return -1;
}

bool pch_sql__content_column(const char *name)
{
    static const char *const k[] = { "message", "reasoning_content", "observation_results", "arguments", "results" };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        size_t n = strlen(k[i]);
        if (strncmp(name, k[i], n) == 0 && (name[n] == 0 || strcmp(name + n, "_object") == 0)) return true;
    }
    return false;
}

static const char *rel_name(int rel)
{
    static const char *const names[] = { "runs", "steps", "tool_calls", "observation_results", "trajectories" };
    return names[rel];
}

static pch_storyline_table table_of(int rel)
{
    return rel == REL_RUNS ? PCH_STORYLINE_RUNS : rel == REL_STEPS ? PCH_STORYLINE_STEPS : PCH_STORYLINE_TOOL_CALLS;
}

/* Release what x_connect opened, and v itself. */
static void close_source(sl_vtab *v)
{
    if (v->src && v->src_h) v->src->close(v->src_h);
    pch_storyline_close(v->root);
    pch_lance_schema_free(v->own_schema);
    pch_ctx_free(v->ctx);
    sqlite3_free(v);
}

static int x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                     sqlite3_vtab **pp, char **errmsg)
{
    sl_vtab *v;
    pch_error e;
    char *path = NULL;
    const pch_sql_doc_source *src = aux;
    int rel, rc;
    *pp = NULL;
    if (argc != 5 || (rel = rel_of(argv[4])) < 0) {
        *errmsg = sqlite3_mprintf("%s: usage: USING %s('ROOT', 'runs'|'steps'|'tool_calls'|'observation_results')",
                                  src ? src->module : "storyline", src ? src->module : "storyline");
        return SQLITE_ERROR;
    }
    v = sqlite3_malloc(sizeof *v);
    if (!v) return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->rel = rel;
    v->src = src;
    {
        size_t n;
        const char *s = pch_sql__unquote(argv[3], &n);
        path = sqlite3_mprintf("%.*s", (int)n, s);
    }
    if (!path || pch_ctx_new(&v->ctx, NULL, NULL, &e) != 0) { sqlite3_free(path); sqlite3_free(v); return SQLITE_NOMEM; }
    if (src) {
        rc = src->open(&v->src_h, v->ctx, path, &e);
        if (rc == 0 && rel == REL_TRAJ)
            rc = src->traj_schema ? src->traj_schema(v->src_h, &v->own_schema, &e)
                                  : pch_error_set(&e, PCH_EINVAL, "%s: no relation trajectories", src->module);
        else if (rc == 0 && rel != REL_OBS)
            rc = pch_storyline_table_schema(v->ctx, table_of(rel), &v->own_schema, &e);
    } else if (rel == REL_TRAJ) {
        rc = pch_error_set(&e, PCH_EINVAL, "storyline: trajectories is a relation of the Vortex projection only (RFC-0006 §13.1)");
    } else {
        rc = pch_storyline_open(&v->root, v->ctx, path, &e);
    }
    sqlite3_free(path);
    if (rc != 0) {
        *errmsg = sqlite3_mprintf("%s", e.msg);
        close_source(v);
        return rc == PCH_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
    }
    pch_buf decl;
    pch_buf_init(&decl, NULL);
    pch_buf_append_str(&decl, "CREATE TABLE x(");
    for (int i = 0; i < 64; i++) v->obj_of[i] = -1;
    if (rel == REL_OBS) {
        static const char *const types[OBS_N] = { "TEXT", "TEXT", "TEXT", "TEXT", "INTEGER", "INTEGER",
                                                  "INTEGER", "INTEGER", "TEXT", "TEXT" };
        for (int i = 0; i < OBS_N; i++) pch_buf_printf(&decl, "%s\"%s\" %s", i ? "," : "", k_obs_cols[i], types[i]);
        pch_buf_append_str(&decl, ",\"result\" TEXT");
        v->n_cols = OBS_N + 1;
    } else {
        v->schema = src ? v->own_schema : pch_lance_dataset_schema(pch_storyline_dataset(v->root, table_of(rel)));
        v->n_cols = (int)(v->schema->n_fields < 63 ? v->schema->n_fields : 63);
        for (int i = 0; i < v->n_cols; i++) {
            const pch_lance_field *f = &v->schema->fields[i];
            pch_buf_printf(&decl, "%s\"%s\" %s", i ? "," : "", f->name, pch_sql__type(f->type));
            if (f->type == PCH_LANCE_JSON) {
                char on[128];
                snprintf(on, sizeof on, "%s_object", f->name);
                long oi = pch_lance_schema_find(v->schema, on);
                if (oi >= 0 && oi < 63) v->obj_of[i] = (int)oi;
            }
        }
    }
    pch_buf_putc(&decl, ')');
    rc = decl.oom ? SQLITE_NOMEM : sqlite3_declare_vtab(db, (const char *)decl.data);
    pch_buf_dispose(&decl);
    if (rc != SQLITE_OK) {
        close_source(v);
        return rc;
    }
    *pp = &v->base;
    return SQLITE_OK;
}

static int x_disconnect(sqlite3_vtab *vt)
{
    close_source((sl_vtab *)vt);
    return SQLITE_OK;
}

static bool pushable(const sl_vtab *v, int col)
{
    const char *name;
    if (col < 0 || col >= v->n_cols) return false;
    name = v->rel == REL_OBS ? k_obs_cols[col < OBS_N ? col : 0] : v->schema->fields[col].name;
    if (v->rel == REL_OBS && col >= OBS_N) return false;
    if (!strcmp(name, "source_id") || !strcmp(name, "run_id") || !strcmp(name, "session_id") ||
        !strcmp(name, "trajectory_key") || (v->rel == REL_STEPS && !strcmp(name, "timestamp_ms")))
        return true;
    /* over a document source, the columns its summaries and typed lanes can prune by
    ** (RFC-0006 §13.3: source/model via the summary mask and bloom, copied context, token and
    ** cost predicates on the metrics lanes; function name via the tool-name bloom) */
    if (v->src && v->rel == REL_STEPS)
        return !strcmp(name, "source") || !strcmp(name, "model_name") || !strcmp(name, "is_copied_context") ||
               !strcmp(name, "prompt_tokens") || !strcmp(name, "completion_tokens") ||
               !strcmp(name, "cached_tokens") || !strcmp(name, "cost_usd") || !strcmp(name, "llm_call_count");
    return v->src && v->rel == REL_CALLS && !strcmp(name, "function_name");
}

static bool push_ok(const sqlite3_vtab *vt, int col, char op)
{
    return op != 'L' && pushable((const sl_vtab *)vt, col);
}

static int x_best_index(sqlite3_vtab *vt, sqlite3_index_info *ii)
{
    return pch_sql__best_index(vt, ii, push_ok);
}

static int x_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **pp)
{
    sl_cursor *c = sqlite3_malloc(sizeof *c);
    (void)vt;
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->eof = true;
    *pp = &c->base;
    return SQLITE_OK;
}

static void reset_scan(sl_cursor *c)
{
    pch_lance_scanner_free(c->sc);
    c->sc = NULL;
    c->batch = NULL;
    c->row = 0;
    c->pos = 0;
    c->i_only = 0;                  /* the same documents again (observation_results' phases) */
}

static int x_close(sqlite3_vtab_cursor *cur)
{
    sl_cursor *c = (sl_cursor *)cur;
    sl_vtab *v = (sl_vtab *)cur->pVtab;
    reset_scan(c);
    free(c->only);
    if (c->lanes) v->src->lanes_close(c->lanes);
    pch_storyline_rowgen_free(c->gen);
    pch_json_parser_free(c->jp);
    if (c->arr) pch_free(v->ctx, c->arr);
    sqlite3_free(c);
    return SQLITE_OK;
}

static const pch_lance_column *bcol(const sl_cursor *c, int bi)
{
    return (c->batch && bi >= 0 && (size_t)bi < c->batch->n_columns) ? &c->batch->columns[bi] : NULL;
}
/* Does the current row satisfy every pushed constraint (pch_sql__test)? */
static bool row_passes(const sl_cursor *c)
{
    for (int k = 0; k < c->n_cons; k++)
        if (pch_sql__test(bcol(c, c->map[c->cons[k].col]), c->row, &c->cons[k]) == 0) return false;
    return true;
}

/* Advance the scanner to the next raw row (true) or the end (false). */
static int scan_step(sl_cursor *c, sqlite3_vtab *vt, bool *have)
{
    sl_vtab *v = (sl_vtab *)vt;
    pch_error e;
    if (c->batch && c->row + 1 < c->batch->n_rows) { c->row++; *have = true; return SQLITE_OK; }
    if (c->lanes) {                 /* a narrow scan: the next cluster's rows */
        bool eof = false;
        int rc = v->src->lanes_next(c->lanes, &c->batch, &eof, &e);
        if (rc != 0) { c->batch = NULL; return pch_sql__set_err(vt, &e, rc); }
        c->row = 0;
        *have = !eof && c->batch && c->batch->n_rows;
        if (eof) c->batch = NULL;
        return SQLITE_OK;
    }
    if (v->src) {
        /* the next document's rows of this relation's table (documents without any: skip) */
        pch_storyline_table t = v->rel == REL_OBS ? (c->phase == 0 ? PCH_STORYLINE_TOOL_CALLS : PCH_STORYLINE_STEPS)
                                                  : table_of(v->rel);
        for (;;) {
            bool eof = false;
            int rc;
            pch_storyline_rowgen_reset(c->gen);
            c->batch = NULL;
            if (c->only) {          /* a trajectory_key equality: its documents only */
                if (c->i_only == c->n_only) { *have = false; return SQLITE_OK; }
                c->pos = c->only[c->i_only++];
            }
            rc = v->src->next(v->src_h, &c->pos, c->gen, c->content, &eof, &e);
            if (rc == 0 && eof) { *have = false; return SQLITE_OK; }
            if (rc == 0) rc = pch_storyline_rowgen_batch(c->gen, t, &c->batch, &e);
            if (rc != 0) { pch_storyline_rowgen_reset(c->gen); c->batch = NULL; return pch_sql__set_err(vt, &e, rc); }
            c->row = 0;
            if (c->batch->n_rows) { *have = true; return SQLITE_OK; }
        }
    }
    for (;;) {
        int rc = pch_lance_scanner_next(c->sc, &c->batch, &e);
        if (rc == PCH_ITEROVER) { c->batch = NULL; *have = false; return SQLITE_OK; }
        if (rc != 0) return pch_sql__set_err(vt, &e, rc);
        c->row = 0;
        if (c->batch->n_rows) { *have = true; return SQLITE_OK; }
    }
}

/* observation_results: open the scan of the current phase. Batch columns: 0..3 identity,
** 4 step_ordinal, 5 step_id, 6 call_ordinal (calls only), 7 results, 8 results_object. */
static int obs_open_phase(sl_cursor *c, sl_vtab *v)
{
    static const char *const calls_cols[] = { "source_id", "run_id", "session_id", "trajectory_key",
        "step_ordinal", "step_id", "call_ordinal", "results", "results_object" };
    static const char *const steps_cols[] = { "source_id", "run_id", "session_id", "trajectory_key",
        "step_ordinal", "step_id", "step_ordinal", "observation_results", "observation_results_object" };
    pch_storyline_table t = c->phase == 0 ? PCH_STORYLINE_TOOL_CALLS : PCH_STORYLINE_STEPS;
    pch_lance_dataset *ds = v->src ? NULL : pch_storyline_dataset(v->root, t);
    pch_lance_schema *own = NULL;
    const pch_lance_schema *s;
    size_t proj[9];
    pch_error e;
    int rc = 0;
    if (v->src) rc = pch_storyline_table_schema(v->ctx, t, &own, &e);
    if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
    s = v->src ? own : pch_lance_dataset_schema(ds);
    for (int i = 0; i < 9; i++) {
        long fi = pch_lance_schema_find(s, (c->phase == 0 ? calls_cols : steps_cols)[i]);
        if (fi < 0) {
            pch_lance_schema_free(own);
            pch_error_set(&e, PCH_ECORRUPT, "storyline: missing column %s", (c->phase == 0 ? calls_cols : steps_cols)[i]);
            return pch_sql__set_err(&v->base, &e, PCH_ECORRUPT);
        }
        proj[i] = (size_t)fi;
    }
    pch_lance_schema_free(own);
    reset_scan(c);
    /* a scanner returns the projection in order; a document source's batch is the table */
    for (int i = 0; i < 9; i++) c->omap[i] = v->src ? (int)proj[i] : i;
    if (!v->src) {
        rc = pch_lance_scanner_open(&c->sc, ds, proj, 9, 1024, &e);
        if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
    }
    for (int i = 0; i < 64; i++) c->map[i] = -1;
    for (int i = 0; i < 6; i++) c->map[i] = c->omap[i];
    c->map[6] = c->phase == 0 ? c->omap[6] : -1;
    return SQLITE_OK;
}

/* JSON text as the JSON columns render it (keys sorted, compact: JSONB → text), so that a
** value hydrated from objects reads exactly as the same value stored inline. */
static int canon_json(sl_vtab *v, sl_cursor *c, char **txt, size_t *n, pch_error *e)
{
    const pch_json_value *root;
    uint8_t *jb = NULL;
    size_t jn = 0;
    int rc;
    if (!c->jp && (rc = pch_json_parser_new(&c->jp, v->ctx, NULL, e)) != 0) return rc;
    rc = pch_json_parser_parse(c->jp, *txt, *n, &root, e);
    if (rc == 0) rc = pch_jsonb_encode(v->ctx, root, *txt, &jb, &jn, e);
    if (rc == 0) {
        pch_free(v->ctx, *txt);
        *txt = NULL;
        rc = pch_jsonb_to_json(v->ctx, jb, jn, txt, n, e);
    }
    pch_free(v->ctx, jb);
    return rc;
}

/* Load the results array of the current scan row into c->items (false: none). */
static int obs_load_row(sl_cursor *c, sl_vtab *v, bool *any)
{
    const pch_lance_column *res = bcol(c, c->omap[7]), *obj = bcol(c, c->omap[8]);
    const char *p;
    size_t n;
    pch_error e;
    int rc;
    *any = false;
    if (c->arr) { pch_free(v->ctx, c->arr); c->arr = NULL; }
    c->n_items = c->item = 0;
    if (pch_sql__str(res, c->row, &p, &n)) {
        rc = pch_jsonb_to_json(v->ctx, (const uint8_t *)p, n, &c->arr, &c->arr_len, &e);
    } else if (v->root && pch_sql__str(obj, c->row, &p, &n)) {
        char id[65];
        if (n != 64) return SQLITE_OK;
        memcpy(id, p, 64);
        id[64] = 0;
        rc = pch_storyline_object(v->root, id, &c->arr, &c->arr_len, &e);
        if (rc == 0) rc = canon_json(v, c, &c->arr, &c->arr_len, &e);
    } else {
        return SQLITE_OK;
    }
    if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
    if (!c->jp && pch_json_parser_new(&c->jp, v->ctx, NULL, &e) != 0) return pch_sql__set_err(&v->base, &e, PCH_ENOMEM);
    const pch_json_value *root;
    rc = pch_json_parser_parse(c->jp, c->arr, c->arr_len, &root, &e);
    if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
    if (root->kind != PCH_JSON_ARRAY || root->n == 0) return SQLITE_OK;
    c->items = root->u.items;
    c->n_items = root->n;
    *any = true;
    return SQLITE_OK;
}

static int advance(sl_cursor *c)
{
    sl_vtab *v = (sl_vtab *)c->base.pVtab;
    bool have;
    int rc;
    if (v->rel == REL_OBS) {
        if (c->item + 1 < c->n_items) { c->item++; c->rowid++; return SQLITE_OK; }
        for (;;) {
            if (c->phase >= 2) { c->eof = true; return SQLITE_OK; }
            rc = scan_step(c, &v->base, &have);
            if (rc != SQLITE_OK) return rc;
            if (!have) {
                c->phase++;
                if (c->phase >= 2) { c->eof = true; return SQLITE_OK; }
                rc = obs_open_phase(c, v);
                if (rc != SQLITE_OK) return rc;
                continue;
            }
            if (!row_passes(c)) continue;
            bool any;
            rc = obs_load_row(c, v, &any);
            if (rc != SQLITE_OK) return rc;
            if (any) { c->rowid++; return SQLITE_OK; }
        }
    }
    for (;;) {
        rc = scan_step(c, &v->base, &have);
        if (rc != SQLITE_OK) return rc;
        if (!have) { c->eof = true; return SQLITE_OK; }
        if (row_passes(c)) { c->rowid++; return SQLITE_OK; }
    }
}

static int x_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                    sqlite3_value **argv)
{
    sl_cursor *c = (sl_cursor *)cur;
    sl_vtab *v = (sl_vtab *)cur->pVtab;
    pch_error e;
    int rc;
    reset_scan(c);
    c->eof = false;
    c->rowid = 0;
    c->n_cons = 0;
    c->n_items = c->item = 0;
    sqlite3_uint64 used = ~(sqlite3_uint64)0;
    if ((rc = pch_sql__plan(idxNum, idxStr, argc, argv, v->n_cols, c->cons, &c->n_cons, &used, &e)) != 0)
        return pch_sql__set_err(&v->base, &e, rc);
    for (int k = 0; k < c->n_cons; k++)
        if (!push_ok(&v->base, c->cons[k].col, c->cons[k].op)) {
            pch_error_set(&e, PCH_EINVAL, "storyline: bad plan '%s'", idxStr);
            return pch_sql__set_err(&v->base, &e, PCH_EINVAL);
        }
    /* late hydration (RFC-0006 §13.6): content is fetched only for a statement that reads it */
    c->content = v->rel == REL_OBS || ((used >> 63) & 1);
    for (int i = 0; i < v->n_cols && i < 63 && !c->content; i++)
        if ((used >> i) & 1) c->content = pch_sql__content_column(v->schema->fields[i].name);
    for (int k = 0; k < c->n_cons && !c->content; k++)
        if (c->cons[k].col < v->n_cols && v->rel != REL_OBS) c->content = pch_sql__content_column(v->schema->fields[c->cons[k].col].name);
    if (v->src && !c->gen &&
        (rc = pch_storyline_rowgen_new(&c->gen, v->ctx, 0, v->src->asset_mode(v->src_h), v->src->assets, v->src_h,
                                    &e)) != 0)
        return pch_sql__set_err(&v->base, &e, rc);
    free(c->only);
    c->only = NULL;
    c->n_only = 0;
    if (v->src && v->rel != REL_TRAJ)
        for (int k = 0; k < c->n_cons; k++)
            if (c->cons[k].col == SL_COL_TRAJECTORY_KEY && c->cons[k].op == '=' &&
                sqlite3_value_type(c->cons[k].v) == SQLITE_TEXT) {
                uint64_t *pos = NULL;
                size_t n = 0;
                rc = v->src->find(v->src_h, rel_name(v->rel), (const char *)sqlite3_value_text(c->cons[k].v),
                                  (size_t)sqlite3_value_bytes(c->cons[k].v), &pos, &n, &e);
                if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
                /* copied: reset_scan frees with free() whoever allocated the source's list */
                c->only = malloc((n ? n : 1) * sizeof *c->only);
                if (!c->only) { pch_free(v->ctx, pos); return SQLITE_NOMEM; }
                if (n) memcpy(c->only, pos, n * sizeof *pos);
                pch_free(v->ctx, pos);
                c->n_only = n;
                break;
            }
    if (v->rel == REL_OBS) {
        if (v->src && !c->only && v->src->note_documents) v->src->note_documents(v->src_h, rel_name(v->rel));
        c->phase = 0;
        rc = obs_open_phase(c, v);
        if (rc != SQLITE_OK) return rc;
        return advance(c);
    }
    if (v->src) {
        /* a document's rows come whole: every column is in the batch at its own index */
        for (int i = 0; i < 64; i++) c->map[i] = i < v->n_cols ? i : -1;
        if (c->lanes) { v->src->lanes_close(c->lanes); c->lanes = NULL; }
        if (v->rel == REL_TRAJ) {      /* summaries: always from the id and summary lanes */
            rc = v->src->traj_open(v->src_h, &c->lanes, &e);
            if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
        } else if (!c->only && v->src->lanes_open) {
            /* no key to find documents by: a narrow scan when the lanes hold every column
            ** the statement uses or pushes (RFC-0006 §13.2) */
            sqlite3_uint64 need = used;
            for (int k = 0; k < c->n_cons; k++) need |= (sqlite3_uint64)1 << (c->cons[k].col < 63 ? c->cons[k].col : 63);
            rc = v->src->lanes_open(v->src_h, table_of(v->rel), need, c->cons, c->n_cons, &c->lanes, &e);
            if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
        }
        return advance(c);
    }
    /* projection: every column the statement may read (see x_best_index) */
    {
        size_t proj[64], n = 0;
        for (int i = 0; i < 64; i++) c->map[i] = -1;
        for (int i = 0; i < v->n_cols; i++) {
            bool want = (used >> (i < 63 ? i : 63)) & 1;
            for (int k = 0; k < c->n_cons; k++) want = want || c->cons[k].col == i;
            /* a used JSON column needs its *_object companion for hydration */
            for (int j = 0; j < v->n_cols; j++)
                if (v->obj_of[j] == i && ((used >> (j < 63 ? j : 63)) & 1)) want = true;
            if (want) { c->map[i] = (int)n; proj[n++] = (size_t)i; }
        }
        pch_lance_dataset *ds = pch_storyline_dataset(v->root, table_of(v->rel));
        int kc = -1;
        for (int k = 0; k < c->n_cons && kc < 0; k++)
            if (c->cons[k].op == '=' && sqlite3_value_type(c->cons[k].v) == SQLITE_TEXT &&
                c->cons[k].col < 4 && n > 1)
                kc = k;
        if (kc >= 0) {
            uint64_t *rows = NULL;
            size_t n_rows = 0;
            /* equality on an identity column: that column alone first, then the projection
            ** of the matching rows only */
            rc = pch_sql__select_rows(v->ctx, ds, &c->cons[kc], 1, &rows, &n_rows, &e);
            if (rc == 0) rc = pch_lance_scanner_open_rows(&c->sc, ds, proj, n, rows, n_rows, 1024, &e);
            pch_free(v->ctx, rows);
        } else {
            rc = pch_lance_scanner_open(&c->sc, ds, proj, n, 1024, &e);
        }
        if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
    }
    return advance(c);
}

static int x_next(sqlite3_vtab_cursor *cur) { return advance((sl_cursor *)cur); }
static int x_eof(sqlite3_vtab_cursor *cur) { return ((sl_cursor *)cur)->eof; }

static int x_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    sl_cursor *c = (sl_cursor *)cur;
    sl_vtab *v = (sl_vtab *)cur->pVtab;
    const pch_lance_column *lc;
    pch_error e;
    const char *p;
    size_t n;
    int64_t x;
    if (v->rel == REL_OBS) {
        const pch_json_value *it = c->item < c->n_items ? &c->items[c->item] : NULL;
        if (col < 6) {
            lc = bcol(c, c->omap[col]);
            if (col < 4 && pch_sql__str(lc, c->row, &p, &n)) sqlite3_result_text(ctx, p, (int)n, SQLITE_TRANSIENT);
            else if (col >= 4 && pch_sql__i64(lc, c->row, &x)) sqlite3_result_int64(ctx, x);
            else sqlite3_result_null(ctx);
        } else if (col == 6) {
            if (c->phase == 0 && pch_sql__i64(bcol(c, c->omap[6]), c->row, &x)) sqlite3_result_int64(ctx, x);
            else sqlite3_result_null(ctx);
        } else if (col == 7) {
            sqlite3_result_int64(ctx, c->item);
        } else if (it && (col == 8 || col == 9)) {
            const pch_json_value *m = pch_json_get(it, col == 8 ? "source_call_id" : "content", col == 8 ? 14 : 7);
            if (!m || m->kind == PCH_JSON_NULL) sqlite3_result_null(ctx);
            else if (col == 8 && m->kind == PCH_JSON_STRING) sqlite3_result_text(ctx, m->u.str.ptr, (int)m->u.str.len, SQLITE_TRANSIENT);
            else sqlite3_result_text(ctx, c->arr + m->span_off, (int)m->span_len, SQLITE_TRANSIENT);
        } else if (it) {
            sqlite3_result_text(ctx, c->arr + it->span_off, (int)it->span_len, SQLITE_TRANSIENT);
        } else {
            sqlite3_result_null(ctx);
        }
        return SQLITE_OK;
    }
    if (col < 0 || col >= v->n_cols) { sqlite3_result_null(ctx); return SQLITE_OK; }
    lc = bcol(c, c->map[col]);
    if (!lc) { sqlite3_result_null(ctx); return SQLITE_OK; }
    if (lc->type == PCH_LANCE_JSON) {
        char *out = NULL;
        size_t on = 0;
        int rc;
        if (pch_sql__str(lc, c->row, &p, &n)) {
            rc = pch_jsonb_to_json(v->ctx, (const uint8_t *)p, n, &out, &on, &e);
        } else if (v->root && v->obj_of[col] >= 0 && pch_sql__str(bcol(c, c->map[v->obj_of[col]]), c->row, &p, &n) &&
                   n == 64) {
            char id[65];
            memcpy(id, p, 64);
            id[64] = 0;
            rc = pch_storyline_object(v->root, id, &out, &on, &e);   /* late hydration */
            if (rc == 0) rc = canon_json(v, c, &out, &on, &e);
        } else {
            sqlite3_result_null(ctx);
            return SQLITE_OK;
        }
        if (rc != 0) {
            pch_free(v->ctx, out);
            sqlite3_result_error(ctx, e.msg, -1);
            return pch_sql__set_err(&v->base, &e, rc);
        }
        sqlite3_result_text(ctx, out, (int)on, SQLITE_TRANSIENT);
        pch_free(v->ctx, out);
        return SQLITE_OK;
    }
    pch_sql__result(ctx, lc, c->row);
    return SQLITE_OK;
}

static int x_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
    *out = ((sl_cursor *)cur)->rowid;
    return SQLITE_OK;
}

static sqlite3_module k_module = {
    0,                /* iVersion */
    x_connect,        /* xCreate: same as connect (no backing storage to create) */
    x_connect,        /* xConnect */
    x_best_index,     /* xBestIndex */
    x_disconnect,     /* xDisconnect */
    x_disconnect,     /* xDestroy: nothing to drop */
    x_open,           /* xOpen */
    x_close,          /* xClose */
    x_filter,         /* xFilter */
    x_next,           /* xNext */
    x_eof,            /* xEof */
    x_column,         /* xColumn */
    x_rowid,          /* xRowid */
    NULL,             /* xUpdate: read-only */
    NULL,             /* xBegin */
    NULL,             /* xSync */
    NULL,             /* xCommit */
    NULL,             /* xRollback */
    NULL,             /* xFindFunction */
    NULL,             /* xRename */
    NULL,             /* xSavepoint */
    NULL,             /* xRelease */
    NULL,             /* xRollbackTo */
    NULL,             /* xShadowName */
#if SQLITE_VERSION_NUMBER >= 3044000
    NULL,             /* xIntegrity */
#endif
};

int pch_sql__register_docs(sqlite3 *db, const pch_sql_doc_source *src)
{
    return sqlite3_create_module(db, src->module, &k_module, (void *)(uintptr_t)src);
}

int pch_sql_attach_module(sqlite3 *db, const char *module, const char *root, char **errmsg)
{
    static const char *const rels[] = { "runs", "steps", "tool_calls", "observation_results" };
    for (int i = 0; i < 4; i++) {
        char *q = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.\"%w\" USING \"%w\"(%Q, '%s')", rels[i], module, root, rels[i]);
        int rc;
        if (!q) return SQLITE_NOMEM;
        rc = sqlite3_exec(db, q, NULL, NULL, errmsg);
        sqlite3_free(q);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

int pch_sql_register(sqlite3 *db)
{
    int rc = sqlite3_create_module(db, "storyline", &k_module, NULL);
    return rc == SQLITE_OK ? pch_sql__register_lance(db) : rc;
}

int pch_sql_attach_root(sqlite3 *db, const char *root, char **errmsg)
{
    return pch_sql_attach_module(db, "storyline", root, errmsg);
}

/* Loadable extension entry point (build/pchronicle_sqlite.so: SQLite derives the name
** sqlite3_pchroniclesqlite_init from the file name). */
PCH_API int sqlite3_pchroniclesqlite_init(sqlite3 *db, char **errmsg, const void *api);
PCH_API int sqlite3_pchroniclesqlite_init(sqlite3 *db, char **errmsg, const void *api)
{
    (void)errmsg;
    (void)api;
    return pch_sql_register(db);
}
