/* pchronicle-vortex convert --from LANCE_DATASET|FILE.jsonl --to FILE.vortex: reads rows
** through the public Lance scanner or the public JSON parser and writes one Vortex file.
** Chunking is decided here (the writer never splits a chunk): --chunk-rows N rows per chunk,
** and with --chunk-by COLUMN a chunk only ends where that column's value changes, so rows of
** one trajectory never straddle chunks (RFC-0006 §7). Lance JSON columns become utf8 text.
** Memory stays bounded: JSON lines are read one at a time, Lance through the scanner, and the
** writer streams to a staging file beside --to that finish renames into place. --report
** prints the compressor's per-lane report with the ratio logical/stored and a total. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "pchronicle/lance.h"
#include "vx_cli.h"

typedef struct conv {
    pch_ctx *ctx;
    pch_vx_dtype *dt;
    pch_vx_builder *b;
    pch_vx_writer *w;
    uint64_t chunk_rows;
    long chunk_by;          /* top-level field index or -1 */
    char *last_key;
    size_t last_key_len;
    int have_key;
    const char *to;         /* output path (streamed, published at finish) */
} conv;

static int flush(conv *c, pch_error *err)
{
    pch_vx_array *a = NULL;
    int rc;
    if (pch_vx_builder_len(c->b) == 0) return PCH_OK;
    VX_TRY(pch_vx_builder_finish(c->b, &a, err));
    rc = pch_vx_writer_write(c->w, a, err);
    pch_vx_array_free(a);
    return rc;
}

/* Called before appending a row whose chunk key is key[0..n): flush on a boundary. */
static int before_row(conv *c, const char *key, size_t n, pch_error *err)
{
    uint64_t len = pch_vx_builder_len(c->b);
    if (len >= c->chunk_rows) {
        if (c->chunk_by < 0 || !c->have_key || n != c->last_key_len || memcmp(key, c->last_key, n) != 0)
            VX_TRY(flush(c, err));
    }
    if (c->chunk_by >= 0) {
        char *k = realloc(c->last_key, n + 1);
        if (!k) return pch_error_set(err, PCH_ENOMEM, "out of memory");
        if (n) memcpy(k, key, n);
        c->last_key = k;
        c->last_key_len = n;
        c->have_key = 1;
    }
    return PCH_OK;
}

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) return -1;
    for (;;) {
        if (n + 65536 > cap) {
            size_t nc = cap ? cap * 2 : 1 << 20;
            char *nb = realloc(buf, nc + 1);
            if (!nb) { free(buf); fclose(f); return -1; }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    fclose(f);
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

/* Next line of f without its '\n' (getline buffer *line, capacity *cap); 0 at EOF. */
static int next_line(FILE *f, char **line, size_t *cap, size_t *n)
{
    ssize_t k = getline(line, cap, f);
    if (k < 0) return 0;
    if (k > 0 && (*line)[k - 1] == '\n') k--;
    *n = (size_t)k;
    return 1;
}

/* JSON lines are read one at a time (the file is never held whole); without --schema a first
** pass infers the schema, a second one appends rows. */
static int from_jsonl(conv *c, const char *path, const char *schema, pch_vx_write_options *wo,
                      const char *chunk_by, pch_error *err)
{
    char *inferred = NULL, *l = NULL;
    size_t cap = 0, n;
    FILE *in = fopen(path, "rb");
    pch_json_parser *p = NULL;
    const pch_json_value *v;
    int rc = PCH_OK;
    size_t line_no = 0;
    if (!in) return pch_error_set_sys(err, PCH_EIO, errno, "read '%s'", path);
    if ((rc = pch_json_parser_new(&p, c->ctx, NULL, err)) < 0) goto done;
    if (!schema) {
        vx_infer *inf = NULL;
        if (vx_infer_new(&inf) < 0) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto done; }
        while (!rc && next_line(in, &l, &cap, &n)) {
            line_no++;
            if (n && !(n == 1 && l[0] == '\r')) {
                if ((rc = pch_json_parser_parse(p, l, n, &v, err)) < 0) pch_error_prefix(err, "%s line %zu", path, line_no);
                else if (vx_infer_add(inf, v) < 0) rc = pch_error_set(err, PCH_EINVAL, "%s line %zu: not a JSON object", path, line_no);
            }
        }
        if (!rc && ferror(in)) rc = pch_error_set_sys(err, PCH_EIO, errno, "read '%s'", path);
        if (!rc && vx_infer_schema(inf, &inferred) < 0) rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        vx_infer_free(inf);
        if (rc) goto done;
        schema = inferred;
        rewind(in);
    }
    if ((rc = pch_vx_dtype_parse(&c->dt, c->ctx, schema, err)) < 0) goto done;
    if (c->dt->kind != PCH_VX_STRUCT) { rc = pch_error_set(err, PCH_EINVAL, "schema must be a list of fields"); goto done; }
    if (chunk_by) {
        for (uint32_t i = 0; i < c->dt->n_fields; i++) if (strcmp(c->dt->names[i], chunk_by) == 0) c->chunk_by = i;
        if (c->chunk_by < 0) { rc = pch_error_set(err, PCH_EINVAL, "--chunk-by: no column '%s'", chunk_by); goto done; }
    }
    if ((rc = pch_vx_builder_new(&c->b, c->ctx, c->dt, err)) < 0 || (rc = pch_vx_writer_open_path(&c->w, c->ctx, c->dt, c->to, wo, err)) < 0) goto done;
    line_no = 0;
    while (!rc && next_line(in, &l, &cap, &n)) {
        line_no++;
        if (n && !(n == 1 && l[0] == '\r')) {
            if ((rc = pch_json_parser_parse(p, l, n, &v, err)) < 0) { pch_error_prefix(err, "%s line %zu", path, line_no); break; }
            if (v->kind != PCH_JSON_OBJECT) { rc = pch_error_set(err, PCH_EINVAL, "%s line %zu: not a JSON object", path, line_no); break; }
            if (c->chunk_by >= 0) {
                const char *nm = c->dt->names[c->chunk_by];
                const pch_json_value *kv = pch_json_get(v, nm, strlen(nm));
                rc = before_row(c, kv ? l + kv->span_off : "", kv ? kv->span_len : 0, err);
            } else {
                rc = before_row(c, NULL, 0, err);
            }
            if (!rc && (rc = vx_json_append(c->ctx, c->b, v, l, "", err)) < 0) pch_error_prefix(err, "%s line %zu", path, line_no);
        }
    }
    if (!rc && ferror(in)) rc = pch_error_set_sys(err, PCH_EIO, errno, "read '%s'", path);
done:
    pch_json_parser_free(p);
    fclose(in);
    free(l);
    free(inferred);
    return rc;
}

static int lance_dtype(conv *c, const pch_lance_schema *s, pch_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    int rc;
    if (!o) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n_fields; i++) {
        const char *t;
        switch (s->fields[i].type) {
        case PCH_LANCE_BOOL: t = "bool"; break;
        case PCH_LANCE_INT8: t = "i8"; break;
        case PCH_LANCE_INT16: t = "i16"; break;
        case PCH_LANCE_INT32: t = "i32"; break;
        case PCH_LANCE_INT64: t = "i64"; break;
        case PCH_LANCE_UINT8: t = "u8"; break;
        case PCH_LANCE_UINT16: t = "u16"; break;
        case PCH_LANCE_UINT32: t = "u32"; break;
        case PCH_LANCE_UINT64: t = "u64"; break;
        case PCH_LANCE_FLOAT32: t = "f32"; break;
        case PCH_LANCE_FLOAT64: t = "f64"; break;
        case PCH_LANCE_BINARY: case PCH_LANCE_LARGE_BINARY: t = "binary"; break;
        default: t = "utf8"; break;   /* utf8, large_utf8, json (as text) */
        }
        fprintf(o, "%s\"%s\":%s%s", i ? "," : "", s->fields[i].name, t, s->fields[i].nullable ? "?" : "");
    }
    fclose(o);
    rc = pch_vx_dtype_parse(&c->dt, c->ctx, buf ? buf : "", err);
    free(buf);
    return rc;
}

static int lance_cell(conv *c, pch_vx_builder *b, const pch_lance_column *col, size_t r, pch_error *err)
{
    const uint8_t *v = col->values;
    if (col->validity && !col->validity[r]) return pch_vx_builder_append_null(b, err);
    switch (col->type) {
    case PCH_LANCE_BOOL: return pch_vx_builder_append_bool(b, v[r] != 0, err);
    case PCH_LANCE_INT8: return pch_vx_builder_append_int(b, (int8_t)v[r], err);
    case PCH_LANCE_INT16: { int16_t x; memcpy(&x, v + 2 * r, 2); return pch_vx_builder_append_int(b, x, err); }
    case PCH_LANCE_INT32: { int32_t x; memcpy(&x, v + 4 * r, 4); return pch_vx_builder_append_int(b, x, err); }
    case PCH_LANCE_INT64: { int64_t x; memcpy(&x, v + 8 * r, 8); return pch_vx_builder_append_int(b, x, err); }
    case PCH_LANCE_UINT8: return pch_vx_builder_append_uint(b, v[r], err);
    case PCH_LANCE_UINT16: { uint16_t x; memcpy(&x, v + 2 * r, 2); return pch_vx_builder_append_uint(b, x, err); }
    case PCH_LANCE_UINT32: { uint32_t x; memcpy(&x, v + 4 * r, 4); return pch_vx_builder_append_uint(b, x, err); }
    case PCH_LANCE_UINT64: { uint64_t x; memcpy(&x, v + 8 * r, 8); return pch_vx_builder_append_uint(b, x, err); }
    case PCH_LANCE_FLOAT32: { float x; memcpy(&x, v + 4 * r, 4); return pch_vx_builder_append_float(b, x, err); }
    case PCH_LANCE_FLOAT64: { double x; memcpy(&x, v + 8 * r, 8); return pch_vx_builder_append_float(b, x, err); }
    case PCH_LANCE_JSON: {
        char *txt = NULL;
        size_t n = 0;
        int rc = pch_jsonb_to_json(c->ctx, col->data + col->offsets[r], (size_t)(col->offsets[r + 1] - col->offsets[r]), &txt, &n, err);
        if (rc < 0) return rc;
        rc = pch_vx_builder_append_bytes(b, txt, n, err);
        pch_free(c->ctx, txt);
        return rc;
    }
    default:
        return pch_vx_builder_append_bytes(b, col->data + col->offsets[r], (size_t)(col->offsets[r + 1] - col->offsets[r]), err);
    }
}

static int from_lance(conv *c, const char *path, pch_vx_write_options *wo, const char *chunk_by, pch_error *err)
{
    pch_lance_dataset *ds = NULL;
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *batch;
    int rc;
    if ((rc = pch_lance_dataset_open(&ds, c->ctx, path, 0, err)) < 0) return rc;
    if ((rc = lance_dtype(c, pch_lance_dataset_schema(ds), err)) < 0) goto done;
    if (chunk_by) {
        for (uint32_t i = 0; i < c->dt->n_fields; i++) if (strcmp(c->dt->names[i], chunk_by) == 0) c->chunk_by = i;
        if (c->chunk_by < 0) { rc = pch_error_set(err, PCH_EINVAL, "--chunk-by: no column '%s'", chunk_by); goto done; }
    }
    if ((rc = pch_vx_builder_new(&c->b, c->ctx, c->dt, err)) < 0 || (rc = pch_vx_writer_open_path(&c->w, c->ctx, c->dt, c->to, wo, err)) < 0 ||
        (rc = pch_lance_scanner_open(&sc, ds, NULL, 0, 8192, err)) < 0)
        goto done;
    while ((rc = pch_lance_scanner_next(sc, &batch, err)) == PCH_OK) {
        for (size_t r = 0; r < batch->n_rows && !rc; r++) {
            if (c->chunk_by >= 0) {
                const pch_lance_column *kc = &batch->columns[c->chunk_by];
                size_t w = pch_lance_type_width(kc->type);
                if (kc->validity && !kc->validity[r]) rc = before_row(c, "", 0, err);
                else if (pch_lance_type_is_var(kc->type))
                    rc = before_row(c, (const char *)kc->data + kc->offsets[r], (size_t)(kc->offsets[r + 1] - kc->offsets[r]), err);
                else rc = before_row(c, (const char *)kc->values + r * (w ? w : 1), w ? w : 1, err);
            } else {
                rc = before_row(c, NULL, 0, err);
            }
            for (size_t k = 0; k < batch->n_columns && !rc; k++) {
                rc = lance_cell(c, pch_vx_builder_child(c->b, (uint32_t)k), &batch->columns[k], r, err);
                if (rc < 0) pch_error_prefix(err, "column '%s'", c->dt->names[k]);
            }
            if (!rc) rc = pch_vx_builder_append_valid(c->b, err);
        }
        if (rc) break;
    }
    if (rc == PCH_ITEROVER) rc = PCH_OK;
done:
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(ds);
    return rc;
}

int vx_cmd_convert(pch_ctx *ctx, int argc, char **argv)
{
    const char *from = NULL, *to = NULL, *schema = NULL, *chunk_by = NULL;
    char *schema_buf = NULL;
    int report = 0, rc = VX_EXIT_FAIL;
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    conv c;
    pch_error err;
    struct stat st;
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    c.chunk_rows = 65536;
    c.chunk_by = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--from") == 0 && val) { from = val; i++; }
        else if (strcmp(a, "--to") == 0 && val) { to = val; i++; }
        else if (strcmp(a, "--schema") == 0 && val) { schema = val; i++; }
        else if (strcmp(a, "--chunk-by") == 0 && val) { chunk_by = val; i++; }
        else if (strcmp(a, "--chunk-rows") == 0 && val) { c.chunk_rows = strtoull(val, NULL, 10); i++; if (!c.chunk_rows) return vx_usage("convert: --chunk-rows must be > 0"); }
        else if (strcmp(a, "--zone-len") == 0 && val) { wo.zone_len = (uint32_t)strtoul(val, NULL, 10); i++; }
        else if (strcmp(a, "--no-compress") == 0) wo.compress = 0;
        else if (strcmp(a, "--no-dict") == 0) wo.dict_layout = 0;
        else if (strcmp(a, "--report") == 0) report = 1;
        else return vx_usage("convert: unknown option");
    }
    if (!from || !to) return vx_usage("convert: --from and --to are required");
    c.to = to;
    if (schema && schema[0] == '@') {
        size_t n;
        if (read_file(schema + 1, &schema_buf, &n) < 0) { fprintf(stderr, "pchronicle-vortex: convert: cannot read %s\n", schema + 1); return VX_EXIT_FAIL; }
        while (n && (schema_buf[n - 1] == '\n' || schema_buf[n - 1] == '\r' || schema_buf[n - 1] == ' ')) schema_buf[--n] = 0;
        schema = schema_buf;
    }
    if (stat(from, &st) < 0) { fprintf(stderr, "pchronicle-vortex: convert: %s: %s\n", from, strerror(errno)); goto done; }
    if (S_ISDIR(st.st_mode)) {
        if (schema) { rc = vx_usage("convert: --schema applies to JSONL input only"); goto done; }
        if (from_lance(&c, from, &wo, chunk_by, &err) < 0) { rc = vx_fail("convert", &err); goto done; }
    } else if (from_jsonl(&c, from, schema, &wo, chunk_by, &err) < 0) {
        rc = vx_fail("convert", &err);
        goto done;
    }
    /* the writer streams to a staging file beside --to and publishes it at finish */
    if (flush(&c, &err) < 0 || pch_vx_writer_finish(c.w, &err) < 0) {
        rc = vx_fail("convert", &err);
        goto done;
    }
    if (report) {
        /* per-lane report of the sampling compressor (RFC-0006 §8.1): ratio = logical/stored */
        uint64_t tl = 0, ts = 0, tr = 0;
        double tsec = 0;
        printf("%-32s %10s %7s %12s %12s %7s %9s  %s\n", "lane", "rows", "chunks", "logical", "stored", "ratio",
               "seconds", "encodings");
        for (size_t i = 0; i < pch_vx_writer_n_lanes(c.w); i++) {
            pch_vx_lane_report r;
            if (pch_vx_writer_lane(c.w, i, &r) < 0) continue;
            printf("%-32s %10llu %7llu %12llu %12llu %7.2f %9.3f  %s\n", r.path, (unsigned long long)r.rows,
                   (unsigned long long)r.chunks, (unsigned long long)r.logical_bytes, (unsigned long long)r.stored_bytes,
                   r.stored_bytes ? (double)r.logical_bytes / (double)r.stored_bytes : 0.0, r.encode_seconds, r.encodings);
            tl += r.logical_bytes;
            ts += r.stored_bytes;
            tsec += r.encode_seconds;
            if (r.rows > tr) tr = r.rows;
        }
        printf("%-32s %10llu %7s %12llu %12llu %7.2f %9.3f  file %llu bytes\n", "total", (unsigned long long)tr, "-",
               (unsigned long long)tl, (unsigned long long)ts, ts ? (double)tl / (double)ts : 0.0, tsec,
               (unsigned long long)pch_vx_writer_file_bytes(c.w));
    }
    rc = VX_EXIT_OK;
done:
    pch_vx_writer_free(c.w);
    pch_vx_builder_free(c.b);
    pch_vx_dtype_free(c.dt);
    free(c.last_key);
    free(schema_buf);
    return rc;
}
