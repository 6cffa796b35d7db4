/* Internal helpers shared by the SQLite virtual tables of src/sql: vtab.c (Storyline
** relations) and lance_vtab.c (any Lance dataset, compact-jsonl records). */
#ifndef PCH_SQL_INT_H
#define PCH_SQL_INT_H

#include <sqlite3.h>
#include <string.h>

#include "core/core.h"
#include "pchronicle/lance.h"
#include "pchronicle/sql.h"
#include "pchronicle/storyline.h"

/* Most pushed constraints one plan carries. */
#define PCH_SQL_MAX_CONS 16

/* A vtab error: message into zErrMsg, PCH_* code → SQLite code. */
int pch_sql__set_err(sqlite3_vtab *vt, const pch_error *e, int code);

/* Strip one pair of matching quotes SQLite leaves around a module argument; n in/out. */
const char *pch_sql__unquote(const char *s, size_t *n);

/* Lance type → declared SQLite column type. */
const char *pch_sql__type(pch_lance_type t);

static inline bool pch_sql__valid(const pch_lance_column *lc, size_t row)
{
    return lc && (!lc->validity || lc->validity[row]);
}

static inline bool pch_sql__str(const pch_lance_column *lc, size_t row, const char **p, size_t *n)
{
    if (!pch_sql__valid(lc, row) || !pch_lance_type_is_var(lc->type)) return false;
    *p = (const char *)lc->data + lc->offsets[row];
    *n = (size_t)(lc->offsets[row + 1] - lc->offsets[row]);
    return true;
}

/* The "lance" module (lance_vtab.c); pch_sql_register registers it with "storyline". */
int pch_sql__register_lance(sqlite3 *db);

/* Signed integer value (ints, bool); false for null or another type. */
bool pch_sql__i64(const pch_lance_column *lc, size_t row, int64_t *v);

/* The SQLite value of row `row` of a non-JSON column: TEXT, BLOB, REAL, INTEGER (a uint64
** above 2^63-1 as its exact decimal TEXT), NULL. */
void pch_sql__result(sqlite3_context *ctx, const pch_lance_column *lc, size_t row);

/* ---- plans (xBestIndex → xFilter), the same for every module ----
** idxNum = number of pushed constraints n; idxStr = 16 hex digits of colUsed (bit i =
** column i, bit 63 = any column ≥ 63), then per constraint 2 hex digits of its column and
** one op char ('=' EQ, '>' GT, 'g' GE, '<' LT, 'l' LE, 'L' LIKE); argv[k] is constraint k's
** right-hand value. omit is never set: SQLite re-checks every row, so a pushed constraint
** may only prune rows that cannot match. */
typedef struct pch_sql_cons { int col; char op; sqlite3_value *v; } pch_sql_cons;

/* Which (column, op) pairs a module pushes. */
typedef bool (*pch_sql_pushable)(const sqlite3_vtab *vt, int col, char op);

/* xBestIndex for a module: every usable constraint `pushable` accepts (at most
** PCH_SQL_MAX_CONS), costs lowered per pushed constraint. */
int pch_sql__best_index(sqlite3_vtab *vt, sqlite3_index_info *ii, pch_sql_pushable pushable);

/* Decode a plan in xFilter: cons[0..*n), *used = colUsed. Columns must be < n_cols.
** PCH_EINVAL on a malformed plan. */
int pch_sql__plan(int idxNum, const char *idxStr, int argc, sqlite3_value **argv, int n_cols,
                  pch_sql_cons *cons, int *n, sqlite3_uint64 *used, pch_error *err);

/* Does row `row` of lc satisfy constraint c? 1 yes, 0 no (NULL never satisfies a
** comparison), -1 not decided here (a value of another kind than the column's: SQLite
** decides). Text compares bytewise (BINARY collation); LIKE only for 'prefix%' patterns
** (ASCII case-insensitive, as SQLite's LIKE). */
int pch_sql__test(const pch_lance_column *lc, size_t row, const pch_sql_cons *c);

/* Scan the constrained columns of ds alone and return the dataset rows (ascending) that
** no constraint rules out (pch_sql__test != 0): the rows a second scan then reads in full
** with pch_lance_scanner_open_rows. *rows (ctx allocator) is never NULL on success. */
int pch_sql__select_rows(pch_ctx *ctx, pch_lance_dataset *ds, const pch_sql_cons *cons, int n_cons,
                         uint64_t **rows, size_t *n_rows, pch_error *err);

/* ---- the storyline relations over a document source (vtab.c) ----
** runs / steps / tool_calls / observation_results computed from ATIF documents with the
** Storyline row generator instead of read from a root: another projection answers with
** the same columns and values (RFC-0006 §13.1). The Vortex projection registers one from
** its own library (src/sql/vx_source.c), so this library never links Vortex code. One
** handle per virtual table; every cursor walks the documents from position 0 with its own
** position. */
typedef struct pch_sql_lanes pch_sql_lanes;
typedef struct pch_sql_doc_source {
    const char *module;                   /* SQLite module name */
    int (*open)(void **h, pch_ctx *ctx, const char *path, pch_error *err);
    void (*close)(void *h);
    /* Add the document at *pos (then advance *pos) to g; *eof = true past the last one. */
    /* content: the statement reads a content column (message, reasoning, arguments, results
    ** and their *_object ids, observation results); when false the source may leave content
    ** it would have to fetch unread (late hydration, RFC-0006 §13.6). */
    int (*next)(void *h, uint64_t *pos, pch_storyline_rowgen *g, bool content, bool *eof, pch_error *err);
    pch_storyline_asset_fn assets;        /* called with the handle while next() runs */
    pch_storyline_assets (*asset_mode)(void *h);   /* as the projection was built */
    /* Positions (ascending, ctx allocator) of the documents that may hold a trajectory whose
    ** trajectory_key is key: an equality on it reads those documents only. */
    int (*find)(void *h, const char *rel, const char *key, size_t key_len, uint64_t **pos, size_t *n,
                pch_error *err);
    /* Optional narrow scans: rows of table t straight from the projection when it can make
    ** every column in `used` (bit i = column i); *out NULL otherwise (then documents are
    ** read). Batches hold every column of the table, those not in `used` all null. cons: the
    ** pushed constraints, which the source may prune by (never decide: SQLite re-checks). */
    int (*lanes_open)(void *h, pch_storyline_table t, uint64_t used, const pch_sql_cons *cons, int n_cons,
                      struct pch_sql_lanes **out, pch_error *err);
    int (*lanes_next)(struct pch_sql_lanes *c, const pch_lance_batch **out, bool *eof, pch_error *err);
    void (*lanes_close)(struct pch_sql_lanes *c);
    /* Optional: the read-only relation `trajectories` (one row per trajectory, a summary),
    ** its schema and a cursor read with lanes_next / lanes_close. */
    int (*traj_schema)(void *h, pch_lance_schema **out, pch_error *err);
    int (*traj_open)(void *h, struct pch_sql_lanes **out, pch_error *err);
    /* Optional: a scan of relation rel over every document is starting (for --explain). */
    void (*note_documents)(void *h, const char *rel);
} pch_sql_doc_source;

/* A column whose values are trajectory content (message, reasoning, tool arguments, results
** and their *_object ids): what a late-hydrating source must fetch when it is read. */
bool pch_sql__content_column(const char *name);

/* Register src as a module (src must outlive db). SQLite result code. */
int pch_sql__register_docs(sqlite3 *db, const pch_sql_doc_source *src);
/* The Vortex projection's document source (src/sql/vx_source.c, Vortex side only). */
const pch_sql_doc_source *pch_sql__vortex_source(void);

/* ---- interning (common.c) ---- */
/* Distinct byte strings → dense ids from 1 (0 is NULL), their bytes kept in first-seen order
** (common.c): the vectorised engine's group keys (text, or the 8 bytes of an integer) and the
** Arrow streams' dictionaries. Set ctx and init off and data with it before the first use. */
typedef struct pch_sql_interner {
    pch_ctx *ctx;
    uint32_t *slot;                 /* open addressing: id, 0 = empty */
    uint64_t *hash;                 /* per id */
    size_t cap, n;                  /* slots; ids used (the next id is n + 1) */
    pch_buf off, data;              /* per id: u64 offset of its bytes */
    char kind;                      /* the user's: what the bytes are */
} pch_sql_interner;
void pch_sql__intern_dispose(pch_sql_interner *t);
/* The bytes of id (1..n). */
const uint8_t *pch_sql__intern_bytes(const pch_sql_interner *t, uint32_t id, size_t *n);
/* The id of p[0..n), added when new. PCH_ENOMEM, PCH_ELIMIT. */
int pch_sql__intern(pch_sql_interner *t, const void *p, size_t n, uint32_t *id);

/* ---- relation batches as Arrow C Data Interface arrays (arrow.c) ---- */
struct ArrowSchema;
struct ArrowArray;
/* The struct schema "+s" of columns cols[0..n) of s; dict (may be NULL): column i is a
** dictionary array (int32 indices into large utf8 values). */
int pch_sql__arrow_schema(const pch_lance_schema *s, const int *cols, int n, const bool *dict, struct ArrowSchema *out,
                          pch_error *err);
/* Columns cols[0..n) of b as one struct array (copies; JSON rendered as text). */
int pch_sql__arrow_from_batch(const pch_lance_batch *b, const int *cols, int n, pch_ctx *ctx,
                              struct ArrowArray *out, pch_error *err);

/* Rows built column by column, then one struct batch (the training readers' streams): kind
** 'U' large utf8, 'l' int64, 'I' large list of uint32, 'G' large list of float64; every
** column nullable. */
typedef struct pch_sql_acol {
    char kind;
    pch_buf valid;                  /* one byte per row */
    pch_buf off;                    /* int64 offsets (U, I, G) */
    pch_buf data;                   /* bytes, int64 values or list items */
} pch_sql_acol;
void pch_sql__acol_init(pch_sql_acol *c, char kind);
void pch_sql__acol_clear(pch_sql_acol *c);
void pch_sql__acol_dispose(pch_sql_acol *c);
int pch_sql__acol_str(pch_sql_acol *c, const char *p, size_t n, bool valid);
int pch_sql__acol_i64(pch_sql_acol *c, int64_t v, bool valid);
/* items: n u32 (kind I) or n floats of item_bits 32 or 64 (kind G, widened to float64). */
int pch_sql__acol_list(pch_sql_acol *c, const void *items, size_t n, unsigned item_bits, bool valid);
int pch_sql__acol_schema(const char *const *names, const pch_sql_acol *cols, int n, struct ArrowSchema *out,
                         pch_error *err);
/* The rows as one struct batch; the columns' offsets and values move into it (the columns are
** left empty for the next batch). */
int pch_sql__acol_batch(pch_sql_acol *cols, int n, size_t n_rows, struct ArrowArray *out, pch_error *err);

/* ---- printing results (run.c): the SQLite path and the vectorised engine (vx_exec.c) ----
** A cell is one value as SQLite types it; s/n its text (TEXT, and the text SQLite gives an
** INTEGER or REAL) or its bytes (BLOB). */
typedef struct pch_sql_cell { int type; int64_t i; double f; const char *s; size_t n; } pch_sql_cell;
typedef struct pch_sql_rowsrc {
    int n_cols;
    const char *const *names;
    /* The next row into cell[0..n_cols): 1 a row, 0 done, < 0 an error (in err). */
    int (*next)(void *payload, pch_sql_cell *cell, pch_error *err);
    void *payload;
} pch_sql_rowsrc;
int pch_sql__print(const pch_sql_rowsrc *src, pch_sql_format fmt, FILE *out, uint64_t *n_rows, pch_error *err);
/* Step a prepared statement to its end, printing its rows (a statement without columns is
** only run); *n_rows (may be NULL) = rows printed. */
int pch_sql__print_stmt(sqlite3_stmt *st, pch_sql_format fmt, FILE *out, uint64_t *n_rows, pch_error *err);

/* ---- vector scans (vx_source.c → vx_exec.c) ----
** A narrow scan of steps or tool_calls handed out a cluster at a time as column vectors, not
** rows: the rows of the kept pages in storage order (the rows lanes_next makes, value for
** value). Kinds: 'i' int64, 'f' double, 's' text (row r is data[off[x] .. off[x + 1]) with
** x = idx ? idx[r] : r), 'c' text by code (row r is dict entry code[r]). valid: one byte a row. */
typedef struct pch_sql_vec {
    char kind;
    const uint8_t *valid;
    const int64_t *i;
    const double *f;
    const uint8_t *data;
    const int64_t *off;
    const uint64_t *idx;
    const uint32_t *code;
    const char *const *dict;        /* 'c': entry k is dict[k] (dict_n[k] bytes); NULL = null */
    const size_t *dict_n;
    uint32_t n_dict;
} pch_sql_vec;

static inline void pch_sql__vec_str(const pch_sql_vec *v, uint64_t r, const char **p, size_t *n)
{
    if (v->kind == 'c') { *p = v->dict[v->code[r]]; *n = v->dict_n[v->code[r]]; return; }
    {
        uint64_t x = v->idx ? v->idx[r] : r;
        *p = (const char *)v->data + v->off[x];
        *n = (size_t)(v->off[x + 1] - v->off[x]);
    }
}

/* Columns cols[0..n) of a narrow scan's vectors (vecs indexed by schema column) as one struct
** array of n_rows rows; dict[i]: column i ('c' or 's') as a dictionary array. */
int pch_sql__arrow_from_vecs(const pch_sql_vec *vecs, const pch_lance_schema *s, const int *cols, int n, const bool *dict,
                             size_t n_rows, struct ArrowArray *out, pch_error *err);

/* The value kind of a column a narrow scan of t makes ('i', 'f' or 's'; 0 = not a lane
** column: read from documents). */
char pch_sql__vx_lane_kind(pch_storyline_table t, const char *column);
/* Open a vector scan of t over the columns in `used` (bit i = column i of t's schema; every
** one a lane column), pruned by cons (which it never decides). *out NULL when it cannot. */
int pch_sql__vx_vec_open(void *h, pch_storyline_table t, uint64_t used, const pch_sql_cons *cons, int n_cons,
                         pch_sql_lanes **out, pch_error *err);
/* The next cluster with rows: cols[i] for each column i in `used`, *n rows; *eof at the end.
** Borrowed until the next call. */
int pch_sql__vx_vec_next(pch_sql_lanes *c, pch_sql_vec *cols, uint64_t *n, bool *eof, pch_error *err);
/* A consumer that honours a live mask says so (before its first vec_next): then a cluster
** whose ruled-out pages (shadowed, §12.2) are at most half its rows hands them out too, and
** vx_vec_live gives the batch's live flags (1 = a row of the relation; NULL: every row is). */
void pch_sql__vx_vec_allow_mask(pch_sql_lanes *c);
const uint8_t *pch_sql__vx_vec_live(const pch_sql_lanes *c);
/* The vectorised engine's LIKE: 1 when text s[0..sn) (valid UTF-8; it ends at a NUL byte, as
** SQLite's text does) matches ASCII pattern[0..pn) ('%', '_', ASCII case folded, no escape)
** exactly as SQLite's LIKE decides. */
int pch_sql__vx_like(const uint8_t *pattern, size_t pn, const uint8_t *s, size_t sn);
/* The Vortex relations (runs, steps, tool_calls, observation_results, trajectories) of root as
** temp virtual tables of db. SQLite result code. */
int pch_sql__vx_attach(sqlite3 *db, const char *root, char **msg);
/* While set (h: a handle of the Vortex source), every relation that connects must pin the
** snapshot h pinned, or fail; NULL clears it. */
void pch_sql__vx_pin(void *h);
/* The same by snapshot id (NULL: none, the relations open CURRENT's). */
void pch_sql__vx_pin_id(const char *snapshot_id);
/* Would the vectorised engine (vx_exec.c) answer statement sql[0..n)? 1 yes, 0 no (why says
** why). For the fuzz target of its parser; db evaluates the literals. */
int pch_sql__vx_plan_probe(sqlite3 *db, const char *sql, size_t n, char *why, size_t why_cap);

#endif
