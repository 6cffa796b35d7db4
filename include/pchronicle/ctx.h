/* The library context: allocator and limits (STYLE.md §5, §7, §9). No global mutable state
** lives outside a context. Thread rule: a context may be shared by threads only for reading
** its settings; the allocator it holds must itself be thread-safe to be used that way. */
#ifndef PCHRONICLE_CTX_H
#define PCHRONICLE_CTX_H

#include "pchronicle/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Custom allocator (zstd ZSTD_customMem). Any member NULL → the libc one is used. */
typedef struct pch_allocator {
    void *(*alloc)(void *payload, size_t size);
    void *(*realloc)(void *payload, void *ptr, size_t size);
    void (*free)(void *payload, void *ptr);
    void *payload;
} pch_allocator;

/* Limits applied to untrusted input (SQLite sqliteLimit.h). Zero means "use the default". */
typedef struct pch_limits {
    size_t max_alloc;       /* largest single allocation, bytes (default 4 GiB) */
    size_t max_page_bytes;  /* largest Lance page / buffer we decode (default 2 GiB) */
    uint32_t max_columns;   /* columns in one file/schema (default 10000) */
    uint32_t max_json_depth;/* JSON nesting depth (default 1024) */
    size_t max_line_bytes;  /* one JSONL record (default 1 GiB) */
} pch_limits;

#define PCH_DEFAULT_MAX_ALLOC ((size_t)4 << 30)
#define PCH_DEFAULT_MAX_PAGE_BYTES ((size_t)2 << 30)
#define PCH_DEFAULT_MAX_COLUMNS 10000u
#define PCH_DEFAULT_MAX_JSON_DEPTH 1024u
#define PCH_DEFAULT_MAX_LINE_BYTES ((size_t)1 << 30)

typedef struct pch_ctx pch_ctx;

/* Create a context. alloc and limits may be NULL (defaults). *out owned by the caller,
** freed with pch_ctx_free. Errors: PCH_ENOMEM. */
PCH_API int pch_ctx_new(pch_ctx **out, const pch_allocator *alloc, const pch_limits *limits,
                        pch_error *err);
PCH_API void pch_ctx_free(pch_ctx *ctx);

/* Effective limits of ctx (defaults filled in; ctx NULL gives the defaults). Borrowed;
** valid for the ctx's lifetime. */
PCH_API const pch_limits *pch_ctx_limits(const pch_ctx *ctx);

/* Allocation through the context allocator. pch_malloc refuses sizes above max_alloc. */
PCH_API void *pch_malloc(pch_ctx *ctx, size_t size);
PCH_API void *pch_calloc(pch_ctx *ctx, size_t n, size_t size);
PCH_API void *pch_realloc(pch_ctx *ctx, void *ptr, size_t size);
PCH_API void pch_free(pch_ctx *ctx, void *ptr);

#ifdef __cplusplus
}
#endif
#endif
