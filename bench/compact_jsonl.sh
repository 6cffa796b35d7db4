#!/usr/bin/env bash
# Compact JSONL benchmark (RFC-0014; not part of make test). Three corpora:
#   real       the valid .jsonl files of ../shared/corpus/jsonl (real agent logs), once;
#   scaled     copies of them up to SCALED_MIB MiB (default 256);
#   synthetic  bench/json_gen.py output of ~SYNTH_MB MB (default 209.7 = 200 MiB, cached in
#              the cache dir), split into ~16 MB files at line boundaries.
# For each: pchronicle import / export (MB/s, peak RSS via GNU time, dataset bytes; the
# export must be byte-identical), beside
#   * the official Lance writer (lancedb 0.31.0, same schema, bench/compact_jsonl/lance_write.js)
#     and the official reader reading every row of that dataset (lance_read.js),
#   * DuckDB read_ndjson -> Parquet zstd (npm @duckdb/node-api@1.5.6-r.1, installed into the
#     cache dir on first use; skipped with a note when it cannot be installed),
#   * tar | zstd -3 of the tree,
# then the ratios the goals are stated in: import / official write, export / official read,
# dataset bytes / zstd -3 bytes. Ids are generated (<file>#<line>) because copies repeat the
# corpus's own ids. Environment: BUILD, CORPORA ("real scaled synthetic"), SCALED_MIB,
# SYNTH_MB, BATCH_BYTES, PCH_CACHE, SKIP_PEERS=1 (pchronicle and zstd only), LEVELS (extra
# pchronicle imports at these --zstd-level values, default "7"; "" for none).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
CORPORA=${CORPORA:-real scaled synthetic}
SCALED_MIB=${SCALED_MIB:-256}
SYNTH_MB=${SYNTH_MB:-209.7}
CACHE=${PCH_CACHE:-$REPO/.cache}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
CLI=$BUILD/pchronicle
ORACLE_MODULES=$CACHE/lance-oracle/node_modules
DUCK=$CACHE/duckdb-bench
W=$BUILD/bench-cj
[ -x "$CLI" ] || { echo "bench: build $CLI first" >&2; exit 1; }
C=$REPO/../shared/corpus/jsonl
[ -d "$C" ] || { echo "bench: $C not found" >&2; exit 1; }

mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b/1e6}'; }
rate() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.1f", (t > 0 ? b/1e6/t : 0)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b > 0 ? a/b : 0)}'; }
# dataset bytes = bytes of its regular files, counted as the input tree is (du -sb would
# add each directory's own 4 KiB: 12 KiB of a 474 KB dataset)
dsize() { tree_bytes "$1"; }
tree_bytes() { find "$1" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
# timed LABEL CMD... -> sets T (seconds) and RSS (MiB)
timed() {
    local label=$1; shift
    /usr/bin/time -f '%e %M' -o "$W/time.$label" "$@" >"$W/log.$label" 2>&1 || { echo "bench: $label failed:"; tail -5 "$W/log.$label"; return 1; }
    read -r T RSS_KB < "$W/time.$label"; RSS=$(awk -v k="$RSS_KB" 'BEGIN {printf "%.0f", k/1024}')
}

copy_real() {  # copy_real DEST
    mkdir -p "$1"
    (cd "$C" && find . -type f -name '*.jsonl' ! -name 'claude-code-log.edge_cases.jsonl' -exec cp --parents {} "$1" \;)
}
prepare() {  # prepare NAME DIR
    local name=$1 dir=$2 i=0
    rm -rf "$dir"; mkdir -p "$dir"
    case $name in
    real) copy_real "$dir" ;;
    scaled)
        copy_real "$dir/copy0"
        local one; one=$(tree_bytes "$dir/copy0")
        local n=$(( (SCALED_MIB * 1048576 + one - 1) / one ))
        i=1; while [ $i -lt $n ]; do cp -r "$dir/copy0" "$dir/copy$i"; i=$((i + 1)); done ;;
    synthetic)
        local src=$CACHE/bench-synth/synth-$SYNTH_MB-7.jsonl
        if [ ! -f "$src" ]; then
            mkdir -p "$CACHE/bench-synth"
            echo "(generating $SYNTH_MB MB of synthetic JSONL once into $src)"
            python3 bench/json_gen.py "$src.tmp" "$SYNTH_MB" 7 && mv "$src.tmp" "$src"
        fi
        (cd "$dir" && split -C 16000000 -d -a 3 --additional-suffix=.jsonl "$src" part-) ;;
    esac
}

declare -A SUMMARY
run_corpus() {  # run_corpus NAME
    local name=$1 in=$W/in
    prepare "$name" "$in"
    local IN_BYTES NFILES ZS=0 IMP_T=0 EXP_T=0 OFF_W=0 OFF_R=0 PCH_S=0
    IN_BYTES=$(tree_bytes "$in"); NFILES=$(find "$in" -type f | wc -l)
    echo
    echo "== corpus $name: $NFILES .jsonl files, $(mb "$IN_BYTES") MB"
    printf '%-36s %8s %8s %8s %12s %8s %8s\n' "tool" "seconds" "MB/s" "RSS MiB" "bytes" "/input" "/zstd-3"
    row() { printf '%-36s %8s %8s %8s %12s %8s %8s\n' "$@"; }

    timed zstd sh -c "tar -C '$W' -cf - in | zstd -3 -T1 -q -c > '$W/in.tar.zst'"
    ZS=$(dsize "$W/in.tar.zst"); rm -f "$W/in.tar.zst"
    row "tar | zstd -3" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$ZS" "$(ratio "$ZS" "$IN_BYTES")" "1.000"

    rm -rf "$W/pch.lance" "$W/restored"
    sync; timed import "$CLI" import --from "$in" --to "$W/pch.lance" --output-format compact-jsonl --quiet \
        --column 'id=$.pch_bench_generated_ids' ${BATCH_BYTES:+--batch-bytes $BATCH_BYTES}
    PCH_S=$(dsize "$W/pch.lance"); IMP_T=$T
    row "pchronicle import" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$PCH_S" "$(ratio "$PCH_S" "$IN_BYTES")" "$(ratio "$PCH_S" "$ZS")"
    timed export "$CLI" export --from "$W/pch.lance" --to "$W/restored" --output-format compact-jsonl --quiet
    EXP_T=$T
    row "pchronicle export" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "-" "-" "-"
    diff -r "$in" "$W/restored" >/dev/null || { echo "bench: export differs!"; exit 1; }
    rm -rf "$W/restored"
    "$CLI" inspect "$W/pch.lance" | sed -n '/^encoded bytes/,$p' | tail -n +2 | \
        awk '{printf "%s%s %s", (NR > 1 ? ", " : "  (columns on disk: "), $1, $2} END {print ")"}'
    rm -rf "$W/pch.lance"
    # the size/speed trade of --zstd-level (default 3): extra imports, not in the goal ratios
    local lv
    for lv in ${LEVELS-7}; do
        sync; timed "import-l$lv" "$CLI" import --from "$in" --to "$W/pch-l.lance" --output-format compact-jsonl \
            --quiet --column 'id=$.pch_bench_generated_ids' --zstd-level "$lv" ${BATCH_BYTES:+--batch-bytes $BATCH_BYTES}
        local SL; SL=$(dsize "$W/pch-l.lance")
        row "pchronicle import --zstd-level $lv" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$SL" "$(ratio "$SL" "$IN_BYTES")" "$(ratio "$SL" "$ZS")"
        LV_ROWS="${LV_ROWS:-}$(printf '%-10s level %-3s %8s s %14s\n' "$name" "$lv" "$T" "$(ratio "$SL" "$ZS")")"$'\n'
        rm -rf "$W/pch-l.lance"
    done

    if [ "${SKIP_PEERS:-0}" != 1 ] && [ -d "$ORACLE_MODULES" ]; then
        rm -rf "$W/official.lance"
        if timed lance env NODE_PATH="$ORACLE_MODULES" node bench/compact_jsonl/lance_write.js "$in" "$W/official.lance"; then
            local S; S=$(dsize "$W/official.lance"); OFF_W=$T
            row "official Lance write (0.31.0)" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")" "$(ratio "$S" "$ZS")"
            if timed lance_read env NODE_PATH="$ORACLE_MODULES" node bench/compact_jsonl/lance_read.js "$W/official.lance"; then
                OFF_R=$T
                row "official Lance read, all rows" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "-" "-" "-"
            fi
        fi
        rm -rf "$W/official.lance"
    elif [ "${SKIP_PEERS:-0}" != 1 ]; then
        echo "official Lance: skipped ($ORACLE_MODULES missing; run scripts/bootstrap.sh)"
    fi

    if [ "${SKIP_PEERS:-0}" != 1 ]; then
        if [ ! -d "$DUCK/node_modules/@duckdb/node-api" ]; then
            mkdir -p "$DUCK"
            npm install --prefix "$DUCK" --no-audit --no-fund --loglevel=error @duckdb/node-api@1.5.6-r.1 >"$W/npm-duckdb.log" 2>&1 || true
        fi
        if [ -d "$DUCK/node_modules/@duckdb/node-api" ]; then
            rm -f "$W/duck.parquet"
            if timed duckdb env NODE_PATH="$DUCK/node_modules" node bench/compact_jsonl/duckdb_parquet.js "$in" "$W/duck.parquet"; then
                local S; S=$(dsize "$W/duck.parquet")
                row "DuckDB -> Parquet zstd ($(head -n1 "$W/log.duckdb"))" "$T" "$(rate "$IN_BYTES" "$T")" "$RSS" "$S" "$(ratio "$S" "$IN_BYTES")" "$(ratio "$S" "$ZS")"
            fi
            rm -f "$W/duck.parquet"
        else
            echo "DuckDB: skipped (npm @duckdb/node-api@1.5.6-r.1 could not be installed; see $W/npm-duckdb.log)"
        fi
    fi
    SUMMARY[$name]=$(printf '%-10s %14s %14s %14s' "$name" \
        "$( [ "$OFF_W" != 0 ] && ratio "$OFF_W" "$IMP_T" || echo -)" \
        "$( [ "$OFF_R" != 0 ] && ratio "$OFF_R" "$EXP_T" || echo -)" "$(ratio "$PCH_S" "$ZS")")
    rm -rf "$in"
}

rm -rf "$W"; mkdir -p "$W"
for c in $CORPORA; do run_corpus "$c"; done
echo
echo "goals: import >= 5x official write, export >= 3x official read, dataset <= 2x zstd -3"
printf '%-10s %14s %14s %14s\n' corpus "import/official" "export/official" "bytes/zstd-3"
for c in $CORPORA; do echo "${SUMMARY[$c]}"; done
echo "ratios of speeds are official seconds / pchronicle seconds; RSS = peak resident set (GNU time)"
if [ -n "${LV_ROWS:-}" ]; then
    echo
    echo "other --zstd-level values (import seconds, bytes/zstd-3; official write seconds above):"
    printf '%s' "$LV_ROWS"
fi
