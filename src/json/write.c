/* Compact JSON writer (RFC 8259 §7 string escaping) and shortest round-trip double text.
**
** Strings: '"', '\\' and C0 controls are escaped (\b \f \n \r \t, others \u00xx in
** lower-case hex), everything else is copied; that is serde_json's choice, which is what
** Lance prints for JSON columns (lance-format.md §3.2; fixtures/lance/expected). Input
** strings must be valid UTF-8: the writer checks and refuses (fail closed).
**
** Doubles: the shortest decimal that strtod reads back to the same double (found by
** rounding to 15..17, or 1..17, significant digits with glibc's exact printf), laid out as Rust's ryu
** crate does (used by serde_json and Databend jsonb): "1.0", "0.001", "1e-7", "1.5e300".
** printf and strtod run in the "C" locale (uselocale / strtod_l) so LC_NUMERIC never
** changes the output. */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "json/json_int.h"

/* ---- numbers ---- */

/* Two digits at a time from a table: integers are most of what `sql` prints (CSV, JSON
** lines) and what the writer emits for counts, so this runs once per cell. */
static const char k_digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static size_t fmt_u64(char *out, uint64_t v)
{
    char tmp[24];
    size_t n = sizeof tmp;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        tmp[--n] = k_digits2[d + 1];
        tmp[--n] = k_digits2[d];
    }
    if (v >= 10) { tmp[--n] = k_digits2[v * 2 + 1]; tmp[--n] = k_digits2[v * 2]; }
    else tmp[--n] = (char)('0' + v);
    memcpy(out, tmp + n, sizeof tmp - n);
    out[sizeof tmp - n] = 0;
    return sizeof tmp - n;
}

static size_t fmt_i64(char *out, int64_t v)
{
    if (v >= 0) return fmt_u64(out, (uint64_t)v);
    out[0] = '-';
    return 1 + fmt_u64(out + 1, (uint64_t)0 - (uint64_t)v);
}

size_t pch_json__fmt_i64(char out[24], int64_t v) { return fmt_i64(out, v); }
size_t pch_json__fmt_u64(char out[24], uint64_t v) { return fmt_u64(out, v); }

/* The "C" locale, made once (newlocale per number cost more than the printing). */
static locale_t g_c_loc;
static pthread_once_t g_c_once = PTHREAD_ONCE_INIT;
static void c_loc_init(void) { g_c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

/* d rounded to prec significant digits (glibc's printf rounds the exact binary value):
** the digits into dig (n returned), the decimal exponent of the first into *e; true when
** strtod reads them back to d. */
static bool round_trips(double d, int prec, char dig[20], int *n_out, int *e_out)
{
    char tmp[48], chk[48];
    int n = 0, e;
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
    /* tmp = D[.DDD]e±XX */
    const char *q = tmp;
    while (*q && *q != 'e') {
        if (*q >= '0' && *q <= '9') dig[n++] = *q;
        q++;
    }
    e = *q == 'e' ? atoi(q + 1) : 0;
    /* chk = "D.DDDe<e>" */
    size_t c = 0;
    chk[c++] = dig[0];
    chk[c++] = '.';
    for (int k = 1; k < n; k++) chk[c++] = dig[k];
    snprintf(chk + c, sizeof chk - c, "e%d", e);
    *n_out = n;
    *e_out = e;
    return (g_c_loc ? strtod_l(chk, NULL, g_c_loc) : strtod(chk, NULL)) == d;
}

/* Digits (no leading zero) and decimal exponent of the shortest round-trip form of a
** finite, positive d: d ~= 0.D * 10^(kk). Returns the number of digits.
**
** The shortest form is the least precision p in 1..17 whose rounding reads back to d. For
** a normal double that is not a power of two this needs at most three roundings, not 17:
** its rounding interval is symmetric, so a nearer rounding (more digits) reads back
** whenever a coarser one does; and two 15-digit decimals never read back to the same
** normal double (DBL_DIG), so when some p <= 15 reads back, the 15-digit rounding is that
** p-digit form padded with zeros. Powers of two (whose interval is lopsided) and
** subnormals (fewer than 15 digits of precision) take every precision in turn. */
static int shortest_digits(double d, char dig[20], int *kk_out)
{
    int n = 0, e = 0;
    locale_t old;
    uint64_t bits;
    pthread_once(&g_c_once, c_loc_init);
    old = g_c_loc ? uselocale(g_c_loc) : (locale_t)0;
    memcpy(&bits, &d, sizeof bits);
    if (d >= DBL_MIN && (bits & ((UINT64_C(1) << 52) - 1)) != 0) {
        if (!round_trips(d, 15, dig, &n, &e) && !round_trips(d, 16, dig, &n, &e)) round_trips(d, 17, dig, &n, &e);
    } else {
        for (int prec = 1; prec <= 17; prec++)
            if (round_trips(d, prec, dig, &n, &e)) break;
    }
    if (g_c_loc) uselocale(old);
    while (n > 1 && dig[n - 1] == '0') n--;
    dig[n] = 0;
    *kk_out = e + 1;
    return n;
}

size_t pch_json__fmt_double(char out[32], double d)
{
    char dig[20];
    size_t o = 0;
    if (isnan(d)) { memcpy(out, "NaN", 4); return 3; }
    if (isinf(d)) {
        if (d < 0) { memcpy(out, "-Infinity", 10); return 9; }
        memcpy(out, "Infinity", 9);
        return 8;
    }
    if (signbit(d)) { out[o++] = '-'; d = -d; }
    if (d == 0) { memcpy(out + o, "0.0", 4); return o + 3; }
    int kk, n = shortest_digits(d, dig, &kk);
    int k = kk - n;  /* exponent of the last digit */
    if (k >= 0 && kk <= 16) {                 /* 1234e7 -> 12340000000.0 */
        memcpy(out + o, dig, (size_t)n); o += (size_t)n;
        for (int z = 0; z < k; z++) out[o++] = '0';
        out[o++] = '.'; out[o++] = '0';
    } else if (kk > 0 && kk <= 16) {          /* 1234e-2 -> 12.34 */
        memcpy(out + o, dig, (size_t)kk); o += (size_t)kk;
        out[o++] = '.';
        memcpy(out + o, dig + kk, (size_t)(n - kk)); o += (size_t)(n - kk);
    } else if (kk > -5 && kk <= 0) {          /* 1234e-6 -> 0.001234 */
        out[o++] = '0'; out[o++] = '.';
        for (int z = 0; z < -kk; z++) out[o++] = '0';
        memcpy(out + o, dig, (size_t)n); o += (size_t)n;
    } else {                                  /* 1e30, 1.234e33, 1.5e-7 */
        out[o++] = dig[0];
        if (n > 1) {
            out[o++] = '.';
            memcpy(out + o, dig + 1, (size_t)(n - 1)); o += (size_t)(n - 1);
        }
        out[o++] = 'e';
        char eb[16];
        size_t el = fmt_i64(eb, kk - 1);
        memcpy(out + o, eb, el); o += el;
    }
    out[o] = 0;
    return o;
}

/* glibc's "%.17g" of a double that holds a float32 value (the float32 logprob lanes), without
** printf: such a value is m * 2^q with m < 2^24, so for q >= -44 it is exactly N * 10^-k with
** N = m * 5^k < 2^127 (k = -q; or N = m * 2^q and k = 0 for q >= 0, below 2^127), and its 17
** significant digits are N's rounded half to even, as glibc rounds an exact tie in the default
** rounding mode. Then %g's layout: exponent form for a decimal exponent below -4 or above 16,
** else fixed; trailing zeros and a bare point dropped. Returns 0 where it does not apply (not
** a float32, zero, non-finite, q < -44, |v| >= 2^127: printf's job); unit-tested against
** printf. */
size_t pch_json__fmt_g17_f32(char out[32], double v)
{
    float fv = (float)v;
    uint32_t bits, m;
    int q, k = 0, D = 0, X;
    unsigned __int128 N;
    char dig[48];
    size_t o = 0;
    if (!(v == v) || (double)fv != v || v == 0) return 0;
    memcpy(&bits, &fv, sizeof bits);
    if (((bits >> 23) & 0xff) == 0xff) return 0;
    m = bits & 0x7fffff;
    if ((bits >> 23) & 0xff) { m |= 0x800000; q = (int)((bits >> 23) & 0xff) - 150; }
    else q = -149;
    while (!(m & 1)) { m >>= 1; q++; }
    if (q < -44 || 32 - __builtin_clz(m) + q > 127) return 0;   /* N < 2^127: two u64 halves */
    if (q >= 0) N = (unsigned __int128)m << q;
    else {
        static const uint64_t p5[28] = {   /* 5^0 .. 5^27, the powers a u64 holds */
            1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125, 9765625, 48828125, 244140625,
            1220703125, 6103515625, 30517578125, 152587890625, 762939453125, 3814697265625,
            19073486328125, 95367431640625, 476837158203125, 2384185791015625, 11920928955078125,
            59604644775390625, 298023223876953125, 1490116119384765625, 7450580596923828125 };
        k = -q;
        N = (unsigned __int128)m * (k > 27 ? p5[27] : p5[k]);
        if (k > 27) N *= p5[k - 27];
    }
    {   /* N's digits: two u64 halves of at most 19 digits */
        const uint64_t E19 = UINT64_C(10000000000000000000);
        uint64_t hi = (uint64_t)(N / E19), lo = (uint64_t)(N % E19);
        char t[24];
        if (hi) {
            size_t n = fmt_u64(t, hi);
            memcpy(dig, t, n); D = (int)n;
            n = fmt_u64(t, lo);
            memset(dig + D, '0', 19 - n); memcpy(dig + D + 19 - n, t, n); D += 19;
        } else {
            size_t n = fmt_u64(t, lo);
            memcpy(dig, t, n); D = (int)n;
        }
    }
    X = D - 1 - k;                              /* decimal exponent of the first digit */
    if (D > 17) {                               /* round to 17 digits, half to even */
        int up = dig[17] > '5';
        if (dig[17] == '5') {
            up = 0;
            for (int i = 18; i < D; i++) if (dig[i] != '0') { up = 1; break; }
            if (!up) up = (dig[16] - '0') & 1;
        }
        D = 17;
        if (up) {
            int i = 16;
            while (i >= 0 && dig[i] == '9') dig[i--] = '0';
            if (i >= 0) dig[i]++;
            else { dig[0] = '1'; X++; }         /* 999... -> 1000...: one more decimal place */
        }
    }
    while (D > 1 && dig[D - 1] == '0') D--;     /* %g drops trailing zeros */
    if (bits >> 31) out[o++] = '-';
    if (X < -4 || X >= 17) {
        out[o++] = dig[0];
        if (D > 1) { out[o++] = '.'; memcpy(out + o, dig + 1, (size_t)D - 1); o += (size_t)D - 1; }
        out[o++] = 'e';
        out[o++] = X < 0 ? '-' : '+';
        int ax = X < 0 ? -X : X;
        if (ax >= 100) out[o++] = (char)('0' + ax / 100);
        out[o++] = (char)('0' + ax / 10 % 10);
        out[o++] = (char)('0' + ax % 10);
    } else if (X >= 0) {
        for (int i = 0; i <= X; i++) out[o++] = i < D ? dig[i] : '0';
        if (D > X + 1) { out[o++] = '.'; memcpy(out + o, dig + X + 1, (size_t)(D - X - 1)); o += (size_t)(D - X - 1); }
    } else {
        out[o++] = '0'; out[o++] = '.';
        for (int i = 0; i < -X - 1; i++) out[o++] = '0';
        memcpy(out + o, dig, (size_t)D); o += (size_t)D;
    }
    out[o] = 0;
    return o;
}

/* ---- strings ---- */

static const char hexd[] = "0123456789abcdef";

/* pch_buf_reserve without the call when there is room (the string writers' inner loops). */
static inline int room(pch_buf *b, size_t n)
{
    return !b->oom && b->data && b->cap - b->len > n ? PCH_OK : pch_buf_reserve(b, n);
}

/* The second byte of the two-byte escape of each byte JSON cannot hold in a string ('"',
** '\\', C0 controls), or 0 where the escape is \u00XX. A table, not a switch: in text dense
** with newlines and quotes the switch's indirect jump mispredicted. */
static const uint8_t esc2[256] = {
    ['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
};

/* The escape of such a byte at o; its length. */
static inline size_t escape_byte(uint8_t *o, uint8_t c)
{
    o[0] = '\\';
    if (esc2[c]) { o[1] = esc2[c]; return 2; }
    o[1] = 'u'; o[2] = '0'; o[3] = '0';
    o[4] = (uint8_t)hexd[c >> 4]; o[5] = (uint8_t)hexd[c & 15];
    return 6;
}

/* The body of a JSON string for s[0..n) of checked UTF-8 into o, which has room for 6n + 16
** bytes; its length. Sixteen bytes are stored before they are looked at and the output
** only advances past the plain ones, so text dense in escapes (newlines, the quotes of a
** JSON text made a string) costs no call per run of plain bytes. */
static size_t escape_body(uint8_t *o, const uint8_t *s, size_t n)
{
    size_t i = 0, w = 0;
#ifdef PCH_JSON_SSE2
    while (n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned mask = pch_json__escape_mask16(v);
        _mm_storeu_si128((__m128i *)(void *)(o + w), v);
        if (!mask) { i += 16; w += 16; continue; }
        unsigned k = (unsigned)__builtin_ctz(mask);
        i += k;
        w += k;
        w += escape_byte(o + w, s[i++]);
    }
#endif
    for (; i < n; i++) {
        uint8_t c = s[i];
        if (c == '"' || c == '\\' || c < 0x20) w += escape_byte(o + w, c);
        else o[w++] = c;
    }
    return w;
}

/* As pch_json__write_string for text the caller has checked to be UTF-8 (a decoded utf8
** lane, a validated JSON text): only the bytes JSON escapes are looked at. The text goes
** through in pieces so the worst case (every byte a \u00XX) is reserved per piece, not
** for the whole text. */
int pch_json__write_utf8(pch_buf *out, const char *str, size_t len)
{
    enum { PIECE = 16384 };
    const uint8_t *s = (const uint8_t *)str;
    if (room(out, 2 + (len < PIECE ? 6 * len + 16 : 0)) != PCH_OK) return PCH_ENOMEM;
    out->data[out->len++] = '"';
    for (size_t i = 0; i < len;) {
        size_t n = len - i < PIECE ? len - i : PIECE;
        if (room(out, 6 * n + 18) != PCH_OK) return PCH_ENOMEM;
        out->len += escape_body(out->data + out->len, s + i, n);
        i += n;
    }
    out->data[out->len++] = '"';
    out->data[out->len] = 0;
    return PCH_OK;
}

int pch_json__write_string(pch_buf *out, const char *str, size_t len)
{
    const uint8_t *s = (const uint8_t *)str;
    const size_t save = out->len;
    size_t i = 0, extra;

    if (!pch_add_size(&extra, len, 2) || pch_buf_reserve(out, extra) != PCH_OK) return PCH_ENOMEM;
    out->data[out->len++] = '"';
    for (;;) {
        size_t j = pch_json__scan_plain(s, len, i);
        if (j > i) {
            if (room(out, j - i + 1) != PCH_OK) goto oom;
            memcpy(out->data + out->len, s + i, j - i);
            out->len += j - i;
        }
        i = j;
        if (i >= len) break;
        uint8_t c = s[i];
        if (c >= 0x80) {
            size_t k = pch_json__utf8_seq(s + i, len - i);
            if (!k) { out->len = save; if (out->data) out->data[save] = 0; return PCH_EINVAL; }
            if (room(out, k + 1) != PCH_OK) goto oom;
            memcpy(out->data + out->len, s + i, k);
            out->len += k;
            i += k;
            continue;
        }
        if (room(out, 7) != PCH_OK) goto oom;
        out->len += escape_byte(out->data + out->len, c);
        i++;
    }
    if (pch_buf_putc(out, '"') != PCH_OK) goto oom;
    out->data[out->len] = 0;
    return PCH_OK;
oom:
    out->len = save;
    if (out->data) out->data[save] = 0;
    return PCH_ENOMEM;
}

/* ---- values ---- */

static uint32_t depth_limit(const pch_buf *out)
{
    return out->ctx ? pch_ctx_limits(out->ctx)->max_json_depth : PCH_DEFAULT_MAX_JSON_DEPTH;
}

static int write_number(pch_buf *out, const pch_json_value *v, const char *src)
{
    char tmp[40];
    size_t n;
    if (src) return pch_buf_append(out, src + v->span_off, v->span_len);
    if (v->num_flags & PCH_JSON_NUM_INT) {
        if ((v->num_flags & PCH_JSON_NUM_U64) && !(v->num_flags & PCH_JSON_NUM_NEG)) {
            n = fmt_u64(tmp, v->u.num.u);
            return pch_buf_append(out, tmp, n);
        }
        if (v->num_flags & PCH_JSON_NUM_I64) {
            if (v->u.num.i == 0) return pch_buf_append(out, "-0", 2);  /* NEG set */
            n = fmt_i64(tmp, v->u.num.i);
            return pch_buf_append(out, tmp, n);
        }
    }
    if (!isfinite(v->u.num.d)) return PCH_EINVAL;
    n = pch_json__fmt_double(tmp, v->u.num.d);
    return pch_buf_append(out, tmp, n);
}

static int write_rec(pch_buf *out, const pch_json_value *v, const char *src, uint32_t depth,
                     uint32_t max_depth)
{
    int rc;
    switch ((pch_json_kind)v->kind) {
    case PCH_JSON_NULL: return pch_buf_append(out, "null", 4);
    case PCH_JSON_FALSE: return pch_buf_append(out, "false", 5);
    case PCH_JSON_TRUE: return pch_buf_append(out, "true", 4);
    case PCH_JSON_NUMBER: return write_number(out, v, src);
    case PCH_JSON_STRING: return pch_json__write_string(out, v->u.str.ptr, v->u.str.len);
    case PCH_JSON_ARRAY:
        if (depth >= max_depth) return PCH_ELIMIT;
        PCH_TRY(pch_buf_putc(out, '['));
        for (uint32_t k = 0; k < v->n; k++) {
            if (k) PCH_TRY(pch_buf_putc(out, ','));
            if ((rc = write_rec(out, &v->u.items[k], src, depth + 1, max_depth)) != PCH_OK) return rc;
        }
        return pch_buf_putc(out, ']');
    case PCH_JSON_OBJECT:
        if (depth >= max_depth) return PCH_ELIMIT;
        PCH_TRY(pch_buf_putc(out, '{'));
        for (uint32_t k = 0; k < v->n; k++) {
            const pch_json_member *m = &v->u.members[k];
            if (k) PCH_TRY(pch_buf_putc(out, ','));
            PCH_TRY(pch_json__write_string(out, m->key, m->key_len));
            PCH_TRY(pch_buf_putc(out, ':'));
            if ((rc = write_rec(out, &m->value, src, depth + 1, max_depth)) != PCH_OK) return rc;
        }
        return pch_buf_putc(out, '}');
    }
    return PCH_EINVAL;
}

int pch_json__write_value(pch_buf *out, const pch_json_value *v, const char *src)
{
    size_t save = out->len;
    int rc = write_rec(out, v, src, 0, depth_limit(out));
    if (rc != PCH_OK) {
        out->len = save;
        if (out->data) out->data[save] = 0;
        if (rc == PCH_ENOMEM) out->oom = 0;  /* reported here; the buffer stays usable */
    }
    return rc;
}

int pch_json_serialize(pch_ctx *ctx, const pch_json_value *v, const char *src, char **out,
                       size_t *len_out, pch_error *err)
{
    pch_buf b;
    int rc;
    *out = NULL;
    if (len_out) *len_out = 0;
    if (!v) return pch_error_set(err, PCH_EINVAL, "json: serialize: no value");
    pch_buf_init(&b, ctx);
    rc = pch_json__write_value(&b, v, src);   /* always writes >= 1 byte: b.data is set */
    if (rc != PCH_OK) {
        pch_buf_dispose(&b);
        switch (rc) {
        case PCH_ENOMEM: return pch_error_set(err, rc, "json: out of memory serializing");
        case PCH_ELIMIT: return pch_error_set(err, rc, "json: serialize: nesting deeper than %u",
                                              ctx ? pch_ctx_limits(ctx)->max_json_depth
                                                  : PCH_DEFAULT_MAX_JSON_DEPTH);
        default: return pch_error_set(err, rc, "json: serialize: invalid UTF-8 string or non-finite number");
        }
    }
    *out = (char *)pch_buf_detach(&b, len_out);
    return PCH_OK;
}

int pch_json_base64_decode(const char *in, size_t n, uint8_t *out, size_t *out_len,
                           pch_error *err)
{
    return pch_base64_decode_into(out, out_len, in, n, err);
}

size_t pch_json_format_double(char out[32], double d) { return pch_json__fmt_double(out, d); }

/* Next '"' or '\\' in p[i..n) (n when none). */
static size_t next_quote_or_backslash(const uint8_t *p, size_t n, size_t i)
{
#ifdef PCH_JSON_SSE2
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)));
        if (m) return i + (size_t)__builtin_ctz(m);
    }
#endif
    for (; i < n; i++)
        if (p[i] == '"' || p[i] == '\\') return i;
    return n;
}

/* Next '"' or byte <= 0x20 in p[i..n) (n when none): between tokens. */
static size_t next_quote_or_space(const uint8_t *p, size_t n, size_t i)
{
#ifdef PCH_JSON_SSE2
    const __m128i q = _mm_set1_epi8('"'), sp = _mm_set1_epi8(0x20);
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(_mm_min_epu8(v, sp), v));
        unsigned k = (unsigned)_mm_movemask_epi8(m);
        if (k) return i + (size_t)__builtin_ctz(k);
    }
#endif
    for (; i < n; i++)
        if (p[i] == '"' || p[i] <= 0x20) return i;
    return n;
}

static int lower_hex(uint8_t c) { return (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1; }

bool pch_json__is_compact(const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    for (;;) {
        i = next_quote_or_space(p, n, i);
        if (i >= n) return true;
        if (p[i] != '"') return false;              /* whitespace between tokens */
        for (i++;;) {                               /* inside a string */
            i = next_quote_or_backslash(p, n, i);
            if (i >= n) return false;
            if (p[i] == '"') { i++; break; }
            /* an escape: only the forms pch_json__write_string writes */
            if (n - i < 2) return false;
            switch (p[i + 1]) {
            case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
                i += 2;
                continue;
            case 'u': {
                int h, l;
                if (n - i < 6 || p[i + 2] != '0' || p[i + 3] != '0' || (h = lower_hex(p[i + 4])) < 0 || h > 1 ||
                    (l = lower_hex(p[i + 5])) < 0)
                    return false;
                l += 16 * h;
                if (l == '\b' || l == '\f' || l == '\n' || l == '\r' || l == '\t') return false;
                i += 6;
                continue;
            }
            default:
                return false;
            }
        }
    }
}
