/* Strict JSON parser and validator (RFC 8259; ARCHITECTURE.md §3 "src/json").
**
** One pass over the input, no recursion: open arrays/objects live on a frame stack bounded
** by max_depth; finished children collect on two scratch stacks (values for arrays,
** members for objects) and are copied into the parser's arena when their container closes,
** so items/members are contiguous. Strings without escapes point into the caller's text
** (zero copy); escaped strings are decoded in a scratch buffer and copied to the arena.
**
** Rejected (RFC 8259 §2-§8): trailing commas, comments, NaN/Infinity and other bare words,
** leading zeros, '+' signs, a fraction or exponent without digits, lone or mis-ordered
** UTF-16 surrogate escapes, invalid UTF-8 (RFC 3629: overlongs, surrogates, > U+10FFFF),
** raw control characters (< 0x20) in strings, a byte order mark, anything after the value.
** Whitespace is exactly space, tab, LF and CR. "\u0000" is kept (strings carry a length).
**
** Numbers: integers are classified exactly (int64 / uint64 flags, no rounding); the double
** is always set: integers convert with one rounding, simple reals use the exact Clinger
** fast path (<= 19 digits, |10^e| <= 22, mantissa <= 2^53), then on x86-64 the same with
** x87's 64-bit significand (<= 19 digits, |10^e| <= 27; x87_double), everything else goes through
** strtod_l in the "C" locale on a NUL-terminated copy.
**
** Error positions are byte offsets of the offending byte (end of input for truncation);
** line and column are 1-based, column counts bytes, lines end at LF. */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "json/json_int.h"

typedef struct json_frame {
    uint8_t kind;      /* PCH_JSON_ARRAY or PCH_JSON_OBJECT */
    size_t start;      /* index of the first child on the value or member stack */
    size_t off;        /* byte offset of the '[' or '{' */
} json_frame;

struct pch_json_parser {
    pch_ctx *ctx;
    uint32_t max_depth;
    size_t max_bytes;
    pch_arena arena;
    pch_json_value *vstack;  size_t vlen, vcap;
    pch_json_member *mstack; size_t mlen, mcap;
    json_frame *frames;      size_t fcap;
    uint8_t *sbuf;           size_t scap;   /* escape decoding / strtod scratch */
    pch_json_pos pos;
};

/* Per-parse state handed to the out-of-line helpers. */
typedef struct pstate {
    pch_json_parser *p;
    const uint8_t *s;
    size_t len;
    pch_error *err;
    int build;                /* 0 = validate only */
} pstate;

/* ---- limits and errors ---- */

static void limits_for(pch_ctx *ctx, const pch_json_parse_options *opts, uint32_t *depth,
                       size_t *bytes)
{
    const pch_limits *l = ctx ? pch_ctx_limits(ctx) : NULL;
    *depth = l ? l->max_json_depth : PCH_DEFAULT_MAX_JSON_DEPTH;
    *bytes = l ? l->max_line_bytes : PCH_DEFAULT_MAX_LINE_BYTES;
    if (opts && opts->max_depth) *depth = opts->max_depth;
    if (opts && opts->max_bytes) *bytes = opts->max_bytes;
}

static void pos_of(pch_json_pos *out, const uint8_t *s, size_t off)
{
    size_t line = 1, bol = 0;
    for (size_t k = 0; k < off; k++)
        if (s[k] == '\n') { line++; bol = k + 1; }
    out->offset = off;
    out->line = line;
    out->column = off - bol + 1;
}

/* Record a syntax/limit error at byte off. Cold path. */
__attribute__((cold, noinline)) PCH_PRINTF(4, 5)
static int fail(pstate *st, size_t off, int code, const char *fmt, ...)
{
    pch_json_pos pos;
    char what[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pos_of(&pos, st->s, off);
    st->p->pos = pos;
    return pch_error_set(st->err, code, "json: line %zu column %zu (byte %zu): %s",
                         pos.line, pos.column, pos.offset, what);
}

__attribute__((cold, noinline))
static int fail_oom(pstate *st, size_t off)
{
    pos_of(&st->p->pos, st->s, off);
    return pch_error_set(st->err, PCH_ENOMEM, "json: out of memory at byte %zu", off);
}

/* ---- scratch growth (never x = grow(x)) ---- */

static int grow(pch_ctx *ctx, void **ptr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap = *cap ? *cap : 64, bytes;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 4) { ncap = need; break; }
        ncap *= 2;
    }
    if (!pch_mul_size(&bytes, ncap, elem)) return PCH_ENOMEM;
    void *np = pch_realloc(ctx, *ptr, bytes);
    if (!np) return PCH_ENOMEM;
    *ptr = np;
    *cap = ncap;
    return PCH_OK;
}

static int sbuf_reserve(pch_json_parser *p, size_t used, size_t extra)
{
    size_t need;
    if (!pch_add_size(&need, used, extra) || !pch_add_size(&need, need, 1)) return PCH_ENOMEM;
    if (need <= p->scap) return PCH_OK;
    return grow(p->ctx, (void **)&p->sbuf, &p->scap, need, 1);
}

/* ---- character classes ---- */

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static inline int is_digit(uint8_t c) { return (unsigned)(c - '0') < 10u; }


size_t pch_json__utf8_check(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
#ifdef PCH_JSON_SSE2
            while (n - i >= 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
                unsigned mask = (unsigned)_mm_movemask_epi8(v);
                if (mask) { i += (size_t)__builtin_ctz(mask); break; }
                i += 16;
            }
#endif
            while (i < n && p[i] < 0x80) i++;
            continue;
        }
        size_t k = pch_json__utf8_seq(p + i, n - i);
        if (!k) return i;
        i += k;
    }
    return n;
}

static inline int hexval(uint8_t c)
{
    if (is_digit(c)) return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Four hex digits at s[i..i+4) (caller checked the length); -1 if any is not hex. */
static inline long hex4(const uint8_t *s)
{
    int a = hexval(s[0]), b = hexval(s[1]), c = hexval(s[2]), d = hexval(s[3]);
    if ((a | b | c | d) < 0) return -1;
    return (long)((a << 12) | (b << 8) | (c << 4) | d);
}

static size_t put_utf8(uint8_t *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { o[0] = (uint8_t)(0xC0 | (cp >> 6)); o[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12)); o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18)); o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- strings ---- */

/* Slow path: the string (body starting at `start`) has an escape at s[i]. Decodes into the
** scratch buffer (build mode) and copies the result into the arena. */
__attribute__((noinline))
static int string_escaped(pstate *st, size_t start, size_t i, size_t *end,
                          const char **out, size_t *out_len)
{
    const uint8_t *s = st->s;
    const size_t len = st->len;
    pch_json_parser *p = st->p;
    const int build = st->build;
    size_t o = 0;

    if (build) {
        if (sbuf_reserve(p, 0, i - start) != PCH_OK) return fail_oom(st, i);
        memcpy(p->sbuf, s + start, i - start);
        o = i - start;
    }
    for (;;) {
        size_t j = pch_json__scan_plain(s, len, i);
        if (build && j > i) {
            if (sbuf_reserve(p, o, j - i) != PCH_OK) return fail_oom(st, i);
            memcpy(p->sbuf + o, s + i, j - i);
            o += j - i;
        }
        i = j;
        if (i >= len) return fail(st, len, PCH_EINVAL, "unterminated string");
        uint8_t c = s[i];
        if (c == '"') break;
        if (c >= 0x80) {
            size_t k = pch_json__utf8_seq(s + i, len - i);
            if (!k) return fail(st, i, PCH_EINVAL, "invalid UTF-8 in string");
            if (build) {
                if (sbuf_reserve(p, o, k) != PCH_OK) return fail_oom(st, i);
                memcpy(p->sbuf + o, s + i, k);
                o += k;
            }
            i += k;
            continue;
        }
        if (c != '\\') return fail(st, i, PCH_EINVAL, "control character in string");
        if (len - i < 2) return fail(st, len, PCH_EINVAL, "unterminated string");
        uint8_t e = s[i + 1], ch;
        switch (e) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
            if (len - i < 6) return fail(st, len, PCH_EINVAL, "truncated \\u escape");
            long cp = hex4(s + i + 2);
            if (cp < 0) return fail(st, i, PCH_EINVAL, "invalid \\u escape");
            size_t esc = 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail(st, i, PCH_EINVAL, "lone low surrogate escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo;
                if (len - i < 12 || s[i + 6] != '\\' || s[i + 7] != 'u' ||
                    (lo = hex4(s + i + 8)) < 0xDC00 || lo > 0xDFFF)
                    return fail(st, i, PCH_EINVAL, "lone high surrogate escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                esc = 12;
            }
            if (build) {
                if (sbuf_reserve(p, o, 4) != PCH_OK) return fail_oom(st, i);
                o += put_utf8(p->sbuf + o, (uint32_t)cp);
            }
            i += esc;
            continue;
        }
        default:
            return fail(st, i, PCH_EINVAL, "invalid escape in string");
        }
        if (build) {
            if (sbuf_reserve(p, o, 1) != PCH_OK) return fail_oom(st, i);
            p->sbuf[o++] = ch;
        }
        i += 2;
    }
    *end = i + 1;
    if (build) {
        char *d = pch_arena_memdup(&p->arena, p->sbuf, o);
        if (!d) return fail_oom(st, i);
        *out = d;
        *out_len = o;
    }
    return PCH_OK;
}

/* s[i] is the byte after the opening quote. On success *end is the index after the closing
** quote and (build mode) *out, *out_len the decoded string. */
static inline int parse_string(pstate *st, size_t i, size_t *end, const char **out,
                               size_t *out_len)
{
    const uint8_t *s = st->s;
    const size_t len = st->len, start = i;
    for (;;) {
        i = pch_json__scan_plain(s, len, i);
        if (i >= len) return fail(st, len, PCH_EINVAL, "unterminated string");
        uint8_t c = s[i];
        if (c == '"') {
            *out = (const char *)s + start;
            *out_len = i - start;
            *end = i + 1;
            return PCH_OK;
        }
        if (c >= 0x80) {
            do {
                size_t k = pch_json__utf8_seq(s + i, len - i);
                if (!k) return fail(st, i, PCH_EINVAL, "invalid UTF-8 in string");
                i += k;
            } while (i < len && s[i] >= 0x80);
            continue;
        }
        if (c == '\\') return string_escaped(st, start, i, end, out, out_len);
        return fail(st, i, PCH_EINVAL, "control character in string");
    }
}

/* ---- numbers ---- */

/* Eight bytes at a time (SWAR): how many of s[0..8) are ASCII digits before the first
** non-digit, and their value. A byte is a digit iff its high nibble is 3 and adding 6 keeps
** it there; a carry out of a non-digit byte can only disturb the bytes after it. */
static const uint64_t pow10_u64[9] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000 };

static inline unsigned swar_digits(const uint8_t *s, uint64_t *value)
{
    uint64_t v, x, bad;
    unsigned k;
    memcpy(&v, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    bad = (((v & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
           (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull));
    k = bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
    *value = 0;
    if (!k) return 0;
    /* the k digits, most significant first in the low bytes, moved up so that zero bytes
    ** stand for leading zeros; then the standard 8-digit reduction */
    x = (v - 0x3030303030303030ull) << (8 * (8 - k));
    x = x * 10 + (x >> 8);
    x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
    *value = (uint32_t)x;
    return k;
}

static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/* Up to 19 digits with |e| <= 27 (the 17-digit shortest forms of doubles and floats, such
** as logprobs): m and 10^|e| (5^27 < 2^63) are exact in x87's 64-bit significand, so one
** multiplication or division rounds once, to 64 bits. Rounding that to 53 bits gives the
** correctly rounded double unless the 64-bit result lies exactly halfway between two
** doubles (its low 11 bits 0x400): only then, or outside the normal double range, or where
** long double is not 64-bit at run time (x87_exact), does strtod decide. */
#if defined(__x86_64__) && defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 64
#define PCH_JSON_X87_PATH 1
static const long double pow10_x87[28] = {
    1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L,
    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L
};

/* Is long double arithmetic really 64-bit? Not under valgrind, which runs x87 code in
** double precision: there the path would round twice, so it is off (checked once). */
static int x87_exact(void)
{
    static _Atomic int ok = -1;
    int v = ok;
    if (v < 0) {
        volatile long double one = 1.0L, tiny = 0x1p-60L;
        v = (long double)(one + tiny) != one;
        ok = v;
    }
    return v;
}

static inline int x87_double(uint64_t m, int e, double *out)
{
    long double r = (long double)m;
    uint64_t sig;
    r = e < 0 ? r / pow10_x87[-e] : r * pow10_x87[e];
    memcpy(&sig, &r, 8);                 /* the explicit 64-bit significand */
    if ((sig & 0x7ff) == 0x400 || !(r >= 0x1p-1022L && r <= 0x1.fffffffffffffp1023L)) return 0;
    *out = (double)r;
    return 1;
}
#else
#define PCH_JSON_X87_PATH 0
#endif

__attribute__((noinline))
static int slow_double(pstate *st, size_t start, size_t n, double *out)
{
    pch_json_parser *p = st->p;
    if (sbuf_reserve(p, 0, n) != PCH_OK) return fail_oom(st, start);
    memcpy(p->sbuf, st->s + start, n);
    p->sbuf[n] = 0;
    /* newlocale(LC_ALL_MASK, "C", 0) is glibc's static C locale: no allocation. */
    locale_t c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!c_loc) return fail_oom(st, start);
    *out = strtod_l((const char *)p->sbuf, NULL, c_loc);
    freelocale(c_loc);
    return PCH_OK;
}

/* s[i] is '-' or a digit. Fills v (build mode) and *end. */
static inline int parse_number(pstate *st, size_t i, size_t *end, pch_json_value *v)
{
    const uint8_t *s = st->s;
    const size_t len = st->len, start = i;
    int neg = 0, big = 0, is_int = 1, slow = 0;
    uint64_t m = 0;
    int nd = 0;           /* digits accumulated into m */
    int frac = 0;         /* of which after the '.' */

    if (s[i] == '-') {
        neg = 1;
        i++;
        if (i >= len || !is_digit(s[i])) return fail(st, i, PCH_EINVAL, "invalid number");
    }
    if (s[i] == '0') {
        i++;
        if (i < len && is_digit(s[i])) return fail(st, i, PCH_EINVAL, "leading zero in number");
    } else {
        /* Up to 19 digits cannot overflow uint64; the 20th is checked. */
        while (nd <= 11 && len - i >= 8) {
            uint64_t x;
            unsigned k = swar_digits(s + i, &x);
            m = m * pow10_u64[k] + x;
            nd += (int)k;
            i += k;
            if (k < 8) break;
        }
        while (i < len && is_digit(s[i])) {
            unsigned d = (unsigned)(s[i] - '0');
            if (nd < 19) {
                m = m * 10 + d;
                nd++;
            } else if (!big && (__builtin_mul_overflow(m, 10, &m) ||
                                __builtin_add_overflow(m, d, &m))) {
                big = 1;
            } else if (!big) {
                nd++;
            }
            i++;
        }
    }
    if (i < len && s[i] == '.') {
        is_int = 0;
        i++;
        if (i >= len || !is_digit(s[i]))
            return fail(st, i, PCH_EINVAL, "expected digit after decimal point");
        while (nd <= 11 && len - i >= 8) {
            uint64_t x;
            unsigned k = swar_digits(s + i, &x);
            m = m * pow10_u64[k] + x;
            nd += (int)k;
            frac += (int)k;
            i += k;
            if (k < 8) break;
        }
        while (i < len && is_digit(s[i])) {
            if (nd < 19) { m = m * 10 + (unsigned)(s[i] - '0'); nd++; frac++; }
            else slow = 1;
            i++;
        }
    }
    int e10 = 0;
    if (i < len && (s[i] | 0x20) == 'e') {
        int eneg = 0, ev = 0;
        is_int = 0;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) { eneg = s[i] == '-'; i++; }
        if (i >= len || !is_digit(s[i]))
            return fail(st, i, PCH_EINVAL, "expected digit in exponent");
        while (i < len && is_digit(s[i])) {
            if (ev < 100000) ev = ev * 10 + (s[i] - '0');
            i++;
        }
        e10 = eneg ? -ev : ev;
    }
    *end = i;
    if (!st->build) return PCH_OK;

    v->kind = PCH_JSON_NUMBER;
    v->span_off = start;
    v->span_len = i - start;
    v->n = 0;
    if (is_int) {
        uint8_t fl = PCH_JSON_NUM_INT | (neg ? PCH_JSON_NUM_NEG : 0);
        v->u.num.i = 0;
        v->u.num.u = 0;
        if (big) {  /* beyond uint64: neither I64 nor U64; nd == 20 is still exact */
            v->num_flags = fl;
            return slow_double(st, start, i - start, &v->u.num.d);
        }
        if (!neg) {
            fl |= PCH_JSON_NUM_U64;
            v->u.num.u = m;
            if (m <= (uint64_t)INT64_MAX) { fl |= PCH_JSON_NUM_I64; v->u.num.i = (int64_t)m; }
            v->u.num.d = (double)m;
        } else {
            if (m <= (uint64_t)INT64_MAX + 1) {
                fl |= PCH_JSON_NUM_I64;
                v->u.num.i = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
                if (m == 0) fl |= PCH_JSON_NUM_U64;
            }
            v->u.num.d = -(double)m;
        }
        v->num_flags = fl;
        return PCH_OK;
    }
    v->num_flags = neg ? PCH_JSON_NUM_NEG : 0;
    v->u.num.i = 0;
    v->u.num.u = 0;
    if (!slow && !big) {
        int e = e10 - frac;
        if (m == 0) { v->u.num.d = neg ? -0.0 : 0.0; return PCH_OK; }
        if (m <= (1ull << 53) && e >= -22 && e <= 22) {
            double d = (double)m;
            d = e < 0 ? d / pow10_exact[-e] : d * pow10_exact[e];
            v->u.num.d = neg ? -d : d;
            return PCH_OK;
        }
#if PCH_JSON_X87_PATH
        if (e >= -27 && e <= 27 && x87_exact() && x87_double(m, e, &v->u.num.d)) {
            if (neg) v->u.num.d = -v->u.num.d;
            return PCH_OK;
        }
#endif
    }
    return slow_double(st, start, i - start, &v->u.num.d);
}

/* ---- typed number arrays (json/json.h) ---- */

int pch_json__number_array(pch_json_parser *p, const char *text, size_t len, pch_json__array_kind kind, pch_buf *out,
                           size_t *used)
{
    const uint8_t *s = (const uint8_t *)text;
    const size_t w = kind == PCH_JSON__ARRAY_U32 ? 4 : 8, start_len = out->len;
    pstate st;
    size_t i = 0, end;
    pch_error quiet;
    pch_error_clear(&quiet);
    st.p = p; st.s = s; st.len = len; st.err = &quiet; st.build = 1;
    while (i < len && is_ws(s[i])) i++;
    if (i >= len || s[i] != '[') return 0;
    i++;
    while (i < len && is_ws(s[i])) i++;
    if (i < len && s[i] == ']') {
        i++;
    } else {
        for (;;) {
            pch_json_value v;
            if (i >= len || (s[i] != '-' && !is_digit(s[i]))) goto not_typed;
            if (parse_number(&st, i, &end, &v) < 0) {
                if (quiet.code == PCH_ENOMEM) { out->len = start_len; return PCH_ENOMEM; }
                goto not_typed;
            }
            if (out->cap - out->len < w + 1 && pch_buf_reserve(out, (out->len - start_len) + 64 * w) < 0) {
                out->len = start_len;
                return PCH_ENOMEM;
            }
            if (kind == PCH_JSON__ARRAY_U32) {
                uint32_t x;
                if ((v.num_flags & (PCH_JSON_NUM_INT | PCH_JSON_NUM_NEG | PCH_JSON_NUM_U64)) !=
                        (PCH_JSON_NUM_INT | PCH_JSON_NUM_U64) || v.u.num.u > 0xffffffffull)
                    goto not_typed;
                x = (uint32_t)v.u.num.u;
                memcpy(out->data + out->len, &x, 4);
            } else {
                if ((v.num_flags & PCH_JSON_NUM_INT) || !isfinite(v.u.num.d)) goto not_typed;
                memcpy(out->data + out->len, &v.u.num.d, 8);
            }
            out->len += w;
            i = end;
            while (i < len && is_ws(s[i])) i++;
            if (i < len && s[i] == ',') {
                i++;
                while (i < len && is_ws(s[i])) i++;
                continue;
            }
            if (i < len && s[i] == ']') { i++; break; }
            goto not_typed;
        }
    }
    if (used) {
        *used = i;
        return 1;
    }
    while (i < len && is_ws(s[i])) i++;
    if (i == len) return 1;
not_typed:
    out->len = start_len;
    return 0;
}

/* ---- the parser loop ---- */

static inline size_t skip_ws(const uint8_t *s, size_t len, size_t i)
{
    while (i < len && is_ws(s[i])) i++;
    return i;
}

/* Parse (build = 1) or validate (build = 0) s[0..len). */
static int run(pstate *st, pch_json_value *root_out, pch_json_kind *kind_out)
{
    pch_json_parser *p = st->p;
    const uint8_t *s = st->s;
    const size_t len = st->len;
    const int build = st->build;
    size_t i = 0, depth = 0, end = 0;
    pch_json_value v;
    int rc;

    memset(&v, 0, sizeof v);
    if (len > p->max_bytes) {
        pos_of(&p->pos, s, 0);
        return pch_error_set(st->err, PCH_ELIMIT, "json: text of %zu bytes exceeds the limit of %zu",
                             len, p->max_bytes);
    }
    p->vlen = p->mlen = 0;

value:
    i = skip_ws(s, len, i);
    if (i >= len) return fail(st, len, PCH_EINVAL, depth ? "unexpected end of input" : "empty input");
    switch (s[i]) {
    case '"': {
        const char *str = NULL;
        size_t slen = 0;
        if ((rc = parse_string(st, i + 1, &end, &str, &slen)) != PCH_OK) return rc;
        v.kind = PCH_JSON_STRING;
        if (build) {
            v.num_flags = 0;
            v.n = 0;
            v.span_off = i;
            v.span_len = end - i;
            v.u.str.ptr = str;
            v.u.str.len = slen;
        }
        i = end;
        goto done;
    }
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        if ((rc = parse_number(st, i, &end, &v)) != PCH_OK) return rc;
        v.kind = PCH_JSON_NUMBER;
        i = end;
        goto done;
    case 't':
        if (len - i < 4 || memcmp(s + i, "true", 4) != 0) return fail(st, i, PCH_EINVAL, "invalid literal");
        v.kind = PCH_JSON_TRUE;
        goto literal;
    case 'f':
        if (len - i < 5 || memcmp(s + i, "false", 5) != 0) return fail(st, i, PCH_EINVAL, "invalid literal");
        v.kind = PCH_JSON_FALSE;
        goto literal;
    case 'n':
        if (len - i < 4 || memcmp(s + i, "null", 4) != 0) return fail(st, i, PCH_EINVAL, "invalid literal");
        v.kind = PCH_JSON_NULL;
    literal:
        v.num_flags = 0;
        v.n = 0;
        v.span_off = i;
        v.span_len = v.kind == PCH_JSON_FALSE ? 5 : 4;
        i += v.span_len;
        goto done;
    case '[': case '{': {
        if (depth >= p->max_depth)
            return fail(st, i, PCH_ELIMIT, "nesting deeper than %u", p->max_depth);
        if (depth >= p->fcap &&
            grow(p->ctx, (void **)&p->frames, &p->fcap, depth + 1, sizeof(json_frame)) != PCH_OK)
            return fail_oom(st, i);
        json_frame *f = &p->frames[depth++];
        f->off = i;
        if (s[i] == '[') {
            f->kind = PCH_JSON_ARRAY;
            f->start = p->vlen;
            i = skip_ws(s, len, i + 1);
            if (i < len && s[i] == ']') goto close;
            goto value;
        }
        f->kind = PCH_JSON_OBJECT;
        f->start = p->mlen;
        i = skip_ws(s, len, i + 1);
        if (i < len && s[i] == '}') goto close;
        goto key;
    }
    default:
        return fail(st, i, PCH_EINVAL, "expected a value");
    }

key:  /* s[i] should open a member name; i is past whitespace */
    if (i >= len) return fail(st, len, PCH_EINVAL, "unexpected end of input");
    if (s[i] != '"') return fail(st, i, PCH_EINVAL, "expected a string key");
    {
        const char *str = NULL;
        size_t slen = 0;
        if ((rc = parse_string(st, i + 1, &end, &str, &slen)) != PCH_OK) return rc;
        if (build) {
            if (p->mlen == p->mcap &&
                grow(p->ctx, (void **)&p->mstack, &p->mcap, p->mlen + 1,
                     sizeof(pch_json_member)) != PCH_OK)
                return fail_oom(st, i);
            pch_json_member *mb = &p->mstack[p->mlen++];
            mb->key = str;
            mb->key_len = slen;
        }
        i = skip_ws(s, len, end);
        if (i >= len) return fail(st, len, PCH_EINVAL, "unexpected end of input");
        if (s[i] != ':') return fail(st, i, PCH_EINVAL, "expected ':' after key");
        i++;
        goto value;
    }

done:  /* v is complete; s[i] follows it */
    if (depth == 0) {
        i = skip_ws(s, len, i);
        if (i < len) return fail(st, i, PCH_EINVAL, "unexpected data after the value");
        if (build) *root_out = v;
        if (kind_out) *kind_out = (pch_json_kind)v.kind;
        return PCH_OK;
    }
    {
        json_frame *f = &p->frames[depth - 1];
        if (build) {
            if (f->kind == PCH_JSON_ARRAY) {
                if (p->vlen == p->vcap &&
                    grow(p->ctx, (void **)&p->vstack, &p->vcap, p->vlen + 1,
                         sizeof(pch_json_value)) != PCH_OK)
                    return fail_oom(st, i);
                p->vstack[p->vlen++] = v;
            } else {
                p->mstack[p->mlen - 1].value = v;
            }
        }
        i = skip_ws(s, len, i);
        if (i >= len) return fail(st, len, PCH_EINVAL, "unexpected end of input");
        uint8_t c = s[i];
        if (c == ',') {
            i = skip_ws(s, len, i + 1);
            if (f->kind == PCH_JSON_ARRAY) goto value;
            goto key;
        }
        if ((c == ']' && f->kind == PCH_JSON_ARRAY) || (c == '}' && f->kind == PCH_JSON_OBJECT))
            goto close;
        return fail(st, i, PCH_EINVAL, f->kind == PCH_JSON_ARRAY ? "expected ',' or ']'"
                                                                  : "expected ',' or '}'");
    }

close:  /* s[i] is the closing bracket of frames[depth-1] */
    {
        json_frame *f = &p->frames[--depth];
        i++;
        if (build) {
            size_t n;
            v.kind = f->kind;
            v.num_flags = 0;
            v.span_off = f->off;
            v.span_len = i - f->off;
            if (f->kind == PCH_JSON_ARRAY) {
                n = p->vlen - f->start;
                v.u.items = NULL;
                if (n) {
                    if (n > UINT32_MAX) return fail(st, f->off, PCH_ELIMIT, "array has too many items");
                    pch_json_value *items = pch_arena_alloc(&p->arena, n * sizeof *items);
                    if (!items) return fail_oom(st, i);
                    memcpy(items, p->vstack + f->start, n * sizeof *items);
                    v.u.items = items;
                }
                p->vlen = f->start;
            } else {
                n = p->mlen - f->start;
                v.u.members = NULL;
                if (n) {
                    if (n > UINT32_MAX) return fail(st, f->off, PCH_ELIMIT, "object has too many members");
                    pch_json_member *ms = pch_arena_alloc(&p->arena, n * sizeof *ms);
                    if (!ms) return fail_oom(st, i);
                    memcpy(ms, p->mstack + f->start, n * sizeof *ms);
                    v.u.members = ms;
                }
                p->mlen = f->start;
            }
            v.n = (uint32_t)n;
        } else {
            v.kind = f->kind;
        }
        goto done;
    }
}

/* ---- public API ---- */

int pch_json_parser_new(pch_json_parser **out, pch_ctx *ctx, const pch_json_parse_options *opts,
                        pch_error *err)
{
    *out = NULL;
    if (opts && opts->version != PCH_JSON_PARSE_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "json: unknown parse options version %u", opts->version);
    pch_json_parser *p = pch_calloc(ctx, 1, sizeof *p);
    if (!p) return pch_error_set(err, PCH_ENOMEM, "json: out of memory allocating parser");
    p->ctx = ctx;
    limits_for(ctx, opts, &p->max_depth, &p->max_bytes);
    pch_arena_init(&p->arena, ctx, 64 * 1024);
    *out = p;
    return PCH_OK;
}

void pch_json_parser_free(pch_json_parser *p)
{
    if (!p) return;
    pch_arena_dispose(&p->arena);
    pch_free(p->ctx, p->vstack);
    pch_free(p->ctx, p->mstack);
    pch_free(p->ctx, p->frames);
    pch_free(p->ctx, p->sbuf);
    pch_free(p->ctx, p);
}

int pch_json_parser_parse(pch_json_parser *p, const char *text, size_t len,
                          const pch_json_value **root, pch_error *err)
{
    pch_json_value v;
    pstate st;
    int rc;

    *root = NULL;
    if (!p || (!text && len)) return pch_error_set(err, PCH_EINVAL, "json: invalid argument");
    memset(&p->pos, 0, sizeof p->pos);
    pch_arena_reset(&p->arena);
    st.p = p;
    st.s = (const uint8_t *)(text ? text : "");
    st.len = len;
    st.err = err;
    st.build = 1;
    rc = run(&st, &v, NULL);
    if (rc != PCH_OK) return rc;
    pch_json_value *r = pch_arena_alloc(&p->arena, sizeof *r);
    if (!r) return fail_oom(&st, len);
    *r = v;
    *root = r;
    return PCH_OK;
}

void pch_json_parser_error_pos(const pch_json_parser *p, pch_json_pos *out)
{
    if (!p) { memset(out, 0, sizeof *out); return; }
    *out = p->pos;
}

int pch_json_validate(pch_ctx *ctx, const char *text, size_t len,
                      const pch_json_parse_options *opts, pch_json_kind *kind_out,
                      pch_json_pos *pos_out, pch_error *err)
{
    pch_json_parser p;
    pstate st;
    int rc;

    if (pos_out) memset(pos_out, 0, sizeof *pos_out);
    if (kind_out) *kind_out = PCH_JSON_NULL;
    if (!text && len) return pch_error_set(err, PCH_EINVAL, "json: invalid argument");
    if (opts && opts->version != PCH_JSON_PARSE_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "json: unknown parse options version %u", opts->version);
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    limits_for(ctx, opts, &p.max_depth, &p.max_bytes);
    st.p = &p;
    st.s = (const uint8_t *)(text ? text : "");
    st.len = len;
    st.err = err;
    st.build = 0;
    rc = run(&st, NULL, kind_out);
    if (rc != PCH_OK && pos_out) *pos_out = p.pos;
    if (rc != PCH_OK && kind_out) *kind_out = PCH_JSON_NULL;
    pch_free(ctx, p.frames);
    pch_free(ctx, p.sbuf);
    return rc;
}

const pch_json_value *pch_json_get(const pch_json_value *v, const char *key, size_t key_len)
{
    if (!v || v->kind != PCH_JSON_OBJECT || (!key && key_len)) return NULL;
    for (uint32_t k = 0; k < v->n; k++) {
        const pch_json_member *m = &v->u.members[k];
        if (m->key_len == key_len && (key_len == 0 || memcmp(m->key, key, key_len) == 0))
            return &m->value;
    }
    return NULL;
}
