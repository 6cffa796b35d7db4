/* Files for reading by path: local files and S3 objects (rfile.h).
**
** Objects are read through stores kept in a process-wide pool, one store per bucket in use
** at a time: a file takes a store when it opens and gives it back when it closes, so no two
** threads share a store (the projection's read-ahead workers each open their own files), and
** a store's connections are reused by the next file. The counters of every store are summed
** for pch_store_process_stats. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_int.h"
#include "io/rfile.h"

#define N_SPANS 32

typedef struct span {
    uint64_t off;
    pch_buf data;
    uint64_t used;    /* LRU clock */
} span;

struct pch_rfile {
    pch_ctx *ctx;
    int fd;                 /* local; -1 for an object */
    pch_store *st;          /* an object: the store taken from the pool */
    char *key;
    char id[72];            /* the content digest a manifest gives it ("": none; tail cache) */
    uint64_t size;
    bool have_size;
    uint64_t min_span;      /* a read that misses fetches at least this (pch_rfile_set_min_span) */
    bool size_noted;        /* size is the manifest's, not yet confirmed by an answer */
    bool tail_cached;       /* the tail came from the tail cache (keep_tail has nothing to add) */
    span spans[N_SPANS];
    uint64_t clock;
};

/* ---- the pool ---- */

typedef struct pooled {
    pch_store *st;
    char *bucket;           /* "s3://bucket" */
    bool busy;
} pooled;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pooled *pool;
static size_t pool_n, pool_cap;
static pch_store_stats done_stats;   /* stores closed so far (none are, today) */

static void stats_add(pch_store_stats *d, const pch_store_stats *a)
{
    d->requests += a->requests; d->gets += a->gets; d->ranges += a->ranges; d->puts += a->puts;
    d->heads += a->heads; d->lists += a->lists; d->deletes += a->deletes; d->retries += a->retries;
    d->bytes_requested += a->bytes_requested; d->bytes_useful += a->bytes_useful;
    d->bytes_written += a->bytes_written;
    d->cache_hits += a->cache_hits;
}

void pch_store_process_stats(pch_store_stats *out)
{
    pthread_mutex_lock(&pool_mu);
    *out = done_stats;
    for (size_t i = 0; i < pool_n; i++) stats_add(out, &pool[i].st->stats);
    pthread_mutex_unlock(&pool_mu);
}

/* A store for "s3://bucket" that no one else uses now. The pool's stores are made with the
** process's own context (NULL: malloc), as they outlive any caller's. */
static int pool_take(const char *bucket, size_t bl, pch_store **out, pch_error *err)
{
    pthread_mutex_lock(&pool_mu);
    for (size_t i = 0; i < pool_n; i++)
        if (!pool[i].busy && strlen(pool[i].bucket) == bl && memcmp(pool[i].bucket, bucket, bl) == 0) {
            pool[i].busy = true;
            *out = pool[i].st;
            pthread_mutex_unlock(&pool_mu);
            return PCH_OK;
        }
    int rc = PCH_OK;
    char *name = strndup(bucket, bl);
    pch_store *st = NULL;
    if (!name) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto out; }
    if ((rc = pch_store_open(NULL, name, NULL, &st, err)) < 0) goto out;
    if (pool_n == pool_cap) {
        size_t cap = pool_cap ? 2 * pool_cap : 8;
        pooled *np = realloc(pool, cap * sizeof *np);
        if (!np) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto out; }
        pool = np;
        pool_cap = cap;
    }
    pool[pool_n++] = (pooled){ st, name, true };
    *out = st;
    st = NULL;
    name = NULL;
out:
    pthread_mutex_unlock(&pool_mu);
    pch_store_close(st);
    free(name);
    return rc;
}

static void pool_give(pch_store *st)
{
    pthread_mutex_lock(&pool_mu);
    for (size_t i = 0; i < pool_n; i++)
        if (pool[i].st == st) pool[i].busy = false;
    pthread_mutex_unlock(&pool_mu);
}

/* ---- the tail cache (docs/object-storage.md "The tail cache") ----
**
** The first read of an object is its tail: a Vortex file's footer and layout, or all of a
** segment table or directory shard (its last PCH_RFILE_PROBE bytes when its size is not
** known; the bytes its reader asks for when the manifest gave the size). The objects a manifest names are
** immutable and the manifest gives each its BLAKE3 digest, so that tail can be kept on local
** disk under the digest and serve the next process without a request: a digest names one
** content, so an entry is never stale. Only checked bytes are kept: a small object read whole
** when it hashes to its digest, a data file's tail when its reader has checked it against the
** manifest (pch_rfile_keep_tail), so a damaged answer is never kept; the readers check every
** byte they use as before. (An ETag would need a HEAD per object to learn;
** the digest comes with the manifest.) An entry is "PCHTAIL1", the object's size, the tail's
** offset and length (little-endian u64), the BLAKE3 of the tail, then the tail; one that
** does not check is ignored. Written to a temporary name and renamed; a failure to write is
** not an error. The directory is PCH_OBJECT_CACHE ("off": no cache), else
** $XDG_CACHE_HOME/pchronicle/objects, else ~/.cache/pchronicle/objects. */

typedef struct known_id { char *path; char id[72]; uint64_t size; } known_id;
static pthread_mutex_t ids_mu = PTHREAD_MUTEX_INITIALIZER;
static known_id *ids;
static size_t ids_n, ids_cap;

static bool id_ok(const char *id)
{
    if (strncmp(id, "blake3:", 7) != 0 || strlen(id) != 7 + 64) return false;
    for (const char *c = id + 7; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) return false;
    return true;
}

int pch_rfile_note_identity(const char *path, const char *id, uint64_t size)
{
    int rc = PCH_OK;
    if (!pch_rfile_is_remote(path) || !id_ok(id)) return PCH_OK;
    pthread_mutex_lock(&ids_mu);
    for (size_t i = 0; i < ids_n; i++)
        if (strcmp(ids[i].path, path) == 0) { snprintf(ids[i].id, sizeof ids[i].id, "%s", id); ids[i].size = size; goto out; }
    if (ids_n == ids_cap) {
        size_t cap = ids_cap ? 2 * ids_cap : 64;
        known_id *n = realloc(ids, cap * sizeof *n);
        if (!n) { rc = PCH_ENOMEM; goto out; }
        ids = n;
        ids_cap = cap;
    }
    if (!(ids[ids_n].path = strdup(path))) { rc = PCH_ENOMEM; goto out; }
    snprintf(ids[ids_n].id, sizeof ids[ids_n].id, "%s", id);
    ids[ids_n].size = size;
    ids_n++;
out:
    pthread_mutex_unlock(&ids_mu);
    return rc;
}

static void identity_of(const char *path, char id[72], uint64_t *size)
{
    id[0] = 0;
    if (size) *size = UINT64_MAX;
    pthread_mutex_lock(&ids_mu);
    for (size_t i = ids_n; i-- > 0;)
        if (strcmp(ids[i].path, path) == 0) {
            memcpy(id, ids[i].id, 72);
            if (size) *size = ids[i].size;
            break;
        }
    pthread_mutex_unlock(&ids_mu);
}

/* The entry's path for id, or false when the cache is off. */
static bool cache_path(const char *id, char *out, size_t cap)
{
    const char *e = getenv("PCH_OBJECT_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int n;
    if (e && strcmp(e, "off") == 0) return false;
    if (e && *e) n = snprintf(out, cap, "%s/%s.tail", e, id + 7);
    else if (x && *x) n = snprintf(out, cap, "%s/pchronicle/objects/%s.tail", x, id + 7);
    else if (h && *h) n = snprintf(out, cap, "%s/.cache/pchronicle/objects/%s.tail", h, id + 7);
    else return false;
    return n > 0 && (size_t)n < cap;
}

#define TAIL_MAGIC "PCHTAIL1"
#define TAIL_HEAD (8 + 3 * 8 + 32)

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

bool pch_io_tail_parse(const uint8_t *b, size_t n, uint64_t *size, uint64_t *off, const uint8_t **tail, size_t *len)
{
    uint8_t d[32];
    if (!b || n < TAIL_HEAD || memcmp(b, TAIL_MAGIC, 8) != 0) return false;
    uint64_t sz = get_u64(b + 8), o = get_u64(b + 16), l = get_u64(b + 24);
    if (l != n - TAIL_HEAD || l > PCH_RFILE_PROBE || o > sz || sz - o != l) return false;
    pch_blake3_hash(d, b + TAIL_HEAD, (size_t)l);
    if (memcmp(d, b + 32, 32) != 0) return false;
    *size = sz;
    *off = o;
    *tail = b + TAIL_HEAD;
    *len = (size_t)l;
    return true;
}

/* The cached tail of the object with digest id: its bytes into tail, their offset and the
** object's size; false on a miss or an entry that does not check. */
static bool cache_read(pch_ctx *ctx, const char *id, pch_buf *tail, uint64_t *off_out, uint64_t *size_out)
{
    char path[4096];
    pch_buf b;
    pch_error e;
    bool hit = false;
    if (!cache_path(id, path, sizeof path)) return false;
    const uint8_t *t;
    size_t len;
    pch_buf_init(&b, ctx);
    if (pch_file_read_all(&b, path, TAIL_HEAD + PCH_RFILE_PROBE, &e) == PCH_OK &&
        pch_io_tail_parse(b.data, b.len, size_out, off_out, &t, &len)) {
        pch_buf_clear(tail);
        hit = pch_buf_append(tail, t, len) == 0;
    }
    pch_buf_dispose(&b);
    return hit;
}

/* Do len bytes hash to id ("blake3:<hex>")? An entry is written only for bytes that are
** checked: a whole object against its identity here, a tail by its reader (keep_tail), so
** that a damaged answer from the server is never kept for the next process. */
static bool id_matches(const char *id, const uint8_t *data, size_t len)
{
    uint8_t d[32];
    char hex[65];
    pch_blake3_hash(d, data, len);
    pch_hex_encode(hex, d, 32);
    return strcmp(hex, id + 7) == 0;
}

/* Keep bytes [off, size) of the object with digest id; best effort. */
static void cache_write(const char *id, uint64_t size, uint64_t off, const uint8_t *data, size_t len)
{
    char path[4096], tmp[4200], *slash;
    uint8_t head[TAIL_HEAD], rnd[8];
    pch_error e;
    int fd;
    if (!cache_path(id, path, sizeof path) || !(slash = strrchr(path, '/'))) return;
    *slash = 0;
    if (pch_mkdirs(path, &e) < 0 || pch_random_bytes(rnd, sizeof rnd, &e) < 0) return;
    *slash = '/';
    snprintf(tmp, sizeof tmp, "%.*s/.%02x%02x%02x%02x%02x%02x%02x%02x.tmp", (int)(slash - path), path, rnd[0], rnd[1], rnd[2],
             rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    memcpy(head, TAIL_MAGIC, 8);
    put_u64(head + 8, size);
    put_u64(head + 16, off);
    put_u64(head + 24, len);
    pch_blake3_hash(head + 32, data, len);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) return;
    bool ok = pch_write_all(fd, head, sizeof head) == 0 && pch_write_all(fd, data, len) == 0;
    if (close(fd) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

/* ---- files ---- */

bool pch_rfile_is_remote(const char *path) { return pch_store_is_s3(path); }

/* "s3://bucket/key" -> bucket span and key; false if there is no key. */
static bool split_s3(const char *path, size_t *bucket_len, const char **key)
{
    const char *slash = strchr(path + 5, '/');
    if (!slash || !slash[1]) return false;
    *bucket_len = (size_t)(slash - path);
    *key = slash + 1;
    return true;
}

int pch_rfile_open(pch_ctx *ctx, const char *path, pch_rfile **out, pch_error *err)
{
    *out = NULL;
    pch_rfile *f = pch_calloc(ctx, 1, sizeof *f);
    if (!f) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    f->ctx = ctx;
    f->fd = -1;
    f->min_span = PCH_RFILE_SPAN;
    for (size_t i = 0; i < N_SPANS; i++) pch_buf_init(&f->spans[i].data, ctx);
    int rc;
    if (pch_rfile_is_remote(path)) {
        size_t bl;
        const char *key;
        if (!split_s3(path, &bl, &key)) { rc = pch_error_set(err, PCH_EINVAL, "'%s' names no object", path); goto fail; }
        if ((rc = pch_store_key_check(key, err)) < 0) goto fail;
        if (!(f->key = pch_strndup(ctx, key, strlen(key)))) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto fail; }
        if ((rc = pool_take(path, bl, &f->st, err)) < 0) goto fail;
        uint64_t noted;
        identity_of(path, f->id, &noted);
        if (f->id[0] && cache_read(ctx, f->id, &f->spans[0].data, &f->spans[0].off, &f->size)) {
            f->have_size = f->tail_cached = true;
            f->spans[0].used = ++f->clock;
            f->st->stats.cache_hits++;
        } else if (f->id[0] && noted != UINT64_MAX) {
            /* the manifest gives its size: the first read is of the bytes wanted, not a probe
            ** of the last MiB (a size the server contradicts fails that read) */
            f->size = noted;
            f->have_size = f->size_noted = true;
        }
    } else {
        f->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (f->fd < 0) {
            rc = pch_error_set_sys(err, errno == ENOENT ? PCH_ENOTFOUND : PCH_EIO, errno, "open '%s'", path);
            goto fail;
        }
    }
    *out = f;
    return PCH_OK;
fail:
    pch_rfile_close(f);
    return rc;
}

void pch_rfile_close(pch_rfile *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    if (f->st) pool_give(f->st);
    for (size_t i = 0; i < N_SPANS; i++) pch_buf_dispose(&f->spans[i].data);
    pch_free(f->ctx, f->key);
    pch_free(f->ctx, f);
}

int pch_rfile_fd(const pch_rfile *f) { return f->fd; }
void pch_rfile_set_min_span(pch_rfile *f, uint64_t bytes) { f->min_span = bytes; }

static span *span_slot(pch_rfile *f)
{
    span *best = &f->spans[0];
    for (size_t i = 0; i < N_SPANS; i++) {
        if (f->spans[i].data.len == 0) return &f->spans[i];
        if (f->spans[i].used < best->used) best = &f->spans[i];
    }
    return best;
}

/* The kept span that holds all of [off, off+len), or NULL. */
static span *span_holding(pch_rfile *f, uint64_t off, uint64_t len)
{
    for (size_t i = 0; i < N_SPANS; i++) {
        span *s = &f->spans[i];
        if (s->data.len && off >= s->off && off + len <= s->off + s->data.len) return s;
    }
    return NULL;
}

/* Fetch [off, off+len) (suffix: the last len bytes) into a span. */
static int fetch(pch_rfile *f, uint64_t off, uint64_t len, bool suffix, pch_error *err)
{
    span *s = span_slot(f);
    pch_buf_clear(&s->data);
    uint64_t first = 0, total = 0;
    int rc = pch_store_s3_get_range(f->st, f->key, off, len, suffix, &s->data, &first, &total, err);
    if (rc < 0) { pch_buf_clear(&s->data); return rc; }
    if (f->have_size && total != f->size) {
        pch_buf_clear(&s->data);
        if (f->size_noted)
            return pch_error_set(err, PCH_ECORRUPT, "object is %llu bytes, its manifest says %llu (%s)", (unsigned long long)total,
                                 (unsigned long long)f->size, f->key);
        return pch_error_set(err, PCH_ECORRUPT, "%s changed size while open (%llu, now %llu bytes)", f->key,
                             (unsigned long long)f->size, (unsigned long long)total);
    }
    f->size_noted = false;
    f->size = total;
    f->have_size = true;
    s->off = first;
    s->used = ++f->clock;
    /* all of a small object: checked against its identity and kept (a longer one's tail is
    ** kept by the reader that checks it, pch_rfile_keep_tail) */
    if (f->id[0] && first == 0 && s->data.len == total && total <= PCH_RFILE_PROBE && id_matches(f->id, s->data.data, s->data.len))
        cache_write(f->id, total, 0, s->data.data, s->data.len);
    return PCH_OK;
}

int pch_rfile_size(pch_rfile *f, uint64_t *size, pch_error *err)
{
    if (f->fd >= 0) {
        struct stat sb;
        if (fstat(f->fd, &sb) != 0) return pch_error_set_sys(err, PCH_EIO, errno, "stat");
        *size = (uint64_t)sb.st_size;
        return PCH_OK;
    }
    if (!f->have_size) PCH_TRY(fetch(f, 0, PCH_RFILE_PROBE, true, err));
    *size = f->size;
    return PCH_OK;
}

int pch_rfile_pread(pch_rfile *f, void *dst, size_t len, uint64_t off, pch_error *err)
{
    uint8_t *d = dst;
    if (f->fd >= 0) {
        while (len) {
            ssize_t r = pread(f->fd, d, len, (off_t)off);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return pch_error_set_sys(err, PCH_EIO, errno, "read at %llu", (unsigned long long)off);
            if (r == 0) return pch_error_set(err, PCH_ECORRUPT, "read at %llu: past the end", (unsigned long long)off);
            d += r; len -= (size_t)r; off += (uint64_t)r;
        }
        return PCH_OK;
    }
    if (len == 0) return PCH_OK;
    f->st->stats.ranges++;
    f->st->stats.bytes_useful += len;
    if (!f->have_size) PCH_TRY(fetch(f, 0, PCH_RFILE_PROBE, true, err));
    if (off > f->size || len > f->size - off)
        return pch_error_set(err, PCH_ECORRUPT, "%s: read of %zu bytes at %llu is past its end (%llu bytes)", f->key, len,
                             (unsigned long long)off, (unsigned long long)f->size);
    span *s = span_holding(f, off, len);
    if (!s) {
        uint64_t want = len > f->min_span ? len : f->min_span;
        if (want > f->size - off) want = f->size - off;
        PCH_TRY(fetch(f, off, want, false, err));
        if (!(s = span_holding(f, off, len)))
            return pch_error_set(err, PCH_ECORRUPT, "%s: the server answered another range than asked", f->key);
    }
    memcpy(d, s->data.data + (off - s->off), len);
    s->used = ++f->clock;
    return PCH_OK;
}

int pch_rfile_prefetch(pch_rfile *f, uint64_t off, uint64_t len, pch_error *err)
{
    if (f->fd >= 0 || len == 0) return PCH_OK;
    if (!f->have_size) PCH_TRY(fetch(f, 0, PCH_RFILE_PROBE, true, err));
    if (off > f->size || len > f->size - off || span_holding(f, off, len)) return PCH_OK;
    return fetch(f, off, len, false, err);
}

/* Read-ahead fetches at most this many ranges at once: the spans hold them until they are
** read, beside the spans of the reads around them. */
#define AHEAD_SPANS PCH_RFILE_AHEAD_MAX
_Static_assert(AHEAD_SPANS <= N_SPANS / 2, "read-ahead spans leave room for the reads around them");

int pch_rfile_prefetch_ranges(pch_rfile *f, const uint64_t *r, size_t n, pch_error *err)
{
    pch_store_range rs[AHEAD_SPANS];
    span *sp[AHEAD_SPANS];
    size_t k = 0;
    uint64_t useful = 0;
    int rc = PCH_OK;
    if (f->fd >= 0 || n == 0) return PCH_OK;
    if (!f->have_size) PCH_TRY(fetch(f, 0, PCH_RFILE_PROBE, true, err));
    for (size_t i = 0; i < n && k < AHEAD_SPANS && rc == PCH_OK; i++) {
        uint64_t off = r[2 * i], len = r[2 * i + 1];
        size_t l;
        span *s;
        if (!len || off > f->size || len > f->size - off || span_holding(f, off, len)) continue;
        s = span_slot(f);
        pch_buf_clear(&s->data);
        if (!pch_u64_to_size(&l, len) || pch_buf_reserve(&s->data, l) < 0) {
            pch_buf_dispose(&s->data);
            pch_buf_init(&s->data, f->ctx);
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory for a %llu-byte read-ahead", (unsigned long long)len);
            break;
        }
        s->data.len = l;            /* taken: span_slot hands out empty spans first */
        s->off = off;
        s->used = ++f->clock;
        rs[k].off = off;
        rs[k].len = len;
        rs[k].dst = s->data.data;
        sp[k++] = s;
        useful += len;
    }
    if (rc == PCH_OK && k) {
        rc = pch_store_read_ranges(f->st, f->key, rs, k, err);
        /* the ranges are the callers' when they read them from the spans (pch_rfile_pread) */
        f->st->stats.ranges -= k;
        f->st->stats.bytes_useful -= useful;
    }
    if (rc < 0) {
        for (size_t j = 0; j < k; j++) pch_buf_clear(&sp[j]->data);
        /* an answer that does not fit what was asked (an object of another size than its
        ** manifest says): the reads that follow ask again, one by one, and say exactly what
        ** is wrong (fetch); a server that fails fails the prefetch */
        if (rc == PCH_ECORRUPT) rc = PCH_OK;
    }
    return rc;
}

void pch_rfile_keep_tail(pch_rfile *f, uint64_t off, const void *bytes, uint64_t len)
{
    if (f && f->fd < 0 && f->id[0] && !f->tail_cached && f->have_size && off <= f->size && len == f->size - off &&
        len <= PCH_RFILE_PROBE)
        cache_write(f->id, f->size, off, bytes, (size_t)len);
}

int pch_rfile_read_all(pch_ctx *ctx, pch_buf *out, const char *path, size_t max, pch_error *err)
{
    if (!pch_rfile_is_remote(path)) return pch_file_read_all(out, path, max, err);
    size_t bl;
    const char *key;
    if (!split_s3(path, &bl, &key)) return pch_error_set(err, PCH_EINVAL, "'%s' names no object", path);
    pch_store *st;
    PCH_TRY(pool_take(path, bl, &st, err));
    uint8_t *data = NULL;
    size_t len = 0;
    char id[72];
    int rc;
    pch_buf cached;
    uint64_t coff = 0, csize = 0;
    pch_buf_init(&cached, ctx);
    identity_of(path, id, NULL);
    if (id[0] && cache_read(ctx, id, &cached, &coff, &csize) && coff == 0 && csize <= max) {
        st->stats.cache_hits++;      /* a small object the tail cache holds whole */
        st->stats.ranges++;
        st->stats.bytes_useful += csize;
        rc = pch_buf_append(out, cached.data, cached.len) || pch_buf_reserve(out, 1) ? pch_error_set(err, PCH_ENOMEM, "out of memory") : PCH_OK;
        if (rc == PCH_OK) out->data[out->len] = 0;
        pch_buf_dispose(&cached);
        pool_give(st);
        return rc;
    }
    pch_buf_dispose(&cached);
    rc = pch_store_get(st, key, max, &data, &len, NULL, err);
    if (rc == PCH_OK) {
        st->stats.ranges++;
        st->stats.bytes_useful += len;
        if (id[0] && len <= PCH_RFILE_PROBE && id_matches(id, data, len)) cache_write(id, len, 0, data, len);
        if (pch_buf_append(out, data, len) || pch_buf_reserve(out, 1)) rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        else out->data[out->len] = 0;
    }
    pch_free(NULL, data);   /* the pool's stores allocate without a context */
    pool_give(st);
    return rc;
}

typedef struct list_arg {
    int (*cb)(void *arg, const char *name);
    void *arg;
    size_t skip;            /* the prefix's length */
    char last[512];         /* the previous name reported (keys come sorted) */
} list_arg;

static int on_key(void *arg, const pch_object_info *info)
{
    list_arg *a = arg;
    const char *rest = info->key + a->skip;
    size_t n = strcspn(rest, "/");
    if (n == 0 || n >= sizeof a->last) return 0;
    if (strlen(a->last) == n && memcmp(a->last, rest, n) == 0) return 0;
    memcpy(a->last, rest, n);
    a->last[n] = '\0';
    return a->cb(a->arg, a->last);
}

int pch_rfile_list(pch_ctx *ctx, const char *dir, int (*cb)(void *arg, const char *name), void *arg, pch_error *err)
{
    if (!pch_rfile_is_remote(dir)) {
        DIR *d = opendir(dir);
        if (!d) return errno == ENOENT ? PCH_OK : pch_error_set_sys(err, PCH_EIO, errno, "opendir %s", dir);
        struct dirent *e;
        int rc = PCH_OK;
        while (rc == PCH_OK && (e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) rc = cb(arg, e->d_name);
        closedir(d);
        return rc;
    }
    const char *slash = strchr(dir + 5, '/');
    size_t bl = slash ? (size_t)(slash - dir) : strlen(dir);
    pch_buf prefix;
    pch_buf_init(&prefix, ctx);
    if (slash && slash[1] && (pch_buf_append_str(&prefix, slash + 1) || pch_buf_putc(&prefix, '/')))
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    while (prefix.len >= 2 && prefix.data[prefix.len - 2] == '/') { prefix.len--; prefix.data[prefix.len] = '\0'; }
    pch_store *st;
    int rc = pool_take(dir, bl, &st, err);
    if (rc == PCH_OK) {
        list_arg a = { cb, arg, prefix.len, "" };
        rc = pch_store_list(st, prefix.len ? (const char *)prefix.data : "", on_key, &a, err);
        pool_give(st);
    }
    pch_buf_dispose(&prefix);
    return rc;
}
