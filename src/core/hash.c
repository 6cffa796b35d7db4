/* A fast 64-bit hash of a byte string for in-memory hash tables (core.h, pch_hash64). Not a
** digest: nothing stores it and no reference depends on it, so a collision only ever costs a
** comparison (a dictionary's value table, a page's distinct values) or, in the build's
** content index, a BLAKE3 and an exact lookup. Four independent multiply-fold lanes over
** 8-byte words, so a long value (tool output, message text) hashes at memory speed. */
#include "core/core.h"

static inline uint64_t fold(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t pch_hash64(const void *v, size_t n)
{
    static const uint64_t K0 = 0xa0761d6478bd642full, K1 = 0xe7037ed1a0b428dbull,
                          K2 = 0x8ebc6af09c88c6e3ull, K3 = 0x589965cc75374cc3ull;
    const uint8_t *p = v;
    uint64_t h0 = K0 ^ (uint64_t)n, h1 = K1, h2 = K2, h3 = K3;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        h0 = fold(pch_load_le64(p + i) ^ K1, h0 ^ K0);
        h1 = fold(pch_load_le64(p + i + 8) ^ K2, h1 ^ K0);
        h2 = fold(pch_load_le64(p + i + 16) ^ K3, h2 ^ K0);
        h3 = fold(pch_load_le64(p + i + 24) ^ K0, h3 ^ K1);
    }
    for (; i + 8 <= n; i += 8) h0 = fold(pch_load_le64(p + i) ^ K1, h0 ^ K2);
    if (i < n) {
        uint8_t t[8] = { 0 };
        memcpy(t, p + i, n - i);
        h1 = fold(pch_load_le64(t) ^ K3, h1 ^ K2);
    }
    return fold(fold(h0, h1 ^ K1) ^ fold(h2, h3 ^ K2), K3 ^ (uint64_t)n);
}
