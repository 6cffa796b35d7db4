/* Serialized arrays (vortex-format.md §6.1) and the decoders of every encoding we read
** (§6.4: canonical set + constant, dict, fastlanes.for, fastlanes.bitpacked, vortex.zstd,
** vortex.runend, vortex.sparse, vortex.zigzag, vortex.sequence, vortex.chunked, vortex.fsst,
** vortex.alprd).
**
** Segment: [pad][buf0][pad][buf1]...[pad to 8][Array FB][u32 LE FB length]; buffers in
** pre-order; each buffer padded to its declared alignment relative to the segment start.
** Decoding validates every invariant of §6 and §12.4 instead of trusting it: lengths are
** supplied by the parent and checked against buffer sizes, offsets are sorted and in range,
** UTF-8 is valid for non-null values, declared alignments meet the decoders' minimums,
** unknown or unsupported encodings fail closed. */
#include "vortex/vortex_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

#define ALPRD_DICT_MAX 16   /* the writer uses at most 8 (vortex-format.md §6.4); accept a little more */

const char *const pch_vx__enc_ids[PCH_VX_E_COUNT] = {
    "vortex.null", "vortex.bool", "vortex.primitive", "vortex.decimal", "vortex.varbin",
    "vortex.varbinview", "vortex.struct", "vortex.list", "vortex.fixed_size_list", "vortex.ext",
    "vortex.chunked", "vortex.constant", "vortex.dict", "fastlanes.for", "fastlanes.bitpacked",
    "vortex.zstd", "vortex.runend", "vortex.sparse", "vortex.zigzag", "vortex.sequence",
    "vortex.fsst", "vortex.alprd"
};

int pch_vx__enc_lookup(const char *id, size_t len)
{
    for (int i = 0; i < PCH_VX_E_COUNT; i++)
        if (strlen(pch_vx__enc_ids[i]) == len && memcmp(pch_vx__enc_ids[i], id, len) == 0) return i;
    return -1;
}

/* ------------------------------------------------------------------ serialize */

typedef struct sstate {
    pch_vx_fbb fbb;
    uint32_t n_bufs;
    const pch_vx_enode **bnode;   /* owner node of buffer i */
    uint32_t *bslot;              /* buffer slot within that node */
    uint16_t *enc_map;
    uint8_t *used;
} sstate;

static uint32_t count_bufs(const pch_vx_enode *n)
{
    uint32_t c = n->n_bufs + n->n_xbufs;
    for (uint32_t i = 0; i < n->n_children; i++) c += count_bufs(n->children[i]);
    return c;
}

static uint32_t build_node(sstate *s, const pch_vx_enode *n, uint32_t *next)
{
    uint16_t idx_in[PCH_VX_NODE_MAX_BUFS], *idx = idx_in;
    uint32_t *kids = NULL, meta, kv = 0, bv, first = *next, nb = n->n_bufs + n->n_xbufs;
    if (nb > PCH_VX_NODE_MAX_BUFS && !(idx = pch_calloc(s->fbb.ctx, nb, sizeof(*idx)))) { s->fbb.oom = PCH_ENOMEM; return 0; }
    for (uint32_t i = 0; i < nb; i++) {
        s->bnode[*next] = n;
        s->bslot[*next] = i;
        idx[i] = (uint16_t)*next;
        (*next)++;
    }
    if (n->n_children) {
        kids = pch_calloc(s->fbb.ctx, n->n_children, sizeof(uint32_t));
        if (!kids) { s->fbb.oom = PCH_ENOMEM; if (idx != idx_in) pch_free(s->fbb.ctx, idx); return 0; }
        for (uint32_t i = 0; i < n->n_children; i++) kids[i] = build_node(s, n->children[i], next);
        kv = pch_vx_fbb_offsets(&s->fbb, kids, n->n_children);
        pch_free(s->fbb.ctx, kids);
    }
    (void)first;
    meta = pch_vx_fbb_bytes(&s->fbb, n->meta, n->meta_len);
    bv = nb ? pch_vx_fbb_vector(&s->fbb, idx, nb, 2, 2) : 0;
    if (idx != idx_in) pch_free(s->fbb.ctx, idx);
    s->used[n->enc] = 1;
    pch_vx_fbb_start(&s->fbb);
    pch_vx_fbb_u16(&s->fbb, 0, s->enc_map[n->enc], 0, 0);
    pch_vx_fbb_off(&s->fbb, 1, meta);
    pch_vx_fbb_off(&s->fbb, 2, kv);
    pch_vx_fbb_off(&s->fbb, 3, bv);
    return pch_vx_fbb_end(&s->fbb);
}

int pch_vx__serialize(pch_buf *out, const pch_vx_enode *root, uint16_t *enc_map,
                      uint8_t *used, uint8_t *align_exp_out, pch_error *err)
{
    sstate s;
    uint32_t nb = count_bufs(root), next = 0, rootoff, bufvec, arr;
    uint8_t *desc = NULL, max_exp = 3;
    size_t start = out->len, pos;
    pch_bytes fb;
    int rc = PCH_OK;
    memset(&s, 0, sizeof(s));
    if (nb > 65535) return pch_error_set(err, PCH_ELIMIT, "vortex: more than 65535 buffers in one array");
    pch_vx_fbb_init(&s.fbb, out->ctx);
    s.enc_map = enc_map;
    s.used = used;
    s.bnode = pch_calloc(out->ctx, nb ? nb : 1, sizeof(*s.bnode));
    s.bslot = pch_calloc(out->ctx, nb ? nb : 1, sizeof(*s.bslot));
    desc = pch_calloc(out->ctx, nb ? nb : 1, 8);
    if (!s.bnode || !s.bslot || !desc) { rc = pch_error_set(err, PCH_ENOMEM, "vortex serialize"); goto done; }
    rootoff = build_node(&s, root, &next);
    if (s.fbb.oom || next != nb) { rc = pch_error_set(err, PCH_ENOMEM, "vortex serialize"); goto done; }
    for (uint32_t i = 0; i < nb; i++) {
        size_t bl;
        uint8_t ae;
        (void)pch_vx__ebuf(s.bnode[i], s.bslot[i], &bl, &ae);
        if (ae > max_exp) max_exp = ae;
    }
    /* buffers, each padded to its alignment relative to the segment start */
    pos = 0;
    for (uint32_t i = 0; i < nb; i++) {
        size_t bl;
        uint8_t ae;
        const uint8_t *bp = pch_vx__ebuf(s.bnode[i], s.bslot[i], &bl, &ae);
        size_t al = (size_t)1 << ae, pad = (al - pos % al) % al;
        if (bl > 0xffffffffu) { rc = pch_error_set(err, PCH_ELIMIT, "vortex: buffer above 4 GiB"); goto done; }
        if (pch_buf_zero(out, pad) || pch_buf_append(out, bp, bl)) {
            rc = pch_error_set(err, PCH_ENOMEM, "vortex serialize");
            goto done;
        }
        pch_store_le16(desc + 8 * i, (uint16_t)pad);
        desc[8 * i + 2] = ae;
        desc[8 * i + 3] = 0;
        pch_store_le32(desc + 8 * i + 4, (uint32_t)bl);
        pos += pad + bl;
    }
    bufvec = pch_vx_fbb_vector(&s.fbb, desc, nb, 8, 4);
    pch_vx_fbb_start(&s.fbb);
    pch_vx_fbb_off(&s.fbb, 0, rootoff);
    pch_vx_fbb_off(&s.fbb, 1, bufvec);
    arr = pch_vx_fbb_end(&s.fbb);
    if ((rc = pch_vx_fbb_finish(&s.fbb, arr, &fb, err))) goto done;
    if (pch_buf_pad(out, 8, 0) || pch_buf_append(out, fb.ptr, fb.len) ||
        pch_buf_put_le32(out, (uint32_t)fb.len)) {
        rc = pch_error_set(err, PCH_ENOMEM, "vortex serialize");
        goto done;
    }
    (void)start;
    *align_exp_out = max_exp;
done:
    pch_vx_fbb_dispose(&s.fbb);
    pch_free(out->ctx, s.bnode);
    pch_free(out->ctx, s.bslot);
    pch_free(out->ctx, desc);
    return rc;
}

int pch_vx__describe(pch_buf *out, const pch_vx_enode *n)
{
    PCH_TRY(pch_buf_append_str(out, pch_vx__enc_ids[n->enc]));
    if (n->n_children) {
        PCH_TRY(pch_buf_putc(out, '('));
        for (uint32_t i = 0; i < n->n_children; i++) {
            if (i) PCH_TRY(pch_buf_putc(out, ','));
            PCH_TRY(pch_vx__describe(out, n->children[i]));
        }
        PCH_TRY(pch_buf_putc(out, ')'));
    }
    return PCH_OK;
}

/* ------------------------------------------------------------------ deserialize */

/* One zstd compression and one decompression context per thread, reused by every zstd array
** it encodes or decodes (making one per array was 5 % of a narrow scan); freed when the
** thread ends. */
typedef struct zctxs { ZSTD_CCtx *c; ZSTD_DCtx *d; } zctxs;
static pthread_key_t g_zkey;
static pthread_once_t g_zonce = PTHREAD_ONCE_INIT;
static bool g_zkey_ok;
static void zctxs_free(void *p)
{
    zctxs *z = p;
    ZSTD_freeCCtx(z->c);
    ZSTD_freeDCtx(z->d);
    free(z);
}
static void zkey_init(void) { g_zkey_ok = pthread_key_create(&g_zkey, zctxs_free) == 0; }

static zctxs *thread_zctxs(void)
{
    zctxs *z;
    if (pthread_once(&g_zonce, zkey_init) != 0 || !g_zkey_ok) return NULL;
    if ((z = pthread_getspecific(g_zkey))) return z;
    if (!(z = calloc(1, sizeof *z))) return NULL;
    if (pthread_setspecific(g_zkey, z) != 0) { free(z); return NULL; }
    return z;
}

ZSTD_CCtx *pch_vx__thread_cctx(void)
{
    zctxs *z = thread_zctxs();
    if (z && !z->c) z->c = ZSTD_createCCtx();
    return z ? z->c : NULL;
}

static ZSTD_DCtx *thread_dctx(void)
{
    zctxs *z = thread_zctxs();
    if (z && !z->d) z->d = ZSTD_createDCtx();
    return z ? z->d : NULL;
}

typedef struct dstate {
    const pch_vx_decode_ctx *dc;
    pch_ctx *ctx;
    const uint8_t *seg;
    pch_vx_fbv v;
    uint32_t n_bufs;
    size_t *bpos;
    uint32_t *blen;
    uint8_t *balign;
    pch_vx_fill_fn fill;       /* sparse segment: makes a buffer's bytes present before use */
    void *fill_payload;
    bool text_codes;           /* the array being decoded may be text as codes only (decode()) */
    pch_error *err;
} dstate;

typedef struct dnode {
    pch_vx_fbt t;
    int enc;
    const uint8_t *meta;
    size_t meta_len;
    pch_vx_fbvec kids;
    pch_vx_fbvec bufs;
} dnode;

#define BAD(...) pch_error_set(ds->err, PCH_ECORRUPT, __VA_ARGS__)
#define NOMEM() pch_error_set(ds->err, PCH_ENOMEM, "vortex decode: out of memory")

static int decode(dstate *ds, const pch_vx_fbt *t, const pch_vx_dtype *dt, uint64_t len,
                  pch_vx_array **out);

static int dnode_load(dstate *ds, const pch_vx_fbt *t, dnode *n)
{
    uint16_t e;
    pch_vx_fbvec m;
    int pm;
    memset(n, 0, sizeof(*n));
    n->t = *t;
    PCH_TRY(pch_vx_fb_u16(t, 0, 0, &e));
    if (e >= ds->dc->n_specs) return BAD("vortex array: encoding index %u past %u array specs", e, ds->dc->n_specs);
    n->enc = ds->dc->spec_map[e];
    if (n->enc < 0) return pch_error_set(ds->err, PCH_EUNSUPPORTED, "vortex array: encoding index %u has an unknown id", e);
    PCH_TRY(pch_vx_fb_vector(t, 1, 1, 1, &m, &pm));
    n->meta = ds->v.buf + m.pos;
    n->meta_len = m.n;
    PCH_TRY(pch_vx_fb_vector(t, 2, 4, 4, &n->kids, NULL));
    PCH_TRY(pch_vx_fb_vector(t, 3, 2, 2, &n->bufs, NULL));
    return PCH_OK;
}

/* Buffer i of n without making its bytes present (buf_fill does, for the part used). */
static int node_buf_lazy(dstate *ds, const dnode *n, uint32_t i, unsigned min_align, uint16_t *bi)
{
    if (i >= n->bufs.n) return BAD("vortex %s: buffer %u missing", pch_vx__enc_ids[n->enc], i);
    *bi = pch_load_le16(ds->v.buf + n->bufs.pos + 2 * (size_t)i);
    if (*bi >= ds->n_bufs) return BAD("vortex %s: buffer index %u past %u", pch_vx__enc_ids[n->enc], *bi, ds->n_bufs);
    if (((size_t)1 << ds->balign[*bi]) < min_align)
        return BAD("vortex %s: buffer declares alignment %u, needs %u (§12.1)", pch_vx__enc_ids[n->enc],
                   1u << ds->balign[*bi], min_align);
    return PCH_OK;
}

static int buf_fill(dstate *ds, uint16_t bi, size_t off, size_t len)
{
    return ds->fill && len ? ds->fill(ds->fill_payload, ds->bpos[bi] + off, len, ds->err) : PCH_OK;
}

/* Buffer i of n with all of its bytes present. */
static int node_buf(dstate *ds, const dnode *n, uint32_t i, const uint8_t **p, size_t *len,
                    unsigned min_align)
{
    uint16_t bi = 0;
    PCH_TRY(node_buf_lazy(ds, n, i, min_align, &bi));
    PCH_TRY(buf_fill(ds, bi, 0, ds->blen[bi]));
    *p = ds->seg + ds->bpos[bi];
    *len = ds->blen[bi];
    return PCH_OK;
}

static int decode_range(dstate *ds, const pch_vx_fbt *t, const pch_vx_dtype *dt, uint64_t len,
                        uint64_t b, uint64_t cnt, pch_vx_array **out);

/* Child i of n (an array of len rows), rows [b, b + cnt): decode_range of its table. */
static int range_child(dstate *ds, const dnode *n, uint32_t i, const pch_vx_dtype *dt, uint64_t len,
                       uint64_t b, uint64_t cnt, pch_vx_array **out)
{
    pch_vx_fbt c;
    *out = NULL;
    if (i >= n->kids.n) return BAD("vortex %s: child %u missing", pch_vx__enc_ids[n->enc], i);
    PCH_TRY(pch_vx_fb_vec_table(&n->t, &n->kids, i, &c));
    return decode_range(ds, &c, dt, len, b, cnt, out);
}

static int decode_child(dstate *ds, const dnode *n, uint32_t i, const pch_vx_dtype *dt,
                        uint64_t len, pch_vx_array **out)
{
    return range_child(ds, n, i, dt, len, 0, len, out);
}

/* Non-nullable Bool validity child i (if any) of an array of len rows → its bits
** [b, b + a->len) moved into a. */
static int range_validity(dstate *ds, const dnode *n, uint32_t i, uint64_t len, uint64_t b, pch_vx_array *a)
{
    static const pch_vx_dtype vbool = { PCH_VX_BOOL, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL };
    pch_vx_array *v;
    if (i >= n->kids.n) return PCH_OK;
    if (!a->dtype->nullable) return BAD("vortex %s: validity child on a non-nullable array", pch_vx__enc_ids[n->enc]);
    PCH_TRY(range_child(ds, n, i, &vbool, len, b, a->len, &v));
    pch_free(a->ctx, a->validity);
    a->validity = v->data;
    v->data = NULL;
    pch_vx_array_free(v);
    return a->validity ? PCH_OK : NOMEM();
}

static int take_validity(dstate *ds, const dnode *n, uint32_t i, pch_vx_array *a)
{
    return range_validity(ds, n, i, a->len, 0, a);
}

static int meta_fields(dstate *ds, const dnode *n, uint64_t *vals, unsigned nvals)
{
    pch_rd r = pch_rd_make(n->meta, n->meta_len);
    pch_vx_pbf f;
    int rc;
    memset(vals, 0, nvals * sizeof(uint64_t));
    while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1)
        if (f.field <= nvals && f.wt == 0) vals[f.field - 1] = f.v;
    return rc;
}

static int is_int_ptype(uint64_t p) { return p <= PCH_VX_I64; }

static pch_vx_dtype prim_dt(unsigned ptype, int nullable)
{
    pch_vx_dtype d;
    memset(&d, 0, sizeof(d));
    d.kind = PCH_VX_PRIMITIVE;
    d.ptype = (uint8_t)ptype;
    d.nullable = (uint8_t)nullable;
    return d;
}

/* Integer child of any integer ptype → uint64 values (sign-extended for signed). */
#define AT8(i) b[i]
#define AT16(i) pch_load_le16(b + 2 * (i))
#define AT32(i) pch_load_le32(b + 4 * (i))
#define AT64(i) pch_load_le64(b + 8 * (i))

/* n integers of ptype widened to u64 (sign-extended) into v, one loop per ptype (offsets and
** indices are most of what is widened). Not inlined: inside a big switch the compiler does not
** vectorise these loops. */
static __attribute__((noinline)) void ints_widen(const uint8_t *b, unsigned ptype, uint64_t n, uint64_t *restrict v)
{
#define WIDEN(T, AT, SIGNED) \
    for (uint64_t k = 0; k < n; k++) v[k] = SIGNED ? (uint64_t)(int64_t)(T)AT(k) : (uint64_t)(T)AT(k); \
    break;
    switch (ptype) {
    case PCH_VX_U8: WIDEN(uint8_t, AT8, 0)
    case PCH_VX_I8: WIDEN(int8_t, AT8, 1)
    case PCH_VX_U16: WIDEN(uint16_t, AT16, 0)
    case PCH_VX_I16: WIDEN(int16_t, AT16, 1)
    case PCH_VX_U32: WIDEN(uint32_t, AT32, 0)
    case PCH_VX_I32: WIDEN(int32_t, AT32, 1)
    default: WIDEN(uint64_t, AT64, 0)
    }
#undef WIDEN
}

/* Rows [first, first + len) of child i (an integer array of `rows` rows) widened to u64;
** arr_out (if not NULL) gets the decoded array too. decode_ints reads all of them. */
static int decode_ints_range(dstate *ds, const dnode *n, uint32_t i, unsigned ptype, uint64_t rows, uint64_t first,
                             uint64_t len, uint64_t **vals_out, pch_vx_array **arr_out)
{
    pch_vx_dtype d = prim_dt(ptype, 0);
    pch_vx_array *a;
    uint64_t *v;
    *vals_out = NULL;
    if (!is_int_ptype(ptype)) return BAD("vortex %s: non-integer ptype %u for indices/offsets", pch_vx__enc_ids[n->enc], ptype);
    PCH_TRY(range_child(ds, n, i, &d, rows, first, len, &a));
    if (len > SIZE_MAX / 8 || !(v = pch_malloc(ds->ctx, (size_t)(len ? len : 1) * 8))) { pch_vx_array_free(a); return NOMEM(); }
    ints_widen(a->data, ptype, len, v);
    if (arr_out) *arr_out = a;
    else pch_vx_array_free(a);
    *vals_out = v;
    return PCH_OK;
}

static int decode_ints(dstate *ds, const dnode *n, uint32_t i, unsigned ptype, uint64_t len,
                       uint64_t **vals_out, pch_vx_array **arr_out)
{
    return decode_ints_range(ds, n, i, ptype, len, 0, len, vals_out, arr_out);
}

/* Array of `len` copies of a scalar (any dtype; non-null scalars for leaf types only). */
static int from_scalar(dstate *ds, const pch_vx_dtype *dt, const pch_vx_scalar *s, uint64_t len,
                       pch_vx_array **out)
{
    pch_vx_array *a = pch_vx__array_new(ds->ctx, dt, len, 0);
    *out = NULL;
    if (!a) return NOMEM();
    if (s->kind == PCH_VX_SV_NULL) {
        pch_vx_builder *b;
        pch_vx_array_free(a);
        if (!dt->nullable) return BAD("vortex constant: null scalar for a non-nullable dtype");
        if (len > ((uint64_t)1 << 32)) return pch_error_set(ds->err, PCH_ELIMIT, "vortex constant: %" PRIu64 " rows", len);
        PCH_TRY(pch_vx_builder_new(&b, ds->ctx, dt, ds->err));
        for (uint64_t k = 0; k < len; k++)
            if (pch_vx_builder_append_null(b, ds->err)) { pch_vx_builder_free(b); return ds->err ? ds->err->code : PCH_ENOMEM; }
        int rc = pch_vx_builder_finish(b, out, ds->err);
        pch_vx_builder_free(b);
        return rc;
    }
    switch (dt->kind) {
    case PCH_VX_BOOL:
        if (s->kind != PCH_VX_SV_BOOL) goto mismatch;
        if (pch_vx__array_alloc_data(a, (size_t)((len + 7) / 8))) goto oom;
        if (s->u) memset(a->data, 0xff, a->data_len);
        break;
    case PCH_VX_PRIMITIVE: {
        unsigned w = pch_vx_ptype_width(dt->ptype);
        uint8_t t[8] = { 0 };
        if (dt->ptype == PCH_VX_F32 && s->kind == PCH_VX_SV_F32) { float f = (float)s->f; memcpy(t, &f, 4); }
        else if (dt->ptype == PCH_VX_F64 && s->kind == PCH_VX_SV_F64) memcpy(t, &s->f, 8);
        else if (dt->ptype == PCH_VX_F16 && (s->kind == PCH_VX_SV_F16 || s->kind == PCH_VX_SV_U64) && s->u <= 0xffff) pch_store_le16(t, (uint16_t)s->u);
        else if (pch_vx__is_signed(dt->ptype) && s->kind == PCH_VX_SV_I64) {
            if (w < 8 && (s->i < -((int64_t)1 << (8 * w - 1)) || s->i >= ((int64_t)1 << (8 * w - 1)))) goto mismatch;
            pch_store_le64(t, (uint64_t)s->i);
        } else if (dt->ptype <= PCH_VX_U64 && s->kind == PCH_VX_SV_U64) {
            if (w < 8 && (s->u >> (8 * w))) goto mismatch;
            pch_store_le64(t, s->u);
        } else goto mismatch;
        if (len > SIZE_MAX / w || pch_vx__array_alloc_data(a, (size_t)len * w)) goto oom;
        for (uint64_t k = 0; k < len; k++) memcpy(a->data + k * w, t, w);
        break;
    }
    case PCH_VX_DECIMAL: {
        unsigned w = pch_vx_decimal_width(dt->precision);
        uint8_t t[32];
        if (s->kind != PCH_VX_SV_BYTES || s->n == 0 || s->n > 32) goto mismatch;
        memset(t, (s->p[s->n - 1] & 0x80) ? 0xff : 0, 32);
        memcpy(t, s->p, s->n);
        if (len > SIZE_MAX / w || pch_vx__array_alloc_data(a, (size_t)len * w)) goto oom;
        for (uint64_t k = 0; k < len; k++) memcpy(a->data + k * w, t, w);
        break;
    }
    case PCH_VX_UTF8: case PCH_VX_BINARY: {
        size_t tot;
        if (s->kind != (dt->kind == PCH_VX_UTF8 ? PCH_VX_SV_STR : PCH_VX_SV_BYTES)) goto mismatch;
        if (dt->kind == PCH_VX_UTF8 && !pch_vx_utf8_valid(s->p, s->n)) { pch_vx_array_free(a); return BAD("vortex constant: invalid UTF-8"); }
        if (len > ((uint64_t)1 << 32) || !pch_mul_size(&tot, (size_t)len, s->n)) goto oom;
        if (pch_vx__array_alloc_offsets(a) || pch_vx__array_alloc_data(a, tot)) goto oom;
        for (uint64_t k = 0; k < len; k++) {
            if (s->n) memcpy(a->data + k * s->n, s->p, s->n);
            a->offsets[k + 1] = (int64_t)((k + 1) * s->n);
        }
        break;
    }
    default:
        pch_vx_array_free(a);
        return pch_error_set(ds->err, PCH_EUNSUPPORTED, "vortex constant: non-null scalar of a nested dtype");
    }
    *out = a;
    return PCH_OK;
mismatch:
    pch_vx_array_free(a);
    return BAD("vortex: scalar does not match dtype");
oom:
    pch_vx_array_free(a);
    return NOMEM();
}

/* out = rows of `src` picked by idx (idx[k] < src->len checked by take). */
static int gather(dstate *ds, const pch_vx_array *src, const uint64_t *idx, uint64_t n, pch_vx_array **out)
{
    return pch_vx__array_take(out, src, idx, n, ds->err);
}

/* gather for text values without nulls: when every value is at most NAME_SLOT bytes (model
** and tool names), each row copies one fixed-size slot of a padded copy of the values (the
** output has NAME_SLOT bytes of slack; the next row overwrites the excess) instead of a
** memcpy call of its own length. The same array as gather. */
#define NAME_SLOT 32
static int gather_names(dstate *ds, const pch_vx_array *src, const uint64_t *idx, uint64_t n, pch_vx_array **out)
{
    uint8_t *pad = NULL, *dst;
    uint32_t *ln = NULL;
    uint64_t nv = src->len, total = 0;
    pch_vx_array *a;
    *out = NULL;
    for (uint64_t k = 0; k < nv; k++)
        if (src->offsets[k + 1] - src->offsets[k] > NAME_SLOT) return gather(ds, src, idx, n, out);
    if (nv > SIZE_MAX / NAME_SLOT / 2 || !(pad = pch_malloc(ds->ctx, (size_t)(nv ? nv : 1) * NAME_SLOT)) ||
        !(ln = pch_malloc(ds->ctx, (size_t)(nv ? nv : 1) * 4))) {
        pch_free(ds->ctx, pad);
        return NOMEM();
    }
    for (uint64_t k = 0; k < nv; k++) {
        ln[k] = (uint32_t)(src->offsets[k + 1] - src->offsets[k]);
        memset(pad + k * NAME_SLOT, 0, NAME_SLOT);
        if (ln[k]) memcpy(pad + k * NAME_SLOT, src->data + src->offsets[k], ln[k]);
    }
    for (uint64_t i = 0; i < n; i++) total += ln[idx[i]];   /* idx[i] < nv: checked by the caller */
    if (!(a = pch_vx__array_new(ds->ctx, src->dtype, n, 0)) || pch_vx__array_alloc_offsets(a) ||
        pch_vx__array_alloc_data_raw(a, (size_t)total + NAME_SLOT)) {
        pch_vx_array_free(a);
        pch_free(ds->ctx, pad);
        pch_free(ds->ctx, ln);
        return NOMEM();
    }
    a->data_len = (size_t)total;
    dst = a->data;
    total = 0;
    for (uint64_t i = 0; i < n; i++) {
        memcpy(dst + total, pad + idx[i] * NAME_SLOT, NAME_SLOT);
        total += ln[idx[i]];
        a->offsets[i + 1] = (int64_t)total;
    }
    pch_free(ds->ctx, pad);
    pch_free(ds->ctx, ln);
    *out = a;
    return PCH_OK;
}

/* Every codes-only text array in *a (itself, or below it as list elements and struct fields:
** dict_codes over dict_values, no offsets) gathered into a plain one, for the rare parent
** that must slice it; any other array is left as it is. */
static int codes_gather(dstate *ds, pch_vx_array **a)
{
    pch_vx_array *x = *a, *g = NULL;
    uint64_t *idx;
    int rc;
    if (!x) return PCH_OK;
    for (uint32_t k = 0; k < x->n_children; k++) PCH_TRY(codes_gather(ds, &x->children[k]));
    if (x->offsets || !x->dict_codes || !x->dict_values) return PCH_OK;
    if (!(idx = pch_malloc(ds->ctx, (size_t)(x->len ? x->len : 1) * 8))) return NOMEM();
    for (uint64_t i = 0; i < x->len; i++) idx[i] = x->dict_codes[i] == UINT32_MAX ? 0 : x->dict_codes[i];
    rc = x->len && !x->dict_values->len ? PCH_OK : gather(ds, x->dict_values, idx, x->len, &g);
    if (rc == PCH_OK && x->len && !x->dict_values->len) {    /* every row null */
        if (!(g = pch_vx__array_new(ds->ctx, x->dtype, x->len, 0)) || pch_vx__array_alloc_offsets(g)) rc = NOMEM();
    }
    pch_free(ds->ctx, idx);
    if (rc) { pch_vx_array_free(g); return rc; }
    if (x->validity && !g->validity) { g->validity = x->validity; x->validity = NULL; }
    else if (x->validity)
        for (size_t b = 0; b < (size_t)((x->len + 7) / 8); b++) g->validity[b] &= x->validity[b];
    pch_vx_array_free(x);
    *a = g;
    return PCH_OK;
}

/* vortex.dict codes of width w bytes (unsigned), len of them, widened into o (when not NULL)
** and/or kc: the largest code. Without validity every row is a code: one small loop per
** width, the maximum taken in the codes' own width, so the compiler vectorises each. With
** validity a null row writes 0 (o) or UINT32_MAX (kc) and its code is not looked at. */
static __attribute__((noinline)) uint64_t dict_widen(const uint8_t *cb, unsigned w, const uint8_t *validity, uint64_t len,
                                                     uint64_t *restrict o, uint32_t *restrict kc)
{
#define WIDEN(T, LOAD) { \
    T mx = 0; \
    if (!validity && o) for (uint64_t i = 0; i < len; i++) { T x = (LOAD); o[i] = x; mx = x > mx ? x : mx; } \
    else if (!validity) for (uint64_t i = 0; i < len; i++) { T x = (LOAD); kc[i] = (uint32_t)x; mx = x > mx ? x : mx; } \
    else for (uint64_t i = 0; i < len; i++) { \
        bool ok = (validity[i >> 3] >> (i & 7)) & 1; \
        T x = ok ? (T)(LOAD) : 0; \
        if (o) o[i] = x; \
        if (kc) kc[i] = ok ? (uint32_t)x : UINT32_MAX; \
        mx = x > mx ? x : mx; \
    } \
    return mx; }
    switch (w) {
    case 1: WIDEN(uint8_t, cb[i])
    case 2: WIDEN(uint16_t, pch_load_le16(cb + 2 * i))
    case 4: WIDEN(uint32_t, pch_load_le32(cb + 4 * i))
    default: WIDEN(uint64_t, pch_load_le64(cb + 8 * i))
    }
#undef WIDEN
}

/* ALP-RD's common case (f32, u16 left-part codes, no nulls): false when a code is past the
** dlen-entry dictionary or a right part is wider than rbw bits (nothing then written is
** used); else dst[i] = sd[code[i]] | right[i]. Separate passes, not inlined, so that the
** two checks vectorise (the join is a gather from eight entries). */
static __attribute__((noinline)) bool alprd_f32(uint8_t *restrict dst, const uint8_t *restrict lc, const uint8_t *restrict rb,
                                                uint64_t len, const uint32_t *sd, unsigned dlen, unsigned rbw)
{
    uint16_t most = 0;
    uint32_t any = 0;
    for (uint64_t i = 0; i < len; i++) { uint16_t c = pch_load_le16(lc + 2 * i); most = c > most ? c : most; }
    for (uint64_t i = 0; i < len; i++) any |= pch_load_le32(rb + 4 * i);
    if ((len && most >= dlen) || (rbw < 32 && (any >> rbw))) return false;
    for (uint64_t i = 0; i < len; i++) pch_store_le32(dst + 4 * i, sd[pch_load_le16(lc + 2 * i)] | pch_load_le32(rb + 4 * i));
    return true;
}

static int check_offsets(dstate *ds, const char *what, const uint64_t *o, uint64_t len, uint64_t limit)
{
    for (uint64_t k = 0; k < len; k++)
        if (o[k] > o[k + 1]) return BAD("vortex %s: offsets not sorted at %" PRIu64, what, k);
    if (o[len] > limit) return BAD("vortex %s: offset %" PRIu64 " past %" PRIu64, what, o[len], limit);
    return PCH_OK;
}

/* n integers of ptype widened to u64 (sign-extended) into v: true when they are sorted in
** u64 order. Sortedness is tested in the integers' own width, which the compiler vectorises
** (a signed type also needs its first value non-negative; anything else reports unsorted and
** the caller's exact check decides). Not inlined: inside decode_node's switch the compiler
** does not vectorise these loops. */
static __attribute__((noinline)) bool offsets_widen(const uint8_t *b, unsigned ptype, uint64_t n, uint64_t *restrict v)
{
    unsigned unsorted = 0;
    ints_widen(b, ptype, n, v);
#define SORTED(T, AT, SIGNED) \
    for (uint64_t k = 0; k + 1 < n; k++) unsorted |= (T)AT(k) > (T)AT(k + 1); \
    if (SIGNED && n && (int64_t)v[0] < 0) unsorted = 1; \
    break;
    switch (ptype) {
    case PCH_VX_U8: SORTED(uint8_t, AT8, 0)
    case PCH_VX_I8: SORTED(int8_t, AT8, 1)
    case PCH_VX_U16: SORTED(uint16_t, AT16, 0)
    case PCH_VX_I16: SORTED(int16_t, AT16, 1)
    case PCH_VX_U32: SORTED(uint32_t, AT32, 0)
    case PCH_VX_I32: SORTED(int32_t, AT32, 1)
    default: SORTED(uint64_t, AT64, 0)
    }
#undef SORTED
    return !unsorted;
}
#undef AT8
#undef AT16
#undef AT32
#undef AT64

/* A list's len + 1 offsets (child i of n, integers of ptype), checked as check_offsets checks
** them (sorted, the last at most limit), into off[] less the first (*base); *last the last. */
static int list_offsets(dstate *ds, const dnode *n, uint32_t i, unsigned ptype, uint64_t len, uint64_t limit,
                        int64_t *off, uint64_t *base, uint64_t *last)
{
    pch_vx_dtype d = prim_dt(ptype, 0);
    pch_vx_array *x;
    uint64_t *v = (uint64_t *)(void *)off;
    bool sorted;
    if (!is_int_ptype(ptype)) return BAD("vortex %s: non-integer ptype %u for indices/offsets", pch_vx__enc_ids[n->enc], ptype);
    PCH_TRY(decode_child(ds, n, i, &d, len + 1, &x));
    sorted = offsets_widen(x->data, ptype, len + 1, v);
    pch_vx_array_free(x);
    if (!sorted) PCH_TRY(check_offsets(ds, "list", v, len, limit));   /* names the first unsorted one */
    if (v[len] > limit) return BAD("vortex list: offset %" PRIu64 " past %" PRIu64, v[len], limit);
    *base = v[0];
    *last = v[len];
    if (*base) for (uint64_t k = 0; k <= len; k++) v[k] -= *base;
    return PCH_OK;
}

static int patches_meta(dstate *ds, const uint8_t *p, size_t n, uint64_t pm[6], int *has_chunks)
{
    pch_rd r = pch_rd_make(p, n);
    pch_vx_pbf f;
    int rc;
    memset(pm, 0, 6 * sizeof(uint64_t));
    *has_chunks = 0;
    while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1)
        if (f.field <= 6 && f.wt == 0) { pm[f.field - 1] = f.v; if (f.field == 4 || f.field == 5) *has_chunks = 1; }
    return rc;
}

/* Patch rows of base (same dtype): patch k (k < np) replaces row idx[k] - origin with row k of
** vals. The caller (sparse_range) has checked idx: sorted, each in [origin, origin + base rows). */
static int patch_gather(dstate *ds, const uint64_t *idx, uint64_t np, uint64_t origin, pch_vx_array *vals,
                      pch_vx_array **base)
{
    uint64_t *map;
    pch_vx_array *parts[2], *cat = NULL, *res = NULL;
    int rc;
    if (!(map = pch_malloc(ds->ctx, (size_t)((*base)->len + 1) * 8))) return NOMEM();
    for (uint64_t k = 0; k < (*base)->len; k++) map[k] = np + k;
    for (uint64_t k = 0; k < np; k++) map[idx[k] - origin] = k;
    parts[0] = vals;
    parts[1] = *base;
    if ((rc = pch_vx__array_concat(&cat, (*base)->dtype, ds->ctx, parts, 2, ds->err))) goto done;
    if ((rc = gather(ds, cat, map, (*base)->len, &res))) goto done;
    pch_vx_array_free(*base);
    *base = res;
done:
    pch_free(ds->ctx, map);
    pch_vx_array_free(cat);
    return rc;
}

/* The np = pm[0] indices of patches (child ii, metadata pm) of an array of len rows, checked as
** every reader of them needs before it uses one: an integer ptype, at most len of them, strictly
** ascending, each within the rows (row idx[k] - pm[1]). *idx is the caller's (pch_free). */
static int patch_indices(dstate *ds, const dnode *n, uint32_t ii, const uint64_t pm[6], uint64_t len, uint64_t **idx)
{
    uint64_t np = pm[0];
    if (!is_int_ptype(pm[2])) return BAD("vortex patches: indices ptype %" PRIu64, pm[2]);
    if (np > len) return BAD("vortex patches: %" PRIu64 " patches for %" PRIu64 " rows", np, len);
    PCH_TRY(decode_ints(ds, n, ii, (unsigned)pm[2], np, idx, NULL));
    for (uint64_t k = 0; k < np; k++)
        if ((*idx)[k] < pm[1] || (*idx)[k] - pm[1] >= len || (k && (*idx)[k] <= (*idx)[k - 1])) {
            uint64_t bad = (*idx)[k];
            pch_free(ds->ctx, *idx);
            *idx = NULL;
            return BAD("vortex patches: index %" PRIu64 " out of range or unsorted", bad);
        }
    return PCH_OK;
}

/* vortex.sparse rows [b, b + cnt) of len (a whole decode is the range of every row): the fill
** value for cnt rows and only the patches that fall in them (their values child read as a row
** range). Its indices are read whole and checked
** as a whole decode checks them (sorted, in range): a sparse lane is mostly its fill value, and
** decoding it whole for one trajectory's rows built every row of the chunk (multi-agent point
** reads of the §22 benchmark: a quarter of their time). */
static int sparse_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                        pch_vx_array **out)
{
    pch_rd r = pch_rd_make(n->meta, n->meta_len);
    pch_vx_pbf f;
    pch_vx_scalar s;
    uint64_t pm[6], np, *idx = NULL, lo, hi;
    const uint8_t *bp;
    size_t bl;
    int has = 0, hc = 0, rc;
    pch_vx_array *a = NULL, *vals = NULL;
    while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1)
        if (f.field == 1 && f.wt == 2) { PCH_TRY(patches_meta(ds, f.p, f.n, pm, &hc)); has = 1; }
    if (rc < 0) return rc;
    if (!has || hc || n->kids.n != 2 || n->bufs.n != 1) return BAD("vortex sparse: bad metadata/children");
    np = pm[0];
    PCH_TRY(patch_indices(ds, n, 0, pm, len, &idx));
    if ((rc = node_buf(ds, n, 0, &bp, &bl, 1)) || (rc = pch_vx__scalar_decode(&s, bp, bl, ds->err))) goto done;
    for (lo = 0, hi = np; lo < hi;) {             /* first patch at or after row b */
        uint64_t mid = lo + (hi - lo) / 2;
        if (idx[mid] - pm[1] < b) lo = mid + 1; else hi = mid;
    }
    for (hi = lo; hi < np && idx[hi] - pm[1] < b + cnt; hi++) {}
    if ((rc = from_scalar(ds, dt, &s, cnt, &a))) goto done;
    if (hi > lo && !(rc = range_child(ds, n, 1, dt, np, lo, hi - lo, &vals)))
        rc = patch_gather(ds, idx + lo, hi - lo, pm[1] + b, vals, &a);
done:
    pch_free(ds->ctx, idx);
    pch_vx_array_free(vals);
    if (rc) { pch_vx_array_free(a); return rc; }
    *out = a;
    return PCH_OK;
}

static int dec_varbin_common(dstate *ds, pch_vx_array *a, const uint64_t *o, const uint8_t *bytes, size_t blen)
{
    uint64_t base = o[0];
    PCH_TRY(check_offsets(ds, "varbin", o, a->len, blen));
    /* every offset and byte is written below */
    if (pch_vx__array_alloc_offsets(a) || pch_vx__array_alloc_data_raw(a, (size_t)(o[a->len] - base))) return NOMEM();
    for (uint64_t k = 0; k <= a->len; k++) a->offsets[k] = (int64_t)(o[k] - base);
    if (a->data_len) memcpy(a->data, bytes + base, a->data_len);
    return PCH_OK;
}

static int check_utf8(dstate *ds, const pch_vx_array *a)
{
    if (a->dtype->kind != PCH_VX_UTF8) return PCH_OK;
    if (a->offsets && pch_vx_utf8_rows_valid(a->data, a->offsets, a->len)) return PCH_OK;   /* one pass */
    for (uint64_t k = 0; k < a->len; k++)
        if (pch_vx_array_is_valid(a, k) &&
            !pch_vx_utf8_valid(a->data + a->offsets[k], (size_t)(a->offsets[k + 1] - a->offsets[k])))
            return BAD("vortex utf8: invalid UTF-8 at row %" PRIu64, k);
    return PCH_OK;
}

/* vortex.fsst (§6.4), both wire forms: legacy (0.36–0.58) buffers [symbols, lengths],
** children [codes vortex.varbin Binary, uncompressed_lengths]; 0.59+ buffers [symbols,
** lengths, code bytes], children [uncompressed_lengths, codes_offsets (len+1), validity?].
** Every valid row must decode to exactly its uncompressed length. */
/* vortex.fsst, rows [b, b + cnt): only those rows' uncompressed lengths, codes (the codes
** child's rows in the legacy form, the code offsets' and codes buffer's in the current one)
** and validity are read and decoded — a point read of one trajectory in a large cluster. */
static int dec_fsst(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                    pch_vx_array **out)
{
    uint64_t m[2], *ul = NULL, *co = NULL;
    const uint8_t *sp, *lp, *cb = NULL;
    size_t sl, ll, cbl = 0, tot = 0;
    pch_vx_fsst_table *t = NULL;
    pch_vx_array *codes = NULL, *a = NULL;
    pch_vx_dtype bd;
    int rc, legacy = n->bufs.n == 2;
    *out = NULL;
    PCH_TRY(meta_fields(ds, n, m, 2));
    if (n->bufs.n != 2 && n->bufs.n != 3) return BAD("vortex fsst: %u buffers", n->bufs.n);
    if (legacy ? n->kids.n != 2 : (n->kids.n < 2 || n->kids.n > 3)) return BAD("vortex fsst: %u children", n->kids.n);
    if (!is_int_ptype(m[0])) return BAD("vortex fsst: uncompressed lengths ptype %" PRIu64, m[0]);
    if (len == UINT64_MAX || len > ((uint64_t)1 << 40)) return pch_error_set(ds->err, PCH_ELIMIT, "vortex fsst: %" PRIu64 " rows", len);
    PCH_TRY(node_buf(ds, n, 0, &sp, &sl, 8));
    PCH_TRY(node_buf(ds, n, 1, &lp, &ll, 1));
    if (!(t = pch_malloc(ds->ctx, sizeof *t))) return NOMEM();
    if ((rc = pch_vx__fsst_table_load(t, sp, sl, lp, ll, ds->err))) goto done;
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 0))) { rc = NOMEM(); goto done; }
    if (legacy) {
        pch_vx_fbt c;
        dnode cn;
        memset(&bd, 0, sizeof bd);
        bd.kind = PCH_VX_BINARY;
        bd.nullable = dt->nullable;
        if ((rc = pch_vx_fb_vec_table(&n->t, &n->kids, 0, &c)) || (rc = dnode_load(ds, &c, &cn))) goto done;
        if (cn.enc != PCH_VX_E_VARBIN) { rc = BAD("vortex fsst: codes child is %s, not vortex.varbin", pch_vx__enc_ids[cn.enc]); goto done; }
        if ((rc = range_child(ds, n, 0, &bd, len, b, cnt, &codes))) goto done;
        if ((rc = decode_ints_range(ds, n, 1, (unsigned)m[0], len, b, cnt, &ul, NULL))) goto done;
        if (codes->validity) { a->validity = codes->validity; codes->validity = NULL; }
    } else {
        uint16_t bi = 0;
        if (!is_int_ptype(m[1])) { rc = BAD("vortex fsst: codes offsets ptype %" PRIu64, m[1]); goto done; }
        if ((rc = node_buf_lazy(ds, n, 2, 1, &bi))) goto done;
        if ((rc = decode_ints_range(ds, n, 0, (unsigned)m[0], len, b, cnt, &ul, NULL))) goto done;
        if ((rc = decode_ints_range(ds, n, 1, (unsigned)m[1], len + 1, b, cnt + 1, &co, NULL))) goto done;
        cbl = ds->blen[bi];
        if ((rc = check_offsets(ds, "fsst codes", co, cnt, cbl)) || (rc = buf_fill(ds, bi, (size_t)co[0], (size_t)(co[cnt] - co[0]))))
            goto done;
        cb = ds->seg + ds->bpos[bi];
        if ((rc = b == 0 && cnt == len ? take_validity(ds, n, 2, a) : range_validity(ds, n, 2, len, b, a))) goto done;
    }
    for (uint64_t i = 0; i < cnt; i++) {
        if (!pch_vx_array_is_valid(a, i)) continue;
        if (ul[i] > ((uint64_t)1 << 40) || !pch_add_size(&tot, tot, (size_t)ul[i])) {
            rc = BAD("vortex fsst: uncompressed length %" PRId64 " at row %" PRIu64, (int64_t)ul[i], b + i);
            goto done;
        }
    }
    if (!pch_add_size(&tot, tot, 8) || pch_vx__array_alloc_offsets(a) || pch_vx__array_alloc_data(a, tot)) { rc = NOMEM(); goto done; }
    tot = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        if (pch_vx_array_is_valid(a, i)) {
            const uint8_t *cp = legacy ? codes->data + codes->offsets[i] : cb + co[i];
            size_t cn = legacy ? (size_t)(codes->offsets[i + 1] - codes->offsets[i]) : (size_t)(co[i + 1] - co[i]), got;
            if (pch_vx__fsst_decompress(t, cp, cn, a->data + tot, (size_t)ul[i], &got) || got != ul[i]) {
                rc = BAD("vortex fsst: row %" PRIu64 " codes do not decode to %" PRIu64 " bytes (bad code, escape at end or length)", b + i, ul[i]);
                goto done;
            }
            tot += got;
        }
        a->offsets[i + 1] = (int64_t)tot;
    }
    a->data_len = tot;
    if ((rc = check_utf8(ds, a))) goto done;
    *out = a;
    a = NULL;
done:
    pch_free(ds->ctx, t);
    pch_free(ds->ctx, ul);
    pch_free(ds->ctx, co);
    pch_vx_array_free(codes);
    pch_vx_array_free(a);
    return rc;
}

/* The dense values of a nullable fixed-width array into their rows: row i takes the next
** value where validity bit i is set (the widths a lane has, each its own loop, so the copy
** is a move and not a call). */
static void scatter_valid(uint8_t *dst, const uint8_t *vals, const uint8_t *validity, uint64_t cnt, unsigned w)
{
#define SCATTER(W)                                                                         \
    for (uint64_t i = 0, j = 0; i < cnt; i++)                                              \
        if ((validity[i >> 3] >> (i & 7)) & 1) { memcpy(dst + i * (W), vals + j * (W), (W)); j++; }
    switch (w) {
    case 8: SCATTER(8) break;
    case 4: SCATTER(4) break;
    case 2: SCATTER(2) break;
    case 1: SCATTER(1) break;
    default: SCATTER(w) break;
    }
#undef SCATTER
}

static int zstd_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b,
                      uint64_t cnt, pch_vx_array **out);
static int struct_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b,
                        uint64_t cnt, pch_vx_array **out);

/* ---- FastLanes, ALP-RD and primitive arrays over a row range (RFC-0006 §13.4: a point read
** decodes only its own trajectory). Each decoder below reads rows [b, b + cnt) of an array of
** len rows; the full decode is the range [0, len). Everything a full decode checks is checked
** for any range (metadata, buffer sizes, every patch index); what a range skips is the values
** outside it: on a partially read segment, only the blocks holding the rows (1024 values of a
** bit-packed array) are read, their digests checked, and decoded. ---- */

/* Patches of a bit-packed array (indices child ii, values child vi, patches metadata pm) of len
** rows, applied to a = its rows [b, b + a->len): a patched row takes the patch value and its
** validity, as a gather of the values would. */
static int patch_rows(dstate *ds, const dnode *n, uint32_t ii, uint32_t vi, const uint64_t pm[6], uint64_t len,
                      uint64_t b, pch_vx_array *a)
{
    uint64_t np = pm[0], *idx = NULL;
    unsigned w = pch_vx_ptype_width(a->dtype->ptype);
    pch_vx_array *vals = NULL;
    int rc;
    PCH_TRY(patch_indices(ds, n, ii, pm, len, &idx));
    if ((rc = decode_child(ds, n, vi, a->dtype, np, &vals))) goto done;
    for (uint64_t k = 0; k < np; k++) {
        uint64_t pos = idx[k] - pm[1];
        bool valid;
        if (pos < b || pos - b >= a->len) continue;
        memcpy(a->data + (pos - b) * w, vals->data + k * w, w);
        valid = pch_vx_array_is_valid(vals, k);
        if (!valid && !a->validity && pch_vx__array_alloc_validity(a)) { rc = NOMEM(); goto done; }
        if (a->validity) pch_vx__set_bit(a->validity, pos - b, valid);
    }
done:
    pch_free(ds->ctx, idx);
    pch_vx_array_free(vals);
    return rc;
}

static int dec_bitpacked(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                         pch_vx_array **out)
{
    unsigned p = dt->ptype, tb = 8 * pch_vx_ptype_width(p), wb = tb / 8;
    uint64_t m[2] = { 0, 0 }, pm[6], first, k0, k1;
    int has_patches = 0, has_chunks = 0, rc;
    uint32_t nkids_data;
    uint16_t bi = 0;
    size_t blk;
    pch_rd r = pch_rd_make(n->meta, n->meta_len);
    pch_vx_pbf f;
    pch_vx_array *a = NULL;
    *out = NULL;
    memset(pm, 0, sizeof pm);
    while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1) {
        if (f.field <= 2 && f.wt == 0) m[f.field - 1] = f.v;
        if (f.field == 3 && f.wt == 2) {
            has_patches = 1;
            PCH_TRY(patches_meta(ds, f.p, f.n, pm, &has_chunks));
        }
    }
    if (rc < 0) return rc;
    if (m[0] > tb) return BAD("vortex bitpacked: bit width %" PRIu64 " above %u", m[0], tb);
    if (m[1] >= 1024) return BAD("vortex bitpacked: offset %" PRIu64, m[1]);
    if (has_chunks) return pch_error_set(ds->err, PCH_EUNSUPPORTED, "vortex bitpacked: chunked patches");
    PCH_TRY(node_buf_lazy(ds, n, 0, 1, &bi));
    if (len > ((uint64_t)1 << 40)) return BAD("vortex bitpacked: length");
    if (ds->blen[bi] != pch_vx__bp_bytes(len + m[1], (unsigned)m[0]))
        return BAD("vortex bitpacked: packed buffer %zu bytes, want %zu", (size_t)ds->blen[bi], pch_vx__bp_bytes(len + m[1], (unsigned)m[0]));
    nkids_data = has_patches ? 2 : 0;
    if (n->kids.n > nkids_data + 1) return BAD("vortex bitpacked: %u children", n->kids.n);
    /* the blocks holding rows [b, b + cnt): 1024 values of m[0] bits each */
    first = b + m[1];
    k0 = first / 1024;
    k1 = cnt ? (first + cnt + 1023) / 1024 : k0;
    blk = pch_vx__bp_bytes(1024, (unsigned)m[0]);
    if (k1 - k0 > SIZE_MAX / 8192) return NOMEM();
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 0)) || pch_vx__array_alloc_data_raw(a, (size_t)cnt * wb)) goto oom;
    if (ds->fill && m[0] && cnt < (k1 - k0) * m[0]) {
        /* a few rows of a segment read in part (a point read: a trajectory's offsets): only
        ** the one or two words of each value's lane, not its 1,024-value blocks (128 * W
        ** bytes each; a list lane's two offsets cost 2 KiB at W = 16) */
        for (uint64_t i = first; i < first + cnt; i++) {
            size_t hi, lo = pch_vx__bp_locate(tb, (unsigned)m[0], (unsigned)(i % 1024), &hi);
            const size_t at = (size_t)(i / 1024) * blk;
            uint64_t v;
            if ((rc = buf_fill(ds, bi, at + lo, wb)) || (hi != SIZE_MAX && (rc = buf_fill(ds, bi, at + hi, wb)))) goto fail;
            v = pch_vx__bp_get(ds->seg + ds->bpos[bi] + at, tb, (unsigned)m[0], (unsigned)(i % 1024));
            pch_vx__store_uint(a->data, p, i - first, v);
        }
    } else if ((rc = buf_fill(ds, bi, (size_t)k0 * blk, (size_t)(k1 - k0) * blk))) {
        goto fail;
    } else if (m[0] == 0) {         /* width 0: every value is 0, nothing to unpack */
        if (cnt) memset(a->data, 0, (size_t)cnt * wb);
    } else if (first % 1024 == 0 && cnt == (k1 - k0) * 1024) {     /* every byte written below */
        pch_vx__bp_unpack(a->data, ds->seg + ds->bpos[bi] + (size_t)k0 * blk, k1 - k0, tb, (unsigned)m[0]);
    } else {                        /* whole blocks, then the rows */
        uint8_t *tmp = pch_malloc(ds->ctx, (size_t)(k1 > k0 ? k1 - k0 : 1) * 1024 * wb);
        if (!tmp) goto oom;
        pch_vx__bp_unpack(tmp, ds->seg + ds->bpos[bi] + (size_t)k0 * blk, k1 - k0, tb, (unsigned)m[0]);
        if (cnt) memcpy(a->data, tmp + (size_t)(first - k0 * 1024) * wb, (size_t)cnt * wb);
        pch_free(ds->ctx, tmp);
    }
    if ((rc = range_validity(ds, n, nkids_data, len, b, a))) goto fail;
    if (has_patches && (rc = patch_rows(ds, n, 0, 1, pm, len, b, a))) goto fail;
    *out = a;
    return PCH_OK;
oom:
    rc = NOMEM();
fail:
    pch_vx_array_free(a);
    return rc;
}

/* vortex.bool, rows [b, b + cnt): the bytes of those bits only (a validity bitmap of a large
** cluster is read for the rows a point read decodes). */
static int bool_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                      pch_vx_array **out)
{
    uint64_t m[1], first;
    uint16_t bi = 0;
    pch_vx_array *a = NULL;
    int rc;
    *out = NULL;
    PCH_TRY(meta_fields(ds, n, m, 1));
    if (m[0] >= 8) return BAD("vortex bool: bit offset %" PRIu64, m[0]);
    if (n->kids.n > 1 || n->bufs.n != 1) return BAD("vortex bool: bad children/buffers");
    PCH_TRY(node_buf_lazy(ds, n, 0, 1, &bi));
    if (len > ((uint64_t)1 << 40) || (len + m[0] + 7) / 8 > ds->blen[bi])
        return BAD("vortex bool: %zu bytes for %" PRIu64 " rows", (size_t)ds->blen[bi], len);
    first = b + m[0];
    PCH_TRY(buf_fill(ds, bi, (size_t)(first / 8), (size_t)((first + cnt + 7) / 8 - first / 8)));
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 0)) || pch_vx__array_alloc_data(a, (size_t)((cnt + 7) / 8))) {
        pch_vx_array_free(a);
        return NOMEM();
    }
    pch_vx__bits_copy(a->data, ds->seg + ds->bpos[bi], first, cnt);
    if ((rc = b == 0 && cnt == len ? take_validity(ds, n, 0, a) : range_validity(ds, n, 0, len, b, a))) {
        pch_vx_array_free(a);
        return rc;
    }
    *out = a;
    return PCH_OK;
}

/* vortex.primitive, rows [b, b + cnt): the bytes of those values only. */
static int prim_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                      pch_vx_array **out)
{
    unsigned w = pch_vx_ptype_width(dt->ptype);
    uint16_t bi = 0;
    pch_vx_array *a;
    int rc;
    *out = NULL;
    if (n->meta_len) return BAD("vortex primitive: non-empty metadata");
    PCH_TRY(node_buf_lazy(ds, n, 0, w > 16 ? 16 : w, &bi));
    if (n->bufs.n != 1 || n->kids.n > 1) return BAD("vortex primitive: bad children/buffers");
    if (len > SIZE_MAX / w || ds->blen[bi] != (size_t)len * w)
        return BAD("vortex primitive: buffer of %zu bytes for %" PRIu64 " values of %u bytes", (size_t)ds->blen[bi], len, w);
    PCH_TRY(buf_fill(ds, bi, (size_t)b * w, (size_t)cnt * w));
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 0)) || pch_vx__array_alloc_data_raw(a, (size_t)cnt * w)) {
        pch_vx_array_free(a);
        return NOMEM();
    }
    if (cnt) memcpy(a->data, ds->seg + ds->bpos[bi] + (size_t)b * w, (size_t)cnt * w);
    if ((rc = range_validity(ds, n, 0, len, b, a))) { pch_vx_array_free(a); return rc; }
    *out = a;
    return PCH_OK;
}

/* vortex.varbin, rows [b, b + cnt): the offsets of those rows, then only their bytes (a
** blob pack's hydration reads one value of its 512 KiB chunk, docs/vortex-projection.md
** §4). The rows' offsets are checked as a whole decode checks them all: sorted, and inside
** the bytes buffer. */
static int varbin_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                        pch_vx_array **out)
{
    uint64_t m[1], *o = NULL;
    uint16_t bi = 0;
    pch_vx_array *a = NULL;
    int rc;
    *out = NULL;
    PCH_TRY(meta_fields(ds, n, m, 1));
    if (n->bufs.n != 1 || n->kids.n < 1 || n->kids.n > 2) return BAD("vortex varbin: bad children/buffers");
    if (len == UINT64_MAX) return BAD("vortex varbin: length");
    PCH_TRY(node_buf_lazy(ds, n, 0, 1, &bi));
    PCH_TRY(decode_ints_range(ds, n, 0, (unsigned)m[0], len + 1, b, cnt + 1, &o, NULL));
    if ((rc = check_offsets(ds, "varbin", o, cnt, ds->blen[bi])) || (rc = buf_fill(ds, bi, (size_t)o[0], (size_t)(o[cnt] - o[0]))))
        goto done;
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 0))) { rc = NOMEM(); goto done; }
    if ((rc = dec_varbin_common(ds, a, o, ds->seg + ds->bpos[bi], ds->blen[bi])) || (rc = range_validity(ds, n, 1, len, b, a)) ||
        (rc = check_utf8(ds, a)))
        goto done;
    *out = a;
    a = NULL;
done:
    pch_free(ds->ctx, o);
    pch_vx_array_free(a);
    return rc;
}

static int dec_for(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                   pch_vx_array **out)
{
    pch_vx_scalar s;
    uint64_t ref;
    unsigned p = dt->ptype;
    pch_vx_array *a;
    *out = NULL;
    if (n->bufs.n || n->kids.n != 1) return BAD("vortex for: bad children/buffers");
    PCH_TRY(pch_vx__scalar_decode(&s, n->meta, n->meta_len, ds->err));
    if (s.kind == PCH_VX_SV_I64 && pch_vx__is_signed(p)) ref = (uint64_t)s.i;
    else if (s.kind == PCH_VX_SV_U64 && !pch_vx__is_signed(p)) ref = s.u;
    else return BAD("vortex for: reference scalar does not match %s", pch_vx_ptype_name(p));
    PCH_TRY(range_child(ds, n, 0, dt, len, b, cnt, &a));
    {
        uint8_t *d = a->data;           /* a local: the stores cannot move it */
        switch (pch_vx_ptype_width(p)) {   /* wrapping adds, one loop per width */
        case 1: for (uint64_t i = 0; i < cnt; i++) d[i] = (uint8_t)(d[i] + ref); break;
        case 2: for (uint64_t i = 0; i < cnt; i++) pch_store_le16(d + 2 * i, (uint16_t)(pch_load_le16(d + 2 * i) + ref)); break;
        case 4: for (uint64_t i = 0; i < cnt; i++) pch_store_le32(d + 4 * i, (uint32_t)(pch_load_le32(d + 4 * i) + ref)); break;
        default: for (uint64_t i = 0; i < cnt; i++) pch_store_le64(d + 8 * i, pch_load_le64(d + 8 * i) + ref); break;
        }
    }
    *out = a;
    return PCH_OK;
}

/* ALP-RD: [left_parts (dict codes), right_parts, patch_indices, patch_values]: value bits =
** (left << right_bit_width) | right, left = dict[code] unless a patch gives it. */
static int dec_alprd(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                     pch_vx_array **out)
{
    pch_rd r = pch_rd_make(n->meta, n->meta_len);
    pch_vx_pbf f;
    uint64_t pm[6], dict[ALPRD_DICT_MAX], nd = 0, rbw = 0, dlen = 0, lpt = 0, *pidx = NULL;
    unsigned p = dt->ptype, up = p == PCH_VX_F32 ? PCH_VX_U32 : PCH_VX_U64, bits = p == PCH_VX_F32 ? 32 : 64;
    int has_patches = 0, hc = 0, rc;
    pch_vx_dtype ldt, rdt, pdt;
    pch_vx_array *lp = NULL, *rp = NULL, *pv = NULL, *a = NULL;
    *out = NULL;
    while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1) {
        if (f.field == 1 && f.wt == 0) rbw = f.v;
        else if (f.field == 2 && f.wt == 0) dlen = f.v;
        else if (f.field == 3 && f.wt == 0) { if (nd == ALPRD_DICT_MAX) return BAD("vortex alprd: dictionary above %d entries", ALPRD_DICT_MAX); dict[nd++] = f.v; }
        else if (f.field == 3 && f.wt == 2) {
            pch_rd dr = pch_rd_make(f.p, f.n);
            while (pch_rd_left(&dr)) {
                uint64_t v;
                if (nd == ALPRD_DICT_MAX) return BAD("vortex alprd: dictionary above %d entries", ALPRD_DICT_MAX);
                if (!pch_rd_varint(&dr, &v)) return BAD("vortex alprd: bad dictionary varint");
                dict[nd++] = v;
            }
        }
        else if (f.field == 4 && f.wt == 0) lpt = f.v;
        else if (f.field == 5 && f.wt == 2) { PCH_TRY(patches_meta(ds, f.p, f.n, pm, &hc)); has_patches = 1; }
    }
    if (rc < 0) return rc;
    if (p != PCH_VX_F32 && p != PCH_VX_F64) return BAD("vortex alprd: dtype is not float32/float64");
    if (rbw >= bits || bits - rbw > 16) return BAD("vortex alprd: right bit width %" PRIu64 " for %u-bit floats", rbw, bits);
    if (dlen > nd || (len && !dlen)) return BAD("vortex alprd: dictionary length %" PRIu64 " with %" PRIu64 " entries", dlen, nd);
    for (uint64_t d = 0; d < dlen; d++)
        if (dict[d] >> (bits - rbw)) return BAD("vortex alprd: dictionary entry %" PRIu64 " wider than %" PRIu64 " bits", dict[d], bits - rbw);
    if (lpt > PCH_VX_U64) return BAD("vortex alprd: left parts ptype %" PRIu64 " is not unsigned", lpt);
    if (hc) return pch_error_set(ds->err, PCH_EUNSUPPORTED, "vortex alprd: chunked patches");
    if (n->bufs.n || n->kids.n != (has_patches ? 4u : 2u)) return BAD("vortex alprd: %u children", n->kids.n);
    ldt = prim_dt((unsigned)lpt, dt->nullable);
    rdt = prim_dt(up, 0);
    pdt = prim_dt((unsigned)lpt, 0);
    if ((rc = range_child(ds, n, 0, &ldt, len, b, cnt, &lp)) || (rc = range_child(ds, n, 1, &rdt, len, b, cnt, &rp))) goto done;
    /* raw: both paths below write every value */
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 0)) || pch_vx__array_alloc_data_raw(a, (size_t)cnt * (bits / 8))) { rc = NOMEM(); goto done; }
    a->validity = lp->validity;   /* the left parts carry the array's validity */
    lp->validity = NULL;
    if (bits == 32 && lpt == PCH_VX_U16 && !a->validity) {
        /* the common case (f32 logprobs, u16 codes, no nulls): checked in two vectorised
        ** passes, joined in a third; the failing row looked for only when one fails */
        const uint8_t *lc = lp->data, *rb = rp->data;
        uint32_t sd[ALPRD_DICT_MAX];
        for (uint64_t d = 0; d < dlen; d++) sd[d] = (uint32_t)(dict[d] << rbw);
        if (!alprd_f32(a->data, lc, rb, cnt, sd, (unsigned)dlen, (unsigned)rbw)) {
            for (uint64_t i = 0; i < cnt; i++)
                if (pch_load_le16(lc + 2 * i) >= dlen || ((uint64_t)pch_load_le32(rb + 4 * i) >> rbw)) {
                    rc = BAD("vortex alprd: code past the %" PRIu64 "-entry dictionary or right part wider than %" PRIu64 " bits at row %" PRIu64, dlen, rbw, b + i);
                    goto done;
                }
        }
    } else {
        for (uint64_t i = 0; i < cnt; i++) {
            uint64_t code = lpt == PCH_VX_U16 ? pch_load_le16(lp->data + 2 * i) : pch_vx__load_uint(lp->data, (unsigned)lpt, i);
            uint64_t right = bits == 32 ? pch_load_le32(rp->data + 4 * i) : pch_load_le64(rp->data + 8 * i), v;
            if (a->validity && !pch_vx__bit(a->validity, i)) v = 0;
            else if (code >= dlen) { rc = BAD("vortex alprd: code %" PRIu64 " past the %" PRIu64 "-entry dictionary at row %" PRIu64, code, dlen, b + i); goto done; }
            else if (right >> rbw) { rc = BAD("vortex alprd: right part wider than %" PRIu64 " bits at row %" PRIu64, rbw, b + i); goto done; }
            else v = (dict[code] << rbw) | right;
            if (bits == 32) pch_store_le32(a->data + 4 * i, (uint32_t)v);
            else pch_store_le64(a->data + 8 * i, v);
        }
    }
    if (has_patches) {
        uint64_t np = pm[0];
        if (np > len) { rc = BAD("vortex alprd: %" PRIu64 " patches for %" PRIu64 " rows", np, len); goto done; }
        if ((rc = decode_ints(ds, n, 2, (unsigned)pm[2], np, &pidx, NULL)) || (rc = decode_child(ds, n, 3, &pdt, np, &pv))) goto done;
        for (uint64_t j = 0; j < np; j++) {
            uint64_t pos = pidx[j] - pm[1], l = pch_vx__load_uint(pv->data, (unsigned)lpt, j), right;
            if (pidx[j] < pm[1] || pos >= len || (j && pidx[j] <= pidx[j - 1])) { rc = BAD("vortex alprd: patch index %" PRIu64 " out of range or unsorted", pidx[j]); goto done; }
            if (l >> (bits - rbw)) { rc = BAD("vortex alprd: patch value wider than %" PRIu64 " bits", bits - rbw); goto done; }
            if (pos < b || pos - b >= cnt) continue;
            if (a->validity && !pch_vx__bit(a->validity, pos - b)) continue;
            right = pch_vx__load_uint(rp->data, up, pos - b);
            pch_vx__store_uint(a->data, up, pos - b, (l << rbw) | right);
        }
    }
done:
    pch_free(ds->ctx, pidx);
    pch_vx_array_free(lp);
    pch_vx_array_free(rp);
    pch_vx_array_free(pv);
    if (rc) { pch_vx_array_free(a); return rc; }
    *out = a;
    return PCH_OK;
}

/* Text as codes only (pch_vx_decode_ctx.text_codes) reaches the node decoded first, list
** elements and struct fields: arrays that are returned as they are decoded. Every other child
** (a dictionary's values, run-end values, a sparse patch, ...) is transformed by its parent,
** so it is always decoded whole. */
static int decode_node(dstate *ds, const pch_vx_fbt *t, const pch_vx_dtype *dt, uint64_t len, bool tc,
                       pch_vx_array **out);

static int decode(dstate *ds, const pch_vx_fbt *t, const pch_vx_dtype *dt, uint64_t len,
                  pch_vx_array **out)
{
    const bool tc = ds->text_codes;
    int rc;
    ds->text_codes = false;
    rc = decode_node(ds, t, dt, len, tc, out);
    ds->text_codes = tc;
    return rc;
}

/* The first of ends[lo, hi) past row (ends strictly increasing): the run holding row. */
static uint64_t run_of(const uint64_t *ends, uint64_t lo, uint64_t hi, uint64_t row)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ends[mid] <= row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* vortex.runend rows [b, b + cnt) of len: every run end (checked as a whole decode checks
** them: strictly increasing, covering the array), then only the values of the runs that hold
** the rows — a point read of a 32 MiB cluster's run-end lane decoded every run's value (37 KB
** of content references for a 3 KB document, issue 18 item 5). */
static int runend_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt,
                        pch_vx_array **out)
{
    uint64_t m[3], *ends = NULL, *idx = NULL, r0 = 0, r1 = 0;
    pch_vx_array *c = NULL;
    int rc;
    *out = NULL;
    PCH_TRY(meta_fields(ds, n, m, 3));
    if (n->bufs.n || n->kids.n != 2) return BAD("vortex runend: bad children");
    if (m[0] > PCH_VX_U64) return BAD("vortex runend: ends must be unsigned");
    if (m[1] > ((uint64_t)1 << 32) || len > ((uint64_t)1 << 36)) return pch_error_set(ds->err, PCH_ELIMIT, "vortex runend: size");
    PCH_TRY(decode_ints(ds, n, 0, (unsigned)m[0], m[1], &ends, NULL));
    for (uint64_t i = 1; i < m[1]; i++)
        if (ends[i] <= ends[i - 1]) { rc = BAD("vortex runend: ends not strictly increasing"); goto done; }
    if (len && (m[1] == 0 || ends[m[1] - 1] < m[2] + len)) { rc = BAD("vortex runend: runs end before the array"); goto done; }
    if (cnt) {                                  /* the runs of the first and the last row */
        r0 = run_of(ends, 0, m[1], m[2] + b);
        r1 = run_of(ends, r0, m[1], m[2] + b + cnt - 1) + 1;
    }
    if ((rc = range_child(ds, n, 1, dt, m[1], r0, r1 - r0, &c))) goto done;
    if (!(idx = pch_malloc(ds->ctx, (size_t)(cnt ? cnt : 1) * 8))) { rc = NOMEM(); goto done; }
    for (uint64_t i = 0, run = r0; i < cnt; i++) {
        while (ends[run] <= m[2] + b + i) run++;
        idx[i] = run - r0;
    }
    rc = gather(ds, c, idx, cnt, out);
done:
    pch_free(ds->ctx, ends);
    pch_free(ds->ctx, idx);
    pch_vx_array_free(c);
    return rc;
}

/* vortex.dict rows [b, b + cnt) of len: their codes, then only the values they name (a
** point read of one trajectory in a 32 MiB cluster reads a few values of the chunk's
** dictionary, not all of it: docs/vortex-projection.md §6). A whole decode (b 0, cnt len)
** keeps the whole dictionary beside text values, which scans group and filter on. */
static int dict_range(dstate *ds, const dnode *np, const pch_vx_dtype *dt, uint64_t len, uint64_t b, uint64_t cnt, bool tc,
                      pch_vx_array **out)
{
    const dnode n = *np;
    pch_vx_array *a = NULL, *c = NULL;
    uint64_t m[4], *o = NULL, lo = 0, nv;
    uint32_t *kc = NULL;
    bool keep;
    int rc;
    {
        int has_nc = 0;
        uint64_t nullable_codes;
        pch_rd r = pch_rd_make(n.meta, n.meta_len);
        pch_vx_pbf f;
        pch_vx_array *codes = NULL;
        pch_vx_dtype cd;   /* codes->dtype points here: lives for the whole case */
        memset(m, 0, sizeof m);
        while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1)
            if (f.wt == 0 && f.field <= 4) { m[f.field - 1] = f.v; if (f.field == 3) has_nc = 1; }
        if (rc < 0) return rc;
        if (n.bufs.n || n.kids.n != 2) return BAD("vortex dict: bad children/buffers");
        nullable_codes = has_nc ? m[2] : dt->nullable;
        if (nullable_codes && !dt->nullable) return BAD("vortex dict: nullable codes for a non-nullable dtype");
        if (!is_int_ptype(m[1])) return BAD("vortex dict: codes ptype %" PRIu64, m[1]);
        cd = prim_dt((unsigned)m[1], (int)nullable_codes);
        if ((rc = range_child(ds, &n, 0, &cd, len, b, cnt, &codes))) goto fail;
        nv = m[0];
        if (b != 0 || cnt != len) {
            /* the values the rows' codes name: [lo, hi] of the dictionary, codes made relative */
            uint64_t hi = 0;
            bool any = false;
            for (uint64_t i = 0; i < cnt; i++) {
                uint64_t code;
                if (!pch_vx_array_is_valid(codes, i)) continue;
                code = pch_vx__is_signed((unsigned)m[1]) ? (uint64_t)pch_vx__load_int(codes->data, (unsigned)m[1], i)
                                                         : pch_vx__load_uint(codes->data, (unsigned)m[1], i);
                if (code >= m[0]) { pch_vx_array_free(codes); rc = BAD("vortex dict: code %" PRIu64 " past %" PRIu64 " values", code, m[0]); goto fail; }
                if (!any || code < lo) lo = code;
                if (!any || code > hi) hi = code;
                any = true;
            }
            nv = any ? hi - lo + 1 : (m[0] ? 1 : 0);
            for (uint64_t i = 0; lo && i < cnt; i++)
                if (pch_vx_array_is_valid(codes, i))
                    pch_vx__store_uint(codes->data, (unsigned)m[1], i, pch_vx__load_uint(codes->data, (unsigned)m[1], i) - lo);
        }
        len = cnt;
        if ((rc = range_child(ds, &n, 1, dt, m[0], lo, nv, &c))) { pch_vx_array_free(codes); goto fail; }
        m[0] = nv;
        /* text keeps its dictionary beside the gathered values (pch_vx_array.dict_codes) */
        keep = (dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY) && m[0] < UINT32_MAX;
        /* codes only (tc): the codes are the values; no row index, no gather */
        if ((!(keep && tc) && !(o = pch_malloc(ds->ctx, (size_t)(len ? len : 1) * 8))) ||
            (keep && !(kc = pch_malloc(ds->ctx, (size_t)(len ? len : 1) * 4)))) { pch_vx_array_free(codes); goto oom; }
        if (!pch_vx__is_signed((unsigned)m[1]) && len && (!codes->validity || m[0])) {
            /* the common case, one loop per code width: no per-row calls (nullable codes, a
            ** text lane with nulls, too: a null row's code is not looked at) */
            uint64_t most = dict_widen(codes->data, pch_vx_ptype_width((unsigned)m[1]), codes->validity, len, o, kc);
            if (most >= m[0]) { pch_vx_array_free(codes); rc = BAD("vortex dict: code %" PRIu64 " past %" PRIu64 " values", most, m[0]); goto fail; }
            if (!codes->validity && kc && o) for (uint64_t i = 0; i < len; i++) kc[i] = (uint32_t)o[i];
        }
        else for (uint64_t i = 0; i < len; i++) {
            int valid = pch_vx_array_is_valid(codes, i);
            uint64_t code = pch_vx__is_signed((unsigned)m[1]) ? (uint64_t)pch_vx__load_int(codes->data, (unsigned)m[1], i)
                                                              : pch_vx__load_uint(codes->data, (unsigned)m[1], i);
            if (valid && code >= m[0]) { pch_vx_array_free(codes); rc = BAD("vortex dict: code %" PRIu64 " past %" PRIu64 " values", code, m[0]); goto fail; }
            if (o) o[i] = valid ? code : 0;
            if (kc) kc[i] = valid ? (uint32_t)code : UINT32_MAX;
            if (!valid && m[0] == 0) { pch_vx_array_free(codes); rc = pch_error_set(ds->err, PCH_EUNSUPPORTED, "vortex dict: null codes over empty values"); goto fail; }
        }
        if (!o) {
            if (!(a = pch_vx__array_new(ds->ctx, dt, len, 0))) { pch_vx_array_free(codes); goto oom; }
            if (c->validity) {      /* a row naming a null value is null, as the gather makes it */
                if (pch_vx__array_alloc_validity(a)) { pch_vx_array_free(codes); goto oom; }
                for (uint64_t i = 0; i < len; i++)
                    if (kc[i] != UINT32_MAX && !pch_vx__bit(c->validity, kc[i])) pch_vx__set_bit(a->validity, i, 0);
            }
        } else if ((rc = (kc && !c->validity ? gather_names(ds, c, o, len, &a) : gather(ds, c, o, len, &a)))) {
            pch_vx_array_free(codes);
            goto fail;
        }
        if (codes->validity) {
            if (!a->validity && pch_vx__array_alloc_validity(a)) { pch_vx_array_free(codes); goto oom; }
            for (uint64_t i = 0; i < len; i++)
                if (!pch_vx__bit(codes->validity, i)) pch_vx__set_bit(a->validity, i, 0);
        }
        pch_vx_array_free(codes);
        if (kc) { a->dict_codes = kc; a->dict_values = c; kc = NULL; c = NULL; }
    }
    pch_free(ds->ctx, o);
    pch_vx_array_free(c);
    *out = a;
    return PCH_OK;
oom:
    rc = NOMEM();
fail:
    pch_free(ds->ctx, o);
    pch_free(ds->ctx, kc);
    pch_vx_array_free(c);
    pch_vx_array_free(a);
    return rc;
}

static int decode_node(dstate *ds, const pch_vx_fbt *t, const pch_vx_dtype *dt, uint64_t len, bool tc,
                       pch_vx_array **out)
{
    dnode n;
    pch_vx_array *a = NULL, *c = NULL;
    uint64_t m[8], *o = NULL;
    uint32_t *kc = NULL;    /* vortex.dict: the codes kept beside text values */
    const uint8_t *bp;
    size_t bl;
    int rc = PCH_OK;
    unsigned k = dt->kind;
    *out = NULL;
    PCH_TRY(dnode_load(ds, t, &n));
    /* Generic dtype/encoding agreement. */
    switch (n.enc) {
    case PCH_VX_E_NULL: if (k != PCH_VX_NULL) goto dtype_bad; break;
    case PCH_VX_E_BOOL: if (k != PCH_VX_BOOL) goto dtype_bad; break;
    case PCH_VX_E_PRIMITIVE: case PCH_VX_E_SEQUENCE: if (k != PCH_VX_PRIMITIVE) goto dtype_bad; break;
    case PCH_VX_E_FOR: case PCH_VX_E_BITPACKED: case PCH_VX_E_ZIGZAG:
        if (!pch_vx__is_int(dt)) goto dtype_bad;
        break;
    case PCH_VX_E_DECIMAL: if (k != PCH_VX_DECIMAL) goto dtype_bad; break;
    case PCH_VX_E_VARBIN: case PCH_VX_E_VARBINVIEW: if (k != PCH_VX_UTF8 && k != PCH_VX_BINARY) goto dtype_bad; break;
    case PCH_VX_E_STRUCT: if (k != PCH_VX_STRUCT) goto dtype_bad; break;
    case PCH_VX_E_LIST: if (k != PCH_VX_LIST) goto dtype_bad; break;
    case PCH_VX_E_FSL: if (k != PCH_VX_FIXED_SIZE_LIST) goto dtype_bad; break;
    case PCH_VX_E_EXT: if (k != PCH_VX_EXTENSION) goto dtype_bad; break;
    case PCH_VX_E_ZSTD:
        if (k != PCH_VX_PRIMITIVE && k != PCH_VX_UTF8 && k != PCH_VX_BINARY) goto dtype_bad;
        break;
    case PCH_VX_E_FSST: if (k != PCH_VX_UTF8 && k != PCH_VX_BINARY) goto dtype_bad; break;
    case PCH_VX_E_ALPRD: if (k != PCH_VX_PRIMITIVE) goto dtype_bad; break;
    default: break;
    }
    if (k == PCH_VX_EXTENSION && n.enc != PCH_VX_E_EXT)
        return pch_error_set(ds->err, PCH_EUNSUPPORTED, "vortex: %s over an extension dtype", pch_vx__enc_ids[n.enc]);
    switch (n.enc) {
    case PCH_VX_E_NULL:
        if (n.meta_len || n.bufs.n || n.kids.n) return BAD("vortex null: unexpected metadata/buffers/children");
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 0))) return NOMEM();
        break;
    case PCH_VX_E_BOOL:
        if ((rc = bool_range(ds, &n, dt, len, 0, len, &a))) goto fail;
        break;
    case PCH_VX_E_PRIMITIVE:
        if ((rc = prim_range(ds, &n, dt, len, 0, len, &a))) goto fail;
        break;
    case PCH_VX_E_DECIMAL: {
        unsigned w = pch_vx_decimal_width(dt->precision), vw;
        PCH_TRY(meta_fields(ds, &n, m, 1));
        if (m[0] > 5) return BAD("vortex decimal: values_type %" PRIu64, m[0]);
        vw = 1u << m[0];
        PCH_TRY(node_buf(ds, &n, 0, &bp, &bl, vw > 16 ? 16 : vw));
        if (n.bufs.n != 1 || n.kids.n > 1) return BAD("vortex %s: bad children/buffers", pch_vx__enc_ids[n.enc]);
        if (len > SIZE_MAX / vw || bl != (size_t)len * vw)
            return BAD("vortex %s: buffer of %zu bytes for %" PRIu64 " values of %u bytes", pch_vx__enc_ids[n.enc], bl, len, vw);
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 0)) ||
            (vw == w ? pch_vx__array_alloc_data_raw(a, (size_t)len * w) : pch_vx__array_alloc_data(a, (size_t)len * w)))
            goto oom;
        if (vw == w) {              /* the copy writes every byte */
            if (bl) memcpy(a->data, bp, bl);
        } else {
            for (uint64_t i = 0; i < len; i++) {
                const uint8_t *src = bp + i * vw;
                uint8_t fill = (src[vw - 1] & 0x80) ? 0xff : 0;
                for (unsigned j = 0; j < w; j++) a->data[i * w + j] = j < vw ? src[j] : fill;
                for (unsigned j = w; j < vw; j++)
                    if (src[j] != ((src[w - 1] & 0x80) ? 0xff : 0)) { rc = BAD("vortex decimal: value wider than precision"); goto fail; }
            }
        }
        if ((rc = take_validity(ds, &n, 0, a))) goto fail;
        break;
    }
    case PCH_VX_E_VARBIN: {
        PCH_TRY(meta_fields(ds, &n, m, 1));
        PCH_TRY(node_buf(ds, &n, 0, &bp, &bl, 1));
        if (n.bufs.n != 1 || n.kids.n < 1 || n.kids.n > 2) return BAD("vortex varbin: bad children/buffers");
        if (len == UINT64_MAX) return BAD("vortex varbin: length");
        PCH_TRY(decode_ints(ds, &n, 0, (unsigned)m[0], len + 1, &o, NULL));
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 0))) goto oom;
        if ((rc = dec_varbin_common(ds, a, o, bp, bl))) goto fail;
        if ((rc = take_validity(ds, &n, 1, a)) || (rc = check_utf8(ds, a))) goto fail;
        break;
    }
    case PCH_VX_E_VARBINVIEW: {
        const uint8_t *views;
        size_t vl, tot = 0;
        uint32_t nd;
        if (n.meta_len || n.bufs.n < 1 || n.kids.n > 1) return BAD("vortex varbinview: bad metadata/children/buffers");
        nd = n.bufs.n - 1;
        PCH_TRY(node_buf(ds, &n, nd, &views, &vl, 16));
        if (len > SIZE_MAX / 16 || vl != (size_t)len * 16) return BAD("vortex varbinview: views buffer %zu bytes for %" PRIu64 " rows", vl, len);
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 0))) goto oom;
        if ((rc = take_validity(ds, &n, 0, a))) goto fail;
        for (uint64_t i = 0; i < len; i++) tot += pch_load_le32(views + 16 * i);
        if (pch_vx__array_alloc_offsets(a) || pch_vx__array_alloc_data(a, tot)) goto oom;
        tot = 0;
        for (uint64_t i = 0; i < len; i++) {
            const uint8_t *v = views + 16 * i, *src;
            uint32_t l = pch_load_le32(v);
            int valid = pch_vx_array_is_valid(a, i);
            if (l <= 12) {
                src = v + 4;
            } else {
                uint32_t bi = pch_load_le32(v + 8), off = pch_load_le32(v + 12);
                const uint8_t *db;
                size_t dl;
                if (bi >= nd) { if (!valid) { l = 0; src = v; goto put; } rc = BAD("vortex varbinview: buffer index %u past %u", bi, nd); goto fail; }
                if ((rc = node_buf(ds, &n, bi, &db, &dl, 1))) goto fail;
                if (off > dl || l > dl - off) { if (!valid) { l = 0; src = v; goto put; } rc = BAD("vortex varbinview: view out of range at row %" PRIu64, i); goto fail; }
                src = db + off;
                if (valid && memcmp(src, v + 4, 4) != 0) { rc = BAD("vortex varbinview: prefix mismatch at row %" PRIu64, i); goto fail; }
            }
        put:
            if (l) memcpy(a->data + tot, src, l);
            tot += l;
            a->offsets[i + 1] = (int64_t)tot;
        }
        a->data_len = tot;
        if ((rc = check_utf8(ds, a))) goto fail;
        break;
    }
    case PCH_VX_E_STRUCT:
        ds->text_codes = tc;
        rc = struct_range(ds, &n, dt, len, 0, len, &a);
        ds->text_codes = false;
        if (rc) goto fail;
        break;
    case PCH_VX_E_LIST: {
        uint64_t base = 0, last = 0;
        PCH_TRY(meta_fields(ds, &n, m, 2));
        if (n.bufs.n || n.kids.n < 2 || n.kids.n > 3) return BAD("vortex list: bad children/buffers");
        if (len == UINT64_MAX) return BAD("vortex list: length");
        ds->text_codes = tc;
        rc = decode_child(ds, &n, 0, dt->elem, m[0], &c);
        ds->text_codes = false;
        if (rc) goto fail;
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 1)) || pch_vx__array_alloc_offsets(a)) goto oom;
        if ((rc = list_offsets(ds, &n, 1, (unsigned)m[1], len, m[0], a->offsets, &base, &last))) goto fail;
        if (base != 0 || last != m[0]) {
            pch_vx_array *s;
            if ((rc = codes_gather(ds, &c))) goto fail;
            if ((rc = pch_vx__array_slice(&s, c, base, last - base, ds->err))) goto fail;
            pch_vx_array_free(c);
            c = s;
        }
        a->children[0] = c;
        c = NULL;
        if ((rc = take_validity(ds, &n, 2, a))) goto fail;
        break;
    }
    case PCH_VX_E_FSL: {
        uint64_t total;
        if (n.meta_len || n.bufs.n || n.kids.n < 1 || n.kids.n > 2) return BAD("vortex fixed_size_list: bad children");
        if (!pch_mul_u64(&total, len, dt->fsl_size)) return BAD("vortex fixed_size_list: size overflow");
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 1))) goto oom;
        if ((rc = decode_child(ds, &n, 0, dt->elem, total, &a->children[0]))) goto fail;
        if ((rc = take_validity(ds, &n, 1, a))) goto fail;
        break;
    }
    case PCH_VX_E_EXT:
        if (n.meta_len || n.bufs.n || n.kids.n != 1) return BAD("vortex ext: bad children");
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 1))) goto oom;
        if ((rc = decode_child(ds, &n, 0, dt->elem, len, &a->children[0]))) goto fail;
        break;
    case PCH_VX_E_CHUNKED: {
        pch_vx_array **parts = NULL;
        uint32_t nc;
        if (n.meta_len || n.bufs.n || n.kids.n < 1) return BAD("vortex chunked: bad children");
        nc = n.kids.n - 1;
        PCH_TRY(decode_ints(ds, &n, 0, PCH_VX_U64, (uint64_t)nc + 1, &o, NULL));
        if (o[0] != 0 || o[nc] != len) { rc = BAD("vortex chunked: chunk offsets do not cover %" PRIu64 " rows", len); goto fail; }
        if ((rc = check_offsets(ds, "chunked", o, nc, len))) goto fail;
        if (!(parts = pch_calloc(ds->ctx, nc ? nc : 1, sizeof(*parts)))) goto oom;
        for (uint32_t i = 0; i < nc && !rc; i++) rc = decode_child(ds, &n, i + 1, dt, o[i + 1] - o[i], &parts[i]);
        if (!rc) rc = pch_vx__array_concat(&a, dt, ds->ctx, parts, nc, ds->err);
        for (uint32_t i = 0; i < nc; i++) pch_vx_array_free(parts[i]);
        pch_free(ds->ctx, parts);
        if (rc) goto fail;
        break;
    }
    case PCH_VX_E_CONSTANT: {
        pch_vx_scalar s;
        if (n.meta_len || n.kids.n || n.bufs.n != 1) return BAD("vortex constant: bad metadata/children/buffers");
        PCH_TRY(node_buf(ds, &n, 0, &bp, &bl, 1));
        PCH_TRY(pch_vx__scalar_decode(&s, bp, bl, ds->err));
        if (tc && (dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY)) {
            /* codes only: the value once (checked as from_scalar checks it), no rows written */
            PCH_TRY(from_scalar(ds, dt, &s, 1, &c));
            if (!(a = pch_vx__array_new(ds->ctx, dt, len, 0))) goto oom;
            if (s.kind == PCH_VX_SV_NULL) {
                if (pch_vx__array_alloc_validity(a)) goto oom;
                memset(a->validity, 0, (size_t)((len + 7) / 8));
            }
        } else {
            PCH_TRY(from_scalar(ds, dt, &s, len, &a));
        }
        if (dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY) {
            /* text keeps its one value as a dictionary (pch_vx_array.dict_codes), as vortex.dict does */
            uint32_t code = s.kind == PCH_VX_SV_NULL ? UINT32_MAX : 0;
            if (!c && (rc = from_scalar(ds, dt, &s, 1, &c))) goto fail;
            if (!(kc = pch_malloc(ds->ctx, (size_t)(len ? len : 1) * 4))) goto oom;
            for (uint64_t i = 0; i < len; i++) kc[i] = code;
            a->dict_codes = kc;
            a->dict_values = c;
            kc = NULL;
            c = NULL;
        }
        break;
    }
    case PCH_VX_E_DICT:
        if ((rc = dict_range(ds, &n, dt, len, 0, len, tc, &a))) goto fail;
        break;
    case PCH_VX_E_FOR:
        if ((rc = dec_for(ds, &n, dt, len, 0, len, &a))) goto fail;
        break;
    case PCH_VX_E_BITPACKED:
        if ((rc = dec_bitpacked(ds, &n, dt, len, 0, len, &a))) goto fail;
        break;
    case PCH_VX_E_ZIGZAG: {
        unsigned p = dt->ptype, up = p >= PCH_VX_I8 ? p - 4 : p;
        pch_vx_dtype ud = prim_dt(up, dt->nullable);
        if (!pch_vx__is_signed(p)) return BAD("vortex zigzag: unsigned dtype");
        if (n.meta_len || n.bufs.n || n.kids.n != 1) return BAD("vortex zigzag: bad children");
        PCH_TRY(decode_child(ds, &n, 0, &ud, len, &a));
        a->dtype = dt;
        for (uint64_t i = 0; i < len; i++) {
            uint64_t u = pch_vx__load_uint(a->data, up, i);
            pch_vx__store_uint(a->data, p, i, (u >> 1) ^ (~(u & 1) + 1));
        }
        break;
    }
    case PCH_VX_E_SEQUENCE: {
        pch_rd r = pch_rd_make(n.meta, n.meta_len);
        pch_vx_pbf f;
        pch_vx_scalar base, mul;
        int hb = 0, hm = 0;
        unsigned p = dt->ptype, w = pch_vx_ptype_width(p);
        memset(&base, 0, sizeof base);
        memset(&mul, 0, sizeof mul);
        while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1) {
            if (f.field == 1 && f.wt == 2) { PCH_TRY(pch_vx__scalar_decode(&base, f.p, f.n, ds->err)); hb = 1; }
            if (f.field == 2 && f.wt == 2) { PCH_TRY(pch_vx__scalar_decode(&mul, f.p, f.n, ds->err)); hm = 1; }
        }
        if (rc < 0) return rc;
        if (!hb || !hm || !pch_vx__is_int(dt) || dt->nullable || n.kids.n || n.bufs.n) return BAD("vortex sequence: bad metadata");
        if (len > ((uint64_t)1 << 32)) return pch_error_set(ds->err, PCH_ELIMIT, "vortex sequence: %" PRIu64 " rows", len);
        if (!(a = pch_vx__array_new(ds->ctx, dt, len, 0)) || pch_vx__array_alloc_data(a, (size_t)len * w)) goto oom;
        for (uint64_t i = 0; i < len; i++) {
            uint64_t b0 = base.kind == PCH_VX_SV_I64 ? (uint64_t)base.i : base.u;
            uint64_t m0 = mul.kind == PCH_VX_SV_I64 ? (uint64_t)mul.i : mul.u;
            pch_vx__store_uint(a->data, p, i, b0 + i * m0);
        }
        break;
    }
    case PCH_VX_E_RUNEND:
        if ((rc = runend_range(ds, &n, dt, len, 0, len, &a))) goto fail;     /* every row: a range of all */
        break;
    case PCH_VX_E_SPARSE:
        PCH_TRY(sparse_range(ds, &n, dt, len, 0, len, &a));     /* every row: a range of all of them */
        break;
    case PCH_VX_E_ZSTD:
        if ((rc = zstd_range(ds, &n, dt, len, 0, len, &a))) goto fail;
        break;
    case PCH_VX_E_FSST:
        if ((rc = dec_fsst(ds, &n, dt, len, 0, len, &a))) goto fail;
        break;
    case PCH_VX_E_ALPRD:
        if ((rc = dec_alprd(ds, &n, dt, len, 0, len, &a))) goto fail;
        break;
    default:
        return pch_error_set(ds->err, PCH_EUNSUPPORTED, "vortex: encoding %d not decodable", n.enc);
    }
    pch_free(ds->ctx, o);
    pch_vx_array_free(c);
    if (a->len != len) { pch_vx_array_free(a); return BAD("vortex: decoded length mismatch"); }
    *out = a;
    return PCH_OK;
dtype_bad:
    return BAD("vortex: encoding %s cannot produce this dtype (kind %u)", pch_vx__enc_ids[n.enc], k);
oom:
    rc = NOMEM();
fail:
    pch_free(ds->ctx, o);
    pch_free(ds->ctx, kc);
    pch_vx_array_free(c);
    pch_vx_array_free(a);
    return rc;
}

/* Parse a segment's tail (flatbuffer, buffer table) into ds; *root receives the array node. */
static int ds_open(dstate *ds, pch_vx_fbt *node, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                   size_t seg_len, pch_error *err)
{
    pch_vx_fbt root;
    pch_vx_fbvec bufs;
    uint32_t fb_len;
    size_t fb_start, pos = 0;
    memset(ds, 0, sizeof(*ds));
    ds->dc = dc;
    ds->ctx = dc->ctx;
    ds->seg = seg;
    ds->err = err;
    if (seg_len < 4) return pch_error_set(err, PCH_ECORRUPT, "vortex array segment: %zu bytes", seg_len);
    fb_len = pch_load_le32(seg + seg_len - 4);
    if (fb_len > seg_len - 4) return pch_error_set(err, PCH_ECORRUPT, "vortex array segment: flatbuffer length %u past segment", fb_len);
    fb_start = seg_len - 4 - fb_len;
    PCH_TRY(pch_vx_fb_root(&root, &ds->v, seg + fb_start, fb_len, "array", err));
    PCH_TRY(pch_vx_fb_table(&root, 0, 1, node, NULL));
    PCH_TRY(pch_vx_fb_vector(&root, 1, 8, 4, &bufs, NULL));
    ds->n_bufs = bufs.n;
    ds->bpos = pch_calloc(ds->ctx, bufs.n ? bufs.n : 1, sizeof(size_t));
    ds->blen = pch_calloc(ds->ctx, bufs.n ? bufs.n : 1, sizeof(uint32_t));
    ds->balign = pch_calloc(ds->ctx, bufs.n ? bufs.n : 1, 1);
    if (!ds->bpos || !ds->blen || !ds->balign) return pch_error_set(err, PCH_ENOMEM, "vortex decode: out of memory");
    for (uint32_t i = 0; i < bufs.n; i++) {
        const uint8_t *d = ds->v.buf + bufs.pos + 8 * (size_t)i;
        uint16_t pad = pch_load_le16(d);
        uint8_t ae = d[2], comp = d[3];
        uint32_t l = pch_load_le32(d + 4);
        if (comp != 0) return pch_error_set(err, PCH_EUNSUPPORTED, "vortex array: buffer %u compression %u", i, comp);
        if (ae > 16) return pch_error_set(err, PCH_ECORRUPT, "vortex array: buffer %u alignment exponent %u", i, ae);
        if (pad > fb_start - pos || l > fb_start - pos - pad)
            return pch_error_set(err, PCH_ECORRUPT, "vortex array: buffer %u runs past the flatbuffer", i);
        pos += pad;
        ds->bpos[i] = pos;
        ds->blen[i] = l;
        ds->balign[i] = ae;
        pos += l;
    }
    return PCH_OK;
}

static void ds_close(dstate *ds)
{
    pch_free(ds->ctx, ds->bpos);
    pch_free(ds->ctx, ds->blen);
    pch_free(ds->ctx, ds->balign);
}

int pch_vx__deserialize(pch_vx_array **out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                        size_t seg_len, const pch_vx_dtype *dt, uint64_t len, pch_error *err)
{
    dstate ds;
    pch_vx_fbt node;
    int rc;
    *out = NULL;
    if (!(rc = ds_open(&ds, &node, dc, seg, seg_len, err))) {
        ds.text_codes = dc->text_codes;
        rc = decode(&ds, &node, dt, len, out);
    }
    ds_close(&ds);
    return rc;
}

/* ------------------------------------------------------------------ row ranges */

/* Rows [b, b + cnt) of an array of `len` rows, decoding only what those rows need where the
** encoding allows it (RFC-0006 §7.2, §13.4: a point read decompresses the frames of its own
** trajectory): lists decode their offsets and then only the child values the rows span;
** structs range every field; a multi-frame vortex.zstd decompresses only the frames that hold
** the rows' values. Any other encoding decodes whole and is sliced. Every check decode()
** makes on the parts it reads is made here too. (decode_range is declared above with
** range_child, which decode_child and take_validity share.) */

/* vortex.struct, rows [b, b + cnt) (all rows for decode()): the validity and every field. */
static int struct_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b,
                        uint64_t cnt, pch_vx_array **out)
{
    uint32_t nf = dt->n_fields, first;
    pch_vx_array *a;
    int rc;
    *out = NULL;
    if (n->meta_len || n->bufs.n) return BAD("vortex struct: unexpected metadata/buffers");
    if (n->kids.n != nf && n->kids.n != nf + 1) return BAD("vortex struct: %u children for %u fields", n->kids.n, nf);
    first = n->kids.n - nf;
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, nf))) return NOMEM();
    rc = first ? range_validity(ds, n, 0, len, b, a) : PCH_OK;
    for (uint32_t i = 0; i < nf && !rc; i++) rc = range_child(ds, n, first + i, dt->fields[i], len, b, cnt, &a->children[i]);
    if (rc) { pch_vx_array_free(a); return rc; }
    *out = a;
    return PCH_OK;
}

typedef struct zframe { uint64_t size, nvals; } zframe;

/* One frame: through the digested dictionary, the raw one, or none. */
static size_t zdecompress(ZSTD_DCtx *z, uint8_t *dst, size_t cap, const uint8_t *src, size_t len,
                          const uint8_t *dict, size_t dict_len, const ZSTD_DDict *ddict)
{
    if (ddict) return ZSTD_decompress_usingDDict(z, dst, cap, src, len, ddict);
    if (dict) return ZSTD_decompress_usingDict(z, dst, cap, src, len, dict, dict_len);
    return ZSTD_decompressDCtx(z, dst, cap, src, len);
}

/* vortex.zstd, rows [b, b + cnt) (all rows for decode()): the frames are read from the
** metadata (each frame's uncompressed size and value count), and only those overlapping the
** rows' values are decompressed; each of those is parsed whole, so its size and value count
** are checked. */
static int zstd_range(dstate *ds, const dnode *n, const pch_vx_dtype *dt, uint64_t len, uint64_t b,
                      uint64_t cnt, pch_vx_array **out)
{
    pch_rd r = pch_rd_make(n->meta, n->meta_len);
    pch_vx_pbf f;
    uint64_t dict_size = 0, nframes = 0, total = 0, valid = 0, vb = 0, vn = 0, vstart = 0, got_vals = 0;
    zframe *fr = NULL;
    pch_vx_array *va = NULL, *a = NULL;
    const uint8_t *dict = NULL;
    size_t dict_len = 0;
    ZSTD_DDict *ddict = NULL;
    pch_buf plain, vals;
    uint32_t *lens = NULL;
    unsigned w = dt->kind == PCH_VX_PRIMITIVE ? pch_vx_ptype_width(dt->ptype) : 0;
    int rc = PCH_OK;
    pch_buf_init(&plain, ds->ctx);
    pch_buf_init(&vals, ds->ctx);
    *out = NULL;
    if (n->kids.n > 1) return BAD("vortex zstd: %u children", n->kids.n);
    /* the whole array's validity: the frames count valid values only */
    if (!(va = pch_vx__array_new(ds->ctx, dt, len, 0))) return NOMEM();
    /* no rows (a point read of a trajectory without values in this lane): nothing to read,
    ** not even the validity of a 32 MiB cluster's values */
    if (!cnt && b <= len) goto rows;
    if ((rc = take_validity(ds, n, 0, va))) goto done;
    if (!va->validity) { valid = len; vb = b; vn = cnt; }
    else {
        for (uint64_t i = 0; i < len; i++) {
            int bit = pch_vx__bit(va->validity, i);
            valid += bit;
            if (i < b) vb += bit;
            else if (i < b + cnt) vn += bit;
        }
    }
    while ((rc = pch_vx__pb_next(&r, &f, ds->err)) == 1) {
        if (f.field == 1 && f.wt == 0) dict_size = f.v;
        if (f.field == 2 && f.wt == 2) nframes++;
    }
    if (rc < 0) goto done;
    rc = PCH_OK;
    if (n->bufs.n != nframes + (dict_size ? 1 : 0)) { rc = BAD("vortex zstd: %u buffers for %" PRIu64 " frames", n->bufs.n, nframes); goto done; }
    if (dict_size && (rc = node_buf(ds, n, 0, &dict, &dict_len, 1))) goto done;
    if (dict_size && dict_len != dict_size) { rc = BAD("vortex zstd: dictionary of %zu bytes, metadata says %" PRIu64, dict_len, dict_size); goto done; }
    if (!(fr = pch_calloc(ds->ctx, nframes ? nframes : 1, sizeof(*fr)))) { rc = NOMEM(); goto done; }
    r = pch_rd_make(n->meta, n->meta_len);
    for (uint64_t k = 0; pch_vx__pb_next(&r, &f, ds->err) == 1;) {
        pch_rd frd;
        pch_vx_pbf ff;
        if (f.field != 2 || f.wt != 2) continue;
        frd = pch_rd_make(f.p, f.n);
        while (pch_vx__pb_next(&frd, &ff, ds->err) == 1) {
            if (ff.field == 1 && ff.wt == 0) fr[k].size = ff.v;
            if (ff.field == 2 && ff.wt == 0) fr[k].nvals = ff.v;
        }
        if (fr[k].size > ((uint64_t)1 << 31)) { rc = pch_error_set(ds->err, PCH_ELIMIT, "vortex zstd: frame of %" PRIu64 " bytes", fr[k].size); goto done; }
        if (fr[k].nvals > valid) { rc = BAD("vortex zstd: frame %" PRIu64 " of %" PRIu64 " values for %" PRIu64 " valid rows", k, fr[k].nvals, valid); goto done; }
        total += fr[k].nvals;
        k++;
    }
    if (total != valid) { rc = BAD("vortex zstd: %" PRIu64 " values for %" PRIu64 " valid rows", total, valid); goto done; }
    if (!w && !(lens = pch_malloc(ds->ctx, (size_t)(vn ? vn : 1) * sizeof(*lens)))) { rc = NOMEM(); goto done; }
    if (!w) {                                   /* strings: every frame read decompresses into vals */
        uint64_t need = 1, at = 0;
        for (uint64_t k = 0; k < nframes && at < vb + vn; at += fr[k].nvals, k++)
            if (fr[k].nvals && at + fr[k].nvals > vb) need += fr[k].size;
        if (need > SIZE_MAX || pch_buf_reserve(&vals, (size_t)need)) { rc = NOMEM(); goto done; }
    }
    /* fixed-width values: sized once, and a frame wholly inside the rows decompresses
    ** straight into place (no staging copy, no regrowth) */
    if (w && (vn > SIZE_MAX / w || pch_buf_reserve(&vals, vn ? (size_t)vn * w : 1))) { rc = NOMEM(); goto done; }
    /* a dictionary shared by several frames read here is digested once (its entropy tables) */
    if (dict) {
        uint64_t nread = 0, at = 0;
        for (uint64_t k = 0; k < nframes && at < vb + vn; at += fr[k].nvals, k++)
            if (fr[k].nvals && at + fr[k].nvals > vb) nread++;
        if (nread > 1 && !(ddict = ZSTD_createDDict(dict, dict_len))) { rc = NOMEM(); goto done; }
    }
    /* no valid value in the rows (a trajectory without values in this lane): no frame */
    for (uint64_t k = 0; vn && k < nframes && vstart < vb + vn; vstart += fr[k].nvals, k++) {
        const uint8_t *fp;
        size_t fl, gotb;
        ZSTD_DCtx *z;
        pch_rd pr;
        if (!fr[k].nvals || vstart + fr[k].nvals <= vb) continue;
        if ((rc = node_buf(ds, n, (uint32_t)(k + (dict_size ? 1 : 0)), &fp, &fl, 1))) goto done;
        if (!(z = thread_dctx())) { rc = NOMEM(); goto done; }
        if (w && vstart >= vb && vstart + fr[k].nvals <= vb + vn && fr[k].size == fr[k].nvals * w &&
            fr[k].size <= vals.cap - vals.len) {
            gotb = zdecompress(z, vals.data + vals.len, (size_t)fr[k].size, fp, fl, dict, dict_len, ddict);
            if (ZSTD_isError(gotb) || gotb != fr[k].size) { rc = BAD("vortex zstd: frame %" PRIu64 " does not decompress to %" PRIu64 " bytes", k, fr[k].size); goto done; }
            vals.len += (size_t)fr[k].size;
            got_vals += fr[k].nvals;
            continue;
        }
        /* a string frame decompresses into vals where its values go, and its values are
        ** compacted there in place (reserved above); a fixed-width one into plain */
        uint8_t *dst;
        if (!w) dst = vals.data + vals.len;
        else {
            plain.len = 0;
            if (pch_buf_reserve(&plain, (size_t)fr[k].size ? (size_t)fr[k].size : 1)) { rc = NOMEM(); goto done; }
            dst = plain.data;
        }
        gotb = zdecompress(z, dst, (size_t)fr[k].size, fp, fl, dict, dict_len, ddict);
        if (ZSTD_isError(gotb) || gotb != fr[k].size) { rc = BAD("vortex zstd: frame %" PRIu64 " does not decompress to %" PRIu64 " bytes", k, fr[k].size); goto done; }
        if (w) {
            uint64_t from, to;
            if (fr[k].size % w || fr[k].size / w != fr[k].nvals) { rc = BAD("vortex zstd: frame %" PRIu64 " payload size", k); goto done; }
            from = vb > vstart ? vb - vstart : 0;
            to = vb + vn - vstart < fr[k].nvals ? vb + vn - vstart : fr[k].nvals;
            if (pch_buf_append(&vals, plain.data + from * w, (size_t)((to - from) * w))) { rc = NOMEM(); goto done; }
            got_vals += to - from;
            continue;
        }
        pr = pch_rd_make(dst, (size_t)fr[k].size);
        for (uint64_t j = 0; j < fr[k].nvals; j++) {
            uint32_t l;
            const uint8_t *sp;
            uint64_t g = vstart + j;
            if (!pch_rd_le32(&pr, &l) || !pch_rd_bytes(&pr, l, &sp)) { rc = BAD("vortex zstd: truncated string payload in frame %" PRIu64, k); goto done; }
            if (g < vb || g >= vb + vn) continue;
            /* vals holds the frame (below): a value moves left over its own length prefix */
            memmove(vals.data + vals.len, sp, l);
            vals.len += l;
            lens[got_vals++] = l;
        }
        if (pch_rd_left(&pr)) { rc = BAD("vortex zstd: trailing payload bytes in frame %" PRIu64, k); goto done; }
    }
rows:
    if (got_vals != vn) { rc = BAD("vortex zstd: %" PRIu64 " of %" PRIu64 " values found in the frames", got_vals, vn); goto done; }
    if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 0))) { rc = NOMEM(); goto done; }
    if (va->validity) {
        if (pch_vx__array_alloc_validity(a)) { rc = NOMEM(); goto done; }
        pch_vx__bits_copy(a->validity, va->validity, b, cnt);
    }
    if (w && !a->validity) {                     /* dense: the values are the data (token-id lanes) */
        if (pch_buf_reserve(&vals, 1) < 0) { rc = NOMEM(); goto done; }
        a->data = pch_buf_detach(&vals, &a->data_len);
    } else if (w) {
        if (pch_vx__array_alloc_data(a, (size_t)cnt * w)) { rc = NOMEM(); goto done; }
        scatter_valid(a->data, vals.data, a->validity, cnt, w);
    } else {
        size_t tot = 0;
        if (pch_vx__array_alloc_offsets(a) || pch_buf_reserve(&vals, 1) < 0) { rc = NOMEM(); goto done; }
        a->data = pch_buf_detach(&vals, &a->data_len);
        for (uint64_t i = 0, j = 0; i < cnt; i++) {
            if (!a->validity || pch_vx__bit(a->validity, i)) tot += lens[j++];
            a->offsets[i + 1] = (int64_t)tot;
        }
        a->data_len = tot;
        if ((rc = check_utf8(ds, a))) goto done;
    }
    *out = a;
    a = NULL;
done:
    ZSTD_freeDDict(ddict);
    pch_buf_dispose(&plain);
    pch_buf_dispose(&vals);
    pch_free(ds->ctx, fr);
    pch_free(ds->ctx, lens);
    pch_vx_array_free(va);
    pch_vx_array_free(a);
    return rc;
}

static int decode_range(dstate *ds, const pch_vx_fbt *t, const pch_vx_dtype *dt, uint64_t len,
                        uint64_t b, uint64_t cnt, pch_vx_array **out)
{
    dnode n;
    pch_vx_array *a = NULL, *full;
    uint64_t m[2], *o = NULL;
    int rc;
    *out = NULL;
    if (b > len || cnt > len - b) return BAD("vortex: rows %" PRIu64 "+%" PRIu64 " past %" PRIu64, b, cnt, len);
    if (b == 0 && cnt == len) return decode(ds, t, dt, len, out);
    PCH_TRY(dnode_load(ds, t, &n));
    if (n.enc == PCH_VX_E_LIST && dt->kind == PCH_VX_LIST) {
        uint64_t cb, ce;
        PCH_TRY(meta_fields(ds, &n, m, 2));
        if (n.bufs.n || n.kids.n < 2 || n.kids.n > 3) return BAD("vortex list: bad children/buffers");
        if (len == UINT64_MAX) return BAD("vortex list: length");
        /* the offsets of the rows only, checked as a whole decode checks them all */
        PCH_TRY(decode_ints_range(ds, &n, 1, (unsigned)m[1], len + 1, b, cnt + 1, &o, NULL));
        if ((rc = check_offsets(ds, "list", o, cnt, m[0]))) goto done;
        cb = o[0];
        ce = o[cnt];
        if (!(a = pch_vx__array_new(ds->ctx, dt, cnt, 1)) || pch_vx__array_alloc_offsets(a)) { rc = NOMEM(); goto done; }
        for (uint64_t i = 0; i <= cnt; i++) a->offsets[i] = (int64_t)(o[i] - cb);
        if ((rc = range_child(ds, &n, 0, dt->elem, m[0], cb, ce - cb, &a->children[0]))) goto done;
        rc = range_validity(ds, &n, 2, len, b, a);
    } else if (n.enc == PCH_VX_E_STRUCT && dt->kind == PCH_VX_STRUCT) {
        return struct_range(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_ZSTD && (dt->kind == PCH_VX_PRIMITIVE || dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY)) {
        return zstd_range(ds, &n, dt, len, b, cnt, out);
    } else if ((n.enc == PCH_VX_E_BITPACKED || n.enc == PCH_VX_E_FOR) && pch_vx__is_int(dt)) {
        return n.enc == PCH_VX_E_BITPACKED ? dec_bitpacked(ds, &n, dt, len, b, cnt, out) : dec_for(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_ALPRD && dt->kind == PCH_VX_PRIMITIVE) {
        return dec_alprd(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_PRIMITIVE && dt->kind == PCH_VX_PRIMITIVE) {
        return prim_range(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_VARBIN && (dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY)) {
        return varbin_range(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_FSST && (dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY)) {
        return dec_fsst(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_BOOL && dt->kind == PCH_VX_BOOL) {
        return bool_range(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_SPARSE) {
        return sparse_range(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_DICT && (dt->kind == PCH_VX_PRIMITIVE || dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY)) {
        return dict_range(ds, &n, dt, len, b, cnt, false, out);
    } else if (n.enc == PCH_VX_E_RUNEND && (dt->kind == PCH_VX_PRIMITIVE || dt->kind == PCH_VX_UTF8 || dt->kind == PCH_VX_BINARY ||
                                            dt->kind == PCH_VX_BOOL)) {
        return runend_range(ds, &n, dt, len, b, cnt, out);
    } else if (n.enc == PCH_VX_E_CONSTANT) {
        /* any cnt rows of a constant are the constant of cnt rows (its value is all it stores);
        ** decoding len rows for one trajectory's built every row of the chunk */
        return decode(ds, t, dt, cnt, out);
    } else {
        PCH_TRY(decode(ds, t, dt, len, &full));
        rc = pch_vx__array_slice(out, full, b, cnt, ds->err);
        pch_vx_array_free(full);
        return rc;
    }
done:
    pch_free(ds->ctx, o);
    if (rc) { pch_vx_array_free(a); return rc; }
    *out = a;
    return PCH_OK;
}

int pch_vx__deserialize_range(pch_vx_array **out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                              size_t seg_len, const pch_vx_dtype *dt, uint64_t len, uint64_t begin,
                              uint64_t n, pch_error *err)
{
    return pch_vx__deserialize_range_sparse(out, dc, seg, seg_len, dt, len, begin, n, NULL, NULL, err);
}

int pch_vx__deserialize_range_sparse(pch_vx_array **out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                                     size_t seg_len, const pch_vx_dtype *dt, uint64_t len, uint64_t begin,
                                     uint64_t n, pch_vx_fill_fn fill, void *payload, pch_error *err)
{
    dstate ds;
    pch_vx_fbt node;
    int rc;
    *out = NULL;
    if (!(rc = ds_open(&ds, &node, dc, seg, seg_len, err))) {
        ds.fill = fill;
        ds.fill_payload = payload;
        rc = decode_range(&ds, &node, dt, len, begin, n, out);
    }
    ds_close(&ds);
    return rc;
}

static int describe_node(const pch_vx_decode_ctx *dc, const pch_vx_fbt *t, pch_buf *out, pch_error *err)
{
    uint16_t e;
    pch_vx_fbvec kids;
    PCH_TRY(pch_vx_fb_u16(t, 0, 0, &e));
    PCH_TRY(pch_vx_fb_vector(t, 2, 4, 4, &kids, NULL));
    if (e >= dc->n_specs || dc->spec_map[e] < 0) pch_buf_printf(out, "?%u", e);
    else pch_buf_append_str(out, pch_vx__enc_ids[dc->spec_map[e]]);
    if (kids.n) {
        pch_buf_putc(out, '(');
        for (uint32_t i = 0; i < kids.n; i++) {
            pch_vx_fbt c;
            if (i) pch_buf_putc(out, ',');
            PCH_TRY(pch_vx_fb_vec_table(t, &kids, i, &c));
            PCH_TRY(describe_node(dc, &c, out, err));
        }
        pch_buf_putc(out, ')');
    }
    return out->oom ? PCH_ENOMEM : PCH_OK;
}

int pch_vx__describe_segment(pch_buf *out, const pch_vx_decode_ctx *dc, const uint8_t *seg,
                             size_t seg_len, pch_error *err)
{
    pch_vx_fbv v;
    pch_vx_fbt root, node;
    uint32_t fb_len;
    if (seg_len < 4) return pch_error_set(err, PCH_ECORRUPT, "vortex array segment: %zu bytes", seg_len);
    fb_len = pch_load_le32(seg + seg_len - 4);
    if (fb_len > seg_len - 4) return pch_error_set(err, PCH_ECORRUPT, "vortex array segment: bad flatbuffer length");
    PCH_TRY(pch_vx_fb_root(&root, &v, seg + seg_len - 4 - fb_len, fb_len, "array", err));
    PCH_TRY(pch_vx_fb_table(&root, 0, 1, &node, NULL));
    return describe_node(dc, &node, out, err);
}
