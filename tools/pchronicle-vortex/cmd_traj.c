/* pchronicle-vortex build / get / export / verify / inspect ROOT: the Vortex trajectory
** projection (RFC-0006 §5–§16; docs/vortex-projection.md). Public headers only. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pchronicle/atif.h"
#include "pchronicle/compact_jsonl.h"
#include "pchronicle/storyline.h"
#include "pchronicle-vortex/projection.h"
#include "pchronicle/io.h"
#include "vx_cli.h"

int vx_parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    if (!s || !*s || *s == '-') return -1;
    unsigned shift = 0;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno) return -1;
    if (*end == 'K' || *end == 'k') { shift = 10; end++; }
    else if (*end == 'M' || *end == 'm') { shift = 20; end++; }
    else if (*end == 'G' || *end == 'g') { shift = 30; end++; }
    if (shift && v > (~0ull >> shift)) return -1;   /* the suffix would overflow */
    v <<= shift;
    if (*end == 'i' && end[1] == 'B') end += 2;
    else if (*end == 'B') end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

static void print_stats(pch_vxp_snapshot *s)
{
    pch_vxp_query_stats q;
    pch_vxp_snapshot_stats(s, &q);
    fprintf(stderr, "stats: files_opened=%" PRIu64 " footer_cache_hits=%" PRIu64 " clusters_read=%" PRIu64
                    " segments_read=%" PRIu64 " read_requests=%" PRIu64 " bytes_read=%" PRIu64 " bytes_decoded=%" PRIu64
                    " cache_hits=%" PRIu64 " blobs_hydrated=%" PRIu64 " blob_bytes=%" PRIu64 "\n",
            q.files_opened, q.footer_cache_hits, q.clusters_read, q.segments_read, q.read_requests, q.bytes_read,
            q.bytes_decoded, q.cache_hits, q.blobs_hydrated, q.blob_bytes);
    /* where the bytes went: reads/bytes per stage of the read (docs/vortex-projection.md §8),
    ** and their total (a hydrated blob counted as one read): what issue 18's bound on a point
    ** read's bytes is measured against; external_content: what hydrating external values read
    ** (content directory shards, counted in `directory`, and the blobs), which that bound
    ** leaves aside */
    const pch_vxp_io_part *parts[] = { &q.current, &q.manifest, &q.directory, &q.footer, &q.segment_tables, &q.lanes };
    uint64_t tr = q.blobs_hydrated, tb = q.blob_bytes;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) { tr += parts[i]->reads; tb += parts[i]->bytes; }
    fprintf(stderr, "stats: io current=%" PRIu64 "/%" PRIu64 " manifest=%" PRIu64 "/%" PRIu64 " directory=%" PRIu64 "/%" PRIu64
                    " footer=%" PRIu64 "/%" PRIu64 " segment_tables=%" PRIu64 "/%" PRIu64 " lanes=%" PRIu64 "/%" PRIu64
                    " blobs=%" PRIu64 "/%" PRIu64 " segments_partial=%" PRIu64 " bytes_checked=%" PRIu64 " rows_checked=%" PRIu64
                    " total=%" PRIu64 "/%" PRIu64 " external_content=%" PRIu64 "/%" PRIu64 "\n",
            q.current.reads, q.current.bytes, q.manifest.reads, q.manifest.bytes, q.directory.reads, q.directory.bytes,
            q.footer.reads, q.footer.bytes, q.segment_tables.reads, q.segment_tables.bytes, q.lanes.reads, q.lanes.bytes,
            q.blobs_hydrated, q.blob_bytes, q.segments_partial, q.bytes_checked, q.rows_checked, tr, tb,
            q.content.reads + q.blobs_hydrated, q.content.bytes + q.blob_bytes);
    vx_print_s3_stats();
}

/* ------------------------------------------------------------------ build */

typedef struct build_st {
    pch_vxp_builder *b;
    pch_error doc_err;          /* why the builder refused a document */
    bool doc_failed;
    size_t findings;
    int quiet;
} build_st;

static int on_doc(pch_atif_doc *doc, void *payload)
{
    build_st *s = payload;
    if (pch_vxp_builder_add_doc(s->b, doc, 0, &s->doc_err) < 0) {
        s->doc_failed = true;
        return -1;
    }
    return 0;
}

/* Every file the walk reaches goes into the snapshot's document list with its size and
** time (a later sync reads only the files whose size or time changed, §11.2). */
static int on_select(const char *path, const char *rel, uint64_t bytes, int64_t mtime_ns, void *payload)
{
    build_st *s = payload;
    (void)path;
    if (pch_vxp_builder_note_file(s->b, rel, bytes, mtime_ns, &s->doc_err) < 0) {
        s->doc_failed = true;
        return PCH_ENOMEM;
    }
    return 1;
}

static int on_finding(const pch_atif_finding *f, void *payload)
{
    build_st *s = payload;
    if (f->severity == PCH_ATIF_ERROR) {
        s->findings++;
        if (s->findings <= 20) fprintf(stderr, "pchronicle-vortex: rejected %s:%s: %s\n", f->file, f->pointer, f->message);
    }
    return 0;
}

static const char build_usage[] =
    "usage: pchronicle-vortex build --from DIR|COMPACT_JSONL_DATASET|STORYLINE_ROOT --to ROOT\n"
    "         [--assets embed|reference] [--hot-max BYTES] [--cold-max BYTES] [--cluster-bytes BYTES]\n"
    "         [--frame-bytes BYTES] [--frame-rows N] [--frame-ratio N] [--zstd-dict BYTES] [--file-bytes BYTES] [--pack-bytes BYTES] [--dedup-min BYTES] [--dedup-index-bytes BYTES]\n"
    "         [--shard-rows N] [--source-id ID] [--partition NAME] [--prompt-prefix on|off]\n"
    "         [--threads N] [--quiet] [--json]\n"
    "  Projects every ATIF document of the input into a new snapshot of ROOT (RFC-0006 §11.1).\n"
    "  Sizes take K/M/G suffixes. Defaults: hot < 8K, cold < 256K (larger content goes to blob\n"
    "  packs), dedup-min 256 on a local ROOT (a value of at least 256 bytes seen twice before\n"
    "  in the build goes to a blob pack too, stored once; off on s3://, where each such value\n"
    "  costs a point read a request; 0 = off), cluster 4M logical bytes, zstd frames of 64K\n"
    "  cut at trajectory boundaries (a point read decompresses only its own; 0 = one frame per\n"
    "  lane chunk) or after 32 trajectories (--frame-rows; with each lane's per-trajectory\n"
    "  offsets plain, a point read's bytes follow its trajectory at any cluster size; 0 = by\n"
    "  bytes alone); a document of L logical bytes under 64K / 16 gets frames of at most\n"
    "  max(4K, 16 x L) (--frame-ratio; a point read of it reads frames of its own size; 0 = off),\n"
    "  no zstd dictionary (--zstd-dict N: a framed lane chunk of at least 64 x N\n"
    "  payload bytes trains a dictionary of at most N its frames share; it pays with 64M\n"
    "  clusters, where point reads cost more: docs/vortex-projection.md §3),\n"
    "  file 32M, pack 256M,\n"
    "  1024 directory rows per shard,\n"
    "  one lane-encoding thread per CPU (0) — the files are the same for any --threads.\n"
    "  --prompt-prefix off keeps every prompt_token_ids list plain (default on: prompts that\n"
    "  share long prefixes are stored as checkpoint + suffix where that saves >= 20 %).\n"
    "  --json prints the build's figures as one JSON object on stdout: counts, the snapshot's\n"
    "  bytes, bytes_written (every file the build wrote) and write_amplification (bytes_written\n"
    "  / the ATIF bytes read), seconds and encode_seconds (lane encoding, summed over threads).\n";

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

int vx_input_open(pch_ctx *ctx, const char *cmd, const char *from, vx_input *in)
{
    struct stat sb;
    char vers[4096];
    pch_error err;
    size_t n = 0;
    int rc;
    memset(in, 0, sizeof *in);
    snprintf(in->dir, sizeof in->dir, "%s", from);
    snprintf(vers, sizeof vers, "%s/_versions", from);
    if (!pch_storyline_is_root(from) && stat(vers, &sb) != 0) return 0;
    {
        const char *td = getenv("TMPDIR");
        snprintf(in->tmp, sizeof in->tmp, "%s/pchronicle-vortex-%s-XXXXXX", td && *td ? td : "/tmp", cmd);
    }
    if (!mkdtemp(in->tmp)) { fprintf(stderr, "pchronicle-vortex %s: temporary directory: %s\n", cmd, strerror(errno)); return -1; }
    in->made = true;
    /* restored into a subdirectory of our own: a compact-jsonl export locks its output's
    ** parent, which must not be a TMPDIR other writers share */
    snprintf(in->dir, sizeof in->dir, "%s/docs", in->tmp);
    pch_error_clear(&err);
    if (pch_storyline_is_root(from)) rc = pch_storyline_export(ctx, from, in->dir, NULL, &n, &err);
    else rc = pch_cj_export(ctx, from, in->dir, NULL, NULL, &err);
    if (rc < 0) { vx_fail(from, &err); vx_input_close(in, cmd); return -1; }
    return 0;
}

void vx_input_close(vx_input *in, const char *cmd)
{
    /* the restored copy is scratch: remove it whatever happened */
    if (in->made && nftw(in->tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "pchronicle-vortex %s: could not remove %s\n", cmd, in->tmp);
    in->made = false;
}

static bool build_option(const char *a)
{
    static const char *const known[] = { "--from", "--to", "--assets", "--hot-max", "--cold-max", "--cluster-bytes",
                                         "--frame-bytes", "--frame-rows", "--frame-ratio", "--zstd-dict", "--file-bytes", "--pack-bytes", "--dedup-min", "--dedup-index-bytes", "--shard-rows",
                                         "--threads", "--source-id", "--partition", "--prompt-prefix" };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) if (strcmp(a, known[i]) == 0) return true;
    return false;
}

/* build --json: the figures §22.2 asks of a build — what it read, what it wrote (write
** amplification = bytes written / ATIF bytes read) and its encode time */
static void print_build_json(const pch_vxp_build_stats *st, size_t rejected)
{
    uint64_t total = st->data_bytes + st->blob_bytes + st->directory_bytes + st->manifest_bytes;
    printf("{\"snapshot_id\":\"%s\",\"documents\":%" PRIu64 ",\"rejected\":%zu,\"trajectories\":%" PRIu64 ",\"steps\":%" PRIu64
           ",\"tool_calls\":%" PRIu64 ",\"input_bytes\":%" PRIu64 ",\"logical_bytes\":%" PRIu64 ",\"bytes\":%" PRIu64
           ",\"data_bytes\":%" PRIu64 ",\"blob_bytes\":%" PRIu64 ",\"directory_bytes\":%" PRIu64 ",\"manifest_bytes\":%" PRIu64
           ",\"bytes_written\":%" PRIu64 ",\"write_amplification\":%.4f,\"data_files\":%" PRIu64 ",\"clusters\":%" PRIu64
           ",\"blobs\":%" PRIu64 ",\"dedup_hits\":%" PRIu64 ",\"seconds\":%.3f,\"encode_seconds\":%.3f}\n",
           st->snapshot_id, st->documents, rejected, st->trajectories, st->steps, st->tool_calls, st->input_bytes,
           st->logical_bytes, total, st->data_bytes, st->blob_bytes, st->directory_bytes, st->manifest_bytes,
           st->written_bytes, vx_write_amp(st->written_bytes, st->input_bytes),
           st->data_files, st->clusters, st->blobs, st->dedup_hits, st->seconds, st->encode_seconds);
}

int vx_cmd_build(pch_ctx *ctx, int argc, char **argv)
{
    pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_atif_options ao = PCH_ATIF_OPTIONS_INIT;
    pch_vxp_build_stats st;
    pch_atif_dir_stats ds;
    const char *from = NULL, *to = NULL;
    vx_input in;
    const char *input = NULL;
    char *source_alloc = NULL;
    build_st bs;
    pch_error err;
    int rc, quiet = 0, json = 0;
    memset(&bs, 0, sizeof bs);
    memset(&in, 0, sizeof in);
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *sz = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(build_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--quiet") == 0) { quiet = 1; continue; }
        if (strcmp(a, "--json") == 0) { json = 1; continue; }
        if (!build_option(a)) { fprintf(stderr, "pchronicle-vortex build: unknown option %s\n", a); fputs(build_usage, stderr); return VX_EXIT_USAGE; }
        if (!v) { fprintf(stderr, "pchronicle-vortex build: %s needs a value\n", a); fputs(build_usage, stderr); return VX_EXIT_USAGE; }
        i++;
        if (strcmp(a, "--from") == 0) from = v;
        else if (strcmp(a, "--to") == 0) to = v;
        else if (strcmp(a, "--assets") == 0) {
            if (strcmp(v, "embed") == 0) o.assets = PCH_VXP_ASSETS_EMBED;
            else if (strcmp(v, "reference") == 0) o.assets = PCH_VXP_ASSETS_REFERENCE;
            else { fprintf(stderr, "pchronicle-vortex build: --assets takes embed or reference\n"); return VX_EXIT_USAGE; }
        } else if (strcmp(a, "--hot-max") == 0) sz = &o.hot_max_bytes;
        else if (strcmp(a, "--cold-max") == 0) sz = &o.cold_max_bytes;
        else if (strcmp(a, "--cluster-bytes") == 0) sz = &o.cluster_bytes;
        else if (strcmp(a, "--frame-bytes") == 0) sz = &o.frame_bytes;
        else if (strcmp(a, "--zstd-dict") == 0) sz = &o.zstd_dict_bytes;
        else if (strcmp(a, "--frame-rows") == 0) sz = &o.frame_rows;
        else if (strcmp(a, "--frame-ratio") == 0) sz = &o.frame_ratio;
        else if (strcmp(a, "--file-bytes") == 0) sz = &o.file_bytes;
        else if (strcmp(a, "--pack-bytes") == 0) sz = &o.pack_bytes;
        else if (strcmp(a, "--dedup-min") == 0) sz = &o.dedup_min_bytes;
        else if (strcmp(a, "--dedup-index-bytes") == 0) sz = &o.dedup_index_bytes;
        else if (strcmp(a, "--shard-rows") == 0) sz = &o.directory_shard_rows;
        else if (strcmp(a, "--threads") == 0) {
            uint64_t t;
            if (vx_parse_size(v, &t) < 0 || t > 64) { fprintf(stderr, "pchronicle-vortex build: --threads takes 0..64\n"); return VX_EXIT_USAGE; }
            o.threads = (uint32_t)t;
        }
        else if (strcmp(a, "--prompt-prefix") == 0) {
            if (strcmp(v, "on") == 0) o.prompt_prefix = 1;
            else if (strcmp(v, "off") == 0) o.prompt_prefix = 0;
            else { fprintf(stderr, "pchronicle-vortex build: --prompt-prefix takes on or off\n"); return VX_EXIT_USAGE; }
        }
        else if (strcmp(a, "--source-id") == 0) o.source_id = v;
        else if (strcmp(a, "--partition") == 0) o.partition = v;
        else { fprintf(stderr, "pchronicle-vortex build: unknown option %s\n", a); fputs(build_usage, stderr); return VX_EXIT_USAGE; }
        if (sz && vx_parse_size(v, sz) < 0) { fprintf(stderr, "pchronicle-vortex build: %s: '%s' is not a size\n", a, v); return VX_EXIT_USAGE; }
    }
    if (!from || !to) { fprintf(stderr, "pchronicle-vortex build: --from and --to are required\n"); fputs(build_usage, stderr); return VX_EXIT_USAGE; }
    if (!o.cluster_bytes || !o.file_bytes || !o.pack_bytes || !o.directory_shard_rows) {
        fprintf(stderr, "pchronicle-vortex build: --cluster-bytes, --file-bytes, --pack-bytes and --shard-rows must be positive\n");
        return VX_EXIT_USAGE;
    }
    if (o.frame_bytes > ((uint64_t)1 << 30)) {
        fprintf(stderr, "pchronicle-vortex build: --frame-bytes must be at most 1G\n");
        return VX_EXIT_USAGE;
    }
    if (o.frame_rows > ((uint64_t)1 << 20)) {
        fprintf(stderr, "pchronicle-vortex build: --frame-rows must be at most 1M\n");
        return VX_EXIT_USAGE;
    }
    if (o.frame_ratio > 1024) {
        fprintf(stderr, "pchronicle-vortex build: --frame-ratio must be at most 1024\n");
        return VX_EXIT_USAGE;
    }
    if (o.zstd_dict_bytes > PCH_VXP_ZSTD_DICT_MAX) {
        fprintf(stderr, "pchronicle-vortex build: --zstd-dict must be at most 1M\n");
        return VX_EXIT_USAGE;
    }
    if (o.hot_max_bytes > o.cold_max_bytes) {
        fprintf(stderr, "pchronicle-vortex build: --hot-max must not be above --cold-max\n");
        return VX_EXIT_USAGE;
    }
    if (vx_input_open(ctx, "build", from, &in) < 0) return VX_EXIT_FAIL;
    input = in.dir;
    o.assets_root = input;
    o.source_uri = from;
    o.progress = !quiet && isatty(2);
    /* source identity (RFC-0006 §5.2) as `pchronicle import --output-format storyline` sets
    ** it: --source-id, else the input's base name; it also seeds generated keys, so both
    ** projections of one input agree on every key (§13.1) */
    if (!o.source_id) {
        size_t n = strlen(from);
        while (n > 1 && from[n - 1] == '/') n--;
        const char *bn = from + n;
        while (bn > from && bn[-1] != '/') bn--;
        if (!(source_alloc = strndup(bn, (size_t)(from + n - bn)))) { rc = vx_fail("build", NULL); goto out; }
        o.source_id = source_alloc;
    }
    ao.source_id = o.source_id;
    ao.source_fingerprint = o.source_id;
    {
        /* documents are parsed ahead on worker threads (callbacks stay in path order) */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        ao.threads = o.threads ? o.threads : cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
    }
    if (pch_vxp_builder_open(&bs.b, ctx, to, &o, &err) < 0) { rc = vx_fail(to, &err); goto out; }
    ao.select = on_select;
    ao.select_payload = &bs;
    ao.digest = true;
    ao.tokens = true;             /* token arrays straight into their lanes */
    pch_error_clear(&bs.doc_err);
    memset(&ds, 0, sizeof ds);
    rc = pch_atif_dir_import(ctx, input, &ao, on_doc, NULL, on_finding, &bs, &ds, &err);
    if (rc < 0 && bs.doc_failed) err = bs.doc_err;
    if (rc == PCH_OK && ds.documents - ds.rejected == 0) {
        pch_error_set(&err, PCH_EINVAL, "no valid ATIF document under %s (%zu rejected)", from, ds.rejected);
        rc = PCH_EINVAL;
    }
    if (rc == PCH_OK) rc = pch_vxp_builder_commit(bs.b, &st, &err);
    if (rc < 0) { vx_fail("build", &err); rc = VX_EXIT_FAIL; goto out; }
    st.input_bytes = ds.bytes;
    if (!quiet)
        fprintf(stderr, "built snapshot %s: %" PRIu64 " documents (%zu rejected), %" PRIu64 " trajectories, %" PRIu64 " steps, %" PRIu64
                        " tool calls; %.1f MiB ATIF -> %.1f MiB (data %.1f, blobs %.1f, directories %.2f); %" PRIu64
                        " data files, %" PRIu64 " clusters, %" PRIu64 " blobs (%" PRIu64 " dedup hits); %.2f s\n",
                st.snapshot_id, st.documents, ds.rejected, st.trajectories, st.steps, st.tool_calls, (double)ds.bytes / 1048576.0,
                (double)(st.data_bytes + st.blob_bytes + st.directory_bytes + st.manifest_bytes) / 1048576.0,
                (double)st.data_bytes / 1048576.0, (double)st.blob_bytes / 1048576.0, (double)st.directory_bytes / 1048576.0,
                st.data_files, st.clusters, st.blobs, st.dedup_hits, st.seconds);
    if (json) print_build_json(&st, ds.rejected);
    if (!quiet && st.staging_removed)
        fprintf(stderr, "removed %" PRIu64 " staging directories (%.1f MiB) that writers which did not finish left behind\n",
                st.staging_removed, (double)st.staging_removed_bytes / 1048576.0);
    rc = VX_EXIT_OK;
out:
    pch_vxp_builder_free(bs.b);
    free(source_alloc);
    vx_input_close(&in, "build");
    return rc;
}

/* ------------------------------------------------------------------ get */

static const char get_usage[] =
    "usage: pchronicle-vortex get ROOT KEY [--preview] [--compact] [--stats] [--snapshot ID]\n"
    "       pchronicle-vortex get ROOT (--trajectory-key K | --run-id R | --session-id S) [...]\n"
    "       pchronicle-vortex get ROOT --run-id R --trajectory-key K [...]\n"
    "  Prints the ATIF document of KEY (a trajectory key; the trajectories whose producer id is\n"
    "  KEY: their trajectory_id, or a document root's session_id, each keyed KEY@<document path>;\n"
    "  or the document roots whose run key is KEY), subagents nested again. --trajectory-key, --run-id and\n"
    "  --session-id say which identity the key is (only trajectories with that trajectory key,\n"
    "  only document roots with that run key or session id); --run-id with --trajectory-key names\n"
    "  the trajectory K of run R. Several candidates: all of them (one document each), a list on\n"
    "  stderr naming the flags that select each alone, and exit status 3. --preview does not\n"
    "  read blob packs and cuts cold content to a marked preview (RFC-0006 §13.6). --snapshot ID\n"
    "  reads that snapshot instead of CURRENT's (`pchronicle-vortex snapshots ROOT` lists them).\n";

/* --trajectory-key / --run-id / --session-id → the key kind (-1: not one of them). */
static int key_kind_flag(const char *a)
{
    if (strcmp(a, "--trajectory-key") == 0) return PCH_VXP_KEY_TRAJECTORY;
    if (strcmp(a, "--run-id") == 0) return PCH_VXP_KEY_RUN;
    if (strcmp(a, "--session-id") == 0) return PCH_VXP_KEY_SESSION;
    return -1;
}

int vx_cmd_get(pch_ctx *ctx, int argc, char **argv)
{
    const char *root = NULL, *key = NULL, *in_run = NULL, *snap = NULL;
    bool preview = false, compact = false, stats = false;
    pch_vxp_key_kind as = PCH_VXP_KEY_ANY;
    pch_vxp_snapshot *s = NULL;
    uint64_t idx_first[64], *idx = idx_first;
    size_t n = 0, kept = 0, total;
    pch_error err;
    int rc = VX_EXIT_OK;
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        int kk = key_kind_flag(argv[i]);
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) { fputs(get_usage, stdout); return VX_EXIT_OK; }
        else if (strcmp(argv[i], "--preview") == 0) preview = true;
        else if (strcmp(argv[i], "--compact") == 0) compact = true;
        else if (strcmp(argv[i], "--stats") == 0) stats = true;
        else if (strcmp(argv[i], "--snapshot") == 0) {
            if (i + 1 >= argc) { fprintf(stderr, "pchronicle-vortex get: --snapshot needs a value\n"); return VX_EXIT_USAGE; }
            snap = argv[++i];
        }
        else if (kk >= 0) {
            if (i + 1 >= argc) { fprintf(stderr, "pchronicle-vortex get: %s needs a value\n", argv[i]); return VX_EXIT_USAGE; }
            /* --run-id R with --trajectory-key K: the trajectory K of run R (a trajectory key
            ** is unique only within its run) */
            if (key && !in_run && ((as == PCH_VXP_KEY_RUN && kk == PCH_VXP_KEY_TRAJECTORY) ||
                                   (as == PCH_VXP_KEY_TRAJECTORY && kk == PCH_VXP_KEY_RUN))) {
                in_run = kk == PCH_VXP_KEY_RUN ? argv[++i] : key;
                if (kk == PCH_VXP_KEY_TRAJECTORY) key = argv[++i];
                as = PCH_VXP_KEY_TRAJECTORY;
                continue;
            }
            if (key) { fprintf(stderr, "pchronicle-vortex get: one key only, or --run-id with --trajectory-key (%s given after a key)\n", argv[i]); return VX_EXIT_USAGE; }
            as = (pch_vxp_key_kind)kk;
            key = argv[++i];
        }
        else if (argv[i][0] == '-' && argv[i][1] == '-') { fprintf(stderr, "pchronicle-vortex get: unknown option %s\n", argv[i]); fputs(get_usage, stderr); return VX_EXIT_USAGE; }
        else if (!root) root = argv[i];
        else if (!key) key = argv[i];
        else { fputs(get_usage, stderr); return VX_EXIT_USAGE; }
    }
    if (!root || !key) { fputs(get_usage, stderr); return VX_EXIT_USAGE; }
    if (pch_vxp_snapshot_open_at(&s, ctx, root, snap, &err) < 0) return vx_fail(root, &err);
    if (in_run) {   /* the exact key: only the shards whose fences hold the run are read */
        rc = pch_vxp_lookup_in_run(s, in_run, key, idx, 64, &n, &err);
        if (rc == PCH_ENOTFOUND) n = 0;
        else if (rc < 0) { rc = vx_fail("get", &err); goto out; }
        rc = VX_EXIT_OK;
    } else if (pch_vxp_lookup_as(s, as, key, idx, 64, &n, &err) < 0) { rc = vx_fail("get", &err); goto out; }
    total = n;
    if (!in_run && n > 64) n = 64;
    for (size_t i = 0; i < n; i++) {
        const char *rk;
        if (in_run && (pch_vxp_entry(s, idx[i], NULL, &rk, NULL, NULL, NULL, &err) < 0 || strcmp(rk, in_run) != 0)) continue;
        idx[kept++] = idx[i];
    }
    if (in_run) total = kept;
    n = kept;
    if (n == 0) {
        fprintf(stderr, "pchronicle-vortex get: no trajectory '%s' in run '%s'\n", key, in_run);
        rc = VX_EXIT_FAIL;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        char *doc = NULL;
        size_t len;
        if (pch_vxp_get(s, idx[i], preview ? PCH_VXP_PREVIEW : PCH_VXP_FULL, !compact, &doc, &len, &err) < 0) {
            rc = vx_fail("get", &err);
            goto out;
        }
        fwrite(doc, 1, len, stdout);
        if (compact) fputc('\n', stdout);
        pch_free(ctx, doc);
    }
    if (total > 1) {
        fprintf(stderr, "pchronicle-vortex get: '%s' matches %zu trajectories (printed %zu); name one with the flags below\n",
                key, total, n);
        for (size_t i = 0; i < n; i++) {
            const char *sid, *rk, *tk, *doc;
            uint64_t one;
            size_t same = 0;
            pch_error e2;
            if (pch_vxp_entry(s, idx[i], &sid, &rk, &tk, &doc, NULL, &err) < 0) continue;
            /* a trajectory key shared with another run's trajectory selects it only with its run */
            if (pch_vxp_lookup_as(s, PCH_VXP_KEY_TRAJECTORY, tk, &one, 1, &same, &e2) < 0) same = 0;
            fprintf(stderr, "  candidate: run_key=%s trajectory_key=%s document=%s (alone: %s%s%s--trajectory-key %s)\n", rk, tk, doc,
                    same != 1 ? "--run-id " : "", same != 1 ? rk : "", same != 1 ? " " : "", tk);
        }
        rc = 3;
    }
out:
    if (idx != idx_first) free(idx);
    if (stats && s) print_stats(s);
    pch_vxp_snapshot_free(s);
    if (fflush(stdout) != 0) return VX_EXIT_FAIL;
    return rc;
}

/* ------------------------------------------------------------------ export */

static const char export_usage[] =
    "usage: pchronicle-vortex export --from ROOT --output-format atif --to DIR [--stats] [--snapshot ID]\n"
    "  Writes every document of the snapshot (CURRENT's, or ID) as ATIF (pretty JSON) at its\n"
    "  original relative path under DIR (a new directory, published by rename when complete).\n";

int vx_cmd_export(pch_ctx *ctx, int argc, char **argv)
{
    const char *from = NULL, *to = NULL, *fmt = NULL, *snap = NULL;
    bool stats = false;
    pch_vxp_snapshot *s = NULL;
    uint64_t n = 0;
    pch_error err;
    int rc = VX_EXIT_OK;
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(export_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--stats") == 0) { stats = true; continue; }
        if (strcmp(a, "--from") != 0 && strcmp(a, "--to") != 0 && strcmp(a, "--output-format") != 0 && strcmp(a, "--snapshot") != 0) {
            fprintf(stderr, "pchronicle-vortex export: unknown option %s\n", a);
            fputs(export_usage, stderr);
            return VX_EXIT_USAGE;
        }
        if (!v) { fprintf(stderr, "pchronicle-vortex export: %s needs a value\n", a); fputs(export_usage, stderr); return VX_EXIT_USAGE; }
        i++;
        if (strcmp(a, "--from") == 0) from = v;
        else if (strcmp(a, "--to") == 0) to = v;
        else if (strcmp(a, "--output-format") == 0) fmt = v;
        else if (strcmp(a, "--snapshot") == 0) snap = v;
        else { fprintf(stderr, "pchronicle-vortex export: unknown option %s\n", a); fputs(export_usage, stderr); return VX_EXIT_USAGE; }
    }
    if (!from || !to) { fputs(export_usage, stderr); return VX_EXIT_USAGE; }
    if (fmt && strcmp(fmt, "atif") != 0) { fprintf(stderr, "pchronicle-vortex export: --output-format %s: only atif is supported\n", fmt); return VX_EXIT_USAGE; }
    if (pch_vxp_snapshot_open_at(&s, ctx, from, snap, &err) < 0) return vx_fail(from, &err);
    if (pch_vxp_export(s, to, &n, &err) < 0) rc = vx_fail("export", &err);
    else fprintf(stderr, "exported %" PRIu64 " documents of snapshot %s to %s\n", n, pch_vxp_snapshot_id(s), to);
    if (stats) print_stats(s);
    pch_vxp_snapshot_free(s);
    return rc;
}

/* ------------------------------------------------------------------ verify */

static void on_verify_finding(const char *file, const char *message, void *payload)
{
    (void)payload;
    printf("%s%s%s\n", file && *file ? file : "", file && *file ? ": " : "", message);
}

static const char verify_usage[] =
    "usage: pchronicle-vortex verify ROOT [--snapshot ID]\n"
    "  Checks every file, digest, reference and count of the current snapshot (RFC-0006 §15), or\n"
    "  of snapshot ID; prints one line per finding; exit 0 healthy, 1 findings.\n";

/* ROOT [--snapshot ID]: the arguments of verify and repair (--manifest for repair). */
static int root_and_id(int argc, char **argv, const char *flag, const char **root, const char **id)
{
    *root = *id = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], flag) == 0 && i + 1 < argc && !*id) *id = argv[++i];
        else if (argv[i][0] == '-' || *root) return -1;
        else *root = argv[i];
    }
    return *root ? 0 : -1;
}

int vx_cmd_verify(pch_ctx *ctx, int argc, char **argv)
{
    const char *root, *id;
    size_t n = 0;
    pch_error err;
    pch_error_clear(&err);
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) { fputs(verify_usage, stdout); return VX_EXIT_OK; }
    if (root_and_id(argc, argv, "--snapshot", &root, &id) < 0) { fputs(verify_usage, stderr); return VX_EXIT_USAGE; }
    if (pch_vxp_verify_at(ctx, root, id, on_verify_finding, NULL, &n, &err) < 0 && n == 0) return vx_fail(root, &err);
    if (fflush(stdout) != 0) return VX_EXIT_FAIL;
    if (n) { fprintf(stderr, "pchronicle-vortex verify: %s: %zu finding%s: not healthy\n", root, n, n == 1 ? "" : "s"); return VX_EXIT_FAIL; }
    fprintf(stderr, "pchronicle-vortex verify: %s: healthy\n", root);
    return VX_EXIT_OK;
}

/* ------------------------------------------------------------------ snapshots, repair */

static const char snapshots_usage[] =
    "usage: pchronicle-vortex snapshots ROOT [--json]\n"
    "  Lists every snapshot of ROOT (its manifests), oldest first: id, created, parent,\n"
    "  documents, trajectories, data MiB, and which one CURRENT names (RFC-0006 §10.2, §12.4).\n"
    "  A manifest that does not load is listed with the reason. --json: one object per line.\n";

int vx_cmd_snapshots(pch_ctx *ctx, int argc, char **argv)
{
    const char *root = NULL;
    bool json = false;
    pch_vxp_snapshot_info *v = NULL;
    size_t n = 0;
    pch_error err;
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) { fputs(snapshots_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(argv[i], "--json") == 0) json = true;
        else if (argv[i][0] == '-' || root) { fputs(snapshots_usage, stderr); return VX_EXIT_USAGE; }
        else root = argv[i];
    }
    if (!root) { fputs(snapshots_usage, stderr); return VX_EXIT_USAGE; }
    if (pch_vxp_snapshots(ctx, root, &v, &n, &err) < 0) return vx_fail(root, &err);
    if (!json) printf("%-21s  %-24s  %-21s  %9s  %12s  %10s  %s\n", "snapshot", "created", "parent", "documents", "trajectories",
                      "data MiB", "");
    for (size_t i = 0; i < n; i++) {
        const pch_vxp_snapshot_info *x = &v[i];
        if (json) {
            printf("{\"snapshot_id\":\"%s\",\"created_at\":\"%s\",\"parent_snapshot_id\":", x->snapshot_id, x->created_at);
            if (x->parent_id[0]) printf("\"%s\"", x->parent_id); else fputs("null", stdout);
            printf(",\"documents\":%" PRIu64 ",\"trajectories\":%" PRIu64 ",\"data_bytes\":%" PRIu64 ",\"current\":%s,\"readable\":%s,\"pins\":",
                   x->documents, x->trajectories, x->data_bytes, x->current ? "true" : "false", x->readable ? "true" : "false");
            vx_put_json_string(stdout, x->pins);
            if (!x->readable) { fputs(",\"problem\":", stdout); vx_put_json_string(stdout, x->problem); }
            fputs("}\n", stdout);
        } else if (x->readable) {
            printf("%-21s  %-24s  %-21s  %9" PRIu64 "  %12" PRIu64 "  %10.1f  %s%s%s", x->snapshot_id, x->created_at,
                   x->parent_id[0] ? x->parent_id : "-", x->documents, x->trajectories, (double)x->data_bytes / 1048576.0,
                   x->current ? "CURRENT" : "", x->current && x->pins[0] ? " " : "", x->pins[0] ? "pinned:" : "");
            if (x->pins[0]) fputs(x->pins, stdout);
            fputc('\n', stdout);
        } else {
            printf("%-21s  unreadable: %s%s\n", x->snapshot_id, x->problem, x->current ? " (CURRENT)" : "");
        }
    }
    pch_vxp_snapshots_free(ctx, v);
    return fflush(stdout) == 0 ? VX_EXIT_OK : VX_EXIT_FAIL;
}

static const char repair_usage[] =
    "usage: pchronicle-vortex repair ROOT --manifest ID\n"
    "  Rebinds a lost or damaged CURRENT to snapshot ID (RFC-0006 §15), after verifying that\n"
    "  snapshot whole (every finding is printed and refuses the repair). Never picks a snapshot\n"
    "  itself: `pchronicle-vortex snapshots ROOT` lists them. A readable CURRENT is left alone.\n";

int vx_cmd_repair(pch_ctx *ctx, int argc, char **argv)
{
    const char *root, *id;
    size_t n = 0;
    pch_error err;
    pch_error_clear(&err);
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) { fputs(repair_usage, stdout); return VX_EXIT_OK; }
    if (root_and_id(argc, argv, "--manifest", &root, &id) < 0 || !id) { fputs(repair_usage, stderr); return VX_EXIT_USAGE; }
    if (pch_vxp_repair(ctx, root, id, on_verify_finding, NULL, &n, &err) < 0) { fflush(stdout); return vx_fail("repair", &err); }
    fprintf(stderr, "pchronicle-vortex repair: %s: CURRENT now names snapshot %s (verified)\n", root, id);
    return VX_EXIT_OK;
}

/* ------------------------------------------------------------------ pin, unpin, vacuum */

static const char pin_usage[] =
    "usage: pchronicle-vortex pin ROOT --snapshot ID --name NAME\n"
    "       pchronicle-vortex unpin ROOT --name NAME\n"
    "  A pin keeps snapshot ID through vacuum (RFC-0006 §12.4) until it is removed; NAME is 1-64 of\n"
    "  [A-Za-z0-9._-]. `snapshots ROOT` shows the pins.\n";

int vx_cmd_pin(pch_ctx *ctx, int argc, char **argv, bool unpin)
{
    const char *root = NULL, *id = NULL, *name = NULL;
    pch_error err;
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) { fputs(pin_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(argv[i], "--snapshot") == 0 && i + 1 < argc && !unpin) id = argv[++i];
        else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) name = argv[++i];
        else if (argv[i][0] == '-' || root) { fputs(pin_usage, stderr); return VX_EXIT_USAGE; }
        else root = argv[i];
    }
    if (!root || !name || (!unpin && !id)) { fputs(pin_usage, stderr); return VX_EXIT_USAGE; }
    if (pch_vxp_pin(ctx, root, name, unpin ? NULL : id, &err) < 0) return vx_fail(unpin ? "unpin" : "pin", &err);
    if (unpin) fprintf(stderr, "pchronicle-vortex unpin: %s: pin %s removed\n", root, name);
    else fprintf(stderr, "pchronicle-vortex pin: %s: %s pins snapshot %s\n", root, name, id);
    return VX_EXIT_OK;
}

static const char vacuum_usage[] =
    "usage: pchronicle-vortex vacuum ROOT [--dry-run] [--keep N] [--min-age DURATION] [--grace DURATION]\n"
    "  Removes the snapshots nothing retains and every file no retained snapshot reaches\n"
    "  (RFC-0006 §12.4). Kept: CURRENT's snapshot, the newest N (--keep, default 2), those whose\n"
    "  manifest is younger than --min-age (default 1h), pinned ones (`pin`), and those an open\n"
    "  reader holds. Unreferenced files younger than --grace (default 1h) stay: a writer links\n"
    "  its files before its manifest names them. Then the staging directories of writers that\n"
    "  died. DURATION: N with ms, s, m, h or d (0: none). --dry-run lists and removes nothing.\n"
    "  One line per decision on stdout; a summary on stderr.\n";

/* "N" + ms|s|m|h|d → milliseconds; -1 when it is not one. */
static int64_t duration_ms(const char *s)
{
    char *end;
    unsigned long long v;
    if (!s || s[0] < '0' || s[0] > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || v > (1ull << 40)) return -1;
    if (strcmp(end, "ms") == 0) return (int64_t)v;
    if (strcmp(end, "s") == 0) return (int64_t)v * 1000;
    if (strcmp(end, "m") == 0) return (int64_t)v * 60000;
    if (strcmp(end, "h") == 0) return (int64_t)v * 3600000;
    if (strcmp(end, "d") == 0) return (int64_t)v * 86400000;
    return *end == 0 && v == 0 ? 0 : -1;
}

static void on_vacuum(const char *action, const char *what, const char *why, uint64_t bytes, void *payload)
{
    (void)payload;
    if (bytes) printf("%s %s (%s, %" PRIu64 " bytes)\n", action, what, why, bytes);
    else printf("%s %s (%s)\n", action, what, why);
}

int vx_cmd_vacuum(pch_ctx *ctx, int argc, char **argv)
{
    pch_vxp_vacuum_options o = PCH_VXP_VACUUM_OPTIONS_INIT;
    pch_vxp_vacuum_stats st;
    const char *root = NULL;
    pch_error err;
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(vacuum_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--dry-run") == 0) o.dry_run = true;
        else if (strcmp(a, "--keep") == 0 && v) {
            char *end;
            unsigned long k = strtoul(v, &end, 10);
            if (*end || v[0] < '0' || v[0] > '9' || k > 1000000) { fprintf(stderr, "pchronicle-vortex vacuum: --keep %s: a count\n", v); return VX_EXIT_USAGE; }
            o.keep_last = (uint32_t)k;
            i++;
        } else if ((strcmp(a, "--min-age") == 0 || strcmp(a, "--grace") == 0) && v) {
            int64_t ms = duration_ms(v);
            if (ms < 0) { fprintf(stderr, "pchronicle-vortex vacuum: %s %s: a duration (30s, 10m, 1h, 2d, 0)\n", a, v); return VX_EXIT_USAGE; }
            if (strcmp(a, "--grace") == 0) o.grace_ms = (uint64_t)ms; else o.min_age_ms = (uint64_t)ms;
            i++;
        } else if (a[0] == '-' || root) { fputs(vacuum_usage, stderr); return VX_EXIT_USAGE; }
        else root = a;
    }
    if (!root) { fputs(vacuum_usage, stderr); return VX_EXIT_USAGE; }
    if (pch_vxp_vacuum(ctx, root, &o, on_vacuum, NULL, &st, &err) < 0) { fflush(stdout); return vx_fail("vacuum", &err); }
    if (fflush(stdout) != 0) return VX_EXIT_FAIL;
    fprintf(stderr, "pchronicle-vortex vacuum: %s: %s%" PRIu64 " snapshots kept, %" PRIu64 " removed; %" PRIu64 " files (%.1f MiB) removed, "
                    "%" PRIu64 " unreferenced files within the grace period; %" PRIu64 " staging directories removed\n",
            root, o.dry_run ? "dry run: " : "", st.snapshots_kept, st.snapshots_removed, st.files_removed,
            (double)st.bytes_removed / 1048576.0, st.files_young, st.staging_removed);
    return VX_EXIT_OK;
}

/* ------------------------------------------------------------------ inspect ROOT */

bool vx_is_projection_root(const char *path)
{
    struct stat sb;
    if (pch_store_is_s3(path)) {   /* an object store: a root unless it names a Vortex file */
        size_t n = strlen(path);
        return !(n > 7 && strcmp(path + n - 7, ".vortex") == 0);
    }
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);   /* a directory: a dataset root */
}

int vx_cmd_inspect_root(pch_ctx *ctx, const char *root)
{
    pch_error err;
    pch_error_clear(&err);
    if (pch_vxp_inspect(ctx, root, stdout, &err) < 0) return vx_fail(root, &err);
    return VX_EXIT_OK;
}

/* ------------------------------------------------------------------ bench-get */

static const char bench_get_usage[] =
    "usage: pchronicle-vortex bench-get ROOT --keys FILE [--key-kind any|trajectory|run|session]\n"
    "                                    [--warmup N] [--repeat R] [--preview] [--out-dir DIR]\n"
    "  Warm in-process point reads (bench/vortex_traj): opens ROOT once, then for every key of FILE\n"
    "  (one per line, each must name exactly one trajectory; --key-kind says which identity the\n"
    "  keys are, as get's --trajectory-key/--run-id/--session-id) times lookup + get (compact JSON in\n"
    "  memory). The first N keys (default 1) are read untimed. Prints one JSON object with\n"
    "  p50/p95/p99 latencies, the query metrics and every latency; --out-dir writes the documents.\n";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void print_summary(const char *name, const double *v, size_t n)
{
    double *s = malloc((n ? n : 1) * sizeof *s), sum = 0;
    if (!s) return;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    for (size_t i = 0; i < n; i++) sum += s[i];
#define PCT(p) (n ? s[(size_t)((p) * (double)n + 0.999999) - 1 < n ? (size_t)((p) * (double)n + 0.999999) - 1 : n - 1] : 0)
    printf("\"%s\":{\"n\":%zu,\"p50_ms\":%.3f,\"p95_ms\":%.3f,\"p99_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,\"mean_ms\":%.3f}",
           name, n, PCT(0.50), PCT(0.95), PCT(0.99), n ? s[0] : 0, n ? s[n - 1] : 0, n ? sum / (double)n : 0);
#undef PCT
    free(s);
}

int vx_cmd_bench_get(pch_ctx *ctx, int argc, char **argv)
{
    const char *root = NULL, *keys_path = NULL, *out_dir = NULL;
    uint64_t warmup = 1, repeat = 1;
    bool preview = false;
    pch_vxp_key_kind as = PCH_VXP_KEY_ANY;
    pch_vxp_snapshot *s = NULL;
    pch_vxp_query_stats q0, q1;
    char **keys = NULL, line[4096];
    size_t n_keys = 0, cap = 0, n_lat = 0;
    double *lat = NULL, *lk = NULL, *gt = NULL, t0, open_ms;
    uint64_t bytes = 0;
    FILE *kf;
    pch_error err;
    int rc = VX_EXIT_OK;
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(bench_get_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--preview") == 0) { preview = true; continue; }
        if (a[0] != '-') { if (root) { fputs(bench_get_usage, stderr); return VX_EXIT_USAGE; } root = a; continue; }
        if (!v || (strcmp(a, "--keys") != 0 && strcmp(a, "--warmup") != 0 && strcmp(a, "--repeat") != 0 && strcmp(a, "--out-dir") != 0 &&
                   strcmp(a, "--key-kind") != 0)) {
            fprintf(stderr, "pchronicle-vortex bench-get: bad option %s\n", a);
            fputs(bench_get_usage, stderr);
            return VX_EXIT_USAGE;
        }
        i++;
        if (strcmp(a, "--keys") == 0) keys_path = v;
        else if (strcmp(a, "--out-dir") == 0) out_dir = v;
        else if (strcmp(a, "--key-kind") == 0) {
            static const char *const kinds[] = { "any", "trajectory", "run", "session" };
            int k = 0;
            while (k < 4 && strcmp(v, kinds[k]) != 0) k++;
            if (k == 4) { fprintf(stderr, "pchronicle-vortex bench-get: --key-kind is any, trajectory, run or session (not '%s')\n", v); return VX_EXIT_USAGE; }
            as = (pch_vxp_key_kind)k;
        }
        else if (vx_parse_size(v, strcmp(a, "--warmup") == 0 ? &warmup : &repeat) < 0 || (strcmp(a, "--repeat") == 0 && !repeat)) {
            fprintf(stderr, "pchronicle-vortex bench-get: %s takes a count\n", a);
            return VX_EXIT_USAGE;
        }
    }
    if (!root || !keys_path) { fputs(bench_get_usage, stderr); return VX_EXIT_USAGE; }
    if (!(kf = fopen(keys_path, "r"))) { fprintf(stderr, "pchronicle-vortex bench-get: %s: %s\n", keys_path, strerror(errno)); return VX_EXIT_FAIL; }
    while (fgets(line, sizeof line, kf)) {
        size_t l = strcspn(line, "\r\n");
        line[l] = 0;
        if (!l) continue;
        if (n_keys == cap) {
            char **nk = realloc(keys, (cap = cap ? cap * 2 : 256) * sizeof *nk);
            if (!nk) { rc = VX_EXIT_FAIL; break; }
            keys = nk;
        }
        if (!(keys[n_keys] = strdup(line))) { rc = VX_EXIT_FAIL; break; }
        n_keys++;
    }
    fclose(kf);
    if (rc != VX_EXIT_OK) goto out;
    t0 = (vx_now_s() * 1e3);
    if (pch_vxp_snapshot_open(&s, ctx, root, &err) < 0) { rc = vx_fail(root, &err); goto out; }
    open_ms = (vx_now_s() * 1e3) - t0;
    lat = calloc(n_keys * repeat + 1, sizeof *lat);
    lk = calloc(n_keys * repeat + 1, sizeof *lk);
    gt = calloc(n_keys * repeat + 1, sizeof *gt);
    if (!lat || !lk || !gt) { rc = VX_EXIT_FAIL; goto out; }
    memset(&q0, 0, sizeof q0);
    for (uint64_t r = 0; r < repeat && rc == VX_EXIT_OK; r++)
        for (size_t k = 0; k < n_keys; k++) {
            uint64_t idx[2];
            size_t n = 0, len = 0;
            char *doc = NULL;
            double a = (vx_now_s() * 1e3), b, c;
            if (r == 0 && k == warmup) pch_vxp_snapshot_stats(s, &q0);
            if (pch_vxp_lookup_as(s, as, keys[k], idx, 2, &n, &err) < 0 || n != 1) {
                fprintf(stderr, "pchronicle-vortex bench-get: line %zu '%s': %zu candidates%s%s\n", k + 1, keys[k], n,
                        n ? "" : ": ", n ? "" : err.msg);
                rc = VX_EXIT_FAIL;
                break;
            }
            b = (vx_now_s() * 1e3);
            if (pch_vxp_get(s, idx[0], preview ? PCH_VXP_PREVIEW : PCH_VXP_FULL, false, &doc, &len, &err) < 0) {
                rc = vx_fail(keys[k], &err);
                break;
            }
            c = (vx_now_s() * 1e3);
            if (r > 0 || k >= warmup) {
                lk[n_lat] = b - a;
                gt[n_lat] = c - b;
                lat[n_lat++] = c - a;
                bytes += len;
            }
            pch_free(ctx, doc);
        }
    if (rc != VX_EXIT_OK) goto out;
    pch_vxp_snapshot_stats(s, &q1);
    printf("{\"snapshot\":\"%s\",\"keys\":%zu,\"repeat\":%" PRIu64 ",\"warmup\":%" PRIu64 ",\"open_ms\":%.3f,",
           pch_vxp_snapshot_id(s), n_keys, repeat, warmup, open_ms);
    print_summary("lookup", lk, n_lat);
    putchar(',');
    print_summary("get", gt, n_lat);
    putchar(',');
    print_summary("total", lat, n_lat);
    printf(",\"bytes\":%" PRIu64 ",\"stats\":{\"files_opened\":%" PRIu64 ",\"clusters_read\":%" PRIu64 ",\"bytes_read\":%" PRIu64
           ",\"read_requests\":%" PRIu64 ",\"blobs_hydrated\":%" PRIu64 "},\"lat_ms\":[",
           bytes, q1.files_opened - q0.files_opened, q1.clusters_read - q0.clusters_read, q1.bytes_read - q0.bytes_read,
           q1.read_requests - q0.read_requests, q1.blobs_hydrated - q0.blobs_hydrated);
    for (size_t i = 0; i < n_lat; i++) printf("%s%.3f", i ? "," : "", lat[i]);
    printf("]}\n");
    if (out_dir) {
        if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) { fprintf(stderr, "pchronicle-vortex bench-get: %s: %s\n", out_dir, strerror(errno)); rc = VX_EXIT_FAIL; goto out; }
        for (size_t k = 0; k < n_keys; k++) {
            uint64_t idx[2];
            size_t n = 0, len = 0;
            char *doc = NULL, path[4200];
            FILE *f;
            if (pch_vxp_lookup_as(s, as, keys[k], idx, 2, &n, &err) < 0 || n != 1 ||
                pch_vxp_get(s, idx[0], preview ? PCH_VXP_PREVIEW : PCH_VXP_FULL, false, &doc, &len, &err) < 0) { rc = vx_fail(keys[k], &err); break; }
            snprintf(path, sizeof path, "%s/%zu.json", out_dir, k + 1);
            if (!(f = fopen(path, "w")) || fwrite(doc, 1, len, f) != len) rc = VX_EXIT_FAIL;
            if (f) fclose(f);
            pch_free(ctx, doc);
            if (rc != VX_EXIT_OK) break;
        }
    }
out:
    for (size_t k = 0; k < n_keys; k++) free(keys[k]);
    free(keys);
    free(lat); free(lk); free(gt);
    pch_vxp_snapshot_free(s);
    return rc;
}
