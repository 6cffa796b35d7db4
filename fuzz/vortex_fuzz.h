/* Shared helpers of the Vortex fuzz targets (fuzz/vortex_*.c): a context with a small
** allocation limit (so hostile row counts fail with ENOMEM instead of exhausting memory), a
** valid template file (the §9.2 worked example, compressed, with zone maps), splicing fuzz
** bytes in as one footer region, and a full read of a file through every reader entry point. */
#ifndef PCH_VORTEX_FUZZ_H
#define PCH_VORTEX_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vortex/vortex_int.h"

static inline pch_ctx *fz_ctx(void)
{
    static pch_ctx *ctx;   /* fuzz harness only: one context for the process */
    if (!ctx) {
        pch_limits lim = { (size_t)64 << 20, (size_t)64 << 20, 1000, 64, (size_t)1 << 20 };
        if (pch_ctx_new(&ctx, NULL, &lim, NULL) < 0) abort();
    }
    return ctx;
}

static inline int fz_tail_whole(void *payload, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    (void)payload; (void)err;
    return len && bytes[len - 1] == 0xfe ? PCH_ECORRUPT : PCH_OK;   /* refuse some tails */
}

/* The same bytes through a paged open (pch_vx_file_open_paged: the layout and footer read in
** place, a block at a time, every segment spec when first used), from a memory file: a point
** read, then (second pass) the whole tail at once before a full check. */
static inline void fz_read_paged(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = memfd_create("fz", 0);
    pch_vx_file *f = NULL;
    pch_error err;
    pch_vx_paged_open po = { PCH_VX_PAGED_OPEN_VERSION, size > 64 ? size / 2 : 4, 64, NULL, NULL, NULL, 0, 0, 0 };
    if (fd < 0) return;
    if (write(fd, data, size) != (ssize_t)size) { close(fd); return; }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    for (int pass = 0; pass < 2; pass++) {
        po.tail_off = pass ? 4 : po.tail_off;   /* half the file (may cut a region), then all of it */
        if (pch_vx_file_open_paged(&f, fz_ctx(), path, &po, &err) == 0) {
            pch_vx_array *a = NULL;
            pch_vx_dtype *dt = NULL;
            pch_vx_scan_options one = PCH_VX_SCAN_OPTIONS_INIT;
            one.row_begin = pch_vx_file_row_count(f) / 2;
            one.row_end = one.row_begin + (pch_vx_file_row_count(f) ? 1 : 0);
            if (pch_vx_file_scan(f, &one, &a, &dt, &err) == 0) {
                pch_vx_array_free(a);
                pch_vx_dtype_free(dt);
            }
            if (pass == 0 || pch_vx_file_read_tail(f, fz_tail_whole, NULL, &err) == 0) (void)pch_vx_file_check(f, &err);
        }
        pch_vx_file_free(f);
        f = NULL;
    }
    close(fd);
}

static inline void fz_read_all(const uint8_t *data, size_t size)
{
    pch_vx_file *f = NULL;
    pch_error err;
    fz_read_paged(data, size);
    if (pch_vx_file_open_mem(&f, fz_ctx(), data, size, &err) == 0) {
        pch_vx_array *a = NULL;
        pch_vx_dtype *dt = NULL;
        pch_vx_scan_options o = PCH_VX_SCAN_OPTIONS_INIT;
        FILE *null = fopen("/dev/null", "w");
        if (null) { pch_vx_file_inspect(f, null, &err); fclose(null); }
        if (pch_vx_file_check(f, &err) == 0 && pch_vx_file_scan(f, NULL, &a, &dt, &err) == 0) {
            pch_vx_array_free(a);
            pch_vx_dtype_free(dt);
        }
        if (pch_vx_file_row_count(f) > 2 && pch_vx_file_set_partial_reads(f, 64, NULL, NULL, &err) == 0) {
            /* one row read in part (only the blocks of its buffers, as a point read does) */
            pch_vx_scan_options one = PCH_VX_SCAN_OPTIONS_INIT;
            one.row_begin = pch_vx_file_row_count(f) / 2;
            one.row_end = one.row_begin + 1;
            if (pch_vx_file_scan(f, &one, &a, &dt, &err) == 0) {
                pch_vx_array_free(a);
                pch_vx_dtype_free(dt);
            }
            (void)pch_vx_file_set_partial_reads(f, 0, NULL, NULL, &err);
        }
        if (f && pch_vx_file_dtype(f)->kind == PCH_VX_STRUCT && pch_vx_file_dtype(f)->n_fields) {
            o.filter_column = pch_vx_file_dtype(f)->names[0];
            o.filter_op = PCH_VX_CMP_GE;
            o.filter_i = 2;
            if (pch_vx_file_scan(f, &o, &a, &dt, &err) == 0) {
                pch_vx_array_free(a);
                pch_vx_dtype_free(dt);
            }
        }
    }
    pch_vx_file_free(f);
}

/* The §9.2 worked-example schema with a few rows, compressed, zone maps on. */
static inline int fz_template(pch_buf *out)
{
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_error err;
    int rc;
    o.zone_len = 2;
    rc = pch_vx_dtype_parse(&dt, NULL, "id:i64,name:utf8?,items:list<struct<a:i32,b:utf8?>>?", &err);
    if (!rc) rc = pch_vx_builder_new(&b, NULL, dt, &err);
    for (int r = 0; !rc && r < 5; r++) {
        pch_vx_builder *it = pch_vx_builder_child(b, 2), *st = pch_vx_builder_child(it, 0);
        pch_vx_builder_append_int(pch_vx_builder_child(b, 0), r, &err);
        if (r == 2) pch_vx_builder_append_null(pch_vx_builder_child(b, 1), &err);
        else pch_vx_builder_append_bytes(pch_vx_builder_child(b, 1), "nm", 2, &err);
        for (int e = 0; e < r; e++) {
            pch_vx_builder_append_int(pch_vx_builder_child(st, 0), e, &err);
            pch_vx_builder_append_bytes(pch_vx_builder_child(st, 1), "x", 1, &err);
            pch_vx_builder_append_valid(st, &err);
        }
        pch_vx_builder_append_valid(it, &err);
        rc = pch_vx_builder_append_valid(b, &err);
    }
    if (!rc) rc = pch_vx_builder_finish(b, &a, &err);
    if (!rc) rc = pch_vx_writer_open(&w, NULL, dt, &o, &err);
    if (!rc) rc = pch_vx_writer_write(w, a, &err);
    if (!rc) rc = pch_vx_writer_finish(w, &err);
    if (!rc) {
        pch_bytes by = pch_vx_writer_bytes(w);
        rc = pch_buf_append(out, by.ptr, by.len);
    }
    pch_vx_writer_free(w);
    pch_vx_array_free(a);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
    return rc;
}

/* Replace footer region `which` (0 dtype, 1 layout, 3 footer) of tmpl by data. */
static inline int fz_splice(pch_buf *out, const pch_buf *tmpl, unsigned which, const uint8_t *data, size_t size)
{
    uint16_t ps_len = pch_load_le16(tmpl->data + tmpl->len - 6);
    size_t ps_at = tmpl->len - 8 - ps_len;
    pch_vx_fbv v;
    pch_vx_fbt ps, seg;
    pch_vx_fbb b;
    pch_bytes fb;
    uint64_t off[4] = { 0 }, new_off;
    uint32_t len[4] = { 0 }, segs[4] = { 0 }, root;
    int rc;
    if (pch_vx_fb_root(&ps, &v, tmpl->data + ps_at, ps_len, "ps", NULL)) return -1;
    for (unsigned i = 0; i < 4; i++) {
        int present;
        if (pch_vx_fb_table(&ps, i, 0, &seg, &present) || !present) continue;
        pch_vx_fb_u64(&seg, 0, 0, &off[i]);
        pch_vx_fb_u32(&seg, 1, 0, &len[i]);
    }
    if (pch_buf_append(out, tmpl->data, ps_at) || pch_buf_pad(out, 8, 0)) return -1;
    new_off = out->len;
    if (pch_buf_append(out, data, size) || pch_buf_pad(out, 8, 0)) return -1;
    off[which] = new_off;
    len[which] = (uint32_t)size;
    pch_vx_fbb_init(&b, NULL);
    for (unsigned i = 0; i < 4; i++) {
        if (i == 2) continue;
        pch_vx_fbb_start(&b);
        pch_vx_fbb_u64(&b, 0, off[i], 0, 0);
        pch_vx_fbb_u32(&b, 1, len[i], 0, 0);
        pch_vx_fbb_u8(&b, 2, 3, 0, 0);
        segs[i] = pch_vx_fbb_end(&b);
    }
    pch_vx_fbb_start(&b);
    pch_vx_fbb_off(&b, 0, segs[0]);
    pch_vx_fbb_off(&b, 1, segs[1]);
    pch_vx_fbb_off(&b, 3, segs[3]);
    root = pch_vx_fbb_end(&b);
    rc = pch_vx_fbb_finish(&b, root, &fb, NULL);
    if (!rc) rc = pch_buf_append(out, fb.ptr, fb.len);
    if (!rc) rc = pch_buf_put_le16(out, 1);
    if (!rc) rc = pch_buf_put_le16(out, (uint16_t)fb.len);
    if (!rc) rc = pch_buf_append(out, "VTXF", 4);
    pch_vx_fbb_dispose(&b);
    return rc;
}

static inline int fz_splice_target(const uint8_t *data, size_t size, unsigned which)
{
    static pch_buf tmpl;   /* fuzz harness only: built once per process */
    pch_buf f;
    if (!tmpl.data && fz_template(&tmpl)) abort();
    if (size > ((size_t)1 << 20)) return 0;
    pch_buf_init(&f, NULL);
    if (fz_splice(&f, &tmpl, which, data, size) == 0) fz_read_all(f.data, f.len);
    pch_buf_dispose(&f);
    return 0;
}

#endif
