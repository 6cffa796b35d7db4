/* Internal interface of src/projection (the RFC-0006 Vortex trajectory projection).
** Files: pj_model.c (physical model: lanes of a data file, trajectory → lanes → ATIF),
** pj_content.c (content tiers, blob packs, content directory), pj_root.c (CURRENT,
** manifests, paths, publish), pj_build.c (cluster writer, directory, commit), pj_read.c
** (snapshot, point read, export), pj_verify.c (§15 checks, inspect), pj_docs.c (the document
** list), pj_sync.c (incremental sync, §11.2), pj_compact.c (compaction, §12.3). */
#ifndef PCH_PJ_INT_H
#define PCH_PJ_INT_H

#include <pthread.h>

#include "core/core.h"
#include "io/rfile.h"
#include "json/json.h"
#include "pchronicle/atif.h"
#include "pchronicle-vortex/vortex.h"
#include "pchronicle-vortex/projection.h"

/* ---------------------------------------------------------------- lanes (§6, §7) */

/* Every lane of a data file: group (a non-nullable struct = one lane group, §7.1), name and
** dtype in the vortex.h schema syntax. Step lanes are lists with one item per step of the
** trajectory (the offsets tie them to the trajectory row), tool-call and result lanes are
** lists of lists (second-level offsets per step). docs/vortex-projection.md §2 has the
** meaning of every lane. */
#define PJ_GROUPS(X) \
    X(ID, "id") X(SUMMARY, "summary") X(STEPS, "steps") X(MESSAGE, "message") \
    X(TOOLS, "tools") X(TOKENS, "tokens")

#define PJ_LANES(X) \
    /* identity, run, lineage: once per trajectory (§6.2) */ \
    X(ID, SOURCE_ID, "source_id", "utf8") \
    X(ID, RUN_KEY, "run_key", "utf8") \
    X(ID, TRAJECTORY_KEY, "trajectory_key", "utf8") \
    X(ID, KEY_FLAGS, "key_flags", "u8") \
    X(ID, DOC_PATH, "doc_path", "utf8") \
    X(ID, PREORDER, "preorder", "u32") \
    X(ID, PARENT_RUN_KEY, "parent_run_key", "utf8?") \
    X(ID, PARENT_TRAJECTORY_KEY, "parent_trajectory_key", "utf8?") \
    X(ID, PARENT_LOCAL_ORDINAL, "parent_local_ordinal", "u32?") \
    X(ID, CHILD_RUN_KEYS, "child_run_keys", "list<utf8>") \
    X(ID, CHILD_TRAJECTORY_KEYS, "child_trajectory_keys", "list<utf8>") \
    X(ID, SCHEMA_VERSION, "schema_version", "utf8?") \
    X(ID, SESSION_ID, "session_id", "utf8?") \
    X(ID, TRAJECTORY_ID, "trajectory_id", "utf8?") \
    X(ID, AGENT_NAME, "agent_name", "utf8?") \
    X(ID, AGENT_VERSION, "agent_version", "utf8?") \
    X(ID, AGENT_MODEL_NAME, "agent_model_name", "utf8?") \
    X(ID, STATE, "projection_state", "u8") \
    X(ID, WARNINGS, "projection_warnings", "u32") \
    X(ID, REVISION, "revision", "u64") \
    X(ID, PAGE_INDEX, "page_index", "u32") \
    X(ID, PAGE_COUNT, "page_count", "u32") \
    X(ID, ESCAPE, "escape", "utf8?") \
    /* summary lanes (§14.2) */ \
    X(SUMMARY, STEP_COUNT, "step_count", "u32") \
    X(SUMMARY, TOOL_CALL_COUNT, "tool_call_count", "u32") \
    X(SUMMARY, RESULT_COUNT, "result_count", "u32") \
    X(SUMMARY, MIN_TS, "min_timestamp_ms", "i64?") \
    X(SUMMARY, MAX_TS, "max_timestamp_ms", "i64?") \
    X(SUMMARY, SOURCE_MASK, "source_mask", "u8") \
    X(SUMMARY, MODEL_BLOOM, "model_bloom", "u64") \
    X(SUMMARY, TOOL_BLOOM, "tool_bloom", "u64") \
    X(SUMMARY, COPIED_STEPS, "copied_step_count", "u32") \
    X(SUMMARY, PROMPT_TOKENS, "prompt_tokens", "u64") \
    X(SUMMARY, COMPLETION_TOKENS, "completion_tokens", "u64") \
    X(SUMMARY, FLAGS, "flags", "u8") \
    X(SUMMARY, LOGICAL_BYTES, "logical_bytes", "u64") \
    /* step scalars (§6.3) */ \
    X(STEPS, STEP_ID, "step_id", "list<i64?>") \
    X(STEPS, TS_MS, "timestamp_ms", "list<i64?>") \
    X(STEPS, TS_TEXT, "timestamp_text", "list<utf8?>") \
    X(STEPS, SOURCE, "source", "list<u8>") \
    X(STEPS, MODEL_NAME, "model_name", "list<utf8?>") \
    X(STEPS, REASONING_EFFORT, "reasoning_effort", "list<utf8?>") \
    X(STEPS, LLM_CALL_COUNT, "llm_call_count", "list<i64?>") \
    X(STEPS, COPIED, "is_copied_context", "list<bool?>") \
    X(STEPS, ESCAPE, "escape", "list<utf8?>") \
    /* assets embedded from message parts and result content (--assets embed, §9.6) */ \
    X(STEPS, ASSET_ID, "asset_content_id", "list<list<binary>>") \
    X(STEPS, ASSET_PATH, "asset_path", "list<list<utf8>>") \
    /* message and reasoning content (§6.4, §9): kind + hot / cold / external lanes */ \
    X(MESSAGE, KIND, "message_kind", "list<u8>") \
    X(MESSAGE, HOT, "message_hot", "list<utf8?>") \
    X(MESSAGE, COLD, "message_cold", "list<utf8?>") \
    X(MESSAGE, REF, "message_ref", "list<binary?>") \
    X(MESSAGE, PART_KIND, "part_kind", "list<list<u8>>") \
    X(MESSAGE, PART_HOT, "part_text_hot", "list<list<utf8?>>") \
    X(MESSAGE, PART_COLD, "part_text_cold", "list<list<utf8?>>") \
    X(MESSAGE, PART_REF, "part_text_ref", "list<list<binary?>>") \
    X(MESSAGE, PART_ESCAPE, "part_escape", "list<list<utf8?>>") \
    X(MESSAGE, RKIND, "reasoning_kind", "list<u8>") \
    X(MESSAGE, RHOT, "reasoning_hot", "list<utf8?>") \
    X(MESSAGE, RCOLD, "reasoning_cold", "list<utf8?>") \
    X(MESSAGE, RREF, "reasoning_ref", "list<binary?>") \
    /* tool calls and observation results (§6.1, §5.5) */ \
    X(TOOLS, CALL_ID, "tool_call_id", "list<list<utf8?>?>") \
    X(TOOLS, FUNCTION, "function_name", "list<list<utf8?>>") \
    X(TOOLS, ARGS_HOT, "arguments_hot", "list<list<utf8?>>") \
    X(TOOLS, ARGS_COLD, "arguments_cold", "list<list<utf8?>>") \
    X(TOOLS, ARGS_REF, "arguments_ref", "list<list<binary?>>") \
    X(TOOLS, CALL_ESCAPE, "call_escape", "list<list<utf8?>>") \
    X(TOOLS, OBS_KIND, "observation_kind", "list<u8>") \
    X(TOOLS, OBS_ESCAPE, "observation_escape", "list<utf8?>") \
    X(TOOLS, RES_CALL, "result_call_ordinal", "list<list<u32?>>") \
    X(TOOLS, RES_ORIGIN, "result_origin", "list<list<u8>>") \
    X(TOOLS, RES_KIND, "result_kind", "list<list<u8>>") \
    X(TOOLS, RES_HOT, "result_hot", "list<list<utf8?>>") \
    X(TOOLS, RES_COLD, "result_cold", "list<list<utf8?>>") \
    X(TOOLS, RES_REF, "result_ref", "list<list<binary?>>") \
    X(TOOLS, RES_ESCAPE, "result_escape", "list<list<utf8?>>") \
    /* metrics and training lanes (§6.5): typed, never JSON text */ \
    X(TOKENS, METRICS_KIND, "metrics_kind", "list<u8>") \
    X(TOKENS, PROMPT_TOKENS, "prompt_tokens", "list<i64?>") \
    X(TOKENS, COMPLETION_TOKENS, "completion_tokens", "list<i64?>") \
    X(TOKENS, CACHED_TOKENS, "cached_tokens", "list<i64?>") \
    X(TOKENS, COST_USD, "cost_usd", "list<f64?>") \
    X(TOKENS, PROMPT_IDS, "prompt_token_ids", "list<list<u32>?>") \
    X(TOKENS, COMPLETION_IDS, "completion_token_ids", "list<list<u32>?>") \
    X(TOKENS, LOGPROBS32, "logprobs_f32", "list<list<f32>?>") \
    X(TOKENS, LOGPROBS64, "logprobs_f64", "list<list<f64>?>") \
    X(TOKENS, METRICS_ESCAPE, "metrics_escape", "list<utf8?>") \
    /* prompt-prefix form of prompt_token_ids (§8.2): a step whose ids share a long prefix \
    ** with a checkpoint step earlier in its row holds (base, prefix length, suffix ids) \
    ** instead of the plain list; prompt_ids_len is every step's full count */ \
    X(TOKENS, PROMPT_BASE, "prompt_base", "list<u32?>") \
    X(TOKENS, PROMPT_PREFIX, "prompt_prefix_len", "list<u32?>") \
    X(TOKENS, PROMPT_SUFFIX, "prompt_suffix_ids", "list<list<u32>?>") \
    X(TOKENS, PROMPT_LEN, "prompt_ids_len", "list<u32?>")

#define PJ_G_ENUM(g, name) PJ_G_##g,
enum { PJ_GROUPS(PJ_G_ENUM) PJ_G_N };
#define PJ_L_ENUM(g, l, name, type) PJ_##g##_##l,
enum { PJ_LANES(PJ_L_ENUM) PJ_L_N };

/* Content kinds of message_kind / reasoning_kind / result_kind. */
enum { PJ_CK_ABSENT = 0, PJ_CK_TEXT = 1, PJ_CK_PARTS = 2, PJ_CK_JSON = 3 };
/* part_kind */
enum { PJ_PK_TEXT = 1, PJ_PK_OTHER = 2 };
/* observation_kind: 0 absent, 1 object with results, 2 object without results */
/* metrics_kind: 0 absent (or kept in the step escape), 1 object (typed lanes + escape) */
/* key_flags */
#define PJ_KEY_RUN_GENERATED 0x01
#define PJ_KEY_TRAJ_GENERATED 0x02
#define PJ_KEY_HAS_AGENT 0x04
#define PJ_KEY_HAS_STEPS 0x08
#define PJ_KEY_HAS_SUBAGENTS 0x10
/* summary flags */
#define PJ_SUM_HAS_LOGPROBS 0x01
#define PJ_SUM_HAS_EXTERNAL 0x02
#define PJ_SUM_HAS_TOKEN_IDS 0x04
#define PJ_SUM_HAS_REWARD 0x08
/* projection_warnings beyond the ATIF ones (RFC-0006 §6.5) */
#define PJ_W_LOGPROB_LENGTH 0x10000u

/* Deepest subagent nesting a snapshot holds (§16.1): the builder refuses deeper documents,
** the reader stops there (a cycle in a hostile directory cannot recurse further). */
#define PJ_MAX_SUBAGENT_DEPTH 64

/* Lane metadata, group of each lane, and the data-file dtype. */
extern const char *const pj_group_names[PJ_G_N];
extern const char *const pj_lane_names[PJ_L_N];
extern const uint8_t pj_lane_group[PJ_L_N];
/* Index of a lane inside its group struct. */
uint8_t pj_lane_field(int lane);
int pj_data_dtype(pch_ctx *ctx, pch_vx_dtype **out, pch_error *err);

/* ---------------------------------------------------------------- content (§9) */

typedef struct pj_content pj_content;   /* blob packs + content directory of one build */

/* Where a content value went. */
typedef enum pj_tier { PJ_TIER_HOT = 0, PJ_TIER_COLD = 1, PJ_TIER_EXTERNAL = 2 } pj_tier;

/* Choose the tier of a value of n bytes; an external value is stored (deduplicated by
** BLAKE3) and id receives its content id. */
int pj_content_put(pj_content *c, const void *p, size_t n, uint8_t logical_type,
                   const char *media_type, pj_tier *tier, uint8_t id[32], pch_error *err);
/* The builder's content store: packs are staged under stage_dir. */
int pj_content_new(pj_content **out, pch_ctx *ctx, const char *stage_dir,
                   const pch_vxp_build_options *o, pch_error *err);
void pj_content_free(pj_content *c);
/* Seal the last pack and write the content directory (sorted by id) into stage_dir.
** Appends manifest JSON fragments for packs and the directory to packs_json / dir_json. */
int pj_content_finish(pj_content *c, const char *snapshot_id, pch_buf *packs_json,
                      pch_buf *dir_json, pch_vxp_build_stats *st, pch_error *err);
typedef struct pj_blobs pj_blobs;   /* reader side, below */
/* An incremental sync's content writer also reuses what the parent snapshot already stores
** externally (its packs stay listed in the new manifest): a value of at least dedup_min
** bytes whose id parent has becomes a reference, not a new copy. parent must outlive c. */
void pj_content_parent(pj_content *c, pj_blobs *parent);
/* Names of the staged files to publish, in order (packs first, then the directory). */
size_t pj_content_n_files(const pj_content *c);
const char *pj_content_file(const pj_content *c, size_t i);

/* Reader side: content directory of a snapshot; fetches and checks values. lazy: the
** directory files are read at the first hydration, not at the open (a point read of a
** trajectory without external content reads none of them); manifest must outlive b. */
int pj_blobs_open(pj_blobs **out, pch_ctx *ctx, const char *root, const pch_json_value *manifest,
                  bool lazy, pch_error *err);
void pj_blobs_free(pj_blobs *b);
/* Hydrate one value: checks BLAKE3, raw length and codec (§9.5). out appended. The
** directory files read on the way are counted in st->directory. */
int pj_blobs_get(pj_blobs *b, const uint8_t id[32], pch_buf *out, pch_vxp_query_stats *st,
                 pch_error *err);
/* Whether id is in b's content directories (read now if not yet). */
int pj_blobs_has(pj_blobs *b, const uint8_t id[32], bool *has, pch_error *err);
/* Number of directory entries (the manifest's rows: nothing is read), and entry i (verify). */
uint64_t pj_blobs_count(const pj_blobs *b);
int pj_blobs_check_all(pj_blobs *b, pch_vxp_finding_cb cb, void *payload, size_t *n,
                       pch_error *err);

/* ---------------------------------------------------------------- root (§10) */

#define PJ_CURRENT_FORMAT "pchronicle-vortex-current/v1"
#define PJ_MANIFEST_FORMAT "pchronicle-vortex-manifest/v1"
/* v2: a snapshot of an incremental sync (directory_runs, data files with deleted_rows, §10.4);
** a v1 reader refuses it instead of reading shadowed rows */
#define PJ_MANIFEST_FORMAT_V2 "pchronicle-vortex-manifest/v2"
/* lineage.trajectory_keys: every key made from its own document (docs/atif.md "Stable
** keys"). Absent in roots built before; such keys may depend on other documents, so an
** incremental writer must not extend them. */
#define PJ_KEY_RULE "document"
#define PJ_PIN_FORMAT "pchronicle-vortex-pin/v1"
/* The lanes of a data file (this header's PJ_LANES); /2 added page_index and page_count,
** /3 the prompt-prefix lanes. */
#define PJ_DATA_MODEL "trajectory-struct-of-lane-lists/3"

/* Prompt-prefix form (§8.2): a prompt is stored as its row's previous prompt's first ids
** plus a suffix; a checkpoint (a plain prompt_token_ids list) at least every
** PJ_PROMPT_CHECKPOINT prompts of a row, and whenever a prompt shares less than half of its
** ids with the previous one or its suffix would pass PJ_PROMPT_SUFFIX_MAX ids; a row keeps
** every prompt plain unless the form stores at most 80 % of its ids. */
#define PJ_PROMPT_CHECKPOINT 16
#define PJ_PROMPT_SUFFIX_MAX 65536u

typedef struct pj_current {
    char snapshot_id[64];
    char manifest[128];
    char digest[80];     /* "blake3:<64 hex>" */
} pj_current;

/* Staging directories (pj_stage.c, §11.5, §15). pj_stage_open creates stage (ROOT/staging/
** <writer_id>) and holds an exclusive lock on it (*fd_out) until pj_stage_close, then removes
** every other directory under staging/ that no live writer holds, counting them in *st.
** pj_stage_close removes stage and drops the lock; remove_gate: also staging/.lock and
** staging/ itself if empty (a first build that failed). */
typedef struct pj_stage_stats { uint64_t removed, removed_bytes; } pj_stage_stats;
int pj_stage_open(pch_ctx *ctx, const char *root, const char *stage, const char *writer_id, int *fd_out,
                  pj_stage_stats *st, pch_error *err);
void pj_stage_close(pch_ctx *ctx, const char *root, const char *stage, int fd, bool remove_gate);

/* Remove every staging directory no live writer holds (vacuum; pj_stage.c). */
int pj_stage_sweep(pch_ctx *ctx, const char *root, pj_stage_stats *st, pch_error *err);
/* Count them without removing anything or taking staging/.lock (inspect's report). */
int pj_stage_count(pch_ctx *ctx, const char *root, pj_stage_stats *st);
/* Pins (pj_snap.c, §12.4): ROOT/pins/<name>.json names a snapshot that vacuum keeps. */
typedef struct pj_pin { char name[72]; char snapshot_id[64]; } pj_pin;
/* Every pin of root (*out allocated; none: n 0). A pin file that does not parse fails
** (PCH_ECORRUPT): what it keeps would be unknown. */
int pj_pins_load(pch_ctx *ctx, const char *root, pj_pin **out, size_t *n_out, pch_error *err);

/* "<12 hex ms>-<8 hex>": a snapshot id as the builder makes them. */
bool pj_snapshot_id_ok(const char *s);
/* Take staging/.commit.lock exclusively (created if missing): CURRENT's swap, pin and vacuum
** run under it. Returns the fd (close it to release) or < 0. */
int pj_commit_lock(pch_ctx *ctx, const char *root, pch_error *err);
/* Publish CURRENT naming snapshot_id (its manifest's digest), under staging/.commit.lock,
** only if CURRENT still holds the bytes `expect` (NULL: still absent): otherwise
** PCH_EEXISTS "stale commit", nothing published (§10.2, §11.4). expect_id names it. */
int pj_current_swap(pch_ctx *ctx, const char *root, const pch_buf *expect, const char *expect_id,
                    const char *snapshot_id, const char *digest, pch_error *err);
/* CURRENT as it would name snapshot id (its manifest's digest computed now): how a snapshot
** other than CURRENT's is opened (--snapshot). PCH_ENOTFOUND when there is no such manifest. */
int pj_current_at(pch_ctx *ctx, const char *root, const char *id, pj_current *cur, pch_error *err);

/* Parse and validate CURRENT's bytes (§10.2). */
int pj_current_parse(pch_ctx *ctx, const char *text, size_t len, pj_current *cur, pch_error *err);
/* Parse and validate a manifest's bytes (format, version, registry ids, every file list:
** checked relative paths under their directory, blake3 digests, sizes). */
int pj_manifest_parse(pch_ctx *ctx, const pj_current *cur, const char *text, size_t len,
                      pch_json_parser **parser, const pch_json_value **m, pch_error *err);
/* Read every trajectory directory shard of a snapshot (export, verify). */
int pj_snapshot_load_all(pch_vxp_snapshot *s, pch_error *err);
/* Decode a trajectory directory shard held in memory (fuzzing: every file id it names is
** taken as known). */
int pj_dir_decode_mem(pch_ctx *ctx, const void *data, size_t len, pch_error *err);
/* Read and validate ROOT/CURRENT. PCH_ENOTFOUND when there is none. raw (may be NULL)
** receives the file's bytes whenever it was read, also when they do not parse (the stale
** check, repair). */
int pj_current_read(pch_ctx *ctx, const char *root, pj_current *cur, pch_buf *raw,
                    pch_error *err);
/* A path from a manifest or CURRENT: relative, no "..", no "." segments, no backslash, no
** NUL, under one of the dataset's directories (§16.2). */
int pj_path_check(const char *path, size_t len, pch_error *err);
/* "blake3:<hex>" of a whole file; bytes_out = its size. */
int pj_file_digest(const char *path, char out[80], uint64_t *bytes_out, pch_error *err);
/* The same, and in the same read, "blake3:<hex>" of each part of the file: part i is the
** bytes [cuts[i], cuts[i + 1]), the last one [cuts[n - 1], size) (cuts rising, within the file;
** a data file's clusters and tail, whose digests the manifest lists). */
int pj_file_digest_parts(const char *path, char out[80], uint64_t *bytes_out, const uint64_t *cuts, size_t n,
                         char (*parts)[80], pch_error *err);
/* "blake3:<hex>" of bytes in memory. */
void pj_bytes_digest(char out[80], const void *p, size_t n);
/* "blake3:<hex>" of the byte range [off, off+len) of an open file. */
int pj_range_digest(pch_rfile *fd, uint64_t off, uint64_t len, char out[80], pch_error *err);
/* Exactly len bytes of fd at off into dst (PCH_ECORRUPT when the file ends first). */
int pj_pread(pch_rfile *fd, uint64_t off, size_t len, uint8_t *dst, pch_error *err);
/* The same as the 32 raw bytes of the BLAKE3. */
int pj_range_hash(pch_rfile *fd, uint64_t off, uint64_t len, uint8_t out[32], pch_error *err);
/* Segment digest tables (pj_segs.c): one BLAKE3 per segment of a data file and per block of
** its long segments (partial reads), in pages read on first use. */
typedef struct pj_segtab pj_segtab;
typedef struct pj_segtab_io { uint64_t reads, bytes_read; } pj_segtab_io;
/* Write the table of the Vortex file data_path to out_path (atomically), with the digests of
** the file's tail from tail_off (its footer and layout, read in place by a paged open); the
** digest the manifest records (of the header, page table and tail digests) and the table's
** size. */
/* With row_digests (pch_vx_row_digest of each of the file's n_rows rows, in order) the table
** is version 4 and lists them; NULL: version 3. */
int pj_segtab_write(pch_ctx *ctx, const char *data_path, uint64_t tail_off, uint64_t n_rows, const uint8_t *row_digests,
                    const char *out_path, char digest[80], uint64_t *bytes, pch_error *err);
/* Open ROOT/rel: check its size against the manifest's, read its header and page table
** (version 2; version 1: the whole table) and check their digest and extents before
** anything is used; data_rel names the data file in messages. whole: most pages will be read
** (a scan, verify): on object storage the table is fetched with one request. */
int pj_segtab_load(pj_segtab **out, pch_ctx *ctx, const char *root, const char *rel, uint64_t want_bytes,
                   const char *want_digest, const char *data_rel, uint64_t file_bytes, bool whole, pch_error *err);
/* The table in raw[0..len) (copied), checked as pj_segtab_load does bar the digest (pages
** are checked when used). */
int pj_segtab_parse(pj_segtab **out, pch_ctx *ctx, const uint8_t *raw, size_t len, const char *data_rel,
                    uint64_t file_bytes, pch_error *err);
void pj_segtab_free(pj_segtab *t);
/* The table lists exactly the segment map of f (version 2: each page as it is read; f must
** outlive the table's use). */
int pj_segtab_match(pj_segtab *t, pch_vx_file *f, pch_error *err);
/* A pch_vx_segment_check_fn and a pch_vx_block_check_fn (payload: the table). */
int pj_segtab_check(void *payload, uint32_t seg, uint64_t off, const uint8_t *bytes, uint64_t len, pch_error *err);
int pj_segtab_check_block(void *payload, uint32_t seg, uint32_t block, const uint8_t *bytes, uint64_t len,
                          pch_error *err);
uint64_t pj_segtab_checked(const pj_segtab *t);
/* The block size of the table's block digests (0: a version-1 table, none). */
uint32_t pj_segtab_block_bytes(const pj_segtab *t);
/* The data file's tail offset a version-3 table has digests for (0: none), and the
** pch_vx_tail_check_fn of those digests (payload: the table). */
uint64_t pj_segtab_tail_off(const pj_segtab *t);
int pj_segtab_check_tail(void *payload, uint32_t block, const uint8_t *bytes, uint64_t len, pch_error *err);
/* A version-4 table's row digests: has it any, how many rows (the data file's), and the 32
** bytes of row `row` of the data file (its row page read and checked against the page's
** digest the first time a row of it is asked for). */
bool pj_segtab_has_rows(const pj_segtab *t);
uint64_t pj_segtab_n_rows(const pj_segtab *t);
int pj_segtab_row_digest(pj_segtab *t, uint64_t row, const uint8_t **out, pch_error *err);
/* Reads and bytes read from the table file so far. */
void pj_segtab_io_stats(const pj_segtab *t, pj_segtab_io *out);
/* Every segment and block of the data file at full_path against the table (verify). */
int pj_segtab_check_file(pj_segtab *t, const char *full_path, pch_error *err);
/* Random lowercase hex id of 2*n chars. */
int pj_random_id(char *out, size_t n, pch_error *err);

/* A root on object storage (pj_remote.c): open reads its CURRENT and follows its commits
** (cur/cur_raw/had_current as pj_current_read gives them), put uploads a staged file, commit
** creates the next commit object (stale commit: PCH_EEXISTS) and then CURRENT. */
typedef struct pj_remote pj_remote;
int pj_remote_open(pch_ctx *ctx, const char *uri, pj_remote **out, pj_current *cur, pch_buf *cur_raw,
                   bool *had_current, pch_error *err);
int pj_remote_put(pj_remote *r, const char *local_path, const char *rel, pch_error *err);
int pj_remote_commit(pj_remote *r, const char *snapshot_id, const char *digest, pch_error *err);
void pj_remote_free(pj_remote *r);
/* The snapshot a writer builds on: pj_current_read for a local root; for one on object
** storage, CURRENT and then every commit past it (a CURRENT that lags is not the head). */
int pj_head_read(pch_ctx *ctx, const char *root, pj_current *cur, pch_buf *raw, pch_error *err);
/* PCH_EUNSUPPORTED for an object-storage root: what does not run there yet says so. */
int pj_local_only(const char *root, const char *what, pch_error *err);
/* fn(payload, path, digest, bytes) for every file manifest m lists (§10.3: data files and
** their segment tables, blob packs, directory shards and runs, document lists), digest ""
** when the entry has none, bytes UINT64_MAX when it lists no size; a negative fn result stops
** the walk and is returned. */
int pj_manifest_each_file(const pch_json_value *m,
                          int (*fn)(void *payload, const char *path, const char *digest, uint64_t bytes), void *payload);
/* Load and validate a manifest (digest against CURRENT's). *text owned by the caller. */
/* The whole manifest object at path (s3://...) appended to out, NUL-terminated, at most 256
** MiB: from the process's memo of manifests, or fetched and kept there (pj_root.c). */
int pj_manifest_text(pch_ctx *ctx, pch_buf *out, const char *path, pch_error *err);
int pj_manifest_load(pch_ctx *ctx, const char *root, const pj_current *cur,
                     pch_json_parser **parser, pch_buf *text, const pch_json_value **m,
                     pch_error *err);
/* Members of a manifest with checks (NULL / 0 when absent or of the wrong kind). */
const pch_json_value *pj_json_member(const pch_json_value *o, const char *key, pch_json_kind kind);
bool pj_json_u64(const pch_json_value *o, const char *key, uint64_t *out);
/* A string member copied into out (NUL-terminated, at most cap-1 bytes); false if missing,
** too long or containing NUL. */
bool pj_json_str(const pch_json_value *o, const char *key, char *out, size_t cap);

/* ---------------------------------------------------------------- key index (§13.4) */

/* The key index (docs/vortex-projection.md §5 "Key index"): for every trajectory of the base
** directory, the hashes of the strings a lookup by trajectory key, producer id or session id
** matches, each with the ordinal of the directory shard that holds it, sorted by hash, in
** shards whose manifest entries ("key_index") give their first and last hash. */
#define PJ_KEY_INDEX_SCHEMA "key_hash:u64,shard:u32"
/* The 64-bit hash of a lookup string: the first 8 bytes of its BLAKE3, little-endian. */
uint64_t pj_key_hash(const char *s, size_t n);
/* Is trajectory key t producer id + "@" + doc (src/atif/parse.c)? *n: the producer id's length. */
bool pj_producer_id_len(const char *t, const char *doc, size_t *n);
/* Is trajectory key t `<run>@<doc>` — the key a directory shard of version 2 leaves out? */
bool pj_key_is_derived(const char *t, const char *run, const char *doc);
/* key_flags of a version-2 directory row: its session id is its run key (and left out). */
#define PJ_DIR_SESSION_IS_RUN 1u
/* verify: every lookup string of every base directory entry is in the key index with its
** shard (the snapshot's shards loaded: pj_snapshot_load_all); PCH_OK when there is no index. */
int pj_snapshot_check_key_index(pch_vxp_snapshot *s, pch_error *err);

/* ---------------------------------------------------------------- documents, sync (§11.2) */

/* One input document of a snapshot (pj_docs.c). */
enum { PJ_DOC_PROJECTED = 0, PJ_DOC_REJECTED = 1 };
typedef struct pj_docrec {
    char *path;                   /* relative to the input root (malloc) */
    uint64_t bytes;
    int64_t mtime_ns;             /* -1: unknown */
    uint8_t digest[32];           /* BLAKE3 of its bytes (when has_digest) */
    bool has_digest;
    uint8_t state;                /* PJ_DOC_* */
    uint32_t trajectories;
    uint64_t steps, calls, results, tokens, logical;
} pj_docrec;
void pj_docs_sort(pj_docrec *recs, size_t n);
const pj_docrec *pj_docs_find(const pj_docrec *recs, size_t n, const char *path);
void pj_docs_free(pj_docrec *recs, size_t n);
/* Clusters at least this large keep their lanes' per-trajectory offsets plain (pj_build.c). */
#define PJ_PLAIN_OFFSETS_CLUSTER ((uint64_t)16 << 20)

/* The lane report's columns (directories/lanes/<snapshot-id>.vortex, manifest "lane_report"). */
#define PJ_LANES_SCHEMA "path:utf8,encodings:utf8,chunks:u64,logical_bytes:u64,stored_bytes:u64,encode_seconds:f64"

/* Write recs (sorted by path, unique) as directories/documents/<snapshot_id>.vortex under
** stage; json gets its manifest entry. */
int pj_docs_write(pch_ctx *ctx, const char *stage, const char *snapshot_id, const pj_docrec *recs, size_t n,
                  pch_buf *json, uint64_t *bytes, pch_error *err);
/* The document list manifest m names (digest, schema, order checked); *out malloc'd.
** PCH_EUNSUPPORTED when the snapshot has none (built before incremental sync). */
int pj_docs_load(pch_ctx *ctx, const char *root, const pch_json_value *m, pj_docrec **out, size_t *n, pch_error *err);
/* A document list file's bytes (rel names it in messages): schema, paths sorted and unique,
** digests of 32 bytes, known states (the fuzz target's entry). */
int pj_docs_decode_mem(pch_ctx *ctx, const void *data, size_t len, const char *rel, pj_docrec **out, size_t *n,
                       pch_error *err);

/* What an incremental sync (pj_sync.c) hands the builder for its commit (§10.4, §11.2): the
** parent snapshot's files are kept, its data files with the rows the sync shadows marked
** deleted, its directory runs followed by one new L0 run (the new revisions and the
** tombstones), and the whole new document list. */
typedef struct pj_tomb {
    char *source_id, *run_key, *traj_key, *doc_path;
} pj_tomb;
typedef struct pj_delta {
    const pch_json_value *parent;     /* the parent's manifest (CURRENT when the builder opened) */
    uint64_t **del;                   /* per parent data file: deleted row ranges, [b, e) pairs, */
    size_t *n_del;                    /* sorted and disjoint (NULL / 0: none) */
    pj_tomb *tombs;
    size_t n_tombs;
    pj_docrec *docs;                  /* documents the sync did not project again (kept) */
    size_t n_docs;
    uint64_t revision;                /* the new snapshot's (parent's + 1) */
    uint64_t added, changed, removed, unchanged, read; /* documents, for the manifest's last_sync */
    bool compaction;                  /* a compaction: new files level 1, one base directory, no L0 */
    const uint8_t *keep_file;         /* compaction: per parent data file, 1 = kept as it is (its
                                      ** live entries carried), 0 = rewritten; NULL: sync keeps all */
    uint64_t max_l0_runs, max_l0_memory; /* over either: "maintenance required" (§12.2; 0 = none) */
} pj_delta;
/* The parent snapshot as a sync reads it (pj_read.c): opened at exactly CURRENT cur, its
** manifest, every directory entry (shadowed and tombstones too: a view of each), and each
** data file's rows and deleted row ranges. */
typedef struct pj_entry_view {
    const char *source_id, *run_key, *traj_key, *doc_path;
    const char *session_id, *parent_run, *parent_traj;   /* NULL when absent */
    uint32_t file;                    /* UINT32_MAX for a tombstone */
    uint32_t cluster;
    uint64_t row;
    bool dead, tomb;
    uint64_t logical;
    uint32_t steps, calls;
    bool has_ts;
    int64_t min_ts, max_ts;
} pj_entry_view;
int pj_snapshot_open_cur(pch_vxp_snapshot **out, pch_ctx *ctx, const char *root, const pj_current *cur, pch_error *err);
const pch_json_value *pj_snapshot_manifest(const pch_vxp_snapshot *s);
uint64_t pj_snapshot_n_entries(const pch_vxp_snapshot *s);
size_t pj_snapshot_n_files(const pch_vxp_snapshot *s);
int pj_snapshot_entry_view(pch_vxp_snapshot *s, uint64_t i, pj_entry_view *v, pch_error *err);
void pj_snapshot_file_info(const pch_vxp_snapshot *s, size_t f, uint64_t *rows, const uint64_t **del, size_t *n_del);
const char *pj_snapshot_file_id(const pch_vxp_snapshot *s, size_t f);
/* Clusters of data file f, and cluster c decoded whole (every lane; the snapshot's one-cluster
** cache): its root array, bound lanes and file rows [*begin, *end), valid until the next read
** of s (compaction copies its live rows, pj_compact.c). */
struct pj_rows;
uint32_t pj_snapshot_n_clusters(const pch_vxp_snapshot *s, size_t f);
int pj_snapshot_cluster(pch_vxp_snapshot *s, size_t f, uint32_t c, const pch_vx_array **root, const struct pj_rows **rows,
                        uint64_t *begin, uint64_t *end, pch_error *err);
/* The same, but the decoded cluster becomes the caller's (free *arr and *dt; *rows is bound to
** *arr), so that a reader holds clusters of several files at once (compaction's merge). */
int pj_snapshot_cluster_take(pch_vxp_snapshot *s, size_t f, uint32_t c, pch_vx_array **arr, pch_vx_dtype **dt,
                             struct pj_rows *rows, uint64_t *begin, uint64_t *end, pch_error *err);
/* File rows [*begin, *end) of cluster c of data file f (nothing read). */
void pj_snapshot_cluster_range(const pch_vxp_snapshot *s, size_t f, uint32_t c, uint64_t *begin, uint64_t *end);
/* Data file f's row dtype (its footer read, nothing decoded). */
int pj_snapshot_file_dtype(pch_vxp_snapshot *s, size_t f, const pch_vx_dtype **dt, pch_error *err);
/* Directory entries that place a row (all but tombstones) and live ones (verify), and a
** finding for every key live twice. */
void pj_snapshot_count(const pch_vxp_snapshot *s, uint64_t *placed, uint64_t *live);
void pj_snapshot_check_keys(pch_vxp_snapshot *s, pch_vxp_finding_cb cb, void *payload, size_t *n);
/* Manifest m's layout as build options (new files written as its files were), its source id
** (into source_id) and lineage revision (pj_sync.c; sync and compaction). */
int pj_layout_options(const pch_json_value *m, pch_vxp_build_options *bo, char *source_id, size_t cap, uint64_t *revision,
                      pch_error *err);
/* Make b's commit an incremental one (d must outlive the commit). */
void pj_builder_delta(pch_vxp_builder *b, pj_delta *d);
/* Values the parent snapshot stores externally are reused (pj_content_parent). */
void pj_builder_parent_blobs(pch_vxp_builder *b, pj_blobs *parent);
/* Put a live entry of a kept file (file_id) into b's directory as it is (compaction). */
int pj_builder_carry(pch_vxp_builder *b, const pj_entry_view *v, const char *file_id, pch_error *err);
/* Compaction: copy row `row` of a decoded parent cluster (root, lanes bound in r) as it is;
** v: the trajectory whose page 0 it is (NULL: a continuation page of the last one); more:
** further pages follow. Then, after each document's rows, copied_doc. */
int pj_builder_copy_row(pch_vxp_builder *b, const pch_vx_array *root, const struct pj_rows *r, uint64_t row,
                        const pj_entry_view *v, bool more, pch_error *err);
int pj_builder_copied_doc(pch_vxp_builder *b, uint64_t input_bytes, pch_error *err);
/* The dtype of the rows b writes (a copied row's must equal it). */
const pch_vx_dtype *pj_builder_row_dtype(const pch_vxp_builder *b);
/* The CURRENT b read when it opened (its snapshot is the parent), and its raw bytes. */
const pj_current *pj_builder_parent(const pch_vxp_builder *b, bool *had);

/* ---------------------------------------------------------------- model (§6) */

/* Per-trajectory derived values the builder needs for the directory and summary. */
typedef struct pj_traj_info {
    uint32_t steps, calls, results;
    bool has_ts;
    int64_t min_ts, max_ts;
    uint64_t logical_bytes;
    uint64_t tokens;
    uint32_t pages;               /* rows the trajectory took (1 unless paged) */
} pj_traj_info;

/* Called after each complete row (page) of a trajectory with the page's values; more = further
** pages of the same trajectory follow (the builder may close the cluster there, §7.2). */
typedef int (*pj_row_cb)(void *payload, const pj_traj_info *page, bool more, pch_error *err);

/* Append trajectory i of doc to the root builder (every group): one row, or one row per page
** when its steps hold more than o->cluster_bytes raw bytes (page_index 0..page_count-1, the
** trajectory's own values on page 0). info receives the trajectory's totals. */
int pj_model_append(pch_vx_builder *root, pj_content *content, pch_json_parser *jp,
                    const pch_atif_doc *doc, size_t i, const pch_vxp_build_options *o,
                    pj_row_cb row_cb, void *payload, pj_traj_info *info, pch_error *err);
/* Two bits of a 64-bit bloom for a model / function name (summary lanes, §14.2). */
uint64_t pj_bloom_bits(const char *s, size_t n);

/* A decoded cluster: the root struct array of a data file's row range. */
typedef struct pj_rows {
    const pch_vx_array *g[PJ_G_N];     /* group arrays */
    const pch_vx_array *l[PJ_L_N];     /* lane arrays */
} pj_rows;
int pj_rows_bind(pj_rows *r, const pch_vx_array *root, pch_error *err);

/* Append the ATIF JSON (compact, schema key order) of row `row` of r, without its
** subagent_trajectories (children are appended by the caller via child_cb, called at the
** place of the key when the trajectory had it). Content is hydrated through blobs (may be
** NULL for Preview). */
/* An internal hydration mode: as PCH_VXP_FULL, but each step's metrics leave out
** prompt_token_ids, completion_token_ids and logprobs (the SFT reader never uses them, and
** on RL data formatting them is most of a document). */
#define PJ_FULL_NO_TOKENS ((pch_vxp_hydration)3)
typedef int (*pj_child_cb)(pch_buf *out, const char *run_key, size_t run_len,
                           const char *traj_key, size_t traj_len, void *payload, pch_error *err);
/* A paged trajectory (page_count > 1 on its first row): page_cb appends the steps of pages
** 1..pages-1 (pj_model_write_page on each), *first_step false once a step was written. */
typedef int (*pj_page_cb)(pch_buf *out, const char *traj_key, size_t traj_len, uint32_t pages,
                          bool *first_step, void *payload, pch_error *err);
int pj_model_write_json(pch_buf *out, const pj_rows *r, uint64_t row, pj_blobs *blobs,
                        pch_vxp_hydration mode, pch_vxp_query_stats *st, pj_child_cb child_cb,
                        pj_page_cb page_cb, void *payload, pch_error *err);
/* The steps of row `row`, continuation page `page` of `pages` of trajectory traj_key (checked
** against the row's lanes), as array items after a comma unless *first. */
int pj_model_write_page(pch_buf *out, const pj_rows *r, uint64_t row, const char *traj_key, size_t traj_len,
                        uint32_t page, uint32_t pages, bool *first, pj_blobs *blobs, pch_vxp_hydration mode,
                        pch_vxp_query_stats *st, pch_error *err);
/* The prompt ids of step s (a list index of the step lanes) of a row whose steps begin at
** sb, into cache[s - sb]: the plain list in place, or a prefix-form prompt rebuilt into
** scratch (appended: resolve off into scratch->data once scratch stops growing). cache holds
** one entry per step of the row, zeroed when the row begins; rebuilding a prompt fills in its
** bases first, so a row read in order copies each prefix once. Checked (§8.2): one form per
** step, a base earlier in the same row at most PJ_PROMPT_CHAIN_MAX links from a checkpoint,
** a prefix no longer than the base, the count equal to prompt_ids_len. The lanes PROMPT_IDS,
** PROMPT_BASE, PROMPT_PREFIX, PROMPT_SUFFIX and PROMPT_LEN must be bound. */
#define PJ_PROMPT_CHAIN_MAX 32
typedef struct pj_prompt {
    bool done, has, rebuilt;      /* rebuilt: the ids are scratch->data + off */
    const uint8_t *ids;           /* in place (u32 LE) when !rebuilt */
    size_t off, n;
} pj_prompt;
int pj_prompt_ids(const pj_rows *r, uint64_t sb, uint64_t s, pch_buf *scratch, pj_prompt *cache, pch_error *err);
/* *cache holds n zeroed entries (grown as needed; *cap its size). PCH_ENOMEM. */
int pj_prompt_cache(pj_prompt **cache, size_t *cap, size_t n);

/* Structural checks of a decoded cluster (§15: offsets agree across lanes of one level,
** token/logprob length relations, kinds in range). Findings via cb; returns the count. */
size_t pj_model_check(const pj_rows *r, const char *file, pch_vxp_finding_cb cb, void *payload);

/* Chat messages of steps (pj_model.c, the SFT reader's, §13.5; docs/training.md "SFT"):
** written from the step source and escape, message, reasoning and tool lanes of a cluster
** (bound in the pj_rows; the others may be NULL) with content hydrated through blobs. Each
** appends one JSON object to out. ATIF: tool calls as {id, function_name, arguments}; OPENAI:
** {id, type: "function", function: {name, arguments: a string}} and no empty tool_calls. */
typedef enum pj_chat_dialect { PJ_CHAT_ATIF = 0, PJ_CHAT_OPENAI = 1 } pj_chat_dialect;
typedef struct pj_chat pj_chat;
int pj_chat_new(pj_chat **out, pj_blobs *blobs, pch_error *err);
void pj_chat_free(pj_chat *c);
/* Step s's own message: role, content, reasoning_content, tool_calls. */
int pj_chat_message(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t s, pj_chat_dialect dia, pch_error *err);
/* Step s's observation results are items [b, e) of the result lanes (checked); result q as
** a {"role": "tool", "tool_call_id", "content"} message. */
int pj_chat_results(pj_chat *c, const pj_rows *r, uint64_t s, uint64_t *b, uint64_t *e, pch_error *err);
int pj_chat_result(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t s, uint64_t q, pch_error *err);
/* Step member k kept in the step escape (an untyped value) as JSON, or null. */
int pj_chat_escaped(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t s, const char *k, pch_error *err);
/* agent.tool_definitions of row (an array; "[]" when absent or not an array). */
int pj_chat_tools(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t row, pch_error *err);
/* JSON text of the content values written so far: all of them (messages, reasoning, tool
** arguments, results), and of the step messages and reasoning alone (SFT's MiB/s). */
uint64_t pj_chat_content_bytes(const pj_chat *c);
uint64_t pj_chat_message_bytes(const pj_chat *c);

/* Page lanes and key of a row (lanes bound; 0 / "" where null). */
void pj_model_page_info(const pj_rows *r, uint64_t row, uint64_t *page, uint64_t *pages, const char **key,
                        size_t *key_len);
/* The page sequence of a data file's rows (verify): page 0 opens a trajectory, page k > 0
** must continue the open one (same key and count, next index); a trajectory left with pages
** missing is a finding when the next one opens or at the end of the file. */
typedef struct pj_page_seq {
    char key[512];
    uint64_t next, pages;
} pj_page_seq;
/* Feed the next row; *cont = it is a continuation page. PCH_ECORRUPT with msg on a finding. */
int pj_page_seq_next(pj_page_seq *q, uint64_t page, uint64_t pages, const char *key, size_t key_len, bool *cont,
                     char *msg, size_t cap);
int pj_page_seq_end(pj_page_seq *q, char *msg, size_t cap);
/* Page count of the trajectory whose first page is row `row` (fails if it is a continuation). */
int pj_model_pages(const pj_rows *r, uint64_t row, uint64_t *pages, pch_error *err);

/* The training filter's run keys admit run key p[0..n) (every run when it names none). */
bool pj_train_run_wanted(const pch_vxp_train_filter *f, const char *p, size_t n);
/* Step s passes f's model and time window, given the items of its model_name and
** timestamp_ms step lanes (a step without a timestamp is outside any window). */
bool pj_train_step_in(const pch_vxp_train_filter *f, const pch_vx_array *model, const pch_vx_array *ts, uint64_t s);
/* Prune a training read's lane scan by f's time window and model and by the summaries'
** source bits (0 = any) and copied-step counts (copied: 0 = a step that is not copied, -1
** any), pch_vxp_prune. */
int pj_train_prune(pch_vxp_lanes *it, const pch_vxp_train_filter *f, uint8_t source_bits, int copied, pch_error *err);

/* A lane scan read ahead by worker threads (the training readers, pj_ahead.c): next hands out
** the clusters in scan order (lanes, rows, and the keep flags of a pruned scan or NULL), each
** valid until the following call, while up to `workers` others are being read and decoded.
** Worker 0 uses the caller's iterator, each other one a clone over a twin of its snapshot.
** workers 0 = one per online CPU, at most PJ_AHEAD_MAX_WORKERS. The iterator must not be used
** otherwise while this is open; it stays the caller's. */
#define PJ_AHEAD_MAX_WORKERS 4
typedef struct pj_lanes_ahead pj_lanes_ahead;
int pj_lanes_ahead_open(pj_lanes_ahead **out, pch_vxp_lanes *it, unsigned workers, pch_error *err);
int pj_lanes_ahead_next(pj_lanes_ahead *a, const pch_vx_array *const **lanes, uint64_t *rows, const uint8_t **keep,
                        const uint8_t **live, bool *eof, pch_error *err);
/* The scan skipped clusters (zone or summary pruned) right before the cluster handed out last,
** or before the end when next said eof. */
bool pj_lanes_ahead_gap(const pj_lanes_ahead *a);
/* Frees the workers' iterators and twins; their snapshot stats are added to the caller's. */
void pj_lanes_ahead_free(pj_lanes_ahead *a);
/* The scan's stats, summed over the workers as of the clusters they handed out (exact once
** next said eof). */
void pj_lanes_ahead_stats(pj_lanes_ahead *a, pch_vxp_lanes_stats *out);

/* What pj_ahead.c needs of a lane iterator and a snapshot (pj_read.c). A clone reads the same
** lanes with the same pruning and text codes over snapshot s; a strided iterator reads only
** the clusters whose ordinal in the scan is phase modulo stride; next_owned hands the decoded
** cluster's arrays to the caller with that ordinal (at eof, the number of clusters). */
int pj_lanes_clone(pch_vxp_lanes **out, const pch_vxp_lanes *it, pch_vxp_snapshot *s, pch_error *err);
void pj_lanes_stride(pch_vxp_lanes *it, uint32_t stride, uint32_t phase);
size_t pj_lanes_count(const pch_vxp_lanes *it);
int pj_lanes_next_owned(pch_vxp_lanes *it, pch_vx_array **arr, pch_vx_dtype **dt, uint64_t *ord, bool *eof,
                        pch_error *err);
/* A second handle on s's snapshot (same manifest, re-read and checked; its own file handles,
** caches and digest tables), for a thread of its own; absorb adds a twin's I/O stats to s. */
int pj_snapshot_twin(pch_vxp_snapshot **out, const pch_vxp_snapshot *s, pch_error *err);
void pj_snapshot_absorb(pch_vxp_snapshot *s, const pch_vxp_snapshot *twin);
/* The snapshot an iterator reads. */
pch_vxp_snapshot *pj_lanes_snapshot(const pch_vxp_lanes *it);

/* The context a snapshot was opened with. */
pch_ctx *pj_snapshot_ctx(const pch_vxp_snapshot *s);
/* The snapshot's content directory (loaded on first use) for hydrating external values. */
int pj_snapshot_blobs(pch_vxp_snapshot *s, pj_blobs **out, pch_error *err);

/* Embedded assets of trajectory row `row`: cb(content_id, relative path) for each. */
int pj_model_assets(const pj_rows *r, uint64_t row,
                    int (*cb)(const uint8_t id[32], const char *path, size_t path_len, void *payload),
                    void *payload, pch_error *err);


/* A piece of a writer's work run on a thread of its own while the caller goes on (a sync's
** loads during its walk, a commit's document list), or on the caller's thread at the join when
** no thread started or none was asked for. pj_task_join runs or joins it once; its result,
** and on failure its error, are the task's. */
typedef struct pj_task {
    int (*fn)(void *arg, pch_error *err);
    void *arg;
    pthread_t th;
    bool running, done;
    int rc;
    pch_error err;
} pj_task;
void pj_task_start(pj_task *t, int (*fn)(void *arg, pch_error *err), void *arg, bool thread);
int pj_task_join(pj_task *t, pch_error *err);

#endif
