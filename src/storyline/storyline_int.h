/* Private structures of src/storyline: the column contract of the four tables
** (docs/storyline.md §2; the order here is the on-disk field order), a row builder that
** latches its first error (STYLE §6, git_str OOM marking) and a row cursor over a Lance
** scanner that resolves columns by name. Not for use outside src/storyline/. */
#ifndef PCH_STORYLINE_INT_H
#define PCH_STORYLINE_INT_H

#include "core/core.h"
#include "pchronicle/lance.h"
#include "pchronicle/storyline.h"

#define PCH_SL_FORMAT "pchronicle.storyline"
#define PCH_SL_FORMAT_VERSION 1
#define PCH_SL_MAX_COLS 40

typedef struct pch_sl_coldef {
    const char *name;
    pch_lance_type type;
    bool nullable;
} pch_sl_coldef;

/* Identity columns, first in every trajectory table (ARCHITECTURE §5). */
enum { SL_SOURCE_ID, SL_RUN_ID, SL_SESSION_ID, SL_TRAJECTORY_KEY, SL_N_IDENTITY };

enum {
    R_DOC_PATH = SL_N_IDENTITY, R_PREORDER, R_PARENT_TRAJECTORY_KEY, R_PARENT_LOCAL_ORDINAL,
    R_RUN_KEY_GENERATED, R_TRAJECTORY_KEY_GENERATED, R_SCHEMA_VERSION, R_TRAJECTORY_ID,
    R_AGENT_NAME, R_AGENT_VERSION, R_AGENT_MODEL_NAME, R_AGENT, R_NOTES, R_FINAL_METRICS,
    R_CONTINUED_TRAJECTORY_REF, R_EXTRA, R_RAW_MEMBERS, R_HAS_STEPS,
    R_HAS_SUBAGENT_TRAJECTORIES, R_N_STEPS, R_STATE, R_PROJECTION_WARNINGS,
    R_FIRST_TIMESTAMP_MS, R_LAST_TIMESTAMP_MS, R_N
};
enum {
    S_STEP_ORDINAL = SL_N_IDENTITY, S_STEP_ID, S_TIMESTAMP_MS, S_TIMESTAMP, S_SOURCE,
    S_MODEL_NAME, S_REASONING_EFFORT, S_MESSAGE, S_MESSAGE_OBJECT, S_REASONING_CONTENT,
    S_REASONING_CONTENT_OBJECT, S_PROMPT_TOKENS, S_COMPLETION_TOKENS, S_CACHED_TOKENS,
    S_COST_USD, S_METRICS_EXTRA, S_LLM_CALL_COUNT, S_IS_COPIED_CONTEXT, S_EXTRA,
    S_HAS_TOOL_CALLS, S_N_TOOL_CALLS, S_OBSERVATION_EXTRA, S_HAS_OBSERVATION_RESULTS,
    S_OBSERVATION_RESULTS, S_OBSERVATION_RESULTS_OBJECT, S_RESULT_CALL_ORDINALS, S_ASSETS,
    S_RAW_MEMBERS, S_N
};
enum {
    C_STEP_ORDINAL = SL_N_IDENTITY, C_STEP_ID, C_CALL_ORDINAL, C_TOOL_CALL_ID,
    C_FUNCTION_NAME, C_ARGUMENTS, C_ARGUMENTS_OBJECT, C_EXTRA, C_RESULTS, C_RESULTS_OBJECT,
    C_RAW_MEMBERS, C_N
};
enum { O_OBJECT_ID, O_KIND, O_MEDIA_TYPE, O_PATH, O_SIZE, O_DATA, O_N };

/* Column definitions of table t (count in *n). */
const pch_sl_coldef *pch_sl__columns(pch_storyline_table t, size_t *n);
/* Directory name of table t inside a root ("runs.lance", ...). */
const char *pch_sl__dir(pch_storyline_table t);

/* ---- row builder ---- */

typedef struct pch_sl_col {
    pch_buf val;      /* fixed-width values */
    pch_buf off;      /* u64 offsets (n+1) for variable width */
    pch_buf data;     /* bytes of variable-width values */
    pch_buf valid;    /* one byte per row */
    size_t n;         /* values appended to this column */
} pch_sl_col;

typedef struct pch_sl_builder {
    pch_ctx *ctx;
    pch_storyline_table table;
    const pch_sl_coldef *defs;
    size_t n_cols;
    pch_sl_col cols[PCH_SL_MAX_COLS];
    size_t n_rows;
    size_t data_bytes;   /* variable-width bytes buffered (flush trigger) */
    int rc;              /* first error, latched */
} pch_sl_builder;

void pch_sl__builder_init(pch_sl_builder *b, pch_ctx *ctx, pch_storyline_table t);
void pch_sl__builder_dispose(pch_sl_builder *b);
void pch_sl__builder_reset(pch_sl_builder *b);
void pch_sl__put_null(pch_sl_builder *b, size_t c);
void pch_sl__put_str(pch_sl_builder *b, size_t c, const char *s);      /* NULL = null */
void pch_sl__put_bytes(pch_sl_builder *b, size_t c, const void *p, size_t n); /* var width */
void pch_sl__put_i64(pch_sl_builder *b, size_t c, int64_t v);
void pch_sl__put_i32(pch_sl_builder *b, size_t c, int32_t v);
void pch_sl__put_f64(pch_sl_builder *b, size_t c, double v);
void pch_sl__put_bool(pch_sl_builder *b, size_t c, bool v);
/* Close a row: every column must have received exactly one value (else PCH_EINVAL). */
int pch_sl__row_end(pch_sl_builder *b);
/* Batch view of the buffered rows (columns point into b; valid until the next put/reset). */
int pch_sl__batch(pch_sl_builder *b, pch_lance_batch *batch, pch_lance_column *cols);
/* Schema of table t (caller frees). */
int pch_sl__schema(pch_lance_schema **out, pch_ctx *ctx, pch_storyline_table t, pch_error *err);

/* ---- row cursor ---- */

typedef struct pch_sl_cursor {
    pch_lance_scanner *sc;
    const pch_lance_batch *batch;
    size_t row;                     /* current row in batch */
    int map[PCH_SL_MAX_COLS];       /* contract column -> batch column, -1 = not read */
    const pch_sl_coldef *defs;
    size_t n_defs;
    bool started, done;
} pch_sl_cursor;

/* Open a cursor on table t of r reading the contract columns in want[0..n) (NULL = all).
** Columns missing from the dataset fail with PCH_ECORRUPT. */
int pch_sl__cursor_open(pch_sl_cursor *c, pch_storyline_root *r, pch_storyline_table t,
                        const int *want, size_t n, pch_error *err);
/* The same over the rows rows[0..n_rows) of the table only (dataset row indices, strictly
** ascending; see pch_lance_scanner_open_rows). */
int pch_sl__cursor_open_rows(pch_sl_cursor *c, pch_storyline_root *r, pch_storyline_table t,
                             const int *want, size_t n, const uint64_t *rows, size_t n_rows,
                             pch_error *err);
/* Row indices (ascending) of table t whose string column `col` equals one of
** keys[0..n_keys), found by scanning that column only. *rows_out: context allocator. */
int pch_sl__find_rows(pch_storyline_root *r, pch_storyline_table t, int col,
                      const char *const *keys, size_t n_keys, uint64_t **rows_out,
                      size_t *n_out, pch_error *err);
void pch_sl__cursor_close(pch_sl_cursor *c);
/* Advance to the next row: 1 = a row, 0 = end, < 0 error. */
int pch_sl__cursor_next(pch_sl_cursor *c, pch_error *err);
bool pch_sl__get_str(const pch_sl_cursor *c, int col, const char **p, size_t *n);
bool pch_sl__get_i64(const pch_sl_cursor *c, int col, int64_t *v);   /* int32/int64 */
bool pch_sl__get_f64(const pch_sl_cursor *c, int col, double *v);
bool pch_sl__get_bool(const pch_sl_cursor *c, int col, bool *v);
/* JSON column rendered as compact JSON text appended to out; false if null. */
int pch_sl__get_json(const pch_sl_cursor *c, int col, pch_buf *out, bool *present,
                     pch_error *err);

#endif
