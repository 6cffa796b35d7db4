/* An independent consumer of our Arrow C streams (tests/cli/vortex_arrow.sh): DuckDB's C
** library (the libduckdb.so of the npm package @duckdb/node-api 1.5.6-r.1, which ships no
** header: the few functions used are declared here, as ../shared/specs/reference/duckdb-peer
** does) scans the stream of a relation of a Vortex projection and runs SQL over it.
**
**   duckdb_consumer ROOT RELATION COLUMNS|- "SQL over table t"
**   duckdb_consumer ROOT rl[:MODEL]|sft[:MODEL] - "SQL over table t"    (the training readers)
**
** prints one JSON array per result row (every value as DuckDB's VARCHAR cast, or null); with
** PCH_ARROW_SCHEMA set, first the stream's column formats to stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pchronicle/arrow.h"
#include "pchronicle/error.h"
#include "pchronicle-vortex/projection.h"

typedef uint64_t idx_t;
typedef void *duckdb_database;
typedef void *duckdb_connection;
typedef struct { idx_t a, b, c; void *cols; char *err; void *internal; } duckdb_result;
int duckdb_open(const char *path, duckdb_database *out);
int duckdb_connect(duckdb_database db, duckdb_connection *out);
int duckdb_query(duckdb_connection c, const char *sql, duckdb_result *out);
const char *duckdb_result_error(duckdb_result *r);
idx_t duckdb_row_count(duckdb_result *r);
idx_t duckdb_column_count(duckdb_result *r);
char *duckdb_value_varchar(duckdb_result *r, idx_t col, idx_t row);
void duckdb_destroy_result(duckdb_result *r);
void duckdb_disconnect(duckdb_connection *c);
void duckdb_close(duckdb_database *db);
void duckdb_free(void *p);
int duckdb_arrow_scan(duckdb_connection c, const char *table_name, void *arrow_stream);

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    struct ArrowArrayStream st;
    const char *cols[64];
    size_t n_cols = 0;
    char *list = NULL;
    duckdb_database db;
    duckdb_connection con;
    duckdb_result r;
    pch_error err;
    int rc = 0;
    if (argc != 5) { fputs("usage: duckdb_consumer ROOT RELATION COLUMNS|- SQL\n", stderr); return 2; }
    if (strcmp(argv[3], "-") != 0) {
        list = strdup(argv[3]);
        for (char *p = strtok(list, ","); p && n_cols < 64; p = strtok(NULL, ",")) cols[n_cols++] = p;
    }
    pch_error_clear(&err);
    if (strncmp(argv[2], "rl", 2) == 0 || strncmp(argv[2], "sft", 3) == 0) {
        /* a training reader: "rl" or "sft", optionally ":MODEL" (the model filter) */
        pch_vxp_train_filter f;
        const char *colon = strchr(argv[2], ':');
        memset(&f, 0, sizeof f);
        if (colon) f.model = colon + 1;
        rc = argv[2][0] == 'r' ? pch_vxp_arrow_rl(argv[1], &f, &st, &err) : pch_vxp_arrow_sft(argv[1], &f, &st, &err);
    } else {
        rc = pch_vxp_arrow_relation(argv[1], argv[2], list ? cols : NULL, n_cols, &st, &err);
    }
    if (rc != 0) {
        fprintf(stderr, "duckdb_consumer: %s\n", err.msg);
        free(list);
        return 1;
    }
    if (getenv("PCH_ARROW_SCHEMA")) {      /* the stream's column formats to stderr: name=format[+dictionary] */
        struct ArrowSchema sc;
        if (st.get_schema(&st, &sc) != 0) { fputs("duckdb_consumer: get_schema failed\n", stderr); return 1; }
        for (int64_t i = 0; i < sc.n_children; i++)
            fprintf(stderr, "%s=%s%s%s\n", sc.children[i]->name, sc.children[i]->format, sc.children[i]->dictionary ? "+" : "",
                    sc.children[i]->dictionary ? sc.children[i]->dictionary->format : "");
        sc.release(&sc);
    }
    if (duckdb_open(NULL, &db) || duckdb_connect(db, &con)) { fputs("duckdb_consumer: duckdb open failed\n", stderr); return 1; }
    /* DuckDB pushes its projection into an Arrow scan and then reads the stream's children
    ** by position; a C stream hands over every column, so the whole stream is first read
    ** into a table (SELECT * keeps every column in order) and the SQL runs over that */
    if (duckdb_arrow_scan(con, "stream", &st)) {
        fprintf(stderr, "duckdb_consumer: duckdb_arrow_scan failed: %s\n", st.get_last_error(&st) ? st.get_last_error(&st) : "?");
        rc = 1;
    } else if (duckdb_query(con, "CREATE TABLE t AS SELECT * FROM stream", &r)) {
        fprintf(stderr, "duckdb_consumer: reading the stream: %s (stream: %s)\n", duckdb_result_error(&r),
                st.get_last_error(&st) ? st.get_last_error(&st) : "no error");
        duckdb_destroy_result(&r);
        rc = 1;
    } else if (duckdb_destroy_result(&r), duckdb_query(con, argv[4], &r)) {
        fprintf(stderr, "duckdb_consumer: %s (stream: %s)\n", duckdb_result_error(&r),
                st.get_last_error(&st) ? st.get_last_error(&st) : "no error");
        duckdb_destroy_result(&r);
        rc = 1;
    } else {
        for (idx_t i = 0; i < duckdb_row_count(&r); i++) {
            putchar('[');
            for (idx_t c = 0; c < duckdb_column_count(&r); c++) {
                char *v = duckdb_value_varchar(&r, c, i);
                if (c) putchar(',');
                if (v) json_str(v);
                else fputs("null", stdout);
                duckdb_free(v);
            }
            puts("]");
        }
        duckdb_destroy_result(&r);
    }
    duckdb_disconnect(&con);
    duckdb_close(&db);
    st.release(&st);
    free(list);
    return rc;
}
