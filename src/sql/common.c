/* Helpers shared by the virtual tables of src/sql (sql_int.h). */
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
