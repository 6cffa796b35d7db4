/* The snapshots of a root (RFC-0006 §10.2, §12.4, §15): list them, name one other than
** CURRENT's (--snapshot), and rebind a lost or damaged CURRENT to one after verifying it
** (repair). A snapshot is its immutable manifest, manifests/<id>.json; CURRENT pins one of
** them by digest. Without CURRENT nothing says which snapshot is the published one, so a
** reader refuses ("source unavailable") and nothing ever picks the newest file name: a
** person names the snapshot, and repair checks it whole before binding it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "projection/pj_int.h"

int pj_current_at(pch_ctx *ctx, const char *root, const char *id, pj_current *cur, pch_error *err)
{
    pch_buf p;
    int rc;
    memset(cur, 0, sizeof *cur);
    if (!id || strlen(id) >= sizeof cur->snapshot_id || !pj_snapshot_id_ok(id))
        return pch_error_set(err, PCH_EINVAL, "'%s' is not a snapshot id (<12 hex>-<8 hex>; see `pchronicle-vortex snapshots ROOT`)",
                             id ? id : "");
    snprintf(cur->snapshot_id, sizeof cur->snapshot_id, "%s", id);
    snprintf(cur->manifest, sizeof cur->manifest, "manifests/%s.json", id);
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/%s", root, cur->manifest);
    if (p.oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    if (pch_rfile_is_remote(root)) {
        /* the text through the process's memo of manifests (pj_root.c), so that the load
        ** that follows makes no second request */
        pch_buf t;
        pch_buf_init(&t, ctx);
        if ((rc = pj_manifest_text(ctx, &t, (const char *)p.data, err)) == PCH_OK) pj_bytes_digest(cur->digest, t.data, t.len);
        pch_buf_dispose(&t);
    } else {
        rc = pj_file_digest((const char *)p.data, cur->digest, NULL, err);
    }
    if (rc == PCH_ENOTFOUND)
        rc = pch_error_set(err, PCH_ENOTFOUND, "no snapshot %s in %s (see `pchronicle-vortex snapshots %s`)", id, root, root);
    pch_buf_dispose(&p);
    return rc;
}

static int cmp_info(const void *a, const void *b)
{
    return strcmp(((const pch_vxp_snapshot_info *)a)->snapshot_id, ((const pch_vxp_snapshot_info *)b)->snapshot_id);
}

/* What one manifest says of its snapshot; a manifest that does not parse is listed with its
** problem (a reader of that snapshot would refuse it the same way). */
static void describe(pch_ctx *ctx, const char *root, pch_vxp_snapshot_info *in)
{
    pj_current c;
    pch_json_parser *mp = NULL;
    pch_buf text;
    const pch_json_value *m = NULL, *cn, *by;
    pch_error e;
    pch_buf_init(&text, ctx);
    if (pj_current_at(ctx, root, in->snapshot_id, &c, &e) < 0 || pj_manifest_load(ctx, root, &c, &mp, &text, &m, &e) < 0) {
        snprintf(in->problem, sizeof in->problem, "%s", e.msg);
    } else {
        in->readable = true;
        if (!pj_json_str(m, "parent_snapshot_id", in->parent_id, sizeof in->parent_id)) in->parent_id[0] = 0;
        if (!pj_json_str(m, "created_at", in->created_at, sizeof in->created_at)) in->created_at[0] = 0;
        if ((cn = pj_json_member(m, "counts", PCH_JSON_OBJECT))) {
            pj_json_u64(cn, "documents", &in->documents);
            pj_json_u64(cn, "trajectories", &in->trajectories);
        }
        if ((by = pj_json_member(m, "bytes", PCH_JSON_OBJECT))) pj_json_u64(by, "data", &in->data_bytes);
    }
    pch_json_parser_free(mp);
    pch_buf_dispose(&text);
}

/* The manifest ids of root/manifests/ (a local directory or an S3 prefix). */
typedef struct idlist { pch_ctx *ctx; char (*v)[64]; size_t n, cap; } idlist;

static int on_manifest(void *arg, const char *name)
{
    idlist *l = arg;
    size_t len = strlen(name);
    if (len <= 5 || len - 5 >= sizeof l->v[0] || strcmp(name + len - 5, ".json") != 0) return 0;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        char (*nv)[64] = pch_realloc(l->ctx, l->v, nc * sizeof *nv);
        if (!nv) return PCH_ENOMEM;
        l->v = nv;
        l->cap = nc;
    }
    memcpy(l->v[l->n], name, len - 5);
    l->v[l->n][len - 5] = 0;
    if (pj_snapshot_id_ok(l->v[l->n])) l->n++;            /* else not a manifest's name */
    return 0;
}

int pch_vxp_snapshots(pch_ctx *ctx, const char *root, pch_vxp_snapshot_info **out, size_t *n_out, pch_error *err)
{
    pch_vxp_snapshot_info *v = NULL;
    pj_pin *pins = NULL;
    size_t n_pins = 0;
    idlist ids = { ctx, NULL, 0, 0 };
    pj_current cur;
    pch_error e;
    bool have_cur;
    pch_buf p;
    int rc = PCH_OK;
    *out = NULL;
    *n_out = 0;
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/manifests", root);
    if (p.oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    if (!pch_rfile_is_remote(root)) {
        DIR *d = opendir((const char *)p.data);
        if (!d) {
            rc = errno == ENOENT ? pch_error_set(err, PCH_ENOTFOUND, "%s: no manifests/ (not a pchronicle-vortex dataset root)", root)
                                 : pch_error_set_sys(err, PCH_EIO, errno, "open %s", (const char *)p.data);
            pch_buf_dispose(&p);
            return rc;
        }
        closedir(d);
    }
    rc = pch_rfile_list(ctx, (const char *)p.data, on_manifest, &ids, err);
    pch_buf_dispose(&p);
    if (rc == PCH_ENOMEM) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    if (rc == PCH_OK && !ids.n && pch_rfile_is_remote(root))   /* a prefix exists only through its objects */
        rc = pch_error_set(err, PCH_ENOTFOUND, "%s: no manifests/ (not a pchronicle-vortex dataset root)", root);
    if (rc == PCH_OK && !(v = pch_calloc(ctx, ids.n ? ids.n : 1, sizeof *v))) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    if (rc < 0) { pch_free(ctx, ids.v); return rc; }
    have_cur = pj_current_read(ctx, root, &cur, NULL, &e) == PCH_OK;
    if (pj_pins_load(ctx, root, &pins, &n_pins, &e) < 0) n_pins = 0;    /* listed without their pins */
    for (size_t i = 0; i < ids.n; i++) {
        snprintf(v[i].snapshot_id, sizeof v[i].snapshot_id, "%s", ids.v[i]);
        v[i].current = have_cur && strcmp(cur.snapshot_id, ids.v[i]) == 0;
        for (size_t k = 0; k < n_pins; k++)
            if (strcmp(pins[k].snapshot_id, ids.v[i]) == 0 && strlen(v[i].pins) + strlen(pins[k].name) + 2 < sizeof v[i].pins)
                snprintf(v[i].pins + strlen(v[i].pins), sizeof v[i].pins - strlen(v[i].pins), "%s%s", v[i].pins[0] ? "," : "", pins[k].name);
        describe(ctx, root, &v[i]);
    }
    pch_free(ctx, pins);
    if (ids.n > 1) qsort(v, ids.n, sizeof *v, cmp_info);          /* ids sort by creation time */
    *out = v;
    *n_out = ids.n;
    pch_free(ctx, ids.v);
    return PCH_OK;
}

void pch_vxp_snapshots_free(pch_ctx *ctx, pch_vxp_snapshot_info *v)
{
    pch_free(ctx, v);
}

int pch_vxp_repair(pch_ctx *ctx, const char *root, const char *snapshot_id, pch_vxp_finding_cb cb, void *payload,
                   size_t *n_findings, pch_error *err)
{
    PCH_TRY(pj_local_only(root, "repair", err));
    pj_current cur, at;
    pch_buf raw;
    pch_error e;
    bool absent;
    int rc;
    *n_findings = 0;
    pch_buf_init(&raw, ctx);
    /* only a lost or damaged CURRENT is rebound: a readable one is not repair's to change;
    ** raw: the bytes CURRENT holds now, whatever they are (the swap publishes only over them) */
    rc = pj_current_read(ctx, root, &cur, &raw, &e);
    absent = rc == PCH_ENOTFOUND;
    if (rc < 0 && !absent && rc != PCH_ECORRUPT && rc != PCH_EUNSUPPORTED) {   /* unreadable, not damaged */
        rc = pch_error_set(err, rc, "%s", e.msg);
        goto done;
    }
    if (rc == PCH_OK) {
        pch_json_parser *mp = NULL;
        pch_buf text;
        const pch_json_value *m;
        pch_buf_init(&text, ctx);
        rc = pj_manifest_load(ctx, root, &cur, &mp, &text, &m, &e);
        pch_json_parser_free(mp);
        pch_buf_dispose(&text);
        if (rc == PCH_OK) {
            rc = pch_error_set(err, PCH_EEXISTS, "CURRENT is readable (snapshot %s): repair rebinds only a lost or damaged CURRENT",
                               cur.snapshot_id);
            goto done;
        }
    }
    if ((rc = pj_current_at(ctx, root, snapshot_id, &at, err)) < 0) goto done;
    /* the whole snapshot checked before anything is bound to it */
    if ((rc = pch_vxp_verify_at(ctx, root, snapshot_id, cb, payload, n_findings, err)) < 0) goto done;
    if (*n_findings) {
        rc = pch_error_set(err, PCH_ECORRUPT, "snapshot %s is not healthy (%zu findings): CURRENT left as it was",
                           snapshot_id, *n_findings);
        goto done;
    }
    rc = pj_current_swap(ctx, root, absent ? NULL : &raw, absent ? "absent" : "damaged", at.snapshot_id, at.digest, err);
done:
    pch_buf_dispose(&raw);
    return rc;
}

/* ---- pins (§12.4) ---- */

static bool pin_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || s[0] == '.' || s[0] == '-') return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

/* The names of root/pins/ (a local directory or an S3 prefix), "." files left out. */
typedef struct namelist { pch_ctx *ctx; char **v; size_t n, cap; } namelist;

static int on_pin(void *arg, const char *name)
{
    namelist *l = arg;
    if (name[0] == '.') return 0;                    /* a publish's temporary file */
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        char **nv = pch_realloc(l->ctx, l->v, nc * sizeof *nv);
        if (!nv) return PCH_ENOMEM;
        l->v = nv;
        l->cap = nc;
    }
    if (!(l->v[l->n] = pch_strndup(l->ctx, name, strlen(name)))) return PCH_ENOMEM;
    l->n++;
    return 0;
}

int pj_pins_load(pch_ctx *ctx, const char *root, pj_pin **out, size_t *n_out, pch_error *err)
{
    pj_pin *v = NULL;
    size_t n = 0;
    namelist names = { ctx, NULL, 0, 0 };
    pch_buf p, text;
    int rc;
    *out = NULL;
    *n_out = 0;
    pch_buf_init(&p, ctx);
    pch_buf_init(&text, ctx);
    pch_buf_printf(&p, "%s/pins", root);
    if (p.oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    rc = pch_rfile_list(ctx, (const char *)p.data, on_pin, &names, err);   /* no pins/: no pins */
    if (rc == PCH_ENOMEM) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    if (rc == PCH_OK && names.n && !(v = pch_calloc(ctx, names.n, sizeof *v))) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    for (size_t i = 0; rc == PCH_OK && i < names.n; i++) {
        const char *fn = names.v[i];
        size_t l = strlen(fn);
        pch_json_parser *jp = NULL;
        const pch_json_value *v0;
        char name[72], fmt[64];
        if (l <= 5 || l - 5 >= sizeof name || strcmp(fn + l - 5, ".json") != 0) {
            rc = pch_error_set(err, PCH_ECORRUPT, "pins/%s: not a pin (pins/<name>.json)", fn);
            break;
        }
        memcpy(name, fn, l - 5);
        name[l - 5] = 0;
        pch_buf_clear(&p);
        pch_buf_clear(&text);
        pch_buf_printf(&p, "%s/pins/%s", root, fn);
        if (p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); break; }
        if ((rc = pch_rfile_read_all(ctx, &text, (const char *)p.data, 4096, err)) < 0) break;
        rc = pch_json_parser_new(&jp, ctx, NULL, err);
        if (rc == PCH_OK && (pch_json_parser_parse(jp, text.data ? (const char *)text.data : "", text.len, &v0, NULL) < 0 ||
                             v0->kind != PCH_JSON_OBJECT || !pj_json_str(v0, "format", fmt, sizeof fmt) ||
                             strcmp(fmt, PJ_PIN_FORMAT) != 0 ||
                             !pj_json_str(v0, "snapshot_id", v[n].snapshot_id, sizeof v[n].snapshot_id) ||
                             !pj_snapshot_id_ok(v[n].snapshot_id) || !pin_name_ok(name)))
            rc = pch_error_set(err, PCH_ECORRUPT, "pins/%s: not a %s pin naming a snapshot id", fn, PJ_PIN_FORMAT);
        pch_json_parser_free(jp);
        if (rc == PCH_OK) snprintf(v[n++].name, sizeof v[n].name, "%s", name);
    }
    for (size_t i = 0; i < names.n; i++) pch_free(ctx, names.v[i]);
    pch_free(ctx, names.v);
    pch_buf_dispose(&p);
    pch_buf_dispose(&text);
    if (rc < 0) { pch_free(ctx, v); return rc; }
    *out = v;
    *n_out = n;
    return PCH_OK;
}

/* A pin on object storage: one object, written whole or removed (no commit lock there: a
** vacuum that is deciding as the pin is made may not see it; docs/object-storage.md). */
static int pin_remote(pch_ctx *ctx, const char *root, const char *name, const pj_current *at, pch_error *err)
{
    pch_store *st = NULL;
    pch_buf key, body;
    int rc;
    pch_buf_init(&key, ctx);
    pch_buf_init(&body, ctx);
    pch_buf_printf(&key, "pins/%s.json", name);
    if (at) pch_buf_printf(&body, "{\"format\":\"%s\",\"snapshot_id\":\"%s\"}\n", PJ_PIN_FORMAT, at->snapshot_id);
    if (key.oom || body.oom) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    else if ((rc = pch_store_open(ctx, root, NULL, &st, err)) == PCH_OK) {
        if (at) {
            rc = pch_store_put(st, (const char *)key.data, body.data, body.len, 0, err);
        } else {
            pch_object_info info;
            rc = pch_store_head(st, (const char *)key.data, &info, err);
            if (rc == PCH_ENOTFOUND) rc = pch_error_set(err, PCH_ENOTFOUND, "no pin '%s' in %s", name, root);
            else if (rc == PCH_OK) rc = pch_store_delete(st, (const char *)key.data, err);
        }
    }
    pch_store_close(st);
    pch_buf_dispose(&key);
    pch_buf_dispose(&body);
    return rc;
}

int pch_vxp_pin(pch_ctx *ctx, const char *root, const char *name, const char *snapshot_id, pch_error *err)
{
    pj_current at;
    pch_buf p, body;
    int lock = -1, rc;
    if (!name || !pin_name_ok(name))
        return pch_error_set(err, PCH_EINVAL, "pin name '%s': 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-'", name ? name : "");
    if (snapshot_id) PCH_TRY(pj_current_at(ctx, root, snapshot_id, &at, err));
    if (pch_rfile_is_remote(root)) return pin_remote(ctx, root, name, snapshot_id ? &at : NULL, err);
    pch_buf_init(&p, ctx);
    pch_buf_init(&body, ctx);
    /* under the commit lock: vacuum decides under it, so a pin is either seen or not yet made */
    if ((rc = lock = pj_commit_lock(ctx, root, err)) < 0) goto done;
    pch_buf_printf(&p, "%s/pins", root);
    if (p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
    if (snapshot_id && (rc = pch_mkdirs((const char *)p.data, err)) < 0) goto done;
    pch_buf_printf(&p, "/%s.json", name);
    if (p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
    if (!snapshot_id) {
        if (unlink((const char *)p.data) != 0)
            rc = errno == ENOENT ? pch_error_set(err, PCH_ENOTFOUND, "no pin '%s' in %s", name, root)
                                 : pch_error_set_sys(err, PCH_EIO, errno, "remove %s", (const char *)p.data);
        goto done;
    }
    pch_buf_printf(&body, "{\"format\":\"%s\",\"snapshot_id\":\"%s\"}\n", PJ_PIN_FORMAT, at.snapshot_id);
    rc = body.oom ? pch_error_set(err, PCH_ENOMEM, "projection: out of memory")
                  : pch_file_publish((const char *)p.data, body.data, body.len, err);
done:
    if (lock >= 0) close(lock);
    pch_buf_dispose(&p);
    pch_buf_dispose(&body);
    return rc;
}
