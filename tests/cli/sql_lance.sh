#!/usr/bin/env bash
# pchronicle sql over Lance datasets (docs/sql.md "Lance datasets"): the `records` relation of
# a compact-jsonl dataset and the `dataset` relation of any other Lance dataset. Every answer
# is compared with the same question computed independently by Python over the source tree
# (records, including offloaded ones, by their exact text), plus pushdown cases (ranges,
# LIKE prefixes, equalities), --version time travel, error reporting, and the same relation
# through the loadable extension in the sqlite3 shell.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
CLI=${PCH_CLI:-$BUILD/pchronicle}   # the valgrind pass of scripts/run-tests.sh sets PCH_CLI
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 shell not installed (scripts/bootstrap.sh installs it)"; exit 1; }

# a generated tree (CRLF lines, a file without a final newline, big records that go to
# offload objects at a 2 KiB threshold, ids and timestamps explicit or generated) and the
# shared agent-log corpus
python3 - "$T/gen" <<'PY'
import json, os, random, sys
out = sys.argv[1]
random.seed(7)
kinds = ["user", "assistant", "tool", "event_msg", "turn_context"]
for d in range(3):
    for f in range(4):
        p = os.path.join(out, "dir%d" % d, "sub" if f % 2 else "", "f%d.jsonl" % f)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        lines = []
        for i in range(40 + d * 10 + f):
            r = {"type": kinds[(i + f) % 5], "n": i, "x": random.random()}
            if i % 7 == 0: r["id"] = "rec-%d-%d-%d" % (d, f, i)
            if i % 3 == 0: r["timestamp"] = "2026-0%d-1%dT10:%02d:00Z" % (1 + d, f, i % 60)
            if i % 17 == 5: r["blob"] = "z" * (3000 + i)          # offloaded at 2 KiB
            lines.append(json.dumps(r, separators=(",", ":")))
        eol = "\r\n" if (d, f) == (1, 2) else "\n"
        text = eol.join(lines) + ("" if (d, f) == (2, 3) else eol)
        open(p, "w", newline="").write(text)
PY
SRC=$REPO/../shared/corpus/jsonl
"$CLI" import --from "$T/gen" --to "$T/gen.lance" --output-format compact-jsonl --offload-threshold 2048 --quiet || bad "import gen"
if [ -d "$SRC" ]; then   # its one invalid file left out (tests/cli/compact_jsonl.sh checks it is refused)
    mkdir "$T/corpus"
    (cd "$SRC" && find . -type f \( -iname '*.json' -o -iname '*.jsonl' -o -iname '*.ndjson' \) ! -name 'claude-code-log.edge_cases.jsonl' -exec cp --parents {} "$T/corpus" \;)
    "$CLI" import --from "$T/corpus" --to "$T/corpus.lance" --output-format compact-jsonl --offload-threshold 65536 --quiet || bad "import corpus"
fi

# q NAME DATASET SQL: jsonl answer into $T/NAME.got (exit status must be 0)
q() { "$CLI" sql "$2" "$3" --format jsonl >"$T/$1.got" 2>"$T/$1.err" || { bad "sql $1: $(head -c 300 "$T/$1.err")"; }; }

check_tree() {  # check_tree NAME DATASET TREE
    local n=$1 ds=$2 tree=$3
    q "$n-records" "$ds" "SELECT filename, record FROM records"
    q "$n-types" "$ds" "SELECT json_extract(record, '\$.type') AS t, count(*) AS n FROM records GROUP BY 1 ORDER BY 1"
    q "$n-files" "$ds" "SELECT filename, count(*) AS n FROM records GROUP BY 1 ORDER BY 1"
    q "$n-like" "$ds" "SELECT filename, count(*) AS n FROM records WHERE filename LIKE 'dir1/%' GROUP BY 1 ORDER BY 1"
    q "$n-range" "$ds" "SELECT id FROM records WHERE id >= 'dir0/f0' AND id < 'dir0/f1' ORDER BY 1"
    q "$n-ids" "$ds" "SELECT id FROM records"
    q "$n-eq" "$ds" "SELECT filename, record FROM records WHERE id = 'rec-1-2-14'"
    q "$n-data" "$ds" "SELECT json_extract(data, '\$.type') AS t, count(*) AS n FROM records WHERE _offload_ IS NULL GROUP BY 1 ORDER BY 1"
    q "$n-offload" "$ds" "SELECT count(*) AS n, sum(length(CAST(record AS BLOB))) AS b FROM records WHERE _offload_ IS NOT NULL"
    python3 - "$tree" "$T" "$n" <<'PY' || bad "$n: answers differ from the source tree"
import json, os, sys
tree, T, n = sys.argv[1:4]
recs = []                      # (filename, record text without its line terminator)
for d, _, fs in os.walk(tree):
    for f in fs:
        if not f.endswith((".jsonl", ".ndjson", ".json")) and not f.lower().endswith(".ndjson"): continue
        p = os.path.join(d, f); rel = os.path.relpath(p, tree)
        b = open(p, "rb").read()
        if f.endswith(".json") and not f.endswith(".jsonl"):
            t = b.decode()
            if t.endswith("\n"): t = t[:-1]
            if t.endswith("\r"): t = t[:-1]
            if t.strip(): recs.append((rel, t))
            continue
        for line in b.split(b"\n"):
            if line.endswith(b"\r"): line = line[:-1]
            if line.strip(): recs.append((rel, line.decode()))
def got(name): return [json.loads(l) for l in open(os.path.join(T, "%s-%s.got" % (n, name)))]
ok = True
def same(name, want, have):
    global ok
    if want != have:
        ok = False
        print("FAIL %s-%s: want %s... got %s..." % (n, name, str(want)[:300], str(have)[:300]))
same("records", sorted(recs), sorted((r["filename"], r["record"]) for r in got("records")))
types = {}
for _, t in recs:
    v = json.loads(t); k = v.get("type") if isinstance(v, dict) else None
    if isinstance(k, (dict, list)): k = json.dumps(k, separators=(",", ":"))
    types[k] = types.get(k, 0) + 1
same("types", sorted(types.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")),
     sorted(((r["t"], r["n"]) for r in got("types")), key=lambda kv: (kv[0] is not None, kv[0] or "")))
files = {}
for f, _ in recs: files[f] = files.get(f, 0) + 1
same("files", sorted(files.items()), [(r["filename"], r["n"]) for r in got("files")])
same("like", sorted((f, c) for f, c in files.items() if f.lower().startswith("dir1/")), [(r["filename"], r["n"]) for r in got("like")])
print("%s: %d records, %d files, %d types checked" % (n, len(recs), len(files), len(types)))
sys.exit(0 if ok else 1)
PY
}
check_tree gen "$T/gen.lance" "$T/gen"
[ -d "$SRC" ] && check_tree corpus "$T/corpus.lance" "$T/corpus"

# generated ids (path#line), explicit ids, ranges and offloaded rows of the generated tree
python3 - "$T" <<'PY' || bad "gen: pushdown answers"
import json, os, sys
T = sys.argv[1]
rng = [json.loads(l)["id"] for l in open(os.path.join(T, "gen-range.got"))]
ids = [json.loads(l)["id"] for l in open(os.path.join(T, "gen-ids.got"))]
assert rng and rng == sorted(i for i in ids if "dir0/f0" <= i < "dir0/f1"), (rng[:5], len(ids))
eq = [json.loads(l) for l in open(os.path.join(T, "gen-eq.got"))]
assert len(eq) == 1 and json.loads(eq[0]["record"])["n"] == 14 and eq[0]["filename"] == "dir1/f2.jsonl", eq
off = [json.loads(l) for l in open(os.path.join(T, "gen-offload.got"))][0]
assert off["n"] > 0 and off["b"] > 3000 * off["n"], off
data = {r["t"]: r["n"] for r in map(json.loads, open(os.path.join(T, "gen-data.got")))}
assert sum(data.values()) > 0 and None not in data, data
PY

# --version: every compact-jsonl import or sync publishes a complete new dataset (version 1),
# so time travel is shown on a dataset that `lance write --append` gives a second version
printf '{"i":1}\n{"i":2}\n' | "$CLI" lance write "$T/v.lance" --schema <(echo '{"fields":[{"name":"i","type":"int64"}]}') >/dev/null || bad "lance write v1"
printf '{"i":3}\n' | "$CLI" lance write "$T/v.lance" --append >/dev/null || bad "lance write --append v2"
[ "$("$CLI" sql "$T/v.lance" "SELECT count(*) FROM dataset" --format csv | tail -n 1)" = 3 ] || bad "--version latest"
[ "$("$CLI" sql "$T/v.lance" "SELECT sum(i) FROM dataset" --format csv --version 1 | tail -n 1)" = 3 ] || bad "--version 1"
"$CLI" sql "$T/v.lance" "SELECT 1" --version 9 >/dev/null 2>"$T/v9.err"; rc=$?
[ $rc = 1 ] && grep -q 'version 9' "$T/v9.err" || bad "--version 9: exit $rc $(cat "$T/v9.err")"
"$CLI" sql "$T/v.lance" "SELECT 1" --version x >/dev/null 2>&1; [ $? = 2 ] || bad "--version x must be a usage error"
"$CLI" sql "$T/gen.lance" "SELECT count(*) FROM records" --version 1 --format csv >/dev/null || bad "--version 1 of a compact-jsonl dataset"

# errors: a path that is no dataset, an SQL error, a relation that does not exist
mkdir -p "$T/plain"; "$CLI" sql "$T/plain" "SELECT 1" >/dev/null 2>"$T/nd.err"; rc=$?
[ $rc = 1 ] && grep -q 'not a Lance dataset' "$T/nd.err" || bad "sql on a plain directory: exit $rc $(cat "$T/nd.err")"
"$CLI" sql "$T/gen.lance" "SELECT nope FROM records" >/dev/null 2>"$T/se.err"; rc=$?
[ $rc = 1 ] && grep -q 'no such column: nope' "$T/se.err" || bad "SQL error: exit $rc $(cat "$T/se.err")"
"$CLI" sql "$T/gen.lance" "SELECT * FROM steps" >/dev/null 2>"$T/nr.err"; rc=$?
[ $rc = 1 ] && grep -q 'no such table: steps' "$T/nr.err" || bad "missing relation: exit $rc $(cat "$T/nr.err")"

# any other Lance dataset is `dataset`, written by official Lance or by us: exact int64 and
# uint64, floats, text, binary as blob, json as text; pushdown on each scalar kind
cat > "$T/schema.json" <<'EOF'
{"fields": [{"name": "i", "type": "int64"}, {"name": "u", "type": "uint64", "nullable": true},
            {"name": "f", "type": "float64", "nullable": true}, {"name": "s", "type": "utf8", "nullable": true},
            {"name": "b", "type": "binary", "nullable": true}, {"name": "j", "type": "json", "nullable": true}]}
EOF
printf '%s\n' '{"i":-9223372036854775808,"u":18446744073709551615,"f":1.5,"s":"a","b":{"base64":"AAE="},"j":{"k":[1,2]}}' \
    '{"i":9223372036854775807,"u":9223372036854775807,"f":-0.25,"s":"b","b":null,"j":null}' \
    '{"i":3,"u":null,"f":null,"s":null,"b":null,"j":"x"}' | "$CLI" lance write "$T/t.lance" --schema "$T/schema.json" >/dev/null || bad "lance write"
"$CLI" sql "$T/t.lance" "SELECT i, u, f, s, hex(b) AS b, j, json_extract(j, '\$.k[1]') AS k FROM dataset" --format jsonl >"$T/t.got" 2>&1 || bad "sql dataset: $(cat "$T/t.got")"
cat > "$T/t.want" <<'EOF'
{"i":-9223372036854775808,"u":"18446744073709551615","f":1.5,"s":"a","b":"0001","j":"{\"k\":[1,2]}","k":2}
{"i":9223372036854775807,"u":9223372036854775807,"f":-0.25,"s":"b","b":"","j":null,"k":null}
{"i":3,"u":null,"f":null,"s":null,"b":"","j":"\"x\"","k":null}
EOF
cmp -s "$T/t.want" "$T/t.got" || { bad "dataset relation values"; diff "$T/t.want" "$T/t.got"; }
for w in "i > 3" "i = 3" "f < 0" "f >= 1.5" "s = 'b'" "s LIKE 'A%'" "u = 9223372036854775807" "i < 0 OR s = 'b'"; do
    a=$("$CLI" sql "$T/t.lance" "SELECT group_concat(i, ';') FROM dataset WHERE $w" --format csv | tail -n 1)
    e=$(sqlite3 :memory: "CREATE TABLE d(i INTEGER, u, f REAL, s TEXT); INSERT INTO d VALUES (-9223372036854775808,'18446744073709551615',1.5,'a'),(9223372036854775807,9223372036854775807,-0.25,'b'),(3,NULL,NULL,NULL); SELECT group_concat(i, ';') FROM d WHERE $w;")
    [ "$a" = "$e" ] || bad "dataset WHERE $w: got '$a', SQLite over the same rows says '$e'"
done
if [ -d "$REPO/../shared/fixtures/lance/events.lance" ]; then
    "$CLI" sql "$REPO/../shared/fixtures/lance/events.lance" "SELECT id, json_extract(data, '\$.level') AS l FROM dataset WHERE id = 'evt-0001'" --format csv >"$T/ev.got" 2>&1
    printf 'id,l\nevt-0001,info\n' | cmp -s - "$T/ev.got" || bad "official Lance dataset: $(cat "$T/ev.got")"
fi

# a wide dataset (80 columns: colUsed has one bit for every column from 63 on)
python3 - "$T" <<'PY'
import json, os, sys
T = sys.argv[1]
json.dump({"fields": [{"name": "c%d" % i, "type": "int64"} for i in range(80)]}, open(os.path.join(T, "wide.json"), "w"))
with open(os.path.join(T, "wide.jsonl"), "w") as f:
    for r in range(50): f.write(json.dumps({"c%d" % i: r * 100 + i for i in range(80)}) + "\n")
PY
"$CLI" lance write "$T/wide.lance" --schema "$T/wide.json" < "$T/wide.jsonl" >/dev/null || bad "lance write wide"
[ "$("$CLI" sql "$T/wide.lance" "SELECT c79, c0, c64 FROM dataset WHERE c70 = 4270 OR c63 > 4860" --format csv | tr '\n' ' ')" = "c79,c0,c64 4279,4200,4264 4879,4800,4864 4979,4900,4964 " ] ||
    bad "wide dataset: $("$CLI" sql "$T/wide.lance" "SELECT c79, c0, c64 FROM dataset WHERE c70 = 4270 OR c63 > 4860" --format csv 2>&1)"

# --stats: a query on id alone reads less than one on data, which reads less than one on
# every column; count(*) reads no data file at all
st() { "$CLI" sql "$T/corpus.lance" "$1" --stats 2>&1 >/dev/null | sed -n 's/^stats: bytes_read=\([0-9]*\) .*/\1/p'; }
if [ -d "$SRC" ]; then
    b_id=$(st "SELECT count(DISTINCT id) FROM records"); b_data=$(st "SELECT count(DISTINCT data) FROM records")
    b_all=$(st "SELECT * FROM records"); b_cnt=$(st "SELECT count(*) FROM records")
    [ -n "$b_id" ] && [ "$b_cnt" = 0 ] && [ "$b_id" -gt 0 ] && [ "$b_id" -lt "$b_data" ] && [ "$b_data" -lt "$b_all" ] ||
        bad "--stats bytes_read: count=$b_cnt id=$b_id data=$b_data all=$b_all"
fi

# CSV quoting (RFC 4180), read back by Python's csv module: a field is quoted when it holds ','
# '"' CR or LF at any position (the output path scans 16 bytes at a time, so positions on
# both sides of 16 and 32), and ends at an embedded NUL as in the sqlite3 shell
python3 - "$CLI" "$T/v.lance" <<'PY' || bad "CSV quoting"
import csv, io, subprocess, sys
cli, root = sys.argv[1], sys.argv[2]
want, sql = [], []
for pos in (0, 1, 14, 15, 16, 17, 31, 32, 33, 47):
    for ch in (",", '"', "\n", "\r", "x"):
        v = "a" * pos + ch + "b" * (40 - pos)
        want.append(v)
        sql.append("'" + v.replace("'", "''") + "'" if ch not in "\r\n" else "'" + v[:pos] + "' || char(%d) || '" % ord(ch) + v[pos + 1:] + "'")
want.append("c" * 20)
sql.append("'" + "c" * 20 + "' || char(0) || 'dropped'")
q = "SELECT " + ", ".join(sql)
out = subprocess.run([cli, "sql", root, q, "--format", "csv"], capture_output=True, check=True).stdout.decode()
rows = list(csv.reader(io.StringIO(out, newline="")))
assert len(rows) == 2 and rows[1] == want, (rows[1:], want)
PY

# the loadable extension serves the same relation
ext=$("$CLI" sql "$T/gen.lance" "SELECT count(*), sum(length(record)) FROM records WHERE filename LIKE 'dir2/%'" --format csv | tail -n 1)
# (a sanitizer build of the extension needs its runtime loaded first into the sqlite3 shell)
pre=$(ldd "$BUILD/pchronicle_sqlite.so" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ { printf "%s ", $3 }')
got=$(LD_PRELOAD="$pre" ASAN_OPTIONS=detect_leaks=0 sqlite3 :memory: ".load $BUILD/pchronicle_sqlite" \
      "CREATE VIRTUAL TABLE temp.r USING lance('$T/gen.lance');" \
      "SELECT count(*) || ',' || sum(length(record)) FROM r WHERE filename LIKE 'dir2/%';" 2>&1)
[ -n "$ext" ] && [ "$got" = "$ext" ] || bad "extension: '$got' vs CLI '$ext'"

[ $fail = 0 ] && echo "sql_lance: ok"
exit $fail
