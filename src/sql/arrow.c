/* Relation batches as Arrow C Data Interface arrays (include/pchronicle/arrow.h): a batch of
** a relation (pch_lance_batch, as the virtual tables read them) becomes one struct array
** whose children own copies of the selected columns. Types: utf8 → "U" (large utf8), JSON →
** "U" with the JSON text the SQL relations return, int32 → "i", int64 → "l", float64 → "g",
** bool → "b"; every column nullable ("n" rows with a validity bitmap when any is null).
** Each array owns its memory (private_data); release frees it, as the specification says. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pchronicle/arrow.h"
#include "pchronicle/json.h"
#include "sql/sql_int.h"

typedef struct arr_mem {          /* what one ArrowArray owns */
    void *bufs[3];
    const void *ptrs[3];
    struct ArrowArray **children;
    struct ArrowArray *child_mem;
    struct ArrowArray *dict;        /* a dictionary array's values */
} arr_mem;

/* The specification's name is const char *; ours are strdup'd. */
static void free_name(const char *p)
{
    void *q;
    memcpy(&q, &p, sizeof q);
    free(q);
}

static void release_array(struct ArrowArray *a)
{
    arr_mem *m = a->private_data;
    if (!a->release) return;
    if (m) {
        for (int64_t i = 0; i < a->n_children; i++)
            if (m->children[i]->release) m->children[i]->release(m->children[i]);
        for (int i = 0; i < 3; i++) free(m->bufs[i]);
        if (m->dict) {
            if (m->dict->release) m->dict->release(m->dict);
            free(m->dict);
        }
        free(m->children);
        free(m->child_mem);
        free(m);
    }
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s)
{
    if (!s->release) return;
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->release) s->children[i]->release(s->children[i]);
    free(s->private_data);          /* the struct schema's children block */
    free(s->children);
    s->release = NULL;
}

static void release_child_schema(struct ArrowSchema *s)
{
    free_name(s->name);
    free(s->dictionary);            /* a dictionary column's value schema ("U", no children) */
    s->dictionary = NULL;
    s->release = NULL;
}

static void release_dict_schema(struct ArrowSchema *s) { s->release = NULL; }

static const char *format_of(pch_lance_type t)
{
    switch (t) {
    case PCH_LANCE_INT32: return "i";
    case PCH_LANCE_INT64: return "l";
    case PCH_LANCE_FLOAT64: return "g";
    case PCH_LANCE_BOOL: return "b";
    default: return pch_lance_type_is_var(t) ? "U" : NULL;
    }
}

static void release_item_schema(struct ArrowSchema *s) { s->release = NULL; }

static void release_list_schema(struct ArrowSchema *s)
{
    if (!s->release) return;
    if (s->children && s->children[0]->release) s->children[0]->release(s->children[0]);
    free(s->private_data);              /* the item schema and the children pointer */
    free_name(s->name);
    s->release = NULL;
}

/* fmts[i] of a dictionary column: int32 indices into large utf8 values. */
static const char k_dict_format[] = "dictionary";

/* The struct schema "+s" of n nullable children: names[i] of format fmts[i]; a large list
** ("+L") has one child "item" of format items[i]; k_dict_format is a dictionary column. */
static int struct_schema(const char *const *names, const char *const *fmts, const char *const *items, int n,
                         struct ArrowSchema *out, pch_error *err)
{
    struct ArrowSchema *kids = calloc((size_t)(n ? n : 1), sizeof *kids);
    struct ArrowSchema **ptrs = calloc((size_t)(n ? n : 1), sizeof *ptrs);
    memset(out, 0, sizeof *out);
    if (!kids || !ptrs) { free(kids); free(ptrs); return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory"); }
    for (int i = 0; i < n; i++) {
        kids[i].format = fmts[i];
        kids[i].name = strdup(names[i]);
        kids[i].flags = ARROW_FLAG_NULLABLE;
        kids[i].release = release_child_schema;
        ptrs[i] = &kids[i];
        if (kids[i].name && strcmp(fmts[i], k_dict_format) == 0) {
            /* dictionary-encoded large utf8: int32 indices, the values' schema beside */
            struct ArrowSchema *d = calloc(1, sizeof *d);
            if (!d) { free_name(kids[i].name); kids[i].name = NULL; }
            else {
                kids[i].format = "i";
                d->format = "U";
                d->name = "";
                d->flags = ARROW_FLAG_NULLABLE;
                d->release = release_dict_schema;
                kids[i].dictionary = d;
            }
        }
        if (kids[i].name && items && items[i]) {
            /* one block: the item schema, then the pointer to it */
            struct { struct ArrowSchema item; struct ArrowSchema *ptr; } *blk = calloc(1, sizeof *blk);
            if (!blk) { free_name(kids[i].name); kids[i].name = NULL; }
            else {
                blk->item.format = items[i];
                blk->item.name = "item";
                blk->item.release = release_item_schema;
                blk->ptr = &blk->item;
                kids[i].n_children = 1;
                kids[i].children = &blk->ptr;
                kids[i].private_data = blk;
                kids[i].release = release_list_schema;
            }
        }
        if (!kids[i].name) {
            for (int k = 0; k < i; k++) kids[k].release(&kids[k]);
            free(kids); free(ptrs);
            return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
        }
    }
    out->format = "+s";
    out->name = "";
    out->n_children = n;
    out->children = ptrs;
    out->release = release_schema;
    out->private_data = kids;
    return PCH_OK;
}

int pch_sql__arrow_schema(const pch_lance_schema *s, const int *cols, int n, const bool *dict, struct ArrowSchema *out,
                          pch_error *err)
{
    const char *names[64], *fmts[64];
    if (n > 64) return pch_error_set(err, PCH_EINVAL, "arrow: %d columns (64 at most)", n);
    for (int i = 0; i < n; i++) {
        const pch_lance_field *f = &s->fields[cols[i]];
        names[i] = f->name;
        fmts[i] = dict && dict[i] ? k_dict_format : f->type == PCH_LANCE_JSON ? "U" : format_of(f->type);
        if (!fmts[i]) return pch_error_set(err, PCH_EUNSUPPORTED, "arrow: column %s has no Arrow mapping here", f->name);
    }
    return struct_schema(names, fmts, NULL, n, out, err);
}

/* A new child array a of n_rows rows with its memory (arr_mem) and its validity bitmap from
** is_valid(src, row); NULL when out of memory (err set). */
static arr_mem *array_begin(struct ArrowArray *a, size_t n_rows, bool (*is_valid)(const void *, size_t),
                            const void *src, pch_error *err)
{
    arr_mem *m = calloc(1, sizeof *m);
    uint8_t *valid;
    int64_t nulls = 0;
    if (!m || !(m->bufs[0] = calloc((n_rows + 7) / 8 + 1, 1))) {
        free(m);
        pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
        return NULL;
    }
    memset(a, 0, sizeof *a);
    a->private_data = m;
    a->release = release_array;
    a->length = (int64_t)n_rows;
    a->buffers = m->ptrs;
    valid = m->bufs[0];
    for (size_t i = 0; i < n_rows; i++) {
        if (is_valid(src, i)) valid[i / 8] |= (uint8_t)(1u << (i % 8));
        else nulls++;
    }
    a->null_count = nulls;
    m->ptrs[0] = valid;
    return m;
}

static bool lance_valid(const void *lc, size_t row) { return pch_sql__valid(lc, row); }

/* A large utf8 array's buffers: off (already a's to free) and data's bytes, handed over. */
static int utf8_finish(arr_mem *m, struct ArrowArray *a, int64_t *off, pch_buf *data)
{
    if (data->oom || pch_buf_reserve(data, 1) < 0) { pch_buf_dispose(data); return PCH_ENOMEM; }
    m->bufs[2] = pch_buf_detach(data, NULL);
    m->ptrs[1] = off;
    m->ptrs[2] = m->bufs[2];
    a->n_buffers = 3;
    return PCH_OK;
}

/* One column → child array a (memory in a new arr_mem). */
static int column_array(const pch_lance_column *lc, size_t n_rows, pch_ctx *ctx, struct ArrowArray *a, pch_error *err)
{
    size_t nbits = (n_rows + 7) / 8 + 1;
    arr_mem *m = array_begin(a, n_rows, lance_valid, lc, err);
    if (!m) return err->code;
    if (lc->type == PCH_LANCE_BOOL) {
        uint8_t *bits = calloc(nbits, 1);
        if (!(m->bufs[1] = bits)) goto oom;
        for (size_t i = 0; i < n_rows; i++)
            if (pch_sql__valid(lc, i) && lc->values[i]) bits[i / 8] |= (uint8_t)(1u << (i % 8));
        m->ptrs[1] = bits;
        a->n_buffers = 2;
        return PCH_OK;
    }
    if (lc->type == PCH_LANCE_INT32 || lc->type == PCH_LANCE_INT64 || lc->type == PCH_LANCE_FLOAT64) {
        size_t w = lc->type == PCH_LANCE_INT32 ? 4 : 8;
        if (!(m->bufs[1] = calloc(n_rows ? n_rows : 1, w))) goto oom;
        if (n_rows && lc->values) memcpy(m->bufs[1], lc->values, n_rows * w);
        m->ptrs[1] = m->bufs[1];
        a->n_buffers = 2;
        return PCH_OK;
    }
    {
        /* large utf8: int64 offsets + bytes; JSON columns rendered as the relations do */
        int64_t *off = malloc((n_rows + 1) * sizeof *off);
        pch_buf data;
        pch_buf_init(&data, NULL);
        if (!(m->bufs[1] = off)) goto oom;
        off[0] = 0;
        for (size_t i = 0; i < n_rows; i++) {
            const char *p;
            size_t n;
            if (pch_sql__str(lc, i, &p, &n)) {
                if (lc->type == PCH_LANCE_JSON) {
                    char *txt = NULL;
                    size_t tn = 0;
                    int rc = pch_jsonb_to_json(ctx, (const uint8_t *)p, n, &txt, &tn, err);
                    if (rc < 0) { pch_buf_dispose(&data); release_array(a); return rc; }
                    pch_buf_append(&data, txt, tn);
                    pch_free(ctx, txt);
                } else {
                    pch_buf_append(&data, p, n);
                }
            }
            off[i + 1] = (int64_t)data.len;
        }
        if (utf8_finish(m, a, off, &data) < 0) goto oom;
        return PCH_OK;
    }
oom:
    release_array(a);
    return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
}

/* A new struct array out of n_rows rows with room for n children (filled by the caller,
** which counts them in out->n_children as they succeed); NULL when out of memory. */
static arr_mem *struct_begin(struct ArrowArray *out, int n, size_t n_rows, pch_error *err)
{
    arr_mem *m = calloc(1, sizeof *m);
    memset(out, 0, sizeof *out);
    if (!m || !(m->children = calloc((size_t)(n ? n : 1), sizeof *m->children)) ||
        !(m->child_mem = calloc((size_t)(n ? n : 1), sizeof *m->child_mem))) {
        if (m) { free(m->children); free(m->child_mem); }
        free(m);
        pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
        return NULL;
    }
    out->private_data = m;
    out->release = release_array;
    out->length = (int64_t)n_rows;
    out->n_buffers = 1;              /* a struct array: validity only (NULL: no nulls) */
    m->ptrs[0] = NULL;
    out->buffers = m->ptrs;
    out->children = m->children;
    for (int i = 0; i < n; i++) m->children[i] = &m->child_mem[i];
    return m;
}

int pch_sql__arrow_from_batch(const pch_lance_batch *b, const int *cols, int n, pch_ctx *ctx, struct ArrowArray *out,
                              pch_error *err)
{
    arr_mem *m = struct_begin(out, n, b->n_rows, err);
    if (!m) return err->code;
    for (int i = 0; i < n; i++) {
        int rc;
        if ((size_t)cols[i] >= b->n_columns) { out->n_children = i; release_array(out); return pch_error_set(err, PCH_EINVAL, "arrow: no column %d", cols[i]); }
        rc = column_array(&b->columns[cols[i]], b->n_rows, ctx, m->children[i], err);
        out->n_children = i + (rc == 0);
        if (rc < 0) { release_array(out); return rc; }
    }
    return PCH_OK;
}

/* ---- column vectors of a narrow scan (pch_sql_vec, vx_source.c) as arrays: values copied
** from the decoded lanes once; source, identity and name columns as dictionary arrays whose
** values are each distinct string of the batch (a cluster), so a consumer groups and filters
** on int32 codes ---- */

static bool vec_valid(const void *v, size_t row) { return ((const pch_sql_vec *)v)->valid[row] != 0; }

/* The dictionary column: indices from codes (a 'c' vector) or interned strings. */
static int dict_array(const pch_sql_vec *v, size_t n_rows, struct ArrowArray *a, pch_error *err)
{
    arr_mem *m = array_begin(a, n_rows, vec_valid, v, err);
    pch_sql_interner t;
    int32_t *idx;
    size_t n_vals;
    arr_mem *dm;
    memset(&t, 0, sizeof t);
    pch_buf_init(&t.off, NULL);
    pch_buf_init(&t.data, NULL);
    if (!m) return err->code;
    if (!(idx = calloc(n_rows ? n_rows : 1, 4))) goto oom;
    m->bufs[1] = idx;
    m->ptrs[1] = idx;
    a->n_buffers = 2;
    if (v->kind == 'c') {
        uint64_t end = 0;
        for (size_t i = 0; i < n_rows; i++) idx[i] = v->valid[i] && v->code[i] < v->n_dict ? (int32_t)v->code[i] : 0;
        n_vals = v->n_dict;
        pch_buf_append(&t.off, &end, 8);      /* the interner's layout: u64 offsets from 0 */
        for (size_t k = 0; k < n_vals; k++) {
            if (v->dict[k]) pch_buf_append(&t.data, v->dict[k], v->dict_n[k]);
            end = t.data.len;
            pch_buf_append(&t.off, &end, 8);
        }
    } else {
        for (size_t i = 0; i < n_rows; i++) {
            const char *p;
            size_t n;
            uint32_t id;
            if (!v->valid[i]) continue;
            pch_sql__vec_str(v, i, &p, &n);
            if (pch_sql__intern(&t, p, n, &id) < 0) goto oom;
            idx[i] = (int32_t)(id - 1);
        }
        n_vals = t.n;
        if (!n_vals) { uint64_t z = 0; pch_buf_append(&t.off, &z, 8); }
    }
    /* the values: large utf8, whose int64 offsets are the interner's u64 ones */
    if (t.off.oom || t.data.oom || pch_buf_reserve(&t.data, 1) < 0 || !(a->dictionary = calloc(1, sizeof *a->dictionary)) ||
        !(dm = calloc(1, sizeof *dm)))
        goto oom;
    m->dict = a->dictionary;
    a->dictionary->private_data = dm;
    a->dictionary->release = release_array;
    a->dictionary->length = (int64_t)n_vals;
    a->dictionary->n_buffers = 3;
    a->dictionary->buffers = dm->ptrs;
    dm->bufs[1] = pch_buf_detach(&t.off, NULL);
    dm->ptrs[1] = dm->bufs[1];
    dm->bufs[2] = pch_buf_detach(&t.data, NULL);
    dm->ptrs[2] = dm->bufs[2];
    pch_sql__intern_dispose(&t);
    return PCH_OK;
oom:
    pch_sql__intern_dispose(&t);
    release_array(a);
    return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
}

static int vec_array(const pch_sql_vec *v, pch_lance_type ty, bool dict, size_t n_rows, struct ArrowArray *a,
                     pch_error *err)
{
    arr_mem *m;
    if (dict && (v->kind == 'c' || v->kind == 's')) return dict_array(v, n_rows, a, err);
    if (!(m = array_begin(a, n_rows, vec_valid, v, err))) return err->code;
    a->n_buffers = 2;
    if (v->kind == 'f' || (v->kind == 'i' && ty != PCH_LANCE_BOOL)) {
        size_t w = ty == PCH_LANCE_INT32 ? 4 : 8;
        uint8_t *d = calloc(n_rows ? n_rows : 1, w);
        if (!(m->bufs[1] = d)) goto oom;
        m->ptrs[1] = d;
        if (v->kind == 'f') memcpy(d, v->f, n_rows * 8);
        else if (w == 8) memcpy(d, v->i, n_rows * 8);
        else for (size_t i = 0; i < n_rows; i++) { int32_t x = (int32_t)v->i[i]; memcpy(d + 4 * i, &x, 4); }
        return PCH_OK;
    }
    if (v->kind == 'i') {           /* bool: a bitmap */
        uint8_t *bits = calloc((n_rows + 7) / 8 + 1, 1);
        if (!(m->bufs[1] = bits)) goto oom;
        m->ptrs[1] = bits;
        for (size_t i = 0; i < n_rows; i++)
            if (v->valid[i] && v->i[i]) bits[i / 8] |= (uint8_t)(1u << (i % 8));
        return PCH_OK;
    }
    {
        int64_t *off = malloc((n_rows + 1) * sizeof *off);
        pch_buf data;
        pch_buf_init(&data, NULL);
        if (!(m->bufs[1] = off)) goto oom;
        m->ptrs[1] = off;
        off[0] = 0;
        for (size_t i = 0; i < n_rows; i++) {
            if (v->valid[i]) {
                const char *p;
                size_t n;
                pch_sql__vec_str(v, i, &p, &n);
                pch_buf_append(&data, p, n);
            }
            off[i + 1] = (int64_t)data.len;
        }
        if (utf8_finish(m, a, off, &data) < 0) goto oom;
        return PCH_OK;
    }
oom:
    release_array(a);
    return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
}

int pch_sql__arrow_from_vecs(const pch_sql_vec *vecs, const pch_lance_schema *s, const int *cols, int n, const bool *dict,
                             size_t n_rows, struct ArrowArray *out, pch_error *err)
{
    arr_mem *m = struct_begin(out, n, n_rows, err);
    if (!m) return err->code;
    for (int i = 0; i < n; i++) {
        int rc = vec_array(&vecs[cols[i]], s->fields[cols[i]].type, dict[i], n_rows, m->children[i], err);
        out->n_children = i + (rc == 0);
        if (rc < 0) { release_array(out); return rc; }
    }
    return PCH_OK;
}

/* ---- rows built column by column (pch_sql_acol): the training readers' streams ---- */

void pch_sql__acol_init(pch_sql_acol *c, char kind)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    pch_buf_init(&c->valid, NULL);
    pch_buf_init(&c->off, NULL);
    pch_buf_init(&c->data, NULL);
}

void pch_sql__acol_dispose(pch_sql_acol *c)
{
    pch_buf_dispose(&c->valid);
    pch_buf_dispose(&c->off);
    pch_buf_dispose(&c->data);
}

void pch_sql__acol_clear(pch_sql_acol *c)
{
    pch_buf_clear(&c->valid);
    pch_buf_clear(&c->off);
    pch_buf_clear(&c->data);
}

static int acol_end(pch_sql_acol *c, bool valid, size_t n_items)
{
    uint8_t v = valid;
    int64_t end;
    if (c->kind == 'l') return pch_buf_append(&c->valid, &v, 1);
    if (c->off.len == 0) { int64_t z = 0; PCH_TRY(pch_buf_append(&c->off, &z, 8)); }
    memcpy(&end, c->off.data + c->off.len - 8, 8);
    end += (int64_t)n_items;
    PCH_TRY(pch_buf_append(&c->valid, &v, 1));
    return pch_buf_append(&c->off, &end, 8);
}

int pch_sql__acol_str(pch_sql_acol *c, const char *p, size_t n, bool valid)
{
    if (valid && n) PCH_TRY(pch_buf_append(&c->data, p, n));
    return acol_end(c, valid, valid ? n : 0);
}

int pch_sql__acol_i64(pch_sql_acol *c, int64_t v, bool valid)
{
    if (!valid) v = 0;
    PCH_TRY(pch_buf_append(&c->data, &v, 8));
    return acol_end(c, valid, 0);
}

int pch_sql__acol_list(pch_sql_acol *c, const void *items, size_t n, unsigned item_bits, bool valid)
{
    if (!valid) n = 0;
    if (c->kind == 'I') {                   /* u32 items, little-endian as stored */
        if (n) PCH_TRY(pch_buf_append(&c->data, items, n * 4));
    } else {                                /* float64 items, widened from f32 when stored so */
        for (size_t i = 0; i < n; i++) {
            double d;
            if (item_bits == 32) { float f; memcpy(&f, (const uint8_t *)items + 4 * i, 4); d = f; }
            else memcpy(&d, (const uint8_t *)items + 8 * i, 8);
            PCH_TRY(pch_buf_append(&c->data, &d, 8));
        }
    }
    return acol_end(c, valid, n);
}

int pch_sql__acol_schema(const char *const *names, const pch_sql_acol *cols, int n, struct ArrowSchema *out,
                         pch_error *err)
{
    const char *fmts[64], *items[64];
    if (n > 64) return pch_error_set(err, PCH_EINVAL, "arrow: %d columns (64 at most)", n);
    for (int i = 0; i < n; i++) {
        char k = cols[i].kind;
        fmts[i] = k == 'U' ? "U" : k == 'l' ? "l" : "+L";
        items[i] = k == 'I' ? "I" : k == 'G' ? "g" : NULL;
    }
    return struct_schema(names, fmts, items, n, out, err);
}

/* b's bytes, handed over (b is left empty; at least one byte, so a buffer is never NULL).
** The columns' buffers use libc (pch_sql__acol_init), as release_array frees them. */
static void *take_buf(pch_buf *b)
{
    return pch_buf_reserve(b, 1) < 0 ? NULL : pch_buf_detach(b, NULL);
}

static bool acol_valid(const void *c, size_t row) { return ((const pch_sql_acol *)c)->valid.data[row] != 0; }

/* Column c (n_rows rows) → a: its offsets and values move into a new arr_mem (a list's items
** into its child). */
static int acol_array(pch_sql_acol *c, size_t n_rows, struct ArrowArray *a, pch_error *err)
{
    arr_mem *m = array_begin(a, n_rows, acol_valid, c, err);
    if (!m) return err->code;
    if (c->kind == 'l') {
        if (!(m->bufs[1] = take_buf(&c->data))) goto oom;
        m->ptrs[1] = m->bufs[1];
        a->n_buffers = 2;
        return PCH_OK;
    }
    if (!(m->bufs[1] = take_buf(&c->off))) goto oom;
    m->ptrs[1] = m->bufs[1];
    if (c->kind == 'U') {
        if (!(m->bufs[2] = take_buf(&c->data))) goto oom;
        m->ptrs[2] = m->bufs[2];
        a->n_buffers = 3;
        return PCH_OK;
    }
    {   /* a large list: offsets here, the items in one child (no nulls) */
        arr_mem *cm;
        size_t w = c->kind == 'I' ? 4 : 8, n_items = c->data.len / w;
        struct ArrowArray *ch;
        a->n_buffers = 2;
        if (!(m->children = calloc(1, sizeof *m->children)) || !(m->child_mem = calloc(1, sizeof *m->child_mem)) ||
            !(cm = calloc(1, sizeof *cm)))
            goto oom;
        ch = m->children[0] = &m->child_mem[0];
        ch->private_data = cm;
        ch->release = release_array;
        ch->length = (int64_t)n_items;
        ch->n_buffers = 2;
        ch->buffers = cm->ptrs;
        a->n_children = 1;
        a->children = m->children;
        if (!(cm->bufs[1] = take_buf(&c->data))) goto oom;
        cm->ptrs[0] = NULL;
        cm->ptrs[1] = cm->bufs[1];
        return PCH_OK;
    }
oom:
    release_array(a);
    return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
}

int pch_sql__acol_batch(pch_sql_acol *cols, int n, size_t n_rows, struct ArrowArray *out, pch_error *err)
{
    arr_mem *m = struct_begin(out, n, n_rows, err);
    if (!m) return err->code;
    for (int i = 0; i < n; i++) {
        int rc;
        if (cols[i].valid.oom || cols[i].off.oom || cols[i].data.oom || cols[i].valid.len != n_rows) {
            release_array(out);
            return pch_error_set(err, cols[i].valid.len != n_rows ? PCH_EINVAL : PCH_ENOMEM,
                                 "arrow: column %d has %zu rows of %zu", i, cols[i].valid.len, n_rows);
        }
        rc = acol_array(&cols[i], n_rows, m->children[i], err);
        out->n_children = i + (rc == 0);
        if (rc < 0) { release_array(out); return rc; }
    }
    return PCH_OK;
}
