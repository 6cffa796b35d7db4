/* Unit tests of src/core: errors, context limits, buffers, arenas, checked math, endian,
** hex, base64, ISO-8601 time and atomic publish (including create-if-absent races). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "core/core.h"

static char tmpdir[256];

static void test_core__error_set_and_prefix(void)
{
    pch_error err;
    pch_error_clear(&err);
    PCH_CHECK_EQ_INT(pch_error_set(&err, PCH_ECORRUPT, "page %d: bad\nthing", 3), PCH_ECORRUPT);
    PCH_CHECK_EQ_STR(err.msg, "page 3: bad thing");
    pch_error_prefix(&err, "column '%s'", "x");
    PCH_CHECK_EQ_STR(err.msg, "column 'x': page 3: bad thing");
    PCH_CHECK_EQ_INT(err.code, PCH_ECORRUPT);
    PCH_CHECK_EQ_INT(pch_error_set(NULL, PCH_EIO, "x"), PCH_EIO);
    pch_error_set_sys(&err, PCH_EIO, ENOENT, "open %s", "f");
    PCH_CHECK(strstr(err.msg, "open f: ") == err.msg);
    PCH_CHECK_EQ_INT(err.sys_errno, ENOENT);
    char big[600];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    pch_error_set(&err, PCH_EINVAL, "%s", big);
    PCH_CHECK_EQ_INT(strlen(err.msg), PCH_ERROR_MSG_LEN - 1);
    pch_error_prefix(&err, "%s", big);
    PCH_CHECK_EQ_INT(strlen(err.msg), PCH_ERROR_MSG_LEN - 1);
    PCH_CHECK_EQ_STR(pch_status_name(PCH_EUNSUPPORTED), "unsupported");
}

static void test_core__ctx_limits(void)
{
    pch_ctx *ctx;
    pch_limits lim = { 0 };
    lim.max_alloc = 1000;
    PCH_CHECK_OK(pch_ctx_new(&ctx, NULL, &lim, NULL), (pch_error *)NULL);
    PCH_CHECK_EQ_INT(pch_ctx_limits(ctx)->max_alloc, 1000);
    PCH_CHECK_EQ_INT(pch_ctx_limits(ctx)->max_json_depth, PCH_DEFAULT_MAX_JSON_DEPTH);
    PCH_CHECK(pch_malloc(ctx, 1001) == NULL);
    void *p = pch_malloc(ctx, 1000);
    PCH_CHECK(p != NULL);
    pch_free(ctx, p);
    PCH_CHECK(pch_calloc(ctx, SIZE_MAX / 2, 4) == NULL);
    pch_ctx_free(ctx);
    pch_ctx_free(NULL);
    PCH_CHECK_EQ_INT(pch_ctx_limits(NULL)->max_columns, PCH_DEFAULT_MAX_COLUMNS);
}

static int fail_after;
static void *failing_alloc(void *payload, size_t n) { (void)payload; return fail_after-- > 0 ? malloc(n) : NULL; }
static void *failing_realloc(void *payload, void *p, size_t n) { (void)payload; return fail_after-- > 0 ? realloc(p, n) : NULL; }
static void failing_free(void *payload, void *p) { (void)payload; free(p); }

static void test_core__buf_grow_and_oom_latch(void)
{
    pch_allocator a = { failing_alloc, failing_realloc, failing_free, NULL };
    pch_ctx *ctx;
    fail_after = 1000;
    PCH_CHECK_OK(pch_ctx_new(&ctx, &a, NULL, NULL), (pch_error *)NULL);
    pch_buf b;
    pch_buf_init(&b, ctx);
    for (int i = 0; i < 1000; i++) PCH_CHECK_OK(pch_buf_put_le32(&b, (uint32_t)i), (pch_error *)NULL);
    PCH_CHECK_EQ_INT(b.len, 4000);
    PCH_CHECK_EQ_INT(pch_load_le32(b.data + 4 * 999), 999);
    PCH_CHECK_EQ_INT(b.data[b.len], 0);
    PCH_CHECK_OK(pch_buf_pad(&b, 64, 0x48), (pch_error *)NULL);
    PCH_CHECK_EQ_INT(b.len, 4032);
    PCH_CHECK_EQ_INT(b.data[4031], 0x48);
    fail_after = 0;   /* the next grow fails; buffer stays valid and the failure latches */
    size_t before = b.len;
    PCH_CHECK_EQ_INT(pch_buf_zero(&b, 100000), PCH_ENOMEM);
    PCH_CHECK_EQ_INT(b.len, before);
    fail_after = 1000;
    PCH_CHECK_EQ_INT(pch_buf_putc(&b, 'x'), PCH_ENOMEM);      /* latched */
    PCH_CHECK_EQ_INT(pch_buf_append(&b, "y", 1), PCH_ENOMEM);
    PCH_CHECK_EQ_INT(b.len, before);
    pch_buf_dispose(&b);
    pch_buf_init(&b, ctx);
    PCH_CHECK_OK(pch_buf_printf(&b, "%s-%d", "ab", 42), (pch_error *)NULL);
    PCH_CHECK_EQ_STR((char *)b.data, "ab-42");
    pch_buf dst;
    pch_buf_init(&dst, ctx);
    pch_buf_move(&b, &dst);
    PCH_CHECK(b.data == NULL && b.len == 0);
    PCH_CHECK_EQ_STR((char *)dst.data, "ab-42");
    pch_buf_dispose(&dst);
    pch_ctx_free(ctx);
}

static void test_core__arena(void)
{
    pch_arena a;
    pch_arena_init(&a, NULL, 256);
    char *p[100];
    for (int i = 0; i < 100; i++) {
        p[i] = pch_arena_alloc(&a, (size_t)(i * 7 + 1));
        PCH_CHECK(p[i] != NULL);
        PCH_CHECK(((uintptr_t)p[i] & 15) == 0);
        memset(p[i], i, (size_t)(i * 7 + 1));
    }
    for (int i = 0; i < 100; i++) PCH_CHECK_EQ_INT((unsigned char)p[i][i * 7], i);
    char *big = pch_arena_alloc(&a, 10000);
    PCH_CHECK(big != NULL);
    char *d = pch_arena_memdup(&a, "hello", 5);
    PCH_CHECK_EQ_STR(d, "hello");
    pch_arena_reset(&a);
    PCH_CHECK(pch_arena_alloc(&a, 8) != NULL);
    PCH_CHECK(pch_arena_alloc(&a, SIZE_MAX - 4) == NULL);
    pch_arena_dispose(&a);
}

static void test_core__checked_math_and_endian(void)
{
    size_t s;
    uint64_t u;
    PCH_CHECK(!pch_add_size(&s, SIZE_MAX, 1));
    PCH_CHECK(pch_add_size(&s, 2, 3) && s == 5);
    PCH_CHECK(!pch_mul_size(&s, SIZE_MAX / 2 + 1, 2));
    PCH_CHECK(!pch_mul_u64(&u, UINT64_MAX, 3));
    PCH_CHECK(!pch_add_u64(&u, UINT64_MAX, 1));
    uint8_t b[8];
    pch_store_le64(b, 0x0102030405060708ull);
    PCH_CHECK_EQ_INT(b[0], 8);
    PCH_CHECK(pch_load_le64(b) == 0x0102030405060708ull);
    pch_store_be32(b, 0xdeadbeef);
    PCH_CHECK_EQ_INT(b[0], 0xde);
    PCH_CHECK(pch_load_be32(b) == 0xdeadbeefu);
    pch_store_be16(b, 0x1234);
    PCH_CHECK_EQ_INT(pch_load_be16(b), 0x1234);
    PCH_CHECK_EQ_INT(pch_load_le16(b), 0x3412);
    pch_rd r = pch_rd_make(b, 3);
    uint16_t v16;
    uint32_t v32;
    PCH_CHECK(pch_rd_le16(&r, &v16));
    PCH_CHECK(!pch_rd_le32(&r, &v32));
    PCH_CHECK_EQ_INT(r.off, 2);
    PCH_CHECK(!pch_rd_skip(&r, 2));
    PCH_CHECK(pch_rd_skip(&r, 1));
}

static void test_core__hex_base64(void)
{
    char hex[9];
    const uint8_t in[4] = { 0x00, 0xff, 0x10, 0xab };
    uint8_t out[4];
    pch_hex_encode(hex, in, 4);
    PCH_CHECK_EQ_STR(hex, "00ff10ab");
    PCH_CHECK(pch_hex_decode(out, "00FF10aB", 4) && memcmp(out, in, 4) == 0);
    PCH_CHECK(!pch_hex_decode(out, "0g", 1));
    static const char *vec[][2] = { { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
                                    { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        pch_buf b;
        pch_buf_init(&b, NULL);
        PCH_CHECK_OK(pch_base64_encode(&b, (const uint8_t *)vec[i][0], strlen(vec[i][0])), (pch_error *)NULL);
        PCH_CHECK_EQ_STR(b.len ? (char *)b.data : "", vec[i][1]);
        pch_buf_clear(&b);
        pch_error err;
        PCH_CHECK_OK(pch_base64_decode(&b, vec[i][1], strlen(vec[i][1]), &err), &err);
        PCH_CHECK(b.len == strlen(vec[i][0]) && (b.len == 0 || memcmp(b.data, vec[i][0], b.len) == 0));
        pch_buf_dispose(&b);
    }
    pch_buf b;
    pch_buf_init(&b, NULL);
    pch_error err;
    PCH_CHECK_EQ_INT(pch_base64_decode(&b, "Zg=", 3, &err), PCH_EINVAL);
    PCH_CHECK_EQ_INT(pch_base64_decode(&b, "Z!==", 4, &err), PCH_EINVAL);
    PCH_CHECK_EQ_INT(pch_base64_decode(&b, "Zh==", 4, &err), PCH_EINVAL); /* non-zero pad bits */
    PCH_CHECK_EQ_INT(pch_base64_decode(&b, "Z=g=", 4, &err), PCH_EINVAL);
    pch_buf_dispose(&b);
}

static void test_core__iso8601(void)
{
    pch_error err;
    int64_t ms;
    PCH_CHECK_OK(pch_time_parse_iso8601(&ms, "1970-01-01T00:00:00Z", 20, &err), &err);
    PCH_CHECK_EQ_INT(ms, 0);
    PCH_CHECK_OK(pch_time_parse_iso8601(&ms, "2024-05-01T12:00:01.5Z", 22, &err), &err);
    PCH_CHECK_EQ_INT(ms, 1714564801500LL);
    PCH_CHECK_OK(pch_time_parse_iso8601(&ms, "2024-05-01T14:00:01.123456+02:00", 32, &err), &err);
    PCH_CHECK_EQ_INT(ms, 1714564801123LL);
    PCH_CHECK_OK(pch_time_parse_iso8601(&ms, "2024-05-01 12:00:01-0130", 24, &err), &err);
    PCH_CHECK_EQ_INT(ms, 1714564801000LL + 90 * 60000);
    PCH_CHECK_OK(pch_time_parse_iso8601(&ms, "1969-12-31T23:59:59.999Z", 24, &err), &err);
    PCH_CHECK_EQ_INT(ms, -1);
    PCH_CHECK_OK(pch_time_parse_iso8601(&ms, "2000-02-29", 10, &err), &err);
    PCH_CHECK_EQ_INT(ms, 951782400000LL);
    const char *bad[] = { "2023-02-29", "2024-13-01", "2024-05-01T25:00Z", "2024-05-01T12:00:00.Z",
                          "2024-05-01T12:00:00Zjunk", "24-05-01", "", "2024-05-01T12" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        PCH_CHECK_MSG(pch_time_parse_iso8601(&ms, bad[i], strlen(bad[i]), &err) == PCH_EINVAL, "%s", bad[i]);
    char out[32];
    pch_time_format_iso8601(out, 1714564801123LL);
    PCH_CHECK_EQ_STR(out, "2024-05-01T12:00:01.123Z");
    pch_time_format_iso8601(out, -1);
    PCH_CHECK_EQ_STR(out, "1969-12-31T23:59:59.999Z");
    pch_time_format_iso8601(out, -62167219200000LL);        /* the first ms of year 0 */
    PCH_CHECK_EQ_STR(out, "0000-01-01T00:00:00.000Z");
    pch_time_format_iso8601(out, 253402300799999LL);        /* the last ms of year 9999 */
    PCH_CHECK_EQ_STR(out, "9999-12-31T23:59:59.999Z");
    pch_time_format_iso8601(out, 253402300800000LL);        /* past the hand-written range */
    PCH_CHECK_EQ_STR(out, "10000-01-01T00:00:00.000Z");
    /* every formatted instant of years 0..9999 parses back to itself (parser and formatter
    ** are separate code) */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 20000; i++) {
        int64_t want;
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        want = -62167219200000LL + (int64_t)(x % (253402300800000ull + 62167219200000ull));
        pch_time_format_iso8601(out, want);
        PCH_CHECK_EQ_INT(strlen(out), 24);
        PCH_CHECK_OK(pch_time_parse_iso8601(&ms, out, 24, &err), &err);
        PCH_CHECK_MSG(ms == want, "%s", out);
    }
}

static void test_core__publish_replace_and_create_if_absent(void)
{
    pch_error err;
    pch_buf p, content;
    pch_buf_init(&p, NULL);
    pch_buf_init(&content, NULL);
    PCH_CHECK_OK(pch_path_join(&p, tmpdir, "pub/sub"), (pch_error *)NULL);
    PCH_CHECK_OK(pch_mkdirs((char *)p.data, &err), &err);
    PCH_CHECK_OK(pch_path_join(&p, tmpdir, "pub/sub/f.json"), (pch_error *)NULL);
    PCH_CHECK_OK(pch_file_publish((char *)p.data, "one", 3, &err), &err);
    PCH_CHECK_OK(pch_file_publish((char *)p.data, "two!", 4, &err), &err);
    PCH_CHECK_OK(pch_file_read_all(&content, (char *)p.data, 100, &err), &err);
    PCH_CHECK(content.len == 4 && memcmp(content.data, "two!", 4) == 0);
    pch_buf_clear(&content);
    PCH_CHECK_EQ_INT(pch_file_read_all(&content, (char *)p.data, 3, &err), PCH_ELIMIT);
    PCH_CHECK_EQ_INT(pch_file_publish_new((char *)p.data, "three", 5, &err), PCH_EEXISTS);
    pch_buf_clear(&content);
    PCH_CHECK_OK(pch_file_read_all(&content, (char *)p.data, 100, &err), &err);
    PCH_CHECK(content.len == 4 && memcmp(content.data, "two!", 4) == 0);
    PCH_CHECK_EQ_INT(pch_file_read_all(&content, "/nonexistent/x", 100, &err), PCH_ENOTFOUND);
    /* no staging files are left behind */
    pch_buf_clear(&content);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A %s/pub/sub | grep -c tmp", tmpdir);
    FILE *ls = popen(cmd, "r");
    int n = -1;
    PCH_CHECK(ls && fscanf(ls, "%d", &n) == 1);
    pclose(ls);
    PCH_CHECK_EQ_INT(n, 0);
    /* race: 8 processes create the same name; exactly one wins */
    PCH_CHECK_OK(pch_path_join(&p, tmpdir, "pub/race"), (pch_error *)NULL);
    int winners = 0;
    pid_t kids[8];
    for (int i = 0; i < 8; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            char body[16];
            snprintf(body, sizeof body, "w%d", i);
            _exit(pch_file_publish_new((char *)p.data, body, strlen(body), NULL) == PCH_OK ? 0 : 3);
        }
    }
    for (int i = 0; i < 8; i++) {
        int st;
        waitpid(kids[i], &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) winners++;
    }
    PCH_CHECK_EQ_INT(winners, 1);
    PCH_CHECK_OK(pch_path_join(&p, tmpdir, "pub"), (pch_error *)NULL);
    PCH_CHECK_OK(pch_remove_tree((char *)p.data, &err), &err);
    struct stat st;
    PCH_CHECK(stat((char *)p.data, &st) != 0);
    pch_buf_dispose(&p);
    pch_buf_dispose(&content);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "core_test");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pch-core-test-XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    PCH_RUN(test_core__error_set_and_prefix);
    PCH_RUN(test_core__ctx_limits);
    PCH_RUN(test_core__buf_grow_and_oom_latch);
    PCH_RUN(test_core__arena);
    PCH_RUN(test_core__checked_math_and_endian);
    PCH_RUN(test_core__hex_base64);
    PCH_RUN(test_core__iso8601);
    PCH_RUN(test_core__publish_replace_and_create_if_absent);
    pch_remove_tree(tmpdir, NULL);
    return pch_test_report();
}
