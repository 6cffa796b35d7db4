/* ATIF (Agent Trajectory Interchange Format) v1.0–v1.8: strict parser and validator,
** normalised trajectory model, and ATIF writer (specs/atif.md §2–§3; RFC-0006 §5.2, §5.3,
** §5.5, §5.6, §6.7).
**
** One document is parsed at a time (streaming: a corpus is never held whole). The result
** is a pch_atif_doc: the document's trajectory tree flattened in preorder into independent
** trajectories (embedded subagent_trajectories become children with parent/child indices
** and local ordinals), each with a TrajectoryKey (source_id, run_key, trajectory_key).
** Every known field keeps its exact JSON value (compact text), unknown keys are kept in
** document order, and the writer rebuilds an equal JSON value (key order and whitespace
** aside) from that form.
**
** Thread rule: one thread at a time per pch_atif_doc; docs are independent. */
#ifndef PCHRONICLE_ATIF_H
#define PCHRONICLE_ATIF_H

#include <stdbool.h>
#include <stdio.h>
#include "pchronicle/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- findings (validation errors and warnings) ---- */

typedef enum pch_atif_severity {
    PCH_ATIF_ERROR = 0,    /* the document breaks the schema (rejected) */
    PCH_ATIF_WARNING = 1   /* a documented producer deviation, accepted unless strict */
} pch_atif_severity;

/* One finding. All strings borrowed: valid only during the callback. */
typedef struct pch_atif_finding {
    pch_atif_severity severity;
    const char *code;      /* stable rule code, e.g. "source-call-id" (docs/atif.md §3) */
    const char *file;      /* document name as given by the caller ("" if none) */
    const char *pointer;   /* RFC 6901 JSON pointer into the document ("" = root) */
    const char *message;   /* one line, lower case */
} pch_atif_finding;

/* Receives every finding in document order. Return 0 to continue, non-zero to stop
** (the parse then fails with PCH_ECANCELED). */
typedef int (*pch_atif_finding_cb)(const pch_atif_finding *f, void *payload);

/* ---- options ---- */

typedef struct pch_atif_options {
    unsigned version;          /* PCH_ATIF_OPTIONS_VERSION */
    bool strict;               /* producer deviations are errors (Harbor-equivalent) */
    const char *source_id;     /* TrajectoryKey.source_id ("" if NULL) */
    const char *source_fingerprint; /* seeds generated keys ("" if NULL) */
    unsigned threads;          /* version 2: pch_atif_dir_import parses up to this many
                               ** documents ahead on worker threads (0/1: none); callbacks
                               ** still run on the calling thread, in path order */
    /* version 3: pch_atif_dir_import asks select about each file of the walk (walking thread,
    ** path order; path as opened, rel relative to the root, its size and modification time
    ** in ns as the walk found them) before it reads it: 1 read it, 0 skip it (not read, not
    ** counted), < 0 stop the import with that code. NULL: read all. An incremental sync reads
    ** only the documents whose size or time changed. */
    int (*select)(const char *path, const char *rel, uint64_t bytes, int64_t mtime_ns, void *payload);
    void *select_payload;
    bool digest;               /* version 3: keep the BLAKE3 of each document's bytes
                               ** (pch_atif_doc_source) */
    /* version 4: with select set and threads > 1, the walk lists every file first (on two
    ** threads), then calls walked once (calling thread, select_payload; < 0 stops the import
    ** with that code), and only then asks select about the files, in path order; with
    ** threads <= 1 walked is called before the walk. A caller that needs its own state to
    ** answer select (a sync's previous document list) builds it while the walk runs. */
    int (*walked)(void *payload);
    bool tokens;               /* version 5: keep the metrics token arrays typed
                               ** (pch_atif_step.tokens) for a consumer that stores them
                               ** typed; false: tokens[].typed stays false (no copies) */
} pch_atif_options;
#define PCH_ATIF_OPTIONS_VERSION 5
#define PCH_ATIF_OPTIONS_INIT { PCH_ATIF_OPTIONS_VERSION, false, NULL, NULL, 1, NULL, NULL, false, NULL, false }

/* ---- normalised model (read-only views; lifetime: until pch_atif_doc_free) ---- */

/* A field's exact JSON value as compact text; ptr == NULL when the key is absent (an
** explicit JSON null is the text "null"). */
typedef struct pch_atif_raw {
    const char *ptr;
    size_t len;
} pch_atif_raw;

/* An unknown (non-schema) member kept for lossless export. */
typedef struct pch_atif_member {
    const char *key;       /* decoded, NUL-terminated (may contain NUL: use key_len) */
    size_t key_len;
    pch_atif_raw value;
} pch_atif_member;

/* Field indices of the objects the model keeps field by field. */
enum {
    PCH_ATIF_T_SCHEMA_VERSION, PCH_ATIF_T_SESSION_ID, PCH_ATIF_T_TRAJECTORY_ID,
    PCH_ATIF_T_AGENT, PCH_ATIF_T_STEPS, PCH_ATIF_T_NOTES, PCH_ATIF_T_FINAL_METRICS,
    PCH_ATIF_T_CONTINUED_TRAJECTORY_REF, PCH_ATIF_T_EXTRA, PCH_ATIF_T_SUBAGENT_TRAJECTORIES,
    PCH_ATIF_T_N
};
enum {
    PCH_ATIF_S_STEP_ID, PCH_ATIF_S_TIMESTAMP, PCH_ATIF_S_SOURCE, PCH_ATIF_S_MODEL_NAME,
    PCH_ATIF_S_REASONING_EFFORT, PCH_ATIF_S_MESSAGE, PCH_ATIF_S_REASONING_CONTENT,
    PCH_ATIF_S_TOOL_CALLS, PCH_ATIF_S_OBSERVATION, PCH_ATIF_S_METRICS,
    PCH_ATIF_S_LLM_CALL_COUNT, PCH_ATIF_S_IS_COPIED_CONTEXT, PCH_ATIF_S_EXTRA,
    PCH_ATIF_S_N
};
enum {
    PCH_ATIF_C_TOOL_CALL_ID, PCH_ATIF_C_FUNCTION_NAME, PCH_ATIF_C_ARGUMENTS, PCH_ATIF_C_EXTRA,
    PCH_ATIF_C_N
};
enum {
    PCH_ATIF_R_SOURCE_CALL_ID, PCH_ATIF_R_CONTENT, PCH_ATIF_R_SUBAGENT_TRAJECTORY_REF,
    PCH_ATIF_R_EXTRA, PCH_ATIF_R_N
};

typedef enum pch_atif_source {
    PCH_ATIF_SOURCE_UNKNOWN = 0, PCH_ATIF_SOURCE_SYSTEM, PCH_ATIF_SOURCE_USER,
    PCH_ATIF_SOURCE_AGENT
} pch_atif_source;

/* Where a normalised observation result came from (RFC-0006 §5.5). ATIF input only
** produces step observations; the value is kept so export can restore the original shape. */
typedef enum pch_atif_result_origin {
    PCH_ATIF_ORIGIN_OBSERVATION = 0
} pch_atif_result_origin;

typedef struct pch_atif_tool_call {
    uint32_t ordinal;                       /* position in the step's tool_calls */
    pch_atif_raw f[PCH_ATIF_C_N];
    const pch_atif_member *unknown; uint32_t n_unknown;
    const char *tool_call_id;               /* decoded, NULL if absent / not a string */
    const char *function_name;              /* decoded, NULL if absent / not a string */
} pch_atif_tool_call;

typedef struct pch_atif_result {
    uint32_t ordinal;                       /* position in observation.results */
    int32_t call_ordinal;                   /* correlated tool call, -1 = none (nullable) */
    pch_atif_result_origin origin;
    pch_atif_raw f[PCH_ATIF_R_N];
    const pch_atif_member *unknown; uint32_t n_unknown;
    const char *source_call_id;             /* decoded, NULL if absent/null */
} pch_atif_result;

/* A metrics token array read once by the parser, typed (RFC-0006 §6.5): prompt/completion
** ids when every element is an integer written without fraction, exponent or sign in
** 0..2^32-1 (uint32_t), logprobs when every element is a finite number written with a
** fraction or exponent (double, the value the JSON text denotes). Its text is
** f[PCH_ATIF_S_METRICS].ptr + off, len bytes ('[' to ']'): set only where that text is the
** document's own (a compact document), so a consumer scanning the metrics text can tell
** this member from a duplicate of its key. Kept only when pch_atif_options.tokens asks for
** them. typed false: read the text. */
typedef struct pch_atif_tokens {
    bool typed;
    const void *data;                       /* n uint32_t or double; NULL when n is 0 */
    uint32_t n;
    size_t off, len;
} pch_atif_tokens;

typedef struct pch_atif_step {
    uint32_t ordinal;                       /* step_ordinal: position in steps (input order) */
    pch_atif_raw f[PCH_ATIF_S_N];           /* f[TOOL_CALLS], f[OBSERVATION]: only a JSON null */
    const pch_atif_member *unknown; uint32_t n_unknown;
    int64_t step_id;                        /* 0 if absent or not an integer */
    pch_atif_source source;
    bool has_timestamp; int64_t timestamp_ms; /* UTC ms when the timestamp parsed */
    const char *timestamp;                  /* decoded original string, NULL if absent */
    const char *model_name;                 /* decoded, NULL if absent/null */
    const char *reasoning_content;          /* decoded, NULL if absent/null */
    bool has_llm_call_count; int64_t llm_call_count;
    int is_copied_context;                  /* -1 absent/null, 0 false, 1 true */
    int64_t prompt_tokens, completion_tokens, cached_tokens; /* -1 if absent */
    bool has_cost_usd; double cost_usd;
    bool has_tool_calls;                    /* the key is present */
    const pch_atif_tool_call *calls; uint32_t n_calls;
    bool has_observation;
    const pch_atif_member *obs_unknown; uint32_t n_obs_unknown;
    bool has_results;                       /* observation.results present */
    const pch_atif_result *results; uint32_t n_results;
    /* metrics.prompt_token_ids, completion_token_ids, logprobs (pch_atif_tokens) */
    pch_atif_tokens tokens[3];
} pch_atif_step;

typedef enum pch_atif_state {
    PCH_ATIF_STATE_OPEN = 0,       /* not observed to end (no final_metrics) */
    PCH_ATIF_STATE_TERMINAL,       /* final_metrics present: the producer finished it */
    PCH_ATIF_STATE_TRUNCATED,      /* continued elsewhere or declared incomplete */
    PCH_ATIF_STATE_INVALID         /* failed validation (kept only for diagnostics) */
} pch_atif_state;

/* projection_warnings bits (RFC-0006 §5.6, §6.7); names via pch_atif_warning_name(). */
#define PCH_ATIF_W_NON_MONOTONIC_STEP_ID   0x0001u
#define PCH_ATIF_W_UNKNOWN_KEYS            0x0002u
#define PCH_ATIF_W_DUPLICATE_TOOL_CALL_ID  0x0004u
#define PCH_ATIF_W_UNRESOLVED_SUBAGENT_REF 0x0008u
#define PCH_ATIF_W_GENERATED_KEY           0x0010u
#define PCH_ATIF_W_MISSING_SCHEMA_VERSION  0x0020u
#define PCH_ATIF_W_LEGACY_SUBAGENT_REF     0x0040u
#define PCH_ATIF_W_UNRESOLVED_CONTINUATION 0x0080u
#define PCH_ATIF_W_KEY_COLLISION           0x0100u
#define PCH_ATIF_W_COUNT 9

typedef struct pch_atif_trajectory {
    /* TrajectoryKey (RFC-0006 §5.2). Generated keys are physical identity only; they are
    ** never written back as producer ids. */
    const char *source_id;
    const char *run_key;
    const char *trajectory_key;
    bool run_key_generated, trajectory_key_generated;
    const char *doc_path;                   /* document the trajectory came from */
    uint32_t preorder;                      /* preorder ordinal inside the document */
    int32_t parent;                         /* index in the doc of the embedding parent, -1 */
    int32_t parent_local_ordinal;           /* index in parent's subagent_trajectories, -1 */
    const uint32_t *children; uint32_t n_children; /* embedded children, in array order */
    pch_atif_raw f[PCH_ATIF_T_N];           /* f[AGENT], f[STEPS], f[SUBAGENT_TRAJ...] unused */
    const pch_atif_member *unknown; uint32_t n_unknown;
    bool has_agent;
    pch_atif_raw agent_f[5];                /* name, version, model_name, tool_definitions, extra */
    const pch_atif_member *agent_unknown; uint32_t n_agent_unknown;
    bool has_steps;
    const pch_atif_step *steps; uint32_t n_steps;
    bool has_subagent_trajectories;         /* the key is present (possibly []) */
    const char *schema_version;             /* decoded or NULL */
    const char *session_id;                 /* producer_session_id (decoded or NULL) */
    const char *trajectory_id;              /* producer_trajectory_id (decoded or NULL) */
    const char *agent_name, *agent_version, *agent_model_name;
    const char *continued_trajectory_ref;   /* decoded or NULL */
    pch_atif_state state;
    uint32_t warnings;                      /* PCH_ATIF_W_* */
} pch_atif_trajectory;

typedef struct pch_atif_doc pch_atif_doc;

/* Parse and validate one ATIF document. findings (may be NULL) receives every error and
** warning with `file` and a JSON pointer. On success *out holds the normalised document
** (trajectories in preorder; index 0 is the document root). Errors: PCH_EINVAL (JSON
** syntax, or at least one validation error: the message names the first), PCH_ELIMIT,
** PCH_ENOMEM, PCH_ECANCELED (the callback stopped it). On error *out is NULL. */
PCH_API int pch_atif_doc_parse(pch_atif_doc **out, pch_ctx *ctx, const char *text, size_t len,
                               const char *file, const pch_atif_options *opts,
                               pch_atif_finding_cb findings, void *payload, pch_error *err);
PCH_API void pch_atif_doc_free(pch_atif_doc *doc);

/* Validate only (same checks and findings as parse). n_errors/n_warnings may be NULL.
** Returns PCH_OK even when the document has errors (count them); fails only on ENOMEM,
** ELIMIT or ECANCELED. A JSON syntax error is reported as one finding (code "json"). */
PCH_API int pch_atif_validate(pch_ctx *ctx, const char *text, size_t len, const char *file,
                              const pch_atif_options *opts, pch_atif_finding_cb findings,
                              void *payload, size_t *n_errors, size_t *n_warnings,
                              pch_error *err);

/* The BLAKE3 of the bytes doc was parsed from and their length, when the directory import
** that read it had options.digest set (false otherwise). */
PCH_API bool pch_atif_doc_source(const pch_atif_doc *doc, uint8_t digest[32], uint64_t *bytes);

/* Trajectories of doc (borrowed; valid until pch_atif_doc_free). */
PCH_API size_t pch_atif_doc_count(const pch_atif_doc *doc);
PCH_API const pch_atif_trajectory *pch_atif_doc_get(const pch_atif_doc *doc, size_t i);

/* Override the generated/producer keys of trajectory i (used by importers that resolve
** collisions across documents). Strings are copied. Errors: PCH_ENOMEM, PCH_EINVAL. */
PCH_API int pch_atif_doc_set_key(pch_atif_doc *doc, size_t i, const char *run_key,
                                 const char *trajectory_key, bool generated, pch_error *err);

/* Write trajectory i of doc as an ATIF document (its embedded subagents nested again
** under subagent_trajectories). pretty: 2-space indentation, else compact. *out allocated
** with the context allocator (free with pch_free), NUL-terminated. Errors: PCH_ENOMEM,
** PCH_EINVAL. */
PCH_API int pch_atif_doc_write(const pch_atif_doc *doc, size_t i, bool pretty, char **out,
                               size_t *len_out, pch_error *err);

/* Static name of a projection_warnings bit ("non_monotonic_step_id", ...), NULL if unknown. */
PCH_API const char *pch_atif_warning_name(uint32_t bit);
/* Static name of a projection state ("open", "terminal", "truncated", "invalid"). */
PCH_API const char *pch_atif_state_name(pch_atif_state s);

/* Check a producer-supplied relative path (trajectory_path, continued_trajectory_ref,
** image/audio path) against the input-root confinement rules (RFC-0006 §16.2, §9.6): not
** empty, not absolute, no URL scheme, no "." or ".." segment, no backslash, no NUL.
** Errors: PCH_EINVAL naming the rule. */
PCH_API int pch_atif_path_check(const char *path, size_t len, pch_error *err);

/* ---- a directory of ATIF documents (RFC-0006 §5.2, §5.3; streaming) ---- */

typedef enum pch_atif_link_kind {
    PCH_ATIF_LINK_SUBAGENT_FILE = 0,  /* subagent_trajectory_ref[].trajectory_path */
    PCH_ATIF_LINK_CONTINUATION = 1    /* continued_trajectory_ref */
} pch_atif_link_kind;

/* A cross-document reference, resolved after the walk. Strings borrowed for the callback. */
typedef struct pch_atif_link {
    pch_atif_link_kind kind;
    const char *from_doc;          /* document holding the reference (relative path) */
    const char *from_run_key, *from_trajectory_key;
    uint32_t step_ordinal, result_ordinal, ref_ordinal; /* subagent refs only */
    const char *target;            /* the producer's path text */
    const char *target_doc;        /* normalised path inside the root, NULL if not confined */
    const char *to_run_key, *to_trajectory_key; /* NULL when unresolved (dangling/outside) */
} pch_atif_link;

typedef struct pch_atif_dir_stats {
    size_t documents, trajectories, rejected, bytes;
    size_t links, unresolved_links;
} pch_atif_dir_stats;

/* Walk root (recursively, byte order, *.json, no symlinks) one document at a time: each
** valid document is parsed (file = its path relative to root), its keys are made unique
** within the source (a producer id already taken becomes a generated key, flagged
** key_collision) and on_doc is called; the doc is freed when on_doc returns (unless on_doc
** returns 1: then it took ownership). Invalid documents go to findings and count as
** rejected (strict or not, they are never passed on). After the walk every file reference
** (trajectory_path, continued_trajectory_ref) is resolved inside root only (no "..", no
** absolute paths, no URLs) and reported to on_link. Only per-document keys are kept in
** memory, never the documents. Callbacks return <0 to abort with that code. */
PCH_API int pch_atif_dir_import(pch_ctx *ctx, const char *root, const pch_atif_options *opts,
                                int (*on_doc)(pch_atif_doc *doc, void *payload),
                                int (*on_link)(const pch_atif_link *link, void *payload),
                                pch_atif_finding_cb findings, void *payload,
                                pch_atif_dir_stats *stats, pch_error *err);

/* ---- linter (pchronicle validate --input-format atif) ---- */

typedef struct pch_atif_lint_options {
    unsigned version;          /* PCH_ATIF_LINT_OPTIONS_VERSION */
    bool strict;
    bool json;                 /* one JSON object per finding instead of text lines */
} pch_atif_lint_options;
#define PCH_ATIF_LINT_OPTIONS_VERSION 1
#define PCH_ATIF_LINT_OPTIONS_INIT { PCH_ATIF_LINT_OPTIONS_VERSION, false, false }

/* Validate each path (a file, or a directory walked recursively for *.json in byte order)
** and print one line per finding to out:
**   text: "FILE:POINTER: MESSAGE" (errors), "FILE:POINTER: warning: MESSAGE" (warnings)
**   json: {"file":…,"pointer":…,"severity":"error"|"warning","code":…,"message":…}
** *n_errors_out counts errors (I/O errors count as errors). Returns PCH_OK unless output
** or allocation failed. */
PCH_API int pch_atif_lint(pch_ctx *ctx, const char *const *paths, size_t n_paths,
                          const pch_atif_lint_options *opts, FILE *out, size_t *n_errors_out,
                          pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
