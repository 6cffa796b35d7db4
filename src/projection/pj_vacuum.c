/* Retention and vacuum (RFC-0006 §12.4, §11.5). A snapshot is kept while any of these holds:
** CURRENT names it; it is one of the newest `keep_last` (ids sort by creation time); its
** manifest is younger than `min_age`; a pin names it (pins/<name>.json, `pin`/`unpin`); an
** open reader holds it. Readers hold a snapshot by a shared flock(2) on its manifest for as
** long as it is open (pj_read.c), which the kernel drops when a reader dies however it dies,
** so a lease cannot outlive its reader and needs no expiry. Vacuum takes an exclusive lock
** on a manifest before it removes the snapshot: a reader holding it keeps it, and a reader
** that arrives later finds it gone.
**
** Files are removed by reachability from every retained manifest, never from CURRENT alone:
** a file that no retained manifest lists goes, once older than `grace` (a writer links its
** files into the root before its manifest names them, §9.5). Manifests go before the files
** only they listed, so an interrupted vacuum leaves unreferenced files (the next one removes
** them), never a manifest that names missing files. Vacuum runs under staging/.commit.lock,
** so CURRENT cannot move while it decides; it refuses to run when CURRENT or any manifest
** does not load (it could not know what they reach). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "projection/pj_int.h"

typedef struct snap {
    char id[64];
    const char *why;          /* why kept; NULL: removed */
    char pin[80];             /* the pin that keeps it */
    int lock;                 /* our exclusive lock on a manifest to remove */
    pch_json_parser *mp;
    pch_buf text;
    const pch_json_value *m;
} snap;

/* Every path manifest m lists (§10.3), and the manifest itself. */
typedef struct reach_st { pch_ctx *ctx; pch_strset *r; } reach_st;

static int reach_file(void *payload, const char *path, const char *digest, uint64_t bytes)
{
    const reach_st *x = payload;
    (void)digest;
    (void)bytes;
    return pch_strset_add(x->ctx, x->r, path);
}

static int reach(pch_ctx *ctx, pch_strset *r, const snap *x)
{
    reach_st st = { ctx, r };
    char path[256];
    snprintf(path, sizeof path, "manifests/%s.json", x->id);
    PCH_TRY(pch_strset_add(ctx, r, path));
    return pj_manifest_each_file(x->m, reach_file, &st);
}

/* Call fn for every file under root/<rel> (recursively; rel is "<dir>" on entry and each
** file's path relative to root when fn sees it). A missing directory has no files. */
typedef int (*file_fn)(void *payload, const char *rel, const char *abs, const struct stat *sb);

static int each_file(pch_ctx *ctx, const char *root, pch_buf *rel, file_fn fn, void *payload)
{
    pch_buf abs;
    DIR *d;
    struct dirent *de;
    size_t base = rel->len;
    int rc = PCH_OK;
    pch_buf_init(&abs, ctx);
    pch_buf_printf(&abs, "%s/%s", root, (const char *)rel->data);
    d = abs.oom ? NULL : opendir((const char *)abs.data);
    pch_buf_dispose(&abs);
    if (!d) return errno == ENOENT ? PCH_OK : PCH_EIO;
    while (rc == PCH_OK && (de = readdir(d))) {
        struct stat sb;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        rel->len = base;
        pch_buf_printf(rel, "/%s", de->d_name);
        pch_buf_init(&abs, ctx);
        pch_buf_printf(&abs, "%s/%s", root, (const char *)rel->data);
        if (rel->oom || abs.oom) rc = PCH_ENOMEM;
        else if (lstat((const char *)abs.data, &sb) == 0)
            rc = S_ISDIR(sb.st_mode) ? each_file(ctx, root, rel, fn, payload)
                                     : fn(payload, (const char *)rel->data, (const char *)abs.data, &sb);
        pch_buf_dispose(&abs);
    }
    rel->len = base;
    if (rel->data) rel->data[base] = 0;
    closedir(d);
    return rc;
}

/* each_file over the directories a snapshot's files live in. */
static int each_dataset_file(pch_ctx *ctx, const char *root, file_fn fn, void *payload)
{
    static const char *const dirs[] = { "manifests", "data", "blobs", "directories", "inventories" };
    int rc = PCH_OK;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0] && rc == PCH_OK; d++) {
        pch_buf rel;
        pch_buf_init(&rel, ctx);
        pch_buf_append_str(&rel, dirs[d]);
        rc = rel.oom ? PCH_ENOMEM : each_file(ctx, root, &rel, fn, payload);
        pch_buf_dispose(&rel);
    }
    return rc;
}

/* The objects of a root on object storage, listed once (key order), and each_dataset_file
** over them: fn sees a stat with only the size and the time set, and no local path. */
typedef struct robj { char *key; uint64_t size; int64_t mtime_ms; bool gone; } robj;
typedef struct robjs { pch_ctx *ctx; robj *v; size_t n, cap; } robjs;

static int on_object(void *arg, const pch_object_info *in)
{
    robjs *o = arg;
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 256;
        robj *nv = pch_realloc(o->ctx, o->v, nc * sizeof *nv);
        if (!nv) return PCH_ENOMEM;
        o->v = nv;
        o->cap = nc;
    }
    o->v[o->n].gone = false;
    o->v[o->n].size = in->size;
    o->v[o->n].mtime_ms = in->mtime_ms;
    if (!(o->v[o->n].key = pch_strndup(o->ctx, in->key, strlen(in->key)))) return PCH_ENOMEM;
    o->n++;
    return 0;
}

static void robjs_dispose(robjs *o)
{
    for (size_t i = 0; i < o->n; i++) pch_free(o->ctx, o->v[i].key);
    pch_free(o->ctx, o->v);
    o->v = NULL;
    o->n = o->cap = 0;
}

static robj *robjs_find(const robjs *o, const char *key)
{
    for (size_t i = 0; i < o->n; i++) if (strcmp(o->v[i].key, key) == 0) return &o->v[i];
    return NULL;
}

static int each_remote_file(const robjs *o, file_fn fn, void *payload)
{
    static const char *const dirs[] = { "manifests/", "data/", "blobs/", "directories/", "inventories/" };
    int rc = PCH_OK;
    for (size_t i = 0; i < o->n && rc == PCH_OK; i++) {
        struct stat sb;
        bool in = false;
        for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) in |= strncmp(o->v[i].key, dirs[d], strlen(dirs[d])) == 0;
        if (!in || o->v[i].gone) continue;
        memset(&sb, 0, sizeof sb);
        sb.st_size = (off_t)o->v[i].size;
        sb.st_mtim.tv_sec = o->v[i].mtime_ms / 1000;
        sb.st_mtim.tv_nsec = (o->v[i].mtime_ms % 1000) * 1000000;
        rc = fn(payload, o->v[i].key, NULL, &sb);
    }
    return rc;
}

typedef struct sweep_files {
    pch_store *remote;            /* the root is on object storage: delete there */
    const pch_strset *reached;
    const pch_vxp_vacuum_options *o;
    pch_vxp_vacuum_cb cb;
    void *payload;
    pch_vxp_vacuum_stats *st;
    int64_t now_ms;
} sweep_files;

/* A file no retained snapshot reaches goes once older than the grace period. */
static int sweep_file(void *payload, const char *rel, const char *abs, const struct stat *sb)
{
    sweep_files *w = payload;
    int64_t age = w->now_ms - ((int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000);
    if (pch_strset_find(w->reached, rel)) return PCH_OK;
    if (age < (int64_t)w->o->grace_ms) {
        w->st->files_young++;
        if (w->cb) w->cb("keep", rel, "unreferenced, younger than the grace period", (uint64_t)sb->st_size, w->payload);
        return PCH_OK;
    }
    if (w->cb) w->cb(w->o->dry_run ? "would remove" : "remove", rel, "reached by no retained snapshot", (uint64_t)sb->st_size, w->payload);
    if (w->o->dry_run || (w->remote ? pch_store_delete(w->remote, rel, NULL) == PCH_OK : !pch_fault("unlink") && unlink(abs) == 0)) {
        w->st->files_removed++;
        w->st->bytes_removed += (uint64_t)sb->st_size;
    }
    return PCH_OK;
}

/* The first pin naming snapshot id, or NULL. */
static const char *pins_name(const pj_pin *pins, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++) if (strcmp(pins[i].snapshot_id, id) == 0) return pins[i].name;
    return NULL;
}

static int cmp_snap(const void *a, const void *b)
{
    return strcmp(((const snap *)a)->id, ((const snap *)b)->id);
}

int pch_vxp_vacuum(pch_ctx *ctx, const char *root, const pch_vxp_vacuum_options *opts, pch_vxp_vacuum_cb cb,
                   void *payload, pch_vxp_vacuum_stats *stats, pch_error *err)
{
    static const pch_vxp_vacuum_options defaults = PCH_VXP_VACUUM_OPTIONS_INIT;
    pch_vxp_vacuum_stats local;
    pch_vxp_snapshot_info *info = NULL;
    snap *sv = NULL;
    pj_pin *pins = NULL;
    size_t n = 0, n_pins = 0;
    pch_strset reached = { NULL, 0, 0 };
    pj_current cur, head;
    pch_store *remote = NULL;
    robjs objs = { ctx, NULL, 0, 0 };
    pch_buf p;
    struct timespec ts;
    int64_t now_ms;
    int lock = -1, rc;
    if (!opts) opts = &defaults;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (opts->version != PCH_VXP_VACUUM_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "projection: vacuum options version %u (want %u)", opts->version, PCH_VXP_VACUUM_OPTIONS_VERSION);
    clock_gettime(CLOCK_REALTIME, &ts);
    now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    pch_buf_init(&p, ctx);
    if (pch_rfile_is_remote(root)) {
        /* object storage has no lock: a writer commits only on the newest commit (kept here
        ** with CURRENT), and its own files are younger than the grace period */
        if ((rc = pch_store_open(ctx, root, NULL, &remote, err)) < 0) goto done;
        if ((rc = pj_head_read(ctx, root, &head, NULL, err)) < 0) { pch_error_prefix(err, "vacuum refused"); goto done; }
        if ((rc = pch_store_list(remote, "", on_object, &objs, err)) < 0) {
            if (rc == PCH_ENOMEM) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
            goto done;
        }
    } else {
        /* CURRENT cannot move while vacuum decides (the build's commit takes this lock) */
        if ((rc = lock = pj_commit_lock(ctx, root, err)) < 0) goto done;
    }
    if ((rc = pj_current_read(ctx, root, &cur, NULL, err)) < 0) { pch_error_prefix(err, "vacuum refused"); goto done; }
    if (!remote) head = cur;
    if ((rc = pj_pins_load(ctx, root, &pins, &n_pins, err)) < 0) { pch_error_prefix(err, "vacuum refused"); goto done; }
    if ((rc = pch_vxp_snapshots(ctx, root, &info, &n, err)) < 0) goto done;
    if (!(sv = pch_calloc(ctx, n ? n : 1, sizeof *sv))) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
    for (size_t i = 0; i < n; i++) {
        sv[i].lock = -1;
        snprintf(sv[i].id, sizeof sv[i].id, "%s", info[i].snapshot_id);
        pch_buf_init(&sv[i].text, ctx);
        if (!info[i].readable) {
            rc = pch_error_set(err, PCH_ECORRUPT, "vacuum refused: manifest of snapshot %s does not load (%s); what it reaches is unknown",
                               info[i].snapshot_id, info[i].problem);
            goto done;
        }
    }
    if (n > 1) qsort(sv, n, sizeof *sv, cmp_snap);
    /* which snapshots stay (§12.4) */
    for (size_t i = 0; i < n; i++) {
        snap *x = &sv[i];
        struct stat sb;
        pch_buf_clear(&p);
        pch_buf_printf(&p, "%s/manifests/%s.json", root, x->id);
        if (p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
        if (remote) {    /* the listing's time; there are no reader leases on object storage */
            const robj *o = robjs_find(&objs, (const char *)p.data + strlen(root) + 1);
            memset(&sb, 0, sizeof sb);
            if (o) sb.st_mtim.tv_sec = o->mtime_ms / 1000, sb.st_mtim.tv_nsec = (o->mtime_ms % 1000) * 1000000;
        }
        if (strcmp(x->id, cur.snapshot_id) == 0) x->why = "CURRENT";
        else if (strcmp(x->id, head.snapshot_id) == 0) x->why = "the newest commit";
        else if (i + opts->keep_last >= n) x->why = "one of the newest";
        else if ((remote || stat((const char *)p.data, &sb) == 0) &&
                 now_ms - ((int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000) < (int64_t)opts->min_age_ms)
            x->why = "younger than the minimum age";
        else if (pins_name(pins, n_pins, x->id)) { x->why = "pinned"; snprintf(x->pin, sizeof x->pin, "%s", pins_name(pins, n_pins, x->id)); }
        else if (remote) ;
        else if ((x->lock = open((const char *)p.data, O_RDONLY | O_CLOEXEC)) < 0 || flock(x->lock, LOCK_EX | LOCK_NB) != 0)
            x->why = "held by an open reader";
        if (x->why && x->lock >= 0) { close(x->lock); x->lock = -1; }
    }
    for (size_t i = 0; i < n && rc == PCH_OK; i++) {
        pj_current c;
        snap *x = &sv[i];
        if (x->why) {
            stats->snapshots_kept++;
            if ((rc = pj_current_at(ctx, root, x->id, &c, err)) == PCH_OK &&
                (rc = pj_manifest_load(ctx, root, &c, &x->mp, &x->text, &x->m, err)) == PCH_OK)
                rc = reach(ctx, &reached, x) < 0 ? pch_error_set(err, PCH_ENOMEM, "projection: out of memory") : PCH_OK;
            if (cb) cb("keep", x->id, x->pin[0] ? x->pin : x->why, 0, payload);
        } else {
            stats->snapshots_removed++;
            if (cb) cb(opts->dry_run ? "would remove" : "remove", x->id, "snapshot: retained by nothing", 0, payload);
        }
    }
    if (rc < 0) goto done;
    /* removed snapshots' manifests first, then every file no retained manifest reaches */
    for (size_t i = 0; i < n; i++) {
        if (sv[i].why || opts->dry_run) continue;
        pch_buf_clear(&p);
        if (remote) {
            pch_buf_printf(&p, "manifests/%s.json", sv[i].id);
            if (p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
            if ((rc = pch_store_delete(remote, (const char *)p.data, err)) < 0) { pch_error_prefix(err, "remove manifests/%s.json", sv[i].id); goto done; }
            robj *o = robjs_find(&objs, (const char *)p.data);
            if (o) o->gone = true;
            continue;
        }
        pch_buf_printf(&p, "%s/manifests/%s.json", root, sv[i].id);
        if (p.oom || pch_fault("unlink") || unlink((const char *)p.data) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "remove manifests/%s.json", sv[i].id); goto done; }
    }
    {
        sweep_files w = { remote, &reached, opts, cb, payload, stats, now_ms };
        if ((rc = remote ? each_remote_file(&objs, sweep_file, &w) : each_dataset_file(ctx, root, sweep_file, &w)) < 0) { rc = pch_error_set(err, rc, "vacuum: walking %s failed", root); goto done; }
    }
    /* and the staging directories no live writer holds (object storage has none: a writer
    ** stages in a local directory of its own) */
    if (!opts->dry_run && !remote) {
        pj_stage_stats ss;
        if ((rc = pj_stage_sweep(ctx, root, &ss, err)) < 0) goto done;
        stats->staging_removed = ss.removed;
        stats->staging_removed_bytes = ss.removed_bytes;
    }
done:
    for (size_t i = 0; sv && i < n; i++) {
        if (sv[i].lock >= 0) close(sv[i].lock);
        pch_json_parser_free(sv[i].mp);
        pch_buf_dispose(&sv[i].text);
    }
    pch_free(ctx, sv);
    pch_free(ctx, pins);
    pch_vxp_snapshots_free(ctx, info);
    pch_strset_dispose(ctx, &reached);
    robjs_dispose(&objs);
    pch_store_close(remote);
    if (lock >= 0) close(lock);
    pch_buf_dispose(&p);
    return rc;
}

/* ---- footprint (inspect; §12.4, §20.3, §22.2) ---- */

typedef struct tally { const pch_strset *cur, *any; pch_vxp_footprint_stats *fp; } tally;

static int tally_file(void *payload, const char *rel, const char *abs, const struct stat *sb)
{
    tally *t = payload;
    (void)abs;
    if (pch_strset_find(t->cur, rel)) t->fp->current_bytes += (uint64_t)sb->st_size;
    else if (pch_strset_find(t->any, rel)) t->fp->history_bytes += (uint64_t)sb->st_size;
    else { t->fp->unreferenced_files++; t->fp->unreferenced_bytes += (uint64_t)sb->st_size; }
    return PCH_OK;
}

int pch_vxp_footprint(pch_ctx *ctx, const char *root, pch_vxp_footprint_stats *fp, pch_error *err)
{
    pch_vxp_snapshot_info *info = NULL;
    pch_store *remote = NULL;
    robjs objs = { ctx, NULL, 0, 0 };
    pj_pin *pins = NULL;
    size_t n = 0, n_pins = 0;
    pch_strset cur = { NULL, 0, 0 }, any = { NULL, 0, 0 };
    int rc;
    memset(fp, 0, sizeof *fp);
    if ((rc = pch_vxp_snapshots(ctx, root, &info, &n, err)) < 0) return rc;
    if (pj_pins_load(ctx, root, &pins, &n_pins, NULL) < 0) n_pins = 0;
    fp->snapshots = n;
    fp->pins = n_pins;
    for (size_t i = 0; i < n && rc == PCH_OK; i++) {
        snap x;
        pj_current c;
        pch_error e;
        if (!info[i].readable) { fp->unreadable++; continue; }
        memset(&x, 0, sizeof x);
        snprintf(x.id, sizeof x.id, "%s", info[i].snapshot_id);
        pch_buf_init(&x.text, ctx);
        if (pj_current_at(ctx, root, x.id, &c, &e) == PCH_OK && pj_manifest_load(ctx, root, &c, &x.mp, &x.text, &x.m, &e) == PCH_OK) {
            rc = reach(ctx, &any, &x);
            if (rc == PCH_OK && info[i].current) rc = reach(ctx, &cur, &x);
        }
        pch_json_parser_free(x.mp);
        pch_buf_dispose(&x.text);
    }
    if (rc == PCH_OK && pch_rfile_is_remote(root)) {
        if ((rc = pch_store_open(ctx, root, NULL, &remote, err)) == PCH_OK) rc = pch_store_list(remote, "", on_object, &objs, err);
        if (rc == PCH_OK) {
            tally t = { &cur, &any, fp };
            rc = each_remote_file(&objs, tally_file, &t);
        }
    } else if (rc == PCH_OK) {
        tally t = { &cur, &any, fp };
        rc = each_dataset_file(ctx, root, tally_file, &t);
    }
    if (rc == PCH_OK && !remote) {
        pj_stage_stats ss;
        rc = pj_stage_count(ctx, root, &ss);
        fp->staging_abandoned = ss.removed;
        fp->staging_abandoned_bytes = ss.removed_bytes;
    }
    pch_vxp_snapshots_free(ctx, info);
    pch_free(ctx, pins);
    pch_strset_dispose(ctx, &cur);
    pch_strset_dispose(ctx, &any);
    robjs_dispose(&objs);
    pch_store_close(remote);
    return rc < 0 ? pch_error_set(err, rc, "footprint of %s failed", root) : PCH_OK;
}
