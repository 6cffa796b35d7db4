/* A directory of ATIF documents as one source (RFC-0006 §5.2 identity, §5.3 subagent
** topology, §16.2 external reference confinement; specs/atif.md §2.9).
**
** Streaming: documents are read, normalised, handed to the caller and freed one at a time.
** What stays in memory is per document only: its path, its trajectories' keys (for
** uniqueness) and its pending file references. After the walk, trajectory_path and
** continued_trajectory_ref are resolved against the documents seen — inside the root
** only: a reference that is absolute, a URL, or climbs with ".." is never followed. */
#include <pthread.h>
#include <stdlib.h>

#include "atif/atif_int.h"
#include "json/json.h"

typedef struct pending {
    pch_atif_link_kind kind;
    char *from_doc, *from_run, *from_traj, *target, *target_doc;
    uint32_t step, result, ref;
} pending;

typedef struct docmap {            /* document path → root keys */
    char *path, *run, *traj;
} docmap;

typedef struct dir_state {
    pch_ctx *ctx;
    const char *root;
    size_t root_len;
    const pch_atif_options *opts;
    int (*on_doc)(pch_atif_doc *, void *);
    int (*on_link)(const pch_atif_link *, void *);
    pch_atif_finding_cb findings;
    void *payload;
    pch_atif_dir_stats *st;
    pch_error *err;
    pch_atif__keyset keys;
    pending *pend; size_t n_pend, cap_pend;
    docmap *docs; size_t n_docs, cap_docs;
} dir_state;

static char *xdup(pch_ctx *ctx, const char *s)
{
    size_t n = strlen(s);
    char *p = pch_malloc(ctx, n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

/* Resolve `target` relative to the directory of doc; NULL when not confined to the root. */
static char *resolve(pch_ctx *ctx, const char *doc, const char *target)
{
    const char *slash = strrchr(doc, '/');
    size_t dl = slash ? (size_t)(slash - doc) + 1 : 0, tl = strlen(target);
    char *p;
    if (pch_atif_path_check(target, tl, NULL) != 0) return NULL;
    p = pch_malloc(ctx, dl + tl + 1);
    if (!p) return NULL;
    memcpy(p, doc, dl);
    memcpy(p + dl, target, tl + 1);
    return p;
}

static int add_pending(dir_state *s, pch_atif_link_kind kind, const char *doc,
                       const pch_atif_trajectory *t, const char *target, uint32_t st,
                       uint32_t r, uint32_t ref)
{
    if (s->n_pend == s->cap_pend) {
        size_t nc = s->cap_pend ? s->cap_pend * 2 : 16;
        pending *np = pch_realloc(s->ctx, s->pend, nc * sizeof(*np));
        if (!np) return PCH_ENOMEM;
        s->pend = np;
        s->cap_pend = nc;
    }
    pending *p = &s->pend[s->n_pend];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->step = st; p->result = r; p->ref = ref;
    p->from_doc = xdup(s->ctx, doc);
    p->from_run = xdup(s->ctx, t->run_key);
    p->from_traj = xdup(s->ctx, t->trajectory_key);
    p->target = xdup(s->ctx, target);
    p->target_doc = resolve(s->ctx, doc, target);
    s->n_pend++;
    if (!p->from_doc || !p->from_run || !p->from_traj || !p->target) return PCH_ENOMEM;
    return PCH_OK;
}

/* Pull "trajectory_path" out of one ref object text (compact JSON). */
static int ref_paths(dir_state *s, const char *doc, const pch_atif_trajectory *t, uint32_t si,
                     uint32_t ri, const pch_atif_raw *refs)
{
    pch_json_parser *p = NULL;
    const pch_json_value *v;
    int rc = pch_json_parser_new(&p, s->ctx, NULL, NULL);
    if (rc < 0) return rc;
    if (pch_json_parser_parse(p, refs->ptr, refs->len, &v, NULL) == 0 && v->kind == PCH_JSON_ARRAY)
        for (uint32_t i = 0; i < v->n && rc == PCH_OK; i++) {
            const pch_json_value *tp = pch_json_get(&v->u.items[i], "trajectory_path", 15);
            if (tp && tp->kind == PCH_JSON_STRING && tp->u.str.len &&
                memchr(tp->u.str.ptr, 0, tp->u.str.len) == NULL) {
                char *z = pch_malloc(s->ctx, tp->u.str.len + 1);   /* decoded strings carry a length */
                if (!z) { rc = PCH_ENOMEM; break; }
                memcpy(z, tp->u.str.ptr, tp->u.str.len);
                z[tp->u.str.len] = 0;
                rc = add_pending(s, PCH_ATIF_LINK_SUBAGENT_FILE, doc, t, z, si, ri, i);
                pch_free(s->ctx, z);
            }
        }
    pch_json_parser_free(p);
    return rc;
}

/* Accept one parsed document (calling thread, path order): keys made unique within the
** source, references remembered, the document handed to on_doc. */
static int accept_doc(dir_state *s, const char *rel, pch_atif_doc *d)
{
    /* keys come from each document alone; one claimed twice fails the import (keys.c) */
    int rc = pch_atif__keys_claim(s->ctx, &s->keys, d, s->err);
    if (rc < 0) { pch_atif_doc_free(d); return rc; }
    /* remember the root keys and the file references of this document */
    if (rc == PCH_OK) {
        if (s->n_docs == s->cap_docs) {
            size_t nc = s->cap_docs ? s->cap_docs * 2 : 64;
            docmap *nd = pch_realloc(s->ctx, s->docs, nc * sizeof(*nd));
            if (!nd) rc = PCH_ENOMEM;
            else { s->docs = nd; s->cap_docs = nc; }
        }
        if (rc == PCH_OK) {
            docmap *m = &s->docs[s->n_docs++];
            m->path = xdup(s->ctx, rel);
            m->run = xdup(s->ctx, d->traj[0].run_key);
            m->traj = xdup(s->ctx, d->traj[0].trajectory_key);
            if (!m->path || !m->run || !m->traj) rc = PCH_ENOMEM;
        }
    }
    for (size_t i = 0; i < d->n_traj && rc == PCH_OK; i++) {
        const pch_atif_trajectory *t = &d->traj[i];
        if (t->continued_trajectory_ref && t->continued_trajectory_ref[0])
            rc = add_pending(s, PCH_ATIF_LINK_CONTINUATION, rel, t, t->continued_trajectory_ref, 0, 0, 0);
        for (uint32_t si = 0; si < t->n_steps && rc == PCH_OK; si++)
            for (uint32_t ri = 0; ri < t->steps[si].n_results && rc == PCH_OK; ri++) {
                const pch_atif_raw *refs = &t->steps[si].results[ri].f[PCH_ATIF_R_SUBAGENT_TRAJECTORY_REF];
                if (refs->ptr && refs->ptr[0] == '[' && memmem(refs->ptr, refs->len, "\"trajectory_path\"", 17))
                    rc = ref_paths(s, rel, t, si, ri, refs);
            }
    }
    if (rc < 0) {
        pch_atif_doc_free(d);
        return rc == PCH_ENOMEM ? pch_error_set(s->err, rc, "atif: out of memory") : rc;
    }
    s->st->trajectories += d->n_traj;
    rc = s->on_doc ? s->on_doc(d, s->payload) : 0;
    if (rc != 1) pch_atif_doc_free(d);
    if (rc < 0) return pch_error_set(s->err, rc, "atif: import stopped by the document callback");
    return PCH_OK;
}


/* The document's path relative to the walked root. */
static const char *rel_path(const dir_state *s, const char *path)
{
    const char *rel = path + s->root_len;
    while (*rel == '/') rel++;
    return rel;
}

/* Read and parse one document (any thread). *read_ok: the file was read (*bytes long). */
static int read_doc(const dir_state *s, const char *path, pch_atif_doc **d, bool *read_ok, size_t *bytes,
                    pch_atif_finding_cb findings, void *payload, pch_error *e)
{
    pch_buf data;
    int rc;
    pch_buf_init(&data, s->ctx);
    pch_error_clear(e);
    rc = pch_file_read_all(&data, path, pch_ctx_limits(s->ctx)->max_line_bytes, e);
    *read_ok = rc == PCH_OK;
    *bytes = data.len;
    if (rc == PCH_OK)
        rc = pch_atif_doc_parse(d, s->ctx, data.data ? (const char *)data.data : "", data.len, rel_path(s, path),
                                s->opts, findings, payload, e);
    if (rc == PCH_OK && s->opts && s->opts->version >= 3 && s->opts->digest) {
        pch_blake3 h;
        pch_blake3_init(&h);
        pch_blake3_update(&h, data.data ? data.data : (const uint8_t *)"", data.len);
        pch_blake3_final(&h, (*d)->src_digest, 32);
        (*d)->src_bytes = data.len;
        (*d)->has_source = true;
    }
    pch_buf_dispose(&data);
    return rc;
}

/* Count a document read by read_doc and accept it (calling thread, path order); an
** invalid document is counted as rejected and skipped. */
static int take_doc(dir_state *s, const char *path, int rc, bool read_ok, size_t bytes, pch_atif_doc *d,
                    const pch_error *e)
{
    if (read_ok) {
        s->st->bytes += bytes;
        s->st->documents++;
        if (rc == PCH_EINVAL) { s->st->rejected++; return PCH_OK; }
    }
    if (rc < 0) return pch_error_set(s->err, rc, "%s", e->msg);
    return accept_doc(s, rel_path(s, path), d);
}

/* options.select's answer for path: 1 read it, 0 skip it, < 0 stop (s->err set). */
static int select_file(dir_state *s, const char *path, uint64_t bytes, int64_t mtime_ns)
{
    int r;
    if (!s->opts || s->opts->version < 3 || !s->opts->select) return 1;
    r = s->opts->select(path, rel_path(s, path), bytes, mtime_ns, s->opts->select_payload);
    if (r < 0) return pch_error_set(s->err, r, "atif: import stopped by the select callback at %s", rel_path(s, path));
    return r ? 1 : 0;
}

static int64_t mtime_ns_of(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static int selected(dir_state *s, const char *path, const struct stat *st)
{
    return select_file(s, path, (uint64_t)st->st_size, mtime_ns_of(st));
}

/* options version 4: the walk lists every file before select is asked (walked first) */
static bool defers_select(const dir_state *s)
{
    return s->opts && s->opts->version >= 4 && s->opts->select && s->opts->walked;
}

static int call_walked(dir_state *s)
{
    int r = s->opts->walked(s->opts->select_payload);
    return r < 0 ? pch_error_set(s->err, r, "atif: import stopped by the walked callback") : PCH_OK;
}

static int on_file(const char *path, const struct stat *st, void *payload)
{
    dir_state *s = payload;
    pch_atif_doc *d = NULL;
    pch_error e;
    bool read_ok;
    size_t bytes;
    int sel = selected(s, path, st);
    if (sel <= 0) return sel;
    int rc = read_doc(s, path, &d, &read_ok, &bytes, s->findings, s->payload, &e);
    return take_doc(s, path, rc, read_ok, bytes, d, &e);
}

/* ---- parsing ahead on worker threads (options version 2, threads > 1) ----
** The walk collects the paths; workers read and parse documents at most `window` ahead of
** the calling thread, which replays each document's findings and accepts it in path order,
** so callbacks, keys and output are exactly those of the sequential walk. */

typedef struct kept_finding {
    pch_atif_severity severity;
    char *code, *file, *pointer, *message;
} kept_finding;

typedef struct ahead_slot {
    int state;                    /* 0 empty, 1 parsing, 2 ready */
    size_t idx;
    pch_atif_doc *doc;
    int rc;
    bool read_ok;
    size_t bytes;
    pch_error err;
    kept_finding *f;
    size_t n_f, cap_f;
} ahead_slot;

typedef struct ahead {
    dir_state *s;
    pch_error *err;               /* the walk's errors (the second half's own, pch_atif__walk2) */
    char **paths;
    uint64_t *sizes;              /* with a deferred select: each listed file's size and time */
    int64_t *mtimes;
    size_t n_paths, cap_paths;
    ahead_slot *slot;
    size_t window, next, consumed;
    bool stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* parsers wait here for room in the window */
    pthread_cond_t cv_main;       /* the calling thread waits here for its next document */
    unsigned workers_waiting;
    bool main_waiting;
} ahead;

static int collect_path(const char *path, const struct stat *st, void *payload)
{
    ahead *a = payload;
    bool defer = defers_select(a->s);
    int sel = defer ? 1 : selected(a->s, path, st);
    if (sel <= 0) return sel;
    if (a->n_paths == a->cap_paths) {
        size_t nc = a->cap_paths ? a->cap_paths * 2 : 256;
        char **np = pch_realloc(a->s->ctx, a->paths, nc * sizeof *np);
        if (!np) return pch_error_set(a->err, PCH_ENOMEM, "atif: out of memory");
        a->paths = np;
        if (defer) {
            uint64_t *ns = pch_realloc(a->s->ctx, a->sizes, nc * sizeof *ns);
            if (ns) a->sizes = ns;
            int64_t *nm = ns ? pch_realloc(a->s->ctx, a->mtimes, nc * sizeof *nm) : NULL;
            if (nm) a->mtimes = nm;
            if (!nm) return pch_error_set(a->err, PCH_ENOMEM, "atif: out of memory");
        }
        a->cap_paths = nc;
    }
    if (!(a->paths[a->n_paths] = xdup(a->s->ctx, path))) return pch_error_set(a->err, PCH_ENOMEM, "atif: out of memory");
    if (defer) {
        a->sizes[a->n_paths] = (uint64_t)st->st_size;
        a->mtimes[a->n_paths] = mtime_ns_of(st);
    }
    a->n_paths++;
    return PCH_OK;
}

/* The listing walk of a deferred select on two threads, the second half appended to a's. */
static int walk_listing(ahead *a)
{
    ahead b;
    pch_error e1;
    int rc;
    memset(&b, 0, sizeof b);
    b.s = a->s;
    b.err = &e1;
    pch_error_clear(&e1);
    rc = pch_atif__walk2(a->s->ctx, a->s->root, collect_path, a, &b, a->err, &e1);
    if (rc == PCH_OK && b.n_paths) {
        size_t n = a->n_paths + b.n_paths;
        char **np = pch_realloc(a->s->ctx, a->paths, n * sizeof *np);
        uint64_t *ns = np ? pch_realloc(a->s->ctx, a->sizes, n * sizeof *ns) : NULL;
        int64_t *nm = ns ? pch_realloc(a->s->ctx, a->mtimes, n * sizeof *nm) : NULL;
        if (np) a->paths = np;
        if (ns) a->sizes = ns;
        if (nm) a->mtimes = nm;
        if (!nm) {
            rc = pch_error_set(a->err, PCH_ENOMEM, "atif: out of memory");
        } else {
            memcpy(a->paths + a->n_paths, b.paths, b.n_paths * sizeof *np);
            memcpy(a->sizes + a->n_paths, b.sizes, b.n_paths * sizeof *ns);
            memcpy(a->mtimes + a->n_paths, b.mtimes, b.n_paths * sizeof *nm);
            a->n_paths = n;
            a->cap_paths = n;
            b.n_paths = 0;      /* the paths are a's now */
        }
    }
    for (size_t i = 0; i < b.n_paths; i++) pch_free(a->s->ctx, b.paths[i]);
    pch_free(a->s->ctx, b.paths);
    pch_free(a->s->ctx, b.sizes);
    pch_free(a->s->ctx, b.mtimes);
    return rc;
}

/* The deferred select: walked once, then select over the listed files in path order; the
** paths not selected are dropped. */
static int select_listed(ahead *a)
{
    size_t keep = 0;
    int rc = call_walked(a->s);
    for (size_t i = 0; i < a->n_paths; i++) {
        int sel = rc == PCH_OK ? select_file(a->s, a->paths[i], a->sizes[i], a->mtimes[i]) : 0;
        if (sel < 0) rc = sel;
        if (sel > 0) a->paths[keep++] = a->paths[i];
        else pch_free(a->s->ctx, a->paths[i]);
    }
    a->n_paths = keep;
    return rc;
}

static int keep_finding(const pch_atif_finding *f, void *payload)
{
    ahead_slot *sl = payload;
    kept_finding *k;
    if (sl->n_f == sl->cap_f) {
        size_t nc = sl->cap_f ? sl->cap_f * 2 : 8;
        kept_finding *nf = realloc(sl->f, nc * sizeof *nf);
        if (!nf) return 1;
        sl->f = nf;
        sl->cap_f = nc;
    }
    k = &sl->f[sl->n_f];
    k->severity = f->severity;
    k->code = strdup(f->code ? f->code : "");
    k->file = strdup(f->file ? f->file : "");
    k->pointer = strdup(f->pointer ? f->pointer : "");
    k->message = strdup(f->message ? f->message : "");
    if (!k->code || !k->file || !k->pointer || !k->message) {
        free(k->code); free(k->file); free(k->pointer); free(k->message);
        return 1;
    }
    sl->n_f++;
    return 0;
}

static void slot_clear(ahead_slot *sl)
{
    for (size_t i = 0; i < sl->n_f; i++) {
        free(sl->f[i].code); free(sl->f[i].file); free(sl->f[i].pointer); free(sl->f[i].message);
    }
    sl->n_f = 0;
    if (sl->doc) pch_atif_doc_free(sl->doc);
    sl->doc = NULL;
    sl->state = 0;
}

static void *ahead_worker(void *arg)
{
    ahead *a = arg;
    const dir_state *s = a->s;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        size_t idx;
        ahead_slot *sl;
        while (!a->stop && a->next < a->n_paths && a->next >= a->consumed + a->window) {
            a->workers_waiting++;
            pthread_cond_wait(&a->cv, &a->mu);
            a->workers_waiting--;
        }
        if (a->stop || a->next >= a->n_paths) break;
        idx = a->next++;
        sl = &a->slot[idx % a->window];
        sl->state = 1;
        sl->idx = idx;
        pthread_mutex_unlock(&a->mu);
        sl->rc = read_doc(s, a->paths[idx], &sl->doc, &sl->read_ok, &sl->bytes, s->findings ? keep_finding : NULL, sl,
                          &sl->err);
        pthread_mutex_lock(&a->mu);
        sl->state = 2;
        if (a->main_waiting) pthread_cond_signal(&a->cv_main);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static int walk_ahead(dir_state *s, unsigned threads)
{
    ahead a;
    pthread_t th[16];
    unsigned nt = 0;
    int rc;
    memset(&a, 0, sizeof a);
    a.s = s;
    a.err = s->err;
    if (defers_select(s)) {
        /* the walk only lists: two threads list the halves of the tree, then select asks */
        rc = walk_listing(&a);
        if (rc == PCH_OK) rc = select_listed(&a);
    } else {
        rc = pch_atif__walk(s->ctx, s->root, collect_path, &a, s->err);
    }
    if (threads > 16) threads = 16;
    a.window = 4 * (size_t)threads;
    if (rc == PCH_OK && !(a.slot = calloc(a.window, sizeof *a.slot))) rc = pch_error_set(s->err, PCH_ENOMEM, "atif: out of memory");
    if (rc == PCH_OK) {
        pthread_mutex_init(&a.mu, NULL);
        pthread_cond_init(&a.cv, NULL);
        pthread_cond_init(&a.cv_main, NULL);
        for (unsigned t = 0; t < threads; t++)
            if (pthread_create(&th[nt], NULL, ahead_worker, &a) == 0) nt++;
        if (!nt) rc = pch_error_set(s->err, PCH_ENOMEM, "atif: cannot start parsing threads");
        for (size_t i = 0; i < a.n_paths && rc == PCH_OK; i++) {
            ahead_slot *sl = &a.slot[i % a.window];
            pch_atif_doc *d;
            pthread_mutex_lock(&a.mu);
            while (!(sl->state == 2 && sl->idx == i)) {
                a.main_waiting = true;
                pthread_cond_wait(&a.cv_main, &a.mu);
                a.main_waiting = false;
            }
            pthread_mutex_unlock(&a.mu);
            for (size_t k = 0; k < sl->n_f && rc == PCH_OK; k++) {
                pch_atif_finding f = { sl->f[k].severity, sl->f[k].code, sl->f[k].file, sl->f[k].pointer, sl->f[k].message };
                if (s->findings(&f, s->payload) != 0) rc = pch_error_set(s->err, PCH_ECANCELED, "atif: stopped by the findings callback");
            }
            if (rc == PCH_OK) {
                d = sl->doc;
                sl->doc = NULL;
                rc = take_doc(s, a.paths[i], sl->rc, sl->read_ok, sl->bytes, d, &sl->err);
            }
            pthread_mutex_lock(&a.mu);
            slot_clear(sl);
            a.consumed = i + 1;
            /* wake the parsers once half the window is free, not at every document (a futex
            ** wake per document was ~3 % of a build's CPU); every document up to `next` is
            ** already being parsed, so they are woken before this thread could need them */
            if (a.workers_waiting && a.next - a.consumed <= a.window / 2) pthread_cond_broadcast(&a.cv);
            pthread_mutex_unlock(&a.mu);
        }
        pthread_mutex_lock(&a.mu);
        a.stop = true;
        pthread_cond_broadcast(&a.cv);
        pthread_mutex_unlock(&a.mu);
        for (unsigned t = 0; t < nt; t++) pthread_join(th[t], NULL);
        for (size_t k = 0; k < a.window; k++) { slot_clear(&a.slot[k]); free(a.slot[k].f); }
        pthread_mutex_destroy(&a.mu);
        pthread_cond_destroy(&a.cv);
        pthread_cond_destroy(&a.cv_main);
    }
    for (size_t i = 0; i < a.n_paths; i++) pch_free(s->ctx, a.paths[i]);
    pch_free(s->ctx, a.paths);
    pch_free(s->ctx, a.sizes);
    pch_free(s->ctx, a.mtimes);
    free(a.slot);
    return rc;
}

static int cmp_doc(const void *a, const void *b)
{
    return strcmp(((const docmap *)a)->path, ((const docmap *)b)->path);
}

int pch_atif_dir_import(pch_ctx *ctx, const char *root, const pch_atif_options *opts,
                        int (*on_doc)(pch_atif_doc *doc, void *payload),
                        int (*on_link)(const pch_atif_link *link, void *payload),
                        pch_atif_finding_cb findings, void *payload,
                        pch_atif_dir_stats *stats, pch_error *err)
{
    dir_state s;
    pch_atif_dir_stats local;
    int rc;
    memset(&s, 0, sizeof s);
    memset(&local, 0, sizeof local);
    s.ctx = ctx;
    s.root = root;
    s.root_len = strlen(root);
    s.opts = opts;
    s.on_doc = on_doc;
    s.on_link = on_link;
    s.findings = findings;
    s.payload = payload;
    s.st = stats ? stats : &local;
    memset(s.st, 0, sizeof *s.st);
    s.err = err;
    if (opts && opts->version >= 2 && opts->threads > 1) rc = walk_ahead(&s, opts->threads);
    else if ((rc = defers_select(&s) ? call_walked(&s) : PCH_OK) == PCH_OK)
        rc = pch_atif__walk(ctx, root, on_file, &s, err);
    if (rc == PCH_OK && s.n_docs > 1) qsort(s.docs, s.n_docs, sizeof(*s.docs), cmp_doc);
    for (size_t i = 0; i < s.n_pend && rc == PCH_OK; i++) {
        pending *p = &s.pend[i];
        pch_atif_link l;
        const docmap *hit = NULL;
        if (p->target_doc) {
            docmap key = { p->target_doc, NULL, NULL };
            hit = s.n_docs ? bsearch(&key, s.docs, s.n_docs, sizeof(*s.docs), cmp_doc) : NULL;
        }
        memset(&l, 0, sizeof l);
        l.kind = p->kind;
        l.from_doc = p->from_doc;
        l.from_run_key = p->from_run;
        l.from_trajectory_key = p->from_traj;
        l.step_ordinal = p->step; l.result_ordinal = p->result; l.ref_ordinal = p->ref;
        l.target = p->target;
        l.target_doc = p->target_doc;
        l.to_run_key = hit ? hit->run : NULL;
        l.to_trajectory_key = hit ? hit->traj : NULL;
        s.st->links++;
        if (!hit) s.st->unresolved_links++;
        if (on_link) {
            int r = on_link(&l, payload);
            if (r < 0) rc = pch_error_set(err, r, "atif: import stopped by the link callback");
        }
    }
    for (size_t i = 0; i < s.n_pend; i++) {
        pch_free(ctx, s.pend[i].from_doc); pch_free(ctx, s.pend[i].from_run);
        pch_free(ctx, s.pend[i].from_traj); pch_free(ctx, s.pend[i].target);
        pch_free(ctx, s.pend[i].target_doc);
    }
    pch_free(ctx, s.pend);
    for (size_t i = 0; i < s.n_docs; i++) {
        pch_free(ctx, s.docs[i].path); pch_free(ctx, s.docs[i].run); pch_free(ctx, s.docs[i].traj);
    }
    pch_free(ctx, s.docs);
    pch_atif__keys_dispose(ctx, &s.keys);
    return rc;
}
