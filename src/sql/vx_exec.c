/* The vectorised engine of the Vortex projection's SQL (RFC-0006 §13.2, §22.4; docs/sql.md
** "Execution paths"): the statements it answers exactly run over column vectors of the
** narrow scans (pch_sql__vx_vec_next), a cluster at a time, not row by row through SQLite's
** VM and sorter; every other statement goes to SQLite over the same relations.
**
** What it answers: one SELECT over steps or tool_calls whose every column is a lane column,
**     SELECT item, ... FROM steps|tool_calls [[AS] alias]
**         [WHERE pred AND ...] [GROUP BY term, ...] [ORDER BY term [ASC|DESC], ...]
**         [LIMIT n [OFFSET m]]
** items: columns, count(*), count/sum/min/max/avg(column); preds: column op literal (= == !=
** <> < <= > >=, either side), IS [NOT] NULL, [NOT] BETWEEN, IN (literals), text column LIKE
** 'ASCII pattern' (SQLite's matching, like_match; no ESCAPE). Nothing else —
** a join, an expression, a function, DISTINCT, HAVING, a collation, a literal of another
** type than its column — is in its grammar, and goes to SQLite.
**
** Exactness (the differential tests run every statement both ways): SQLite prepares every
** statement first, so errors, result names and name resolution are SQLite's own; literals
** are SQLite's values (each one evaluated by SQLite); comparisons follow SQLite's for the
** column's type (BINARY text, exact integer/real comparison, a NaN REAL is NULL as the
** virtual table gives it); groups come out in SQLite's order (ascending keys, NULL first);
** and where SQLite's answer depends on its own row order the engine hands the statement
** back to SQLite at run time before printing anything: rows tied on every ORDER BY key but
** different, sum over 2^63 (SQLite's "integer overflow"), avg of integers whose partial sums
** could be inexact as doubles (|sum| >= 2^53), a REAL min/max of a group that saw both zero
** signs. sum/avg of REAL columns (their rounding depends on the order SQLite adds them in)
** are SQLite's. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"
#include "json/json.h"
#include "pchronicle/sql.h"
#include "pchronicle/storyline.h"
#include "pchronicle-vortex/projection.h"
#include "sql/sql_int.h"

/* ------------------------------------------------------------------ tokens */

enum { T_END, T_ID, T_STR, T_NUM, T_OP };
typedef struct tok { int t; const char *p; size_t n; } tok;

typedef struct lexer { const char *p, *end; tok cur; bool bad; } lexer;

static void lex_next(lexer *x)
{
    const char *p = x->p;
    for (;;) {                      /* whitespace and comments */
        while (p < x->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f')) p++;
        if (x->end - p >= 2 && p[0] == '-' && p[1] == '-') { while (p < x->end && *p != '\n') p++; continue; }
        if (x->end - p >= 2 && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (x->end - q >= 2 && !(q[0] == '*' && q[1] == '/')) q++;
            if (x->end - q < 2) { x->bad = true; x->cur.t = T_END; return; }
            p = q + 2;
            continue;
        }
        break;
    }
    x->cur.p = p;
    if (p >= x->end) { x->cur.t = T_END; x->cur.n = 0; x->p = p; return; }
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
        const char *q = p;
        while (q < x->end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_')) q++;
        x->cur.t = T_ID;
        x->cur.n = (size_t)(q - p);
        x->p = q;
        return;
    }
    if (*p == '"' || *p == '\'' || *p == '`' || *p == '[') {   /* quoted identifier or string */
        char close = *p == '[' ? ']' : *p;
        const char *q = p + 1;
        for (;;) {
            if (q >= x->end) { x->bad = true; x->cur.t = T_END; return; }
            if (*q == close) {
                if (close != ']' && q + 1 < x->end && q[1] == close) { q += 2; continue; }
                break;
            }
            q++;
        }
        x->cur.t = *p == '\'' ? T_STR : T_ID;
        x->cur.n = (size_t)(q + 1 - p);
        x->p = q + 1;
        return;
    }
    if ((*p >= '0' && *p <= '9') || (*p == '.' && p + 1 < x->end && p[1] >= '0' && p[1] <= '9')) {
        const char *q = p;
        if (x->end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) { x->bad = true; x->cur.t = T_END; return; }
        while (q < x->end && *q >= '0' && *q <= '9') q++;
        if (q < x->end && *q == '.') { q++; while (q < x->end && *q >= '0' && *q <= '9') q++; }
        if (q < x->end && (*q == 'e' || *q == 'E')) {
            q++;
            if (q < x->end && (*q == '+' || *q == '-')) q++;
            while (q < x->end && *q >= '0' && *q <= '9') q++;
        }
        if (q < x->end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_')) { x->bad = true; x->cur.t = T_END; return; }
        x->cur.t = T_NUM;
        x->cur.n = (size_t)(q - p);
        x->p = q;
        return;
    }
    {
        static const char *const two[] = { "==", "!=", "<>", "<=", ">=", NULL };
        for (int i = 0; two[i]; i++)
            if (x->end - p >= 2 && p[0] == two[i][0] && p[1] == two[i][1]) {
                x->cur.t = T_OP; x->cur.n = 2; x->p = p + 2;
                return;
            }
        if (strchr("(),*.;=<>-+", *p)) { x->cur.t = T_OP; x->cur.n = 1; x->p = p + 1; return; }
    }
    x->bad = true;
    x->cur.t = T_END;
}

static bool is_kw(const tok *t, const char *kw)
{
    return t->t == T_ID && t->p[0] != '"' && t->p[0] != '`' && t->p[0] != '[' && strlen(kw) == t->n &&
           strncasecmp(t->p, kw, t->n) == 0;
}
static bool is_op(const tok *t, const char *op) { return t->t == T_OP && strlen(op) == t->n && memcmp(t->p, op, t->n) == 0; }
static bool accept_kw(lexer *x, const char *kw) { if (!is_kw(&x->cur, kw)) return false; lex_next(x); return true; }
static bool accept_op(lexer *x, const char *op) { if (!is_op(&x->cur, op)) return false; lex_next(x); return true; }

/* An identifier token's name (quotes removed, doubled quotes undone) into buf. */
static bool tok_name(const tok *t, char *buf, size_t cap)
{
    size_t n = 0;
    if (t->t != T_ID) return false;
    if (t->p[0] == '"' || t->p[0] == '`' || t->p[0] == '[') {
        char q = t->p[0] == '[' ? ']' : t->p[0];
        for (size_t i = 1; i + 1 < t->n; i++) {
            if (n + 1 >= cap) return false;
            buf[n++] = t->p[i];
            if (q != ']' && t->p[i] == q) i++;
        }
    } else {
        if (t->n >= cap) return false;
        memcpy(buf, t->p, t->n);
        n = t->n;
    }
    buf[n] = 0;
    return strlen(buf) == n;
}

/* A number token as a result-column ordinal (1 ..), -1 if it is not a small integer. */
static long tok_ordinal(const tok *t)
{
    long v = 0;
    if (t->t != T_NUM || t->n > 6) return -1;
    for (size_t i = 0; i < t->n; i++) {
        if (t->p[i] < '0' || t->p[i] > '9') return -1;
        v = v * 10 + (t->p[i] - '0');
    }
    return v;
}

/* Words that end an item or a FROM clause (an alias may not be one). */
static bool is_reserved(const tok *t)
{
    static const char *const kw[] = { "FROM", "WHERE", "GROUP", "ORDER", "LIMIT", "OFFSET", "HAVING", "AS", "AND", "OR",
                                      "NOT", "ON", "USING", "JOIN", "LEFT", "INNER", "CROSS", "NATURAL", "UNION",
                                      "EXCEPT", "INTERSECT", "WINDOW", "ASC", "DESC", "BY", "IS", "IN", "BETWEEN",
                                      "LIKE", "GLOB", "COLLATE", "NULLS", "SELECT", "VALUES", "ESCAPE", "FILTER",
                                      "OVER", "INDEXED", "RIGHT", "FULL", "OUTER", "MATCH", "REGEXP", "ISNULL",
                                      "NOTNULL", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "EXISTS", NULL };
    for (int i = 0; kw[i]; i++) if (is_kw(t, kw[i])) return true;
    return false;
}

/* ------------------------------------------------------------------ plans */

enum { A_NONE, A_COUNT_STAR, A_COUNT, A_SUM, A_MIN, A_MAX, A_AVG };
enum { P_EQ, P_NE, P_LT, P_LE, P_GT, P_GE, P_NULL, P_NOTNULL, P_IN, P_NOTIN, P_LIKE };

#define VQ_MAX 32                   /* items, predicates, keys, literals of one statement */

typedef struct vq_item { int agg, col; } vq_item;
typedef struct vq_pred { int col, op, n_lit, lit0; } vq_pred;   /* literals lit[lit0 .. lit0 + n_lit) */
typedef struct vq_key { int item; bool desc; } vq_key;         /* an ORDER BY term: an output item */

typedef struct vq_plan {
    pch_storyline_table t;
    const pch_lance_schema *schema;
    int n_items, n_visible;         /* items past n_visible are hidden sort keys */
    vq_item item[VQ_MAX];
    int n_pred;
    vq_pred pred[VQ_MAX];
    int n_lit;
    sqlite3_value *lit[VQ_MAX];     /* SQLite's values of the literals (sqlite3_value_dup) */
    int n_group;
    int group[VQ_MAX];              /* table columns */
    int n_order;
    vq_key order[VQ_MAX];
    bool aggregate;
    int64_t limit, offset;          /* limit < 0: none */
    uint64_t used;
    char why[160];                  /* when not answered: the reason (--explain) */
} vq_plan;

typedef struct parser {
    lexer x;
    vq_plan *p;
    sqlite3 *db;
    char alias[128];
    const char *table;
    int depth;                      /* parentheses open in the WHERE clause */
} parser;

static bool reject(parser *ps, const char *why)
{
    if (!ps->p->why[0]) snprintf(ps->p->why, sizeof ps->p->why, "%s", why);
    return false;
}

static int col_of(const vq_plan *p, const char *name)
{
    for (size_t i = 0; i < p->schema->n_fields && i < 63; i++)
        if (strcasecmp(p->schema->fields[i].name, name) == 0) return (int)i;
    return -1;
}

static char kind_of(const vq_plan *p, int col)
{
    return pch_sql__vx_lane_kind(p->t, p->schema->fields[col].name);
}

/* colref: name | qualifier.name, a lane column of the table. */
static bool parse_colref(parser *ps, int *col)
{
    char a[128], b[128];
    if (!tok_name(&ps->x.cur, a, sizeof a) || is_reserved(&ps->x.cur)) return reject(ps, "an expression the engine does not evaluate");
    lex_next(&ps->x);
    if (accept_op(&ps->x, ".")) {
        if (!tok_name(&ps->x.cur, b, sizeof b)) return reject(ps, "an expression the engine does not evaluate");
        lex_next(&ps->x);
        if (strcasecmp(a, ps->alias[0] ? ps->alias : ps->table) != 0) return reject(ps, "a column of another table");
        memcpy(a, b, sizeof a);
    }
    if ((*col = col_of(ps->p, a)) < 0) return reject(ps, "a name that is not a column of the table");
    if (!kind_of(ps->p, *col)) return reject(ps, "a column the lanes do not hold (read from documents)");
    ps->p->used |= 1ull << *col;
    return true;
}

/* A literal: [+|-] number | 'string', evaluated by SQLite. */
static bool parse_lit(parser *ps, int *slot)
{
    const char *b = ps->x.cur.p, *e;
    sqlite3_stmt *st = NULL;
    char *q;
    bool ok = false;
    if (is_op(&ps->x.cur, "-") || is_op(&ps->x.cur, "+")) lex_next(&ps->x);
    if (ps->x.cur.t != T_NUM && ps->x.cur.t != T_STR) return reject(ps, "an operand that is not a literal");
    e = ps->x.cur.p + ps->x.cur.n;
    lex_next(&ps->x);
    if (ps->p->n_lit >= VQ_MAX) return reject(ps, "too many literals");
    if (!(q = sqlite3_mprintf("SELECT %.*s", (int)(e - b), b))) return reject(ps, "out of memory");
    if (sqlite3_prepare_v2(ps->db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_count(st) == 1) {
        sqlite3_value *v = sqlite3_value_dup(sqlite3_column_value(st, 0));
        if (v) {
            *slot = ps->p->n_lit;
            ps->p->lit[ps->p->n_lit++] = v;
            ok = true;
        }
    }
    sqlite3_finalize(st);
    sqlite3_free(q);
    return ok ? true : reject(ps, "a literal SQLite does not evaluate alone");
}

/* The literal's type must be the column's (an INTEGER or REAL for a number column, TEXT for
** a text column): otherwise SQLite's affinity rules would apply, and SQLite decides. */
static bool lit_fits(parser *ps, int col, int slot)
{
    int ty = sqlite3_value_type(ps->p->lit[slot]);
    char k = kind_of(ps->p, col);
    if (k == 's' ? ty == SQLITE_TEXT : (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT)) return true;
    return reject(ps, "a literal of another type than its column (SQLite's affinity rules)");
}

static bool add_pred(parser *ps, int col, int op, int lit0, int n_lit)
{
    vq_pred *pr;
    if (ps->p->n_pred >= VQ_MAX) return reject(ps, "too many predicates");
    for (int i = 0; i < n_lit; i++) if (!lit_fits(ps, col, lit0 + i)) return false;
    pr = &ps->p->pred[ps->p->n_pred++];
    pr->col = col;
    pr->op = op;
    pr->lit0 = lit0;
    pr->n_lit = n_lit;
    return true;
}

static bool cmp_op(const tok *t, int *op)
{
    if (is_op(t, "=") || is_op(t, "==")) *op = P_EQ;
    else if (is_op(t, "!=") || is_op(t, "<>")) *op = P_NE;
    else if (is_op(t, "<")) *op = P_LT;
    else if (is_op(t, "<=")) *op = P_LE;
    else if (is_op(t, ">")) *op = P_GT;
    else if (is_op(t, ">=")) *op = P_GE;
    else return false;
    return true;
}

static bool parse_conj(parser *ps);

/* column LIKE 'pattern' is the engine's when SQLite would match exactly as like_match does: a
** text column, an ASCII pattern (no NUL) within SQLite's pattern length limit, no ESCAPE, and
** LIKE folding ASCII case as it does by default (PRAGMA case_sensitive_like off, asked of the
** connection itself). */
static bool like_fits(parser *ps, int col, int slot)
{
    sqlite3_value *v = ps->p->lit[slot];
    sqlite3_stmt *st = NULL;
    const unsigned char *t;
    int n, folds = 0;
    if (kind_of(ps->p, col) != 's' || sqlite3_value_type(v) != SQLITE_TEXT) return reject(ps, "LIKE of a column or literal that is not text");
    t = sqlite3_value_text(v);
    n = sqlite3_value_bytes(v);
    for (int i = 0; i < n; i++) if (!t[i] || t[i] >= 0x80) return reject(ps, "a LIKE pattern that is not ASCII");
    if (n > sqlite3_limit(ps->db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, -1)) return reject(ps, "a LIKE pattern over SQLite's length limit");
    if (is_kw(&ps->x.cur, "ESCAPE")) return reject(ps, "LIKE ... ESCAPE");
    if (sqlite3_prepare_v2(ps->db, "SELECT 'a' LIKE 'A'", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        folds = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return folds == 1 ? true : reject(ps, "LIKE that does not fold case (case_sensitive_like)");
}

static bool parse_pred(parser *ps)
{
    int col, op, a, b;
    if (accept_op(&ps->x, "(")) {
        /* a bound on the recursion: the parser's stack stays small whatever the input */
        if (++ps->depth > 64) return reject(ps, "parentheses nested deeper than 64");
        if (!parse_conj(ps)) return false;
        ps->depth--;
        return accept_op(&ps->x, ")") ? true : reject(ps, "an expression the engine does not evaluate");
    }
    if (ps->x.cur.t == T_NUM || ps->x.cur.t == T_STR || is_op(&ps->x.cur, "-") || is_op(&ps->x.cur, "+")) {
        static const int flip[] = { P_EQ, P_NE, P_GT, P_GE, P_LT, P_LE };
        if (!parse_lit(ps, &a)) return false;           /* literal op column */
        if (!cmp_op(&ps->x.cur, &op)) return reject(ps, "an expression the engine does not evaluate");
        lex_next(&ps->x);
        if (!parse_colref(ps, &col)) return false;
        return add_pred(ps, col, flip[op], a, 1);
    }
    if (!parse_colref(ps, &col)) return false;
    if (cmp_op(&ps->x.cur, &op)) {
        lex_next(&ps->x);
        return parse_lit(ps, &a) && add_pred(ps, col, op, a, 1);
    }
    if (accept_kw(&ps->x, "ISNULL")) return add_pred(ps, col, P_NULL, 0, 0);
    if (accept_kw(&ps->x, "NOTNULL")) return add_pred(ps, col, P_NOTNULL, 0, 0);
    if (accept_kw(&ps->x, "IS")) {
        bool neg = accept_kw(&ps->x, "NOT");
        if (!accept_kw(&ps->x, "NULL")) return reject(ps, "IS with another operand than NULL");
        return add_pred(ps, col, neg ? P_NOTNULL : P_NULL, 0, 0);
    }
    if (accept_kw(&ps->x, "NOT")) {
        if (accept_kw(&ps->x, "NULL")) return add_pred(ps, col, P_NOTNULL, 0, 0);
        if (accept_kw(&ps->x, "BETWEEN")) {     /* x < a OR x > b: not one conjunction */
            return reject(ps, "NOT BETWEEN");
        }
        if (!accept_kw(&ps->x, "IN")) return reject(ps, "an expression the engine does not evaluate");
        op = P_NOTIN;
    } else if (accept_kw(&ps->x, "BETWEEN")) {
        if (!parse_lit(ps, &a) || !accept_kw(&ps->x, "AND") || !parse_lit(ps, &b))
            return reject(ps, "BETWEEN with operands that are not literals");
        return add_pred(ps, col, P_GE, a, 1) && add_pred(ps, col, P_LE, b, 1);
    } else if (accept_kw(&ps->x, "IN")) {
        op = P_IN;
    } else if (accept_kw(&ps->x, "LIKE")) {
        return parse_lit(ps, &a) && like_fits(ps, col, a) && add_pred(ps, col, P_LIKE, a, 1);
    } else {
        return reject(ps, "an expression the engine does not evaluate");
    }
    if (!accept_op(&ps->x, "(")) return reject(ps, "IN of a table or subquery");
    a = ps->p->n_lit;
    do {
        int slot;
        if (!parse_lit(ps, &slot)) return reject(ps, "IN of something other than literals");
    } while (accept_op(&ps->x, ","));
    if (!accept_op(&ps->x, ")")) return reject(ps, "IN of something other than literals");
    return add_pred(ps, col, op, a, ps->p->n_lit - a);
}

static bool parse_conj(parser *ps)
{
    do {
        if (!parse_pred(ps)) return false;
    } while (accept_kw(&ps->x, "AND"));
    if (is_kw(&ps->x.cur, "OR")) return reject(ps, "OR");
    return true;
}

/* An item: column | count(*) | agg(column). */
static bool parse_expr(parser *ps, vq_item *it)
{
    static const char *const aggs[] = { "COUNT", "SUM", "MIN", "MAX", "AVG", NULL };
    static const int codes[] = { A_COUNT, A_SUM, A_MIN, A_MAX, A_AVG };
    it->agg = A_NONE;
    it->col = -1;
    for (int i = 0; aggs[i]; i++) {
        if (!is_kw(&ps->x.cur, aggs[i])) continue;
        {
            lexer save = ps->x;
            lex_next(&ps->x);
            if (!accept_op(&ps->x, "(")) { ps->x = save; break; }
        }
        if (is_kw(&ps->x.cur, "DISTINCT") || is_kw(&ps->x.cur, "ALL")) return reject(ps, "an aggregate over DISTINCT values");
        if (codes[i] == A_COUNT && accept_op(&ps->x, "*")) it->agg = A_COUNT_STAR;
        else {
            if (!parse_colref(ps, &it->col)) return false;
            it->agg = codes[i];
            if ((it->agg == A_SUM || it->agg == A_AVG) && kind_of(ps->p, it->col) != 'i')
                return reject(ps, codes[i] == A_SUM ? "sum of a non-integer column (SQLite's rounding order)"
                                                    : "avg of a non-integer column (SQLite's rounding order)");
        }
        if (!accept_op(&ps->x, ")")) return reject(ps, "an aggregate with more than one argument");
        if (is_kw(&ps->x.cur, "FILTER") || is_kw(&ps->x.cur, "OVER")) return reject(ps, "a filtered or window aggregate");
        ps->p->aggregate = true;
        return true;
    }
    if (ps->x.cur.t == T_ID && !is_reserved(&ps->x.cur)) {
        lexer save = ps->x;
        lex_next(&ps->x);
        if (is_op(&ps->x.cur, "(")) return reject(ps, "a function the engine does not evaluate");
        ps->x = save;
    }
    return parse_colref(ps, &it->col);
}

static int find_item(const vq_plan *p, const vq_item *it)
{
    for (int i = 0; i < p->n_items; i++)
        if (p->item[i].agg == it->agg && p->item[i].col == it->col) return i;
    return -1;
}

static bool add_item(parser *ps, const vq_item *it, int *at)
{
    if (ps->p->n_items >= VQ_MAX) return reject(ps, "too many result columns");
    *at = ps->p->n_items;
    ps->p->item[ps->p->n_items++] = *it;
    return true;
}

/* Parse one statement into p. false: not the engine's (p->why says why). */
static bool parse_select(parser *ps, char alias_of_item[][128])
{
    vq_plan *p = ps->p;
    char name[128];
    lexer after_from;
    if (!accept_kw(&ps->x, "SELECT")) return reject(ps, "not a SELECT");
    (void)accept_kw(&ps->x, "ALL");
    if (is_kw(&ps->x.cur, "DISTINCT")) return reject(ps, "SELECT DISTINCT");
    /* the FROM clause is needed to resolve the items: find it first */
    {
        lexer save = ps->x;
        int depth = 0;
        while (ps->x.cur.t != T_END && !(depth == 0 && is_kw(&ps->x.cur, "FROM"))) {
            if (is_op(&ps->x.cur, "(")) depth++;
            if (is_op(&ps->x.cur, ")")) depth--;
            if (is_kw(&ps->x.cur, "SELECT")) return reject(ps, "a subquery");
            lex_next(&ps->x);
        }
        if (!accept_kw(&ps->x, "FROM")) return reject(ps, "no FROM clause");
        if (!tok_name(&ps->x.cur, name, sizeof name) || is_reserved(&ps->x.cur)) return reject(ps, "FROM something other than a table");
        lex_next(&ps->x);
        if (accept_op(&ps->x, ".")) {       /* temp.steps is the relation; main.steps is not */
            if (strcasecmp(name, "temp") != 0) return reject(ps, "a table of another schema than temp");
            if (!tok_name(&ps->x.cur, name, sizeof name)) return reject(ps, "FROM something other than a table");
            lex_next(&ps->x);
        }
        if (strcasecmp(name, "steps") == 0) p->t = PCH_STORYLINE_STEPS;
        else if (strcasecmp(name, "tool_calls") == 0) p->t = PCH_STORYLINE_TOOL_CALLS;
        else return reject(ps, "a relation other than steps and tool_calls");
        ps->table = p->t == PCH_STORYLINE_STEPS ? "steps" : "tool_calls";
        (void)accept_kw(&ps->x, "AS");
        if (ps->x.cur.t == T_ID && !is_reserved(&ps->x.cur)) {
            if (!tok_name(&ps->x.cur, ps->alias, sizeof ps->alias)) return reject(ps, "an alias the engine does not read");
            lex_next(&ps->x);
        }
        if (is_op(&ps->x.cur, ",") || is_kw(&ps->x.cur, "JOIN") || is_kw(&ps->x.cur, "NATURAL") || is_kw(&ps->x.cur, "LEFT") ||
            is_kw(&ps->x.cur, "INNER") || is_kw(&ps->x.cur, "CROSS") || is_kw(&ps->x.cur, "INDEXED") || is_kw(&ps->x.cur, "NOT"))
            return reject(ps, "a join");
        after_from = ps->x;
        ps->x = save;
    }
    if (pch_storyline_table_schema(NULL, p->t, (pch_lance_schema **)(uintptr_t)&p->schema, NULL) < 0)
        return reject(ps, "out of memory");
    do {                            /* the items */
        vq_item it;
        int at;
        if (is_op(&ps->x.cur, "*")) return reject(ps, "SELECT * (every column, most read from documents)");
        if (!parse_expr(ps, &it) || !add_item(ps, &it, &at)) return false;
        alias_of_item[at][0] = 0;
        if (accept_kw(&ps->x, "AS") || (ps->x.cur.t == T_ID && !is_reserved(&ps->x.cur))) {
            if (!tok_name(&ps->x.cur, alias_of_item[at], 128)) return reject(ps, "an alias the engine does not read");
            lex_next(&ps->x);
        } else if (ps->x.cur.t == T_STR) {
            return reject(ps, "a string as an alias");
        }
    } while (accept_op(&ps->x, ","));
    p->n_visible = p->n_items;
    if (!is_kw(&ps->x.cur, "FROM")) return reject(ps, "an expression the engine does not evaluate");
    ps->x = after_from;             /* past the FROM clause read above */
    if (accept_kw(&ps->x, "WHERE") && !parse_conj(ps)) return false;
    if (accept_kw(&ps->x, "GROUP")) {
        if (!accept_kw(&ps->x, "BY")) return reject(ps, "GROUP without BY");
        p->aggregate = true;
        do {
            int col = -1;
            if (ps->x.cur.t == T_NUM) {         /* an ordinal: a result column */
                long k = tok_ordinal(&ps->x.cur);
                if (k < 1 || k > p->n_visible || p->item[k - 1].agg != A_NONE)
                    return reject(ps, "a GROUP BY term the engine does not read");
                col = p->item[k - 1].col;
                lex_next(&ps->x);
            } else {
                char nm[128];
                lexer save = ps->x;
                if (!parse_colref(ps, &col)) {  /* not a column: an alias of a result column */
                    ps->x = save;
                    p->why[0] = 0;
                    if (!tok_name(&ps->x.cur, nm, sizeof nm)) return reject(ps, "a GROUP BY term the engine does not read");
                    for (int i = 0; i < p->n_visible && col < 0; i++)
                        if (alias_of_item[i][0] && strcasecmp(alias_of_item[i], nm) == 0 && p->item[i].agg == A_NONE) col = p->item[i].col;
                    if (col < 0) return reject(ps, "a GROUP BY term the engine does not read");
                    lex_next(&ps->x);
                }
            }
            if (is_kw(&ps->x.cur, "COLLATE")) return reject(ps, "a collation");
            if (kind_of(p, col) == 'f') return reject(ps, "GROUP BY a REAL column");
            if (p->n_group >= VQ_MAX) return reject(ps, "too many GROUP BY terms");
            p->group[p->n_group++] = col;
        } while (accept_op(&ps->x, ","));
    }
    if (is_kw(&ps->x.cur, "HAVING")) return reject(ps, "HAVING");
    if (p->aggregate)               /* a bare column must be a group key (SQLite's bare-column rule otherwise) */
        for (int i = 0; i < p->n_visible; i++) {
            bool key = false;
            if (p->item[i].agg != A_NONE) continue;
            for (int g = 0; g < p->n_group; g++) key |= p->group[g] == p->item[i].col;
            if (!key) return reject(ps, "a result column that is neither aggregated nor grouped");
        }
    if (accept_kw(&ps->x, "ORDER")) {
        if (!accept_kw(&ps->x, "BY")) return reject(ps, "ORDER without BY");
        do {
            int at = -1;
            vq_key *k;
            char nm[128];
            if (ps->x.cur.t == T_ID && tok_name(&ps->x.cur, nm, sizeof nm)) {   /* an alias first (SQLite's order) */
                lexer save = ps->x;
                lex_next(&ps->x);
                if (!is_op(&ps->x.cur, ".") && !is_op(&ps->x.cur, "("))
                    for (int i = 0; i < p->n_visible && at < 0; i++)
                        if (alias_of_item[i][0] && strcasecmp(alias_of_item[i], nm) == 0) at = i;
                if (at < 0) ps->x = save;
            }
            if (at < 0 && ps->x.cur.t == T_NUM) {
                long n = tok_ordinal(&ps->x.cur);
                if (n < 1 || n > p->n_visible) return reject(ps, "an ORDER BY term the engine does not read");
                at = (int)n - 1;
                lex_next(&ps->x);
            }
            if (at < 0) {                       /* an expression: a result column's, or a new hidden one */
                vq_item it;
                if (!parse_expr(ps, &it)) return false;
                if ((at = find_item(p, &it)) < 0) {
                    if (it.agg == A_NONE && p->aggregate) {
                        bool key = false;
                        for (int g = 0; g < p->n_group; g++) key |= p->group[g] == it.col;
                        if (!key) return reject(ps, "ORDER BY a column that is neither aggregated nor grouped");
                    }
                    if (it.agg != A_NONE && !p->aggregate) return reject(ps, "an aggregate in ORDER BY only");
                    if (!add_item(ps, &it, &at)) return false;
                }
            }
            if (is_kw(&ps->x.cur, "COLLATE")) return reject(ps, "a collation");
            if (p->n_order >= VQ_MAX) return reject(ps, "too many ORDER BY terms");
            k = &p->order[p->n_order++];
            k->item = at;
            k->desc = false;
            if (accept_kw(&ps->x, "DESC")) k->desc = true;
            else (void)accept_kw(&ps->x, "ASC");
            if (is_kw(&ps->x.cur, "NULLS")) return reject(ps, "NULLS FIRST/LAST");
        } while (accept_op(&ps->x, ","));
    }
    p->limit = -1;
    if (accept_kw(&ps->x, "LIMIT")) {
        int a, b;
        if (!parse_lit(ps, &a) || sqlite3_value_type(p->lit[a]) != SQLITE_INTEGER || sqlite3_value_int64(p->lit[a]) < 0)
            return reject(ps, "a LIMIT that is not a non-negative integer");
        p->limit = sqlite3_value_int64(p->lit[a]);
        if (accept_kw(&ps->x, "OFFSET")) {
            if (!parse_lit(ps, &b) || sqlite3_value_type(p->lit[b]) != SQLITE_INTEGER || sqlite3_value_int64(p->lit[b]) < 0)
                return reject(ps, "an OFFSET that is not a non-negative integer");
            p->offset = sqlite3_value_int64(p->lit[b]);
        } else if (is_op(&ps->x.cur, ",")) {
            return reject(ps, "LIMIT a, b");
        }
    }
    (void)accept_op(&ps->x, ";");
    if (ps->x.cur.t != T_END || ps->x.bad) return reject(ps, "a statement the engine does not parse");
    /* the step's message with a trajectory key: SQLite's path rebuilds the documents holding
    ** the key (the trajectory directory) instead of writing every cluster's messages */
    {
        int mc = col_of(p, "message"), kc = col_of(p, "trajectory_key");
        bool key = false;
        for (int i = 0; i < p->n_pred; i++) key |= p->pred[i].col == kc && p->pred[i].op == P_EQ && p->pred[i].n_lit == 1;
        if (mc >= 0 && ((p->used >> mc) & 1) && key) return reject(ps, "a message read by trajectory key (the documents holding it)");
    }
    return true;
}

static void plan_dispose(vq_plan *p)
{
    for (int i = 0; i < p->n_lit; i++) sqlite3_value_free(p->lit[i]);
    pch_lance_schema_free((pch_lance_schema *)(uintptr_t)p->schema);
    memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------------ values */

/* One value as SQLite orders it: NULL < numbers (integer and real compared exactly) < text. */
typedef struct vq_val { int type; int64_t i; double f; const char *s; size_t n; } vq_val;

/* -1, 0, 1: an int64 against a double, exactly (a NaN never reaches here). */
static int cmp_int_real(int64_t a, double b)
{
    if (b < -9223372036854775808.0) return 1;
    if (b >= 9223372036854775808.0) return -1;
    {
        double fa = (double)a;
        if (fa < b) return -1;
        if (fa > b) return 1;
        {                           /* equal as doubles: compare the integer parts exactly */
            int64_t bi = (int64_t)b;
            if (a < bi) return -1;
            if (a > bi) return 1;
            {
                double frac = b - (double)bi;
                return frac > 0 ? -1 : frac < 0 ? 1 : 0;
            }
        }
    }
}

static int val_cmp(const vq_val *a, const vq_val *b)
{
    int ra = a->type == SQLITE_NULL ? 0 : a->type == SQLITE_TEXT ? 2 : 1;
    int rb = b->type == SQLITE_NULL ? 0 : b->type == SQLITE_TEXT ? 2 : 1;
    if (ra != rb) return ra < rb ? -1 : 1;
    if (ra == 0) return 0;
    if (ra == 2) {
        size_t n = a->n < b->n ? a->n : b->n;
        int c = n ? memcmp(a->s, b->s, n) : 0;
        return c ? (c < 0 ? -1 : 1) : a->n < b->n ? -1 : a->n > b->n;
    }
    if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER) return a->i < b->i ? -1 : a->i > b->i;
    if (a->type == SQLITE_INTEGER) return cmp_int_real(a->i, b->f);
    if (b->type == SQLITE_INTEGER) return -cmp_int_real(b->i, a->f);
    return a->f < b->f ? -1 : a->f > b->f;
}

static bool val_same(const vq_val *a, const vq_val *b)    /* the same printed value */
{
    if (a->type != b->type) return false;
    switch (a->type) {
    case SQLITE_NULL: return true;
    case SQLITE_INTEGER: return a->i == b->i;
    case SQLITE_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    default: return a->n == b->n && (a->n == 0 || memcmp(a->s, b->s, a->n) == 0);
    }
}

static vq_val lit_val(sqlite3_value *v)
{
    vq_val x;
    memset(&x, 0, sizeof x);
    x.type = sqlite3_value_type(v);
    if (x.type == SQLITE_INTEGER) x.i = sqlite3_value_int64(v);
    else if (x.type == SQLITE_FLOAT) x.f = sqlite3_value_double(v);
    else if (x.type == SQLITE_TEXT) { x.s = (const char *)sqlite3_value_text(v); x.n = (size_t)sqlite3_value_bytes(v); }
    if (x.type == SQLITE_FLOAT && isnan(x.f)) x.type = SQLITE_NULL;
    return x;
}

/* Row r of vector v as a value. */
static vq_val vec_val(const pch_sql_vec *v, uint64_t r)
{
    vq_val x;
    memset(&x, 0, sizeof x);
    x.type = SQLITE_NULL;
    if (!v->valid[r]) return x;
    switch (v->kind) {
    case 'i': x.type = SQLITE_INTEGER; x.i = v->i[r]; break;
    case 'f': if (!isnan(v->f[r])) { x.type = SQLITE_FLOAT; x.f = v->f[r]; } break;
    default:
        x.type = SQLITE_TEXT;
        pch_sql__vec_str(v, r, &x.s, &x.n);
        if (!x.s) x.type = SQLITE_NULL;
        break;
    }
    return x;
}

/* ------------------------------------------------------------------ hash tables
** Group keys are interned (pch_sql_interner, common.c): dense ids from 1, 0 is NULL. */

static vq_val intern_val(const pch_sql_interner *t, uint32_t id)
{
    vq_val x;
    size_t n;
    const uint8_t *b;
    memset(&x, 0, sizeof x);
    x.type = SQLITE_NULL;
    if (!id) return x;
    b = pch_sql__intern_bytes(t, id, &n);
    if (t->kind == 'i') { x.type = SQLITE_INTEGER; memcpy(&x.i, b, 8); }
    else { x.type = SQLITE_TEXT; x.s = (const char *)b; x.n = n; }
    return x;
}

/* ------------------------------------------------------------------ execution */

typedef struct agg_state {         /* one aggregate of every group */
    pch_buf cnt;                    /* u64 per group: non-null values (or rows) */
    pch_buf sum;                    /* i64 per group */
    pch_buf abs;                    /* u64 per group: sum of |v| (avg exactness) */
    pch_buf best;                   /* vq_val per group (min/max) */
    pch_buf flag;                   /* u8 per group: min/max of REAL saw both zero signs */
} agg_state;

typedef struct vq_exec {
    pch_ctx *ctx;
    vq_plan *p;
    sqlite3 *db;
    pch_sql_format fmt;
    pch_sql_lanes *scan;
    pch_sql_vec cols[64];
    uint64_t n, at;                 /* the current cluster's rows, the next one to look at */
    uint8_t *pass;                  /* per row of the cluster: live, and every predicate holds */
    size_t pass_cap;
    bool masked;                    /* the cluster has rows that are not live (shadowed, §12.2) */
    uint32_t *kid[VQ_MAX];          /* per key column and row: its value id */
    uint32_t *gid;                  /* per row: its group */
    size_t kid_cap;
    pch_sql_interner keys[VQ_MAX];
    pch_sql_interner tuples;                /* several key columns: the id tuples → group */
    uint64_t n_groups;
    agg_state agg[VQ_MAX];
    pch_arena text;                 /* text of buffered rows and min/max values */
    /* buffered results: n_out rows of n_items values */
    vq_val *out;
    uint64_t n_out, cap_out, *perm, emitted, streamed;
    char num[VQ_MAX][40];
    sqlite3_stmt *real_text;        /* SELECT ?1: SQLite's text of a REAL */
    bool fallback;                  /* hand the statement back to SQLite (why in p->why) */
    pch_buf grows;                  /* u64 per group: its rows */
    pch_buf hist;                   /* accumulate: the batch's rows per group, 4 interleaved */
} vq_exec;

static int oom(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory"); }

/* Give the statement back to SQLite (nothing has been printed yet); p->why says why. */
static void hand_back(vq_exec *e, const char *why)
{
    snprintf(e->p->why, sizeof e->p->why, "handed back at run time: %s", why);
    e->fallback = true;
}

/* Every group state buffer sized for groups [0, g]. */
static int ensure_groups(vq_exec *e, uint64_t g)
{
    if (g < e->n_groups) return PCH_OK;
    {
        size_t add = (size_t)(g + 1 - e->n_groups);
        if (pch_buf_reserve(&e->grows, add * 8) < 0) return PCH_ENOMEM;
        memset(e->grows.data + e->grows.len, 0, add * 8);
        e->grows.len += add * 8;
    }
    for (int i = 0; i < e->p->n_items; i++) {
        agg_state *a = &e->agg[i];
        size_t add = (size_t)(g + 1 - e->n_groups);
        if (pch_buf_reserve(&a->cnt, add * 8) < 0 || pch_buf_reserve(&a->sum, add * 8) < 0 ||
            pch_buf_reserve(&a->abs, add * 8) < 0 || pch_buf_reserve(&a->best, add * sizeof(vq_val)) < 0 ||
            pch_buf_reserve(&a->flag, add) < 0)
            return PCH_ENOMEM;
        memset(a->cnt.data + a->cnt.len, 0, add * 8); a->cnt.len += add * 8;
        memset(a->sum.data + a->sum.len, 0, add * 8); a->sum.len += add * 8;
        memset(a->abs.data + a->abs.len, 0, add * 8); a->abs.len += add * 8;
        for (size_t k = 0; k < add; k++) {
            vq_val z;
            memset(&z, 0, sizeof z);
            z.type = SQLITE_NULL;
            memcpy(a->best.data + a->best.len + k * sizeof z, &z, sizeof z);
        }
        a->best.len += add * sizeof(vq_val);
        memset(a->flag.data + a->flag.len, 0, add); a->flag.len += add;
    }
    e->n_groups = g + 1;
    return PCH_OK;
}

/* One character of UTF-8 text s[..e) (the lanes hold valid UTF-8), 0 at the end. */
static uint32_t u8_next(const uint8_t **s, const uint8_t *e)
{
    uint32_t c;
    if (*s >= e) return 0;
    c = *(*s)++;
    if (c >= 0xc0) {
        c = c >= 0xf0 ? c & 0x07 : c >= 0xe0 ? c & 0x0f : c & 0x1f;
        while (*s < e && (**s & 0xc0) == 0x80) c = (c << 6) | (*(*s)++ & 0x3f);
    }
    return c;
}
static uint32_t ascii_lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* SQLite's LIKE (func.c, patternCompare: '%' any run, '_' one character, ASCII case folded,
** no escape) of ASCII pattern p[..pe) against s[..se): 0 match, 1 no match, 2 no match for
** any later start either (SQLite's NOWILDCARDMATCH, which ends the search early). */
static int like_match(const uint8_t *p, const uint8_t *pe, const uint8_t *s, const uint8_t *se)
{
    uint32_t c, c2;
    while ((c = u8_next(&p, pe)) != 0) {
        if (c == '%') {
            while ((c = u8_next(&p, pe)) == '%' || c == '_')
                if (c == '_' && u8_next(&s, se) == 0) return 2;
            if (c == 0) return 0;
            for (uint32_t lo = ascii_lower(c), up = lo >= 'a' && lo <= 'z' ? lo - 32 : lo;;) {
                while (s < se && *s != lo && *s != up) s++;
                if (s >= se) return 2;
                s++;
                int m = like_match(p, pe, s, se);
                if (m != 1) return m;
            }
        }
        c2 = u8_next(&s, se);
        if (c == c2 || (c2 < 0x80 && ascii_lower(c) == ascii_lower(c2)) || (c == '_' && c2 != 0)) continue;
        return 1;
    }
    return s >= se ? 0 : 1;
}

int pch_sql__vx_like(const uint8_t *pattern, size_t pn, const uint8_t *s, size_t sn)
{
    const uint8_t *nul = memchr(s, 0, sn);
    return like_match(pattern, pattern + pn, s, nul ? nul : s + sn) == 0;
}

static bool pred_holds(const vq_plan *p, const vq_pred *pr, const vq_val *v)
{
    if (pr->op == P_NULL) return v->type == SQLITE_NULL;
    if (pr->op == P_NOTNULL) return v->type != SQLITE_NULL;
    if (v->type == SQLITE_NULL) return false;
    if (pr->op == P_LIKE) {
        sqlite3_value *l = p->lit[pr->lit0];
        return v->type == SQLITE_TEXT &&
               pch_sql__vx_like(sqlite3_value_text(l), (size_t)sqlite3_value_bytes(l), (const uint8_t *)v->s, v->n);
    }
    if (pr->op == P_IN || pr->op == P_NOTIN) {
        bool hit = false;
        for (int k = 0; k < pr->n_lit && !hit; k++) {
            vq_val l = lit_val(p->lit[pr->lit0 + k]);
            hit = val_cmp(v, &l) == 0;
        }
        return pr->op == P_IN ? hit : !hit;
    }
    {
        vq_val l = lit_val(p->lit[pr->lit0]);
        int c = val_cmp(v, &l);
        switch (pr->op) {
        case P_EQ: return c == 0;
        case P_NE: return c != 0;
        case P_LT: return c < 0;
        case P_LE: return c <= 0;
        case P_GT: return c > 0;
        default: return c >= 0;
        }
    }
}

/* pass[0..n): every predicate holds on the row. A 'c' column is tested once per dictionary
** entry; an integer column against an integer literal in a tight loop. */
static int eval_preds(vq_exec *e, pch_error *err)
{
    const vq_plan *p = e->p;
    uint64_t n = e->n;
    if (n > e->pass_cap) {
        pch_free(e->ctx, e->pass);
        if (!(e->pass = pch_malloc(e->ctx, (size_t)n))) { e->pass_cap = 0; return oom(err); }
        e->pass_cap = (size_t)n;
    }
    {
        /* rows the scan marks not live (shadowed pages kept in place so that the columns
        ** stay unindexed) never pass */
        const uint8_t *live = pch_sql__vx_vec_live(e->scan);
        e->masked = live != NULL;
        if (live) memcpy(e->pass, live, (size_t)n);
        else memset(e->pass, 1, (size_t)n);
    }
    for (int k = 0; k < p->n_pred; k++) {
        const vq_pred *pr = &p->pred[k];
        const pch_sql_vec *v = &e->cols[pr->col];
        uint8_t *pass = e->pass;
        if (v->kind == 'c') {
            uint8_t res[256], *r = v->n_dict <= sizeof res ? res : pch_malloc(e->ctx, v->n_dict);
            if (!r) return oom(err);
            for (uint32_t d = 0; d < v->n_dict; d++) {
                vq_val x;
                memset(&x, 0, sizeof x);
                x.type = v->dict[d] ? SQLITE_TEXT : SQLITE_NULL;
                x.s = v->dict[d];
                x.n = v->dict_n[d];
                r[d] = pred_holds(p, pr, &x);
            }
            {
                vq_val nul;
                memset(&nul, 0, sizeof nul);
                nul.type = SQLITE_NULL;
                uint8_t rn = pred_holds(p, pr, &nul);
                for (uint64_t j = 0; j < n; j++) pass[j] &= v->valid[j] ? r[v->code[j]] : rn;
            }
            if (r != res) pch_free(e->ctx, r);
            continue;
        }
        if (v->kind == 'i' && pr->n_lit == 1 && sqlite3_value_type(p->lit[pr->lit0]) == SQLITE_INTEGER &&
            pr->op <= P_GE) {
            int64_t l = sqlite3_value_int64(p->lit[pr->lit0]);
            const int64_t *x = v->i;
            const uint8_t *ok = v->valid;
            switch (pr->op) {
            case P_EQ: for (uint64_t j = 0; j < n; j++) pass[j] &= ok[j] & (x[j] == l); break;
            case P_NE: for (uint64_t j = 0; j < n; j++) pass[j] &= ok[j] & (x[j] != l); break;
            case P_LT: for (uint64_t j = 0; j < n; j++) pass[j] &= ok[j] & (x[j] < l); break;
            case P_LE: for (uint64_t j = 0; j < n; j++) pass[j] &= ok[j] & (x[j] <= l); break;
            case P_GT: for (uint64_t j = 0; j < n; j++) pass[j] &= ok[j] & (x[j] > l); break;
            default: for (uint64_t j = 0; j < n; j++) pass[j] &= ok[j] & (x[j] >= l); break;
            }
            continue;
        }
        for (uint64_t j = 0; j < n; j++)
            if (pass[j]) {
                vq_val x = vec_val(v, j);
                pass[j] = pred_holds(p, pr, &x);
            }
    }
    return PCH_OK;
}

/* The next cluster's vectors with its pass flags; *eof at the end. */
static int fetch(vq_exec *e, bool *eof, pch_error *err)
{
    e->at = 0;
    PCH_TRY(pch_sql__vx_vec_next(e->scan, e->cols, &e->n, eof, err));
    if (*eof) { e->n = 0; return PCH_OK; }
    return eval_preds(e, err);
}

/* Value ids of key column g for the rows sel[0..m). */
static int key_ids(vq_exec *e, int g, const uint32_t *sel, uint64_t m, uint32_t *kid, pch_error *err)
{
    const pch_sql_vec *v = &e->cols[e->p->group[g]];
    pch_sql_interner *t = &e->keys[g];
    int rc = PCH_OK;
    t->kind = v->kind == 'i' ? 'i' : 's';
    if (v->kind == 'c') {
        uint32_t small[256], *map = v->n_dict <= 256 ? small : pch_malloc(e->ctx, v->n_dict * sizeof *map);
        if (!map) return oom(err);
        for (uint32_t d = 0; d < v->n_dict && rc == PCH_OK; d++) {
            map[d] = 0;
            if (v->dict[d]) rc = pch_sql__intern(t, v->dict[d], v->dict_n[d], &map[d]);
        }
        for (uint64_t j = 0; j < m && rc == PCH_OK; j++) kid[j] = v->valid[sel[j]] ? map[v->code[sel[j]]] : 0;
        if (map != small) pch_free(e->ctx, map);
    } else {
        const char *lp = NULL;
        size_t ln = 0;
        int64_t li = 0;
        uint32_t lid = 0;
        bool have = false;
        for (uint64_t j = 0; j < m && rc == PCH_OK; j++) {
            uint64_t r = sel[j];
            if (!v->valid[r]) { kid[j] = 0; continue; }
            if (v->kind == 'i') {   /* the last value seen: runs of one value cost no lookup */
                if (!have || v->i[r] != li) { li = v->i[r]; rc = pch_sql__intern(t, &li, 8, &lid); have = true; }
            } else {
                const char *sp;
                size_t sn;
                pch_sql__vec_str(v, r, &sp, &sn);
                if (!have || sn != ln || (sp != lp && memcmp(sp, lp, sn) != 0)) { rc = pch_sql__intern(t, sp, sn, &lid); lp = sp; ln = sn; have = true; }
            }
            kid[j] = lid;
        }
    }
    return rc == PCH_OK ? PCH_OK : rc == PCH_ELIMIT ? pch_error_set(err, rc, "vortex sql: too many groups") : oom(err);
}

/* The counts of ids[0..n) (each < ng), each row weighted by pass[] (0 or 1; NULL: by 1), as ng
** u64 counts in e->hist (*out). Four interleaved histograms: rows of one id follow each other,
** and one counter per id would make each increment wait for the last. few_zeros: pass is
** mostly 1 with its zeros in runs, so every row is counted and the zeros' rows taken out
** (cheaper than weighting each row). */
static int hist4(vq_exec *e, const uint32_t *ids, const uint8_t *pass, bool few_zeros, uint64_t n, uint64_t ng,
                 const uint64_t **out, pch_error *err)
{
    uint32_t *h;
    uint64_t *k, j = 0;
    pch_buf_clear(&e->hist);
    if (pch_buf_reserve(&e->hist, (size_t)ng * 24) < 0) return oom(err);
    h = (uint32_t *)(void *)e->hist.data;
    k = (uint64_t *)(void *)(e->hist.data + (size_t)ng * 16);
    memset(h, 0, (size_t)ng * 16);
    if (!pass || few_zeros)
        for (; j + 4 <= n; j += 4) { h[ids[j]]++; h[ng + ids[j + 1]]++; h[2 * ng + ids[j + 2]]++; h[3 * ng + ids[j + 3]]++; }
    else
        for (; j + 4 <= n; j += 4) {
            h[ids[j]] += pass[j]; h[ng + ids[j + 1]] += pass[j + 1];
            h[2 * ng + ids[j + 2]] += pass[j + 2]; h[3 * ng + ids[j + 3]] += pass[j + 3];
        }
    for (; j < n; j++) h[ids[j]] += pass && !few_zeros ? pass[j] : 1;
    for (uint64_t g = 0; g < ng; g++) k[g] = (uint64_t)h[g] + h[ng + g] + h[2 * ng + g] + h[3 * ng + g];
    if (pass && few_zeros)     /* every row was counted: take the failing ones, found by memchr, out */
        for (j = 0; j < n;) {
            const uint8_t *z = memchr(pass + j, 0, (size_t)(n - j));
            if (!z) break;
            for (j = (uint64_t)(z - pass); j < n && !pass[j]; j++) k[ids[j]]--;
        }
    *out = k;
    return PCH_OK;
}

/* Aggregation on the codes (RFC-0006 §13.3): one key column by code ('c'), every item the key,
** count(*) or count(key). The passing rows' codes are counted into a histogram per dictionary
** entry, then each entry that has rows is interned once: no per-row key, group id or row
** selection. *done false: the statement needs the general path. */
static int accumulate_codes(vq_exec *e, bool *done, pch_error *err)
{
    const vq_plan *p = e->p;
    const pch_sql_vec *v = &e->cols[p->group[0]];
    uint64_t nd = v->n_dict, *gr;
    const uint64_t *h = NULL;
    int rc = PCH_OK;
    *done = false;
    if (p->n_group != 1 || v->kind != 'c' || nd == 0 || nd > e->n) return PCH_OK;
    for (int i = 0; i < p->n_items; i++) {
        const vq_item *it = &p->item[i];
        if (!(it->agg == A_COUNT_STAR || ((it->agg == A_NONE || it->agg == A_COUNT) && it->col == p->group[0])))
            return PCH_OK;
    }
    *done = true;
    /* with no predicate the flags are the shadowed rows' (at most half a cluster, in runs: a
    ** trajectory's steps), so the rows are counted unflagged and the shadowed ones taken out */
    PCH_TRY(hist4(e, v->code, p->n_pred || e->masked ? e->pass : NULL, !p->n_pred, e->n, nd, &h, err));
    for (uint64_t d = 0; d < nd && rc == PCH_OK; d++) {
        uint64_t k = h[d];
        uint32_t g = 0;             /* a null entry (valid[r] is dict[code[r]] != NULL) is group 0 */
        if (!k) continue;
        e->keys[0].kind = 's';
        if (v->dict[d] && (rc = pch_sql__intern(&e->keys[0], v->dict[d], v->dict_n[d], &g)) < 0) break;
        if (ensure_groups(e, g) < 0) return oom(err);
        gr = (uint64_t *)(void *)e->grows.data;
        gr[g] += k;
        for (int i = 0; i < p->n_items; i++)
            if (p->item[i].agg == A_COUNT_STAR || (p->item[i].agg == A_COUNT && v->dict[d]))
                ((uint64_t *)(void *)e->agg[i].cnt.data)[g] += k;
    }
    return rc == PCH_OK ? PCH_OK : rc == PCH_ELIMIT ? pch_error_set(err, rc, "vortex sql: too many groups") : oom(err);
}

static int accumulate(vq_exec *e, pch_error *err)
{
    const vq_plan *p = e->p;
    uint64_t m = 0, n = e->n;
    uint32_t *sel;
    bool counted = false;           /* count(*) came with the group rows */
    bool done;
    PCH_TRY(accumulate_codes(e, &done, err));
    if (done) return PCH_OK;
    if (n > e->kid_cap) {
        for (int g = 0; g < VQ_MAX; g++) { pch_free(e->ctx, e->kid[g]); e->kid[g] = NULL; }
        pch_free(e->ctx, e->gid);
        e->kid_cap = 0;
        if (!(e->gid = pch_malloc(e->ctx, (size_t)n * 4 * 2))) return oom(err);
        for (int g = 0; g < p->n_group; g++) if (!(e->kid[g] = pch_malloc(e->ctx, (size_t)n * 4))) return oom(err);
        e->kid_cap = (size_t)n;
    }
    sel = e->gid + n;
    for (uint64_t j = 0; j < n; j++) { sel[m] = (uint32_t)j; m += e->pass[j]; }
    if (!m) return PCH_OK;
    for (int g = 0; g < p->n_group; g++) PCH_TRY(key_ids(e, g, sel, m, e->kid[g], err));
    if (p->n_group == 0) memset(e->gid, 0, (size_t)m * 4);
    else if (p->n_group == 1) memcpy(e->gid, e->kid[0], (size_t)m * 4);
    else {
        uint32_t tup[VQ_MAX];
        int rc = PCH_OK;
        e->tuples.kind = 't';
        for (uint64_t j = 0; j < m && rc == PCH_OK; j++) {
            for (int g = 0; g < p->n_group; g++) tup[g] = e->kid[g][j];
            rc = pch_sql__intern(&e->tuples, tup, (size_t)p->n_group * 4, &e->gid[j]);
        }
        if (rc < 0) return rc == PCH_ELIMIT ? pch_error_set(err, rc, "vortex sql: too many groups") : oom(err);
    }
    {
        uint64_t most = 0, *gr;
        for (uint64_t j = 0; j < m; j++) if (e->gid[j] > most) most = e->gid[j];
        if (ensure_groups(e, most) < 0) return oom(err);
        gr = (uint64_t *)(void *)e->grows.data;
        if (most < m / 8) {
            /* few groups, many rows: interleaved histograms (hist4); count(*) is the same count */
            const uint64_t *h = NULL;
            PCH_TRY(hist4(e, e->gid, NULL, false, m, most + 1, &h, err));
            for (uint64_t g = 0; g <= most; g++) {
                gr[g] += h[g];
                for (int i = 0; i < p->n_items; i++)
                    if (p->item[i].agg == A_COUNT_STAR) ((uint64_t *)(void *)e->agg[i].cnt.data)[g] += h[g];
            }
            counted = true;
        } else
            for (uint64_t j = 0; j < m; j++) gr[e->gid[j]]++;
    }
    for (int i = 0; i < p->n_items; i++) {
        const vq_item *it = &p->item[i];
        agg_state *a = &e->agg[i];
        uint64_t *cnt = (uint64_t *)(void *)a->cnt.data, *abs = (uint64_t *)(void *)a->abs.data;
        int64_t *sum = (int64_t *)(void *)a->sum.data;
        vq_val *best = (vq_val *)(void *)a->best.data;
        const pch_sql_vec *v = it->col >= 0 ? &e->cols[it->col] : NULL;
        switch (it->agg) {
        case A_NONE: break;
        case A_COUNT_STAR: if (!counted) for (uint64_t j = 0; j < m; j++) cnt[e->gid[j]]++; break;
        case A_COUNT:
            if (v->kind == 'f') { for (uint64_t j = 0; j < m; j++) cnt[e->gid[j]] += v->valid[sel[j]] && !isnan(v->f[sel[j]]); }
            else if (v->kind == 'c') { for (uint64_t j = 0; j < m; j++) cnt[e->gid[j]] += v->valid[sel[j]] && v->dict[v->code[sel[j]]]; }
            else for (uint64_t j = 0; j < m; j++) cnt[e->gid[j]] += v->valid[sel[j]];
            break;
        case A_SUM: case A_AVG:
            for (uint64_t j = 0; j < m; j++) {
                uint64_t r = sel[j], g = e->gid[j];
                int64_t x = v->i[r];
                uint64_t ax = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
                if (!v->valid[r]) continue;
                cnt[g]++;
                if (abs[g] < (1ull << 62)) abs[g] += ax < (1ull << 62) ? ax : (1ull << 62);
                if (__builtin_add_overflow(sum[g], x, &sum[g])) {
                    if (it->agg == A_SUM) { hand_back(e, "sum over 2^63 (SQLite's integer overflow)"); return PCH_OK; }
                }
            }
            break;
        case A_MIN: case A_MAX:
            for (uint64_t j = 0; j < m; j++) {
                uint64_t g = e->gid[j];
                vq_val x = vec_val(v, sel[j]);
                int c;
                if (x.type == SQLITE_NULL) continue;
                if (best[g].type == SQLITE_NULL) c = it->agg == A_MIN ? -1 : 1;
                else c = val_cmp(&x, &best[g]);
                if (c == 0 && x.type == SQLITE_FLOAT && memcmp(&x.f, &best[g].f, sizeof x.f) != 0) a->flag.data[g] = 1;
                if ((it->agg == A_MIN && c < 0) || (it->agg == A_MAX && c > 0)) {
                    if (x.type == SQLITE_TEXT && !(x.s = pch_arena_memdup(&e->text, x.s, x.n))) return oom(err);
                    best[g] = x;
                }
            }
            break;
        default: break;
        }
    }
    return PCH_OK;
}

static int add_out_row(vq_exec *e, pch_error *err)
{
    if (e->n_out == e->cap_out) {
        uint64_t cap = e->cap_out ? e->cap_out * 2 : 256;
        vq_val *o;
        if (cap > (1ull << 22)) { hand_back(e, "more than 4M rows to sort"); return PCH_OK; }
        if (!(o = pch_realloc(e->ctx, e->out, (size_t)cap * (size_t)e->p->n_items * sizeof *o))) return oom(err);
        e->out = o;
        e->cap_out = cap;
    }
    e->n_out++;
    return PCH_OK;
}

/* Buffer the passing rows of the current cluster (a sorted projection). */
static int buffer_rows(vq_exec *e, pch_error *err)
{
    const vq_plan *p = e->p;
    for (uint64_t j = 0; j < e->n; j++) {
        vq_val *row;
        if (!e->pass[j]) continue;
        PCH_TRY(add_out_row(e, err));
        if (e->fallback) return PCH_OK;
        row = &e->out[(e->n_out - 1) * (uint64_t)p->n_items];
        for (int i = 0; i < p->n_items; i++) {
            row[i] = vec_val(&e->cols[p->item[i].col], j);
            if (row[i].type == SQLITE_TEXT && !(row[i].s = pch_arena_memdup(&e->text, row[i].s, row[i].n))) return oom(err);
        }
    }
    return PCH_OK;
}

/* The groups as output rows. */
static int finish_groups(vq_exec *e, pch_error *err)
{
    const vq_plan *p = e->p;
    uint64_t end = p->n_group ? e->n_groups : 1;
    if (!p->n_group && ensure_groups(e, 0) < 0) return oom(err);
    for (uint64_t g = 0; g < end; g++) {
        uint32_t kid[VQ_MAX];
        vq_val *row;
        if (p->n_group && !((const uint64_t *)(const void *)e->grows.data)[g]) continue;   /* no row */
        if (p->n_group == 1) kid[0] = (uint32_t)g;          /* group g is key id g (0 = NULL) */
        else if (p->n_group > 1) {                          /* group g is tuple g */
            size_t n;
            const uint8_t *b = pch_sql__intern_bytes(&e->tuples, (uint32_t)g, &n);
            memcpy(kid, b, n);
        }
        PCH_TRY(add_out_row(e, err));
        if (e->fallback) return PCH_OK;
        row = &e->out[(e->n_out - 1) * (uint64_t)p->n_items];
        for (int i = 0; i < p->n_items; i++) {
            const vq_item *it = &p->item[i];
            agg_state *a = &e->agg[i];
            uint64_t cnt = ((const uint64_t *)(const void *)a->cnt.data)[g];
            vq_val *x = &row[i];
            memset(x, 0, sizeof *x);
            x->type = SQLITE_NULL;
            switch (it->agg) {
            case A_NONE:
                for (int k = 0; k < p->n_group; k++)
                    if (p->group[k] == it->col) { *x = intern_val(&e->keys[k], kid[k]); break; }
                break;
            case A_COUNT_STAR: case A_COUNT: x->type = SQLITE_INTEGER; x->i = (int64_t)cnt; break;
            case A_SUM:
                if (cnt) { x->type = SQLITE_INTEGER; x->i = ((const int64_t *)(const void *)a->sum.data)[g]; }
                break;
            case A_AVG:
                if (cnt) {
                    if (((const uint64_t *)(const void *)a->abs.data)[g] >= (1ull << 53)) {
                        hand_back(e, "avg of integers whose sum may be inexact as a double (|sum| >= 2^53)");
                        return PCH_OK;
                    }
                    x->type = SQLITE_FLOAT;
                    x->f = (double)((const int64_t *)(const void *)a->sum.data)[g] / (double)cnt;
                }
                break;
            default:
                if (a->flag.data[g]) { hand_back(e, "min/max of a REAL group that holds 0.0 and -0.0"); return PCH_OK; }
                *x = ((const vq_val *)(const void *)a->best.data)[g];
                break;
            }
        }
    }
    return PCH_OK;
}

static int cmp_rows(const void *a, const void *b, void *payload)
{
    const vq_exec *e = payload;
    const vq_val *x = &e->out[*(const uint64_t *)a * (uint64_t)e->p->n_items];
    const vq_val *y = &e->out[*(const uint64_t *)b * (uint64_t)e->p->n_items];
    for (int k = 0; k < e->p->n_order; k++) {
        int c = val_cmp(&x[e->p->order[k].item], &y[e->p->order[k].item]);
        if (c) return e->p->order[k].desc ? -c : c;
    }
    return 0;
}

/* Sort the buffered rows by the ORDER BY keys (the group keys when there are none), and hand
** the statement back to SQLite when rows tied on every key differ where they are printed and
** the tie reaches the rows LIMIT/OFFSET print: their order is SQLite's. */
static int sort_rows(vq_exec *e, pch_error *err)
{
    const vq_plan *p = e->p;
    uint64_t lo = (uint64_t)p->offset, hi = p->limit < 0 ? UINT64_MAX : lo + (uint64_t)p->limit;
    if (!(e->perm = pch_malloc(e->ctx, (size_t)(e->n_out ? e->n_out : 1) * 8))) return oom(err);
    for (uint64_t i = 0; i < e->n_out; i++) e->perm[i] = i;
    if (!p->n_order || e->n_out < 2) return PCH_OK;
    qsort_r(e->perm, (size_t)e->n_out, 8, cmp_rows, e);
    for (uint64_t i = 0; i + 1 < e->n_out; i++) {
        const vq_val *x, *y;
        bool same = true;
        if (i + 1 < lo || i >= hi) continue;
        if (cmp_rows(&e->perm[i], &e->perm[i + 1], e) != 0) continue;
        x = &e->out[e->perm[i] * (uint64_t)p->n_items];
        y = &e->out[e->perm[i + 1] * (uint64_t)p->n_items];
        for (int k = 0; k < p->n_visible && same; k++) same = val_same(&x[k], &y[k]);
        if (!same) { hand_back(e, "rows tied on every ORDER BY key (their order is SQLite's)"); return PCH_OK; }
    }
    return PCH_OK;
}

/* ------------------------------------------------------------------ rows out */

static void exec_dispose(vq_exec *e)
{
    if (e->scan) pch_sql__vortex_source()->lanes_close(e->scan);
    pch_free(e->ctx, e->pass);
    for (int g = 0; g < VQ_MAX; g++) { pch_free(e->ctx, e->kid[g]); pch_sql__intern_dispose(&e->keys[g]); }
    pch_sql__intern_dispose(&e->tuples);
    pch_free(e->ctx, e->gid);
    for (int i = 0; i < VQ_MAX; i++) {
        pch_buf_dispose(&e->agg[i].cnt); pch_buf_dispose(&e->agg[i].sum); pch_buf_dispose(&e->agg[i].abs);
        pch_buf_dispose(&e->agg[i].best); pch_buf_dispose(&e->agg[i].flag);
    }
    pch_buf_dispose(&e->grows);
    pch_buf_dispose(&e->hist);
    pch_arena_dispose(&e->text);
    pch_free(e->ctx, e->out);
    pch_free(e->ctx, e->perm);
}

/* A value as a printed cell; num is the cell's own text buffer. */
static int to_cell(vq_exec *e, const vq_val *x, pch_sql_cell *c, char num[40], pch_error *err)
{
    c->type = x->type;
    c->s = NULL;
    c->n = 0;
    switch (x->type) {
    case SQLITE_INTEGER:
        c->i = x->i;
        if (e->fmt == PCH_SQL_DISCARD) break;    /* the value, not its text */
        c->n = pch_json__fmt_i64(num, x->i);
        c->s = num;
        break;
    case SQLITE_FLOAT:
        c->f = x->f;
        if (e->fmt != PCH_SQL_JSONL && e->fmt != PCH_SQL_DISCARD) {     /* SQLite's own text of the REAL */
            const unsigned char *t;
            sqlite3_reset(e->real_text);
            if (sqlite3_bind_double(e->real_text, 1, x->f) != SQLITE_OK || sqlite3_step(e->real_text) != SQLITE_ROW ||
                !(t = sqlite3_column_text(e->real_text, 0)) || strlen((const char *)t) >= 40)
                return pch_error_set(err, PCH_EINVAL, "vortex sql: %s", sqlite3_errmsg(e->db));
            strcpy(num, (const char *)t);
            c->s = num;
            c->n = strlen(num);
        }
        break;
    case SQLITE_TEXT: c->s = x->s; c->n = x->n; break;
    default: break;
    }
    return PCH_OK;
}

static int buffered_next(void *payload, pch_sql_cell *cell, pch_error *err)
{
    vq_exec *e = payload;
    uint64_t lo = (uint64_t)e->p->offset, k = lo + e->emitted;
    const vq_val *row;
    if (k >= e->n_out || (e->p->limit >= 0 && e->emitted >= (uint64_t)e->p->limit)) return 0;
    row = &e->out[e->perm[k] * (uint64_t)e->p->n_items];
    for (int i = 0; i < e->p->n_visible; i++) PCH_TRY(to_cell(e, &row[i], &cell[i], e->num[i], err));
    e->emitted++;
    return 1;
}

static int stream_next(void *payload, pch_sql_cell *cell, pch_error *err)
{
    vq_exec *e = payload;
    for (;;) {
        uint64_t j;
        if (e->p->limit >= 0 && e->emitted >= (uint64_t)e->p->limit) return 0;
        while (e->at < e->n && !e->pass[e->at]) e->at++;
        if (e->at >= e->n) {
            bool eof;
            PCH_TRY(fetch(e, &eof, err));
            if (eof) return 0;
            continue;
        }
        j = e->at++;
        if (e->streamed < (uint64_t)e->p->offset) { e->streamed++; continue; }
        for (int i = 0; i < e->p->n_visible; i++) {
            vq_val x = vec_val(&e->cols[e->p->item[i].col], j);
            PCH_TRY(to_cell(e, &x, &cell[i], e->num[i], err));
        }
        e->emitted++;
        return 1;
    }
}

/* Run plan p over a vector scan of src. 1: answered and printed; 0: not (p->why; nothing
** printed); < 0 an error. */
static int vq_run(vq_plan *p, void *src, pch_ctx *ctx, sqlite3 *db, sqlite3_stmt *real_text, pch_sql_format fmt,
                  FILE *out, const char *const *names, uint64_t *n_rows, char *what, size_t what_cap, pch_error *err)
{
    vq_exec e;
    pch_sql_cons cons[PCH_SQL_MAX_CONS];
    pch_sql_rowsrc rs;
    int n_cons = 0, n_agg = 0, rc;
    bool stream = !p->aggregate && !p->n_order;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.p = p;
    e.db = db;
    e.fmt = fmt;
    e.real_text = real_text;
    pch_arena_init(&e.text, ctx, 64 * 1024);
    for (int g = 0; g < VQ_MAX; g++) {
        e.keys[g].ctx = ctx; pch_buf_init(&e.keys[g].off, ctx); pch_buf_init(&e.keys[g].data, ctx);
    }
    e.tuples.ctx = ctx; pch_buf_init(&e.tuples.off, ctx); pch_buf_init(&e.tuples.data, ctx);
    for (int i = 0; i < VQ_MAX; i++) {
        pch_buf_init(&e.agg[i].cnt, ctx); pch_buf_init(&e.agg[i].sum, ctx); pch_buf_init(&e.agg[i].abs, ctx);
        pch_buf_init(&e.agg[i].best, ctx); pch_buf_init(&e.agg[i].flag, ctx);
    }
    pch_buf_init(&e.grows, ctx);
    pch_buf_init(&e.hist, ctx);
    /* what the scan may prune by (§13.3): comparisons with one literal */
    for (int k = 0; k < p->n_pred && n_cons < PCH_SQL_MAX_CONS; k++) {
        static const char ops[] = { '=', 0, '<', 'l', '>', 'g' };
        const vq_pred *pr = &p->pred[k];
        if (pr->op > P_GE || !ops[pr->op]) continue;
        cons[n_cons].col = pr->col;
        cons[n_cons].op = ops[pr->op];
        cons[n_cons].v = p->lit[pr->lit0];
        n_cons++;
    }
    rc = pch_sql__vx_vec_open(src, p->t, p->used, cons, n_cons, &e.scan, err);
    if (rc == PCH_OK && !e.scan) { snprintf(p->why, sizeof p->why, "no narrow scan of the relation"); rc = 0; goto done; }
    if (rc < 0) goto done;
    pch_sql__vx_vec_allow_mask(e.scan);     /* eval_preds folds the live flags into pass */
    rs.n_cols = p->n_visible;
    rs.names = names;
    rs.payload = &e;
    if (stream) {
        rs.next = stream_next;
        rc = pch_sql__print(&rs, fmt, out, n_rows, err);
        if (rc == PCH_OK) rc = 1;
        snprintf(what, what_cap, "vectorised: %s, %d predicate%s on column vectors, rows streamed in storage order",
                 p->t == PCH_STORYLINE_STEPS ? "steps" : "tool_calls", p->n_pred, p->n_pred == 1 ? "" : "s");
        goto done;
    }
    for (;;) {
        bool eof;
        if ((rc = fetch(&e, &eof, err)) < 0) goto done;
        if (eof) break;
        if ((rc = p->aggregate ? accumulate(&e, err) : buffer_rows(&e, err)) < 0) goto done;
        if (e.fallback) { rc = 0; goto done; }
    }
    if (p->aggregate && (rc = finish_groups(&e, err)) < 0) goto done;
    if (!e.fallback && (rc = sort_rows(&e, err)) < 0) goto done;
    if (e.fallback) { rc = 0; goto done; }
    rs.next = buffered_next;
    rc = pch_sql__print(&rs, fmt, out, n_rows, err);
    if (rc == PCH_OK) rc = 1;
    for (int i = 0; i < p->n_items; i++) n_agg += p->item[i].agg != A_NONE;
    if (p->aggregate)
        snprintf(what, what_cap, "vectorised: %s, %d predicate%s on column vectors, %s %d key%s (%llu group%s), %d aggregate%s%s",
                 p->t == PCH_STORYLINE_STEPS ? "steps" : "tool_calls", p->n_pred, p->n_pred == 1 ? "" : "s",
                 p->n_group ? "hash group-by on" : "one group,", p->n_group, p->n_group == 1 ? "" : "s",
                 (unsigned long long)e.n_out, e.n_out == 1 ? "" : "s", n_agg, n_agg == 1 ? "" : "s",
                 p->n_order ? ", sorted" : "");
    else
        snprintf(what, what_cap, "vectorised: %s, %d predicate%s on column vectors, %llu rows sorted",
                 p->t == PCH_STORYLINE_STEPS ? "steps" : "tool_calls", p->n_pred, p->n_pred == 1 ? "" : "s",
                 (unsigned long long)e.n_out);
done:
    exec_dispose(&e);
    return rc;
}

/* Parse statement text [b, end) into p. false: not the engine's (p->why). */
static bool vq_plan_of(vq_plan *p, sqlite3 *db, const char *b, const char *end)
{
    parser ps;
    char aliases[VQ_MAX][128];
    memset(p, 0, sizeof *p);
    memset(&ps, 0, sizeof ps);
    ps.x.p = b;
    ps.x.end = end;
    ps.p = p;
    ps.db = db;
    lex_next(&ps.x);
    if (!parse_select(&ps, aliases)) return false;
    /* SQLite runs an IN on a pushed column as one scan per value (its sorted list of them):
    ** rows streamed in storage order would come in another order */
    if (!p->aggregate && !p->n_order)
        for (int k = 0; k < p->n_pred; k++)
            if (p->pred[k].op == P_IN) return reject(&ps, "IN without ORDER BY (SQLite scans once per value)");
    /* groups come out in SQLite's order: ascending keys (NULL first), as if ORDER BY them */
    if (p->aggregate && p->n_group && !p->n_order)
        for (int g = 0; g < p->n_group; g++) {
            vq_item it = { A_NONE, p->group[g] };
            int at = find_item(p, &it);
            if (at < 0 && !add_item(&ps, &it, &at)) return false;
            p->order[p->n_order].item = at;
            p->order[p->n_order++].desc = false;
        }
    return true;
}

int pch_sql__vx_plan_probe(sqlite3 *db, const char *sql, size_t n, char *why, size_t why_cap)
{
    vq_plan p;
    bool ok = vq_plan_of(&p, db, sql, sql + n);
    if (why && why_cap) snprintf(why, why_cap, "%s", ok ? "" : p.why);
    plan_dispose(&p);
    return ok;
}

/* ------------------------------------------------------------------ sessions */

struct pch_vxp_sql {
    pch_ctx *ctx;
    sqlite3 *db;
    void *src;                      /* the engine's handle on the snapshot the relations pin */
    pch_vxp_sql_engine engine;
    sqlite3_stmt *real_text;
    int64_t schema[2];              /* temp and main schema versions after the attach */
    pch_buf path;                   /* the last pch_vxp_sql_exec: one line per statement */
    uint64_t rows;
};

static int schema_versions(sqlite3 *db, int64_t v[2])
{
    static const char *const q[2] = { "PRAGMA temp.schema_version", "PRAGMA main.schema_version" };
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, q[i], -1, &st, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) { v[i] = sqlite3_column_int64(st, 0); rc = SQLITE_OK; }
        sqlite3_finalize(st);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

void pch_vxp_sql_close(pch_vxp_sql *q)
{
    if (!q) return;
    sqlite3_finalize(q->real_text);
    sqlite3_close(q->db);
    if (q->src) pch_sql__vortex_source()->close(q->src);
    pch_buf_dispose(&q->path);
    pch_ctx_free(q->ctx);
    free(q);
}

int pch_vxp_sql_open(pch_vxp_sql **out, const char *root, pch_vxp_sql_engine engine, pch_error *err)
{
    return pch_vxp_sql_open_at(out, root, NULL, engine, err);
}

int pch_vxp_sql_open_at(pch_vxp_sql **out, const char *root, const char *snapshot_id, pch_vxp_sql_engine engine,
                        pch_error *err)
{
    pch_vxp_sql *q;
    char *msg = NULL;
    int rc;
    *out = NULL;
    if (engine != PCH_VXP_SQL_AUTO && engine != PCH_VXP_SQL_SQLITE)
        return pch_error_set(err, PCH_EINVAL, "vortex sql: unknown engine %d", (int)engine);
    if (!(q = calloc(1, sizeof *q))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    q->engine = engine;
    pch_buf_init(&q->path, NULL);
    if ((rc = pch_ctx_new(&q->ctx, NULL, NULL, err)) < 0) { free(q); return rc; }
    pch_sql__vx_pin_id(snapshot_id);          /* the engine's handle: that snapshot, or CURRENT's */
    rc = pch_sql__vortex_source()->open(&q->src, q->ctx, root, err);
    pch_sql__vx_pin_id(NULL);
    if (rc < 0) goto fail;
    if (sqlite3_open_v2(":memory:", &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        rc = pch_error_set(err, PCH_ENOMEM, "sql: cannot open sqlite");
        goto fail;
    }
    /* GROUP BY / ORDER BY sorters stay in memory (as pch_sql_run_with) */
    rc = sqlite3_exec(q->db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
    /* every relation pins the snapshot the engine's handle pinned */
    pch_sql__vx_pin(q->src);
    if (rc == SQLITE_OK) rc = pch_sql__vx_attach(q->db, root, &msg);
    pch_sql__vx_pin(NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(q->db, "SELECT ?1", -1, &q->real_text, NULL);
    if (rc == SQLITE_OK) rc = schema_versions(q->db, q->schema);
    if (rc != SQLITE_OK) {
        rc = pch_error_set(err, PCH_EINVAL, "sql: %s", msg ? msg : sqlite3_errmsg(q->db));
        sqlite3_free(msg);
        goto fail;
    }
    *out = q;
    return PCH_OK;
fail:
    pch_vxp_sql_close(q);
    return rc;
}

const char *pch_vxp_sql_path(const pch_vxp_sql *q) { return q->path.len ? (const char *)q->path.data : ""; }
uint64_t pch_vxp_sql_rows(const pch_vxp_sql *q) { return q->rows; }

int pch_vxp_sql_exec(pch_vxp_sql *q, const char *sql, pch_sql_format fmt, FILE *out, pch_error *err)
{
    const char *tail = sql;
    int rc = PCH_OK, n_stmt = 0;
    pch_buf_clear(&q->path);
    q->rows = 0;
    while (rc == PCH_OK && tail && *tail) {
        sqlite3_stmt *st = NULL;
        const char *next = NULL;
        vq_plan p;
        uint64_t rows = 0;
        int nc, done = 0;
        char what[256], why[200];
        if (sqlite3_prepare_v2(q->db, tail, -1, &st, &next) != SQLITE_OK) {
            rc = pch_error_set(err, PCH_EINVAL, "sql: %s", sqlite3_errmsg(q->db));
            break;
        }
        if (!st) break;             /* only whitespace/comments left */
        nc = sqlite3_column_count(st);
        what[0] = 0;
        snprintf(why, sizeof why, "%s", q->engine == PCH_VXP_SQL_SQLITE ? "--engine sqlite" : "not a query");
        if (q->engine == PCH_VXP_SQL_AUTO && nc > 0) {
            int64_t v[2];
            if (schema_versions(q->db, v) != SQLITE_OK || v[0] != q->schema[0] || v[1] != q->schema[1]) {
                snprintf(why, sizeof why, "the session's schema changed since the relations were attached");
            } else if (!vq_plan_of(&p, q->db, tail, next)) {
                snprintf(why, sizeof why, "%s", p.why[0] ? p.why : "a statement the engine does not parse");
                plan_dispose(&p);
            } else if (p.n_visible != nc) {
                snprintf(why, sizeof why, "a result the engine does not shape");
                plan_dispose(&p);
            } else {
                const char *names[VQ_MAX];
                for (int i = 0; i < nc; i++) names[i] = sqlite3_column_name(st, i);
                done = vq_run(&p, q->src, q->ctx, q->db, q->real_text, fmt, out, names, &rows, what, sizeof what, err);
                if (done == 0) snprintf(why, sizeof why, "%s", p.why);
                plan_dispose(&p);
                if (done < 0) { sqlite3_finalize(st); rc = done; break; }
            }
        }
        n_stmt++;
        if (done) pch_buf_printf(&q->path, "statement %d: %s\n", n_stmt, what);
        else {
            pch_buf_printf(&q->path, "statement %d: SQLite, row at a time (%s)\n", n_stmt, why);
            rc = pch_sql__print_stmt(st, fmt, out, &rows, err);
        }
        q->rows += rows;
        sqlite3_finalize(st);
        tail = next;
    }
    if (pch_buf_putc(&q->path, 0) < 0) return rc < 0 ? rc : pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    q->path.len--;
    return rc;
}

int pch_vxp_sql_run(const char *root, const char *sql, pch_sql_format fmt, FILE *out, pch_error *err)
{
    pch_vxp_sql *q;
    int rc = pch_vxp_sql_open(&q, root, PCH_VXP_SQL_AUTO, err);
    if (rc < 0) return rc;
    rc = pch_vxp_sql_exec(q, sql, fmt, out, err);
    pch_vxp_sql_close(q);
    return rc;
}
