#!/usr/bin/env bash
# GETs and bytes of a point read from a Vortex projection on S3 (issue 20 "Performance";
# RFC-0006 §20.2, §22.2; docs/object-storage.md "Point reads on S3").
#
#   bench/s3_point_reads.sh CORPUS_DIR [KEYS]
#
# Builds CORPUS_DIR (ATIF documents) to a fresh prefix of the S3 server the AWS_* variables
# name (tests/s3/rgw.sh starts one: `. DIR/env`), then runs `pchronicle-vortex get ROOT
# --run-id R --trajectory-key K --compact --stats` as one process per key for KEYS keys (default 20)
# spread evenly over the corpus (the exact key: --run-id R --trajectory-key K, which names one
# directory shard), three ways:
#   cold      no tail cache (PCH_OBJECT_CACHE=off): every object read from the server
#   first     an empty tail cache per key: what a first reader pays (and fills)
#   warm      the cache the "first" pass filled for that key: a second process on one machine
# and prints, per way, GETs per process (mean / max), bytes requested and bytes the reader
# used (means), and tail-cache hits. A process's GETs include CURRENT and the manifest (2);
# the issue's goal is at most 3 GETs after those (5 a process) cold and at most 2 warm.
# With PEER=lance (and the oracle of scripts/bootstrap.sh installed), the same corpus is also
# imported as a Storyline root to the same server and official Lance (npm @lancedb/lancedb, the
# oracle) reads each key's rows of runs, steps and tool_calls (`dump TABLE --where "run_id = R
# AND trajectory_key = K"`, a fresh process per table, as a cold reader) through
# tests/s3/faultproxy.py, which counts its GETs: first as our importer wrote the tables (no
# scalar index: Lance scans the key columns), then after `oracle.js index` compacted them and
# built BTree indexes on run_id and trajectory_key (its best layout for this read).
# MATRIX_OUT=FILE also runs `pchronicle-vortex benchmark` (the §22.3 matrix, MATRIX_ARGS, default
# "--keys 20 --repeat 3 --cold 5") on the S3 root, with --storyline on the same corpus imported
# as a Storyline root to the same server, every process without the tail cache, into FILE.
# Prints the load first. Removes the prefixes at the end. JSON_OUT=FILE also writes the figures
# as JSON (make bench-report's S3 gate, bench/report/report.js): per way and peer pass, GETs
# per process (mean, max), process wall ms (p50, p95), bytes requested and used (means).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:?usage: bench/s3_point_reads.sh CORPUS_DIR [KEYS]}
KEYS=${2:-20}
BUILD=${PCH_BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
VX=$BUILD/pchronicle-vortex
P=$BUILD/pchronicle
: "${AWS_ENDPOINT_URL:?set the S3 variables (. DIR/env of tests/s3/rgw.sh)}"
BUCKET=${PCH_S3_BUCKET:-pch-test}
[ -x "$VX" ] || { echo "build first: make" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-s3pr.XXXXXX")
R=s3://$BUCKET/bench-point-$$
cleanup() {
    "$P" objects ls "$R/" 2>/dev/null | while read -r k; do "$P" objects rm "s3://$BUCKET/$k" >/dev/null 2>&1; done
    rm -rf "$T"
}
trap cleanup EXIT
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# corpus $CORPUS: $(find "$CORPUS" -name '*.json' | wc -l) documents, $(du -sh "$CORPUS" | cut -f1)"
t0=$(date +%s.%N)
PCH_OBJECT_CACHE=off "$VX" build --from "$CORPUS" --to "$R" --quiet
echo "# build --to $R: $(python3 -c "print('%.2f' % ($(date +%s.%N) - $t0))") s"
PCH_OBJECT_CACHE=off "$VX" sql "$R" "select run_id, trajectory_key from runs order by run_id, trajectory_key" --format jsonl > "$T/all"
n=$(wc -l < "$T/all")
python3 - "$T/all" "$KEYS" > "$T/keys" <<'PY'
import sys
keys = open(sys.argv[1]).read().split("\n")[:-1]
k = min(int(sys.argv[2]), len(keys))
import json
for i in range(k):
    r = json.loads(keys[i * len(keys) // k])
    print("%s\t%s" % (r["run_id"], r["trajectory_key"]))
PY
echo "# $n trajectories, $(wc -l < "$T/keys") keys"
ms_now() { date +%s%N; }
run_way() {   # WAY: one line per key: gets bytes_requested bytes_useful cache_hits wall_ms
    local way=$1 i=0 t0 t1
    while IFS=$'\t' read -r run key; do
        i=$((i + 1))
        case $way in
            cold) c=off ;;
            first) c=$T/cache-$i; rm -rf "$c" ;;
            warm) c=$T/cache-$i ;;
        esac
        t0=$(ms_now)
        PCH_OBJECT_CACHE=$c "$VX" get "$R" --run-id "$run" --trajectory-key "$key" --compact --stats 2>"$T/err" >/dev/null
        t1=$(ms_now)
        grep -o 'stats: s3 .*' "$T/err" | sed 's/[a-z_]*=//g; s/stats: s3 //' |
            awk -v ms="$(( (t1 - t0) / 1000 ))" '{print $1, $3, $4, $7, ms / 1000}'
    done < "$T/keys"
}
# json: the per-key files of every way and peer pass into $JSON_OUT (when set)
json() {
    [ -n "${JSON_OUT:-}" ] || return 0
    python3 - "$T" "$JSON_OUT" "$n" "$CORPUS" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import glob, json, os, sys
T, out, n, corpus, load = sys.argv[1:6]
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else None
res = {"trajectories": int(n), "corpus": corpus, "load": load, "ours": {}, "lance": {}}
for f in sorted(glob.glob(os.path.join(T, "pass-*.txt"))):
    who, way = os.path.basename(f)[5:-4].split("-", 1)
    rows = [list(map(float, l.split())) for l in open(f) if l.strip()]
    if not rows: continue
    g = [r[0] for r in rows]; ms = [r[-1] for r in rows]
    d = {"keys": len(rows), "gets_mean": sum(g) / len(g), "gets_max": max(g), "ms_p50": pct(ms, 50), "ms_p95": pct(ms, 95)}
    if who == "ours":
        d.update(bytes_requested_mean=sum(r[1] for r in rows) / len(rows), bytes_used_mean=sum(r[2] for r in rows) / len(rows),
                 cache_hits_mean=sum(r[3] for r in rows) / len(rows))
    res[who][way] = d
json.dump(res, open(out, "w"), indent=1)
PY
}
printf '| way | GETs per process (mean / max) | bytes requested (mean) | bytes used (mean) | tail-cache hits (mean) |\n'
printf '| --- | --- | --- | --- | --- |\n'
for way in cold first warm; do
    run_way $way > "$T/pass-ours-$way.txt"
    awk -v w=$way '{g+=$1; if ($1>m) m=$1; b+=$2; u+=$3; h+=$4; n++}
        END {printf "| %s | %.1f / %d | %.0f | %.0f | %.1f |\n", w, g/n, m, b/n, u/n, h/n}' "$T/pass-ours-$way.txt"
done
json

[ "${PEER:-}" = lance ] || [ -n "${MATRIX_OUT:-}" ] || exit 0
SL=s3://$BUCKET/bench-point-sl-$$
cleanup_sl() {
    [ -n "${px:-}" ] && kill "$px" 2>/dev/null
    "$P" objects ls "$SL/" 2>/dev/null | while read -r k; do "$P" objects rm "s3://$BUCKET/$k" >/dev/null 2>&1; done
    cleanup
}
trap cleanup_sl EXIT
"$P" import --from "$CORPUS" --to "$SL" --input-format atif --output-format storyline --quiet 2>/dev/null ||
    { echo "storyline import to $SL failed" >&2; exit 1; }
# the §22.3 matrix on S3 (RFC-0006 §22.2: local and object storage separately): our projection
# and our Storyline tables of the same documents on the same server, before official Lance
# compacts and indexes those tables below; every process cold (no tail cache)
if [ -n "${MATRIX_OUT:-}" ]; then
    # shellcheck disable=SC2086
    PCH_OBJECT_CACHE=off "$VX" benchmark "$R" --storyline "$SL" ${MATRIX_ARGS:---keys 20 --repeat 3 --cold 5} \
        --json "$MATRIX_OUT" --quiet > "$T/matrix.txt" 2> "$T/matrix.err" ||
        { echo "benchmark on S3 failed: $(tail -3 "$T/matrix.err")" >&2; exit 1; }
    echo; echo "# the §22.3 matrix on S3 (pchronicle-vortex benchmark $R --storyline $SL)"; cat "$T/matrix.txt"
fi
[ "${PEER:-}" = lance ] || exit 0
ORACLE=${LANCE_ORACLE_DIR:-${PCH_CACHE:-$PWD/.cache}/lance-oracle}/oracle.js
[ -f "$ORACLE" ] || { echo "PEER=lance: the oracle is missing at $ORACLE (scripts/bootstrap.sh)" >&2; exit 1; }
: > "$T/sched"
python3 tests/s3/faultproxy.py "${AWS_ENDPOINT_URL##*:}" "$T/px.port" "$T/sched" "$T/px.log" & px=$!
for _ in $(seq 1 100); do [ -s "$T/px.port" ] && break; sleep 0.05; done
PX=http://127.0.0.1:$(cat "$T/px.port")
peer_pass() {   # TAG LABEL: each key's rows of the three tables, a cold oracle process per table
    local t0 t1
    while IFS=$'\t' read -r run key; do
        : > "$T/px.log"
        t0=$(ms_now)
        for t in runs steps tool_calls; do
            AWS_ENDPOINT_URL=$PX node "$ORACLE" dump "$SL/$t.lance" --where "run_id = '$run' AND trajectory_key = '$key'" > "$T/o.out" 2>&1 ||
                { echo "oracle dump of $t failed: $(tail -2 "$T/o.out")" >&2; exit 1; }
        done
        t1=$(ms_now)
        echo "$(grep -c '^GET ' "$T/px.log") $(( (t1 - t0) / 1000 ))" | awk '{print $1, $2 / 1000}'
    done < "$T/keys" > "$T/pass-lance-$1.txt"
    awk -v l="$2" '{g+=$1; if ($1>m) m=$1; n++} END {printf "| %s | %.1f / %d | | | |\n", l, g/n, m}' "$T/pass-lance-$1.txt"
}
peer_pass as_written "official Lance, cold, 3 tables, as written"
# its best layout: fragments compacted, old versions cleaned up, BTree on the key columns
for t in runs steps tool_calls; do
    node "$ORACLE" index "$SL/$t.lance" run_id trajectory_key 2>"$T/idx.err" || { echo "oracle index of $t failed: $(tail -2 "$T/idx.err")" >&2; exit 1; }
done
peer_pass compacted_btree "official Lance, cold, 3 tables, compacted + BTree(run_id, trajectory_key)"
json
