#!/usr/bin/env bash
# Smoke run of `make bench-report` (bench/bench_report.sh with TINY=1; RFC-0006 §22): the six
# corpus kinds of §22.1 at a few documents each, every system on them (official Lance and
# DuckDB/Parquet through ../shared/bench/traj/run.sh, our Vortex and Storyline projections),
# the queries, the §22.3 matrix (pchronicle-vortex benchmark, locally and on S3), the operations
# after syncs and compaction (write amplification, a sweep of changed shares), point reads on S3 (the run's radosgw,
# PCH_RGW_ENV, or one the stage starts), the default-build check and the report with its
# plots — the same code as the
# full run, so the harness cannot rot. Then the report's arithmetic: the verdict is computed
# from the result files (a point read made slower than Lance turns its gate and the verdict),
# figures that are missing read "not measured" and never pass, and the generator is
# deterministic. PCH_VALGRIND_SKIP: it times official Lance and DuckDB; the CLI runs under
# valgrind in the other suites.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-bench-report.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0; fail=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $*"; }
has() { if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no line matching /$3/ in $2"; fi; }
for t in node python3 gnuplot; do command -v $t >/dev/null || { echo "FAIL: $t is required (scripts/bootstrap.sh installs it)"; exit 1; }; done
[ -d "${LANCE_ORACLE_DIR:-.cache/lance-oracle}/node_modules/@lancedb/lancedb" ] || { echo "FAIL: official Lance missing (scripts/bootstrap.sh)"; exit 1; }
[ -d ../shared/bench/traj ] || { echo "FAIL: ../shared/bench/traj (the peers) is required"; exit 1; }

KINDS="chat-heavy tool-heavy dedup-heavy rl multi-agent pathological"
W=$T/work; R=$T/report
if TINY=1 WORK=$W OUT=$R BUILD=$BUILD CORPORA="$KINDS" bench/bench_report.sh >"$T/run.log" 2>&1; then ok; else
    bad "bench_report.sh failed:"; tail -n 40 "$T/run.log" | sed 's/^/    /'; echo "$n checks, $fail failed"; exit 1
fi

# the report: every kind, its corpus figures, every system's columns, the computed verdict
M=$R/REPORT.md
has report "$M" '^## §22\.4 Go/No-Go, computed$'
has report "$M" '^\*\*Verdict: (Go|partial \(training/analytics only\)|No-Go)\*\* — '
for c in $KINDS; do
    has "corpus $c" "$M" "^\| $c \| [1-9][0-9]* \| [1-9][0-9]* \| [1-9][0-9]* \| "
    has "bytes $c" "$M" "^\| $c \| bytes MiB \(× JSON\) \| [0-9.]+ \([0-9.]+\) \| [0-9.]+ \([0-9.]+\) \| [0-9.]+ \([0-9.]+\) \| [0-9.]+ \([0-9.]+\) \|$"
    has "warm point $c" "$M" "^\| $c \| point read warm p50 / p95 / p99 ms \| [0-9.]+ / [0-9.]+ / [0-9.]+ \| — \| [0-9.]+ / "
    has "scan $c" "$M" "^\| $c \| narrow_source warm p50 ms \(process\) \| [0-9.]+ \([0-9.]+\) \| — \| [0-9.]+ \([0-9.]+\) \| [0-9.]+ "
done
# the round trips of the run are real: every system's reads equal the documents
has roundtrip "$M" '^\| every trajectory read back equals its document.*\| \*\*pass\*\* \|$'
has default-build "$M" '^\| the default build .*\| 0 Vortex symbols in pchronicle, libpchronicle.so \| .*\*\*pass\*\* \|$'
# the operations gate, measured on every kind (bench/vortex_sync.sh: 2 syncs, compact, vacuum)
has ops "$M" '^\| after syncs and compaction: .*\| scans [0-9.]+×, p95 [0-9.]+×, compaction [0-9.]+× build, bytes [0-9.]+× \(2 syncs\) \((\*\*pass\*\*|\*\*fail\*\*)\) \|'
for c in $KINDS; do [ -s "$W/vortex/results/ops-$c.json" ] && ok || bad "no ops result for $c"; done
# the §22.3 matrix of `pchronicle-vortex benchmark` on our two projections, every kind
for c in $KINDS; do
    has "matrix $c" "$M" "^\| $c \| point_full: .*\| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9]+ / [0-9]+ \| [0-9.]+ / [0-9.]+ \|$"
    has "matrix $c" "$M" "^\| $c \| content_on: .*\| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ \| "
done
# the build's encode time and write amplification (`build --json`), every kind
for c in $KINDS; do
    has "encode $c" "$M" "^\| $c \| build encode s of CPU s; bytes written \(write amplification: ÷ ATIF bytes\) \| [0-9.]+ of [0-9.]+ s \([0-9]+ %\); [0-9.]+ MiB \([0-9.]+\) \|"
done
# write amplification of build, syncs and compaction, over the root's life, and the sweep of
# changed shares (one sync of 5 % and one of 20 % from the same build), every kind
has ops-header "$M" '^\| corpus \| write amplification: build / syncs / compaction \| .* \| sync of 5 %: time, bytes written \(% of build\) \| sync of 20 %: '
for c in $KINDS; do
    has "ops-wa $c" "$M" "^\| $c \| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9.]+× \| [0-9]+ / [0-9]+, [0-9.]+, [0-9.]+, [0-9.]+ \| [0-9.]+ %, [0-9.]+ % \| [0-9.]+ %, [0-9.]+ % \| [0-9.]+ %, [0-9.]+ % \|$"
done
# the §22.3 matrix on S3: both our projections on the radosgw, GETs, ranges and bytes of each
for c in $KINDS; do
    has "s3 matrix $c" "$M" "^\| $c \| point_full \| [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ / [0-9.]+ \|$"
    has "s3 matrix $c" "$M" "^\| $c \| scan_source \| .* \| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ / [0-9.]+ \|$"
done
# point reads on S3 (the run's radosgw, PCH_RGW_ENV, or one the stage starts): ours and official
# Lance's GETs, the S3 gate computed on every kind
for c in $KINDS; do
    has "s3 $c" "$M" "^\| $c \| S3 point read, a cold process each: GETs mean / max, p50 / p95 \| [0-9.]+ / [0-9]+ GETs, [0-9.]+ / [0-9.]+ ms \| — \| [0-9.]+ / [0-9]+ GETs, "
done
has s3-gate "$M" '^\| S3 full-trajectory p95 .*\| GETs [0-9.]+ / [0-9.]+ = [0-9.]+×, p95 [0-9.]+ / [0-9.]+ ms \([0-9.]+× better\) \((\*\*pass\*\*|\*\*fail\*\*)\) \|'
has sync-goal "$M" '^\| rl \| sync ≤ 5 % of a full build at 1 % changed \(the costliest sync: time, bytes written\) \| [0-9.]+ %, [0-9.]+ % \([0-9.]+ % of the documents changed\) \| '
has s3-goal "$M" '^\| rl \| ≤ 3 GETs per S3 point read after open \(cold, worst key\) \| [0-9]+ \('
has rl "$M" '^\| rl \| rl \(our process\) \| [0-9.]+ s, [0-9.]+ M tokens/s \| — \| [0-9.]+ ms warm \| [0-9.]+ ms warm \|$'
python3 - "$R/verdict.json" "$M" >"$T/v.out" 2>&1 <<'PY' && ok || { bad "verdict.json disagrees with REPORT.md"; cat "$T/v.out"; }
import json, re, sys
v = json.load(open(sys.argv[1]))
m = re.search(r"^\*\*Verdict: (.*?)\*\* — ", open(sys.argv[2]).read(), re.M)
assert m and m.group(1) == v["verdict"], (m and m.group(1), v["verdict"])
assert {g["id"] for g in v["gates"]} >= {"roundtrip", "default-build", "small-objects", "point-p95", "narrow-scan", "bytes-vs-lance", "s3", "rl-3x", "build-2x", "ops"}
PY
for p in bytes point_warm point_process scans build training s3_gets s3_query_gets sync_cost; do
    if [ "$(head -c 8 "$R/plots/$p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && grep -q '<svg' "$R/plots/$p.svg"; then ok; else bad "plot $p: no PNG or SVG"; fi
done

# the verdict is computed: make our warm point p95 in one corpus 1.3x Lance's -> its gate fails,
# and the report says so (and the verdict is not Go)
V=$W/vortex/results; P=$W/peers/results
cp -r "$V" "$T/vx2"
python3 - "$T/vx2/vortex-point-chat-heavy.json" "$P/q-chat-heavy-btree.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); lance = json.load(open(sys.argv[2]))["queries"]["point"]["warm"]["p95_ms"]
d["warm"]["total"]["p95_ms"] = lance * 1.3
json.dump(d, open(sys.argv[1], "w"))
PY
node bench/report/report.js --vx "$T/vx2" --peers "$P" --corpus-dir "$W/corpus" --out "$T/r2" $KINDS >"$T/r2.out" 2>&1 || bad "report.js on edited results"
has slow-point "$T/r2/REPORT.md" '^\| point trajectory read p95 .*= 1\.30× \(\*\*fail\*\*\).*\| \*\*fail\*\* \|$'
has slow-verdict "$T/r2/REPORT.md" '^\*\*Verdict: (partial|No-Go)'
# missing figures are not measured, and a gate on them does not pass
rm "$T/vx2/default-build.json" "$T/vx2"/vortex-point-*.json
node bench/report/report.js --vx "$T/vx2" --peers "$P" --corpus-dir "$W/corpus" --out "$T/r3" $KINDS >"$T/r3.out" 2>&1 || bad "report.js on missing results"
has missing "$T/r3/REPORT.md" '^\| the default build .*\| not measured \|$'
has missing "$T/r3/REPORT.md" '^\| point trajectory read p95 .*\| not measured \|$'
has missing "$T/r3/REPORT.md" '^\*\*Verdict: No-Go\*\* — not passed: roundtrip, default-build'
# usage errors
node bench/report/report.js >/dev/null 2>&1; [ $? = 2 ] && ok || bad "report.js without arguments: not exit 2"
node bench/corpus/gen-kinds.js no-such-kind --out "$T/x" >/dev/null 2>&1; [ $? = 2 ] && ok || bad "gen-kinds unknown kind: not exit 2"
node bench/corpus/gen-kinds.js chat-heavy --out "$T/x" --count -1 >/dev/null 2>&1; [ $? = 2 ] && ok || bad "gen-kinds --count -1: not exit 2"

# the generator is deterministic: the same kind again gives the same fingerprint; another seed does not
fp() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["fingerprint_sha256"])' "$1/multi-agent/MANIFEST.json"; }
node bench/corpus/gen-kinds.js multi-agent --out "$T/g1" --count 12 --tiny 2>/dev/null
node bench/corpus/gen-kinds.js multi-agent --out "$T/g2" --count 12 --tiny --seed other 2>/dev/null
[ "$(fp "$T/g1")" = "$(fp "$W/corpus")" ] && ok || bad "multi-agent regenerated: another fingerprint"
[ "$(fp "$T/g2")" != "$(fp "$W/corpus")" ] && ok || bad "multi-agent with another seed: the same fingerprint"

echo "$n checks, $fail failed"
[ "$fail" = 0 ]
