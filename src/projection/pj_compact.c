/* Compaction (RFC-0006 §12.3): a new snapshot with one base trajectory directory and no L0
** run, whose data files are level 1.
**
** It reads a pinned snapshot (CURRENT when it starts, held by a reader lease throughout) and
** decides per data file (tiered, as an LSM does): every L0 file, every file whose shadowed
** share reaches --rewrite-shadowed and every small file is rewritten; the others are kept as
** they are (with their deleted rows) and their live directory entries carried into the new
** base directory. The live rows of a rewritten file are copied as they are (copy_file: each
** cluster decoded once, each row appended unchanged to the new clusters and encoded again,
** with its directory entry's keys and totals): no document is rebuilt or parsed. A file of
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

/* One document's rows copied (input_bytes: its ATIF bytes): the builder's and st's counts. */
static int copied_doc(pch_vxp_builder *b, uint64_t input_bytes, pch_vxp_compact_stats *st, pch_error *err)
{
    st->documents++;
    st->input_bytes += input_bytes;
    return pj_builder_copied_doc(b, input_bytes, err);
}

/* The live rows of rewritten data file f copied into b as they are (§12.3): each cluster is
** decoded whole once, each row of a live trajectory (its page 0 and continuation pages)
** appended, the rows of shadowed and deleted ones skipped; a document's rows go together
** (rows of one document are adjacent in a file and its trajectories share its path). pl: the
** entries placed in f, by row. *copied false (nothing read) when f's rows are not of the
** builder's dtype (a root written by another layout): its documents are then re-projected. */
static int copy_file(pch_vxp_snapshot *ps, pch_vxp_builder *b, size_t f, const placed *pl, size_t n_pl,
                     const pj_docrec *docs, size_t n_docs, pch_vxp_compact_stats *st, bool *copied, pch_error *err)
{
    const char *doc = NULL;          /* path of the document being copied (NULL: none) */
    uint64_t doc_in = 0, doc_logical = 0;
    bool live = false;
    size_t k = 0;
    pj_page_seq seq;
    char msg[600];
    memset(&seq, 0, sizeof seq);
    *copied = false;
    for (uint32_t c = 0, nc = pj_snapshot_n_clusters(ps, f); c < nc; c++) {
        const pch_vx_array *root;
        const pj_rows *r;
        uint64_t begin, end;
        PCH_TRY(pj_snapshot_cluster(ps, f, c, &root, &r, &begin, &end, err));
        if (c == 0) {
            if (!pch_vx_dtype_equal(root->dtype, pj_builder_row_dtype(b))) return PCH_OK;
            *copied = true;
        }
        for (uint64_t row = begin; row < end; row++) {
            uint64_t page, pages;
            const char *key;
            size_t key_len;
            bool cont;
            pj_entry_view v;
            /* the page sequence is checked as verify checks it: a continuation page follows
            ** its trajectory's previous page, with its key and page count */
            pj_model_page_info(r, row - begin, &page, &pages, &key, &key_len);
            if (pj_page_seq_next(&seq, page, pages, key, key_len, &cont, msg, sizeof msg) < 0)
                return pch_error_set(err, PCH_ECORRUPT, "data file %zu row %" PRIu64 ": %s", f, row, msg);
            if (cont) {
                if (live) PCH_TRY(pj_builder_copy_row(b, root, r, row - begin, NULL, page + 1 < pages, err));
                continue;
            }
            while (k < n_pl && pl[k].row < row) k++;
            live = k < n_pl && pl[k].row == row;
            if (live) {
                PCH_TRY(pj_snapshot_entry_view(ps, pl[k].idx, &v, err));
                live = !v.dead;
            }
            if (!live) continue;
            if (doc && (strcmp(doc, v.doc_path) != 0 || (!*doc && !v.parent_run))) {
                PCH_TRY(copied_doc(b, doc_in ? doc_in : doc_logical, st, err));
                doc = NULL;
            }
            if (!doc) {
                doc = v.doc_path;
                doc_in = doc_bytes(docs, n_docs, doc);
                doc_logical = 0;
            }
            doc_logical += v.logical;
            PCH_TRY(pj_builder_copy_row(b, root, r, row - begin, &v, pages > 1, err));
        }
    }
    if (*copied && pj_page_seq_end(&seq, msg, sizeof msg) < 0)
        return pch_error_set(err, PCH_ECORRUPT, "data file %zu: %s", f, msg);
    return doc ? copied_doc(b, doc_in ? doc_in : doc_logical, st, err) : PCH_OK;
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
    uint8_t *rewrite = NULL;
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
    for (size_t f = 0, k = 0, oi = 0; f < nf; f++) {
        size_t k0;
        bool copied = false;
        while (k < n_pl && pl[k].file < f) k++;
        k0 = k;
        while (k < n_pl && pl[k].file == f) k++;
        if (!rewrite[f]) continue;
        if (n_docs && !opts->reproject) CK(copy_file(ps, b, f, pl + k0, k - k0, docs, n_docs, st, &copied, err));
        if (copied) { st->files_copied++; continue; }
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
    free(pl);
    pch_free(ctx, order);
    pch_vxp_builder_free(b);
    pj_docs_free(docs, n_docs);
    pch_vxp_snapshot_free(ps);
    return rc;
}
