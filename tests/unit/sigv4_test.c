/* AWS Signature V4 against the AWS SigV4 test-suite vectors (tests/data/sigv4, README there):
** for each case the request in NAME.req is parsed, signed with the suite's credentials, and
** the canonical request, string to sign and Authorization value must equal NAME.creq,
** NAME.sts and NAME.authz byte for byte. The five cases that assume path normalisation (S3
** does none) must differ from the suite in the canonical path line only, and sign exactly
** when given the normalised path. Also the URI encoder, and HMAC-SHA-256 of RFC 4231. */
#include <dirent.h>

#include "harness.h"
#include "io/io_int.h"

#define DIR_ "tests/data/sigv4"
#define AK "AKIDEXAMPLE"
#define SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

static pch_ctx *ctx;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap + 1);
    size_t r;
    while ((r = fread(s + n, 1, cap - n, f)) > 0) n += r;
    fclose(f);
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

/* The suite's normalise-path cases: the path the suite signs after normalisation. */
static const char *normalised(const char *name)
{
    static const char *const map[][2] = {
        { "get-slash", "/" }, { "get-slashes", "/example/" }, { "get-relative", "/" },
        { "get-relative-relative", "/" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], name) == 0) return map[i][1];
    return NULL;
}

typedef struct parsed {
    char method[16];
    char path[512];
    pch_sigv4_pair query[16], headers[16];
    size_t nq, nh;
    char hv[16][512];     /* header values, continuation lines joined */
    const char *body;
    size_t body_len;
} parsed;

static int parse_req(char *req, size_t len, parsed *p)
{
    memset(p, 0, sizeof *p);
    char *eol = strchr(req, '\n');
    if (!eol) return -1;
    *eol = '\0';
    char *sp1 = strchr(req, ' '), *sp2 = strrchr(req, ' ');
    if (!sp1 || sp2 == sp1) return -1;
    snprintf(p->method, sizeof p->method, "%.*s", (int)(sp1 - req), req);
    char target[512];
    snprintf(target, sizeof target, "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
    char *qm = strchr(target, '?');
    if (qm) *qm = '\0';
    snprintf(p->path, sizeof p->path, "%s", target);
    if (qm) {
        static char qbuf[512];
        snprintf(qbuf, sizeof qbuf, "%s", qm + 1);
        for (char *tok = strtok(qbuf, "&"); tok && p->nq < 16; tok = strtok(NULL, "&")) {
            char *eq = strchr(tok, '=');
            pch_sigv4_pair *q = &p->query[p->nq++];
            q->name = tok; q->name_len = eq ? (size_t)(eq - tok) : strlen(tok);
            q->value = eq ? eq + 1 : ""; q->value_len = strlen(q->value);
        }
    }
    char *line = eol + 1, *end = req + len;
    while (line < end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        if (n == 0) { p->body = nl ? nl + 1 : end; p->body_len = (size_t)(end - p->body); break; }
        if ((line[0] == ' ' || line[0] == '\t') && p->nh) {    /* a folded continuation */
            char *v = p->hv[p->nh - 1];
            snprintf(v + strlen(v), 512 - strlen(v), " %.*s", (int)n, line);
            p->headers[p->nh - 1].value_len = strlen(v);
        } else {
            char *colon = memchr(line, ':', n);
            if (!colon || p->nh == 16) return -1;
            pch_sigv4_pair *h = &p->headers[p->nh];
            h->name = line; h->name_len = (size_t)(colon - line);
            snprintf(p->hv[p->nh], 512, "%.*s", (int)(n - h->name_len - 1), colon + 1);
            h->value = p->hv[p->nh]; h->value_len = strlen(h->value);
            p->nh++;
        }
        if (!nl) break;
        line = nl + 1;
    }
    return 0;
}

static int sign_case(const char *name, const char *path_override, pch_buf *creq, pch_buf *sts,
                     pch_buf *authz, pch_error *err)
{
    char fn[512];
    snprintf(fn, sizeof fn, DIR_ "/%s/%s.req", name, name);
    size_t len;
    char *req = slurp(fn, &len);
    if (!req) return pch_error_set(err, PCH_ENOTFOUND, "no %s", fn);
    parsed *p = calloc(1, sizeof *p);
    int rc = parse_req(req, len, p);
    if (rc) { free(p); free(req); return pch_error_set(err, PCH_EINVAL, "cannot parse %s", fn); }
    /* get-vanilla-with-session-token: the token comes with the credentials, not the request
    ** (README): the suite signs it as x-amz-security-token, as the SDKs do. */
    snprintf(fn, sizeof fn, DIR_ "/%s/%s.creq", name, name);
    char *want = slurp(fn, NULL);
    const char *tok = want ? strstr(want, "\nx-amz-security-token:") : NULL;
    static char token[256];
    bool has_tok_header = false;
    for (size_t i = 0; i < p->nh; i++)
        if (p->headers[i].name_len == 20 && strncasecmp(p->headers[i].name, "x-amz-security-token", 20) == 0)
            has_tok_header = true;
    if (tok && !has_tok_header && p->nh < 16) {
        tok += strlen("\nx-amz-security-token:");
        snprintf(token, sizeof token, "%.*s", (int)strcspn(tok, "\n"), tok);
        p->headers[p->nh++] = (pch_sigv4_pair){ "X-Amz-Security-Token", 20, token, strlen(token) };
    }
    free(want);
    char hash[2 * PCH_SHA256_LEN + 1];
    pch_sha256_hex(p->body ? p->body : "", p->body_len, hash);
    pch_sigv4_input in = {
        .method = p->method, .path = path_override ? path_override : p->path,
        .query = p->query, .n_query = p->nq, .headers = p->headers, .n_headers = p->nh,
        .payload_hash = hash, .amz_date = "20150830T123600Z", .region = "us-east-1",
        .service = "service", .access_key = AK, .secret_key = SK,
    };
    rc = pch_sigv4_sign(ctx, &in, creq, sts, authz, err);
    free(p);
    free(req);
    return rc;
}

static bool quiet;   /* a difference is expected: do not print it */

static bool equals_file(const pch_buf *b, const char *name, const char *ext)
{
    char fn[512];
    snprintf(fn, sizeof fn, DIR_ "/%s/%s.%s", name, name, ext);
    size_t len;
    char *want = slurp(fn, &len);
    bool ok = want && len == b->len && memcmp(want, b->data, len) == 0;
    if (!ok && !quiet) fprintf(stderr, "  %s.%s:\n--- want\n%s\n--- got\n%.*s\n", name, ext, want ? want : "(missing)",
                     (int)b->len, b->len ? (const char *)b->data : "");
    free(want);
    return ok;
}

/* The canonical request with its second line (the path) removed. */
static void drop_path_line(const char *s, size_t n, char *out, size_t cap)
{
    const char *a = memchr(s, '\n', n);
    const char *b = a ? memchr(a + 1, '\n', n - (size_t)(a + 1 - s)) : NULL;
    if (!a || !b) { snprintf(out, cap, "?"); return; }
    snprintf(out, cap, "%.*s%.*s", (int)(a - s), s, (int)(n - (size_t)(b - s)), b);
}

static void test_sigv4__suite(void)
{
    DIR *d = opendir(DIR_);
    PCH_CHECK(d != NULL);
    struct dirent *e;
    int cases = 0, normalise = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
        const char *name = e->d_name;
        pch_buf creq, sts, authz;
        pch_buf_init(&creq, ctx); pch_buf_init(&sts, ctx); pch_buf_init(&authz, ctx);
        pch_error err;
        int rc = sign_case(name, NULL, &creq, &sts, &authz, &err);
        if (rc) { closedir(d); PCH_CHECK_MSG(0, "%s: %s", name, err.msg); }
        const char *norm = normalised(name);
        bool ok;
        if (!norm) {
            ok = equals_file(&creq, name, "creq") && equals_file(&sts, name, "sts") &&
                 equals_file(&authz, name, "authz");
        } else {
            /* S3 does not normalise: ours keeps the raw path, everything else as the suite... */
            char fn[1024], a[2048], b[2048];
            snprintf(fn, sizeof fn, DIR_ "/%s/%s.creq", name, name);
            size_t wl = 0;
            char *want = slurp(fn, &wl);
            if (!want) { closedir(d); PCH_CHECK_MSG(0, "no %s", fn); }
            drop_path_line(want, wl, a, sizeof a);
            drop_path_line((const char *)creq.data, creq.len, b, sizeof b);
            quiet = true;
            ok = strcmp(a, b) == 0 && !equals_file(&authz, name, "authz");
            quiet = false;
            free(want);
            /* ... and given the normalised path, ours signs as the suite does. */
            pch_buf_clear(&creq); pch_buf_clear(&sts); pch_buf_clear(&authz);
            ok = ok && sign_case(name, norm, &creq, &sts, &authz, &err) == 0 &&
                 equals_file(&creq, name, "creq") && equals_file(&authz, name, "authz");
            normalise++;
        }
        pch_buf_dispose(&creq); pch_buf_dispose(&sts); pch_buf_dispose(&authz);
        if (!ok) { closedir(d); PCH_CHECK_MSG(0, "case %s", name); }
        cases++;
    }
    closedir(d);
    PCH_CHECK_EQ_INT(cases, 28);
    PCH_CHECK_EQ_INT(normalise, 4);
}

static void test_sigv4__encode(void)
{
    pch_buf b;
    pch_buf_init(&b, ctx);
    const char s[] = "a b/c~d%e+f\xe1\x88\xb4*";
    PCH_CHECK_OK(pch_sigv4_encode(&b, s, sizeof s - 1, true), NULL);
    PCH_CHECK(b.len == strlen("a%20b/c~d%25e%2Bf%E1%88%B4%2A") &&
              memcmp(b.data, "a%20b/c~d%25e%2Bf%E1%88%B4%2A", b.len) == 0);
    pch_buf_clear(&b);
    PCH_CHECK_OK(pch_sigv4_encode(&b, "x/y", 3, false), NULL);
    PCH_CHECK(b.len == 5 && memcmp(b.data, "x%2Fy", 5) == 0);
    pch_buf_dispose(&b);
}

static void test_sigv4__hmac_rfc4231(void)
{
    /* RFC 4231 test case 2 */
    uint8_t out[32];
    char hex[65];
    pch_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out);
    pch_hex_encode(hex, out, 32);
    hex[64] = '\0';
    PCH_CHECK_EQ_STR(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    pch_sha256_hex("", 0, hex);
    PCH_CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_sigv4__refuses_incomplete(void)
{
    pch_buf a;
    pch_buf_init(&a, ctx);
    pch_error err;
    pch_sigv4_input in = { .method = "GET", .path = "no-slash", .payload_hash = "x",
                           .amz_date = "20150830T123600Z", .region = "r", .service = "s",
                           .access_key = "a", .secret_key = "b" };
    PCH_CHECK_EQ_INT(pch_sigv4_sign(ctx, &in, NULL, NULL, &a, &err), PCH_EINVAL);
    in.path = "/";
    in.amz_date = "2015";
    PCH_CHECK_EQ_INT(pch_sigv4_sign(ctx, &in, NULL, NULL, &a, &err), PCH_EINVAL);
    pch_buf_dispose(&a);
}

int main(int argc, char **argv)
{
    pch_test_init(argc, argv, "sigv4_test");
    if (pch_ctx_new(&ctx, NULL, NULL, NULL)) return 1;
    PCH_RUN(test_sigv4__suite);
    PCH_RUN(test_sigv4__encode);
    PCH_RUN(test_sigv4__hmac_rfc4231);
    PCH_RUN(test_sigv4__refuses_incomplete);
    pch_ctx_free(ctx);
    return pch_test_report();
}
