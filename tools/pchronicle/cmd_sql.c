/* pchronicle sql ROOT "SQL" [--format table|csv|jsonl] (docs/sql.md): SQL over the Storyline
** relations runs, steps, tool_calls and observation_results of ROOT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "storyline_cli.h"
#include "pchronicle/sql.h"

static const char k_usage[] =
    "usage: pchronicle sql ROOT \"SQL\" [--format table|csv|jsonl]\n"
    "Run SQL over the Storyline relations runs, steps, tool_calls and observation_results of\n"
    "ROOT (SQLite dialect; docs/sql.md lists the columns).\n";

int pch_cmd_sql(int argc, char **argv)
{
    const char *format = NULL;
    const pch_cli_opt opts[] = { { "format", true, &format, NULL } };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_sql_format fmt = PCH_SQL_TABLE;
    pch_error err;
    int n_pos = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, 1, pos, &n_pos, k_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    if (n_pos != 2) { rc = pch_cli_usage_error(k_usage, "expected ROOT and SQL"); goto done; }
    if (format && strcmp(format, "csv") == 0) fmt = PCH_SQL_CSV;
    else if (format && strcmp(format, "jsonl") == 0) fmt = PCH_SQL_JSONL;
    else if (format && strcmp(format, "table") != 0) { rc = pch_cli_usage_error(k_usage, "--format must be table, csv or jsonl"); goto done; }
    pch_error_clear(&err);
    rc = pch_sql_run(pos[0], pos[1], fmt, stdout, &err) == 0 ? PCH_CLI_EXIT_OK : pch_cli_fail(&err);
done:
    free(pos);
    return rc;
}
