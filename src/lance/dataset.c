/* Lance datasets (lance-format.md §1.1, §1.2, §1.7): the public writer (create / append /
** overwrite, each a new version), the dataset reader (any version) and the scanner.
**
** Commit protocol (§1.7): data files are written under data/ with random names
** (<32 hex>.lance, invisible until referenced); the manifest of version v is staged under a
** name that never ends in ".manifest" and published with link-if-absent
** (pch_file_publish_new), so two writers can never both win version v. CREATE fails on a
** lost race; APPEND and OVERWRITE reload the latest manifest and retry up to
** COMMIT_RETRIES times. After a commit latest_version_hint.json is replaced atomically
** (a hint only: readers list _versions/). A writer that is freed uncommitted removes every
** data file it wrote, so nothing of a failed writer is ever referenced.
**
** A dataset on object storage (s3://...; docs/object-storage.md "Lance datasets on S3"):
** data files are written to a local staging directory and uploaded whole at commit, the
** manifest is published with a create-if-absent PUT of _versions/<name> (the same rule:
** one writer wins version v), after the store has proved it refuses a second one.
**
** Reading fails closed on what we do not implement: deletion files, base paths, unknown
** reader feature flags, data formats other than 2.0/2.1, nested or unknown types. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/rfile.h"
#include "lance/table.h"
#include "pchronicle/io.h"

#define COMMIT_RETRIES 20
#define DEFAULT_MAX_ROWS_PER_FILE ((uint64_t)1 << 20)
#define DEFAULT_BATCH_ROWS 8192
/* reader_feature_flags we can honour: deletion files are checked per fragment; stable row
** ids and table config do not change which rows a scan returns. */
#define SUPPORTED_READER_FLAGS (PCH_LANCE_FLAG_DELETION_FILES | PCH_LANCE_FLAG_STABLE_ROW_IDS | \
                                PCH_LANCE_FLAG_USE_V2_FORMAT | PCH_LANCE_FLAG_TABLE_CONFIG)

/* ======================================================================= writer */

typedef struct written_file {
    char *name;         /* relative to data/ */
    uint64_t rows;
    uint64_t size;
} written_file;

struct pch_lance_writer {
    pch_ctx *ctx;
    char *path;                     /* dataset directory */
    pch_lance_write_options opts;
    pch_lance_schema *schema;       /* field ids as they will be committed */
    uint64_t max_rows;
    pch_lance_file_writer *cur;     /* open data file, or NULL */
    char *cur_name;
    written_file *files;            /* finished data files, in order */
    size_t n_files, cap_files;
    pch_lance_column *slice;        /* scratch: n_fields columns */
    bool committed;
    bool failed;                    /* a write failed midway: commit refuses */
    pch_store *remote;              /* the dataset is on object storage (path is its URI) */
    char *local;                    /* ... and its data files are staged here first */
    size_t uploaded;                /* files[0..uploaded) are on the store */
};

/* Where the writer puts its data files: the dataset, or the local staging directory. */
static const char *data_root(const pch_lance_writer *w) { return w->local ? w->local : w->path; }

static int data_path(pch_buf *out, const char *dataset, const char *name)
{
    pch_buf_clear(out);
    return pch_buf_printf(out, "%s/data/%s", dataset, name);
}

static int file_version_of_format(pch_lance_file_version *out, const char *v, pch_error *err)
{
    if (strcmp(v, "2.1") == 0) *out = PCH_LANCE_FILE_2_1;
    else if (strcmp(v, "2.0") == 0) *out = PCH_LANCE_FILE_2_0;
    else return pch_error_set(err, PCH_EUNSUPPORTED, "data storage version '%s' is not supported", v);
    return PCH_OK;
}

/* Storage version of a manifest: data_format, else inferred from the first data file. */
static const char *manifest_format(const pch_lance_manifest *m)
{
    if (m->format_version && *m->format_version) return m->format_version;
    for (size_t i = 0; i < m->n_fragments; i++)
        if (m->fragments[i].n_files) {
            const pch_lance_data_file *df = &m->fragments[i].files[0];
            if ((df->major == 0 && df->minor == 3) || (df->major == 2 && df->minor == 0)) return "2.0";
            if (df->major == 2 && df->minor == 1) return "2.1";
            if (df->major == 2 && df->minor == 2) return "2.2";
            return "legacy";
        }
    return "2.1";
}

int pch_lance_writer_open(pch_lance_writer **out, pch_ctx *ctx, const char *path,
                          const pch_lance_schema *schema, const pch_lance_write_options *opts,
                          pch_error *err)
{
    pch_lance_write_options def = PCH_LANCE_WRITE_OPTIONS_INIT;
    pch_lance_manifest *base = NULL;
    pch_lance_writer *w;
    int rc = PCH_OK;
    pch_buf dir;

    *out = NULL;
    PCH_ASSERT_ARG(path && schema);
    if (!opts) opts = &def;
    /* Option structs grow by appending (STYLE §3): version 1 ended before `threads`,
    ** version 2 before `page_dictionary`. */
    if (opts->version < 1 || opts->version > PCH_LANCE_WRITE_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "unknown write options version %u", opts->version);
    if (opts->mode != PCH_LANCE_CREATE && opts->mode != PCH_LANCE_APPEND &&
        opts->mode != PCH_LANCE_OVERWRITE)
        return pch_error_set(err, PCH_EINVAL, "bad write mode %d", (int)opts->mode);
    if (schema->n_fields == 0) return pch_error_set(err, PCH_EINVAL, "schema has no fields");
    if (!(w = pch_calloc(ctx, 1, sizeof *w))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    w->ctx = ctx;
    if (opts->version < PCH_LANCE_WRITE_OPTIONS_VERSION) {
        memcpy(&w->opts, opts, opts->version == 1 ? offsetof(pch_lance_write_options, threads)
                                                  : offsetof(pch_lance_write_options, page_dictionary));
        w->opts.version = PCH_LANCE_WRITE_OPTIONS_VERSION;
        if (opts->version == 1) w->opts.threads = 0;   /* the version-2 default */
        w->opts.page_dictionary = false;
    } else {
        w->opts = *opts;
    }
    w->max_rows = opts->max_rows_per_file ? opts->max_rows_per_file : DEFAULT_MAX_ROWS_PER_FILE;
    pch_buf_init(&dir, ctx);
    if (!(w->path = pch_strndup(ctx, path, strlen(path)))) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto done; }
    if (pch_store_is_s3(path)) {
        const char *tmp = getenv("TMPDIR");
        if ((rc = pch_store_open(ctx, path, NULL, &w->remote, err)) < 0) goto done;
        if ((rc = pch_store_check_commit(w->remote, err)) < 0) goto done;
        if ((rc = pch_buf_printf(&dir, "%s/pch-lance-XXXXXX", tmp && *tmp ? tmp : "/tmp")) < 0) goto done;
        if (!mkdtemp((char *)dir.data)) { rc = pch_error_set_sys(err, PCH_EIO, errno, "mkdtemp %s", (const char *)dir.data); goto done; }
        if (!(w->local = pch_strndup(ctx, (const char *)dir.data, dir.len))) { rmdir((const char *)dir.data); rc = PCH_ENOMEM; goto done; }
        pch_buf_clear(&dir);
    }

    if (opts->mode == PCH_LANCE_APPEND) {
        if ((rc = pch_lance__load_manifest(&base, ctx, path, 0, NULL, err)) < 0) goto done;
        if ((rc = pch_lance__schema_check_same(schema, base->schema, err)) < 0) goto done;
        if ((rc = pch_lance_schema_clone(&w->schema, base->schema, err)) < 0) goto done;
        /* file version follows the dataset (§1.7: lance keeps it on append) */
        if ((rc = file_version_of_format(&w->opts.file_version, manifest_format(base), err)) < 0)
            goto done;
    } else {
        if (opts->mode == PCH_LANCE_CREATE) {
            uint64_t *vers = NULL;
            size_t n = 0;
            int naming;
            pch_error e2;
            rc = pch_lance__list_versions(ctx, path, &vers, &n, &naming, &e2);
            pch_free(ctx, vers);
            if (rc != PCH_ENOTFOUND) {
                rc = pch_error_set(err, PCH_EEXISTS, "%s: dataset already exists", path);
                goto done;
            }
            rc = PCH_OK;
        }
        if (opts->file_version != PCH_LANCE_FILE_2_1 && opts->file_version != PCH_LANCE_FILE_2_0) {
            rc = pch_error_set(err, PCH_EINVAL, "bad file version %d", (int)opts->file_version);
            goto done;
        }
        if ((rc = pch_lance_schema_clone(&w->schema, schema, err)) < 0) goto done;
        for (size_t i = 0; i < w->schema->n_fields; i++) w->schema->fields[i].id = (int32_t)i;
    }
    if (!(w->slice = pch_calloc(ctx, w->schema->n_fields, sizeof *w->slice))) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = pch_buf_printf(&dir, "%s/data", data_root(w))) < 0 ||
        (rc = pch_mkdirs((const char *)dir.data, err)) < 0)
        goto done;
    pch_buf_clear(&dir);
    if (!w->remote && ((rc = pch_buf_printf(&dir, "%s/_versions", path)) < 0 ||
                       (rc = pch_mkdirs((const char *)dir.data, err)) < 0))
        goto done;
    *out = w;
    w = NULL;
done:
    if (rc == PCH_ENOMEM && err && !err->msg[0]) pch_error_set(err, PCH_ENOMEM, "out of memory");
    pch_buf_dispose(&dir);
    pch_lance__manifest_free(base);
    pch_lance_writer_free(w);
    return rc;
}

static int open_data_file(pch_lance_writer *w, pch_error *err)
{
    uint8_t rnd[16];
    char name[40];
    pch_buf p;
    int rc;
    PCH_TRY(pch_random_bytes(rnd, sizeof rnd, err));
    pch_hex_encode(name, rnd, sizeof rnd);
    memcpy(name + 32, ".lance", 7);
    if (!(w->cur_name = pch_strndup(w->ctx, name, strlen(name)))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    pch_buf_init(&p, w->ctx);
    if (data_path(&p, data_root(w), name) < 0) {
        pch_buf_dispose(&p);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    rc = pch_lance__file_writer_open(&w->cur, w->ctx, (const char *)p.data, w->schema, &w->opts, err);
    pch_buf_dispose(&p);
    if (rc < 0) {
        pch_free(w->ctx, w->cur_name);
        w->cur_name = NULL;
    }
    return rc;
}

static int finish_data_file(pch_lance_writer *w, pch_error *err)
{
    uint64_t rows = 0, size = 0;
    if (!w->cur) return PCH_OK;
    if (pch_lance__file_writer_rows(w->cur) == 0) {       /* nothing in it: drop it */
        pch_lance__file_writer_free(w->cur);
        w->cur = NULL;
        pch_free(w->ctx, w->cur_name);
        w->cur_name = NULL;
        return PCH_OK;
    }
    if (w->n_files == w->cap_files) {
        size_t nc = w->cap_files ? w->cap_files * 2 : 8, bytes;
        written_file *nf;
        if (!pch_mul_size(&bytes, nc, sizeof *nf) || !(nf = pch_realloc(w->ctx, w->files, bytes)))
            return pch_error_set(err, PCH_ENOMEM, "out of memory");
        w->files = nf;
        w->cap_files = nc;
    }
    PCH_TRY(pch_lance__file_writer_finish(w->cur, &rows, &size, err));
    pch_lance__file_writer_free(w->cur);    /* finished: the file stays */
    w->cur = NULL;
    w->files[w->n_files].name = w->cur_name;
    w->files[w->n_files].rows = rows;
    w->files[w->n_files].size = size;
    w->n_files++;
    w->cur_name = NULL;
    return PCH_OK;
}

static size_t row_bytes(pch_lance_type t)
{
    return t == PCH_LANCE_BOOL ? 1 : pch_lance_type_width(t);
}

static int write_rows(pch_lance_writer *w, const pch_lance_batch *batch, pch_error *err);

int pch_lance_writer_write(pch_lance_writer *w, const pch_lance_batch *batch, pch_error *err)
{
    if (w->committed) return pch_error_set(err, PCH_EINVAL, "writer already committed");
    if (w->failed) return pch_error_set(err, PCH_EINVAL, "writer failed earlier");
    /* write_rows latches w->failed once rows are handed to a data file; a batch rejected
    ** by validation before that leaves the writer usable */
    return write_rows(w, batch, err);
}

static int write_rows(pch_lance_writer *w, const pch_lance_batch *batch, pch_error *err)
{
    const pch_lance_schema *s = w->schema;
    size_t done = 0;
    if (batch->n_columns != s->n_fields)
        return pch_error_set(err, PCH_EINVAL, "batch has %zu columns, schema has %zu",
                             batch->n_columns, s->n_fields);
    for (size_t c = 0; c < s->n_fields; c++) {
        const pch_lance_column *col = &batch->columns[c];
        const pch_lance_field *f = &s->fields[c];
        if (col->type != f->type)
            return pch_error_set(err, PCH_EINVAL, "column '%s': batch type %s, schema type %s",
                                 f->name, pch_lance_type_name(col->type) ? pch_lance_type_name(col->type) : "?",
                                 pch_lance_type_name(f->type));
        if (col->n_rows != batch->n_rows)
            return pch_error_set(err, PCH_EINVAL, "column '%s': %zu rows, batch has %zu", f->name,
                                 col->n_rows, batch->n_rows);
        if (!f->nullable && col->validity)
            for (size_t r = 0; r < batch->n_rows; r++)
                if (!col->validity[r])
                    return pch_error_set(err, PCH_EINVAL, "column '%s' is not nullable: null in row %zu",
                                         f->name, r);
    }
    w->failed = true;                   /* until every row is in a data file */
    while (done < batch->n_rows) {
        if (!w->cur) PCH_TRY(open_data_file(w, err));
        uint64_t have = pch_lance__file_writer_rows(w->cur);
        uint64_t room = have < w->max_rows ? w->max_rows - have : 0;
        size_t take = batch->n_rows - done;
        if ((uint64_t)take > room) take = (size_t)room;
        if (take > 0) {
            pch_lance_batch sub = { take, batch->n_columns, w->slice };
            for (size_t c = 0; c < s->n_fields; c++) {
                const pch_lance_column *col = &batch->columns[c];
                pch_lance_column *o = &w->slice[c];
                *o = *col;
                o->n_rows = take;
                if (col->validity) o->validity = col->validity + done;
                if (pch_lance_type_is_var(col->type)) o->offsets = col->offsets + done;
                else o->values = col->values + done * row_bytes(col->type);
            }
            PCH_TRY(pch_lance__file_writer_write(w->cur, &sub, err));
            done += take;
        }
        if (pch_lance__file_writer_rows(w->cur) >= w->max_rows) PCH_TRY(finish_data_file(w, err));
    }
    w->failed = false;
    return PCH_OK;
}

/* Build the manifest for the next version on top of the dataset's current state. */
static int build_manifest(pch_lance_writer *w, pch_lance_manifest **out, int *naming_out,
                          pch_error *err)
{
    pch_lance_manifest *base = NULL, *m = NULL;
    int naming = 2, rc;
    uint64_t next_id = 0;
    *out = NULL;
    if (w->opts.mode != PCH_LANCE_CREATE) {
        rc = pch_lance__load_manifest(&base, w->ctx, w->path, 0, &naming, err);
        if (rc == PCH_ENOTFOUND && w->opts.mode == PCH_LANCE_OVERWRITE) {
            rc = PCH_OK;
            naming = 2;
        }
        if (rc < 0) goto done;
    }
    if ((rc = pch_lance__manifest_new(&m, w->ctx, err)) < 0) goto done;
    pch_lance_schema_free(m->schema);
    m->schema = NULL;
    if ((rc = pch_lance_schema_clone(&m->schema, w->schema, err)) < 0) goto done;
    m->version = 1;
    if (base) {
        if (base->version == UINT64_MAX) {
            rc = pch_error_set(err, PCH_ELIMIT, "version number exhausted");
            goto done;
        }
        m->version = base->version + 1;
        if (base->has_max_fragment_id) next_id = (uint64_t)base->max_fragment_id + 1;
        for (size_t i = 0; i < base->n_fragments; i++)
            if (base->fragments[i].id >= next_id) next_id = base->fragments[i].id + 1;
        if (base->has_max_fragment_id) {
            m->has_max_fragment_id = true;
            m->max_fragment_id = base->max_fragment_id;
        }
    }
    if (w->opts.mode == PCH_LANCE_APPEND) {
        if ((rc = pch_lance__schema_check_same(w->schema, base->schema, err)) < 0) goto done;
        if (strcmp(manifest_format(base), w->opts.file_version == PCH_LANCE_FILE_2_0 ? "2.0" : "2.1")) {
            rc = pch_error_set(err, PCH_EEXISTS, "concurrent writer changed the storage version");
            goto done;
        }
        for (size_t i = 0; i < base->n_fragments; i++)
            if ((rc = pch_lance__manifest_add_fragment(m, &base->fragments[i], err)) < 0) goto done;
        m->reader_flags = base->reader_flags;
        m->writer_flags = base->writer_flags;
        m->next_row_id = base->next_row_id;
    }
    {
        size_t nf = w->schema->n_fields;
        int32_t *ids = pch_calloc(w->ctx, nf, sizeof *ids);
        int32_t *cols = pch_calloc(w->ctx, nf, sizeof *cols);
        if (!ids || !cols) {
            pch_free(w->ctx, ids);
            pch_free(w->ctx, cols);
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < nf; i++) {
            ids[i] = w->schema->fields[i].id;
            cols[i] = (int32_t)i;
        }
        for (size_t i = 0; i < w->n_files && rc == PCH_OK; i++) {
            pch_lance_data_file df = { w->files[i].name, ids, nf, cols, nf, 2,
                                       w->opts.file_version == PCH_LANCE_FILE_2_0 ? 0u : 1u,
                                       w->files[i].size, false };
            pch_lance_fragment fr = { next_id, &df, 1, w->files[i].rows, false, false };
            if (next_id > UINT32_MAX) {
                rc = pch_error_set(err, PCH_ELIMIT, "fragment ids exhausted");
                break;
            }
            rc = pch_lance__manifest_add_fragment(m, &fr, err);
            m->has_max_fragment_id = true;
            m->max_fragment_id = (uint32_t)next_id;
            next_id++;
        }
        pch_free(w->ctx, ids);
        pch_free(w->ctx, cols);
        if (rc < 0) goto done;
    }
    {
        int64_t ns = pch_time_now_ns();
        m->ts_seconds = ns / 1000000000;
        m->ts_nanos = (int32_t)(ns % 1000000000);
    }
    if ((rc = pch_lance__manifest_set_str(m, &m->writer_library, "pchronicle", err)) < 0 ||
        (rc = pch_lance__manifest_set_str(m, &m->writer_version, PCH_VERSION_STRING, err)) < 0 ||
        (rc = pch_lance__manifest_set_str(m, &m->format_name, "lance", err)) < 0 ||
        (rc = pch_lance__manifest_set_str(m, &m->format_version,
                                          w->opts.file_version == PCH_LANCE_FILE_2_0 ? "2.0" : "2.1",
                                          err)) < 0)
        goto done;
    *out = m;
    m = NULL;
    *naming_out = naming;
done:
    pch_lance__manifest_free(base);
    pch_lance__manifest_free(m);
    return rc;
}

int pch_lance_writer_commit(pch_lance_writer *w, uint64_t *version_out, pch_error *err)
{
    pch_buf bytes, path;
    pch_lance_manifest *m = NULL;
    int rc = PCH_OK;
    if (version_out) *version_out = 0;
    if (w->committed) return pch_error_set(err, PCH_EINVAL, "writer already committed");
    if (w->failed) return pch_error_set(err, PCH_EINVAL, "writer failed earlier: nothing committed");
    if ((rc = finish_data_file(w, err)) < 0) {
        w->failed = true;
        return rc;
    }
    pch_buf_init(&bytes, w->ctx);
    pch_buf_init(&path, w->ctx);
    /* a dataset on object storage: every data file is uploaded before its manifest */
    for (; w->remote && w->uploaded < w->n_files; w->uploaded++) {
        pch_buf_clear(&path);
        if (data_path(&path, data_root(w), w->files[w->uploaded].name) < 0 ||
            pch_buf_printf(&bytes, "data/%s", w->files[w->uploaded].name) < 0) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
            goto done;
        }
        rc = pch_store_put_file(w->remote, (const char *)bytes.data, (const char *)path.data, 0, err);
        pch_buf_clear(&bytes);
        if (rc < 0) { w->failed = true; goto done; }
    }
    for (int attempt = 0;; attempt++) {
        int naming = 2;
        char name[32];
        pch_lance__manifest_free(m);
        m = NULL;
        if ((rc = build_manifest(w, &m, &naming, err)) < 0) goto done;
        pch_buf_clear(&bytes);
        pch_buf_clear(&path);
        if ((rc = pch_lance__manifest_encode_file(&bytes, m, err)) < 0) goto done;
        pch_lance__manifest_name(name, m->version, naming);
        if (pch_buf_printf(&path, "%s/_versions/%s", w->path, name) < 0) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
            goto done;
        }
        if (w->remote) {
            pch_buf_clear(&path);
            if (pch_buf_printf(&path, "_versions/%s", name) < 0) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto done; }
            rc = pch_store_put(w->remote, (const char *)path.data, bytes.data, bytes.len, PCH_PUT_IF_ABSENT, err);
        } else {
            rc = pch_file_publish_new((const char *)path.data, bytes.data, bytes.len, err);
        }
        if (rc == PCH_OK) break;
        if (rc != PCH_EEXISTS) goto done;
        if (w->opts.mode == PCH_LANCE_CREATE) {
            rc = pch_error_set(err, PCH_EEXISTS, "%s: dataset created concurrently by another writer",
                               w->path);
            goto done;
        }
        if (attempt + 1 >= COMMIT_RETRIES) {
            rc = pch_error_set(err, PCH_EEXISTS,
                               "%s: commit conflict: version %llu taken, gave up after %d attempts",
                               w->path, (unsigned long long)m->version, COMMIT_RETRIES);
            goto done;
        }
        usleep((useconds_t)(1000u << (attempt < 6 ? attempt : 6)));
    }
    w->committed = true;
    if (version_out) *version_out = m->version;
    /* latest_version_hint.json: a hint only (§1.2); a failure here does not undo the commit */
    pch_buf_clear(&bytes);
    pch_buf_clear(&path);
    if (w->remote) {
        if (pch_buf_printf(&bytes, "{\"version\":%llu}", (unsigned long long)m->version) >= 0)
            (void)pch_store_put(w->remote, "_versions/latest_version_hint.json", bytes.data, bytes.len, 0, NULL);
    } else if (pch_buf_printf(&bytes, "{\"version\":%llu}", (unsigned long long)m->version) >= 0 &&
               pch_buf_printf(&path, "%s/_versions/latest_version_hint.json", w->path) >= 0) {
        pch_file_publish((const char *)path.data, bytes.data, bytes.len, NULL);
    }
done:
    pch_lance__manifest_free(m);
    pch_buf_dispose(&bytes);
    pch_buf_dispose(&path);
    return rc;
}

void pch_lance_writer_free(pch_lance_writer *w)
{
    if (!w) return;
    pch_buf p;
    pch_buf_init(&p, w->ctx);
    pch_lance__file_writer_free(w->cur);     /* unlinks an unfinished file */
    if (!w->committed && w->cur_name && data_path(&p, data_root(w), w->cur_name) >= 0)
        unlink((const char *)p.data);
    pch_free(w->ctx, w->cur_name);
    for (size_t i = 0; i < w->n_files; i++) {
        if (!w->committed && data_path(&p, data_root(w), w->files[i].name) >= 0)
            unlink((const char *)p.data);
        if (!w->committed && i < w->uploaded) {   /* uploaded, never referenced: removed */
            pch_error e;
            pch_buf_clear(&p);
            if (pch_buf_printf(&p, "data/%s", w->files[i].name) >= 0) (void)pch_store_delete(w->remote, (const char *)p.data, &e);
        }
        pch_free(w->ctx, w->files[i].name);
    }
    if (w->local) {   /* the staging directory of a dataset on object storage goes whole */
        pch_error e;
        (void)pch_remove_tree(w->local, &e);
        pch_free(w->ctx, w->local);
    }
    pch_store_close(w->remote);
    pch_buf_dispose(&p);
    pch_free(w->ctx, w->files);
    pch_free(w->ctx, w->slice);
    pch_lance_schema_free(w->schema);
    pch_free(w->ctx, w->path);
    pch_free(w->ctx, w);
}

/* ======================================================================= reader */

typedef struct frag_map {
    uint32_t *file_of;     /* per schema field: index into fragment files */
    uint32_t *col_of;      /* per schema field: top-level column inside that file */
    uint64_t rows;
} frag_map;

struct pch_lance_dataset {
    pch_ctx *ctx;
    char *path;
    pch_lance_manifest *m;
    frag_map *maps;        /* one per fragment */
    uint64_t num_rows;
    char file_version[8];
};

uint64_t pch_lance_dataset_version(const pch_lance_dataset *ds) { return ds->m->version; }
uint64_t pch_lance_dataset_num_rows(const pch_lance_dataset *ds) { return ds->num_rows; }
size_t pch_lance_dataset_num_fragments(const pch_lance_dataset *ds) { return ds->m->n_fragments; }
const pch_lance_schema *pch_lance_dataset_schema(const pch_lance_dataset *ds) { return ds->m->schema; }
const char *pch_lance_dataset_file_version(const pch_lance_dataset *ds) { return ds->file_version; }

void pch_lance_dataset_free(pch_lance_dataset *ds)
{
    if (!ds) return;
    if (ds->maps)
        for (size_t i = 0; i < ds->m->n_fragments; i++) {
            pch_free(ds->ctx, ds->maps[i].file_of);
            pch_free(ds->ctx, ds->maps[i].col_of);
        }
    pch_free(ds->ctx, ds->maps);
    pch_lance__manifest_free(ds->m);
    pch_free(ds->ctx, ds->path);
    pch_free(ds->ctx, ds);
}

static int open_file(pch_lance_file **out, const pch_lance_dataset *ds,
                     const pch_lance_data_file *df, pch_error *err)
{
    pch_buf p;
    int rc;
    pch_buf_init(&p, ds->ctx);
    if (data_path(&p, ds->path, df->path) < 0) {
        pch_buf_dispose(&p);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    rc = pch_lance__file_open(out, ds->ctx, (const char *)p.data, df->file_size, err);
    pch_buf_dispose(&p);
    return rc;
}

static int map_fragment(pch_lance_dataset *ds, size_t fi, pch_error *err)
{
    const pch_lance_fragment *fr = &ds->m->fragments[fi];
    const pch_lance_schema *s = ds->m->schema;
    frag_map *mp = &ds->maps[fi];
    if (fr->has_deletion_file)
        return pch_error_set(err, PCH_EUNSUPPORTED,
                             "fragment %llu has a deletion file (deleted rows are not supported)",
                             (unsigned long long)fr->id);
    if (fr->n_files == 0 && fr->physical_rows)
        return pch_error_set(err, PCH_ECORRUPT, "fragment %llu has rows but no data file",
                             (unsigned long long)fr->id);
    for (size_t k = 0; k < fr->n_files; k++) {
        const pch_lance_data_file *df = &fr->files[k];
        if (df->has_base_id)
            return pch_error_set(err, PCH_EUNSUPPORTED, "data file %s lives under another base path",
                                 df->path);
        if (!((df->major == 2 && (df->minor == 0 || df->minor == 1)) ||
              (df->major == 0 && df->minor == 3)))
            return pch_error_set(err, PCH_EUNSUPPORTED, "data file %s has format version %u.%u",
                                 df->path, df->major, df->minor);
    }
    mp->file_of = pch_calloc(ds->ctx, s->n_fields, sizeof *mp->file_of);
    mp->col_of = pch_calloc(ds->ctx, s->n_fields, sizeof *mp->col_of);
    if (!mp->file_of || !mp->col_of) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n_fields; i++) {
        bool found = false;
        for (size_t k = 0; k < fr->n_files && !found; k++) {
            const pch_lance_data_file *df = &fr->files[k];
            for (size_t j = 0; j < df->n_fields; j++)
                if (df->fields[j] == s->fields[i].id && df->column_indices[j] >= 0) {
                    mp->file_of[i] = (uint32_t)k;
                    mp->col_of[i] = (uint32_t)df->column_indices[j];
                    found = true;
                    break;
                }
        }
        if (!found && fr->n_files)
            return pch_error_set(err, PCH_EUNSUPPORTED, "fragment %llu has no data for field '%s'",
                                 (unsigned long long)fr->id, s->fields[i].name);
    }
    mp->rows = fr->physical_rows;
    if (mp->rows == 0 && fr->n_files) {        /* 0 = unknown (§1.5): ask the file */
        pch_lance_file *f;
        PCH_TRY(open_file(&f, ds, &fr->files[0], err));
        mp->rows = pch_lance__file_num_rows(f);
        pch_lance__file_free(f);
    }
    return PCH_OK;
}

int pch_lance_dataset_open(pch_lance_dataset **out, pch_ctx *ctx, const char *path,
                           uint64_t version, pch_error *err)
{
    pch_lance_dataset *ds;
    int rc;
    *out = NULL;
    if (!(ds = pch_calloc(ctx, 1, sizeof *ds))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    ds->ctx = ctx;
    if (!(ds->path = pch_strndup(ctx, path, strlen(path)))) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto fail; }
    if ((rc = pch_lance__load_manifest(&ds->m, ctx, path, version, NULL, err)) < 0) goto fail;
    if (ds->m->reader_flags & ~(uint64_t)SUPPORTED_READER_FLAGS) {
        uint64_t bad = ds->m->reader_flags & ~(uint64_t)SUPPORTED_READER_FLAGS;
        rc = pch_error_set(err, PCH_EUNSUPPORTED, "%s: reader feature flags 0x%llx not supported%s",
                           path, (unsigned long long)bad,
                           (bad & PCH_LANCE_FLAG_BASE_PATHS) ? " (base paths)" : "");
        goto fail;
    }
    if (*ds->m->format_name && strcmp(ds->m->format_name, "lance") != 0) {
        rc = pch_error_set(err, PCH_EUNSUPPORTED, "%s: data format '%s'", path, ds->m->format_name);
        goto fail;
    }
    {
        const char *fv = manifest_format(ds->m);
        if (strcmp(fv, "2.0") != 0 && strcmp(fv, "2.1") != 0) {
            rc = pch_error_set(err, PCH_EUNSUPPORTED, "%s: data storage version '%s' is not supported",
                               path, fv);
            goto fail;
        }
        snprintf(ds->file_version, sizeof ds->file_version, "%s", fv);
    }
    if (!(ds->maps = pch_calloc(ctx, ds->m->n_fragments ? ds->m->n_fragments : 1, sizeof *ds->maps))) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < ds->m->n_fragments; i++) {
        if ((rc = map_fragment(ds, i, err)) < 0) goto fail;
        if (!pch_add_u64(&ds->num_rows, ds->num_rows, ds->maps[i].rows)) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: row count overflows", path);
            goto fail;
        }
    }
    *out = ds;
    return PCH_OK;
fail:
    pch_lance_dataset_free(ds);
    return rc;
}

int pch_lance_dataset_column_bytes(const pch_lance_dataset *ds, size_t field, uint64_t *out,
                                   pch_error *err)
{
    uint64_t sum = 0;
    PCH_ASSERT_ARG(ds && out);
    *out = 0;
    if (field >= ds->m->schema->n_fields)
        return pch_error_set(err, PCH_EINVAL, "field index %zu out of range", field);
    for (size_t i = 0; i < ds->m->n_fragments; i++) {
        const pch_lance_fragment *fr = &ds->m->fragments[i];
        const frag_map *mp = &ds->maps[i];
        pch_lance_file *f;
        if (fr->n_files == 0) continue;
        PCH_TRY(open_file(&f, ds, &fr->files[mp->file_of[field]], err));
        if (!pch_add_u64(&sum, sum, pch_lance__file_column_bytes(f, mp->col_of[field]))) {
            pch_lance__file_free(f);
            return pch_error_set(err, PCH_ECORRUPT, "%s: column bytes overflow", ds->path);
        }
        pch_lance__file_free(f);
    }
    *out = sum;
    return PCH_OK;
}

/* ======================================================================= scanner */

struct pch_lance_scanner {
    pch_lance_dataset *ds;
    size_t *cols;              /* schema indices, projection order */
    size_t n_cols;
    size_t batch_rows;
    size_t frag;               /* current fragment */
    uint64_t row;              /* next row inside it */
    pch_lance_file **files;    /* open files of the current fragment (NULL = not opened) */
    size_t n_files;
    pch_lance_colbuf *bufs;
    pch_lance_column *views;
    pch_lance_batch batch;
    /* row selection (pch_lance_scanner_open_rows): NULL = every row */
    uint64_t *sel;             /* dataset row indices, strictly ascending */
    size_t n_sel;
    size_t sel_pos;            /* next selected row */
    uint64_t frag_base;        /* dataset row index of the current fragment's first row */
};

static void close_files(pch_lance_scanner *sc)
{
    for (size_t i = 0; i < sc->n_files; i++) pch_lance__file_free(sc->files[i]);
    pch_free(sc->ds->ctx, sc->files);
    sc->files = NULL;
    sc->n_files = 0;
}

void pch_lance_scanner_free(pch_lance_scanner *sc)
{
    if (!sc) return;
    pch_ctx *ctx = sc->ds->ctx;
    close_files(sc);
    if (sc->bufs)
        for (size_t i = 0; i < sc->n_cols; i++) pch_lance__colbuf_dispose(&sc->bufs[i]);
    pch_free(ctx, sc->bufs);
    pch_free(ctx, sc->views);
    pch_free(ctx, sc->cols);
    pch_free(ctx, sc->sel);
    pch_free(ctx, sc);
}

int pch_lance_scanner_open(pch_lance_scanner **out, pch_lance_dataset *ds,
                           const size_t *columns, size_t n_columns, size_t batch_rows,
                           pch_error *err)
{
    pch_ctx *ctx = ds->ctx;
    const pch_lance_schema *s = ds->m->schema;
    pch_lance_scanner *sc;
    *out = NULL;
    if (!(sc = pch_calloc(ctx, 1, sizeof *sc))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    sc->ds = ds;
    sc->batch_rows = batch_rows ? batch_rows : DEFAULT_BATCH_ROWS;
    sc->n_cols = columns && n_columns ? n_columns : s->n_fields;
    sc->cols = pch_calloc(ctx, sc->n_cols, sizeof *sc->cols);
    sc->bufs = pch_calloc(ctx, sc->n_cols, sizeof *sc->bufs);
    sc->views = pch_calloc(ctx, sc->n_cols, sizeof *sc->views);
    if (!sc->cols || !sc->bufs || !sc->views) {
        pch_free(ctx, sc->bufs);
        sc->bufs = NULL;
        pch_lance_scanner_free(sc);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < sc->n_cols; i++) {
        size_t c = columns && n_columns ? columns[i] : i;
        if (c >= s->n_fields) {
            pch_free(ctx, sc->bufs);
            sc->bufs = NULL;
            pch_lance_scanner_free(sc);
            return pch_error_set(err, PCH_EINVAL, "column index %zu out of range", c);
        }
        sc->cols[i] = c;
    }
    for (size_t i = 0; i < sc->n_cols; i++)
        pch_lance__colbuf_init(&sc->bufs[i], ctx, s->fields[sc->cols[i]].type);
    sc->batch.columns = sc->views;
    sc->batch.n_columns = sc->n_cols;
    *out = sc;
    return PCH_OK;
}

static int open_fragment(pch_lance_scanner *sc, pch_error *err)
{
    const pch_lance_dataset *ds = sc->ds;
    const pch_lance_fragment *fr = &ds->m->fragments[sc->frag];
    const pch_lance_schema *s = ds->m->schema;
    const frag_map *mp = &ds->maps[sc->frag];
    sc->files = pch_calloc(ds->ctx, fr->n_files ? fr->n_files : 1, sizeof *sc->files);
    if (!sc->files) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    sc->n_files = fr->n_files;
    for (size_t k = 0; k < fr->n_files; k++) {
        pch_lance_file *f;
        PCH_TRY(open_file(&f, ds, &fr->files[k], err));
        sc->files[k] = f;
        if (pch_lance__file_num_rows(f) != mp->rows)
            return pch_error_set(err, PCH_ECORRUPT, "data file %s has %llu rows, fragment %llu says %llu",
                                 fr->files[k].path, (unsigned long long)pch_lance__file_num_rows(f),
                                 (unsigned long long)fr->id, (unsigned long long)mp->rows);
    }
    for (size_t i = 0; i < sc->n_cols; i++) {
        size_t c = sc->cols[i];
        pch_lance_file *f = sc->files[mp->file_of[c]];
        const pch_lance_schema *fs = pch_lance__file_schema(f);
        if (mp->col_of[c] >= pch_lance__file_num_columns(f))
            return pch_error_set(err, PCH_ECORRUPT, "data file %s: column %u of field '%s' out of range",
                                 fr->files[mp->file_of[c]].path, mp->col_of[c], s->fields[c].name);
        if (fs)
            for (size_t j = 0; j < fs->n_fields; j++)
                if (fs->fields[j].id == s->fields[c].id && fs->fields[j].type != s->fields[c].type)
                    return pch_error_set(err, PCH_ECORRUPT,
                                         "data file %s: field '%s' is %s in the file, %s in the manifest",
                                         fr->files[mp->file_of[c]].path, s->fields[c].name,
                                         pch_lance_type_name(fs->fields[j].type),
                                         pch_lance_type_name(s->fields[c].type));
    }
    return PCH_OK;
}

int pch_lance_scanner_open_rows(pch_lance_scanner **out, pch_lance_dataset *ds,
                                const size_t *columns, size_t n_columns,
                                const uint64_t *rows, size_t n_rows, size_t batch_rows,
                                pch_error *err)
{
    pch_lance_scanner *sc;
    size_t bytes;
    *out = NULL;
    PCH_ASSERT_ARG(ds && (rows || n_rows == 0));
    for (size_t i = 0; i < n_rows; i++) {
        if (rows[i] >= ds->num_rows)
            return pch_error_set(err, PCH_EINVAL, "row %llu past %llu rows",
                                 (unsigned long long)rows[i], (unsigned long long)ds->num_rows);
        if (i && rows[i] <= rows[i - 1])
            return pch_error_set(err, PCH_EINVAL, "rows not strictly ascending at index %zu", i);
    }
    PCH_TRY(pch_lance_scanner_open(&sc, ds, columns, n_columns, batch_rows, err));
    if (!pch_mul_size(&bytes, n_rows ? n_rows : 1, sizeof *sc->sel) ||
        !(sc->sel = pch_malloc(ds->ctx, bytes))) {
        pch_lance_scanner_free(sc);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    if (n_rows) memcpy(sc->sel, rows, n_rows * sizeof *sc->sel);
    sc->n_sel = n_rows;
    *out = sc;
    return PCH_OK;
}

/* Read one batch of selected rows: consecutive selected rows are read as one range, so a
** page is decoded once (file_reader keeps the last decoded page per column). */
static int next_selected(pch_lance_scanner *sc, const pch_lance_batch **batch, pch_error *err)
{
    pch_lance_dataset *ds = sc->ds;
    const pch_lance_schema *s = ds->m->schema;
    const frag_map *mp;
    size_t n = 0;
    for (;;) {
        if (sc->sel_pos >= sc->n_sel) { close_files(sc); return PCH_ITEROVER; }
        if (sc->frag >= ds->m->n_fragments)       /* rows were checked against num_rows */
            return pch_error_set(err, PCH_ECORRUPT, "selected row %llu past the fragments",
                                 (unsigned long long)sc->sel[sc->sel_pos]);
        if (sc->sel[sc->sel_pos] - sc->frag_base >= ds->maps[sc->frag].rows) {
            close_files(sc);
            sc->frag_base += ds->maps[sc->frag].rows;   /* sums to num_rows: no overflow */
            sc->frag++;
            continue;
        }
        if (!sc->files) {
            int rc = open_fragment(sc, err);
            if (rc < 0) { close_files(sc); return rc; }
        }
        break;
    }
    mp = &ds->maps[sc->frag];
    while (sc->sel_pos + n < sc->n_sel && n < sc->batch_rows &&
           sc->sel[sc->sel_pos + n] - sc->frag_base < mp->rows)
        n++;
    for (size_t i = 0; i < sc->n_cols; i++) {
        size_t c = sc->cols[i];
        pch_lance_colbuf *cb = &sc->bufs[i];
        pch_lance__colbuf_reset(cb);
        for (size_t k = 0; k < n;) {
            uint64_t start = sc->sel[sc->sel_pos + k] - sc->frag_base;
            size_t run = 1;
            while (k + run < n && sc->sel[sc->sel_pos + k + run] == sc->sel[sc->sel_pos + k] + run) run++;
            PCH_TRY(pch_lance__file_read(sc->files[mp->file_of[c]], mp->col_of[c], s->fields[c].type,
                                         start, run, cb, err));
            k += run;
        }
        if (cb->n_rows != n)
            return pch_error_set(err, PCH_ECORRUPT, "column '%s': decoded %zu rows, wanted %zu",
                                 s->fields[c].name, cb->n_rows, n);
        pch_lance__colbuf_view(cb, &sc->views[i]);
    }
    sc->sel_pos += n;
    sc->batch.n_rows = n;
    *batch = &sc->batch;
    return PCH_OK;
}

int pch_lance_scanner_next(pch_lance_scanner *sc, const pch_lance_batch **batch, pch_error *err)
{
    pch_lance_dataset *ds = sc->ds;
    const pch_lance_schema *s = ds->m->schema;
    *batch = NULL;
    if (sc->sel) return next_selected(sc, batch, err);
    for (;;) {
        if (sc->frag >= ds->m->n_fragments) return PCH_ITEROVER;
        if (sc->row >= ds->maps[sc->frag].rows) {
            close_files(sc);
            sc->frag++;
            sc->row = 0;
            continue;
        }
        if (!sc->files) {
            int rc = open_fragment(sc, err);
            if (rc < 0) { close_files(sc); return rc; }
        }
        break;
    }
    const frag_map *mp = &ds->maps[sc->frag];
    uint64_t left = mp->rows - sc->row;
    size_t n = left < (uint64_t)sc->batch_rows ? (size_t)left : sc->batch_rows;
    for (size_t i = 0; i < sc->n_cols; i++) {
        size_t c = sc->cols[i];
        pch_lance_colbuf *cb = &sc->bufs[i];
        pch_lance__colbuf_reset(cb);
        PCH_TRY(pch_lance__file_read(sc->files[mp->file_of[c]], mp->col_of[c], s->fields[c].type,
                                     sc->row, n, cb, err));
        if (cb->n_rows != n)
            return pch_error_set(err, PCH_ECORRUPT, "column '%s': decoded %zu rows, wanted %zu",
                                 s->fields[c].name, cb->n_rows, n);
        pch_lance__colbuf_view(cb, &sc->views[i]);
    }
    sc->row += n;
    sc->batch.n_rows = n;
    *batch = &sc->batch;
    return PCH_OK;
}
