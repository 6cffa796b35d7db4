/* pchronicle import --output-format compact-jsonl (RFC-0014 "Import"), plus the helpers
** shared by the compact-jsonl verbs (cj_cli.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cj_cli.h"
#include "storyline_cli.h"
#include "pchronicle/compact_jsonl.h"
#include "pchronicle/ctx.h"

volatile sig_atomic_t pch_cj_cli_stop;

static void on_signal(int sig)
{
    (void)sig;
    pch_cj_cli_stop = 1;
}

void pch_cj_cli_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;   /* library I/O keeps going; the cancel flag stops it */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int pch_cj_cli_take_columns(int *argc, char **argv, pch_cj_mapping **maps, size_t *n,
                            const char *usage)
{
    *maps = NULL;
    *n = 0;
    pch_cj_mapping *m = calloc((size_t)*argc + 1, sizeof *m);
    if (!m) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    int w = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--") == 0) {          /* keep the rest as is */
            while (i < *argc) argv[w++] = argv[i++];
            break;
        }
        if (strcmp(a, "--column") == 0) {
            if (i + 1 >= *argc) { free(m); return pch_cli_usage_error(usage, "option '--column' needs a value"); }
            v = argv[++i];
        } else if (strncmp(a, "--column=", 9) == 0) {
            v = a + 9;
        } else {
            argv[w++] = argv[i];
            continue;
        }
        char *eq = strchr(v, '=');
        if (!eq || eq == v) {
            free(m);
            return pch_cli_usage_error(usage, "--column %s: expected NAME=JSON_PATH", v);
        }
        *eq = '\0';                          /* argv strings are writable */
        m[*n].name = v;
        m[*n].path = eq + 1;
        (*n)++;
    }
    *argc = w;
    argv[w] = NULL;
    *maps = m;
    return 0;
}

void pch_cj_cli_progress_init(pch_cj_cli_progress *p, const char *verb, bool quiet)
{
    memset(p, 0, sizeof *p);
    p->on = !quiet && isatty(2);
    p->verb = verb;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    p->t0 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pch_cj_cli_progress_cb(void *payload, const pch_cj_progress *pr)
{
    pch_cj_cli_progress *p = payload;
    if (!p->on) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    if (now - p->last < 0.1 && pr->current) return;
    p->last = now;
    double el = now - p->t0, mb = (double)pr->bytes / 1e6, rate = el > 0 ? mb / el : 0;
    char eta[32] = "";
    if (pr->total_bytes > pr->bytes && rate > 0)
        snprintf(eta, sizeof eta, ", ETA %.0fs", ((double)(pr->total_bytes - pr->bytes) / 1e6) / rate);
    else if (pr->total_records > pr->records && pr->records > 0 && el > 0)
        snprintf(eta, sizeof eta, ", ETA %.0fs", (double)(pr->total_records - pr->records) * el / (double)pr->records);
    fprintf(stderr, "\r%s: %llu records, %llu files, %.1f MB, %.1f MB/s%s\033[K", p->verb,
            (unsigned long long)pr->records, (unsigned long long)pr->files, mb, rate, eta);
    p->drawn = true;
}

void pch_cj_cli_progress_end(pch_cj_cli_progress *p)
{
    if (p->on && p->drawn) fputs("\r\033[K", stderr);
    p->drawn = false;
}

static bool format_ok(const char *fmt, const char *usage)
{
    if (!fmt || strcmp(fmt, "compact-jsonl") == 0) return true;
    pch_cli_usage_error(usage, "unsupported format '%s' (supported: compact-jsonl)", fmt);
    return false;
}

/* Does `path` hold a compact-jsonl dataset? 1 yes, 0 no (why in why), -1 no such path. */
static int is_cj_dataset(const char *path, char *why, size_t cap)
{
    struct stat st;
    pch_ctx *ctx = NULL;
    pch_error err;
    bool is_cj = false;
    int rc;
    if (stat(path, &st) != 0) return -1;
    pch_error_clear(&err);
    rc = pch_ctx_new(&ctx, NULL, NULL, &err);
    if (rc == 0) rc = pch_cj_probe(ctx, path, &is_cj, &err);
    pch_ctx_free(ctx);
    if (rc == 0 && is_cj) return 1;
    snprintf(why, cap, "%s", rc < 0 ? err.msg : "a Lance dataset without pchronicle.format metadata");
    return 0;
}

bool pch_cj_cli_mirror_ok(const char *mirror)
{
    char why[600];
    if (is_cj_dataset(mirror, why, sizeof why) != 0) return true;
    pch_cli_error("--mirror %s exists and is not a compact-jsonl dataset (%s); refusing to replace it", mirror, why);
    return false;
}

bool pch_cj_cli_formats_ok(const char *ofmt, const char *ifmt, const char *want,
                           const char *dataset, const char *usage)
{
    char why[600];
    if (!format_ok(ofmt, usage) || !format_ok(ifmt, usage)) return false;
    if (ofmt || ifmt) return true;
    if (!dataset) {
        pch_cli_usage_error(usage, "missing %s compact-jsonl", want);
        return false;
    }
    /* no format flag: the dataset says what it is (a new one will be compact-jsonl) */
    if (is_cj_dataset(dataset, why, sizeof why) != 0) return true;
    pch_cli_usage_error(usage, "cannot tell the format of %s (%s); pass %s", dataset, why, want);
    return false;
}

bool pch_cj_cli_import_options(pch_cj_options *o, const pch_cj_cli_import_args *a,
                               pch_cj_mapping *maps, size_t n_maps, const char *usage)
{
    const char *thr = a->thr, *maxrec = a->maxrec, *bb = a->bb, *level = a->level;
    unsigned long long v;
    if (thr) {
        if (!pch_cli_parse_u64(thr, UINT64_MAX, &v)) {
            pch_cli_usage_error(usage, "--offload-threshold: not a number: %s", thr);
            return false;
        }
        o->offload_threshold = v;
    }
    if (maxrec) {
        if (!pch_cli_parse_u64(maxrec, SIZE_MAX, &v) || v == 0) {
            pch_cli_usage_error(usage, "--max-record-bytes: not a positive number: %s", maxrec);
            return false;
        }
        o->max_record_bytes = (size_t)v;
    }
    if (bb) {
        if (!pch_cli_parse_u64(bb, SIZE_MAX, &v) || v == 0) {
            pch_cli_usage_error(usage, "--batch-bytes: not a positive number: %s", bb);
            return false;
        }
        o->batch_bytes = (size_t)v;
    }
    if (level) {
        if (!pch_cli_parse_u64(level, PCH_CJ_MAX_ZSTD_LEVEL, &v) || v == 0) {
            pch_cli_usage_error(usage, "--zstd-level: not a level from 1 to %d: %s",
                                PCH_CJ_MAX_ZSTD_LEVEL, level);
            return false;
        }
        o->zstd_level = (int)v;
    }
    if (a->idx) {
        if (!pch_cli_parse_u64(a->idx, SIZE_MAX, &v) || v == 0) {
            pch_cli_usage_error(usage, "--id-index-bytes: not a positive number: %s", a->idx);
            return false;
        }
        o->id_index_bytes = (size_t)v;
    }
    o->mappings = maps;
    o->n_mappings = n_maps;
    o->cancel = &pch_cj_cli_stop;
    return true;
}

int pch_cj_cli_run(pch_cj_cli_op op, const char *verb, pch_ctx *ctx, const char *from,
                   const char *to, pch_cj_options *o, bool quiet, const char *replace_flag,
                   pch_cj_stats *st)
{
    pch_cj_cli_progress prog;
    pch_error err;
    pch_cj_cli_progress_init(&prog, verb, quiet);
    o->progress = pch_cj_cli_progress_cb;
    o->payload = &prog;
    pch_error_clear(&err);
    int r = op(ctx, from, to, o, st, &err);
    pch_cj_cli_progress_end(&prog);
    o->progress = NULL;   /* prog lives on this stack frame only */
    o->payload = NULL;
    if (r == PCH_EEXISTS && replace_flag && o->mode == PCH_CJ_CREATE) {
        pch_cli_error("%s already exists; pass %s to replace it", to, replace_flag);
        return PCH_CLI_EXIT_ERROR;
    }
    if (r < 0) {
        pch_cli_fail(&err);
        return r == PCH_ECANCELED ? PCH_CLI_EXIT_INTERRUPTED : PCH_CLI_EXIT_ERROR;
    }
    return PCH_CLI_EXIT_OK;
}

static const char k_usage[] =
    "usage: pchronicle import --from ROOT --to DATASET --output-format compact-jsonl\n"
    "                         [--column NAME=JSON_PATH]... [--offload-threshold BYTES]\n"
    "                         [--max-record-bytes BYTES] [--batch-bytes BYTES] [--zstd-level N]\n"
    "                         [--id-index-bytes BYTES] [--yes] [--quiet]\n"
    "\n"
    "Import a .json/.jsonl/.ndjson file or directory tree into a new Lance dataset\n"
    "(RFC-0014 compact JSONL; docs/compact-jsonl.md). The dataset is written beside\n"
    "DATASET and published atomically; nothing is published when any input is invalid.\n"
    "\n"
    "  --from ROOT               input file or directory (walked recursively, no symlinks)\n"
    "  --to DATASET              dataset directory to create\n"
    "  --output-format F         compact-jsonl (--input-format compact-jsonl also selects it)\n"
    "  --column NAME=JSON_PATH   id=PATH / timestamp=PATH override $.id / $.timestamp; other\n"
    "                            names add a nullable JSON column (paths: $, .name, [digits])\n"
    "  --offload-threshold N     records of N bytes or more go to objects/<blake3> (0 = off)\n"
    "  --max-record-bytes N      largest accepted record (default 1 GiB)\n"
    "  --batch-bytes N           bytes buffered per Lance write (default 4 MiB)\n"
    "  --zstd-level N            zstd level of the dataset's pages, 1..22 (default 5; higher\n"
    "                            is smaller and slower: docs/compact-jsonl.md)\n"
    "  --id-index-bytes N        memory of the duplicate-id check before it spills sorted runs\n"
    "                            to a temporary file beside DATASET (default 64 MiB)\n"
    "  --yes                     replace DATASET if it exists (atomic)\n"
    "  --append                  refused: compact-jsonl v1 has no append\n"
    "  --quiet                   no progress and no summary\n";

int pch_cmd_import(int argc, char **argv)
{
    if (pch_sl_cli_routes(argc, argv, PCH_SL_CLI_IMPORT)) return pch_cmd_storyline_import(argc, argv);
    pch_cj_mapping *maps = NULL;
    size_t n_maps = 0;
    int rc = pch_cj_cli_take_columns(&argc, argv, &maps, &n_maps, k_usage);
    if (rc) return rc;
    const char *from = NULL, *to = NULL, *ofmt = NULL, *ifmt = NULL, *thr = NULL, *maxrec = NULL, *bb = NULL;
    const char *level = NULL, *idx = NULL;
    bool yes = false, quiet = false, append = false;
    const pch_cli_opt opts[] = {
        { "from", true, &from, NULL }, { "to", true, &to, NULL },
        { "output-format", true, &ofmt, NULL }, { "input-format", true, &ifmt, NULL },
        { "offload-threshold", true, &thr, NULL }, { "max-record-bytes", true, &maxrec, NULL },
        { "batch-bytes", true, &bb, NULL }, { "zstd-level", true, &level, NULL },
        { "id-index-bytes", true, &idx, NULL },
        { "yes", false, NULL, &yes }, { "quiet", false, NULL, &quiet }, { "append", false, NULL, &append },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int n_pos = 0;
    if (!pos) { free(maps); pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    pch_ctx *ctx = NULL;
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    rc = PCH_CLI_EXIT_USAGE;
    if (n_pos) { pch_cli_usage_error(k_usage, "unexpected argument '%s'", pos[0]); goto done; }
    if (!pch_cj_cli_formats_ok(ofmt, ifmt, "--output-format", NULL, k_usage)) goto done;
    if (!from || !to) { pch_cli_usage_error(k_usage, "--from and --to are required"); goto done; }
    if (append) {
        pch_cli_usage_error(k_usage, "--append is not supported by compact-jsonl v1: every import is a complete snapshot (use --yes to replace)");
        goto done;
    }
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    pch_cj_cli_import_args ia = { thr, maxrec, bb, level, idx };
    if (!pch_cj_cli_import_options(&o, &ia, maps, n_maps, k_usage)) goto done;
    o.mode = yes ? PCH_CJ_REPLACE : PCH_CJ_CREATE;
    pch_cj_cli_signals();
    pch_error err;
    pch_error_clear(&err);
    if (pch_ctx_new(&ctx, NULL, NULL, &err) < 0) { rc = pch_cli_fail(&err); goto done; }
    pch_cj_stats st;
    if ((rc = pch_cj_cli_run(pch_cj_import, "import", ctx, from, to, &o, quiet, "--yes", &st)) != PCH_CLI_EXIT_OK)
        goto done;
    if (!quiet)
        printf("imported %llu records from %llu files into %s (%llu offloaded)\n",
               (unsigned long long)st.records, (unsigned long long)st.files, to,
               (unsigned long long)st.offloaded_rows);
    rc = PCH_CLI_EXIT_OK;
done:
    pch_ctx_free(ctx);
    free(pos);
    free(maps);
    return rc;
}
