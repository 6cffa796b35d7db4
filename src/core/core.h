/* Interface of src/core to the rest of the library: buffers, arenas, bounds-checked reading,
** checked size arithmetic, endian load/store, hex, ISO-8601 time, atomic publish, BLAKE3.
** Nothing here does I/O except the publish helpers (which use POSIX files directly). */
#ifndef PCH_CORE_H
#define PCH_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>

#include "pchronicle/ctx.h"
#include "pchronicle/error.h"

/* ---- checked arithmetic (libgit2 integer.h): return false on overflow ---- */
static inline bool pch_add_size(size_t *out, size_t a, size_t b)
{ return !__builtin_add_overflow(a, b, out); }
static inline bool pch_mul_size(size_t *out, size_t a, size_t b)
{ return !__builtin_mul_overflow(a, b, out); }
static inline bool pch_add_u64(uint64_t *out, uint64_t a, uint64_t b)
{ return !__builtin_add_overflow(a, b, out); }
static inline bool pch_mul_u64(uint64_t *out, uint64_t a, uint64_t b)
{ return !__builtin_mul_overflow(a, b, out); }
static inline bool pch_u64_to_size(size_t *out, uint64_t v)
{ if (v > (uint64_t)SIZE_MAX) return false; *out = (size_t)v; return true; }

/* ---- little/big-endian load/store through memcpy (zstd MEM_readLE32) ---- */
static inline uint16_t pch_load_le16(const void *p)
{ uint16_t v; memcpy(&v, p, 2); return (uint16_t)__builtin_bswap16(__builtin_bswap16(v)); }
static inline uint32_t pch_load_le32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t pch_load_le64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void pch_store_le16(void *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void pch_store_le32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void pch_store_le64(void *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t pch_load_be16(const void *p)
{ uint16_t v; memcpy(&v, p, 2); return __builtin_bswap16(v); }
static inline uint32_t pch_load_be32(const void *p)
{ uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
static inline uint64_t pch_load_be64(const void *p)
{ uint64_t v; memcpy(&v, p, 8); return __builtin_bswap64(v); }
static inline void pch_store_be16(void *p, uint16_t v) { v = __builtin_bswap16(v); memcpy(p, &v, 2); }
static inline void pch_store_be32(void *p, uint32_t v) { v = __builtin_bswap32(v); memcpy(p, &v, 4); }
static inline void pch_store_be64(void *p, uint64_t v) { v = __builtin_bswap64(v); memcpy(p, &v, 8); }
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pChronicle currently builds on little-endian hosts only"
#endif

/* A NUL-terminated copy of s[0..n) through the context allocator (pch_free); NULL when out
** of memory. */
char *pch_strndup(pch_ctx *ctx, const char *s, size_t n);

/* ---- owned growable buffer (sds / git_str). Always NUL-terminated past len once
** allocated. A failed grow leaves it valid; the first failure is latched in `oom` and
** reported by the next call that checks. ---- */
typedef struct pch_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    pch_ctx *ctx;  /* allocator owner; NULL = libc */
    int oom;       /* latched allocation failure */
} pch_buf;

void pch_buf_init(pch_buf *b, pch_ctx *ctx);
void pch_buf_dispose(pch_buf *b);                       /* frees contents, not b */
int pch_buf_reserve(pch_buf *b, size_t extra);           /* room for len+extra (+NUL) */
int pch_buf__append_slow(pch_buf *b, const void *p, size_t n);
int pch_buf__putc_slow(pch_buf *b, uint8_t c);
/* Appends are inline while the capacity suffices (the JSON writers and encoders call them
** per token: the out-of-line call and the reserve checks were ~10 % of rendering JSONB). */
static inline int pch_buf_append(pch_buf *b, const void *p, size_t n)
{
    if (!b->oom && b->data && n < b->cap - b->len) {
        if (n) memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = 0;
        return PCH_OK;
    }
    return pch_buf__append_slow(b, p, n);
}
static inline int pch_buf_putc(pch_buf *b, uint8_t c)
{
    if (!b->oom && b->data && b->len + 1 < b->cap) {
        b->data[b->len++] = c;
        b->data[b->len] = 0;
        return PCH_OK;
    }
    return pch_buf__putc_slow(b, c);
}
int pch_buf_append_str(pch_buf *b, const char *s);
int pch_buf_printf(pch_buf *b, const char *fmt, ...) PCH_PRINTF(2, 3);
int pch_buf_pad(pch_buf *b, size_t align, uint8_t fill); /* pad len to a multiple */
int pch_buf_zero(pch_buf *b, size_t n);                  /* append n zero bytes */
void pch_buf_clear(pch_buf *b);                          /* len = 0, keeps capacity */
void pch_buf_move(pch_buf *src, pch_buf *dst);           /* dst disposed, src left empty */
/* Detach the storage; caller frees with pch_free(ctx, p). */
uint8_t *pch_buf_detach(pch_buf *b, size_t *len_out);
static inline int pch_buf_put_le16(pch_buf *b, uint16_t v) { uint8_t t[2]; pch_store_le16(t, v); return pch_buf_append(b, t, 2); }
static inline int pch_buf_put_le32(pch_buf *b, uint32_t v) { uint8_t t[4]; pch_store_le32(t, v); return pch_buf_append(b, t, 4); }
static inline int pch_buf_put_le64(pch_buf *b, uint64_t v) { uint8_t t[8]; pch_store_le64(t, v); return pch_buf_append(b, t, 8); }
static inline pch_bytes pch_buf_bytes(const pch_buf *b) { pch_bytes v = { b->data, b->len }; return v; }

/* ---- arena (git_pool): bump allocation in blocks; reset per batch; freed in one call.
** -DPCH_ARENA_DEBUG makes each allocation a separate malloc so ASan sees overruns. ---- */
typedef struct pch_arena_block pch_arena_block;
typedef struct pch_arena {
    pch_ctx *ctx;
    pch_arena_block *head;
    size_t block_size;
} pch_arena;

void pch_arena_init(pch_arena *a, pch_ctx *ctx, size_t block_size);
void *pch_arena_alloc(pch_arena *a, size_t size);        /* 16-byte aligned; NULL on OOM */
void *pch_arena_memdup(pch_arena *a, const void *p, size_t n); /* adds a NUL after */
void pch_arena_reset(pch_arena *a);                      /* frees all but keeps one block */
void pch_arena_dispose(pch_arena *a);

/* ---- bounds-checked reader over untrusted bytes (STYLE §7). Getters return false on short
** input and leave off unchanged. ---- */
typedef struct pch_rd {
    const uint8_t *ptr;
    size_t len;
    size_t off;
} pch_rd;

static inline pch_rd pch_rd_make(const void *p, size_t len) { pch_rd r = { (const uint8_t *)p, len, 0 }; return r; }
static inline size_t pch_rd_left(const pch_rd *r) { return r->len - r->off; }
static inline bool pch_rd_skip(pch_rd *r, size_t n) { if (n > r->len - r->off) return false; r->off += n; return true; }
static inline bool pch_rd_bytes(pch_rd *r, size_t n, const uint8_t **out)
{ if (n > r->len - r->off) return false; *out = r->ptr + r->off; r->off += n; return true; }
static inline bool pch_rd_u8(pch_rd *r, uint8_t *v) { if (r->off >= r->len) return false; *v = r->ptr[r->off++]; return true; }
static inline bool pch_rd_le16(pch_rd *r, uint16_t *v) { if (2 > r->len - r->off) return false; *v = pch_load_le16(r->ptr + r->off); r->off += 2; return true; }
static inline bool pch_rd_le32(pch_rd *r, uint32_t *v) { if (4 > r->len - r->off) return false; *v = pch_load_le32(r->ptr + r->off); r->off += 4; return true; }
static inline bool pch_rd_le64(pch_rd *r, uint64_t *v) { if (8 > r->len - r->off) return false; *v = pch_load_le64(r->ptr + r->off); r->off += 8; return true; }
static inline bool pch_rd_be32(pch_rd *r, uint32_t *v) { if (4 > r->len - r->off) return false; *v = pch_load_be32(r->ptr + r->off); r->off += 4; return true; }

/* ---- LEB128 / protobuf varints (shared by the Lance and Vortex protobuf codecs) ---- */
/* Read a varint of at most 10 bytes whose value fits 64 bits; false on truncation or
** overflow, leaving r->off unspecified. */
static inline bool pch_rd_varint(pch_rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        uint8_t c;
        if (!pch_rd_u8(r, &c)) return false;
        if (shift == 63 && c > 1) return false;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) { *out = v; return true; }
    }
    return false;
}
static inline int pch_buf_put_varint(pch_buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) { t[n++] = (uint8_t)(v | 0x80); v >>= 7; }
    t[n++] = (uint8_t)v;
    return pch_buf_append(b, t, n);
}

/* ---- hex ---- */
/* Write 2*n lowercase hex digits + NUL into out (size >= 2n+1). */
void pch_hex_encode(char *out, const uint8_t *in, size_t n);
/* Decode exactly 2*n hex digits (either case) into out; false on a bad digit. */
bool pch_hex_decode(uint8_t *out, const char *in, size_t n);

/* ---- base64 (RFC 4648, standard alphabet, with padding) ---- */
int pch_base64_encode(pch_buf *out, const uint8_t *in, size_t n);
int pch_base64_decode(pch_buf *out, const char *in, size_t n, pch_error *err);
/* The same into out[0 .. n / 4 * 3); *out_len = the decoded length. */
int pch_base64_decode_into(uint8_t *out, size_t *out_len, const char *in, size_t n,
                           pch_error *err);

/* ---- time: ISO-8601 / RFC 3339 → UTC milliseconds since the epoch.
** Accepts YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS[.frac]] with Z, ±HH:MM, ±HHMM or no zone (UTC),
** 'T' or ' ' as separator. Fraction beyond milliseconds is truncated toward -inf. ---- */
int pch_time_parse_iso8601(int64_t *ms_out, const char *s, size_t len, pch_error *err);
/* Format UTC milliseconds as "YYYY-MM-DDTHH:MM:SS.mmmZ" (24 chars + NUL). */
void pch_time_format_iso8601(char out[32], int64_t ms);
/* Wall-clock time now, UTC ms and ns since the epoch. */
int64_t pch_time_now_ms(void);
int64_t pch_time_now_ns(void);
/* Monotonic seconds, for progress and benchmarks. */
double pch_time_mono(void);

/* ---- files and atomic publish (git_filebuf_commit; ARCHITECTURE §8) ---- */
/* Read a whole file into out (appended). Refuses files above max bytes with PCH_ELIMIT. */
int pch_file_read_all(pch_buf *out, const char *path, size_t max, pch_error *err);
/* write(2) all of data[0..len) to fd, retrying short writes and EINTR (at most 1 GiB a
** call). 0, or -1 with errno set. */
/* A fast 64-bit hash of p[0..n) for in-memory hash tables (hash.c): not a digest, never
** stored; a collision must only cost a comparison. */
uint64_t pch_hash64(const void *p, size_t n);

/* A set of strings (strset.c; zero-initialise). An entry is hashed and compared up to its
** first NUL, so it may carry a payload after it. take: adds k, owned by the set from then
** on (1), or 0 when an equal entry is there (k stays the caller's); add copies k. <0: ENOMEM. */
typedef struct pch_strset { char **v; size_t cap, n; } pch_strset;
const char *pch_strset_find(const pch_strset *s, const char *k);
int pch_strset_take(pch_ctx *ctx, pch_strset *s, char *k);
int pch_strset_add(pch_ctx *ctx, pch_strset *s, const char *k);
void pch_strset_dispose(pch_ctx *ctx, pch_strset *s);

int pch_write_all(int fd, const void *data, size_t len);
/* Fault injection (src/core/fault.c): true when this durable-write operation (op names it)
** must fail (errno EIO). Only builds with PCH_FAULT_INJECTION (`make fault`) have it. */
#ifdef PCH_FAULT_INJECTION
bool pch_fault(const char *op);
#else
#define pch_fault(op) false
#endif
/* Write data to path atomically: staging "<dir>/.<name>.tmp-<pid>-<n>", fsync, rename over
** path, fsync the parent. Overwrites an existing path. */
int pch_file_publish(const char *path, const void *data, size_t len, pch_error *err);
/* An atomic publish renames over its path: PCH_EINVAL when the path exists and is not a
** regular file (a device such as /dev/null, a directory, a pipe; links are followed), which a rename
** would replace. */
int pch_check_replaceable(const char *path, pch_error *err);
/* Same, but create-if-absent: link(staging, path); PCH_EEXISTS if path already exists (two
** writers can never both win). The staging name never ends in ".manifest". */
int pch_file_publish_new(const char *path, const void *data, size_t len, pch_error *err);
/* fsync a directory (after a rename/link/unlink inside it). */
int pch_fsync_dir(const char *dir, pch_error *err);
/* mkdir -p; existing directories are fine. */
int pch_mkdirs(const char *path, pch_error *err);
/* rm -rf of a directory tree (used for staging cleanup). Missing path is fine. */
int pch_remove_tree(const char *path, pch_error *err);
/* Join a and b with one '/', into out (cleared first). */
int pch_path_join(pch_buf *out, const char *a, const char *b);

/* ---- random identifiers (getrandom) for unique file names ---- */
int pch_random_bytes(void *out, size_t n, pch_error *err);

/* ---- BLAKE3 (hash mode, 256-bit default output; written here: no Debian C library) ---- */
#define PCH_BLAKE3_OUT_LEN 32
#define PCH_BLAKE3_BLOCK_LEN 64
#define PCH_BLAKE3_CHUNK_LEN 1024
#define PCH_BLAKE3_MAX_DEPTH 54
typedef struct pch_blake3_chunk_state {
    uint32_t cv[8];
    uint64_t chunk_counter;
    uint8_t buf[PCH_BLAKE3_BLOCK_LEN];
    uint8_t buf_len;
    uint8_t blocks_compressed;
    uint8_t flags;
} pch_blake3_chunk_state;
typedef struct pch_blake3 {
    uint32_t key[8];
    pch_blake3_chunk_state chunk;
    uint8_t cv_stack_len;
    uint8_t impl;  /* PCH_BLAKE3_IMPL_* used for whole-chunk batches */
    uint8_t cv_stack[(PCH_BLAKE3_MAX_DEPTH + 1) * PCH_BLAKE3_OUT_LEN];
} pch_blake3;
void pch_blake3_init(pch_blake3 *h);
void pch_blake3_update(pch_blake3 *h, const void *data, size_t len);
/* Extendable output: out_len bytes (32 for the standard digest). h is not modified. */
void pch_blake3_final(const pch_blake3 *h, uint8_t *out, size_t out_len);
/* One-shot 32-byte digest. */
void pch_blake3_hash(uint8_t out[PCH_BLAKE3_OUT_LEN], const void *data, size_t len);
/* One-shot digest as 64 lowercase hex chars + NUL. */
void pch_blake3_hex(char out[65], const void *data, size_t len);
/* Internal (tests, bench): the SIMD kernels for whole-chunk batches. pch_blake3_init picks
** the best the CPU supports; pch_blake3__init_impl forces one and falls back to the best
** supported one below it. Returns the implementation actually chosen. */
enum {
    PCH_BLAKE3_IMPL_PORTABLE = 0,
    PCH_BLAKE3_IMPL_SSE41 = 1,
    PCH_BLAKE3_IMPL_AVX2 = 2,
    PCH_BLAKE3_IMPL_AVX512 = 3
};
int pch_blake3__init_impl(pch_blake3 *h, int impl);
const char *pch_blake3__impl_name(int impl);

/* ---- internal assertions for API misuse (STYLE §4) ---- */
#ifdef NDEBUG
#define PCH_ASSERT_ARG(x) do { if (!(x)) return pch_error_set(err, PCH_EINVAL, "invalid argument: %s", #x); } while (0)
#else
#include <assert.h>
#define PCH_ASSERT_ARG(x) assert(x)
#endif
#define PCH_TRY(expr) do { int pch_try_rc_ = (expr); if (pch_try_rc_ < 0) return pch_try_rc_; } while (0)

#endif
