/* vortex.fsst tests (vortex-format.md §6.4, §9.3 item 6; src/vortex/vx_fsst.c): the FSST
** algorithm (training, greedy encoding, decoding) on random and realistic strings, array
** round trips through serialize/deserialize (nulls, empty strings, all 256 byte values,
** escapes, long strings), both wire forms read, the compressor choosing FSST where it wins,
** and corrupt FSST arrays rejected (bad symbol lengths and order, codes past the table,
** escape at the end, length mismatches, invalid UTF-8, under-aligned symbols).
** PCH_VX_DUMP_DIR=dir writes the files of the writer round trips there (structure check);
** PCH_VX_SEED_DIR=dir writes fuzz seeds for fuzz/vortex_array.c. */
#include "harness.h"

#include <stdlib.h>

#include "vortex/vortex_int.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static uint64_t rndn(uint64_t n) { return n ? rnd() % n : 0; }

static pch_ctx *g_ctx;
static int16_t g_map[PCH_VX_E_COUNT];

static const char *const words[] = {
    "the", "assistant", "tool_call", "observation", "{\"path\":", "error", "function", "return",
    "reasoning", " ", ", ", "\n", "import", "json", "def ", "self.", "müller", "日本語", "😀"
};

/* One text row of 0..n words. */
static size_t gen_text(char *out, size_t cap, unsigned max_words)
{
    size_t o = 0;
    unsigned nw = (unsigned)rndn(max_words + 1);
    for (unsigned i = 0; i < nw; i++) {
        const char *w = words[rndn(sizeof words / sizeof *words)];
        size_t l = strlen(w);
        if (o + l + 1 >= cap) break;
        memcpy(out + o, w, l);
        o += l;
        if (rndn(3) == 0) o += (size_t)snprintf(out + o, cap - o, "%u", (unsigned)rndn(1000));
    }
    return o;
}

/* ------------------------------------------------------------------ algorithm */

static int algo_roundtrip(pch_vx_array *a)
{
    pch_vx_fsst_table t, back;
    uint8_t syms[255 * 8], lens[255], *codes, *dec;
    pch_error err;
    int ok = 1;
    if (pch_vx__fsst_train(&t, g_ctx, a, NULL, &err)) return 0;
    for (uint32_t i = 0; i < t.n; i++) { pch_store_le64(syms + 8 * i, t.sym[i]); lens[i] = t.len[i]; }
    if (pch_vx__fsst_table_load(&back, syms, 8 * (size_t)t.n, lens, t.n, &err)) {
        fprintf(stderr, "  trained table rejected: %s\n", err.msg);
        return 0;
    }
    codes = malloc(2 * a->data_len + 16);
    dec = malloc(a->data_len + 16);
    for (uint64_t i = 0; ok && i < a->len; i++) {
        size_t l = (size_t)(a->offsets[i + 1] - a->offsets[i]), cn, got = 0;
        cn = pch_vx__fsst_compress(&t, a->data + a->offsets[i], l, codes);
        ok = cn <= 2 * l && pch_vx__fsst_decompress(&back, codes, cn, dec, l, &got) == PCH_OK && got == l &&
             (l == 0 || memcmp(dec, a->data + a->offsets[i], l) == 0);
        if (!ok) fprintf(stderr, "  row %llu (%zu bytes) failed\n", (unsigned long long)i, l);
    }
    free(codes);
    free(dec);
    return ok;
}

static pch_vx_array *strings_array(const char *type, int kind, uint64_t n)
{
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *a = NULL;
    pch_error err;
    char *buf = malloc(70000);
    if (pch_vx_dtype_parse(&dt, NULL, type, &err) || pch_vx_builder_new(&b, NULL, dt, &err)) abort();
    for (uint64_t i = 0; i < n; i++) {
        size_t l = 0;
        int null = dt->nullable && rndn(7) == 0;
        switch (kind) {
        case 0: l = gen_text(buf, 70000, 12); break;                       /* realistic text */
        case 1: l = (size_t)rndn(40); for (size_t k = 0; k < l; k++) buf[k] = (char)rnd(); break; /* random bytes */
        case 2: l = 256; for (size_t k = 0; k < l; k++) buf[k] = (char)((k + i) & 0xff); break;  /* all byte values */
        case 3: l = i % 5 == 0 ? 0 : (size_t)rndn(3); memset(buf, 'z', l); break;               /* empties, tiny */
        case 4: l = i % 3 == 0 ? 65000 : gen_text(buf, 70000, 3);                               /* long strings */
            if (l == 65000) for (size_t k = 0; k < l; k++) buf[k] = rndn(50) ? "lorem ipsum dolor sit amet, "[k % 28] : (char)(33 + rndn(90));
            break;
        case 5: l = 64; for (size_t k = 0; k < l; k++) buf[k] = "0123456789abcdef"[rndn(16)]; break; /* hex ids */
        default: break;
        }
        if (null) pch_vx_builder_append_null(b, &err);
        else if (pch_vx_builder_append_bytes(b, buf, l, &err)) abort();
    }
    if (pch_vx_builder_finish(b, &a, &err)) abort();
    pch_vx_builder_free(b);
    free(buf);
    a->dtype = dt;   /* the test keeps dt alive through the array: freed by free_strings */
    return a;
}

static void free_strings(pch_vx_array *a)
{
    pch_vx_dtype *dt = (pch_vx_dtype *)(uintptr_t)a->dtype;
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
}

static void test_vortex_fsst__algorithm(void)
{
    static const struct { const char *type; int kind; uint64_t n; } cases[] = {
        { "binary", 0, 3000 }, { "binary", 1, 2000 }, { "binary", 2, 300 }, { "binary", 3, 500 },
        { "binary", 4, 20 }, { "binary", 5, 1000 }, { "binary", 0, 3 }, { "binary", 3, 0 }
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        pch_vx_array *a = strings_array(cases[c].type, cases[c].kind, cases[c].n);
        PCH_CHECK_MSG(algo_roundtrip(a), "case %zu", c);
        free_strings(a);
    }
    /* text compresses; a repetitive corpus gets long symbols */
    {
        pch_vx_array *a = strings_array("binary", 0, 3000);
        pch_vx_fsst_table t;
        pch_error err;
        uint8_t *codes = malloc(2 * a->data_len + 16);
        size_t cn = 0;
        unsigned long_syms = 0;
        PCH_CHECK_OK(pch_vx__fsst_train(&t, g_ctx, a, NULL, &err), &err);
        for (uint64_t i = 0; i < a->len; i++)
            cn += pch_vx__fsst_compress(&t, a->data + a->offsets[i], (size_t)(a->offsets[i + 1] - a->offsets[i]), codes);
        for (uint32_t i = 0; i < t.n; i++) long_syms += t.len[i] >= 5;
        PCH_CHECK_MSG(cn * 2 < a->data_len, "text: %zu code bytes for %zu bytes", cn, a->data_len);
        PCH_CHECK(t.n > 20 && long_syms > 5);
        free(codes);
        free_strings(a);
    }
}

/* A training scratch shared across trainings (pch_vx__fsst_train_with, as the writer's threads
** keep one) gives exactly the table and ratio of a fresh training on every case, in any order,
** and is all zero after each: a count left behind would skew the next lane's table. */
static void test_vortex_fsst__shared_scratch(void)
{
    static const struct { int kind; uint64_t n; } cases[] = {
        { 0, 3000 }, { 1, 2000 }, { 2, 300 }, { 3, 500 }, { 4, 20 }, { 5, 1000 }, { 0, 3 }, { 3, 0 }, { 1, 40 }
    };
    const size_t cells = 511u * 511u;
    uint32_t *pairs = NULL;
    pch_error err;
    for (int round = 0; round < 2; round++)
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            size_t c = round ? sizeof cases / sizeof *cases - 1 - k : k;
            pch_vx_array *a = strings_array("binary", cases[c].kind, cases[c].n);
            pch_vx_fsst_table fresh, shared;
            uint32_t r1 = 0, r2 = 0;
            size_t dirty = 0;
            PCH_CHECK_OK(pch_vx__fsst_train(&fresh, g_ctx, a, &r1, &err), &err);
            PCH_CHECK_OK(pch_vx__fsst_train_with(&shared, g_ctx, a, (k & 1) ? &r2 : NULL, &pairs, &err), &err);
            if (!(k & 1)) r2 = r1;
            PCH_CHECK_MSG(fresh.n == shared.n && r1 == r2, "case %zu: %u/%u symbols, ratio %u/%u", c, fresh.n, shared.n, r1, r2);
            for (uint32_t i = 0; i < fresh.n && i < shared.n; i++)
                PCH_CHECK_MSG(fresh.sym[i] == shared.sym[i] && fresh.len[i] == shared.len[i], "case %zu symbol %u", c, i);
            if (pairs)
                for (size_t i = 0; i < cells; i++) dirty += pairs[i] != 0;
            PCH_CHECK_MSG(dirty == 0, "case %zu: %zu pair counts left in the scratch", c, dirty);
            free_strings(a);
        }
    PCH_CHECK(pairs != NULL);
    pch_free(g_ctx, pairs);
}

/* ------------------------------------------------------------------ array round trips */

static int segment_of(const pch_vx_enode *root, pch_buf *seg, pch_error *err)
{
    uint16_t map[PCH_VX_E_COUNT];
    uint8_t used[PCH_VX_E_COUNT], al;
    for (int i = 0; i < PCH_VX_E_COUNT; i++) map[i] = (uint16_t)i;
    memset(used, 0, sizeof used);
    return pch_vx__serialize(seg, root, map, used, &al, err);
}

static int decode_seg(const pch_buf *seg, const pch_vx_dtype *dt, uint64_t len, pch_vx_array **out, pch_error *err)
{
    pch_vx_decode_ctx dc;
    dc.ctx = g_ctx;
    dc.spec_map = g_map;
    dc.n_specs = PCH_VX_E_COUNT;
    dc.text_codes = false;
    return pch_vx__deserialize(out, &dc, seg->data, seg->len, dt, len, err);
}

/* A sparse segment's fills (pch_vx__deserialize_range_sparse): the bytes asked for. */
static int count_fill(void *payload, size_t off, size_t len, pch_error *err)
{
    (void)off;
    (void)err;
    *(size_t *)payload += len;
    return 0;
}

/* Rows [b, b + n) of seg, read sparsely: equal to the slice of a; *filled = the bytes read. */
static int range_matches(const pch_buf *seg, const pch_vx_array *a, uint64_t b, uint64_t n, size_t *filled)
{
    pch_vx_decode_ctx dc;
    pch_vx_array *part = NULL, *want = NULL;
    pch_error err;
    int ok;
    dc.ctx = g_ctx;
    dc.spec_map = g_map;
    dc.n_specs = PCH_VX_E_COUNT;
    dc.text_codes = false;
    *filled = 0;
    if (pch_vx__deserialize_range_sparse(&part, &dc, seg->data, seg->len, a->dtype, a->len, b, n, count_fill, filled, &err) ||
        pch_vx__array_slice(&want, a, b, n, &err)) {
        fprintf(stderr, "rows %llu+%llu: %s\n", (unsigned long long)b, (unsigned long long)n, err.msg);
        pch_vx_array_free(part);
        return 0;
    }
    ok = pch_vx_array_equal(part, want);
    pch_vx_array_free(part);
    pch_vx_array_free(want);
    return ok;
}

static void write_seed(const char *name, const char *dtype_text, const pch_buf *seg, uint64_t len)
{
    static const char *const dts[] = { "i64", "i32?", "u8", "u16?", "f64?", "f32", "bool?", "utf8?", "binary" };
    /* index into the dtype list of fuzz/vortex_array.c; non-null utf8 is read as utf8? */
    const char *dir = getenv("PCH_VX_SEED_DIR");
    char path[512];
    FILE *f;
    uint8_t head[3] = { 0, (uint8_t)len, (uint8_t)(len >> 8) };
    if (!dir) return;
    if (!strcmp(dtype_text, "utf8")) dtype_text = "utf8?";
    for (unsigned i = 0; i < sizeof dts / sizeof *dts; i++) if (!strcmp(dts[i], dtype_text)) head[0] = (uint8_t)i;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "wb"))) return;
    fwrite(head, 1, 3, f);
    fwrite(seg->data, 1, seg->len, f);
    fclose(f);
}

static void test_vortex_fsst__array_roundtrip(void)
{
    static const struct { const char *type; int kind; uint64_t n; const char *seed; } cases[] = {
        { "utf8?", 0, 2000, "fsst_text" }, { "binary", 1, 500, "fsst_random" }, { "binary", 2, 100, NULL },
        { "utf8", 3, 300, "fsst_tiny" }, { "utf8?", 4, 12, NULL }, { "binary?", 5, 400, NULL },
        { "utf8?", 0, 0, NULL }, { "utf8?", 3, 1, NULL }
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        pch_vx_array *a = strings_array(cases[c].type, cases[c].kind, cases[c].n), *back = NULL;
        pch_arena arena;
        pch_vx_encoder e;
        pch_vx_enode *root = NULL;
        pch_buf seg;
        pch_error err;
        pch_arena_init(&arena, g_ctx, 1 << 16);
        pch_buf_init(&seg, g_ctx);
        memset(&e, 0, sizeof e);
        e.ctx = g_ctx;
        e.arena = &arena;
        e.compress = 1;
        PCH_CHECK_OK(pch_vx__encode_fsst(&e, a, &root, &err), &err);
        PCH_CHECK(root && root->enc == PCH_VX_E_FSST && root->n_bufs == 2 && root->n_children == 2);
        PCH_CHECK(root->children[0]->enc == PCH_VX_E_VARBIN);
        PCH_CHECK_OK(segment_of(root, &seg, &err), &err);
        PCH_CHECK_OK(decode_seg(&seg, a->dtype, a->len, &back, &err), &err);
        PCH_CHECK_MSG(back && pch_vx_array_equal(a, back), "case %zu", c);
        /* row ranges read only their rows' codes and lengths (a point read in a large
        ** cluster): every range equals the slice, and one row of a long array reads a small
        ** part of the segment */
        for (uint64_t b0 = 0; b0 < a->len; b0 += 1 + (a->len / 40)) {
            size_t filled;
            uint64_t n = 1 + b0 % 7;
            if (n > a->len - b0) n = a->len - b0;
            PCH_CHECK_MSG(range_matches(&seg, a, b0, n, &filled), "case %zu rows %llu+%llu", c, (unsigned long long)b0, (unsigned long long)n);
            if (a->len >= 1000 && n == 1)
                PCH_CHECK_MSG(filled * 4 < seg.len, "case %zu row %llu read %zu of %zu bytes", c, (unsigned long long)b0, filled, seg.len);
        }
        if (cases[c].seed && seg.len < 60000) write_seed(cases[c].seed, cases[c].type, &seg, a->len);
        pch_vx_array_free(back);
        pch_buf_dispose(&seg);
        pch_arena_reset(&arena);
        pch_arena_dispose(&arena);
        free_strings(a);
    }
}

/* ------------------------------------------------------------------ hand-built arrays */

typedef struct hand {
    uint8_t syms[8 * 8];
    uint8_t lens[9];
    unsigned nsym;
    uint8_t codes[64];
    int32_t offs[8];
    uint32_t ulens[8];
    unsigned rows;
    unsigned sym_align;   /* exponent of the symbols buffer */
    int modern;           /* 0.59+ form: 3 buffers, children [ulens, offsets] */
    int lens_delta;       /* lengths buffer size - nsym */
} hand;

/* Segment of a hand-made FSST array over `rows` rows. */
static int hand_segment(const hand *h, pch_buf *seg, pch_error *err)
{
    pch_vx_enode root, vb, off, ul, *rk[2], *vk[1];
    uint8_t meta[8], vmeta[4];
    size_t ml = 0;
    memset(&root, 0, sizeof root);
    memset(&vb, 0, sizeof vb);
    memset(&off, 0, sizeof off);
    memset(&ul, 0, sizeof ul);
    off.enc = PCH_VX_E_PRIMITIVE;
    off.n_bufs = 1;
    off.buf[0] = (const uint8_t *)h->offs;
    off.buf_len[0] = 4 * (h->rows + 1);
    off.buf_align[0] = 2;
    ul.enc = PCH_VX_E_PRIMITIVE;
    ul.n_bufs = 1;
    ul.buf[0] = (const uint8_t *)h->ulens;
    ul.buf_len[0] = 4 * h->rows;
    ul.buf_align[0] = 2;
    root.enc = PCH_VX_E_FSST;
    meta[ml++] = 0x08; meta[ml++] = PCH_VX_U32;                    /* uncompressed_lengths_ptype */
    if (h->modern) { meta[ml++] = 0x10; meta[ml++] = PCH_VX_I32; } /* codes_offsets_ptype */
    root.meta = meta;
    root.meta_len = ml;
    root.buf[0] = h->syms;
    root.buf_len[0] = 8 * h->nsym;
    root.buf_align[0] = (uint8_t)h->sym_align;
    root.buf[1] = h->lens;
    root.buf_len[1] = (size_t)((int)h->nsym + h->lens_delta);
    root.n_children = 2;
    root.children = rk;
    if (h->modern) {
        root.n_bufs = 3;
        root.buf[2] = h->codes;
        root.buf_len[2] = (size_t)h->offs[h->rows];
        rk[0] = &ul;
        rk[1] = &off;
    } else {
        root.n_bufs = 2;
        vb.enc = PCH_VX_E_VARBIN;
        vmeta[0] = 0x08; vmeta[1] = PCH_VX_I32;
        vb.meta = vmeta;
        vb.meta_len = 2;
        vb.n_bufs = 1;
        vb.buf[0] = h->codes;
        vb.buf_len[0] = (size_t)h->offs[h->rows];
        vb.n_children = 1;
        vk[0] = &off;
        vb.children = vk;
        rk[0] = &vb;
        rk[1] = &ul;
    }
    return segment_of(&root, seg, err);
}

/* Valid base: symbols "ab", "xyz", "q"; rows "abxyz", "q!", "" */
static void hand_base(hand *h, int modern)
{
    static const uint8_t codes[] = { 0, 1, 2, 255, '!' };
    memset(h, 0, sizeof *h);
    memcpy(h->syms, "ab\0\0\0\0\0\0xyz\0\0\0\0\0q\0\0\0\0\0\0\0", 24);
    h->lens[0] = 2; h->lens[1] = 3; h->lens[2] = 1;
    h->nsym = 3;
    memcpy(h->codes, codes, sizeof codes);
    h->offs[0] = 0; h->offs[1] = 2; h->offs[2] = 5; h->offs[3] = 5;
    h->ulens[0] = 5; h->ulens[1] = 2; h->ulens[2] = 0;
    h->rows = 3;
    h->sym_align = 3;
    h->modern = modern;
}

static int hand_decode(const hand *h, const char *type, pch_vx_array **out, pch_error *err)
{
    pch_buf seg;
    pch_vx_dtype *dt = NULL;
    int rc;
    *out = NULL;
    pch_buf_init(&seg, g_ctx);
    if ((rc = hand_segment(h, &seg, err)) == 0 && (rc = pch_vx_dtype_parse(&dt, NULL, type, err)) == 0)
        rc = decode_seg(&seg, dt, h->rows, out, err);
    if (!rc) {
        pch_vx_array *a = *out;
        /* dtype is freed below: copy out what the caller checks */
        if (a->len != h->rows || a->offsets[1] != 5 || memcmp(a->data, "abxyz", 5) != 0 || a->offsets[2] != 7 ||
            memcmp(a->data + 5, "q!", 2) != 0 || a->offsets[3] != 7)
            rc = pch_error_set(err, PCH_EINVAL, "hand-built array decoded to other values");
        pch_vx_array_free(a);
        *out = NULL;
    }
    if (getenv("PCH_VX_SEED_DIR") && seg.len && !strcmp(type, "utf8?")) {
        static int seq;
        char name[64];
        snprintf(name, sizeof name, "fsst_hand_%02d", seq++);
        write_seed(name, "utf8?", &seg, h->rows);
    }
    pch_vx_dtype_free(dt);
    pch_buf_dispose(&seg);
    return rc;
}

static void test_vortex_fsst__both_forms_and_corruption(void)
{
    hand h;
    pch_vx_array *a;
    pch_error err;
    int rc;
    /* positive controls: legacy and 0.59+ wire forms */
    for (int modern = 0; modern < 2; modern++) {
        hand_base(&h, modern);
        PCH_CHECK_OK(hand_decode(&h, "utf8?", &a, &err), &err);
        PCH_CHECK_OK(hand_decode(&h, "binary", &a, &err), &err);
    }
#define BAD_CASE(what, mutate) do { \
        for (int modern = 0; modern < 2; modern++) { \
            hand_base(&h, modern); \
            mutate; \
            rc = hand_decode(&h, "utf8?", &a, &err); \
            PCH_CHECK_MSG(rc == PCH_ECORRUPT, "%s (%s form): rc %d %s", what, modern ? "0.59" : "legacy", rc, rc ? err.msg : ""); \
        } } while (0)
    BAD_CASE("symbol length 0", h.lens[0] = 0);
    BAD_CASE("symbol length 9", h.lens[1] = 9);
    BAD_CASE("1-byte symbol before a 2-byte one", (h.lens[0] = 1, h.lens[2] = 2));
    BAD_CASE("lengths not non-decreasing", (h.lens[0] = 3, h.lens[1] = 2));
    BAD_CASE("fewer lengths than symbols", h.lens_delta = -1);
    BAD_CASE("more lengths than symbols", h.lens_delta = 1);
    BAD_CASE("code past the table", h.codes[1] = 3);
    BAD_CASE("code 254 past the table", h.codes[2] = 254);
    BAD_CASE("escape at the end of a row", (h.codes[4] = 255, h.ulens[1] = 1, h.offs[2] = 4, h.offs[3] = 4));
    BAD_CASE("decodes longer than its length", h.ulens[0] = 4);
    BAD_CASE("decodes shorter than its length", h.ulens[1] = 3);
    BAD_CASE("invalid UTF-8", (h.codes[4] = 0xff, h.codes[3] = 255));
    BAD_CASE("symbols declared 4-aligned", h.sym_align = 2);
#undef BAD_CASE
    /* 256 symbols do not fit */
    {
        hand_base(&h, 0);
        pch_vx_fsst_table t;
        uint8_t *s = calloc(256, 8), l[256];
        memset(l, 1, sizeof l);
        PCH_CHECK(pch_vx__fsst_table_load(&t, s, 256 * 8, l, 256, &err) == PCH_ECORRUPT);
        PCH_CHECK(pch_vx__fsst_table_load(&t, s, 255 * 8, l, 255, &err) == PCH_OK && t.n == 255);
        PCH_CHECK(pch_vx__fsst_table_load(&t, s, 13, l, 1, &err) == PCH_ECORRUPT);
        free(s);
    }
    /* the legacy codes child must be vortex.varbin */
    {
        pch_buf seg;
        pch_vx_enode root, cst, ul, *rk[2];
        uint8_t meta[2] = { 0x08, PCH_VX_U32 }, sv[2] = { 0x08, 0x00 }, lens[1] = { 1 }, syms[8] = { 'a' };
        uint32_t ulens[1] = { 0 };
        pch_vx_dtype *dt = NULL;
        memset(&root, 0, sizeof root);
        memset(&cst, 0, sizeof cst);
        memset(&ul, 0, sizeof ul);
        cst.enc = PCH_VX_E_CONSTANT;   /* a constant Binary scalar as the codes child */
        sv[0] = 0x08; sv[1] = 0x00;
        cst.n_bufs = 1; cst.buf[0] = sv; cst.buf_len[0] = 2;
        ul.enc = PCH_VX_E_PRIMITIVE; ul.n_bufs = 1; ul.buf[0] = (const uint8_t *)ulens; ul.buf_len[0] = 4; ul.buf_align[0] = 2;
        root.enc = PCH_VX_E_FSST; root.meta = meta; root.meta_len = 2;
        root.n_bufs = 2; root.buf[0] = syms; root.buf_len[0] = 8; root.buf_align[0] = 3; root.buf[1] = lens; root.buf_len[1] = 1;
        rk[0] = &cst; rk[1] = &ul; root.children = rk; root.n_children = 2;
        pch_buf_init(&seg, g_ctx);
        PCH_CHECK_OK(segment_of(&root, &seg, &err), &err);
        PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "binary", &err), &err);
        a = NULL;
        PCH_CHECK(decode_seg(&seg, dt, 1, &a, &err) == PCH_ECORRUPT && strstr(err.msg, "not vortex.varbin"));
        pch_vx_array_free(a);
        pch_vx_dtype_free(dt);
        pch_buf_dispose(&seg);
    }
}

/* ------------------------------------------------------------------ compressor choice */

static void test_vortex_fsst__compressor_picks_fsst(void)
{
    pch_error err;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *chunk = NULL, *back = NULL;
    pch_vx_dtype *bdt = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_file *f = NULL;
    pch_vx_write_options o = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_lane_report rep;
    pch_bytes bytes;
    char buf[128];
    /* hex digests (zstd gains no more than FSST's byte pairs and pays its decode penalty) and
    ** varied prose (where zstd may win) */
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "digest:utf8?,text:utf8?", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (int r = 0; r < 6000; r++) {
        size_t l;
        memcpy(buf, "sha256:", 7);
        for (int k = 0; k < 64; k++) buf[7 + k] = "0123456789abcdef"[rndn(16)];
        if (r % 11 == 0) pch_vx_builder_append_null(pch_vx_builder_child(b, 0), &err);
        else pch_vx_builder_append_bytes(pch_vx_builder_child(b, 0), buf, 71, &err);
        l = gen_text(buf, sizeof buf, 10);
        pch_vx_builder_append_bytes(pch_vx_builder_child(b, 1), buf, l, &err);
        PCH_CHECK_OK(pch_vx_builder_append_valid(b, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &chunk, &err), &err);
    o.dict_layout = 0;
    PCH_CHECK_OK(pch_vx_writer_open(&w, NULL, dt, &o, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_write(w, chunk, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_finish(w, &err), &err);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 0, &rep), &err);
    PCH_CHECK_MSG(strncmp(rep.encodings, "vortex.fsst", 11) == 0, "%s", rep.encodings);
    PCH_CHECK_MSG(rep.stored_bytes * 10 < rep.logical_bytes * 6, "%llu of %llu", (unsigned long long)rep.stored_bytes,
                  (unsigned long long)rep.logical_bytes);
    PCH_CHECK_OK(pch_vx_writer_lane(w, 1, &rep), &err);
    bytes = pch_vx_writer_bytes(w);
    if (getenv("PCH_VX_DUMP_DIR")) {
        char path[512];
        snprintf(path, sizeof path, "%s/fsst_000.vortex", getenv("PCH_VX_DUMP_DIR"));
        PCH_CHECK_OK(pch_file_publish(path, bytes.ptr, bytes.len, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_file_open_mem(&f, NULL, bytes.ptr, bytes.len, &err), &err);
    PCH_CHECK_OK(pch_vx_file_check(f, &err), &err);
    PCH_CHECK_OK(pch_vx_file_scan(f, NULL, &back, &bdt, &err), &err);
    for (uint32_t i = 0; i < 2; i++) {
        pch_vx_array tmp = *chunk->children[i];
        tmp.dtype = back->children[i]->dtype;
        PCH_CHECK(pch_vx_array_equal(back->children[i], &tmp));
    }
    pch_vx_array_free(back);
    pch_vx_dtype_free(bdt);
    pch_vx_file_free(f);
    pch_vx_writer_free(w);
    pch_vx_array_free(chunk);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
}

/* The compressor's per-lane FSST memo (issue 18 item 4): chunks where FSST is tried and
** loses count up; after PCH_VX_FSST_LOSSES of them FSST is not tried (the count holds) except
** on every PCH_VX_FSST_REPROBE-th chunk; a chunk where FSST wins resets it, and a lane where
** it wins keeps trying it. */
static void test_vortex_fsst__memo(void)
{
    pch_error err;
    pch_vx_array *prose = strings_array("utf8?", 0, 3000);      /* zstd wins on this */
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *b = NULL;
    pch_vx_array *hex = NULL;
    char buf[80];
    uint32_t losses = 0, hex_losses = 0;
    PCH_CHECK_OK(pch_vx_dtype_parse(&dt, NULL, "utf8", &err), &err);
    PCH_CHECK_OK(pch_vx_builder_new(&b, NULL, dt, &err), &err);
    for (int r = 0; r < 3000; r++) {                             /* FSST wins on hex digests */
        memcpy(buf, "sha256:", 7);
        for (int k = 0; k < 64; k++) buf[7 + k] = "0123456789abcdef"[rndn(16)];
        PCH_CHECK_OK(pch_vx_builder_append_bytes(b, buf, 71, &err), &err);
    }
    PCH_CHECK_OK(pch_vx_builder_finish(b, &hex, &err), &err);
    for (uint64_t chunk = 0; chunk < PCH_VX_FSST_REPROBE + 2; chunk++) {
        for (int which = 0; which < 2; which++) {
            pch_arena arena;
            pch_vx_encoder e;
            pch_vx_enode *root = NULL;
            uint32_t before = which ? hex_losses : losses;
            pch_arena_init(&arena, g_ctx, 1 << 16);
            memset(&e, 0, sizeof e);
            e.ctx = g_ctx;
            e.arena = &arena;
            e.compress = 1;
            e.fsst_losses = which ? &hex_losses : &losses;
            e.chunk = chunk;
            PCH_CHECK_OK(pch_vx__encode(&e, which ? hex : prose, &root, &err), &err);
            if (which) {
                PCH_CHECK_MSG(root && root->enc == PCH_VX_E_FSST && hex_losses == 0, "hex chunk %llu: enc %d, losses %u",
                              (unsigned long long)chunk, root ? root->enc : -1, hex_losses);
            } else if (before < PCH_VX_FSST_LOSSES || chunk % PCH_VX_FSST_REPROBE == 0) {
                PCH_CHECK_MSG(losses == before + 1, "prose chunk %llu: FSST tried, losses %u -> %u", (unsigned long long)chunk, before, losses);
            } else {
                PCH_CHECK_MSG(losses == before, "prose chunk %llu: FSST skipped, losses %u -> %u", (unsigned long long)chunk, before, losses);
            }
            pch_arena_dispose(&arena);
        }
    }
    PCH_CHECK(losses == PCH_VX_FSST_LOSSES + 1);   /* the first tries, then the re-probe */
    pch_vx_array_free(hex);
    pch_vx_builder_free(b);
    pch_vx_dtype_free(dt);
    free_strings(prose);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "vortex_fsst_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) < 0) return 1;
    for (int i = 0; i < PCH_VX_E_COUNT; i++) g_map[i] = (int16_t)i;
    PCH_RUN(test_vortex_fsst__algorithm);
    PCH_RUN(test_vortex_fsst__shared_scratch);
    PCH_RUN(test_vortex_fsst__array_roundtrip);
    PCH_RUN(test_vortex_fsst__both_forms_and_corruption);
    PCH_RUN(test_vortex_fsst__compressor_picks_fsst);
    PCH_RUN(test_vortex_fsst__memo);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
