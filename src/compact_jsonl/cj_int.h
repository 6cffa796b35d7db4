/* Private interface of src/compact_jsonl (RFC-0014). The pure parts (JSON-path subset,
** line splitting, file walking, staging/publish) live in files that depend on src/core
** only, so that unit tests and fuzz targets can use them without the Lance layer. */
#ifndef PCH_CJ_INT_H
#define PCH_CJ_INT_H

#include <sys/types.h>
#include "core/core.h"
#include "pchronicle/json.h"
#include "pchronicle/compact_jsonl.h"

/* Schema metadata keys and fixed names (docs/compact-jsonl.md). */
#define PCH_CJ_KEY_FORMAT "pchronicle.format"
#define PCH_CJ_KEY_PRODUCER "pchronicle.producer"
#define PCH_CJ_KEY_ID_PATH "pchronicle.compact_jsonl.id_path"
#define PCH_CJ_KEY_TS_PATH "pchronicle.compact_jsonl.timestamp_path"
#define PCH_CJ_KEY_COLUMNS "pchronicle.compact_jsonl.columns"
#define PCH_CJ_KEY_THRESHOLD "pchronicle.compact_jsonl.offload_threshold"
#define PCH_CJ_KEY_OFFLOAD_PATH "pchronicle.compact_jsonl.offload_path"
#define PCH_CJ_KEY_EMPTY_FILES "pchronicle.compact_jsonl.empty_files"
#define PCH_CJ_KEY_SOURCE_FILES "pchronicle.compact_jsonl.source_files"
#define PCH_CJ_FIELD_PATH_KEY "pchronicle.json_path"
#define PCH_CJ_OFFLOAD_DIR "objects"

/* ---- JSON-path subset (RFC-0014 "JSON path 子集"), cj_path.c ---- */
typedef struct pch_cj_path_step {
    const char *name;      /* member name (points into pch_cj_path.text) */
    size_t name_len;
    bool has_index;
    uint32_t index;
} pch_cj_path_step;

typedef struct pch_cj_path {
    char *text;            /* copy of the path text, NUL-terminated */
    pch_cj_path_step *steps;
    size_t n_steps;        /* 0 = "$" */
    pch_ctx *ctx;
} pch_cj_path;

/* Parse path[0..len). On error *out is zeroed; message: "json path '...': byte N: what". */
int pch_cj__path_parse(pch_cj_path *out, pch_ctx *ctx, const char *path, size_t len,
                       pch_error *err);
void pch_cj__path_dispose(pch_cj_path *p);
/* The value the path selects in root, or NULL if it is missing (a member absent, a type
** mismatch or an index past the end). The first member with a matching key wins. */
const pch_json_value *pch_cj__path_eval(const pch_cj_path *p, const pch_json_value *root);
/* identifier = (ALPHA / "_") *(ALPHA / DIGIT / "_") */
bool pch_cj__is_identifier(const char *s, size_t len);
/* Reserved names that a user mapping may not use. */
bool pch_cj__is_reserved(const char *name);

/* ---- lines, cj_lines.c ---- */
/* Find the end of the next physical line in p[0..len). Returns true and sets *line_len
** (bytes up to and including the LF) when an LF is present; false otherwise (at EOF the
** remaining bytes, if any, are the last line without a terminator). */
bool pch_cj__next_line(const uint8_t *p, size_t len, size_t *line_len);
/* Length of a line's content: line_len minus a trailing LF or CRLF. */
size_t pch_cj__content_len(const uint8_t *line, size_t line_len);
/* Pre-checks on a line's content before JSON parsing: rejects a blank or
** whitespace-only line, a UTF-8 byte order mark (first line of a file) and NUL bytes.
** *col_out receives the 1-based byte column of the problem. */
int pch_cj__check_line(const uint8_t *content, size_t len, bool first_line, size_t *col_out,
                       pch_error *err);

/* File name rules (RFC-0014 "文件集合", "错误与安全边界"). */
bool pch_cj__has_input_ext(const char *name);   /* .json .jsonl .ndjson, any case */
bool pch_cj__is_json_doc(const char *name);     /* .json: one record per file */
/* A stored relative name: non-empty, valid UTF-8, no NUL, not absolute, no empty, "." or
** ".." component. */
bool pch_cj__safe_relpath(const char *s, size_t len);
bool pch_cj__valid_utf8(const uint8_t *s, size_t len);

/* ---- file walk, cj_walk.c ---- */
typedef struct pch_cj_file {
    char *rel;             /* normalised relative name ("a/b.jsonl"), UTF-8 */
    char *abs;             /* path to open */
    uint64_t size;         /* size seen by the walk */
} pch_cj_file;

typedef struct pch_cj_filelist {
    pch_cj_file *v;
    size_t n, cap;
    pch_ctx *ctx;
} pch_cj_filelist;

/* Collect the input files under root (a directory, walked recursively without following
** symlinks, or one regular file) in byte order of their relative names. Directories with
** the device/inode of skip_dev/skip_ino (the target itself) and hidden staging names
** ".<x>.staging-*" are not entered. Errors: PCH_ENOTFOUND, PCH_EINVAL (an explicit file
** with another extension, a non-UTF-8 name), PCH_EIO. */
int pch_cj__walk(pch_cj_filelist *out, pch_ctx *ctx, const char *root, dev_t skip_dev,
                 ino_t skip_ino, pch_error *err);
void pch_cj__filelist_dispose(pch_cj_filelist *l);

/* ---- id uniqueness index, cj_ids.c ---- */
/* A duplicate id: where it repeats (file index, 1-based line) and where it first was. */
typedef struct pch_cj_dup {
    uint32_t file, first_file;
    uint64_t line, first_line;
    char shown[64];        /* the id, printable ASCII ('?' for other bytes), cut to 59 */
} pch_cj_dup;
typedef struct pch_cj_ids pch_cj_ids;
/* budget: bytes of the in-memory set before it is sorted and spilled to a temporary file
** (O_TMPFILE) in dir; 0 = PCH_CJ_DEFAULT_ID_INDEX_BYTES. */
int pch_cj__ids_new(pch_cj_ids **out, pch_ctx *ctx, size_t budget, const char *dir,
                    pch_error *err);
/* Add the id of the row at (file, line). 1 = a duplicate of an id still in memory (*dup
** filled), 0 = added, < 0 = error (PCH_ENOMEM, PCH_EIO, PCH_ELIMIT). */
int pch_cj__ids_add(pch_cj_ids *s, const char *id, size_t len, uint32_t file, uint64_t line,
                    pch_cj_dup *dup, pch_error *err);
/* After the last row: merge what was spilled. 1 = a duplicate (*dup: the one whose second
** occurrence comes first in row order), 0 = every id unique, < 0 = error. */
int pch_cj__ids_finish(pch_cj_ids *s, pch_cj_dup *dup, pch_error *err);
size_t pch_cj__ids_runs(const pch_cj_ids *s);       /* runs spilled so far (tests) */
void pch_cj__ids_free(pch_cj_ids *s);

/* ---- staging and atomic publish, cj_stage.c ---- */
typedef struct pch_cj_stage {
    pch_buf target;        /* target path as given */
    pch_buf parent;        /* its parent directory */
    pch_buf base;          /* its last component */
    pch_buf staging;       /* "<parent>/.<base>.staging-<hex>"; for an s3:// target a local
                           ** "$TMPDIR/pch-cj-<random>" (the Lance writer commits there itself) */
    bool remote;           /* the target is on object storage */
    int lock_fd;           /* parent directory, flock'ed; -1 when none */
    bool target_exists;
    dev_t target_dev;
    ino_t target_ino;
    pch_cj_publish_mode mode;
    pch_ctx *ctx;
} pch_cj_stage;

/* Lock the target's parent directory (one writer per directory), remove stale staging
** directories of this target, check the mode against the target's existence and create
** an empty staging directory. Errors: PCH_EEXISTS (CREATE, target exists), PCH_EINVAL
** (target not a directory), PCH_EIO (no parent, locked by another writer). */
int pch_cj__stage_begin(pch_cj_stage *st, pch_ctx *ctx, const char *target,
                        pch_cj_publish_mode mode, pch_error *err);
/* fsync the staging tree, then rename it to the target (create: RENAME_NOREPLACE;
** replace: RENAME_EXCHANGE then remove the old tree), fsync the parent. For an s3://
** target: upload the staged offload objects (before the Lance commit names rows that
** refer to them; the commit itself is the Lance writer's create-if-absent manifest). */
int pch_cj__stage_publish(pch_cj_stage *st, pch_error *err);
/* For an s3:// target: upload staging/<dir>/... to <target>/<dir>/... (no-op locally). */
int pch_cj__stage_upload(pch_cj_stage *st, const char *dir, pch_error *err);
/* Remove the staging tree if still present, unlock; safe after publish or on error. */
void pch_cj__stage_end(pch_cj_stage *st);
/* Remove ".<base>.staging-*" entries of parent (stale after a crash). */
int pch_cj__clean_stale(const char *parent, const char *base, pch_error *err);
/* Make everything written under path durable (one syncfs of its file system). */
int pch_cj__sync_tree(const char *path, pch_error *err);

#endif
