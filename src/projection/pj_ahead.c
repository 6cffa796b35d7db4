/* Parallel read-ahead of a lane scan (the training readers, RFC-0006 §13.5; docs/training.md).
**
** Reading a training lane scan is decoding: a cluster's token, logprob and message lanes are
** zstd frames, bit-packed and ALP-RD values, and every byte read is hashed against its digest
** (§9.5). One thread decoding ahead of the reader leaves the other cores idle, so W workers
** decode at once: worker w reads the clusters whose ordinal in the scan is w modulo W, each
** with its own iterator over its own twin of the snapshot (file handles, segment caches and
** digest tables of its own: no state is shared, so nothing but the hand-over is locked).
** Worker 0 too: the caller's snapshot stays the caller's alone, so it may use it (point
** reads, another reader on the same snapshot) while the workers decode.
**
** Each worker fills a ring of two slots; next hands the clusters out in scan order (the lowest
** ordinal among the workers' filled slots, once every worker that has not ended has one), so
** the readers see exactly the sequence a single iterator gives — paged trajectories continue
** across clusters in order. Memory stays bounded: at most two decoded clusters per worker. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "projection/pj_int.h"

typedef struct ahead_slot {
    pch_vx_array *arr;
    pch_vx_dtype *dt;
    const pch_vx_array **lanes;
    uint8_t *keep;                  /* pch_vxp_lanes_keep's flags, when the scan is pruned */
    size_t keep_cap;
    bool pruned;
    uint8_t *live;                  /* pj_lanes_live's flags, when the cluster has deleted rows */
    size_t live_cap;
    bool masked;
    pch_vxp_lanes_stats st;         /* the worker's scan stats once this cluster was read */
    uint64_t rows, ord;             /* ord: the cluster's ordinal in the scan (at eof: the count) */
    bool eof;
    int rc;
    pch_error err;
} ahead_slot;

typedef struct ahead_worker {
    struct pj_lanes_ahead *a;
    pch_vxp_snapshot *twin;         /* the worker's own copy of the caller's snapshot */
    pch_vxp_lanes *it;              /* over twin: a clone of the caller's iterator */
    ahead_slot slot[2];
    uint64_t filled, taken, released;   /* slot k % 2 is filled k-th, handed out, given back */
    bool ended;                     /* filled an eof or error slot: fills nothing more */
    pthread_t th;
    bool running;
    pch_vxp_lanes_stats st;         /* as of its last slot handed out (or its end) */
} ahead_worker;

struct pj_lanes_ahead {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    ahead_worker *w;
    unsigned n;
    pch_vxp_snapshot *s;            /* the caller's: the twins' I/O is added to it at the end */
    ahead_worker *held;             /* whose slot the caller holds */
    uint64_t last_ord;              /* ordinal of the cluster handed out last (+1); 0 = none yet */
    bool gap;
    size_t n_lanes;
};

static int nomem(pch_error *err) { return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }

static void slot_clear(ahead_slot *sl)
{
    pch_vx_array_free(sl->arr);
    pch_vx_dtype_free(sl->dt);
    sl->arr = NULL;
    sl->dt = NULL;
}

/* The worker's next cluster into sl, which then owns its arrays. */
static void slot_fill(pch_vxp_lanes *it, size_t n_lanes, ahead_slot *sl)
{
    const uint8_t *keep;
    slot_clear(sl);
    pch_error_clear(&sl->err);
    sl->rows = 0;
    sl->rc = pj_lanes_next_owned(it, &sl->arr, &sl->dt, &sl->ord, &sl->eof, &sl->err);
    pch_vxp_lanes_stats_get(it, &sl->st);
    if (sl->rc < 0 || sl->eof) return;
    sl->rows = sl->arr->len;
    for (size_t i = 0; i < n_lanes; i++) sl->lanes[i] = sl->arr->children[i];
    keep = pch_vxp_lanes_keep(it);
    sl->pruned = keep != NULL;
    sl->masked = pch_vxp_lanes_live(it) != NULL;
    if (sl->masked) {
        if (sl->rows > sl->live_cap) {
            uint8_t *k = realloc(sl->live, (size_t)sl->rows);
            if (!k) { sl->rc = nomem(&sl->err); return; }
            sl->live = k;
            sl->live_cap = (size_t)sl->rows;
        }
        memcpy(sl->live, pch_vxp_lanes_live(it), (size_t)sl->rows);
    }
    if (!keep) return;
    if (sl->rows > sl->keep_cap) {
        uint8_t *k = realloc(sl->keep, (size_t)sl->rows);
        if (!k) { sl->rc = nomem(&sl->err); return; }
        sl->keep = k;
        sl->keep_cap = (size_t)sl->rows;
    }
    memcpy(sl->keep, keep, (size_t)sl->rows);
}

/* Called with a->mu held: fill w's next slot (the lock released meanwhile, for the work). A
** worker whose thread could not start is filled so on the caller's thread when its turn comes. */
static void fill_one(pj_lanes_ahead *a, ahead_worker *w)
{
    ahead_slot *sl = &w->slot[w->filled % 2];
    pthread_mutex_unlock(&a->mu);
    slot_fill(w->it, a->n_lanes, sl);
    pthread_mutex_lock(&a->mu);
    w->filled++;
    w->ended = sl->eof || sl->rc < 0;
}

static void *worker_main(void *p)
{
    ahead_worker *w = p;
    pj_lanes_ahead *a = w->a;
    pthread_mutex_lock(&a->mu);
    while (!w->ended) {
        while (!a->stop && w->filled - w->released >= 2) pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop) break;
        fill_one(a, w);
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static unsigned default_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > PJ_AHEAD_MAX_WORKERS ? PJ_AHEAD_MAX_WORKERS : (unsigned)n;
}

int pj_lanes_ahead_open(pj_lanes_ahead **out, pch_vxp_lanes *it, unsigned workers, pch_error *err)
{
    pj_lanes_ahead *a;
    pch_vxp_snapshot *s = pj_lanes_snapshot(it);
    int rc = PCH_OK;
    *out = NULL;
    if (!workers) workers = default_workers();
    if (workers > PJ_AHEAD_MAX_WORKERS) workers = PJ_AHEAD_MAX_WORKERS;
    if (!(a = calloc(1, sizeof *a)) || !(a->w = calloc(workers, sizeof *a->w))) {
        free(a);
        return nomem(err);
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->n = workers;
    a->s = s;
    a->n_lanes = pj_lanes_count(it);
    for (unsigned i = 0; i < workers && rc == PCH_OK; i++) {
        ahead_worker *w = &a->w[i];
        w->a = a;
        for (int k = 0; k < 2; k++)
            if (!(w->slot[k].lanes = calloc(a->n_lanes, sizeof *w->slot[k].lanes))) rc = nomem(err);
        if (rc < 0) break;
        if ((rc = pj_snapshot_twin(&w->twin, s, err)) < 0 || (rc = pj_lanes_clone(&w->it, it, w->twin, err)) < 0)
            break;
        pj_lanes_stride(w->it, workers, i);
    }
    /* the threads start once every worker is set up: a failure above leaves none running */
    for (unsigned i = 0; i < workers && rc == PCH_OK; i++)
        a->w[i].running = pthread_create(&a->w[i].th, NULL, worker_main, &a->w[i]) == 0;
    if (rc < 0) {
        pj_lanes_ahead_free(a);
        return rc;
    }
    *out = a;
    return PCH_OK;
}

int pj_lanes_ahead_next(pj_lanes_ahead *a, const pch_vx_array *const **lanes, uint64_t *rows, const uint8_t **keep,
                        const uint8_t **live, bool *eof, pch_error *err)
{
    ahead_worker *best;
    ahead_slot *sl;
    *lanes = NULL;
    *rows = 0;
    *keep = NULL;
    if (live) *live = NULL;
    *eof = false;
    pthread_mutex_lock(&a->mu);
    if (a->held) {                  /* the caller is done with the last one */
        a->held->released++;
        a->held = NULL;
        pthread_cond_broadcast(&a->cv);
    }
    for (;;) {
        bool waiting = false;
        best = NULL;
        for (unsigned i = 0; i < a->n; i++) {
            ahead_worker *w = &a->w[i];
            if (w->taken == w->filled) {        /* nothing ready */
                if (w->ended) continue;
                if (!w->running) fill_one(a, w);
                else { waiting = true; continue; }
            }
            sl = &w->slot[w->taken % 2];
            if (sl->rc < 0) {                   /* an error ends the scan, whatever its place */
                *err = sl->err;
                w->st = sl->st;
                pthread_mutex_unlock(&a->mu);
                return sl->rc;
            }
            if (sl->eof) {
                w->st = sl->st;
                continue;
            }
            if (!best || sl->ord < best->slot[best->taken % 2].ord) best = w;
        }
        if (!waiting) break;
        pthread_cond_wait(&a->cv, &a->mu);
    }
    if (!best) {                    /* every worker ended: its eof slot's ord is the cluster count */
        a->gap = a->w[0].slot[a->w[0].taken % 2].ord != a->last_ord;
        pthread_mutex_unlock(&a->mu);
        *eof = true;
        return PCH_OK;
    }
    sl = &best->slot[best->taken % 2];
    best->taken++;
    best->st = sl->st;
    a->held = best;
    a->gap = sl->ord != a->last_ord;
    a->last_ord = sl->ord + 1;
    pthread_mutex_unlock(&a->mu);
    *lanes = sl->lanes;
    *rows = sl->rows;
    *keep = sl->pruned ? sl->keep : NULL;
    if (live) *live = sl->masked ? sl->live : NULL;
    return PCH_OK;
}

bool pj_lanes_ahead_gap(const pj_lanes_ahead *a) { return a->gap; }

void pj_lanes_ahead_stats(pj_lanes_ahead *a, pch_vxp_lanes_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&a->mu);
    for (unsigned i = 0; i < a->n; i++) {
        const pch_vxp_lanes_stats *s = &a->w[i].st;
        out->clusters += s->clusters;
        out->clusters_zone_pruned += s->clusters_zone_pruned;
        out->clusters_summary_pruned += s->clusters_summary_pruned;
        out->clusters_read += s->clusters_read;
        out->rows += s->rows;
        out->rows_pruned += s->rows_pruned;
        out->clusters_summary_warm += s->clusters_summary_warm;
        out->clusters_fetched_ahead += s->clusters_fetched_ahead;
    }
    pthread_mutex_unlock(&a->mu);
}

void pj_lanes_ahead_free(pj_lanes_ahead *a)
{
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    for (unsigned i = 0; i < a->n; i++) {
        ahead_worker *w = &a->w[i];
        if (w->running) pthread_join(w->th, NULL);
        for (int k = 0; k < 2; k++) {
            slot_clear(&w->slot[k]);
            free(w->slot[k].lanes);
            free(w->slot[k].keep);
            free(w->slot[k].live);
        }
        pch_vxp_lanes_free(w->it);
        if (w->twin) pj_snapshot_absorb(a->s, w->twin);
        pch_vxp_snapshot_free(w->twin);
    }
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a->w);
    free(a);
}
