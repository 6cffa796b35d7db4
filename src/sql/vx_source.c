/* The storyline relations over a Vortex projection root (RFC-0006 §13.1; docs/sql.md
** "Vortex projection"): the SQLite module "vortex", a document source for vtab.c.
**
** CREATE VIRTUAL TABLE t USING vortex('ROOT', 'runs'|'steps'|'tool_calls'|'observation_results')
**
** Each virtual table pins the snapshot CURRENT names when it connects. A cursor reads the
** document roots in storage order (each cluster decoded once), rebuilds each document from
** its lanes (pch_vxp_get_doc, every value hydrated and checked), parses it as the importers
** do, gives every trajectory the key the projection stored for it (a key made unique across
** documents at build time is not derivable from the document alone), and computes the
** Storyline rows with the importer's own code (pch_storyline_rowgen): the columns, types,
** null semantics and values of docs/storyline.md §2 by construction. Embedded assets get
** the object id a Storyline root gives them (both are the BLAKE3 of the bytes).
**
** Built into libpchronicle-vortex (the pchronicle CLI links no Vortex code, §3.6). */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pchronicle/atif.h"
#include "pchronicle/sql.h"
#include "pchronicle/storyline.h"
#include "pchronicle-vortex/projection.h"
#include "sql/sql_int.h"

typedef struct vx_src {
    pch_ctx *ctx;
    pch_vxp_snapshot *snap;
    uint64_t *docs;                 /* document roots, storage order */
    uint64_t n_docs;
    uint64_t *by_path;              /* positions in docs, sorted by document path */
    pch_vxp_doc doc;                /* the document being turned into rows */
    pch_buf assets;                 /* its assets: (u32 path length, path, 32-byte id)... */
} vx_src;

static void vx_close(void *h);

static const char *doc_path_of(vx_src *s, uint64_t pos)
{
    const char *p = "";
    pch_error e;
    (void)pch_vxp_entry(s->snap, s->docs[pos], NULL, NULL, NULL, &p, NULL, &e);  /* loaded */
    return p;
}

static int cmp_path(const void *a, const void *b, void *arg)
{
    vx_src *s = arg;
    return strcmp(doc_path_of(s, *(const uint64_t *)a), doc_path_of(s, *(const uint64_t *)b));
}

static int vx_open(void **h, pch_ctx *ctx, const char *path, pch_error *err)
{
    vx_src *s = pch_calloc(ctx, 1, sizeof *s);
    int rc;
    *h = NULL;
    if (!s) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    s->ctx = ctx;
    pch_buf_init(&s->assets, ctx);
    rc = pch_vxp_snapshot_open(&s->snap, ctx, path, err);
    if (rc == PCH_OK) rc = pch_vxp_documents(s->snap, &s->docs, &s->n_docs, err);
    if (rc == PCH_OK && !(s->by_path = pch_malloc(ctx, (size_t)(s->n_docs ? s->n_docs : 1) * 8)))
        rc = pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    if (rc == PCH_OK) {
        for (uint64_t i = 0; i < s->n_docs; i++) s->by_path[i] = i;
        qsort_r(s->by_path, (size_t)s->n_docs, 8, cmp_path, s);
    }
    if (rc < 0) {
        vx_close(s);
        return rc;
    }
    *h = s;
    return PCH_OK;
}

static void vx_close(void *h)
{
    vx_src *s = h;
    if (s->snap) pch_vxp_doc_dispose(s->snap, &s->doc);
    pch_vxp_snapshot_free(s->snap);
    pch_free(s->ctx, s->docs);
    pch_free(s->ctx, s->by_path);
    pch_buf_dispose(&s->assets);
    pch_free(s->ctx, s);
}

static int collect_asset(const uint8_t id[32], const char *p, size_t n, void *payload)
{
    pch_buf *b = payload;
    uint8_t len[4];
    pch_store_le32(len, (uint32_t)n);
    if (pch_buf_append(b, len, 4) < 0 || pch_buf_append(b, p, n) < 0 || pch_buf_append(b, id, 32) < 0)
        return PCH_ENOMEM;
    return 0;
}

/* Resolver of the row generator: the embedded asset of this document with that path. */
static bool vx_asset(const char *doc_path, const char *path, size_t path_len, char id_hex[65], void *payload)
{
    vx_src *s = payload;
    const uint8_t *p = s->assets.data, *end = p + s->assets.len;
    (void)doc_path;                 /* only the current document's assets were collected */
    while (p && end - p >= 4) {
        uint32_t n = pch_load_le32(p);
        if ((size_t)(end - p) < 4 + (size_t)n + 32) break;
        if (n == path_len && memcmp(p + 4, path, n) == 0) {
            pch_hex_encode(id_hex, p + 4 + n, 32);
            id_hex[64] = 0;
            return true;
        }
        p += 4 + n + 32;
    }
    return false;
}

static int vx_next(void *h, uint64_t *pos, pch_storyline_rowgen *g, bool *eof, pch_error *err)
{
    vx_src *s = h;
    pch_atif_options ao = PCH_ATIF_OPTIONS_INIT;
    pch_atif_doc *d = NULL;
    const char *source = NULL, *doc_path = NULL;
    int rc;
    *eof = *pos >= s->n_docs;
    if (*eof) return PCH_OK;
    pch_vxp_doc_dispose(s->snap, &s->doc);
    pch_buf_clear(&s->assets);
    PCH_TRY(pch_vxp_entry(s->snap, s->docs[*pos], &source, NULL, NULL, &doc_path, NULL, err));
    PCH_TRY(pch_vxp_get_doc(s->snap, s->docs[*pos], &s->doc, err));
    ao.source_id = source;
    rc = pch_atif_doc_parse(&d, s->ctx, s->doc.json, s->doc.len, doc_path, &ao, NULL, NULL, err);
    if (rc < 0) return pch_error_prefix(err, "vortex sql: document %s as rebuilt from the projection", doc_path);
    if (pch_atif_doc_count(d) != s->doc.n_rows)
        rc = pch_error_set(err, PCH_ECORRUPT, "vortex sql: %s: %zu trajectories in the document, %zu in the directory",
                           doc_path, pch_atif_doc_count(d), s->doc.n_rows);
    for (size_t i = 0; i < s->doc.n_rows && rc == PCH_OK; i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(d, i);
        const char *run = NULL, *traj = NULL;
        rc = pch_vxp_entry(s->snap, s->doc.rows[i], NULL, &run, &traj, NULL, NULL, err);
        /* a key the build made unique across documents (§5.2): generated, as the importer
        ** marks it (pch_atif_dir_import) */
        if (rc == PCH_OK && (strcmp(run, t->run_key) != 0 || strcmp(traj, t->trajectory_key) != 0))
            rc = pch_atif_doc_set_key(d, i, strcmp(run, t->run_key) ? run : NULL, traj, true, err);
        if (rc == PCH_OK) rc = pch_vxp_each_asset(s->snap, s->doc.rows[i], collect_asset, &s->assets, err);
        if (rc == PCH_ENOMEM) pch_error_set(err, rc, "vortex sql: out of memory");
    }
    if (rc == PCH_OK) rc = pch_storyline_rowgen_add(g, d, err);
    pch_atif_doc_free(d);
    if (rc < 0) return rc;
    (*pos)++;
    return PCH_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Documents holding trajectory key `key`: the directory finds its trajectories (§13.3 key
** equality through the directory), their document paths name the documents. */
static int vx_find(void *h, const char *key, size_t key_len, uint64_t **pos, size_t *n, pch_error *err)
{
    vx_src *s = h;
    uint64_t idx[64], *out;
    size_t got = 0, k = 0;
    char *z;
    int rc;
    *pos = NULL;
    *n = 0;
    if (!(z = pch_malloc(s->ctx, key_len + 1))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    memcpy(z, key, key_len);
    z[key_len] = 0;
    rc = strlen(z) == key_len ? pch_vxp_lookup(s->snap, z, idx, 64, &got, err) : PCH_ENOTFOUND;
    pch_free(s->ctx, z);
    if (rc == PCH_ENOTFOUND) { got = 0; rc = PCH_OK; }
    if (rc < 0) return rc;
    if (got > 64) {                 /* a key shared by many: read every document */
        if (!(out = pch_malloc(s->ctx, (size_t)(s->n_docs ? s->n_docs : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
        for (uint64_t i = 0; i < s->n_docs; i++) out[i] = i;
        *pos = out;
        *n = (size_t)s->n_docs;
        return PCH_OK;
    }
    if (!(out = pch_malloc(s->ctx, (got ? got : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    for (size_t i = 0; i < got; i++) {
        const char *dp = NULL;
        size_t lo = 0, hi = (size_t)s->n_docs;
        if ((rc = pch_vxp_entry(s->snap, idx[i], NULL, NULL, NULL, &dp, NULL, err)) < 0) { pch_free(s->ctx, out); return rc; }
        while (lo < hi) {           /* binary search of the document path */
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp(doc_path_of(s, s->by_path[mid]), dp);
            if (c == 0) { lo = mid; break; }
            if (c < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < s->n_docs && strcmp(doc_path_of(s, s->by_path[lo]), dp) == 0) out[k++] = s->by_path[lo];
    }
    qsort(out, k, 8, cmp_u64);
    *n = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || out[i] != out[i - 1]) out[(*n)++] = out[i];
    *pos = out;
    return PCH_OK;
}

/* An embed-assets projection lists every asset with its object id, as a Storyline root
** imported with embedded assets; a preserve-reference one lists none, as one imported with
** --assets reference. */
static pch_storyline_assets vx_asset_mode(void *h)
{
    vx_src *s = h;
    return pch_vxp_snapshot_assets(s->snap) == PCH_VXP_ASSETS_EMBED ? PCH_STORYLINE_ASSETS_EMBED
                                                                    : PCH_STORYLINE_ASSETS_REFERENCE;
}

static const pch_sql_doc_source k_vortex = { "vortex", vx_open, vx_close, vx_next, vx_asset, vx_asset_mode, vx_find };

int pch_vxp_sql_register(sqlite3 *db)
{
    int rc = pch_sql_register(db);
    return rc == SQLITE_OK ? pch_sql__register_docs(db, &k_vortex) : rc;
}

static int attach_vortex(sqlite3 *db, void *payload, char **msg)
{
    int rc = pch_sql__register_docs(db, &k_vortex);
    return rc == SQLITE_OK ? pch_sql_attach_module(db, "vortex", payload, msg) : rc;
}

int pch_vxp_sql_run(const char *root, const char *sql, pch_sql_format fmt, FILE *out, pch_error *err)
{
    return pch_sql_run_with(attach_vortex, (void *)(uintptr_t)root, sql, fmt, out, err);
}

/* Loadable extension entry point (build/pchronicle_vortex_sqlite.so): the storyline, lance
** and vortex modules. */
PCH_API int sqlite3_pchroniclevortexsqlite_init(sqlite3 *db, char **errmsg, const void *api);
PCH_API int sqlite3_pchroniclevortexsqlite_init(sqlite3 *db, char **errmsg, const void *api)
{
    (void)errmsg;
    (void)api;
    return pch_vxp_sql_register(db);
}
