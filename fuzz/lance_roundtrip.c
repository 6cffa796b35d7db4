/* Round-trip fuzz target for the Lance data file writer (lance-format.md §2; zstd
** simple_round_trip): the input bytes choose a file version, a schema (1-4 columns of any
** supported type), nullability, row values, value sizes, page size and zstd on/off; the
** rows are written with pch_lance__file_writer_* and read back with pch_lance__file_*.
** Any writer error or any difference between what was written and what is read aborts.
**
** Input layout (consumed front to back, zero when exhausted):
**   u8 flags (bit0 2.0, bit1 no zstd, bit2 small pages, bit3 page dictionary), u8 n_columns,
**   then per column
**   u8 type, u8 nullable; then u8 n_batches; per batch u8 rows; then per value bytes. */
#include <stdlib.h>
#include <unistd.h>

#include "lance/lance_write_int.h"

typedef struct src {
    const uint8_t *p;
    size_t n, off;
} src;

static uint8_t take(src *s) { return s->off < s->n ? s->p[s->off++] : 0; }

#define MAX_COLS 4
#define MAX_ROWS 2048

typedef struct col {
    pch_lance_type type;
    bool nullable;
    uint8_t *validity;           /* all rows written */
    uint8_t *values;             /* fixed: rows * 8 bytes max */
    uint64_t *offsets;
    uint8_t *data;
    size_t data_len, data_cap;
} col;

static void fail(const char *what, const pch_error *e)
{
    fprintf(stderr, "lance_roundtrip: %s: %s\n", what, e ? e->msg : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned counter;
    src s = { data, size, 0 };
    pch_ctx *ctx = NULL;
    pch_lance_schema *schema = NULL;
    pch_lance_file_writer *w = NULL;
    pch_lance_file *f = NULL;
    pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
    pch_error e;
    col cols[MAX_COLS];
    pch_lance_column views[MAX_COLS];
    size_t n_cols, total = 0, n_batches;
    uint8_t flags;
    char path[128];
    uint64_t rows_out = 0, size_out = 0;

    memset(cols, 0, sizeof cols);
    if (pch_ctx_new(&ctx, NULL, NULL, &e) || pch_lance_schema_new(&schema, ctx, &e)) fail("setup", &e);
    flags = take(&s);
    o.file_version = flags & 1 ? PCH_LANCE_FILE_2_0 : PCH_LANCE_FILE_2_1;
    o.zstd_level = flags & 2 ? -1 : 1;
    o.max_bytes_per_page = flags & 4 ? 256 + take(&s) * 16u : 0;
    o.page_dictionary = (flags & 8) != 0;
    n_cols = 1 + take(&s) % MAX_COLS;
    for (size_t c = 0; c < n_cols; c++) {
        char name[32];
        cols[c].type = (pch_lance_type)(PCH_LANCE_BOOL + take(&s) % 16);
        cols[c].nullable = take(&s) & 1;
        snprintf(name, sizeof name, "c%zu", c);
        if (pch_lance_schema_add_field(schema, name, cols[c].type, cols[c].nullable, &e)) fail("schema", &e);
        cols[c].validity = calloc(MAX_ROWS, 1);
        cols[c].values = calloc(MAX_ROWS, 8);
        cols[c].offsets = calloc(MAX_ROWS + 1, sizeof(uint64_t));
        if (!cols[c].validity || !cols[c].values || !cols[c].offsets) abort();
    }
    snprintf(path, sizeof path, "/tmp/pch-lance-roundtrip-%d-%u.lance", (int)getpid(), counter++);
    unlink(path);
    if (pch_lance__file_writer_open(&w, ctx, path, schema, &o, &e)) fail("open", &e);

    /* batches: all rows are generated into cols[] (kept for comparison); each batch is a
    ** view of its slice */
    n_batches = take(&s) % 6;
    for (size_t b = 0; b < n_batches; b++) {
        size_t n = take(&s) * 4u, start = total;
        pch_lance_batch batch;
        if (total + n > MAX_ROWS) n = MAX_ROWS - total;
        for (size_t c = 0; c < n_cols; c++) {
            col *k = &cols[c];
            size_t width = pch_lance_type_width(k->type);
            for (size_t r = start; r < start + n; r++) {
                uint8_t seed = take(&s);
                k->validity[r] = !(k->nullable && (seed & 3) == 0);
                if (pch_lance_type_is_var(k->type)) {
                    size_t len = seed >> 2;
                    if (seed >= 0xf0) len = (size_t)(seed - 0xf0) * 97;   /* up to ~1.5 KiB */
                    if (k->data_len + len > k->data_cap) {
                        size_t nc = (k->data_cap + len) * 2 + 64;
                        uint8_t *nd = realloc(k->data, nc);
                        if (!nd) abort();
                        k->data = nd;
                        k->data_cap = nc;
                    }
                    for (size_t j = 0; j < len; j++)
                        k->data[k->data_len + j] = (uint8_t)(seed + j * (seed & 1 ? 7 : 0));
                    if (!k->validity[r]) len = 0;
                    k->data_len += len;
                    k->offsets[r + 1] = k->data_len;
                } else {
                    uint8_t *v = k->values + r * (width ? width : 1);
                    if (width == 0) v[0] = seed & 1;
                    else for (size_t j = 0; j < width; j++) v[j] = (uint8_t)(seed * (j + 1) + (seed >> 4));
                    if (!k->validity[r]) memset(v, 0, width ? width : 1);
                }
            }
            views[c].type = k->type;
            views[c].n_rows = n;
            views[c].validity = k->validity + start;
            views[c].values = k->values + start * (width ? width : 1);
            views[c].offsets = k->offsets + start;
            views[c].data = k->data ? k->data : (const uint8_t *)"";
        }
        batch.n_rows = n;
        batch.n_columns = n_cols;
        batch.columns = views;
        if (pch_lance__file_writer_write(w, &batch, &e)) fail("write", &e);
        total += n;
    }
    if (pch_lance__file_writer_finish(w, &rows_out, &size_out, &e)) fail("finish", &e);
    pch_lance__file_writer_free(w);
    if (rows_out != total) fail("row count", NULL);

    if (pch_lance__file_open(&f, ctx, path, size_out, &e)) fail("reader open", &e);
    if (pch_lance__file_num_rows(f) != total || pch_lance__file_num_columns(f) != n_cols)
        fail("reader rows/columns", NULL);
    for (size_t c = 0; c < n_cols; c++) {
        col *k = &cols[c];
        pch_lance_colbuf cb;
        size_t width = pch_lance_type_width(k->type);
        pch_lance__colbuf_init(&cb, ctx, k->type);
        if (pch_lance__file_read(f, (uint32_t)c, k->type, 0, total, &cb, &e)) fail("read", &e);
        if (cb.n_rows != total) fail("read rows", NULL);
        for (size_t r = 0; r < total; r++) {
            bool valid = !cb.has_nulls || cb.validity.data[r];
            if (valid != (k->validity[r] != 0)) fail("validity", NULL);
            if (!valid) continue;
            if (pch_lance_type_is_var(k->type)) {
                const uint64_t *ro = (const uint64_t *)(void *)cb.offsets.data;
                uint64_t len = ro[r + 1] - ro[r];
                if (len != k->offsets[r + 1] - k->offsets[r] ||
                    (len && memcmp(cb.data.data + ro[r], k->data + k->offsets[r], (size_t)len) != 0))
                    fail("variable value", NULL);
            } else {
                size_t wd = width ? width : 1;
                if (memcmp(cb.values.data + r * wd, k->values + r * wd, wd) != 0) fail("fixed value", NULL);
            }
        }
        pch_lance__colbuf_dispose(&cb);
    }
    pch_lance__file_free(f);
    unlink(path);
    for (size_t c = 0; c < n_cols; c++) {
        free(cols[c].validity);
        free(cols[c].values);
        free(cols[c].offsets);
        free(cols[c].data);
    }
    pch_lance_schema_free(schema);
    pch_ctx_free(ctx);
    return 0;
}
