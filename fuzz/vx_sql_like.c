/* Fuzz target: the vectorised SQL engine's LIKE (src/sql/vx_exec.c, pch_sql__vx_like) against
** SQLite's own. The input is split at its first 0xff byte into a pattern (ASCII bytes only;
** others are dropped, as the engine hands any other pattern to SQLite) and a text (used when
** it is valid UTF-8, as lane text is); any answer that differs from SQLite's aborts. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "json/json_int.h"
#include "sql/sql_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sqlite3 *db;
    static sqlite3_stmt *st;
    const uint8_t *cut = memchr(data, 0xff, size);
    size_t pn = 0, tn;
    uint8_t pat[256];
    const uint8_t *text;
    int want;
    if (!db) {
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(db, "SELECT ?1 LIKE ?2", -1, &st, NULL) != SQLITE_OK)
            abort();
    }
    if (!cut) return 0;
    for (const uint8_t *p = data; p < cut && pn < sizeof pat; p++)
        if (*p && *p < 0x80) pat[pn++] = *p;
    text = cut + 1;
    tn = size - (size_t)(text - data);
    if (pch_json__utf8_check(text, tn) != tn) return 0;
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, (const char *)text, (int)tn, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, pn ? (const char *)pat : "", (int)pn, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW) abort();
    want = sqlite3_column_int(st, 0);
    if (pch_sql__vx_like(pat, pn, text, tn) != want) abort();
    return 0;
}
