/* pchronicle get ROOT KEY [--compact] [--stats]: one trajectory of a Storyline root (with its
** embedded subagents) as ATIF JSON on stdout (docs/storyline.md §4, §5). --trajectory-key,
** --run-id and --session-id say which identity the key is (RFC-0006 §13.4); a run or session
** id shared by several documents prints each and exits 3 with the list of candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "storyline_cli.h"
#include "pchronicle/storyline.h"

#define GET_EXIT_SEVERAL 3

static const char k_usage[] =
    "usage: pchronicle get ROOT TRAJECTORY_KEY [--compact] [--stats]\n"
    "       pchronicle get ROOT (--trajectory-key K | --run-id R | --session-id S) [--compact] [--stats]\n"
    "       pchronicle get ROOT --run-id R --trajectory-key K [--compact] [--stats]\n"
    "Print one trajectory of a Storyline root as an ATIF document (pretty JSON; --compact:\n"
    "one line). A plain key is a trajectory key, or else a producer id (the trajectories\n"
    "whose key is KEY@<document path>: their trajectory_id, or a document root's session_id);\n"
    "--trajectory-key is a trajectory key only; --run-id and\n"
    "--session-id name the document roots with that run id or producer session id; --run-id\n"
    "with --trajectory-key names the trajectory K of run R. Several trajectories: each is\n"
    "printed, a list on stderr names the flags that select each alone, and the exit status\n"
    "is 3. Exit status 1 when the key is not in the root.\n"
    "  --stats       print the bytes read from Lance data files and the time to stderr (on\n"
    "                s3://, a second line: GETs, ranges and bytes requested)\n";

static int print_one(pch_ctx *ctx, const char *root, const char *run_id, const char *key, bool compact,
                     pch_error *err)
{
    char *out = NULL;
    size_t len = 0;
    int rc = PCH_CLI_EXIT_ERROR;
    if (pch_storyline_get_in_run(ctx, root, run_id, key, !compact, &out, &len, err) != 0) return pch_cli_fail(err);
    if (fwrite(out, 1, len, stdout) != len || (compact && putchar('\n') == EOF) || fflush(stdout) != 0)
        pch_cli_error("cannot write to stdout");
    else
        rc = PCH_CLI_EXIT_OK;
    pch_free(ctx, out);
    return rc;
}

/* --run-id R --trajectory-key K: only run R's trajectory K (in_run NULL: every match). */
static bool selected(const pch_storyline_match *m, const char *in_run)
{
    return !in_run || strcmp(m->run_id, in_run) == 0;
}

int pch_cmd_get(int argc, char **argv)
{
    bool compact = false, stats = false;
    const double t0 = pch_cli_now();
    const char *by[3] = { NULL, NULL, NULL };   /* indexed by pch_storyline_key_kind (the flags) */
    const pch_cli_opt opts[] = {
        { "compact", false, NULL, &compact },
        { "stats", false, NULL, &stats },
        { "trajectory-key", true, &by[PCH_STORYLINE_KEY_TRAJECTORY], NULL },
        { "run-id", true, &by[PCH_STORYLINE_KEY_RUN], NULL },
        { "session-id", true, &by[PCH_STORYLINE_KEY_SESSION], NULL },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_storyline_key_kind as = PCH_STORYLINE_KEY_TRAJECTORY;
    pch_storyline_match *m = NULL;
    const char *key = NULL, *in_run = NULL;
    pch_ctx *ctx = NULL;
    pch_error err;
    size_t n = 0, kept = 0;
    int n_pos = 0, n_keys = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    n_keys = n_pos == 2;
    for (int k = 0; k < 3; k++) n_keys += by[k] != NULL;
    if (n_pos == 2 && !by[PCH_STORYLINE_KEY_TRAJECTORY]) by[PCH_STORYLINE_KEY_TRAJECTORY] = pos[1];
    if (n_keys == 2 && by[PCH_STORYLINE_KEY_RUN] && by[PCH_STORYLINE_KEY_TRAJECTORY] && !by[PCH_STORYLINE_KEY_SESSION]) {
        in_run = by[PCH_STORYLINE_KEY_RUN];   /* the pair (run_id, trajectory_key) */
        n_keys = 1;
    }
    if (n_pos < 1 || n_pos > 2 || n_keys != 1) {
        rc = pch_cli_usage_error(k_usage, n_keys > 1 ? "one key only (or --run-id with --trajectory-key)"
                                                     : "expected ROOT and one key");
        goto done;
    }
    if (by[PCH_STORYLINE_KEY_SESSION]) as = PCH_STORYLINE_KEY_SESSION;
    else if (by[PCH_STORYLINE_KEY_RUN] && !in_run) as = PCH_STORYLINE_KEY_RUN;
    key = by[as];
    rc = PCH_CLI_EXIT_ERROR;
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { pch_cli_fail(&err); goto done; }
    rc = pch_storyline_find(ctx, pos[0], as, key, &m, &n, &err);
    if (rc == PCH_ENOTFOUND && n_pos == 2) {
        pch_error e2;       /* a plain key that is no trajectory key: a producer id */
        if (pch_storyline_find(ctx, pos[0], PCH_STORYLINE_KEY_PRODUCER_ID, key, &m, &n, &e2) == PCH_OK) rc = PCH_OK;
    }
    if (rc != PCH_OK) { rc = PCH_CLI_EXIT_ERROR; pch_cli_fail(&err); goto done; }
    rc = PCH_CLI_EXIT_ERROR;
    for (size_t i = 0; i < n; i++) kept += selected(&m[i], in_run);
    if (kept == 0) {
        pch_cli_error("storyline: no trajectory '%s' in run '%s'", key, in_run);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (selected(&m[i], in_run) &&
            (rc = print_one(ctx, pos[0], m[i].run_id, m[i].trajectory_key, compact, &err)) != PCH_CLI_EXIT_OK)
            goto done;
    if (kept > 1) {
        fprintf(stderr, "pchronicle get: '%s' matches %zu trajectories; name one with the flags below\n", key, kept);
        for (size_t i = 0; i < n; i++) {
            if (!selected(&m[i], in_run)) continue;
            fprintf(stderr, "  candidate: run_id=%s trajectory_key=%s document=%s (alone: ", m[i].run_id,
                    m[i].trajectory_key, m[i].doc_path);
            if (m[i].key_count != 1) fprintf(stderr, "--run-id %s ", m[i].run_id);
            fprintf(stderr, "--trajectory-key %s)\n", m[i].trajectory_key);
        }
        rc = GET_EXIT_SEVERAL;
    }
done:
    if (stats && ctx) pch_cli_print_stats(t0);
    if (ctx) pch_storyline_matches_free(ctx, m, n);
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}
