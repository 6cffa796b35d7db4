/* FlatBuffers builder and verifying reader (vortex-format.md §2, §12.2). See vx_fb.h for the
** invariants: builder offsets are end-relative; every reader accessor checks bounds,
** alignment relative to the buffer start, vtable sizes, depth and table count. */
#include "vortex/vx_fb.h"

/* ------------------------------------------------------------------ builder */

void pch_vx_fbb_init(pch_vx_fbb *b, pch_ctx *ctx)
{
    memset(b, 0, sizeof(*b));
    b->ctx = ctx;
    b->minalign = 1;
}

void pch_vx_fbb_dispose(pch_vx_fbb *b)
{
    pch_free(b->ctx, b->buf);
    pch_vx_fbb_init(b, b->ctx);
}

void pch_vx_fbb_reset(pch_vx_fbb *b)
{
    b->size = 0;
    b->minalign = 1;
    b->oom = 0;
    b->in_table = 0;
    b->n_fields = 0;
}

/* Make room for n more bytes at the front. */
static int fbb_grow(pch_vx_fbb *b, size_t n)
{
    size_t need, ncap;
    uint8_t *nb;
    if (b->oom) return -1;
    if (!pch_add_size(&need, b->size, n) || need > 0x7fffffffu) { b->oom = PCH_ELIMIT; return -1; }
    if (need <= b->cap && b->buf) return 0;
    ncap = b->cap ? b->cap : 256;
    while (ncap < need) ncap *= 2;
    nb = pch_malloc(b->ctx, ncap);
    if (!nb) { b->oom = PCH_ENOMEM; return -1; }
    if (b->size) memcpy(nb + ncap - b->size, b->buf + b->cap - b->size, b->size);
    pch_free(b->ctx, b->buf);
    b->buf = nb;
    b->cap = ncap;
    return 0;
}

static uint8_t *fbb_push(pch_vx_fbb *b, size_t n)
{
    if (fbb_grow(b, n) < 0) return NULL;
    b->size += n;
    return b->buf + b->cap - b->size;
}

/* Pad so that after writing `extra` more bytes the size is a multiple of align. */
static void fbb_prep(pch_vx_fbb *b, size_t align, size_t extra)
{
    size_t pad;
    uint8_t *p;
    if (align > b->minalign) b->minalign = align;
    pad = (~(b->size + extra) + 1) & (align - 1);
    if (pad) {
        p = fbb_push(b, pad);
        if (p) memset(p, 0, pad);
    }
}

uint32_t pch_vx_fbb_vector(pch_vx_fbb *b, const void *data, size_t n, size_t elem_size,
                           size_t elem_align)
{
    size_t bytes;
    uint8_t *p;
    if (!pch_mul_size(&bytes, n, elem_size) || n > 0x7fffffffu) { b->oom = PCH_ELIMIT; return 0; }
    fbb_prep(b, 4, bytes);
    fbb_prep(b, elem_align, bytes);
    p = fbb_push(b, bytes);
    if (!p) return 0;
    if (bytes) memcpy(p, data, bytes);
    fbb_prep(b, 4, 0);
    p = fbb_push(b, 4);
    if (!p) return 0;
    pch_store_le32(p, (uint32_t)n);
    return (uint32_t)b->size;
}

uint32_t pch_vx_fbb_bytes(pch_vx_fbb *b, const void *p, size_t len)
{
    return pch_vx_fbb_vector(b, p, len, 1, 1);
}

uint32_t pch_vx_fbb_string(pch_vx_fbb *b, const char *s, size_t len)
{
    uint8_t *p;
    if (len > 0x7ffffff0u) { b->oom = PCH_ELIMIT; return 0; }
    fbb_prep(b, 4, len + 1);
    p = fbb_push(b, len + 1);
    if (!p) return 0;
    if (len) memcpy(p, s, len);
    p[len] = 0;
    p = fbb_push(b, 4);
    if (!p) return 0;
    pch_store_le32(p, (uint32_t)len);
    return (uint32_t)b->size;
}

static void fbb_uoff(pch_vx_fbb *b, uint32_t target)
{
    uint8_t *p;
    fbb_prep(b, 4, 4);
    p = fbb_push(b, 4);
    if (!p) return;
    pch_store_le32(p, (uint32_t)b->size - target);
}

uint32_t pch_vx_fbb_offsets(pch_vx_fbb *b, const uint32_t *offs, size_t n)
{
    uint8_t *p;
    if (n > 0x0fffffffu) { b->oom = PCH_ELIMIT; return 0; }
    fbb_prep(b, 4, 4 * n);
    for (size_t i = n; i-- > 0;) fbb_uoff(b, offs[i]);
    p = fbb_push(b, 4);
    if (!p) return 0;
    pch_store_le32(p, (uint32_t)n);
    return (uint32_t)b->size;
}

void pch_vx_fbb_start(pch_vx_fbb *b)
{
    b->in_table = 1;
    b->n_fields = 0;
    b->table_start = b->size;
}

static void fbb_field(pch_vx_fbb *b, unsigned slot)
{
    if (b->n_fields >= PCH_VX_FB_MAX_FIELDS || slot >= PCH_VX_FB_MAX_FIELDS) {
        b->oom = PCH_ELIMIT;
        return;
    }
    b->field_slot[b->n_fields] = (uint16_t)slot;
    b->field_off[b->n_fields] = (uint32_t)b->size;
    b->n_fields++;
}

static void fbb_scalar(pch_vx_fbb *b, unsigned slot, const void *v, size_t n)
{
    uint8_t *p;
    fbb_prep(b, n, n);
    p = fbb_push(b, n);
    if (!p) return;
    memcpy(p, v, n);
    fbb_field(b, slot);
}

void pch_vx_fbb_u8(pch_vx_fbb *b, unsigned slot, uint8_t v, uint8_t def, int force)
{ if (force || v != def) fbb_scalar(b, slot, &v, 1); }
void pch_vx_fbb_u16(pch_vx_fbb *b, unsigned slot, uint16_t v, uint16_t def, int force)
{ uint8_t t[2]; if (!force && v == def) return; pch_store_le16(t, v); fbb_scalar(b, slot, t, 2); }
void pch_vx_fbb_u32(pch_vx_fbb *b, unsigned slot, uint32_t v, uint32_t def, int force)
{ uint8_t t[4]; if (!force && v == def) return; pch_store_le32(t, v); fbb_scalar(b, slot, t, 4); }
void pch_vx_fbb_u64(pch_vx_fbb *b, unsigned slot, uint64_t v, uint64_t def, int force)
{ uint8_t t[8]; if (!force && v == def) return; pch_store_le64(t, v); fbb_scalar(b, slot, t, 8); }

void pch_vx_fbb_off(pch_vx_fbb *b, unsigned slot, uint32_t off)
{
    if (!off) return;
    fbb_uoff(b, off);
    fbb_field(b, slot);
}

uint32_t pch_vx_fbb_end(pch_vx_fbb *b)
{
    uint8_t *p;
    uint32_t tab, vt_len, tab_len, max_slot = 0;
    /* soffset placeholder, then the vtable right in front of the table */
    fbb_prep(b, 4, 4);
    p = fbb_push(b, 4);
    if (!p) return 0;
    tab = (uint32_t)b->size;
    for (uint32_t i = 0; i < b->n_fields; i++)
        if (b->field_slot[i] + 1u > max_slot) max_slot = b->field_slot[i] + 1u;
    vt_len = 4 + 2 * max_slot;
    tab_len = tab - (uint32_t)b->table_start;
    if (tab_len > 0xffff) { b->oom = PCH_ELIMIT; return 0; }
    p = fbb_push(b, vt_len);
    if (!p) return 0;
    memset(p, 0, vt_len);
    pch_store_le16(p, (uint16_t)vt_len);
    pch_store_le16(p + 2, (uint16_t)tab_len);
    for (uint32_t i = 0; i < b->n_fields; i++)
        pch_store_le16(p + 4 + 2 * b->field_slot[i], (uint16_t)(tab - b->field_off[i]));
    /* table soffset = table_pos - vtable_pos = (end-rel vtable) - (end-rel table) */
    pch_store_le32(b->buf + b->cap - tab, (uint32_t)(b->size - tab));
    b->in_table = 0;
    b->n_fields = 0;
    return tab;
}

int pch_vx_fbb_finish(pch_vx_fbb *b, uint32_t root, pch_bytes *out, pch_error *err)
{
    out->ptr = NULL;
    out->len = 0;
    fbb_prep(b, b->minalign > 4 ? b->minalign : 4, 4);
    fbb_uoff(b, root);
    if (b->oom || !root)
        return pch_error_set(err, b->oom == PCH_ELIMIT ? PCH_ELIMIT : PCH_ENOMEM,
                             "vortex: flatbuffer build %s",
                             b->oom == PCH_ELIMIT ? "too large" : "out of memory");
    out->ptr = b->buf + b->cap - b->size;
    out->len = b->size;
    return PCH_OK;
}

/* ------------------------------------------------------------------ reader / verifier */

bool pch_vx_utf8_rows_valid(const uint8_t *data, const int64_t *offsets, uint64_t rows)
{
    size_t n = (size_t)offsets[rows];
    if (!pch_vx_utf8_valid(data, n)) return false;
    for (uint64_t k = 1; k < rows; k++)
        if ((size_t)offsets[k] < n && (data[offsets[k]] & 0xc0) == 0x80) return false;
    return true;
}

bool pch_vx_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path: 16 bytes at a time while no byte has its high bit set (most
        ** agent-log text is ASCII; this check ran byte by byte at 14% of a full scan). */
        while (n - i >= 16) {
            uint64_t a, b;
            memcpy(&a, s + i, 8);
            memcpy(&b, s + i + 8, 8);
            if ((a | b) & 0x8080808080808080ull) break;
            i += 16;
        }
        if (i >= n) break;
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t k;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) { k = 1; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { k = 2; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { k = 3; cp = c & 0x07; }
        else return false;
        if (k > n - i - 1) return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

static int fb_bad(const pch_vx_fbv *v, const char *what, size_t at)
{
    return pch_error_set(v->err, PCH_ECORRUPT, "vortex %s flatbuffer: %s at byte %zu",
                         v->what, what, at);
}

int pch_vx_fb_need(const pch_vx_fbv *v, size_t off, size_t len)
{
    if (!v->need || !len) return PCH_OK;
    if (off > v->len || len > v->len - off) return fb_bad(v, "range out of buffer", off);
    return v->need(v->need_payload, off, len, v->err);
}

#define NEED(v, off, len) PCH_TRY(pch_vx_fb_need((v), (off), (len)))

static int fb_table_at(pch_vx_fbt *out, pch_vx_fbv *v, size_t pos, unsigned depth)
{
    int32_t soff;
    int64_t vt;
    memset(out, 0, sizeof(*out));
    if (depth > PCH_VX_FB_MAX_DEPTH)
        return pch_error_set(v->err, PCH_ELIMIT, "vortex %s flatbuffer: depth above %d",
                             v->what, PCH_VX_FB_MAX_DEPTH);
    if (++v->tables > PCH_VX_FB_MAX_TABLES)
        return pch_error_set(v->err, PCH_ELIMIT, "vortex %s flatbuffer: more than %u tables",
                             v->what, PCH_VX_FB_MAX_TABLES);
    if (pos % 4 != 0) return fb_bad(v, "misaligned table", pos);
    if (v->len < 4 || pos > v->len - 4) return fb_bad(v, "table out of range", pos);
    NEED(v, pos, 4);
    soff = (int32_t)pch_load_le32(v->buf + pos);
    vt = (int64_t)pos - (int64_t)soff;
    if (vt < 0 || vt % 2 != 0 || (uint64_t)vt > v->len - 4) return fb_bad(v, "bad vtable offset", pos);
    NEED(v, (size_t)vt, 4);
    out->v = v;
    out->pos = pos;
    out->vt = (size_t)vt;
    out->vt_len = pch_load_le16(v->buf + out->vt);
    out->tab_len = pch_load_le16(v->buf + out->vt + 2);
    out->depth = depth;
    if (out->vt_len < 4 || out->vt_len % 2 != 0 || out->vt_len > v->len - out->vt)
        return fb_bad(v, "bad vtable length", out->vt);
    if (out->tab_len < 4 || out->tab_len > v->len - pos) return fb_bad(v, "bad table length", pos);
    NEED(v, out->vt, out->vt_len);
    NEED(v, pos, out->tab_len);
    return PCH_OK;
}

int pch_vx_fb_root(pch_vx_fbt *out, pch_vx_fbv *v, const uint8_t *buf, size_t len,
                   const char *what, pch_error *err)
{
    return pch_vx_fb_root_paged(out, v, buf, len, what, NULL, NULL, err);
}

int pch_vx_fb_root_paged(pch_vx_fbt *out, pch_vx_fbv *v, const uint8_t *buf, size_t len,
                         const char *what, pch_vx_fb_need_fn need, void *payload, pch_error *err)
{
    uint32_t root;
    v->buf = buf;
    v->len = len;
    v->tables = 0;
    v->what = what;
    v->err = err;
    v->need = need;
    v->need_payload = payload;
    memset(out, 0, sizeof(*out));
    if (len < 8 || len > 0x7fffffffu)
        return pch_error_set(err, PCH_ECORRUPT, "vortex %s flatbuffer: bad size %zu", what, len);
    NEED(v, 0, 4);
    root = pch_load_le32(buf);
    if (root >= len) return fb_bad(v, "root offset out of range", 0);
    return fb_table_at(out, v, root, 1);
}

/* Position of field `slot` of `size` bytes aligned to `align`; 0 when absent. */
static int fb_field(const pch_vx_fbt *t, unsigned slot, size_t size, size_t align, size_t *at)
{
    size_t vi = 4 + 2 * (size_t)slot;
    uint16_t voff;
    *at = 0;
    if (vi + 2 > t->vt_len) return PCH_OK;
    voff = pch_load_le16(t->v->buf + t->vt + vi);
    if (voff == 0) return PCH_OK;
    if (voff < 4 || (size_t)voff + size > t->tab_len) return fb_bad(t->v, "field outside table", t->pos);
    if ((t->pos + voff) % align != 0) return fb_bad(t->v, "misaligned field", t->pos + voff);
    *at = t->pos + voff;
    return PCH_OK;
}

int pch_vx_fb_has(const pch_vx_fbt *t, unsigned slot)
{
    size_t vi = 4 + 2 * (size_t)slot;
    if (vi + 2 > t->vt_len) return 0;
    return pch_load_le16(t->v->buf + t->vt + vi) != 0;
}

#define FB_SCALAR(name, T, n, load) \
int pch_vx_fb_##name(const pch_vx_fbt *t, unsigned slot, T def, T *out) \
{ size_t at; int rc = fb_field(t, slot, n, n, &at); *out = def; \
  if (!rc && at) *out = (T)load(t->v->buf + at); \
  return rc; }
static inline uint8_t fb_ld8(const uint8_t *p) { return *p; }
FB_SCALAR(u8, uint8_t, 1, fb_ld8)
FB_SCALAR(u16, uint16_t, 2, pch_load_le16)
FB_SCALAR(u32, uint32_t, 4, pch_load_le32)
FB_SCALAR(u64, uint64_t, 8, pch_load_le64)

/* Follow the uoffset stored at `at`. */
static int fb_follow(const pch_vx_fbv *v, size_t at, size_t *target)
{
    uint32_t u;
    if (at % 4 != 0 || at > v->len - 4) return fb_bad(v, "bad offset field", at);
    NEED(v, at, 4);
    u = pch_load_le32(v->buf + at);
    if (u == 0 || u >= v->len - at) return fb_bad(v, "offset out of range", at);
    *target = at + u;
    return PCH_OK;
}

int pch_vx_fb_table(const pch_vx_fbt *t, unsigned slot, int required, pch_vx_fbt *out,
                    int *present)
{
    size_t at, target = 0;
    int rc;
    memset(out, 0, sizeof(*out));
    if (present) *present = 0;
    if ((rc = fb_field(t, slot, 4, 4, &at))) return rc;
    if (!at) {
        if (required) return pch_error_set(t->v->err, PCH_ECORRUPT,
                                           "vortex %s flatbuffer: required field %u missing",
                                           t->v->what, slot);
        return PCH_OK;
    }
    if ((rc = fb_follow(t->v, at, &target))) return rc;
    if ((rc = fb_table_at(out, t->v, target, t->depth + 1))) return rc;
    if (present) *present = 1;
    return PCH_OK;
}

/* elements: make them present too (0: the caller needs those it reads) */
static int fb_vec_at(const pch_vx_fbv *v, size_t target, size_t elem_size, size_t elem_align,
                     pch_vx_fbvec *out, int elements)
{
    uint32_t n;
    if (target % 4 != 0 || target > v->len - 4) return fb_bad(v, "bad vector", target);
    NEED(v, target, 4);
    n = pch_load_le32(v->buf + target);
    if ((uint64_t)n * elem_size > v->len - target - 4) return fb_bad(v, "vector out of range", target);
    if ((target + 4) % elem_align != 0) return fb_bad(v, "misaligned vector", target);
    if (elements) NEED(v, target + 4, (size_t)n * elem_size);
    out->pos = target + 4;
    out->n = n;
    return PCH_OK;
}

static int fb_vector(const pch_vx_fbt *t, unsigned slot, size_t elem_size, size_t elem_align,
                     pch_vx_fbvec *out, int *present, int elements)
{
    size_t at, target = 0;
    int rc;
    out->pos = 0;
    out->n = 0;
    if (present) *present = 0;
    if ((rc = fb_field(t, slot, 4, 4, &at))) return rc;
    if (!at) return PCH_OK;
    if ((rc = fb_follow(t->v, at, &target))) return rc;
    if ((rc = fb_vec_at(t->v, target, elem_size, elem_align, out, elements))) return rc;
    if (present) *present = 1;
    return PCH_OK;
}

int pch_vx_fb_vector(const pch_vx_fbt *t, unsigned slot, size_t elem_size, size_t elem_align,
                     pch_vx_fbvec *out, int *present)
{
    return fb_vector(t, slot, elem_size, elem_align, out, present, 1);
}

int pch_vx_fb_vector_lazy(const pch_vx_fbt *t, unsigned slot, size_t elem_size, size_t elem_align,
                          pch_vx_fbvec *out, int *present)
{
    return fb_vector(t, slot, elem_size, elem_align, out, present, 0);
}

int pch_vx_fb_vec_table(const pch_vx_fbt *t, const pch_vx_fbvec *vec, uint32_t i,
                        pch_vx_fbt *out)
{
    size_t target = 0;
    int rc;
    if (i >= vec->n) return fb_bad(t->v, "vector index", vec->pos);
    if ((rc = fb_follow(t->v, vec->pos + 4 * (size_t)i, &target))) return rc;
    return fb_table_at(out, t->v, target, t->depth + 1);
}

static int fb_string_at(const pch_vx_fbv *v, size_t target, const char **ptr, size_t *len)
{
    pch_vx_fbvec vec = { 0, 0 };   /* set by fb_vec_at; -O3 cannot see that */
    int rc;
    if ((rc = fb_vec_at(v, target, 1, 1, &vec, 1))) return rc;
    if (vec.n >= v->len - vec.pos) return fb_bad(v, "string without NUL terminator", target);
    NEED(v, vec.pos + vec.n, 1);
    if (v->buf[vec.pos + vec.n] != 0) return fb_bad(v, "string not NUL-terminated", target);
    if (!pch_vx_utf8_valid(v->buf + vec.pos, vec.n)) return fb_bad(v, "string not UTF-8", target);
    *ptr = (const char *)v->buf + vec.pos;
    *len = vec.n;
    return PCH_OK;
}

int pch_vx_fb_string(const pch_vx_fbt *t, unsigned slot, int required, const char **ptr,
                     size_t *len, int *present)
{
    size_t at, target = 0;
    int rc;
    *ptr = NULL;
    *len = 0;
    if (present) *present = 0;
    if ((rc = fb_field(t, slot, 4, 4, &at))) return rc;
    if (!at) {
        if (required) return pch_error_set(t->v->err, PCH_ECORRUPT,
                                           "vortex %s flatbuffer: required string %u missing",
                                           t->v->what, slot);
        return PCH_OK;
    }
    if ((rc = fb_follow(t->v, at, &target))) return rc;
    if ((rc = fb_string_at(t->v, target, ptr, len))) return rc;
    if (present) *present = 1;
    return PCH_OK;
}

int pch_vx_fb_vec_string(const pch_vx_fbt *t, const pch_vx_fbvec *vec, uint32_t i,
                         const char **ptr, size_t *len)
{
    size_t target = 0;
    int rc;
    if (i >= vec->n) return fb_bad(t->v, "vector index", vec->pos);
    if ((rc = fb_follow(t->v, vec->pos + 4 * (size_t)i, &target))) return rc;
    return fb_string_at(t->v, target, ptr, len);
}
