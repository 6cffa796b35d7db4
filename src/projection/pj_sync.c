/* Incremental sync (RFC-0006 §11.2, §10.4, §12.2): a new snapshot that costs what changed.
**
** The parent snapshot (CURRENT when the sync starts, held by a reader lease for the whole
** sync) keeps a document list (pj_docs.c): path, size, time, BLAKE3 of the bytes. The input
** is walked once; a file whose size and time match its record is not read; one that is read
** and hashes the same is unchanged. Each added or changed document is projected whole into
** new L0 data files; every trajectory of a changed or removed document is shadowed: its rows
** go into its data file's deleted rows, and a key that the document no longer has gets a
** tombstone. The new L0 directory run (new revisions + tombstones), the new document list and
** a manifest that keeps every other file are published as one snapshot; CURRENT is swapped
** only if it is still the parent (else "stale commit", §11.4). Nothing changed: no snapshot.
**
** Keys come from their own document only (docs/atif.md "Stable keys"), so a document that did
** not change keeps every key, and an edited one keeps the keys it still has. */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "projection/pj_int.h"

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

/* A file the walk selected for reading (size or time changed, or new). */
typedef struct seen_file {
    char *path;
    uint64_t bytes;
    int64_t mtime_ns;
    bool handled;                 /* reached on_doc (else it was rejected) */
} seen_file;

typedef struct sync_st {
    pch_ctx *ctx;
    pch_vxp_builder *b;
    const char *root;
    const pch_json_value *parent_manifest;
    pj_docrec *old;               /* the parent's document list (sorted) */
    size_t n_old;
    pj_task docs;                 /* loads old and old_seen while the walk runs */
    uint8_t *old_seen;            /* per old record: the walk found its file */
    pj_docrec *keep;              /* records carried into the new list */
    size_t n_keep, cap_keep;
    seen_file *sel;               /* files read, in walk order */
    size_t n_sel, cap_sel, sel_cursor;
    pch_strset changed;           /* paths whose old trajectories are shadowed */
    pch_strset new_keys;          /* "source\x1frun\x1ftraj" of the projected documents, "\0doc" after */
    pch_vxp_sync_stats *st;
    pch_error doc_err;
    bool doc_failed;
    pch_atif_finding_cb findings;
    void *findings_payload;
} sync_st;

static int keep_rec(sync_st *x, const pj_docrec *r, uint64_t bytes, int64_t mtime_ns)
{
    pj_docrec *k;
    if (x->n_keep == x->cap_keep) {
        size_t nc = x->cap_keep ? x->cap_keep * 2 : 256;
        pj_docrec *nk = realloc(x->keep, nc * sizeof *nk);
        if (!nk) return PCH_ENOMEM;
        x->keep = nk;
        x->cap_keep = nc;
    }
    k = &x->keep[x->n_keep];
    *k = *r;
    if (!(k->path = strdup(r->path))) return PCH_ENOMEM;
    k->bytes = bytes;
    k->mtime_ns = mtime_ns;
    x->n_keep++;
    return PCH_OK;
}

/* pch_atif_options.select: read a file only when it is new or its size or time changed. */
static int on_select(const char *path, const char *rel, uint64_t bytes, int64_t mtime_ns, void *payload)
{
    sync_st *x = payload;
    const pj_docrec *o = pj_docs_find(x->old, x->n_old, rel);
    seen_file *f;
    (void)path;
    if (o) x->old_seen[o - x->old] = 1;
    if (o && o->mtime_ns >= 0 && o->bytes == bytes && o->mtime_ns == mtime_ns) {
        x->st->unchanged++;
        if (keep_rec(x, o, o->bytes, o->mtime_ns) < 0) return PCH_ENOMEM;
        return 0;
    }
    if (x->n_sel == x->cap_sel) {
        size_t nc = x->cap_sel ? x->cap_sel * 2 : 64;
        seen_file *ns = realloc(x->sel, nc * sizeof *ns);
        if (!ns) return PCH_ENOMEM;
        x->sel = ns;
        x->cap_sel = nc;
    }
    f = &x->sel[x->n_sel];
    memset(f, 0, sizeof *f);
    if (!(f->path = strdup(rel))) return PCH_ENOMEM;
    f->bytes = bytes;
    f->mtime_ns = mtime_ns;
    x->n_sel++;
    x->st->read++;
    return 1;
}

static seen_file *selected_file(sync_st *x, const char *path)
{
    for (size_t k = x->sel_cursor; k < x->n_sel; k++)
        if (strcmp(x->sel[k].path, path) == 0) { x->sel_cursor = k + 1; return &x->sel[k]; }
    for (size_t k = 0; k < x->n_sel; k++)
        if (strcmp(x->sel[k].path, path) == 0) return &x->sel[k];
    return NULL;
}

/* "source\x1frun\x1ftraj" into a reused buffer (the shadowing pass looks up every entry's) */
static const char *key_into(pch_buf *b, const char *s, const char *r, const char *t)
{
    pch_buf_clear(b);
    pch_buf_append_str(b, s);
    pch_buf_putc(b, 0x1f);
    pch_buf_append_str(b, r);
    pch_buf_putc(b, 0x1f);
    pch_buf_append_str(b, t);
    pch_buf_putc(b, 0);
    return b->oom ? NULL : (const char *)b->data;
}

/* the key, then "\0doc": a new_keys entry (malloc'd, as the set frees it) */
static char *key_text(const char *s, const char *r, const char *t, const char *doc)
{
    pch_buf b;
    pch_buf_init(&b, NULL);
    if (!key_into(&b, s, r, t)) { pch_buf_dispose(&b); return NULL; }
    pch_buf_append_str(&b, doc);
    pch_buf_putc(&b, 0);
    if (b.oom) { pch_buf_dispose(&b); return NULL; }
    return (char *)pch_buf_detach(&b, NULL);
}

static int on_doc(pch_atif_doc *doc, void *payload)
{
    sync_st *x = payload;
    const pch_atif_trajectory *t0 = pch_atif_doc_get(doc, 0);
    const char *path = t0 && t0->doc_path ? t0->doc_path : "";
    const pj_docrec *o = pj_docs_find(x->old, x->n_old, path);
    seen_file *f = selected_file(x, path);
    uint8_t digest[32];
    uint64_t bytes = 0;
    int rc;
    if (f) f->handled = true;
    if (!pch_atif_doc_source(doc, digest, &bytes)) {
        pch_error_set(&x->doc_err, PCH_EINVAL, "projection: %s was read without its digest", path);
        x->doc_failed = true;
        return -1;
    }
    if (o && o->state == PJ_DOC_PROJECTED && o->has_digest && memcmp(o->digest, digest, 32) == 0) {
        /* the same bytes: unchanged (only its time moved) */
        x->st->unchanged++;
        return keep_rec(x, o, f ? f->bytes : o->bytes, f ? f->mtime_ns : o->mtime_ns) < 0 ? PCH_ENOMEM : 0;
    }
    if (o && o->state == PJ_DOC_PROJECTED) {
        x->st->changed++;
        if (pch_strset_add(x->ctx, &x->changed, path) < 0) return PCH_ENOMEM;
    } else {
        x->st->added++;
    }
    for (size_t i = 0; i < pch_atif_doc_count(doc); i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(doc, i);
        char *k = key_text(t->source_id ? t->source_id : "", t->run_key, t->trajectory_key, path);
        if (!k) return PCH_ENOMEM;
        if ((rc = pch_strset_take(x->ctx, &x->new_keys, k)) < 0) { free(k); return PCH_ENOMEM; }
        if (rc == 0) free(k);          /* the directory write refuses the duplicate, naming both */
    }
    if ((f && (rc = pch_vxp_builder_note_file(x->b, path, f->bytes, f->mtime_ns, &x->doc_err)) < 0) ||
        (rc = pch_vxp_builder_add_doc(x->b, doc, 0, &x->doc_err)) < 0) {
        x->doc_failed = true;
        return -1;
    }
    return 0;
}

static int on_finding(const pch_atif_finding *f, void *payload)
{
    sync_st *x = payload;
    return x->findings ? x->findings(f, x->findings_payload) : 0;
}

static int cmp_range(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Merge the ranges of a (sorted, disjoint) with the nb new ones in b (any order) into *out:
** sorted, overlapping and touching ranges joined. */
static int merge_ranges(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t **out, size_t *n_out)
{
    uint64_t *all = malloc((na + nb + 1) * 16);
    size_t m = 0;
    if (!all) return PCH_ENOMEM;
    if (na) memcpy(all, a, na * 16);
    if (nb) memcpy(all + 2 * na, b, nb * 16);
    qsort(all, na + nb, 16, cmp_range);
    for (size_t i = 0; i < na + nb; i++) {
        if (m && all[2 * i] <= all[2 * (m - 1) + 1]) {
            if (all[2 * i + 1] > all[2 * (m - 1) + 1]) all[2 * (m - 1) + 1] = all[2 * i + 1];
        } else {
            all[2 * m] = all[2 * i];
            all[2 * m + 1] = all[2 * i + 1];
            m++;
        }
    }
    *out = all;
    *n_out = m;
    return PCH_OK;
}

typedef struct ent_ref { uint32_t file; uint64_t row, idx; } ent_ref;
static int cmp_ent_ref(const void *a, const void *b)
{
    const ent_ref *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* Shadow every trajectory of the changed and removed documents: their rows become deleted
** rows of their data files (a trajectory's pages run to the next trajectory's first row, or the
** file's end), and a key the new documents do not have again gets a tombstone. A new key that
** a kept document still holds is refused (keys stay unique, §5.2). */
static int shadow(sync_st *x, pch_vxp_snapshot *ps, pj_delta *d, pch_error *err)
{
    uint64_t n = pj_snapshot_n_entries(ps);
    size_t nf = pj_snapshot_n_files(ps);
    ent_ref *refs = NULL;
    uint64_t **add = NULL;
    size_t *n_add = NULL, *cap_add = NULL, n_refs = 0, cap_tombs = 0;
    pch_buf kb;
    int rc = PCH_OK;
    pch_buf_init(&kb, x->ctx);
    if (!(refs = malloc((size_t)(n ? n : 1) * sizeof *refs)) || !(add = calloc(nf + 1, sizeof *add)) ||
        !(n_add = calloc(nf + 1, sizeof *n_add)) || !(cap_add = calloc(nf + 1, sizeof *cap_add)) ||
        !(d->del = calloc(nf + 1, sizeof *d->del)) || !(d->n_del = calloc(nf + 1, sizeof *d->n_del))) { rc = nomem(err); goto done; }
    for (uint64_t i = 0; i < n; i++) {
        pj_entry_view v;
        if ((rc = pj_snapshot_entry_view(ps, i, &v, err)) < 0) goto done;
        if (!v.tomb) refs[n_refs++] = (ent_ref){ v.file, v.row, i };
    }
    qsort(refs, n_refs, sizeof *refs, cmp_ent_ref);
    for (size_t k = 0; k < n_refs; k++) {
        pj_entry_view v;
        const char *kt, *hit;
        bool shadowed;
        if ((rc = pj_snapshot_entry_view(ps, refs[k].idx, &v, err)) < 0) goto done;
        if (v.dead) continue;
        shadowed = pch_strset_find(&x->changed, v.doc_path) != NULL;
        if (!(kt = key_into(&kb, v.source_id, v.run_key, v.traj_key))) { rc = nomem(err); goto done; }
        hit = pch_strset_find(&x->new_keys, kt);
        if (!shadowed && hit) {
            rc = pch_error_set(err, PCH_EINVAL, "projection: trajectory key (%s, %s, %s) of %s is also in %s (keys must stay unique, docs/atif.md)",
                               v.source_id, v.run_key, v.traj_key, hit + strlen(hit) + 1, v.doc_path);
            goto done;
        }
        if (!shadowed) continue;
        {
            uint64_t rows, end;
            const uint64_t *del;
            size_t nd;
            pj_snapshot_file_info(ps, v.file, &rows, &del, &nd);
            end = k + 1 < n_refs && refs[k + 1].file == v.file ? refs[k + 1].row : rows;
            if (end <= v.row) { rc = pch_error_set(err, PCH_ECORRUPT, "projection: two trajectories at row %" PRIu64 " of one data file", v.row); goto done; }
            if (n_add[v.file] == cap_add[v.file]) {
                size_t nc = cap_add[v.file] ? cap_add[v.file] * 2 : 16;
                uint64_t *na = realloc(add[v.file], nc * 16);
                if (!na) { rc = nomem(err); goto done; }
                add[v.file] = na;
                cap_add[v.file] = nc;
            }
            add[v.file][2 * n_add[v.file]] = v.row;
            add[v.file][2 * n_add[v.file] + 1] = end;
            n_add[v.file]++;
        }
        if (!hit) {             /* the document no longer has this key: a tombstone */
            pj_tomb *t;
            if (d->n_tombs == cap_tombs) {
                size_t nc = cap_tombs ? cap_tombs * 2 : 64;
                pj_tomb *nt = realloc(d->tombs, nc * sizeof *nt);
                if (!nt) { rc = nomem(err); goto done; }
                d->tombs = nt;
                cap_tombs = nc;
            }
            t = &d->tombs[d->n_tombs];
            memset(t, 0, sizeof *t);
            d->n_tombs++;
            if (!(t->source_id = strdup(v.source_id)) || !(t->run_key = strdup(v.run_key)) || !(t->traj_key = strdup(v.traj_key)) ||
                !(t->doc_path = strdup(v.doc_path))) { rc = nomem(err); goto done; }
        }
    }
    for (size_t f = 0; f < nf; f++) {
        uint64_t rows;
        const uint64_t *del;
        size_t nd;
        pj_snapshot_file_info(ps, f, &rows, &del, &nd);
        if (!n_add[f] && !nd) continue;
        if (merge_ranges(del, nd, add[f], n_add[f], &d->del[f], &d->n_del[f]) < 0) { rc = nomem(err); goto done; }
    }
done:
    for (size_t f = 0; add && f < nf; f++) free(add[f]);
    free(add);
    free(n_add);
    free(cap_add);
    free(refs);
    pch_buf_dispose(&kb);
    return rc;
}

static void delta_dispose(pj_delta *d, size_t nf)
{
    for (size_t f = 0; d->del && f < nf; f++) free(d->del[f]);
    free(d->del);
    free(d->n_del);
    for (size_t i = 0; i < d->n_tombs; i++) {
        free(d->tombs[i].source_id); free(d->tombs[i].run_key); free(d->tombs[i].traj_key); free(d->tombs[i].doc_path);
    }
    free(d->tombs);
}

int pj_layout_options(const pch_json_value *m, pch_vxp_build_options *bo, char *source_id, size_t cap, uint64_t *revision,
                      pch_error *err)
{
    const pch_json_value *lay = pj_json_member(m, "layout", PCH_JSON_OBJECT), *lin = pj_json_member(m, "lineage", PCH_JSON_OBJECT);
    char v[32];
    const pch_json_value *pp;
    *bo = (pch_vxp_build_options)PCH_VXP_BUILD_OPTIONS_INIT;
    *revision = 0;
    if (!lay || !lin || !pj_json_str(lin, "source_id", source_id, cap))
        return pch_error_set(err, PCH_ECORRUPT, "projection: the snapshot's manifest lacks its layout or source id");
    pj_json_u64(lin, "revision", revision);
    pj_json_u64(lay, "cluster_bytes", &bo->cluster_bytes);
    pj_json_u64(lay, "file_bytes", &bo->file_bytes);
    pj_json_u64(lay, "pack_bytes", &bo->pack_bytes);
    pj_json_u64(lay, "hot_max_bytes", &bo->hot_max_bytes);
    pj_json_u64(lay, "cold_max_bytes", &bo->cold_max_bytes);
    pj_json_u64(lay, "directory_shard_rows", &bo->directory_shard_rows);
    pj_json_u64(lay, "dedup_min_bytes", &bo->dedup_min_bytes);
    pj_json_u64(lay, "frame_bytes", &bo->frame_bytes);
    bo->frame_rows = 0;        /* a layout from before frames by rows has none */
    pj_json_u64(lay, "frame_rows", &bo->frame_rows);
    bo->frame_ratio = 0;       /* nor from before small documents' frames */
    pj_json_u64(lay, "frame_ratio", &bo->frame_ratio);
    bo->zstd_dict_bytes = 0;   /* a layout from before dictionaries has none */
    pj_json_u64(lay, "zstd_dict_bytes", &bo->zstd_dict_bytes);
    if (pj_json_str(lay, "assets", v, sizeof v) && strcmp(v, "embed") == 0) bo->assets = PCH_VXP_ASSETS_EMBED;
    pp = pch_json_get(lay, "prompt_prefix", 13);
    bo->prompt_prefix = pp && pp->kind == PCH_JSON_FALSE ? 0 : 1;
    bo->source_id = source_id;
    return PCH_OK;
}

/* The parent's layout as build options (new L0 files are written as its files were), its keys
** made under the current rule, and the caller's source id the same. */
static int parent_options(const pch_json_value *m, const pch_vxp_sync_options *o, pch_vxp_build_options *bo,
                          char *source_id, size_t cap, uint64_t *revision, pch_error *err)
{
    const pch_json_value *lin = pj_json_member(m, "lineage", PCH_JSON_OBJECT);
    char v[32];
    PCH_TRY(pj_layout_options(m, bo, source_id, cap, revision, err));
    if (!pj_json_str(lin, "trajectory_keys", v, sizeof v) || strcmp(v, PJ_KEY_RULE) != 0)
        return pch_error_set(err, PCH_EUNSUPPORTED, "projection: the snapshot's keys were made before stable keys (they may depend on "
                             "other documents): build the projection again before syncing it");
    if (o->source_id && strcmp(o->source_id, source_id) != 0)
        return pch_error_set(err, PCH_EINVAL, "projection: source id '%s' differs from the snapshot's '%s' (keys would change)",
                             o->source_id, source_id);
    bo->threads = o->threads;
    bo->partition = o->partition;
    bo->progress = o->progress;
    return PCH_OK;
}

/* The parent's trajectory directory, loaded by a task of its own while the input is walked:
** the walk (a stat per file) is most of a small sync, and the shards are needed as soon as
** it ends (shadowing the changed documents). Nothing else touches the snapshot meanwhile.
** A local root only: on object storage a sync with nothing changed reads no shard. */
static int dir_load(void *arg, pch_error *err)
{
    return pj_snapshot_load_all(arg, err);
}

/* The parent's document list, loaded the same way while the walk lists the input: the walk
** asks about its files only once it has listed them all (pch_atif_options.walked), so the
** list is needed only then. */
static int docs_load(void *arg, pch_error *err)
{
    sync_st *x = arg;
    int rc = pj_docs_load(x->ctx, x->root, x->parent_manifest, &x->old, &x->n_old, err);
    if (rc == PCH_OK && !(x->old_seen = calloc(x->n_old + 1, 1))) rc = nomem(err);
    return rc;
}

/* pch_atif_options.walked: the list loaded; its error is the sync's (doc_failed), not the
** walk's "stopped by the walked callback" */
static int docs_load_join(void *payload)
{
    sync_st *x = payload;
    int rc = pj_task_join(&x->docs, &x->doc_err);
    if (rc < 0) x->doc_failed = true;
    return rc;
}

int pch_vxp_sync(pch_ctx *ctx, const char *input, const char *root, const pch_vxp_sync_options *opts,
                 pch_atif_finding_cb findings, void *payload, pch_vxp_sync_stats *st, pch_error *err)
{
    static const pch_vxp_sync_options defaults = PCH_VXP_SYNC_OPTIONS_INIT;
    pch_atif_options ao = PCH_ATIF_OPTIONS_INIT;
    pch_vxp_build_options bo;
    pch_vxp_snapshot *ps = NULL;
    size_t nf = 0;
    pj_current cur;
    pch_buf cur_raw;
    pj_delta d;
    sync_st x;
    pj_task dl;
    pch_atif_dir_stats ds;
    char source_id[512];
    const pj_current *bcur;
    bool had;
    double t0 = pch_time_mono();
    int rc;
    if (!opts) opts = &defaults;
    if (opts->version != PCH_VXP_SYNC_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "projection: sync options version %u (want %u)", opts->version, PCH_VXP_SYNC_OPTIONS_VERSION);
    memset(st, 0, sizeof *st);
    memset(&d, 0, sizeof d);
    memset(&x, 0, sizeof x);
    memset(&dl, 0, sizeof dl);
    pch_buf_init(&cur_raw, ctx);
#define CK(e) do { if ((rc = (e)) < 0) goto done; } while (0)
    /* the parent: CURRENT now, held by a lease until the sync ends */
    rc = pj_head_read(ctx, root, &cur, &cur_raw, err);
    if (rc == PCH_ENOTFOUND) { rc = pch_error_set(err, PCH_ENOTFOUND, "%s has no snapshot to sync: build it first", root); goto done; }
    CK(rc);
    CK(pj_snapshot_open_cur(&ps, ctx, root, &cur, err));
    nf = pj_snapshot_n_files(ps);
    CK(parent_options(pj_snapshot_manifest(ps), opts, &bo, source_id, sizeof source_id, &d.revision, err));
    d.revision++;
    bo.assets_root = input;
    bo.source_uri = input;
    x.ctx = ctx;
    x.root = root;
    x.parent_manifest = pj_snapshot_manifest(ps);
    /* a local root loads its document list while the walk runs; on object storage here */
    pj_task_start(&x.docs, docs_load, &x, !pch_rfile_is_remote(root));
    if (pch_rfile_is_remote(root)) CK(pj_task_join(&x.docs, err));
    CK(pch_vxp_builder_open(&x.b, ctx, root, &bo, err));
    {   /* repeats of what the parent stores externally become references (§9.3) */
        pj_blobs *pb;
        CK(pj_snapshot_blobs(ps, &pb, err));
        pj_builder_parent_blobs(x.b, pb);
    }
    bcur = pj_builder_parent(x.b, &had);
    if (!had || strcmp(bcur->snapshot_id, cur.snapshot_id) != 0) {
        rc = pch_error_set(err, PCH_EEXISTS, "stale commit: CURRENT changed while the sync started (now %s); nothing published", had ? bcur->snapshot_id : "absent");
        goto done;
    }
    d.parent = pj_snapshot_manifest(ps);
    d.max_l0_runs = opts->max_l0_runs;
    d.max_l0_memory = opts->max_l0_memory;
    x.st = st;
    x.findings = findings;
    x.findings_payload = payload;
    pch_error_clear(&x.doc_err);
    ao.source_id = source_id;
    ao.source_fingerprint = source_id;
    ao.threads = opts->threads ? opts->threads : 2;
    ao.select = on_select;
    ao.select_payload = &x;
    ao.walked = docs_load_join;
    ao.digest = true;
    ao.tokens = true;
    memset(&ds, 0, sizeof ds);
    /* on object storage the shards cost requests: read only once something changed */
    pj_task_start(&dl, dir_load, ps, !pch_rfile_is_remote(root));
    rc = pch_atif_dir_import(ctx, input, &ao, on_doc, NULL, on_finding, &x, &ds, err);
    if (rc < 0 && x.doc_failed) *err = x.doc_err;
    CK(rc);
    st->rejected = ds.rejected;
    st->input_bytes = ds.bytes;
    /* files read but rejected: listed as rejected; a document that was projected before is
    ** now gone from the projection */
    for (size_t k = 0; k < x.n_sel; k++) {
        const seen_file *f = &x.sel[k];
        const pj_docrec *o;
        pj_docrec r;
        if (f->handled) continue;
        o = pj_docs_find(x.old, x.n_old, f->path);
        memset(&r, 0, sizeof r);
        r.path = f->path;
        r.state = PJ_DOC_REJECTED;
        CK(keep_rec(&x, &r, f->bytes, f->mtime_ns) < 0 ? nomem(err) : PCH_OK);
        if (o && o->state == PJ_DOC_PROJECTED) {
            st->removed++;
            CK(pch_strset_add(ctx, &x.changed, o->path) < 0 ? nomem(err) : PCH_OK);
        } else if (!o || o->bytes != f->bytes || o->mtime_ns != f->mtime_ns) {
            st->rejected_changed++;
        }
    }
    /* documents gone from the input */
    for (size_t k = 0; k < x.n_old; k++) {
        if (x.old_seen[k]) continue;
        if (x.old[k].state == PJ_DOC_PROJECTED) {
            st->removed++;
            CK(pch_strset_add(ctx, &x.changed, x.old[k].path) < 0 ? nomem(err) : PCH_OK);
        } else {
            st->rejected_changed++;
        }
    }
    if (!st->added && !st->changed && !st->removed && !st->rejected_changed) {
        snprintf(st->snapshot_id, sizeof st->snapshot_id, "%.39s", cur.snapshot_id);
        st->seconds = pch_time_mono() - t0;
        rc = PCH_OK;           /* nothing changed: no snapshot (§11.2) */
        goto done;
    }
    CK(pj_task_join(&dl, err));
    CK(shadow(&x, ps, &d, err));
    d.docs = x.keep;
    d.n_docs = x.n_keep;
    d.added = st->added;
    d.changed = st->changed;
    d.removed = st->removed;
    d.unchanged = st->unchanged;
    d.read = st->read;
    pj_builder_delta(x.b, &d);
    CK(pch_vxp_builder_commit(x.b, &st->build, err));
    st->published = true;
    st->tombstones = d.n_tombs;
    snprintf(st->snapshot_id, sizeof st->snapshot_id, "%s", st->build.snapshot_id);
    st->seconds = pch_time_mono() - t0;
#undef CK
done:
    if (x.docs.running) pj_task_join(&x.docs, NULL);
    if (dl.running) pj_task_join(&dl, NULL);
    pch_vxp_builder_free(x.b);
    delta_dispose(&d, nf);
    pj_docs_free(x.keep, x.n_keep);
    for (size_t k = 0; k < x.n_sel; k++) free(x.sel[k].path);
    free(x.sel);
    free(x.old_seen);
    pch_strset_dispose(ctx, &x.changed);
    pch_strset_dispose(ctx, &x.new_keys);
    pj_docs_free(x.old, x.n_old);
    pch_vxp_snapshot_free(ps);
    pch_buf_dispose(&cur_raw);
    return rc;
}
