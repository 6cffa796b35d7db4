#!/usr/bin/env bash
# Compact JSONL benchmark (RFC-0014; not part of make test). Input: the valid .jsonl files of
# ../shared/corpus/jsonl copied COPIES times (default 8) into a scratch tree. Measures for
# pchronicle import/export MB/s, dataset bytes and peak RSS (GNU time), beside
#   * the official Lance writer (lancedb 0.31.0) writing the same schema from the same files,
#   * DuckDB read_ndjson -> Parquet zstd (npm @duckdb/node-api@1.5.6-r.1, installed into the
#     cache dir on first use; skipped with a note when it cannot be installed),
#   * zstd -3 of the tree (tar | zstd -3),
# and prints sizes relative to the input. Ids are generated (<file>#<line>) because the
# copies repeat the corpus's own ids. Environment: BUILD, COPIES, BATCH_BYTES, PCH_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
COPIES=${COPIES:-8}
CACHE=${PCH_CACHE:-$REPO/.cache}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
CLI=$BUILD/pchronicle
ORACLE_MODULES=$CACHE/lance-oracle/node_modules
DUCK=$CACHE/duckdb-bench
W=$BUILD/bench-cj
[ -x "$CLI" ] || { echo "bench: build $CLI first" >&2; exit 1; }
C=$REPO/../shared/corpus/jsonl
[ -d "$C" ] || { echo "bench: $C not found" >&2; exit 1; }
rm -rf "$W"; mkdir -p "$W/in"
i=0
while [ $i -lt "$COPIES" ]; do
    mkdir -p "$W/in/copy$i"
    (cd "$C" && find . -type f -name '*.jsonl' ! -name 'claude-code-log.edge_cases.jsonl' -exec cp --parents {} "$W/in/copy$i" \;)
    i=$((i + 1))
done
IN_BYTES=$(find "$W/in" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
NFILES=$(find "$W/in" -type f | wc -l)
mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b/1e6}'; }
rate() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.1f", (t > 0 ? b/1e6/t : 0)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a/b}'; }
# timed LABEL CMD... -> sets T (seconds) and RSS (MiB)
timed() {
    local label=$1; shift
    /usr/bin/time -f '%e %M' -o "$W/time.$label" "$@" >"$W/log.$label" 2>&1 || { echo "bench: $label failed:"; tail -5 "$W/log.$label"; return 1; }
    read -r T RSS_KB < "$W/time.$label"; RSS=$(awk -v k="$RSS_KB" 'BEGIN {printf "%.0f", k/1024}')
}
dsize() { du -sb "$1" | cut -f1; }
echo "input: $NFILES .jsonl files, $(mb "$IN_BYTES") MB ($COPIES copies of the shared corpus)"
printf '%-34s %10s %10s %8s %10s %8s\n' "writer" "seconds" "MB/s" "RSS MiB" "bytes" "ratio"
row() { printf '%-34s %10s %10s %8s %10s %8s\n' "$@"; }

sync; timed import "$CLI" import --from "$W/in" --to "$W/pch.lance" --output-format compact-jsonl --quiet \
    --column 'id=$.pch_bench_generated_ids' ${BATCH_BYTES:+--batch-bytes $BATCH_BYTES}
S=$(dsize "$W/pch.lance"); row "pchronicle import" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
timed export "$CLI" export --from "$W/pch.lance" --to "$W/restored" --output-format compact-jsonl --quiet
row "pchronicle export" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "-" "-"
diff -r "$W/in" "$W/restored" >/dev/null && echo "  (export is byte-identical to the input)" || { echo "bench: export differs!"; exit 1; }
timed import_off "$CLI" import --from "$W/in" --to "$W/pch-off.lance" --output-format compact-jsonl --quiet \
    --column 'id=$.pch_bench_generated_ids' --offload-threshold 65536
S=$(dsize "$W/pch-off.lance"); row "pchronicle import, offload>=64KiB" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"

if [ -d "$ORACLE_MODULES" ]; then
    if timed lance env NODE_PATH="$ORACLE_MODULES" node bench/compact_jsonl/lance_write.js "$W/in" "$W/official.lance"; then
        S=$(dsize "$W/official.lance"); row "official Lance (lancedb 0.31.0)" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
    fi
else
    echo "official Lance: skipped ($ORACLE_MODULES missing; run scripts/bootstrap.sh)"
fi

if [ ! -d "$DUCK/node_modules/@duckdb/node-api" ]; then
    mkdir -p "$DUCK"
    npm install --prefix "$DUCK" --no-audit --no-fund --loglevel=error @duckdb/node-api@1.5.6-r.1 >"$W/npm-duckdb.log" 2>&1 || true
fi
if [ -d "$DUCK/node_modules/@duckdb/node-api" ]; then
    if timed duckdb env NODE_PATH="$DUCK/node_modules" node bench/compact_jsonl/duckdb_parquet.js "$W/in" "$W/duck.parquet"; then
        S=$(dsize "$W/duck.parquet"); row "DuckDB -> Parquet zstd ($(head -n1 "$W/log.duckdb"))" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
    fi
else
    echo "DuckDB: skipped (npm @duckdb/node-api@1.5.6-r.1 could not be installed; see $W/npm-duckdb.log)"
fi

timed zstd sh -c "tar -C '$W' -cf - in | zstd -3 -T1 -q -c > '$W/in.tar.zst'"
S=$(dsize "$W/in.tar.zst"); row "tar | zstd -3" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
echo "ratio = bytes on disk / input bytes; RSS = peak resident set (GNU time)"
