#!/usr/bin/env bash
# Vortex benchmark (RFC-0006 Go/No-Go input; not part of make test). Input: a steps-like table
# flattened from ../shared/corpus/atif (bench/vortex/steps.py), COPIES times (default 4).
# Side by side on the same rows, in one run:
#   * pchronicle-vortex convert (chunks never split a trajectory: --chunk-by trajectory_id)
#   * our Lance 2.1 writer (pchronicle lance write)
#   * official Lance (npm @lancedb/lancedb from the oracle cache), data storage version 2.1
#   * DuckDB read_json -> Parquet zstd (npm @duckdb/node-api from the duckdb-bench cache)
# Reads, all columns and one narrow column (step_index), RUNS timed scans after one warm-up,
# timed inside each process: bench/vortex_bench.c (C API) for Vortex and our Lance,
# bench/vortex/lance_read.js (lancedb -> Arrow) for official Lance, DuckDB on its Parquet.
# Then the per-lane report of the Vortex writer's sampling compressor (RFC-0006 §8.1):
# chosen encodings, logical bytes, stored bytes, ratio, encode seconds.
# Environment: BUILD, COPIES, RUNS, PCH_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
COPIES=${COPIES:-4}
RUNS=${RUNS:-3}
NARROW=step_index
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
IN_ROWS=$(wc -l <"$IN")
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -o "$W/vortex_bench" bench/vortex_bench.c \
    "$BUILD/libpchronicle-vortex.a" "$BUILD/libpchronicle.a" -lzstd -lm -pthread
timed() {  # timed LABEL CMD... -> T seconds, RSS MiB
    local label=$1; shift
    /usr/bin/time -f '%e %M' -o "$W/time.$label" "$@" >"$W/log.$label" 2>&1 || { echo "bench: $label failed:"; tail -5 "$W/log.$label"; return 1; }
    read -r T RSS_KB < "$W/time.$label"; RSS=$(awk -v k="$RSS_KB" 'BEGIN {printf "%.0f", k/1024}')
}
# bytes of the regular files under a path (du -sb would add each directory's own 4 KiB)
dsize() { find "$1" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
declare -A WS WR WB RA RO   # per format: write seconds, RSS, bytes, read all / one seconds
FORMATS=()

timed vortex "$VX" convert --from "$IN" --to "$W/steps.vortex" --schema "@$W/vortex.schema" --chunk-by trajectory_id --chunk-rows 8192 --report
FORMATS+=(vortex); WS[vortex]=$T; WR[vortex]=$RSS; WB[vortex]=$(dsize "$W/steps.vortex")
timed lance sh -c "'$CLI' lance write '$W/steps.lance' --schema '$W/lance_schema.json' < '$IN'"
FORMATS+=(lance); WS[lance]=$T; WR[lance]=$RSS; WB[lance]=$(dsize "$W/steps.lance")
if [ -d "$ORACLE_MODULES" ]; then
    if timed official env NODE_PATH="$ORACLE_MODULES" node bench/vortex/lance_write.js "$IN" "$W/official.lance"; then
        FORMATS+=(official); WS[official]=$T; WR[official]=$RSS; WB[official]=$(dsize "$W/official.lance")
    fi
else
    echo "official Lance: skipped ($ORACLE_MODULES missing; run scripts/bootstrap.sh)"
fi
if [ -d "$DUCK/node_modules/@duckdb/node-api" ]; then
    if timed duck env NODE_PATH="$DUCK/node_modules" node bench/vortex/duckdb_parquet.js write "$IN" "$W/steps.parquet"; then
        FORMATS+=(parquet); WS[parquet]=$T; WR[parquet]=$RSS; WB[parquet]=$(dsize "$W/steps.parquet")
    fi
else
    echo "DuckDB: skipped ($DUCK/node_modules/@duckdb/node-api missing; bench/compact_jsonl.sh installs it)"
fi

# reads
"$W/vortex_bench" "$W/steps.vortex" "$W/steps.lance" "$NARROW" "$RUNS" >"$W/read.c"
RA[vortex]=$(awk '$1=="vortex_all"{print $2}' "$W/read.c"); RO[vortex]=$(awk '$1=="vortex_one"{print $2}' "$W/read.c")
RA[lance]=$(awk '$1=="lance_all"{print $2}' "$W/read.c"); RO[lance]=$(awk '$1=="lance_one"{print $2}' "$W/read.c")
for f in vortex lance; do
    r=$(awk -v m="${f}_all" '$1==m{print $3}' "$W/read.c")
    [ "$r" = "$IN_ROWS" ] || { echo "bench: $f read $r rows, want $IN_ROWS"; exit 1; }
done
if [ -n "${WB[official]:-}" ]; then
    NODE_PATH="$ORACLE_MODULES" node bench/vortex/lance_read.js "$W/official.lance" "$NARROW" "$RUNS" official >"$W/read.official"
    RA[official]=$(awk -F'\t' 'NR==1{print $2}' "$W/read.official"); RO[official]=$(awk -F'\t' 'NR==2{print $2}' "$W/read.official")
    r=$(awk -F'\t' 'NR==1{print $3}' "$W/read.official"); [ "$r" = "$IN_ROWS" ] || { echo "bench: official read $r rows"; exit 1; }
fi
if [ -n "${WB[parquet]:-}" ]; then
    RA[parquet]=$(NODE_PATH="$DUCK/node_modules" node bench/vortex/duckdb_parquet.js read "$W/steps.parquet" "$RUNS" | cut -f1)
    RO[parquet]=$(NODE_PATH="$DUCK/node_modules" node bench/vortex/duckdb_parquet.js read "$W/steps.parquet" "$RUNS" "$NARROW" | cut -f1)
fi

declare -A NAME=([vortex]="pchronicle-vortex (Vortex v1)" [lance]="our Lance 2.1 writer/C reader"
                 [official]="official Lance 2.1 (lancedb)" [parquet]="DuckDB Parquet zstd")
echo "input: $(awk -v b="$IN_BYTES" 'BEGIN{printf "%.1f", b/1e6}') MB of steps JSON lines, $IN_ROWS rows ($COPIES copies of the ATIF corpus); $(nproc) CPUs, RUNS=$RUNS"
echo "MB/s = input JSON MB / seconds (the same work for every format); x = relative to pchronicle-vortex (lower is better)"
printf '%-31s %8s %8s %7s %11s %7s %6s | %9s %8s %6s | %9s %9s %6s\n' "format" "write s" "MB/s" "RSS MiB" "bytes" "size/in" "x size" \
    "all ms" "MB/s" "x" "1 col ms" "Mrows/s" "x"
for f in "${FORMATS[@]}"; do
    awk -v n="${NAME[$f]}" -v ws="${WS[$f]}" -v rss="${WR[$f]}" -v b="${WB[$f]}" -v in_b="$IN_BYTES" -v vb="${WB[vortex]}" -v rows="$IN_ROWS" \
        -v ra="${RA[$f]:-0}" -v ro="${RO[$f]:-0}" -v vra="${RA[vortex]}" -v vro="${RO[vortex]}" 'BEGIN {
        mb = in_b / 1e6
        printf "%-31s %8.2f %8.1f %7s %11d %7.3f %6.2f | %9.2f %8.1f %6.2f | %9.3f %9.2f %6.2f\n", n, ws, (ws > 0 ? mb / ws : 0), rss, b,
            b / in_b, b / vb, ra * 1e3, (ra > 0 ? mb / ra : 0), (vra > 0 ? ra / vra : 0), ro * 1e3, (ro > 0 ? rows / ro / 1e6 : 0),
            (vro > 0 ? ro / vro : 0) }'
done
echo "(write s: wall time of the whole program incl. JSON parsing and node start-up; reads: ms per scan in-process,"
echo " opening the file/dataset included; 1 col = $NARROW; Vortex/our Lance via the C API, official Lance into Arrow,"
echo " DuckDB computing count(*) + sum(length(cast(col as varchar))) over the columns read)"
echo
echo "per-lane report of the Vortex writer (ratio = logical/stored):"
cat "$W/log.vortex"
