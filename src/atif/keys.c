/* The trajectory keys of one source (RFC-0006 §5.2). A key is made from its own document
** (parse.c: the producer id qualified by the document's path, or a generated key), so two
** documents can name the same key only when the input is built to: a producer id that ends
** in "@<path of another document>". Such input is refused, naming both documents, rather
** than renaming either trajectory: a key never depends on which other documents exist
** (docs/atif.md "Stable keys"). */
#include "atif/atif.h"

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) { h ^= (uint8_t)*s++; h *= 1099511628211ull; }
    return h;
}

/* Grow to twice as many slots as entries (open addressing over "run\x1ftraj"). */
static int grow(pch_ctx *ctx, pch_atif__keyset *ks)
{
    size_t nc = ks->cap ? ks->cap * 2 : 256;
    char **ns = pch_calloc(ctx, nc, sizeof(char *));
    if (!ns) return PCH_ENOMEM;
    for (size_t i = 0; i < ks->cap; i++)
        if (ks->slots[i]) {
            size_t j = fnv(ks->slots[i]) & (nc - 1);
            while (ns[j]) j = (j + 1) & (nc - 1);
            ns[j] = ks->slots[i];
        }
    pch_free(ctx, ks->slots);
    ks->slots = ns;
    ks->cap = nc;
    return PCH_OK;
}

int pch_atif__keys_claim(pch_ctx *ctx, pch_atif__keyset *ks, const pch_atif_doc *doc, pch_error *err)
{
    for (size_t i = 0; i < pch_atif_doc_count(doc); i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(doc, i);
        const char *path = t->doc_path ? t->doc_path : "";
        size_t a = strlen(t->run_key), b = strlen(t->trajectory_key), c = strlen(path);
        char *k;
        size_t j;
        if ((ks->n + 1) * 2 > ks->cap && grow(ctx, ks) < 0)
            return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
        /* "run\x1ftraj\0path": the key, then the document that claimed it */
        if (!(k = pch_malloc(ctx, a + b + c + 3))) return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
        memcpy(k, t->run_key, a);
        k[a] = '\x1f';
        memcpy(k + a + 1, t->trajectory_key, b + 1);
        memcpy(k + a + b + 2, path, c + 1);
        for (j = fnv(k) & (ks->cap - 1); ks->slots[j]; j = (j + 1) & (ks->cap - 1))
            if (strcmp(ks->slots[j], k) == 0) {
                const char *other = ks->slots[j] + a + b + 2;
                int rc = pch_error_set(err, PCH_EINVAL,
                                       "atif: %s: trajectory key \"%s\" of run \"%s\" is also the key of a "
                                       "trajectory in %s; keys come from each document alone (its ids and "
                                       "path), so the input names this key twice",
                                       path, t->trajectory_key, t->run_key, other);
                pch_free(ctx, k);
                return rc;
            }
        ks->slots[j] = k;
        ks->n++;
    }
    return PCH_OK;
}

void pch_atif__keys_dispose(pch_ctx *ctx, pch_atif__keyset *ks)
{
    for (size_t i = 0; i < ks->cap; i++) pch_free(ctx, ks->slots[i]);
    pch_free(ctx, ks->slots);
    memset(ks, 0, sizeof *ks);
}
