/* Internal helpers shared by the SQLite virtual tables of src/sql: vtab.c (Storyline
** relations) and lance_vtab.c (any Lance dataset, compact-jsonl records). */
#ifndef PCH_SQL_INT_H
#define PCH_SQL_INT_H

#include <sqlite3.h>
#include <string.h>

#include "core/core.h"
#include "pchronicle/lance.h"

/* Most pushed constraints one plan carries. */
#define PCH_SQL_MAX_CONS 16

/* A vtab error: message into zErrMsg, PCH_* code → SQLite code. */
int pch_sql__set_err(sqlite3_vtab *vt, const pch_error *e, int code);

/* Strip one pair of matching quotes SQLite leaves around a module argument; n in/out. */
const char *pch_sql__unquote(const char *s, size_t *n);

/* Lance type → declared SQLite column type. */
const char *pch_sql__type(pch_lance_type t);

static inline bool pch_sql__valid(const pch_lance_column *lc, size_t row)
{
    return lc && (!lc->validity || lc->validity[row]);
}

static inline bool pch_sql__str(const pch_lance_column *lc, size_t row, const char **p, size_t *n)
{
    if (!pch_sql__valid(lc, row) || !pch_lance_type_is_var(lc->type)) return false;
    *p = (const char *)lc->data + lc->offsets[row];
    *n = (size_t)(lc->offsets[row + 1] - lc->offsets[row]);
    return true;
}

/* The "lance" module (lance_vtab.c); pch_sql_register registers it with "storyline". */
int pch_sql__register_lance(sqlite3 *db);

/* Signed integer value (ints, bool); false for null or another type. */
bool pch_sql__i64(const pch_lance_column *lc, size_t row, int64_t *v);

#endif
