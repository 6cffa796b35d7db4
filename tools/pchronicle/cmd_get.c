/* pchronicle get ROOT KEY [--compact]: one trajectory of a Storyline root (with its
** embedded subagents) as ATIF JSON on stdout (docs/storyline.md §4, §5). --trajectory-key,
** --run-id and --session-id say which identity the key is (RFC-0006 §13.4); a run or session
** id shared by several documents prints each and exits 3 with the list of candidates. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "storyline_cli.h"
#include "pchronicle/storyline.h"

#define GET_EXIT_SEVERAL 3

static const char k_usage[] =
    "usage: pchronicle get ROOT TRAJECTORY_KEY [--compact]\n"
    "       pchronicle get ROOT (--trajectory-key K | --run-id R | --session-id S) [--compact]\n"
    "Print one trajectory of a Storyline root as an ATIF document (pretty JSON; --compact:\n"
    "one line). A plain key is a trajectory key, as is --trajectory-key; --run-id and\n"
    "--session-id name the document roots with that run id or producer session id. Several\n"
    "documents: each is printed, a list on stderr names the --trajectory-key that selects\n"
    "each, and the exit status is 3. Exit status 1 when the key is not in the root.\n";

static int print_one(pch_ctx *ctx, const char *root, const char *key, bool compact, pch_error *err)
{
    char *out = NULL;
    size_t len = 0;
    int rc = PCH_CLI_EXIT_ERROR;
    if (pch_storyline_get(ctx, root, key, !compact, &out, &len, err) != 0) return pch_cli_fail(err);
    if (fwrite(out, 1, len, stdout) != len || (compact && putchar('\n') == EOF) || fflush(stdout) != 0)
        pch_cli_error("cannot write to stdout");
    else
        rc = PCH_CLI_EXIT_OK;
    pch_free(ctx, out);
    return rc;
}

int pch_cmd_get(int argc, char **argv)
{
    bool compact = false;
    const char *by[3] = { NULL, NULL, NULL };   /* indexed by pch_storyline_key_kind */
    const pch_cli_opt opts[] = {
        { "compact", false, NULL, &compact },
        { "trajectory-key", true, &by[PCH_STORYLINE_KEY_TRAJECTORY], NULL },
        { "run-id", true, &by[PCH_STORYLINE_KEY_RUN], NULL },
        { "session-id", true, &by[PCH_STORYLINE_KEY_SESSION], NULL },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_storyline_key_kind as = PCH_STORYLINE_KEY_TRAJECTORY;
    pch_storyline_match *m = NULL;
    const char *key = NULL;
    pch_ctx *ctx = NULL;
    pch_error err;
    size_t n = 0;
    int n_pos = 0, n_keys = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    for (int k = 0; k < 3; k++) if (by[k]) { as = (pch_storyline_key_kind)k; key = by[k]; n_keys++; }
    if (n_pos == 2) { key = pos[1]; n_keys++; }
    if (n_pos < 1 || n_pos > 2 || n_keys != 1) {
        rc = pch_cli_usage_error(k_usage, n_keys > 1 ? "one key only" : "expected ROOT and one key");
        goto done;
    }
    rc = PCH_CLI_EXIT_ERROR;
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (as == PCH_STORYLINE_KEY_TRAJECTORY) { rc = print_one(ctx, pos[0], key, compact, &err); goto done; }
    if (pch_storyline_find(ctx, pos[0], as, key, &m, &n, &err) != 0) { pch_cli_fail(&err); goto done; }
    for (size_t i = 0; i < n; i++)
        if ((rc = print_one(ctx, pos[0], m[i].trajectory_key, compact, &err)) != PCH_CLI_EXIT_OK) goto done;
    if (n > 1) {
        fprintf(stderr, "pchronicle get: '%s' matches %zu documents; name one with --trajectory-key\n", key, n);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "  candidate: run_id=%s trajectory_key=%s document=%s (alone: --trajectory-key %s)\n",
                    m[i].run_id, m[i].trajectory_key, m[i].doc_path, m[i].trajectory_key);
        rc = GET_EXIT_SEVERAL;
    }
done:
    if (ctx) pch_storyline_matches_free(ctx, m, n);
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}
