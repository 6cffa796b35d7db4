/* pchronicle get ROOT KEY [--compact]: one trajectory of a Storyline root (with its
** embedded subagents) as ATIF JSON on stdout (docs/storyline.md §4, §5). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "storyline_cli.h"
#include "pchronicle/storyline.h"

static const char k_usage[] =
    "usage: pchronicle get ROOT TRAJECTORY_KEY [--compact]\n"
    "Print one trajectory of a Storyline root as an ATIF document (pretty JSON; --compact:\n"
    "one line). Exit status 1 when the key is not in the root.\n";

int pch_cmd_get(int argc, char **argv)
{
    bool compact = false;
    const pch_cli_opt opts[] = { { "compact", false, NULL, &compact } };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_ctx *ctx = NULL;
    pch_error err;
    char *out = NULL;
    size_t len = 0;
    int n_pos = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, 1, pos, &n_pos, k_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    if (n_pos != 2) { rc = pch_cli_usage_error(k_usage, "expected ROOT and TRAJECTORY_KEY"); goto done; }
    rc = PCH_CLI_EXIT_ERROR;
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (pch_storyline_get(ctx, pos[0], pos[1], !compact, &out, &len, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (fwrite(out, 1, len, stdout) != len || (compact && putchar('\n') == EOF) || fflush(stdout) != 0) {
        pch_cli_error("cannot write to stdout");
        goto done;
    }
    rc = PCH_CLI_EXIT_OK;
done:
    if (ctx) pch_free(ctx, out);
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}
