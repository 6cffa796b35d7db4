/* Lance schema (lance-format.md §1.6, §3.1): the pch_lance_schema API, SCHEMA.json, and
** lance.file.Field / map<string,bytes> metadata protobuf as official Lance writes them.
**
** Invariants: a schema is flat (every field top-level, parent_id -1); field names are
** non-empty and unique; every string member is NUL-terminated; metadata values are bytes
** with a NUL past value_len. A JSON field is stored as large_binary with logical_type
** "json", extension_name "lance.json" and field metadata ARROW:extension:name=lance.json;
** in memory the type says JSON and that metadata entry is not kept (added on encode,
** removed on decode). */
#include <math.h>
#include <stdlib.h>

#include "lance/table.h"
#include "pchronicle/json.h"

#define EXT_KEY "ARROW:extension:name"
#define EXT_JSON "lance.json"

/* ---- type names ---- */

typedef struct type_info {
    pch_lance_type t;
    const char *name;      /* SCHEMA.json / dump name */
    const char *logical;   /* lance.file.Field.logical_type */
    size_t width;
} type_info;

static const type_info k_types[] = {
    { PCH_LANCE_BOOL, "bool", "bool", 0 },
    { PCH_LANCE_INT8, "int8", "int8", 1 },
    { PCH_LANCE_INT16, "int16", "int16", 2 },
    { PCH_LANCE_INT32, "int32", "int32", 4 },
    { PCH_LANCE_INT64, "int64", "int64", 8 },
    { PCH_LANCE_UINT8, "uint8", "uint8", 1 },
    { PCH_LANCE_UINT16, "uint16", "uint16", 2 },
    { PCH_LANCE_UINT32, "uint32", "uint32", 4 },
    { PCH_LANCE_UINT64, "uint64", "uint64", 8 },
    { PCH_LANCE_FLOAT32, "float32", "float", 4 },
    { PCH_LANCE_FLOAT64, "float64", "double", 8 },
    { PCH_LANCE_UTF8, "utf8", "string", 0 },
    { PCH_LANCE_LARGE_UTF8, "large_utf8", "large_string", 0 },
    { PCH_LANCE_BINARY, "binary", "binary", 0 },
    { PCH_LANCE_LARGE_BINARY, "large_binary", "large_binary", 0 },
    { PCH_LANCE_JSON, "json", "json", 0 },
};
#define N_TYPES (sizeof k_types / sizeof k_types[0])

static const type_info *type_lookup(pch_lance_type t)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (k_types[i].t == t) return &k_types[i];
    return NULL;
}

const char *pch_lance_type_name(pch_lance_type t)
{
    const type_info *ti = type_lookup(t);
    return ti ? ti->name : NULL;
}

const char *pch_lance__logical_type(pch_lance_type t)
{
    const type_info *ti = type_lookup(t);
    return ti ? ti->logical : NULL;
}

int pch_lance_type_from_name(pch_lance_type *out, const char *name, pch_error *err)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (strcmp(k_types[i].name, name) == 0) { *out = k_types[i].t; return PCH_OK; }
    return pch_error_set(err, PCH_EUNSUPPORTED, "unknown type '%s'", name);
}

size_t pch_lance_type_width(pch_lance_type t)
{
    const type_info *ti = type_lookup(t);
    return ti ? ti->width : 0;
}

bool pch_lance_type_is_var(pch_lance_type t)
{
    return t == PCH_LANCE_UTF8 || t == PCH_LANCE_LARGE_UTF8 || t == PCH_LANCE_BINARY ||
           t == PCH_LANCE_LARGE_BINARY || t == PCH_LANCE_JSON;
}

/* ---- schema object ---- */

static char *dup_mem(pch_ctx *ctx, const void *p, size_t n)
{
    size_t sz;
    if (!pch_add_size(&sz, n, 1)) return NULL;
    char *d = pch_malloc(ctx, sz);
    if (!d) return NULL;
    if (n) memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

int pch_lance_schema_new(pch_lance_schema **out, pch_ctx *ctx, pch_error *err)
{
    pch_lance_schema *s = pch_calloc(ctx, 1, sizeof *s);
    *out = NULL;
    if (!s) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    s->ctx = ctx;
    *out = s;
    return PCH_OK;
}

static void kv_free(pch_ctx *ctx, pch_lance_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pch_free(ctx, kv[i].key);
        pch_free(ctx, kv[i].value);
    }
    pch_free(ctx, kv);
}

void pch_lance_schema_free(pch_lance_schema *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_fields; i++) {
        pch_free(s->ctx, s->fields[i].name);
        kv_free(s->ctx, s->fields[i].metadata, s->fields[i].n_metadata);
    }
    pch_free(s->ctx, s->fields);
    kv_free(s->ctx, s->metadata, s->n_metadata);
    pch_free(s->ctx, s);
}

long pch_lance_schema_find(const pch_lance_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return (long)i;
    return -1;
}

/* Append a field with an explicit id; name is copied from (name, name_len). */
static int add_field(pch_lance_schema *s, const char *name, size_t name_len,
                     pch_lance_type type, bool nullable, int32_t id, pch_error *err)
{
    if (name_len == 0 || memchr(name, '\0', name_len))
        return pch_error_set(err, PCH_EINVAL, "field name is empty or contains NUL");
    if (!type_lookup(type))
        return pch_error_set(err, PCH_EINVAL, "field '%.*s': bad type %d", (int)name_len,
                             name, (int)type);
    for (size_t i = 0; i < s->n_fields; i++) {
        if (strlen(s->fields[i].name) == name_len && memcmp(s->fields[i].name, name, name_len) == 0)
            return pch_error_set(err, PCH_EINVAL, "duplicate field name '%.*s'", (int)name_len, name);
        if (s->fields[i].id == id)
            return pch_error_set(err, PCH_ECORRUPT, "duplicate field id %d", (int)id);
    }
    if (s->ctx && s->n_fields >= pch_ctx_limits(s->ctx)->max_columns)
        return pch_error_set(err, PCH_ELIMIT, "more than %u fields",
                             (unsigned)pch_ctx_limits(s->ctx)->max_columns);
    size_t bytes;
    if (!pch_mul_size(&bytes, s->n_fields + 1, sizeof *s->fields))
        return pch_error_set(err, PCH_ELIMIT, "too many fields");
    pch_lance_field *nf = pch_realloc(s->ctx, s->fields, bytes);
    if (!nf) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    s->fields = nf;
    pch_lance_field *f = &s->fields[s->n_fields];
    memset(f, 0, sizeof *f);
    f->name = dup_mem(s->ctx, name, name_len);
    if (!f->name) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    f->type = type;
    f->nullable = nullable;
    f->id = id;
    s->n_fields++;
    return PCH_OK;
}

int pch_lance_schema_add_field(pch_lance_schema *s, const char *name, pch_lance_type type,
                               bool nullable, pch_error *err)
{
    int32_t id = 0;
    for (size_t i = 0; i < s->n_fields; i++)
        if (s->fields[i].id >= id) id = s->fields[i].id + 1;
    return add_field(s, name, strlen(name), type, nullable, id, err);
}

static int kv_add(pch_ctx *ctx, pch_lance_kv **arr, size_t *n, const char *key, size_t key_len,
                  const void *value, size_t value_len, pch_error *err)
{
    size_t bytes;
    for (size_t i = 0; i < *n; i++)
        if (strlen((*arr)[i].key) == key_len && memcmp((*arr)[i].key, key, key_len) == 0)
            return pch_error_set(err, PCH_EINVAL, "duplicate metadata key '%.*s'", (int)key_len, key);
    if (memchr(key, '\0', key_len))
        return pch_error_set(err, PCH_EINVAL, "metadata key contains NUL");
    if (!pch_mul_size(&bytes, *n + 1, sizeof **arr))
        return pch_error_set(err, PCH_ELIMIT, "too much metadata");
    pch_lance_kv *na = pch_realloc(ctx, *arr, bytes);
    if (!na) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    *arr = na;
    pch_lance_kv *kv = &na[*n];
    kv->key = dup_mem(ctx, key, key_len);
    kv->value = (uint8_t *)dup_mem(ctx, value, value_len);
    kv->value_len = value_len;
    if (!kv->key || !kv->value) {
        pch_free(ctx, kv->key);
        pch_free(ctx, kv->value);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    (*n)++;
    return PCH_OK;
}

int pch_lance_schema_add_metadata(pch_lance_schema *s, size_t fi, const char *key,
                                  const void *value, size_t value_len, pch_error *err)
{
    if (fi == SIZE_MAX)
        return kv_add(s->ctx, &s->metadata, &s->n_metadata, key, strlen(key), value,
                      value_len, err);
    if (fi >= s->n_fields)
        return pch_error_set(err, PCH_EINVAL, "field index %zu out of range", fi);
    return kv_add(s->ctx, &s->fields[fi].metadata, &s->fields[fi].n_metadata, key,
                  strlen(key), value, value_len, err);
}

int pch_lance_schema_clone(pch_lance_schema **out, const pch_lance_schema *s, pch_error *err)
{
    pch_lance_schema *c;
    int rc;
    *out = NULL;
    PCH_TRY(pch_lance_schema_new(&c, s->ctx, err));
    for (size_t i = 0; i < s->n_fields; i++) {
        const pch_lance_field *f = &s->fields[i];
        if ((rc = add_field(c, f->name, strlen(f->name), f->type, f->nullable, f->id, err)) < 0)
            goto fail;
        for (size_t k = 0; k < f->n_metadata; k++)
            if ((rc = pch_lance_schema_add_metadata(c, i, f->metadata[k].key, f->metadata[k].value,
                                                    f->metadata[k].value_len, err)) < 0)
                goto fail;
    }
    for (size_t k = 0; k < s->n_metadata; k++)
        if ((rc = pch_lance_schema_add_metadata(c, SIZE_MAX, s->metadata[k].key,
                                                s->metadata[k].value, s->metadata[k].value_len,
                                                err)) < 0)
            goto fail;
    *out = c;
    return PCH_OK;
fail:
    pch_lance_schema_free(c);
    return rc;
}

int pch_lance__schema_check_same(const pch_lance_schema *want, const pch_lance_schema *have,
                                 pch_error *err)
{
    if (want->n_fields != have->n_fields)
        return pch_error_set(err, PCH_EINVAL,
                             "schema mismatch: dataset has %zu fields, input has %zu",
                             have->n_fields, want->n_fields);
    for (size_t i = 0; i < want->n_fields; i++) {
        const pch_lance_field *a = &want->fields[i], *b = &have->fields[i];
        if (strcmp(a->name, b->name) != 0)
            return pch_error_set(err, PCH_EINVAL,
                                 "schema mismatch: field %zu is '%s' in the dataset, '%s' in the input",
                                 i, b->name, a->name);
        if (a->type != b->type)
            return pch_error_set(err, PCH_EINVAL,
                                 "schema mismatch: field '%s' is %s in the dataset, %s in the input",
                                 a->name, pch_lance_type_name(b->type), pch_lance_type_name(a->type));
        if (a->nullable != b->nullable)
            return pch_error_set(err, PCH_EINVAL,
                                 "schema mismatch: field '%s' is %s in the dataset",
                                 a->name, b->nullable ? "nullable" : "not nullable");
    }
    return PCH_OK;
}

/* ---- SCHEMA.json ---- */

static bool key_is(const pch_json_member *m, const char *k)
{
    return m->key_len == strlen(k) && memcmp(m->key, k, m->key_len) == 0;
}

static int metadata_from_json(pch_lance_schema *s, size_t fi, const pch_json_value *obj,
                              const char *where, pch_error *err)
{
    if (obj->kind != PCH_JSON_OBJECT)
        return pch_error_set(err, PCH_EINVAL, "%s: metadata must be an object", where);
    for (uint32_t i = 0; i < obj->n; i++) {
        const pch_json_member *m = &obj->u.members[i];
        if (m->value.kind != PCH_JSON_STRING)
            return pch_error_set(err, PCH_EINVAL, "%s: metadata value of '%.*s' must be a string",
                                 where, (int)m->key_len, m->key);
        pch_lance_kv **arr = fi == SIZE_MAX ? &s->metadata : &s->fields[fi].metadata;
        size_t *n = fi == SIZE_MAX ? &s->n_metadata : &s->fields[fi].n_metadata;
        int rc = kv_add(s->ctx, arr, n, m->key, m->key_len, m->value.u.str.ptr,
                        m->value.u.str.len, err);
        if (rc < 0) return pch_error_prefix(err, "%s", where), rc;
    }
    return PCH_OK;
}

static int field_from_json(pch_lance_schema *s, const pch_json_value *fv, size_t idx,
                           pch_error *err)
{
    const pch_json_value *name = NULL, *type = NULL, *nullable = NULL, *md = NULL;
    char where[64];
    snprintf(where, sizeof where, "schema field %zu", idx);
    if (fv->kind != PCH_JSON_OBJECT)
        return pch_error_set(err, PCH_EINVAL, "%s: must be an object", where);
    for (uint32_t i = 0; i < fv->n; i++) {
        const pch_json_member *m = &fv->u.members[i];
        if (key_is(m, "name")) name = &m->value;
        else if (key_is(m, "type")) type = &m->value;
        else if (key_is(m, "nullable")) nullable = &m->value;
        else if (key_is(m, "metadata")) md = &m->value;
        else
            return pch_error_set(err, PCH_EINVAL, "%s: unknown key '%.*s'", where,
                                 (int)m->key_len, m->key);
    }
    if (!name || name->kind != PCH_JSON_STRING)
        return pch_error_set(err, PCH_EINVAL, "%s: \"name\" must be a string", where);
    if (!type || type->kind != PCH_JSON_STRING || memchr(type->u.str.ptr, 0, type->u.str.len))
        return pch_error_set(err, PCH_EINVAL, "%s ('%.*s'): \"type\" must be a string", where,
                             (int)name->u.str.len, name->u.str.ptr);
    if (nullable && nullable->kind != PCH_JSON_TRUE && nullable->kind != PCH_JSON_FALSE)
        return pch_error_set(err, PCH_EINVAL, "%s: \"nullable\" must be true or false", where);
    pch_lance_type t;
    char tname[64];
    snprintf(tname, sizeof tname, "%.*s", (int)type->u.str.len, type->u.str.ptr);
    if (pch_lance_type_from_name(&t, tname, err) < 0)
        return pch_error_set(err, PCH_EUNSUPPORTED, "field '%.*s': unknown type '%s'",
                             (int)name->u.str.len, name->u.str.ptr, tname);
    PCH_TRY(add_field(s, name->u.str.ptr, name->u.str.len, t,
                      !nullable || nullable->kind == PCH_JSON_TRUE, (int32_t)idx, err));
    if (md) {
        snprintf(where, sizeof where, "field '%.40s'", s->fields[s->n_fields - 1].name);
        PCH_TRY(metadata_from_json(s, s->n_fields - 1, md, where, err));
    }
    return PCH_OK;
}

int pch_lance_schema_from_json(pch_lance_schema **out, pch_ctx *ctx, const char *json,
                               size_t len, pch_error *err)
{
    pch_json_parser *p = NULL;
    pch_lance_schema *s = NULL;
    const pch_json_value *root, *fields = NULL, *md = NULL;
    int rc;
    *out = NULL;
    if ((rc = pch_json_parser_new(&p, ctx, NULL, err)) < 0) return rc;
    if ((rc = pch_json_parser_parse(p, json, len, &root, err)) < 0) {
        pch_error_prefix(err, "schema");
        goto done;
    }
    if (root->kind != PCH_JSON_OBJECT) {
        rc = pch_error_set(err, PCH_EINVAL, "schema: must be a JSON object");
        goto done;
    }
    for (uint32_t i = 0; i < root->n; i++) {
        const pch_json_member *m = &root->u.members[i];
        if (key_is(m, "fields")) fields = &m->value;
        else if (key_is(m, "metadata")) md = &m->value;
        else {
            rc = pch_error_set(err, PCH_EINVAL, "schema: unknown key '%.*s'", (int)m->key_len, m->key);
            goto done;
        }
    }
    if (!fields || fields->kind != PCH_JSON_ARRAY) {
        rc = pch_error_set(err, PCH_EINVAL, "schema: \"fields\" must be an array");
        goto done;
    }
    if (fields->n == 0) {
        rc = pch_error_set(err, PCH_EINVAL, "schema: no fields");
        goto done;
    }
    if ((rc = pch_lance_schema_new(&s, ctx, err)) < 0) goto done;
    for (uint32_t i = 0; i < fields->n; i++)
        if ((rc = field_from_json(s, &fields->u.items[i], i, err)) < 0) goto done;
    if (md && (rc = metadata_from_json(s, SIZE_MAX, md, "schema", err)) < 0) goto done;
    *out = s;
    s = NULL;
done:
    pch_lance_schema_free(s);
    pch_json_parser_free(p);
    return rc;
}

/* ---- JSON output helpers ---- */

/* Length of the valid UTF-8 sequence at p (1..4), 0 if invalid. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    size_t need;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) { need = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { need = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { need = 4; cp = c & 0x07; }
    else return 0;
    if (need > n) return 0;
    for (size_t i = 1; i < need; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return need;
}

int pch_lance__json_put_string(pch_buf *b, const void *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = s;
    size_t i = 0, run = 0;
    PCH_TRY(pch_buf_putc(b, '"'));
    while (i < n) {
        uint8_t c = p[i];
        size_t k;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) { i++; run++; continue; }
        if (c >= 0x80 && (k = utf8_seq(p + i, n - i)) > 0) { i += k; run += k; continue; }
        PCH_TRY(pch_buf_append(b, p + i - run, run));
        run = 0;
        switch (c) {
        case '"': PCH_TRY(pch_buf_append(b, "\\\"", 2)); break;
        case '\\': PCH_TRY(pch_buf_append(b, "\\\\", 2)); break;
        case '\b': PCH_TRY(pch_buf_append(b, "\\b", 2)); break;
        case '\f': PCH_TRY(pch_buf_append(b, "\\f", 2)); break;
        case '\n': PCH_TRY(pch_buf_append(b, "\\n", 2)); break;
        case '\r': PCH_TRY(pch_buf_append(b, "\\r", 2)); break;
        case '\t': PCH_TRY(pch_buf_append(b, "\\t", 2)); break;
        default:
            if (c < 0x20) {
                char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                PCH_TRY(pch_buf_append(b, e, 6));
            } else {
                PCH_TRY(pch_buf_append(b, "\xef\xbf\xbd", 3)); /* U+FFFD */
            }
        }
        i++;
    }
    PCH_TRY(pch_buf_append(b, p + i - run, run));
    return pch_buf_putc(b, '"');
}

int pch_lance__json_put_float(pch_buf *b, double v, bool is_f32)
{
    char t[48];
    int prec, x;
    if (isnan(v)) return pch_buf_append_str(b, "\"NaN\"");
    if (isinf(v)) return pch_buf_append_str(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    if (v == 0) return pch_buf_append_str(b, signbit(v) ? "-0" : "0");
    /* shortest significant digits that read back exactly */
    for (prec = 1; prec < 17; prec++) {
        snprintf(t, sizeof t, "%.*e", prec - 1, v);
        if (is_f32 ? strtof(t, NULL) == (float)v : strtod(t, NULL) == v) break;
    }
    snprintf(t, sizeof t, "%.*e", prec - 1, v);
    char *e = strchr(t, 'e');
    x = atoi(e + 1);
    /* layout as JavaScript's Number.prototype.toString (what JSON.stringify prints) */
    if (x >= -6 && x < 21) {
        /* place the decimal point into the significant digits ourselves: %f would print
        ** the exact binary value (123456789012345683968 instead of ...680000) */
        char dg[24];
        size_t nd = 0;
        for (const char *q = t; q < e; q++)
            if (*q >= '0' && *q <= '9') dg[nd++] = *q;
        if (v < 0) PCH_TRY(pch_buf_putc(b, '-'));
        if (x < 0) {
            PCH_TRY(pch_buf_append_str(b, "0."));
            for (int i = 0; i < -x - 1; i++) PCH_TRY(pch_buf_putc(b, '0'));
            return pch_buf_append(b, dg, nd);
        }
        if ((size_t)x + 1 >= nd) {
            PCH_TRY(pch_buf_append(b, dg, nd));
            for (size_t i = nd; i < (size_t)x + 1; i++) PCH_TRY(pch_buf_putc(b, '0'));
            return PCH_OK;
        }
        PCH_TRY(pch_buf_append(b, dg, (size_t)x + 1));
        PCH_TRY(pch_buf_putc(b, '.'));
        return pch_buf_append(b, dg + x + 1, nd - (size_t)x - 1);
    }
    *e = '\0';
    return pch_buf_printf(b, "%se%c%d", t, x < 0 ? '-' : '+', x < 0 ? -x : x);
}

int pch_lance_schema_to_json(const pch_lance_schema *s, char **out, size_t *len_out,
                             pch_error *err)
{
    pch_buf b;
    *out = NULL;
    if (len_out) *len_out = 0;
    pch_buf_init(&b, s->ctx);
    pch_buf_append_str(&b, "{\"fields\":[");
    for (size_t i = 0; i < s->n_fields; i++) {
        const pch_lance_field *f = &s->fields[i];
        if (i) pch_buf_putc(&b, ',');
        pch_buf_append_str(&b, "{\"name\":");
        pch_lance__json_put_string(&b, f->name, strlen(f->name));
        pch_buf_printf(&b, ",\"type\":\"%s\",\"nullable\":%s,\"metadata\":{",
                       pch_lance_type_name(f->type), f->nullable ? "true" : "false");
        for (size_t k = 0; k < f->n_metadata; k++) {
            if (k) pch_buf_putc(&b, ',');
            pch_lance__json_put_string(&b, f->metadata[k].key, strlen(f->metadata[k].key));
            pch_buf_putc(&b, ':');
            pch_lance__json_put_string(&b, f->metadata[k].value, f->metadata[k].value_len);
        }
        pch_buf_append_str(&b, "}}");
    }
    pch_buf_append_str(&b, "],\"metadata\":{");
    for (size_t k = 0; k < s->n_metadata; k++) {
        if (k) pch_buf_putc(&b, ',');
        pch_lance__json_put_string(&b, s->metadata[k].key, strlen(s->metadata[k].key));
        pch_buf_putc(&b, ':');
        pch_lance__json_put_string(&b, s->metadata[k].value, s->metadata[k].value_len);
    }
    if (pch_buf_append_str(&b, "}}") < 0 || b.oom) {
        pch_buf_dispose(&b);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    *out = (char *)pch_buf_detach(&b, len_out);
    return PCH_OK;
}

/* ---- protobuf (lance.file.Field, §1.6; Appendix D) ---- */

static int encode_kv(pch_buf *b, uint32_t field_no, const char *key, const void *v, size_t n)
{
    size_t mark;
    PCH_TRY(pch_pb_begin(b, field_no, &mark));
    PCH_TRY(pch_pb_put_str(b, 1, key));
    if (n) PCH_TRY(pch_pb_put_bytes(b, 2, v, n));
    return pch_pb_end(b, mark);
}

int pch_lance__schema_encode_fields(pch_buf *b, uint32_t field_no, const pch_lance_schema *s)
{
    for (size_t i = 0; i < s->n_fields; i++) {
        const pch_lance_field *f = &s->fields[i];
        size_t mark;
        PCH_TRY(pch_pb_begin(b, field_no, &mark));
        /* 1 type: lance always writes PARENT (0) = omitted */
        PCH_TRY(pch_pb_put_str(b, 2, f->name));
        PCH_TRY(pch_pb_put_u64_nz(b, 3, (uint64_t)(int64_t)f->id));
        PCH_TRY(pch_pb_put_i64(b, 4, -1));                 /* parent_id: 10-byte varint */
        PCH_TRY(pch_pb_put_str(b, 5, pch_lance__logical_type(f->type)));
        PCH_TRY(pch_pb_put_u64_nz(b, 6, f->nullable ? 1 : 0));
        /* 7 encoding (v1 relic lance still writes): PLAIN fixed width, VAR_BINARY else */
        PCH_TRY(pch_pb_put_u64(b, 7, pch_lance_type_is_var(f->type) ? 2 : 1));
        if (f->type == PCH_LANCE_JSON) {
            PCH_TRY(pch_pb_put_str(b, 9, EXT_JSON));
            PCH_TRY(encode_kv(b, 10, EXT_KEY, EXT_JSON, strlen(EXT_JSON)));
        }
        for (size_t k = 0; k < f->n_metadata; k++) {
            if (f->type == PCH_LANCE_JSON && strcmp(f->metadata[k].key, EXT_KEY) == 0) continue;
            PCH_TRY(encode_kv(b, 10, f->metadata[k].key, f->metadata[k].value,
                              f->metadata[k].value_len));
        }
        PCH_TRY(pch_pb_end(b, mark));
    }
    return b->oom ? PCH_ENOMEM : PCH_OK;
}

int pch_lance__schema_encode_metadata(pch_buf *b, uint32_t field_no, const pch_lance_schema *s)
{
    for (size_t k = 0; k < s->n_metadata; k++)
        PCH_TRY(encode_kv(b, field_no, s->metadata[k].key, s->metadata[k].value,
                          s->metadata[k].value_len));
    return b->oom ? PCH_ENOMEM : PCH_OK;
}

typedef struct kv_view {
    const uint8_t *key, *val;
    size_t key_len, val_len;
} kv_view;

static int decode_kv(kv_view *out, const uint8_t *p, size_t len, const char *what, pch_error *err)
{
    pch_rd r = pch_rd_make(p, len);
    pch_pb_field f;
    int rc;
    memset(out, 0, sizeof *out);
    out->key = out->val = (const uint8_t *)"";
    while ((rc = pch_pb_next(&r, &f, what, err)) > 0) {
        if (f.num == 1 || f.num == 2) {
            if (f.wire != PCH_PB_LEN)
                return pch_error_set(err, PCH_ECORRUPT, "%s: map entry field %u has wire type %d",
                                     what, f.num, f.wire);
            if (f.num == 1) { out->key = f.ptr; out->key_len = f.len; }
            else { out->val = f.ptr; out->val_len = f.len; }
        }
    }
    return rc;
}

int pch_lance__schema_decode_metadata(pch_lance_schema *s, const uint8_t *p, size_t len,
                                      pch_error *err)
{
    kv_view kv;
    PCH_TRY(decode_kv(&kv, p, len, "schema metadata", err));
    return kv_add(s->ctx, &s->metadata, &s->n_metadata, (const char *)kv.key, kv.key_len,
                  kv.val, kv.val_len, err);
}

static bool bytes_eq(const uint8_t *p, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(p, s, n) == 0;
}

int pch_lance__schema_decode_field(pch_lance_schema *s, const uint8_t *p, size_t len,
                                   pch_error *err)
{
    pch_rd r = pch_rd_make(p, len);
    pch_pb_field f;
    const uint8_t *name = NULL, *logical = (const uint8_t *)"", *ext = (const uint8_t *)"";
    size_t name_len = 0, logical_len = 0, ext_len = 0;
    int64_t id = 0, parent = 0;
    bool nullable = false, ext_json = false;
    int rc;

    while ((rc = pch_pb_next(&r, &f, "schema field", err)) > 0) {
        bool is_len = f.wire == PCH_PB_LEN, is_var = f.wire == PCH_PB_VARINT;
        switch (f.num) {
        case 2: if (!is_len) goto bad_wire; name = f.ptr; name_len = f.len; break;
        case 3: if (!is_var) goto bad_wire; id = (int64_t)f.v; break;
        case 4: if (!is_var) goto bad_wire; parent = (int64_t)f.v; break;
        case 5: if (!is_len) goto bad_wire; logical = f.ptr; logical_len = f.len; break;
        case 6: if (!is_var) goto bad_wire; nullable = f.v != 0; break;
        case 9: if (!is_len) goto bad_wire; ext = f.ptr; ext_len = f.len; break;
        case 10: {
            kv_view kv;
            if (!is_len) goto bad_wire;
            PCH_TRY(decode_kv(&kv, f.ptr, f.len, "field metadata", err));
            if (bytes_eq(kv.key, kv.key_len, EXT_KEY) && bytes_eq(kv.val, kv.val_len, EXT_JSON))
                ext_json = true;
            break;
        }
        default: break;   /* 1 type, 7 encoding, 8 dictionary, 12 pk, unknown: skipped */
        }
    }
    if (rc < 0) return rc;
    if (!name || name_len == 0)
        return pch_error_set(err, PCH_ECORRUPT, "schema field without a name");
    if (id < 0 || id > INT32_MAX)
        return pch_error_set(err, PCH_ECORRUPT, "field '%.*s': bad field id %lld",
                             (int)name_len, name, (long long)id);
    if (parent != -1)
        return pch_error_set(err, PCH_EUNSUPPORTED,
                             "field '%.*s': nested fields are not supported (parent id %lld)",
                             (int)name_len, name, (long long)parent);
    if (bytes_eq(ext, ext_len, EXT_JSON)) ext_json = true;

    pch_lance_type t = 0;
    bool found = false;
    if (bytes_eq(logical, logical_len, "large_binary") && ext_json) {
        t = PCH_LANCE_JSON;
        found = true;
    } else {
        for (size_t i = 0; i < N_TYPES; i++)
            if (bytes_eq(logical, logical_len, k_types[i].logical)) {
                t = k_types[i].t;
                found = true;
                break;
            }
    }
    if (!found)
        return pch_error_set(err, PCH_EUNSUPPORTED, "field '%.*s': unsupported type '%.*s'",
                             (int)name_len, name, (int)(logical_len > 64 ? 64 : logical_len),
                             logical);
    PCH_TRY(add_field(s, (const char *)name, name_len, t, nullable, (int32_t)id, err));

    /* Second pass: metadata (minus the JSON extension marker, implied by the type). */
    r = pch_rd_make(p, len);
    while ((rc = pch_pb_next(&r, &f, "schema field", err)) > 0) {
        kv_view kv;
        if (f.num != 10) continue;
        PCH_TRY(decode_kv(&kv, f.ptr, f.len, "field metadata", err));
        if (t == PCH_LANCE_JSON && bytes_eq(kv.key, kv.key_len, EXT_KEY)) continue;
        PCH_TRY(kv_add(s->ctx, &s->fields[s->n_fields - 1].metadata,
                       &s->fields[s->n_fields - 1].n_metadata, (const char *)kv.key, kv.key_len,
                       kv.val, kv.val_len, err));
    }
    return rc;
bad_wire:
    return pch_error_set(err, PCH_ECORRUPT, "schema field: field %u has wire type %d", f.num,
                         f.wire);
}
