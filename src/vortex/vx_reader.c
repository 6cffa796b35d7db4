/* Vortex file reader (vortex-format.md §1.2, §5, §10, §12, Appendix C "Reader").
**
** Open: one tail read; trailer magic (a pre-0.36 "VRTX" file is rejected by name), version 1,
** postscript bounds; leading magic; every footer FlatBuffer verified; segment map sorted,
** in bounds, reserved bytes zero; array/layout ids resolved (unknown ids fail closed when a
** node references them); layout tree checked against the dtype (struct children per field,
** chunked row sums, flat = one segment, dict/stats child shapes).
** Scan: projection by dotted path (struct layouts are descended; paths inside flat arrays are
** extracted after decoding), row range ∩ selection, zone-map pruning for one comparison,
** exact filtering, a segment cache and reads coalesced into few large ranges. */
#include "vortex/vortex_int.h"
#include "io/rfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

enum { L_FLAT, L_STRUCT, L_CHUNKED, L_STATS, L_DICT, L_ZONED, L_COUNT };
static const char *const layout_ids[L_COUNT] = { "vortex.flat", "vortex.struct", "vortex.chunked",
                                                 "vortex.stats", "vortex.dict", "vortex.zoned" };
/* Two segment reads closer than this are one read (local files: a page-cache copy of a small
** gap costs less than a second call; pch_vx_file_set_coalesce_gap changes it). */
#define COALESCE_GAP ((uint64_t)64 << 10)
#define TAIL_READ 65536u

typedef struct lnode lnode;
struct lnode {
    int type;
    uint64_t rows;
    const pch_vx_dtype *dt;
    uint32_t seg;
    uint32_t n_children;
    lnode *children;
    uint64_t *starts;         /* chunked: n_children + 1 prefix sums */
    uint32_t zone_len;        /* stats */
    pch_vx_dtype *own_dt;     /* stats zones table / dict codes dtype (owned) */
    int zones_ok;             /* stats: table holds exactly max/min/null_count */
    pch_vx_array *zt;         /* stats: the zone table once decoded (kept: every pruned scan
                              ** of the lane tests it, and it was decoded per scan) */
    int struct_validity;      /* struct layout: child 0 is validity */
    /* chunked: each chunk is parsed when a read first needs it (kid(), §13.4); kidp[i] is
    ** chunk i once parsed (children is not used), fbt and kvec find its layout table */
    lnode **kidp;
    pch_vx_fbt fbt;
    pch_vx_fbvec kvec;
};

struct pch_vx_file {
    pch_ctx *ctx;
    pch_rfile *rf;             /* the file (a local file or an object: io/rfile.h), or NULL: mem */
    const uint8_t *mem;
    uint64_t size;
    uint64_t data_end;
    uint16_t ps_len;
    pch_vx_dtype *dt;
    lnode root;
    int16_t *spec_map;
    uint32_t n_specs;
    int8_t *lmap;
    uint32_t n_lspecs;
    uint64_t *seg_off;
    uint32_t *seg_len;
    uint8_t *seg_align;
    uint32_t n_segs;
    uint8_t **cache;
    size_t cache_bytes;
    size_t cache_budget;
    pch_vx_io_stats st;
    pch_vx_decode_ctx dc;
    bool text_codes;          /* the column being read may come back as text codes only (scan) */
    struct rmemo *rmemo;       /* the last column paths resolved (resolve), RMEMO_N of them */
    uint64_t gap;              /* coalescing gap (pch_vx_file_set_coalesce_gap) */
    pch_vx_segment_check_fn check;
    void *check_payload;
    uint8_t *layout_buf;       /* the layout flatbuffer, kept for chunks parsed on first use */
    pch_vx_fbv layout_v;
    uint32_t block;            /* partial reads: block size in bytes (0: whole segments only) */
    pch_vx_block_check_fn bcheck;
    void *bcheck_payload;
    uint8_t **pbits;           /* per segment: NULL = cached whole (or not cached); else the
                               ** bitmap of the blocks present in its sparse cache entry */
    const uint8_t *pre;        /* pch_vx_file_open_tail: bytes [pre_off, pre_off + pre_len) of
                               ** the file, used while opening instead of reading them again */
    uint64_t pre_off;
    size_t pre_len;
    /* pch_vx_file_open_paged: the file's bytes [tail_off, size) have room in tail; block k
    ** (tblock bytes) is present once its bit is set, after tcheck passed it. The layout and
    ** footer flatbuffers are read in place from there, a block when an accessor first needs
    ** it, and each segment's spec when the segment is first used (seg_loaded). */
    uint8_t *tail;
    uint8_t *tail_bits;
    uint64_t tail_off;
    uint32_t tblock;
    pch_vx_tail_check_fn tcheck;
    void *tcheck_payload;
    struct region { pch_vx_file *f; uint64_t off; } lreg, freg;
    pch_vx_fbv foot_v;
    size_t spec_pos;           /* the segment-spec vector's first element in the footer */
    uint8_t *seg_loaded;       /* NULL: every spec was read at open */
    uint64_t *hint;            /* chunk starts every chunked layout shares (a copy), or NULL */
    uint32_t hint_n;
    bool tail_kept;            /* pch_vx_file_keep_tail done (once per file) */
    uint8_t *held;             /* pch_vx_file_hold: the checked bytes [held_off, held_off + held_len) */
    uint64_t held_off, held_len;
};

typedef struct segvec { uint32_t *v; size_t n, cap; } segvec;

/* ------------------------------------------------------------------ I/O */

static int f_read(pch_vx_file *f, uint64_t off, size_t len, uint8_t *dst, pch_error *err)
{
    if (f->pre && off >= f->pre_off && len <= f->pre_len && off - f->pre_off <= f->pre_len - len) {
        memcpy(dst, f->pre + (off - f->pre_off), len);   /* the caller's copy of the tail */
        return PCH_OK;
    }
    /* bytes already checked serve the read, in pieces: those a caller held (a cluster checked
    ** whole, pch_vx_file_hold), then the paged tail's blocks read so far (a shared dictionary
    ** or zone table after the cluster, which a coalesced segment read may reach into) */
    while (len && (f->held || f->tail)) {
        size_t n = 0;
        if (f->held && off >= f->held_off && off - f->held_off < f->held_len) {
            n = (size_t)(f->held_len - (off - f->held_off)) < len ? (size_t)(f->held_len - (off - f->held_off)) : len;
            memcpy(dst, f->held + (off - f->held_off), n);
        } else if (f->tail && off >= f->tail_off && off < f->size) {
            uint64_t k = (off - f->tail_off) / f->tblock, end = off;
            while (end < f->size && end - off < len && pch_vx__bit(f->tail_bits, k)) {
                end = f->tail_off + (k + 1) * (uint64_t)f->tblock;
                if (end > f->size) end = f->size;
                k++;
            }
            n = end - off < len ? (size_t)(end - off) : len;
            if (n) memcpy(dst, f->tail + (off - f->tail_off), n);
        }
        if (!n) break;
        off += n;
        dst += n;
        len -= n;
    }
    if (!len) return PCH_OK;
    f->st.requests++;
    f->st.bytes_read += len;
    if (f->mem) {
        memcpy(dst, f->mem + off, len);
        return PCH_OK;
    }
    if (pch_rfile_pread(f->rf, dst, len, off, err) < 0) return pch_error_prefix(err, "vortex: read at %" PRIu64, off);
    return PCH_OK;
}

/* A region of the file read a checked block at a time: its bytes [at, at + L) live in buf,
** block k (B bytes, the last one shorter) is present once its bit is set. seg names the
** segment for the check (a sparse segment), or is NO_SEG (the paged tail). */
#define NO_SEG UINT32_MAX
typedef struct blocks { uint64_t at, L; uint32_t B, seg; uint8_t *buf, *bits; } blocks;

/* Make bytes [off, off + len) of region r present: each run of missing blocks in one read,
** every block checked before it counts as present (RFC-0006 §9.5: every byte a read uses is
** checked). *got (may be NULL) counts the bytes read. */
static int fill_region(pch_vx_file *f, const blocks *r, uint64_t off, uint64_t len, uint64_t *got, pch_error *err)
{
    uint64_t B = r->B, k1 = (off + len + B - 1) / B;
    for (uint64_t k = off / B; k < k1;) {
        uint64_t j = k, a, e;
        if (pch_vx__bit(r->bits, k)) { k++; continue; }
        while (j < k1 && !pch_vx__bit(r->bits, j)) j++;
        a = k * B;
        e = j * B < r->L ? j * B : r->L;
        PCH_TRY(f_read(f, r->at + a, (size_t)(e - a), r->buf + a, err));
        if (got) *got += e - a;
        for (; k < j; k++) {
            uint64_t bl = (k + 1) * B < r->L ? B : r->L - k * B;
            if (r->seg == NO_SEG && f->tcheck) PCH_TRY(f->tcheck(f->tcheck_payload, (uint32_t)k, r->buf + k * B, bl, err));
            if (r->seg != NO_SEG && f->bcheck) PCH_TRY(f->bcheck(f->bcheck_payload, r->seg, (uint32_t)k, r->buf + k * B, bl, err));
            pch_vx__set_bit(r->bits, k, 1);
        }
    }
    return PCH_OK;
}

/* Make the file's bytes [off, off + len) present in the paged tail. */
static int tail_need(pch_vx_file *f, uint64_t off, uint64_t len, pch_error *err)
{
    blocks r = { f->tail_off, f->size - f->tail_off, f->tblock, NO_SEG, f->tail, f->tail_bits };
    uint64_t before = f->st.requests;
    int rc;
    if (!len) return PCH_OK;
    if (off < f->tail_off || off > f->size || len > f->size - off)
        return pch_error_set(err, PCH_ECORRUPT, "vortex: bytes %" PRIu64 "+%" PRIu64 " outside the checked tail at %" PRIu64,
                             off, len, f->tail_off);
    rc = fill_region(f, &r, off - f->tail_off, len, &f->st.tail_bytes, err);
    f->st.tail_requests += f->st.requests - before;
    return rc;
}

/* pch_vx_fb_need_fn of a flatbuffer region in the paged tail. */
static int region_need(void *payload, size_t off, size_t len, pch_error *err)
{
    const struct region *r = payload;
    return tail_need(r->f, r->off + off, len, err);
}

/* Read segment s's spec from the footer if this is its first use (paged open), checking what
** the open checked for every spec: in the file body, a known alignment, no compression. */
static int seg_load(pch_vx_file *f, uint32_t s, pch_error *err)
{
    const uint8_t *e;
    if (!f->seg_loaded || pch_vx__bit(f->seg_loaded, s)) return PCH_OK;
    f->foot_v.err = err;
    PCH_TRY(pch_vx_fb_need(&f->foot_v, f->spec_pos + 16 * (size_t)s, 16));
    e = f->foot_v.buf + f->spec_pos + 16 * (size_t)s;
    f->seg_off[s] = pch_load_le64(e);
    f->seg_len[s] = pch_load_le32(e + 8);
    f->seg_align[s] = e[12];
    if (e[13] || pch_load_le16(e + 14)) return pch_error_set(err, PCH_EUNSUPPORTED, "vortex footer: segment %u compressed/encrypted", s);
    if (f->seg_off[s] < 4 || f->seg_off[s] > f->data_end || f->seg_len[s] > f->data_end - f->seg_off[s])
        return pch_error_set(err, PCH_ECORRUPT, "vortex footer: segment %u at %" PRIu64 "+%u outside the file body", s, f->seg_off[s], f->seg_len[s]);
    if (f->seg_align[s] > 16) return pch_error_set(err, PCH_ECORRUPT, "vortex footer: segment %u alignment exponent %u", s, f->seg_align[s]);
    pch_vx__set_bit(f->seg_loaded, s, 1);
    return PCH_OK;
}

static void drop_seg(pch_vx_file *f, uint32_t s)
{
    pch_free(f->ctx, f->cache[s]);
    f->cache[s] = NULL;
    if (f->pbits) { pch_free(f->ctx, f->pbits[s]); f->pbits[s] = NULL; }
}

static void cache_clear(pch_vx_file *f)
{
    for (uint32_t i = 0; i < f->n_segs; i++) drop_seg(f, i);
    f->cache_bytes = 0;
}

/* Segment s is cached whole (a sparse entry is not: a whole-segment read replaces it). */
static int seg_whole(const pch_vx_file *f, uint32_t s) { return f->cache[s] && !(f->pbits && f->pbits[s]); }

static int cmp_seg_off(const void *a, const void *b, void *payload)
{
    const pch_vx_file *f = payload;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    uint64_t x = f->seg_off[i], y = f->seg_off[j];
    return x < y ? -1 : x > y ? 1 : (i > j) - (i < j);
}

/* The segments of sv not cached whole, sorted by offset and without repeats, into
** sv->v[0..*k); *need: their bytes. */
static void uncached(pch_vx_file *f, segvec *sv, size_t *k, size_t *need, bool count_hits)
{
    uint32_t *v = sv->v;
    *k = *need = 0;
    qsort_r(v, sv->n, sizeof(uint32_t), cmp_seg_off, f);
    for (size_t i = 0; i < sv->n; i++) {
        if (i && v[i] == v[i - 1]) continue;   /* sorted by offset: equal ids are adjacent */
        if (seg_whole(f, v[i])) { f->st.cache_hits += count_hits; continue; }
        v[(*k)++] = v[i];
        *need += f->seg_len[v[i]];
    }
}

/* The read that starts at v[i]: segments closer than the coalescing gap are one read of
** [*start, *end); returns the index after its last segment. */
static size_t coalesced(const pch_vx_file *f, const uint32_t *v, size_t k, size_t i, uint64_t *start, uint64_t *end)
{
    size_t j = i + 1;
    *start = f->seg_off[v[i]];
    *end = *start + f->seg_len[v[i]];
    while (j < k && f->seg_off[v[j]] <= *end + f->gap) {
        uint64_t e = f->seg_off[v[j]] + f->seg_len[v[j]];
        if (e > *end) *end = e;
        j++;
    }
    return j;
}

/* Load the listed segments (duplicates and cached ones skipped), coalescing neighbours. */
static int prefetch(pch_vx_file *f, segvec *sv, pch_error *err)
{
    size_t need, k;
    uint32_t *v = sv->v;
    int rc = PCH_OK;
    if (!sv->n) return PCH_OK;
    uncached(f, sv, &k, &need, true);
    if (f->cache_bytes + need > f->cache_budget) cache_clear(f);
    for (size_t i = 0; i < k && !rc;) {
        uint64_t start, end;
        size_t j = coalesced(f, v, k, i, &start, &end);
        uint8_t *tmp;
        if (!(tmp = pch_malloc(f->ctx, (size_t)(end - start) + 1))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        rc = f_read(f, start, (size_t)(end - start), tmp, err);
        for (size_t x = i; x < j && !rc; x++) {
            uint32_t s = v[x];
            if (seg_whole(f, s)) continue;
            drop_seg(f, s);
            /* the caller's check of the exact bytes that will be decoded (e.g. a digest) */
            if (f->check && (rc = f->check(f->check_payload, s, f->seg_off[s], tmp + (f->seg_off[s] - start), f->seg_len[s], err)) < 0)
                break;
            if (!(f->cache[s] = pch_malloc(f->ctx, f->seg_len[s] ? f->seg_len[s] : 1))) { rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory"); break; }
            memcpy(f->cache[s], tmp + (f->seg_off[s] - start), f->seg_len[s]);
            f->cache_bytes += f->seg_len[s];
            f->st.segments_read++;
        }
        pch_free(f->ctx, tmp);
        i = j;
    }
    sv->n = 0;
    return rc;
}

static int segvec_push(pch_vx_file *f, segvec *sv, uint32_t s)
{
    if (sv->n == sv->cap) {
        size_t nc = sv->cap ? sv->cap * 2 : 64;
        uint32_t *nv = pch_realloc(f->ctx, sv->v, nc * 4);
        if (!nv) return PCH_ENOMEM;
        sv->v = nv;
        sv->cap = nc;
    }
    sv->v[sv->n++] = s;
    return PCH_OK;
}

static int get_segment(pch_vx_file *f, uint32_t s, const uint8_t **p, pch_error *err)
{
    uint32_t one = s;
    segvec sv = { &one, 1, 1 };
    if (seg_whole(f, s)) { f->st.cache_hits++; *p = f->cache[s]; return PCH_OK; }
    PCH_TRY(prefetch(f, &sv, err));
    if (!seg_whole(f, s)) return pch_error_set(err, PCH_EIO, "vortex: segment %u not loaded", s);
    *p = f->cache[s];
    return PCH_OK;
}

/* ------------------------------------------------------------------ partial segment reads */

/* Make bytes [off, off + len) of sparse segment s present, each block checked (fill_region). */
static int fill_blocks(pch_vx_file *f, uint32_t s, uint64_t off, uint64_t len, pch_error *err)
{
    blocks r = { f->seg_off[s], f->seg_len[s], f->block, s, f->cache[s], f->pbits[s] };
    return fill_region(f, &r, off, len, &f->cache_bytes, err);
}

typedef struct sparse_seg { pch_vx_file *f; uint32_t s; } sparse_seg;

static int sparse_fill(void *payload, size_t off, size_t len, pch_error *err)
{
    sparse_seg *ss = payload;
    return fill_blocks(ss->f, ss->s, off, len, err);
}

/* A row range of flat layout n reads only the blocks of its segment it needs: partial reads
** are on, the segment spans more than two blocks and is not cached whole, and every byte read
** can still be checked (no whole-segment check installed without a block check). */
static int sparse_ok(const pch_vx_file *f, const lnode *n)
{
    return f->block && f->pbits && f->seg_len[n->seg] > 2 * (uint64_t)f->block && !seg_whole(f, n->seg) &&
           (!f->check || f->bcheck);
}

static int sparse_range(pch_vx_file *f, const lnode *n, uint64_t b, uint64_t cnt, pch_vx_array **out,
                        pch_error *err)
{
    uint32_t s = n->seg, fb_len;
    uint64_t L = f->seg_len[s], nb = (L + f->block - 1) / f->block;
    sparse_seg ss = { f, s };
    if (!f->cache[s]) {
        if (f->cache_bytes + L > f->cache_budget) cache_clear(f);
        f->cache[s] = pch_malloc(f->ctx, (size_t)L);
        f->pbits[s] = pch_calloc(f->ctx, (size_t)(nb + 7) / 8, 1);
        if (!f->cache[s] || !f->pbits[s]) { drop_seg(f, s); return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory"); }
        f->st.segments_read++;
        f->st.segments_partial++;
    }
    PCH_TRY(fill_blocks(f, s, L - 4, 4, err));
    fb_len = pch_load_le32(f->cache[s] + L - 4);
    if (fb_len > L - 4) return pch_error_set(err, PCH_ECORRUPT, "vortex array segment %u: flatbuffer length %u past segment", s, fb_len);
    PCH_TRY(fill_blocks(f, s, L - 4 - fb_len, fb_len, err));
    return pch_vx__deserialize_range_sparse(out, &f->dc, f->cache[s], (size_t)L, n->dt, n->rows, b, cnt, sparse_fill, &ss, err);
}

static int zone_dtype_ok(const pch_vx_dtype *d)
{
    return (d->kind == PCH_VX_PRIMITIVE && d->ptype != PCH_VX_F16) || d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY;
}

static int bytes_cmp3(const uint8_t *a, size_t an, const void *bv, size_t bn)
{
    const uint8_t *b = bv;
    int c = (an && bn) ? memcmp(a, b, an < bn ? an : bn) : 0;
    return c ? (c < 0 ? -1 : 1) : (an < bn ? -1 : an > bn);
}

/* ------------------------------------------------------------------ layout tree */

static void lnode_dispose(pch_ctx *ctx, lnode *n)
{
    for (uint32_t i = 0; n->children && i < n->n_children; i++) lnode_dispose(ctx, &n->children[i]);
    for (uint32_t i = 0; n->kidp && i < n->n_children; i++)
        if (n->kidp[i]) { lnode_dispose(ctx, n->kidp[i]); pch_free(ctx, n->kidp[i]); }
    pch_free(ctx, n->children);
    pch_free(ctx, n->kidp);
    pch_free(ctx, n->starts);
    pch_vx_array_free(n->zt);
    pch_vx_dtype_free(n->own_dt);
}

#define LBAD(...) pch_error_set(err, PCH_ECORRUPT, __VA_ARGS__)

static int parse_layout(pch_vx_file *f, const pch_vx_fbt *t, const pch_vx_dtype *dt, lnode *n,
                        pch_error *err)
{
    uint16_t enc;
    pch_vx_fbvec meta, kids, segs;
    const uint8_t *m;
    memset(n, 0, sizeof(*n));
    n->dt = dt;
    PCH_TRY(pch_vx_fb_u16(t, 0, 0, &enc));
    PCH_TRY(pch_vx_fb_u64(t, 1, 0, &n->rows));
    PCH_TRY(pch_vx_fb_vector(t, 2, 1, 1, &meta, NULL));
    PCH_TRY(pch_vx_fb_vector(t, 3, 4, 4, &kids, NULL));
    PCH_TRY(pch_vx_fb_vector(t, 4, 4, 4, &segs, NULL));
    m = t->v->buf + meta.pos;
    if (enc >= f->n_lspecs) return LBAD("vortex layout: encoding index %u past %u layout specs", enc, f->n_lspecs);
    if (f->lmap[enc] < 0) return pch_error_set(err, PCH_EUNSUPPORTED, "vortex layout: unknown layout id at index %u", enc);
    n->type = f->lmap[enc];
    if (n->type != L_FLAT && segs.n) return LBAD("vortex layout %s: unexpected segments", layout_ids[n->type]);
    if (kids.n && n->type != L_CHUNKED) {
        if (!(n->children = pch_calloc(f->ctx, kids.n, sizeof(lnode)))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        n->n_children = kids.n;
    }
#define CHILD(i, d) do { pch_vx_fbt c_; PCH_TRY(pch_vx_fb_vec_table(t, &kids, (i), &c_)); \
                         PCH_TRY(parse_layout(f, &c_, (d), &n->children[(i)], err)); } while (0)
    switch (n->type) {
    case L_FLAT:
        if (segs.n != 1 || kids.n) return LBAD("vortex.flat: %u segments, %u children", segs.n, kids.n);
        if (meta.n) return pch_error_set(err, PCH_EUNSUPPORTED, "vortex.flat: inline array tree metadata");
        n->seg = pch_load_le32(t->v->buf + segs.pos);
        if (n->seg >= f->n_segs) return LBAD("vortex.flat: segment %u past %u", n->seg, f->n_segs);
        PCH_TRY(seg_load(f, n->seg, err));
        break;
    case L_STRUCT: {
        uint32_t first;
        if (dt->kind != PCH_VX_STRUCT) return LBAD("vortex.struct layout over a non-struct dtype");
        if (meta.n) return LBAD("vortex.struct layout: non-empty metadata");
        n->struct_validity = dt->nullable && kids.n == dt->n_fields + 1;
        first = n->struct_validity ? 1 : 0;
        if (kids.n != dt->n_fields + first) return LBAD("vortex.struct layout: %u children for %u fields", kids.n, dt->n_fields);
        if (first) {
            if (!(n->own_dt = pch_vx__dtype_new(f->ctx, PCH_VX_BOOL, 0))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
            CHILD(0, n->own_dt);
        }
        for (uint32_t i = 0; i < dt->n_fields; i++) {
            CHILD(first + i, dt->fields[i]);
            if (n->children[first + i].rows != n->rows) return LBAD("vortex.struct layout: field %u has %" PRIu64 " rows, want %" PRIu64, i, n->children[first + i].rows, n->rows);
        }
        break;
    }
    case L_CHUNKED: {
        if (meta.n) return LBAD("vortex.chunked layout: non-empty metadata");
        if (!(n->starts = pch_calloc(f->ctx, (size_t)kids.n + 1, 8))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        /* a chunk is parsed when a read first needs it (kid()): opening a file of thousands of
        ** chunks reads their row counts only (RFC-0006 §13.4, open costs that do not grow
        ** with the file); pch_vx_file_check and inspect parse every one */
        if (kids.n && !(n->kidp = pch_calloc(f->ctx, kids.n, sizeof(lnode *)))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        n->n_children = kids.n;
        n->fbt = *t;
        n->kvec = kids;
        /* the caller's chunk rows (a paged open): reading every chunk's row count would read
        ** every cluster's part of the layout; each chunk is checked against them when parsed */
        if (f->hint && kids.n == f->hint_n && f->hint[kids.n] == n->rows) {
            memcpy(n->starts, f->hint, ((size_t)kids.n + 1) * 8);
            break;
        }
        for (uint32_t i = 0; i < kids.n; i++) {
            pch_vx_fbt c;
            uint64_t rows;
            PCH_TRY(pch_vx_fb_vec_table(t, &kids, i, &c));
            PCH_TRY(pch_vx_fb_u64(&c, 1, 0, &rows));
            if (!pch_add_u64(&n->starts[i + 1], n->starts[i], rows)) return LBAD("vortex.chunked: row overflow");
        }
        if (n->starts[kids.n] != n->rows) return LBAD("vortex.chunked: chunks hold %" PRIu64 " rows, layout says %" PRIu64, n->starts[kids.n], n->rows);
        break;
    }
    case L_STATS: case L_ZONED: {
        if (kids.n != 2) return LBAD("%s: %u children", layout_ids[n->type], kids.n);
        CHILD(0, dt);
        if (n->children[0].rows != n->rows) return LBAD("%s: data child rows differ", layout_ids[n->type]);
        if (n->type == L_STATS) {
            if (meta.n < 4) return LBAD("vortex.stats: metadata of %u bytes", meta.n);
            n->zone_len = pch_load_le32(m);
            /* only {Max, Min, NullCount} tables are understood; others are left opaque */
            n->zones_ok = meta.n >= 6 && m[4] == 0x58 && m[5] == 0 && n->zone_len > 0 && zone_dtype_ok(dt);
            for (uint32_t b = 6; b < meta.n; b++) if (m[b]) n->zones_ok = 0;
        } else {
            if (meta.n < 2 || m[0] != 1) return LBAD("vortex.zoned: bad metadata");
        }
        if (n->zones_ok) {
            char *txt = NULL;
            pch_buf b;
            int rc;
            PCH_TRY(pch_vx_dtype_format(&txt, dt, err));
            pch_buf_init(&b, f->ctx);
            pch_buf_printf(&b, "max:%s%s,max_is_truncated:bool,min:%s%s,min_is_truncated:bool,null_count:u64?",
                           txt, dt->nullable ? "" : "?", txt, dt->nullable ? "" : "?");
            pch_free(f->ctx, txt);
            rc = b.oom ? PCH_ENOMEM : pch_vx_dtype_parse(&n->own_dt, f->ctx, (const char *)b.data, err);
            pch_buf_dispose(&b);
            if (rc) return rc;
            CHILD(1, n->own_dt);
            if (n->children[1].rows != (n->rows + n->zone_len - 1) / n->zone_len)
                return LBAD("vortex.stats: %" PRIu64 " zones for %" PRIu64 " rows of %u", n->children[1].rows, n->rows, n->zone_len);
        } else {
            n->n_children = 1;   /* zones opaque: never read */
        }
        break;
    }
    case L_DICT: {
        pch_rd r = pch_rd_make(m, meta.n);
        pch_vx_pbf fl;
        uint64_t cp = 0, nc = dt->nullable;
        int rc;
        while ((rc = pch_vx__pb_next(&r, &fl, err)) == 1) {
            if (fl.field == 1 && fl.wt == 0) cp = fl.v;
            if (fl.field == 2 && fl.wt == 0) nc = fl.v != 0;
        }
        if (rc < 0) return rc;
        if (kids.n != 2) return LBAD("vortex.dict layout: %u children", kids.n);
        if (cp > PCH_VX_I64) return LBAD("vortex.dict layout: codes ptype %" PRIu64, cp);
        if (nc && !dt->nullable) return LBAD("vortex.dict layout: nullable codes for a non-nullable column");
        if (!(n->own_dt = pch_vx__dtype_new(f->ctx, PCH_VX_PRIMITIVE, (int)nc))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        n->own_dt->ptype = (uint8_t)cp;
        CHILD(0, dt);
        CHILD(1, n->own_dt);
        if (n->children[1].rows != n->rows) return LBAD("vortex.dict layout: codes rows differ");
        break;
    }
    default: break;
    }
#undef CHILD
    return PCH_OK;
}

/* Child i of n, parsed first if it is a chunk not used before. */
static int kid(pch_vx_file *f, const lnode *n, uint32_t i, lnode **out, pch_error *err)
{
    pch_vx_fbt t;
    lnode *c;
    int rc;
    *out = n->kidp ? n->kidp[i] : &n->children[i];
    if (*out) return PCH_OK;
    /* parsed aside: a chunk that fails to parse stays unparsed (every later read fails the
    ** same way), never half-built */
    if (!(c = pch_malloc(f->ctx, sizeof *c))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    f->layout_v.err = err;   /* messages of this parse go to this call's err */
    rc = pch_vx_fb_vec_table(&n->fbt, &n->kvec, i, &t);
    if (!rc) rc = parse_layout(f, &t, n->dt, c, err);
    else memset(c, 0, sizeof *c);
    if (!rc && c->rows != n->starts[i + 1] - n->starts[i])
        rc = LBAD("vortex.chunked: chunk %u has %" PRIu64 " rows, then %" PRIu64, i, n->starts[i + 1] - n->starts[i], c->rows);
    if (rc) { lnode_dispose(f->ctx, c); pch_free(f->ctx, c); return rc; }
    n->kidp[i] = c;
    *out = c;
    return PCH_OK;
}

/* Child i of n, which kid() has parsed (check and inspect run after parse_all). */
static const lnode *child(const lnode *n, uint32_t i) { return n->kidp ? n->kidp[i] : &n->children[i]; }

/* Parse every chunk below n (check and inspect walk the whole tree). */
static int parse_all(pch_vx_file *f, lnode *n, pch_error *err)
{
    for (uint32_t i = 0; i < n->n_children; i++) {
        lnode *c;
        PCH_TRY(kid(f, n, i, &c, err));
        PCH_TRY(parse_all(f, c, err));
    }
    return PCH_OK;
}

/* ------------------------------------------------------------------ open */

static int ps_seg(const pch_vx_fbt *ps, unsigned slot, int required, uint64_t lo, uint64_t hi,
                  uint64_t *off, uint32_t *len, int *present, pch_error *err)
{
    pch_vx_fbt s;
    int p;
    uint8_t ae;
    PCH_TRY(pch_vx_fb_table(ps, slot, required, &s, &p));
    *present = p;
    if (!p) return PCH_OK;
    PCH_TRY(pch_vx_fb_u64(&s, 0, 0, off));
    PCH_TRY(pch_vx_fb_u32(&s, 1, 0, len));
    PCH_TRY(pch_vx_fb_u8(&s, 2, 0, &ae));
    if (pch_vx_fb_has(&s, 3) || pch_vx_fb_has(&s, 4))
        return pch_error_set(err, PCH_EUNSUPPORTED, "vortex postscript: compressed or encrypted footer region");
    if (*off < lo || *off > hi || *len > hi - *off)
        return pch_error_set(err, PCH_ECORRUPT, "vortex postscript: region %u at %" PRIu64 "+%u outside the file body", slot, *off, *len);
    return PCH_OK;
}

static int load_region(pch_vx_file *f, const uint8_t *tail, uint64_t tail_off, uint64_t off, uint32_t len,
                       uint8_t **out, pch_error *err)
{
    *out = pch_malloc(f->ctx, len ? len : 1);
    if (!*out) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    if (off >= tail_off) { memcpy(*out, tail + (off - tail_off), len); return PCH_OK; }
    return f_read(f, off, len, *out, err);
}

/* Bytes [off, off + len) of the file for the open: in place in the paged tail (checked), or
** a copy of the caller's (*owned) from the first read of the tail or read now. */
static int open_bytes(pch_vx_file *f, const uint8_t *tail, uint64_t tail_off, uint64_t off, uint32_t len,
                      const uint8_t **p, uint8_t **owned, pch_error *err)
{
    *owned = NULL;
    if (f->tail) {
        PCH_TRY(tail_need(f, off, len, err));
        *p = f->tail + (off - f->tail_off);
        return PCH_OK;
    }
    PCH_TRY(load_region(f, tail, tail_off, off, len, owned, err));
    *p = *owned;
    return PCH_OK;
}

static int open_common(pch_vx_file *f, pch_error *err)
{
    uint64_t tail_len = f->size < TAIL_READ ? f->size : TAIL_READ, tail_off, off[3] = { 0 };
    uint32_t len[3] = { 0 };
    uint8_t *tail = NULL, *own[3] = { NULL, NULL, NULL }, head[4];
    const uint8_t *reg[3] = { NULL, NULL, NULL }, *eof;
    pch_vx_fbv v;
    pch_vx_fbt ps, root;
    pch_vx_fbvec av, lv, sv;
    uint16_t version;
    int rc, present;
    if (f->size < 4 + PCH_VX_EOF_SIZE) return pch_error_set(err, PCH_ECORRUPT, "vortex: file of %" PRIu64 " bytes is too short", f->size);
    if (f->tail) {                     /* paged: the trailer first, then what it points at */
        tail_off = f->size - PCH_VX_EOF_SIZE;
        if ((rc = tail_need(f, tail_off, PCH_VX_EOF_SIZE, err))) goto done;
        eof = f->tail + (tail_off - f->tail_off);
    } else {
        tail_off = f->size - tail_len;
        if (!(tail = pch_malloc(f->ctx, (size_t)tail_len))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        if ((rc = f_read(f, tail_off, (size_t)tail_len, tail, err))) goto done;
        eof = tail + tail_len - PCH_VX_EOF_SIZE;
    }
    if (memcmp(eof + 4, PCH_VX_MAGIC, 4) != 0) {
        if (memcmp(eof + 4, PCH_VX_LEGACY_MAGIC, 4) == 0)
            rc = pch_error_set(err, PCH_EUNSUPPORTED, "vortex: pre-0.36 file (trailing magic VRTX); only the stable format (VTXF, version 1) is read");
        else
            rc = pch_error_set(err, PCH_ECORRUPT, "vortex: bad trailing magic (not a Vortex file)");
        goto done;
    }
    version = pch_load_le16(eof);
    f->ps_len = pch_load_le16(eof + 2);
    if (version != PCH_VX_VERSION) { rc = pch_error_set(err, PCH_EUNSUPPORTED, "vortex: file format version %u (only 1)", version); goto done; }
    if (f->ps_len > PCH_VX_MAX_POSTSCRIPT || f->ps_len > f->size - PCH_VX_EOF_SIZE - 4) {
        rc = pch_error_set(err, PCH_ECORRUPT, "vortex: postscript length %u", f->ps_len);
        goto done;
    }
    /* the leading magic: read unless this is a paged open of an object on object storage whose
    ** tail blocks are checked against digests (the projection's point reads): there it
    ** would cost a request of its own, and every byte the reader uses is digest-checked */
    if (f->tail && f->tcheck && f->rf && pch_rfile_fd(f->rf) < 0) memcpy(head, PCH_VX_MAGIC, 4);
    else if (!f->tail && tail_off == 0) memcpy(head, tail, 4);
    else if ((rc = f_read(f, 0, 4, head, err))) goto done;
    if (memcmp(head, PCH_VX_MAGIC, 4) != 0) { rc = pch_error_set(err, PCH_ECORRUPT, "vortex: bad leading magic"); goto done; }
    f->data_end = f->size - PCH_VX_EOF_SIZE - f->ps_len;
    {
        const uint8_t *psb;
        if (f->tail) {
            if ((rc = tail_need(f, f->data_end, f->ps_len, err))) goto done;
            psb = f->tail + (f->data_end - f->tail_off);
        } else {
            psb = tail + (tail_len - PCH_VX_EOF_SIZE - f->ps_len);
        }
        if ((rc = pch_vx_fb_root(&ps, &v, psb, f->ps_len, "postscript", err))) goto done;
        if ((rc = ps_seg(&ps, 0, 1, 4, f->data_end, &off[0], &len[0], &present, err)) ||
            (rc = ps_seg(&ps, 1, 1, 4, f->data_end, &off[1], &len[1], &present, err)) ||
            (rc = ps_seg(&ps, 2, 0, 4, f->data_end, &off[2], &len[2], &present, err)) ||
            (rc = ps_seg(&ps, 3, 1, 4, f->data_end, &off[2], &len[2], &present, err)))
            goto done;
    }
    /* paged: the dtype is read whole; the layout and footer stay in the tail, read in place */
    for (int i = 0; i < 3; i++) {
        if (f->tail && i) {
            if (off[i] < f->tail_off) {
                rc = pch_error_set(err, PCH_ECORRUPT, "vortex postscript: region %d at %" PRIu64 " before the checked tail at %" PRIu64, i, off[i], f->tail_off);
                goto done;
            }
            reg[i] = f->tail + (off[i] - f->tail_off);
        } else if ((rc = open_bytes(f, tail, tail_off, off[i], len[i], &reg[i], &own[i], err))) {
            goto done;
        }
    }
    /* dtype */
    if ((rc = pch_vx_fb_root(&root, &v, reg[0], len[0], "dtype", err)) ||
        (rc = pch_vx__dtype_from_fb(&f->dt, f->ctx, &root, err)))
        goto done;
    /* footer */
    f->freg.f = f;
    f->freg.off = off[2];
    if ((rc = pch_vx_fb_root_paged(&root, &f->foot_v, reg[2], len[2], "footer", f->tail ? region_need : NULL, &f->freg, err))) goto done;
    if ((rc = pch_vx_fb_vector(&root, 0, 4, 4, &av, NULL)) || (rc = pch_vx_fb_vector(&root, 1, 4, 4, &lv, NULL)) ||
        (rc = pch_vx_fb_vector_lazy(&root, 2, 16, 8, &sv, &present)))
        goto done;
    if (!present) { rc = pch_error_set(err, PCH_ECORRUPT, "vortex footer: segment specs missing"); goto done; }
    if (pch_vx_fb_has(&root, 3) || pch_vx_fb_has(&root, 4)) { rc = pch_error_set(err, PCH_EUNSUPPORTED, "vortex footer: compression/encryption specs"); goto done; }
    if (av.n > 65535 || lv.n > 65535) { rc = pch_error_set(err, PCH_ECORRUPT, "vortex footer: too many specs"); goto done; }
    f->n_specs = av.n;
    f->n_lspecs = lv.n;
    f->n_segs = sv.n;
    f->spec_pos = sv.pos;
    f->spec_map = pch_calloc(f->ctx, av.n ? av.n : 1, sizeof(int16_t));
    f->lmap = pch_calloc(f->ctx, lv.n ? lv.n : 1, 1);
    f->seg_off = pch_calloc(f->ctx, sv.n ? sv.n : 1, 8);
    f->seg_len = pch_calloc(f->ctx, sv.n ? sv.n : 1, 4);
    f->seg_align = pch_calloc(f->ctx, sv.n ? sv.n : 1, 1);
    f->cache = pch_calloc(f->ctx, sv.n ? sv.n : 1, sizeof(uint8_t *));
    if (f->tail) f->seg_loaded = pch_calloc(f->ctx, ((size_t)sv.n + 7) / 8 + 1, 1);
    if (!f->spec_map || !f->lmap || !f->seg_off || !f->seg_len || !f->seg_align || !f->cache || (f->tail && !f->seg_loaded)) {
        rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < av.n + lv.n; i++) {
        pch_vx_fbt spec;
        const char *id;
        size_t idl;
        int isl = i >= av.n;
        if ((rc = pch_vx_fb_vec_table(&root, isl ? &lv : &av, isl ? i - av.n : i, &spec)) ||
            (rc = pch_vx_fb_string(&spec, 0, 1, &id, &idl, NULL)))
            goto done;
        if (!isl) {
            f->spec_map[i] = (int16_t)pch_vx__enc_lookup(id, idl);
        } else {
            f->lmap[i - av.n] = -1;
            for (int k = 0; k < L_COUNT; k++)
                if (strlen(layout_ids[k]) == idl && memcmp(layout_ids[k], id, idl) == 0) f->lmap[i - av.n] = (int8_t)k;
        }
    }
    /* the segment map: whole at an ordinary open (its order checked too); a paged open reads
    ** each spec when its segment is first used (seg_load) */
    for (uint32_t i = 0; !f->tail && i < sv.n; i++) {
        const uint8_t *e = f->foot_v.buf + sv.pos + 16 * (size_t)i;
        f->seg_off[i] = pch_load_le64(e);
        f->seg_len[i] = pch_load_le32(e + 8);
        f->seg_align[i] = e[12];
        if (e[13] || pch_load_le16(e + 14)) { rc = pch_error_set(err, PCH_EUNSUPPORTED, "vortex footer: segment %u compressed/encrypted", i); goto done; }
        if (i && f->seg_off[i] < f->seg_off[i - 1]) { rc = pch_error_set(err, PCH_ECORRUPT, "vortex footer: segment offsets are not ordered (segment %u)", i); goto done; }
        if (f->seg_off[i] < 4 || f->seg_off[i] > f->data_end || f->seg_len[i] > f->data_end - f->seg_off[i]) {
            rc = pch_error_set(err, PCH_ECORRUPT, "vortex footer: segment %u at %" PRIu64 "+%u outside the file body", i, f->seg_off[i], f->seg_len[i]);
            goto done;
        }
        if (f->seg_align[i] > 16) { rc = pch_error_set(err, PCH_ECORRUPT, "vortex footer: segment %u alignment exponent %u", i, f->seg_align[i]); goto done; }
    }
    if (!f->tail) {                    /* the footer is not kept: its specs are all read */
        f->foot_v.buf = NULL;
        f->foot_v.len = 0;
    }
    /* layout (kept: chunks are parsed on first use) */
    if (f->tail) {
        f->lreg.f = f;
        f->lreg.off = off[1];
        rc = pch_vx_fb_root_paged(&root, &f->layout_v, reg[1], len[1], "layout", region_need, &f->lreg, err);
    } else {
        f->layout_buf = own[1];
        own[1] = NULL;
        rc = pch_vx_fb_root(&root, &f->layout_v, f->layout_buf, len[1], "layout", err);
    }
    if (rc || (rc = parse_layout(f, &root, f->dt, &f->root, err))) goto done;
    f->dc.ctx = f->ctx;
    f->dc.spec_map = f->spec_map;
    f->dc.n_specs = f->n_specs;
done:
    pch_free(f->ctx, tail);
    for (int i = 0; i < 3; i++) pch_free(f->ctx, own[i]);
    return rc;
}

static int file_new(pch_vx_file **out, pch_ctx *ctx, pch_error *err)
{
    pch_vx_file *f = pch_calloc(ctx, 1, sizeof(*f));
    *out = NULL;
    if (!f) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    f->ctx = ctx;
    f->cache_budget = (size_t)4 << 20;     /* vortex.h: pch_vx_file_set_cache_bytes */
    f->gap = COALESCE_GAP;
    *out = f;
    return PCH_OK;
}

int pch_vx_file_open_mem(pch_vx_file **out, pch_ctx *ctx, const void *data, size_t len, pch_error *err)
{
    pch_vx_file *f;
    int rc;
    PCH_TRY(file_new(&f, ctx, err));
    f->mem = data;
    f->size = len;
    if ((rc = open_common(f, err))) { pch_vx_file_free(f); *out = NULL; return rc; }
    *out = f;
    return PCH_OK;
}

int pch_vx_file_open(pch_vx_file **out, pch_ctx *ctx, const char *path, pch_error *err)
{
    return pch_vx_file_open_tail(out, ctx, path, NULL, 0, 0, err);
}

int pch_vx_file_open_tail(pch_vx_file **out, pch_ctx *ctx, const char *path, const void *tail, uint64_t tail_off,
                          size_t tail_len, pch_error *err)
{
    pch_vx_file *f;
    int rc;
    PCH_TRY(file_new(&f, ctx, err));
    if ((rc = pch_rfile_open(ctx, path, &f->rf, err)) < 0) {
        pch_error_prefix(err, "vortex");
        pch_vx_file_free(f);
        *out = NULL;
        return rc;
    }
    if ((rc = pch_rfile_size(f->rf, &f->size, err)) < 0) { pch_error_prefix(err, "vortex: '%s'", path); goto fail; }
    if (tail && (tail_off > f->size || tail_len != f->size - tail_off)) {
        rc = pch_error_set(err, PCH_EINVAL, "vortex: '%s' is %" PRIu64 " bytes, not %" PRIu64 " + %zu", path, f->size, tail_off, tail_len);
        goto fail;
    }
    f->pre = tail;
    f->pre_off = tail_off;
    f->pre_len = tail_len;
    rc = open_common(f, err);
    f->pre = NULL;
    if (rc) { pch_error_prefix(err, "%s", path); goto fail; }
    *out = f;
    return PCH_OK;
fail:
    pch_vx_file_free(f);
    *out = NULL;
    return rc;
}

int pch_vx_file_open_paged(pch_vx_file **out, pch_ctx *ctx, const char *path, const pch_vx_paged_open *o,
                           pch_error *err)
{
    pch_vx_file *f;
    uint64_t nb;
    int rc;
    *out = NULL;
    if (!o || o->version < 1 || o->version > PCH_VX_PAGED_OPEN_VERSION)
        return pch_error_set(err, PCH_EINVAL, "vortex: paged open options version %u (want 1..%u)", o ? o->version : 0, PCH_VX_PAGED_OPEN_VERSION);
    if (o->block_bytes < PCH_VX_BLOCK_MIN)
        return pch_error_set(err, PCH_EINVAL, "vortex: paged open with %u-byte blocks (at least %u)", o->block_bytes, PCH_VX_BLOCK_MIN);
    for (uint32_t i = 0; o->chunk_starts && i <= o->n_chunks; i++)
        if (i ? o->chunk_starts[i] < o->chunk_starts[i - 1] : o->chunk_starts[0] != 0)
            return pch_error_set(err, PCH_EINVAL, "vortex: paged open with chunk starts that do not rise from 0 (chunk %u)", i);
    PCH_TRY(file_new(&f, ctx, err));
    if ((rc = pch_rfile_open(ctx, path, &f->rf, err)) < 0) { pch_error_prefix(err, "vortex"); goto fail; }
    if ((rc = pch_rfile_size(f->rf, &f->size, err)) < 0) { pch_error_prefix(err, "vortex: '%s'", path); goto fail; }
    if (o->tail_off > f->size || f->size - o->tail_off < PCH_VX_EOF_SIZE || f->size - o->tail_off > ((uint64_t)1 << 31)) {
        rc = pch_error_set(err, PCH_ECORRUPT, "vortex: '%s' is %" PRIu64 " bytes, its tail cannot start at %" PRIu64, path, f->size, o->tail_off);
        goto fail;
    }
    if (o->version >= 2 && o->also_len && f->size - o->tail_off <= o->block_bytes && o->also_off <= f->size &&
        o->also_len <= f->size - o->also_off) {
        /* the tail is one block, read whole first: the caller's next range comes with it */
        const uint64_t both[4] = { o->tail_off, f->size - o->tail_off, o->also_off, o->also_len };
        if ((rc = pch_rfile_prefetch_ranges(f->rf, both, 2, err)) < 0) { pch_error_prefix(err, "vortex: '%s'", path); goto fail; }
    }
    f->tail_off = o->tail_off;
    f->tblock = o->block_bytes;
    f->tcheck = o->check;
    f->tcheck_payload = o->payload;
    nb = (f->size - f->tail_off + o->block_bytes - 1) / o->block_bytes;
    f->tail = pch_malloc(ctx, (size_t)(f->size - f->tail_off));
    f->tail_bits = pch_calloc(ctx, (size_t)(nb + 7) / 8 + 1, 1);
    if (o->chunk_starts && (f->hint = pch_malloc(ctx, ((size_t)o->n_chunks + 1) * 8))) {
        f->hint_n = o->n_chunks;
        memcpy(f->hint, o->chunk_starts, ((size_t)o->n_chunks + 1) * 8);
    }
    if (!f->tail || !f->tail_bits || (o->chunk_starts && !f->hint)) { rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory"); goto fail; }
    if ((rc = open_common(f, err))) { pch_error_prefix(err, "%s", path); goto fail; }
    *out = f;
    return PCH_OK;
fail:
    pch_vx_file_free(f);
    return rc;
}

int pch_vx_file_read_tail(pch_vx_file *f, pch_vx_tail_whole_fn whole, void *payload, pch_error *err)
{
    uint64_t T, nb;
    if (!f->tail) return PCH_OK;
    if (!whole) return tail_need(f, f->tail_off, f->size - f->tail_off, err);
    T = f->size - f->tail_off;
    nb = (T + f->tblock - 1) / f->tblock;
    for (uint64_t k = 0; k < nb && pch_vx__bit(f->tail_bits, k); k++)
        if (k + 1 == nb) return PCH_OK;                     /* all present already */
    /* one read and one check of the whole tail: blocks already present are read again and
    ** checked with the rest (the same bytes, or the whole check fails) */
    PCH_TRY(f_read(f, f->tail_off, (size_t)T, f->tail, err));
    f->st.tail_requests++;
    f->st.tail_bytes += T;
    {
        int rc = whole(payload, f->tail, T, err);
        if (rc < 0) {
            memset(f->tail_bits, 0, (size_t)(nb + 7) / 8 + 1);  /* nothing of it counts as checked */
            return rc;
        }
    }
    memset(f->tail_bits, 0xff, (size_t)(nb + 7) / 8 + 1);
    return PCH_OK;
}

void pch_vx_file_keep_tail(pch_vx_file *f)
{
    uint64_t T, nb;
    if (!f->tail || !f->rf || f->tail_kept) return;
    T = f->size - f->tail_off;
    nb = (T + f->tblock - 1) / f->tblock;
    for (uint64_t k = 0; k < nb; k++)
        if (!pch_vx__bit(f->tail_bits, k)) return;
    pch_rfile_keep_tail(f->rf, f->tail_off, f->tail, T);
    f->tail_kept = true;
}

void pch_vx_file_free(pch_vx_file *f)
{
    if (!f) return;
    pch_rfile_close(f->rf);
    if (f->cache) cache_clear(f);
    pch_free(f->ctx, f->cache);
    pch_free(f->ctx, f->pbits);
    lnode_dispose(f->ctx, &f->root);
    pch_free(f->ctx, f->rmemo);
    pch_free(f->ctx, f->layout_buf);
    pch_vx_dtype_free(f->dt);
    pch_free(f->ctx, f->spec_map);
    pch_free(f->ctx, f->lmap);
    pch_free(f->ctx, f->seg_off);
    pch_free(f->ctx, f->seg_len);
    pch_free(f->ctx, f->seg_align);
    pch_free(f->ctx, f->seg_loaded);
    pch_free(f->ctx, f->tail);
    pch_free(f->ctx, f->tail_bits);
    pch_free(f->ctx, f->hint);
    pch_free(f->ctx, f->held);
    pch_free(f->ctx, f);
}

const pch_vx_dtype *pch_vx_file_dtype(const pch_vx_file *f) { return f->dt; }
uint64_t pch_vx_file_row_count(const pch_vx_file *f) { return f->root.rows; }
void pch_vx_file_io_stats(const pch_vx_file *f, pch_vx_io_stats *out) { *out = f->st; }
void pch_vx_file_set_coalesce_gap(pch_vx_file *f, uint64_t bytes) { f->gap = bytes; }
void pch_vx_file_set_min_fetch(pch_vx_file *f, uint64_t bytes) { if (f->rf) pch_rfile_set_min_span(f->rf, bytes); }

int pch_vx_file_prefetch(pch_vx_file *f, uint64_t off, uint64_t len, pch_error *err)
{
    if (!f->rf || off > f->size || len > f->size - off) return PCH_OK;
    return pch_rfile_prefetch(f->rf, off, len, err);
}
_Static_assert(PCH_VX_PREFETCH_MAX == PCH_RFILE_AHEAD_MAX, "the Vortex reader promises what the object layer fetches");
int pch_vx_file_prefetch_ranges(pch_vx_file *f, const uint64_t *ranges, size_t n, pch_error *err)
{
    if (!f->rf) return PCH_OK;
    for (size_t i = 0; i < n; i++)
        if (ranges[2 * i] > f->size || ranges[2 * i + 1] > f->size - ranges[2 * i])
            return pch_error_set(err, PCH_EINVAL, "vortex: prefetch of %" PRIu64 " bytes at %" PRIu64 " is past the file's %" PRIu64,
                                 ranges[2 * i + 1], ranges[2 * i], f->size);
    return pch_rfile_prefetch_ranges(f->rf, ranges, n, err);
}

int pch_vx_file_hold(pch_vx_file *f, uint64_t off, uint64_t len, pch_vx_range_check_fn check, void *payload,
                     pch_error *err)
{
    uint8_t *b;
    int rc;
    pch_free(f->ctx, f->held);
    f->held = NULL;
    f->held_off = f->held_len = 0;
    if (len == 0) return PCH_OK;
    if (off > f->size || len > f->size - off || len > SIZE_MAX - 1)
        return pch_error_set(err, PCH_EINVAL, "vortex: hold of %" PRIu64 " bytes at %" PRIu64 " is past the file's %" PRIu64,
                             len, off, f->size);
    if (!(b = pch_malloc(f->ctx, (size_t)len))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    rc = f_read(f, off, (size_t)len, b, err);
    if (rc == PCH_OK && check) rc = check(payload, off, b, len, err);
    if (rc < 0) { pch_free(f->ctx, b); return rc; }
    f->held = b;
    f->held_off = off;
    f->held_len = len;
    return PCH_OK;
}

uint32_t pch_vx_file_n_segments(const pch_vx_file *f) { return f->n_segs; }
int pch_vx_file_segment(pch_vx_file *f, uint32_t i, uint64_t *off, uint64_t *len, pch_error *err)
{
    if (i >= f->n_segs) return pch_error_set(err, PCH_EINVAL, "vortex: segment %u past %u", i, f->n_segs);
    PCH_TRY(seg_load(f, i, err));
    *off = f->seg_off[i];
    *len = f->seg_len[i];
    return PCH_OK;
}
void pch_vx_file_set_segment_check(pch_vx_file *f, pch_vx_segment_check_fn fn, void *payload)
{
    f->check = fn;
    f->check_payload = payload;
}
int pch_vx_file_set_partial_reads(pch_vx_file *f, uint32_t block_bytes, pch_vx_block_check_fn fn, void *payload,
                                  pch_error *err)
{
    if (block_bytes && block_bytes < PCH_VX_BLOCK_MIN)
        return pch_error_set(err, PCH_EINVAL, "vortex: partial-read block of %u bytes (at least %u)", block_bytes, PCH_VX_BLOCK_MIN);
    cache_clear(f);
    if (block_bytes && !f->pbits && !(f->pbits = pch_calloc(f->ctx, f->n_segs ? f->n_segs : 1, sizeof(uint8_t *))))
        return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    f->block = block_bytes;
    f->bcheck = fn;
    f->bcheck_payload = payload;
    return PCH_OK;
}
void pch_vx_file_reset_io_stats(pch_vx_file *f) { memset(&f->st, 0, sizeof(f->st)); }
void pch_vx_file_set_cache_bytes(pch_vx_file *f, size_t bytes) { f->cache_budget = bytes; cache_clear(f); }

/* ------------------------------------------------------------------ reading rows */

/* Read rows[0..nr) (sorted, < n->rows) of a layout; plan != NULL only collects segments. */
static int rr(pch_vx_file *f, const lnode *n, const uint64_t *rows, uint64_t nr, segvec *plan,
              pch_vx_array **out, pch_error *err)
{
    int rc = PCH_OK;
    *out = NULL;
    switch (n->type) {
    case L_FLAT: {
        const uint8_t *seg;
        pch_vx_array *full;
        int all = nr == n->rows, run;
        for (uint64_t i = 0; all && i < nr; i++) all = rows[i] == i;
        run = !all && nr && rows[nr - 1] - rows[0] == nr - 1;   /* one run of rows: a point read */
        /* a run of at most half the chunk reads only the blocks it needs; more reads it whole */
        if (run && nr <= n->rows / 2 && sparse_ok(f, n)) return plan ? PCH_OK : sparse_range(f, n, rows[0], nr, out, err);
        if (plan) return segvec_push(f, plan, n->seg) ? pch_error_set(err, PCH_ENOMEM, "vortex: out of memory") : PCH_OK;
        PCH_TRY(get_segment(f, n->seg, &seg, err));
        if (run) return pch_vx__deserialize_range(out, &f->dc, seg, f->seg_len[n->seg], n->dt, n->rows, rows[0], nr, err);
        if (all) {                  /* handed over as decoded: text may stay as codes */
            pch_vx_decode_ctx dc = f->dc;
            dc.text_codes = f->text_codes;
            return pch_vx__deserialize(out, &dc, seg, f->seg_len[n->seg], n->dt, n->rows, err);
        }
        PCH_TRY(pch_vx__deserialize(&full, &f->dc, seg, f->seg_len[n->seg], n->dt, n->rows, err));
        rc = pch_vx__array_take(out, full, rows, nr, err);
        pch_vx_array_free(full);
        return rc;
    }
    case L_CHUNKED: {
        pch_vx_array **parts = NULL;
        size_t np = 0;
        uint64_t i = 0, *sub = NULL;
        lnode *ch;
        const bool tc = f->text_codes;
        uint32_t c0 = 0;
        /* the chunk of the first row, by binary search: a scan reads a file's clusters one by
        ** one, and walking every chunk of a column for each would cost O(chunks²) */
        if (nr) {
            uint32_t lo = 0, hi = n->n_children;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (rows[0] >= n->starts[mid + 1]) lo = mid + 1;
                else hi = mid;
            }
            c0 = lo;
        }
        /* rows from more than one chunk are concatenated: no codes-only text then */
        if (nr && c0 < n->n_children && rows[nr - 1] >= n->starts[c0 + 1]) f->text_codes = false;
        if (!plan && !(parts = pch_calloc(f->ctx, n->n_children ? n->n_children : 1, sizeof(*parts))))
            return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        if (!(sub = pch_malloc(f->ctx, (size_t)(nr ? nr : 1) * 8))) { pch_free(f->ctx, parts); return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory"); }
        for (uint32_t c = c0; c < n->n_children && i < nr && !rc; c++) {
            uint64_t k = 0;
            while (i < nr && rows[i] < n->starts[c + 1]) sub[k++] = rows[i++] - n->starts[c];
            if (!k) continue;
            if ((rc = kid(f, n, c, &ch, err))) break;
            rc = rr(f, ch, sub, k, plan, plan ? out : &parts[np], err);
            if (!plan && !rc) np++;
        }
        pch_free(f->ctx, sub);
        f->text_codes = tc;
        /* one chunk is handed over as decoded (no copy; its dtype tree lives as long as the
        ** file's layout, as n->dt does), more are concatenated */
        if (!plan && !rc && np == 1) { *out = parts[0]; parts[0] = NULL; }
        else if (!plan && !rc) rc = pch_vx__array_concat(out, n->dt, f->ctx, parts, np, err);
        for (size_t k = 0; k < np; k++) pch_vx_array_free(parts[k]);
        pch_free(f->ctx, parts);
        return rc;
    }
    case L_STATS: case L_ZONED:
        return rr(f, &n->children[0], rows, nr, plan, out, err);
    case L_STRUCT: {
        const pch_vx_dtype *d = n->dt;
        uint32_t first = n->struct_validity ? 1 : 0;
        pch_vx_array *a = NULL, *tmp = NULL;
        if (!plan && !(a = pch_vx__array_new(f->ctx, d, nr, d->n_fields))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        if (first) {
            rc = rr(f, &n->children[0], rows, nr, plan, &tmp, err);
            if (!rc && !plan) { a->validity = tmp->data; tmp->data = NULL; }
            pch_vx_array_free(tmp);
        }
        for (uint32_t i = 0; i < d->n_fields && !rc; i++)
            rc = rr(f, &n->children[first + i], rows, nr, plan, plan ? &tmp : &a->children[i], err);
        if (rc) { pch_vx_array_free(a); return rc; }
        *out = a;
        return PCH_OK;
    }
    case L_DICT: {
        pch_vx_array *codes = NULL, *vals = NULL;
        uint64_t *all = NULL, nv = n->children[0].rows, *idx = NULL;
        unsigned p = n->own_dt->ptype;
        if (nv > ((uint64_t)1 << 32)) return pch_error_set(err, PCH_ELIMIT, "vortex.dict layout: %" PRIu64 " values", nv);
        const bool tc = f->text_codes;
        if (!(all = pch_malloc(f->ctx, (size_t)(nv ? nv : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        for (uint64_t i = 0; i < nv; i++) all[i] = i;
        f->text_codes = false;      /* the values are taken by the codes below */
        rc = rr(f, &n->children[1], rows, nr, plan, &codes, err);
        if (!rc) rc = rr(f, &n->children[0], all, nv, plan, &vals, err);
        f->text_codes = tc;
        pch_free(f->ctx, all);
        if (rc || plan) { pch_vx_array_free(codes); pch_vx_array_free(vals); return rc; }
        if (!(idx = pch_malloc(f->ctx, (size_t)(nr ? nr : 1) * 8))) rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        for (uint64_t i = 0; i < nr && !rc; i++) {
            int valid = pch_vx_array_is_valid(codes, i);
            uint64_t c = pch_vx__is_signed(p) ? (uint64_t)pch_vx__load_int(codes->data, p, i) : pch_vx__load_uint(codes->data, p, i);
            if (valid && c >= nv) rc = pch_error_set(err, PCH_ECORRUPT, "vortex.dict layout: code %" PRIu64 " past %" PRIu64 " values", c, nv);
            else if (!valid && nv == 0) rc = pch_error_set(err, PCH_EUNSUPPORTED, "vortex.dict layout: null codes over empty values");
            idx[i] = valid ? c : 0;
        }
        if (!rc) rc = pch_vx__array_take(out, vals, idx, nr, err);
        if (!rc && codes->validity) {
            if (!(*out)->validity && pch_vx__array_alloc_validity(*out)) rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
            for (uint64_t i = 0; i < nr && !rc; i++)
                if (!pch_vx__bit(codes->validity, i)) pch_vx__set_bit((*out)->validity, i, 0);
        }
        pch_free(f->ctx, idx);
        pch_vx_array_free(codes);
        pch_vx_array_free(vals);
        if (rc) { pch_vx_array_free(*out); *out = NULL; }
        return rc;
    }
    default:
        return pch_error_set(err, PCH_EUNSUPPORTED, "vortex: layout type %d", n->type);
    }
}

/* Plan, prefetch (coalesced), then read. */
static int read_rows(pch_vx_file *f, const lnode *n, const uint64_t *rows, uint64_t nr, pch_vx_array **out,
                     pch_error *err)
{
    segvec sv = { NULL, 0, 0 };
    pch_vx_array *dummy = NULL;
    int rc = rr(f, n, rows, nr, &sv, &dummy, err);
    pch_vx_array_free(dummy);
    if (!rc) rc = prefetch(f, &sv, err);
    pch_free(f->ctx, sv.v);
    if (rc) return rc;
    return rr(f, n, rows, nr, NULL, out, err);
}

/* ------------------------------------------------------------------ scan */

typedef struct colref {
    const lnode *node;        /* layout holding the data */
    uint32_t steps[32];       /* struct field indices to extract after decoding */
    uint32_t n_steps;
} colref;

/* A scan names its columns by path on every call (a cluster at a time), and walking the
** dtype's field names was a tenth of a small cluster's scan: the last paths resolved are kept
** by a hash of the path (whole paths compared on a hit). Only struct levels are walked,
** whose nodes live as long as the file. */
#define RMEMO_N 32
struct rmemo {
    uint64_t h;
    size_t len;
    char path[96];
    colref c;
};

static uint64_t path_hash(const char *p, size_t *len)
{
    uint64_t h = 1469598103934665603ull;
    size_t n = 0;
    for (; p[n]; n++) h = (h ^ (uint8_t)p[n]) * 1099511628211ull;
    *len = n;
    return h;
}

static int resolve_walk(pch_vx_file *f, const char *path, colref *c, pch_error *err);

static int resolve(pch_vx_file *f, const char *path, colref *c, pch_error *err)
{
    size_t len;
    uint64_t h = path_hash(path, &len);
    struct rmemo *m;
    if (f->rmemo && len < sizeof f->rmemo[0].path) {
        m = &f->rmemo[h % RMEMO_N];
        if (m->h == h && m->len == len && memcmp(m->path, path, len) == 0) { *c = m->c; return PCH_OK; }
    }
    PCH_TRY(resolve_walk(f, path, c, err));
    if (!f->rmemo) f->rmemo = pch_calloc(f->ctx, RMEMO_N, sizeof *f->rmemo);   /* none: no memo */
    if (f->rmemo && len < sizeof f->rmemo[0].path) {
        m = &f->rmemo[h % RMEMO_N];
        m->h = h;
        m->len = len;
        memcpy(m->path, path, len);
        m->c = *c;
    }
    return PCH_OK;
}

static int resolve_walk(pch_vx_file *f, const char *path, colref *c, pch_error *err)
{
    const lnode *n = &f->root;
    const pch_vx_dtype *d = f->dt;
    const char *p = path;
    memset(c, 0, sizeof(*c));
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        uint32_t k;
        if (d->kind != PCH_VX_STRUCT) return pch_error_set(err, PCH_ENOTFOUND, "vortex: column '%s': '%.*s' is not inside a struct", path, (int)len, p);
        for (k = 0; k < d->n_fields; k++)
            if (strlen(d->names[k]) == len && memcmp(d->names[k], p, len) == 0) break;
        if (k == d->n_fields) {
            /* a field name may itself contain dots: try the whole remainder */
            for (k = 0; k < d->n_fields; k++) if (strcmp(d->names[k], p) == 0) { len = strlen(p); dot = NULL; break; }
            if (k == d->n_fields) return pch_error_set(err, PCH_ENOTFOUND, "vortex: column '%s' not found", path);
        }
        if (n && n->type == L_STRUCT && c->n_steps == 0) {
            n = &n->children[k + (n->struct_validity ? 1 : 0)];
        } else {
            if (c->n_steps == 32) return pch_error_set(err, PCH_ELIMIT, "vortex: column path too deep");
            c->steps[c->n_steps++] = k;
        }
        d = d->fields[k];
        p = dot ? dot + 1 : p + len;
    }
    c->node = n;
    return PCH_OK;
}

/* Extract struct fields by steps; a null parent makes the child null (dtype made nullable). */
static int extract(pch_vx_file *f, pch_vx_array *a, const colref *c, pch_vx_array **out,
                   pch_vx_dtype **dt_out, pch_error *err)
{
    const pch_vx_dtype *d = a->dtype;
    uint8_t *val = NULL;
    int any_null = 0;
    *out = NULL;
    *dt_out = NULL;
    for (uint32_t s = 0; s < c->n_steps; s++) {
        pch_vx_array *child;
        if (a->validity) {
            if (!val) {
                if (!(val = pch_malloc(f->ctx, (size_t)((a->len + 7) / 8) + 1))) { pch_vx_array_free(a); return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory"); }
                memcpy(val, a->validity, (size_t)((a->len + 7) / 8));
            } else {
                for (size_t b = 0; b < (a->len + 7) / 8; b++) val[b] &= a->validity[b];
            }
            any_null = 1;
        }
        child = a->children[c->steps[s]];
        a->children[c->steps[s]] = NULL;
        pch_vx_array_free(a);
        a = child;
        d = d->fields[c->steps[s]];
    }
    if (pch_vx__dtype_with_nullable(dt_out, d, d->nullable || any_null, err)) { pch_free(f->ctx, val); pch_vx_array_free(a); return PCH_ENOMEM; }
    if (any_null) {
        if ((*dt_out)->kind == PCH_VX_EXTENSION || (*dt_out)->kind == PCH_VX_NULL) {
            pch_free(f->ctx, val);
            if ((*dt_out)->kind == PCH_VX_EXTENSION) {
                pch_vx_array_free(a);
                pch_vx_dtype_free(*dt_out);
                *dt_out = NULL;
                return pch_error_set(err, PCH_EUNSUPPORTED, "vortex: extension field under a nullable struct");
            }
        } else if (a->validity) {
            for (size_t b = 0; b < (a->len + 7) / 8; b++) a->validity[b] &= val[b];
            pch_free(f->ctx, val);
        } else {
            a->validity = val;
        }
    }
    *out = a;
    return PCH_OK;
}

static void rebind(pch_vx_array *a, const pch_vx_dtype *d)
{
    a->dtype = d;
    for (uint32_t i = 0; i < a->n_children; i++)
        if (a->children[i]) rebind(a->children[i], d->kind == PCH_VX_STRUCT ? d->fields[i] : d->elem);
}

/* Compare value row i of a (primitive/utf8/binary) with the filter literal: <0, 0, >0;
** 2 = not comparable (null, NaN). */
static int cmp_value(const pch_vx_array *a, uint64_t i, const pch_vx_scan_options *o)
{
    const pch_vx_dtype *d = a->dtype;
    if (!pch_vx_array_is_valid(a, i)) return 2;
    if (d->kind == PCH_VX_PRIMITIVE) {
        if (d->ptype >= PCH_VX_F16 || o->filter_kind == 2) {
            double x = pch_vx__load_float(a->data, d->ptype, i);
            double y = o->filter_kind == 2 ? o->filter_f : o->filter_kind == 1 ? (double)o->filter_u : (double)o->filter_i;
            if (x != x || y != y) return 2;
            return x < y ? -1 : x > y;
        }
        if (pch_vx__is_signed(d->ptype)) {
            int64_t x = pch_vx__load_int(a->data, d->ptype, i);
            if (o->filter_kind == 1) return o->filter_u > (uint64_t)INT64_MAX ? -1 : (x < (int64_t)o->filter_u ? -1 : x > (int64_t)o->filter_u);
            if (o->filter_kind != 0) return 2;
            return x < o->filter_i ? -1 : x > o->filter_i;
        }
        uint64_t x = pch_vx__load_uint(a->data, d->ptype, i);
        if (o->filter_kind == 0) return o->filter_i < 0 ? 1 : (x < (uint64_t)o->filter_i ? -1 : x > (uint64_t)o->filter_i);
        if (o->filter_kind != 1) return 2;
        return x < o->filter_u ? -1 : x > o->filter_u;
    }
    if ((d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY) && o->filter_kind == 3) {
        size_t n = (size_t)(a->offsets[i + 1] - a->offsets[i]);
        return bytes_cmp3(a->data + a->offsets[i], n, o->filter_bytes, o->filter_bytes_len);
    }
    return 2;
}

static int op_holds(int c, pch_vx_cmp op)
{
    if (c == 2) return 0;
    switch (op) {
    case PCH_VX_CMP_EQ: return c == 0;
    case PCH_VX_CMP_NE: return c != 0;
    case PCH_VX_CMP_LT: return c < 0;
    case PCH_VX_CMP_LE: return c <= 0;
    case PCH_VX_CMP_GT: return c > 0;
    case PCH_VX_CMP_GE: return c >= 0;
    default: return 1;
    }
}

/* Zone z of table zt cannot hold a match. */
static int zone_prunes(const pch_vx_array *zt, uint64_t z, uint64_t zone_rows, const pch_vx_scan_options *o)
{
    const pch_vx_array *mx = zt->children[0], *mn = zt->children[2], *nc = zt->children[4];
    int cmin, cmax;
    if (pch_vx_array_is_valid(nc, z) && pch_vx__load_uint(nc->data, PCH_VX_U64, z) == zone_rows) return 1;
    cmin = cmp_value(mn, z, o);   /* min vs literal */
    cmax = cmp_value(mx, z, o);   /* max vs literal */
    switch (o->filter_op) {
    case PCH_VX_CMP_EQ: return (cmin != 2 && cmin > 0) || (cmax != 2 && cmax < 0);
    case PCH_VX_CMP_NE: return cmin == 0 && cmax == 0;
    case PCH_VX_CMP_LT: return cmin != 2 && cmin >= 0;
    case PCH_VX_CMP_LE: return cmin != 2 && cmin > 0;
    case PCH_VX_CMP_GT: return cmax != 2 && cmax <= 0;
    case PCH_VX_CMP_GE: return cmax != 2 && cmax < 0;
    default: return 0;
    }
}

/* The zones of column fc that cannot hold a row satisfying o's comparison (see
** pch_vx_file_zone_prune); *pruned NULL when fc has no zone map we understand. */
static int zones_pruned(pch_vx_file *f, const colref *fc, const pch_vx_scan_options *o, uint8_t **pruned,
                        uint64_t *n_zones, uint32_t *zone_len, pch_error *err)
{
    const lnode *zn;
    lnode *sn = (lnode *)(uintptr_t)fc->node;   /* the layout's memo of its decoded zone table */
    const pch_vx_array *zt;
    uint64_t *all, zl, total = fc->node->rows;
    int rc;
    *pruned = NULL;
    *n_zones = 0;
    *zone_len = 0;
    if (fc->node->type != L_STATS || !fc->node->zones_ok || fc->n_steps != 0) return PCH_OK;
    zn = &fc->node->children[1];
    zl = fc->node->zone_len;
    if (!sn->zt) {
        if (!(all = pch_malloc(f->ctx, (size_t)(zn->rows ? zn->rows : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        for (uint64_t z = 0; z < zn->rows; z++) all[z] = z;
        rc = read_rows(f, zn, all, zn->rows, &sn->zt, err);
        pch_free(f->ctx, all);
        if (rc) { pch_vx_array_free(sn->zt); sn->zt = NULL; return rc; }
    }
    zt = sn->zt;
    if (!(*pruned = pch_calloc(f->ctx, (size_t)(zn->rows ? zn->rows : 1), 1)))
        return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    for (uint64_t z = 0; z < zn->rows; z++) {
        uint64_t zrows = (z + 1) * zl <= total ? zl : total - z * zl;
        (*pruned)[z] = (uint8_t)zone_prunes(zt, z, zrows, o);
        f->st.zones_total++;
        f->st.zones_pruned += (*pruned)[z];
    }
    *n_zones = zn->rows;
    *zone_len = (uint32_t)zl;
    return PCH_OK;
}

int pch_vx_file_zone_prune(pch_vx_file *f, const pch_vx_scan_options *o, uint8_t **pruned, uint64_t *n_zones,
                           uint32_t *zone_len, pch_error *err)
{
    colref fc;
    *pruned = NULL;
    *n_zones = 0;
    *zone_len = 0;
    if (!o || o->version != PCH_VX_SCAN_OPTIONS_VERSION || !o->filter_column || o->filter_op == PCH_VX_CMP_NONE)
        return pch_error_set(err, PCH_EINVAL, "vortex zone prune: a comparison is needed");
    PCH_TRY(resolve(f, o->filter_column, &fc, err));
    return zones_pruned(f, &fc, o, pruned, n_zones, zone_len, err);
}

/* The segments that reading rows[0..nr) of columns cols[0..ncol) needs, into *sv (none read). */
static int plan_columns(pch_vx_file *f, const char *const *cols, size_t ncol, const uint64_t *rows, uint64_t nr,
                        segvec *sv, pch_error *err)
{
    int rc = PCH_OK;
    for (size_t i = 0; i < ncol && !rc; i++) {
        colref c;
        pch_vx_array *dummy = NULL;
        if ((rc = resolve(f, cols[i], &c, err))) break;
        rc = rr(f, c.node, rows, nr, sv, &dummy, err);
        pch_vx_array_free(dummy);
    }
    return rc;
}

/* The reads a scan of o's columns over its row range would make, planned as
** pch_vx_file_scan plans them (segments not cached whole, coalesced across the file's gap),
** without reading: for a caller that fetches the reads of several scans at once
** (pch_vx_file_prefetch_ranges). No filter, no selection. */
int pch_vx_file_scan_ranges(pch_vx_file *f, const pch_vx_scan_options *o, uint64_t **ranges, size_t *n,
                            pch_error *err)
{
    uint64_t begin, end, nr, *rows = NULL, *out = NULL;
    segvec sv = { NULL, 0, 0 };
    size_t k = 0, need, m = 0;
    int rc = PCH_OK;
    *ranges = NULL;
    *n = 0;
    if (!o || (o->version != 1 && o->version != PCH_VX_SCAN_OPTIONS_VERSION) || !o->columns || o->selection ||
        (o->filter_column && o->filter_op != PCH_VX_CMP_NONE))
        return pch_error_set(err, PCH_EINVAL, "vortex scan ranges: columns and a row range only");
    begin = o->row_begin;
    end = o->row_end ? o->row_end : f->root.rows;
    if (begin > end || end > f->root.rows) return pch_error_set(err, PCH_EINVAL, "vortex scan: rows %" PRIu64 "..%" PRIu64 " outside 0..%" PRIu64, begin, end, f->root.rows);
    if (f->dt->kind != PCH_VX_STRUCT) return pch_error_set(err, PCH_EUNSUPPORTED, "vortex scan: root dtype is not a struct");
    nr = end - begin;
    if (nr > SIZE_MAX / 8 || !(rows = pch_malloc(f->ctx, (size_t)(nr ? nr : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    for (uint64_t r = 0; r < nr; r++) rows[r] = begin + r;
    rc = plan_columns(f, o->columns, o->n_columns, rows, nr, &sv, err);
    pch_free(f->ctx, rows);
    if (!rc && sv.n) {
        uncached(f, &sv, &k, &need, false);
        if (!(out = pch_malloc(f->ctx, (k ? k : 1) * 2 * sizeof *out))) rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        for (size_t i = 0; !rc && i < k; m++) {
            uint64_t start, stop;
            i = coalesced(f, sv.v, k, i, &start, &stop);
            out[2 * m] = start;
            out[2 * m + 1] = stop - start;
        }
    }
    pch_free(f->ctx, sv.v);
    if (rc) { pch_free(f->ctx, out); return rc; }
    *ranges = out;
    *n = m;
    return PCH_OK;
}

int pch_vx_file_scan(pch_vx_file *f, const pch_vx_scan_options *o, pch_vx_array **out,
                     pch_vx_dtype **dt_out, pch_error *err)
{
    static const pch_vx_scan_options defaults = PCH_VX_SCAN_OPTIONS_INIT;
    uint64_t total = f->root.rows, begin, end, nr = 0, *rows = NULL;
    size_t ncol;
    const char *const *cols;
    const char **allcols = NULL;
    pch_vx_dtype *odt = NULL;
    pch_vx_array *res = NULL;
    const uint8_t *tcodes;
    int rc = PCH_OK;
    *out = NULL;
    *dt_out = NULL;
    if (!o) o = &defaults;
    if (o->version != 1 && o->version != PCH_VX_SCAN_OPTIONS_VERSION) return pch_error_set(err, PCH_EINVAL, "vortex scan: options version %u", o->version);
    tcodes = o->version >= 2 ? o->text_codes : NULL;   /* version 1 callers have no such field */
    begin = o->row_begin;
    end = o->row_end ? o->row_end : total;
    if (begin > end || end > total) return pch_error_set(err, PCH_EINVAL, "vortex scan: rows %" PRIu64 "..%" PRIu64 " outside 0..%" PRIu64, begin, end, total);
    if (f->dt->kind != PCH_VX_STRUCT) return pch_error_set(err, PCH_EUNSUPPORTED, "vortex scan: root dtype is not a struct");
    if (o->columns) { cols = o->columns; ncol = o->n_columns; }
    else {
        ncol = f->dt->n_fields;
        if (!(allcols = pch_calloc(f->ctx, ncol ? ncol : 1, sizeof(char *)))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        for (size_t i = 0; i < ncol; i++) allcols[i] = f->dt->names[i];
        cols = allcols;
    }
    /* candidate rows: range ∩ selection */
    {
        uint64_t cap = o->selection ? o->n_selection : end - begin;
        if (cap > SIZE_MAX / 8 || !(rows = pch_malloc(f->ctx, (size_t)(cap ? cap : 1) * 8))) { rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory"); goto done; }
        if (o->selection) {
            for (size_t i = 0; i < o->n_selection; i++) {
                if (i && o->selection[i] <= o->selection[i - 1]) { rc = pch_error_set(err, PCH_EINVAL, "vortex scan: selection not strictly increasing"); goto done; }
                if (o->selection[i] >= begin && o->selection[i] < end) rows[nr++] = o->selection[i];
            }
        } else {
            for (uint64_t r = begin; r < end; r++) rows[nr++] = r;
        }
    }
    /* filter: zone pruning, then exact evaluation */
    if (o->filter_column && o->filter_op != PCH_VX_CMP_NONE) {
        colref fc;
        pch_vx_array *fa = NULL, *fx = NULL;
        pch_vx_dtype *fdt = NULL;
        uint64_t k = 0;
        if ((rc = resolve(f, o->filter_column, &fc, err))) goto done;
        {
            uint8_t *pruned = NULL;
            uint64_t nz = 0;
            uint32_t zl = 0;
            if ((rc = zones_pruned(f, &fc, o, &pruned, &nz, &zl, err))) goto done;
            if (pruned) {
                for (uint64_t i = 0; i < nr; i++) if (!pruned[rows[i] / zl]) rows[k++] = rows[i];
                nr = k;
                k = 0;
                pch_free(f->ctx, pruned);
            }
        }
        if ((rc = read_rows(f, fc.node, rows, nr, &fa, err))) goto done;
        if ((rc = extract(f, fa, &fc, &fx, &fdt, err))) goto done;
        rebind(fx, fdt);
        for (uint64_t i = 0; i < nr; i++) if (op_holds(cmp_value(fx, i, o), o->filter_op)) rows[k++] = rows[i];
        nr = k;
        pch_vx_array_free(fx);
        pch_vx_dtype_free(fdt);
    }
    /* output dtype and columns */
    if (!(odt = pch_vx__dtype_new(f->ctx, PCH_VX_STRUCT, 0)) ||
        !(odt->names = pch_calloc(f->ctx, ncol ? ncol : 1, sizeof(char *))) ||
        !(odt->fields = pch_calloc(f->ctx, ncol ? ncol : 1, sizeof(pch_vx_dtype *))) ||
        !(res = pch_vx__array_new(f->ctx, odt, nr, (uint32_t)ncol))) {
        rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
        goto done;
    }
    {
        /* plan every column first so all their segments are fetched in one coalesced pass */
        segvec sv = { NULL, 0, 0 };
        rc = plan_columns(f, cols, ncol, rows, nr, &sv, err);
        if (!rc) rc = prefetch(f, &sv, err);
        pch_free(f->ctx, sv.v);
        if (rc) goto done;
    }
    for (size_t i = 0; i < ncol; i++) {
        colref c;
        pch_vx_array *a = NULL;
        size_t nl = strlen(cols[i]);
        if ((rc = resolve(f, cols[i], &c, err))) goto done;
        f->text_codes = tcodes && tcodes[i];
        rc = rr(f, c.node, rows, nr, NULL, &a, err);
        f->text_codes = false;
        if (rc || (rc = extract(f, a, &c, &res->children[i], &odt->fields[i], err))) goto done;
        odt->n_fields = (uint32_t)i + 1;
        if (!(odt->names[i] = pch_malloc(f->ctx, nl + 1))) { rc = pch_error_set(err, PCH_ENOMEM, "vortex: out of memory"); goto done; }
        memcpy(odt->names[i], cols[i], nl + 1);
        rebind(res->children[i], odt->fields[i]);
    }
    res->dtype = odt;
    *out = res;
    *dt_out = odt;
    res = NULL;
    odt = NULL;
done:
    if (res) {
        for (uint32_t i = 0; i < res->n_children; i++) if (i >= (odt ? odt->n_fields : 0)) { pch_vx_array_free(res->children[i]); res->children[i] = NULL; }
        pch_vx_array_free(res);
    }
    if (odt && !odt->names) odt->n_fields = 0;
    pch_vx_dtype_free(odt);
    pch_free(f->ctx, rows);
    pch_free(f->ctx, allcols);
    return rc;
}

/* ------------------------------------------------------------------ check / inspect */

static int check_node(pch_vx_file *f, const lnode *n, pch_error *err)
{
    uint64_t *all;
    pch_vx_array *a = NULL;
    int rc;
    if (n->rows > ((uint64_t)1 << 32)) return pch_error_set(err, PCH_ELIMIT, "vortex check: %" PRIu64 " rows", n->rows);
    if (!(all = pch_malloc(f->ctx, (size_t)(n->rows ? n->rows : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex: out of memory");
    for (uint64_t i = 0; i < n->rows; i++) all[i] = i;
    rc = read_rows(f, n, all, n->rows, &a, err);
    pch_free(f->ctx, all);
    pch_vx_array_free(a);
    if (rc) return rc;
    if ((n->type == L_STATS || n->type == L_ZONED) && n->n_children == 2) return check_node(f, &n->children[1], err);
    if (n->type == L_STRUCT)
        for (uint32_t i = 0; i < n->n_children; i++) PCH_TRY(check_node(f, child(n, i), err));
    return PCH_OK;
}

int pch_vx_file_check(pch_vx_file *f, pch_error *err)
{
    for (uint32_t i = 0; f->seg_loaded && i < f->n_segs; i++) PCH_TRY(seg_load(f, i, err));
    PCH_TRY(parse_all(f, &f->root, err));
    return check_node(f, &f->root, err);
}

typedef struct insp {
    pch_vx_file *f;
    FILE *out;
    pch_error *err;
} insp;

static uint64_t node_bytes(const pch_vx_file *f, const lnode *n)
{
    uint64_t s = n->type == L_FLAT ? f->seg_len[n->seg] : 0;
    for (uint32_t i = 0; i < n->n_children; i++) s += node_bytes(f, child(n, i));
    return s;
}

static int inspect_node(insp *s, const lnode *n, const char *name, int depth)
{
    pch_vx_file *f = s->f;
    char *dts = NULL;
    PCH_TRY(pch_vx_dtype_format(&dts, n->dt, s->err));
    fprintf(s->out, "%*s%s%s%s rows=%" PRIu64 " bytes=%" PRIu64 " dtype=%s", depth * 2, "", name ? name : "",
            name ? ": " : "", layout_ids[n->type], n->rows, node_bytes(f, n), dts);
    pch_free(f->ctx, dts);
    if (n->type == L_FLAT) {
        const uint8_t *seg;
        pch_buf b;
        pch_buf_init(&b, f->ctx);
        PCH_TRY(get_segment(f, n->seg, &seg, s->err));
        if (pch_vx__describe_segment(&b, &f->dc, seg, f->seg_len[n->seg], s->err)) { pch_buf_dispose(&b); return s->err ? s->err->code : PCH_ECORRUPT; }
        fprintf(s->out, " segment=%u offset=%" PRIu64 " align=%u encodings=%s\n", n->seg, f->seg_off[n->seg],
                1u << f->seg_align[n->seg], b.data ? (const char *)b.data : "");
        pch_buf_dispose(&b);
        return PCH_OK;
    }
    if (n->type == L_STATS) fprintf(s->out, " zone_len=%u zones=%s", n->zone_len, n->zones_ok ? "max,min,null_count" : "opaque");
    if (n->type == L_CHUNKED) fprintf(s->out, " chunks=%u", n->n_children);
    fputc('\n', s->out);
    for (uint32_t i = 0; i < n->n_children; i++) {
        const char *cn = NULL;
        if (n->type == L_STRUCT) cn = (n->struct_validity && i == 0) ? "(validity)" : n->dt->names[i - (n->struct_validity ? 1 : 0)];
        if (n->type == L_STATS || n->type == L_ZONED) cn = i ? "(zones)" : "(data)";
        if (n->type == L_DICT) cn = i ? "(codes)" : "(values)";
        if (n->type == L_CHUNKED && i == 3 && n->n_children > 6) {
            fprintf(s->out, "%*s... %u more chunks\n", (depth + 1) * 2, "", n->n_children - 5);
            i = n->n_children - 2;
            continue;
        }
        PCH_TRY(inspect_node(s, child(n, i), cn, depth + 1));
    }
    if (n->type == L_STATS && n->zones_ok) {
        uint64_t nz = n->children[1].rows, show = nz < 4 ? nz : 4, all[4] = { 0, 1, 2, 3 };
        pch_vx_array *zt = NULL;
        PCH_TRY(read_rows(f, &n->children[1], all, show, &zt, s->err));
        for (uint64_t z = 0; z < show; z++) {
            pch_vx_text t = { NULL, 0, 0, f->ctx, 0 };
            pch_vx_array_row_json(&t, zt, z);
            fprintf(s->out, "%*szone %" PRIu64 ": %s\n", (depth + 1) * 2, "", z, t.ptr ? t.ptr : "");
            pch_vx_text_dispose(&t);
        }
        pch_vx_array_free(zt);
    }
    return PCH_OK;
}

static void lane_summary(insp *s, const lnode *n, const char *path)
{
    pch_vx_file *f = s->f;
    if (n->type == L_STRUCT && n->dt->n_fields) {
        for (uint32_t i = 0; i < n->dt->n_fields; i++) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s%s%s", path, *path ? "." : "", n->dt->names[i]);
            lane_summary(s, &n->children[i + (n->struct_validity ? 1 : 0)], buf);
        }
        return;
    }
    fprintf(s->out, "  %-32s %12" PRIu64 " bytes  %s\n", *path ? path : "(root)", node_bytes(f, n), layout_ids[n->type]);
}

int pch_vx_file_inspect(pch_vx_file *f, FILE *out, pch_error *err)
{
    insp s = { f, out, err };
    char *dts = NULL;
    PCH_TRY(parse_all(f, &f->root, err));
    PCH_TRY(pch_vx_dtype_format(&dts, f->dt, err));
    fprintf(out, "vortex file: %" PRIu64 " bytes, format version %u, postscript %u bytes, %u segments, %" PRIu64 " rows\n",
            f->size, PCH_VX_VERSION, f->ps_len, f->n_segs, f->root.rows);
    fprintf(out, "dtype: %s\n", dts);
    pch_free(f->ctx, dts);
    fprintf(out, "array specs:");
    for (uint32_t i = 0; i < f->n_specs; i++) fprintf(out, " %s", f->spec_map[i] >= 0 ? pch_vx__enc_ids[f->spec_map[i]] : "(unknown)");
    fprintf(out, "\nlanes:\n");
    lane_summary(&s, &f->root, "");
    fprintf(out, "layout:\n");
    return inspect_node(&s, &f->root, NULL, 1);
}
