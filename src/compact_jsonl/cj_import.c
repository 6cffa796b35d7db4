/* RFC-0014 "Import" and "Sync": one complete snapshot of an input tree into a Lance
** dataset (schema and metadata: docs/compact-jsonl.md). Files are streamed line by line
** and rows are written in bounded batches, so memory is bounded by the batch setting, the
** largest record and the id index's budget (cj_ids.c spills beyond it), not by the corpus.
** Any invalid input fails the whole import; nothing is published (cj_stage.c). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compact_jsonl/cj_int.h"
#include "json/json.h"
#include "pchronicle/lance.h"

#define CJ_READ_CHUNK ((size_t)1 << 20)
/* Small batches keep the Lance writer's page pool busy while the next rows are parsed: a
** batch fills about half a page, so pages reach the encoder threads one at a time instead
** of in bursts that stall the parser (32 MiB batches ran 1.8x slower on two cores). */
#define CJ_DEFAULT_BATCH_BYTES ((size_t)4 << 20)
#define CJ_DEFAULT_BATCH_ROWS 8192

/* ---- column builders ---- */
typedef struct colb {
    pch_lance_type type;
    pch_buf data, offs, valid;
    size_t n;
    bool any_null;
} colb;

static void colb_init(colb *c, pch_ctx *ctx, pch_lance_type t)
{
    memset(c, 0, sizeof *c);
    c->type = t;
    pch_buf_init(&c->data, ctx);
    pch_buf_init(&c->offs, ctx);
    pch_buf_init(&c->valid, ctx);
}
static void colb_dispose(colb *c)
{
    pch_buf_dispose(&c->data);
    pch_buf_dispose(&c->offs);
    pch_buf_dispose(&c->valid);
}
static int colb_reset(colb *c)
{
    pch_buf_clear(&c->data);
    pch_buf_clear(&c->offs);
    pch_buf_clear(&c->valid);
    c->n = 0;
    c->any_null = false;
    return pch_buf_put_le64(&c->offs, 0);
}
/* After appending a value's bytes to c->data (or none for a null). */
static int colb_end(colb *c, bool valid)
{
    if (!valid) c->any_null = true;
    c->n++;
    if (pch_buf_put_le64(&c->offs, (uint64_t)c->data.len) < 0) return PCH_ENOMEM;
    return pch_buf_putc(&c->valid, valid ? 1 : 0);
}
static int colb_add(colb *c, const void *p, size_t n)
{
    if (pch_buf_append(&c->data, p, n) < 0) return PCH_ENOMEM;
    return colb_end(c, true);
}

/* ---- importer ---- */
enum { C_ID = 0, C_TS, C_FILE, C_DATA };

typedef struct imp {
    pch_ctx *ctx;
    const pch_cj_options *o;
    size_t max_record, batch_bytes, batch_rows;
    int zstd_level;
    pch_cj_path id_path, ts_path;
    const char *id_path_text, *ts_path_text;
    pch_cj_path *user;
    const char **user_names;
    size_t n_user;
    pch_json_parser *parser, *desc_parser;
    pch_lance_schema *schema;
    pch_lance_writer *w;
    colb *cols;
    size_t n_cols, c_raw, c_off;
    pch_buf scratch, text, objpath, jsonb_null, objcmp;
    pch_cj_ids *ids;
    pch_cj_stage stage;
    pch_cj_filelist files;
    pch_cj_stats st;
    pch_cj_progress prog;
    uint64_t last_prog_records;
} imp;

static int oom(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "out of memory"); }

static bool cancelled(const imp *m) { return m->o->cancel && *m->o->cancel; }

static int check_mappings(imp *m, pch_error *err)
{
    const pch_cj_options *o = m->o;
    m->id_path_text = "$.id";
    m->ts_path_text = "$.timestamp";
    bool seen_id = false, seen_ts = false;
    size_t n_user = 0;
    for (size_t i = 0; i < o->n_mappings; i++) {
        const char *name = o->mappings[i].name, *path = o->mappings[i].path;
        if (!name || !path) return pch_error_set(err, PCH_EINVAL, "mapping %zu: missing name or path", i + 1);
        if (!pch_cj__is_identifier(name, strlen(name)))
            return pch_error_set(err, PCH_EINVAL, "--column %s: invalid column name (letters, digits, '_'; not starting with a digit)", name);
        if (pch_cj__is_reserved(name))
            return pch_error_set(err, PCH_EINVAL, "--column %s: '%s' is a reserved column name", name, name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(o->mappings[j].name, name) == 0)
                return pch_error_set(err, PCH_EINVAL, "--column %s: duplicate mapping name", name);
        int rc = pch_cj_path_check(path, err);
        if (rc < 0) return pch_error_prefix(err, "--column %s", name), rc;
        if (strcmp(name, "id") == 0) { seen_id = true; m->id_path_text = path; }
        else if (strcmp(name, "timestamp") == 0) { seen_ts = true; m->ts_path_text = path; }
        else n_user++;
    }
    (void)seen_id; (void)seen_ts;
    PCH_TRY(pch_cj__path_parse(&m->id_path, m->ctx, m->id_path_text, strlen(m->id_path_text), err));
    PCH_TRY(pch_cj__path_parse(&m->ts_path, m->ctx, m->ts_path_text, strlen(m->ts_path_text), err));
    if (n_user) {
        m->user = pch_calloc(m->ctx, n_user, sizeof *m->user);
        m->user_names = pch_calloc(m->ctx, n_user, sizeof *m->user_names);
        if (!m->user || !m->user_names) return oom(err);
    }
    for (size_t i = 0; i < o->n_mappings; i++) {
        const char *name = o->mappings[i].name, *path = o->mappings[i].path;
        if (strcmp(name, "id") == 0 || strcmp(name, "timestamp") == 0) continue;
        PCH_TRY(pch_cj__path_parse(&m->user[m->n_user], m->ctx, path, strlen(path), err));
        m->user_names[m->n_user++] = name;
    }
    return PCH_OK;
}

static int add_meta(imp *m, size_t fi, const char *k, const char *v, pch_error *err)
{
    return pch_lance_schema_add_metadata(m->schema, fi, k, v, strlen(v), err);
}

static int build_schema(imp *m, pch_error *err)
{
    PCH_TRY(pch_lance_schema_new(&m->schema, m->ctx, err));
    PCH_TRY(pch_lance_schema_add_field(m->schema, "id", PCH_LANCE_UTF8, false, err));
    PCH_TRY(pch_lance_schema_add_field(m->schema, "timestamp", PCH_LANCE_UTF8, false, err));
    PCH_TRY(pch_lance_schema_add_field(m->schema, "filename", PCH_LANCE_UTF8, false, err));
    PCH_TRY(add_meta(m, C_FILE, "role", "source-file", err));
    PCH_TRY(pch_lance_schema_add_field(m->schema, "data", PCH_LANCE_JSON, false, err));
    for (size_t i = 0; i < m->n_user; i++) {
        PCH_TRY(pch_lance_schema_add_field(m->schema, m->user_names[i], PCH_LANCE_JSON, true, err));
        PCH_TRY(add_meta(m, C_DATA + 1 + i, PCH_CJ_FIELD_PATH_KEY, m->user[i].text, err));
    }
    PCH_TRY(pch_lance_schema_add_field(m->schema, "_raw_", PCH_LANCE_LARGE_BINARY, true, err));
    PCH_TRY(pch_lance_schema_add_field(m->schema, "_offload_", PCH_LANCE_JSON, true, err));
    m->n_cols = C_DATA + 1 + m->n_user + 2;
    m->c_raw = m->n_cols - 2;
    m->c_off = m->n_cols - 1;

    /* schema metadata */
    pch_buf b;
    pch_buf_init(&b, m->ctx);
    int rc = PCH_OK;
    char num[32];
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_FORMAT, PCH_CJ_FORMAT, err)) < 0) goto done;
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_PRODUCER, "pchronicle " PCH_VERSION_STRING, err)) < 0) goto done;
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_ID_PATH, m->id_path.text, err)) < 0) goto done;
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_TS_PATH, m->ts_path.text, err)) < 0) goto done;
    pch_buf_putc(&b, '[');
    for (size_t i = 0; i < m->n_user; i++) {
        if (i) pch_buf_putc(&b, ',');
        pch_buf_append_str(&b, "{\"name\":");
        pch_json__write_string(&b, m->user_names[i], strlen(m->user_names[i]));
        pch_buf_append_str(&b, ",\"path\":");
        pch_json__write_string(&b, m->user[i].text, strlen(m->user[i].text));
        pch_buf_putc(&b, '}');
    }
    pch_buf_putc(&b, ']');
    if (b.oom) { rc = oom(err); goto done; }
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_COLUMNS, (const char *)b.data, err)) < 0) goto done;
    snprintf(num, sizeof num, "%llu", (unsigned long long)m->o->offload_threshold);
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_THRESHOLD, num, err)) < 0) goto done;
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_OFFLOAD_PATH, PCH_CJ_OFFLOAD_DIR, err)) < 0) goto done;
    /* empty files: the only inputs without rows (a non-empty file has >= 1 record) */
    pch_buf_clear(&b);
    pch_buf_putc(&b, '[');
    size_t n_empty = 0;
    for (size_t i = 0; i < m->files.n; i++) {
        if (m->files.v[i].size != 0 || pch_cj__is_json_doc(m->files.v[i].rel)) continue;
        if (n_empty++) pch_buf_putc(&b, ',');
        if (pch_json__write_string(&b, m->files.v[i].rel, strlen(m->files.v[i].rel)) < 0) { rc = oom(err); goto done; }
    }
    pch_buf_putc(&b, ']');
    if (b.oom) { rc = oom(err); goto done; }
    if ((rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_EMPTY_FILES, (const char *)b.data, err)) < 0) goto done;
    snprintf(num, sizeof num, "%zu", m->files.n);
    rc = add_meta(m, SIZE_MAX, PCH_CJ_KEY_SOURCE_FILES, num, err);
done:
    pch_buf_dispose(&b);
    return rc;
}

static int flush_batch(imp *m, pch_error *err)
{
    size_t n = m->cols[0].n;
    if (n == 0) return PCH_OK;
    pch_lance_column lc[64];
    pch_lance_column *cols = m->n_cols <= 64 ? lc : pch_calloc(m->ctx, m->n_cols, sizeof *cols);
    if (!cols) return oom(err);
    for (size_t i = 0; i < m->n_cols; i++) {
        colb *c = &m->cols[i];
        if (c->data.oom || c->offs.oom || c->valid.oom) {
            if (cols != lc) pch_free(m->ctx, cols);
            return oom(err);
        }
        memset(&cols[i], 0, sizeof cols[i]);
        cols[i].type = c->type;
        cols[i].n_rows = n;
        cols[i].validity = c->any_null ? c->valid.data : NULL;
        cols[i].offsets = (const uint64_t *)(const void *)c->offs.data;
        cols[i].data = c->data.data ? c->data.data : (const uint8_t *)"";
    }
    pch_lance_batch b = { n, m->n_cols, cols };
    int rc = pch_lance_writer_write(m->w, &b, err);
    if (cols != lc) pch_free(m->ctx, cols);
    if (rc < 0) return rc;
    for (size_t i = 0; i < m->n_cols; i++)
        if (colb_reset(&m->cols[i]) < 0) return oom(err);
    return PCH_OK;
}

static size_t batch_size(const imp *m)
{
    size_t s = 0;
    for (size_t i = 0; i < m->n_cols; i++) s += m->cols[i].data.len;
    return s;
}

/* Text of a scalar mapping value: a non-empty string (decoded) or a number (its JSON
** text); false for anything else. */
static bool scalar_text(const pch_json_value *v, const char *src, const char **p, size_t *n)
{
    if (!v) return false;
    if (v->kind == PCH_JSON_STRING && v->u.str.len > 0) { *p = v->u.str.ptr; *n = v->u.str.len; return true; }
    if (v->kind == PCH_JSON_NUMBER) { *p = src + v->span_off; *n = v->span_len; return true; }
    return false;
}

static int write_object(imp *m, const char *key, const uint8_t *raw, size_t len, pch_error *err)
{
    pch_buf_clear(&m->objpath);
    if (pch_buf_printf(&m->objpath, "%s/%s/%s", (const char *)m->stage.staging.data,
                       PCH_CJ_OFFLOAD_DIR, key) < 0)
        return oom(err);
    const char *path = (const char *)m->objpath.data;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == EEXIST) {
        pch_buf_clear(&m->objcmp);
        PCH_TRY(pch_file_read_all(&m->objcmp, path, len + 1, err));
        if (m->objcmp.len != len || memcmp(m->objcmp.data, raw, len) != 0)
            return pch_error_set(err, PCH_ECORRUPT, "offload object %s exists with different bytes", key);
        return PCH_OK;   /* shared between equal records */
    }
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "create %s", path);
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, raw + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            return pch_error_set_sys(err, PCH_EIO, e, "write %s", path);
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) return pch_error_set_sys(err, PCH_EIO, errno, "close %s", path);
    m->st.offloaded_bytes += len;
    return PCH_OK;
}

static void report(imp *m, const char *cur, bool force)
{
    if (!m->o->progress) return;
    if (!force && m->st.records - m->last_prog_records < 256) return;
    m->last_prog_records = m->st.records;
    m->prog.records = m->st.records;
    m->prog.files = m->st.files;
    m->prog.bytes = m->st.bytes;
    m->prog.current = cur;
    m->o->progress(m->o->payload, &m->prog);
}

/* RFC-0014: ids are unique within the dataset; the error names both places. */
static int dup_error(const imp *m, const pch_cj_dup *d, pch_error *err)
{
    return pch_error_set(err, PCH_EINVAL, "%s line %llu column 1: duplicate id '%s' (first at %s line %llu)",
                         m->files.v[d->file].rel, (unsigned long long)d->line, d->shown,
                         m->files.v[d->first_file].rel, (unsigned long long)d->first_line);
}

/* One record: raw = its bytes including the line terminator; content = without it. */
static int add_record(imp *m, uint32_t fidx, uint64_t line, const uint8_t *raw,
                      size_t raw_len, size_t content_len, bool doc, pch_error *err)
{
    const char *rel = m->files.v[fidx].rel;
    size_t col = 1;
    int rc = pch_cj__check_line(raw, content_len, line == 1, &col, err);
    if (rc < 0) return pch_error_prefix(err, "%s line %llu column %zu", rel, (unsigned long long)line, col), rc;
    const pch_json_value *root = NULL;
    rc = pch_json_parser_parse(m->parser, (const char *)raw, content_len, &root, err);
    if (rc < 0) {
        pch_json_pos pos;
        pch_json_parser_error_pos(m->parser, &pos);
        unsigned long long l = doc ? (unsigned long long)pos.line : (unsigned long long)line;
        if (err) {   /* keep the parser's "what", drop its own position prefix */
            const char *what = strstr(err->msg, "): ");
            char tail[PCH_ERROR_MSG_LEN];
            snprintf(tail, sizeof tail, "%s", what ? what + 3 : err->msg);
            pch_error_set(err, rc, "%s line %llu column %zu: invalid json: %s", rel, l,
                          pos.column ? pos.column : 1, tail);
        }
        return rc;
    }
    if (root->kind != PCH_JSON_OBJECT && !(doc && root->kind == PCH_JSON_ARRAY)) {
        size_t c = root->span_off + 1;
        return pch_error_set(err, PCH_EINVAL, "%s line %llu column %zu: top-level value must be %s",
                             rel, (unsigned long long)line, c, doc ? "an object or array" : "an object");
    }
    const char *src = (const char *)raw;
    /* id and timestamp, or the generated "<filename>#<line>" */
    pch_buf_clear(&m->text);
    if (pch_buf_printf(&m->text, "%s#%llu", rel, (unsigned long long)line) < 0) return oom(err);
    const char *idp, *tsp;
    size_t idn, tsn;
    if (!scalar_text(pch_cj__path_eval(&m->id_path, root), src, &idp, &idn)) { idp = (const char *)m->text.data; idn = m->text.len; }
    if (!scalar_text(pch_cj__path_eval(&m->ts_path, root), src, &tsp, &tsn)) { tsp = (const char *)m->text.data; tsn = m->text.len; }
    pch_cj_dup dup;
    if ((rc = pch_cj__ids_add(m->ids, idp, idn, fidx, line, &dup, err)) < 0) return rc;
    if (rc == 1) return dup_error(m, &dup, err);
    bool off = m->o->offload_threshold && (uint64_t)raw_len >= m->o->offload_threshold;
    int e = 0;
    e |= colb_add(&m->cols[C_ID], idp, idn);
    e |= colb_add(&m->cols[C_TS], tsp, tsn);
    e |= colb_add(&m->cols[C_FILE], rel, strlen(rel));
    if (e < 0) return oom(err);
    /* data: the record as JSONB (always encoded: duplicate keys are rejected either way) */
    pch_buf *dst = off ? &m->scratch : &m->cols[C_DATA].data;
    if (off) pch_buf_clear(&m->scratch);
    rc = pch_jsonb__encode(dst, root, src, err);
    if (rc < 0) return pch_error_prefix(err, "%s line %llu column 1", rel, (unsigned long long)line), rc;
    if (off) {
        if (pch_buf_append(&m->cols[C_DATA].data, m->jsonb_null.data, m->jsonb_null.len) < 0) return oom(err);
    }
    if (colb_end(&m->cols[C_DATA], true) < 0) return oom(err);
    for (size_t i = 0; i < m->n_user; i++) {
        const pch_json_value *v = pch_cj__path_eval(&m->user[i], root);
        colb *c = &m->cols[C_DATA + 1 + i];
        if (v) {
            rc = pch_jsonb__encode(&c->data, v, src, err);
            if (rc < 0) return pch_error_prefix(err, "%s line %llu column %zu", rel, (unsigned long long)line, v->span_off + 1), rc;
        }
        if (colb_end(c, v != NULL) < 0) return oom(err);
    }
    if (!off) {
        if (colb_add(&m->cols[m->c_raw], raw, raw_len) < 0 || colb_end(&m->cols[m->c_off], false) < 0) return oom(err);
    } else {
        char key[65];
        pch_blake3_hex(key, raw, raw_len);
        PCH_TRY(write_object(m, key, raw, raw_len, err));
        pch_buf_clear(&m->text);
        if (pch_buf_printf(&m->text, "{\"key\":\"%s\",\"path\":\"%s\"}", key, PCH_CJ_OFFLOAD_DIR) < 0) return oom(err);
        const pch_json_value *d = NULL;
        PCH_TRY(pch_json_parser_parse(m->desc_parser, (const char *)m->text.data, m->text.len, &d, err));
        PCH_TRY(pch_jsonb__encode(&m->cols[m->c_off].data, d, (const char *)m->text.data, err));
        if (colb_end(&m->cols[m->c_raw], false) < 0 || colb_end(&m->cols[m->c_off], true) < 0) return oom(err);
        m->st.offloaded_rows++;
    }
    m->st.records++;
    m->st.bytes += raw_len;
    if (m->cols[0].n >= m->batch_rows || batch_size(m) >= m->batch_bytes) PCH_TRY(flush_batch(m, err));
    report(m, rel, false);
    if (cancelled(m)) return pch_error_set(err, PCH_ECANCELED, "interrupted");
    return PCH_OK;
}

static int read_more(int fd, pch_buf *b, const char *rel, pch_error *err, bool *eof)
{
    if (pch_buf_reserve(b, CJ_READ_CHUNK) < 0) return oom(err);
    for (;;) {
        ssize_t n = read(fd, b->data + b->len, b->cap - 1 - b->len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return pch_error_set_sys(err, PCH_EIO, errno, "read %s", rel);
        }
        if (n == 0) *eof = true;
        b->len += (size_t)n;
        b->data[b->len] = 0;
        return PCH_OK;
    }
}

static int import_file(imp *m, uint32_t fidx, pch_buf *buf, pch_error *err)
{
    const pch_cj_file *f = &m->files.v[fidx];
    uint64_t line = 0;
    bool doc = pch_cj__is_json_doc(f->rel), eof = false;
    int fd = open(f->abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "open %s", f->rel);
    struct stat sb;
    int rc = PCH_OK;
    if (fstat(fd, &sb) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "stat %s", f->rel); goto done; }
    if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != f->size) {
        rc = pch_error_set(err, PCH_EIO, "%s changed during import", f->rel);
        goto done;
    }
    pch_buf_clear(buf);
    size_t start = 0, scanned = 0;
    if (doc) {
        while (!eof) {
            if (buf->len > m->max_record) {
                rc = pch_error_set(err, PCH_ELIMIT, "%s line 1 column 1: record is larger than the limit of %zu bytes", f->rel, m->max_record);
                goto done;
            }
            if ((rc = read_more(fd, buf, f->rel, err, &eof)) < 0) goto done;
        }
        if (buf->len > m->max_record) {
            rc = pch_error_set(err, PCH_ELIMIT, "%s line 1 column 1: record is larger than the limit of %zu bytes", f->rel, m->max_record);
            goto done;
        }
        rc = add_record(m, fidx, 1, buf->data, buf->len, buf->len, true, err);
        goto done;
    }
    for (;;) {
        size_t ll;
        if (pch_cj__next_line(buf->data + scanned, buf->len - scanned, &ll)) {
            ll += scanned - start;
            line++;
            if (ll > m->max_record) {
                rc = pch_error_set(err, PCH_ELIMIT, "%s line %llu column 1: record is larger than the limit of %zu bytes", f->rel, (unsigned long long)line, m->max_record);
                goto done;
            }
            const uint8_t *p = buf->data + start;
            rc = add_record(m, fidx, line, p, ll, pch_cj__content_len(p, ll), false, err);
            if (rc < 0) goto done;
            start += ll;
            scanned = start;
            continue;
        }
        scanned = buf->len;
        if (eof) {
            if (start < buf->len) {
                line++;
                size_t ll2 = buf->len - start;
                if (ll2 > m->max_record) {
                    rc = pch_error_set(err, PCH_ELIMIT, "%s line %llu column 1: record is larger than the limit of %zu bytes", f->rel, (unsigned long long)line, m->max_record);
                    goto done;
                }
                rc = add_record(m, fidx, line, buf->data + start, ll2, ll2, false, err);
            }
            goto done;
        }
        if (buf->len - start > m->max_record) {
            rc = pch_error_set(err, PCH_ELIMIT, "%s line %llu column 1: record is larger than the limit of %zu bytes", f->rel, (unsigned long long)line + 1, m->max_record);
            goto done;
        }
        if (start > 0) {           /* keep only the partial line */
            memmove(buf->data, buf->data + start, buf->len - start);
            buf->len -= start;
            scanned -= start;
            start = 0;
        }
        if ((rc = read_more(fd, buf, f->rel, err, &eof)) < 0) goto done;
    }
done:
    close(fd);
    if (rc == PCH_OK && line == 0 && !doc && f->size != 0)
        rc = pch_error_set(err, PCH_EIO, "%s changed during import", f->rel);
    return rc;
}

int pch_cj_import(pch_ctx *ctx, const char *root, const char *target,
                  const pch_cj_options *opts, pch_cj_stats *stats_out, pch_error *err)
{
    static const pch_cj_options defaults = PCH_CJ_OPTIONS_INIT;
    if (stats_out) memset(stats_out, 0, sizeof *stats_out);
    if (!ctx || !root || !target) return pch_error_set(err, PCH_EINVAL, "invalid argument");
    imp m;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.o = opts ? opts : &defaults;
    /* option structs grow by appending: version 1 ended before zstd_level */
    if (m.o->version < 1 || m.o->version > PCH_CJ_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "unknown compact-jsonl options version %u", m.o->version);
    m.zstd_level = m.o->version >= 2 ? m.o->zstd_level : 0;
    if (m.zstd_level < 0 || m.zstd_level > PCH_CJ_MAX_ZSTD_LEVEL)
        return pch_error_set(err, PCH_EINVAL, "zstd level %d outside 1..%d", m.zstd_level,
                             PCH_CJ_MAX_ZSTD_LEVEL);
    if (m.zstd_level == 0) m.zstd_level = PCH_CJ_DEFAULT_ZSTD_LEVEL;
    m.max_record = m.o->max_record_bytes ? m.o->max_record_bytes : pch_ctx_limits(ctx)->max_line_bytes;
    m.batch_bytes = m.o->batch_bytes ? m.o->batch_bytes : CJ_DEFAULT_BATCH_BYTES;
    m.batch_rows = m.o->batch_rows ? m.o->batch_rows : CJ_DEFAULT_BATCH_ROWS;
    pch_buf_init(&m.scratch, ctx);
    pch_buf_init(&m.text, ctx);
    pch_buf_init(&m.objpath, ctx);
    pch_buf_init(&m.jsonb_null, ctx);
    pch_buf_init(&m.objcmp, ctx);
    pch_buf fbuf;
    pch_buf_init(&fbuf, ctx);
    bool staged = false;
    int rc;

    if ((rc = check_mappings(&m, err)) < 0) goto done;
    staged = true;   /* stage_end also undoes a failed stage_begin */
    if ((rc = pch_cj__stage_begin(&m.stage, ctx, target, m.o->mode, err)) < 0) goto done;
    if ((rc = pch_cj__ids_new(&m.ids, ctx, m.o->version >= 2 ? m.o->id_index_bytes : 0,
                              (const char *)m.stage.staging.data, err)) < 0) goto done;
    if ((rc = pch_cj__walk(&m.files, ctx, root, m.stage.target_exists ? m.stage.target_dev : 0,
                           m.stage.target_exists ? m.stage.target_ino : 0, err)) < 0) goto done;
    if (m.files.n > UINT32_MAX) { rc = pch_error_set(err, PCH_ELIMIT, "too many input files"); goto done; }
    for (size_t i = 0; i < m.files.n; i++) m.prog.total_bytes += m.files.v[i].size;
    pch_json_parse_options po = PCH_JSON_PARSE_OPTIONS_INIT;
    po.max_bytes = m.max_record;
    if ((rc = pch_json_parser_new(&m.parser, ctx, &po, err)) < 0) goto done;
    if ((rc = pch_json_parser_new(&m.desc_parser, ctx, NULL, err)) < 0) goto done;
    {
        pch_json_value nv;
        memset(&nv, 0, sizeof nv);
        nv.kind = PCH_JSON_NULL;
        if ((rc = pch_jsonb__encode(&m.jsonb_null, &nv, NULL, err)) < 0) goto done;
    }
    if ((rc = build_schema(&m, err)) < 0) goto done;
    m.cols = pch_calloc(ctx, m.n_cols, sizeof *m.cols);
    if (!m.cols) { rc = oom(err); goto done; }
    for (size_t i = 0; i < m.n_cols; i++) {
        colb_init(&m.cols[i], ctx, m.schema->fields[i].type);
        if (colb_reset(&m.cols[i]) < 0) { rc = oom(err); goto done; }
    }
    if (m.o->offload_threshold) {
        pch_buf_clear(&m.objpath);
        if (pch_path_join(&m.objpath, (const char *)m.stage.staging.data, PCH_CJ_OFFLOAD_DIR) < 0) { rc = oom(err); goto done; }
        if ((rc = pch_mkdirs((const char *)m.objpath.data, err)) < 0) goto done;
    }
    pch_lance_write_options wo = PCH_LANCE_WRITE_OPTIONS_INIT;
    wo.mode = m.stage.remote && m.o->mode != PCH_CJ_CREATE ? PCH_LANCE_OVERWRITE : PCH_LANCE_CREATE;
    /* every column is read by scans (export, filters), never by row: compress whole pages */
    wo.page_dictionary = true;
    wo.zstd_level = m.zstd_level;
    if ((rc = pch_lance_writer_open(&m.w, ctx, (const char *)(m.stage.remote ? m.stage.target.data : m.stage.staging.data),
                                    m.schema, &wo, err)) < 0) goto done;
    for (size_t i = 0; i < m.files.n; i++) {
        if (cancelled(&m)) { rc = pch_error_set(err, PCH_ECANCELED, "interrupted"); goto done; }
        if ((rc = import_file(&m, (uint32_t)i, &fbuf, err)) < 0) goto done;
        m.st.files++;
        /* release a very large record's buffer between files */
        if (fbuf.cap > 4 * CJ_READ_CHUNK) pch_buf_dispose(&fbuf), pch_buf_init(&fbuf, ctx);
    }
    if ((rc = flush_batch(&m, err)) < 0) goto done;
    if (cancelled(&m)) { rc = pch_error_set(err, PCH_ECANCELED, "interrupted"); goto done; }
    {   /* ids that met only in spilled runs */
        pch_cj_dup dup;
        if ((rc = pch_cj__ids_finish(m.ids, &dup, err)) < 0) goto done;
        if (rc == 1) { rc = dup_error(&m, &dup, err); goto done; }
    }
    /* on object storage the offloaded records go up before the commit that refers to them */
    if ((rc = pch_cj__stage_upload(&m.stage, PCH_CJ_OFFLOAD_DIR, err)) < 0) goto done;
    if ((rc = pch_lance_writer_commit(m.w, &m.st.version, err)) < 0) goto done;
    if (cancelled(&m)) { rc = pch_error_set(err, PCH_ECANCELED, "interrupted"); goto done; }
    if ((rc = pch_cj__stage_publish(&m.stage, err)) < 0) goto done;
    report(&m, NULL, true);
    if (stats_out) *stats_out = m.st;
done:
    pch_lance_writer_free(m.w);
    if (staged) pch_cj__stage_end(&m.stage);
    pch_lance_schema_free(m.schema);
    if (m.cols) {
        for (size_t i = 0; i < m.n_cols; i++) colb_dispose(&m.cols[i]);
        pch_free(ctx, m.cols);
    }
    pch_json_parser_free(m.parser);
    pch_json_parser_free(m.desc_parser);
    pch_cj__path_dispose(&m.id_path);
    pch_cj__path_dispose(&m.ts_path);
    for (size_t i = 0; i < m.n_user; i++) pch_cj__path_dispose(&m.user[i]);
    pch_free(ctx, m.user);
    pch_free(ctx, (void *)m.user_names);
    pch_cj__filelist_dispose(&m.files);
    pch_cj__ids_free(m.ids);
    pch_buf_dispose(&m.scratch);
    pch_buf_dispose(&m.text);
    pch_buf_dispose(&m.objpath);
    pch_buf_dispose(&m.jsonb_null);
    pch_buf_dispose(&m.objcmp);
    pch_buf_dispose(&fbuf);
    return rc;
}
