/* FastLanes transposed bit-packing (vortex-format.md Appendix A): blocks of 1,024 values of a
** T-bit type packed at width W into 128*W bytes; element (row, lane) of a block is input
** index FL_ORDER[row/8]*16 + (row%8)*128 + lane; each lane is an LSB-first bit stream whose
** word w sits at word index w*LANES + lane. The caller guarantees value < 2^W and buffer
** sizes (pch_vx__bp_bytes); nothing here reads untrusted lengths. */
#include "vortex/vortex_int.h"

static const uint8_t fl_order[8] = { 0, 4, 2, 6, 1, 5, 3, 7 };

size_t pch_vx__bp_bytes(uint64_t n, unsigned bit_width)
{
    return (size_t)((n + 1023) / 1024) * 128u * bit_width;
}

static inline void st_or(uint8_t *p, unsigned tb, uint64_t v)
{
    switch (tb) {
    case 8: p[0] |= (uint8_t)v; break;
    case 16: pch_store_le16(p, (uint16_t)(pch_load_le16(p) | v)); break;
    case 32: pch_store_le32(p, (uint32_t)(pch_load_le32(p) | v)); break;
    default: pch_store_le64(p, pch_load_le64(p) | v); break;
    }
}

void pch_vx__bp_pack(uint8_t *out, const uint64_t *vals, uint64_t n, unsigned tb, unsigned w)
{
    const unsigned lanes = 1024 / tb, wb = tb / 8;
    const uint64_t mask = w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
    uint64_t nblocks = (n + 1023) / 1024;
    if (w == 0) return;
    memset(out, 0, pch_vx__bp_bytes(n, w));
    for (uint64_t blk = 0; blk < nblocks; blk++) {
        uint8_t *bo = out + blk * 128u * w;
        const uint64_t base = blk * 1024;
        for (unsigned lane = 0; lane < lanes; lane++) {
            for (unsigned row = 0; row < tb; row++) {
                uint64_t idx = base + fl_order[row / 8] * 16u + (row % 8) * 128u + lane;
                uint64_t v = idx < n ? (vals[idx] & mask) : 0;
                uint64_t bit = (uint64_t)row * w;
                unsigned word = (unsigned)(bit / tb), shift = (unsigned)(bit % tb);
                if (!v) continue;
                st_or(bo + ((size_t)word * lanes + lane) * wb, tb, v << shift);
                if (shift + w > tb)
                    st_or(bo + ((size_t)(word + 1) * lanes + lane) * wb, tb, v >> (tb - shift));
            }
        }
    }
}

/* Unpacking straight into T-bit little-endian values (the array's own layout). FastLanes'
** point: every lane of a row takes the same word and shift, so the loop over a row's lanes is
** one shift-and-mask over contiguous words into contiguous outputs, which the compiler
** vectorises; no per-value division, type switch or 64-bit staging buffer. */
#define BP_UNPACK_T(TB, T, LOAD, STORE)                                                            \
    static void bp_unpack_##TB(uint8_t *out, const uint8_t *in, uint64_t nblocks, unsigned w)      \
    {                                                                                              \
        enum { LANES = 1024 / TB, WB = TB / 8 };                                                   \
        const T mask = w >= TB ? (T)~(T)0 : (T)(((T)1 << w) - 1);                                  \
        for (uint64_t blk = 0; blk < nblocks; blk++) {                                             \
            const uint8_t *bi = in + blk * 128u * w;                                               \
            uint8_t *bo = out + blk * 1024u * WB;                                                  \
            unsigned word = 0, shift = 0;                                                          \
            for (unsigned row = 0; row < TB; row++) {                                              \
                const uint8_t *lo = bi + (size_t)word * LANES * WB;                                \
                uint8_t *o = bo + (size_t)(fl_order[row / 8] * 16u + (row % 8) * 128u) * WB;        \
                unsigned next = shift + w;                                                         \
                if (next <= TB) {             /* the row's values lie in one word of each lane */  \
                    for (unsigned l = 0; l < LANES; l++)                                           \
                        STORE(o + l * WB, (T)((T)(LOAD(lo + l * WB) >> shift) & mask));            \
                } else {                      /* they continue in the next word */                 \
                    const uint8_t *hi = lo + (size_t)LANES * WB;                                   \
                    for (unsigned l = 0; l < LANES; l++)                                           \
                        STORE(o + l * WB, (T)(((T)(LOAD(lo + l * WB) >> shift) |                   \
                                               (T)(LOAD(hi + l * WB) << (TB - shift))) & mask));    \
                }                                                                                  \
                if (next >= TB) { word++; next -= TB; }                                            \
                shift = next;                                                                      \
            }                                                                                      \
        }                                                                                          \
    }

static inline uint8_t ld8(const uint8_t *p) { return p[0]; }
static inline void st8(uint8_t *p, uint8_t v) { p[0] = v; }
BP_UNPACK_T(8, uint8_t, ld8, st8)
BP_UNPACK_T(16, uint16_t, pch_load_le16, pch_store_le16)
BP_UNPACK_T(32, uint32_t, pch_load_le32, pch_store_le32)
BP_UNPACK_T(64, uint64_t, pch_load_le64, pch_store_le64)

void pch_vx__bp_unpack(uint8_t *out, const uint8_t *in, uint64_t nblocks, unsigned tb, unsigned w)
{
    if (w == 0) {
        memset(out, 0, (size_t)nblocks * 1024 * (tb / 8));
        return;
    }
    switch (tb) {
    case 8: bp_unpack_8(out, in, nblocks, w); break;
    case 16: bp_unpack_16(out, in, nblocks, w); break;
    case 32: bp_unpack_32(out, in, nblocks, w); break;
    default: bp_unpack_64(out, in, nblocks, w); break;
    }
}

/* Element i (< 1024) of a block: its lane and row invert the index formula above (lane =
** i mod LANES; FL_ORDER is its own inverse), its bits start at row * W of the lane's stream.
** A point read fetches only the one or two words they lie in (vx_serde.c dec_bitpacked). */
static size_t bp_pos(unsigned tb, unsigned w, unsigned i, size_t *hi, unsigned *shift)
{
    const unsigned lanes = 1024 / tb, wb = tb / 8, within = i % 128;
    const unsigned lane = within % lanes, o = (within / lanes) * (lanes / 16);
    const unsigned bit = (fl_order[o] * 8u + i / 128) * w;
    const size_t lo = ((size_t)(bit / tb) * lanes + lane) * wb;
    *shift = bit % tb;
    *hi = *shift + w > tb ? lo + (size_t)lanes * wb : SIZE_MAX;
    return lo;
}

size_t pch_vx__bp_locate(unsigned tb, unsigned w, unsigned i, size_t *hi)
{
    unsigned shift;
    return bp_pos(tb, w, i, hi, &shift);
}

uint64_t pch_vx__bp_get(const uint8_t *block, unsigned tb, unsigned w, unsigned i)
{
    unsigned sh;
    size_t hi, lo = bp_pos(tb, w, i, &hi, &sh);
    const uint64_t mask = w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
    uint64_t v;
    if (w == 0) return 0;
    switch (tb) {
    case 8: v = (uint64_t)block[lo] >> sh | (hi != SIZE_MAX ? (uint64_t)block[hi] << (8 - sh) : 0); break;
    case 16: v = (uint64_t)pch_load_le16(block + lo) >> sh | (hi != SIZE_MAX ? (uint64_t)pch_load_le16(block + hi) << (16 - sh) : 0); break;
    case 32: v = (uint64_t)pch_load_le32(block + lo) >> sh | (hi != SIZE_MAX ? (uint64_t)pch_load_le32(block + hi) << (32 - sh) : 0); break;
    default: v = pch_load_le64(block + lo) >> sh | (hi != SIZE_MAX ? pch_load_le64(block + hi) << (64 - sh) : 0); break;
    }
    return v & mask;
}
