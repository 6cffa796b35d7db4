/* Interface of src/storyline inside the module and to src/sql: the private structures
** (storyline_int.h) plus root accessors. */
#ifndef PCH_STORYLINE_STORYLINE_H
#define PCH_STORYLINE_STORYLINE_H

#include <dirent.h>
#include "storyline/storyline_int.h"

int pch_sl__read_current(pch_buf *out, const char *root, pch_error *err);
const char *pch_sl__root_current(const pch_storyline_root *r, size_t *len);
pch_ctx *pch_sl__root_ctx(const pch_storyline_root *r);
/* Borrowed view of an object's bytes; valid until pch_storyline_close. */
int pch_sl__object_view(pch_storyline_root *r, const char *id, size_t id_len, const char **p,
                        size_t *n, pch_error *err);

/* Restore a compact-jsonl dataset privately and call cb for each document: .json files
** whole, .jsonl/.ndjson line by line (path "FILE#LN"). *version_out = its Lance version. */
int pch_sl__cj_each(pch_ctx *ctx, const char *dataset, uint64_t *version_out,
                    int (*cb)(const char *path, const char *text, size_t len, void *payload),
                    void *payload, pch_error *err);

#endif
