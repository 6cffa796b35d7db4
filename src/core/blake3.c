/* BLAKE3 hash mode (the BLAKE3 paper, "BLAKE3: one function, fast everywhere", §2 and §5;
** written here from the specification: Debian 12 ships no C BLAKE3 library).
**
**  - §2.2 compression: 7 rounds of the BLAKE2s-style G over a 16-word state (chaining value,
**    IV[0..3], 64-bit counter, block length, flags); the message is permuted between rounds,
**    precomputed below as B3_SCHEDULE.
**  - §2.3 chunks: 1024-byte chunks of 64-byte blocks; the first block has CHUNK_START, the
**    last CHUNK_END; the counter is the chunk index; block_len is 64 except for the last
**    block, which is zero-padded.
**  - §2.4 tree: parent nodes hash the two child CVs (one 64-byte block, counter 0, PARENT);
**    the left subtree is the largest power of two of chunks that leaves at least one byte
**    for the right. §5.1.2: an incremental hasher keeps a stack of subtree CVs and merges
**    the top pair lazily, only once more input shows that their parent is not the root.
**  - §2.6 output: the root node is compressed again with ROOT and counter 0, 1, 2, ... for
**    64 bytes of extendable output each.
**
** Invariants after each update: the stack is fully merged (one entry per set bit of
** chunk.chunk_counter) whenever the chunk state holds bytes; when it holds none, either no
** input was seen (empty stack) or the input ended on a pushed subtree and the top two
** entries are its children. The stack holds CVs as little-endian bytes, so a parent block
** is two adjacent entries.
**
** Speed (§5.3): whole chunks are hashed straight from the caller's buffer, several chunks at
** once with SSE4.1 (4 lanes), AVX2 (8) or AVX-512 (16) kernels picked at init with
** __builtin_cpu_supports, as aligned subtrees of up to B3_MAX_SUBTREE chunks whose parent
** levels use the same kernels (scratch: B3_MAX_SUBTREE CVs, 1 KiB of stack, the one large
** stack buffer here: 64 chunks would be ~4% faster at 2 KiB). The portable C path is always
** compiled and used for the chunk state, lone chunks, stack merges and the output; tests
** force each implementation through pch_blake3__init_impl. Little-endian host only (core.h).
** No allocation, no I/O, no global state. */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define B3_X86 1
#include <immintrin.h>
#else
#define B3_X86 0
#endif

enum {
    B3_CHUNK_START = 1,
    B3_CHUNK_END = 2,
    B3_PARENT = 4,
    B3_ROOT = 8
};

/* Subtree of whole chunks hashed from the input in one go: a power of two, so that the
** CV scratch is B3_MAX_SUBTREE * 32 bytes of stack. */
#ifndef B3_MAX_SUBTREE
#define B3_MAX_SUBTREE 32
#endif

static const uint32_t B3_IV[8] = {
    0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
    0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u
};

/* §2.2: message word order of round r = permutation (2,6,3,10,7,0,4,13,1,11,12,5,9,14,15,8)
** applied r times. */
static const uint8_t B3_SCHEDULE[7][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8},
    {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1},
    {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6},
    {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4},
    {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7},
    {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13},
};

/* ------------------------------------------------------------------------------------------
** Portable compression function */

static inline uint32_t b3_rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

#define B3_G(v, a, b, c, d, x, y) do { \
    v[a] = v[a] + v[b] + (x); v[d] = b3_rotr(v[d] ^ v[a], 16); \
    v[c] = v[c] + v[d];       v[b] = b3_rotr(v[b] ^ v[c], 12); \
    v[a] = v[a] + v[b] + (y); v[d] = b3_rotr(v[d] ^ v[a], 8);  \
    v[c] = v[c] + v[d];       v[b] = b3_rotr(v[b] ^ v[c], 7);  \
} while (0)

#define B3_ROUND(v, m, r) do { \
    B3_G(v, 0, 4, 8, 12, m[B3_SCHEDULE[r][0]], m[B3_SCHEDULE[r][1]]); \
    B3_G(v, 1, 5, 9, 13, m[B3_SCHEDULE[r][2]], m[B3_SCHEDULE[r][3]]); \
    B3_G(v, 2, 6, 10, 14, m[B3_SCHEDULE[r][4]], m[B3_SCHEDULE[r][5]]); \
    B3_G(v, 3, 7, 11, 15, m[B3_SCHEDULE[r][6]], m[B3_SCHEDULE[r][7]]); \
    B3_G(v, 0, 5, 10, 15, m[B3_SCHEDULE[r][8]], m[B3_SCHEDULE[r][9]]); \
    B3_G(v, 1, 6, 11, 12, m[B3_SCHEDULE[r][10]], m[B3_SCHEDULE[r][11]]); \
    B3_G(v, 2, 7, 8, 13, m[B3_SCHEDULE[r][12]], m[B3_SCHEDULE[r][13]]); \
    B3_G(v, 3, 4, 9, 14, m[B3_SCHEDULE[r][14]], m[B3_SCHEDULE[r][15]]); \
} while (0)

/* The 16-word state after the 7 rounds, before the output feed-forward. */
static inline void b3_compress_rounds(uint32_t v[16], const uint32_t cv[8],
                                      const uint8_t block[PCH_BLAKE3_BLOCK_LEN],
                                      uint64_t counter, uint32_t block_len, uint32_t flags)
{
    uint32_t m[16];
    for (size_t i = 0; i < 16; i++) m[i] = pch_load_le32(block + 4 * i);
    for (size_t i = 0; i < 8; i++) v[i] = cv[i];
    v[8] = B3_IV[0]; v[9] = B3_IV[1]; v[10] = B3_IV[2]; v[11] = B3_IV[3];
    v[12] = (uint32_t)counter;
    v[13] = (uint32_t)(counter >> 32);
    v[14] = block_len;
    v[15] = flags;
    B3_ROUND(v, m, 0);
    B3_ROUND(v, m, 1);
    B3_ROUND(v, m, 2);
    B3_ROUND(v, m, 3);
    B3_ROUND(v, m, 4);
    B3_ROUND(v, m, 5);
    B3_ROUND(v, m, 6);
}

/* cv <- first 8 words of compress(cv, block, ...) */
static void b3_compress_in_place(uint32_t cv[8], const uint8_t block[PCH_BLAKE3_BLOCK_LEN],
                                 uint64_t counter, uint32_t block_len, uint32_t flags)
{
    uint32_t v[16];
    b3_compress_rounds(v, cv, block, counter, block_len, flags);
    for (size_t i = 0; i < 8; i++) cv[i] = v[i] ^ v[i + 8];
}

/* All 16 output words (§2.6 extended output), as 64 little-endian bytes. */
static void b3_compress_xof(const uint32_t cv[8], const uint8_t block[PCH_BLAKE3_BLOCK_LEN],
                            uint64_t counter, uint32_t block_len, uint32_t flags,
                            uint8_t out[64])
{
    uint32_t v[16];
    b3_compress_rounds(v, cv, block, counter, block_len, flags);
    for (size_t i = 0; i < 8; i++) {
        pch_store_le32(out + 4 * i, v[i] ^ v[i + 8]);
        pch_store_le32(out + 32 + 4 * i, v[i + 8] ^ cv[i]);
    }
}

static void b3_store_cv(uint8_t out[32], const uint32_t cv[8])
{
    for (size_t i = 0; i < 8; i++) pch_store_le32(out + 4 * i, cv[i]);
}

/* Hash one input of `blocks` whole blocks (a chunk: 16, a parent: 1) into a 32-byte CV. */
static void b3_hash_one_portable(const uint8_t *in, size_t blocks, const uint32_t key[8],
                                 uint64_t counter, uint8_t flags, uint8_t flags_start,
                                 uint8_t flags_end, uint8_t out[32])
{
    uint32_t cv[8];
    uint8_t block_flags = (uint8_t)(flags | flags_start);
    memcpy(cv, key, sizeof cv);
    for (size_t b = 0; b < blocks; b++) {
        if (b + 1 == blocks) block_flags = (uint8_t)(block_flags | flags_end);
        b3_compress_in_place(cv, in + b * PCH_BLAKE3_BLOCK_LEN, counter, PCH_BLAKE3_BLOCK_LEN,
                             block_flags);
        block_flags = flags;
    }
    b3_store_cv(out, cv);
}

/* ------------------------------------------------------------------------------------------
** SIMD kernels: lane i hashes in[i] (blocks whole blocks) with counter + i (or counter when
** !inc) and writes its CV to out + 32 * i. Each kernel loads a block of every lane before
** it stores anything, so parents may be hashed in place (output i overlaps only inputs <= i). */
#if B3_X86

#define B3_TARGET_SSE41 __attribute__((target("sse4.1")))
#define B3_TARGET_AVX2 __attribute__((target("avx2")))
#define B3_TARGET_AVX512 __attribute__((target("avx512f")))
/* Helpers must inline into their kernel: a call would spill every vector (and vzeroupper). */
#define B3_INLINE static inline __attribute__((always_inline))
/* Each lane streams its own chunk; fetching two blocks ahead helps the hardware prefetcher
** with 8 or 16 interleaved streams. Integer arithmetic: the address may lie past the input,
** which a prefetch may touch (it never faults) but C pointer arithmetic may not. */
#ifndef B3_PREFETCH_AHEAD
#define B3_PREFETCH_AHEAD 128
#endif
#define B3_PREFETCH(p, off) \
    _mm_prefetch((const char *)(uintptr_t)((uintptr_t)(p) + (off) + B3_PREFETCH_AHEAD), _MM_HINT_T0)
/* Fixed-count lane loops must unroll so that their vectors stay in registers. */
#define B3_UNROLL _Pragma("GCC unroll 16")

/* Generic G and round over vector ops named P##_add, P##_xor, P##_rot16/12/8/7. */
#define B3_VG(P, v, a, b, c, d, x, y) do { \
    v[a] = P##_add(P##_add(v[a], v[b]), (x)); v[d] = P##_rot16(P##_xor(v[d], v[a])); \
    v[c] = P##_add(v[c], v[d]);               v[b] = P##_rot12(P##_xor(v[b], v[c])); \
    v[a] = P##_add(P##_add(v[a], v[b]), (y)); v[d] = P##_rot8(P##_xor(v[d], v[a]));  \
    v[c] = P##_add(v[c], v[d]);               v[b] = P##_rot7(P##_xor(v[b], v[c]));  \
} while (0)

#define B3_VROUND(P, v, m, r) do { \
    B3_VG(P, v, 0, 4, 8, 12, m[B3_SCHEDULE[r][0]], m[B3_SCHEDULE[r][1]]); \
    B3_VG(P, v, 1, 5, 9, 13, m[B3_SCHEDULE[r][2]], m[B3_SCHEDULE[r][3]]); \
    B3_VG(P, v, 2, 6, 10, 14, m[B3_SCHEDULE[r][4]], m[B3_SCHEDULE[r][5]]); \
    B3_VG(P, v, 3, 7, 11, 15, m[B3_SCHEDULE[r][6]], m[B3_SCHEDULE[r][7]]); \
    B3_VG(P, v, 0, 5, 10, 15, m[B3_SCHEDULE[r][8]], m[B3_SCHEDULE[r][9]]); \
    B3_VG(P, v, 1, 6, 11, 12, m[B3_SCHEDULE[r][10]], m[B3_SCHEDULE[r][11]]); \
    B3_VG(P, v, 2, 7, 8, 13, m[B3_SCHEDULE[r][12]], m[B3_SCHEDULE[r][13]]); \
    B3_VG(P, v, 3, 4, 9, 14, m[B3_SCHEDULE[r][14]], m[B3_SCHEDULE[r][15]]); \
} while (0)

#define B3_VROUNDS(P, v, m) do { \
    B3_VROUND(P, v, m, 0); B3_VROUND(P, v, m, 1); B3_VROUND(P, v, m, 2); \
    B3_VROUND(P, v, m, 3); B3_VROUND(P, v, m, 4); B3_VROUND(P, v, m, 5); \
    B3_VROUND(P, v, m, 6); \
} while (0)

/* Per-lane counters, split into low and high words. */
static void b3_lane_counters(uint32_t *lo, uint32_t *hi, size_t lanes, uint64_t counter,
                             bool inc)
{
    for (size_t i = 0; i < lanes; i++) {
        uint64_t c = counter + (inc ? (uint64_t)i : 0);
        lo[i] = (uint32_t)c;
        hi[i] = (uint32_t)(c >> 32);
    }
}

/* ---- SSE4.1: 4 lanes ---- */
B3_TARGET_SSE41 B3_INLINE __m128i x4_add(__m128i a, __m128i b) { return _mm_add_epi32(a, b); }
B3_TARGET_SSE41 B3_INLINE __m128i x4_xor(__m128i a, __m128i b) { return _mm_xor_si128(a, b); }
B3_TARGET_SSE41 B3_INLINE __m128i x4_rot16(__m128i x)
{ return _mm_shuffle_epi8(x, _mm_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2)); }
B3_TARGET_SSE41 B3_INLINE __m128i x4_rot12(__m128i x)
{ return _mm_or_si128(_mm_srli_epi32(x, 12), _mm_slli_epi32(x, 20)); }
B3_TARGET_SSE41 B3_INLINE __m128i x4_rot8(__m128i x)
{ return _mm_shuffle_epi8(x, _mm_set_epi8(12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1)); }
B3_TARGET_SSE41 B3_INLINE __m128i x4_rot7(__m128i x)
{ return _mm_or_si128(_mm_srli_epi32(x, 7), _mm_slli_epi32(x, 25)); }
B3_TARGET_SSE41 B3_INLINE __m128i x4_load(const uint8_t *p)
{ return _mm_loadu_si128((const __m128i *)(const void *)p); }
B3_TARGET_SSE41 B3_INLINE void x4_store(uint8_t *p, __m128i x)
{ _mm_storeu_si128((__m128i *)(void *)p, x); }

/* 4x4 transpose of 32-bit words. */
B3_TARGET_SSE41 B3_INLINE void x4_transpose(__m128i *r0, __m128i *r1, __m128i *r2, __m128i *r3)
{
    __m128i ab01 = _mm_unpacklo_epi32(*r0, *r1), ab23 = _mm_unpackhi_epi32(*r0, *r1);
    __m128i cd01 = _mm_unpacklo_epi32(*r2, *r3), cd23 = _mm_unpackhi_epi32(*r2, *r3);
    *r0 = _mm_unpacklo_epi64(ab01, cd01);
    *r1 = _mm_unpackhi_epi64(ab01, cd01);
    *r2 = _mm_unpacklo_epi64(ab23, cd23);
    *r3 = _mm_unpackhi_epi64(ab23, cd23);
}

B3_TARGET_SSE41 static void b3_hash4_sse41(const uint8_t *const in[4], size_t blocks,
                                           const uint32_t key[8], uint64_t counter, bool inc,
                                           uint8_t flags, uint8_t flags_start,
                                           uint8_t flags_end, uint8_t *out)
{
    __m128i h[8], v[16], m[16];
    uint32_t lo[4], hi[4];
    uint8_t block_flags = (uint8_t)(flags | flags_start);

    b3_lane_counters(lo, hi, 4, counter, inc);
    const __m128i ctr_lo = _mm_loadu_si128((const __m128i *)(const void *)lo);
    const __m128i ctr_hi = _mm_loadu_si128((const __m128i *)(const void *)hi);
    B3_UNROLL
    for (size_t i = 0; i < 8; i++) h[i] = _mm_set1_epi32((int)key[i]);
    for (size_t b = 0; b < blocks; b++) {
        const size_t off = b * PCH_BLAKE3_BLOCK_LEN;
        if (b + 1 == blocks) block_flags = (uint8_t)(block_flags | flags_end);
        B3_UNROLL
        for (size_t i = 0; i < 4; i++) B3_PREFETCH(in[i], off);
        B3_UNROLL
        for (size_t q = 0; q < 4; q++) {
            m[4 * q + 0] = x4_load(in[0] + off + 16 * q);
            m[4 * q + 1] = x4_load(in[1] + off + 16 * q);
            m[4 * q + 2] = x4_load(in[2] + off + 16 * q);
            m[4 * q + 3] = x4_load(in[3] + off + 16 * q);
            x4_transpose(&m[4 * q], &m[4 * q + 1], &m[4 * q + 2], &m[4 * q + 3]);
        }
        B3_UNROLL
        for (size_t i = 0; i < 8; i++) v[i] = h[i];
        B3_UNROLL
        for (size_t i = 0; i < 4; i++) v[8 + i] = _mm_set1_epi32((int)B3_IV[i]);
        v[12] = ctr_lo;
        v[13] = ctr_hi;
        v[14] = _mm_set1_epi32(PCH_BLAKE3_BLOCK_LEN);
        v[15] = _mm_set1_epi32(block_flags);
        B3_VROUNDS(x4, v, m);
        B3_UNROLL
        for (size_t i = 0; i < 8; i++) h[i] = _mm_xor_si128(v[i], v[i + 8]);
        block_flags = flags;
    }
    x4_transpose(&h[0], &h[1], &h[2], &h[3]);
    x4_transpose(&h[4], &h[5], &h[6], &h[7]);
    B3_UNROLL
    for (size_t i = 0; i < 4; i++) {
        x4_store(out + 32 * i, h[i]);
        x4_store(out + 32 * i + 16, h[4 + i]);
    }
}

/* ---- AVX2: 8 lanes ---- */
B3_TARGET_AVX2 B3_INLINE __m256i x8_add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
B3_TARGET_AVX2 B3_INLINE __m256i x8_xor(__m256i a, __m256i b) { return _mm256_xor_si256(a, b); }
B3_TARGET_AVX2 B3_INLINE __m256i x8_rot16(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_set_epi8(
        13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2,
        13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2));
}
B3_TARGET_AVX2 B3_INLINE __m256i x8_rot12(__m256i x)
{ return _mm256_or_si256(_mm256_srli_epi32(x, 12), _mm256_slli_epi32(x, 20)); }
B3_TARGET_AVX2 B3_INLINE __m256i x8_rot8(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_set_epi8(
        12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1,
        12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1));
}
B3_TARGET_AVX2 B3_INLINE __m256i x8_rot7(__m256i x)
{ return _mm256_or_si256(_mm256_srli_epi32(x, 7), _mm256_slli_epi32(x, 25)); }
B3_TARGET_AVX2 B3_INLINE __m256i x8_load(const uint8_t *p)
{ return _mm256_loadu_si256((const __m256i *)(const void *)p); }

/* 8x8 transpose of 32-bit words: r[i] word j <-> r[j] word i. */
B3_TARGET_AVX2 B3_INLINE void x8_transpose(__m256i r[8])
{
    const __m256i ab0145 = _mm256_unpacklo_epi32(r[0], r[1]);
    const __m256i ab2367 = _mm256_unpackhi_epi32(r[0], r[1]);
    const __m256i cd0145 = _mm256_unpacklo_epi32(r[2], r[3]);
    const __m256i cd2367 = _mm256_unpackhi_epi32(r[2], r[3]);
    const __m256i ef0145 = _mm256_unpacklo_epi32(r[4], r[5]);
    const __m256i ef2367 = _mm256_unpackhi_epi32(r[4], r[5]);
    const __m256i gh0145 = _mm256_unpacklo_epi32(r[6], r[7]);
    const __m256i gh2367 = _mm256_unpackhi_epi32(r[6], r[7]);
    const __m256i abcd04 = _mm256_unpacklo_epi64(ab0145, cd0145);
    const __m256i abcd15 = _mm256_unpackhi_epi64(ab0145, cd0145);
    const __m256i abcd26 = _mm256_unpacklo_epi64(ab2367, cd2367);
    const __m256i abcd37 = _mm256_unpackhi_epi64(ab2367, cd2367);
    const __m256i efgh04 = _mm256_unpacklo_epi64(ef0145, gh0145);
    const __m256i efgh15 = _mm256_unpackhi_epi64(ef0145, gh0145);
    const __m256i efgh26 = _mm256_unpacklo_epi64(ef2367, gh2367);
    const __m256i efgh37 = _mm256_unpackhi_epi64(ef2367, gh2367);
    r[0] = _mm256_permute2x128_si256(abcd04, efgh04, 0x20);
    r[4] = _mm256_permute2x128_si256(abcd04, efgh04, 0x31);
    r[1] = _mm256_permute2x128_si256(abcd15, efgh15, 0x20);
    r[5] = _mm256_permute2x128_si256(abcd15, efgh15, 0x31);
    r[2] = _mm256_permute2x128_si256(abcd26, efgh26, 0x20);
    r[6] = _mm256_permute2x128_si256(abcd26, efgh26, 0x31);
    r[3] = _mm256_permute2x128_si256(abcd37, efgh37, 0x20);
    r[7] = _mm256_permute2x128_si256(abcd37, efgh37, 0x31);
}

B3_TARGET_AVX2 static void b3_hash8_avx2(const uint8_t *const in[8], size_t blocks,
                                         const uint32_t key[8], uint64_t counter, bool inc,
                                         uint8_t flags, uint8_t flags_start,
                                         uint8_t flags_end, uint8_t *out)
{
    __m256i h[8], v[16], m[16];
    uint32_t lo[8], hi[8];
    uint8_t block_flags = (uint8_t)(flags | flags_start);

    b3_lane_counters(lo, hi, 8, counter, inc);
    const __m256i ctr_lo = _mm256_loadu_si256((const __m256i *)(const void *)lo);
    const __m256i ctr_hi = _mm256_loadu_si256((const __m256i *)(const void *)hi);
    B3_UNROLL
    for (size_t i = 0; i < 8; i++) h[i] = _mm256_set1_epi32((int)key[i]);
    for (size_t b = 0; b < blocks; b++) {
        const size_t off = b * PCH_BLAKE3_BLOCK_LEN;
        if (b + 1 == blocks) block_flags = (uint8_t)(block_flags | flags_end);
        B3_UNROLL
        for (size_t i = 0; i < 8; i++) {
            m[i] = x8_load(in[i] + off);
            m[8 + i] = x8_load(in[i] + off + 32);
            B3_PREFETCH(in[i], off);
        }
        x8_transpose(m);
        x8_transpose(m + 8);
        B3_UNROLL
        for (size_t i = 0; i < 8; i++) v[i] = h[i];
        B3_UNROLL
        for (size_t i = 0; i < 4; i++) v[8 + i] = _mm256_set1_epi32((int)B3_IV[i]);
        v[12] = ctr_lo;
        v[13] = ctr_hi;
        v[14] = _mm256_set1_epi32(PCH_BLAKE3_BLOCK_LEN);
        v[15] = _mm256_set1_epi32(block_flags);
        B3_VROUNDS(x8, v, m);
        B3_UNROLL
        for (size_t i = 0; i < 8; i++) h[i] = _mm256_xor_si256(v[i], v[i + 8]);
        block_flags = flags;
    }
    x8_transpose(h);
    B3_UNROLL
    for (size_t i = 0; i < 8; i++) _mm256_storeu_si256((__m256i *)(void *)(out + 32 * i), h[i]);
}

/* ---- AVX-512F: 16 lanes, native rotates ---- */
B3_TARGET_AVX512 B3_INLINE __m512i x16_add(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }
B3_TARGET_AVX512 B3_INLINE __m512i x16_xor(__m512i a, __m512i b) { return _mm512_xor_si512(a, b); }
B3_TARGET_AVX512 B3_INLINE __m512i x16_rot16(__m512i x) { return _mm512_ror_epi32(x, 16); }
B3_TARGET_AVX512 B3_INLINE __m512i x16_rot12(__m512i x) { return _mm512_ror_epi32(x, 12); }
B3_TARGET_AVX512 B3_INLINE __m512i x16_rot8(__m512i x) { return _mm512_ror_epi32(x, 8); }
B3_TARGET_AVX512 B3_INLINE __m512i x16_rot7(__m512i x) { return _mm512_ror_epi32(x, 7); }

/* 16x16 transpose of 32-bit words: r[i] word j <-> r[j] word i. */
B3_TARGET_AVX512 B3_INLINE void x16_transpose(__m512i r[16])
{
    __m512i t[16], u[16];
    /* Within 128-bit lanes: u[4g + j] lane k holds rows 4g..4g+3, word 4k + j. */
    B3_UNROLL
    for (size_t p = 0; p < 8; p++) {
        t[2 * p] = _mm512_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
    }
    B3_UNROLL
    for (size_t g = 0; g < 4; g++) {
        u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    /* Then a 4x4 transpose of 128-bit lanes across u[j], u[4 + j], u[8 + j], u[12 + j]. */
    B3_UNROLL
    for (size_t j = 0; j < 4; j++) {
        const __m512i ab_lo = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44);
        const __m512i ab_hi = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xEE);
        const __m512i cd_lo = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44);
        const __m512i cd_hi = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_i32x4(ab_lo, cd_lo, 0x88);
        r[4 + j] = _mm512_shuffle_i32x4(ab_lo, cd_lo, 0xDD);
        r[8 + j] = _mm512_shuffle_i32x4(ab_hi, cd_hi, 0x88);
        r[12 + j] = _mm512_shuffle_i32x4(ab_hi, cd_hi, 0xDD);
    }
}

B3_TARGET_AVX512 static void b3_hash16_avx512(const uint8_t *const in[16], size_t blocks,
                                              const uint32_t key[8], uint64_t counter,
                                              bool inc, uint8_t flags, uint8_t flags_start,
                                              uint8_t flags_end, uint8_t *out)
{
    __m512i h[16], v[16], m[16];
    uint32_t lo[16], hi[16];
    uint8_t block_flags = (uint8_t)(flags | flags_start);

    b3_lane_counters(lo, hi, 16, counter, inc);
    const __m512i ctr_lo = _mm512_loadu_si512((const void *)lo);
    const __m512i ctr_hi = _mm512_loadu_si512((const void *)hi);
    B3_UNROLL
    for (size_t i = 0; i < 8; i++) h[i] = _mm512_set1_epi32((int)key[i]);
    for (size_t b = 0; b < blocks; b++) {
        const size_t off = b * PCH_BLAKE3_BLOCK_LEN;
        if (b + 1 == blocks) block_flags = (uint8_t)(block_flags | flags_end);
        B3_UNROLL
        for (size_t i = 0; i < 16; i++) {
            m[i] = _mm512_loadu_si512((const void *)(in[i] + off));
            B3_PREFETCH(in[i], off);
        }
        x16_transpose(m);
        B3_UNROLL
        for (size_t i = 0; i < 8; i++) v[i] = h[i];
        B3_UNROLL
        for (size_t i = 0; i < 4; i++) v[8 + i] = _mm512_set1_epi32((int)B3_IV[i]);
        v[12] = ctr_lo;
        v[13] = ctr_hi;
        v[14] = _mm512_set1_epi32(PCH_BLAKE3_BLOCK_LEN);
        v[15] = _mm512_set1_epi32(block_flags);
        B3_VROUNDS(x16, v, m);
        B3_UNROLL
        for (size_t i = 0; i < 8; i++) h[i] = _mm512_xor_si512(v[i], v[i + 8]);
        block_flags = flags;
    }
    /* Lanes back to rows: transpose with 8 zero rows; row i's first 8 words are lane i's CV. */
    B3_UNROLL
    for (size_t i = 8; i < 16; i++) h[i] = _mm512_setzero_si512();
    x16_transpose(h);
    B3_UNROLL
    for (size_t i = 0; i < 16; i++)
        _mm256_storeu_si256((__m256i *)(void *)(out + 32 * i), _mm512_castsi512_si256(h[i]));
}

#endif /* B3_X86 */

/* ------------------------------------------------------------------------------------------
** Dispatch: n inputs of `blocks` blocks each, contiguous (input i at in + i * blocks * 64);
** CV i to out + 32 * i. A kernel short of lanes repeats the last input and drops the extra
** outputs (through a scratch buffer), so outputs never run past n. */
static void b3_hash_many(int impl, const uint8_t *in, size_t n, size_t blocks,
                         const uint32_t key[8], uint64_t counter, bool inc, uint8_t flags,
                         uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    const size_t stride = blocks * PCH_BLAKE3_BLOCK_LEN;
    while (n > 0) {
#if B3_X86
        size_t width = 0;
        if (impl >= PCH_BLAKE3_IMPL_AVX512 && n > 8) width = 16;
        else if (impl >= PCH_BLAKE3_IMPL_AVX2 && n > 4) width = 8;
        else if (impl >= PCH_BLAKE3_IMPL_SSE41 && n > 1) width = 4;
        if (width > 0) {
            const uint8_t *ptrs[16];
            uint8_t scratch[16 * PCH_BLAKE3_OUT_LEN];
            const size_t lanes = n < width ? n : width;
            uint8_t *dst = lanes == width ? out : scratch;
            for (size_t i = 0; i < width; i++) ptrs[i] = in + (i < lanes ? i : lanes - 1) * stride;
            if (width == 16)
                b3_hash16_avx512(ptrs, blocks, key, counter, inc, flags, flags_start, flags_end, dst);
            else if (width == 8)
                b3_hash8_avx2(ptrs, blocks, key, counter, inc, flags, flags_start, flags_end, dst);
            else
                b3_hash4_sse41(ptrs, blocks, key, counter, inc, flags, flags_start, flags_end, dst);
            if (dst != out) memmove(out, scratch, lanes * PCH_BLAKE3_OUT_LEN);
            in += lanes * stride;
            out += lanes * PCH_BLAKE3_OUT_LEN;
            n -= lanes;
            if (inc) counter += lanes;
            continue;
        }
#else
        (void)impl;
#endif
        b3_hash_one_portable(in, blocks, key, counter, flags, flags_start, flags_end, out);
        in += stride;
        out += PCH_BLAKE3_OUT_LEN;
        n--;
        if (inc) counter++;
    }
}

/* The two child CVs (64 bytes: left, right) of the complete subtree of n_chunks whole
** chunks (a power of two, 2 <= n_chunks <= B3_MAX_SUBTREE) starting at chunk index
** `counter` (a multiple of n_chunks). The subtree's own node is left to the CV stack: it is
** the root when the input ends here. */
static void b3_subtree_children(int impl, const uint8_t *in, size_t n_chunks,
                                const uint32_t key[8], uint64_t counter, uint8_t flags,
                                uint8_t out[2 * PCH_BLAKE3_OUT_LEN])
{
    uint8_t cvs[B3_MAX_SUBTREE * PCH_BLAKE3_OUT_LEN];
    assert(n_chunks >= 2 && n_chunks <= B3_MAX_SUBTREE && (n_chunks & (n_chunks - 1)) == 0);
    b3_hash_many(impl, in, n_chunks, PCH_BLAKE3_CHUNK_LEN / PCH_BLAKE3_BLOCK_LEN, key, counter,
                 true, flags, B3_CHUNK_START, B3_CHUNK_END, cvs);
    /* Each level pairs adjacent CVs: parent i's block is cvs[64 i .. 64 i + 64). */
    for (size_t n = n_chunks / 2; n >= 2; n /= 2)
        b3_hash_many(impl, cvs, n, 1, key, 0, false, (uint8_t)(flags | B3_PARENT), 0, 0, cvs);
    memcpy(out, cvs, 2 * PCH_BLAKE3_OUT_LEN);
}

/* ------------------------------------------------------------------------------------------
** Chunk state (§2.3) */

static void b3_chunk_reset(pch_blake3_chunk_state *c, const uint32_t key[8], uint64_t counter,
                           uint8_t flags)
{
    memcpy(c->cv, key, sizeof c->cv);
    c->chunk_counter = counter;
    memset(c->buf, 0, sizeof c->buf);
    c->buf_len = 0;
    c->blocks_compressed = 0;
    c->flags = flags;
}

static size_t b3_chunk_len(const pch_blake3_chunk_state *c)
{
    return (size_t)c->blocks_compressed * PCH_BLAKE3_BLOCK_LEN + c->buf_len;
}

static uint8_t b3_chunk_start_flag(const pch_blake3_chunk_state *c)
{
    return c->blocks_compressed == 0 ? B3_CHUNK_START : 0;
}

/* Absorb len bytes, len <= CHUNK_LEN - chunk_len. A block is compressed only once more
** input follows it, so the chunk's last block stays buffered for CHUNK_END. */
static void b3_chunk_update(pch_blake3_chunk_state *c, const uint8_t *p, size_t len)
{
    assert(len <= PCH_BLAKE3_CHUNK_LEN - b3_chunk_len(c));
    while (len > 0) {
        if (c->buf_len == PCH_BLAKE3_BLOCK_LEN) {
            b3_compress_in_place(c->cv, c->buf, c->chunk_counter, PCH_BLAKE3_BLOCK_LEN,
                                 (uint32_t)(c->flags | b3_chunk_start_flag(c)));
            c->blocks_compressed++;
            c->buf_len = 0;
            memset(c->buf, 0, sizeof c->buf);
        }
        if (c->buf_len == 0) {
            while (len > PCH_BLAKE3_BLOCK_LEN) {   /* straight from the input, no copy */
                b3_compress_in_place(c->cv, p, c->chunk_counter, PCH_BLAKE3_BLOCK_LEN,
                                     (uint32_t)(c->flags | b3_chunk_start_flag(c)));
                c->blocks_compressed++;
                p += PCH_BLAKE3_BLOCK_LEN;
                len -= PCH_BLAKE3_BLOCK_LEN;
            }
        }
        size_t take = PCH_BLAKE3_BLOCK_LEN - c->buf_len;
        if (take > len) take = len;
        memcpy(c->buf + c->buf_len, p, take);
        c->buf_len = (uint8_t)(c->buf_len + take);
        p += take;
        len -= take;
    }
}

/* A node whose CV or root output is still to be computed (§2.6). */
typedef struct b3_output {
    uint32_t cv[8];
    uint8_t block[PCH_BLAKE3_BLOCK_LEN];
    uint64_t counter;
    uint8_t block_len;
    uint8_t flags;
} b3_output;

static b3_output b3_chunk_output(const pch_blake3_chunk_state *c)
{
    b3_output o;
    memcpy(o.cv, c->cv, sizeof o.cv);
    memcpy(o.block, c->buf, sizeof o.block);   /* zero past buf_len */
    o.counter = c->chunk_counter;
    o.block_len = c->buf_len;
    o.flags = (uint8_t)(c->flags | b3_chunk_start_flag(c) | B3_CHUNK_END);
    return o;
}

static b3_output b3_parent_output(const uint8_t left[32], const uint8_t right[32],
                                  const uint32_t key[8], uint8_t flags)
{
    b3_output o;
    memcpy(o.cv, key, sizeof o.cv);
    memcpy(o.block, left, 32);
    memcpy(o.block + 32, right, 32);
    o.counter = 0;
    o.block_len = PCH_BLAKE3_BLOCK_LEN;
    o.flags = (uint8_t)(flags | B3_PARENT);
    return o;
}

static void b3_output_cv(const b3_output *o, uint8_t out[32])
{
    uint32_t cv[8];
    memcpy(cv, o->cv, sizeof cv);
    b3_compress_in_place(cv, o->block, o->counter, o->block_len, o->flags);
    b3_store_cv(out, cv);
}

static void b3_output_root(const b3_output *o, uint8_t *out, size_t out_len)
{
    uint8_t block[64];
    for (uint64_t t = 0; out_len > 0; t++) {
        const size_t take = out_len < sizeof block ? out_len : sizeof block;
        b3_compress_xof(o->cv, o->block, t, o->block_len, (uint32_t)(o->flags | B3_ROOT), block);
        memcpy(out, block, take);
        out += take;
        out_len -= take;
    }
}

/* ------------------------------------------------------------------------------------------
** Hasher (§5.1.2) */

/* Lazy merging (§5.1.2): merge the top two stack entries into their parent until the stack
** holds one entry per set bit of total_chunks (the chunks completed so far). Merging is
** deferred until more input arrives because the top pair's parent may be the root. */
static void b3_merge_stack(pch_blake3 *h, uint64_t total_chunks)
{
    const unsigned keep = (unsigned)__builtin_popcountll(total_chunks);
    while (h->cv_stack_len > keep) {
        uint8_t *left = h->cv_stack + (size_t)(h->cv_stack_len - 2) * 32;
        const b3_output o = b3_parent_output(left, left + 32, h->key, h->chunk.flags);
        b3_output_cv(&o, left);
        h->cv_stack_len--;
    }
}

/* Push the CV of the subtree starting at chunk index `counter`. */
static void b3_push_cv(pch_blake3 *h, const uint8_t cv[32], uint64_t counter)
{
    b3_merge_stack(h, counter);
    assert(h->cv_stack_len <= PCH_BLAKE3_MAX_DEPTH);
    memcpy(h->cv_stack + (size_t)h->cv_stack_len * 32, cv, 32);
    h->cv_stack_len++;
}

static int b3_best_impl(void)
{
#if B3_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return PCH_BLAKE3_IMPL_AVX512;
    if (__builtin_cpu_supports("avx2")) return PCH_BLAKE3_IMPL_AVX2;
    if (__builtin_cpu_supports("sse4.1")) return PCH_BLAKE3_IMPL_SSE41;
#endif
    return PCH_BLAKE3_IMPL_PORTABLE;
}

int pch_blake3__init_impl(pch_blake3 *h, int impl)
{
    const int best = b3_best_impl();
    if (impl < PCH_BLAKE3_IMPL_PORTABLE) impl = PCH_BLAKE3_IMPL_PORTABLE;
    if (impl > best) impl = best;
    memcpy(h->key, B3_IV, sizeof h->key);
    b3_chunk_reset(&h->chunk, h->key, 0, 0);
    h->cv_stack_len = 0;
    h->impl = (uint8_t)impl;
    return impl;
}

const char *pch_blake3__impl_name(int impl)
{
    switch (impl) {
    case PCH_BLAKE3_IMPL_PORTABLE: return "portable";
    case PCH_BLAKE3_IMPL_SSE41: return "sse4.1";
    case PCH_BLAKE3_IMPL_AVX2: return "avx2";
    case PCH_BLAKE3_IMPL_AVX512: return "avx512";
    default: return "unknown";
    }
}

void pch_blake3_init(pch_blake3 *h)
{
    (void)pch_blake3__init_impl(h, PCH_BLAKE3_IMPL_AVX512);
}

void pch_blake3_update(pch_blake3 *h, const void *data, size_t len)
{
    const uint8_t *p = data;
    if (len == 0) return;
    if (b3_chunk_len(&h->chunk) > 0) {
        size_t take = PCH_BLAKE3_CHUNK_LEN - b3_chunk_len(&h->chunk);
        if (take > len) take = len;
        b3_chunk_update(&h->chunk, p, take);
        p += take;
        len -= take;
        if (len == 0) return;
        /* A full chunk with more input after it: not the root, finish it. */
        uint8_t cv[32];
        const b3_output o = b3_chunk_output(&h->chunk);
        const uint64_t counter = h->chunk.chunk_counter;
        b3_output_cv(&o, cv);
        b3_push_cv(h, cv, counter);
        b3_chunk_reset(&h->chunk, h->key, counter + 1, h->chunk.flags);
    }
    /* Whole chunks straight from the input, as the largest aligned subtrees that fit. More
    ** than one chunk must be left: a lone final chunk may be the root and goes to the chunk
    ** state; a final subtree of >= 2 chunks is pushed as its two children. */
    while (len > PCH_BLAKE3_CHUNK_LEN) {
        const uint64_t counter = h->chunk.chunk_counter;
        size_t n = B3_MAX_SUBTREE;
        while (n > 1 && ((uint64_t)n * PCH_BLAKE3_CHUNK_LEN > len || (counter & (n - 1)) != 0))
            n /= 2;
        if (n == 1) {
            uint8_t cv[32];
            b3_hash_one_portable(p, PCH_BLAKE3_CHUNK_LEN / PCH_BLAKE3_BLOCK_LEN, h->key, counter,
                                 h->chunk.flags, B3_CHUNK_START, B3_CHUNK_END, cv);
            b3_push_cv(h, cv, counter);
        } else {
            uint8_t cvs[64];
            b3_subtree_children(h->impl, p, n, h->key, counter, h->chunk.flags, cvs);
            b3_push_cv(h, cvs, counter);
            b3_push_cv(h, cvs + 32, counter + n / 2);
        }
        b3_chunk_reset(&h->chunk, h->key, counter + n, h->chunk.flags);
        p += n * PCH_BLAKE3_CHUNK_LEN;
        len -= n * PCH_BLAKE3_CHUNK_LEN;
    }
    if (len > 0) {
        b3_chunk_update(&h->chunk, p, len);
        /* The chunk state is now the rightmost leaf: fold the stack's pending pairs so that
        ** finalisation can roll the chunk up through every entry. */
        b3_merge_stack(h, h->chunk.chunk_counter);
    }
}

void pch_blake3_final(const pch_blake3 *h, uint8_t *out, size_t out_len)
{
    b3_output o;
    size_t i = h->cv_stack_len;
    if (b3_chunk_len(&h->chunk) > 0 || i == 0) {
        o = b3_chunk_output(&h->chunk);     /* stack fully merged (update's invariant) */
    } else {
        /* The input ended on a pushed subtree: its two children are the top pair. */
        assert(i >= 2);
        i -= 2;
        o = b3_parent_output(h->cv_stack + i * 32, h->cv_stack + i * 32 + 32, h->key,
                             h->chunk.flags);
    }
    /* Roll up: each remaining entry is the left sibling of everything after it. */
    for (; i > 0; i--) {
        uint8_t right[32];
        b3_output_cv(&o, right);
        o = b3_parent_output(h->cv_stack + (i - 1) * 32, right, h->key, h->chunk.flags);
    }
    b3_output_root(&o, out, out_len);
}

void pch_blake3_hash(uint8_t out[PCH_BLAKE3_OUT_LEN], const void *data, size_t len)
{
    pch_blake3 h;
    pch_blake3_init(&h);
    pch_blake3_update(&h, data, len);
    pch_blake3_final(&h, out, PCH_BLAKE3_OUT_LEN);
}

void pch_blake3_hex(char out[65], const void *data, size_t len)
{
    uint8_t digest[PCH_BLAKE3_OUT_LEN];
    pch_blake3_hash(digest, data, len);
    pch_hex_encode(out, digest, sizeof digest);
}
