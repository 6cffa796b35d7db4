/* The snapshots of a root (RFC-0006 §10.2, §12.4, §15): list them, name one other than
** CURRENT's (--snapshot), and rebind a lost or damaged CURRENT to one after verifying it
** (repair). A snapshot is its immutable manifest, manifests/<id>.json; CURRENT pins one of
** them by digest. Without CURRENT nothing says which snapshot is the published one, so a
** reader refuses ("source unavailable") and nothing ever picks the newest file name: a
** person names the snapshot, and repair checks it whole before binding it. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
    if (access((const char *)p.data, F_OK) != 0 && errno == ENOENT)
        rc = pch_error_set(err, PCH_ENOTFOUND, "no snapshot %s in %s (see `pchronicle-vortex snapshots %s`)", id, root, root);
    else
        rc = pj_file_digest((const char *)p.data, cur->digest, NULL, err);
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

int pch_vxp_snapshots(pch_ctx *ctx, const char *root, pch_vxp_snapshot_info **out, size_t *n_out, pch_error *err)
{
    pch_vxp_snapshot_info *v = NULL;
    size_t n = 0, cap = 0;
    pj_current cur;
    pch_error e;
    bool have_cur;
    pch_buf p;
    DIR *d;
    struct dirent *de;
    int rc = PCH_OK;
    *out = NULL;
    *n_out = 0;
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/manifests", root);
    if (p.oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    d = opendir((const char *)p.data);
    if (!d) {
        rc = errno == ENOENT ? pch_error_set(err, PCH_ENOTFOUND, "%s: no manifests/ (not a pchronicle-vortex dataset root)", root)
                             : pch_error_set_sys(err, PCH_EIO, errno, "open %s", (const char *)p.data);
        pch_buf_dispose(&p);
        return rc;
    }
    pch_buf_dispose(&p);
    have_cur = pj_current_read(ctx, root, &cur, NULL, &e) == PCH_OK;
    while ((de = readdir(d)) && rc == PCH_OK) {
        size_t l = strlen(de->d_name);
        char id[64];
        if (l <= 5 || l - 5 >= sizeof id || strcmp(de->d_name + l - 5, ".json") != 0) continue;
        memcpy(id, de->d_name, l - 5);
        id[l - 5] = 0;
        if (!pj_snapshot_id_ok(id)) continue;            /* not a manifest's name */
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            pch_vxp_snapshot_info *nv = pch_realloc(ctx, v, nc * sizeof *nv);
            if (!nv) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); break; }
            v = nv;
            cap = nc;
        }
        memset(&v[n], 0, sizeof v[n]);
        snprintf(v[n].snapshot_id, sizeof v[n].snapshot_id, "%s", id);
        v[n].current = have_cur && strcmp(cur.snapshot_id, id) == 0;
        describe(ctx, root, &v[n]);
        n++;
    }
    closedir(d);
    if (rc < 0) { pch_free(ctx, v); return rc; }
    if (n > 1) qsort(v, n, sizeof *v, cmp_info);          /* ids sort by creation time */
    *out = v;
    *n_out = n;
    return PCH_OK;
}

void pch_vxp_snapshots_free(pch_ctx *ctx, pch_vxp_snapshot_info *v)
{
    pch_free(ctx, v);
}

int pch_vxp_repair(pch_ctx *ctx, const char *root, const char *snapshot_id, pch_vxp_finding_cb cb, void *payload,
                   size_t *n_findings, pch_error *err)
{
    pj_current cur, at;
    pch_buf raw, p;
    pch_error e;
    int rc;
    *n_findings = 0;
    pch_buf_init(&raw, ctx);
    pch_buf_init(&p, ctx);
    /* only a lost or damaged CURRENT is rebound: a readable one is not repair's to change */
    rc = pj_current_read(ctx, root, &cur, &raw, &e);
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
    /* the bytes CURRENT holds now, whatever they are: the swap publishes only over them */
    pch_buf_clear(&raw);
    pch_buf_printf(&p, "%s/CURRENT", root);
    if (p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
    rc = pch_file_read_all(&raw, (const char *)p.data, 64 * 1024, &e);
    bool absent = rc == PCH_ENOTFOUND || (rc < 0 && access((const char *)p.data, F_OK) != 0 && errno == ENOENT);
    if (rc < 0 && !absent) { rc = pch_error_set(err, rc, "CURRENT: %s", e.msg); goto done; }
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
    pch_buf_dispose(&p);
    return rc;
}
