#!/usr/bin/env bash
# The relations of a Vortex projection as Arrow C streams (pch_vxp_arrow_relation,
# include/pchronicle/arrow.h), read by an independent consumer: DuckDB's C library (the
# libduckdb.so of npm @duckdb/node-api 1.5.6-r.1, installed by scripts/bootstrap.sh) scans
# each stream (tests/arrow/duckdb_consumer.c) and answers SQL over it; the answers must equal
# `pchronicle-vortex sql` over the same root. Narrow column sets (read from the lanes) and
# whole relations (rebuilt documents, JSON columns as text) are both covered.
set -u
cd "$(dirname "$0")/../.."
VX=${PCH_VORTEX_CLI:-build/pchronicle-vortex}
B=${PCH_BUILD:-build}
CACHE=${PCH_CACHE:-$PWD/.cache}
DUCKLIB=$CACHE/duckdb-consumer/node_modules/@duckdb/node-bindings-linux-x64
CORPUS=../shared/corpus/atif
[ -x "$VX" ] || { echo "missing $VX"; exit 1; }
[ -f "$DUCKLIB/libduckdb.so" ] || { echo "missing $DUCKLIB/libduckdb.so (scripts/bootstrap.sh installs it)"; exit 1; }
[ -f "$B/libpchronicle-vortex.a" ] && [ -f "$B/libpchronicle.a" ] || { echo "missing the libraries in $B"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-vortex-arrow.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
checks=0

# the consumer, linked against this build's libraries (sanitizer builds: their runtime too)
san=
case "$B" in *asan*) san="-fsanitize=address,undefined" ;; *ubsan*) san="-fsanitize=undefined" ;; esac
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -Iinclude tests/arrow/duckdb_consumer.c "$B/libpchronicle-vortex.a" \
   "$B/libpchronicle.a" -L"$DUCKLIB" -lduckdb -Wl,-rpath,"$DUCKLIB" -lzstd -lm -lsqlite3 -pthread -o "$tmp/consumer" \
   2>"$tmp/cc.err" || { echo "FAIL building the consumer"; cat "$tmp/cc.err"; exit 1; }

roots=gen
"$VX" build --from tests/data/atif --to "$tmp/gen.vx" --source-id src --quiet 2>"$tmp/b.err" || { echo "FAIL build"; cat "$tmp/b.err"; exit 1; }
if [ "${PCH_VALGRIND:-0}" != 1 ]; then
    [ -d "$CORPUS" ] || { echo "missing $CORPUS (the shared corpus beside the repository)"; exit 1; }
    "$VX" build --from "$CORPUS" --to "$tmp/corpus.vx" --source-id src --quiet 2>"$tmp/b2.err" || { echo "FAIL build corpus"; cat "$tmp/b2.err"; exit 1; }
    roots="gen corpus"
fi

same() {  # same ROOT RELATION COLUMNS DUCKDB_SQL SQLITE_SQL
    local r=$tmp/$1.vx
    ASAN_OPTIONS=detect_leaks=0 "$tmp/consumer" "$r" "$2" "$3" "$4" >"$tmp/d.out" 2>"$tmp/d.err" ||
        { echo "FAIL consumer ($1 $2 $3): $(cat "$tmp/d.err")"; fail=1; return; }
    "$VX" sql "$r" "$5" --format jsonl >"$tmp/s.out" 2>"$tmp/s.err" || { echo "FAIL sql ($1): $5: $(cat "$tmp/s.err")"; fail=1; return; }
    checks=$((checks + 1))
    python3 - "$tmp/d.out" "$tmp/s.out" "$1 $2 [$3]: $4" <<'PY' || fail=1
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
s = [[None if v is None else str(v) for v in json.loads(l).values()] for l in open(sys.argv[2])]
if not s: print("FAIL no rows:", sys.argv[3]); sys.exit(1)
if d != s:
    print("FAIL differs:", sys.argv[3], "(%d vs %d rows)" % (len(d), len(s)))
    for a, b in zip(d, s):
        if a != b: print("  duckdb", str(a)[:300]); print("  sqlite", str(b)[:300]); break
    sys.exit(1)
PY
}

for r in $roots; do
    # narrow column sets: read lane by lane
    same $r steps source "SELECT source, count(*) FROM t GROUP BY 1 ORDER BY 1" \
        "SELECT source, count(*) FROM steps GROUP BY 1 ORDER BY 1"
    same $r tool_calls function_name "SELECT function_name, count(*) FROM t GROUP BY 1 ORDER BY 2 DESC, 1" \
        "SELECT function_name, count(*) FROM tool_calls GROUP BY 1 ORDER BY 2 DESC, 1"
    same $r steps trajectory_key,step_ordinal,step_id,timestamp_ms,timestamp,model_name,prompt_tokens,cost_usd,is_copied_context \
        "SELECT trajectory_key, step_ordinal, step_id, timestamp_ms, timestamp, model_name, prompt_tokens, CAST(round(cost_usd * 1000000) AS BIGINT), CAST(is_copied_context AS INTEGER) FROM t ORDER BY 1, 2" \
        "SELECT trajectory_key, step_ordinal, step_id, timestamp_ms, timestamp, model_name, prompt_tokens, CAST(round(cost_usd * 1000000) AS INTEGER), is_copied_context FROM steps ORDER BY 1, 2"
    # whole relations: documents rebuilt, JSON columns as text
    same $r steps - "SELECT trajectory_key, step_ordinal, message, reasoning_content, metrics_extra, observation_results, assets, raw_members FROM t ORDER BY 1, 2" \
        "SELECT trajectory_key, step_ordinal, message, reasoning_content, metrics_extra, observation_results, assets, raw_members FROM steps ORDER BY 1, 2"
    same $r tool_calls - "SELECT trajectory_key, step_ordinal, call_ordinal, tool_call_id, arguments, results, extra FROM t ORDER BY 1, 2, 3" \
        "SELECT trajectory_key, step_ordinal, call_ordinal, tool_call_id, arguments, results, extra FROM tool_calls ORDER BY 1, 2, 3"
    same $r runs - "SELECT trajectory_key, doc_path, preorder, parent_trajectory_key, agent, n_steps, state, projection_warnings, CAST(has_steps AS INTEGER), first_timestamp_ms FROM t ORDER BY 1" \
        "SELECT trajectory_key, doc_path, preorder, parent_trajectory_key, agent, n_steps, state, projection_warnings, has_steps, first_timestamp_ms FROM runs ORDER BY 1"
    # the read-only relations: trajectories (summary lanes) and observation_results (the
    # virtual table's rows; call_ordinal is null for uncorrelated results: DuckDB and SQLite
    # order nulls differently, so both order by a value)
    same $r trajectories - "SELECT trajectory_key, doc_path, n_pages, n_steps, n_tool_calls, n_results, first_timestamp_ms, last_timestamp_ms, prompt_tokens, CAST(has_token_ids AS INTEGER), logical_bytes FROM t ORDER BY 1" \
        "SELECT trajectory_key, doc_path, n_pages, n_steps, n_tool_calls, n_results, first_timestamp_ms, last_timestamp_ms, prompt_tokens, has_token_ids, logical_bytes FROM trajectories ORDER BY 1"
    same $r observation_results - "SELECT trajectory_key, step_ordinal, step_id, coalesce(call_ordinal, -1), result_index, source_call_id, content FROM t ORDER BY 1, 2, 4, 5" \
        "SELECT trajectory_key, step_ordinal, step_id, coalesce(call_ordinal, -1), result_index, source_call_id, content FROM observation_results ORDER BY 1, 2, 4, 5"
    same $r observation_results trajectory_key,content "SELECT count(*), count(DISTINCT content), sum(length(content)) FROM t" \
        "SELECT count(*), count(DISTINCT content), sum(length(content)) FROM observation_results"
done

# narrow scans hand over names as dictionary arrays (int32 codes into large utf8 values),
# everything else in its plain type
PCH_ARROW_SCHEMA=1 ASAN_OPTIONS=detect_leaks=0 "$tmp/consumer" "$tmp/gen.vx" steps source,model_name,step_id,timestamp \
    "SELECT count(*) FROM t" >/dev/null 2>"$tmp/schema.err" || { echo "FAIL consumer schema: $(cat "$tmp/schema.err")"; fail=1; }
[ "$(tr '\n' ' ' <"$tmp/schema.err")" = "source=i+U model_name=i+U step_id=l timestamp=U " ] ||
    { echo "FAIL narrow stream formats: $(tr '\n' ' ' <"$tmp/schema.err")"; fail=1; }
PCH_ARROW_SCHEMA=1 ASAN_OPTIONS=detect_leaks=0 "$tmp/consumer" "$tmp/gen.vx" tool_calls function_name,trajectory_key,call_ordinal \
    "SELECT count(*) FROM t" >/dev/null 2>"$tmp/schema.err" || { echo "FAIL consumer schema: $(cat "$tmp/schema.err")"; fail=1; }
[ "$(tr '\n' ' ' <"$tmp/schema.err")" = "function_name=i+U trajectory_key=i+U call_ordinal=i " ] ||
    { echo "FAIL narrow stream formats: $(tr '\n' ' ' <"$tmp/schema.err")"; fail=1; }

# the training readers as Arrow streams equal their JSON lines (rl, sft), with a model filter
train() {  # train ROOT READER[:MODEL] CLI-ARGS...
    local name=$1 r=$tmp/$1.vx rd=$2; shift 2
    local q="SELECT trajectory_key, step_ordinal, step_id, model_name, CAST(completion_token_ids AS VARCHAR), CAST(prompt_token_ids AS VARCHAR), CAST(logprobs AS VARCHAR), reward, run_id, source_id FROM t ORDER BY 1, 2"
    case $rd in sft*) q="SELECT trajectory_key, step_ordinal, step_id, model_name, messages, completion, run_id, source_id FROM t ORDER BY 1, 2" ;; esac
    ASAN_OPTIONS=detect_leaks=0 "$tmp/consumer" "$r" "$rd" - "$q" >"$tmp/d.out" 2>"$tmp/d.err" ||
        { echo "FAIL consumer ($name $rd): $(cat "$tmp/d.err")"; fail=1; return; }
    "$VX" "${rd%%:*}" "$r" "$@" >"$tmp/j.out" 2>"$tmp/j.err" || { echo "FAIL $rd ($name): $(cat "$tmp/j.err")"; fail=1; return; }
    checks=$((checks + 1))
    python3 - "$tmp/d.out" "$tmp/j.out" "$name $rd" <<'PY' || fail=1
import json, struct, sys
d = [json.loads(l) for l in open(sys.argv[1])]
j = sorted((json.loads(l) for l in open(sys.argv[2])), key=lambda o: (o["trajectory_key"], o["step_ordinal"]))
def ints(v):
    return None if v is None else [int(x) for x in v.strip("[]").split(",") if x.strip()]
def floats_same(v, want):
    if v is None or want is None: return v is None and want is None
    got = [float(x) for x in v.strip("[]").split(",") if x.strip()]
    f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
    return len(got) == len(want) and all(g == w or g == f32(w) for g, w in zip(got, want))
def same(a, o):
    head = [o["trajectory_key"], str(o["step_ordinal"]), None if o["step_id"] is None else str(o["step_id"]), o["model_name"]]
    if a[:4] != head or a[-2:] != [o["run_id"], o["source_id"]]: return False
    if "messages" in o:
        return json.loads(a[4]) == o["messages"] and json.loads(a[5]) == o["completion"]
    return (ints(a[4]) == o["completion_token_ids"] and ints(a[5]) == o["prompt_token_ids"] and
            floats_same(a[6], o["logprobs"]) and (None if a[7] is None else json.loads(a[7])) == o["reward"])
if not j: print("FAIL no steps:", sys.argv[3]); sys.exit(1)
if len(d) != len(j) or not all(same(a, o) for a, o in zip(d, j)):
    print("FAIL differs:", sys.argv[3], "(%d vs %d rows)" % (len(d), len(j)))
    for a, o in zip(d, j):
        if not same(a, o): print("  arrow", str(a)[:300]); print("  jsonl", str(o)[:300]); break
    sys.exit(1)
PY
}
for r in $roots; do
    train $r rl
    train $r sft
done
m=$("$VX" rl "$tmp/gen.vx" | python3 -c 'import json,sys; print(sorted({json.loads(l)["model_name"] for l in sys.stdin} - {None})[0])')
train gen "rl:$m" --model "$m"
train gen "sft:$m" --model "$m"

# errors: an unknown relation or column, a missing root
"$tmp/consumer" "$tmp/gen.vx" objects - "SELECT 1" >/dev/null 2>"$tmp/e1" && { echo "FAIL unknown relation accepted"; fail=1; }
grep -q 'no relation objects' "$tmp/e1" || { echo "FAIL unknown relation message: $(cat "$tmp/e1")"; fail=1; }
"$tmp/consumer" "$tmp/gen.vx" observation_results nope "SELECT 1" >/dev/null 2>"$tmp/e4" && { echo "FAIL unknown observation_results column accepted"; fail=1; }
grep -q 'observation_results has no column nope' "$tmp/e4" || { echo "FAIL unknown column message: $(cat "$tmp/e4")"; fail=1; }
"$tmp/consumer" "$tmp/missing" rl - "SELECT 1" >/dev/null 2>"$tmp/e5" && { echo "FAIL rl over a missing root accepted"; fail=1; }
grep -q 'no CURRENT' "$tmp/e5" || { echo "FAIL rl missing root message: $(cat "$tmp/e5")"; fail=1; }
"$tmp/consumer" "$tmp/gen.vx" steps nope "SELECT 1" >/dev/null 2>"$tmp/e2" && { echo "FAIL unknown column accepted"; fail=1; }
grep -q 'steps has no column nope' "$tmp/e2" || { echo "FAIL unknown column message: $(cat "$tmp/e2")"; fail=1; }
"$tmp/consumer" "$tmp/missing" steps - "SELECT 1" >/dev/null 2>"$tmp/e3" && { echo "FAIL missing root accepted"; fail=1; }
grep -q 'no CURRENT' "$tmp/e3" || { echo "FAIL missing root message: $(cat "$tmp/e3")"; fail=1; }

[ $fail = 0 ] && echo "vortex_arrow: ok ($checks queries through DuckDB's Arrow scan)"
exit $fail
