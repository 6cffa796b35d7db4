/* Interface of src/atif to the rest of the library (storyline, sql): the public API in
** include/pchronicle/atif.h plus pch_buf-based writers. */
#ifndef PCH_ATIF_ATIF_H
#define PCH_ATIF_ATIF_H

#include <sys/stat.h>

#include "core/core.h"
#include "pchronicle/atif.h"

/* Append trajectory i of doc as ATIF JSON (compact) to out. Errors: PCH_ENOMEM. */
int pch_atif__write(pch_buf *out, const pch_atif_doc *doc, size_t i, pch_error *err);

/* Append `json` (compact JSON text) re-indented with 2 spaces to out. */
int pch_atif__pretty(pch_buf *out, const char *json, size_t len);

/* Canonical audio MIME type for an accepted alias (specs/atif.md §2.6), or NULL. */
const char *pch_atif__audio_canonical(const char *mt, size_t len);

/* Walk dir recursively in byte order of names (hidden entries and symlinks skipped) and
** call cb(path, its lstat) for each regular *.json file; cb's negative return stops the walk. */
int pch_atif__walk(pch_ctx *ctx, const char *dir, int (*cb)(const char *path, const struct stat *st, void *payload),
                   void *payload, pch_error *err);
/* The same walk on two threads: the first half of dir's entries (subdirectories whole) with
** payload0 on the calling thread, the second with payload1 on a thread of its own; cb must be
** safe for that. Calling cb with payload0 and then payload1 in their order is the order of
** pch_atif__walk. On failure *err0 holds the first error in that order. (An incremental sync
** stats every file of its input: two cores stat in about half the time.) */
int pch_atif__walk2(pch_ctx *ctx, const char *dir, int (*cb)(const char *path, const struct stat *st, void *payload),
                    void *payload0, void *payload1, pch_error *err0, pch_error *err1);

/* The trajectory keys of one source (RFC-0006 §5.2; keys.c). Zero-initialise. */
typedef struct pch_atif__keyset {
    pch_strset keys;               /* "run\x1ftraj\0document path" */
} pch_atif__keyset;

/* Add every (run key, trajectory key) of doc. A key that an earlier document holds fails
** with PCH_EINVAL naming both documents (keys are never renamed: docs/atif.md). */
int pch_atif__keys_claim(pch_ctx *ctx, pch_atif__keyset *ks, const pch_atif_doc *doc, pch_error *err);
void pch_atif__keys_dispose(pch_ctx *ctx, pch_atif__keyset *ks);

#endif
