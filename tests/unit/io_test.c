/* src/io without a server: the range coalescer, the XML scanner S3 answers are read with,
** key rules, and the local-directory store end to end (the S3 store is tested against a real
** radosgw in tests/cli/s3_objects.sh). */
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "io/io_int.h"

static pch_ctx *ctx;

typedef struct listed { char keys[8][160]; size_t n; } listed;

static void test_io__coalesce(void)
{
    pch_store_range r[5] = {
        { 1000, 10, NULL }, { 0, 10, NULL }, { 20, 10, NULL }, { 25, 2, NULL }, { 1020, 110, NULL },
    };
    size_t order[5];
    pch_io_span s[5];
    size_t n = pch_io_coalesce(r, 5, 16, 1 << 20, order, s);
    PCH_CHECK_EQ_INT(n, 2);
    PCH_CHECK(s[0].off == 0 && s[0].len == 30 && s[0].first == 0 && s[0].n == 3);
    PCH_CHECK(s[1].off == 1000 && s[1].len == 130 && s[1].n == 2);
    PCH_CHECK(order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 0 && order[4] == 4);
    /* the size limit splits; a single range above it stays whole */
    pch_store_range big[3] = { { 0, 60, NULL }, { 70, 60, NULL }, { 130, 500, NULL } };
    n = pch_io_coalesce(big, 3, 16, 100, order, s);
    PCH_CHECK_EQ_INT(n, 3);
    PCH_CHECK(s[2].off == 130 && s[2].len == 500);
    /* gap 0: only touching or overlapping ranges merge */
    pch_store_range t[3] = { { 0, 10, NULL }, { 10, 10, NULL }, { 21, 1, NULL } };
    n = pch_io_coalesce(t, 3, 0, 1000, order, s);
    PCH_CHECK_EQ_INT(n, 2);
    PCH_CHECK(s[0].len == 20 && s[1].off == 21);
}

static void test_io__xml(void)
{
    const char *x =
        "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>"
        "<Contents><Key>a&amp;b&#x2F;c&#233;</Key><Size>12</Size><ETag>&quot;abc&quot;</ETag></Contents>"
        "<Contents><Key>z</Key><Size>1</Size><Empty/></Contents>"
        "<NextContinuationToken>t&lt;1&gt;</NextContinuationToken></ListBucketResult>";
    size_t pos = 0, n;
    const char *c;
    PCH_CHECK(pch_xml_next(x, strlen(x), &pos, "IsTruncated", &c, &n) && n == 4 && memcmp(c, "true", 4) == 0);
    pos = 0;
    int contents = 0;
    pch_buf b;
    pch_buf_init(&b, ctx);
    while (pch_xml_next(x, strlen(x), &pos, "Contents", &c, &n)) {
        size_t p2 = 0, kl;
        const char *k;
        PCH_CHECK(pch_xml_next(c, n, &p2, "Key", &k, &kl));
        if (contents == 0) {
            PCH_CHECK_OK(pch_xml_unescape(&b, k, kl), NULL);
            PCH_CHECK(b.len == 7 && memcmp(b.data, "a&b/c\xc3\xa9", 7) == 0);
        } else {
            size_t p3 = 0;
            PCH_CHECK(pch_xml_next(c, n, &p3, "Empty", &k, &kl) && kl == 0);
        }
        contents++;
    }
    PCH_CHECK_EQ_INT(contents, 2);
    pos = 0;
    PCH_CHECK(!pch_xml_next(x, strlen(x), &pos, "Missing", &c, &n));
    /* <Key> must not match <KeyCount> */
    const char *y = "<KeyCount>3</KeyCount><Key>k</Key>";
    pos = 0;
    PCH_CHECK(pch_xml_next(y, strlen(y), &pos, "Key", &c, &n) && n == 1 && c[0] == 'k');
    pch_buf_clear(&b);
    PCH_CHECK_EQ_INT(pch_xml_unescape(&b, "&bogus;", 7), PCH_ECORRUPT);
    PCH_CHECK_EQ_INT(pch_xml_unescape(&b, "&#0;", 4), PCH_ECORRUPT);
    PCH_CHECK_EQ_INT(pch_xml_unescape(&b, "&#xD800;", 8), PCH_ECORRUPT);
    PCH_CHECK_EQ_INT(pch_xml_unescape(&b, "a&amp", 5), PCH_ECORRUPT);
    pch_buf_dispose(&b);
}

static int count_entry(void *arg, const pch_object_info *info)
{
    listed *l = arg;
    if (l->n < 8) snprintf(l->keys[l->n++], sizeof l->keys[0], "%s:%llu:%s", info->key, (unsigned long long)info->size, info->etag);
    return 0;
}

static void test_io__list_answer(void)
{
    const char *x =
        "<ListBucketResult><IsTruncated>true</IsTruncated>"
        "<Contents><Key>p/a&amp;b</Key><ETag>&quot;e1&quot;</ETag><Size>235</Size></Contents>"
        "<Contents><Key>p/c/d</Key><Size>0</Size></Contents>"
        "<NextContinuationToken>t&lt;1</NextContinuationToken></ListBucketResult>";
    listed l = { .n = 0 };
    bool more;
    pch_buf tok;
    pch_buf_init(&tok, ctx);
    pch_error err;
    PCH_CHECK_OK(pch_s3_parse_list(ctx, x, strlen(x), 2, count_entry, &l, &more, &tok, &err), &err);
    PCH_CHECK(more && tok.len == 3 && memcmp(tok.data, "t<1", 3) == 0);
    PCH_CHECK_EQ_INT(l.n, 2);
    PCH_CHECK_EQ_STR(l.keys[0], "a&b:235:e1");
    PCH_CHECK_EQ_STR(l.keys[1], "c/d:0:");
    /* malformed: a truncated listing without a token, a key shorter than the prefix, a bad size */
    const char *bad[] = {
        "<IsTruncated>true</IsTruncated>",
        "<Contents><Key>p</Key></Contents>",
        "<Contents><Key>p/x</Key><Size>12a</Size></Contents>",
        "<Contents><Key>p/x</Key><Size>99999999999999999999999</Size></Contents>",
        "<Contents><Key>p/&#0;</Key></Contents>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        l.n = 0;
        PCH_CHECK_MSG(pch_s3_parse_list(ctx, bad[i], strlen(bad[i]), 2, count_entry, &l, &more, &tok, &err) == PCH_ECORRUPT,
                      "answer %zu", i);
    }
    pch_buf_dispose(&tok);
}

static void test_io__keys(void)
{
    const char *bad[] = { "", "/a", "a//b", "a/./b", "../a", "a/..", "a/" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        PCH_CHECK_MSG(pch_store_key_check(bad[i], NULL) == PCH_EINVAL, "key '%s'", bad[i]);
    PCH_CHECK_EQ_INT(pch_store_key_check("a/b.c/..d", NULL), PCH_OK);
    PCH_CHECK(pch_store_is_s3("s3://b/x") && !pch_store_is_s3("/tmp/x"));
}

static int on_list(void *arg, const pch_object_info *info)
{
    listed *l = arg;
    if (l->n < 8) snprintf(l->keys[l->n++], sizeof l->keys[0], "%s:%llu", info->key, (unsigned long long)info->size);
    return 0;
}

static void test_io__local_store(void)
{
    char dir[] = "/tmp/pch-io-test-XXXXXX";
    PCH_CHECK(mkdtemp(dir) != NULL);
    char root[64];
    snprintf(root, sizeof root, "%s/root/", dir);
    pch_store *st;
    pch_error err;
    pch_store_options opt = { .version = PCH_STORE_OPTIONS_VERSION, .coalesce_gap = 1000 };
    PCH_CHECK_OK(pch_store_open(ctx, root, &opt, &st, &err), &err);
    uint8_t data[4096];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7);
    PCH_CHECK_OK(pch_store_put(st, "a/b/obj", data, sizeof data, 0, &err), &err);
    PCH_CHECK_OK(pch_store_put(st, "a/c", "x", 1, PCH_PUT_IF_ABSENT, &err), &err);
    PCH_CHECK_EQ_INT(pch_store_put(st, "a/c", "y", 1, PCH_PUT_IF_ABSENT, &err), PCH_EEXISTS);
    PCH_CHECK_OK(pch_store_put(st, "b", "zz", 2, 0, &err), &err);
    uint8_t *got;
    size_t len;
    pch_object_info info;
    PCH_CHECK_OK(pch_store_get(st, "a/c", 100, &got, &len, &info, &err), &err);
    PCH_CHECK(len == 1 && got[0] == 'x' && info.size == 1 && info.etag[0]);
    pch_free(ctx, got);
    PCH_CHECK_EQ_INT(pch_store_get(st, "a/b/obj", 100, &got, &len, NULL, &err), PCH_ELIMIT);
    PCH_CHECK_EQ_INT(pch_store_get(st, "nope", 100, &got, &len, NULL, &err), PCH_ENOTFOUND);
    PCH_CHECK_EQ_INT(pch_store_get(st, "../x", 100, &got, &len, NULL, &err), PCH_EINVAL);
    PCH_CHECK_OK(pch_store_head(st, "a/b/obj", &info, &err), &err);
    PCH_CHECK_EQ_INT(info.size, 4096);

    uint8_t d1[10], d2[100], d3[5];
    pch_store_range r[3] = { { 3000, 100, d2 }, { 5, 10, d1 }, { 20, 5, d3 } };
    pch_store_stats s0, s1;
    pch_store_get_stats(st, &s0);
    PCH_CHECK_OK(pch_store_read_ranges(st, "a/b/obj", r, 3, &err), &err);
    pch_store_get_stats(st, &s1);
    PCH_CHECK(memcmp(d1, data + 5, 10) == 0 && memcmp(d2, data + 3000, 100) == 0 && memcmp(d3, data + 20, 5) == 0);
    PCH_CHECK_EQ_INT(s1.gets - s0.gets, 2);          /* [5,25) coalesced, [3000,3100) alone */
    PCH_CHECK_EQ_INT(s1.bytes_requested - s0.bytes_requested, 120);
    PCH_CHECK_EQ_INT(s1.bytes_useful - s0.bytes_useful, 115);
    PCH_CHECK_EQ_INT(s1.ranges - s0.ranges, 3);
    pch_store_range past = { 4000, 200, d2 };
    PCH_CHECK_EQ_INT(pch_store_read_ranges(st, "a/b/obj", &past, 1, &err), PCH_ECORRUPT);

    listed l = { .n = 0 };
    PCH_CHECK_OK(pch_store_list(st, "a/", on_list, &l, &err), &err);
    PCH_CHECK_EQ_INT(l.n, 2);
    PCH_CHECK_EQ_STR(l.keys[0], "a/b/obj:4096");
    PCH_CHECK_EQ_STR(l.keys[1], "a/c:1");
    l.n = 0;
    PCH_CHECK_OK(pch_store_list(st, "", on_list, &l, &err), &err);
    PCH_CHECK_EQ_INT(l.n, 3);
    l.n = 0;
    PCH_CHECK_OK(pch_store_list(st, "a/b/o", on_list, &l, &err), &err);
    PCH_CHECK_EQ_INT(l.n, 1);

    PCH_CHECK_OK(pch_store_check_commit(st, &err), &err);
    PCH_CHECK_OK(pch_store_delete(st, "b", &err), &err);
    PCH_CHECK_OK(pch_store_delete(st, "b", &err), &err);   /* already gone: fine */
    l.n = 0;
    PCH_CHECK_OK(pch_store_list(st, "", on_list, &l, &err), &err);
    PCH_CHECK_EQ_INT(l.n, 2);                               /* the probe left nothing */

    char src[80];
    snprintf(src, sizeof src, "%s/src", dir);
    FILE *f = fopen(src, "wb");
    PCH_CHECK(f && fwrite(data, 1, sizeof data, f) == sizeof data && fclose(f) == 0);
    PCH_CHECK_OK(pch_store_put_file(st, "copy", src, 0, &err), &err);
    PCH_CHECK_OK(pch_store_get(st, "copy", 1 << 20, &got, &len, NULL, &err), &err);
    PCH_CHECK(len == sizeof data && memcmp(got, data, len) == 0);
    pch_free(ctx, got);
    pch_store_close(st);

    pch_store_options bad = { .version = 99 };
    PCH_CHECK_EQ_INT(pch_store_open(ctx, root, &bad, &st, &err), PCH_EUNSUPPORTED);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    PCH_CHECK(system(cmd) == 0);
}

static void test_io__s3_settings(void)
{
    pch_store *st;
    pch_error err;
    unsetenv("AWS_ACCESS_KEY_ID");
    PCH_CHECK_EQ_INT(pch_store_open(ctx, "s3://bucket/p", NULL, &st, &err), PCH_EINVAL);
    PCH_CHECK(strstr(err.msg, "AWS_ACCESS_KEY_ID") != NULL);
    setenv("AWS_ACCESS_KEY_ID", "k", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
    PCH_CHECK_EQ_INT(pch_store_open(ctx, "s3://B/p", NULL, &st, &err), PCH_EINVAL);
    PCH_CHECK_EQ_INT(pch_store_open(ctx, "s3://bucket/a/../b", NULL, &st, &err), PCH_EINVAL);
    setenv("AWS_ENDPOINT_URL", "ftp://x", 1);
    PCH_CHECK_EQ_INT(pch_store_open(ctx, "s3://bucket", NULL, &st, &err), PCH_EINVAL);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1/", 1);
    PCH_CHECK_OK(pch_store_open(ctx, "s3://bucket/pre/fix/", NULL, &st, &err), &err);
    PCH_CHECK_EQ_STR(st->root, "pre/fix/");
    PCH_CHECK_EQ_STR(st->bucket, "bucket");
    /* nothing listens on port 1: a connection refusal is retried, then reported */
    pch_store_close(st);
    pch_store_options o = { .version = PCH_STORE_OPTIONS_VERSION, .max_attempts = 2, .backoff_ms = 1 };
    PCH_CHECK_OK(pch_store_open(ctx, "s3://bucket", &o, &st, &err), &err);
    uint8_t *d;
    size_t n;
    PCH_CHECK_EQ_INT(pch_store_get(st, "k", 10, &d, &n, NULL, &err), PCH_EIO);
    PCH_CHECK(strstr(err.msg, "after 2 attempts") != NULL);
    pch_store_stats s;
    pch_store_get_stats(st, &s);
    PCH_CHECK_EQ_INT(s.requests, 2);
    PCH_CHECK_EQ_INT(s.retries, 1);
    pch_store_close(st);
    unsetenv("AWS_ENDPOINT_URL");
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "io_test");
    if (pch_ctx_new(&ctx, NULL, NULL, NULL)) return 1;
    PCH_RUN(test_io__coalesce);
    PCH_RUN(test_io__xml);
    PCH_RUN(test_io__list_answer);
    PCH_RUN(test_io__keys);
    PCH_RUN(test_io__local_store);
    PCH_RUN(test_io__s3_settings);
    pch_ctx_free(ctx);
    return pch_test_report();
}
