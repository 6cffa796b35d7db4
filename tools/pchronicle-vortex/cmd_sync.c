/* pchronicle-vortex sync: bring a projection up to date with its input at the cost of what
** changed (RFC-0006 §11.2; docs/vortex-projection.md "Incremental sync"). Public headers only. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pchronicle/atif.h"
#include "pchronicle-vortex/projection.h"
#include "vx_cli.h"

static const char sync_usage[] =
    "usage: pchronicle-vortex sync --from DIR|COMPACT_JSONL_DATASET|STORYLINE_ROOT --to ROOT\n"
    "         [--max-l0-runs N] [--max-l0-memory BYTES] [--source-id ID] [--partition NAME]\n"
    "         [compaction triggers: --l0-runs N --l0-files N --max-shadowed PCT --small-files N]\n"
    "         [--threads N] [--auto-compact] [--watch [--debounce-ms MS]] [--json] [--quiet]\n"
    "  Re-projects only the documents added or changed since ROOT's CURRENT snapshot into new\n"
    "  L0 files, shadows the changed and removed ones, and publishes one new snapshot (RFC-0006\n"
    "  §11.2); when nothing changed, none. A file whose size and time match the snapshot's\n"
    "  document list is not read; one that is read and hashes the same is unchanged. The new\n"
    "  files use the snapshot's layout and source id. Over --max-l0-runs (16) L0 directory runs\n"
    "  or --max-l0-memory (256M) of directory memory the snapshot says \"maintenance required\"\n"
    "  (run `pchronicle-vortex compact ROOT`). Fails with \"stale commit\" when another writer\n"
    "  published first (nothing is published; run it again). When a compaction trigger is met\n"
    "  afterwards (see `pchronicle-vortex compact --help`) it says so; --auto-compact runs it.\n"
    "  --watch keeps watching the input (inotify, every directory, new ones as they appear) and\n"
    "  syncs once per batch of changes that has been quiet for --debounce-ms (300): many\n"
    "  documents written in a burst become one snapshot, not one each. A failed pass prints why\n"
    "  and keeps CURRENT; SIGINT/SIGTERM stop with exit 0.\n";

static const char compact_usage[] =
    "usage: pchronicle-vortex compact ROOT [--if-needed] [--l0-runs N] [--l0-files N]\n"
    "         [--max-shadowed PCT] [--small-files N] [--rewrite-shadowed PCT] [--full]\n"
    "         [--reproject] [--threads N] [--json] [--quiet]\n"
    "  Writes ROOT's CURRENT snapshot again as level-1 data files and one base directory, as a\n"
    "  new snapshot that answers every read as before (RFC-0006 §12.3): every L0 file, every\n"
    "  small file and every file whose shadowed rows reach --rewrite-shadowed (5) percent is\n"
    "  rewritten (its live rows copied as they are; with --reproject, or for a file of another\n"
    "  layout, its documents rebuilt and projected again), the others are kept as they are; --full\n"
    "  rewrites every file. The replaced files stay until `vacuum` finds no kept snapshot that\n"
    "  reaches them. Triggers (0 = off):\n"
    "  --l0-runs (8) L0 directory runs, --l0-files (8) L0 data files, --max-shadowed (20) percent\n"
    "  of the rows shadowed, --small-files (16) data files below a quarter of the file size, and a\n"
    "  snapshot that says \"maintenance required\". --if-needed compacts only when one is met.\n";

typedef struct sync_cli { size_t findings; bool quiet; } sync_cli;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

/* Watch dir and every directory below it (inotify; a directory already watched is a no-op). */
static void add_watches(int fd, const char *dir, unsigned depth)
{
    DIR *d;
    struct dirent *de;
    if (depth > 64) return;
    inotify_add_watch(fd, dir, IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
                                   IN_DELETE_SELF | IN_ONLYDIR);
    if (!(d = opendir(dir))) return;
    while ((de = readdir(d))) {
        char c[PATH_MAX];
        struct stat sb;
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) continue;
        if ((size_t)snprintf(c, sizeof c, "%s/%s", dir, de->d_name) >= sizeof c) continue;
        if (lstat(c, &sb) == 0 && S_ISDIR(sb.st_mode)) add_watches(fd, c, depth + 1);
    }
    closedir(d);
}

static void print_compact(const pch_vxp_compact_stats *c, bool json)
{
    if (json) {
        printf("{\"compacted\":%s,\"snapshot_id\":\"%s\",\"why\":", c->ran ? "true" : "false", c->snapshot_id);
        vx_put_json_string(stdout, c->why);
        printf(",\"documents\":%" PRIu64 ",\"files_rewritten\":%" PRIu64 ",\"files_copied\":%" PRIu64 ",\"files_kept\":%" PRIu64
               ",\"bytes_read\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"write_amplification\":%.4f,\"seconds\":%.3f}\n",
               c->documents, c->files_rewritten, c->files_copied, c->files_kept, c->input_bytes,
               c->ran ? c->build.written_bytes : 0, vx_write_amp(c->ran ? c->build.written_bytes : 0, c->input_bytes), c->seconds);
    } else if (!c->ran) {
        fprintf(stderr, "no compaction trigger met: CURRENT stays %s\n", c->snapshot_id);
    } else {
        fprintf(stderr, "compacted into snapshot %s%s%s%s: %" PRIu64 " data files rewritten (%" PRIu64 " by copying rows), %" PRIu64
                        " kept; %" PRIu64 " documents, %.1f MiB of ATIF; wrote %.1f MiB; %.2f s\n",
                c->snapshot_id, c->why[0] ? " (" : "", c->why, c->why[0] ? ")" : "", c->files_rewritten, c->files_copied, c->files_kept,
                c->documents,
                (double)c->input_bytes / 1048576.0, (double)c->build.written_bytes / 1048576.0, c->seconds);
    }
}

/* A trigger flag of compact (and sync --auto-compact): 1 parsed, 0 not one, -1 bad value. */
static int trigger_flag(pch_vxp_compact_options *o, const char *a, const char *v)
{
    uint64_t *dst = strcmp(a, "--l0-runs") == 0 ? &o->l0_runs : strcmp(a, "--l0-files") == 0 ? &o->l0_files
                  : strcmp(a, "--max-shadowed") == 0 ? &o->max_shadowed_pct : strcmp(a, "--small-files") == 0 ? &o->small_files : NULL;
    if (!dst) return 0;
    if (!v || vx_parse_size(v, dst) < 0 || (dst == &o->max_shadowed_pct && *dst > 100)) {
        fprintf(stderr, "pchronicle-vortex: %s takes a count%s\n", a, dst == &o->max_shadowed_pct ? " (a percentage, 0..100)" : "");
        return -1;
    }
    return 1;
}

int vx_cmd_compact(pch_ctx *ctx, int argc, char **argv)
{
    pch_vxp_compact_options o = PCH_VXP_COMPACT_OPTIONS_INIT;
    pch_vxp_compact_stats st;
    const char *root = NULL;
    bool json = false, quiet = false;
    pch_error err;
    pch_error_clear(&err);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int t;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(compact_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--if-needed") == 0) { o.if_needed = true; continue; }
        if (strcmp(a, "--full") == 0) { o.full = true; continue; }
        if (strcmp(a, "--reproject") == 0) { o.reproject = true; continue; }
        if (strcmp(a, "--rewrite-shadowed") == 0) {
            if (!v || vx_parse_size(v, &o.rewrite_shadowed_pct) < 0 || o.rewrite_shadowed_pct > 100) {
                fprintf(stderr, "pchronicle-vortex compact: --rewrite-shadowed takes a percentage, 0..100\n");
                return VX_EXIT_USAGE;
            }
            i++;
            continue;
        }
        if (strcmp(a, "--json") == 0) { json = true; continue; }
        if (strcmp(a, "--quiet") == 0) { quiet = true; continue; }
        if ((t = trigger_flag(&o, a, v)) < 0) return VX_EXIT_USAGE;
        if (t) { i++; continue; }
        if (strcmp(a, "--threads") == 0) {
            uint64_t n;
            if (!v || vx_parse_size(v, &n) < 0 || n > 64) { fprintf(stderr, "pchronicle-vortex compact: --threads takes 0..64\n"); return VX_EXIT_USAGE; }
            o.threads = (uint32_t)n;
            i++;
            continue;
        }
        if (a[0] == '-' || root) { fprintf(stderr, "pchronicle-vortex compact: unexpected %s\n", a); fputs(compact_usage, stderr); return VX_EXIT_USAGE; }
        root = a;
    }
    if (!root) { fputs(compact_usage, stderr); return VX_EXIT_USAGE; }
    o.progress = !quiet && isatty(2);
    if (pch_vxp_compact(ctx, root, &o, &st, &err) < 0) return vx_fail(root, &err);
    if (json || !quiet) print_compact(&st, json);
    return VX_EXIT_OK;
}

static int on_finding(const pch_atif_finding *f, void *payload)
{
    sync_cli *c = payload;
    if (f->severity == PCH_ATIF_ERROR && ++c->findings <= 20 && !c->quiet)
        fprintf(stderr, "pchronicle-vortex: rejected %s:%s: %s\n", f->file, f->pointer, f->message);
    return 0;
}

static int sync_pass(pch_ctx *ctx, const char *from, const char *to, const pch_vxp_sync_options *op,
                     pch_vxp_compact_options *cop, bool auto_compact, bool json, sync_cli *clip);

/* --watch: a first pass, then one per debounced batch of input changes until SIGINT/SIGTERM. */
static int sync_watch(pch_ctx *ctx, const char *from, const char *to, const pch_vxp_sync_options *o,
                      pch_vxp_compact_options *co, bool auto_compact, bool json, sync_cli *cli, uint64_t debounce_ms)
{
    char rin[PATH_MAX], rout[PATH_MAX];
    struct sigaction sa;
    bool pending = false;
    double last = 0;
    int fd, rc;
    char evbuf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    if (!realpath(from, rin)) { fprintf(stderr, "pchronicle-vortex sync: %s: %s\n", from, strerror(errno)); return VX_EXIT_FAIL; }
    /* the root inside the watched input would wake the watch with its own writes */
    if (realpath(to, rout) && strncmp(rout, rin, strlen(rin)) == 0 && (rout[strlen(rin)] == '/' || !rout[strlen(rin)])) {
        fprintf(stderr, "pchronicle-vortex sync: --watch needs ROOT outside the input %s\n", from);
        return VX_EXIT_USAGE;
    }
    if ((fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) < 0) { fprintf(stderr, "pchronicle-vortex sync: inotify: %s\n", strerror(errno)); return VX_EXIT_FAIL; }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    add_watches(fd, rin, 0);
    rc = sync_pass(ctx, from, to, o, co, auto_compact, json, cli);
    fflush(stdout);
    while (!g_stop) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        int pr = poll(&pfd, 1, 100);
        if (pr < 0 && errno != EINTR) { fprintf(stderr, "pchronicle-vortex sync: poll: %s\n", strerror(errno)); rc = VX_EXIT_FAIL; break; }
        if (pr > 0) {
            ssize_t n;
            while ((n = read(fd, evbuf, sizeof evbuf)) > 0) { pending = true; last = vx_now_s(); }
        }
        if (pending && vx_now_s() - last >= (double)debounce_ms / 1000.0) {
            pending = false;
            add_watches(fd, rin, 0);          /* directories made since */
            rc = sync_pass(ctx, from, to, o, co, auto_compact, json, cli);   /* a failure keeps CURRENT */
            fflush(stdout);
        }
    }
    close(fd);
    if (g_stop) {
        if (!cli->quiet) fprintf(stderr, "pchronicle-vortex: sync stopped; CURRENT of %s is the last complete snapshot\n", to);
        rc = VX_EXIT_OK;
    }
    return rc;
}

int vx_cmd_sync(pch_ctx *ctx, int argc, char **argv)
{
    pch_vxp_sync_options o = PCH_VXP_SYNC_OPTIONS_INIT;
    const char *from = NULL, *to = NULL;
    bool json = false, auto_compact = false, watch = false;
    uint64_t debounce_ms = 300;
    pch_vxp_compact_options co = PCH_VXP_COMPACT_OPTIONS_INIT;
    sync_cli cli;
    memset(&cli, 0, sizeof cli);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(sync_usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--quiet") == 0) { cli.quiet = true; continue; }
        if (strcmp(a, "--json") == 0) { json = true; continue; }
        if (strcmp(a, "--auto-compact") == 0) { auto_compact = true; continue; }
        if (strcmp(a, "--watch") == 0) { watch = true; continue; }
        if (strcmp(a, "--debounce-ms") == 0) {
            if (!v || vx_parse_size(v, &debounce_ms) < 0 || debounce_ms > 3600000) {
                fprintf(stderr, "pchronicle-vortex sync: --debounce-ms takes 0..3600000\n");
                return VX_EXIT_USAGE;
            }
            i++;
            continue;
        }
        {
            int t = trigger_flag(&co, a, v);
            if (t < 0) return VX_EXIT_USAGE;
            if (t) { i++; continue; }
        }
        if (strcmp(a, "--from") && strcmp(a, "--to") && strcmp(a, "--max-l0-runs") && strcmp(a, "--max-l0-memory") &&
            strcmp(a, "--source-id") && strcmp(a, "--partition") && strcmp(a, "--threads")) {
            fprintf(stderr, "pchronicle-vortex sync: unknown option %s\n", a);
            fputs(sync_usage, stderr);
            return VX_EXIT_USAGE;
        }
        if (!v) { fprintf(stderr, "pchronicle-vortex sync: %s needs a value\n", a); return VX_EXIT_USAGE; }
        i++;
        if (strcmp(a, "--from") == 0) from = v;
        else if (strcmp(a, "--to") == 0) to = v;
        else if (strcmp(a, "--source-id") == 0) o.source_id = v;
        else if (strcmp(a, "--partition") == 0) o.partition = v;
        else {
            uint64_t n;
            if (vx_parse_size(v, &n) < 0) { fprintf(stderr, "pchronicle-vortex sync: %s: '%s' is not a number\n", a, v); return VX_EXIT_USAGE; }
            if (strcmp(a, "--max-l0-runs") == 0) o.max_l0_runs = n;
            else if (strcmp(a, "--max-l0-memory") == 0) o.max_l0_memory = n;
            else if (n > 64) { fprintf(stderr, "pchronicle-vortex sync: --threads takes 0..64\n"); return VX_EXIT_USAGE; }
            else o.threads = (uint32_t)n;
        }
    }
    if (!from || !to) { fprintf(stderr, "pchronicle-vortex sync: --from and --to are required\n"); fputs(sync_usage, stderr); return VX_EXIT_USAGE; }
    o.progress = !cli.quiet && isatty(2);
    co.threads = o.threads;
    co.progress = o.progress;
    if (!watch) return sync_pass(ctx, from, to, &o, &co, auto_compact, json, &cli);
    return sync_watch(ctx, from, to, &o, &co, auto_compact, json, &cli, debounce_ms);
}

/* One sync of `to` from `from` (and a compaction when due and asked for), reported. */
static int sync_pass(pch_ctx *ctx, const char *from, const char *to, const pch_vxp_sync_options *op,
                     pch_vxp_compact_options *cop, bool auto_compact, bool json, sync_cli *clip)
{
    pch_vxp_sync_options o = *op;
    pch_vxp_compact_options co = *cop;
    pch_vxp_sync_stats st;
    sync_cli cli = *clip;
    vx_input in;
    pch_error err;
    int rc;
    pch_error_clear(&err);
    cli.findings = 0;
    if (vx_input_open(ctx, "sync", from, &in) < 0) return VX_EXIT_FAIL;
    rc = pch_vxp_sync(ctx, in.dir, to, &o, on_finding, &cli, &st, &err);
    vx_input_close(&in, "sync");
    if (rc < 0) return vx_fail(to, &err);
    if (json) {
        printf("{\"published\":%s,\"snapshot_id\":\"%s\",\"added\":%" PRIu64 ",\"changed\":%" PRIu64 ",\"removed\":%" PRIu64
               ",\"unchanged\":%" PRIu64 ",\"read\":%" PRIu64 ",\"rejected\":%" PRIu64 ",\"tombstones\":%" PRIu64
               ",\"bytes_read\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"write_amplification\":%.4f,\"seconds\":%.3f"
               ",\"encode_seconds\":%.3f,\"maintenance_required\":%s}\n",
               st.published ? "true" : "false", st.snapshot_id, st.added, st.changed, st.removed, st.unchanged, st.read,
               st.rejected, st.tombstones, st.input_bytes, st.published ? st.build.written_bytes : 0,
               vx_write_amp(st.published ? st.build.written_bytes : 0, st.input_bytes), st.seconds,
               st.published ? st.build.encode_seconds : 0.0,
               st.published && st.build.maintenance_required ? "true" : "false");
    } else if (!cli.quiet) {
        if (!st.published)
            fprintf(stderr, "nothing changed: CURRENT stays %s (%" PRIu64 " documents unchanged, %" PRIu64 " read); %.2f s\n",
                    st.snapshot_id, st.unchanged, st.read, st.seconds);
        else
            fprintf(stderr, "synced snapshot %s: %" PRIu64 " added, %" PRIu64 " changed, %" PRIu64 " removed, %" PRIu64
                            " unchanged (%" PRIu64 " read, %" PRIu64 " rejected); %" PRIu64 " tombstones; wrote %.2f MiB; %.2f s\n",
                    st.snapshot_id, st.added, st.changed, st.removed, st.unchanged, st.read, st.rejected, st.tombstones,
                    (double)st.build.written_bytes / 1048576.0, st.seconds);
        if (st.published && st.build.maintenance_required)
            fprintf(stderr, "maintenance required: the L0 runs are over their limits; run `pchronicle-vortex compact %s`\n", to);
    }
    if (st.published) {      /* a compaction trigger met now (§12.3): say so, or run it */
        char why[256];
        bool due = false;
        if (pch_vxp_compact_due(ctx, to, &co, &due, why, sizeof why, &err) < 0) return vx_fail(to, &err);
        if (due && !auto_compact && !cli.quiet) fprintf(stderr, "compaction due (%s): run `pchronicle-vortex compact %s`\n", why, to);
        if (due && auto_compact) {
            pch_vxp_compact_stats cs;
            if (pch_vxp_compact(ctx, to, &co, &cs, &err) < 0) return vx_fail(to, &err);
            if (json || !cli.quiet) print_compact(&cs, json);
        }
    }
    return VX_EXIT_OK;
}
