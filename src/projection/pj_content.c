/* Content tiers (RFC-0006 §9): hot (inline lane), cold (separate lane of the same data
** file), external (immutable blob packs blobs/<pack-id>.vortex, content addressed by
** BLAKE3 of the raw bytes, deduplicated, with a content directory sorted by content id).
** Data files keep only the content id, never a pack locator (§9.4), so packs can move
** without rewriting trajectories. A read checks hash, raw length, stored length and codec
** of every value it hydrates (§9.5) and fails closed. */
#include <inttypes.h>
#include <stdlib.h>
#include <zstd.h>

#include "projection/pj_int.h"

#define PACK_SCHEMA "content_id:binary,logical_type:u8,media_type:utf8?,codec:u8,raw_length:u64," \
                    "stored_length:u64,preview:utf8?,payload:binary"
#define DIR_SCHEMA "content_id:binary,pack_id:utf8,row:u64,raw_length:u64"
#define PACK_CHUNK_BYTES (512u << 10) /* payload bytes per pack chunk: a hydration decodes one */
#define PACK_READ_BLOCK 4096u        /* a hydration reads the blocks of its own value (pack_file) */
#define CDIR_SHARD_ROWS 256u         /* content directory rows per shard, at least (pj_content_finish) */
#define CDIR_SHARDS_MAX 64u          /* and at most this many shards a commit */
enum { CODEC_IDENTITY = 0, CODEC_ZSTD = 1 };

typedef struct centry {
    uint8_t id[32];
    uint32_t pack;     /* index into packs */
    uint64_t row;
    uint64_t raw_length;
} centry;

struct pj_content {
    pch_ctx *ctx;
    const pch_vxp_build_options *o;
    char *stage;                      /* staging dir of the writer */
    pch_vx_dtype *pack_dt, *dir_dt;
    pch_vx_builder *pb;               /* rows of the open pack's current chunk */
    pch_vx_writer *pw;                /* open pack (streamed) */
    uint64_t pack_rows, chunk_bytes;
    char (*pack_ids)[33];
    size_t n_packs, cap_packs;
    centry *e;                        /* every stored value, in insertion order */
    size_t n, cap;
    uint32_t *slots;                  /* open-addressing set over e (index + 1) */
    size_t n_slots;
    uint64_t *sfast;                  /* fast hashes of the stored values (sfast_has), 0 = free */
    size_t n_sfast, cap_sfast;
    uint64_t *seen;                   /* values seen inline: fast-hash bits + sightings (seen_before) */
    size_t n_seen, cap_seen;          /* open addressing; capacity bounded by dedup_index_bytes */
    bool seen_full;
    pj_blobs *parent;                 /* the parent snapshot's external content (a sync) */
    char **files;                     /* staged files to publish, relative to root */
    size_t n_files;
    pch_vxp_build_stats st;           /* hot/cold/external bytes, dedup hits, blobs */
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

int pj_content_new(pj_content **out, pch_ctx *ctx, const char *stage_dir, const pch_vxp_build_options *o,
                   pch_error *err)
{
    pj_content *c = pch_calloc(ctx, 1, sizeof *c);
    *out = NULL;
    if (!c) return nomem(err);
    c->ctx = ctx;
    c->o = o;
    if (!(c->stage = strdup(stage_dir))) { pj_content_free(c); return nomem(err); }
    if (pch_vx_dtype_parse(&c->pack_dt, ctx, PACK_SCHEMA, err) < 0 || pch_vx_dtype_parse(&c->dir_dt, ctx, DIR_SCHEMA, err) < 0) {
        pj_content_free(c);
        return err->code;
    }
    *out = c;
    return PCH_OK;
}

void pj_content_free(pj_content *c)
{
    if (!c) return;
    pch_vx_builder_free(c->pb);
    pch_vx_writer_free(c->pw);
    pch_vx_dtype_free(c->pack_dt);
    pch_vx_dtype_free(c->dir_dt);
    for (size_t i = 0; i < c->n_files; i++) free(c->files[i]);
    free(c->files);
    free(c->stage);
    pch_free(c->ctx, c->pack_ids);
    pch_free(c->ctx, c->e);
    pch_free(c->ctx, c->slots);
    pch_free(c->ctx, c->sfast);
    pch_free(c->ctx, c->seen);
    pch_free(c->ctx, c);
}

static int add_file(pj_content *c, const char *rel, pch_error *err)
{
    char **nf = realloc(c->files, (c->n_files + 1) * sizeof *nf);
    if (!nf) return nomem(err);
    c->files = nf;
    if (!(c->files[c->n_files] = strdup(rel))) return nomem(err);
    c->n_files++;
    return PCH_OK;
}

void pj_content_parent(pj_content *c, pj_blobs *parent) { c->parent = parent; }

size_t pj_content_n_files(const pj_content *c) { return c->n_files; }
const char *pj_content_file(const pj_content *c, size_t i) { return i < c->n_files ? c->files[i] : NULL; }

static uint64_t id_hash(const uint8_t id[32]) { return pch_load_le64(id); }

/* Set lookup: index of the entry with this id, or -1. */
/* A fast hash of a value's bytes (pch_hash64) answers the two questions a build asks of every
** value of at least dedup-min bytes: was it stored already, has it been seen before. The
** BLAKE3 content id (§9.4) is computed only for the values that go external; hashing every
** candidate with it was a third of the appending thread's time on `scaled`. A collision of
** fast hashes costs a BLAKE3 and an exact lookup (stored), or sends a value external early
** (seen): never a wrong reference. */

/* The two hash sets of this file (sfast, seen) hold uint64 keys, 0 = a free slot, probed
** linearly from (key >> shift): old[0..cap) moved into a new table of nc slots (NULL: no
** memory). */
static uint64_t *u64set_rehash(pch_ctx *ctx, const uint64_t *old, size_t cap, size_t nc, unsigned shift)
{
    uint64_t *ns = pch_calloc(ctx, nc, sizeof *ns);
    if (!ns) return NULL;
    for (size_t i = 0; i < cap; i++) {
        size_t j;
        if (!old[i]) continue;
        for (j = (size_t)(old[i] >> shift) & (nc - 1); ns[j]; j = (j + 1) & (nc - 1)) {}
        ns[j] = old[i];
    }
    return ns;
}

static bool sfast_has(const pj_content *c, uint64_t h)
{
    h |= 1;                               /* 0 marks a free slot */
    if (!c->cap_sfast) return false;
    for (size_t k = (size_t)(h >> 1) & (c->cap_sfast - 1); c->sfast[k]; k = (k + 1) & (c->cap_sfast - 1))
        if (c->sfast[k] == h) return true;
    return false;
}

static int sfast_add(pj_content *c, uint64_t h, pch_error *err)
{
    h |= 1;
    if (sfast_has(c, h)) return PCH_OK;
    if ((c->n_sfast + 1) * 2 > c->cap_sfast) {
        size_t nc = c->cap_sfast ? c->cap_sfast * 2 : 1024;
        uint64_t *ns = u64set_rehash(c->ctx, c->sfast, c->cap_sfast, nc, 1);
        if (!ns) return nomem(err);
        pch_free(c->ctx, c->sfast);
        c->sfast = ns;
        c->cap_sfast = nc;
    }
    for (size_t k = (size_t)(h >> 1) & (c->cap_sfast - 1);; k = (k + 1) & (c->cap_sfast - 1))
        if (!c->sfast[k]) { c->sfast[k] = h; break; }
    c->n_sfast++;
    return PCH_OK;
}

static int64_t find(const pj_content *c, const uint8_t id[32])
{
    if (!c->n_slots) return -1;
    for (size_t s = (size_t)(id_hash(id) & (c->n_slots - 1));; s = (s + 1) & (c->n_slots - 1)) {
        uint32_t v = c->slots[s];
        if (!v) return -1;
        if (memcmp(c->e[v - 1].id, id, 32) == 0) return v - 1;
    }
}

static int set_grow(pj_content *c, pch_error *err)
{
    size_t ns = c->n_slots ? c->n_slots * 2 : 1024;
    uint32_t *sl = pch_calloc(c->ctx, ns, sizeof *sl);
    if (!sl) return nomem(err);
    for (size_t i = 0; i < c->n; i++)
        for (size_t s = (size_t)(id_hash(c->e[i].id) & (ns - 1));; s = (s + 1) & (ns - 1))
            if (!sl[s]) { sl[s] = (uint32_t)i + 1; break; }
    pch_free(c->ctx, c->slots);
    c->slots = sl;
    c->n_slots = ns;
    return PCH_OK;
}

static int pack_flush_chunk(pj_content *c, pch_error *err)
{
    pch_vx_array *a = NULL;
    int rc;
    if (!c->pb || !pch_vx_builder_len(c->pb)) return PCH_OK;
    PCH_TRY(pch_vx_builder_finish(c->pb, &a, err));
    rc = pch_vx_writer_write(c->pw, a, err);
    pch_vx_array_free(a);
    c->chunk_bytes = 0;
    return rc;
}

static int pack_seal(pj_content *c, pch_error *err)
{
    if (!c->pw) return PCH_OK;
    PCH_TRY(pack_flush_chunk(c, err));
    PCH_TRY(pch_vx_writer_finish(c->pw, err));
    c->st.blob_bytes += pch_vx_writer_file_bytes(c->pw);
    pch_vx_writer_free(c->pw);
    c->pw = NULL;
    return PCH_OK;
}

static int pack_open(pj_content *c, pch_error *err)
{
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    pch_buf path;
    char rel[64];
    int rc;
    if (c->n_packs == c->cap_packs) {
        size_t nc = c->cap_packs ? c->cap_packs * 2 : 8;
        char (*np)[33] = pch_realloc(c->ctx, c->pack_ids, nc * sizeof *np);
        if (!np) return nomem(err);
        c->pack_ids = np;
        c->cap_packs = nc;
    }
    PCH_TRY(pj_random_id(c->pack_ids[c->n_packs], 16, err));
    snprintf(rel, sizeof rel, "blobs/%s.vortex", c->pack_ids[c->n_packs]);
    /* payloads are compressed one by one (codec per value): no second page compression */
    wo.compress = 0;
    wo.zone_len = 0;
    wo.dict_layout = 0;
    pch_buf_init(&path, c->ctx);
    pch_buf_printf(&path, "%s/%s", c->stage, rel);
    if (path.oom) { pch_buf_dispose(&path); return nomem(err); }
    rc = pch_vx_writer_open_path(&c->pw, c->ctx, c->pack_dt, (const char *)path.data, &wo, err);
    pch_buf_dispose(&path);
    PCH_TRY(rc);
    if (!c->pb) PCH_TRY(pch_vx_builder_new(&c->pb, c->ctx, c->pack_dt, err));
    c->n_packs++;
    c->pack_rows = 0;
    return add_file(c, rel, err);
}

/* Store one external value (new id). */
static int store(pj_content *c, const uint8_t id[32], uint64_t h, const void *p, size_t n, uint8_t logical_type,
                 const char *media_type, pch_error *err)
{
    size_t bound = ZSTD_compressBound(n);
    uint8_t *z = NULL;
    size_t zn = 0;
    int codec = CODEC_IDENTITY;
    int rc = PCH_OK;
    pch_vx_builder *b;
    if (c->pw && pch_vx_writer_file_bytes(c->pw) + c->chunk_bytes >= c->o->pack_bytes) PCH_TRY(pack_seal(c, err));
    if (!c->pw) PCH_TRY(pack_open(c, err));
    b = c->pb;
    if (n >= 64 && (z = pch_malloc(c->ctx, bound))) {
        zn = ZSTD_compress(z, bound, p, n, 3);
        if (!ZSTD_isError(zn) && zn < n - n / 8) codec = CODEC_ZSTD;
    }
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    CK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 0), id, 32, err));
    CK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 1), logical_type, err));
    CK(media_type && media_type[0] ? pch_vx_builder_append_bytes(pch_vx_builder_child(b, 2), media_type, strlen(media_type), err)
                                   : pch_vx_builder_append_null(pch_vx_builder_child(b, 2), err));
    CK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 3), (uint64_t)codec, err));
    CK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 4), n, err));
    CK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 5), codec == CODEC_ZSTD ? zn : n, err));
    if (logical_type == PJ_CK_TEXT) {
        size_t k = n < 256 ? n : 256;
        while (k > 0 && k < n && (((const uint8_t *)p)[k] & 0xc0) == 0x80) k--;
        CK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 6), p, k, err));
    } else {
        CK(pch_vx_builder_append_null(pch_vx_builder_child(b, 6), err));
    }
    CK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 7), codec == CODEC_ZSTD ? z : p, codec == CODEC_ZSTD ? zn : n, err));
    CK(pch_vx_builder_append_valid(b, err));
#undef CK
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 256;
        centry *ne = pch_realloc(c->ctx, c->e, nc * sizeof *ne);
        if (!ne) { rc = nomem(err); goto done; }
        c->e = ne;
        c->cap = nc;
    }
    if ((c->n + 1) * 2 > c->n_slots && (rc = set_grow(c, err)) < 0) goto done;
    memcpy(c->e[c->n].id, id, 32);
    c->e[c->n].pack = (uint32_t)(c->n_packs - 1);
    c->e[c->n].row = c->pack_rows++;
    c->e[c->n].raw_length = n;
    for (size_t s = (size_t)(id_hash(id) & (c->n_slots - 1));; s = (s + 1) & (c->n_slots - 1))
        if (!c->slots[s]) { c->slots[s] = (uint32_t)c->n + 1; break; }
    c->n++;
    if ((rc = sfast_add(c, h, err)) < 0) goto done;
    c->st.blobs++;
    c->chunk_bytes += codec == CODEC_ZSTD ? zn : n;
    if (c->chunk_bytes >= PACK_CHUNK_BYTES) rc = pack_flush_chunk(c, err);
done:
    pch_free(c->ctx, z);
    return rc;
}

/* A repeated value goes external at its third sighting, not its second. External storage
** costs a second copy of the value (the first stays inline: it was written before the
** repeat was known), compressed alone, plus a 32-byte reference per occurrence and a
** directory row; inline, a repeat costs what zstd leaves of it in its frame. A value seen
** exactly twice is therefore cheaper inline, and one seen three or more times pays back
** (measured, docs/vortex-projection.md §8, "Repeated content"). */
#define EXTERNAL_AFTER_SIGHTINGS 2

/* Remember that a value of fast hash h was seen; true if it had been seen
** EXTERNAL_AFTER_SIGHTINGS times before. A slot keeps 62 bits of the hash and, in its low 2
** bits, the sightings so far (1 or more, so a used slot is never 0). Two values that share
** those bits count as one: that can only send a value external early, never make a wrong
** reference (a reference is the whole BLAKE3 id, §9.4). The set stops growing at
** dedup_index_bytes (values first seen after that are simply not deduplicated). */
static bool seen_before(pj_content *c, uint64_t h)
{
    uint64_t key = h & ~(uint64_t)3;
    size_t mask, k;
    if (!c->cap_seen) {
        size_t cap = 4096;
        if (c->seen_full || !(c->seen = pch_calloc(c->ctx, cap, sizeof *c->seen))) { c->seen_full = true; return false; }
        c->cap_seen = cap;
    }
    mask = c->cap_seen - 1;
    for (k = (size_t)(key >> 2) & mask; c->seen[k]; k = (k + 1) & mask) {
        if ((c->seen[k] & ~(uint64_t)3) != key) continue;
        if ((c->seen[k] & 3) >= EXTERNAL_AFTER_SIGHTINGS) return true;
        c->seen[k]++;
        return false;
    }
    if (c->seen_full) return false;
    c->seen[k] = key | 1;
    if (++c->n_seen * 2 > c->cap_seen) {
        size_t nc = c->cap_seen * 2;
        uint64_t *ns;
        if (nc * sizeof *ns > c->o->dedup_index_bytes || !(ns = u64set_rehash(c->ctx, c->seen, c->cap_seen, nc, 2))) {
            c->seen_full = true;
            return false;
        }
        pch_free(c->ctx, c->seen);
        c->seen = ns;
        c->cap_seen = nc;
    }
    return false;
}

int pj_content_put(pj_content *c, const void *p, size_t n, uint8_t logical_type, const char *media_type,
                   pj_tier *tier, uint8_t id[32], pch_error *err)
{
    bool asset = logical_type == PJ_CK_PARTS;
    bool repeat = false, have_id = false;
    uint64_t h = 0;
    /* §9.3: assets are always external; a value that repeats an earlier one (at least
    ** dedup_min_bytes) is external too, stored once; everything else by size */
    if (!asset && n < c->o->hot_max_bytes && (!c->o->dedup_min_bytes || n < c->o->dedup_min_bytes)) {
        *tier = PJ_TIER_HOT; c->st.hot_bytes += n; return PCH_OK;
    }
    if (asset || n >= c->o->cold_max_bytes || (c->o->dedup_min_bytes && n >= c->o->dedup_min_bytes)) {
        const bool forced = asset || n >= c->o->cold_max_bytes;   /* external whatever */
        bool reuse = false;
        h = pch_hash64(p, n);
        /* the id where it is needed: the value goes external, a sync's parent may store it,
        ** or this build may have (its fast hash is a stored one's) */
        if (forced || c->parent || sfast_has(c, h)) {
            pch_blake3_hash(id, p, n);
            have_id = true;
            reuse = find(c, id) >= 0;
            /* a sync: the parent already stores it (an asset keeps its own media type) */
            if (!reuse && !asset && c->parent) PCH_TRY(pj_blobs_has(c->parent, id, &reuse, err));
        }
        if (reuse) {
            *tier = PJ_TIER_EXTERNAL;
            c->st.external_bytes += n;
            c->st.dedup_hits++;
            return PCH_OK;
        }
        if (!asset && n < c->o->cold_max_bytes) repeat = seen_before(c, h);
    }
    if (!asset && !repeat && n < c->o->hot_max_bytes) { *tier = PJ_TIER_HOT; c->st.hot_bytes += n; return PCH_OK; }
    if (!asset && !repeat && n < c->o->cold_max_bytes) { *tier = PJ_TIER_COLD; c->st.cold_bytes += n; return PCH_OK; }
    if (!have_id) pch_blake3_hash(id, p, n);
    *tier = PJ_TIER_EXTERNAL;
    c->st.external_bytes += n;
    return store(c, id, h, p, n, logical_type, media_type, err);
}

static int cmp_entry(const void *a, const void *b)
{
    return memcmp(((const centry *)a)->id, ((const centry *)b)->id, 32);
}

int pj_content_finish(pj_content *c, const char *snapshot_id, pch_buf *packs_json, pch_buf *dir_json,
                      pch_vxp_build_stats *st, pch_error *err)
{
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_builder *b = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_array *a = NULL;
    pch_buf path;
    char rel[96], digest[80];
    uint64_t bytes;
    int rc = PCH_OK;
    PCH_TRY(pack_seal(c, err));
    st->hot_bytes += c->st.hot_bytes;
    st->cold_bytes += c->st.cold_bytes;
    st->external_bytes += c->st.external_bytes;
    st->dedup_hits += c->st.dedup_hits;
    st->blobs += c->st.blobs;
    st->blob_packs += c->n_packs;
    st->blob_bytes += c->st.blob_bytes;
    pch_buf_init(&path, c->ctx);
    for (size_t i = 0; i < c->n_packs; i++) {
        uint64_t rows = 0;
        for (size_t k = 0; k < c->n; k++) rows += c->e[k].pack == i;
        snprintf(rel, sizeof rel, "blobs/%s.vortex", c->pack_ids[i]);
        pch_buf_clear(&path);
        pch_buf_printf(&path, "%s/%s", c->stage, rel);
        if (path.oom) { rc = nomem(err); goto done; }
        if ((rc = pj_file_digest((const char *)path.data, digest, &bytes, err)) < 0) goto done;
        pch_buf_printf(packs_json, "%s{\"path\":\"%s\",\"pack_id\":\"%s\",\"bytes\":%" PRIu64 ",\"digest\":\"%s\",\"blobs\":%" PRIu64 "}",
                       i ? "," : "", rel, c->pack_ids[i], bytes, digest, rows);
    }
    if (!c->n) goto done;   /* no external content: no content directory */
    /* the content directory: every id once, sorted (§9.4), in shards of consecutive ids whose
    ** manifest entries give the first 8 bytes of their first and last id, so that a point read
    ** loads only the shard that can hold its id (a whole directory was 4 ms of a cold get on
    ** 10,000 `scaled` documents, and it grows with the snapshot) */
    qsort(c->e, c->n, sizeof *c->e, cmp_entry);
    wo.zone_len = 0;
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    {
        size_t per = (c->n + CDIR_SHARDS_MAX - 1) / CDIR_SHARDS_MAX;
        if (per < CDIR_SHARD_ROWS) per = CDIR_SHARD_ROWS;
        for (size_t s0 = 0, k = 0; s0 < c->n; s0 += per, k++) {
            size_t s1 = s0 + per < c->n ? s0 + per : c->n;
            char lo[17], hi[17];
            snprintf(rel, sizeof rel, "directories/content/%s-%zu.vortex", snapshot_id, k);
            pch_buf_clear(&path);
            pch_buf_printf(&path, "%s/%s", c->stage, rel);
            if (path.oom) { rc = nomem(err); goto done; }
            CK(pch_vx_builder_new(&b, c->ctx, c->dir_dt, err));
            for (size_t i = s0; i < s1; i++) {
                CK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 0), c->e[i].id, 32, err));
                CK(pch_vx_builder_append_bytes(pch_vx_builder_child(b, 1), c->pack_ids[c->e[i].pack], 32, err));
                CK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 2), c->e[i].row, err));
                CK(pch_vx_builder_append_uint(pch_vx_builder_child(b, 3), c->e[i].raw_length, err));
                CK(pch_vx_builder_append_valid(b, err));
            }
            CK(pch_vx_builder_finish(b, &a, err));
            CK(pch_vx_writer_open_path(&w, c->ctx, c->dir_dt, (const char *)path.data, &wo, err));
            CK(pch_vx_writer_write(w, a, err));
            CK(pch_vx_writer_finish(w, err));
            pch_vx_writer_free(w);
            w = NULL;
            pch_vx_array_free(a);
            a = NULL;
            pch_vx_builder_free(b);
            b = NULL;
            CK(pj_file_digest((const char *)path.data, digest, &bytes, err));
            st->directory_bytes += bytes;
            pch_hex_encode(lo, c->e[s0].id, 8);
            pch_hex_encode(hi, c->e[s1 - 1].id, 8);
            pch_buf_printf(dir_json, "%s{\"path\":\"%s\",\"bytes\":%" PRIu64 ",\"digest\":\"%s\",\"rows\":%zu,\"id_lo\":\"%s\",\"id_hi\":\"%s\"}",
                           k ? "," : "", rel, bytes, digest, s1 - s0, lo, hi);
            CK(add_file(c, rel, err));
        }
    }
#undef CK
done:
    if (rc == PCH_OK && (packs_json->oom || dir_json->oom)) rc = nomem(err);
    pch_vx_array_free(a);
    pch_vx_builder_free(b);
    pch_vx_writer_free(w);
    pch_buf_dispose(&path);
    return rc;
}

/* ------------------------------------------------------------------ reader side */

typedef struct openpack {
    char id[33];
    pch_vx_file *f;
} openpack;

/* One content directory file: rows sorted by id. A snapshot has one per build or sync that
** stored external content (§9.4; an incremental sync adds its own, §11.2); an id is looked up
** newest first. */
typedef struct cdir {
    pch_buf file;               /* the file's bytes (the decoded arrays may borrow them) */
    pch_vx_array *dir;
    pch_vx_dtype *dir_dt;
    const pch_vx_array *ids, *packs, *rows, *raw;
    uint64_t n;
    bool loaded;
    bool ranged;                /* the manifest gives id_lo/id_hi (a shard: built since
                                ** 2026-12-06): an id whose first 8 bytes lie outside
                                ** [lo, hi] is not in it, and it is not read for that id */
    uint64_t lo, hi;
} cdir;

/* Hydrated values kept by content id. A value is external chiefly because it repeats
** (--dedup-min), so a scan or a training read hydrates the same few values again and again;
** each is read and checked (§9.5) once, then copied from here. Bounded by BLOB_CACHE_BYTES:
** when the next value would pass it, the cache is emptied and starts again. */
#define BLOB_CACHE_BYTES ((size_t)64 << 20)
typedef struct hslot {
    uint8_t id[32];
    uint8_t *p;                 /* NULL: empty slot */
    size_t n;
} hslot;

struct pj_blobs {
    hslot *hc;                  /* open addressing, capacity a power of two */
    size_t hc_cap, hc_n, hc_bytes;
    pch_ctx *ctx;
    char *root;
    const pch_json_value *cd;   /* the manifest's content_directory (borrowed) */
    uint64_t n;                 /* rows over every directory (the manifest's) */
    cdir *d;                    /* one per manifest entry, each loaded when a lookup needs it */
    size_t nd;
    uint64_t reads, bytes;      /* directory files read, not yet counted in a query's stats */
    openpack open[8];           /* small cache of open packs (footers read once) */
    unsigned next_slot;
};

static void hc_clear(pj_blobs *b)
{
    for (size_t i = 0; i < b->hc_cap; i++) pch_free(b->ctx, b->hc[i].p);
    pch_free(b->ctx, b->hc);
    b->hc = NULL;
    b->hc_cap = b->hc_n = b->hc_bytes = 0;
}

static hslot *hc_find(const pj_blobs *b, const uint8_t id[32])
{
    if (!b->hc_cap) return NULL;
    for (size_t i = (size_t)pch_load_le64(id) & (b->hc_cap - 1);; i = (i + 1) & (b->hc_cap - 1)) {
        if (!b->hc[i].p) return NULL;
        if (memcmp(b->hc[i].id, id, 32) == 0) return &b->hc[i];
    }
}

/* Keep a copy of a checked value (best effort: no memory, no copy). */
static void hc_put(pj_blobs *b, const uint8_t id[32], const uint8_t *p, size_t n)
{
    uint8_t *c;
    size_t i;
    if (n == 0 || n > BLOB_CACHE_BYTES / 4) return;
    if (b->hc_bytes + n > BLOB_CACHE_BYTES) hc_clear(b);
    if ((b->hc_n + 1) * 2 > b->hc_cap) {
        size_t nc = b->hc_cap ? b->hc_cap * 2 : 256;
        hslot *nh = pch_calloc(b->ctx, nc, sizeof *nh);
        if (!nh) return;
        for (size_t k = 0; k < b->hc_cap; k++) {
            if (!b->hc[k].p) continue;
            for (i = (size_t)pch_load_le64(b->hc[k].id) & (nc - 1); nh[i].p; i = (i + 1) & (nc - 1)) {}
            nh[i] = b->hc[k];
        }
        pch_free(b->ctx, b->hc);
        b->hc = nh;
        b->hc_cap = nc;
    }
    if (!(c = pch_malloc(b->ctx, n))) return;
    memcpy(c, p, n);
    for (i = (size_t)pch_load_le64(id) & (b->hc_cap - 1); b->hc[i].p; i = (i + 1) & (b->hc_cap - 1)) {}
    memcpy(b->hc[i].id, id, 32);
    b->hc[i].p = c;
    b->hc[i].n = n;
    b->hc_n++;
    b->hc_bytes += n;
}

/* Drop a content directory's loaded rows (back to "not loaded"). */
static void cdir_unload(cdir *c)
{
    pch_vx_array_free(c->dir);
    pch_vx_dtype_free(c->dir_dt);
    pch_buf_dispose(&c->file);
    c->dir = NULL;
    c->dir_dt = NULL;
    c->ids = c->packs = c->rows = c->raw = NULL;
    c->n = 0;
    c->loaded = false;
}

static void cdirs_free(pj_blobs *b)
{
    for (size_t i = 0; i < b->nd; i++) cdir_unload(&b->d[i]);
    pch_free(b->ctx, b->d);
    b->d = NULL;
    b->nd = 0;
}

void pj_blobs_free(pj_blobs *b)
{
    if (!b) return;
    hc_clear(b);
    for (int i = 0; i < 8; i++) pch_vx_file_free(b->open[i].f);
    cdirs_free(b);
    free(b->root);
    pch_free(b->ctx, b);
}

uint64_t pj_blobs_count(const pj_blobs *b) { return b ? b->n : 0; }

static bool hex_id(const char *s, size_t n)
{
    if (n != 32) return false;
    for (size_t i = 0; i < n; i++) if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* Load content directory file `item` of the manifest into c (digest, rows and order checked):
** one read, the bytes checked against the manifest, then decoded from memory. */
static int cdir_load(pj_blobs *b, const pch_json_value *item, cdir *c, pch_error *err)
{
    pch_ctx *ctx = b->ctx;
    pch_vx_file *f = NULL;
    pch_buf path;
    char rel[128], want[80], got[80];
    uint64_t rows;
    int rc = PCH_OK;
    if (!pj_json_str(item, "path", rel, sizeof rel) || !pj_json_str(item, "digest", want, sizeof want) ||
        !pj_json_u64(item, "rows", &rows))
        return pch_error_set(err, PCH_ECORRUPT, "manifest: content_directory entry lacks path, digest or rows");
    PCH_TRY(pj_path_check(rel, strlen(rel), err));
    pch_buf_init(&path, ctx);
    pch_buf_init(&c->file, ctx);
    pch_buf_printf(&path, "%s/%s", b->root, rel);
    if (path.oom) return nomem(err);
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    CK(pch_rfile_read_all(ctx, &c->file, (const char *)path.data, (size_t)1 << 30, err));
    b->reads++;
    b->bytes += c->file.len;
    pj_bytes_digest(got, c->file.data, c->file.len);
    if (strcmp(got, want) != 0) { rc = pch_error_set(err, PCH_ECORRUPT, "%s: digest %s, manifest says %s", rel, got, want); goto done; }
    CK(pch_vx_file_open_mem(&f, ctx, c->file.data, c->file.len, err));
    if (pch_vx_file_row_count(f) != rows) { rc = pch_error_set(err, PCH_ECORRUPT, "%s: %" PRIu64 " rows, manifest says %" PRIu64, rel, pch_vx_file_row_count(f), rows); goto done; }
    CK(pch_vx_file_scan(f, NULL, &c->dir, &c->dir_dt, err));
    if (c->dir_dt->n_fields != 4 || c->dir->children[0]->dtype->kind != PCH_VX_BINARY ||
        c->dir->children[1]->dtype->kind != PCH_VX_UTF8 || c->dir->children[2]->dtype->kind != PCH_VX_PRIMITIVE ||
        c->dir->children[2]->dtype->ptype != PCH_VX_U64 || c->dir->children[3]->dtype->ptype != PCH_VX_U64) {
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: not a content directory", rel);
        goto done;
    }
    c->ids = c->dir->children[0];
    c->packs = c->dir->children[1];
    c->rows = c->dir->children[2];
    c->raw = c->dir->children[3];
    c->n = c->dir->len;
    if (c->ranged && c->n &&
        (c->ids->offsets[1] - c->ids->offsets[0] != 32 || c->ids->offsets[c->n] - c->ids->offsets[c->n - 1] != 32 ||
         pch_load_be64(c->ids->data + c->ids->offsets[0]) != c->lo ||
         pch_load_be64(c->ids->data + c->ids->offsets[c->n - 1]) != c->hi)) {
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: its first and last ids are not the manifest's id_lo and id_hi", rel);
        goto done;
    }
    for (uint64_t i = 0; i < c->n; i++) {
        int64_t l = c->ids->offsets[i + 1] - c->ids->offsets[i];
        if (l != 32 || !pch_vx_array_is_valid(c->ids, i) || !pch_vx_array_is_valid(c->packs, i) ||
            !hex_id((const char *)c->packs->data + c->packs->offsets[i], (size_t)(c->packs->offsets[i + 1] - c->packs->offsets[i])) ||
            (i && memcmp(c->ids->data + c->ids->offsets[i - 1], c->ids->data + c->ids->offsets[i], 32) >= 0)) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: row %" PRIu64 " breaks the directory (32-byte ids, sorted, unique; hex pack ids)", rel, i);
            goto done;
        }
    }
#undef CK
done:
    pch_vx_file_free(f);
    pch_buf_dispose(&path);
    if (rc < 0) cdir_unload(c);   /* not kept: the next lookup that needs it fails the same way */
    else c->loaded = true;
    return rc;
}

/* Every content directory of the manifest (§9.4): verify, and a sync asking about many ids. */
static int blobs_load(pj_blobs *b, pch_error *err)
{
    for (size_t i = 0; i < b->nd; i++) {
        int rc = b->d[i].loaded ? PCH_OK : cdir_load(b, &b->cd->u.items[i], &b->d[i], err);
        if (rc < 0) {   /* none kept: the next read tries again and fails the same way */
            for (size_t k = 0; k < b->nd; k++) cdir_unload(&b->d[k]);
            return rc;
        }
    }
    return PCH_OK;
}

/* A manifest entry's id_lo / id_hi (16 hex digits each), when it has them. */
static int cdir_range(const pch_json_value *item, uint32_t i, cdir *c, pch_error *err)
{
    char lo[24], hi[24];
    uint8_t l[8], h[8];
    bool has_lo = pj_json_str(item, "id_lo", lo, sizeof lo), has_hi = pj_json_str(item, "id_hi", hi, sizeof hi);
    if (!has_lo && !has_hi && !pch_json_get(item, "id_lo", 5) && !pch_json_get(item, "id_hi", 5)) return PCH_OK;
    if (!has_lo || !has_hi || strlen(lo) != 16 || strlen(hi) != 16 || !pch_hex_decode(l, lo, 8) || !pch_hex_decode(h, hi, 8) ||
        pch_load_be64(l) > pch_load_be64(h))
        return pch_error_set(err, PCH_ECORRUPT, "manifest: content_directory entry %u: id_lo/id_hi are not two ordered 16-digit hex prefixes", i);
    c->ranged = true;
    c->lo = pch_load_be64(l);
    c->hi = pch_load_be64(h);
    return PCH_OK;
}

int pj_blobs_open(pj_blobs **out, pch_ctx *ctx, const char *root, const pch_json_value *manifest, bool lazy,
                  pch_error *err)
{
    const pch_json_value *cd = pj_json_member(manifest, "content_directory", PCH_JSON_ARRAY);
    pj_blobs *b;
    int rc;
    *out = NULL;
    if (!(b = pch_calloc(ctx, 1, sizeof *b)) || !(b->root = strdup(root))) { pch_free(ctx, b); return nomem(err); }
    b->ctx = ctx;
    b->cd = cd;
    if (cd && cd->n && !(b->d = pch_calloc(ctx, cd->n, sizeof *b->d))) { pj_blobs_free(b); return nomem(err); }
    b->nd = cd ? cd->n : 0;
    for (uint32_t i = 0; cd && i < cd->n; i++) {
        uint64_t rows;
        if (!pj_json_u64(&cd->u.items[i], "rows", &rows) || rows > UINT64_MAX - b->n) {
            pj_blobs_free(b);
            return pch_error_set(err, PCH_ECORRUPT, "manifest: content_directory entry %u lacks its rows", i);
        }
        if ((rc = cdir_range(&cd->u.items[i], i, &b->d[i], err)) < 0) { pj_blobs_free(b); return rc; }
        b->n += rows;
    }
    if (!lazy && (rc = blobs_load(b, err)) < 0) { pj_blobs_free(b); return rc; }
    *out = b;
    return PCH_OK;
}

/* Row of id in a content directory, newest directory first (*c set), or -1 in *row; the
** directories that can hold it are loaded first. */
static int lookup(pj_blobs *b, const uint8_t id[32], const cdir **c, int64_t *row, pch_error *err)
{
    const uint64_t key = pch_load_be64(id);
    *row = -1;
    for (size_t i = b->nd; i-- > 0;) {
        cdir *d = &b->d[i];
        uint64_t lo = 0, hi;
        if (d->ranged && (key < d->lo || key > d->hi)) continue;
        if (!d->loaded) PCH_TRY(cdir_load(b, &b->cd->u.items[i], d, err));
        hi = d->n;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            int r = memcmp(d->ids->data + d->ids->offsets[mid], id, 32);
            if (r == 0) { *c = d; *row = (int64_t)mid; return PCH_OK; }
            if (r < 0) lo = mid + 1; else hi = mid;
        }
    }
    return PCH_OK;
}

int pj_blobs_has(pj_blobs *b, const uint8_t id[32], bool *has, pch_error *err)
{
    const cdir *cd;
    int64_t k;
    *has = false;
    if (!b || !b->n) return PCH_OK;
    PCH_TRY(lookup(b, id, &cd, &k, err));
    *has = k >= 0;
    return PCH_OK;
}

static int pack_file(pj_blobs *b, const char *pack_id, pch_vx_file **f, pch_vxp_query_stats *st, pch_error *err)
{
    pch_buf path;
    int rc;
    for (int i = 0; i < 8; i++)
        if (b->open[i].f && strcmp(b->open[i].id, pack_id) == 0) { *f = b->open[i].f; if (st) st->footer_cache_hits++; return PCH_OK; }
    unsigned s = b->next_slot++ % 8;
    pch_vx_file_free(b->open[s].f);
    b->open[s].f = NULL;
    pch_buf_init(&path, b->ctx);
    pch_buf_printf(&path, "%s/blobs/%s.vortex", b->root, pack_id);
    if (path.oom) return nomem(err);
    rc = pch_vx_file_open(&b->open[s].f, b->ctx, (const char *)path.data, err);
    if (rc < 0 && rc == PCH_EIO) pch_error_prefix(err, "missing blob pack blobs/%s.vortex", pack_id);
    /* a hydration reads its value's bytes, not the pack's 512 KiB chunk (4 ms of a cold get,
    ** docs/vortex-projection.md §8): every value is checked against its BLAKE3 id before it
    ** is used, so the blocks need no digests of their own */
    if (rc == PCH_OK) rc = pch_vx_file_set_partial_reads(b->open[s].f, PACK_READ_BLOCK, NULL, NULL, err);
    pch_buf_dispose(&path);
    PCH_TRY(rc);
    if (st) st->files_opened++;
    memcpy(b->open[s].id, pack_id, 33);
    *f = b->open[s].f;
    return PCH_OK;
}

int pj_blobs_get(pj_blobs *b, const uint8_t id[32], pch_buf *out, pch_vxp_query_stats *st, pch_error *err)
{
    static const char *const cols[] = { "content_id", "codec", "raw_length", "stored_length", "payload" };
    pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
    pch_vx_file *f = NULL;
    pch_vx_array *a = NULL;
    pch_vx_dtype *dt = NULL;
    char pack_id[33], hex[65];
    const cdir *cd = NULL;
    int64_t k;
    uint64_t row, raw, stored, codec;
    const uint8_t *pl;
    size_t pn;
    uint8_t got[32];
    int rc;
    const hslot *hit = b ? hc_find(b, id) : NULL;
    if (hit) {
        if (pch_buf_append(out, hit->p, hit->n) < 0) return nomem(err);
        if (st) st->cache_hits++;
        return PCH_OK;
    }
    pch_hex_encode(hex, id, 32);
    k = -1;
    if (b) {
        rc = lookup(b, id, &cd, &k, err);
        if (st) {
            st->directory.reads += b->reads;
            st->directory.bytes += b->bytes;
            st->content.reads += b->reads;
            st->content.bytes += b->bytes;
            st->bytes_checked += b->bytes;
        }
        b->reads = b->bytes = 0;
        PCH_TRY(rc);
    }
    if (k < 0) return pch_error_set(err, PCH_ECORRUPT, "content blake3:%s is not in the content directory (dangling reference)", hex);
    memcpy(pack_id, cd->packs->data + cd->packs->offsets[k], 32);
    pack_id[32] = 0;
    row = pch_load_le64(cd->rows->data + 8 * (size_t)k);
    PCH_TRY(pack_file(b, pack_id, &f, st, err));
    if (row >= pch_vx_file_row_count(f)) return pch_error_set(err, PCH_ECORRUPT, "blobs/%s.vortex: row %" PRIu64 " past its end", pack_id, row);
    so.columns = cols;
    so.n_columns = 5;
    so.row_begin = row;
    so.row_end = row + 1;
    PCH_TRY(pch_vx_file_scan(f, &so, &a, &dt, err));
    rc = PCH_ECORRUPT;
    if (a->len != 1 || a->children[0]->dtype->kind != PCH_VX_BINARY || a->children[4]->dtype->kind != PCH_VX_BINARY ||
        a->children[1]->dtype->kind != PCH_VX_PRIMITIVE || a->children[1]->dtype->ptype != PCH_VX_U8 ||
        a->children[2]->dtype->ptype != PCH_VX_U64 || a->children[3]->dtype->ptype != PCH_VX_U64) {
        pch_error_set(err, rc, "blobs/%s.vortex: not a blob pack", pack_id);
        goto done;
    }
    if (a->children[0]->offsets[1] != 32 || memcmp(a->children[0]->data, id, 32) != 0) {
        pch_error_set(err, rc, "blobs/%s.vortex row %" PRIu64 ": holds another content id than blake3:%s", pack_id, row, hex);
        goto done;
    }
    codec = a->children[1]->data[0];
    raw = pch_load_le64(a->children[2]->data);
    stored = pch_load_le64(a->children[3]->data);
    pl = a->children[4]->data;
    pn = (size_t)a->children[4]->offsets[1];
    if (raw != pch_load_le64(cd->raw->data + 8 * (size_t)k)) { pch_error_set(err, rc, "blake3:%s: raw length %" PRIu64 " in the pack, %" PRIu64 " in the directory", hex, raw, pch_load_le64(cd->raw->data + 8 * (size_t)k)); goto done; }
    if (stored != pn) { pch_error_set(err, rc, "blake3:%s: stored length %" PRIu64 " but %zu payload bytes", hex, stored, pn); goto done; }
    if (raw > pch_ctx_limits(b->ctx)->max_alloc) { pch_error_set(err, PCH_ELIMIT, "blake3:%s: raw length %" PRIu64 " above the allocation limit", hex, raw); rc = PCH_ELIMIT; goto done; }
    {
        size_t base = out->len;
        if (pch_buf_reserve(out, (size_t)raw) < 0) { rc = nomem(err); goto done; }
        if (codec == CODEC_IDENTITY) {
            if (raw != pn) { pch_error_set(err, rc, "blake3:%s: identity codec with raw %" PRIu64 " != stored %zu", hex, raw, pn); goto done; }
            memcpy(out->data + base, pl, pn);
        } else if (codec == CODEC_ZSTD) {
            unsigned long long fs = ZSTD_getFrameContentSize(pl, pn);
            size_t dn;
            if (fs != raw) { pch_error_set(err, rc, "blake3:%s: zstd frame declares %llu bytes, raw length %" PRIu64, hex, fs, raw); goto done; }
            dn = ZSTD_decompress(out->data + base, (size_t)raw, pl, pn);
            if (ZSTD_isError(dn) || dn != raw) { pch_error_set(err, rc, "blake3:%s: zstd payload does not decode to its raw length", hex); goto done; }
        } else {
            pch_error_set(err, PCH_EUNSUPPORTED, "blake3:%s: unknown codec %" PRIu64, hex, codec);
            rc = PCH_EUNSUPPORTED;
            goto done;
        }
        pch_blake3_hash(got, out->data + base, (size_t)raw);
        if (memcmp(got, id, 32) != 0) { pch_error_set(err, rc, "blake3:%s: payload hash mismatch (blobs/%s.vortex row %" PRIu64 ")", hex, pack_id, row); goto done; }
        out->len = base + (size_t)raw;
        out->data[out->len] = 0;
        hc_put(b, id, out->data + base, (size_t)raw);
    }
    if (st) { st->blobs_hydrated++; st->blob_bytes += raw; }
    rc = PCH_OK;
done:
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    return rc;
}

int pj_blobs_check_all(pj_blobs *b, pch_vxp_finding_cb cb, void *payload, size_t *n, pch_error *err)
{
    pch_buf tmp;
    pch_buf_init(&tmp, b->ctx);
    PCH_TRY(blobs_load(b, err));
    for (size_t di = 0; di < b->nd; di++) {
        const cdir *c = &b->d[di];
        for (uint64_t i = 0; i < c->n; i++) {
            pch_error e;
            char file[64];
            pch_error_clear(&e);
            pch_buf_clear(&tmp);
            if (pj_blobs_get(b, c->ids->data + c->ids->offsets[i], &tmp, NULL, &e) < 0) {
                snprintf(file, sizeof file, "blobs/%.32s.vortex", (const char *)c->packs->data + c->packs->offsets[i]);
                cb(file, e.msg, payload);
                (*n)++;
            }
        }
    }
    pch_buf_dispose(&tmp);
    return PCH_OK;
}
