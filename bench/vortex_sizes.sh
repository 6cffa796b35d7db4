#!/usr/bin/env bash
# Cluster size x frame size x zstd dictionary size sweep of the Vortex projection (RFC-0006 §7.2, §13.4; issue 18
# item 3), not part of make test. For each --cluster-bytes C, --frame-bytes F and --zstd-dict D it builds
# the corpus into a fresh root and measures, on the same machine in one run:
#   bytes        every file under the root (data, segment tables, directories, manifest, packs)
#   build_s      wall seconds of the build
#   warm p50/p95 bench-get over N keys (one process, lookup + get, compact JSON in memory)
#   cold p50     one `get ROOT --run-id KEY --compact` process per key, first COLD keys
#   lanes/open   mean bytes a cold get reads for lane segments / for everything else
#                (footer, segment tables, directory, manifest: get --stats "io" line)
#   scan_ms      a narrow scan, SELECT source, count(*) FROM steps GROUP BY 1 (median of 3)
# and prints one markdown table (also in $OUT/sizes.md, rows in $OUT/sizes.tsv).
#
#   bench/vortex_sizes.sh DOCS_DIR                     default grid
#   CLUSTERS="4M 16M" FRAMES="64K" bench/vortex_sizes.sh DOCS_DIR
#
# Environment (defaults): BUILD=build  OUT=/tmp/vortex-sizes  N=200 keys  COLD=20
#   CLUSTERS="4M 16M 32M"  FRAMES="32K 64K 256K 1M"  DICTS="0"  EXTRA="" (more build flags for every root)
set -euo pipefail
DOCS=${1:?usage: bench/vortex_sizes.sh DOCS_DIR}
BUILD=${BUILD:-build}
OUT=${OUT:-/tmp/vortex-sizes}
N=${N:-200}
COLD=${COLD:-20}
CLUSTERS=${CLUSTERS:-"4M 16M 32M"}
FRAMES=${FRAMES:-"32K 64K 256K 1M"}
DICTS=${DICTS:-0}
EXTRA=${EXTRA:-}
VX=$(cd "$(dirname "$BUILD/pchronicle-vortex")" && pwd)/pchronicle-vortex
[ -x "$VX" ] || { echo "vortex_sizes: $VX not built (make all)" >&2; exit 2; }
mkdir -p "$OUT"
TSV=$OUT/sizes.tsv
printf 'cluster\tframe\tdict\tbytes\tbuild_s\twarm_p50_ms\twarm_p95_ms\tcold_p50_ms\tlanes_bytes\topen_bytes\tscan_ms\tload\n' >"$TSV"
for C in $CLUSTERS; do
    for F in $FRAMES; do
      for D in $DICTS; do
        R=$OUT/root-$C-$F-$D
        rm -rf "$R"
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$VX" build --from "$DOCS" --to "$R" --cluster-bytes "$C" --frame-bytes "$F" --zstd-dict "$D" $EXTRA --quiet
        t1=$(date +%s.%N)
        bytes=$(du -sb "$R" | cut -f1)
        # keys: document roots whose run id names exactly one trajectory
        "$VX" sql "$R" "SELECT run_id FROM runs WHERE preorder = 0 GROUP BY run_id HAVING count(*) = 1 ORDER BY run_id LIMIT $N" \
            --format csv | tail -n +2 >"$OUT/keys.txt"
        "$VX" bench-get "$R" --keys "$OUT/keys.txt" --key-kind run --warmup 5 >"$OUT/warm.json"
        python3 - "$VX" "$R" "$OUT" "$COLD" "$C" "$F" "$D" "$bytes" "$t0" "$t1" >>"$TSV" <<'PY'
import json, os, re, statistics, subprocess, sys, time
vx, root, out, cold, c, f, d, nbytes, t0, t1 = sys.argv[1:11]
keys = open(os.path.join(out, "keys.txt")).read().split()[: int(cold)]
warm = json.load(open(os.path.join(out, "warm.json")))
ts, lanes, opened = [], [], []
for k in keys:
    t = time.perf_counter()
    p = subprocess.run([vx, "get", root, "--run-id", k, "--compact", "--stats"], capture_output=True, text=True)
    ts.append(time.perf_counter() - t)
    m = re.search(r"^stats: io (.*)$", p.stderr, re.M)
    if not m: sys.exit("no stats line: " + p.stderr[:300])
    io = dict((a, int(b.split("/")[1])) for a, b in re.findall(r"(\w+)=(\d+/\d+)", m.group(1)))
    lanes.append(io["lanes"])
    opened.append(io["current"] + io["manifest"] + io["directory"] + io["footer"] + io["segment_tables"])
scan = []
for _ in range(3):
    t = time.perf_counter()
    subprocess.run([vx, "sql", root, "SELECT source, count(*) FROM steps GROUP BY 1", "--format", "csv"], capture_output=True, check=True)
    scan.append(time.perf_counter() - t)
print("\t".join([c, f, d, nbytes, "%.2f" % (float(t1) - float(t0)), "%.2f" % warm["total"]["p50_ms"], "%.2f" % warm["total"]["p95_ms"],
                 "%.2f" % (statistics.median(ts) * 1e3), "%d" % statistics.mean(lanes), "%d" % statistics.mean(opened),
                 "%.1f" % (statistics.median(scan) * 1e3), "%.2f" % os.getloadavg()[0]]))
PY
        rm -rf "$R"
      done
    done
done
python3 - "$TSV" >"$OUT/sizes.md" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
h = rows[0]
print("| " + " | ".join(h) + " |")
print("|" + " --- |" * len(h))
for r in rows[1:]:
    r[3] = "%.2f MiB" % (int(r[3]) / 1048576)
    r[8] = "%.0f KB" % (int(r[8]) / 1000)
    r[9] = "%.0f KB" % (int(r[9]) / 1000)
    print("| " + " | ".join(r) + " |")
PY
cat "$OUT/sizes.md"
