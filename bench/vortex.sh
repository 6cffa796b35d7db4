#!/usr/bin/env bash
# Vortex benchmark (RFC-0006 Go/No-Go input; not part of make test). Input: a steps-like table
# flattened from ../shared/corpus/atif (bench/vortex/steps.py), COPIES times (default 4).
# Writers, side by side on the same rows:
#   * pchronicle-vortex convert (chunks never split a trajectory: --chunk-by trajectory_id)
#   * our Lance 2.1 writer (pchronicle lance write)
#   * official Lance (npm @lancedb/lancedb from the oracle cache), data storage version 2.1
#   * DuckDB read_json -> Parquet zstd (npm @duckdb/node-api@1.5.6-r.1)
# Reads: bench/vortex_bench.c (C API scans of all columns / one narrow column) for Vortex and
# our Lance; DuckDB re-reads its Parquet file. Environment: BUILD, COPIES, RUNS, PCH_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
COPIES=${COPIES:-4}
RUNS=${RUNS:-3}
CACHE=${PCH_CACHE:-$REPO/.cache}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
VX=$BUILD/pchronicle-vortex
CLI=$BUILD/pchronicle
ORACLE_MODULES=$CACHE/lance-oracle/node_modules
DUCK=$CACHE/duckdb-bench
W=$BUILD/bench-vortex
[ -x "$VX" ] && [ -x "$CLI" ] || { echo "bench: build $VX and $CLI first" >&2; exit 1; }
rm -rf "$W"; mkdir -p "$W"
python3 bench/vortex/steps.py "$REPO/../shared/corpus/atif" "$W" "$COPIES"
IN=$W/steps.jsonl
IN_BYTES=$(stat -c %s "$IN")
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -o "$W/vortex_bench" bench/vortex_bench.c \
    "$BUILD/libpchronicle-vortex.a" "$BUILD/libpchronicle.a" -lzstd -lm
mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b/1e6}'; }
rate() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.1f", (t > 0 ? b/1e6/t : 0)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a/b}'; }
timed() {  # timed LABEL CMD... -> T seconds, RSS MiB
    local label=$1; shift
    /usr/bin/time -f '%e %M' -o "$W/time.$label" "$@" >"$W/log.$label" 2>&1 || { echo "bench: $label failed:"; tail -5 "$W/log.$label"; return 1; }
    read -r T RSS_KB < "$W/time.$label"; RSS=$(awk -v k="$RSS_KB" 'BEGIN {printf "%.0f", k/1024}')
}
dsize() { du -sb "$1" | cut -f1; }
row() { printf '%-36s %9s %9s %8s %11s %7s\n' "$@"; }
echo "input: $(mb "$IN_BYTES") MB of steps JSON lines ($COPIES copies of the ATIF corpus)"
row "write" "seconds" "MB/s" "RSS MiB" "bytes" "ratio"

timed vortex "$VX" convert --from "$IN" --to "$W/steps.vortex" --schema "@$W/vortex.schema" --chunk-by trajectory_id --chunk-rows 8192 --report
S=$(dsize "$W/steps.vortex"); row "pchronicle-vortex convert" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
timed lance sh -c "'$CLI' lance write '$W/steps.lance' --schema '$W/lance_schema.json' < '$IN'"
S=$(dsize "$W/steps.lance"); row "pchronicle lance write (Lance 2.1)" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
if [ -d "$ORACLE_MODULES" ]; then
    if timed official env NODE_PATH="$ORACLE_MODULES" node bench/vortex/lance_write.js "$IN" "$W/official.lance"; then
        S=$(dsize "$W/official.lance"); row "official Lance (lancedb, 2.1)" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
    fi
else
    echo "official Lance: skipped ($ORACLE_MODULES missing; run scripts/bootstrap.sh)"
fi
if [ -d "$DUCK/node_modules/@duckdb/node-api" ]; then
    if timed duck env NODE_PATH="$DUCK/node_modules" node bench/vortex/duckdb_parquet.js write "$IN" "$W/steps.parquet"; then
        S=$(dsize "$W/steps.parquet"); row "DuckDB -> Parquet zstd" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")"
    fi
else
    echo "DuckDB: skipped ($DUCK/node_modules/@duckdb/node-api missing; bench/compact_jsonl.sh installs it)"
fi
echo
"$W/vortex_bench" "$W/steps.vortex" "$W/steps.lance" step_index "$RUNS"
if [ -f "$W/steps.parquet" ]; then
    for c in "" step_index; do
        timed duckread env NODE_PATH="$DUCK/node_modules" node bench/vortex/duckdb_parquet.js read "$W/steps.parquet" $c
        printf '%-28s %10s %10s  (node + DuckDB start-up included)\n' "parquet, ${c:-all columns}" "$T" "$(rate "$(dsize "$W/steps.parquet")" "$T")"
    done
fi
echo
echo "per-lane report of the Vortex writer:"
cat "$W/log.vortex"
