/* Fuzz target: the statement parser of the vectorised SQL engine (src/sql/vx_exec.c). Any
** bytes are tokenized and parsed as a statement over steps/tool_calls (the literals
** evaluated by an in-memory SQLite); a statement is either planned or refused with a reason,
** never a crash or a read past its end. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "vortex_fuzz.h"
#include "sql/sql_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sqlite3 *db;
    char why[200], *copy;
    if (!db && sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) abort();
    /* exactly the input's bytes, no terminator: the parser must stay inside them */
    if (!(copy = malloc(size ? size : 1))) return 0;
    memcpy(copy, data, size);
    (void)pch_sql__vx_plan_probe(db, copy, size, why, sizeof why);
    free(copy);
    return 0;
}
