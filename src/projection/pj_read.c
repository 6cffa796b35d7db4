/* Reading a snapshot (RFC-0006 §13.4, §13.6): open pins CURRENT → manifest (digest checked)
** → trajectory directory (digests checked) once; data-file footers are opened on first use
** and kept, and the last decoded cluster is kept, so later point reads of the same snapshot
** never re-read CURRENT or a footer. A point read decodes one cluster's lanes and rebuilds
** the ATIF document, re-nesting subagents through the directory (§5.3). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atif/atif.h"

#include "projection/pj_int.h"

/* The trajectory directory's columns (pj_build.c DIR_SCHEMA). Shards written before
** 2026-12-07 (version 1) have key_hash (a hash of the key no reader uses) in place of
** key_flags, and every trajectory key and session id spelled out; version 2 leaves a
** trajectory key that is `<run key>@<document path>` null and a session id equal to the run
** key null with key_flags bit PJ_DIR_SESSION_IS_RUN: 52 % of a shard on `scaled`, read whole by
** every point read (docs/vortex-projection.md §6). */
enum { D_SOURCE, D_RUN, D_TRAJ, D_HASH, D_SESSION, D_PRUN, D_PTRAJ, D_DOC, D_ROOT, D_FILE, D_CLUSTER, D_ROW,
       D_REVISION, D_DELETED, D_LOGICAL, D_STEPS, D_CALLS, D_MIN_TS, D_MAX_TS, D_N };
#define D_FLAGS D_HASH      /* version 2: key_flags where version 1 had key_hash */
static const char *const dir_names[D_N] = {
    "source_id", "run_key", "trajectory_key", "key_hash", "session_id", "parent_run_key", "parent_trajectory_key",
    "doc_path", "is_root", "file_id", "cluster", "row", "revision", "deleted", "logical_bytes", "step_count",
    "tool_call_count", "min_timestamp_ms", "max_timestamp_ms" };
/* version 2's order: column k of a version-2 shard is semantic column dir2_cols[k] */
static const uint8_t dir2_cols[D_N] = { D_SOURCE, D_RUN, D_TRAJ, D_SESSION, D_PRUN, D_PTRAJ, D_DOC, D_ROOT, D_FILE,
                                        D_CLUSTER, D_ROW, D_REVISION, D_DELETED, D_LOGICAL, D_STEPS, D_CALLS, D_MIN_TS,
                                        D_MAX_TS, D_FLAGS };

/* Rows a point read of a subagent decodes from its own on (load_cluster_at). */
#define PJ_SUBAGENT_WINDOW 64

typedef struct entry {
    const char *s, *r, *t, *session, *doc;
    const char *prun, *ptraj;   /* parent keys (subagents) */
    uint64_t logical;           /* the directory's logical bytes, step and call counts and time */
    uint32_t steps, calls;      /* range: carried by a compaction that keeps the row's file */
    int64_t min_ts, max_ts;
    bool has_ts;
    bool root;
    bool dead;                  /* a tombstone, or a row a newer revision shadows (§12.2) */
    bool tomb;
    uint32_t file, cluster;
    uint64_t row;
} entry;

typedef struct shardm {
    char rel[160], digest[80];
    uint64_t rows, base;
    uint32_t run;               /* 0: the base (level 1) directory; k: L0 run k (§10.4) */
    const char *first[3], *last[3];   /* fence keys (source, run, trajectory) */
    bool loaded;
} shardm;

/* One shard of the key index (pj_int.h PJ_KEY_INDEX_SCHEMA): its hash range from the manifest;
** once loaded, its rows (hash, directory shard) sorted by hash. */
typedef struct keyshard {
    char rel[160], digest[80];
    uint64_t rows, lo, hi;
    uint64_t *hash;
    uint32_t *shard;
    bool loaded;
} keyshard;

typedef struct dataf {
    char id[33];
    char path[160];
    uint64_t rows;
    pch_vx_file *f;
    uint64_t *cluster_begin;   /* first row of each cluster; cluster_begin[n] = rows */
    uint32_t n_clusters;
    uint64_t *coff, *clen;     /* byte range and digest of each cluster, from the manifest */
    const char **cdig;
    uint64_t tail_off, tail_len;
    char tail_dig[80];
    pch_rfile *fd;             /* for the digest checks; NULL until opened */
    pch_vxp_snapshot *snap;    /* the snapshot (the checks' payloads are files) */
    char tail_msg[PCH_ERROR_MSG_LEN];   /* a failed check of a tail read whole (tail_block_check),
                                        ** reported as it is, not under the reader's prefixes */
    /* its segment digest table (manifest "segments"; absent in roots built before it): every
    ** segment read is checked against it, and no whole-cluster digest is needed */
    char seg_path[160];
    char seg_dig[80];
    uint64_t seg_bytes, bytes;
    pj_segtab *segs;
    bool rowck;                /* opened for point reads checked by row digests (open_file) */
    pch_vx_io_stats open_io;   /* what opening the Vortex file read (its footer) */
    struct pj_psums *psum;     /* each cluster's trajectory summaries, once decoded (lazily) */
    uint64_t *del;             /* deleted rows (manifest "deleted_rows", §12.2): [b, e) pairs, */
    size_t n_del;              /* sorted and disjoint; rows a newer revision shadows */
} dataf;

/* Rows [begin, end) of data file `file`, decoded for a trajectory being written (write_entry). */
struct anc_window {
    uint32_t file;
    uint64_t begin, end;
    pj_rows rows;
};

struct pch_vxp_snapshot {
    pch_ctx *ctx;
    char *root;
    int lease;                /* a shared flock on the manifest: vacuum keeps the snapshot (§12.4) */
    pj_current cur;
    pch_buf mtext;
    pch_json_parser *mp;
    const pch_json_value *m;
    shardm *sh;                 /* directory shards: fences from the manifest, loaded lazily */
    size_t n_shards;
    size_t n_base;              /* of which the base (level 1) directory's: sh[0..n_base) */
    keyshard *ki;               /* the key index of the base directory (manifest "key_index",
                                ** absent in roots built before 2026-12-06), loaded lazily */
    size_t n_ki;
    entry *e;                   /* every trajectory; a shard's rows start at sh[i].base */
    uint64_t n;
    dataf *files;
    size_t n_files;
    pj_blobs *blobs;
    bool blobs_loaded;
    /* last decoded rows [c_begin, c_end) of data file c_file: a whole cluster, or on the
    ** point-read path only the rows of the trajectory being written (§13.4) */
    int64_t c_file;
    uint64_t c_begin, c_end;
    bool point;                 /* set while a point read (pch_vxp_get) runs */
    uint64_t horizon;           /* the row after the subagents being written (write_rows) */
    bool row_reads;             /* layout.frame_bytes > 0: lanes are framed at trajectory
                                ** boundaries, so decoding one row costs less than a cluster
                                ** (a root written with one frame per chunk keeps clusters) */
    pch_vx_array *c_arr;
    pch_vx_dtype *c_dt;
    pj_rows c_rows;
    pch_vxp_query_stats st;
    pch_vx_dtype *data_dt;      /* the data-file schema every data file must have */
    unsigned depth;
    /* the rows decoded for each trajectory being written (its subagents' rows are usually in
    ** them: write_entry); anc[k] lives in the frame of the k-th write_entry on the stack */
    struct anc_window *anc[PJ_MAX_SUBAGENT_DEPTH + 2];
    unsigned n_anc;
    pch_arena strings;          /* directory keys (NUL-terminated copies) */
    uint64_t psum_bytes;        /* held by every file's psum, at most psum_budget */
    uint64_t psum_budget;
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

/* Is row r of d deleted (shadowed by a newer revision or a tombstone)? */
static bool row_dead(const dataf *d, uint64_t r)
{
    size_t lo = 0, hi = d->n_del;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r < d->del[2 * mid]) hi = mid;
        else if (r >= d->del[2 * mid + 1]) lo = mid + 1;
        else return true;
    }
    return false;
}

/* A trajectory's summary as a pruned scan tests it (§14.2), from the summary lanes: an
** absent value reads as 0, as pch_vx_row_uint of a null row would. */
typedef struct pj_psum {
    int64_t min_ts, max_ts;
    uint64_t steps, copied, source, model, tool;
    bool has_ts;
} pj_psum;

/* One cluster's summaries; closes: its last row is a trajectory's last page (so a cluster
** with no match may be skipped: no trajectory continues from it into the next). */
typedef struct pj_psums {
    pj_psum *row;                   /* one per row of the cluster */
    bool closes;
    bool ahead;                     /* decoded by a read-ahead, not yet tested by its scan */
} pj_psums;

/* Decoded summaries a snapshot keeps for its pruned scans (a warm session tests a cluster's
** summaries without decoding its summary lanes again, as Lance keeps its index pages);
** beyond this, clusters are decoded for each use. 50,139 trajectory pages hold 3.2 MB. The
** environment's PCH_VX_SUMMARY_CACHE (bytes) sets another budget; 0 keeps none (tests). */
#define PJ_PSUM_BUDGET ((uint64_t)64 << 20)

static uint64_t psum_budget(void)
{
    const char *v = getenv("PCH_VX_SUMMARY_CACHE");
    char *end;
    unsigned long long b;
    if (!v || !*v) return PJ_PSUM_BUDGET;
    b = strtoull(v, &end, 10);
    return *end ? PJ_PSUM_BUDGET : (uint64_t)b;
}

static void pj_psums_free(pch_ctx *ctx, pj_psums *p, uint32_t n)
{
    if (!p) return;
    for (uint32_t c = 0; c < n; c++) pch_free(ctx, p[c].row);
    pch_free(ctx, p);
}

void pch_vxp_snapshot_free(pch_vxp_snapshot *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_files; i++) {
        pch_vx_file_free(s->files[i].f);
        pch_free(s->ctx, s->files[i].cluster_begin);
        pch_free(s->ctx, s->files[i].del);
        pch_free(s->ctx, s->files[i].coff);
        pch_free(s->ctx, s->files[i].clen);
        pch_free(s->ctx, s->files[i].cdig);
        pj_segtab_free(s->files[i].segs);
        pch_rfile_close(s->files[i].fd);
        pj_psums_free(s->ctx, s->files[i].psum, s->files[i].n_clusters);
    }
    pch_vx_array_free(s->c_arr);
    pch_vx_dtype_free(s->c_dt);
    pch_vx_dtype_free(s->data_dt);
    pj_blobs_free(s->blobs);
    for (size_t i = 0; i < s->n_ki; i++) { pch_free(s->ctx, s->ki[i].hash); pch_free(s->ctx, s->ki[i].shard); }
    pch_free(s->ctx, s->ki);
    pch_free(s->ctx, s->sh);
    pch_free(s->ctx, s->e);
    pch_free(s->ctx, s->files);
    pch_json_parser_free(s->mp);
    pch_buf_dispose(&s->mtext);
    pch_arena_dispose(&s->strings);
    if (s->lease >= 0) close(s->lease);
    free(s->root);
    pch_free(s->ctx, s);
}

const char *pch_vxp_snapshot_id(const pch_vxp_snapshot *s) { return s->cur.snapshot_id; }
uint64_t pch_vxp_snapshot_trajectories(const pch_vxp_snapshot *s) { return s->n; }
void pch_vxp_snapshot_stats(const pch_vxp_snapshot *s, pch_vxp_query_stats *out)
{
    pch_vxp_query_stats t = s->st;
    for (size_t i = 0; i < s->n_files; i++) {
        pch_vx_io_stats io;
        pj_segtab_io sio;
        const dataf *d = &s->files[i];
        if (!d->f) continue;
        pch_vx_file_io_stats(d->f, &io);
        pj_segtab_io_stats(d->segs, &sio);
        t.segments_read += io.segments_read;
        t.segments_partial += io.segments_partial;
        t.read_requests += io.requests;
        t.bytes_read += io.bytes_read;
        t.cache_hits += io.cache_hits;
        t.bytes_checked += pj_segtab_checked(d->segs);
        /* the footer: what the open read, and the tail blocks a paged open read since */
        t.footer.reads += d->open_io.requests + (io.tail_requests - d->open_io.tail_requests);
        t.footer.bytes += d->open_io.bytes_read + (io.tail_bytes - d->open_io.tail_bytes);
        t.lanes.reads += io.requests - d->open_io.requests - (io.tail_requests - d->open_io.tail_requests);
        t.lanes.bytes += io.bytes_read - d->open_io.bytes_read - (io.tail_bytes - d->open_io.tail_bytes);
        t.segment_tables.reads += sio.reads;
        t.segment_tables.bytes += sio.bytes_read;
    }
    *out = t;
}

static bool str_at(const pch_vx_array *a, uint64_t i, const char **p)
{
    if (!pch_vx_array_is_valid(a, i)) return false;
    *p = (const char *)a->data + a->offsets[i];
    return true;
}

/* Row range of every cluster of every data file, from the directory: clusters are
** consecutive row ranges in order. */
/* Row range of every cluster of every data file: the manifest lists the rows of each
** cluster ("cluster_rows"); they must add up to the file's rows. */
static int cluster_ranges(pch_vxp_snapshot *s, const pch_json_value *df, pch_error *err)
{
    for (size_t f = 0; f < s->n_files; f++) {
        dataf *d = &s->files[f];
        const pch_json_value *cr = pj_json_member(&df->u.items[f], "cluster_rows", PCH_JSON_ARRAY);
        uint64_t at = 0;
        if (!cr || cr->n > d->rows + 1) return pch_error_set(err, PCH_ECORRUPT, "%s: data_files[%zu] has no valid cluster_rows", s->cur.manifest, f);
        if (!(d->cluster_begin = pch_malloc(s->ctx, ((size_t)cr->n + 1) * 8))) return nomem(err);
        for (uint32_t c = 0; c < cr->n; c++) {
            const pch_json_value *v = &cr->u.items[c];
            d->cluster_begin[c] = at;
            if (v->kind != PCH_JSON_NUMBER || !(v->num_flags & PCH_JSON_NUM_U64) || v->u.num.u == 0 || v->u.num.u > d->rows - at)
                return pch_error_set(err, PCH_ECORRUPT, "%s: cluster_rows of %s do not add up to its %" PRIu64 " rows", s->cur.manifest, d->path, d->rows);
            at += v->u.num.u;
        }
        if (at != d->rows) return pch_error_set(err, PCH_ECORRUPT, "%s: cluster_rows of %s add up to %" PRIu64 ", not %" PRIu64, s->cur.manifest, d->path, at, d->rows);
        d->cluster_begin[cr->n] = at;
        d->n_clusters = cr->n;
        /* where each cluster's bytes are, and their digests where the file has no segment
        ** table to check its reads (a root built before them: [offset, length, digest]; with
        ** one, [offset, length]); the tail after them, always with its digest */
        {
            const pch_json_value *ca = pj_json_member(&df->u.items[f], "clusters_at", PCH_JSON_ARRAY);
            const pch_json_value *tl = pj_json_member(&df->u.items[f], "tail", PCH_JSON_ARRAY);
            const bool segs = pj_json_member(&df->u.items[f], "segments", PCH_JSON_OBJECT) != NULL;
            uint64_t bytes, prev_end = 4;
            if (!ca || ca->n != cr->n || !tl || tl->n != 3 || !pj_json_u64(&df->u.items[f], "bytes", &bytes))
                return pch_error_set(err, PCH_ECORRUPT, "%s: data_files[%zu] lacks clusters_at or tail", s->cur.manifest, f);
            if (!(d->coff = pch_malloc(s->ctx, ((size_t)ca->n + 1) * 8)) || !(d->clen = pch_malloc(s->ctx, ((size_t)ca->n + 1) * 8)) ||
                !(d->cdig = pch_malloc(s->ctx, ((size_t)ca->n + 1) * sizeof *d->cdig)))
                return nomem(err);
            for (uint32_t c = 0; c <= ca->n; c++) {
                const pch_json_value *it = c < ca->n ? &ca->u.items[c] : tl;
                const pch_json_value *o, *l, *g = NULL;
                if (it->kind != PCH_JSON_ARRAY || (it->n != 3 && !(it->n == 2 && segs && c < ca->n))) goto bad;
                o = &it->u.items[0]; l = &it->u.items[1];
                if (it->n == 3) g = &it->u.items[2];
                if (o->kind != PCH_JSON_NUMBER || !(o->num_flags & PCH_JSON_NUM_U64) || l->kind != PCH_JSON_NUMBER ||
                    !(l->num_flags & PCH_JSON_NUM_U64) || (g && (g->kind != PCH_JSON_STRING || g->u.str.len != 71 ||
                    memcmp(g->u.str.ptr, "blake3:", 7) != 0)) || o->u.num.u != prev_end || l->u.num.u > bytes - o->u.num.u)
                    goto bad;
                prev_end = o->u.num.u + l->u.num.u;
                if (c < ca->n) {
                    d->coff[c] = o->u.num.u;
                    d->clen[c] = l->u.num.u;
                    d->cdig[c] = g ? pch_arena_memdup(&s->strings, g->u.str.ptr, 71) : NULL;
                    if (g && !d->cdig[c]) return nomem(err);
                } else {
                    d->tail_off = o->u.num.u;
                    d->tail_len = l->u.num.u;
                    memcpy(d->tail_dig, g->u.str.ptr, 71);
                    d->tail_dig[71] = 0;
                }
            }
            if (prev_end != bytes) goto bad;
            continue;
        bad:
            return pch_error_set(err, PCH_ECORRUPT, "%s: clusters_at / tail of %s are malformed or do not tile the file "
                                 "(a cluster listed without its digest needs a segment table)", s->cur.manifest, d->path);
        }
    }
    return PCH_OK;
}

/* The bytes of [off, off+len) of data file d against their recorded digest (§9.5: a read
** never returns bytes it has not checked). */
/* d's descriptor for the digest checks, opened on first use. */
static int data_fd(pch_vxp_snapshot *s, dataf *d, pch_error *err)
{
    pch_buf p;
    if (d->fd) return PCH_OK;
    pch_buf_init(&p, s->ctx);
    pch_buf_printf(&p, "%s/%s", s->root, d->path);
    if (p.oom) return nomem(err);
    int rc = pch_rfile_open(s->ctx, (const char *)p.data, &d->fd, err);
    pch_buf_dispose(&p);
    if (rc < 0) return pch_error_prefix(err, "%s", d->path);
    return PCH_OK;
}

/* Bytes [off, off + len) of d with digest `got` against the manifest's `want`. */
static int digest_is(pch_vxp_snapshot *s, const dataf *d, uint64_t off, uint64_t len, const char *got, const char *want,
                     const char *what, pch_error *err)
{
    s->st.bytes_checked += len;
    if (strcmp(got, want) != 0)
        return pch_error_set(err, PCH_ECORRUPT, "%s: %s (bytes %" PRIu64 "..%" PRIu64 ") has digest %s, the manifest says %s",
                             d->path, what, off, off + len, got, want);
    return PCH_OK;
}

static int check_range(pch_vxp_snapshot *s, dataf *d, uint64_t off, uint64_t len, const char *want, const char *what,
                       pch_error *err)
{
    char got[80];
    PCH_TRY(data_fd(s, d, err));
    PCH_TRY(pj_range_digest(d->fd, off, len, got, err));
    return digest_is(s, d, off, len, got, want, what, err);
}

/* Bytes [off, off + len) of data file d into *out (caller frees), checked against `want`. */
static int read_checked(pch_vxp_snapshot *s, dataf *d, uint64_t off, uint64_t len, const char *want, const char *what,
                        uint8_t **out, pch_error *err)
{
    char got[80];
    uint8_t *b;
    int rc = PCH_OK;
    *out = NULL;
    PCH_TRY(data_fd(s, d, err));
    if (len > ((uint64_t)1 << 31)) return pch_error_set(err, PCH_ELIMIT, "%s: %s of %" PRIu64 " bytes", d->path, what, len);
    if (!(b = pch_malloc(s->ctx, len ? (size_t)len : 1))) return nomem(err);
    if ((rc = pj_pread(d->fd, off, (size_t)len, b, err)) < 0) pch_error_prefix(err, "%s", d->path);
    else {
        pj_bytes_digest(got, b, (size_t)len);
        rc = digest_is(s, d, off, len, got, want, what, err);
    }
    if (rc < 0) { pch_free(s->ctx, b); return rc; }
    *out = b;
    return PCH_OK;
}

/* Strings of a directory shard are NUL-free (checked) so entries can point at them:
** each value is copied to a NUL-terminated arena below. */
/* Entries of one decoded directory shard, checked: column types, NUL-free keys, file ids
** known to the manifest, rows inside their file, keys sorted and unique across shards. */
static int decode_shard(pch_vxp_snapshot *s, const pch_vx_array *a, pch_arena *ar, bool in_run, pch_error *err)
{
    uint64_t first = s->n;
    static const uint8_t kinds[D_N] = { PCH_VX_UTF8, PCH_VX_UTF8, PCH_VX_UTF8, PCH_VX_PRIMITIVE, PCH_VX_UTF8, PCH_VX_UTF8,
                                        PCH_VX_UTF8, PCH_VX_UTF8, PCH_VX_BOOL, PCH_VX_UTF8, PCH_VX_PRIMITIVE, PCH_VX_PRIMITIVE,
                                        PCH_VX_PRIMITIVE, PCH_VX_BOOL, PCH_VX_PRIMITIVE, PCH_VX_PRIMITIVE, PCH_VX_PRIMITIVE,
                                        PCH_VX_PRIMITIVE, PCH_VX_PRIMITIVE };
    static const uint8_t ptypes[D_N] = { 0, 0, 0, PCH_VX_U64, 0, 0, 0, 0, 0, 0, PCH_VX_U32, PCH_VX_U64, PCH_VX_U64, 0,
                                         PCH_VX_U64, PCH_VX_U32, PCH_VX_U32, PCH_VX_I64, PCH_VX_I64 };
    const pch_vx_array *col[D_N];
    bool v2;
    if (!a->dtype || a->dtype->kind != PCH_VX_STRUCT || a->n_children != D_N)
        return pch_error_set(err, PCH_ECORRUPT, "trajectory directory: not a directory shard");
    v2 = strcmp(a->dtype->names[D_N - 1], "key_flags") == 0;
    for (int k = 0; k < D_N; k++) {
        const int j = v2 ? dir2_cols[k] : k;     /* the semantic column of child k */
        const pch_vx_dtype *d = a->children[k]->dtype;
        const char *name = v2 && j == D_FLAGS ? "key_flags" : dir_names[j];
        const uint8_t pt = v2 && j == D_FLAGS ? PCH_VX_U8 : ptypes[j];
        if (strcmp(a->dtype->names[k], name) != 0 || d->kind != kinds[j] || (kinds[j] == PCH_VX_PRIMITIVE && d->ptype != pt))
            return pch_error_set(err, PCH_ECORRUPT, "trajectory directory: column %d is not %s of the expected type", k, name);
        col[j] = a->children[k];
    }
    if (s->n + a->len > ((uint64_t)1 << 32)) return pch_error_set(err, PCH_ELIMIT, "trajectory directory too large");
    for (uint64_t r = 0; r < a->len; r++) {
        entry *e = &s->e[s->n];
        const char *fid;
        const pch_vx_array *c = NULL;
        for (int k = 0; k < D_N; k++) {
            c = col[k];
            if ((k == D_SOURCE || k == D_RUN || k == D_TRAJ || k == D_DOC || k == D_FILE || k == D_SESSION || k == D_PRUN || k == D_PTRAJ) &&
                pch_vx_array_is_valid(c, r) && memchr(c->data + c->offsets[r], 0, (size_t)(c->offsets[r + 1] - c->offsets[r])))
                return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": NUL inside a key", s->n);
        }
#define DUP(k, out) do { const char *p_; if (str_at(col[k], r, &p_)) { size_t n_ = (size_t)(col[k]->offsets[r + 1] - col[k]->offsets[r]); \
        if (!((out) = pch_arena_memdup(ar, p_, n_))) return nomem(err); } } while (0)
        DUP(D_SOURCE, e->s); DUP(D_RUN, e->r); DUP(D_TRAJ, e->t); DUP(D_SESSION, e->session); DUP(D_DOC, e->doc);
        DUP(D_PRUN, e->prun); DUP(D_PTRAJ, e->ptraj);
        if (v2) {
            const uint8_t fl = pch_vx_row_valid(col[D_FLAGS], r) ? col[D_FLAGS]->data[r] : 0;
            if (fl & ~PJ_DIR_SESSION_IS_RUN) return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": unknown key flags %u", s->n, fl);
            if (!e->t && e->r && e->doc) {       /* the trajectory key left out: <run key>@<document path> */
                size_t rn = strlen(e->r), dn = strlen(e->doc);
                char *t = pch_arena_alloc(ar, rn + dn + 2);
                if (!t) return nomem(err);
                memcpy(t, e->r, rn);
                t[rn] = '@';
                memcpy(t + rn + 1, e->doc, dn + 1);
                e->t = t;
            } else if (e->t && e->r && e->doc && pj_key_is_derived(e->t, e->r, e->doc)) {
                return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": a trajectory key spelled out that the shard leaves out", s->n);
            }
            if (fl & PJ_DIR_SESSION_IS_RUN) {
                if (e->session) return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": a session id and the flag that it is the run key", s->n);
                e->session = e->r;
            }
        }
        e->logical = pch_load_le64(col[D_LOGICAL]->data + 8 * r);
        e->steps = pch_load_le32(col[D_STEPS]->data + 4 * r);
        e->calls = pch_load_le32(col[D_CALLS]->data + 4 * r);
        e->has_ts = pch_vx_row_valid(col[D_MIN_TS], r) && pch_vx_row_valid(col[D_MAX_TS], r);
        if (e->has_ts) {
            e->min_ts = (int64_t)pch_load_le64(col[D_MIN_TS]->data + 8 * r);
            e->max_ts = (int64_t)pch_load_le64(col[D_MAX_TS]->data + 8 * r);
        }
#undef DUP
        if (!e->s || !e->r || !e->t || !e->doc) return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": null key", s->n);
        e->root = (col[D_ROOT]->data[r >> 3] >> (r & 7)) & 1;
        e->cluster = pch_load_le32(col[D_CLUSTER]->data + 4 * r);
        e->row = pch_load_le64(col[D_ROW]->data + 8 * r);
        e->tomb = pch_vx_row_valid(col[D_DELETED], r) && ((col[D_DELETED]->data[r >> 3] >> (r & 7)) & 1);
        if (e->tomb) {          /* a tombstone: only in an L0 run, no file (§10.4) */
            if (!in_run) return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": a tombstone in the base directory", s->n);
            e->file = UINT32_MAX;
            e->dead = true;
        } else {
            if (!str_at(col[D_FILE], r, &fid) || col[D_FILE]->offsets[r + 1] - col[D_FILE]->offsets[r] != 32)
                return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": bad file id", s->n);
            e->file = UINT32_MAX;
            for (size_t f = 0; f < s->n_files; f++) if (memcmp(s->files[f].id, fid, 32) == 0) e->file = (uint32_t)f;
            if (e->file == UINT32_MAX) return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": file %.32s not in the manifest", s->n, fid);
            if (e->row >= s->files[e->file].rows) return pch_error_set(err, PCH_ECORRUPT, "trajectory directory row %" PRIu64 ": row %" PRIu64 " past the end of its file", s->n, e->row);
            e->dead = row_dead(&s->files[e->file], e->row);
        }
        if (s->n > first) {
            const entry *p = &s->e[s->n - 1];
            int cmp = strcmp(p->s, e->s);
            if (!cmp) cmp = strcmp(p->r, e->r);
            if (!cmp) cmp = strcmp(p->t, e->t);
            if (cmp >= 0) return pch_error_set(err, PCH_ECORRUPT, "trajectory directory: keys not sorted and unique at row %" PRIu64, s->n);
        }
        s->n++;
    }
    return PCH_OK;
}

static int key_cmp3(const char *const a[3], const char *const b[3])
{
    for (int k = 0; k < 3; k++) {
        int c = strcmp(a[k], b[k]);
        if (c) return c;
    }
    return 0;
}

/* Each data file's deleted rows (manifest "deleted_rows": [[b, e], ...], §12.2): sorted,
** disjoint, non-empty ranges inside the file. */
static int deleted_rows(pch_vxp_snapshot *s, const pch_json_value *df, pch_error *err)
{
    for (size_t f = 0; f < s->n_files; f++) {
        dataf *d = &s->files[f];
        const pch_json_value *dr = pch_json_get(&df->u.items[f], "deleted_rows", 12);
        uint64_t prev = 0;
        if (!dr) continue;
        if (dr->kind != PCH_JSON_ARRAY || dr->n > d->rows) goto bad;
        if (!(d->del = pch_malloc(s->ctx, ((size_t)dr->n + 1) * 16))) return nomem(err);
        for (uint32_t k = 0; k < dr->n; k++) {
            const pch_json_value *it = &dr->u.items[k];
            if (it->kind != PCH_JSON_ARRAY || it->n != 2) goto bad;
            for (int j = 0; j < 2; j++)
                if (it->u.items[j].kind != PCH_JSON_NUMBER || !(it->u.items[j].num_flags & PCH_JSON_NUM_U64)) goto bad;
            d->del[2 * k] = it->u.items[0].u.num.u;
            d->del[2 * k + 1] = it->u.items[1].u.num.u;
            if (d->del[2 * k] >= d->del[2 * k + 1] || d->del[2 * k + 1] > d->rows || (k && d->del[2 * k] < prev)) goto bad;
            prev = d->del[2 * k + 1];
        }
        d->n_del = dr->n;
        continue;
    bad:
        return pch_error_set(err, PCH_ECORRUPT, "%s: deleted_rows of %s are not sorted, disjoint row ranges inside the file",
                             s->cur.manifest, d->path);
    }
    return PCH_OK;
}

/* The manifest's key index entries: paths, digests and hash ranges (two ordered 16-digit hex
** numbers, the entries in order and disjoint); no shard is read yet. */
static int load_key_index(pch_vxp_snapshot *s, pch_error *err)
{
    const pch_json_value *ki = pj_json_member(s->m, "key_index", PCH_JSON_ARRAY);
    if (!ki || !ki->n) return PCH_OK;
    if (!(s->ki = pch_calloc(s->ctx, ki->n, sizeof *s->ki))) return nomem(err);
    for (uint32_t i = 0; i < ki->n; i++) {
        keyshard *k = &s->ki[i];
        char lo[24], hi[24], *end;
        if (!pj_json_str(&ki->u.items[i], "path", k->rel, sizeof k->rel) || !pj_json_str(&ki->u.items[i], "digest", k->digest, sizeof k->digest) ||
            !pj_json_u64(&ki->u.items[i], "rows", &k->rows) || !pj_json_str(&ki->u.items[i], "hash_lo", lo, sizeof lo) ||
            !pj_json_str(&ki->u.items[i], "hash_hi", hi, sizeof hi) || strlen(lo) != 16 || strlen(hi) != 16 ||
            strspn(lo, "0123456789abcdef") != 16 || strspn(hi, "0123456789abcdef") != 16)
            return pch_error_set(err, PCH_ECORRUPT, "%s: key_index[%u] lacks path, digest, rows or its hash range", s->cur.manifest, i);
        PCH_TRY(pj_path_check(k->rel, strlen(k->rel), err));
        k->lo = strtoull(lo, &end, 16);
        k->hi = strtoull(hi, &end, 16);
        if (k->lo > k->hi || (i && s->ki[i - 1].hi >= k->lo))
            return pch_error_set(err, PCH_ECORRUPT, "%s: key_index hash ranges are not in order", s->cur.manifest);
        s->n_ki++;
    }
    return PCH_OK;
}

/* The manifest's data files and directory shards (with their fence keys), then its L0
** directory runs (§10.4: each sorted, fence keys of their own); no shard is read yet. */
static int load_directory(pch_vxp_snapshot *s, pch_arena *ar, pch_error *err)
{
    const pch_json_value *td = pj_json_member(s->m, "trajectory_directory", PCH_JSON_ARRAY);
    const pch_json_value *df = pj_json_member(s->m, "data_files", PCH_JSON_ARRAY);
    const pch_json_value *lay = pj_json_member(s->m, "layout", PCH_JSON_OBJECT), *runs;
    uint64_t total = 0, frame_bytes = 0, n_sh;
    s->row_reads = lay && pj_json_u64(lay, "frame_bytes", &frame_bytes) && frame_bytes > 0;
    if (!td || !df) return pch_error_set(err, PCH_ECORRUPT, "%s: no trajectory_directory or data_files", s->cur.manifest);
    if (!(s->files = pch_calloc(s->ctx, df->n ? df->n : 1, sizeof *s->files))) return nomem(err);
    s->n_files = df->n;
    for (uint32_t i = 0; i < df->n; i++) {
        dataf *f = &s->files[i];
        f->snap = s;
        if (!pj_json_str(&df->u.items[i], "file_id", f->id, sizeof f->id) || strlen(f->id) != 32 ||
            !pj_json_str(&df->u.items[i], "path", f->path, sizeof f->path) || !pj_json_u64(&df->u.items[i], "rows", &f->rows))
            return pch_error_set(err, PCH_ECORRUPT, "%s: data_files[%u] lacks file_id, path or rows", s->cur.manifest, i);
        PCH_TRY(pj_path_check(f->path, strlen(f->path), err));
        if (strncmp(f->path, "data/", 5) != 0 || !strstr(f->path, f->id))
            return pch_error_set(err, PCH_ECORRUPT, "%s: data file path '%s' does not name its file id", s->cur.manifest, f->path);
        {
            const pch_json_value *sg = pj_json_member(&df->u.items[i], "segments", PCH_JSON_OBJECT);
            if (sg && (!pj_json_str(sg, "path", f->seg_path, sizeof f->seg_path) || !pj_json_u64(sg, "bytes", &f->seg_bytes) ||
                       !pj_json_str(sg, "digest", f->seg_dig, sizeof f->seg_dig) || strlen(f->seg_dig) != 71 ||
                       !pj_json_u64(&df->u.items[i], "bytes", &f->bytes)))
                return pch_error_set(err, PCH_ECORRUPT, "%s: data_files[%u].segments lacks path, bytes or digest", s->cur.manifest, i);
            if (sg) {
                PCH_TRY(pj_path_check(f->seg_path, strlen(f->seg_path), err));
                if (strncmp(f->seg_path, "data/", 5) != 0 || !strstr(f->seg_path, f->id))
                    return pch_error_set(err, PCH_ECORRUPT, "%s: segment table path '%s' does not name its file id", s->cur.manifest, f->seg_path);
            }
        }
    }
    PCH_TRY(cluster_ranges(s, df, err));
    PCH_TRY(deleted_rows(s, df, err));
    runs = pj_json_member(s->m, "directory_runs", PCH_JSON_ARRAY);
    n_sh = (uint64_t)td->n + (runs ? runs->n : 0);
    if (!(s->sh = pch_calloc(s->ctx, n_sh ? (size_t)n_sh : 1, sizeof *s->sh))) return nomem(err);
    for (uint32_t i = 0; i < n_sh; i++) {
        shardm *m = &s->sh[i];
        const pch_json_value *it = i < td->n ? &td->u.items[i] : &runs->u.items[i - td->n];
        m->run = i < td->n ? 0 : i - td->n + 1;
        const pch_json_value *fk = pj_json_member(it, "first_key", PCH_JSON_ARRAY), *lk = pj_json_member(it, "last_key", PCH_JSON_ARRAY);
        if (!pj_json_str(it, "path", m->rel, sizeof m->rel) || !pj_json_str(it, "digest", m->digest, sizeof m->digest) ||
            !pj_json_u64(it, "rows", &m->rows))
            return pch_error_set(err, PCH_ECORRUPT, "%s: trajectory_directory[%u] lacks path, digest or rows", s->cur.manifest, i);
        PCH_TRY(pj_path_check(m->rel, strlen(m->rel), err));
        if (m->rows) {
            if (!fk || !lk || fk->n != 3 || lk->n != 3)
                return pch_error_set(err, PCH_ECORRUPT, "%s: trajectory_directory[%u] lacks its fence keys", s->cur.manifest, i);
            for (int k = 0; k < 3; k++) {
                const pch_json_value *a = &fk->u.items[k], *b = &lk->u.items[k];
                if (a->kind != PCH_JSON_STRING || b->kind != PCH_JSON_STRING || memchr(a->u.str.ptr, 0, a->u.str.len) ||
                    memchr(b->u.str.ptr, 0, b->u.str.len))
                    return pch_error_set(err, PCH_ECORRUPT, "%s: trajectory_directory[%u] fence keys are not strings", s->cur.manifest, i);
                if (!(m->first[k] = pch_arena_memdup(ar, a->u.str.ptr, a->u.str.len)) ||
                    !(m->last[k] = pch_arena_memdup(ar, b->u.str.ptr, b->u.str.len)))
                    return nomem(err);
            }
            if (key_cmp3(m->first, m->last) > 0 ||
                (i && s->sh[i - 1].run == m->run && s->sh[i - 1].rows && key_cmp3(s->sh[i - 1].last, m->first) >= 0))
                return pch_error_set(err, PCH_ECORRUPT, "%s: trajectory directory fence keys are not in order", s->cur.manifest);
        }
        m->base = total;
        total += m->rows;
        s->n_shards++;
    }
    if (total > ((uint64_t)1 << 32)) return pch_error_set(err, PCH_ELIMIT, "directory of %" PRIu64 " trajectories", total);
    if (!(s->e = pch_calloc(s->ctx, total ? (size_t)total : 1, sizeof *s->e))) return nomem(err);
    s->n = total;
    s->n_base = td->n;
    return load_key_index(s, err);
}

/* A directory file the manifest lists (a trajectory directory or key index shard), read in
** one request, its bytes checked against the manifest's digest and its row count, then
** decoded from memory whole. */
static int read_listed(pch_vxp_snapshot *s, const char *rel, const char *digest, uint64_t rows, pch_vx_array **a,
                       pch_vx_dtype **dt, pch_error *err)
{
    pch_vx_file *f = NULL;
    pch_buf path, raw;
    char got[80];
    int rc;
    pch_buf_init(&path, s->ctx);
    pch_buf_init(&raw, s->ctx);
    pch_buf_printf(&path, "%s/%s", s->root, rel);
    rc = path.oom ? nomem(err) : pch_rfile_read_all(s->ctx, &raw, (const char *)path.data, (size_t)1 << 30, err);
    if (rc == PCH_OK) {
        s->st.directory.reads++;
        s->st.directory.bytes += raw.len;
        pj_bytes_digest(got, raw.data, raw.len);
        if (strcmp(got, digest) != 0) rc = pch_error_set(err, PCH_ECORRUPT, "digest %s, manifest says %s", got, digest);
    }
    if (rc == PCH_OK) rc = pch_vx_file_open_mem(&f, s->ctx, raw.data, raw.len, err);
    if (rc == PCH_OK && pch_vx_file_row_count(f) != rows)
        rc = pch_error_set(err, PCH_ECORRUPT, "%" PRIu64 " rows, manifest says %" PRIu64, pch_vx_file_row_count(f), rows);
    if (rc == PCH_OK) rc = pch_vx_file_scan(f, NULL, a, dt, err);
    pch_vx_file_free(f);
    pch_buf_dispose(&raw);
    pch_buf_dispose(&path);
    return rc;
}

/* Read one directory shard (digest checked against the manifest) into its entries; its
** keys must be sorted and lie within its fence keys. */
static int load_shard(pch_vxp_snapshot *s, size_t i, pch_error *err)
{
    shardm *m = &s->sh[i];
    pch_vx_array *a = NULL;
    pch_vx_dtype *dt = NULL;
    uint64_t save = s->n;
    int rc;
    if (m->loaded) return PCH_OK;
    rc = read_listed(s, m->rel, m->digest, m->rows, &a, &dt, err);
    if (rc == PCH_OK) {
        s->n = m->base;              /* decode_shard appends at s->n */
        rc = decode_shard(s, a, &s->strings, m->run > 0, err);
        s->n = save;
    }
    if (rc == PCH_OK && m->rows) {
        const entry *lo = &s->e[m->base], *hi = &s->e[m->base + m->rows - 1];
        const char *lk[3] = { lo->s, lo->r, lo->t }, *hk[3] = { hi->s, hi->r, hi->t };
        if (key_cmp3(lk, m->first) != 0 || key_cmp3(hk, m->last) != 0)
            rc = pch_error_set(err, PCH_ECORRUPT, "keys do not match the manifest's fence keys");
    }
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    if (rc < 0) return pch_error_prefix(err, "%s", m->rel);
    m->loaded = true;
    return PCH_OK;
}

/* Read key index shard i (digest checked against the manifest): its rows sorted by hash, within
** the manifest's range, each naming a base directory shard. */
static int load_key_shard(pch_vxp_snapshot *s, size_t i, pch_error *err)
{
    keyshard *k = &s->ki[i];
    pch_vx_array *a = NULL;
    pch_vx_dtype *dt = NULL;
    int rc;
    if (k->loaded) return PCH_OK;
    rc = read_listed(s, k->rel, k->digest, k->rows, &a, &dt, err);
    if (rc == PCH_OK && (a->n_children != 2 || a->children[0]->dtype->kind != PCH_VX_PRIMITIVE || a->children[0]->dtype->ptype != PCH_VX_U64 ||
                         a->children[1]->dtype->kind != PCH_VX_PRIMITIVE || a->children[1]->dtype->ptype != PCH_VX_U32 || a->len != k->rows))
        rc = pch_error_set(err, PCH_ECORRUPT, "not a key index shard (%s)", PJ_KEY_INDEX_SCHEMA);
    if (rc == PCH_OK && (!(k->hash = pch_malloc(s->ctx, (size_t)(k->rows ? k->rows : 1) * 8)) ||
                         !(k->shard = pch_malloc(s->ctx, (size_t)(k->rows ? k->rows : 1) * 4))))
        rc = nomem(err);
    for (uint64_t r = 0; rc == PCH_OK && r < k->rows; r++) {
        k->hash[r] = pch_load_le64(a->children[0]->data + 8 * r);
        k->shard[r] = pch_load_le32(a->children[1]->data + 4 * r);
        if (k->hash[r] < k->lo || k->hash[r] > k->hi || (r && k->hash[r] < k->hash[r - 1]) || k->shard[r] >= s->n_base)
            rc = pch_error_set(err, PCH_ECORRUPT, "row %" PRIu64 ": hashes not sorted within the manifest's range, or shard %u past the %zu directory shards",
                               r, k->shard[r], s->n_base);
    }
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    if (rc < 0) {
        pch_free(s->ctx, k->hash);
        pch_free(s->ctx, k->shard);
        k->hash = NULL;
        k->shard = NULL;
        return pch_error_prefix(err, "%s", k->rel);
    }
    k->loaded = true;
    return PCH_OK;
}

/* Mark in want[] (n_base flags) the base directory shards that may hold a trajectory whose key,
** producer id or session id is key, from the key index; false in *indexed when there is none. */
static int key_shards(pch_vxp_snapshot *s, const char *key, bool *want, bool *indexed, pch_error *err)
{
    const uint64_t h = pj_key_hash(key, strlen(key));
    *indexed = s->n_ki > 0;
    for (size_t i = 0; i < s->n_ki; i++) {
        keyshard *k = &s->ki[i];
        uint64_t lo = 0, hi;
        if (h < k->lo || h > k->hi) continue;
        PCH_TRY(load_key_shard(s, i, err));
        hi = k->rows;
        while (lo < hi) {       /* the first row of hash h */
            uint64_t mid = lo + (hi - lo) / 2;
            if (k->hash[mid] < h) lo = mid + 1; else hi = mid;
        }
        for (; lo < k->rows && k->hash[lo] == h; lo++) want[k->shard[lo]] = true;
    }
    return PCH_OK;
}

/* Is (h, shard) a row of the key index? */
static int key_has(pch_vxp_snapshot *s, uint64_t h, uint32_t shard, bool *has, pch_error *err)
{
    *has = false;
    for (size_t i = 0; i < s->n_ki && !*has; i++) {
        keyshard *k = &s->ki[i];
        uint64_t lo = 0, hi;
        if (h < k->lo || h > k->hi) continue;
        PCH_TRY(load_key_shard(s, i, err));
        hi = k->rows;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (k->hash[mid] < h) lo = mid + 1; else hi = mid;
        }
        for (; lo < k->rows && k->hash[lo] == h && !*has; lo++) *has = k->shard[lo] == shard;
    }
    return PCH_OK;
}

int pj_snapshot_check_key_index(pch_vxp_snapshot *s, pch_error *err)
{
    for (size_t i = 0; s->n_ki && i < s->n_base; i++) {
        const shardm *m = &s->sh[i];
        for (uint64_t r = m->base; r < m->base + m->rows; r++) {
            const entry *e = &s->e[r];
            const char *what[3] = { e->t, NULL, e->root ? e->session : NULL };
            size_t len[3] = { strlen(e->t), 0, e->session ? strlen(e->session) : 0 };
            if (pj_producer_id_len(e->t, e->doc, &len[1])) what[1] = e->t;
            for (int k = 0; k < 3; k++) {
                bool has;
                if (!what[k]) continue;
                PCH_TRY(key_has(s, pj_key_hash(what[k], len[k]), (uint32_t)i, &has, err));
                if (!has)
                    return pch_error_set(err, PCH_ECORRUPT, "the key index lacks '%.*s' of %s (trajectory %s): lookups by it would miss",
                                         (int)len[k], what[k], m->rel, e->t);
            }
        }
    }
    return PCH_OK;
}

int pj_snapshot_load_all(pch_vxp_snapshot *s, pch_error *err)
{
    for (size_t i = 0; i < s->n_shards; i++) PCH_TRY(load_shard(s, i, err));
    return PCH_OK;
}

/* Hold the snapshot while it is open: a shared lock on its manifest, which vacuum must take
** exclusively to remove it (pj_vacuum.c); the kernel drops it with the process. */
static int lease_take(pch_vxp_snapshot *s, pch_error *err)
{
    pch_buf p;
    if (pch_rfile_is_remote(s->root)) return PCH_OK;   /* no leases on object storage (docs/object-storage.md) */
    pch_buf_init(&p, s->ctx);
    pch_buf_printf(&p, "%s/%s", s->root, s->cur.manifest);
    if (p.oom) return nomem(err);
    s->lease = open((const char *)p.data, O_RDONLY | O_CLOEXEC);
    pch_buf_dispose(&p);
    if (s->lease < 0) return PCH_OK;              /* the manifest read reports it */
    if (flock(s->lease, LOCK_SH | LOCK_NB) != 0)   /* vacuum locks only what it removes */
        return errno == EWOULDBLOCK ? pch_error_set(err, PCH_ENOTFOUND, "snapshot %s is being removed (vacuum)", s->cur.snapshot_id)
                                    : pch_error_set_sys(err, PCH_EIO, errno, "lock %s", s->cur.manifest);
    return PCH_OK;
}

/* A snapshot struct for root at CURRENT cur: its manifest (digest checked) and directory. */
static int snapshot_load(pch_vxp_snapshot **out, pch_ctx *ctx, const char *root, const pj_current *cur, pch_error *err)
{
    pch_vxp_snapshot *s;
    int rc;
    *out = NULL;
    if (!(s = pch_calloc(ctx, 1, sizeof *s))) return nomem(err);
    s->ctx = ctx;
    s->c_file = -1;
    s->lease = -1;
    s->psum_budget = psum_budget();
    pch_arena_init(&s->strings, ctx, 64 * 1024);
    pch_buf_init(&s->mtext, ctx);
    if (!(s->root = strdup(root))) { rc = nomem(err); goto fail; }
    if (cur) s->cur = *cur;
    else {
        pch_buf cur_raw;
        pch_buf_init(&cur_raw, ctx);
        rc = pj_current_read(ctx, root, &s->cur, &cur_raw, err);
        s->st.current.reads = 1;
        s->st.current.bytes = cur_raw.len;
        pch_buf_dispose(&cur_raw);
        if (rc < 0) goto fail;
    }
    if ((rc = lease_take(s, err)) < 0) goto fail;
    if ((rc = pj_manifest_load(ctx, root, &s->cur, &s->mp, &s->mtext, &s->m, err)) < 0) goto fail;
    s->st.manifest.reads = 1;
    s->st.manifest.bytes = s->mtext.len;
    if ((rc = load_directory(s, &s->strings, err)) < 0) goto fail;
    *out = s;
    return PCH_OK;
fail:
    pch_vxp_snapshot_free(s);
    return rc;
}

int pch_vxp_snapshot_open(pch_vxp_snapshot **out, pch_ctx *ctx, const char *root, pch_error *err)
{
    return snapshot_load(out, ctx, root, NULL, err);
}

int pch_vxp_snapshot_open_at(pch_vxp_snapshot **out, pch_ctx *ctx, const char *root, const char *snapshot_id,
                             pch_error *err)
{
    pj_current cur;
    *out = NULL;
    if (!snapshot_id) return snapshot_load(out, ctx, root, NULL, err);
    PCH_TRY(pj_current_at(ctx, root, snapshot_id, &cur, err));
    return snapshot_load(out, ctx, root, &cur, err);
}

int pj_snapshot_twin(pch_vxp_snapshot **out, const pch_vxp_snapshot *s, pch_error *err)
{
    return snapshot_load(out, s->ctx, s->root, &s->cur, err);
}

static void io_add(pch_vxp_io_part *d, const pch_vxp_io_part *a)
{
    d->reads += a->reads;
    d->bytes += a->bytes;
}

void pj_snapshot_absorb(pch_vxp_snapshot *s, const pch_vxp_snapshot *twin)
{
    pch_vxp_query_stats q;
    pch_vxp_snapshot_stats(twin, &q);
    s->st.files_opened += q.files_opened;
    s->st.clusters_read += q.clusters_read;
    s->st.segments_read += q.segments_read;
    s->st.read_requests += q.read_requests;
    s->st.bytes_read += q.bytes_read;
    s->st.bytes_decoded += q.bytes_decoded;
    s->st.cache_hits += q.cache_hits;
    s->st.blobs_hydrated += q.blobs_hydrated;
    s->st.blob_bytes += q.blob_bytes;
    s->st.footer_cache_hits += q.footer_cache_hits;
    s->st.bytes_checked += q.bytes_checked;
    s->st.segments_partial += q.segments_partial;
    s->st.rows_checked += q.rows_checked;
    io_add(&s->st.content, &q.content);
    io_add(&s->st.current, &q.current);
    io_add(&s->st.manifest, &q.manifest);
    io_add(&s->st.directory, &q.directory);
    io_add(&s->st.footer, &q.footer);
    io_add(&s->st.segment_tables, &q.segment_tables);
    io_add(&s->st.lanes, &q.lanes);
}

static int ensure_row(pch_vxp_snapshot *s, uint64_t idx, pch_error *err)
{
    if (idx >= s->n) return pch_error_set(err, PCH_EINVAL, "projection: directory row %" PRIu64 " out of range", idx);
    if (!s->e[idx].s)   /* a row of a shard not read yet */
        for (size_t i = 0; i < s->n_shards; i++)
            if (idx >= s->sh[i].base && idx < s->sh[i].base + s->sh[i].rows) PCH_TRY(load_shard(s, i, err));
    return PCH_OK;
}

int pch_vxp_entry(pch_vxp_snapshot *s, uint64_t idx, const char **source_id, const char **run_key,
                  const char **trajectory_key, const char **doc_path, bool *is_root, pch_error *err)
{
    PCH_TRY(ensure_row(s, idx, err));
    if (source_id) *source_id = s->e[idx].s;
    if (run_key) *run_key = s->e[idx].r;
    if (trajectory_key) *trajectory_key = s->e[idx].t;
    if (doc_path) *doc_path = s->e[idx].doc;
    if (is_root) *is_root = s->e[idx].root;
    return PCH_OK;
}

/* Could shard m hold a key whose run key is `run` (any trajectory key)? */
static bool shard_may_hold_run(const shardm *m, const char *run)
{
    if (!m->rows) return false;
    if (strcmp(m->first[0], m->last[0]) != 0) return true;   /* spans sources: cannot tell */
    return strcmp(m->first[1], run) <= 0 && strcmp(run, m->last[1]) <= 0;
}

/* Does directory entry e match KEY as identity `as` (pch_vxp_lookup_as)? */
/* Key t is producer id `id` qualified by document path doc ("id@doc", src/atif/parse.c). */
static bool is_producer_id(const char *t, const char *id, const char *doc)
{
    size_t n = strlen(id);
    return strncmp(t, id, n) == 0 && t[n] == '@' && strcmp(t + n + 1, doc) == 0;
}

static bool key_hit(const entry *e, pch_vxp_key_kind as, const char *key)
{
    bool traj = strcmp(e->t, key) == 0;
    bool id = as == PCH_VXP_KEY_ANY && is_producer_id(e->t, key, e->doc);
    bool run = e->root && strcmp(e->r, key) == 0;
    bool session = e->root && e->session && strcmp(e->session, key) == 0;
    switch (as) {
    case PCH_VXP_KEY_TRAJECTORY: return traj;
    case PCH_VXP_KEY_RUN: return run;
    case PCH_VXP_KEY_SESSION: return session;
    default: return traj || id || run || session;
    }
}

static const char *const key_kind_names[] = { "trajectory (key or producer id), run or session", "trajectory", "run", "session" };

int pch_vxp_lookup_as(pch_vxp_snapshot *s, pch_vxp_key_kind as, const char *key, uint64_t *idx, size_t cap,
                      size_t *n_out, pch_error *err)
{
    size_t n = 0;
    *n_out = 0;
    if ((unsigned)as > PCH_VXP_KEY_SESSION) return pch_error_set(err, PCH_EINVAL, "projection: key kind %d", (int)as);
    /* ANY: every trajectory whose key is KEY or whose producer id (trajectory id, or a
    ** document root's session id) is KEY, and every document root whose run key or
    ** producer session id is KEY (a shared session id gives every candidate, never an
    ** arbitrary one, §13.4). A run key is found through the fence keys in the shards that can
    ** hold it; only when those have no match (or the key is no run key) are all shards read. */
    bool *want = NULL, indexed = false;
    for (int pass = as == PCH_VXP_KEY_ANY || as == PCH_VXP_KEY_RUN ? 0 : 1; pass < 2 && n == 0; pass++) {
        if (pass == 1 && as == PCH_VXP_KEY_RUN) break;     /* the fences are exact for run keys */
        /* the other identities: the base shards the key index names, and every L0 run (§10.4:
        ** a sync's few rows, not indexed) */
        if (pass == 1 && s->n_ki) {
            int rc;
            if (!(want = pch_calloc(s->ctx, s->n_base ? s->n_base : 1, sizeof *want))) return nomem(err);
            if ((rc = key_shards(s, key, want, &indexed, err)) < 0) { pch_free(s->ctx, want); return rc; }
        }
        for (size_t i = 0; i < s->n_shards; i++) {
            const shardm *m = &s->sh[i];
            int rc;
            if (pass == 0 && !shard_may_hold_run(m, key)) continue;
            if (pass == 1 && (!m->rows || (indexed && i < s->n_base && !want[i]))) continue;
            if ((rc = load_shard(s, i, err)) < 0) { pch_free(s->ctx, want); return rc; }
            for (uint64_t r = m->base; r < m->base + m->rows; r++) {
                if (s->e[r].dead || !key_hit(&s->e[r], as, key)) continue;   /* shadowed or deleted: §12.2 */
                if (n < cap) idx[n] = r;
                n++;
            }
        }
    }
    pch_free(s->ctx, want);
    *n_out = n;
    if (!n) return pch_error_set(err, PCH_ENOTFOUND, "no %s '%s' in snapshot %s", key_kind_names[as], key, s->cur.snapshot_id);
    return PCH_OK;
}

int pch_vxp_lookup_in_run(pch_vxp_snapshot *s, const char *run, const char *traj, uint64_t *idx, size_t cap,
                          size_t *n_out, pch_error *err)
{
    size_t n = 0;
    *n_out = 0;
    for (size_t i = 0; i < s->n_shards; i++) {
        const shardm *m = &s->sh[i];
        if (!shard_may_hold_run(m, run)) continue;
        PCH_TRY(load_shard(s, i, err));
        for (uint64_t r = m->base; r < m->base + m->rows; r++) {
            if (s->e[r].dead || strcmp(s->e[r].r, run) != 0 || strcmp(s->e[r].t, traj) != 0) continue;   /* §12.2 */
            if (n < cap) idx[n] = r;
            n++;
        }
    }
    *n_out = n;
    if (!n) return pch_error_set(err, PCH_ENOTFOUND, "no trajectory '%s' in run '%s' in snapshot %s", traj, run, s->cur.snapshot_id);
    return PCH_OK;
}

int pch_vxp_lookup(pch_vxp_snapshot *s, const char *key, uint64_t *idx, size_t cap, size_t *n_out, pch_error *err)
{
    return pch_vxp_lookup_as(s, PCH_VXP_KEY_ANY, key, idx, cap, n_out, err);
}

static int cmp_parts(const entry *e, const char *src, const char *run, size_t rn, const char *traj, size_t tn)
{
    int c = strcmp(e->s, src);
    if (!c) { size_t l = strlen(e->r); c = memcmp(e->r, run, l < rn ? l : rn); if (!c) c = l < rn ? -1 : l > rn; }
    if (!c) { size_t l = strlen(e->t); c = memcmp(e->t, traj, l < tn ? l : tn); if (!c) c = l < tn ? -1 : l > tn; }
    return c;
}

/* Directory row of an exact key's live entry: the base shard and each L0 run whose fence
** keys hold it are searched (at most one entry of a key is live, §12.2). */
static int find_key(pch_vxp_snapshot *s, const char *src, const char *run, size_t rn, const char *traj, size_t tn,
                    int64_t *out, pch_error *err)
{
    *out = -1;
    for (size_t i = 0; i < s->n_shards; i++) {
        const shardm *m = &s->sh[i];
        entry lo, hi;
        uint64_t a, b;
        if (!m->rows) continue;
        memset(&lo, 0, sizeof lo);
        lo.s = m->first[0]; lo.r = m->first[1]; lo.t = m->first[2];
        hi = lo;
        hi.s = m->last[0]; hi.r = m->last[1]; hi.t = m->last[2];
        if (cmp_parts(&lo, src, run, rn, traj, tn) > 0 || cmp_parts(&hi, src, run, rn, traj, tn) < 0) continue;
        PCH_TRY(load_shard(s, i, err));
        a = m->base;
        b = m->base + m->rows;
        while (a < b) {
            uint64_t mid = a + (b - a) / 2;
            int c = cmp_parts(&s->e[mid], src, run, rn, traj, tn);
            if (c == 0) {
                if (!s->e[mid].dead) { *out = (int64_t)mid; return PCH_OK; }
                break;
            }
            if (c < 0) a = mid + 1; else b = mid;
        }
    }
    return PCH_OK;
}

/* A pch_vx_tail_whole_fn: a data file's whole tail against the manifest's digest of it. */
typedef struct tail_whole { pch_vxp_snapshot *s; const dataf *d; } tail_whole;
static int tail_whole_check(void *payload, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    const tail_whole *t = payload;
    char got[80];
    if (len != t->d->tail_len) return pch_error_set(err, PCH_ECORRUPT, "%s: a tail of %" PRIu64 " bytes, the manifest says %" PRIu64, t->d->path, len, t->d->tail_len);
    pj_bytes_digest(got, bytes, (size_t)len);
    return digest_is(t->s, t->d, t->d->tail_off, len, got, t->d->tail_dig, "footer and dictionaries", err);
}

/* The whole tail of paged data file d, in one read and one check (a scan or a whole-document
** walk reads the layout of every cluster). */
static int read_tail(pch_vxp_snapshot *s, dataf *d, pch_error *err)
{
    tail_whole t = { s, d };
    if (pch_vx_file_read_tail(d->f, tail_whole_check, &t, err) < 0) return pch_error_prefix(err, "%s", d->path);
    pch_vx_file_keep_tail(d->f);
    return PCH_OK;
}

/* A pch_vx_tail_check_fn over a tail read as one block: the manifest's digest of it. */
static int tail_block_check(void *payload, uint32_t block, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    const dataf *d = payload;
    tail_whole t = { d->snap, d };
    int rc = block != 0 ? pch_error_set(err, PCH_ECORRUPT, "%s: tail block %u of a tail read whole", d->path, block)
                        : tail_whole_check(&t, bytes, len, err);
    if (rc < 0) snprintf(((dataf *)payload)->tail_msg, sizeof d->tail_msg, "%s", err ? err->msg : "");
    return rc;
}

/* A pch_vx_range_check_fn: a cluster's bytes against the manifest's digest of them. */
typedef struct cluster_check { dataf *d; uint32_t cluster; bool failed; } cluster_check;
static int cluster_check_fn(void *payload, uint64_t off, const uint8_t *bytes, uint64_t len, pch_error *err)
{
    cluster_check *c = payload;
    char got[80];
    pj_bytes_digest(got, bytes, (size_t)len);
    c->failed = true;               /* the message names the file */
    PCH_TRY(digest_is(c->d->snap, c->d, off, len, got, c->d->cdig[c->cluster], "cluster", err));
    c->failed = false;
    return PCH_OK;
}

/* Does the manifest give every cluster of d a digest? */
static bool has_cluster_digests(const dataf *d)
{
    for (uint32_t c = 0; c < d->n_clusters; c++)
        if (!d->cdig[c]) return false;
    return true;
}

/* A scan's reads on object storage (docs/object-storage.md "Narrow scans on S3"): the lanes'
** segments of a cluster, planned together, are fetched as they are — no point read's 256 KiB
** around each — and coalesced across gaps of up to 256 KiB: a request costs more than that
** much transfer, and the writer puts a cluster's small lanes first (vx_writer.c), so a narrow
** scan reads each cluster with one request (measured on `scaled`: 174 -> 92 GETs). */
#define SCAN_GAP ((uint64_t)256 << 10)
/* The read granularity of a row-checked point read: segments this short or shorter twice are
** read whole, others in runs of this many bytes (measured, docs/vortex-projection.md §8: 32
** bytes read 8 % fewer lane bytes than 64 at 32 MiB clusters, 16 bytes 12 %; 27 % more read
** calls, 200 warm reads 1.03x the time) */
#ifndef ROWCK_BLOCK
#define ROWCK_BLOCK 32u
#endif
static void scan_reads(pch_vx_file *f)
{
    pch_vx_file_set_min_fetch(f, 0);
    pch_vx_file_set_coalesce_gap(f, SCAN_GAP);
}

/* Drop what open_file made of data file d after a failure (rc, returned). */
static int open_fail(dataf *d, int rc)
{
    pch_vx_file_free(d->f);
    d->f = NULL;
    pj_segtab_free(d->segs);
    d->segs = NULL;
    return rc;
}

/* Open data file d for reading: its segment digest table, then the Vortex file. A point
** read (whole false) of a file whose table has digests of its tail (version 3) opens it
** paged: the footer and layout are read in place a checked block at a time
** (pch_vx_file_open_paged) and the chunks' rows come from the manifest, so it reads the
** layout of its own cluster (RFC-0006 §13.4: open costs that do not grow with the file).
** A scan or whole-document walk (whole true) reads every cluster's layout: the whole tail in
** one read, checked against the manifest's digest in one pass (a paged open costs a scan of
** `scaled` 1.08x per process in block reads and their hashes, measured); a file opened paged
** before gets the rest of its tail the same way (read_tail). */
static int open_file(pch_vxp_snapshot *s, dataf *d, bool whole, uint32_t cluster, pch_error *err)
{
    pch_buf p;
    uint8_t *tail = NULL;
    int rc;
    if (d->f && whole && d->rowck) {
        /* a scan after point reads: what those read was checked row by row, not segment by
        ** segment; the file is opened again with its segment checks (and an empty cache) */
        pch_vx_file_free(d->f);
        d->f = NULL;
        d->rowck = false;
    }
    if (d->f) {
        s->st.footer_cache_hits++;
        if (whole && pch_rfile_is_remote(s->root)) scan_reads(d->f);
        return whole ? read_tail(s, d, err) : PCH_OK;
    }
    /* on object storage the tail is read as one block checked against the manifest, with one
    ** request (the manifest gives the object's size: rfile.c reads just the tail). A point
    ** read whose manifest lists each cluster's digest then reads no segment table (an object,
    ** so a request of its own): it checks its cluster whole too — the directory shard, the
    ** footer and the cluster, issue 20's three requests after open (docs/object-storage.md) */
    const bool remote = pch_rfile_is_remote(s->root);
    const bool one_block = remote && d->tail_len >= 64 && d->tail_len <= ((uint64_t)1 << 31);
    const bool whole_checks = one_block && !whole && has_cluster_digests(d);
    if (d->seg_path[0] && !whole_checks && !d->segs) {
        rc = pj_segtab_load(&d->segs, s->ctx, s->root, d->seg_path, d->seg_bytes, d->seg_dig, d->path, d->bytes, whole, err);
        if (rc < 0) return open_fail(d, pch_error_prefix(err, "%s", d->seg_path));
        if (pj_segtab_tail_off(d->segs) && pj_segtab_tail_off(d->segs) != d->tail_off)
            return open_fail(d, pch_error_set(err, PCH_ECORRUPT, "%s: its tail digests start at %" PRIu64 ", the manifest's tail at %" PRIu64,
                                              d->seg_path, pj_segtab_tail_off(d->segs), d->tail_off));
    }
    pch_buf_init(&p, s->ctx);
    pch_buf_printf(&p, "%s/%s", s->root, d->path);
    if (p.oom) return open_fail(d, nomem(err));
    if (one_block) {
        pch_vx_paged_open po = { PCH_VX_PAGED_OPEN_VERSION, d->tail_off, (uint32_t)d->tail_len, tail_block_check, d,
                                 d->cluster_begin, d->n_clusters, 0, 0 };
        /* a point read's cluster is fetched with the tail, concurrently: it needs both, and
        ** the manifest says where both are (one round trip fewer; load_cluster_at holds it) */
        if (whole_checks && cluster < d->n_clusters) {
            po.also_off = d->coff[cluster];
            po.also_len = d->clen[cluster];
        }
        d->tail_msg[0] = 0;
        rc = pch_vx_file_open_paged(&d->f, s->ctx, (const char *)p.data, &po, err);
        if (rc < 0 && d->tail_msg[0]) {
            pch_buf_dispose(&p);
            return open_fail(d, pch_error_set(err, rc, "%s", d->tail_msg));
        }
        if (rc == PCH_OK) pch_vx_file_keep_tail(d->f);   /* checked whole: the next process's */
    } else if (!whole && pj_segtab_tail_off(d->segs)) {
        /* every lane is chunked by cluster: the chunks start where the manifest's clusters do.
        ** A row-checked point read (below) reads the footer and layout in place unchecked, to
        ** ROWCK_BLOCK: every byte of them it uses decides what it decodes, and what it decodes
        ** is compared with the row digests (the FlatBuffer accessors bound every access) */
        const bool rows = !remote && pj_segtab_has_rows(d->segs);
        pch_vx_paged_open po = { PCH_VX_PAGED_OPEN_VERSION, d->tail_off, rows ? ROWCK_BLOCK : pj_segtab_block_bytes(d->segs),
                                 rows ? NULL : pj_segtab_check_tail, rows ? NULL : d->segs, d->cluster_begin, d->n_clusters, 0, 0 };
        rc = pch_vx_file_open_paged(&d->f, s->ctx, (const char *)p.data, &po, err);
    } else {
        /* the tail (footer, zone tables, dictionaries) is read once: checked against the
        ** manifest's digest, then handed to the Vortex reader */
        if ((rc = read_checked(s, d, d->tail_off, d->tail_len, d->tail_dig, "footer and dictionaries", &tail, err)) < 0) {
            pch_buf_dispose(&p);
            return open_fail(d, rc);           /* the message names the file already */
        }
        s->st.footer.reads++;
        s->st.footer.bytes += d->tail_len;
        pch_rfile_keep_tail(d->fd, d->tail_off, tail, d->tail_len);   /* checked: the next process's */
        rc = pch_vx_file_open_tail(&d->f, s->ctx, (const char *)p.data, tail, d->tail_off, (size_t)d->tail_len, err);
        pch_free(s->ctx, tail);
    }
    pch_buf_dispose(&p);
    if (rc < 0) return open_fail(d, rc);   /* the Vortex reader's message names the file */
    pch_vx_file_io_stats(d->f, &d->open_io);
    /* every reader (point reads, lane scans, pruning, training readers) reads lanes by their
    ** model types: a file of another schema fails here, before any lane of it is used */
    if (!s->data_dt && (rc = pj_data_dtype(s->ctx, &s->data_dt, err)) < 0) return open_fail(d, rc);
    if (!pch_vx_dtype_equal(pch_vx_file_dtype(d->f), s->data_dt))
        return open_fail(d, pch_error_set(err, PCH_ECORRUPT, "%s: its columns are not the projection's data-file schema", d->path));
    if (pch_vx_file_row_count(d->f) != d->rows)
        return open_fail(d, pch_error_set(err, PCH_ECORRUPT, "%s: %" PRIu64 " rows, manifest says %" PRIu64, d->path, pch_vx_file_row_count(d->f), d->rows));
    if (d->segs && !whole && !remote && pj_segtab_has_rows(d->segs)) {
        /* a point read checks the rows it decodes against the table's row digests
        ** (load_cluster_at), so it reads just the bytes its rows need — a segment's array
        ** metadata, its rows' offsets and frames — to ROWCK_BLOCK, with no segment or block
        ** digest: its cost follows the trajectory, not the cluster (issue 18 item 5) */
        if ((rc = pj_segtab_match(d->segs, d->f, err)) < 0) return open_fail(d, pch_error_prefix(err, "%s", d->path));
        if (pj_segtab_n_rows(d->segs) != d->rows)
            return open_fail(d, pch_error_set(err, PCH_ECORRUPT, "%s: row digests of %" PRIu64 " rows, the manifest says %" PRIu64,
                                              d->seg_path, pj_segtab_n_rows(d->segs), d->rows));
        if ((rc = pch_vx_file_set_partial_reads(d->f, ROWCK_BLOCK, NULL, NULL, err)) < 0) return open_fail(d, rc);
        pch_vx_file_set_coalesce_gap(d->f, ROWCK_BLOCK);
        d->rowck = true;
    } else if (d->segs) {
        if ((rc = pj_segtab_match(d->segs, d->f, err)) < 0) return open_fail(d, pch_error_prefix(err, "%s", d->path));
        pch_vx_file_set_segment_check(d->f, pj_segtab_check, d->segs);
        /* a table with block digests lets a point read read only the blocks of a segment it
        ** decodes (its own frames), each checked (RFC-0006 §13.4, §9.5) */
        if (pj_segtab_block_bytes(d->segs) &&
            (rc = pch_vx_file_set_partial_reads(d->f, pj_segtab_block_bytes(d->segs), pj_segtab_check_block, d->segs, err)) < 0)
            return open_fail(d, rc);
        /* coalesce only neighbours a block apart: a point read's small segments sit between
        ** long ones it reads in part, and a 64 KiB gap would read those (measured on scaled:
        ** 19 % fewer lane bytes for 5 more reads; scans read whole lanes, gaps do not matter) */
        if (pj_segtab_block_bytes(d->segs)) pch_vx_file_set_coalesce_gap(d->f, pj_segtab_block_bytes(d->segs));
    }
    if (whole && remote) scan_reads(d->f);
    s->st.files_opened++;
    return PCH_OK;
}

/* The rows [begin, end) of cluster `cluster` of d just decoded into s->c_arr (from row
** `begin`), against their row digests (docs/vortex-projection.md §6 "Row digests"): every
** byte a row-checked point read used went into the values compared here, before any of them
** is used or kept. */
static int check_rows(pch_vxp_snapshot *s, dataf *d, uint32_t cluster, uint64_t begin, uint64_t end, pch_error *err)
{
    for (uint64_t r = begin; r < end; r++) {
        const uint8_t *want;
        uint8_t got[32];
        PCH_TRY(pj_segtab_row_digest(d->segs, r, &want, err));
        pch_vx_row_digest(s->c_arr, r - begin, got);
        s->st.rows_checked++;
        if (memcmp(got, want, 32) != 0)
            return pch_error_set(err, PCH_ECORRUPT, "cluster %u row %" PRIu64 ": the decoded lanes do not match the row's digest "
                                 "(damaged bytes in the cluster's segments)", cluster, r);
    }
    return PCH_OK;
}

/* Decode the rows of data file `file` around `row` (in cluster `cluster`) into the
** snapshot's row cache; *base = the first row decoded. A point read decodes `row` alone:
** with the lanes' zstd frames cut at trajectory boundaries (RFC-0006 §7.2, §13.4) only the
** frames holding it decompress. Whole-document walks (export, verify) decode the cluster
** once for all the trajectories in it. */
static int load_cluster_at(pch_vxp_snapshot *s, uint32_t file, uint32_t cluster, uint64_t row, uint64_t *base,
                           pch_error *err)
{
    dataf *d = &s->files[file];
    pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
    if (s->c_file == (int64_t)file && s->c_begin <= row && row < s->c_end) {
        *base = s->c_begin;
        return PCH_OK;
    }
    PCH_TRY(open_file(s, d, !s->point, cluster, err));
    pch_vx_array_free(s->c_arr);
    pch_vx_dtype_free(s->c_dt);
    s->c_arr = NULL;
    s->c_dt = NULL;
    s->c_file = -1;
    so.row_begin = d->cluster_begin[cluster];
    so.row_end = d->cluster_begin[cluster + 1];
    if (so.row_end <= so.row_begin || row < so.row_begin || row >= so.row_end)
        return pch_error_set(err, PCH_ECORRUPT, "%s: cluster %u row range is inconsistent", d->path, cluster);
    if (!d->segs) {
        /* no segment table checks its reads (a point read from object storage, or a root built
        ** before the tables): the cluster is read once, checked whole against the manifest's
        ** digest and held, so every lane read of it is of the bytes checked (§9.5) */
        cluster_check cc = { d, cluster, false };
        int rc = pch_vx_file_hold(d->f, d->coff[cluster], d->clen[cluster], cluster_check_fn, &cc, err);
        if (rc < 0) return cc.failed ? rc : pch_error_prefix(err, "%s", d->path);
    } else if (s->point && pch_rfile_is_remote(s->root) && pch_vx_file_prefetch(d->f, d->coff[cluster], d->clen[cluster], err) < 0) {
        /* on object storage a point read fetches its cluster with one request: its lanes'
        ** segments then cost none (docs/object-storage.md "Vortex roots on S3") */
        return pch_error_prefix(err, "%s", d->path);
    }
    if (s->point) {
        /* a document root: its row alone. A subagent: the rows after it too (up to
        ** PJ_SUBAGENT_WINDOW in its cluster): a document's trajectories are consecutive rows, and
        ** each point read of one decompressed the same zstd frames again (a multi-agent
        ** document of ~20 trajectories: ~20 decodes of the frames around it, §22 benchmark) */
        so.row_begin = row;
        if (!s->depth) so.row_end = row + 1;
        else {
            if (so.row_end - row > PJ_SUBAGENT_WINDOW) so.row_end = row + PJ_SUBAGENT_WINDOW;
            /* no further than the document's subagents known so far (write_rows) */
            if (s->horizon > row && so.row_end > s->horizon) so.row_end = s->horizon;
            else if (s->horizon <= row) so.row_end = row + 1;
        }
    }
    if (pch_vx_file_scan(d->f, &so, &s->c_arr, &s->c_dt, err) < 0) return pch_error_prefix(err, "%s", d->path);
    if (d->rowck && check_rows(s, d, cluster, so.row_begin, so.row_end, err) < 0) {
        pch_vx_array_free(s->c_arr);
        pch_vx_dtype_free(s->c_dt);
        s->c_arr = NULL;
        s->c_dt = NULL;
        return pch_error_prefix(err, "%s", d->path);
    }
    PCH_TRY(pj_rows_bind(&s->c_rows, s->c_arr, err));
    s->c_file = file;
    s->c_begin = so.row_begin;
    s->c_end = so.row_end;
    s->st.clusters_read++;
    *base = so.row_begin;
    return PCH_OK;
}

static int load_cluster(pch_vxp_snapshot *s, const entry *e, uint64_t *base, pch_error *err)
{
    return load_cluster_at(s, e->file, e->cluster, e->row, base, err);
}

uint32_t pj_snapshot_n_clusters(const pch_vxp_snapshot *s, size_t f) { return f < s->n_files ? s->files[f].n_clusters : 0; }

int pj_snapshot_cluster(pch_vxp_snapshot *s, size_t f, uint32_t c, const pch_vx_array **root, const pj_rows **rows,
                        uint64_t *begin, uint64_t *end, pch_error *err)
{
    uint64_t base;
    if (f >= s->n_files || c >= s->files[f].n_clusters)
        return pch_error_set(err, PCH_EINVAL, "projection: no cluster %u in data file %zu", c, f);
    s->point = false;
    PCH_TRY(load_cluster_at(s, (uint32_t)f, c, s->files[f].cluster_begin[c], &base, err));
    *root = s->c_arr;
    *rows = &s->c_rows;
    *begin = s->c_begin;
    *end = s->c_end;
    return PCH_OK;
}

int pj_snapshot_cluster_take(pch_vxp_snapshot *s, size_t f, uint32_t c, pch_vx_array **arr, pch_vx_dtype **dt, pj_rows *rows,
                             uint64_t *begin, uint64_t *end, pch_error *err)
{
    const pch_vx_array *a;
    const pj_rows *r;
    PCH_TRY(pj_snapshot_cluster(s, f, c, &a, &r, begin, end, err));
    *arr = s->c_arr;
    *dt = s->c_dt;
    *rows = s->c_rows;
    s->c_arr = NULL;       /* detached: the caller's now */
    s->c_dt = NULL;
    s->c_file = -1;
    return PCH_OK;
}

void pj_snapshot_cluster_range(const pch_vxp_snapshot *s, size_t f, uint32_t c, uint64_t *begin, uint64_t *end)
{
    *begin = s->files[f].cluster_begin[c];
    *end = s->files[f].cluster_begin[c + 1];
}

int pj_snapshot_file_dtype(pch_vxp_snapshot *s, size_t f, const pch_vx_dtype **dt, pch_error *err)
{
    if (f >= s->n_files) return pch_error_set(err, PCH_EINVAL, "projection: no data file %zu", f);
    s->point = false;
    PCH_TRY(open_file(s, &s->files[f], true, UINT32_MAX, err));
    *dt = pch_vx_file_dtype(s->files[f].f);
    return PCH_OK;
}

/* Page k of the paged trajectory whose first row is e->row: the next rows of the same file,
** possibly in later clusters (§7.2). */
static int load_page(pch_vxp_snapshot *s, const entry *e, uint32_t k, uint64_t *row, uint64_t *base, pch_error *err)
{
    dataf *d = &s->files[e->file];
    uint32_t lo = e->cluster, hi;
    *row = e->row + k;
    if (*row < e->row || *row >= d->rows)
        return pch_error_set(err, PCH_ECORRUPT, "%s: page %u of the trajectory at row %" PRIu64 " is past the file's %" PRIu64 " rows", d->path, k, e->row, d->rows);
    hi = d->n_clusters;                     /* cluster_begin[lo] <= row < cluster_begin[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (d->cluster_begin[mid] <= *row) lo = mid;
        else hi = mid;
    }
    return load_cluster_at(s, e->file, lo, *row, base, err);
}

static int ensure_blobs(pch_vxp_snapshot *s, pch_error *err)
{
    if (s->blobs_loaded) return PCH_OK;
    PCH_TRY(pj_blobs_open(&s->blobs, s->ctx, s->root, s->m, true, err));
    s->blobs_loaded = true;
    return PCH_OK;
}

typedef struct getctx {
    pch_vxp_snapshot *s;
    pch_vxp_hydration mode;
    const char *source;
    unsigned nodes;
    const entry *cur;             /* the trajectory being written (its pages follow its row) */
    pch_buf *visited;             /* NULL, or receives each written directory row (u64, preorder) */
} getctx;

static int page_cb(pch_buf *out, const char *traj, size_t tn, uint32_t pages, bool *first_step, void *payload,
                   pch_error *err)
{
    getctx *g = payload;
    for (uint32_t k = 1; k < pages; k++) {
        uint64_t row, base;
        PCH_TRY(load_page(g->s, g->cur, k, &row, &base, err));
        PCH_TRY(pj_model_write_page(out, &g->s->c_rows, row - base, traj, tn, k, pages, first_step, g->s->blobs,
                                    g->mode, &g->s->st, err));
    }
    return PCH_OK;
}

static int write_entry(getctx *g, pch_buf *out, uint64_t idx, pch_error *err);

static int child_cb(pch_buf *out, const char *run, size_t rn, const char *traj, size_t tn, void *payload, pch_error *err)
{
    getctx *g = payload;
    int64_t k;
    PCH_TRY(find_key(g->s, g->source, run, rn, traj, tn, &k, err));
    if (k < 0) return pch_error_set(err, PCH_ECORRUPT, "subagent (%.*s, %.*s) is not in the trajectory directory", (int)rn, run, (int)tn, traj);
    return write_entry(g, out, (uint64_t)k, err);
}

/* The row after e's last direct subagent (in e's file; 0: none there): a document's
** trajectories are consecutive rows in preorder, so a point read that decodes its subagents'
** rows at once (load_cluster_at) needs none past it — not the 64 rows of other documents that
** follow a document's last subagent (a two-trajectory document read 816 KB of lanes for 3 KB
** of JSON on `scaled`). The lookups are the ones writing the subagents makes anyway. */
static int child_horizon(getctx *g, const entry *e, const pj_rows *rows, uint64_t at, uint64_t *h, pch_error *err)
{
    const pch_vx_array *cr = rows->l[PJ_ID_CHILD_RUN_KEYS], *ct = rows->l[PJ_ID_CHILD_TRAJECTORY_KEYS];
    uint64_t rb, re, tb, te;
    *h = 0;
    if (!pch_vx_list_range(cr, at, &rb, &re) || !pch_vx_list_range(ct, at, &tb, &te) || re - rb != te - tb) return PCH_OK;
    for (uint64_t k = 0; k < re - rb; k++) {
        const char *run, *traj;
        size_t rn, tn;
        int64_t idx;
        if (!pch_vx_row_bytes(pch_vx_list_items(cr), rb + k, &run, &rn) || !pch_vx_row_bytes(pch_vx_list_items(ct), tb + k, &traj, &tn))
            continue;           /* the writer reports the null key */
        PCH_TRY(find_key(g->s, g->source, run, rn, traj, tn, &idx, err));
        if (idx >= 0 && g->s->e[idx].file == e->file && g->s->e[idx].row >= *h) *h = g->s->e[idx].row + 1;
    }
    return PCH_OK;
}

/* Write trajectory e from rows (its row at `at`), one level deeper. */
static int write_rows(getctx *g, pch_buf *out, const entry *e, pj_rows *rows, uint64_t at, pch_error *err)
{
    const entry *outer = g->cur;
    const uint64_t horizon = g->s->horizon;
    int rc;
    if (g->s->point && (rc = child_horizon(g, e, rows, at, &g->s->horizon, err)) < 0) {
        g->s->horizon = horizon;
        return rc;
    }
    if (g->s->horizon < horizon) g->s->horizon = horizon;
    g->s->depth++;
    g->cur = e;
    rc = pj_model_write_json(out, rows, at, g->s->blobs, g->mode, &g->s->st, child_cb, page_cb, g, err);
    g->cur = outer;
    g->s->depth--;
    g->s->horizon = horizon;
    return rc;
}

static int write_entry(getctx *g, pch_buf *out, uint64_t idx, pch_error *err)
{
    pch_vxp_snapshot *s = g->s;
    const entry *e = &s->e[idx];
    uint64_t base = 0;
    int rc;
    if (s->depth > PJ_MAX_SUBAGENT_DEPTH)
        return pch_error_set(err, PCH_ELIMIT, "subagent nesting deeper than %d (cyclic?)", PJ_MAX_SUBAGENT_DEPTH);
    if (++g->nodes > 100000) return pch_error_set(err, PCH_ELIMIT, "more than 100,000 subagent trajectories under one document");
    if (g->visited && pch_buf_append(g->visited, &idx, sizeof idx) < 0) return nomem(err);
    if (g->mode != PCH_VXP_PREVIEW) PCH_TRY(ensure_blobs(s, err));
    /* a subagent whose row an ancestor decoded is written from the ancestor's rows (they live
    ** until that ancestor is written): a multi-agent document then decodes its frames about
    ** twice, not once per trajectory */
    for (unsigned k = s->n_anc; k-- > 0;) {
        const struct anc_window *w = s->anc[k];
        if (w->file == e->file && w->begin <= e->row && e->row < w->end) {
            pj_rows rows = w->rows;
            return write_rows(g, out, e, &rows, e->row - w->begin, err);
        }
    }
    PCH_TRY(load_cluster(s, e, &base, err));
    {
        /* the cluster stays decoded while children (usually in it) are written */
        struct anc_window w = { e->file, s->c_begin, s->c_end, s->c_rows };
        pch_vx_array *keep = s->c_arr;
        pch_vx_dtype *keep_dt = s->c_dt;
        s->c_arr = NULL; s->c_dt = NULL; s->c_file = -1;   /* detach: children may load others */
        s->anc[s->n_anc++] = &w;                           /* depth checked above: room */
        rc = write_rows(g, out, e, &w.rows, e->row - base, err);
        s->n_anc--;
        if (s->c_arr) { pch_vx_array_free(keep); pch_vx_dtype_free(keep_dt); }
        else { s->c_arr = keep; s->c_dt = keep_dt; s->c_file = e->file; s->c_begin = w.begin; s->c_end = w.end; s->c_rows = w.rows; }
    }
    return rc;
}

static int cmp_loc(const void *a, const void *b, void *arg);

static int get_json(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_hydration mode, bool pretty, bool point,
                    char **out, size_t *len_out, pch_buf *visited, pch_error *err)
{
    pch_buf b;
    getctx g;
    int rc;
    *out = NULL;
    PCH_TRY(ensure_row(s, idx, err));
    g.s = s;
    g.mode = mode;
    g.source = s->e[idx].s;
    g.nodes = 0;
    g.cur = NULL;
    g.visited = visited;
    pch_buf_init(&b, s->ctx);
    s->point = point && s->row_reads;
    rc = write_entry(&g, &b, idx, err);
    s->point = false;
    if (rc == PCH_OK && pretty) {
        pch_buf p;
        pch_buf_init(&p, s->ctx);
        if (pch_atif__pretty(&p, (const char *)b.data, b.len) < 0 || pch_buf_putc(&p, '\n') < 0) rc = nomem(err);
        pch_buf_dispose(&b);
        pch_buf_move(&p, &b);
    }
    if (rc == PCH_OK && pch_buf_reserve(&b, 0) < 0) rc = nomem(err);
    if (rc < 0) { pch_buf_dispose(&b); return rc; }
    *out = (char *)pch_buf_detach(&b, len_out);
    return PCH_OK;
}

int pch_vxp_get(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_hydration mode, bool pretty, char **out,
                size_t *len_out, pch_error *err)
{
    return get_json(s, idx, mode, pretty, true, out, len_out, NULL, err);
}

static int get_doc(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_hydration mode, pch_vxp_doc *out, pch_error *err)
{
    pch_buf rows;
    int rc;
    memset(out, 0, sizeof *out);
    pch_buf_init(&rows, s->ctx);
    rc = get_json(s, idx, mode, false, false, &out->json, &out->len, &rows, err);
    if (rc < 0) { pch_buf_dispose(&rows); return rc; }
    out->n_rows = rows.len / sizeof(uint64_t);
    out->rows = (uint64_t *)(void *)pch_buf_detach(&rows, NULL);
    return PCH_OK;
}

int pch_vxp_get_doc(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_doc *out, pch_error *err)
{
    return get_doc(s, idx, PCH_VXP_FULL, out, err);
}

int pch_vxp_get_atif(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_doc *raw, pch_atif_doc **out, pch_error *err)
{
    return pch_vxp_get_atif_as(s, idx, PCH_VXP_FULL, raw, out, err);
}

int pch_vxp_get_atif_as(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_hydration mode, pch_vxp_doc *raw,
                        pch_atif_doc **out, pch_error *err)
{
    pch_atif_options ao = PCH_ATIF_OPTIONS_INIT;
    pch_atif_doc *d = NULL;
    const entry *e;
    int rc;
    *out = NULL;
    if (mode == PCH_VXP_PREVIEW) return pch_error_set(err, PCH_EINVAL, "projection: a preview is no ATIF document");
    PCH_TRY(get_doc(s, idx, mode, raw, err));
    e = &s->e[idx];
    ao.source_id = e->s;
    rc = pch_atif_doc_parse(&d, s->ctx, raw->json, raw->len, e->doc, &ao, NULL, NULL, err);
    if (rc < 0) return pch_error_prefix(err, "document %s as rebuilt from the projection", e->doc);
    if (pch_atif_doc_count(d) != raw->n_rows)
        rc = pch_error_set(err, PCH_ECORRUPT, "%s: %zu trajectories in the document, %zu in the directory", e->doc,
                           pch_atif_doc_count(d), raw->n_rows);
    for (size_t i = 0; i < raw->n_rows && rc == PCH_OK; i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(d, i);
        const entry *k;
        if ((rc = ensure_row(s, raw->rows[i], err)) < 0) break;
        k = &s->e[raw->rows[i]];
        /* the directory's key is the snapshot's: a root built before keys came from each
        ** document alone (no lineage.trajectory_keys) may hold a key made unique across
        ** documents, generated, as the importer marked it then (§5.2) */
        if (strcmp(k->r, t->run_key) != 0 || strcmp(k->t, t->trajectory_key) != 0)
            rc = pch_atif_doc_set_key(d, i, strcmp(k->r, t->run_key) ? k->r : NULL, k->t, true, err);
    }
    if (rc < 0) { pch_atif_doc_free(d); return rc; }
    *out = d;
    return PCH_OK;
}

void pch_vxp_doc_dispose(pch_vxp_snapshot *s, pch_vxp_doc *d)
{
    pch_free(s->ctx, d->json);
    pch_free(s->ctx, d->rows);
    memset(d, 0, sizeof *d);
}

/* Every asset embedded from the steps of e (all of its pages, §7.2) → cb. */
static int entry_assets(pch_vxp_snapshot *s, const entry *e, pch_vxp_asset_cb cb, void *payload, pch_error *err)
{
    uint64_t pages = 1, base;
    PCH_TRY(load_cluster(s, e, &base, err));
    PCH_TRY(pj_model_pages(&s->c_rows, e->row - base, &pages, err));
    for (uint64_t k = 0; k < pages; k++) {
        uint64_t row = e->row;
        if (k) PCH_TRY(load_page(s, e, (uint32_t)k, &row, &base, err));
        PCH_TRY(pj_model_assets(&s->c_rows, row - base, cb, payload, err));
    }
    return PCH_OK;
}

int pch_vxp_each_asset(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_asset_cb cb, void *payload, pch_error *err)
{
    PCH_TRY(ensure_row(s, idx, err));
    return entry_assets(s, &s->e[idx], cb, payload, err);
}

/* Directory rows of the document roots, in storage order (file, row): read in this order
** each cluster is decoded once. */
static int storage_order(pch_vxp_snapshot *s, bool roots_only, uint64_t **out, uint64_t *n_out, pch_error *err)
{
    uint64_t *order, n = 0;
    PCH_TRY(pj_snapshot_load_all(s, err));
    if (!(order = pch_malloc(s->ctx, (size_t)(s->n ? s->n : 1) * 8))) return nomem(err);
    for (uint64_t i = 0; i < s->n; i++)
        if (!s->e[i].dead && (!roots_only || s->e[i].root)) order[n++] = i;
    qsort_r(order, (size_t)n, 8, cmp_loc, s->e);
    *out = order;
    *n_out = n;
    return PCH_OK;
}

pch_ctx *pj_snapshot_ctx(const pch_vxp_snapshot *s) { return s->ctx; }

int pj_snapshot_blobs(pch_vxp_snapshot *s, pj_blobs **out, pch_error *err)
{
    *out = NULL;
    PCH_TRY(ensure_blobs(s, err));
    *out = s->blobs;
    return PCH_OK;
}

pch_vxp_assets pch_vxp_snapshot_assets(const pch_vxp_snapshot *s)
{
    const pch_json_value *l = pch_json_get(s->m, "layout", 6), *a = l ? pch_json_get(l, "assets", 6) : NULL;
    return a && a->kind == PCH_JSON_STRING && a->u.str.len == 5 && memcmp(a->u.str.ptr, "embed", 5) == 0
           ? PCH_VXP_ASSETS_EMBED : PCH_VXP_ASSETS_REFERENCE;
}

int pch_vxp_documents(pch_vxp_snapshot *s, uint64_t **idx, uint64_t *n, pch_error *err)
{
    return storage_order(s, true, idx, n, err);
}

typedef struct restore {
    pch_vxp_snapshot *s;
    const char *stage;
    const char *doc;
    pch_buf path, bytes;
    pch_error *err;
} restore;

/* Write one embedded asset beside its document (§9.6), once per path. */
static int restore_asset(const uint8_t id[32], const char *p, size_t n, void *payload)
{
    restore *r = payload;
    const char *slash = strrchr(r->doc, '/');
    struct stat st;
    char *dirend;
    int rc;
    if (pch_atif_path_check(p, n, r->err) < 0) return pch_error_prefix(r->err, "asset path in %s", r->doc);
    pch_buf_clear(&r->path);
    pch_buf_printf(&r->path, "%s/%.*s%.*s", r->stage, slash ? (int)(slash - r->doc + 1) : 0, r->doc, (int)n, p);
    if (r->path.oom) return nomem(r->err);
    if (stat((const char *)r->path.data, &st) == 0) return PCH_OK;   /* shared by several documents */
    pch_buf_clear(&r->bytes);
    PCH_TRY(pj_blobs_get(r->s->blobs, id, &r->bytes, &r->s->st, r->err));
    dirend = strrchr((char *)r->path.data, '/');
    *dirend = 0;
    rc = pch_mkdirs((const char *)r->path.data, r->err);
    *dirend = '/';
    PCH_TRY(rc);
    {
        FILE *f = fopen((const char *)r->path.data, "wx");
        if (!f) return pch_error_set_sys(r->err, PCH_EIO, errno, "create asset %.*s", (int)n, p);
        rc = fwrite(r->bytes.data, 1, r->bytes.len, f) == r->bytes.len && fflush(f) == 0 && fsync(fileno(f)) == 0 ? PCH_OK
             : pch_error_set_sys(r->err, PCH_EIO, errno, "write asset %.*s", (int)n, p);
        fclose(f);
    }
    return rc;
}

static int cmp_loc(const void *a, const void *b, void *arg)
{
    const entry *e = arg;
    const entry *x = &e[*(const uint64_t *)a], *y = &e[*(const uint64_t *)b];
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

int pch_vxp_export(pch_vxp_snapshot *s, const char *dir, uint64_t *n_docs, pch_error *err)
{
    pch_buf stage, path;
    uint64_t *order = NULL, n = 0, n_all = 0;
    char id[17];
    struct stat st;
    int rc = PCH_OK;
    *n_docs = 0;
    if (stat(dir, &st) == 0) return pch_error_set(err, PCH_EEXISTS, "%s already exists (export writes a new directory)", dir);
    PCH_TRY(pj_random_id(id, 8, err));
    pch_buf_init(&stage, s->ctx);
    pch_buf_init(&path, s->ctx);
    pch_buf_printf(&stage, "%s.partial-%s", dir, id);
    if (stage.oom) return nomem(err);
    if ((rc = storage_order(s, false, &order, &n_all, err)) < 0) goto done;
    if ((rc = pch_mkdirs((const char *)stage.data, err)) < 0 || (rc = ensure_blobs(s, err)) < 0) goto done;
    for (uint64_t i = 0; i < n_all; i++) {
        const entry *e = &s->e[order[i]];
        char *doc = NULL, *slash;
        size_t len;
        if ((rc = pch_atif_path_check(e->doc, strlen(e->doc), err)) < 0) { pch_error_prefix(err, "document path in the directory"); goto done; }
        if (pj_blobs_count(s->blobs)) {
            /* assets embedded from this trajectory (any depth) go back beside its document */
            restore r = { s, (const char *)stage.data, e->doc, { 0 }, { 0 }, err };
            pch_buf_init(&r.path, s->ctx);
            pch_buf_init(&r.bytes, s->ctx);
            rc = entry_assets(s, e, restore_asset, &r, err);
            pch_buf_dispose(&r.path);
            pch_buf_dispose(&r.bytes);
            if (rc < 0) goto done;
        }
        if (!e->root) continue;
        n++;
        if ((rc = pch_vxp_get(s, order[i], PCH_VXP_FULL, true, &doc, &len, err)) < 0) goto done;
        pch_buf_clear(&path);
        pch_buf_printf(&path, "%s/%s", (const char *)stage.data, e->doc);
        if (path.oom) { pch_free(s->ctx, doc); rc = nomem(err); goto done; }
        slash = strrchr((char *)path.data, '/');
        *slash = 0;
        rc = pch_mkdirs((const char *)path.data, err);
        *slash = '/';
        if (rc == PCH_OK) {
            FILE *f = fopen((const char *)path.data, "wx");
            if (!f) rc = pch_error_set_sys(err, errno == EEXIST ? PCH_EEXISTS : PCH_EIO, errno, "create %s", e->doc);
            else {
                if (fwrite(doc, 1, len, f) != len) rc = pch_error_set_sys(err, PCH_EIO, errno, "write %s", e->doc);
                if (fflush(f) != 0 || fsync(fileno(f)) != 0) rc = rc ? rc : pch_error_set_sys(err, PCH_EIO, errno, "sync %s", e->doc);
                fclose(f);
            }
        }
        pch_free(s->ctx, doc);
        if (rc < 0) goto done;
    }
    if (rename((const char *)stage.data, dir) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "rename to %s", dir); goto done; }
    {
        char *d = strdup(dir), *sl;
        if (d && (sl = strrchr(d, '/'))) { *sl = 0; pch_fsync_dir(d[0] ? d : "/", NULL); }
        else pch_fsync_dir(".", NULL);
        free(d);
    }
    *n_docs = n;
done:
    if (rc < 0) pch_remove_tree((const char *)stage.data, NULL);
    pch_free(s->ctx, order);
    pch_buf_dispose(&stage);
    pch_buf_dispose(&path);
    return rc;
}

int pj_dir_decode_mem(pch_ctx *ctx, const void *data, size_t len, pch_error *err)
{
    pch_vxp_snapshot *s;
    pch_vx_file *f = NULL;
    pch_vx_array *a = NULL;
    pch_vx_dtype *dt = NULL;
    pch_arena ar;
    int rc;
    if (!(s = pch_calloc(ctx, 1, sizeof *s))) return nomem(err);
    s->ctx = ctx;
    pch_arena_init(&s->strings, ctx, 4096);
    pch_arena_init(&ar, ctx, 4096);
    rc = pch_vx_file_open_mem(&f, ctx, data, len, err);
    if (rc == PCH_OK) rc = pch_vx_file_scan(f, NULL, &a, &dt, err);
    /* the file id column: D_FILE in version 1, one before it in version 2 */
    const int fcol = rc == PCH_OK && a->dtype->kind == PCH_VX_STRUCT && a->n_children == D_N &&
                     strcmp(a->dtype->names[D_N - 1], "key_flags") == 0 ? D_FILE - 1 : D_FILE;
    if (rc == PCH_OK && a->n_children == D_N && a->children[fcol]->dtype->kind == PCH_VX_UTF8 && a->len < 100000) {
        /* every file id the shard names is a known file of unbounded rows */
        const pch_vx_array *c = a->children[fcol];
        if (!(s->files = pch_calloc(ctx, (size_t)a->len + 1, sizeof *s->files))) rc = nomem(err);
        for (uint64_t r = 0; rc == PCH_OK && r < a->len; r++) {
            size_t n = (size_t)(c->offsets[r + 1] - c->offsets[r]);
            bool seen = false;
            if (n != 32 || !pch_vx_array_is_valid(c, r)) continue;
            for (size_t k = 0; k < s->n_files; k++) seen |= memcmp(s->files[k].id, c->data + c->offsets[r], 32) == 0;
            if (seen) continue;
            memcpy(s->files[s->n_files].id, c->data + c->offsets[r], 32);
            s->files[s->n_files++].rows = (uint64_t)1 << 40;
        }
        if (rc == PCH_OK && !(s->e = pch_calloc(ctx, (size_t)a->len + 1, sizeof *s->e))) rc = nomem(err);
        if (rc == PCH_OK) rc = decode_shard(s, a, &ar, true, err);
    } else if (rc == PCH_OK) {
        rc = pch_error_set(err, PCH_ECORRUPT, "not a directory shard");
    }
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    pch_vx_file_free(f);
    pch_arena_dispose(&ar);
    pch_vxp_snapshot_free(s);
    return rc;
}

/* ---- lane scans (§13.2, §13.3): every cluster of the snapshot, only the lanes asked for ---- */

/* The summary lanes a pruned scan reads first (§13.3, §14.2), in this order. */
enum { PR_PAGE_INDEX, PR_PAGE_COUNT, PR_STEPS, PR_MIN_TS, PR_MAX_TS, PR_SOURCE, PR_MODEL, PR_TOOL, PR_COPIED, PR_N };
static const char *const k_prune_lanes[PR_N] = {
    "id.page_index", "id.page_count", "summary.step_count", "summary.min_timestamp_ms", "summary.max_timestamp_ms",
    "summary.source_mask", "summary.model_bloom", "summary.tool_bloom", "summary.copied_step_count"
};

struct pch_vxp_lanes {
    pch_vxp_snapshot *s;
    const char **cols;              /* "group.lane" paths */
    size_t n;
    size_t file;                    /* next cluster to read: files[file], cluster */
    uint32_t cluster;
    pch_vx_array *arr;
    pch_vx_dtype *dt;
    const pch_vx_array **lanes;
    /* pruning (pch_vxp_lanes_prune) */
    bool prune;
    pch_vxp_prune p;
    char *model, *function;         /* owned copies of p.model, p.function */
    uint64_t model_bits, tool_bits;
    uint8_t *skip;                  /* per cluster of files[skip_file]: the zone maps rule it out */
    size_t skip_file;
    uint8_t *keep;                  /* per row of the current cluster (when pruned or masked) */
    size_t keep_cap;
    bool masked;                    /* the current cluster has deleted rows: keep says which live */
    uint8_t *live;                  /* per row of the current cluster when masked: 1 = not deleted */
    size_t live_cap;
    pch_vxp_lanes_stats st;
    uint8_t *text_codes;            /* per lane: text as codes only (pch_vxp_lanes_text_codes) */
    /* pj_lanes_stride: this iterator reads only the clusters whose ordinal in the scan (every
    ** cluster of every file, pruned or not) is phase modulo stride; ord counts them */
    uint32_t stride, phase;
    uint64_t ord, last_ord;
    /* read-ahead on object storage: clusters [cluster, ahead_end) of files[ahead_file - 1]
    ** are fetched (read_ahead; ahead_file 0: none) */
    size_t ahead_file;
    uint32_t ahead_end;
};

int pch_vxp_lanes_open(pch_vxp_lanes **out, pch_vxp_snapshot *s, const char *const *lanes, size_t n,
                       pch_error *err)
{
    pch_vxp_lanes *it;
    *out = NULL;
    if (n == 0) return pch_error_set(err, PCH_EINVAL, "projection: a lane scan needs at least one lane");
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (int l = 0; l < PJ_L_N && !known; l++) {
            const char *g = pj_group_names[pj_lane_group[l]];
            size_t gn = strlen(g);
            known = strncmp(lanes[i], g, gn) == 0 && lanes[i][gn] == '.' && strcmp(lanes[i] + gn + 1, pj_lane_names[l]) == 0;
        }
        if (!known) return pch_error_set(err, PCH_EINVAL, "projection: no lane %s (docs/vortex-projection.md §2)", lanes[i]);
    }
    if (!(it = pch_calloc(s->ctx, 1, sizeof *it)) || !(it->cols = pch_calloc(s->ctx, n, sizeof *it->cols)) ||
        !(it->lanes = pch_calloc(s->ctx, n, sizeof *it->lanes)) || !(it->text_codes = pch_calloc(s->ctx, n, 1))) {
        if (it) { pch_free(s->ctx, it->cols); pch_free(s->ctx, it->lanes); }
        pch_free(s->ctx, it);
        return nomem(err);
    }
    it->s = s;
    it->n = n;
    for (size_t i = 0; i < n; i++) it->cols[i] = lanes[i];
    it->skip_file = SIZE_MAX;       /* no file's zone skips computed yet */
    it->stride = 1;
    *out = it;
    return PCH_OK;
}

void pch_vxp_lanes_free(pch_vxp_lanes *it)
{
    if (!it) return;
    pch_free(it->s->ctx, it->skip);
    pch_free(it->s->ctx, it->keep);
    pch_free(it->s->ctx, it->live);
    pch_free(it->s->ctx, it->model);
    pch_free(it->s->ctx, it->function);
    pch_vx_array_free(it->arr);
    pch_vx_dtype_free(it->dt);
    pch_free(it->s->ctx, it->lanes);
    pch_free(it->s->ctx, it->cols);
    pch_free(it->s->ctx, it->text_codes);
    pch_free(it->s->ctx, it);
}

int pch_vxp_lanes_text_codes(pch_vxp_lanes *it, size_t i, pch_error *err)
{
    if (i >= it->n) return pch_error_set(err, PCH_EINVAL, "projection: no lane %zu in a scan of %zu", i, it->n);
    if (it->file || it->cluster) return pch_error_set(err, PCH_EINVAL, "projection: ask for codes before a lane scan's first cluster");
    it->text_codes[i] = 1;
    return PCH_OK;
}

int pch_vxp_lanes_prune(pch_vxp_lanes *it, const pch_vxp_prune *p, pch_error *err)
{
    pch_ctx *ctx = it->s->ctx;
    if (it->file || it->cluster) return pch_error_set(err, PCH_EINVAL, "projection: prune a lane scan before its first cluster");
    it->p = *p;
    if ((p->model && !(it->model = pch_strndup(ctx, p->model, strlen(p->model)))) ||
        (p->function && !(it->function = pch_strndup(ctx, p->function, strlen(p->function)))))
        return nomem(err);
    it->p.model = it->model;
    it->p.function = it->function;
    it->model_bits = p->model ? pj_bloom_bits(p->model, strlen(p->model)) : 0;
    it->tool_bits = p->function ? pj_bloom_bits(p->function, strlen(p->function)) : 0;
    it->prune = p->has_ts_lo || p->has_ts_hi || p->source_bits || p->model || p->function || p->copied >= 0;
    return PCH_OK;
}

/* A pruned scan tests the summaries of every cluster it returns (pch_vxp_lanes_next). */
const uint8_t *pch_vxp_lanes_keep(const pch_vxp_lanes *it) { return it->prune || it->masked ? it->keep : NULL; }
const uint8_t *pch_vxp_lanes_live(const pch_vxp_lanes *it) { return it->masked ? it->live : NULL; }

/* Deleted rows of d within [b, e). */
/* The first of d's deleted ranges (sorted, disjoint) that ends after row b: a scan asks per
** cluster, and a file after many syncs has hundreds of ranges. */
static size_t del_from(const dataf *d, uint64_t b)
{
    size_t lo = 0, hi = d->n_del;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->del[2 * mid + 1] <= b) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static uint64_t dead_in(const dataf *d, uint64_t b, uint64_t e)
{
    uint64_t n = 0;
    for (size_t k = del_from(d, b); k < d->n_del; k++) {
        uint64_t lo = d->del[2 * k] > b ? d->del[2 * k] : b, hi = d->del[2 * k + 1] < e ? d->del[2 * k + 1] : e;
        if (d->del[2 * k] >= e) break;
        if (lo < hi) n += hi - lo;
    }
    return n;
}

/* it->live (and it->keep, ANDed with a pruned scan's) for the rows [b, e) of d. */
static int mask_dead(pch_vxp_lanes *it, const dataf *d, uint64_t b, uint64_t e, pch_error *err)
{
    size_t rows = (size_t)(e - b);
    if (rows > it->live_cap) {
        pch_free(it->s->ctx, it->live);
        if (!(it->live = pch_malloc(it->s->ctx, rows))) { it->live_cap = 0; return nomem(err); }
        it->live_cap = rows;
    }
    if (!it->prune && rows > it->keep_cap) {
        pch_free(it->s->ctx, it->keep);
        if (!(it->keep = pch_malloc(it->s->ctx, rows))) { it->keep_cap = 0; return nomem(err); }
        it->keep_cap = rows;
    }
    memset(it->live, 1, rows);
    for (size_t k = del_from(d, b); k < d->n_del; k++) {
        uint64_t lo = d->del[2 * k] > b ? d->del[2 * k] : b, hi = d->del[2 * k + 1] < e ? d->del[2 * k + 1] : e;
        if (d->del[2 * k] >= e) break;
        if (lo < hi) memset(it->live + (lo - b), 0, (size_t)(hi - lo));
    }
    {
        uint8_t *keep = it->keep;          /* locals: the stores could alias *it */
        const uint8_t *live = it->live;
        if (it->prune) for (size_t r = 0; r < rows; r++) keep[r] &= live[r];
        else memcpy(keep, live, rows);
    }
    it->masked = true;
    return PCH_OK;
}
void pch_vxp_lanes_stats_get(const pch_vxp_lanes *it, pch_vxp_lanes_stats *out) { *out = it->st; }

/* One zone-map comparison on file d: (*zones)[z] = 1 when zone z holds no row that satisfies
** `col op lit` (pch_vx_file_zone_prune; *zones NULL when col has no zone map). */
static int zone_pass(dataf *d, const char *col, pch_vx_cmp op, int64_t lit, uint8_t **zones, uint64_t *nz,
                     uint32_t *zl, pch_error *err)
{
    pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
    so.filter_column = col;
    so.filter_op = op;
    so.filter_kind = 0;
    so.filter_i = lit;
    return pch_vx_file_zone_prune(d->f, &so, zones, nz, zl, err);
}

/* Which clusters of files[it->file] the zone maps of its summary lanes rule out, with no byte
** of them read: every zone a cluster overlaps says no row can match, and no zone it overlaps
** holds a paged trajectory (a skipped cluster must not hold the first pages of a trajectory
** that continues in the next one, whose identity and step ordinals the reader carries over). */
static bool all_zones(const uint8_t *zones, uint64_t n_zones, uint32_t zone_len, uint64_t b, uint64_t e)
{
    if (!zones) return false;
    for (uint64_t z = b / zone_len; z <= (e - 1) / zone_len; z++)
        if (z >= n_zones || !zones[z]) return false;
    return true;
}

static int zone_skips(pch_vxp_lanes *it, dataf *d, pch_error *err)
{
    pch_ctx *ctx = it->s->ctx;
    uint8_t *paged = NULL, *z[2] = { NULL, NULL };
    uint64_t npg = 0, nz[2] = { 0, 0 };
    uint32_t zlp = 0, zl[2] = { 0, 0 };
    int rc = PCH_OK;
    pch_free(ctx, it->skip);
    it->skip = NULL;
    it->skip_file = it->file;
    if (!it->p.has_ts_lo && !it->p.has_ts_hi) return PCH_OK;
    /* zones with page_count > 1 are not ruled out: 0 in paged[] means "holds a paged one" */
    if ((rc = zone_pass(d, "id.page_count", PCH_VX_CMP_GT, 1, &paged, &npg, &zlp, err)) < 0) goto done;
    if (!paged) goto done;
    if (it->p.has_ts_lo && (rc = zone_pass(d, "summary.max_timestamp_ms", PCH_VX_CMP_GE, it->p.ts_lo, &z[0], &nz[0], &zl[0], err)) < 0) goto done;
    if (it->p.has_ts_hi && (rc = zone_pass(d, "summary.min_timestamp_ms", PCH_VX_CMP_LE, it->p.ts_hi, &z[1], &nz[1], &zl[1], err)) < 0) goto done;
    if (!(it->skip = pch_calloc(ctx, d->n_clusters ? d->n_clusters : 1, 1))) { rc = nomem(err); goto done; }
    for (uint32_t c = 0; c < d->n_clusters; c++) {
        uint64_t b = d->cluster_begin[c], e = d->cluster_begin[c + 1];
        if (e <= b) continue;
        it->skip[c] = all_zones(paged, npg, zlp, b, e) &&
                      (all_zones(z[0], nz[0], zl[0], b, e) || all_zones(z[1], nz[1], zl[1], b, e));
    }
done:
    pch_free(ctx, paged);
    pch_free(ctx, z[0]);
    pch_free(ctx, z[1]);
    return rc;
}

static uint64_t lane_u(const pch_vx_array *a, uint64_t r) { return pch_vx_row_valid(a, r) ? pch_vx_row_uint(a, r) : 0; }

/* Cluster [b, e) of d as trajectory summaries: decoded from its summary lanes into *out. */
static int psums_decode(pch_vxp_lanes *it, dataf *d, uint64_t b, uint64_t e, pj_psums *out, pch_error *err)
{
    pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
    pch_vx_array *arr = NULL;
    pch_vx_dtype *dt = NULL;
    const pch_vx_array *const *L;
    uint64_t rows = e - b;
    out->row = NULL;
    out->closes = false;
    out->ahead = false;
    so.columns = k_prune_lanes;
    so.n_columns = PR_N;
    so.row_begin = b;
    so.row_end = e;
    if (pch_vx_file_scan(d->f, &so, &arr, &dt, err) < 0) return pch_error_prefix(err, "%s", d->path);
    if (arr->n_children != PR_N || arr->len != rows) {
        pch_vx_array_free(arr);
        pch_vx_dtype_free(dt);
        return pch_error_set(err, PCH_ECORRUPT, "%s: a summary scan returned another shape than asked", d->path);
    }
    L = (const pch_vx_array *const *)arr->children;
    if (!(out->row = pch_malloc(it->s->ctx, (size_t)(rows ? rows : 1) * sizeof *out->row))) {
        pch_vx_array_free(arr);
        pch_vx_dtype_free(dt);
        return nomem(err);
    }
    for (uint64_t r = 0; r < rows; r++) {
        pj_psum *p = &out->row[r];
        p->has_ts = pch_vx_row_valid(L[PR_MIN_TS], r) && pch_vx_row_valid(L[PR_MAX_TS], r);
        p->min_ts = p->has_ts ? (int64_t)pch_vx_row_uint(L[PR_MIN_TS], r) : 0;
        p->max_ts = p->has_ts ? (int64_t)pch_vx_row_uint(L[PR_MAX_TS], r) : 0;
        p->steps = lane_u(L[PR_STEPS], r);
        p->copied = lane_u(L[PR_COPIED], r);
        p->source = lane_u(L[PR_SOURCE], r);
        p->model = lane_u(L[PR_MODEL], r);
        p->tool = lane_u(L[PR_TOOL], r);
    }
    if (rows) {
        uint64_t last = rows - 1;
        out->closes = pch_vx_row_valid(L[PR_PAGE_INDEX], last) && pch_vx_row_valid(L[PR_PAGE_COUNT], last) &&
                      pch_vx_row_uint(L[PR_PAGE_INDEX], last) + 1 == pch_vx_row_uint(L[PR_PAGE_COUNT], last);
    }
    pch_vx_array_free(arr);
    pch_vx_dtype_free(dt);
    return PCH_OK;
}

/* The summaries of cluster c = [b, e) of d into *ps: the snapshot's decoded ones (*warm), or
** decoded now and kept with the snapshot while its budget allows, else into *tmp (the
** caller frees tmp->row). */
static int psums_of(pch_vxp_lanes *it, dataf *d, uint32_t c, uint64_t b, uint64_t e, pj_psums **ps, pj_psums *tmp,
                    bool *warm, pch_error *err)
{
    pch_vxp_snapshot *s = it->s;
    uint64_t bytes = (e - b) * sizeof(pj_psum);
    bool fits = s->psum_bytes + bytes <= s->psum_budget;
    *ps = d->psum ? &d->psum[c] : NULL;
    *warm = *ps && (*ps)->row && !(*ps)->ahead;
    if (*ps && (*ps)->row) {
        (*ps)->ahead = false;        /* this scan's read-ahead decoded them: not warm */
        return PCH_OK;
    }
    PCH_TRY(psums_decode(it, d, b, e, tmp, err));
    if (fits && !d->psum) d->psum = pch_calloc(s->ctx, d->n_clusters ? d->n_clusters : 1, sizeof *d->psum);
    if (fits && d->psum) {
        d->psum[c] = *tmp;
        tmp->row = NULL;                /* the snapshot's now */
        s->psum_bytes += bytes;
        *ps = &d->psum[c];
    } else {
        *ps = tmp;
    }
    return PCH_OK;
}

/* May the trajectory summarised by p hold a row the scan's predicates keep? */
static bool psum_may(const pch_vxp_lanes *it, const pj_psum *p)
{
    bool may = true;
    if (it->p.has_ts_lo) may = p->has_ts && p->max_ts >= it->p.ts_lo;
    if (it->p.has_ts_hi && may) may = p->has_ts && p->min_ts <= it->p.ts_hi;
    if (it->p.source_bits && may) may = (p->source & it->p.source_bits) != 0;
    if (it->p.model && may) may = (p->model & it->model_bits) == it->model_bits;
    if (it->p.function && may) may = (p->tool & it->tool_bits) == it->tool_bits;
    if (it->p.copied == 1 && may) may = p->copied > 0;
    if (it->p.copied == 0 && may) may = p->copied < p->steps;
    return may;
}

/* The summaries of cluster c = [b, e) of d: which rows may hold a match (it->keep). *skip
** when none may and the cluster's last row does not continue into the next cluster. The
** decoded summaries stay with the snapshot while its budget allows. */
static int summary_keep(pch_vxp_lanes *it, dataf *d, uint32_t c, uint64_t b, uint64_t e, bool *skip, pch_error *err)
{
    pch_vxp_snapshot *s = it->s;
    pj_psums tmp = { NULL, false, false }, *ps;
    uint64_t rows = e - b, kept = 0;
    bool warm;
    *skip = false;
    PCH_TRY(psums_of(it, d, c, b, e, &ps, &tmp, &warm, err));
    it->st.clusters_summary_warm += warm;
    if (rows > it->keep_cap) {
        pch_free(s->ctx, it->keep);
        if (!(it->keep = pch_malloc(s->ctx, (size_t)rows))) {
            it->keep_cap = 0;
            pch_free(s->ctx, tmp.row);
            return nomem(err);
        }
        it->keep_cap = (size_t)rows;
    }
    for (uint64_t r = 0; r < rows; r++) {
        bool may = psum_may(it, &ps->row[r]);
        it->keep[r] = may;
        kept += may;
    }
    it->st.rows += rows;
    it->st.rows_pruned += rows - kept;
    if (kept == 0) *skip = rows > 0 && ps->closes;
    pch_free(s->ctx, tmp.row);
    return PCH_OK;
}

/* Read-ahead on object storage (docs/object-storage.md "Read-ahead"): one cluster after
** another, a cold scan of N clusters waited N request latencies (19-72 GETs of 15-40 ms each
** on the radosgw, the §22.3 matrix on S3). So a scan asks for the reads of its next
** AHEAD_CLUSTERS clusters at once, which the store runs concurrently; a pruned scan first
** fetches those clusters' summary lanes at once and decodes them, then fetches only the
** clusters they keep, and with them the summaries of the round after. Every read is still
** checked as it is decoded (the segment table). */
#define AHEAD_CLUSTERS 8
#define AHEAD_BYTES ((uint64_t)64 << 20)   /* at most this much fetched ahead at once */

/* Plan the reads of lanes cols[0..n) over clusters cl[i] of d (those with want[i]) into
** all[] after its *na pairs, in order while they fit `cap` reads in all and AHEAD_BYTES (the
** first cluster's always, in part if need be): *upto = the number of cl[] covered. */
static int ahead_plan(dataf *d, const char *const *cols, size_t n, const uint32_t *cl, const bool *want, size_t ncl,
                      uint64_t *all, size_t *na, size_t cap, size_t *upto, pch_ctx *ctx, pch_error *err)
{
    uint64_t bytes = 0;
    size_t i, first = *na;
    int rc = PCH_OK;
    for (i = 0; i < ncl && rc == PCH_OK; i++) {
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        uint64_t *r = NULL, rb = 0;
        size_t nr = 0;
        if (!want[i]) continue;
        so.columns = cols;
        so.n_columns = n;
        so.row_begin = d->cluster_begin[cl[i]];
        so.row_end = d->cluster_begin[cl[i] + 1];
        if ((rc = pch_vx_file_scan_ranges(d->f, &so, &r, &nr, err)) < 0) break;
        for (size_t k = 0; k < nr; k++) rb += r[2 * k + 1];
        if (*na > first && (*na + nr > cap || bytes + rb > AHEAD_BYTES)) {
            pch_free(ctx, r);
            break;                  /* the next read-ahead starts here */
        }
        if (nr > cap - *na) nr = cap - *na;   /* the first cluster's: in part */
        memcpy(all + 2 * *na, r, nr * 2 * sizeof *r);
        *na += nr;
        bytes += rb;
        pch_free(ctx, r);
    }
    *upto = i;
    return rc < 0 ? pch_error_prefix(err, "%s", d->path) : PCH_OK;
}

static int ahead_get(dataf *d, const uint64_t *all, size_t na, pch_error *err)
{
    return pch_vx_file_prefetch_ranges(d->f, all, na, err) < 0 ? pch_error_prefix(err, "%s", d->path) : PCH_OK;
}

/* The clusters of d from `from` on that the scan will consider, at most AHEAD_CLUSTERS, into
** cl[0..*n): its own (a read-ahead worker's iterator, pj_ahead.c, reads every stride-th
** cluster; the current cluster's ordinal is it->ord - 1), not ruled out by zone maps, with a
** live row. Returns the cluster after the last one looked at. */
static uint32_t ahead_pick(const pch_vxp_lanes *it, const dataf *d, uint32_t from, uint32_t *cl, size_t *n)
{
    uint32_t c;
    *n = 0;
    for (c = from; c < d->n_clusters && *n < AHEAD_CLUSTERS; c++) {
        uint64_t b = d->cluster_begin[c], e = d->cluster_begin[c + 1];
        if ((it->ord - 1 + (c - it->cluster)) % it->stride != it->phase) continue;
        if ((it->prune && it->skip && it->skip[c]) || (d->n_del && dead_in(d, b, e) == e - b)) continue;
        cl[(*n)++] = c;
    }
    return c;
}

static int read_ahead(pch_vxp_lanes *it, dataf *d, pch_error *err)
{
    uint32_t cl[AHEAD_CLUSTERS], c;
    bool want[AHEAD_CLUSTERS];
    uint64_t all[2 * PCH_VX_PREFETCH_MAX];
    size_t n, n_all, upto, na = 0;
    if (!d->segs || !pch_rfile_is_remote(it->s->root)) return PCH_OK;
    if (it->ahead_file == it->file + 1 && it->cluster < it->ahead_end) return PCH_OK;
    c = ahead_pick(it, d, it->cluster, cl, &n);
    n_all = n;
    for (size_t i = 0; i < n; i++) want[i] = true;
    if (it->prune) {
        /* the summaries first (held already when the round before fetched them with its data:
        ** no request), decoded as summary_keep will read them */
        bool cold[AHEAD_CLUSTERS];
        for (size_t i = 0; i < n; i++) cold[i] = !d->psum || !d->psum[cl[i]].row;
        PCH_TRY(ahead_plan(d, k_prune_lanes, PR_N, cl, cold, n, all, &na, PCH_VX_PREFETCH_MAX / 2, &upto, it->s->ctx, err));
        PCH_TRY(ahead_get(d, all, na, err));
        n = upto;                   /* summaries fetched: the clusters tested now */
        for (size_t i = 0; i < n; i++) {
            /* a cluster none of whose rows may match, and whose last trajectory does not go
            ** on into the next cluster, is not read */
            pj_psums tmp = { NULL, false, false }, *ps;
            uint64_t b = d->cluster_begin[cl[i]], rows = d->cluster_begin[cl[i] + 1] - b;
            bool warm, any;
            PCH_TRY(psums_of(it, d, cl[i], b, b + rows, &ps, &tmp, &warm, err));
            ps->ahead = !warm && ps != &tmp;
            any = !ps->closes;
            for (uint64_t r = 0; r < rows && !any; r++) any = psum_may(it, &ps->row[r]);
            pch_free(it->s->ctx, tmp.row);
            want[i] = any;
        }
        na = 0;
    }
    PCH_TRY(ahead_plan(d, (const char *const *)it->cols, it->n, cl, want, n, all, &na, PCH_VX_PREFETCH_MAX / 2, &upto,
                       it->s->ctx, err));
    for (size_t i = 0; i < upto; i++) it->st.clusters_fetched_ahead += want[i];
    it->ahead_file = it->file + 1;
    it->ahead_end = upto < n_all ? cl[upto] : c;   /* the next read-ahead: at the first not fetched */
    if (it->prune && it->ahead_end == c) {
        /* the next round's summaries ride with this round's data: one round trip a round */
        uint32_t cl2[AHEAD_CLUSTERS];
        bool cold2[AHEAD_CLUSTERS];
        size_t n2, upto2;
        ahead_pick(it, d, c, cl2, &n2);
        for (size_t i = 0; i < n2; i++) cold2[i] = !d->psum || !d->psum[cl2[i]].row;
        PCH_TRY(ahead_plan(d, k_prune_lanes, PR_N, cl2, cold2, n2, all, &na, PCH_VX_PREFETCH_MAX, &upto2, it->s->ctx, err));
    }
    return ahead_get(d, all, na, err);
}

int pch_vxp_lanes_next(pch_vxp_lanes *it, const pch_vx_array *const **lanes, uint64_t *rows, bool *eof,
                       pch_error *err)
{
    pch_vxp_snapshot *s = it->s;
    pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
    dataf *d;
    pch_vx_array_free(it->arr);
    pch_vx_dtype_free(it->dt);
    it->arr = NULL;
    it->dt = NULL;
    *lanes = NULL;
    *rows = 0;
    it->masked = false;
    for (;;) {
        uint64_t b, e, dead = 0;
        bool skip = false;
        while (it->file < s->n_files && it->cluster >= s->files[it->file].n_clusters) { it->file++; it->cluster = 0; }
        *eof = it->file >= s->n_files;
        if (*eof) return PCH_OK;
        if (it->ord++ % it->stride != it->phase) {     /* another worker's cluster */
            it->cluster++;
            continue;
        }
        it->last_ord = it->ord - 1;
        d = &s->files[it->file];
        PCH_TRY(open_file(s, d, true, UINT32_MAX, err));
        b = d->cluster_begin[it->cluster];
        e = d->cluster_begin[it->cluster + 1];
        it->st.clusters++;
        if (it->prune && it->skip_file != it->file) PCH_TRY(zone_skips(it, d, err));
        PCH_TRY(read_ahead(it, d, err));
        if (it->prune) {
            if (it->skip && it->skip[it->cluster]) {
                it->st.clusters_zone_pruned++;
                it->cluster++;
                continue;
            }
        }
        /* rows a newer revision shadows (§12.2): a cluster with none live is not read */
        if (d->n_del && (dead = dead_in(d, b, e)) == e - b) {
            it->st.clusters_deleted++;
            it->cluster++;
            continue;
        }
        /* every segment read is checked against the file's segment digests (§9.5); a root
        ** without them has one digest per cluster, which covers all of its bytes */
        if (!d->segs) PCH_TRY(check_range(s, d, d->coff[it->cluster], d->clen[it->cluster], d->cdig[it->cluster], "cluster", err));
        if (it->prune) {
            PCH_TRY(summary_keep(it, d, it->cluster, b, e, &skip, err));
            if (skip) {
                it->st.clusters_summary_pruned++;
                it->cluster++;
                continue;
            }
        }
        if (dead) {
            PCH_TRY(mask_dead(it, d, b, e, err));
            it->st.rows_deleted += dead;
        }
        break;
    }
    so.columns = it->cols;
    so.n_columns = it->n;
    so.text_codes = it->text_codes;
    so.row_begin = d->cluster_begin[it->cluster];
    so.row_end = d->cluster_begin[it->cluster + 1];
    if (pch_vx_file_scan(d->f, &so, &it->arr, &it->dt, err) < 0) return pch_error_prefix(err, "%s", d->path);
    if (it->arr->n_children != it->n || it->arr->len != so.row_end - so.row_begin)
        return pch_error_set(err, PCH_ECORRUPT, "%s: a lane scan returned another shape than asked", d->path);
    for (size_t i = 0; i < it->n; i++) it->lanes[i] = it->arr->children[i];
    s->st.clusters_read++;
    it->st.clusters_read++;
    it->cluster++;
    *lanes = it->lanes;
    *rows = it->arr->len;
    return PCH_OK;
}


/* ---- what the parallel read-ahead (pj_ahead.c) needs of an iterator ---- */

int pj_lanes_clone(pch_vxp_lanes **out, const pch_vxp_lanes *it, pch_vxp_snapshot *s, pch_error *err)
{
    pch_vxp_lanes *c;
    int rc;
    *out = NULL;
    PCH_TRY(pch_vxp_lanes_open(&c, s, it->cols, it->n, err));
    memcpy(c->text_codes, it->text_codes, it->n);
    if (it->prune && (rc = pch_vxp_lanes_prune(c, &it->p, err)) < 0) {
        pch_vxp_lanes_free(c);
        return rc;
    }
    *out = c;
    return PCH_OK;
}

void pj_lanes_stride(pch_vxp_lanes *it, uint32_t stride, uint32_t phase)
{
    it->stride = stride ? stride : 1;
    it->phase = phase % it->stride;
}

size_t pj_lanes_count(const pch_vxp_lanes *it) { return it->n; }
pch_vxp_snapshot *pj_lanes_snapshot(const pch_vxp_lanes *it) { return it->s; }

int pj_lanes_next_owned(pch_vxp_lanes *it, pch_vx_array **arr, pch_vx_dtype **dt, uint64_t *ord, bool *eof,
                        pch_error *err)
{
    const pch_vx_array *const *L;
    uint64_t rows;
    *arr = NULL;
    *dt = NULL;
    PCH_TRY(pch_vxp_lanes_next(it, &L, &rows, eof, err));
    *ord = *eof ? it->ord : it->last_ord;
    if (*eof) return PCH_OK;
    *arr = it->arr;                 /* handed over: the iterator's next call must not free them */
    *dt = it->dt;
    it->arr = NULL;
    it->dt = NULL;
    return PCH_OK;
}

/* ---- what an incremental sync (pj_sync.c) needs of its parent snapshot ---- */

int pj_snapshot_open_cur(pch_vxp_snapshot **out, pch_ctx *ctx, const char *root, const pj_current *cur, pch_error *err)
{
    return snapshot_load(out, ctx, root, cur, err);
}

const pch_json_value *pj_snapshot_manifest(const pch_vxp_snapshot *s) { return s->m; }
uint64_t pj_snapshot_n_entries(const pch_vxp_snapshot *s) { return s->n; }
size_t pj_snapshot_n_files(const pch_vxp_snapshot *s) { return s->n_files; }

int pj_snapshot_entry_view(pch_vxp_snapshot *s, uint64_t i, pj_entry_view *v, pch_error *err)
{
    const entry *e;
    PCH_TRY(ensure_row(s, i, err));
    e = &s->e[i];
    v->source_id = e->s;
    v->run_key = e->r;
    v->traj_key = e->t;
    v->doc_path = e->doc;
    v->file = e->file;
    v->row = e->row;
    v->dead = e->dead;
    v->tomb = e->tomb;
    v->session_id = e->session;
    v->parent_run = e->prun;
    v->parent_traj = e->ptraj;
    v->cluster = e->cluster;
    v->logical = e->logical;
    v->steps = e->steps;
    v->calls = e->calls;
    v->has_ts = e->has_ts;
    v->min_ts = e->min_ts;
    v->max_ts = e->max_ts;
    return PCH_OK;
}

const char *pj_snapshot_file_id(const pch_vxp_snapshot *s, size_t f) { return s->files[f].id; }

void pj_snapshot_file_info(const pch_vxp_snapshot *s, size_t f, uint64_t *rows, const uint64_t **del, size_t *n_del)
{
    *rows = s->files[f].rows;
    *del = s->files[f].del;
    *n_del = s->files[f].n_del;
}

void pj_snapshot_count(const pch_vxp_snapshot *s, uint64_t *placed, uint64_t *live)
{
    *placed = *live = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        *placed += !s->e[i].tomb;
        *live += !s->e[i].dead;
    }
}

void pj_snapshot_check_keys(pch_vxp_snapshot *s, pch_vxp_finding_cb cb, void *payload, size_t *n)
{
    pch_strset live;
    memset(&live, 0, sizeof live);
    for (uint64_t i = 0; i < s->n; i++) {
        const entry *e = &s->e[i];
        size_t a = strlen(e->s), b = strlen(e->r), c = strlen(e->t);
        char *k;
        int r;
        if (e->dead) continue;
        if (!(k = malloc(a + b + c + 3))) { cb("directories/trajectory", "out of memory checking keys", payload); (*n)++; break; }
        memcpy(k, e->s, a); k[a] = 0x1f;
        memcpy(k + a + 1, e->r, b); k[a + 1 + b] = 0x1f;
        memcpy(k + a + b + 2, e->t, c + 1);
        r = pch_strset_take(s->ctx, &live, k);
        if (r <= 0) {
            char msg[700];
            free(k);
            snprintf(msg, sizeof msg, "trajectory key (%.150s, %.150s, %.200s) is live twice (a key resolves to one revision, §12.2)", e->s, e->r, e->t);
            cb("directories/trajectory", msg, payload);
            (*n)++;
        }
    }
    pch_strset_dispose(s->ctx, &live);
}
