/* A projection root on object storage (RFC-0006 §10.2, §11.1; docs/object-storage.md
** "Vortex roots on S3").
**
** A writer builds its snapshot in a local staging root as it would locally, then uploads each
** file whole, in the §9.5 publish order, under its unique name, and commits by
** create-if-absent of one object per snapshot sequence, `commits/<20-digit sequence>.json`,
** which holds the CURRENT record of the snapshot with its sequence. Two writers that started
** from the same sequence race on the same key: one wins, the other fails with "stale
** commit" and leaves only unreferenced objects. `CURRENT` is then written (a plain PUT) as the
** readers' pointer; a writer never trusts it alone: it reads it, then follows
** commits/<n+1>, <n+2>, ... until one is missing, so a CURRENT that lags (a writer that died
** between its commit and its CURRENT) costs a GET, never a lost or forked commit. Before any
** upload the writer proves that the store refuses a second create-if-absent
** (pch_store_check_commit): a store that does not is refused for writing. */
#include <stdlib.h>
#include <string.h>

#include "projection/pj_int.h"

struct pj_remote {
    pch_ctx *ctx;
    pch_store *st;
    char *uri;
    uint64_t seq;              /* the sequence of the snapshot this writer builds on (0: none) */
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

/* The "sequence" member of a CURRENT or commit record (0 when absent: a root written before
** sequences, or by the local writer). */
static int record_seq(pch_ctx *ctx, const pch_buf *raw, uint64_t *seq, pch_error *err)
{
    pch_json_parser *p = NULL;
    const pch_json_value *v;
    *seq = 0;
    PCH_TRY(pch_json_parser_new(&p, ctx, NULL, err));
    int rc = PCH_OK;
    if (pch_json_parser_parse(p, raw->len ? (const char *)raw->data : "", raw->len, &v, err) < 0 || v->kind != PCH_JSON_OBJECT)
        rc = pch_error_set(err, PCH_ECORRUPT, "CURRENT is not a JSON object");
    else if (pj_json_member(v, "sequence", PCH_JSON_NUMBER) && !pj_json_u64(v, "sequence", seq))
        rc = pch_error_set(err, PCH_ECORRUPT, "CURRENT: sequence is not a non-negative integer");
    pch_json_parser_free(p);
    return rc;
}

static void commit_key(char out[64], uint64_t seq)
{
    snprintf(out, 64, "commits/%020llu.json", (unsigned long long)seq);
}

/* The newest commit of the root at uri: CURRENT, then commits/<n+1>, <n+2>, ... until one is
** missing (*seq: its sequence, 0 when the root has no snapshot; *had: whether it has one). */
static int latest(pch_ctx *ctx, pch_store *st, const char *uri, pj_current *cur, pch_buf *cur_raw, uint64_t *seq,
                  bool *had, pch_error *err)
{
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = pch_store_get(st, "CURRENT", 64 * 1024, &data, &len, NULL, err);
    *had = false;
    *seq = 0;
    if (rc == PCH_ENOTFOUND) {
        rc = PCH_OK;
    } else if (rc == PCH_OK) {
        pch_buf_clear(cur_raw);
        if (pch_buf_append(cur_raw, data, len)) { rc = nomem(err); goto done; }
        if ((rc = pj_current_parse(ctx, (const char *)data, len, cur, err)) < 0) { pch_error_prefix(err, "%s/CURRENT", uri); goto done; }
        if ((rc = record_seq(ctx, cur_raw, seq, err)) < 0) goto done;
        *had = true;
    } else {
        goto done;
    }
    /* follow the commits past what CURRENT says */
    for (;;) {
        char key[64];
        uint64_t s;
        commit_key(key, *seq + 1);
        pch_free(ctx, data);
        data = NULL;
        rc = pch_store_get(st, key, 64 * 1024, &data, &len, NULL, err);
        if (rc == PCH_ENOTFOUND) { rc = PCH_OK; break; }
        if (rc < 0) goto done;
        pch_buf_clear(cur_raw);
        if (pch_buf_append(cur_raw, data, len)) { rc = nomem(err); goto done; }
        if ((rc = pj_current_parse(ctx, (const char *)data, len, cur, err)) < 0 || (rc = record_seq(ctx, cur_raw, &s, err)) < 0) {
            pch_error_prefix(err, "%s/%s", uri, key);
            goto done;
        }
        if (s != *seq + 1) { rc = pch_error_set(err, PCH_ECORRUPT, "%s/%s records sequence %llu", uri, key, (unsigned long long)s); goto done; }
        *seq = s;
        *had = true;
    }
done:
    pch_free(ctx, data);
    return rc;
}

int pj_remote_open(pch_ctx *ctx, const char *uri, pj_remote **out, pj_current *cur, pch_buf *cur_raw,
                   bool *had_current, pch_error *err)
{
    pj_remote *r = pch_calloc(ctx, 1, sizeof *r);
    int rc;
    *out = NULL;
    *had_current = false;
    if (!r) return nomem(err);
    r->ctx = ctx;
    if (!(r->uri = pch_strndup(ctx, uri, strlen(uri)))) { rc = nomem(err); goto fail; }
    if ((rc = pch_store_open(ctx, uri, NULL, &r->st, err)) < 0) goto fail;
    if ((rc = pch_store_check_commit(r->st, err)) < 0) goto fail;
    if ((rc = latest(ctx, r->st, uri, cur, cur_raw, &r->seq, had_current, err)) < 0) goto fail;
    *out = r;
    return PCH_OK;
fail:
    pj_remote_free(r);
    return rc;
}

int pj_head_read(pch_ctx *ctx, const char *root, pj_current *cur, pch_buf *raw, pch_error *err)
{
    pch_store *st = NULL;
    pch_buf own;
    uint64_t seq;
    bool had;
    int rc;
    if (!pch_rfile_is_remote(root)) return pj_current_read(ctx, root, cur, raw, err);
    memset(cur, 0, sizeof *cur);
    pch_buf_init(&own, ctx);
    if ((rc = pch_store_open(ctx, root, NULL, &st, err)) == PCH_OK &&
        (rc = latest(ctx, st, root, cur, raw ? raw : &own, &seq, &had, err)) == PCH_OK && !had)
        rc = pch_error_set(err, PCH_ENOTFOUND, "no CURRENT and no commit (not a pchronicle-vortex dataset root, or never published)");
    pch_store_close(st);
    pch_buf_dispose(&own);
    return rc;
}

int pj_remote_put(pj_remote *r, const char *local_path, const char *rel, pch_error *err)
{
    int rc = pch_store_put_file(r->st, rel, local_path, 0, err);
    return rc < 0 ? pch_error_prefix(err, "publish %s", rel) : PCH_OK;
}

int pj_remote_commit(pj_remote *r, const char *snapshot_id, const char *digest, pch_error *err)
{
    pch_buf rec;
    char key[64];
    pch_buf_init(&rec, r->ctx);
    pch_buf_printf(&rec, "{\"format\":\"%s\",\"snapshot_id\":\"%s\",\"manifest\":\"manifests/%s.json\",\"manifest_digest\":\"%s\","
                         "\"sequence\":%llu}\n", PJ_CURRENT_FORMAT, snapshot_id, snapshot_id, digest, (unsigned long long)(r->seq + 1));
    if (rec.oom) return nomem(err);
    commit_key(key, r->seq + 1);
    int rc = pch_store_put(r->st, key, rec.data, rec.len, PCH_PUT_IF_ABSENT, err);
    if (rc == PCH_EEXISTS) {
        rc = pch_error_set(err, PCH_EEXISTS, "stale commit: another writer committed sequence %llu of %s first; nothing was "
                           "published (snapshot %s is unreferenced)", (unsigned long long)(r->seq + 1), r->uri, snapshot_id);
    } else if (rc == PCH_OK) {
        r->seq++;
        /* the readers' pointer; the commit above already decided */
        if ((rc = pch_store_put(r->st, "CURRENT", rec.data, rec.len, 0, err)) < 0)
            pch_error_prefix(err, "snapshot %s is committed (%s) but CURRENT was not updated: readers see the previous "
                             "snapshot until the next commit", snapshot_id, key);
    }
    pch_buf_dispose(&rec);
    return rc;
}

int pj_local_only(const char *root, const char *what, pch_error *err)
{
    if (!pch_rfile_is_remote(root)) return PCH_OK;
    return pch_error_set(err, PCH_EUNSUPPORTED, "%s of a root on object storage (%s) is not supported yet: every other verb "
                         "runs there (docs/object-storage.md)", what, root);
}

void pj_remote_free(pj_remote *r)
{
    if (!r) return;
    pch_store_close(r->st);
    pch_free(r->ctx, r->uri);
    pch_free(r->ctx, r);
}
