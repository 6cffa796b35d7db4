/* RFC-0014 "JSON path 子集": grammar (accepted and rejected forms) and evaluation. */
#include "harness.h"
#include "compact_jsonl/cj_int.h"
#include "pchronicle/json.h"

static pch_ctx *g_ctx;

static void test_path__accepts(void)
{
    static const char *const ok[] = { "$", "$.id", "$.user.id", "$.messages[0].role", "$._x",
                                      "$.a1[10]", "$.A.b_c[007].d", "$.x[4294967295]" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        pch_error err;
        pch_cj_path p;
        PCH_CHECK_OK(pch_cj__path_parse(&p, g_ctx, ok[i], strlen(ok[i]), &err), &err);
        PCH_CHECK_OK(pch_cj_path_check(ok[i], &err), &err);
        pch_cj__path_dispose(&p);
    }
}

static void test_path__rejects(void)
{
    static const struct { const char *path, *what; } bad[] = {
        { "", "empty" }, { "id", "start with '$'" }, { "$.", "identifier" }, { "$..a", "recursive" },
        { "$.*", "wildcard" }, { "$.a[*]", "wildcards" }, { "$.a[-1]", "negative" },
        { "$.a[0][1]", "one index" }, { "$.a[0,1]", "one index" }, { "$.a[1:2]", "one index" },
        { "$['a']", "must follow a member" }, { "$.'a'", "quoted" }, { "$.\"a\"", "quoted" },
        { "$[0]", "must follow a member" }, { "$.1a", "identifier" }, { "$.a b", "expected '.'" },
        { "$.a[", "digits" }, { "$.a[1", "missing" }, { "$.a[?(@.x)]", "filters" },
        { "$.a[4294967296]", "too large" }, { "$.é", "identifier" }, { "$ ", "expected '.'" },
        { "$.a.", "identifier" }, { "$.a]", "expected '.'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pch_error err;
        pch_error_clear(&err);
        pch_cj_path p;
        int rc = pch_cj__path_parse(&p, g_ctx, bad[i].path, strlen(bad[i].path), &err);
        PCH_CHECK_MSG(rc == PCH_EINVAL, "%s accepted", bad[i].path);
        PCH_CHECK_MSG(strstr(err.msg, bad[i].what) != NULL, "%s: '%s' lacks '%s'", bad[i].path, err.msg, bad[i].what);
        PCH_CHECK(p.text == NULL && p.steps == NULL);
        PCH_CHECK(pch_cj_path_check(bad[i].path, NULL) == PCH_EINVAL);
    }
    pch_cj_path p;
    PCH_CHECK(pch_cj__path_parse(&p, g_ctx, "$.a\0b", 5, NULL) == PCH_EINVAL);
}

static const pch_json_value *eval(pch_json_parser *jp, const char *doc, const char *path)
{
    const pch_json_value *root = NULL;
    if (pch_json_parser_parse(jp, doc, strlen(doc), &root, NULL) < 0) return NULL;
    pch_cj_path p;
    if (pch_cj__path_parse(&p, g_ctx, path, strlen(path), NULL) < 0) return NULL;
    const pch_json_value *v = pch_cj__path_eval(&p, root);
    pch_cj__path_dispose(&p);
    return v;
}

static void test_path__eval(void)
{
    pch_json_parser *jp = NULL;
    PCH_CHECK_OK(pch_json_parser_new(&jp, g_ctx, NULL, NULL), NULL);
    const char *doc = "{\"id\":\"x\",\"user\":{\"id\":7},\"messages\":[{\"role\":\"user\"},{\"role\":\"bot\"}],\"n\":null,\"a\":{\"a\":[1]}}";
    const pch_json_value *v = eval(jp, doc, "$");
    PCH_CHECK(v && v->kind == PCH_JSON_OBJECT);
    v = eval(jp, doc, "$.id");
    PCH_CHECK(v && v->kind == PCH_JSON_STRING && v->u.str.len == 1 && v->u.str.ptr[0] == 'x');
    v = eval(jp, doc, "$.user.id");
    PCH_CHECK(v && v->kind == PCH_JSON_NUMBER && v->u.num.i == 7);
    v = eval(jp, doc, "$.messages[1].role");
    PCH_CHECK(v && v->kind == PCH_JSON_STRING && memcmp(v->u.str.ptr, "bot", 3) == 0);
    v = eval(jp, doc, "$.n");
    PCH_CHECK(v && v->kind == PCH_JSON_NULL);          /* JSON null is a value, not missing */
    v = eval(jp, doc, "$.a.a[0]");
    PCH_CHECK(v && v->kind == PCH_JSON_NUMBER);
    PCH_CHECK(eval(jp, doc, "$.messages[2].role") == NULL);   /* past the end */
    PCH_CHECK(eval(jp, doc, "$.id.x") == NULL);               /* not an object */
    PCH_CHECK(eval(jp, doc, "$.user[0]") == NULL);            /* not an array */
    PCH_CHECK(eval(jp, doc, "$.missing") == NULL);
    PCH_CHECK(eval(jp, "[1,2]", "$.a") == NULL);
    v = eval(jp, "[1,2]", "$");
    PCH_CHECK(v && v->kind == PCH_JSON_ARRAY);
    pch_json_parser_free(jp);
}

static void test_path__names(void)
{
    PCH_CHECK(pch_cj__is_identifier("_a1", 3));
    PCH_CHECK(!pch_cj__is_identifier("1a", 2));
    PCH_CHECK(!pch_cj__is_identifier("", 0));
    PCH_CHECK(!pch_cj__is_identifier("a-b", 3));
    PCH_CHECK(pch_cj__is_reserved("filename") && pch_cj__is_reserved("data") &&
              pch_cj__is_reserved("_raw_") && pch_cj__is_reserved("_offload_"));
    PCH_CHECK(!pch_cj__is_reserved("id") && !pch_cj__is_reserved("model"));
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "json_path_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) < 0) return 1;
    PCH_RUN(test_path__accepts);
    PCH_RUN(test_path__rejects);
    PCH_RUN(test_path__eval);
    PCH_RUN(test_path__names);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
