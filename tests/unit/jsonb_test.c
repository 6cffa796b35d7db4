/* Unit tests of the Lance JSONB codec (src/json/jsonb.c; lance-format.md §3.2, Appendix C):
** the exact Appendix C bytes, narrowest integer widths, float rendering as Lance prints it
** (tests/data/json/lance_events.jsonl is fixtures/lance/expected/events.jsonl, what official
** Lance returned for the JSON columns), canonical round trips over the corpus, and corrupt
** inputs (every truncation, bad types, lengths, counts, tags, UTF-8, depth). */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>

#include "harness.h"
#include "json/json_int.h"   /* module test: uses pch_json__utf8_check */

static pch_error err;
static pch_json_parser *P;

static int encode_text(const char *txt, pch_buf *out)
{
    const pch_json_value *v;
    int rc = pch_json_parser_parse(P, txt, strlen(txt), &v, &err);
    if (rc != PCH_OK) return rc;
    return pch_jsonb__encode(out, v, txt, &err);
}

static int hexeq(const pch_buf *b, const char *hex)
{
    uint8_t want[512];
    size_t n = 0;
    for (const char *h = hex; *h;) {
        if (*h == ' ') { h++; continue; }
        unsigned x;
        if (sscanf(h, "%2x", &x) != 1) return 0;
        want[n++] = (uint8_t)x;
        h += 2;
    }
    if (n != b->len || memcmp(want, b->data, n) != 0) {
        fprintf(stderr, "  got:");
        for (size_t k = 0; k < b->len; k++) fprintf(stderr, " %02x", b->data[k]);
        fprintf(stderr, "\n  want: %s\n", hex);
        return 0;
    }
    return 1;
}

static int render(const uint8_t *p, size_t n, pch_buf *out)
{
    pch_buf_clear(out);
    return pch_jsonb__to_json(out, p, n, &err);
}

/* ---------------------------------------------------------------- Appendix C */

static void test_jsonb__appendix_c(void)
{
    pch_buf b, t;
    pch_buf_init(&b, NULL);
    pch_buf_init(&t, NULL);

    /* Row 2: [1,"two",3.5,null,[],{}] — 50 bytes as stored by lance. */
    PCH_CHECK_OK(encode_text("[1,\"two\",3.5,null,[],{}]", &b), &err);
    PCH_CHECK(b.len == 50);
    PCH_CHECK(hexeq(&b, "80000006 20000002 10000003 20000009 00000000 50000004 50000004"
                        " 5001 74776f 60400c000000000000 80000000 40000000"));
    PCH_CHECK_OK(render(b.data, b.len, &t), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "[1,\"two\",3.5,null,[],{}]");

    /* Row 3: a top-level scalar string. */
    pch_buf_clear(&b);
    PCH_CHECK_OK(encode_text("\"scalar string\"", &b), &err);
    PCH_CHECK(hexeq(&b, "20000000 1000000d 7363616c617220737472696e67"));
    PCH_CHECK_OK(render(b.data, b.len, &t), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "\"scalar string\"");

    /* Row 1: keys re-ordered, narrowest integer widths. */
    pch_buf_clear(&b);
    PCH_CHECK_OK(encode_text("{\"b\":300,\"a\":70000,\"c\":5000000000,\"d\":-129,\"e\":0,\"f\":\"\xc3\xbcn\xc3\xaf\"}", &b), &err);
    PCH_CHECK(hexeq(&b, "40000006 10000001 10000001 10000001 10000001 10000001 10000001"
                        " 20000005 20000003 20000009 20000003 20000001 10000005"
                        " 61 62 63 64 65 66"
                        " 5000011170 50012c 50000000012a05f200 40ff7f 00 c3bc6ec3af"));
    PCH_CHECK_OK(render(b.data, b.len, &t), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "{\"a\":70000,\"b\":300,\"c\":5000000000,\"d\":-129,\"e\":0,\"f\":\"\xc3\xbcn\xc3\xaf\"}");
    pch_buf_dispose(&b);
    pch_buf_dispose(&t);
}

static void test_jsonb__numbers(void)
{
    static const struct { const char *in, *hex, *out; } cases[] = {
        { "0", "20000000 20000001 00", "0" },
        { "-0", "20000000 20000001 00", "0" },
        { "255", "20000000 20000002 50ff", "255" },
        { "256", "20000000 20000003 500100", "256" },
        { "65536", "20000000 20000005 5000010000", "65536" },
        { "4294967296", "20000000 20000009 500000000100000000", "4294967296" },
        { "18446744073709551615", "20000000 20000009 50ffffffffffffffff", "18446744073709551615" },
        { "-1", "20000000 20000002 40ff", "-1" },
        { "-128", "20000000 20000002 4080", "-128" },
        { "-129", "20000000 20000003 40ff7f", "-129" },
        { "-32769", "20000000 20000005 40ffff7fff", "-32769" },
        { "-2147483649", "20000000 20000009 40ffffffff7fffffff", "-2147483649" },
        { "-9223372036854775808", "20000000 20000009 408000000000000000", "-9223372036854775808" },
        { "1.0", "20000000 20000009 603ff0000000000000", "1.0" },           /* stays a float */
        { "3.25", "20000000 20000009 60400a000000000000", "3.25" },
        { "-0.0", "20000000 20000009 608000000000000000", "-0.0" },
        { "1e2", "20000000 20000009 604059000000000000", "100.0" },
        { "18446744073709551616", "20000000 20000009 6043f0000000000000", "1.8446744073709552e19" },
        { "-9223372036854775809", "20000000 20000009 60c3e0000000000000", "-9.223372036854776e18" },
        { "1e400", "20000000 20000001 20", "Infinity" },
        { "-1e400", "20000000 20000001 30", "-Infinity" },
        { "0.1", "20000000 20000009 603fb999999999999a", "0.1" },
        { "true", "20000000 40000000", "true" },
        { "false", "20000000 30000000", "false" },
        { "null", "20000000 00000000", "null" },
        { "\"\"", "20000000 10000000", "\"\"" },
    };
    pch_buf b, t;
    pch_buf_init(&b, NULL);
    pch_buf_init(&t, NULL);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pch_buf_clear(&b);
        PCH_CHECK_OK(encode_text(cases[k].in, &b), &err);
        PCH_CHECK_MSG(hexeq(&b, cases[k].hex), "%s", cases[k].in);
        PCH_CHECK_OK(render(b.data, b.len, &t), &err);
        PCH_CHECK_EQ_STR((const char *)t.data, cases[k].out);
        PCH_CHECK_OK(pch_jsonb__validate(b.data, b.len, &err), &err);
    }
    pch_buf_dispose(&b);
    pch_buf_dispose(&t);
}

static void test_jsonb__strings_and_keys(void)
{
    pch_buf b, t;
    pch_buf_init(&b, NULL);
    pch_buf_init(&t, NULL);
    /* Escapes decode to raw bytes and render back escaped (serde_json style). */
    PCH_CHECK_OK(encode_text("[\"a\\\"b\\\\c\\n\\u0000\\u001f\\/\\u00e9\"]", &b), &err);
    PCH_CHECK_OK(render(b.data, b.len, &t), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "[\"a\\\"b\\\\c\\n\\u0000\\u001f/\xc3\xa9\"]");
    /* Bytewise key order: "B" < "a" < "aa" < "b" < "é"; the empty key first. */
    pch_buf_clear(&b);
    PCH_CHECK_OK(encode_text("{\"b\":1,\"\xc3\xa9\":2,\"aa\":3,\"a\":4,\"B\":5,\"\":6}", &b), &err);
    PCH_CHECK_OK(render(b.data, b.len, &t), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "{\"\":6,\"B\":5,\"a\":4,\"aa\":3,\"b\":1,\"\xc3\xa9\":2}");
    /* Nested containers sort independently. */
    pch_buf_clear(&b);
    PCH_CHECK_OK(encode_text("{\"z\":{\"y\":[{\"b\":1,\"a\":2}],\"x\":null},\"a\":[]}", &b), &err);
    PCH_CHECK_OK(render(b.data, b.len, &t), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "{\"a\":[],\"z\":{\"x\":null,\"y\":[{\"a\":2,\"b\":1}]}}");
    /* Duplicate keys are rejected, nothing appended. */
    size_t before = b.len;
    PCH_CHECK(encode_text("{\"a\":1,\"b\":2,\"a\":3}", &b) == PCH_EINVAL);
    PCH_CHECK(strstr(err.msg, "duplicate") != NULL);
    PCH_CHECK(encode_text("[{\"k\\u0000\":1,\"k\\u0000\":1}]", &b) == PCH_EINVAL);
    PCH_CHECK(b.len == before);
    /* Keys differing only after a NUL are distinct. */
    PCH_CHECK_OK(encode_text("{\"k\\u0000a\":1,\"k\\u0000\":2}", &b), &err);
    pch_buf_dispose(&b);
    pch_buf_dispose(&t);
}

/* The JSON columns official Lance printed (fixtures/lance/expected/events.jsonl): our
** encode → decode gives the same text, from the canonical text and from a reordered one. */
static void test_jsonb__lance_fixture(void)
{
    pch_buf file, b, t;
    pch_json_parser *lp;
    int rows = 0;
    pch_buf_init(&file, NULL);
    pch_buf_init(&b, NULL);
    pch_buf_init(&t, NULL);
    PCH_CHECK_OK(pch_file_read_all(&file, "tests/data/json/lance_events.jsonl", 1 << 20, &err), &err);
    PCH_CHECK_OK(pch_json_parser_new(&lp, NULL, NULL, &err), &err);
    const char *s = (const char *)file.data;
    size_t start = 0;
    for (size_t i = 0; i < file.len; i++) {
        if (s[i] != '\n') continue;
        const pch_json_value *row;
        PCH_CHECK_OK(pch_json_parser_parse(lp, s + start, i - start, &row, &err), &err);
        start = i + 1;
        static const char *cols[] = { "data", "_offload_" };
        for (int c = 0; c < 2; c++) {
            const pch_json_value *col = pch_json_get(row, cols[c], strlen(cols[c]));
            if (!col || col->kind != PCH_JSON_STRING) continue;
            char *txt = strndup(col->u.str.ptr, col->u.str.len);
            pch_buf_clear(&b);
            PCH_CHECK_OK(encode_text(txt, &b), &err);
            PCH_CHECK_OK(render(b.data, b.len, &t), &err);
            PCH_CHECK_MSG(t.len == col->u.str.len && memcmp(t.data, txt, t.len) == 0,
                          "%s rendered as %s", txt, (const char *)t.data);
            free(txt);
            rows++;
        }
    }
    PCH_CHECK_EQ_INT(rows, 7);
    /* Row 0 of the fixture written with keys out of order and other number spellings. */
    pch_buf_clear(&b);
    PCH_CHECK_OK(encode_text("{\"tags\":[\"x\",\"y\"],\"pi\":325e-2,\"ok\":true,\"none\":null,"
                             "\"nested\":{\"k\":[1,2,{\"z\":false}]},\"neg\":-2,\"n\":1,"
                             "\"msg\":\"hello\",\"level\":\"info\"}", &b), &err);
    PCH_CHECK_OK(render(b.data, b.len, &t), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "{\"level\":\"info\",\"msg\":\"hello\",\"n\":1,\"neg\":-2,"
                     "\"nested\":{\"k\":[1,2,{\"z\":false}]},\"none\":null,\"ok\":true,\"pi\":3.25,"
                     "\"tags\":[\"x\",\"y\"]}");
    pch_json_parser_free(lp);
    pch_buf_dispose(&file);
    pch_buf_dispose(&b);
    pch_buf_dispose(&t);
}

/* ---------------------------------------------------------------- corrupt input */

static int decode_hex(const char *hex, uint8_t *out, size_t *n)
{
    *n = 0;
    for (const char *h = hex; *h;) {
        unsigned x;
        if (*h == ' ') { h++; continue; }
        if (sscanf(h, "%2x", &x) != 1) return 0;
        out[(*n)++] = (uint8_t)x;
        h += 2;
    }
    return 1;
}

static void test_jsonb__corrupt(void)
{
    static const struct { const char *hex; int code; const char *what; } bad[] = {
        { "", PCH_ECORRUPT, "shorter than its header" },
        { "800000", PCH_ECORRUPT, "shorter than its header" },
        { "00000000", PCH_ECORRUPT, "unknown container header" },
        { "60000000", PCH_ECORRUPT, "unknown container header" },
        { "e0000000", PCH_ECORRUPT, "unknown container header" },
        { "20000001 00000000 00000000", PCH_ECORRUPT, "scalar header with count" },
        { "20000000", PCH_ECORRUPT, "jentries past the end" },
        { "80000002 00000000", PCH_ECORRUPT, "jentries past the end" },
        { "9fffffff", PCH_ECORRUPT, "jentries past the end" },
        { "5fffffff 00000000", PCH_ECORRUPT, "jentries past the end" },     /* 2n overflow-free */
        { "80000001 10000005 616263", PCH_ECORRUPT, "past the container end" },
        { "80000001 1fffffff 61", PCH_ECORRUPT, "past the container end" },
        { "80000001 10000001 6162", PCH_ECORRUPT, "trailing bytes" },
        { "80000001 70000000", PCH_ECORRUPT, "unknown jentry type 7" },
        { "80000001 90000001 61", PCH_ECORRUPT, "offset flag" },
        { "80000001 00000001 00", PCH_ECORRUPT, "null/boolean entry with length" },
        { "80000001 40000001 00", PCH_ECORRUPT, "null/boolean entry with length" },
        { "80000001 20000000", PCH_ECORRUPT, "empty number" },
        { "80000001 20000002 0000", PCH_ECORRUPT, "zero number with 1 data bytes" },
        { "80000001 20000004 50000000", PCH_ECORRUPT, "integer of width 3" },
        { "80000001 20000001 40", PCH_ECORRUPT, "integer of width 0" },
        { "80000001 20000005 603ff00000", PCH_ECORRUPT, "float64 of width 4" },
        { "80000001 20000002 2000", PCH_ECORRUPT, "special float" },
        { "80000001 20000001 80", PCH_ECORRUPT, "unknown number tag 0x80" },
        { "80000001 20000003 700000", PCH_ECORRUPT, "decimal of width 2" },
        { "80000001 10000001 ff", PCH_ECORRUPT, "not valid UTF-8" },
        { "80000001 10000003 eda080", PCH_ECORRUPT, "not valid UTF-8" },
        { "40000001 20000001 10000001 00 61", PCH_ECORRUPT, "object key of jentry type 2" },
        { "40000001 10000001 00000000", PCH_ECORRUPT, "past the container end" },
        { "80000001 50000004 20000000", PCH_ECORRUPT, "scalar header inside a container" },
        { "80000001 50000003 800000", PCH_ECORRUPT, "shorter than its header" },
        { "80000001 50000008 80000001 10000001", PCH_ECORRUPT, "past the container end" },
        { "20000000 50000004 80000000", PCH_ECORRUPT, "scalar header holding a container" },
        { "20000000 10000001 6162", PCH_ECORRUPT, "trailing bytes after the scalar" },
        { "80000001 60000001 99", PCH_ECORRUPT, "unknown extension tag" },
        { "80000001 60000002 1000", PCH_ECORRUPT, "extension of 2 bytes" },
        { "80000001 60000002 0000", PCH_EUNSUPPORTED, "extension" },        /* valid, no text */
    };
    uint8_t bytes[256];
    size_t n;
    pch_buf t;
    pch_buf_init(&t, NULL);
    PCH_CHECK_OK(pch_buf_append(&t, "keep", 4), &err);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        PCH_CHECK(decode_hex(bad[k].hex, bytes, &n));
        int rc = pch_jsonb__to_json(&t, bytes, n, &err);
        PCH_CHECK_MSG(rc == bad[k].code, "case %zu (%s): rc %d %s", k, bad[k].hex, rc, err.msg);
        PCH_CHECK_MSG(strstr(err.msg, bad[k].what) != NULL, "case %zu: '%s'", k, err.msg);
        PCH_CHECK_MSG(t.len == 4 && strcmp((const char *)t.data, "keep") == 0, "case %zu: output not rolled back", k);
        rc = pch_jsonb__validate(bytes, n, &err);
        PCH_CHECK_MSG(rc == (bad[k].code == PCH_EUNSUPPORTED ? PCH_OK : bad[k].code), "case %zu: validate %d", k, rc);
    }
    /* Decimals: valid; 64/128-bit ones render. */
    PCH_CHECK(decode_hex("20000000 2000000a 70 0000000000003039 02", bytes, &n));
    pch_buf_clear(&t);
    PCH_CHECK_OK(pch_jsonb__to_json(&t, bytes, n, &err), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "123.45");
    PCH_CHECK(decode_hex("20000000 2000000a 70 fffffffffffffffb 03", bytes, &n));
    pch_buf_clear(&t);
    PCH_CHECK_OK(pch_jsonb__to_json(&t, bytes, n, &err), &err);
    PCH_CHECK_EQ_STR((const char *)t.data, "-0.005");

    /* Depth limit: 2000 nested arrays are valid bytes but deeper than 1024. */
    pch_buf deep;
    pch_buf_init(&deep, NULL);
    uint32_t levels = 2000;
    for (uint32_t l = 0; l < levels; l++) {
        uint8_t h[8];
        pch_store_be32(h, 0x80000001u);
        pch_store_be32(h + 4, 0x50000000u | (uint32_t)(8 * (levels - l - 1) + 4));
        PCH_CHECK_OK(pch_buf_append(&deep, h, 8), &err);
    }
    PCH_CHECK_OK(pch_buf_append(&deep, "\x80\x00\x00\x00", 4), &err);
    PCH_CHECK(pch_jsonb__validate(deep.data, deep.len, &err) == PCH_ELIMIT);
    pch_buf_clear(&t);
    PCH_CHECK(pch_jsonb__to_json(&t, deep.data, deep.len, &err) == PCH_ELIMIT);
    PCH_CHECK_OK(pch_jsonb__validate(deep.data + 8 * 1100, deep.len - 8 * 1100, &err), &err);
    pch_buf_dispose(&deep);
    pch_buf_dispose(&t);
}

/* Every strict prefix of a valid encoding is rejected; single-byte corruptions never
** crash, and whatever decodes re-validates. */
static void test_jsonb__truncations_and_flips(void)
{
    static const char *docs[] = {
        "{\"b\":300,\"a\":70000,\"c\":5000000000,\"d\":-129,\"e\":0,\"f\":\"\xc3\xbcn\xc3\xaf\"}",
        "[1,\"two\",3.5,null,[],{}]",
        "\"scalar string\"",
        "{\"a\":[{\"b\":[true,false,null,-1.5e-7,\"x\"]},{}],\"c\":{\"d\":{\"e\":[[[]]]}}}",
        "12345678901",
    };
    pch_buf b, t;
    uint64_t x = 99;
    pch_buf_init(&b, NULL);
    pch_buf_init(&t, NULL);
    for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
        pch_buf_clear(&b);
        PCH_CHECK_OK(encode_text(docs[d], &b), &err);
        for (size_t n = 0; n < b.len; n++) {
            PCH_CHECK_MSG(pch_jsonb__validate(b.data, n, &err) == PCH_ECORRUPT, "doc %zu prefix %zu", d, n);
            PCH_CHECK(render(b.data, n, &t) == PCH_ECORRUPT);
        }
        uint8_t *m = malloc(b.len);
        for (int r = 0; r < 3000; r++) {
            memcpy(m, b.data, b.len);
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            m[x % b.len] ^= (uint8_t)(1u << ((x >> 32) % 8));
            if (r & 1) m[(x >> 20) % b.len] = (uint8_t)(x >> 40);
            int rc = render(m, b.len, &t);
            PCH_CHECK(rc == PCH_OK || rc == PCH_ECORRUPT || rc == PCH_EUNSUPPORTED);
            int vrc = pch_jsonb__validate(m, b.len, &err);
            PCH_CHECK(rc == PCH_EUNSUPPORTED ? vrc == PCH_OK : vrc == rc);
            if (rc == PCH_OK) PCH_CHECK(pch_json__utf8_check(t.data, t.len) == t.len);
        }
        free(m);
    }
    pch_buf_dispose(&b);
    pch_buf_dispose(&t);
}

/* ---------------------------------------------------------------- corpus round trip */

/* For every corpus document: B = encode(parse(doc)); T = to_json(B); encode(parse(T)) == B
** (the canonical form is a fixed point), and T is sorted, strict JSON. */
typedef struct rt_stats { size_t docs, encoded, dup_keys, nonfinite; int bad; } rt_stats;

/* 1e400 encodes as +Inf and renders as Infinity, which is not JSON text. */
static int has_nonfinite(const pch_json_value *v)
{
    if (v->kind == PCH_JSON_NUMBER) return !isfinite(v->u.num.d);
    if (v->kind == PCH_JSON_ARRAY)
        for (uint32_t k = 0; k < v->n; k++) if (has_nonfinite(&v->u.items[k])) return 1;
    if (v->kind == PCH_JSON_OBJECT)
        for (uint32_t k = 0; k < v->n; k++) if (has_nonfinite(&v->u.members[k].value)) return 1;
    return 0;
}

static void roundtrip_doc(pch_json_parser *p2, const char *s, size_t len, rt_stats *st,
                          const char *where)
{
    const pch_json_value *v;
    pch_buf b, t, b2;
    st->docs++;
    if (pch_json_parser_parse(P, s, len, &v, &err) != PCH_OK) return;
    if (has_nonfinite(v)) { st->nonfinite++; return; }
    pch_buf_init(&b, NULL);
    pch_buf_init(&t, NULL);
    pch_buf_init(&b2, NULL);
    int rc = pch_jsonb__encode(&b, v, s, &err);
    if (rc == PCH_EINVAL && strstr(err.msg, "duplicate")) { st->dup_keys++; goto done; }
    if (rc != PCH_OK) { fprintf(stderr, "  %s: encode: %s\n", where, err.msg); st->bad++; goto done; }
    st->encoded++;
    if (pch_jsonb__to_json(&t, b.data, b.len, &err) != PCH_OK) {
        fprintf(stderr, "  %s: decode: %s\n", where, err.msg); st->bad++; goto done;
    }
    const pch_json_value *v2;
    if (pch_json_parser_parse(p2, (const char *)t.data, t.len, &v2, &err) != PCH_OK ||
        pch_jsonb__encode(&b2, v2, (const char *)t.data, &err) != PCH_OK ||
        b2.len != b.len || memcmp(b2.data, b.data, b.len) != 0) {
        fprintf(stderr, "  %s: not a fixed point (%s)\n", where, err.msg);
        st->bad++;
    }
done:
    pch_buf_dispose(&b);
    pch_buf_dispose(&t);
    pch_buf_dispose(&b2);
}

static void walk_dir(pch_json_parser *p2, const char *dir, rt_stats *st)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat sb;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) { walk_dir(p2, path, st); continue; }
        size_t n = strlen(path);
        int jsonl = n > 6 && strcmp(path + n - 6, ".jsonl") == 0;
        if (!jsonl && !(n > 5 && strcmp(path + n - 5, ".json") == 0)) continue;
        pch_buf f;
        pch_buf_init(&f, NULL);
        if (pch_file_read_all(&f, path, (size_t)1 << 30, &err) != PCH_OK) { st->bad++; continue; }
        const char *s = (const char *)f.data;
        if (!jsonl) {
            roundtrip_doc(p2, s ? s : "", f.len, st, path);
        } else {
            size_t start = 0;
            for (size_t i = 0; i <= f.len; i++) {
                if (i < f.len && s[i] != '\n') continue;
                if (i > start) roundtrip_doc(p2, s + start, i - start, st, path);
                start = i + 1;
            }
        }
        pch_buf_dispose(&f);
    }
    closedir(d);
}

static void test_jsonb__corpus_roundtrip(void)
{
    struct stat sb;
    rt_stats st = { 0, 0, 0, 0, 0 };
    pch_json_parser *p2;
    PCH_CHECK_MSG(stat("../shared/corpus", &sb) == 0 && S_ISDIR(sb.st_mode),
                  "the shared corpus ../shared/corpus is missing (run from the repository root)");
    PCH_CHECK_OK(pch_json_parser_new(&p2, NULL, NULL, &err), &err);
    walk_dir(p2, "tests/data/json", &st);
    walk_dir(p2, "../shared/corpus", &st);
    pch_json_parser_free(p2);
    printf("jsonb round trip: %zu documents, %zu encoded, %zu with duplicate keys, %zu with "
           "non-finite reals\n", st.docs, st.encoded, st.dup_keys, st.nonfinite);
    PCH_CHECK_EQ_INT(st.bad, 0);
    PCH_CHECK(st.encoded > 1000);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "jsonb_test");
    if (pch_json_parser_new(&P, NULL, NULL, &err) != PCH_OK) return 1;
    PCH_RUN(test_jsonb__appendix_c);
    PCH_RUN(test_jsonb__numbers);
    PCH_RUN(test_jsonb__strings_and_keys);
    PCH_RUN(test_jsonb__lance_fixture);
    PCH_RUN(test_jsonb__corrupt);
    PCH_RUN(test_jsonb__truncations_and_flips);
    PCH_RUN(test_jsonb__corpus_roundtrip);
    pch_json_parser_free(P);
    return pch_test_report();
}
