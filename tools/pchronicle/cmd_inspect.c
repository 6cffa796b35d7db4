/* pchronicle inspect DATASET (RFC-0014 datasets): format, version, rows, files,
** offloaded rows and bytes, and bytes per column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cj_cli.h"
#include "storyline_cli.h"
#include "pchronicle/compact_jsonl.h"

static const char k_usage[] =
    "usage: pchronicle inspect DATASET\n"
    "\n"
    "Verify a compact-jsonl dataset (format metadata and schema) and print its format,\n"
    "Lance version, rows, source files, offloaded rows and bytes, bytes on disk and the\n"
    "value bytes and nulls of every column, and every column's encoded bytes on disk.\n";

int pch_cmd_inspect(int argc, char **argv)
{
    if (pch_sl_cli_routes(argc, argv, PCH_SL_CLI_INSPECT)) return pch_cmd_storyline_inspect(argc, argv);
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    int n_pos = 0, rc = pch_cli_parse(argc, argv, NULL, 0, pos, &n_pos, k_usage);
    pch_ctx *ctx = NULL;
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    if (n_pos != 1) { rc = pch_cli_usage_error(k_usage, n_pos ? "too many arguments" : "missing DATASET"); goto done; }
    pch_error err;
    pch_error_clear(&err);
    if (pch_ctx_new(&ctx, NULL, NULL, &err) < 0) { rc = pch_cli_fail(&err); goto done; }
    pch_cj_info info;
    if (pch_cj_inspect(ctx, pos[0], &info, &err) < 0) { rc = pch_cli_fail(&err); goto done; }
    printf("format: %s\n", info.format);
    printf("lance version: %llu\n", (unsigned long long)info.version);
    printf("lance file version: %s\n", info.file_version);
    printf("rows: %llu\n", (unsigned long long)info.rows);
    printf("files: %llu (%llu empty)\n", (unsigned long long)info.files, (unsigned long long)info.empty_files);
    printf("offload threshold: %llu\n", (unsigned long long)info.offload_threshold);
    printf("offloaded rows: %llu\n", (unsigned long long)info.offloaded_rows);
    printf("offload objects: %llu (%llu bytes)\n", (unsigned long long)info.offload_objects, (unsigned long long)info.offload_bytes);
    printf("data file bytes: %llu\n", (unsigned long long)info.data_bytes);
    printf("dataset bytes: %llu\n", (unsigned long long)info.total_bytes);
    printf("columns (value bytes before encoding, nulls):\n");
    for (size_t i = 0; i < info.n_columns; i++)
        printf("  %-16s %12llu %8llu\n", info.columns[i].name, (unsigned long long)info.columns[i].value_bytes,
               (unsigned long long)info.columns[i].null_count);
    printf("encoded bytes on disk per column (pages, compressed):\n");
    for (size_t i = 0; i < info.n_columns; i++)
        printf("  %-16s %12llu bytes\n", info.columns[i].name, (unsigned long long)info.columns[i].encoded_bytes);
    pch_cj_info_dispose(&info);
    rc = PCH_CLI_EXIT_OK;
done:
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}
