/* Vortex file writer/reader tests (vortex-format.md §1, §5, §6, §9.2, §10, §12): round-trip
** properties over random schemas and data, the worked example of §9.2 as a golden file,
** rejection of the pre-stable fixture and of corrupted files, the compressor's choices,
** projection / row ranges / selections / zone-map pruning / coalesced reads. */
#include "harness.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "vortex/vortex_int.h"

#define DATA_DIR "tests/data/vortex/"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static uint64_t rndn(uint64_t n) { return n ? rnd() % n : 0; }

/* ------------------------------------------------------------------ random schemas/data */

static void gen_type(pch_buf *b, int depth)
{
    static const char *const leaves[] = { "bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
                                          "f16", "f32", "f64", "utf8", "binary", "decimal(5,2)",
                                          "decimal(18,0)", "decimal(38,4)", "null", "ext<\"vortex.date\",i32>" };
    unsigned k = (unsigned)rndn(depth > 2 ? 19 : 24);
    if (k < 19) {
        pch_buf_append_str(b, leaves[k]);
    } else if (k < 21) {
        pch_buf_append_str(b, "list<");
        gen_type(b, depth + 1);
        pch_buf_append_str(b, ">");
    } else if (k == 21) {
        pch_buf_append_str(b, "fsl<");
        gen_type(b, depth + 1);
        pch_buf_printf(b, ",%u>", (unsigned)rndn(4));
    } else {
        unsigned n = (unsigned)rndn(4);
        pch_buf_append_str(b, "struct<");
        for (unsigned i = 0; i < n; i++) {
            pch_buf_printf(b, "%sf%u:", i ? "," : "", i);
            gen_type(b, depth + 1);
        }
        pch_buf_append_str(b, ">");
    }
    if (k != 17 && k != 18 && rndn(2)) pch_buf_putc(b, '?');
}

static int gen_value(pch_vx_builder *b, int mode, pch_error *err);

static int gen_leaf(pch_vx_builder *b, const pch_vx_dtype *d, int mode, pch_error *err)
{
    switch (d->kind) {
    case PCH_VX_BOOL: return pch_vx_builder_append_bool(b, (int)rndn(2), err);
    case PCH_VX_PRIMITIVE: {
        unsigned w = pch_vx_ptype_width(d->ptype);
        uint64_t r = rnd();
        if (mode == 1) r = 7;                      /* constant */
        if (mode == 2) r = rndn(3);                /* low cardinality */
        if (rndn(10) == 0) r = ~0ull;              /* extremes */
        if (rndn(10) == 0) r = 0;
        if (d->ptype >= PCH_VX_F16) {
            double v = (double)(int64_t)r / 1e6;
            if (rndn(20) == 0) v = -0.0;
            if (rndn(30) == 0) v = d->ptype == PCH_VX_F16 ? 65504.0 : 1e300 * (d->ptype == PCH_VX_F64);
            return pch_vx_builder_append_float(b, v, err);
        }
        if (pch_vx__is_signed(d->ptype)) {
            int64_t v = (int64_t)r;
            if (w < 8) v >>= (64 - 8 * w);
            if (mode == 1) v = -5;
            if (mode == 2) v = (int64_t)rndn(3) - 1;
            return pch_vx_builder_append_int(b, v, err);
        }
        if (w < 8) r >>= (64 - 8 * w);
        return pch_vx_builder_append_uint(b, r, err);
    }
    case PCH_VX_DECIMAL: {
        uint8_t le[8];
        int64_t v = (int64_t)rndn(20000) - 10000;
        if (mode == 1) v = 42;
        pch_store_le64(le, (uint64_t)v);
        return pch_vx_builder_append_decimal(b, le, 8, err);
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY: {
        static const char *const words[] = { "", "a", "héllo", "😀 emoji", "a longer string beyond twelve bytes", "x\"y\\z\n" };
        char tmp[64];
        const char *s;
        size_t n;
        if (mode == 2 || mode == 1) s = words[mode == 1 ? 1 : rndn(3)];
        else if (rndn(3) == 0) { snprintf(tmp, sizeof tmp, "row-%llu", (unsigned long long)rndn(1000)); s = tmp; }
        else s = words[rndn(6)];
        n = strlen(s);
        if (d->kind == PCH_VX_BINARY && rndn(4) == 0) { tmp[0] = 0; tmp[1] = (char)0xff; s = tmp; n = 2; }
        return pch_vx_builder_append_bytes(b, s, n, err);
    }
    default: return PCH_OK;
    }
}

static int gen_value(pch_vx_builder *b, int mode, pch_error *err)
{
    const pch_vx_dtype *d = pch_vx_builder_dtype(b);
    if (d->kind == PCH_VX_NULL || (d->nullable && mode != 1 && rndn(mode == 3 ? 10 : 5) != 0 && mode == 3) ||
        (d->nullable && mode != 1 && mode != 3 && rndn(5) == 0))
        return pch_vx_builder_append_null(b, err);
    switch (d->kind) {
    case PCH_VX_STRUCT:
        for (uint32_t i = 0; i < d->n_fields; i++) PCH_TRY(gen_value(pch_vx_builder_child(b, i), mode, err));
        return pch_vx_builder_append_valid(b, err);
    case PCH_VX_LIST: {
        unsigned n = (unsigned)rndn(4);
        for (unsigned i = 0; i < n; i++) PCH_TRY(gen_value(pch_vx_builder_child(b, 0), mode, err));
        return pch_vx_builder_append_valid(b, err);
    }
    case PCH_VX_FIXED_SIZE_LIST:
        for (unsigned i = 0; i < d->fsl_size; i++) PCH_TRY(gen_value(pch_vx_builder_child(b, 0), mode, err));
        return pch_vx_builder_append_valid(b, err);
    case PCH_VX_EXTENSION:
        PCH_TRY(gen_value(pch_vx_builder_child(b, 0), mode, err));
        return pch_vx_builder_append_valid(b, err);
    default:
        return gen_leaf(b, d, mode, err);
    }
}

/* ------------------------------------------------------------------ streamed output */

static char g_tmpdir[64];   /* scratch directory for streamed files (created in main) */

static size_t dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    if (!d) return (size_t)-1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Row weights for pch_vx_writer_write_rows (frame_row_ratio): a deterministic mix of small and
** large rows per chunk, the same for every writer of a test; NULL without a ratio. */
static int write_chunk(pch_vx_writer *w, const pch_vx_write_options *o, size_t c, const pch_vx_array *a, pch_error *err)
{
    uint64_t *wt;
    int rc;
    if (!o || !o->frame_row_ratio) return pch_vx_writer_write(w, a, err);
    if (!(wt = malloc(((size_t)a->len + 1) * sizeof *wt))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    for (uint64_t r = 0; r < a->len; r++) wt[r] = ((r * 2654435761u) ^ (c * 40503u)) % 7 == 0 ? (r % 97) * 13 : 20000 + r % 5000;
    rc = pch_vx_writer_write_rows(w, a, wt, err);
    free(wt);
    return rc;
}

/* Write the chunks again through the streaming writer (staging file + rename) and require
** byte-identical output to the in-memory writer, and no staging file left behind. */
static int stream_same(const pch_vx_dtype *dt, pch_vx_array **chunks, size_t n, const pch_vx_write_options *o,
                       pch_bytes want, pch_error *err)
{
    char path[128];
    pch_vx_writer *w = NULL;
    pch_buf got;
    int rc;
    snprintf(path, sizeof path, "%s/stream.vortex", g_tmpdir);
    pch_buf_init(&got, NULL);
    if ((rc = pch_vx_writer_open_path(&w, NULL, dt, path, o, err))) return rc;
    for (size_t i = 0; i < n && !rc; i++) rc = write_chunk(w, o, i, chunks[i], err);
    if (!rc && dir_entries(g_tmpdir) != 1) rc = pch_error_set(err, PCH_EIO, "streamed: no staging file while writing");
    if (!rc && access(path, F_OK) == 0) rc = pch_error_set(err, PCH_EIO, "streamed: target visible before finish");
    if (!rc) rc = pch_vx_writer_finish(w, err);
    if (!rc && pch_vx_writer_bytes(w).len != 0) rc = pch_error_set(err, PCH_EINVAL, "streamed: bytes view not empty");
    if (!rc && pch_vx_writer_file_bytes(w) != want.len) rc = pch_error_set(err, PCH_EIO, "streamed: size differs");
    if (!rc) rc = pch_vx_writer_publish(w, path, err);   /* no-op for its own path */
    if (!rc) rc = pch_file_read_all(&got, path, SIZE_MAX, err);
    if (!rc && (got.len != want.len || memcmp(got.data, want.ptr, want.len) != 0))
        rc = pch_error_set(err, PCH_ECORRUPT, "streamed output differs from the in-memory writer");
    if (!rc && dir_entries(g_tmpdir) != 1) rc = pch_error_set(err, PCH_EIO, "streamed: staging file left behind");
    pch_vx_writer_free(w);
    pch_buf_dispose(&got);
    unlink(path);
    return rc;
}

/* Block check of the partial-read tests: block `block` of the segment (block bytes B) is the
** file's bytes there; corrupt_block (>= 0) is refused as a corrupted block would be. */
static struct { const uint8_t *file; pch_vx_file *f; uint32_t B; uint64_t checked; int corrupt_block; } g_blk;
static int block_matches(void *payload, uint32_t seg, uint32_t block, const uint8_t *bytes, uint64_t len,
                         pch_error *err)
{
    uint64_t off, sl, at;
    (void)payload;
    if (pch_vx_file_segment(g_blk.f, seg, &off, &sl, err)) return pch_error_set(err, PCH_EINVAL, "segment %u", seg);
    at = (uint64_t)block * g_blk.B;
    if (at >= sl || len != (sl - at < g_blk.B ? sl - at : g_blk.B))
        return pch_error_set(err, PCH_EINVAL, "block %u of segment %u: %llu bytes", block, seg, (unsigned long long)len);
    g_blk.checked += len;
    if ((int)block == g_blk.corrupt_block || memcmp(bytes, g_blk.file + off + at, (size_t)len) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "block %u of segment %u refused", block, seg);
    return PCH_OK;
}

/* Every text array the decoder gathered from vortex.dict keeps codes that name its rows:
** row i null exactly where dict_codes[i] is UINT32_MAX or names a null value, else the bytes
** of dict_values row dict_codes[i]. Counts the arrays checked. */
static uint64_t g_dict_arrays;
static bool dict_codes_agree(const pch_vx_array *a)
{
    if (!a) return true;
    for (uint32_t i = 0; i < a->n_children; i++) if (!dict_codes_agree(a->children[i])) return false;
    if (!a->dict_codes) return true;
    if (!a->dict_values || (a->dtype->kind != PCH_VX_UTF8 && a->dtype->kind != PCH_VX_BINARY)) return false;
    g_dict_arrays++;
    for (uint64_t r = 0; r < a->len; r++) {
        const char *p, *q;
        size_t n, m;
        uint32_t c = a->dict_codes[r];
        bool valid = pch_vx_row_bytes(a, r, &p, &n);
        if (c == UINT32_MAX) { if (valid) return false; continue; }
        if (c >= a->dict_values->len) return false;
        if (valid != pch_vx_row_bytes(a->dict_values, c, &q, &m)) return false;
        if (valid && (n != m || memcmp(p, q, n) != 0)) return false;
    }
    return true;
}

/* Text arrays that came back as codes only (no offsets, codes over a dictionary), counted. */
static uint64_t g_codes_only;
static void count_codes_only(const pch_vx_array *a)
{
    if (!a) return;
    for (uint32_t i = 0; i < a->n_children; i++) count_codes_only(a->children[i]);
    g_codes_only += !a->offsets && a->dict_codes && a->dict_values;
}

/* A scan with text_codes on every column gives the rows of the plain scan `back`: chunk by
** chunk (each handed over as decoded: dictionary and constant text stay codes) and across
** chunks (concatenated: plain text); a version-1 options struct (no text_codes) still scans. */
static int codes_scan_same(pch_vx_file *f, const pch_vx_array *back, pch_vx_array **chunks, size_t n, pch_error *err)
{
    uint8_t flags[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    uint64_t at = 0;
    int rc = PCH_OK;
    for (size_t c = 0; c <= n && rc == PCH_OK; c++) {
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *part = NULL, *want = NULL;
        pch_vx_dtype *pdt = NULL;
        so.text_codes = flags;
        if (back->n_children > sizeof flags) return PCH_OK;
        if (c < n) { so.row_begin = at; so.row_end = at + chunks[c]->len; at = so.row_end; }
        else so.version = 1;        /* the whole file, as a version-1 caller asks */
        if (so.row_end == so.row_begin && c < n) continue;
        if (!(rc = pch_vx_file_scan(f, &so, &part, &pdt, err)) &&
            !(rc = pch_vx__array_slice(&want, back, so.row_begin, (so.row_end ? so.row_end : back->len) - so.row_begin, err))) {
            bool eq = part->len == want->len && part->n_children == want->n_children;
            for (uint32_t i = 0; eq && i < part->n_children; i++) eq = pch_vx_array_equal(part->children[i], want->children[i]);
            if (c < n) count_codes_only(part);
            else if (g_codes_only) {    /* version 1: never codes only */
                uint64_t before = g_codes_only;
                count_codes_only(part);
                if (g_codes_only != before) rc = pch_error_set(err, PCH_ECORRUPT, "a version-1 scan returned codes only");
            }
            if (!eq && !rc) rc = pch_error_set(err, PCH_ECORRUPT, "a text-codes scan of rows [%llu, %llu) differs",
                                               (unsigned long long)so.row_begin, (unsigned long long)so.row_end);
        }
        pch_vx_array_free(part);
        pch_vx_array_free(want);
        pch_vx_dtype_free(pdt);
    }
    return rc;
}

static int roundtrip(const pch_vx_dtype *dt, pch_vx_array **chunks, size_t n, const pch_vx_write_options *o,
                     pch_error *err, pch_vx_writer **wout)
{
    pch_vx_writer *w = NULL;
    pch_vx_file *f = NULL;
    pch_vx_array *back = NULL, *all = NULL;
    pch_vx_dtype *bdt = NULL;
    pch_bytes bytes;
    int rc, eq;
    if ((rc = pch_vx_writer_open(&w, NULL, dt, o, err))) return rc;
    for (size_t i = 0; i < n; i++) if ((rc = write_chunk(w, o, i, chunks[i], err))) goto done;
    if ((rc = pch_vx_writer_finish(w, err))) goto done;
    bytes = pch_vx_writer_bytes(w);
    if (getenv("PCH_VX_DUMP_DIR")) {
        /* tests/cli/vortex_cli.sh runs the flatc structure check over these files */
        static int seq;
        char path[512];
        snprintf(path, sizeof path, "%s/rt_%03d.vortex", getenv("PCH_VX_DUMP_DIR"), seq++);
        if ((rc = pch_file_publish(path, bytes.ptr, bytes.len, err))) goto done;
    }
    if ((rc = stream_same(dt, chunks, n, o, bytes, err))) goto done;
    if ((rc = pch_vx_file_open_mem(&f, NULL, bytes.ptr, bytes.len, err))) goto done;
    if ((rc = pch_vx_file_check(f, err))) goto done;
    if ((rc = pch_vx_file_scan(f, NULL, &back, &bdt, err))) goto done;
    if ((rc = pch_vx__array_concat(&all, dt, NULL, chunks, n, err))) goto done;
    /* compare field by field (the scan's dtype is a copy of the file's) */
    eq = back->len == all->len && back->n_children == all->n_children;
    for (uint32_t i = 0; eq && i < back->n_children; i++) {
        pch_vx_array tmp = *all->children[i];
        tmp.dtype = back->children[i]->dtype;
        eq = pch_vx_dtype_equal(back->children[i]->dtype, all->children[i]->dtype) && pch_vx_array_equal(back->children[i], &tmp);
        if (!eq) {
            for (uint64_t r = 0; r < back->len; r++) {
                pch_vx_text t1 = { 0 }, t2 = { 0 };
                pch_vx_array_row_json(&t1, back->children[i], r);
                pch_vx_array_row_json(&t2, &tmp, r);
                if (strcmp(t1.ptr, t2.ptr)) { fprintf(stderr, "  field %u row %llu: got %s want %s\n", i, (unsigned long long)r, t1.ptr, t2.ptr); r = back->len; }
                pch_vx_text_dispose(&t1);
                pch_vx_text_dispose(&t2);
            }
        }
    }
    if (!eq) rc = pch_error_set(err, PCH_ECORRUPT, "round trip mismatch");
    if (!rc && !dict_codes_agree(back)) rc = pch_error_set(err, PCH_ECORRUPT, "dictionary codes disagree with the rows");
    if (!rc) rc = codes_scan_same(f, back, chunks, n, err);
    /* row-range reads (a point read's path: only the frames holding the rows decompress)
    ** give the same rows as the full scan; the second half read segments in part (only the
    ** blocks they need, each checked against the file's bytes) */
    for (int k = 0; !rc && k < 12 && all->len; k++) {
        if (k == 6) {
            g_blk.file = bytes.ptr;
            g_blk.f = f;
            g_blk.checked = 0;
            g_blk.corrupt_block = -1;
            g_blk.B = 64u << rndn(4);
            rc = pch_vx_file_set_partial_reads(f, g_blk.B, block_matches, &g_blk, err);
            if (rc) break;
        }
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *part = NULL, *want = NULL;
        pch_vx_dtype *pdt = NULL;
        so.row_begin = rndn(all->len);
        so.row_end = so.row_begin + 1 + rndn(k < 6 ? 3 : all->len - so.row_begin);
        if (so.row_end > all->len) so.row_end = all->len;
        if (!(rc = pch_vx_file_scan(f, &so, &part, &pdt, err)) &&
            !(rc = pch_vx__array_slice(&want, back, so.row_begin, so.row_end - so.row_begin, err))) {
            eq = part->len == want->len && part->n_children == want->n_children;
            for (uint32_t i = 0; eq && i < part->n_children; i++) eq = pch_vx_array_equal(part->children[i], want->children[i]);
            if (!eq) rc = pch_error_set(err, PCH_ECORRUPT, "rows [%llu, %llu) differ from the full scan",
                                        (unsigned long long)so.row_begin, (unsigned long long)so.row_end);
            /* a row's digest depends on its values alone: the written row, the full scan's and
            ** the range read's (dictionaries gathered in part, frames, slices) agree */
            for (uint64_t i = 0; !rc && i < part->len; i++) {
                uint8_t d1[32], d2[32], d3[32];
                pch_vx_row_digest(part, i, d1);
                pch_vx_row_digest(back, so.row_begin + i, d2);
                pch_vx_row_digest(all, so.row_begin + i, d3);
                if (memcmp(d1, d2, 32) || memcmp(d2, d3, 32))
                    rc = pch_error_set(err, PCH_ECORRUPT, "row %llu: the digests of the written, scanned and range-read row differ",
                                       (unsigned long long)(so.row_begin + i));
            }
        }
        pch_vx_array_free(part);
        pch_vx_array_free(want);
        pch_vx_dtype_free(pdt);
    }
done:
    pch_vx_array_free(back);
    pch_vx_dtype_free(bdt);
    pch_vx_array_free(all);
    pch_vx_file_free(f);
    if (wout && !rc) *wout = w;
    else pch_vx_writer_free(w);
    return rc;
}

/* A random schema of 1..5 fields (its text in *sb, initialised here) and its dtype. */
static int random_schema(pch_buf *sb, pch_vx_dtype **dt, pch_error *err)
{
    unsigned nf = 1 + (unsigned)rndn(5);
    pch_buf_init(sb, NULL);
    for (unsigned i = 0; i < nf; i++) {
        pch_buf_printf(sb, "%sc%u:", i ? "," : "", i);
        gen_type(sb, 0);
    }
    return pch_vx_dtype_parse(dt, NULL, (const char *)sb->data, err);
}

static void test_vortex_file__random_roundtrip(void)
{
    pch_error err;
    for (int iter = 0; iter < 60; iter++) {
        pch_buf sb;
        pch_vx_dtype *dt = NULL;
        pch_vx_builder *b = NULL;
        pch_vx_array *chunks[4] = { NULL, NULL, NULL, NULL };
        size_t nch = 1 + rndn(3);
        pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
        PCH_CHECK_OK(random_schema(&sb, &dt, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        for (size_t c = 0; c < nch; c++) {
            uint64_t rows = rndn(4) == 0 ? rndn(3) : rndn(3000);
            int mode = (int)rndn(4);
            for (uint64_t r = 0; r < rows; r++) PCH_CHECK_OK(gen_value(b, mode, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_finish(b, &chunks[c], &err), &err);
        }
        o.compress = iter % 3 != 0;
        o.zone_len = iter % 2 ? 1000 : 0;
        o.dict_layout = iter % 4 == 1;
        o.split_structs = iter % 5 != 0;
        o.sample_rows = 256;
        o.frame_bytes = iter % 2 ? 0 : 16u << rndn(8);   /* many small frames: ranges cross them */
        o.frame_rows = iter % 4 == 0 ? 1 + (uint32_t)rndn(16) : 0;   /* and frames of a few rows */
        o.frame_row_ratio = iter % 3 == 0 ? 1 + (uint32_t)rndn(16) : 0;   /* and of small rows */
        int rc = roundtrip(dt, chunks, nch, &o, &err, NULL);
        PCH_CHECK_MSG(rc == 0, "iter %d schema %s: %s", iter, (const char *)sb.data, err.msg);
        for (size_t c = 0; c < nch; c++) pch_vx_array_free(chunks[c]);
        pch_vx_builder_free(b);
        pch_vx_dtype_free(dt);
        pch_buf_dispose(&sb);
    }
    PCH_CHECK_MSG(g_codes_only > 0, "no text came back as codes only");
}

/* Row digests: equal rows of equal dtypes digest alike, whatever lies under a null (a null
** row's offsets or bytes are not data), and one changed value, a null, an element moved
** between lists or a split string changes the digest. */
static void test_vortex_file__row_digests(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL;
    uint8_t d[8][32];
    static const char *const rows[][3] = { { "ab", "c", NULL }, { "ab", "c", NULL }, { "a", "bc", NULL }, { "ab", "c", "" },
                                           { "ab", "d", NULL }, { "abc", NULL, NULL } };
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "k:utf8?,l:list<utf8>", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        pch_vx_builder *l = pch_vx_builder_child(b, 1);
        if (r == 1) PCH_CHECK_OK(pch_vx_builder_append_null(pch_vx_builder_child(b, 0), &err), &err);
        else PCH_CHECK_OK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 0), "x", 1, &err), &err);
        for (int k = 0; k < 3 && rows[r][k]; k++)
            PCH_CHECK_OK(pch_vx_builder_append_bytes(pch_vx_builder_child(l, 0), rows[r][k], strlen(rows[r][k]), &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(l, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
    for (uint64_t r = 0; r < a->len; r++) pch_vx_row_digest(a, r, d[r]);
    for (uint64_t r = 0; r < a->len; r++)
        for (uint64_t q = r + 1; q < a->len; q++)
            PCH_CHECK_MSG(memcmp(d[r], d[q], 32) != 0, "rows %llu and %llu digest alike", (unsigned long long)r, (unsigned long long)q);
    /* the bytes under row 1's null are not data: changing them leaves its digest */
    {
        uint8_t again[32];
        a->children[0]->offsets[1] = a->children[0]->offsets[0];   /* row 1 ("x" of row 0 still there) */
        pch_vx_row_digest(a, 1, again);
        PCH_CHECK_MSG(memcmp(again, d[1], 32) == 0, "a null row's digest depends on what lies under it");
    }
    pch_vx_array_free(a);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

static void test_vortex_file__nested_nulls_and_big_strings(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunk = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    char *big = malloc((size_t)5 << 20);
    PCH_CHECK(big != NULL);
    for (size_t i = 0; i < ((size_t)5 << 20); i++) big[i] = (char)('a' + i % 26);
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "k:i64,l:list<struct<s:utf8?,n:list<i32?>?>?>?,big:utf8", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    pch_vx_builder *k = pch_vx_builder_child(b, 0), *l = pch_vx_builder_child(b, 1), *bg = pch_vx_builder_child(b, 2);
    pch_vx_builder *st = pch_vx_builder_child(l, 0), *s = pch_vx_builder_child(st, 0), *nl = pch_vx_builder_child(st, 1);
    pch_vx_builder *ni = pch_vx_builder_child(nl, 0);
    for (int r = 0; r < 40; r++) {
        PCH_CHECK_OK(pch_vx_builder_append_int(k, r % 2 ? INT64_MIN : INT64_MAX, &err), &err);
        switch (r % 5) {
        case 0: PCH_CHECK_OK(pch_vx_builder_append_null(l, &err), &err); break;   /* null list */
        case 1: PCH_CHECK_OK(pch_vx_builder_append_valid(l, &err), &err); break;  /* empty list */
        case 2:                                                                   /* list of a null struct */
            PCH_CHECK_OK(pch_vx_builder_append_null(st, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(l, &err), &err);
            break;
        default:
            PCH_CHECK_OK(pch_vx_builder_append_bytes(s, "", 0, &err), &err);       /* empty string */
            PCH_CHECK_OK(pch_vx_builder_append_null(ni, &err), &err);              /* null element */
            PCH_CHECK_OK(pch_vx_builder_append_int(ni, INT32_MIN, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(nl, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(st, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_null(s, &err), &err);               /* null string */
            PCH_CHECK_OK(pch_vx_builder_append_null(nl, &err), &err);              /* null inner list */
            PCH_CHECK_OK(pch_vx_builder_append_valid(st, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(l, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_append_bytes(bg, big, r == 3 ? ((size_t)5 << 20) : (size_t)r, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &chunk, &err), &err);
    for (int c = 0; c < 2; c++) {
        o.compress = c;
        PCH_CHECK_OK(roundtrip(dt, &chunk, 1, &o, &err, NULL), &err);
    }
    pch_vx_array_free(chunk);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
    free(big);
}

/* ------------------------------------------------------------------ §9.2 worked example */

static int build_example(pch_vx_dtype **dt_out, pch_vx_array **out, pch_error *err)
{
    pch_vx_builder *b;
    PCH_TRY(pch_vx_dtype_parse(dt_out, NULL, "id:i64,name:utf8?,items:list<struct<a:i32,b:utf8?>>?", err));
    PCH_TRY(pch_vx_builder_new(&b, NULL, *dt_out, err));
    pch_vx_builder *id = pch_vx_builder_child(b, 0), *nm = pch_vx_builder_child(b, 1), *it = pch_vx_builder_child(b, 2);
    pch_vx_builder *st = pch_vx_builder_child(it, 0), *a = pch_vx_builder_child(st, 0), *bb = pch_vx_builder_child(st, 1);
    for (int r = 0; r < 5; r++) {
        pch_vx_builder_append_int(id, r + 1, err);
        if (r == 2) pch_vx_builder_append_null(nm, err);
        else pch_vx_builder_append_bytes(nm, r == 4 ? "" : "alice", r == 4 ? 0 : 5, err);
        if (r == 1) pch_vx_builder_append_null(it, err);
        else {
            for (int e = 0; e < r; e++) {
                pch_vx_builder_append_int(a, 10 * r + e, err);
                if (e == 1) pch_vx_builder_append_null(bb, err);
                else pch_vx_builder_append_bytes(bb, "x", 1, err);
                pch_vx_builder_append_valid(st, err);
            }
            pch_vx_builder_append_valid(it, err);
        }
        PCH_TRY(pch_vx_builder_append_valid(b, err));
    }
    int rc = pch_vx_builder_finish(b, out, err);
    pch_vx_builder_free(b);
    return rc;
}

static void test_vortex_file__worked_example_golden(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_array *a = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_buf golden;
    pch_bytes bytes;
    o.compress = 0;
    o.zone_len = 0;
    o.dict_layout = 0;
    PCH_CHECK_OK(build_example(&dt, &a, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_open(&w, NULL, dt, &o, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_write(w, a, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_finish(w, &err), &err);
    bytes = pch_vx_writer_bytes(w);
    /* §0/§9.2: leading magic, trailer "01 00 <len> VTXF" */
    PCH_CHECK(memcmp(bytes.ptr, "VTXF", 4) == 0);
    PCH_CHECK(memcmp(bytes.ptr + bytes.len - 4, "VTXF", 4) == 0);
    PCH_CHECK(bytes.ptr[bytes.len - 8] == 1 && bytes.ptr[bytes.len - 7] == 0);
    /* §9.2 metadata bytes appear: varbin offsets I32 = 08 06, list = 08 <E> 10 06 (E = 10 elements) */
    {
        int found_list = 0;
        for (size_t i = 0; i + 4 <= bytes.len; i++)
            if (memcmp(bytes.ptr + i, "\x04\x00\x00\x00\x08\x09\x10\x06", 8) == 0) found_list = 1;
        PCH_CHECK(found_list);
    }
    if (getenv("PCH_GOLDEN_UPDATE")) {
        PCH_CHECK_OK(pch_file_publish(DATA_DIR "worked_example.vortex", bytes.ptr, bytes.len, &err), &err);
    }
    pch_buf_init(&golden, NULL);
    PCH_CHECK_OK(pch_file_read_all(&golden, DATA_DIR "worked_example.vortex", 1 << 20, &err), &err);
    PCH_CHECK_MSG(golden.len == bytes.len && memcmp(golden.data, bytes.ptr, bytes.len) == 0,
                  "bytes differ from the golden file (%zu vs %zu bytes); PCH_GOLDEN_UPDATE=1 rewrites it", golden.len, bytes.len);
    /* and the golden file reads back to the same rows */
    {
        pch_vx_file *f = NULL;
        pch_vx_array *back = NULL;
        pch_vx_dtype *bdt = NULL;
        pch_vx_text t = { 0 };
        PCH_CHECK_OK(pch_vx_file_open_mem(&f, NULL, golden.data, golden.len, &err), &err);
        PCH_CHECK_OK(pch_vx_file_scan(f, NULL, &back, &bdt, &err), &err);
        PCH_CHECK(back->len == 5);
        pch_vx_array_row_json(&t, back, 3);
        PCH_CHECK_EQ_STR(t.ptr, "{\"id\":4,\"name\":\"alice\",\"items\":[{\"a\":30,\"b\":\"x\"},{\"a\":31,\"b\":null},{\"a\":32,\"b\":\"x\"}]}");
        pch_vx_text_dispose(&t);
        pch_vx_array_row_json(&t, back, 1);
        PCH_CHECK_EQ_STR(t.ptr, "{\"id\":2,\"name\":\"alice\",\"items\":null}");
        pch_vx_text_dispose(&t);
        pch_vx_array_free(back);
        pch_vx_dtype_free(bdt);
        pch_vx_file_free(f);
    }
    pch_buf_dispose(&golden);
    pch_vx_writer_free(w);
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

static void test_vortex_file__legacy_rejected(void)
{
    pch_error err;
    pch_vx_file *f = NULL;
    int rc = pch_vx_file_open(&f, NULL, DATA_DIR "legacy-pre036-example.vortex", &err);
    PCH_CHECK(rc == PCH_EUNSUPPORTED);
    PCH_CHECK(f == NULL);
    PCH_CHECK(strstr(err.msg, "pre-0.36") != NULL);
}

/* The FSST memo of options version 4 carries over from one writer to the next: the lanes'
** chunk counters continue, the files are the same bytes as without it (FSST loses on this
** data either way), and version-3 options (no memo) are still taken. */
static void test_vortex_file__fsst_memo_carries(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_array *a = NULL;
    uint32_t memo[2 * 64];
    pch_bytes with[2], without[2];
    pch_vx_writer *ww[2] = { NULL, NULL }, *wo[2] = { NULL, NULL };
    uint32_t chunks = 0;
    memset(memo, 0, sizeof memo);
    PCH_CHECK_OK(build_example(&dt, &a, &err), &err);
    for (int k = 0; k < 2; k++) {
        pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT, o3 = PCH_VX_WRITE_OPTIONS_INIT;
        o.fsst_memo = memo;
        o.fsst_memo_len = sizeof memo / sizeof *memo;
        o3.version = 3;
        PCH_CHECK_OK(pch_vx_writer_open(&ww[k], NULL, dt, &o, &err), &err);
        PCH_CHECK_OK(pch_vx_writer_open(&wo[k], NULL, dt, &o3, &err), &err);
        for (int c = 0; c < 3; c++) {
            PCH_CHECK_OK(pch_vx_writer_write(ww[k], a, &err), &err);
            PCH_CHECK_OK(pch_vx_writer_write(wo[k], a, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_writer_finish(ww[k], &err), &err);
        PCH_CHECK_OK(pch_vx_writer_finish(wo[k], &err), &err);
        with[k] = pch_vx_writer_bytes(ww[k]);
        without[k] = pch_vx_writer_bytes(wo[k]);
        PCH_CHECK(with[k].len == without[k].len && memcmp(with[k].ptr, without[k].ptr, with[k].len) == 0);
    }
    for (size_t i = 1; i < sizeof memo / sizeof *memo; i += 2) if (memo[i] > chunks) chunks = memo[i];
    PCH_CHECK_MSG(chunks == 6, "a lane's chunk counter after two files of 3 chunks: %u", chunks);
    for (int k = 0; k < 2; k++) { pch_vx_writer_free(ww[k]); pch_vx_writer_free(wo[k]); }
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

/* Every truncation and many byte flips of a small file: errors, never crashes. */
static void test_vortex_file__corruption(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_array *a = NULL;
    pch_vx_writer *w = NULL;
    pch_bytes bytes;
    uint8_t *copy;
    int failures = 0;
    PCH_CHECK_OK(build_example(&dt, &a, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_open(&w, NULL, dt, NULL, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_write(w, a, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_finish(w, &err), &err);
    bytes = pch_vx_writer_bytes(w);
    copy = malloc(bytes.len);
    for (size_t cut = 0; cut < bytes.len; cut += 7) {
        pch_vx_file *f = NULL;
        memcpy(copy, bytes.ptr, cut);
        if (pch_vx_file_open_mem(&f, NULL, copy, cut, &err) == 0) failures++;
        pch_vx_file_free(f);
    }
    PCH_CHECK_EQ_INT(failures, 0);
    for (size_t pos = 0; pos < bytes.len; pos++) {
        for (int bit = 0; bit < 8; bit += 3) {
            pch_vx_file *f = NULL;
            pch_vx_array *out = NULL;
            pch_vx_dtype *odt = NULL;
            memcpy(copy, bytes.ptr, bytes.len);
            copy[pos] ^= (uint8_t)(1u << bit);
            if (pch_vx_file_open_mem(&f, NULL, copy, bytes.len, &err) == 0) {
                if (pch_vx_file_check(f, &err) == 0 && pch_vx_file_scan(f, NULL, &out, &odt, &err) == 0) {
                    pch_vx_array_free(out);
                    pch_vx_dtype_free(odt);
                }
            }
            pch_vx_file_free(f);
        }
    }
    free(copy);
    pch_vx_writer_free(w);
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

/* ------------------------------------------------------------------ multi-frame zstd (§7.2) */

/* Count the frames of every vortex.zstd node of a tree (ZstdMetadata.frames = buffers). */
static uint64_t zstd_frames(const pch_vx_enode *n, uint64_t *nodes)
{
    uint64_t c = 0;
    if (n->enc == PCH_VX_E_ZSTD) { c += n->n_bufs + n->n_xbufs; (*nodes)++; }
    for (uint32_t i = 0; i < n->n_children; i++) c += zstd_frames(n->children[i], nodes);
    return c;
}

/* Identity encoding maps and a decode context over them, for node trees serialized in tests. */
typedef struct segio {
    uint16_t map[PCH_VX_E_COUNT];
    int16_t smap[PCH_VX_E_COUNT];
    pch_vx_decode_ctx dc;
} segio;

static void segio_init(segio *io)
{
    for (int i = 0; i < PCH_VX_E_COUNT; i++) { io->map[i] = (uint16_t)i; io->smap[i] = (int16_t)i; }
    io->dc.ctx = NULL;
    io->dc.spec_map = io->smap;
    io->dc.n_specs = PCH_VX_E_COUNT;
    io->dc.text_codes = false;
}

static int segio_serialize(segio *io, pch_buf *seg, const pch_vx_enode *root, pch_error *err)
{
    uint8_t used[PCH_VX_E_COUNT], ae;
    memset(used, 0, sizeof used);
    seg->len = 0;
    return pch_vx__serialize(seg, root, io->map, used, &ae, err);
}

/* A list<utf8?> array encoded as list(zstd) with frames cut at row boundaries: several
** frames, each row-range decode equal to the slice of the whole decode, a flipped byte in a
** frame refused with a frame-naming error. PCH_VX_SEED_DIR receives fuzz seeds
** (fuzz/vortex_array input: dtype index, le16 rows, segment). */
static void test_vortex_file__multi_frame_ranges(void)
{
    static const char *const types[] = { "list<utf8?>?", "utf8?", "i32?" };
    static const uint8_t type_idx[] = { 255, 7, 1 };   /* fuzz/vortex_array's dtype table */
    pch_error err;
    for (size_t t = 0; t < 3; t++) {
        pch_vx_dtype *dt = NULL;
        pch_vx_builder *b = NULL;
        pch_vx_array *a = NULL, *full = NULL;
        pch_vx_encoder e;
        pch_vx_enode *root = NULL;
        pch_arena arena;
        pch_buf seg;
        uint16_t map[PCH_VX_E_COUNT];
        int16_t smap[PCH_VX_E_COUNT];
        uint8_t used[PCH_VX_E_COUNT], ae;
        pch_vx_decode_ctx dc;
        uint64_t nodes = 0, frames, rows = 400;
        PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, types[t], &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        for (uint64_t r = 0; r < rows; r++) {
            pch_vx_builder *leaf = t == 0 ? pch_vx_builder_child(b, 0) : b;
            uint64_t n = t == 0 ? rndn(5) : 1;
            if (r % 17 == 3) { PCH_CHECK_OK(pch_vx_builder_append_null(b, &err), &err); continue; }
            for (uint64_t k = 0; k < n; k++) {
                char txt[96];
                int len = snprintf(txt, sizeof txt, "row %llu value %llu %llx", (unsigned long long)r, (unsigned long long)k, (unsigned long long)rnd());
                if (k == 2) PCH_CHECK_OK(pch_vx_builder_append_null(leaf, &err), &err);
                else if (t == 2) PCH_CHECK_OK(pch_vx_builder_append_int(leaf, (int64_t)(rnd() % 1000000), &err), &err);
                else PCH_CHECK_OK(pch_vx_builder_append_bytes(leaf, txt, (size_t)len, &err), &err);
            }
            if (t == 0) PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
        pch_arena_init(&arena, NULL, 1 << 16);
        pch_buf_init(&seg, NULL);
        memset(&e, 0, sizeof e);
        e.arena = &arena;
        e.frame_bytes = t == 2 ? 64 : 512;
        e.cut_arr = a;
        /* zstd forced: list(zstd) with the cuts the list carries down, or a zstd leaf */
        if (t != 0) {
            PCH_CHECK_OK(pch_vx__encode_zstd(&e, a, &root, &err), &err);
        } else {
            pch_vx_enode *z = NULL;
            pch_vx_encoder sub = e;
            uint64_t *cc = pch_arena_alloc(&arena, (size_t)(a->len + 1) * 8);
            for (uint64_t i = 0; i <= a->len; i++) cc[i] = (uint64_t)a->offsets[i];
            sub.cut_arr = a->children[0];
            sub.cuts = cc;
            sub.n_cuts = a->len + 1;
            PCH_CHECK_OK(pch_vx__encode_canonical(&e, a, &root, &err), &err);
            PCH_CHECK_OK(pch_vx__encode_zstd(&sub, a->children[0], &z, &err), &err);
            root->children[0] = z;
        }
        frames = zstd_frames(root, &nodes);
        PCH_CHECK_MSG(nodes == 1 && frames > 8, "%s: %llu zstd nodes, %llu frames", types[t], (unsigned long long)nodes, (unsigned long long)frames);
        for (int i = 0; i < PCH_VX_E_COUNT; i++) { map[i] = (uint16_t)i; smap[i] = (int16_t)i; }
        memset(used, 0, sizeof used);
        PCH_CHECK_OK(pch_vx__serialize(&seg, root, map, used, &ae, &err), &err);
        dc.ctx = NULL;
        dc.spec_map = smap;
        dc.n_specs = PCH_VX_E_COUNT;
        dc.text_codes = false;
        PCH_CHECK_OK(pch_vx__deserialize(&full, &dc, seg.data, seg.len, dt, rows, &err), &err);
        PCH_CHECK(pch_vx_array_equal(full, a));
        for (uint64_t bgn = 0; bgn < rows; bgn += 1 + rndn(23)) {
            uint64_t n = 1 + rndn(bgn % 3 ? 3 : 60);
            pch_vx_array *part = NULL, *want = NULL;
            if (n > rows - bgn) n = rows - bgn;
            PCH_CHECK_OK(pch_vx__deserialize_range(&part, &dc, seg.data, seg.len, dt, rows, bgn, n, &err), &err);
            PCH_CHECK_OK(pch_vx__array_slice(&want, a, bgn, n, &err), &err);
            PCH_CHECK_MSG(part && pch_vx_array_equal(part, want), "%s rows %llu+%llu", types[t], (unsigned long long)bgn, (unsigned long long)n);
            pch_vx_array_free(part);
            pch_vx_array_free(want);
        }
        if (getenv("PCH_VX_SEED_DIR") && type_idx[t] != 255) {
            char path[512];
            pch_buf fz;
            pch_buf_init(&fz, NULL);
            pch_buf_putc(&fz, (char)type_idx[t]);
            pch_buf_put_le16(&fz, (uint16_t)rows);
            pch_buf_append(&fz, seg.data, seg.len);
            snprintf(path, sizeof path, "%s/multi_frame_%zu", getenv("PCH_VX_SEED_DIR"), t);
            PCH_CHECK_OK(pch_file_publish(path, fz.data, fz.len, &err), &err);
            pch_buf_dispose(&fz);
        }
        {
            /* a flipped byte inside the third frame: the range that needs it fails closed
            ** naming the frame; a range before it still reads */
            const pch_vx_enode *z = t == 0 ? root->children[0] : root;
            const uint8_t *f2 = z->n_bufs > 2 ? z->buf[2] : z->xbuf[2 - z->n_bufs];
            size_t f2len = z->n_bufs > 2 ? z->buf_len[2] : z->xbuf_len[2 - z->n_bufs];
            const uint8_t *at = memmem(seg.data, seg.len, f2, f2len);   /* the whole frame: unique */
            size_t off = at ? (size_t)(at - seg.data) : 0;
            pch_vx_array *part = NULL;
            int rc;
            PCH_CHECK(off > 0);
            seg.data[off + 6] ^= 0x5a;
            rc = pch_vx__deserialize(&part, &dc, seg.data, seg.len, dt, rows, &err);
            PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "zstd"), "rc %d: %s", rc, err.msg);
            rc = pch_vx__deserialize_range(&part, &dc, seg.data, seg.len, dt, rows, 0, rows, &err);
            PCH_CHECK(rc == PCH_ECORRUPT);
            {
                int bad = 0;
                for (uint64_t r = 0; r < rows && !bad; r++) {
                    rc = pch_vx__deserialize_range(&part, &dc, seg.data, seg.len, dt, rows, r, 1, &err);
                    if (rc == 0) pch_vx_array_free(part);
                    else { bad = 1; PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "frame"), "rc %d: %s", rc, err.msg); PCH_CHECK(r > 0); }
                }
                PCH_CHECK(bad);
            }
        }
        pch_vx_array_free(full);
        pch_buf_dispose(&seg);
        pch_arena_dispose(&arena);
        pch_vx_array_free(a);
        pch_vx_builder_free(b);
        pch_vx_dtype_free(dt);
    }
}

/* A framed utf8? array with a trained zstd dictionary its frames share (standard vortex.zstd:
** buffer 0 is the dictionary, ZstdMetadata.dictionary_size its length): smaller than the
** same frames without it, the whole decode and row ranges (one frame, several) equal the
** values, a payload below PCH_VX_ZSTD_DICT_RATIO x the size trains none, and a damaged
** dictionary (its id, which every frame names) fails closed. */
static void test_vortex_file__zstd_dictionary(void)
{
    static const char *const words[] = { "the tool returned", "error: file not found", "def main():",
                                         "    return self.value", "import numpy as np", "assistant:",
                                         "pytest -q tests/", "Traceback (most recent call last):" };
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL, *full = NULL;
    uint64_t rows = 3000, with_size = 0, without_size = 0;
    segio io;
    pch_buf seg;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "utf8?", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (uint64_t r = 0; r < rows; r++) {
        char txt[400];
        int len = 0;
        if (r % 31 == 7) { PCH_CHECK_OK(pch_vx_builder_append_null(b, &err), &err); continue; }
        for (int k = 0; k < 6; k++)
            len += snprintf(txt + len, sizeof txt - (size_t)len, "%s %llu; ", words[rnd() % 8], (unsigned long long)(rnd() % 100000));
        PCH_CHECK_OK(pch_vx_builder_append_bytes(b, txt, (size_t)len, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
    segio_init(&io);
    pch_buf_init(&seg, NULL);
    for (int pass = 0; pass < 3; pass++) {   /* 0: with a dictionary, 1: none, 2: payload too small */
        pch_vx_encoder e;
        pch_vx_enode *root = NULL;
        pch_arena arena;
        uint64_t nodes = 0;
        pch_arena_init(&arena, NULL, 1 << 16);
        memset(&e, 0, sizeof e);
        e.arena = &arena;
        e.frame_bytes = 4096;
        e.cut_arr = a;
        e.dict_bytes = pass == 1 ? 0 : pass == 0 ? 4096 : (uint32_t)(a->data_len / PCH_VX_ZSTD_DICT_RATIO + 4096);
        PCH_CHECK_OK(pch_vx__encode_zstd(&e, a, &root, &err), &err);
        PCH_CHECK(zstd_frames(root, &nodes) > 50);
        PCH_CHECK_OK(segio_serialize(&io, &seg, root, &err), &err);
        /* a trained dictionary starts with the zstd dictionary magic */
        PCH_CHECK_MSG((pass == 0) == (root->buf_len[0] > 8 && pch_load_le32(root->buf[0]) == 0xEC30A437u),
                      "pass %d: buffer 0 of %zu bytes", pass, root->buf_len[0]);
        if (pass == 0) with_size = seg.len;
        if (pass == 1) without_size = seg.len;
        PCH_CHECK_OK(pch_vx__deserialize(&full, &io.dc, seg.data, seg.len, dt, rows, &err), &err);
        PCH_CHECK(pch_vx_array_equal(full, a));
        pch_vx_array_free(full);
        full = NULL;
        for (uint64_t bgn = 0; bgn < rows; bgn += 1 + rndn(97)) {
            uint64_t n = 1 + rndn(bgn % 3 ? 3 : 200);
            pch_vx_array *part = NULL, *want = NULL;
            if (n > rows - bgn) n = rows - bgn;
            PCH_CHECK_OK(pch_vx__deserialize_range(&part, &io.dc, seg.data, seg.len, dt, rows, bgn, n, &err), &err);
            PCH_CHECK_OK(pch_vx__array_slice(&want, a, bgn, n, &err), &err);
            PCH_CHECK_MSG(part && pch_vx_array_equal(part, want), "pass %d rows %llu+%llu", pass, (unsigned long long)bgn, (unsigned long long)n);
            pch_vx_array_free(part);
            pch_vx_array_free(want);
        }
        if (pass == 0) {
            /* the dictionary id (bytes 4..7) no longer matches the frames': every read fails */
            const uint8_t *at = memmem(seg.data, seg.len, root->buf[0], root->buf_len[0]);
            pch_vx_array *part = NULL;
            int rc;
            PCH_CHECK(at != NULL);
            if (at) {
                seg.data[(size_t)(at - seg.data) + 5] ^= 0x21;
                rc = pch_vx__deserialize(&part, &io.dc, seg.data, seg.len, dt, rows, &err);
                PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "zstd"), "rc %d: %s", rc, err.msg);
                rc = pch_vx__deserialize_range(&part, &io.dc, seg.data, seg.len, dt, rows, 10, 1, &err);
                PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "frame"), "rc %d: %s", rc, err.msg);
            }
            if (getenv("PCH_VX_SEED_DIR")) {
                /* fuzz/vortex_array (dtype 7 = utf8?, inputs up to 64 KiB): 700 rows, a
                ** 1 KiB dictionary */
                char path[512];
                pch_buf fz, small;
                pch_vx_array *head = NULL;
                pch_vx_enode *sroot = NULL;
                PCH_CHECK_OK(pch_vx__array_slice(&head, a, 0, 700, &err), &err);
                e.cut_arr = head;
                e.dict_bytes = 1024;
                PCH_CHECK_OK(pch_vx__encode_zstd(&e, head, &sroot, &err), &err);
                PCH_CHECK(sroot->buf_len[0] > 8 && pch_load_le32(sroot->buf[0]) == 0xEC30A437u);
                pch_buf_init(&small, NULL);
                PCH_CHECK_OK(segio_serialize(&io, &small, sroot, &err), &err);
                pch_buf_init(&fz, NULL);
                pch_buf_putc(&fz, 7);
                pch_buf_put_le16(&fz, 700);
                pch_buf_append(&fz, small.data, small.len);
                pch_buf_dispose(&small);
                pch_vx_array_free(head);
                snprintf(path, sizeof path, "%s/zstd_dictionary", getenv("PCH_VX_SEED_DIR"));
                PCH_CHECK_OK(pch_file_publish(path, fz.data, fz.len, &err), &err);
                pch_buf_dispose(&fz);
            }
        }
        pch_arena_dispose(&arena);
    }
    PCH_CHECK_MSG(with_size < without_size, "with a dictionary %llu bytes, without %llu",
                  (unsigned long long)with_size, (unsigned long long)without_size);
    pch_buf_dispose(&seg);
    pch_vx_array_free(a);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

static int sum_fill(void *payload, size_t off, size_t len, pch_error *err)
{
    (void)off;
    (void)err;
    *(size_t *)payload += len;
    return 0;
}

/* vortex.bool row ranges (values and a validity bitmap): each range equals the slice, and one
** row of 100,000 reads a few bytes of each bitmap, not the whole segment. */
static void test_vortex_file__bool_ranges(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL;
    pch_vx_encoder e;
    pch_vx_enode *root = NULL;
    pch_arena arena;
    pch_buf seg;
    segio io;
    uint64_t rows = 100000;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "bool?", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (uint64_t r = 0; r < rows; r++) {
        if (rnd() % 5 == 0) PCH_CHECK_OK(pch_vx_builder_append_null(b, &err), &err);
        else PCH_CHECK_OK(pch_vx_builder_append_bool(b, (int)(rnd() & 1), &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
    pch_arena_init(&arena, NULL, 1 << 16);
    pch_buf_init(&seg, NULL);
    memset(&e, 0, sizeof e);
    e.arena = &arena;
    PCH_CHECK_OK(pch_vx__encode_canonical(&e, a, &root, &err), &err);
    PCH_CHECK(root->enc == PCH_VX_E_BOOL && root->n_children == 1 && root->children[0]->enc == PCH_VX_E_BOOL);
    segio_init(&io);
    PCH_CHECK_OK(segio_serialize(&io, &seg, root, &err), &err);
    for (uint64_t bgn = 0; bgn < rows; bgn += 1 + rndn(4000)) {
        uint64_t n = 1 + rndn(bgn % 2 ? 20 : 3000);
        size_t filled = 0;
        pch_vx_array *part = NULL, *want = NULL;
        if (n > rows - bgn) n = rows - bgn;
        PCH_CHECK_OK(pch_vx__deserialize_range_sparse(&part, &io.dc, seg.data, seg.len, dt, rows, bgn, n, sum_fill, &filled, &err), &err);
        PCH_CHECK_OK(pch_vx__array_slice(&want, a, bgn, n, &err), &err);
        PCH_CHECK_MSG(part && pch_vx_array_equal(part, want), "rows %llu+%llu", (unsigned long long)bgn, (unsigned long long)n);
        if (n == 1) PCH_CHECK_MSG(filled <= 4, "one row read %zu bytes", filled);
        pch_vx_array_free(part);
        pch_vx_array_free(want);
    }
    pch_buf_dispose(&seg);
    pch_arena_dispose(&arena);
    pch_vx_array_free(a);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

/* Rows [bgn, bgn + n) of the serialized array seg (rows rows of dt, from a) read as a range equal
** the slice of a. */
static void check_range(segio *io, const pch_buf *seg, const pch_vx_dtype *dt, const pch_vx_array *a, uint64_t rows,
                        uint64_t bgn, uint64_t n, const char *what)
{
    pch_error err;
    pch_vx_array *part = NULL, *want = NULL;
    PCH_CHECK_OK(pch_vx__deserialize_range(&part, &io->dc, seg->data, seg->len, dt, rows, bgn, n, &err), &err);
    PCH_CHECK_OK(pch_vx__array_slice(&want, a, bgn, n, &err), &err);
    PCH_CHECK_MSG(part && pch_vx_array_equal(part, want), "%s rows %llu+%llu", what, (unsigned long long)bgn, (unsigned long long)n);
    pch_vx_array_free(part);
    pch_vx_array_free(want);
}

/* vortex.sparse row ranges (a fill value and patches, as the sampling compressor writes a
** mostly-null lane): each range equals the slice of the whole array — ranges with no patch,
** with one, with many, at both ends — for integer and string values. */
static void test_vortex_file__sparse_ranges(void)
{
    static const char *const types[] = { "i32?", "utf8?" };
    for (int t = 0; t < 2; t++) {
        pch_error err;
        pch_vx_dtype *dt = NULL;
        pch_vx_builder *b = NULL;
        pch_vx_array *a = NULL;
        pch_vx_encoder e;
        pch_vx_enode *root = NULL;
        pch_arena arena;
        pch_buf seg;
        segio io;
        uint64_t rows = 50000;
        PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, types[t], &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        for (uint64_t r = 0; r < rows; r++) {
            int patch = r == 0 || r == rows - 1 || rnd() % (t ? 1499 : 97) == 0;
            if (!patch) { PCH_CHECK_OK(pch_vx_builder_append_null(b, &err), &err); continue; }   /* fill null */
            if (t == 0) PCH_CHECK_OK(pch_vx_builder_append_int(b, (int64_t)(rnd() % 100000) - 50000, &err), &err);
            else {
                char txt[48];
                int n = snprintf(txt, sizeof txt, "value %llu of a sparse lane", (unsigned long long)rnd() % 1000000);
                PCH_CHECK_OK(pch_vx_builder_append_bytes(b, txt, (size_t)n, &err), &err);
            }
        }
        PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
        pch_arena_init(&arena, NULL, 1 << 16);
        pch_buf_init(&seg, NULL);
        memset(&e, 0, sizeof e);
        e.arena = &arena;
        e.compress = 1;                         /* the sampling compressor, as the writer runs it */
        PCH_CHECK_OK(pch_vx__encode(&e, a, &root, &err), &err);
        PCH_CHECK_MSG(root->enc == PCH_VX_E_SPARSE, "%s: encoding %s", types[t], pch_vx__enc_ids[root->enc]);
        segio_init(&io);
        PCH_CHECK_OK(segio_serialize(&io, &seg, root, &err), &err);
        for (uint64_t bgn = 0; bgn < rows; bgn += 1 + rndn(2000)) {
            uint64_t n = 1 + rndn(bgn % 2 ? 5 : 900);
            check_range(&io, &seg, dt, a, rows, bgn, n > rows - bgn ? rows - bgn : n, types[t]);
        }
        check_range(&io, &seg, dt, a, rows, 0, 1, types[t]);          /* the first and the last row, both patches */
        check_range(&io, &seg, dt, a, rows, rows - 1, 1, types[t]);
        pch_buf_dispose(&seg);
        pch_arena_dispose(&arena);
        pch_vx_array_free(a);
        pch_vx_builder_free(b);
        pch_vx_dtype_free(dt);
    }
}

/* A node tree built by hand, serialized with every encoding at its own index (out), and the
** decode context that reads it back (smap: its spec map, kept by the caller). */
static void serialize_hand_built(pch_buf *out, const pch_vx_enode *root, int16_t smap[PCH_VX_E_COUNT], pch_vx_decode_ctx *dc)
{
    uint16_t map[PCH_VX_E_COUNT];
    uint8_t used[PCH_VX_E_COUNT], ae;
    pch_error err;
    for (int i = 0; i < PCH_VX_E_COUNT; i++) { map[i] = (uint16_t)i; smap[i] = (int16_t)i; }
    memset(used, 0, sizeof used);
    PCH_CHECK_OK(pch_vx__serialize(out, root, map, used, &ae, &err), &err);
    dc->ctx = NULL;
    dc->spec_map = smap;
    dc->n_specs = PCH_VX_E_COUNT;
    dc->text_codes = false;
}

/* vortex.runend row ranges (runs of equal values, as other writers and our compressor make
** them), built node by node with an offset: each range equals the slice of the whole array —
** inside a run, across runs, at both ends — for integer and nullable string values; ends that
** do not increase fail closed, whole and for any range. */
static void test_vortex_file__runend_ranges(void)
{
    static const char *const types[] = { "u64", "utf8?" };
    for (int t = 0; t < 2; t++) {
        const uint64_t off = 7;
        pch_error err;
        pch_vx_dtype *dt = NULL, *edt = NULL;
        pch_vx_builder *b = NULL, *vb = NULL;
        pch_vx_array *want = NULL, *vals = NULL, *ends = NULL, *full = NULL;
        pch_vx_encoder e;
        pch_vx_enode root, *kids[2];
        pch_arena arena;
        pch_buf seg, meta;
        int16_t smap[PCH_VX_E_COUNT];
        pch_vx_decode_ctx dc;
        uint64_t rows = 0, nruns = 0, endv[400];
        PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, types[t], &err), &err);
        PCH_CHECK_OK(pch_vx_dtype_parse(&edt, NULL, "u32", &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&vb, NULL, dt, &err), &err);
        for (uint64_t run = 0; run < 400; run++, nruns++) {
            uint64_t n = run % 3 ? 1 + rndn(3) : 1 + rndn(300), v = rnd() % 1000000;
            bool null = t && run % 5 == 3;
            char txt[48];
            int m = snprintf(txt, sizeof txt, "run %llu value %llu", (unsigned long long)run, (unsigned long long)v);
            for (pch_vx_builder *x = vb; x; x = x == vb ? b : NULL)
                for (uint64_t k = 0; k < (x == vb ? 1 : n); k++) {
                    if (t == 0) PCH_CHECK_OK(pch_vx_builder_append_uint(x, v, &err), &err);
                    else if (null) PCH_CHECK_OK(pch_vx_builder_append_null(x, &err), &err);
                    else PCH_CHECK_OK(pch_vx_builder_append_bytes(x, txt, (size_t)m, &err), &err);
                }
            rows += n;
            endv[run] = off + rows;
        }
        PCH_CHECK_OK(pch_vx_builder_finish(b, &want, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_finish(vb, &vals, &err), &err);
        ends = pch_vx__array_new(NULL, edt, nruns, 0);
        PCH_CHECK(ends && pch_vx__array_alloc_data(ends, (size_t)nruns * 4) == 0);
        for (uint64_t r = 0; r < nruns; r++) pch_store_le32(ends->data + 4 * r, (uint32_t)endv[r]);
        pch_arena_init(&arena, NULL, 1 << 16);
        pch_buf_init(&seg, NULL);
        pch_buf_init(&meta, NULL);
        memset(&e, 0, sizeof e);
        e.arena = &arena;
        PCH_CHECK_OK(pch_vx__encode_canonical(&e, ends, &kids[0], &err), &err);
        PCH_CHECK_OK(pch_vx__encode_canonical(&e, vals, &kids[1], &err), &err);
        /* RunEndMetadata: 1 ends ptype, 2 number of runs, 3 offset */
        pch_buf_putc(&meta, 0x08); pch_vx__pb_varint(&meta, PCH_VX_U32);
        pch_buf_putc(&meta, 0x10); pch_vx__pb_varint(&meta, nruns);
        pch_buf_putc(&meta, 0x18); pch_vx__pb_varint(&meta, off);
        memset(&root, 0, sizeof root);
        root.enc = PCH_VX_E_RUNEND;
        root.meta = meta.data;
        root.meta_len = meta.len;
        root.n_children = 2;
        root.children = kids;
        serialize_hand_built(&seg, &root, smap, &dc);
        PCH_CHECK_OK(pch_vx__deserialize(&full, &dc, seg.data, seg.len, dt, rows, &err), &err);
        PCH_CHECK(full && pch_vx_array_equal(full, want));
        for (uint64_t k = 0, bgn = 0, last = 0; bgn < rows; k++) {
            pch_vx_array *part = NULL, *exp = NULL;
            uint64_t n = k % 3 ? 1 + rndn(4) : 1 + rndn(900);
            if (k == 0 || last) n = 1;                          /* the first row, and the last */
            if (n > rows - bgn) n = rows - bgn;
            PCH_CHECK_OK(pch_vx__deserialize_range(&part, &dc, seg.data, seg.len, dt, rows, bgn, n, &err), &err);
            PCH_CHECK_OK(pch_vx__array_slice(&exp, want, bgn, n, &err), &err);
            PCH_CHECK_MSG(part && pch_vx_array_equal(part, exp), "%s rows %llu+%llu", types[t], (unsigned long long)bgn,
                          (unsigned long long)n);
            pch_vx_array_free(part);
            pch_vx_array_free(exp);
            if (last) break;
            bgn = bgn + n + rndn(200);
            if (bgn >= rows) { bgn = rows - 1; last = 1; }
        }
        /* ends that do not increase: refused whole and for a range */
        {
            pch_vx_array *bad = NULL;
            size_t at = 0;
            for (size_t i = 0; i + 8 <= seg.len; i++)
                if (pch_load_le32(seg.data + i) == endv[10] && pch_load_le32(seg.data + i + 4) == endv[11]) { at = i; break; }
            PCH_CHECK(at > 0);
            pch_store_le32(seg.data + at + 4, (uint32_t)endv[10]);
            PCH_CHECK(pch_vx__deserialize(&bad, &dc, seg.data, seg.len, dt, rows, &err) == PCH_ECORRUPT);
            PCH_CHECK(pch_vx__deserialize_range(&bad, &dc, seg.data, seg.len, dt, rows, 3, 2, &err) == PCH_ECORRUPT &&
                      strstr(err.msg, "strictly increasing"));
        }
        pch_buf_dispose(&seg);
        pch_buf_dispose(&meta);
        pch_arena_dispose(&arena);
        pch_vx_array_free(want);
        pch_vx_array_free(vals);
        pch_vx_array_free(ends);
        pch_vx_array_free(full);
        pch_vx_builder_free(b);
        pch_vx_builder_free(vb);
        pch_vx_dtype_free(dt);
        pch_vx_dtype_free(edt);
    }
}

/* ------------------------------------------------------------------ compressor choices */

/* fastlanes.bitpacked with patches, as other writers make it (ours never patches): a u32
** array of 7-bit values with every 97th row patched to a large value, built node by node;
** the whole decode and every range (random ones and those around patched rows) give the
** values, and a range never writes a patch outside itself. */
static void test_vortex_file__bitpacked_patches(void)
{
    const uint64_t rows = 5000, w = 7;
    pch_vx_dtype *dt = NULL;
    pch_vx_array *want = NULL, *idx = NULL, *pv = NULL, *full = NULL;
    pch_vx_encoder e;
    pch_vx_enode root, *kids[2];
    pch_arena arena;
    pch_buf seg, meta, pmeta;
    int16_t smap[PCH_VX_E_COUNT];
    pch_vx_decode_ctx dc;
    pch_error err;
    uint64_t *vals = calloc(rows, 8), np = 0;
    uint8_t *packed = calloc(pch_vx__bp_bytes(rows, (unsigned)w) + 1, 1);
    uint32_t *pidx = calloc(rows, 4), *pval = calloc(rows, 4);
    PCH_CHECK(vals && packed && pidx && pval);
    if (!vals || !packed || !pidx || !pval) goto out;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "u32", &err), &err);
    want = pch_vx__array_new(NULL, dt, rows, 0);
    PCH_CHECK(want && pch_vx__array_alloc_data(want, (size_t)rows * 4) == 0);
    for (uint64_t r = 0; r < rows; r++) {
        uint32_t v = (uint32_t)rndn(1u << w);
        if (r % 97 == 5) { pidx[np] = (uint32_t)r; pval[np++] = v = 3000000000u + (uint32_t)r; }
        vals[r] = v & ((1u << w) - 1);      /* a patched row's packed bits are its low bits */
        pch_store_le32(want->data + 4 * r, v);
    }
    pch_vx__bp_pack(packed, vals, rows, 32, (unsigned)w);
    idx = pch_vx__array_new(NULL, dt, np, 0);
    pv = pch_vx__array_new(NULL, dt, np, 0);
    PCH_CHECK(idx && pv && pch_vx__array_alloc_data(idx, (size_t)np * 4) == 0 && pch_vx__array_alloc_data(pv, (size_t)np * 4) == 0);
    memcpy(idx->data, pidx, (size_t)np * 4);
    memcpy(pv->data, pval, (size_t)np * 4);
    pch_arena_init(&arena, NULL, 1 << 16);
    pch_buf_init(&seg, NULL);
    pch_buf_init(&meta, NULL);
    pch_buf_init(&pmeta, NULL);
    memset(&e, 0, sizeof e);
    e.arena = &arena;
    PCH_CHECK_OK(pch_vx__encode_canonical(&e, idx, &kids[0], &err), &err);
    PCH_CHECK_OK(pch_vx__encode_canonical(&e, pv, &kids[1], &err), &err);
    /* patches metadata: 1 len, 2 offset, 3 indices ptype; bitpacked: 1 bit width, 2 offset, 3 patches */
    pch_buf_putc(&pmeta, 0x08); pch_vx__pb_varint(&pmeta, np);
    pch_buf_putc(&pmeta, 0x10); pch_vx__pb_varint(&pmeta, 0);
    pch_buf_putc(&pmeta, 0x18); pch_vx__pb_varint(&pmeta, PCH_VX_U32);
    pch_buf_putc(&meta, 0x08); pch_vx__pb_varint(&meta, w);
    pch_buf_putc(&meta, 0x1a); pch_vx__pb_varint(&meta, pmeta.len); pch_buf_append(&meta, pmeta.data, pmeta.len);
    memset(&root, 0, sizeof root);
    root.enc = PCH_VX_E_BITPACKED;
    root.meta = meta.data;
    root.meta_len = meta.len;
    root.n_bufs = 1;
    root.buf[0] = packed;
    root.buf_len[0] = pch_vx__bp_bytes(rows, (unsigned)w);
    root.buf_align[0] = 0;
    root.n_children = 2;
    root.children = kids;
    serialize_hand_built(&seg, &root, smap, &dc);
    PCH_CHECK_OK(pch_vx__deserialize(&full, &dc, seg.data, seg.len, dt, rows, &err), &err);
    PCH_CHECK(full && pch_vx_array_equal(full, want));
    for (uint64_t k = 0, bgn = 0; bgn < rows; k++) {
        pch_vx_array *part = NULL, *exp = NULL;
        uint64_t n = k % 3 ? 1 + rndn(4) : 1 + rndn(1500);
        if (k % 5 == 1) { bgn = 5 + 97 * rndn(rows / 97); n = k % 2 ? 1 : 3; }     /* from a patched row */
        if (k % 5 == 2) { bgn = 2 + 97 * rndn(rows / 97); n = 3; }                  /* up to one */
        if (bgn >= rows) break;
        if (n > rows - bgn) n = rows - bgn;
        PCH_CHECK_OK(pch_vx__deserialize_range(&part, &dc, seg.data, seg.len, dt, rows, bgn, n, &err), &err);
        PCH_CHECK_OK(pch_vx__array_slice(&exp, want, bgn, n, &err), &err);
        PCH_CHECK_MSG(part && pch_vx_array_equal(part, exp), "rows %llu+%llu", (unsigned long long)bgn, (unsigned long long)n);
        pch_vx_array_free(part);
        pch_vx_array_free(exp);
        bgn += n + rndn(300);
    }
    /* an unsorted patch index fails closed, whole and for any range */
    {
        size_t at = 0;
        for (size_t i = 0; i + 8 <= seg.len; i++)
            if (pch_load_le32(seg.data + i) == pidx[3] && pch_load_le32(seg.data + i + 4) == pidx[4]) { at = i; break; }
        PCH_CHECK(at > 0);
        pch_vx_array_free(full);
        pch_store_le32(seg.data + at + 4, pidx[2]);
        PCH_CHECK(pch_vx__deserialize(&full, &dc, seg.data, seg.len, dt, rows, &err) == PCH_ECORRUPT && strstr(err.msg, "unsorted"));
        PCH_CHECK(pch_vx__deserialize_range(&full, &dc, seg.data, seg.len, dt, rows, rows - 2, 1, &err) == PCH_ECORRUPT);
    }
    pch_buf_dispose(&seg);
    pch_buf_dispose(&meta);
    pch_buf_dispose(&pmeta);
    pch_arena_dispose(&arena);
out:
    pch_vx_array_free(want);
    pch_vx_array_free(idx);
    pch_vx_array_free(pv);
    pch_vx_array_free(full);
    pch_vx_dtype_free(dt);
    free(vals);
    free(packed);
    free(pidx);
    free(pval);
}

static void test_vortex_file__compressor_choices(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunk = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_lane_report rep;
    static const char *const names[] = { "alpha", "beta", "gamma" };
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "c:i64,seq:i64,cat:utf8,sparse:i32?,runs:u16,f:f64,text:utf8", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (int r = 0; r < 20000; r++) {
        char txt[64];
        pch_vx_builder_append_int(pch_vx_builder_child(b, 0), 123456789, &err);
        pch_vx_builder_append_int(pch_vx_builder_child(b, 1), 1000000 + (int64_t)rndn(4000), &err);
        { const char *nmv = names[rndn(3)]; pch_vx_builder_append_bytes(pch_vx_builder_child(b, 2), nmv, strlen(nmv), &err); }
        if (r % 100 == 0) pch_vx_builder_append_int(pch_vx_builder_child(b, 3), r, &err);
        else pch_vx_builder_append_null(pch_vx_builder_child(b, 3), &err);
        pch_vx_builder_append_uint(pch_vx_builder_child(b, 4), (uint64_t)(r / 1000) * 997, &err);
        pch_vx_builder_append_float(pch_vx_builder_child(b, 5), sin(r) * 1000, &err);
        snprintf(txt, sizeof txt, "the quick brown fox %d jumps over the lazy dog", r % 50);
        pch_vx_builder_append_bytes(pch_vx_builder_child(b, 6), txt, strlen(txt), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &chunk, &err), &err);
    o.dict_layout = 0;
    g_dict_arrays = 0;
    PCH_CHECK_OK(roundtrip(dt, &chunk, 1, &o, &err, &w), &err);
    PCH_CHECK(g_dict_arrays >= 1);      /* the dict-encoded `cat` kept its codes, and they agree */
    PCH_CHECK(pch_vx_writer_n_lanes(w) == 7);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 0, &rep), &err);
    PCH_CHECK_MSG(strstr(rep.encodings, "vortex.constant") == rep.encodings, "%s", rep.encodings);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 1, &rep), &err);
    PCH_CHECK_MSG(strstr(rep.encodings, "fastlanes.for(fastlanes.bitpacked)") != NULL, "%s", rep.encodings);
    PCH_CHECK(rep.stored_bytes < rep.logical_bytes / 3);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 2, &rep), &err);
    PCH_CHECK_MSG(strncmp(rep.encodings, "vortex.dict", 11) == 0, "%s", rep.encodings);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 3, &rep), &err);
    PCH_CHECK_MSG(strncmp(rep.encodings, "vortex.sparse", 13) == 0, "%s", rep.encodings);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 4, &rep), &err);
    PCH_CHECK_MSG(strncmp(rep.encodings, "vortex.runend", 13) == 0, "%s", rep.encodings);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 6, &rep), &err);
    PCH_CHECK_MSG(strncmp(rep.encodings, "vortex.dict", 11) == 0 || strncmp(rep.encodings, "vortex.zstd", 11) == 0, "%s", rep.encodings);
    PCH_CHECK(rep.encode_seconds >= 0 && rep.rows == 20000 && rep.chunks == 1);
    pch_vx_writer_free(w);
    w = NULL;
    /* with the dict layout the string lanes become vortex.dict layouts */
    o.dict_layout = 1;
    PCH_CHECK_OK(roundtrip(dt, &chunk, 1, &o, &err, &w), &err);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 2, &rep), &err);
    PCH_CHECK_MSG(strstr(rep.encodings, "vortex.dict layout: 3 values") != NULL, "%s", rep.encodings);
    pch_vx_writer_free(w);
    pch_vx_array_free(chunk);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

/* ------------------------------------------------------------------ ALP-RD float lanes */

/* Float lanes with random mantissas (logprob-like float32, nullable; float64 in a narrow
** range) become vortex.alprd with and without exceptions, round-trip bit for bit, and a
** flipped bit anywhere in the file is an error or a value, never a crash. */
static int no_segment_check(void *payload, uint32_t seg, uint64_t off, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    (void)payload; (void)seg; (void)off; (void)bytes; (void)len; (void)err;
    return PCH_OK;
}

/* Partial segment reads: a one-row read of a framed list<utf8> lane reads its segment's tail
** and the blocks of the frames holding the row, far less than the segment; every block is
** checked, a refused block fails the read; a segment check without a block check keeps whole
** segment reads. */
static void test_vortex_file__partial_reads(void)
{
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_bytes bytes;
    pch_error err;
    uint64_t rows = 3000, segmax = 0;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "struct<id:u32,msgs:list<utf8>>", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (uint64_t r = 0; r < rows; r++) {
        pch_vx_builder *l = pch_vx_builder_child(pch_vx_builder_child(b, 1), 0);
        PCH_CHECK_OK(pch_vx_builder_append_int(pch_vx_builder_child(b, 0), (int64_t)r, &err), &err);
        for (uint64_t k = 0; k < 3; k++) {
            char txt[160];
            int len = snprintf(txt, sizeof txt, "trajectory %llu message %llu %llx %llx %llx", (unsigned long long)r,
                               (unsigned long long)k, (unsigned long long)rnd(), (unsigned long long)rnd(), (unsigned long long)rnd());
            PCH_CHECK_OK(pch_vx_builder_append_bytes(l, txt, (size_t)len, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_append_valid(pch_vx_builder_child(b, 1), &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
    o.frame_bytes = 1024;
    PCH_CHECK_OK(pch_vx_writer_open(&w, NULL, dt, &o, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_write(w, a, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_finish(w, &err), &err);
    bytes = pch_vx_writer_bytes(w);
    for (int pass = 0; pass < 4; pass++) {
        pch_vx_file *f = NULL;
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *part = NULL, *want = NULL;
        pch_vx_dtype *pdt = NULL;
        pch_vx_io_stats st;
        int rc;
        PCH_CHECK_OK(pch_vx_file_open_mem(&f, NULL, bytes.ptr, bytes.len, &err), &err);
        if (pass == 0) PCH_CHECK(pch_vx_file_set_partial_reads(f, PCH_VX_BLOCK_MIN - 1, NULL, NULL, &err) == PCH_EINVAL);
        for (uint32_t i = 0; pass == 0 && i < pch_vx_file_n_segments(f); i++) {
            uint64_t off, len;
            PCH_CHECK_OK(pch_vx_file_segment(f, i, &off, &len, &err), &err);
            if (len > segmax) segmax = len;
        }
        g_blk.file = bytes.ptr;
        g_blk.f = f;
        g_blk.checked = 0;
        g_blk.B = 512;
        g_blk.corrupt_block = pass == 2 ? 1 : -1;
        if (pass == 3) pch_vx_file_set_segment_check(f, no_segment_check, NULL);
        PCH_CHECK_OK(pch_vx_file_set_partial_reads(f, 512, pass == 3 ? NULL : block_matches, &g_blk, &err), &err);
        pch_vx_file_reset_io_stats(f);
        so.row_begin = pass == 2 ? 0 : 1777;
        so.row_end = so.row_begin + 1;
        rc = pch_vx_file_scan(f, &so, &part, &pdt, &err);
        pch_vx_file_io_stats(f, &st);
        if (pass == 2) {
            PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "block 1 of segment"), "refused block: rc %d %s", rc, err.msg);
        } else {
            PCH_CHECK_OK(rc, &err);
            PCH_CHECK_OK(pch_vx__array_slice(&want, a, so.row_begin, 1, &err), &err);
            PCH_CHECK(part && want && pch_vx_array_equal(part, want));
            if (pass < 2) {
                PCH_CHECK_MSG(st.segments_partial >= 1 && st.bytes_read * 4 < segmax && g_blk.checked == st.bytes_read,
                              "partial: %llu partial segments, %llu bytes read (largest segment %llu), %llu checked",
                              (unsigned long long)st.segments_partial, (unsigned long long)st.bytes_read,
                              (unsigned long long)segmax, (unsigned long long)g_blk.checked);
            } else {
                PCH_CHECK_MSG(st.segments_partial == 0 && st.bytes_read >= segmax, "segment check: %llu partial, %llu bytes",
                              (unsigned long long)st.segments_partial, (unsigned long long)st.bytes_read);
            }
        }
        if (pass == 0) {
            /* a whole read after a partial one replaces the sparse entry */
            pch_vx_scan_options all = PCH_VX_SCAN_OPTIONS_INIT;
            pch_vx_array *full = NULL;
            pch_vx_dtype *fdt = NULL;
            PCH_CHECK_OK(pch_vx_file_scan(f, &all, &full, &fdt, &err), &err);
            PCH_CHECK(full && full->len == rows && pch_vx_array_equal(full, a));
            pch_vx_array_free(full);
            pch_vx_dtype_free(fdt);
        }
        pch_vx_array_free(part);
        pch_vx_array_free(want);
        pch_vx_dtype_free(pdt);
        pch_vx_file_free(f);
    }
    pch_vx_writer_free(w);
    pch_vx_builder_free(b);
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

/* Frames of small rows (frame_row_ratio with row weights, RFC-0006 §13.4): a one-row read of a
** small row among large ones reads a frame of about its own size, not a 64 KiB one, the rows
** read back the same, and the file grows by no more than a fifth (one frame of about eight
** split in three). */
static void test_vortex_file__small_row_frames(void)
{
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL;
    pch_error err;
    const uint64_t rows = 600, small = 300;
    uint64_t *wt = malloc(rows * sizeof *wt), got[2] = { 0, 0 }, size[2] = { 0, 0 };
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "struct<id:u32,msgs:list<utf8>>", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (uint64_t r = 0; r < rows; r++) {
        pch_vx_builder *l = pch_vx_builder_child(pch_vx_builder_child(b, 1), 0);
        PCH_CHECK_OK(pch_vx_builder_append_int(pch_vx_builder_child(b, 0), (int64_t)r, &err), &err);
        wt[r] = 0;
        for (uint64_t k = 0; k < (r == small ? 1 : 12); k++) {
            char txt[200];
            int len = snprintf(txt, sizeof txt, "row %llu message %llu: the quick brown fox jumps over the lazy dog %llx",
                               (unsigned long long)r, (unsigned long long)k, (unsigned long long)rnd());
            PCH_CHECK_OK(pch_vx_builder_append_bytes(l, txt, (size_t)len, &err), &err);
            wt[r] += (uint64_t)len;
        }
        PCH_CHECK_OK(pch_vx_builder_append_valid(pch_vx_builder_child(b, 1), &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
    for (int ratio = 0; ratio < 2; ratio++) {
        pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
        pch_vx_writer *w = NULL;
        pch_vx_file *f = NULL;
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *part = NULL, *want = NULL, *full = NULL;
        pch_vx_dtype *pdt = NULL, *fdt = NULL;
        pch_vx_io_stats st;
        pch_bytes bytes;
        o.frame_bytes = 64u << 10;
        o.frame_row_ratio = ratio ? 8 : 0;
        PCH_CHECK_OK(pch_vx_writer_open(&w, NULL, dt, &o, &err), &err);
        PCH_CHECK_OK(pch_vx_writer_write_rows(w, a, wt, &err), &err);
        PCH_CHECK_OK(pch_vx_writer_finish(w, &err), &err);
        {
            pch_vx_lane_report rep;       /* the messages are framed zstd, or nothing here is tested */
            PCH_CHECK_OK(pch_vx_writer_lane(w, 1, &rep), &err);
            PCH_CHECK_MSG(strstr(rep.encodings, "vortex.zstd") != NULL, "%s", rep.encodings);
        }
        bytes = pch_vx_writer_bytes(w);
        size[ratio] = bytes.len;
        PCH_CHECK_OK(pch_vx_file_open_mem(&f, NULL, bytes.ptr, bytes.len, &err), &err);
        PCH_CHECK_OK(pch_vx_file_check(f, &err), &err);
        PCH_CHECK_OK(pch_vx_file_set_partial_reads(f, 64, NULL, NULL, &err), &err);
        pch_vx_file_reset_io_stats(f);
        so.row_begin = small;
        so.row_end = small + 1;
        PCH_CHECK_OK(pch_vx_file_scan(f, &so, &part, &pdt, &err), &err);
        pch_vx_file_io_stats(f, &st);
        got[ratio] = st.bytes_read;
        PCH_CHECK_OK(pch_vx__array_slice(&want, a, small, 1, &err), &err);
        PCH_CHECK(part && want && pch_vx_array_equal(part, want));
        PCH_CHECK_OK(pch_vx_file_scan(f, NULL, &full, &fdt, &err), &err);
        PCH_CHECK(full && pch_vx_array_equal(full, a));
        pch_vx_array_free(part);
        pch_vx_array_free(want);
        pch_vx_array_free(full);
        pch_vx_dtype_free(pdt);
        pch_vx_dtype_free(fdt);
        pch_vx_file_free(f);
        pch_vx_writer_free(w);
    }
    PCH_CHECK_MSG(got[1] * 3 < got[0], "a small row's read: %llu bytes with its own frames, %llu without",
                  (unsigned long long)got[1], (unsigned long long)got[0]);
    PCH_CHECK_MSG(size[1] < size[0] + size[0] / 5, "file %llu bytes with small-row frames, %llu without",
                  (unsigned long long)size[1], (unsigned long long)size[0]);
    free(wt);
    pch_vx_builder_free(b);
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

/* Row ranges of FastLanes and ALP-RD lanes as our writer makes them (bit-packed, FOR, nullable,
** float32/float64 ALP-RD with exceptions, list<u32> token ids; bit-packing with patches has a
** test of its own below): every range reads what a slice
** of the whole decode gives, and with partial reads a one-row read of a long lane reads and
** checks only the blocks of its rows (RFC-0006 §13.4: a point read decodes its own rows). */
static void test_vortex_file__numeric_ranges(void)
{
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_lane_report rep;
    pch_bytes bytes;
    pch_error err;
    uint64_t rows = 20000;
    static const char *const want_enc[] = { "fastlanes.for(fastlanes.bitpacked", "fastlanes.bitpacked", "fastlanes.bitpacked",
                                            "vortex.alprd", "vortex.alprd", "fastlanes.bitpacked" };
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "seq:i64,small:u32,maybe:u32?,lp:f32?,d:f64,ids:list<u32>", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (uint64_t r = 0; r < rows; r++) {
        pch_vx_builder *l = pch_vx_builder_child(pch_vx_builder_child(b, 5), 0);
        float lp = -(float)((double)rndn(1u << 24) / (double)(1u << 24)) * (float)(1 + rndn(12));
        double d = -20.0 * (double)rndn(1ull << 52) / (double)(1ull << 52) - 1.0;
        PCH_CHECK_OK(pch_vx_builder_append_int(pch_vx_builder_child(b, 0), 5000000 + (int64_t)rndn(3000), &err), &err);
        /* mostly 7 bits, a rare large value */
        PCH_CHECK_OK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 1), r % 211 == 3 ? 4000000000u : rndn(100), &err), &err);
        if (r % 7 == 2) PCH_CHECK_OK(pch_vx_builder_append_null(pch_vx_builder_child(b, 2), &err), &err);
        else PCH_CHECK_OK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 2), rndn(1000), &err), &err);
        if (r % 13 == 0) PCH_CHECK_OK(pch_vx_builder_append_null(pch_vx_builder_child(b, 3), &err), &err);
        else PCH_CHECK_OK(pch_vx_builder_append_float(pch_vx_builder_child(b, 3), r % 997 == 5 ? -3.0e30 : lp, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_float(pch_vx_builder_child(b, 4), r % 50 == 7 ? 1e300 * (double)(r + 1) : d, &err), &err);
        for (uint64_t k = rndn(9); k > 0; k--) PCH_CHECK_OK(pch_vx_builder_append_uint(l, rndn(60000), &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(pch_vx_builder_child(b, 5), &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
    PCH_CHECK_OK(roundtrip(dt, &a, 1, &o, &err, &w), &err);
    for (uint32_t lane = 0; lane < 6; lane++) {
        PCH_CHECK_OK(pch_vx_writer_lane(w, lane, &rep), &err);
        PCH_CHECK_MSG(strstr(rep.encodings, want_enc[lane]) != NULL, "lane %u: %s", lane, rep.encodings);
    }
    bytes = pch_vx_writer_bytes(w);
    for (int pass = 0; pass < 2; pass++) {
        pch_vx_file *f = NULL;
        PCH_CHECK_OK(pch_vx_file_open_mem(&f, NULL, bytes.ptr, bytes.len, &err), &err);
        if (pass == 1) {            /* partial reads, every block checked */
            g_blk.file = bytes.ptr;
            g_blk.f = f;
            g_blk.B = 512;
            g_blk.corrupt_block = -1;
            PCH_CHECK_OK(pch_vx_file_set_partial_reads(f, 512, block_matches, &g_blk, &err), &err);
        }
        /* random ranges, then ranges that end right before, start at and follow an exception
        ** (small: a large value every 211th row from 3; ALP-RD patches of lp every 997th from
        ** 5 and of d every 50th from 7) */
        static const uint64_t edge[][2] = { { 1058 - 4, 4 }, { 1058, 1 }, { 1059, 3 }, { 2996 - 2, 2 }, { 2996, 1 },
                                            { 2997, 5 }, { 457 - 7, 7 }, { 457, 1 }, { 458, 2 }, { 19995, 5 } };
        uint64_t bgn = 0, k = 0;
        for (;;) {
            pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
            pch_vx_array *part = NULL, *want = NULL;
            pch_vx_dtype *pdt = NULL;
            pch_vx_io_stats st;
            uint64_t n;
            if (bgn < rows) {
                n = 1 + rndn(bgn % 3 ? 5 : 2500);
                if (n > rows - bgn) n = rows - bgn;
            } else if (k < sizeof edge / sizeof edge[0]) {
                bgn = edge[k][0];
                n = edge[k++][1];
            } else {
                break;
            }
            so.row_begin = bgn;
            so.row_end = bgn + n;
            pch_vx_file_set_cache_bytes(f, 0);      /* every read from the file */
            pch_vx_file_reset_io_stats(f);
            g_blk.checked = 0;
            PCH_CHECK_OK(pch_vx_file_scan(f, &so, &part, &pdt, &err), &err);
            pch_vx_file_io_stats(f, &st);
            PCH_CHECK_OK(pch_vx__array_slice(&want, a, bgn, n, &err), &err);
            PCH_CHECK_MSG(part && pch_vx_array_equal(part, want), "pass %d rows %llu+%llu", pass, (unsigned long long)bgn, (unsigned long long)n);
            if (pass == 1 && n == 1)
                PCH_CHECK_MSG(st.bytes_read * 4 < bytes.len && g_blk.checked == st.bytes_read,
                              "one row read %llu of %llu bytes (%llu checked)", (unsigned long long)st.bytes_read,
                              (unsigned long long)bytes.len, (unsigned long long)g_blk.checked);
            pch_vx_array_free(part);
            pch_vx_array_free(want);
            pch_vx_dtype_free(pdt);
            bgn = bgn < rows && k == 0 ? bgn + 1 + rndn(1500) : rows;
        }
        pch_vx_file_free(f);
    }
    pch_vx_writer_free(w);
    pch_vx_builder_free(b);
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

static void test_vortex_file__alprd_floats(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunk = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_lane_report rep;
    pch_bytes bytes;
    uint8_t *copy;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "lp:f32?,d:f64,odd:f64", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (int r = 0; r < 3000; r++) {
        float lp = -(float)((double)rndn(1u << 24) / (double)(1u << 24)) * (float)(1 + rndn(12));
        double d = -20.0 * (double)rndn(1ull << 52) / (double)(1ull << 52) - 1.0;
        if (r % 13 == 0) PCH_CHECK_OK(pch_vx_builder_append_null(pch_vx_builder_child(b, 0), &err), &err);
        else PCH_CHECK_OK(pch_vx_builder_append_float(pch_vx_builder_child(b, 0), r % 997 == 5 ? -3.0e30 : lp, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_float(pch_vx_builder_child(b, 1), d, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_float(pch_vx_builder_child(b, 2), r % 50 == 7 ? 1e300 * (double)(r + 1) : d, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &chunk, &err), &err);
    PCH_CHECK_OK(roundtrip(dt, &chunk, 1, &o, &err, &w), &err);
    for (uint32_t lane = 0; lane < 3; lane++) {
        PCH_CHECK_OK(pch_vx_writer_lane(w, lane, &rep), &err);
        PCH_CHECK_MSG(strncmp(rep.encodings, "vortex.alprd", 12) == 0, "lane %u: %s", lane, rep.encodings);
        PCH_CHECK_MSG(rep.stored_bytes < rep.logical_bytes * 9 / 10, "lane %u: %llu of %llu bytes", lane,
                      (unsigned long long)rep.stored_bytes, (unsigned long long)rep.logical_bytes);
    }
    bytes = pch_vx_writer_bytes(w);
    copy = malloc(bytes.len);
    PCH_CHECK(copy != NULL);
    for (size_t pos = 0; copy && pos < bytes.len; pos += 29) {
        pch_vx_file *f = NULL;
        pch_vx_array *out = NULL;
        pch_vx_dtype *odt = NULL;
        memcpy(copy, bytes.ptr, bytes.len);
        copy[pos] ^= (uint8_t)(1u << (pos % 8));
        if (pch_vx_file_open_mem(&f, NULL, copy, bytes.len, &err) == 0 && pch_vx_file_check(f, &err) == 0 &&
            pch_vx_file_scan(f, NULL, &out, &odt, &err) == 0) {
            pch_vx_array_free(out);
            pch_vx_dtype_free(odt);
        }
        pch_vx_file_free(f);
    }
    free(copy);
    pch_vx_writer_free(w);
    pch_vx_array_free(chunk);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

/* ------------------------------------------------------------------ reader features */

static void test_vortex_file__scan_features(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL, *odt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunks[10], *out = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_file *f = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
    pch_vx_io_stats st;
    pch_bytes bytes;
    pch_vx_text t = { 0 };
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "x:i64,name:utf8,meta:struct<a:u32,b:utf8?>,opt:struct<c:i8>?", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (int c = 0; c < 10; c++) {
        for (int r = 0; r < 1000; r++) {
            int64_t x = c * 1000 + r;
            char nm[32];
            snprintf(nm, sizeof nm, "n%05lld", (long long)x);
            pch_vx_builder_append_int(pch_vx_builder_child(b, 0), x, &err);
            pch_vx_builder_append_bytes(pch_vx_builder_child(b, 1), nm, strlen(nm), &err);
            pch_vx_builder *m = pch_vx_builder_child(b, 2);
            pch_vx_builder_append_uint(pch_vx_builder_child(m, 0), (uint64_t)x * 2, &err);
            if (x % 3) pch_vx_builder_append_bytes(pch_vx_builder_child(m, 1), "b", 1, &err);
            else pch_vx_builder_append_null(pch_vx_builder_child(m, 1), &err);
            pch_vx_builder_append_valid(m, &err);
            pch_vx_builder *op = pch_vx_builder_child(b, 3);
            if (x % 2) { pch_vx_builder_append_int(pch_vx_builder_child(op, 0), x % 100, &err); pch_vx_builder_append_valid(op, &err); }
            else pch_vx_builder_append_null(op, &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_finish(b, &chunks[c], &err), &err);
    }
    o.zone_len = 500;
    PCH_CHECK_OK(roundtrip(dt, chunks, 10, &o, &err, &w), &err);
    bytes = pch_vx_writer_bytes(w);
    PCH_CHECK_OK(pch_vx_file_open_mem(&f, NULL, bytes.ptr, bytes.len, &err), &err);
    PCH_CHECK(pch_vx_file_row_count(f) == 10000);
    /* narrow projection with a nested path, one row range */
    {
        static const char *const cols[] = { "meta.a", "opt.c" };
        so.columns = cols;
        so.n_columns = 2;
        so.row_begin = 2500;
        so.row_end = 2503;
        /* the reads the scan will make, planned without reading (a read-ahead's) */
        uint64_t *rg = NULL, planned = 0;
        size_t nrg = 0;
        pch_vx_file_reset_io_stats(f);
        PCH_CHECK_OK(pch_vx_file_scan_ranges(f, &so, &rg, &nrg, &err), &err);
        for (size_t i = 0; i < nrg; i++) planned += rg[2 * i + 1];
        pch_free(NULL, rg);
        pch_vx_file_io_stats(f, &st);
        PCH_CHECK(st.requests == 0 && st.bytes_read == 0);
        PCH_CHECK_OK(pch_vx_file_scan(f, &so, &out, &odt, &err), &err);
        PCH_CHECK(out->len == 3 && odt->n_fields == 2);
        pch_vx_file_io_stats(f, &st);
        PCH_CHECK_MSG(nrg == st.requests && planned == st.bytes_read, "planned %zu reads of %llu bytes, read %llu of %llu", nrg,
                      (unsigned long long)planned, (unsigned long long)st.requests, (unsigned long long)st.bytes_read);
        /* what is cached is not planned again; a filter is not planned at all */
        PCH_CHECK_OK(pch_vx_file_scan_ranges(f, &so, &rg, &nrg, &err), &err);
        PCH_CHECK(nrg == 0);
        pch_free(NULL, rg);
        {
            pch_vx_scan_options fo = so;
            fo.filter_column = "x";
            fo.filter_op = PCH_VX_CMP_EQ;
            PCH_CHECK(pch_vx_file_scan_ranges(f, &fo, &rg, &nrg, &err) == PCH_EINVAL && rg == NULL);
        }
        pch_vx_array_row_json(&t, out, 0);
        PCH_CHECK_EQ_STR(t.ptr, "{\"meta.a\":5000,\"opt.c\":null}");
        pch_vx_text_dispose(&t);
        pch_vx_array_row_json(&t, out, 1);
        PCH_CHECK_EQ_STR(t.ptr, "{\"meta.a\":5002,\"opt.c\":1}");
        pch_vx_text_dispose(&t);
        pch_vx_file_io_stats(f, &st);
        PCH_CHECK_MSG(st.segments_read == 2 && st.requests == 1, "segments %llu requests %llu",
                      (unsigned long long)st.segments_read, (unsigned long long)st.requests);
        pch_vx_array_free(out);
        pch_vx_dtype_free(odt);
        /* again: served from the segment cache */
        pch_vx_file_reset_io_stats(f);
        PCH_CHECK_OK(pch_vx_file_scan(f, &so, &out, &odt, &err), &err);
        pch_vx_file_io_stats(f, &st);
        PCH_CHECK(st.requests == 0 && st.cache_hits >= 2);
        pch_vx_array_free(out);
        pch_vx_dtype_free(odt);
    }
    /* selection */
    {
        static const uint64_t sel[] = { 0, 999, 1000, 9999 };
        static const char *const cols[] = { "x" };
        pch_vx_scan_options s2 = PCH_VX_SCAN_OPTIONS_INIT;
        s2.columns = cols;
        s2.n_columns = 1;
        s2.selection = sel;
        s2.n_selection = 4;
        PCH_CHECK_OK(pch_vx_file_scan(f, &s2, &out, &odt, &err), &err);
        PCH_CHECK(out->len == 4);
        PCH_CHECK(pch_vx__load_int(out->children[0]->data, PCH_VX_I64, 3) == 9999);
        pch_vx_array_free(out);
        pch_vx_dtype_free(odt);
    }
    /* zone-map pruning: x >= 9700 touches one zone of 20 */
    {
        pch_vx_scan_options s3 = PCH_VX_SCAN_OPTIONS_INIT;
        s3.filter_column = "x";
        s3.filter_op = PCH_VX_CMP_GE;
        s3.filter_kind = 0;
        s3.filter_i = 9700;
        pch_vx_file_set_cache_bytes(f, (size_t)64 << 20);
        pch_vx_file_reset_io_stats(f);
        PCH_CHECK_OK(pch_vx_file_scan(f, &s3, &out, &odt, &err), &err);
        PCH_CHECK(out->len == 300);
        pch_vx_file_io_stats(f, &st);
        PCH_CHECK_MSG(st.zones_total == 20 && st.zones_pruned == 19, "zones %llu pruned %llu",
                      (unsigned long long)st.zones_total, (unsigned long long)st.zones_pruned);
        pch_vx_array_free(out);
        pch_vx_dtype_free(odt);
        /* strings: name < "n00100" → first zone only */
        s3.filter_column = "name";
        s3.filter_op = PCH_VX_CMP_LT;
        s3.filter_kind = 3;
        s3.filter_bytes = "n00100";
        s3.filter_bytes_len = 6;
        pch_vx_file_reset_io_stats(f);
        PCH_CHECK_OK(pch_vx_file_scan(f, &s3, &out, &odt, &err), &err);
        PCH_CHECK(out->len == 100);
        pch_vx_file_io_stats(f, &st);
        PCH_CHECK(st.zones_pruned == 19);
        pch_vx_array_free(out);
        pch_vx_dtype_free(odt);
        /* the zones alone (no data segment): x >= 9700 leaves the last zone of 20 */
        {
            uint8_t *pruned = NULL;
            uint64_t nz = 0, req0;
            uint32_t zl = 0;
            s3.filter_column = "x";
            s3.filter_op = PCH_VX_CMP_GE;
            s3.filter_kind = 0;
            s3.filter_i = 9700;
            pch_vx_file_reset_io_stats(f);
            PCH_CHECK_OK(pch_vx_file_zone_prune(f, &s3, &pruned, &nz, &zl, &err), &err);
            PCH_CHECK(nz == 20 && zl == 500 && pruned);
            for (uint64_t z = 0; pruned && z < nz; z++) PCH_CHECK(pruned[z] == (z < 19));
            pch_vx_file_io_stats(f, &st);
            req0 = st.segments_read;
            PCH_CHECK_MSG(req0 <= 1, "segments read %llu", (unsigned long long)req0);   /* the zone table at most */
            pch_free(NULL, pruned);
            /* no comparison: refused; a column without zone maps: nothing pruned */
            s3.filter_op = PCH_VX_CMP_NONE;
            PCH_CHECK(pch_vx_file_zone_prune(f, &s3, &pruned, &nz, &zl, &err) == PCH_EINVAL);
            s3.filter_op = PCH_VX_CMP_GE;
            s3.filter_column = "nope";
            PCH_CHECK(pch_vx_file_zone_prune(f, &s3, &pruned, &nz, &zl, &err) == PCH_ENOTFOUND);
        }
    }
    /* bad column */
    {
        static const char *const cols[] = { "nope" };
        pch_vx_scan_options s4 = PCH_VX_SCAN_OPTIONS_INIT;
        s4.columns = cols;
        s4.n_columns = 1;
        PCH_CHECK(pch_vx_file_scan(f, &s4, &out, &odt, &err) == PCH_ENOTFOUND);
    }
    pch_vx_file_free(f);
    pch_vx_writer_free(w);
    for (int c = 0; c < 10; c++) pch_vx_array_free(chunks[c]);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

/* Regression (found by tests/compat/vortex_convert.sh): an all-null utf8 lane with the dict
** layout enabled must not become a vortex.dict layout with empty values under null codes. */
static void test_vortex_file__all_null_dict_lane(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunks[2] = { NULL, NULL };
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "id:i64,s:utf8?,t:binary?", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (int c = 0; c < 2; c++) {
        for (int r = 0; r < 300; r++) {
            PCH_CHECK_OK(pch_vx_builder_append_int(pch_vx_builder_child(b, 0), r, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_null(pch_vx_builder_child(b, 1), &err), &err);
            /* t: null in the first chunk, then a few values */
            if (c == 0 || r % 50) PCH_CHECK_OK(pch_vx_builder_append_null(pch_vx_builder_child(b, 2), &err), &err);
            else PCH_CHECK_OK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 2), "v", 1, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_finish(b, &chunks[c], &err), &err);
    }
    for (int k = 0; k < 4; k++) {
        uint64_t before = g_codes_only;
        o.compress = k & 1;
        o.zone_len = k & 2 ? 100 : 0;
        PCH_CHECK_OK(roundtrip(dt, chunks, 2, &o, &err, NULL), &err);
        /* compressed, the all-null text is a constant: codes only, every row null */
        if (o.compress) PCH_CHECK_MSG(g_codes_only > before, "compressed null text did not come back as codes");
    }
    pch_vx_array_free(chunks[0]);
    pch_vx_array_free(chunks[1]);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

/* Lists of a few names with nulls, as the projection's steps.model_name: the compressor makes
** the list's items a dictionary encoding whose codes are nullable, and a read gathers the
** names (full decode) or hands out the codes (text codes); both must give back every row
** and every null (the nullable codes are widened in one loop per width). */
static void test_vortex_file__nullable_dict_codes(void)
{
    static const char *const names[] = { "openrouter/nousresearch/hermes-4-70b", "bedrock/us.amazon.nova-premier-v1:0",
                                         "gemini/gemini-3-flash-preview", "m" };
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunks[2] = { NULL, NULL };
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    uint64_t x = 5;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "id:i64,s:list<utf8?>", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (int c = 0; c < 2; c++) {
        for (int r = 0; r < 300; r++) {
            pch_vx_builder *l = pch_vx_builder_child(pch_vx_builder_child(b, 1), 0);
            PCH_CHECK_OK(pch_vx_builder_append_int(pch_vx_builder_child(b, 0), r, &err), &err);
            for (int k = 0; k < 10; k++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                if ((x >> 60) < 3) PCH_CHECK_OK(pch_vx_builder_append_null(l, &err), &err);
                else {
                    const char *nm = names[(x >> 33) % 4];
                    PCH_CHECK_OK(pch_vx_builder_append_bytes(l, nm, strlen(nm), &err), &err);
                }
            }
            PCH_CHECK_OK(pch_vx_builder_append_valid(pch_vx_builder_child(b, 1), &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_finish(b, &chunks[c], &err), &err);
    }
    o.compress = 1;
    PCH_CHECK_OK(roundtrip(dt, chunks, 2, &o, &err, NULL), &err);
    pch_vx_array_free(chunks[0]);
    pch_vx_array_free(chunks[1]);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

/* Streaming writer: abandoned writes publish nothing, an existing target is replaced only at
** finish, a missing directory fails at open, publish to another path is refused. */
static void test_vortex_file__streamed_publish(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_array *a = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_file *f = NULL;
    char path[128], bad[160];
    pch_buf got;
    pch_buf_init(&got, NULL);
    snprintf(path, sizeof path, "%s/t.vortex", g_tmpdir);
    snprintf(bad, sizeof bad, "%s/no/such/dir/t.vortex", g_tmpdir);
    PCH_CHECK_OK(build_example(&dt, &a, &err), &err);
    /* abandoned before finish: nothing published, no staging file left */
    PCH_CHECK_OK(pch_vx_writer_open_path(&w, NULL, dt, path, NULL, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_write(w, a, &err), &err);
    pch_vx_writer_free(w);
    w = NULL;
    PCH_CHECK(dir_entries(g_tmpdir) == 0);
    /* an existing target stays untouched until finish, then is replaced */
    PCH_CHECK_OK(pch_file_publish(path, "old", 3, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_open_path(&w, NULL, dt, path, NULL, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_write(w, a, &err), &err);
    PCH_CHECK_OK(pch_file_read_all(&got, path, 1 << 20, &err), &err);
    PCH_CHECK(got.len == 3);
    PCH_CHECK(dir_entries(g_tmpdir) == 2);
    PCH_CHECK_OK(pch_vx_writer_finish(w, &err), &err);
    PCH_CHECK(dir_entries(g_tmpdir) == 1);
    PCH_CHECK(pch_vx_writer_publish(w, bad, &err) == PCH_EINVAL);
    pch_vx_writer_free(w);
    w = NULL;
    PCH_CHECK_OK(pch_vx_file_open(&f, NULL, path, &err), &err);
    PCH_CHECK_OK(pch_vx_file_check(f, &err), &err);
    PCH_CHECK(pch_vx_file_row_count(f) == a->len);
    pch_vx_file_free(f);
    unlink(path);
    /* missing directory: fails at open with EIO */
    PCH_CHECK(pch_vx_writer_open_path(&w, NULL, dt, bad, NULL, &err) == PCH_EIO && w == NULL);
    PCH_CHECK(pch_vx_writer_open_path(&w, NULL, dt, "", NULL, &err) == PCH_EINVAL && w == NULL);
    pch_buf_dispose(&got);
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

/* Paged open (pch_vx_file_open_paged, RFC-0006 §13.4): the layout and footer are read in
** place a block at a time, each block checked; a one-row read of one chunk of a 120-chunk file
** reads under a quarter of the tail (the writer lays the chunks' layouts out chunk-major, and the
** chunk rows come from the caller); every answer equals an ordinary open's; a refused block,
** chunk rows that disagree with the file, bad options and a tail that starts inside the
** layout fail closed. */
typedef struct tailchk { const uint8_t *file; uint64_t tail_off; uint32_t B; uint64_t checked; long refuse; } tailchk;
static int tail_matches(void *payload, uint32_t block, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    tailchk *t = payload;
    t->checked += len;
    if ((long)block == t->refuse || memcmp(bytes, t->file + t->tail_off + (uint64_t)block * t->B, (size_t)len) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "tail block %u does not match", block);
    return PCH_OK;
}

static void test_vortex_file__paged_open(void)
{
    enum { CHUNKS = 120, ROWS = 20, B = 128 };
    pch_vx_dtype *dt = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_array *chunk[CHUNKS] = { NULL }, *all = NULL;
    pch_vx_dtype *adt = NULL;                /* all's dtype */
    pch_vx_file *f = NULL, *g = NULL;
    pch_error err;
    pch_buf file;
    uint64_t starts[CHUNKS + 1], tail_off = 0;
    char path[160];
    pch_buf_init(&file, NULL);
    snprintf(path, sizeof path, "%s/paged.vortex", g_tmpdir);
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "struct<id:u32,model:utf8,msgs:list<utf8>,score:f64?,ok:bool>", &err), &err);
    o.zone_len = 16;
    o.dict_layout = 1;
    PCH_CHECK_OK(pch_vx_writer_open_path(&w, NULL, dt, path, &o, &err), &err);
    for (int c = 0; c < CHUNKS; c++) {
        pch_vx_builder *b = NULL;
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        for (int r = 0; r < ROWS; r++) {
            char txt[96];
            int n = snprintf(txt, sizeof txt, "chunk %d row %d %llx", c, r, (unsigned long long)rnd());
            pch_vx_builder *l = pch_vx_builder_child(pch_vx_builder_child(b, 2), 0);
            PCH_CHECK_OK(pch_vx_builder_append_int(pch_vx_builder_child(b, 0), c * ROWS + r, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 1), r % 3 ? "m-a" : "m-b", 3, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_bytes(l, txt, (size_t)n, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(pch_vx_builder_child(b, 2), &err), &err);
            if (r % 7) PCH_CHECK_OK(pch_vx_builder_append_float(pch_vx_builder_child(b, 3), r / 7.0, &err), &err);
            else PCH_CHECK_OK(pch_vx_builder_append_null(pch_vx_builder_child(b, 3), &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_bool(pch_vx_builder_child(b, 4), r % 2, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_finish(b, &chunk[c], &err), &err);
        pch_vx_builder_free(b);
        PCH_CHECK_OK(pch_vx_writer_write(w, chunk[c], &err), &err);
        starts[c] = (uint64_t)c * ROWS;
    }
    starts[CHUNKS] = (uint64_t)CHUNKS * ROWS;
    PCH_CHECK_OK(pch_vx_writer_finish(w, &err), &err);
    pch_vx_writer_free(w);
    PCH_CHECK_OK(pch_file_read_all(&file, path, 1 << 24, &err), &err);
    /* the reference: an ordinary open; the tail starts after the last segment */
    PCH_CHECK_OK(pch_vx_file_open(&f, NULL, path, &err), &err);
    {
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        PCH_CHECK_OK(pch_vx_file_scan(f, &so, &all, &adt, &err), &err);
    }
    for (uint32_t i = 0; i < pch_vx_file_n_segments(f); i++) {
        uint64_t so, sl;
        PCH_CHECK_OK(pch_vx_file_segment(f, i, &so, &sl, &err), &err);
        if (so + sl > tail_off) tail_off = so + sl;
    }
    for (int pass = 0; pass < 6; pass++) {
        tailchk t = { file.data, tail_off, B, 0, -1 };
        pch_vx_paged_open po = { PCH_VX_PAGED_OPEN_VERSION, tail_off, B, tail_matches, &t, starts, CHUNKS, 0, 0 };
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *got = NULL, *want = NULL;
        pch_vx_dtype *gdt = NULL;
        uint64_t wrong[CHUNKS + 1];
        int rc;
        if (pass == 2) {                         /* chunk starts that disagree with the file */
            memcpy(wrong, starts, sizeof wrong);
            wrong[61]--;
            po.chunk_starts = wrong;
        }
        if (pass == 3) t.refuse = (long)((file.len - tail_off) / B / 2);   /* a block in the middle */
        rc = pch_vx_file_open_paged(&g, NULL, path, &po, &err);
        if (pass == 3 && rc) {                   /* refused at open: the block was the layout's top */
            PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "does not match"), "refused block at open: %s", err.msg);
            continue;
        }
        PCH_CHECK_OK(rc, &err);
        if (rc) continue;
        PCH_CHECK(pch_vx_file_row_count(g) == CHUNKS * ROWS);
        if (pass == 4) { PCH_CHECK_OK(pch_vx_file_check(g, &err), &err); pch_vx_file_free(g); g = NULL; continue; }
        so.row_begin = 60 * ROWS + 17;
        so.row_end = so.row_begin + 1;
        if (pass == 5) so.row_end = CHUNKS * ROWS, so.row_begin = 0;
        rc = pch_vx_file_scan(g, &so, &got, &gdt, &err);
        if (pass == 2) {
            PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "rows"), "wrong chunk rows: rc %d %s", rc, err.msg);
        } else if (pass == 3 && rc) {
            PCH_CHECK_MSG(rc == PCH_ECORRUPT && strstr(err.msg, "does not match"), "refused block: %s", err.msg);
        } else {
            PCH_CHECK_OK(rc, &err);
            PCH_CHECK_OK(pch_vx__array_slice(&want, all, so.row_begin, so.row_end - so.row_begin, &err), &err);
            PCH_CHECK(got && want && pch_vx_array_equal(got, want));
        }
        if (pass == 0) {
            /* the point read read a small part of the tail: its chunk's layout, the lanes' tops */
            PCH_CHECK_MSG(t.checked * 4 < file.len - tail_off, "paged: %llu of %llu tail bytes read",
                          (unsigned long long)t.checked, (unsigned long long)(file.len - tail_off));
        }
        if (pass == 1) {                         /* every chunk: each block checked once */
            pch_vx_scan_options whole = PCH_VX_SCAN_OPTIONS_INIT;
            pch_vx_array *full = NULL;
            pch_vx_dtype *fdt = NULL;
            PCH_CHECK_OK(pch_vx_file_scan(g, &whole, &full, &fdt, &err), &err);
            PCH_CHECK(full && pch_vx_array_equal(full, all));
            PCH_CHECK(t.checked <= file.len - tail_off);
            pch_vx_array_free(full);
            pch_vx_dtype_free(fdt);
        }
        pch_vx_array_free(got);
        pch_vx_array_free(want);
        pch_vx_dtype_free(gdt);
        pch_vx_file_free(g);
        g = NULL;
    }
    /* bad options and a tail that starts after the layout */
    {
        pch_vx_paged_open po = { PCH_VX_PAGED_OPEN_VERSION, tail_off, 512, NULL, NULL, NULL, 0, 0, 0 };
        po.version = 0;
        PCH_CHECK(pch_vx_file_open_paged(&g, NULL, path, &po, &err) == PCH_EINVAL && !g);
        po.version = PCH_VX_PAGED_OPEN_VERSION + 1;    /* a version from the future: refused */
        PCH_CHECK(pch_vx_file_open_paged(&g, NULL, path, &po, &err) == PCH_EINVAL && !g);
        po.version = PCH_VX_PAGED_OPEN_VERSION;
        po.block_bytes = PCH_VX_BLOCK_MIN - 1;
        PCH_CHECK(pch_vx_file_open_paged(&g, NULL, path, &po, &err) == PCH_EINVAL && !g);
        po.block_bytes = 512;
        {                                        /* chunk starts that fall */
            uint64_t falling[3] = { 0, 5, 4 };
            po.chunk_starts = falling;
            po.n_chunks = 2;
            PCH_CHECK(pch_vx_file_open_paged(&g, NULL, path, &po, &err) == PCH_EINVAL && !g);
            po.chunk_starts = NULL;
            po.n_chunks = 0;
        }
        po.tail_off = file.len + 1;
        PCH_CHECK(pch_vx_file_open_paged(&g, NULL, path, &po, &err) == PCH_ECORRUPT && !g);
        po.tail_off = file.len - 64;
        PCH_CHECK_MSG(pch_vx_file_open_paged(&g, NULL, path, &po, &err) == PCH_ECORRUPT && !g && strstr(err.msg, "checked tail"),
                      "tail inside the footer: %s", err.msg);
        po.tail_off = tail_off;
        PCH_CHECK_OK(pch_vx_file_open_paged(&g, NULL, path, &po, &err), &err);   /* no check, no hint */
        PCH_CHECK_OK(pch_vx_file_check(g, &err), &err);
        pch_vx_file_free(g);
    }
    for (int c = 0; c < CHUNKS; c++) pch_vx_array_free(chunk[c]);
    pch_vx_array_free(all);
    pch_vx_dtype_free(adt);
    pch_vx_file_free(f);
    pch_vx_dtype_free(dt);
    pch_buf_dispose(&file);
    unlink(path);
}

/* ------------------------------------------------------------------ fault injection */

typedef struct failing { long countdown; long calls; } failing;
static void *f_alloc(void *payload, size_t n)
{
    failing *f = payload;
    f->calls++;
    if (f->countdown >= 0 && f->countdown-- == 0) return NULL;
    return malloc(n);
}
static void *f_realloc(void *payload, void *p, size_t n)
{
    failing *f = payload;
    f->calls++;
    if (f->countdown >= 0 && f->countdown-- == 0) return NULL;
    return realloc(p, n);
}
static void f_free(void *payload, void *p) { (void)payload; free(p); }

/* Fail the N-th allocation, N = 0, 1, 2, ... until a full write + read succeeds: every
** failure must be a clean error (ENOMEM), never a crash or leak (ASan). */
static void test_vortex_file__alloc_failures(void)
{
    int succeeded = 0;
    for (long n = 0; n < 20000 && !succeeded; n += (n < 2000 ? 1 : 7)) {
        failing fs = { n, 0 };
        pch_allocator al = { f_alloc, f_realloc, f_free, &fs };
        pch_ctx *ctx = NULL;
        pch_error err;
        pch_vx_dtype *dt = NULL, *odt = NULL;
        pch_vx_builder *b = NULL;
        pch_vx_array *a = NULL, *out = NULL;
        pch_vx_writer *w = NULL;
        pch_vx_file *f = NULL;
        pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
        int rc;
        fs.countdown = -1;
        PCH_CHECK_OK(pch_ctx_new(&ctx, &al, NULL, &err), &err);
        fs.countdown = n;
        o.zone_len = 2;
        rc = pch_vx_dtype_parse(&dt, ctx, "id:i64,name:utf8?,tags:list<utf8>?,s:struct<x:f64>", &err);
        if (!rc) rc = pch_vx_builder_new(&b, ctx, dt, &err);
        for (int r = 0; !rc && r < 40; r++) {
            pch_vx_builder *tg = pch_vx_builder_child(b, 2), *st = pch_vx_builder_child(b, 3);
            rc = pch_vx_builder_append_int(pch_vx_builder_child(b, 0), r * 3, &err);
            if (!rc) rc = r % 3 ? pch_vx_builder_append_bytes(pch_vx_builder_child(b, 1), "ab", 2, &err)
                                : pch_vx_builder_append_null(pch_vx_builder_child(b, 1), &err);
            if (!rc) rc = pch_vx_builder_append_bytes(pch_vx_builder_child(tg, 0), "t", 1, &err);
            if (!rc) rc = pch_vx_builder_append_valid(tg, &err);
            if (!rc) rc = pch_vx_builder_append_float(pch_vx_builder_child(st, 0), r / 4.0, &err);
            if (!rc) rc = pch_vx_builder_append_valid(st, &err);
            if (!rc) rc = pch_vx_builder_append_valid(b, &err);
        }
        if (!rc) rc = pch_vx_builder_finish(b, &a, &err);
        if (!rc) rc = pch_vx_writer_open(&w, ctx, dt, &o, &err);
        if (!rc) rc = pch_vx_writer_write(w, a, &err);
        if (!rc) rc = pch_vx_writer_finish(w, &err);
        if (!rc) { pch_bytes by = pch_vx_writer_bytes(w); rc = pch_vx_file_open_mem(&f, ctx, by.ptr, by.len, &err); }
        if (!rc) rc = pch_vx_file_check(f, &err);
        if (!rc) rc = pch_vx_file_scan(f, NULL, &out, &odt, &err);
        if (!rc) { succeeded = 1; PCH_CHECK(out->len == 40); PCH_CHECK_MSG(n > 100, "succeeded after only %ld allocations", n); }
        else PCH_CHECK_MSG(rc == PCH_ENOMEM || rc == PCH_ELIMIT, "allocation %ld: rc %d: %s", n, rc, err.msg);
        pch_vx_array_free(out);
        pch_vx_dtype_free(odt);
        pch_vx_file_free(f);
        pch_vx_writer_free(w);
        pch_vx_array_free(a);
        pch_vx_builder_free(b);
        pch_vx_dtype_free(dt);
        fs.countdown = -1;
        pch_ctx_free(ctx);
    }
    PCH_CHECK(succeeded);
}

/* Bulk appends build the same arrays as one value at a time, at any bit offset, with
** nulls around them; out-of-range values are refused. */
static void test_vortex_file__bulk_append(void)
{
    static const char *const types[] = { "u32?", "i64?", "u16?", "f32?", "f64?" };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        pch_vx_dtype *dt = NULL;
        pch_vx_builder *a = NULL, *b = NULL;
        pch_vx_array *x = NULL, *y = NULL;
        pch_error err;
        uint32_t u[37];
        double d[37];
        bool is_float = types[t][0] == 'f';
        PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, types[t], &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&a, NULL, dt, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        for (int round = 0; round < 5; round++) {
            size_t n = (size_t)(round * 9) % 37;
            for (size_t i = 0; i < n; i++) { u[i] = (uint32_t)(i * 1000 + (size_t)round); d[i] = -0.25 * (double)i; }
            for (size_t i = 0; i < n; i++)
                PCH_CHECK_OK(is_float ? pch_vx_builder_append_float(a, d[i], &err) : pch_vx_builder_append_uint(a, u[i], &err), &err);
            PCH_CHECK_OK(is_float ? pch_vx_builder_append_doubles(b, d, n, &err) : pch_vx_builder_append_u32s(b, u, n, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_null(a, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_append_null(b, &err), &err);
        }
        PCH_CHECK_OK(pch_vx_builder_finish(a, &x, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_finish(b, &y, &err), &err);
        PCH_CHECK(pch_vx_array_equal(x, y));
        if (strcmp(types[t], "u16?") == 0) {
            uint32_t big = 70000;
            PCH_CHECK(pch_vx_builder_append_u32s(b, &big, 1, &err) == PCH_EINVAL);
        }
        pch_vx_array_free(x);
        pch_vx_array_free(y);
        pch_vx_builder_free(a);
        pch_vx_builder_free(b);
        pch_vx_dtype_free(dt);
    }
}

/* pch_vx_builder_append_range (compaction's row copy): random schemas and values, copied in
** random consecutive ranges (empty ones too), give the array back equal; a range copied alone
** equals the slice; another dtype, a reversed range and rows past the end are refused. */
static void test_vortex_file__append_range(void)
{
    pch_error err;
    for (int iter = 0; iter < 80; iter++) {
        pch_buf sb;
        pch_vx_dtype *dt = NULL, *other = NULL;
        pch_vx_builder *b = NULL, *c = NULL;
        pch_vx_array *all = NULL, *back = NULL, *part = NULL, *want = NULL;
        uint64_t rows = rndn(5) == 0 ? rndn(3) : rndn(2000);
        PCH_CHECK_OK(random_schema(&sb, &dt, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&c, NULL, dt, &err), &err);
        int mode = (int)rndn(4);
        for (uint64_t r = 0; r < rows; r++) PCH_CHECK_OK(gen_value(b, mode, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_finish(b, &all, &err), &err);
        for (uint64_t at = 0; at < rows || at == 0;) {
            uint64_t n = rndn(4) == 0 ? 0 : 1 + rndn(rows / 4 + 1);
            if (at + n > rows) n = rows - at;
            PCH_CHECK_OK(pch_vx_builder_append_range(c, all, at, at + n, &err), &err);
            at += n;
            if (!rows) break;
        }
        PCH_CHECK_OK(pch_vx_builder_finish(c, &back, &err), &err);
        PCH_CHECK_MSG(pch_vx_array_equal(all, back), "iter %d schema %s: copied rows differ", iter, (const char *)sb.data);
        if (rows) {
            uint64_t lo = rndn(rows), hi = lo + rndn(rows - lo + 1);
            PCH_CHECK_OK(pch_vx_builder_append_range(c, all, lo, hi, &err), &err);
            PCH_CHECK_OK(pch_vx_builder_finish(c, &part, &err), &err);
            PCH_CHECK_OK(pch_vx__array_slice(&want, all, lo, hi - lo, &err), &err);
            PCH_CHECK_MSG(pch_vx_array_equal(part, want), "iter %d: rows [%llu, %llu) differ from the slice", iter,
                          (unsigned long long)lo, (unsigned long long)hi);
        }
        PCH_CHECK(pch_vx_builder_append_range(c, all, 1, 0, &err) == PCH_EINVAL);
        PCH_CHECK(pch_vx_builder_append_range(c, all, 0, rows + 1, &err) == PCH_ECORRUPT);
        PCH_CHECK_OK(pch_vx_dtype_parse(&other, NULL, "x:u8,y:utf8?", &err), &err);
        PCH_CHECK(pch_vx_builder_append_range(c, all, 0, 0, &err) == PCH_OK);
        pch_vx_builder_free(c);
        c = NULL;
        PCH_CHECK_OK(pch_vx_builder_new(&c, NULL, other, &err), &err);
        PCH_CHECK(pch_vx_builder_append_range(c, all, 0, rows, &err) == PCH_EINVAL);
        pch_vx_array_free(all); pch_vx_array_free(back); pch_vx_array_free(part); pch_vx_array_free(want);
        pch_vx_builder_free(b); pch_vx_builder_free(c);
        pch_vx_dtype_free(dt); pch_vx_dtype_free(other);
        pch_buf_dispose(&sb);
    }
    /* hostile rows: offsets out of order, bytes that are not UTF-8 */
    {
        pch_vx_dtype *dt = NULL;
        pch_vx_builder *b = NULL, *c = NULL;
        pch_vx_array *a = NULL;
        PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "x:utf8", &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 0), "ab", 2, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 0), "cd", 2, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_finish(b, &a, &err), &err);
        PCH_CHECK_OK(pch_vx_builder_new(&c, NULL, dt, &err), &err);
        a->children[0]->offsets[1] = 5;
        PCH_CHECK(pch_vx_builder_append_range(c, a, 0, 2, &err) == PCH_ECORRUPT);
        pch_vx_builder_free(c);
        PCH_CHECK_OK(pch_vx_builder_new(&c, NULL, dt, &err), &err);
        a->children[0]->offsets[1] = 2;
        a->children[0]->data[3] = 0xff;
        PCH_CHECK(pch_vx_builder_append_range(c, a, 0, 2, &err) == PCH_EINVAL);
        PCH_CHECK_OK(pch_vx_builder_append_range(c, a, 0, 1, &err), &err);   /* row 0 is sound */
        pch_vx_builder_free(c);
        pch_vx_builder_free(b);
        pch_vx_array_free(a);
        pch_vx_dtype_free(dt);
    }
}

/* pch_vx__bits_copy against a bit-by-bit copy: every source offset within two bytes, every
** length to 70, from a source allocated to exactly the bytes that hold the bits (ASan sees
** a read past them); the bits of the last byte past the length are cleared. */
static void test_vortex_file__bits_copy(void)
{
    uint8_t pool[32], want[16], got[16];
    uint64_t x = 99;
    for (size_t i = 0; i < sizeof pool; i++) { x = x * 6364136223846793005ull + 1442695040888963407ull; pool[i] = (uint8_t)(x >> 56); }
    for (uint64_t off = 0; off < 17; off++)
        for (uint64_t n = 0; n <= 70; n++) {
            size_t bytes = (size_t)((off + n + 7) / 8);
            uint8_t *src = malloc(bytes ? bytes : 1);
            PCH_CHECK(src != NULL);
            if (!src) return;
            memcpy(src, pool, bytes);
            memset(want, 0, sizeof want);
            memset(got, 0xff, sizeof got);
            for (uint64_t i = 0; i < n; i++) pch_vx__set_bit(want, i, pch_vx__bit(src, off + i));
            pch_vx__bits_copy(got, src, off, n);
            PCH_CHECK_MSG(memcmp(got, want, (size_t)((n + 7) / 8)) == 0, "off %llu n %llu", (unsigned long long)off,
                          (unsigned long long)n);
            free(src);
        }
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "vortex_file_test");
    snprintf(g_tmpdir, sizeof g_tmpdir, "%s", "/tmp/pch-vx-test.XXXXXX");
    if (!mkdtemp(g_tmpdir)) { perror("mkdtemp"); return 1; }
    PCH_RUN(test_vortex_file__worked_example_golden);
    PCH_RUN(test_vortex_file__legacy_rejected);
    PCH_RUN(test_vortex_file__random_roundtrip);
    PCH_RUN(test_vortex_file__row_digests);
    PCH_RUN(test_vortex_file__nested_nulls_and_big_strings);
    PCH_RUN(test_vortex_file__compressor_choices);
    PCH_RUN(test_vortex_file__multi_frame_ranges);
    PCH_RUN(test_vortex_file__zstd_dictionary);
    PCH_RUN(test_vortex_file__bool_ranges);
    PCH_RUN(test_vortex_file__sparse_ranges);
    PCH_RUN(test_vortex_file__runend_ranges);
    PCH_RUN(test_vortex_file__partial_reads);
    PCH_RUN(test_vortex_file__small_row_frames);
    PCH_RUN(test_vortex_file__alprd_floats);
    PCH_RUN(test_vortex_file__numeric_ranges);
    PCH_RUN(test_vortex_file__bitpacked_patches);
    PCH_RUN(test_vortex_file__scan_features);
    PCH_RUN(test_vortex_file__corruption);
    PCH_RUN(test_vortex_file__alloc_failures);
    PCH_RUN(test_vortex_file__streamed_publish);
    PCH_RUN(test_vortex_file__bulk_append);
    PCH_RUN(test_vortex_file__append_range);
    PCH_RUN(test_vortex_file__all_null_dict_lane);
    PCH_RUN(test_vortex_file__fsst_memo_carries);
    PCH_RUN(test_vortex_file__paged_open);
    PCH_RUN(test_vortex_file__bits_copy);
    PCH_RUN(test_vortex_file__nullable_dict_codes);
    rmdir(g_tmpdir);
    return pch_test_report();
}
