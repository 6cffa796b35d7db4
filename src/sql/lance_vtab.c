/* SQLite virtual tables over any Lance dataset we read (docs/sql.md "Lance datasets").
**
** CREATE VIRTUAL TABLE t USING lance('DATASET' [, VERSION])
**
** Columns: the dataset's fields in schema order (VERSION 0 or absent = the latest version):
** utf8 → TEXT, binary → BLOB, integers and bool → INTEGER (a uint64 above 2^63-1 is
** returned as its exact decimal TEXT), floats → REAL, JSON → TEXT (compact JSON, so
** SQLite's JSON functions apply). A compact-jsonl dataset (schema metadata
** pchronicle.format, RFC-0014) has one more column, `record`: the record's exact bytes
** without their line terminator — `_raw_` for an inline row, the offload object for an
** offloaded one, read and BLAKE3-checked only when the column is selected.
**
** Plans are sql_int.h's. Pushable: every INTEGER, REAL and TEXT column that is not JSON,
** for =, <, <=, >, >=; LIKE 'prefix%' on TEXT columns (ASCII case-insensitive, as SQLite's
** LIKE). omit is never set: SQLite re-checks every row, so a pushed constraint can only
** prune rows that cannot match.
**
** Reads: one scan of the columns the statement uses (colUsed) and the constrained ones,
** rows failing a constraint skipped. When the used columns include a wide one (JSON or
** binary: data, _raw_, user columns) and there are constraints, the constrained columns are
** scanned alone first and the used columns are then read for the passing rows only
** (pch_lance_scanner_open_rows: pages without a selected row are not decoded). A statement
** that does not name `data`, `_raw_` or `record` never reads or decompresses their pages. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pchronicle/compact_jsonl.h"
#include "json/json.h"
#include "pchronicle/sql.h"
#include "sql/sql_int.h"

/* Columns a relation may have: plans name a column with two hex digits (sql_int.h). */
#define LV_MAX_COLS 255

typedef struct lv_vtab {
    sqlite3_vtab base;              /* must be first */
    pch_ctx *ctx;
    char *path;
    pch_lance_dataset *ds;
    const pch_lance_schema *schema;
    int n_fields;                   /* dataset columns (the relation's first columns) */
    int rec;                        /* `record` column index, -1 unless compact-jsonl */
    int c_raw, c_off;               /* _raw_ / _offload_ field indices (compact-jsonl) */
} lv_vtab;

typedef struct lv_cursor {
    sqlite3_vtab_cursor base;       /* must be first */
    pch_lance_scanner *sc;
    const pch_lance_batch *batch;
    size_t row;
    int map[LV_MAX_COLS];           /* dataset column → batch column, -1 */
    pch_sql_cons cons[PCH_SQL_MAX_CONS];
    int n_cons;
    bool check;                     /* constraints still to apply to scanned rows */
    uint64_t *rows;                 /* rows that passed the constraint scan, or NULL */
    size_t n_rows;
    uint64_t at;                    /* dataset row of the current row */
    bool eof;
    pch_buf text;                   /* JSON text of the JSON value being returned (reused) */
} lv_cursor;

static bool is_cj(const pch_lance_schema *s)
{
    for (size_t i = 0; i < s->n_metadata; i++)
        if (strcmp(s->metadata[i].key, "pchronicle.format") == 0) return true;
    return false;
}

static bool pushable(const lv_vtab *v, int col)
{
    pch_lance_type t;
    if (col < 0 || col >= v->n_fields) return false;
    t = v->schema->fields[col].type;
    return t != PCH_LANCE_JSON && t != PCH_LANCE_BINARY && t != PCH_LANCE_LARGE_BINARY;
}

static void lv_free(lv_vtab *v)
{
    pch_lance_dataset_free(v->ds);
    pch_ctx_free(v->ctx);
    sqlite3_free(v->path);
    sqlite3_free(v);
}

static int x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **pp, char **errmsg)
{
    lv_vtab *v;
    pch_error e;
    pch_buf decl;
    unsigned long long version = 0;
    size_t n;
    const char *s;
    int rc;
    (void)aux;
    *pp = NULL;
    if (argc != 4 && argc != 5) {
        *errmsg = sqlite3_mprintf("lance: usage: USING lance('DATASET' [, VERSION])");
        return SQLITE_ERROR;
    }
    if (argc == 5) {
        char *end = NULL;
        s = pch_sql__unquote(argv[4], &n);
        version = strtoull(s, &end, 10);
        if (!n || end != s + n) { *errmsg = sqlite3_mprintf("lance: VERSION must be a number, not %s", argv[4]); return SQLITE_ERROR; }
    }
    if (!(v = sqlite3_malloc(sizeof *v))) return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->rec = v->c_raw = v->c_off = -1;
    s = pch_sql__unquote(argv[3], &n);
    if (!(v->path = sqlite3_mprintf("%.*s", (int)n, s)) || pch_ctx_new(&v->ctx, NULL, NULL, &e) != 0) { lv_free(v); return SQLITE_NOMEM; }
    if ((rc = pch_lance_dataset_open(&v->ds, v->ctx, v->path, version, &e)) != 0) {
        *errmsg = sqlite3_mprintf("%s", e.msg);
        lv_free(v);
        return rc == PCH_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
    }
    v->schema = pch_lance_dataset_schema(v->ds);
    if (v->schema->n_fields >= LV_MAX_COLS) {
        *errmsg = sqlite3_mprintf("lance: %s has %zu columns; at most %d are supported", v->path, v->schema->n_fields, LV_MAX_COLS - 1);
        lv_free(v);
        return SQLITE_ERROR;
    }
    v->n_fields = (int)v->schema->n_fields;
    if (is_cj(v->schema)) {
        long r = pch_lance_schema_find(v->schema, "_raw_"), o = pch_lance_schema_find(v->schema, "_offload_");
        if (r >= 0 && o >= 0) {
            v->c_raw = (int)r;
            v->c_off = (int)o;
            v->rec = v->n_fields;
        }
    }
    pch_buf_init(&decl, NULL);
    pch_buf_append_str(&decl, "CREATE TABLE x(");
    for (int i = 0; i < v->n_fields; i++) {
        const pch_lance_field *f = &v->schema->fields[i];
        pch_buf_printf(&decl, "%s\"", i ? "," : "");
        for (const char *c = f->name; *c; c++) pch_buf_append(&decl, c, *c == '"' ? 0 : 1);   /* no quotes in names */
        pch_buf_printf(&decl, "\" %s", f->type == PCH_LANCE_UINT64 ? "" : pch_sql__type(f->type));
    }
    if (v->rec >= 0) pch_buf_append_str(&decl, ",\"record\" TEXT");
    pch_buf_putc(&decl, ')');
    rc = decl.oom ? SQLITE_NOMEM : sqlite3_declare_vtab(db, (const char *)decl.data);
    pch_buf_dispose(&decl);
    if (rc != SQLITE_OK) { lv_free(v); return rc; }
    *pp = &v->base;
    return SQLITE_OK;
}

static int x_disconnect(sqlite3_vtab *vt)
{
    lv_free((lv_vtab *)vt);
    return SQLITE_OK;
}

static bool push_ok(const sqlite3_vtab *vt, int col, char op)
{
    const lv_vtab *v = (const lv_vtab *)vt;
    return pushable(v, col) && (op != 'L' || pch_lance_type_is_var(v->schema->fields[col].type));
}

static int x_best_index(sqlite3_vtab *vt, sqlite3_index_info *ii)
{
    return pch_sql__best_index(vt, ii, push_ok);
}

static int x_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **pp)
{
    lv_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->eof = true;
    pch_buf_init(&c->text, ((lv_vtab *)vt)->ctx);
    *pp = &c->base;
    return SQLITE_OK;
}

static void reset(lv_cursor *c, lv_vtab *v)
{
    pch_lance_scanner_free(c->sc);
    c->sc = NULL;
    c->batch = NULL;
    c->row = 0;
    pch_free(v->ctx, c->rows);
    c->rows = NULL;
    c->n_rows = 0;
}

static int x_close(sqlite3_vtab_cursor *cur)
{
    lv_cursor *c = (lv_cursor *)cur;
    reset(c, (lv_vtab *)cur->pVtab);
    pch_buf_dispose(&c->text);
    sqlite3_free(c);
    return SQLITE_OK;
}

static const pch_lance_column *bcol(const lv_cursor *c, int field)
{
    int bi = field >= 0 && field < LV_MAX_COLS ? c->map[field] : -1;
    return (c->batch && bi >= 0 && (size_t)bi < c->batch->n_columns) ? &c->batch->columns[bi] : NULL;
}

/* Does row `row` of the batch satisfy every pushed constraint (pch_sql__test)? */
static bool row_passes(const lv_cursor *c, size_t row)
{
    for (int k = 0; k < c->n_cons; k++)
        if (pch_sql__test(bcol(c, c->cons[k].col), row, &c->cons[k]) == 0) return false;
    return true;
}

/* Next row of the scan (with the constraints when c->check). */
static int advance(lv_cursor *c)
{
    lv_vtab *v = (lv_vtab *)c->base.pVtab;
    pch_error e;
    for (;;) {
        if (c->batch && c->row + 1 < c->batch->n_rows) {
            c->row++;
        } else {
            int rc = pch_lance_scanner_next(c->sc, &c->batch, &e);
            if (rc == PCH_ITEROVER) { c->batch = NULL; c->eof = true; return SQLITE_OK; }
            if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
            c->row = 0;
            if (!c->batch->n_rows) continue;
        }
        c->at++;
        if (!c->check || row_passes(c, c->row)) return SQLITE_OK;
    }
}

/* colUsed: bit i for column i < 63, bit 63 for every column from 63 on */
static bool col_used(sqlite3_uint64 used, int i) { return (used >> (i < 63 ? i : 63)) & 1; }

static int x_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc, sqlite3_value **argv)
{
    lv_cursor *c = (lv_cursor *)cur;
    lv_vtab *v = (lv_vtab *)cur->pVtab;
    sqlite3_uint64 used;
    size_t proj[LV_MAX_COLS], n = 0;
    bool wide = false;
    pch_error e;
    int rc;
    reset(c, v);
    c->eof = false;
    c->n_cons = 0;
    c->at = 0;
    if ((rc = pch_sql__plan(idxNum, idxStr, argc, argv, v->n_fields, c->cons, &c->n_cons, &used, &e)) != 0)
        return pch_sql__set_err(&v->base, &e, rc);
    for (int k = 0; k < c->n_cons; k++)
        if (!push_ok(&v->base, c->cons[k].col, c->cons[k].op)) {
            pch_error_set(&e, PCH_EINVAL, "lance: bad plan '%s'", idxStr);
            return pch_sql__set_err(&v->base, &e, PCH_EINVAL);
        }
    /* projection: every column the statement may read; `record` needs _raw_ and _offload_.
    ** Two passes (constrained columns, then the rest for the passing rows) pay off only when
    ** the rest holds a wide column (JSON or binary: data, _raw_, user columns); narrow ones
    ** are read in the same pass as the constraints, so no column is read twice. */
    for (int i = 0; i < v->n_fields; i++) {
        bool want = col_used(used, i);
        if (v->rec >= 0 && col_used(used, v->rec) && (i == v->c_raw || i == v->c_off)) want = true;
        if (want) {
            bool in_cons = false;
            pch_lance_type t = v->schema->fields[i].type;
            for (int k = 0; k < c->n_cons; k++) in_cons = in_cons || c->cons[k].col == i;
            if (!in_cons && (t == PCH_LANCE_JSON || t == PCH_LANCE_BINARY || t == PCH_LANCE_LARGE_BINARY)) wide = true;
            proj[n++] = (size_t)i;
        }
    }
    for (int k = 0; k < c->n_cons; k++) {   /* a single pass reads the constrained columns too */
        bool in_proj = false;
        for (size_t i = 0; i < n; i++) in_proj = in_proj || proj[i] == (size_t)c->cons[k].col;
        if (!in_proj && !wide) proj[n++] = (size_t)c->cons[k].col;
    }
    if (c->n_cons && (wide || !n)) {
        /* constrained columns first, then the projection of the passing rows only */
        if ((rc = pch_sql__select_rows(v->ctx, v->ds, c->cons, c->n_cons, &c->rows, &c->n_rows, &e)) != 0)
            return pch_sql__set_err(&v->base, &e, rc);
        c->check = false;
        rc = n ? pch_lance_scanner_open_rows(&c->sc, v->ds, proj, n, c->rows, c->n_rows, 1024, &e) : PCH_OK;
    } else {
        c->check = c->n_cons > 0;
        rc = n ? pch_lance_scanner_open(&c->sc, v->ds, proj, n, 1024, &e) : PCH_OK;
    }
    if (rc != 0) return pch_sql__set_err(&v->base, &e, rc);
    for (int i = 0; i < LV_MAX_COLS; i++) c->map[i] = -1;
    for (size_t i = 0; i < n; i++) c->map[proj[i]] = (int)i;
    if (!n) {
        /* nothing to read (count(*) and the like): one row per dataset / passing row */
        c->n_rows = c->rows ? c->n_rows : pch_lance_dataset_num_rows(v->ds);
        c->at = 0;
        c->eof = c->n_rows == 0;
        return SQLITE_OK;
    }
    c->at = (uint64_t)-1;
    return advance(c);
}

static int x_next(sqlite3_vtab_cursor *cur)
{
    lv_cursor *c = (lv_cursor *)cur;
    if (!c->sc) {                     /* no columns read: count down the rows */
        if (++c->at >= c->n_rows) c->eof = true;
        return SQLITE_OK;
    }
    return advance(c);
}

static int x_eof(sqlite3_vtab_cursor *cur) { return ((lv_cursor *)cur)->eof; }

/* `record`: the row's bytes (inline or hydrated) without the line terminator. */
static int record_col(lv_cursor *c, lv_vtab *v, sqlite3_context *ctx)
{
    const char *p;
    size_t n;
    char *obj = NULL;
    pch_error e;
    if (pch_sql__str(bcol(c, v->c_raw), c->row, &p, &n)) {
    } else if (pch_sql__str(bcol(c, v->c_off), c->row, &p, &n)) {
        uint64_t row = c->rows ? c->rows[c->at] : c->at;
        int rc = pch_cj_offload_read(v->ctx, v->path, (const uint8_t *)p, n, row, &obj, &n, &e);
        if (rc != 0) { sqlite3_result_error(ctx, e.msg, -1); return pch_sql__set_err(&v->base, &e, rc); }
        p = obj;
    } else {
        sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    if (n && p[n - 1] == '\n') n--;
    if (n && p[n - 1] == '\r') n--;
    sqlite3_result_text(ctx, p, (int)n, SQLITE_TRANSIENT);
    pch_free(v->ctx, obj);
    return SQLITE_OK;
}

static int x_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    lv_cursor *c = (lv_cursor *)cur;
    lv_vtab *v = (lv_vtab *)cur->pVtab;
    const pch_lance_column *lc;
    const char *p;
    size_t n;
    if (col == v->rec && v->rec >= 0) return record_col(c, v, ctx);
    if (col < 0 || col >= v->n_fields || !(lc = bcol(c, col))) { sqlite3_result_null(ctx); return SQLITE_OK; }
    if (lc->type == PCH_LANCE_JSON) {
        pch_error e;
        int rc;
        if (!pch_sql__str(lc, c->row, &p, &n)) { sqlite3_result_null(ctx); return SQLITE_OK; }
        pch_buf_clear(&c->text);
        if ((rc = pch_jsonb__to_json(&c->text, (const uint8_t *)p, n, &e)) != 0) {
            sqlite3_result_error(ctx, e.msg, -1);
            return pch_sql__set_err(&v->base, &e, rc);
        }
        sqlite3_result_text(ctx, (const char *)c->text.data, (int)c->text.len, SQLITE_TRANSIENT);
    } else {
        pch_sql__result(ctx, lc, c->row);
    }
    return SQLITE_OK;
}

static int x_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
    lv_cursor *c = (lv_cursor *)cur;
    *out = (sqlite3_int64)(c->rows && c->at < c->n_rows ? c->rows[c->at] : c->at);
    return SQLITE_OK;
}

static sqlite3_module k_lance_module = {
    0, x_connect, x_connect, x_best_index, x_disconnect, x_disconnect, x_open, x_close,
    x_filter, x_next, x_eof, x_column, x_rowid,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,   /* read-only */
#if SQLITE_VERSION_NUMBER >= 3044000
    NULL,
#endif
};

int pch_sql__register_lance(sqlite3 *db)
{
    return sqlite3_create_module(db, "lance", &k_lance_module, NULL);
}

int pch_sql_attach_dataset(sqlite3 *db, const char *dataset, uint64_t version, char **errmsg)
{
    pch_ctx *ctx = NULL;
    pch_error e;
    bool cj = false;
    char *q;
    int rc;
    if (pch_ctx_new(&ctx, NULL, NULL, &e) != 0) return SQLITE_NOMEM;
    rc = pch_cj_probe(ctx, dataset, &cj, &e);
    pch_ctx_free(ctx);
    if (rc != 0) { *errmsg = sqlite3_mprintf("%s", e.msg); return SQLITE_ERROR; }
    q = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.%s USING lance(%Q, %llu)", cj ? "records" : "dataset", dataset,
                        (unsigned long long)version);
    if (!q) return SQLITE_NOMEM;
    rc = sqlite3_exec(db, q, NULL, NULL, errmsg);
    sqlite3_free(q);
    return rc;
}
