/* pchronicle sql ROOT|DATASET "SQL" [--format table|csv|jsonl] [--version N] (docs/sql.md):
** SQL over the Storyline relations of ROOT, or over a Lance dataset (records / dataset). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "storyline_cli.h"
#include "pchronicle/lance.h"
#include "pchronicle/sql.h"

static const char k_usage[] =
    "usage: pchronicle sql ROOT|DATASET \"SQL\" [--format table|csv|jsonl] [--version N]\n"
    "Run SQL (SQLite dialect) over\n"
    "  a Storyline root: the relations runs, steps, tool_calls and observation_results;\n"
    "  a compact-jsonl dataset: the relation records (its columns, JSON columns as JSON text\n"
    "    for json_extract and friends, and `record`: each record's exact text);\n"
    "  any other Lance dataset: the relation dataset (its columns).\n"
    "docs/sql.md lists the columns and what is pushed down.\n"
    "  --format F    table (default), csv or jsonl\n"
    "  --version N   read version N of a Lance dataset (default: the latest)\n"
    "  --stats       print the bytes read from Lance data files and the time to stderr (on\n"
    "                s3://, a second line: GETs, ranges and bytes requested)\n";

int pch_cmd_sql(int argc, char **argv)
{
    const char *format = NULL, *version = NULL;
    bool stats = false;
    const pch_cli_opt opts[] = { { "format", true, &format, NULL }, { "version", true, &version, NULL },
                                 { "stats", false, NULL, &stats } };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_sql_format fmt = PCH_SQL_TABLE;
    unsigned long long ver = 0;
    pch_error err;
    int n_pos = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, 3, pos, &n_pos, k_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    if (n_pos != 2) { rc = pch_cli_usage_error(k_usage, "expected ROOT|DATASET and SQL"); goto done; }
    if (format && strcmp(format, "csv") == 0) fmt = PCH_SQL_CSV;
    else if (format && strcmp(format, "jsonl") == 0) fmt = PCH_SQL_JSONL;
    else if (format && strcmp(format, "table") != 0) { rc = pch_cli_usage_error(k_usage, "--format must be table, csv or jsonl"); goto done; }
    if (version && (!pch_cli_parse_u64(version, UINT64_MAX, &ver) || ver == 0)) {
        rc = pch_cli_usage_error(k_usage, "--version must be a dataset version (1, 2, ...), not %s", version);
        goto done;
    }
    pch_error_clear(&err);
    {
        double t0 = pch_cli_now();
        rc = pch_sql_run_at(pos[0], ver, pos[1], fmt, stdout, &err) == 0 ? PCH_CLI_EXIT_OK : pch_cli_fail(&err);
        if (stats) pch_cli_print_stats(t0);
    }
done:
    free(pos);
    return rc;
}
