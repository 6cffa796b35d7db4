/* Lance data file reader, formats 2.0 and 2.1 (lance-format.md §2.1–§2.4, Appendix A, D).
** Open: read the 40-byte footer, check magic and version ((0,3) → 2.0, (2,1) → 2.1, all
** else unsupported), check column_meta_start <= cmo <= gbo <= size-40 and both offset
** tables, read the metadata region [min(global buffer 0, column_meta_start), size-40) once,
** decode global buffer 0 (FileDescriptor: schema + length) and every ColumnMetadata (pages,
** buffer positions/sizes, page encodings), all validated before any value is decoded.
** Read: pread only the buffers of the pages overlapping the requested rows (found by binary
** search), decode each page with decode_v20.c / decode_v21.c, copy the requested rows out in
** bulk. The last decoded page of each column stays cached, so a scan in batches smaller than
** a page decodes every page once (memory: one decoded page per column).
** Invariants: every page buffer lies inside [0, column_meta_start); page lengths add up to
** FileDescriptor.length; all counts are bounded by pch_limits before allocation. */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/rfile.h"
#include "lance/lance_read_int.h"

#define FOOTER_LEN 40
#define MAX_PAGE_BUFFERS 64

typedef struct lpage {
    uint64_t row0, n_rows;
    uint64_t *buf_off, *buf_len;
    size_t n_bufs;
    const uint8_t *enc;     /* page encoding: Any.value bytes (in meta) */
    size_t enc_len;
} lpage;

typedef struct lcolumn {
    lpage *pages;
    size_t n_pages;
    /* the last decoded page, kept so that consecutive reads inside one page (scanner
    ** batches smaller than a page) decode it once; bounded by one page per column */
    pch_lance_colbuf cache;
    bool cache_init;          /* cache initialised (type set) */
    bool cache_valid;         /* cache holds page cache_page */
    size_t cache_page;
} lcolumn;

struct pch_lance_file {
    pch_ctx *ctx;
    pch_rfile *fd;          /* a local file or an object (io/rfile.h) */
    uint64_t size;
    bool v21;
    uint64_t n_rows;
    uint32_t n_columns;
    pch_lance_schema *schema;
    uint8_t *meta;          /* metadata region, owns the encoding bytes */
    size_t meta_len;
    lcolumn *cols;
    char path[256];         /* for messages (truncated) */
};

/* Bytes this process read from Lance data files (pch_lance_bytes_read): what a query
** costs in I/O, reported by `pchronicle sql --stats`. */
static _Atomic uint64_t g_bytes_read;

uint64_t pch_lance_bytes_read(void) { return g_bytes_read; }

static int pread_all(pch_rfile *fd, uint8_t *p, size_t n, uint64_t off, const char *path, pch_error *err)
{
    g_bytes_read += n;
    int rc = pch_rfile_pread(fd, p, n, off, err);
    if (rc == PCH_ECORRUPT) return pch_error_set(err, PCH_ECORRUPT, "lance: %s: unexpected end of file", path);
    return rc < 0 ? pch_error_prefix(err, "lance: read %s", path) : PCH_OK;
}

void pch_lance__file_free(pch_lance_file *f)
{
    size_t c, p;
    if (!f) return;
    pch_rfile_close(f->fd);
    if (f->cols) {
        for (c = 0; c < f->n_columns; c++) {
            for (p = 0; p < f->cols[c].n_pages; p++) {
                pch_free(f->ctx, f->cols[c].pages[p].buf_off);
                pch_free(f->ctx, f->cols[c].pages[p].buf_len);
            }
            if (f->cols[c].cache_init) pch_lance__colbuf_dispose(&f->cols[c].cache);
            pch_free(f->ctx, f->cols[c].pages);
        }
        pch_free(f->ctx, f->cols);
    }
    pch_lance_schema_free(f->schema);
    pch_free(f->ctx, f->meta);
    pch_free(f->ctx, f);
}

uint64_t pch_lance__file_num_rows(const pch_lance_file *f) { return f->n_rows; }
const char *pch_lance__file_version(const pch_lance_file *f) { return f->v21 ? "2.1" : "2.0"; }
const pch_lance_schema *pch_lance__file_schema(const pch_lance_file *f) { return f->schema; }
uint32_t pch_lance__file_num_columns(const pch_lance_file *f) { return f->n_columns; }

/* FileDescriptor {1 Schema {1 rep Field, 5 map metadata}, 2 u64 length}. */
static int parse_descriptor(pch_lance_file *f, const uint8_t *p, size_t n, pch_error *err)
{
    pch_rd r = pch_rd_make(p, n), rs;
    pch_pb_field fd, fs;
    bool have_schema = false;
    int rc;

    PCH_TRY(pch_lance_schema_new(&f->schema, f->ctx, err));
    while ((rc = pch_pb_next(&r, &fd, "lance: file descriptor", err)) == 1) {
        if (fd.num == 2 && fd.wire == PCH_PB_VARINT) f->n_rows = fd.v;
        if (fd.num != 1 || fd.wire != PCH_PB_LEN) continue;
        have_schema = true;
        rs = pch_rd_make(fd.ptr, fd.len);
        while ((rc = pch_pb_next(&rs, &fs, "lance: file schema", err)) == 1) {
            if (fs.wire != PCH_PB_LEN) continue;
            if (fs.num == 1) PCH_TRY(pch_lance__schema_decode_field(f->schema, fs.ptr, fs.len, err));
            else if (fs.num == 5) PCH_TRY(pch_lance__schema_decode_metadata(f->schema, fs.ptr, fs.len, err));
        }
        if (rc < 0) return rc;
    }
    if (rc < 0) return rc;
    if (!have_schema) return pch_error_set(err, PCH_ECORRUPT, "lance: %s: file descriptor without schema", f->path);
    return PCH_OK;
}

/* Encoding {2 direct {1 bytes Any {1 type_url, 2 value}}} → Any.value of type `url`. */
static int unwrap_encoding(const uint8_t *p, size_t n, const char *url, const uint8_t **out,
                           size_t *out_len, const char *where, pch_error *err)
{
    pch_pb_field f, g, u, v;
    int rc;
    if ((rc = pch_lance__pb_find(p, n, 2, &f, where, err)) <= 0) {
        if (rc < 0) return rc;
        if ((rc = pch_lance__pb_find(p, n, 1, &f, where, err)) < 0) return rc;
        return pch_error_set(err, rc ? PCH_EUNSUPPORTED : PCH_ECORRUPT, "%s: %s", where,
                             rc ? "deferred (indirect) encoding" : "no direct encoding");
    }
    if ((rc = pch_lance__pb_find(f.ptr, f.len, 1, &g, where, err)) <= 0)
        return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: empty direct encoding", where);
    if ((rc = pch_lance__pb_find(g.ptr, g.len, 1, &u, where, err)) <= 0)
        return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s: encoding without type url", where);
    if (u.len != strlen(url) || memcmp(u.ptr, url, u.len) != 0)
        return pch_error_set(err, PCH_EUNSUPPORTED, "%s: encoding type '%.*s'", where,
                             (int)(u.len > 80 ? 80 : u.len), (const char *)u.ptr);
    if ((rc = pch_lance__pb_find(g.ptr, g.len, 2, &v, where, err)) < 0) return rc;
    *out = rc ? v.ptr : (const uint8_t *)"";
    *out_len = rc ? v.len : 0;
    return PCH_OK;
}

/* Collect packed or unpacked u64s of field `num` into a fresh array. */
static int collect(const uint8_t *p, size_t n, uint32_t num, pch_ctx *ctx, uint64_t **arr,
                   size_t *cnt, const char *where, pch_error *err)
{
    pch_rd r = pch_rd_make(p, n);
    pch_pb_field f;
    size_t cap = 0;
    int rc;
    *arr = NULL;
    *cnt = 0;
    while ((rc = pch_pb_next(&r, &f, where, err)) == 1) {
        if (f.num != num) continue;
        PCH_TRY(pch_pb_collect_u64(&f, ctx, arr, cnt, &cap, where, err));
        if (*cnt > MAX_PAGE_BUFFERS)
            return pch_error_set(err, PCH_ECORRUPT, "%s: more than %d buffers", where, MAX_PAGE_BUFFERS);
    }
    return rc < 0 ? rc : PCH_OK;
}

static int parse_column(pch_lance_file *f, uint32_t c, const uint8_t *p, size_t n,
                        uint64_t data_end, pch_error *err)
{
    lcolumn *col = &f->cols[c];
    pch_rd r = pch_rd_make(p, n);
    pch_pb_field fld;
    char where[96];
    size_t cap = 0;
    uint64_t row = 0;
    int rc;
    const char *fname = c < f->schema->n_fields ? f->schema->fields[c].name : "?";

    snprintf(where, sizeof where, "lance: column %u '%.40s'", c, fname);
    while ((rc = pch_pb_next(&r, &fld, where, err)) == 1) {
        if (fld.wire != PCH_PB_LEN) continue;
        if (fld.num == 1) {               /* column-level encoding: ColumnEncoding.values only */
            const uint8_t *ce;
            size_t ce_len;
            pch_pb_field v;
            PCH_TRY(unwrap_encoding(fld.ptr, fld.len, "/lance.encodings.ColumnEncoding", &ce, &ce_len, where, err));
            if ((rc = pch_lance__pb_find(ce, ce_len, 1, &v, where, err)) < 0) return rc;
            if (rc == 0 && ce_len) return pch_error_set(err, PCH_EUNSUPPORTED, "%s: column encoding other than values (zone index / blob)", where);
        } else if (fld.num == 2) {        /* Page */
            lpage pg;
            size_t nb2, i;
            pch_pb_field pe;
            memset(&pg, 0, sizeof(pg));
            if (col->n_pages == cap) {
                size_t ncap = cap ? cap * 2 : 4;
                lpage *np = pch_realloc(f->ctx, col->pages, ncap * sizeof(*np));
                if (!np) return pch_error_set(err, PCH_ENOMEM, "%s: out of memory", where);
                col->pages = np;
                cap = ncap;
            }
            rc = collect(fld.ptr, fld.len, 1, f->ctx, &pg.buf_off, &pg.n_bufs, where, err);
            if (rc == PCH_OK) rc = collect(fld.ptr, fld.len, 2, f->ctx, &pg.buf_len, &nb2, where, err);
            col->pages[col->n_pages++] = pg;    /* owned from here on */
            if (rc != PCH_OK) return rc;
            if (nb2 != pg.n_bufs)
                return pch_error_set(err, PCH_ECORRUPT, "%s page %zu: %zu buffer offsets but %zu sizes", where,
                                     col->n_pages - 1, pg.n_bufs, nb2);
            {
                pch_rd pr = pch_rd_make(fld.ptr, fld.len);
                pch_pb_field pf;
                while ((rc = pch_pb_next(&pr, &pf, where, err)) == 1)
                    if (pf.num == 3 && pf.wire == PCH_PB_VARINT) col->pages[col->n_pages - 1].n_rows = pf.v;
                if (rc < 0) return rc;
            }
            pg.n_rows = col->pages[col->n_pages - 1].n_rows;
            for (i = 0; i < pg.n_bufs; i++) {
                if (pg.buf_off[i] > data_end || pg.buf_len[i] > data_end - pg.buf_off[i])
                    return pch_error_set(err, PCH_ECORRUPT, "%s page %zu: buffer %zu (offset %llu, size %llu) past the data region end %llu",
                                         where, col->n_pages - 1, i, (unsigned long long)pg.buf_off[i],
                                         (unsigned long long)pg.buf_len[i], (unsigned long long)data_end);
                if (pg.buf_len[i] > pch_ctx_limits(f->ctx)->max_page_bytes)
                    return pch_error_set(err, PCH_ELIMIT, "%s page %zu: buffer of %llu bytes exceeds max_page_bytes",
                                         where, col->n_pages - 1, (unsigned long long)pg.buf_len[i]);
            }
            if ((rc = pch_lance__pb_find(fld.ptr, fld.len, 4, &pe, where, err)) <= 0)
                return rc < 0 ? rc : pch_error_set(err, PCH_ECORRUPT, "%s page %zu: no encoding", where, col->n_pages - 1);
            PCH_TRY(unwrap_encoding(pe.ptr, pe.len, f->v21 ? "/lance.encodings21.PageLayout" : "/lance.encodings.ArrayEncoding",
                                    &col->pages[col->n_pages - 1].enc, &col->pages[col->n_pages - 1].enc_len, where, err));
            col->pages[col->n_pages - 1].row0 = row;
            if (!pch_add_u64(&row, row, pg.n_rows))
                return pch_error_set(err, PCH_ECORRUPT, "%s: page lengths overflow", where);
        }
    }
    if (rc < 0) return rc;
    if (row != f->n_rows)
        return pch_error_set(err, PCH_ECORRUPT, "%s: pages hold %llu rows, file has %llu", where,
                             (unsigned long long)row, (unsigned long long)f->n_rows);
    return PCH_OK;
}

int pch_lance__file_open(pch_lance_file **out, pch_ctx *ctx, const char *path,
                         uint64_t expected_size, pch_error *err)
{
    pch_lance_file *f;
    uint8_t foot[FOOTER_LEN];
    uint64_t cms, cmo, gbo, end, gb0_off, gb0_len, region;
    uint32_t n_gb, n_cols;
    uint16_t major, minor;
    const pch_limits *lim = pch_ctx_limits(ctx);
    size_t i;
    int rc;

    *out = NULL;
    f = pch_calloc(ctx, 1, sizeof(*f));
    if (!f) return pch_error_set(err, PCH_ENOMEM, "lance: out of memory");
    f->ctx = ctx;
    snprintf(f->path, sizeof f->path, "%s", path);
    if ((rc = pch_rfile_open(ctx, path, &f->fd, err)) < 0) {
        pch_error_prefix(err, "lance");
        goto fail;
    }
    if ((rc = pch_rfile_size(f->fd, &f->size, err)) < 0) {
        pch_error_prefix(err, "lance: stat %s", path);
        goto fail;
    }
    if (expected_size && expected_size != f->size) {
        rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: size %llu, manifest says %llu", f->path,
                           (unsigned long long)f->size, (unsigned long long)expected_size);
        goto fail;
    }
    if (f->size < FOOTER_LEN) {
        rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: file shorter than the 40-byte footer", f->path);
        goto fail;
    }
    if ((rc = pread_all(f->fd, foot, FOOTER_LEN, f->size - FOOTER_LEN, f->path, err)) != PCH_OK) goto fail;
    if (memcmp(foot + 36, "LANC", 4) != 0) {
        rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: bad magic (not a lance file)", f->path);
        goto fail;
    }
    cms = pch_load_le64(foot);
    cmo = pch_load_le64(foot + 8);
    gbo = pch_load_le64(foot + 16);
    n_gb = pch_load_le32(foot + 24);
    n_cols = pch_load_le32(foot + 28);
    major = pch_load_le16(foot + 32);
    minor = pch_load_le16(foot + 34);
    if (major == 0 && minor == 3) f->v21 = false;
    else if (major == 2 && minor == 1) f->v21 = true;
    else {
        rc = pch_error_set(err, PCH_EUNSUPPORTED, "lance: %s: file format version %u.%u (%s)", f->path, major, minor,
                           major == 0 && minor == 2 ? "legacy v1 format" : "only 2.0 and 2.1 are supported");
        goto fail;
    }
    end = f->size - FOOTER_LEN;
    if (cms > cmo || cmo > gbo || gbo > end) {
        rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: footer offsets out of order or past the end", f->path);
        goto fail;
    }
    if ((uint64_t)n_cols * 16 != gbo - cmo || (uint64_t)n_gb * 16 != end - gbo) {
        rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: offset tables do not match %u columns / %u global buffers",
                           f->path, n_cols, n_gb);
        goto fail;
    }
    if (n_gb < 1) {
        rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: no global buffer 0 (schema expected)", f->path);
        goto fail;
    }
    if (n_cols > lim->max_columns) {
        rc = pch_error_set(err, PCH_ELIMIT, "lance: %s: %u columns exceed max_columns %u", f->path, n_cols, lim->max_columns);
        goto fail;
    }
    f->n_columns = n_cols;
    /* Global buffer 0 must start at or before the column metadata (§2.2); read
    ** [gb0, size-40) in one go after checking its size. */
    {
        uint8_t gbe[16];
        if ((rc = pread_all(f->fd, gbe, 16, gbo, f->path, err)) != PCH_OK) goto fail;
        gb0_off = pch_load_le64(gbe);
        gb0_len = pch_load_le64(gbe + 8);
    }
    if (gb0_off > cms || gb0_len > cms - gb0_off) {
        rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: global buffer 0 (%llu+%llu) not before column metadata %llu",
                           f->path, (unsigned long long)gb0_off, (unsigned long long)gb0_len, (unsigned long long)cms);
        goto fail;
    }
    region = end - gb0_off;
    if (region > lim->max_page_bytes || !pch_u64_to_size(&f->meta_len, region)) {
        rc = pch_error_set(err, PCH_ELIMIT, "lance: %s: metadata region of %llu bytes exceeds max_page_bytes",
                           f->path, (unsigned long long)region);
        goto fail;
    }
    f->meta = pch_malloc(ctx, f->meta_len ? f->meta_len : 1);
    if (!f->meta) { rc = pch_error_set(err, PCH_ENOMEM, "lance: out of memory"); goto fail; }
    if ((rc = pread_all(f->fd, f->meta, f->meta_len, gb0_off, f->path, err)) != PCH_OK) goto fail;
    if ((rc = parse_descriptor(f, f->meta, (size_t)gb0_len, err)) != PCH_OK) goto fail;
    if (f->schema->n_fields != n_cols) {
        rc = pch_error_set(err, PCH_EUNSUPPORTED, "lance: %s: %zu schema fields in %u columns (nested schemas unsupported)",
                           f->path, f->schema->n_fields, n_cols);
        goto fail;
    }
    f->cols = pch_calloc(ctx, n_cols ? n_cols : 1, sizeof(*f->cols));
    if (!f->cols) { rc = pch_error_set(err, PCH_ENOMEM, "lance: out of memory"); goto fail; }
    for (i = 0; i < n_cols; i++) {
        const uint8_t *e = f->meta + (cmo - gb0_off) + 16 * i;
        uint64_t po = pch_load_le64(e), pl = pch_load_le64(e + 8);
        if (po < cms || po > cmo || pl > cmo - po) {
            rc = pch_error_set(err, PCH_ECORRUPT, "lance: %s: column %zu metadata (%llu+%llu) outside [%llu, %llu)",
                               f->path, i, (unsigned long long)po, (unsigned long long)pl,
                               (unsigned long long)cms, (unsigned long long)cmo);
            goto fail;
        }
        if ((rc = parse_column(f, (uint32_t)i, f->meta + (po - gb0_off), (size_t)pl, cms, err)) != PCH_OK)
            goto fail;
    }
    *out = f;
    return PCH_OK;
fail:
    pch_lance__file_free(f);
    return rc;
}

uint64_t pch_lance__file_column_bytes(const pch_lance_file *f, uint32_t column)
{
    uint64_t sum = 0;
    if (column >= f->n_columns) return 0;
    for (size_t p = 0; p < f->cols[column].n_pages; p++) {
        const lpage *pg = &f->cols[column].pages[p];
        for (size_t b = 0; b < pg->n_bufs; b++) sum += pg->buf_len[b];   /* < file size each */
    }
    return sum;
}

/* Decode page p of column `column` into the column's page cache (no-op when cached). */
static int load_page(pch_lance_file *f, uint32_t column, pch_lance_type type, size_t p,
                     pch_error *err)
{
    lcolumn *col = &f->cols[column];
    const lpage *pg = &col->pages[p];
    const pch_lance_field *fld = &f->schema->fields[column];
    pch_bytes bufs[MAX_PAGE_BUFFERS];
    uint8_t *mem[MAX_PAGE_BUFFERS];
    pch_lance_page_in in;
    char where[128];
    size_t b;
    int rc = PCH_OK;

    if (col->cache_init && col->cache_valid && col->cache_page == p && col->cache.type == type)
        return PCH_OK;
    if (col->cache_init && col->cache.type != type) {
        pch_lance__colbuf_dispose(&col->cache);
        col->cache_init = false;
    }
    if (!col->cache_init) {
        pch_lance__colbuf_init(&col->cache, f->ctx, type);
        col->cache_init = true;
    }
    col->cache_valid = false;
    snprintf(where, sizeof where, "lance: column '%.40s' page %zu", fld->name, p);
    memset(mem, 0, sizeof(mem));
    for (b = 0; b < pg->n_bufs && rc == PCH_OK; b++) {
        size_t len = (size_t)pg->buf_len[b];      /* bounded by max_page_bytes at open */
        mem[b] = pch_malloc(f->ctx, len ? len : 1);
        if (!mem[b]) { rc = pch_error_set(err, PCH_ENOMEM, "%s: out of memory", where); break; }
        rc = pread_all(f->fd, mem[b], len, pg->buf_off[b], f->path, err);
        bufs[b].ptr = mem[b];
        bufs[b].len = len;
    }
    if (rc == PCH_OK) {
        in.ctx = f->ctx;
        in.bufs = bufs;
        in.n_bufs = pg->n_bufs;
        in.n_rows = pg->n_rows;
        in.enc = pg->enc;
        in.enc_len = pg->enc_len;
        in.type = type;
        in.where = where;
        pch_lance__colbuf_reset(&col->cache);
        rc = f->v21 ? pch_lance__decode_page_v21(&col->cache, &in, err)
                    : pch_lance__decode_page_v20(&col->cache, &in, err);
        if (rc == PCH_OK && col->cache.n_rows != pg->n_rows)
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: decoded %zu of %llu rows", where,
                               col->cache.n_rows, (unsigned long long)pg->n_rows);
    }
    for (b = 0; b < pg->n_bufs; b++) pch_free(f->ctx, mem[b]);
    if (rc != PCH_OK) {
        pch_lance__colbuf_reset(&col->cache);
        return rc;
    }
    col->cache_valid = true;
    col->cache_page = p;
    return PCH_OK;
}

int pch_lance__file_read(pch_lance_file *f, uint32_t column, pch_lance_type type,
                         uint64_t row_start, uint64_t n_rows, pch_lance_colbuf *out,
                         pch_error *err)
{
    const lcolumn *col;
    const pch_lance_field *fld;
    size_t p, first_row = out->n_rows;
    uint64_t end;
    int rc = PCH_OK;

    if (column >= f->n_columns)
        return pch_error_set(err, PCH_EINVAL, "lance: column %u past %u columns", column, f->n_columns);
    fld = &f->schema->fields[column];
    if (fld->type != type || out->type != type)
        return pch_error_set(err, PCH_EINVAL, "lance: column '%s' is %s, asked for %s", fld->name,
                             pch_lance_type_name(fld->type), pch_lance_type_name(type));
    if (!pch_add_u64(&end, row_start, n_rows) || end > f->n_rows)
        return pch_error_set(err, PCH_EINVAL, "lance: rows %llu+%llu past %llu rows", (unsigned long long)row_start,
                             (unsigned long long)n_rows, (unsigned long long)f->n_rows);
    col = &f->cols[column];
    /* pages are in row order (row0 increasing): binary search for the first overlap */
    {
        size_t lo = 0, hi = col->n_pages;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (col->pages[mid].row0 + col->pages[mid].n_rows <= row_start) lo = mid + 1;
            else hi = mid;
        }
        p = lo;
    }
    for (; p < col->n_pages && rc == PCH_OK; p++) {
        const lpage *pg = &col->pages[p];
        uint64_t a, z;
        if (pg->row0 >= end) break;
        if (pg->row0 + pg->n_rows <= row_start || pg->n_rows == 0) continue;
        rc = load_page(f, column, type, p, err);
        if (rc != PCH_OK) break;
        a = row_start > pg->row0 ? row_start - pg->row0 : 0;
        z = (end < pg->row0 + pg->n_rows ? end : pg->row0 + pg->n_rows) - pg->row0;
        rc = pch_lance__colbuf_append_rows(out, &col->cache, (size_t)a, (size_t)(z - a));
        if (rc != PCH_OK)
            rc = pch_error_set(err, rc, "lance: column '%.40s' page %zu: out of memory", fld->name, p);
    }
    if (rc != PCH_OK) {
        /* publish nothing partial: drop rows appended by this call */
        pch_lance_colbuf keep;
        pch_lance__colbuf_init(&keep, f->ctx, type);
        if (pch_lance__colbuf_append_rows(&keep, out, 0, first_row) == PCH_OK) {
            pch_lance__colbuf_dispose(out);
            *out = keep;
        } else {
            pch_lance__colbuf_dispose(&keep);
        }
    }
    return rc;
}
