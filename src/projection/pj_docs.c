/* The document list of a snapshot (RFC-0006 §11.2: "per-document digests kept in the
** snapshot"): one row per input document — its path, size, modification time, the BLAKE3 of
** its bytes, whether it was projected or rejected, and what it holds. An incremental sync
** compares the input against it (a document whose size and time are unchanged is not read;
** one whose bytes hash the same is unchanged) and the manifest's counts are its sums.
** Written as directories/documents/<snapshot-id>.vortex, sorted by path, listed in the
** manifest's "documents" with its digest. */
#include <inttypes.h>
#include <stdlib.h>

#include "projection/pj_int.h"

#define DOCS_SCHEMA "doc_path:utf8,bytes:u64,mtime_ns:i64,digest:binary?,state:u8,trajectories:u32,steps:u64," \
    "tool_calls:u64,results:u64,tokens:u64,logical_bytes:u64"
enum { C_PATH, C_BYTES, C_MTIME, C_DIGEST, C_STATE, C_TRAJ, C_STEPS, C_CALLS, C_RESULTS, C_TOKENS, C_LOGICAL, C_N };

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

static int cmp_rec(const void *a, const void *b)
{
    return strcmp(((const pj_docrec *)a)->path, ((const pj_docrec *)b)->path);
}

void pj_docs_sort(pj_docrec *recs, size_t n)
{
    if (n > 1) qsort(recs, n, sizeof *recs, cmp_rec);
}

const pj_docrec *pj_docs_find(const pj_docrec *recs, size_t n, const char *path)
{
    pj_docrec key;
    memset(&key, 0, sizeof key);
    key.path = (char *)(uintptr_t)path;
    return n ? bsearch(&key, recs, n, sizeof *recs, cmp_rec) : NULL;
}

void pj_docs_free(pj_docrec *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) free(recs[i].path);
    free(recs);
}

int pj_docs_write(pch_ctx *ctx, const char *stage, const char *snapshot_id, const pj_docrec *recs, size_t n,
                  pch_buf *json, uint64_t *bytes_out, pch_error *err)
{
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *vb = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_array *a = NULL;
    pch_buf p;
    char rel[128], digest[80];
    uint64_t bytes = 0;
    int rc;
    for (size_t i = 1; i < n; i++)
        if (strcmp(recs[i - 1].path, recs[i].path) >= 0)
            return pch_error_set(err, PCH_EINVAL, "projection: document list not sorted at %s", recs[i].path);
    snprintf(rel, sizeof rel, "directories/documents/%s.vortex", snapshot_id);
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/%s", stage, rel);
    if (p.oom) return nomem(err);
    wo.zone_len = 0;
    wo.threads = 2;   /* its eleven lanes: a sync writes the whole list (the file is the same) */
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    CK(pch_vx_dtype_parse(&dt, ctx, DOCS_SCHEMA, err));
    CK(pch_vx_builder_new(&vb, ctx, dt, err));
    for (size_t i = 0; i < n; i++) {
        const pj_docrec *r = &recs[i];
        pch_vx_builder *c[C_N];
        for (uint32_t k = 0; k < C_N; k++) c[k] = pch_vx_builder_child(vb, k);
        CK(pch_vx_builder_append_bytes(c[C_PATH], r->path, strlen(r->path), err));
        CK(pch_vx_builder_append_uint(c[C_BYTES], r->bytes, err));
        CK(pch_vx_builder_append_int(c[C_MTIME], r->mtime_ns, err));
        CK(r->has_digest ? pch_vx_builder_append_bytes(c[C_DIGEST], r->digest, 32, err) : pch_vx_builder_append_null(c[C_DIGEST], err));
        CK(pch_vx_builder_append_uint(c[C_STATE], r->state, err));
        CK(pch_vx_builder_append_uint(c[C_TRAJ], r->trajectories, err));
        CK(pch_vx_builder_append_uint(c[C_STEPS], r->steps, err));
        CK(pch_vx_builder_append_uint(c[C_CALLS], r->calls, err));
        CK(pch_vx_builder_append_uint(c[C_RESULTS], r->results, err));
        CK(pch_vx_builder_append_uint(c[C_TOKENS], r->tokens, err));
        CK(pch_vx_builder_append_uint(c[C_LOGICAL], r->logical, err));
        CK(pch_vx_builder_append_valid(vb, err));
    }
    CK(pch_vx_builder_finish(vb, &a, err));
    CK(pch_vx_writer_open_path(&w, ctx, dt, (const char *)p.data, &wo, err));
    CK(pch_vx_writer_write(w, a, err));
    CK(pch_vx_writer_finish(w, err));
    CK(pj_file_digest((const char *)p.data, digest, &bytes, err));
    pch_buf_printf(json, "{\"path\":\"%s\",\"bytes\":%" PRIu64 ",\"digest\":\"%s\",\"rows\":%zu}", rel, bytes, digest, n);
    if (json->oom) rc = nomem(err);
#undef CK
done:
    if (bytes_out) *bytes_out = bytes;
    pch_vx_writer_free(w);
    pch_vx_array_free(a);
    pch_vx_builder_free(vb);
    pch_vx_dtype_free(dt);
    pch_buf_dispose(&p);
    return rc;
}

int pj_docs_decode_mem(pch_ctx *ctx, const void *data, size_t len, const char *rel, pj_docrec **out, size_t *n_out,
                       pch_error *err)
{
    pch_vx_file *f = NULL;
    pch_vx_array *a = NULL;
    pch_vx_dtype *dt = NULL, *want = NULL;
    pj_docrec *recs = NULL;
    uint64_t n = 0;
    int rc = PCH_OK;
    *out = NULL;
    *n_out = 0;
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    CK(pch_vx_file_open_mem(&f, ctx, data, len, err));
    CK(pch_vx_dtype_parse(&want, ctx, DOCS_SCHEMA, err));
    if (!pch_vx_dtype_equal(pch_vx_file_dtype(f), want)) { rc = pch_error_set(err, PCH_ECORRUPT, "%s: not a document list", rel); goto done; }
    CK(pch_vx_file_scan(f, NULL, &a, &dt, err));
    if (!pch_vx_dtype_equal(dt, want) || a->n_children != C_N) { rc = pch_error_set(err, PCH_ECORRUPT, "%s: not a document list", rel); goto done; }
    if (a->len && !(recs = calloc((size_t)a->len, sizeof *recs))) { rc = nomem(err); goto done; }
    for (n = 0; n < a->len; n++) {
        pj_docrec *r = &recs[n];
        const char *s;
        size_t sn;
        if (!pch_vx_row_bytes(a->children[C_PATH], n, &s, &sn) || !sn || memchr(s, 0, sn)) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: row %" PRIu64 " has no document path", rel, n);
            goto done;
        }
        if (!(r->path = strndup(s, sn))) { rc = nomem(err); goto done; }
        if (n && strcmp(recs[n - 1].path, r->path) >= 0) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: document paths not sorted and unique at row %" PRIu64, rel, n);
            n++;
            goto done;
        }
        r->bytes = pch_vx_row_uint(a->children[C_BYTES], n);
        r->mtime_ns = (int64_t)pch_vx_row_uint(a->children[C_MTIME], n);
        if ((r->has_digest = pch_vx_row_bytes(a->children[C_DIGEST], n, &s, &sn))) {
            if (sn != 32) { rc = pch_error_set(err, PCH_ECORRUPT, "%s: row %" PRIu64 ": digest of %zu bytes", rel, n, sn); n++; goto done; }
            memcpy(r->digest, s, 32);
        }
        r->state = (uint8_t)pch_vx_row_uint(a->children[C_STATE], n);
        if (r->state > PJ_DOC_REJECTED) {    /* a projected one without a digest is read again by a sync */
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: row %" PRIu64 ": unknown state %u", rel, n, r->state);
            n++;
            goto done;
        }
        r->trajectories = (uint32_t)pch_vx_row_uint(a->children[C_TRAJ], n);
        r->steps = pch_vx_row_uint(a->children[C_STEPS], n);
        r->calls = pch_vx_row_uint(a->children[C_CALLS], n);
        r->results = pch_vx_row_uint(a->children[C_RESULTS], n);
        r->tokens = pch_vx_row_uint(a->children[C_TOKENS], n);
        r->logical = pch_vx_row_uint(a->children[C_LOGICAL], n);
    }
#undef CK
done:
    if (rc < 0) pj_docs_free(recs, (size_t)n);
    else { *out = recs; *n_out = (size_t)n; }
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    pch_vx_dtype_free(want);
    pch_vx_file_free(f);
    return rc;
}

int pj_docs_load(pch_ctx *ctx, const char *root, const pch_json_value *m, pj_docrec **out, size_t *n_out,
                 pch_error *err)
{
    const pch_json_value *l = pj_json_member(m, "documents", PCH_JSON_ARRAY);
    pch_buf p, raw;
    char rel[256], dig[80], got[80];
    uint64_t rows;
    int rc = PCH_OK;
    *out = NULL;
    *n_out = 0;
    if (!l) return pch_error_set(err, PCH_EUNSUPPORTED, "the snapshot keeps no document list (built before incremental sync): "
                                 "build the projection again");
    if (l->n != 1 || !pj_json_str(&l->u.items[0], "path", rel, sizeof rel) || !pj_json_str(&l->u.items[0], "digest", dig, sizeof dig) ||
        !pj_json_u64(&l->u.items[0], "rows", &rows))
        return pch_error_set(err, PCH_ECORRUPT, "manifest: documents must list one file with path, digest and rows");
    PCH_TRY(pj_path_check(rel, strlen(rel), err));
    pch_buf_init(&p, ctx);
    pch_buf_init(&raw, ctx);
    pch_buf_printf(&p, "%s/%s", root, rel);
    if (p.oom) return nomem(err);
    rc = pch_rfile_read_all(ctx, &raw, (const char *)p.data, (size_t)1 << 31, err);
    if (rc == PCH_OK) {
        pj_bytes_digest(got, raw.data, raw.len);
        if (strcmp(got, dig) != 0) rc = pch_error_set(err, PCH_ECORRUPT, "%s: digest %s, manifest says %s", rel, got, dig);
    }
    if (rc == PCH_OK) rc = pj_docs_decode_mem(ctx, raw.data, raw.len, rel, out, n_out, err);
    if (rc == PCH_OK && *n_out != rows) {
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: %zu rows, manifest says %" PRIu64, rel, *n_out, rows);
        pj_docs_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    pch_buf_dispose(&raw);
    pch_buf_dispose(&p);
    return rc;
}
