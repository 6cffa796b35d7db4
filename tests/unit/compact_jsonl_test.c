/* RFC-0014 compact JSONL: line splitting, name rules, file walk, staging/publish, and
** import -> export byte-exact round trips of generated trees; every failure mode of the
** RFC as its own case that also proves nothing was published; a property test over
** random trees. Works in a fresh temporary directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "compact_jsonl/cj_int.h"
#include "pchronicle/compact_jsonl.h"
#include "pchronicle/lance.h"

static pch_ctx *g_ctx;
static char g_tmp[256];
static char g_path[3][1024];

/* "<tmp>/<rel>" into one of three rotating buffers */
static const char *P(const char *rel)
{
    static int k;
    k = (k + 1) % 3;
    snprintf(g_path[k], sizeof g_path[k], "%s/%s", g_tmp, rel);
    return g_path[k];
}

static void put(const char *rel, const void *data, size_t len)
{
    char *full = strdup(P(rel));
    char *s = strrchr(full, '/');
    *s = 0;
    pch_mkdirs(full, NULL);
    *s = '/';
    FILE *f = fopen(full, "wb");
    if (f) { if (len) fwrite(data, 1, len, f); fclose(f); }
    free(full);
}
static void puts_(const char *rel, const char *s) { put(rel, s, strlen(s)); }
static bool exists(const char *rel) { struct stat sb; return lstat(P(rel), &sb) == 0; }
static void rm(const char *rel) { pch_remove_tree(P(rel), NULL); }

/* Any ".x.staging-*" left in dir? */
static bool stray_staging(const char *rel)
{
    DIR *d = opendir(P(rel));
    if (!d) return false;
    struct dirent *de;
    bool found = false;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] == '.' && strstr(de->d_name, ".staging-")) found = true;
    closedir(d);
    return found;
}

/* Recursive byte comparison of two trees (names, types, contents). */
static bool same_tree(const char *a, const char *b)
{
    struct stat sa, sb;
    if (lstat(a, &sa) != 0 || lstat(b, &sb) != 0) return false;
    if (S_ISDIR(sa.st_mode) != S_ISDIR(sb.st_mode)) return false;
    if (!S_ISDIR(sa.st_mode)) {
        pch_buf x, y;
        pch_buf_init(&x, NULL);
        pch_buf_init(&y, NULL);
        bool ok = pch_file_read_all(&x, a, SIZE_MAX, NULL) == 0 && pch_file_read_all(&y, b, SIZE_MAX, NULL) == 0 &&
                  x.len == y.len && (x.len == 0 || memcmp(x.data, y.data, x.len) == 0);
        if (!ok) fprintf(stderr, "  differs: %s %s\n", a, b);
        pch_buf_dispose(&x);
        pch_buf_dispose(&y);
        return ok;
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *d1 = pass ? b : a, *d2 = pass ? a : b;
        DIR *d = opendir(d1);
        if (!d) return false;
        struct dirent *de;
        bool ok = true;
        while (ok && (de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char x[2048], y[2048];
            snprintf(x, sizeof x, "%s/%s", d1, de->d_name);
            snprintf(y, sizeof y, "%s/%s", d2, de->d_name);
            ok = pass ? lstat(y, &sb) == 0 : same_tree(x, y);
            if (!ok) fprintf(stderr, "  only in one tree or differs: %s\n", x);
        }
        closedir(d);
        if (!ok) return false;
    }
    return true;
}

static int import_(const char *in, const char *out, const pch_cj_options *o, pch_error *err)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s", P(in));
    snprintf(b, sizeof b, "%s", P(out));
    pch_error_clear(err);
    return pch_cj_import(g_ctx, a, b, o, NULL, err);
}

static int export_(const char *ds, const char *out, const pch_cj_options *o, pch_error *err)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s", P(ds));
    snprintf(b, sizeof b, "%s", P(out));
    pch_error_clear(err);
    return pch_cj_export(g_ctx, a, b, o, NULL, err);
}

/* ---- pure parts ---- */

static void test_cj__lines(void)
{
    size_t n;
    const uint8_t *t = (const uint8_t *)"ab\r\ncd\nef";
    PCH_CHECK(pch_cj__next_line(t, 9, &n) && n == 4);
    PCH_CHECK(pch_cj__content_len(t, 4) == 2);
    PCH_CHECK(pch_cj__next_line(t + 4, 5, &n) && n == 3);
    PCH_CHECK(!pch_cj__next_line(t + 7, 2, &n));
    PCH_CHECK(pch_cj__content_len((const uint8_t *)"a\r", 2) == 2);   /* lone CR is content */
    size_t col;
    PCH_CHECK(pch_cj__check_line((const uint8_t *)"", 0, false, &col, NULL) == PCH_EINVAL);
    PCH_CHECK(pch_cj__check_line((const uint8_t *)" \t\r", 3, false, &col, NULL) == PCH_EINVAL);
    PCH_CHECK(pch_cj__check_line((const uint8_t *)"\xEF\xBB\xBF{}", 5, true, &col, NULL) == PCH_EINVAL);
    PCH_CHECK(pch_cj__check_line((const uint8_t *)"{\"a\":\0}", 7, false, &col, NULL) == PCH_EINVAL && col == 6);
    PCH_CHECK(pch_cj__check_line((const uint8_t *)" {}", 3, true, &col, NULL) == PCH_OK);
}

static void test_cj__names(void)
{
    PCH_CHECK(pch_cj__has_input_ext("a.JSONL") && pch_cj__has_input_ext("b.NdJson") && pch_cj__has_input_ext("c.json"));
    PCH_CHECK(!pch_cj__has_input_ext("a.jsonl.gz") && !pch_cj__has_input_ext("a.txt") && !pch_cj__has_input_ext("json"));
    PCH_CHECK(pch_cj__is_json_doc("x.Json") && !pch_cj__is_json_doc("x.jsonl"));
    PCH_CHECK(pch_cj__safe_relpath("a/b.jsonl", 9) && pch_cj__safe_relpath("..a/b..", 7));
    static const char *const bad[] = { "", "/a", "a/../b", "..", "a//b", "./a", "a/.", "a/" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        PCH_CHECK_MSG(!pch_cj__safe_relpath(bad[i], strlen(bad[i])), "%s", bad[i]);
    PCH_CHECK(!pch_cj__safe_relpath("a\0b", 3));
    PCH_CHECK(!pch_cj__safe_relpath("\xff.jsonl", 7));
}

static void test_cj__walk(void)
{
    rm("w");
    puts_("w/b.jsonl", "{}\n");
    puts_("w/a/z.JSON", "{}");
    puts_("w/a.b/x.ndjson", "{}\n");
    puts_("w/a/skip.txt", "x");
    puts_("w/.hidden/h.jsonl", "{}\n");
    puts_("w/.out.lance.staging-00/s.jsonl", "{}\n");
    symlink("b.jsonl", P("w/link.jsonl"));
    symlink("a", P("w/linkdir"));
    pch_cj_filelist l;
    pch_error err;
    PCH_CHECK_OK(pch_cj__walk(&l, g_ctx, P("w"), 0, 0, &err), &err);
    PCH_CHECK_EQ_INT(l.n, 4);
    PCH_CHECK_EQ_STR(l.v[0].rel, ".hidden/h.jsonl");
    PCH_CHECK_EQ_STR(l.v[1].rel, "a.b/x.ndjson");    /* '.' (0x2e) sorts before '/' (0x2f) */
    PCH_CHECK_EQ_STR(l.v[2].rel, "a/z.JSON");
    PCH_CHECK_EQ_STR(l.v[3].rel, "b.jsonl");
    pch_cj__filelist_dispose(&l);
    PCH_CHECK(pch_cj__walk(&l, g_ctx, P("w/a/skip.txt"), 0, 0, &err) == PCH_EINVAL);
    PCH_CHECK(pch_cj__walk(&l, g_ctx, P("w/link.jsonl"), 0, 0, &err) == PCH_EINVAL);
    PCH_CHECK(pch_cj__walk(&l, g_ctx, P("w/nope"), 0, 0, &err) == PCH_ENOTFOUND);
    PCH_CHECK_OK(pch_cj__walk(&l, g_ctx, P("w/b.jsonl"), 0, 0, &err), &err);
    PCH_CHECK(l.n == 1 && strcmp(l.v[0].rel, "b.jsonl") == 0);
    pch_cj__filelist_dispose(&l);
    rm("w");
}

static void test_cj__stage(void)
{
    rm("s");
    pch_mkdirs(P("s"), NULL);
    pch_cj_stage st;
    pch_error err;
    PCH_CHECK_OK(pch_cj__stage_begin(&st, g_ctx, P("s/t"), PCH_CJ_CREATE, &err), &err);
    PCH_CHECK(stray_staging("s"));
    puts_("s/.t.staging-stale/x", "old");        /* stale from a "crash": not ours, but removed later */
    char f[1024];
    snprintf(f, sizeof f, "%s/v1", (const char *)st.staging.data);
    FILE *fp = fopen(f, "w"); fputs("1", fp); fclose(fp);
    PCH_CHECK_OK(pch_cj__stage_publish(&st, &err), &err);
    pch_cj__stage_end(&st);
    PCH_CHECK(exists("s/t/v1"));
    PCH_CHECK(exists("s/.t.staging-stale/x"));
    PCH_CHECK(pch_cj__stage_begin(&st, g_ctx, P("s/t"), PCH_CJ_CREATE, &err) == PCH_EEXISTS);
    pch_cj__stage_end(&st);
    PCH_CHECK(!exists("s/.t.staging-stale"));      /* stale staging cleaned by the next writer */
    PCH_CHECK_OK(pch_cj__stage_begin(&st, g_ctx, P("s/t"), PCH_CJ_REPLACE, &err), &err);
    snprintf(f, sizeof f, "%s/v2", (const char *)st.staging.data);
    fp = fopen(f, "w"); fputs("2", fp); fclose(fp);
    /* a second writer of the same directory is refused while the first holds the lock */
    pch_cj_stage st2;
    PCH_CHECK(pch_cj__stage_begin(&st2, g_ctx, P("s/t"), PCH_CJ_REPLACE, &err) == PCH_EIO);
    pch_cj__stage_end(&st2);
    PCH_CHECK_OK(pch_cj__stage_publish(&st, &err), &err);
    pch_cj__stage_end(&st);
    PCH_CHECK(exists("s/t/v2") && !exists("s/t/v1") && !stray_staging("s"));
    puts_("s/file", "x");
    PCH_CHECK(pch_cj__stage_begin(&st, g_ctx, P("s/file"), PCH_CJ_REPLACE, &err) == PCH_EINVAL);
    pch_cj__stage_end(&st);
    PCH_CHECK(pch_cj__stage_begin(&st, g_ctx, P("nodir/t"), PCH_CJ_CREATE, &err) == PCH_EIO);
    pch_cj__stage_end(&st);
    rm("s");
}

/* ---- round trips ---- */

static void roundtrip(const char *in, const pch_cj_options *o)
{
    rm("rt.lance");
    rm("rt.out");
    pch_error err;
    PCH_CHECK_OK(import_(in, "rt.lance", o, &err), &err);
    PCH_CHECK_OK(export_("rt.lance", "rt.out", NULL, &err), &err);
    PCH_CHECK(same_tree(P(in), P("rt.out")));
    PCH_CHECK(!stray_staging(""));
}

static void make_edge_tree(void)
{
    rm("e");
    puts_("e/crlf.jsonl", "{\"a\":1}\r\n{\"b\":2}\r\n");
    puts_("e/nofinal.jsonl", "{\"a\":1}\n{\"b\":\"no newline\"}");
    puts_("e/mixed.ndjson", "{\"a\":1}\r\n{\"a\":2}\n{\"a\":3}\r\n");
    puts_("e/numbers.jsonl", "{\"v\":1.0}\n{\"v\":1e2}\n{\"v\":-0}\n{\"v\":18446744073709551616}\n"
          "{\"v\":18446744073709551615}\n{\"v\":-9223372036854775808}\n{\"v\":1E-7,\"w\":0.1}\n");
    puts_("e/unicode.jsonl", "{\"s\":\"h\xc3\xa9llo \xf0\x9f\x98\x80\",\"e\":\"\\u00e9\\ud83d\\ude00\\u0000\"}\n");
    puts_("e/spaces.jsonl", "  { \"k\" : [ 1 , 2 ] }  \n{\"z\":1,\"a\":2}\n");
    puts_("e/empty.jsonl", "");
    puts_("e/sub/deeper/empty.NDJSON", "");
    puts_("e/doc.json", "[\n  1,\n  {\"a\": null}\n]\n");
    puts_("e/obj.JSON", "{\"id\":\"doc\"}");
    /* deep nesting */
    pch_buf b;
    pch_buf_init(&b, NULL);
    pch_buf_append_str(&b, "{\"d\":");
    for (int i = 0; i < 500; i++) pch_buf_putc(&b, '[');
    for (int i = 0; i < 500; i++) pch_buf_putc(&b, ']');
    pch_buf_append_str(&b, "}\n");
    put("e/deep.jsonl", b.data, b.len);
    /* a record above the 1 MiB read chunk */
    pch_buf_clear(&b);
    pch_buf_append_str(&b, "{\"id\":\"big\",\"s\":\"");
    for (int i = 0; i < 3 * 1024 * 1024; i++) pch_buf_putc(&b, (uint8_t)('a' + i % 26));
    pch_buf_append_str(&b, "\"}\n{\"id\":\"after\"}\n");
    put("e/huge.jsonl", b.data, b.len);
    pch_buf_dispose(&b);
}

static void test_cj__roundtrip_edges(void)
{
    make_edge_tree();
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    roundtrip("e", &o);
    o.offload_threshold = 64;                     /* most records offloaded */
    roundtrip("e", &o);
    pch_cj_mapping maps[] = { { "v", "$.v" }, { "id", "$.id" }, { "first", "$.k[0]" } };
    o.mappings = maps;
    o.n_mappings = 3;
    o.batch_rows = 2;                             /* many small batches */
    roundtrip("e", &o);
    /* single-file input */
    rm("one.lance"); rm("one.out");
    pch_error err;
    PCH_CHECK_OK(import_("e/crlf.jsonl", "one.lance", NULL, &err), &err);
    PCH_CHECK_OK(export_("one.lance", "one.out", NULL, &err), &err);
    PCH_CHECK(same_tree(P("e/crlf.jsonl"), P("one.out/crlf.jsonl")));
    /* an empty directory is a valid (empty) snapshot */
    rm("emptydir"); pch_mkdirs(P("emptydir"), NULL);
    roundtrip("emptydir", NULL);
    rm("one.lance"); rm("one.out"); rm("emptydir");
}

static void test_cj__offload_shared_and_tamper(void)
{
    rm("o"); rm("o.lance"); rm("o.out");
    puts_("o/a.jsonl", "{\"x\":\"same record\"}\n{\"x\":\"same record\"}\n{\"x\":\"other\"}\n");
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    o.offload_threshold = 1;
    pch_error err;
    pch_cj_stats st;
    PCH_CHECK_OK(pch_cj_import(g_ctx, P("o"), P("o.lance"), &o, &st, &err), &err);
    PCH_CHECK_EQ_INT(st.offloaded_rows, 3);
    pch_cj_info info;
    PCH_CHECK_OK(pch_cj_inspect(g_ctx, P("o.lance"), &info, &err), &err);
    PCH_CHECK_EQ_INT(info.offload_objects, 2);    /* equal records share one object */
    PCH_CHECK_EQ_INT(info.offloaded_rows, 3);
    PCH_CHECK_EQ_INT(info.rows, 3);
    pch_cj_info_dispose(&info);
    PCH_CHECK_OK(export_("o.lance", "o.out", NULL, &err), &err);
    PCH_CHECK(same_tree(P("o"), P("o.out")));
    /* tamper with an object: export re-hashes and fails, publishing nothing */
    char key[65], obj[1024];
    pch_blake3_hex(key, "{\"x\":\"other\"}\n", 14);
    snprintf(obj, sizeof obj, "o.lance/objects/%s", key);
    PCH_CHECK(exists(obj));
    puts_(obj, "{\"x\":\"OTHER\"}\n");
    PCH_CHECK(export_("o.lance", "o.out2", NULL, &err) == PCH_ECORRUPT);
    PCH_CHECK(strstr(err.msg, "digest mismatch") != NULL);
    PCH_CHECK(!exists("o.out2") && !stray_staging(""));
    unlink(P(obj));
    PCH_CHECK(export_("o.lance", "o.out2", NULL, &err) == PCH_ECORRUPT);
    PCH_CHECK(strstr(err.msg, "missing") != NULL);
    PCH_CHECK(!exists("o.out2") && !stray_staging(""));
    /* existing output: refused without overwrite, replaced atomically with it */
    PCH_CHECK(export_("o.lance", "o.out", NULL, &err) == PCH_EEXISTS);
    rm("o"); rm("o.lance"); rm("o.out");
}

/* ---- failure modes: each must fail with a located message and publish nothing ---- */

typedef struct fail_case {
    const char *name;
    const char *file;
    const char *content;
    size_t len;             /* 0 = strlen */
    int code;
    const char *msg;        /* substring of the error */
} fail_case;

static void check_fail(const fail_case *c, const pch_cj_options *o)
{
    rm("f"); rm("f.lance");
    put(c->file, c->content, c->len ? c->len : strlen(c->content));
    pch_error err;
    int rc = import_("f", "f.lance", o, &err);
    PCH_CHECK_MSG(rc == c->code, "%s: rc %d (%s)", c->name, rc, err.msg);
    PCH_CHECK_MSG(strstr(err.msg, c->msg) != NULL, "%s: message '%s' lacks '%s'", c->name, err.msg, c->msg);
    PCH_CHECK_MSG(!exists("f.lance"), "%s: dataset published", c->name);
    PCH_CHECK_MSG(!stray_staging(""), "%s: staging left", c->name);
    /* replace mode: the previous dataset stays untouched */
    rm("f");
    puts_("f/ok.jsonl", "{\"ok\":1}\n");
    PCH_CHECK_OK(import_("f", "f.lance", o, &err), &err);
    rm("f");
    put(c->file, c->content, c->len ? c->len : strlen(c->content));
    pch_cj_options o2 = o ? *o : (pch_cj_options)PCH_CJ_OPTIONS_INIT;
    o2.mode = PCH_CJ_REPLACE;
    PCH_CHECK(import_("f", "f.lance", &o2, &err) == c->code);
    rm("f.out");
    PCH_CHECK_OK(export_("f.lance", "f.out", NULL, &err), &err);
    PCH_CHECK_MSG(exists("f.out/ok.jsonl") && !stray_staging(""), "%s: previous dataset changed", c->name);
    rm("f"); rm("f.lance"); rm("f.out");
}

static void test_cj__failures(void)
{
    static const fail_case cases[] = {
        { "invalid json", "f/a.jsonl", "{\"a\":1}\n{\"a\":}\n", 0, PCH_EINVAL, "a.jsonl line 2 column 6: invalid json" },
        { "blank line", "f/a.jsonl", "{\"a\":1}\n\n{\"a\":2}\n", 0, PCH_EINVAL, "a.jsonl line 2 column 1: empty line" },
        { "whitespace line", "f/a.jsonl", "{\"a\":1}\n  \t\r\n", 0, PCH_EINVAL, "line 2 column 1: whitespace-only" },
        { "trailing blank", "f/a.jsonl", "{\"a\":1}\n\n", 0, PCH_EINVAL, "line 2 column 1: empty line" },
        { "array line", "f/a.jsonl", "[1,2]\n", 0, PCH_EINVAL, "line 1 column 1: top-level value must be an object" },
        { "scalar line", "f/a.jsonl", "{}\n  \"s\"\n", 0, PCH_EINVAL, "line 2 column 3: top-level value must be an object" },
        { "scalar doc", "f/a.json", "42", 0, PCH_EINVAL, "a.json line 1 column 1: top-level value must be an object or array" },
        { "empty doc", "f/a.json", "", 0, PCH_EINVAL, "a.json line 1 column 1: empty line" },
        { "bom", "f/a.jsonl", "\xEF\xBB\xBF{}\n", 0, PCH_EINVAL, "byte order mark" },
        { "nul", "f/a.jsonl", "{}\n{\"a\":\"x\0\"}\n", 14, PCH_EINVAL, "line 2 column 8: NUL byte" },
        { "bad utf8", "f/a.jsonl", "{\"a\":\"\xff\"}\n", 0, PCH_EINVAL, "a.jsonl line 1" },
        { "two values", "f/a.jsonl", "{} {}\n", 0, PCH_EINVAL, "line 1 column 4: invalid json" },
        { "dup id", "f/a.jsonl", "{\"id\":\"x\"}\n{\"id\":\"y\"}\n{\"id\":\"x\"}\n", 0, PCH_EINVAL, "a.jsonl line 3 column 1: duplicate id 'x' (first at a.jsonl line 1)" },
        { "dup generated id", "f/a.jsonl", "{}\n{\"id\":\"a.jsonl#1\"}\n", 0, PCH_EINVAL, "duplicate id 'a.jsonl#1'" },
        { "dup keys", "f/a.jsonl", "{\"a\":1,\"a\":2}\n", 0, PCH_EINVAL, "a.jsonl line 1" },
        { "comment", "f/a.jsonl", "{} // c\n", 0, PCH_EINVAL, "invalid json" },
        { "trailing comma", "f/a.jsonl", "{\"a\":1,}\n", 0, PCH_EINVAL, "invalid json" },
        { "nan", "f/a.jsonl", "{\"a\":NaN}\n", 0, PCH_EINVAL, "invalid json" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_fail(&cases[i], NULL);
        if (pch_t_cur_failed) return;
    }
    /* a record above --max-record-bytes */
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    o.max_record_bytes = 16;
    fail_case big = { "too big", "f/a.jsonl", "{\"a\":1}\n{\"a\":\"0123456789abcdef\"}\n", 0, PCH_ELIMIT, "a.jsonl line 2 column 1: record is larger than the limit of 16 bytes" };
    check_fail(&big, &o);
    fail_case bigdoc = { "too big doc", "f/a.json", "{\"a\":\"0123456789abcdef\"}", 0, PCH_ELIMIT, "a.json line 1 column 1: record is larger" };
    check_fail(&bigdoc, &o);
    /* offload key collision: an object with the key of a record but other bytes */
}

static void test_cj__mapping_errors(void)
{
    rm("m"); rm("m.lance");
    puts_("m/a.jsonl", "{}\n");
    static const struct { pch_cj_mapping m[2]; size_t n; const char *msg; } bad[] = {
        { { { "filename", "$.a" } }, 1, "reserved" },
        { { { "data", "$.a" } }, 1, "reserved" },
        { { { "_raw_", "$.a" } }, 1, "reserved" },
        { { { "_offload_", "$.a" } }, 1, "reserved" },
        { { { "1x", "$.a" } }, 1, "invalid column name" },
        { { { "a-b", "$.a" } }, 1, "invalid column name" },
        { { { "x", "$.a" }, { "x", "$.b" } }, 2, "duplicate mapping name" },
        { { { "id", "$.a" }, { "id", "$.b" } }, 2, "duplicate mapping name" },
        { { { "x", "$.a[*]" } }, 1, "wildcards" },
        { { { "timestamp", "a" } }, 1, "must start with '$'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pch_cj_options o = PCH_CJ_OPTIONS_INIT;
        o.mappings = bad[i].m;
        o.n_mappings = bad[i].n;
        pch_error err;
        PCH_CHECK(import_("m", "m.lance", &o, &err) == PCH_EINVAL);
        PCH_CHECK_MSG(strstr(err.msg, bad[i].msg) != NULL, "'%s' lacks '%s'", err.msg, bad[i].msg);
        PCH_CHECK(!exists("m.lance") && !stray_staging(""));
    }
    /* options: unknown version, zstd level out of range (version 1 has no level) */
    {
        static const struct { unsigned version; int level; int rc; } opt[] = {
            { 0, 0, PCH_EINVAL }, { PCH_CJ_OPTIONS_VERSION + 1, 0, PCH_EINVAL },
            { PCH_CJ_OPTIONS_VERSION, -1, PCH_EINVAL },
            { PCH_CJ_OPTIONS_VERSION, PCH_CJ_MAX_ZSTD_LEVEL + 1, PCH_EINVAL },
            { 1, 99, PCH_OK }, { PCH_CJ_OPTIONS_VERSION, 19, PCH_OK },
        };
        for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) {
            pch_cj_options o = PCH_CJ_OPTIONS_INIT;
            pch_error err;
            o.version = opt[i].version;
            o.zstd_level = opt[i].level;
            rm("m.lance");
            PCH_CHECK_MSG(import_("m", "m.lance", &o, &err) == opt[i].rc, "case %zu: %s", i, err.msg);
            PCH_CHECK(exists("m.lance") == (opt[i].rc == PCH_OK) && !stray_staging(""));
        }
        rm("m.lance");
    }
    /* create refuses an existing target (and leaves it untouched) */
    pch_error err;
    PCH_CHECK_OK(import_("m", "m.lance", NULL, &err), &err);
    PCH_CHECK(import_("m", "m.lance", NULL, &err) == PCH_EEXISTS);
    PCH_CHECK(!stray_staging(""));
    /* cancellation publishes nothing */
    volatile sig_atomic_t stop = 1;
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    o.cancel = &stop;
    rm("m2.lance");
    PCH_CHECK(import_("m", "m2.lance", &o, &err) == PCH_ECANCELED);
    PCH_CHECK(!exists("m2.lance") && !stray_staging(""));
    rm("m"); rm("m.lance");
}

/* The id index within a memory budget (cj_ids.c): sorted runs spill to temporary files and
** meet in a merge. Directly: unique ids over many runs; duplicates still in memory are
** found at once; duplicates only in runs are found by the merge, reporting the one whose
** second occurrence comes first. Through import: a 4 KiB budget gives the same dataset as
** the default one, and a duplicate 5,000 rows apart fails naming both places, publishing
** nothing. */
static void test_cj__id_index_spills(void)
{
    pch_cj_ids *ids = NULL;
    pch_cj_dup d;
    pch_error err;
    char id[32];
    rm("ix"); rm("ix.lance"); rm("ix4.lance"); rm("ix.out");
    pch_mkdirs(P("ix"), NULL);
    /* unique: runs, no duplicate */
    PCH_CHECK_OK(pch_cj__ids_new(&ids, g_ctx, 4096, P("ix"), &err), &err);
    for (unsigned i = 0; i < 10000; i++) {
        snprintf(id, sizeof id, "id-%u", i);
        PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, id, strlen(id), 0, i + 1, &d, &err), 0);
    }
    PCH_CHECK(pch_cj__ids_runs(ids) >= 9);          /* runs of at least 1,024 ids */
    PCH_CHECK_EQ_INT(pch_cj__ids_finish(ids, &d, &err), 0);
    pch_cj__ids_free(ids);
    /* rows 10001 and 10002 repeat rows 2 and 1 (long spilled): the merge reports the earlier
    ** repeat, row 10001 of id-1; row 10003 repeats row 10002, still in memory: at once */
    PCH_CHECK_OK(pch_cj__ids_new(&ids, g_ctx, 4096, P("ix"), &err), &err);
    for (unsigned i = 0; i < 10000; i++) {
        snprintf(id, sizeof id, "id-%u", i);
        PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, id, strlen(id), 0, i + 1, &d, &err), 0);
    }
    PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, "id-1", 4, 1, 1, &d, &err), 0);
    PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, "id-0", 4, 1, 2, &d, &err), 0);
    PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, "id-0", 4, 1, 3, &d, &err), 1);
    PCH_CHECK(d.file == 1 && d.line == 3 && d.first_file == 1 && d.first_line == 2);
    PCH_CHECK_EQ_INT(pch_cj__ids_finish(ids, &d, &err), 1);
    PCH_CHECK(d.file == 1 && d.line == 1 && d.first_file == 0 && d.first_line == 2);
    PCH_CHECK_EQ_STR(d.shown, "id-1");
    pch_cj__ids_free(ids);
    /* an empty id, repeated in memory and across runs */
    PCH_CHECK_OK(pch_cj__ids_new(&ids, g_ctx, 4096, P("ix"), &err), &err);
    PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, "", 0, 0, 1, &d, &err), 0);
    PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, "", 0, 0, 2, &d, &err), 1);
    PCH_CHECK(d.line == 2 && d.first_line == 1 && d.shown[0] == 0);
    for (unsigned i = 0; i < 3000; i++) {
        snprintf(id, sizeof id, "e-%u", i);
        PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, id, strlen(id), 0, i + 3, &d, &err), 0);
    }
    PCH_CHECK_EQ_INT(pch_cj__ids_add(ids, "", 0, 1, 7, &d, &err), 0);
    PCH_CHECK_EQ_INT(pch_cj__ids_finish(ids, &d, &err), 1);
    PCH_CHECK(d.file == 1 && d.line == 7 && d.first_file == 0 && d.first_line == 1);
    pch_cj__ids_free(ids);
    /* no run files are left behind in the directory (O_TMPFILE or unlinked at once) */
    {
        DIR *dh = opendir(P("ix"));
        struct dirent *de;
        size_t n = 0;
        while (dh && (de = readdir(dh)) != NULL) n += de->d_name[0] != '.' || strlen(de->d_name) > 2;
        if (dh) closedir(dh);
        PCH_CHECK_EQ_INT(n, 0);
    }
    /* through import */
    {
        pch_buf t;
        pch_cj_options o = PCH_CJ_OPTIONS_INIT;
        pch_cj_stats st;
        pch_buf_init(&t, g_ctx);
        for (unsigned f = 0; f < 2; f++) {
            pch_buf_clear(&t);
            for (unsigned i = 0; i < 3000; i++)
                pch_buf_printf(&t, "{\"id\":\"f%u-%u\",\"timestamp\":%u,\"v\":[%u]}\n", f, i, i, i * 7);
            put(f ? "ix/in/b.jsonl" : "ix/in/a.jsonl", t.data, t.len);
        }
        PCH_CHECK_OK(import_("ix/in", "ix.lance", NULL, &err), &err);
        o.id_index_bytes = 4096;
        PCH_CHECK_OK(pch_cj_import(g_ctx, P("ix/in"), P("ix4.lance"), &o, &st, &err), &err);
        PCH_CHECK_EQ_INT(st.records, 6000);
        PCH_CHECK_OK(export_("ix4.lance", "ix.out", NULL, &err), &err);
        PCH_CHECK(same_tree(P("ix/in"), P("ix.out")));
        /* b.jsonl line 2001 repeats a.jsonl line 5 */
        pch_buf_clear(&t);
        for (unsigned i = 0; i < 3000; i++)
            pch_buf_printf(&t, "{\"id\":\"%s%u\",\"timestamp\":%u}\n", i == 2000 ? "f0-" : "f1-",
                           i == 2000 ? 4 : i, i);
        put("ix/in/b.jsonl", t.data, t.len);
        rm("ix4.lance");
        PCH_CHECK_EQ_INT(pch_cj_import(g_ctx, P("ix/in"), P("ix4.lance"), &o, &st, &err), PCH_EINVAL);
        PCH_CHECK_EQ_STR(err.msg, "b.jsonl line 2001 column 1: duplicate id 'f0-4' (first at a.jsonl line 5)");
        PCH_CHECK(!exists("ix4.lance") && !stray_staging(""));
        /* the default budget finds the same pair */
        rm("ix.lance");
        PCH_CHECK_EQ_INT(import_("ix/in", "ix.lance", NULL, &err), PCH_EINVAL);
        PCH_CHECK_EQ_STR(err.msg, "b.jsonl line 2001 column 1: duplicate id 'f0-4' (first at a.jsonl line 5)");
        pch_buf_dispose(&t);
    }
    rm("ix"); rm("ix.lance"); rm("ix4.lance"); rm("ix.out");
}

static void test_cj__ids_and_columns(void)
{
    rm("c"); rm("c.lance");
    puts_("c/a.jsonl",
          "{\"id\":\"s\",\"timestamp\":\"2024\",\"m\":{\"k\":[{\"v\":1}]}}\n"
          "{\"id\":12,\"timestamp\":1.50,\"m\":null}\n"
          "{\"id\":\"\",\"timestamp\":true}\n"
          "{\"id\":[1],\"timestamp\":{}}\n");
    pch_cj_mapping maps[] = { { "v", "$.m.k[0].v" }, { "m", "$.m" } };
    pch_cj_options o = PCH_CJ_OPTIONS_INIT;
    o.mappings = maps;
    o.n_mappings = 2;
    pch_error err;
    PCH_CHECK_OK(import_("c", "c.lance", &o, &err), &err);
    pch_lance_dataset *ds = NULL;
    PCH_CHECK_OK(pch_lance_dataset_open(&ds, g_ctx, P("c.lance"), 0, &err), &err);
    const pch_lance_schema *s = pch_lance_dataset_schema(ds);
    PCH_CHECK_EQ_INT(s->n_fields, 8);
    static const char *const names[] = { "id", "timestamp", "filename", "data", "v", "m", "_raw_", "_offload_" };
    for (size_t i = 0; i < 8; i++) PCH_CHECK_EQ_STR(s->fields[i].name, names[i]);
    pch_lance_scanner *sc = NULL;
    PCH_CHECK_OK(pch_lance_scanner_open(&sc, ds, NULL, 0, 0, &err), &err);
    const pch_lance_batch *b = NULL;
    PCH_CHECK_OK(pch_lance_scanner_next(sc, &b, &err), &err);
    PCH_CHECK_EQ_INT(b->n_rows, 4);
    static const char *const ids[] = { "s", "12", "a.jsonl#3", "a.jsonl#4" };
    static const char *const tss[] = { "2024", "1.50", "a.jsonl#3", "a.jsonl#4" };
    for (size_t r = 0; r < 4; r++) {
        const pch_lance_column *c = &b->columns[0], *t = &b->columns[1];
        size_t n = (size_t)(c->offsets[r + 1] - c->offsets[r]);
        PCH_CHECK(n == strlen(ids[r]) && memcmp(c->data + c->offsets[r], ids[r], n) == 0);
        n = (size_t)(t->offsets[r + 1] - t->offsets[r]);
        PCH_CHECK(n == strlen(tss[r]) && memcmp(t->data + t->offsets[r], tss[r], n) == 0);
    }
    const pch_lance_column *v = &b->columns[4], *m = &b->columns[5];
    PCH_CHECK(v->validity && v->validity[0] && !v->validity[1]);
    PCH_CHECK(m->validity && m->validity[0] && m->validity[1] && !m->validity[2]);  /* JSON null != Arrow null */
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(ds);
    rm("c"); rm("c.lance");
}

static void test_cj__export_rejects(void)
{
    pch_error err;
    /* official dataset without the format metadata: rejected before creating anything */
    const char *fx = "../shared/fixtures/lance/events.lance";
    struct stat sb;
    if (stat(fx, &sb) == 0) {
        PCH_CHECK(pch_cj_export(g_ctx, fx, P("x.out"), NULL, NULL, &err) == PCH_EUNSUPPORTED);
        PCH_CHECK(strstr(err.msg, "pchronicle.format") != NULL);
        PCH_CHECK(!exists("x.out") && !stray_staging(""));
    }
    /* hand-made datasets: unknown version, bad row states, escaping file names */
    struct { const char *fmt, *file; bool raw, off; const char *msg; int code; } bad[] = {
        { "compact-jsonl/v2", "a.jsonl", true, false, "unsupported", PCH_EUNSUPPORTED },
        { PCH_CJ_FORMAT, "../a.jsonl", true, false, "not a safe relative path", PCH_ECORRUPT },
        { PCH_CJ_FORMAT, "/etc/x.jsonl", true, false, "not a safe relative path", PCH_ECORRUPT },
        { PCH_CJ_FORMAT, "a.jsonl", false, false, "invalid row state", PCH_ECORRUPT },
        { PCH_CJ_FORMAT, "a.jsonl", true, true, "invalid row state", PCH_ECORRUPT },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rm("h.lance");
        pch_lance_schema *s = NULL;
        PCH_CHECK_OK(pch_lance_schema_new(&s, g_ctx, &err), &err);
        pch_lance_schema_add_field(s, "id", PCH_LANCE_UTF8, false, &err);
        pch_lance_schema_add_field(s, "timestamp", PCH_LANCE_UTF8, false, &err);
        pch_lance_schema_add_field(s, "filename", PCH_LANCE_UTF8, false, &err);
        pch_lance_schema_add_field(s, "data", PCH_LANCE_JSON, false, &err);
        pch_lance_schema_add_field(s, "_raw_", PCH_LANCE_LARGE_BINARY, true, &err);
        pch_lance_schema_add_field(s, "_offload_", PCH_LANCE_JSON, true, &err);
        pch_lance_schema_add_metadata(s, SIZE_MAX, "pchronicle.format", bad[i].fmt, strlen(bad[i].fmt), &err);
        /* JSONB: an empty object (0x40000000) and the scalar null (0x20000000 0x00000000) */
        static const uint8_t jobj[4] = { 0x40, 0, 0, 0 }, jnull[8] = { 0x20, 0, 0, 0, 0, 0, 0, 0 };
        const uint8_t *fn = (const uint8_t *)bad[i].file;
        uint64_t o_id[2] = { 0, 1 }, o_fn[2] = { 0, strlen(bad[i].file) }, o_d[2] = { 0, 4 };
        uint64_t o_raw[2] = { 0, bad[i].raw ? 3 : 0 }, o_off[2] = { 0, bad[i].off ? 4 : 0 };
        uint8_t vr = bad[i].raw, vo = bad[i].off;
        pch_lance_column cols[6] = {
            { PCH_LANCE_UTF8, 1, NULL, NULL, o_id, (const uint8_t *)"x" },
            { PCH_LANCE_UTF8, 1, NULL, NULL, o_id, (const uint8_t *)"t" },
            { PCH_LANCE_UTF8, 1, NULL, NULL, o_fn, fn },
            { PCH_LANCE_JSON, 1, NULL, NULL, o_d, jobj },
            { PCH_LANCE_LARGE_BINARY, 1, &vr, NULL, o_raw, (const uint8_t *)"{}\n" },
            { PCH_LANCE_JSON, 1, &vo, NULL, o_off, jobj },
        };
        (void)jnull;
        pch_lance_batch batch = { 1, 6, cols };
        pch_lance_writer *w = NULL;
        PCH_CHECK_OK(pch_lance_writer_open(&w, g_ctx, P("h.lance"), s, NULL, &err), &err);
        PCH_CHECK_OK(pch_lance_writer_write(w, &batch, &err), &err);
        PCH_CHECK_OK(pch_lance_writer_commit(w, NULL, &err), &err);
        pch_lance_writer_free(w);
        pch_lance_schema_free(s);
        rm("h.out");
        int rc = export_("h.lance", "h.out", NULL, &err);
        PCH_CHECK_MSG(rc == bad[i].code, "case %zu: rc %d %s", i, rc, err.msg);
        PCH_CHECK_MSG(strstr(err.msg, bad[i].msg) != NULL, "case %zu: '%s'", i, err.msg);
        PCH_CHECK(!exists("h.out") && !stray_staging(""));
    }
    rm("h.lance");
}

/* ---- property test: random trees round-trip byte for byte ---- */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng % n);
}

static void rand_value(pch_buf *b, int depth)
{
    static const char *const atoms[] = { "null", "true", "false", "0", "-0", "1.0", "1e2", "-1.5E-3",
                                         "18446744073709551616", "\"\"", "\"\\u00e9\"", "\"\xc3\xa9\\n\"",
                                         "\"a\\\"b\"", "123456789012345678901234567890" };
    uint32_t k = depth > 4 ? 0 : rnd(4);
    if (k == 0 || k == 1) { pch_buf_append_str(b, atoms[rnd(sizeof atoms / sizeof atoms[0])]); return; }
    bool obj = k == 2;
    pch_buf_putc(b, obj ? '{' : '[');
    uint32_t n = rnd(4);
    for (uint32_t i = 0; i < n; i++) {
        if (i) pch_buf_append_str(b, rnd(3) ? "," : " , ");
        if (obj) pch_buf_printf(b, "\"k%u\":", i);
        rand_value(b, depth + 1);
    }
    pch_buf_putc(b, obj ? '}' : ']');
}

static void test_cj__property_random_trees(void)
{
    static const char *const dirs[] = { "", "a/", "a/b/", "Z/", "a.b/" };
    static const char *const exts[] = { ".jsonl", ".ndjson", ".JSONL", ".json" };
    for (int iter = 0; iter < 25; iter++) {
        rm("p");
        pch_mkdirs(P("p"), NULL);
        uint32_t nf = 1 + rnd(6);
        for (uint32_t f = 0; f < nf; f++) {
            char rel[128];
            const char *ext = exts[rnd(4)];
            snprintf(rel, sizeof rel, "p/%sf%u%s", dirs[rnd(5)], f, ext);
            pch_buf b;
            pch_buf_init(&b, NULL);
            if (strcmp(ext, ".json") == 0) {
                pch_buf_printf(&b, "{\"id\":\"doc-%d-%u\",\"v\":", iter, f);
                rand_value(&b, 0);
                pch_buf_append_str(&b, rnd(2) ? "}\n" : "}");
            } else {
                uint32_t nl = rnd(8);
                for (uint32_t l = 0; l < nl; l++) {
                    pch_buf_putc(&b, '{');
                    if (rnd(2)) pch_buf_printf(&b, "\"id\":\"r%d-%u-%u\",", iter, f, l);
                    if (rnd(2)) pch_buf_append_str(&b, "\"timestamp\":\"2024-01-01T00:00:00Z\",");
                    pch_buf_append_str(&b, "\"v\":");
                    rand_value(&b, 0);
                    pch_buf_putc(&b, '}');
                    if (l + 1 < nl || rnd(2)) pch_buf_append_str(&b, rnd(2) ? "\r\n" : "\n");
                }
            }
            put(rel, b.data, b.len);
            pch_buf_dispose(&b);
        }
        pch_cj_options o = PCH_CJ_OPTIONS_INIT;
        o.offload_threshold = rnd(3) == 0 ? 0 : 8 + rnd(200);
        o.batch_rows = 1 + rnd(5);
        pch_cj_mapping maps[] = { { "v", "$.v" } };
        o.mappings = maps;
        o.n_mappings = rnd(2);
        roundtrip("p", &o);
        if (pch_t_cur_failed) { fprintf(stderr, "  iteration %d\n", iter); return; }
    }
    rm("p"); rm("rt.lance"); rm("rt.out");
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "compact_jsonl_test");
    snprintf(g_tmp, sizeof g_tmp, "/tmp/pch-cj-test-XXXXXX");
    if (!mkdtemp(g_tmp) || pch_ctx_new(&g_ctx, NULL, NULL, NULL) < 0) return 1;
    PCH_RUN(test_cj__lines);
    PCH_RUN(test_cj__names);
    PCH_RUN(test_cj__walk);
    PCH_RUN(test_cj__stage);
    PCH_RUN(test_cj__roundtrip_edges);
    PCH_RUN(test_cj__offload_shared_and_tamper);
    PCH_RUN(test_cj__failures);
    PCH_RUN(test_cj__mapping_errors);
    PCH_RUN(test_cj__ids_and_columns);
    PCH_RUN(test_cj__id_index_spills);
    PCH_RUN(test_cj__export_rejects);
    PCH_RUN(test_cj__property_random_trees);
    pch_ctx_free(g_ctx);
    pch_remove_tree(g_tmp, NULL);
    return pch_test_report();
}
