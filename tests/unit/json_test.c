/* Unit tests of the strict JSON parser/writer (src/json; RFC 8259): one case per rejection
** rule with its error position, exact integer extremes, NUL and surrogate handling, spans,
** limits, the writer, double formatting, and a differential test against jansson 2.14
** (the oracle, ARCHITECTURE.md §6) over tests/data/json and the shared corpus
** (../shared/corpus, every .json file whole and every .jsonl line separately), plus a
** random mutation differential.
**
** Known, asserted differences from jansson (JSON_DECODE_ANY | JSON_ALLOW_NUL):
**   - integers outside int64 (uint64 above INT64_MAX, anything beyond 64 bits): jansson
**     rejects ("too big integer"), we keep them (U64 flag, or INT without I64/U64);
**   - reals overflowing double (1e400): jansson rejects, we give ±inf;
**   - "\u0000" inside an object key: jansson rejects even with JSON_ALLOW_NUL, we keep it;
**   - duplicate keys: jansson keeps the last, we keep all in input order (compared against
**     the last occurrence);
**   - raw NUL bytes: jansson skips them anywhere in the input, we reject them. */
#include <dirent.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#include "harness.h"
#include "json/json.h"

static pch_error err;

static int parse_str(pch_json_parser *p, const char *s, const pch_json_value **v)
{
    return pch_json_parser_parse(p, s, strlen(s), v, &err);
}

/* ---------------------------------------------------------------- rejections */

typedef struct reject_case {
    const char *text;
    size_t len;          /* 0 = strlen */
    size_t offset, line, column;
    const char *what;    /* substring of the message */
} reject_case;

static const reject_case rejects[] = {
    { "[1,2,]", 0, 5, 1, 6, "expected a value" },                 /* trailing comma (array) */
    { "{\"a\":1,}", 0, 7, 1, 8, "expected a string key" },        /* trailing comma (object) */
    { "[1]//c", 0, 3, 1, 4, "unexpected data" },                  /* line comment */
    { "/*c*/1", 0, 0, 1, 1, "expected a value" },                 /* block comment */
    { "[1,/*c*/2]", 0, 3, 1, 4, "expected a value" },
    { "NaN", 0, 0, 1, 1, "expected a value" },
    { "nan", 0, 0, 1, 1, "invalid literal" },
    { "Infinity", 0, 0, 1, 1, "expected a value" },
    { "-Infinity", 0, 1, 1, 2, "invalid number" },
    { "01", 0, 1, 1, 2, "leading zero" },
    { "-01", 0, 2, 1, 3, "leading zero" },
    { "[00]", 0, 2, 1, 3, "leading zero" },
    { "+1", 0, 0, 1, 1, "expected a value" },
    { ".5", 0, 0, 1, 1, "expected a value" },
    { "1.", 0, 2, 1, 3, "decimal point" },
    { "1.e3", 0, 2, 1, 3, "decimal point" },
    { "1e", 0, 2, 1, 3, "exponent" },
    { "1e+", 0, 3, 1, 4, "exponent" },
    { "0x10", 0, 1, 1, 2, "unexpected data" },
    { "\"\\ud800\"", 0, 1, 1, 2, "lone high surrogate" },
    { "\"\\udc00\"", 0, 1, 1, 2, "lone low surrogate" },
    { "\"\\ud800\\u0041\"", 0, 1, 1, 2, "lone high surrogate" },
    { "\"a\\ud800\"", 0, 2, 1, 3, "lone high surrogate" },
    { "\"\\udbff\\udbff\"", 0, 1, 1, 2, "lone high surrogate" },
    { "\"a\xff\"", 0, 2, 1, 3, "invalid UTF-8" },
    { "\"\xc0\xaf\"", 0, 1, 1, 2, "invalid UTF-8" },                /* overlong '/' */
    { "\"\xe0\x80\xaf\"", 0, 1, 1, 2, "invalid UTF-8" },            /* overlong 3-byte */
    { "\"\xed\xa0\x80\"", 0, 1, 1, 2, "invalid UTF-8" },            /* encoded surrogate */
    { "\"\xf4\x90\x80\x80\"", 0, 1, 1, 2, "invalid UTF-8" },        /* above U+10FFFF */
    { "\"\xe2\x82\"", 0, 1, 1, 2, "invalid UTF-8" },                /* truncated sequence */
    { "\"\x80\"", 0, 1, 1, 2, "invalid UTF-8" },                    /* lone continuation */
    { "\"a\tb\"", 0, 2, 1, 3, "control character" },
    { "\"\x01\"", 0, 1, 1, 2, "control character" },
    { "\"a\nb\"", 0, 2, 1, 3, "control character" },
    { "\"a\0b\"", 5, 2, 1, 3, "control character" },                /* raw NUL byte */
    { "{\n  \"a\": tru\n}", 0, 9, 2, 8, "invalid literal" },
    { "[\n1,\n\n  x]", 0, 8, 4, 3, "expected a value" },
    { "", 0, 0, 1, 1, "empty input" },
    { "  \n ", 0, 4, 2, 2, "empty input" },
    { "[1 2]", 0, 3, 1, 4, "expected ',' or ']'" },
    { "{\"a\" 1}", 0, 5, 1, 6, "expected ':'" },
    { "{\"a\":1 \"b\":2}", 0, 7, 1, 8, "expected ',' or '}'" },
    { "{1:2}", 0, 1, 1, 2, "expected a string key" },
    { "\"abc", 0, 4, 1, 5, "unterminated string" },
    { "\"abc\\", 0, 5, 1, 6, "unterminated string" },
    { "\xef\xbb\xbf{}", 0, 0, 1, 1, "expected a value" },           /* byte order mark */
    { "[\"\\x\"]", 0, 2, 1, 3, "invalid escape" },
    { "\"\\u12G4\"", 0, 1, 1, 2, "invalid \\u escape" },
    { "\"\\u12\"", 0, 6, 1, 7, "truncated \\u escape" },
    { "\"\\U0041\"", 0, 1, 1, 2, "invalid escape" },
    { "tru", 0, 0, 1, 1, "invalid literal" },
    { "True", 0, 0, 1, 1, "expected a value" },
    { "nulls", 0, 4, 1, 5, "unexpected data" },
    { "{\"a\":1}}", 0, 7, 1, 8, "unexpected data" },
    { "[", 0, 1, 1, 2, "unexpected end" },
    { "{", 0, 1, 1, 2, "unexpected end" },
    { "[1,", 0, 3, 1, 4, "unexpected end" },
    { "'a'", 0, 0, 1, 1, "expected a value" },
    { "{a:1}", 0, 1, 1, 2, "expected a string key" },
    { "[1,,2]", 0, 3, 1, 4, "expected a value" },
    { "\0", 1, 0, 1, 1, "expected a value" },
    { "[1]\0", 4, 3, 1, 4, "unexpected data" },
    { "\f1", 0, 0, 1, 1, "expected a value" },                     /* form feed is not ws */
    { "\v1", 0, 0, 1, 1, "expected a value" },
    { "[1]]", 0, 3, 1, 4, "unexpected data" },
    { "[1}", 0, 2, 1, 3, "expected ',' or ']'" },
    { "{\"a\":1]", 0, 6, 1, 7, "expected ',' or '}'" },
    { "1 2", 0, 2, 1, 3, "unexpected data" },
    { "-", 0, 1, 1, 2, "invalid number" },
    { "- 1", 0, 1, 1, 2, "invalid number" },
};

static void test_json__rejections(void)
{
    pch_json_parser *p;
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    for (size_t k = 0; k < sizeof rejects / sizeof rejects[0]; k++) {
        const reject_case *c = &rejects[k];
        size_t len = c->len ? c->len : strlen(c->text);
        const pch_json_value *v = (const pch_json_value *)&err;  /* must be reset to NULL */
        pch_json_pos pos, vpos;
        pch_json_kind kind;
        char where[96];
        pch_error verr;
        int rc = pch_json_parser_parse(p, c->text, len, &v, &err);
        pch_json_parser_error_pos(p, &pos);
        PCH_CHECK_MSG(rc == PCH_EINVAL, "case %zu (%s): rc %d", k, c->text, rc);
        PCH_CHECK_MSG(v == NULL, "case %zu: root not reset", k);
        PCH_CHECK_MSG(pos.offset == c->offset && pos.line == c->line && pos.column == c->column,
                      "case %zu (%s): got offset %zu line %zu column %zu: %s", k, c->text,
                      pos.offset, pos.line, pos.column, err.msg);
        PCH_CHECK_MSG(strstr(err.msg, c->what) != NULL, "case %zu: message '%s'", k, err.msg);
        snprintf(where, sizeof where, "line %zu column %zu (byte %zu)", c->line, c->column, c->offset);
        PCH_CHECK_MSG(strstr(err.msg, where) != NULL, "case %zu: message '%s'", k, err.msg);
        /* The validator shares the scanner: same code, position and message. */
        rc = pch_json_validate(NULL, c->text, len, NULL, &kind, &vpos, &verr);
        PCH_CHECK_MSG(rc == PCH_EINVAL && vpos.offset == pos.offset && vpos.line == pos.line &&
                      vpos.column == pos.column && strcmp(verr.msg, err.msg) == 0,
                      "case %zu: validate differs: %d %s", k, rc, verr.msg);
    }
    /* A successful parse clears the position. */
    const pch_json_value *v;
    pch_json_pos pos;
    PCH_CHECK_OK(parse_str(p, "[1]", &v), &err);
    pch_json_parser_error_pos(p, &pos);
    PCH_CHECK(pos.offset == 0 && pos.line == 0 && pos.column == 0);
    pch_json_parser_free(p);
}

/* ---------------------------------------------------------------- numbers */

static void test_json__integer_extremes(void)
{
    pch_json_parser *p;
    const pch_json_value *v;
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);

    PCH_CHECK_OK(parse_str(p, "-9223372036854775808", &v), &err);
    PCH_CHECK(v->kind == PCH_JSON_NUMBER);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT | PCH_JSON_NUM_I64 | PCH_JSON_NUM_NEG);
    PCH_CHECK(v->u.num.i == INT64_MIN);
    PCH_CHECK(v->u.num.d == -9223372036854775808.0);

    PCH_CHECK_OK(parse_str(p, "9223372036854775807", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT | PCH_JSON_NUM_I64 | PCH_JSON_NUM_U64);
    PCH_CHECK(v->u.num.i == INT64_MAX && v->u.num.u == (uint64_t)INT64_MAX);

    PCH_CHECK_OK(parse_str(p, "9223372036854775808", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT | PCH_JSON_NUM_U64);
    PCH_CHECK(v->u.num.u == (uint64_t)INT64_MAX + 1);

    PCH_CHECK_OK(parse_str(p, "18446744073709551615", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT | PCH_JSON_NUM_U64);
    PCH_CHECK(v->u.num.u == UINT64_MAX);
    PCH_CHECK(v->span_off == 0 && v->span_len == 20);

    /* 2^64: still a number, an integer, but neither int64 nor uint64; text via the span. */
    PCH_CHECK_OK(parse_str(p, " 18446744073709551616 ", &v), &err);
    PCH_CHECK(v->kind == PCH_JSON_NUMBER);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT);
    PCH_CHECK(v->u.num.d == 18446744073709551616.0);
    PCH_CHECK(v->span_off == 1 && v->span_len == 20);

    PCH_CHECK_OK(parse_str(p, "-9223372036854775809", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT | PCH_JSON_NUM_NEG);
    PCH_CHECK_OK(parse_str(p, "123456789012345678901234567890", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT);
    PCH_CHECK(v->u.num.d == 1.2345678901234568e29);

    /* int64 beyond 2^53 stays exact (cJSON rounds this one). */
    PCH_CHECK_OK(parse_str(p, "1764500000688161792", &v), &err);
    PCH_CHECK(v->u.num.i == 1764500000688161792LL);

    PCH_CHECK_OK(parse_str(p, "-0", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT | PCH_JSON_NUM_I64 | PCH_JSON_NUM_U64 | PCH_JSON_NUM_NEG);
    PCH_CHECK(v->u.num.i == 0 && signbit(v->u.num.d));
    PCH_CHECK_OK(parse_str(p, "0", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_INT | PCH_JSON_NUM_I64 | PCH_JSON_NUM_U64);
    PCH_CHECK_OK(parse_str(p, "1.0", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, 0);
    PCH_CHECK(v->u.num.d == 1.0);
    PCH_CHECK_OK(parse_str(p, "1E2", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, 0);
    PCH_CHECK(v->u.num.d == 100.0);
    PCH_CHECK_OK(parse_str(p, "-2.5e-3", &v), &err);
    PCH_CHECK_EQ_INT(v->num_flags, PCH_JSON_NUM_NEG);
    PCH_CHECK(v->u.num.d == -2.5e-3);
    PCH_CHECK_OK(parse_str(p, "1e400", &v), &err);
    PCH_CHECK(isinf(v->u.num.d) && v->u.num.d > 0);
    PCH_CHECK_OK(parse_str(p, "-1e400", &v), &err);
    PCH_CHECK(isinf(v->u.num.d) && v->u.num.d < 0);
    PCH_CHECK_OK(parse_str(p, "1e-400", &v), &err);
    PCH_CHECK(v->u.num.d == 0.0);
    PCH_CHECK_OK(parse_str(p, "-0.0", &v), &err);
    PCH_CHECK(v->u.num.d == 0.0 && signbit(v->u.num.d));
    pch_json_parser_free(p);
}

/* xorshift64: the random inputs of the differential tests below (fixed seeds). */
static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Doubles equal strtod's correctly rounded result, on the fast path and off it. */
static void test_json__doubles_match_strtod(void)
{
    pch_json_parser *p;
    const pch_json_value *v;
    char txt[64];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    for (int k = 0; k < 20000; k++) {
        xorshift(&x);
        int nd = 1 + (int)(x % 22), fd = (int)((x >> 8) % 12), e = (int)((x >> 16) % 80) - 40;
        size_t o = 0;
        if (x >> 63) txt[o++] = '-';
        uint64_t y = x;
        txt[o++] = (char)('1' + (y >> 20) % 9);
        for (int d = 1; d < nd; d++) { y = y * 6364136223846793005ull + 1; txt[o++] = (char)('0' + (y >> 33) % 10); }
        if (fd) {
            txt[o++] = '.';
            for (int d = 0; d < fd; d++) { y = y * 6364136223846793005ull + 1; txt[o++] = (char)('0' + (y >> 33) % 10); }
        }
        if ((x >> 40) & 1) o += (size_t)snprintf(txt + o, sizeof txt - o, "e%d", e);
        txt[o] = 0;
        PCH_CHECK_OK(parse_str(p, txt, &v), &err);
        double want = strtod(txt, NULL);
        PCH_CHECK_MSG(v->u.num.d == want, "%s: %.17g != %.17g", txt, v->u.num.d, want);
    }
    pch_json_parser_free(p);
}

/* pch_json__is_compact says yes exactly when the writer gives the same text back. */
static void test_json__compact_text(void)
{
    static const struct { const char *t; bool compact; } cases[] = {
        { "{\"a\":[1,-2.50,true,null],\"b\":\"x y\"}", true },   /* spaces inside strings are content */
        { "\"a\\nb\\t\\\"\\\\\\b\\f\\r\"", true },
        { "\"\\u001f\\u0000\"", true },
        { "\"\\u001F\"", false },          /* upper-case hex: the writer uses lower */
        { "\"\\u000a\"", false },          /* the writer says \n */
        { "\"\\/\"", false },              /* the writer leaves '/' alone */
        { "\"\\u00e9\"", false },          /* the writer writes the UTF-8 bytes */
        { "[1, 2]", false },
        { "{\"a\" :1}", false },
        { "\"\xc3\xa9\"", true },
        { "1e5", true },
    };
    pch_json_parser *p;
    const pch_json_value *v;
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *out = NULL;
        size_t n = 0, len = strlen(cases[k].t);
        bool same;
        PCH_CHECK_OK(parse_str(p, cases[k].t, &v), &err);
        PCH_CHECK_OK(pch_json_serialize(NULL, v, cases[k].t, &out, &n, &err), &err);
        same = n == len && memcmp(out, cases[k].t, n) == 0;
        PCH_CHECK_MSG(pch_json__is_compact(cases[k].t, len) == cases[k].compact, "%s", cases[k].t);
        PCH_CHECK_MSG(same == cases[k].compact, "%s: written as %.*s", cases[k].t, (int)n, out);
        free(out);
    }
    pch_json_parser_free(p);
}

/* Integers of every length, alone and followed by each kind of byte (the digits are read
** eight at a time): the exact value and the byte where the number ends. */
static void test_json__integers_every_length(void)
{
    pch_json_parser *p;
    const pch_json_value *v;
    char txt[64];
    uint64_t x = 0x13198A2E03707344ull;
    static const char *const tails[] = { "", " ", "]", ",1]", "e0", ".5", "x" };
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    for (int k = 0; k < 40000; k++) {
        int nd, t;
        uint64_t m = 0;
        size_t o = 0;
        xorshift(&x);
        nd = 1 + (int)(x % 20);
        t = (int)((x >> 40) % 7);
        for (int d = 0; d < nd; d++) {
            unsigned dig = (unsigned)((x >> (d * 3 % 61)) % 10);
            if (d == 0 && dig == 0) dig = 1 + (unsigned)(k % 9);
            if (nd == 20 && d == 0) dig = 1;       /* 1[0-7]... stays below 2^64 */
            if (nd == 20 && d == 1 && dig > 7) dig = 7;
            txt[o++] = (char)('0' + dig);
            m = m * 10 + dig;
        }
        /* the array form puts the number inside a document that continues */
        if (t == 2 || t == 3) {
            memmove(txt + 1, txt, o);
            txt[0] = '[';
            o++;
        }
        snprintf(txt + o, sizeof txt - o, "%s", tails[t]);
        if (t == 6) {
            PCH_CHECK(parse_str(p, txt, &v) != PCH_OK);
            continue;
        }
        PCH_CHECK_OK(parse_str(p, txt, &v), &err);
        if (t == 2 || t == 3) v = &v->u.items[0];
        if (t == 4 || t == 5) {
            PCH_CHECK_MSG(v->u.num.d == strtod(txt, NULL), "%s", txt);
            continue;
        }
        PCH_CHECK_MSG((v->num_flags & PCH_JSON_NUM_U64) && v->u.num.u == m, "%s: %" PRIu64 " != %" PRIu64, txt, v->u.num.u, m);
        PCH_CHECK_MSG(v->span_len == (size_t)nd, "%s: span %zu", txt, (size_t)v->span_len);
    }
    pch_json_parser_free(p);
}

/* 16-19 digit mantissas (the extended-precision path): shortest forms of random doubles
** and floats (as logprobs are written), every digit count and exponent the path takes,
** and decimals just around the midpoint between two adjacent doubles. */
static void test_json__doubles_long_mantissas(void)
{
    pch_json_parser *p;
    const pch_json_value *v;
    char txt[80];
    uint64_t x = 0x243F6A8885A308D3ull;
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    for (int k = 0; k < 60000; k++) {
        double d, want;
        xorshift(&x);
        if (k % 3 == 0) {          /* a float's value, written shortest as a double */
            float f;
            uint32_t b = (uint32_t)(x >> 32);
            memcpy(&f, &b, 4);
            d = (double)f;
        } else {
            memcpy(&d, &x, 8);
        }
        if (!isfinite(d)) continue;
        if (k & 1) snprintf(txt, sizeof txt, "%.17g", d);
        else pch_json__fmt_double(txt, d);
        PCH_CHECK_OK(parse_str(p, txt, &v), &err);
        want = strtod(txt, NULL);
        PCH_CHECK_MSG(v->u.num.d == want, "%s: %.17g != %.17g", txt, v->u.num.d, want);
    }
    for (int k = 0; k < 60000; k++) {
        /* m (16-19 digits) . 10^e with e in [-30, 30], and the midpoint of two doubles */
        int nd, e;
        uint64_t m = 0;
        double want;
        xorshift(&x);
        nd = 16 + (int)(x % 4);
        e = (int)((x >> 8) % 61) - 30;
        for (int d = 0; d < nd; d++) m = m * 10 + (d ? (x >> (d * 3 % 60)) % 10 : 1 + (x >> 20) % 9);
        if (k % 4 == 0) {
            /* 19 digits nearest the midpoint above a double near m: the 64-bit rounding lands on or
            ** next to the halfway pattern that sends a value to strtod */
            double a = (double)m * 1e-5;
            long double mid = ((long double)a + (long double)nextafter(a, INFINITY)) / 2;
            snprintf(txt, sizeof txt, "%.18Le", mid);
        } else {
            snprintf(txt, sizeof txt, "%" PRIu64 "e%d", m, e);
        }
        PCH_CHECK_OK(parse_str(p, txt, &v), &err);
        want = strtod(txt, NULL);
        PCH_CHECK_MSG(v->u.num.d == want, "%s: %.17g != %.17g", txt, v->u.num.d, want);
    }
    pch_json_parser_free(p);
}

/* ---------------------------------------------------------------- strings */

static void test_json__strings(void)
{
    pch_json_parser *p;
    const pch_json_value *v;
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);

    PCH_CHECK_OK(parse_str(p, "\"x\\u0000y\"", &v), &err);      /* NUL kept */
    PCH_CHECK(v->kind == PCH_JSON_STRING && v->u.str.len == 3);
    PCH_CHECK(memcmp(v->u.str.ptr, "x\0y", 3) == 0);

    PCH_CHECK_OK(parse_str(p, "\"\\ud83d\\ude00\"", &v), &err); /* surrogate pair → U+1F600 */
    PCH_CHECK(v->u.str.len == 4 && memcmp(v->u.str.ptr, "\xf0\x9f\x98\x80", 4) == 0);
    PCH_CHECK_OK(parse_str(p, "\"\\uDBFF\\uDFFF\"", &v), &err); /* U+10FFFF, upper-case hex */
    PCH_CHECK(v->u.str.len == 4 && memcmp(v->u.str.ptr, "\xf4\x8f\xbf\xbf", 4) == 0);
    PCH_CHECK_OK(parse_str(p, "\"\\u00e9\\u20ac\\\"\\\\\\/\\b\\f\\n\\r\\t\"", &v), &err);
    PCH_CHECK(v->u.str.len == 2 + 3 + 8 && memcmp(v->u.str.ptr, "\xc3\xa9\xe2\x82\xac\"\\/\b\f\n\r\t", 13) == 0);
    PCH_CHECK_OK(parse_str(p, "\"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\x80\"", &v), &err); /* raw UTF-8 */
    PCH_CHECK(v->u.str.len == 14);
    PCH_CHECK_OK(parse_str(p, "\"\x7f\"", &v), &err);             /* DEL is allowed */

    /* Unescaped strings point into the input (zero copy); escaped ones are decoded copies. */
    const char *txt = "[\"plain string that is long enough for the vector loop\", \"a\\nb\"]";
    PCH_CHECK_OK(parse_str(p, txt, &v), &err);
    PCH_CHECK(v->u.items[0].u.str.ptr == txt + 2);
    PCH_CHECK(v->u.items[1].u.str.len == 3 && memcmp(v->u.items[1].u.str.ptr, "a\nb", 4) == 0);

    /* Long strings crossing the 16-byte blocks with specials at every position. */
    char buf[200];
    for (int at = 0; at < 40; at++) {
        size_t o = 0;
        buf[o++] = '"';
        for (int k = 0; k < at; k++) buf[o++] = 'a';
        memcpy(buf + o, "\\t\xc3\xa9", 4); o += 4;
        for (int k = 0; k < 37; k++) buf[o++] = 'b';
        buf[o++] = '"';
        PCH_CHECK_OK(pch_json_parser_parse(p, buf, o, &v, &err), &err);
        PCH_CHECK((int)v->u.str.len == at + 1 + 2 + 37);
        PCH_CHECK(v->u.str.ptr[at] == '\t');
        buf[o - 1] = 'b';  /* unterminated */
        PCH_CHECK(pch_json_parser_parse(p, buf, o, &v, &err) == PCH_EINVAL);
        PCH_CHECK(strstr(err.msg, "unterminated") != NULL);
    }
    pch_json_parser_free(p);
}

/* ---------------------------------------------------------------- structure */

static void test_json__spans_and_get(void)
{
    pch_json_parser *p;
    const pch_json_value *v, *a, *b;
    const char *txt = " {\"a\": [1, \"x\\n\", true], \"b\": -2.5e3, \"k\\u0000\": null, \"a\": {}} ";
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    PCH_CHECK_OK(parse_str(p, txt, &v), &err);
    PCH_CHECK(v->kind == PCH_JSON_OBJECT && v->n == 4);
    PCH_CHECK(v->span_off == 1 && v->span_len == strlen(txt) - 2);
    a = pch_json_get(v, "a", 1);                        /* first match */
    PCH_CHECK(a && a->kind == PCH_JSON_ARRAY && a->n == 3);
    PCH_CHECK(a->span_off == 7 && a->span_len == 16);   /* [1, "x\n", true] */
    PCH_CHECK(a->u.items[0].span_off == 8 && a->u.items[0].span_len == 1);
    PCH_CHECK(a->u.items[1].span_off == 11 && a->u.items[1].span_len == 5);
    PCH_CHECK(a->u.items[2].kind == PCH_JSON_TRUE && a->u.items[2].span_off == 18);
    b = pch_json_get(v, "b", 1);
    PCH_CHECK(b && memcmp(txt + b->span_off, "-2.5e3", 6) == 0 && b->span_len == 6);
    PCH_CHECK(pch_json_get(v, "k\0", 2) && pch_json_get(v, "k\0", 2)->kind == PCH_JSON_NULL);
    PCH_CHECK(pch_json_get(v, "k", 1) == NULL);
    PCH_CHECK(v->u.members[3].value.kind == PCH_JSON_OBJECT && v->u.members[3].value.n == 0);
    PCH_CHECK(pch_json_get(a, "a", 1) == NULL);
    /* Empty containers. */
    PCH_CHECK_OK(parse_str(p, "[ ]", &v), &err);
    PCH_CHECK(v->kind == PCH_JSON_ARRAY && v->n == 0 && v->span_len == 3);
    PCH_CHECK_OK(parse_str(p, "{\t}", &v), &err);
    PCH_CHECK(v->kind == PCH_JSON_OBJECT && v->n == 0);
    pch_json_parser_free(p);
}

static void test_json__limits(void)
{
    pch_json_parser *p;
    const pch_json_value *v;
    pch_json_parse_options o = PCH_JSON_PARSE_OPTIONS_INIT;
    pch_json_pos pos;
    char *deep = malloc(4000);
    PCH_CHECK(deep);

    o.max_depth = 3;
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, &o, &err), &err);
    PCH_CHECK_OK(parse_str(p, "[[{\"a\":1}]]", &v), &err);
    PCH_CHECK(parse_str(p, "[[{\"a\":[]}]]", &v) == PCH_ELIMIT);
    pch_json_parser_error_pos(p, &pos);
    PCH_CHECK(pos.offset == 7);
    PCH_CHECK(strstr(err.msg, "nesting deeper than 3") != NULL);
    PCH_CHECK(pch_json_validate(NULL, "[[[[1]]]]", 9, &o, NULL, &pos, &err) == PCH_ELIMIT && pos.offset == 3);
    pch_json_parser_free(p);

    /* Default depth (the context's max_json_depth, 1024). */
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    for (int n = 1024; n <= 1025; n++) {
        for (int k = 0; k < n; k++) { deep[k] = '['; deep[2 * n - 1 - k] = ']'; }
        int rc = pch_json_parser_parse(p, deep, (size_t)(2 * n), &v, &err);
        PCH_CHECK(rc == (n == 1024 ? PCH_OK : PCH_ELIMIT));
    }
    pch_json_parser_free(p);

    /* Context limits apply when the options say 0. */
    pch_ctx *ctx;
    pch_limits lim = { 0, 0, 0, 2, 16 };
    PCH_CHECK_OK(pch_ctx_new(&ctx, NULL, &lim, &err), &err);
    PCH_CHECK_OK(pch_json_parser_new(&p, ctx, NULL, &err), &err);
    PCH_CHECK_OK(parse_str(p, "[[1]]", &v), &err);
    PCH_CHECK(parse_str(p, "[[[1]]]", &v) == PCH_ELIMIT);
    PCH_CHECK_OK(parse_str(p, "\"0123456789abcd\"", &v), &err);   /* 16 bytes */
    PCH_CHECK(parse_str(p, "\"0123456789abcde\"", &v) == PCH_ELIMIT);
    PCH_CHECK(strstr(err.msg, "exceeds the limit of 16") != NULL);
    PCH_CHECK(pch_json_validate(ctx, "\"0123456789abcde\"", 17, NULL, NULL, NULL, &err) == PCH_ELIMIT);
    pch_json_parser_free(p);
    o.max_depth = 0;
    o.max_bytes = 4;
    PCH_CHECK_OK(pch_json_parser_new(&p, ctx, &o, &err), &err);
    PCH_CHECK(parse_str(p, "12345", &v) == PCH_ELIMIT);
    pch_json_parser_free(p);
    pch_ctx_free(ctx);

    o.version = 99;
    PCH_CHECK(pch_json_parser_new(&p, NULL, &o, &err) == PCH_EINVAL && p == NULL);
    free(deep);
}

static void test_json__validate(void)
{
    pch_json_kind k;
    static const struct { const char *t; pch_json_kind k; } ok[] = {
        { "null", PCH_JSON_NULL }, { "true", PCH_JSON_TRUE }, { " false ", PCH_JSON_FALSE },
        { "-1.5e3", PCH_JSON_NUMBER }, { "\"s\\u0000\"", PCH_JSON_STRING },
        { "[1,[2,{}]]", PCH_JSON_ARRAY }, { "{\"a\":{\"b\":[]}}", PCH_JSON_OBJECT },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        PCH_CHECK_OK(pch_json_validate(NULL, ok[i].t, strlen(ok[i].t), NULL, &k, NULL, &err), &err);
        PCH_CHECK_EQ_INT(k, ok[i].k);
    }
}

/* ---------------------------------------------------------------- writer */

static void check_fmt(double d, const char *want)
{
    char out[32];
    size_t n = pch_json__fmt_double(out, d);
    if (n != strlen(want) || strcmp(out, want) != 0) {
        fprintf(stderr, "  FAIL fmt_double(%.17g) = '%s', want '%s'\n", d, out, want);
        pch_t_cur_failed = 1;
    }
}

static void test_json__fmt_double(void)
{
    check_fmt(1.0, "1.0");
    check_fmt(3.5, "3.5");
    check_fmt(3.25, "3.25");
    check_fmt(-0.0, "-0.0");
    check_fmt(0.0, "0.0");
    check_fmt(0.1, "0.1");
    check_fmt(0.1 + 0.2, "0.30000000000000004");
    check_fmt(100.0, "100.0");
    check_fmt(1e15, "1000000000000000.0");
    check_fmt(1e16, "1e16");
    check_fmt(1.2345e20, "1.2345e20");
    check_fmt(123456.789, "123456.789");
    check_fmt(0.0001, "0.0001");
    check_fmt(1e-5, "0.00001");
    check_fmt(1e-6, "1e-6");
    check_fmt(1.5e-7, "1.5e-7");
    check_fmt(-2.5e-3, "-0.0025");
    check_fmt(5e-324, "5e-324");
    check_fmt(1.7976931348623157e308, "1.7976931348623157e308");
    check_fmt(18446744073709551616.0, "1.8446744073709552e19");
    check_fmt(9007199254740993.0, "9007199254740992.0");
    check_fmt(INFINITY, "Infinity");
    check_fmt(-INFINITY, "-Infinity");
    check_fmt(NAN, "NaN");
    /* Round trip for many random bit patterns. */
    uint64_t x = 12345;
    for (int k = 0; k < 5000; k++) {
        char out[32];
        double d;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        memcpy(&d, &x, 8);
        if (!isfinite(d)) continue;
        pch_json__fmt_double(out, d);
        PCH_CHECK_MSG(strtod(out, NULL) == d, "%s", out);
    }
}

/* The shortest round-trip digits of a finite d > 0 the slow, obvious way: every precision
** from 1 up, the first that strtod reads back; trailing zeros dropped. */
static void ref_shortest(double d, char *dig, int *kk)
{
    char tmp[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d) break;
    }
    int n = 0;
    const char *q = tmp;
    for (; *q && *q != 'e'; q++) if (*q >= '0' && *q <= '9') dig[n++] = *q;
    while (n > 1 && dig[n - 1] == '0') n--;
    dig[n] = 0;
    *kk = atoi(q + 1) + 1;
}

/* The significant digits and exponent of what fmt_double printed ("12.5" -> "125", 2). */
static void out_digits(const char *s, char *dig, int *kk)
{
    int n = 0, point = -1, lead = 0, e = 0;
    bool seen = false;
    if (*s == '-') s++;
    for (; *s && *s != 'e'; s++) {
        if (*s == '.') { point = n + lead; continue; }
        if (!seen && *s == '0') { lead++; continue; }
        seen = true;
        dig[n++] = *s;
    }
    if (*s == 'e') e = atoi(s + 1);
    if (point < 0) point = n + lead;
    while (n > 1 && dig[n - 1] == '0') n--;
    dig[n] = 0;
    *kk = point - lead + e;
}

/* fmt_double's shortcut (at most three roundings for most doubles) against the plain
** search over every precision, on the classes the shortcut treats apart: random bit
** patterns, short decimals, float32 values widened, powers of two and their neighbours,
** subnormals and the ends of the range. */
static void test_json__fmt_double_shortest(void)
{
    uint64_t x = 424242;
    int bad = 0;
    for (int k = 0; k < 100000 && bad < 5; k++) {
        double d;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        switch (k % 6) {
        case 0: { uint64_t b = x >> 1; memcpy(&d, &b, 8); break; }               /* any positive bits */
        case 1: d = (double)(x >> 40) / pow(10, (double)(x % 12)); break;         /* short decimals */
        case 2: { float f; uint32_t b = (uint32_t)(x >> 33); memcpy(&f, &b, 4); d = fabs((double)f); break; }
        case 3: d = ldexp(1.0, (int)(x % 2098) - 1074); break;                    /* powers of two */
        case 4: d = nextafter(ldexp(1.0, (int)(x % 2046) - 1021), (x >> 63) ? 0 : INFINITY); break;
        default: { uint64_t b = (x >> 12) & ((1ull << 52) - 1); if (x & 1) b |= 1ull << 52; memcpy(&d, &b, 8); break; }
        }
        if (!isfinite(d) || d <= 0) continue;
        char out[32], want[20], got[20];
        int wk, gk;
        pch_json__fmt_double(out, d);
        ref_shortest(d, want, &wk);
        out_digits(out, got, &gk);
        if (strcmp(want, got) != 0 || wk != gk) {
            fprintf(stderr, "  FAIL fmt_double(%.17g) = '%s': digits %s e%d, want %s e%d\n", d, out, got, gk, want, wk);
            pch_t_cur_failed = 1;
            bad++;
        }
    }
    check_fmt(DBL_MIN, "2.2250738585072014e-308");
    check_fmt(nextafter(DBL_MIN, 0), "2.225073858507201e-308");
    check_fmt(DBL_MAX, "1.7976931348623157e308");
    check_fmt(0.5, "0.5");
    check_fmt(1024.0, "1024.0");
    check_fmt(9007199254740992.0, "9007199254740992.0");
}

/* pch_json__fmt_i64 against printf: every length, both signs, the extremes, and the
** two-digit table's boundaries (9/10, 99/100, ...). */
static void test_json__fmt_i64(void)
{
    static const int64_t fixed[] = { 0, 1, -1, 9, 10, 11, 99, 100, 101, 999, 1000, -10, -99, -100,
                                     INT64_MAX, INT64_MIN, INT64_MIN + 1, 1772068464979, -1772068464979 };
    char out[24], want[32];
    uint64_t x = 987654321;
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0] + 20000; k++) {
        int64_t v;
        size_t n;
        if (k < sizeof fixed / sizeof fixed[0]) v = fixed[k];
        else {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            v = (int64_t)(x >> (x % 64));          /* every magnitude */
            if (x & 1) v = -v;
        }
        n = pch_json__fmt_i64(out, v);
        snprintf(want, sizeof want, "%lld", (long long)v);
        PCH_CHECK_MSG(n == strlen(want) && strcmp(out, want) == 0, "%s against %s", out, want);
    }
    for (int64_t p = 1, k = 0; k < 19; k++, p = k < 19 ? p * 10 : p) {    /* 10^k - 1 and 10^k */
        char a[24];
        snprintf(want, sizeof want, "%lld", (long long)p);
        pch_json__fmt_i64(a, p);
        PCH_CHECK_EQ_STR(a, want);
        snprintf(want, sizeof want, "%lld", (long long)(p - 1));
        pch_json__fmt_i64(a, p - 1);
        PCH_CHECK_EQ_STR(a, want);
    }
}

/* pch_json__fmt_g17_f32 against printf's "%.17g": every float32 exponent it takes (2^-44 ..
** 2^127: random mantissas, both signs), the extremes of each binade, values whose 17-digit
** rounding carries into a new digit, and the values it must leave to printf (0, non-finite,
** not a float32, below 2^-44) returning 0. Also pch_json__fmt_u64 against printf. */
static void test_json__fmt_g17_f32(void)
{
    uint64_t x = 7777;
    char out[32], want[40];
    int bad = 0;
    for (int k = 0; k < 400000 && bad < 5; k++) {
        float f;
        uint32_t b;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        switch (k % 4) {
        case 0: b = (uint32_t)(x >> 32); break;                                      /* any bits */
        case 1: b = (uint32_t)(((x >> 40) % 172 + 83) << 23) | (uint32_t)(x & 0x7fffff); break;  /* 2^-44.. */
        case 2: b = (uint32_t)(((x >> 40) % 172 + 83) << 23) | ((x & 1) ? 0x7fffff : 0); break;  /* binade ends */
        default: { double l = -(double)((x >> 11) % 2000000) / 65536.0; f = (float)l; memcpy(&b, &f, 4); break; }  /* logprobs */
        }
        if (x & 2) b |= 0x80000000u;
        memcpy(&f, &b, 4);
        double d = (double)f;
        size_t n = pch_json__fmt_g17_f32(out, d);
        if (!isfinite(d) || d == 0 || fabs(d) < ldexp(1.0, -44) * 0x1p-23) { PCH_CHECK(n == 0); continue; }
        if (!n) { PCH_CHECK_MSG(fabs(d) < 1e-6 || fabs(d) >= 0x1p127, "%a left to printf", d); continue; }
        snprintf(want, sizeof want, "%.17g", d);
        if (n != strlen(want) || strcmp(out, want) != 0) {
            fprintf(stderr, "  FAIL fmt_g17_f32(%a) = '%s', want '%s'\n", d, out, want);
            pch_t_cur_failed = 1;
            bad++;
        }
    }
    PCH_CHECK(pch_json__fmt_g17_f32(out, 0.1) == 0);           /* not a float32 */
    PCH_CHECK(pch_json__fmt_g17_f32(out, 0.0) == 0 && pch_json__fmt_g17_f32(out, -0.0) == 0);
    PCH_CHECK(pch_json__fmt_g17_f32(out, INFINITY) == 0 && pch_json__fmt_g17_f32(out, NAN) == 0);
    PCH_CHECK(pch_json__fmt_g17_f32(out, ldexp(1.0, -60)) == 0);
    pch_json__fmt_g17_f32(out, (double)0.1f);
    PCH_CHECK_EQ_STR(out, "0.10000000149011612");
    pch_json__fmt_g17_f32(out, -1.0);
    PCH_CHECK_EQ_STR(out, "-1");
    pch_json__fmt_g17_f32(out, 1e17f);                          /* exponent form at 10^17 */
    snprintf(want, sizeof want, "%.17g", (double)1e17f);
    PCH_CHECK_EQ_STR(out, want);
    PCH_CHECK(pch_json__fmt_g17_f32(out, (double)FLT_MAX) == 0);      /* 2^127 and up: printf's */
    pch_json__fmt_g17_f32(out, 0x1.fffffep126);
    snprintf(want, sizeof want, "%.17g", 0x1.fffffep126);
    PCH_CHECK_EQ_STR(out, want);
    for (int k = 0; k < 20000; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t v = x >> (x % 64);
        size_t n = pch_json__fmt_u64(out, v);
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        PCH_CHECK_MSG(n == strlen(want) && strcmp(out, want) == 0, "%s against %s", out, want);
    }
    pch_json__fmt_u64(out, UINT64_MAX);
    PCH_CHECK_EQ_STR(out, "18446744073709551615");
}

static void test_json__serialize(void)
{
    pch_json_parser *p;
    const pch_json_value *v;
    char *out;
    size_t n;
    const char *txt = " { \"a\" : [ 1.50 , -0 , 18446744073709551616 , \"\\u00e9\\u0001\\/\" ] , \"b\" : { } , \"c\" : 1E2 } ";
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    PCH_CHECK_OK(parse_str(p, txt, &v), &err);
    PCH_CHECK_OK(pch_json_serialize(NULL, v, txt, &out, &n, &err), &err);   /* original numbers */
    PCH_CHECK_EQ_STR(out, "{\"a\":[1.50,-0,18446744073709551616,\"\xc3\xa9\\u0001/\"],\"b\":{},\"c\":1E2}");
    PCH_CHECK(n == strlen(out));
    pch_free(NULL, out);
    PCH_CHECK_OK(pch_json_serialize(NULL, v, NULL, &out, &n, &err), &err);  /* canonical */
    PCH_CHECK_EQ_STR(out, "{\"a\":[1.5,-0,1.8446744073709552e19,\"\xc3\xa9\\u0001/\"],\"b\":{},\"c\":100.0}");
    pch_free(NULL, out);

    pch_buf b;
    pch_buf_init(&b, NULL);
    PCH_CHECK_OK(pch_json__write_string(&b, "q\"b\\n\n\r\t\b\f\x1f\x7f\0z", 14), &err);
    PCH_CHECK_EQ_STR((const char *)b.data, "\"q\\\"b\\\\n\\n\\r\\t\\b\\f\\u001f\x7f\\u0000z\"");
    size_t before = b.len;
    PCH_CHECK(pch_json__write_string(&b, "bad \xff", 5) == PCH_EINVAL);
    PCH_CHECK(b.len == before);
    /* the writer for checked UTF-8 escapes the same bytes, 16-byte blocks and tails alike */
    {
        static const char *const texts[] = { "q\"b\\n\n\r\t\b\f\x1f\x7f\0z", "plain ascii text, longer than a block of sixteen",
                                             "\xc3\xa9\xe4\xb8\xad \xf0\x9f\x98\x80 \"quoted\" over sixteen bytes\n\x01", "", "\\" };
        static const size_t lens[] = { 14, 48, 40, 0, 1 };
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            pch_buf u;
            pch_buf_init(&u, NULL);
            pch_buf_clear(&b);
            PCH_CHECK_OK(pch_json__write_string(&b, texts[i], lens[i]), &err);
            PCH_CHECK(pch_json__write_utf8(&u, texts[i], lens[i]) == PCH_OK);
            PCH_CHECK_MSG(u.len == b.len && memcmp(u.data, b.data, b.len) == 0, "text %zu: %s vs %s", i, (const char *)u.data, (const char *)b.data);
            pch_buf_dispose(&u);
        }
    }
    /* random UTF-8 text of every escape density, at lengths around the 16-byte blocks and
    ** the 16 KiB pieces the checked writer reserves for (pch_json__write_utf8) */
    {
        static const size_t lens[] = { 15, 16, 17, 31, 33, 16383, 16384, 16385, 40000 };
        uint64_t x = 0x9e3779b97f4a7c15ull;
        char *t = malloc(40000);
        PCH_CHECK(t != NULL);
        for (int dense = 0; t && dense < 4; dense++)
            for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
                pch_buf u;
                size_t m = 0;
                pch_buf_init(&u, NULL);
                while (m < lens[i]) {
                    uint64_t r = xorshift(&x);
                    if (r % 8 < (uint64_t)dense * 2) t[m++] = (char)(r >> 8) & 0x1f;      /* C0 */
                    else if (r % 8 == 7 && m + 3 <= lens[i]) { memcpy(t + m, "\xe4\xb8\xad", 3); m += 3; }
                    else if (r % 16 == 0) t[m++] = (r >> 9) & 1 ? '"' : '\\';
                    else t[m++] = (char)(0x20 + (r >> 8) % 0x5f);
                }
                pch_buf_clear(&b);
                PCH_CHECK_OK(pch_json__write_string(&b, t, m), &err);
                PCH_CHECK(pch_json__write_utf8(&u, t, m) == PCH_OK);
                PCH_CHECK_MSG(u.len == b.len && memcmp(u.data, b.data, b.len) == 0 && u.data[u.len] == 0,
                              "density %d, %zu bytes: the two writers differ", dense, m);
                pch_buf_dispose(&u);
            }
        if (t) {                                 /* the worst case: every byte a \u00XX */
            pch_buf u;
            pch_buf_init(&u, NULL);
            memset(t, 1, 40000);
            PCH_CHECK(pch_json__write_utf8(&u, t, 40000) == PCH_OK);
            PCH_CHECK(u.len == 2 + 6 * 40000 && memcmp(u.data + 1, "\\u0001\\u0001", 12) == 0);
            pch_buf_dispose(&u);
        }
        free(t);
    }
    pch_buf_dispose(&b);

    /* Parse → serialize → parse again gives the same serialization (idempotent). */
    PCH_CHECK_OK(parse_str(p, "[-9223372036854775808,18446744073709551615,0.1,\"\\ud83d\\ude00\"]", &v), &err);
    PCH_CHECK_OK(pch_json_serialize(NULL, v, NULL, &out, &n, &err), &err);
    PCH_CHECK_EQ_STR(out, "[-9223372036854775808,18446744073709551615,0.1,\"\xf0\x9f\x98\x80\"]");
    pch_free(NULL, out);
    pch_json_parser_free(p);
}

/* ---------------------------------------------------------------- jansson differential */

typedef struct diff_stats {
    size_t docs, accepted, rejected, known_diff;
} diff_stats;

static int has_known_difference(const pch_json_value *v)
{
    switch ((pch_json_kind)v->kind) {
    case PCH_JSON_NUMBER:
        if ((v->num_flags & PCH_JSON_NUM_INT) && !(v->num_flags & PCH_JSON_NUM_I64)) return 1;
        return !isfinite(v->u.num.d);
    case PCH_JSON_ARRAY:
        for (uint32_t k = 0; k < v->n; k++) if (has_known_difference(&v->u.items[k])) return 1;
        return 0;
    case PCH_JSON_OBJECT:
        for (uint32_t k = 0; k < v->n; k++) {
            if (memchr(v->u.members[k].key, 0, v->u.members[k].key_len)) return 1;
            if (has_known_difference(&v->u.members[k].value)) return 1;
        }
        return 0;
    default:
        return 0;
    }
}

/* 1 if our tree equals jansson's (kinds, strings byte-equal, integers and reals equal). */
static int same_tree(const pch_json_value *v, const json_t *j)
{
    switch ((pch_json_kind)v->kind) {
    case PCH_JSON_NULL: return json_is_null(j);
    case PCH_JSON_TRUE: return json_is_true(j);
    case PCH_JSON_FALSE: return json_is_false(j);
    case PCH_JSON_STRING:
        return json_is_string(j) && json_string_length(j) == v->u.str.len &&
               memcmp(json_string_value(j), v->u.str.ptr, v->u.str.len) == 0;
    case PCH_JSON_NUMBER:
        if (v->num_flags & PCH_JSON_NUM_INT)
            return json_is_integer(j) && (v->num_flags & PCH_JSON_NUM_I64) &&
                   json_integer_value(j) == v->u.num.i;
        return json_is_real(j) && json_real_value(j) == v->u.num.d;
    case PCH_JSON_ARRAY:
        if (!json_is_array(j) || json_array_size(j) != v->n) return 0;
        for (uint32_t k = 0; k < v->n; k++)
            if (!same_tree(&v->u.items[k], json_array_get(j, k))) return 0;
        return 1;
    case PCH_JSON_OBJECT: {
        size_t unique = 0;
        if (!json_is_object(j)) return 0;
        for (uint32_t k = 0; k < v->n; k++) {
            const pch_json_member *m = &v->u.members[k];
            int later = 0;
            for (uint32_t l = k + 1; l < v->n && !later; l++)
                later = v->u.members[l].key_len == m->key_len &&
                        memcmp(v->u.members[l].key, m->key, m->key_len) == 0;
            if (later) continue;            /* jansson keeps the last duplicate */
            unique++;
            json_t *jv = json_object_getn(j, m->key, m->key_len);
            if (!jv || !same_tree(&m->value, jv)) return 0;
        }
        return unique == json_object_size(j);
    }
    }
    return 0;
}

/* jansson 2.14 silently skips raw NUL bytes in its input (its stream buffer treats 0 as
** "refill"), so it accepts e.g. "[1,\0 2]". We reject them; check that jansson's result is
** what we parse once the NUL bytes are removed. */
static int nul_stripped_matches(pch_json_parser *p, const char *s, size_t len, const json_t *j)
{
    char *t = malloc(len ? len : 1);
    size_t n = 0;
    const pch_json_value *v;
    int same;
    if (!t) return 0;
    for (size_t k = 0; k < len; k++) if (s[k]) t[n++] = s[k];
    same = pch_json_parser_parse(p, t, n, &v, NULL) == PCH_OK && same_tree(v, j);
    free(t);
    return same;
}

/* Parse one document with both; 0 if they agree (or differ only as documented). */
static int diff_one(pch_json_parser *p, const char *s, size_t len, diff_stats *ds,
                    const char *where)
{
    const pch_json_value *v;
    json_error_t je;
    int rc = pch_json_parser_parse(p, s, len, &v, &err);
    json_t *j = json_loadb(s, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    int bad = 0;
    ds->docs++;
    if (rc == PCH_OK && j) {
        ds->accepted++;
        if (!same_tree(v, j)) { fprintf(stderr, "  %s: values differ\n", where); bad = 1; }
    } else if (rc != PCH_OK && !j) {
        ds->rejected++;
        if (rc != PCH_EINVAL) { fprintf(stderr, "  %s: rc %d: %s\n", where, rc, err.msg); bad = 1; }
    } else if (rc == PCH_OK) {
        if (has_known_difference(v)) ds->known_diff++;
        else { fprintf(stderr, "  %s: jansson rejects (%s), we accept\n", where, je.text); bad = 1; }
    } else if (memchr(s, 0, len) && nul_stripped_matches(p, s, len, j)) {
        ds->known_diff++;
    } else {
        fprintf(stderr, "  %s: we reject (%s), jansson accepts\n", where, err.msg);
        bad = 1;
    }
    /* The validator agrees with the parser. */
    if (pch_json_validate(NULL, s, len, NULL, NULL, NULL, NULL) != rc && rc != PCH_ENOMEM) {
        fprintf(stderr, "  %s: validate disagrees with parse\n", where);
        bad = 1;
    }
    json_decref(j);
    return bad;
}

typedef struct file_list { char **paths; size_t n, cap; } file_list;

static void collect(file_list *fl, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) { collect(fl, path); continue; }
        size_t n = strlen(path);
        if (!(n > 5 && strcmp(path + n - 5, ".json") == 0) &&
            !(n > 6 && strcmp(path + n - 6, ".jsonl") == 0)) continue;
        if (fl->n == fl->cap) {
            fl->cap = fl->cap ? fl->cap * 2 : 64;
            fl->paths = realloc(fl->paths, fl->cap * sizeof *fl->paths);
        }
        fl->paths[fl->n++] = strdup(path);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *slurp(const char *path, size_t *len)
{
    pch_buf b;
    pch_buf_init(&b, NULL);
    if (pch_file_read_all(&b, path, (size_t)1 << 30, NULL) != PCH_OK) { pch_buf_dispose(&b); return NULL; }
    if (pch_buf_reserve(&b, 0) != PCH_OK) { pch_buf_dispose(&b); return NULL; }
    return (char *)pch_buf_detach(&b, len);
}

/* Calls fn on every document: whole .json files and each non-empty .jsonl line. */
static int for_each_doc(file_list *fl, int (*fn)(const char *, size_t, const char *, void *),
                        void *payload)
{
    int bad = 0;
    for (size_t f = 0; f < fl->n; f++) {
        size_t len;
        char *data = slurp(fl->paths[f], &len);
        char where[4200];
        if (!data) { fprintf(stderr, "  cannot read %s\n", fl->paths[f]); bad++; continue; }
        size_t n = strlen(fl->paths[f]);
        if (n > 6 && strcmp(fl->paths[f] + n - 6, ".jsonl") == 0) {
            size_t start = 0, line = 1;
            for (size_t i = 0; i <= len; i++) {
                if (i == len || data[i] == '\n') {
                    if (i > start) {
                        snprintf(where, sizeof where, "%s:%zu", fl->paths[f], line);
                        bad += fn(data + start, i - start, where, payload);
                    }
                    start = i + 1;
                    line++;
                }
            }
        } else {
            bad += fn(data, len, fl->paths[f], payload);
        }
        pch_free(NULL, data);
    }
    return bad;
}

typedef struct diff_ctx { pch_json_parser *p; diff_stats ds; } diff_ctx;

static int diff_cb(const char *s, size_t len, const char *where, void *payload)
{
    diff_ctx *dc = payload;
    return diff_one(dc->p, s, len, &dc->ds, where);
}

static void free_list(file_list *fl)
{
    for (size_t k = 0; k < fl->n; k++) free(fl->paths[k]);
    free(fl->paths);
}

static void test_json__differential_corpus(void)
{
    file_list fl = { NULL, 0, 0 };
    diff_ctx dc;
    pch_json_parse_options o = PCH_JSON_PARSE_OPTIONS_INIT;
    struct stat st;
    o.max_depth = 2048;  /* jansson's JSON_PARSER_MAX_DEPTH */
    PCH_CHECK_MSG(stat("../shared/corpus", &st) == 0 && S_ISDIR(st.st_mode),
                  "the shared corpus ../shared/corpus is missing (run from the repository root)");
    collect(&fl, "tests/data/json");
    size_t local = fl.n;
    collect(&fl, "../shared/corpus");
    PCH_CHECK_MSG(local >= 2, "tests/data/json has %zu files", local);
    PCH_CHECK_MSG(fl.n - local >= 50, "only %zu corpus files found", fl.n - local);
    qsort(fl.paths, fl.n, sizeof *fl.paths, cmp_str);
    memset(&dc, 0, sizeof dc);
    PCH_CHECK_OK(pch_json_parser_new(&dc.p, NULL, &o, &err), &err);
    int bad = for_each_doc(&fl, diff_cb, &dc);
    printf("differential: %zu files, %zu documents: %zu accepted by both, %zu rejected by both, "
           "%zu documented differences\n", fl.n, dc.ds.docs, dc.ds.accepted, dc.ds.rejected,
           dc.ds.known_diff);
    pch_json_parser_free(dc.p);
    free_list(&fl);
    PCH_CHECK_EQ_INT(bad, 0);
    PCH_CHECK(dc.ds.accepted > 1000);
}

/* Known differences, asserted one by one. */
static void test_json__differential_known(void)
{
    pch_json_parser *p;
    diff_stats ds;
    static const char *cases[] = {
        "18446744073709551615", "9223372036854775808", "18446744073709551616",
        "-9223372036854775809", "[1e400]", "{\"a\\u0000\":1}", "{\"a\":1,\"a\":2}",
        "-9223372036854775808", "\"\\u0000\"", "[0.1,-0,1E+2,true,false,null,{}]",
    };
    memset(&ds, 0, sizeof ds);
    PCH_CHECK_OK(pch_json_parser_new(&p, NULL, NULL, &err), &err);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        PCH_CHECK_EQ_INT(diff_one(p, cases[k], strlen(cases[k]), &ds, cases[k]), 0);
    PCH_CHECK_EQ_INT(ds.known_diff, 6);
    pch_json_parser_free(p);
}

/* Random mutations of corpus lines: both parsers accept/reject the same inputs. */
typedef struct mut_ctx {
    pch_json_parser *p;
    diff_stats ds;
    uint64_t rng;
    size_t budget;       /* mutated documents left */
    size_t docs_seen;
    char *buf;
} mut_ctx;

static uint64_t rnd(uint64_t *x) { *x ^= *x << 13; *x ^= *x >> 7; *x ^= *x << 17; return *x; }

static int mut_cb(const char *s, size_t len, const char *where, void *payload)
{
    static const uint8_t interesting[] = { '"', '\\', ',', ']', '}', '[', '{', ':', '0', '1',
        '-', '+', '.', 'e', 'u', ' ', '\n', 0x00, 0x01, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc3,
        0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff, 'n', 't', 'd', '/' };
    mut_ctx *mc = payload;
    int bad = 0;
    char w[4300];
    mc->docs_seen++;
    if (!mc->budget || len > 4096) return 0;
    for (int r = 0; r < 8 && mc->budget; r++, mc->budget--) {
        size_t n = len;
        memcpy(mc->buf, s, len);
        int edits = 1 + (int)(rnd(&mc->rng) % 3);
        for (int e = 0; e < edits && n; e++) {
            uint64_t x = rnd(&mc->rng);
            size_t at = (size_t)(x % n);
            switch ((x >> 32) % 4) {
            case 0: mc->buf[at] = (char)interesting[(x >> 40) % sizeof interesting]; break;
            case 1: mc->buf[at] = (char)(x >> 48); break;
            case 2: n = at + 1; break;                                         /* truncate */
            default:                                                           /* delete */
                memmove(mc->buf + at, mc->buf + at + 1, n - at - 1);
                n--;
                break;
            }
        }
        snprintf(w, sizeof w, "%s (mutation %d)", where, r);
        if (diff_one(mc->p, mc->buf, n, &mc->ds, w)) {
            fprintf(stderr, "    input: %.*s\n", (int)n, mc->buf);
            bad = 1;
        }
    }
    return bad;
}

static void test_json__differential_mutations(void)
{
    file_list fl = { NULL, 0, 0 };
    mut_ctx mc;
    pch_json_parse_options o = PCH_JSON_PARSE_OPTIONS_INIT;
    o.max_depth = 2048;
    collect(&fl, "tests/data/json");
    collect(&fl, "../shared/corpus");
    PCH_CHECK_MSG(fl.n > 0, "no corpus files");
    qsort(fl.paths, fl.n, sizeof *fl.paths, cmp_str);
    memset(&mc, 0, sizeof mc);
    mc.rng = 0x243F6A8885A308D3ull;
    mc.budget = 40000;
    mc.buf = malloc(4096);
    PCH_CHECK_OK(pch_json_parser_new(&mc.p, NULL, &o, &err), &err);
    int bad = for_each_doc(&fl, mut_cb, &mc);
    printf("mutations: %zu documents: %zu accepted by both, %zu rejected by both, %zu documented "
           "differences\n", mc.ds.docs, mc.ds.accepted, mc.ds.rejected, mc.ds.known_diff);
    pch_json_parser_free(mc.p);
    free(mc.buf);
    free_list(&fl);
    PCH_CHECK_EQ_INT(bad, 0);
    PCH_CHECK(mc.ds.rejected > 1000);
}

/* Out-of-memory at every allocation: clean PCH_ENOMEM, no leak (ASan checks). */
typedef struct fail_alloc { int countdown; } fail_alloc;
static void *fa_alloc(void *pl, size_t n)
{
    fail_alloc *f = pl;
    if (f->countdown-- == 0) return NULL;
    return malloc(n);
}
static void *fa_realloc(void *pl, void *p, size_t n)
{
    fail_alloc *f = pl;
    if (f->countdown-- == 0) return NULL;
    return realloc(p, n);
}
static void fa_free(void *pl, void *p) { (void)pl; free(p); }

static void test_json__oom(void)
{
    const char *txt = "{\"a\":[1,2,{\"b\":\"x\\ny\"}],\"c\":\"\\u00e9\",\"d\":1.5e300,\"e\":[[],{}]}";
    int ok = 0;
    for (int n = 0; n < 200 && !ok; n++) {
        fail_alloc f = { n };
        pch_allocator a = { fa_alloc, fa_realloc, fa_free, &f };
        pch_ctx *ctx;
        pch_json_parser *p = NULL;
        const pch_json_value *v;
        f.countdown = 1000;  /* the context itself */
        PCH_CHECK_OK(pch_ctx_new(&ctx, &a, NULL, &err), &err);
        f.countdown = n;
        int rc = pch_json_parser_new(&p, ctx, NULL, &err);
        if (rc == PCH_OK) rc = pch_json_parser_parse(p, txt, strlen(txt), &v, &err);
        if (rc == PCH_OK) {
            char *out;
            size_t len;
            rc = pch_json_serialize(ctx, v, txt, &out, &len, &err);
            if (rc == PCH_OK) { ok = 1; pch_free(ctx, out); }
        }
        PCH_CHECK_MSG(rc == PCH_OK || rc == PCH_ENOMEM, "n=%d rc=%d", n, rc);
        pch_json_parser_free(p);
        pch_ctx_free(ctx);
    }
    PCH_CHECK(ok);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "json_test");
    PCH_RUN(test_json__rejections);
    PCH_RUN(test_json__integer_extremes);
    PCH_RUN(test_json__doubles_match_strtod);
    PCH_RUN(test_json__doubles_long_mantissas);
    PCH_RUN(test_json__integers_every_length);
    PCH_RUN(test_json__compact_text);
    PCH_RUN(test_json__strings);
    PCH_RUN(test_json__spans_and_get);
    PCH_RUN(test_json__limits);
    PCH_RUN(test_json__validate);
    PCH_RUN(test_json__fmt_double);
    PCH_RUN(test_json__fmt_double_shortest);
    PCH_RUN(test_json__fmt_g17_f32);
    PCH_RUN(test_json__fmt_i64);
    PCH_RUN(test_json__serialize);
    PCH_RUN(test_json__differential_known);
    PCH_RUN(test_json__differential_corpus);
    PCH_RUN(test_json__differential_mutations);
    PCH_RUN(test_json__oom);
    return pch_test_report();
}
