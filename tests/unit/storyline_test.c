/* Storyline projection (docs/storyline.md): import → export round trip against the input
** documents (jansson json_equal as the independent oracle), point reads of one trajectory
** (including an embedded subagent), CURRENT publication and the previous root surviving a
** failed import, assets embedded vs referenced, objects offload/dedup, and row counts
** checked against counts computed from the JSON with jansson. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "harness.h"
#include "pchronicle/atif.h"
#include "pchronicle/json.h"
#include "pchronicle/lance.h"
#include "pchronicle/storyline.h"

static pch_ctx *g_ctx;
static char g_tmp[256];

#include "json_equal.h"

static bool valid_atif(const char *text, size_t len)
{
    pch_atif_doc *d = NULL;
    int rc = pch_atif_doc_parse(&d, g_ctx, text, len, "x", NULL, NULL, NULL, NULL);
    pch_atif_doc_free(d);
    return rc == 0;
}

typedef struct cmp_state { const char *in, *out; int docs, mismatches, missing; } cmp_state;

static void cmp_walk(cmp_state *s, const char *rel)
{
    char dir[4096];
    DIR *d;
    struct dirent *de;
    snprintf(dir, sizeof dir, "%s/%s", s->in, rel);
    d = opendir(dir);
    if (!d) return;
    while ((de = readdir(d)) != NULL) {
        char r2[4096], a[8192], b[8192];
        struct stat st;
        if (de->d_name[0] == '.') continue;
        snprintf(r2, sizeof r2, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
        snprintf(a, sizeof a, "%s/%s", s->in, r2);
        snprintf(b, sizeof b, "%s/%s", s->out, r2);
        if (lstat(a, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) { cmp_walk(s, r2); continue; }
        size_t an, bn;
        char *ta = slurp(a, &an), *tb;
        bool is_json = strlen(de->d_name) > 5 && strcmp(de->d_name + strlen(de->d_name) - 5, ".json") == 0;
        if (!ta) continue;
        if (is_json && !valid_atif(ta, an)) { free(ta); continue; }
        tb = slurp(b, &bn);
        if (!tb) {
            /* a file no trajectory references (the corpus has one such PNG) is not exported */
            if (is_json) { s->missing++; fprintf(stderr, "  missing in export: %s\n", r2); }
            free(ta);
            continue;
        }
        if (is_json) {
            s->docs++;
            if (!same_value(ta, an, tb, bn)) { s->mismatches++; fprintf(stderr, "  differs: %s\n", r2); }
        } else if (an != bn || memcmp(ta, tb, an) != 0) {
            s->mismatches++;
            fprintf(stderr, "  asset differs: %s\n", r2);
        }
        free(ta);
        free(tb);
    }
    closedir(d);
}

static void rmrf(const char *p)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0) fprintf(stderr, "  cannot remove %s\n", p);
}

static int roundtrip(const char *in, size_t threshold, int *docs)
{
    char root[512], out[512];
    pch_storyline_import_options o = PCH_STORYLINE_IMPORT_OPTIONS_INIT;
    pch_storyline_stats st;
    pch_error e;
    size_t n = 0;
    cmp_state s = { in, out, 0, 0, 0 };
    snprintf(root, sizeof root, "%s/rt-root", g_tmp);
    snprintf(out, sizeof out, "%s/rt-out", g_tmp);
    rmrf(root);
    rmrf(out);
    o.object_threshold = threshold;
    if (pch_storyline_import(g_ctx, in, root, &o, &st, &e) != 0) { fprintf(stderr, "  import: %s\n", e.msg); return -1; }
    if (pch_storyline_export(g_ctx, root, out, NULL, &n, &e) != 0) { fprintf(stderr, "  export: %s\n", e.msg); return -1; }
    cmp_walk(&s, "");
    printf("  %s: %zu docs imported, %zu exported, %d compared, %zu steps, %zu calls, %zu objects\n",
           in, st.documents, n, s.docs, st.steps, st.tool_calls, st.objects);
    *docs = s.docs;
    if ((size_t)s.docs != st.documents || n != st.documents) return -2;
    return s.mismatches + s.missing;
}

static void test_storyline__testdata_roundtrip(void)
{
    int docs = 0;
    PCH_CHECK_EQ_INT(roundtrip("tests/data/atif", 0, &docs), 0);
    PCH_CHECK(docs >= 8);
    {
        char p[600];
        struct stat st;
        snprintf(p, sizeof p, "%s/rt-out/multimodal/images/a.png", g_tmp);
        PCH_CHECK_MSG(stat(p, &st) == 0, "embedded image not restored");
        snprintf(p, sizeof p, "%s/rt-out/multimodal/audio/hello.wav", g_tmp);
        PCH_CHECK_MSG(stat(p, &st) == 0, "embedded audio not restored");
    }
    /* every content value moved to objects: hydration must give the same documents */
    PCH_CHECK_EQ_INT(roundtrip("tests/data/atif", 16, &docs), 0);
}

static void test_storyline__corpus_roundtrip(void)
{
    struct stat st;
    int docs = 0;
    const char *corpus = getenv("PCH_ATIF_CORPUS") ? getenv("PCH_ATIF_CORPUS") : "../shared/corpus/atif";
    PCH_CHECK_MSG(stat(corpus, &st) == 0, "corpus %s missing (clone shared/ beside the repo)", corpus);
    PCH_CHECK_EQ_INT(roundtrip(corpus, 4096, &docs), 0);
    PCH_CHECK(docs >= 300);
}

/* get = the ATIF writer's output for the same trajectory (with embedded subagents). */
static void test_storyline__get_point_read(void)
{
    char root[512];
    pch_error e;
    size_t len, on;
    char *text = slurp("tests/data/atif/harbor_multiagent_v1_7.json", &len), *out = NULL;
    pch_atif_doc *d = NULL;
    PCH_CHECK(text != NULL);
    PCH_CHECK_OK(pch_atif_doc_parse(&d, g_ctx, text, len, "harbor_multiagent_v1_7.json", NULL, NULL, NULL, &e), &e);
    PCH_CHECK(pch_atif_doc_count(d) >= 2);
    /* pass 0: default threshold; pass 1: values of >= 64 bytes in objects, so get
    ** hydrates objects by row lookup */
    for (int pass = 0; pass < 2; pass++) {
    pch_storyline_import_options io = PCH_STORYLINE_IMPORT_OPTIONS_INIT;
    io.object_threshold = pass ? 64 : 0;
    snprintf(root, sizeof root, "%s/get-root%d", g_tmp, pass);
    rmrf(root);
    PCH_CHECK_OK(pch_storyline_import(g_ctx, "tests/data/atif", root, &io, NULL, &e), &e);
    for (size_t i = 0; i < pch_atif_doc_count(d); i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(d, i);
        char *want = NULL;
        size_t wn = 0;
        /* the dir importer keys by producer ids: look the trajectory up by its key */
        if (pch_storyline_get(g_ctx, root, t->trajectory_key, i % 2 == 0, &out, &on, &e) != 0) {
            PCH_CHECK_MSG(0, "get %s: %s", t->trajectory_key, e.msg);
        }
        PCH_CHECK_OK(pch_atif_doc_write(d, i, false, &want, &wn, &e), &e);
        bool eq = same_value(want, wn, out, on);
        pch_free(g_ctx, want);
        pch_free(g_ctx, out);
        PCH_CHECK_MSG(eq, "trajectory %zu (%s) differs", i, t->trajectory_key);
    }
    PCH_CHECK(pch_storyline_get(g_ctx, root, "no-such-key", false, &out, &on, &e) == PCH_ENOTFOUND);
    PCH_CHECK(out == NULL);
    }
    pch_atif_doc_free(d);
    free(text);
}

static void test_storyline__current_and_failed_import(void)
{
    char root[512], cur[600], bad[512];
    pch_error e;
    size_t n1, n2;
    char *c1, *c2;
    snprintf(root, sizeof root, "%s/cur-root", g_tmp);
    snprintf(cur, sizeof cur, "%s/CURRENT", root);
    snprintf(bad, sizeof bad, "%s/bad-input", g_tmp);
    rmrf(root);
    rmrf(bad);
    PCH_CHECK_OK(pch_storyline_import(g_ctx, "tests/data/atif/multimodal", root, NULL, NULL, &e), &e);
    PCH_CHECK(pch_storyline_is_root(root));
    c1 = slurp(cur, &n1);
    PCH_CHECK(c1 && strstr(c1, "\"runs\":{\"path\":\"runs.lance\",\"version\":1,"));
    PCH_CHECK(strstr(c1, "\"self_contained\":true") && strstr(c1, "\"kind\":\"atif-dir\"") && strstr(c1, "\"digest\":\"blake3:"));
    /* a rebuild writes version 2 of each table and swaps CURRENT */
    PCH_CHECK_OK(pch_storyline_import(g_ctx, "tests/data/atif/multimodal", root, NULL, NULL, &e), &e);
    c2 = slurp(cur, &n2);
    PCH_CHECK(c2 && strstr(c2, "\"version\":2"));
    free(c2);
    /* a failed import (no valid document) leaves CURRENT as it was */
    PCH_CHECK(mkdir(bad, 0755) == 0);
    char p[600];
    snprintf(p, sizeof p, "%s/broken.json", bad);
    FILE *f = fopen(p, "w");
    PCH_CHECK(f != NULL);
    fputs("{\"schema_version\":\"ATIF-v1.6\",\"steps\":[{]}", f);
    fclose(f);
    PCH_CHECK(pch_storyline_import(g_ctx, bad, root, NULL, NULL, &e) == PCH_EINVAL);
    free(c1);
    c1 = slurp(cur, &n1);
    PCH_CHECK(c1 && strstr(c1, "\"version\":2"));
    char *got = NULL;
    size_t gn;
    PCH_CHECK_OK(pch_storyline_get(g_ctx, root, "mm-run-1@trajectory.json", false, &got, &gn, &e), &e);
    pch_free(g_ctx, got);
    free(c1);
}

static void test_storyline__assets_reference(void)
{
    char root[512], cur[600];
    pch_storyline_import_options o = PCH_STORYLINE_IMPORT_OPTIONS_INIT;
    pch_storyline_stats st;
    pch_error e;
    size_t n;
    snprintf(root, sizeof root, "%s/ref-root", g_tmp);
    snprintf(cur, sizeof cur, "%s/CURRENT", root);
    rmrf(root);
    o.assets = PCH_STORYLINE_ASSETS_REFERENCE;
    PCH_CHECK_OK(pch_storyline_import(g_ctx, "tests/data/atif/multimodal", root, &o, &st, &e), &e);
    PCH_CHECK_EQ_INT(st.assets_embedded, 0);
    PCH_CHECK_EQ_INT(st.objects, 0);
    char *c = slurp(cur, &n);
    PCH_CHECK(c && strstr(c, "\"self_contained\":false") && strstr(c, "\"assets\":\"reference\""));
    free(c);
    /* embed: the PNG used twice and the WAV are stored once each */
    rmrf(root);
    PCH_CHECK_OK(pch_storyline_import(g_ctx, "tests/data/atif/multimodal", root, NULL, &st, &e), &e);
    PCH_CHECK_EQ_INT(st.objects, 2);
    PCH_CHECK_EQ_INT(st.assets_embedded, 3);
}

/* Row counts against counts computed from the JSON with jansson (subagents included). */
static void count_traj(json_t *t, size_t *runs, size_t *steps, size_t *calls)
{
    json_t *s = json_object_get(t, "steps"), *sub = json_object_get(t, "subagent_trajectories");
    size_t i;
    json_t *x;
    (*runs)++;
    json_array_foreach(s, i, x) {
        (*steps)++;
        *calls += json_array_size(json_object_get(x, "tool_calls"));
    }
    json_array_foreach(sub, i, x) count_traj(x, runs, steps, calls);
}

static void test_storyline__row_counts(void)
{
    char root[512];
    const char *files[] = { "harbor_multiagent_v1_7.json", "exmp02_atif.json", "tool-calls.input.json" };
    size_t runs = 0, steps = 0, calls = 0;
    pch_storyline_stats st;
    pch_error e;
    char in[512];
    snprintf(in, sizeof in, "%s/counts-in", g_tmp);
    snprintf(root, sizeof root, "%s/counts-root", g_tmp);
    rmrf(in);
    rmrf(root);
    PCH_CHECK(mkdir(in, 0755) == 0);
    for (size_t i = 0; i < 3; i++) {
        char src[600], dst[600], cmd[1400];
        json_error_t je;
        snprintf(src, sizeof src, "tests/data/atif/%s", files[i]);
        snprintf(dst, sizeof dst, "%s/%s", in, files[i]);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
        PCH_CHECK(system(cmd) == 0);
        json_t *j = json_load_file(src, 0, &je);
        PCH_CHECK(j != NULL);
        count_traj(j, &runs, &steps, &calls);
        json_decref(j);
    }
    PCH_CHECK_OK(pch_storyline_import(g_ctx, in, root, NULL, &st, &e), &e);
    PCH_CHECK_EQ_INT(st.runs, runs);
    PCH_CHECK_EQ_INT(st.steps, steps);
    PCH_CHECK_EQ_INT(st.tool_calls, calls);
    pch_storyline_root *r = NULL;
    PCH_CHECK_OK(pch_storyline_open(&r, g_ctx, root, &e), &e);
    PCH_CHECK_EQ_INT(pch_lance_dataset_num_rows(pch_storyline_dataset(r, PCH_STORYLINE_RUNS)), runs);
    PCH_CHECK_EQ_INT(pch_lance_dataset_num_rows(pch_storyline_dataset(r, PCH_STORYLINE_STEPS)), steps);
    PCH_CHECK_EQ_INT(pch_lance_dataset_num_rows(pch_storyline_dataset(r, PCH_STORYLINE_TOOL_CALLS)), calls);
    pch_storyline_close(r);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "storyline_test");
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) != 0) return 2;
    snprintf(g_tmp, sizeof g_tmp, "%s/pch-storyline-test-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    mkdir(g_tmp, 0755);
    PCH_RUN(test_storyline__testdata_roundtrip);
    PCH_RUN(test_storyline__get_point_read);
    PCH_RUN(test_storyline__current_and_failed_import);
    PCH_RUN(test_storyline__assets_reference);
    PCH_RUN(test_storyline__row_counts);
    PCH_RUN(test_storyline__corpus_roundtrip);
    rmrf(g_tmp);
    pch_ctx_free(g_ctx);
    return pch_test_report();
}
