/* `pchronicle lance write|dump` (docs/cli.md, docs/lance.md).
**
** write: JSON lines on stdin (the row form `dump` prints) → a new dataset version. Rows are
** gathered into column batches of --batch-rows rows (or ~64 MiB of value bytes, whichever
** comes first) and handed to pch_lance_writer_write, so memory stays bounded by one batch
** plus the writer's page buffers. Errors name the input line and the column.
** dump: the header line {"version","num_rows","schema"} and one JSON object per row. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pchronicle/json.h"
#include "pchronicle/lance.h"

static const char k_usage[] =
    "usage: pchronicle lance write DATASET [--schema SCHEMA.json] [--append | --overwrite]\n"
    "                              [--file-version 2.1|2.0] [--max-rows-per-file N]\n"
    "                              [--batch-rows N]          (rows as JSON lines on stdin)\n"
    "       pchronicle lance dump DATASET [--version N]\n";

static const char k_help[] =
    "\n"
    "write   create DATASET (default), --append rows to it or --overwrite it; each commit is\n"
    "        a new version. --schema is required unless --append (then the dataset's schema\n"
    "        is used; if given it must match). Input: one JSON object per line, keys = column\n"
    "        names; int64/uint64 as JSON integers; floats as numbers or \"NaN\", \"Infinity\",\n"
    "        \"-Infinity\"; binary as {\"base64\":\"...\"}; json columns as any JSON value;\n"
    "        null or a missing key = null (nullable columns only); unknown keys are errors.\n"
    "dump    print {\"version\",\"num_rows\",\"schema\"} then one JSON object per row\n"
    "        (--version N: time travel to version N; default latest).\n"
    "\n"
    "Exit status: 0 success, 1 error, 2 usage error.\n";

#define usage_error(...) pch_cli_usage_error(k_usage, __VA_ARGS__)

/* ------------------------------------------------------------- column builders */

typedef struct colb {
    pch_lance_type type;
    size_t width;          /* bytes per row for fixed width (bool: 1) */
    bool var;
    uint8_t *validity; size_t validity_cap;
    bool any_null;
    uint8_t *values; size_t values_cap;
    uint64_t *offsets; size_t offsets_cap;
    uint8_t *data; size_t data_len, data_cap;
} colb;

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) {
        if (nc > SIZE_MAX / 4) return false;
        nc *= 2;
    }
    if (nc > SIZE_MAX / elem) return false;
    void *np = realloc(*p, nc * elem);
    if (!np) return false;
    *p = np;
    *cap = nc;
    return true;
}

static void colb_free(colb *c)
{
    free(c->validity);
    free(c->values);
    free(c->offsets);
    free(c->data);
}

typedef struct writer_state {
    pch_ctx *ctx;
    const pch_lance_schema *schema;
    colb *cols;
    pch_lance_column *views;
    size_t n_rows;
    pch_json_parser *parser;
    signed char *seen;
} writer_state;

/* Append one row slot to every column (as null); values are then filled in. */
static bool add_row(writer_state *st)
{
    size_t r = st->n_rows;
    for (size_t i = 0; i < st->schema->n_fields; i++) {
        colb *c = &st->cols[i];
        if (!grow((void **)&c->validity, &c->validity_cap, r + 1, 1)) return false;
        c->validity[r] = 0;
        if (c->var) {
            if (!grow((void **)&c->offsets, &c->offsets_cap, r + 2, sizeof(uint64_t))) return false;
            if (r == 0) c->offsets[0] = 0;
            c->offsets[r + 1] = c->offsets[r];
        } else {
            if (!grow((void **)&c->values, &c->values_cap, (r + 1) * c->width, 1)) return false;
            memset(c->values + r * c->width, 0, c->width);
        }
    }
    st->n_rows++;
    return true;
}

static bool put_var(colb *c, size_t r, const void *p, size_t n)
{
    if (n > SIZE_MAX - c->data_len) return false;
    if (!grow((void **)&c->data, &c->data_cap, c->data_len + n, 1)) return false;
    if (n) memcpy(c->data + c->data_len, p, n);
    c->data_len += n;
    c->offsets[r + 1] = c->data_len;
    return true;
}

/* Binary values come as {"base64":"..."} (the dump's form), decoded strictly. */
static bool b64_decode(colb *c, size_t r, const char *s, size_t n)
{
    size_t k;
    if (!grow((void **)&c->data, &c->data_cap, c->data_len + n / 4 * 3, 1) ||
        pch_json_base64_decode(s, n, c->data + c->data_len, &k, NULL) != PCH_OK)
        return false;
    c->data_len += k;
    c->offsets[r + 1] = c->data_len;
    return true;
}

static int set_value(writer_state *st, size_t ci, const pch_json_value *v, const char *line,
                     size_t lineno)
{
    const pch_lance_field *f = &st->schema->fields[ci];
    colb *c = &st->cols[ci];
    size_t r = st->n_rows - 1;
    const char *why = NULL;
#define BAD(w) do { why = (w); goto bad; } while (0)

    if (v->kind == PCH_JSON_NULL) {
        if (!f->nullable) BAD("null in a column that is not nullable");
        c->any_null = true;
        return 0;
    }
    c->validity[r] = 1;
    uint8_t *slot = c->var ? NULL : c->values + r * c->width;
    switch (f->type) {
    case PCH_LANCE_BOOL:
        if (v->kind != PCH_JSON_TRUE && v->kind != PCH_JSON_FALSE) BAD("expected true or false");
        slot[0] = v->kind == PCH_JSON_TRUE;
        return 0;
    case PCH_LANCE_INT8: case PCH_LANCE_INT16: case PCH_LANCE_INT32: case PCH_LANCE_INT64: {
        if (v->kind != PCH_JSON_NUMBER || !(v->num_flags & PCH_JSON_NUM_INT)) BAD("expected an integer");
        if (!(v->num_flags & PCH_JSON_NUM_I64)) BAD("integer out of range");
        int64_t x = v->u.num.i;
        int bits = (int)c->width * 8;
        if (bits < 64 && (x < -((int64_t)1 << (bits - 1)) || x >= ((int64_t)1 << (bits - 1))))
            BAD("integer out of range");
        uint64_t u = (uint64_t)x;
        memcpy(slot, &u, c->width);     /* little-endian host (core.h) */
        return 0;
    }
    case PCH_LANCE_UINT8: case PCH_LANCE_UINT16: case PCH_LANCE_UINT32: case PCH_LANCE_UINT64: {
        if (v->kind != PCH_JSON_NUMBER || !(v->num_flags & PCH_JSON_NUM_INT)) BAD("expected an integer");
        if (!(v->num_flags & PCH_JSON_NUM_U64)) BAD("integer out of range");
        uint64_t u = v->u.num.u;
        int bits = (int)c->width * 8;
        if (bits < 64 && u >= ((uint64_t)1 << bits)) BAD("integer out of range");
        memcpy(slot, &u, c->width);
        return 0;
    }
    case PCH_LANCE_FLOAT32: case PCH_LANCE_FLOAT64: {
        double d;
        if (v->kind == PCH_JSON_NUMBER) {
            d = v->u.num.d;
            if (isinf(d)) BAD("number out of range");
        } else if (v->kind == PCH_JSON_STRING && v->u.str.len == 3 && !memcmp(v->u.str.ptr, "NaN", 3)) {
            d = NAN;
        } else if (v->kind == PCH_JSON_STRING && v->u.str.len == 8 && !memcmp(v->u.str.ptr, "Infinity", 8)) {
            d = INFINITY;
        } else if (v->kind == PCH_JSON_STRING && v->u.str.len == 9 && !memcmp(v->u.str.ptr, "-Infinity", 9)) {
            d = -INFINITY;
        } else {
            BAD("expected a number");
        }
        if (f->type == PCH_LANCE_FLOAT32) {
            float x = (float)d;
            if (isinf(x) && !isinf(d)) BAD("number out of range for float32");
            memcpy(slot, &x, 4);
        } else {
            memcpy(slot, &d, 8);
        }
        return 0;
    }
    case PCH_LANCE_UTF8: case PCH_LANCE_LARGE_UTF8:
        if (v->kind != PCH_JSON_STRING) BAD("expected a string");
        if (!put_var(c, r, v->u.str.ptr, v->u.str.len)) BAD("out of memory");
        return 0;
    case PCH_LANCE_BINARY: case PCH_LANCE_LARGE_BINARY: {
        const pch_json_value *b = v->kind == PCH_JSON_OBJECT && v->n == 1
                                      ? pch_json_get(v, "base64", 6) : NULL;
        if (!b || b->kind != PCH_JSON_STRING) BAD("expected {\"base64\": \"...\"}");
        if (!b64_decode(c, r, b->u.str.ptr, b->u.str.len)) BAD("invalid base64");
        return 0;
    }
    case PCH_LANCE_JSON: {
        uint8_t *jb = NULL;
        size_t jl = 0;
        pch_error e;
        pch_error_clear(&e);
        if (pch_jsonb_encode(st->ctx, v, line, &jb, &jl, &e) < 0) {
            pch_cli_error("stdin line %zu: column '%s': %s", lineno, f->name, e.msg);
            return -1;
        }
        bool ok = put_var(c, r, jb, jl);
        pch_free(st->ctx, jb);
        if (!ok) BAD("out of memory");
        return 0;
    }
    }
    BAD("unsupported column type");
bad:
    pch_cli_error("stdin line %zu: column '%s': %s", lineno, f->name, why);
    return -1;
#undef BAD
}

static int parse_line(writer_state *st, const char *line, size_t len, size_t lineno)
{
    const pch_json_value *root;
    pch_error e;
    pch_error_clear(&e);
    if (pch_json_parser_parse(st->parser, line, len, &root, &e) < 0) {
        pch_cli_error("stdin line %zu: %s", lineno, e.msg);
        return -1;
    }
    if (root->kind != PCH_JSON_OBJECT) {
        pch_cli_error("stdin line %zu: expected a JSON object", lineno);
        return -1;
    }
    if (!add_row(st)) {
        pch_cli_error("stdin line %zu: out of memory", lineno);
        return -1;
    }
    memset(st->seen, 0, st->schema->n_fields);
    for (uint32_t i = 0; i < root->n; i++) {
        const pch_json_member *m = &root->u.members[i];
        size_t ci;
        for (ci = 0; ci < st->schema->n_fields; ci++) {
            const char *nm = st->schema->fields[ci].name;
            if (strlen(nm) == m->key_len && memcmp(nm, m->key, m->key_len) == 0) break;
        }
        if (ci == st->schema->n_fields) {
            pch_cli_error("stdin line %zu: unknown column '%.*s'", lineno, (int)m->key_len, m->key);
            return -1;
        }
        if (st->seen[ci]) {
            pch_cli_error("stdin line %zu: column '%s' given twice", lineno, st->schema->fields[ci].name);
            return -1;
        }
        st->seen[ci] = 1;
        if (set_value(st, ci, &m->value, line, lineno) < 0) return -1;
    }
    for (size_t ci = 0; ci < st->schema->n_fields; ci++)
        if (!st->seen[ci]) {
            if (!st->schema->fields[ci].nullable) {
                pch_cli_error("stdin line %zu: column '%s' is missing (not nullable)", lineno,
                              st->schema->fields[ci].name);
                return -1;
            }
            st->cols[ci].any_null = true;
        }
    return 0;
}

static int flush_batch(writer_state *st, pch_lance_writer *w)
{
    pch_error e;
    pch_error_clear(&e);
    if (st->n_rows == 0) return 0;
    for (size_t i = 0; i < st->schema->n_fields; i++) {
        colb *c = &st->cols[i];
        pch_lance_column *v = &st->views[i];
        memset(v, 0, sizeof *v);
        v->type = c->type;
        v->n_rows = st->n_rows;
        v->validity = c->any_null ? c->validity : NULL;
        v->values = c->values;
        v->offsets = c->offsets;
        v->data = c->data ? c->data : (const uint8_t *)"";
    }
    pch_lance_batch b = { st->n_rows, st->schema->n_fields, st->views };
    if (pch_lance_writer_write(w, &b, &e) < 0) return pch_cli_fail(&e), -1;
    for (size_t i = 0; i < st->schema->n_fields; i++) {
        st->cols[i].any_null = false;
        st->cols[i].data_len = 0;
    }
    st->n_rows = 0;
    return 0;
}

static size_t batch_bytes(const writer_state *st)
{
    size_t t = 0;
    for (size_t i = 0; i < st->schema->n_fields; i++) t += st->cols[i].data_len;
    return t;
}

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, n = 0;
    char *buf;
    if (!f) {
        pch_cli_error("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (!(buf = malloc(cap))) { fclose(f); pch_cli_error("out of memory"); return -1; }
    for (;;) {
        if (n == cap) {
            char *nb = cap < ((size_t)64 << 20) ? realloc(buf, cap * 2) : NULL;
            if (!nb) { free(buf); fclose(f); pch_cli_error("%s: too large", path); return -1; }
            buf = nb;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        if (k == 0) break;
        n += k;
    }
    if (ferror(f)) { free(buf); fclose(f); pch_cli_error("cannot read %s", path); return -1; }
    fclose(f);
    *out = buf;
    *len = n;
    return 0;
}

static int cmd_write(int argc, char **argv)
{
    const char *schema_path = NULL, *file_version = NULL, *max_rows = NULL, *batch_rows_s = NULL;
    bool append = false, overwrite = false;
    const pch_cli_opt opts[] = {
        { "schema", true, &schema_path, NULL },
        { "append", false, NULL, &append },
        { "overwrite", false, NULL, &overwrite },
        { "file-version", true, &file_version, NULL },
        { "max-rows-per-file", true, &max_rows, NULL },
        { "batch-rows", true, &batch_rows_s, NULL },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int n_pos = 0, rc = PCH_CLI_EXIT_ERROR;
    pch_lance_write_options wo = PCH_LANCE_WRITE_OPTIONS_INIT;
    unsigned long long batch_rows = 8192, u;
    pch_ctx *ctx = NULL;
    pch_error e;
    pch_lance_schema *schema = NULL;
    pch_lance_writer *w = NULL;
    writer_state st;
    char *line = NULL, *text = NULL;
    size_t line_cap = 0, text_len = 0, lineno = 0;

    memset(&st, 0, sizeof st);
    pch_error_clear(&e);
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    int prc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    if (prc == PCH_CLI_HELP) { fputs(k_usage, stdout); fputs(k_help, stdout); rc = 0; goto done; }
    if (prc) { rc = prc; goto done; }
    if (n_pos != 1) { rc = usage_error("lance write: expected one DATASET argument"); goto done; }
    if (append && overwrite) { rc = usage_error("lance write: --append and --overwrite exclude each other"); goto done; }
    if (!schema_path && !append) { rc = usage_error("lance write: --schema is required"); goto done; }
    wo.mode = append ? PCH_LANCE_APPEND : overwrite ? PCH_LANCE_OVERWRITE : PCH_LANCE_CREATE;
    if (file_version) {
        if (strcmp(file_version, "2.1") == 0) wo.file_version = PCH_LANCE_FILE_2_1;
        else if (strcmp(file_version, "2.0") == 0) wo.file_version = PCH_LANCE_FILE_2_0;
        else { rc = usage_error("lance write: --file-version must be 2.0 or 2.1, not '%s'", file_version); goto done; }
    }
    if (max_rows) {
        if (!pch_cli_parse_u64(max_rows, UINT64_MAX, &u) || u == 0) {
            rc = usage_error("lance write: bad --max-rows-per-file '%s'", max_rows);
            goto done;
        }
        wo.max_rows_per_file = u;
    }
    if (batch_rows_s && (!pch_cli_parse_u64(batch_rows_s, 1u << 24, &batch_rows) || batch_rows == 0)) {
        rc = usage_error("lance write: bad --batch-rows '%s'", batch_rows_s);
        goto done;
    }
    if (pch_ctx_new(&ctx, NULL, NULL, &e) < 0) { rc = pch_cli_fail(&e); goto done; }
    if (schema_path) {
        if (read_file(schema_path, &text, &text_len) < 0) goto done;
        if (pch_lance_schema_from_json(&schema, ctx, text, text_len, &e) < 0) {
            pch_cli_error("%s: %s", schema_path, e.msg);
            goto done;
        }
    } else {
        pch_lance_dataset *ds = NULL;
        if (pch_lance_dataset_open(&ds, ctx, pos[0], 0, &e) < 0) { rc = pch_cli_fail(&e); goto done; }
        int crc = pch_lance_schema_clone(&schema, pch_lance_dataset_schema(ds), &e);
        pch_lance_dataset_free(ds);
        if (crc < 0) { rc = pch_cli_fail(&e); goto done; }
    }
    if (pch_lance_writer_open(&w, ctx, pos[0], schema, &wo, &e) < 0) { rc = pch_cli_fail(&e); goto done; }

    st.ctx = ctx;
    st.schema = schema;
    st.cols = calloc(schema->n_fields, sizeof *st.cols);
    st.views = calloc(schema->n_fields, sizeof *st.views);
    st.seen = calloc(schema->n_fields, 1);
    if (!st.cols || !st.views || !st.seen) { pch_cli_error("out of memory"); goto done; }
    for (size_t i = 0; i < schema->n_fields; i++) {
        st.cols[i].type = schema->fields[i].type;
        st.cols[i].var = pch_lance_type_is_var(schema->fields[i].type);
        st.cols[i].width = schema->fields[i].type == PCH_LANCE_BOOL ? 1 : pch_lance_type_width(schema->fields[i].type);
    }
    if (pch_json_parser_new(&st.parser, ctx, NULL, &e) < 0) { rc = pch_cli_fail(&e); goto done; }

    for (;;) {
        errno = 0;
        ssize_t n = getline(&line, &line_cap, stdin);
        if (n < 0) {
            if (ferror(stdin)) { pch_cli_error("reading standard input: %s", strerror(errno)); goto done; }
            break;
        }
        lineno++;
        size_t len = (size_t)n;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        if (len == 0) continue;
        if (parse_line(&st, line, len, lineno) < 0) goto done;
        if (st.n_rows >= batch_rows || batch_bytes(&st) >= ((size_t)64 << 20))
            if (flush_batch(&st, w) < 0) goto done;
    }
    if (flush_batch(&st, w) < 0) goto done;
    uint64_t version = 0;
    if (pch_lance_writer_commit(w, &version, &e) < 0) { rc = pch_cli_fail(&e); goto done; }
    rc = PCH_CLI_EXIT_OK;
done:
    if (st.cols)
        for (size_t i = 0; i < schema->n_fields; i++) colb_free(&st.cols[i]);
    free(st.cols);
    free(st.views);
    free(st.seen);
    pch_json_parser_free(st.parser);
    pch_lance_writer_free(w);      /* uncommitted: removes its data files */
    pch_lance_schema_free(schema);
    pch_ctx_free(ctx);
    free(line);
    free(text);
    free(pos);
    return rc;
}

static int cmd_dump(int argc, char **argv)
{
    const char *version_s = NULL;
    const pch_cli_opt opts[] = { { "version", true, &version_s, NULL } };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int n_pos = 0, rc = PCH_CLI_EXIT_ERROR, src;
    unsigned long long version = 0;
    pch_ctx *ctx = NULL;
    pch_error e;
    pch_lance_dataset *ds = NULL;
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *b;
    char *out = NULL, *hdr = NULL;
    size_t len = 0, cap = 0, hl = 0;
    static char obuf[1 << 16];

    pch_error_clear(&e);
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    int prc = pch_cli_parse(argc, argv, opts, 1, pos, &n_pos, k_usage);
    if (prc == PCH_CLI_HELP) { fputs(k_usage, stdout); fputs(k_help, stdout); rc = 0; goto done; }
    if (prc) { rc = prc; goto done; }
    if (n_pos != 1) { rc = usage_error("lance dump: expected one DATASET argument"); goto done; }
    if (version_s && (!pch_cli_parse_u64(version_s, UINT64_MAX, &version) || version == 0)) {
        rc = usage_error("lance dump: bad --version '%s'", version_s);
        goto done;
    }
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    if (pch_ctx_new(&ctx, NULL, NULL, &e) < 0 ||
        pch_lance_dataset_open(&ds, ctx, pos[0], version, &e) < 0 ||
        pch_lance_schema_to_json(pch_lance_dataset_schema(ds), &hdr, &hl, &e) < 0) {
        rc = pch_cli_fail(&e);
        goto done;
    }
    printf("{\"version\":%llu,\"num_rows\":%llu,\"schema\":%s}\n",
           (unsigned long long)pch_lance_dataset_version(ds),
           (unsigned long long)pch_lance_dataset_num_rows(ds), hdr);
    if (pch_lance_scanner_open(&sc, ds, NULL, 0, 0, &e) < 0) { rc = pch_cli_fail(&e); goto done; }
    while ((src = pch_lance_scanner_next(sc, &b, &e)) == 0) {
        for (size_t r = 0; r < b->n_rows; r++) {
            len = 0;
            if (pch_lance_row_to_json(ctx, pch_lance_dataset_schema(ds), NULL, b, r, &out, &len,
                                      &cap, &e) < 0) {
                rc = pch_cli_fail(&e);
                goto done;
            }
            fwrite(out, 1, len, stdout);
            if (putchar('\n') == EOF) { pch_cli_error("error writing to standard output"); goto done; }
        }
    }
    if (src != PCH_ITEROVER) { rc = pch_cli_fail(&e); goto done; }
    rc = PCH_CLI_EXIT_OK;
done:
    if (fflush(stdout) != 0 && rc == PCH_CLI_EXIT_OK) {
        pch_cli_error("error writing to standard output");
        rc = PCH_CLI_EXIT_ERROR;
    }
    if (ctx) pch_free(ctx, out);
    if (ctx) pch_free(ctx, hdr);
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(ds);
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}

int pch_cmd_lance(int argc, char **argv)
{
    if (argc < 2) {
        fputs(k_usage, stderr);
        return PCH_CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(k_usage, stdout);
        fputs(k_help, stdout);
        return PCH_CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "write") == 0) return cmd_write(argc - 1, argv + 1);
    if (strcmp(argv[1], "dump") == 0) return cmd_dump(argc - 1, argv + 1);
    return pch_cli_usage_error(k_usage, "lance: unknown subcommand '%s'", argv[1]);
}
