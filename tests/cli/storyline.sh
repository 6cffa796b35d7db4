#!/usr/bin/env bash
# CLI goldens for the Storyline verbs (docs/storyline.md §5, docs/sql.md): import (from a
# directory and from a compact-jsonl dataset), export round trip (JSON-equal to the input,
# checked with python's json module), get, inspect, sql in three formats, and the exit
# codes of usage errors (2) and failures (1). Exact stdout + exit code for the goldens;
# PCH_GOLDEN_UPDATE=1 rewrites them.
set -u
cd "$(dirname "$0")/../.."
CLI=${PCH_CLI:-build/pchronicle}
G=tests/golden/storyline
[ -x "$CLI" ] || { echo "missing $CLI"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-storyline-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check NAME ARGS...
    local name=$1; shift
    local out rc
    out=$("$CLI" "$@" 2>&1); rc=$?
    out=${out//$tmp/TMP}
    if [ "${PCH_GOLDEN_UPDATE:-0}" = 1 ]; then
        printf '%s\n' "$out" > "$G/$name.out"; echo "$rc" > "$G/$name.rc"; return
    fi
    if [ "$out" != "$(cat "$G/$name.out")" ] || [ "$rc" != "$(cat "$G/$name.rc")" ]; then
        echo "FAIL $name (exit $rc)"; diff <(printf '%s\n' "$out") "$G/$name.out" | head -20; fail=1
    fi
}
R=$tmp/root
check import import --input-format atif --output-format storyline --from tests/data/atif --to "$R"
check get_compact get "$R" mm-run-1 --compact
check get_missing get "$R" no-such-trajectory
check sql_table sql "$R" "SELECT trajectory_key, count(*) AS steps FROM steps GROUP BY 1 ORDER BY 1"
check sql_csv sql "$R" "SELECT function_name, count(*) FROM tool_calls GROUP BY 1 ORDER BY 2 DESC, 1" --format csv
check sql_jsonl sql "$R" "SELECT step_ordinal, call_ordinal, source_call_id FROM observation_results WHERE trajectory_key = 'agent-001@exmp02_atif.json' ORDER BY 1, 2" --format jsonl
check sql_error sql "$R" "SELECT nope FROM steps"
check export export --from "$R" --output-format atif --to "$tmp/out"
# a Storyline root exports as ATIF with no format flag; compact-jsonl contradicts it
"$CLI" export --from "$R" --to "$tmp/out-auto" --quiet && [ -d "$tmp/out-auto" ] || { echo "FAIL export without a format flag"; fail=1; }
"$CLI" export --from "$R" --to "$tmp/out-cj" --output-format compact-jsonl >/dev/null 2>"$tmp/cj.err"; rc=$?
{ [ $rc = 2 ] && grep -q 'is a Storyline root' "$tmp/cj.err" && [ ! -e "$tmp/out-cj" ]; } || { echo "FAIL export --output-format compact-jsonl of a Storyline root: exit $rc"; fail=1; }
"$CLI" inspect "$R" > "$tmp/inspect.txt" || { echo "FAIL inspect exit"; fail=1; }
grep -q '^table steps      version 1 rows 51 ' "$tmp/inspect.txt" || { echo "FAIL inspect output"; cat "$tmp/inspect.txt"; fail=1; }
# export is the same JSON value as every input document; assets restored byte for byte
python3 - "$tmp/out" tests/data/atif <<'PY' || fail=1
import json, os, sys
out, src = sys.argv[1], sys.argv[2]
n = 0
for d, _, fs in os.walk(src):
    for f in fs:
        a = os.path.join(d, f); b = os.path.join(out, os.path.relpath(a, src))
        if f.endswith(".json"):
            if json.load(open(a)) != json.load(open(b)): print("FAIL export differs:", b); sys.exit(1)
            n += 1
        elif open(a, "rb").read() != open(b, "rb").read(): print("FAIL asset differs:", b); sys.exit(1)
if n != 10: print("FAIL export: %d documents compared" % n); sys.exit(1)
PY
# --trajectory writes one document
"$CLI" export --from "$R" --output-format atif --to "$tmp/one" --trajectory agent-001@exmp02_atif.json --quiet || { echo "FAIL export --trajectory"; fail=1; }
[ "$(find "$tmp/one" -name '*.json' | wc -l)" = 1 ] || { echo "FAIL export --trajectory wrote $(find "$tmp/one" -name '*.json' | wc -l) files"; fail=1; }
# a compact-jsonl dataset as input: same tables, lineage in CURRENT
"$CLI" import --output-format compact-jsonl --from tests/data/atif --to "$tmp/cj" >/dev/null || { echo "FAIL cj import"; fail=1; }
check import_cj import --input-format atif --output-format storyline --from "$tmp/cj" --to "$tmp/root-cj" --source-id atif
# the dataset is restored into a directory of its own under TMPDIR: another writer holding
# TMPDIR's lock does not make the import fail, and nothing is left there
mkdir -p "$tmp/busy-tmp"; flock -n "$tmp/busy-tmp" sleep 30 & lockp=$!; sleep 0.2
TMPDIR=$tmp/busy-tmp "$CLI" import --input-format atif --output-format storyline --from "$tmp/cj" --to "$tmp/root-cj-busy" --source-id atif >/dev/null 2>"$tmp/busy.err" ||
    { echo "FAIL import from compact-jsonl with a busy TMPDIR: $(cat "$tmp/busy.err")"; fail=1; }
kill $lockp 2>/dev/null; wait $lockp 2>/dev/null
[ -z "$(ls -A "$tmp/busy-tmp")" ] || { echo "FAIL scratch left in TMPDIR: $(ls -A "$tmp/busy-tmp")"; fail=1; }
grep -q '"source":{"kind":"compact-jsonl","path":"[^"]*","version":1,' "$tmp/root-cj/CURRENT" || { echo "FAIL cj lineage"; fail=1; }
"$CLI" sql "$tmp/root-cj" "SELECT count(*) FROM steps" --format csv | tail -1 | grep -qx 51 || { echo "FAIL cj steps"; fail=1; }
# --assets reference: not self-contained
"$CLI" import --input-format atif --output-format storyline --from tests/data/atif/multimodal --to "$tmp/ref" --assets reference --quiet || fail=1
grep -q '"self_contained":false' "$tmp/ref/CURRENT" || { echo "FAIL reference assets"; fail=1; }
# usage errors exit 2, failures 1
"$CLI" import --input-format atif --output-format storyline --from tests/data/atif >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: missing --to must exit 2"; fail=1; }
"$CLI" import --input-format atif --output-format storyline --from tests/data/atif --to "$tmp/x" --assets copy >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: bad --assets must exit 2"; fail=1; }
"$CLI" sql "$R" >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: sql without SQL must exit 2"; fail=1; }
# identity flags (RFC-0006 §13.4): NORMALIZED_SESSION_ID is the session id of three document
# roots (so their run id, and their key with each one's path, docs/atif.md "Stable keys");
# each flag says which identity a key is, candidates name the flag
"$CLI" get "$R" --trajectory-key NORMALIZED_SESSION_ID@context-summarization/trajectory.json > "$tmp/g-traj.json" 2>"$tmp/g.err"; rc=$?
{ [ $rc = 0 ] && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
    "$tmp/g-traj.json" tests/data/atif/context-summarization/trajectory.json; } || { echo "FAIL get --trajectory-key: exit $rc"; fail=1; }
"$CLI" get "$R" --run-id NORMALIZED_SESSION_ID --compact > "$tmp/g-run.jsonl" 2>"$tmp/g.err"; rc=$?
{ [ $rc = 3 ] && [ "$(wc -l < "$tmp/g-run.jsonl")" = 3 ] && grep -q "matches 3 trajectories; name one with the flags below" "$tmp/g.err" &&
  [ "$(grep -c '^  candidate: run_id=NORMALIZED_SESSION_ID .*(alone: --trajectory-key ' "$tmp/g.err")" = 3 ]; } ||
    { echo "FAIL get --run-id shared: exit $rc"; cat "$tmp/g.err"; fail=1; }
# each candidate's flag selects that document alone, equal to its input file
sed -n 's/^  candidate: .* document=\([^ ]*\) (alone: --trajectory-key \(.*\))$/\1 \2/p' "$tmp/g.err" > "$tmp/cands"
[ "$(wc -l < "$tmp/cands")" = 3 ] || { echo "FAIL get candidates not parsed"; fail=1; }
while read -r doc tk; do
    "$CLI" get "$R" --trajectory-key "$tk" > "$tmp/g-one.json" 2>/dev/null &&
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$tmp/g-one.json" "tests/data/atif/$doc" ||
        { echo "FAIL get --trajectory-key $tk is not $doc"; fail=1; }
done < "$tmp/cands"
"$CLI" get "$R" --session-id agent-001 --compact > "$tmp/g-s.jsonl" 2>&1; rc=$?
{ [ $rc = 0 ] && [ "$(wc -l < "$tmp/g-s.jsonl")" = 1 ]; } || { echo "FAIL get --session-id: exit $rc"; fail=1; }
# --stats: the Lance bytes the read took and its time on stderr, the document unchanged on stdout
"$CLI" get "$R" --session-id agent-001 --compact --stats > "$tmp/g-st.jsonl" 2>"$tmp/g-st.err"; rc=$?
{ [ $rc = 0 ] && cmp -s "$tmp/g-s.jsonl" "$tmp/g-st.jsonl" && grep -Eq '^stats: bytes_read=[1-9][0-9]* seconds=[0-9.]+$' "$tmp/g-st.err" &&
  ! grep -q 'stats: s3' "$tmp/g-st.err"; } || { echo "FAIL get --stats: exit $rc"; cat "$tmp/g-st.err"; fail=1; }
"$CLI" get "$R" --run-id no-such-run >/dev/null 2>"$tmp/g.err"; rc=$?
{ [ $rc = 1 ] && grep -q "no run 'no-such-run'" "$tmp/g.err"; } || { echo "FAIL get --run-id missing: exit $rc"; fail=1; }
"$CLI" get "$R" mm-run-1 --session-id mm-run-1 >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL get with two keys must exit 2"; fail=1; }
"$CLI" get "$R" --run-id harbor-golden-run --trajectory-key traj_child_golden@harbor_multiagent_v1_7.json --compact > "$tmp/g-pair.jsonl" 2>&1; rc=$?
{ [ $rc = 0 ] && [ "$(wc -l < "$tmp/g-pair.jsonl")" = 1 ]; } || { echo "FAIL get --run-id with --trajectory-key: exit $rc"; fail=1; }
"$CLI" get "$R" traj_child_golden --run-id no-such-run >/dev/null 2>"$tmp/g.err"; rc=$?
{ [ $rc = 1 ] && grep -q "no trajectory 'traj_child_golden' in run 'no-such-run'" "$tmp/g.err"; } || { echo "FAIL get pair missing: exit $rc"; fail=1; }
# a plain key that is no trajectory key is a producer id: traj_child_golden of run
# harbor-golden-run (the pair), and traj_root_golden of two documents in two runs (both
# candidates, each selected alone by its key)
"$CLI" get "$R" traj_child_golden --run-id harbor-golden-run --compact > "$tmp/g-pair2.jsonl" 2>&1; rc=$?
{ [ $rc = 0 ] && cmp -s "$tmp/g-pair.jsonl" "$tmp/g-pair2.jsonl"; } || { echo "FAIL get of a producer id in a run: exit $rc"; fail=1; }
mkdir -p "$tmp/in-dupkey"; cp tests/data/atif/harbor_multiagent_v1_7.json "$tmp/in-dupkey/a.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["session_id"]="other-run"; json.dump(d, open(sys.argv[2],"w"))' \
    tests/data/atif/harbor_multiagent_v1_7.json "$tmp/in-dupkey/b.json"
"$CLI" import --input-format atif --output-format storyline --from "$tmp/in-dupkey" --to "$tmp/dupkey" >/dev/null || { echo "FAIL dupkey import"; fail=1; }
"$CLI" get "$tmp/dupkey" traj_root_golden --compact > "$tmp/g-dup.jsonl" 2>"$tmp/g.err"; rc=$?
{ [ $rc = 3 ] && [ "$(wc -l < "$tmp/g-dup.jsonl")" = 2 ] &&
  grep -q "document=b.json (alone: --trajectory-key traj_root_golden@b.json)$" "$tmp/g.err"; } ||
    { echo "FAIL get of a trajectory key in two runs: exit $rc"; cat "$tmp/g.err"; fail=1; }
"$CLI" get "$tmp/dupkey" --run-id other-run --trajectory-key traj_root_golden@b.json > "$tmp/g-b.json" 2>&1 &&
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$tmp/g-b.json" "$tmp/in-dupkey/b.json" ||
    { echo "FAIL get --run-id other-run --trajectory-key traj_root_golden@b.json"; fail=1; }
"$CLI" get "$tmp/dupkey" --trajectory-key traj_root_golden >/dev/null 2>&1; [ $? = 1 ] || { echo "FAIL a producer id is no --trajectory-key"; fail=1; }
"$CLI" get "$R" --session-id >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL get --session-id without a value must exit 2"; fail=1; }
"$CLI" get "$tmp/nope" k >/dev/null 2>&1; [ $? = 1 ] || { echo "FAIL: get on a missing root must exit 1"; fail=1; }
[ "$fail" = 0 ] && echo "storyline CLI: all checks passed"
exit $fail
