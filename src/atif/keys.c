/* The trajectory keys of one source (RFC-0006 §5.2). A key is made from its own document
** (parse.c: the producer id qualified by the document's path, or a generated key), so two
** documents can name the same key only when the input is built to: a producer id that ends
** in "@<path of another document>". Such input is refused, naming both documents, rather
** than renaming either trajectory: a key never depends on which other documents exist
** (docs/atif.md "Stable keys"). */
#include "atif/atif.h"

int pch_atif__keys_claim(pch_ctx *ctx, pch_atif__keyset *ks, const pch_atif_doc *doc, pch_error *err)
{
    for (size_t i = 0; i < pch_atif_doc_count(doc); i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(doc, i);
        const char *path = t->doc_path ? t->doc_path : "";
        size_t a = strlen(t->run_key), b = strlen(t->trajectory_key), c = strlen(path);
        char *k;
        int rc;
        /* "run\x1ftraj\0path": the key, then the document that claimed it */
        if (!(k = pch_malloc(ctx, a + b + c + 3))) return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
        memcpy(k, t->run_key, a);
        k[a] = '\x1f';
        memcpy(k + a + 1, t->trajectory_key, b + 1);
        memcpy(k + a + b + 2, path, c + 1);
        if ((rc = pch_strset_take(ctx, &ks->keys, k)) == 1) continue;
        if (rc == 0) {
            const char *other = pch_strset_find(&ks->keys, k);
            rc = pch_error_set(err, PCH_EINVAL,
                               "atif: %s: trajectory key \"%s\" of run \"%s\" is also the key of a trajectory in %s; keys "
                               "come from each document alone (its ids and path), so the input names this key twice",
                               path, t->trajectory_key, t->run_key, other + strlen(other) + 1);
        } else rc = pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
        pch_free(ctx, k);
        return rc;
    }
    return PCH_OK;
}

void pch_atif__keys_dispose(pch_ctx *ctx, pch_atif__keyset *ks)
{
    pch_strset_dispose(ctx, &ks->keys);
}
