/* pchronicle sync --input-format compact-jsonl (RFC-0014 "Sync"): snapshot sync. Every
** pass rescans the whole input root and atomically replaces --mirror with a complete
** compact snapshot; --watch keeps watching the tree (inotify, recursive) and turns each
** debounced batch of changes into one new snapshot. SIGINT/SIGTERM stop cleanly: an
** interrupted pass publishes nothing and the previous mirror stays. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cj_cli.h"
#include "pchronicle/compact_jsonl.h"

static const char k_usage[] =
    "usage: pchronicle sync --from ROOT --mirror DATASET [--input-format compact-jsonl]\n"
    "                       [--column NAME=JSON_PATH]... [--offload-threshold BYTES]\n"
    "                       [--max-record-bytes BYTES] [--zstd-level N] [--id-index-bytes BYTES]\n"
    "                       [--watch] [--debounce-ms MS] [--quiet]\n"
    "\n"
    "Snapshot sync: rescan all of ROOT and atomically replace DATASET with a complete\n"
    "compact-jsonl snapshot (adds, edits and deletes all appear). With --watch, keep\n"
    "watching ROOT (recursively) and publish one new snapshot per debounced batch of\n"
    "changes until SIGINT/SIGTERM; a failed pass keeps the previous mirror.\n"
    "\n"
    "  --from ROOT               input file or directory\n"
    "  --mirror DATASET          dataset directory to create or replace\n"
    "  --input-format F          compact-jsonl (optional: an existing mirror must be one,\n"
    "                            a new one is; --output-format compact-jsonl also works)\n"
    "  --column NAME=JSON_PATH   as for import\n"
    "  --offload-threshold N     as for import\n"
    "  --max-record-bytes N      as for import\n"
    "  --zstd-level N            as for import\n"
    "  --id-index-bytes N        as for import\n"
    "  --watch                   keep watching and re-syncing\n"
    "  --debounce-ms MS          quiet time before a re-sync (default 300)\n"
    "  --quiet                   no progress and no summary lines\n";

typedef struct watch_ctx {
    int fd;
    const char *mirror_base;
    dev_t mdev;
    ino_t mino;
    bool have_mirror;
} watch_ctx;

static bool ignored_name(const watch_ctx *w, const char *name)
{
    if (!name || !*name) return false;
    if (strcmp(name, w->mirror_base) == 0) return true;
    return name[0] == '.' && strstr(name, ".staging-") != NULL;
}

static void add_watches(watch_ctx *w, const char *dir, unsigned depth)
{
    if (depth > 256) return;
    struct stat sb;
    if (lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return;
    if (w->have_mirror && sb.st_dev == w->mdev && sb.st_ino == w->mino) return;
    inotify_add_watch(w->fd, dir, IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM |
                                      IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    size_t dl = strlen(dir);
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if (de->d_name[0] == '.' && strstr(de->d_name, ".staging-")) continue;
        size_t n = dl + strlen(de->d_name) + 2;
        char *c = malloc(n);
        if (!c) break;
        snprintf(c, n, "%s/%s", dir, de->d_name);
        add_watches(w, c, depth + 1);
        free(c);
    }
    closedir(d);
}

static void refresh_mirror_id(watch_ctx *w, const char *mirror)
{
    struct stat sb;
    w->have_mirror = lstat(mirror, &sb) == 0;
    if (w->have_mirror) { w->mdev = sb.st_dev; w->mino = sb.st_ino; }
}

static int one_pass(pch_ctx *ctx, const char *from, const char *mirror, pch_cj_options *o, bool quiet)
{
    pch_cj_stats st;
    int rc = pch_cj_cli_run(pch_cj_import, "sync", ctx, from, mirror, o, quiet, NULL, &st);
    if (rc != PCH_CLI_EXIT_OK) return rc;
    if (!quiet) {
        printf("synced %llu records from %llu files into %s\n", (unsigned long long)st.records,
               (unsigned long long)st.files, mirror);
        fflush(stdout);
    }
    return PCH_CLI_EXIT_OK;
}

int pch_cmd_sync(int argc, char **argv)
{
    pch_cj_mapping *maps = NULL;
    size_t n_maps = 0;
    int rc = pch_cj_cli_take_columns(&argc, argv, &maps, &n_maps, k_usage);
    if (rc) return rc;
    const char *from = NULL, *mirror = NULL, *ofmt = NULL, *ifmt = NULL, *thr = NULL, *maxrec = NULL, *deb = NULL;
    const char *level = NULL, *idx = NULL;
    bool watch = false, quiet = false;
    const pch_cli_opt opts[] = {
        { "from", true, &from, NULL }, { "mirror", true, &mirror, NULL },
        { "output-format", true, &ofmt, NULL }, { "input-format", true, &ifmt, NULL },
        { "offload-threshold", true, &thr, NULL }, { "max-record-bytes", true, &maxrec, NULL },
        { "zstd-level", true, &level, NULL }, { "id-index-bytes", true, &idx, NULL },
        { "debounce-ms", true, &deb, NULL },
        { "watch", false, NULL, &watch }, { "quiet", false, NULL, &quiet },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int n_pos = 0;
    pch_ctx *ctx = NULL;
    watch_ctx w;
    memset(&w, 0, sizeof w);
    w.fd = -1;
    if (!pos) { free(maps); pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    rc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    if (rc == PCH_CLI_HELP) { fputs(k_usage, stdout); rc = PCH_CLI_EXIT_OK; goto done; }
    if (rc) goto done;
    rc = PCH_CLI_EXIT_USAGE;
    if (n_pos) { pch_cli_usage_error(k_usage, "unexpected argument '%s'", pos[0]); goto done; }
    if (!from || !mirror) { pch_cli_usage_error(k_usage, "--from and --mirror are required"); goto done; }
    if (!pch_cj_cli_mirror_ok(mirror)) { rc = PCH_CLI_EXIT_ERROR; goto done; }
    if (!pch_cj_cli_formats_ok(ofmt, ifmt, "--input-format", mirror, k_usage)) goto done;
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    unsigned long long debounce_ms = 300;
    pch_cj_cli_import_args ia = { thr, maxrec, NULL, level, idx };
    if (!pch_cj_cli_import_options(&o, &ia, maps, n_maps, k_usage)) goto done;
    if (deb && !pch_cli_parse_u64(deb, 3600000, &debounce_ms)) { pch_cli_usage_error(k_usage, "--debounce-ms: not a number: %s", deb); goto done; }
    o.mode = PCH_CJ_REPLACE;
    pch_cj_cli_signals();
    pch_error err;
    pch_error_clear(&err);
    if (pch_ctx_new(&ctx, NULL, NULL, &err) < 0) { rc = pch_cli_fail(&err); goto done; }
    if (!watch) { rc = one_pass(ctx, from, mirror, &o, quiet); goto done; }

    const char *slash = strrchr(mirror, '/');
    w.mirror_base = slash ? slash + 1 : mirror;
    w.fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (w.fd < 0) { pch_cli_error("inotify: %s", strerror(errno)); rc = PCH_CLI_EXIT_ERROR; goto done; }
    struct stat sb;
    if (lstat(from, &sb) != 0) { pch_cli_error("input %s: %s", from, strerror(errno)); rc = PCH_CLI_EXIT_ERROR; goto done; }
    char *watch_root = strdup(from);
    if (!watch_root) { pch_cli_error("out of memory"); rc = PCH_CLI_EXIT_ERROR; goto done; }
    if (!S_ISDIR(sb.st_mode)) {                 /* a single file: watch its directory */
        char *s = strrchr(watch_root, '/');
        if (s) *s = 0; else { free(watch_root); watch_root = strdup("."); }
        if (!watch_root) { pch_cli_error("out of memory"); rc = PCH_CLI_EXIT_ERROR; goto done; }
    }
    refresh_mirror_id(&w, mirror);
    add_watches(&w, watch_root, 0);
    rc = one_pass(ctx, from, mirror, &o, quiet);
    refresh_mirror_id(&w, mirror);
    bool pending = false;
    double last_ev = 0;
    char evbuf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (!pch_cj_cli_stop) {
        struct pollfd pfd = { w.fd, POLLIN, 0 };
        int pr = poll(&pfd, 1, 100);
        if (pr < 0 && errno != EINTR) { pch_cli_error("poll: %s", strerror(errno)); rc = PCH_CLI_EXIT_ERROR; break; }
        if (pr > 0) {
            for (;;) {
                ssize_t n = read(w.fd, evbuf, sizeof evbuf);
                if (n <= 0) break;
                for (ssize_t off = 0; off < n;) {
                    const struct inotify_event *ev = (const struct inotify_event *)(const void *)(evbuf + off);
                    off += (ssize_t)(sizeof *ev + ev->len);
                    if (ev->len && ignored_name(&w, ev->name)) continue;
                    pending = true;
                    last_ev = pch_cli_now();
                }
            }
        }
        if (pending && pch_cli_now() - last_ev >= (double)debounce_ms / 1000.0) {
            pending = false;
            add_watches(&w, watch_root, 0);     /* new directories */
            rc = one_pass(ctx, from, mirror, &o, quiet);
            refresh_mirror_id(&w, mirror);
        }
    }
    free(watch_root);
    if (pch_cj_cli_stop) {
        if (!quiet) fprintf(stderr, "pchronicle: sync stopped; %s holds the last complete snapshot\n", mirror);
        rc = rc == PCH_CLI_EXIT_INTERRUPTED ? PCH_CLI_EXIT_OK : rc;
    }
done:
    if (w.fd >= 0) close(w.fd);
    pch_ctx_free(ctx);
    free(pos);
    free(maps);
    return rc;
}
