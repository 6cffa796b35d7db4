/* AWS Signature Version 4 (the "AWS4-HMAC-SHA256" scheme), written here and checked against
** the AWS SigV4 test-suite vectors (tests/data/sigv4, tests/unit/sigv4_test.c).
**
** The canonical request is METHOD, the URI-encoded path, the sorted encoded query, the
** lower-cased sorted headers with trimmed values (duplicates joined by ','), the signed header
** names and the payload hash, one per line. S3 neither normalises nor double-encodes paths,
** so the path is encoded once, '/' kept (docs/object-storage.md "Signing"). SHA-256 and HMAC
** come from libcrypto, loaded with libcurl (dl.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_int.h"

/* Only S3 signs, and every S3 store loads libcrypto first (pch_io_load_libs); a caller that
** did not is a bug, stopped here rather than signing with a digest that is not one. */
static void need_libs(void)
{
    pch_error e;
    if (pch_io_load_libs(&e) < 0) {
        fprintf(stderr, "pchronicle: %s\n", e.msg);
        abort();
    }
}

void pch_sha256(const void *data, size_t len, uint8_t out[PCH_SHA256_LEN])
{
    unsigned int n = PCH_SHA256_LEN;
    need_libs();
    pch_io.evp_digest(data, len, out, &n, pch_io.evp_sha256(), NULL);
}

void pch_sha256_hex(const void *data, size_t len, char out[2 * PCH_SHA256_LEN + 1])
{
    uint8_t d[PCH_SHA256_LEN];
    pch_sha256(data, len, d);
    pch_hex_encode(out, d, sizeof d);
    out[2 * PCH_SHA256_LEN] = '\0';
}

void pch_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                     uint8_t out[PCH_SHA256_LEN])
{
    unsigned int n = PCH_SHA256_LEN;
    need_libs();
    pch_io.hmac(pch_io.evp_sha256(), key, (int)key_len, data, len, out, &n);
}

static bool unreserved(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

int pch_sigv4_encode(pch_buf *out, const char *s, size_t n, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        int rc;
        if (unreserved(c) || (keep_slash && c == '/')) rc = pch_buf_putc(out, c);
        else {
            char e[3] = { '%', hex[c >> 4], hex[c & 15] };
            rc = pch_buf_append(out, e, 3);
        }
        if (rc) return rc;
    }
    return PCH_OK;
}

typedef struct enc_pair {  /* an encoded query pair, or a canonical header */
    char *name;
    char *value;
    size_t index;          /* position in the input: keeps duplicate headers in order */
} enc_pair;

static int pair_cmp(const void *a, const void *b)
{
    const enc_pair *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int query_cmp(const void *a, const void *b)
{
    const enc_pair *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static void pairs_free(pch_ctx *ctx, enc_pair *p, size_t n)
{
    if (!p) return;
    for (size_t i = 0; i < n; i++) { pch_free(ctx, p[i].name); pch_free(ctx, p[i].value); }
    pch_free(ctx, p);
}

static char *buf_str(pch_ctx *ctx, pch_buf *b)
{
    char *s = pch_strndup(ctx, b->len ? (const char *)b->data : "", b->len);
    pch_buf_clear(b);
    return s;
}

/* A header value trimmed, and every run of spaces and tabs inside it made one space. */
static int trim_value(pch_buf *out, const char *v, size_t n)
{
    size_t i = 0, e = n;
    while (i < e && (v[i] == ' ' || v[i] == '\t')) i++;
    while (e > i && (v[e - 1] == ' ' || v[e - 1] == '\t')) e--;
    bool space = false;
    for (; i < e; i++) {
        char c = v[i];
        if (c == ' ' || c == '\t') { space = true; continue; }
        if (space && pch_buf_putc(out, ' ')) return PCH_ENOMEM;
        space = false;
        if (pch_buf_putc(out, (uint8_t)c)) return PCH_ENOMEM;
    }
    return PCH_OK;
}

int pch_sigv4_sign(pch_ctx *ctx, const pch_sigv4_input *in, pch_buf *creq_out, pch_buf *sts_out,
                   pch_buf *authz, pch_error *err)
{
    int rc = PCH_ENOMEM;
    pch_buf creq, tmp, sts, signed_hdrs;
    pch_buf_init(&creq, ctx); pch_buf_init(&tmp, ctx); pch_buf_init(&sts, ctx);
    pch_buf_init(&signed_hdrs, ctx);
    enc_pair *q = NULL, *h = NULL;
    size_t nq = 0, nh = 0;
    if (!in->method || !in->path || in->path[0] != '/' || !in->amz_date || strlen(in->amz_date) != 16 ||
        !in->region || !in->service || !in->access_key || !in->secret_key || !in->payload_hash) {
        rc = pch_error_set(err, PCH_EINVAL, "sigv4: incomplete request to sign");
        goto out;
    }
    if (in->n_query && !(q = pch_calloc(ctx, in->n_query, sizeof *q))) goto oom;
    for (; nq < in->n_query; nq++) {
        const pch_sigv4_pair *p = &in->query[nq];
        if (pch_sigv4_encode(&tmp, p->name, p->name_len, false)) goto oom;
        if (!(q[nq].name = buf_str(ctx, &tmp))) goto oom;
        if (pch_sigv4_encode(&tmp, p->value ? p->value : "", p->value ? p->value_len : 0, false)) goto oom;
        if (!(q[nq].value = buf_str(ctx, &tmp))) goto oom;
    }
    if (nq > 1) qsort(q, nq, sizeof *q, query_cmp);
    if (in->n_headers && !(h = pch_calloc(ctx, in->n_headers, sizeof *h))) goto oom;
    for (; nh < in->n_headers; nh++) {
        const pch_sigv4_pair *p = &in->headers[nh];
        for (size_t i = 0; i < p->name_len; i++) {
            char c = p->name[i];
            if (pch_buf_putc(&tmp, (uint8_t)(c >= 'A' && c <= 'Z' ? c + 32 : c))) goto oom;
        }
        if (!(h[nh].name = buf_str(ctx, &tmp))) goto oom;
        if (trim_value(&tmp, p->value, p->value_len)) goto oom;
        if (!(h[nh].value = buf_str(ctx, &tmp))) goto oom;
        h[nh].index = nh;
    }
    if (nh > 1) qsort(h, nh, sizeof *h, pair_cmp);

    /* the canonical request */
    if (pch_buf_printf(&creq, "%s\n", in->method)) goto oom;
    if (pch_sigv4_encode(&creq, in->path, strlen(in->path), true) || pch_buf_putc(&creq, '\n')) goto oom;
    for (size_t i = 0; i < nq; i++)
        if (pch_buf_printf(&creq, "%s%s=%s", i ? "&" : "", q[i].name, q[i].value)) goto oom;
    if (pch_buf_putc(&creq, '\n')) goto oom;
    for (size_t i = 0; i < nh; i++) {
        bool first = i == 0 || strcmp(h[i].name, h[i - 1].name) != 0;
        bool last = i + 1 == nh || strcmp(h[i].name, h[i + 1].name) != 0;
        if (first && (pch_buf_printf(&creq, "%s:", h[i].name) ||
                      (signed_hdrs.len && pch_buf_putc(&signed_hdrs, ';')) ||
                      pch_buf_append_str(&signed_hdrs, h[i].name)))
            goto oom;
        if (!first && pch_buf_putc(&creq, ',')) goto oom;
        if (pch_buf_append_str(&creq, h[i].value)) goto oom;
        if (last && pch_buf_putc(&creq, '\n')) goto oom;
    }
    if (pch_buf_putc(&creq, '\n') || pch_buf_append(&creq, signed_hdrs.data, signed_hdrs.len) ||
        pch_buf_printf(&creq, "\n%s", in->payload_hash))
        goto oom;

    /* the string to sign */
    char date[9], creq_hash[2 * PCH_SHA256_LEN + 1];
    memcpy(date, in->amz_date, 8); date[8] = '\0';
    pch_sha256_hex(creq.data, creq.len, creq_hash);
    if (pch_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", in->amz_date, date,
                       in->region, in->service, creq_hash))
        goto oom;

    /* the signing key: HMAC("AWS4" + secret, date) -> region -> service -> "aws4_request" */
    uint8_t k[PCH_SHA256_LEN];
    if (pch_buf_printf(&tmp, "AWS4%s", in->secret_key)) goto oom;
    pch_hmac_sha256(tmp.data, tmp.len, date, 8, k);
    pch_buf_clear(&tmp);
    pch_hmac_sha256(k, sizeof k, in->region, strlen(in->region), k);
    pch_hmac_sha256(k, sizeof k, in->service, strlen(in->service), k);
    pch_hmac_sha256(k, sizeof k, "aws4_request", 12, k);
    uint8_t sig[PCH_SHA256_LEN];
    char sig_hex[2 * PCH_SHA256_LEN + 1];
    pch_hmac_sha256(k, sizeof k, sts.data, sts.len, sig);
    pch_hex_encode(sig_hex, sig, sizeof sig);
    sig_hex[2 * PCH_SHA256_LEN] = '\0';
    if (pch_buf_printf(authz, "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=",
                       in->access_key, date, in->region, in->service) ||
        pch_buf_append(authz, signed_hdrs.data, signed_hdrs.len) ||
        pch_buf_printf(authz, ", Signature=%s", sig_hex))
        goto oom;
    if (creq_out && pch_buf_append(creq_out, creq.data, creq.len)) goto oom;
    if (sts_out && pch_buf_append(sts_out, sts.data, sts.len)) goto oom;
    rc = PCH_OK;
    goto out;
oom:
    rc = pch_error_set(err, PCH_ENOMEM, "sigv4: out of memory");
out:
    pairs_free(ctx, q, nq);
    pairs_free(ctx, h, nh);
    pch_buf_dispose(&creq); pch_buf_dispose(&tmp); pch_buf_dispose(&sts);
    pch_buf_dispose(&signed_hdrs);
    return rc;
}
