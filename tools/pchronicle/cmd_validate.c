/* pchronicle validate --input-format atif [--strict] [--json] PATH...: an ATIF linter
** (specs/atif.md §3; docs/atif.md). One line per finding on stdout; exit 0 when no error
** was found (warnings allowed), 1 when at least one error was found, 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pchronicle/atif.h"

static const char k_usage[] =
    "usage: pchronicle validate --input-format atif [--strict] [--json] PATH...\n"
    "  PATH                  an ATIF .json file or a directory (walked for *.json)\n"
    "  --strict              producer deviations are errors (Harbor-equivalent)\n"
    "  --json                one JSON object per finding\n"
    "exit status: 0 no errors, 1 errors found, 2 usage\n";

int pch_cmd_validate(int argc, char **argv)
{
    const char *ifmt = NULL;
    bool strict = false, json = false;
    pch_cli_opt opts[] = {
        { "input-format", true, &ifmt, NULL },
        { "strict", false, NULL, &strict },
        { "json", false, NULL, &json },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
    int n_pos = 0, rc, exit_code = PCH_CLI_EXIT_ERROR;
    pch_ctx *ctx = NULL;
    pch_error err;
    size_t n_errors = 0;
    pch_atif_lint_options lo = PCH_ATIF_LINT_OPTIONS_INIT;

    pch_error_clear(&err);
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); exit_code = PCH_CLI_EXIT_OK; goto done; }
    if (rc != 0) { exit_code = rc; goto done; }
    if (!ifmt || strcmp(ifmt, "atif") != 0) {
        exit_code = pch_cli_usage_error(k_usage, "validate needs --input-format atif");
        goto done;
    }
    if (n_pos == 0) { exit_code = pch_cli_usage_error(k_usage, "no PATH given"); goto done; }
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { exit_code = pch_cli_fail(&err); goto done; }
    lo.strict = strict;
    lo.json = json;
    if (pch_atif_lint(ctx, pos, (size_t)n_pos, &lo, stdout, &n_errors, &err) != 0) {
        exit_code = pch_cli_fail(&err);
        goto done;
    }
    if (fflush(stdout) != 0) { pch_cli_error("writing output failed"); goto done; }
    exit_code = n_errors ? PCH_CLI_EXIT_ERROR : PCH_CLI_EXIT_OK;
done:
    pch_ctx_free(ctx);
    free(pos);
    return exit_code;
}
