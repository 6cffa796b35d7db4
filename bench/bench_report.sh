#!/usr/bin/env bash
# make bench-report: the RFC-0006 §22 benchmark on the six corpus kinds of §22.1, our two
# projections beside official Lance and DuckDB/Parquet in one run, and a report whose §22.4
# verdict is computed from the numbers (bench/report/report.js). Not part of make test; its
# smoke run (tests/cli/bench_report.sh, TINY=1) is.
#
#   make bench-report                                  the full run (corpora at their default sizes)
#   CORPORA="chat-heavy rl" bench/bench_report.sh      some kinds
#   TINY=1 OUT=/tmp/r bench/bench_report.sh            the smoke run: a few documents a kind
#
# Stages, each on every corpus:
#   1. corpora   bench/corpus/gen-kinds.js KIND (rl: the shared generator's) into $CORPUS_DIR
#   2. systems   bench/vortex_traj.sh STAGES="peers vortex storyline": official Lance (optimize,
#                BTree/bitmap indexes) and DuckDB/Parquet through ../shared/bench/traj/run.sh;
#                our build, cold (a process a read) and warm (bench-get) point reads and round trips
#   3. queries   bench/vortex_queries.py: narrow scans per process and warm (bench-sql), RL, SFT
#      matrix    pchronicle-vortex benchmark: the §22.3 matrix on our two projections
#   4. ops       bench/vortex_sync.sh: syncs, compaction, vacuum against a fresh build
#   5. s3        bench/s3_point_reads.sh: point reads on a radosgw, ours and official Lance's GETs,
#                and the §22.3 matrix there (benchmark on both our projections, MATRIX_OUT)
#   6. checks    the default build holds no Vortex code (nm of pchronicle and libpchronicle.so)
#   7. report    bench/report/report.js -> $OUT/REPORT.md, verdict.json, plots/*.{dat,gp} ->
#                gnuplot -> plots/*.png, plots/*.svg
# Environment (defaults): BUILD=build  OUT=bench/report  WORK=/tmp/pch-bench-report (corpus/,
#   peers/, vortex/)  CORPORA="chat-heavy tool-heavy dedup-heavy rl multi-agent pathological"
#   TINY=0 (1: gen-kinds --tiny --count $TINY_COUNT, fewer keys and repetitions)  TINY_COUNT=12
#   N=200 point-read keys, RUNS=5 query repetitions (TINY: 10 and 2)
#   STAGES="corpora systems queries matrix ops s3 report" (the default-build check runs with report)
#   ops: bench/vortex_sync.sh on each corpus, OPS_ROUNDS=8 syncs of OPS_PCT=1 % of the documents,
#   then compact and vacuum (TINY: 2 rounds of 10 %): the operations gate of §22.4; and one sync
#   of each OPS_SWEEP="5 20" % changed from the same build (sync cost against the changed share)
#   s3: bench/s3_point_reads.sh on each corpus with PEER=lance, S3_KEYS=20 keys (TINY: 2), on the
#   radosgw PCH_RGW_ENV names (make test's) or one started for the stage (tests/s3/rgw.sh)
#   SFT_FORMATS="messages count" SFT_TIMEOUT=120 (s; the messages lines of a long trajectory
#   grow with the square of its steps: a read past it is reported as stopped)
#   TRAJ_DIR=../shared/bench/traj  LANCE_ORACLE_DIR=.cache/lance-oracle (scripts/bootstrap.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
OUT=${OUT:-$REPO/bench/report}
case $OUT in /*) ;; *) OUT=$REPO/$OUT ;; esac
WORK=${WORK:-/tmp/pch-bench-report}
CORPORA=${CORPORA:-"chat-heavy tool-heavy dedup-heavy rl multi-agent pathological"}
TINY=${TINY:-0}; TINY_COUNT=${TINY_COUNT:-12}
TRAJ_DIR=${TRAJ_DIR:-$REPO/../shared/bench/traj}
export TRAJ_DIR=$(cd "$TRAJ_DIR" && pwd)
export LANCE_ORACLE_DIR=${LANCE_ORACLE_DIR:-$REPO/.cache/lance-oracle}
export CORPUS_DIR=$WORK/corpus BENCH_DIR=$WORK/peers VX_DIR=$WORK/vortex BUILD
if [ "$TINY" = 1 ]; then
    export N=${N:-10} VERIFY=${VERIFY:-5} M=${M:-2} COLD=${COLD:-2} COLD_POINT=${COLD_POINT:-3} RUNS=${RUNS:-2} RL_COUNT=$TINY_COUNT
else
    export N=${N:-200} VERIFY=${VERIFY:-20} RUNS=${RUNS:-5}
fi
export SFT_FORMATS=${SFT_FORMATS:-"messages count"} SFT_TIMEOUT=${SFT_TIMEOUT:-120}
STAGES=${STAGES:-"corpora systems queries matrix ops s3 report"}
has() { [[ " $STAGES " == *" $1 "* ]]; }
say() { printf '[bench_report %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
command -v node >/dev/null || die "node missing (scripts/bootstrap.sh)"
command -v gnuplot >/dev/null || die "gnuplot missing (scripts/bootstrap.sh installs gnuplot-nox)"
[ -x "$BUILD/pchronicle-vortex" ] && [ -x "$BUILD/pchronicle" ] || die "build $BUILD first (make all)"
mkdir -p "$CORPUS_DIR" "$VX_DIR/results" "$OUT/plots"
# every stage's command, with the commit that ran it, kept across invocations (STAGES)
CMDS=$VX_DIR/results/commands.txt
has corpora && : > "$CMDS"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
git diff --quiet HEAD -- src include tools bench ':!bench/report' 2>/dev/null || commit="$commit (with uncommitted changes)"
cmd() { printf '%s   # %s, commit %s\n' "$1" "$(date -u +%H:%M:%SZ)" "$commit" >> "$CMDS"; }
t_start=$(date -u +%Y-%m-%dT%H:%M:%SZ); load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# 1. corpora
for c in $(has corpora && echo "$CORPORA"); do
    a=(node bench/corpus/gen-kinds.js "$c" --out "$CORPUS_DIR")
    [ "$TINY" = 1 ] && a+=(--count "$TINY_COUNT" --tiny)
    # the shared rl generator, a dozen documents: a seed whose documents include a step with
    # is_copied_context (the official-Lance peer's Arrow writer fails on an all-null boolean batch)
    [ "$TINY" = 1 ] && [ "$c" = rl ] && a=(node bench/corpus/gen-kinds.js rl --out "$CORPUS_DIR" --count "$TINY_COUNT" --seed rl-smoke-7)
    say "corpus $c"
    "${a[@]}" 2> "$VX_DIR/results/gen-$c.log" || { tail -5 "$VX_DIR/results/gen-$c.log" >&2; die "corpus $c"; }
    cmd "${a[*]}"
done

# 2. the systems, side by side (the peers, then ours)
if has systems; then
    say "systems: $CORPORA"
    CORPORA="$CORPORA" STAGES="peers vortex storyline report" bench/vortex_traj.sh
    cmd "CORPORA=\"$CORPORA\" STAGES=\"peers vortex storyline report\" bench/vortex_traj.sh"
fi

# 3. scans and training reads
if has queries; then
    say "queries"
    CORPORA="$CORPORA" JSON_OUT="$VX_DIR/results/queries.json" python3 bench/vortex_queries.py > "$VX_DIR/results/queries.md"
    cmd "CORPORA=\"$CORPORA\" SFT_FORMATS=\"$SFT_FORMATS\" SFT_TIMEOUT=$SFT_TIMEOUT JSON_OUT=\$VX_DIR/results/queries.json bench/vortex_queries.py"
fi
# 3b. the §22.3 matrix of `pchronicle-vortex benchmark` on our two projections of each kind
if has matrix; then
    if [ "$TINY" = 1 ]; then bm=(--keys 3 --repeat 2 --cold 2); else bm=(--keys 20 --repeat 3 --cold 5); fi
    for c in $CORPORA; do
        say "matrix $c"
        "$BUILD/pchronicle-vortex" benchmark "$VX_DIR/roots/vortex-$c" --storyline "$VX_DIR/roots/storyline-$c" "${bm[@]}" \
            --json "$VX_DIR/results/benchmark-$c.json" --quiet > "$VX_DIR/results/benchmark-$c.txt" 2> "$VX_DIR/results/benchmark-$c.log" ||
            { tail -5 "$VX_DIR/results/benchmark-$c.log" >&2; die "benchmark $c"; }
    done
    cmd "pchronicle-vortex benchmark \$VX_DIR/roots/vortex-<kind> --storyline \$VX_DIR/roots/storyline-<kind> ${bm[*]} --json \$VX_DIR/results/benchmark-<kind>.json   (each kind)"
fi
# 4. operations after syncs, compaction and vacuum (the scan amplification, footprint and
# recovery budgets of bench/vortex_sync.sh)
if has ops; then
    if [ "$TINY" = 1 ]; then rounds=${OPS_ROUNDS:-2}; pct=${OPS_PCT:-10}; rep=3; else rounds=${OPS_ROUNDS:-8}; pct=${OPS_PCT:-1}; rep=20; fi
    sweep=${OPS_SWEEP-"5 20"}
    for c in $CORPORA; do
        say "ops $c"
        CORPUS="$CORPUS_DIR/$c/docs" OUT="$WORK/ops/$c" ROUNDS=$rounds PCT=$pct REPEAT=$rep SWEEP="$sweep" \
            bench/vortex_sync.sh > "$VX_DIR/results/ops-$c.md" 2> "$VX_DIR/results/ops-$c.log" ||
            { tail -5 "$VX_DIR/results/ops-$c.log" >&2; die "ops $c"; }
        cp "$WORK/ops/$c/results.json" "$VX_DIR/results/ops-$c.json"
    done
    cmd "CORPUS=\$CORPUS_DIR/<kind>/docs ROUNDS=$rounds PCT=$pct REPEAT=$rep SWEEP=\"$sweep\" bench/vortex_sync.sh   (each kind)"
fi
# 5. point reads on S3 (§22.2 local and object storage separately): a radosgw (the run's of make
# test when PCH_RGW_ENV names it, else one of our own, tests/s3/rgw.sh, stopped at the end);
# our cold/first/warm processes and official Lance's, GETs counted (bench/s3_point_reads.sh)
if has s3; then
    own_rgw=""
    if [ -z "${PCH_RGW_ENV:-}" ]; then
        own_rgw=$WORK/rgw
        say "s3: starting a radosgw (tests/s3/rgw.sh)"
        tests/s3/rgw.sh start "$own_rgw" > "$VX_DIR/results/rgw.log" 2>&1 || { tail -20 "$VX_DIR/results/rgw.log" >&2; die "radosgw did not start"; }
        PCH_RGW_ENV=$own_rgw/env
        trap 'tests/s3/rgw.sh stop "$own_rgw" >/dev/null 2>&1' EXIT
    fi
    s3_keys=${S3_KEYS:-$([ "$TINY" = 1 ] && echo 2 || echo 20)}
    if [ "$TINY" = 1 ]; then s3m="--keys 2 --repeat 1 --cold 2"; else s3m="--keys 20 --repeat 3 --cold 5"; fi
    for c in $CORPORA; do
        say "s3 $c"
        (. "$PCH_RGW_ENV" && PCH_BUILD=$BUILD JSON_OUT="$VX_DIR/results/s3-$c.json" PEER=lance \
            MATRIX_OUT="$VX_DIR/results/s3-matrix-$c.json" MATRIX_ARGS="$s3m" \
            bench/s3_point_reads.sh "$CORPUS_DIR/$c/docs" "$s3_keys") > "$VX_DIR/results/s3-$c.md" 2> "$VX_DIR/results/s3-$c.log" ||
            { tail -5 "$VX_DIR/results/s3-$c.log" >&2; die "s3 $c"; }
    done
    cmd "PEER=lance JSON_OUT=\$VX_DIR/results/s3-<kind>.json MATRIX_OUT=\$VX_DIR/results/s3-matrix-<kind>.json MATRIX_ARGS=\"$s3m\" bench/s3_point_reads.sh \$CORPUS_DIR/<kind>/docs $s3_keys   (each kind; radosgw of tests/s3/rgw.sh)"
    if [ -n "$own_rgw" ]; then tests/s3/rgw.sh stop "$own_rgw" >/dev/null 2>&1; trap - EXIT; fi
fi
has report || exit 0

# 6. the default build holds no Vortex code (RFC-0006 §22.4): no pch_vx symbol in the default
# CLI or library, and neither needs the Vortex library
syms=0; checked=()
for b in "$BUILD/pchronicle" "$BUILD/libpchronicle.so"; do
    [ -f "$b" ] || die "$b missing"
    n=$( (nm -D --defined-only "$b" 2>/dev/null; nm --defined-only "$b" 2>/dev/null) | grep -c -E ' pch_vx|pch_vortex' || true)
    syms=$((syms + n)); checked+=("\"$(basename "$b")\"")
    if command -v ldd >/dev/null && ldd "$b" 2>/dev/null | grep -q vortex; then syms=$((syms + 1)); fi
done
printf '{"vortex_symbols": %d, "checked": [%s], "rule": "nm symbols matching pch_vx or pch_vortex, and ldd naming a vortex library"}\n' \
    "$syms" "$(IFS=,; echo "${checked[*]}")" > "$VX_DIR/results/default-build.json"

# 7. the report
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
node - "$VX_DIR/results/environment.json" "$commit" "$t_start" "$(nproc) cores, $cpu, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)" \
    "load $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end" "$(node --version)" "$CMDS" <<'JS'
const fs = require("fs");
const [file, commit, date, machine, load, nodev, cmds] = process.argv.slice(2);
const commands = fs.existsSync(cmds) ? fs.readFileSync(cmds, "utf8").split("\n").filter(Boolean) : [];
fs.writeFileSync(file, JSON.stringify({ commit, date, machine: `${machine}; ${load}`,
  versions: `node ${nodev}; official Lance from lancedb 0.31.0 (Lance 8.0.0); DuckDB 1.5.6 (@duckdb/node-api 1.5.6-r.1)`,
  commands: ["make bench-report   # = bench/bench_report.sh, which ran:", ...commands] }, null, 1) + "\n");
JS
say "report -> $OUT"
node bench/report/report.js --vx "$VX_DIR/results" --peers "$BENCH_DIR/results" --corpus-dir "$CORPUS_DIR" --out "$OUT" $CORPORA
(cd "$OUT/plots" && for g in *.gp; do gnuplot "$g" 2> "${g%.gp}.log" || { cat "${g%.gp}.log" >&2; die "gnuplot $g"; }; rm -f "${g%.gp}.log"; done)
say "done: $OUT/REPORT.md ($(grep -m1 '^\*\*Verdict' "$OUT/REPORT.md"))"
