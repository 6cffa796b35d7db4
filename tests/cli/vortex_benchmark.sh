#!/usr/bin/env bash
# `pchronicle-vortex benchmark` (RFC-0006 §20, §22.3): the query matrix on a projection root of
# the repository's ATIF documents, warm and cold, with our Storyline tables beside it. Checks
# the figures are real and consistent, not their speed (benchmarks are not timed tests): every
# query of the matrix is there with as many warm and cold samples as asked, p50 <= p95 <= p99,
# the cold runs' bytes come from their --stats, a cold process's peak RSS is its own (not the
# size of the benchmark process that started it), SQL row counts equal `sql`'s, the Storyline
# column is there where Storyline has the query and absent where it has not (Preview, the
# training readers), --only selects, and bad input fails with a clear message (usage: exit 2).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}
P=${PCH_CLI:-$PWD/$BUILD/pchronicle}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-vxbench.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0; fail=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $*"; }
run() {
    local name=$1 want=$2 rc; shift 2
    "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"; rc=$?
    if [ "$rc" = "$want" ]; then ok; return 0; fi
    bad "$name: exit $rc, expected $want"; head -n 5 "$T/$name.err" | sed 's/^/    /'; return 1
}
has() { if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no line matching /$3/ in:"; head -n 8 "$2" | sed 's/^/    /'; fi; }
command -v python3 >/dev/null || { echo "FAIL: python3 is required"; exit 1; }
[ -x "$VX" ] || { echo "FAIL: $VX not built"; exit 1; }

R=$T/root; SL=$T/sl
run build 0 "$VX" build --from tests/data/atif --to "$R" --quiet
run import 0 "$P" import --from tests/data/atif --to "$SL" --input-format atif --output-format storyline --quiet

run bench 0 "$VX" benchmark "$R" --keys 3 --repeat 2 --cold 2 --storyline "$SL" --json "$T/b.json" --quiet
python3 - "$T/b.json" "$T/bench.out" <<'PY' >"$T/check.out" 2>&1 && ok || { bad "benchmark figures"; cat "$T/check.out"; }
import json, sys
b = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read().splitlines()
ids = ["point_full", "point_preview", "lookup_run", "lookup_session", "scan_source", "scan_time_model", "tool_group",
       "tool_filter", "content_off", "content_on", "content_pred", "sft", "rl"]
got = [q["id"] for q in b["queries"]]
assert b["keys"] == 3 and b["repeat"] == 2 and b["cold_runs"] == 2 and b["trajectories"] > 0, b
# lookup_session only when a sampled document has a session id
assert got == [i for i in ids if i != "lookup_session" or b["session_keys"]], got
assert len(table) == 1 + len(got) and table[0].startswith("query "), table
for q in b["queries"]:
    i = q["id"]
    def mono(s, floor=0):   # a warm lookup can take less than the printed microsecond
        assert floor <= s["p50_ms"] <= s["p95_ms"] <= s["p99_ms"] and s["p99_ms"] > 0, (i, s)
    if i in ("sft", "rl"):
        assert "warm" not in q and "storyline_cold" not in q, q
    else:
        per = b["session_keys"] if i == "lookup_session" else b["keys"]
        n = 2 if q.get("sql") else 2 * per
        assert q["warm"]["n"] == n, (i, q["warm"])
        mono(q["warm"])
    c = q["cold"]
    assert c["n"] == 2, (i, c)
    mono(c, 0.01)                                    # a process takes more than 10 us
    # a cold process's own peak: far below what a copy of the benchmark process would show
    assert 1 < c["peak_rss_mib"] < 200 and c["cpu_ms"] > 0, (i, c)
    assert c["gets"] is None and c["ranges"] is None and c["bytes_requested"] is None, (i, c)   # local: no S3 request
    if i.startswith("point") or i.startswith("lookup") or q.get("sql"):
        assert c["bytes_read"] > 0, (i, c)           # from the cold runs' --stats
    if i.startswith("point"):
        assert c["bytes_decoded"] > 0 and q["rows"] == 1, (i, c)
    if i == "point_preview" or i in ("sft", "rl"):
        assert "storyline_cold" not in q, q
    else:
        assert q["storyline_cold"]["n"] == 2, q
        mono(q["storyline_cold"])
        # `pchronicle get|sql --stats`: the Lance bytes it read; no S3 request here
        assert q["storyline_cold"]["bytes_read"] > 0 and q["storyline_cold"]["gets"] is None, q
print("ok")
PY
# SQL row counts are the rows `sql` prints; the parameters come from the root itself
python3 - "$T/b.json" >"$T/sqls" <<'PY'
import json, sys
for q in json.load(open(sys.argv[1]))["queries"]:
    if q.get("sql"): print("%d\t%s" % (q["rows"], q["sql"]))
PY
while IFS=$'\t' read -r rows sql; do
    got=$("$VX" sql "$R" "$sql" --format jsonl 2>/dev/null | wc -l)
    [ "$got" = "$rows" ] && ok || bad "benchmark said $rows rows, sql prints $got: $sql"
done < "$T/sqls"
has window "$T/b.json" '"sql":"SELECT model_name, count\(\*\) FROM steps WHERE timestamp_ms >= [0-9]+ AND timestamp_ms < [0-9]+ GROUP BY model_name"'
has function "$T/b.json" "\"sql\":\"SELECT count\(\*\) FROM tool_calls WHERE function_name = '[^']+'\""

run only 0 "$VX" benchmark "$R" --keys 2 --repeat 1 --cold 0 --only point_full,scan_source --json - --quiet
python3 -c 'import json, sys
b = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert [q["id"] for q in b["queries"]] == ["point_full", "scan_source"], b
assert all("cold" not in q for q in b["queries"]), b' "$T/only.out" && ok || bad "--only / --cold 0: $(tail -1 "$T/only.out")"

# bad input: usage errors exit 2, a root that is not a projection fails with a message
run usage-none 2 "$VX" benchmark
run usage-keys 2 "$VX" benchmark "$R" --keys 0
run usage-only 2 "$VX" benchmark "$R" --only point_full,nope
has usage-only "$T/usage-only.err" "no query 'nope'"
run usage-opt 2 "$VX" benchmark "$R" --frobnicate 1
run usage-two 2 "$VX" benchmark "$R" "$R"
run help 0 "$VX" benchmark --help
has help "$T/help.out" '^usage: pchronicle-vortex benchmark ROOT'
mkdir -p "$T/empty"
run not-root 1 "$VX" benchmark "$T/empty" --quiet
has not-root "$T/not-root.err" '^pchronicle-vortex: benchmark: .+'
run no-storyline 1 "$VX" benchmark "$R" --storyline "$T/empty" --quiet --keys 1 --cold 1 --only point_full
has no-storyline "$T/no-storyline.err" 'pchronicle get exited with'

echo "vortex_benchmark: $n checks, $fail failed"
[ "$fail" = 0 ]
