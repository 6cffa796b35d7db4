/* JSON values → Vortex builders, and schema inference from JSON objects (for
** `pchronicle-vortex convert --from FILE.jsonl`). Inference: integers → i64 (u64 when above
** INT64_MAX), any fraction/exponent → f64, strings → utf8, booleans → bool, objects →
** struct, arrays → list; every column nullable; conflicting kinds → utf8 holding JSON text. */
#include <stdlib.h>

#include "vx_cli.h"

static int b64v(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static int b64_decode(const char *s, size_t n, unsigned char **out, size_t *out_len)
{
    unsigned char *o;
    size_t k = 0;
    unsigned acc = 0;
    int bits = 0;
    if (n % 4) return -1;
    o = malloc(n / 4 * 3 + 1);
    if (!o) return -1;
    for (size_t i = 0; i < n; i++) {
        int v;
        if (s[i] == '=') {
            if (i + 2 < n || (i + 1 < n && s[i + 1] != '=')) { free(o); return -1; }
            break;
        }
        if ((v = b64v((unsigned char)s[i])) < 0) { free(o); return -1; }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) { bits -= 8; o[k++] = (unsigned char)(acc >> bits); }
    }
    *out = o;
    *out_len = k;
    return 0;
}

/* "123.45" / 12345 with the column's scale → little-endian i64 unscaled. */
static int decimal_parse(const char *s, size_t n, int scale, int64_t *out)
{
    int neg = 0, frac = -1;
    __int128 v = 0;
    size_t i = 0;
    if (i < n && s[i] == '-') { neg = 1; i++; }
    if (i == n) return -1;
    for (; i < n; i++) {
        if (s[i] == '.') { if (frac >= 0) return -1; frac = 0; continue; }
        if (s[i] < '0' || s[i] > '9') return -1;
        if (frac >= 0) { if (frac == scale) continue; frac++; }
        v = v * 10 + (s[i] - '0');
        if (v > (__int128)INT64_MAX) return -1;
    }
    for (int k = frac < 0 ? 0 : frac; k < scale; k++) { v *= 10; if (v > (__int128)INT64_MAX) return -1; }
    *out = (int64_t)(neg ? -v : v);
    return 0;
}

int vx_json_append(pch_ctx *ctx, pch_vx_builder *b, const pch_json_value *v, const char *src,
                   const char *path, pch_error *err)
{
    const pch_vx_dtype *d = pch_vx_builder_dtype(b);
    int rc;
    if (!v || v->kind == PCH_JSON_NULL) {
        rc = pch_vx_builder_append_null(b, err);
        if (rc < 0) pch_error_prefix(err, "column '%s'", path);
        return rc;
    }
    switch (d->kind) {
    case PCH_VX_BOOL:
        if (v->kind != PCH_JSON_TRUE && v->kind != PCH_JSON_FALSE) break;
        return pch_vx_builder_append_bool(b, v->kind == PCH_JSON_TRUE, err);
    case PCH_VX_PRIMITIVE:
        if (v->kind != PCH_JSON_NUMBER) break;
        if (v->num_flags & PCH_JSON_NUM_I64) rc = pch_vx_builder_append_int(b, v->u.num.i, err);
        else if (v->num_flags & PCH_JSON_NUM_U64) rc = pch_vx_builder_append_uint(b, v->u.num.u, err);
        else rc = pch_vx_builder_append_float(b, v->u.num.d, err);
        if (rc < 0) pch_error_prefix(err, "column '%s'", path);
        return rc;
    case PCH_VX_DECIMAL: {
        int64_t x;
        uint8_t le[8];
        const char *s = v->kind == PCH_JSON_STRING ? v->u.str.ptr : src + v->span_off;
        size_t n = v->kind == PCH_JSON_STRING ? v->u.str.len : v->span_len;
        if ((v->kind != PCH_JSON_STRING && v->kind != PCH_JSON_NUMBER) || decimal_parse(s, n, d->scale, &x) < 0)
            return pch_error_set(err, PCH_EINVAL, "column '%s': not a decimal(%u,%d) value", path, d->precision, d->scale);
        for (int i = 0; i < 8; i++) le[i] = (uint8_t)((uint64_t)x >> (8 * i));
        return pch_vx_builder_append_decimal(b, le, 8, err);
    }
    case PCH_VX_UTF8:
        if (v->kind == PCH_JSON_STRING) return pch_vx_builder_append_bytes(b, v->u.str.ptr, v->u.str.len, err);
        {
            char *txt = NULL;
            size_t n = 0;
            if ((rc = pch_json_serialize(ctx, v, src, &txt, &n, err)) < 0) return rc;
            rc = pch_vx_builder_append_bytes(b, txt, n, err);
            pch_free(ctx, txt);
            return rc;
        }
    case PCH_VX_BINARY: {
        const pch_json_value *s = v->kind == PCH_JSON_OBJECT ? pch_json_get(v, "base64", 6) : NULL;
        unsigned char *bytes;
        size_t n;
        if (v->kind == PCH_JSON_STRING) return pch_vx_builder_append_bytes(b, v->u.str.ptr, v->u.str.len, err);
        if (!s || s->kind != PCH_JSON_STRING || b64_decode(s->u.str.ptr, s->u.str.len, &bytes, &n) < 0)
            return pch_error_set(err, PCH_EINVAL, "column '%s': binary values are {\"base64\":\"...\"}", path);
        rc = pch_vx_builder_append_bytes(b, bytes, n, err);
        free(bytes);
        return rc;
    }
    case PCH_VX_STRUCT:
        if (v->kind != PCH_JSON_OBJECT) break;
        for (uint32_t i = 0; i < d->n_fields; i++) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", d->names[i]);
            VX_TRY(vx_json_append(ctx, pch_vx_builder_child(b, i), pch_json_get(v, d->names[i], strlen(d->names[i])), src, sub, err));
        }
        for (uint32_t m = 0; m < v->n; m++) {
            uint32_t i;
            for (i = 0; i < d->n_fields; i++)
                if (strlen(d->names[i]) == v->u.members[m].key_len && memcmp(d->names[i], v->u.members[m].key, v->u.members[m].key_len) == 0) break;
            if (i == d->n_fields)
                return pch_error_set(err, PCH_EINVAL, "column '%s': unknown field '%.*s'", path,
                                     (int)v->u.members[m].key_len, v->u.members[m].key);
        }
        return pch_vx_builder_append_valid(b, err);
    case PCH_VX_LIST: case PCH_VX_FIXED_SIZE_LIST:
        if (v->kind != PCH_JSON_ARRAY) break;
        if (d->kind == PCH_VX_FIXED_SIZE_LIST && v->n != d->fsl_size)
            return pch_error_set(err, PCH_EINVAL, "column '%s': %u items, want %u", path, v->n, d->fsl_size);
        for (uint32_t i = 0; i < v->n; i++) VX_TRY(vx_json_append(ctx, pch_vx_builder_child(b, 0), &v->u.items[i], src, path, err));
        return pch_vx_builder_append_valid(b, err);
    case PCH_VX_EXTENSION:
        VX_TRY(vx_json_append(ctx, pch_vx_builder_child(b, 0), v, src, path, err));
        return pch_vx_builder_append_valid(b, err);
    default: break;
    }
    return pch_error_set(err, PCH_EINVAL, "column '%s': JSON value does not fit the column type", path);
}

/* ------------------------------------------------------------------ inference */

enum { T_NONE, T_BOOL, T_INT, T_UINT, T_FLOAT, T_STR, T_OBJ, T_ARR, T_MIXED };

typedef struct tnode tnode;
struct tnode {
    int kind;
    char **names;
    tnode **fields;
    size_t n, cap;
    tnode *elem;
};

struct vx_infer { tnode root; };

int vx_infer_new(vx_infer **out)
{
    *out = calloc(1, sizeof(vx_infer));
    if (!*out) return -1;
    (*out)->root.kind = T_OBJ;
    return 0;
}

static void tfree(tnode *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) { free(t->names[i]); tfree(t->fields[i]); free(t->fields[i]); }
    free(t->names);
    free(t->fields);
    tfree(t->elem);
    free(t->elem);
}

void vx_infer_free(vx_infer *inf)
{
    if (!inf) return;
    tfree(&inf->root);
    free(inf);
}

static int merge(tnode *t, const pch_json_value *v, int depth)
{
    int k;
    if (v->kind == PCH_JSON_NULL) return 0;
    if (depth > 30) { t->kind = T_MIXED; return 0; }
    switch (v->kind) {
    case PCH_JSON_TRUE: case PCH_JSON_FALSE: k = T_BOOL; break;
    case PCH_JSON_NUMBER:
        k = (v->num_flags & PCH_JSON_NUM_I64) ? T_INT : (v->num_flags & PCH_JSON_NUM_U64) ? T_UINT : T_FLOAT;
        break;
    case PCH_JSON_STRING: k = T_STR; break;
    case PCH_JSON_OBJECT: k = T_OBJ; break;
    default: k = T_ARR; break;
    }
    if (t->kind == T_MIXED) return 0;
    if (t->kind == T_NONE) t->kind = k;
    else if (t->kind != k) {
        int num_a = t->kind == T_INT || t->kind == T_UINT || t->kind == T_FLOAT;
        int num_b = k == T_INT || k == T_UINT || k == T_FLOAT;
        if (num_a && num_b) { t->kind = T_FLOAT; return 0; }
        t->kind = T_MIXED;
        return 0;
    }
    if (k == T_OBJ) {
        for (uint32_t m = 0; m < v->n; m++) {
            const pch_json_member *mb = &v->u.members[m];
            size_t i;
            for (i = 0; i < t->n; i++)
                if (strlen(t->names[i]) == mb->key_len && memcmp(t->names[i], mb->key, mb->key_len) == 0) break;
            if (i == t->n) {
                if (memchr(mb->key, 0, mb->key_len) || memchr(mb->key, '"', mb->key_len) || memchr(mb->key, '>', mb->key_len) ||
                    memchr(mb->key, ',', mb->key_len) || memchr(mb->key, ':', mb->key_len)) { t->kind = T_MIXED; return 0; }
                if (t->n == t->cap) {
                    size_t nc = t->cap ? t->cap * 2 : 8;
                    char **nn = realloc(t->names, nc * sizeof(char *));
                    if (!nn) return -1;
                    t->names = nn;
                    tnode **nf = realloc(t->fields, nc * sizeof(tnode *));
                    if (!nf) return -1;
                    t->fields = nf;
                    t->cap = nc;
                }
                t->names[t->n] = strndup(mb->key, mb->key_len);
                t->fields[t->n] = calloc(1, sizeof(tnode));
                if (!t->names[t->n] || !t->fields[t->n]) return -1;
                t->n++;
            }
            if (merge(t->fields[i], &mb->value, depth + 1) < 0) return -1;
        }
    } else if (k == T_ARR) {
        if (!t->elem && !(t->elem = calloc(1, sizeof(tnode)))) return -1;
        for (uint32_t i = 0; i < v->n; i++) if (merge(t->elem, &v->u.items[i], depth + 1) < 0) return -1;
    }
    return 0;
}

int vx_infer_add(vx_infer *inf, const pch_json_value *obj)
{
    if (obj->kind != PCH_JSON_OBJECT) return -1;
    return merge(&inf->root, obj, 0);
}

static int emit(FILE *o, const tnode *t, int top)
{
    switch (t->kind) {
    case T_BOOL: fputs("bool", o); break;
    case T_INT: fputs("i64", o); break;
    case T_UINT: fputs("u64", o); break;
    case T_FLOAT: fputs("f64", o); break;
    case T_OBJ:
        if (!top) fputs("struct<", o);
        for (size_t i = 0; i < t->n; i++) {
            fprintf(o, "%s\"%s\":", i ? "," : "", t->names[i]);
            emit(o, t->fields[i], 0);
        }
        if (!top) fputs(">", o);
        break;
    case T_ARR:
        fputs("list<", o);
        if (t->elem && t->elem->kind != T_NONE) emit(o, t->elem, 0);
        else fputs("utf8?", o);
        fputs(">", o);
        break;
    default: fputs("utf8", o); break;
    }
    if (!top) fputs("?", o);
    return 0;
}

int vx_infer_schema(vx_infer *inf, char **schema_out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    if (!o) return -1;
    emit(o, &inf->root, 1);
    if (fclose(o) != 0) { free(buf); return -1; }
    *schema_out = buf;
    return 0;
}
