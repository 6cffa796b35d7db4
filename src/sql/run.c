/* pchronicle sql ROOT|DATASET "SELECT ..." (docs/sql.md): an in-memory SQLite connection with
** the four Storyline relations (or a Lance dataset's records / dataset) attached as temp
** virtual tables; each statement's rows are
** printed as an aligned table, CSV (RFC 4180 quoting) or JSON lines (one object per row,
** SQLite types kept: INTEGER/REAL as numbers, TEXT as strings, NULL as null, BLOB base64). */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/core.h"
#include "json/json.h"
#include "pchronicle/sql.h"
#include "pchronicle/storyline.h"
#include "sql/sql_int.h"

/* Where s[0..n) first holds a byte a CSV field cares about: NUL (its end, as the SQLite
** shell reads text) or one that needs quotes (',' '"' CR LF); n when none. Sixteen bytes at
** a time where SSE2 exists: a byte loop here was a sixth of a narrow scan's warm time. */
static size_t csv_special(const char *s, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i z = _mm_setzero_si128(), c = _mm_set1_epi8(','), q = _mm_set1_epi8('"'),
                  lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, z), _mm_cmpeq_epi8(v, c)),
                                 _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, lf)),
                                              _mm_cmpeq_epi8(v, cr)));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask) return i + (size_t)__builtin_ctz(mask);
    }
#endif
    for (; i < n; i++)
        if (!s[i] || s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') return i;
    return n;
}

/* One CSV field (RFC 4180 quoting): the text up to its first NUL, as the SQLite shell. */
static void csv_field(pch_buf *out, const char *s, size_t n)
{
    size_t i = csv_special(s, n);
    if (i == n || !s[i]) {              /* nothing to quote */
        pch_buf_append(out, s, i);
        return;
    }
    n = strnlen(s, n);
    pch_buf_putc(out, '"');
    for (i = 0; i < n; i++) { if (s[i] == '"') pch_buf_putc(out, '"'); pch_buf_putc(out, (uint8_t)s[i]); }
    pch_buf_putc(out, '"');
}

/* CSV and JSON lines go to out in pieces of about this size: one stdio call per piece, not
** one per field (measured: per-field fwrite was a quarter of a narrow scan's warm time). */
#define PRINT_PIECE (64 * 1024)

static int flush_piece(pch_buf *b, FILE *out, pch_error *err)
{
    if (!b->len) return PCH_OK;
    if (fwrite(b->data, 1, b->len, out) != b->len) return pch_error_set(err, PCH_EIO, "sql: cannot write the rows");
    pch_buf_clear(b);
    return PCH_OK;
}

/* Print every row src gives (the SQLite path and the vectorised engine share this, so both
** print a value the same way). */
int pch_sql__print(const pch_sql_rowsrc *src, pch_sql_format fmt, FILE *out, uint64_t *n_rows, pch_error *err)
{
    int nc = src->n_cols, rc;
    pch_buf line;
    pch_sql_cell *cell;
    char **cells = NULL;            /* table format: all cells buffered to align columns */
    size_t n_cells = 0, cap = 0, *width = NULL;
    pch_buf_init(&line, NULL);
    if (fmt == PCH_SQL_CSV) {
        for (int i = 0; i < nc; i++) { if (i) pch_buf_putc(&line, ','); csv_field(&line, src->names[i], strlen(src->names[i])); }
        pch_buf_putc(&line, '\n');
    }
    width = calloc((size_t)nc, sizeof *width);
    cell = calloc((size_t)nc, sizeof *cell);
    if (!width || !cell) {
        free(width);
        free(cell);
        pch_buf_dispose(&line);
        return pch_error_set(err, PCH_ENOMEM, "sql: out of memory");
    }
    if (fmt == PCH_SQL_TABLE)
        for (int i = 0; i < nc; i++) {
            char *h = strdup(src->names[i]);
            if (n_cells == cap) { cap = cap ? cap * 2 : 64; cells = realloc(cells, cap * sizeof *cells); }
            cells[n_cells++] = h;
        }
    if (n_rows) *n_rows = 0;
    while ((rc = src->next(src->payload, cell, err)) == 1) {
        if (n_rows) (*n_rows)++;
        if (fmt == PCH_SQL_DISCARD) continue;   /* produced and counted, not written */
        if (fmt == PCH_SQL_JSONL) pch_buf_putc(&line, '{');
        for (int i = 0; i < nc; i++) {
            int t = cell[i].type;
            const char *txt = t == SQLITE_NULL ? NULL : cell[i].s;
            if (fmt == PCH_SQL_JSONL) {
                const char *name = src->names[i];
                if (i) pch_buf_putc(&line, ',');
                pch_json__write_string(&line, name, strlen(name));
                pch_buf_putc(&line, ':');
                if (t == SQLITE_NULL) pch_buf_append_str(&line, "null");
                else if (t == SQLITE_INTEGER) { char d[24]; size_t n = pch_json__fmt_i64(d, cell[i].i); pch_buf_append(&line, d, n); }
                else if (t == SQLITE_FLOAT) { char d[32]; size_t n = pch_json__fmt_double(d, cell[i].f); pch_buf_append(&line, d, n); }
                else if (t == SQLITE_BLOB) { pch_buf_append_str(&line, "{\"base64\":\""); pch_base64_encode(&line, (const uint8_t *)cell[i].s, cell[i].n); pch_buf_append_str(&line, "\"}"); }
                else if (pch_json__write_string(&line, txt, cell[i].n) < 0) pch_buf_append_str(&line, "null");
            } else if (fmt == PCH_SQL_CSV) {
                if (i) pch_buf_putc(&line, ',');
                if (txt) csv_field(&line, txt, cell[i].n);
            } else {
                if (n_cells == cap) { cap = cap ? cap * 2 : 64; cells = realloc(cells, cap * sizeof *cells); }
                cells[n_cells++] = txt ? strndup(txt, cell[i].n) : strdup("NULL");
            }
        }
        if (fmt == PCH_SQL_JSONL) pch_buf_append(&line, "}\n", 2);
        else if (fmt == PCH_SQL_CSV) pch_buf_putc(&line, '\n');
        if (line.len >= PRINT_PIECE && (rc = flush_piece(&line, out, err)) < 0) break;
    }
    if (rc >= 0) {
        int f = flush_piece(&line, out, err);
        if (f < 0) rc = f;
    } else if (line.len) {
        (void)!fwrite(line.data, 1, line.len, out);  /* the rows before the error, as before */
    }
    if (fmt == PCH_SQL_TABLE && cells) {
        for (size_t k = 0; k < n_cells; k++) { size_t l = cells[k] ? strlen(cells[k]) : 0; if (l > width[k % (size_t)nc]) width[k % (size_t)nc] = l; }
        for (size_t k = 0; k < n_cells; k++) {
            size_t col = k % (size_t)nc;
            fprintf(out, "%s%-*s", col ? "  " : "", col + 1 == (size_t)nc ? 0 : (int)width[col], cells[k] ? cells[k] : "");
            if (col + 1 == (size_t)nc) fputc('\n', out);
            if (k < (size_t)nc && col + 1 == (size_t)nc) {
                for (int i = 0; i < nc; i++) { fprintf(out, "%s", i ? "  " : ""); for (size_t j = 0; j < width[i]; j++) fputc('-', out); }
                fputc('\n', out);
            }
        }
    }
    for (size_t k = 0; k < n_cells; k++) free(cells[k]);
    free(cells);
    free(width);
    free(cell);
    pch_buf_dispose(&line);
    return rc < 0 ? rc : PCH_OK;
}

/* A prepared statement as a row source: each value as SQLite converts it (text of a REAL
** by SQLite's own formatting). */
static int stmt_next(void *payload, pch_sql_cell *cell, pch_error *err)
{
    sqlite3_stmt *st = payload;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) return pch_error_set(err, PCH_EINVAL, "sql: %s", sqlite3_errmsg(sqlite3_db_handle(st)));
    for (int i = 0, nc = sqlite3_column_count(st); i < nc; i++) {
        pch_sql_cell *c = &cell[i];
        c->type = sqlite3_column_type(st, i);
        c->s = NULL;
        c->n = 0;
        if (c->type == SQLITE_NULL) continue;
        if (c->type == SQLITE_BLOB) c->s = sqlite3_column_blob(st, i);
        else c->s = (const char *)sqlite3_column_text(st, i);
        c->n = (size_t)sqlite3_column_bytes(st, i);
        if (c->type == SQLITE_INTEGER) c->i = sqlite3_column_int64(st, i);
        else if (c->type == SQLITE_FLOAT) c->f = sqlite3_column_double(st, i);
    }
    return 1;
}

/* The same source for PCH_SQL_DISCARD: SQLite runs the statement, no value is converted. */
static int stmt_step(void *payload, pch_sql_cell *cell, pch_error *err)
{
    sqlite3_stmt *st = payload;
    int rc = sqlite3_step(st);
    (void)cell;
    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) return pch_error_set(err, PCH_EINVAL, "sql: %s", sqlite3_errmsg(sqlite3_db_handle(st)));
    return 1;
}

int pch_sql__print_stmt(sqlite3_stmt *st, pch_sql_format fmt, FILE *out, uint64_t *n_rows, pch_error *err)
{
    int nc = sqlite3_column_count(st), rc;
    const char **names;
    pch_sql_rowsrc src;
    if (n_rows) *n_rows = 0;
    if (nc == 0) {                  /* not a query: run it */
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
        return rc == SQLITE_DONE ? PCH_OK : pch_error_set(err, PCH_EINVAL, "sql: %s", sqlite3_errmsg(sqlite3_db_handle(st)));
    }
    if (!(names = calloc((size_t)nc, sizeof *names))) return pch_error_set(err, PCH_ENOMEM, "sql: out of memory");
    for (int i = 0; i < nc; i++) names[i] = sqlite3_column_name(st, i);
    src.n_cols = nc;
    src.names = names;
    src.next = fmt == PCH_SQL_DISCARD ? stmt_step : stmt_next;
    src.payload = st;
    rc = pch_sql__print(&src, fmt, out, n_rows, err);
    free(names);
    return rc;
}

struct target { const char *path; uint64_t version; };

/* A Storyline root gets its relations, anything else is opened as a Lance dataset. */
static int attach_target(sqlite3 *db, void *payload, char **msg)
{
    const struct target *t = payload;
    return pch_storyline_is_root(t->path) ? pch_sql_attach_root(db, t->path, msg)
                                          : pch_sql_attach_dataset(db, t->path, t->version, msg);
}

int pch_sql_run(const char *root, const char *sql, pch_sql_format fmt, FILE *out, pch_error *err)
{
    return pch_sql_run_at(root, 0, sql, fmt, out, err);
}

int pch_sql_run_at(const char *root, uint64_t version, const char *sql, pch_sql_format fmt, FILE *out,
                   pch_error *err)
{
    struct target t = { root, version };
    if (version && pch_storyline_is_root(root))
        return pch_error_set(err, PCH_EINVAL, "sql: %s is a Storyline root: --version applies to a Lance dataset", root);
    return pch_sql_run_with(attach_target, &t, sql, fmt, out, err);
}

int pch_sql_run_with(int (*attach)(sqlite3 *db, void *payload, char **errmsg), void *payload, const char *sql,
                     pch_sql_format fmt, FILE *out, pch_error *err)
{
    sqlite3 *db = NULL;
    char *msg = NULL;
    int rc;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return pch_error_set(err, PCH_ENOMEM, "sql: cannot open sqlite");
    }
    /* GROUP BY / ORDER BY sorters of a large scan stay in memory instead of spilling to a
    ** temp file (measured: 8 % of a 500k-row GROUP BY went to pwrite) */
    rc = sqlite3_exec(db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = pch_sql_register(db);
    if (rc == SQLITE_OK) rc = attach(db, payload, &msg);
    if (rc != SQLITE_OK) {
        rc = pch_error_set(err, PCH_EINVAL, "sql: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        sqlite3_close(db);
        return rc;
    }
    rc = pch_sql_exec(db, sql, fmt, out, err);
    sqlite3_close(db);
    return rc;
}

int pch_sql_exec(sqlite3 *db, const char *sql, pch_sql_format fmt, FILE *out, pch_error *err)
{
    const char *tail = sql;
    int rc = PCH_OK;
    while (rc == PCH_OK && tail && *tail) {
        sqlite3_stmt *st = NULL;
        const char *next = NULL;
        if (sqlite3_prepare_v2(db, tail, -1, &st, &next) != SQLITE_OK) {
            rc = pch_error_set(err, PCH_EINVAL, "sql: %s", sqlite3_errmsg(db));
            break;
        }
        if (!st) break;             /* only whitespace/comments left */
        rc = pch_sql__print_stmt(st, fmt, out, NULL, err);
        sqlite3_finalize(st);
        tail = next;
    }
    return rc;
}
