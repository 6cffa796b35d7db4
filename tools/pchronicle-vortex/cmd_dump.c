/* pchronicle-vortex dump FILE [--columns a,b.c] [--rows A..B]: the JSON-lines row format of
** `pchronicle lance dump`: a header {"num_rows":N,"schema":{"fields":[{"name","type",
** "nullable","metadata":{}}...],"metadata":{}}} (the shape of the Lance header; Vortex has no
** field metadata, and there is no dataset "version" since a Vortex file has no versions),
** then one object per row (int64/uint64 exact, floats shortest round-trip, binary
** {"base64":...}, null as null). Rows are read in slices so memory stays bounded. */
#include <inttypes.h>
#include <stdlib.h>

#include "vx_cli.h"

#define DUMP_SLICE 65536

static const char *type_name(const pch_vx_dtype *d, char **owned)
{
    static const char *const prim[] = { "uint8", "uint16", "uint32", "uint64", "int8", "int16",
                                        "int32", "int64", "float16", "float32", "float64" };
    *owned = NULL;
    switch (d->kind) {
    case PCH_VX_PRIMITIVE: return d->ptype <= PCH_VX_F64 ? prim[d->ptype] : "?";
    case PCH_VX_BOOL: return "bool";
    case PCH_VX_UTF8: return "utf8";
    case PCH_VX_BINARY: return "binary";
    case PCH_VX_NULL: return "null";
    default: {
        /* nested and parametric types in the vortex schema syntax, without the '?' */
        pch_error e;
        if (pch_vx_dtype_format(owned, d, &e) < 0) return "?";
        size_t n = strlen(*owned);
        if (n && (*owned)[n - 1] == '?' && d->kind != PCH_VX_EXTENSION) (*owned)[n - 1] = 0;
        return *owned;
    }
    }
}

void vx_put_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

static int parse_rows(const char *s, uint64_t *a, uint64_t *b)
{
    char *end;
    const char *dots = strstr(s, "..");
    if (!dots) return -1;
    *a = strtoull(s, &end, 10);
    if (end != dots) return -1;
    if (!dots[2]) { *b = UINT64_MAX; return 0; }
    *b = strtoull(dots + 2, &end, 10);
    return *end || *b < *a ? -1 : 0;
}

int vx_cmd_dump(pch_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL, *columns = NULL, *rows = NULL;
    char *colbuf = NULL;
    const char **cols = NULL;
    size_t ncols = 0;
    uint64_t ra = 0, rb = UINT64_MAX, total;
    pch_vx_file *f = NULL;
    pch_error err;
    int rc = VX_EXIT_FAIL, header = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--columns") == 0 && i + 1 < argc) columns = argv[++i];
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) rows = argv[++i];
        else if (argv[i][0] == '-') return vx_usage("dump: unknown option");
        else if (!path) path = argv[i];
        else return vx_usage("dump: one file");
    }
    if (!path) return vx_usage("dump: FILE required");
    if (rows && parse_rows(rows, &ra, &rb) < 0) return vx_usage("dump: --rows A..B (A <= B)");
    if (columns) {
        size_t n = strlen(columns);
        colbuf = malloc(n + 1);
        cols = calloc(n + 1, sizeof(char *));
        if (!colbuf || !cols) goto done;
        memcpy(colbuf, columns, n + 1);
        for (char *p = colbuf; p;) {
            char *c = strchr(p, ',');
            if (c) *c++ = 0;
            if (*p) cols[ncols++] = p;
            p = c;
        }
    }
    if (pch_vx_file_open(&f, ctx, path, &err) < 0) { rc = vx_fail("dump", &err); goto done; }
    total = pch_vx_file_row_count(f);
    if (rb > total) rb = total;
    if (ra > rb) ra = rb;
    for (uint64_t at = ra; at < rb || !header; at += DUMP_SLICE) {
        pch_vx_scan_options o = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *a = NULL;
        pch_vx_dtype *dt = NULL;
        o.columns = cols;
        o.n_columns = ncols;
        o.row_begin = at;
        o.row_end = at + DUMP_SLICE < rb ? at + DUMP_SLICE : rb;
        if (o.row_begin == o.row_end) {
            /* empty range: still need the projected schema for the header */
            o.selection = &at;
            o.n_selection = 0;
        }
        if (pch_vx_file_scan(f, &o, &a, &dt, &err) < 0) { rc = vx_fail("dump", &err); goto done; }
        if (!header) {
            printf("{\"num_rows\":%" PRIu64 ",\"schema\":{\"fields\":[", rb - ra);
            for (uint32_t i = 0; i < dt->n_fields; i++) {
                char *owned;
                const char *tn = type_name(dt->fields[i], &owned);
                printf("%s{\"name\":", i ? "," : "");
                vx_put_json_string(stdout, dt->names[i]);
                printf(",\"type\":");
                vx_put_json_string(stdout, tn);
                printf(",\"nullable\":%s,\"metadata\":{}}", dt->fields[i]->nullable ? "true" : "false");
                pch_free(ctx, owned);
            }
            printf("],\"metadata\":{}}}\n");
            header = 1;
        }
        for (uint64_t r = 0; r < a->len; r++) {
            pch_vx_text t = { NULL, 0, 0, ctx, 0 };
            if (pch_vx_array_row_json(&t, a, r) < 0) {
                pch_vx_text_dispose(&t);
                pch_vx_array_free(a);
                pch_vx_dtype_free(dt);
                fprintf(stderr, "pchronicle-vortex: dump: out of memory\n");
                goto done;
            }
            fwrite(t.ptr, 1, t.len, stdout);
            putchar('\n');
            pch_vx_text_dispose(&t);
        }
        pch_vx_array_free(a);
        pch_vx_dtype_free(dt);
        if (at >= rb) break;
    }
    rc = fflush(stdout) == 0 ? VX_EXIT_OK : VX_EXIT_FAIL;
done:
    pch_vx_file_free(f);
    free(colbuf);
    free(cols);
    return rc;
}
