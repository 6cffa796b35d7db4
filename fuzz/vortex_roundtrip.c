/* Round-trip target (zstd simple_round_trip): the input drives a schema and rows; the rows
** are written with the sampling compressor, read back, and any difference aborts. */
#include "vortex_fuzz.h"

typedef struct fz_in { const uint8_t *p; size_t n, i; } fz_in;
static unsigned fz_byte(fz_in *in) { return in->i < in->n ? in->p[in->i++] : 0; }

static const char *const schemas[] = {
    "a:i64,b:utf8?,c:list<i32?>?",
    "a:u8?,b:f64?,c:struct<x:i16,y:binary?>?",
    "a:bool?,b:utf8,c:fsl<u32,2>?",
    "a:i32,b:decimal(9,3)?,c:list<utf8?>",
};

static void fill(pch_vx_builder *b, fz_in *in, int depth)
{
    const pch_vx_dtype *d = pch_vx_builder_dtype(b);
    unsigned k = fz_byte(in);
    pch_error err;
    if (d->nullable && (k & 7) == 0) { pch_vx_builder_append_null(b, &err); return; }
    switch (d->kind) {
    case PCH_VX_BOOL: pch_vx_builder_append_bool(b, k & 1, &err); return;
    case PCH_VX_PRIMITIVE:
        if (d->ptype >= PCH_VX_F16) { pch_vx_builder_append_float(b, (double)(int)(k * 37 - 4000) / 8, &err); return; }
        if (pch_vx__is_signed(d->ptype)) pch_vx_builder_append_int(b, (int8_t)k, &err);
        else pch_vx_builder_append_uint(b, k >> (k & 3), &err);
        return;
    case PCH_VX_DECIMAL: { uint8_t le[2] = { (uint8_t)k, (uint8_t)fz_byte(in) }; pch_vx_builder_append_decimal(b, le, 2, &err); return; }
    case PCH_VX_UTF8: case PCH_VX_BINARY: {
        static const char *const w[] = { "", "a", "bb", "a longer value than twelve", "é" };
        pch_vx_builder_append_bytes(b, w[k % 5], strlen(w[k % 5]), &err);
        return;
    }
    case PCH_VX_STRUCT:
        for (uint32_t i = 0; i < d->n_fields; i++) fill(pch_vx_builder_child(b, i), in, depth + 1);
        pch_vx_builder_append_valid(b, &err);
        return;
    case PCH_VX_LIST:
        for (unsigned i = 0; i < (k >> 5); i++) fill(pch_vx_builder_child(b, 0), in, depth + 1);
        pch_vx_builder_append_valid(b, &err);
        return;
    case PCH_VX_FIXED_SIZE_LIST:
        for (unsigned i = 0; i < d->fsl_size; i++) fill(pch_vx_builder_child(b, 0), in, depth + 1);
        pch_vx_builder_append_valid(b, &err);
        return;
    default: return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = { data, size, 0 };
    pch_vx_dtype *dt = NULL, *odt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunks[3] = { NULL, NULL, NULL }, *all = NULL, *back = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_file *f = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_error err;
    size_t nch;
    if (size < 2 || size > 65536) return 0;
    if (pch_vx_dtype_parse(&dt, NULL, schemas[fz_byte(&in) % 4], &err)) abort();
    o.zone_len = 1 + fz_byte(&in) % 64;
    o.compress = in.n % 3 != 0;
    o.sample_rows = 64;
    o.frame_bytes = in.n % 2 ? 0 : 8u << (in.n / 2 % 8);   /* multi-frame zstd, cut at rows */
    nch = 1 + in.n % 3;
    if (pch_vx_builder_new(&b, NULL, dt, &err)) abort();
    for (size_t c = 0; c < nch; c++) {
        size_t rows = (in.n - in.i) / (nch * 3) + (c == 0);
        for (size_t r = 0; r < rows; r++) fill(b, &in, 0);
        if (pch_vx_builder_finish(b, &chunks[c], &err)) abort();
    }
    if (pch_vx_writer_open(&w, NULL, dt, &o, &err)) abort();
    for (size_t c = 0; c < nch; c++) if (pch_vx_writer_write(w, chunks[c], &err)) abort();
    if (pch_vx_writer_finish(w, &err)) abort();
    pch_bytes by = pch_vx_writer_bytes(w);
    if (pch_vx_file_open_mem(&f, NULL, by.ptr, by.len, &err) || pch_vx_file_check(f, &err) ||
        pch_vx_file_scan(f, NULL, &back, &odt, &err) || pch_vx__array_concat(&all, dt, NULL, chunks, nch, &err)) {
        fprintf(stderr, "round trip: %s\n", err.msg);
        abort();
    }
    for (uint32_t i = 0; i < back->n_children; i++) {
        pch_vx_array tmp = *all->children[i];
        tmp.dtype = back->children[i]->dtype;
        if (!pch_vx_array_equal(back->children[i], &tmp)) { fprintf(stderr, "round trip: column %u differs\n", i); abort(); }
    }
    if (back->len) {
        /* one row read alone (a point read: only its frames decompress) equals the scan's */
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *one = NULL, *want = NULL;
        pch_vx_dtype *one_dt = NULL;
        so.row_begin = in.n % back->len;
        so.row_end = so.row_begin + 1;
        /* every other input reads it in part: only the 64-byte blocks its buffers need */
        if (in.n % 2 && pch_vx_file_set_partial_reads(f, PCH_VX_BLOCK_MIN, NULL, NULL, &err)) abort();
        if (pch_vx_file_scan(f, &so, &one, &one_dt, &err) || pch_vx__array_slice(&want, back, so.row_begin, 1, &err)) {
            fprintf(stderr, "row read: %s\n", err.msg);
            abort();
        }
        for (uint32_t i = 0; i < one->n_children; i++)
            if (!pch_vx_array_equal(one->children[i], want->children[i])) { fprintf(stderr, "row read: column %u differs\n", i); abort(); }
        pch_vx_array_free(one);
        pch_vx_array_free(want);
        pch_vx_dtype_free(one_dt);
    }
    pch_vx_array_free(back);
    pch_vx_dtype_free(odt);
    pch_vx_array_free(all);
    pch_vx_file_free(f);
    pch_vx_writer_free(w);
    for (size_t c = 0; c < nch; c++) pch_vx_array_free(chunks[c]);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
    return 0;
}
