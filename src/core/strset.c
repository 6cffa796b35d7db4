/* A set of NUL-terminated strings (open addressing, FNV-1a): the trajectory keys of a source
** (src/atif/keys.c) and the paths a snapshot reaches (src/projection/pj_vacuum.c). A stored
** string is compared and hashed up to its first NUL, so an entry may carry more after it
** ("key\0payload"). */
#include "core/core.h"

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) { h ^= (uint8_t)*s++; h *= 1099511628211ull; }
    return h;
}

const char *pch_strset_find(const pch_strset *s, const char *k)
{
    if (!s->cap) return NULL;
    for (size_t j = fnv(k) & (s->cap - 1); s->v[j]; j = (j + 1) & (s->cap - 1))
        if (strcmp(s->v[j], k) == 0) return s->v[j];
    return NULL;
}

int pch_strset_take(pch_ctx *ctx, pch_strset *s, char *k)
{
    size_t j;
    if ((s->n + 1) * 2 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        char **nv = pch_calloc(ctx, nc, sizeof *nv);
        if (!nv) return PCH_ENOMEM;
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i]) {
                for (j = fnv(s->v[i]) & (nc - 1); nv[j]; j = (j + 1) & (nc - 1)) {}
                nv[j] = s->v[i];
            }
        pch_free(ctx, s->v);
        s->v = nv;
        s->cap = nc;
    }
    for (j = fnv(k) & (s->cap - 1); s->v[j]; j = (j + 1) & (s->cap - 1))
        if (strcmp(s->v[j], k) == 0) return 0;
    s->v[j] = k;
    s->n++;
    return 1;
}

int pch_strset_add(pch_ctx *ctx, pch_strset *s, const char *k)
{
    size_t n = strlen(k);
    char *c;
    int rc;
    if (pch_strset_find(s, k)) return 0;
    if (!(c = pch_malloc(ctx, n + 1))) return PCH_ENOMEM;
    memcpy(c, k, n + 1);
    if ((rc = pch_strset_take(ctx, s, c)) != 1) pch_free(ctx, c);
    return rc;
}

void pch_strset_dispose(pch_ctx *ctx, pch_strset *s)
{
    for (size_t i = 0; i < s->cap; i++) pch_free(ctx, s->v[i]);
    pch_free(ctx, s->v);
    memset(s, 0, sizeof *s);
}
