/* Internals of src/io: AWS Signature V4, the range coalescer, S3's XML answers, and the two
** backends behind include/pchronicle/io.h. Depends on src/core only. */
#ifndef PCH_IO_INT_H
#define PCH_IO_INT_H

#include "core/core.h"
#include "pchronicle/io.h"

/* ---- libcurl and libcrypto, loaded at the first S3 use (dl.c) ---- */
#include <curl/curl.h>
#include <openssl/evp.h>

typedef struct pch_io_libs {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *h);
    void (*easy_reset)(CURL *h);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *m);
    CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_perform)(CURLM *m, int *running);
    CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *fds, unsigned n, int timeout_ms, int *numfds);
    CURLMsg *(*multi_info_read)(CURLM *m, int *left);
    int (*evp_digest)(const void *data, size_t n, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *impl);
    const EVP_MD *(*evp_sha256)(void);
    unsigned char *(*hmac)(const EVP_MD *md, const void *key, int key_len, const unsigned char *d, size_t n,
                           unsigned char *out, unsigned int *out_len);
} pch_io_libs;
extern pch_io_libs pch_io;
/* Load them once per process (later calls return the first answer): PCH_EUNSUPPORTED with
** what is missing. Every S3 store opens through it; pch_io's pointers are valid after it. */
int pch_io_load_libs(pch_error *err);

/* ---- SHA-256 and HMAC-SHA-256 (libcrypto; pch_io_load_libs first) ---- */
#define PCH_SHA256_LEN 32
void pch_sha256(const void *data, size_t len, uint8_t out[PCH_SHA256_LEN]);
void pch_sha256_hex(const void *data, size_t len, char out[2 * PCH_SHA256_LEN + 1]);
void pch_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                     uint8_t out[PCH_SHA256_LEN]);

/* ---- AWS Signature Version 4 (docs/object-storage.md "Signing") ---- */
typedef struct pch_sigv4_pair {   /* a header, or a query parameter (not yet encoded) */
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} pch_sigv4_pair;

typedef struct pch_sigv4_input {
    const char *method;           /* "GET" */
    const char *path;             /* absolute path, not encoded: "/bucket/key with space" */
    const pch_sigv4_pair *query;  /* decoded names and values, any order */
    size_t n_query;
    const pch_sigv4_pair *headers;/* every header sent and signed (host, x-amz-date, ...) */
    size_t n_headers;
    const char *payload_hash;     /* lower-case hex SHA-256 of the body, or UNSIGNED-PAYLOAD */
    const char *amz_date;         /* "20150830T123600Z" */
    const char *region;
    const char *service;          /* "s3" */
    const char *access_key;
    const char *secret_key;
} pch_sigv4_input;

/* URI-encode per SigV4: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper case); '/' kept
** when keep_slash. */
int pch_sigv4_encode(pch_buf *out, const char *s, size_t n, bool keep_slash);

/* Append the canonical request, the string to sign and the Authorization header value
** (each optional but authz) for in. */
int pch_sigv4_sign(pch_ctx *ctx, const pch_sigv4_input *in, pch_buf *creq, pch_buf *sts,
                   pch_buf *authz, pch_error *err);

/* ---- coalescing of ranged reads ---- */
typedef struct pch_io_span {   /* one request: [off, off+len) covering ranges[first..first+n) */
    uint64_t off, len;
    size_t first, n;
} pch_io_span;

/* order[] receives the indexes of ranges sorted by offset; spans[] (room for n) the merged
** requests: ranges whose gap to the span is <= gap merge while the span stays <= max (a single
** range longer than max is its own span). Returns the number of spans. */
size_t pch_io_coalesce(const pch_store_range *ranges, size_t n, uint64_t gap, uint64_t max,
                       size_t *order, pch_io_span *spans);

/* ---- S3's XML answers (a tag scanner: S3 answers are flat and machine-written) ---- */
/* Find the next <tag>...</tag> at or after *pos in xml[0..len); on success sets the raw
** content span and moves *pos past the closing tag. */
bool pch_xml_next(const char *xml, size_t len, size_t *pos, const char *tag,
                  const char **content, size_t *content_len);
/* Append content with the five entities and &#N; / &#xN; decoded. */
int pch_xml_unescape(pch_buf *out, const char *s, size_t n);

/* An entry of the tail cache (rfile.c): "PCHTAIL1", the object's size, the tail's offset and
** length (u64 LE), the BLAKE3 of the tail, the tail. True with the parts when it checks:
** lengths consistent, the tail at most PCH_RFILE_PROBE bytes and ending the object, the digest
** matching. */
bool pch_io_tail_parse(const uint8_t *b, size_t n, uint64_t *size, uint64_t *off, const uint8_t **tail, size_t *len);

/* ---- backends ---- */
typedef struct pch_store_ops {
    int (*get)(pch_store *st, const char *key, uint64_t max, uint8_t **data, size_t *len,
               pch_object_info *info, pch_error *err);
    int (*read_spans)(pch_store *st, const char *key, const pch_io_span *spans, size_t n_spans,
                      uint8_t **bufs, pch_error *err);
    int (*head)(pch_store *st, const char *key, pch_object_info *info, pch_error *err);
    int (*put)(pch_store *st, const char *key, const void *data, size_t len, unsigned flags,
               pch_error *err);
    int (*put_file)(pch_store *st, const char *key, const char *path, unsigned flags,
                    pch_error *err);
    int (*del)(pch_store *st, const char *key, pch_error *err);
    int (*list)(pch_store *st, const char *prefix,
                int (*cb)(void *arg, const pch_object_info *info), void *arg, pch_error *err);
    void (*close)(pch_store *st);
} pch_store_ops;

struct pch_store {
    pch_ctx *ctx;
    const pch_store_ops *ops;
    pch_store_options opt;
    pch_store_stats stats;
    char *uri;
    char *root;      /* local: the directory; s3: the key prefix ("" or "prefix/") */
    char *bucket;    /* s3 */
    void *impl;      /* backend state */
};

int pch_store_local_init(pch_store *st, pch_error *err);
int pch_store_s3_init(pch_store *st, pch_error *err);

int pch_s3_parse_list(pch_ctx *ctx, const char *xml, size_t len, size_t skip,
                      int (*cb)(void *arg, const pch_object_info *info), void *arg, bool *more, pch_buf *token,
                      pch_error *err);
int pch_store_s3_get_range(pch_store *st, const char *key, uint64_t off, uint64_t len, bool suffix, pch_buf *out,
                           uint64_t *first, uint64_t *total, pch_error *err);

/* A local file mapped for reading whole (*map NULL for an empty file); pch_io_unmap undoes it. */
int pch_io_map_file(const char *path, void **map, size_t *len, pch_error *err);
void pch_io_unmap(void *map, size_t len);

/* The key prefix joined with key (s3), or the path (local); checks the key. */
int pch_store_key_check(const char *key, pch_error *err);

#endif
