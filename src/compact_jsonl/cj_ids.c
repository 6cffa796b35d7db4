/* The id-uniqueness index of an import (RFC-0014 "dataset 内的 id MUST 唯一"; duplicates fail
** naming both places). Memory is bounded by a budget, not by the corpus:
**
**   * ids go into an in-memory hash set (entries, slots, id bytes); a duplicate inside it is
**     reported at once;
**   * when the set outgrows the budget (counting what its entries use, not what the
**     doubling arrays hold: allocations may reach twice the budget) it is sorted by (hash,
**     id bytes) and appended as one run to an unnamed temporary file (O_TMPFILE, one file
**     for all runs) beside the staging directory, then emptied; runs are in row order
**     (every row of run i precedes every row of run i+1);
**   * at the end, if anything was spilled, the remaining set is spilled too and all runs
**     are merged (a heap over the runs, ordered by hash, id bytes, run): equal ids meet
**     there, the first of each group being the first occurrence. Of all duplicates the one
**     whose second occurrence comes first in row order is reported, so the message names the
**     same pair a single pass over the rows would have found first.
**
** Run record: u64 LE hash | u32 LE file | u64 LE line | u32 LE id length | id bytes.
** The temporary file vanishes with its descriptor, on every exit path including kill -9.
** Merge memory: one buffer per run, budget / runs within [4 KiB, 1 MiB]; runs hold at least
** SPILL_MIN ids, so even a tiny budget keeps their number (and that memory) in proportion. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "compact_jsonl/cj_int.h"

#define REC_HDR 24u
#define WRITE_BUF ((size_t)1 << 20)
#define MERGE_BUF_MIN ((size_t)4 << 10)
#define MERGE_BUF_MAX ((size_t)1 << 20)
#define SPILL_MIN 1024u     /* ids a run holds at least, whatever the budget */

typedef struct ent {
    uint64_t hash;
    uint64_t off;          /* in pool */
    uint64_t line;
    uint32_t len;
    uint32_t file;
} ent;

typedef struct run {
    uint64_t start, size, pos; /* in the run file; bytes read into buf so far */
    pch_buf buf;           /* buffered bytes [at, buf.len) not yet consumed */
    size_t at;
    /* the current record */
    uint64_t hash, line;
    uint32_t file, len;
    const uint8_t *id;
} run;

struct pch_cj_ids {
    pch_ctx *ctx;
    size_t budget;
    char *dir;             /* where run files are created */
    ent *ents;
    size_t n, cap;
    uint32_t *slots;       /* 1-based entry index, 0 = empty */
    size_t n_slots;
    pch_buf pool;
    int fd;                /* the run file, -1 until the first spill */
    uint64_t fd_size;
    run *runs;
    size_t n_runs, cap_runs;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
    const uint8_t *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211ull; }
    h ^= h >> 29; h *= 0xbf58476d1ce4e5b9ull; h ^= h >> 32;
    return h;
}

static void show_id(pch_cj_dup *d, const uint8_t *id, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 4 < sizeof d->shown; i++)
        d->shown[k++] = (char)((id[i] >= 0x20 && id[i] < 0x7f) ? id[i] : '?');
    d->shown[k] = 0;
}

int pch_cj__ids_new(pch_cj_ids **out, pch_ctx *ctx, size_t budget, const char *dir,
                    pch_error *err)
{
    pch_cj_ids *s = pch_calloc(ctx, 1, sizeof *s);
    size_t dl = strlen(dir);
    *out = NULL;
    if (!s || !(s->dir = pch_malloc(ctx, dl + 1))) {
        pch_free(ctx, s);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    memcpy(s->dir, dir, dl + 1);
    s->ctx = ctx;
    s->budget = budget ? budget : PCH_CJ_DEFAULT_ID_INDEX_BYTES;
    s->fd = -1;
    pch_buf_init(&s->pool, ctx);
    *out = s;
    return PCH_OK;
}

void pch_cj__ids_free(pch_cj_ids *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_runs; i++) pch_buf_dispose(&s->runs[i].buf);
    if (s->fd >= 0) close(s->fd);
    pch_free(s->ctx, s->runs);
    pch_free(s->ctx, s->ents);
    pch_free(s->ctx, s->slots);
    pch_buf_dispose(&s->pool);
    pch_free(s->ctx, s->dir);
    pch_free(s->ctx, s);
}

size_t pch_cj__ids_runs(const pch_cj_ids *s) { return s->n_runs; }

/* What the entries use: entry, two slots (the table stays at most half full), id bytes. */
static size_t mem_used(const pch_cj_ids *s)
{
    return s->n * (sizeof(ent) + 2 * sizeof(uint32_t)) + s->pool.len;
}

static int grow_slots(pch_cj_ids *s)
{
    size_t nn = s->n_slots ? s->n_slots * 2 : 1024;
    uint32_t *ns = pch_calloc(s->ctx, nn, sizeof *ns);
    if (!ns) return PCH_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = (size_t)s->ents[i].hash & (nn - 1);
        while (ns[j]) j = (j + 1) & (nn - 1);
        ns[j] = (uint32_t)(i + 1);
    }
    pch_free(s->ctx, s->slots);
    s->slots = ns;
    s->n_slots = nn;
    return PCH_OK;
}

/* ---- spilling ---- */

static int open_tmp(const pch_cj_ids *s, pch_error *err)
{
    int fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        /* a file system without O_TMPFILE: a named file, unlinked at once */
        pch_buf p;
        pch_buf_init(&p, s->ctx);
        if (pch_buf_printf(&p, "%s/.pch-ids-XXXXXX", s->dir) < 0) {
            pch_buf_dispose(&p);
            return pch_error_set(err, PCH_ENOMEM, "out of memory");
        }
        fd = mkostemp((char *)p.data, O_CLOEXEC);
        if (fd >= 0) unlink((const char *)p.data);
        pch_buf_dispose(&p);
    }
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "id index: temporary file in %s", s->dir);
    return fd;
}

static int cmp_key(uint64_t ha, const uint8_t *a, size_t la, uint64_t hb, const uint8_t *b, size_t lb)
{
    size_t m = la < lb ? la : lb;
    int c;
    if (ha != hb) return ha < hb ? -1 : 1;
    c = m ? memcmp(a, b, m) : 0;          /* an empty id may come with a NULL pointer */
    if (c) return c;
    return la < lb ? -1 : la > lb ? 1 : 0;
}

static int cmp_ent(const void *x, const void *y, void *arg)
{
    const pch_cj_ids *s = arg;
    const ent *a = &s->ents[*(const uint32_t *)x], *b = &s->ents[*(const uint32_t *)y];
    const uint8_t *pa = a->len ? s->pool.data + a->off : NULL, *pb = b->len ? s->pool.data + b->off : NULL;
    return cmp_key(a->hash, pa, a->len, b->hash, pb, b->len);
}

/* order[0..n) sorted by (hash, id bytes): an LSD radix sort of (hash, entry) pairs on the
** 64-bit hash (eight 8-bit digits, sequential passes; qsort's comparisons here took 9 % of
** the import's main thread), then an insertion sort inside each group of equal hashes
** (rare: the ids of a run are distinct). */
typedef struct hkey { uint64_t hash; uint32_t idx; } hkey;

static int sort_ents(pch_cj_ids *s, uint32_t *order, size_t n, pch_error *err)
{
    hkey *a = pch_malloc(s->ctx, (n ? n : 1) * sizeof *a), *b = pch_malloc(s->ctx, (n ? n : 1) * sizeof *b);
    if (!a || !b) {
        pch_free(s->ctx, a);
        pch_free(s->ctx, b);
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) { a[i].hash = s->ents[i].hash; a[i].idx = (uint32_t)i; }
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t cnt[256] = { 0 }, sum = 0;
        hkey *t;
        for (size_t i = 0; i < n; i++) cnt[(a[i].hash >> shift) & 0xff]++;
        for (size_t d = 0; d < 256; d++) { size_t c = cnt[d]; cnt[d] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) b[cnt[(a[i].hash >> shift) & 0xff]++] = a[i];
        t = a; a = b; b = t;              /* eight passes: the result ends in a */
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t x = a[i].idx;
        size_t j = i;
        while (j > 0 && a[i].hash == s->ents[order[j - 1]].hash && cmp_ent(&order[j - 1], &x, s) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    pch_free(s->ctx, a);
    pch_free(s->ctx, b);
    return PCH_OK;
}

/* Sort the set, append it to the run file as a new run, empty it. */
static int spill(pch_cj_ids *s, pch_error *err)
{
    uint32_t *order = NULL;
    pch_buf w;
    run *r;
    int rc = PCH_OK;
    uint64_t size = 0;

    if (s->n_runs == s->cap_runs) {
        size_t nc = s->cap_runs ? s->cap_runs * 2 : 8;
        run *nr = pch_realloc(s->ctx, s->runs, nc * sizeof *nr);
        if (!nr) return pch_error_set(err, PCH_ENOMEM, "out of memory");
        s->runs = nr;
        s->cap_runs = nc;
    }
    if (s->fd < 0) {
        int fd = open_tmp(s, err);
        if (fd < 0) return fd;
        s->fd = fd;
    }
    order = pch_malloc(s->ctx, (s->n ? s->n : 1) * sizeof *order);
    if (!order) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if ((rc = sort_ents(s, order, s->n, err)) < 0) { pch_free(s->ctx, order); return rc; }
    pch_buf_init(&w, s->ctx);
    for (size_t i = 0; i < s->n && rc == PCH_OK; i++) {
        const ent *e = &s->ents[order[i]];
        if (pch_buf_put_le64(&w, e->hash) || pch_buf_put_le32(&w, e->file) ||
            pch_buf_put_le64(&w, e->line) || pch_buf_put_le32(&w, e->len) ||
            (e->len && pch_buf_append(&w, s->pool.data + e->off, e->len))) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
            break;
        }
        if (w.len >= WRITE_BUF || i + 1 == s->n) {
            if (pch_write_all(s->fd, w.data, w.len) != 0)
                rc = pch_error_set_sys(err, PCH_EIO, errno, "id index: write a run in %s", s->dir);
            size += w.len;
            pch_buf_clear(&w);
        }
    }
    pch_buf_dispose(&w);
    pch_free(s->ctx, order);
    if (rc != PCH_OK) return rc;
    r = &s->runs[s->n_runs++];
    memset(r, 0, sizeof *r);
    r->start = s->fd_size;
    r->size = size;
    s->fd_size += size;
    pch_buf_init(&r->buf, s->ctx);
    /* empty the set, keeping its allocations */
    s->n = 0;
    if (s->slots) memset(s->slots, 0, s->n_slots * sizeof *s->slots);
    pch_buf_clear(&s->pool);
    return PCH_OK;
}

int pch_cj__ids_add(pch_cj_ids *s, const char *id, size_t len, uint32_t file, uint64_t line,
                    pch_cj_dup *dup, pch_error *err)
{
    uint64_t h = hash_bytes(id, len);
    size_t j;
    ent *e;
    if (len > UINT32_MAX) return pch_error_set(err, PCH_ELIMIT, "id of %zu bytes is too long", len);
    if (s->n >= UINT32_MAX - 1) PCH_TRY(spill(s, err));
    if ((s->n + 1) * 2 > s->n_slots && grow_slots(s) < 0)
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    j = (size_t)h & (s->n_slots - 1);
    while (s->slots[j]) {
        const ent *o = &s->ents[s->slots[j] - 1];
        if (o->hash == h && o->len == len && (len == 0 || memcmp(s->pool.data + o->off, id, len) == 0)) {
            dup->file = file;
            dup->line = line;
            dup->first_file = o->file;
            dup->first_line = o->line;
            show_id(dup, (const uint8_t *)id, len);
            return 1;
        }
        j = (j + 1) & (s->n_slots - 1);
    }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024, bytes;
        ent *ne;
        if (!pch_mul_size(&bytes, nc, sizeof *ne) || !(ne = pch_realloc(s->ctx, s->ents, bytes)))
            return pch_error_set(err, PCH_ENOMEM, "out of memory");
        s->ents = ne;
        s->cap = nc;
    }
    e = &s->ents[s->n];
    e->hash = h;
    e->off = s->pool.len;
    e->len = (uint32_t)len;
    e->file = file;
    e->line = line;
    if (len && pch_buf_append(&s->pool, id, len) < 0) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    s->n++;
    s->slots[j] = (uint32_t)s->n;
    /* at least SPILL_MIN ids a run, so that a tiny budget still makes runs of some size;
    ** while the set grows its memory may pass the budget by up to one doubling */
    if (mem_used(s) > s->budget && s->n >= SPILL_MIN) PCH_TRY(spill(s, err));
    return 0;
}

/* ---- merging ---- */

/* Load run r's next record into its current fields; *have = false at its end. */
static int run_next(int fd, run *r, size_t bufsz, bool *have, pch_error *err)
{
    for (;;) {
        size_t avail = r->buf.len - r->at;
        if (avail >= REC_HDR) {
            const uint8_t *p = r->buf.data + r->at;
            uint32_t len = pch_load_le32(p + 20);
            if (avail >= REC_HDR + (size_t)len) {
                r->hash = pch_load_le64(p);
                r->file = pch_load_le32(p + 8);
                r->line = pch_load_le64(p + 12);
                r->len = len;
                r->id = p + REC_HDR;
                r->at += REC_HDR + len;
                *have = true;
                return PCH_OK;
            }
            if (REC_HDR + (size_t)len > bufsz) bufsz = REC_HDR + (size_t)len;
        }
        if (r->pos == r->size) {
            if (avail) return pch_error_set(err, PCH_EIO, "id index: a run ends inside a record");
            *have = false;
            return PCH_OK;
        }
        /* keep the unconsumed tail, read more behind it */
        if (avail) memmove(r->buf.data, r->buf.data + r->at, avail);
        r->buf.len = avail;
        r->at = 0;
        {
            size_t want = bufsz > avail ? bufsz - avail : 0;
            ssize_t got;
            if ((uint64_t)want > r->size - r->pos) want = (size_t)(r->size - r->pos);
            if (want == 0) want = 1;
            if (pch_buf_reserve(&r->buf, want)) return pch_error_set(err, PCH_ENOMEM, "out of memory");
            do got = pread(fd, r->buf.data + r->buf.len, want, (off_t)(r->start + r->pos));
            while (got < 0 && errno == EINTR);
            if (got <= 0) return pch_error_set_sys(err, PCH_EIO, got < 0 ? errno : EIO, "id index: read a run");
            r->buf.len += (size_t)got;
            r->pos += (uint64_t)got;
        }
    }
}

static bool run_less(const run *a, size_t ia, const run *b, size_t ib)
{
    int c = cmp_key(a->hash, a->id, a->len, b->hash, b->id, b->len);
    return c ? c < 0 : ia < ib;
}

static void sift_down(const run *runs, size_t *heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && run_less(&runs[heap[l]], heap[l], &runs[heap[m]], heap[m])) m = l;
        if (l + 1 < n && run_less(&runs[heap[l + 1]], heap[l + 1], &runs[heap[m]], heap[m])) m = l + 1;
        if (m == i) return;
        size_t t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

static bool row_before(uint32_t fa, uint64_t la, uint32_t fb, uint64_t lb)
{
    return fa != fb ? fa < fb : la < lb;
}

int pch_cj__ids_finish(pch_cj_ids *s, pch_cj_dup *dup, pch_error *err)
{
    size_t *heap = NULL, n_heap = 0, bufsz;
    pch_buf key;
    uint64_t key_hash = 0;
    uint32_t key_file = 0;
    uint64_t key_line = 0;
    bool have_key = false, seen_second = false, found = false;
    int rc = PCH_OK;

    if (s->n_runs == 0) return 0;          /* everything met in memory */
    if (s->n) PCH_TRY(spill(s, err));
    /* the set's memory is no longer needed: the merge buffers take its place */
    pch_free(s->ctx, s->ents);
    pch_free(s->ctx, s->slots);
    s->ents = NULL;
    s->slots = NULL;
    s->cap = s->n_slots = 0;
    pch_buf_dispose(&s->pool);
    bufsz = s->budget / s->n_runs;
    bufsz = bufsz < MERGE_BUF_MIN ? MERGE_BUF_MIN : bufsz > MERGE_BUF_MAX ? MERGE_BUF_MAX : bufsz;
    if (!(heap = pch_malloc(s->ctx, s->n_runs * sizeof *heap)))
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    pch_buf_init(&key, s->ctx);
    for (size_t i = 0; i < s->n_runs && rc == PCH_OK; i++) {
        bool have;
        rc = run_next(s->fd, &s->runs[i], bufsz, &have, err);
        if (rc == PCH_OK && have) heap[n_heap++] = i;
    }
    for (size_t i = n_heap; rc == PCH_OK && i-- > 0;) sift_down(s->runs, heap, n_heap, i);
    while (rc == PCH_OK && n_heap) {
        run *r = &s->runs[heap[0]];
        bool have;
        if (have_key && cmp_key(key_hash, key.data, key.len, r->hash, r->id, r->len) == 0) {
            /* a repeat of the group's id: the group's first row is the first occurrence,
            ** this (its second) a candidate */
            if (!seen_second && (!found || row_before(r->file, r->line, dup->file, dup->line))) {
                dup->file = r->file;
                dup->line = r->line;
                dup->first_file = key_file;
                dup->first_line = key_line;
                show_id(dup, key.data, key.len);
                found = true;
            }
            seen_second = true;
        } else {
            pch_buf_clear(&key);
            if (r->len && pch_buf_append(&key, r->id, r->len)) {
                rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
                break;
            }
            key_hash = r->hash;
            key_file = r->file;
            key_line = r->line;
            have_key = true;
            seen_second = false;
        }
        rc = run_next(s->fd, r, bufsz, &have, err);
        if (rc != PCH_OK) break;
        if (!have) heap[0] = heap[--n_heap];
        sift_down(s->runs, heap, n_heap, 0);
    }
    pch_buf_dispose(&key);
    pch_free(s->ctx, heap);
    if (rc != PCH_OK) return rc;
    return found ? 1 : 0;
}
