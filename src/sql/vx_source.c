/* The storyline relations over a Vortex projection root (RFC-0006 §13.1; docs/sql.md
** "Vortex projection"): the SQLite module "vortex", a document source for vtab.c.
**
** CREATE VIRTUAL TABLE t USING vortex('ROOT', 'runs'|'steps'|'tool_calls'|'observation_results'
**                                          |'trajectories')
**
** Each virtual table pins the snapshot CURRENT names when it connects. Three read paths:
** narrow column sets of steps and tool_calls come straight from the lanes ("narrow scans"
** below), `trajectories` from the id and summary lanes, and everything else from documents:
** a cursor reads the
** document roots in storage order (each cluster decoded once), rebuilds each document from
** its lanes (pch_vxp_get_doc, every value hydrated and checked), parses it as the importers
** do, gives every trajectory the key the projection stored for it (a key made unique across
** documents at build time is not derivable from the document alone), and computes the
** Storyline rows with the importer's own code (pch_storyline_rowgen): the columns, types,
** null semantics and values of docs/storyline.md §2 by construction. Embedded assets get
** the object id a Storyline root gives them (both are the BLAKE3 of the bytes).
**
** Built into libpchronicle-vortex (the pchronicle CLI links no Vortex code, §3.6). */
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pchronicle/atif.h"
#include "pchronicle/sql.h"
#include "pchronicle/storyline.h"
#include "pchronicle-vortex/projection.h"
#include "sql/sql_int.h"

/* Process-wide counts for --stats (pch_vxp_sql_counters). */
static _Atomic uint64_t g_docs_rebuilt, g_lane_clusters, g_bytes_read, g_bytes_checked, g_blobs;

void pch_vxp_sql_counters(uint64_t *docs_rebuilt, uint64_t *lane_clusters)
{
    *docs_rebuilt = g_docs_rebuilt;
    *lane_clusters = g_lane_clusters;
}

void pch_vxp_sql_bytes(uint64_t *bytes_read, uint64_t *bytes_checked, uint64_t *blobs_hydrated)
{
    *bytes_read = g_bytes_read;
    *bytes_checked = g_bytes_checked;
    *blobs_hydrated = g_blobs;
}

/* ---- --explain (pch_vxp_sql_explain): one entry per distinct scan a statement made ----
** An entry is a text saying which relation, which read path and lanes, and where each pushed
** predicate went; scans with the same text add up (a join filters its inner table once per
** outer row). Process-wide, as the counters: the SQL of one process runs on one thread. */
typedef struct xp_entry {
    char *what;
    uint64_t scans, found;          /* xFilter calls; documents found by key */
    pch_vxp_lanes_stats st;
} xp_entry;
static xp_entry *g_xp;
static size_t g_n_xp;
static bool g_xp_on;

void pch_vxp_sql_explain_begin(void)
{
    for (size_t i = 0; i < g_n_xp; i++) free(g_xp[i].what);
    free(g_xp);
    g_xp = NULL;
    g_n_xp = 0;
    g_xp_on = true;
}

/* The index of the entry whose text is b's (added if new); -1 when not explaining or out
** of memory (an index: the entries move as they grow). */
static long xp_note(pch_buf *b)
{
    xp_entry *e;
    if (!g_xp_on || b->oom || pch_buf_putc(b, 0) < 0) return -1;
    for (size_t i = 0; i < g_n_xp; i++)
        if (strcmp(g_xp[i].what, (const char *)b->data) == 0) { g_xp[i].scans++; return (long)i; }
    if (!(e = realloc(g_xp, (g_n_xp + 1) * sizeof *g_xp))) return -1;
    g_xp = e;
    e = &g_xp[g_n_xp];
    memset(e, 0, sizeof *e);
    if (!(e->what = malloc(b->len))) return -1;
    memcpy(e->what, b->data, b->len);
    e->scans = 1;
    return (long)g_n_xp++;
}

void pch_vxp_sql_explain_end(FILE *out)
{
    for (size_t i = 0; i < g_n_xp; i++) {
        const xp_entry *e = &g_xp[i];
        fprintf(out, "%s\n  scans: %llu", e->what, (unsigned long long)e->scans);
        if (e->found) fprintf(out, "; documents found: %llu", (unsigned long long)e->found);
        if (e->st.clusters)
            fprintf(out, "; clusters: %llu considered, %llu pruned by zone maps, %llu pruned by summaries, %llu decoded"
                         "; trajectory pages tested: %llu, ruled out: %llu; summaries held decoded: %llu clusters",
                    (unsigned long long)e->st.clusters, (unsigned long long)e->st.clusters_zone_pruned,
                    (unsigned long long)e->st.clusters_summary_pruned, (unsigned long long)e->st.clusters_read,
                    (unsigned long long)e->st.rows, (unsigned long long)e->st.rows_pruned,
                    (unsigned long long)e->st.clusters_summary_warm);
        if (e->st.clusters_fetched_ahead)
            fprintf(out, "; fetched ahead, concurrently: %llu clusters", (unsigned long long)e->st.clusters_fetched_ahead);
        fputc('\n', out);
    }
    fprintf(out, "totals: documents rebuilt %llu, clusters decoded lane by lane %llu, bytes read %llu, bytes checked %llu, "
                 "external values hydrated %llu\n",
            (unsigned long long)g_docs_rebuilt, (unsigned long long)g_lane_clusters,
            (unsigned long long)g_bytes_read, (unsigned long long)g_bytes_checked, (unsigned long long)g_blobs);
    pch_vxp_sql_explain_begin();
    g_xp_on = false;
}

/* One --explain line: "  pushed col op literal -> where (SQLite re-checks)". */
static void xp_cons(pch_buf *b, const char *col, const pch_sql_cons *c, const char *where)
{
    static const char ops[] = "=><gl L";
    static const char *const names[] = { "=", ">", "<", ">=", "<=", "", "LIKE" };
    const char *op = "?";
    for (int i = 0; ops[i]; i++) if (ops[i] == c->op) op = names[i];
    pch_buf_printf(b, "\n  pushed %s %s ", col, op);
    switch (sqlite3_value_type(c->v)) {
    case SQLITE_INTEGER: pch_buf_printf(b, "%lld", (long long)sqlite3_value_int64(c->v)); break;
    case SQLITE_FLOAT: pch_buf_printf(b, "%.17g", sqlite3_value_double(c->v)); break;
    case SQLITE_TEXT: pch_buf_printf(b, "'%.*s'", sqlite3_value_bytes(c->v), (const char *)sqlite3_value_text(c->v)); break;
    default: pch_buf_printf(b, "(a blob or NULL)"); break;
    }
    pch_buf_printf(b, " -> %s (every row re-checked)", where);
}

typedef struct vx_src {
    pch_ctx *ctx;
    pch_vxp_snapshot *snap;
    uint64_t *docs;                 /* document roots, storage order */
    uint64_t n_docs;
    uint64_t *by_path;              /* positions in docs, sorted by document path */
    pch_vxp_doc doc;                /* the document being turned into rows */
    pch_buf assets;                 /* its assets: (u32 path length, path, 32-byte id)... */
} vx_src;

static void vx_close(void *h);

static const char *doc_path_of(vx_src *s, uint64_t pos)
{
    const char *p = "";
    pch_error e;
    (void)pch_vxp_entry(s->snap, s->docs[pos], NULL, NULL, NULL, &p, NULL, &e);  /* loaded */
    return p;
}

static int cmp_path(const void *a, const void *b, void *arg)
{
    vx_src *s = arg;
    return strcmp(doc_path_of(s, *(const uint64_t *)a), doc_path_of(s, *(const uint64_t *)b));
}

/* The snapshot a session's relations open (pch_sql__vx_pin): set while they connect, so every
** relation reads the snapshot the engine's handle pinned even if CURRENT moves meanwhile. */
static _Thread_local const char *g_pin;

void pch_sql__vx_pin(void *h)
{
    g_pin = h ? pch_vxp_snapshot_id(((vx_src *)h)->snap) : NULL;
}

void pch_sql__vx_pin_id(const char *snapshot_id)
{
    g_pin = snapshot_id;
}

static int vx_open(void **h, pch_ctx *ctx, const char *path, pch_error *err)
{
    vx_src *s = pch_calloc(ctx, 1, sizeof *s);
    int rc;
    *h = NULL;
    if (!s) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    s->ctx = ctx;
    pch_buf_init(&s->assets, ctx);
    rc = pch_vxp_snapshot_open_at(&s->snap, ctx, path, g_pin, err);
    if (rc < 0) {
        vx_close(s);
        return rc;
    }
    *h = s;
    return PCH_OK;
}

/* The document list (storage order) and its path index, made on first use: a narrow scan
** reads lanes only and never needs them (they read every directory shard). */
static int ensure_docs(vx_src *s, bool by_path, pch_error *err)
{
    if (!s->docs) PCH_TRY(pch_vxp_documents(s->snap, &s->docs, &s->n_docs, err));
    if (by_path && !s->by_path) {
        if (!(s->by_path = pch_malloc(s->ctx, (size_t)(s->n_docs ? s->n_docs : 1) * 8)))
            return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
        for (uint64_t i = 0; i < s->n_docs; i++) s->by_path[i] = i;
        qsort_r(s->by_path, (size_t)s->n_docs, 8, cmp_path, s);
    }
    return PCH_OK;
}

static void vx_close(void *h)
{
    vx_src *s = h;
    if (s->snap) {
        pch_vxp_query_stats q;
        pch_vxp_snapshot_stats(s->snap, &q);
        g_bytes_read += q.bytes_read;
        g_bytes_checked += q.bytes_checked;
        g_blobs += q.blobs_hydrated;
        pch_vxp_doc_dispose(s->snap, &s->doc);
    }
    pch_vxp_snapshot_free(s->snap);
    pch_free(s->ctx, s->docs);
    pch_free(s->ctx, s->by_path);
    pch_buf_dispose(&s->assets);
    pch_free(s->ctx, s);
}

static int collect_asset(const uint8_t id[32], const char *p, size_t n, void *payload)
{
    pch_buf *b = payload;
    uint8_t len[4];
    pch_store_le32(len, (uint32_t)n);
    if (pch_buf_append(b, len, 4) < 0 || pch_buf_append(b, p, n) < 0 || pch_buf_append(b, id, 32) < 0)
        return PCH_ENOMEM;
    return 0;
}

/* Resolver of the row generator: the embedded asset of this document with that path. */
static bool vx_asset(const char *doc_path, const char *path, size_t path_len, char id_hex[65], void *payload)
{
    vx_src *s = payload;
    const uint8_t *p = s->assets.data, *end = p + s->assets.len;
    (void)doc_path;                 /* only the current document's assets were collected */
    while (p && end - p >= 4) {
        uint32_t n = pch_load_le32(p);
        if ((size_t)(end - p) < 4 + (size_t)n + 32) break;
        if (n == path_len && memcmp(p + 4, path, n) == 0) {
            pch_hex_encode(id_hex, p + 4 + n, 32);
            id_hex[64] = 0;
            return true;
        }
        p += 4 + n + 32;
    }
    return false;
}

static int vx_next(void *h, uint64_t *pos, pch_storyline_rowgen *g, bool content, bool *eof, pch_error *err)
{
    vx_src *s = h;
    pch_atif_doc *d = NULL;
    int rc;
    PCH_TRY(ensure_docs(s, false, err));
    *eof = *pos >= s->n_docs;
    if (*eof) return PCH_OK;
    pch_vxp_doc_dispose(s->snap, &s->doc);
    pch_buf_clear(&s->assets);
    PCH_TRY(pch_vxp_get_atif_as(s->snap, s->docs[*pos], content ? PCH_VXP_FULL : PCH_VXP_METADATA, &s->doc, &d, err));
    g_docs_rebuilt++;
    rc = PCH_OK;
    for (size_t i = 0; i < s->doc.n_rows && rc == PCH_OK; i++) {
        rc = pch_vxp_each_asset(s->snap, s->doc.rows[i], collect_asset, &s->assets, err);
        if (rc == PCH_ENOMEM) pch_error_set(err, rc, "vortex sql: out of memory");
    }
    if (rc == PCH_OK) rc = pch_storyline_rowgen_add(g, d, err);
    pch_atif_doc_free(d);
    if (rc < 0) return rc;
    (*pos)++;
    return PCH_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Documents holding trajectory key `key`: the directory finds its trajectories (§13.3 key
** equality through the directory), their document paths name the documents. */
static int find_docs(vx_src *s, const char *key, size_t key_len, uint64_t **pos, size_t *n, pch_error *err);

static int vx_find(void *h, const char *rel, const char *key, size_t key_len, uint64_t **pos, size_t *n, pch_error *err)
{
    int rc = find_docs(h, key, key_len, pos, n, err);
    if (rc == PCH_OK && g_xp_on) {
        pch_buf b;
        long x;
        pch_buf_init(&b, ((vx_src *)h)->ctx);
        pch_buf_printf(&b, "%s: documents holding the key (trajectory_key = '%.*s' through the trajectory directory), "
                           "each rebuilt; the other predicates on its rows (SQLite re-checks)", rel, (int)key_len, key);
        if ((x = xp_note(&b)) >= 0) g_xp[x].found += *n;
        pch_buf_dispose(&b);
    }
    return rc;
}

static int find_docs(vx_src *s, const char *key, size_t key_len, uint64_t **pos, size_t *n, pch_error *err)
{
    uint64_t idx[64], *out;
    size_t got = 0, k = 0;
    char *z;
    int rc;
    *pos = NULL;
    *n = 0;
    PCH_TRY(ensure_docs(s, true, err));
    if (!(z = pch_malloc(s->ctx, key_len + 1))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    memcpy(z, key, key_len);
    z[key_len] = 0;
    rc = strlen(z) == key_len ? pch_vxp_lookup(s->snap, z, idx, 64, &got, err) : PCH_ENOTFOUND;
    pch_free(s->ctx, z);
    if (rc == PCH_ENOTFOUND) { got = 0; rc = PCH_OK; }
    if (rc < 0) return rc;
    if (got > 64) {                 /* a key shared by many: read every document */
        if (!(out = pch_malloc(s->ctx, (size_t)(s->n_docs ? s->n_docs : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
        for (uint64_t i = 0; i < s->n_docs; i++) out[i] = i;
        *pos = out;
        *n = (size_t)s->n_docs;
        return PCH_OK;
    }
    if (!(out = pch_malloc(s->ctx, (got ? got : 1) * 8))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    for (size_t i = 0; i < got; i++) {
        const char *dp = NULL;
        size_t lo = 0, hi = (size_t)s->n_docs;
        if ((rc = pch_vxp_entry(s->snap, idx[i], NULL, NULL, NULL, &dp, NULL, err)) < 0) { pch_free(s->ctx, out); return rc; }
        while (lo < hi) {           /* binary search of the document path */
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp(doc_path_of(s, s->by_path[mid]), dp);
            if (c == 0) { lo = mid; break; }
            if (c < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < s->n_docs && strcmp(doc_path_of(s, s->by_path[lo]), dp) == 0) out[k++] = s->by_path[lo];
    }
    qsort(out, k, 8, cmp_u64);
    *n = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || out[i] != out[i - 1]) out[(*n)++] = out[i];
    *pos = out;
    return PCH_OK;
}

/* ---- narrow scans straight from the lanes (§13.2, §13.3) ----
**
** When every column a statement uses (and every pushed one) of steps or tool_calls is one the
** lanes hold as typed values, or the step's message, the rows come from a lane scan of each
** cluster: only those lanes are decoded, no document is rebuilt, and only a message read
** hydrates its external value (§13.6). Each column below takes
** the value the Storyline importer would put in it; the differential test
** (tests/cli/vortex_sql.sh) checks the two paths against a Storyline root. */

enum {                              /* the lanes a narrow scan may read */
    LN_SOURCE_ID, LN_RUN_KEY, LN_SESSION_ID, LN_TRAJ_KEY, LN_PAGE_INDEX, LN_STEP_ID, LN_TS_MS, LN_TS_TEXT,
    LN_SOURCE, LN_MODEL, LN_LLM, LN_COPIED, LN_PROMPT, LN_COMPLETION, LN_CACHED, LN_COST, LN_CALL_ID,
    LN_FUNCTION, LN_MSG,                /* LN_MSG .. LN_N: the message lanes (pch_vxp_message_lanes) */
    LN_N = LN_MSG + 9
};
static const char *const k_lane_path[LN_MSG] = {
    "id.source_id", "id.run_key", "id.session_id", "id.trajectory_key", "id.page_index", "steps.step_id",
    "steps.timestamp_ms", "steps.timestamp_text", "steps.source", "steps.model_name", "steps.llm_call_count",
    "steps.is_copied_context", "tokens.prompt_tokens", "tokens.completion_tokens", "tokens.cached_tokens",
    "tokens.cost_usd", "tools.tool_call_id", "tools.function_name"
};
/* The path of lane l: the message lanes' are the projection's (pch_vxp_message_lanes). */
static const char *lane_path(int l)
{
    const char *const *msg;
    if (l < LN_MSG) return k_lane_path[l];
    return (size_t)(l - LN_MSG) < pch_vxp_message_lanes(&msg) ? msg[l - LN_MSG] : "?";
}

/* Column name → (lanes it reads, kind). Kinds say how a value is made. */
enum { K_ID, K_ORDINAL, K_STEP_I64, K_STEP_STR, K_TS_TEXT, K_SOURCE, K_STEP_BOOL, K_STEP_F64, K_CALL_ORD,
       K_CALL_STR, K_HAS_CALLS, K_N_CALLS, K_MESSAGE };
typedef struct lane_col_def { const char *name; int kind, lane, lane2; } lane_col_def;
static const lane_col_def k_step_cols[] = {
    { "source_id", K_ID, LN_SOURCE_ID, -1 }, { "run_id", K_ID, LN_RUN_KEY, -1 },
    { "session_id", K_ID, LN_SESSION_ID, -1 }, { "trajectory_key", K_ID, LN_TRAJ_KEY, -1 },
    { "step_ordinal", K_ORDINAL, LN_STEP_ID, -1 }, { "step_id", K_STEP_I64, LN_STEP_ID, -1 },
    { "timestamp_ms", K_STEP_I64, LN_TS_MS, -1 }, { "timestamp", K_TS_TEXT, LN_TS_TEXT, LN_TS_MS },
    { "source", K_SOURCE, LN_SOURCE, -1 }, { "model_name", K_STEP_STR, LN_MODEL, -1 },
    { "prompt_tokens", K_STEP_I64, LN_PROMPT, -1 }, { "completion_tokens", K_STEP_I64, LN_COMPLETION, -1 },
    { "cached_tokens", K_STEP_I64, LN_CACHED, -1 }, { "cost_usd", K_STEP_F64, LN_COST, -1 },
    { "llm_call_count", K_STEP_I64, LN_LLM, -1 }, { "is_copied_context", K_STEP_BOOL, LN_COPIED, -1 },
    { "has_tool_calls", K_HAS_CALLS, LN_CALL_ID, -1 }, { "n_tool_calls", K_N_CALLS, LN_CALL_ID, -1 },
    /* content (§13.6): the message written from its lanes (pch_vxp_message_text) */
    { "message", K_MESSAGE, LN_MSG, -1 },
};
static const lane_col_def k_call_cols[] = {
    { "source_id", K_ID, LN_SOURCE_ID, -1 }, { "run_id", K_ID, LN_RUN_KEY, -1 },
    { "session_id", K_ID, LN_SESSION_ID, -1 }, { "trajectory_key", K_ID, LN_TRAJ_KEY, -1 },
    { "step_ordinal", K_ORDINAL, LN_STEP_ID, -1 }, { "step_id", K_STEP_I64, LN_STEP_ID, -1 },
    { "call_ordinal", K_CALL_ORD, LN_FUNCTION, -1 }, { "tool_call_id", K_CALL_STR, LN_CALL_ID, -1 },
    { "function_name", K_CALL_STR, LN_FUNCTION, -1 },
};

typedef struct out_col {            /* one output column, built per cluster */
    pch_buf val, off, data, valid;
} out_col;

struct pch_sql_lanes {
    vx_src *s;
    pch_storyline_table t;
    pch_lance_schema *schema;
    const lane_col_def *def[64];    /* per table column: how to make it, NULL = not read */
    int lane_at[LN_N];              /* lane → index in the scan, -1 = not read */
    pch_vxp_lanes *it;
    uint64_t step_base;             /* steps of the earlier pages of the current trajectory */
    /* identity of the current trajectory, from its first page: continuation pages carry
    ** only the keys (§7.2), and the first page may sit in an earlier cluster */
    pch_buf id_val[4];
    bool id_valid[4];
    /* the identities the current cluster's rows have: entry 0 the one carried in, one more
    ** per first page; per id column the entries' bytes, int64 offsets and validity bytes */
    pch_buf ent_data[4], ent_off[4], ent_ok[4];
    uint32_t n_ent;
    /* the current cluster's output rows: step item, call item, step ordinal, call position,
    ** identity entry (enum_rows) */
    uint64_t *r_step, *r_call, *r_ord, *r_cpos;
    uint32_t *r_ent;
    size_t r_cap;
    /* r_step / r_call are the identity (output row j is item j: every page kept, items in
    ** one run from 0) and not written; row_map writes them for a reader that needs them */
    bool step_ident, call_ident;
    /* a consumer that takes a live mask (mask_ok, the vectorised engine): a cluster whose
    ** pages the keep flags rule out are few (shadowed rows, §12.2) keeps them as output rows
    ** marked not live (r_live) so the identity holds; masked: this cluster has such rows */
    bool mask_ok, masked;
    uint8_t *r_live;
    uint64_t n_rows;
    /* the lane whose list gives each page's steps (the cheapest one read, lanes_open), and
    ** which of the r_* the columns read (enum_rows writes only those; r_call always) */
    int spine;
    bool need_step, need_ord, need_cpos, need_ent;
    /* per column its vector (vec_column) and the vector's own buffers; the dictionaries of
    ** the 'c' identity columns */
    pch_sql_vec v[64];
    out_col vcol[64];
    pch_buf v_dict[4], v_dict_n[4];
    out_col col[64];
    pch_lance_column lc[64];
    pch_lance_batch batch;
    uint8_t *zeros;                 /* validity of columns not read (all null) */
    size_t zeros_cap;
    struct traj_acc *acc;           /* the trajectories relation (or runs from it): not NULL */
    int traj_of[64];                /* runs from the summaries: runs column -> trajectories column, -1 */
    bool runs_view;
    long xp;                        /* its --explain entry, -1 */
    pch_vxp_content *content;       /* a content column is read (K_MESSAGE): its writer */
};

static const lane_col_def *find_def(pch_storyline_table t, const char *name)
{
    const lane_col_def *d = t == PCH_STORYLINE_STEPS ? k_step_cols : k_call_cols;
    size_t n = t == PCH_STORYLINE_STEPS ? sizeof k_step_cols / sizeof *d : sizeof k_call_cols / sizeof *d;
    for (size_t i = 0; i < n; i++) if (strcmp(d[i].name, name) == 0) return &d[i];
    return NULL;
}

static void traj_acc_free(pch_ctx *ctx, struct traj_acc *a);

static void lanes_close(pch_sql_lanes *c)
{
    if (!c) return;
    if (c->xp >= 0 && (size_t)c->xp < g_n_xp && c->it) {
        pch_vxp_lanes_stats st;
        pch_vxp_lanes_stats *t = &g_xp[c->xp].st;
        pch_vxp_lanes_stats_get(c->it, &st);
        t->clusters += st.clusters;
        t->clusters_zone_pruned += st.clusters_zone_pruned;
        t->clusters_summary_pruned += st.clusters_summary_pruned;
        t->clusters_read += st.clusters_read;
        t->rows += st.rows;
        t->rows_pruned += st.rows_pruned;
        t->clusters_summary_warm += st.clusters_summary_warm;
        t->clusters_fetched_ahead += st.clusters_fetched_ahead;
    }
    if (c->content) {
        uint64_t blobs, decoded;
        pch_vxp_content_stats(c->content, &blobs, &decoded);
        g_blobs += blobs;
        pch_vxp_content_free(c->content);
    }
    traj_acc_free(c->s->ctx, c->acc);
    pch_vxp_lanes_free(c->it);
    for (int i = 0; i < 64; i++) {
        pch_buf_dispose(&c->col[i].val); pch_buf_dispose(&c->col[i].off);
        pch_buf_dispose(&c->col[i].data); pch_buf_dispose(&c->col[i].valid);
        pch_buf_dispose(&c->vcol[i].val); pch_buf_dispose(&c->vcol[i].off);
        pch_buf_dispose(&c->vcol[i].data); pch_buf_dispose(&c->vcol[i].valid);
    }
    for (int i = 0; i < 4; i++) {
        pch_buf_dispose(&c->id_val[i]);
        pch_buf_dispose(&c->ent_data[i]); pch_buf_dispose(&c->ent_off[i]); pch_buf_dispose(&c->ent_ok[i]);
        pch_buf_dispose(&c->v_dict[i]); pch_buf_dispose(&c->v_dict_n[i]);
    }
    pch_free(c->s->ctx, c->r_step); pch_free(c->s->ctx, c->r_call); pch_free(c->s->ctx, c->r_ord);
    pch_free(c->s->ctx, c->r_cpos); pch_free(c->s->ctx, c->r_ent); pch_free(c->s->ctx, c->r_live);
    pch_lance_schema_free(c->schema);
    pch_free(c->s->ctx, c->zeros);
    pch_free(c->s->ctx, c);
}

static int runs_open(vx_src *s, uint64_t used, const pch_sql_cons *cons, int n_cons, pch_sql_lanes **out,
                     pch_error *err);

static const char *table_name(pch_storyline_table t)
{
    return t == PCH_STORYLINE_RUNS ? "runs" : t == PCH_STORYLINE_STEPS ? "steps" : "tool_calls";
}

/* --explain: a relation read from rebuilt documents because of column `why`. */
static void xp_documents(vx_src *s, pch_storyline_table t, const char *why, const pch_lance_schema *schema,
                         const pch_sql_cons *cons, int n_cons)
{
    pch_buf b;
    if (!g_xp_on) return;
    pch_buf_init(&b, s->ctx);
    pch_buf_printf(&b, "%s: every document rebuilt (column %s is read from documents)", table_name(t), why);
    for (int k = 0; k < n_cons; k++) {
        xp_cons(&b, schema->fields[cons[k].col].name, &cons[k], "the rows of each document");
    }
    (void)xp_note(&b);
    pch_buf_dispose(&b);
}

/* What the pushed constraints let a lane scan prune (§13.3), and for --explain where each
** went. Only a literal of the column's own type prunes (as pch_sql__test decides). */
static void prune_of(const pch_lance_schema *schema, const pch_sql_cons *cons, int n_cons, pch_vxp_prune *p,
                     pch_buf *why)
{
    for (int k = 0; k < n_cons; k++) {
        const pch_sql_cons *c = &cons[k];
        const char *name = schema->fields[c->col].name, *where = "the rows of each decoded cluster";
        int ty = sqlite3_value_type(c->v);
        const char *txt = ty == SQLITE_TEXT ? (const char *)sqlite3_value_text(c->v) : NULL;
        bool txt_ok = txt && strlen(txt) == (size_t)sqlite3_value_bytes(c->v) && c->op == '=';
        if (!strcmp(name, "timestamp_ms") && ty == SQLITE_INTEGER) {
            int64_t v = sqlite3_value_int64(c->v), lo = INT64_MIN, hi = INT64_MAX;
            bool ok = true;
            switch (c->op) {
            case '=': lo = hi = v; break;
            case 'g': lo = v; break;
            case '>': ok = v < INT64_MAX; lo = v + (ok ? 1 : 0); break;
            case 'l': hi = v; break;
            case '<': ok = v > INT64_MIN; hi = v - (ok ? 1 : 0); break;
            default: ok = false;
            }
            if (ok && lo != INT64_MIN && (!p->has_ts_lo || lo > p->ts_lo)) { p->ts_lo = lo; p->has_ts_lo = true; }
            if (ok && hi != INT64_MAX && (!p->has_ts_hi || hi < p->ts_hi)) { p->ts_hi = hi; p->has_ts_hi = true; }
            if (ok) where = "zone maps and summary lanes summary.min/max_timestamp_ms, then the rows";
        } else if (!strcmp(name, "source") && txt_ok) {
            p->source_bits = !strcmp(txt, "system") ? 2 : !strcmp(txt, "user") ? 4 : !strcmp(txt, "agent") ? 8 : 1;
            where = "summary lane summary.source_mask, then the rows";
        } else if (!strcmp(name, "model_name") && txt_ok) {
            p->model = txt;
            where = "model bloom summary.model_bloom, then the rows";
        } else if (!strcmp(name, "function_name") && txt_ok) {
            p->function = txt;
            where = "tool-name bloom summary.tool_bloom, then the rows";
        } else if (!strcmp(name, "is_copied_context") && ty == SQLITE_INTEGER && c->op == '=' &&
                   (sqlite3_value_int64(c->v) == 0 || sqlite3_value_int64(c->v) == 1)) {
            p->copied = (int)sqlite3_value_int64(c->v);
            where = "summary lane summary.copied_step_count, then the rows";
        }
        if (why) xp_cons(why, name, c, where);
    }
}

/* A new lane cursor with its output columns and identity buffers empty. */
static pch_sql_lanes *lanes_new(vx_src *s)
{
    pch_sql_lanes *c = pch_calloc(s->ctx, 1, sizeof *c);
    if (!c) return NULL;
    c->s = s;
    c->xp = -1;
    for (int i = 0; i < 64; i++) {
        pch_buf_init(&c->col[i].val, s->ctx); pch_buf_init(&c->col[i].off, s->ctx);
        pch_buf_init(&c->col[i].data, s->ctx); pch_buf_init(&c->col[i].valid, s->ctx);
        pch_buf_init(&c->vcol[i].val, s->ctx); pch_buf_init(&c->vcol[i].off, s->ctx);
        pch_buf_init(&c->vcol[i].data, s->ctx); pch_buf_init(&c->vcol[i].valid, s->ctx);
    }
    for (int i = 0; i < 4; i++) {
        pch_buf_init(&c->id_val[i], s->ctx);
        pch_buf_init(&c->ent_data[i], s->ctx); pch_buf_init(&c->ent_off[i], s->ctx); pch_buf_init(&c->ent_ok[i], s->ctx);
        pch_buf_init(&c->v_dict[i], s->ctx); pch_buf_init(&c->v_dict_n[i], s->ctx);
    }
    return c;
}

static int lanes_open(void *h, pch_storyline_table t, uint64_t used, const pch_sql_cons *cons, int n_cons,
                      pch_sql_lanes **out, pch_error *err)
{
    vx_src *s = h;
    pch_sql_lanes *c;
    const char *paths[LN_N];
    size_t n = 0;
    int rc;
    pch_vxp_prune pr = PCH_VXP_PRUNE_INIT;
    pch_buf why;
    *out = NULL;
    if (t == PCH_STORYLINE_RUNS) return runs_open(s, used, cons, n_cons, out, err);
    if (t != PCH_STORYLINE_STEPS && t != PCH_STORYLINE_TOOL_CALLS) return PCH_OK;
    if (!(c = lanes_new(s))) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    c->t = t;
    if ((rc = pch_storyline_table_schema(s->ctx, t, &c->schema, err)) < 0) { lanes_close(c); return rc; }
    for (int l = 0; l < LN_N; l++) c->lane_at[l] = -1;
    for (size_t i = 0; i < c->schema->n_fields && i < 64; i++) {
        if (!((used >> (i < 63 ? i : 63)) & 1)) continue;
        if (!(c->def[i] = find_def(t, c->schema->fields[i].name))) {    /* a wide column */
            xp_documents(s, t, c->schema->fields[i].name, c->schema, cons, n_cons);
            lanes_close(c);
            return PCH_OK;
        }
    }
    /* every page's index and its steps (the list of any step lane: tool calls read
    ** function_name's, steps the first step lane a column reads, else source's, the
    ** narrowest); the rest as used */
    c->lane_at[LN_PAGE_INDEX] = 0;
    if (t == PCH_STORYLINE_TOOL_CALLS) c->lane_at[LN_FUNCTION] = 0;
    for (size_t i = 0; i < 64; i++)
        if (c->def[i]) {
            const lane_col_def *d = c->def[i];
            c->lane_at[d->lane] = 0;
            if (d->lane2 >= 0) c->lane_at[d->lane2] = 0;
            if (d->kind == K_MESSAGE) for (int l = LN_MSG; l < LN_N; l++) c->lane_at[l] = 0;
            c->need_ent |= d->kind == K_ID;
            c->need_ord |= d->kind == K_ORDINAL;
            c->need_cpos |= d->kind == K_CALL_ORD;
            c->need_step |= d->lane >= LN_STEP_ID && d->kind != K_CALL_STR && d->kind != K_CALL_ORD && d->kind != K_ORDINAL;
        }
    c->spine = t == PCH_STORYLINE_TOOL_CALLS ? LN_FUNCTION : LN_SOURCE;
    for (int l = LN_STEP_ID; l < LN_N && t == PCH_STORYLINE_STEPS; l++)
        if (c->lane_at[l] == 0) { c->spine = l; break; }
    c->lane_at[c->spine] = 0;
    for (int l = 0; l < LN_N; l++)
        if (c->lane_at[l] == 0) { c->lane_at[l] = (int)n; paths[n++] = lane_path(l); }
    if ((rc = pch_vxp_lanes_open(&c->it, s->snap, paths, n, err)) < 0) { lanes_close(c); return rc; }
    if (c->lane_at[LN_MSG] >= 0) {
        const char *const *mp;
        if (pch_vxp_message_lanes(&mp) != LN_N - LN_MSG) rc = pch_error_set(err, PCH_EINVAL, "vortex sql: the message lanes are not the ones this scan knows");
        else rc = pch_vxp_content_open(&c->content, s->snap, err);
        if (rc < 0) { lanes_close(c); return rc; }
    }
    pch_buf_init(&why, s->ctx);
    pch_buf_printf(&why, "%s: narrow scan, no document rebuilt; lanes", table_name(t));
    for (size_t i = 0; i < n; i++) pch_buf_printf(&why, "%s %s", i ? "," : "", paths[i]);
    prune_of(c->schema, cons, n_cons, &pr, &why);
    rc = pch_vxp_lanes_prune(c->it, &pr, err);
    c->xp = rc == PCH_OK ? xp_note(&why) : -1;
    pch_buf_dispose(&why);
    if (rc < 0) { lanes_close(c); return rc; }
    *out = c;
    return PCH_OK;
}

static int put_val(out_col *o, const void *p, size_t n, bool valid)
{
    uint8_t v = valid;
    PCH_TRY(pch_buf_append(&o->valid, &v, 1));
    return pch_buf_append(&o->val, p, n);
}
static int put_var(out_col *o, const void *p, size_t n, bool valid)
{
    uint64_t end;
    uint8_t v = valid;
    if (o->off.len == 0) { uint64_t z = 0; PCH_TRY(pch_buf_append(&o->off, &z, 8)); }
    if (valid) PCH_TRY(pch_buf_append(&o->data, p, n));
    end = o->data.len;
    PCH_TRY(pch_buf_append(&o->valid, &v, 1));
    return pch_buf_append(&o->off, &end, 8);
}
static int traj_next(pch_sql_lanes *c, const pch_lance_batch **out, bool *eof, pch_error *err);

/* The next cluster's lanes, with the output columns emptied for its rows. */
static int next_cluster(pch_sql_lanes *c, const pch_vx_array *const **L, uint64_t *rows, bool *eof, pch_error *err)
{
    PCH_TRY(pch_vxp_lanes_next(c->it, L, rows, eof, err));
    if (*eof) return PCH_OK;
    g_lane_clusters++;
    for (int k = 0; k < 64; k++) {     /* only columns read fill buffers (all 64 were 3 % of a scan) */
        out_col *o = &c->col[k];
        if (!o->val.len && !o->off.len && !o->data.len && !o->valid.len) continue;
        pch_buf_clear(&o->val); pch_buf_clear(&o->off); pch_buf_clear(&o->data); pch_buf_clear(&o->valid);
    }
    return PCH_OK;
}

/* The batch of the current cluster's rows (columns not read: all null). */
static int lanes_batch(pch_sql_lanes *c, uint64_t n_out, const pch_lance_batch **out, pch_error *err)
{
    if (n_out > c->zeros_cap) {
        pch_free(c->s->ctx, c->zeros);
        if (!(c->zeros = pch_calloc(c->s->ctx, (size_t)n_out, 1))) { c->zeros_cap = 0; return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory"); }
        c->zeros_cap = (size_t)n_out;
    }
    for (size_t k = 0; k < c->schema->n_fields && k < 64; k++) {
        pch_lance_column *lc = &c->lc[k];
        out_col *o = c->runs_view ? (c->traj_of[k] >= 0 ? &c->col[c->traj_of[k]] : NULL) : &c->col[k];
        memset(lc, 0, sizeof *lc);
        /* a message is its JSON text already (pch_vxp_message_text), not JSONB */
        lc->type = c->def[k] && c->def[k]->kind == K_MESSAGE ? PCH_LANCE_UTF8 : c->schema->fields[k].type;
        lc->n_rows = (size_t)n_out;
        if (!o || (!c->def[k] && !c->acc)) { lc->validity = c->zeros; continue; }
        if (o->val.oom || o->off.oom || o->data.oom || o->valid.oom) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
        lc->validity = o->valid.data;
        lc->values = o->val.data;
        lc->offsets = (const uint64_t *)(const void *)o->off.data;
        lc->data = o->data.data ? o->data.data : (const uint8_t *)"";
    }
    c->batch.n_rows = (size_t)n_out;
    c->batch.n_columns = c->schema->n_fields < 64 ? c->schema->n_fields : 64;
    c->batch.columns = c->lc;
    *out = &c->batch;
    return PCH_OK;
}

/* pch_vx_row_valid and pch_vx_list_range inline for the per-row loops of a scan (measured:
** the calls were 14 % of a tool_calls group-by); the same answers. */
static inline bool row_ok(const pch_vx_array *a, uint64_t i)
{
    if (!a || i >= a->len) return false;
    if (a->dtype->kind == PCH_VX_NULL || a->dtype->kind == PCH_VX_EXTENSION) return pch_vx_row_valid(a, i);
    return !a->validity || ((a->validity[i >> 3] >> (i & 7)) & 1);
}
static inline bool list_rng(const pch_vx_array *a, uint64_t i, uint64_t *b, uint64_t *e)
{
    if (!a || a->dtype->kind != PCH_VX_LIST || i >= a->len || !a->offsets) return pch_vx_list_range(a, i, b, e);
    *b = (uint64_t)a->offsets[i];
    *e = (uint64_t)a->offsets[i + 1];
    return *b <= *e && (!a->n_children || *e <= a->children[0]->len);
}

/* Entry n_ent of the identity table: the current identity (c->id_val). */
static int push_ent(pch_sql_lanes *c)
{
    for (int j = 0; j < 4; j++) {
        if (c->lane_at[LN_SOURCE_ID + j] < 0 && c->ent_off[j].len) continue;   /* not read: entry 0 serves */
        int64_t end;
        uint8_t ok = c->id_valid[j];
        if (c->ent_off[j].len == 0) { int64_t z = 0; PCH_TRY(pch_buf_append(&c->ent_off[j], &z, 8)); }
        if (ok) PCH_TRY(pch_buf_append(&c->ent_data[j], c->id_val[j].data, c->id_val[j].len));
        end = (int64_t)c->ent_data[j].len;
        PCH_TRY(pch_buf_append(&c->ent_off[j], &end, 8));
        PCH_TRY(pch_buf_append(&c->ent_ok[j], &ok, 1));
    }
    c->n_ent++;
    return PCH_OK;
}

static int grow_rows(pch_sql_lanes *c, uint64_t need)
{
    pch_ctx *ctx = c->s->ctx;
    size_t cap = c->r_cap ? c->r_cap : 1024;
    if (need <= c->r_cap) return PCH_OK;
    if (need > SIZE_MAX / 16) return PCH_ENOMEM;
    while (cap < need) cap *= 2;
    pch_free(ctx, c->r_step); pch_free(ctx, c->r_call); pch_free(ctx, c->r_ord);
    pch_free(ctx, c->r_cpos); pch_free(ctx, c->r_ent);
    c->r_step = pch_malloc(ctx, cap * 8);
    c->r_call = pch_malloc(ctx, cap * 8);
    c->r_ord = pch_malloc(ctx, cap * 8);
    c->r_cpos = pch_malloc(ctx, cap * 8);
    c->r_ent = pch_malloc(ctx, cap * 4);
    pch_free(ctx, c->r_live);
    c->r_live = pch_malloc(ctx, cap);
    c->r_cap = cap;
    if (!c->r_step || !c->r_call || !c->r_ord || !c->r_cpos || !c->r_ent || !c->r_live) { c->r_cap = 0; return PCH_ENOMEM; }
    return PCH_OK;
}

/* dst[0..count) = first, first + 1, ... and = v: by value, so the loops keep their bounds in
** registers (a bound whose address escaped was reloaded after every store) and vectorise. */
static void fill_seq(uint64_t *restrict dst, uint64_t first, uint64_t count)
{
    for (uint64_t k = 0; k < count; k++) dst[k] = first + k;
}

static void fill_const(uint64_t *restrict dst, uint64_t v, uint64_t count)
{
    for (uint64_t k = 0; k < count; k++) dst[k] = v;
}

static void fill_const32(uint32_t *restrict dst, uint32_t v, uint64_t count)
{
    for (uint64_t k = 0; k < count; k++) dst[k] = v;
}

/* The step (or call) item of every output row, written out when enum_rows left it the
** identity; NULL-aware readers (vec_ints, vec_codes) take the identity as NULL instead. */
static const uint64_t *row_map(pch_sql_lanes *c, bool call)
{
    bool *ident = call ? &c->call_ident : &c->step_ident;
    uint64_t *m = call ? c->r_call : c->r_step;
    if (*ident) { fill_seq(m, 0, c->n_rows); *ident = false; }
    return m;
}

/* The output rows of the cluster in L (storage order), into c->r_*: the steps (or calls) of
** every page the summaries keep, after checking that every lane read agrees with the spine lane on
** each page's steps (and the call lanes on each step's calls). */
static int enum_rows(pch_sql_lanes *c, const pch_vx_array *const *L, uint64_t rows, uint64_t *n_out, pch_error *err)
{
    const uint8_t *keep = pch_vxp_lanes_keep(c->it);
    const pch_vx_array *sl = L[c->lane_at[c->spine]], *pg = L[c->lane_at[LN_PAGE_INDEX]];
    const pch_vx_array *fs = c->t == PCH_STORYLINE_TOOL_CALLS ? pch_vx_list_items(L[c->lane_at[LN_FUNCTION]]) : NULL;
    uint64_t n = 0, most = c->t == PCH_STORYLINE_STEPS ? (pch_vx_list_items(sl) ? pch_vx_list_items(sl)->len : 0)
                                                       : (pch_vx_list_items(fs) ? pch_vx_list_items(fs)->len : 0);
    /* calls read for their own lanes only, no null call list: a kept page's calls are one run
    ** of the call items (decoded list offsets are sorted and in range); a page the keep flags
    ** rule out (pruned, or shadowed by a newer revision, §12.2) adds none */
    const bool runs = fs && !fs->validity && fs->dtype->kind == PCH_VX_LIST && fs->offsets &&
                      !c->need_step && !c->need_ord && !c->need_cpos && !c->need_ent && c->lane_at[LN_CALL_ID] < 0;
    int chk[LN_N], n_chk = 0;       /* the step lanes read beside the spine */
    for (int l = LN_STEP_ID; l < LN_N; l++) if (c->lane_at[l] >= 0 && l != c->spine) chk[n_chk++] = l;
    for (int j = 0; j < 4; j++) { pch_buf_clear(&c->ent_data[j]); pch_buf_clear(&c->ent_off[j]); pch_buf_clear(&c->ent_ok[j]); }
    c->n_ent = 0;
    c->step_ident = c->t == PCH_STORYLINE_STEPS;   /* a call's step is no identity */
    c->call_ident = true;
    c->masked = false;
    if (grow_rows(c, most) < 0 || push_ent(c) < 0) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    /* the pages ruled out stay as rows marked not live when they are at most half the
    ** cluster's (shadowed rows: a few per cluster); a scan the summaries prune hard skips
    ** them as before */
    bool use_mask = false;
    if (c->mask_ok && keep) {
        uint64_t kept = 0;
        for (uint64_t r = 0; r < rows; r++) kept += keep[r] != 0;
        use_mask = kept < rows && 2 * kept >= rows;
        c->masked = use_mask;
        /* every row live, then the ruled-out pages' rows cleared below (a few runs); the rows
        ** of a cluster are at most its items (list offsets are sorted and in range) */
        if (use_mask) memset(c->r_live, 1, (size_t)most);
    }
    for (uint64_t r = 0; r < rows; r++) {
        uint64_t sb, se;
        if (!list_rng(sl, r, &sb, &se) || !row_ok(pg, r))
            return pch_error_set(err, PCH_ECORRUPT, "vortex sql: a cluster's step lanes are malformed");
        /* every step lane read must agree with the spine on this row's steps */
        for (int k = 0; k < n_chk; k++) {
            uint64_t b, e;
            if (!list_rng(L[c->lane_at[chk[k]]], r, &b, &e) || b != sb || e != se)
                return pch_error_set(err, PCH_ECORRUPT, "vortex sql: lane %s disagrees with %s on the steps of a row", lane_path(chk[k]), lane_path(c->spine));
        }
        if (pch_vx_row_uint(pg, r) == 0) c->step_base = 0;
        if (pch_vx_row_uint(pg, r) == 0 && c->need_ent) {      /* a first page: its identity */
            for (int j = 0; j < 4; j++) {
                const pch_vx_array *a = c->lane_at[LN_SOURCE_ID + j] >= 0 ? L[c->lane_at[LN_SOURCE_ID + j]] : NULL;
                pch_buf_clear(&c->id_val[j]);
                c->id_valid[j] = row_ok(a, r) && a->offsets;
                if (c->id_valid[j] &&
                    pch_buf_append(&c->id_val[j], a->data + a->offsets[r], (size_t)(a->offsets[r + 1] - a->offsets[r])) < 0)
                    return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
            }
            if (push_ent(c) < 0) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
        }
        if (c->t == PCH_STORYLINE_STEPS) {
            if (se - sb > c->r_cap - n) return pch_error_set(err, PCH_ECORRUPT, "vortex sql: a cluster's step lanes are malformed");
            if (!keep || keep[r] || use_mask) {     /* a page the summaries rule out: none */
                if (c->step_ident && sb != n) { fill_seq(c->r_step, 0, n); c->step_ident = false; }
                if (!c->step_ident) fill_seq(c->r_step + n, sb, se - sb);
                if (c->need_ord) fill_seq(c->r_ord + n, c->step_base, se - sb);
                if (c->need_ent) fill_const32(c->r_ent + n, (uint32_t)(c->n_ent - 1), se - sb);
                if (use_mask && !keep[r]) memset(c->r_live + n, 0, (size_t)(se - sb));
                n += se - sb;
            }
            c->step_base += se - sb;
            continue;
        }
        if (runs && keep && !keep[r] && !use_mask) {
            c->step_base += se - sb;
            continue;
        }
        if (runs) {
            uint64_t cb = (uint64_t)fs->offsets[sb], ce = (uint64_t)fs->offsets[se];
            if (ce < cb || ce - cb > c->r_cap - n)
                return pch_error_set(err, PCH_ECORRUPT, "vortex sql: the calls of a step are malformed");
            if (c->call_ident && cb != n) { fill_seq(c->r_call, 0, n); c->call_ident = false; }
            if (!c->call_ident) fill_seq(c->r_call + n, cb, ce - cb);
            if (use_mask && !keep[r]) memset(c->r_live + n, 0, (size_t)(ce - cb));
            n += ce - cb;
            c->step_base += se - sb;
            continue;
        }
        for (uint64_t si = sb; si < se && (!keep || keep[r] || use_mask); si++) {   /* a page the summaries rule out: none */
            uint64_t sord = c->step_base + (si - sb), cb = 0, ce = 0;
            if (row_ok(fs, si) && !list_rng(fs, si, &cb, &ce))
                return pch_error_set(err, PCH_ECORRUPT, "vortex sql: the calls of a step are malformed");
            if (c->lane_at[LN_CALL_ID] >= 0) {      /* the call lanes agree on each step's calls */
                const pch_vx_array *ids = pch_vx_list_items(L[c->lane_at[LN_CALL_ID]]);
                uint64_t ib = 0, ie = 0;
                if (row_ok(ids, si) && !list_rng(ids, si, &ib, &ie)) ib = ie = UINT64_MAX;
                if (ie - ib != ce - cb)
                    return pch_error_set(err, PCH_ECORRUPT, "vortex sql: tool_call_id disagrees with function_name on a step's calls");
            }
            if (ce < cb || ce - cb > c->r_cap - n)
                return pch_error_set(err, PCH_ECORRUPT, "vortex sql: the calls of a step are malformed");
            if (c->call_ident && cb != n) { fill_seq(c->r_call, 0, n); c->call_ident = false; }
            if (!c->call_ident) fill_seq(c->r_call + n, cb, ce - cb);
            if (c->need_step) fill_const(c->r_step + n, si, ce - cb);
            if (c->need_ord) fill_const(c->r_ord + n, sord, ce - cb);
            if (c->need_cpos) fill_seq(c->r_cpos + n, 0, ce - cb);
            if (c->need_ent) fill_const32(c->r_ent + n, (uint32_t)(c->n_ent - 1), ce - cb);
            if (use_mask && !keep[r]) memset(c->r_live + n, 0, (size_t)(ce - cb));
            n += ce - cb;
        }
        c->step_base += se - sb;
    }
    *n_out = c->n_rows = n;
    return PCH_OK;
}

/* ---- vector scans (sql_int.h; the vectorised engine of vx_exec.c) ----
** The rows enum_rows makes, handed out a column at a time: the one definition of each
** lane column's values (the SQLite path's batches are built from them, vec_to_batch). Text comes straight
** from the decoded lanes ('s' with the row's item index) or, for the identity columns and
** `source`, by code into a small dictionary ('c'). */

char pch_sql__vx_lane_kind(pch_storyline_table t, const char *column)
{
    const lane_col_def *d;
    if (t != PCH_STORYLINE_STEPS && t != PCH_STORYLINE_TOOL_CALLS) return 0;
    if (!(d = find_def(t, column))) return 0;
    switch (d->kind) {
    case K_ID: case K_STEP_STR: case K_TS_TEXT: case K_SOURCE: case K_CALL_STR: case K_MESSAGE: return 's';
    case K_STEP_F64: return 'f';
    default: return 'i';
    }
}

int pch_sql__vx_vec_open(void *h, pch_storyline_table t, uint64_t used, const pch_sql_cons *cons, int n_cons,
                         pch_sql_lanes **out, pch_error *err)
{
    static const int k_coded[] = { LN_MODEL, LN_FUNCTION, LN_CALL_ID };
    *out = NULL;
    if (t != PCH_STORYLINE_STEPS && t != PCH_STORYLINE_TOOL_CALLS) return PCH_OK;
    PCH_TRY(lanes_open(h, t, used, cons, n_cons, out, err));
    /* the vectors read these lanes' text through vec_codes alone (their list offsets are
    ** read as well): dictionary text stays as codes, no string is gathered (§13.3) */
    for (size_t i = 0; *out && i < sizeof k_coded / sizeof *k_coded; i++) {
        int at = (*out)->lane_at[k_coded[i]];
        int rc = at >= 0 ? pch_vxp_lanes_text_codes((*out)->it, (size_t)at, err) : PCH_OK;
        if (rc < 0) { lanes_close(*out); *out = NULL; return rc; }
    }
    return PCH_OK;
}

static void *vbuf(pch_buf *b, size_t n)
{
    pch_buf_clear(b);
    if (pch_buf_reserve(b, n ? n : 1) < 0) return NULL;
    b->len = n;
    return b->data;
}

/* Integers of items array a at rows idx[0..n) (NULL items: all null; pch_vx_row_valid,
** pch_vx_row_uint): a primitive array is read in place, one loop per
** width, instead of two calls per row. */
static void vec_ints(const pch_vx_array *a, const uint64_t *idx, uint64_t n, bool i32, int64_t *v, uint8_t *ok)
{
    if (a && a->dtype->kind == PCH_VX_PRIMITIVE) {
        const uint8_t *vb = a->validity, *d = a->data;
        uint64_t len = a->len;
        int w;
        switch (a->dtype->ptype) {
        case PCH_VX_U8: case PCH_VX_I8: w = 1; break;
        case PCH_VX_U16: case PCH_VX_I16: w = 2; break;
        case PCH_VX_U32: case PCH_VX_I32: w = 4; break;
        default: w = 8; break;
        }
        /* idx NULL: row j is item j (one loop without the index load, for the compiler to
        ** vectorise when there is no validity) */
#define VEC_INTS_ROW(R, LOAD)                                                                 \
        {                                                                                     \
            uint64_t r = (R);                                                                 \
            bool valid = r < len && (!vb || ((vb[r >> 3] >> (r & 7)) & 1));                   \
            int64_t x = valid ? (int64_t)(LOAD) : 0;                                          \
            v[j] = i32 ? (int32_t)x : x;                                                      \
            ok[j] = valid;                                                                    \
        }
#define VEC_INTS_LOOP(LOAD)                                                                   \
        if (!idx && !vb && n <= len)                                                          \
            for (uint64_t j = 0; j < n; j++) {                                                \
                uint64_t r = j;                                                               \
                int64_t x = (int64_t)(LOAD);                                                  \
                v[j] = i32 ? (int32_t)x : x;                                                  \
                ok[j] = 1;                                                                    \
            }                                                                                 \
        else if (!idx) for (uint64_t j = 0; j < n; j++) VEC_INTS_ROW(j, LOAD)                 \
        else for (uint64_t j = 0; j < n; j++) VEC_INTS_ROW(idx[j], LOAD)
        if (w == 1) { VEC_INTS_LOOP(d[r]); }
        else if (w == 2) { VEC_INTS_LOOP(pch_load_le16(d + 2 * r)); }
        else if (w == 4) { VEC_INTS_LOOP(pch_load_le32(d + 4 * r)); }
        else { VEC_INTS_LOOP(pch_load_le64(d + 8 * r)); }
#undef VEC_INTS_LOOP
#undef VEC_INTS_ROW
        return;
    }
    for (uint64_t j = 0; j < n; j++) {
        uint64_t r = idx ? idx[j] : j;
        bool valid = pch_vx_row_valid(a, r);
        int64_t x = valid ? (int64_t)pch_vx_row_uint(a, r) : 0;
        v[j] = i32 ? (int32_t)x : x;
        ok[j] = valid;
    }
}

/* The 'c' dictionary of identity column x: the cluster's entries. */
static int vec_ids(pch_sql_lanes *c, int x, pch_sql_vec *v)
{
    const char **p;
    size_t *pn;
    const int64_t *eo = (const int64_t *)(const void *)c->ent_off[x].data;
    if (!(p = vbuf(&c->v_dict[x], c->n_ent * sizeof *p)) || !(pn = vbuf(&c->v_dict_n[x], c->n_ent * sizeof *pn)))
        return PCH_ENOMEM;
    for (uint32_t e = 0; e < c->n_ent; e++) {
        p[e] = c->ent_ok[x].data[e] ? (const char *)c->ent_data[x].data + eo[e] : NULL;
        pn[e] = (size_t)(eo[e + 1] - eo[e]);
    }
    v->kind = 'c';
    v->code = c->r_ent;
    v->dict = p;
    v->dict_n = pn;
    v->n_dict = c->n_ent;
    return PCH_OK;
}

/* Text column x (gathered from a vortex.dict encoding, x->dict_codes) at rows idx[0..n) (NULL: 0..n-1) as
** codes into its dictionary ('c': entry 0 null, entry k + 1 dictionary row k), so the engine
** tests and groups each distinct value once (RFC-0006 §13.3) instead of hashing every row's
** bytes. The caller checked that the dictionary is no longer than the rows. */
static int vec_codes(out_col *o, pch_sql_vec *v, const pch_vx_array *x, const uint64_t *idx, uint64_t n)
{
    const pch_vx_array *dv = x->dict_values;
    uint64_t nd = dv->len;
    uint8_t *ok = o->valid.data;
    uint32_t *code = vbuf(&o->val, (size_t)n * 4);
    const char **p = vbuf(&o->off, (size_t)(nd + 1) * sizeof *p);
    size_t *pn = vbuf(&o->data, (size_t)(nd + 1) * sizeof *pn);
    bool all_ok = true;             /* no dictionary entry is null */
    if (!code || !p || !pn) return PCH_ENOMEM;
    p[0] = NULL;
    pn[0] = 0;
    for (uint64_t k = 0; k < nd; k++) {
        p[k + 1] = row_ok(dv, k) ? (dv->data ? (const char *)dv->data + dv->offsets[k] : "") : NULL;
        pn[k + 1] = p[k + 1] ? (size_t)(dv->offsets[k + 1] - dv->offsets[k]) : 0;
    }
    for (uint64_t k = 1; k <= nd && all_ok; k++) all_ok = p[k] != NULL;
    if (!idx && !x->validity && n <= x->len) {
        /* row j is item j: the decoder checked every code (< nd, or UINT32_MAX for null),
        ** so code + 1 wraps null to entry 0 exactly; two loops the compiler vectorises */
        const uint32_t *dc = x->dict_codes;
        for (uint64_t j = 0; j < n; j++) code[j] = dc[j] + 1u;
        if (all_ok) for (uint64_t j = 0; j < n; j++) ok[j] = code[j] != 0;
        else for (uint64_t j = 0; j < n; j++) ok[j] = p[code[j]] != NULL;
    } else if (!x->validity)    /* a null row has code UINT32_MAX as well: validity adds nothing */
        for (uint64_t j = 0; j < n; j++) {
            uint64_t r = idx ? idx[j] : j;
            uint32_t cd = r < x->len ? x->dict_codes[r] : UINT32_MAX;
            code[j] = cd < nd ? cd + 1 : 0;
            ok[j] = p[code[j]] != NULL;
        }
    else
        for (uint64_t j = 0; j < n; j++) {
            uint64_t r = idx ? idx[j] : j;
            uint32_t cd = row_ok(x, r) ? x->dict_codes[r] : UINT32_MAX;
            code[j] = cd < nd ? cd + 1 : 0;
            ok[j] = p[code[j]] != NULL;
        }
    v->kind = 'c';
    v->code = code;
    v->dict = p;
    v->dict_n = pn;
    v->n_dict = (uint32_t)(nd + 1);
    return PCH_OK;
}

static int vec_column(pch_sql_lanes *c, const pch_vx_array *const *L, size_t k, uint64_t n, pch_error *err)
{
    static const char *const k_source[4] = { NULL, "system", "user", "agent" };
    static const size_t k_source_n[4] = { 0, 6, 4, 5 };
    const lane_col_def *d = c->def[k];
    const pch_vx_array *a = L[c->lane_at[d->lane]], *x = pch_vx_list_items(a);
    out_col *o = &c->vcol[k];
    pch_sql_vec *v = &c->v[k];
    uint8_t *ok = vbuf(&o->valid, n);
    /* each output row's step item, for the readers below that index it directly */
    const uint64_t *rs = d->kind == K_TS_TEXT || d->kind == K_STEP_F64 || d->kind == K_STEP_BOOL ||
                         d->kind == K_HAS_CALLS || d->kind == K_N_CALLS || d->kind == K_MESSAGE ? row_map(c, false) : NULL;
    int64_t *iv = NULL;
    memset(v, 0, sizeof *v);
    v->valid = ok;
    if (!ok) return PCH_ENOMEM;
    switch (d->kind) {
    case K_ID:
        for (uint64_t j = 0; j < n; j++) ok[j] = c->ent_ok[d->lane - LN_SOURCE_ID].data[c->r_ent[j]];
        return vec_ids(c, d->lane - LN_SOURCE_ID, v);
    case K_SOURCE: {
        uint32_t *code = vbuf(&o->val, n * 4);
        int64_t *k2 = vbuf(&o->data, n * 8);
        if (!code || !k2) return PCH_ENOMEM;
        vec_ints(x, c->step_ident ? NULL : c->r_step, n, false, k2, ok);   /* invalid rows read as 0 */
        for (uint64_t j = 0; j < n; j++) {
            code[j] = (uint64_t)k2[j] < 4 ? (uint32_t)k2[j] : 0;
            ok[j] = code[j] != 0;
        }
        v->kind = 'c';
        v->code = code;
        v->dict = k_source;
        v->dict_n = k_source_n;
        v->n_dict = 4;
        return PCH_OK;
    }
    case K_STEP_STR: case K_CALL_STR: {
        const uint64_t *idx = d->kind == K_STEP_STR ? (c->step_ident ? NULL : c->r_step) : (c->call_ident ? NULL : c->r_call);
        if (d->kind == K_CALL_STR) x = pch_vx_list_items(x);
        if (x && x->dict_codes && x->dict_values && x->dict_values->offsets &&
            (!x->offsets || x->dict_values->len <= n))      /* codes only, or a short dictionary */
            return vec_codes(o, v, x, idx, n);
        for (uint64_t j = 0; j < n; j++) ok[j] = row_ok(x, idx ? idx[j] : j) && x->offsets;
        v->kind = 's';
        v->idx = idx;
        if (x && x->offsets) { v->data = x->data ? x->data : (const uint8_t *)""; v->off = x->offsets; }
        else {                      /* no offsets: every row null (the engine reads valid rows only) */
            static const int64_t k_zero[1] = { 0 };
            v->data = (const uint8_t *)"";
            v->off = k_zero;
        }
        return PCH_OK;
    }
    case K_TS_TEXT: {               /* the original text, or the ISO form the ms write back */
        const pch_vx_array *ms = pch_vx_list_items(L[c->lane_at[d->lane2]]);
        int64_t *off;
        pch_buf_clear(&o->data);
        if (!(off = vbuf(&o->off, (n + 1) * 8))) return PCH_ENOMEM;
        off[0] = 0;
        for (uint64_t j = 0; j < n; j++) {
            uint64_t si = rs[j];
            char iso[40];
            ok[j] = 1;
            if (row_ok(x, si) && x->offsets) PCH_TRY(pch_buf_append(&o->data, x->data + x->offsets[si], (size_t)(x->offsets[si + 1] - x->offsets[si])));
            else if (row_ok(x, si)) ok[j] = 0;
            else if (row_ok(ms, si)) {
                pch_time_format_iso8601(iso, (int64_t)pch_vx_row_uint(ms, si));
                PCH_TRY(pch_buf_append(&o->data, iso, strlen(iso)));
            } else ok[j] = 0;
            off[j + 1] = (int64_t)o->data.len;
        }
        v->kind = 's';
        v->data = o->data.data ? o->data.data : (const uint8_t *)"";
        v->off = off;
        return PCH_OK;
    }
    case K_MESSAGE: {              /* each row's message, written from the message lanes */
        const pch_vx_array *ml[LN_N - LN_MSG];
        int64_t *off;
        for (int l = LN_MSG; l < LN_N; l++) ml[l - LN_MSG] = L[c->lane_at[l]];
        pch_buf_clear(&o->data);
        if (!(off = vbuf(&o->off, (n + 1) * 8))) return PCH_ENOMEM;
        off[0] = 0;
        for (uint64_t j = 0; j < n; j++) {
            const char *t;
            size_t tn;
            PCH_TRY(pch_vxp_message_text(c->content, ml, rs[j], &t, &tn, err));
            ok[j] = t != NULL;
            if (t) PCH_TRY(pch_buf_append(&o->data, t, tn));
            off[j + 1] = (int64_t)o->data.len;
        }
        v->kind = 's';
        v->data = o->data.data ? o->data.data : (const uint8_t *)"";
        v->off = off;
        return PCH_OK;
    }
    case K_STEP_F64: {
        double *f = vbuf(&o->val, n * 8);
        if (!f) return PCH_ENOMEM;
        for (uint64_t j = 0; j < n; j++) {
            uint64_t si = rs[j];
            f[j] = 0;
            ok[j] = row_ok(x, si);
            if (ok[j]) {
                if (x->dtype->ptype == PCH_VX_F32) { float g; memcpy(&g, x->data + 4 * si, 4); f[j] = g; }
                else memcpy(&f[j], x->data + 8 * si, 8);
            }
        }
        v->kind = 'f';
        v->f = f;
        return PCH_OK;
    }
    default: break;
    }
    if (!(iv = vbuf(&o->val, n * 8))) return PCH_ENOMEM;
    v->kind = 'i';
    v->i = iv;
    switch (d->kind) {
    case K_ORDINAL: for (uint64_t j = 0; j < n; j++) { iv[j] = (int32_t)c->r_ord[j]; ok[j] = 1; } break;
    case K_CALL_ORD: for (uint64_t j = 0; j < n; j++) { iv[j] = (int32_t)c->r_cpos[j]; ok[j] = 1; } break;
    case K_STEP_I64: vec_ints(x, c->step_ident ? NULL : c->r_step, n, c->schema->fields[k].type == PCH_LANCE_INT32, iv, ok); break;
    case K_STEP_BOOL:
        for (uint64_t j = 0; j < n; j++) {
            uint64_t si = rs[j];
            ok[j] = row_ok(x, si);
            iv[j] = ok[j] && (x->data[si / 8] >> (si % 8) & 1);
        }
        break;
    case K_HAS_CALLS: case K_N_CALLS:
        for (uint64_t j = 0; j < n; j++) {
            uint64_t b = 0, e = 0, si = rs[j];
            bool has = row_ok(x, si) && list_rng(x, si, &b, &e);
            iv[j] = d->kind == K_HAS_CALLS ? has : (int32_t)(e - b);
            ok[j] = 1;
        }
        break;
    default: return PCH_EINVAL;
    }
    return PCH_OK;
}

/* Column k of the batch (put_val/put_var layout: validity bytes, values of the schema type's
** width, u64 offsets into the bytes) from its vector: the SQLite path's rows are the
** vectors' values, so the two paths cannot disagree on one. */
static int vec_to_batch(pch_sql_lanes *c, size_t k, uint64_t n)
{
    const pch_sql_vec *v = &c->v[k];
    out_col *o = &c->col[k];
    pch_lance_type ty = c->schema->fields[k].type;
    PCH_TRY(pch_buf_append(&o->valid, v->valid, (size_t)n));
    if (v->kind == 'i' || v->kind == 'f') {
        size_t w = v->kind == 'f' ? 8 : ty == PCH_LANCE_BOOL ? 1 : ty == PCH_LANCE_INT32 ? 4 : 8;
        uint8_t *dst = vbuf(&o->val, (size_t)n * w);
        if (!dst) return PCH_ENOMEM;
        if (v->kind == 'f') memcpy(dst, v->f, (size_t)n * 8);
        else if (w == 8) memcpy(dst, v->i, (size_t)n * 8);
        else if (w == 4) for (uint64_t j = 0; j < n; j++) { int32_t x = (int32_t)v->i[j]; memcpy(dst + 4 * j, &x, 4); }
        else for (uint64_t j = 0; j < n; j++) dst[j] = (uint8_t)v->i[j];
        return PCH_OK;
    }
    {
        uint64_t *off = vbuf(&o->off, (size_t)(n + 1) * 8);
        if (!off) return PCH_ENOMEM;
        off[0] = 0;
        for (uint64_t j = 0; j < n; j++) {
            if (v->valid[j]) {
                const char *p;
                size_t len;
                pch_sql__vec_str(v, j, &p, &len);
                PCH_TRY(pch_buf_append(&o->data, p, len));
            }
            off[j + 1] = o->data.len;
        }
    }
    return PCH_OK;
}

static int lanes_next(pch_sql_lanes *c, const pch_lance_batch **out, bool *eof, pch_error *err)
{
    const pch_vx_array *const *L;
    uint64_t rows, n_out = 0;
    *out = NULL;
    if (c->acc) return traj_next(c, out, eof, err);
    for (;;) {
        PCH_TRY(next_cluster(c, &L, &rows, eof, err));
        if (*eof) return PCH_OK;
        PCH_TRY(enum_rows(c, L, rows, &n_out, err));
        if (n_out) break;
    }
    for (size_t k = 0; k < c->schema->n_fields && k < 64; k++) {
        int rc;
        if (!c->def[k]) continue;
        if ((rc = vec_column(c, L, k, n_out, err)) == PCH_OK) rc = vec_to_batch(c, k, n_out);
        /* the content writer says what failed; the rest can only run out of memory */
        if (rc < 0) return rc == PCH_ENOMEM || c->def[k]->kind != K_MESSAGE ? pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory") : rc;
    }
    return lanes_batch(c, n_out, out, err);
}

void pch_sql__vx_vec_allow_mask(pch_sql_lanes *c) { c->mask_ok = true; }

const uint8_t *pch_sql__vx_vec_live(const pch_sql_lanes *c) { return c->masked ? c->r_live : NULL; }

int pch_sql__vx_vec_next(pch_sql_lanes *c, pch_sql_vec *cols, uint64_t *n, bool *eof, pch_error *err)
{
    const pch_vx_array *const *L;
    uint64_t rows;
    *n = 0;
    for (;;) {
        PCH_TRY(next_cluster(c, &L, &rows, eof, err));
        if (*eof) return PCH_OK;
        PCH_TRY(enum_rows(c, L, rows, n, err));
        if (*n) break;
    }
    for (size_t k = 0; k < c->schema->n_fields && k < 64; k++) {
        int rc;
        if (!c->def[k]) continue;
        if ((rc = vec_column(c, L, k, *n, err)) < 0)
            return rc == PCH_ENOMEM || c->def[k]->kind != K_MESSAGE ? pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory") : rc;
        cols[k] = c->v[k];
    }
    return PCH_OK;
}

/* ---- the read-only `trajectories` relation (§13.1): one row per trajectory from the id and
** summary lanes (the pages of a paged trajectory summed) ---- */

enum { T_SOURCE_ID, T_RUN_KEY, T_SESSION_ID, T_TRAJ_KEY, T_DOC_PATH, T_PREORDER, T_PARENT, T_AGENT, T_AGENT_MODEL,
       T_STATE, T_PAGE_INDEX, T_PAGE_COUNT, T_STEPS, T_CALLS, T_RESULTS, T_MIN_TS, T_MAX_TS, T_COPIED, T_PTOK,
       T_CTOK, T_FLAGS, T_BYTES, T_N };
static const char *const k_traj_lanes[T_N] = {
    "id.source_id", "id.run_key", "id.session_id", "id.trajectory_key", "id.doc_path", "id.preorder",
    "id.parent_trajectory_key", "id.agent_name", "id.agent_model_name", "id.projection_state", "id.page_index",
    "id.page_count", "summary.step_count", "summary.tool_call_count", "summary.result_count",
    "summary.min_timestamp_ms", "summary.max_timestamp_ms", "summary.copied_step_count", "summary.prompt_tokens",
    "summary.completion_tokens", "summary.flags", "summary.logical_bytes"
};
/* columns of the relation: name, type, the text lane (strings) or -1 */
typedef struct traj_col { const char *name; pch_lance_type type; int lane; } traj_col;
static const traj_col k_traj_cols[] = {
    { "source_id", PCH_LANCE_UTF8, T_SOURCE_ID }, { "run_id", PCH_LANCE_UTF8, T_RUN_KEY },
    { "session_id", PCH_LANCE_UTF8, T_SESSION_ID }, { "trajectory_key", PCH_LANCE_UTF8, T_TRAJ_KEY },
    { "doc_path", PCH_LANCE_UTF8, T_DOC_PATH }, { "preorder", PCH_LANCE_INT32, -1 },
    { "parent_trajectory_key", PCH_LANCE_UTF8, T_PARENT }, { "agent_name", PCH_LANCE_UTF8, T_AGENT },
    { "agent_model_name", PCH_LANCE_UTF8, T_AGENT_MODEL }, { "state", PCH_LANCE_UTF8, -1 },
    { "n_pages", PCH_LANCE_INT32, -1 }, { "n_steps", PCH_LANCE_INT64, -1 }, { "n_tool_calls", PCH_LANCE_INT64, -1 },
    { "n_results", PCH_LANCE_INT64, -1 }, { "first_timestamp_ms", PCH_LANCE_INT64, -1 },
    { "last_timestamp_ms", PCH_LANCE_INT64, -1 }, { "n_copied_steps", PCH_LANCE_INT64, -1 },
    { "prompt_tokens", PCH_LANCE_INT64, -1 }, { "completion_tokens", PCH_LANCE_INT64, -1 },
    { "has_logprobs", PCH_LANCE_BOOL, -1 }, { "has_token_ids", PCH_LANCE_BOOL, -1 },
    { "has_reward", PCH_LANCE_BOOL, -1 }, { "has_external_content", PCH_LANCE_BOOL, -1 },
    { "logical_bytes", PCH_LANCE_INT64, -1 },
};
#define TRAJ_N_COLS (sizeof k_traj_cols / sizeof *k_traj_cols)

static int traj_schema(void *h, pch_lance_schema **out, pch_error *err)
{
    vx_src *s = h;
    int rc = pch_lance_schema_new(out, s->ctx, err);
    for (size_t i = 0; i < TRAJ_N_COLS && rc == PCH_OK; i++)
        rc = pch_lance_schema_add_field(*out, k_traj_cols[i].name, k_traj_cols[i].type,
                                        i == 2 || i == 6 || i == 7 || i == 8 || i == 14 || i == 15, err);
    if (rc < 0) { pch_lance_schema_free(*out); *out = NULL; }
    return rc;
}

/* The trajectory being summed over its pages. */
typedef struct traj_acc {
    pch_buf text[T_N];              /* the first page's strings */
    bool valid[T_N];
    int64_t preorder, state, pages, steps, calls, results, copied, ptok, ctok, min_ts, max_ts, bytes;
    bool has_ts;
    uint8_t flags;
} traj_acc;

static int traj_open(void *h, pch_sql_lanes **out, pch_error *err);
static int traj_lanes(vx_src *s, pch_sql_lanes **out, pch_error *err);

static void traj_acc_free(pch_ctx *ctx, struct traj_acc *a)
{
    if (!a) return;
    for (int i = 0; i < T_N; i++) pch_buf_dispose(&a->text[i]);
    pch_free(ctx, a);
}

static int traj_open(void *h, pch_sql_lanes **out, pch_error *err)
{
    vx_src *s = h;
    int rc = traj_lanes(s, out, err);
    if (rc == PCH_OK && g_xp_on) {
        pch_buf b;
        pch_buf_init(&b, s->ctx);
        pch_buf_printf(&b, "trajectories: the id and summary lanes (%d lanes), no document rebuilt; predicates on "
                           "the rows (SQLite)", T_N);
        (*out)->xp = xp_note(&b);
        pch_buf_dispose(&b);
    }
    return rc;
}

static int traj_lanes(vx_src *s, pch_sql_lanes **out, pch_error *err)
{
    pch_sql_lanes *c;
    int rc;
    *out = NULL;
    if (!(c = lanes_new(s)) || !(c->acc = pch_calloc(s->ctx, 1, sizeof *c->acc))) {
        pch_free(s->ctx, c);
        return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
    }
    for (int i = 0; i < T_N; i++) pch_buf_init(&c->acc->text[i], s->ctx);
    if ((rc = traj_schema(s, &c->schema, err)) < 0 || (rc = pch_vxp_lanes_open(&c->it, s->snap, k_traj_lanes, T_N, err)) < 0) {
        lanes_close(c);
        return rc;
    }
    *out = c;
    return PCH_OK;
}

static int64_t num(const pch_vx_array *a, uint64_t r) { return pch_vx_row_valid(a, r) ? (int64_t)pch_vx_row_uint(a, r) : 0; }

/* Emit the trajectory summed in c->acc as one row. */
static int traj_emit(pch_sql_lanes *c)
{
    struct traj_acc *a = c->acc;
    for (size_t k = 0; k < TRAJ_N_COLS; k++) {
        out_col *o = &c->col[k];
        const traj_col *d = &k_traj_cols[k];
        int64_t v = 0;
        bool valid = true;
        if (d->lane >= 0) { PCH_TRY(put_var(o, a->text[d->lane].data, a->text[d->lane].len, a->valid[d->lane])); continue; }
        if (k == 9) {               /* state */
            const char *nm = pch_atif_state_name((pch_atif_state)a->state);
            PCH_TRY(put_var(o, nm, nm ? strlen(nm) : 0, nm != NULL));
            continue;
        }
        switch (k) {
        case 5: { int32_t w = (int32_t)a->preorder; PCH_TRY(put_val(o, &w, 4, true)); continue; }
        case 10: { int32_t w = (int32_t)a->pages; PCH_TRY(put_val(o, &w, 4, true)); continue; }
        case 11: v = a->steps; break;
        case 12: v = a->calls; break;
        case 13: v = a->results; break;
        case 14: v = a->min_ts; valid = a->has_ts; break;
        case 15: v = a->max_ts; valid = a->has_ts; break;
        case 16: v = a->copied; break;
        case 17: v = a->ptok; break;
        case 18: v = a->ctok; break;
        case 23: v = a->bytes; break;
        default: {                  /* the flags */
            static const uint8_t bit[4] = { 0x01, 0x04, 0x08, 0x02 };   /* logprobs, token ids, reward, external */
            uint8_t b = (a->flags & bit[k - 19]) != 0;
            PCH_TRY(put_val(o, &b, 1, true));
            continue;
        }
        }
        PCH_TRY(put_val(o, &v, 8, valid));
    }
    return PCH_OK;
}

static int traj_next(pch_sql_lanes *c, const pch_lance_batch **out, bool *eof, pch_error *err)
{
    struct traj_acc *a = c->acc;
    const pch_vx_array *const *L;
    uint64_t rows, n_out = 0;
    for (;;) {
        const uint8_t *live;
        PCH_TRY(next_cluster(c, &L, &rows, eof, err));
        if (*eof) return PCH_OK;
        live = pch_vxp_lanes_live(c->it);
        for (uint64_t r = 0; r < rows; r++) {
            int64_t page = num(L[T_PAGE_INDEX], r), pages = num(L[T_PAGE_COUNT], r);
            if (live && !live[r]) continue;     /* shadowed by a newer revision (§12.2): every page */
            if (!pch_vx_row_valid(L[T_PAGE_INDEX], r) || !pch_vx_row_valid(L[T_PAGE_COUNT], r) || pages < 1 || page >= pages ||
                (page > 0 && page != a->pages))
                return pch_error_set(err, PCH_ECORRUPT, "vortex sql: the pages of a trajectory are out of sequence");
            if (page == 0) {        /* the trajectory's own values are on its first page */
                for (int l = T_SOURCE_ID; l <= T_AGENT_MODEL; l++) {
                    const pch_vx_array *x = L[l];
                    pch_buf_clear(&a->text[l]);
                    a->valid[l] = pch_vx_row_valid(x, r) && x->offsets;
                    if (a->valid[l] && pch_buf_append(&a->text[l], x->data + x->offsets[r], (size_t)(x->offsets[r + 1] - x->offsets[r])) < 0)
                        return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
                }
                a->preorder = num(L[T_PREORDER], r);
                a->state = num(L[T_STATE], r);
                a->steps = a->calls = a->results = a->copied = a->ptok = a->ctok = a->bytes = 0;
                a->has_ts = false;
                a->flags = 0;
            }
            a->pages = page + 1;
            a->steps += num(L[T_STEPS], r);
            a->calls += num(L[T_CALLS], r);
            a->results += num(L[T_RESULTS], r);
            a->copied += num(L[T_COPIED], r);
            a->ptok += num(L[T_PTOK], r);
            a->ctok += num(L[T_CTOK], r);
            a->bytes += num(L[T_BYTES], r);
            a->flags |= (uint8_t)num(L[T_FLAGS], r);
            if (pch_vx_row_valid(L[T_MIN_TS], r)) {
                int64_t lo = (int64_t)pch_vx_row_uint(L[T_MIN_TS], r), hi = pch_vx_row_valid(L[T_MAX_TS], r) ? (int64_t)pch_vx_row_uint(L[T_MAX_TS], r) : lo;
                if (!a->has_ts || lo < a->min_ts) a->min_ts = lo;
                if (!a->has_ts || hi > a->max_ts) a->max_ts = hi;
                a->has_ts = true;
            }
            if (page + 1 == pages) {
                if (traj_emit(c) < 0) return pch_error_set(err, PCH_ENOMEM, "vortex sql: out of memory");
                n_out++;
            }
        }
        if (n_out) break;
    }
    return lanes_batch(c, n_out, out, err);
}

/* `runs` from the summaries: when every column a statement uses or pushes is one the id and
** summary lanes hold exactly as runs does (the trajectories relation is checked against runs
** column by column in tests/cli/vortex_sql.sh), runs is read like trajectories. */
static int runs_open(vx_src *s, uint64_t used, const pch_sql_cons *cons, int n_cons, pch_sql_lanes **out,
                     pch_error *err)
{
    static const struct { const char *runs, *traj; } k_map[] = {
        { "source_id", "source_id" }, { "run_id", "run_id" }, { "session_id", "session_id" },
        { "trajectory_key", "trajectory_key" }, { "doc_path", "doc_path" }, { "preorder", "preorder" },
        { "parent_trajectory_key", "parent_trajectory_key" }, { "agent_name", "agent_name" },
        { "agent_model_name", "agent_model_name" }, { "state", "state" }, { "n_steps", "n_steps" },
        { "first_timestamp_ms", "first_timestamp_ms" }, { "last_timestamp_ms", "last_timestamp_ms" },
    };
    pch_lance_schema *runs = NULL;
    pch_sql_lanes *c = NULL;
    int map[64], rc;
    *out = NULL;
    if ((rc = pch_storyline_table_schema(s->ctx, PCH_STORYLINE_RUNS, &runs, err)) < 0) return rc;
    for (size_t k = 0; k < 64; k++) {
        map[k] = -1;
        if (k >= runs->n_fields || !((used >> (k < 63 ? k : 63)) & 1)) continue;
        for (size_t m = 0; m < sizeof k_map / sizeof *k_map && map[k] < 0; m++)
            if (strcmp(runs->fields[k].name, k_map[m].runs) == 0)
                for (size_t t = 0; t < TRAJ_N_COLS; t++)
                    if (strcmp(k_traj_cols[t].name, k_map[m].traj) == 0) map[k] = (int)t;
        if (map[k] < 0) {           /* a column only documents give */
            xp_documents(s, PCH_STORYLINE_RUNS, runs->fields[k].name, runs, cons, n_cons);
            pch_lance_schema_free(runs);
            return PCH_OK;
        }
    }
    if ((rc = traj_lanes(s, &c, err)) < 0) { pch_lance_schema_free(runs); return rc; }
    if (g_xp_on) {
        pch_buf b;
        pch_buf_init(&b, s->ctx);
        pch_buf_printf(&b, "runs: the id and summary lanes, no document rebuilt");
        for (int k = 0; k < n_cons; k++) {
            xp_cons(&b, runs->fields[cons[k].col].name, &cons[k], "the rows");
        }
        c->xp = xp_note(&b);
        pch_buf_dispose(&b);
    }
    pch_lance_schema_free(c->schema);
    c->schema = runs;
    c->runs_view = true;
    memcpy(c->traj_of, map, sizeof map);
    *out = c;
    return PCH_OK;
}

/* An embed-assets projection lists every asset with its object id, as a Storyline root
** imported with embedded assets; a preserve-reference one lists none, as one imported with
** --assets reference. */
static pch_storyline_assets vx_asset_mode(void *h)
{
    vx_src *s = h;
    return pch_vxp_snapshot_assets(s->snap) == PCH_VXP_ASSETS_EMBED ? PCH_STORYLINE_ASSETS_EMBED
                                                                    : PCH_STORYLINE_ASSETS_REFERENCE;
}

/* --explain: a relation read from every rebuilt document (observation_results). */
static void vx_note_documents(void *h, const char *rel)
{
    pch_buf b;
    if (!g_xp_on) return;
    pch_buf_init(&b, ((vx_src *)h)->ctx);
    pch_buf_printf(&b, "%s: every document rebuilt, twice (the results of the calls, then the uncorrelated "
                       "results of the steps); predicates on the rows (SQLite)", rel);
    (void)xp_note(&b);
    pch_buf_dispose(&b);
}

static const pch_sql_doc_source k_vortex = { "vortex", vx_open, vx_close, vx_next, vx_asset, vx_asset_mode, vx_find,
                                               lanes_open, lanes_next, lanes_close, traj_schema, traj_open,
                                               vx_note_documents };

int pch_vxp_sql_register(sqlite3 *db)
{
    int rc = pch_sql_register(db);
    return rc == SQLITE_OK ? pch_sql__register_docs(db, &k_vortex) : rc;
}

const pch_sql_doc_source *pch_sql__vortex_source(void) { return &k_vortex; }

/* The four relations of pch_sql_attach_module and `trajectories`. */
int pch_sql__vx_attach(sqlite3 *db, const char *root, char **msg)
{
    int rc = pch_sql__register_docs(db, &k_vortex);
    if (rc == SQLITE_OK) rc = pch_sql_attach_module(db, "vortex", root, msg);
    if (rc == SQLITE_OK) {
        char *q = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.trajectories USING vortex(%Q, 'trajectories')", root);
        rc = q ? sqlite3_exec(db, q, NULL, NULL, msg) : SQLITE_NOMEM;
        sqlite3_free(q);
    }
    return rc;
}

/* Loadable extension entry point (build/pchronicle_vortex_sqlite.so): the storyline, lance
** and vortex modules. */
PCH_API int sqlite3_pchroniclevortexsqlite_init(sqlite3 *db, char **errmsg, const void *api);
PCH_API int sqlite3_pchroniclevortexsqlite_init(sqlite3 *db, char **errmsg, const void *api)
{
    (void)errmsg;
    (void)api;
    return pch_vxp_sql_register(db);
}
