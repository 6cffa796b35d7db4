#!/usr/bin/env bash
# RFC-0006 §22 trajectory benchmark, our side next to the shared peers (not part of make test).
# Per corpus (real, scaled, rl of the shared generator), side by side in one run:
#   (a) Vortex projection: pchronicle-vortex build (wall s, ATIF MiB/s, bytes = sum of the files
#       under ROOT, peak RSS by /usr/bin/time -v), then one `get ROOT KEY --compact` process per
#       key over the Lance run's N sampled keys (cold p50/p95), `bench-get` over the same keys in
#       one process (warm p50/p95), and a round trip of the first VERIFY outputs of both against
#       the corpus documents (JSON-equal);
#   (b) Storyline on our Lance writer: pchronicle import --input-format atif --output-format
#       storyline (build s, bytes, RSS), and `pchronicle get` on the same keys (SL_N, 0 = skip);
#   (c) official Lance 2.1 and (d) Parquet zstd + DuckDB: the shared run.sh with
#       PEERS=lance,duckdb (only when their result JSON is missing from $BENCH_DIR/results, or
#       PEERS_RUN=always); their build, bytes and point-read numbers are read from those files.
# Then one markdown table per corpus with the Vortex goals: bytes <= 0.8x DuckDB/Parquet; cold
# get p50 <= 10 ms on scaled; build >= 5x official Lance and >= 190 MiB/s; peak RSS reported;
# warm in-process point read p95 <= 0.5x official Lance warm p95, by `pchronicle-vortex
# bench-get` over the same keys (marked "not measured" when the binary has no bench-get).
# Method, key mapping and result files: bench/vortex_traj/README.md.
#
#   bench/vortex_traj.sh                                 all corpora, all stages
#   CORPORA=real bench/vortex_traj.sh                    one corpus
#   STAGES="vortex report" CORPORA=scaled bench/vortex_traj.sh
#   STAGES=report bench/vortex_traj.sh                   tables from existing results
#
# Stages (STAGES, default "corpus peers vortex storyline report"):
#   corpus     generate $CORPUS_DIR/<c> when MANIFEST.json is missing: real, scaled, rl with the
#              shared gen-corpus.js; the other kinds of RFC-0006 §22.1 (chat-heavy, tool-heavy,
#              dedup-heavy, multi-agent, pathological) with bench/corpus/gen-kinds.js
#   peers      official Lance + DuckDB through the shared run.sh (PEERS_RUN=auto|always|never)
#   vortex     (a)         storyline  (b)         report  tables -> $VX_DIR/results/report.md
# Environment (defaults):
#   BUILD=build (pchronicle-vortex, pchronicle; copied to $VX_DIR/bin at start, so a rebuild
#   during the run changes nothing)   TRAJ_DIR=../shared/bench/traj   CORPUS_DIR=/tmp/traj-corpus
#   BENCH_DIR=/tmp/traj-bench (the shared run's outputs)   VX_DIR=/tmp/vortex-traj (ours: roots/,
#   results/, logs/)   N=200 keys   VERIFY=20   SL_N=$N  SL_VERIFY=$VERIFY   PEERS_RUN=auto
#   LOAD_MAX=0 (>0: before each timed stage wait up to LOAD_WAIT_S=300 s for a 1-min load below it)
#   PCH_CACHE=.cache (LANCE_ORACLE_DIR=$PCH_CACHE/lance-oracle from scripts/bootstrap.sh,
#   DUCKDB_NODE_DIR=$PCH_CACHE/duckdb: @duckdb/node-api 1.5.6-r.1, run.sh installs it when missing)
#   SCALED_COUNT=50000 RL_COUNT=5000 (corpus sizes, as the shared run)
# Every stage appends "start corpus stage seconds exit load_start load_end" to
# $VX_DIR/results/stages.tsv; the 1-min load average is also in every result JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
CACHE=${PCH_CACHE:-$REPO/.cache}
TRAJ_DIR=${TRAJ_DIR:-$REPO/../shared/bench/traj}
CORPUS_DIR=${CORPUS_DIR:-/tmp/traj-corpus}
BENCH_DIR=${BENCH_DIR:-/tmp/traj-bench}
VX_DIR=${VX_DIR:-/tmp/vortex-traj}
CORPORA=${CORPORA:-"real scaled rl"}
STAGES=${STAGES:-"corpus peers vortex storyline report"}
N=${N:-200}; VERIFY=${VERIFY:-20}; SL_N=${SL_N:-$N}; SL_VERIFY=${SL_VERIFY:-$VERIFY}
PEERS_RUN=${PEERS_RUN:-auto}
LOAD_MAX=${LOAD_MAX:-0}; LOAD_WAIT_S=${LOAD_WAIT_S:-300}
SCALED_COUNT=${SCALED_COUNT:-50000}; RL_COUNT=${RL_COUNT:-5000}
export LANCE_ORACLE_DIR=${LANCE_ORACLE_DIR:-$CACHE/lance-oracle}
export DUCKDB_NODE_DIR=${DUCKDB_NODE_DIR:-$CACHE/duckdb}
TRAJ_DIR=$(cd "$TRAJ_DIR" && pwd); export TRAJ_DIR
H=$REPO/bench/vortex_traj
RES=$VX_DIR/results; LOGS=$VX_DIR/logs; ROOTS=$VX_DIR/roots; BIN=$VX_DIR/bin
PRES=$BENCH_DIR/results
has() { [[ " $STAGES " == *" $1 "* ]]; }
say() { printf '[vortex_traj %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
load1() { cut -d' ' -f1 /proc/loadavg; }
wait_load() {
    [ "$LOAD_MAX" = 0 ] && return 0
    local waited=0
    while awk -v l="$(load1)" -v m="$LOAD_MAX" 'BEGIN {exit !(l >= m)}' && [ "$waited" -lt "$LOAD_WAIT_S" ]; do sleep 5; waited=$((waited + 5)); done
    [ "$waited" -gt 0 ] && say "waited ${waited} s for load < $LOAD_MAX (now $(load1))"
    return 0
}
STAGE_T0=0; STAGE_L0=""; STAGE_AT=""
stage_begin() { wait_load; STAGE_L0=$(load1); STAGE_T0=$EPOCHREALTIME; STAGE_AT=$(date -u +%Y-%m-%dT%H:%M:%S); say "$1 $2 (load $STAGE_L0)"; }
stage_end() {  # corpus stage rc
    local s; s=$(awk -v a="$STAGE_T0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$STAGE_AT" "$1" "$2" "$s" "$3" "$STAGE_L0" "$(load1)" >> "$RES/stages.tsv"
    say "$1 $2: ${s} s, exit $3 (load $STAGE_L0 -> $(load1))"
}

[ -d "$TRAJ_DIR" ] && [ -f "$TRAJ_DIR/run.sh" ] || die "TRAJ_DIR=$TRAJ_DIR is not bench/traj of the shared folder"
[ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install time)"
mkdir -p "$RES" "$LOGS" "$ROOTS" "$BIN"
[ -f "$RES/stages.tsv" ] || printf 'start_utc\tcorpus\tstage\tseconds\texit\tload_start\tload_end\n' > "$RES/stages.tsv"
if has vortex || has storyline; then
    [ -x "$BUILD/pchronicle-vortex" ] && [ -x "$BUILD/pchronicle" ] || die "build $BUILD/pchronicle-vortex and $BUILD/pchronicle first (make -j2 all)"
    cp "$BUILD/pchronicle-vortex" "$BUILD/pchronicle" "$BIN/"
    "$BIN/pchronicle-vortex" --help > /dev/null 2>&1 && "$BIN/pchronicle" --version > /dev/null 2>&1 \
        || die "the copied binaries do not run (a rebuild in progress?); retry"
    say "binaries: $(cd "$BIN" && sha256sum pchronicle-vortex pchronicle | awk '{printf "%s %.16s  ", $2, $1}')(commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" diff --quiet HEAD -- src include 2>/dev/null || echo ', uncommitted changes in src/include'))"
fi
VXB=$BIN/pchronicle-vortex; PCH=$BIN/pchronicle

timed_build() {  # KIND CORPUS ROOT CMD...   (wall clock around /usr/bin/time -v)
    local kind=$1 c=$2 root=$3; shift 3
    local tf=$LOGS/$kind-build-$c.time log=$LOGS/$kind-build-$c.log rc=0 l0 t0 t1
    rm -rf "$root"
    # the input read once first: every build is timed on a warm page cache, as
    # bench/vortex_sync.sh times its build (a corpus that other work evicted would otherwise
    # charge its disk reads to whichever build runs first: measured 2.32 s against 1.96 s for
    # the same chat-heavy build, 2026-12-06)
    find "$CORPUS_DIR/$c" -type f -exec cat {} + >/dev/null
    wait_load; l0=$(cut -d' ' -f1-3 /proc/loadavg)
    t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$tf" "$@" > "$log.out" 2> "$log" || rc=$?
    t1=$EPOCHREALTIME
    [ "$rc" = 0 ] || { say "$kind build $c failed (exit $rc):"; tail -20 "$log" >&2; }
    node "$H/record.js" --kind "$kind" --corpus "$CORPUS_DIR/$c" --root "$root" --time-file "$tf" \
        --wall-s "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" --log "$log" --command "$*" --status "$rc" \
        --loadavg-start "$l0" --bin "$1" --results "$RES/$kind-build-$c.json"
    return "$rc"
}

for c in $CORPORA; do
    case $c in real|scaled|rl) gen=("$TRAJ_DIR/gen-corpus.js") ;;
        chat-heavy|tool-heavy|dedup-heavy|multi-agent|pathological) gen=("$REPO/bench/corpus/gen-kinds.js") ;;
        *) die "unknown corpus $c (real, scaled, rl, chat-heavy, tool-heavy, dedup-heavy, multi-agent, pathological)" ;; esac
    # ------------------------------------------------------------------ corpus
    if has corpus && [ ! -f "$CORPUS_DIR/$c/MANIFEST.json" ]; then
        count=0; [ "$c" = scaled ] && count=$SCALED_COUNT; [ "$c" = rl ] && count=$RL_COUNT
        stage_begin "$c" corpus; rc=0
        node "${gen[@]}" "$c" --out "$CORPUS_DIR" --count "$count" 2> "$LOGS/gen-$c.log" || rc=$?
        stage_end "$c" corpus "$rc"; [ "$rc" = 0 ] || { tail -5 "$LOGS/gen-$c.log" >&2; die "corpus $c"; }
    fi
    [ -f "$CORPUS_DIR/$c/MANIFEST.json" ] || die "corpus $CORPUS_DIR/$c missing (stage corpus)"

    # ------------------------------------------------------------------ (c) official Lance, (d) DuckDB
    if has peers && [ "$PEERS_RUN" != never ]; then
        need_l=0; need_d=0
        for f in build-$c.json index-$c.json q-$c-noindex.json q-$c-noindex.keys.txt q-$c-btree.json; do [ -f "$PRES/$f" ] || need_l=1; done
        for f in duckdb-build-$c.json duckdb-q-$c.json; do [ -f "$PRES/$f" ] || need_d=1; done
        [ "$PEERS_RUN" = always ] && { need_l=1; need_d=1; }
        pstages=""; peers=""
        if [ "$need_l" = 1 ]; then peers=lance; pstages="build query index query-index"; [ "$need_d" = 1 ] && peers=lance,duckdb
        elif [ "$need_d" = 1 ]; then peers=duckdb; pstages="build query"; fi
        if [ -n "$peers" ]; then
            [ -d "$LANCE_ORACLE_DIR/node_modules/@lancedb/lancedb" ] || [ "$peers" = duckdb ] || die "official Lance missing at $LANCE_ORACLE_DIR (run scripts/bootstrap.sh)"
            stage_begin "$c" "peers($peers)"; rc=0
            CORPORA=$c PEERS=$peers STAGES=$pstages CORPUS_DIR=$CORPUS_DIR BENCH_DIR=$BENCH_DIR \
                SCALED_COUNT=$SCALED_COUNT RL_COUNT=$RL_COUNT bash "$TRAJ_DIR/run.sh" > "$LOGS/peers-$c.log" 2>&1 || rc=$?
            stage_end "$c" "peers($peers)" "$rc"
            [ "$rc" = 0 ] || { say "peers $c failed (exit $rc), last lines of $LOGS/peers-$c.log:"; tail -20 "$LOGS/peers-$c.log" >&2; }
        else say "$c peers: reusing $PRES/{build,index,q-*,duckdb-*}-$c.json"; fi
    fi
    keys=$PRES/q-$c-noindex.keys.txt
    [ -f "$keys" ] || say "$c: no $keys; the same sample is recomputed from index.jsonl"

    # ------------------------------------------------------------------ (a) Vortex
    if has vortex; then
        root=$ROOTS/vortex-$c
        stage_begin "$c" vortex-build; rc=0
        timed_build vortex "$c" "$root" "$VXB" build --from "$CORPUS_DIR/$c/docs" --to "$root" --source-id "$c" --json || rc=$?
        stage_end "$c" vortex-build "$rc"
        if [ "$rc" = 0 ]; then
            stage_begin "$c" vortex-get; rc=0
            node "$H/point.js" --kind vortex --bin "$VXB" --root "$root" --corpus "$CORPUS_DIR/$c" --lance-keys "$keys" \
                --n "$N" --verify "$VERIFY" --results "$RES/vortex-point-$c.json" --keys-out "$RES/vortex-$c.keys.txt" \
                > /dev/null 2> >(tee "$LOGS/vortex-point-$c.log" >&2) || rc=$?
            stage_end "$c" vortex-get "$rc"
        fi
    fi

    # ------------------------------------------------------------------ (b) Storyline on our Lance
    if has storyline; then
        root=$ROOTS/storyline-$c
        stage_begin "$c" storyline-build; rc=0
        timed_build storyline "$c" "$root" "$PCH" import --input-format atif --output-format storyline \
            --from "$CORPUS_DIR/$c/docs" --to "$root" --source-id "$c" --quiet || rc=$?
        stage_end "$c" storyline-build "$rc"
        if [ "$rc" = 0 ] && [ "$SL_N" -gt 0 ]; then
            stage_begin "$c" storyline-get; rc=0
            node "$H/point.js" --kind storyline --bin "$PCH" --root "$root" --corpus "$CORPUS_DIR/$c" --lance-keys "$keys" \
                --n "$SL_N" --verify "$SL_VERIFY" --results "$RES/storyline-point-$c.json" --keys-out "$RES/storyline-$c.keys.txt" \
                > /dev/null 2> >(tee "$LOGS/storyline-point-$c.log" >&2) || rc=$?
            stage_end "$c" storyline-get "$rc"
        fi
    fi
done

if has report; then
    # shellcheck disable=SC2086
    node "$H/report.js" "$RES" "$PRES" $CORPORA | tee "$RES/report.md"
fi
