/* The dataset root (RFC-0006 §10): CURRENT (§10.2), immutable manifests (§10.3), the path
** rules of §16.2 (relative to the root, no traversal, only the dataset's directories),
** file digests. Everything read here is untrusted and validated before use. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "projection/pj_int.h"

const pch_json_value *pj_json_member(const pch_json_value *o, const char *key, pch_json_kind kind)
{
    const pch_json_value *v = o ? pch_json_get(o, key, strlen(key)) : NULL;
    return v && v->kind == kind ? v : NULL;
}

bool pj_json_u64(const pch_json_value *o, const char *key, uint64_t *out)
{
    const pch_json_value *v = pj_json_member(o, key, PCH_JSON_NUMBER);
    if (!v || !(v->num_flags & PCH_JSON_NUM_U64)) return false;
    *out = v->u.num.u;
    return true;
}

uint64_t pj_key_hash(const char *s, size_t n)
{
    uint8_t h[32];
    pch_blake3_hash(h, s, n);
    return pch_load_le64(h);
}

bool pj_producer_id_len(const char *t, const char *doc, size_t *n)
{
    size_t tl = strlen(t), dl = strlen(doc);
    if (tl < dl + 1 || t[tl - dl - 1] != '@' || memcmp(t + tl - dl, doc, dl) != 0) return false;
    *n = tl - dl - 1;
    return true;
}

bool pj_key_is_derived(const char *t, const char *run, const char *doc)
{
    size_t n;
    return pj_producer_id_len(t, doc, &n) && n == strlen(run) && memcmp(t, run, n) == 0;
}

bool pj_json_str(const pch_json_value *o, const char *key, char *out, size_t cap)
{
    const pch_json_value *v = pj_json_member(o, key, PCH_JSON_STRING);
    if (!v || v->u.str.len >= cap || memchr(v->u.str.ptr, 0, v->u.str.len)) return false;
    memcpy(out, v->u.str.ptr, v->u.str.len);
    out[v->u.str.len] = 0;
    return true;
}

int pj_path_check(const char *p, size_t n, pch_error *err)
{
    static const char *const dirs[] = { "manifests/", "inventories/", "directories/trajectory/",
                                        "directories/content/", "directories/documents/", "directories/keys/", "directories/lanes/",
                                        "data/", "blobs/" };
    bool under = false;
    size_t seg = 0;
    if (n == 0 || n > 512) return pch_error_set(err, PCH_ECORRUPT, "path of %zu bytes in the dataset metadata", n);
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (n > strlen(dirs[i]) && memcmp(p, dirs[i], strlen(dirs[i])) == 0) under = true;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && (p[i] == 0 || p[i] == '\\' || (uint8_t)p[i] < 0x20))
            return pch_error_set(err, PCH_ECORRUPT, "path '%.*s' has a forbidden byte", (int)n, p);
        if (i == n || p[i] == '/') {
            size_t l = i - seg;
            if (l == 0 || (l == 1 && p[seg] == '.') || (l == 2 && p[seg] == '.' && p[seg + 1] == '.'))
                return pch_error_set(err, PCH_ECORRUPT, "path '%.*s' leaves the dataset root (empty, '.' or '..' segment, or absolute)", (int)n, p);
            seg = i + 1;
        }
    }
    if (!under) return pch_error_set(err, PCH_ECORRUPT, "path '%.*s' is outside the dataset's directories", (int)n, p);
    return PCH_OK;
}

/* "blake3:<64 hex>" of a 32-byte digest. */
static void digest_text(char out[80], const uint8_t d[32])
{
    char hex[65];
    pch_hex_encode(hex, d, 32);
    snprintf(out, 80, "blake3:%s", hex);
}

void pj_bytes_digest(char out[80], const void *p, size_t n)
{
    uint8_t d[32];
    pch_blake3_hash(d, p, n);
    digest_text(out, d);
}

int pj_file_digest(const char *path, char out[80], uint64_t *bytes_out, pch_error *err)
{
    return pj_file_digest_parts(path, out, bytes_out, NULL, 0, NULL, err);   /* no parts: the whole file */
}

int pj_file_digest_parts(const char *path, char out[80], uint64_t *bytes_out, const uint64_t *cuts, size_t n,
                         char (*parts)[80], pch_error *err)
{
    pch_rfile *f;
    pch_blake3 whole, part;
    uint64_t size = 0, at = 0;
    size_t k = 0;                           /* the part being hashed, once at >= cuts[0] */
    uint8_t *buf = NULL, d[32];
    int rc = pch_rfile_open(NULL, path, &f, err);
    if (rc < 0) return rc;
    if ((rc = pch_rfile_size(f, &size, err)) < 0) goto done;
    for (size_t i = 0; i < n; i++)
        if (cuts[i] > size || (i && cuts[i] < cuts[i - 1])) {
            rc = pch_error_set(err, PCH_EINVAL, "part %zu starts at %" PRIu64 ", before the previous part or past the file's %" PRIu64
                               " bytes", i, cuts[i], size);
            goto done;
        }
    if (!(buf = malloc(1 << 20))) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
    pch_blake3_init(&whole);
    pch_blake3_init(&part);
    while (at < size) {
        size_t want = size - at < (1u << 20) ? (size_t)(size - at) : (1u << 20);
        if ((rc = pj_pread(f, at, want, buf, err)) < 0) goto done;
        pch_blake3_update(&whole, buf, want);
        for (uint64_t pos = at, end = at + want; n && pos < end;) {
            if (pos < cuts[0]) { pos = cuts[0] < end ? cuts[0] : end; continue; }   /* before every part */
            while (k + 1 < n && pos == cuts[k + 1]) {     /* part k ends here */
                pch_blake3_final(&part, d, 32);
                digest_text(parts[k++], d);
                pch_blake3_init(&part);
            }
            uint64_t stop = k + 1 < n && cuts[k + 1] < end ? cuts[k + 1] : end;
            pch_blake3_update(&part, buf + (pos - at), (size_t)(stop - pos));
            pos = stop;
        }
        at += want;
    }
    for (; k < n; k++) {                    /* the last part ends with the file; empty ones too */
        pch_blake3_final(&part, d, 32);
        digest_text(parts[k], d);
        pch_blake3_init(&part);
    }
    pch_blake3_final(&whole, d, 32);
    digest_text(out, d);
    if (bytes_out) *bytes_out = size;
done:
    free(buf);
    pch_rfile_close(f);
    return rc < 0 ? pch_error_prefix(err, "%s", path) : PCH_OK;
}

int pj_range_digest(pch_rfile *fd, uint64_t off, uint64_t len, char out[80], pch_error *err)
{
    uint8_t d[32];
    PCH_TRY(pj_range_hash(fd, off, len, d, err));
    digest_text(out, d);
    return PCH_OK;
}

int pj_pread(pch_rfile *fd, uint64_t off, size_t len, uint8_t *dst, pch_error *err)
{
    int rc = pch_rfile_pread(fd, dst, len, off, err);
    if (rc == PCH_ECORRUPT) return pch_error_set(err, PCH_ECORRUPT, "file shorter than its recorded ranges");
    return rc;
}

int pj_range_hash(pch_rfile *fd, uint64_t off, uint64_t len, uint8_t d[32], pch_error *err)
{
    pch_blake3 h;
    uint8_t *buf;
    if (!(buf = malloc(1 << 20))) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    pch_blake3_init(&h);
    for (uint64_t done = 0; done < len;) {
        size_t want = len - done < (1u << 20) ? (size_t)(len - done) : (1u << 20);
        int rc = pj_pread(fd, off + done, want, buf, err);
        if (rc < 0) { free(buf); return rc; }
        pch_blake3_update(&h, buf, want);
        done += want;
    }
    free(buf);
    pch_blake3_final(&h, d, 32);
    return PCH_OK;
}

int pj_random_id(char *out, size_t n, pch_error *err)
{
    uint8_t b[32];
    if (n > sizeof b) n = sizeof b;
    PCH_TRY(pch_random_bytes(b, n, err));
    pch_hex_encode(out, b, n);
    return PCH_OK;
}

static bool digest_ok(const char *d)
{
    if (strlen(d) != 71 || strncmp(d, "blake3:", 7) != 0) return false;
    for (size_t i = 7; i < 71; i++) if (!((d[i] >= '0' && d[i] <= '9') || (d[i] >= 'a' && d[i] <= 'f'))) return false;
    return true;
}

bool pj_snapshot_id_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 8 || n > 48) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-')) return false;
    return true;
}

int pj_current_parse(pch_ctx *ctx, const char *text, size_t len, pj_current *cur, pch_error *err)
{
    pch_json_parser *p = NULL;
    const pch_json_value *v;
    char fmt[64], want[160];
    int rc;
    memset(cur, 0, sizeof *cur);
    PCH_TRY(pch_json_parser_new(&p, ctx, NULL, err));
    rc = PCH_ECORRUPT;
    if (pch_json_parser_parse(p, text ? text : "", len, &v, err) < 0) {
        pch_error_prefix(err, "CURRENT is not valid JSON");
        if (err) err->code = PCH_ECORRUPT;
        goto done;
    }
    if (v->kind != PCH_JSON_OBJECT || !pj_json_str(v, "format", fmt, sizeof fmt)) { pch_error_set(err, rc, "CURRENT: not an object with a format"); goto done; }
    if (strcmp(fmt, PJ_CURRENT_FORMAT) != 0) { rc = pch_error_set(err, PCH_EUNSUPPORTED, "CURRENT: unknown format '%s' (want %s)", fmt, PJ_CURRENT_FORMAT); goto done; }
    if (!pj_json_str(v, "snapshot_id", cur->snapshot_id, sizeof cur->snapshot_id) || !pj_snapshot_id_ok(cur->snapshot_id) ||
        !pj_json_str(v, "manifest", cur->manifest, sizeof cur->manifest) ||
        !pj_json_str(v, "manifest_digest", cur->digest, sizeof cur->digest) || !digest_ok(cur->digest)) {
        pch_error_set(err, rc, "CURRENT: snapshot_id, manifest and manifest_digest (blake3:<64 hex>) are required");
        goto done;
    }
    snprintf(want, sizeof want, "manifests/%s.json", cur->snapshot_id);
    if (strcmp(want, cur->manifest) != 0) { pch_error_set(err, rc, "CURRENT: manifest '%s' is not %s", cur->manifest, want); goto done; }
    rc = pj_path_check(cur->manifest, strlen(cur->manifest), err);
done:
    pch_json_parser_free(p);
    return rc;
}

static int is_manifest(void *arg, const char *name)
{
    size_t l = strlen(name);
    if (l > 5 && strcmp(name + l - 5, ".json") == 0) { *(bool *)arg = true; return 1; }
    return 0;
}

/* Whether root/manifests/ holds a snapshot's manifest. */
static bool has_manifests(pch_ctx *ctx, const char *root)
{
    pch_buf p;
    pch_error e;
    bool any = false;
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/manifests", root);
    if (!p.oom) (void)pch_rfile_list(ctx, (const char *)p.data, is_manifest, &any, &e);
    pch_buf_dispose(&p);
    return any;
}

int pj_current_read(pch_ctx *ctx, const char *root, pj_current *cur, pch_buf *raw, pch_error *err)
{
    pch_buf path, text;
    int rc;
    memset(cur, 0, sizeof *cur);
    pch_buf_init(&path, ctx);
    pch_buf_init(&text, ctx);
    pch_buf_printf(&path, "%s/CURRENT", root);
    if (path.oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    rc = pch_rfile_read_all(ctx, &text, (const char *)path.data, 64 * 1024, err);
    if (rc == PCH_ENOTFOUND) {
        pch_buf_dispose(&path);
        pch_buf_dispose(&text);
        if (has_manifests(ctx, root))      /* published once: CURRENT was lost (§15) */
            return pch_error_set(err, PCH_ENOTFOUND, "source unavailable: no CURRENT, though manifests/ holds snapshots; "
                                 "name one with `pchronicle-vortex repair %s --manifest ID` (see `pchronicle-vortex snapshots %s`)",
                                 root, root);
        return pch_error_set(err, PCH_ENOTFOUND, "no CURRENT (not a pchronicle-vortex dataset root, or never published)");
    }
    pch_buf_dispose(&path);
    if (rc < 0) { pch_buf_dispose(&text); return pch_error_prefix(err, "CURRENT"); }
    rc = pj_current_parse(ctx, (const char *)text.data, text.len, cur, err);
    if (rc < 0 && err) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        pch_error_set(err, rc, "source unavailable: %s; `pchronicle-vortex repair %s --manifest ID` rebinds it "
                      "(see `pchronicle-vortex snapshots %s`)", why, root, root);
    }
    /* the bytes, parsed or not: the commit compares them, repair publishes only over them */
    if (raw && pch_buf_append(raw, text.data, text.len) < 0) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    pch_buf_dispose(&text);
    return rc;
}

/* Every list of the manifest: entries with a checked path, a blake3 digest and sizes. */
static int check_list(const pch_json_value *m, const char *name, const char *prefix, bool need_rows, const char *mname,
                      pch_error *err)
{
    const pch_json_value *l = pj_json_member(m, name, PCH_JSON_ARRAY);
    if (!l) return pch_error_set(err, PCH_ECORRUPT, "%s: no %s list", mname, name);
    if (l->n > 1000000) return pch_error_set(err, PCH_ELIMIT, "%s: %u entries in %s", mname, l->n, name);
    for (uint32_t i = 0; i < l->n; i++) {
        const pch_json_value *it = &l->u.items[i];
        char path[256], digest[80];
        uint64_t v;
        if (it->kind != PCH_JSON_OBJECT || !pj_json_str(it, "path", path, sizeof path) ||
            !pj_json_str(it, "digest", digest, sizeof digest) || !digest_ok(digest) || !pj_json_u64(it, "bytes", &v) ||
            (need_rows && !pj_json_u64(it, "rows", &v)))
            return pch_error_set(err, PCH_ECORRUPT, "%s: %s[%u] needs path, digest (blake3:<hex>), bytes%s", mname, name, i,
                                 need_rows ? " and rows" : "");
        PCH_TRY(pj_path_check(path, strlen(path), err));
        if (strncmp(path, prefix, strlen(prefix)) != 0 || strcmp(path + strlen(path) - 7, ".vortex") != 0)
            return pch_error_set(err, PCH_ECORRUPT, "%s: %s[%u] path '%s' is not %s*.vortex", mname, name, i, path, prefix);
    }
    return PCH_OK;
}

int pj_manifest_parse(pch_ctx *ctx, const pj_current *cur, const char *text, size_t len, pch_json_parser **parser,
                      const pch_json_value **m, pch_error *err)
{
    char fmt[64], sid[64];
    *m = NULL;
    PCH_TRY(pch_json_parser_new(parser, ctx, NULL, err));
    if (pch_json_parser_parse(*parser, text ? text : "", len, m, err) < 0 || (*m)->kind != PCH_JSON_OBJECT) {
        *m = NULL;
        return pch_error_set(err, PCH_ECORRUPT, "%s: not a JSON object", cur->manifest);
    }
    if (!pj_json_str(*m, "format", fmt, sizeof fmt)) return pch_error_set(err, PCH_ECORRUPT, "%s: no format", cur->manifest);
    if (strcmp(fmt, PJ_MANIFEST_FORMAT) != 0 && strcmp(fmt, PJ_MANIFEST_FORMAT_V2) != 0)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: unknown manifest format '%s' (want %s or %s)", cur->manifest, fmt,
                             PJ_MANIFEST_FORMAT, PJ_MANIFEST_FORMAT_V2);
    if (!pj_json_str(*m, "snapshot_id", sid, sizeof sid) || strcmp(sid, cur->snapshot_id) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "%s: snapshot_id does not match CURRENT", cur->manifest);
    {
        const pch_json_value *vx = pj_json_member(*m, "vortex", PCH_JSON_OBJECT), *ids;
        uint64_t fv;
        if (!vx || !pj_json_u64(vx, "file_format_version", &fv) || fv != 1)
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: Vortex file format version missing or not 1", cur->manifest);
        ids = pj_json_member(vx, "custom_registry_ids", PCH_JSON_ARRAY);
        if (!ids || ids->n != 0)
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: needs custom Vortex registry ids this reader does not have", cur->manifest);
    }
    {
        const pch_json_value *lin = pj_json_member(*m, "lineage", PCH_JSON_OBJECT);
        char kr[32];
        if (lin && pch_json_get(lin, "trajectory_keys", 15) &&
            (!pj_json_str(lin, "trajectory_keys", kr, sizeof kr) || strcmp(kr, PJ_KEY_RULE) != 0))
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: lineage.trajectory_keys is not \"%s\" (a newer key rule?)",
                                 cur->manifest, PJ_KEY_RULE);
    }
    {
        const pch_json_value *lay = pj_json_member(*m, "layout", PCH_JSON_OBJECT);
        char dm[64];
        if (!lay || !pj_json_str(lay, "data_model", dm, sizeof dm) || strcmp(dm, PJ_DATA_MODEL) != 0)
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: layout.data_model missing or not %s (rebuild the projection)", cur->manifest, PJ_DATA_MODEL);
    }
    PCH_TRY(check_list(*m, "data_files", "data/", true, cur->manifest, err));
    PCH_TRY(check_list(*m, "trajectory_directory", "directories/trajectory/", true, cur->manifest, err));
    PCH_TRY(check_list(*m, "content_directory", "directories/content/", true, cur->manifest, err));
    if (pj_json_member(*m, "key_index", PCH_JSON_ARRAY))   /* roots built before 2026-12-06 have none */
        PCH_TRY(check_list(*m, "key_index", "directories/keys/", true, cur->manifest, err));
    PCH_TRY(check_list(*m, "blob_packs", "blobs/", false, cur->manifest, err));
    /* v2 (incremental sync, §10.4): L0 directory runs and deleted rows; a v1 manifest that
    ** has either is refused (a v1 reader would have read the shadowed rows) */
    {
        const bool v2 = strcmp(fmt, PJ_MANIFEST_FORMAT_V2) == 0;
        const pch_json_value *df = pj_json_member(*m, "data_files", PCH_JSON_ARRAY);
        bool has_runs = pch_json_get(*m, "directory_runs", 14) != NULL, has_del = false;
        for (uint32_t i = 0; i < df->n; i++) has_del |= pch_json_get(&df->u.items[i], "deleted_rows", 12) != NULL;
        if (!v2 && (has_runs || has_del))
            return pch_error_set(err, PCH_ECORRUPT, "%s: a %s manifest with directory runs or deleted rows", cur->manifest, PJ_MANIFEST_FORMAT);
        if (has_runs) PCH_TRY(check_list(*m, "directory_runs", "directories/trajectory/", true, cur->manifest, err));
        if (pch_json_get(*m, "documents", 9)) PCH_TRY(check_list(*m, "documents", "directories/documents/", true, cur->manifest, err));
        if (pch_json_get(*m, "lane_report", 11)) PCH_TRY(check_list(*m, "lane_report", "directories/lanes/", true, cur->manifest, err));
    }
    {
        const pch_json_value *df = pj_json_member(*m, "data_files", PCH_JSON_ARRAY);
        char id[40];
        for (uint32_t i = 0; i < df->n; i++)
            if (!pj_json_str(&df->u.items[i], "file_id", id, sizeof id) || strlen(id) != 32)
                return pch_error_set(err, PCH_ECORRUPT, "%s: data_files[%u] has no 32-character file_id", cur->manifest, i);
    }
    return PCH_OK;
}

int pj_manifest_each_file(const pch_json_value *m,
                          int (*fn)(void *payload, const char *path, const char *digest, uint64_t bytes), void *payload)
{
    static const char *const lists[] = { "data_files", "blob_packs", "trajectory_directory", "content_directory",
                                         "directory_runs", "documents", "key_index", "lane_report" };
    char path[256], digest[80];
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        const pch_json_value *a = pj_json_member(m, lists[l], PCH_JSON_ARRAY);
        for (uint32_t i = 0; a && i < a->n; i++) {
            const pch_json_value *it[2] = { &a->u.items[i], pj_json_member(&a->u.items[i], "segments", PCH_JSON_OBJECT) };
            for (int k = 0; k < 2; k++) {
                if (!it[k] || !pj_json_str(it[k], "path", path, sizeof path)) continue;
                uint64_t bytes;
                if (!pj_json_str(it[k], "digest", digest, sizeof digest)) digest[0] = 0;
                if (!pj_json_u64(it[k], "bytes", &bytes)) bytes = UINT64_MAX;
                PCH_TRY(fn(payload, path, digest, bytes));
            }
        }
    }
    return PCH_OK;
}

/* Tell the object layer the digest and size of every file a manifest names under an
** object-storage root: their tails can come from the local tail cache, and their first read
** needs no probe for the size (rfile.c). */
static int note_identity(void *payload, const char *rel, const char *digest, uint64_t bytes)
{
    const char *root = *(const char **)payload;
    char full[4096];
    if (!digest[0] || snprintf(full, sizeof full, "%s/%s", root, rel) >= (int)sizeof full) return PCH_OK;
    return pch_rfile_note_identity(full, digest, bytes);
}

/* Manifests read from object storage, kept for the process. A manifest is never rewritten
** (its name is its snapshot's id), and one process opens a snapshot several times: the SQL
** module once per relation it serves, pinned to the first one's id (pj_current_at hashes the
** manifest, pj_manifest_load reads it), readers their twins. Each of those was a GET of the
** same object (measured: 11 of a narrow scan's 17 GETs on `real`). Every load still checks
** the digest of the text it gets. At most MEMO_N manifests of MEMO_MAX bytes each. */
#define MEMO_N 8
#define MEMO_MAX ((size_t)8 << 20)
static struct { char *path; uint8_t *text; size_t len; } memo[MEMO_N];
static unsigned memo_next;
static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;

int pj_manifest_text(pch_ctx *ctx, pch_buf *out, const char *path, pch_error *err)
{
    const size_t max = (size_t)256 << 20;
    size_t at = out->len;
    int rc;
    pthread_mutex_lock(&memo_mu);
    for (unsigned i = 0; i < MEMO_N; i++)
        if (memo[i].path && strcmp(memo[i].path, path) == 0) {
            rc = memo[i].len > max ? pch_error_set(err, PCH_ELIMIT, "%s: larger than %zu bytes", path, max)
                 : pch_buf_append(out, memo[i].text, memo[i].len) || pch_buf_reserve(out, 1) ? pch_error_set(err, PCH_ENOMEM, "out of memory")
                 : PCH_OK;
            if (rc == PCH_OK) out->data[out->len] = 0;
            pthread_mutex_unlock(&memo_mu);
            return rc;
        }
    pthread_mutex_unlock(&memo_mu);
    if ((rc = pch_rfile_read_all(ctx, out, path, max, err)) < 0 || out->len - at > MEMO_MAX) return rc;
    char *p = strdup(path);
    uint8_t *t = malloc(out->len - at + 1);
    if (!p || !t) { free(p); free(t); return PCH_OK; }     /* the memo is best effort */
    memcpy(t, out->data + at, out->len - at);
    pthread_mutex_lock(&memo_mu);
    unsigned k = memo_next++ % MEMO_N;
    free(memo[k].path);
    free(memo[k].text);
    memo[k].path = p;
    memo[k].text = t;
    memo[k].len = out->len - at;
    pthread_mutex_unlock(&memo_mu);
    return PCH_OK;
}

int pj_manifest_load(pch_ctx *ctx, const char *root, const pj_current *cur, pch_json_parser **parser,
                     pch_buf *text, const pch_json_value **m, pch_error *err)
{
    pch_buf path;
    char digest[80];
    int rc;
    *m = NULL;
    *parser = NULL;
    pch_buf_init(&path, ctx);
    pch_buf_printf(&path, "%s/%s", root, cur->manifest);
    if (path.oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    /* CURRENT gives the manifest's digest: a small one can come from the tail cache too */
    if (pch_rfile_note_identity((const char *)path.data, cur->digest, UINT64_MAX) < 0) {
        pch_buf_dispose(&path);
        return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    }
    rc = pch_rfile_is_remote(root) ? pj_manifest_text(ctx, text, (const char *)path.data, err)
                                   : pch_rfile_read_all(ctx, text, (const char *)path.data, 256u << 20, err);
    pch_buf_dispose(&path);
    if (rc < 0) return pch_error_prefix(err, "%s", cur->manifest);
    pj_bytes_digest(digest, text->data, text->len);
    if (strcmp(digest, cur->digest) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "%s: digest %s does not match CURRENT's %s", cur->manifest, digest, cur->digest);
    PCH_TRY(pj_manifest_parse(ctx, cur, (const char *)text->data, text->len, parser, m, err));
    if (pch_rfile_is_remote(root) && pj_manifest_each_file(*m, note_identity, &root) < 0)
        return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    return PCH_OK;
}

int pj_commit_lock(pch_ctx *ctx, const char *root, pch_error *err)
{
    pch_buf p;
    int fd = -1, rc = PCH_OK;
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/staging", root);
    if (p.oom) rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    else if ((rc = pch_mkdirs((const char *)p.data, err)) == PCH_OK) {
        pch_buf_append_str(&p, "/.commit.lock");
        fd = p.oom ? -1 : open((const char *)p.data, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 || flock(fd, LOCK_EX) != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "lock %s/staging/.commit.lock", root);
    }
    pch_buf_dispose(&p);
    if (rc < 0 && fd >= 0) close(fd);
    return rc < 0 ? rc : fd;
}

int pj_current_swap(pch_ctx *ctx, const char *root, const pch_buf *expect, const char *expect_id,
                    const char *snapshot_id, const char *digest, pch_error *err)
{
    pch_buf p, now_raw, cur;
    int lock = -1, rc = PCH_OK;
    pch_buf_init(&p, ctx);
    pch_buf_init(&now_raw, ctx);
    pch_buf_init(&cur, ctx);
    if ((rc = lock = pj_commit_lock(ctx, root, err)) < 0) goto done;
    {
        pj_current now;
        pch_error e2;
        int r2 = pj_current_read(ctx, root, &now, &now_raw, &e2);   /* the bytes even if damaged */
        bool same = expect ? r2 != PCH_ENOTFOUND && now_raw.len == expect->len && memcmp(now_raw.data, expect->data, now_raw.len) == 0
                           : r2 == PCH_ENOTFOUND;
        if (!same) {
            rc = pch_error_set(err, PCH_EEXISTS, "stale commit: CURRENT changed since this writer started (was %s, now %s); "
                               "nothing was published (snapshot %s is unreferenced)",
                               expect ? expect_id : "absent", r2 == PCH_OK ? now.snapshot_id : r2 == PCH_ENOTFOUND ? "absent" : "unreadable",
                               snapshot_id);
            goto done;
        }
    }
    pch_buf_printf(&cur, "{\"format\":\"%s\",\"snapshot_id\":\"%s\",\"manifest\":\"manifests/%s.json\",\"manifest_digest\":\"%s\"}\n",
                   PJ_CURRENT_FORMAT, snapshot_id, snapshot_id, digest);
    pch_buf_clear(&p);
    pch_buf_printf(&p, "%s/CURRENT", root);
    if (cur.oom || p.oom) { rc = pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); goto done; }
    rc = pch_file_publish((const char *)p.data, cur.data, cur.len, err);
done:
    if (lock >= 0) close(lock);
    pch_buf_dispose(&p);
    pch_buf_dispose(&now_raw);
    pch_buf_dispose(&cur);
    return rc;
}

/* ---- pj_task ---- */

static void *task_main(void *arg)
{
    pj_task *t = arg;
    t->rc = t->fn(t->arg, &t->err);
    return NULL;
}

void pj_task_start(pj_task *t, int (*fn)(void *arg, pch_error *err), void *arg, bool thread)
{
    memset(t, 0, sizeof *t);
    t->fn = fn;
    t->arg = arg;
    pch_error_clear(&t->err);
    t->running = thread && pthread_create(&t->th, NULL, task_main, t) == 0;
}

int pj_task_join(pj_task *t, pch_error *err)
{
    if (t->running) {
        pthread_join(t->th, NULL);
        t->running = false;
        t->done = true;
    } else if (!t->done && t->fn) {
        t->rc = t->fn(t->arg, &t->err);
        t->done = true;
    }
    if (t->rc < 0 && err) *err = t->err;
    return t->rc;
}
