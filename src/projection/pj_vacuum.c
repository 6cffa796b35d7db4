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

typedef struct strset { char **v; size_t cap, n; } strset;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) { h ^= (uint8_t)*s++; h *= 1099511628211ull; }
    return h;
}

static int set_add(pch_ctx *ctx, strset *s, const char *k)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        char **nv = pch_calloc(ctx, nc, sizeof *nv);
        if (!nv) return PCH_ENOMEM;
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i]) {
                size_t j = fnv(s->v[i]) & (nc - 1);
                while (nv[j]) j = (j + 1) & (nc - 1);
                nv[j] = s->v[i];
            }
        pch_free(ctx, s->v);
        s->v = nv;
        s->cap = nc;
    }
    size_t j = fnv(k) & (s->cap - 1);
    for (; s->v[j]; j = (j + 1) & (s->cap - 1)) if (strcmp(s->v[j], k) == 0) return PCH_OK;
    if (!(s->v[j] = pch_malloc(ctx, strlen(k) + 1))) return PCH_ENOMEM;
    strcpy(s->v[j], k);
    s->n++;
    return PCH_OK;
}

static bool set_has(const strset *s, const char *k)
{
    if (!s->cap) return false;
    for (size_t j = fnv(k) & (s->cap - 1); s->v[j]; j = (j + 1) & (s->cap - 1)) if (strcmp(s->v[j], k) == 0) return true;
    return false;
}

static void set_free(pch_ctx *ctx, strset *s)
{
    for (size_t i = 0; i < s->cap; i++) pch_free(ctx, s->v[i]);
    pch_free(ctx, s->v);
}

/* Every path manifest m lists (§10.3), and the manifest itself. */
static int reach(pch_ctx *ctx, strset *r, const snap *x)
{
    static const char *const lists[] = { "data_files", "blob_packs", "trajectory_directory", "content_directory" };
    char path[256];
    snprintf(path, sizeof path, "manifests/%s.json", x->id);
    PCH_TRY(set_add(ctx, r, path));
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        const pch_json_value *a = pj_json_member(x->m, lists[l], PCH_JSON_ARRAY);
        for (uint32_t i = 0; a && i < a->n; i++) {
            const pch_json_value *seg = pj_json_member(&a->u.items[i], "segments", PCH_JSON_OBJECT);
            if (pj_json_str(&a->u.items[i], "path", path, sizeof path)) PCH_TRY(set_add(ctx, r, path));
            if (seg && pj_json_str(seg, "path", path, sizeof path)) PCH_TRY(set_add(ctx, r, path));
        }
    }
    return PCH_OK;
}

typedef struct walk {
    pch_ctx *ctx;
    const char *root;
    const strset *reached;
    const pch_vxp_vacuum_options *o;
    pch_vxp_vacuum_cb cb;
    void *payload;
    pch_vxp_vacuum_stats *st;
    int64_t now_ms;
} walk;

static int walk_dir(walk *w, pch_buf *rel)
{
    pch_buf abs;
    DIR *d;
    struct dirent *de;
    size_t base = rel->len;
    int rc = PCH_OK;
    pch_buf_init(&abs, w->ctx);
    pch_buf_printf(&abs, "%s/%s", w->root, (const char *)rel->data);
    d = abs.oom ? NULL : opendir((const char *)abs.data);
    pch_buf_dispose(&abs);
    if (!d) return errno == ENOENT ? PCH_OK : PCH_EIO;
    while (rc == PCH_OK && (de = readdir(d))) {
        struct stat sb;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        rel->len = base;
        pch_buf_printf(rel, "/%s", de->d_name);
        pch_buf_init(&abs, w->ctx);
        pch_buf_printf(&abs, "%s/%s", w->root, (const char *)rel->data);
        if (rel->oom || abs.oom) { pch_buf_dispose(&abs); rc = PCH_ENOMEM; break; }
        if (lstat((const char *)abs.data, &sb) == 0) {
            if (S_ISDIR(sb.st_mode)) rc = walk_dir(w, rel);
            else if (!set_has(w->reached, (const char *)rel->data)) {
                int64_t age = w->now_ms - ((int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000);
                if (age < (int64_t)w->o->grace_ms) {
                    w->st->files_young++;
                    if (w->cb) w->cb("keep", (const char *)rel->data, "unreferenced, younger than the grace period", (uint64_t)sb.st_size, w->payload);
                } else {
                    if (w->cb) w->cb(w->o->dry_run ? "would remove" : "remove", (const char *)rel->data, "reached by no retained snapshot",
                                     (uint64_t)sb.st_size, w->payload);
                    if (w->o->dry_run || (!pch_fault("unlink") && unlink((const char *)abs.data) == 0)) {
                        w->st->files_removed++;
                        w->st->bytes_removed += (uint64_t)sb.st_size;
                    }
                }
            }
        }
        pch_buf_dispose(&abs);
    }
    rel->len = base;
    if (rel->data) rel->data[base] = 0;
    closedir(d);
    return rc;
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
    strset reached = { NULL, 0, 0 };
    pj_current cur;
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
    /* CURRENT cannot move while vacuum decides (the build's commit takes this lock) */
    pch_buf_printf(&p, "%s/staging", root);
    if (p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
    if ((rc = pch_mkdirs((const char *)p.data, err)) < 0) goto done;
    pch_buf_append_str(&p, "/.commit.lock");
    lock = p.oom ? -1 : open((const char *)p.data, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "lock %s/staging/.commit.lock", root); goto done; }
    if ((rc = pj_current_read(ctx, root, &cur, NULL, err)) < 0) { pch_error_prefix(err, "vacuum refused"); goto done; }
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
        if (strcmp(x->id, cur.snapshot_id) == 0) x->why = "CURRENT";
        else if (i + opts->keep_last >= n) x->why = "one of the newest";
        else if (stat((const char *)p.data, &sb) == 0 &&
                 now_ms - ((int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000) < (int64_t)opts->min_age_ms)
            x->why = "younger than the minimum age";
        else if (pins_name(pins, n_pins, x->id)) { x->why = "pinned"; snprintf(x->pin, sizeof x->pin, "%s", pins_name(pins, n_pins, x->id)); }
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
        pch_buf_printf(&p, "%s/manifests/%s.json", root, sv[i].id);
        if (p.oom || pch_fault("unlink") || unlink((const char *)p.data) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "remove manifests/%s.json", sv[i].id); goto done; }
    }
    {
        static const char *const dirs[] = { "manifests", "data", "blobs", "directories", "inventories" };
        walk w = { ctx, root, &reached, opts, cb, payload, stats, now_ms };
        for (size_t d = 0; d < sizeof dirs / sizeof dirs[0] && rc == PCH_OK; d++) {
            pch_buf rel;
            pch_buf_init(&rel, ctx);
            pch_buf_append_str(&rel, dirs[d]);
            rc = rel.oom ? PCH_ENOMEM : walk_dir(&w, &rel);
            pch_buf_dispose(&rel);
        }
        if (rc < 0) { rc = pch_error_set(err, rc, "vacuum: walking %s failed", root); goto done; }
    }
    /* and the staging directories no live writer holds */
    if (!opts->dry_run) {
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
    set_free(ctx, &reached);
    if (lock >= 0) close(lock);
    pch_buf_dispose(&p);
    return rc;
}
