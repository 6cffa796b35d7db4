#!/usr/bin/env bash
# Storyline projection benchmark (docs/storyline.md), ours beside official Lance in one run:
#  - import MB/s of ATIF JSON (pchronicle import --input-format atif; median of RUNS),
#  - bytes per table (our Lance files vs. the same rows written by official Lance),
#  - point-read latency of one whole trajectory: `pchronicle get` (a process, so it includes
#    start-up) vs. the official reader filtering runs/steps/tool_calls on trajectory_key
#    in-process (bench/storyline/lance_side.js; node start-up excluded).
# Knobs: INPUT (default ../shared/corpus/atif), RUNS (default 3), SCRATCH (default a temp dir).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CLI=$PWD/$BUILD/pchronicle
INPUT=${INPUT:-../shared/corpus/atif}
RUNS=${RUNS:-3}
NM=${PCH_CACHE:-$PWD/.cache}/lance-oracle/node_modules
die() { echo "bench/storyline: $*" >&2; exit 1; }
[ -x "$CLI" ] || die "$CLI is not built"
[ -d "$INPUT" ] || die "input $INPUT missing"
[ -d "$NM/@lancedb/lancedb" ] || die "official Lance missing at $NM (run scripts/bootstrap.sh)"
S=${SCRATCH:-$(mktemp -d "${TMPDIR:-/tmp}/pch-bench-storyline.XXXXXX")}
trap '[ -z "${SCRATCH:-}" ] && rm -rf "$S"' EXIT
bytes=$(find "$INPUT" -name '*.json' -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
best=""
for i in $(seq "$RUNS"); do
    rm -rf "$S/root"
    t0=$(date +%s.%N)
    "$CLI" import --input-format atif --output-format storyline --from "$INPUT" --to "$S/root" --quiet || die "import failed"
    t1=$(date +%s.%N)
    best="$best $(echo "$t1 - $t0" | bc -l)"
done
med=$(echo $best | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
printf 'input: %s (%d bytes of ATIF JSON)\n' "$INPUT" "$bytes"
printf 'import: median %.3f s over %d runs = %.1f MB/s\n' "$med" "$RUNS" "$(echo "$bytes / $med / 1000000" | bc -l)"
# the trajectory with the most steps
key=$("$CLI" sql "$S/root" "SELECT trajectory_key FROM steps GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1" --format csv | tail -1)
nsteps=$("$CLI" sql "$S/root" "SELECT count(*) FROM steps WHERE trajectory_key = '$key'" --format csv | tail -1)
lat=""
for i in $(seq 5); do
    t0=$(date +%s%N); "$CLI" get "$S/root" "$key" --compact >/dev/null || die "get failed"; t1=$(date +%s%N)
    lat="$lat $(( (t1 - t0) / 1000 ))"
done
ours_ms=$(echo $lat | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}')
lance=$(node bench/storyline/lance_side.js "$NM" "$S/root" "$S/lance" "$key" 5) || die "official Lance side failed"
python3 - "$S/root" "$lance" "$ours_ms" "$key" "$nsteps" <<'PY'
import json, os, sys
root, lance, ours_ms, key, nsteps = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
def du(p):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)
print("%-11s %12s %16s %7s" % ("table", "pchronicle", "official Lance", "ratio"))
tot_o = tot_l = 0
for t in ["runs", "steps", "tool_calls", "objects"]:
    o, l = du(os.path.join(root, t + ".lance")), lance["bytes"][t]
    tot_o += o; tot_l += l
    print("%-11s %12d %16d %7.2f" % (t, o, l, o / l if l else 0))
print("%-11s %12d %16d %7.2f" % ("total", tot_o, tot_l, tot_o / tot_l))
print("point read of %s (%s steps): pchronicle get %.2f ms (process, incl. start-up), "
      "official Lance %.2f ms (3 filtered queries in-process, %d rows)" % (key, nsteps, ours_ms, lance["point_read_ms"], lance["point_read_rows"]))
print("official Lance write of the same rows: %.0f ms" % lance["write_ms"])
PY
