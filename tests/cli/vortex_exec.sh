#!/usr/bin/env bash
# (PCH_VALGRIND_LONG: the valgrind pass of scripts/run-tests.sh starts this suite first.)
# Differential test of the two execution paths of `pchronicle-vortex sql` (docs/sql.md
# "Execution paths"; RFC-0006 §13.2): every statement gives byte-identical output with the
# vectorised engine (the default) and with --engine sqlite, in all three formats; the
# statements the engine answers say so in --explain (so the comparison is not vacuous), the
# others name why SQLite ran them; hand-backs at run time (ties on the ORDER BY keys, an
# integer overflow) still answer as SQLite does; a statement after a schema change is SQLite's.
# Also `bench-sql` and the usage errors. The input: generated documents with nulls, paged
# trajectories (small clusters), text that CSV must quote, REAL costs, huge token counts.
set -u
cd "$(dirname "$0")/../.."
CLI=${PCH_CLI:-build/pchronicle}
VX=${PCH_VORTEX_CLI:-build/pchronicle-vortex}
for x in "$CLI" "$VX"; do [ -x "$x" ] || { echo "missing $x"; exit 1; }; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-vortex-exec.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
checks=0
VG=${PCH_VALGRIND:-0}

python3 - "$tmp/in" <<'PY'
import json, os, sys, random
out = sys.argv[1]
os.makedirs(out)
rnd = random.Random(7)
T0 = 1767225600000
fns = ["read_file", "write_file", "bash", "grep, with a comma", 'say "hi"', "ünïcode", "b", "a"]
models = ["m-1", "m-2", None, "m,3"]
for i in range(60):
    steps = []
    n = 30 if i % 17 == 0 else rnd.randint(1, 6)
    for k in range(n):
        src = rnd.choice(["system", "user", "agent", "agent"])
        st = {"step_id": k + 1, "source": src, "message": "msg %d %d" % (i, k)}
        if rnd.random() < 0.8:
            ms = T0 + i * 3600000 + k * 1000 + rnd.randint(0, 999)
            st["timestamp"] = __import__("datetime").datetime.utcfromtimestamp(ms / 1000).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)
        if src == "agent":
            m = rnd.choice(models)
            if m:
                st["model_name"] = m
            if rnd.random() < 0.7:
                st["tool_calls"] = [{"tool_call_id": "c%d_%d" % (k, j), "function_name": rnd.choice(fns), "arguments": {"j": j}}
                                    for j in range(rnd.randint(0, 3))]
            if rnd.random() < 0.8:
                met = {"prompt_tokens": rnd.randint(0, 5000), "completion_tokens": rnd.randint(0, 700)}
                if rnd.random() < 0.5:
                    met["cost_usd"] = rnd.choice([0.0, 0.25, 1.5, rnd.random()])
                if rnd.random() < 0.3:
                    met["cached_tokens"] = rnd.randint(0, 100)
                st["metrics"] = met
        if rnd.random() < 0.05:
            st["is_copied_context"] = True
        steps.append(st)
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s-%03d" % i,
           "agent": {"name": "gen", "version": "1", "model_name": "m-1"}, "steps": steps}
    with open(os.path.join(out, "d%03d.json" % i), "w") as f:
        json.dump(doc, f)
# two steps whose prompt tokens sum past 2^63 (SQLite's sum fails: "integer overflow")
big = {"schema_version": "ATIF-v1.6", "session_id": "huge", "agent": {"name": "gen", "version": "1"},
       "steps": [{"step_id": k + 1, "source": "agent", "model_name": "m-huge", "message": "x",
                  "metrics": {"prompt_tokens": 5000000000000000000, "completion_tokens": 1}} for k in range(2)]}
with open(os.path.join(out, "huge.json"), "w") as f:
    json.dump(big, f)
# more of the same kind, for a root whose clusters hold hundreds of steps and calls: there the
# writer keeps model_name and function_name as dictionaries (nulls and CSV-quoted names
# among them), which the engine reads as codes only (docs/sql.md "Execution on the codes")
for i in range(60, 420):
    steps = []
    for k in range(rnd.randint(1, 8)):
        src = rnd.choice(["system", "user", "agent", "agent", "agent"])
        st = {"step_id": k + 1, "source": src, "message": "m"}
        if rnd.random() < 0.9:
            st["timestamp"] = "2026-01-01T%02d:%02d:%02d.%03dZ" % (i % 24, k, rnd.randint(0, 59), rnd.randint(0, 999))
        if src == "agent":
            m = rnd.choice(models)
            if m:
                st["model_name"] = m
            st["tool_calls"] = [{"tool_call_id": "c%d_%d" % (k, j), "function_name": rnd.choice(fns), "arguments": {}}
                                for j in range(rnd.randint(0, 4))]
            st["metrics"] = {"prompt_tokens": rnd.randint(0, 5000), "completion_tokens": rnd.randint(0, 700)}
        steps.append(st)
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s-%03d" % i,
           "agent": {"name": "gen", "version": "1", "model_name": "m-1"}, "steps": steps}
    os.makedirs(out + "-big", exist_ok=True)
    with open(os.path.join(out + "-big", "d%03d.json" % i), "w") as f:
        json.dump(doc, f)
PY
"$VX" build --from "$tmp/in" --to "$tmp/r.vx" --source-id src --cluster-bytes 8K --quiet 2>"$tmp/build.err" ||
    { echo "FAIL vortex build"; cat "$tmp/build.err"; exit 1; }
cp "$tmp"/in/*.json "$tmp/in-big/"
"$VX" build --from "$tmp/in-big" --to "$tmp/big.vx" --source-id src --quiet 2>"$tmp/build.err" ||
    { echo "FAIL vortex build (big clusters)"; cat "$tmp/build.err"; exit 1; }
# the big root's text lanes are dictionaries (else the codes path would go untested)
"$VX" inspect "$tmp/big.vx" >"$tmp/big.inspect" 2>&1
checks=$((checks + 1))
{ grep -E '^ *steps\.model_name .*vortex\.dict' "$tmp/big.inspect" >/dev/null &&
  grep -E '^ *tools\.function_name .*vortex\.dict' "$tmp/big.inspect" >/dev/null; } ||
    { echo "FAIL the big root has no dictionary text lanes:"; grep -E 'model_name|function_name' "$tmp/big.inspect"; fail=1; }
R=$tmp/r.vx

formats="jsonl csv table"
[ "$VG" = 1 ] && formats=jsonl
# The row-at-a-time answers are the reference: under valgrind they and --explain run unwrapped
# (that path runs under valgrind in vortex_sql.sh), so this suite's valgrind time goes to the
# vectorised engine it is about.
VXREF=$VX; [ "$VG" = 1 ] && VXREF=$PWD/${PCH_BUILD:-build}/pchronicle-vortex

# both MODE STATEMENT: the two paths print the same bytes (and exit the same) in every format;
# MODE vec: the engine answers it; sqlite: SQLite does (--explain says which); any: either
both() {
    local mode=$1 q=$2 f a b ra rb path
    for f in $formats; do
        a=$("$VX" sql "$R" "$q" --format "$f" 2>&1); ra=$?
        b=$("$VXREF" sql "$R" "$q" --format "$f" --engine sqlite 2>&1); rb=$?
        checks=$((checks + 1))
        if [ "$ra" != "$rb" ] || [ "$a" != "$b" ]; then
            echo "FAIL the paths differ ($f, exit $ra vs $rb): $q"; diff <(printf '%s\n' "$b") <(printf '%s\n' "$a") | head -c 1500; echo; fail=1
        fi
    done
    [ "$mode" = any ] && return
    path=$("$VXREF" sql "$R" "$q" --explain 2>&1 | grep '^statement 1:')
    case "$mode:$path" in
    "vec:statement 1: vectorised:"*|"sqlite:statement 1: SQLite, row at a time ("*) ;;
    *) echo "FAIL expected the $mode path: $q"; echo "  $path"; fail=1 ;;
    esac
}

# the engine's statements, on both roots
for R in "$tmp/r.vx" "$tmp/big.vx"; do
for q in \
    "SELECT source, count(*) AS n FROM steps GROUP BY source" \
    "SELECT function_name, count(*) AS n FROM tool_calls GROUP BY function_name" \
    "SELECT count(*) FROM steps" \
    "SELECT count(*), count(model_name), count(cost_usd), count(timestamp) FROM steps" \
    "SELECT model_name, count(*), sum(prompt_tokens), min(prompt_tokens), max(completion_tokens), avg(completion_tokens) FROM steps WHERE model_name <> 'm-huge' GROUP BY 1" \
    "SELECT model_name, count(*), sum(completion_tokens), avg(completion_tokens), min(cost_usd), max(cost_usd) FROM steps GROUP BY model_name ORDER BY 1 DESC" \
    "SELECT model_name, min(timestamp), max(timestamp), min(run_id), max(trajectory_key) FROM steps GROUP BY 1" \
    "SELECT source, model_name, count(*) FROM steps GROUP BY source, model_name" \
    "SELECT count(*) AS n, source FROM steps GROUP BY 2 ORDER BY n DESC, source" \
    "SELECT is_copied_context, has_tool_calls, n_tool_calls, count(*) FROM steps GROUP BY 1, 2, 3" \
    "SELECT run_id, count(*) AS n, max(step_ordinal) FROM steps GROUP BY run_id ORDER BY n DESC, run_id LIMIT 7" \
    "SELECT run_id, count(*) FROM tool_calls WHERE function_name = 'bash' GROUP BY 1 LIMIT 5 OFFSET 2" \
    "SELECT run_id, step_id, timestamp_ms, model_name, source FROM steps WHERE timestamp_ms >= $((1767225600000 + 7200000)) AND timestamp_ms < $((1767225600000 + 30 * 3600000)) AND model_name = 'm-2'" \
    "SELECT run_id, step_ordinal, cost_usd FROM steps WHERE cost_usd >= 0.25 AND cost_usd < 2" \
    "SELECT run_id, step_ordinal FROM steps WHERE cost_usd = 0 LIMIT 4" \
    "SELECT run_id, step_ordinal, prompt_tokens FROM steps WHERE prompt_tokens BETWEEN 100 AND 2000.5 AND completion_tokens > 10" \
    "SELECT trajectory_key, step_ordinal, step_id FROM steps WHERE source IN ('system', 'user') AND step_ordinal < 3 ORDER BY 1, 2" \
    "SELECT source, count(*) FROM steps WHERE source IN ('user', 'system', 'user') GROUP BY 1" \
    "SELECT source_id, run_id, session_id, trajectory_key FROM steps WHERE source NOT IN ('agent') LIMIT 9" \
    "SELECT run_id, step_ordinal, call_ordinal, tool_call_id, function_name FROM tool_calls WHERE function_name IN ('grep, with a comma', 'say \"hi\"', 'ünïcode') ORDER BY 1, 2, 3" \
    "SELECT s.run_id, s.step_ordinal FROM steps AS s WHERE s.model_name IS NULL AND s.source = 'agent'" \
    "SELECT run_id, step_ordinal, timestamp FROM steps WHERE timestamp_ms IS NULL" \
    "SELECT run_id FROM steps WHERE 3 > step_ordinal AND 'agent' = source LIMIT 3" \
    "SELECT run_id, step_ordinal, model_name FROM steps ORDER BY run_id DESC, step_ordinal LIMIT 20" \
    "SELECT run_id, step_ordinal, function_name, call_ordinal FROM tool_calls ORDER BY function_name, run_id, step_ordinal, call_ordinal" \
    "SELECT run_id, step_ordinal FROM steps WHERE source = 'nobody'" \
    "SELECT count(*), sum(prompt_tokens), min(model_name), max(cost_usd), avg(prompt_tokens) FROM steps WHERE source = 'nobody'" \
    "SELECT model_name, count(*) FROM steps WHERE source = 'nobody' GROUP BY 1" \
    "SELECT count(*) FROM tool_calls WHERE function_name > 'b' AND function_name <= 'r'" \
    "SELECT llm_call_count, count(*) FROM steps GROUP BY 1" \
    "select Source, COUNT( * ) from STEPS group by SOURCE order by 2" \
    "SELECT \"source\", count(*) FROM temp.steps GROUP BY \"source\" -- a comment" \
    "SELECT run_id, step_ordinal FROM steps WHERE step_ordinal = 29 LIMIT 0" \
    "SELECT model_name, count(*), count(model_name) FROM steps WHERE source = 'agent' GROUP BY model_name" \
    "SELECT function_name, count(function_name), count(*) FROM tool_calls WHERE step_ordinal > 0 GROUP BY 1 ORDER BY 3 DESC, 1" \
    "SELECT count(*), function_name FROM tool_calls WHERE function_name <> 'bash' GROUP BY function_name" \
    "SELECT run_id, message FROM steps WHERE step_ordinal = 0 ORDER BY 1 LIMIT 3" \
    "SELECT message, count(*) FROM steps WHERE message >= 'msg 1' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5" \
    "SELECT count(*) FROM steps WHERE message LIKE '%msg 1%'" \
    "SELECT run_id, step_ordinal FROM steps WHERE message LIKE '\"MSG _ %' ORDER BY 1, 2 LIMIT 30" \
    "SELECT count(*) FROM steps WHERE message LIKE '%' AND source LIKE 'a%'" \
    "SELECT count(*) FROM steps WHERE message LIKE '%%_7%'" \
    "SELECT model_name, count(*) FROM steps WHERE model_name LIKE 'm-_' GROUP BY 1" \
    "SELECT function_name, count(*) FROM tool_calls WHERE function_name LIKE '_n_code' GROUP BY 1" \
    "SELECT function_name, count(*) FROM tool_calls WHERE function_name LIKE '%, WITH%' GROUP BY 1" \
    "SELECT count(*) FROM tool_calls WHERE function_name LIKE ''" \
    "SELECT count(*) FROM steps WHERE message LIKE '%\"'"; do
    # under valgrind the dictionary root runs only the statements on its coded columns
    case "$VG:$R:$q" in 1:*big.vx:*model_name*|1:*big.vx:*function_name*) ;; 1:*big.vx:*) continue ;; esac
    both vec "$q"
done
done
R=$tmp/r.vx
# runtime hand-backs: the engine starts, then gives the statement to SQLite (same answer)
both any "SELECT source, run_id FROM steps ORDER BY source"
path=$("$VX" sql "$R" "SELECT source, run_id FROM steps ORDER BY source" --explain | grep '^statement 1:')
checks=$((checks + 1))
case "$path" in *"handed back at run time: rows tied"*) ;; *) echo "FAIL ties on ORDER BY keys not handed back: $path"; fail=1 ;; esac
both any "SELECT model_name, sum(prompt_tokens) FROM steps GROUP BY 1"
"$VX" sql "$R" "SELECT sum(prompt_tokens) FROM steps" >/dev/null 2>"$tmp/ovf"; rc=$?
checks=$((checks + 1))
{ [ $rc = 1 ] && grep -q 'integer overflow' "$tmp/ovf"; } || { echo "FAIL sum past 2^63: exit $rc $(cat "$tmp/ovf")"; fail=1; }
both any "SELECT model_name, avg(prompt_tokens) FROM steps GROUP BY 1"
path=$("$VX" sql "$R" "SELECT avg(prompt_tokens) FROM steps WHERE model_name = 'm-huge'" --explain | grep '^statement 1:')
checks=$((checks + 1))
case "$path" in *"handed back at run time: avg of integers"*) ;; *) echo "FAIL inexact avg not handed back: $path"; fail=1 ;; esac

# SQLite's statements (each names its reason)
for q in \
    "SELECT sum(cost_usd) FROM steps" \
    "SELECT model_name, avg(cost_usd) FROM steps GROUP BY 1 ORDER BY 1" \
    "SELECT count(DISTINCT run_id) FROM steps" \
    "SELECT DISTINCT source FROM steps ORDER BY 1" \
    "SELECT source, count(*) FROM steps GROUP BY 1 HAVING count(*) > 10" \
    "SELECT upper(source), count(*) FROM steps GROUP BY 1" \
    "SELECT source, count(*) FROM steps WHERE model_name = 'M-1' COLLATE NOCASE GROUP BY 1" \
    "SELECT count(*) FROM steps WHERE source = 'agent' OR model_name IS NULL" \
    "SELECT count(*) FROM steps WHERE prompt_tokens = '12'" \
    "SELECT run_id, reasoning_content FROM steps WHERE step_ordinal = 0 ORDER BY 1 LIMIT 3" \
    "SELECT message FROM steps WHERE trajectory_key = 'no such key'" \
    "SELECT count(*) FROM steps WHERE message LIKE '%1!%%' ESCAPE '!'" \
    "SELECT count(*) FROM steps WHERE message NOT LIKE '%1%'" \
    "SELECT count(*) FROM tool_calls WHERE function_name LIKE 'ü%'" \
    "SELECT count(*) FROM steps WHERE step_ordinal LIKE '1%'" \
    "SELECT * FROM tool_calls ORDER BY run_id, step_ordinal, call_ordinal LIMIT 3" \
    "SELECT s.run_id, t.function_name FROM steps s JOIN tool_calls t USING (run_id, step_ordinal) ORDER BY 1, 2 LIMIT 5" \
    "SELECT state, count(*) FROM runs GROUP BY 1" \
    "SELECT run_id, model_name FROM steps GROUP BY run_id ORDER BY 1 LIMIT 3" \
    "SELECT count(*) FROM (SELECT source FROM steps)" \
    "SELECT cost_usd, count(*) FROM steps GROUP BY 1 ORDER BY 1" \
    "SELECT run_id, function_name FROM tool_calls WHERE function_name IN ('b', 'a')"; do
    both sqlite "$q"
done

# parentheses nested past the engine's bound: SQLite's (the parser's recursion stays bounded)
deep="$(printf '(%.0s' $(seq 70))source = 'agent'$(printf ')%.0s' $(seq 70))"
both sqlite "SELECT count(*) FROM steps WHERE $deep"
both vec "SELECT count(*) FROM steps WHERE ((((source = 'agent'))))"

# several statements: each takes its own path
"$VX" sql "$R" "SELECT count(*) FROM steps; SELECT sum(cost_usd) FROM steps" --explain >"$tmp/x2"
checks=$((checks + 1))
{ grep -q '^statement 1: vectorised' "$tmp/x2" && grep -q '^statement 2: SQLite, row at a time (sum of a non-integer' "$tmp/x2"; } ||
    { echo "FAIL paths of two statements:"; cat "$tmp/x2"; fail=1; }
# a schema change: the name may no longer be the relation; the statement is SQLite's
q="DROP TABLE temp.steps; CREATE TEMP TABLE steps(source TEXT); INSERT INTO steps VALUES ('mine'); SELECT source, count(*) FROM steps GROUP BY source"
got=$("$VX" sql "$R" "$q" --format csv | tail -1)
checks=$((checks + 1))
[ "$got" = "mine,1" ] || { echo "FAIL a statement after a schema change read the projection: $got"; fail=1; }
"$VX" sql "$R" "$q" --explain | grep -q '^statement 4: SQLite, row at a time (the session.s schema changed' ||
    { echo "FAIL the schema change is not named"; fail=1; }

# warm summaries (docs/sql.md "Warm summaries"): statements of one session test clusters
# against the trajectory summaries the snapshot decoded for an earlier statement; kept
# (default budget) or not (PCH_VX_SUMMARY_CACHE=0), in one session or one per statement, and
# on the SQLite path, the same bytes
T0=1767225600000
w1="SELECT run_id, step_id, timestamp_ms, model_name, source FROM steps WHERE timestamp_ms >= $((T0 + 7200000)) AND timestamp_ms < $((T0 + 30 * 3600000)) AND model_name = 'm-2'"
w2="SELECT run_id, step_ordinal FROM steps WHERE timestamp_ms >= $((T0 + 20 * 3600000)) AND model_name = 'm-1'"
w3="SELECT source, count(*) FROM steps WHERE timestamp_ms < $((T0 + 12 * 3600000)) GROUP BY 1"
one=$("$VX" sql "$R" "$w1; $w2; $w3; $w1" --format csv 2>&1)
each=$(for q in "$w1" "$w2" "$w3" "$w1"; do "$VX" sql "$R" "$q" --format csv 2>&1; done)
cold=$(PCH_VX_SUMMARY_CACHE=0 "$VX" sql "$R" "$w1; $w2; $w3; $w1" --format csv 2>&1)
lite=$("$VX" sql "$R" "$w1; $w2; $w3; $w1" --format csv --engine sqlite 2>&1)
checks=$((checks + 1))
{ [ "$one" = "$each" ] && [ "$one" = "$cold" ] && [ "$one" = "$lite" ] && [ "$(printf '%s\n' "$one" | wc -l)" -gt 20 ]; } ||
    { echo "FAIL warm summaries change answers"; diff <(printf '%s\n' "$each") <(printf '%s\n' "$one") | head -20; fail=1; }
"$VX" sql "$R" "$w1; $w2; $w3; $w1" --explain >"$tmp/warm.x" 2>&1
PCH_VX_SUMMARY_CACHE=0 "$VX" sql "$R" "$w1; $w2; $w3; $w1" --explain >"$tmp/cold.x" 2>&1
checks=$((checks + 1))
{ grep -Eq 'ruled out: [1-9][0-9]*; summaries held decoded: [1-9]' "$tmp/warm.x" &&
  grep -q 'summaries held decoded: 0 clusters' "$tmp/cold.x" && ! grep -Eq 'summaries held decoded: [1-9]' "$tmp/cold.x"; } ||
    { echo "FAIL warm summaries not used (or used with none kept):"; cat "$tmp/warm.x" "$tmp/cold.x"; fail=1; }

# bench-sql: one JSON line per statement with its path, warm
printf '%s\n' "# the benchmark's narrow scans" "SELECT source, count(*) AS n FROM steps GROUP BY source" "" \
    "SELECT sum(cost_usd) FROM steps" >"$tmp/q.sql"
"$VX" bench-sql "$R" --queries "$tmp/q.sql" --repeat 3 >"$tmp/b.jsonl" 2>"$tmp/b.err" || { echo "FAIL bench-sql"; cat "$tmp/b.err"; fail=1; }
python3 - "$tmp/b.jsonl" <<'PY' || fail=1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ok = (len(rows) == 2 and rows[0]["path"].startswith("statement 1: vectorised") and rows[0]["rows"] == 3
      and rows[1]["path"].startswith("statement 1: SQLite") and rows[1]["rows"] == 1
      and all(r["repeat"] == 3 and 0 <= r["min_ms"] <= r["p50_ms"] <= r["p95_ms"] <= r["max_ms"] and r["engine"] == "auto"
              and 0 < r["engine_p50_ms"] <= r["engine_p95_ms"] for r in rows))
if not ok:
    print("FAIL bench-sql output:", rows)
    sys.exit(1)
PY
checks=$((checks + 1))
"$VX" bench-sql "$R" --queries "$tmp/q.sql" --repeat 1 --engine sqlite | grep -c '"path":"statement 1: SQLite' | grep -qx 2 ||
    { echo "FAIL bench-sql --engine sqlite"; fail=1; }

# usage errors
"$VX" sql "$R" "SELECT 1" --engine duck >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL --engine duck: exit $rc"; fail=1; }
"$VX" bench-sql "$R" >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL bench-sql without --queries: exit $rc"; fail=1; }
"$VX" bench-sql "$R" --queries "$tmp/nope" >/dev/null 2>&1; rc=$?
[ $rc = 1 ] || { echo "FAIL bench-sql with a missing file: exit $rc"; fail=1; }
"$VX" bench-sql "$R" --queries "$tmp/q.sql" --repeat 0 >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL bench-sql --repeat 0: exit $rc"; fail=1; }
"$VX" bench-sql --help | grep -q 'p50_ms' || { echo "FAIL bench-sql --help"; fail=1; }
"$VX" sql --help | grep -q -- '--engine' || { echo "FAIL sql --help"; fail=1; }

[ $fail = 0 ] && echo "vortex_exec: ok ($checks comparisons)"
exit $fail
