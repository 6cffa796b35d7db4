/* pchronicle-vortex: the Vortex side's program (RFC-0006 §3.6: the pchronicle program links no
** Vortex code). Subcommands: convert, dump, inspect, check (Vortex files); build, get,
** export, verify, inspect, sql, rl, sft, bench-get, bench-sql, benchmark (the projection). Exit codes: 0 success,
** 1 failure (message on stderr), 2 usage error. */
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "pchronicle/io.h"
#include "vx_cli.h"

static const char usage_text[] =
    "usage: pchronicle-vortex <command> [options]\n"
    "  convert --from LANCE_DATASET|FILE.jsonl --to FILE.vortex [--schema SCHEMA|@FILE]\n"
    "          [--chunk-rows N] [--chunk-by COLUMN] [--zone-len N] [--no-compress]\n"
    "          [--no-dict] [--report]\n"
    "  dump FILE.vortex [--columns a,b.c] [--rows A..B]\n"
    "  inspect FILE.vortex\n"
    "  check FILE.vortex      decode every segment with full validation\n"
    "trajectory projection (RFC-0006; docs/vortex-projection.md):\n"
    "  build --from DIR|COMPACT_JSONL_DATASET|STORYLINE_ROOT --to ROOT [--assets embed|reference] [sizes]\n"
    "  sync --from DIR|COMPACT_JSONL_DATASET|STORYLINE_ROOT --to ROOT   re-project only what changed\n"
    "  compact ROOT [--if-needed] [triggers]   rewrite the live rows as level-1 files (§12.3)\n"
    "  get ROOT KEY [--preview] [--compact] [--stats] [--snapshot ID]\n"
    "  export --from ROOT --output-format atif --to DIR [--stats] [--snapshot ID]\n"
    "  verify ROOT [--snapshot ID]   every check of RFC-0006 §15; exit 1 with one line per finding\n"
    "  snapshots ROOT [--json]       every snapshot (manifest) of ROOT, oldest first, CURRENT marked\n"
    "  repair ROOT --manifest ID     rebind a lost or damaged CURRENT to snapshot ID, verified first\n"
    "  pin ROOT --snapshot ID --name NAME | unpin ROOT --name NAME   keep a snapshot through vacuum\n"
    "  vacuum ROOT [--dry-run] [--keep N] [--min-age D] [--grace D]   remove what no kept snapshot reaches\n"
    "  inspect ROOT           snapshot, files, clusters, lanes (encodings, bytes), write metrics\n"
    "  sql ROOT \"SQL\" [--format table|csv|jsonl] [--engine auto|sqlite]   runs, steps, tool_calls, observation_results\n"
    "  rl ROOT [--format jsonl|binary|count] [--to FILE] [filters]   RL steps (token lanes)\n"
    "  sft ROOT [--format atif|messages|count] [--to FILE] [filters]   SFT examples (messages: OpenAI chat)\n"
    "  bench-get ROOT --keys FILE [--warmup N] [--repeat R] [--preview] [--out-dir DIR]\n"
    "                         warm in-process point-read latencies (benchmarks)\n"
    "  bench-sql ROOT --queries FILE [--repeat N] [--engine auto|sqlite]\n"
    "                         warm in-process SQL latencies (benchmarks)\n"
    "  benchmark ROOT [--keys N] [--repeat R] [--cold N] [--storyline SL_ROOT] [--json FILE]\n"
    "                         the RFC-0006 §22.3 query matrix, warm and cold (p50/p95/p99, CPU, RSS, bytes, GETs)\n"
    "every command takes --help\n";

int vx_fail(const char *what, const pch_error *err)
{
    fprintf(stderr, "pchronicle-vortex: %s: %s\n", what, err && err->msg[0] ? err->msg : "failed");
    return VX_EXIT_FAIL;
}

double vx_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vx_print_s3_stats(void)
{
    pch_store_stats o;
    pch_store_process_stats(&o);
    if (o.requests)
        fprintf(stderr, "stats: s3 gets=%" PRIu64 " ranges=%" PRIu64 " bytes_requested=%" PRIu64 " bytes_useful=%" PRIu64
                        " requests=%" PRIu64 " retries=%" PRIu64 " cache_hits=%" PRIu64 "\n",
                o.gets, o.ranges, o.bytes_requested, o.bytes_useful, o.requests, o.retries, o.cache_hits);
}

int vx_usage(const char *msg)
{
    if (msg) fprintf(stderr, "pchronicle-vortex: %s\n", msg);
    fputs(usage_text, stderr);
    return VX_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    pch_ctx *ctx = NULL;
    pch_error err;
    int rc;
    if (argc < 2) return vx_usage(NULL);
#ifdef __GLIBC__
    /* Scans decode every cluster into arrays of a few hundred KiB, freed before the next.
    ** glibc's defaults give such blocks back to the kernel (mmap, heap trim) and every new
    ** page then faults in again: measured, an RL read of `rl` spent a third of its time in
    ** those faults (docs/training.md). Keep freed memory in the heap for reuse instead. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage_text, stdout);
        return VX_EXIT_OK;
    }
    if (pch_ctx_new(&ctx, NULL, NULL, &err) < 0) return vx_fail("context", &err);
    if (strcmp(argv[1], "convert") == 0) rc = vx_cmd_convert(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "dump") == 0) rc = vx_cmd_dump(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "inspect") == 0 && argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        fputs("usage: pchronicle-vortex inspect FILE.vortex|ROOT\n"
              "  A Vortex file: versions, segments, layout tree, encodings and bytes per lane, zone maps.\n"
              "  A projection root: snapshot, files, clusters, per-lane encodings and bytes (RFC-0006 §20.1).\n", stdout);
        rc = VX_EXIT_OK;
    }
    else if (strcmp(argv[1], "inspect") == 0 && argc == 3 && vx_is_projection_root(argv[2])) rc = vx_cmd_inspect_root(ctx, argv[2]);
    else if (strcmp(argv[1], "inspect") == 0) rc = vx_cmd_inspect(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "build") == 0) rc = vx_cmd_build(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "sync") == 0) rc = vx_cmd_sync(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "compact") == 0) rc = vx_cmd_compact(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "get") == 0) rc = vx_cmd_get(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "export") == 0) rc = vx_cmd_export(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "verify") == 0) rc = vx_cmd_verify(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "snapshots") == 0) rc = vx_cmd_snapshots(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "repair") == 0) rc = vx_cmd_repair(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "pin") == 0) rc = vx_cmd_pin(ctx, argc - 2, argv + 2, false);
    else if (strcmp(argv[1], "unpin") == 0) rc = vx_cmd_pin(ctx, argc - 2, argv + 2, true);
    else if (strcmp(argv[1], "vacuum") == 0) rc = vx_cmd_vacuum(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "sql") == 0) rc = vx_cmd_sql(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "rl") == 0) rc = vx_cmd_rl(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "sft") == 0) rc = vx_cmd_sft(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "bench-get") == 0) rc = vx_cmd_bench_get(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "bench-sql") == 0) rc = vx_cmd_bench_sql(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "benchmark") == 0) rc = vx_cmd_benchmark(ctx, argc - 2, argv + 2);
    else if (strcmp(argv[1], "check") == 0) rc = vx_cmd_check(ctx, argc - 2, argv + 2);
    else {
        fprintf(stderr, "pchronicle-vortex: unknown command '%s'\n", argv[1]);
        rc = vx_usage(NULL);
    }
    pch_ctx_free(ctx);
    return rc;
}
