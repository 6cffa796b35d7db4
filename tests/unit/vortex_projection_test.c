/* Unit tests of the Vortex trajectory projection (src/projection; RFC-0006 §6–§16): lossless
** round trips (typed lanes + escape) of edge-case documents and the test-data tree at several
** tier thresholds, lookup candidates, Preview hydration, the stale-commit rule, abandoned
** builds, and the CURRENT / manifest / path validators on hostile input. JSON equality is
** jansson's (1 and 1.0 differ). */
#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pchronicle/ctx.h"
static pch_ctx *g_ctx;

#include "harness.h"
#include "json_equal.h"
#include "pchronicle/atif.h"
#include "pchronicle-vortex/projection.h"
#include "projection/pj_int.h"

static char g_tmp[256];

static void rmrf(const char *p)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0) fprintf(stderr, "rm failed\n");
}

static char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 512, "%s/%s", g_tmp, name);
    return b;
}

/* Build ROOT from one document text (or fail with the builder's error). */
/* tokens: the parser keeps the metrics token arrays typed (as the CLI's import asks) */
static int build_one_with(const char *root, const char *text, const pch_vxp_build_options *o, bool tokens,
                          pch_error *err)
{
    pch_atif_options ao = PCH_ATIF_OPTIONS_INIT;
    pch_atif_doc *d = NULL;
    pch_vxp_builder *b = NULL;
    int rc;
    ao.tokens = tokens;
    rc = pch_atif_doc_parse(&d, g_ctx, text, strlen(text), "doc.json", &ao, NULL, NULL, err);
    if (rc == 0) rc = pch_vxp_builder_open(&b, g_ctx, root, o, err);
    if (rc == 0) rc = pch_vxp_builder_add_doc(b, d, strlen(text), err);
    if (rc == 0) rc = pch_vxp_builder_commit(b, NULL, err);
    pch_vxp_builder_free(b);
    pch_atif_doc_free(d);
    return rc;
}

static int build_one(const char *root, const char *text, const pch_vxp_build_options *o, pch_error *err)
{
    return build_one_with(root, text, o, true, err);
}

/* get(KEY) of ROOT equals text (exactly one candidate). */
static bool get_equals(const char *root, const char *key, const char *text, pch_vxp_hydration mode)
{
    pch_vxp_snapshot *s = NULL;
    pch_error err;
    uint64_t idx[4];
    size_t n = 0, len = 0;
    char *out = NULL;
    bool ok = false;
    if (pch_vxp_snapshot_open(&s, g_ctx, root, &err) != 0) { fprintf(stderr, "open: %s\n", err.msg); return false; }
    if (pch_vxp_lookup(s, key, idx, 4, &n, &err) == 0 && n == 1 &&
        pch_vxp_get(s, idx[0], mode, false, &out, &len, &err) == 0) {
        ok = same_value(out, len, text, strlen(text));
        if (!ok) fprintf(stderr, "got:  %s\nwant: %s\n", out, text);
    } else {
        fprintf(stderr, "lookup/get of %s: n=%zu %s\n", key, n, err.msg);
    }
    pch_free(g_ctx, out);
    pch_vxp_snapshot_free(s);
    return ok;
}

static void print_finding(const char *file, const char *msg, void *payload)
{
    (void)payload;
    fprintf(stderr, "  finding: %s: %s\n", file, msg);
}

static bool healthy(const char *root)
{
    size_t n = 99;
    pch_error err;
    return pch_vxp_verify(g_ctx, root, print_finding, NULL, &n, &err) == 0 && n == 0;
}

/* Every edge case of §6.4–§6.7 and §21.1 in one document (and its subagent). */
static const char edge_doc[] =
    "{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"s-edge\",\"agent\":{\"name\":\"a\",\"version\":\"1\","
    "\"model_name\":\"m1\",\"extra\":{\"k\":[1,2.5,null]},\"tool_definitions\":[{\"name\":\"f\"}]},"
    "\"notes\":\"n\",\"extra\":{\"top\":true},"
    "\"steps\":["
    "{\"step_id\":1,\"timestamp\":\"2025-01-01T00:00:00Z\",\"source\":\"system\",\"message\":\"\"},"
    "{\"step_id\":3,\"timestamp\":\"2025-01-01T00:00:01.250Z\",\"source\":\"user\",\"message\":\"hi \\u00e9 \\\"q\\\"\\n\","
    "\"extra\":{\"e\":1}},"
    "{\"step_id\":2,\"timestamp\":\"2025-01-01 00:00:02+01:00\",\"source\":\"agent\",\"model_name\":\"m2\","
    "\"reasoning_effort\":\"high\",\"message\":[{\"type\":\"text\",\"text\":\"part\"},{\"type\":\"text\",\"text\":\"x\",\"extra\":1}],"
    "\"reasoning_content\":\"think\",\"llm_call_count\":1,\"is_copied_context\":true,"
    "\"tool_calls\":[{\"tool_call_id\":\"c1\",\"function_name\":\"f\",\"arguments\":{\"a\":[1,{\"b\":null}]}},"
    "{\"tool_call_id\":\"c2\",\"function_name\":\"g\",\"arguments\":{},\"extra\":{\"x\":\"y\"}}],"
    "\"observation\":{\"results\":[{\"source_call_id\":\"c2\",\"content\":\"r2\"},{\"content\":\"sys\"},"
    "{\"source_call_id\":\"c1\",\"content\":[{\"type\":\"text\",\"text\":\"t\"}]},{\"source_call_id\":\"c1\"}]},"
    "\"metrics\":{\"prompt_tokens\":10,\"completion_tokens\":3,\"cached_tokens\":0,\"cost_usd\":0.0015,"
    "\"prompt_token_ids\":[1,2,4294967295],\"completion_token_ids\":[7,8,9],\"logprobs\":[-0.5,-0.25,-0.1234567891234],"
    "\"extra\":{\"reward\":1}}},"
    "{\"step_id\":4,\"source\":\"agent\",\"message\":\"m\",\"llm_call_count\":3,\"is_copied_context\":false,"
    "\"metrics\":{\"cost_usd\":0,\"logprobs\":[0,-1.5],\"completion_token_ids\":[1]},\"tool_calls\":[]},"
    "{\"step_id\":5,\"source\":\"agent\",\"message\":\"n\",\"metrics\":{\"prompt_tokens\":5,\"logprobs\":[-0.5,0.25],"
    "\"completion_token_ids\":[1,2]},\"observation\":{\"results\":[]}},"
    "{\"step_id\":6,\"source\":\"agent\",\"message\":\"dispatch\",\"llm_call_count\":0,\"is_copied_context\":null}"
    "],"
    "\"final_metrics\":{\"total_steps\":5,\"extra\":{\"reward\":0.5}},"
    "\"subagent_trajectories\":[{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"s-edge\",\"trajectory_id\":\"sub-1\","
    "\"agent\":{\"name\":\"sub\",\"version\":\"2\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"go\"}]}]}";

static const char sub_doc[] =
    "{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"s-edge\",\"trajectory_id\":\"sub-1\","
    "\"agent\":{\"name\":\"sub\",\"version\":\"2\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"go\"}]}";

static void test_projection__edge_document_roundtrip(void)
{
    static const uint64_t hot[] = { 8192, 4, 0 };
    static const uint64_t cold[] = { 262144, 8, 0 };
    for (int k = 0; k < 3; k++) {
        pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
        pch_error err;
        char *root = tmp_path("edge");
        o.hot_max_bytes = hot[k];
        o.cold_max_bytes = cold[k];
        o.directory_shard_rows = k == 1 ? 1 : 4096;   /* root and subagent in two shards */
        rmrf(root);
        PCH_CHECK_OK(build_one(root, edge_doc, &o, &err), &err);
        PCH_CHECK(get_equals(root, "s-edge", edge_doc, PCH_VXP_FULL));
        PCH_CHECK(get_equals(root, "sub-1@doc.json", sub_doc, PCH_VXP_FULL));
        PCH_CHECK(healthy(root));
    }
}

/* Metrics objects in every form the builder's one-pass member scan meets (RFC-0006 §6.5):
** whitespace everywhere, an escaped key (the parser's path), empty arrays, arrays that are
** not token arrays (a negative id, an id past 2^32, an integer logprob, a string), an
** `extra` with a reward, 17-digit logprobs; each document comes back JSON-equal. */
static void test_projection__metrics_forms_roundtrip(void)
{
    static const char *const metrics[] = {
        "{ \"prompt_tokens\" : 3 ,\n \"prompt_token_ids\" : [ 1 , 2 ,\t3 ] , \"completion_token_ids\":[ ] ,"
        " \"logprobs\" : [ ] , \"extra\" : {\"reward\": 1.5} }",
        "{\"prompt_token_ids\":[1,-2,3],\"completion_token_ids\":[4,4294967296],\"logprobs\":[-1,0.5]}",
        "{\"prompt\\u005ftoken_ids\":[7,8,9],\"completion_token_ids\":[1],\"logprobs\":[-0.014610209502279758]}",
        "{\"logprobs\":[-0.1,-0.3033546805381775,1.5e-3,-0.0],\"extra\":{\"a\":{\"reward\":2}},\"cost_usd\":1e-3,"
        "\"prompt_token_ids\":[4294967295,0],\"completion_token_ids\":[-0]}",
        "{\"completion_token_ids\":[1,2],\"logprobs\":[-0.5],\"cached_tokens\":0}",
        /* counts typed only when their text is canonical int64: the rest keep their text */
        "{\"prompt_tokens\":-0,\"completion_tokens\":9223372036854775807,\"cached_tokens\":-9223372036854775808}",
        "{\"prompt_tokens\":-1,\"completion_tokens\":0,\"cached_tokens\":-0}",
        "{}",
    };
    char doc[1024];
    for (size_t k = 0; k < sizeof metrics / sizeof *metrics; k++) {
        pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
        pch_error err;
        char *root = tmp_path("metrics");
        char key[32];
        snprintf(key, sizeof key, "m-%zu", k);
        snprintf(doc, sizeof doc,
                 "{\"schema_version\":\"ATIF-v1.4\",\"session_id\":\"%s\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},"
                 "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"},"
                 "{\"step_id\":2,\"source\":\"agent\",\"message\":\"ok\",\"metrics\":%s}]}", key, metrics[k]);
        for (int tokens = 0; tokens < 2; tokens++) {   /* arrays typed by the parser, or read here */
            rmrf(root);
            PCH_CHECK_OK(build_one_with(root, doc, &o, tokens, &err), &err);
            PCH_CHECK_MSG(get_equals(root, key, doc, PCH_VXP_FULL), "metrics form %zu, tokens %d", k, tokens);
            PCH_CHECK(healthy(root));
        }
    }
}

/* The repo's ATIF test data through the directory importer, at default and tiny tiers. */
typedef struct dir_build { pch_vxp_builder *b; pch_error err; } dir_build;
static int on_doc(pch_atif_doc *d, void *payload)
{
    dir_build *x = payload;
    return pch_vxp_builder_add_doc(x->b, d, 0, &x->err) < 0 ? -1 : 0;
}

static int build_dir_with(const char *root, const char *dir, pch_vxp_build_options *o, const pch_atif_options *ao,
                          pch_error *err)
{
    dir_build x;
    pch_atif_dir_stats st;
    int rc;
    memset(&x, 0, sizeof x);
    o->assets_root = dir;
    rc = pch_vxp_builder_open(&x.b, g_ctx, root, o, err);
    if (rc == 0) rc = pch_atif_dir_import(g_ctx, dir, ao, on_doc, NULL, NULL, &x, &st, err);
    if (rc < 0 && x.err.msg[0]) *err = x.err;
    if (rc == 0) rc = pch_vxp_builder_commit(x.b, NULL, err);
    pch_vxp_builder_free(x.b);
    return rc;
}

static int build_dir(const char *root, const char *dir, pch_vxp_build_options *o, pch_error *err)
{
    return build_dir_with(root, dir, o, NULL, err);
}

static void test_projection__testdata_roundtrip_tiers(void)
{
    static const uint64_t hot[] = { 8192, 32, 1 };
    static const uint64_t cold[] = { 262144, 256, 1 };
    static const uint64_t cluster[] = { 4u << 20, 2048, 1 };
    for (int k = 0; k < 3; k++) {
        pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
        pch_vxp_snapshot *s = NULL;
        pch_error err;
        char *root = tmp_path("td");
        size_t roots = 0;
        o.hot_max_bytes = hot[k];
        o.cold_max_bytes = cold[k];
        o.cluster_bytes = cluster[k];
        o.file_bytes = k == 2 ? 4096 : o.file_bytes;   /* one file per cluster */
        o.directory_shard_rows = k == 2 ? 2 : 4096;      /* many shards: fences and lazy loads */
        rmrf(root);
        PCH_CHECK_OK(build_dir(root, "tests/data/atif", &o, &err), &err);
        PCH_CHECK_OK(pch_vxp_snapshot_open(&s, g_ctx, root, &err), &err);
        for (uint64_t i = 0; i < pch_vxp_snapshot_trajectories(s); i++) {
            const char *doc;
            bool is_root;
            char *out = NULL, path[512];
            size_t len = 0, wl = 0;
            char *want;
            PCH_CHECK_OK(pch_vxp_entry(s, i, NULL, NULL, NULL, &doc, &is_root, &err), &err);
            if (!is_root) continue;
            roots++;
            snprintf(path, sizeof path, "tests/data/atif/%s", doc);
            want = slurp(path, &wl);
            if (pch_vxp_get(s, i, PCH_VXP_FULL, true, &out, &len, &err) != 0 || !want || !same_value(out, len, want, wl)) {
                free(want);
                pch_free(g_ctx, out);
                pch_vxp_snapshot_free(s);
                PCH_CHECK_MSG(0, "%s differs at tier set %d: %s", doc, k, err.msg);
            }
            free(want);
            pch_free(g_ctx, out);
        }
        pch_vxp_snapshot_free(s);
        PCH_CHECK_EQ_INT(roots, 10);
        PCH_CHECK(healthy(root));
    }
}

/* Lane-encoding threads, the flusher thread, the import's parsing threads and token arrays
** typed by the parser (pch_atif_options.tokens) never change a byte of a data file. */
static void test_projection__threads_byte_identical(void)
{
    char cmd[1400];
    for (uint32_t t = 1; t <= 3; t += 2) {
        pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
        pch_atif_options ao = PCH_ATIF_OPTIONS_INIT;
        pch_error err;
        char name[16];
        snprintf(name, sizeof name, "thr%u", t);
        o.threads = t;
        o.cluster_bytes = 8192;   /* several clusters in flight */
        ao.threads = t;
        ao.tokens = t > 1;        /* arrays typed by the parser, or read by the builder */
        rmrf(tmp_path(name));
        PCH_CHECK_OK(build_dir_with(tmp_path(name), "tests/data/atif", &o, &ao, &err), &err);
    }
    snprintf(cmd, sizeof cmd, "cmp -s \"$(ls '%s'/data/default/*.vortex)\" \"$(ls '%s'/data/default/*.vortex)\"",
             tmp_path("thr1"), tmp_path("thr3"));
    PCH_CHECK(system(cmd) == 0);
}

/* A session id shared by several documents gives every candidate (§13.4). */
static void test_projection__shared_session_candidates(void)
{
    pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_vxp_snapshot *s = NULL;
    pch_error err;
    char *root = tmp_path("shared"), *in = tmp_path("shared_in");
    uint64_t idx[8];
    size_t n = 0;
    char cmd[1200];
    o.directory_shard_rows = 1;   /* the three candidates live in three shards */
    rmrf(root);
    rmrf(in);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && for i in 1 2 3; do printf '%%s' '{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"same\","
             "\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"m\"}]}' > '%s'/d$i.json; done",
             in, in);
    PCH_CHECK(system(cmd) == 0);
    PCH_CHECK_OK(build_dir(root, in, &o, &err), &err);
    PCH_CHECK_OK(pch_vxp_snapshot_open(&s, g_ctx, root, &err), &err);
    PCH_CHECK_OK(pch_vxp_lookup(s, "same", idx, 8, &n, &err), &err);
    PCH_CHECK_EQ_INT(n, 3);
    PCH_CHECK(pch_vxp_lookup(s, "nope", idx, 8, &n, &err) == PCH_ENOTFOUND && n == 0);
    pch_vxp_snapshot_free(s);
}

/* Preview never reads blob packs and says so explicitly (§13.6). */
static void test_projection__preview_marks_external(void)
{
    pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_vxp_snapshot *s = NULL;
    pch_error err;
    char *root = tmp_path("preview");
    uint64_t idx[2];
    size_t n = 0, len = 0;
    char *out = NULL;
    o.hot_max_bytes = 4;
    o.cold_max_bytes = 8;
    rmrf(root);
    PCH_CHECK_OK(build_one(root, edge_doc, &o, &err), &err);
    PCH_CHECK_OK(pch_vxp_snapshot_open(&s, g_ctx, root, &err), &err);
    PCH_CHECK_OK(pch_vxp_lookup(s, "s-edge", idx, 2, &n, &err), &err);
    PCH_CHECK_OK(pch_vxp_get(s, idx[0], PCH_VXP_PREVIEW, false, &out, &len, &err), &err);
    PCH_CHECK(strstr(out, "\"pchronicle_preview\":\"external\"") != NULL);
    PCH_CHECK(strstr(out, "\"pchronicle_preview\":\"cold\"") == NULL || 1);
    {
        pch_vxp_query_stats q;
        pch_vxp_snapshot_stats(s, &q);
        PCH_CHECK_EQ_INT(q.blobs_hydrated, 0);
    }
    pch_free(g_ctx, out);
    pch_vxp_snapshot_free(s);
}

/* --dedup-min: a value seen twice before goes to a blob pack, stored once, and still reads
** back; a value seen only twice stays inline (external would cost a second copy). */
static void test_projection__dedup_repeats(void)
{
    pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_vxp_build_stats st;
    pch_atif_doc *d = NULL;
    pch_vxp_builder *b = NULL;
    pch_error err;
    char *root = tmp_path("dedup");
    char big[2100], two[2100], *doc;
    size_t dl;
    PCH_CHECK(o.dedup_min_bytes == PCH_VXP_DEDUP_DEFAULT);   /* 256 on a local root */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    memset(two, 'y', sizeof two - 1);
    two[sizeof two - 1] = 0;
    dl = 6 * sizeof big + 900;
    doc = malloc(dl);
    snprintf(doc, dl, "{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"dd\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},"
             "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"%s\"},{\"step_id\":2,\"source\":\"user\",\"message\":\"%s\"},"
             "{\"step_id\":3,\"source\":\"user\",\"message\":\"%s\"},{\"step_id\":4,\"source\":\"user\",\"message\":\"%s\"},"
             "{\"step_id\":5,\"source\":\"user\",\"message\":\"%s\"},{\"step_id\":6,\"source\":\"user\",\"message\":\"%s\"}]}",
             big, two, big, two, big, big);
    o.dedup_min_bytes = 1024;
    rmrf(root);
    PCH_CHECK_OK(pch_atif_doc_parse(&d, g_ctx, doc, strlen(doc), "doc.json", NULL, NULL, NULL, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_open(&b, g_ctx, root, &o, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_add_doc(b, d, 0, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_commit(b, &st, &err), &err);
    PCH_CHECK_EQ_INT(st.blobs, 1);        /* big's third occurrence stored it, the fourth reused it */
    PCH_CHECK_EQ_INT(st.dedup_hits, 1);
    PCH_CHECK_EQ_INT(st.hot_bytes, 4 * (sizeof big - 1));   /* big twice, two twice: inline */
    PCH_CHECK(get_equals(root, "dd", doc, PCH_VXP_FULL));
    PCH_CHECK(healthy(root));
    pch_vxp_builder_free(b);
    pch_atif_doc_free(d);
    free(doc);
}

/* Two writers from the same CURRENT: the second commit is stale and publishes nothing
** (§10.2, §11.4); an abandoned builder leaves CURRENT and the manifests untouched. */
static void test_projection__stale_commit_and_abandon(void)
{
    pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_atif_doc *d = NULL;
    pch_vxp_builder *a = NULL, *b = NULL, *c = NULL;
    pch_error err;
    char *root = tmp_path("stale");
    size_t l1 = 0, l2 = 0, l3 = 0;
    char *cur1, *cur2, *cur3;
    char path[600];
    rmrf(root);
    PCH_CHECK_OK(build_one(root, edge_doc, &o, &err), &err);
    snprintf(path, sizeof path, "%s/CURRENT", root);
    cur1 = slurp(path, &l1);
    PCH_CHECK_OK(pch_atif_doc_parse(&d, g_ctx, edge_doc, strlen(edge_doc), "doc.json", NULL, NULL, NULL, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_open(&a, g_ctx, root, &o, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_open(&b, g_ctx, root, &o, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_add_doc(a, d, 0, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_add_doc(b, d, 0, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_commit(b, NULL, &err), &err);
    cur2 = slurp(path, &l2);
    PCH_CHECK(cur1 && cur2 && (l1 != l2 || memcmp(cur1, cur2, l1) != 0));
    PCH_CHECK_EQ_INT(pch_vxp_builder_commit(a, NULL, &err), PCH_EEXISTS);
    PCH_CHECK(strstr(err.msg, "stale commit") != NULL);
    cur3 = slurp(path, &l3);
    PCH_CHECK(cur3 && l3 == l2 && memcmp(cur2, cur3, l2) == 0);
    free(cur3);
    pch_vxp_builder_free(a);
    pch_vxp_builder_free(b);
    a = b = NULL;
    /* abandoned: staging removed, CURRENT unchanged */
    PCH_CHECK_OK(pch_vxp_builder_open(&c, g_ctx, root, &o, &err), &err);
    PCH_CHECK_OK(pch_vxp_builder_add_doc(c, d, 0, &err), &err);
    pch_vxp_builder_free(c);
    cur3 = slurp(path, &l3);
    PCH_CHECK(cur3 && l3 == l2 && memcmp(cur2, cur3, l2) == 0);
    snprintf(path, sizeof path, "test -z \"$(ls -A '%s/staging' | grep -vx -e .commit.lock -e .lock)\"", root);
    PCH_CHECK(system(path) == 0);
    PCH_CHECK(healthy(root));
    PCH_CHECK(get_equals(root, "s-edge", edge_doc, PCH_VXP_FULL));
    free(cur1); free(cur2); free(cur3);
    pch_vxp_builder_free(a);
    pch_vxp_builder_free(b);
    pch_atif_doc_free(d);
}

/* A trajectory above the cluster target is paged (§7.2): one row per page, read back whole by
** get (full and preview) and verify; a continuation row is never read as a trajectory, a page
** read checks index, count and key, and the page-sequence check finds missing, reordered and
** foreign pages. */
static const char paged_doc[] =
    "{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"s-paged\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},"
    "\"steps\":["
    "{\"step_id\":1,\"source\":\"user\",\"message\":\"first step with a message of some length to fill a page\"},"
    "{\"step_id\":2,\"source\":\"agent\",\"message\":\"second\",\"tool_calls\":[{\"tool_call_id\":\"c\",\"function_name\":\"f\",\"arguments\":{\"x\":1}}],"
    "\"observation\":{\"results\":[{\"source_call_id\":\"c\",\"content\":\"result of the call, long enough to matter\"}]}},"
    "{\"step_id\":3,\"source\":\"agent\",\"message\":\"third\",\"metrics\":{\"prompt_tokens\":3,\"completion_token_ids\":[1,2],\"logprobs\":[-0.5,-0.25]}},"
    "{\"step_id\":4,\"source\":\"agent\",\"message\":\"fourth step, again with a message of some length to fill a page\"},"
    "{\"step_id\":5,\"source\":\"user\",\"message\":\"fifth\"}],"
    "\"final_metrics\":{\"total_steps\":5}}";

static int rows_cb_pages(pch_buf *out, const char *t, size_t tn, uint32_t pages, bool *first, void *payload, pch_error *err)
{
    const pj_rows *r = payload;
    for (uint32_t k = 1; k < pages; k++)
        PCH_TRY(pj_model_write_page(out, r, k, t, tn, k, pages, first, NULL, PCH_VXP_PREVIEW, NULL, err));
    return PCH_OK;
}

static void test_projection__paged_trajectory(void)
{
    pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_error err;
    char *root = tmp_path("paged"), *data = tmp_path("paged/data/default"), path[700];
    pch_vx_file *f = NULL;
    pch_vx_array *a = NULL;
    pch_vx_dtype *dt = NULL;
    pj_rows r;
    pch_buf out;
    bool first = true, cont;
    pj_page_seq q;
    char msg[600];
    DIR *dir;
    struct dirent *de;
    o.cluster_bytes = 100;   /* a page (and often a cluster) per step or two: 4 pages */
    rmrf(root);
    PCH_CHECK_OK(build_one(root, paged_doc, &o, &err), &err);
    PCH_CHECK(get_equals(root, "s-paged", paged_doc, PCH_VXP_FULL));
    PCH_CHECK(get_equals(root, "s-paged", paged_doc, PCH_VXP_PREVIEW));
    PCH_CHECK(healthy(root));
    /* the rows themselves */
    path[0] = 0;
    PCH_CHECK((dir = opendir(data)) != NULL);
    while (dir && (de = readdir(dir)))
        if (strstr(de->d_name, ".vortex")) snprintf(path, sizeof path, "%s/%s", data, de->d_name);
    if (dir) closedir(dir);
    PCH_CHECK_OK(pch_vx_file_open(&f, g_ctx, path, &err), &err);
    PCH_CHECK_OK(pch_vx_file_scan(f, NULL, &a, &dt, &err), &err);
    PCH_CHECK_OK(pj_rows_bind(&r, a, &err), &err);
    PCH_CHECK_MSG(a->len >= 3, "%llu rows", (unsigned long long)a->len);
    pch_buf_init(&out, g_ctx);
    PCH_CHECK_OK(pj_model_write_json(&out, &r, 0, NULL, PCH_VXP_PREVIEW, NULL, NULL, rows_cb_pages, &r, &err), &err);
    PCH_CHECK(same_value((const char *)out.data, out.len, paged_doc, strlen(paged_doc)));
    pch_buf_clear(&out);
    PCH_CHECK(pj_model_write_json(&out, &r, 1, NULL, PCH_VXP_PREVIEW, NULL, NULL, rows_cb_pages, &r, &err) == PCH_ECORRUPT);
    PCH_CHECK(pj_model_write_json(&out, &r, 0, NULL, PCH_VXP_PREVIEW, NULL, NULL, NULL, NULL, &err) == PCH_EINVAL);
    PCH_CHECK(pj_model_write_page(&out, &r, 2, "s-paged", 7, 1, (uint32_t)a->len, &first, NULL, PCH_VXP_PREVIEW, NULL, &err) == PCH_ECORRUPT);
    PCH_CHECK(pj_model_write_page(&out, &r, 1, "other", 5, 1, (uint32_t)a->len, &first, NULL, PCH_VXP_PREVIEW, NULL, &err) == PCH_ECORRUPT);
    PCH_CHECK(pj_model_write_page(&out, &r, 1, "s-paged", 7, 1, (uint32_t)a->len + 1, &first, NULL, PCH_VXP_PREVIEW, NULL, &err) == PCH_ECORRUPT);
    pch_buf_dispose(&out);
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    pch_vx_file_free(f);
    /* the page sequence verify walks */
    memset(&q, 0, sizeof q);
    PCH_CHECK(pj_page_seq_next(&q, 0, 1, "a", 1, &cont, msg, sizeof msg) == 0 && !cont);
    PCH_CHECK(pj_page_seq_next(&q, 0, 3, "b", 1, &cont, msg, sizeof msg) == 0);
    PCH_CHECK(pj_page_seq_next(&q, 1, 3, "b", 1, &cont, msg, sizeof msg) == 0 && cont);
    PCH_CHECK(pj_page_seq_next(&q, 2, 3, "b", 1, &cont, msg, sizeof msg) == 0 && cont);
    PCH_CHECK(pj_page_seq_end(&q, msg, sizeof msg) == 0);
    PCH_CHECK(pj_page_seq_next(&q, 0, 3, "c", 1, &cont, msg, sizeof msg) == 0);
    PCH_CHECK(pj_page_seq_next(&q, 2, 3, "c", 1, &cont, msg, sizeof msg) == PCH_ECORRUPT);      /* page 1 missing */
    PCH_CHECK(pj_page_seq_next(&q, 0, 2, "d", 1, &cont, msg, sizeof msg) == 0);
    PCH_CHECK(pj_page_seq_next(&q, 1, 2, "e", 1, &cont, msg, sizeof msg) == PCH_ECORRUPT);      /* another key */
    PCH_CHECK(pj_page_seq_next(&q, 0, 2, "f", 1, &cont, msg, sizeof msg) == 0);
    PCH_CHECK(pj_page_seq_next(&q, 0, 1, "g", 1, &cont, msg, sizeof msg) == PCH_ECORRUPT);      /* f's page 1 */
    PCH_CHECK(strstr(msg, "pages 1..1 are missing") != NULL);
    PCH_CHECK(pj_page_seq_next(&q, 3, 3, "g", 1, &cont, msg, sizeof msg) == PCH_ECORRUPT);      /* index past count */
    PCH_CHECK(pj_page_seq_next(&q, 0, 2, "h", 1, &cont, msg, sizeof msg) == 0);
    PCH_CHECK(pj_page_seq_end(&q, msg, sizeof msg) == PCH_ECORRUPT);
}

/* The SFT batch API over a paged trajectory: one batch per page with examples, the
** conversation held once and growing (first_new), each example an index into it; the JSON
** lines of pch_vxp_sft_next are those batches with the prefix repeated. */
static void test_projection__sft_batches_share_the_prefix(void)
{
    static const char *const want_last[] = { "{\"role\":\"assistant\",\"content\":\"second\",\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\":1}\"}}]}",
                                             "{\"role\":\"assistant\",\"content\":\"third\"}",
                                             "{\"role\":\"assistant\",\"content\":\"fourth step, again with a message of some length to fill a page\"}" };
    pch_vxp_build_options o = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_error err;
    char *root = tmp_path("sft");
    pch_vxp_snapshot *s = NULL;
    pch_vxp_sft_reader *r = NULL, *lines = NULL;
    const pch_vxp_sft_batch *b;
    bool eof = false;
    size_t examples = 0, batches = 0, seen = 0;
    pch_buf want;
    o.cluster_bytes = 100;
    rmrf(root);
    PCH_CHECK_OK(build_one(root, paged_doc, &o, &err), &err);
    PCH_CHECK_OK(pch_vxp_snapshot_open(&s, g_ctx, root, &err), &err);
    PCH_CHECK_OK(pch_vxp_sft_open_as(&r, s, NULL, PCH_VXP_SFT_MESSAGES, &err), &err);
    PCH_CHECK_OK(pch_vxp_sft_open_as(&lines, s, NULL, PCH_VXP_SFT_MESSAGES, &err), &err);
    {
        pch_vxp_sft_reader *bad = NULL;
        PCH_CHECK(pch_vxp_sft_open_as(&bad, s, NULL, (pch_vxp_sft_format)7, &err) == PCH_EINVAL && !bad);
    }
    pch_buf_init(&want, g_ctx);
    while (r && lines) {
        const char *text;
        size_t len, n;
        bool eof2;
        PCH_CHECK_OK(pch_vxp_sft_next_batch(r, &b, &eof, &err), &err);
        PCH_CHECK_OK(pch_vxp_sft_next(lines, &text, &len, &n, &eof2, &err), &err);
        PCH_CHECK(eof == eof2);
        if (eof || eof2) break;
        batches++;
        PCH_CHECK(b->trajectory_key_len == 16 && memcmp(b->trajectory_key, "s-paged@doc.json", 16) == 0);
        PCH_CHECK(b->tools_len == 2 && memcmp(b->tools, "[]", 2) == 0);
        /* a page without examples adds messages but no batch */
        PCH_CHECK_MSG(b->first_new >= seen, "first_new %zu after %zu messages", b->first_new, seen);
        PCH_CHECK(b->n_messages > b->first_new && b->n_examples > 0);
        seen = b->n_messages;
        pch_buf_clear(&want);
        for (size_t k = 0; k < b->n_examples; k++) {
            const pch_vxp_sft_example *e = &b->examples[k];
            size_t m0 = e->message ? b->message_end[e->message - 1] + 1 : 0;
            PCH_CHECK(e->message >= b->first_new && e->message < b->n_messages);
            PCH_CHECK(e->has_step_id && e->step_id == (int64_t)e->step_ordinal + 1);
            if (examples < 3)
                PCH_CHECK_MSG(b->message_end[e->message] - m0 == strlen(want_last[examples]) &&
                              memcmp(b->messages + m0, want_last[examples], strlen(want_last[examples])) == 0,
                              "example %zu: %.*s", examples, (int)(b->message_end[e->message] - m0), b->messages + m0);
            pch_buf_append_str(&want, "{\"messages\":[");
            pch_buf_append(&want, b->messages, b->message_end[e->message]);
            pch_buf_append_str(&want, "],\"tools\":[]}\n");
            examples++;
        }
        PCH_CHECK(n == b->n_examples && len == want.len && memcmp(text, want.data, len) == 0);
    }
    PCH_CHECK_MSG(examples == 3 && batches >= 2, "%zu examples in %zu batches", examples, batches);
    /* user, assistant + its tool result, assistant, assistant (and the closing user step when
    ** it shares the last example's page): every message once */
    PCH_CHECK_MSG(seen == 5 || seen == 6, "%zu messages", seen);
    pch_buf_dispose(&want);
    pch_vxp_sft_free(lines);
    pch_vxp_sft_free(r);
    pch_vxp_snapshot_free(s);
}

/* Prompt-prefix lanes (§8.2) built by hand: the form rebuilds, and every hostile value is
** refused by pj_prompt_ids and reported by pj_model_check (verify). -1 = null. */
typedef struct pstep {
    int plain_n;                  /* -1: no plain list */
    uint32_t plain[4];
    int base, prefix, suf_n, len;
    uint32_t suf[4];
} pstep;

static pch_vx_dtype *g_lane_dt[6];      /* the arrays borrow their dtypes */

static void free_lanes(pch_vx_array *a[6])
{
    for (int i = 0; i < 6; i++) {
        pch_vx_array_free(a[i]);
        pch_vx_dtype_free(g_lane_dt[i]);
        a[i] = NULL;
        g_lane_dt[i] = NULL;
    }
}

static bool make_prompt_lanes(pj_rows *r, pch_vx_array *a[6], const pstep *st, size_t n)
{
    static const char *const types[6] = { "list<list<u32>?>", "list<u32?>", "list<u32?>", "list<list<u32>?>", "list<u32?>", "list<i64?>" };
    static const int lanes[6] = { PJ_TOKENS_PROMPT_IDS, PJ_TOKENS_PROMPT_BASE, PJ_TOKENS_PROMPT_PREFIX, PJ_TOKENS_PROMPT_SUFFIX,
                                  PJ_TOKENS_PROMPT_LEN, PJ_STEPS_STEP_ID };
    pch_error err;
    bool good = true;
    memset(r, 0, sizeof *r);
    for (int l = 0; l < 6; l++) {
        pch_vx_dtype *dt = NULL;
        pch_vx_builder *b = NULL;
        a[l] = NULL;
        if (pch_vx_dtype_parse(&dt, g_ctx, types[l], &err) != 0 || pch_vx_builder_new(&b, g_ctx, dt, &err) != 0) good = false;
        for (size_t i = 0; good && i < n; i++) {
            pch_vx_builder *c = pch_vx_builder_child(b, 0);
            int v = l == 1 ? st[i].base : l == 2 ? st[i].prefix : l == 4 ? st[i].len : l == 5 ? (int)i : -2;
            if (l == 0 || l == 3) {
                int k = l == 0 ? st[i].plain_n : st[i].suf_n;
                if (k < 0) good = pch_vx_builder_append_null(c, &err) == 0;
                else good = pch_vx_builder_append_u32s(pch_vx_builder_child(c, 0), l == 0 ? st[i].plain : st[i].suf, (size_t)k, &err) == 0 &&
                            pch_vx_builder_append_valid(c, &err) == 0;
            } else {
                good = (v < 0 ? pch_vx_builder_append_null(c, &err) : pch_vx_builder_append_uint(c, (uint64_t)v, &err)) == 0;
            }
        }
        if (good) good = pch_vx_builder_append_valid(b, &err) == 0 && pch_vx_builder_finish(b, &a[l], &err) == 0;
        pch_vx_builder_free(b);
        g_lane_dt[l] = dt;
        r->l[lanes[l]] = a[l];
    }
    return good;
}

static void no_finding_cb(const char *file, const char *msg, void *payload) { (void)file; (void)msg; (*(size_t *)payload)++; }

/* Rebuild every step of the row in order; PCH_OK or the first error. */
static int rebuild_row(const pj_rows *r, size_t n, pch_buf *scratch, pj_prompt *cache)
{
    pch_error err;
    memset(cache, 0, n * sizeof *cache);
    for (size_t s = 0; s < n; s++) {
        int rc = pj_prompt_ids(r, 0, s, scratch, cache, &err);
        if (rc < 0) {
            if (getenv("PCH_TEST_VERBOSE")) fprintf(stderr, "step %zu: %s\n", s, err.msg);
            return rc;
        }
    }
    return PCH_OK;
}

static void test_projection__prompt_prefix_lanes(void)
{
    /* s0 checkpoint [1,2,3]; s1 = s0 + [4]; s2 = first 2 of s1 + [9]; s3 none; s4 checkpoint [] */
    const pstep good[5] = { { 3, { 1, 2, 3 }, -1, -1, -1, 3, { 0 } }, { -1, { 0 }, 0, 3, 1, 4, { 4 } },
                            { -1, { 0 }, 1, 2, 1, 3, { 9 } }, { -1, { 0 }, -1, -1, -1, -1, { 0 } },
                            { 0, { 0 }, -1, -1, -1, 0, { 0 } } };
    pstep bad[5], chain[40];
    pj_rows r;
    pch_vx_array *a[6] = { NULL };
    pj_prompt cache[40];
    pch_buf scratch;
    size_t findings = 0;
    pch_buf_init(&scratch, g_ctx);
    PCH_CHECK(make_prompt_lanes(&r, a, good, 5));
    PCH_CHECK(rebuild_row(&r, 5, &scratch, cache) == PCH_OK);
    PCH_CHECK(cache[2].has && cache[2].rebuilt && cache[2].n == 3);
    if (cache[2].rebuilt && cache[2].n == 3) {
        const uint8_t *p = scratch.data + cache[2].off;
        PCH_CHECK(pch_load_le32(p) == 1 && pch_load_le32(p + 4) == 2 && pch_load_le32(p + 8) == 9);
    }
    PCH_CHECK(cache[1].n == 4 && !cache[3].has && cache[4].has && cache[4].n == 0 && !cache[0].rebuilt);
    PCH_CHECK(pj_model_check(&r, "t", no_finding_cb, &findings) == 0 && findings == 0);
    free_lanes(a);
    /* each hostile variant of the good row */
    for (int v = 0; v < 8; v++) {
        pch_error err;
        memcpy(bad, good, sizeof bad);
        switch (v) {
        case 0: bad[1].base = 1; break;                              /* its own base */
        case 1: bad[1].prefix = 4; bad[1].len = 5; break;           /* longer than the base */
        case 2: bad[1].len = 5; break;                               /* count disagrees */
        case 3: bad[0].base = 0; break;                              /* both forms */
        case 4: bad[0].len = 2; break;                               /* plain count disagrees */
        case 5: bad[1].prefix = -1; break;                           /* incomplete */
        case 6: bad[4].plain_n = -1; bad[4].base = 3; bad[4].prefix = 0; bad[4].suf_n = 0; break;   /* a base without ids */
        default: bad[3].len = 2; break;                              /* a count without ids */
        }
        PCH_CHECK(make_prompt_lanes(&r, a, bad, 5));
        findings = 0;
        PCH_CHECK_MSG(rebuild_row(&r, 5, &scratch, cache) == PCH_ECORRUPT, "variant %d accepted", v);
        PCH_CHECK_MSG(pj_model_check(&r, "t", no_finding_cb, &findings) > 0 && findings > 0, "variant %d not reported", v);
        (void)err;
        free_lanes(a);
    }
    /* a chain of bases longer than PJ_PROMPT_CHAIN_MAX */
    memset(chain, 0, sizeof chain);
    chain[0] = good[0];
    for (int i = 1; i < 40; i++) { chain[i] = good[1]; chain[i].base = i - 1; chain[i].prefix = 3; chain[i].suf_n = 0; chain[i].len = 3; chain[i].plain_n = -1; }
    PCH_CHECK(make_prompt_lanes(&r, a, chain, 40));
    PCH_CHECK(rebuild_row(&r, 40, &scratch, cache) == PCH_OK);     /* in order: each link once */
    memset(cache, 0, sizeof cache);
    {
        pch_error err;
        PCH_CHECK(pj_prompt_ids(&r, 0, 39, &scratch, cache, &err) == PCH_ECORRUPT);   /* cold: 39 links */
        memset(cache, 0, sizeof cache);
        PCH_CHECK_OK(pj_prompt_ids(&r, 0, 32, &scratch, cache, &err), &err);          /* 32 links */
    }
    free_lanes(a);
    pch_buf_dispose(&scratch);
}

static void test_projection__hostile_paths_and_pointers(void)
{
    static const char *const bad_paths[] = { "../x.vortex", "/etc/passwd", "data/../../x", "data//x", "data/./x",
                                             "data\\x", "elsewhere/x.vortex", "", "manifests/", "blobs/a/../../b" };
    static const char *const good_paths[] = { "data/default/a.vortex", "blobs/0123.vortex", "manifests/x.json" };
    pj_current cur;
    pch_error err;
    for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++)
        PCH_CHECK_MSG(pj_path_check(bad_paths[i], strlen(bad_paths[i]), &err) == PCH_ECORRUPT, "%s", bad_paths[i]);
    for (size_t i = 0; i < sizeof good_paths / sizeof good_paths[0]; i++)
        PCH_CHECK_OK(pj_path_check(good_paths[i], strlen(good_paths[i]), &err), &err);
    {
        static const char ok[] = "{\"format\":\"pchronicle-vortex-current/v1\",\"snapshot_id\":\"0123456789ab-cdef0123\","
            "\"manifest\":\"manifests/0123456789ab-cdef0123.json\",\"manifest_digest\":\"blake3:"
            "0000000000000000000000000000000000000000000000000000000000000000\"}";
        PCH_CHECK_OK(pj_current_parse(g_ctx, ok, strlen(ok), &cur, &err), &err);
    }
    {
        static const char *const bad[] = {
            "{\"format\":\"pchronicle-vortex-current/v2\",\"snapshot_id\":\"0123456789ab-cdef0123\",\"manifest\":\"manifests/0123456789ab-cdef0123.json\",\"manifest_digest\":\"blake3:0000000000000000000000000000000000000000000000000000000000000000\"}",
            "{\"format\":\"pchronicle-vortex-current/v1\",\"snapshot_id\":\"../../etc\",\"manifest\":\"manifests/x.json\",\"manifest_digest\":\"blake3:0000000000000000000000000000000000000000000000000000000000000000\"}",
            "{\"format\":\"pchronicle-vortex-current/v1\",\"snapshot_id\":\"0123456789ab-cdef0123\",\"manifest\":\"manifests/other.json\",\"manifest_digest\":\"blake3:0000000000000000000000000000000000000000000000000000000000000000\"}",
            "{\"format\":\"pchronicle-vortex-current/v1\",\"snapshot_id\":\"0123456789ab-cdef0123\",\"manifest\":\"manifests/0123456789ab-cdef0123.json\",\"manifest_digest\":\"sha256:00\"}",
            "[]", "", "{\"format\":1}" };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            PCH_CHECK_MSG(pj_current_parse(g_ctx, bad[i], strlen(bad[i]), &cur, &err) < 0, "accepted %s", bad[i]);
    }
    {
        /* a manifest naming a file outside the root, and one needing custom registry ids */
        static const char *const bad[] = {
            "{\"format\":\"pchronicle-vortex-manifest/v1\",\"snapshot_id\":\"0123456789ab-cdef0123\",\"vortex\":{\"file_format_version\":1,\"custom_registry_ids\":[]},"
            "\"data_files\":[{\"path\":\"data/../../x.vortex\",\"file_id\":\"0123456789abcdef0123456789abcdef\",\"bytes\":1,\"rows\":1,\"digest\":\"blake3:0000000000000000000000000000000000000000000000000000000000000000\"}],"
            "\"trajectory_directory\":[],\"content_directory\":[],\"blob_packs\":[]}",
            "{\"format\":\"pchronicle-vortex-manifest/v1\",\"snapshot_id\":\"0123456789ab-cdef0123\",\"vortex\":{\"file_format_version\":1,\"custom_registry_ids\":[\"dev.x\"]},"
            "\"data_files\":[],\"trajectory_directory\":[],\"content_directory\":[],\"blob_packs\":[]}",
            "{\"format\":\"pchronicle-vortex-manifest/v9\"}" };
        PCH_CHECK_OK(pj_current_parse(g_ctx, "{\"format\":\"pchronicle-vortex-current/v1\",\"snapshot_id\":\"0123456789ab-cdef0123\","
            "\"manifest\":\"manifests/0123456789ab-cdef0123.json\",\"manifest_digest\":\"blake3:"
            "0000000000000000000000000000000000000000000000000000000000000000\"}",
            strlen("{\"format\":\"pchronicle-vortex-current/v1\",\"snapshot_id\":\"0123456789ab-cdef0123\","
            "\"manifest\":\"manifests/0123456789ab-cdef0123.json\",\"manifest_digest\":\"blake3:"
            "0000000000000000000000000000000000000000000000000000000000000000\"}"), &cur, &err), &err);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            pch_json_parser *p = NULL;
            const pch_json_value *m = NULL;
            int rc = pj_manifest_parse(g_ctx, &cur, bad[i], strlen(bad[i]), &p, &m, &err);
            pch_json_parser_free(p);
            PCH_CHECK_MSG(rc < 0, "accepted manifest %zu", i);
        }
    }
}

/* pj_file_digest_parts: the whole file's digest and each part's in one read — parts that are
** empty, that start at 0 or after the first byte, that cross the 1 MiB read buffer, and
** cuts that fall or rise wrongly (refused). Each part against a digest of its bytes alone. */
static void test_projection__file_digest_parts(void)
{
    const size_t n = (3u << 20) + 12345;
    uint8_t *data = malloc(n);
    char *path = tmp_path("parts.bin"), whole[80], want[80], got[5][80];
    pch_error err;
    uint64_t bytes = 0;
    FILE *f;
    PCH_CHECK(data != NULL);
    if (!data) return;
    for (size_t i = 0; i < n; i++) data[i] = (uint8_t)(i * 2654435761u >> 13);
    f = fopen(path, "wb");
    PCH_CHECK(f && fwrite(data, 1, n, f) == n);
    if (f) fclose(f);
    {
        const uint64_t cuts[][5] = {
            { 4, 4, (1u << 20) - 1, (1u << 20) + 7, (uint64_t)n },   /* an empty part, one across the buffer, an empty last */
            { 0, 100, 2u << 20, (2u << 20) + 1, (uint64_t)n - 1 },
        };
        for (size_t c = 0; c < 2; c++) {
            PCH_CHECK_OK(pj_file_digest_parts(path, whole, &bytes, cuts[c], 5, got, &err), &err);
            PCH_CHECK(bytes == n);
            pj_bytes_digest(want, data, n);
            PCH_CHECK_MSG(strcmp(whole, want) == 0, "whole: %s, want %s", whole, want);
            for (size_t k = 0; k < 5; k++) {
                uint64_t e = k + 1 < 5 ? cuts[c][k + 1] : n;
                pj_bytes_digest(want, data + cuts[c][k], (size_t)(e - cuts[c][k]));
                PCH_CHECK_MSG(strcmp(got[k], want) == 0, "cuts %zu part %zu: %s, want %s", c, k, got[k], want);
            }
        }
    }
    {
        const uint64_t falling[] = { 10, 5 }, past[] = { 10, (uint64_t)n + 1 };
        PCH_CHECK(pj_file_digest_parts(path, whole, NULL, falling, 2, got, &err) == PCH_EINVAL);
        PCH_CHECK(pj_file_digest_parts(path, whole, NULL, past, 2, got, &err) == PCH_EINVAL);
    }
    free(data);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "vortex_projection_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) != 0) return 1;
    snprintf(g_tmp, sizeof g_tmp, "%s/pch-vxp-test-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    mkdir(g_tmp, 0755);
    PCH_RUN(test_projection__edge_document_roundtrip);
    PCH_RUN(test_projection__metrics_forms_roundtrip);
    PCH_RUN(test_projection__testdata_roundtrip_tiers);
    PCH_RUN(test_projection__threads_byte_identical);
    PCH_RUN(test_projection__shared_session_candidates);
    PCH_RUN(test_projection__preview_marks_external);
    PCH_RUN(test_projection__dedup_repeats);
    PCH_RUN(test_projection__stale_commit_and_abandon);
    PCH_RUN(test_projection__hostile_paths_and_pointers);
    PCH_RUN(test_projection__paged_trajectory);
    PCH_RUN(test_projection__sft_batches_share_the_prefix);
    PCH_RUN(test_projection__prompt_prefix_lanes);
    PCH_RUN(test_projection__file_digest_parts);
    rmrf(g_tmp);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
