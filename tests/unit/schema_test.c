/* Unit tests for src/lance/schema.c: type names, SCHEMA.json, schema JSON output,
** lance.file.Field protobuf exactly as official Lance writes it (lance-format.md §1.6,
** Appendix B), JSON field marking (§3.1), and the JSON text helpers. */
#include "harness.h"
#include "lance/table.h"

static pch_ctx *g_ctx;

static void test_schema__type_names(void)
{
    pch_error e;
    pch_lance_type t;
    const char *names[] = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                            "uint32", "uint64", "float32", "float64", "utf8", "large_utf8",
                            "binary", "large_binary", "json" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        PCH_CHECK_OK(pch_lance_type_from_name(&t, names[i], &e), &e);
        PCH_CHECK_EQ_STR(pch_lance_type_name(t), names[i]);
    }
    PCH_CHECK_EQ_INT(pch_lance_type_from_name(&t, "decimal128", &e), PCH_EUNSUPPORTED);
    PCH_CHECK(strstr(e.msg, "decimal128") != NULL);
    PCH_CHECK_EQ_STR(pch_lance__logical_type(PCH_LANCE_UTF8), "string");
    PCH_CHECK_EQ_STR(pch_lance__logical_type(PCH_LANCE_FLOAT32), "float");
    PCH_CHECK_EQ_STR(pch_lance__logical_type(PCH_LANCE_FLOAT64), "double");
    PCH_CHECK_EQ_STR(pch_lance__logical_type(PCH_LANCE_LARGE_UTF8), "large_string");
    PCH_CHECK_EQ_STR(pch_lance__logical_type(PCH_LANCE_JSON), "json");
    PCH_CHECK_EQ_INT(pch_lance_type_width(PCH_LANCE_INT16), 2);
    PCH_CHECK(pch_lance_type_is_var(PCH_LANCE_JSON));
    PCH_CHECK(!pch_lance_type_is_var(PCH_LANCE_UINT64));
}

static void test_schema__from_json(void)
{
    pch_error e;
    pch_lance_schema *s = NULL;
    const char *j =
        "{\"fields\":[{\"name\":\"id\",\"type\":\"int64\",\"nullable\":false},"
        "{\"name\":\"doc\",\"type\":\"json\",\"metadata\":{\"role\":\"payload\"}},"
        "{\"name\":\"raw\",\"type\":\"large_binary\",\"nullable\":true,\"metadata\":{}}],"
        "\"metadata\":{\"producer\":\"test\"}}";
    PCH_CHECK_OK(pch_lance_schema_from_json(&s, g_ctx, j, strlen(j), &e), &e);
    PCH_CHECK_EQ_INT(s->n_fields, 3);
    PCH_CHECK_EQ_STR(s->fields[0].name, "id");
    PCH_CHECK(!s->fields[0].nullable);
    PCH_CHECK(s->fields[1].nullable);            /* default true */
    PCH_CHECK_EQ_INT(s->fields[1].type, PCH_LANCE_JSON);
    PCH_CHECK_EQ_INT(s->fields[1].n_metadata, 1);
    PCH_CHECK_EQ_STR(s->fields[1].metadata[0].key, "role");
    PCH_CHECK_EQ_INT(s->fields[2].id, 2);
    PCH_CHECK_EQ_INT(s->n_metadata, 1);
    PCH_CHECK_EQ_INT(pch_lance_schema_find(s, "raw"), 2);
    PCH_CHECK_EQ_INT(pch_lance_schema_find(s, "nope"), -1);

    char *out = NULL;
    size_t len = 0;
    PCH_CHECK_OK(pch_lance_schema_to_json(s, &out, &len, &e), &e);
    PCH_CHECK_EQ_STR(out,
        "{\"fields\":[{\"name\":\"id\",\"type\":\"int64\",\"nullable\":false,\"metadata\":{}},"
        "{\"name\":\"doc\",\"type\":\"json\",\"nullable\":true,\"metadata\":{\"role\":\"payload\"}},"
        "{\"name\":\"raw\",\"type\":\"large_binary\",\"nullable\":true,\"metadata\":{}}],"
        "\"metadata\":{\"producer\":\"test\"}}");
    PCH_CHECK_EQ_INT(len, strlen(out));
    /* the dump header's schema is itself a valid SCHEMA.json */
    pch_lance_schema *s2 = NULL;
    int rc = pch_lance_schema_from_json(&s2, g_ctx, out, len, &e);
    pch_free(g_ctx, out);
    PCH_CHECK_OK(rc, &e);
    PCH_CHECK_OK(pch_lance__schema_check_same(s, s2, &e), &e);
    pch_lance_schema_free(s2);
    pch_lance_schema_free(s);
}

static void expect_schema_error(const char *j, int code, const char *needle)
{
    pch_error e;
    pch_lance_schema *s = (pch_lance_schema *)1;
    int rc = pch_lance_schema_from_json(&s, g_ctx, j, strlen(j), &e);
    PCH_CHECK_EQ_INT(rc, code);
    PCH_CHECK(s == NULL);
    PCH_CHECK_MSG(strstr(e.msg, needle) != NULL, "message '%s' lacks '%s'", e.msg, needle);
}

static void test_schema__from_json_errors(void)
{
    expect_schema_error("{\"fields\":[{\"name\":\"a\",\"type\":\"float16\"}]}", PCH_EUNSUPPORTED,
                        "unknown type 'float16'");
    expect_schema_error("{\"fields\":[{\"name\":\"a\"}]}", PCH_EINVAL, "\"type\"");
    expect_schema_error("{\"fields\":[{\"type\":\"int8\"}]}", PCH_EINVAL, "\"name\"");
    expect_schema_error("{\"fields\":[]}", PCH_EINVAL, "no fields");
    expect_schema_error("{\"fields\":[{\"name\":\"a\",\"type\":\"int8\"},{\"name\":\"a\",\"type\":\"int8\"}]}",
                        PCH_EINVAL, "duplicate field name 'a'");
    expect_schema_error("{\"fields\":[{\"name\":\"a\",\"type\":\"int8\",\"nulable\":true}]}",
                        PCH_EINVAL, "unknown key 'nulable'");
    expect_schema_error("{\"fields\":[{\"name\":\"a\",\"type\":\"int8\",\"metadata\":{\"k\":1}}]}",
                        PCH_EINVAL, "must be a string");
    expect_schema_error("{\"fields\":[{\"name\":\"a\",\"type\":\"int8\"}],\"extra\":1}", PCH_EINVAL,
                        "unknown key 'extra'");
    expect_schema_error("[1,2", PCH_EINVAL, "schema");
}

/* Bytes 0x04..0x3f of the minimal manifest (lance-format.md Appendix B / the prototype's
** plain-mb.lance): Field id (int64, not null) and Field name (string, nullable). */
static const uint8_t k_plain_fields[] = {
    0x0a, 0x18, 0x12, 0x02, 'i', 'd', 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x01, 0x2a, 0x05, 'i', 'n', 't', '6', '4', 0x38, 0x01,
    0x0a, 0x1f, 0x12, 0x04, 'n', 'a', 'm', 'e', 0x18, 0x01, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0x01, 0x2a, 0x06, 's', 't', 'r', 'i', 'n', 'g', 0x30, 0x01, 0x38, 0x02,
};

static void test_schema__encode_fields_appendix_b(void)
{
    pch_error e;
    pch_lance_schema *s;
    pch_buf b;
    PCH_CHECK_OK(pch_lance_schema_new(&s, g_ctx, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(s, "id", PCH_LANCE_INT64, false, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(s, "name", PCH_LANCE_UTF8, true, &e), &e);
    pch_buf_init(&b, g_ctx);
    PCH_CHECK(pch_lance__schema_encode_fields(&b, 1, s) == 0);
    PCH_CHECK_EQ_INT(b.len, sizeof k_plain_fields);
    PCH_CHECK(memcmp(b.data, k_plain_fields, b.len) == 0);
    pch_buf_dispose(&b);
    pch_lance_schema_free(s);
}

static void test_schema__json_field_roundtrip(void)
{
    pch_error e;
    pch_lance_schema *s, *d;
    pch_buf b;
    PCH_CHECK_OK(pch_lance_schema_new(&s, g_ctx, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_field(s, "data", PCH_LANCE_JSON, false, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_metadata(s, 0, "role", "x", 1, &e), &e);
    PCH_CHECK_OK(pch_lance_schema_add_metadata(s, SIZE_MAX, "producer", "t", 1, &e), &e);
    pch_buf_init(&b, g_ctx);
    PCH_CHECK(pch_lance__schema_encode_fields(&b, 1, s) == 0);
    /* lance writes: logical_type json, VAR_BINARY, extension_name + field metadata */
    PCH_CHECK(memmem(b.data, b.len, "\x2a\x04json", 6) != NULL);
    PCH_CHECK(memmem(b.data, b.len, "\x38\x02", 2) != NULL);
    PCH_CHECK(memmem(b.data, b.len, "\x4a\x0alance.json", 12) != NULL);
    PCH_CHECK(memmem(b.data, b.len, "ARROW:extension:name", 20) != NULL);
    /* decode: skip the outer tag + length (1 + 1 bytes, message < 128) */
    PCH_CHECK(b.data[0] == 0x0a && b.data[1] == b.len - 2);
    PCH_CHECK_OK(pch_lance_schema_new(&d, g_ctx, &e), &e);
    PCH_CHECK_OK(pch_lance__schema_decode_field(d, b.data + 2, b.len - 2, &e), &e);
    PCH_CHECK_EQ_INT(d->fields[0].type, PCH_LANCE_JSON);
    PCH_CHECK_EQ_INT(d->fields[0].n_metadata, 1);           /* marker stripped */
    PCH_CHECK_EQ_STR(d->fields[0].metadata[0].key, "role");
    pch_buf_clear(&b);
    PCH_CHECK(pch_lance__schema_encode_metadata(&b, 5, s) == 0);
    PCH_CHECK(b.data[0] == 0x2a);
    PCH_CHECK_OK(pch_lance__schema_decode_metadata(d, b.data + 2, b.len - 2, &e), &e);
    PCH_CHECK_EQ_INT(d->n_metadata, 1);
    PCH_CHECK_EQ_STR((const char *)d->metadata[0].value, "t");
    pch_buf_dispose(&b);
    pch_lance_schema_free(s);
    pch_lance_schema_free(d);
}

static void test_schema__decode_rejects(void)
{
    pch_error e;
    pch_lance_schema *d;
    /* large_binary + extension marker in metadata only is JSON too */
    static const uint8_t lb_json[] = { 0x12, 0x01, 'j', 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0x01, 0x2a, 0x0c, 'l', 'a', 'r', 'g', 'e', '_', 'b', 'i', 'n', 'a', 'r',
        'y', 0x52, 0x22, 0x0a, 0x14, 'A', 'R', 'R', 'O', 'W', ':', 'e', 'x', 't', 'e', 'n', 's',
        'i', 'o', 'n', ':', 'n', 'a', 'm', 'e', 0x12, 0x0a, 'l', 'a', 'n', 'c', 'e', '.', 'j',
        's', 'o', 'n' };
    static const uint8_t nested[] = { 0x12, 0x01, 'c', 0x18, 0x01, 0x20, 0x00, 0x2a, 0x05,
                                      'i', 'n', 't', '6', '4' };
    static const uint8_t strct[] = { 0x12, 0x01, 's', 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0x01, 0x2a, 0x06, 's', 't', 'r', 'u', 'c', 't' };
    static const uint8_t trunc[] = { 0x12, 0x05, 'a' };
    PCH_CHECK_OK(pch_lance_schema_new(&d, g_ctx, &e), &e);
    PCH_CHECK_OK(pch_lance__schema_decode_field(d, lb_json, sizeof lb_json, &e), &e);
    PCH_CHECK_EQ_INT(d->fields[0].type, PCH_LANCE_JSON);
    PCH_CHECK_EQ_INT(d->fields[0].n_metadata, 0);
    PCH_CHECK_EQ_INT(pch_lance__schema_decode_field(d, nested, sizeof nested, &e), PCH_EUNSUPPORTED);
    PCH_CHECK(strstr(e.msg, "nested") != NULL);
    PCH_CHECK_EQ_INT(pch_lance__schema_decode_field(d, strct, sizeof strct, &e), PCH_EUNSUPPORTED);
    PCH_CHECK(strstr(e.msg, "'struct'") != NULL);
    PCH_CHECK_EQ_INT(pch_lance__schema_decode_field(d, trunc, sizeof trunc, &e), PCH_ECORRUPT);
    pch_lance_schema_free(d);
}

static void test_schema__json_text_helpers(void)
{
    pch_buf b;
    pch_buf_init(&b, g_ctx);
    PCH_CHECK(pch_lance__json_put_string(&b, "a\"b\\c\n\x01\xce\xb4\xff", 10) == 0);
    PCH_CHECK_EQ_STR((const char *)b.data, "\"a\\\"b\\\\c\\n\\u0001\xce\xb4\xef\xbf\xbd\"");
    pch_buf_clear(&b);
    pch_lance__json_put_float(&b, 0.1, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 0.1f, true);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 1.0 / 3.0, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, -2.5e300, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 100, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 0.0 / 0.0, false);
    PCH_CHECK_EQ_STR((const char *)b.data, "0.1 0.1 0.3333333333333333 -2.5e+300 100 \"NaN\"");
    pch_buf_clear(&b);
    pch_lance__json_put_float(&b, 1e21, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 1.5e-7, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 0.000001, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 123456789012345680000.0, false);
    pch_buf_putc(&b, ' ');
    pch_lance__json_put_float(&b, 5e-324, false);
    PCH_CHECK_EQ_STR((const char *)b.data, "1e+21 1.5e-7 0.000001 123456789012345680000 5e-324");
    pch_buf_dispose(&b);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "schema_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) < 0) return 1;
    PCH_RUN(test_schema__type_names);
    PCH_RUN(test_schema__from_json);
    PCH_RUN(test_schema__from_json_errors);
    PCH_RUN(test_schema__encode_fields_appendix_b);
    PCH_RUN(test_schema__json_field_roundtrip);
    PCH_RUN(test_schema__decode_rejects);
    PCH_RUN(test_schema__json_text_helpers);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
