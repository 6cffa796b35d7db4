/* Segment digest tables (docs/vortex-projection.md §6 "Every byte a read uses is checked";
** RFC-0006 §9.5): one BLAKE3 per segment of a data file, so that a read checks exactly the
** segments it decodes — a narrow scan of `steps.source` hashes that lane's segments, never a
** message lane's. The table is a file beside its data file, listed in the manifest with its
** size and digest:
**
**   "PCHSEGS1"  magic (8 bytes)
**   u64         the data file's size
**   u32         n, the data file's segment count;  u32 0 (reserved)
**   n entries   u64 offset, u64 length, 32-byte BLAKE3 of the segment's bytes (segment order)
**
** all integers little-endian. The reader installs pj_segtab_check as the data file's segment
** check (pch_vx_file_set_segment_check): every segment read is checked against its entry
** before anything of it is decoded. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "projection/pj_int.h"

#define SEG_MAGIC "PCHSEGS1"
#define SEG_HEAD 24
#define SEG_ENTRY 48

struct pj_segtab {
    pch_ctx *ctx;
    uint8_t *raw;                   /* the whole table as read */
    uint32_t n;
    uint64_t file_bytes;
    uint64_t checked;               /* bytes checked so far */
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

int pj_segtab_write(pch_ctx *ctx, const char *data_path, const char *out_path, char digest[80], uint64_t *bytes,
                    pch_error *err)
{
    pch_vx_file *f = NULL;
    pch_buf t;
    uint64_t size;
    uint32_t n;
    int fd = -1, rc;
    pch_buf_init(&t, ctx);
    if ((rc = pch_vx_file_open(&f, ctx, data_path, err)) < 0) goto done;
    if ((fd = open(data_path, O_RDONLY | O_CLOEXEC)) < 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "open %s", data_path); goto done; }
    size = (uint64_t)lseek(fd, 0, SEEK_END);
    n = pch_vx_file_n_segments(f);
    pch_buf_append(&t, SEG_MAGIC, 8);
    pch_buf_put_le64(&t, size);
    pch_buf_put_le32(&t, n);
    pch_buf_put_le32(&t, 0);
    for (uint32_t i = 0; i < n && rc == PCH_OK; i++) {
        uint64_t off, len;
        uint8_t d[32];
        pch_vx_file_segment(f, i, &off, &len);
        if ((rc = pj_range_hash(fd, off, len, d, err)) < 0) break;
        pch_buf_put_le64(&t, off);
        pch_buf_put_le64(&t, len);
        pch_buf_append(&t, d, 32);
    }
    if (rc == PCH_OK && t.oom) rc = nomem(err);
    if (rc == PCH_OK) rc = pch_file_publish(out_path, t.data, t.len, err);
    if (rc == PCH_OK) {
        pj_bytes_digest(digest, t.data, t.len);
        *bytes = t.len;
    }
done:
    if (fd >= 0) close(fd);
    pch_vx_file_free(f);
    pch_buf_dispose(&t);
    return rc;
}

int pj_segtab_parse(pj_segtab **out, pch_ctx *ctx, const uint8_t *raw, size_t len, const char *data_rel,
                    uint64_t file_bytes, pch_error *err)
{
    pj_segtab *t;
    uint64_t prev_end = 0;
    uint32_t n;
    *out = NULL;
    if (len < SEG_HEAD || memcmp(raw, SEG_MAGIC, 8) != 0 || pch_load_le64(raw + 8) != file_bytes ||
        pch_load_le32(raw + 20) != 0 || (len - SEG_HEAD) % SEG_ENTRY != 0 || (len - SEG_HEAD) / SEG_ENTRY != pch_load_le32(raw + 16))
        return pch_error_set(err, PCH_ECORRUPT, "not a segment digest table of %s", data_rel);
    n = pch_load_le32(raw + 16);
    /* segments in file order, inside the file, not overlapping */
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = raw + SEG_HEAD + (size_t)i * SEG_ENTRY;
        uint64_t off = pch_load_le64(e), l = pch_load_le64(e + 8);
        if (off < prev_end || l > file_bytes || off > file_bytes - l)
            return pch_error_set(err, PCH_ECORRUPT, "segment %u (bytes %" PRIu64 "+%" PRIu64 ") out of order or outside %s",
                                 i, off, l, data_rel);
        prev_end = off + l;
    }
    if (!(t = pch_calloc(ctx, 1, sizeof *t)) || !(t->raw = pch_malloc(ctx, len))) {
        pch_free(ctx, t);
        return nomem(err);
    }
    memcpy(t->raw, raw, len);
    t->ctx = ctx;
    t->n = n;
    t->file_bytes = file_bytes;
    *out = t;
    return PCH_OK;
}

int pj_segtab_load(pj_segtab **out, pch_ctx *ctx, const char *root, const char *rel, uint64_t want_bytes,
                   const char *want_digest, const char *data_rel, uint64_t file_bytes, pch_error *err)
{
    pch_buf p, raw;
    char got[80];
    int rc;
    *out = NULL;
    pch_buf_init(&p, ctx);
    pch_buf_init(&raw, ctx);
    pch_buf_printf(&p, "%s/%s", root, rel);
    if (p.oom) return nomem(err);
    rc = pch_file_read_all(&raw, (const char *)p.data, (size_t)want_bytes + 1, err);
    pch_buf_dispose(&p);
    if (rc == PCH_OK) {             /* the manifest's size and digest before anything is parsed */
        pj_bytes_digest(got, raw.data, raw.len);
        if (raw.len != want_bytes || strcmp(got, want_digest) != 0)
            rc = pch_error_set(err, PCH_ECORRUPT, "%zu bytes with digest %s, the manifest says %" PRIu64 " bytes, %s",
                               raw.len, got, want_bytes, want_digest);
    }
    if (rc == PCH_OK) rc = pj_segtab_parse(out, ctx, raw.data, raw.len, data_rel, file_bytes, err);
    pch_buf_dispose(&raw);
    return rc;
}

void pj_segtab_free(pj_segtab *t)
{
    if (!t) return;
    pch_free(t->ctx, t->raw);
    pch_free(t->ctx, t);
}

uint64_t pj_segtab_checked(const pj_segtab *t) { return t ? t->checked : 0; }

int pj_segtab_match(const pj_segtab *t, const pch_vx_file *f, pch_error *err)
{
    if (pch_vx_file_n_segments(f) != t->n)
        return pch_error_set(err, PCH_ECORRUPT, "%u segments, its digest table lists %u", pch_vx_file_n_segments(f), t->n);
    for (uint32_t i = 0; i < t->n; i++) {
        const uint8_t *e = t->raw + SEG_HEAD + (size_t)i * SEG_ENTRY;
        uint64_t off, len;
        pch_vx_file_segment(f, i, &off, &len);
        if (off != pch_load_le64(e) || len != pch_load_le64(e + 8))
            return pch_error_set(err, PCH_ECORRUPT, "segment %u is at bytes %" PRIu64 "+%" PRIu64 ", its digest table says %"
                                 PRIu64 "+%" PRIu64, i, off, len, pch_load_le64(e), pch_load_le64(e + 8));
    }
    return PCH_OK;
}

/* Segment seg, at off for len bytes with BLAKE3 d, against its entry. */
static int entry_check(pj_segtab *t, uint32_t seg, uint64_t off, uint64_t len, const uint8_t d[32], pch_error *err)
{
    const uint8_t *e;
    if (seg >= t->n) return pch_error_set(err, PCH_ECORRUPT, "segment %u is not in its digest table", seg);
    e = t->raw + SEG_HEAD + (size_t)seg * SEG_ENTRY;
    if (pch_load_le64(e) != off || pch_load_le64(e + 8) != len)
        return pch_error_set(err, PCH_ECORRUPT, "segment %u is at bytes %" PRIu64 "+%" PRIu64 ", its digest table says %"
                             PRIu64 "+%" PRIu64, seg, off, len, pch_load_le64(e), pch_load_le64(e + 8));
    t->checked += len;
    if (memcmp(d, e + 16, 32) != 0)
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

int pj_segtab_check_file(pj_segtab *t, const char *full_path, pch_error *err)
{
    int rc = PCH_OK, fd = open(full_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "open");
    for (uint32_t i = 0; i < t->n && rc == PCH_OK; i++) {
        const uint8_t *e = t->raw + SEG_HEAD + (size_t)i * SEG_ENTRY;
        uint64_t off = pch_load_le64(e), len = pch_load_le64(e + 8);
        uint8_t d[32];
        if ((rc = pj_range_hash(fd, off, len, d, err)) == PCH_OK) rc = entry_check(t, i, off, len, d, err);
    }
    close(fd);
    return rc;
}
