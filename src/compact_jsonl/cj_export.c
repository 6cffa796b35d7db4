/* RFC-0014 "Export" and "错误与安全边界": verify a compact-jsonl/v1 dataset (format
** metadata, schema) before creating anything, then restore every source file byte for
** byte in Lance physical row order into a staging directory that is published with one
** atomic rename. Also `inspect` (pch_cj_inspect), which runs the same verification. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compact_jsonl/cj_int.h"
#include "io/rfile.h"
#include "json/json.h"
#include "pchronicle/lance.h"

#define CJ_WBUF ((size_t)1 << 20)
/* Rows per scanner batch. The Lance reader keeps each decoded page across batches, so small
** batches cost no extra decompression; they bound memory (batch rows x record size). */
#define CJ_EXPORT_BATCH_ROWS 1024

static int oom(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "out of memory"); }

static const pch_lance_kv *find_kv(const pch_lance_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0) return &kv[i];
    return NULL;
}

static int want_field(const pch_lance_schema *s, size_t i, const char *name, pch_lance_type t,
                      bool nullable, pch_error *err)
{
    const pch_lance_field *f = &s->fields[i];
    if ((name && strcmp(f->name, name) != 0) || f->type != t || f->nullable != nullable) {
        const char *tn = pch_lance_type_name(f->type);
        return pch_error_set(err, PCH_ECORRUPT,
                             "not a compact-jsonl/v1 schema: column %zu is '%s' %s%s, expected '%s' %s%s",
                             i + 1, f->name, tn ? tn : "?", f->nullable ? " nullable" : " not null",
                             name ? name : "<user column>", pch_lance_type_name(t),
                             nullable ? " nullable" : " not null");
    }
    return PCH_OK;
}

typedef struct cj_layout {
    size_t n_fields, c_raw, c_off;
    uint64_t threshold;
    pch_json_parser *parser;   /* owns empty_files values */
    const pch_json_value *empty;  /* array of strings */
    pch_buf empty_text;
} cj_layout;

static void layout_dispose(cj_layout *l)
{
    pch_json_parser_free(l->parser);
    pch_buf_dispose(&l->empty_text);
}

/* RFC-0014 "兼容性": accept only the format we support, with its exact base schema. */
static int verify_schema(cj_layout *l, pch_ctx *ctx, const pch_lance_schema *s, pch_error *err)
{
    memset(l, 0, sizeof *l);
    pch_buf_init(&l->empty_text, ctx);
    const pch_lance_kv *fmt = find_kv(s->metadata, s->n_metadata, PCH_CJ_KEY_FORMAT);
    if (!fmt) return pch_error_set(err, PCH_EUNSUPPORTED, "not a compact-jsonl dataset: schema metadata has no %s", PCH_CJ_KEY_FORMAT);
    if (fmt->value_len != strlen(PCH_CJ_FORMAT) || memcmp(fmt->value, PCH_CJ_FORMAT, fmt->value_len) != 0)
        return pch_error_set(err, PCH_EUNSUPPORTED, "unsupported %s '%.64s' (this build reads %s)",
                             PCH_CJ_KEY_FORMAT, (const char *)fmt->value, PCH_CJ_FORMAT);
    size_t n = s->n_fields;
    if (n < 6) return pch_error_set(err, PCH_ECORRUPT, "not a compact-jsonl/v1 schema: %zu columns, expected at least 6", n);
    PCH_TRY(want_field(s, 0, "id", PCH_LANCE_UTF8, false, err));
    PCH_TRY(want_field(s, 1, "timestamp", PCH_LANCE_UTF8, false, err));
    PCH_TRY(want_field(s, 2, "filename", PCH_LANCE_UTF8, false, err));
    PCH_TRY(want_field(s, 3, "data", PCH_LANCE_JSON, false, err));
    for (size_t i = 4; i < n - 2; i++) {
        PCH_TRY(want_field(s, i, NULL, PCH_LANCE_JSON, true, err));
        const char *nm = s->fields[i].name;
        if (!pch_cj__is_identifier(nm, strlen(nm)) || pch_cj__is_reserved(nm) ||
            strcmp(nm, "id") == 0 || strcmp(nm, "timestamp") == 0)
            return pch_error_set(err, PCH_ECORRUPT, "not a compact-jsonl/v1 schema: invalid user column name '%.64s'", nm);
    }
    PCH_TRY(want_field(s, n - 2, "_raw_", PCH_LANCE_LARGE_BINARY, true, err));
    PCH_TRY(want_field(s, n - 1, "_offload_", PCH_LANCE_JSON, true, err));
    l->n_fields = n;
    l->c_raw = n - 2;
    l->c_off = n - 1;
    const pch_lance_kv *th = find_kv(s->metadata, s->n_metadata, PCH_CJ_KEY_THRESHOLD);
    if (th) l->threshold = strtoull((const char *)th->value, NULL, 10);
    const pch_lance_kv *ef = find_kv(s->metadata, s->n_metadata, PCH_CJ_KEY_EMPTY_FILES);
    PCH_TRY(pch_json_parser_new(&l->parser, ctx, NULL, err));
    if (ef) {
        if (pch_buf_append(&l->empty_text, ef->value, ef->value_len) < 0) return oom(err);
        const pch_json_value *v = NULL;
        int rc = pch_json_parser_parse(l->parser, (const char *)l->empty_text.data, l->empty_text.len, &v, err);
        if (rc < 0 || v->kind != PCH_JSON_ARRAY)
            return pch_error_set(err, PCH_ECORRUPT, "%s is not a json array of names", PCH_CJ_KEY_EMPTY_FILES);
        for (uint32_t i = 0; i < v->n; i++) {
            const pch_json_value *e = &v->u.items[i];
            if (e->kind != PCH_JSON_STRING || !pch_cj__safe_relpath(e->u.str.ptr, e->u.str.len))
                return pch_error_set(err, PCH_ECORRUPT, "%s entry %u is not a safe relative path", PCH_CJ_KEY_EMPTY_FILES, i + 1);
        }
        l->empty = v;
    }
    return PCH_OK;
}

int pch_cj_probe(pch_ctx *ctx, const char *dataset, bool *is_cj, pch_error *err)
{
    pch_lance_dataset *ds = NULL;
    const pch_lance_schema *s;
    *is_cj = false;
    PCH_TRY(pch_lance_dataset_open(&ds, ctx, dataset, 0, err));
    s = pch_lance_dataset_schema(ds);
    *is_cj = find_kv(s->metadata, s->n_metadata, PCH_CJ_KEY_FORMAT) != NULL;
    pch_lance_dataset_free(ds);
    return PCH_OK;
}

static const uint8_t *cell(const pch_lance_column *c, size_t r, size_t *len)
{
    *len = (size_t)(c->offsets[r + 1] - c->offsets[r]);
    return c->data + c->offsets[r];
}
static bool valid(const pch_lance_column *c, size_t r) { return !c->validity || c->validity[r]; }

static bool is_lower_hex64(const char *s, size_t n)
{
    if (n != 64) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* Decode an offload descriptor {path, key}; path and key checked before any join. */
static int descriptor(pch_ctx *ctx, pch_json_parser *p, pch_buf *tmp, const uint8_t *jb, size_t n,
                      pch_buf *rel_out, char key_out[65], uint64_t row, pch_error *err)
{
    pch_buf_clear(tmp);
    int rc = pch_jsonb__to_json(tmp, jb, n, err);
    if (rc < 0) return pch_error_prefix(err, "row %llu: _offload_", (unsigned long long)row), rc;
    const pch_json_value *v = NULL;
    (void)ctx;
    if (pch_json_parser_parse(p, (const char *)tmp->data, tmp->len, &v, err) < 0 || v->kind != PCH_JSON_OBJECT)
        return pch_error_set(err, PCH_ECORRUPT, "row %llu: _offload_ is not an object", (unsigned long long)row);
    const pch_json_value *path = pch_json_get(v, "path", 4), *key = pch_json_get(v, "key", 3);
    if (!path || path->kind != PCH_JSON_STRING || !key || key->kind != PCH_JSON_STRING)
        return pch_error_set(err, PCH_ECORRUPT, "row %llu: _offload_ needs string members path and key", (unsigned long long)row);
    if (!pch_cj__safe_relpath(path->u.str.ptr, path->u.str.len))
        return pch_error_set(err, PCH_ECORRUPT, "row %llu: offload path '%.64s' is absolute or escapes the dataset", (unsigned long long)row, path->u.str.ptr);
    if (!is_lower_hex64(key->u.str.ptr, key->u.str.len))
        return pch_error_set(err, PCH_ECORRUPT, "row %llu: offload key is not a 64-digit lower-case hex blake3 digest", (unsigned long long)row);
    pch_buf_clear(rel_out);
    if (pch_buf_append(rel_out, path->u.str.ptr, path->u.str.len) < 0) return oom(err);
    memcpy(key_out, key->u.str.ptr, 64);
    key_out[64] = 0;
    return PCH_OK;
}

/* The record an _offload_ descriptor points at, into obj (cleared): the object file is
** read and its BLAKE3 must be the descriptor's key (RFC-0014 "大记录"). */
static int read_offload(pch_ctx *ctx, const char *dataset, pch_json_parser *dp, pch_buf *tmp, pch_buf *rel,
                        pch_buf *objpath, const uint8_t *desc, size_t n, uint64_t row, pch_buf *obj, pch_error *err)
{
    char key[65], got[65];
    int rc;
    PCH_TRY(descriptor(ctx, dp, tmp, desc, n, rel, key, row, err));
    pch_buf_clear(objpath);
    if (pch_buf_printf(objpath, "%s/%s/%s", dataset, (const char *)rel->data, key) < 0) return oom(err);
    pch_buf_clear(obj);
    rc = pch_rfile_read_all(ctx, obj, (const char *)objpath->data, pch_ctx_limits(ctx)->max_alloc, err);
    if (rc == PCH_ENOTFOUND)
        return pch_error_set(err, PCH_ECORRUPT, "row %llu: offload object %s/%s is missing", (unsigned long long)row, (const char *)rel->data, key);
    if (rc < 0) return rc;
    pch_blake3_hex(got, obj->data, obj->len);
    if (strcmp(got, key) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "row %llu: offload object %s digest mismatch (content hashes to %.16s...)", (unsigned long long)row, key, got);
    return PCH_OK;
}

int pch_cj_offload_read(pch_ctx *ctx, const char *dataset, const uint8_t *desc, size_t n, uint64_t row,
                        char **out, size_t *out_len, pch_error *err)
{
    pch_json_parser *dp = NULL;
    pch_buf tmp, rel, objpath, obj;
    int rc;
    *out = NULL;
    *out_len = 0;
    pch_buf_init(&tmp, ctx);
    pch_buf_init(&rel, ctx);
    pch_buf_init(&objpath, ctx);
    pch_buf_init(&obj, ctx);
    rc = pch_json_parser_new(&dp, ctx, NULL, err);
    if (rc == PCH_OK) rc = read_offload(ctx, dataset, dp, &tmp, &rel, &objpath, desc, n, row, &obj, err);
    if (rc == PCH_OK && pch_buf_reserve(&obj, 1) < 0) rc = oom(err);
    if (rc == PCH_OK) *out = (char *)pch_buf_detach(&obj, out_len);
    pch_json_parser_free(dp);
    pch_buf_dispose(&tmp);
    pch_buf_dispose(&rel);
    pch_buf_dispose(&objpath);
    pch_buf_dispose(&obj);
    return rc;
}


typedef struct out_file {
    int fd;
    pch_buf name;        /* relative name of the open file */
    pch_buf wbuf;
    pch_buf path;
    pch_buf dir;         /* the last directory made sure of (rows come in file order) */
} out_file;

static int out_flush(out_file *o, pch_error *err)
{
    size_t off = 0;
    while (off < o->wbuf.len) {
        ssize_t w = write(o->fd, o->wbuf.data + off, o->wbuf.len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return pch_error_set_sys(err, PCH_EIO, errno, "write %s", (const char *)o->name.data);
        }
        off += (size_t)w;
    }
    pch_buf_clear(&o->wbuf);
    return PCH_OK;
}

static int out_close(out_file *o, pch_error *err)
{
    if (o->fd < 0) return PCH_OK;
    int rc = out_flush(o, err);
    if (close(o->fd) != 0 && rc == PCH_OK) rc = pch_error_set_sys(err, PCH_EIO, errno, "close %s", (const char *)o->name.data);
    o->fd = -1;
    return rc;
}

/* Open (create or append to) staging/rel; rel already checked by pch_cj__safe_relpath. */
static int out_open(out_file *o, const char *staging, const char *rel, size_t rel_len, bool excl,
                    pch_error *err)
{
    PCH_TRY(out_close(o, err));
    pch_buf_clear(&o->name);
    pch_buf_clear(&o->path);
    if (pch_buf_append(&o->name, rel, rel_len) < 0 || pch_path_join(&o->path, staging, (const char *)o->name.data) < 0)
        return oom(err);
    char *p = (char *)o->path.data;
    char *slash = strrchr(p, '/');
    if (slash && (size_t)(slash - p) > strlen(staging) &&
        (o->dir.len != (size_t)(slash - p) || memcmp(o->dir.data, p, o->dir.len) != 0)) {
        *slash = 0;
        int rc = pch_mkdirs(p, err);
        *slash = '/';
        if (rc < 0) return rc;
        pch_buf_clear(&o->dir);
        if (pch_buf_append(&o->dir, p, (size_t)(slash - p)) < 0) return oom(err);
    }
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (excl ? O_EXCL : O_APPEND);
    o->fd = open(p, flags, 0644);
    if (o->fd < 0)
        return pch_error_set_sys(err, excl && errno == EEXIST ? PCH_ECORRUPT : PCH_EIO, errno,
                                 "create %s", (const char *)o->name.data);
    return PCH_OK;
}

static int out_write(out_file *o, const uint8_t *p, size_t n, pch_error *err)
{
    if (o->wbuf.len + n > CJ_WBUF) PCH_TRY(out_flush(o, err));
    if (n >= CJ_WBUF) {
        size_t off = 0;
        while (off < n) {
            ssize_t w = write(o->fd, p + off, n - off);
            if (w < 0) {
                if (errno == EINTR) continue;
                return pch_error_set_sys(err, PCH_EIO, errno, "write %s", (const char *)o->name.data);
            }
            off += (size_t)w;
        }
        return PCH_OK;
    }
    return pch_buf_append(&o->wbuf, p, n) < 0 ? oom(err) : PCH_OK;
}

/* Offloaded rows (dataset row ids, ascending) and whether each one's `data` is JSON null. */
typedef struct offload_rows {
    uint64_t *rows;
    bool *dnull;
    size_t n, cap;
} offload_rows;

static int offloaded_data_nulls(pch_ctx *ctx, pch_lance_dataset *ds, const cj_layout *lay,
                                const pch_buf *jnull, offload_rows *o, pch_error *err)
{
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *b;
    size_t col = lay->c_off, k = 0;
    uint64_t row = 0;
    int rc;

    if ((rc = pch_lance_scanner_open(&sc, ds, &col, 1, 65536, err)) < 0) return rc;
    while ((rc = pch_lance_scanner_next(sc, &b, err)) == PCH_OK) {
        for (size_t r = 0; r < b->n_rows; r++, row++) {
            if (!valid(&b->columns[0], r)) continue;
            if (o->n == o->cap) {
                size_t nc = o->cap ? o->cap * 2 : 1024, bytes;
                if (!pch_mul_size(&bytes, nc, sizeof *o->rows)) { rc = oom(err); goto done; }
                uint64_t *nr = pch_realloc(ctx, o->rows, bytes);
                if (!nr) { rc = oom(err); goto done; }
                o->rows = nr;
                o->cap = nc;
            }
            o->rows[o->n++] = row;
        }
    }
    if (rc != PCH_ITEROVER) goto done;
    rc = PCH_OK;
    pch_lance_scanner_free(sc);
    sc = NULL;
    if (o->n == 0) goto done;
    if (!(o->dnull = pch_calloc(ctx, o->n, sizeof *o->dnull))) { rc = oom(err); goto done; }
    col = 3;   /* data */
    if ((rc = pch_lance_scanner_open_rows(&sc, ds, &col, 1, o->rows, o->n, 8192, err)) < 0) goto done;
    while ((rc = pch_lance_scanner_next(sc, &b, err)) == PCH_OK) {
        for (size_t r = 0; r < b->n_rows && k < o->n; r++, k++) {
            size_t dl;
            const uint8_t *dv = cell(&b->columns[0], r, &dl);
            o->dnull[k] = valid(&b->columns[0], r) && dl == jnull->len && memcmp(dv, jnull->data, dl) == 0;
        }
    }
    if (rc != PCH_ITEROVER) goto done;
    rc = k == o->n ? PCH_OK
                   : pch_error_set(err, PCH_ECORRUPT, "data column has %zu of %zu offloaded rows", k, o->n);
done:
    pch_lance_scanner_free(sc);
    return rc;
}

int pch_cj_export(pch_ctx *ctx, const char *dataset, const char *out_dir,
                  const pch_cj_options *opts, pch_cj_stats *stats_out, pch_error *err)
{
    static const pch_cj_options defaults = PCH_CJ_OPTIONS_INIT;
    const pch_cj_options *o = opts ? opts : &defaults;
    if (stats_out) memset(stats_out, 0, sizeof *stats_out);
    if (!ctx || !dataset || !out_dir) return pch_error_set(err, PCH_EINVAL, "invalid argument");
    pch_lance_dataset *ds = NULL;
    pch_lance_scanner *sc = NULL;
    pch_json_parser *dp = NULL;
    cj_layout lay;
    memset(&lay, 0, sizeof lay);
    pch_cj_stage stage;
    bool staged = false;
    out_file of;
    of.fd = -1;
    pch_buf_init(&of.name, ctx);
    pch_buf_init(&of.wbuf, ctx);
    pch_buf_init(&of.path, ctx);
    pch_buf_init(&of.dir, ctx);
    pch_buf tmp, rel, obj, objpath, seen_names;
    pch_buf_init(&tmp, ctx);
    pch_buf_init(&rel, ctx);
    pch_buf_init(&obj, ctx);
    pch_buf_init(&objpath, ctx);
    pch_buf_init(&seen_names, ctx);
    pch_cj_stats st;
    memset(&st, 0, sizeof st);
    pch_cj_progress prog;
    memset(&prog, 0, sizeof prog);
    offload_rows offs;
    memset(&offs, 0, sizeof offs);
    int rc;

    if ((rc = pch_lance_dataset_open(&ds, ctx, dataset, 0, err)) < 0) { pch_error_prefix(err, "%s", dataset); goto done; }
    if ((rc = verify_schema(&lay, ctx, pch_lance_dataset_schema(ds), err)) < 0) { pch_error_prefix(err, "%s", dataset); goto done; }
    if ((rc = pch_json_parser_new(&dp, ctx, NULL, err)) < 0) goto done;
    st.version = pch_lance_dataset_version(ds);
    prog.total_records = pch_lance_dataset_num_rows(ds);
    /* JSONB of a JSON null, for the offloaded row state */
    pch_buf jnull;
    pch_buf_init(&jnull, ctx);
    {
        pch_json_value nv;
        memset(&nv, 0, sizeof nv);
        nv.kind = PCH_JSON_NULL;
        rc = pch_jsonb__encode(&jnull, &nv, NULL, err);
    }
    if (rc < 0) { pch_buf_dispose(&jnull); goto done; }
    staged = true;   /* stage_end also undoes a failed stage_begin */
    if ((rc = pch_cj__stage_begin(&stage, ctx, out_dir, o->mode, err)) < 0) { pch_buf_dispose(&jnull); goto done; }
    const char *stg = (const char *)stage.staging.data;
    /* `data` is only needed for offloaded rows (it must hold JSON null, RFC-0014 §Lance
    ** 物理 schema); inline rows are restored from _raw_ alone. So find the offloaded rows
    ** from the small _offload_ column, check their `data` through a row-selection scan, and
    ** never decompress `data` for inline rows. */
    if ((rc = offloaded_data_nulls(ctx, ds, &lay, &jnull, &offs, err)) < 0) { pch_buf_dispose(&jnull); goto done; }
    size_t next_off = 0;
    size_t cols[3] = { 2, lay.c_raw, lay.c_off };
    if ((rc = pch_lance_scanner_open(&sc, ds, cols, 3, CJ_EXPORT_BATCH_ROWS, err)) < 0) { pch_buf_dispose(&jnull); goto done; }
    uint64_t row = 0;
    for (;;) {
        const pch_lance_batch *b = NULL;
        rc = pch_lance_scanner_next(sc, &b, err);
        if (rc == PCH_ITEROVER) { rc = PCH_OK; break; }
        if (rc < 0) break;
        const pch_lance_column *cf = &b->columns[0], *cr = &b->columns[1], *co = &b->columns[2];
        for (size_t r = 0; r < b->n_rows && rc == PCH_OK; r++, row++) {
            size_t fl, rl, ol;
            const uint8_t *fn = cell(cf, r, &fl);
            if (!valid(cf, r) || !pch_cj__safe_relpath((const char *)fn, fl)) {
                rc = pch_error_set(err, PCH_ECORRUPT, "row %llu: filename '%.*s' is not a safe relative path",
                                   (unsigned long long)row, (int)(fl > 64 ? 64 : fl), (const char *)fn);
                break;
            }
            bool rv = valid(cr, r), ov = valid(co, r), dnull = false;
            if (ov) {
                /* both scans read the same snapshot, so the offloaded rows line up */
                if (next_off >= offs.n || offs.rows[next_off] != row) {
                    rc = pch_error_set(err, PCH_ECORRUPT, "row %llu: _offload_ changed between scans",
                                       (unsigned long long)row);
                    break;
                }
                dnull = offs.dnull[next_off++];
            }
            if (!(rv && !ov) && !(!rv && ov && dnull)) {
                rc = pch_error_set(err, PCH_ECORRUPT,
                                   "row %llu (%.*s): invalid row state (_raw_ %s, _offload_ %s, data %s)",
                                   (unsigned long long)row, (int)(fl > 64 ? 64 : fl), (const char *)fn,
                                   rv ? "set" : "null", ov ? "set" : "null", dnull ? "json null" : "a value");
                break;
            }
            if (of.fd < 0 || of.name.len != fl || memcmp(of.name.data, fn, fl) != 0) {
                if ((rc = out_open(&of, stg, (const char *)fn, fl, false, err)) < 0) break;
                st.files++;
                prog.current = (const char *)of.name.data;
            }
            if (rv) {
                const uint8_t *raw = cell(cr, r, &rl);
                rc = out_write(&of, raw, rl, err);
                st.bytes += rl;
            } else {
                const uint8_t *ob = cell(co, r, &ol);
                if ((rc = read_offload(ctx, dataset, dp, &tmp, &rel, &objpath, ob, ol, row, &obj, err)) < 0) break;
                rc = out_write(&of, obj.data, obj.len, err);
                st.bytes += obj.len;
                st.offloaded_rows++;
                st.offloaded_bytes += obj.len;
            }
            st.records++;
            if (o->progress && (st.records & 255) == 0) {
                prog.records = st.records; prog.files = st.files; prog.bytes = st.bytes;
                o->progress(o->payload, &prog);
            }
            if (o->cancel && *o->cancel) rc = pch_error_set(err, PCH_ECANCELED, "interrupted");
        }
        if (rc < 0) break;
    }
    pch_buf_dispose(&jnull);
    if (rc < 0) goto done;
    if ((rc = out_close(&of, err)) < 0) goto done;
    if (lay.empty) {
        for (uint32_t i = 0; i < lay.empty->n; i++) {
            const pch_json_value *e = &lay.empty->u.items[i];
            if ((rc = out_open(&of, stg, e->u.str.ptr, e->u.str.len, true, err)) < 0) {
                pch_error_prefix(err, "empty file listed in %s", PCH_CJ_KEY_EMPTY_FILES);
                goto done;
            }
            if ((rc = out_close(&of, err)) < 0) goto done;
            st.files++;
        }
    }
    if (o->cancel && *o->cancel) { rc = pch_error_set(err, PCH_ECANCELED, "interrupted"); goto done; }
    if ((rc = pch_cj__stage_publish(&stage, err)) < 0) goto done;
    if (o->progress) {
        prog.records = st.records; prog.files = st.files; prog.bytes = st.bytes; prog.current = NULL;
        o->progress(o->payload, &prog);
    }
    if (stats_out) *stats_out = st;
done:
    pch_free(ctx, offs.rows);
    pch_free(ctx, offs.dnull);
    if (of.fd >= 0) close(of.fd);
    if (staged) pch_cj__stage_end(&stage);
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(ds);
    pch_json_parser_free(dp);
    layout_dispose(&lay);
    pch_buf_dispose(&of.name);
    pch_buf_dispose(&of.wbuf);
    pch_buf_dispose(&of.path);
    pch_buf_dispose(&of.dir);
    pch_buf_dispose(&tmp);
    pch_buf_dispose(&rel);
    pch_buf_dispose(&obj);
    pch_buf_dispose(&objpath);
    pch_buf_dispose(&seen_names);
    return rc;
}

/* ---- inspect ---- */

static int du(const char *path, uint64_t *bytes, uint64_t *files)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) return errno == ENOENT ? PCH_OK : PCH_EIO;
    if (S_ISREG(sb.st_mode)) { *bytes += (uint64_t)sb.st_size; if (files) (*files)++; return PCH_OK; }
    if (!S_ISDIR(sb.st_mode)) return PCH_OK;
    DIR *d = opendir(path);
    if (!d) return PCH_EIO;
    pch_buf c;
    pch_buf_init(&c, NULL);
    struct dirent *de;
    int rc = PCH_OK;
    while (rc == PCH_OK && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        pch_buf_clear(&c);
        if (pch_path_join(&c, path, de->d_name) < 0) { rc = PCH_ENOMEM; break; }
        rc = du((const char *)c.data, bytes, files);
    }
    pch_buf_dispose(&c);
    closedir(d);
    return rc;
}

/* du over a dataset on object storage: one listing. */
static int on_object(void *arg, const pch_object_info *in)
{
    pch_cj_info *out = arg;
    out->total_bytes += in->size;
    if (strncmp(in->key, "data/", 5) == 0) out->data_bytes += in->size;
    if (strncmp(in->key, PCH_CJ_OFFLOAD_DIR "/", sizeof PCH_CJ_OFFLOAD_DIR) == 0) {
        out->offload_bytes += in->size;
        out->offload_objects++;
    }
    return 0;
}

static void du_remote(pch_ctx *ctx, const char *dataset, pch_cj_info *out)
{
    pch_store *st = NULL;
    pch_error e;
    if (pch_store_open(ctx, dataset, NULL, &st, &e) == PCH_OK) (void)pch_store_list(st, "", on_object, out, &e);
    pch_store_close(st);
}

int pch_cj_inspect(pch_ctx *ctx, const char *dataset, pch_cj_info *out, pch_error *err)
{
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    pch_lance_dataset *ds = NULL;
    pch_lance_scanner *sc = NULL;
    cj_layout lay;
    memset(&lay, 0, sizeof lay);
    pch_buf last, jnull;
    pch_buf_init(&last, ctx);
    pch_buf_init(&jnull, ctx);
    bool have_last = false;
    int rc;
    if ((rc = pch_lance_dataset_open(&ds, ctx, dataset, 0, err)) < 0) { pch_error_prefix(err, "%s", dataset); goto done; }
    const pch_lance_schema *s = pch_lance_dataset_schema(ds);
    if ((rc = verify_schema(&lay, ctx, s, err)) < 0) { pch_error_prefix(err, "%s", dataset); goto done; }
    snprintf(out->format, sizeof out->format, "%s", PCH_CJ_FORMAT);
    out->version = pch_lance_dataset_version(ds);
    snprintf(out->file_version, sizeof out->file_version, "%s", pch_lance_dataset_file_version(ds));
    out->offload_threshold = lay.threshold;
    out->empty_files = lay.empty ? lay.empty->n : 0;
    out->columns = pch_calloc(ctx, s->n_fields, sizeof *out->columns);
    if (!out->columns) { rc = oom(err); goto done; }
    out->n_columns = s->n_fields;
    for (size_t i = 0; i < s->n_fields; i++) {
        snprintf(out->columns[i].name, sizeof out->columns[i].name, "%s", s->fields[i].name);
        if ((rc = pch_lance_dataset_column_bytes(ds, i, &out->columns[i].encoded_bytes, err)) < 0) {
            pch_error_prefix(err, "%s", dataset);
            goto done;
        }
    }
    if ((rc = pch_lance_scanner_open(&sc, ds, NULL, 0, 0, err)) < 0) goto done;
    for (;;) {
        const pch_lance_batch *b = NULL;
        rc = pch_lance_scanner_next(sc, &b, err);
        if (rc == PCH_ITEROVER) { rc = PCH_OK; break; }
        if (rc < 0) goto done;
        for (size_t c = 0; c < b->n_columns && c < out->n_columns; c++) {
            const pch_lance_column *col = &b->columns[c];
            for (size_t r = 0; r < b->n_rows; r++) {
                if (!valid(col, r)) { out->columns[c].null_count++; continue; }
                size_t w = pch_lance_type_width(col->type);
                out->columns[c].value_bytes += pch_lance_type_is_var(col->type) ? col->offsets[r + 1] - col->offsets[r] : w;
            }
        }
        const pch_lance_column *cf = &b->columns[2], *co = &b->columns[lay.c_off];
        for (size_t r = 0; r < b->n_rows; r++) {
            size_t fl;
            const uint8_t *fn = cell(cf, r, &fl);
            if (!have_last || last.len != fl || memcmp(last.data, fn, fl) != 0) {
                out->files++;
                pch_buf_clear(&last);
                if (pch_buf_append(&last, fn, fl) < 0) { rc = oom(err); goto done; }
                have_last = true;
            }
            if (valid(co, r)) out->offloaded_rows++;
        }
        out->rows += b->n_rows;
    }
    out->files += out->empty_files;
    if (pch_store_is_s3(dataset)) {
        du_remote(ctx, dataset, out);
        goto done;
    }
    pch_buf p;
    pch_buf_init(&p, ctx);
    if (pch_path_join(&p, dataset, "data") == 0) du((const char *)p.data, &out->data_bytes, NULL);
    pch_buf_clear(&p);
    if (pch_path_join(&p, dataset, PCH_CJ_OFFLOAD_DIR) == 0) du((const char *)p.data, &out->offload_bytes, &out->offload_objects);
    pch_buf_dispose(&p);
    du(dataset, &out->total_bytes, NULL);
done:
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(ds);
    layout_dispose(&lay);
    pch_buf_dispose(&last);
    pch_buf_dispose(&jnull);
    if (rc < 0) pch_cj_info_dispose(out);
    return rc;
}

void pch_cj_info_dispose(pch_cj_info *info)
{
    if (!info) return;
    if (info->ctx) pch_free(info->ctx, info->columns);
    info->columns = NULL;
    info->n_columns = 0;
}
