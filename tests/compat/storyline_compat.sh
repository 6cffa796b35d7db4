#!/usr/bin/env bash
# Official Lance reads the Storyline tables (docs/storyline.md §6; ARCHITECTURE §1 "readable
# by the official tools"): tests/data/atif is imported (small object threshold, so objects
# holds many rows), then the official Lance oracle (npm @lancedb/lancedb, installed by
# scripts/bootstrap.sh) dumps runs, steps, tool_calls and objects. Checks: every row equals
# `pchronicle lance dump` of the same table (lance_reader_cmp.py), and row counts plus
# sampled values (tool call ids/names, step ids, object ids = BLAKE3 of the bytes) equal
# what python computes from the input JSON. Fails loudly, never skips.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${PCH_BUILD:-build}
CLI=${PCH_CLI:-$PWD/$BUILD/pchronicle}
ORACLE=${PCH_CACHE:-$PWD/.cache}/lance-oracle/oracle.js
die() { echo "storyline_compat: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node is not installed (run scripts/bootstrap.sh)"
command -v python3 >/dev/null || die "python3 is not installed"
[ -f "$ORACLE" ] || die "the Lance oracle is missing at $ORACLE (run scripts/bootstrap.sh)"
[ -x "$CLI" ] || die "$CLI is not built"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-storyline-compat.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
"$CLI" import --input-format atif --output-format storyline --from tests/data/atif \
    --to "$tmp/root" --object-threshold 64 --quiet || die "import failed"
bad=0
for t in runs steps tool_calls objects; do
    node "$ORACLE" dump "$tmp/root/$t.lance" >"$tmp/$t.want" 2>"$tmp/$t.err" ||
        { echo "FAIL $t: oracle dump failed: $(head -c 1000 "$tmp/$t.err")"; bad=$((bad + 1)); continue; }
    "$CLI" lance dump "$tmp/root/$t.lance" >"$tmp/$t.got" 2>"$tmp/$t.gerr" ||
        { echo "FAIL $t: pchronicle lance dump failed"; bad=$((bad + 1)); continue; }
    if out=$(python3 tests/compat/lance_reader_cmp.py "$tmp/$t.want" "$tmp/$t.got"); then
        echo "ok   $t ($out)"
    else
        echo "FAIL $t:"; echo "$out" | sed 's/^/  /'; bad=$((bad + 1))
    fi
done
python3 - "$tmp" tests/data/atif <<'PY' || bad=$((bad + 1))
import json, os, sys
tmp, src = sys.argv[1], sys.argv[2]
def rows(t):
    return [json.loads(l) for l in open(os.path.join(tmp, t + ".want")).read().splitlines()[1:]]
runs = steps = 0
calls = []
step_ids = []
def walk(t):
    global runs, steps
    runs += 1
    for s in t.get("steps") or []:
        steps += 1
        step_ids.append(s.get("step_id"))
        for c in s.get("tool_calls") or []:
            calls.append((c.get("tool_call_id"), c.get("function_name")))
    for sub in t.get("subagent_trajectories") or []:
        walk(sub)
for d, _, fs in sorted(os.walk(src)):
    for f in sorted(fs):
        if f.endswith(".json"):
            walk(json.load(open(os.path.join(d, f))))
R, S, C, O = rows("runs"), rows("steps"), rows("tool_calls"), rows("objects")
errs = []
if len(R) != runs: errs.append("runs: oracle %d, input %d" % (len(R), runs))
if len(S) != steps: errs.append("steps: oracle %d, input %d" % (len(S), steps))
if sorted(map(str, [s["step_id"] for s in S])) != sorted(map(str, step_ids)):
    errs.append("step_id values differ")
if sorted(map(str, [(c["tool_call_id"], c["function_name"]) for c in C])) != sorted(map(str, [tuple(x) for x in calls])):
    errs.append("tool call ids/names differ")
if len({o["object_id"] for o in O}) != len(O): errs.append("objects: duplicate ids")
if not O: errs.append("objects: empty (threshold 64 should move content there)")
if errs:
    print("FAIL input vs oracle:"); [print("  " + e) for e in errs]; sys.exit(1)
print("ok   input vs oracle (%d runs, %d steps, %d tool calls, %d objects)" % (len(R), len(S), len(C), len(O)))
PY
[ "$bad" -eq 0 ] || die "$bad check(s) failed"
echo "storyline_compat: all checks passed"
