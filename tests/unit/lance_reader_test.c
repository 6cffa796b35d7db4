/* Unit tests of the Lance data file reader (src/lance/file_reader.c, decode_*.c, colbuf.c):
** every dataset in tests/data/lance is read through the internal API and each row compared
** with the official reader's dump in tests/data/lance/expected/ (values compared as JSON,
** floats within 1e-6 relative because the oracle prints f32 widened to f64), row ranges
** across page/chunk boundaries, corrupt files of tests/golden-errors/lance (one clear error
** each), limits, and the FastLanes unpacker against a reference packer. Run from the
** repository root. */
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#include "harness.h"
#include "lance/lance_read_int.h"

static pch_ctx *g_ctx;

/* First *.lance file under dir/data into out (size n). */
static int data_file(const char *dir, char *out, size_t n)
{
    char d[512];
    DIR *dh;
    struct dirent *e;
    int found = 0;
    snprintf(d, sizeof d, "%s/data", dir);
    dh = opendir(d);
    if (!dh) return 0;
    while (!found && (e = readdir(dh)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".lance") == 0) {
            snprintf(out, n, "%s/%s", d, e->d_name);
            found = 1;
        }
    }
    closedir(dh);
    return found;
}

static int json_same(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        double x = json_number_value(a), y = json_number_value(b);
        if (json_is_integer(a) && json_is_integer(b)) return json_integer_value(a) == json_integer_value(b);
        return x == y || fabs(x - y) <= fabs(x) * 1e-6;
    }
    return json_equal(a, b);
}

/* Read the dataset's data file (in two row ranges) and compare with expected/<name>.jsonl. */
static void check_dataset(const char *dir, const char *expected)
{
    char path[1024], line[1 << 16];
    pch_error err = { 0 };
    pch_lance_file *f = NULL;
    FILE *ef;
    size_t nc, c, r;
    uint64_t n, split;
    pch_lance_colbuf *cb;
    pch_lance_column *cols;
    char *out = NULL;
    size_t len = 0, cap = 0;
    int bad = 0;

    PCH_CHECK_MSG(data_file(dir, path, sizeof path), "no data file in %s", dir);
    PCH_CHECK_OK(pch_lance__file_open(&f, g_ctx, path, 0, &err), &err);
    const pch_lance_schema *s = pch_lance__file_schema(f);
    nc = pch_lance__file_num_columns(f);
    n = pch_lance__file_num_rows(f);
    split = n / 3;
    cb = calloc(nc, sizeof(*cb));
    cols = calloc(nc, sizeof(*cols));
    for (c = 0; c < nc; c++) {
        pch_lance__colbuf_init(&cb[c], g_ctx, s->fields[c].type);
        if (pch_lance__file_read(f, (uint32_t)c, s->fields[c].type, 0, split, &cb[c], &err) != 0 ||
            pch_lance__file_read(f, (uint32_t)c, s->fields[c].type, split, n - split, &cb[c], &err) != 0) {
            fprintf(stderr, "  %s column %zu: %s\n", dir, c, err.msg);
            bad++;
        }
        pch_lance__colbuf_view(&cb[c], &cols[c]);
    }
    ef = fopen(expected, "r");
    if (!bad && ef && fgets(line, sizeof line, ef)) {       /* skip the header line */
        pch_lance_batch b = { (size_t)n, nc, cols };
        for (r = 0; r < n && !bad; r++) {
            json_t *ej, *gj;
            json_error_t je;
            const char *key;
            json_t *ev;
            len = 0;
            if (!fgets(line, sizeof line, ef)) { fprintf(stderr, "  %s: expected has fewer rows\n", dir); bad++; break; }
            if (pch_lance_row_to_json(g_ctx, s, NULL, &b, r, &out, &len, &cap, &err) != 0) {
                fprintf(stderr, "  row_to_json: %s\n", err.msg);
                bad++;
                break;
            }
            ej = json_loads(line, JSON_DECODE_ANY, &je);
            gj = json_loadb(out, len, JSON_DECODE_ANY, &je);
            if (!ej || !gj) { fprintf(stderr, "  %s row %zu: unparsable JSON\n", dir, r); bad++; }
            json_object_foreach(ej, key, ev) {
                long ci = pch_lance_schema_find(s, key);
                json_t *gv = json_object_get(gj, key), *parsed = NULL;
                if (ci >= 0 && s->fields[ci].type == PCH_LANCE_JSON && json_is_string(ev))
                    parsed = json_loads(json_string_value(ev), JSON_DECODE_ANY, &je);
                if (!gv || !json_same(parsed ? parsed : ev, gv)) {
                    char *es = json_dumps(parsed ? parsed : ev, JSON_ENCODE_ANY), *gs = gv ? json_dumps(gv, JSON_ENCODE_ANY) : NULL;
                    fprintf(stderr, "  %s row %zu column %s: expected %.80s got %.80s\n", dir, r, key, es, gs ? gs : "(missing)");
                    free(es);
                    free(gs);
                    bad++;
                }
                json_decref(parsed);
            }
            json_decref(ej);
            json_decref(gj);
        }
    } else if (!bad) {
        fprintf(stderr, "  %s: cannot read %s\n", dir, expected);
        bad++;
    }
    if (ef) fclose(ef);
    pch_free(g_ctx, out);
    for (c = 0; c < nc; c++) pch_lance__colbuf_dispose(&cb[c]);
    free(cb);
    free(cols);
    pch_lance__file_free(f);
    PCH_CHECK_EQ_INT(bad, 0);
}

static void test_lance_reader__fixtures(void)
{
    static const char *const names[] = { "events", "plain", "events-v2_0", "plain-v2_0",
                                         "small-v2_1", "small-v2_0" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char dir[256], exp[256];
        snprintf(dir, sizeof dir, "tests/data/lance/%s.lance", names[i]);
        snprintf(exp, sizeof exp, "tests/data/lance/expected/%s.jsonl", names[i]);
        check_dataset(dir, exp);
        if (pch_t_cur_failed) return;
    }
}

static void test_lance_reader__minimal(void)
{
    static const char *const modes[] = { "mb", "fz", "v20" };
    static const char *const specs[] = { "events", "plain" };
    for (size_t s = 0; s < 2; s++)
        for (size_t m = 0; m < 3; m++) {
            char dir[256], exp[256];
            snprintf(dir, sizeof dir, "tests/data/lance/minimal/%s-%s.lance", specs[s], modes[m]);
            snprintf(exp, sizeof exp, "tests/data/lance/expected/%s.jsonl", specs[s]);
            check_dataset(dir, exp);
            if (pch_t_cur_failed) return;
        }
}

static void test_lance_reader__meta(void)
{
    char path[512];
    pch_error err = { 0 };
    pch_lance_file *f = NULL;
    PCH_CHECK(data_file("tests/data/lance/plain.lance", path, sizeof path));
    PCH_CHECK_OK(pch_lance__file_open(&f, g_ctx, path, 637, &err), &err);
    PCH_CHECK_EQ_STR(pch_lance__file_version(f), "2.1");
    PCH_CHECK_EQ_INT(pch_lance__file_num_rows(f), 4);
    PCH_CHECK_EQ_INT(pch_lance__file_num_columns(f), 2);
    PCH_CHECK_EQ_STR(pch_lance__file_schema(f)->fields[1].name, "name");
    {   /* rows 1..3 of 'name': null, "", "δέλτα" */
        pch_lance_colbuf cb;
        pch_lance_column col;
        int rc;
        pch_lance__colbuf_init(&cb, g_ctx, PCH_LANCE_UTF8);
        rc = pch_lance__file_read(f, 1, PCH_LANCE_UTF8, 1, 3, &cb, &err);
        pch_lance__colbuf_view(&cb, &col);
        if (rc == 0) {
            PCH_CHECK_EQ_INT(col.n_rows, 3);
            PCH_CHECK(col.validity && !col.validity[0] && col.validity[1] && col.validity[2]);
            PCH_CHECK_EQ_INT(col.offsets[2] - col.offsets[1], 0);
            PCH_CHECK_EQ_INT(col.offsets[3] - col.offsets[2], 10);
        }
        /* wrong type and range past the end are caller errors */
        PCH_CHECK_EQ_INT(pch_lance__file_read(f, 1, PCH_LANCE_BINARY, 0, 1, &cb, &err), PCH_EINVAL);
        PCH_CHECK_EQ_INT(pch_lance__file_read(f, 1, PCH_LANCE_UTF8, 3, 2, &cb, &err), PCH_EINVAL);
        PCH_CHECK_EQ_INT(cb.n_rows, 3);
        pch_lance__colbuf_dispose(&cb);
        PCH_CHECK_EQ_INT(rc, 0);
    }
    pch_lance__file_free(f);
    f = NULL;
    PCH_CHECK_EQ_INT(pch_lance__file_open(&f, g_ctx, path, 638, &err), PCH_ECORRUPT);
    PCH_CHECK(f == NULL);
    PCH_CHECK_EQ_INT(pch_lance__file_open(&f, g_ctx, "tests/data/lance/nope.lance", 0, &err), PCH_ENOTFOUND);
}

static void test_lance_reader__limits(void)
{
    char path[512];
    pch_error err = { 0 };
    pch_lance_file *f = NULL;
    pch_ctx *ctx = NULL;
    pch_limits lim = { 0 };
    int rc;
    PCH_CHECK(data_file("tests/data/lance/small-v2_1.lance", path, sizeof path));
    lim.max_columns = 4;
    PCH_CHECK_OK(pch_ctx_new(&ctx, NULL, &lim, &err), &err);
    rc = pch_lance__file_open(&f, ctx, path, 0, &err);
    pch_ctx_free(ctx);
    PCH_CHECK_EQ_INT(rc, PCH_ELIMIT);
    PCH_CHECK(strstr(err.msg, "max_columns") != NULL);
    lim.max_columns = 0;
    lim.max_page_bytes = 4096;
    PCH_CHECK_OK(pch_ctx_new(&ctx, NULL, &lim, &err), &err);
    rc = pch_lance__file_open(&f, ctx, path, 0, &err);
    pch_ctx_free(ctx);
    PCH_CHECK_EQ_INT(rc, PCH_ELIMIT);
    PCH_CHECK(strstr(err.msg, "max_page_bytes") != NULL);
}

/* Every tests/golden-errors/lance/X.lance fails (at open or on reading every column) with the
** code and message substring of X.expect ("corrupt\nsubstring\n"). */
static void test_lance_reader__golden_errors(void)
{
    const char *dir = "tests/golden-errors/lance";
    DIR *dh = opendir(dir);
    struct dirent *e;
    int n = 0, bad = 0;
    PCH_CHECK(dh != NULL);
    while ((e = readdir(dh)) != NULL) {
        char p[512], x[512], code[64] = "", sub[256] = "";
        size_t l = strlen(e->d_name);
        FILE *xf;
        pch_error err = { 0 };
        pch_lance_file *f = NULL;
        int rc;
        if (l < 7 || strcmp(e->d_name + l - 6, ".lance") != 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        snprintf(x, sizeof x, "%s/%.*s.expect", dir, (int)(l - 6), e->d_name);
        xf = fopen(x, "r");
        if (!xf || !fgets(code, sizeof code, xf) || !fgets(sub, sizeof sub, xf)) {
            fprintf(stderr, "  %s: missing expectation\n", x);
            bad++;
            if (xf) fclose(xf);
            continue;
        }
        fclose(xf);
        code[strcspn(code, "\n")] = 0;
        sub[strcspn(sub, "\n")] = 0;
        rc = pch_lance__file_open(&f, g_ctx, p, 0, &err);
        if (rc == 0) {
            const pch_lance_schema *s = pch_lance__file_schema(f);
            for (uint32_t c = 0; c < pch_lance__file_num_columns(f) && rc == 0; c++) {
                pch_lance_colbuf cb;
                pch_lance__colbuf_init(&cb, g_ctx, s->fields[c].type);
                rc = pch_lance__file_read(f, c, s->fields[c].type, 0, pch_lance__file_num_rows(f), &cb, &err);
                pch_lance__colbuf_dispose(&cb);
            }
            pch_lance__file_free(f);
        }
        if (rc == 0 || strcmp(pch_status_name(rc), code) != 0 || !strstr(err.msg, sub) || err.code != rc) {
            fprintf(stderr, "  %s: got %s '%s', want %s '%s'\n", e->d_name, rc ? pch_status_name(rc) : "ok",
                    err.msg, code, sub);
            bad++;
        }
        n++;
    }
    closedir(dh);
    PCH_CHECK(n >= 10);
    PCH_CHECK_EQ_INT(bad, 0);
}

/* Reference FastLanes packer (lance bitpacking crate `pack`), then unpack and compare. */
static void test_lance_reader__fastlanes(void)
{
    static const unsigned order[8] = { 0, 4, 2, 6, 1, 5, 3, 7 };
    static const unsigned ts[4] = { 8, 16, 32, 64 };
    uint64_t *in = malloc(1024 * 8), *got = malloc(1024 * 8);
    uint8_t *packed = malloc(1024 * 8);
    int bad = 0;
    for (unsigned ti = 0; ti < 4; ti++) {
        unsigned t = ts[ti], lanes = 1024 / t;
        for (unsigned w = 0; w <= t; w++) {
            uint64_t mask = w == 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
            memset(packed, 0, 1024 * 8);
            for (unsigned i = 0; i < 1024; i++) in[i] = ((uint64_t)i * 2654435761u + w * 977) & mask;
            for (unsigned lane = 0; lane < lanes; lane++)
                for (unsigned row = 0; row < t; row++) {
                    uint64_t v = in[order[row / 8] * 16 + (row % 8) * 128 + lane];
                    for (unsigned b = 0; b < w; b++) {
                        unsigned bit = row * w + b, word = bit / t, sh = bit % t;
                        size_t byte = ((size_t)lanes * word + lane) * (t / 8) + sh / 8;
                        if ((v >> b) & 1) packed[byte] |= (uint8_t)(1u << (sh % 8));
                    }
                }
            pch_lance__fl_unpack(packed, t, w, got);
            if (memcmp(in, got, 1024 * 8) != 0) { fprintf(stderr, "  T=%u W=%u mismatch\n", t, w); bad++; }
        }
    }
    free(in);
    free(got);
    free(packed);
    PCH_CHECK_EQ_INT(bad, 0);
}

static void test_lance_reader__colbuf(void)
{
    pch_lance_colbuf cb, dst;
    pch_lance_column col;
    int64_t v = -5;
    pch_lance__colbuf_init(&cb, g_ctx, PCH_LANCE_INT64);
    PCH_CHECK_OK(pch_lance__colbuf_append_fixed(&cb, &v, true), NULL);
    PCH_CHECK_OK(pch_lance__colbuf_append_null(&cb), NULL);
    PCH_CHECK_OK(pch_lance__colbuf_append_fixed(&cb, &v, true), NULL);
    pch_lance__colbuf_view(&cb, &col);
    PCH_CHECK_EQ_INT(col.n_rows, 3);
    PCH_CHECK(col.validity && col.validity[0] == 1 && col.validity[1] == 0 && col.validity[2] == 1);
    PCH_CHECK_EQ_INT((int64_t)pch_load_le64(col.values + 16), -5);
    PCH_CHECK_EQ_INT(pch_lance__colbuf_append_var(&cb, "x", 1, true), PCH_EINVAL);
    pch_lance__colbuf_init(&dst, g_ctx, PCH_LANCE_INT64);
    PCH_CHECK_OK(pch_lance__colbuf_append_rows(&dst, &cb, 1, 2), NULL);
    PCH_CHECK_EQ_INT(dst.n_rows, 2);
    pch_lance__colbuf_reset(&cb);
    PCH_CHECK_EQ_INT(cb.n_rows, 0);
    pch_lance__colbuf_dispose(&cb);
    pch_lance__colbuf_dispose(&dst);
    pch_lance__colbuf_init(&cb, g_ctx, PCH_LANCE_UTF8);
    pch_lance__colbuf_view(&cb, &col);
    PCH_CHECK(col.offsets && col.offsets[0] == 0);
    PCH_CHECK_OK(pch_lance__colbuf_append_var(&cb, "ab", 2, true), NULL);
    PCH_CHECK_OK(pch_lance__colbuf_append_var(&cb, "zz", 2, false), NULL);
    pch_lance__colbuf_view(&cb, &col);
    PCH_CHECK(col.offsets[1] == 2 && col.offsets[2] == 2 && col.validity && !col.validity[1]);
    /* bulk append_rows: offsets rebased, validity materialised on either side */
    PCH_CHECK_OK(pch_lance__colbuf_append_var(&cb, "cde", 3, true), NULL);
    pch_lance__colbuf_init(&dst, g_ctx, PCH_LANCE_UTF8);
    PCH_CHECK_OK(pch_lance__colbuf_append_var(&dst, "Q", 1, true), NULL);
    PCH_CHECK_OK(pch_lance__colbuf_append_rows(&dst, &cb, 0, 3), NULL);   /* ab, null, cde */
    PCH_CHECK_OK(pch_lance__colbuf_append_rows(&dst, &cb, 2, 1), NULL);   /* cde */
    PCH_CHECK_OK(pch_lance__colbuf_append_rows(&dst, &cb, 1, 0), NULL);
    PCH_CHECK_EQ_INT(pch_lance__colbuf_append_rows(&dst, &cb, 2, 2), PCH_EINVAL);
    pch_lance__colbuf_view(&dst, &col);
    PCH_CHECK_EQ_INT(col.n_rows, 5);
    PCH_CHECK(col.offsets[0] == 0 && col.offsets[1] == 1 && col.offsets[2] == 3 &&
              col.offsets[3] == 3 && col.offsets[4] == 6 && col.offsets[5] == 9);
    PCH_CHECK(memcmp(col.data, "Qabcdecde", 9) == 0);
    PCH_CHECK(col.validity && col.validity[0] && col.validity[1] && !col.validity[2] &&
              col.validity[3] && col.validity[4]);
    pch_lance__colbuf_dispose(&dst);
    /* all-valid source into a destination that already has nulls */
    pch_lance__colbuf_init(&dst, g_ctx, PCH_LANCE_UTF8);
    PCH_CHECK_OK(pch_lance__colbuf_append_null(&dst), NULL);
    pch_lance__colbuf_reset(&cb);
    PCH_CHECK_OK(pch_lance__colbuf_append_var(&cb, "xy", 2, true), NULL);
    PCH_CHECK_OK(pch_lance__colbuf_append_rows(&dst, &cb, 0, 1), NULL);
    pch_lance__colbuf_view(&dst, &col);
    PCH_CHECK(col.n_rows == 2 && col.validity && !col.validity[0] && col.validity[1]);
    PCH_CHECK(col.offsets[1] == 0 && col.offsets[2] == 2 && memcmp(col.data, "xy", 2) == 0);
    pch_lance__colbuf_dispose(&dst);
    pch_lance__colbuf_dispose(&cb);
}

/* Encoded bytes per column: the page buffer sizes, which add up to less than the file. */
static void test_lance_reader__column_bytes(void)
{
    pch_lance_dataset *ds = NULL;
    pch_error e;
    uint64_t sum = 0, b;
    char df[512];
    struct stat st;
    const char *dir = "tests/data/lance/minimal/events-mb.lance";
    PCH_CHECK_OK(pch_lance_dataset_open(&ds, g_ctx, dir, 0, &e), &e);
    if (!ds) return;
    for (size_t i = 0; i < pch_lance_dataset_schema(ds)->n_fields; i++) {
        PCH_CHECK_OK(pch_lance_dataset_column_bytes(ds, i, &b, &e), &e);
        PCH_CHECK(b > 0);
        sum += b;
    }
    PCH_CHECK_EQ_INT(pch_lance_dataset_column_bytes(ds, 1000, &b, &e), PCH_EINVAL);
    PCH_CHECK(data_file(dir, df, sizeof df));
    PCH_CHECK(stat(df, &st) == 0 && sum < (uint64_t)st.st_size);
    pch_lance_dataset_free(ds);
}

/* A page-dictionary page (our writer's MiniBlockLayout with a General{zstd}{Variable}
** dictionary; tests/data/lance/pages/page-dictionary-nulls.bin, framed as the page fuzz
** targets read it: u8 type | u8 n_bufs | u32 n_rows | u32 enc_len | MiniBlockLayout |
** n_bufs x (u32 len | bytes)): 100 utf8 rows, every 9th null, 15 distinct values of
** 260-262 bytes. It decodes to exactly those rows; a dictionary that claims fewer items
** than the indices use, or a damaged dictionary block, is one clear error. */
static void test_lance_reader__page_dictionary(void)
{
    pch_buf file, enc;
    pch_error err;
    pch_rd r;
    uint8_t type, nb;
    uint32_t n_rows, enc_len;
    const uint8_t *e;
    pch_bytes bufs[3];
    pch_lance_page_in in;
    pch_lance_colbuf out;
    size_t items_at = SIZE_MAX;

    pch_buf_init(&file, g_ctx);
    pch_buf_init(&enc, g_ctx);
    PCH_CHECK_OK(pch_file_read_all(&file, "tests/data/lance/pages/page-dictionary-nulls.bin", 1 << 20, &err), &err);
    r = pch_rd_make(file.data, file.len);
    PCH_CHECK(pch_rd_u8(&r, &type) && pch_rd_u8(&r, &nb) && nb == 3 && pch_rd_le32(&r, &n_rows) &&
              pch_rd_le32(&r, &enc_len) && pch_rd_bytes(&r, enc_len, &e));
    for (size_t i = 0; i < 3; i++) {
        uint32_t l;
        PCH_CHECK(pch_rd_le32(&r, &l) && pch_rd_bytes(&r, l, &bufs[i].ptr));
        bufs[i].len = l;
    }
    PCH_CHECK_EQ_INT(type, PCH_LANCE_UTF8);
    PCH_CHECK_EQ_INT(n_rows, 100);
    /* PageLayout{mini_block_layout (1): enc} */
    PCH_CHECK_OK(pch_pb_put_bytes(&enc, 1, e, enc_len), &err);
    memset(&in, 0, sizeof in);
    in.ctx = g_ctx; in.bufs = bufs; in.n_bufs = 3; in.n_rows = n_rows;
    in.enc = enc.data; in.enc_len = enc.len; in.type = PCH_LANCE_UTF8; in.where = "page";
    pch_lance__colbuf_init(&out, g_ctx, PCH_LANCE_UTF8);
    PCH_CHECK_OK(pch_lance__decode_page_v21(&out, &in, &err), &err);
    PCH_CHECK_EQ_INT(out.n_rows, 100);
    for (size_t i = 0; i < 100; i++) {
        bool valid = !out.has_nulls || out.validity.data[i];
        uint64_t a = pch_load_le64(out.offsets.data + 8 * i), b = pch_load_le64(out.offsets.data + 8 * i + 8);
        PCH_CHECK_EQ_INT(valid, i % 9 != 4);
        if (valid) {
            PCH_CHECK_EQ_INT(b - a, 260 + i % 3);
            PCH_CHECK(out.data.data[a] == 'a' + i % 5 && out.data.data[b - 1] == 'a' + i % 5);
        } else {
            PCH_CHECK_EQ_INT(b - a, 0);
        }
    }
    pch_lance__colbuf_dispose(&out);
    /* num_dictionary_items (field 5, varint 15 = 0x28 0x0f) lowered to 2 */
    for (size_t i = 0; i + 1 < enc.len; i++)
        if (enc.data[i] == 0x28 && enc.data[i + 1] == 15) items_at = i + 1;
    PCH_CHECK(items_at != SIZE_MAX);
    enc.data[items_at] = 2;
    pch_lance__colbuf_init(&out, g_ctx, PCH_LANCE_UTF8);
    PCH_CHECK_EQ_INT(pch_lance__decode_page_v21(&out, &in, &err), PCH_ECORRUPT);
    PCH_CHECK_MSG(strstr(err.msg, "dictionary") != NULL, "%s", err.msg);
    pch_lance__colbuf_dispose(&out);
    enc.data[items_at] = 15;
    /* the dictionary block cut short: a zstd error, not a crash */
    bufs[2].len -= 9;
    pch_lance__colbuf_init(&out, g_ctx, PCH_LANCE_UTF8);
    PCH_CHECK_EQ_INT(pch_lance__decode_page_v21(&out, &in, &err), PCH_ECORRUPT);
    pch_lance__colbuf_dispose(&out);
    pch_buf_dispose(&enc);
    pch_buf_dispose(&file);
}

int main(int argc, char **argv)
{
    pch_error err = { 0 };
    pch_test_init(argc, argv, "lance_reader_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, &err) != 0) return 1;
    PCH_RUN(test_lance_reader__colbuf);
    PCH_RUN(test_lance_reader__column_bytes);
    PCH_RUN(test_lance_reader__fastlanes);
    PCH_RUN(test_lance_reader__meta);
    PCH_RUN(test_lance_reader__fixtures);
    PCH_RUN(test_lance_reader__minimal);
    PCH_RUN(test_lance_reader__limits);
    PCH_RUN(test_lance_reader__golden_errors);
    PCH_RUN(test_lance_reader__page_dictionary);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
