/* lance.table.Manifest (lance-format.md §1.3–§1.5, Appendix B/D): message encode/decode,
** the manifest file framing, manifest file names and the version listing of _versions/.
**
** Framing (§1.3): [u32 len_t | Transaction] u32 len_m | Manifest | u64 pos | u16 0 | u16 2 |
** "LANC"; pos points at len_m and the message ends exactly 16 bytes before EOF. We write
** no transaction (pos = 0, transaction_section absent). Decoding is strict: magic, pos,
** length and every protobuf length are checked; fragments keep their stored order. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "io/rfile.h"
#include "lance/table.h"

/* ---- object ---- */

int pch_lance__manifest_new(pch_lance_manifest **out, pch_ctx *ctx, pch_error *err)
{
    pch_lance_manifest *m = pch_calloc(ctx, 1, sizeof *m);
    int rc;
    *out = NULL;
    if (!m) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    m->ctx = ctx;
    if ((rc = pch_lance_schema_new(&m->schema, ctx, err)) < 0) {
        pch_free(ctx, m);
        return rc;
    }
    *out = m;
    return PCH_OK;
}

static void data_file_dispose(pch_ctx *ctx, pch_lance_data_file *df)
{
    pch_free(ctx, df->path);
    pch_free(ctx, df->fields);
    pch_free(ctx, df->column_indices);
}

static void fragment_dispose(pch_ctx *ctx, pch_lance_fragment *fr)
{
    for (size_t i = 0; i < fr->n_files; i++) data_file_dispose(ctx, &fr->files[i]);
    pch_free(ctx, fr->files);
}

void pch_lance__manifest_free(pch_lance_manifest *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->n_fragments; i++) fragment_dispose(m->ctx, &m->fragments[i]);
    pch_free(m->ctx, m->fragments);
    pch_lance_schema_free(m->schema);
    pch_free(m->ctx, m->writer_library);
    pch_free(m->ctx, m->writer_version);
    pch_free(m->ctx, m->format_name);
    pch_free(m->ctx, m->format_version);
    pch_free(m->ctx, m);
}

static char *dup_n(pch_ctx *ctx, const void *p, size_t n)
{
    size_t sz;
    char *d;
    if (!pch_add_size(&sz, n, 1) || !(d = pch_malloc(ctx, sz))) return NULL;
    if (n) memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

int pch_lance__manifest_set_str(pch_lance_manifest *m, char **slot, const char *s,
                                pch_error *err)
{
    char *d = dup_n(m->ctx, s, strlen(s));
    if (!d) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    pch_free(m->ctx, *slot);
    *slot = d;
    return PCH_OK;
}

static void *dup_arr(pch_ctx *ctx, const void *p, size_t n, size_t size)
{
    size_t bytes;
    void *d;
    if (!pch_mul_size(&bytes, n, size) || !(d = pch_malloc(ctx, bytes))) return NULL;
    if (bytes) memcpy(d, p, bytes);
    return d;
}

int pch_lance__manifest_add_fragment(pch_lance_manifest *m, const pch_lance_fragment *frag,
                                     pch_error *err)
{
    size_t bytes;
    if (!pch_mul_size(&bytes, m->n_fragments + 1, sizeof *m->fragments))
        return pch_error_set(err, PCH_ELIMIT, "too many fragments");
    pch_lance_fragment *nf = pch_realloc(m->ctx, m->fragments, bytes);
    if (!nf) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    m->fragments = nf;
    pch_lance_fragment *c = &nf[m->n_fragments];
    *c = *frag;
    c->files = pch_calloc(m->ctx, frag->n_files ? frag->n_files : 1, sizeof *c->files);
    if (!c->files) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    c->n_files = 0;
    m->n_fragments++;                       /* owned from here on; freed with m */
    for (size_t i = 0; i < frag->n_files; i++) {
        const pch_lance_data_file *s = &frag->files[i];
        pch_lance_data_file *d = &c->files[i];
        *d = *s;
        d->path = dup_n(m->ctx, s->path, strlen(s->path));
        d->fields = dup_arr(m->ctx, s->fields, s->n_fields, sizeof(int32_t));
        d->column_indices = dup_arr(m->ctx, s->column_indices, s->n_column_indices, sizeof(int32_t));
        c->n_files++;
        if (!d->path || !d->fields || !d->column_indices)
            return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    return PCH_OK;
}

/* ---- encoding ---- */

static int encode_fragment(pch_buf *b, const pch_lance_fragment *fr)
{
    size_t mark, fmark;
    PCH_TRY(pch_pb_begin(b, 2, &mark));
    PCH_TRY(pch_pb_put_u64_nz(b, 1, fr->id));
    for (size_t i = 0; i < fr->n_files; i++) {
        const pch_lance_data_file *df = &fr->files[i];
        PCH_TRY(pch_pb_begin(b, 2, &fmark));
        PCH_TRY(pch_pb_put_str(b, 1, df->path));
        PCH_TRY(pch_pb_put_packed_i32(b, 2, df->fields, df->n_fields));
        PCH_TRY(pch_pb_put_packed_i32(b, 3, df->column_indices, df->n_column_indices));
        PCH_TRY(pch_pb_put_u64_nz(b, 4, df->major));
        PCH_TRY(pch_pb_put_u64_nz(b, 5, df->minor));
        PCH_TRY(pch_pb_put_u64_nz(b, 6, df->file_size));
        PCH_TRY(pch_pb_end(b, fmark));
    }
    PCH_TRY(pch_pb_put_u64_nz(b, 4, fr->physical_rows));
    return pch_pb_end(b, mark);
}

static int encode_two_str(pch_buf *b, uint32_t field_no, const char *a, const char *c)
{
    size_t mark;
    PCH_TRY(pch_pb_begin(b, field_no, &mark));
    PCH_TRY(pch_pb_put_str(b, 1, a));
    PCH_TRY(pch_pb_put_str(b, 2, c));
    return pch_pb_end(b, mark);
}

int pch_lance__manifest_encode_msg(pch_buf *b, const pch_lance_manifest *m, pch_error *err)
{
    size_t mark;
    int rc = PCH_OK;
#define E(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    E(pch_lance__schema_encode_fields(b, 1, m->schema));
    for (size_t i = 0; i < m->n_fragments; i++) E(encode_fragment(b, &m->fragments[i]));
    E(pch_pb_put_u64_nz(b, 3, m->version));
    E(pch_lance__schema_encode_metadata(b, 5, m->schema));
    if (m->ts_seconds || m->ts_nanos) {
        E(pch_pb_begin(b, 7, &mark));
        E(pch_pb_put_u64_nz(b, 1, (uint64_t)m->ts_seconds));
        E(pch_pb_put_u64_nz(b, 2, (uint64_t)(int64_t)m->ts_nanos));
        E(pch_pb_end(b, mark));
    }
    E(pch_pb_put_u64_nz(b, 9, m->reader_flags));
    E(pch_pb_put_u64_nz(b, 10, m->writer_flags));
    if (m->has_max_fragment_id) E(pch_pb_put_u64(b, 11, m->max_fragment_id));
    if (m->writer_library && *m->writer_library)
        E(encode_two_str(b, 13, m->writer_library, m->writer_version ? m->writer_version : ""));
    E(pch_pb_put_u64_nz(b, 14, m->next_row_id));
    if (m->format_name && *m->format_name)
        E(encode_two_str(b, 15, m->format_name, m->format_version ? m->format_version : ""));
    if (m->has_transaction_section) E(pch_pb_put_u64(b, 21, m->transaction_section));
#undef E
done:
    if (rc < 0 || b->oom) return pch_error_set(err, PCH_ENOMEM, "out of memory encoding manifest");
    return PCH_OK;
}

int pch_lance__manifest_encode_file(pch_buf *b, const pch_lance_manifest *m, pch_error *err)
{
    size_t start = b->len, body;
    PCH_TRY(pch_buf_zero(b, 4));
    PCH_TRY(pch_lance__manifest_encode_msg(b, m, err));
    body = b->len - start - 4;
    if (body > UINT32_MAX) return pch_error_set(err, PCH_ELIMIT, "manifest larger than 4 GiB");
    pch_store_le32(b->data + start, (uint32_t)body);
    pch_buf_put_le64(b, 0);     /* position of the length prefix (manifest starts the file) */
    pch_buf_put_le16(b, 0);
    pch_buf_put_le16(b, 2);
    pch_buf_append(b, "LANC", 4);
    return b->oom ? pch_error_set(err, PCH_ENOMEM, "out of memory") : PCH_OK;
}

/* ---- decoding ---- */

static int collect_i32(const pch_pb_field *f, pch_ctx *ctx, int32_t **arr, size_t *n,
                       const char *what, pch_error *err)
{
    uint64_t *tmp = NULL;
    size_t cnt = 0, cap = 0, old = *n, bytes;
    int rc = pch_pb_collect_u64(f, ctx, &tmp, &cnt, &cap, what, err);
    if (rc < 0) goto done;
    if (!pch_add_size(&bytes, old, cnt) || !pch_mul_size(&bytes, bytes, sizeof(int32_t))) {
        rc = pch_error_set(err, PCH_ELIMIT, "%s: too many values", what);
        goto done;
    }
    int32_t *na = pch_realloc(ctx, *arr, bytes);
    if (!na) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto done; }
    *arr = na;
    for (size_t i = 0; i < cnt; i++) {
        int64_t v = (int64_t)tmp[i];
        if (v < INT32_MIN || v > INT32_MAX) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: value out of int32 range", what);
            goto done;
        }
        na[old + i] = (int32_t)v;
    }
    *n = old + cnt;
done:
    pch_free(ctx, tmp);
    return rc;
}

#define WANT(f_, w_, what_) do { if ((f_).wire != (w_)) return pch_error_set(err, PCH_ECORRUPT, \
    "%s: field %u has wire type %d", (what_), (f_).num, (f_).wire); } while (0)

static int decode_data_file(pch_ctx *ctx, pch_lance_data_file *df, const uint8_t *p, size_t len,
                            pch_error *err)
{
    pch_rd r = pch_rd_make(p, len);
    pch_pb_field f;
    int rc;
    while ((rc = pch_pb_next(&r, &f, "data file", err)) > 0) {
        switch (f.num) {
        case 1:
            WANT(f, PCH_PB_LEN, "data file");
            if (memchr(f.ptr, '\0', f.len))
                return pch_error_set(err, PCH_ECORRUPT, "data file path contains NUL");
            pch_free(ctx, df->path);
            if (!(df->path = dup_n(ctx, f.ptr, f.len)))
                return pch_error_set(err, PCH_ENOMEM, "out of memory");
            break;
        case 2: PCH_TRY(collect_i32(&f, ctx, &df->fields, &df->n_fields, "data file fields", err)); break;
        case 3: PCH_TRY(collect_i32(&f, ctx, &df->column_indices, &df->n_column_indices,
                                    "data file column_indices", err)); break;
        case 4: WANT(f, PCH_PB_VARINT, "data file"); df->major = (uint32_t)f.v; break;
        case 5: WANT(f, PCH_PB_VARINT, "data file"); df->minor = (uint32_t)f.v; break;
        case 6: WANT(f, PCH_PB_VARINT, "data file"); df->file_size = f.v; break;
        case 7: df->has_base_id = true; break;
        default: break;
        }
    }
    if (rc < 0) return rc;
    if (!df->path || !*df->path || strchr(df->path, '/') || strchr(df->path, '\\') ||
        strcmp(df->path, ".") == 0 || strcmp(df->path, "..") == 0)
        return pch_error_set(err, PCH_ECORRUPT, "data file path '%s' is not a plain file name",
                             df->path ? df->path : "");
    if (df->n_fields != df->n_column_indices)
        return pch_error_set(err, PCH_ECORRUPT,
                             "data file %s: %zu fields but %zu column indices", df->path,
                             df->n_fields, df->n_column_indices);
    return PCH_OK;
}

static int decode_fragment(pch_ctx *ctx, pch_lance_fragment *fr, const uint8_t *p, size_t len,
                           pch_error *err)
{
    pch_rd r = pch_rd_make(p, len);
    pch_pb_field f;
    int rc;
    while ((rc = pch_pb_next(&r, &f, "fragment", err)) > 0) {
        switch (f.num) {
        case 1: WANT(f, PCH_PB_VARINT, "fragment"); fr->id = f.v; break;
        case 2: {
            size_t bytes;
            WANT(f, PCH_PB_LEN, "fragment");
            if (!pch_mul_size(&bytes, fr->n_files + 1, sizeof *fr->files))
                return pch_error_set(err, PCH_ELIMIT, "too many data files");
            pch_lance_data_file *nf = pch_realloc(ctx, fr->files, bytes);
            if (!nf) return pch_error_set(err, PCH_ENOMEM, "out of memory");
            fr->files = nf;
            memset(&nf[fr->n_files], 0, sizeof *nf);
            fr->n_files++;
            PCH_TRY(decode_data_file(ctx, &nf[fr->n_files - 1], f.ptr, f.len, err));
            break;
        }
        case 3: fr->has_deletion_file = true; break;
        case 4: WANT(f, PCH_PB_VARINT, "fragment"); fr->physical_rows = f.v; break;
        case 5: case 6: fr->has_row_ids = true; break;
        default: break;
        }
    }
    return rc;
}

static int decode_two_str(pch_ctx *ctx, const uint8_t *p, size_t len, char **a, char **b,
                          const char *what, pch_error *err)
{
    pch_rd r = pch_rd_make(p, len);
    pch_pb_field f;
    int rc;
    while ((rc = pch_pb_next(&r, &f, what, err)) > 0) {
        char **slot = f.num == 1 ? a : f.num == 2 ? b : NULL;
        if (!slot) continue;
        WANT(f, PCH_PB_LEN, what);
        if (memchr(f.ptr, '\0', f.len))
            return pch_error_set(err, PCH_ECORRUPT, "%s: string contains NUL", what);
        pch_free(ctx, *slot);
        if (!(*slot = dup_n(ctx, f.ptr, f.len))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    return rc;
}

static int decode_msg(pch_lance_manifest *m, const uint8_t *p, size_t len, pch_error *err)
{
    pch_rd r = pch_rd_make(p, len);
    pch_pb_field f;
    int rc;
    while ((rc = pch_pb_next(&r, &f, "manifest", err)) > 0) {
        switch (f.num) {
        case 1:
            WANT(f, PCH_PB_LEN, "manifest");
            PCH_TRY(pch_lance__schema_decode_field(m->schema, f.ptr, f.len, err));
            break;
        case 2: {
            size_t bytes;
            WANT(f, PCH_PB_LEN, "manifest");
            if (!pch_mul_size(&bytes, m->n_fragments + 1, sizeof *m->fragments))
                return pch_error_set(err, PCH_ELIMIT, "too many fragments");
            pch_lance_fragment *nf = pch_realloc(m->ctx, m->fragments, bytes);
            if (!nf) return pch_error_set(err, PCH_ENOMEM, "out of memory");
            m->fragments = nf;
            memset(&nf[m->n_fragments], 0, sizeof *nf);
            m->n_fragments++;
            PCH_TRY(decode_fragment(m->ctx, &nf[m->n_fragments - 1], f.ptr, f.len, err));
            break;
        }
        case 3: WANT(f, PCH_PB_VARINT, "manifest"); m->version = f.v; break;
        case 5:
            WANT(f, PCH_PB_LEN, "manifest");
            PCH_TRY(pch_lance__schema_decode_metadata(m->schema, f.ptr, f.len, err));
            break;
        case 7: {
            pch_rd tr;
            pch_pb_field tf;
            WANT(f, PCH_PB_LEN, "manifest");
            tr = pch_rd_make(f.ptr, f.len);
            while ((rc = pch_pb_next(&tr, &tf, "manifest timestamp", err)) > 0) {
                if (tf.num == 1 && tf.wire == PCH_PB_VARINT) m->ts_seconds = (int64_t)tf.v;
                if (tf.num == 2 && tf.wire == PCH_PB_VARINT) m->ts_nanos = (int32_t)tf.v;
            }
            if (rc < 0) return rc;
            break;
        }
        case 9: WANT(f, PCH_PB_VARINT, "manifest"); m->reader_flags = f.v; break;
        case 10: WANT(f, PCH_PB_VARINT, "manifest"); m->writer_flags = f.v; break;
        case 11:
            WANT(f, PCH_PB_VARINT, "manifest");
            if (f.v > UINT32_MAX)
                return pch_error_set(err, PCH_ECORRUPT, "manifest: max_fragment_id out of range");
            m->has_max_fragment_id = true;
            m->max_fragment_id = (uint32_t)f.v;
            break;
        case 13:
            WANT(f, PCH_PB_LEN, "manifest");
            PCH_TRY(decode_two_str(m->ctx, f.ptr, f.len, &m->writer_library, &m->writer_version,
                                   "manifest writer_version", err));
            break;
        case 14: WANT(f, PCH_PB_VARINT, "manifest"); m->next_row_id = f.v; break;
        case 15:
            WANT(f, PCH_PB_LEN, "manifest");
            PCH_TRY(decode_two_str(m->ctx, f.ptr, f.len, &m->format_name, &m->format_version,
                                   "manifest data_format", err));
            break;
        case 21:
            WANT(f, PCH_PB_VARINT, "manifest");
            m->has_transaction_section = true;
            m->transaction_section = f.v;
            break;
        default: break;   /* index_section, tag, config, … do not affect reading rows */
        }
    }
    if (rc < 0) return rc;
    if (!m->writer_library && !(m->writer_library = dup_n(m->ctx, "", 0)))
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if (!m->writer_version && !(m->writer_version = dup_n(m->ctx, "", 0)))
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if (!m->format_name && !(m->format_name = dup_n(m->ctx, "", 0)))
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if (!m->format_version && !(m->format_version = dup_n(m->ctx, "", 0)))
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if (m->schema->n_fields == 0)
        return pch_error_set(err, PCH_ECORRUPT, "manifest: schema has no fields");
    return PCH_OK;
}

int pch_lance__manifest_decode_file(pch_lance_manifest **out, pch_ctx *ctx,
                                    const uint8_t *p, size_t len, pch_error *err)
{
    pch_lance_manifest *m = NULL;
    uint64_t pos;
    uint32_t len_m;
    int rc;
    *out = NULL;
    if (len < PCH_LANCE_MANIFEST_FOOTER_LEN + 4)
        return pch_error_set(err, PCH_ECORRUPT, "manifest: %zu bytes is too short", len);
    if (memcmp(p + len - 4, "LANC", 4) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "manifest: bad magic (no LANC at the end)");
    pos = pch_load_le64(p + len - PCH_LANCE_MANIFEST_FOOTER_LEN);
    /* the length prefix (4 bytes) must lie before the footer */
    if (pos > len - PCH_LANCE_MANIFEST_FOOTER_LEN - 4)
        return pch_error_set(err, PCH_ECORRUPT, "manifest: position %llu past the end",
                             (unsigned long long)pos);
    len_m = pch_load_le32(p + pos);
    if ((uint64_t)len_m != (uint64_t)len - PCH_LANCE_MANIFEST_FOOTER_LEN - 4 - pos)
        return pch_error_set(err, PCH_ECORRUPT,
                             "manifest: length %u does not match the file (%llu bytes expected)",
                             len_m, (unsigned long long)(len - PCH_LANCE_MANIFEST_FOOTER_LEN - 4 - pos));
    PCH_TRY(pch_lance__manifest_new(&m, ctx, err));
    if ((rc = decode_msg(m, p + pos + 4, len_m, err)) < 0) {
        pch_lance__manifest_free(m);
        return rc;
    }
    *out = m;
    return PCH_OK;
}

/* ---- names and listing (§1.2) ---- */

void pch_lance__manifest_name(char out[32], uint64_t version, int naming)
{
    if (naming == 1) snprintf(out, 32, "%llu.manifest", (unsigned long long)version);
    else snprintf(out, 32, "%020llu.manifest", (unsigned long long)(UINT64_MAX - version));
}

int pch_lance__manifest_parse_name(const char *name, uint64_t *version_out, pch_error *err)
{
    size_t n = strlen(name), digits;
    uint64_t v = 0;
    static const char suffix[] = ".manifest";
    if (n < sizeof suffix - 1 || strcmp(name + n - (sizeof suffix - 1), suffix) != 0) return 0;
    digits = n - (sizeof suffix - 1);
    if (digits == 0 || digits > 20)
        return pch_error_set(err, PCH_ECORRUPT, "_versions/%s: not a version number", name);
    for (size_t i = 0; i < digits; i++) {
        if (name[i] < '0' || name[i] > '9' ||
            !pch_mul_u64(&v, v, 10) || !pch_add_u64(&v, v, (uint64_t)(name[i] - '0')))
            return pch_error_set(err, PCH_ECORRUPT, "_versions/%s: not a version number", name);
    }
    if (digits == 20) {          /* V2: u64::MAX - version, 20 digits */
        *version_out = UINT64_MAX - v;
        if (*version_out == 0)
            return pch_error_set(err, PCH_ECORRUPT, "_versions/%s: version 0", name);
        return 2;
    }
    if (v == 0) return pch_error_set(err, PCH_ECORRUPT, "_versions/%s: version 0", name);
    *version_out = v;
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct vlist {
    pch_ctx *ctx;
    const char *dataset;
    uint64_t *arr;
    size_t n, cap;
    int naming;
    size_t seen;            /* names listed, manifests or not */
    pch_error *err;
} vlist;

static int on_version(void *arg, const char *name)
{
    vlist *l = arg;
    uint64_t v;
    l->seen++;
    int k = pch_lance__manifest_parse_name(name, &v, l->err);
    if (k <= 0) return k;
    if (l->naming && l->naming != k)
        return pch_error_set(l->err, PCH_ECORRUPT, "%s: V1 and V2 manifest names mixed in _versions/", l->dataset);
    l->naming = k;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16, bytes;
        uint64_t *na;
        if (!pch_mul_size(&bytes, nc, sizeof *na) || !(na = pch_realloc(l->ctx, l->arr, bytes)))
            return pch_error_set(l->err, PCH_ENOMEM, "out of memory");
        l->arr = na;
        l->cap = nc;
    }
    l->arr[l->n++] = v;
    return PCH_OK;
}

/* The committed versions of dataset: the names in _versions/ (a directory, or the keys below
** DATASET/_versions/ of a dataset on object storage: io/rfile.h). */
int pch_lance__list_versions(pch_ctx *ctx, const char *dataset, uint64_t **out, size_t *n_out,
                             int *naming_out, pch_error *err)
{
    pch_buf dir;
    vlist l = { ctx, dataset, NULL, 0, 0, 0, 0, err };
    int rc = PCH_OK;
    *out = NULL;
    *n_out = 0;
    *naming_out = 0;
    pch_buf_init(&dir, ctx);
    if (pch_path_join(&dir, dataset, "_versions") < 0) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        goto done;
    }
    if (!pch_rfile_is_remote(dataset)) {
        struct stat sb;
        int st = stat((const char *)dir.data, &sb);
        if (st != 0 && errno != ENOENT && errno != ENOTDIR) {
            rc = pch_error_set_sys(err, PCH_EIO, errno, "open %s", (const char *)dir.data);
            goto done;
        }
        if (st != 0 || !S_ISDIR(sb.st_mode)) {
            rc = pch_error_set(err, PCH_ENOTFOUND, "%s: not a Lance dataset (no _versions/)", dataset);
            goto done;
        }
    }
    if ((rc = pch_rfile_list(ctx, (const char *)dir.data, on_version, &l, err)) < 0) goto done;
    if (l.seen == 0 && pch_rfile_is_remote(dataset)) {
        rc = pch_error_set(err, PCH_ENOTFOUND, "%s: not a Lance dataset (no _versions/)", dataset);
        goto done;
    }
    if (l.n == 0) {
        rc = pch_error_set(err, PCH_ENOTFOUND, "%s: no committed version", dataset);
        goto done;
    }
    qsort(l.arr, l.n, sizeof *l.arr, cmp_u64);
    for (size_t i = 1; i < l.n; i++)
        if (l.arr[i] == l.arr[i - 1]) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: version %llu listed twice", dataset,
                               (unsigned long long)l.arr[i]);
            goto done;
        }
    *out = l.arr;
    *n_out = l.n;
    *naming_out = l.naming;
    l.arr = NULL;
done:
    pch_free(ctx, l.arr);
    pch_buf_dispose(&dir);
    return rc;
}

int pch_lance__load_manifest(pch_lance_manifest **out, pch_ctx *ctx, const char *dataset,
                             uint64_t version, int *naming_out, pch_error *err)
{
    uint64_t *vers = NULL;
    size_t n = 0;
    int naming = 0, rc;
    char name[32];
    pch_buf path, bytes;
    *out = NULL;
    pch_buf_init(&path, ctx);
    pch_buf_init(&bytes, ctx);
    if ((rc = pch_lance__list_versions(ctx, dataset, &vers, &n, &naming, err)) < 0) goto done;
    if (version == 0) {
        version = vers[n - 1];
    } else {
        bool found = false;
        for (size_t i = 0; i < n; i++) found |= vers[i] == version;
        if (!found) {
            rc = pch_error_set(err, PCH_ENOTFOUND, "%s: version %llu not found (latest is %llu)",
                               dataset, (unsigned long long)version, (unsigned long long)vers[n - 1]);
            goto done;
        }
    }
    pch_lance__manifest_name(name, version, naming);
    if (pch_buf_printf(&path, "%s/_versions/%s", dataset, name) < 0) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = pch_rfile_read_all(ctx, &bytes, (const char *)path.data, PCH_LANCE_MANIFEST_MAX_BYTES,
                                 err)) < 0)
        goto done;
    if ((rc = pch_lance__manifest_decode_file(out, ctx, bytes.data, bytes.len, err)) < 0) {
        pch_error_prefix(err, "%s", (const char *)path.data);
        goto done;
    }
    if ((*out)->version != version) {
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: manifest says version %llu",
                           (const char *)path.data, (unsigned long long)(*out)->version);
        pch_lance__manifest_free(*out);
        *out = NULL;
        goto done;
    }
    if (naming_out) *naming_out = naming;
done:
    pch_free(ctx, vers);
    pch_buf_dispose(&path);
    pch_buf_dispose(&bytes);
    return rc;
}
