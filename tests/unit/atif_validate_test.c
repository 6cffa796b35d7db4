/* ATIF validator: one negative test per rule of specs/atif.md §2–§3, the default/strict
** split for documented producer deviations, JSON pointers and the message format. */
#include "harness.h"
#include "pchronicle/atif.h"

#define MAXF 32
typedef struct found {
    int n;
    int sev[MAXF];
    char code[MAXF][40];
    char ptr[MAXF][160];
    char msg[MAXF][200];
} found;

static int collect(const pch_atif_finding *f, void *payload)
{
    found *fd = payload;
    if (fd->n < MAXF) {
        fd->sev[fd->n] = f->severity;
        snprintf(fd->code[fd->n], sizeof fd->code[0], "%s", f->code);
        snprintf(fd->ptr[fd->n], sizeof fd->ptr[0], "%s", f->pointer);
        snprintf(fd->msg[fd->n], sizeof fd->msg[0], "%s", f->message);
    }
    fd->n++;
    return 0;
}

static pch_ctx *g_ctx;

/* Validate text; returns number of errors; fills fd. */
static size_t check(const char *text, bool strict, found *fd, size_t *warns)
{
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    size_t ne = 0, nw = 0;
    pch_error e;
    o.strict = strict;
    memset(fd, 0, sizeof *fd);
    if (pch_atif_validate(g_ctx, text, strlen(text), "run.json", &o, collect, fd, &ne, &nw, &e) != 0)
        return (size_t)-1;
    if (warns) *warns = nw;
    return ne;
}

static bool has(const found *fd, const char *code, const char *ptr, int sev)
{
    for (int i = 0; i < fd->n && i < MAXF; i++)
        if (strcmp(fd->code[i], code) == 0 && (!ptr || strcmp(fd->ptr[i], ptr) == 0) &&
            fd->sev[i] == sev)
            return true;
    return false;
}

static void dump(const found *fd)
{
    for (int i = 0; i < fd->n && i < MAXF; i++)
        fprintf(stderr, "    [%s] %s %s: %s\n", fd->sev[i] ? "warn" : "err", fd->code[i],
                fd->ptr[i], fd->msg[i]);
}

#define HEAD "{\"schema_version\":\"ATIF-v1.7\",\"session_id\":\"s\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},"
#define OK_STEP "{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}"

/* Expect exactly-one-rule failure: errors > 0 and a finding code at ptr. */
#define EXPECT_ERR(doc, code, ptr) do { found fd_; size_t n_ = check(doc, false, &fd_, NULL); \
    if (!(n_ > 0 && n_ != (size_t)-1 && has(&fd_, code, ptr, PCH_ATIF_ERROR))) { dump(&fd_); } \
    PCH_CHECK_MSG(n_ > 0 && n_ != (size_t)-1 && has(&fd_, code, ptr, PCH_ATIF_ERROR), "%s at %s", code, ptr); } while (0)
/* Deviation: warning by default, error when strict. */
#define EXPECT_DEV(doc, code, ptr) do { found fd_; size_t w_ = 0; size_t n_ = check(doc, false, &fd_, &w_); \
    if (n_ != 0 || !has(&fd_, code, ptr, PCH_ATIF_WARNING)) dump(&fd_); \
    PCH_CHECK_MSG(n_ == 0 && has(&fd_, code, ptr, PCH_ATIF_WARNING), "default %s", code); \
    n_ = check(doc, true, &fd_, NULL); \
    PCH_CHECK_MSG(n_ > 0 && has(&fd_, code, ptr, PCH_ATIF_ERROR), "strict %s", code); } while (0)

static void test_atif__valid_minimal(void)
{
    found fd;
    PCH_CHECK_EQ_INT(check(HEAD "\"steps\":[" OK_STEP "]}", true, &fd, NULL), 0);
    PCH_CHECK_EQ_INT(fd.n, 0);
}

static void test_atif__json_syntax(void)
{
    EXPECT_ERR("{\"a\":1,}", "json", "");
}

static void test_atif__unknown_key(void)
{
    EXPECT_DEV(HEAD "\"steps\":[" OK_STEP "],\"foo\":1}", "unknown-key", "/foo");
    EXPECT_DEV(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\",\"bar~/\":2}]}",
               "unknown-key", "/steps/0/bar~0~1");
}

static void test_atif__duplicate_key(void)
{
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "],\"notes\":\"a\",\"notes\":\"b\"}", "duplicate-key", "/notes");
}

static void test_atif__schema_version(void)
{
    EXPECT_ERR("{\"schema_version\":\"ATIF-v2.0\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[" OK_STEP "]}",
               "schema-version", "/schema_version");
    EXPECT_DEV("{\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[" OK_STEP "]}",
               "missing-schema-version", "");
    found fd;
    PCH_CHECK_EQ_INT(check("{\"schema_version\":\"ATIF-v1.8\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[" OK_STEP "]}", true, &fd, NULL), 0);
}

static void test_atif__required(void)
{
    EXPECT_ERR("{\"schema_version\":\"ATIF-v1.7\",\"steps\":[" OK_STEP "]}", "required", "/agent");
    EXPECT_ERR(HEAD "\"x\":0}", "required", "/steps");
    EXPECT_ERR("{\"schema_version\":\"ATIF-v1.7\",\"agent\":{\"name\":\"a\"},\"steps\":[" OK_STEP "]}",
               "required", "/agent/version");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\"}]}", "required", "/steps/0/message");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"message\":\"\"}]}", "required", "/steps/0/source");
}

static void test_atif__steps_empty(void)
{
    EXPECT_ERR(HEAD "\"steps\":[]}", "steps-empty", "/steps");
}

static void test_atif__step_id_sequence(void)
{
    const char *doc = HEAD "\"steps\":[" OK_STEP ",{\"step_id\":3,\"source\":\"user\",\"message\":\"\"}]}";
    EXPECT_DEV(doc, "step-id-sequence", "/steps/1/step_id");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":0,\"source\":\"user\",\"message\":\"\"}]}", "step-id", "/steps/0/step_id");
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "," OK_STEP "]}", "step-id", "/steps/1/step_id");
    {   /* every later occurrence of a step_id is an error, in step order, once each */
        found fd;
        int k = 0;
        static const char *const want[] = { "/steps/2/step_id", "/steps/4/step_id", "/steps/5/step_id" };
        check(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\"},{\"step_id\":2,\"source\":\"user\",\"message\":\"\"},"
              "{\"step_id\":1,\"source\":\"user\",\"message\":\"\"},{\"step_id\":3,\"source\":\"user\",\"message\":\"\"},"
              "{\"step_id\":2,\"source\":\"user\",\"message\":\"\"},{\"step_id\":1,\"source\":\"user\",\"message\":\"\"}]}", false, &fd, NULL);
        for (int i = 0; i < fd.n && i < MAXF; i++)
            if (strcmp(fd.code[i], "step-id") == 0) {
                PCH_CHECK_MSG(k < 3 && strcmp(fd.ptr[i], want[k]) == 0, "step-id %d at %s", k, fd.ptr[i]);
                k++;
            }
        PCH_CHECK_EQ_INT(k, 3);
    }
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":\"1\",\"source\":\"user\",\"message\":\"\"}]}", "type", "/steps/0/step_id");
}

static void test_atif__source_enum(void)
{
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"tool\",\"message\":\"\"}]}", "source", "/steps/0/source");
}

static void test_atif__agent_only(void)
{
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\",\"model_name\":\"m\"}]}",
               "agent-only", "/steps/0/model_name");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"system\",\"message\":\"\",\"metrics\":{}}]}",
               "agent-only", "/steps/0/metrics");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"system\",\"message\":\"\",\"tool_calls\":[]}]}",
               "agent-only", "/steps/0/tool_calls");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\",\"reasoning_content\":\"r\"}]}",
               "agent-only", "/steps/0/reasoning_content");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\",\"reasoning_effort\":\"low\"}]}",
               "agent-only", "/steps/0/reasoning_effort");
    found fd;   /* null is fine */
    PCH_CHECK_EQ_INT(check(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\",\"model_name\":null}]}", true, &fd, NULL), 0);
}

static void test_atif__timestamp(void)
{
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\",\"timestamp\":\"yesterday\"}]}",
               "timestamp", "/steps/0/timestamp");
}

static void test_atif__source_call_id(void)
{
    const char *doc = HEAD "\"steps\":[" OK_STEP "," OK_STEP "," OK_STEP ","
        "{\"step_id\":4,\"source\":\"agent\",\"message\":\"\",\"tool_calls\":[{\"tool_call_id\":\"c1\",\"function_name\":\"f\",\"arguments\":{}}],"
        "\"observation\":{\"results\":[{\"source_call_id\":\"c7\",\"content\":\"x\"}]}}]}";
    found fd;
    pch_atif_doc *d = NULL;
    pch_error e;
    /* fix the step ids of the copies */
    char *t = strdup(doc), *p;
    int k = 1;
    for (p = strstr(t, "\"step_id\":1"); p && k < 4; p = strstr(p + 1, "\"step_id\":1")) {
        if (k > 0) p[10] = (char)('0' + k);
        k++;
    }
    EXPECT_ERR(t, "source-call-id", "/steps/3/observation/results/0/source_call_id");
    check(t, false, &fd, NULL);
    PCH_CHECK_EQ_STR(fd.msg[0], "no tool call \"c7\" in step 4");
    PCH_CHECK(pch_atif_doc_parse(&d, g_ctx, t, strlen(t), "run.json", NULL, NULL, NULL, &e) == PCH_EINVAL);
    PCH_CHECK_EQ_STR(e.msg, "run.json:/steps/3/observation/results/0/source_call_id: no tool call \"c7\" in step 4");
    PCH_CHECK(d == NULL);
    free(t);
    /* on a system step any non-null source_call_id fails */
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"system\",\"message\":\"\",\"observation\":{\"results\":[{\"source_call_id\":\"x\"}]}}]}",
               "source-call-id", "/steps/0/observation/results/0/source_call_id");
}

static void test_atif__arguments_object(void)
{
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"tool_calls\":[{\"tool_call_id\":\"c\",\"function_name\":\"f\",\"arguments\":\"ls\"}]}]}",
               "arguments", "/steps/0/tool_calls/0/arguments");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"tool_calls\":[{\"tool_call_id\":\"c\",\"function_name\":\"f\",\"arguments\":[1]}]}]}",
               "arguments", "/steps/0/tool_calls/0/arguments");
}

static void test_atif__llm_call_count(void)
{
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"llm_call_count\":0,\"metrics\":{\"prompt_tokens\":1}}]}",
               "llm-call-count", "/steps/0/metrics");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"llm_call_count\":0,\"reasoning_content\":\"r\"}]}",
               "llm-call-count", "/steps/0/reasoning_content");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"llm_call_count\":-1}]}",
               "range", "/steps/0/llm_call_count");
    found fd;
    PCH_CHECK_EQ_INT(check(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"llm_call_count\":2,\"metrics\":{\"prompt_tokens\":1}}]}", true, &fd, NULL), 0);
}

static void test_atif__content_parts(void)
{
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"text\",\"text\":\"a\",\"source\":{\"media_type\":\"image/png\",\"path\":\"p\"}}]}]}",
               "content-part", "/steps/0/message/0/source");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"image\",\"text\":\"a\",\"source\":{\"media_type\":\"image/png\",\"path\":\"p\"}}]}]}",
               "content-part", "/steps/0/message/0/text");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"image\"}]}]}",
               "content-part", "/steps/0/message/0/source");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"video\"}]}]}",
               "content-part", "/steps/0/message/0/type");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"image\",\"source\":{\"media_type\":\"image/bmp\",\"path\":\"p\"}}]}]}",
               "media-type", "/steps/0/message/0/source/media_type");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"image\",\"source\":{\"media_type\":\"audio/wav\",\"path\":\"p\"}}]}]}",
               "media-type", "/steps/0/message/0/source/media_type");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"audio\",\"source\":{\"media_type\":\"image/png\",\"path\":\"p\"}}]}]}",
               "media-type", "/steps/0/message/0/source/media_type");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"audio\",\"source\":{\"media_type\":\"audio/wav\"}}]}]}",
               "required", "/steps/0/message/0/source/path");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"audio\",\"source\":{\"media_type\":\"audio/wav\",\"path\":\"a\",\"duration_sec\":-1}}]}]}",
               "range", "/steps/0/message/0/source/duration_sec");
    found fd;   /* v1.8 aliases are accepted */
    PCH_CHECK_EQ_INT(check(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[{\"type\":\"audio\",\"source\":{\"media_type\":\"audio/mp3\",\"path\":\"a.mp3\",\"duration_sec\":2}}]}]}", true, &fd, NULL), 0);
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":42}]}", "type", "/steps/0/message");
}

#define REF_STEP(refs) "{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"observation\":{\"results\":[{\"subagent_trajectory_ref\":[" refs "]}]}}"
#define REF_PTR "/steps/0/observation/results/0/subagent_trajectory_ref/0"
static void test_atif__subagent_refs(void)
{
    EXPECT_ERR(HEAD "\"steps\":[" REF_STEP("{\"session_id\":\"x\"}") "]}", "subagent-ref", REF_PTR);
    EXPECT_ERR(HEAD "\"steps\":[" REF_STEP("{\"trajectory_id\":\"  \",\"trajectory_path\":\"\"}") "]}", "subagent-ref", REF_PTR);
    EXPECT_DEV(HEAD "\"steps\":[" REF_STEP("{\"trajectory_id\":\"nope\"}") "]}", "unresolved-subagent-ref", REF_PTR "/trajectory_id");
    /* pre-v1.7 session_id-only refs: a documented deviation */
    EXPECT_DEV("{\"schema_version\":\"ATIF-v1.5\",\"session_id\":\"s\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":["
               REF_STEP("{\"session_id\":\"x\"}") "]}", "legacy-subagent-ref", REF_PTR);
    /* embedded subagents need a unique trajectory_id */
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "],\"subagent_trajectories\":[{\"schema_version\":\"ATIF-v1.7\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[" OK_STEP "]}]}",
               "subagent-id", "/subagent_trajectories/0/trajectory_id");
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "],\"subagent_trajectories\":["
               "{\"schema_version\":\"ATIF-v1.7\",\"trajectory_id\":\"t\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[" OK_STEP "]},"
               "{\"schema_version\":\"ATIF-v1.7\",\"trajectory_id\":\"t\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[" OK_STEP "]}]}",
               "subagent-id", "/subagent_trajectories/1/trajectory_id");
    {   /* every later occurrence of an embedded trajectory_id is an error, in order, once each */
#define SUB(id) "{\"schema_version\":\"ATIF-v1.7\",\"trajectory_id\":\"" id "\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[" OK_STEP "]}"
        static const char *const want[] = { "/subagent_trajectories/2/trajectory_id", "/subagent_trajectories/4/trajectory_id",
                                            "/subagent_trajectories/5/trajectory_id" };
        found fd;
        int k = 0;
        check(HEAD "\"steps\":[" OK_STEP "],\"subagent_trajectories\":[" SUB("t") "," SUB("u") "," SUB("t") "," SUB("tt") "," SUB("u") "," SUB("t") "]}",
              false, &fd, NULL);
#undef SUB
        for (int i = 0; i < fd.n && i < MAXF; i++)
            if (strcmp(fd.code[i], "subagent-id") == 0) {
                PCH_CHECK_MSG(k < 3 && strcmp(fd.ptr[i], want[k]) == 0, "subagent-id %d at %s", k, fd.ptr[i]);
                k++;
            }
        PCH_CHECK_EQ_INT(k, 3);
    }
    /* errors inside an embedded subagent carry its pointer */
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "],\"subagent_trajectories\":[{\"schema_version\":\"ATIF-v1.7\",\"trajectory_id\":\"t\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"bot\",\"message\":\"\"}]}]}",
               "source", "/subagent_trajectories/0/steps/0/source");
}

static void test_atif__duplicate_tool_call_id(void)
{
    EXPECT_DEV(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"tool_calls\":["
               "{\"tool_call_id\":\"c\",\"function_name\":\"f\",\"arguments\":{}},{\"tool_call_id\":\"c\",\"function_name\":\"g\",\"arguments\":{}}]}]}",
               "duplicate-tool-call-id", "/steps/0/tool_calls/1/tool_call_id");
}

static void test_atif__final_metrics(void)
{
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "],\"final_metrics\":{\"total_steps\":-1}}", "range", "/final_metrics/total_steps");
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "],\"final_metrics\":{\"total_cost_usd\":\"1\"}}", "type", "/final_metrics/total_cost_usd");
}

static void test_atif__metrics_types(void)
{
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"metrics\":{\"prompt_token_ids\":[1,2.5]}}]}",
               "type", "/steps/0/metrics/prompt_token_ids/1");
    EXPECT_ERR(HEAD "\"steps\":[{\"step_id\":1,\"source\":\"agent\",\"message\":\"\",\"metrics\":{\"prompt_tokens\":\"3\"}}]}",
               "type", "/steps/0/metrics/prompt_tokens");
}

static void test_atif__extra_must_be_object(void)
{
    EXPECT_ERR(HEAD "\"steps\":[" OK_STEP "],\"extra\":[1]}", "type", "/extra");
}

static void test_atif__path_check(void)
{
    pch_error e;
    PCH_CHECK(pch_atif_path_check("images/a.png", 12, &e) == 0);
    PCH_CHECK(pch_atif_path_check("../a.png", 8, &e) == PCH_EINVAL);
    PCH_CHECK(pch_atif_path_check("a/../b", 6, &e) == PCH_EINVAL);
    PCH_CHECK(pch_atif_path_check("/etc/passwd", 11, &e) == PCH_EINVAL);
    PCH_CHECK(pch_atif_path_check("s3://b/k", 8, &e) == PCH_EINVAL);
    PCH_CHECK(pch_atif_path_check("http://x/y", 10, &e) == PCH_EINVAL);
    PCH_CHECK(pch_atif_path_check("", 0, &e) == PCH_EINVAL);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "atif_validate_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) != 0) return 2;
    PCH_RUN(test_atif__valid_minimal);
    PCH_RUN(test_atif__json_syntax);
    PCH_RUN(test_atif__unknown_key);
    PCH_RUN(test_atif__duplicate_key);
    PCH_RUN(test_atif__schema_version);
    PCH_RUN(test_atif__required);
    PCH_RUN(test_atif__steps_empty);
    PCH_RUN(test_atif__step_id_sequence);
    PCH_RUN(test_atif__source_enum);
    PCH_RUN(test_atif__agent_only);
    PCH_RUN(test_atif__timestamp);
    PCH_RUN(test_atif__source_call_id);
    PCH_RUN(test_atif__arguments_object);
    PCH_RUN(test_atif__llm_call_count);
    PCH_RUN(test_atif__content_parts);
    PCH_RUN(test_atif__subagent_refs);
    PCH_RUN(test_atif__duplicate_tool_call_id);
    PCH_RUN(test_atif__final_metrics);
    PCH_RUN(test_atif__metrics_types);
    PCH_RUN(test_atif__extra_must_be_object);
    PCH_RUN(test_atif__path_check);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
