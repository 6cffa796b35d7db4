/* Tests of the FlatBuffers builder/verifier (vortex-format.md §2, §12.2), the protobuf helpers,
** scalars, dtypes (FlatBuffer + text forms) and FastLanes bit-packing (Appendix A). */
#include "harness.h"

#include "vortex/vortex_int.h"

static void test_vortex_fb__roundtrip_table(void)
{
    pch_vx_fbb b;
    pch_vx_fbv v;
    pch_vx_fbt t, sub;
    pch_bytes out;
    pch_error err;
    uint32_t s, vec, inner, root, offs[2];
    uint64_t u64;
    uint8_t u8;
    const char *str;
    size_t sl;
    int present;
    uint8_t specs[32] = { 0 };
    pch_vx_fbvec sv;
    pch_vx_fbb_init(&b, NULL);
    s = pch_vx_fbb_string(&b, "hello", 5);
    pch_store_le64(specs, 4);
    pch_store_le64(specs + 16, 99);
    vec = pch_vx_fbb_vector(&b, specs, 2, 16, 8);
    pch_vx_fbb_start(&b);
    pch_vx_fbb_u8(&b, 0, 7, 0, 0);
    inner = pch_vx_fbb_end(&b);
    offs[0] = inner;
    offs[1] = inner;
    uint32_t tv = pch_vx_fbb_offsets(&b, offs, 2);
    pch_vx_fbb_start(&b);
    pch_vx_fbb_u64(&b, 0, 0x1122334455667788ull, 0, 0);
    pch_vx_fbb_off(&b, 1, s);
    pch_vx_fbb_off(&b, 2, vec);
    pch_vx_fbb_off(&b, 3, tv);
    pch_vx_fbb_u8(&b, 4, 0, 0, 0);     /* default: omitted */
    root = pch_vx_fbb_end(&b);
    PCH_CHECK_OK(pch_vx_fbb_finish(&b, root, &out, &err), &err);
    PCH_CHECK(out.len % 8 == 0);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, out.ptr, out.len, "test", &err), &err);
    PCH_CHECK_OK(pch_vx_fb_u64(&t, 0, 0, &u64), &err);
    PCH_CHECK(u64 == 0x1122334455667788ull);
    PCH_CHECK_OK(pch_vx_fb_string(&t, 1, 1, &str, &sl, &present), &err);
    PCH_CHECK(sl == 5 && memcmp(str, "hello", 5) == 0 && str[5] == 0);
    PCH_CHECK_OK(pch_vx_fb_vector(&t, 2, 16, 8, &sv, &present), &err);
    PCH_CHECK(present && sv.n == 2 && pch_load_le64(out.ptr + sv.pos + 16) == 99);
    PCH_CHECK_OK(pch_vx_fb_vector(&t, 3, 4, 4, &sv, &present), &err);
    PCH_CHECK_OK(pch_vx_fb_vec_table(&t, &sv, 1, &sub), &err);
    PCH_CHECK_OK(pch_vx_fb_u8(&sub, 0, 0, &u8), &err);
    PCH_CHECK(u8 == 7);
    PCH_CHECK(!pch_vx_fb_has(&t, 4));
    PCH_CHECK_OK(pch_vx_fb_u8(&t, 4, 42, &u8), &err);
    PCH_CHECK(u8 == 42);
    pch_vx_fbb_dispose(&b);
}

/* Corruptions the verifier must reject (§12.2). */
static void test_vortex_fb__verifier_rejects(void)
{
    pch_vx_fbb b;
    pch_vx_fbv v;
    pch_vx_fbt t;
    pch_bytes out;
    pch_error err;
    uint8_t *copy;
    const char *str;
    size_t sl;
    uint64_t u64;
    pch_vx_fbb_init(&b, NULL);
    uint32_t s = pch_vx_fbb_string(&b, "abc", 3);
    pch_vx_fbb_start(&b);
    pch_vx_fbb_u64(&b, 0, 5, 0, 0);
    pch_vx_fbb_off(&b, 1, s);
    uint32_t root = pch_vx_fbb_end(&b);
    PCH_CHECK_OK(pch_vx_fbb_finish(&b, root, &out, &err), &err);
    copy = malloc(out.len + 8);
    /* root offset past the end */
    memcpy(copy, out.ptr, out.len);
    pch_store_le32(copy, (uint32_t)out.len + 4);
    PCH_CHECK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err) == PCH_ECORRUPT);
    /* misaligned root table */
    memcpy(copy, out.ptr, out.len);
    pch_store_le32(copy, pch_load_le32(out.ptr) + 1);
    PCH_CHECK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err) == PCH_ECORRUPT);
    /* string without NUL terminator */
    memcpy(copy, out.ptr, out.len);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err), &err);
    PCH_CHECK_OK(pch_vx_fb_string(&t, 1, 1, &str, &sl, NULL), &err);
    copy[(const uint8_t *)str - copy + 3] = 'x';
    PCH_CHECK(pch_vx_fb_string(&t, 1, 1, &str, &sl, NULL) == PCH_ECORRUPT);
    PCH_CHECK(strstr(err.msg, "NUL") != NULL);
    /* invalid UTF-8 */
    memcpy(copy, out.ptr, out.len);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err), &err);
    PCH_CHECK_OK(pch_vx_fb_string(&t, 1, 1, &str, &sl, NULL), &err);
    copy[(const uint8_t *)str - copy] = 0xff;
    PCH_CHECK(pch_vx_fb_string(&t, 1, 1, &str, &sl, NULL) == PCH_ECORRUPT);
    /* vtable length beyond the buffer */
    memcpy(copy, out.ptr, out.len);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err), &err);
    pch_store_le16(copy + t.vt, 0x7ff0);
    PCH_CHECK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err) == PCH_ECORRUPT);
    /* a field outside its table */
    memcpy(copy, out.ptr, out.len);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err), &err);
    pch_store_le16(copy + t.vt + 4, (uint16_t)(t.tab_len - 2));
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err), &err);
    PCH_CHECK(pch_vx_fb_u64(&t, 0, 0, &u64) == PCH_ECORRUPT);
    /* misaligned u64 field */
    memcpy(copy, out.ptr, out.len);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err), &err);
    pch_store_le16(copy + t.vt + 4, 4);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, copy, out.len, "t", &err), &err);
    if ((t.pos + 4) % 8 != 0) PCH_CHECK(pch_vx_fb_u64(&t, 0, 0, &u64) == PCH_ECORRUPT);
    /* required field missing */
    PCH_CHECK(pch_vx_fb_string(&t, 5, 1, &str, &sl, NULL) == PCH_ECORRUPT);
    free(copy);
    pch_vx_fbb_dispose(&b);
}

/* Depth limit 64 (§12.2). */
static void test_vortex_fb__depth_limit(void)
{
    pch_vx_fbb b;
    pch_vx_fbv v;
    pch_vx_fbt t, c;
    pch_bytes out;
    pch_error err;
    uint32_t cur = 0;
    int rc = 0, depth = 1;
    pch_vx_fbb_init(&b, NULL);
    for (int i = 0; i < 70; i++) {
        pch_vx_fbb_start(&b);
        pch_vx_fbb_off(&b, 0, cur);
        cur = pch_vx_fbb_end(&b);
    }
    PCH_CHECK_OK(pch_vx_fbb_finish(&b, cur, &out, &err), &err);
    PCH_CHECK_OK(pch_vx_fb_root(&t, &v, out.ptr, out.len, "deep", &err), &err);
    for (;;) {
        int present;
        rc = pch_vx_fb_table(&t, 0, 0, &c, &present);
        if (rc || !present) break;
        t = c;
        depth++;
    }
    PCH_CHECK(rc == PCH_ELIMIT);
    PCH_CHECK(depth == 64);
    pch_vx_fbb_dispose(&b);
}

static void test_vortex_fb__protobuf_and_scalars(void)
{
    pch_buf b;
    pch_vx_scalar s, d;
    pch_error err;
    pch_buf_init(&b, NULL);
    /* Appendix B examples */
    pch_vx__pb_uint(&b, 1, 300);
    pch_vx__pb_uint(&b, 2, 7);
    PCH_CHECK(b.len == 5 && memcmp(b.data, "\x08\xac\x02\x10\x07", 5) == 0);
    pch_buf_clear(&b);
    memset(&s, 0, sizeof s);
    s.kind = PCH_VX_SV_I64; s.i = -1;
    pch_vx__scalar_encode(&b, &s);
    PCH_CHECK(b.len == 2 && b.data[0] == 0x18 && b.data[1] == 0x01);
    pch_buf_clear(&b);
    s.kind = PCH_VX_SV_U64; s.u = 200;
    pch_vx__scalar_encode(&b, &s);
    PCH_CHECK(b.len == 3 && memcmp(b.data, "\x20\xc8\x01", 3) == 0);
    pch_buf_clear(&b);
    s.kind = PCH_VX_SV_NULL;
    pch_vx__scalar_encode(&b, &s);
    PCH_CHECK(b.len == 2 && b.data[0] == 0x08 && b.data[1] == 0);
    pch_buf_clear(&b);
    s.kind = PCH_VX_SV_I64; s.i = INT64_MIN;
    pch_vx__scalar_encode(&b, &s);
    PCH_CHECK_OK(pch_vx__scalar_decode(&d, b.data, b.len, &err), &err);
    PCH_CHECK(d.kind == PCH_VX_SV_I64 && d.i == INT64_MIN);
    pch_buf_clear(&b);
    s.kind = PCH_VX_SV_STR; s.p = (const uint8_t *)"ab"; s.n = 2;
    pch_vx__scalar_encode(&b, &s);
    PCH_CHECK(b.len == 4 && memcmp(b.data, "\x3a\x02\x61\x62", 4) == 0);
    /* truncated input */
    PCH_CHECK(pch_vx__scalar_decode(&d, b.data, 3, &err) == PCH_ECORRUPT);
    PCH_CHECK(pch_vx__scalar_decode(&d, b.data, 0, &err) == PCH_ECORRUPT);
    pch_buf_dispose(&b);
}

static void test_vortex_fb__dtypes(void)
{
    static const char *const schemas[] = {
        "id:i64,name:utf8?,items:list<struct<a:i32,b:utf8?>>?",
        "a:null,b:bool?,c:u8,d:u16?,e:u32,f:u64,g:i8,h:i16,i:i32?,j:f16,k:f32,l:f64?",
        "d:decimal(10,2)?,e:decimal(38,-3),f:decimal(76,10)",
        "x:binary?,y:fsl<f32,3>?,z:ext<\"vortex.date\",i32?>,w:struct<>,\"q r\":list<list<u8>?>",
    };
    pch_error err;
    for (size_t i = 0; i < sizeof schemas / sizeof *schemas; i++) {
        pch_vx_dtype *d = NULL, *back = NULL;
        pch_vx_fbb b;
        pch_vx_fbv v;
        pch_vx_fbt t;
        pch_bytes out;
        char *txt = NULL, *txt2 = NULL;
        PCH_CHECK_OK(pch_vx_dtype_parse(&d, NULL, schemas[i], &err), &err);
        pch_vx_fbb_init(&b, NULL);
        PCH_CHECK_OK(pch_vx_fbb_finish(&b, pch_vx__dtype_to_fb(&b, d), &out, &err), &err);
        PCH_CHECK_OK(pch_vx_fb_root(&t, &v, out.ptr, out.len, "dtype", &err), &err);
        PCH_CHECK_OK(pch_vx__dtype_from_fb(&back, NULL, &t, &err), &err);
        PCH_CHECK(pch_vx_dtype_equal(d, back));
        PCH_CHECK_OK(pch_vx_dtype_format(&txt, d, &err), &err);
        pch_vx_dtype_free(back);
        PCH_CHECK_OK(pch_vx_dtype_parse(&back, NULL, txt, &err), &err);
        PCH_CHECK_OK(pch_vx_dtype_format(&txt2, back, &err), &err);
        PCH_CHECK_EQ_STR(txt, txt2);
        free(txt);
        free(txt2);
        pch_vx_dtype_free(back);
        pch_vx_dtype_free(d);
        pch_vx_fbb_dispose(&b);
    }
    {
        pch_vx_dtype *d;
        PCH_CHECK(pch_vx_dtype_parse(&d, NULL, "a:i65", &err) == PCH_EINVAL);
        PCH_CHECK(pch_vx_dtype_parse(&d, NULL, "a:decimal(80,1)", &err) == PCH_EINVAL);
        PCH_CHECK(pch_vx_dtype_parse(&d, NULL, "a:list<i32", &err) == PCH_EINVAL);
    }
}

static void test_vortex_fb__bitpack(void)
{
    static const unsigned tbs[4] = { 8, 16, 32, 64 };
    uint64_t *in = malloc(3000 * 8);
    uint8_t *packed = malloc(3 * 128 * 64), *out = malloc(3 * 1024 * 8);
    uint64_t seed = 12345;
    for (int t = 0; t < 4; t++) {
        for (unsigned w = 0; w <= tbs[t]; w++) {    /* every width: the unpacker's word walk */
            uint64_t mask = w >= 64 ? ~0ull : ((1ull << w) - 1);
            unsigned wb = tbs[t] / 8;
            for (int i = 0; i < 3000; i++) { seed = seed * 6364136223846793005ull + 1442695040888963407ull; in[i] = (seed >> 7) & mask; }
            if (w == tbs[t] && w < 64) in[5] = mask;   /* all ones somewhere */
            pch_vx__bp_pack(packed, in, 3000, tbs[t], w);
            pch_vx__bp_unpack(out, packed, 3, tbs[t], w);
            for (int i = 0; i < 3000; i++) {
                uint64_t v = wb == 1 ? out[i] : wb == 2 ? pch_load_le16(out + 2 * i) : wb == 4 ? pch_load_le32(out + 4 * i)
                                                                                             : pch_load_le64(out + 8 * i);
                PCH_CHECK_MSG(v == in[i], "t=%u w=%u i=%d", tbs[t], w, i);
                if (v != in[i]) break;
            }
            /* one value from the words bp_locate names (a point read's partial read): only
            ** those bytes of the block are present */
            for (int i = 0; i < 3000; i++) {
                static uint8_t blk[128 * 64];
                const uint8_t *src = packed + (size_t)(i / 1024) * 128 * w;
                size_t hi, lo = pch_vx__bp_locate(tbs[t], w, (unsigned)(i % 1024), &hi);
                memset(blk, 0xa5, sizeof blk);
                if (w) {
                    PCH_CHECK(lo + wb <= 128u * w && (hi == SIZE_MAX || (hi == lo + 128 && hi + wb <= 128u * w)));
                    memcpy(blk + lo, src + lo, wb);
                    if (hi != SIZE_MAX) memcpy(blk + hi, src + hi, wb);
                }
                uint64_t v = pch_vx__bp_get(blk, tbs[t], w, (unsigned)(i % 1024));
                PCH_CHECK_MSG(v == in[i], "get t=%u w=%u i=%d", tbs[t], w, i);
                if (v != in[i]) break;
            }
        }
    }
    /* Layout check against Appendix A: with T=8, W=1, element 0 is bit 0 of word 0 and
    ** element 128 (row 1, lane 0) is bit 1 of word 0. */
    memset(in, 0, 1024 * 8);
    in[0] = 1;
    in[128] = 1;
    in[1] = 1;      /* lane 1 row 0 → bit 0 of word 1 */
    pch_vx__bp_pack(packed, in, 1024, 8, 1);
    PCH_CHECK(packed[0] == 0x03 && packed[1] == 0x01);
    /* T=32, W=3: element 16 is row 8 (FL_ORDER[1]=4 → no); row r=8 maps to FL_ORDER[1]*16 = 64 */
    memset(in, 0, 1024 * 8);
    in[64] = 5;     /* row 8, lane 0: bits 24..26 of lane 0 word 0 */
    pch_vx__bp_pack(packed, in, 1024, 32, 3);
    PCH_CHECK(pch_load_le32(packed) == (5u << 24));
    free(out);
    free(in);
    free(packed);
}

/* UTF-8 validation with the 16-byte ASCII fast path: every position of a bad byte, of a
** truncated sequence and of valid multi-byte characters relative to the 16-byte blocks. */
static void test_vortex_fb__utf8_valid(void)
{
    static const char *bad[] = { "\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82",
                                 "\x80", "\xf0\x9f\x98" };
    static const char *good[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf" };
    uint8_t buf[80];
    for (size_t pos = 0; pos < 40; pos++) {
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            size_t bl = strlen(bad[k]);
            memset(buf, 'a', sizeof buf);
            memcpy(buf + pos, bad[k], bl);
            /* the truncated ones are only invalid at the very end */
            size_t n = (k == 4 || k == 6) ? pos + bl : sizeof buf;
            PCH_CHECK_MSG(!pch_vx_utf8_valid(buf, n), "bad %zu at %zu", k, pos);
        }
        for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
            memset(buf, 'a', sizeof buf);
            memcpy(buf + pos, good[k], strlen(good[k]));
            PCH_CHECK_MSG(pch_vx_utf8_valid(buf, sizeof buf), "good %zu at %zu", k, pos);
        }
    }
    PCH_CHECK(pch_vx_utf8_valid(buf, 0));
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "vortex_fb_test");
    PCH_RUN(test_vortex_fb__roundtrip_table);
    PCH_RUN(test_vortex_fb__verifier_rejects);
    PCH_RUN(test_vortex_fb__depth_limit);
    PCH_RUN(test_vortex_fb__protobuf_and_scalars);
    PCH_RUN(test_vortex_fb__dtypes);
    PCH_RUN(test_vortex_fb__bitpack);
    PCH_RUN(test_vortex_fb__utf8_valid);
    return pch_test_report();
}
