/* Object stores: a local directory or an S3-compatible bucket behind one interface
** (RFC-0006 §4.1 "本地文件和 S3-compatible object store", §10.2, §20.2; docs/object-storage.md).
**
** A store is opened on a root: a local directory path, or `s3://bucket[/prefix]`. Keys are
** relative to the root, '/'-separated, never empty, never with "." or ".." segments.
**
** S3 goes through libcurl with AWS Signature V4 (written here, tested against the AWS
** test-suite vectors). Credentials and endpoint come from the variables the AWS SDKs and CLI
** read: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION (or
** AWS_DEFAULT_REGION; default us-east-1), AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (a custom
** endpoint is addressed path-style: ENDPOINT/bucket/key). TLS certificates are verified.
**
** Writes are whole objects: a local put is an atomic publish (temporary file, fsync,
** rename); an S3 put is one PUT, or a multipart upload above the threshold that is aborted
** when any part fails. `PCH_PUT_IF_ABSENT` is create-if-absent (local: link(2); S3:
** `If-None-Match: *`); losing it returns PCH_EEXISTS. Nothing here retries a 4xx other than
** 429; 5xx, 429, timeouts and connection resets are retried with backoff and jitter. */
#ifndef PCHRONICLE_IO_H
#define PCHRONICLE_IO_H

#include <stdbool.h>

#include "pchronicle/common.h"
#include "pchronicle/ctx.h"
#include "pchronicle/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pch_store pch_store;

#define PCH_STORE_OPTIONS_VERSION 1u

/* Settings; zero means the default named. */
typedef struct pch_store_options {
    unsigned version;              /* PCH_STORE_OPTIONS_VERSION */
    uint64_t multipart_threshold;  /* uploads above it go multipart (default 64 MiB) */
    uint64_t part_size;            /* multipart part size (default 16 MiB; S3's minimum 5 MiB) */
    uint64_t coalesce_gap;         /* ranged reads this close merge into one request (default 256 KiB) */
    uint64_t coalesce_max;         /* ... as long as the merged request stays below this (default 16 MiB) */
    unsigned max_in_flight;        /* S3 requests at once in a batch of ranged reads (default 8) */
    unsigned max_attempts;         /* tries of one request, the first included (default 5) */
    unsigned backoff_ms;           /* base delay before the first retry, doubled after each (default 100) */
    unsigned timeout_ms;           /* one request, connect to last byte (default 60000) */
    unsigned connect_timeout_ms;   /* default 10000 */
} pch_store_options;

/* Counters of one store since it was opened (§20.2: GETs, ranges, bytes). */
typedef struct pch_store_stats {
    uint64_t requests;         /* HTTP requests sent, retries included (local: calls) */
    uint64_t gets;             /* GET requests (whole or ranged) */
    uint64_t ranges;           /* byte ranges asked for by callers, before coalescing */
    uint64_t puts;             /* PUTs, multipart parts included */
    uint64_t heads, lists, deletes;
    uint64_t retries;          /* requests sent again after a retryable failure */
    uint64_t bytes_requested;  /* bytes the GETs fetched (after coalescing) */
    uint64_t bytes_useful;     /* bytes the callers asked for */
    uint64_t bytes_written;    /* bytes uploaded */
    uint64_t cache_hits;       /* object tails served by the local tail cache, no GET */
} pch_store_stats;

typedef struct pch_object_info {
    const char *key;     /* relative to the root (valid during a list callback) */
    uint64_t size;
    char etag[72];       /* as the server sent it, quotes removed; local: size-mtime */
    int64_t mtime_ms;    /* last modified, UTC milliseconds (0 if unknown) */
} pch_object_info;

/* One ranged read of a batch: fills dst[0..len) with bytes [off, off+len) of the object. */
typedef struct pch_store_range {
    uint64_t off;
    uint64_t len;
    uint8_t *dst;
} pch_store_range;

#define PCH_PUT_IF_ABSENT 1u  /* create-if-absent: PCH_EEXISTS if the key exists */

/* True for "s3://..." roots. */
PCH_API bool pch_store_is_s3(const char *uri);

/* Open a store on uri (a directory, created on the first put; or s3://bucket[/prefix]).
** opts may be NULL. Reads the S3 settings from the environment; nothing is sent yet. */
PCH_API int pch_store_open(pch_ctx *ctx, const char *uri, const pch_store_options *opts,
                           pch_store **out, pch_error *err);
PCH_API void pch_store_close(pch_store *st);

/* The whole object: *data (pch_malloc'd on ctx, caller frees with pch_free) and *len.
** Objects above max bytes fail with PCH_ELIMIT. PCH_ENOTFOUND if there is none. */
PCH_API int pch_store_get(pch_store *st, const char *key, uint64_t max, uint8_t **data,
                          size_t *len, pch_object_info *info, pch_error *err);

/* Ranged reads of one object; nearby ranges are coalesced (opts), at most max_in_flight
** requests run at once. A range past the object's end fails with PCH_ECORRUPT. */
PCH_API int pch_store_read_ranges(pch_store *st, const char *key, pch_store_range *ranges,
                                  size_t n, pch_error *err);

/* Size, ETag and time of one object; PCH_ENOTFOUND if there is none. */
PCH_API int pch_store_head(pch_store *st, const char *key, pch_object_info *info, pch_error *err);

/* Write a whole object from memory (flags: PCH_PUT_IF_ABSENT). */
PCH_API int pch_store_put(pch_store *st, const char *key, const void *data, size_t len,
                          unsigned flags, pch_error *err);

/* Write a whole object from a local file; multipart above the threshold (S3). A multipart
** upload cannot be create-if-absent on every server (radosgw ignores If-None-Match on its
** completion), so PCH_PUT_IF_ABSENT with a file above the threshold is PCH_EUNSUPPORTED. */
PCH_API int pch_store_put_file(pch_store *st, const char *key, const char *path, unsigned flags,
                               pch_error *err);

/* Remove an object; a missing object is not an error. */
PCH_API int pch_store_delete(pch_store *st, const char *key, pch_error *err);

/* Every object whose key starts with prefix (may be ""), in key order; cb returns 0 to go on,
** anything else stops the walk and is returned. */
PCH_API int pch_store_list(pch_store *st, const char *prefix,
                           int (*cb)(void *arg, const pch_object_info *info), void *arg,
                           pch_error *err);

/* Prove that the store refuses a second create-if-absent of one key (§10.2): writes a probe
** object under `_pchronicle/commit-probe/`, tries to create it again, checks it kept the
** first content, removes it. A store that lets the second write through fails with
** PCH_EUNSUPPORTED and a message that says so: writing to it could lose a commit. */
PCH_API int pch_store_check_commit(pch_store *st, pch_error *err);

PCH_API void pch_store_get_stats(const pch_store *st, pch_store_stats *out);

/* The counters of every store the process's readers of files by path have used (the
** projection and Vortex readers on s3:// roots): what `--stats` reports for a process. */
PCH_API void pch_store_process_stats(pch_store_stats *out);

/* "s3://bucket/prefix" or the local directory, as opened. */
PCH_API const char *pch_store_uri(const pch_store *st);

#ifdef __cplusplus
}
#endif
#endif
