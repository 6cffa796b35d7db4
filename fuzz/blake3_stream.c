/* Fuzz target for src/core/blake3.c, round-trip style (zstd simple_round_trip): hashing the
** input in randomly split streaming updates must give the one-shot digest, for every
** implementation this CPU runs (portable, SSE4.1, AVX2, AVX-512), and a shorter output must
** be a prefix of a longer one (BLAKE3 §2.6 extendable output). Aborts on any mismatch.
** The split sizes come from a generator seeded by the input's first bytes; the whole input
** is hashed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OUT 200

static uint64_t next_rand(uint64_t *s)   /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t ref[MAX_OUT], got[MAX_OUT], digest[PCH_BLAKE3_OUT_LEN];
    uint64_t seed = 0;
    pch_blake3 h;
    const size_t out_len = 1 + (size_t)(size % MAX_OUT);

    if (size > 0) memcpy(&seed, data, size < sizeof seed ? size : sizeof seed);
    const int best = pch_blake3__init_impl(&h, PCH_BLAKE3_IMPL_AVX512);

    pch_blake3__init_impl(&h, PCH_BLAKE3_IMPL_PORTABLE);
    pch_blake3_update(&h, data, size);
    pch_blake3_final(&h, ref, MAX_OUT);
    pch_blake3_hash(digest, data, size);
    if (memcmp(digest, ref, sizeof digest) != 0) abort();

    for (int impl = PCH_BLAKE3_IMPL_PORTABLE; impl <= best; impl++) {
        size_t off = 0;
        pch_blake3__init_impl(&h, impl);
        while (off < size) {
            const uint64_t r = next_rand(&seed);
            size_t n;
            switch (r & 3) {
            case 0: n = (size_t)(r >> 8) % 4; break;                  /* tiny, even empty */
            case 1: n = (size_t)(r >> 8) % 1100; break;               /* within a chunk */
            case 2: n = 1024 * (1 + (size_t)(r >> 8) % 40); break;    /* whole chunks */
            default: n = (size_t)(r >> 8) % (size - off + 1); break;
            }
            if (n > size - off) n = size - off;
            pch_blake3_update(&h, data + off, n);
            off += n;
        }
        memset(got, 0, sizeof got);
        pch_blake3_final(&h, got, out_len);
        if (memcmp(got, ref, out_len) != 0) abort();
        pch_blake3_final(&h, got, MAX_OUT);    /* final leaves the hasher unchanged */
        if (memcmp(got, ref, MAX_OUT) != 0) abort();
    }
    return 0;
}
