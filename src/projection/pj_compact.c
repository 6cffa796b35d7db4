/* Compaction (RFC-0006 §12.3): a new snapshot with one base trajectory directory and no L0
** run, whose data files are level 1.
**
** It reads a pinned snapshot (CURRENT when it starts, held by a reader lease throughout) and
** decides per data file (tiered, as an LSM does): every L0 file, every file whose shadowed
** share reaches --rewrite-shadowed and every small file is rewritten; the others are kept as
** they are (with their deleted rows) and their live directory entries carried into the new
** base directory. The live rows of the rewritten files are copied as they are (copy_merged:
** each cluster decoded once, each row appended unchanged to the new clusters and encoded
** again, with its directory entry's keys and totals; the files' documents merged into the
** order a build writes them): no document is rebuilt or parsed. A file of
** another layout than the one written, a snapshot without a document list, and --reproject
** take the earlier path: each document rebuilt from the projection (the reconstruction `get`
** and `export` use, JSON-equal to its input) with the keys the directory holds, and projected
** again with the snapshot's own layout. A document lives in one file (clusters never split
** one, files roll between clusters). --full rewrites every file. The
** document list is carried as it is (the input did not change). So it changes no answer: the
** same documents, keys, relations and training reads. CURRENT is swapped only if it is still the snapshot that was read ("stale commit"
** otherwise, §11.4); the files it replaced stay until vacuum finds no retained snapshot that
** reaches them (§12.4). */
#include <inttypes.h>
#include <stdlib.h>

#include "projection/pj_int.h"

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

/* The §12.3 triggers met by manifest m (why: the first one, as text). */
static bool triggers(const pch_json_value *m, const pch_vxp_compact_options *o, char *why, size_t cap)
{
    const pch_json_value *mt = pj_json_member(m, "maintenance", PCH_JSON_OBJECT);
    const pch_json_value *df = pj_json_member(m, "data_files", PCH_JSON_ARRAY);
    const pch_json_value *lay = pj_json_member(m, "layout", PCH_JSON_OBJECT);
    uint64_t l0_files = 0, l0_runs = 0, rows = 0, deleted = 0, small = 0, file_bytes = 0;
    bool required = false;
    *why = 0;
    if (mt) {
        const pch_json_value *rq = pch_json_get(mt, "required", 8);
        pj_json_u64(mt, "l0_files", &l0_files);
        pj_json_u64(mt, "l0_runs", &l0_runs);
        pj_json_u64(mt, "rows", &rows);
        pj_json_u64(mt, "deleted_rows", &deleted);
        required = rq && rq->kind == PCH_JSON_TRUE;
    }
    if (lay) pj_json_u64(lay, "file_bytes", &file_bytes);
    for (uint32_t i = 0; df && i < df->n; i++) {
        uint64_t b = 0;
        pj_json_u64(&df->u.items[i], "bytes", &b);
        small += file_bytes && b < file_bytes / 4;
    }
    if (required) snprintf(why, cap, "the snapshot says maintenance required");
    else if (o->l0_runs && l0_runs >= o->l0_runs) snprintf(why, cap, "%" PRIu64 " L0 directory runs (trigger %" PRIu64 ")", l0_runs, o->l0_runs);
    else if (o->l0_files && l0_files >= o->l0_files) snprintf(why, cap, "%" PRIu64 " L0 data files (trigger %" PRIu64 ")", l0_files, o->l0_files);
    else if (o->max_shadowed_pct && rows && deleted * 100 >= o->max_shadowed_pct * rows)
        snprintf(why, cap, "%.1f %% of the rows shadowed (trigger %" PRIu64 " %%)", 100.0 * (double)deleted / (double)rows, o->max_shadowed_pct);
    else if (o->small_files && small >= o->small_files)
        snprintf(why, cap, "%" PRIu64 " small data files (below a quarter of the file size; trigger %" PRIu64 ")", small, o->small_files);
    return *why != 0;
}

int pch_vxp_compact_due(pch_ctx *ctx, const char *root, const pch_vxp_compact_options *o, bool *due, char *why, size_t cap,
                        pch_error *err)
{
    static const pch_vxp_compact_options defaults = PCH_VXP_COMPACT_OPTIONS_INIT;
    pj_current cur;
    pch_json_parser *mp = NULL;
    pch_buf text;
    const pch_json_value *m;
    int rc;
    if (!o) o = &defaults;
    *due = false;
    if (cap) *why = 0;
    pch_buf_init(&text, ctx);
    if ((rc = pj_head_read(ctx, root, &cur, NULL, err)) == PCH_OK && (rc = pj_manifest_load(ctx, root, &cur, &mp, &text, &m, err)) == PCH_OK) {
        char w[256];
        *due = triggers(m, o, w, sizeof w);
        if (cap) snprintf(why, cap, "%s", w);
    }
    pch_json_parser_free(mp);
    pch_buf_dispose(&text);
    return rc;
}

/* A directory entry placed in a rewritten file: its row, and its index in the snapshot. */
typedef struct placed { uint32_t file; uint64_t row, idx; } placed;

static int cmp_placed(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_doc_path(const void *key, const void *rec) { return strcmp(key, ((const pj_docrec *)rec)->path); }

/* A document's ATIF bytes as the document list recorded them (0: not recorded). */
static uint64_t doc_bytes(const pj_docrec *docs, size_t n, const char *path)
{
    const pj_docrec *r = n ? bsearch(path, docs, n, sizeof *docs, cmp_doc_path) : NULL;
    return r ? r->bytes : 0;
}

/* Paths in the order a build's walk imports documents (pch_atif__walk: each directory's names
** sorted, depth first): bytes compared, '/' below every other byte. */
static int walk_cmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        unsigned x = !*a ? 0 : *a == '/' ? 1 : (unsigned char)*a + 1u;
        unsigned y = !*b ? 0 : *b == '/' ? 1 : (unsigned char)*b + 1u;
        if (x != y) return x < y ? -1 : 1;
        if (!x) return 0;
    }
}

/* A document of a rewritten file: the row of its first live trajectory and its path. */
typedef struct docstart { uint64_t row; const char *path; } docstart;

/* A rewritten data file read in row order, one document at a time (copy_doc): its placed
** entries, its documents, the next row to look at and the cluster that holds it (the
** cursor's own, so the merge holds a cluster of each file it interleaves). */
typedef struct fcur {
    size_t f;
    const placed *pl;
    size_t n_pl, k;                   /* entries placed in f, by row; k: the next to match */
    const docstart *ds;
    size_t n_ds, d;                   /* f's documents, by row; d: the next to copy */
    uint64_t row, rows;               /* next row to look at; rows of f */
    uint32_t c;                       /* cluster of `row` */
    pch_vx_array *arr;                /* decoded cluster c (NULL: none yet) */
    pch_vx_dtype *dt;
    pj_rows r;
    uint64_t begin, end;
    pj_page_seq seq;
    bool live;                        /* the trajectory whose pages follow is live */
} fcur;

static void fcur_drop(fcur *u)
{
    pch_vx_array_free(u->arr);
    pch_vx_dtype_free(u->dt);
    u->arr = NULL;
    u->dt = NULL;
}

/* Copy document u->d of file u->f (§12.3): rows from u->row up to the next document's first
** row (or the file's end, after its last), as the build wrote them: each row of a live
** trajectory (its page 0 and continuation pages) appended unchanged, the rows of shadowed and
** deleted ones skipped. Every row is fed to the page-sequence check, as verify checks it. */
static int copy_doc(pch_vxp_snapshot *ps, pch_vxp_builder *b, fcur *u, const pj_docrec *docs, size_t n_docs,
                    pch_vxp_compact_stats *st, pch_error *err)
{
    const docstart *dc = &u->ds[u->d];
    uint64_t to = u->d + 1 < u->n_ds ? u->ds[u->d + 1].row : u->rows, logical = 0, in;
    char msg[600];
    for (; u->row < to; u->row++) {
        uint64_t page, pages, row = u->row;
        const char *key;
        size_t key_len;
        bool cont;
        pj_entry_view v;
        if (!u->arr || row >= u->end) {
            uint64_t cb, ce;
            fcur_drop(u);
            for (pj_snapshot_cluster_range(ps, u->f, u->c, &cb, &ce); row >= ce; pj_snapshot_cluster_range(ps, u->f, u->c, &cb, &ce))
                u->c++;   /* clusters wholly dead are never decoded */
            PCH_TRY(pj_snapshot_cluster_take(ps, u->f, u->c, &u->arr, &u->dt, &u->r, &u->begin, &u->end, err));
        }
        pj_model_page_info(&u->r, row - u->begin, &page, &pages, &key, &key_len);
        if (pj_page_seq_next(&u->seq, page, pages, key, key_len, &cont, msg, sizeof msg) < 0)
            return pch_error_set(err, PCH_ECORRUPT, "data file %zu row %" PRIu64 ": %s", u->f, row, msg);
        if (cont) {
            if (u->live) PCH_TRY(pj_builder_copy_row(b, u->arr, &u->r, row - u->begin, NULL, page + 1 < pages, err));
            continue;
        }
        while (u->k < u->n_pl && u->pl[u->k].row < row) u->k++;
        u->live = u->k < u->n_pl && u->pl[u->k].row == row;
        if (u->live) {
            PCH_TRY(pj_snapshot_entry_view(ps, u->pl[u->k].idx, &v, err));
            u->live = !v.dead;
        }
        if (!u->live) continue;
        logical += v.logical;
        PCH_TRY(pj_builder_copy_row(b, u->arr, &u->r, row - u->begin, &v, pages > 1, err));
    }
    if (++u->d == u->n_ds) {
        if (pj_page_seq_end(&u->seq, msg, sizeof msg) < 0) return pch_error_set(err, PCH_ECORRUPT, "data file %zu: %s", u->f, msg);
        fcur_drop(u);
    }
    in = doc_bytes(docs, n_docs, dc->path);
    st->documents++;
    st->input_bytes += in ? in : logical;
    return pj_builder_copied_doc(b, in ? in : logical, err);
}

/* Cursor x's next document comes before y's in the walk (the lower file first on a tie). */
static bool fcur_before(const fcur *x, const fcur *y)
{
    int c = walk_cmp(x->ds[x->d].path, y->ds[y->d].path);
    return c < 0 || (c == 0 && x->f < y->f);
}

/* Restore the min-heap h[0..n) (by fcur_before) below slot i. */
static void fcur_sift(fcur **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        fcur *t;
        if (l < n && fcur_before(h[l], h[m])) m = l;
        if (l + 1 < n && fcur_before(h[l + 1], h[m])) m = l + 1;
        if (m == i) return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The live rows of the rewritten files whose rows are of the builder's dtype (ok[f]) copied
** into b as they are (§12.3): no document is rebuilt or parsed, each cluster is decoded once.
** The files' documents are merged into the order a build's walk would write them (each file
** holds its documents in that order): a sync appends its changed documents to new level-0
** files, and compaction puts them back among the others, so clusters keep the time order of
** the input and zone maps prune a time window as in a fresh build (RFC-0006 §22.4: scans
** after compaction no worse than a rebuild; bench/vortex_sync.sh measured 1.45x on the
** multi-agent kind when the copies kept file order). pl: every placed entry, by (file, row). */
static int copy_merged(pch_vxp_snapshot *ps, pch_vxp_builder *b, const uint8_t *ok, size_t nf, const placed *pl,
                       size_t n_pl, const pj_docrec *docs, size_t n_docs, pch_vxp_compact_stats *st, pch_error *err)
{
    fcur *u = calloc(nf ? nf : 1, sizeof *u), **h = malloc((nf ? nf : 1) * sizeof *h);
    docstart *ds = malloc((n_pl ? n_pl : 1) * sizeof *ds);
    size_t nu = 0, n_ds = 0;
    int rc = PCH_OK;
    if (!u || !h || !ds) { free(u); free(h); free(ds); return nomem(err); }
    for (size_t f = 0, k = 0; f < nf; f++) {
        size_t k0, d0 = n_ds;
        const char *doc = NULL;
        const uint64_t *del;
        size_t n_del;
        while (k < n_pl && pl[k].file < f) k++;
        for (k0 = k; k < n_pl && pl[k].file == f; k++) {
            pj_entry_view v;
            if (!ok[f]) continue;
            if ((rc = pj_snapshot_entry_view(ps, pl[k].idx, &v, err)) < 0) goto done;
            if (v.dead) continue;
            /* a new document: another path, or a root of the unnamed one (each its own) */
            if (!doc || strcmp(doc, v.doc_path) != 0 || (!*v.doc_path && !v.parent_run))
                ds[n_ds++] = (docstart){ v.row, v.doc_path };
            doc = v.doc_path;
        }
        if (!ok[f]) continue;
        st->files_copied++;
        if (n_ds == d0) continue;   /* no live row: nothing to copy, nothing decoded */
        u[nu] = (fcur){ .f = f, .pl = pl + k0, .n_pl = k - k0, .ds = ds + d0, .n_ds = n_ds - d0 };
        pj_snapshot_file_info(ps, f, &u[nu].rows, &del, &n_del);
        nu++;
    }
    /* the files' next documents in a heap: a --full compaction of many files takes the next
    ** document in log(files) comparisons, not one per file */
    for (size_t i = 0; i < nu; i++) h[i] = &u[i];
    for (size_t i = nu / 2; i-- > 0;) fcur_sift(h, nu, i);
    for (size_t nh = nu; nh && rc == PCH_OK;) {
        rc = copy_doc(ps, b, h[0], docs, n_docs, st, err);
        if (h[0]->d == h[0]->n_ds) h[0] = h[--nh];   /* that file is done */
        fcur_sift(h, nh, 0);
    }
done:
    for (size_t i = 0; i < nu; i++) fcur_drop(&u[i]);
    free(u);
    free(h);
    free(ds);
    return rc;
}

int pch_vxp_compact(pch_ctx *ctx, const char *root, const pch_vxp_compact_options *opts, pch_vxp_compact_stats *st,
                    pch_error *err)
{
    static const pch_vxp_compact_options defaults = PCH_VXP_COMPACT_OPTIONS_INIT;
    pch_vxp_build_options bo;
    pch_vxp_snapshot *ps = NULL;
    pch_vxp_builder *b = NULL;
    pj_docrec *docs = NULL;
    size_t n_docs = 0;
    uint64_t *order = NULL, n_order = 0;
    uint8_t *rewrite = NULL, *copy = NULL;
    placed *pl = NULL;
    size_t n_pl = 0;
    size_t nf = 0;
    pj_current cur;
    pj_delta d;
    const pj_current *bcur;
    const pch_json_value *m, *lay;
    char source_id[512];
    bool had;
    double t0 = pch_time_mono();
    int rc;
    if (!opts) opts = &defaults;
    if (opts->version != PCH_VXP_COMPACT_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "projection: compact options version %u (want %u)", opts->version, PCH_VXP_COMPACT_OPTIONS_VERSION);
    memset(st, 0, sizeof *st);
    memset(&d, 0, sizeof d);
#define CK(e) do { if ((rc = (e)) < 0) goto done; } while (0)
    CK(pj_head_read(ctx, root, &cur, NULL, err));
    CK(pj_snapshot_open_cur(&ps, ctx, root, &cur, err));
    m = pj_snapshot_manifest(ps);
    if (opts->if_needed && !triggers(m, opts, st->why, sizeof st->why)) {
        snprintf(st->snapshot_id, sizeof st->snapshot_id, "%.39s", cur.snapshot_id);
        rc = PCH_OK;
        goto done;
    }
    if (!opts->if_needed) triggers(m, opts, st->why, sizeof st->why);
    CK(pj_layout_options(m, &bo, source_id, sizeof source_id, &d.revision, err));
    d.revision++;
    if (bo.assets == PCH_VXP_ASSETS_EMBED) {
        rc = pch_error_set(err, PCH_EUNSUPPORTED, "projection: compaction of a root built with --assets embed is not supported "
                           "(rebuild it from its input)");
        goto done;
    }
    lay = pj_json_member(m, "layout", PCH_JSON_OBJECT);
    bo.threads = opts->threads;
    bo.partition = opts->partition;
    bo.progress = opts->progress;
    bo.source_uri = root;
    /* the document list is carried whole; a root built before it has none to carry */
    rc = pj_docs_load(ctx, root, m, &docs, &n_docs, err);
    if (rc == PCH_EUNSUPPORTED) rc = PCH_OK;
    CK(rc);
    CK(pch_vxp_builder_open(&b, ctx, root, &bo, err));
    bcur = pj_builder_parent(b, &had);
    if (!had || strcmp(bcur->snapshot_id, cur.snapshot_id) != 0) {
        rc = pch_error_set(err, PCH_EEXISTS, "stale commit: CURRENT changed while the compaction started; nothing published");
        goto done;
    }
    /* which files are rewritten (the rest kept, with their deleted rows) */
    CK(pj_snapshot_load_all(ps, err));
    nf = pj_snapshot_n_files(ps);
    if (!(rewrite = calloc(nf + 1, 1)) || !(d.del = calloc(nf + 1, sizeof *d.del)) || !(d.n_del = calloc(nf + 1, sizeof *d.n_del))) {
        rc = nomem(err);
        goto done;
    }
    {
        const pch_json_value *df = pj_json_member(m, "data_files", PCH_JSON_ARRAY);
        uint64_t file_bytes = 0;
        pj_json_u64(lay, "file_bytes", &file_bytes);
        for (size_t f = 0; f < nf; f++) {
            const pch_json_value *it = df && f < df->n ? &df->u.items[f] : NULL;
            uint64_t rows, level = 1, bytes = 0, dead = 0;
            const uint64_t *del;
            size_t n_del;
            pj_snapshot_file_info(ps, f, &rows, &del, &n_del);
            for (size_t k = 0; k < n_del; k++) dead += del[2 * k + 1] - del[2 * k];
            if (it) { pj_json_u64(it, "level", &level); pj_json_u64(it, "bytes", &bytes); }
            rewrite[f] = opts->full || level == 0 || (rows && dead * 100 >= opts->rewrite_shadowed_pct * rows) ||
                         (file_bytes && bytes < file_bytes / 4);
            if (rewrite[f]) { st->files_rewritten++; continue; }
            st->files_kept++;
            if (n_del) {
                if (!(d.del[f] = malloc(n_del * 16))) { rc = nomem(err); goto done; }
                memcpy(d.del[f], del, n_del * 16);
                d.n_del[f] = n_del;
            }
        }
    }
    for (uint64_t i = 0, n = pj_snapshot_n_entries(ps); i < n; i++) {   /* entries of kept files stay */
        pj_entry_view v;
        CK(pj_snapshot_entry_view(ps, i, &v, err));
        if (v.dead || v.file >= nf || rewrite[v.file]) continue;
        CK(pj_builder_carry(b, &v, pj_snapshot_file_id(ps, v.file), err));
    }
    /* the rewritten files' rows: copied as they are where the layout is the builder's (and the
    ** snapshot has its document list to carry), else each document rebuilt and re-projected */
    {
        uint64_t n_ent = pj_snapshot_n_entries(ps);
        if (!(pl = malloc((n_ent ? n_ent : 1) * sizeof *pl))) { rc = nomem(err); goto done; }
        for (uint64_t i = 0; i < n_ent; i++) {
            pj_entry_view v;
            CK(pj_snapshot_entry_view(ps, i, &v, err));
            if (!v.tomb && v.file < nf && rewrite[v.file]) pl[n_pl++] = (placed){ v.file, v.row, i };
        }
        qsort(pl, n_pl, sizeof *pl, cmp_placed);
    }
    /* the files whose rows are of the builder's dtype are copied, their documents merged;
    ** the others (another layout) re-projected below */
    if (!(copy = calloc(nf + 1, 1))) { rc = nomem(err); goto done; }
    for (size_t f = 0; f < nf && n_docs && !opts->reproject; f++) {
        const pch_vx_dtype *fdt;
        if (!rewrite[f]) continue;
        CK(pj_snapshot_file_dtype(ps, f, &fdt, err));
        copy[f] = pch_vx_dtype_equal(fdt, pj_builder_row_dtype(b));
    }
    CK(copy_merged(ps, b, copy, nf, pl, n_pl, docs, n_docs, st, err));
    for (size_t f = 0, oi = 0; f < nf; f++) {
        if (!rewrite[f] || copy[f]) continue;
        if (!order) CK(pch_vxp_documents(ps, &order, &n_order, err));
        /* the roots come in storage order (file, row): file f's are the next run of them */
        for (; oi < n_order; oi++) {
            pch_vxp_doc raw;
            pch_atif_doc *doc = NULL;
            pj_entry_view v;
            CK(pj_snapshot_entry_view(ps, order[oi], &v, err));
            if (v.file < f) continue;
            if (v.file > f) break;
            memset(&raw, 0, sizeof raw);
            rc = pch_vxp_get_atif(ps, order[oi], &raw, &doc, err);
            if (rc == PCH_OK) rc = pch_vxp_builder_add_doc(b, doc, raw.len, err);
            if (rc == PCH_OK) st->input_bytes += raw.len;
            pch_atif_doc_free(doc);
            pch_vxp_doc_dispose(ps, &raw);
            CK(rc);
            st->documents++;
        }
    }
    d.parent = m;
    d.compaction = true;
    d.keep_file = rewrite;     /* inverted below: keep_file[f] = !rewrite[f] */
    for (size_t f = 0; f < nf; f++) rewrite[f] = !rewrite[f];
    d.docs = docs;
    d.n_docs = n_docs;
    pj_builder_delta(b, &d);
    CK(pch_vxp_builder_commit(b, &st->build, err));
    st->ran = true;
    snprintf(st->snapshot_id, sizeof st->snapshot_id, "%s", st->build.snapshot_id);
#undef CK
done:
    st->seconds = pch_time_mono() - t0;
    for (size_t f = 0; d.del && f < nf; f++) free(d.del[f]);
    free(d.del);
    free(d.n_del);
    free(rewrite);
    free(copy);
    free(pl);
    pch_free(ctx, order);
    pch_vxp_builder_free(b);
    pj_docs_free(docs, n_docs);
    pch_vxp_snapshot_free(ps);
    return rc;
}
