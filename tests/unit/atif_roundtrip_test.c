/* ATIF writer round trip: every valid document of the shared corpus (../shared/corpus/atif)
** and of tests/data/atif is parsed, normalised and written back; the result must be the
** same JSON value (jansson json_equal as the independent oracle; canonical JSONB bytes for
** numbers jansson cannot load). Also checks normalisation: keys, subagent flattening,
** continuation, copied context, multimodal parts and token ids. */
#include <dirent.h>
#include <sys/stat.h>
#include <jansson.h>

#include "harness.h"
#include "pchronicle/atif.h"
#include "pchronicle/json.h"

#include <unistd.h>
#include "core/core.h"

static pch_ctx *g_ctx;
static int n_docs, n_rejected, n_mismatch;

#include "json_equal.h"


static void roundtrip_file(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    pch_atif_doc *d = NULL;
    pch_error e;
    if (!text) { n_mismatch++; fprintf(stderr, "  cannot read %s\n", path); return; }
    n_docs++;
    if (pch_atif_doc_parse(&d, g_ctx, text, len, path, NULL, NULL, NULL, &e) != 0) {
        n_rejected++;
        fprintf(stderr, "  rejected %s\n", e.msg);
        free(text);
        return;
    }
    char *out = NULL;
    size_t out_len = 0;
    if (pch_atif_doc_write(d, 0, false, &out, &out_len, &e) != 0 ||
        !same_value(text, len, out, out_len)) {
        n_mismatch++;
        fprintf(stderr, "  round trip differs: %s\n", path);
    }
    pch_free(g_ctx, out);
    /* pretty output is the same value too */
    if (pch_atif_doc_write(d, 0, true, &out, &out_len, &e) != 0 ||
        !same_value(text, len, out, out_len)) {
        n_mismatch++;
        fprintf(stderr, "  pretty round trip differs: %s\n", path);
    }
    pch_free(g_ctx, out);
    pch_atif_doc_free(d);
    free(text);
}

static void walk(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4096];
    if (!d) return;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) walk(path);
        else if (strlen(de->d_name) > 5 && strcmp(de->d_name + strlen(de->d_name) - 5, ".json") == 0)
            roundtrip_file(path);
    }
    closedir(d);
}

static void test_atif__corpus_roundtrip(void)
{
    struct stat st;
    const char *corpus = getenv("PCH_ATIF_CORPUS") ? getenv("PCH_ATIF_CORPUS") : "../shared/corpus/atif";
    PCH_CHECK_MSG(stat(corpus, &st) == 0, "corpus %s missing (clone shared/ beside the repo)", corpus);
    n_docs = n_rejected = n_mismatch = 0;
    walk(corpus);
    printf("corpus: %d documents, %d rejected, %d mismatches\n", n_docs, n_rejected, n_mismatch);
    PCH_CHECK(n_docs >= 300);
    PCH_CHECK_EQ_INT(n_rejected, 0);   /* the README: every corpus document is valid */
    PCH_CHECK_EQ_INT(n_mismatch, 0);
}

static void test_atif__testdata_roundtrip(void)
{
    n_docs = n_rejected = n_mismatch = 0;
    walk("tests/data/atif");
    PCH_CHECK(n_docs >= 10);
    PCH_CHECK_EQ_INT(n_rejected, 0);
    PCH_CHECK_EQ_INT(n_mismatch, 0);
}

static pch_atif_doc *load(const char *path, const pch_atif_options *o)
{
    size_t len;
    char *text = slurp(path, &len);
    pch_atif_doc *d = NULL;
    pch_error e;
    if (!text) return NULL;
    if (pch_atif_doc_parse(&d, g_ctx, text, len, path, o, NULL, NULL, &e) != 0)
        fprintf(stderr, "  %s\n", e.msg);
    free(text);
    return d;
}

static void test_atif__subagent_flatten(void)
{
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    o.source_id = "src1";
    o.source_fingerprint = "fp";
    pch_atif_doc *d = load("tests/data/atif/harbor_multiagent_v1_7.json", &o);
    PCH_CHECK(d != NULL);
    PCH_CHECK_EQ_INT(pch_atif_doc_count(d), 2);
    const pch_atif_trajectory *r = pch_atif_doc_get(d, 0), *c = pch_atif_doc_get(d, 1);
    PCH_CHECK_EQ_STR(r->source_id, "src1");
    PCH_CHECK_EQ_STR(r->run_key, "harbor-golden-run");
    /* a producer id names a trajectory with its document path (stable keys, docs/atif.md) */
    PCH_CHECK_EQ_STR(r->trajectory_key, "traj_root_golden@tests/data/atif/harbor_multiagent_v1_7.json");
    PCH_CHECK_EQ_STR(c->trajectory_key, "traj_child_golden@tests/data/atif/harbor_multiagent_v1_7.json");
    PCH_CHECK_EQ_STR(c->run_key, "harbor-golden-run");
    PCH_CHECK_EQ_INT(c->parent, 0);
    PCH_CHECK_EQ_INT(c->parent_local_ordinal, 0);
    PCH_CHECK_EQ_INT(r->n_children, 1);
    PCH_CHECK_EQ_INT(r->children[0], 1);
    PCH_CHECK_EQ_INT(r->state, PCH_ATIF_STATE_TERMINAL);
    /* results stay on the step with a nullable call ordinal (RFC-0006 §5.5) */
    const pch_atif_step *s = &r->steps[1];
    PCH_CHECK_EQ_INT(s->n_calls, 2);
    PCH_CHECK_EQ_INT(s->n_results, 2);
    PCH_CHECK_EQ_INT(s->results[0].call_ordinal, 1);   /* call_shell */
    PCH_CHECK_EQ_INT(s->results[1].call_ordinal, 0);   /* call_worker */
    PCH_CHECK_EQ_INT(s->llm_call_count, 1);
    PCH_CHECK_EQ_INT(s->prompt_tokens, 100);
    PCH_CHECK_EQ_INT(s->cached_tokens, 40);
    PCH_CHECK_EQ_STR(s->model_name, "codexresponses.gpt-5.4?reasoning=high");
    /* the child alone is a valid document again */
    char *out;
    size_t n;
    PCH_CHECK_OK(pch_atif_doc_write(d, 1, false, &out, &n, NULL), NULL);
    PCH_CHECK(strstr(out, "\"trajectory_id\":\"traj_child_golden\"") != NULL);
    PCH_CHECK(strstr(out, "traj_root_golden") == NULL);
    pch_free(g_ctx, out);
    pch_atif_doc_free(d);
}

static void test_atif__generated_keys(void)
{
    const char *t = "{\"schema_version\":\"ATIF-v1.7\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},"
                    "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"\"}]}";
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    pch_atif_doc *d = NULL;
    o.source_fingerprint = "fp";
    PCH_CHECK_OK(pch_atif_doc_parse(&d, g_ctx, t, strlen(t), "dir/a.json", &o, NULL, NULL, NULL), NULL);
    const pch_atif_trajectory *r = pch_atif_doc_get(d, 0);
    PCH_CHECK(r->run_key_generated && r->trajectory_key_generated);
    PCH_CHECK(strstr(r->trajectory_key, "dir/a.json#0") != NULL);
    PCH_CHECK(r->warnings & PCH_ATIF_W_GENERATED_KEY);
    PCH_CHECK_EQ_INT(r->state, PCH_ATIF_STATE_OPEN);
    /* never written back as producer ids */
    char *out;
    size_t n;
    PCH_CHECK_OK(pch_atif_doc_write(d, 0, false, &out, &n, NULL), NULL);
    PCH_CHECK(strstr(out, "session_id") == NULL && strstr(out, "trajectory_id") == NULL);
    pch_free(g_ctx, out);
    pch_atif_doc_free(d);
}

static void test_atif__continuation_and_copied_context(void)
{
    pch_atif_doc *d = load("tests/data/atif/linear-history/trajectory.json", NULL);
    PCH_CHECK(d != NULL);
    const pch_atif_trajectory *r = pch_atif_doc_get(d, 0);
    PCH_CHECK_EQ_STR(r->continued_trajectory_ref, "trajectory.cont-1.json");
    PCH_CHECK_EQ_INT(r->state, PCH_ATIF_STATE_TRUNCATED);
    pch_atif_doc_free(d);
    d = load("tests/data/atif/linear-history/trajectory.cont-1.json", NULL);
    PCH_CHECK(d != NULL);
    r = pch_atif_doc_get(d, 0);
    int copied = 0;
    for (uint32_t i = 0; i < r->n_steps; i++) copied += r->steps[i].is_copied_context == 1;
    PCH_CHECK_EQ_INT(copied, 4);
    pch_atif_doc_free(d);
}

static void test_atif__multimodal_and_token_ids(void)
{
    pch_atif_doc *d = load("tests/data/atif/multimodal/trajectory.json", NULL);
    PCH_CHECK(d != NULL);
    const pch_atif_trajectory *r = pch_atif_doc_get(d, 0);
    PCH_CHECK_EQ_INT(r->n_steps, 3);
    PCH_CHECK(r->steps[0].f[PCH_ATIF_S_MESSAGE].ptr[0] == '[');
    PCH_CHECK(r->steps[0].has_timestamp);
    PCH_CHECK_EQ_INT(r->steps[0].timestamp_ms, 1767323045250LL);
    PCH_CHECK_EQ_INT(r->steps[1].timestamp_ms, 1767319446000LL);
    PCH_CHECK(strstr(r->steps[1].f[PCH_ATIF_S_METRICS].ptr, "\"completion_token_ids\":[7,8,9]") != NULL);
    PCH_CHECK(strstr(r->steps[1].f[PCH_ATIF_S_METRICS].ptr, "-1e-7") != NULL);   /* number text kept */
    PCH_CHECK_EQ_INT(r->steps[2].llm_call_count, 0);
    PCH_CHECK(strstr(r->steps[2].calls[0].f[PCH_ATIF_C_ARGUMENTS].ptr, "18446744073709551615") != NULL);
    pch_atif_doc_free(d);
    d = load("tests/data/atif/context-summarization/trajectory.json", NULL);
    PCH_CHECK(d != NULL);
    r = pch_atif_doc_get(d, 0);
    int with_ids = 0;
    for (uint32_t i = 0; i < r->n_steps; i++)
        if (r->steps[i].f[PCH_ATIF_S_METRICS].ptr &&
            strstr(r->steps[i].f[PCH_ATIF_S_METRICS].ptr, "\"prompt_token_ids\":[")) with_ids++;
    PCH_CHECK_EQ_INT(with_ids, 7);
    pch_atif_doc_free(d);
}

static void test_atif__non_monotonic_preserved(void)
{
    const char *t = "{\"schema_version\":\"ATIF-v1.7\",\"session_id\":\"s\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},"
                    "\"steps\":[{\"step_id\":2,\"source\":\"user\",\"message\":\"b\"},{\"step_id\":1,\"source\":\"user\",\"message\":\"a\"}],"
                    "\"x-custom\":{\"k\":[1,2]}}";
    pch_atif_doc *d = NULL;
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    PCH_CHECK_OK(pch_atif_doc_parse(&d, g_ctx, t, strlen(t), "a.json", &o, NULL, NULL, NULL), NULL);
    const pch_atif_trajectory *r = pch_atif_doc_get(d, 0);
    PCH_CHECK(r->warnings & PCH_ATIF_W_NON_MONOTONIC_STEP_ID);
    PCH_CHECK(r->warnings & PCH_ATIF_W_UNKNOWN_KEYS);
    PCH_CHECK_EQ_INT(r->steps[0].step_id, 2);           /* never sorted */
    PCH_CHECK_EQ_INT(r->steps[0].ordinal, 0);
    char *out;
    size_t n;
    PCH_CHECK_OK(pch_atif_doc_write(d, 0, false, &out, &n, NULL), NULL);
    PCH_CHECK(same_value(t, strlen(t), out, n));
    pch_free(g_ctx, out);
    pch_atif_doc_free(d);
    o.strict = true;
    PCH_CHECK(pch_atif_doc_parse(&d, g_ctx, t, strlen(t), "a.json", &o, NULL, NULL, NULL) == PCH_EINVAL);
}

typedef struct links_seen { int subagent_ok, subagent_dangling, cont_ok, docs, collisions; } links_seen;
static int count_doc(pch_atif_doc *d, void *payload)
{
    links_seen *ls = payload;
    ls->docs++;
    for (size_t i = 0; i < pch_atif_doc_count(d); i++)
        if (pch_atif_doc_get(d, i)->warnings & PCH_ATIF_W_KEY_COLLISION) ls->collisions++;
    return 0;
}
static int count_link(const pch_atif_link *l, void *payload)
{
    links_seen *ls = payload;
    if (l->kind == PCH_ATIF_LINK_CONTINUATION && l->to_trajectory_key) ls->cont_ok++;
    if (l->kind == PCH_ATIF_LINK_SUBAGENT_FILE) {
        if (l->to_trajectory_key) ls->subagent_ok++;
        else ls->subagent_dangling++;
    }
    return 0;
}

static void test_atif__dir_import_links(void)
{
    links_seen ls = { 0, 0, 0, 0, 0 };
    pch_atif_dir_stats st;
    pch_error e;
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    o.source_id = "testdata";
    PCH_CHECK_OK(pch_atif_dir_import(g_ctx, "tests/data/atif", &o, count_doc, count_link, NULL, &ls, &st, &e), &e);
    PCH_CHECK_EQ_INT(st.rejected, 0);
    PCH_CHECK_EQ_INT(ls.docs, (int)st.documents);
    PCH_CHECK_EQ_INT(ls.subagent_ok, 3);        /* context-summarization: 3 file refs */
    PCH_CHECK_EQ_INT(ls.subagent_dangling, 4);  /* linear-history (3, Harbor golden) + letta fixture */
    PCH_CHECK_EQ_INT(ls.cont_ok, 1);            /* trajectory.json -> trajectory.cont-1.json */
    PCH_CHECK_EQ_INT(ls.collisions, 0);         /* cont-1 shares the session_id: each keeps its own key */
}

/* Parsing ahead on worker threads changes nothing a caller sees: the same documents with
** the same keys in the same order, the same findings, the same statistics. */
typedef struct trace { pch_buf t; } trace;
static int trace_doc(pch_atif_doc *d, void *payload)
{
    trace *x = payload;
    for (size_t i = 0; i < pch_atif_doc_count(d); i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(d, i);
        pch_buf_printf(&x->t, "doc %s %s %s %u\n", t->doc_path, t->run_key, t->trajectory_key, t->warnings);
    }
    return 0;
}
static int trace_finding(const pch_atif_finding *f, void *payload)
{
    trace *x = payload;
    pch_buf_printf(&x->t, "finding %s %s %s\n", f->file, f->pointer, f->code);
    return 0;
}

static void test_atif__dir_import_threads_same(void)
{
    static const char *const roots[] = { "tests/data/atif", "../shared/corpus/atif" };
    for (size_t r = 0; r < 2; r++) {
        trace a, b;
        pch_atif_dir_stats sa, sb;
        pch_error e;
        pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
        if (r == 1 && access(roots[r], F_OK) != 0) continue;   /* the corpus beside the repo */
        pch_buf_init(&a.t, NULL);
        pch_buf_init(&b.t, NULL);
        PCH_CHECK_OK(pch_atif_dir_import(g_ctx, roots[r], &o, trace_doc, NULL, trace_finding, &a, &sa, &e), &e);
        o.threads = 3;
        PCH_CHECK_OK(pch_atif_dir_import(g_ctx, roots[r], &o, trace_doc, NULL, trace_finding, &b, &sb, &e), &e);
        PCH_CHECK(a.t.len > 0 && a.t.len == b.t.len && memcmp(a.t.data, b.t.data, a.t.len) == 0);
        PCH_CHECK(sa.documents == sb.documents && sa.rejected == sb.rejected && sa.bytes == sb.bytes &&
                  sa.trajectories == sb.trajectories && sa.links == sb.links);
        pch_buf_dispose(&a.t);
        pch_buf_dispose(&b.t);
    }
}

/* options version 4's walked callback (an incremental sync loads its document list while the
** walk runs): called once, before select is asked about any file; select then sees every file
** in path order, and the import reads exactly what it would with select asked during the
** walk, sequential or parsing ahead. A walked that fails stops the import with its code. */
typedef struct sel_trace {
    pch_buf t;
    int walked, selects_before_walked, fail, n_sel;
} sel_trace;
static int sel_walked(void *payload)
{
    sel_trace *x = payload;
    x->walked++;
    return x->fail ? PCH_EIO : 0;
}
static int sel_every_other(const char *path, const char *rel, uint64_t bytes, int64_t mtime_ns, void *payload)
{
    sel_trace *x = payload;
    (void)path;
    if (!x->walked) x->selects_before_walked++;
    pch_buf_printf(&x->t, "select %s %llu %lld\n", rel, (unsigned long long)bytes, (long long)mtime_ns);
    return x->n_sel++ % 3 != 1;   /* skips every third file: the same files either way */
}
static int sel_doc(pch_atif_doc *d, void *payload)
{
    return trace_doc(d, &((sel_trace *)payload)->t);
}

static void test_atif__dir_import_walked(void)
{
    /* the test documents, and the same under a single folder (the listing splits below it) */
    char one[256], cmd[1024];
    const char *roots[2];
    snprintf(one, sizeof one, "%s/pch-walked-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp -r tests/data/atif '%s/only'", one, one, one);
    PCH_CHECK(system(cmd) == 0);
    roots[0] = "tests/data/atif";
    roots[1] = one;
    for (unsigned run = 0; run < 4; run++) {
        const char *root = roots[run / 2];
        unsigned threads = run % 2 ? 3 : 1;
        sel_trace a, b;
        pch_atif_dir_stats sa, sb;
        pch_error e;
        pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        pch_buf_init(&a.t, NULL);
        pch_buf_init(&b.t, NULL);
        o.threads = threads;
        o.select = sel_every_other;
        o.select_payload = &a;
        PCH_CHECK_OK(pch_atif_dir_import(g_ctx, root, &o, sel_doc, NULL, NULL, &a, &sa, &e), &e);
        o.walked = sel_walked;
        o.select_payload = &b;
        PCH_CHECK_OK(pch_atif_dir_import(g_ctx, root, &o, sel_doc, NULL, NULL, &b, &sb, &e), &e);
        PCH_CHECK_MSG(b.walked == 1 && b.selects_before_walked == 0, "%s threads %u: walked %d, %d selects before it", root, threads, b.walked,
                      b.selects_before_walked);
        PCH_CHECK_MSG(sa.documents > 0 && sa.documents == sb.documents && sa.bytes == sb.bytes, "threads %u", threads);
        /* the same select questions and documents, though interleaved differently */
        PCH_CHECK(a.t.len > 0);
        for (int kind = 0; kind < 2; kind++) {
            const char *pre = kind ? "doc " : "select ";
            pch_buf qa, qb;
            pch_buf_init(&qa, NULL);
            pch_buf_init(&qb, NULL);
            for (int k = 0; k < 2; k++) {
                const pch_buf *src = k ? &b.t : &a.t;
                pch_buf *sel = k ? &qb : &qa;
                const char *p = (const char *)src->data, *end = p + src->len;
                while (p < end) {
                    const char *nl = memchr(p, '\n', (size_t)(end - p));
                    size_t l = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
                    if (strncmp(p, pre, strlen(pre)) == 0) pch_buf_append(sel, p, l);
                    p += l;
                }
            }
            PCH_CHECK_MSG(qa.len > 0 && qa.len == qb.len && memcmp(qa.data, qb.data, qa.len) == 0, "threads %u: %s lines differ", threads, pre);
            pch_buf_dispose(&qa);
            pch_buf_dispose(&qb);
        }
        pch_buf_dispose(&a.t);
        pch_buf_dispose(&b.t);
        /* a failing walked stops the import before any document is read */
        memset(&b, 0, sizeof b);
        pch_buf_init(&b.t, NULL);
        b.fail = 1;
        o.select_payload = &b;
        PCH_CHECK(pch_atif_dir_import(g_ctx, root, &o, sel_doc, NULL, NULL, &b, &sb, &e) == PCH_EIO);
        PCH_CHECK(b.walked == 1 && strstr((const char *)(b.t.data ? b.t.data : (const uint8_t *)""), "doc ") == NULL);
        pch_buf_dispose(&b.t);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", one);
    PCH_CHECK(system(cmd) == 0);
}


/* Keys depend on their own document only (RFC-0006 §5.2, docs/atif.md "Stable keys"):
** issue 19's case. Two documents share a session id and carry no trajectory id; a copy of
** the first put under a name that sorts before it changes no key of the others. */
static void put(const char *dir, const char *name, const char *text)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    PCH_CHECK(f != NULL);
    if (f) { fputs(text, f); fclose(f); }
}

static char *keys_of(const char *dir, pch_error *e, int *rc)
{
    trace t;
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    o.source_id = "stable";
    pch_buf_init(&t.t, NULL);
    *rc = pch_atif_dir_import(g_ctx, dir, &o, trace_doc, NULL, NULL, &t, NULL, e);
    pch_buf_append(&t.t, "", 1);
    return (char *)pch_buf_detach(&t.t, NULL);
}

static void test_atif__keys_stable(void)
{
    static const char doc[] =
        "{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"SHARED\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},"
        "\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"%s\"}]}";
    char dir[256], text[512], cmd[300];
    pch_error e;
    int rc;
    snprintf(dir, sizeof dir, "%s/pch-keys-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    PCH_CHECK(system(cmd) == 0 && mkdir(dir, 0755) == 0);
    snprintf(text, sizeof text, doc, "first");
    put(dir, "s-000083.json", text);
    snprintf(text, sizeof text, doc, "second");
    put(dir, "s-000090.json", text);
    char *before = keys_of(dir, &e, &rc);
    PCH_CHECK_OK(rc, &e);
    PCH_CHECK(strstr(before, "doc s-000083.json SHARED SHARED@s-000083.json 0\n") != NULL);
    PCH_CHECK(strstr(before, "doc s-000090.json SHARED SHARED@s-000090.json 0\n") != NULL);
    snprintf(text, sizeof text, doc, "first");
    put(dir, "s-000082a.json", text);             /* sorts first, claims the same ids */
    char *after = keys_of(dir, &e, &rc);
    PCH_CHECK_OK(rc, &e);
    PCH_CHECK_MSG(strstr(after, "doc s-000082a.json SHARED SHARED@s-000082a.json 0\n") != NULL, "%s", after);
    /* what was there before is there unchanged, flags included */
    PCH_CHECK(strstr(after, "doc s-000083.json SHARED SHARED@s-000083.json 0\n") != NULL);
    PCH_CHECK(strstr(after, "doc s-000090.json SHARED SHARED@s-000090.json 0\n") != NULL);
    free(before);
    free(after);

    /* input built to name one key twice ("t@x" in a.json, "t" in x@a.json, one run) is
    ** refused, naming both documents, rather than renaming either trajectory */
    PCH_CHECK(system(cmd) == 0 && mkdir(dir, 0755) == 0);
    put(dir, "a.json", "{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"R\",\"trajectory_id\":\"t@x\","
                       "\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"m\"}]}");
    put(dir, "x@a.json", "{\"schema_version\":\"ATIF-v1.6\",\"session_id\":\"R\",\"trajectory_id\":\"t\","
                         "\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"m\"}]}");
    char *bad = keys_of(dir, &e, &rc);
    PCH_CHECK(rc == PCH_EINVAL);
    PCH_CHECK_MSG(strstr(e.msg, "x@a.json") && strstr(e.msg, "a.json: trajectory key \"t@x@a.json\"") &&
                  strstr(e.msg, "names this key twice"), "%s", e.msg);
    free(bad);
    PCH_CHECK(system(cmd) == 0);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "atif_roundtrip_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) != 0) return 2;
    PCH_RUN(test_atif__corpus_roundtrip);
    PCH_RUN(test_atif__testdata_roundtrip);
    PCH_RUN(test_atif__subagent_flatten);
    PCH_RUN(test_atif__generated_keys);
    PCH_RUN(test_atif__continuation_and_copied_context);
    PCH_RUN(test_atif__multimodal_and_token_ids);
    PCH_RUN(test_atif__non_monotonic_preserved);
    PCH_RUN(test_atif__dir_import_links);
    PCH_RUN(test_atif__dir_import_threads_same);
    PCH_RUN(test_atif__dir_import_walked);
    PCH_RUN(test_atif__keys_stable);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
