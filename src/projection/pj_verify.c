/* verify (RFC-0006 §15) and inspect (§20.1). verify walks CURRENT → manifest → directories →
** data files and blob packs: every digest and size, every Vortex footer and segment (full
** decode), directory order/uniqueness/row bounds, offsets of every lane level, token/logprob
** relations, every trajectory rebuilt with content hydrated (hash, raw length, codec), every
** blob of the content directory, and the manifest's counts against what is stored. Each
** problem is one finding; nothing stops at the first. */
#include <inttypes.h>
#include <stdlib.h>

#include "projection/pj_int.h"

typedef struct vctx {
    pch_ctx *ctx;
    const char *root;
    pch_vxp_finding_cb cb;
    void *payload;
    size_t n;
    pj_page_seq seq;              /* the paged trajectory being walked (§7.2) */
} vctx;

static void finding(vctx *v, const char *file, const char *fmt, ...) PCH_PRINTF(3, 4);
static void finding(vctx *v, const char *file, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    v->cb(file, msg, v->payload);
    v->n++;
}
static void finding_cb(const char *file, const char *msg, void *payload)
{
    vctx *v = payload;
    v->cb(file, msg, v->payload);
    v->n++;
}

/* Digest, size and (full_decode) a decode of every segment of one listed file; returns the
** opened file or NULL. Data files and blob packs are decoded by their own checks instead,
** cluster by cluster and blob by blob, so memory stays bounded by one cluster. */
static pch_vx_file *check_file(vctx *v, const pch_json_value *item, const char *list, char *rel, size_t cap,
                               bool full_decode)
{
    char want[80], got[80], full[1024];
    uint64_t bytes_want, bytes, rows;
    pch_vx_file *f = NULL;
    pch_error e;
    pch_error_clear(&e);
    if (!pj_json_str(item, "path", rel, cap) || !pj_json_str(item, "digest", want, sizeof want)) {
        finding(v, "", "manifest: an entry of %s lacks path or digest", list);
        return NULL;
    }
    if (pj_path_check(rel, strlen(rel), &e) < 0) { finding(v, rel, "%s", e.msg); return NULL; }
    snprintf(full, sizeof full, "%s/%s", v->root, rel);
    if (pj_file_digest(full, got, &bytes, &e) < 0) { finding(v, rel, "missing or unreadable: %s", e.msg); return NULL; }
    if (pj_json_u64(item, "bytes", &bytes_want) && bytes_want != bytes)
        finding(v, rel, "size %" PRIu64 " bytes, manifest says %" PRIu64 " (truncated or replaced)", bytes, bytes_want);
    if (strcmp(got, want) != 0) finding(v, rel, "digest %s, manifest says %s", got, want);
    if (pch_vx_file_open(&f, v->ctx, full, &e) < 0) { finding(v, rel, "not a readable Vortex file: %s", e.msg); return NULL; }
    if (full_decode && pch_vx_file_check(f, &e) < 0) finding(v, rel, "Vortex decode failed: %s", e.msg);
    if (pj_json_u64(item, "rows", &rows) && rows != pch_vx_file_row_count(f))
        finding(v, rel, "%" PRIu64 " rows, manifest says %" PRIu64, pch_vx_file_row_count(f), rows);
    return f;
}

/* The data file's segment digest table (manifest "segments"): the file itself (size and
** digest), then every segment of the data file against it. Roots built before these tables
** have none. */
static pj_segtab *check_segments(vctx *v, const pch_json_value *item, const char *rel, pch_vx_file *f)
{
    const pch_json_value *sg = pj_json_member(item, "segments", PCH_JSON_OBJECT);
    char srel[256], dig[80], full[1024];
    uint64_t bytes = 0, fbytes = 0;
    pj_segtab *t = NULL;
    pch_error e;
    if (!sg) return NULL;
    pch_error_clear(&e);
    if (!pj_json_str(sg, "path", srel, sizeof srel) || !pj_json_str(sg, "digest", dig, sizeof dig) ||
        !pj_json_u64(sg, "bytes", &bytes) || !pj_json_u64(item, "bytes", &fbytes)) {
        finding(v, rel, "manifest: its segments entry lacks path, bytes or digest");
        return NULL;
    }
    if (pj_path_check(srel, strlen(srel), &e) < 0) { finding(v, srel, "%s", e.msg); return NULL; }
    if (pj_segtab_load(&t, v->ctx, v->root, srel, bytes, dig, rel, fbytes, true, &e) < 0) { finding(v, srel, "%s", e.msg); return NULL; }
    snprintf(full, sizeof full, "%s/%s", v->root, rel);
    if (pj_segtab_match(t, f, &e) < 0 || pj_segtab_check_file(t, full, &e) < 0) {
        finding(v, rel, "%s", e.msg);
        pj_segtab_free(t);
        return NULL;
    }
    if (pj_segtab_has_rows(t) && pj_segtab_n_rows(t) != pch_vx_file_row_count(f)) {
        finding(v, srel, "row digests of %" PRIu64 " rows for a file of %" PRIu64, pj_segtab_n_rows(t), pch_vx_file_row_count(f));
        pj_segtab_free(t);
        return NULL;
    }
    return t;       /* the caller checks each row against its row digest (check_data) */
}

/* The digests the manifest lists for parts of a data file: each cluster's ("clusters_at",
** [offset, length, digest]; roots built with segment tables before 2026-12-05 list none) and
** the tail's. A point read from object storage checks what it reads against them alone. */
static void check_parts(vctx *v, const pch_json_value *item, const char *rel)
{
    const pch_json_value *ca = pj_json_member(item, "clusters_at", PCH_JSON_ARRAY);
    const pch_json_value *tl = pj_json_member(item, "tail", PCH_JSON_ARRAY);
    uint64_t *cuts = NULL;
    char (*got)[80] = NULL, full[1024], whole[80];
    pch_error e;
    if (!ca || !tl) { finding(v, rel, "manifest: it lacks clusters_at or tail"); return; }
    pch_error_clear(&e);
    cuts = malloc(((size_t)ca->n + 1) * sizeof *cuts);
    got = malloc(((size_t)ca->n + 1) * sizeof *got);
    if (!cuts || !got) { finding(v, rel, "out of memory"); goto done; }
    for (uint32_t c = 0; c <= ca->n; c++) {
        const pch_json_value *it = c < ca->n ? &ca->u.items[c] : tl;
        if (it->kind != PCH_JSON_ARRAY || it->n < 2 || it->u.items[0].kind != PCH_JSON_NUMBER ||
            !(it->u.items[0].num_flags & PCH_JSON_NUM_U64) || (c && it->u.items[0].u.num.u < cuts[c - 1])) {
            finding(v, rel, "manifest: clusters_at / tail entry %u is malformed", c);
            goto done;
        }
        cuts[c] = it->u.items[0].u.num.u;
    }
    snprintf(full, sizeof full, "%s/%s", v->root, rel);
    if (pj_file_digest_parts(full, whole, NULL, cuts, (size_t)ca->n + 1, got, &e) < 0) { finding(v, rel, "%s", e.msg); goto done; }
    for (uint32_t c = 0; c <= ca->n; c++) {
        const pch_json_value *it = c < ca->n ? &ca->u.items[c] : tl;
        if (it->n < 3) continue;                 /* a cluster listed without a digest */
        const pch_json_value *g = &it->u.items[2];
        if (g->kind != PCH_JSON_STRING || g->u.str.len != strlen(got[c]) || memcmp(g->u.str.ptr, got[c], g->u.str.len) != 0) {
            if (c < ca->n) finding(v, rel, "cluster %u (bytes from %" PRIu64 ") has digest %s, the manifest says %.*s", c, cuts[c], got[c],
                                   g->kind == PCH_JSON_STRING ? (int)g->u.str.len : 0, g->kind == PCH_JSON_STRING ? g->u.str.ptr : "");
            else finding(v, rel, "its tail (bytes from %" PRIu64 ") has digest %s, the manifest says %.*s", cuts[c], got[c],
                         g->kind == PCH_JSON_STRING ? (int)g->u.str.len : 0, g->kind == PCH_JSON_STRING ? g->u.str.ptr : "");
        }
    }
done:
    free(cuts);
    free(got);
}

static int skip_child(pch_buf *out, const char *r, size_t rn, const char *t, size_t tn, void *payload, pch_error *err)
{
    (void)r; (void)rn; (void)t; (void)tn; (void)payload; (void)err;
    return pch_buf_append(out, "null", 4) < 0 ? PCH_ENOMEM : PCH_OK;
}

/* Pages of a paged trajectory are checked as rows of their own (below). */
static int skip_pages(pch_buf *out, const char *traj, size_t tn, uint32_t pages, bool *first_step, void *payload,
                      pch_error *err)
{
    (void)out; (void)traj; (void)tn; (void)pages; (void)first_step; (void)payload; (void)err;
    return PCH_OK;
}

/* A row's place in its file's page sequence (pj_page_seq_next); true for a continuation. */
static bool check_page(vctx *v, const char *rel, const pj_rows *r, uint64_t i, uint64_t row)
{
    uint64_t pi, pc;
    const char *kp;
    size_t kn;
    bool cont;
    char msg[600];
    pj_model_page_info(r, i, &pi, &pc, &kp, &kn);
    if (pj_page_seq_next(&v->seq, pi, pc, kp, kn, &cont, msg, sizeof msg) < 0)
        finding(v, rel, "trajectory row %" PRIu64 ": %s", row, msg);
    return cont;
}

/* Rebuild every trajectory of a data file cluster by cluster; count steps and calls. */
/* Is row r inside one of the file's deleted ranges (manifest item "deleted_rows", §12.2)? The
** reader checked their order when the snapshot opened; here only membership. */
static bool row_deleted(const pch_json_value *dr, uint64_t r)
{
    uint32_t lo = 0, hi = dr ? dr->n : 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const pch_json_value *it = &dr->u.items[mid];
        if (it->kind != PCH_JSON_ARRAY || it->n != 2) return false;
        if (r < it->u.items[0].u.num.u) hi = mid;
        else if (r >= it->u.items[1].u.num.u) lo = mid + 1;
        else return true;
    }
    return false;
}

/* Every row of data file f is checked; the counts (steps, calls, trajectories) are of its live
** rows only: the manifest's counts are of the live projection. */
static void check_data(vctx *v, pch_vx_file *f, pj_segtab *segs, const char *rel, const pch_json_value *dr, pj_blobs *blobs,
                       uint64_t *steps, uint64_t *calls, uint64_t *trajectories, uint64_t *page0_rows)
{
    uint64_t rows = pch_vx_file_row_count(f), chunk = 64;
    pch_vx_dtype *want = NULL;
    pch_buf out;
    pch_error de;
    /* the data-file schema first: every lane is then read by its model type */
    if (pj_data_dtype(v->ctx, &want, &de) < 0 || !pch_vx_dtype_equal(pch_vx_file_dtype(f), want)) {
        pch_vx_dtype_free(want);
        finding(v, rel, "its columns are not the projection's data-file schema");
        return;
    }
    pch_vx_dtype_free(want);
    pch_buf_init(&out, v->ctx);
    for (uint64_t b = 0; b < rows; b += chunk) {
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *a = NULL;
        pch_vx_dtype *dt = NULL;
        pj_rows r;
        pch_error e;
        pch_error_clear(&e);
        so.row_begin = b;
        so.row_end = b + chunk < rows ? b + chunk : rows;
        if (pch_vx_file_scan(f, &so, &a, &dt, &e) < 0 || pj_rows_bind(&r, a, &e) < 0) {
            finding(v, rel, "rows %" PRIu64 "..%" PRIu64 ": %s", so.row_begin, so.row_end, e.msg);
            pch_vx_array_free(a);
            pch_vx_dtype_free(dt);
            continue;
        }
        pj_model_check(&r, rel, finding_cb, v);
        /* every row against its row digest (a version-4 segment table): what point reads check */
        for (uint64_t i = 0; pj_segtab_has_rows(segs) && i < a->len; i++) {
            const uint8_t *rd;
            uint8_t got[32];
            pch_vx_row_digest(a, i, got);
            if (pj_segtab_row_digest(segs, so.row_begin + i, &rd, &e) < 0) finding(v, rel, "row %" PRIu64 ": %s", so.row_begin + i, e.msg);
            else if (memcmp(got, rd, 32) != 0) finding(v, rel, "row %" PRIu64 ": its lanes do not match its row digest", so.row_begin + i);
        }
        if (!r.l[PJ_ID_PAGE_INDEX] || !r.l[PJ_ID_PAGE_COUNT] || !r.l[PJ_ID_TRAJECTORY_KEY]) {
            finding(v, rel, "rows %" PRIu64 "..%" PRIu64 ": identity or page lanes missing", so.row_begin, so.row_end);
            pch_vx_array_free(a);
            pch_vx_dtype_free(dt);
            continue;
        }
        for (uint64_t i = 0; i < a->len; i++) {
            pch_buf_clear(&out);
            if (check_page(v, rel, &r, i, so.row_begin + i)) {
                bool first = true;
                uint64_t pi, pc;
                const char *kp;
                size_t kn;
                pj_model_page_info(&r, i, &pi, &pc, &kp, &kn);
                if (pch_buf_putc(&out, '[') < 0 ||
                    pj_model_write_page(&out, &r, i, kp, kn, (uint32_t)pi, (uint32_t)pc, &first, blobs, PCH_VXP_FULL, NULL, &e) < 0 ||
                    pch_buf_putc(&out, ']') < 0)
                    finding(v, rel, "trajectory row %" PRIu64 ": %s", so.row_begin + i, e.msg);
                else if (pch_json_validate(NULL, (const char *)out.data, out.len, NULL, NULL, NULL, &e) < 0)
                    finding(v, rel, "trajectory row %" PRIu64 " (a page) rebuilds to invalid JSON: %s", so.row_begin + i, e.msg);
                continue;
            }
            (*page0_rows)++;
            if (!row_deleted(dr, so.row_begin + i)) (*trajectories)++;
            if (pj_model_write_json(&out, &r, i, blobs, PCH_VXP_FULL, NULL, skip_child, skip_pages, NULL, &e) < 0)
                finding(v, rel, "trajectory row %" PRIu64 ": %s", so.row_begin + i, e.msg);
            else if (pch_json_validate(NULL, (const char *)out.data, out.len, NULL, NULL, NULL, &e) < 0)
                finding(v, rel, "trajectory row %" PRIu64 " rebuilds to invalid JSON: %s", so.row_begin + i, e.msg);
        }
        for (uint64_t i = 0; i < a->len; i++) {
            uint64_t sb, se;
            if (row_deleted(dr, so.row_begin + i) || !r.l[PJ_STEPS_STEP_ID] || !pch_vx_list_range(r.l[PJ_STEPS_STEP_ID], i, &sb, &se))
                continue;
            *steps += se - sb;
            if (r.l[PJ_TOOLS_FUNCTION] && pch_vx_list_range(r.l[PJ_TOOLS_FUNCTION], i, &sb, &se)) {
                const pch_vx_array *l = r.l[PJ_TOOLS_FUNCTION]->children[0];
                if (se <= l->len && l->offsets[se] >= l->offsets[sb]) *calls += (uint64_t)(l->offsets[se] - l->offsets[sb]);
            }
        }
        pch_vx_array_free(a);
        pch_vx_dtype_free(dt);
    }
    pch_buf_dispose(&out);
}

int pch_vxp_verify(pch_ctx *ctx, const char *root, pch_vxp_finding_cb cb, void *payload, size_t *n_findings,
                   pch_error *err)
{
    return pch_vxp_verify_at(ctx, root, NULL, cb, payload, n_findings, err);
}

int pch_vxp_verify_at(pch_ctx *ctx, const char *root, const char *snapshot_id, pch_vxp_finding_cb cb, void *payload,
                      size_t *n_findings, pch_error *err)
{
    vctx v;
    pj_current cur;
    pch_json_parser *mp = NULL;
    pch_buf mtext;
    const pch_json_value *m = NULL, *lst;
    pj_blobs *blobs = NULL;
    pch_vxp_snapshot *snap = NULL;
    pch_error e;
    uint64_t steps = 0, calls = 0, rows_total = 0, page0_rows = 0, want;
    char rel[256];
    int rc;
    memset(&v, 0, sizeof v);
    v.ctx = ctx;
    v.root = root;
    v.cb = cb;
    v.payload = payload;
    *n_findings = 0;
    pch_buf_init(&mtext, ctx);
    pch_error_clear(&e);
    rc = snapshot_id ? pj_current_at(ctx, root, snapshot_id, &cur, &e) : pj_current_read(ctx, root, &cur, NULL, &e);
    if (rc < 0) {
        finding(&v, snapshot_id ? "manifests" : "CURRENT", "%s", e.msg);
        *n_findings = v.n;
        return rc == PCH_ENOTFOUND ? pch_error_set(err, rc, "%s", e.msg) : PCH_OK;
    }
    if (pj_manifest_load(ctx, root, &cur, &mp, &mtext, &m, &e) < 0) {
        finding(&v, cur.manifest, "%s", e.msg);
        goto done;
    }
    /* every listed file: digest, size, footer, full decode */
    if ((lst = pj_json_member(m, "blob_packs", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) pch_vx_file_free(check_file(&v, &lst->u.items[i], "blob_packs", rel, sizeof rel, false));
    if ((lst = pj_json_member(m, "content_directory", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) pch_vx_file_free(check_file(&v, &lst->u.items[i], "content_directory", rel, sizeof rel, true));
    if ((lst = pj_json_member(m, "trajectory_directory", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) pch_vx_file_free(check_file(&v, &lst->u.items[i], "trajectory_directory", rel, sizeof rel, true));
    if ((lst = pj_json_member(m, "directory_runs", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) pch_vx_file_free(check_file(&v, &lst->u.items[i], "directory_runs", rel, sizeof rel, true));
    if ((lst = pj_json_member(m, "documents", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) pch_vx_file_free(check_file(&v, &lst->u.items[i], "documents", rel, sizeof rel, true));
    if ((lst = pj_json_member(m, "key_index", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) pch_vx_file_free(check_file(&v, &lst->u.items[i], "key_index", rel, sizeof rel, true));
    if ((lst = pj_json_member(m, "lane_report", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) pch_vx_file_free(check_file(&v, &lst->u.items[i], "lane_report", rel, sizeof rel, true));
    /* directory structure (sorted, unique, row bounds, files known), and the key index holds
    ** every lookup string of the base directory */
    if (pch_vxp_snapshot_open_at(&snap, ctx, root, snapshot_id, &e) < 0 || pj_snapshot_load_all(snap, &e) < 0) {
        finding(&v, "directories/trajectory", "%s", e.msg);
        pch_vxp_snapshot_free(snap);
        snap = NULL;
    } else if (pj_snapshot_check_key_index(snap, &e) < 0) {
        finding(&v, "directories/keys", "%s", e.msg);
    }
    if (pj_blobs_open(&blobs, ctx, root, m, false, &e) < 0) {
        finding(&v, "directories/content", "%s", e.msg);
        blobs = NULL;
    } else {
        pj_blobs_check_all(blobs, finding_cb, &v, &v.n, &e);
    }
    if ((lst = pj_json_member(m, "data_files", PCH_JSON_ARRAY)))
        for (uint32_t i = 0; i < lst->n; i++) {
            pch_vx_file *f = check_file(&v, &lst->u.items[i], "data_files", rel, sizeof rel, false);
            if (!f) continue;
            pj_segtab *segs = check_segments(&v, &lst->u.items[i], rel, f);
            check_parts(&v, &lst->u.items[i], rel);
            char msg[600];
            memset(&v.seq, 0, sizeof v.seq);
            check_data(&v, f, segs, rel, pch_json_get(&lst->u.items[i], "deleted_rows", 12), blobs, &steps, &calls, &rows_total, &page0_rows);
            pj_segtab_free(segs);
            if (pj_page_seq_end(&v.seq, msg, sizeof msg) < 0) finding(&v, rel, "%s", msg);
            pch_vx_file_free(f);
        }
    else finding(&v, cur.manifest, "no data_files list");
    /* counts in the manifest against what is stored */
    {
        const pch_json_value *c = pj_json_member(m, "counts", PCH_JSON_OBJECT);
        if (!c) finding(&v, cur.manifest, "no counts");
        else {
            if (!pj_json_u64(c, "trajectories", &want) || want != rows_total)
                finding(&v, cur.manifest, "counts.trajectories %" PRIu64 ", data files hold %" PRIu64, want, rows_total);
            if (snap) {
                uint64_t placed, live;
                pj_snapshot_count(snap, &placed, &live);
                /* a compaction that keeps a file drops the entries of its shadowed rows: the
                ** directory places at most every first page, and every live one exactly once */
                if (placed > page0_rows)
                    finding(&v, "directories/trajectory", "directory places %" PRIu64 " trajectories, data files hold %" PRIu64, placed, page0_rows);
                if (live != rows_total)
                    finding(&v, "directories/trajectory", "directory has %" PRIu64 " live trajectories, data files hold %" PRIu64, live, rows_total);
                pj_snapshot_check_keys(snap, finding_cb, &v, &v.n);
            }
            if (!pj_json_u64(c, "steps", &want) || want != steps)
                finding(&v, cur.manifest, "counts.steps %" PRIu64 ", data files hold %" PRIu64, want, steps);
            if (!pj_json_u64(c, "tool_calls", &want) || want != calls)
                finding(&v, cur.manifest, "counts.tool_calls %" PRIu64 ", data files hold %" PRIu64, want, calls);
            if (!pj_json_u64(c, "blobs", &want) || want != pj_blobs_count(blobs))
                finding(&v, cur.manifest, "counts.blobs %" PRIu64 ", content directory holds %" PRIu64, want, pj_blobs_count(blobs));
        }
    }
done:
    pch_vxp_snapshot_free(snap);
    pj_blobs_free(blobs);
    pch_json_parser_free(mp);
    pch_buf_dispose(&mtext);
    *n_findings = v.n;
    return PCH_OK;
}

static void print_str(FILE *out, const pch_json_value *o, const char *k)
{
    char b[4096];   /* a lane's distinct encodings over all its chunks */
    fprintf(out, "%s", pj_json_str(o, k, b, sizeof b) ? b : "-");
}

/* A pch_vxp_finding_cb printing to the FILE in payload (inspect). */
static void print_finding(const char *file, const char *msg, void *payload)
{
    fprintf(payload, "lanes: %s: %s\n", file, msg);
}

int pch_vxp_inspect(pch_ctx *ctx, const char *root, FILE *out, pch_error *err)
{
    pj_current cur;
    pch_json_parser *mp = NULL;
    pch_buf mtext;
    const pch_json_value *m, *o, *lst;
    int rc;
    pch_buf_init(&mtext, ctx);
    PCH_TRY(pj_current_read(ctx, root, &cur, NULL, err));
    if ((rc = pj_manifest_load(ctx, root, &cur, &mp, &mtext, &m, err)) < 0) goto done;
    fprintf(out, "snapshot %s (manifest %s, %s)\n", cur.snapshot_id, cur.manifest, cur.digest);
    fprintf(out, "parent   ");
    print_str(out, m, "parent_snapshot_id");
    fprintf(out, "\ncreated  ");
    print_str(out, m, "created_at");
    if ((o = pj_json_member(m, "layout", PCH_JSON_OBJECT))) {
        uint64_t cb = 0, fb = 0, hot = 0, cold = 0, dd = 0, fr = 0, zd = 0, frows = 0, fratio = 0;
        pj_json_u64(o, "cluster_bytes", &cb); pj_json_u64(o, "file_bytes", &fb);
        pj_json_u64(o, "hot_max_bytes", &hot); pj_json_u64(o, "cold_max_bytes", &cold);
        pj_json_u64(o, "dedup_min_bytes", &dd); pj_json_u64(o, "frame_bytes", &fr);
        pj_json_u64(o, "zstd_dict_bytes", &zd);
        pj_json_u64(o, "frame_rows", &frows);
        pj_json_u64(o, "frame_ratio", &fratio);
        fprintf(out, "\nlayout   profile ");
        print_str(out, o, "profile");
        fprintf(out, ", cluster %" PRIu64 " B, file %" PRIu64 " B, hot < %" PRIu64 " B, cold < %" PRIu64 " B, dedup >= %" PRIu64
                " B, frames %" PRIu64 " B or %" PRIu64 " trajectories (small documents: %" PRIu64 " x their size), zstd dictionary %" PRIu64 " B, assets ",
                cb, fb, hot, cold, dd, fr, frows, fratio, zd);
        print_str(out, o, "assets");
    }
    fputc('\n', out);
    if ((o = pj_json_member(m, "counts", PCH_JSON_OBJECT))) {
        fprintf(out, "counts  ");
        for (uint32_t i = 0; i < o->n; i++)
            fprintf(out, " %.*s=%" PRIu64, (int)o->u.members[i].key_len, o->u.members[i].key, o->u.members[i].value.u.num.u);
        fputc('\n', out);
    }
    if ((o = pj_json_member(m, "bytes", PCH_JSON_OBJECT))) {
        fprintf(out, "bytes   ");
        for (uint32_t i = 0; i < o->n; i++)
            fprintf(out, " %.*s=%" PRIu64, (int)o->u.members[i].key_len, o->u.members[i].key, o->u.members[i].value.u.num.u);
        fputc('\n', out);
    }
    /* §20.3 maintenance metrics: L0 runs and files, active density, shadowed share */
    if ((o = pj_json_member(m, "maintenance", PCH_JSON_OBJECT))) {
        uint64_t runs = 0, files = 0, l0rows = 0, mem = 0, rows = 0, del = 0;
        const pch_json_value *rq = pch_json_get(o, "required", 8);
        pj_json_u64(o, "l0_runs", &runs); pj_json_u64(o, "l0_files", &files); pj_json_u64(o, "l0_rows", &l0rows);
        pj_json_u64(o, "l0_memory_bytes", &mem); pj_json_u64(o, "rows", &rows); pj_json_u64(o, "deleted_rows", &del);
        fprintf(out, "maint    l0_runs=%" PRIu64 " l0_files=%" PRIu64 " l0_directory_rows=%" PRIu64 " l0_directory_memory=%" PRIu64
                     " rows=%" PRIu64 " shadowed_rows=%" PRIu64 " active_density=%.4f shadowed_share=%.4f required=%s\n",
                runs, files, l0rows, mem, rows, del, rows ? (double)(rows - del) / (double)rows : 1.0,
                rows ? (double)del / (double)rows : 0.0, rq && rq->kind == PCH_JSON_TRUE ? "yes" : "no");
    }
    if ((o = pj_json_member(m, "last_sync", PCH_JSON_OBJECT))) {
        fprintf(out, "lastsync");
        for (uint32_t i = 0; i < o->n; i++) {
            const pch_json_value *x = &o->u.members[i].value;
            fprintf(out, " %.*s=", (int)o->u.members[i].key_len, o->u.members[i].key);
            if (x->kind == PCH_JSON_STRING) fprintf(out, "%.*s", (int)x->u.str.len, x->u.str.ptr);
            else if (x->kind == PCH_JSON_NUMBER && (x->num_flags & PCH_JSON_NUM_U64)) fprintf(out, "%" PRIu64, x->u.num.u);
            else if (x->kind == PCH_JSON_NUMBER) fprintf(out, "%.3f", x->u.num.d);
        }
        fputc('\n', out);
    }
    static const char *const lists[] = { "data_files", "blob_packs", "content_directory", "trajectory_directory",
                                         "directory_runs", "documents", "key_index", "lane_report" };
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        if (!(lst = pj_json_member(m, lists[k], PCH_JSON_ARRAY))) continue;
        fprintf(out, "%s (%u)\n", lists[k], lst->n);
        for (uint32_t i = 0; i < lst->n; i++) {
            uint64_t bytes = 0, rows = 0, cl = 0, bl = 0;
            const pch_json_value *it = &lst->u.items[i];
            pj_json_u64(it, "bytes", &bytes); pj_json_u64(it, "rows", &rows); pj_json_u64(it, "clusters", &cl); pj_json_u64(it, "blobs", &bl);
            fprintf(out, "  ");
            print_str(out, it, "path");
            fprintf(out, "  bytes=%" PRIu64, bytes);
            if (pj_json_member(it, "rows", PCH_JSON_NUMBER)) fprintf(out, " rows=%" PRIu64, rows);
            if (pj_json_member(it, "clusters", PCH_JSON_NUMBER)) fprintf(out, " clusters=%" PRIu64, cl);
            if (pj_json_member(it, "blobs", PCH_JSON_NUMBER)) fprintf(out, " blobs=%" PRIu64, bl);
            fputc('\n', out);
        }
    }
    if ((lst = pj_json_member(m, "lane_report", PCH_JSON_ARRAY)) && lst->n == 1) {
        char rel[256];
        vctx v;
        pch_vx_file *f;
        memset(&v, 0, sizeof v);
        v.ctx = ctx;
        v.root = root;
        v.cb = print_finding;
        v.payload = out;
        /* the report file, its digest and size checked (check_file prints what is wrong) */
        if ((f = check_file(&v, &lst->u.items[0], "lane_report", rel, sizeof rel, false))) {
            pch_vx_array *a = NULL;
            pch_vx_dtype *dt = NULL, *want = NULL;
            pch_error e;
            pch_error_clear(&e);
            if (pch_vx_dtype_parse(&want, ctx, PJ_LANES_SCHEMA, &e) == PCH_OK && pch_vx_file_scan(f, NULL, &a, &dt, &e) == PCH_OK &&
                pch_vx_dtype_equal(dt, want)) {
                uint64_t tl = 0, ts = 0;
                fprintf(out, "lanes (%" PRIu64 "): path  logical  stored  ratio  encode_s  encodings\n", a->len);
                for (uint64_t i = 0; i < a->len; i++) {
                    const char *path, *enc;
                    size_t pn, en;
                    uint64_t lg = pch_vx_row_uint(a->children[3], i), sd = pch_vx_row_uint(a->children[4], i);
                    double sec;
                    if (!pch_vx_row_bytes(a->children[0], i, &path, &pn) || !pch_vx_row_bytes(a->children[1], i, &enc, &en)) continue;
                    memcpy(&sec, a->children[5]->data + 8 * i, 8);
                    tl += lg; ts += sd;
                    fprintf(out, "  %.*s  %" PRIu64 "  %" PRIu64 "  %.2f  %.3f  %.*s\n", (int)pn, path, lg, sd,
                            sd ? (double)lg / (double)sd : 0.0, sec, (int)en, enc);
                }
                fprintf(out, "  total  %" PRIu64 "  %" PRIu64 "  %.2f\n", tl, ts, ts ? (double)tl / (double)ts : 0.0);
            } else {
                fprintf(out, "lanes: %s is not a lane report%s%s\n", rel, e.msg[0] ? ": " : "", e.msg);
            }
            pch_vx_array_free(a);
            pch_vx_dtype_free(dt);
            pch_vx_dtype_free(want);
            pch_vx_file_free(f);
        }
    } else if ((lst = pj_json_member(m, "lanes", PCH_JSON_ARRAY))) {   /* roots built before 2026-12-07 */
        uint64_t tl = 0, ts = 0;
        fprintf(out, "lanes (%u): path  logical  stored  ratio  encode_s  encodings\n", lst->n);
        for (uint32_t i = 0; i < lst->n; i++) {
            const pch_json_value *it = &lst->u.items[i], *sec = pj_json_member(it, "encode_seconds", PCH_JSON_NUMBER);
            uint64_t lg = 0, sd = 0;
            pj_json_u64(it, "logical_bytes", &lg); pj_json_u64(it, "stored_bytes", &sd);
            tl += lg; ts += sd;
            fprintf(out, "  ");
            print_str(out, it, "path");
            fprintf(out, "  %" PRIu64 "  %" PRIu64 "  %.2f  %.3f  ", lg, sd, sd ? (double)lg / (double)sd : 0.0, sec ? sec->u.num.d : 0.0);
            print_str(out, it, "encodings");
            fputc('\n', out);
        }
        fprintf(out, "  total  %" PRIu64 "  %" PRIu64 "  %.2f\n", tl, ts, ts ? (double)tl / (double)ts : 0.0);
    }
    {
        pch_vxp_footprint_stats fp;
        if ((rc = pch_vxp_footprint(ctx, root, &fp, err)) < 0) goto done;
        fprintf(out, "footprint: %" PRIu64 " snapshots (%" PRIu64 " unreadable, %" PRIu64 " pins); current %" PRIu64
                     " B; older snapshots only %" PRIu64 " B; unreferenced %" PRIu64 " files %" PRIu64
                     " B; abandoned staging %" PRIu64 " dirs %" PRIu64 " B\n",
                fp.snapshots, fp.unreadable, fp.pins, fp.current_bytes, fp.history_bytes, fp.unreferenced_files,
                fp.unreferenced_bytes, fp.staging_abandoned, fp.staging_abandoned_bytes);
    }
    rc = PCH_OK;
done:
    pch_json_parser_free(mp);
    pch_buf_dispose(&mtext);
    return rc;
}
