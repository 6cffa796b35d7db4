/* pchronicle import --input-format atif --output-format storyline, export --output-format
** atif, inspect ROOT for Storyline roots (docs/storyline.md §5; RFC-0006 §2.1). The shared
** import/export/inspect verbs route here via pch_sl_cli_routes; everything Storyline-specific
** (options, messages) lives in this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "storyline_cli.h"
#include "pchronicle/compact_jsonl.h"
#include "pchronicle/storyline.h"

static const char k_import_usage[] =
    "usage: pchronicle import --input-format atif --output-format storyline --from DIR|DATASET\n"
    "                         --to ROOT [--assets embed|reference] [--strict] [--source-id ID]\n"
    "                         [--object-threshold BYTES] [--quiet]\n"
    "Project ATIF documents (a directory of *.json, or a compact-jsonl dataset whose records\n"
    "are ATIF documents) into the Storyline tables runs/steps/tool_calls/objects under ROOT.\n"
    "  --assets embed        store referenced images/audio in objects (default)\n"
    "  --assets reference    keep only their paths (the root is then not self-contained)\n"
    "  --strict              ATIF producer deviations reject the document\n"
    "  --source-id ID        TrajectoryKey.source_id (default: the input's base name)\n"
    "  --object-threshold N  values of at least N bytes go to objects (default 65536)\n";

static const char k_export_usage[] =
    "usage: pchronicle export --from ROOT --output-format atif --to DIR [--trajectory KEY]\n"
    "Write the trajectories of a Storyline root back as ATIF documents under DIR (original\n"
    "relative paths; embedded assets restored beside them).\n";

static const char k_inspect_usage[] = "usage: pchronicle inspect ROOT\n";

static bool opt_is(const char *a, const char *name, const char *next, const char *val)
{
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return false;
    if (a[n] == '=') return strcmp(a + n + 1, val) == 0;
    return a[n] == 0 && next && strcmp(next, val) == 0;
}

bool pch_sl_cli_routes(int argc, char **argv, pch_sl_cli_verb verb)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (opt_is(a, "--input-format", next, "atif") || opt_is(a, "--output-format", next, "storyline") ||
            opt_is(a, "--output-format", next, "atif") || opt_is(a, "--input-format", next, "storyline"))
            return true;
        if (verb == PCH_SL_CLI_EXPORT) {
            if (strcmp(a, "--from") == 0 && next && pch_storyline_is_root(next)) return true;
            if (strncmp(a, "--from=", 7) == 0 && pch_storyline_is_root(a + 7)) return true;
        }
        if (verb == PCH_SL_CLI_INSPECT && a[0] != '-' && pch_storyline_is_root(a)) return true;
    }
    return false;
}

int pch_cmd_storyline_import(int argc, char **argv)
{
    const char *from = NULL, *to = NULL, *ifmt = NULL, *ofmt = NULL, *assets = NULL, *sid = NULL, *thr = NULL;
    bool strict = false, quiet = false;
    const pch_cli_opt opts[] = {
        { "from", true, &from, NULL }, { "to", true, &to, NULL },
        { "input-format", true, &ifmt, NULL }, { "output-format", true, &ofmt, NULL },
        { "assets", true, &assets, NULL }, { "source-id", true, &sid, NULL },
        { "object-threshold", true, &thr, NULL },
        { "strict", false, NULL, &strict }, { "quiet", false, NULL, &quiet },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_storyline_import_options o = PCH_STORYLINE_IMPORT_OPTIONS_INIT;
    pch_storyline_stats st;
    pch_ctx *ctx = NULL;
    pch_error err;
    int n_pos = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_import_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_import_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    if (n_pos) { rc = pch_cli_usage_error(k_import_usage, "unexpected argument '%s'", pos[0]); goto done; }
    if (ifmt && strcmp(ifmt, "atif") != 0) { rc = pch_cli_usage_error(k_import_usage, "--input-format must be atif"); goto done; }
    if (ofmt && strcmp(ofmt, "storyline") != 0) { rc = pch_cli_usage_error(k_import_usage, "--output-format must be storyline"); goto done; }
    if (!from || !to) { rc = pch_cli_usage_error(k_import_usage, "missing --from or --to"); goto done; }
    if (assets && strcmp(assets, "embed") == 0) o.assets = PCH_STORYLINE_ASSETS_EMBED;
    else if (assets && strcmp(assets, "reference") == 0) o.assets = PCH_STORYLINE_ASSETS_REFERENCE;
    else if (assets) { rc = pch_cli_usage_error(k_import_usage, "--assets must be embed or reference"); goto done; }
    if (thr) {
        unsigned long long v;
        if (!pch_cli_parse_u64(thr, (unsigned long long)1 << 40, &v) || v == 0) {
            rc = pch_cli_usage_error(k_import_usage, "--object-threshold: expected a positive byte count");
            goto done;
        }
        o.object_threshold = (size_t)v;
    }
    o.strict = strict;
    o.source_id = sid;
    o.warnings = quiet ? NULL : stderr;
    rc = PCH_CLI_EXIT_ERROR;
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (pch_storyline_import(ctx, from, to, &o, &st, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (!quiet)
        printf("imported %zu documents (%zu rejected, %zu bytes): runs %zu, steps %zu, tool_calls %zu, objects %zu\n",
               st.documents, st.rejected, st.input_bytes, st.runs, st.steps, st.tool_calls, st.objects);
    rc = PCH_CLI_EXIT_OK;
done:
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}

int pch_cmd_storyline_export(int argc, char **argv)
{
    const char *from = NULL, *to = NULL, *ofmt = NULL, *ifmt = NULL, *traj = NULL;
    bool quiet = false;
    const pch_cli_opt opts[] = {
        { "from", true, &from, NULL }, { "to", true, &to, NULL },
        { "output-format", true, &ofmt, NULL }, { "input-format", true, &ifmt, NULL },
        { "trajectory", true, &traj, NULL }, { "quiet", false, NULL, &quiet },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_ctx *ctx = NULL;
    pch_error err;
    size_t n = 0;
    int n_pos = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_export_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_export_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    if (n_pos) { rc = pch_cli_usage_error(k_export_usage, "unexpected argument '%s'", pos[0]); goto done; }
    if (!from || !to) { rc = pch_cli_usage_error(k_export_usage, "missing --from or --to"); goto done; }
    if (pch_storyline_is_root(from) && ((ofmt && strcmp(ofmt, "atif") != 0) || (ifmt && strcmp(ifmt, "storyline") != 0))) {
        rc = pch_cli_usage_error(k_export_usage, "%s is a Storyline root: it exports as --output-format atif (or with no format flag)", from);
        goto done;
    }
    if (ofmt && strcmp(ofmt, "atif") != 0) { rc = pch_cli_usage_error(k_export_usage, "--output-format must be atif"); goto done; }
    if (ifmt && strcmp(ifmt, "storyline") != 0) { rc = pch_cli_usage_error(k_export_usage, "--input-format must be storyline"); goto done; }
    rc = PCH_CLI_EXIT_ERROR;
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (!pch_storyline_is_root(from)) {
        bool is_cj = false;
        if (pch_cj_probe(ctx, from, &is_cj, &err) == 0 && is_cj) {
            rc = pch_cli_usage_error(k_export_usage, "%s is a compact-jsonl dataset: it exports as --output-format compact-jsonl (or with no format flag)", from);
            goto done;
        }
        pch_error_clear(&err);
    }
    if (pch_storyline_export(ctx, from, to, traj, &n, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (!quiet) printf("exported %zu documents\n", n);
    rc = PCH_CLI_EXIT_OK;
done:
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}

int pch_cmd_storyline_inspect(int argc, char **argv)
{
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    pch_ctx *ctx = NULL;
    pch_error err;
    int n_pos = 0, rc;
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, NULL, 0, pos, &n_pos, k_inspect_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_inspect_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    if (n_pos != 1) { rc = pch_cli_usage_error(k_inspect_usage, "expected one ROOT"); goto done; }
    rc = PCH_CLI_EXIT_ERROR;
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { pch_cli_fail(&err); goto done; }
    if (pch_storyline_inspect(ctx, pos[0], stdout, &err) != 0) { pch_cli_fail(&err); goto done; }
    rc = PCH_CLI_EXIT_OK;
done:
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}
