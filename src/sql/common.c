/* Helpers shared by the virtual tables of src/sql (sql_int.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sql/sql_int.h"

int pch_sql__set_err(sqlite3_vtab *vt, const pch_error *e, int code)
{
    sqlite3_free(vt->zErrMsg);
    vt->zErrMsg = sqlite3_mprintf("%s", e && e->msg[0] ? e->msg : pch_status_name(code));
    if (code == PCH_ENOMEM) return SQLITE_NOMEM;
    if (code == PCH_ECORRUPT) return SQLITE_CORRUPT_VTAB;
    return SQLITE_ERROR;
}

const char *pch_sql__unquote(const char *s, size_t *n)
{
    *n = strlen(s);
    if (*n >= 2 && (s[0] == '\'' || s[0] == '"') && s[*n - 1] == s[0]) { s++; *n -= 2; }
    return s;
}

const char *pch_sql__type(pch_lance_type t)
{
    switch (t) {
    case PCH_LANCE_FLOAT32: case PCH_LANCE_FLOAT64: return "REAL";
    case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8: case PCH_LANCE_JSON: return "TEXT";
    case PCH_LANCE_BINARY: case PCH_LANCE_LARGE_BINARY: return "BLOB";
    default: return "INTEGER";
    }
}

bool pch_sql__i64(const pch_lance_column *lc, size_t row, int64_t *v)
{
    if (!pch_sql__valid(lc, row)) return false;
    switch (lc->type) {
    case PCH_LANCE_INT64: memcpy(v, lc->values + row * 8, 8); return true;
    case PCH_LANCE_INT32: { int32_t x; memcpy(&x, lc->values + row * 4, 4); *v = x; return true; }
    case PCH_LANCE_INT16: { int16_t x; memcpy(&x, lc->values + row * 2, 2); *v = x; return true; }
    case PCH_LANCE_INT8: *v = (int8_t)lc->values[row]; return true;
    case PCH_LANCE_UINT32: { uint32_t x; memcpy(&x, lc->values + row * 4, 4); *v = x; return true; }
    case PCH_LANCE_UINT16: { uint16_t x; memcpy(&x, lc->values + row * 2, 2); *v = x; return true; }
    case PCH_LANCE_UINT8: *v = lc->values[row]; return true;
    case PCH_LANCE_BOOL: *v = lc->values[row] != 0; return true;
    default: return false;
    }
}

int pch_sql__best_index(sqlite3_vtab *vt, sqlite3_index_info *ii, pch_sql_pushable pushable)
{
    char *s, cons[3 * PCH_SQL_MAX_CONS + 1];
    int n = 0;
    double cost = 1e6;
    for (int i = 0; i < ii->nConstraint && n < PCH_SQL_MAX_CONS; i++) {
        const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
        char op;
        if (!c->usable || c->iColumn < 0 || c->iColumn > 0xff) continue;
        switch (c->op) {
        case SQLITE_INDEX_CONSTRAINT_EQ: op = '='; break;
        case SQLITE_INDEX_CONSTRAINT_GT: op = '>'; break;
        case SQLITE_INDEX_CONSTRAINT_GE: op = 'g'; break;
        case SQLITE_INDEX_CONSTRAINT_LT: op = '<'; break;
        case SQLITE_INDEX_CONSTRAINT_LE: op = 'l'; break;
        case SQLITE_INDEX_CONSTRAINT_LIKE: op = 'L'; break;
        default: continue;
        }
        if (!pushable(vt, c->iColumn, op)) continue;
        /* pch_sql__test compares text bytewise: a constraint under another collation
        ** (`= 'x' COLLATE NOCASE`) is left to SQLite alone */
        {
            const char *coll = sqlite3_vtab_collation(ii, i);
            if (coll && sqlite3_stricmp(coll, "BINARY") != 0) continue;
        }
        snprintf(cons + 3 * n, 4, "%02x%c", (unsigned)c->iColumn, op);
        ii->aConstraintUsage[i].argvIndex = n + 1;
        ii->aConstraintUsage[i].omit = 0;        /* SQLite re-checks: see sql_int.h */
        cost /= op == '=' ? 50 : 4;
        n++;
    }
    if (!(s = sqlite3_malloc(16 + 3 * n + 1))) return SQLITE_NOMEM;
    snprintf(s, 17, "%016llx", (unsigned long long)ii->colUsed);
    memcpy(s + 16, cons, (size_t)(3 * n));
    s[16 + 3 * n] = 0;
    ii->idxStr = s;
    ii->needToFreeIdxStr = 1;
    ii->idxNum = n;
    ii->estimatedCost = cost;
    ii->estimatedRows = (sqlite3_int64)(cost > 1 ? cost : 1);
    return SQLITE_OK;
}

int pch_sql__plan(int idxNum, const char *idxStr, int argc, sqlite3_value **argv, int n_cols,
                  pch_sql_cons *cons, int *n, sqlite3_uint64 *used, pch_error *err)
{
    char hex[17];
    *n = 0;
    if (!idxStr || idxNum < 0 || idxNum > PCH_SQL_MAX_CONS || idxNum > argc || strlen(idxStr) != 16 + 3 * (size_t)idxNum)
        return pch_error_set(err, PCH_EINVAL, "sql: bad plan");
    memcpy(hex, idxStr, 16);
    hex[16] = 0;
    *used = (sqlite3_uint64)strtoull(hex, NULL, 16);
    for (int k = 0; k < idxNum; k++) {
        char hx[3] = { idxStr[16 + 3 * k], idxStr[16 + 3 * k + 1], 0 };
        cons[k].col = (int)strtol(hx, NULL, 16);
        cons[k].op = idxStr[16 + 3 * k + 2];
        cons[k].v = argv[k];
        if (cons[k].col < 0 || cons[k].col >= n_cols || !strchr("=>g<lL", cons[k].op) || !cons[k].op)
            return pch_error_set(err, PCH_EINVAL, "sql: bad plan '%s'", idxStr);
    }
    *n = idxNum;
    return PCH_OK;
}

static int lower(int ch) { return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch; }

/* LIKE 'prefix%' (no other wildcard, ASCII): may the text match? -1 for other patterns. */
static int like_prefix(const char *p, size_t n, sqlite3_value *pat)
{
    const char *q = (const char *)sqlite3_value_text(pat);
    size_t qn = (size_t)sqlite3_value_bytes(pat);
    if (!q || qn == 0 || q[qn - 1] != '%') return -1;
    qn--;
    for (size_t i = 0; i < qn; i++) if (q[i] == '%' || q[i] == '_' || (unsigned char)q[i] >= 0x80) return -1;
    if (n < qn) return 0;
    for (size_t i = 0; i < qn; i++) if (lower((unsigned char)p[i]) != lower((unsigned char)q[i])) return 0;
    return 1;
}

int pch_sql__test(const pch_lance_column *lc, size_t row, const pch_sql_cons *c)
{
    int t = sqlite3_value_type(c->v), cmp;
    if (!lc) return -1;
    if (pch_lance_type_is_var(lc->type)) {
        const char *p, *q;
        size_t n, qn;
        if (t != SQLITE_TEXT || lc->type == PCH_LANCE_JSON) return -1;
        if (!pch_sql__str(lc, row, &p, &n)) return 0;
        if (c->op == 'L') return like_prefix(p, n, c->v);
        q = (const char *)sqlite3_value_text(c->v);
        qn = (size_t)sqlite3_value_bytes(c->v);
        cmp = memcmp(p, q, n < qn ? n : qn);
        if (cmp == 0) cmp = n < qn ? -1 : n > qn ? 1 : 0;
    } else if (c->op == 'L') {
        return -1;
    } else if (lc->type == PCH_LANCE_FLOAT32 || lc->type == PCH_LANCE_FLOAT64) {
        double x, y;
        if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) return -1;
        if (!pch_sql__valid(lc, row)) return 0;
        if (lc->type == PCH_LANCE_FLOAT64) memcpy(&x, lc->values + row * 8, 8);
        else { float f; memcpy(&f, lc->values + row * 4, 4); x = f; }
        y = sqlite3_value_double(c->v);
        if (x != x || (t == SQLITE_INTEGER && (y > 9007199254740992.0 || y < -9007199254740992.0))) return -1;
        cmp = x < y ? -1 : x > y;
    } else if (lc->type == PCH_LANCE_UINT64) {
        uint64_t x;
        int64_t y;
        if (t != SQLITE_INTEGER) return -1;
        if (!pch_sql__valid(lc, row)) return 0;
        memcpy(&x, lc->values + row * 8, 8);
        if (x > (uint64_t)INT64_MAX) return -1;   /* returned as TEXT: SQLite compares */
        y = sqlite3_value_int64(c->v);
        cmp = (int64_t)x < y ? -1 : (int64_t)x > y;
    } else {
        int64_t x, y;
        if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) return -1;
        if (!pch_sql__i64(lc, row, &x)) return 0;
        if (t == SQLITE_FLOAT) {
            double d = sqlite3_value_double(c->v);
            if (x > 9007199254740992LL || x < -9007199254740992LL) return -1;   /* not exact as a double */
            cmp = (double)x < d ? -1 : (double)x > d;
        } else {
            y = sqlite3_value_int64(c->v);
            cmp = x < y ? -1 : x > y;
        }
    }
    switch (c->op) {
    case '=': return cmp == 0;
    case '>': return cmp > 0;
    case 'g': return cmp >= 0;
    case '<': return cmp < 0;
    case 'l': return cmp <= 0;
    default: return -1;
    }
}

void pch_sql__result(sqlite3_context *ctx, const pch_lance_column *lc, size_t row)
{
    const char *p;
    size_t n;
    int64_t x;
    if (!lc || !pch_sql__valid(lc, row)) { sqlite3_result_null(ctx); return; }
    if (pch_lance_type_is_var(lc->type)) {
        if (!pch_sql__str(lc, row, &p, &n)) sqlite3_result_null(ctx);
        else if (lc->type == PCH_LANCE_BINARY || lc->type == PCH_LANCE_LARGE_BINARY) sqlite3_result_blob(ctx, p, (int)n, SQLITE_TRANSIENT);
        else sqlite3_result_text(ctx, p, (int)n, SQLITE_TRANSIENT);
    } else if (lc->type == PCH_LANCE_FLOAT64) {
        double d;
        memcpy(&d, lc->values + row * 8, 8);
        sqlite3_result_double(ctx, d);
    } else if (lc->type == PCH_LANCE_FLOAT32) {
        float f;
        memcpy(&f, lc->values + row * 4, 4);
        sqlite3_result_double(ctx, f);
    } else if (lc->type == PCH_LANCE_UINT64) {
        uint64_t u;
        memcpy(&u, lc->values + row * 8, 8);
        if (u <= (uint64_t)INT64_MAX) sqlite3_result_int64(ctx, (sqlite3_int64)u);
        else {
            char t[24];
            snprintf(t, sizeof t, "%" PRIu64, u);
            sqlite3_result_text(ctx, t, -1, SQLITE_TRANSIENT);
        }
    } else if (pch_sql__i64(lc, row, &x)) {
        sqlite3_result_int64(ctx, x);
    } else {
        sqlite3_result_null(ctx);
    }
}

int pch_sql__select_rows(pch_ctx *ctx, pch_lance_dataset *ds, const pch_sql_cons *cons, int n_cons,
                         uint64_t **rows_out, size_t *n_out, pch_error *err)
{
    size_t cols[PCH_SQL_MAX_CONS], nc = 0, n = 0, cap = 0;
    int bi[PCH_SQL_MAX_CONS];
    uint64_t at = 0, *rows = NULL;
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *b;
    int rc;
    *rows_out = NULL;
    *n_out = 0;
    for (int k = 0; k < n_cons && k < PCH_SQL_MAX_CONS; k++) {   /* each column once */
        size_t j = 0;
        while (j < nc && cols[j] != (size_t)cons[k].col) j++;
        if (j == nc) cols[nc++] = (size_t)cons[k].col;
        bi[k] = (int)j;
    }
    rc = pch_lance_scanner_open(&sc, ds, cols, nc, 8192, err);
    while (rc == 0 && (rc = pch_lance_scanner_next(sc, &b, err)) == 0) {
        for (size_t r = 0; r < b->n_rows; r++, at++) {
            bool pass = true;
            for (int k = 0; k < n_cons && pass; k++) pass = pch_sql__test(&b->columns[bi[k]], r, &cons[k]) != 0;
            if (!pass) continue;
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 256, bytes;
                uint64_t *nr;
                if (!pch_mul_size(&bytes, ncap, sizeof *nr) || !(nr = pch_realloc(ctx, rows, bytes))) {
                    rc = pch_error_set(err, PCH_ENOMEM, "sql: out of memory");
                    break;
                }
                rows = nr;
                cap = ncap;
            }
            rows[n++] = at;
        }
    }
    pch_lance_scanner_free(sc);
    if (rc == PCH_ITEROVER && !rows && !(rows = pch_malloc(ctx, 8))) rc = pch_error_set(err, PCH_ENOMEM, "sql: out of memory");
    if (rc != PCH_ITEROVER) { pch_free(ctx, rows); return rc; }
    *rows_out = rows;
    *n_out = n;
    return PCH_OK;
}

/* ---- interning (sql_int.h) ---- */

static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
    const uint8_t *b = p;
    uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = (h ^ (w * 0xff51afd7ed558ccdull)) * 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 29;
        b += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, b, n);
        h = (h ^ (w * 0xff51afd7ed558ccdull)) * 0xc4ceb9fe1a85ec53ull;
    }
    h ^= h >> 32;
    return h * 0x9e3779b97f4a7c15ull;
}

void pch_sql__intern_dispose(pch_sql_interner *t)
{
    pch_free(t->ctx, t->slot);
    pch_free(t->ctx, t->hash);
    pch_buf_dispose(&t->off);
    pch_buf_dispose(&t->data);
}

const uint8_t *pch_sql__intern_bytes(const pch_sql_interner *t, uint32_t id, size_t *n)
{
    const uint64_t *o = (const uint64_t *)(const void *)t->off.data;
    *n = (size_t)(o[id] - o[id - 1]);
    return t->data.data + o[id - 1];
}

static int intern_grow(pch_sql_interner *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    uint32_t *s = pch_calloc(t->ctx, cap, sizeof *s);
    uint64_t *h = pch_malloc(t->ctx, cap / 2 * sizeof *h + 8);
    if (!s || !h) { pch_free(t->ctx, s); pch_free(t->ctx, h); return PCH_ENOMEM; }
    if (t->hash) memcpy(h, t->hash, t->n * sizeof *h);
    for (size_t id = 1; id <= t->n; id++) {
        size_t i = (size_t)h[id - 1] & (cap - 1);
        while (s[i]) i = (i + 1) & (cap - 1);
        s[i] = (uint32_t)id;
    }
    pch_free(t->ctx, t->slot);
    pch_free(t->ctx, t->hash);
    t->slot = s;
    t->hash = h;
    t->cap = cap;
    return PCH_OK;
}

int pch_sql__intern(pch_sql_interner *t, const void *p, size_t n, uint32_t *id)
{
    uint64_t h = hash_bytes(p, n, 0x51ed2701), end;
    size_t i;
    if (t->off.len == 0) { uint64_t z = 0; PCH_TRY(pch_buf_append(&t->off, &z, 8)); }
    if ((t->n + 1) * 2 > t->cap) PCH_TRY(intern_grow(t));
    for (i = (size_t)h & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1)) {
        uint32_t k = t->slot[i];
        size_t kn;
        const uint8_t *kb;
        if (t->hash[k - 1] != h) continue;
        kb = pch_sql__intern_bytes(t, k, &kn);
        if (kn == n && (n == 0 || memcmp(kb, p, n) == 0)) { *id = k; return PCH_OK; }
    }
    if (t->n >= UINT32_MAX - 1) return PCH_ELIMIT;
    PCH_TRY(pch_buf_append(&t->data, p, n));
    end = t->data.len;
    PCH_TRY(pch_buf_append(&t->off, &end, 8));
    t->hash[t->n] = h;
    t->slot[i] = (uint32_t)++t->n;
    *id = (uint32_t)t->n;
    return PCH_OK;
}
