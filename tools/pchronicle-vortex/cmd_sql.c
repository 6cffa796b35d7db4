/* pchronicle-vortex sql ROOT "SQL" [--format table|csv|jsonl] [--engine auto|sqlite] [--stats]
** [--explain] and pchronicle-vortex bench-sql ROOT --queries FILE [--repeat N] [--engine E]
** (docs/sql.md "Vortex projection", "Execution paths"): the Storyline relations over a
** projection root (RFC-0006 §13.1), each statement on the fastest exact path. */
#include <stdlib.h>

#include "vx_cli.h"
#include "pchronicle-vortex/projection.h"

static const char k_usage[] =
    "usage: pchronicle-vortex sql ROOT \"SQL\" [--format table|csv|jsonl] [--engine auto|sqlite]\n"
    "                             [--stats] [--explain] [--snapshot ID]\n"
    "Run SQL (SQLite dialect) over the relations runs, steps, tool_calls and\n"
    "observation_results of a projection root: the columns and answers of a Storyline root\n"
    "built from the same documents (docs/storyline.md §2, docs/sql.md), and the read-only\n"
    "trajectories (one summary row per trajectory, from the summary lanes).\n"
    "  --format F    table (default), csv or jsonl\n"
    "  --engine E    auto (default): a SELECT over narrow steps/tool_calls columns (filters,\n"
    "                group-by, count/sum/min/max/avg, order-by, limit) runs vectorised over the\n"
    "                lanes, the rest through SQLite; sqlite: every statement row at a time\n"
    "                through SQLite (the answers are the same bytes)\n"
    "  --stats       print to stderr how many documents were rebuilt, how many clusters were\n"
    "                read lane by lane (narrow scans), the bytes read and checked, the external\n"
    "                values hydrated, and the time\n"
    "  --explain     run the statement without printing its rows; print instead the path each\n"
    "                statement took (vectorised or SQLite, and why) and each scan it made:\n"
    "                relation, read path and lanes, where each pushed predicate went\n"
    "                (directory, zone maps, summary lanes, blooms, rows), clusters considered,\n"
    "                pruned and decoded, and the totals\n"
    "  --snapshot ID read that snapshot instead of CURRENT's (`pchronicle-vortex snapshots`)\n";

static const char k_bench_usage[] =
    "usage: pchronicle-vortex bench-sql ROOT --queries FILE [--repeat N] [--engine auto|sqlite]\n"
    "Warm in-process SQL latencies (benchmarks): opens the snapshot once, runs each statement\n"
    "of FILE (one per line; empty lines and lines starting with # are skipped) N times\n"
    "(default 5) after one warm-up run, and prints one JSON line per statement: sql, engine,\n"
    "path (vectorised or SQLite), rows, then two timings of the same statement:\n"
    "  p50_ms, p95_ms, min_ms, max_ms  the rows written as CSV to /dev/null (what `sql` does);\n"
    "  engine_p50_ms, engine_p95_ms    the rows produced and counted, not formatted: the\n"
    "                                  engine-only figure, as the peers time theirs.\n";

static int engine_of(const char *s, pch_vxp_sql_engine *out)
{
    if (strcmp(s, "auto") == 0) *out = PCH_VXP_SQL_AUTO;
    else if (strcmp(s, "sqlite") == 0) *out = PCH_VXP_SQL_SQLITE;
    else return -1;
    return 0;
}

int vx_cmd_sql(pch_ctx *ctx, int argc, char **argv)
{
    const char *pos[2] = { NULL, NULL }, *format = NULL;
    pch_sql_format fmt = PCH_SQL_TABLE;
    pch_vxp_sql_engine engine = PCH_VXP_SQL_AUTO;
    pch_vxp_sql *q = NULL;
    bool stats = false, explain = false;
    const char *snap = NULL;
    FILE *rows_out = stdout;
    int n_pos = 0, rc;
    pch_error err;
    double t0;
    (void)ctx;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(k_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--stats") == 0) { stats = true; continue; }
        if (strcmp(a, "--explain") == 0) { explain = true; continue; }
        if (strcmp(a, "--format") == 0 || strcmp(a, "--engine") == 0 || strcmp(a, "--snapshot") == 0) {
            if (i + 1 >= argc) { fprintf(stderr, "pchronicle-vortex sql: %s needs a value\n%s", a, k_usage); return VX_EXIT_USAGE; }
            if (a[2] == 'f') format = argv[++i];
            else if (a[2] == 's') snap = argv[++i];
            else if (engine_of(argv[++i], &engine) < 0) {
                fprintf(stderr, "pchronicle-vortex sql: --engine must be auto or sqlite\n%s", k_usage);
                return VX_EXIT_USAGE;
            }
            continue;
        }
        if (a[0] == '-' && a[1] == '-') { fprintf(stderr, "pchronicle-vortex sql: unknown option %s\n%s", a, k_usage); return VX_EXIT_USAGE; }
        if (n_pos == 2) { fprintf(stderr, "pchronicle-vortex sql: expected ROOT and SQL\n%s", k_usage); return VX_EXIT_USAGE; }
        pos[n_pos++] = a;
    }
    if (n_pos != 2) { fprintf(stderr, "pchronicle-vortex sql: expected ROOT and SQL\n%s", k_usage); return VX_EXIT_USAGE; }
    if (format && strcmp(format, "csv") == 0) fmt = PCH_SQL_CSV;
    else if (format && strcmp(format, "jsonl") == 0) fmt = PCH_SQL_JSONL;
    else if (format && strcmp(format, "table") != 0) {
        fprintf(stderr, "pchronicle-vortex sql: --format must be table, csv or jsonl\n%s", k_usage);
        return VX_EXIT_USAGE;
    }
    pch_error_clear(&err);
    t0 = vx_now_s();
    if (explain) {
        if (!(rows_out = fopen("/dev/null", "w"))) {
            fprintf(stderr, "pchronicle-vortex sql: cannot open /dev/null for the rows --explain discards\n");
            return VX_EXIT_FAIL;
        }
        pch_vxp_sql_explain_begin();
    }
    rc = pch_vxp_sql_open_at(&q, pos[0], snap, engine, &err);
    if (rc == 0) rc = pch_vxp_sql_exec(q, pos[1], fmt, rows_out, &err);
    if (explain) {
        fclose(rows_out);
        if (rc == 0) {
            fputs(pch_vxp_sql_path(q), stdout);
            pch_vxp_sql_close(q);           /* the scans' bytes are counted when they close */
            q = NULL;
            pch_vxp_sql_explain_end(stdout);
        }
    }
    pch_vxp_sql_close(q);
    if (fflush(stdout) != 0 && rc == 0) rc = pch_error_set(&err, PCH_EIO, "write to standard output failed");
    if (stats) {
        uint64_t docs, clusters, bread, bcheck, blobs;
        pch_vxp_sql_counters(&docs, &clusters);
        pch_vxp_sql_bytes(&bread, &bcheck, &blobs);
        fprintf(stderr, "stats: documents_rebuilt=%llu lane_clusters=%llu bytes_read=%llu bytes_checked=%llu "
                        "blobs_hydrated=%llu seconds=%.3f\n",
                (unsigned long long)docs, (unsigned long long)clusters, (unsigned long long)bread,
                (unsigned long long)bcheck, (unsigned long long)blobs, vx_now_s() - t0);
        vx_print_s3_stats();
    }
    return rc < 0 ? vx_fail("sql", &err) : VX_EXIT_OK;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int vx_cmd_bench_sql(pch_ctx *ctx, int argc, char **argv)
{
    const char *root = NULL, *queries = NULL, *engine_s = "auto";
    pch_vxp_sql_engine engine = PCH_VXP_SQL_AUTO;
    long repeat = 5;
    pch_vxp_sql *q = NULL;
    FILE *in, *sink;
    char *line = NULL;
    size_t cap = 0;
    double *ms, *eng;
    uint64_t rows;
    pch_error err;
    int rc = 0;
    (void)ctx;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(k_bench_usage, stdout); return VX_EXIT_OK; }
        if ((strcmp(a, "--queries") == 0 || strcmp(a, "--repeat") == 0 || strcmp(a, "--engine") == 0) && i + 1 < argc) {
            const char *v = argv[++i];
            if (a[2] == 'q') queries = v;
            else if (a[2] == 'e') { engine_s = v; if (engine_of(v, &engine) < 0) { fprintf(stderr, "pchronicle-vortex bench-sql: --engine must be auto or sqlite\n%s", k_bench_usage); return VX_EXIT_USAGE; } }
            else {
                char *e;
                repeat = strtol(v, &e, 10);
                if (*e || repeat < 1 || repeat > 100000) { fprintf(stderr, "pchronicle-vortex bench-sql: --repeat must be 1..100000\n%s", k_bench_usage); return VX_EXIT_USAGE; }
            }
            continue;
        }
        if (a[0] == '-' || root) { fprintf(stderr, "pchronicle-vortex bench-sql: unexpected %s\n%s", a, k_bench_usage); return VX_EXIT_USAGE; }
        root = a;
    }
    if (!root || !queries) { fprintf(stderr, "pchronicle-vortex bench-sql: expected ROOT and --queries FILE\n%s", k_bench_usage); return VX_EXIT_USAGE; }
    if (!(in = fopen(queries, "r"))) { fprintf(stderr, "pchronicle-vortex bench-sql: cannot open %s\n", queries); return VX_EXIT_FAIL; }
    if (!(sink = fopen("/dev/null", "w"))) { fclose(in); fprintf(stderr, "pchronicle-vortex bench-sql: cannot open /dev/null for the rows\n"); return VX_EXIT_FAIL; }
    ms = malloc((size_t)repeat * sizeof *ms);
    eng = malloc((size_t)repeat * sizeof *eng);
    if (!ms || !eng) { free(ms); free(eng); fclose(in); fclose(sink); return VX_EXIT_FAIL; }
    pch_error_clear(&err);
    if (pch_vxp_sql_open(&q, root, engine, &err) < 0) { rc = -1; goto out; }
    while (getline(&line, &cap, in) >= 0) {
        size_t n = strlen(line);
        char *path, *nl;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (!n || line[0] == '#') continue;
        if (pch_vxp_sql_exec(q, line, PCH_SQL_CSV, sink, &err) < 0) { rc = -1; goto out; }   /* warm-up */
        rows = pch_vxp_sql_rows(q);
        for (int pass = 0; pass < 2; pass++) {     /* 0: rows as CSV; 1: rows discarded */
            double *t = pass ? eng : ms;
            for (long r = 0; r < repeat; r++) {
                double t0 = vx_now_s();
                if (pch_vxp_sql_exec(q, line, pass ? PCH_SQL_DISCARD : PCH_SQL_CSV, sink, &err) < 0) { rc = -1; goto out; }
                t[r] = (vx_now_s() - t0) * 1000;
                if (pch_vxp_sql_rows(q) != rows) {
                    pch_error_set(&err, PCH_EINVAL, "bench-sql: %s gave %llu rows, then %llu", line,
                                  (unsigned long long)rows, (unsigned long long)pch_vxp_sql_rows(q));
                    rc = -1;
                    goto out;
                }
            }
            qsort(t, (size_t)repeat, sizeof *t, cmp_ms);
        }
        if (!(path = strdup(pch_vxp_sql_path(q)))) { rc = -1; goto out; }
        if ((nl = strrchr(path, '\n')) && !nl[1]) *nl = 0;
        fputs("{\"sql\":", stdout);
        vx_put_json_string(stdout, line);
        printf(",\"engine\":\"%s\",\"path\":", engine_s);
        vx_put_json_string(stdout, path);
        printf(",\"rows\":%llu,\"repeat\":%ld,\"p50_ms\":%.3f,\"p95_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,"
               "\"engine_p50_ms\":%.3f,\"engine_p95_ms\":%.3f}\n",
               (unsigned long long)rows, repeat, ms[(repeat - 1) / 2],
               ms[(size_t)((double)(repeat - 1) * 0.95 + 0.5)], ms[0], ms[repeat - 1],
               eng[(repeat - 1) / 2], eng[(size_t)((double)(repeat - 1) * 0.95 + 0.5)]);
        free(path);
        fflush(stdout);
    }
out:
    free(line);
    free(ms);
    free(eng);
    fclose(in);
    fclose(sink);
    pch_vxp_sql_close(q);
    return rc < 0 ? vx_fail("bench-sql", &err) : VX_EXIT_OK;
}
