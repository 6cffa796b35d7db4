/* pchronicle export --output-format compact-jsonl (RFC-0014 "Export"): restore every
** source file of a compact-jsonl dataset byte for byte. No filtering: --source, ID
** filters and --where are refused because they would break the lossless mirror. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cj_cli.h"
#include "storyline_cli.h"
#include "pchronicle/compact_jsonl.h"

static const char k_usage[] =
    "usage: pchronicle export --from DATASET --to DIR [--output-format compact-jsonl]\n"
    "                         [--overwrite] [--quiet]\n"
    "\n"
    "Restore the files of a compact-jsonl dataset into DIR, byte for byte. The format\n"
    "and schema are verified before anything is created; DIR is written beside its final\n"
    "name and published atomically.\n"
    "\n"
    "  --from DATASET        compact-jsonl Lance dataset\n"
    "  --to DIR              output directory (must not exist unless --overwrite)\n"
    "  --output-format F     compact-jsonl (optional: the dataset's metadata says it;\n"
    "                        a Storyline root is exported as ATIF, see --output-format atif)\n"
    "  --overwrite           replace DIR atomically if it exists\n"
    "  --quiet               no progress and no summary\n"
    "  (--source, --id, --ids and --where are refused: export is a lossless mirror)\n";

int pch_cmd_export(int argc, char **argv)
{
    if (pch_sl_cli_routes(argc, argv, PCH_SL_CLI_EXPORT)) return pch_cmd_storyline_export(argc, argv);
    const char *from = NULL, *to = NULL, *ofmt = NULL, *ifmt = NULL, *source = NULL, *id = NULL,
               *ids = NULL, *where = NULL;
    bool overwrite = false, quiet = false;
    const pch_cli_opt opts[] = {
        { "from", true, &from, NULL }, { "to", true, &to, NULL },
        { "output-format", true, &ofmt, NULL }, { "input-format", true, &ifmt, NULL },
        { "source", true, &source, NULL }, { "id", true, &id, NULL }, { "ids", true, &ids, NULL },
        { "where", true, &where, NULL },
        { "overwrite", false, NULL, &overwrite }, { "quiet", false, NULL, &quiet },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    int n_pos = 0, rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    pch_ctx *ctx = NULL;
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    rc = PCH_CLI_EXIT_USAGE;
    if (n_pos) { pch_cli_usage_error(k_usage, "unexpected argument '%s'", pos[0]); goto done; }
    if (!from || !to) { pch_cli_usage_error(k_usage, "--from and --to are required"); goto done; }
    if (!pch_cj_cli_formats_ok(ofmt, ifmt, "--output-format", from, k_usage)) goto done;
    const char *filt = source ? "--source" : id ? "--id" : ids ? "--ids" : where ? "--where" : NULL;
    if (filt) {
        pch_cli_usage_error(k_usage, "%s is not supported by compact-jsonl export: filtering would break the lossless mirror", filt);
        goto done;
    }
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    o.mode = overwrite ? PCH_CJ_REPLACE : PCH_CJ_CREATE;
    o.cancel = &pch_cj_cli_stop;
    pch_cj_cli_signals();
    pch_error err;
    pch_error_clear(&err);
    if (pch_ctx_new(&ctx, NULL, NULL, &err) < 0) { rc = pch_cli_fail(&err); goto done; }
    pch_cj_stats st;
    if ((rc = pch_cj_cli_run(pch_cj_export, "export", ctx, from, to, &o, quiet, "--overwrite", &st)) != PCH_CLI_EXIT_OK)
        goto done;
    if (!quiet)
        printf("exported %llu records into %llu files in %s\n", (unsigned long long)st.records,
               (unsigned long long)st.files, to);
    rc = PCH_CLI_EXIT_OK;
done:
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}
