/* Unit tests for the Lance table layer (src/lance/manifest.c, dataset.c; lance-format.md
** §1): manifest encode/decode (byte-identical with the prototype's minimal manifest and
** Appendix B), strict framing errors, V1/V2 names, version listing, create / append /
** overwrite versions, the latest hint, time travel, splitting into fragments, racing
** creators (fork), append conflict retry, that a failed writer leaves nothing visible, and
** scans of selected rows (equal to a filtered full scan across pages and fragments). */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lance/table.h"

static pch_ctx *g_ctx;
static char g_tmp[256];

/* 188 bytes */
static const uint8_t k_minimal_manifest[] = {
    0xa8, 0x00, 0x00, 0x00, 0x0a, 0x18, 0x12, 0x02, 0x69, 0x64, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0x01, 0x2a, 0x05, 0x69, 0x6e, 0x74, 0x36, 0x34, 0x38, 0x01, 0x0a, 0x1f,
    0x12, 0x04, 0x6e, 0x61, 0x6d, 0x65, 0x18, 0x01, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x01, 0x2a, 0x06, 0x73, 0x74, 0x72, 0x69, 0x6e, 0x67, 0x30, 0x01, 0x38, 0x02, 0x12,
    0x3b, 0x12, 0x37, 0x0a, 0x26, 0x34, 0x31, 0x39, 0x33, 0x30, 0x37, 0x39, 0x37, 0x34, 0x30, 0x63,
    0x34, 0x34, 0x30, 0x30, 0x33, 0x61, 0x30, 0x39, 0x66, 0x32, 0x64, 0x32, 0x38, 0x64, 0x62, 0x30,
    0x34, 0x37, 0x66, 0x62, 0x65, 0x2e, 0x6c, 0x61, 0x6e, 0x63, 0x65, 0x12, 0x02, 0x00, 0x01, 0x1a,
    0x02, 0x00, 0x01, 0x20, 0x02, 0x28, 0x01, 0x30, 0xfe, 0x04, 0x20, 0x04, 0x18, 0x01, 0x3a, 0x0c,
    0x08, 0x98, 0x98, 0xb6, 0xd8, 0x06, 0x10, 0xf6, 0xaf, 0xa7, 0xe4, 0x01, 0x58, 0x00, 0x6a, 0x0e,
    0x0a, 0x05, 0x6c, 0x61, 0x6e, 0x63, 0x65, 0x12, 0x05, 0x38, 0x2e, 0x30, 0x2e, 0x30, 0x7a, 0x0c,
    0x0a, 0x05, 0x6c, 0x61, 0x6e, 0x63, 0x65, 0x12, 0x03, 0x32, 0x2e, 0x31, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x4c, 0x41, 0x4e, 0x43,
};

/* 437 bytes */
static const uint8_t k_appendix_b_manifest[] = {
    0xb4, 0x00, 0x00, 0x00, 0x12, 0x24, 0x39, 0x30, 0x36, 0x62, 0x38, 0x38, 0x30, 0x66, 0x2d, 0x38,
    0x34, 0x65, 0x37, 0x2d, 0x34, 0x66, 0x30, 0x64, 0x2d, 0x62, 0x63, 0x64, 0x64, 0x2d, 0x30, 0x36,
    0x32, 0x61, 0x34, 0x66, 0x64, 0x33, 0x39, 0x61, 0x61, 0x61, 0xb2, 0x06, 0x8a, 0x01, 0x0a, 0x4d,
    0x12, 0x49, 0x0a, 0x38, 0x31, 0x30, 0x31, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x31, 0x30, 0x31,
    0x31, 0x31, 0x30, 0x30, 0x30, 0x30, 0x30, 0x31, 0x31, 0x30, 0x31, 0x31, 0x61, 0x61, 0x38, 0x33,
    0x65, 0x61, 0x34, 0x34, 0x36, 0x64, 0x39, 0x61, 0x36, 0x38, 0x34, 0x34, 0x30, 0x39, 0x63, 0x34,
    0x35, 0x35, 0x39, 0x64, 0x35, 0x35, 0x2e, 0x6c, 0x61, 0x6e, 0x63, 0x65, 0x12, 0x02, 0x00, 0x01,
    0x1a, 0x02, 0x00, 0x01, 0x20, 0x02, 0x28, 0x01, 0x30, 0xfd, 0x04, 0x20, 0x04, 0x12, 0x18, 0x12,
    0x02, 0x69, 0x64, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x2a, 0x05,
    0x69, 0x6e, 0x74, 0x36, 0x34, 0x38, 0x01, 0x12, 0x1f, 0x12, 0x04, 0x6e, 0x61, 0x6d, 0x65, 0x18,
    0x01, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x2a, 0x06, 0x73, 0x74,
    0x72, 0x69, 0x6e, 0x67, 0x30, 0x01, 0x38, 0x02, 0xe9, 0x00, 0x00, 0x00, 0x0a, 0x18, 0x12, 0x02,
    0x69, 0x64, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x2a, 0x05, 0x69,
    0x6e, 0x74, 0x36, 0x34, 0x38, 0x01, 0x0a, 0x1f, 0x12, 0x04, 0x6e, 0x61, 0x6d, 0x65, 0x18, 0x01,
    0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x2a, 0x06, 0x73, 0x74, 0x72,
    0x69, 0x6e, 0x67, 0x30, 0x01, 0x38, 0x02, 0x12, 0x4d, 0x12, 0x49, 0x0a, 0x38, 0x31, 0x30, 0x31,
    0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x31, 0x30, 0x31, 0x31, 0x31, 0x30, 0x30, 0x30, 0x30, 0x30,
    0x31, 0x31, 0x30, 0x31, 0x31, 0x61, 0x61, 0x38, 0x33, 0x65, 0x61, 0x34, 0x34, 0x36, 0x64, 0x39,
    0x61, 0x36, 0x38, 0x34, 0x34, 0x30, 0x39, 0x63, 0x34, 0x35, 0x35, 0x39, 0x64, 0x35, 0x35, 0x2e,
    0x6c, 0x61, 0x6e, 0x63, 0x65, 0x12, 0x02, 0x00, 0x01, 0x1a, 0x02, 0x00, 0x01, 0x20, 0x02, 0x28,
    0x01, 0x30, 0xfd, 0x04, 0x20, 0x04, 0x18, 0x01, 0x3a, 0x0c, 0x08, 0x94, 0x98, 0xb6, 0xd8, 0x06,
    0x10, 0x84, 0xc9, 0xe4, 0x99, 0x01, 0x58, 0x00, 0x62, 0x2a, 0x30, 0x2d, 0x39, 0x30, 0x36, 0x62,
    0x38, 0x38, 0x30, 0x66, 0x2d, 0x38, 0x34, 0x65, 0x37, 0x2d, 0x34, 0x66, 0x30, 0x64, 0x2d, 0x62,
    0x63, 0x64, 0x64, 0x2d, 0x30, 0x36, 0x32, 0x61, 0x34, 0x66, 0x64, 0x33, 0x39, 0x61, 0x61, 0x61,
    0x2e, 0x74, 0x78, 0x6e, 0x6a, 0x0e, 0x0a, 0x05, 0x6c, 0x61, 0x6e, 0x63, 0x65, 0x12, 0x05, 0x38,
    0x2e, 0x30, 0x2e, 0x30, 0x7a, 0x0c, 0x0a, 0x05, 0x6c, 0x61, 0x6e, 0x63, 0x65, 0x12, 0x03, 0x32,
    0x2e, 0x31, 0xa8, 0x01, 0x00, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x4c, 0x41, 0x4e, 0x43,
};


static const char *tpath(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", g_tmp, name);
    return p[k];
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* ---------------------------------------------------------------- manifest bytes */

static void test_lance_table__minimal_manifest_roundtrip(void)
{
    pch_error e;
    pch_lance_manifest *m = NULL;
    pch_buf b;
    PCH_CHECK_OK(pch_lance__manifest_decode_file(&m, g_ctx, k_minimal_manifest,
                                                 sizeof k_minimal_manifest, &e), &e);
    PCH_CHECK_EQ_INT(m->version, 1);
    PCH_CHECK_EQ_INT(m->schema->n_fields, 2);
    PCH_CHECK_EQ_STR(m->schema->fields[1].name, "name");
    PCH_CHECK_EQ_INT(m->schema->fields[1].type, PCH_LANCE_UTF8);
    PCH_CHECK_EQ_INT(m->n_fragments, 1);
    PCH_CHECK_EQ_INT(m->fragments[0].physical_rows, 4);
    PCH_CHECK_EQ_INT(m->fragments[0].files[0].file_size, 638);
    PCH_CHECK_EQ_INT(m->fragments[0].files[0].n_fields, 2);
    PCH_CHECK_EQ_INT(m->fragments[0].files[0].column_indices[1], 1);
    PCH_CHECK(m->has_max_fragment_id && m->max_fragment_id == 0);
    PCH_CHECK_EQ_STR(m->writer_library, "lance");
    PCH_CHECK_EQ_STR(m->format_version, "2.1");
    PCH_CHECK(!m->has_transaction_section);
    /* our encoder writes exactly the minimal form (lance-format.md §1.3) */
    pch_buf_init(&b, g_ctx);
    PCH_CHECK_OK(pch_lance__manifest_encode_file(&b, m, &e), &e);
    PCH_CHECK_EQ_INT(b.len, sizeof k_minimal_manifest);
    PCH_CHECK(memcmp(b.data, k_minimal_manifest, b.len) == 0);
    pch_buf_dispose(&b);
    pch_lance__manifest_free(m);
}

static void test_lance_table__build_minimal_manifest(void)
{
    /* the same manifest built field by field */
    pch_error e;
    pch_lance_manifest *m = NULL, *ref = NULL;
    pch_buf b;
    int32_t ids[2] = { 0, 1 };
    PCH_CHECK_OK(pch_lance__manifest_decode_file(&ref, g_ctx, k_minimal_manifest,
                                                 sizeof k_minimal_manifest, &e), &e);
    PCH_CHECK_OK(pch_lance__manifest_new(&m, g_ctx, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(m->schema, "id", PCH_LANCE_INT64, false, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(m->schema, "name", PCH_LANCE_UTF8, true, &e), &e);
    char path[] = "4193079740c44003a09f2d28db047fbe.lance";
    pch_lance_data_file df = { path, ids, 2, ids, 2, 2, 1, 638, false };
    pch_lance_fragment fr = { 0, &df, 1, 4, false, false };
    PCH_CHECK_OK(pch_lance__manifest_add_fragment(m, &fr, &e), &e);
    m->version = 1;
    m->ts_seconds = ref->ts_seconds;
    m->ts_nanos = ref->ts_nanos;
    m->has_max_fragment_id = true;
    m->max_fragment_id = 0;
    PCH_CHECK_OK(pch_lance__manifest_set_str(m, &m->writer_library, "lance", &e), &e);
    PCH_CHECK_OK(pch_lance__manifest_set_str(m, &m->writer_version, "8.0.0", &e), &e);
    PCH_CHECK_OK(pch_lance__manifest_set_str(m, &m->format_name, "lance", &e), &e);
    PCH_CHECK_OK(pch_lance__manifest_set_str(m, &m->format_version, "2.1", &e), &e);
    pch_buf_init(&b, g_ctx);
    PCH_CHECK_OK(pch_lance__manifest_encode_file(&b, m, &e), &e);
    PCH_CHECK_EQ_INT(b.len, sizeof k_minimal_manifest);
    PCH_CHECK(memcmp(b.data, k_minimal_manifest, b.len) == 0);
    pch_buf_dispose(&b);
    pch_lance__manifest_free(m);
    pch_lance__manifest_free(ref);
}

static void test_lance_table__appendix_b_with_transaction(void)
{
    pch_error e;
    pch_lance_manifest *m = NULL;
    PCH_CHECK_OK(pch_lance__manifest_decode_file(&m, g_ctx, k_appendix_b_manifest,
                                                 sizeof k_appendix_b_manifest, &e), &e);
    PCH_CHECK_EQ_INT(sizeof k_appendix_b_manifest, 437);
    PCH_CHECK_EQ_INT(m->version, 1);
    PCH_CHECK(m->has_transaction_section && m->transaction_section == 0);
    PCH_CHECK_EQ_INT(m->fragments[0].files[0].file_size, 637);
    PCH_CHECK_EQ_STR(m->writer_version, "8.0.0");
    PCH_CHECK_EQ_INT(m->ts_seconds, 1796049940);
    pch_lance__manifest_free(m);
}

static void expect_corrupt(const uint8_t *p, size_t n, const char *needle)
{
    pch_error e;
    pch_lance_manifest *m = (pch_lance_manifest *)1;
    int rc = pch_lance__manifest_decode_file(&m, g_ctx, p, n, &e);
    PCH_CHECK_EQ_INT(rc, PCH_ECORRUPT);
    PCH_CHECK(m == NULL);
    PCH_CHECK_MSG(strstr(e.msg, needle) != NULL, "message '%s' lacks '%s'", e.msg, needle);
}

static void test_lance_table__corrupt_manifests(void)
{
    uint8_t buf[sizeof k_minimal_manifest + 8];
    size_t n = sizeof k_minimal_manifest;
    expect_corrupt(k_minimal_manifest, 10, "too short");
    expect_corrupt(k_minimal_manifest, n - 1, "bad magic");          /* truncated */
    memcpy(buf, k_minimal_manifest, n);
    buf[n - 1] = 'X';
    expect_corrupt(buf, n, "bad magic");
    memcpy(buf, k_minimal_manifest, n);
    buf[0] ^= 1;                                                     /* length prefix */
    expect_corrupt(buf, n, "does not match");
    memcpy(buf, k_minimal_manifest, n);
    buf[n - 16] = 0xf0;                                              /* position */
    expect_corrupt(buf, n, "past the end");
    /* a byte of padding between message and footer */
    memcpy(buf, k_minimal_manifest, n - 16);
    buf[n - 16] = 0;
    memcpy(buf + n - 15, k_minimal_manifest + n - 16, 16);
    expect_corrupt(buf, n + 1, "does not match");
    /* a protobuf length running past the message: shorten the message by one byte */
    memcpy(buf, k_minimal_manifest, n);
    pch_store_le32(buf, pch_load_le32(buf) - 1);
    memmove(buf + n - 17, buf + n - 16, 16);
    expect_corrupt(buf, n - 1, "manifest");
    /* every truncation fails closed */
    for (size_t k = 0; k < n; k++) {
        pch_error e;
        pch_lance_manifest *m = NULL;
        PCH_CHECK(pch_lance__manifest_decode_file(&m, g_ctx, k_minimal_manifest, k, &e) < 0);
        PCH_CHECK(m == NULL);
    }
}

static void test_lance_table__names(void)
{
    char name[32];
    uint64_t v;
    pch_error e;
    pch_lance__manifest_name(name, 1, 2);
    PCH_CHECK_EQ_STR(name, "18446744073709551614.manifest");
    pch_lance__manifest_name(name, 2, 2);
    PCH_CHECK_EQ_STR(name, "18446744073709551613.manifest");
    pch_lance__manifest_name(name, 12, 1);
    PCH_CHECK_EQ_STR(name, "12.manifest");
    PCH_CHECK_EQ_INT(pch_lance__manifest_parse_name("18446744073709551614.manifest", &v, &e), 2);
    PCH_CHECK_EQ_INT(v, 1);
    PCH_CHECK_EQ_INT(pch_lance__manifest_parse_name("7.manifest", &v, &e), 1);
    PCH_CHECK_EQ_INT(v, 7);
    PCH_CHECK_EQ_INT(pch_lance__manifest_parse_name("latest_version_hint.json", &v, &e), 0);
    PCH_CHECK_EQ_INT(pch_lance__manifest_parse_name("18446744073709551614.manifest#1", &v, &e), 0);
    PCH_CHECK_EQ_INT(pch_lance__manifest_parse_name("x1.manifest", &v, &e), PCH_ECORRUPT);
    PCH_CHECK_EQ_INT(pch_lance__manifest_parse_name("0.manifest", &v, &e), PCH_ECORRUPT);
    PCH_CHECK_EQ_INT(pch_lance__manifest_parse_name("99999999999999999999.manifest", &v, &e), PCH_ECORRUPT);
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (f) fclose(f);
}

static void test_lance_table__list_versions(void)
{
    pch_error e;
    uint64_t *v = NULL;
    size_t n = 0;
    int naming = 0;
    char p[600];
    const char *ds = tpath("listing");
    snprintf(p, sizeof p, "%s/_versions", ds);
    PCH_CHECK_EQ_INT(pch_lance__list_versions(g_ctx, ds, &v, &n, &naming, &e), PCH_ENOTFOUND);
    PCH_CHECK_OK(pch_mkdirs(p, &e), &e);
    PCH_CHECK_EQ_INT(pch_lance__list_versions(g_ctx, ds, &v, &n, &naming, &e), PCH_ENOTFOUND);
    const char *names[] = { "18446744073709551614.manifest", "18446744073709551612.manifest",
                            "18446744073709551613.manifest", "latest_version_hint.json",
                            ".18446744073709551611.manifest.tmp-1-2", "18446744073709551611.manifest#1" };
    for (size_t i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s/_versions/%s", ds, names[i]);
        touch(p);
    }
    PCH_CHECK_OK(pch_lance__list_versions(g_ctx, ds, &v, &n, &naming, &e), &e);
    PCH_CHECK_EQ_INT(n, 3);
    PCH_CHECK_EQ_INT(naming, 2);
    PCH_CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3);
    pch_free(g_ctx, v);
    snprintf(p, sizeof p, "%s/_versions/4.manifest", ds);
    touch(p);
    PCH_CHECK_EQ_INT(pch_lance__list_versions(g_ctx, ds, &v, &n, &naming, &e), PCH_ECORRUPT);
    PCH_CHECK(strstr(e.msg, "V1 and V2") != NULL);
    /* the empty manifests themselves are corrupt: opening says so */
    unlink(p);
    pch_lance_dataset *d = NULL;
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 0, &e), PCH_ECORRUPT);
    PCH_CHECK(d == NULL);
    PCH_CHECK(strstr(e.msg, "18446744073709551612.manifest") != NULL);
}

/* ---------------------------------------------------------------- datasets */

static pch_lance_schema *test_schema(void)
{
    pch_lance_schema *s = NULL;
    pch_lance_schema_new(&s, g_ctx, NULL);
    pch_lance_schema_add_field(s, "id", PCH_LANCE_INT64, false, NULL);
    pch_lance_schema_add_field(s, "name", PCH_LANCE_UTF8, true, NULL);
    pch_lance_schema_add_field(s, "flag", PCH_LANCE_BOOL, true, NULL);
    return s;
}

/* Write rows id = start .. start+n-1; name "r<id>" (null when id % 7 == 3). */
static int write_rows(const char *ds, pch_lance_write_mode mode, int64_t start, size_t n,
                      uint64_t max_rows, uint64_t *version, pch_lance_writer **keep,
                      pch_error *e)
{
    pch_lance_schema *s = test_schema();
    pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
    pch_lance_writer *w = NULL;
    int64_t *ids = calloc(n ? n : 1, 8);
    uint64_t *offs = calloc(n + 1, 8);
    uint8_t *valid = calloc(n ? n : 1, 1), *flags = calloc(n ? n : 1, 1);
    char *data = calloc(n ? n * 24 : 1, 1);
    int rc;
    o.mode = mode;
    o.max_rows_per_file = max_rows;
    size_t dl = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t id = start + (int64_t)i;
        ids[i] = id;
        valid[i] = id % 7 != 3;
        flags[i] = (uint8_t)(id & 1);
        if (valid[i]) dl += (size_t)sprintf(data + dl, "r%lld", (long long)id);
        offs[i + 1] = dl;
    }
    pch_lance_column cols[3] = {
        { PCH_LANCE_INT64, n, NULL, (const uint8_t *)ids, NULL, NULL },
        { PCH_LANCE_UTF8, n, valid, NULL, offs, (const uint8_t *)data },
        { PCH_LANCE_BOOL, n, NULL, flags, NULL, NULL },
    };
    pch_lance_batch b = { n, 3, cols };
    if ((rc = pch_lance_writer_open(&w, g_ctx, ds, s, &o, e)) < 0) goto done;
    /* two calls: exercises splitting across calls */
    pch_lance_batch b1 = b, b2 = b;
    size_t half = n / 2;
    pch_lance_column c1[3], c2[3];
    memcpy(c1, cols, sizeof cols);
    memcpy(c2, cols, sizeof cols);
    for (int c = 0; c < 3; c++) { c1[c].n_rows = half; c2[c].n_rows = n - half; }
    c2[0].values = (const uint8_t *)(ids + half);
    c2[1].validity = valid + half;
    c2[1].offsets = offs + half;
    c2[2].values = flags + half;
    b1.n_rows = half; b1.columns = c1;
    b2.n_rows = n - half; b2.columns = c2;
    if ((rc = pch_lance_writer_write(w, &b1, e)) < 0) goto done;
    if ((rc = pch_lance_writer_write(w, &b2, e)) < 0) goto done;
    if (keep) { *keep = w; w = NULL; goto done; }
    rc = pch_lance_writer_commit(w, version, e);
done:
    pch_lance_writer_free(w);
    pch_lance_schema_free(s);
    free(ids); free(offs); free(valid); free(flags); free(data);
    return rc;
}

/* Scan every row; checks ids are consecutive from `start` and names/flags match. */
static int check_rows(const char *ds, uint64_t version, int64_t start, uint64_t want_rows,
                      size_t want_frags, pch_error *e)
{
    pch_lance_dataset *d = NULL;
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *b;
    int64_t next = start;
    int rc;
    char want[32];
    if ((rc = pch_lance_dataset_open(&d, g_ctx, ds, version, e)) < 0) return rc;
    rc = -100;
    if (pch_lance_dataset_num_rows(d) != want_rows) goto done;
    if (want_frags && pch_lance_dataset_num_fragments(d) != want_frags) { rc = -101; goto done; }
    if ((rc = pch_lance_scanner_open(&sc, d, NULL, 0, 1000, e)) < 0) goto done;
    while ((rc = pch_lance_scanner_next(sc, &b, e)) == 0) {
        const pch_lance_column *id = &b->columns[0], *nm = &b->columns[1], *fl = &b->columns[2];
        for (size_t r = 0; r < b->n_rows; r++, next++) {
            int64_t v = (int64_t)pch_load_le64(id->values + r * 8);
            if (v != next) { rc = -102; goto done; }
            bool valid = !nm->validity || nm->validity[r];
            if (valid != (v % 7 != 3)) { fprintf(stderr, "row %lld valid %d\n", (long long)v, valid); rc = -103; goto done; }
            if (valid) {
                snprintf(want, sizeof want, "r%lld", (long long)v);
                if (nm->offsets[r + 1] - nm->offsets[r] != strlen(want) ||
                    memcmp(nm->data + nm->offsets[r], want, strlen(want))) { rc = -104; goto done; }
            }
            if (fl->values[r] != (uint8_t)(v & 1)) { rc = -105; goto done; }
        }
    }
    if (rc == PCH_ITEROVER) rc = (uint64_t)(next - start) == want_rows ? 0 : -106;
done:
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(d);
    return rc;
}

static void test_lance_table__create_append_overwrite(void)
{
    pch_error e;
    uint64_t v = 0;
    const char *ds = tpath("cao");
    char hint[600];
    pch_buf b;
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_CREATE, 0, 2500, 1000, &v, NULL, &e), &e);
    PCH_CHECK_EQ_INT(v, 1);
    PCH_CHECK_OK(check_rows(ds, 0, 0, 2500, 3, &e), &e);       /* 1000 + 1000 + 500 */
    PCH_CHECK_EQ_INT(write_rows(ds, PCH_LANCE_CREATE, 0, 10, 0, &v, NULL, &e), PCH_EEXISTS);
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_APPEND, 2500, 700, 0, &v, NULL, &e), &e);
    PCH_CHECK_EQ_INT(v, 2);
    PCH_CHECK_OK(check_rows(ds, 0, 0, 3200, 4, &e), &e);
    PCH_CHECK_OK(check_rows(ds, 1, 0, 2500, 3, &e), &e);         /* time travel */
    snprintf(hint, sizeof hint, "%s/_versions/latest_version_hint.json", ds);
    pch_buf_init(&b, g_ctx);
    PCH_CHECK_OK(pch_file_read_all(&b, hint, 100, &e), &e);
    PCH_CHECK_EQ_STR((const char *)b.data, "{\"version\":2}");
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_OVERWRITE, 100, 50, 0, &v, NULL, &e), &e);
    PCH_CHECK_EQ_INT(v, 3);
    PCH_CHECK_OK(check_rows(ds, 0, 100, 50, 1, &e), &e);
    PCH_CHECK_OK(check_rows(ds, 2, 0, 3200, 4, &e), &e);
    pch_buf_clear(&b);
    PCH_CHECK_OK(pch_file_read_all(&b, hint, 100, &e), &e);
    PCH_CHECK_EQ_STR((const char *)b.data, "{\"version\":3}");
    pch_buf_dispose(&b);
    /* fragment ids never reused; writer identity recorded */
    pch_lance_manifest *m = NULL;
    int naming = 0;
    PCH_CHECK_OK(pch_lance__load_manifest(&m, g_ctx, ds, 0, &naming, &e), &e);
    PCH_CHECK_EQ_INT(naming, 2);
    PCH_CHECK_EQ_INT(m->fragments[0].id, 4);
    PCH_CHECK(m->has_max_fragment_id && m->max_fragment_id == 4);
    PCH_CHECK_EQ_STR(m->writer_library, "pchronicle");
    PCH_CHECK_EQ_STR(m->writer_version, PCH_VERSION_STRING);
    PCH_CHECK_EQ_STR(m->format_version, "2.1");
    PCH_CHECK(!m->has_transaction_section);
    pch_lance__manifest_free(m);
    pch_lance_dataset *d = NULL;
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 9, &e), PCH_ENOTFOUND);
    PCH_CHECK(strstr(e.msg, "version 9") != NULL);
}

static void test_lance_table__append_schema_mismatch(void)
{
    pch_error e;
    uint64_t v;
    const char *ds = tpath("mismatch");
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_CREATE, 0, 10, 0, &v, NULL, &e), &e);
    pch_lance_schema *s = NULL;
    pch_lance_schema_new(&s, g_ctx, NULL);
    pch_lance_schema_add_field(s, "id", PCH_LANCE_INT32, false, NULL);
    pch_lance_schema_add_field(s, "name", PCH_LANCE_UTF8, true, NULL);
    pch_lance_schema_add_field(s, "flag", PCH_LANCE_BOOL, true, NULL);
    pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
    o.mode = PCH_LANCE_APPEND;
    pch_lance_writer *w = NULL;
    int rc = pch_lance_writer_open(&w, g_ctx, ds, s, &o, &e);
    pch_lance_schema_free(s);
    PCH_CHECK_EQ_INT(rc, PCH_EINVAL);
    PCH_CHECK(w == NULL);
    PCH_CHECK(strstr(e.msg, "'id'") != NULL);
    o.mode = PCH_LANCE_APPEND;
    s = test_schema();
    rc = pch_lance_writer_open(&w, g_ctx, tpath("nonexistent"), s, &o, &e);
    PCH_CHECK_EQ_INT(rc, PCH_ENOTFOUND);
    /* option structs grow by appending: a version-1 caller (no `threads`) still works,
    ** an unknown version fails closed */
    struct { unsigned version; pch_lance_write_mode mode; pch_lance_file_version fv;
             uint64_t rows, page; int level; } v1 = { 1, PCH_LANCE_CREATE, PCH_LANCE_FILE_2_1, 0, 0, 0 };
    rc = pch_lance_writer_open(&w, g_ctx, tpath("v1-options"), s, (const pch_lance_write_options *)(const void *)&v1, &e);
    PCH_CHECK_OK(rc, &e);
    pch_lance_writer_free(w);
    w = NULL;
    o.version = 99;
    rc = pch_lance_writer_open(&w, g_ctx, tpath("v99-options"), s, &o, &e);
    pch_lance_schema_free(s);
    PCH_CHECK_EQ_INT(rc, PCH_EINVAL);
    PCH_CHECK(w == NULL);
}

static void test_lance_table__failed_writer_leaves_nothing(void)
{
    pch_error e;
    pch_lance_writer *w = NULL;
    const char *ds = tpath("failed");
    char data[600];
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_CREATE, 0, 3000, 1000, NULL, &w, &e), &e);
    snprintf(data, sizeof data, "%s/data", ds);
    PCH_CHECK(count_entries(data) >= 2);        /* finished files exist before commit */
    pch_lance_dataset *d = NULL;
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 0, &e), PCH_ENOTFOUND);
    pch_lance_writer_free(w);
    PCH_CHECK_EQ_INT(count_entries(data), 0);
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 0, &e), PCH_ENOTFOUND);
    /* and an uncommitted append to an existing dataset leaves it as it was */
    uint64_t v;
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_CREATE, 0, 10, 0, &v, NULL, &e), &e);
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_APPEND, 10, 10, 0, NULL, &w, &e), &e);
    pch_lance_writer_free(w);
    PCH_CHECK_EQ_INT(count_entries(data), 1);
    PCH_CHECK_OK(check_rows(ds, 0, 0, 10, 1, &e), &e);
}

static void test_lance_table__append_conflict_retries(void)
{
    pch_error e;
    uint64_t v1 = 0, v2 = 0;
    pch_lance_writer *a = NULL, *b = NULL;
    const char *ds = tpath("conflict");
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_CREATE, 0, 100, 0, &v1, NULL, &e), &e);
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_APPEND, 100, 100, 0, NULL, &a, &e), &e);
    PCH_CHECK_OK(write_rows(ds, PCH_LANCE_APPEND, 100, 100, 0, NULL, &b, &e), &e);
    PCH_CHECK_OK(pch_lance_writer_commit(b, &v2, &e), &e);
    PCH_CHECK_OK(pch_lance_writer_commit(a, &v1, &e), &e);  /* version 2 taken: retries as 3 */
    PCH_CHECK_EQ_INT(v2, 2);
    PCH_CHECK_EQ_INT(v1, 3);
    pch_lance_writer_free(a);
    pch_lance_writer_free(b);
    pch_lance_dataset *d = NULL;
    PCH_CHECK_OK(pch_lance_dataset_open(&d, g_ctx, ds, 0, &e), &e);
    PCH_CHECK_EQ_INT(pch_lance_dataset_num_rows(d), 300);
    PCH_CHECK_EQ_INT(pch_lance_dataset_num_fragments(d), 3);
    pch_lance_dataset_free(d);
}

static void test_lance_table__concurrent_create(void)
{
    const char *ds = tpath("race");
    char data[600];
    int wins = 0, losses = 0;
    for (int round = 0; round < 3; round++) {
        pid_t pids[2];
        pch_error e;
        pch_remove_tree(ds, NULL);
        for (int k = 0; k < 2; k++) {
            pids[k] = fork();
            if (pids[k] == 0) {
                uint64_t v;
                pch_lance_writer *w = NULL;
                int rc = write_rows(ds, PCH_LANCE_CREATE, k * 1000, 500, 0, NULL, &w, &e);
                if (rc == PCH_EEXISTS) _exit(1);   /* lost before writing: also a loss */
                if (rc < 0) _exit(3);
                rc = pch_lance_writer_commit(w, &v, &e);
                pch_lance_writer_free(w);
                _exit(rc == 0 ? 0 : rc == PCH_EEXISTS ? 1 : 3);
            }
        }
        int st[2];
        for (int k = 0; k < 2; k++) waitpid(pids[k], &st[k], 0);
        int w0 = WEXITSTATUS(st[0]), w1 = WEXITSTATUS(st[1]);
        PCH_CHECK_MSG((w0 == 0) + (w1 == 0) == 1 && (w0 == 1) + (w1 == 1) == 1,
                      "exit codes %d %d", w0, w1);
        wins++;
        losses++;
        int winner = w0 == 0 ? 0 : 1;
        PCH_CHECK_OK(check_rows(ds, 0, winner * 1000, 500, 1, &e), &e);
        snprintf(data, sizeof data, "%s/data", ds);
        PCH_CHECK_EQ_INT(count_entries(data), 1);   /* the loser removed its file */
    }
    PCH_CHECK_EQ_INT(wins, 3);
    PCH_CHECK_EQ_INT(losses, 3);
}

/* Write a manifest file by hand (fragment with a deletion file / unknown flags). */
static void write_manifest(const char *ds, uint64_t version, uint64_t flags, bool deletion)
{
    pch_buf b, f;
    char p[600], name[32];
    size_t mark, fm;
    pch_lance_schema *s = test_schema();
    pch_buf_init(&b, g_ctx);
    pch_buf_init(&f, g_ctx);
    pch_lance__schema_encode_fields(&b, 1, s);
    pch_pb_begin(&b, 2, &mark);
    pch_pb_put_u64(&b, 1, 0);
    pch_pb_begin(&b, 2, &fm);
    pch_pb_put_str(&b, 1, "x.lance");
    pch_pb_put_u64(&b, 4, 2);
    pch_pb_put_u64(&b, 5, 1);
    pch_pb_end(&b, fm);
    if (deletion) {
        pch_pb_begin(&b, 3, &fm);
        pch_pb_put_u64(&b, 2, 1);
        pch_pb_end(&b, fm);
    }
    pch_pb_put_u64(&b, 4, 5);
    pch_pb_end(&b, mark);
    pch_pb_put_u64(&b, 3, version);
    pch_pb_put_u64_nz(&b, 9, flags);
    pch_buf_put_le32(&f, (uint32_t)b.len);
    pch_buf_append(&f, b.data, b.len);
    pch_buf_put_le64(&f, 0);
    pch_buf_put_le16(&f, 0);
    pch_buf_put_le16(&f, 2);
    pch_buf_append(&f, "LANC", 4);
    snprintf(p, sizeof p, "%s/_versions", ds);
    pch_mkdirs(p, NULL);
    pch_lance__manifest_name(name, version, 2);
    snprintf(p, sizeof p, "%s/_versions/%s", ds, name);
    pch_file_publish(p, f.data, f.len, NULL);
    pch_buf_dispose(&b);
    pch_buf_dispose(&f);
    pch_lance_schema_free(s);
}

static void test_lance_table__fail_closed_features(void)
{
    pch_error e;
    pch_lance_dataset *d = NULL;
    const char *ds = tpath("features");
    write_manifest(ds, 1, 1, true);
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 1, &e), PCH_EUNSUPPORTED);
    PCH_CHECK_MSG(strstr(e.msg, "deletion file") != NULL, "%s", e.msg);
    write_manifest(ds, 2, 32, false);
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 2, &e), PCH_EUNSUPPORTED);
    PCH_CHECK(strstr(e.msg, "0x20") != NULL);
    write_manifest(ds, 3, 16, false);
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 3, &e), PCH_EUNSUPPORTED);
    PCH_CHECK(strstr(e.msg, "base paths") != NULL);
    /* a manifest whose version field disagrees with its name */
    write_manifest(ds, 4, 0, false);
    char a[600], b2[600], n4[32], n5[32];
    pch_lance__manifest_name(n4, 4, 2);
    pch_lance__manifest_name(n5, 5, 2);
    snprintf(a, sizeof a, "%s/_versions/%s", ds, n4);
    snprintf(b2, sizeof b2, "%s/_versions/%s", ds, n5);
    PCH_CHECK(rename(a, b2) == 0);
    PCH_CHECK_EQ_INT(pch_lance_dataset_open(&d, g_ctx, ds, 0, &e), PCH_ECORRUPT);
    PCH_CHECK(strstr(e.msg, "says version 4") != NULL);
}

/* ---------------------------------------------------------------- row selection */

/* Rows of version 0 of ds as JSON lines (one malloc'd string per row), by a full scan or
** by a scan of the selected rows. */
static int scan_json(const char *ds, const uint64_t *sel, size_t n_sel, bool use_sel,
                     size_t batch_rows, char ***rows_out, size_t *n_out, pch_error *e)
{
    pch_lance_dataset *d = NULL;
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *b;
    char **rows = NULL, *line = NULL;
    size_t n = 0, len = 0, cap = 0;
    int rc;
    *rows_out = NULL;
    *n_out = 0;
    if ((rc = pch_lance_dataset_open(&d, g_ctx, ds, 0, e)) < 0) return rc;
    rows = calloc(pch_lance_dataset_num_rows(d) + 1, sizeof *rows);
    if (use_sel) rc = pch_lance_scanner_open_rows(&sc, d, NULL, 0, sel, n_sel, batch_rows, e);
    else rc = pch_lance_scanner_open(&sc, d, NULL, 0, batch_rows, e);
    while (rc == 0 && (rc = pch_lance_scanner_next(sc, &b, e)) == 0) {
        if (b->n_rows > batch_rows) { rc = -200; break; }
        for (size_t r = 0; r < b->n_rows && rc == 0; r++) {
            len = 0;
            rc = pch_lance_row_to_json(g_ctx, pch_lance_dataset_schema(d), NULL, b, r, &line, &len, &cap, e);
            if (rc == 0 && n <= pch_lance_dataset_num_rows(d)) {
                rows[n] = malloc(len + 1);
                memcpy(rows[n], line, len);
                rows[n++][len] = 0;
            }
        }
    }
    if (rc == PCH_ITEROVER) rc = 0;
    pch_free(g_ctx, line);
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(d);
    *rows_out = rows;
    *n_out = n;
    return rc;
}

static void free_json_rows(char **rows, size_t n)
{
    for (size_t i = 0; i < n; i++) free(rows[i]);
    free(rows);
}

/* Many small pages (256 bytes) in three fragments, both file versions: a scan of selected
** rows equals the full scan filtered to those rows, in every batch size. */
static void test_lance_table__scan_selected_rows(void)
{
    for (int fv = 0; fv < 2; fv++) {
        pch_error e;
        char name[32];
        snprintf(name, sizeof name, "sel%d", fv);
        const char *ds = tpath(name);
        pch_lance_schema *s = test_schema();
        pch_lance_write_options o = PCH_LANCE_WRITE_OPTIONS_INIT;
        pch_lance_writer *w = NULL;
        const size_t n = 2600;
        int64_t *ids = calloc(n, 8);
        uint64_t *offs = calloc(n + 1, 8);
        uint8_t *valid = calloc(n, 1), *flags = calloc(n, 1);
        char *data = calloc(n * 24, 1);
        size_t dl = 0;
        for (size_t i = 0; i < n; i++) {
            ids[i] = (int64_t)(i * 2654435761u % 100003);
            valid[i] = i % 7 != 3;
            flags[i] = (uint8_t)(i & 1);
            if (valid[i]) dl += (size_t)sprintf(data + dl, "row-%zu", i * 31);
            offs[i + 1] = dl;
        }
        pch_lance_column cols[3] = {
            { PCH_LANCE_INT64, n, NULL, (const uint8_t *)ids, NULL, NULL },
            { PCH_LANCE_UTF8, n, valid, NULL, offs, (const uint8_t *)data },
            { PCH_LANCE_BOOL, n, NULL, flags, NULL, NULL },
        };
        pch_lance_batch b = { n, 3, cols };
        o.file_version = fv ? PCH_LANCE_FILE_2_0 : PCH_LANCE_FILE_2_1;
        o.max_rows_per_file = 1000;
        o.max_bytes_per_page = 256;
        PCH_CHECK_OK(pch_lance_writer_open(&w, g_ctx, ds, s, &o, &e), &e);
        PCH_CHECK_OK(pch_lance_writer_write(w, &b, &e), &e);
        PCH_CHECK_OK(pch_lance_writer_commit(w, NULL, &e), &e);
        pch_lance_writer_free(w);
        pch_lance_schema_free(s);
        free(ids); free(offs); free(valid); free(flags); free(data);

        char **all = NULL;
        size_t n_all = 0;
        PCH_CHECK_OK(scan_json(ds, NULL, 0, false, 8192, &all, &n_all, &e), &e);
        PCH_CHECK_EQ_INT(n_all, n);
        /* selections: sparse, runs crossing pages and fragments, edges, everything, nothing */
        uint64_t *sel = calloc(n, sizeof *sel);
        for (int pattern = 0; pattern < 5; pattern++) {
            size_t k = 0;
            for (uint64_t r = 0; r < n; r++) {
                bool take = pattern == 0 ? (r * 7919 % 13) == 0
                          : pattern == 1 ? (r >= 990 && r < 1017) || (r >= 1990 && r < 2010) || r == 0 || r == n - 1
                          : pattern == 2 ? true
                          : pattern == 3 ? r == 1500
                          : false;
                if (take) sel[k++] = r;
            }
            static const size_t batches[] = { 1, 7, 8192 };
            for (size_t bi = 0; bi < 3; bi++) {
                char **got = NULL;
                size_t n_got = 0;
                PCH_CHECK_OK(scan_json(ds, sel, k, true, batches[bi], &got, &n_got, &e), &e);
                PCH_CHECK_EQ_INT(n_got, k);
                for (size_t i = 0; i < k && i < n_got; i++)
                    if (strcmp(got[i], all[sel[i]]) != 0) {
                        PCH_CHECK_EQ_STR(got[i], all[sel[i]]);
                        break;
                    }
                free_json_rows(got, n_got);
            }
        }
        /* misuse: unsorted, duplicate, out of range */
        pch_lance_dataset *d = NULL;
        pch_lance_scanner *sc = NULL;
        PCH_CHECK_OK(pch_lance_dataset_open(&d, g_ctx, ds, 0, &e), &e);
        sel[0] = 5; sel[1] = 4;
        PCH_CHECK_EQ_INT(pch_lance_scanner_open_rows(&sc, d, NULL, 0, sel, 2, 0, &e), PCH_EINVAL);
        PCH_CHECK(sc == NULL);
        sel[1] = 5;
        PCH_CHECK_EQ_INT(pch_lance_scanner_open_rows(&sc, d, NULL, 0, sel, 2, 0, &e), PCH_EINVAL);
        sel[1] = n;
        PCH_CHECK_EQ_INT(pch_lance_scanner_open_rows(&sc, d, NULL, 0, sel, 2, 0, &e), PCH_EINVAL);
        PCH_CHECK(strstr(e.msg, "past") != NULL);
        /* a projection of one column */
        size_t col = 1;
        const pch_lance_batch *bb;
        sel[0] = 3; sel[1] = 4;
        PCH_CHECK_OK(pch_lance_scanner_open_rows(&sc, d, &col, 1, sel, 2, 0, &e), &e);
        PCH_CHECK_OK(pch_lance_scanner_next(sc, &bb, &e), &e);
        PCH_CHECK_EQ_INT(bb->n_columns, 1);
        PCH_CHECK_EQ_INT(bb->n_rows, 2);
        PCH_CHECK(bb->columns[0].validity && !bb->columns[0].validity[0] && bb->columns[0].validity[1]);
        PCH_CHECK_EQ_INT(pch_lance_scanner_next(sc, &bb, &e), PCH_ITEROVER);
        pch_lance_scanner_free(sc);
        pch_lance_dataset_free(d);
        free(sel);
        free_json_rows(all, n_all);
    }
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "lance_table_test");
    snprintf(g_tmp, sizeof g_tmp, "%s/pch-lance-table-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_tmp) || pch_ctx_new(&g_ctx, NULL, NULL, NULL) < 0) return 1;
    PCH_RUN(test_lance_table__minimal_manifest_roundtrip);
    PCH_RUN(test_lance_table__build_minimal_manifest);
    PCH_RUN(test_lance_table__appendix_b_with_transaction);
    PCH_RUN(test_lance_table__corrupt_manifests);
    PCH_RUN(test_lance_table__names);
    PCH_RUN(test_lance_table__list_versions);
    PCH_RUN(test_lance_table__create_append_overwrite);
    PCH_RUN(test_lance_table__append_schema_mismatch);
    PCH_RUN(test_lance_table__failed_writer_leaves_nothing);
    PCH_RUN(test_lance_table__append_conflict_retries);
    PCH_RUN(test_lance_table__concurrent_create);
    PCH_RUN(test_lance_table__fail_closed_features);
    PCH_RUN(test_lance_table__scan_selected_rows);
    pch_remove_tree(g_tmp, NULL);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
