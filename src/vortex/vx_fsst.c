/* FSST string compression for `vortex.fsst` (vortex-format.md §6.4, §9.3 item 6).
**
** Algorithm from the FSST paper (Boncz, Neumann, Leis: "FSST: Fast Random Access String
** Compression", VLDB 2020, §4): a static table of up to 255 symbols of 1..8 bytes; code byte
** 255 escapes one literal byte. The table is built in five generations over a sample of the
** input (sample fractions 8, 38, 68, 98, 128 of 128): each generation greedily encodes the
** sample with the current table counting symbol and symbol-pair frequencies, then keeps the
** 255 candidates (symbols and concatenated pairs) of highest gain = count × length (single
** bytes weighted ×8 to cut escapes). Encoding is greedy longest match; decoding copies each
** symbol's bytes. The stored table order is the one §6.4 says the official reader checks:
** 2-byte symbols, then 3..8 non-decreasing, then all 1-byte symbols.
**
** Everything here works on bytes handed in by vx_encode.c / vx_serde.c; decoding never
** trusts a code: escapes at the end, codes past the table and output overruns fail. */
#include "vortex/vortex_int.h"

#include <stdlib.h>

#define FSST_CODES 511u             /* 256 byte pseudo-codes + 255 symbols (training) */
#define FSST_SAMPLE_TARGET 16384u   /* bytes of sample (paper: 16 KB) */
#define FSST_SAMPLE_LINE 512u       /* bytes per sampled piece */
/* the ratio's compression output over the pair counts (a piece: <= 2 code bytes per byte) */
#define FSST_SCRATCH_BYTES (2u * FSST_SAMPLE_LINE + 16u)

static uint64_t sym_mask(unsigned len) { return len >= 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * len)) - 1); }

/* Up to 8 bytes at p (n available) as a little-endian word, zero-padded. */
static uint64_t load_word(const uint8_t *p, size_t n)
{
    uint8_t t[8] = { 0 };
    if (n >= 8) return pch_load_le64(p);
    memcpy(t, p, n);
    return pch_load_le64(t);
}

static unsigned slot_of(uint16_t key) { return (unsigned)((key * 40503u) >> 7) & 511u; }

static void index_build(pch_vx_fsst_table *t)
{
    uint32_t m = 0;
    for (unsigned b = 0; b < 256; b++) t->one[b] = -1;
    memset(t->slot, 0, sizeof t->slot);
    for (uint32_t i = t->n; i-- > 0;)
        if (t->len[i] == 1) t->one[t->sym[i] & 0xff] = (int16_t)i;
    /* multi-byte ids sorted by (prefix, length desc) (insertion sort; n <= 255) */
    for (uint32_t i = 0; i < t->n; i++) {
        uint32_t j;
        if (t->len[i] < 2) continue;
        j = m++;
        while (j > 0) {
            uint8_t p = t->ids[j - 1];
            uint16_t kp = (uint16_t)t->sym[p], ki = (uint16_t)t->sym[i];
            if (kp < ki || (kp == ki && t->len[p] >= t->len[i])) break;
            t->ids[j] = p;
            j--;
        }
        t->ids[j] = (uint8_t)i;
    }
    for (uint32_t k = 0; k < m;) {
        uint16_t key = (uint16_t)t->sym[t->ids[k]];
        uint32_t e = k;
        unsigned s = slot_of(key);
        while (e < m && (uint16_t)t->sym[t->ids[e]] == key) e++;
        while (t->slot[s].cnt) s = (s + 1) & 511u;   /* <= 255 keys in 512 slots */
        t->slot[s].key = key;
        t->slot[s].start = (uint8_t)k;
        t->slot[s].cnt = (uint8_t)(e - k);
        k = e;
    }
}

/* Longest symbol matching word (rem bytes valid), or -1. */
static int find_longest(const pch_vx_fsst_table *t, uint64_t word, size_t rem)
{
    if (rem >= 2) {
        uint16_t key = (uint16_t)word;
        unsigned s = slot_of(key);
        while (t->slot[s].cnt) {
            if (t->slot[s].key == key) {
                for (unsigned k = t->slot[s].start, e = k + t->slot[s].cnt; k < e; k++) {
                    unsigned id = t->ids[k], l = t->len[id];
                    if (l <= rem && (word & sym_mask(l)) == t->sym[id]) return (int)id;
                }
                break;
            }
            s = (s + 1) & 511u;
        }
    }
    return t->one[word & 0xff];
}

size_t pch_vx__fsst_compress(const pch_vx_fsst_table *t, const uint8_t *in, size_t n, uint8_t *out)
{
    size_t pos = 0, o = 0;
    while (pos < n) {
        size_t rem = n - pos;
        uint64_t w = load_word(in + pos, rem);
        int s = find_longest(t, w, rem);
        if (s >= 0) {
            out[o++] = (uint8_t)s;
            pos += t->len[s];
        } else {
            out[o++] = PCH_VX_FSST_ESC;
            out[o++] = in[pos++];
        }
    }
    return o;
}

int pch_vx__fsst_decompress(const pch_vx_fsst_table *t, const uint8_t *codes, size_t n,
                            uint8_t *out, size_t cap, size_t *out_len)
{
    size_t o = 0;
    *out_len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = codes[i];
        if (c == PCH_VX_FSST_ESC) {
            if (i + 1 >= n || o >= cap) return PCH_ECORRUPT;
            out[o++] = codes[++i];
        } else {
            unsigned l;
            if (c >= t->n) return PCH_ECORRUPT;
            l = t->len[c];
            if (l > cap - o) return PCH_ECORRUPT;
            pch_store_le64(out + o, t->sym[c]);   /* cap + 8 bytes are writable */
            o += l;
        }
    }
    *out_len = o;
    return PCH_OK;
}

int pch_vx__fsst_table_load(pch_vx_fsst_table *t, const uint8_t *syms, size_t syms_len,
                            const uint8_t *lens, size_t lens_len, pch_error *err)
{
    unsigned prev = 2;
    int ones = 0;
    memset(t, 0, sizeof *t);
    if (syms_len % 8 || syms_len / 8 > 255)
        return pch_error_set(err, PCH_ECORRUPT, "vortex fsst: symbols buffer of %zu bytes", syms_len);
    if (lens_len != syms_len / 8)
        return pch_error_set(err, PCH_ECORRUPT, "vortex fsst: %zu symbol lengths for %zu symbols", lens_len, syms_len / 8);
    t->n = (uint32_t)lens_len;
    for (uint32_t i = 0; i < t->n; i++) {
        unsigned l = lens[i];
        if (l < 1 || l > 8) return pch_error_set(err, PCH_ECORRUPT, "vortex fsst: symbol %u has length %u", i, l);
        if (l == 1) ones = 1;
        else if (ones || l < prev)
            return pch_error_set(err, PCH_ECORRUPT, "vortex fsst: symbol table not ordered by length at symbol %u", i);
        else prev = l;
        t->len[i] = (uint8_t)l;
        t->sym[i] = pch_load_le64(syms + 8 * (size_t)i) & sym_mask(l);
    }
    index_build(t);
    return PCH_OK;
}

/* ------------------------------------------------------------------ training */

typedef struct piece { const uint8_t *p; size_t n; } piece;
typedef struct cand { uint64_t sym; uint64_t gain; uint8_t len; } cand;

static uint64_t fsst_hash(uint64_t v) { return (v * 2971215073u) ^ (v >> 15); }

static int cand_by_gain(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->gain != b->gain) return a->gain > b->gain ? -1 : 1;
    if (a->len != b->len) return a->len > b->len ? -1 : 1;
    return a->sym < b->sym ? -1 : a->sym > b->sym;
}

/* Sift down in a heap whose root is the candidate that sorts last by cand_by_gain. */
static void heap_down(cand *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && cand_by_gain(&h[l], &h[w]) > 0) w = l;
        if (r < n && cand_by_gain(&h[r], &h[w]) > 0) w = r;
        if (w == i) return;
        cand t = h[i]; h[i] = h[w]; h[w] = t;
        i = w;
    }
}

/* Class of a symbol in the stored order: 2-byte (no longer symbol shares its first two
** bytes) 0, 2-byte (some does) 1, 3..8 → 2..7, 1-byte 8. */
static unsigned sym_class(const pch_vx_fsst_table *t, uint32_t i)
{
    unsigned l = t->len[i];
    if (l == 1) return 8;
    if (l > 2) return l - 1;
    for (uint32_t k = 0; k < t->n; k++)
        if (k != i && t->len[k] > 2 && (t->sym[k] & 0xffff) == t->sym[i]) return 1;
    return 0;
}

/* Greedy pass of one piece with the training table, counting codes and code pairs. */
static void count_piece(const pch_vx_fsst_table *t, const piece *pc, uint32_t *c1, uint32_t *c2)
{
    size_t pos = 0;
    unsigned prev = FSST_CODES;
    while (pos < pc->n) {
        size_t rem = pc->n - pos;
        uint64_t w = load_word(pc->p + pos, rem);
        int s = find_longest(t, w, rem);
        unsigned code = s >= 0 ? 256u + (unsigned)s : (unsigned)(w & 0xff);
        unsigned l = s >= 0 ? t->len[s] : 1;
        c1[code]++;
        if (prev < FSST_CODES) c2[prev * FSST_CODES + code]++;
        if (l > 1) {
            unsigned fb = (unsigned)(w & 0xff);
            c1[fb]++;
            if (prev < FSST_CODES) c2[prev * FSST_CODES + fb]++;
        }
        prev = code;
        pos += l;
    }
}

static void code_sym(const pch_vx_fsst_table *t, unsigned code, uint64_t *sym, unsigned *len)
{
    if (code < 256) { *sym = code; *len = 1; }
    else { *sym = t->sym[code - 256]; *len = t->len[code - 256]; }
}

int pch_vx__fsst_train(pch_vx_fsst_table *t, pch_ctx *ctx, const pch_vx_array *a,
                       uint32_t *ratio_out, pch_error *err)
{
    return pch_vx__fsst_train_with(t, ctx, a, ratio_out, NULL, err);
}

int pch_vx__fsst_train_with(pch_vx_fsst_table *t, pch_ctx *ctx, const pch_vx_array *a,
                            uint32_t *ratio_out, uint32_t **pairs, pch_error *err)
{
    static const unsigned gens[5] = { 8, 38, 68, 98, 128 };
    uint64_t total = 0, nonempty = 0;
    piece *pcs = NULL;
    size_t npcs = 0, cap_pcs = 0;
    uint32_t *c1 = NULL, *c2 = NULL;
    cand *cs = NULL;
    int rc = PCH_OK;
    memset(t, 0, sizeof *t);
    index_build(t);
    if (ratio_out) *ratio_out = 65536;
    for (uint64_t i = 0; i < a->len; i++)
        if (pch_vx_array_is_valid(a, i)) {
            uint64_t l = (uint64_t)(a->offsets[i + 1] - a->offsets[i]);
            total += l;
            nonempty += l > 0;
        }
    if (nonempty == 0) return PCH_OK;
    /* sample: every row when small, else pseudo-random 512-byte pieces up to 16 KB */
    cap_pcs = total < FSST_SAMPLE_TARGET ? (size_t)nonempty : FSST_SAMPLE_TARGET;
    if (!(pcs = pch_malloc(ctx, cap_pcs * sizeof *pcs))) goto oom;
    if (total < FSST_SAMPLE_TARGET) {
        for (uint64_t i = 0; i < a->len; i++) {
            size_t l = (size_t)(a->offsets[i + 1] - a->offsets[i]);
            if (!pch_vx_array_is_valid(a, i) || !l) continue;
            pcs[npcs].p = a->data + a->offsets[i];
            pcs[npcs++].n = l;
        }
    } else {
        uint64_t rnd = fsst_hash(4637947), got = 0;
        while (got < FSST_SAMPLE_TARGET && npcs < cap_pcs) {
            uint64_t r, chunks, off;
            size_t l;
            rnd = fsst_hash(rnd);
            r = rnd % a->len;
            /* first non-empty valid row at or after r, wrapping (one exists) */
            for (;;) {
                if (pch_vx_array_is_valid(a, r) && a->offsets[r + 1] > a->offsets[r]) break;
                r = r + 1 == a->len ? 0 : r + 1;
            }
            l = (size_t)(a->offsets[r + 1] - a->offsets[r]);
            chunks = 1 + (l - 1) / FSST_SAMPLE_LINE;
            rnd = fsst_hash(rnd);
            off = FSST_SAMPLE_LINE * (rnd % chunks);
            pcs[npcs].p = a->data + a->offsets[r] + off;
            pcs[npcs].n = l - off < FSST_SAMPLE_LINE ? l - off : FSST_SAMPLE_LINE;
            got += pcs[npcs++].n;
        }
    }
    c1 = pch_malloc(ctx, FSST_CODES * sizeof *c1);
    if (pairs && !*pairs) *pairs = pch_calloc(ctx, (size_t)FSST_CODES * FSST_CODES, sizeof **pairs);
    c2 = pairs ? *pairs : pch_calloc(ctx, (size_t)FSST_CODES * FSST_CODES, sizeof *c2);
    if (!c1 || !c2) goto oom;
    for (unsigned g = 0; g < 5; g++) {
        unsigned frac = gens[g], min_count = 5 * frac / 128;
        size_t nc = 0, m = 0;
        unsigned act[FSST_CODES], n_act = 0;
        memset(c1, 0, FSST_CODES * sizeof *c1);   /* c2 is all zero here (cleared below) */
        for (size_t i = 0; i < npcs; i++) {
            if (frac < 128 && (fsst_hash(i) & 127) > frac) continue;
            count_piece(t, &pcs[i], c1, c2);
        }
        /* codes seen: a pair (x, y) is only counted when y is counted too, so the pair scans
        ** below visit seen codes only (not 511 x 511 cells per generation) */
        for (unsigned x = 0; x < FSST_CODES; x++) if (c1[x]) act[n_act++] = x;
        /* candidates: every counted code, plus pair concatenations before the last round */
        for (unsigned ix = 0; ix < n_act; ix++) {
            unsigned x = act[ix];
            if (c1[x] < min_count) continue;
            nc++;
            if (frac < 128)
                for (unsigned iy = 0; iy < n_act; iy++) nc += c2[x * FSST_CODES + act[iy]] != 0;
        }
        pch_free(ctx, cs);
        if (!(cs = pch_malloc(ctx, (nc ? nc : 1) * sizeof *cs))) goto oom;
        for (unsigned ix = 0; ix < n_act; ix++) {
            unsigned x = act[ix];
            uint64_t s1;
            unsigned l1;
            if (c1[x] < min_count) continue;
            code_sym(t, x, &s1, &l1);
            cs[m].sym = s1;
            cs[m].len = (uint8_t)l1;
            cs[m++].gain = (uint64_t)c1[x] * l1 * (l1 == 1 ? 8 : 1);
            if (frac >= 128 || l1 == 8) continue;
            for (unsigned iy = 0; iy < n_act; iy++) {
                unsigned y = act[iy];
                uint32_t k = c2[x * FSST_CODES + y];
                uint64_t s2;
                unsigned l2;
                if (!k) continue;
                code_sym(t, y, &s2, &l2);
                if (l1 + l2 > 8) continue;
                cs[m].sym = s1 | (s2 << (8 * l1));
                cs[m].len = (uint8_t)(l1 + l2);
                cs[m++].gain = (uint64_t)k * (l1 + l2);
            }
        }
        for (unsigned ix = 0; ix < n_act; ix++)
            for (unsigned iy = 0; iy < n_act; iy++) c2[act[ix] * FSST_CODES + act[iy]] = 0;
        /* merge duplicates (hash on symbol and length), then keep the 255 of highest gain
        ** (a bounded heap, O(m log 255): a full sort of ~65k pair candidates dominated
        ** training); the same total order as cand_by_gain, so the table is unchanged */
        if (m) {
            size_t ns = 1, u = 0;
            uint32_t *slot;
            while (ns < 2 * m) ns <<= 1;
            if (!(slot = pch_calloc(ctx, ns, sizeof *slot))) goto oom;
            for (size_t i = 0; i < m; i++) {
                uint64_t h = fsst_hash(cs[i].sym ^ ((uint64_t)cs[i].len << 59)) * 0x9e3779b97f4a7c15ull;
                size_t k = (size_t)(h >> 32) & (ns - 1);
                for (;; k = (k + 1) & (ns - 1)) {
                    uint32_t v = slot[k];
                    if (!v) { cs[u] = cs[i]; slot[k] = (uint32_t)++u; break; }
                    if (cs[v - 1].sym == cs[i].sym && cs[v - 1].len == cs[i].len) { cs[v - 1].gain += cs[i].gain; break; }
                }
            }
            pch_free(ctx, slot);
            m = u;
            if (m > 255) {
                /* min-heap (by cand_by_gain: the worst kept candidate at the top) */
                size_t hn = 255;
                for (size_t i = hn / 2; i-- > 0;) heap_down(cs, hn, i);
                for (size_t i = hn; i < m; i++)
                    if (cand_by_gain(&cs[i], &cs[0]) < 0) { cs[0] = cs[i]; heap_down(cs, hn, 0); }
                m = hn;
            }
            qsort(cs, m, sizeof *cs, cand_by_gain);
        }
        t->n = m < 255 ? (uint32_t)m : 255;
        for (uint32_t i = 0; i < t->n; i++) { t->sym[i] = cs[i].sym; t->len[i] = cs[i].len; }
        index_build(t);
    }
    /* stored order: 2 (no suffix) | 2 (suffix) | 3 | ... | 8 | 1, stable */
    {
        pch_vx_fsst_table s = *t;
        uint8_t cls[255];
        uint32_t k = 0;
        for (uint32_t i = 0; i < t->n; i++) cls[i] = (uint8_t)sym_class(t, i);
        for (unsigned c = 0; c <= 8; c++)
            for (uint32_t i = 0; i < t->n; i++)
                if (cls[i] == c) { s.sym[k] = t->sym[i]; s.len[k++] = t->len[i]; }
        *t = s;
        index_build(t);
    }
    if (ratio_out) {
        /* code bytes of the sample with the final table (pieces < 512 bytes: 1 KB scratch) */
        uint64_t in = 0, outb = 0;
        uint8_t *scratch = (uint8_t *)c2;
        for (size_t i = 0; i < npcs; i++) {
            size_t cut = pcs[i].n < FSST_SAMPLE_LINE ? pcs[i].n : FSST_SAMPLE_LINE;
            in += cut;
            outb += pch_vx__fsst_compress(t, pcs[i].p, cut, scratch);
        }
        *ratio_out = in ? (uint32_t)((outb * 65536) / in) : 65536;
        memset(scratch, 0, FSST_SCRATCH_BYTES);   /* the pair counts are all zero again */
    }
    goto done;
oom:
    rc = pch_error_set(err, PCH_ENOMEM, "vortex fsst: out of memory");
    if (pairs && c2) memset(c2, 0, (size_t)FSST_CODES * FSST_CODES * sizeof *c2);   /* counts left mid-round */
done:
    pch_free(ctx, pcs);
    pch_free(ctx, c1);
    if (!pairs) pch_free(ctx, c2);
    pch_free(ctx, cs);
    return rc;
}
