/* Vortex file writer (vortex-format.md §1.3, §5, §9, §10, Appendix C "Writer").
**
** Layout tree: root struct (non-nullable) → per lane [vortex.stats →] [vortex.dict →]
** vortex.chunked → vortex.flat per chunk; non-nullable nested structs become nested struct
** layouts when split_structs (lane groups), anything else stays inside flat arrays. Chunk
** boundaries are exactly the caller's pch_vx_writer_write calls (RFC-0006 §7).
** Invariants: segments are appended in id order, each aligned to its max buffer alignment
** (≥ 8), so the segment map is sorted; footer regions are 8-aligned; only ids used are
** listed; stats are written only when exact (min/max of strings truncated as §10 says).
**
** Output: in memory (pch_vx_writer_open: the whole file in w->file until publish) or streamed
** (pch_vx_writer_open_path: w->file is a write-behind buffer flushed to a staging file
** "<dir>/.<name>.tmp-<pid>-<rand>" once it holds VX_FLUSH_BYTES, so memory stays bounded by
** one chunk, the buffer, the segment map, dictionaries and zone tables; finish fsyncs the
** staging file, renames it over the target and fsyncs the directory, STYLE.md §8). Offsets
** and alignment padding are computed on the absolute file position, so both outputs are
** byte-identical. A streamed writer freed before finish removes its staging file. */
#include <pthread.h>
#include <stddef.h>

#include "vortex/vortex_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define VX_FLUSH_BYTES ((size_t)1 << 20)

enum { L_FLAT, L_STRUCT, L_CHUNKED, L_STATS, L_DICT, L_COUNT };
static const char *const layout_ids[L_COUNT] = { "vortex.flat", "vortex.struct", "vortex.chunked",
                                                 "vortex.stats", "vortex.dict" };
#define STR_STAT_MAX 64

typedef struct chunk_ref { uint64_t rows; uint32_t seg; } chunk_ref;

typedef struct lane {
    char *path;
    const pch_vx_dtype *dt;
    uint32_t *steps;          /* field indices from the root */
    uint32_t n_steps;
    chunk_ref *chunks;
    size_t n_chunks, cap_chunks;
    uint64_t rows;
    /* zone maps */
    int zoned;
    pch_vx_dtype *zone_dt;    /* struct{max,max_is_truncated,min,min_is_truncated,null_count} */
    pch_vx_builder *zones;
    uint64_t zrows, znulls;
    int zhave;
    int64_t zi_min, zi_max;
    uint64_t zu_min, zu_max;
    double zf_min, zf_max;
    pch_buf zs_min, zs_max;
    int zs_max_trunc;
    /* dict layout */
    int dict;                 /* 1 active */
    int dict_decided;
    uint64_t *dh_hash; uint32_t *dh_code; uint64_t dh_cap;
    pch_buf dvals;            /* distinct bytes */
    pch_buf doffs;            /* int64 end offsets */
    uint64_t dn;
    uint32_t dict_values_seg;
    chunk_ref *codes;
    size_t n_codes, cap_codes;
    int codes_nullable;
    uint32_t fsst_losses;     /* the compressor's FSST memo (pch_vx_encoder.fsst_losses) */
    /* report */
    pch_vx_enc_count *encs;   /* names owned */
    size_t n_encs;
    char *enc_text;
    uint64_t logical, stored;
    double seconds;
} lane;

struct pch_vx_writer {
    pch_ctx *ctx;
    pch_vx_write_options opts;
    pch_vx_dtype *dt;
    lane *lanes;
    size_t n_lanes;
    int root_struct;          /* root split into a struct layout */
    pch_buf file;             /* whole file (memory) or write-behind buffer (streamed) */
    uint64_t flushed;         /* streamed: bytes already written to fd before file.data */
    int fd;                   /* streamed: staging file descriptor, else -1 */
    char *path, *tmp;         /* streamed: target and staging paths */
    int published;
    uint64_t *seg_off;
    uint32_t *seg_len;
    uint8_t *seg_align;
    size_t n_segs, cap_segs;
    uint16_t enc_map[PCH_VX_E_COUNT];
    uint8_t enc_used[PCH_VX_E_COUNT];
    uint8_t enc_order[PCH_VX_E_COUNT];
    uint32_t n_enc_used;
    uint64_t rows;
    int finished;
    pch_arena arena;
    uint32_t *fsst_pairs[65];     /* per encoding thread (slot 0 the caller), kept across chunks */
};

#define OOM() pch_error_set(err, PCH_ENOMEM, "vortex writer: out of memory")

static int zone_supported(const pch_vx_dtype *d)
{
    return (d->kind == PCH_VX_PRIMITIVE && d->ptype != PCH_VX_F16) || d->kind == PCH_VX_UTF8 ||
           d->kind == PCH_VX_BINARY;
}

/* ------------------------------------------------------------------ lanes */

static int add_lane(pch_vx_writer *w, const char *prefix, const char *name, const pch_vx_dtype *d,
                    const uint32_t *steps, uint32_t n_steps, pch_error *err)
{
    lane *l, *nl = pch_realloc(w->ctx, w->lanes, (w->n_lanes + 1) * sizeof(lane));
    size_t pl = prefix ? strlen(prefix) : 0, nlen = strlen(name);
    if (!nl) return OOM();
    w->lanes = nl;
    l = &w->lanes[w->n_lanes++];
    memset(l, 0, sizeof(*l));
    pch_buf_init(&l->zs_min, w->ctx);
    pch_buf_init(&l->zs_max, w->ctx);
    pch_buf_init(&l->dvals, w->ctx);
    pch_buf_init(&l->doffs, w->ctx);
    l->dt = d;
    if (!(l->path = pch_malloc(w->ctx, pl + nlen + 2))) return OOM();
    if (pl) { memcpy(l->path, prefix, pl); l->path[pl] = '.'; memcpy(l->path + pl + 1, name, nlen + 1); }
    else memcpy(l->path, name, nlen + 1);
    if (!(l->steps = pch_malloc(w->ctx, (n_steps ? n_steps : 1) * sizeof(uint32_t)))) return OOM();
    if (n_steps) memcpy(l->steps, steps, n_steps * sizeof(uint32_t));
    l->n_steps = n_steps;
    if (w->opts.zone_len && zone_supported(d)) {
        char *txt = NULL, *sch;
        pch_buf b;
        int rc;
        l->zoned = 1;
        PCH_TRY(pch_vx_dtype_format(&txt, d, err));
        pch_buf_init(&b, w->ctx);
        /* field order fixed by the Stat enum: max(3), min(4), null_count(6) — §10 */
        pch_buf_printf(&b, "max:%s%s,max_is_truncated:bool,min:%s%s,min_is_truncated:bool,null_count:u64?",
                       txt, d->nullable ? "" : "?", txt, d->nullable ? "" : "?");
        pch_free(w->ctx, txt);
        if (b.oom) { pch_buf_dispose(&b); return OOM(); }
        sch = (char *)b.data;
        rc = pch_vx_dtype_parse(&l->zone_dt, w->ctx, sch, err);
        pch_buf_dispose(&b);
        if (rc) return rc;
        PCH_TRY(pch_vx_builder_new(&l->zones, w->ctx, l->zone_dt, err));
    }
    if (w->opts.dict_layout && (d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY)) l->dict = 1;
    return PCH_OK;
}

static int collect_lanes(pch_vx_writer *w, const pch_vx_dtype *d, const char *prefix,
                         uint32_t *steps, uint32_t depth, pch_error *err)
{
    for (uint32_t i = 0; i < d->n_fields; i++) {
        const pch_vx_dtype *f = d->fields[i];
        steps[depth] = i;
        if (f->kind == PCH_VX_STRUCT && !f->nullable && w->opts.split_structs && depth < 30) {
            char *p;
            size_t pl = prefix ? strlen(prefix) : 0, nl = strlen(d->names[i]);
            if (!(p = pch_malloc(w->ctx, pl + nl + 2))) return OOM();
            if (pl) { memcpy(p, prefix, pl); p[pl] = '.'; memcpy(p + pl + 1, d->names[i], nl + 1); }
            else memcpy(p, d->names[i], nl + 1);
            int rc = collect_lanes(w, f, p, steps, depth + 1, err);
            pch_free(w->ctx, p);
            if (rc) return rc;
        } else {
            PCH_TRY(add_lane(w, prefix, d->names[i], f, steps, depth + 1, err));
        }
    }
    return PCH_OK;
}

static int open_staging(pch_vx_writer *w, const char *path, pch_error *err);

static int writer_open(pch_vx_writer **out, pch_ctx *ctx, const pch_vx_dtype *dt, const char *path,
                       const pch_vx_write_options *opts, pch_error *err)
{
    static const pch_vx_write_options defaults = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_writer *w;
    uint32_t steps[32];
    int rc;
    *out = NULL;
    if (opts && (opts->version < 1 || opts->version > PCH_VX_WRITE_OPTIONS_VERSION))
        return pch_error_set(err, PCH_EINVAL, "vortex writer: options version %u", opts->version);
    if (!(w = pch_calloc(ctx, 1, sizeof(*w)))) return OOM();
    w->ctx = ctx;
    w->fd = -1;
    w->opts = defaults;
    if (opts && opts->version == 1) memcpy(&w->opts, opts, offsetof(pch_vx_write_options, threads));
    else if (opts && opts->version == 2) memcpy(&w->opts, opts, offsetof(pch_vx_write_options, frame_bytes));
    else if (opts && opts->version == 3) memcpy(&w->opts, opts, offsetof(pch_vx_write_options, fsst_memo));
    else if (opts && opts->version == 4) memcpy(&w->opts, opts, offsetof(pch_vx_write_options, zstd_dict_bytes));
    else if (opts && opts->version == 5) memcpy(&w->opts, opts, offsetof(pch_vx_write_options, frame_rows));
    else if (opts && opts->version == 6) memcpy(&w->opts, opts, offsetof(pch_vx_write_options, plain_offsets));
    else if (opts && opts->version == 7) memcpy(&w->opts, opts, offsetof(pch_vx_write_options, frame_row_ratio));
    else if (opts) w->opts = *opts;
    w->opts.version = PCH_VX_WRITE_OPTIONS_VERSION;
    if (w->opts.threads == 0) w->opts.threads = 1;
    if (w->opts.threads > 64) w->opts.threads = 64;
    pch_buf_init(&w->file, ctx);
    pch_arena_init(&w->arena, ctx, 1 << 20);
    if ((rc = pch_vx_dtype_clone(&w->dt, dt, err))) goto fail;
    if (path && ((rc = pch_check_replaceable(path, err)) || (rc = open_staging(w, path, err)))) goto fail;
    if (pch_buf_append(&w->file, PCH_VX_MAGIC, 4)) { rc = OOM(); goto fail; }
    w->root_struct = dt->kind == PCH_VX_STRUCT && !dt->nullable;
    if (w->root_struct) rc = collect_lanes(w, w->dt, NULL, steps, 0, err);
    else rc = add_lane(w, NULL, "", w->dt, steps, 0, err);
    if (rc) goto fail;
    *out = w;
    return PCH_OK;
fail:
    pch_vx_writer_free(w);
    return rc;
}

int pch_vx_writer_open(pch_vx_writer **out, pch_ctx *ctx, const pch_vx_dtype *dt,
                       const pch_vx_write_options *opts, pch_error *err)
{
    return writer_open(out, ctx, dt, NULL, opts, err);
}

int pch_vx_writer_open_path(pch_vx_writer **out, pch_ctx *ctx, const pch_vx_dtype *dt,
                            const char *path, const pch_vx_write_options *opts, pch_error *err)
{
    *out = NULL;
    if (!path || !*path) return pch_error_set(err, PCH_EINVAL, "vortex writer: empty path");
    return writer_open(out, ctx, dt, path, opts, err);
}

static void lane_dispose(pch_ctx *ctx, lane *l)
{
    pch_free(ctx, l->path);
    pch_free(ctx, l->steps);
    pch_free(ctx, l->chunks);
    pch_vx_builder_free(l->zones);
    pch_vx_dtype_free(l->zone_dt);
    pch_buf_dispose(&l->zs_min);
    pch_buf_dispose(&l->zs_max);
    pch_free(ctx, l->dh_hash);
    pch_free(ctx, l->dh_code);
    pch_buf_dispose(&l->dvals);
    pch_buf_dispose(&l->doffs);
    pch_free(ctx, l->codes);
    for (size_t i = 0; i < l->n_encs; i++) pch_free(ctx, (void *)(uintptr_t)l->encs[i].name);
    pch_free(ctx, l->encs);
    pch_free(ctx, l->enc_text);
}

void pch_vx_writer_free(pch_vx_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_lanes; i++) lane_dispose(w->ctx, &w->lanes[i]);
    pch_free(w->ctx, w->lanes);
    pch_vx_dtype_free(w->dt);
    if (w->fd >= 0) close(w->fd);
    if (w->tmp && !w->published) unlink(w->tmp);   /* nothing partial is published */
    pch_free(w->ctx, w->tmp);
    pch_free(w->ctx, w->path);
    pch_buf_dispose(&w->file);
    pch_free(w->ctx, w->seg_off);
    pch_free(w->ctx, w->seg_len);
    pch_free(w->ctx, w->seg_align);
    pch_arena_dispose(&w->arena);
    for (size_t t = 0; t < sizeof w->fsst_pairs / sizeof *w->fsst_pairs; t++) pch_free(w->ctx, w->fsst_pairs[t]);
    pch_free(w->ctx, w);
}

/* ------------------------------------------------------------------ output */

/* Staging file beside the target (same directory, so the final rename is atomic). */
static int open_staging(pch_vx_writer *w, const char *path, pch_error *err)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0, bl = strlen(base), pl = strlen(path), n;
    uint32_t r;
    if (!*base) return pch_error_set(err, PCH_EINVAL, "vortex writer: bad path %s", path);
    PCH_TRY(pch_random_bytes(&r, sizeof r, err));
    if (!(w->path = pch_malloc(w->ctx, pl + 1))) return OOM();
    memcpy(w->path, path, pl + 1);
    n = dl + bl + 64;
    if (!(w->tmp = pch_malloc(w->ctx, n))) return OOM();
    memcpy(w->tmp, path, dl);
    snprintf(w->tmp + dl, n - dl, ".%s.tmp-%ld-%08x", base, (long)getpid(), r);
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int e = errno;
        pch_free(w->ctx, w->tmp);
        w->tmp = NULL;
        return pch_error_set_sys(err, PCH_EIO, e, "vortex writer: create staging file for %s", path);
    }
    return PCH_OK;
}

static uint64_t out_pos(const pch_vx_writer *w) { return w->flushed + w->file.len; }

static int out_flush(pch_vx_writer *w, pch_error *err)
{
    if (w->fd < 0) return PCH_OK;
    if (pch_write_all(w->fd, w->file.data, w->file.len) != 0)
        return pch_error_set_sys(err, PCH_EIO, errno, "vortex writer: write %s", w->tmp);
    w->flushed += w->file.len;
    pch_buf_clear(&w->file);
    return PCH_OK;
}

/* Pad the absolute position to `align` (a power of two) with zeros, then append. */
static int out_write(pch_vx_writer *w, size_t align, const void *p, size_t n, pch_error *err)
{
    static const uint8_t zeros[64];
    size_t pad = (size_t)((align - (out_pos(w) & (align - 1))) & (align - 1));
    while (pad) {
        size_t k = pad < sizeof zeros ? pad : sizeof zeros;
        if (pch_buf_append(&w->file, zeros, k)) return OOM();
        pad -= k;
    }
    if (n && pch_buf_append(&w->file, p, n)) return OOM();
    if (w->fd >= 0 && w->file.len >= VX_FLUSH_BYTES) return out_flush(w, err);
    return PCH_OK;
}

/* Streamed: flush, fsync, rename over the target, fsync the directory. */
static int out_publish(pch_vx_writer *w, pch_error *err)
{
    char *dir;
    const char *slash;
    int rc;
    PCH_TRY(out_flush(w, err));
    if (pch_fault("fsync") || fsync(w->fd) != 0) return pch_error_set_sys(err, PCH_EIO, errno, "vortex writer: fsync %s", w->tmp);
    rc = close(w->fd);
    w->fd = -1;
    if (rc != 0) return pch_error_set_sys(err, PCH_EIO, errno, "vortex writer: close %s", w->tmp);
    if (pch_fault("rename") || rename(w->tmp, w->path) != 0) return pch_error_set_sys(err, PCH_EIO, errno, "vortex writer: rename to %s", w->path);
    w->published = 1;
    slash = strrchr(w->path, '/');
    if (!slash) return pch_fsync_dir(".", err);
    if (slash == w->path) return pch_fsync_dir("/", err);
    if (!(dir = pch_malloc(w->ctx, (size_t)(slash - w->path) + 1))) return OOM();
    memcpy(dir, w->path, (size_t)(slash - w->path));
    dir[slash - w->path] = 0;
    rc = pch_fsync_dir(dir, err);
    pch_free(w->ctx, dir);
    return rc;
}

/* ------------------------------------------------------------------ segments */

static int write_segment(pch_vx_writer *w, const pch_buf *seg, uint8_t align_exp, uint32_t *id,
                         pch_error *err)
{
    if (w->n_segs == w->cap_segs) {
        size_t nc = w->cap_segs ? w->cap_segs * 2 : 64;
        uint64_t *o = pch_realloc(w->ctx, w->seg_off, nc * 8);
        if (!o) return OOM();
        w->seg_off = o;
        uint32_t *l = pch_realloc(w->ctx, w->seg_len, nc * 4);
        if (!l) return OOM();
        w->seg_len = l;
        uint8_t *a = pch_realloc(w->ctx, w->seg_align, nc);
        if (!a) return OOM();
        w->seg_align = a;
        w->cap_segs = nc;
    }
    if (seg->len > 0xffffffffu) return pch_error_set(err, PCH_ELIMIT, "vortex writer: segment above 4 GiB");
    if (w->n_segs >= 0xffffffffu) return pch_error_set(err, PCH_ELIMIT, "vortex writer: too many segments");
    PCH_TRY(out_write(w, (size_t)1 << align_exp, seg->data, seg->len, err));
    w->seg_off[w->n_segs] = out_pos(w) - seg->len;
    w->seg_len[w->n_segs] = (uint32_t)seg->len;
    w->seg_align[w->n_segs] = align_exp;
    *id = (uint32_t)w->n_segs++;
    return PCH_OK;
}

static void assign_encs(pch_vx_writer *w, const pch_vx_enode *n)
{
    if (!w->enc_used[n->enc]) {
        w->enc_used[n->enc] = 1;
        w->enc_map[n->enc] = (uint16_t)w->n_enc_used;
        w->enc_order[w->n_enc_used++] = n->enc;
    }
    for (uint32_t i = 0; i < n->n_children; i++) assign_encs(w, n->children[i]);
}

static int note_encoding(pch_vx_writer *w, lane *l, const pch_vx_enode *n)
{
    pch_buf b;
    size_t dummy;
    pch_buf_init(&b, w->ctx);
    if (pch_vx__describe(&b, n) || pch_buf_putc(&b, 0)) { pch_buf_dispose(&b); return PCH_ENOMEM; }
    for (size_t i = 0; i < l->n_encs; i++)
        if (strcmp(l->encs[i].name, (const char *)b.data) == 0) { l->encs[i].n++; pch_buf_dispose(&b); return PCH_OK; }
    pch_vx_enc_count *ne = pch_realloc(w->ctx, l->encs, (l->n_encs + 1) * sizeof(*ne));
    if (!ne) { pch_buf_dispose(&b); return PCH_ENOMEM; }
    l->encs = ne;
    l->encs[l->n_encs].name = (const char *)pch_buf_detach(&b, &dummy);
    l->encs[l->n_encs].n = 1;
    l->n_encs++;
    return PCH_OK;
}

/* Serialize an encoded tree as one flat segment (encoding ids assigned in first-use order,
** so callers must emit in file order). */
static int emit_encoded(pch_vx_writer *w, lane *l, const pch_vx_enode *root, uint32_t *seg_id, pch_error *err)
{
    pch_buf seg;
    uint8_t ae;
    int rc;
    pch_buf_init(&seg, w->ctx);
    assign_encs(w, root);
    if (l && note_encoding(w, l, root)) rc = OOM();
    else if (!(rc = pch_vx__serialize(&seg, root, w->enc_map, w->enc_used, &ae, err)))
        rc = write_segment(w, &seg, ae, seg_id, err);
    if (l) l->stored += seg.len;
    pch_buf_dispose(&seg);
    return rc;
}

/* Encode an array into one flat segment. */
static int write_array(pch_vx_writer *w, lane *l, const pch_vx_array *a, int compress, uint32_t *seg_id,
                       pch_error *err)
{
    pch_vx_encoder e;
    pch_vx_enode *root;
    int rc;
    memset(&e, 0, sizeof e);
    e.ctx = w->ctx;
    e.arena = &w->arena;
    e.compress = compress;
    e.sample_rows = w->opts.sample_rows;
    e.frame_bytes = w->opts.frame_bytes;
    e.frame_rows = w->opts.frame_rows;
    e.plain_offsets = w->opts.plain_offsets;
    e.dict_bytes = w->opts.zstd_dict_bytes;
    e.cut_arr = a;
    if (!(rc = pch_vx__encode(&e, a, &root, err))) rc = emit_encoded(w, l, root, seg_id, err);
    pch_arena_reset(&w->arena);
    return rc;
}

/* ------------------------------------------------------------------ zone maps (§10) */

static size_t utf8_floor(const uint8_t *p, size_t n)
{
    while (n > 0 && (p[n] & 0xc0) == 0x80) n--;
    return n;
}

static int zone_flush(pch_vx_writer *w, lane *l, pch_error *err)
{
    pch_vx_builder *b = l->zones;
    pch_vx_builder *mx = pch_vx_builder_child(b, 0), *mxt = pch_vx_builder_child(b, 1);
    pch_vx_builder *mn = pch_vx_builder_child(b, 2), *mnt = pch_vx_builder_child(b, 3);
    pch_vx_builder *nc = pch_vx_builder_child(b, 4);
    const pch_vx_dtype *d = l->dt;
    int trunc_min = 0;
    (void)w;
    if (!l->zrows) return PCH_OK;
    if (!l->zhave) {
        PCH_TRY(pch_vx_builder_append_null(mx, err));
        PCH_TRY(pch_vx_builder_append_null(mn, err));
    } else if (d->kind == PCH_VX_PRIMITIVE) {
        if (d->ptype >= PCH_VX_F16) {
            PCH_TRY(pch_vx_builder_append_float(mx, l->zf_max, err));
            PCH_TRY(pch_vx_builder_append_float(mn, l->zf_min, err));
        } else if (pch_vx__is_signed(d->ptype)) {
            PCH_TRY(pch_vx_builder_append_int(mx, l->zi_max, err));
            PCH_TRY(pch_vx_builder_append_int(mn, l->zi_min, err));
        } else {
            PCH_TRY(pch_vx_builder_append_uint(mx, l->zu_max, err));
            PCH_TRY(pch_vx_builder_append_uint(mn, l->zu_min, err));
        }
    } else {
        size_t ml = l->zs_min.len;
        if (l->zs_max_trunc) PCH_TRY(pch_vx_builder_append_null(mx, err));  /* unknown max */
        else PCH_TRY(pch_vx_builder_append_bytes(mx, l->zs_max.data ? l->zs_max.data : (const uint8_t *)"", l->zs_max.len, err));
        if (ml > STR_STAT_MAX) {
            ml = d->kind == PCH_VX_UTF8 ? utf8_floor(l->zs_min.data, STR_STAT_MAX) : STR_STAT_MAX;
            trunc_min = 1;
        }
        PCH_TRY(pch_vx_builder_append_bytes(mn, l->zs_min.data ? l->zs_min.data : (const uint8_t *)"", ml, err));
    }
    PCH_TRY(pch_vx_builder_append_bool(mxt, 0, err));
    PCH_TRY(pch_vx_builder_append_bool(mnt, trunc_min, err));
    PCH_TRY(pch_vx_builder_append_uint(nc, l->znulls, err));
    PCH_TRY(pch_vx_builder_append_valid(b, err));
    l->zrows = l->znulls = 0;
    l->zhave = 0;
    l->zs_max_trunc = 0;
    pch_buf_clear(&l->zs_min);
    pch_buf_clear(&l->zs_max);
    return PCH_OK;
}

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an < bn ? -1 : an > bn);
}

static int zone_add(pch_vx_writer *w, lane *l, const pch_vx_array *a, pch_error *err)
{
    const pch_vx_dtype *d = l->dt;
    for (uint64_t i = 0; i < a->len; i++) {
        if (!pch_vx_array_is_valid(a, i)) {
            l->znulls++;
        } else if (d->kind == PCH_VX_PRIMITIVE) {
            if (d->ptype >= PCH_VX_F16) {
                double x = pch_vx__load_float(a->data, d->ptype, i);
                if (x == x) {
                    if (!l->zhave || x < l->zf_min) l->zf_min = x;
                    if (!l->zhave || x > l->zf_max) l->zf_max = x;
                    l->zhave = 1;
                }
            } else if (pch_vx__is_signed(d->ptype)) {
                int64_t x = pch_vx__load_int(a->data, d->ptype, i);
                if (!l->zhave || x < l->zi_min) l->zi_min = x;
                if (!l->zhave || x > l->zi_max) l->zi_max = x;
                l->zhave = 1;
            } else {
                uint64_t x = pch_vx__load_uint(a->data, d->ptype, i);
                if (!l->zhave || x < l->zu_min) l->zu_min = x;
                if (!l->zhave || x > l->zu_max) l->zu_max = x;
                l->zhave = 1;
            }
        } else {
            const uint8_t *p = a->data + a->offsets[i];
            size_t n = (size_t)(a->offsets[i + 1] - a->offsets[i]);
            if (!l->zhave || bytes_cmp(p, n, l->zs_min.data, l->zs_min.len) < 0) {
                pch_buf_clear(&l->zs_min);
                if (pch_buf_append(&l->zs_min, p, n)) return OOM();
            }
            if (!l->zhave || (!l->zs_max_trunc && bytes_cmp(p, n, l->zs_max.data, l->zs_max.len) > 0)) {
                pch_buf_clear(&l->zs_max);
                if (n > STR_STAT_MAX) { l->zs_max_trunc = 1; if (pch_buf_append(&l->zs_max, p, STR_STAT_MAX)) return OOM(); }
                else if (pch_buf_append(&l->zs_max, p, n)) return OOM();
            } else if (l->zs_max_trunc && bytes_cmp(p, n, l->zs_max.data, l->zs_max.len) > 0 &&
                       memcmp(p, l->zs_max.data, n < l->zs_max.len ? n : l->zs_max.len) != 0) {
                /* a larger value beyond the truncated prefix: remember it (still unknown) */
                pch_buf_clear(&l->zs_max);
                if (pch_buf_append(&l->zs_max, p, n > STR_STAT_MAX ? STR_STAT_MAX : n)) return OOM();
                l->zs_max_trunc = n > STR_STAT_MAX;
            }
            l->zhave = 1;
        }
        if (++l->zrows == w->opts.zone_len) PCH_TRY(zone_flush(w, l, err));
    }
    return PCH_OK;
}

/* ------------------------------------------------------------------ dict layout */

static int dict_grow(pch_vx_writer *w, lane *l)
{
    uint64_t nc = l->dh_cap ? l->dh_cap * 2 : 1024;
    uint64_t *h = pch_calloc(w->ctx, (size_t)nc, 8);
    uint32_t *c = pch_malloc(w->ctx, (size_t)nc * 4);
    const int64_t *offs = (const int64_t *)(const void *)l->doffs.data;
    if (!h || !c) { pch_free(w->ctx, h); pch_free(w->ctx, c); return PCH_ENOMEM; }
    for (uint64_t k = 0; k < l->dn; k++) {
        int64_t s = k ? offs[k - 1] : 0, e = offs[k];
        uint64_t hv = 1469598103934665603ull;
        for (int64_t j = s; j < e; j++) { hv ^= l->dvals.data[j]; hv *= 1099511628211ull; }
        hv |= 1;
        uint64_t slot = hv & (nc - 1);
        while (h[slot]) slot = (slot + 1) & (nc - 1);
        h[slot] = hv;
        c[slot] = (uint32_t)k;
    }
    pch_free(w->ctx, l->dh_hash);
    pch_free(w->ctx, l->dh_code);
    l->dh_hash = h;
    l->dh_code = c;
    l->dh_cap = nc;
    return PCH_OK;
}

static int dict_code(pch_vx_writer *w, lane *l, const uint8_t *p, size_t n, uint32_t *code)
{
    uint64_t hv = 1469598103934665603ull, slot;
    const int64_t *offs;
    for (size_t j = 0; j < n; j++) { hv ^= p[j]; hv *= 1099511628211ull; }
    hv |= 1;
    if ((l->dn + 1) * 2 > l->dh_cap && dict_grow(w, l)) return PCH_ENOMEM;
    offs = (const int64_t *)(const void *)l->doffs.data;
    slot = hv & (l->dh_cap - 1);
    while (l->dh_hash[slot]) {
        if (l->dh_hash[slot] == hv) {
            uint32_t k = l->dh_code[slot];
            int64_t s = k ? offs[k - 1] : 0, e = offs[k];
            if ((size_t)(e - s) == n && (n == 0 || memcmp(l->dvals.data + s, p, n) == 0)) { *code = k; return PCH_OK; }
        }
        slot = (slot + 1) & (l->dh_cap - 1);
    }
    if (l->dn >= 0xfffffffeu) return PCH_ELIMIT;
    if (pch_buf_append(&l->dvals, p, n)) return PCH_ENOMEM;
    int64_t end = (int64_t)l->dvals.len;
    if (pch_buf_append(&l->doffs, &end, 8)) return PCH_ENOMEM;
    l->dh_hash[slot] = hv;
    l->dh_code[slot] = (uint32_t)l->dn;
    *code = (uint32_t)l->dn++;
    return PCH_OK;
}

static int push_ref(pch_vx_writer *w, chunk_ref **v, size_t *n, size_t *cap, uint64_t rows, uint32_t seg)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        chunk_ref *nv = pch_realloc(w->ctx, *v, nc * sizeof(chunk_ref));
        if (!nv) return PCH_ENOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[*n].rows = rows;
    (*v)[*n].seg = seg;
    (*n)++;
    return PCH_OK;
}

/* ------------------------------------------------------------------ write */

/* One lane of one chunk: everything that depends only on the lane (zone statistics, the
** dictionary decision and codes, the sampling compressor) runs in phase 1, possibly on
** another thread with its own arena; phase 2 (serialize, segment, encoding ids) runs in lane
** order on the calling thread, so the file is the same for any number of threads. */
typedef struct lane_job {
    pch_vx_writer *w;
    lane *l;
    const pch_vx_array *a;
    const uint64_t *row_weights;   /* the chunk's (pch_vx_writer_write_rows), or NULL */
    pch_vx_array codes;       /* dict lanes: u32 codes of this chunk */
    pch_vx_dtype codes_dt;
    pch_vx_enode *root;
    pch_arena arena;
    double seconds;
    int rc;
    pch_error err;
} lane_job;

static void lane_prepare(lane_job *j, uint32_t **fsst_pairs)
{
    pch_vx_writer *w = j->w;
    lane *l = j->l;
    const pch_vx_array *a = j->a;
    pch_error *err = &j->err;
    pch_vx_encoder e;
    double t0 = pch_time_mono();
    int rc = PCH_OK;
    l->logical += pch_vx__array_nbytes(a);
    if (l->zoned && (rc = zone_add(w, l, a, err))) goto done;
    if (l->dict && !l->dict_decided) {
        /* decide on the first chunk: few distinct values relative to rows */
        l->dict_decided = 1;
        for (uint64_t i = 0; i < a->len && l->dn * 4 <= a->len + 4; i++) {
            uint32_t c;
            if (pch_vx_array_is_valid(a, i) &&
                dict_code(w, l, a->data + a->offsets[i], (size_t)(a->offsets[i + 1] - a->offsets[i]), &c)) { rc = OOM(); goto done; }
        }
        /* no distinct value yet (all null): a dict layout would have empty values
        ** under null codes, which readers refuse */
        if (l->dn == 0 || l->dn * 4 > a->len + 4 || a->len < 64) {
            l->dict = 0;
            pch_free(w->ctx, l->dh_hash); l->dh_hash = NULL;
            pch_free(w->ctx, l->dh_code); l->dh_code = NULL;
            l->dh_cap = 0; l->dn = 0;
            pch_buf_clear(&l->dvals);
            pch_buf_clear(&l->doffs);
        }
    }
    if (l->dict) {
        memset(&j->codes_dt, 0, sizeof j->codes_dt);
        j->codes_dt.kind = PCH_VX_PRIMITIVE;
        j->codes_dt.ptype = PCH_VX_U32;
        j->codes_dt.nullable = l->dt->nullable;
        j->codes.ctx = w->ctx;
        j->codes.dtype = &j->codes_dt;
        j->codes.len = a->len;
        j->codes.validity = a->validity;
        if (!(j->codes.data = pch_malloc(w->ctx, (size_t)(a->len ? a->len : 1) * 4))) { rc = OOM(); goto done; }
        j->codes.data_len = (size_t)a->len * 4;
        for (uint64_t i = 0; i < a->len; i++) {
            uint32_t c = 0;
            if (pch_vx_array_is_valid(a, i) &&
                (rc = dict_code(w, l, a->data + a->offsets[i], (size_t)(a->offsets[i + 1] - a->offsets[i]), &c))) {
                rc = rc == PCH_ELIMIT ? pch_error_set(err, PCH_ELIMIT, "vortex writer: dictionary too large") : OOM();
                goto done;
            }
            pch_store_le32(j->codes.data + 4 * i, c);
        }
        l->codes_nullable = l->dt->nullable;
    }
    memset(&e, 0, sizeof e);
    e.ctx = w->ctx;
    e.arena = &j->arena;
    e.compress = w->opts.compress;
    e.sample_rows = w->opts.sample_rows;
    e.frame_bytes = w->opts.frame_bytes;
    e.frame_rows = w->opts.frame_rows;
    e.plain_offsets = w->opts.plain_offsets;
    e.dict_bytes = w->opts.zstd_dict_bytes;
    e.row_weights = w->opts.frame_row_ratio ? j->row_weights : NULL;
    e.row_ratio = w->opts.frame_row_ratio;
    e.cut_arr = l->dict ? &j->codes : a;   /* the chunk's rows are whole trajectories */
    e.fsst_losses = &l->fsst_losses;       /* lanes of a chunk run in parallel, chunks in order */
    e.chunk = l->dict ? l->n_codes : l->n_chunks;
    e.fsst_pairs = fsst_pairs;
    if (w->opts.fsst_memo && w->opts.fsst_memo_len >= 2 * (size_t)w->n_lanes) {
        /* the caller's memo: losses and the lane's chunk count across the build's files */
        uint32_t *m = w->opts.fsst_memo + 2 * (size_t)(l - w->lanes);
        e.fsst_losses = &m[0];
        e.chunk = m[1]++;
    }
    rc = pch_vx__encode(&e, l->dict ? &j->codes : a, &j->root, err);
done:
    j->seconds = pch_time_mono() - t0;
    j->rc = rc;
}

typedef struct job_pool {
    lane_job *jobs;
    size_t n;
    size_t next;              /* next job to take (under mu) */
    pthread_mutex_t mu;
} job_pool;

typedef struct pool_slot {
    job_pool *p;
    uint32_t **fsst_pairs;    /* this thread's scratch in the writer */
} pool_slot;

static void *pool_worker(void *arg)
{
    pool_slot *s = arg;
    job_pool *p = s->p;
    for (;;) {
        size_t i;
        pthread_mutex_lock(&p->mu);
        i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) return NULL;
        lane_prepare(&p->jobs[i], s->fsst_pairs);
    }
}

int pch_vx_writer_write(pch_vx_writer *w, const pch_vx_array *chunk, pch_error *err)
{
    return pch_vx_writer_write_rows(w, chunk, NULL, err);
}

int pch_vx_writer_write_rows(pch_vx_writer *w, const pch_vx_array *chunk, const uint64_t *row_weights, pch_error *err)
{
    lane_job *jobs;
    int rc = PCH_OK;
    if (w->finished) return pch_error_set(err, PCH_EINVAL, "vortex writer: already finished");
    if (!pch_vx_dtype_equal(chunk->dtype, w->dt))
        return pch_error_set(err, PCH_EINVAL, "vortex writer: chunk dtype differs from the file dtype");
    if (chunk->len == 0) return PCH_OK;
    PCH_TRY(pch_vx__array_validate(chunk, w->dt, err));
    if (!(jobs = pch_calloc(w->ctx, w->n_lanes ? w->n_lanes : 1, sizeof *jobs))) return OOM();
    for (size_t li = 0; li < w->n_lanes; li++) {
        lane_job *j = &jobs[li];
        const pch_vx_array *a = chunk;
        for (uint32_t s = 0; s < w->lanes[li].n_steps; s++) a = a->children[w->lanes[li].steps[s]];
        j->w = w;
        j->l = &w->lanes[li];
        j->a = a;
        j->row_weights = row_weights;
        pch_arena_init(&j->arena, w->ctx, 1 << 16);
        pch_error_clear(&j->err);
    }
    /* phase 1: lanes in parallel (the calling thread works too) */
    {
        job_pool pool = { jobs, w->n_lanes, 0, PTHREAD_MUTEX_INITIALIZER };
        pthread_t th[64];
        pool_slot slots[65];
        uint32_t nt = 0, want = w->opts.threads > w->n_lanes ? (uint32_t)w->n_lanes : w->opts.threads;
        for (uint32_t t = 0; t <= 64; t++) slots[t] = (pool_slot){ &pool, &w->fsst_pairs[t] };
        for (uint32_t t = 1; t < want && nt < 64; t++)
            if (pthread_create(&th[nt], NULL, pool_worker, &slots[nt + 1]) == 0) nt++;
        pool_worker(&slots[0]);
        for (uint32_t t = 0; t < nt; t++) pthread_join(th[t], NULL);
        pthread_mutex_destroy(&pool.mu);
    }
    /* phase 2: each lane's chunk serialized (encodings numbered in lane order), then the
    ** segments written smallest first. The small lanes a narrow scan reads — counts, codes,
    ** names, times — then sit together at the start of the chunk's bytes, where one coalesced
    ** read gets them on object storage (docs/object-storage.md), and the large text and token
    ** lanes follow. Any order is standard Vortex: layouts name segments by id and the footer
    ** gives each one's offset; ties keep lane order, so a file's bytes stay deterministic. */
    {
        pch_buf *segs = pch_calloc(w->ctx, w->n_lanes ? w->n_lanes : 1, sizeof *segs);
        uint8_t *aes = pch_calloc(w->ctx, w->n_lanes ? w->n_lanes : 1, 1);
        size_t *order = pch_calloc(w->ctx, w->n_lanes ? w->n_lanes : 1, sizeof *order);
        if (!segs || !aes || !order) rc = OOM();
        for (size_t li = 0; li < w->n_lanes && rc == PCH_OK; li++) {
            lane_job *j = &jobs[li];
            double t0 = pch_time_mono();
            pch_buf_init(&segs[li], w->ctx);
            if (j->rc) { rc = j->rc; if (err) *err = j->err; break; }
            assign_encs(w, j->root);
            if (note_encoding(w, j->l, j->root)) rc = OOM();
            else rc = pch_vx__serialize(&segs[li], j->root, w->enc_map, w->enc_used, &aes[li], err);
            j->seconds += pch_time_mono() - t0;
            order[li] = li;
        }
        for (size_t i = 1; i < w->n_lanes && rc == PCH_OK; i++)      /* stable insertion sort by size */
            for (size_t k = i; k > 0 && segs[order[k]].len < segs[order[k - 1]].len; k--) {
                size_t t = order[k]; order[k] = order[k - 1]; order[k - 1] = t;
            }
        for (size_t i = 0; i < w->n_lanes && rc == PCH_OK; i++) {
            lane_job *j = &jobs[order[i]];
            lane *l = j->l;
            uint32_t id;
            double t0 = pch_time_mono();
            rc = write_segment(w, &segs[order[i]], aes[order[i]], &id, err);
            l->stored += segs[order[i]].len;
            if (!rc && (l->dict ? push_ref(w, &l->codes, &l->n_codes, &l->cap_codes, j->a->len, id)
                                : push_ref(w, &l->chunks, &l->n_chunks, &l->cap_chunks, j->a->len, id)))
                rc = OOM();
            l->seconds += pch_time_mono() - t0;
        }
        for (size_t li = 0; li < w->n_lanes; li++) {
            lane_job *j = &jobs[li];
            j->l->rows += j->a->len;
            j->l->seconds += j->seconds;
            if (segs) pch_buf_dispose(&segs[li]);
        }
        pch_free(w->ctx, segs);
        pch_free(w->ctx, aes);
        pch_free(w->ctx, order);
    }
    for (size_t li = 0; li < w->n_lanes; li++) {
        pch_free(w->ctx, jobs[li].codes.data);
        pch_arena_dispose(&jobs[li].arena);
    }
    pch_free(w->ctx, jobs);
    if (rc == PCH_OK) w->rows += chunk->len;
    return rc;
}

/* ------------------------------------------------------------------ footer */

typedef struct lctx {
    pch_vx_writer *w;
    pch_vx_fbb *b;
    uint32_t **tabs;          /* per lane: its chunks' flat layout tables (chunk_tables) */
    uint16_t lmap[L_COUNT];
    uint8_t lused[L_COUNT];
    uint8_t lorder[L_COUNT];
    uint32_t n_lused;
} lctx;

static uint16_t lid(lctx *c, int l)
{
    if (!c->lused[l]) { c->lused[l] = 1; c->lmap[l] = (uint16_t)c->n_lused; c->lorder[c->n_lused++] = (uint8_t)l; }
    return c->lmap[l];
}

static uint32_t layout_node(lctx *c, int type, uint64_t rows, const uint8_t *meta, size_t meta_len,
                            const uint32_t *kids, uint32_t n_kids, const uint32_t *segs, uint32_t n_segs)
{
    uint32_t mv = meta_len ? pch_vx_fbb_bytes(c->b, meta, meta_len) : 0;
    uint32_t kv = n_kids ? pch_vx_fbb_offsets(c->b, kids, n_kids) : 0;
    uint32_t sv = n_segs ? pch_vx_fbb_vector(c->b, segs, n_segs, 4, 4) : 0;
    uint16_t id = lid(c, type);
    pch_vx_fbb_start(c->b);
    pch_vx_fbb_u64(c->b, 1, rows, 0, 0);
    pch_vx_fbb_u16(c->b, 0, id, 0, 0);
    pch_vx_fbb_off(c->b, 2, mv);
    pch_vx_fbb_off(c->b, 3, kv);
    pch_vx_fbb_off(c->b, 4, sv);
    return pch_vx_fbb_end(c->b);
}

/* The chunks a lane's chunked layout lists (its codes when it is a dict layout). */
static const chunk_ref *lane_chunks(const lane *l, size_t *n)
{
    *n = l->dict ? l->n_codes : l->n_chunks;
    return l->dict ? l->codes : l->chunks;
}

/* The flat layout table of every lane's chunks, chunk-major: chunk i of every lane, then
** chunk i + 1. A chunk is a cluster of the file (every lane is chunked at the same rows), so
** the layout a read of one cluster walks is one contiguous run of the flatbuffer, which a
** paged reader reads in a few blocks (pch_vx_file_open_paged, RFC-0006 §13.4). The file is
** the same standard Vortex in any order. */
static int chunk_tables(lctx *c)
{
    pch_vx_writer *w = c->w;
    size_t most = 0, n;
    if (!(c->tabs = pch_calloc(w->ctx, w->n_lanes ? w->n_lanes : 1, sizeof(uint32_t *)))) return PCH_ENOMEM;
    for (size_t l = 0; l < w->n_lanes; l++) {
        lane_chunks(&w->lanes[l], &n);
        if (!(c->tabs[l] = pch_calloc(w->ctx, n ? n : 1, sizeof(uint32_t)))) return PCH_ENOMEM;
        if (n > most) most = n;
    }
    for (size_t i = 0; i < most; i++)
        for (size_t l = 0; l < w->n_lanes; l++) {
            const chunk_ref *ch = lane_chunks(&w->lanes[l], &n);
            uint32_t seg;
            if (i >= n) continue;
            seg = ch[i].seg;
            c->tabs[l][i] = layout_node(c, L_FLAT, ch[i].rows, NULL, 0, NULL, 0, &seg, 1);
        }
    return c->b->oom ? c->b->oom : PCH_OK;
}

static uint32_t chunked_node(lctx *c, const lane *l)
{
    size_t n;
    lane_chunks(l, &n);
    return layout_node(c, L_CHUNKED, l->rows, NULL, 0, c->tabs[l - c->w->lanes], (uint32_t)n, NULL, 0);
}

static int lane_layout(lctx *c, lane *l, uint32_t *out, pch_error *err)
{
    pch_vx_writer *w = c->w;
    uint32_t data;
    if (l->dict) {
        /* values: one flat array of the distinct values (column dtype) */
        pch_vx_array vals;
        uint32_t seg, kids[2], vflat;
        uint8_t meta[8];
        size_t ml = 0;
        pch_buf mb;
        int64_t *offs;
        memset(&vals, 0, sizeof vals);
        vals.ctx = w->ctx;
        vals.dtype = l->dt;
        vals.len = l->dn;
        vals.data = l->dvals.data;
        vals.data_len = l->dvals.len;
        if (!(offs = pch_malloc(w->ctx, (size_t)(l->dn + 1) * 8))) return OOM();
        offs[0] = 0;
        if (l->dn) memcpy(offs + 1, l->doffs.data, (size_t)l->dn * 8);
        vals.offsets = offs;
        {
            int rc = write_array(w, l, &vals, w->opts.compress, &seg, err);
            pch_free(w->ctx, offs);
            if (rc) return rc;
        }
        vflat = layout_node(c, L_FLAT, l->dn, NULL, 0, NULL, 0, &seg, 1);
        kids[0] = vflat;
        kids[1] = chunked_node(c, l);
        pch_buf_init(&mb, w->ctx);
        pch_vx__pb_uint(&mb, 1, PCH_VX_U32);
        pch_vx__pb_uint_force(&mb, 2, l->codes_nullable);
        pch_vx__pb_uint_force(&mb, 3, 1);
        if (mb.oom || mb.len > sizeof meta) { pch_buf_dispose(&mb); return OOM(); }
        memcpy(meta, mb.data, mb.len);
        ml = mb.len;
        pch_buf_dispose(&mb);
        data = layout_node(c, L_DICT, l->rows, meta, ml, kids, 2, NULL, 0);
    } else {
        data = chunked_node(c, l);
    }
    if (l->zoned) {
        pch_vx_array *zt = NULL;
        uint32_t seg, kids[2];
        uint8_t meta[6];
        int rc;
        PCH_TRY(zone_flush(w, l, err));
        PCH_TRY(pch_vx_builder_finish(l->zones, &zt, err));
        rc = write_array(w, NULL, zt, w->opts.compress, &seg, err);
        kids[1] = layout_node(c, L_FLAT, zt->len, NULL, 0, NULL, 0, &seg, 1);
        pch_vx_array_free(zt);
        if (rc) return rc;
        kids[0] = data;
        pch_store_le32(meta, w->opts.zone_len);
        meta[4] = 0x58;   /* Max(3), Min(4), NullCount(6) — Appendix B */
        meta[5] = 0x00;
        data = layout_node(c, L_STATS, l->rows, meta, 6, kids, 2, NULL, 0);
    }
    *out = data;
    return PCH_OK;
}

/* Struct layouts over lanes [*li, ...) that share the prefix of `depth` steps. */
static int struct_layout(lctx *c, const pch_vx_dtype *d, uint32_t depth, size_t *li, uint32_t *out,
                         pch_error *err)
{
    pch_vx_writer *w = c->w;
    uint32_t *kids = pch_calloc(w->ctx, d->n_fields ? d->n_fields : 1, sizeof(uint32_t));
    int rc = PCH_OK;
    if (!kids) return OOM();
    for (uint32_t f = 0; f < d->n_fields && !rc; f++) {
        const pch_vx_dtype *fd = d->fields[f];
        if (!(fd->kind == PCH_VX_STRUCT && !fd->nullable && w->opts.split_structs && depth < 30)) {
            rc = lane_layout(c, &w->lanes[*li], &kids[f], err);
            (*li)++;
        } else {
            rc = struct_layout(c, d->fields[f], depth + 1, li, &kids[f], err);
        }
    }
    if (!rc) *out = layout_node(c, L_STRUCT, w->rows, NULL, 0, kids, d->n_fields, NULL, 0);
    pch_free(w->ctx, kids);
    return rc;
}

static int region(pch_vx_writer *w, pch_bytes fb, uint64_t *off, uint32_t *len, pch_error *err)
{
    PCH_TRY(out_write(w, 8, fb.ptr, fb.len, err));
    *off = out_pos(w) - fb.len;
    *len = (uint32_t)fb.len;
    return PCH_OK;
}

static uint32_t ps_segment(pch_vx_fbb *b, uint64_t off, uint32_t len)
{
    pch_vx_fbb_start(b);
    pch_vx_fbb_u64(b, 0, off, 0, 0);
    pch_vx_fbb_u32(b, 1, len, 0, 0);
    pch_vx_fbb_u8(b, 2, 3, 0, 0);
    return pch_vx_fbb_end(b);
}

int pch_vx_writer_finish(pch_vx_writer *w, pch_error *err)
{
    pch_vx_fbb b;
    lctx c;
    pch_bytes fb;
    uint64_t dt_off, lay_off, foot_off;
    uint32_t dt_len, lay_len, foot_len, root = 0, *offs = NULL;
    uint8_t *specs = NULL;
    int rc;
    if (w->finished) return PCH_OK;
    pch_vx_fbb_init(&b, w->ctx);
    memset(&c, 0, sizeof c);
    c.w = w;
    c.b = &b;
    /* layout (segments for dict values and zone tables are written here too) */
    if ((rc = chunk_tables(&c))) {
        rc = pch_error_set(err, rc, "vortex writer: out of memory");
    } else if (w->root_struct) {
        size_t li = 0;
        rc = struct_layout(&c, w->dt, 0, &li, &root, err);
    } else {
        rc = lane_layout(&c, &w->lanes[0], &root, err);
    }
    if (rc || (rc = pch_vx_fbb_finish(&b, root, &fb, err))) goto done;
    /* dtype */
    {
        pch_vx_fbb db;
        pch_bytes dfb;
        pch_vx_fbb_init(&db, w->ctx);
        rc = pch_vx_fbb_finish(&db, pch_vx__dtype_to_fb(&db, w->dt), &dfb, err);
        if (!rc) rc = region(w, dfb, &dt_off, &dt_len, err);
        pch_vx_fbb_dispose(&db);
        if (rc) goto done;
    }
    if ((rc = region(w, fb, &lay_off, &lay_len, err))) goto done;
    /* footer */
    pch_vx_fbb_reset(&b);
    {
        uint32_t n = w->n_enc_used > c.n_lused ? w->n_enc_used : c.n_lused, av, lv, sv, foot;
        if (!(offs = pch_calloc(w->ctx, n ? n : 1, sizeof(uint32_t))) ||
            !(specs = pch_calloc(w->ctx, w->n_segs ? w->n_segs : 1, 16))) { rc = OOM(); goto done; }
        for (uint32_t i = 0; i < w->n_enc_used; i++) {
            const char *id = pch_vx__enc_ids[w->enc_order[i]];
            uint32_t s = pch_vx_fbb_string(&b, id, strlen(id));
            pch_vx_fbb_start(&b);
            pch_vx_fbb_off(&b, 0, s);
            offs[i] = pch_vx_fbb_end(&b);
        }
        av = pch_vx_fbb_offsets(&b, offs, w->n_enc_used);
        for (uint32_t i = 0; i < c.n_lused; i++) {
            const char *id = layout_ids[c.lorder[i]];
            uint32_t s = pch_vx_fbb_string(&b, id, strlen(id));
            pch_vx_fbb_start(&b);
            pch_vx_fbb_off(&b, 0, s);
            offs[i] = pch_vx_fbb_end(&b);
        }
        lv = pch_vx_fbb_offsets(&b, offs, c.n_lused);
        for (size_t i = 0; i < w->n_segs; i++) {
            pch_store_le64(specs + 16 * i, w->seg_off[i]);
            pch_store_le32(specs + 16 * i + 8, w->seg_len[i]);
            specs[16 * i + 12] = w->seg_align[i];
        }
        sv = pch_vx_fbb_vector(&b, specs, w->n_segs, 16, 8);
        pch_vx_fbb_start(&b);
        pch_vx_fbb_off(&b, 0, av);
        pch_vx_fbb_off(&b, 1, lv);
        pch_vx_fbb_off(&b, 2, sv);
        foot = pch_vx_fbb_end(&b);
        if ((rc = pch_vx_fbb_finish(&b, foot, &fb, err)) || (rc = region(w, fb, &foot_off, &foot_len, err))) goto done;
    }
    /* postscript + trailer */
    pch_vx_fbb_reset(&b);
    {
        uint32_t d = ps_segment(&b, dt_off, dt_len), l = ps_segment(&b, lay_off, lay_len);
        uint32_t f = ps_segment(&b, foot_off, foot_len), ps;
        pch_vx_fbb_start(&b);
        pch_vx_fbb_off(&b, 0, d);
        pch_vx_fbb_off(&b, 1, l);
        pch_vx_fbb_off(&b, 3, f);
        ps = pch_vx_fbb_end(&b);
        if ((rc = pch_vx_fbb_finish(&b, ps, &fb, err))) goto done;
        if (fb.len > PCH_VX_MAX_POSTSCRIPT) { rc = pch_error_set(err, PCH_ELIMIT, "vortex writer: postscript too large"); goto done; }
        uint8_t tail[8];
        pch_store_le16(tail, PCH_VX_VERSION);
        pch_store_le16(tail + 2, (uint16_t)fb.len);
        memcpy(tail + 4, PCH_VX_MAGIC, 4);
        if ((rc = out_write(w, 8, fb.ptr, fb.len, err)) || (rc = out_write(w, 1, tail, 8, err))) goto done;
    }
    if (w->fd >= 0 && (rc = out_publish(w, err))) goto done;
    w->finished = 1;
done:
    for (size_t l = 0; c.tabs && l < w->n_lanes; l++) pch_free(w->ctx, c.tabs[l]);
    pch_free(w->ctx, c.tabs);
    pch_free(w->ctx, offs);
    pch_free(w->ctx, specs);
    pch_vx_fbb_dispose(&b);
    return rc;
}

pch_bytes pch_vx_writer_bytes(const pch_vx_writer *w)
{
    pch_bytes v = { NULL, 0 };
    if (w->finished && !w->path) { v.ptr = w->file.data; v.len = w->file.len; }
    return v;
}

uint64_t pch_vx_writer_file_bytes(const pch_vx_writer *w) { return out_pos(w); }

int pch_vx_writer_publish(pch_vx_writer *w, const char *path, pch_error *err)
{
    if (!w->finished) return pch_error_set(err, PCH_EINVAL, "vortex writer: publish before finish");
    if (w->path) {
        /* streamed: already published by finish */
        if (strcmp(path, w->path) == 0) return PCH_OK;
        return pch_error_set(err, PCH_EINVAL, "vortex writer: streamed to %s, not %s", w->path, path);
    }
    return pch_file_publish(path, w->file.data, w->file.len, err);
}

size_t pch_vx_writer_n_lanes(const pch_vx_writer *w) { return w->n_lanes; }

int pch_vx_writer_lane(const pch_vx_writer *cw, size_t i, pch_vx_lane_report *out)
{
    pch_vx_writer *w = (pch_vx_writer *)(uintptr_t)cw;  /* caches the encodings text */
    lane *l;
    pch_buf b;
    size_t n;
    memset(out, 0, sizeof(*out));
    if (i >= w->n_lanes) return PCH_EINVAL;
    l = &w->lanes[i];
    pch_buf_init(&b, w->ctx);
    for (size_t k = 0; k < l->n_encs; k++)
        pch_buf_printf(&b, "%s%s x%" PRIu64, k ? ", " : "", l->encs[k].name, l->encs[k].n);
    if (l->dict) pch_buf_printf(&b, "%s[vortex.dict layout: %" PRIu64 " values]", l->n_encs ? " " : "", l->dn);
    if (pch_buf_putc(&b, 0)) { pch_buf_dispose(&b); return PCH_ENOMEM; }
    pch_free(w->ctx, l->enc_text);
    l->enc_text = (char *)pch_buf_detach(&b, &n);
    out->path = l->path;
    out->encodings = l->enc_text;
    out->encs = l->encs;
    out->n_encs = l->n_encs;
    out->dict_layout = l->dict;
    out->dict_values = l->dn;
    out->rows = l->rows;
    out->chunks = l->dict ? l->n_codes : l->n_chunks;
    out->logical_bytes = l->logical;
    out->stored_bytes = l->stored;
    out->encode_seconds = l->seconds;
    return PCH_OK;
}
