/* SQL over a Storyline root (docs/sql.md): golden queries whose answers are computed
** independently from the input JSON with jansson (steps per document, tool calls per
** function, observation results), pushdown on identity columns and timestamps giving the
** same answers as unfiltered scans, hydration of offloaded values, and SQL errors. */
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "harness.h"
#include "pchronicle/sql.h"
#include "pchronicle/storyline.h"

static pch_ctx *g_ctx;
static char g_root[200], g_root_small[256];
static sqlite3 *g_db;

static const char *const k_docs[] = { "harbor_multiagent_v1_7.json", "exmp02_atif.json",
    "tool-calls.input.json", "multimodal/trajectory.json", "linear-history/trajectory.json" };

static long long q_int(const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(g_db, sql, -1, &st, NULL) != SQLITE_OK) { fprintf(stderr, "  %s: %s\n", sql, sqlite3_errmsg(g_db)); return -2; }
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_sql__steps_per_document(void)
{
    for (size_t i = 0; i < sizeof k_docs / sizeof k_docs[0]; i++) {
        char path[512], sql[1024];
        json_error_t je;
        snprintf(path, sizeof path, "tests/data/atif/%s", k_docs[i]);
        json_t *j = json_load_file(path, JSON_DECODE_INT_AS_REAL, &je);
        PCH_CHECK_MSG(j != NULL, "%s: %s", path, je.text);
        long long want = (long long)json_array_size(json_object_get(j, "steps"));
        json_decref(j);
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM steps s JOIN runs r ON r.run_id = s.run_id AND r.trajectory_key = s.trajectory_key "
                 "WHERE r.doc_path = '%s' AND r.preorder = 0", k_docs[i]);
        PCH_CHECK_EQ_INT(q_int(sql), want);
    }
}

static void count_calls(json_t *t, long long *calls, long long *results, long long *bash)
{
    size_t i, k;
    json_t *s, *c;
    json_array_foreach(json_object_get(t, "steps"), i, s) {
        json_array_foreach(json_object_get(s, "tool_calls"), k, c) {
            (*calls)++;
            const char *fn = json_string_value(json_object_get(c, "function_name"));
            if (fn && strcmp(fn, "bash_command") == 0) (*bash)++;
        }
        *results += (long long)json_array_size(json_object_get(json_object_get(s, "observation"), "results"));
    }
    json_array_foreach(json_object_get(t, "subagent_trajectories"), i, s) count_calls(s, calls, results, bash);
}

static void test_sql__calls_and_results(void)
{
    long long calls = 0, results = 0, bash = 0;
    const char *all[] = { "harbor_multiagent_v1_7.json", "exmp02_atif.json", "tool-calls.input.json",
        "multimodal/trajectory.json", "linear-history/trajectory.json", "linear-history/trajectory.cont-1.json",
        "context-summarization/trajectory.json", "context-summarization/trajectory.summarization-1-summary.json",
        "context-summarization/trajectory.summarization-1-questions.json",
        "context-summarization/trajectory.summarization-1-answers.json" };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        char path[512];
        json_error_t je;
        snprintf(path, sizeof path, "tests/data/atif/%s", all[i]);
        json_t *j = json_load_file(path, JSON_DECODE_INT_AS_REAL, &je);
        PCH_CHECK_MSG(j != NULL, "%s: %s", path, je.text);
        count_calls(j, &calls, &results, &bash);
        json_decref(j);
    }
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM tool_calls"), calls);
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM tool_calls WHERE function_name = 'bash_command'"), bash);
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM observation_results"), results);
    /* correlated + uncorrelated = all; correlated ones name their call */
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM observation_results WHERE call_ordinal IS NOT NULL AND source_call_id IS NULL"), 0);
}

static void test_sql__pushdown_matches_scan(void)
{
    /* identity equality and timestamp ranges: pushed vs. forced unpushable (+0 / ||'') */
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM steps WHERE trajectory_key = 'mm-run-1@multimodal/trajectory.json'"), 3);
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM steps WHERE trajectory_key = 'mm-run-1@multimodal/trajectory.json'"),
                     q_int("SELECT count(*) FROM steps WHERE trajectory_key || '' = 'mm-run-1@multimodal/trajectory.json'"));
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM steps WHERE timestamp_ms >= 1767312000000 AND timestamp_ms < 1767400000000"),
                     q_int("SELECT count(*) FROM steps WHERE timestamp_ms + 0 >= 1767312000000 AND timestamp_ms + 0 < 1767400000000"));
    PCH_CHECK(q_int("SELECT count(*) FROM steps WHERE timestamp_ms > 0") > 0);
    /* a type mismatch must not drop rows SQLite would keep */
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM steps WHERE step_ordinal = 0 AND trajectory_key > 0"),
                     q_int("SELECT count(*) FROM steps WHERE step_ordinal + 0 = 0 AND trajectory_key || '' > 0"));
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM runs WHERE run_id = 'no-such-run'"), 0);
}

static void test_sql__hydration(void)
{
    /* the same message text whether inline (default root) or moved to objects (small root) */
    char sql[1024];
    sqlite3_stmt *a, *b;
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.small_steps USING storyline('%s', 'steps')", g_root_small);
    PCH_CHECK(sqlite3_exec(g_db, sql, NULL, NULL, NULL) == SQLITE_OK);
    PCH_CHECK_EQ_INT(q_int("SELECT count(*) FROM small_steps WHERE message_object IS NOT NULL"), q_int("SELECT count(*) FROM small_steps WHERE message IS NOT NULL AND length(message) >= 16"));
    PCH_CHECK(sqlite3_prepare_v2(g_db, "SELECT message FROM steps ORDER BY trajectory_key, step_ordinal", -1, &a, NULL) == SQLITE_OK);
    PCH_CHECK(sqlite3_prepare_v2(g_db, "SELECT message FROM small_steps ORDER BY trajectory_key, step_ordinal", -1, &b, NULL) == SQLITE_OK);
    int n = 0, diff = 0;
    while (sqlite3_step(a) == SQLITE_ROW && sqlite3_step(b) == SQLITE_ROW) {
        const unsigned char *x = sqlite3_column_text(a, 0), *y = sqlite3_column_text(b, 0);
        n++;
        json_t *jx = x ? json_loads((const char *)x, JSON_DECODE_ANY, NULL) : NULL;
        json_t *jy = y ? json_loads((const char *)y, JSON_DECODE_ANY, NULL) : NULL;
        if ((x == NULL) != (y == NULL) || (jx && !json_equal(jx, jy))) diff++;
        json_decref(jx);
        json_decref(jy);
    }
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    PCH_CHECK(n > 40);
    PCH_CHECK_EQ_INT(diff, 0);
}

static void test_sql__errors(void)
{
    char *msg = NULL;
    pch_error e;
    PCH_CHECK(sqlite3_exec(g_db, "CREATE VIRTUAL TABLE temp.nope USING storyline('/nonexistent-root', 'steps')", NULL, NULL, &msg) != SQLITE_OK);
    PCH_CHECK(msg && strstr(msg, "no CURRENT"));
    sqlite3_free(msg);
    msg = NULL;
    PCH_CHECK(sqlite3_exec(g_db, "CREATE VIRTUAL TABLE temp.nope2 USING storyline('x', 'bogus')", NULL, NULL, &msg) != SQLITE_OK);
    sqlite3_free(msg);
    FILE *devnull = fopen("/dev/null", "w");
    PCH_CHECK(pch_sql_run(g_root, "SELEC nonsense", PCH_SQL_TABLE, devnull, &e) == PCH_EINVAL);
    PCH_CHECK(strstr(e.msg, "syntax error") != NULL);
    PCH_CHECK_OK(pch_sql_run(g_root, "SELECT count(*) FROM runs", PCH_SQL_JSONL, devnull, &e), &e);
    fclose(devnull);
}

int main(int argc, char **argv)
{
    pch_storyline_import_options o = PCH_STORYLINE_IMPORT_OPTIONS_INIT;
    pch_error e;
    char *msg = NULL;
    pch_test_init(argc, argv, "sql_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) != 0) return 2;
    snprintf(g_root, sizeof g_root, "%s/pch-sql-test-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(g_root_small, sizeof g_root_small, "%s-small", g_root);
    if (pch_storyline_import(g_ctx, "tests/data/atif", g_root, NULL, NULL, &e) != 0) { fprintf(stderr, "%s\n", e.msg); return 2; }
    o.object_threshold = 16;
    if (pch_storyline_import(g_ctx, "tests/data/atif", g_root_small, &o, NULL, &e) != 0) { fprintf(stderr, "%s\n", e.msg); return 2; }
    if (sqlite3_open(":memory:", &g_db) != SQLITE_OK || pch_sql_register(g_db) != SQLITE_OK ||
        pch_sql_attach_root(g_db, g_root, &msg) != SQLITE_OK) { fprintf(stderr, "%s\n", msg ? msg : "sqlite"); return 2; }
    PCH_RUN(test_sql__steps_per_document);
    PCH_RUN(test_sql__calls_and_results);
    PCH_RUN(test_sql__pushdown_matches_scan);
    PCH_RUN(test_sql__hydration);
    PCH_RUN(test_sql__errors);
    sqlite3_close(g_db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", g_root, g_root_small);
    if (system(cmd) != 0) fprintf(stderr, "cannot clean up\n");
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
