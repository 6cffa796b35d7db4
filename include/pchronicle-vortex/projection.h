/* The Vortex trajectory projection (RFC-0006 §5–§11.1, §13.4, §13.6, §14.2, §15, §16):
** normalised ATIF trajectories stored as immutable dataset snapshots of Vortex files.
**
**   ROOT/CURRENT                                  pointer to the live manifest (§10.2)
**   ROOT/manifests/<snapshot-id>.json             immutable snapshot manifest (§10.3)
**   ROOT/directories/trajectory/<snap>-<n>.vortex trajectory directory shards (§10.4)
**   ROOT/directories/content/<snap>-<n>.vortex    content directory (content id → pack row)
**   ROOT/data/<partition>/<file-id>.vortex        trajectory-cluster data files (§6, §7)
**   ROOT/blobs/<pack-id>.vortex                   external content packs (§9.4)
**   ROOT/staging/<writer-id>/                     unpublished work (§11.1)
**
** docs/vortex-projection.md describes the physical model, the layout decision and every
** file. Thread rule: one thread at a time per handle. Errors as in vortex.h plus
** PCH_EEXISTS (CURRENT changed under a writer: a stale commit, never last-write-wins)
** and PCH_ENOTFOUND (no such key). */
#ifndef PCHRONICLE_VORTEX_PROJECTION_H
#define PCHRONICLE_VORTEX_PROJECTION_H

#include <stdio.h>
#include "pchronicle/ctx.h"
#include "pchronicle/atif.h"
#include "pchronicle/sql.h"
#include "pchronicle-vortex/vortex.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- build (§11.1) */

typedef enum pch_vxp_assets {
    PCH_VXP_ASSETS_REFERENCE = 0,  /* preserve-reference: keep the relative path (§9.6) */
    PCH_VXP_ASSETS_EMBED = 1       /* embed-assets: asset bytes go to blob packs by BLAKE3 */
} pch_vxp_assets;

typedef struct pch_vxp_build_options {
    unsigned version;              /* PCH_VXP_BUILD_OPTIONS_VERSION */
    uint64_t hot_max_bytes;        /* content below this stays inline (hot), default 8 KiB */
    uint64_t cold_max_bytes;       /* below this: cold lane in the same file, default 256 KiB;
                                   ** at or above: external blob pack (§9.3) */
    uint64_t cluster_bytes;        /* logical bytes per trajectory cluster, default 4 MiB */
    uint64_t file_bytes;           /* roll data files at this size, default 32 MiB (a point
                                   ** read reads its file's footer: docs/vortex-projection.md §8) */
    uint64_t pack_bytes;           /* roll blob packs at this size, default 256 MiB */
    uint64_t directory_shard_rows; /* trajectory directory rows per shard, default 1,024 (a
                                   ** point read decodes one shard, found by fence keys) */
    pch_vxp_assets assets;
    const char *assets_root;       /* input root that asset paths are confined to (§16.2) */
    const char *source_id;         /* TrajectoryKey.source_id ("" if NULL) */
    const char *source_uri;        /* lineage: where the input came from (text) */
    const char *partition;         /* data/<partition>/, default "default" */
    int progress;                  /* 1: progress lines on stderr */
    uint32_t threads;              /* lane-encoding threads; 0 = the online CPUs (at most 8).
                                   ** Files are byte-identical for every value. */
    uint64_t dedup_min_bytes;      /* a value of at least this size seen twice before in
                                   ** the build goes external, stored once (§9.3); 0 = off.
                                   ** PCH_VXP_DEDUP_DEFAULT (the default): 256 on a local
                                   ** root (scaled 31 % smaller: its repeats lie beyond a
                                   ** 64 KiB frame), off on object storage (each external
                                   ** value a point read hydrates is a request of its own:
                                   ** docs/vortex-projection.md §8, "Repeated content") */
    uint64_t dedup_index_bytes;    /* memory for the values seen (8 bytes each), default 64 MiB */
    int prompt_prefix;             /* 1 (default): prompt ids that share long prefixes go into
                                   ** the prompt-prefix lanes where that saves >= 20 % (§8.2);
                                   ** 0: every prompt in the plain list lane */
    uint64_t frame_bytes;          /* zstd frames of the data files' lanes close at the first
                                   ** trajectory boundary after this many payload bytes, so a
                                   ** point read decompresses only its own frames (§7.2,
                                   ** §13.4); 0 = one frame per lane chunk. Default 64 KiB */
    uint64_t zstd_dict_bytes;      /* a framed lane chunk of at least 64 x this many payload
                                   ** bytes trains a zstd dictionary of at most this size that
                                   ** its frames share (standard vortex.zstd, §7.2): the
                                   ** repeats small frames cannot see. 0 = none */
    uint64_t frame_rows;           /* ... and once a frame holds this many trajectories (and
                                   ** 1 KiB), with each lane's per-trajectory offsets plain:
                                   ** a point read's lane bytes then follow its trajectory at
                                   ** any cluster size (issue 18 item 5). 0 = by bytes alone.
                                   ** Default PCH_VXP_FRAME_ROWS_DEFAULT */
    uint64_t frame_ratio;          /* options version 6: a document of L logical bytes with
                                   ** L < frame_bytes / this ratio gets frames of at most
                                   ** max(4 KiB, ratio x L) in every lane (neighbours cut
                                   ** away), so a point read of a small document reads frames
                                   ** of its size, not 64 KiB ones (issue 18 item 5). 0 = off.
                                   ** Default PCH_VXP_FRAME_RATIO_DEFAULT */
} pch_vxp_build_options;
#define PCH_VXP_BUILD_OPTIONS_VERSION 6
#define PCH_VXP_FRAME_ROWS_DEFAULT 32
#define PCH_VXP_DEDUP_DEFAULT UINT64_MAX   /* dedup_min_bytes: 256 local, 0 on object storage */
#define PCH_VXP_DEDUP_LOCAL 256
#define PCH_VXP_BUILD_OPTIONS_INIT { PCH_VXP_BUILD_OPTIONS_VERSION, 8192, 262144, \
        4u << 20, 32u << 20, 256u << 20, 1024, PCH_VXP_ASSETS_REFERENCE, NULL, NULL, NULL, \
        NULL, 0, 0, PCH_VXP_DEDUP_DEFAULT, 64u << 20, 1, 64u << 10, PCH_VXP_ZSTD_DICT_DEFAULT, PCH_VXP_FRAME_ROWS_DEFAULT, \
        PCH_VXP_FRAME_RATIO_DEFAULT }
#define PCH_VXP_FRAME_RATIO_DEFAULT 16
#define PCH_VXP_ZSTD_DICT_DEFAULT 0
#define PCH_VXP_ZSTD_DICT_MAX (1u << 20)

/* Write metrics of a build (§20.1). */
typedef struct pch_vxp_build_stats {
    uint64_t documents, trajectories, steps, tool_calls, results, tokens;
    uint64_t input_bytes;          /* ATIF JSON bytes given to the builder */
    uint64_t logical_bytes;        /* canonical size of all lanes */
    uint64_t data_bytes, blob_bytes, directory_bytes, manifest_bytes;
    uint64_t hot_bytes, cold_bytes, external_bytes, dedup_hits;
    uint64_t data_files, clusters, blob_packs, blobs;
    double seconds;
    char snapshot_id[40];
    /* staging directories of writers that died before they removed them (§11.5), removed
    ** when this build opened: how many, and the bytes of their files */
    uint64_t staging_removed, staging_removed_bytes;
    /* what this commit wrote (data files, blob packs, directories, manifest): an incremental
    ** sync's cost (§11.2); data_bytes etc. are the snapshot's totals */
    uint64_t written_bytes;
    /* seconds spent encoding lanes (compressor sampling, encodings, zstd), summed over the
    ** encoding threads: the build's encode time (RFC-0006 §22.2); the rest of `seconds` is
    ** parsing, building lanes and writing */
    double encode_seconds;
    /* an incremental commit left more L0 directory runs or L0 directory memory than its
    ** limits allow (§12.2): `pchronicle-vortex compact` is due */
    bool maintenance_required;
} pch_vxp_build_stats;

typedef struct pch_vxp_builder pch_vxp_builder;

/* Start a new snapshot of root (created if missing). Reads CURRENT (if any) now: the
** commit fails with PCH_EEXISTS when CURRENT has changed since. */
PCH_API int pch_vxp_builder_open(pch_vxp_builder **out, pch_ctx *ctx, const char *root,
                                 const pch_vxp_build_options *opts, pch_error *err);
/* Add every trajectory of one parsed document (preorder; subagents keep parent links). */
PCH_API int pch_vxp_builder_add_doc(pch_vxp_builder *b, const pch_atif_doc *doc,
                                    size_t input_bytes, pch_error *err);
/* Record an input file the caller's walk found (path relative to the input root, size,
** modification time in ns): the snapshot's document list keeps it, so an incremental sync
** need not read it again while its size and time stay the same. A file noted and never
** added is listed as rejected. Optional (a document added without a note is listed with an
** unknown time). */
PCH_API int pch_vxp_builder_note_file(pch_vxp_builder *b, const char *rel, uint64_t bytes, int64_t mtime_ns,
                                      pch_error *err);
/* Seal files, write directories and the manifest, and publish CURRENT (§11.1 order). */
PCH_API int pch_vxp_builder_commit(pch_vxp_builder *b, pch_vxp_build_stats *stats,
                                   pch_error *err);
/* Abandon (removes this writer's staging directory; publishes nothing). */
PCH_API void pch_vxp_builder_free(pch_vxp_builder *b);

/* ---------------------------------------------------------------- incremental sync (§11.2) */

typedef struct pch_vxp_sync_options {
    unsigned version;              /* PCH_VXP_SYNC_OPTIONS_VERSION */
    const char *source_id;         /* NULL: the snapshot's; another one is refused (keys would move) */
    const char *partition;         /* data/<partition>/ of the new files, default "default" */
    uint32_t threads;              /* parse and encode threads; 0 = the online CPUs */
    uint64_t max_l0_runs;          /* over this many L0 directory runs the snapshot says
                                   ** "maintenance required" (§12.2); 0 = no limit; default 16 */
    uint64_t max_l0_memory;        /* ... or over this estimate of the memory a reader holds to
                                   ** merge them (bytes); 0 = no limit; default 256 MiB */
    int progress;                  /* 1: progress lines on stderr */
} pch_vxp_sync_options;
#define PCH_VXP_SYNC_OPTIONS_VERSION 1
#define PCH_VXP_SYNC_OPTIONS_INIT { PCH_VXP_SYNC_OPTIONS_VERSION, NULL, NULL, 0, 16, 256u << 20, 0 }

typedef struct pch_vxp_sync_stats {
    uint64_t added, changed, removed, unchanged;   /* documents */
    uint64_t read;                 /* files read (new, or size or time changed); the rest were not */
    uint64_t rejected;             /* files read that are not valid ATIF (listed, not projected) */
    uint64_t rejected_changed;     /* rejected files that appeared, changed or went away */
    uint64_t tombstones;           /* keys a changed or removed document no longer has */
    uint64_t input_bytes;          /* bytes read */
    bool published;                /* false: nothing changed, no snapshot (CURRENT stays) */
    char snapshot_id[40];          /* the new snapshot, or CURRENT's when nothing changed */
    double seconds;
    pch_vxp_build_stats build;     /* the commit's (when published): written_bytes is its cost */
} pch_vxp_sync_stats;

/* Bring root's projection up to date with the ATIF documents under input (a directory): a new
** snapshot that re-projects only the documents added or changed since CURRENT's snapshot and
** shadows the changed and removed ones (§10.4, §11.2, §12.2), or none when nothing changed.
** findings (may be NULL) gets the findings of every document read. Fails with PCH_EEXISTS
** ("stale commit") when CURRENT changed meanwhile (§11.4), PCH_EUNSUPPORTED when the snapshot
** has no document list or keys made before stable keys (build again first). */
PCH_API int pch_vxp_sync(pch_ctx *ctx, const char *input, const char *root, const pch_vxp_sync_options *opts,
                         pch_atif_finding_cb findings, void *payload, pch_vxp_sync_stats *st, pch_error *err);

/* ---------------------------------------------------------------- compaction (§12.3) */

typedef struct pch_vxp_compact_options {
    unsigned version;              /* PCH_VXP_COMPACT_OPTIONS_VERSION */
    bool if_needed;                /* only when a trigger below is met (else nothing, ran false) */
    /* the §12.3 triggers (0 = off): L0 directory runs, L0 data files, shadowed rows as a
    ** percentage of all rows, data files below a quarter of the layout's file size; a snapshot
    ** that says "maintenance required" always triggers */
    uint64_t l0_runs, l0_files, max_shadowed_pct, small_files;
    uint32_t threads;              /* encode threads; 0 = the online CPUs */
    const char *partition;         /* data/<partition>/ of the new files, default "default" */
    int progress;
    /* which files are rewritten: every L0 file, every small one, and a level-1 file whose
    ** shadowed rows reach this percentage (default 5); the others are kept with their
    ** deleted rows and their live entries carried. full: rewrite every file */
    uint64_t rewrite_shadowed_pct;
    bool full;
    /* how a rewritten file's live rows reach the new files: copied as they are (decoded and
    ** encoded again, no document rebuilt; the default wherever the file has the layout the
    ** compaction writes) or, with reproject, each document rebuilt from the projection and
    ** projected again (as a build projects its input) */
    bool reproject;
} pch_vxp_compact_options;
#define PCH_VXP_COMPACT_OPTIONS_VERSION 2
#define PCH_VXP_COMPACT_OPTIONS_INIT { PCH_VXP_COMPACT_OPTIONS_VERSION, false, 8, 8, 20, 16, 0, NULL, 0, 5, false, false }

typedef struct pch_vxp_compact_stats {
    bool ran;                      /* false: --if-needed and no trigger met */
    char why[256];                 /* the first trigger met ("" when none) */
    char snapshot_id[40];          /* the new snapshot, or CURRENT's when it did not run */
    uint64_t documents;            /* live documents rewritten */
    uint64_t files_rewritten, files_kept;
    uint64_t files_copied;         /* rewritten files whose rows were copied (the others re-projected) */
    uint64_t input_bytes;          /* their documents' ATIF bytes (as the document list records
                                   ** them; a re-projected one: its JSON as rebuilt) */
    double seconds;
    pch_vxp_build_stats build;
} pch_vxp_compact_stats;

/* Rewrite root's CURRENT snapshot as level-1 files (the L0 files, small files and files with
** many shadowed rows rewritten, the others kept) and one base directory, as a new snapshot
** that answers every read as before (§12.3). PCH_EEXISTS "stale commit" when
** CURRENT changed meanwhile; PCH_EUNSUPPORTED for a root built with --assets embed. */
PCH_API int pch_vxp_compact(pch_ctx *ctx, const char *root, const pch_vxp_compact_options *opts,
                            pch_vxp_compact_stats *st, pch_error *err);
/* Is a trigger of opts (NULL: the defaults) met by root's CURRENT snapshot? why: the first. */
PCH_API int pch_vxp_compact_due(pch_ctx *ctx, const char *root, const pch_vxp_compact_options *opts, bool *due,
                                char *why, size_t cap, pch_error *err);

/* ---------------------------------------------------------------- reading (§13.4, §13.6) */

typedef struct pch_vxp_snapshot pch_vxp_snapshot;

typedef struct pch_vxp_io_part { uint64_t reads, bytes; } pch_vxp_io_part;

typedef struct pch_vxp_query_stats {  /* §20.2 */
    uint64_t files_opened, clusters_read, segments_read, read_requests;
    uint64_t bytes_read, bytes_decoded, cache_hits;   /* read_requests, bytes_read: lane segments
                                                      ** and data-file footers */
    uint64_t blobs_hydrated, blob_bytes;
    uint64_t footer_cache_hits;
    uint64_t bytes_checked;            /* bytes hashed against their manifest digests */
    uint64_t segments_partial;         /* lane segments read in part (a point read's frames) */
    /* where the bytes went, reads and bytes each (RFC-0006 §13.4 cold-open costs): CURRENT,
    ** the manifest, directory shards and content directories (their digest check and their
    ** decode; a content directory only when a value is hydrated), data-file
    ** footers (the Vortex tail and postscript, and the manifest-digest check of the tail),
    ** segment digest tables (head and the pages used), lane segments */
    pch_vxp_io_part current, manifest, directory, footer, segment_tables, lanes;
    uint64_t rows_checked;             /* rows a point read checked against their row digests */
    pch_vxp_io_part content;           /* content directory shards read to hydrate external
                                       ** values (counted in `directory` too, as before) */
} pch_vxp_query_stats;

/* Pin CURRENT → manifest (digest checked) → directory shards (digests checked). Later reads
** reuse them and the data-file footers they open. */
PCH_API int pch_vxp_snapshot_open(pch_vxp_snapshot **out, pch_ctx *ctx, const char *root,
                                  pch_error *err);
/* The same for snapshot_id instead of CURRENT's (NULL: CURRENT's), as every reading verb's
** --snapshot ID: its manifest is checked by what it lists (every file's digest), since only
** CURRENT pins a manifest's own digest. PCH_ENOTFOUND when the root has no such snapshot. */
PCH_API int pch_vxp_snapshot_open_at(pch_vxp_snapshot **out, pch_ctx *ctx, const char *root,
                                     const char *snapshot_id, pch_error *err);
PCH_API void pch_vxp_snapshot_free(pch_vxp_snapshot *s);
PCH_API const char *pch_vxp_snapshot_id(const pch_vxp_snapshot *s);
PCH_API uint64_t pch_vxp_snapshot_trajectories(const pch_vxp_snapshot *s);
PCH_API void pch_vxp_snapshot_stats(const pch_vxp_snapshot *s, pch_vxp_query_stats *out);

typedef enum pch_vxp_hydration {
    PCH_VXP_FULL = 0,              /* every content value complete (external ones checked) */
    PCH_VXP_PREVIEW = 1,           /* cold/external values replaced by an explicit preview
                                   ** object {"pchronicle_preview":true,...} (§13.6) */
    PCH_VXP_METADATA = 2           /* late hydration (§13.6) for readers that use no content
                                   ** value: as FULL, but an external text value is never read
                                   ** and comes back as "" (still valid ATIF); external JSON
                                   ** values are read (a placeholder would change their type) */
} pch_vxp_hydration;

/* Find trajectories by key: every trajectory whose trajectory key is KEY and every document
** root whose run key or producer session id is KEY (a shared session id gives every
** candidate, never an arbitrary one). Fills idx (directory rows, at most cap), *n_out = the
** number of candidates (may exceed cap). PCH_ENOTFOUND if none. */
PCH_API int pch_vxp_lookup(pch_vxp_snapshot *s, const char *key, uint64_t *idx, size_t cap,
                           size_t *n_out, pch_error *err);
/* Which identity a key names (get --trajectory-key / --run-id / --session-id): ANY is
** pch_vxp_lookup's rule (a trajectory key; a producer id: the trajectories whose key is
** "KEY@<document path>", docs/atif.md "Stable keys"; or a document root's run key or session id); TRAJECTORY = trajectories whose trajectory key is KEY; RUN = document
** roots whose run key is KEY; SESSION = document roots whose producer session_id is KEY. So a
** document whose trajectory key is another document's run key can still be read alone. */
typedef enum pch_vxp_key_kind {
    PCH_VXP_KEY_ANY = 0, PCH_VXP_KEY_TRAJECTORY, PCH_VXP_KEY_RUN, PCH_VXP_KEY_SESSION
} pch_vxp_key_kind;
PCH_API int pch_vxp_lookup_as(pch_vxp_snapshot *s, pch_vxp_key_kind as, const char *key, uint64_t *idx,
                              size_t cap, size_t *n_out, pch_error *err);
/* The trajectories of run `run` whose trajectory key is `traj` (get --run-id R
** --trajectory-key K): only the directory shards whose fence keys can hold run R are read
** (the directory is sorted by source, run, trajectory; §10.3). Fills idx as pch_vxp_lookup
** does; PCH_ENOTFOUND if none. */
PCH_API int pch_vxp_lookup_in_run(pch_vxp_snapshot *s, const char *run, const char *traj, uint64_t *idx,
                                  size_t cap, size_t *n_out, pch_error *err);
/* The ATIF document of directory row idx, subagents re-nested (§5.3). *out allocated with
** the ctx allocator (pch_free), NUL-terminated; pretty = 2-space indentation. */
PCH_API int pch_vxp_get(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_hydration mode,
                        bool pretty, char **out, size_t *len_out, pch_error *err);
/* Directory row (0 .. pch_vxp_snapshot_trajectories - 1, in key order) → key parts and
** document path (borrowed until the snapshot is freed; reads the row's shard if needed). */
PCH_API int pch_vxp_entry(pch_vxp_snapshot *s, uint64_t idx, const char **source_id,
                          const char **run_key, const char **trajectory_key,
                          const char **doc_path, bool *is_root, pch_error *err);

/* A document as the relations of §13.1 need it: the document root's ATIF JSON (compact,
** every value hydrated) and the directory rows of its trajectories in the preorder of the
** document (rows[0] = the root). Free with pch_vxp_doc_dispose. */
typedef struct pch_vxp_doc {
    char *json;
    size_t len;
    uint64_t *rows;
    size_t n_rows;
} pch_vxp_doc;
PCH_API int pch_vxp_get_doc(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_doc *out, pch_error *err);
PCH_API void pch_vxp_doc_dispose(pch_vxp_snapshot *s, pch_vxp_doc *d);
/* The same document parsed as the importers parse it (pch_atif_doc_parse with its source id
** and path), every trajectory carrying the key the projection stored for it (a key made
** unique across documents at build time cannot be derived from the document alone). raw
** receives the text *out points into: dispose of both, *out first. */
PCH_API int pch_vxp_get_atif(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_doc *raw, pch_atif_doc **out,
                             pch_error *err);
/* The same with a hydration mode: PCH_VXP_FULL or PCH_VXP_METADATA. */
PCH_API int pch_vxp_get_atif_as(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_hydration mode, pch_vxp_doc *raw,
                                pch_atif_doc **out, pch_error *err);

/* Directory rows of every document root in storage order (data file, row): reading the
** documents in this order decodes each cluster once. *idx: ctx allocator (pch_free). */
PCH_API int pch_vxp_documents(pch_vxp_snapshot *s, uint64_t **idx, uint64_t *n, pch_error *err);
/* How the snapshot was built with respect to assets (its manifest's layout.assets). */
PCH_API pch_vxp_assets pch_vxp_snapshot_assets(const pch_vxp_snapshot *s);

/* The assets embedded from the steps of trajectory idx (§9.6): cb(content id, relative path)
** once per reference; a non-zero return stops the walk with that code. */
typedef int (*pch_vxp_asset_cb)(const uint8_t id[32], const char *path, size_t path_len, void *payload);
PCH_API int pch_vxp_each_asset(pch_vxp_snapshot *s, uint64_t idx, pch_vxp_asset_cb cb, void *payload,
                           pch_error *err);

/* Write every document root as DIR/<document path> (ATIF, pretty), atomically: into a
** staging directory beside dir, renamed to dir when complete (dir must not exist). */
PCH_API int pch_vxp_export(pch_vxp_snapshot *s, const char *dir, uint64_t *n_docs,
                           pch_error *err);

/* Lane scans (§13.2, §13.3): every cluster of the snapshot in storage order with only the
** lanes named (e.g. "id.trajectory_key", "steps.source"; docs/vortex-projection.md §2). Each
** cluster's bytes are checked against its digest; only the named lanes are decoded. One row
** per trajectory page (id.page_index, id.page_count say which). */
typedef struct pch_vxp_lanes pch_vxp_lanes;
PCH_API int pch_vxp_lanes_open(pch_vxp_lanes **out, pch_vxp_snapshot *s, const char *const *lanes,
                               size_t n, pch_error *err);
/* Next cluster: lanes[i] is lane i (a decoded Vortex array; borrowed until the next call),
** *rows its row count; *eof past the last cluster. */
PCH_API int pch_vxp_lanes_next(pch_vxp_lanes *it, const pch_vx_array *const **lanes, uint64_t *rows,
                               bool *eof, pch_error *err);
PCH_API void pch_vxp_lanes_free(pch_vxp_lanes *it);
/* Lane i's text that is dictionary- or constant-encoded (at the lane's top level or as list
** elements) comes back as codes only: pch_vx_array.dict_codes over dict_values, offsets and
** data NULL (RFC-0006 §13.3: a scan that groups or filters on the codes builds no strings).
** Call before the first pch_vxp_lanes_next; PCH_EINVAL past the last lane. */
PCH_API int pch_vxp_lanes_text_codes(pch_vxp_lanes *it, size_t i, pch_error *err);

/* Pruning a lane scan (§13.3, §14): what a matching row must hold, tested on each trajectory
** page's summary (§14.2) before its step lanes are decoded. Set before the first
** pch_vxp_lanes_next. A cluster is skipped whole when the zone maps of the summary timestamp
** lanes rule it out (no byte of it read), or when its summary lanes rule out every row (read
** and checked, nothing else decoded); a cluster is never skipped when a trajectory continues
** from it into the next one. In a cluster that is read, pch_vxp_lanes_keep flags the rows the
** summaries rule out. Pruning never decides a match: a kept row may still fail. */
typedef struct pch_vxp_prune {
    bool has_ts_lo, has_ts_hi;          /* a matching step has ts_lo <= timestamp_ms <= ts_hi */
    int64_t ts_lo, ts_hi;
    uint8_t source_bits;                /* summary.source_mask bits a matching step's source has
                                        ** (system 2, user 4, agent 8); 0 = any */
    const char *model;                  /* a matching step's model_name (model bloom); NULL = any */
    const char *function;               /* a matching call's function_name (tool bloom); NULL = any */
    int copied;                         /* 1: a matching step is copied context, 0: is not; -1 any */
} pch_vxp_prune;
#define PCH_VXP_PRUNE_INIT { false, false, 0, 0, 0, NULL, NULL, -1 }
PCH_API int pch_vxp_lanes_prune(pch_vxp_lanes *it, const pch_vxp_prune *p, pch_error *err);
/* Per row of the cluster the last pch_vxp_lanes_next returned: 0 = the summaries rule it out.
** NULL when the scan is not pruned and the cluster has no deleted row (every row kept): a row
** that a newer revision shadows or a tombstone deleted (§12.2, after an incremental sync) is
** never kept. Borrowed until the next call. */
PCH_API const uint8_t *pch_vxp_lanes_keep(const pch_vxp_lanes *it);
/* Per row of the same cluster: 1 = live, 0 = deleted (§12.2); NULL when no row of it is
** deleted. A reader that also reads rows the summaries rule out (a paged trajectory's
** context, a relation that filters itself) must still skip the deleted ones. */
PCH_API const uint8_t *pch_vxp_lanes_live(const pch_vxp_lanes *it);
typedef struct pch_vxp_lanes_stats {
    uint64_t clusters;                  /* clusters considered */
    uint64_t clusters_zone_pruned;      /* skipped by zone maps, not read */
    uint64_t clusters_summary_pruned;   /* read and checked, skipped by their summary lanes */
    uint64_t clusters_read;             /* whose lanes were decoded */
    uint64_t rows, rows_pruned;         /* trajectory pages of summary-tested clusters; ruled out */
    uint64_t clusters_summary_warm;     /* of the summary-tested clusters, those whose summaries the
                                        ** snapshot held decoded from an earlier scan */
    uint64_t clusters_deleted;          /* every row deleted (§12.2): skipped, not read */
    uint64_t rows_deleted;              /* deleted rows of the clusters read (not kept) */
    uint64_t clusters_fetched_ahead;    /* on object storage: clusters whose reads were fetched
                                        ** several at once, concurrently, before they were read */
} pch_vxp_lanes_stats;
PCH_API void pch_vxp_lanes_stats_get(const pch_vxp_lanes *it, pch_vxp_lanes_stats *out);

/* Content columns of a lane scan (§13.2, §13.6): the steps relation's `message` read from the
** message lanes alone, no document rebuilt. A scan that also names the lane paths
** pch_vxp_message_lanes returns (n of them, in that order) hands those arrays of a cluster, as
** pch_vxp_lanes_next returned them, to pch_vxp_message_text with a step item (the index into
** the lanes' step items) and gets the step's message as the relation renders the Storyline
** column: canonical JSON text (keys sorted, compact; a text message is its JSON string),
** external values hydrated from the blob packs and checked; *text NULL when the step has no
** message. *text is borrowed until the next call. */
typedef struct pch_vxp_content pch_vxp_content;
PCH_API size_t pch_vxp_message_lanes(const char *const **paths);
PCH_API int pch_vxp_content_open(pch_vxp_content **out, pch_vxp_snapshot *s, pch_error *err);
PCH_API int pch_vxp_message_text(pch_vxp_content *c, const pch_vx_array *const *lanes, uint64_t step,
                                 const char **text, size_t *len, pch_error *err);
/* Blob values read (hydrated) and content bytes decoded so far. */
PCH_API void pch_vxp_content_stats(const pch_vxp_content *c, uint64_t *blobs_hydrated, uint64_t *bytes_decoded);
PCH_API void pch_vxp_content_free(pch_vxp_content *c);

/* ---------------------------------------------------------------- training reads (§13.5) */

/* Which steps a training reader considers (docs/training.md). */
typedef struct pch_vxp_train_filter {
    const char *source_id;              /* NULL = every source */
    const char *const *run_keys;        /* n_run_keys == 0: every run */
    size_t n_run_keys;
    const char *model;                  /* the step's model_name; NULL = any */
    bool has_time;                      /* step timestamp in [from_ms, to_ms) (UTC ms) */
    int64_t from_ms, to_ms;
    bool skip_prompt_ids;               /* RL: do not read prompt_token_ids (has_prompt false) */
    unsigned threads;                   /* clusters decoded at once, each on a thread of its own
                                        ** (0 = one per online CPU, at most 4); the examples and
                                        ** their order are the same for any value */
} pch_vxp_train_filter;

/* One RL step: a step with completion_token_ids that is not copied context. Pointers are
** borrowed from the reader until its next call. Token ids are u32 little-endian, logprobs
** f32 or f64 little-endian (logprob_bits; 0 = the step has none); reward_json is the JSON
** text of metrics.extra.reward (NULL = none). */
typedef struct pch_vxp_rl_step {
    const char *source_id, *run_key, *trajectory_key;
    size_t source_id_len, run_key_len, trajectory_key_len;
    uint64_t step_ordinal;              /* position in the trajectory's steps */
    bool has_step_id;
    int64_t step_id;
    const char *model_name;             /* NULL = none */
    size_t model_name_len;
    const uint8_t *completion_ids;
    size_t n_completion;
    bool has_prompt;
    const uint8_t *prompt_ids;
    size_t n_prompt;
    unsigned logprob_bits;
    const uint8_t *logprobs;
    size_t n_logprobs;
    const char *reward_json;
    size_t reward_len;
    size_t reward_off, prompt_off;      /* private */
} pch_vxp_rl_step;

typedef struct pch_vxp_rl_reader pch_vxp_rl_reader;
/* The RL reader over a snapshot (the snapshot must outlive it). f may be NULL. */
PCH_API int pch_vxp_rl_open(pch_vxp_rl_reader **out, pch_vxp_snapshot *s, const pch_vxp_train_filter *f,
                            pch_error *err);
/* The next batch: the emitted steps of the next cluster holding any (storage order, steps
** in trajectory order). Pulling is the backpressure: at most one cluster is held. */
PCH_API int pch_vxp_rl_next(pch_vxp_rl_reader *r, const pch_vxp_rl_step **steps, size_t *n, bool *eof,
                            pch_error *err);
PCH_API void pch_vxp_rl_free(pch_vxp_rl_reader *r);

/* The SFT reader (docs/training.md "SFT"): one example per agent step that is not copied
** context and not a deterministic dispatch (llm_call_count 0), read from the step, message,
** reasoning and tool lanes (no document is rebuilt). Each trajectory (subagents included) is
** its own conversation: every step's message, then one "tool" message per observation
** result. An example is the conversation before its step plus the step's own message. f may
** be NULL (skip_prompt_ids unused). */
typedef struct pch_vxp_sft_reader pch_vxp_sft_reader;
typedef enum pch_vxp_sft_format {
    /* JSON lines {source_id, run_id, trajectory_key, step_ordinal, step_id, model_name,
    ** messages, completion}; tool calls as {id, function_name, arguments} */
    PCH_VXP_SFT_ATIF = 0,
    /* JSON lines {messages, tools} as chat trainers take them (OpenAI style): role system /
    ** user / assistant / tool, content, reasoning_content, tool_calls {id, type: "function",
    ** function: {name, arguments: a JSON string}}, tool_call_id; the step itself is the last
    ** assistant message; tools = the agent's tool_definitions */
    PCH_VXP_SFT_MESSAGES = 1
} pch_vxp_sft_format;
PCH_API int pch_vxp_sft_open(pch_vxp_sft_reader **out, pch_vxp_snapshot *s, const pch_vxp_train_filter *f,
                             pch_error *err);
PCH_API int pch_vxp_sft_open_as(pch_vxp_sft_reader **out, pch_vxp_snapshot *s, const pch_vxp_train_filter *f,
                                pch_vxp_sft_format format, pch_error *err);

/* Examples without their shared prefix: a batch is one trajectory page holding examples.
** messages is the JSON array body "m0,m1,...": message i spans [i ? message_end[i-1] + 1 : 0,
** message_end[i]); the conversation before an example is the array body up to its message's
** start, less the comma. A paged trajectory comes as one batch per page with examples, all
** with the same identity, each holding the whole conversation so far (first_new = the first
** message this batch adds). Everything is borrowed until the next call. */
typedef struct pch_vxp_sft_example {
    uint64_t step_ordinal;              /* position in the trajectory's steps */
    bool has_step_id;
    int64_t step_id;
    const char *model_name;             /* NULL = none */
    size_t model_name_len;
    size_t message;                     /* the step's own message */
} pch_vxp_sft_example;
typedef struct pch_vxp_sft_batch {
    const char *source_id, *run_key, *trajectory_key;
    size_t source_id_len, run_key_len, trajectory_key_len;
    const char *tools;                  /* JSON array text of agent.tool_definitions ("[]") */
    size_t tools_len;
    const char *messages;
    const size_t *message_end;
    size_t n_messages, first_new;
    const pch_vxp_sft_example *examples;
    size_t n_examples;
} pch_vxp_sft_batch;
PCH_API int pch_vxp_sft_next_batch(pch_vxp_sft_reader *r, const pch_vxp_sft_batch **batch, bool *eof,
                                   pch_error *err);
/* The next JSON lines in the reader's format (*text, *len bytes, *n >= 1 examples; borrowed
** until the next call): a batch's lines, in pieces of about 1 MiB (one line when a line is
** longer), so memory stays bounded when a long conversation's lines grow with the square of its
** steps. Use either this or pch_vxp_sft_next_batch on a reader, not both. */
PCH_API int pch_vxp_sft_next(pch_vxp_sft_reader *r, const char **text, size_t *len, size_t *n, bool *eof,
                             pch_error *err);
/* JSON text of the step messages and reasoning read so far, and of every content value
** (messages, reasoning, tool-call arguments, results), each counted once (not once per
** example that repeats it). */
PCH_API uint64_t pch_vxp_sft_message_bytes(const pch_vxp_sft_reader *r);
PCH_API uint64_t pch_vxp_sft_content_bytes(const pch_vxp_sft_reader *r);
/* The reader's lane scan so far: clusters considered, skipped by zone maps or summaries, read. */
PCH_API void pch_vxp_sft_scan_stats(const pch_vxp_sft_reader *r, pch_vxp_lanes_stats *out);
PCH_API void pch_vxp_sft_free(pch_vxp_sft_reader *r);

/* ---------------------------------------------------------------- SQL relations (§13.1) */

/* Register the "storyline" and "lance" modules (pch_sql_register) and "vortex": the
** relations runs, steps, tool_calls and observation_results of docs/storyline.md §2 over a
** projection root, answered exactly as a Storyline root built from the same documents:
**     CREATE VIRTUAL TABLE temp.steps USING vortex('ROOT', 'steps');
** (pch_sql_attach_module(db, "vortex", root, ...) creates all four). Also the loadable
** extension build/pchronicle_vortex_sqlite.so. SQLite result code. */
PCH_API int pch_vxp_sql_register(struct sqlite3 *db);
/* Run statements over the four relations of root and print the rows (pch_sql_exec), each
** on the fastest exact path (pch_vxp_sql_exec with PCH_VXP_SQL_AUTO).
** Errors: PCH_EINVAL (SQL error or not a projection root: the message says which). */
PCH_API int pch_vxp_sql_run(const char *root, const char *sql, pch_sql_format fmt, FILE *out,
                            pch_error *err);

/* A SQL session over one snapshot of root (docs/sql.md "Execution paths"): the relations of
** pch_vxp_sql_run attached once, statements run many times. With PCH_VXP_SQL_AUTO a SELECT
** the vectorised engine answers exactly (narrow steps/tool_calls columns: filters, group-by,
** count/sum/min/max/avg, order-by, limit) runs over the lanes' column vectors; everything
** else, and everything with PCH_VXP_SQL_SQLITE, runs row at a time through SQLite. Both paths
** print the same bytes (the differential tests). One thread at a time. */
typedef enum pch_vxp_sql_engine { PCH_VXP_SQL_AUTO = 0, PCH_VXP_SQL_SQLITE = 1 } pch_vxp_sql_engine;
typedef struct pch_vxp_sql pch_vxp_sql;
PCH_API int pch_vxp_sql_open(pch_vxp_sql **out, const char *root, pch_vxp_sql_engine engine,
                             pch_error *err);
/* The same for snapshot_id (NULL: CURRENT's): every relation of the session reads it. */
PCH_API int pch_vxp_sql_open_at(pch_vxp_sql **out, const char *root, const char *snapshot_id,
                                pch_vxp_sql_engine engine, pch_error *err);
PCH_API int pch_vxp_sql_exec(pch_vxp_sql *q, const char *sql, pch_sql_format fmt, FILE *out,
                             pch_error *err);
/* Of the last pch_vxp_sql_exec: one line per statement naming the path it took ("statement
** N: vectorised: ..." or "statement N: SQLite, row at a time (why)"); the rows printed. */
PCH_API const char *pch_vxp_sql_path(const pch_vxp_sql *q);
PCH_API uint64_t pch_vxp_sql_rows(const pch_vxp_sql *q);
PCH_API void pch_vxp_sql_close(pch_vxp_sql *q);
/* Since the process started: documents the relations rebuilt from their lanes, and clusters
** the narrow scans read lane by lane (docs/sql.md "The Vortex projection"). */
PCH_API void pch_vxp_sql_counters(uint64_t *docs_rebuilt, uint64_t *lane_clusters);
/* Since the process started, over the snapshots the relations closed: bytes read from data
** files (segments fetched for decoding), bytes hashed against their manifest digests, and
** external values read from blob packs. */
PCH_API void pch_vxp_sql_bytes(uint64_t *bytes_read, uint64_t *bytes_checked, uint64_t *blobs_hydrated);
/* --explain: between begin and end, every scan of the relations is noted (relation, read
** path, lanes, where each pushed predicate went, clusters considered / pruned by zone maps /
** pruned by summaries / decoded); end prints the notes and the totals to out and stops
** noting. Process-wide, for one SQL thread (the CLI). */
PCH_API void pch_vxp_sql_explain_begin(void);
PCH_API void pch_vxp_sql_explain_end(FILE *out);

/* A relation of root (runs, steps, tool_calls, trajectories, observation_results) as an Arrow
** C stream (pchronicle/arrow.h):
** the columns named (NULL = every column of docs/storyline.md §2), one struct batch per
** cluster for a narrow scan or per document otherwise, with the values pchronicle-vortex
** sql returns (JSON columns as JSON text). The stream owns its snapshot; release it when
** done. Errors: PCH_EINVAL (no such relation or column), snapshot errors. */
struct ArrowArrayStream;
PCH_API int pch_vxp_arrow_relation(const char *root, const char *relation, const char *const *columns,
                                   size_t n_columns, struct ArrowArrayStream *out, pch_error *err);
/* The training readers as Arrow C streams, one struct batch per reader batch (docs/training.md
** "Arrow streams"). RL: source_id, run_id, trajectory_key (large utf8), step_ordinal, step_id
** (int64), model_name (large utf8), prompt_token_ids, completion_token_ids (large list of
** uint32), logprobs (large list of float64, exact from f32), reward (large utf8, JSON text).
** SFT: source_id, run_id, trajectory_key, step_ordinal, step_id, model_name, messages and
** completion (JSON text, as the JSON lines hold them). f may be NULL; it is copied. */
PCH_API int pch_vxp_arrow_rl(const char *root, const pch_vxp_train_filter *f, struct ArrowArrayStream *out,
                             pch_error *err);
PCH_API int pch_vxp_arrow_sft(const char *root, const pch_vxp_train_filter *f, struct ArrowArrayStream *out,
                              pch_error *err);

/* ---------------------------------------------------------------- verify, inspect (§15, §20) */

/* Receives one finding per problem: file (relative to root, "" for the root) and message. */
typedef void (*pch_vxp_finding_cb)(const char *file, const char *message, void *payload);

/* Check everything §15 lists. Returns PCH_OK and *n_findings = 0 when healthy; findings
** go to cb. Fails (< 0) only for usage, allocation or when the root has no CURRENT at all
** (that is also reported as a finding). */
PCH_API int pch_vxp_verify(pch_ctx *ctx, const char *root, pch_vxp_finding_cb cb, void *payload,
                           size_t *n_findings, pch_error *err);

/* The same for snapshot_id (NULL: CURRENT's). */
PCH_API int pch_vxp_verify_at(pch_ctx *ctx, const char *root, const char *snapshot_id, pch_vxp_finding_cb cb,
                              void *payload, size_t *n_findings, pch_error *err);

/* ---------------------------------------------------------------- snapshots (§10.2, §12.4, §15) */

typedef struct pch_vxp_snapshot_info {
    char snapshot_id[64];
    char parent_id[64];          /* "" for a first build */
    char created_at[40];
    uint64_t documents, trajectories, data_bytes;
    bool current;                /* the one CURRENT names */
    bool readable;               /* its manifest loads; else problem says why */
    char problem[256];
    char pins[256];              /* names of the pins that hold it, comma-separated */
} pch_vxp_snapshot_info;
/* Every snapshot of root (each manifest under manifests/), oldest first. */
PCH_API int pch_vxp_snapshots(pch_ctx *ctx, const char *root, pch_vxp_snapshot_info **out, size_t *n_out,
                              pch_error *err);
PCH_API void pch_vxp_snapshots_free(pch_ctx *ctx, pch_vxp_snapshot_info *v);
/* Bind CURRENT to snapshot_id when CURRENT is missing or damaged (§15): the snapshot is
** verified whole first (findings to cb; any finding refuses with PCH_ECORRUPT), and CURRENT
** is published only over the bytes it held when repair began (else "stale commit"). A
** readable CURRENT is left alone (PCH_EEXISTS). Never chooses a snapshot itself. */
PCH_API int pch_vxp_repair(pch_ctx *ctx, const char *root, const char *snapshot_id, pch_vxp_finding_cb cb,
                           void *payload, size_t *n_findings, pch_error *err);

/* Pin snapshot_id under name (1-64 of [A-Za-z0-9._-]): vacuum keeps it while the pin exists
** (ROOT/pins/<name>.json, replaced if the name exists). snapshot_id NULL removes the pin
** (PCH_ENOTFOUND when there is none). */
PCH_API int pch_vxp_pin(pch_ctx *ctx, const char *root, const char *name, const char *snapshot_id,
                        pch_error *err);

/* Retention and vacuum (§12.4). A snapshot stays while CURRENT names it, it is one of the
** newest keep_last, its manifest is younger than min_age_ms, a pin names it, or an open
** reader holds it (every open pch_vxp_snapshot holds a shared lock on its manifest).
** Everything under manifests/, data/, blobs/, directories/ that no retained manifest lists is
** removed once older than grace_ms (a writer links files before its manifest names them),
** then the staging directories no live writer holds. dry_run: report only. cb gets each
** decision ("keep" / "remove" / "would remove", a snapshot id or a path, why, bytes). Refuses
** (nothing removed) when CURRENT, a manifest or a pin does not load. */
typedef struct pch_vxp_vacuum_options {
    unsigned version;             /* PCH_VXP_VACUUM_OPTIONS_VERSION */
    uint32_t keep_last;
    uint64_t min_age_ms, grace_ms;
    bool dry_run;
} pch_vxp_vacuum_options;
#define PCH_VXP_VACUUM_OPTIONS_VERSION 1
#define PCH_VXP_VACUUM_OPTIONS_INIT { PCH_VXP_VACUUM_OPTIONS_VERSION, 2, 3600000, 3600000, false }
typedef struct pch_vxp_vacuum_stats {
    uint64_t snapshots_kept, snapshots_removed, files_removed, bytes_removed, files_young;
    uint64_t staging_removed, staging_removed_bytes;
} pch_vxp_vacuum_stats;
typedef void (*pch_vxp_vacuum_cb)(const char *action, const char *what, const char *why, uint64_t bytes,
                                  void *payload);
PCH_API int pch_vxp_vacuum(pch_ctx *ctx, const char *root, const pch_vxp_vacuum_options *opts,
                           pch_vxp_vacuum_cb cb, void *payload, pch_vxp_vacuum_stats *stats,
                           pch_error *err);

/* What a root holds on disk (§12.4, §20.3, §22.2's operational footprint), read-only:
** snapshots (and unreadable manifests), pins, the bytes CURRENT's snapshot reaches, the bytes
** only older snapshots reach, the files no snapshot reaches (orphans of failed or killed
** writers, removed by vacuum after its grace period), and staging directories no live writer
** holds. inspect ROOT prints it. */
typedef struct pch_vxp_footprint {
    uint64_t snapshots, unreadable, pins;
    uint64_t current_bytes, history_bytes, unreferenced_files, unreferenced_bytes;
    uint64_t staging_abandoned, staging_abandoned_bytes;
} pch_vxp_footprint_stats;
PCH_API int pch_vxp_footprint(pch_ctx *ctx, const char *root, pch_vxp_footprint_stats *fp, pch_error *err);

/* Print the snapshot, files, clusters, per-lane encodings and bytes, write metrics. */
PCH_API int pch_vxp_inspect(pch_ctx *ctx, const char *root, FILE *out, pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
