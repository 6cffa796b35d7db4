#!/usr/bin/env bash
# (PCH_VALGRIND_LONG: the valgrind pass of scripts/run-tests.sh starts this suite first.)
# Differential test of the SQL relations over the Vortex projection (RFC-0006 §13.1, §21.2;
# docs/sql.md "Vortex projection"): for the same input, `pchronicle-vortex sql ROOT` and
# `pchronicle sql STORYLINE_ROOT` must give byte-identical answers, for every column of
# runs, steps, tool_calls and observation_results and for a fixed query set (group-bys,
# time/model windows, function names, copied context, token sums, joins). Inputs: the shared
# ATIF corpus (assets by reference on both sides), tests/data/atif (assets embedded on both
# sides) plus generated documents that share one session id (each key carries its path),
# a large value kept as an object by the Storyline root (hydrated there, inline here) and
# an asset. Also the loadable extension, and errors. Under PCH_VALGRIND=1 (the valgrind pass
# of scripts/run-tests.sh) the shared corpus is skipped: the generated input covers the code.
set -u
cd "$(dirname "$0")/../.."
CLI=${PCH_CLI:-build/pchronicle}
VX=${PCH_VORTEX_CLI:-build/pchronicle-vortex}
B=${PCH_BUILD:-build}
CORPUS=../shared/corpus/atif
for x in "$CLI" "$VX"; do [ -x "$x" ] || { echo "missing $x"; exit 1; }; done
[ -d "$CORPUS" ] || { echo "missing $CORPUS (the shared corpus beside the repository)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-vortex-sql.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
checks=0

# ---- inputs
G=$tmp/gen
cp -r tests/data/atif "$G"
python3 - "$G" <<'PY'
import json, os, sys
g = sys.argv[1]
# the image tool-calls.input.json references (absent from tests/data: embedding needs it)
os.makedirs(os.path.join(g, "images"), exist_ok=True)
with open(os.path.join(g, "images", "workspace.png"), "wb") as f:
    f.write(bytes(range(256)) * 3)
os.makedirs(os.path.join(g, "collide"), exist_ok=True)
for name in ("a", "b", "c"):   # the same session id three times: each key carries its own path
    doc = {"schema_version": "ATIF-v1.6", "session_id": "shared-session",
           "agent": {"name": "gen", "version": "1", "model_name": "m-" + name},
           "steps": [{"step_id": 1, "timestamp": "2026-03-01T00:00:0%dZ" % len(name), "source": "user",
                      "message": "hello " + name},
                     {"step_id": 2, "source": "agent", "model_name": "m-" + name, "message": "x" * 70000,
                      "tool_calls": [{"tool_call_id": "c1", "function_name": "f_" + name, "arguments": {"k": name}}],
                      "observation": {"results": [{"source_call_id": "c1", "content": "y" * 66000},
                                                  {"content": [{"type": "text", "text": "pretty"}]}]},
                      "metrics": {"prompt_tokens": 10, "completion_tokens": 3, "cost_usd": 0.25}}]}
    with open(os.path.join(g, "collide", name + ".json"), "w") as f:
        json.dump(doc, f, indent=3)          # whitespace a JSON column must not show
# external values (above --cold-max): blob packs, read only when a content column is (§13.6)
doc = {"schema_version": "ATIF-v1.6", "session_id": "external-values", "agent": {"name": "gen", "version": "1"},
       "steps": [{"step_id": 1, "source": "user", "message": "go"},
                 {"step_id": 2, "source": "agent", "message": "done " + "m" * 300000, "reasoning_content": "r" * 300000,
                  "tool_calls": [{"tool_call_id": "e1", "function_name": "big", "arguments": {"a": 1}}],
                  "observation": {"results": [{"source_call_id": "e1", "content": "o" * 300000}]}}]}
with open(os.path.join(g, "external.json"), "w") as f:
    json.dump(doc, f)
PY

# pruning input (§13.3): 800 documents in path order with rising timestamps (zone maps over
# 256 trajectories say something), rare models, function names and copied context in a few,
# and one long document that is paged across clusters (a time window may start inside it)
W=$tmp/win
python3 - "$W" <<'PY'
import json, os, sys
w = sys.argv[1]
os.makedirs(w)
T0 = 1767225600000                   # 2026-01-01T00:00:00Z
def ts(ms):
    return "%sZ" % __import__("datetime").datetime.utcfromtimestamp(ms / 1000).isoformat(timespec="milliseconds")
for i in range(800):
    t = T0 + i * 60000
    model = "m-rare" if 100 <= i < 104 else "m-%d" % (i % 3)
    fn = "f-rare" if 400 <= i < 403 else "f-common"
    n = 40 if i == 300 else 3
    steps = []
    for k in range(n):
        st = {"step_id": k + 1, "timestamp": ts(t + k * (45000 if i == 300 else 1000)),
              "source": ("system", "user", "agent")[k % 3] if i % 50 else ("user", "agent", "agent")[k % 3],
              "message": ("long step %d " % k) * (120 if i == 300 else 2)}
        if st["source"] == "agent":
            st["model_name"] = model
            st["tool_calls"] = [{"tool_call_id": "c%d" % k, "function_name": fn, "arguments": {"i": i}}]
            st["metrics"] = {"prompt_tokens": i, "completion_tokens": k + 1}
        if 200 <= i < 205 and k == 1:
            st["is_copied_context"] = True
        steps.append(st)
    doc = {"schema_version": "ATIF-v1.6", "session_id": "w-%04d" % i,
           "agent": {"name": "win", "version": "1", "model_name": model}, "steps": steps}
    with open(os.path.join(w, "d%04d.json" % i), "w") as f:
        json.dump(doc, f)
PY

build_pair() {  # build_pair NAME INPUT ASSETS [BUILD OPTIONS]
    local name=$1 input=$2 assets=$3; shift 3
    "$REF_CLI" import --input-format atif --output-format storyline --from "$input" --to "$tmp/$name.sl" \
        --assets "$assets" --source-id src >/dev/null 2>"$tmp/$name.err" || { echo "FAIL storyline import $name"; cat "$tmp/$name.err"; exit 1; }
    "$VX" build --from "$input" --to "$tmp/$name.vx" --assets "$assets" --source-id src --quiet "$@" 2>>"$tmp/$name.err" \
        || { echo "FAIL vortex build $name"; cat "$tmp/$name.err"; exit 1; }
}
VG=${PCH_VALGRIND:-0}
# The Storyline side is the reference: under valgrind it is imported and queried unwrapped (the
# Storyline import and SQL run under valgrind in storyline.sh and sql_lance.sh).
REF_CLI=$CLI; [ "$VG" = 1 ] && REF_CLI=$PWD/${PCH_BUILD:-build}/pchronicle
pairs="corpus gen"
[ "$VG" = 1 ] && pairs=gen
[ "$VG" = 1 ] || build_pair corpus "$CORPUS" reference
build_pair gen "$G" embed
# small clusters: the large documents are paged (§7.2), several clusters per trajectory
build_pair paged "$G" embed --cluster-bytes 16K
pairs="$pairs paged"
build_pair win "$W" reference --cluster-bytes 8K

same() {  # same PAIR SQL: both projections, and both execution paths, answer byte-identically (JSON lines)
    local a b c
    a=$("$REF_CLI" sql "$tmp/$1.sl" "$2" --format jsonl 2>&1) || { echo "FAIL storyline sql ($1): $2"; echo "$a" | head -5; fail=1; return; }
    b=$("$VX" sql "$tmp/$1.vx" "$2" --format jsonl 2>&1) || { echo "FAIL vortex sql ($1): $2"; echo "$b" | head -5; fail=1; return; }
    # both execution paths (docs/sql.md "Execution paths"): the row-at-a-time one too
    c=$("$VX" sql "$tmp/$1.vx" "$2" --format jsonl --engine sqlite 2>&1) || { echo "FAIL vortex sql --engine sqlite ($1): $2"; echo "$c" | head -5; fail=1; return; }
    checks=$((checks + 1))
    if [ "$b" != "$c" ]; then
        echo "FAIL the execution paths differ ($1): $2"; diff <(printf '%s\n' "$c") <(printf '%s\n' "$b") | head -c 2000; echo; fail=1
    fi
    if [ "$a" != "$b" ]; then
        echo "FAIL differs ($1): $2"; diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -c 2000; echo; fail=1
    elif [ -z "$a" ] && [ "${3:-}" != empty-ok ]; then
        echo "FAIL no rows ($1): $2"; fail=1
    fi
}

for p in $pairs; do
    # every column of every relation
    same $p "SELECT * FROM runs ORDER BY source_id, run_id, trajectory_key"
    same $p "SELECT * FROM steps ORDER BY source_id, run_id, trajectory_key, step_ordinal"
    same $p "SELECT * FROM tool_calls ORDER BY source_id, run_id, trajectory_key, step_ordinal, call_ordinal"
    same $p "SELECT * FROM observation_results ORDER BY source_id, run_id, trajectory_key, step_ordinal, call_ordinal, result_index"
    # the fixed query set (§21.2)
    same $p "SELECT count(*), sum(n_steps), count(DISTINCT run_id) FROM runs"
    same $p "SELECT source, count(*) FROM steps GROUP BY 1 ORDER BY 1"
    same $p "SELECT function_name, count(*) FROM tool_calls GROUP BY 1 ORDER BY 2 DESC, 1"
    same $p "SELECT model_name, count(*), sum(prompt_tokens), sum(completion_tokens), sum(cost_usd) FROM steps GROUP BY 1 ORDER BY 1"
    same $p "SELECT count(*) FROM steps WHERE timestamp_ms BETWEEN 1700000000000 AND 1800000000000 AND model_name IS NOT NULL"
    same $p "SELECT is_copied_context, count(*) FROM steps GROUP BY 1 ORDER BY 1"
    # joins (an equality on trajectory_key per outer row: the inner relation reads only the
    # documents holding that key, on both sides); bounded to a few trajectories on the corpus
    same $p "SELECT s.trajectory_key, s.step_ordinal, t.function_name FROM steps s JOIN tool_calls t USING (source_id, run_id, trajectory_key, step_ordinal) WHERE s.trajectory_key IN (SELECT trajectory_key FROM runs ORDER BY 1 LIMIT 12) ORDER BY 1, 2, 3"
    same $p "SELECT r.agent_name, count(*) FROM runs r JOIN steps s USING (source_id, run_id, trajectory_key) GROUP BY 1 ORDER BY 1"
    same $p "SELECT trajectory_key, state, projection_warnings, first_timestamp_ms, last_timestamp_ms FROM runs ORDER BY 1"
    same $p "SELECT json_extract(message, '\$') IS NOT NULL, count(*) FROM steps GROUP BY 1 ORDER BY 1"
    # every column a narrow scan makes from the lanes (no document rebuilt)
    same $p "SELECT source_id, run_id, session_id, trajectory_key, step_ordinal, step_id, timestamp_ms, timestamp, source, model_name, prompt_tokens, completion_tokens, cached_tokens, cost_usd, llm_call_count, is_copied_context, has_tool_calls, n_tool_calls FROM steps ORDER BY 1, 2, 4, 5"
    same $p "SELECT source_id, run_id, session_id, trajectory_key, step_ordinal, step_id, call_ordinal, tool_call_id, function_name FROM tool_calls ORDER BY 1, 2, 4, 5, 7"
    same $p "SELECT count(*), min(timestamp), max(timestamp_ms) FROM steps WHERE timestamp_ms >= 1700000000000 AND model_name IS NOT NULL"
    # the message from its lanes (text, parts, cold and external values; canonical JSON as the
    # Storyline column renders it, hydrated there from objects when large), filtered by it
    same $p "SELECT source_id, run_id, trajectory_key, step_ordinal, message FROM steps ORDER BY 1, 2, 3, 4"
    same $p "SELECT model_name, count(*), count(message), sum(length(message)) FROM steps GROUP BY 1 ORDER BY 1"
    same $p "SELECT trajectory_key, step_ordinal FROM steps WHERE message LIKE '%e%' AND source = 'agent' ORDER BY 1, 2" empty-ok
    same $p "SELECT message, count(*) FROM steps WHERE message IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20"
    # every runs column the summaries hold (read like trajectories)
    same $p "SELECT source_id, run_id, session_id, trajectory_key, doc_path, preorder, parent_trajectory_key, agent_name, agent_model_name, state, n_steps, first_timestamp_ms, last_timestamp_ms FROM runs ORDER BY 1, 2, 4"
done
# the read-only `trajectories` relation (§13.1): one summary row per trajectory, read from the
# id and summary lanes (pages summed), agreeing with runs, steps and tool_calls
for p in $pairs; do
    q="WITH c AS (SELECT source_id, run_id, trajectory_key, count(*) AS n FROM tool_calls GROUP BY 1, 2, 3),
         s AS (SELECT source_id, run_id, trajectory_key, count(*) AS n, sum(is_copied_context = 1) AS copied,
                      coalesce(sum(CASE WHEN prompt_tokens > 0 THEN prompt_tokens END), 0) AS ptok,
                      coalesce(sum(CASE WHEN completion_tokens > 0 THEN completion_tokens END), 0) AS ctok,
                      min(timestamp_ms) AS lo, max(timestamp_ms) AS hi FROM steps GROUP BY 1, 2, 3)
       SELECT count(*), sum(t.n_steps = coalesce(s.n, 0) AND t.n_tool_calls = coalesce(c.n, 0) AND
                            t.n_copied_steps = coalesce(s.copied, 0) AND t.prompt_tokens = coalesce(s.ptok, 0) AND
                            t.completion_tokens = coalesce(s.ctok, 0) AND t.first_timestamp_ms IS s.lo AND
                            t.last_timestamp_ms IS s.hi),
              sum(t.n_pages > 1)
       FROM trajectories t LEFT JOIN s USING (source_id, run_id, trajectory_key) LEFT JOIN c USING (source_id, run_id, trajectory_key)"
    got=$("$VX" sql "$tmp/$p.vx" "$q" --format csv 2>&1 | tail -1)
    want=$("$CLI" sql "$tmp/$p.sl" "SELECT count(*) FROM runs" --format csv | tail -1)
    checks=$((checks + 1))
    case "$got" in "$want,$want,"*) ;; *) echo "FAIL trajectories ($p): '$got' for $want runs"; fail=1 ;; esac
    [ "$p" != paged ] || [ "${got##*,}" -gt 0 ] || { echo "FAIL trajectories: no paged trajectory in the paged build"; fail=1; }
    same $p "SELECT count(*) FROM runs" # (both sides have runs; trajectories exists on the Vortex side only)
    got=$("$VX" sql "$tmp/$p.vx" "SELECT count(*) FROM trajectories t JOIN runs r USING (source_id, run_id, trajectory_key)
            WHERE t.doc_path = r.doc_path AND t.preorder = r.preorder AND t.parent_trajectory_key IS r.parent_trajectory_key
              AND t.state = r.state AND t.session_id IS r.session_id AND t.agent_name IS r.agent_name
              AND t.agent_model_name IS r.agent_model_name" --format csv 2>&1 | tail -1)
    checks=$((checks + 1))
    [ "$got" = "$want" ] || { echo "FAIL trajectories vs runs ($p): $got of $want"; fail=1; }
done
"$CLI" sql "$tmp/gen.sl" "SELECT count(*) FROM trajectories" >/dev/null 2>&1 && { echo "FAIL a Storyline root has no trajectories relation"; fail=1; }

# a narrow scan reads lanes only; a wide column rebuilds documents
"$VX" sql "$tmp/paged.vx" "SELECT function_name, count(*) FROM tool_calls GROUP BY 1" --stats 2>"$tmp/st1" >/dev/null
grep -q 'documents_rebuilt=0 lane_clusters=\([4-9]\|[1-9][0-9]\)' "$tmp/st1" || { echo "FAIL narrow scan not from lanes (or too few clusters to page): $(cat "$tmp/st1")"; fail=1; }
"$VX" sql "$tmp/paged.vx" "SELECT state, count(*), sum(n_steps) FROM runs GROUP BY 1" --stats 2>"$tmp/st3" >/dev/null
grep -q 'documents_rebuilt=0 lane_clusters=[1-9]' "$tmp/st3" || { echo "FAIL narrow runs scan not from the summaries: $(cat "$tmp/st3")"; fail=1; }
"$VX" sql "$tmp/paged.vx" "SELECT count(arguments) FROM tool_calls" --stats 2>"$tmp/st2" >/dev/null
grep -q 'documents_rebuilt=[1-9][0-9]* lane_clusters=0' "$tmp/st2" || { echo "FAIL wide scan: $(cat "$tmp/st2")"; fail=1; }
# pushdown-shaped predicates answer the same (key equality, time range)
if [ "$VG" != 1 ]; then
k=$("$CLI" sql "$tmp/corpus.sl" "SELECT trajectory_key FROM runs ORDER BY 1 LIMIT 1 OFFSET 7" --format csv | tail -1)
same corpus "SELECT step_ordinal, source, model_name FROM steps WHERE trajectory_key = '$k' ORDER BY 1"
same corpus "SELECT count(*) FROM tool_calls WHERE trajectory_key = '$k'" empty-ok
same corpus "SELECT count(*) FROM steps WHERE timestamp_ms >= 1770000000000 AND timestamp_ms < 1771000000000"
fi
# pruning (§13.3) never changes an answer: time windows (zone maps, then summaries; one starts
# inside the paged document), rare models and function names (blooms), sources (mask), copied
# context, and predicates under another collation (left to SQLite)
T=1767225600000
i=0
for q in "timestamp_ms >= $((T + 250 * 60000)) AND timestamp_ms < $((T + 260 * 60000))" \
         "timestamp_ms > $((T + 300 * 60000 + 20 * 45000)) AND timestamp_ms <= $((T + 300 * 60000 + 35 * 45000))" \
         "timestamp_ms = $((T + 410 * 60000 + 1000))" "timestamp_ms < $((T + 5 * 60000))" \
         "timestamp_ms >= $((T + 795 * 60000))" "timestamp_ms > $((T + 900 * 60000))" \
         "model_name = 'm-rare'" "model_name = 'm-none'" "source = 'system'" "source = 'nobody'" \
         "is_copied_context = 1" "is_copied_context = 0" \
         "timestamp_ms BETWEEN $((T + 90 * 60000)) AND $((T + 110 * 60000)) AND model_name = 'm-rare' AND source = 'agent'" \
         "model_name = 'M-RARE' COLLATE NOCASE" "run_id = 'W-0007' COLLATE NOCASE"; do
    i=$((i + 1))
    [ "$VG" = 1 ] && [ $i -gt 4 ] && [ $i -lt 13 ] && continue    # under valgrind: windows and the combination
    same win "SELECT run_id, step_ordinal, step_id, timestamp_ms, source, model_name, is_copied_context FROM steps WHERE $q ORDER BY 1, 2" empty-ok
done
same win "SELECT run_id, step_ordinal, call_ordinal, function_name FROM tool_calls WHERE function_name = 'f-rare' ORDER BY 1, 2, 3"
same win "SELECT count(*) FROM tool_calls WHERE function_name = 'f-none'"
same win "SELECT count(*), sum(prompt_tokens) FROM steps WHERE prompt_tokens >= 500 AND completion_tokens = 3"
for v in "$VX sql $tmp/win.vx" "$CLI sql $tmp/win.sl"; do   # a NOCASE equality is SQLite's alone
    n=$($v "SELECT count(*) FROM steps WHERE run_id = 'W-0007' COLLATE NOCASE" --format csv | tail -1)
    [ "$n" = 3 ] || { echo "FAIL COLLATE NOCASE equality ($v): $n rows"; fail=1; }
done
n=$("$CLI" sql "$tmp/win.sl" "SELECT count(*) FROM steps WHERE timestamp_ms > $((T + 300 * 60000 + 20 * 45000)) AND timestamp_ms <= $((T + 300 * 60000 + 35 * 45000)) AND run_id = 'w-0300'" --format csv | tail -1)
[ "$n" -gt 5 ] || { echo "FAIL the window does not start inside the paged document: $n rows"; fail=1; }
# --explain says where each predicate went and what it pruned
"$VX" sql "$tmp/win.vx" "SELECT count(*) FROM steps WHERE timestamp_ms >= $((T + 600 * 60000)) AND timestamp_ms < $((T + 610 * 60000))" --explain >"$tmp/x1" 2>&1
checks=$((checks + 1))
{ grep -q '^steps: narrow scan, no document rebuilt; lanes .*steps.timestamp_ms' "$tmp/x1" &&
  grep -q 'pushed timestamp_ms >= .* -> zone maps and summary lanes' "$tmp/x1" &&
  grep -q 'clusters: [0-9]* considered, [1-9][0-9]* pruned by zone maps, [0-9]* pruned by summaries, [1-9][0-9]* decoded' "$tmp/x1" &&
  grep -q '^totals: documents rebuilt 0' "$tmp/x1"; } || { echo "FAIL --explain of a time window:"; cat "$tmp/x1"; fail=1; }
"$VX" sql "$tmp/win.vx" "SELECT count(*) FROM tool_calls WHERE function_name = 'f-rare'" --explain >"$tmp/x2" 2>&1
checks=$((checks + 1))
{ grep -q 'pushed function_name = .f-rare. -> tool-name bloom summary.tool_bloom' "$tmp/x2" &&
  grep -q '[1-9][0-9]* pruned by summaries' "$tmp/x2"; } || { echo "FAIL --explain of a function name:"; cat "$tmp/x2"; fail=1; }
"$VX" sql "$tmp/win.vx" "SELECT count(*) FROM steps WHERE model_name = 'm-rare'" --explain >"$tmp/x3" 2>&1
checks=$((checks + 1))
grep -q 'ruled out: [1-9]' "$tmp/x3" || { echo "FAIL --explain of a model:"; cat "$tmp/x3"; fail=1; }
k=$("$CLI" sql "$tmp/win.sl" "SELECT trajectory_key FROM runs ORDER BY 1 LIMIT 1" --format csv | tail -1)
"$VX" sql "$tmp/win.vx" "SELECT count(message) FROM steps WHERE trajectory_key = '$k'" --explain >"$tmp/x4" 2>&1
checks=$((checks + 1))
{ grep -q "^steps: documents holding the key (trajectory_key = '$k' through the trajectory directory)" "$tmp/x4" &&
  grep -q 'documents found: 1' "$tmp/x4" && grep -q '^totals: documents rebuilt 1,' "$tmp/x4"; } ||
    { echo "FAIL --explain of a key lookup:"; cat "$tmp/x4"; fail=1; }
"$VX" sql "$tmp/win.vx" "SELECT count(extra) FROM steps WHERE source = 'user'" --explain >"$tmp/x5" 2>&1
checks=$((checks + 1))
{ grep -q '^steps: every document rebuilt (column extra is read from documents)' "$tmp/x5" &&
  grep -q "pushed source = 'user' -> the rows of each document" "$tmp/x5" &&
  grep -q '^totals: documents rebuilt 800,' "$tmp/x5"; } || { echo "FAIL --explain of a document scan:"; cat "$tmp/x5"; fail=1; }
# the message is written from its lanes (§13.6): a narrow scan, no document rebuilt, with either
# engine; by trajectory key, the documents holding the key (the directory) instead
for eng in auto sqlite; do
    "$VX" sql "$tmp/win.vx" "SELECT count(*) FROM steps WHERE message LIKE '%step 1 %' AND source = 'user'" --explain --engine $eng >"$tmp/x7" 2>&1
    checks=$((checks + 1))
    { grep -q '^steps: narrow scan, no document rebuilt; lanes .*message.message_kind, message.message_hot' "$tmp/x7" &&
      grep -q '^totals: documents rebuilt 0,' "$tmp/x7"; } || { echo "FAIL --explain of a message scan ($eng):"; cat "$tmp/x7"; fail=1; }
done
"$VX" sql "$tmp/win.vx" "SELECT message FROM steps WHERE trajectory_key = '$k'" --explain >"$tmp/x8" 2>&1
checks=$((checks + 1))
{ grep -q "^steps: documents holding the key" "$tmp/x8" && grep -q '^totals: documents rebuilt 1,' "$tmp/x8"; } ||
    { echo "FAIL --explain of a message by key:"; cat "$tmp/x8"; fail=1; }
"$VX" sql "$tmp/win.vx" "SELECT count(*) FROM observation_results" --explain >"$tmp/x6" 2>&1
checks=$((checks + 1))
{ grep -q '^observation_results: every document rebuilt' "$tmp/x6" && grep -q '^totals: documents rebuilt 1600,' "$tmp/x6"; } ||
    { echo "FAIL --explain of observation_results:"; cat "$tmp/x6"; fail=1; }
[ "$("$VX" sql "$tmp/win.vx" "SELECT count(*) FROM runs" --explain | grep -c '^runs: the id and summary lanes')" = 1 ] ||
    { echo "FAIL --explain of runs from the summaries"; fail=1; }
"$VX" sql "$tmp/win.vx" "SELECT nope FROM steps" --explain >/dev/null 2>&1 && { echo "FAIL --explain of a bad statement succeeds"; fail=1; }

# late hydration (§13.6): a statement that reads no content column reads no external value
# (and answers as Storyline); one that reads content hydrates them
q="SELECT trajectory_key, step_ordinal, raw_members, metrics_extra, has_observation_results, n_tool_calls, assets FROM steps ORDER BY 1, 2"
same gen "$q"
"$VX" sql "$tmp/gen.vx" "$q" --stats 2>"$tmp/lh1" >/dev/null
grep -q 'documents_rebuilt=[1-9][0-9]* .*blobs_hydrated=0 ' "$tmp/lh1" || { echo "FAIL late hydration: $(cat "$tmp/lh1")"; fail=1; }
q="SELECT trajectory_key, step_ordinal, length(reasoning_content), reasoning_content_object FROM steps ORDER BY 1, 2"
same gen "$q"
"$VX" sql "$tmp/gen.vx" "$q" --stats 2>"$tmp/lh2" >/dev/null
grep -q 'blobs_hydrated=[1-9]' "$tmp/lh2" || { echo "FAIL a content column hydrates external values: $(cat "$tmp/lh2")"; fail=1; }

# the generated input really exercises what it was built for
n=$("$VX" sql "$tmp/gen.vx" "SELECT group_concat(trajectory_key || ':' || trajectory_key_generated, ' ') FROM (SELECT * FROM runs WHERE doc_path LIKE 'collide/%' ORDER BY trajectory_key)" --format csv | tail -1)
[ "$n" = "shared-session@collide/a.json:0 shared-session@collide/b.json:0 shared-session@collide/c.json:0" ] ||
    { echo "FAIL keys of documents sharing a session id: $n"; fail=1; }
n=$("$CLI" sql "$tmp/gen.sl" "SELECT count(*) FROM steps WHERE message_object IS NOT NULL" --format csv | tail -1)
[ "$n" = 4 ] || { echo "FAIL large messages kept as objects by the Storyline root: $n (want 4)"; fail=1; }
# ... and the messages the lanes give are text (the lane tier), parts, cold and external values
n=$("$VX" sql "$tmp/gen.vx" "SELECT sum(message LIKE '[%'), sum(length(message) > 70000), sum(length(message) > 300000) FROM steps" --format csv | tail -1)
[ "$n" = "2,4,1" ] || { echo "FAIL the message lanes' kinds in the generated input: $n (want parts, long and external ones)"; fail=1; }
n=$("$VX" sql "$tmp/gen.vx" "SELECT count(*) FROM steps WHERE assets LIKE '%object_id%'" --format csv | tail -1)
[ "$n" -ge 1 ] || { echo "FAIL no embedded asset listed with its object id"; fail=1; }

# ---- the loadable extension serves the same relations
if command -v sqlite3 >/dev/null; then
    # (a sanitizer build of the extension needs its runtime loaded first into the sqlite3 shell)
    pre=$(ldd "$B/pchronicle_vortex_sqlite.so" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ { printf "%s ", $3 }')
    got=$(LD_PRELOAD="$pre" ASAN_OPTIONS=detect_leaks=0 sqlite3 :memory: ".load $B/pchronicle_vortex_sqlite" \
          "CREATE VIRTUAL TABLE temp.s USING vortex('$tmp/gen.vx', 'steps');" \
          "SELECT count(*) || ',' || sum(prompt_tokens) FROM s;" 2>&1)
    want=$("$CLI" sql "$tmp/gen.sl" "SELECT count(*), sum(prompt_tokens) FROM steps" --format csv | tail -1)
    checks=$((checks + 1))
    [ -n "$want" ] && [ "$got" = "$want" ] || { echo "FAIL extension: '$got' want '$want'"; fail=1; }
else
    echo "FAIL sqlite3 shell not installed (scripts/bootstrap.sh installs it)"; fail=1
fi

# ---- errors: exit codes and messages
"$VX" sql "$tmp/nope" "SELECT 1" >/dev/null 2>"$tmp/e1"; rc=$?
{ [ $rc = 1 ] && grep -q 'no CURRENT' "$tmp/e1"; } || { echo "FAIL sql on a missing root: exit $rc"; cat "$tmp/e1"; fail=1; }
"$VX" sql "$tmp/gen.vx" "SELECT nope FROM steps" >/dev/null 2>"$tmp/e2"; rc=$?
{ [ $rc = 1 ] && grep -q 'no such column: nope' "$tmp/e2"; } || { echo "FAIL SQL error: exit $rc"; cat "$tmp/e2"; fail=1; }
"$VX" sql "$tmp/gen.vx" >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL usage error: exit $rc"; fail=1; }
"$VX" sql "$tmp/gen.vx" "SELECT 1" --format xml >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL --format xml: exit $rc"; fail=1; }
"$VX" sql --help | grep -q 'observation_results' || { echo "FAIL --help"; fail=1; }

[ $fail = 0 ] && echo "vortex_sql: ok ($checks comparisons)"
exit $fail
