/* Lance data file writer, formats 2.1 (default) and 2.0 (lance-format.md §2.2 file layout,
** §2.3/§2.4 page encodings in encode_20.c / encode_21.c, §5.3 pitfalls 1-4, 10, 14).
**
**   [page buffers, each at a 64-byte aligned offset, padded with 0x48]
**   [global buffer 0 = FileDescriptor{schema{fields, metadata}, length}]
**   [ColumnMetadata per column][CMO table][GBO table][40-byte footer]
**
** Streaming: each column buffers one page in memory (its rows copied out of the caller's
** batch); a page is encoded and written as soon as it holds max_bytes_per_page bytes, so
** memory is bounded by page size x columns, not by file size. Only the small per-page
** protobuf records (ColumnMetadata.Page) stay in memory until finish. Rows never straddle
** pages; a single value larger than the page size gets a page of its own, and so does a 2.1
** variable-width value too large for a compressed mini-block chunk
** (pch_lance__value_fits_chunk), so that its neighbours keep the mini-block layout. Page
** priority = the file row number of the page's first row.
**
** Parallel page encoding (write options `threads` > 1): a full page is not encoded on the
** caller's thread but handed to a pool of worker threads owned by this writer, while the
** caller goes on copying rows. The page's buffers are swapped into one of 2 x `threads` job
** slots (a ring: job k lives in slot k % slots), so at most 2 x `threads` pages are in flight
** (with one slot per worker the workers idled while the caller filled the next page: 8% of
** the synthetic compact-jsonl import's wall time on two cores);
** when the ring is full the caller takes the oldest job, encoding it itself if no worker
** has started it, and writes it. Jobs are written strictly in the order they were queued
** and a page is encoded exactly as the single-threaded writer does (the encoder depends on
** nothing but the page and the zstd level), so the file is byte-identical whatever the
** thread count. Workers touch only their job (its buffers, its pch_lance_page_out, its
** pch_error); the ring counters and the `done` flags are guarded by the pool mutex. A
** worker's error is reported, with the column name, when its job is written, and latches
** the writer. finish drains the ring before the tail; free stops and joins the workers (a
** job being encoded runs to its end) first. The ctx allocator is then called from the
** workers too (pchronicle/ctx.h: it must be thread-safe).
**
** The file is created with O_EXCL; finish writes the tail and fsyncs; a writer freed
** before finish unlinks its file. A failed write/finish latches the error: the writer only
** accepts pch_lance__file_writer_free afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "lance/lance_write_int.h"

#define DEFAULT_PAGE_BYTES ((uint64_t)8 << 20)
#define MAX_PAGE_BYTES ((uint64_t)1 << 30)
#define MAX_PAGE_ROWS ((size_t)1 << 30)      /* FullZipLayout.num_items is a u32 */
#define BUF_ALIGN 64
#define BUF_PAD 0x48                          /* lance pads between buffers with 'H' */
#define STAGE_FLUSH ((size_t)1 << 20)
#define MAX_THREADS 64u

typedef struct col_state {
    const char *name;         /* borrowed from w->names */
    pch_lance_type type;
    bool nullable;
    unsigned bits;            /* fixed width: bits per value (bool 1) */
    size_t width;             /* fixed width: bytes per row in memory (bool 1) */
    unsigned obits;           /* variable width: offset bits (32/64) */
    size_t rows;              /* rows in the current page */
    size_t n_nulls;
    bool has_validity;        /* validity materialised (first null seen in this page) */
    pch_buf validity;         /* rows bytes, 1 = valid */
    pch_buf values;           /* fixed width values */
    pch_buf offsets;          /* variable width: rows + 1 u64, [0] = 0 */
    pch_buf data;             /* variable width bytes */
    uint64_t first_row;       /* file row of the current page's first row */
    pch_buf pages;            /* serialized ColumnMetadata.pages (field 2) records */
} col_state;

/* One page handed to the pool: its rows (buffers swapped out of the column) and the
** encoder's output. Written by the caller before it is queued, by one encoder while it
** runs, read by the caller once `done` is seen under the pool mutex. */
typedef struct page_job {
    size_t col;               /* index into w->cols (the caller's side only) */
    pch_lance_type type;
    bool fixed;               /* fixed-width type: no offsets */
    uint64_t first_row;
    size_t rows, n_nulls;
    pch_buf validity, values, offsets, data;
    pch_lance_page_out out;   /* own zstd context and scratch */
    int rc;
    pch_error err;
    bool done;                /* guarded by mu */
} page_job;

typedef struct page_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;      /* a job was queued, or stop */
    pthread_cond_t done;      /* a job was encoded */
    pthread_t *threads;
    size_t n_threads;         /* started workers */
    page_job *jobs;           /* ring of n_jobs slots */
    size_t n_jobs;
    uint64_t put, take;       /* jobs queued / started by an encoder; mu */
    uint64_t written;         /* jobs written to the file; caller's thread only */
    bool stop;                /* mu */
    pch_lance_file_version version;
    pch_ctx *ctx;
} page_pool;

struct pch_lance_file_writer {
    pch_ctx *ctx;
    int fd;
    char *path;
    pch_lance_file_version version;
    uint64_t page_bytes;
    uint64_t off;             /* bytes written to the file (incl. staged) */
    uint64_t n_rows;
    size_t n_cols;
    col_state *cols;
    pch_buf names;            /* NUL-separated column names, for messages */
    pch_buf schema_pb;        /* FileDescriptor field 1: Schema message, tag included */
    pch_buf stage;            /* bytes not yet written to fd */
    pch_lance_page_out page;  /* caller-thread encoder (and chunk-fit tests) */
    page_pool *pool;          /* NULL: pages are encoded on the caller's thread */
    int failed;               /* latched error code */
    bool finished;
};

/* ---- I/O ---- */

static int write_all(pch_lance_file_writer *w, const uint8_t *p, size_t n, pch_error *err)
{
    if (pch_write_all(w->fd, p, n) != 0)
        return pch_error_set_sys(err, PCH_EIO, errno, "lance writer: write %s", w->path);
    return PCH_OK;
}

static int stage_flush(pch_lance_file_writer *w, pch_error *err)
{
    int rc = write_all(w, w->stage.data, w->stage.len, err);
    pch_buf_clear(&w->stage);
    return rc;
}

/* Append bytes at the current end of the file (through the stage). */
static int put_bytes(pch_lance_file_writer *w, const uint8_t *p, size_t n, pch_error *err)
{
    if (n >= STAGE_FLUSH) {
        PCH_TRY(stage_flush(w, err));
        PCH_TRY(write_all(w, p, n, err));
    } else {
        if (pch_buf_append(&w->stage, p, n))
            return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
        if (w->stage.len >= STAGE_FLUSH) PCH_TRY(stage_flush(w, err));
    }
    w->off += n;
    return PCH_OK;
}

/* Write a buffer at the next 64-byte aligned offset; *pos_out = that offset. */
static int put_aligned(pch_lance_file_writer *w, const uint8_t *p, size_t n, uint64_t *pos_out,
                       pch_error *err)
{
    static const uint8_t pad[BUF_ALIGN] = {
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD,
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD,
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD,
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD,
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD,
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD,
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD,
        BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD, BUF_PAD };
    size_t fill = (size_t)((BUF_ALIGN - w->off % BUF_ALIGN) % BUF_ALIGN);
    if (fill) PCH_TRY(put_bytes(w, pad, fill, err));
    *pos_out = w->off;
    return n ? put_bytes(w, p, n, err) : PCH_OK;
}

/* ---- protobuf pieces ---- */

/* Encoding{direct{encoding: any_bytes}} as field `field` */
static int put_direct(pch_buf *b, uint32_t field, const uint8_t *any, size_t any_len)
{
    size_t m1, m2;
    PCH_TRY(pch_pb_begin(b, field, &m1));
    PCH_TRY(pch_pb_begin(b, 2, &m2));
    PCH_TRY(pch_pb_put_bytes(b, 1, any, any_len));
    PCH_TRY(pch_pb_end(b, m2));
    return pch_pb_end(b, m1);
}

/* ---- pages ---- */

static void col_reset_page(col_state *c, uint64_t first_row)
{
    c->rows = 0;
    c->n_nulls = 0;
    c->has_validity = false;
    pch_buf_clear(&c->validity);
    pch_buf_clear(&c->values);
    pch_buf_clear(&c->offsets);
    pch_buf_clear(&c->data);
    c->first_row = first_row;
}

static uint64_t col_page_bytes(const col_state *c)
{
    if (c->bits) return c->values.len;
    return c->data.len + (uint64_t)c->rows * (c->obits / 8);
}

static void page_in_of(pch_lance_page_in *in, pch_lance_type type, bool fixed, size_t rows,
                       size_t n_nulls, const pch_buf *validity, const pch_buf *values,
                       const pch_buf *offsets, const pch_buf *data)
{
    static const uint8_t empty[8];
    memset(in, 0, sizeof(*in));
    in->type = type;
    in->n_rows = rows;
    in->n_nulls = n_nulls;
    in->validity = n_nulls ? validity->data : NULL;
    in->values = values->data ? values->data : empty;
    in->offsets = fixed ? NULL : (const uint64_t *)(void *)offsets->data;
    in->data = data->data ? data->data : empty;
}

static int encode_page(pch_lance_file_version v, pch_lance_page_out *o,
                       const pch_lance_page_in *in, pch_error *err)
{
    return v == PCH_LANCE_FILE_2_0 ? pch_lance__encode_page_20(o, in, err)
                                   : pch_lance__encode_page_21(o, in, err);
}

/* Write an encoded page of column c (rows starting at file row first_row) and record it. */
static int emit_page(pch_lance_file_writer *w, col_state *c, const pch_lance_page_out *o,
                     size_t rows, uint64_t first_row, pch_error *err)
{
    uint64_t pos[PCH_LANCE_PAGE_MAX_BUFS], len[PCH_LANCE_PAGE_MAX_BUFS];
    size_t m;
    int rc;
    for (size_t i = 0; i < o->n_bufs; i++) {
        PCH_TRY(put_aligned(w, o->bufs[i].data, o->bufs[i].len, &pos[i], err));
        len[i] = o->bufs[i].len;
    }
    /* ColumnMetadata.Page{1 offsets, 2 sizes, 3 length, 4 encoding, 5 priority} */
    rc = pch_pb_begin(&c->pages, 2, &m);
    if (rc == 0) rc = pch_pb_put_packed_u64(&c->pages, 1, pos, o->n_bufs);
    if (rc == 0) rc = pch_pb_put_packed_u64(&c->pages, 2, len, o->n_bufs);
    if (rc == 0) rc = pch_pb_put_u64_nz(&c->pages, 3, rows);
    if (rc == 0) rc = put_direct(&c->pages, 4, o->any.data, o->any.len);
    if (rc == 0) rc = pch_pb_put_u64_nz(&c->pages, 5, first_row);
    if (rc == 0) rc = pch_pb_end(&c->pages, m);
    if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    return PCH_OK;
}

/* ---- the page pool ---- */

static void job_run(const page_pool *p, page_job *j)
{
    pch_lance_page_in in;
    page_in_of(&in, j->type, j->fixed, j->rows, j->n_nulls, &j->validity, &j->values,
               &j->offsets, &j->data);
    memset(&j->err, 0, sizeof(j->err));
    j->rc = encode_page(p->version, &j->out, &in, &j->err);
}

static void *worker_main(void *arg)
{
    page_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        page_job *j;
        while (!p->stop && p->take == p->put) pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        j = &p->jobs[p->take++ % p->n_jobs];
        pthread_mutex_unlock(&p->mu);
        job_run(p, j);
        pthread_mutex_lock(&p->mu);
        j->done = true;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void jobs_dispose(page_pool *p)
{
    for (size_t i = 0; p->jobs && i < p->n_jobs; i++) {
        page_job *j = &p->jobs[i];
        pch_buf_dispose(&j->validity);
        pch_buf_dispose(&j->values);
        pch_buf_dispose(&j->offsets);
        pch_buf_dispose(&j->data);
        pch_lance__page_out_dispose(&j->out);
    }
    pch_free(p->ctx, p->jobs);
    pch_free(p->ctx, p->threads);
}

/* Stop and join the workers, then release the pool (jobs not yet written are dropped). */
static void pool_free(page_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    jobs_dispose(p);
    pch_free(p->ctx, p);
}

/* Start a pool of n workers with 2n job slots for w. Any failure (memory, pthread) leaves
** w->pool NULL: the writer then encodes on the caller's thread, producing the same bytes. */
static void pool_start(pch_lance_file_writer *w, size_t n)   /* n workers, 2n slots */
{
    page_pool *p = pch_calloc(w->ctx, 1, sizeof(*p));
    bool mu = false, work = false, done = false;
    if (!p) return;
    p->ctx = w->ctx;
    p->version = w->version;
    p->n_jobs = 2 * n;
    p->jobs = pch_calloc(w->ctx, p->n_jobs, sizeof(page_job));
    p->threads = pch_calloc(w->ctx, n, sizeof(pthread_t));
    if (!p->jobs || !p->threads) goto fail;
    for (size_t i = 0; i < p->n_jobs; i++) {
        page_job *j = &p->jobs[i];
        pch_buf_init(&j->validity, w->ctx);
        pch_buf_init(&j->values, w->ctx);
        pch_buf_init(&j->offsets, w->ctx);
        pch_buf_init(&j->data, w->ctx);
        pch_lance__page_out_init(&j->out, w->ctx, w->page.zstd_level);
        j->out.page_dict = w->page.page_dict;
    }
    if (!(mu = pthread_mutex_init(&p->mu, NULL) == 0) ||
        !(work = pthread_cond_init(&p->work, NULL) == 0) ||
        !(done = pthread_cond_init(&p->done, NULL) == 0))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) break;
        p->n_threads++;
    }
    if (p->n_threads == 0) goto fail;
    w->pool = p;
    return;
fail:
    if (done) pthread_cond_destroy(&p->done);
    if (work) pthread_cond_destroy(&p->work);
    if (mu) pthread_mutex_destroy(&p->mu);
    jobs_dispose(p);
    pch_free(w->ctx, p);
}

/* Wait for the oldest queued job (encoding unstarted jobs here meanwhile rather than
** idling), then write it. A worker's error is returned here, prefixed with the column. */
static int pool_write_oldest(pch_lance_file_writer *w, pch_error *err)
{
    page_pool *p = w->pool;
    page_job *j = &p->jobs[p->written % p->n_jobs];
    col_state *c = &w->cols[j->col];

    pthread_mutex_lock(&p->mu);
    while (!j->done) {
        if (p->take < p->put) {
            page_job *h = &p->jobs[p->take++ % p->n_jobs];
            pthread_mutex_unlock(&p->mu);
            job_run(p, h);
            pthread_mutex_lock(&p->mu);
            h->done = true;
        } else {
            pthread_cond_wait(&p->done, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (j->rc) {
        if (err) *err = j->err;
        pch_error_prefix(err, "column '%s' page at row %llu", c->name,
                         (unsigned long long)j->first_row);
        return j->rc;
    }
    PCH_TRY(emit_page(w, c, &j->out, j->rows, j->first_row, err));
    p->written++;
    return PCH_OK;
}

/* Write every queued page, in order. */
static int pool_drain(pch_lance_file_writer *w, pch_error *err)
{
    while (w->pool && w->pool->written < w->pool->put) PCH_TRY(pool_write_oldest(w, err));
    return PCH_OK;
}

static void swap_buf(pch_buf *a, pch_buf *b)
{
    pch_buf t = *a;
    *a = *b;
    *b = t;
}

/* Queue the page of column c: its buffers trade places with the free slot's (cleared). */
static int pool_submit(pch_lance_file_writer *w, col_state *c, pch_error *err)
{
    page_pool *p = w->pool;
    page_job *j;
    if (p->put - p->written == p->n_jobs) PCH_TRY(pool_write_oldest(w, err));
    j = &p->jobs[p->put % p->n_jobs];          /* written, not started: ours alone */
    j->col = (size_t)(c - w->cols);
    j->type = c->type;
    j->fixed = c->bits != 0;
    j->first_row = c->first_row;
    j->rows = c->rows;
    j->n_nulls = c->n_nulls;
    j->rc = PCH_OK;
    swap_buf(&j->validity, &c->validity);
    swap_buf(&j->values, &c->values);
    swap_buf(&j->offsets, &c->offsets);
    swap_buf(&j->data, &c->data);
    pthread_mutex_lock(&p->mu);
    j->done = false;
    p->put++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return PCH_OK;
}

static int flush_page(pch_lance_file_writer *w, col_state *c, pch_error *err)
{
    pch_lance_page_in in;
    int rc;

    if (c->rows == 0) return PCH_OK;
    if (w->pool) {
        PCH_TRY(pool_submit(w, c, err));
    } else {
        page_in_of(&in, c->type, c->bits != 0, c->rows, c->n_nulls, &c->validity, &c->values,
                   &c->offsets, &c->data);
        rc = encode_page(w->version, &w->page, &in, err);
        if (rc) {
            pch_error_prefix(err, "column '%s' page at row %llu", c->name,
                             (unsigned long long)c->first_row);
            return rc;
        }
        PCH_TRY(emit_page(w, c, &w->page, c->rows, c->first_row, err));
    }
    col_reset_page(c, c->first_row + c->rows);
    return PCH_OK;
}

/* ---- open / free ---- */

void pch_lance__file_writer_free(pch_lance_file_writer *w)
{
    if (!w) return;
    pool_free(w->pool);                       /* joins the workers before anything goes */
    w->pool = NULL;
    if (w->fd >= 0) close(w->fd);
    if (!w->finished && w->path) unlink(w->path);
    for (size_t i = 0; w->cols && i < w->n_cols; i++) {
        col_state *c = &w->cols[i];
        pch_buf_dispose(&c->validity);
        pch_buf_dispose(&c->values);
        pch_buf_dispose(&c->offsets);
        pch_buf_dispose(&c->data);
        pch_buf_dispose(&c->pages);
    }
    pch_free(w->ctx, w->cols);
    pch_free(w->ctx, w->path);
    pch_buf_dispose(&w->names);
    pch_buf_dispose(&w->schema_pb);
    pch_buf_dispose(&w->stage);
    pch_lance__page_out_dispose(&w->page);
    pch_free(w->ctx, w);
}

int pch_lance__file_writer_open(pch_lance_file_writer **out, pch_ctx *ctx, const char *path,
                                const pch_lance_schema *schema,
                                const pch_lance_write_options *opts, pch_error *err)
{
    pch_lance_file_writer *w;
    size_t plen, m, *name_off = NULL;
    int rc = PCH_OK, zl;
    unsigned threads = opts && opts->version >= 2 ? opts->threads : 0;

    PCH_ASSERT_ARG(out && path && schema);
    *out = NULL;
    /* version 1 had no `threads` field, version 2 no `page_dictionary` */
    if (opts && (opts->version < 1 || opts->version > PCH_LANCE_WRITE_OPTIONS_VERSION))
        return pch_error_set(err, PCH_EINVAL, "lance writer: unknown write options version %u",
                             opts->version);
    if (opts && opts->file_version != PCH_LANCE_FILE_2_1 && opts->file_version != PCH_LANCE_FILE_2_0)
        return pch_error_set(err, PCH_EUNSUPPORTED, "lance writer: unknown file version %d",
                             (int)opts->file_version);
    if (schema->n_fields == 0)
        return pch_error_set(err, PCH_EINVAL, "lance writer: schema has no fields");
    for (size_t i = 0; i < schema->n_fields; i++) {
        pch_lance_type t = schema->fields[i].type;
        if (pch_lance__type_bits(t) == 0 && pch_lance__type_offset_bits(t) == 0)
            return pch_error_set(err, PCH_EUNSUPPORTED, "lance writer: field '%s' has unknown type %d",
                                 schema->fields[i].name, (int)t);
    }

    w = pch_calloc(ctx, 1, sizeof(*w));
    if (!w) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    w->ctx = ctx;
    w->fd = -1;
    pch_buf_init(&w->names, ctx);
    pch_buf_init(&w->schema_pb, ctx);
    pch_buf_init(&w->stage, ctx);
    zl = opts ? opts->zstd_level : 0;
    pch_lance__page_out_init(&w->page, ctx, zl == 0 ? 3 : zl < 0 ? -1 : zl);
    w->version = opts ? opts->file_version : PCH_LANCE_FILE_2_1;
    w->page.page_dict = opts && opts->version >= 3 && opts->page_dictionary &&
                        w->version == PCH_LANCE_FILE_2_1;
    w->page_bytes = opts && opts->max_bytes_per_page ? opts->max_bytes_per_page : DEFAULT_PAGE_BYTES;
    if (w->page_bytes > MAX_PAGE_BYTES) w->page_bytes = MAX_PAGE_BYTES;

    plen = strlen(path);
    w->path = pch_malloc(ctx, plen + 1);
    w->n_cols = schema->n_fields;
    w->cols = pch_calloc(ctx, w->n_cols, sizeof(col_state));
    name_off = pch_calloc(ctx, w->n_cols, sizeof(size_t));
    if (!w->path || !w->cols || !name_off) {
        rc = pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
        goto done;
    }
    memcpy(w->path, path, plen + 1);

    for (size_t i = 0; i < w->n_cols; i++) {
        const pch_lance_field *f = &schema->fields[i];
        col_state *c = &w->cols[i];
        name_off[i] = w->names.len;
        if (pch_buf_append(&w->names, f->name, strlen(f->name) + 1)) {
            rc = pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
            goto done;
        }
        c->type = f->type;
        c->nullable = f->nullable;
        c->bits = pch_lance__type_bits(f->type);
        c->width = c->bits == 1 ? 1 : c->bits / 8;
        c->obits = pch_lance__type_offset_bits(f->type);
        pch_buf_init(&c->validity, ctx);
        pch_buf_init(&c->values, ctx);
        pch_buf_init(&c->offsets, ctx);
        pch_buf_init(&c->data, ctx);
        pch_buf_init(&c->pages, ctx);
    }
    for (size_t i = 0; i < w->n_cols; i++)
        w->cols[i].name = (const char *)w->names.data + name_off[i];

    /* FileDescriptor.schema (field 1): Schema{1 fields, 5 metadata} */
    rc = pch_pb_begin(&w->schema_pb, 1, &m);
    if (rc == 0) rc = pch_lance__schema_encode_fields(&w->schema_pb, 1, schema);
    if (rc == 0) rc = pch_lance__schema_encode_metadata(&w->schema_pb, 5, schema);
    if (rc == 0) rc = pch_pb_end(&w->schema_pb, m);
    if (rc) {
        rc = pch_error_set(err, rc, "lance writer: cannot encode the schema");
        goto done;
    }

    w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int e = errno;
        pch_free(ctx, w->path);
        w->path = NULL;                       /* not ours: never unlink it */
        rc = pch_error_set_sys(err, e == EEXIST ? PCH_EEXISTS : PCH_EIO, e,
                               "lance writer: create %s", path);
        goto done;
    }
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > (long)MAX_THREADS ? MAX_THREADS : (unsigned)n;
    }
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > 1) pool_start(w, threads);
done:
    pch_free(ctx, name_off);
    if (rc) {
        pch_lance__file_writer_free(w);
        return rc;
    }
    *out = w;
    return PCH_OK;
}

/* ---- write ---- */

static int oom(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory"); }

/* Make sure validity exists for the rows already in the page (all valid so far). */
static int col_materialise_validity(col_state *c)
{
    if (c->has_validity) return PCH_OK;
    PCH_TRY(pch_buf_reserve(&c->validity, c->rows + 64));
    memset(c->validity.data, 1, c->rows);
    c->validity.len = c->rows;
    c->validity.data[c->rows] = 0;
    c->has_validity = true;
    return PCH_OK;
}

static int append_fixed(pch_lance_file_writer *w, col_state *c, const pch_lance_column *col,
                        pch_error *err)
{
    size_t r = 0, n = col->n_rows;
    while (r < n) {
        uint64_t used = col_page_bytes(c), cap;
        size_t k, base;
        if (used >= w->page_bytes || c->rows >= MAX_PAGE_ROWS) {
            PCH_TRY(flush_page(w, c, err));
            continue;
        }
        cap = (w->page_bytes - used) / c->width;
        if (cap == 0) cap = 1;
        if (cap > MAX_PAGE_ROWS - c->rows) cap = MAX_PAGE_ROWS - c->rows;
        k = (size_t)(cap < n - r ? cap : n - r);
        base = c->values.len;
        if (pch_buf_append(&c->values, col->values + r * c->width, k * c->width)) return oom(err);
        if (c->bits == 1)                                     /* bools: normalise to 0/1 */
            for (size_t j = 0; j < k; j++) c->values.data[base + j] = c->values.data[base + j] != 0;
        if (col->validity) {
            size_t nulls = 0;
            for (size_t j = 0; j < k; j++) nulls += col->validity[r + j] == 0;
            if (nulls && col_materialise_validity(c)) return oom(err);
            if (c->has_validity) {
                size_t vb = c->validity.len;
                if (pch_buf_reserve(&c->validity, k)) return oom(err);
                for (size_t j = 0; j < k; j++) {
                    uint8_t v = col->validity[r + j] != 0;
                    c->validity.data[vb + j] = v;
                    if (!v) memset(c->values.data + base + j * c->width, 0, c->width);
                }
                c->validity.len += k;
                c->validity.data[c->validity.len] = 0;
            }
            c->n_nulls += nulls;
        } else if (c->has_validity) {
            size_t vb = c->validity.len;
            if (pch_buf_reserve(&c->validity, k)) return oom(err);
            memset(c->validity.data + vb, 1, k);
            c->validity.len += k;
            c->validity.data[c->validity.len] = 0;
        }
        c->rows += k;
        r += k;
    }
    if (col_page_bytes(c) >= w->page_bytes) PCH_TRY(flush_page(w, c, err));
    return PCH_OK;
}

static int append_var(pch_lance_file_writer *w, col_state *c, const pch_lance_column *col,
                      pch_error *err)
{
    uint64_t ow = c->obits / 8;
    for (size_t r = 0; r < col->n_rows; r++) {
        bool valid = !col->validity || col->validity[r];
        uint64_t len = valid ? col->offsets[r + 1] - col->offsets[r] : 0, end;
        bool alone = false;
        if (len > PCH_LANCE_CHUNK_SAFE_VALUE && w->version == PCH_LANCE_FILE_2_1 &&
            !w->page.page_dict)       /* a page dictionary takes values of any size */
            alone = !pch_lance__value_fits_chunk(&w->page, col->data + col->offsets[r], (size_t)len);
        if (c->rows > 0 && (alone || col_page_bytes(c) + len + ow > w->page_bytes ||
                            c->rows >= MAX_PAGE_ROWS))
            PCH_TRY(flush_page(w, c, err));
        if (c->rows == 0 && pch_buf_put_le64(&c->offsets, 0)) return oom(err);
        if (!valid) {
            if (col_materialise_validity(c)) return oom(err);
            c->n_nulls++;
        }
        if (c->has_validity && pch_buf_putc(&c->validity, valid ? 1 : 0)) return oom(err);
        if (len && pch_buf_append(&c->data, col->data + col->offsets[r], (size_t)len)) return oom(err);
        end = c->data.len;
        if (pch_buf_put_le64(&c->offsets, end)) return oom(err);
        c->rows++;
        if (alone) PCH_TRY(flush_page(w, c, err));  /* too large for a mini-block chunk */
    }
    if (col_page_bytes(c) >= w->page_bytes) PCH_TRY(flush_page(w, c, err));
    return PCH_OK;
}

/* Whole-batch validation before anything is copied: a rejected batch changes nothing. */
static int validate_batch(const pch_lance_file_writer *w, const pch_lance_batch *b, pch_error *err)
{
    if (b->n_columns != w->n_cols)
        return pch_error_set(err, PCH_EINVAL, "lance writer: batch has %zu columns, schema %zu",
                             b->n_columns, w->n_cols);
    for (size_t i = 0; i < w->n_cols; i++) {
        const col_state *c = &w->cols[i];
        const pch_lance_column *col = &b->columns[i];
        if (col->type != c->type)
            return pch_error_set(err, PCH_EINVAL, "lance writer: column '%s': batch type %d, schema type %d",
                                 c->name, (int)col->type, (int)c->type);
        if (col->n_rows != b->n_rows)
            return pch_error_set(err, PCH_EINVAL, "lance writer: column '%s': %zu rows, batch %zu",
                                 c->name, col->n_rows, b->n_rows);
        if (b->n_rows == 0) continue;
        if (!c->nullable && col->validity)
            for (size_t r = 0; r < col->n_rows; r++)
                if (!col->validity[r])
                    return pch_error_set(err, PCH_EINVAL,
                                         "lance writer: column '%s' row %zu: null in a non-nullable field",
                                         c->name, r);
        if (c->bits) {
            if (!col->values)
                return pch_error_set(err, PCH_EINVAL, "lance writer: column '%s': no values", c->name);
        } else {
            if (!col->offsets || (!col->data && col->offsets[col->n_rows] != col->offsets[0]))
                return pch_error_set(err, PCH_EINVAL, "lance writer: column '%s': no offsets/data", c->name);
            for (size_t r = 0; r < col->n_rows; r++) {
                if (col->offsets[r + 1] < col->offsets[r])
                    return pch_error_set(err, PCH_EINVAL,
                                         "lance writer: column '%s' row %zu: offsets decrease", c->name, r);
                if (c->obits == 32 && col->offsets[r + 1] - col->offsets[r] > UINT32_MAX &&
                    (!col->validity || col->validity[r]))
                    return pch_error_set(err, PCH_ELIMIT,
                                         "lance writer: column '%s' row %zu: value over 4 GiB in a 32-bit offset type",
                                         c->name, r);
            }
        }
    }
    return PCH_OK;
}

int pch_lance__file_writer_write(pch_lance_file_writer *w, const pch_lance_batch *batch,
                                 pch_error *err)
{
    int rc;
    PCH_ASSERT_ARG(w && batch);
    if (w->finished || w->failed)
        return pch_error_set(err, PCH_EINVAL, "lance writer: %s", w->finished ? "already finished"
                                                                            : "an earlier error stopped this writer");
    PCH_TRY(validate_batch(w, batch, err));
    if (batch->n_rows == 0) return PCH_OK;
    for (size_t i = 0; i < w->n_cols; i++) {
        col_state *c = &w->cols[i];
        rc = c->bits ? append_fixed(w, c, &batch->columns[i], err)
                     : append_var(w, c, &batch->columns[i], err);
        if (rc) {
            w->failed = rc;
            return rc;
        }
    }
    w->n_rows += batch->n_rows;
    return PCH_OK;
}

uint64_t pch_lance__file_writer_rows(const pch_lance_file_writer *w)
{
    return w ? w->n_rows : 0;
}

/* ---- finish ---- */

static int finish_tail(pch_lance_file_writer *w, pch_error *err)
{
    pch_buf cm, any, ce;
    uint64_t gb_pos, gb_len, cm_start, cmo_start, gbo_start;
    uint64_t *cmo = NULL;
    uint8_t footer[40];
    int rc = PCH_OK;

    pch_buf_init(&cm, w->ctx);
    pch_buf_init(&any, w->ctx);
    pch_buf_init(&ce, w->ctx);
    for (size_t i = 0; i < w->n_cols; i++)
        if ((rc = flush_page(w, &w->cols[i], err))) goto done;
    if ((rc = pool_drain(w, err))) goto done;

    /* global buffer 0: FileDescriptor{1 schema, 2 length} */
    if (pch_buf_append(&cm, w->schema_pb.data, w->schema_pb.len) ||
        pch_pb_put_u64_nz(&cm, 2, w->n_rows)) {
        rc = oom(err);
        goto done;
    }
    if ((rc = put_aligned(w, cm.data, cm.len, &gb_pos, err))) goto done;
    gb_len = cm.len;

    /* column-level encoding: Any{"/lance.encodings.ColumnEncoding", {values: Empty}} */
    pch_buf_clear(&cm);
    if (pch_buf_append(&ce, "\x0a\x00", 2) ||
        pch_lance__pb_any(&any, "/lance.encodings.ColumnEncoding", &ce)) {
        rc = oom(err);
        goto done;
    }
    cmo = pch_calloc(w->ctx, w->n_cols, 2 * sizeof(uint64_t));
    if (!cmo) {
        rc = oom(err);
        goto done;
    }
    cm_start = w->off;
    for (size_t i = 0; i < w->n_cols; i++) {
        pch_buf_clear(&cm);
        if (put_direct(&cm, 1, any.data, any.len) ||
            pch_buf_append(&cm, w->cols[i].pages.data, w->cols[i].pages.len)) {
            rc = oom(err);
            goto done;
        }
        cmo[2 * i] = w->off;
        cmo[2 * i + 1] = cm.len;
        if ((rc = put_bytes(w, cm.data, cm.len, err))) goto done;
    }
    cmo_start = w->off;
    pch_buf_clear(&cm);
    for (size_t i = 0; i < 2 * w->n_cols; i++)
        if (pch_buf_put_le64(&cm, cmo[i])) { rc = oom(err); goto done; }
    gbo_start = cmo_start + cm.len;
    if (pch_buf_put_le64(&cm, gb_pos) || pch_buf_put_le64(&cm, gb_len)) { rc = oom(err); goto done; }
    pch_store_le64(footer, cm_start);
    pch_store_le64(footer + 8, cmo_start);
    pch_store_le64(footer + 16, gbo_start);
    pch_store_le32(footer + 24, 1);
    pch_store_le32(footer + 28, (uint32_t)w->n_cols);
    if (w->version == PCH_LANCE_FILE_2_0) {                   /* §5.3.1: 2.0 footer is 0.3 */
        pch_store_le16(footer + 32, 0);
        pch_store_le16(footer + 34, 3);
    } else {
        pch_store_le16(footer + 32, 2);
        pch_store_le16(footer + 34, 1);
    }
    memcpy(footer + 36, "LANC", 4);
    if (pch_buf_append(&cm, footer, sizeof(footer))) { rc = oom(err); goto done; }
    if ((rc = put_bytes(w, cm.data, cm.len, err))) goto done;
    if ((rc = stage_flush(w, err))) goto done;
    if (fsync(w->fd) != 0) {
        rc = pch_error_set_sys(err, PCH_EIO, errno, "lance writer: fsync %s", w->path);
        goto done;
    }
done:
    pch_free(w->ctx, cmo);
    pch_buf_dispose(&cm);
    pch_buf_dispose(&any);
    pch_buf_dispose(&ce);
    return rc;
}

int pch_lance__file_writer_finish(pch_lance_file_writer *w, uint64_t *rows_out,
                                  uint64_t *size_out, pch_error *err)
{
    int rc;
    PCH_ASSERT_ARG(w);
    if (rows_out) *rows_out = 0;
    if (size_out) *size_out = 0;
    if (w->finished || w->failed)
        return pch_error_set(err, PCH_EINVAL, "lance writer: %s", w->finished ? "already finished"
                                                                            : "an earlier error stopped this writer");
    rc = finish_tail(w, err);
    pool_free(w->pool);                       /* every page is written: release the workers */
    w->pool = NULL;
    if (rc == 0) {
        int cr = close(w->fd);
        w->fd = -1;
        if (cr != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "lance writer: close %s", w->path);
    }
    if (rc) {
        w->failed = rc;
        return rc;
    }
    w->finished = true;
    if (rows_out) *rows_out = w->n_rows;
    if (size_out) *size_out = w->off;
    return PCH_OK;
}
