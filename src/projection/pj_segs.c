/* Segment digest tables (docs/vortex-projection.md §6 "Every byte a read uses is checked";
** RFC-0006 §9.5): one BLAKE3 per segment of a data file, so that a read checks exactly the
** segments it decodes — a narrow scan of `steps.source` hashes that lane's segments, never a
** message lane's — and, for a segment longer than two blocks, one BLAKE3 per block of it, so
** that a point read that reads only some blocks of a segment (its own zstd frames,
** pch_vx_file_set_partial_reads) checks exactly those. The table is a file beside its data
** file, listed in the manifest with its size and digest. Version 2 (written now):
**
**   header (48 bytes)  "PCHSEGS2", u64 data file size, u32 n segments, u32 block bytes B,
**                      u32 P segments per page, u32 n_pages, u64 0, u64 0
**   page table         n_pages x (u64 page offset, u32 page length, u32 0, 32-byte BLAKE3)
**   pages              page p lists segments [pP, min(n, (p+1)P)): one 56-byte entry each
**                      (u64 offset, u64 length, u32 first block, u32 n blocks, 32-byte BLAKE3
**                      of the segment), then the 32-byte BLAKE3 of every block of those
**                      segments (a segment has ceil(length / B) blocks when length > 2B,
**                      else none; block k is its bytes [kB, min((k+1)B, length)))
**
** Version 3 (written now) is version 2 with the data file's tail: header bytes 32..47 are
** u64 tail offset T, u32 n tail blocks, u32 0, and the page table is followed by the 32-byte
** BLAKE3 of each block of the data file's bytes [T, end) (block k is [T + kB, T + (k+1)B),
** the last one shorter), so that a reader reads the footer and layout of a data file in
** place, a checked block at a time (pch_vx_file_open_paged), instead of the whole tail. The
** manifest's digest then covers header + page table + tail digests.
**
** Version 4 (written now) is version 3 with row digests (docs/vortex-projection.md §6 "Row
** digests"): header bytes 44..47 are u32 n rows R (the data file's), the tail digests are
** followed by the 32-byte BLAKE3 of each row page, and after the pages come R row digests
** (pch_vx_row_digest of each row of the data file, in order, 32 bytes each) in row pages of
** SEG_ROW_PAGE rows (page k: rows [kS, min((k+1)S, R))). The manifest's digest then covers
** header + page table + tail digests + row page digests; a point read reads the row page of
** its row (checked against its digest) and compares the row it decoded with it, so it needs
** no page and no block digest of the segments it reads.
**
** all integers little-endian. The manifest's digest is the BLAKE3 of header + page table, and
** the pages tile the rest of the file; a reader reads the header and page table when it opens
** the data file and each page (checked against its page digest, its entries against the
** data file's segment map) the first time a segment of it is read — so opening a file reads
** 48 bytes per page of P segments, not the whole table (§13.4: open costs that do not grow
** with the file). Version 1 ("PCHSEGS1", u64 file size, u32 n, u32 0, then n x (u64 offset,
** u64 length, BLAKE3); its manifest digest covers the whole table) is still read.
**
** The reader installs pj_segtab_check as the data file's segment check
** (pch_vx_file_set_segment_check) and pj_segtab_check_block as its block check: every
** segment or block read is checked against its entry before anything of it is decoded. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "projection/pj_int.h"

#define SEG_MAGIC1 "PCHSEGS1"
#define SEG_MAGIC2 "PCHSEGS2"
#define SEG_MAGIC3 "PCHSEGS3"
#define SEG_MAGIC4 "PCHSEGS4"
#define SEG_ROW_PAGE 64u          /* rows per row page: a point read reads 2 KiB of digests */
#define SEG_HEAD1 24
#define SEG_ENTRY1 48
#define SEG_HEAD2 48
#define SEG_PAGE_ENTRY 48
#define SEG_ENTRY2 56
#define SEG_BLOCK 4096u           /* block bytes written (docs/vortex-projection.md §3) */
#define SEG_PAGE_SEGS 128u        /* segments per page written */

struct pj_segtab {
    pch_ctx *ctx;
    int version;
    uint8_t *raw;                   /* v1: the whole table; v2: header + page table, or (parsed
                                    ** from memory) the whole table */
    size_t raw_len;
    uint32_t n;
    uint64_t file_bytes;
    uint64_t checked;               /* bytes checked so far */
    /* version 2 and 3 */
    uint32_t block, page_segs, n_pages;
    uint64_t tail_off;              /* version 3: the data file's tail, in blocks of `block` */
    uint32_t tail_blocks;
    const uint8_t *tail_dig;        /* in raw, after the page table */
    uint32_t n_rows;                /* version 4: row digests of the data file's rows */
    uint32_t n_row_pages;
    uint64_t rows_off;              /* where they start in the table */
    const uint8_t *row_dig;         /* in raw, after the tail digests: one per row page */
    uint8_t **rows;                 /* row pages read and checked (NULL: not yet) */
    uint8_t **page;                 /* pages read and checked (NULL: not yet) */
    pch_rfile *fd;                  /* the table file (NULL: pages come from raw) */
    pch_vx_file *f;                 /* the data file whose segment map pages must list */
    char name[256];                 /* the table's path in the root, for messages */
    pj_segtab_io io;
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

static uint32_t blocks_of(uint64_t len, uint32_t B) { return len > 2 * (uint64_t)B ? (uint32_t)((len + B - 1) / B) : 0; }


/* Bytes [off, off + len) of fd into *buf, grown to *cap as needed (a segment at a time). */
static int read_grow(pch_rfile *fd, uint64_t off, uint64_t len, uint8_t **buf, size_t *cap, pch_error *err)
{
    if (len > *cap) {
        uint8_t *nb = realloc(*buf, (size_t)len);
        if (!nb) return nomem(err);
        *buf = nb;
        *cap = (size_t)len;
    }
    return pj_pread(fd, off, (size_t)len, *buf, err);
}

int pj_segtab_write(pch_ctx *ctx, const char *data_path, uint64_t tail_off, uint64_t n_rows, const uint8_t *row_digests,
                    const char *out_path, char digest[80], uint64_t *bytes, pch_error *err)
{
    const uint32_t n_row_pages = row_digests ? (uint32_t)((n_rows + SEG_ROW_PAGE - 1) / SEG_ROW_PAGE) : 0;
    pch_vx_file *f = NULL;
    pch_buf t, pg;
    uint8_t *seg = NULL;
    size_t seg_cap = 0;
    uint64_t size;
    uint32_t n, n_pages, tail_blocks;
    size_t head;
    pch_rfile *fd = NULL;
    int rc;
    pch_buf_init(&t, ctx);
    pch_buf_init(&pg, ctx);
    if ((rc = pch_vx_file_open(&f, ctx, data_path, err)) < 0) goto done;
    if ((rc = pch_rfile_open(ctx, data_path, &fd, err)) < 0 || (rc = pch_rfile_size(fd, &size, err)) < 0) goto done;
    if (tail_off < 4 || tail_off > size) { rc = pch_error_set(err, PCH_EINVAL, "%s: tail at %" PRIu64 " of %" PRIu64 " bytes", data_path, tail_off, size); goto done; }
    n = pch_vx_file_n_segments(f);
    n_pages = (n + SEG_PAGE_SEGS - 1) / SEG_PAGE_SEGS;
    tail_blocks = (uint32_t)((size - tail_off + SEG_BLOCK - 1) / SEG_BLOCK);
    pch_buf_append(&t, row_digests ? SEG_MAGIC4 : SEG_MAGIC3, 8);
    pch_buf_put_le64(&t, size);
    pch_buf_put_le32(&t, n);
    pch_buf_put_le32(&t, SEG_BLOCK);
    pch_buf_put_le32(&t, SEG_PAGE_SEGS);
    pch_buf_put_le32(&t, n_pages);
    pch_buf_put_le64(&t, tail_off);
    pch_buf_put_le32(&t, tail_blocks);
    pch_buf_put_le32(&t, row_digests ? (uint32_t)n_rows : 0);
    if (pch_buf_reserve(&t, (size_t)n_pages * SEG_PAGE_ENTRY) < 0) { rc = nomem(err); goto done; }
    memset(t.data + t.len, 0, (size_t)n_pages * SEG_PAGE_ENTRY);
    t.len += (size_t)n_pages * SEG_PAGE_ENTRY;
    if ((rc = read_grow(fd, tail_off, size - tail_off, &seg, &seg_cap, err)) < 0) goto done;
    for (uint32_t k = 0; k < tail_blocks; k++) {
        uint64_t bo = (uint64_t)k * SEG_BLOCK, bl = size - tail_off - bo < SEG_BLOCK ? size - tail_off - bo : SEG_BLOCK;
        uint8_t d[32];
        pch_blake3_hash(d, seg + bo, (size_t)bl);
        pch_buf_append(&t, d, 32);
    }
    if (row_digests && n_rows > UINT32_MAX) { rc = pch_error_set(err, PCH_ELIMIT, "%s: %" PRIu64 " rows", data_path, n_rows); goto done; }
    for (uint32_t k = 0; k < n_row_pages; k++) {
        uint64_t r0 = (uint64_t)k * SEG_ROW_PAGE, nr = n_rows - r0 < SEG_ROW_PAGE ? n_rows - r0 : SEG_ROW_PAGE;
        uint8_t d[32];
        pch_blake3_hash(d, row_digests + (size_t)r0 * 32, (size_t)nr * 32);
        pch_buf_append(&t, d, 32);
    }
    head = t.len;
    for (uint32_t p = 0; p < n_pages && rc == PCH_OK; p++) {
        uint32_t a = p * SEG_PAGE_SEGS, e = a + SEG_PAGE_SEGS < n ? a + SEG_PAGE_SEGS : n, first = 0;
        pch_buf blk;
        uint8_t *pe;
        pch_buf_init(&blk, ctx);
        pg.len = 0;
        for (uint32_t i = a; i < e && rc == PCH_OK; i++) {
            uint64_t off, len;
            uint8_t d[32];
            uint32_t nb;
            if ((rc = pch_vx_file_segment(f, i, &off, &len, err)) < 0 || (rc = read_grow(fd, off, len, &seg, &seg_cap, err)) < 0) break;
            pch_blake3_hash(d, seg, (size_t)len);
            nb = blocks_of(len, SEG_BLOCK);
            pch_buf_put_le64(&pg, off);
            pch_buf_put_le64(&pg, len);
            pch_buf_put_le32(&pg, first);
            pch_buf_put_le32(&pg, nb);
            pch_buf_append(&pg, d, 32);
            for (uint32_t k = 0; k < nb; k++) {
                uint64_t bo = (uint64_t)k * SEG_BLOCK, bl = len - bo < SEG_BLOCK ? len - bo : SEG_BLOCK;
                pch_blake3_hash(d, seg + bo, (size_t)bl);
                pch_buf_append(&blk, d, 32);
            }
            first += nb;
        }
        pch_buf_append(&pg, blk.data, blk.len);
        if (blk.oom || pg.oom) rc = nomem(err);
        pch_buf_dispose(&blk);
        if (rc) break;
        pe = t.data + SEG_HEAD2 + (size_t)p * SEG_PAGE_ENTRY;
        pch_store_le64(pe, t.len);
        pch_store_le32(pe + 8, (uint32_t)pg.len);
        pch_blake3_hash(pe + 16, pg.data, pg.len);
        pch_buf_append(&t, pg.data, pg.len);
    }
    if (row_digests && rc == PCH_OK) pch_buf_append(&t, row_digests, (size_t)n_rows * 32);
    if (rc == PCH_OK && t.oom) rc = nomem(err);
    if (rc == PCH_OK) rc = pch_file_publish(out_path, t.data, t.len, err);
    if (rc == PCH_OK) {
        pj_bytes_digest(digest, t.data, head);
        *bytes = t.len;
    }
done:
    pch_rfile_close(fd);
    free(seg);
    pch_vx_file_free(f);
    pch_buf_dispose(&t);
    pch_buf_dispose(&pg);
    return rc;
}

static pj_segtab *segtab_new(pch_ctx *ctx, const char *name)
{
    pj_segtab *t = pch_calloc(ctx, 1, sizeof *t);
    if (t) {
        t->ctx = ctx;
        t->fd = NULL;
        snprintf(t->name, sizeof t->name, "%s", name);
    }
    return t;
}

/* v1: the whole table, checked: the data file's size, entry count, entries in order inside
** the file. */
static int parse_v1(pj_segtab *t, const uint8_t *raw, size_t len, const char *data_rel, pch_error *err)
{
    uint64_t prev_end = 0;
    if (len < SEG_HEAD1 || pch_load_le64(raw + 8) != t->file_bytes || pch_load_le32(raw + 20) != 0 ||
        (len - SEG_HEAD1) % SEG_ENTRY1 != 0 || (len - SEG_HEAD1) / SEG_ENTRY1 != pch_load_le32(raw + 16))
        return pch_error_set(err, PCH_ECORRUPT, "not a segment digest table of %s", data_rel);
    t->n = pch_load_le32(raw + 16);
    for (uint32_t i = 0; i < t->n; i++) {
        const uint8_t *e = raw + SEG_HEAD1 + (size_t)i * SEG_ENTRY1;
        uint64_t off = pch_load_le64(e), l = pch_load_le64(e + 8);
        if (off < prev_end || l > t->file_bytes || off > t->file_bytes - l)
            return pch_error_set(err, PCH_ECORRUPT, "segment %u (bytes %" PRIu64 "+%" PRIu64 ") out of order or outside %s",
                                 i, off, l, data_rel);
        prev_end = off + l;
    }
    t->version = 1;
    return PCH_OK;
}

/* v2 header + page table in head[0..head_len), for a table file of table_bytes: the data
** file's size, a block size and page size we can use, pages that tile the file after the
** head in order. */
/* Bytes of the v2/v3 head (header, page table, v3 tail digests) the header in raw[0..48)
** announces, or 0 when it is neither. */
static uint64_t head_bytes(const uint8_t *raw)
{
    uint64_t h = SEG_HEAD2 + (uint64_t)pch_load_le32(raw + 28) * SEG_PAGE_ENTRY;
    if (memcmp(raw, SEG_MAGIC4, 8) == 0)
        return h + (uint64_t)pch_load_le32(raw + 40) * 32 + ((uint64_t)pch_load_le32(raw + 44) + SEG_ROW_PAGE - 1) / SEG_ROW_PAGE * 32;
    if (memcmp(raw, SEG_MAGIC3, 8) == 0) return h + (uint64_t)pch_load_le32(raw + 40) * 32;
    return memcmp(raw, SEG_MAGIC2, 8) == 0 ? h : 0;
}

static int parse_v2_head(pj_segtab *t, const uint8_t *head, size_t head_len, uint64_t table_bytes,
                         const char *data_rel, pch_error *err)
{
    uint64_t at, pt;
    int v3, v4;
    if (head_len < SEG_HEAD2 || pch_load_le64(head + 8) != t->file_bytes)
        return pch_error_set(err, PCH_ECORRUPT, "not a segment digest table of %s", data_rel);
    v4 = memcmp(head, SEG_MAGIC4, 8) == 0;
    v3 = v4 || memcmp(head, SEG_MAGIC3, 8) == 0;
    if (v4) {
        t->n_rows = pch_load_le32(head + 44);
        t->n_row_pages = (uint32_t)(((uint64_t)t->n_rows + SEG_ROW_PAGE - 1) / SEG_ROW_PAGE);
    }
    if (v3 ? !v4 && pch_load_le32(head + 44) != 0 : pch_load_le64(head + 32) || pch_load_le64(head + 40))
        return pch_error_set(err, PCH_ECORRUPT, "not a segment digest table of %s", data_rel);
    t->n = pch_load_le32(head + 16);
    t->block = pch_load_le32(head + 20);
    t->page_segs = pch_load_le32(head + 24);
    t->n_pages = pch_load_le32(head + 28);
    if (t->block < 64 || t->block > (1u << 26) || !t->page_segs || t->page_segs > (1u << 16) ||
        t->n_pages != (t->n + (uint64_t)t->page_segs - 1) / t->page_segs)
        return pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: %u segments, %u pages of %u, blocks of %u bytes",
                             data_rel, t->n, t->n_pages, t->page_segs, t->block);
    pt = SEG_HEAD2 + (uint64_t)t->n_pages * SEG_PAGE_ENTRY;
    if (v3) {
        t->tail_off = pch_load_le64(head + 32);
        t->tail_blocks = pch_load_le32(head + 40);
        if (t->tail_off < 4 || t->tail_off > t->file_bytes ||
            t->tail_blocks != (t->file_bytes - t->tail_off + t->block - 1) / t->block)
            return pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: a tail at %" PRIu64 " in %u blocks of a %" PRIu64 "-byte file",
                                 data_rel, t->tail_off, t->tail_blocks, t->file_bytes);
        t->tail_dig = head + pt;
    }
    if (head_len != pt + (uint64_t)t->tail_blocks * 32 + (uint64_t)t->n_row_pages * 32)
        return pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: page table of %zu bytes", data_rel, head_len - SEG_HEAD2);
    if (v4) t->row_dig = head + pt + (size_t)t->tail_blocks * 32;
    at = head_len;
    for (uint32_t p = 0; p < t->n_pages; p++) {
        const uint8_t *pe = head + SEG_HEAD2 + (size_t)p * SEG_PAGE_ENTRY;
        uint32_t cnt = (p + 1 == t->n_pages ? t->n - p * t->page_segs : t->page_segs);
        uint64_t po = pch_load_le64(pe), pl = pch_load_le32(pe + 8);
        if (po != at || pl < (uint64_t)cnt * SEG_ENTRY2 || pch_load_le32(pe + 12) || pl > table_bytes - at)
            return pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: page %u at %" PRIu64 "+%" PRIu64 " does not follow page %u",
                                 data_rel, p, po, pl, p ? p - 1 : 0);
        at += pl;
    }
    if (v4) {                                          /* the row digests end the table */
        if ((uint64_t)t->n_rows * 32 > table_bytes - at)
            return pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: %u row digests past its end", data_rel, t->n_rows);
        t->rows_off = at;
        at += (uint64_t)t->n_rows * 32;
    }
    if (at != table_bytes)
        return pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: %" PRIu64 " bytes after its last page", data_rel, table_bytes - at);
    if (!(t->page = pch_calloc(t->ctx, t->n_pages ? t->n_pages : 1, sizeof(uint8_t *))) ||
        !(t->rows = pch_calloc(t->ctx, t->n_row_pages ? t->n_row_pages : 1, sizeof(uint8_t *))))
        return nomem(err);
    t->version = 2;                 /* v3 pages are v2's */
    return PCH_OK;
}

int pj_segtab_parse(pj_segtab **out, pch_ctx *ctx, const uint8_t *raw, size_t len, const char *data_rel,
                    uint64_t file_bytes, pch_error *err)
{
    pj_segtab *t;
    int rc;
    *out = NULL;
    if (len < 8 || (memcmp(raw, SEG_MAGIC1, 8) != 0 && memcmp(raw, SEG_MAGIC2, 8) != 0 && memcmp(raw, SEG_MAGIC3, 8) != 0 &&
                    memcmp(raw, SEG_MAGIC4, 8) != 0))
        return pch_error_set(err, PCH_ECORRUPT, "not a segment digest table of %s", data_rel);
    if (!(t = segtab_new(ctx, "segment digest table")) || !(t->raw = pch_malloc(ctx, len ? len : 1))) { pch_free(ctx, t); return nomem(err); }
    memcpy(t->raw, raw, len);
    t->raw_len = len;
    t->file_bytes = file_bytes;
    if (raw[7] == '1') rc = parse_v1(t, raw, len, data_rel, err);
    else {
        uint64_t head = len >= SEG_HEAD2 ? head_bytes(t->raw) : len;
        rc = head > len ? pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: page table past its end", data_rel)
                        : parse_v2_head(t, t->raw, (size_t)head, len, data_rel, err);
    }
    if (rc < 0) { pj_segtab_free(t); return rc; }
    *out = t;
    return PCH_OK;
}

int pj_segtab_load(pj_segtab **out, pch_ctx *ctx, const char *root, const char *rel, uint64_t want_bytes,
                   const char *want_digest, const char *data_rel, uint64_t file_bytes, bool whole, pch_error *err)
{
    pch_buf p;
    pj_segtab *t = NULL;
    uint8_t magic[SEG_HEAD2];
    char got[80];
    uint64_t end;
    pch_rfile *fd = NULL;
    int rc;
    *out = NULL;
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/%s", root, rel);
    if (p.oom) return nomem(err);
    rc = pch_rfile_open(ctx, (const char *)p.data, &fd, err);
    pch_buf_dispose(&p);
    if (rc < 0) return rc;
    /* the manifest's size, then the digest of what it covers, before anything is parsed */
    if ((rc = pch_rfile_size(fd, &end, err)) < 0) goto fail;
    if ((uint64_t)end != want_bytes) {
        rc = pch_error_set(err, PCH_ECORRUPT, "%" PRIu64 " bytes, the manifest says %" PRIu64, (uint64_t)end, want_bytes);
        goto fail;
    }
    /* a reader that will want most pages (a scan) takes the whole table with one request on
    ** object storage: its pages, read one by one as the scan reaches them, were a request
    ** each, one after another (each page is still checked when first used) */
    if (whole && (rc = pch_rfile_prefetch(fd, 0, want_bytes, err)) < 0) goto fail;
    if (!(t = segtab_new(ctx, rel))) { rc = nomem(err); goto fail; }
    t->file_bytes = file_bytes;
    if (want_bytes < 8) { rc = pch_error_set(err, PCH_ECORRUPT, "not a segment digest table of %s", data_rel); goto fail; }
    if ((rc = pj_pread(fd, 0, want_bytes < SEG_HEAD2 ? (size_t)want_bytes : SEG_HEAD2, magic, err)) < 0) goto fail;
    t->io.reads++;
    t->io.bytes_read += want_bytes < SEG_HEAD2 ? want_bytes : SEG_HEAD2;
    /* version 2: the header and page table; version 1 (or anything else): the whole table */
    t->raw_len = (size_t)want_bytes;
    if (want_bytes >= SEG_HEAD2 && head_bytes(magic)) {
        uint64_t head = head_bytes(magic);
        if (head > want_bytes) { rc = pch_error_set(err, PCH_ECORRUPT, "segment digest table of %s: page table past its end", data_rel); goto fail; }
        t->raw_len = (size_t)head;
    }
    if (!(t->raw = pch_malloc(ctx, t->raw_len))) { rc = nomem(err); goto fail; }
    if ((rc = pj_pread(fd, 0, t->raw_len, t->raw, err)) < 0) goto fail;
    t->io.reads++;
    t->io.bytes_read += t->raw_len;
    pj_bytes_digest(got, t->raw, t->raw_len);
    if (strcmp(got, want_digest) != 0) {
        rc = pch_error_set(err, PCH_ECORRUPT, "digest %s, the manifest says %s", got, want_digest);
        goto fail;
    }
    if (memcmp(t->raw, SEG_MAGIC2, 8) == 0 || memcmp(t->raw, SEG_MAGIC3, 8) == 0 || memcmp(t->raw, SEG_MAGIC4, 8) == 0) {
        if ((rc = parse_v2_head(t, t->raw, t->raw_len, want_bytes, data_rel, err)) < 0) goto fail;
        t->fd = fd;
        fd = NULL;
    } else if (memcmp(t->raw, SEG_MAGIC1, 8) == 0) {
        if ((rc = parse_v1(t, t->raw, t->raw_len, data_rel, err)) < 0) goto fail;
    } else {
        rc = pch_error_set(err, PCH_ECORRUPT, "not a segment digest table of %s", data_rel);
        goto fail;
    }
    pch_rfile_close(fd);
    *out = t;
    return PCH_OK;
fail:
    pch_rfile_close(fd);
    pj_segtab_free(t);
    return rc;
}

void pj_segtab_free(pj_segtab *t)
{
    if (!t) return;
    for (uint32_t p = 0; t->page && p < t->n_pages; p++) pch_free(t->ctx, t->page[p]);
    for (uint32_t k = 0; t->rows && k < t->n_row_pages; k++) pch_free(t->ctx, t->rows[k]);
    pch_free(t->ctx, t->page);
    pch_free(t->ctx, t->rows);
    pch_rfile_close(t->fd);
    pch_free(t->ctx, t->raw);
    pch_free(t->ctx, t);
}

uint64_t pj_segtab_checked(const pj_segtab *t) { return t ? t->checked : 0; }
uint32_t pj_segtab_block_bytes(const pj_segtab *t) { return t && t->version == 2 ? t->block : 0; }
uint64_t pj_segtab_tail_off(const pj_segtab *t) { return t && t->tail_dig ? t->tail_off : 0; }
bool pj_segtab_has_rows(const pj_segtab *t) { return t && t->row_dig; }
uint64_t pj_segtab_n_rows(const pj_segtab *t) { return t && t->row_dig ? t->n_rows : 0; }

int pj_segtab_row_digest(pj_segtab *t, uint64_t row, const uint8_t **out, pch_error *err)
{
    const uint32_t k = (uint32_t)(row / SEG_ROW_PAGE);
    const uint64_t r0 = (uint64_t)k * SEG_ROW_PAGE, nr = t->n_rows - r0 < SEG_ROW_PAGE ? t->n_rows - r0 : SEG_ROW_PAGE;
    uint8_t d[32], *l;
    int rc = PCH_OK;
    if (!t->row_dig || row >= t->n_rows)
        return pch_error_set(err, PCH_ECORRUPT, "%s: no row digest of row %" PRIu64 " (%u rows)", t->name, row, t->n_rows);
    if (!t->rows[k]) {
        if (!(l = pch_malloc(t->ctx, (size_t)nr * 32))) return nomem(err);
        if (t->fd) {
            rc = pj_pread(t->fd, t->rows_off + r0 * 32, (size_t)nr * 32, l, err);
            t->io.reads++;
            t->io.bytes_read += nr * 32;
        } else {
            memcpy(l, t->raw + t->rows_off + r0 * 32, (size_t)nr * 32);   /* parsed from memory: extent checked */
        }
        if (rc == PCH_OK) {
            pch_blake3_hash(d, l, (size_t)nr * 32);
            if (memcmp(d, t->row_dig + (size_t)k * 32, 32) != 0)
                rc = pch_error_set(err, PCH_ECORRUPT, "%s: row digests %" PRIu64 "..%" PRIu64 " do not match their digest", t->name, r0, r0 + nr - 1);
        }
        if (rc < 0) { pch_free(t->ctx, l); return rc; }
        t->rows[k] = l;
    }
    *out = t->rows[k] + (size_t)(row - r0) * 32;
    return PCH_OK;
}

int pj_segtab_check_tail(void *payload, uint32_t block, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    pj_segtab *t = payload;
    uint64_t at = (uint64_t)block * t->block, want;
    uint8_t d[32];
    if (!t->tail_dig || block >= t->tail_blocks)
        return pch_error_set(err, PCH_ECORRUPT, "%s: tail block %u past its %u", t->name, block, t->tail_blocks);
    want = t->file_bytes - t->tail_off - at < t->block ? t->file_bytes - t->tail_off - at : t->block;
    if (len != want) return pch_error_set(err, PCH_ECORRUPT, "%s: tail block %u of %" PRIu64 " bytes, want %" PRIu64, t->name, block, len, want);
    pch_blake3_hash(d, bytes, (size_t)len);
    if (memcmp(d, t->tail_dig + 32 * (size_t)block, 32) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "tail block %u (footer, layout) does not match its digest", block);
    t->checked += len;
    return PCH_OK;
}
void pj_segtab_io_stats(const pj_segtab *t, pj_segtab_io *out)
{
    if (t) *out = t->io;
    else memset(out, 0, sizeof *out);
}

/* v2 page p, read and checked on first use: its digest, its entries against the data file's
** segment map (when matched to one), the block counts and the block digests' extent. */
static int load_page(pj_segtab *t, uint32_t p, const uint8_t **out, pch_error *err)
{
    const uint8_t *pe = t->raw + SEG_HEAD2 + (size_t)p * SEG_PAGE_ENTRY;
    uint64_t po = pch_load_le64(pe);
    uint32_t pl = pch_load_le32(pe + 8), a = p * t->page_segs, cnt = p + 1 == t->n_pages ? t->n - a : t->page_segs;
    uint64_t blocks = 0;
    uint8_t d[32], *pg;
    int rc = PCH_OK;
    if (t->page[p]) { *out = t->page[p]; return PCH_OK; }
    if (!(pg = pch_malloc(t->ctx, pl ? pl : 1))) return nomem(err);
    if (t->fd) {
        rc = pj_pread(t->fd, po, pl, pg, err);
        t->io.reads++;
        t->io.bytes_read += pl;
    } else {
        memcpy(pg, t->raw + po, pl);   /* parsed from memory: parse_v2_head checked the extent */
    }
    if (rc == PCH_OK) {
        pch_blake3_hash(d, pg, pl);
        if (memcmp(d, pe + 16, 32) != 0) rc = pch_error_set(err, PCH_ECORRUPT, "%s: page %u does not match its digest", t->name, p);
    }
    for (uint32_t i = 0; i < cnt && rc == PCH_OK; i++) {
        const uint8_t *e = pg + (size_t)i * SEG_ENTRY2;
        uint64_t off = pch_load_le64(e), len = pch_load_le64(e + 8);
        if (t->f) {
            uint64_t fo, fl;
            if ((rc = pch_vx_file_segment(t->f, a + i, &fo, &fl, err)) < 0) break;
            if (fo != off || fl != len)
                rc = pch_error_set(err, PCH_ECORRUPT, "segment %u is at bytes %" PRIu64 "+%" PRIu64 ", its digest table says %"
                                   PRIu64 "+%" PRIu64, a + i, fo, fl, off, len);
        } else if (len > t->file_bytes || off > t->file_bytes - len) {
            rc = pch_error_set(err, PCH_ECORRUPT, "segment %u (bytes %" PRIu64 "+%" PRIu64 ") outside the data file", a + i, off, len);
        }
        if (rc == PCH_OK && (pch_load_le32(e + 16) != blocks || pch_load_le32(e + 20) != blocks_of(len, t->block)))
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: segment %u lists blocks %u+%u", t->name, a + i,
                               pch_load_le32(e + 16), pch_load_le32(e + 20));
        blocks += pch_load_le32(e + 20);
    }
    if (rc == PCH_OK && (uint64_t)pl != (uint64_t)cnt * SEG_ENTRY2 + blocks * 32)
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: page %u of %u bytes for %" PRIu64 " block digests", t->name, p, pl, blocks);
    if (rc < 0) { pch_free(t->ctx, pg); return rc; }
    t->page[p] = pg;
    *out = pg;
    return PCH_OK;
}

/* The entry of segment seg: its offset, length, BLAKE3 and (v2) the digests of its blocks. */
static int entry_of(pj_segtab *t, uint32_t seg, uint64_t *off, uint64_t *len, const uint8_t **digest,
                    const uint8_t **blocks, uint32_t *n_blocks, pch_error *err)
{
    const uint8_t *e, *pg = NULL;
    uint32_t p, cnt;
    if (seg >= t->n) return pch_error_set(err, PCH_ECORRUPT, "segment %u is not in its digest table", seg);
    if (t->version == 1) {
        e = t->raw + SEG_HEAD1 + (size_t)seg * SEG_ENTRY1;
        *off = pch_load_le64(e);
        *len = pch_load_le64(e + 8);
        *digest = e + 16;
        *blocks = NULL;
        *n_blocks = 0;
        return PCH_OK;
    }
    p = seg / t->page_segs;
    PCH_TRY(load_page(t, p, &pg, err));
    cnt = p + 1 == t->n_pages ? t->n - p * t->page_segs : t->page_segs;
    e = pg + (size_t)(seg - p * t->page_segs) * SEG_ENTRY2;
    *off = pch_load_le64(e);
    *len = pch_load_le64(e + 8);
    *digest = e + 24;
    *n_blocks = pch_load_le32(e + 20);
    *blocks = pg + (size_t)cnt * SEG_ENTRY2 + (size_t)pch_load_le32(e + 16) * 32;
    return PCH_OK;
}

int pj_segtab_match(pj_segtab *t, pch_vx_file *f, pch_error *err)
{
    if (pch_vx_file_n_segments(f) != t->n)
        return pch_error_set(err, PCH_ECORRUPT, "%u segments, its digest table lists %u", pch_vx_file_n_segments(f), t->n);
    if (t->version == 2) {
        /* each page is matched against the segment map when it is read */
        for (uint32_t p = 0; p < t->n_pages; p++) { pch_free(t->ctx, t->page[p]); t->page[p] = NULL; }
        t->f = f;
        return PCH_OK;
    }
    for (uint32_t i = 0; i < t->n; i++) {
        const uint8_t *e = t->raw + SEG_HEAD1 + (size_t)i * SEG_ENTRY1;
        uint64_t off, len;
        PCH_TRY(pch_vx_file_segment(f, i, &off, &len, err));
        if (off != pch_load_le64(e) || len != pch_load_le64(e + 8))
            return pch_error_set(err, PCH_ECORRUPT, "segment %u is at bytes %" PRIu64 "+%" PRIu64 ", its digest table says %"
                                 PRIu64 "+%" PRIu64, i, off, len, pch_load_le64(e), pch_load_le64(e + 8));
    }
    return PCH_OK;
}

/* Segment seg, at off for len bytes with BLAKE3 d, against its entry. */
static int entry_check(pj_segtab *t, uint32_t seg, uint64_t off, uint64_t len, const uint8_t d[32], pch_error *err)
{
    const uint8_t *want, *blocks;
    uint64_t eo, el;
    uint32_t nb;
    PCH_TRY(entry_of(t, seg, &eo, &el, &want, &blocks, &nb, err));
    if (eo != off || el != len)
        return pch_error_set(err, PCH_ECORRUPT, "segment %u is at bytes %" PRIu64 "+%" PRIu64 ", its digest table says %"
                             PRIu64 "+%" PRIu64, seg, off, len, eo, el);
    t->checked += len;
    if (memcmp(d, want, 32) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "segment %u (bytes %" PRIu64 "..%" PRIu64 ") does not match its digest",
                             seg, off, off + len);
    return PCH_OK;
}

int pj_segtab_check(void *payload, uint32_t seg, uint64_t off, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    uint8_t d[32];
    pch_blake3_hash(d, bytes, (size_t)len);
    return entry_check(payload, seg, off, len, d, err);
}

int pj_segtab_check_block(void *payload, uint32_t seg, uint32_t block, const uint8_t *bytes, uint64_t len,
                          pch_error *err)
{
    pj_segtab *t = payload;
    const uint8_t *want, *blocks;
    uint64_t off, sl, at;
    uint32_t nb;
    uint8_t d[32];
    PCH_TRY(entry_of(t, seg, &off, &sl, &want, &blocks, &nb, err));
    at = (uint64_t)block * t->block;
    if (block >= nb || len != (sl - at < t->block ? sl - at : t->block))
        return pch_error_set(err, PCH_ECORRUPT, "segment %u: block %u (%" PRIu64 " bytes) is not in its digest table", seg, block, len);
    pch_blake3_hash(d, bytes, (size_t)len);
    t->checked += len;
    if (memcmp(d, blocks + (size_t)block * 32, 32) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "segment %u block %u (bytes %" PRIu64 "..%" PRIu64 ") does not match its digest",
                             seg, block, off + at, off + at + len);
    return PCH_OK;
}

int pj_segtab_check_file(pj_segtab *t, const char *full_path, pch_error *err)
{
    uint8_t *buf = NULL;
    size_t cap = 0;
    pch_rfile *fd;
    int rc = pch_rfile_open(t->ctx, full_path, &fd, err);
    if (rc < 0) return rc;
    if (t->tail_dig && (rc = read_grow(fd, t->tail_off, t->file_bytes - t->tail_off, &buf, &cap, err)) == PCH_OK)
        for (uint32_t k = 0; k < t->tail_blocks && rc == PCH_OK; k++) {
            uint64_t at = (uint64_t)k * t->block, left = t->file_bytes - t->tail_off - at;
            rc = pj_segtab_check_tail(t, k, buf + at, left < t->block ? left : t->block, err);
        }
    for (uint64_t r = 0; r < t->n_rows && rc == PCH_OK; r += SEG_ROW_PAGE) {
        const uint8_t *l;
        rc = pj_segtab_row_digest(t, r, &l, err);
    }
    for (uint32_t i = 0; i < t->n && rc == PCH_OK; i++) {
        const uint8_t *want, *blocks;
        uint64_t off, len;
        uint32_t nb;
        uint8_t d[32];
        if ((rc = entry_of(t, i, &off, &len, &want, &blocks, &nb, err)) < 0) break;
        if ((rc = read_grow(fd, off, len, &buf, &cap, err)) < 0) break;
        pch_blake3_hash(d, buf, (size_t)len);
        if ((rc = entry_check(t, i, off, len, d, err)) < 0) break;
        for (uint32_t k = 0; k < nb && rc == PCH_OK; k++) {
            uint64_t at = (uint64_t)k * t->block;
            rc = pj_segtab_check_block(t, i, k, buf + at, len - at < t->block ? len - at : t->block, err);
        }
    }
    free(buf);
    pch_rfile_close(fd);
    return rc;
}
