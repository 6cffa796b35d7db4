/* Owned growable byte buffer (sds, libgit2 git_str) and bump arena (libgit2 git_pool).
** Invariants: a pch_buf with data != NULL has data[len] == 0 and len < cap; a failed grow
** leaves the buffer unchanged and latches `oom`. Arena blocks are 16-byte aligned. */
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

void pch_buf_init(pch_buf *b, pch_ctx *ctx)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->ctx = ctx;
    b->oom = 0;
}

void pch_buf_dispose(pch_buf *b)
{
    pch_free(b->ctx, b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

int pch_buf_reserve(pch_buf *b, size_t extra)
{
    size_t need;
    if (b->oom) return PCH_ENOMEM;
    if (!pch_add_size(&need, b->len, extra) || !pch_add_size(&need, need, 1)) {
        b->oom = 1;
        return PCH_ENOMEM;
    }
    if (need <= b->cap) return PCH_OK;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) { ncap = need; break; }
        ncap *= 2;
    }
    uint8_t *nd = pch_realloc(b->ctx, b->data, ncap);
    if (!nd) { b->oom = 1; return PCH_ENOMEM; }
    b->data = nd;
    b->cap = ncap;
    b->data[b->len] = 0;
    return PCH_OK;
}

int pch_buf__append_slow(pch_buf *b, const void *p, size_t n)
{
    PCH_TRY(pch_buf_reserve(b, n));
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return PCH_OK;
}

int pch_buf__putc_slow(pch_buf *b, uint8_t c)
{
    if (b->oom) return PCH_ENOMEM;
    if (b->len + 1 >= b->cap) PCH_TRY(pch_buf_reserve(b, 1));
    b->data[b->len++] = c;
    b->data[b->len] = 0;
    return PCH_OK;
}

int pch_buf_append_str(pch_buf *b, const char *s) { return pch_buf_append(b, s, strlen(s)); }

int pch_buf_printf(pch_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return PCH_EINVAL;
    PCH_TRY(pch_buf_reserve(b, (size_t)n));
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return PCH_OK;
}

int pch_buf_pad(pch_buf *b, size_t align, uint8_t fill)
{
    size_t rem = b->len % align;
    if (rem == 0) return PCH_OK;
    size_t n = align - rem;
    PCH_TRY(pch_buf_reserve(b, n));
    memset(b->data + b->len, fill, n);
    b->len += n;
    b->data[b->len] = 0;
    return PCH_OK;
}

int pch_buf_zero(pch_buf *b, size_t n)
{
    PCH_TRY(pch_buf_reserve(b, n));
    memset(b->data + b->len, 0, n);
    b->len += n;
    b->data[b->len] = 0;
    return PCH_OK;
}

void pch_buf_clear(pch_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = 0;
}

void pch_buf_move(pch_buf *src, pch_buf *dst)
{
    pch_buf_dispose(dst);
    *dst = *src;
    pch_buf_init(src, dst->ctx);
}

uint8_t *pch_buf_detach(pch_buf *b, size_t *len_out)
{
    uint8_t *p = b->data;
    if (len_out) *len_out = b->len;
    pch_buf_init(b, b->ctx);
    return p;
}

/* ---- arena ---- */

struct pch_arena_block {
    pch_arena_block *next;
    size_t size;   /* usable bytes after the header */
    size_t used;
    /* data follows, 16-byte aligned */
};

#define ARENA_HDR ((sizeof(pch_arena_block) + 15u) & ~(size_t)15u)

void pch_arena_init(pch_arena *a, pch_ctx *ctx, size_t block_size)
{
    a->ctx = ctx;
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
}

void *pch_arena_alloc(pch_arena *a, size_t size)
{
    size_t rounded;
    if (!pch_add_size(&rounded, size, 15)) return NULL;
    rounded &= ~(size_t)15;
    if (rounded == 0) rounded = 16;
#ifdef PCH_ARENA_DEBUG
    {
        size_t total;
        if (!pch_add_size(&total, ARENA_HDR, size ? size : 1)) return NULL;
        pch_arena_block *blk = pch_malloc(a->ctx, total);
        if (!blk) return NULL;
        blk->size = size;
        blk->used = size;
        blk->next = a->head;
        a->head = blk;
        return (uint8_t *)blk + ARENA_HDR;
    }
#else
    pch_arena_block *h = a->head;
    if (h && h->size - h->used >= rounded) {
        void *p = (uint8_t *)h + ARENA_HDR + h->used;
        h->used += rounded;
        return p;
    }
    size_t bsize = a->block_size > rounded ? a->block_size : rounded, total;
    if (!pch_add_size(&total, ARENA_HDR, bsize)) return NULL;
    pch_arena_block *blk = pch_malloc(a->ctx, total);
    if (!blk) return NULL;
    blk->size = bsize;
    blk->used = rounded;
    /* Keep the block with the most room at the head: a big one-off allocation goes behind. */
    if (h && bsize == rounded && h->size - h->used > 0) {
        blk->next = h->next;
        h->next = blk;
    } else {
        blk->next = h;
        a->head = blk;
    }
    return (uint8_t *)blk + ARENA_HDR;
#endif
}

void *pch_arena_memdup(pch_arena *a, const void *p, size_t n)
{
    size_t total;
    if (!pch_add_size(&total, n, 1)) return NULL;
    uint8_t *d = pch_arena_alloc(a, total);
    if (!d) return NULL;
    if (n) memcpy(d, p, n);
    d[n] = 0;
    return d;
}

void pch_arena_reset(pch_arena *a)
{
    pch_arena_block *keep = NULL, *b = a->head;
    while (b) {
        pch_arena_block *next = b->next;
#ifndef PCH_ARENA_DEBUG
        if (!keep && b->size == a->block_size) { keep = b; keep->used = 0; keep->next = NULL; b = next; continue; }
#endif
        pch_free(a->ctx, b);
        b = next;
    }
    a->head = keep;
}

void pch_arena_dispose(pch_arena *a)
{
    pch_arena_block *b = a->head;
    while (b) {
        pch_arena_block *next = b->next;
        pch_free(a->ctx, b);
        b = next;
    }
    a->head = NULL;
}
