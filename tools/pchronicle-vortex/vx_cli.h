/* Shared declarations of the pchronicle-vortex program (tools/pchronicle-vortex). Uses only
** public headers (STYLE.md §1). */
#ifndef PCH_VX_CLI_H
#define PCH_VX_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pchronicle/ctx.h"
#include "pchronicle/error.h"
#include "pchronicle/json.h"
#include "pchronicle-vortex/vortex.h"

#define VX_TRY(expr) do { int vx_try_rc_ = (expr); if (vx_try_rc_ < 0) return vx_try_rc_; } while (0)

#define VX_EXIT_OK 0
#define VX_EXIT_FAIL 1
#define VX_EXIT_USAGE 2

int vx_cmd_convert(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_dump(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_inspect(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_check(pch_ctx *ctx, int argc, char **argv);
/* the trajectory projection (cmd_traj.c) */
int vx_cmd_build(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_get(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_export(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_verify(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_snapshots(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_repair(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_pin(pch_ctx *ctx, int argc, char **argv, bool unpin);
int vx_cmd_vacuum(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_bench_get(pch_ctx *ctx, int argc, char **argv);
/* incremental sync and compaction (cmd_sync.c) */
int vx_cmd_sync(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_compact(pch_ctx *ctx, int argc, char **argv);
/* The ATIF documents of an input: a directory as it is, or a Storyline root or Compact JSONL
** dataset restored first into a private scratch directory (removed by vx_input_close). */
typedef struct vx_input { char dir[4200], tmp[4096]; bool made; } vx_input;
int vx_input_open(pch_ctx *ctx, const char *cmd, const char *from, vx_input *in);
void vx_input_close(vx_input *in, const char *cmd);
/* SQL relations over a projection root (cmd_sql.c) */
int vx_cmd_sql(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_bench_sql(pch_ctx *ctx, int argc, char **argv);
/* the §22.3 query matrix, warm and cold (cmd_bench.c) */
int vx_cmd_benchmark(pch_ctx *ctx, int argc, char **argv);
/* training readers (cmd_train.c) */
int vx_cmd_rl(pch_ctx *ctx, int argc, char **argv);
int vx_cmd_sft(pch_ctx *ctx, int argc, char **argv);
bool vx_is_projection_root(const char *path);
int vx_cmd_inspect_root(pch_ctx *ctx, const char *root);

/* Print "pchronicle-vortex: <what>: <msg>" and return VX_EXIT_FAIL. */
int vx_fail(const char *what, const pch_error *err);
int vx_usage(const char *msg);
/* s as a JSON string (quotes, backslashes and control characters escaped). */
void vx_put_json_string(FILE *out, const char *s);
/* A count or size: digits, optionally K/M/G (binary) and B/iB; no sign. -1 when it is not. */
int vx_parse_size(const char *s, uint64_t *out);
/* Seconds on the monotonic clock (for --stats and the benchmarks). */
double vx_now_s(void);
/* --stats on object storage (RFC-0006 §20.2): the process's requests, whatever stage made
** them, as "stats: s3 gets=N ranges=N bytes_requested=N bytes_useful=N requests=N retries=N
** cache_hits=N" on stderr; nothing when the process made no request. */
void vx_print_s3_stats(void);

/* Append a JSON value (parsed from src) to a builder of any dtype: null → null, numbers by
** column type, strings, {"base64":...} for binary, objects → structs (missing = null),
** arrays → lists; a utf8 column receives non-string values as their JSON text. */
int vx_json_append(pch_ctx *ctx, pch_vx_builder *b, const pch_json_value *v, const char *src,
                   const char *path, pch_error *err);
/* Infer a dtype (non-nullable struct of nullable columns) from JSON objects. */
typedef struct vx_infer vx_infer;
int vx_infer_new(vx_infer **out);
int vx_infer_add(vx_infer *inf, const pch_json_value *obj);
int vx_infer_schema(vx_infer *inf, char **schema_out);   /* malloc'd schema text */
void vx_infer_free(vx_infer *inf);

/* Write amplification (RFC-0006 §20.3, §22.2): bytes written per ATIF byte the operation
** read — the same measure for build, sync and compaction --json. */
static inline double vx_write_amp(uint64_t written, uint64_t atif)
{
    return atif ? (double)written / (double)atif : 0.0;
}

#endif
