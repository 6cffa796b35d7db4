/* Private helpers of src/json (UTF-8 validation, character classes). Not for use outside
** src/json/. */
#ifndef PCH_JSON_INT_H
#define PCH_JSON_INT_H

#include "json/json.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define PCH_JSON_SSE2 1
#endif

/* Length (1..4) of the well-formed UTF-8 sequence starting at p[0] (RFC 3629: no
** overlongs, no surrogates, nothing above U+10FFFF), or 0 if it is not one. n >= 1 is the
** number of bytes available. */
static inline size_t pch_json__utf8_seq(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) {
        if (n < 2 || (p[1] & 0xC0) != 0x80) return 0;
        return 2;
    }
    if (c < 0xF0) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;          /* overlong */
        if (c == 0xED && p[1] > 0x9F) return 0;          /* UTF-16 surrogate */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
            (p[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;          /* overlong */
        if (c == 0xF4 && p[1] > 0x8F) return 0;          /* above U+10FFFF */
        return 4;
    }
    return 0;
}

/* Bytes that stop the fast string scan in pch_json__scan_plain: '"', '\\', C0 controls, non-ASCII. */
static const uint8_t pch_json__str_special[256] = {
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
};

/* Index of the first str_special byte in s[i..len), or len. */
static inline size_t pch_json__scan_plain(const uint8_t *s, size_t len, size_t i)
{
#ifdef PCH_JSON_SSE2
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x20);
    while (len - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)),
                                 _mm_cmplt_epi8(v, sp));  /* signed: < 0x20 or >= 0x80 */
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask) return i + (size_t)__builtin_ctz(mask);
        i += 16;
    }
#else
    while (len - i >= 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
        uint64_t xq = w ^ (ones * '"'), xb = w ^ (ones * '\\');
        uint64_t t = ((xq - ones) & ~xq) | ((xb - ones) & ~xb) | ((w - ones * 0x20) & ~w) | w;
        t &= high;
        if (t) return i + (size_t)(__builtin_ctzll(t) >> 3);
        i += 8;
    }
#endif
    while (i < len && !pch_json__str_special[s[i]]) i++;
    return i;
}

#ifdef PCH_JSON_SSE2
/* Bit k set when byte k of v is one a JSON string must escape ('"', '\\', C0 controls). */
static inline unsigned pch_json__escape_mask16(__m128i v)
{
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), c0 = _mm_set1_epi8(0x1f);
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)),
                             _mm_cmpeq_epi8(_mm_min_epu8(v, c0), v));      /* unsigned v <= 0x1f */
    return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* Offset of the first byte of p[0..n) that is invalid UTF-8, or n if all of it is valid. */
size_t pch_json__utf8_check(const uint8_t *p, size_t n);

#endif
