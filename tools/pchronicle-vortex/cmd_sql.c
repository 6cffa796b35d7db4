/* pchronicle-vortex sql ROOT "SQL" [--format table|csv|jsonl] [--stats] (docs/sql.md "Vortex
** projection"): the Storyline relations over a projection root (RFC-0006 §13.1). */
#include <stdlib.h>

#include "vx_cli.h"
#include "pchronicle-vortex/projection.h"

static const char k_usage[] =
    "usage: pchronicle-vortex sql ROOT \"SQL\" [--format table|csv|jsonl] [--stats] [--explain]\n"
    "Run SQL (SQLite dialect) over the relations runs, steps, tool_calls and\n"
    "observation_results of a projection root: the columns and answers of a Storyline root\n"
    "built from the same documents (docs/storyline.md §2, docs/sql.md), and the read-only\n"
    "trajectories (one summary row per trajectory, from the summary lanes).\n"
    "  --format F    table (default), csv or jsonl\n"
    "  --stats       print to stderr how many documents were rebuilt, how many clusters were\n"
    "                read lane by lane (narrow scans), the bytes read and checked, the external\n"
    "                values hydrated, and the time\n"
    "  --explain     run the statement without printing its rows; print instead each scan it\n"
    "                made: relation, read path and lanes, where each pushed predicate went\n"
    "                (directory, zone maps, summary lanes, blooms, rows), clusters considered,\n"
    "                pruned and decoded, and the totals\n";

int vx_cmd_sql(pch_ctx *ctx, int argc, char **argv)
{
    const char *pos[2] = { NULL, NULL }, *format = NULL;
    pch_sql_format fmt = PCH_SQL_TABLE;
    bool stats = false, explain = false;
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
        if (strcmp(a, "--format") == 0) {
            if (i + 1 >= argc) { fprintf(stderr, "pchronicle-vortex sql: --format needs a value\n%s", k_usage); return VX_EXIT_USAGE; }
            format = argv[++i];
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
    rc = pch_vxp_sql_run(pos[0], pos[1], fmt, rows_out, &err);
    if (explain) {
        fclose(rows_out);
        if (rc == 0) pch_vxp_sql_explain_end(stdout);
    }
    if (fflush(stdout) != 0 && rc == 0) rc = pch_error_set(&err, PCH_EIO, "write to standard output failed");
    if (stats) {
        uint64_t docs, clusters, bread, bcheck, blobs;
        pch_vxp_sql_counters(&docs, &clusters);
        pch_vxp_sql_bytes(&bread, &bcheck, &blobs);
        fprintf(stderr, "stats: documents_rebuilt=%llu lane_clusters=%llu bytes_read=%llu bytes_checked=%llu "
                        "blobs_hydrated=%llu seconds=%.3f\n",
                (unsigned long long)docs, (unsigned long long)clusters, (unsigned long long)bread,
                (unsigned long long)bcheck, (unsigned long long)blobs, vx_now_s() - t0);
    }
    return rc < 0 ? vx_fail("sql", &err) : VX_EXIT_OK;
}
