/* The S3 backend of include/pchronicle/io.h: libcurl, AWS Signature V4 (sigv4.c), retries.
**
** Requests run in batches on one curl multi handle, at most max_in_flight at once, each on
** an easy handle of a pool that keeps its connection alive between requests. A request that
** fails with a 5xx, a 429, a timeout, a reset or a short body is sent again after a random
** delay in [d/2, d], d = backoff_ms * 2^(round-1), up to max_attempts; no other 4xx is
** retried (docs/object-storage.md "S3"). A create-if-absent PUT that wins on a try whose answer
** was lost sees 412 on the next try: it then reads the object back and counts as won only if
** the bytes are its own. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/io_int.h"

typedef struct s3_impl {
    char *endpoint;   /* scheme://host[:port], no trailing '/' */
    char *host;       /* the Host header */
    bool path_style;  /* custom endpoint: ENDPOINT/bucket/key */
    char region[64];
    char *ak, *sk, *token;
    CURLM *multi;
    CURL **easy;      /* pool, max_in_flight handles, made on demand */
    size_t n_easy;
} s3_impl;

typedef struct s3_req {
    /* what to send */
    const char *method;
    const char *key;             /* below the store's prefix; NULL: the bucket itself */
    pch_sigv4_pair query[4];
    size_t nq;
    char range[64];              /* "bytes=A-B" or "" */
    bool if_none_match;
    const uint8_t *body;
    size_t body_len, body_pos;
    char body_hash[2 * PCH_SHA256_LEN + 1];
    /* where the answer goes: a fixed buffer (ranged reads) or a growing one */
    uint8_t *dst;
    size_t dst_cap, dst_len;
    bool overflow;
    pch_buf resp;
    uint64_t max;
    /* the answer */
    long status;
    CURLcode cc;
    char curl_err[CURL_ERROR_SIZE];
    char etag[72];
    char last_modified[40];
    uint64_t content_length;
    bool have_len;
    char content_range[96];
    /* bookkeeping */
    unsigned attempt;
    size_t idx;                  /* position in the batch */
    struct curl_slist *hdrs;
    CURL *easy;
    int rc;                      /* final status of the request */
    pch_error err;
} s3_req;


static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static char *sdup(pch_ctx *ctx, const char *s) { return s ? pch_strndup(ctx, s, strlen(s)) : NULL; }

static void req_init(pch_store *st, s3_req *r, const char *method, const char *key)
{
    memset(r, 0, sizeof *r);
    r->method = method;
    r->key = key;
    r->max = (uint64_t)64 << 20;
    pch_buf_init(&r->resp, st->ctx);
}

static void req_dispose(s3_req *r)
{
    pch_buf_dispose(&r->resp);
    if (r->hdrs) pch_io.slist_free_all(r->hdrs);
    r->hdrs = NULL;
}

static void req_query(s3_req *r, const char *name, const char *value)
{
    if (r->nq < 4) r->query[r->nq++] = (pch_sigv4_pair){ name, strlen(name), value, value ? strlen(value) : 0 };
}

static size_t on_write(char *p, size_t size, size_t n, void *arg)
{
    s3_req *r = arg;
    size_t len = size * n;
    long code = 0;
    pch_io.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
    if (r->dst && code >= 200 && code < 300) {
        if (len > r->dst_cap - r->dst_len) { r->overflow = true; return 0; }
        memcpy(r->dst + r->dst_len, p, len);
        r->dst_len += len;
        return len;
    }
    uint64_t lim = (r->dst || code >= 300) ? (uint64_t)64 << 10 : r->max;
    if (r->resp.len + len > lim) {
        if (code >= 300) return len;   /* an error body: its start is enough */
        r->overflow = true;
        return 0;
    }
    return pch_buf_append(&r->resp, p, len) ? 0 : len;
}

static size_t on_read(char *p, size_t size, size_t n, void *arg)
{
    s3_req *r = arg;
    size_t len = size * n, left = r->body_len - r->body_pos;
    if (len > left) len = left;
    if (len) memcpy(p, r->body + r->body_pos, len);
    r->body_pos += len;
    return len;
}

static void header_value(const char *h, size_t n, size_t name_len, char *out, size_t cap)
{
    const char *v = h + name_len;
    size_t vl = n - name_len;
    while (vl && (*v == ' ' || *v == '\t')) { v++; vl--; }
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ')) vl--;
    if (vl >= cap) vl = cap - 1;
    memcpy(out, v, vl);
    out[vl] = '\0';
}

static size_t on_header(char *h, size_t size, size_t n, void *arg)
{
    s3_req *r = arg;
    size_t len = size * n;
    if (len >= 5 && strncmp(h, "HTTP/", 5) == 0) {   /* a new answer (after 100 Continue) */
        r->etag[0] = r->last_modified[0] = r->content_range[0] = '\0';
        r->have_len = false;
    } else if (len > 5 && strncasecmp(h, "etag:", 5) == 0) {
        char v[72];
        header_value(h, len, 5, v, sizeof v);
        size_t vl = strlen(v);
        if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') { v[vl - 1] = '\0'; memmove(v, v + 1, vl - 1); }
        memcpy(r->etag, v, sizeof r->etag);
    } else if (len > 15 && strncasecmp(h, "content-length:", 15) == 0) {
        char v[32];
        header_value(h, len, 15, v, sizeof v);
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (end != v && !*end) { r->content_length = x; r->have_len = true; }
    } else if (len > 14 && strncasecmp(h, "content-range:", 14) == 0) {
        header_value(h, len, 14, r->content_range, sizeof r->content_range);
    } else if (len > 14 && strncasecmp(h, "last-modified:", 14) == 0) {
        header_value(h, len, 14, r->last_modified, sizeof r->last_modified);
    }
    return len;
}

/* The request path, not encoded: /bucket/prefix+key (path-style) or /prefix+key. */
static int req_path(pch_store *st, const s3_req *r, pch_buf *out)
{
    s3_impl *s3 = st->impl;
    pch_buf_clear(out);
    if (s3->path_style && (pch_buf_putc(out, '/') || pch_buf_append_str(out, st->bucket))) return PCH_ENOMEM;
    if (pch_buf_putc(out, '/')) return PCH_ENOMEM;
    if (r->key && (pch_buf_append_str(out, st->root) || pch_buf_append_str(out, r->key))) return PCH_ENOMEM;
    return PCH_OK;
}

static void amz_now(char out[17])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* Prepare r's easy handle for one attempt: URL, signed headers, body, sinks. */
static int req_prepare(pch_store *st, s3_req *r, CURL *easy)
{
    s3_impl *s3 = st->impl;
    pch_buf path, url, authz, hv;
    pch_buf_init(&path, st->ctx); pch_buf_init(&url, st->ctx);
    pch_buf_init(&authz, st->ctx); pch_buf_init(&hv, st->ctx);
    int rc = PCH_ENOMEM;
    char date[17];
    amz_now(date);
    r->easy = easy;
    r->status = 0; r->cc = CURLE_OK; r->curl_err[0] = '\0';
    r->dst_len = 0; r->overflow = false; r->body_pos = 0;
    r->etag[0] = r->last_modified[0] = r->content_range[0] = '\0';
    r->have_len = false;
    pch_buf_clear(&r->resp);
    if (r->hdrs) { pch_io.slist_free_all(r->hdrs); r->hdrs = NULL; }
    if (!r->body_hash[0]) pch_sha256_hex(r->body ? r->body : (const uint8_t *)"", r->body_len, r->body_hash);

    pch_sigv4_pair h[8];
    size_t nh = 0;
    h[nh++] = (pch_sigv4_pair){ "host", 4, s3->host, strlen(s3->host) };
    h[nh++] = (pch_sigv4_pair){ "x-amz-date", 10, date, 16 };
    h[nh++] = (pch_sigv4_pair){ "x-amz-content-sha256", 20, r->body_hash, strlen(r->body_hash) };
    if (s3->token) h[nh++] = (pch_sigv4_pair){ "x-amz-security-token", 20, s3->token, strlen(s3->token) };
    if (r->range[0]) h[nh++] = (pch_sigv4_pair){ "range", 5, r->range, strlen(r->range) };
    if (r->if_none_match) h[nh++] = (pch_sigv4_pair){ "if-none-match", 13, "*", 1 };
    if (req_path(st, r, &path)) goto out;
    pch_sigv4_input in = {
        .method = r->method, .path = (const char *)path.data, .query = r->query, .n_query = r->nq,
        .headers = h, .n_headers = nh, .payload_hash = r->body_hash, .amz_date = date,
        .region = s3->region, .service = "s3", .access_key = s3->ak, .secret_key = s3->sk,
    };
    pch_error e;
    if (pch_sigv4_sign(st->ctx, &in, NULL, NULL, &authz, &e)) goto out;
    if (pch_buf_append_str(&url, s3->endpoint) ||
        pch_sigv4_encode(&url, (const char *)path.data, path.len, true))
        goto out;
    for (size_t i = 0; i < r->nq; i++) {
        if (pch_buf_putc(&url, i ? '&' : '?') ||
            pch_sigv4_encode(&url, r->query[i].name, r->query[i].name_len, false))
            goto out;
        if (r->query[i].value && (pch_buf_putc(&url, '=') ||
                                  pch_sigv4_encode(&url, r->query[i].value, r->query[i].value_len, false)))
            goto out;
    }
    for (size_t i = 1; i < nh; i++) {   /* curl sends Host itself */
        pch_buf_clear(&hv);
        if (pch_buf_printf(&hv, "%.*s: %.*s", (int)h[i].name_len, h[i].name, (int)h[i].value_len, h[i].value)) goto out;
        struct curl_slist *l = pch_io.slist_append(r->hdrs, (const char *)hv.data);
        if (!l) goto out;
        r->hdrs = l;
    }
    pch_buf_clear(&hv);
    if (pch_buf_printf(&hv, "Authorization: %.*s", (int)authz.len, (const char *)authz.data)) goto out;
    struct curl_slist *l = pch_io.slist_append(r->hdrs, (const char *)hv.data);
    if (!l || !(l = pch_io.slist_append(l, "Expect:"))) goto out;
    r->hdrs = l;
    if (r->body && !(l = pch_io.slist_append(l, "Content-Type: application/octet-stream"))) goto out;
    r->hdrs = l;

    pch_io.easy_reset(easy);
    pch_io.easy_setopt(easy, CURLOPT_URL, (const char *)url.data);
    pch_io.easy_setopt(easy, CURLOPT_HTTPHEADER, r->hdrs);
    pch_io.easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
    pch_io.easy_setopt(easy, CURLOPT_WRITEDATA, r);
    pch_io.easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    pch_io.easy_setopt(easy, CURLOPT_HEADERDATA, r);
    pch_io.easy_setopt(easy, CURLOPT_ERRORBUFFER, r->curl_err);
    pch_io.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    pch_io.easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)st->opt.timeout_ms);
    pch_io.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)st->opt.connect_timeout_ms);
    pch_io.easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    pch_io.easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    pch_io.easy_setopt(easy, CURLOPT_PRIVATE, r);
    if (strcmp(r->method, "HEAD") == 0) {
        pch_io.easy_setopt(easy, CURLOPT_NOBODY, 1L);
    } else if (strcmp(r->method, "PUT") == 0) {
        pch_io.easy_setopt(easy, CURLOPT_UPLOAD, 1L);
        pch_io.easy_setopt(easy, CURLOPT_READFUNCTION, on_read);
        pch_io.easy_setopt(easy, CURLOPT_READDATA, r);
        pch_io.easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
    } else if (strcmp(r->method, "POST") == 0) {
        pch_io.easy_setopt(easy, CURLOPT_POST, 1L);
        pch_io.easy_setopt(easy, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
        pch_io.easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    } else if (strcmp(r->method, "GET") != 0) {
        pch_io.easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r->method);
    }
    st->stats.requests++;
    if (strcmp(r->method, "GET") == 0) st->stats.gets++;
    if (strcmp(r->method, "PUT") == 0) { st->stats.puts++; st->stats.bytes_written += r->body_len; }
    rc = PCH_OK;
out:
    pch_buf_dispose(&path); pch_buf_dispose(&url); pch_buf_dispose(&authz); pch_buf_dispose(&hv);
    return rc;
}

static bool retryable_curl(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT: case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: case CURLE_GOT_NOTHING: case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

/* The object's name for messages. */
static void obj_name(pch_store *st, const s3_req *r, char *out, size_t cap)
{
    snprintf(out, cap, "s3://%s/%s%s", st->bucket, st->root, r->key ? r->key : "");
}

/* Classify a finished attempt: 0 done, 1 retry, <0 failed (r->err set). */
static int req_outcome(pch_store *st, s3_req *r)
{
    char name[1200];
    obj_name(st, r, name, sizeof name);
    if (r->overflow) {
        if (r->dst) return pch_error_set(&r->err, PCH_ECORRUPT, "%s %s: the server sent more bytes than asked for", r->method, name);
        return pch_error_set(&r->err, PCH_ELIMIT, "%s %s: the answer is above the limit of %llu bytes", r->method, name,
                             (unsigned long long)r->max);
    }
    if (r->cc != CURLE_OK) {
        if (retryable_curl(r->cc)) return 1;
        return pch_error_set(&r->err, PCH_EIO, "%s %s: %s", r->method, name,
                             r->curl_err[0] ? r->curl_err : pch_io.easy_strerror(r->cc));
    }
    long s = r->status;
    if (s >= 200 && s < 300) return 0;
    if (s >= 500 || s == 429 || (s == 409 && r->if_none_match)) return 1;
    /* the S3 error document: <Error><Code>..</Code><Message>..</Message> */
    const char *code = NULL, *msg = NULL;
    size_t code_len = 0, msg_len = 0, pos = 0;
    const char *x = (const char *)r->resp.data;
    if (x && pch_xml_next(x, r->resp.len, &pos, "Code", &code, &code_len)) {
        pos = 0;
        pch_xml_next(x, r->resp.len, &pos, "Message", &msg, &msg_len);
    }
    char detail[300];
    snprintf(detail, sizeof detail, "%s%.*s%s%.*s", code ? " " : "", (int)(code_len > 80 ? 80 : code_len),
             code ? code : "", msg_len ? ": " : "", (int)(msg_len > 160 ? 160 : msg_len), msg ? msg : "");
    int st_code = s == 404 ? PCH_ENOTFOUND : s == 412 ? PCH_EEXISTS : s == 416 ? PCH_ECORRUPT
                : s == 400 || s == 405 || s == 411 ? PCH_EINVAL : PCH_EIO;
    if (s == 403)
        return pch_error_set(&r->err, PCH_EIO, "%s %s: access denied (HTTP 403%s): check AWS_ACCESS_KEY_ID, "
                             "AWS_SECRET_ACCESS_KEY and AWS_REGION", r->method, name, detail);
    return pch_error_set(&r->err, st_code, "%s %s: HTTP %ld%s", r->method, name, s, detail);
}

static int easy_get(s3_impl *s3, size_t i, CURL **out)
{
    if (!s3->easy[i] && !(s3->easy[i] = pch_io.easy_init())) return PCH_ENOMEM;
    *out = s3->easy[i];
    return PCH_OK;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) { }
}

/* Run every request of reqs[0..n): at most max_in_flight at once, retries in rounds. Each
** request's rc/err hold its result; returns the first failure's code (err set), or 0. */
static int run_batch(pch_store *st, s3_req **reqs, size_t n, pch_error *err)
{
    s3_impl *s3 = st->impl;
    size_t *pending = pch_malloc(st->ctx, (n ? n : 1) * sizeof *pending);
    if (!pending) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    size_t np = n;
    for (size_t i = 0; i < n; i++) { pending[i] = i; reqs[i]->rc = 1; reqs[i]->attempt = 0; reqs[i]->idx = i; }
    unsigned round = 0;
    while (np) {
        if (round) {   /* backoff with jitter (half fixed, half random) before a round of retries */
            uint64_t cap = (uint64_t)st->opt.backoff_ms << (round - 1 < 10 ? round - 1 : 10);
            uint32_t rnd = 0;
            pch_random_bytes(&rnd, sizeof rnd, NULL);
            sleep_ms((unsigned)(cap / 2 + (cap / 2 + 1) * (rnd % 1024) / 1024));
        }
        size_t next = 0, running = 0, nretry = 0;
        bool *busy = NULL;
        size_t nslots = st->opt.max_in_flight < s3->n_easy ? st->opt.max_in_flight : s3->n_easy;
        busy = pch_calloc(st->ctx, nslots, sizeof *busy);
        if (!busy) { np = 0; break; }
        while (next < np || running) {
            while (next < np && running < nslots) {
                size_t slot = 0;
                while (busy[slot]) slot++;
                s3_req *r = reqs[pending[next]];
                CURL *easy;
                if (easy_get(s3, slot, &easy) || req_prepare(st, r, easy)) {
                    r->rc = pch_error_set(&r->err, PCH_ENOMEM, "out of memory");
                    next++;
                    continue;
                }
                if (r->attempt) st->stats.retries++;
                r->attempt++;
                busy[slot] = true;
                pch_io.multi_add_handle(s3->multi, easy);
                running++; next++;
            }
            int still = 0;
            pch_io.multi_perform(s3->multi, &still);
            CURLMsg *m;
            int q;
            while ((m = pch_io.multi_info_read(s3->multi, &q))) {
                if (m->msg != CURLMSG_DONE) continue;
                s3_req *r = NULL;
                pch_io.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
                r->cc = m->data.result;
                pch_io.easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &r->status);
                pch_io.multi_remove_handle(s3->multi, m->easy_handle);
                for (size_t k = 0; k < nslots; k++)
                    if (s3->easy[k] == m->easy_handle) busy[k] = false;
                running--;
                int o = req_outcome(st, r);
                if (o == 1 && r->attempt < st->opt.max_attempts) {
                    pending[nretry++] = r->idx;
                } else if (o == 1) {
                    char name[1200];
                    obj_name(st, r, name, sizeof name);
                    if (r->cc != CURLE_OK)
                        r->rc = pch_error_set(&r->err, PCH_EIO, "%s %s: %s (after %u attempts)", r->method, name,
                                              r->curl_err[0] ? r->curl_err : pch_io.easy_strerror(r->cc), r->attempt);
                    else
                        r->rc = pch_error_set(&r->err, PCH_EIO, "%s %s: HTTP %ld (after %u attempts)", r->method,
                                              name, r->status, r->attempt);
                } else {
                    r->rc = o;
                }
            }
            if (running) pch_io.multi_poll(s3->multi, NULL, 0, 100, NULL);
        }
        pch_free(st->ctx, busy);
        np = nretry;
        round++;
    }
    int rc = PCH_OK;
    for (size_t i = 0; i < n; i++)
        if (reqs[i]->rc < 0 && rc == PCH_OK) { rc = reqs[i]->rc; if (err) *err = reqs[i]->err; }
        else if (reqs[i]->rc > 0 && rc == PCH_OK) rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
    pch_free(st->ctx, pending);
    return rc;
}

static int run_one(pch_store *st, s3_req *r, pch_error *err)
{
    s3_req *one[1] = { r };
    return run_batch(st, one, 1, err);
}

static void info_from(const s3_req *r, const char *key, uint64_t size, pch_object_info *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    info->key = key;
    info->size = size;
    snprintf(info->etag, sizeof info->etag, "%s", r->etag);
    if (r->last_modified[0]) {   /* RFC 7231 date: "Sun, 06 Nov 1994 08:49:37 GMT" */
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        if (strptime(r->last_modified, "%a, %d %b %Y %H:%M:%S GMT", &tm))
            info->mtime_ms = (int64_t)timegm(&tm) * 1000;
    }
}

static int s_get(pch_store *st, const char *key, uint64_t max, uint8_t **data, size_t *len,
                 pch_object_info *info, pch_error *err)
{
    s3_req r;
    req_init(st, &r, "GET", key);
    r.max = max;
    int rc = run_one(st, &r, err);
    if (rc == PCH_OK) {
        st->stats.bytes_requested += r.resp.len;
        if (r.have_len && r.content_length != r.resp.len)
            rc = pch_error_set(err, PCH_ECORRUPT, "GET %s: %zu bytes of %llu arrived", key, r.resp.len,
                               (unsigned long long)r.content_length);
    }
    if (rc == PCH_OK) {
        info_from(&r, key, r.resp.len, info);
        if (r.resp.len == 0 && pch_buf_reserve(&r.resp, 1)) rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        else { *len = r.resp.len; *data = pch_buf_detach(&r.resp, len); }
    }
    req_dispose(&r);
    return rc;
}

static int s_read_spans(pch_store *st, const char *key, const pch_io_span *spans, size_t n_spans,
                        uint8_t **bufs, pch_error *err)
{
    s3_req *rs = pch_calloc(st->ctx, n_spans, sizeof *rs);
    s3_req **pr = pch_calloc(st->ctx, n_spans, sizeof *pr);
    int rc;
    if (!rs || !pr) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto out; }
    for (size_t i = 0; i < n_spans; i++) {
        req_init(st, &rs[i], "GET", key);
        pr[i] = &rs[i];
        if (spans[i].len == 0) { rs[i].rc = 0; continue; }
        snprintf(rs[i].range, sizeof rs[i].range, "bytes=%llu-%llu", (unsigned long long)spans[i].off,
                 (unsigned long long)(spans[i].off + spans[i].len - 1));
        rs[i].dst = bufs[i];
        rs[i].dst_cap = (size_t)spans[i].len;
    }
    /* zero-length spans need no request: run the others */
    size_t k = 0;
    for (size_t i = 0; i < n_spans; i++) if (spans[i].len) pr[k++] = &rs[i];
    rc = run_batch(st, pr, k, err);
    for (size_t i = 0; rc == PCH_OK && i < k; i++) {
        s3_req *r = pr[i];
        st->stats.bytes_requested += r->dst_len;
        if (r->status != 206 || r->dst_len != r->dst_cap)
            rc = pch_error_set(err, PCH_ECORRUPT, "GET %s %s: HTTP %ld with %zu of %zu bytes", key, r->range,
                               r->status, r->dst_len, r->dst_cap);
    }
out:
    if (rs) for (size_t i = 0; i < n_spans; i++) req_dispose(&rs[i]);
    pch_free(st->ctx, rs);
    pch_free(st->ctx, pr);
    return rc;
}

static int s_head(pch_store *st, const char *key, pch_object_info *info, pch_error *err)
{
    s3_req r;
    req_init(st, &r, "HEAD", key);
    st->stats.heads++;
    int rc = run_one(st, &r, err);
    if (rc == PCH_OK) info_from(&r, key, r.content_length, info);
    req_dispose(&r);
    return rc;
}

/* A create-if-absent PUT answered 412 after a retry: ours if the stored bytes are ours. */
static int resolve_lost_answer(pch_store *st, const char *key, const void *data, size_t len, pch_error *err)
{
    uint8_t *got = NULL;
    size_t got_len = 0;
    pch_error e;
    int rc = s_get(st, key, (uint64_t)len, &got, &got_len, NULL, &e);
    bool ours = rc == PCH_OK && got_len == len && memcmp(got, data, len) == 0;
    pch_free(st->ctx, got);
    if (ours) return PCH_OK;
    return pch_error_set(err, PCH_EEXISTS, "s3://%s/%s%s already exists", st->bucket, st->root, key);
}

static int s_put(pch_store *st, const char *key, const void *data, size_t len, unsigned flags, pch_error *err)
{
    s3_req r;
    req_init(st, &r, "PUT", key);
    r.body = data;
    r.body_len = len;
    r.if_none_match = (flags & PCH_PUT_IF_ABSENT) != 0;
    int rc = run_one(st, &r, err);
    if (rc == PCH_EEXISTS && r.if_none_match && r.attempt > 1) rc = resolve_lost_answer(st, key, data, len, err);
    else if (rc == PCH_EEXISTS)
        rc = pch_error_set(err, PCH_EEXISTS, "s3://%s/%s%s already exists", st->bucket, st->root, key);
    req_dispose(&r);
    return rc;
}

static int multipart(pch_store *st, const char *key, const uint8_t *data, uint64_t size, pch_error *err)
{
    s3_req r;
    req_init(st, &r, "POST", key);
    req_query(&r, "uploads", "");
    int rc = run_one(st, &r, err);
    char upload_id[512] = "";
    if (rc == PCH_OK) {
        const char *v;
        size_t vl, pos = 0;
        pch_buf id;
        pch_buf_init(&id, st->ctx);
        if (!pch_xml_next((const char *)r.resp.data, r.resp.len, &pos, "UploadId", &v, &vl) ||
            pch_xml_unescape(&id, v, vl) || id.len == 0 || id.len >= sizeof upload_id)
            rc = pch_error_set(err, PCH_ECORRUPT, "POST %s?uploads: no UploadId in the answer", key);
        else
            memcpy(upload_id, id.data, id.len + 1);
        pch_buf_dispose(&id);
    }
    req_dispose(&r);
    if (rc) return rc;

    uint64_t psz = st->opt.part_size;
    size_t nparts = (size_t)((size + psz - 1) / psz);
    if (nparts > 10000) { psz = (size + 9999) / 10000; nparts = (size_t)((size + psz - 1) / psz); }
    s3_req *parts = pch_calloc(st->ctx, nparts, sizeof *parts);
    s3_req **pp = pch_calloc(st->ctx, nparts, sizeof *pp);
    char (*numbers)[24] = pch_calloc(st->ctx, nparts, sizeof *numbers);
    pch_buf body;
    pch_buf_init(&body, st->ctx);
    if (!parts || !pp || !numbers) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto abort; }
    for (size_t i = 0; i < nparts; i++) {
        req_init(st, &parts[i], "PUT", key);
        snprintf(numbers[i], sizeof numbers[i], "%zu", i + 1);
        req_query(&parts[i], "partNumber", numbers[i]);
        req_query(&parts[i], "uploadId", upload_id);
        parts[i].body = data + (uint64_t)i * psz;
        parts[i].body_len = (size_t)(i + 1 < nparts ? psz : size - (uint64_t)i * psz);
        pp[i] = &parts[i];
    }
    /* the parts in batches of max_in_flight (run_batch bounds requests in flight itself) */
    if ((rc = run_batch(st, pp, nparts, err)) < 0) goto abort;
    if (pch_buf_append_str(&body, "<CompleteMultipartUpload>")) goto oom;
    for (size_t i = 0; i < nparts; i++) {
        if (!parts[i].etag[0]) { rc = pch_error_set(err, PCH_ECORRUPT, "PUT %s part %zu: no ETag", key, i + 1); goto abort; }
        if (pch_buf_printf(&body, "<Part><PartNumber>%zu</PartNumber><ETag>\"%s\"</ETag></Part>", i + 1, parts[i].etag))
            goto oom;
    }
    if (pch_buf_append_str(&body, "</CompleteMultipartUpload>")) goto oom;
    req_init(st, &r, "POST", key);
    req_query(&r, "uploadId", upload_id);
    r.body = body.data;
    r.body_len = body.len;
    rc = run_one(st, &r, err);
    /* S3 may answer 200 and put the failure in the body */
    if (rc == PCH_OK && r.resp.data && memmem(r.resp.data, r.resp.len, "<Error>", 7)) {
        size_t pos = 0, cl = 0;
        const char *c = NULL;
        pch_xml_next((const char *)r.resp.data, r.resp.len, &pos, "Code", &c, &cl);
        rc = pch_error_set(err, PCH_EIO, "completing the upload of %s failed: %.*s", key, (int)cl, c ? c : "");
    }
    req_dispose(&r);
    if (rc == PCH_OK) goto done;
    goto abort;
oom:
    rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
abort:
    {   /* abort, so that no parts stay stored (and billed) */
        s3_req a;
        req_init(st, &a, "DELETE", key);
        req_query(&a, "uploadId", upload_id);
        pch_error e;
        (void)run_one(st, &a, &e);
        req_dispose(&a);
    }
done:
    if (parts) for (size_t i = 0; i < nparts; i++) req_dispose(&parts[i]);
    pch_free(st->ctx, parts);
    pch_free(st->ctx, pp);
    pch_free(st->ctx, numbers);
    pch_buf_dispose(&body);
    return rc;
}

static int s_put_file(pch_store *st, const char *key, const char *path, unsigned flags, pch_error *err)
{
    void *map;
    size_t size;
    PCH_TRY(pch_io_map_file(path, &map, &size, err));
    int rc;
    if (size > st->opt.multipart_threshold && (flags & PCH_PUT_IF_ABSENT))
        rc = pch_error_set(err, PCH_EUNSUPPORTED, "%s: a create-if-absent upload above the multipart "
                           "threshold (%llu bytes) is not atomic on every S3 server", key,
                           (unsigned long long)st->opt.multipart_threshold);
    else if (size > st->opt.multipart_threshold)
        rc = multipart(st, key, map, size, err);
    else
        rc = s_put(st, key, size ? map : "", size, flags, err);
    pch_io_unmap(map, size);
    return rc;
}

static int s_del(pch_store *st, const char *key, pch_error *err)
{
    s3_req r;
    req_init(st, &r, "DELETE", key);
    st->stats.deletes++;
    int rc = run_one(st, &r, err);
    if (rc == PCH_ENOTFOUND) rc = PCH_OK;
    req_dispose(&r);
    return rc;
}

/* One ListObjectsV2 answer: each <Contents> entry to cb (its key without the first skip
** bytes, which must be there), *more and *token from <IsTruncated> and
** <NextContinuationToken>. Everything is checked: a malformed answer is PCH_ECORRUPT. */
int pch_s3_parse_list(pch_ctx *ctx, const char *x, size_t xl, size_t skip,
                      int (*cb)(void *arg, const pch_object_info *info), void *arg, bool *more, pch_buf *token,
                      pch_error *err)
{
    pch_buf key;
    pch_buf_init(&key, ctx);
    size_t pos = 0, cl;
    const char *c, *v;
    size_t vl;
    int rc = PCH_OK;
    *more = false;
    pch_buf_clear(token);
    while (rc == PCH_OK && pch_xml_next(x, xl, &pos, "Contents", &c, &cl)) {
        size_t p2 = 0;
        pch_object_info info;
        memset(&info, 0, sizeof info);
        pch_buf_clear(&key);
        if (!pch_xml_next(c, cl, &p2, "Key", &v, &vl) || pch_xml_unescape(&key, v, vl) || key.len < skip || key.len == skip ||
            memchr(key.data, 0, key.len) || pch_buf_reserve(&key, 1)) {
            rc = pch_error_set(err, PCH_ECORRUPT, "an entry of a listing without a valid key");
            break;
        }
        key.data[key.len] = '\0';
        info.key = (const char *)key.data + skip;
        p2 = 0;
        if (pch_xml_next(c, cl, &p2, "Size", &v, &vl)) {
            uint64_t n = 0;
            for (size_t i = 0; i < vl; i++) {
                if (v[i] < '0' || v[i] > '9' || n > (UINT64_MAX - 9) / 10) { rc = PCH_ECORRUPT; break; }
                n = n * 10 + (uint64_t)(v[i] - '0');
            }
            if (rc || vl == 0) { rc = pch_error_set(err, PCH_ECORRUPT, "listing: bad <Size> of %s", info.key); break; }
            info.size = n;
        }
        p2 = 0;
        if (pch_xml_next(c, cl, &p2, "ETag", &v, &vl)) {
            pch_buf e;
            pch_buf_init(&e, ctx);
            if (pch_xml_unescape(&e, v, vl) == 0 && e.len) {
                const char *q = (const char *)e.data;
                size_t n = e.len;
                if (n >= 2 && q[0] == '"' && q[n - 1] == '"') { q++; n -= 2; }
                snprintf(info.etag, sizeof info.etag, "%.*s", (int)(n < sizeof info.etag ? n : sizeof info.etag - 1), q);
            }
            pch_buf_dispose(&e);
        }
        p2 = 0;
        if (pch_xml_next(c, cl, &p2, "LastModified", &v, &vl)) {
            int64_t ms;
            if (pch_time_parse_iso8601(&ms, v, vl, NULL) == 0) info.mtime_ms = ms;
        }
        rc = cb(arg, &info);
    }
    if (rc == PCH_OK) {
        pos = 0;
        *more = pch_xml_next(x, xl, &pos, "IsTruncated", &v, &vl) && vl == 4 && memcmp(v, "true", 4) == 0;
        pos = 0;
        if (*more && (!pch_xml_next(x, xl, &pos, "NextContinuationToken", &v, &vl) || pch_xml_unescape(token, v, vl) ||
                      token->len == 0 || memchr(token->data, 0, token->len) || pch_buf_reserve(token, 1))) {
            rc = pch_error_set(err, PCH_ECORRUPT, "a truncated listing without a continuation token");
            *more = false;
        }
        if (token->data) token->data[token->len] = '\0';
    }
    pch_buf_dispose(&key);
    return rc;
}

static int s_list(pch_store *st, const char *prefix, int (*cb)(void *arg, const pch_object_info *info),
                  void *arg, pch_error *err)
{
    pch_buf full, token;
    pch_buf_init(&full, st->ctx); pch_buf_init(&token, st->ctx);
    int rc = PCH_OK;
    if (pch_buf_append_str(&full, st->root) || pch_buf_append_str(&full, prefix)) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        goto out;
    }
    for (bool more = true; more && rc == PCH_OK;) {
        s3_req r;
        req_init(st, &r, "GET", NULL);
        req_query(&r, "list-type", "2");
        req_query(&r, "prefix", (const char *)full.data);
        if (token.len) req_query(&r, "continuation-token", (const char *)token.data);
        st->stats.lists++;
        rc = run_one(st, &r, err);
        if (rc == PCH_OK) {
            pch_buf next;
            pch_buf_init(&next, st->ctx);
            rc = pch_s3_parse_list(st->ctx, r.resp.data ? (const char *)r.resp.data : "", r.resp.len, strlen(st->root), cb, arg,
                                   &more, &next, err);
            if (rc == PCH_ECORRUPT) pch_error_prefix(err, "list of s3://%s/%s", st->bucket, (const char *)full.data);
            pch_buf_move(&next, &token);
        }
        req_dispose(&r);
    }
out:
    pch_buf_dispose(&full); pch_buf_dispose(&token);
    return rc;
}

static void s_close(pch_store *st)
{
    s3_impl *s3 = st->impl;
    if (!s3) return;
    for (size_t i = 0; i < s3->n_easy; i++) if (s3->easy[i]) pch_io.easy_cleanup(s3->easy[i]);
    pch_free(st->ctx, s3->easy);
    if (s3->multi) pch_io.multi_cleanup(s3->multi);
    pch_free(st->ctx, s3->endpoint); pch_free(st->ctx, s3->host);
    pch_free(st->ctx, s3->ak); pch_free(st->ctx, s3->sk); pch_free(st->ctx, s3->token);
    pch_free(st->ctx, s3);
    st->impl = NULL;
}

static const pch_store_ops s3_ops = {
    s_get, s_read_spans, s_head, s_put, s_put_file, s_del, s_list, s_close,
};

int pch_store_s3_init(pch_store *st, pch_error *err)
{
    PCH_TRY(pch_io_load_libs(err));
    const char *u = st->uri + 5, *slash = strchr(u, '/');
    size_t bl = slash ? (size_t)(slash - u) : strlen(u);
    if (bl < 3 || bl > 63) return pch_error_set(err, PCH_EINVAL, "%s: the bucket name must be 3 to 63 characters", st->uri);
    for (size_t i = 0; i < bl; i++) {
        char c = u[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return pch_error_set(err, PCH_EINVAL, "%s: a bucket name has lower-case letters, digits, '-' and '.' only", st->uri);
    }
    /* the prefix: "" or "a/b/" (keys are appended to it) */
    const char *pre = slash ? slash + 1 : "";
    size_t pl = strlen(pre);
    while (pl && pre[pl - 1] == '/') pl--;
    if (pl) {
        char tmp[1100];
        if (pl >= sizeof tmp) return pch_error_set(err, PCH_EINVAL, "%s: prefix too long", st->uri);
        memcpy(tmp, pre, pl); tmp[pl] = '\0';
        int rc = pch_store_key_check(tmp, err);
        if (rc) return pch_error_prefix(err, "%s", st->uri);
    }
    s3_impl *s3 = pch_calloc(st->ctx, 1, sizeof *s3);
    if (!s3) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    st->impl = s3;
    st->ops = &s3_ops;
    if (!(st->bucket = pch_strndup(st->ctx, u, bl))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if (!(st->root = pch_malloc(st->ctx, pl + 2))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    memcpy(st->root, pre, pl);
    if (pl) st->root[pl++] = '/';
    st->root[pl] = '\0';

    const char *ak = env("AWS_ACCESS_KEY_ID"), *sk = env("AWS_SECRET_ACCESS_KEY");
    if (!ak || !sk)
        return pch_error_set(err, PCH_EINVAL, "%s: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", st->uri);
    const char *region = env("AWS_REGION");
    if (!region) region = env("AWS_DEFAULT_REGION");
    if (!region) region = "us-east-1";
    if (strlen(region) >= sizeof s3->region) return pch_error_set(err, PCH_EINVAL, "AWS_REGION is too long");
    snprintf(s3->region, sizeof s3->region, "%s", region);
    const char *ep = env("AWS_ENDPOINT_URL_S3");
    if (!ep) ep = env("AWS_ENDPOINT_URL");
    char buf[600];
    if (ep) {
        size_t n = strlen(ep);
        while (n && ep[n - 1] == '/') n--;
        const char *h = strstr(ep, "://");
        if (!h || n >= sizeof buf || (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0))
            return pch_error_set(err, PCH_EINVAL, "AWS_ENDPOINT_URL '%s' is not an http:// or https:// URL", ep);
        h += 3;
        size_t hl = n - (size_t)(h - ep);
        if (memchr(h, '/', hl) || hl == 0)
            return pch_error_set(err, PCH_EINVAL, "AWS_ENDPOINT_URL '%s' must be scheme://host[:port]", ep);
        s3->endpoint = pch_strndup(st->ctx, ep, n);
        s3->host = pch_strndup(st->ctx, h, hl);
        s3->path_style = true;
    } else {
        if (strchr(st->bucket, '.'))
            return pch_error_set(err, PCH_EUNSUPPORTED, "%s: a bucket name with '.' needs AWS_ENDPOINT_URL (path-style)", st->uri);
        snprintf(buf, sizeof buf, "%s.s3.%s.amazonaws.com", st->bucket, s3->region);
        s3->host = sdup(st->ctx, buf);
        snprintf(buf, sizeof buf, "https://%s.s3.%s.amazonaws.com", st->bucket, s3->region);
        s3->endpoint = sdup(st->ctx, buf);
    }
    s3->ak = sdup(st->ctx, ak);
    s3->sk = sdup(st->ctx, sk);
    const char *tok = env("AWS_SESSION_TOKEN");
    if (tok && !(s3->token = sdup(st->ctx, tok))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    s3->n_easy = st->opt.max_in_flight;
    if (!s3->endpoint || !s3->host || !s3->ak || !s3->sk ||
        !(s3->easy = pch_calloc(st->ctx, s3->n_easy, sizeof *s3->easy)) || !(s3->multi = pch_io.multi_init()))
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    return PCH_OK;
}

/* One ranged GET for pch_rfile (rfile.c): bytes [off, off+len), or with suffix the last len
** bytes (which also tells the object's size). *first and *total come from Content-Range. A
** range that the object's end cuts short is answered as such (the caller compares *total with
** the size it expected and says which). */
int pch_store_s3_get_range(pch_store *st, const char *key, uint64_t off, uint64_t len, bool suffix, pch_buf *out,
                           uint64_t *first, uint64_t *total, pch_error *err)
{
    s3_req r;
    req_init(st, &r, "GET", key);
    if (len == 0) return pch_error_set(err, PCH_EINVAL, "GET %s: an empty range", key);
    if (suffix) snprintf(r.range, sizeof r.range, "bytes=-%llu", (unsigned long long)len);
    else snprintf(r.range, sizeof r.range, "bytes=%llu-%llu", (unsigned long long)off, (unsigned long long)(off + len - 1));
    r.max = len;
    int rc = run_one(st, &r, err);
    unsigned long long a = 0, b = 0, t = 0;
    if (rc == PCH_OK) {
        st->stats.bytes_requested += r.resp.len;
        if (r.status != 206 || sscanf(r.content_range, "bytes %llu-%llu/%llu", &a, &b, &t) != 3 || b < a || b >= t ||
            b - a + 1 != r.resp.len || (!suffix && (a != off || (r.resp.len != len && b + 1 != t))) || (suffix && b + 1 != t))
            rc = pch_error_set(err, PCH_ECORRUPT, "GET %s %s: HTTP %ld, Content-Range '%s' with %zu bytes", key, r.range,
                               r.status, r.content_range, r.resp.len);
    }
    if (rc == PCH_OK) {
        *first = a;
        *total = t;
        pch_buf_move(&r.resp, out);
    }
    req_dispose(&r);
    return rc;
}
