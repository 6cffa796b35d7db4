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
done

# errors: an unknown relation or column, a missing root
"$tmp/consumer" "$tmp/gen.vx" observation_results - "SELECT 1" >/dev/null 2>"$tmp/e1" && { echo "FAIL unknown relation accepted"; fail=1; }
grep -q 'no relation observation_results' "$tmp/e1" || { echo "FAIL unknown relation message: $(cat "$tmp/e1")"; fail=1; }
"$tmp/consumer" "$tmp/gen.vx" steps nope "SELECT 1" >/dev/null 2>"$tmp/e2" && { echo "FAIL unknown column accepted"; fail=1; }
grep -q 'steps has no column nope' "$tmp/e2" || { echo "FAIL unknown column message: $(cat "$tmp/e2")"; fail=1; }
"$tmp/consumer" "$tmp/missing" steps - "SELECT 1" >/dev/null 2>"$tmp/e3" && { echo "FAIL missing root accepted"; fail=1; }
grep -q 'no CURRENT' "$tmp/e3" || { echo "FAIL missing root message: $(cat "$tmp/e3")"; fail=1; }

[ $fail = 0 ] && echo "vortex_arrow: ok ($checks queries through DuckDB's Arrow scan)"
exit $fail
