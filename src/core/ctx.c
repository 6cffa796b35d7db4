/* Library context: allocator and limits (STYLE.md §5, §7). The context is the only place
** configuration lives; there is no global mutable state. */
#include <stdlib.h>

#include "core/core.h"

struct pch_ctx {
    pch_allocator alloc;
    pch_limits limits;
};

static void *libc_alloc(void *payload, size_t size) { (void)payload; return malloc(size); }
static void *libc_realloc(void *payload, void *p, size_t size) { (void)payload; return realloc(p, size); }
static void libc_free(void *payload, void *p) { (void)payload; free(p); }

int pch_ctx_new(pch_ctx **out, const pch_allocator *alloc, const pch_limits *limits,
                pch_error *err)
{
    pch_allocator a = { libc_alloc, libc_realloc, libc_free, NULL };
    *out = NULL;
    if (alloc && alloc->alloc && alloc->realloc && alloc->free) a = *alloc;
    pch_ctx *c = a.alloc(a.payload, sizeof *c);
    if (!c) return pch_error_set(err, PCH_ENOMEM, "out of memory allocating context");
    c->alloc = a;
    memset(&c->limits, 0, sizeof c->limits);
    if (limits) c->limits = *limits;
    if (!c->limits.max_alloc) c->limits.max_alloc = PCH_DEFAULT_MAX_ALLOC;
    if (!c->limits.max_page_bytes) c->limits.max_page_bytes = PCH_DEFAULT_MAX_PAGE_BYTES;
    if (!c->limits.max_columns) c->limits.max_columns = PCH_DEFAULT_MAX_COLUMNS;
    if (!c->limits.max_json_depth) c->limits.max_json_depth = PCH_DEFAULT_MAX_JSON_DEPTH;
    if (!c->limits.max_line_bytes) c->limits.max_line_bytes = PCH_DEFAULT_MAX_LINE_BYTES;
    *out = c;
    return PCH_OK;
}

void pch_ctx_free(pch_ctx *ctx)
{
    if (!ctx) return;
    ctx->alloc.free(ctx->alloc.payload, ctx);
}

/* A NULL context means "libc allocator, default limits" everywhere (pch_malloc agrees). */
static const pch_limits k_default_limits = {
    PCH_DEFAULT_MAX_ALLOC, PCH_DEFAULT_MAX_PAGE_BYTES, PCH_DEFAULT_MAX_COLUMNS,
    PCH_DEFAULT_MAX_JSON_DEPTH, PCH_DEFAULT_MAX_LINE_BYTES
};

const pch_limits *pch_ctx_limits(const pch_ctx *ctx)
{
    return ctx ? &ctx->limits : &k_default_limits;
}

void *pch_malloc(pch_ctx *ctx, size_t size)
{
    if (!ctx) return malloc(size ? size : 1);
    if (size > ctx->limits.max_alloc) return NULL;
    return ctx->alloc.alloc(ctx->alloc.payload, size ? size : 1);
}

char *pch_strndup(pch_ctx *ctx, const char *s, size_t n)
{
    size_t cap;
    char *p;
    if (!pch_add_size(&cap, n, 1) || !(p = pch_malloc(ctx, cap))) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void *pch_calloc(pch_ctx *ctx, size_t n, size_t size)
{
    size_t total;
    if (!pch_mul_size(&total, n, size)) return NULL;
    /* libc's calloc hands out fresh pages already zero: a large table (a directory's
    ** entries, a file's segment cache) costs nothing until it is used; a caller's allocator
    ** is cleared by hand */
    if (!ctx || ctx->alloc.alloc == libc_alloc) {
        if (ctx && total > ctx->limits.max_alloc) return NULL;
        return calloc(total ? total : 1, 1);
    }
    void *p = pch_malloc(ctx, total);
    if (p) memset(p, 0, total);
    return p;
}

void *pch_realloc(pch_ctx *ctx, void *ptr, size_t size)
{
    if (!ctx) return realloc(ptr, size ? size : 1);
    if (size > ctx->limits.max_alloc) return NULL;
    return ctx->alloc.realloc(ctx->alloc.payload, ptr, size ? size : 1);
}

void pch_free(pch_ctx *ctx, void *ptr)
{
    if (!ptr) return;
    if (!ctx) { free(ptr); return; }
    ctx->alloc.free(ctx->alloc.payload, ptr);
}
