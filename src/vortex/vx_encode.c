/* Encoders and the sampling compressor (vortex-format.md §6.4, §9.3; RFC-0006 §8.1).
**
** Canonical forms: null, bool, primitive, decimal, varbin (i32/i64 offsets), struct
** (validity first), list (elements, offsets, validity), fixed_size_list, ext.
** Compressed forms written, in the order of value of §9.3: constant, dict, fastlanes.for +
** fastlanes.bitpacked (no patches), vortex.zstd, vortex.runend, vortex.sparse, vortex.fsst
** (legacy 2-buffer form, utf8/binary; vx_fsst.c), vortex.alprd (float32/float64). The compressor
** encodes a sample of the chunk (whole chunk when small) with every candidate that applies,
** keeps the smallest, then encodes the whole chunk with it. Integer children it creates
** (codes, offsets, run ends, patch indices) go through a restricted integer compressor
** (constant, FoR+bit-packing, plain) so cascades stay shallow. All node memory and created
** buffers come from enc->arena; canonical input buffers are borrowed. */
#include "vortex/vortex_int.h"

#include <math.h>
#include <stdlib.h>
#include <zstd.h>
#define ZDICT_STATIC_LINKING_ONLY   /* ZDICT_trainFromBuffer_fastCover with fixed parameters */
#include <zdict.h>

#define OOM() pch_error_set(err, PCH_ENOMEM, "vortex encode: out of memory")

static pch_vx_enode *mk(pch_vx_encoder *e, unsigned enc, uint32_t n_children)
{
    pch_vx_enode *n = pch_arena_alloc(e->arena, sizeof(*n));
    if (!n) return NULL;
    memset(n, 0, sizeof(*n));
    n->enc = (uint8_t)enc;
    if (n_children) {
        n->children = pch_arena_alloc(e->arena, n_children * sizeof(pch_vx_enode *));
        if (!n->children) return NULL;
        memset(n->children, 0, n_children * sizeof(pch_vx_enode *));
        n->n_children = n_children;
    }
    return n;
}

static void add_buf(pch_vx_enode *n, const uint8_t *p, size_t len, unsigned align_exp)
{
    n->buf[n->n_bufs] = p;
    n->buf_len[n->n_bufs] = len;
    n->buf_align[n->n_bufs] = (uint8_t)align_exp;
    n->n_bufs++;
}

static int set_meta(pch_vx_encoder *e, pch_vx_enode *n, const pch_buf *b)
{
    if (b->oom) return PCH_ENOMEM;
    if (!b->len) return PCH_OK;
    n->meta = pch_arena_memdup(e->arena, b->data, b->len);
    n->meta_len = b->len;
    return n->meta ? PCH_OK : PCH_ENOMEM;
}

static unsigned log2u(unsigned w) { unsigned r = 0; while ((1u << r) < w) r++; return r; }

/* Size of a node tree as written (buffers + metadata + ~16 bytes per node). */
static uint64_t tree_size(const pch_vx_enode *n)
{
    uint64_t s = 16 + n->meta_len;
    for (uint32_t i = 0; i < n->n_bufs; i++) s += n->buf_len[i];
    for (uint32_t i = 0; i < n->n_xbufs; i++) s += n->xbuf_len[i];
    for (uint32_t i = 0; i < n->n_children; i++) s += tree_size(n->children[i]);
    return s;
}

static int validity_node(pch_vx_encoder *e, const uint8_t *bits, uint64_t len, pch_vx_enode **out,
                         pch_error *err)
{
    pch_vx_enode *n = mk(e, PCH_VX_E_BOOL, 0);
    (void)len;
    if (!n) return OOM();
    add_buf(n, bits, (size_t)((len + 7) / 8), 0);
    *out = n;
    return PCH_OK;
}

/* Primitive node over `data` (len values of ptype), validity optional. */
static int prim_node(pch_vx_encoder *e, unsigned ptype, const uint8_t *data, uint64_t len,
                     const uint8_t *validity, pch_vx_enode **out, pch_error *err)
{
    pch_vx_enode *n = mk(e, PCH_VX_E_PRIMITIVE, validity ? 1 : 0);
    unsigned w = pch_vx_ptype_width(ptype);
    if (!n) return OOM();
    add_buf(n, data, (size_t)len * w, log2u(w));
    if (validity) PCH_TRY(validity_node(e, validity, len, &n->children[0], err));
    *out = n;
    return PCH_OK;
}

/* ------------------------------------------------------------------ integer compressor */

typedef struct ivals {
    unsigned ptype;
    uint64_t len;
    const uint8_t *data;       /* canonical values (null slots are 0) */
    const uint8_t *validity;   /* NULL = all valid */
} ivals;

static uint64_t iv_get(const ivals *v, uint64_t i) { return pch_vx__load_uint(v->data, v->ptype, i); }
static int iv_valid(const ivals *v, uint64_t i) { return !v->validity || pch_vx__bit(v->validity, i); }
static int64_t iv_sget(const ivals *v, uint64_t i)
{
    return pch_vx__is_signed(v->ptype) ? pch_vx__load_int(v->data, v->ptype, i) : (int64_t)iv_get(v, i);
}

static int scalar_int(pch_buf *b, unsigned ptype, uint64_t bits)
{
    pch_vx_scalar s;
    memset(&s, 0, sizeof(s));
    if (pch_vx__is_signed(ptype)) {
        s.kind = PCH_VX_SV_I64;
        s.i = pch_vx__load_int((const uint8_t *)&bits, ptype, 0);
    } else {
        s.kind = PCH_VX_SV_U64;
        s.u = bits;
    }
    return pch_vx__scalar_encode(b, &s);
}

static int const_node(pch_vx_encoder *e, const pch_vx_scalar *s, pch_vx_enode **out, pch_error *err)
{
    pch_buf b;
    pch_vx_enode *n = mk(e, PCH_VX_E_CONSTANT, 0);
    uint8_t *p;
    if (!n) return OOM();
    pch_buf_init(&b, e->ctx);
    if (pch_vx__scalar_encode(&b, s) || !(p = pch_arena_memdup(e->arena, b.data, b.len))) {
        pch_buf_dispose(&b);
        return OOM();
    }
    add_buf(n, p, b.len, 0);
    pch_buf_dispose(&b);
    *out = n;
    return PCH_OK;
}

/* FoR + bit-packing; returns 1 in *ok when applicable. */
static int for_bp(pch_vx_encoder *e, const ivals *v, pch_vx_enode **out, int *ok, pch_error *err)
{
    unsigned tb = 8 * pch_vx_ptype_width(v->ptype), bw = 0;
    int sgn = pch_vx__is_signed(v->ptype), have = 0;
    int64_t smin = 0;
    uint64_t umin = 0, maxd = 0, ref;
    uint64_t *d;
    uint8_t *packed;
    pch_buf meta;
    pch_vx_enode *bp, *fo;
    *ok = 0;
    for (uint64_t i = 0; i < v->len; i++) {
        if (!iv_valid(v, i)) continue;
        if (sgn) { int64_t x = iv_sget(v, i); if (!have || x < smin) smin = x; }
        else { uint64_t x = iv_get(v, i); if (!have || x < umin) umin = x; }
        have = 1;
    }
    ref = sgn ? (uint64_t)smin : umin;
    if (!(d = pch_arena_alloc(e->arena, (size_t)(v->len ? v->len : 1) * 8))) return OOM();
    for (uint64_t i = 0; i < v->len; i++) {
        uint64_t x = iv_valid(v, i) ? (iv_get(v, i) - ref) : 0;
        if (tb < 64) x &= (((uint64_t)1 << tb) - 1);
        d[i] = x;
        if (x > maxd) maxd = x;
    }
    while (bw < 64 && (maxd >> bw)) bw++;
    if (bw >= tb) return PCH_OK;
    if (!(packed = pch_arena_alloc(e->arena, pch_vx__bp_bytes(v->len, bw) + 1))) return OOM();
    pch_vx__bp_pack(packed, d, v->len, tb, bw);
    if (!(bp = mk(e, PCH_VX_E_BITPACKED, v->validity ? 1 : 0))) return OOM();
    add_buf(bp, packed, pch_vx__bp_bytes(v->len, bw), log2u(tb / 8));
    pch_buf_init(&meta, e->ctx);
    pch_vx__pb_uint(&meta, 1, bw);
    if (set_meta(e, bp, &meta)) { pch_buf_dispose(&meta); return OOM(); }
    pch_buf_dispose(&meta);
    if (v->validity) PCH_TRY(validity_node(e, v->validity, v->len, &bp->children[0], err));
    if (ref == 0) { *out = bp; *ok = 1; return PCH_OK; }
    if (!(fo = mk(e, PCH_VX_E_FOR, 1))) return OOM();
    pch_buf_init(&meta, e->ctx);
    scalar_int(&meta, v->ptype, ref);
    if (set_meta(e, fo, &meta)) { pch_buf_dispose(&meta); return OOM(); }
    pch_buf_dispose(&meta);
    fo->children[0] = bp;
    *out = fo;
    *ok = 1;
    return PCH_OK;
}

/* Restricted integer compressor for derived children (non-null unless validity given). */
static int int_simple(pch_vx_encoder *e, const ivals *v, pch_vx_enode **out, pch_error *err)
{
    pch_vx_enode *best = NULL, *c = NULL;
    int ok, all_eq = v->len > 0 && !v->validity;
    for (uint64_t i = 1; all_eq && i < v->len; i++) all_eq = iv_get(v, i) == iv_get(v, 0);
    if (all_eq && e->compress) {
        pch_vx_scalar s;
        memset(&s, 0, sizeof s);
        if (pch_vx__is_signed(v->ptype)) { s.kind = PCH_VX_SV_I64; s.i = iv_sget(v, 0); }
        else { s.kind = PCH_VX_SV_U64; s.u = iv_get(v, 0); }
        return const_node(e, &s, out, err);
    }
    PCH_TRY(prim_node(e, v->ptype, v->data, v->len, v->validity, &best, err));
    if (e->compress) {
        PCH_TRY(for_bp(e, v, &c, &ok, err));
        if (ok && tree_size(c) < tree_size(best)) best = c;
    }
    *out = best;
    return PCH_OK;
}

/* Pack uint64 values into the narrowest unsigned ptype able to hold max. */
static int narrow(pch_vx_encoder *e, const uint64_t *vals, uint64_t n, uint64_t max, ivals *out,
                  pch_error *err)
{
    unsigned p = max <= 0xff ? PCH_VX_U8 : max <= 0xffff ? PCH_VX_U16 : max <= 0xffffffffu ? PCH_VX_U32 : PCH_VX_U64;
    unsigned w = pch_vx_ptype_width(p);
    uint8_t *d = pch_arena_alloc(e->arena, (size_t)(n ? n : 1) * w);
    if (!d) return OOM();
    for (uint64_t i = 0; i < n; i++) pch_vx__store_uint(d, p, i, vals[i]);
    out->ptype = p;
    out->len = n;
    out->data = d;
    out->validity = NULL;
    return PCH_OK;
}

/* ------------------------------------------------------------------ hashing for dict */

typedef struct hmap {
    uint64_t *keys;     /* hash of value */
    uint64_t *rows;     /* representative row (value index into array) + 1, 0 = empty */
    uint32_t *codes;
    uint64_t cap;
    uint64_t n;
} hmap;

static int value_eq(const pch_vx_array *a, uint64_t i, uint64_t j)
{
    const pch_vx_dtype *d = a->dtype;
    if (d->kind == PCH_VX_PRIMITIVE) {
        unsigned w = pch_vx_ptype_width(d->ptype);
        return memcmp(a->data + i * w, a->data + j * w, w) == 0;
    }
    int64_t li = a->offsets[i + 1] - a->offsets[i], lj = a->offsets[j + 1] - a->offsets[j];
    return li == lj && (li == 0 || memcmp(a->data + a->offsets[i], a->data + a->offsets[j], (size_t)li) == 0);
}

static uint64_t value_hash(const pch_vx_array *a, uint64_t i)
{
    const pch_vx_dtype *d = a->dtype;
    if (d->kind == PCH_VX_PRIMITIVE) {
        unsigned w = pch_vx_ptype_width(d->ptype);
        return pch_hash64(a->data + i * w, w);
    }
    /* a word at a time: the dictionary trial hashes every value of a content chunk (a
    ** byte-wise FNV took 5 % of a build); codes follow first occurrence, not the hash */
    return pch_hash64(a->data + a->offsets[i], (size_t)(a->offsets[i + 1] - a->offsets[i]));
}

/* Dictionary of the valid values of a (primitive or varbin). codes[i] per row (0 for nulls),
** firsts = first row of each distinct value. Gives up (*ok = 0) above max_distinct. */
static int build_dict(pch_vx_encoder *e, const pch_vx_array *a, uint64_t max_distinct,
                      uint64_t **codes_out, uint64_t **firsts_out, uint64_t *n_out, int *ok, pch_error *err)
{
    hmap h;
    uint64_t *codes, *firsts;
    *ok = 0;
    h.cap = 16;
    while (h.cap < 2 * (max_distinct + 1)) h.cap *= 2;
    h.n = 0;
    h.keys = pch_arena_alloc(e->arena, h.cap * 8);
    h.rows = pch_arena_alloc(e->arena, h.cap * 8);
    h.codes = pch_arena_alloc(e->arena, h.cap * 4);
    codes = pch_arena_alloc(e->arena, (size_t)(a->len ? a->len : 1) * 8);
    firsts = pch_arena_alloc(e->arena, (size_t)(max_distinct + 1) * 8);
    if (!h.keys || !h.rows || !h.codes || !codes || !firsts) return OOM();
    memset(h.rows, 0, h.cap * 8);
    for (uint64_t i = 0; i < a->len; i++) {
        uint64_t hv, slot;
        if (!pch_vx_array_is_valid(a, i)) { codes[i] = 0; continue; }
        hv = value_hash(a, i);
        slot = hv & (h.cap - 1);
        for (;;) {
            if (!h.rows[slot]) {
                if (h.n >= max_distinct) return PCH_OK;
                h.rows[slot] = i + 1;
                h.keys[slot] = hv;
                h.codes[slot] = (uint32_t)h.n;
                firsts[h.n++] = i;
                codes[i] = h.codes[slot];
                break;
            }
            if (h.keys[slot] == hv && value_eq(a, h.rows[slot] - 1, i)) { codes[i] = h.codes[slot]; break; }
            slot = (slot + 1) & (h.cap - 1);
        }
    }
    *codes_out = codes;
    *firsts_out = firsts;
    *n_out = h.n;
    *ok = 1;
    return PCH_OK;
}

/* Values array (canonical, non-null rows firsts[]) as a node: primitive or varbin. */
static int varbin_node(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err);

static int dict_node(pch_vx_encoder *e, const pch_vx_array *a, uint64_t max_distinct,
                     pch_vx_enode **out, int *ok, pch_error *err)
{
    uint64_t *codes = NULL, *firsts = NULL, nd = 0;
    ivals cv;
    pch_vx_enode *n, *vn;
    pch_vx_array *vals = NULL;
    pch_buf meta;
    int rc;
    *ok = 0;
    PCH_TRY(build_dict(e, a, max_distinct, &codes, &firsts, &nd, ok, err));
    if (!*ok || nd == 0) { *ok = 0; return PCH_OK; }
    PCH_TRY(narrow(e, codes, a->len, nd - 1, &cv, err));
    cv.validity = a->validity;
    if (!(n = mk(e, PCH_VX_E_DICT, 2))) return OOM();
    PCH_TRY(int_simple(e, &cv, &n->children[0], err));
    if ((rc = pch_vx__array_take(&vals, a, firsts, nd, err))) return rc;
    /* values are never null; keep them in the arena's lifetime by copying buffers */
    if (a->dtype->kind == PCH_VX_PRIMITIVE) {
        uint8_t *d = pch_arena_memdup(e->arena, vals->data, vals->data_len);
        rc = d ? prim_node(e, a->dtype->ptype, d, nd, NULL, &vn, err) : OOM();
    } else {
        pch_vx_array tmp = *vals;
        tmp.data = pch_arena_memdup(e->arena, vals->data, vals->data_len);
        tmp.offsets = pch_arena_memdup(e->arena, vals->offsets, (size_t)(nd + 1) * 8);
        tmp.validity = NULL;
        tmp.n_children = 0;
        rc = (tmp.data && tmp.offsets) ? varbin_node(e, &tmp, &vn, err) : OOM();
    }
    pch_vx_array_free(vals);
    if (rc) return rc;
    n->children[1] = vn;
    pch_buf_init(&meta, e->ctx);
    pch_vx__pb_uint(&meta, 1, nd);
    pch_vx__pb_uint(&meta, 2, cv.ptype);
    pch_vx__pb_uint_force(&meta, 3, a->dtype->nullable ? 1 : 0);
    pch_vx__pb_uint_force(&meta, 4, 1);
    rc = set_meta(e, n, &meta);
    pch_buf_dispose(&meta);
    if (rc) return OOM();
    *out = n;
    *ok = 1;
    return PCH_OK;
}

typedef struct zframes {
    const uint8_t **p;
    size_t *len;
    size_t n, cap;
} zframes;

/* Compress plain[0..len) as one frame of nvals values (through cd, the array's dictionary,
** when not NULL): its bytes into the arena, its ZstdMetadata.frames entry {1: uncompressed
** size, 2: n_values} into meta. */
static int zstd_frame(pch_vx_encoder *e, zframes *fs, pch_buf *meta, const uint8_t *plain, size_t len,
                      uint64_t nvals, const ZSTD_CDict *cd, pch_error *err)
{
    pch_buf fm;
    size_t bound = ZSTD_compressBound(len), got;
    uint8_t *cp;
    ZSTD_CCtx *z = pch_vx__thread_cctx();   /* one per thread (vx_serde.c) */
    const uint8_t *src = len ? plain : (const uint8_t *)"";
    int rc = PCH_OK;
    if (!z || !(cp = pch_arena_alloc(e->arena, bound ? bound : 1))) return OOM();
    got = cd ? ZSTD_compress_usingCDict(z, cp, bound, src, len, cd) : ZSTD_compressCCtx(z, cp, bound, src, len, 3);
    if (ZSTD_isError(got)) return pch_error_set(err, PCH_EIO, "vortex zstd: %s", ZSTD_getErrorName(got));
    if (fs->n == fs->cap) {
        size_t nc = fs->cap ? fs->cap * 2 : 8;
        const uint8_t **np = pch_realloc(e->ctx, (void *)fs->p, nc * sizeof(*np));
        size_t *nl;
        if (!np) return OOM();
        fs->p = np;
        if (!(nl = pch_realloc(e->ctx, fs->len, nc * sizeof(*nl)))) return OOM();
        fs->len = nl;
        fs->cap = nc;
    }
    fs->p[fs->n] = cp;
    fs->len[fs->n++] = got;
    pch_buf_init(&fm, e->ctx);
    pch_vx__pb_uint(&fm, 1, len);
    pch_vx__pb_uint(&fm, 2, nvals);
    pch_vx__pb_bytes(meta, 2, fm.data ? fm.data : (const uint8_t *)"", fm.len);
    if (fm.oom || meta->oom) rc = OOM();
    pch_buf_dispose(&fm);
    return rc;
}

/* May a frame end before row i? (see pch_vx_encoder: cuts carried down from whole rows) */
static int cut_allowed(const pch_vx_encoder *e, uint64_t i, uint64_t *ci)
{
    if (!e->cuts) return 1;
    while (*ci < e->n_cuts && e->cuts[*ci] < i) (*ci)++;
    return *ci < e->n_cuts && e->cuts[*ci] == i;
}

/* Dictionary training: samples of DICT_SAMPLE bytes taken evenly over the payload, at most
** DICT_TRAIN_PER_DICT x the dictionary's size of them (training reads every sample byte a few
** times; more samples gave no smaller arrays, measured in docs/vortex-projection.md §3). */
#define DICT_SAMPLE 4096u
#define DICT_TRAIN_PER_DICT 32u

/* Train a zstd dictionary of at most e->dict_bytes on plain[0..len) into the arena. *dlen 0:
** none (training failed: too few or too uniform samples; the array is then compressed
** without one). fastCover with fixed parameters and one thread: the same payload always
** gives the same dictionary, so files stay byte-identical for any --threads. */
static int train_dict(pch_vx_encoder *e, const uint8_t *plain, size_t len, uint8_t **dict, size_t *dlen)
{
    ZDICT_fastCover_params_t prm;
    size_t n_all = len / DICT_SAMPLE, n_take = (size_t)DICT_TRAIN_PER_DICT * e->dict_bytes / DICT_SAMPLE, got;
    size_t *sizes;
    uint8_t *samples, *d;
    *dict = NULL;
    *dlen = 0;
    if (n_take > n_all) n_take = n_all;
    if (n_take < 8) return PCH_OK;
    samples = pch_arena_alloc(e->arena, n_take * DICT_SAMPLE);
    sizes = pch_arena_alloc(e->arena, n_take * sizeof(*sizes));
    d = pch_arena_alloc(e->arena, e->dict_bytes);
    if (!samples || !sizes || !d) return PCH_ENOMEM;
    for (size_t k = 0; k < n_take; k++) {
        size_t at = (size_t)((uint64_t)k * n_all / n_take) * DICT_SAMPLE;
        memcpy(samples + k * DICT_SAMPLE, plain + at, DICT_SAMPLE);
        sizes[k] = DICT_SAMPLE;
    }
    memset(&prm, 0, sizeof prm);
    prm.k = 200;            /* segment size */
    prm.d = 8;              /* dmer size */
    prm.f = 18;             /* 2^18-entry frequency table: 1.5 MB of scratch */
    prm.accel = 5;
    prm.splitPoint = 1.0;   /* every sample trains (no test split: no parameter search) */
    prm.nbThreads = 1;
    prm.zParams.compressionLevel = 3;
    got = ZDICT_trainFromBuffer_fastCover(d, e->dict_bytes, samples, sizes, (unsigned)n_take, prm);
    if (ZDICT_isError(got)) return PCH_OK;
    *dict = d;
    *dlen = got;
    return PCH_OK;
}

/* vortex.zstd: the valid values as one payload (primitives at their width, strings as a le32
** length and the bytes), cut into frames at whole top-level rows once a frame holds
** e->frame_bytes (§7.2: a point read decompresses only its own frames). A framed payload of
** at least PCH_VX_ZSTD_DICT_RATIO x e->dict_bytes trains a dictionary its frames share
** (buffer 0, ZstdMetadata.dictionary_size). */
static int zstd_node(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err)
{
    const pch_vx_dtype *d = a->dtype;
    pch_buf plain, meta;
    zframes fs = { NULL, NULL, 0, 0 };
    uint64_t fvals = 0, ci = 0, *fcut = NULL;   /* fcut: per frame, its end in plain and its values */
    uint64_t frow = 0;                          /* the frame's first cut (ci) or row (i) */
    size_t nf = 0, capf = 0, fstart = 0;
    int cut = e->frame_bytes && e->cut_arr == a;
    unsigned w = d->kind == PCH_VX_PRIMITIVE ? pch_vx_ptype_width(d->ptype) : 0;
    uint8_t *dict = NULL;
    size_t dict_len = 0;
    ZSTD_CDict *cd = NULL;
    pch_vx_enode *n;
    int rc = PCH_OK;
    pch_buf_init(&plain, e->ctx);
    pch_buf_init(&meta, e->ctx);
    /* the payload's size up front (at most: null rows add nothing), so it is not regrown
    ** and copied value by value */
    if (pch_buf_reserve(&plain, w ? (size_t)a->len * w
                                  : (size_t)a->len * 4 + (size_t)(a->len ? a->offsets[a->len] - a->offsets[0] : 0)) < 0) {
        rc = OOM();
        goto done;
    }
    /* frames by rows only for a lane of a few bytes a trajectory (under PCH_VX_FRAME_ROW_BYTES
    ** on average in this chunk): there a frame of the whole chunk is what a point read pays
    ** for every such lane, while frames of 32 small trajectories of a larger lane lose more in
    ** compression than they save (docs/vortex-projection.md §3) */
    const uint64_t rows = e->cuts ? (e->n_cuts ? e->n_cuts - 1 : 0) : a->len;
    const uint64_t payload = w ? a->len * w : a->len * 4 + (uint64_t)(a->len ? a->offsets[a->len] - a->offsets[0] : 0);
    const uint32_t frame_rows = cut && rows && payload / rows < PCH_VX_FRAME_ROW_BYTES ? e->frame_rows : 0;
    /* rows of small weight (row_weights): under frame_bytes / row_ratio */
    const uint64_t *rw = cut && e->row_ratio ? e->row_weights : NULL;
    const uint64_t small = rw ? e->frame_bytes / e->row_ratio : 0;
    uint64_t fmin = UINT64_MAX, ri = 0;         /* the frame's least row weight; row cursor */
    uint64_t nb = rw ? (e->cuts ? e->cuts[0] : 0) : UINT64_MAX;   /* the next value a row starts at */
    for (uint64_t i = 0; i <= a->len; i++) {
        /* a frame closes at a whole row once it holds frame_bytes, or frame_rows rows and
        ** PCH_VX_FRAME_MIN bytes: a lane of a few bytes a trajectory then costs a point read
        ** a frame of its own rows, not one of the whole chunk (a 32 MiB cluster's) */
        int at_cut = cut && i < a->len && (plain.len - fstart >= e->frame_bytes ||
                                           (frame_rows && plain.len - fstart >= PCH_VX_FRAME_MIN)) && cut_allowed(e, i, &ci);
        at_cut = at_cut && (plain.len - fstart >= e->frame_bytes || (frame_rows && (e->cuts ? ci : i) - frow >= frame_rows));
        if (i == nb && i < a->len) {
            /* the row whose values start at i (rows without values in this array take no
            ** frame of it and do not count): a frame holding a small row, or about to, closes
            ** before it exceeds row_ratio x the least weight in it (RFC-0006 §13.4: a point
            ** read of a small document, the projection's weights, reads frames of its size,
            ** not 64 KiB ones) */
            uint64_t r = i, end = i + 1;
            if (e->cuts) {
                while (ri + 1 < e->n_cuts && e->cuts[ri + 1] <= i) ri++;
                r = ri;
                end = ri + 1 < e->n_cuts ? e->cuts[ri + 1] : i;
            }
            nb = e->cuts ? (ri + 1 < e->n_cuts ? e->cuts[ri + 1] : UINT64_MAX) : i + 1;
            if (end > i) {                      /* nb is a row start: cuts[ri] == i */
                const uint64_t m = rw[r] < fmin ? rw[r] : fmin;
                if (!at_cut && m < small && plain.len > fstart) {
                    uint64_t cap = m * e->row_ratio, add = w ? (end - i) * w : (end - i) * 4 + (uint64_t)(a->offsets[end] - a->offsets[i]);
                    if (cap < PCH_VX_FRAME_SMALL_MIN) cap = PCH_VX_FRAME_SMALL_MIN;
                    at_cut = plain.len - fstart + add > cap && cut_allowed(e, i, &ci);
                }
                fmin = at_cut ? rw[r] : m;
            }
        }
        if (i == a->len || at_cut) {
            if (nf == capf) {
                size_t nc = capf ? capf * 2 : 8;
                uint64_t *np = pch_realloc(e->ctx, fcut, nc * 2 * sizeof(*np));
                if (!np) { rc = OOM(); goto done; }
                fcut = np;
                capf = nc;
            }
            fcut[2 * nf] = plain.len;
            fcut[2 * nf + 1] = fvals;
            nf++;
            fstart = plain.len;
            fvals = 0;
            frow = e->cuts ? ci : i;
            if (i == a->len) break;
        }
        if (!pch_vx_array_is_valid(a, i)) continue;
        fvals++;
        if (w) {
            pch_buf_append(&plain, a->data + i * w, w);
        } else {
            uint32_t l = (uint32_t)(a->offsets[i + 1] - a->offsets[i]);
            pch_buf_put_le32(&plain, l);
            pch_buf_append(&plain, a->data + a->offsets[i], l);
        }
    }
    if (plain.oom) { rc = OOM(); goto done; }
    if (cut && nf > 1 && e->dict_bytes && plain.len / PCH_VX_ZSTD_DICT_RATIO >= e->dict_bytes) {
        if ((rc = train_dict(e, plain.data, plain.len, &dict, &dict_len))) { rc = OOM(); goto done; }
        if (dict_len && !(cd = ZSTD_createCDict(dict, dict_len, 3))) { rc = OOM(); goto done; }
        if (dict_len) pch_vx__pb_uint(&meta, 1, dict_len);
    }
    fstart = 0;
    for (size_t k = 0; k < nf; k++) {
        if ((rc = zstd_frame(e, &fs, &meta, plain.len ? plain.data + fstart : NULL, (size_t)fcut[2 * k] - fstart,
                             fcut[2 * k + 1], cd, err)))
            goto done;
        fstart = (size_t)fcut[2 * k];
    }
    if (!(n = mk(e, PCH_VX_E_ZSTD, a->validity ? 1 : 0))) { rc = OOM(); goto done; }
    if (dict_len) add_buf(n, dict, dict_len, 0);
    {
        size_t inl = PCH_VX_NODE_MAX_BUFS - n->n_bufs, k;
        for (k = 0; k < fs.n && k < inl; k++) add_buf(n, fs.p[k], fs.len[k], 0);
        if (fs.n > inl) {
            size_t nx = fs.n - inl;
            if (!(n->xbuf = pch_arena_alloc(e->arena, nx * sizeof(*n->xbuf))) ||
                !(n->xbuf_len = pch_arena_alloc(e->arena, nx * sizeof(*n->xbuf_len)))) { rc = OOM(); goto done; }
            for (k = 0; k < nx; k++) { n->xbuf[k] = fs.p[inl + k]; n->xbuf_len[k] = fs.len[inl + k]; }
            n->n_xbufs = (uint32_t)nx;
        }
    }
    if (set_meta(e, n, &meta)) { rc = OOM(); goto done; }
    if (a->validity && (rc = validity_node(e, a->validity, a->len, &n->children[0], err))) goto done;
    *out = n;
done:
    ZSTD_freeCDict(cd);
    pch_buf_dispose(&plain);
    pch_buf_dispose(&meta);
    pch_free(e->ctx, (void *)fs.p);
    pch_free(e->ctx, fs.len);
    pch_free(e->ctx, fcut);
    return rc;
}

/* Copy every buffer of a node tree into the arena (the tree outlives a temporary array). */
static int own_tree(pch_vx_encoder *e, pch_vx_enode *x, pch_error *err)
{
    for (uint32_t k = 0; k < x->n_bufs; k++)
        if (x->buf_len[k] && !(x->buf[k] = pch_arena_memdup(e->arena, x->buf[k], x->buf_len[k]))) return OOM();
    for (uint32_t k = 0; k < x->n_xbufs; k++)
        if (x->xbuf_len[k] && !(x->xbuf[k] = pch_arena_memdup(e->arena, x->xbuf[k], x->xbuf_len[k]))) return OOM();
    for (uint32_t c = 0; c < x->n_children; c++) PCH_TRY(own_tree(e, x->children[c], err));
    return PCH_OK;
}

/* Run-end: runs of equal (validity, value). */
static int runend_node(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, int *ok, pch_error *err)
{
    uint64_t nr = 0, *ends, *heads;
    pch_vx_array *vals = NULL;
    pch_vx_enode *n;
    ivals ev;
    pch_buf meta;
    int rc;
    *ok = 0;
    if (a->len == 0) return PCH_OK;
    for (uint64_t i = 1; i < a->len; i++) {
        int vi = pch_vx_array_is_valid(a, i), vp = pch_vx_array_is_valid(a, i - 1);
        if (vi != vp || (vi && !value_eq(a, i, i - 1))) nr++;
    }
    nr++;
    if (nr * 4 > a->len) return PCH_OK;
    ends = pch_arena_alloc(e->arena, (size_t)nr * 8);
    heads = pch_arena_alloc(e->arena, (size_t)nr * 8);
    if (!ends || !heads) return OOM();
    nr = 0;
    heads[0] = 0;
    for (uint64_t i = 1; i < a->len; i++) {
        int vi = pch_vx_array_is_valid(a, i), vp = pch_vx_array_is_valid(a, i - 1);
        if (vi != vp || (vi && !value_eq(a, i, i - 1))) { ends[nr++] = i; heads[nr] = i; }
    }
    ends[nr++] = a->len;
    if (!(n = mk(e, PCH_VX_E_RUNEND, 2))) return OOM();
    PCH_TRY(narrow(e, ends, nr, a->len, &ev, err));
    PCH_TRY(int_simple(e, &ev, &n->children[0], err));
    if ((rc = pch_vx__array_take(&vals, a, heads, nr, err))) return rc;
    rc = pch_vx__encode_canonical(e, vals, &n->children[1], err);
    if (!rc) rc = own_tree(e, n->children[1], err);
    pch_vx_array_free(vals);
    if (rc) return rc;
    pch_buf_init(&meta, e->ctx);
    pch_vx__pb_uint(&meta, 1, ev.ptype);
    pch_vx__pb_uint(&meta, 2, nr);
    rc = set_meta(e, n, &meta);
    pch_buf_dispose(&meta);
    if (rc) return OOM();
    *out = n;
    *ok = 1;
    return PCH_OK;
}

/* Sparse with fill = null (mostly-null lanes) or the most common value of a sample. */
static int sparse_node(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, int *ok, pch_error *err)
{
    uint64_t nnull, fill_row = UINT64_MAX, np = 0, *idx;
    pch_vx_scalar s;
    pch_vx_array *vals = NULL;
    pch_vx_enode *n;
    pch_buf meta, pm, fb;
    ivals iv;
    int rc, fill_null;
    uint8_t *fp;
    *ok = 0;
    if (a->len < 16) return PCH_OK;
    pch_vx__array_null_count(a, &nnull);
    fill_null = nnull * 8 >= a->len * 7;
    if (!fill_null) {
        /* candidate: the value at row 0 if valid and dominant */
        if (!pch_vx_array_is_valid(a, 0)) return PCH_OK;
        fill_row = 0;
    }
    for (uint64_t i = 0; i < a->len; i++) {
        int v = pch_vx_array_is_valid(a, i);
        if (fill_null ? v : (!v || !value_eq(a, i, fill_row))) np++;
    }
    if (np * 8 > a->len) return PCH_OK;
    if (!(idx = pch_arena_alloc(e->arena, (size_t)(np ? np : 1) * 8))) return OOM();
    np = 0;
    for (uint64_t i = 0; i < a->len; i++) {
        int v = pch_vx_array_is_valid(a, i);
        if (fill_null ? v : (!v || !value_eq(a, i, fill_row))) idx[np++] = i;
    }
    if (!(n = mk(e, PCH_VX_E_SPARSE, 2))) return OOM();
    if (fill_null) { memset(&s, 0, sizeof s); s.kind = PCH_VX_SV_NULL; }
    else pch_vx__scalar_of(&s, a, fill_row);
    pch_buf_init(&fb, e->ctx);
    if (pch_vx__scalar_encode(&fb, &s) || !(fp = pch_arena_memdup(e->arena, fb.data, fb.len))) { pch_buf_dispose(&fb); return OOM(); }
    add_buf(n, fp, fb.len, 0);
    pch_buf_dispose(&fb);
    PCH_TRY(narrow(e, idx, np, a->len, &iv, err));
    PCH_TRY(int_simple(e, &iv, &n->children[0], err));
    if ((rc = pch_vx__array_take(&vals, a, idx, np, err))) return rc;
    {
        pch_vx_encoder sub = *e;
        sub.compress = 0;
        rc = pch_vx__encode_canonical(&sub, vals, &n->children[1], err);
    }
    if (!rc) rc = own_tree(e, n->children[1], err);
    pch_vx_array_free(vals);
    if (rc) return rc;
    pch_buf_init(&meta, e->ctx);
    pch_buf_init(&pm, e->ctx);
    pch_vx__pb_uint(&pm, 1, np);
    pch_vx__pb_uint(&pm, 3, iv.ptype);
    pch_vx__pb_bytes(&meta, 1, pm.data ? pm.data : (const uint8_t *)"", pm.len);
    rc = set_meta(e, n, &meta);
    pch_buf_dispose(&meta);
    pch_buf_dispose(&pm);
    if (rc) return OOM();
    *out = n;
    *ok = 1;
    return PCH_OK;
}

/* ALP-RD, "real doubles" (vortex-format.md §6.4 `vortex.alprd`; Afroozeh et al., "ALP:
** Adaptive Lossless floating-Point Compression", SIGMOD 2024, §3.4). Each float's bit pattern
** is cut into a left part of 1..16 bits, coded through a dictionary of at most 8 entries
** (others become patches holding the left bits), and a right part bit-packed as is. It suits
** float lanes with random mantissas, such as float32 logprobs (RFC-0006 §8.1): their sign and
** exponent bits take a handful of values, which neither zstd nor FoR exploit. */
#define ALPRD_MAX_DICT 8
#define ALPRD_SAMPLE 4096

static int u16_cmp(const void *x, const void *y)
{
    uint16_t a = *(const uint16_t *)x, b = *(const uint16_t *)y;
    return (a > b) - (a < b);
}

/* The most frequent left parts at one cut (at most ALPRD_MAX_DICT; count desc, then value asc).
** top[0..n) are the sample's top-16 bits, sorted, so the values v >> shift that share a left
** part are adjacent. Returns how many sample values the dictionary covers. */
static uint64_t alprd_top(const uint16_t *top, uint64_t n, unsigned shift, uint16_t *dict, unsigned *dn)
{
    uint64_t cnt[ALPRD_MAX_DICT], covered = 0;
    *dn = 0;
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i;
        uint16_t l = (uint16_t)(top[i] >> shift);
        unsigned k;
        while (j < n && (top[j] >> shift) == l) j++;
        for (k = *dn; k > 0 && cnt[k - 1] < j - i; k--) {
            if (k < ALPRD_MAX_DICT) { cnt[k] = cnt[k - 1]; dict[k] = dict[k - 1]; }
        }
        if (k < ALPRD_MAX_DICT) {
            cnt[k] = j - i;
            dict[k] = l;
            if (*dn < ALPRD_MAX_DICT) (*dn)++;
        }
        i = j;
    }
    for (unsigned k = 0; k < *dn; k++) covered += cnt[k];
    return covered;
}

static unsigned alprd_code_width(unsigned dn) { unsigned w = 1; while ((1u << w) < dn) w++; return w; }

static uint64_t alprd_bits(const pch_vx_array *a, unsigned wide, uint64_t i)
{
    return wide ? pch_load_le64(a->data + 8 * i) : pch_load_le32(a->data + 4 * i);
}

static int alprd_node(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, int *ok, pch_error *err)
{
    unsigned p = a->dtype->ptype, wide = p == PCH_VX_F64, up = wide ? PCH_VX_U64 : PCH_VX_U32, bits = wide ? 64 : 32;
    unsigned rbw = 0, dn = 0, cut;
    uint16_t dict[ALPRD_MAX_DICT], *top, *left, *exc_val;
    uint8_t *code_of, *right;
    uint64_t ns = 0, stride, nexc = 0, *exc_pos, rmask;
    double best = (double)bits - 0.5;   /* must beat plain by half a bit a value */
    pch_vx_enode *n;
    pch_buf meta, pm, dv;
    ivals iv;
    int rc;
    *ok = 0;
    if (a->dtype->kind != PCH_VX_PRIMITIVE || (p != PCH_VX_F32 && p != PCH_VX_F64) || a->len < 64) return PCH_OK;
    /* choose the cut on an evenly spread sample of the valid values */
    if (!(top = pch_malloc(e->ctx, ALPRD_SAMPLE * sizeof *top))) return OOM();
    stride = a->len / ALPRD_SAMPLE + 1;
    for (uint64_t i = 0; i < a->len && ns < ALPRD_SAMPLE; i += stride)
        if (!a->validity || pch_vx__bit(a->validity, i)) top[ns++] = (uint16_t)(alprd_bits(a, wide, i) >> (bits - 16));
    qsort(top, (size_t)ns, sizeof *top, u16_cmp);
    for (cut = 1; ns && cut <= 16; cut++) {
        uint16_t d[ALPRD_MAX_DICT];
        unsigned ddn;
        uint64_t cov = alprd_top(top, ns, 16 - cut, d, &ddn);
        double est = (double)(bits - cut) + alprd_code_width(ddn) + (double)(ns - cov) * 32.0 / (double)ns;
        if (est < best) { best = est; rbw = bits - cut; dn = ddn; memcpy(dict, d, sizeof d); }
    }
    pch_free(e->ctx, top);
    if (!dn) return PCH_OK;
    rmask = (((uint64_t)1) << rbw) - 1;
    left = pch_arena_alloc(e->arena, (size_t)a->len * 2);
    right = pch_arena_alloc(e->arena, (size_t)a->len * (bits / 8));
    code_of = pch_malloc(e->ctx, (size_t)1 << (bits - rbw));
    if (!left || !right || !code_of) { pch_free(e->ctx, code_of); return OOM(); }
    memset(code_of, 0xff, (size_t)1 << (bits - rbw));
    for (unsigned k = dn; k-- > 0;) code_of[dict[k]] = (uint8_t)k;
    for (uint64_t i = 0; i < a->len; i++) {   /* null rows: code 0, right part 0 */
        uint64_t v = (!a->validity || pch_vx__bit(a->validity, i)) ? alprd_bits(a, wide, i) : (uint64_t)dict[0] << rbw;
        uint8_t k = code_of[v >> rbw];
        nexc += k == 0xff;
        left[i] = k == 0xff ? 0 : k;
        if (wide) pch_store_le64(right + 8 * i, v & rmask);
        else pch_store_le32(right + 4 * i, (uint32_t)(v & rmask));
    }
    exc_pos = pch_arena_alloc(e->arena, (size_t)(nexc ? nexc : 1) * 8);
    exc_val = pch_arena_alloc(e->arena, (size_t)(nexc ? nexc : 1) * 2);
    if (!exc_pos || !exc_val) { pch_free(e->ctx, code_of); return OOM(); }
    nexc = 0;
    for (uint64_t i = 0; i < a->len; i++) {
        uint64_t l;
        if (left[i] || (a->validity && !pch_vx__bit(a->validity, i))) continue;
        l = alprd_bits(a, wide, i) >> rbw;
        if (code_of[l] == 0xff) { exc_pos[nexc] = i; exc_val[nexc++] = (uint16_t)l; }
    }
    pch_free(e->ctx, code_of);
    if (!(n = mk(e, PCH_VX_E_ALPRD, nexc ? 4 : 2))) return OOM();
    iv.ptype = PCH_VX_U16; iv.len = a->len; iv.data = (const uint8_t *)left; iv.validity = a->validity;
    PCH_TRY(int_simple(e, &iv, &n->children[0], err));
    iv.ptype = up; iv.data = right; iv.validity = NULL;
    PCH_TRY(int_simple(e, &iv, &n->children[1], err));
    if (nexc) {
        PCH_TRY(narrow(e, exc_pos, nexc, a->len, &iv, err));
        PCH_TRY(int_simple(e, &iv, &n->children[2], err));
    }
    pch_buf_init(&meta, e->ctx);
    pch_buf_init(&pm, e->ctx);
    pch_buf_init(&dv, e->ctx);
    pch_vx__pb_uint(&meta, 1, rbw);
    pch_vx__pb_uint(&meta, 2, dn);
    for (unsigned k = 0; k < dn; k++) pch_vx__pb_varint(&dv, dict[k]);
    pch_vx__pb_bytes(&meta, 3, dv.data ? dv.data : (const uint8_t *)"", dv.len);  /* packed repeated uint32 */
    pch_vx__pb_uint(&meta, 4, PCH_VX_U16);
    if (nexc) {
        pch_vx__pb_uint(&pm, 1, nexc);
        pch_vx__pb_uint(&pm, 3, iv.ptype);
        pch_vx__pb_bytes(&meta, 5, pm.data, pm.len);
    }
    rc = set_meta(e, n, &meta) || pm.oom || dv.oom ? PCH_ENOMEM : PCH_OK;
    pch_buf_dispose(&meta);
    pch_buf_dispose(&pm);
    pch_buf_dispose(&dv);
    if (rc) return OOM();
    if (nexc) {
        iv.ptype = PCH_VX_U16; iv.len = nexc; iv.data = (const uint8_t *)exc_val; iv.validity = NULL;
        PCH_TRY(int_simple(e, &iv, &n->children[3], err));
    }
    *out = n;
    *ok = 1;
    return PCH_OK;
}

/* FSST (legacy wire form of §6.4, read by every version since 0.36): buffers [symbols u64 LE,
** symbol lengths u8], children [codes = vortex.varbin Binary with the array's nullability
** (its offsets + validity), uncompressed lengths (non-null unsigned)], metadata field 1 =
** uncompressed_lengths ptype. Null rows have no codes and length 0. */
static int fsst_node(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, int *ok, pch_error *err)
{
    pch_vx_fsst_table *t;
    pch_vx_array codes;
    pch_vx_dtype bd;
    pch_vx_enode *n;
    uint8_t *syms, *lens, *cbuf;
    uint64_t *ul, maxl = 0;
    size_t cap, pos = 0;
    ivals uv;
    pch_buf meta;
    int rc;
    *ok = 0;
    if (e->probe_fsst && e->probe_fsst_of == a) {   /* trained by fsst_hopeless on a */
        t = e->probe_fsst;
        e->probe_fsst = NULL;
        e->probe_fsst_of = NULL;
    } else {
        if (!(t = pch_malloc(e->ctx, sizeof *t))) return OOM();
        if ((rc = pch_vx__fsst_train_with(t, e->ctx, a, NULL, e->fsst_pairs, err))) goto done;
    }
    if (!pch_mul_size(&cap, a->data_len, 2) || !pch_add_size(&cap, cap, 1)) { rc = OOM(); goto done; }
    syms = pch_arena_alloc(e->arena, (size_t)t->n * 8 + 1);
    lens = pch_arena_alloc(e->arena, (size_t)t->n + 1);
    cbuf = pch_arena_alloc(e->arena, cap);
    ul = pch_arena_alloc(e->arena, (size_t)(a->len ? a->len : 1) * 8);
    memset(&codes, 0, sizeof codes);
    codes.offsets = pch_arena_alloc(e->arena, (size_t)(a->len + 1) * 8);
    if (!syms || !lens || !cbuf || !ul || !codes.offsets) { rc = OOM(); goto done; }
    for (uint32_t i = 0; i < t->n; i++) { pch_store_le64(syms + 8 * (size_t)i, t->sym[i]); lens[i] = t->len[i]; }
    codes.offsets[0] = 0;
    for (uint64_t i = 0; i < a->len; i++) {
        size_t l = (size_t)(a->offsets[i + 1] - a->offsets[i]);
        if (pch_vx_array_is_valid(a, i)) pos += pch_vx__fsst_compress(t, a->data + a->offsets[i], l, cbuf + pos);
        else l = 0;
        ul[i] = l;
        if (l > maxl) maxl = l;
        codes.offsets[i + 1] = (int64_t)pos;
    }
    memset(&bd, 0, sizeof bd);
    bd.kind = PCH_VX_BINARY;
    bd.nullable = a->dtype->nullable;
    codes.dtype = &bd;
    codes.len = a->len;
    codes.data = cbuf;
    codes.data_len = pos;
    codes.validity = a->validity;
    codes.ctx = e->ctx;
    if (!(n = mk(e, PCH_VX_E_FSST, 2))) { rc = OOM(); goto done; }
    add_buf(n, syms, (size_t)t->n * 8, 3);
    add_buf(n, lens, t->n, 0);
    if ((rc = varbin_node(e, &codes, &n->children[0], err))) goto done;
    if ((rc = narrow(e, ul, a->len, maxl, &uv, err))) goto done;
    if ((rc = int_simple(e, &uv, &n->children[1], err))) goto done;
    pch_buf_init(&meta, e->ctx);
    pch_vx__pb_uint(&meta, 1, uv.ptype);
    rc = set_meta(e, n, &meta) ? OOM() : PCH_OK;
    pch_buf_dispose(&meta);
    if (rc) goto done;
    *out = n;
    *ok = 1;
done:
    pch_free(e->ctx, t);
    return rc;
}

int pch_vx__encode_fsst(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err)
{
    int ok;
    if (a->dtype->kind != PCH_VX_UTF8 && a->dtype->kind != PCH_VX_BINARY)
        return pch_error_set(err, PCH_EINVAL, "vortex fsst: not a utf8/binary array");
    return fsst_node(e, a, out, &ok, err);
}

/* ------------------------------------------------------------------ canonical */

static int varbin_node(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err)
{
    pch_vx_enode *n = mk(e, PCH_VX_E_VARBIN, a->validity ? 2 : 1);
    int64_t last = a->offsets[a->len];
    unsigned op = last <= INT32_MAX ? PCH_VX_I32 : PCH_VX_I64;
    uint8_t *od;
    ivals ov;
    pch_buf meta;
    if (!n) return OOM();
    add_buf(n, a->data, a->data_len, 0);
    if (!(od = pch_arena_alloc(e->arena, (size_t)(a->len + 1) * pch_vx_ptype_width(op)))) return OOM();
    for (uint64_t i = 0; i <= a->len; i++) pch_vx__store_uint(od, op, i, (uint64_t)a->offsets[i]);
    ov.ptype = op;
    ov.len = a->len + 1;
    ov.data = od;
    ov.validity = NULL;
    PCH_TRY(int_simple(e, &ov, &n->children[0], err));
    if (a->validity) PCH_TRY(validity_node(e, a->validity, a->len, &n->children[1], err));
    pch_buf_init(&meta, e->ctx);
    pch_vx__pb_uint(&meta, 1, op);
    if (set_meta(e, n, &meta)) { pch_buf_dispose(&meta); return OOM(); }
    pch_buf_dispose(&meta);
    *out = n;
    return PCH_OK;
}

static int encode_rec(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err);

static int canonical(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err,
                     int recurse_compress)
{
    const pch_vx_dtype *d = a->dtype;
    pch_vx_enode *n = NULL;
    pch_buf meta;
    int (*child)(pch_vx_encoder *, const pch_vx_array *, pch_vx_enode **, pch_error *) =
        recurse_compress ? encode_rec : pch_vx__encode_canonical;
    *out = NULL;
    switch (d->kind) {
    case PCH_VX_NULL:
        if (!(n = mk(e, PCH_VX_E_NULL, 0))) return OOM();
        break;
    case PCH_VX_BOOL:
        if (!(n = mk(e, PCH_VX_E_BOOL, a->validity ? 1 : 0))) return OOM();
        add_buf(n, a->data, (size_t)((a->len + 7) / 8), 0);
        if (a->validity) PCH_TRY(validity_node(e, a->validity, a->len, &n->children[0], err));
        break;
    case PCH_VX_PRIMITIVE:
        PCH_TRY(prim_node(e, d->ptype, a->data, a->len, a->validity, &n, err));
        break;
    case PCH_VX_DECIMAL: {
        unsigned w = pch_vx_decimal_width(d->precision);
        if (!(n = mk(e, PCH_VX_E_DECIMAL, a->validity ? 1 : 0))) return OOM();
        add_buf(n, a->data, (size_t)a->len * w, log2u(w > 16 ? 16 : w));
        pch_buf_init(&meta, e->ctx);
        pch_vx__pb_uint(&meta, 1, log2u(w));
        if (set_meta(e, n, &meta)) { pch_buf_dispose(&meta); return OOM(); }
        pch_buf_dispose(&meta);
        if (a->validity) PCH_TRY(validity_node(e, a->validity, a->len, &n->children[0], err));
        break;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY:
        PCH_TRY(varbin_node(e, a, &n, err));
        break;
    case PCH_VX_STRUCT: {
        uint32_t first = a->validity ? 1 : 0;
        if (!(n = mk(e, PCH_VX_E_STRUCT, d->n_fields + first))) return OOM();
        if (first) PCH_TRY(validity_node(e, a->validity, a->len, &n->children[0], err));
        for (uint32_t i = 0; i < d->n_fields; i++) {
            const pch_vx_array *saved = e->cut_arr;
            int rc;
            if (saved == a) e->cut_arr = a->children[i];   /* fields share the rows' cuts */
            rc = child(e, a->children[i], &n->children[first + i], err);
            e->cut_arr = saved;
            PCH_TRY(rc);
        }
        break;
    }
    case PCH_VX_LIST: {
        int64_t last = a->offsets[a->len];
        unsigned op = last <= INT32_MAX ? PCH_VX_I32 : PCH_VX_I64;
        uint8_t *od;
        ivals ov;
        if (!(n = mk(e, PCH_VX_E_LIST, a->validity ? 3 : 2))) return OOM();
        if (e->cut_arr == a && e->frame_bytes) {
            /* the child's cuts: the offsets at the rows' cuts, so a frame of the values
            ** holds whole rows of this list (and so whole trajectories) */
            pch_vx_encoder sub = *e;
            uint64_t nc = e->cuts ? e->n_cuts : a->len + 1, *cc;
            int rc;
            if (!(cc = pch_arena_alloc(e->arena, (size_t)nc * sizeof(*cc)))) return OOM();
            for (uint64_t k = 0; k < nc; k++) cc[k] = (uint64_t)a->offsets[e->cuts ? e->cuts[k] : k];
            sub.cut_arr = a->children[0];
            sub.cuts = cc;
            sub.n_cuts = nc;
            rc = child(&sub, a->children[0], &n->children[0], err);
            PCH_TRY(rc);
        } else {
            PCH_TRY(child(e, a->children[0], &n->children[0], err));
        }
        if (!(od = pch_arena_alloc(e->arena, (size_t)(a->len + 1) * pch_vx_ptype_width(op)))) return OOM();
        for (uint64_t i = 0; i <= a->len; i++) pch_vx__store_uint(od, op, i, (uint64_t)a->offsets[i]);
        ov.ptype = op; ov.len = a->len + 1; ov.data = od; ov.validity = NULL;
        /* a framed lane's top-level offsets (one a trajectory) stay plain with plain_offsets:
        ** a point read takes two of them, where a bit-packed chunk of 1,000 trajectories costs
        ** it a 2 KiB FastLanes block per lane (measured at 32 MiB clusters: 313 -> 238 KB a
        ** read, +2 % bytes; docs/vortex-projection.md §3) */
        if (recurse_compress && !(e->plain_offsets && e->cut_arr == a && !e->cuts)) PCH_TRY(int_simple(e, &ov, &n->children[1], err));
        else PCH_TRY(prim_node(e, op, od, a->len + 1, NULL, &n->children[1], err));
        if (a->validity) PCH_TRY(validity_node(e, a->validity, a->len, &n->children[2], err));
        pch_buf_init(&meta, e->ctx);
        pch_vx__pb_uint(&meta, 1, (uint64_t)last);
        pch_vx__pb_uint(&meta, 2, op);
        if (set_meta(e, n, &meta)) { pch_buf_dispose(&meta); return OOM(); }
        pch_buf_dispose(&meta);
        break;
    }
    case PCH_VX_FIXED_SIZE_LIST:
        if (!(n = mk(e, PCH_VX_E_FSL, a->validity ? 2 : 1))) return OOM();
        PCH_TRY(child(e, a->children[0], &n->children[0], err));
        if (a->validity) PCH_TRY(validity_node(e, a->validity, a->len, &n->children[1], err));
        break;
    case PCH_VX_EXTENSION:
        if (!(n = mk(e, PCH_VX_E_EXT, 1))) return OOM();
        PCH_TRY(child(e, a->children[0], &n->children[0], err));
        break;
    default:
        return pch_error_set(err, PCH_EUNSUPPORTED, "vortex encode: dtype kind %u", d->kind);
    }
    *out = n;
    return PCH_OK;
}

int pch_vx__encode_canonical(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err)
{
    return canonical(e, a, out, err, 0);
}

/* ------------------------------------------------------------------ sampling compressor */

enum { C_CANON, C_CONST, C_DICT, C_FORBP, C_ZSTD, C_RUNEND, C_SPARSE, C_FSST, C_ALPRD, C_N };

static int try_candidate(pch_vx_encoder *e, const pch_vx_array *a, int c, pch_vx_enode **out,
                         int *ok, pch_error *err)
{
    const pch_vx_dtype *d = a->dtype;
    *ok = 0;
    *out = NULL;
    switch (c) {
    case C_CANON:
        *ok = 1;
        return canonical(e, a, out, err, 1);
    case C_CONST: {
        uint64_t nn;
        pch_vx_scalar s;
        pch_vx__array_null_count(a, &nn);
        if (a->len == 0) return PCH_OK;
        if (nn == a->len) { memset(&s, 0, sizeof s); s.kind = PCH_VX_SV_NULL; }
        else if (nn) return PCH_OK;
        else {
            if (d->kind == PCH_VX_BOOL) {
                int b0 = pch_vx__bit(a->data, 0);
                for (uint64_t i = 1; i < a->len; i++) if (pch_vx__bit(a->data, i) != b0) return PCH_OK;
            } else if (d->kind == PCH_VX_PRIMITIVE || d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY) {
                for (uint64_t i = 1; i < a->len; i++) if (!value_eq(a, i, 0)) return PCH_OK;
            } else {
                return PCH_OK;
            }
            pch_vx__scalar_of(&s, a, 0);
        }
        *ok = 1;
        return const_node(e, &s, out, err);
    }
    case C_DICT:
        if (d->kind != PCH_VX_PRIMITIVE && d->kind != PCH_VX_UTF8 && d->kind != PCH_VX_BINARY) return PCH_OK;
        return dict_node(e, a, a->len / 2 < 65536 ? a->len / 2 + 1 : 65536, out, ok, err);
    case C_FORBP: {
        ivals v;
        if (!pch_vx__is_int(d)) return PCH_OK;
        v.ptype = d->ptype; v.len = a->len; v.data = a->data; v.validity = a->validity;
        return for_bp(e, &v, out, ok, err);
    }
    case C_ZSTD:
        if (d->kind != PCH_VX_PRIMITIVE && d->kind != PCH_VX_UTF8 && d->kind != PCH_VX_BINARY) return PCH_OK;
        *ok = 1;
        return zstd_node(e, a, out, err);
    case C_RUNEND:
        if (d->kind != PCH_VX_PRIMITIVE && d->kind != PCH_VX_UTF8 && d->kind != PCH_VX_BINARY) return PCH_OK;
        return runend_node(e, a, out, ok, err);
    case C_SPARSE:
        if (d->kind != PCH_VX_PRIMITIVE && d->kind != PCH_VX_UTF8 && d->kind != PCH_VX_BINARY) return PCH_OK;
        return sparse_node(e, a, out, ok, err);
    case C_FSST:
        if (!PCH_VX_ENABLE_FSST || (d->kind != PCH_VX_UTF8 && d->kind != PCH_VX_BINARY)) return PCH_OK;
        return fsst_node(e, a, out, ok, err);
    case C_ALPRD:
        return alprd_node(e, a, out, ok, err);
    default: return PCH_OK;
    }
}

/* Bits per byte of the bytes of a's valid values (order 0, the first 64 KiB of them). */
static double byte_entropy(const pch_vx_array *a)
{
    uint32_t h[256] = { 0 };
    uint64_t n = 0;
    double bits = 0;
    for (uint64_t i = 0; i < a->len && n < ((uint64_t)64 << 10); i++) {
        if (!pch_vx_array_is_valid(a, i)) continue;
        for (uint64_t k = (uint64_t)a->offsets[i]; k < (uint64_t)a->offsets[i + 1]; k++) h[a->data[k]]++;
        n += (uint64_t)(a->offsets[i + 1] - a->offsets[i]);
    }
    for (int b = 0; b < 256 && n; b++)
        if (h[b]) bits -= (double)h[b] / (double)n * log2((double)h[b] / (double)n);
    return bits;
}

/* Skip encoding the sample with FSST when the code bytes its training sample predicts (x 0.9,
** plus the symbol table) cannot beat the best candidate so far: training costs less than a
** full greedy pass over the sample. Bytes near 8 bits of entropy each (digests, compressed or
** random ids) are hopeless without training: FSST's symbols need repeated substrings, which
** such bytes lack, and their training was the slowest (21 ms for 1,024 BLAKE3 digests, a fifth
** of an incremental sync's time, measured); their repeats are the dictionary's to take. */
#define FSST_HOPELESS_ENTROPY 7.5
static int fsst_hopeless(pch_vx_encoder *e, const pch_vx_array *a, uint64_t best, int *out, pch_error *err)
{
    pch_vx_fsst_table *t;
    uint32_t ratio = 65536;
    uint64_t valid_bytes = 0;
    int rc;
    *out = 0;
    if (best == UINT64_MAX) return PCH_OK;
    if (byte_entropy(a) > FSST_HOPELESS_ENTROPY) { *out = 1; return PCH_OK; }
    for (uint64_t i = 0; i < a->len; i++)
        if (pch_vx_array_is_valid(a, i)) valid_bytes += (uint64_t)(a->offsets[i + 1] - a->offsets[i]);
    /* exact, before training: a code byte stands for at most 8 input bytes and the codes are
    ** stored as they are (fsst_node), so FSST is never below valid_bytes / 8. A lane whose
    ** dictionary or zstd form is already smaller (names, ids, repeated values) trains no
    ** table: an incremental sync's small L0 file trained ~200, 0.1 CPU-seconds (measured). */
    if (valid_bytes / 8 >= best) { *out = 1; return PCH_OK; }
    if (!(t = pch_malloc(e->ctx, sizeof *t))) return OOM();
    rc = pch_vx__fsst_train_with(t, e->ctx, a, &ratio, e->fsst_pairs, err);
    if (!rc) *out = (valid_bytes * ratio / 65536) * 9 / 10 + 9 * (uint64_t)t->n > best;
    if (!rc && !*out) {           /* fsst_node encodes this probe next: with this table */
        pch_free(e->ctx, e->probe_fsst);
        e->probe_fsst = t;
        e->probe_fsst_of = a;
        return rc;
    }
    pch_free(e->ctx, t);
    return rc;
}

static int encode_rec(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err)
{
    const pch_vx_dtype *d = a->dtype;
    pch_vx_array *sample = NULL;
    const pch_vx_array *probe = a;
    pch_vx_enode *best_node = NULL;  /* the best candidate's node when the probe is a itself */
    uint64_t best_size = UINT64_MAX, dict_size = UINT64_MAX, zstd_size = UINT64_MAX;
    int best = C_CANON, rc = PCH_OK, fsst_tried = 0, dict_over_zstd = 0;
    uint64_t sample_rows = e->sample_rows ? e->sample_rows : 1024;
    if (!e->compress) return canonical(e, a, out, err, 0);
    if (d->kind == PCH_VX_STRUCT || d->kind == PCH_VX_LIST || d->kind == PCH_VX_FIXED_SIZE_LIST ||
        d->kind == PCH_VX_EXTENSION || d->kind == PCH_VX_NULL || d->kind == PCH_VX_DECIMAL) {
        /* containers: compress the children; an all-null container becomes a constant */
        int ok;
        if (d->kind != PCH_VX_NULL && d->kind != PCH_VX_EXTENSION) {
            PCH_TRY(try_candidate(e, a, C_CONST, out, &ok, err));
            if (ok) return PCH_OK;
        }
        return canonical(e, a, out, err, 1);
    }
    if (a->len > 2 * sample_rows) {
        /* 16 evenly spread runs of sample_rows/16 contiguous rows (BtrBlocks-style) */
        uint64_t runs = 16, run_len = sample_rows / 16, k = 0, *idx;
        if (!(idx = pch_malloc(e->ctx, (size_t)(runs * run_len) * 8))) return OOM();
        for (uint64_t r = 0; r < runs; r++) {
            uint64_t start = r * (a->len - run_len) / (runs - 1);
            for (uint64_t j = 0; j < run_len; j++) idx[k++] = start + j;
        }
        rc = pch_vx__array_take(&sample, a, idx, k, err);
        pch_free(e->ctx, idx);
        if (rc) return rc;
        probe = sample;
    }
    for (int c = 0; c < C_N && !rc; c++) {
        pch_vx_enode *n;
        int ok;
        if (c == C_FSST && PCH_VX_ENABLE_FSST && (d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY)) {
            int hopeless = 0;
            if (e->fsst_losses && *e->fsst_losses >= PCH_VX_FSST_LOSSES && e->chunk % PCH_VX_FSST_REPROBE != 0) continue;
            fsst_tried = 1;
            if ((rc = fsst_hopeless(e, probe, best_size, &hopeless, err))) break;
            if (hopeless) continue;
        }
        rc = try_candidate(e, probe, c, &n, &ok, err);
        if (e->probe_fsst) {          /* not taken: drop it before the probe can be freed */
            pch_free(e->ctx, e->probe_fsst);
            e->probe_fsst = NULL;
            e->probe_fsst_of = NULL;
        }
        if (rc) break;
        if (ok) {
            /* zstd decodes slower and has no random access: it must win by a quarter */
            uint64_t s = c == C_ZSTD ? tree_size(n) + tree_size(n) / 4 : tree_size(n);
            if (c == C_DICT) dict_size = tree_size(n);
            if (c == C_ZSTD) zstd_size = tree_size(n);
            if (s < best_size) { best_size = s; best = c; best_node = n; }
        }
    }
    pch_vx_array_free(sample);
    if (rc) return rc;
    /* Text that a dictionary holds keeps it unless zstd is less than half its size: a scan
    ** filters and groups on the codes, testing each distinct value once (RFC-0006 §13.3),
    ** where zstd text must be decompressed and compared row by row. Names (models, tools)
    ** repeat in long runs that zstd packs tighter, but their lanes are a few hundred KB. A
    ** chunk of a few rows gains nothing and keeps the smaller form. */
    if (best == C_ZSTD && (d->kind == PCH_VX_UTF8 || d->kind == PCH_VX_BINARY) && a->len >= 256 &&
        dict_size <= 2 * zstd_size) {
        best = C_DICT;
        dict_over_zstd = 1;
    }
    if (fsst_tried && e->fsst_losses) *e->fsst_losses = best == C_FSST ? 0 : *e->fsst_losses + 1;
    /* the whole array was the probe: its trial is the encoding (a content chunk is not
    ** compressed twice); the nodes of the other candidates stay unused in the arena */
    if (probe == a && best_node && !dict_over_zstd) {
        *out = best_node;
        return PCH_OK;
    }
    {
        int ok;
        PCH_TRY(try_candidate(e, a, best, out, &ok, err));
        if (!ok && dict_over_zstd) PCH_TRY(try_candidate(e, a, C_ZSTD, out, &ok, err));   /* too many values */
        if (!ok) return canonical(e, a, out, err, 1);  /* sample was not representative */
    }
    return PCH_OK;
}

int pch_vx__encode_zstd(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err)
{
    const pch_vx_dtype *d = a->dtype;
    if (d->kind != PCH_VX_PRIMITIVE && d->kind != PCH_VX_UTF8 && d->kind != PCH_VX_BINARY)
        return pch_error_set(err, PCH_EINVAL, "vortex zstd: not a primitive/utf8/binary array");
    return zstd_node(e, a, out, err);
}

int pch_vx__encode(pch_vx_encoder *e, const pch_vx_array *a, pch_vx_enode **out, pch_error *err)
{
    return encode_rec(e, a, out, err);
}
