/* Unit tests of the Lance data file writer (src/lance/file_writer.c, encode_21.c,
** encode_20.c; lance-format.md §2).
**  - appendix_a: the two-column example of Appendix A (id int64 not null, name utf8
**    nullable) must come out byte for byte as lancedb 0.31 / Lance 8.0 wrote it (637 bytes).
**  - structure: footer, offset tables, FileDescriptor, every page buffer at a 64-byte
**    offset inside the data section, page priorities = running row numbers, row counts,
**    multi-page columns, for every type, 2.1 and 2.0.
**  - encodings chosen: mini-block / full-zip / all-null, zstd General only where it pays.
**  - errors: type mismatch, null in a non-nullable field, existing file, unfinished file
**    removed, streaming (pages reach the disk before finish).
**  - threads: pages encoded on worker threads give byte-identical files (1 vs 2, 4, CPUs).
**
** Generator mode for tests/compat/lance_writer.sh (the official-reader checks):
**   lance_writer_test --gen OUT_DIR
** writes datasets OUT_DIR/<case>/ with the public dataset writer and, beside each,
** OUT_DIR/<case>.expected.jsonl = the rows exactly as `oracle.js dump` prints them. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "core/core.h"
#include "lance/lance_write_int.h"
#include "lance/pb.h"
#include "pchronicle/json.h"

static char tmpdir[256];
static pch_ctx *ctx;

/* ================================================================ helpers */

static const char *tpath(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static int read_file(const char *path, pch_buf *out)
{
    pch_error e;
    pch_buf_clear(out);
    return pch_file_read_all(out, path, (size_t)1 << 30, &e);
}

static const pch_lance_type ALL_TYPES[] = {
    PCH_LANCE_BOOL, PCH_LANCE_INT8, PCH_LANCE_INT16, PCH_LANCE_INT32, PCH_LANCE_INT64,
    PCH_LANCE_UINT8, PCH_LANCE_UINT16, PCH_LANCE_UINT32, PCH_LANCE_UINT64,
    PCH_LANCE_FLOAT32, PCH_LANCE_FLOAT64, PCH_LANCE_UTF8, PCH_LANCE_LARGE_UTF8,
    PCH_LANCE_BINARY, PCH_LANCE_LARGE_BINARY, PCH_LANCE_JSON };
#define N_TYPES (sizeof ALL_TYPES / sizeof ALL_TYPES[0])

/* ---- a tiny parsed view of a written file ---- */
typedef struct page_info {
    uint64_t pos[4], size[4];
    size_t n_bufs;
    uint64_t length, priority;
    const uint8_t *enc;   /* Any bytes */
    size_t enc_len;
} page_info;

typedef struct file_info {
    uint64_t cm_start, cmo_start, gbo_start, fd_pos, fd_len, n_rows_fd;
    uint32_t n_gb, n_cols;
    uint16_t major, minor;
    page_info pages[64][256];  /* [col][page] */
    size_t n_pages[64];
} file_info;

static bool contains(const uint8_t *p, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, s, k) == 0) return true;
    return false;
}

/* Parse footer, tables, FileDescriptor length and every column's pages. 0 on success,
** else the line that failed. */
static int parse_file(const pch_buf *f, file_info *fi)
{
    pch_error e;
    const uint8_t *t;
    memset(fi, 0, sizeof(*fi));
    if (f->len < 40) return __LINE__;
    t = f->data + f->len - 40;
    if (memcmp(t + 36, "LANC", 4) != 0) return __LINE__;
    fi->cm_start = pch_load_le64(t);
    fi->cmo_start = pch_load_le64(t + 8);
    fi->gbo_start = pch_load_le64(t + 16);
    fi->n_gb = pch_load_le32(t + 24);
    fi->n_cols = pch_load_le32(t + 28);
    fi->major = pch_load_le16(t + 32);
    fi->minor = pch_load_le16(t + 34);
    if (fi->n_gb != 1 || fi->n_cols == 0 || fi->n_cols > 64) return __LINE__;
    if (fi->cmo_start + 16ull * fi->n_cols != fi->gbo_start) return __LINE__;
    if (fi->gbo_start + 16ull * fi->n_gb + 40 != f->len) return __LINE__;
    fi->fd_pos = pch_load_le64(f->data + fi->gbo_start);
    fi->fd_len = pch_load_le64(f->data + fi->gbo_start + 8);
    if (fi->fd_pos % 64 || fi->fd_pos + fi->fd_len != fi->cm_start) return __LINE__;
    {   /* FileDescriptor{1 schema, 2 length} */
        pch_rd r = pch_rd_make(f->data + fi->fd_pos, fi->fd_len);
        pch_pb_field fl;
        int k;
        while ((k = pch_pb_next(&r, &fl, "fd", &e)) == 1)
            if (fl.num == 2) fi->n_rows_fd = fl.v;
        if (k < 0) return __LINE__;
    }
    for (uint32_t c = 0; c < fi->n_cols; c++) {
        uint64_t pos = pch_load_le64(f->data + fi->cmo_start + 16 * c);
        uint64_t len = pch_load_le64(f->data + fi->cmo_start + 16 * c + 8);
        pch_rd r;
        pch_pb_field fl;
        int k;
        bool saw_enc = false;
        if (pos < fi->cm_start || pos + len > fi->cmo_start) return __LINE__;
        r = pch_rd_make(f->data + pos, (size_t)len);
        while ((k = pch_pb_next(&r, &fl, "cm", &e)) == 1) {
            if (fl.num == 1) {
                saw_enc = contains(fl.ptr, fl.len, "/lance.encodings.ColumnEncoding");
            } else if (fl.num == 2) {
                page_info *p = &fi->pages[c][fi->n_pages[c]++];
                pch_rd pr = pch_rd_make(fl.ptr, fl.len);
                pch_pb_field pf;
                int k2;
                uint64_t *arr = NULL;
                size_t n = 0, cap = 0;
                if (fi->n_pages[c] >= 256) return __LINE__;
                while ((k2 = pch_pb_next(&pr, &pf, "page", &e)) == 1) {
                    if (pf.num == 1 || pf.num == 2) {
                        n = 0;
                        if (pch_pb_collect_u64(&pf, ctx, &arr, &n, &cap, "page", &e) < 0 || n > 4)
                            return __LINE__;
                        for (size_t i = 0; i < n; i++)
                            (pf.num == 1 ? p->pos : p->size)[i] = arr[i];
                        p->n_bufs = n;
                    } else if (pf.num == 3) {
                        p->length = pf.v;
                    } else if (pf.num == 5) {
                        p->priority = pf.v;
                    } else if (pf.num == 4) {
                        p->enc = pf.ptr;
                        p->enc_len = pf.len;
                    }
                }
                pch_free(ctx, arr);
                if (k2 < 0) return __LINE__;
            }
        }
        if (k < 0 || !saw_enc) return __LINE__;
    }
    return 0;
}

/* Check the structural rules of §2.2 on a parsed file; 0 or the failing line. */
static int check_structure(const pch_buf *f, const file_info *fi, uint64_t rows, bool v20)
{
    if (v20 ? (fi->major != 0 || fi->minor != 3) : (fi->major != 2 || fi->minor != 1)) return __LINE__;
    if (fi->n_rows_fd != rows) return __LINE__;
    for (uint32_t c = 0; c < fi->n_cols; c++) {
        uint64_t row = 0;
        for (size_t p = 0; p < fi->n_pages[c]; p++) {
            const page_info *pg = &fi->pages[c][p];
            if (pg->priority != row || pg->length == 0) return __LINE__;
            row += pg->length;
            for (size_t b = 0; b < pg->n_bufs; b++) {
                if (pg->pos[b] % 64) return __LINE__;
                if (pg->pos[b] + pg->size[b] > fi->fd_pos) return __LINE__;
            }
            if (!contains(pg->enc, pg->enc_len, v20 ? "/lance.encodings.ArrayEncoding"
                                                    : "/lance.encodings21.PageLayout"))
                return __LINE__;
        }
        if (row != rows) return __LINE__;
    }
    (void)f;
    return 0;
}

/* ---- deterministic column data ---- */

typedef struct colgen {
    pch_lance_type type;
    pch_buf validity, values, data;
    uint64_t *offsets;
    size_t cap;
} colgen;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Variable-width value of row i into b (big: include large values). */
static void var_value(pch_buf *b, pch_lance_type t, uint64_t i, bool big, pch_json_parser *jp)
{
    static const size_t BIG[] = { 0, 1, 255, 256, 1000, 40000, 300000, 17, 3u << 20, 70000, 5 };
    size_t len;
    pch_buf_clear(b);
    if (big) len = BIG[i % (sizeof BIG / sizeof BIG[0])];
    else len = (size_t)(mix(i) % 40);
    if (i % 11 == 0 && !big) len = 0;
    if (t == PCH_LANCE_JSON) {
        pch_buf txt;
        const pch_json_value *v;
        uint8_t *jb = NULL;
        size_t jl = 0;
        pch_error e;
        pch_buf_init(&txt, ctx);
        pch_buf_printf(&txt, "{\"a\":\"");
        for (size_t k = 0; k < len; k++)
            pch_buf_putc(&txt, (uint8_t)(i % 2 ? 'a' + mix(i * 7919 + k) % 26 : 'a' + (k / 7) % 3));
        pch_buf_printf(&txt, "\",\"b\":[1,true,null,-%llu],\"n\":%llu}",
                       (unsigned long long)(i % 1000), (unsigned long long)i);
        if (pch_json_parser_parse(jp, (const char *)txt.data, txt.len, &v, &e) == 0 &&
            pch_jsonb_encode(ctx, v, (const char *)txt.data, &jb, &jl, &e) == 0)
            pch_buf_append(b, jb, jl);
        else
            abort();
        pch_free(ctx, jb);
        pch_buf_dispose(&txt);
        return;
    }
    if (t == PCH_LANCE_UTF8 || t == PCH_LANCE_LARGE_UTF8) {
        static const char *SPECIAL[] = { "δέλτα", "tab\there", "quote\"back\\slash", "nl\n\x01",
                                         "日本語テキスト", "emoji 😀" };
        if (!big && i % 5 == 1) {
            pch_buf_append_str(b, SPECIAL[(i / 5) % 6]);
            return;
        }
        for (size_t k = 0; k < len; k++)
            pch_buf_putc(b, (uint8_t)(i % 2 ? 'a' + mix(i * 31 + k) % 26 : 'a' + (k / 5) % 4));
        return;
    }
    for (size_t k = 0; k < len; k++)
        pch_buf_putc(b, (uint8_t)(i % 2 ? mix(i * 131 + k) : (k / 3) % 7));
}

static void fixed_value(uint8_t *out, pch_lance_type t, uint64_t i)
{
    uint64_t m = mix(i);
    switch (t) {
    case PCH_LANCE_BOOL: out[0] = (uint8_t)((i * 7) % 3 == 0); break;
    case PCH_LANCE_INT8: { int8_t v = (int8_t)(m); memcpy(out, &v, 1); break; }
    case PCH_LANCE_UINT8: { uint8_t v = (uint8_t)(m); memcpy(out, &v, 1); break; }
    case PCH_LANCE_INT16: { int16_t v = (int16_t)(i * 1237); memcpy(out, &v, 2); break; }
    case PCH_LANCE_UINT16: { uint16_t v = (uint16_t)(m); memcpy(out, &v, 2); break; }
    case PCH_LANCE_INT32: { int32_t v = (int32_t)(uint32_t)(m); memcpy(out, &v, 4); break; }
    case PCH_LANCE_UINT32: { uint32_t v = (uint32_t)(i * 100003u); memcpy(out, &v, 4); break; }
    case PCH_LANCE_INT64: {
        int64_t v = i % 97 == 3 ? INT64_MIN : i % 97 == 4 ? INT64_MAX : (int64_t)i * 1000003 - 500000000000ll;
        memcpy(out, &v, 8); break; }
    case PCH_LANCE_UINT64: { uint64_t v = i % 5 == 0 ? UINT64_MAX - i : m; memcpy(out, &v, 8); break; }
    case PCH_LANCE_FLOAT32: {
        float v = i % 50 == 5 ? NAN : i % 50 == 6 ? -0.0f : i % 50 == 7 ? INFINITY : (float)i * 0.25f - 100.5f;
        if (i % 50 == 8) v = 1.17549435e-38f;
        if (i % 50 == 9) v = 0.1f;
        memcpy(out, &v, 4); break; }
    case PCH_LANCE_FLOAT64: {
        double v = i % 40 == 7 ? 1e300 : i % 40 == 8 ? 1e-7 : i % 40 == 9 ? 123456789012345680000.0
                 : i % 40 == 10 ? -5e-324 : i % 40 == 11 ? 1e21 : (double)i * 1.1 + 1e-9;
        memcpy(out, &v, 8); break; }
    case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8: case PCH_LANCE_BINARY:
    case PCH_LANCE_LARGE_BINARY: case PCH_LANCE_JSON: break;
    }
}

typedef enum null_mode { NULLS_NONE, NULLS_SOME, NULLS_ALL, NULLS_BLOCKS } null_mode;

static bool row_valid(null_mode nm, uint64_t i, size_t col)
{
    switch (nm) {
    case NULLS_NONE: return true;
    case NULLS_ALL: return false;
    case NULLS_SOME: return (i + col) % 7 != 3;
    case NULLS_BLOCKS: {                 /* blocks of 300 rows: all valid / all null / mixed */
        uint64_t blk = (i / 300 + col) % 3;
        return blk == 0 ? true : blk == 1 ? false : (i % 2 == 0);
    }
    }
    return true;
}

/* Fill g with rows [start, start+n) of column col. */
static void gen_column(colgen *g, pch_lance_column *out, size_t col, uint64_t start, size_t n,
                       null_mode nm, bool big, pch_json_parser *jp)
{
    size_t w = pch_lance_type_width(g->type);
    pch_buf v;
    pch_buf_clear(&g->validity);
    pch_buf_clear(&g->values);
    pch_buf_clear(&g->data);
    if (g->cap < n + 1) {
        pch_free(ctx, g->offsets);
        g->offsets = pch_malloc(ctx, (n + 1) * sizeof(uint64_t));
        g->cap = n + 1;
    }
    pch_buf_init(&v, ctx);
    pch_buf_append(&g->data, "PAD", 3);          /* offsets[0] != 0 on purpose */
    g->offsets[0] = 3;
    for (size_t r = 0; r < n; r++) {
        uint64_t i = start + r;
        bool valid = row_valid(nm, i, col);
        pch_buf_putc(&g->validity, valid);
        if (pch_lance_type_is_var(g->type)) {
            if (valid) {
                var_value(&v, g->type, i, big, jp);
                pch_buf_append(&g->data, v.data, v.len);
            } else if (r % 2) {
                pch_buf_append(&g->data, "garbage", 7);   /* null rows may have a range */
            }
            g->offsets[r + 1] = g->data.len;
        } else {
            uint8_t t[8] = { 0 };
            if (valid) fixed_value(t, g->type, i);
            else memset(t, 0xAB, sizeof t);               /* junk in null slots */
            pch_buf_append(&g->values, t, w ? w : 1);
        }
    }
    pch_buf_dispose(&v);
    out->type = g->type;
    out->n_rows = n;
    out->validity = nm == NULLS_NONE ? NULL : g->validity.data;
    out->values = g->values.data;
    out->offsets = g->offsets;
    out->data = g->data.data;
}

static void colgen_dispose(colgen *g)
{
    pch_buf_dispose(&g->validity);
    pch_buf_dispose(&g->values);
    pch_buf_dispose(&g->data);
    pch_free(ctx, g->offsets);
}

static pch_lance_schema *make_schema(const pch_lance_type *types, size_t n, bool nullable)
{
    pch_lance_schema *s = NULL;
    pch_error e;
    if (pch_lance_schema_new(&s, ctx, &e)) abort();
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "c_%s", pch_lance_type_name(types[i]));
        if (pch_lance_schema_add_field(s, name, types[i], nullable, &e)) abort();
    }
    return s;
}

/* ================================================================ Appendix A */

/* lance-format.md Appendix A: plain.lance data file written by lancedb 0.31.0 (637 bytes) */
static const char APPENDIX_A[] =
    "4000484848484848484848484848484848484848484848484848484848484848"
    "4848484848484848484848484848484848484848484848484848484848484848"
    "00002000fefefefe01000000000000000200000000000000fdffffffffffffff"
    "0100000000002000484848484848484848484848484848484848484848484848"
    "6000484848484848484848484848484848484848484848484848484848484848"
    "4848484848484848484848484848484848484848484848484848484848484848"
    "040008002400fefe000001000000000014000000190000001900000019000000"
    "23000000616c706861ceb4ceadcebbcf84ceb148fefefefe4848484848484848"
    "0a3b0a181202696420ffffffffffffffffff012a05696e74363438010a1f1204"
    "6e616d65180120ffffffffffffffffff012a06737472696e673001380210040a"
    "2912270a250a1f2f6c616e63652e656e636f64696e67732e436f6c756d6e456e"
    "636f64696e6712020a0012400a020040120202281804223412320a300a1d2f6c"
    "616e63652e656e636f64696e677332312e506167654c61796f7574120f0a0d1a"
    "040a020840320101380148040a2912270a250a1f2f6c616e63652e656e636f64"
    "696e67732e436f6c756d6e456e636f64696e6712020a00124c0a048001c00112"
    "0202381804223e123c0a3a0a1d2f6c616e63652e656e636f64696e677332312e"
    "506167654c61796f757412190a1712040a0208101a0812060a040a0208203201"
    "03380148043f010000000000006d00000000000000ac01000000000000790000"
    "000000000000010000000000003f000000000000003f01000000000000250200"
    "000000000045020000000000000100000002000000020001004c414e43";

static size_t hex_to_bytes(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int hi = -1;
    for (const char *p = hex; *p; p++) {
        int v;
        if (*p >= '0' && *p <= '9') v = *p - '0';
        else if (*p >= 'a' && *p <= 'f') v = *p - 'a' + 10;
        else continue;
        if (hi < 0) hi = v;
        else { if (n < cap) out[n] = (uint8_t)(hi << 4 | v); n++; hi = -1; }
    }
    return n;
}

static void test_lance_writer__appendix_a(void)
{
    static const uint8_t ids[] = {
        1, 0, 0, 0, 0, 0, 0, 0,  2, 0, 0, 0, 0, 0, 0, 0,
        0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  1, 0, 0, 0, 0, 0, 0x20, 0 };
    static const char names[] = "alphaδέλτα";
    static const uint64_t offs[] = { 0, 5, 5, 5, 15 };
    static const uint8_t valid[] = { 1, 0, 1, 1 };
    pch_lance_column cols[2] = {
        { PCH_LANCE_INT64, 4, NULL, ids, NULL, NULL },
        { PCH_LANCE_UTF8, 4, valid, NULL, offs, (const uint8_t *)names } };
    pch_lance_batch batch = { 4, 2, cols };
    pch_lance_schema *s = NULL;
    pch_lance_file_writer *w = NULL;
    pch_error e;
    pch_buf f, want;
    uint64_t rows, size;
    file_info *fi = calloc(1, sizeof *fi);
    int line;

    pch_buf_init(&f, ctx);
    pch_buf_init(&want, ctx);
    PCH_CHECK_OK(pch_lance_schema_new(&s, ctx, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(s, "id", PCH_LANCE_INT64, false, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(s, "name", PCH_LANCE_UTF8, true, &e), &e);
    unlink(tpath("a.lance"));
    PCH_CHECK_OK(pch_lance__file_writer_open(&w, ctx, tpath("a.lance"), s, NULL, &e), &e);
    PCH_CHECK_OK(pch_lance__file_writer_write(w, &batch, &e), &e);
    PCH_CHECK_EQ_INT(pch_lance__file_writer_rows(w), 4);
    PCH_CHECK_OK(pch_lance__file_writer_finish(w, &rows, &size, &e), &e);
    pch_lance__file_writer_free(w);
    PCH_CHECK_EQ_INT(rows, 4);
    PCH_CHECK_EQ_INT(size, 637);
    PCH_CHECK_OK(read_file(tpath("a.lance"), &f), &e);
    PCH_CHECK_EQ_INT(f.len, 637);
    pch_buf_zero(&want, 700);
    want.len = hex_to_bytes(APPENDIX_A, want.data, 700);
    PCH_CHECK_EQ_INT(want.len, 637);
    /* data section (page buffers + padding) */
    for (size_t i = 0; i < 0x100; i++)
        PCH_CHECK_MSG(f.data[i] == want.data[i], "data section differs at 0x%zx: %02x != %02x",
                      i, f.data[i], want.data[i]);
    /* column metadata + tables + footer */
    for (size_t i = 0x13f; i < 637; i++)
        PCH_CHECK_MSG(f.data[i] == want.data[i], "tail differs at 0x%zx: %02x != %02x",
                      i, f.data[i], want.data[i]);
    /* FileDescriptor (encoded by schema.c) */
    PCH_CHECK(memcmp(f.data, want.data, 637) == 0);
    line = parse_file(&f, fi);
    PCH_CHECK_EQ_INT(line, 0);
    PCH_CHECK_EQ_INT(check_structure(&f, fi, 4, false), 0);
    PCH_CHECK_EQ_INT(fi->pages[0][0].pos[1], 64);
    PCH_CHECK_EQ_INT(fi->pages[1][0].pos[0], 128);
    PCH_CHECK_EQ_INT(fi->pages[1][0].size[1], 56);
    pch_lance_schema_free(s);
    pch_buf_dispose(&f);
    pch_buf_dispose(&want);
    free(fi);
}

/* ================================================================ structure */

typedef int (*batch_sink)(void *w, const pch_lance_batch *b, pch_error *e);
static int sink_file(void *w, const pch_lance_batch *b, pch_error *e)
{
    return pch_lance__file_writer_write(w, b, e);
}
static int sink_dataset(void *w, const pch_lance_batch *b, pch_error *e)
{
    return pch_lance_writer_write(w, b, e);
}

/* Generate n_rows rows of schema s (gen_column) and hand them to sink in batches. */
static int feed_rows(const pch_lance_schema *s, uint64_t n_rows, size_t batch_rows, null_mode nm,
                     bool big, batch_sink sink, void *w, pch_error *e)
{
    colgen g[N_TYPES];
    pch_lance_column cols[N_TYPES];
    pch_json_parser *jp = NULL;
    int rc;

    memset(g, 0, sizeof g);
    if ((rc = pch_json_parser_new(&jp, ctx, NULL, e))) return rc;
    for (size_t c = 0; c < s->n_fields; c++) {
        g[c].type = s->fields[c].type;
        pch_buf_init(&g[c].validity, ctx);
        pch_buf_init(&g[c].values, ctx);
        pch_buf_init(&g[c].data, ctx);
    }
    for (uint64_t r = 0; rc == 0 && r < n_rows; r += batch_rows) {
        size_t n = (size_t)(n_rows - r < batch_rows ? n_rows - r : batch_rows);
        pch_lance_batch b = { n, s->n_fields, cols };
        for (size_t c = 0; c < s->n_fields; c++) gen_column(&g[c], &cols[c], c, r, n, nm, big, jp);
        rc = sink(w, &b, e);
    }
    for (size_t c = 0; c < s->n_fields; c++) colgen_dispose(&g[c]);
    pch_json_parser_free(jp);
    return rc;
}

static int write_file(const char *name, const pch_lance_schema *s, const pch_lance_write_options *o,
                      uint64_t n_rows, size_t batch_rows, null_mode nm, bool big, pch_buf *f,
                      pch_error *e)
{
    pch_lance_file_writer *w = NULL;
    uint64_t rows = 0, size = 0;
    int rc;

    unlink(tpath(name));
    rc = pch_lance__file_writer_open(&w, ctx, tpath(name), s, o, e);
    if (rc == 0) rc = feed_rows(s, n_rows, batch_rows, nm, big, sink_file, w, e);
    if (rc == 0) rc = pch_lance__file_writer_finish(w, &rows, &size, e);
    pch_lance__file_writer_free(w);
    if (rc == 0 && (rows != n_rows || read_file(tpath(name), f) || f->len != size))
        rc = pch_error_set(e, PCH_EIO, "size/rows mismatch");
    return rc;
}

static void test_lance_writer__structure_every_type(void)
{
    static const null_mode modes[] = { NULLS_NONE, NULLS_SOME, NULLS_ALL, NULLS_BLOCKS };
    pch_error e;
    pch_buf f;
    file_info *fi = calloc(1, sizeof *fi);
    pch_buf_init(&f, ctx);
    for (int v = 0; v < 2; v++)
        for (size_t m = 0; m < 4; m++) {
            pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
            pch_lance_schema *s = make_schema(ALL_TYPES, N_TYPES, modes[m] != NULLS_NONE);
            int line;
            o.file_version = v ? PCH_LANCE_FILE_2_0 : PCH_LANCE_FILE_2_1;
            o.max_bytes_per_page = m == 3 ? 2000 : 0;       /* many pages in one mode */
            PCH_CHECK_OK(write_file("s.lance", s, &o, 5000, 777, modes[m], false, &f, &e), &e);
            line = parse_file(&f, fi);
            PCH_CHECK_MSG(line == 0, "parse failed at line %d (version %d mode %zu)", line, v, m);
            line = check_structure(&f, fi, 5000, v == 1);
            PCH_CHECK_MSG(line == 0, "structure failed at line %d (version %d mode %zu)", line, v, m);
            PCH_CHECK_EQ_INT(fi->n_cols, N_TYPES);
            if (m == 3) PCH_CHECK(fi->n_pages[4] > 10);     /* int64: 2000-byte pages */
            else PCH_CHECK_EQ_INT(fi->n_pages[4], 1);
            if (modes[m] == NULLS_ALL && v == 0)             /* AllNullLayout, no buffers */
                for (size_t c = 0; c < N_TYPES; c++) PCH_CHECK_EQ_INT(fi->pages[c][0].n_bufs, 0);
            pch_lance_schema_free(s);
        }
    pch_buf_dispose(&f);
    free(fi);
}

/* Which layouts a page gets, and zstd only where it pays. */
static void test_lance_writer__encodings_chosen(void)
{
    pch_lance_page_out o;
    pch_lance_page_in in;
    pch_error e;
    uint64_t *offs = calloc(1001, sizeof *offs);
    uint8_t *vals = calloc(8000, 1), *data = malloc(1000 * 300), *valid = malloc(1000);
    size_t raw_len, z_len;

    pch_lance__page_out_init(&o, ctx, 3);
    memset(&in, 0, sizeof in);
    /* compressible int64: mini-block + General{ZSTD}, smaller than raw */
    for (size_t i = 0; i < 1000; i++) pch_store_le64(vals + 8 * i, i / 10);
    in.type = PCH_LANCE_INT64; in.n_rows = 1000; in.values = vals;
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "mini-block");
    PCH_CHECK(o.compressed);
    z_len = o.bufs[1].len;
    o.zstd_level = -1;
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK(!o.compressed);
    raw_len = o.bufs[1].len;
    PCH_CHECK(z_len < raw_len);
    PCH_CHECK_EQ_INT(o.bufs[0].len, 2);                      /* one chunk (1000 < 2048) */
    /* random int64: compression does not pay → plain Flat */
    o.zstd_level = 3;
    for (size_t i = 0; i < 1000; i++) pch_store_le64(vals + 8 * i, mix(i));
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK(!o.compressed);
    PCH_CHECK(!contains(o.any.data, o.any.len, "\x52"));     /* no General (field 10) tag */
    /* short strings → mini-block; one value of 256 bytes → full-zip */
    for (size_t i = 0; i < 1000 * 300; i++) data[i] = (uint8_t)('a' + i % 3);
    for (size_t i = 0; i < 1000; i++) offs[i + 1] = offs[i] + (i % 50);
    in.type = PCH_LANCE_UTF8; in.values = NULL; in.offsets = offs; in.data = data;
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "mini-block");
    /* without compression a value of 256 bytes → full-zip */
    offs[1000] = offs[999] + 256;
    o.zstd_level = -1;
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "full-zip");
    PCH_CHECK(!o.compressed);
    /* with zstd, large compressible values stay mini-block: chunks of far more than 32 KiB
    ** of values whose compressed form fits the chunk limit (~276 KB in a few chunks) */
    o.zstd_level = 3;
    for (size_t i = 0; i < 1000; i++) offs[i + 1] = offs[i] + 256 + (i % 40);
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "mini-block");
    PCH_CHECK(o.compressed);                                 /* 'abcabc…' compresses */
    PCH_CHECK(o.bufs[0].len / 2 <= 2);                       /* 1000 rows: 512 + 488 */
    for (size_t i = 0; i < o.bufs[0].len / 2; i++)
        PCH_CHECK((((size_t)(pch_load_le16(o.bufs[0].data + 2 * i) >> 4) + 1) * 8) <= 32768);
    /* incompressible values: plain layouts, no zstd attempted twice */
    for (size_t i = 0; i < 1000 * 300; i++) data[i] = (uint8_t)mix(i);
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "full-zip");
    PCH_CHECK(!o.compressed);
    /* rep index width: narrowest holding the data length */
    PCH_CHECK_EQ_INT(o.bufs[1].len % 1001, 0);
    PCH_CHECK_EQ_INT(o.bufs[1].len / 1001, o.bufs[0].len < 65536 ? 2 : 4);
    /* a page holding one value too large for any chunk even compressed → full-zip */
    {
        uint64_t o2[2] = { 0, 200000 };
        uint8_t *big = malloc(200000);
        pch_lance_page_in one = in;
        for (size_t i = 0; i < 200000; i++) big[i] = (uint8_t)(mix(i) >> 8);
        PCH_CHECK(!pch_lance__value_fits_chunk(&o, big, 200000));
        PCH_CHECK(pch_lance__value_fits_chunk(&o, big, PCH_LANCE_CHUNK_SAFE_VALUE));
        memset(big, 'x', 200000);
        PCH_CHECK(pch_lance__value_fits_chunk(&o, big, 200000));   /* compresses to a chunk */
        for (size_t i = 0; i < 200000; i++) big[i] = (uint8_t)(mix(i) >> 8);
        one.n_rows = 1; one.offsets = o2; one.data = big; one.validity = NULL; one.n_nulls = 0;
        PCH_CHECK_OK(pch_lance__encode_page_21(&o, &one, &e), &e);
        PCH_CHECK_EQ_STR(o.layout, "full-zip");
        free(big);
    }
    for (size_t i = 0; i < 1000 * 300; i++) data[i] = (uint8_t)('a' + i % 3);
    /* all null → all-null layout */
    memset(valid, 0, 1000);
    in.validity = valid; in.n_nulls = 1000;
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "all-null");
    PCH_CHECK_EQ_INT(o.n_bufs, 0);
    /* bool chunks: 4096 values = 512 bytes per chunk, last chunk log2 0 */
    {
        uint8_t *b = calloc(10000, 1);
        for (size_t i = 0; i < 10000; i++) b[i] = (uint8_t)(mix(i) & 1);
        memset(&in, 0, sizeof in);
        in.type = PCH_LANCE_BOOL; in.n_rows = 10000; in.values = b;
        o.zstd_level = -1;
        PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
        PCH_CHECK_EQ_INT(o.bufs[0].len, 6);                  /* 3 chunks */
        PCH_CHECK_EQ_INT(pch_load_le16(o.bufs[0].data), ((8 + 512) / 8 - 1) << 4 | 12);
        PCH_CHECK_EQ_INT(pch_load_le16(o.bufs[0].data + 4) & 15, 0);
        PCH_CHECK_EQ_INT(o.bufs[1].data[8], (b[0] | b[1] << 1 | b[2] << 2 | b[3] << 3 |
                                             b[4] << 4 | b[5] << 5 | b[6] << 6 | b[7] << 7));
        free(b);
    }
    pch_lance__page_out_dispose(&o);
    free(offs); free(vals); free(data); free(valid);
}

static void test_lance_writer__errors(void)
{
    static const uint8_t vals[16] = { 0 };
    static const uint8_t nulls[2] = { 1, 0 };
    pch_lance_schema *s = NULL;
    pch_lance_file_writer *w = NULL;
    pch_error e;
    pch_lance_column col = { PCH_LANCE_INT64, 2, nulls, vals, NULL, NULL };
    pch_lance_batch b = { 2, 1, &col };
    struct stat st;

    PCH_CHECK_OK(pch_lance_schema_new(&s, ctx, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(s, "x", PCH_LANCE_INT64, false, &e), &e);
    unlink(tpath("e.lance"));
    PCH_CHECK_OK(pch_lance__file_writer_open(&w, ctx, tpath("e.lance"), s, NULL, &e), &e);
    /* null in a non-nullable field */
    PCH_CHECK_EQ_INT(pch_lance__file_writer_write(w, &b, &e), PCH_EINVAL);
    PCH_CHECK(strstr(e.msg, "'x' row 1") != NULL);
    /* wrong type */
    col.type = PCH_LANCE_INT32;
    col.validity = NULL;
    PCH_CHECK_EQ_INT(pch_lance__file_writer_write(w, &b, &e), PCH_EINVAL);
    col.type = PCH_LANCE_INT64;
    PCH_CHECK_OK(pch_lance__file_writer_write(w, &b, &e), &e);   /* still usable */
    PCH_CHECK_EQ_INT(pch_lance__file_writer_rows(w), 2);
    /* the file exists: a second writer fails with EEXISTS */
    {
        pch_lance_file_writer *w2 = NULL;
        PCH_CHECK_EQ_INT(pch_lance__file_writer_open(&w2, ctx, tpath("e.lance"), s, NULL, &e),
                         PCH_EEXISTS);
        PCH_CHECK(w2 == NULL);
    }
    PCH_CHECK(stat(tpath("e.lance"), &st) == 0);
    pch_lance__file_writer_free(w);                       /* unfinished: removed */
    PCH_CHECK(stat(tpath("e.lance"), &st) != 0 && errno == ENOENT);
    pch_lance_schema_free(s);
}

/* Pages reach the disk while writing; memory stays at about one page per column. */
static void test_lance_writer__streaming(void)
{
    pch_lance_type t[2] = { PCH_LANCE_INT64, PCH_LANCE_LARGE_BINARY };
    pch_lance_schema *s = make_schema(t, 2, true);
    pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
    pch_lance_file_writer *w = NULL;
    pch_error e;
    colgen g[2];
    pch_lance_column cols[2];
    struct stat st;
    pch_json_parser *jp = NULL;
    uint64_t rows, size;

    memset(g, 0, sizeof g);
    o.max_bytes_per_page = 64 * 1024;
    PCH_CHECK_OK(pch_json_parser_new(&jp, ctx, NULL, &e), &e);
    unlink(tpath("st.lance"));
    PCH_CHECK_OK(pch_lance__file_writer_open(&w, ctx, tpath("st.lance"), s, &o, &e), &e);
    for (size_t c = 0; c < 2; c++) {
        g[c].type = t[c];
        pch_buf_init(&g[c].validity, ctx);
        pch_buf_init(&g[c].values, ctx);
        pch_buf_init(&g[c].data, ctx);
    }
    for (uint64_t r = 0; r < 200000; r += 10000) {
        pch_lance_batch b = { 10000, 2, cols };
        for (size_t c = 0; c < 2; c++) gen_column(&g[c], &cols[c], c, r, 10000, NULLS_SOME, false, jp);
        PCH_CHECK_OK(pch_lance__file_writer_write(w, &b, &e), &e);
    }
    PCH_CHECK(stat(tpath("st.lance"), &st) == 0);
    PCH_CHECK(st.st_size > 1000000);                   /* most pages already written */
    PCH_CHECK_OK(pch_lance__file_writer_finish(w, &rows, &size, &e), &e);
    PCH_CHECK_EQ_INT(rows, 200000);
    PCH_CHECK(stat(tpath("st.lance"), &st) == 0);
    PCH_CHECK_EQ_INT((uint64_t)st.st_size, size);
    pch_lance__file_writer_free(w);
    for (size_t c = 0; c < 2; c++) colgen_dispose(&g[c]);
    pch_json_parser_free(jp);
    pch_lance_schema_free(s);
}

/* Pages encoded on worker threads: the file is byte-identical to the single-threaded one
** for every type, both file versions, every null mode, many pages (small pages, batches that
** straddle them, large values); a writer freed with pages in flight shuts down cleanly. */
static void test_lance_writer__threads_identical(void)
{
    static const null_mode modes[] = { NULLS_NONE, NULLS_SOME, NULLS_ALL, NULLS_BLOCKS };
    static const unsigned threads[] = { 2, 4, 0 };
    pch_error e;
    pch_buf one, many;
    pch_buf_init(&one, ctx);
    pch_buf_init(&many, ctx);
    /* v: 2.1, 2.0, 2.1 with the page dictionary */
    for (int v = 0; v < 3; v++)
        for (size_t m = 0; m < 4; m++)
            for (int big = 0; big < 2; big++) {
                pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
                pch_lance_schema *s = make_schema(ALL_TYPES, N_TYPES, modes[m] != NULLS_NONE);
                o.file_version = v == 1 ? PCH_LANCE_FILE_2_0 : PCH_LANCE_FILE_2_1;
                o.page_dictionary = v == 2;
                /* big: values up to 3 MiB (own pages, full-zip, large zstd chunks) */
                uint64_t rows = big ? 33 : 6000;
                size_t batch = big ? 5 : 999;
                o.max_bytes_per_page = big ? 256 * 1024 : 3000;
                o.threads = 1;
                PCH_CHECK_OK(write_file("t1.lance", s, &o, rows, batch, modes[m], big, &one, &e), &e);
                for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                    o.threads = threads[t];
                    PCH_CHECK_OK(write_file("tn.lance", s, &o, rows, batch, modes[m], big, &many, &e), &e);
                    PCH_CHECK_MSG(one.len == many.len && memcmp(one.data, many.data, one.len) == 0,
                                  "threads %u differ (version %d mode %zu big %d: %zu vs %zu bytes)",
                                  threads[t], v, m, big, one.len, many.len);
                }
                pch_lance_schema_free(s);
            }
    /* version 1 options (no threads field) are still accepted */
    {
        pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
        pch_lance_type t2[1] = { PCH_LANCE_INT64 };
        pch_lance_schema *s = make_schema(t2, 1, false);
        o.version = 1;
        o.threads = 77;                                /* ignored: not part of version 1 */
        PCH_CHECK_OK(write_file("v1.lance", s, &o, 100, 100, NULLS_NONE, false, &one, &e), &e);
        o.version = PCH_LANCE_WRITE_OPTIONS_VERSION + 1;
        PCH_CHECK_EQ_INT(write_file("v4.lance", s, &o, 100, 100, NULLS_NONE, false, &one, &e),
                         PCH_EINVAL);
        pch_lance_schema_free(s);
    }
    /* free with pages queued and being encoded: workers are joined, the file removed */
    {
        pch_lance_type t2[2] = { PCH_LANCE_INT64, PCH_LANCE_LARGE_BINARY };
        pch_lance_schema *s = make_schema(t2, 2, true);
        pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
        pch_lance_file_writer *w = NULL;
        pch_json_parser *jp = NULL;
        colgen g[2];
        pch_lance_column cols[2];
        struct stat st;
        memset(g, 0, sizeof g);
        o.max_bytes_per_page = 4096;
        o.threads = 3;
        PCH_CHECK_OK(pch_json_parser_new(&jp, ctx, NULL, &e), &e);
        unlink(tpath("tf.lance"));
        PCH_CHECK_OK(pch_lance__file_writer_open(&w, ctx, tpath("tf.lance"), s, &o, &e), &e);
        for (size_t c = 0; c < 2; c++) {
            g[c].type = t2[c];
            pch_buf_init(&g[c].validity, ctx);
            pch_buf_init(&g[c].values, ctx);
            pch_buf_init(&g[c].data, ctx);
        }
        for (uint64_t r = 0; r < 20000; r += 5000) {
            pch_lance_batch b = { 5000, 2, cols };
            for (size_t c = 0; c < 2; c++) gen_column(&g[c], &cols[c], c, r, 5000, NULLS_SOME, false, jp);
            PCH_CHECK_OK(pch_lance__file_writer_write(w, &b, &e), &e);
        }
        pch_lance__file_writer_free(w);
        PCH_CHECK(stat(tpath("tf.lance"), &st) != 0 && errno == ENOENT);
        for (size_t c = 0; c < 2; c++) colgen_dispose(&g[c]);
        pch_json_parser_free(jp);
        pch_lance_schema_free(s);
    }
    pch_buf_dispose(&one);
    pch_buf_dispose(&many);
}

/* ================================================================ page dictionary */

/* Write a dataset at tpath(name) with the public writer; rows as gen_column makes them. */
static int write_dataset(const char *name, const pch_lance_schema *s,
                         const pch_lance_write_options *o, uint64_t n_rows, size_t batch_rows,
                         null_mode nm, bool big, pch_error *e)
{
    pch_lance_writer *w = NULL;
    char cmd[600];
    int rc;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tpath(name));
    if (system(cmd) != 0) return pch_error_set(e, PCH_EIO, "rm failed");
    rc = pch_lance_writer_open(&w, ctx, tpath(name), s, o, e);
    if (rc == 0) rc = feed_rows(s, n_rows, batch_rows, nm, big, sink_dataset, w, e);
    if (rc == 0) rc = pch_lance_writer_commit(w, NULL, e);
    pch_lance_writer_free(w);
    return rc;
}

/* Every row of a dataset (or of rows[0..n) when rows != NULL) as dump JSON lines. */
static int dump_dataset(const char *name, const uint64_t *rows, size_t n, pch_buf *out,
                        pch_error *e)
{
    pch_lance_dataset *d = NULL;
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *b;
    char *line = NULL;
    size_t len = 0, cap = 0;
    int rc;
    pch_buf_clear(out);
    if ((rc = pch_lance_dataset_open(&d, ctx, tpath(name), 0, e)) < 0) return rc;
    rc = rows ? pch_lance_scanner_open_rows(&sc, d, NULL, 0, rows, n, 333, e)
              : pch_lance_scanner_open(&sc, d, NULL, 0, 333, e);
    while (rc == 0 && (rc = pch_lance_scanner_next(sc, &b, e)) == 0)
        for (size_t r = 0; rc == 0 && r < b->n_rows; r++) {
            len = 0;
            rc = pch_lance_row_to_json(ctx, pch_lance_dataset_schema(d), NULL, b, r, &line, &len, &cap, e);
            if (rc == 0 && (pch_buf_append(out, line, len) || pch_buf_putc(out, '\n'))) rc = PCH_ENOMEM;
        }
    if (rc == PCH_ITEROVER) rc = 0;
    pch_free(ctx, line);
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(d);
    return rc;
}

/* Page dictionary (write option page_dictionary): when it is taken (repeats, long
** values, nulls, 8/16/32-bit indices), when not (short unique values, incompressible
** pages, version 2 options), and that our reader returns the same rows, in full scans and
** point reads, as from the same data written without it. The official reader's view is
** tests/compat/lance_writer.sh (cases v21_dict_*). */
static void test_lance_writer__page_dictionary(void)
{
    static const pch_lance_type BIG_TYPES_W[] = { PCH_LANCE_UTF8, PCH_LANCE_LARGE_UTF8,
        PCH_LANCE_BINARY, PCH_LANCE_LARGE_BINARY, PCH_LANCE_JSON, PCH_LANCE_INT32 };
    pch_lance_page_out o;
    pch_lance_page_in in;
    pch_error e;
    size_t n = 70000;
    uint64_t *offs = calloc(n + 1, sizeof *offs);
    uint8_t *data = malloc(n * 300), *valid = malloc(n);
    pch_buf a, b;

    pch_lance__page_out_init(&o, ctx, 3);
    o.page_dict = true;
    memset(&in, 0, sizeof in);
    in.type = PCH_LANCE_LARGE_BINARY; in.offsets = offs; in.data = data;
    /* 1000 rows, 10 distinct 300-byte values, every 7th row null: u8 indices */
    for (size_t i = 0; i < 1000; i++) {
        valid[i] = i % 7 != 3;
        offs[i + 1] = offs[i] + (valid[i] ? 300 : 0);
        if (valid[i]) memset(data + offs[i], 'a' + (int)(i % 10), 300);
    }
    in.n_rows = 1000; in.validity = valid;
    for (size_t i = 0; i < 1000; i++) in.n_nulls += !valid[i];
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "mini-block-dict");
    PCH_CHECK_EQ_INT(o.n_bufs, 3);
    PCH_CHECK(o.bufs[2].len < 300);                       /* 10 values of 'aaa…' */
    PCH_CHECK(contains(o.any.data, o.any.len, "\x28\x0a"));   /* num_dictionary_items = 10 */
    /* short unique values: the per-row index does not pay → chunked mini-block */
    in.validity = NULL; in.n_nulls = 0;
    for (size_t i = 0; i < 1000; i++) {
        int k = snprintf((char *)data + offs[i], 32, "id-%06zu", i);
        offs[i + 1] = offs[i] + (uint64_t)k;
    }
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "mini-block");
    /* long unique values that compress: taken, u16 indices for 1000 items */
    for (size_t i = 0; i < 1000; i++) {
        offs[i + 1] = offs[i] + 300;
        for (size_t k = 0; k < 300; k++) data[offs[i] + k] = (uint8_t)('a' + (k + i) % 26);
        pch_store_le64(data + offs[i], (uint64_t)i);
    }
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "mini-block-dict");
    PCH_CHECK(contains(o.any.data, o.any.len, "\x28\xe8\x07"));   /* 1000 items */
    /* long incompressible values: neither the dictionary nor zstd */
    for (size_t i = 0; i < 300000; i++) data[i] = (uint8_t)(mix(i) >> 8);
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK(strcmp(o.layout, "mini-block-dict") != 0);
    PCH_CHECK(!o.compressed);
    /* 70,000 rows of 70,000 distinct values → u32 indices */
    offs[0] = 0;
    for (size_t i = 0; i < n; i++) {
        offs[i + 1] = offs[i] + 260;
        memset(data + offs[i], 'q', 260);
        pch_store_le64(data + offs[i] + 100, (uint64_t)i);
    }
    in.n_rows = n;
    PCH_CHECK_OK(pch_lance__encode_page_21(&o, &in, &e), &e);
    PCH_CHECK_EQ_STR(o.layout, "mini-block-dict");
    PCH_CHECK(contains(o.any.data, o.any.len, "\x0a\x02\x08\x20"));  /* indices Flat(32) */
    pch_lance__page_out_dispose(&o);

    /* datasets: same rows with and without the page dictionary, through our reader */
    pch_buf_init(&a, ctx);
    pch_buf_init(&b, ctx);
    for (int big = 0; big < 2; big++) {
        pch_lance_schema *s = make_schema(big ? BIG_TYPES_W : ALL_TYPES, big ? 6 : N_TYPES, true);
        pch_lance_write_options wo = PCH_LANCE_WRITE_OPTIONS_INIT;
        uint64_t rows = big ? 33 : 6000, pick[4] = { 0, 5, 17, big ? 32 : 5999 };
        wo.max_bytes_per_page = big ? 0 : 40000;
        PCH_CHECK_OK(write_dataset("pd_off", s, &wo, rows, big ? 5 : 999, NULLS_SOME, big, &e), &e);
        wo.page_dictionary = true;
        PCH_CHECK_OK(write_dataset("pd_on", s, &wo, rows, big ? 5 : 999, NULLS_SOME, big, &e), &e);
        PCH_CHECK_OK(dump_dataset("pd_off", NULL, 0, &a, &e), &e);
        PCH_CHECK_OK(dump_dataset("pd_on", NULL, 0, &b, &e), &e);
        PCH_CHECK(a.len > 0 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        PCH_CHECK_OK(dump_dataset("pd_off", pick, 4, &a, &e), &e);
        PCH_CHECK_OK(dump_dataset("pd_on", pick, 4, &b, &e), &e);
        PCH_CHECK(a.len > 0 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        /* version 2 options have no page_dictionary: the same bytes as without it */
        wo.version = 2;
        PCH_CHECK_OK(write_dataset("pd_v2", s, &wo, rows, big ? 5 : 999, NULLS_SOME, big, &e), &e);
        PCH_CHECK_OK(dump_dataset("pd_v2", NULL, 0, &b, &e), &e);
        PCH_CHECK_OK(dump_dataset("pd_off", NULL, 0, &a, &e), &e);
        PCH_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        pch_lance_schema_free(s);
    }
    pch_buf_dispose(&a);
    pch_buf_dispose(&b);
    free(offs); free(data); free(valid);
}

/* ================================================================ generator */

static void put_js_string(pch_buf *b, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    pch_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        switch (c) {
        case '"': pch_buf_append_str(b, "\\\""); break;
        case '\\': pch_buf_append_str(b, "\\\\"); break;
        case '\b': pch_buf_append_str(b, "\\b"); break;
        case '\f': pch_buf_append_str(b, "\\f"); break;
        case '\n': pch_buf_append_str(b, "\\n"); break;
        case '\r': pch_buf_append_str(b, "\\r"); break;
        case '\t': pch_buf_append_str(b, "\\t"); break;
        default:
            if (c < 0x20) {
                char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
                pch_buf_append_str(b, u);
            } else {
                pch_buf_putc(b, c);
            }
        }
    }
    pch_buf_putc(b, '"');
}

/* JavaScript Number.prototype.toString (ECMA-262 Number::toString) as JSON.stringify prints */
static void put_js_number(pch_buf *b, double v)
{
    char t[40], digits[24];
    int k = 0, n, e10;
    if (isnan(v)) { pch_buf_append_str(b, "\"NaN\""); return; }
    if (isinf(v)) { pch_buf_append_str(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\""); return; }
    if (v == 0) { pch_buf_append_str(b, "0"); return; }
    if (v < 0) { pch_buf_putc(b, '-'); v = -v; }
    for (int p = 1; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*e", p - 1, v);
        if (strtod(t, NULL) == v) break;
    }
    for (const char *q = t; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9') digits[k++] = *q;
    while (k > 1 && digits[k - 1] == '0') k--;
    digits[k] = 0;
    e10 = atoi(strchr(t, 'e') + 1);
    n = e10 + 1;
    if (k <= n && n <= 21) {
        pch_buf_append(b, digits, (size_t)k);
        for (int i = 0; i < n - k; i++) pch_buf_putc(b, '0');
    } else if (0 < n && n <= 21) {
        pch_buf_append(b, digits, (size_t)n);
        pch_buf_putc(b, '.');
        pch_buf_append(b, digits + n, (size_t)(k - n));
    } else if (-6 < n && n <= 0) {
        pch_buf_append_str(b, "0.");
        for (int i = 0; i < -n; i++) pch_buf_putc(b, '0');
        pch_buf_append(b, digits, (size_t)k);
    } else {
        pch_buf_putc(b, (uint8_t)digits[0]);
        if (k > 1) { pch_buf_putc(b, '.'); pch_buf_append(b, digits + 1, (size_t)(k - 1)); }
        pch_buf_printf(b, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
    }
}

static int put_expected_value(pch_buf *b, const pch_lance_column *c, size_t r, pch_error *e)
{
    if (c->validity && !c->validity[r]) return pch_buf_append_str(b, "null");
    if (pch_lance_type_is_var(c->type)) {
        const uint8_t *p = c->data + c->offsets[r];
        size_t n = (size_t)(c->offsets[r + 1] - c->offsets[r]);
        if (c->type == PCH_LANCE_UTF8 || c->type == PCH_LANCE_LARGE_UTF8) {
            put_js_string(b, p, n);
        } else if (c->type == PCH_LANCE_JSON) {
            char *txt = NULL;
            size_t tl = 0;
            PCH_TRY(pch_jsonb_to_json(ctx, p, n, &txt, &tl, e));
            put_js_string(b, (const uint8_t *)txt, tl);
            pch_free(ctx, txt);
        } else {
            pch_buf_append_str(b, "{\"base64\":\"");
            pch_base64_encode(b, p, n);
            pch_buf_append_str(b, "\"}");
        }
        return b->oom ? PCH_ENOMEM : PCH_OK;
    }
    {
        size_t w = pch_lance_type_width(c->type);
        const uint8_t *p = c->values + r * (w ? w : 1);
        switch (c->type) {
        case PCH_LANCE_BOOL: return pch_buf_append_str(b, p[0] ? "true" : "false");
        case PCH_LANCE_INT8: return pch_buf_printf(b, "%d", (int)(int8_t)p[0]);
        case PCH_LANCE_UINT8: return pch_buf_printf(b, "%u", (unsigned)p[0]);
        case PCH_LANCE_INT16: return pch_buf_printf(b, "%d", (int)(int16_t)pch_load_le16(p));
        case PCH_LANCE_UINT16: return pch_buf_printf(b, "%u", (unsigned)pch_load_le16(p));
        case PCH_LANCE_INT32: return pch_buf_printf(b, "%d", (int)(int32_t)pch_load_le32(p));
        case PCH_LANCE_UINT32: return pch_buf_printf(b, "%u", (unsigned)pch_load_le32(p));
        case PCH_LANCE_INT64: return pch_buf_printf(b, "%lld", (long long)(int64_t)pch_load_le64(p));
        case PCH_LANCE_UINT64: return pch_buf_printf(b, "%llu", (unsigned long long)pch_load_le64(p));
        case PCH_LANCE_FLOAT32: { float f; memcpy(&f, p, 4); put_js_number(b, (double)f); return PCH_OK; }
        case PCH_LANCE_FLOAT64: { double d; memcpy(&d, p, 8); put_js_number(b, d); return PCH_OK; }
        case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8: case PCH_LANCE_BINARY:
        case PCH_LANCE_LARGE_BINARY: case PCH_LANCE_JSON: break;
        }
    }
    return PCH_OK;
}

typedef struct gen_case {
    const char *name;
    pch_lance_file_version version;
    null_mode nulls;
    bool big;
    uint64_t rows;
    size_t batch_rows;
    uint64_t page_bytes;
    int zstd_level;
    const pch_lance_type *types;  /* NULL = ALL_TYPES */
    size_t n_types;
    bool page_dict;               /* write option page_dictionary */
} gen_case;

static const pch_lance_type MANY_TYPES[] = { PCH_LANCE_INT64, PCH_LANCE_UTF8, PCH_LANCE_FLOAT64,
                                             PCH_LANCE_BOOL, PCH_LANCE_JSON };
static const pch_lance_type BIG_TYPES[] = { PCH_LANCE_UTF8, PCH_LANCE_LARGE_UTF8, PCH_LANCE_BINARY,
                                            PCH_LANCE_LARGE_BINARY, PCH_LANCE_JSON, PCH_LANCE_INT32 };

static const gen_case CASES[] = {
    { "v21_some_nulls", PCH_LANCE_FILE_2_1, NULLS_SOME, false, 5000, 777, 0, 0, NULL, 0, false },
    { "v21_no_nulls", PCH_LANCE_FILE_2_1, NULLS_NONE, false, 5000, 1000, 0, 0, NULL, 0, false },
    { "v21_all_null", PCH_LANCE_FILE_2_1, NULLS_ALL, false, 300, 300, 0, 0, NULL, 0, false },
    { "v21_pages", PCH_LANCE_FILE_2_1, NULLS_BLOCKS, false, 5000, 333, 3000, 0, NULL, 0, false },
    { "v21_nozstd", PCH_LANCE_FILE_2_1, NULLS_SOME, false, 5000, 777, 0, -1, NULL, 0, false },
    { "v21_big", PCH_LANCE_FILE_2_1, NULLS_SOME, true, 22, 5, 0, 0, BIG_TYPES, 6, false },
    { "v21_big_nonull", PCH_LANCE_FILE_2_1, NULLS_NONE, true, 22, 22, 1 << 20, 0, BIG_TYPES, 6, false },
    { "v21_many", PCH_LANCE_FILE_2_1, NULLS_SOME, false, 200000, 10000, 256 * 1024, 0, MANY_TYPES, 5, false },
    { "v20_some_nulls", PCH_LANCE_FILE_2_0, NULLS_SOME, false, 5000, 777, 0, 0, NULL, 0, false },
    { "v20_no_nulls", PCH_LANCE_FILE_2_0, NULLS_NONE, false, 3000, 1000, 0, 0, NULL, 0, false },
    { "v20_all_null", PCH_LANCE_FILE_2_0, NULLS_ALL, false, 300, 300, 0, 0, NULL, 0, false },
    { "v20_pages", PCH_LANCE_FILE_2_0, NULLS_BLOCKS, false, 5000, 333, 3000, 0, NULL, 0, false },
    { "v20_big", PCH_LANCE_FILE_2_0, NULLS_SOME, true, 22, 7, 0, 0, BIG_TYPES, 6, false },
    { "v21_dict_some_nulls", PCH_LANCE_FILE_2_1, NULLS_SOME, false, 5000, 777, 0, 0, NULL, 0, true },
    { "v21_dict_pages", PCH_LANCE_FILE_2_1, NULLS_BLOCKS, false, 5000, 333, 3000, 0, NULL, 0, true },
    { "v21_dict_big", PCH_LANCE_FILE_2_1, NULLS_SOME, true, 22, 5, 0, 0, BIG_TYPES, 6, true },
    { "v21_dict_many", PCH_LANCE_FILE_2_1, NULLS_NONE, false, 200000, 10000, 1 << 20, 0, MANY_TYPES, 5, true },
};

static int gen_one(const char *outdir, const gen_case *gc, pch_error *e)
{
    const pch_lance_type *types = gc->types ? gc->types : ALL_TYPES;
    size_t nt = gc->types ? gc->n_types : N_TYPES;
    pch_lance_schema *s = make_schema(types, nt, gc->nulls != NULLS_NONE);
    pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
    pch_lance_writer *w = NULL;
    pch_json_parser *jp = NULL;
    colgen g[N_TYPES];
    pch_lance_column cols[N_TYPES];
    pch_buf path, line;
    FILE *out = NULL;
    int rc;

    memset(g, 0, sizeof g);
    pch_buf_init(&path, ctx);
    pch_buf_init(&line, ctx);
    o.file_version = gc->version;
    o.max_bytes_per_page = gc->page_bytes;
    o.zstd_level = gc->zstd_level;
    o.page_dictionary = gc->page_dict;
    {   /* the schema part of the oracle's header line */
        static const char *ARROW[] = { "", "Bool", "Int8", "Int16", "Int32", "Int64", "Uint8",
                                       "Uint16", "Uint32", "Uint64", "Float32", "Float64", "Utf8",
                                       "LargeUtf8", "Binary", "LargeBinary", "Utf8" };
        pch_buf_printf(&line, "\"fields\":[");
        for (size_t c = 0; c < nt; c++)
            pch_buf_printf(&line, "%s{\"name\":\"%s\",\"type\":\"%s\",\"nullable\":%s,\"metadata\":{%s}}",
                           c ? "," : "", s->fields[c].name, ARROW[types[c]],
                           gc->nulls != NULLS_NONE ? "true" : "false",
                           types[c] == PCH_LANCE_JSON ? "\"ARROW:extension:name\":\"arrow.json\"" : "");
        pch_buf_printf(&line, "]\n");
        pch_buf_printf(&path, "%s/%s.expected.fields", outdir, gc->name);
        out = fopen((const char *)path.data, "w");
        if (!out || fwrite(line.data, 1, line.len, out) != line.len || fclose(out) != 0)
            return pch_error_set(e, PCH_EIO, "cannot write %s", (const char *)path.data);
        pch_buf_clear(&path);
        pch_buf_clear(&line);
    }
    pch_buf_printf(&path, "%s/%s.expected.jsonl", outdir, gc->name);
    out = fopen((const char *)path.data, "w");
    if (!out) return pch_error_set(e, PCH_EIO, "cannot create %s", (const char *)path.data);
    pch_buf_clear(&path);
    pch_buf_printf(&path, "%s/%s", outdir, gc->name);
    rc = pch_json_parser_new(&jp, ctx, NULL, e);
    if (rc == 0) rc = pch_lance_writer_open(&w, ctx, (const char *)path.data, s, &o, e);
    for (size_t c = 0; c < nt; c++) {
        g[c].type = types[c];
        pch_buf_init(&g[c].validity, ctx);
        pch_buf_init(&g[c].values, ctx);
        pch_buf_init(&g[c].data, ctx);
    }
    for (uint64_t r = 0; rc == 0 && r < gc->rows; r += gc->batch_rows) {
        size_t n = (size_t)(gc->rows - r < gc->batch_rows ? gc->rows - r : gc->batch_rows);
        pch_lance_batch b = { n, nt, cols };
        for (size_t c = 0; c < nt; c++) gen_column(&g[c], &cols[c], c, r, n, gc->nulls, gc->big, jp);
        rc = pch_lance_writer_write(w, &b, e);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            pch_buf_clear(&line);
            pch_buf_putc(&line, '{');
            for (size_t c = 0; rc == 0 && c < nt; c++) {
                if (c) pch_buf_putc(&line, ',');
                put_js_string(&line, (const uint8_t *)s->fields[c].name, strlen(s->fields[c].name));
                pch_buf_putc(&line, ':');
                rc = put_expected_value(&line, &cols[c], i, e);
            }
            pch_buf_append_str(&line, "}\n");
            if (rc == 0 && fwrite(line.data, 1, line.len, out) != line.len)
                rc = pch_error_set(e, PCH_EIO, "write expected");
        }
    }
    if (rc == 0) rc = pch_lance_writer_commit(w, NULL, e);
    pch_lance_writer_free(w);
    for (size_t c = 0; c < nt; c++) colgen_dispose(&g[c]);
    pch_json_parser_free(jp);
    if (fclose(out) != 0 && rc == 0) rc = pch_error_set(e, PCH_EIO, "close expected");
    pch_buf_dispose(&path);
    pch_buf_dispose(&line);
    pch_lance_schema_free(s);
    return rc;
}

static int generate(const char *outdir)
{
    pch_error e;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (gen_one(outdir, &CASES[i], &e)) {
            fprintf(stderr, "lance_writer_test: case %s: %s\n", CASES[i].name, e.msg);
            return 1;
        }
        printf("%s\n", CASES[i].name);
    }
    return 0;
}

/* ================================================================ main */

int main(int argc, char **argv)
{
    pch_error e;
    int rc;
    if (pch_ctx_new(&ctx, NULL, NULL, &e)) return 2;
    if (argc == 3 && strcmp(argv[1], "--gen") == 0) {
        rc = generate(argv[2]);
        pch_ctx_free(ctx);
        return rc;
    }
    pch_test_init(argc, argv, "lance_writer_test");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pch-lance-writer-XXXXXX");
    if (!mkdtemp(tmpdir)) return 2;
    PCH_RUN(test_lance_writer__appendix_a);
    PCH_RUN(test_lance_writer__structure_every_type);
    PCH_RUN(test_lance_writer__encodings_chosen);
    PCH_RUN(test_lance_writer__errors);
    PCH_RUN(test_lance_writer__streaming);
    PCH_RUN(test_lance_writer__threads_identical);
    PCH_RUN(test_lance_writer__page_dictionary);
    rc = pch_test_report();
    {
        pch_error e2;
        pch_remove_tree(tmpdir, &e2);
    }
    pch_ctx_free(ctx);
    return rc;
}
