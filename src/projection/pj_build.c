/* Full build of a snapshot (RFC-0006 §11.1): trajectories are packed into clusters (a
** trajectory, and the subagent tree of its document, never straddles two; one chunk of
** every lane per cluster, §7), clusters into data files rolled at a size setting, external
** content into blob packs; then the content directory, the trajectory directory (sorted by
** TrajectoryKey, sharded, fence keys in the manifest, §10.4), the manifest (§10.3) and
** CURRENT (§10.2). Everything is written under staging/<writer-id>/ first and published in
** the §9.5 order; CURRENT is replaced last, only if it is still what the writer read when it
** started (a stale commit fails, never last-write-wins). A failure before that publishes
** nothing a reader can see. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "projection/pj_int.h"

/* The trajectory directory, version 2 (pj_read.c reads version 1 too): a trajectory key that
** is `<run key>@<document path>` is left null, and a session id equal to the run key null
** with key_flags bit 1 — what every point read reads of a shard is half as long. */
#define DIR_SCHEMA "source_id:utf8,run_key:utf8,trajectory_key:utf8?,session_id:utf8?," \
    "parent_run_key:utf8?,parent_trajectory_key:utf8?,doc_path:utf8,is_root:bool,file_id:utf8," \
    "cluster:u32,row:u64,revision:u64,deleted:bool,logical_bytes:u64,step_count:u32," \
    "tool_call_count:u32,min_timestamp_ms:i64?,max_timestamp_ms:i64?,key_flags:u8"

typedef struct dentry {
    char *source_id, *run_key, *traj_key, *session_id, *parent_run, *parent_traj, *doc_path;
    bool deleted;                 /* a tombstone (incremental sync): no file, no row */
    bool carried;                 /* a compaction keeps its row where it is: file fid, cluster, row */
    char fid[33];
    uint32_t file, cluster;       /* known after the flusher wrote the cluster */
    uint64_t row, logical;        /* row: first row of the cluster + row_in_cluster */
    uint64_t seq, row_in_cluster;
    uint32_t steps, calls;
    bool has_ts;
    int64_t min_ts, max_ts;
} dentry;

typedef struct dfile {
    char id[33];
    uint64_t *crows;              /* rows of each cluster (manifest "cluster_rows") */
    uint64_t *coff, *clen;        /* byte range of each cluster's segments */
    char (*cdig)[80];             /* and their BLAKE3: a point read from object storage checks
                                  ** the one range it fetched against it instead of fetching
                                  ** the segment table too (docs/object-storage.md) */
    uint64_t tail_off;            /* dict values, zone tables, footer: checked on open */
    char tail_dig[80];
    uint64_t rows;
    uint32_t clusters;
    uint64_t bytes;
    char digest[80];
    char seg_dig[80];             /* its segment digest table (pj_segs.c) */
    uint64_t seg_bytes;
    uint8_t *rdig;                /* pch_vx_row_digest of each row, for the table (§6 "Row
                                  ** digests": a point read checks the rows it decodes) */
} dfile;

typedef struct cplace {
    uint32_t file, cluster;
    uint64_t first_row;
} cplace;

typedef struct lane_acc {
    char *path;
    pch_vx_enc_count *encs;        /* over every data file (names owned) */
    size_t n_encs;
    int dict_layout;
    uint64_t dict_values;
    uint64_t logical, stored, chunks;
    double seconds;
} lane_acc;

struct pch_vxp_builder {
    pch_ctx *ctx;
    char *root, *stage;
    int stage_fd;                     /* our lock on stage (pj_stage.c) */
    pch_vxp_build_options o;
    char writer_id[33], snapshot_id[40];
    bool had_current;
    /* the compressor's FSST memo, carried from one data file to the next (a fresh memo per
    ** 32 MiB file retrained FSST on every string lane of every file) */
    uint32_t fsst_memo[2 * 1024];
    pj_current cur;
    pch_buf cur_raw;
    pch_vx_dtype *dt;
    pch_vx_builder *rows;
    pch_json_parser *jp;
    pj_content *content;
    pch_vx_writer *w;
    uint64_t cluster_rows, cluster_logical;
    dfile *files;
    size_t n_files, cap_files;
    dentry *d;
    size_t n_d, cap_d;
    lane_acc *lanes;
    size_t n_lanes;
    pch_vxp_build_stats st;
    double t0, last_progress;
    bool committed;
    bool created_root;            /* ROOT did not exist: removed again if nothing is published */
    pj_remote *remote;            /* ROOT is on object storage: root is a local staging root,
                                  ** removed when the builder is freed (pj_remote.c) */
    bool sync_ready;              /* mu/cv initialised */
    /* clusters are encoded on a flusher thread while the next one is built (§11.5: at most
    ** one cluster queued and one being encoded); placement is known only once written */
    pthread_t flusher;
    bool flusher_running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pch_vx_array *queued;         /* next cluster for the flusher, or NULL */
    uint64_t queued_seq;
    bool queued_keep;             /* the queued cluster ends inside a paged trajectory */
    bool stop;
    int flush_rc;                 /* first flusher failure */
    pch_error flush_err;
    uint64_t seq;                 /* clusters handed to the flusher */
    cplace *place;                /* per cluster sequence: file, cluster in file, first row */
    size_t cap_place;
    /* the document list (pj_docs.c): files noted by the caller's walk, documents added */
    pj_docrec *docs;
    size_t n_docs, cap_docs;
    pch_strset doc_index;         /* "path\0<size_t index>" of the first record of each path */
    pj_delta *delta;              /* an incremental commit (pj_sync.c), or NULL */
    uint64_t n_key_shards;        /* key index shards written by this commit (write_key_index) */
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }
static void *flusher_main(void *arg);

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

static int stage_path(pch_vxp_builder *b, pch_buf *out, const char *rel)
{
    pch_buf_clear(out);
    pch_buf_printf(out, "%s/%s", b->stage, rel);
    return out->oom ? PCH_ENOMEM : PCH_OK;
}

int pch_vxp_builder_open(pch_vxp_builder **out, pch_ctx *ctx, const char *root, const pch_vxp_build_options *opts,
                         pch_error *err)
{
    static const pch_vxp_build_options defaults = PCH_VXP_BUILD_OPTIONS_INIT;
    pch_vxp_builder *b;
    pch_buf p;
    int rc;
    *out = NULL;
    if (!opts) opts = &defaults;
    if (opts->version != PCH_VXP_BUILD_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EINVAL, "projection: build options version %u (want %u)", opts->version, PCH_VXP_BUILD_OPTIONS_VERSION);
    if (opts->hot_max_bytes > opts->cold_max_bytes)
        return pch_error_set(err, PCH_EINVAL, "projection: hot threshold %" PRIu64 " above the cold threshold %" PRIu64, opts->hot_max_bytes, opts->cold_max_bytes);
    if (!opts->cluster_bytes || !opts->file_bytes || !opts->pack_bytes || !opts->directory_shard_rows)
        return pch_error_set(err, PCH_EINVAL, "projection: cluster, file, pack and shard sizes must be positive");
    if (opts->frame_bytes > ((uint64_t)1 << 30))
        return pch_error_set(err, PCH_EINVAL, "projection: frame size %" PRIu64 " above 1 GiB", opts->frame_bytes);
    if (opts->zstd_dict_bytes > PCH_VXP_ZSTD_DICT_MAX)
        return pch_error_set(err, PCH_EINVAL, "projection: zstd dictionary size %" PRIu64 " above %u", opts->zstd_dict_bytes, PCH_VXP_ZSTD_DICT_MAX);
    if (opts->frame_rows > ((uint64_t)1 << 20))
        return pch_error_set(err, PCH_EINVAL, "projection: frame rows %" PRIu64 " above 1M", opts->frame_rows);
    if (opts->frame_ratio > 1024)
        return pch_error_set(err, PCH_EINVAL, "projection: frame ratio %" PRIu64 " above 1024", opts->frame_ratio);
    if (opts->partition && (!opts->partition[0] || strchr(opts->partition, '/') || strcmp(opts->partition, ".") == 0 ||
                            strcmp(opts->partition, "..") == 0 || strlen(opts->partition) > 64))
        return pch_error_set(err, PCH_EINVAL, "projection: partition '%s' must be one path segment", opts->partition);
    if (!(b = pch_calloc(ctx, 1, sizeof *b))) return nomem(err);
    b->ctx = ctx;
    b->stage_fd = -1;
    b->o = *opts;
    if (!b->o.partition) b->o.partition = "default";
    if (!b->o.threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        b->o.threads = n < 1 ? 1 : n > 8 ? 8 : (uint32_t)n;
    }
    if (b->o.dedup_min_bytes == PCH_VXP_DEDUP_DEFAULT)
        b->o.dedup_min_bytes = pch_rfile_is_remote(root) ? 0 : PCH_VXP_DEDUP_LOCAL;
    b->t0 = pch_time_mono();
    pch_buf_init(&b->cur_raw, ctx);
    pch_buf_init(&p, ctx);
#define CK(x) do { if ((rc = (x)) < 0) goto fail; } while (0)
    if (pch_rfile_is_remote(root)) {
        /* an object-storage root: the snapshot is built in a local root and uploaded */
        const char *tmp = getenv("TMPDIR");
        pch_buf_printf(&p, "%s/pch-vxp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (p.oom) { rc = nomem(err); goto fail; }
        if (!mkdtemp((char *)p.data)) { rc = pch_error_set_sys(err, PCH_EIO, errno, "mkdtemp %s", (const char *)p.data); goto fail; }
        if (!(b->root = strdup((const char *)p.data))) { rmdir((const char *)p.data); rc = nomem(err); goto fail; }
        pch_buf_clear(&p);
        b->created_root = true;
        CK(pj_remote_open(ctx, root, &b->remote, &b->cur, &b->cur_raw, &b->had_current, err));
        root = b->root;
    } else {
        if (!(b->root = strdup(root))) { rc = nomem(err); goto fail; }
        {
            struct stat sb;
            b->created_root = stat(root, &sb) != 0;
        }
        CK(pch_mkdirs(root, err));
        rc = pj_current_read(ctx, root, &b->cur, &b->cur_raw, err);
        if (rc == PCH_OK) b->had_current = true;
        else if (rc != PCH_ENOTFOUND) goto fail;
    }
    CK(pj_random_id(b->writer_id, 16, err));
    /* snapshot ids sort by creation time: 12 hex digits of ms, then 8 random hex */
    snprintf(b->snapshot_id, sizeof b->snapshot_id, "%012" PRIx64 "-", (uint64_t)pch_time_now_ms());
    CK(pj_random_id(b->snapshot_id + 13, 4, err));
    pch_buf_printf(&p, "%s/staging/%s", root, b->writer_id);
    if (p.oom) { rc = nomem(err); goto fail; }
    {
        char *stage = strdup((const char *)p.data);
        pj_stage_stats ss;
        if (!stage) { rc = nomem(err); goto fail; }
        if ((rc = pj_stage_open(ctx, root, stage, b->writer_id, &b->stage_fd, &ss, err)) < 0) { free(stage); goto fail; }
        b->stage = stage;
        b->st.staging_removed = ss.removed;
        b->st.staging_removed_bytes = ss.removed_bytes;
    }
    {
        static const char *const sub[] = { "blobs", "directories/trajectory", "directories/content", "directories/documents", "directories/keys",
                                           "directories/lanes", "manifests" };
        for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
            CK(stage_path(b, &p, sub[i]) < 0 ? nomem(err) : PCH_OK);
            CK(pch_mkdirs((const char *)p.data, err));
        }
        pch_buf_clear(&p);
        pch_buf_printf(&p, "%s/data/%s", b->stage, b->o.partition);
        CK(p.oom ? nomem(err) : PCH_OK);
        CK(pch_mkdirs((const char *)p.data, err));
    }
    CK(pj_data_dtype(ctx, &b->dt, err));
    CK(pch_vx_builder_new(&b->rows, ctx, b->dt, err));
    CK(pch_json_parser_new(&b->jp, ctx, NULL, err));
    CK(pj_content_new(&b->content, ctx, b->stage, &b->o, err));
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    b->sync_ready = true;
    if (pthread_create(&b->flusher, NULL, flusher_main, b) != 0) { rc = pch_error_set(err, PCH_ENOMEM, "projection: cannot start the flusher thread"); goto fail; }
    b->flusher_running = true;
#undef CK
    pch_buf_dispose(&p);
    snprintf(b->st.snapshot_id, sizeof b->st.snapshot_id, "%s", b->snapshot_id);
    *out = b;
    return PCH_OK;
fail:
    pch_buf_dispose(&p);
    pch_vxp_builder_free(b);
    return rc;
}

void pch_vxp_builder_free(pch_vxp_builder *b)
{
    if (!b) return;
    if (b->flusher_running) {
        pthread_mutex_lock(&b->mu);
        b->flush_rc = b->flush_rc ? b->flush_rc : PCH_ECANCELED;   /* drop queued work */
        b->stop = true;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->flusher, NULL);
    }
    pch_vx_array_free(b->queued);
    if (b->sync_ready) { pthread_mutex_destroy(&b->mu); pthread_cond_destroy(&b->cv); }
    free(b->place);
    pch_vx_writer_free(b->w);
    pj_content_free(b->content);
    pch_vx_builder_free(b->rows);
    pch_vx_dtype_free(b->dt);
    pch_json_parser_free(b->jp);
    /* unpublished work only; a failed first build leaves no empty root behind (rmdir
    ** fails on anything else) */
    if (b->root) pj_stage_close(b->ctx, b->root, b->stage, b->stage_fd, !b->committed && !b->had_current);
    if (b->remote) {   /* the local staging root of an object-storage root goes whole */
        pch_error e;
        if (b->root) (void)pch_remove_tree(b->root, &e);
        pj_remote_free(b->remote);
    } else if (!b->committed && b->root && b->created_root) {
        rmdir(b->root);
    }
    for (size_t i = 0; i < b->n_d; i++) {
        dentry *e = &b->d[i];
        free(e->source_id); free(e->run_key); free(e->traj_key); free(e->session_id);
        free(e->parent_run); free(e->parent_traj); free(e->doc_path);
    }
    for (size_t i = 0; i < b->n_lanes; i++) {
        for (size_t k = 0; k < b->lanes[i].n_encs; k++) free((void *)(uintptr_t)b->lanes[i].encs[k].name);
        free(b->lanes[i].encs);
        free(b->lanes[i].path);
    }
    free(b->lanes);
    pch_free(b->ctx, b->d);
    for (size_t i = 0; i < b->n_files; i++) {
        free(b->files[i].crows); free(b->files[i].coff); free(b->files[i].clen); free(b->files[i].cdig);
        free(b->files[i].rdig);
    }
    pch_free(b->ctx, b->files);
    pch_buf_dispose(&b->cur_raw);
    pj_docs_free(b->docs, b->n_docs);
    pch_strset_dispose(b->ctx, &b->doc_index);
    free(b->stage);
    free(b->root);
    pch_free(b->ctx, b);
}

void pj_builder_delta(pch_vxp_builder *b, pj_delta *d) { b->delta = d; }
void pj_builder_parent_blobs(pch_vxp_builder *b, pj_blobs *parent) { pj_content_parent(b->content, parent); }

const pj_current *pj_builder_parent(const pch_vxp_builder *b, bool *had)
{
    *had = b->had_current;
    return &b->cur;
}

/* A zeroed entry at the end of b's directory (NULL: out of memory). */
static dentry *dentry_push(pch_vxp_builder *b)
{
    dentry *e;
    if (b->n_d == b->cap_d) {
        size_t nc = b->cap_d ? b->cap_d * 2 : 1024;
        dentry *nd = pch_realloc(b->ctx, b->d, nc * sizeof *nd);
        if (!nd) return NULL;
        b->d = nd;
        b->cap_d = nc;
    }
    e = &b->d[b->n_d++];
    memset(e, 0, sizeof *e);
    return e;
}

/* A directory entry with v's keys and totals (its place is set by the caller). */
static int entry_from_view(dentry *e, const pj_entry_view *v)
{
    e->logical = v->logical;
    e->steps = v->steps;
    e->calls = v->calls;
    e->has_ts = v->has_ts;
    e->min_ts = v->min_ts;
    e->max_ts = v->max_ts;
    if (!(e->source_id = xstrdup(v->source_id)) || !(e->run_key = xstrdup(v->run_key)) || !(e->traj_key = xstrdup(v->traj_key)) ||
        !(e->doc_path = xstrdup(v->doc_path)) || (v->session_id && !(e->session_id = xstrdup(v->session_id))) ||
        (v->parent_run && !(e->parent_run = xstrdup(v->parent_run))) || (v->parent_traj && !(e->parent_traj = xstrdup(v->parent_traj))))
        return PCH_ENOMEM;
    return PCH_OK;
}

int pj_builder_carry(pch_vxp_builder *b, const pj_entry_view *v, const char *file_id, pch_error *err)
{
    dentry *e;
    if (strlen(file_id) != 32) return pch_error_set(err, PCH_EINVAL, "projection: a carried entry needs its file id");
    if (!(e = dentry_push(b))) return nomem(err);
    e->carried = true;
    e->file = UINT32_MAX;
    memcpy(e->fid, file_id, 33);
    e->cluster = v->cluster;
    e->row = v->row;
    return entry_from_view(e, v) < 0 ? nomem(err) : PCH_OK;
}

/* A new record at the end of b's document list, indexed by its path (the first record of a
** path keeps the index entry). */
static pj_docrec *doc_push(pch_vxp_builder *b, const char *path)
{
    pj_docrec *r;
    size_t n = strlen(path), idx = b->n_docs;
    char *key;
    if (b->n_docs == b->cap_docs) {
        size_t nc = b->cap_docs ? b->cap_docs * 2 : 256;
        pj_docrec *nd = realloc(b->docs, nc * sizeof *nd);
        if (!nd) return NULL;
        b->docs = nd;
        b->cap_docs = nc;
    }
    r = &b->docs[b->n_docs];
    memset(r, 0, sizeof *r);
    if (!(r->path = strdup(path))) return NULL;
    if (!(key = pch_malloc(b->ctx, n + 1 + sizeof idx))) { free(r->path); return NULL; }
    memcpy(key, path, n + 1);
    memcpy(key + n + 1, &idx, sizeof idx);
    int added = pch_strset_take(b->ctx, &b->doc_index, key);
    if (added != 1) pch_free(b->ctx, key);
    if (added < 0) { free(r->path); return NULL; }
    r->mtime_ns = -1;
    r->state = PJ_DOC_REJECTED;      /* until add_doc projects it */
    b->n_docs++;
    return r;
}

/* The first record of path in b's document list, or NULL. */
static pj_docrec *doc_find(pch_vxp_builder *b, const char *path)
{
    const char *k = pch_strset_find(&b->doc_index, path);
    size_t idx;
    if (!k) return NULL;
    memcpy(&idx, k + strlen(k) + 1, sizeof idx);
    return &b->docs[idx];
}

int pch_vxp_builder_note_file(pch_vxp_builder *b, const char *rel, uint64_t bytes, int64_t mtime_ns, pch_error *err)
{
    pj_docrec *r;
    if (b->committed) return pch_error_set(err, PCH_EINVAL, "projection: builder already committed");
    if (!rel || !*rel) return pch_error_set(err, PCH_EINVAL, "projection: a noted file needs its relative path");
    if (!(r = doc_push(b, rel))) return nomem(err);
    r->bytes = bytes;
    r->mtime_ns = mtime_ns;
    return PCH_OK;
}

static int file_open(pch_vxp_builder *b, pch_error *err)
{
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    pch_buf p;
    dfile *f;
    int rc;
    if (b->n_files == b->cap_files) {
        size_t nc = b->cap_files ? b->cap_files * 2 : 8;
        dfile *nf = pch_realloc(b->ctx, b->files, nc * sizeof *nf);
        if (!nf) return nomem(err);
        b->files = nf;
        b->cap_files = nc;
    }
    f = &b->files[b->n_files];
    memset(f, 0, sizeof *f);
    PCH_TRY(pj_random_id(f->id, 16, err));
    wo.zone_len = 256;   /* zone statistics every 256 trajectories on every scalar lane (§14.1) */
    wo.threads = b->o.threads;
    wo.frame_bytes = (uint32_t)b->o.frame_bytes;   /* a chunk's rows are whole trajectories */
    wo.zstd_dict_bytes = (uint32_t)b->o.zstd_dict_bytes;
    wo.frame_rows = b->o.frame_bytes ? (uint32_t)b->o.frame_rows : 0;   /* frames by rows too */
    wo.frame_row_ratio = b->o.frame_bytes ? (uint32_t)b->o.frame_ratio : 0;   /* small documents' frames */
    /* clusters of PJ_PLAIN_OFFSETS_CLUSTER or more hold a thousand trajectories and more a
    ** chunk: their lanes' per-trajectory offsets stay plain, so a point read takes two of them
    ** instead of a FastLanes block; in 4 MiB clusters the compressor mostly keeps them plain
    ** already, and where it does not (many small trajectories: the report's multi-agent kind)
    ** forcing it cost 15 % of the bytes (docs/vortex-projection.md §3) */
    wo.plain_offsets = wo.frame_rows && b->o.cluster_bytes >= PJ_PLAIN_OFFSETS_CLUSTER;
    wo.fsst_memo = b->fsst_memo;
    wo.fsst_memo_len = sizeof b->fsst_memo / sizeof *b->fsst_memo;
    pch_buf_init(&p, b->ctx);
    pch_buf_printf(&p, "%s/data/%s/%s.vortex", b->stage, b->o.partition, f->id);
    if (p.oom) { pch_buf_dispose(&p); return nomem(err); }
    rc = pch_vx_writer_open_path(&b->w, b->ctx, b->dt, (const char *)p.data, &wo, err);
    pch_buf_dispose(&p);
    PCH_TRY(rc);
    b->n_files++;
    return PCH_OK;
}

static int lane_add(pch_vxp_builder *b, const pch_vx_lane_report *r, pch_error *err)
{
    lane_acc *l = NULL;
    for (size_t i = 0; i < b->n_lanes; i++) if (strcmp(b->lanes[i].path, r->path) == 0) l = &b->lanes[i];
    if (!l) {
        lane_acc *nl = realloc(b->lanes, (b->n_lanes + 1) * sizeof *nl);
        if (!nl) return nomem(err);
        b->lanes = nl;
        l = &b->lanes[b->n_lanes++];
        memset(l, 0, sizeof *l);
        if (!(l->path = strdup(r->path))) return nomem(err);
    }
    /* one entry per encoding over every data file: counts and dictionary values are summed
    ** (the manifest's lane list does not grow with the number of files) */
    for (size_t k = 0; k < r->n_encs; k++) {
        size_t j = 0;
        while (j < l->n_encs && strcmp(l->encs[j].name, r->encs[k].name) != 0) j++;
        if (j == l->n_encs) {
            pch_vx_enc_count *ne = realloc(l->encs, (l->n_encs + 1) * sizeof *ne);
            char *name = strdup(r->encs[k].name);
            if (ne) l->encs = ne;
            if (!ne || !name) { free(name); return nomem(err); }
            l->encs[l->n_encs].name = name;
            l->encs[l->n_encs++].n = 0;
        }
        l->encs[j].n += r->encs[k].n;
    }
    if (r->dict_layout) { l->dict_layout = 1; l->dict_values += r->dict_values; }
    l->logical += r->logical_bytes;
    l->stored += r->stored_bytes;
    l->chunks += r->chunks;
    l->seconds += r->encode_seconds;
    return PCH_OK;
}

static int file_seal(pch_vxp_builder *b, pch_error *err)
{
    dfile *f;
    pch_buf p;
    int rc;
    if (!b->w) return PCH_OK;
    f = &b->files[b->n_files - 1];
    PCH_TRY(pch_vx_writer_finish(b->w, err));
    for (size_t i = 0; i < pch_vx_writer_n_lanes(b->w); i++) {
        pch_vx_lane_report r;
        if (pch_vx_writer_lane(b->w, i, &r) == PCH_OK) PCH_TRY(lane_add(b, &r, err));
    }
    pch_vx_writer_free(b->w);
    b->w = NULL;
    pch_buf_init(&p, b->ctx);
    pch_buf_printf(&p, "%s/data/%s/%s.vortex", b->stage, b->o.partition, f->id);
    if (p.oom) { pch_buf_dispose(&p); return nomem(err); }
    /* the file's digest, each cluster's and the tail's, in one read: the parts are the
    ** clusters' ranges and the tail after them */
    f->tail_off = f->clusters ? f->coff[f->clusters - 1] + f->clen[f->clusters - 1] : 4;
    {
        uint64_t *cuts = malloc(((size_t)f->clusters + 1) * sizeof *cuts);
        char (*dig)[80] = malloc(((size_t)f->clusters + 1) * sizeof *dig);
        if (!cuts || !dig) rc = nomem(err);
        else {
            for (uint32_t c = 0; c < f->clusters; c++) cuts[c] = f->coff[c];
            cuts[f->clusters] = f->tail_off;
            rc = pj_file_digest_parts((const char *)p.data, f->digest, &f->bytes, cuts, (size_t)f->clusters + 1, dig, err);
        }
        if (rc == PCH_OK) {
            memcpy(f->tail_dig, dig[f->clusters], sizeof f->tail_dig);
            free(f->cdig);
            f->cdig = dig;
            dig = NULL;
        }
        free(cuts);
        free(dig);
    }
    if (rc == PCH_OK) {             /* one digest per segment: a read checks what it decodes */
        pch_buf t;
        pch_buf_init(&t, b->ctx);
        pch_buf_printf(&t, "%s/data/%s/%s.segments", b->stage, b->o.partition, f->id);
        rc = t.oom ? nomem(err) : pj_segtab_write(b->ctx, (const char *)p.data, f->tail_off, f->rows, f->rdig, (const char *)t.data,
                                                        f->seg_dig, &f->seg_bytes, err);
        pch_buf_dispose(&t);
    }
    pch_buf_dispose(&p);
    b->st.data_bytes += f->bytes;
    return rc;
}

/* Do rows r and r + 1 of text lane l hold the same value? */
static bool next_same(const pch_vx_array *l, uint64_t r)
{
    const char *p, *q;
    size_t pn, qn;
    return pch_vx_row_bytes(l, r, &p, &pn) && pch_vx_row_bytes(l, r + 1, &q, &qn) && pn == qn && memcmp(p, q, pn) == 0;
}

/* Each row's weight for the writer's frames (pch_vx_writer_write_rows): the logical bytes of
** its document's rows in the cluster — a document's trajectories are consecutive rows and a
** point read of it reads them all, so a small document gets frames of its own size, while
** the small subagents of a large one (the report's multi-agent kind) do not cut frames. */
static int doc_weights(const pch_vx_array *a, uint64_t *wt, pch_error *err)
{
    pj_rows rows;
    PCH_TRY(pj_rows_bind(&rows, a, err));
    for (uint64_t r = 0, first = 0; r < a->len; r++) {
        wt[r] = pch_vx_row_uint(rows.l[PJ_SUMMARY_LOGICAL_BYTES], r);
        if (r + 1 < a->len && next_same(rows.l[PJ_ID_DOC_PATH], r) && next_same(rows.l[PJ_ID_SOURCE_ID], r))
            continue;                   /* row r + 1 is of the same document */
        uint64_t sum = 0;
        for (uint64_t k = first; k <= r; k++) sum += wt[k];
        for (uint64_t k = first; k <= r; k++) wt[k] = sum;
        first = r + 1;
    }
    return PCH_OK;
}

/* Flusher thread side: write one cluster as one chunk of every lane, roll files. */
static int write_cluster(pch_vxp_builder *b, pch_vx_array *a, uint64_t seq, bool keep_file, pch_error *err)
{
    int rc;
    if (!b->w) PCH_TRY(file_open(b, err));
    if (seq >= b->cap_place) {
        size_t nc = b->cap_place ? b->cap_place * 2 : 256;
        cplace *np = realloc(b->place, nc * sizeof *np);
        if (!np) return nomem(err);
        b->place = np;
        b->cap_place = nc;
    }
    b->place[seq].file = (uint32_t)(b->n_files - 1);
    b->place[seq].cluster = b->files[b->n_files - 1].clusters;
    b->place[seq].first_row = b->files[b->n_files - 1].rows;
    {
        dfile *f = &b->files[b->n_files - 1];
        uint64_t before = pch_vx_writer_file_bytes(b->w);
        uint64_t *nc = realloc(f->crows, ((size_t)f->clusters + 1) * sizeof *nc);
        if (nc) f->crows = nc;
        uint64_t *no = nc ? realloc(f->coff, ((size_t)f->clusters + 1) * sizeof *no) : NULL;
        if (no) f->coff = no;
        uint64_t *nl = no ? realloc(f->clen, ((size_t)f->clusters + 1) * sizeof *nl) : NULL;
        if (nl) f->clen = nl;
        uint8_t *nd = nl ? realloc(f->rdig, ((size_t)f->rows + a->len) * 32 + 1) : NULL;
        if (nd) f->rdig = nd;
        if (!nd) return nomem(err);
        for (uint64_t r = 0; r < a->len; r++) pch_vx_row_digest(a, r, f->rdig + (size_t)(f->rows + r) * 32);
        {
            uint64_t *wt = malloc(((size_t)a->len + 1) * sizeof *wt);
            if (!wt) return nomem(err);
            rc = doc_weights(a, wt, err);
            if (rc == PCH_OK) rc = pch_vx_writer_write_rows(b->w, a, wt, err);
            free(wt);
        }
        PCH_TRY(rc);
        f->crows[f->clusters] = a->len;
        f->coff[f->clusters] = before;
        f->clen[f->clusters] = pch_vx_writer_file_bytes(b->w) - before;
    }
    b->files[b->n_files - 1].rows += a->len;
    b->files[b->n_files - 1].clusters++;
    b->st.clusters++;
    if (!keep_file && pch_vx_writer_file_bytes(b->w) >= b->o.file_bytes) PCH_TRY(file_seal(b, err));
    return PCH_OK;
}

static void *flusher_main(void *arg)
{
    pch_vxp_builder *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        pch_vx_array *a;
        uint64_t seq;
        bool keep;
        while (!b->queued && !b->stop) pthread_cond_wait(&b->cv, &b->mu);
        if (!b->queued) break;
        a = b->queued;
        seq = b->queued_seq;
        keep = b->queued_keep;
        pthread_mutex_unlock(&b->mu);
        {
            pch_error e;
            int rc;
            pch_error_clear(&e);
            rc = b->flush_rc ? b->flush_rc : write_cluster(b, a, seq, keep, &e);
            pch_vx_array_free(a);
            pthread_mutex_lock(&b->mu);
            if (rc < 0 && !b->flush_rc) { b->flush_rc = rc; b->flush_err = e; }
            b->queued = NULL;
            pthread_cond_broadcast(&b->cv);
        }
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* Hand the built rows to the flusher (waits while it still has the previous one queued).
** keep_file: the next cluster continues a paged trajectory, so the file must not roll
** (a trajectory's pages are consecutive rows of one data file). */
static int cluster_flush(pch_vxp_builder *b, bool keep_file, pch_error *err)
{
    pch_vx_array *a = NULL;
    int rc;
    if (!b->cluster_rows) return PCH_OK;
    PCH_TRY(pch_vx_builder_finish(b->rows, &a, err));
    pthread_mutex_lock(&b->mu);
    while (b->queued && !b->flush_rc) pthread_cond_wait(&b->cv, &b->mu);
    rc = b->flush_rc;
    if (rc < 0) {
        if (err) *err = b->flush_err;
        pthread_mutex_unlock(&b->mu);
        pch_vx_array_free(a);
        return rc;
    }
    b->queued = a;
    b->queued_keep = keep_file;
    b->queued_seq = b->seq++;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    b->cluster_rows = 0;
    b->cluster_logical = 0;
    return PCH_OK;
}

/* Wait until the flusher has written everything queued; stop it. */
static int flusher_stop(pch_vxp_builder *b, pch_error *err)
{
    int rc;
    if (!b->flusher_running) return PCH_OK;
    pthread_mutex_lock(&b->mu);
    b->stop = true;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->flusher, NULL);
    b->flusher_running = false;
    rc = b->flush_rc;
    if (rc < 0 && err) *err = b->flush_err;
    return rc;
}

/* pj_model_append's row callback: count the row into the open cluster; between two pages of
** a huge trajectory, close the cluster once it reached its target (§7.2: the pages of one
** trajectory are clusters of their own, so a point read decodes one page at a time). */
static int row_done(void *payload, const pj_traj_info *page, bool more, pch_error *err)
{
    pch_vxp_builder *b = payload;
    b->cluster_rows++;
    b->cluster_logical += page->logical_bytes;
    if (more && b->cluster_logical >= b->o.cluster_bytes) return cluster_flush(b, true, err);
    return PCH_OK;
}

/* After each document: a document's tree stays in one cluster, which closes once it holds its
** target size; progress once a second. */
static int doc_done(pch_vxp_builder *b, pch_error *err)
{
    if (b->cluster_logical >= b->o.cluster_bytes) PCH_TRY(cluster_flush(b, false, err));
    if (b->o.progress) {
        double now = pch_time_mono();
        if (now - b->last_progress >= 1.0) {
            b->last_progress = now;
            fprintf(stderr, "\rbuild: %" PRIu64 " documents, %" PRIu64 " trajectories, %.1f MiB in, %.1f s   ",
                    b->st.documents, b->st.trajectories, (double)b->st.input_bytes / 1048576.0, now - b->t0);
        }
    }
    return PCH_OK;
}

int pch_vxp_builder_add_doc(pch_vxp_builder *b, const pch_atif_doc *doc, size_t input_bytes, pch_error *err)
{
    size_t n = pch_atif_doc_count(doc);
    if (b->committed) return pch_error_set(err, PCH_EINVAL, "projection: builder already committed");
    for (size_t i = 0; i < n; i++) {   /* §16.1: nesting the reader can re-nest */
        const pch_atif_trajectory *t = pch_atif_doc_get(doc, i);
        unsigned depth = 0;
        while (t && t->parent >= 0 && depth <= PJ_MAX_SUBAGENT_DEPTH) { t = pch_atif_doc_get(doc, (size_t)t->parent); depth++; }
        if (depth > PJ_MAX_SUBAGENT_DEPTH)
            return pch_error_set(err, PCH_ELIMIT, "%s: subagent trajectories nested deeper than %d levels",
                                 pch_atif_doc_get(doc, 0)->doc_path ? pch_atif_doc_get(doc, 0)->doc_path : "document", PJ_MAX_SUBAGENT_DEPTH);
    }
    pch_vxp_build_stats before = b->st;
    for (size_t i = 0; i < n; i++) {
        const pch_atif_trajectory *t = pch_atif_doc_get(doc, i);
        pj_traj_info info;
        dentry *e;
        uint64_t seq0 = b->seq, row0 = b->cluster_rows;   /* where page 0 lands */
        PCH_TRY(pj_model_append(b->rows, b->content, b->jp, doc, i, &b->o, row_done, b, &info, err));
        if (!(e = dentry_push(b))) return nomem(err);
        e->source_id = xstrdup(t->source_id ? t->source_id : "");
        e->run_key = xstrdup(t->run_key);
        e->traj_key = xstrdup(t->trajectory_key);
        e->session_id = xstrdup(t->session_id);
        e->doc_path = xstrdup(t->doc_path ? t->doc_path : "");
        if (t->parent >= 0) {
            const pch_atif_trajectory *p = pch_atif_doc_get(doc, (size_t)t->parent);
            e->parent_run = xstrdup(p->run_key);
            e->parent_traj = xstrdup(p->trajectory_key);
            if (!e->parent_run || !e->parent_traj) return nomem(err);
        }
        if (!e->source_id || !e->run_key || !e->traj_key || !e->doc_path || (t->session_id && !e->session_id)) return nomem(err);
        e->seq = seq0;
        e->row_in_cluster = row0;
        e->logical = info.logical_bytes;
        e->steps = info.steps;
        e->calls = info.calls;
        e->has_ts = info.has_ts;
        e->min_ts = info.min_ts;
        e->max_ts = info.max_ts;
        b->st.trajectories++;
        b->st.steps += info.steps;
        b->st.tool_calls += info.calls;
        b->st.results += info.results;
        b->st.tokens += info.tokens;
        b->st.logical_bytes += info.logical_bytes;
    }
    b->st.documents++;
    b->st.input_bytes += input_bytes;
    {
        /* the document list: what this document holds, and its bytes' digest when the import
        ** kept one (the record its noted file got, if the caller noted it) */
        const pch_atif_trajectory *t0 = n ? pch_atif_doc_get(doc, 0) : NULL;
        const char *path = t0 && t0->doc_path ? t0->doc_path : "";
        pj_docrec *r = b->n_docs && strcmp(b->docs[b->n_docs - 1].path, path) == 0 ? &b->docs[b->n_docs - 1] : NULL;
        uint64_t nbytes = 0;
        if (!r) r = doc_find(b, path);   /* a noted file's record, or a document seen before */
        if (!r && !(r = doc_push(b, path))) return nomem(err);
        r->state = PJ_DOC_PROJECTED;
        r->has_digest = pch_atif_doc_source(doc, r->digest, &nbytes);
        if (r->has_digest) r->bytes = nbytes;
        r->trajectories = (uint32_t)n;
        r->steps = b->st.steps - before.steps;
        r->calls = b->st.tool_calls - before.tool_calls;
        r->results = b->st.results - before.results;
        r->tokens = b->st.tokens - before.tokens;
        r->logical = b->st.logical_bytes - before.logical_bytes;
    }
    return doc_done(b, err);
}

/* Compaction (§12.3): row `row` of a decoded cluster of the parent snapshot (root, lanes bound
** in r; root's dtype must be the builder's) appended as it is, without rebuilding or parsing
** its document: page 0 of trajectory v (a directory entry with v's keys and totals goes with
** it), or with v NULL a continuation page of the trajectory copied last; more: further pages
** of it follow (the cluster may close between pages, as a build closes it). */
int pj_builder_copy_row(pch_vxp_builder *b, const pch_vx_array *root, const pj_rows *r, uint64_t row,
                        const pj_entry_view *v, bool more, pch_error *err)
{
    pj_traj_info page;
    if (b->committed) return pch_error_set(err, PCH_EINVAL, "projection: builder already committed");
    memset(&page, 0, sizeof page);
    page.logical_bytes = pch_vx_row_uint(r->l[PJ_SUMMARY_LOGICAL_BYTES], row);
    if (v) {
        dentry *e;
        if (!(e = dentry_push(b))) return nomem(err);
        e->seq = b->seq;                 /* where the row lands */
        e->row_in_cluster = b->cluster_rows;
        if (entry_from_view(e, v) < 0) return nomem(err);
        b->st.trajectories++;
        b->st.steps += v->steps;
        b->st.tool_calls += v->calls;
        b->st.logical_bytes += v->logical;
    }
    PCH_TRY(pch_vx_builder_append_range(b->rows, root, row, row + 1, err));
    return row_done(b, &page, more, err);
}

const pch_vx_dtype *pj_builder_row_dtype(const pch_vxp_builder *b) { return b->dt; }

/* Compaction: the rows of one document were copied (input_bytes: its ATIF bytes). */
int pj_builder_copied_doc(pch_vxp_builder *b, uint64_t input_bytes, pch_error *err)
{
    b->st.documents++;
    b->st.input_bytes += input_bytes;
    return doc_done(b, err);
}

/* The lane report: one row per lane — its path, the encodings its chunks got over every
** file ("name xN, ..."), chunks, logical and stored bytes, encode seconds — written as
** directories/lanes/<snapshot-id>.vortex (PJ_LANES_SCHEMA) and listed in the manifest's
** "lane_report" (appended to json) with its digest. */
static int write_lane_report(pch_vxp_builder *b, pch_buf *json, pch_error *err)
{
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *vb = NULL;
    pch_vx_writer *w = NULL;
    pch_vx_array *a = NULL;
    pch_buf p, t;
    char rel[128], digest[80];
    uint64_t bytes = 0;
    int rc;
    snprintf(rel, sizeof rel, "directories/lanes/%s.vortex", b->snapshot_id);
    pch_buf_init(&p, b->ctx);
    pch_buf_init(&t, b->ctx);
    wo.zone_len = 0;
#define LK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    LK(stage_path(b, &p, rel) < 0 ? nomem(err) : PCH_OK);
    LK(pch_vx_dtype_parse(&dt, b->ctx, PJ_LANES_SCHEMA, err));
    LK(pch_vx_builder_new(&vb, b->ctx, dt, err));
    for (size_t i = 0; i < b->n_lanes; i++) {
        const lane_acc *l = &b->lanes[i];
        pch_buf_clear(&t);
        for (size_t k = 0; k < l->n_encs; k++) pch_buf_printf(&t, "%s%s x%" PRIu64, k ? ", " : "", l->encs[k].name, l->encs[k].n);
        if (l->dict_layout) pch_buf_printf(&t, "%s[vortex.dict layout: %" PRIu64 " values]", l->n_encs ? " " : "", l->dict_values);
        LK(t.oom ? nomem(err) : PCH_OK);
        LK(pch_vx_builder_append_bytes(pch_vx_builder_child(vb, 0), l->path, strlen(l->path), err));
        LK(pch_vx_builder_append_bytes(pch_vx_builder_child(vb, 1), t.data ? (const char *)t.data : "", t.len, err));
        LK(pch_vx_builder_append_uint(pch_vx_builder_child(vb, 2), l->chunks, err));
        LK(pch_vx_builder_append_uint(pch_vx_builder_child(vb, 3), l->logical, err));
        LK(pch_vx_builder_append_uint(pch_vx_builder_child(vb, 4), l->stored, err));
        LK(pch_vx_builder_append_float(pch_vx_builder_child(vb, 5), l->seconds, err));
        LK(pch_vx_builder_append_valid(vb, err));
    }
    LK(pch_vx_builder_finish(vb, &a, err));
    LK(pch_vx_writer_open_path(&w, b->ctx, dt, (const char *)p.data, &wo, err));
    LK(pch_vx_writer_write(w, a, err));
    LK(pch_vx_writer_finish(w, err));
    LK(pj_file_digest((const char *)p.data, digest, &bytes, err));
    b->st.directory_bytes += bytes;
    pch_buf_printf(json, "{\"path\":\"%s\",\"bytes\":%" PRIu64 ",\"digest\":\"%s\",\"rows\":%zu}", rel, bytes, digest, b->n_lanes);
    if (json->oom) rc = nomem(err);
#undef LK
done:
    pch_vx_writer_free(w);
    pch_vx_array_free(a);
    pch_vx_builder_free(vb);
    pch_vx_dtype_free(dt);
    pch_buf_dispose(&p);
    pch_buf_dispose(&t);
    return rc;
}

static int cmp_key(const dentry *a, const dentry *b)
{
    int c = strcmp(a->source_id, b->source_id);
    if (!c) c = strcmp(a->run_key, b->run_key);
    if (!c) c = strcmp(a->traj_key, b->traj_key);
    return c;
}
static int cmp_dentry(const void *a, const void *b) { return cmp_key(a, b); }

/* The key index of a base directory (pj_int.h PJ_KEY_INDEX_SCHEMA): rows (hash, shard) sorted
** and unique, in shards of at least KEY_INDEX_ROWS rows and at most KEY_INDEX_SHARDS of them,
** each manifest entry with the first and last hash (16 hex digits). Without it a lookup by
** trajectory key, producer id or session id reads every directory shard (5.2 MB on 50,000
** `scaled` documents). */
#define KEY_INDEX_ROWS 1024u
#define KEY_INDEX_SHARDS 32u
typedef struct keyrow { uint64_t hash; uint32_t shard; } keyrow;
static int cmp_keyrow(const void *a, const void *b)
{
    const keyrow *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return (x->shard > y->shard) - (x->shard < y->shard);
}

static int write_key_index(pch_vxp_builder *b, keyrow *kr, size_t n, pch_buf *json, pch_error *err)
{
    pch_vx_dtype *dt = NULL;
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    pch_buf p;
    size_t m = 0, per;
    int rc = PCH_OK;
    qsort(kr, n, sizeof *kr, cmp_keyrow);
    for (size_t i = 0; i < n; i++)
        if (!m || kr[i].hash != kr[m - 1].hash || kr[i].shard != kr[m - 1].shard) kr[m++] = kr[i];
    per = (m + KEY_INDEX_SHARDS - 1) / KEY_INDEX_SHARDS;
    if (per < KEY_INDEX_ROWS) per = KEY_INDEX_ROWS;
    PCH_TRY(pch_vx_dtype_parse(&dt, b->ctx, PJ_KEY_INDEX_SCHEMA, err));
    pch_buf_init(&p, b->ctx);
    wo.zone_len = 0;
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    for (size_t s0 = 0, k = 0; s0 < m; s0 += per, k++) {
        size_t s1 = s0 + per < m ? s0 + per : m;
        pch_vx_builder *vb = NULL;
        pch_vx_writer *w = NULL;
        pch_vx_array *a = NULL;
        char rel[128], digest[80];
        uint64_t bytes;
        snprintf(rel, sizeof rel, "directories/keys/%s-%zu.vortex", b->snapshot_id, k);
        rc = pch_vx_builder_new(&vb, b->ctx, dt, err);
        for (size_t i = s0; i < s1 && rc == PCH_OK; i++) {
            rc = pch_vx_builder_append_uint(pch_vx_builder_child(vb, 0), kr[i].hash, err);
            if (rc == PCH_OK) rc = pch_vx_builder_append_uint(pch_vx_builder_child(vb, 1), kr[i].shard, err);
            if (rc == PCH_OK) rc = pch_vx_builder_append_valid(vb, err);
        }
        if (rc == PCH_OK) rc = pch_vx_builder_finish(vb, &a, err);
        if (rc == PCH_OK) rc = stage_path(b, &p, rel) < 0 ? nomem(err) : PCH_OK;
        if (rc == PCH_OK) rc = pch_vx_writer_open_path(&w, b->ctx, dt, (const char *)p.data, &wo, err);
        if (rc == PCH_OK) rc = pch_vx_writer_write(w, a, err);
        if (rc == PCH_OK) rc = pch_vx_writer_finish(w, err);
        pch_vx_writer_free(w);
        pch_vx_array_free(a);
        pch_vx_builder_free(vb);
        CK(rc);
        CK(pj_file_digest((const char *)p.data, digest, &bytes, err));
        b->st.directory_bytes += bytes;
        pch_buf_printf(json, "%s{\"path\":\"%s\",\"bytes\":%" PRIu64 ",\"digest\":\"%s\",\"rows\":%zu,"
                       "\"hash_lo\":\"%016" PRIx64 "\",\"hash_hi\":\"%016" PRIx64 "\"}",
                       k ? "," : "", rel, bytes, digest, s1 - s0, kr[s0].hash, kr[s1 - 1].hash);
        b->n_key_shards = k + 1;
    }
#undef CK
done:
    if (rc == PCH_OK && json->oom) rc = nomem(err);
    pch_vx_dtype_free(dt);
    pch_buf_dispose(&p);
    return rc;
}

/* Sorted trajectory directory shards (§10.4); fence keys go to the manifest. An incremental
** commit writes one L0 run instead (every entry and tombstone in one file, "level":0): its
** memory estimate (entries and key bytes, what a reader holds to merge it) goes with it. */
static int write_directory(pch_vxp_builder *b, pch_buf *json, pch_buf *kjson, uint64_t *shards_out, pch_error *err)
{
    const bool l0 = b->delta && !b->delta->compaction;
    keyrow *kr = NULL;
    size_t n_kr = 0;
    const uint64_t shard_rows = l0 ? (uint64_t)SIZE_MAX : b->o.directory_shard_rows;
    const uint64_t revision = b->delta ? b->delta->revision : 0;
    pch_vx_dtype *dt = NULL;
    pch_vx_builder *vb = NULL;
    pch_vx_write_options wo = PCH_VX_WRITE_OPTIONS_INIT;
    pch_buf p;
    int rc = PCH_OK;
    qsort(b->d, b->n_d, sizeof *b->d, cmp_dentry);
    for (size_t i = 1; i < b->n_d; i++)
        if (cmp_key(&b->d[i - 1], &b->d[i]) == 0)
            return pch_error_set(err, PCH_EINVAL, "projection: trajectory key (%s, %s, %s) appears twice (%s and %s)",
                                 b->d[i].source_id, b->d[i].run_key, b->d[i].traj_key, b->d[i - 1].doc_path, b->d[i].doc_path);
    /* the base directory's key index: up to three lookup strings a trajectory; only for three
    ** shards or more (one or two shards cost a lookup no more than an index shard and one of
    ** them: on object storage the index would be a request more) */
    if (!l0 && b->n_d > 2 * shard_rows && !(kr = pch_malloc(b->ctx, b->n_d * 3 * sizeof *kr))) return nomem(err);
    PCH_TRY(pch_vx_dtype_parse(&dt, b->ctx, DIR_SCHEMA, err));
    pch_buf_init(&p, b->ctx);
    wo.zone_len = 0;     /* a shard is read whole, never pruned: zone maps would be bytes every point read pays */
    wo.threads = b->o.threads;   /* the commit waits on the directory: its lanes in parallel
                                 ** (the file is the same for any number of threads) */
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    CK(pch_vx_builder_new(&vb, b->ctx, dt, err));
    for (size_t s = 0, shard = 0; s < b->n_d || (s == 0 && b->n_d == 0 && shard == 0); shard++) {
        size_t end = shard_rows < b->n_d - s ? s + (size_t)shard_rows : b->n_d;
        uint64_t mem = 0;
        pch_vx_array *a = NULL;
        pch_vx_writer *w = NULL;
        char rel[128], digest[80];
        uint64_t bytes;
        if (l0) snprintf(rel, sizeof rel, "directories/trajectory/%s-l0.vortex", b->snapshot_id);
        else snprintf(rel, sizeof rel, "directories/trajectory/%s-%zu.vortex", b->snapshot_id, shard);
        for (size_t i = s; i < end; i++) {
            const dentry *e = &b->d[i];
            const dfile *f = e->deleted || e->carried ? NULL : &b->files[e->file];
            mem += 96 + strlen(e->source_id) + strlen(e->run_key) + strlen(e->traj_key) + strlen(e->doc_path) +
                   (e->session_id ? strlen(e->session_id) : 0);
            pch_vx_builder *c[19];
            for (uint32_t k = 0; k < 19; k++) c[k] = pch_vx_builder_child(vb, k);
            const bool sess_run = e->session_id && strcmp(e->session_id, e->run_key) == 0;
            CK(pch_vx_builder_append_bytes(c[0], e->source_id, strlen(e->source_id), err));
            CK(pch_vx_builder_append_bytes(c[1], e->run_key, strlen(e->run_key), err));
            CK(pj_key_is_derived(e->traj_key, e->run_key, e->doc_path) ? pch_vx_builder_append_null(c[2], err)
                                                                    : pch_vx_builder_append_bytes(c[2], e->traj_key, strlen(e->traj_key), err));
            CK(e->session_id && !sess_run ? pch_vx_builder_append_bytes(c[3], e->session_id, strlen(e->session_id), err)
                                          : pch_vx_builder_append_null(c[3], err));
            CK(e->parent_run ? pch_vx_builder_append_bytes(c[4], e->parent_run, strlen(e->parent_run), err) : pch_vx_builder_append_null(c[4], err));
            CK(e->parent_traj ? pch_vx_builder_append_bytes(c[5], e->parent_traj, strlen(e->parent_traj), err) : pch_vx_builder_append_null(c[5], err));
            CK(pch_vx_builder_append_bytes(c[6], e->doc_path, strlen(e->doc_path), err));
            CK(pch_vx_builder_append_bool(c[7], e->parent_traj == NULL, err));
            if (e->carried) CK(pch_vx_builder_append_bytes(c[8], e->fid, 32, err));
            else CK(pch_vx_builder_append_bytes(c[8], f ? f->id : "", f ? 32 : 0, err));
            CK(pch_vx_builder_append_uint(c[9], e->cluster, err));
            CK(pch_vx_builder_append_uint(c[10], e->row, err));
            CK(pch_vx_builder_append_uint(c[11], revision, err));
            CK(pch_vx_builder_append_bool(c[12], e->deleted, err));
            CK(pch_vx_builder_append_uint(c[13], e->logical, err));
            CK(pch_vx_builder_append_uint(c[14], e->steps, err));
            CK(pch_vx_builder_append_uint(c[15], e->calls, err));
            CK(e->has_ts ? pch_vx_builder_append_int(c[16], e->min_ts, err) : pch_vx_builder_append_null(c[16], err));
            CK(e->has_ts ? pch_vx_builder_append_int(c[17], e->max_ts, err) : pch_vx_builder_append_null(c[17], err));
            CK(pch_vx_builder_append_uint(c[18], sess_run ? PJ_DIR_SESSION_IS_RUN : 0, err));
            CK(pch_vx_builder_append_valid(vb, err));
            if (kr) {   /* what pj_read.c key_hit matches besides the run key (fenced already) */
                size_t idn;
                kr[n_kr++] = (keyrow){ pj_key_hash(e->traj_key, strlen(e->traj_key)), (uint32_t)shard };
                if (pj_producer_id_len(e->traj_key, e->doc_path, &idn)) kr[n_kr++] = (keyrow){ pj_key_hash(e->traj_key, idn), (uint32_t)shard };
                if (!e->parent_traj && e->session_id) kr[n_kr++] = (keyrow){ pj_key_hash(e->session_id, strlen(e->session_id)), (uint32_t)shard };
            }
        }
        CK(pch_vx_builder_finish(vb, &a, err));
        CK(stage_path(b, &p, rel) < 0 ? nomem(err) : PCH_OK);
        rc = pch_vx_writer_open_path(&w, b->ctx, dt, (const char *)p.data, &wo, err);
        if (rc == PCH_OK) rc = pch_vx_writer_write(w, a, err);
        if (rc == PCH_OK) rc = pch_vx_writer_finish(w, err);
        pch_vx_writer_free(w);
        pch_vx_array_free(a);
        CK(rc);
        CK(pj_file_digest((const char *)p.data, digest, &bytes, err));
        b->st.directory_bytes += bytes;
        pch_buf_printf(json, "%s{\"path\":\"%s\",\"bytes\":%" PRIu64 ",\"digest\":\"%s\",\"rows\":%zu,\"level\":%d",
                       shard ? "," : "", rel, bytes, digest, end - s, l0 ? 0 : 1);
        if (l0) pch_buf_printf(json, ",\"revision\":%" PRIu64 ",\"memory_bytes\":%" PRIu64, revision, mem);
        if (end > s) {
            const dentry *fk = &b->d[s], *lk = &b->d[end - 1];
            pch_buf_append_str(json, ",\"first_key\":[");
            pch_json__write_string(json, fk->source_id, strlen(fk->source_id)); pch_buf_putc(json, ',');
            pch_json__write_string(json, fk->run_key, strlen(fk->run_key)); pch_buf_putc(json, ',');
            pch_json__write_string(json, fk->traj_key, strlen(fk->traj_key));
            pch_buf_append_str(json, "],\"last_key\":[");
            pch_json__write_string(json, lk->source_id, strlen(lk->source_id)); pch_buf_putc(json, ',');
            pch_json__write_string(json, lk->run_key, strlen(lk->run_key)); pch_buf_putc(json, ',');
            pch_json__write_string(json, lk->traj_key, strlen(lk->traj_key));
            pch_buf_putc(json, ']');
        }
        pch_buf_putc(json, '}');
        s = end;
        *shards_out = shard + 1;
        if (b->n_d == 0) break;
    }
    if (kr) CK(write_key_index(b, kr, n_kr, kjson, err));
#undef CK
done:
    if (rc == PCH_OK && json->oom) rc = nomem(err);
    pch_free(b->ctx, kr);
    pch_vx_builder_free(vb);
    pch_vx_dtype_free(dt);
    pch_buf_dispose(&p);
    return rc;
}

/* The root's directories that gained a name since the last dirs_sync: fsynced once each
** before the manifest is linked, instead of once per file (the §9.5 order holds where it
** matters: nothing names a file before its name is durable). */
#define PUB_DIRS 16
typedef struct pub_dirs { char *dir[PUB_DIRS]; size_t n; } pub_dirs;

static int dirs_sync(pub_dirs *d, pch_error *err)
{
    int rc = PCH_OK;
    for (size_t i = 0; i < d->n; i++) {
        if (rc == PCH_OK) rc = pch_fsync_dir(d->dir[i], err);
        free(d->dir[i]);
    }
    d->n = 0;
    return rc;
}

/* Move one staged file into the root, create-if-absent (names are unique per writer); its
** directory joins d (fsynced by dirs_sync; at once when d is full). */
static int publish_file(pch_vxp_builder *b, const char *rel, pub_dirs *d, pch_error *err)
{
    pch_buf from, to;
    char *slash;
    int rc = PCH_OK;
    pch_buf_init(&from, b->ctx);
    pch_buf_init(&to, b->ctx);
    pch_buf_printf(&from, "%s/%s", b->stage, rel);
    pch_buf_printf(&to, "%s/%s", b->root, rel);
    if (from.oom || to.oom) { rc = nomem(err); goto done; }
    if (b->remote) {   /* uploaded whole under its unique name (pj_remote.c) */
        rc = pj_remote_put(b->remote, (const char *)from.data, rel, err);
        goto done;
    }
    slash = strrchr((char *)to.data, '/');
    *slash = 0;
    if ((rc = pch_mkdirs((const char *)to.data, err)) < 0) goto done;
    *slash = '/';
    if (pch_fault("link") || link((const char *)from.data, (const char *)to.data) != 0) {
        rc = pch_error_set_sys(err, errno == EEXIST ? PCH_EEXISTS : PCH_EIO, errno, "publish %s", rel);
        goto done;
    }
    unlink((const char *)from.data);
    *slash = 0;
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->dir[i], (const char *)to.data) == 0) goto done;
    if (d->n < PUB_DIRS && (d->dir[d->n] = strdup((const char *)to.data))) d->n++;
    else rc = pch_fsync_dir((const char *)to.data, err);
done:
    pch_buf_dispose(&from);
    pch_buf_dispose(&to);
    return rc;
}

static void json_str(pch_buf *j, const char *s) { pch_json__write_string(j, s ? s : "", s ? strlen(s) : 0); }

/* Manifest item it (an object) again, without member `drop`; the caller closes it. */
static int item_open(pch_buf *m, const pch_json_value *it, const char *src, const char *drop, pch_error *err)
{
    pch_buf_putc(m, '{');
    for (uint32_t k = 0, w = 0; k < it->n; k++) {
        const pch_json_member *mb = &it->u.members[k];
        if (strlen(drop) == mb->key_len && memcmp(mb->key, drop, mb->key_len) == 0) continue;
        if (w++) pch_buf_putc(m, ',');
        pch_json__write_string(m, mb->key, mb->key_len);
        pch_buf_putc(m, ':');
        if (pch_json__write_value(m, &mb->value, src) < 0) return pch_error_set(err, PCH_ECORRUPT, "projection: parent manifest item cannot be written again");
    }
    return PCH_OK;
}

/* Append the items of the parent's list `name` (each followed by a comma when more follow or
** `more`); *n counts them. */
static int parent_list(pch_vxp_builder *b, pch_buf *m, const char *name, bool more, uint64_t *n, pch_error *err)
{
    const pch_json_value *l = pj_json_member(b->delta->parent, name, PCH_JSON_ARRAY);
    for (uint32_t i = 0; l && i < l->n; i++) {
        PCH_TRY(item_open(m, &l->u.items[i], NULL, "", err));
        pch_buf_putc(m, '}');
        if (i + 1 < l->n || more) pch_buf_putc(m, ',');
        if (n) (*n)++;
    }
    return PCH_OK;
}

/* What the manifest's maintenance section reports (§12.2, §20.3). */
typedef struct maint {
    uint64_t files, l0_files, rows, deleted_rows, l0_runs, l0_rows, l0_memory, data_bytes, clusters;
} maint;

/* The parent's data files again, each with its deleted rows (parent's merged with the
** sync's), counted into mt. */
static int parent_data_files(pch_vxp_builder *b, pch_buf *m, maint *mt, pch_error *err)
{
    const pch_json_value *l = pj_json_member(b->delta->parent, "data_files", PCH_JSON_ARRAY);
    for (uint32_t i = 0; l && i < l->n; i++) {
        const pch_json_value *it = &l->u.items[i];
        uint64_t rows = 0, bytes = 0, level = 1, cl = 0;
        size_t nd = b->delta->n_del ? b->delta->n_del[i] : 0;
        if (b->delta->keep_file && !b->delta->keep_file[i]) continue;   /* a compaction rewrote it */
        pj_json_u64(it, "rows", &rows);
        pj_json_u64(it, "bytes", &bytes);
        pj_json_u64(it, "clusters", &cl);
        pj_json_u64(it, "level", &level);
        PCH_TRY(item_open(m, it, NULL, "deleted_rows", err));
        if (nd) {
            pch_buf_append_str(m, ",\"deleted_rows\":[");
            for (size_t k = 0; k < nd; k++) {
                const uint64_t *r = &b->delta->del[i][2 * k];
                pch_buf_printf(m, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "", r[0], r[1]);
                mt->deleted_rows += r[1] - r[0];
            }
            pch_buf_putc(m, ']');
        }
        pch_buf_append_str(m, "},\n ");
        mt->files++;
        mt->l0_files += level == 0;
        mt->rows += rows;
        mt->data_bytes += bytes;
        mt->clusters += cl;
    }
    return PCH_OK;
}

/* The document list, written by a task of its own while the commit seals the data files and
** writes the directory: it is final before the commit starts, and a sync writes all of it (the
** parent's rows too), the largest single write of a small sync. */
typedef struct docs_job {
    pch_ctx *ctx;
    const char *stage, *snapshot_id;
    const pj_docrec *all;
    size_t n_all;
    pch_buf json;
    uint64_t bytes;
} docs_job;

static int docs_job_run(void *arg, pch_error *err)
{
    docs_job *j = arg;
    return pj_docs_write(j->ctx, j->stage, j->snapshot_id, j->all, j->n_all, &j->json, &j->bytes, err);
}

int pch_vxp_builder_commit(pch_vxp_builder *b, pch_vxp_build_stats *stats, pch_error *err)
{
    pch_buf packs, cdir, tdir, kidx, lrep, m, p;
    char mdigest[80], created[32], rel[128];
    uint64_t shards = 0;
    pj_docrec *all = NULL;
    size_t n_all = 0;
    docs_job dj;
    pj_task dw;
    const bool delta = b->delta && !b->delta->compaction;
    const pch_json_value *pm = b->delta ? b->delta->parent : NULL;
    maint mt;
    pub_dirs pub;
    int rc = PCH_OK;
    if (b->committed) return pch_error_set(err, PCH_EINVAL, "projection: builder already committed");
    pub.n = 0;
    memset(&mt, 0, sizeof mt);
    pch_buf_init(&packs, b->ctx); pch_buf_init(&cdir, b->ctx); pch_buf_init(&tdir, b->ctx); pch_buf_init(&kidx, b->ctx);
    pch_buf_init(&lrep, b->ctx);
    pch_buf_init(&m, b->ctx); pch_buf_init(&p, b->ctx);
    memset(&dj, 0, sizeof dj);
    memset(&dw, 0, sizeof dw);
    pch_buf_init(&dj.json, b->ctx);
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    /* the document list: this writer's documents and the ones an incremental commit keeps */
    {
        /* a compaction carries its snapshot's list as it is (the input did not change; its
        ** documents were added again without their files' digests) */
        size_t own = b->delta && b->delta->compaction && b->delta->n_docs ? 0 : b->n_docs;
        n_all = own + (b->delta ? b->delta->n_docs : 0);
        if (!(all = calloc(n_all ? n_all : 1, sizeof *all))) { rc = nomem(err); goto done; }
        if (own) memcpy(all, b->docs, own * sizeof *all);
        if (b->delta && b->delta->n_docs) memcpy(all + own, b->delta->docs, b->delta->n_docs * sizeof *all);
    }
    pj_docs_sort(all, n_all);
    for (size_t i = 1; i < n_all; i++)
        if (strcmp(all[i - 1].path, all[i].path) == 0) { rc = pch_error_set(err, PCH_EINVAL, "projection: document %s listed twice", all[i].path); goto done; }
    dj.ctx = b->ctx;
    dj.stage = b->stage;
    dj.snapshot_id = b->snapshot_id;
    dj.all = all;
    dj.n_all = n_all;
    pj_task_start(&dw, docs_job_run, &dj, true);
    CK(cluster_flush(b, false, err));
    CK(flusher_stop(b, err));
    CK(file_seal(b, err));
    for (size_t i = 0; i < b->n_d; i++) {   /* placement of every trajectory, now known */
        dentry *e = &b->d[i];
        if (e->carried) continue;
        if (e->seq >= b->seq) { rc = pch_error_set(err, PCH_EINVAL, "projection: cluster of a trajectory was never written"); goto done; }
        e->file = b->place[e->seq].file;
        e->cluster = b->place[e->seq].cluster;
        e->row = b->place[e->seq].first_row + e->row_in_cluster;
    }
    if (delta) {      /* the sync's tombstones join its run (§10.4) */
        for (size_t i = 0; i < b->delta->n_tombs; i++) {
            const pj_tomb *t = &b->delta->tombs[i];
            dentry *e;
            if (!(e = dentry_push(b))) { rc = nomem(err); goto done; }
            e->deleted = true;
            e->file = UINT32_MAX;
            if (!(e->source_id = xstrdup(t->source_id)) || !(e->run_key = xstrdup(t->run_key)) ||
                !(e->traj_key = xstrdup(t->traj_key)) || !(e->doc_path = xstrdup(t->doc_path))) { rc = nomem(err); goto done; }
        }
    }
    CK(pj_content_finish(b->content, b->snapshot_id, &packs, &cdir, &b->st, err));
    CK(write_directory(b, &tdir, &kidx, &shards, err));
    b->st.data_files = b->n_files;
    CK(pj_task_join(&dw, err));
    b->st.directory_bytes += dj.bytes;
    if (b->delta) {   /* the counts of the whole snapshot: sums of its document list */
        b->st.documents = b->st.trajectories = b->st.steps = b->st.tool_calls = b->st.results = b->st.tokens = 0;
        b->st.logical_bytes = 0;
        for (size_t i = 0; i < n_all; i++) {
            if (all[i].state != PJ_DOC_PROJECTED) continue;
            b->st.documents++;
            b->st.trajectories += all[i].trajectories;
            b->st.steps += all[i].steps;
            b->st.tool_calls += all[i].calls;
            b->st.results += all[i].results;
            b->st.tokens += all[i].tokens;
            b->st.logical_bytes += all[i].logical;
        }
    }

    /* data files first (their totals feed counts, bytes and maintenance) */
    {
        pch_buf df;
        pch_buf_init(&df, b->ctx);
        if (b->delta && (rc = parent_data_files(b, &df, &mt, err)) < 0) { pch_buf_dispose(&df); goto done; }
        for (size_t i = 0; i < b->n_files; i++) {
            const dfile *f = &b->files[i];
            pch_buf_printf(&df, "%s{\"path\":\"data/%s/%s.vortex\",\"file_id\":\"%s\",\"bytes\":%" PRIu64 ",\"digest\":\"%s\",\"rows\":%" PRIu64 ",\"clusters\":%u,",
                           i ? ",\n " : "", b->o.partition, f->id, f->id, f->bytes, f->digest, f->rows, f->clusters);
            if (delta) pch_buf_append_str(&df, "\"level\":0,");
            pch_buf_append_str(&df, "\"cluster_rows\":[");
            for (uint32_t c = 0; c < f->clusters; c++) pch_buf_printf(&df, "%s%" PRIu64, c ? "," : "", f->crows[c]);
            pch_buf_append_str(&df, "],\"clusters_at\":[");
            /* each cluster's digest only on object storage, where a point read checks the
            ** cluster it fetches whole against it (docs/object-storage.md); a local one checks
            ** its rows against the segment table's row digests, and the 96 bytes a cluster
            ** (39 KB of `scaled`'s 80 KB manifest) were what every local point read paid for
            ** them (issue 18 item 5). A root copied to object storage by other means reads
            ** through its segment tables there (one request more a file). */
            for (uint32_t c = 0; c < f->clusters; c++) {
                pch_buf_printf(&df, "%s[%" PRIu64 ",%" PRIu64, c ? "," : "", f->coff[c], f->clen[c]);
                if (b->remote) pch_buf_printf(&df, ",\"%s\"", f->cdig[c]);
                pch_buf_append_str(&df, "]");
            }
            pch_buf_printf(&df, "],\"tail\":[%" PRIu64 ",%" PRIu64 ",\"%s\"],\"segments\":{\"path\":\"data/%s/%s.segments\",\"bytes\":%"
                               PRIu64 ",\"digest\":\"%s\"}}", f->tail_off, f->bytes - f->tail_off, f->tail_dig, b->o.partition, f->id,
                           f->seg_bytes, f->seg_dig);
            mt.files++;
            mt.l0_files += delta;
            mt.rows += f->rows;
            mt.data_bytes += f->bytes;
            mt.clusters += f->clusters;
        }
        if (b->delta && !b->n_files && df.len >= 3) df.len -= 3;   /* the parent's last ",\n " */
        if (df.oom) { pch_buf_dispose(&df); rc = nomem(err); goto done; }
        pch_buf_clear(&p);
        pch_buf_append(&p, df.data, df.len);
        pch_buf_dispose(&df);
    }
    /* the manifest (§10.3); one with directory runs or deleted rows is format v2 (a v1 reader
    ** must refuse it rather than read shadowed rows) */
    pch_time_format_iso8601(created, pch_time_now_ms());
    pch_buf_printf(&m, "{\n\"format\":\"%s\",\n\"snapshot_id\":\"%s\",\n\"parent_snapshot_id\":", delta || mt.deleted_rows ? PJ_MANIFEST_FORMAT_V2 : PJ_MANIFEST_FORMAT,
                   b->snapshot_id);
    if (b->had_current) json_str(&m, b->cur.snapshot_id); else pch_buf_append_str(&m, "null");
    pch_buf_printf(&m, ",\n\"created_at\":\"%s\",\n\"writer_id\":\"%s\",\n", created, b->writer_id);
    pch_buf_append_str(&m, "\"lineage\":{\"source_uri\":");
    json_str(&m, b->o.source_uri);
    pch_buf_append_str(&m, ",\"source_id\":");
    json_str(&m, b->o.source_id);
    pch_buf_printf(&m, ",\"fact_version\":null,\"fact_rows\":%" PRIu64
                       ",\"projector\":\"pchronicle-vortex projection/1\",\"recipe\":\"atif-typed-core+escape/1\""
                       ",\"trajectory_keys\":\"" PJ_KEY_RULE "\",\"revision\":%" PRIu64 "},\n",
                   b->st.documents, b->delta ? b->delta->revision : 0);
    pch_buf_append_str(&m, "\"vortex\":{\"file_format_version\":1,\"edition\":\"2025.05+zstd\",\"custom_registry_ids\":[]},\n");
    pch_buf_printf(&m, "\"layout\":{\"profile\":\"balanced\",\"data_model\":\"" PJ_DATA_MODEL "\",\"cluster_bytes\":%" PRIu64
                       ",\"file_bytes\":%" PRIu64 ",\"pack_bytes\":%" PRIu64 ",\"hot_max_bytes\":%" PRIu64 ",\"cold_max_bytes\":%" PRIu64
                       ",\"directory_shard_rows\":%" PRIu64 ",\"dedup_min_bytes\":%" PRIu64 ",\"frame_bytes\":%" PRIu64 ",\"frame_rows\":%" PRIu64 ",\"frame_ratio\":%" PRIu64 ",\"zstd_dict_bytes\":%" PRIu64 ",\"assets\":\"%s\",\"prompt_prefix\":%s,\"blob_payload_compression\":\"per-value\"},\n",
                   b->o.cluster_bytes, b->o.file_bytes, b->o.pack_bytes, b->o.hot_max_bytes, b->o.cold_max_bytes,
                   b->o.directory_shard_rows, b->o.dedup_min_bytes, b->o.frame_bytes,
                   b->o.frame_bytes ? b->o.frame_rows : 0, b->o.frame_bytes ? b->o.frame_ratio : 0, b->o.zstd_dict_bytes, b->o.assets == PCH_VXP_ASSETS_EMBED ? "embed" : "reference",
                   b->o.prompt_prefix ? "true" : "false");
    /* the lane report (§8.1, §20.1): a file of its own, which only inspect reads; in the
    ** manifest it was a quarter of what every cold point read reads first (issue 18 item 5) */
    CK(write_lane_report(b, &lrep, err));
    /* what this commit wrote (a sync's cost, §11.2), before the totals become the snapshot's */
    b->st.written_bytes = b->st.data_bytes + b->st.blob_bytes + b->st.directory_bytes;
    for (size_t i = 0; i < b->n_files; i++) b->st.written_bytes += b->files[i].seg_bytes;
    if (b->delta) {     /* the parent's blob packs stay listed (kept files may refer to them) */
        const pch_json_value *pc = pj_json_member(pm, "counts", PCH_JSON_OBJECT), *pb = pj_json_member(pm, "bytes", PCH_JSON_OBJECT);
        uint64_t v;
        if (pc && pj_json_u64(pc, "blob_packs", &v)) b->st.blob_packs += v;
        if (pc && pj_json_u64(pc, "blobs", &v)) b->st.blobs += v;
        if (pb && pj_json_u64(pb, "blobs", &v)) b->st.blob_bytes += v;
        if (pb && pj_json_u64(pb, "directories", &v)) b->st.directory_bytes += v;
        if (pb && pj_json_u64(pb, "hot", &v)) b->st.hot_bytes += v;
        if (pb && pj_json_u64(pb, "cold", &v)) b->st.cold_bytes += v;
        if (pb && pj_json_u64(pb, "external", &v)) b->st.external_bytes += v;
        if (pb && pj_json_u64(pb, "dedup_hits", &v)) b->st.dedup_hits += v;
    }
    pch_buf_printf(&m, "\"counts\":{\"documents\":%" PRIu64 ",\"trajectories\":%" PRIu64 ",\"steps\":%" PRIu64 ",\"tool_calls\":%" PRIu64
                       ",\"results\":%" PRIu64 ",\"tokens\":%" PRIu64 ",\"data_files\":%" PRIu64 ",\"clusters\":%" PRIu64 ",\"blob_packs\":%" PRIu64
                       ",\"blobs\":%" PRIu64 "},\n",
                   b->st.documents, b->st.trajectories, b->st.steps, b->st.tool_calls, b->st.results, b->st.tokens, mt.files,
                   mt.clusters, b->st.blob_packs, b->st.blobs);
    pch_buf_printf(&m, "\"bytes\":{\"logical\":%" PRIu64 ",\"data\":%" PRIu64 ",\"blobs\":%" PRIu64 ",\"directories\":%" PRIu64
                       ",\"hot\":%" PRIu64 ",\"cold\":%" PRIu64 ",\"external\":%" PRIu64 ",\"dedup_hits\":%" PRIu64 "},\n",
                   b->st.logical_bytes, mt.data_bytes, b->st.blob_bytes, b->st.directory_bytes, b->st.hot_bytes,
                   b->st.cold_bytes, b->st.external_bytes, b->st.dedup_hits);
    pch_buf_append_str(&m, "\"data_files\":[\n ");
    pch_buf_append(&m, p.data, p.len);
    pch_buf_append_str(&m, "],\n\"blob_packs\":[");
    if (b->delta) CK(parent_list(b, &m, "blob_packs", packs.len > 0, NULL, err));
    pch_buf_append(&m, packs.data, packs.len);
    pch_buf_append_str(&m, "],\n\"content_directory\":[");
    if (b->delta) CK(parent_list(b, &m, "content_directory", cdir.len > 0, NULL, err));
    pch_buf_append(&m, cdir.data, cdir.len);
    pch_buf_append_str(&m, "],\n\"trajectory_directory\":[");
    if (delta) CK(parent_list(b, &m, "trajectory_directory", false, NULL, err));
    else pch_buf_append(&m, tdir.data, tdir.len);
    /* the key index goes with the base directory it indexes: a sync keeps both */
    pch_buf_append_str(&m, "],\n\"key_index\":[");
    if (delta) CK(parent_list(b, &m, "key_index", false, NULL, err));
    else pch_buf_append(&m, kidx.data, kidx.len);
    pch_buf_append_str(&m, "],\n");
    if (delta) {
        const pch_json_value *runs = pj_json_member(pm, "directory_runs", PCH_JSON_ARRAY);
        for (uint32_t i = 0; runs && i < runs->n; i++) {
            uint64_t r = 0, mem = 0;
            pj_json_u64(&runs->u.items[i], "rows", &r);
            pj_json_u64(&runs->u.items[i], "memory_bytes", &mem);
            mt.l0_rows += r;
            mt.l0_memory += mem;
        }
        mt.l0_runs = (runs ? runs->n : 0) + 1;
        mt.l0_rows += b->n_d;
        {
            uint64_t mem = 0;
            const char *mb = strstr((const char *)tdir.data, "\"memory_bytes\":");
            if (mb) mem = strtoull(mb + 15, NULL, 10);
            mt.l0_memory += mem;
        }
        pch_buf_append_str(&m, "\"directory_runs\":[");
        CK(parent_list(b, &m, "directory_runs", true, NULL, err));
        pch_buf_append(&m, tdir.data, tdir.len);
        pch_buf_append_str(&m, "],\n");
    }
    pch_buf_append_str(&m, "\"documents\":[");
    pch_buf_append(&m, dj.json.data, dj.json.len);
    pch_buf_append_str(&m, "],\n");
    if (!delta) mt.l0_runs = 0;
    {
        bool required = b->delta && ((b->delta->max_l0_runs && mt.l0_runs > b->delta->max_l0_runs) ||
                                     (b->delta->max_l0_memory && mt.l0_memory > b->delta->max_l0_memory));
        pch_buf_printf(&m, "\"maintenance\":{\"l0_runs\":%" PRIu64 ",\"l0_files\":%" PRIu64 ",\"l0_rows\":%" PRIu64
                           ",\"l0_memory_bytes\":%" PRIu64 ",\"rows\":%" PRIu64 ",\"deleted_rows\":%" PRIu64 ",\"required\":%s},\n",
                       mt.l0_runs, mt.l0_files, mt.l0_rows, mt.l0_memory, mt.rows, mt.deleted_rows, required ? "true" : "false");
        b->st.maintenance_required = required;
    }
    if (b->delta) {
        const pch_json_value *ls = pj_json_member(pm, "last_sync", PCH_JSON_OBJECT);
        if (delta) {
            pch_buf_printf(&m, "\"last_sync\":{\"snapshot_id\":\"%s\",\"added\":%" PRIu64 ",\"changed\":%" PRIu64 ",\"removed\":%" PRIu64
                               ",\"unchanged\":%" PRIu64 ",\"read\":%" PRIu64 ",\"tombstones\":%zu,\"bytes_written\":%" PRIu64
                               ",\"seconds\":%.3f},\n",
                           b->snapshot_id, b->delta->added, b->delta->changed, b->delta->removed, b->delta->unchanged, b->delta->read,
                           b->delta->n_tombs, b->st.written_bytes, pch_time_mono() - b->t0);
        } else if (ls) {          /* a compaction keeps what the last sync did */
            pch_buf_append_str(&m, "\"last_sync\":");
            if (pch_json__write_value(&m, ls, NULL) < 0) { rc = nomem(err); goto done; }
            pch_buf_append_str(&m, ",\n");
        }
    }
    pch_buf_append_str(&m, "\"lane_report\":[");
    pch_buf_append(&m, lrep.data, lrep.len);
    pch_buf_append_str(&m, "]\n}\n");
    if (m.oom) { rc = nomem(err); goto done; }
    snprintf(rel, sizeof rel, "manifests/%s.json", b->snapshot_id);
    CK(stage_path(b, &p, rel) < 0 ? nomem(err) : PCH_OK);
    CK(pch_file_publish((const char *)p.data, m.data, m.len, err));
    pj_bytes_digest(mdigest, m.data, m.len);
    b->st.manifest_bytes = m.len;

    b->st.written_bytes += m.len;
    b->st.data_bytes = mt.data_bytes;
    /* publish in the §9.5 order: blob packs, content directory, data, trajectory
    ** directory, manifest; CURRENT last. The names of the files before the manifest are made
    ** durable together, by one fsync of each directory, before the manifest is linked. */
    for (size_t i = 0; i < pj_content_n_files(b->content); i++) CK(publish_file(b, pj_content_file(b->content, i), &pub, err));
    for (size_t i = 0; i < b->n_files; i++) {
        char r2[128];
        snprintf(r2, sizeof r2, "data/%s/%s.vortex", b->o.partition, b->files[i].id);
        CK(publish_file(b, r2, &pub, err));
        snprintf(r2, sizeof r2, "data/%s/%s.segments", b->o.partition, b->files[i].id);
        CK(publish_file(b, r2, &pub, err));
    }
    for (uint64_t s = 0; s < shards; s++) {
        char r2[128];
        if (delta) snprintf(r2, sizeof r2, "directories/trajectory/%s-l0.vortex", b->snapshot_id);
        else snprintf(r2, sizeof r2, "directories/trajectory/%s-%" PRIu64 ".vortex", b->snapshot_id, s);
        CK(publish_file(b, r2, &pub, err));
    }
    for (uint64_t k = 0; k < b->n_key_shards; k++) {
        char r2[128];
        snprintf(r2, sizeof r2, "directories/keys/%s-%" PRIu64 ".vortex", b->snapshot_id, k);
        CK(publish_file(b, r2, &pub, err));
    }
    {
        char r2[128];
        snprintf(r2, sizeof r2, "directories/documents/%s.vortex", b->snapshot_id);
        CK(publish_file(b, r2, &pub, err));
        snprintf(r2, sizeof r2, "directories/lanes/%s.vortex", b->snapshot_id);
        CK(publish_file(b, r2, &pub, err));
    }
    CK(dirs_sync(&pub, err));     /* every file the manifest names, durable before it */
    CK(publish_file(b, rel, &pub, err));
    CK(dirs_sync(&pub, err));

    /* CURRENT: under a lock, only if it is still what this writer read (§10.2, §11.4) */
    if (b->remote) CK(pj_remote_commit(b->remote, b->snapshot_id, mdigest, err));
    else CK(pj_current_swap(b->ctx, b->root, b->had_current ? &b->cur_raw : NULL, b->cur.snapshot_id, b->snapshot_id, mdigest, err));
    b->committed = true;
    b->st.seconds = pch_time_mono() - b->t0;
    for (size_t i = 0; i < b->n_lanes; i++) b->st.encode_seconds += b->lanes[i].seconds;
    if (b->o.progress) fputc('\n', stderr);
    if (stats) *stats = b->st;
#undef CK
done:
    pch_buf_dispose(&packs); pch_buf_dispose(&cdir); pch_buf_dispose(&tdir); pch_buf_dispose(&kidx); pch_buf_dispose(&lrep);
    if (dw.running) pj_task_join(&dw, NULL);    /* a failed commit waits for it */
    for (size_t i = 0; i < pub.n; i++) free(pub.dir[i]);
    pch_buf_dispose(&m); pch_buf_dispose(&p); pch_buf_dispose(&dj.json);
    free(all);
    return rc;
}
