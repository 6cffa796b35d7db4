#!/usr/bin/env bash
# `pchronicle sql` over a compact-jsonl dataset beside DuckDB (issue: Compact JSONL second
# round; not part of make test). On one corpus of ../shared/bench/cj (default scaled):
#   * Q1 `count(*) GROUP BY json_extract(data, '$.type')`: pchronicle sql over our dataset
#     (whole process wall time, best of RUNS) vs DuckDB over the bench's `duckdb-objects`
#     Parquet (each record's JSON text + filename; the same question with json_extract on
#     the JSON text; in-process query time, best of RUNS, 2 threads). Goal: ≤ 1.5× DuckDB.
#   * Q2 a query on id/filename only (`count(*), count(DISTINCT filename) ... WHERE id >= ?`)
#     and Q3 a LIKE-prefix filename query: bytes the process read (sum of read/pread
#     results under strace) against the dataset's bytes. Goal: ≤ 10 %.
# Environment: BUILD (build), CORPUS (scaled), CJ_CORPUS (/tmp/cj-corpus), OUT (/tmp/cj-sql),
# RUNS (3), PCH_CACHE (.cache: the DuckDB node modules installed by bootstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
CORPUS=${CORPUS:-scaled}
CJ_CORPUS=${CJ_CORPUS:-/tmp/cj-corpus}
OUT=${OUT:-/tmp/cj-sql}
RUNS=${RUNS:-3}
CACHE=${PCH_CACHE:-$REPO/.cache}
SHARED=$REPO/../shared/bench/cj
CLI=$BUILD/pchronicle
mkdir -p "$OUT"
say() { echo "[cj_sql $(date +%T)] $*" >&2; }
[ -d "$CJ_CORPUS/$CORPUS" ] || python3 "$SHARED/make-corpus.py" "$CORPUS" --out "$CJ_CORPUS"
TREE=$CJ_CORPUS/$CORPUS
DS=$OUT/$CORPUS.lance
PQ=$OUT/$CORPUS.objects.parquet
[ -d "$DS" ] || { say "import $TREE"; "$CLI" import --from "$TREE" --to "$DS" --output-format compact-jsonl --quiet; }
export NODE_PATH=$CACHE/duckdb/node_modules
[ -f "$PQ" ] || { say "duckdb objects parquet"; node "$SHARED/duckdb-peer.mjs" import "$TREE" "$PQ" --mode objects >/dev/null; }

best() { python3 -c 'import sys; v=sorted(float(x) for x in sys.argv[1:]); print("%.3f" % v[0])' "$@"; }
wall() {  # wall CMD...: seconds of one run (output discarded)
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
    python3 -c "print($t1 - $t0)"
}
Q1_PCH="SELECT json_extract(data, '\$.type') AS t, count(*) AS n FROM records GROUP BY 1 ORDER BY 2 DESC"
Q1_DUCK="SELECT json_extract_string(json, '\$.type') AS t, count(*) AS n FROM objects GROUP BY 1 ORDER BY 2 DESC"
say "Q1 pchronicle"
p=(); for i in $(seq "$RUNS"); do p+=("$(wall "$CLI" sql "$DS" "$Q1_PCH")"); done
say "Q1 duckdb"
d=$(node "$REPO/bench/cj_sql/duckdb_query.mjs" "$PQ" "$Q1_DUCK" "$RUNS")
dbest=$(python3 -c 'import json,sys; print("%.3f" % min(json.loads(sys.argv[1])["runs"]))' "$d")
pbest=$(best "${p[@]}")
# answers agree (inline rows: data holds the record; offloaded rows have data = null, so
# DuckDB's count for their types is compared through `record` too)
"$CLI" sql "$DS" "SELECT json_extract(record, '\$.type') AS t, count(*) AS n FROM records GROUP BY 1 ORDER BY 1" --format csv > "$OUT/q1.pch.csv"
node -e '
const { DuckDBInstance } = require("@duckdb/node-api");
(async () => { const i = await DuckDBInstance.create(":memory:"); const c = await i.connect();
  const r = await c.runAndReadAll(`select json_extract_string(json, $$$.type$$) t, count(*) n from read_parquet($$'"$PQ"'$$) group by 1 order by 1`);
  console.log("t,n"); for (const [t, n] of r.getRows()) console.log(`${t === null ? "" : t},${n}`); })();' > "$OUT/q1.duck.csv"
agree=$(cmp -s <(sort "$OUT/q1.pch.csv") <(sort "$OUT/q1.duck.csv") && echo yes || echo "no (see $OUT/q1.*.csv)")

bytes_read() {  # bytes_read CMD...: sum of read/pread64 return values
    strace -f -qq -e trace=read,pread64 -o "$OUT/strace.txt" "$@" >/dev/null
    python3 -c '
import re,sys
t=0
for l in open(sys.argv[1]):
    m=re.search(r"= (\d+)$", l.strip())
    if m and ("read(" in l or "pread64(" in l): t+=int(m.group(1))
print(t)' "$OUT/strace.txt"
}
dsbytes=$(du -sb "$DS" | cut -f1)
Q2="SELECT count(*), count(DISTINCT filename) FROM records WHERE id >= 'codex/'"
Q3="SELECT filename, count(*) FROM records WHERE filename LIKE 'trajectories/%' GROUP BY 1"
say "Q2/Q3 bytes read"
b2=$(bytes_read "$CLI" sql "$DS" "$Q2"); b3=$(bytes_read "$CLI" sql "$DS" "$Q3")
q2t=(); for i in $(seq "$RUNS"); do q2t+=("$(wall "$CLI" sql "$DS" "$Q2")"); done
python3 - "$CORPUS" "$pbest" "$dbest" "$agree" "$dsbytes" "$b2" "$b3" "$(best "${q2t[@]}")" <<'PY' | tee "$OUT/table.md"
import sys
c, p, d, agree, ds, b2, b3, q2 = sys.argv[1:9]
p, d, ds, b2, b3 = float(p), float(d), int(ds), int(b2), int(b3)
print("| corpus | query | pchronicle sql | DuckDB (objects Parquet) | ratio | goal | verdict |")
print("| --- | --- | --- | --- | --- | --- | --- |")
print("| %s | Q1 count(*) GROUP BY json_extract(data,'$.type') | %.3f s (process) | %.3f s (in-process) | %.2fx | <= 1.5x | %s |" % (c, p, d, p / d, "met" if p <= 1.5 * d else "not met"))
print("| %s | Q1 answers equal | %s | | | equal | |" % (c, agree))
print("| %s | Q2 id/filename only: bytes read | %.1f MB of %.1f MB (%.2f %%), %s s | | | <= 10 %% | %s |" % (c, b2 / 1e6, ds / 1e6, 100.0 * b2 / ds, q2, "met" if b2 <= 0.1 * ds else "not met"))
print("| %s | Q3 filename LIKE prefix: bytes read | %.1f MB (%.2f %%) | | | <= 10 %% | %s |" % (c, b3 / 1e6, 100.0 * b3 / ds, "met" if b3 <= 0.1 * ds else "not met"))
PY
