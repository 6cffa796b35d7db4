/* Vortex dtypes (vortex-format.md §2.4, §3): the in-memory tree, its FlatBuffer form, and
** the text schema syntax of the CLI. Invariants: Struct_ names/dtypes vectors are always
** written (even empty); Extension metadata is always written; an extension's nullability
** is its storage's; nested depth is bounded by the FlatBuffer depth limit (64). */
#include "vortex/vortex_int.h"

#include <ctype.h>
#include <stdlib.h>

static const char *const ptype_names[11] = { "u8", "u16", "u32", "u64", "i8", "i16", "i32",
                                             "i64", "f16", "f32", "f64" };
static const uint8_t ptype_widths[11] = { 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8 };

unsigned pch_vx_ptype_width(unsigned ptype) { return ptype < 11 ? ptype_widths[ptype] : 0; }
const char *pch_vx_ptype_name(unsigned ptype) { return ptype < 11 ? ptype_names[ptype] : "?"; }

unsigned pch_vx_decimal_width(unsigned precision)
{
    if (precision <= 2) return 1;
    if (precision <= 4) return 2;
    if (precision <= 9) return 4;
    if (precision <= 18) return 8;
    if (precision <= 38) return 16;
    return 32;
}

pch_vx_dtype *pch_vx__dtype_new(pch_ctx *ctx, unsigned kind, int nullable)
{
    pch_vx_dtype *d = pch_calloc(ctx, 1, sizeof(*d));
    if (!d) return NULL;
    d->ctx = ctx;
    d->kind = (uint8_t)kind;
    d->nullable = (uint8_t)(kind == PCH_VX_NULL ? 1 : !!nullable);
    return d;
}

void pch_vx_dtype_free(pch_vx_dtype *d)
{
    if (!d) return;
    for (uint32_t i = 0; i < d->n_fields; i++) {
        if (d->names) pch_free(d->ctx, d->names[i]);
        if (d->fields) pch_vx_dtype_free(d->fields[i]);
    }
    pch_free(d->ctx, d->names);
    pch_free(d->ctx, d->fields);
    pch_vx_dtype_free(d->elem);
    pch_free(d->ctx, d->ext_id);
    pch_free(d->ctx, d->ext_meta);
    pch_free(d->ctx, d);
}

static char *dup_mem(pch_ctx *ctx, const void *p, size_t n)
{
    char *s = pch_malloc(ctx, n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static int struct_alloc(pch_vx_dtype *d, uint32_t n)
{
    d->n_fields = 0;
    d->names = pch_calloc(d->ctx, n ? n : 1, sizeof(char *));
    d->fields = pch_calloc(d->ctx, n ? n : 1, sizeof(pch_vx_dtype *));
    return d->names && d->fields ? PCH_OK : PCH_ENOMEM;
}

static int clone_rec(pch_vx_dtype **out, pch_ctx *ctx, const pch_vx_dtype *s)
{
    pch_vx_dtype *d = pch_vx__dtype_new(ctx, s->kind, s->nullable);
    *out = NULL;
    if (!d) return PCH_ENOMEM;
    d->nullable = s->nullable;
    d->ptype = s->ptype;
    d->precision = s->precision;
    d->scale = s->scale;
    d->fsl_size = s->fsl_size;
    if (s->kind == PCH_VX_STRUCT) {
        if (struct_alloc(d, s->n_fields)) goto oom;
        for (uint32_t i = 0; i < s->n_fields; i++) {
            d->names[i] = dup_mem(ctx, s->names[i], strlen(s->names[i]));
            d->n_fields = i + 1;
            if (!d->names[i] || clone_rec(&d->fields[i], ctx, s->fields[i])) goto oom;
        }
    }
    if (s->elem && clone_rec(&d->elem, ctx, s->elem)) goto oom;
    if (s->ext_id && !(d->ext_id = dup_mem(ctx, s->ext_id, strlen(s->ext_id)))) goto oom;
    if (s->ext_meta_len) {
        if (!(d->ext_meta = (uint8_t *)dup_mem(ctx, s->ext_meta, s->ext_meta_len))) goto oom;
        d->ext_meta_len = s->ext_meta_len;
    }
    *out = d;
    return PCH_OK;
oom:
    pch_vx_dtype_free(d);
    return PCH_ENOMEM;
}

int pch_vx_dtype_clone(pch_vx_dtype **out, const pch_vx_dtype *dt, pch_error *err)
{
    if (clone_rec(out, dt->ctx, dt)) return pch_error_set(err, PCH_ENOMEM, "vortex: dtype clone");
    return PCH_OK;
}

int pch_vx__dtype_with_nullable(pch_vx_dtype **out, const pch_vx_dtype *dt, int nullable,
                                pch_error *err)
{
    PCH_TRY(pch_vx_dtype_clone(out, dt, err));
    if ((*out)->kind != PCH_VX_NULL && (*out)->kind != PCH_VX_EXTENSION)
        (*out)->nullable = (uint8_t)!!nullable;
    return PCH_OK;
}

int pch_vx_dtype_equal(const pch_vx_dtype *a, const pch_vx_dtype *b)
{
    if (a->kind != b->kind || a->nullable != b->nullable) return 0;
    switch (a->kind) {
    case PCH_VX_PRIMITIVE: return a->ptype == b->ptype;
    case PCH_VX_DECIMAL: return a->precision == b->precision && a->scale == b->scale;
    case PCH_VX_STRUCT:
        if (a->n_fields != b->n_fields) return 0;
        for (uint32_t i = 0; i < a->n_fields; i++)
            if (strcmp(a->names[i], b->names[i]) || !pch_vx_dtype_equal(a->fields[i], b->fields[i]))
                return 0;
        return 1;
    case PCH_VX_LIST: return pch_vx_dtype_equal(a->elem, b->elem);
    case PCH_VX_FIXED_SIZE_LIST: return a->fsl_size == b->fsl_size && pch_vx_dtype_equal(a->elem, b->elem);
    case PCH_VX_EXTENSION:
        return strcmp(a->ext_id, b->ext_id) == 0 && a->ext_meta_len == b->ext_meta_len &&
               (!a->ext_meta_len || memcmp(a->ext_meta, b->ext_meta, a->ext_meta_len) == 0) &&
               pch_vx_dtype_equal(a->elem, b->elem);
    default: return 1;
    }
}

/* ------------------------------------------------------------------ text syntax */

typedef struct dparse {
    const char *s;
    size_t i;
    pch_ctx *ctx;
    pch_error *err;
    unsigned depth;
} dparse;

static void ws(dparse *p) { while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n') p->i++; }
static int perr(dparse *p, const char *what)
{
    return pch_error_set(p->err, PCH_EINVAL, "vortex schema: %s at offset %zu", what, p->i);
}
static int eat(dparse *p, char c) { ws(p); if (p->s[p->i] == c) { p->i++; return 1; } return 0; }
static int word(dparse *p, const char **w, size_t *n)
{
    ws(p);
    *w = p->s + p->i;
    while (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_' || p->s[p->i] == '-' ||
           p->s[p->i] == '.' || (unsigned char)p->s[p->i] >= 0x80)
        p->i++;
    *n = (size_t)(p->s + p->i - *w);
    return *n > 0;
}
static int number(dparse *p, long *out)
{
    char *end;
    ws(p);
    if (!isdigit((unsigned char)p->s[p->i]) && p->s[p->i] != '-') return 0;
    *out = strtol(p->s + p->i, &end, 10);
    p->i = (size_t)(end - p->s);
    return 1;
}

static int parse_type(dparse *p, pch_vx_dtype **out);

static int parse_fields(dparse *p, pch_vx_dtype *d, char close)
{
    uint32_t cap = 0;
    if (struct_alloc(d, 0)) return PCH_ENOMEM;
    ws(p);
    if (close && p->s[p->i] == close) return PCH_OK;
    if (!close && p->s[p->i] == 0) return PCH_OK;
    for (;;) {
        const char *w;
        size_t n;
        pch_vx_dtype *f = NULL;
        ws(p);
        if (p->s[p->i] == '"') {
            size_t st = ++p->i;
            while (p->s[p->i] && p->s[p->i] != '"') p->i++;
            if (!p->s[p->i]) return perr(p, "unterminated field name");
            w = p->s + st;
            n = p->i - st;
            p->i++;
        } else if (!word(p, &w, &n)) {
            return perr(p, "expected field name");
        }
        if (!eat(p, ':')) return perr(p, "expected ':'");
        PCH_TRY(parse_type(p, &f));
        if (d->n_fields == cap) {
            uint32_t nc = cap ? cap * 2 : 4;
            char **nn = pch_realloc(d->ctx, d->names, nc * sizeof(char *));
            if (!nn) { pch_vx_dtype_free(f); return PCH_ENOMEM; }
            d->names = nn;
            pch_vx_dtype **nf = pch_realloc(d->ctx, d->fields, nc * sizeof(pch_vx_dtype *));
            if (!nf) { pch_vx_dtype_free(f); return PCH_ENOMEM; }
            d->fields = nf;
            cap = nc;
        }
        d->names[d->n_fields] = dup_mem(d->ctx, w, n);
        d->fields[d->n_fields] = f;
        d->n_fields++;
        if (!d->names[d->n_fields - 1]) return PCH_ENOMEM;
        if (!eat(p, ',')) break;
    }
    return PCH_OK;
}

static int parse_type(dparse *p, pch_vx_dtype **out)
{
    const char *w;
    size_t n;
    pch_vx_dtype *d = NULL;
    int rc = PCH_OK;
    *out = NULL;
    if (++p->depth > 60) return pch_error_set(p->err, PCH_ELIMIT, "vortex schema: nesting too deep");
    if (!word(p, &w, &n)) return perr(p, "expected a type");
#define IS(x) (n == sizeof(x) - 1 && memcmp(w, x, n) == 0)
    int is_prim = 0;
    for (unsigned k = 0; k < 11; k++)
        if (n == strlen(ptype_names[k]) && memcmp(w, ptype_names[k], n) == 0) {
            is_prim = 1;
            d = pch_vx__dtype_new(p->ctx, PCH_VX_PRIMITIVE, 0);
            if (d) d->ptype = (uint8_t)k;
        }
    if (is_prim) {
    } else if (IS("null")) d = pch_vx__dtype_new(p->ctx, PCH_VX_NULL, 1);
    else if (IS("bool")) d = pch_vx__dtype_new(p->ctx, PCH_VX_BOOL, 0);
    else if (IS("utf8")) d = pch_vx__dtype_new(p->ctx, PCH_VX_UTF8, 0);
    else if (IS("binary")) d = pch_vx__dtype_new(p->ctx, PCH_VX_BINARY, 0);
    else if (IS("decimal")) {
        long prec, sc;
        if (!eat(p, '(') || !number(p, &prec) || !eat(p, ',') || !number(p, &sc) || !eat(p, ')'))
            return perr(p, "expected decimal(P,S)");
        if (prec < 1 || prec > 76 || sc < -128 || sc > 127 || (sc > 0 && sc > prec))
            return perr(p, "decimal precision/scale out of range");
        if ((d = pch_vx__dtype_new(p->ctx, PCH_VX_DECIMAL, 0))) {
            d->precision = (uint8_t)prec;
            d->scale = (int8_t)sc;
        }
    } else if (IS("list") || IS("fsl")) {
        int fsl = IS("fsl");
        long sz = 0;
        if (!eat(p, '<')) return perr(p, "expected '<'");
        if (!(d = pch_vx__dtype_new(p->ctx, fsl ? PCH_VX_FIXED_SIZE_LIST : PCH_VX_LIST, 0)))
            return PCH_ENOMEM;
        if ((rc = parse_type(p, &d->elem))) goto fail;
        if (fsl && (!eat(p, ',') || !number(p, &sz) || sz < 0 || sz > 0x7fffffffL)) {
            rc = perr(p, "expected fsl<type,N>");
            goto fail;
        }
        d->fsl_size = (uint32_t)sz;
        if (!eat(p, '>')) { rc = perr(p, "expected '>'"); goto fail; }
    } else if (IS("struct")) {
        if (!eat(p, '<')) return perr(p, "expected '<'");
        if (!(d = pch_vx__dtype_new(p->ctx, PCH_VX_STRUCT, 0))) return PCH_ENOMEM;
        if ((rc = parse_fields(p, d, '>'))) goto fail;
        if (!eat(p, '>')) { rc = perr(p, "expected '>'"); goto fail; }
    } else if (IS("ext")) {
        size_t st;
        if (!eat(p, '<') || !eat(p, '"')) return perr(p, "expected ext<\"id\",type>");
        st = p->i;
        while (p->s[p->i] && p->s[p->i] != '"') p->i++;
        if (!p->s[p->i]) return perr(p, "unterminated extension id");
        if (!(d = pch_vx__dtype_new(p->ctx, PCH_VX_EXTENSION, 0))) return PCH_ENOMEM;
        if (!(d->ext_id = dup_mem(p->ctx, p->s + st, p->i - st))) { rc = PCH_ENOMEM; goto fail; }
        p->i++;
        if (!eat(p, ',')) { rc = perr(p, "expected ','"); goto fail; }
        if ((rc = parse_type(p, &d->elem))) goto fail;
        if (!eat(p, '>')) { rc = perr(p, "expected '>'"); goto fail; }
    } else {
        return perr(p, "unknown type name");
    }
#undef IS
    if (!d) return pch_error_set(p->err, PCH_ENOMEM, "vortex schema: out of memory");
    if (eat(p, '?')) {
        if (d->kind == PCH_VX_EXTENSION) d->elem->nullable = 1;
        else d->nullable = 1;
    }
    if (d->kind == PCH_VX_EXTENSION) d->nullable = d->elem->nullable;
    p->depth--;
    *out = d;
    return PCH_OK;
fail:
    pch_vx_dtype_free(d);
    if (rc == PCH_ENOMEM) return pch_error_set(p->err, PCH_ENOMEM, "vortex schema: out of memory");
    return rc;
}

int pch_vx_dtype_parse(pch_vx_dtype **out, pch_ctx *ctx, const char *text, pch_error *err)
{
    dparse p = { text, 0, ctx, err, 0 };
    pch_vx_dtype *d = NULL;
    int rc;
    *out = NULL;
    ws(&p);
    /* A bare type ("i64", "struct<...>") or a field list ("a:i64,b:utf8"). */
    {
        size_t save = p.i;
        const char *w;
        size_t n;
        int is_fields = word(&p, &w, &n) && eat(&p, ':');
        int is_quoted = text[save] == '"';
        p.i = save;
        if (is_fields || is_quoted || text[save] == 0) {
            if (!(d = pch_vx__dtype_new(ctx, PCH_VX_STRUCT, 0)))
                return pch_error_set(err, PCH_ENOMEM, "vortex schema: out of memory");
            rc = parse_fields(&p, d, 0);
            if (rc == PCH_ENOMEM) pch_error_set(err, PCH_ENOMEM, "vortex schema: out of memory");
        } else {
            rc = parse_type(&p, &d);
        }
    }
    if (rc) {
        pch_vx_dtype_free(d);
        return rc;
    }
    ws(&p);
    if (text[p.i] != 0) {
        pch_vx_dtype_free(d);
        return perr(&p, "trailing characters");
    }
    *out = d;
    return PCH_OK;
}

static int fmt_rec(pch_buf *b, const pch_vx_dtype *d)
{
    switch (d->kind) {
    case PCH_VX_NULL: return pch_buf_append_str(b, "null");
    case PCH_VX_BOOL: pch_buf_append_str(b, "bool"); break;
    case PCH_VX_PRIMITIVE: pch_buf_append_str(b, pch_vx_ptype_name(d->ptype)); break;
    case PCH_VX_DECIMAL: pch_buf_printf(b, "decimal(%u,%d)", d->precision, d->scale); break;
    case PCH_VX_UTF8: pch_buf_append_str(b, "utf8"); break;
    case PCH_VX_BINARY: pch_buf_append_str(b, "binary"); break;
    case PCH_VX_STRUCT:
        pch_buf_append_str(b, "struct<");
        for (uint32_t i = 0; i < d->n_fields; i++) {
            const char *nm = d->names[i];
            int plain = *nm != 0;
            for (const char *c = nm; *c; c++)
                if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.' ||
                      (unsigned char)*c >= 0x80)) plain = 0;
            if (i) pch_buf_putc(b, ',');
            if (plain) pch_buf_append_str(b, nm);
            else pch_buf_printf(b, "\"%s\"", nm);
            pch_buf_putc(b, ':');
            PCH_TRY(fmt_rec(b, d->fields[i]));
        }
        pch_buf_putc(b, '>');
        break;
    case PCH_VX_LIST:
        pch_buf_append_str(b, "list<");
        PCH_TRY(fmt_rec(b, d->elem));
        pch_buf_putc(b, '>');
        break;
    case PCH_VX_FIXED_SIZE_LIST:
        pch_buf_append_str(b, "fsl<");
        PCH_TRY(fmt_rec(b, d->elem));
        pch_buf_printf(b, ",%u>", d->fsl_size);
        break;
    case PCH_VX_EXTENSION:
        /* nullability lives on the storage type */
        pch_buf_printf(b, "ext<\"%s\",", d->ext_id);
        PCH_TRY(fmt_rec(b, d->elem));
        return pch_buf_putc(b, '>');
    default: return PCH_EINVAL;
    }
    if (d->nullable) pch_buf_putc(b, '?');
    return b->oom ? PCH_ENOMEM : PCH_OK;
}

int pch_vx_dtype_format(char **out, const pch_vx_dtype *dt, pch_error *err)
{
    pch_buf b;
    size_t n;
    pch_buf_init(&b, dt->ctx);
    *out = NULL;
    if (fmt_rec(&b, dt) || pch_buf_putc(&b, 0)) {
        pch_buf_dispose(&b);
        return pch_error_set(err, PCH_ENOMEM, "vortex: dtype format");
    }
    *out = (char *)pch_buf_detach(&b, &n);
    return PCH_OK;
}

/* ------------------------------------------------------------------ FlatBuffer form */

uint32_t pch_vx__dtype_to_fb(pch_vx_fbb *b, const pch_vx_dtype *d)
{
    uint32_t inner = 0, a = 0, c = 0;
    switch (d->kind) {
    case PCH_VX_NULL:
        pch_vx_fbb_start(b);
        inner = pch_vx_fbb_end(b);
        break;
    case PCH_VX_BOOL: case PCH_VX_UTF8: case PCH_VX_BINARY:
        pch_vx_fbb_start(b);
        pch_vx_fbb_u8(b, 0, d->nullable, 0, 0);
        inner = pch_vx_fbb_end(b);
        break;
    case PCH_VX_PRIMITIVE:
        pch_vx_fbb_start(b);
        pch_vx_fbb_u8(b, 0, d->ptype, 0, 0);
        pch_vx_fbb_u8(b, 1, d->nullable, 0, 0);
        inner = pch_vx_fbb_end(b);
        break;
    case PCH_VX_DECIMAL:
        pch_vx_fbb_start(b);
        pch_vx_fbb_u8(b, 0, d->precision, 0, 0);
        pch_vx_fbb_u8(b, 1, (uint8_t)d->scale, 0, 0);
        pch_vx_fbb_u8(b, 2, d->nullable, 0, 0);
        inner = pch_vx_fbb_end(b);
        break;
    case PCH_VX_STRUCT: {
        uint32_t *offs = pch_calloc(b->ctx, d->n_fields ? d->n_fields : 1, sizeof(uint32_t));
        if (!offs) { b->oom = PCH_ENOMEM; return 0; }
        for (uint32_t i = 0; i < d->n_fields; i++)
            offs[i] = pch_vx_fbb_string(b, d->names[i], strlen(d->names[i]));
        a = pch_vx_fbb_offsets(b, offs, d->n_fields);
        for (uint32_t i = 0; i < d->n_fields; i++) offs[i] = pch_vx__dtype_to_fb(b, d->fields[i]);
        c = pch_vx_fbb_offsets(b, offs, d->n_fields);
        pch_free(b->ctx, offs);
        pch_vx_fbb_start(b);
        pch_vx_fbb_off(b, 0, a);
        pch_vx_fbb_off(b, 1, c);
        pch_vx_fbb_u8(b, 2, d->nullable, 0, 0);
        inner = pch_vx_fbb_end(b);
        break;
    }
    case PCH_VX_LIST:
        a = pch_vx__dtype_to_fb(b, d->elem);
        pch_vx_fbb_start(b);
        pch_vx_fbb_off(b, 0, a);
        pch_vx_fbb_u8(b, 1, d->nullable, 0, 0);
        inner = pch_vx_fbb_end(b);
        break;
    case PCH_VX_FIXED_SIZE_LIST:
        a = pch_vx__dtype_to_fb(b, d->elem);
        pch_vx_fbb_start(b);
        pch_vx_fbb_off(b, 0, a);
        pch_vx_fbb_u32(b, 1, d->fsl_size, 0, 0);
        pch_vx_fbb_u8(b, 2, d->nullable, 0, 0);
        inner = pch_vx_fbb_end(b);
        break;
    case PCH_VX_EXTENSION:
        a = pch_vx_fbb_string(b, d->ext_id, strlen(d->ext_id));
        c = pch_vx__dtype_to_fb(b, d->elem);
        {
            uint32_t m = pch_vx_fbb_bytes(b, d->ext_meta, d->ext_meta_len); /* always present */
            pch_vx_fbb_start(b);
            pch_vx_fbb_off(b, 0, a);
            pch_vx_fbb_off(b, 1, c);
            pch_vx_fbb_off(b, 2, m);
            inner = pch_vx_fbb_end(b);
        }
        break;
    default:
        b->oom = PCH_ELIMIT;
        return 0;
    }
    pch_vx_fbb_start(b);
    pch_vx_fbb_u8(b, 0, d->kind, 0, 1);
    pch_vx_fbb_off(b, 1, inner);
    return pch_vx_fbb_end(b);
}

static int fb_bool(const pch_vx_fbt *t, unsigned slot, uint8_t *out, pch_error *err)
{
    uint8_t v;
    PCH_TRY(pch_vx_fb_u8(t, slot, 0, &v));
    if (v > 1) return pch_error_set(err, PCH_ECORRUPT, "vortex dtype: bool field value %u", v);
    *out = v;
    return PCH_OK;
}

int pch_vx__dtype_from_fb(pch_vx_dtype **out, pch_ctx *ctx, const pch_vx_fbt *t, pch_error *err)
{
    uint8_t tag;
    pch_vx_fbt in, sub;
    int present, rc;
    pch_vx_dtype *d = NULL;
    *out = NULL;
    PCH_TRY(pch_vx_fb_u8(t, 0, 0, &tag));
    PCH_TRY(pch_vx_fb_table(t, 1, 0, &in, &present));
    if (tag == 0 || !present) {
        if (tag == 0 && !present)
            return pch_error_set(err, PCH_ECORRUPT, "vortex dtype: union type missing");
        return pch_error_set(err, PCH_ECORRUPT, "vortex dtype: union tag and value disagree");
    }
    if (tag > PCH_VX_FIXED_SIZE_LIST)
        return pch_error_set(err, PCH_EUNSUPPORTED, "vortex dtype: union tag %u (variant/union)", tag);
    if (!(d = pch_vx__dtype_new(ctx, tag, 0))) return pch_error_set(err, PCH_ENOMEM, "vortex dtype");
    switch (tag) {
    case PCH_VX_NULL: break;
    case PCH_VX_BOOL: case PCH_VX_UTF8: case PCH_VX_BINARY:
        if ((rc = fb_bool(&in, 0, &d->nullable, err))) goto fail;
        break;
    case PCH_VX_PRIMITIVE:
        if ((rc = pch_vx_fb_u8(&in, 0, 0, &d->ptype))) goto fail;
        if (d->ptype > PCH_VX_F64) { rc = pch_error_set(err, PCH_ECORRUPT, "vortex dtype: ptype %u", d->ptype); goto fail; }
        if ((rc = fb_bool(&in, 1, &d->nullable, err))) goto fail;
        break;
    case PCH_VX_DECIMAL: {
        uint8_t sc;
        if ((rc = pch_vx_fb_u8(&in, 0, 0, &d->precision)) || (rc = pch_vx_fb_u8(&in, 1, 0, &sc)) ||
            (rc = fb_bool(&in, 2, &d->nullable, err)))
            goto fail;
        d->scale = (int8_t)sc;
        if (d->precision < 1 || d->precision > 76 || (d->scale > 0 && d->scale > (int)d->precision)) {
            rc = pch_error_set(err, PCH_ECORRUPT, "vortex dtype: decimal(%u,%d)", d->precision, d->scale);
            goto fail;
        }
        break;
    }
    case PCH_VX_STRUCT: {
        pch_vx_fbvec names, types;
        int pn, pt;
        if ((rc = pch_vx_fb_vector(&in, 0, 4, 4, &names, &pn)) ||
            (rc = pch_vx_fb_vector(&in, 1, 4, 4, &types, &pt)) ||
            (rc = fb_bool(&in, 2, &d->nullable, err)))
            goto fail;
        if (!pn || !pt || names.n != types.n) {
            rc = pch_error_set(err, PCH_ECORRUPT, "vortex dtype: struct names/dtypes missing or unequal");
            goto fail;
        }
        if (struct_alloc(d, names.n)) { rc = pch_error_set(err, PCH_ENOMEM, "vortex dtype"); goto fail; }
        for (uint32_t i = 0; i < names.n; i++) {
            const char *s;
            size_t n;
            if ((rc = pch_vx_fb_vec_string(&in, &names, i, &s, &n))) goto fail;
            if (!(d->names[i] = dup_mem(ctx, s, n))) { rc = pch_error_set(err, PCH_ENOMEM, "vortex dtype"); goto fail; }
            d->n_fields = i + 1;
            if ((rc = pch_vx_fb_vec_table(&in, &types, i, &sub)) ||
                (rc = pch_vx__dtype_from_fb(&d->fields[i], ctx, &sub, err)))
                goto fail;
        }
        break;
    }
    case PCH_VX_LIST: case PCH_VX_FIXED_SIZE_LIST:
        if ((rc = pch_vx_fb_table(&in, 0, 1, &sub, NULL)) ||
            (rc = pch_vx__dtype_from_fb(&d->elem, ctx, &sub, err)))
            goto fail;
        if (tag == PCH_VX_LIST) {
            if ((rc = fb_bool(&in, 1, &d->nullable, err))) goto fail;
        } else if ((rc = pch_vx_fb_u32(&in, 1, 0, &d->fsl_size)) || (rc = fb_bool(&in, 2, &d->nullable, err))) {
            goto fail;
        }
        break;
    case PCH_VX_EXTENSION: {
        const char *s;
        size_t n;
        pch_vx_fbvec m;
        int pm;
        if ((rc = pch_vx_fb_string(&in, 0, 1, &s, &n, NULL))) goto fail;
        if (!(d->ext_id = dup_mem(ctx, s, n))) { rc = pch_error_set(err, PCH_ENOMEM, "vortex dtype"); goto fail; }
        if ((rc = pch_vx_fb_table(&in, 1, 1, &sub, NULL)) ||
            (rc = pch_vx__dtype_from_fb(&d->elem, ctx, &sub, err)) ||
            (rc = pch_vx_fb_vector(&in, 2, 1, 1, &m, &pm)))
            goto fail;
        if (!pm) { rc = pch_error_set(err, PCH_ECORRUPT, "vortex dtype: extension metadata missing"); goto fail; }
        if (m.n) {
            if (!(d->ext_meta = (uint8_t *)dup_mem(ctx, in.v->buf + m.pos, m.n))) {
                rc = pch_error_set(err, PCH_ENOMEM, "vortex dtype");
                goto fail;
            }
            d->ext_meta_len = m.n;
        }
        d->nullable = d->elem->nullable;
        break;
    }
    default: break;
    }
    *out = d;
    return PCH_OK;
fail:
    pch_vx_dtype_free(d);
    return rc;
}
