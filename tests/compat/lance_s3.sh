#!/usr/bin/env bash
# Lance datasets on S3 (issue 20 item 4; docs/object-storage.md "Lance datasets on S3"),
# against the run's radosgw (tests/s3/lib.sh) and official Lance 8.0 (npm @lancedb/lancedb
# 0.31.0, the oracle of scripts/bootstrap.sh, which takes s3:// URIs with the endpoint and keys
# as storage options):
#   - official Lance writes datasets of tests/compat/specs (2.0 and 2.1) straight to S3;
#     `pchronicle lance dump s3://...` prints the rows its own dump prints;
#   - `pchronicle lance write s3://...` creates and appends (tests/golden/cli/lance); official
#     Lance reads both versions from S3 as we do;
#   - 8 writers create one dataset at once: exactly one wins (the manifest's create-if-absent);
#   - a dataset that exists is not created again; a missing one is "not a Lance dataset";
#   - a Storyline root imported to S3 (`pchronicle import --to s3://...`) exports, answers SQL
#     and prints trajectories as the same import to a local root does, and official Lance
#     reads its tables from S3 as we do; a second import overwrites it (version 2);
#   - a Compact JSONL dataset imported to S3 (offloaded records included) exports its input
#     byte for byte, inspects and answers SQL as the same import to a local directory, and
#     official Lance reads it; it is not created twice; --yes and `sync --mirror` replace it
#     as Lance's overwrite (versions 2 and 3, exported whole); an offload upload that fails on
#     every try commits nothing.
# Fails loudly, never skips.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${PCH_BUILD:-build}
P=${PCH_CLI:-$PWD/$BUILD/pchronicle}
ORACLE=${PCH_CACHE:-$PWD/.cache}/lance-oracle/oracle.js
die() { echo "lance_s3: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node is not installed (run scripts/bootstrap.sh)"
[ -f "$ORACLE" ] || die "the Lance oracle is missing at $ORACLE (run scripts/bootstrap.sh)"
[ -x "$P" ] || die "$P is not built"
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-lance-s3.XXXXXX") || die "mktemp"
. tests/s3/lib.sh
trap 's3_cleanup; rm -rf "$T"' EXIT
s3_server
U=s3://$B/$PRE
cmp_dumps() {  # NAME WANT GOT
    local out
    if out=$(python3 tests/compat/lance_reader_cmp.py "$2" "$3"); then ok; else bad "$1: $out"; fi
}

# --- official Lance writes to S3, we read
python3 tests/compat/specs/gen_specs.py "$T" || die "spec generator failed"
for spec in varied-2.1 varied-2.0; do
    run "o-write-$spec" 0 node "$ORACLE" write "$U/o-$spec.lance" "$T/$spec.json" || continue
    run "o-dump-$spec" 0 node "$ORACLE" dump "$U/o-$spec.lance"
    run "dump-$spec" 0 "$P" lance dump "$U/o-$spec.lance"
    cmp_dumps "$spec" "$T/o-dump-$spec.out" "$T/dump-$spec.out"
done

# --- we write to S3 (create, then append), official Lance reads
G=tests/golden/cli/lance
"$P" lance write "$U/ours.lance" --schema "$G/schema.json" < "$G/rows.jsonl" > "$T/w1.out" 2>&1 && ok || bad "create: $(cat "$T/w1.out")"
"$P" lance write "$U/ours.lance" --append < "$G/rows.jsonl" > "$T/w2.out" 2>&1 && ok || bad "append: $(cat "$T/w2.out")"
run o-ours 0 node "$ORACLE" dump "$U/ours.lance"
run ours 0 "$P" lance dump "$U/ours.lance"
cmp_dumps "our dataset, version 2" "$T/o-ours.out" "$T/ours.out"
run ours-v1 0 "$P" lance dump "$U/ours.lance" --version 1
rows_of() { head -1 "$1" | python3 -c 'import json,sys; h=json.load(sys.stdin); print(h["version"], h["num_rows"])'; }
read -r v1 n1 < <(rows_of "$T/ours-v1.out"); read -r v2 n2 < <(rows_of "$T/ours.out")
[ "$v1" = 1 ] && [ "$v2" = 2 ] && [ "$n2" = $((2 * n1)) ] && [ "$n1" -gt 0 ] && ok || bad "versions: v$v1 $n1 rows, v$v2 $n2 rows"
"$P" lance write "$U/ours.lance" --schema "$G/schema.json" < "$G/rows.jsonl" > "$T/again.out" 2>&1 && bad "created twice" || ok
has again "$T/again.out" 'already exists'
run missing 1 "$P" lance dump "$U/none.lance"
has missing "$T/missing.err" 'not a Lance dataset'

# --- a Storyline root on S3
SL=$U/storyline
run sl-import 0 "$P" import --from tests/data/atif --to "$SL" --input-format atif --output-format storyline --quiet
run sl-import-local 0 "$P" import --from tests/data/atif --to "$T/sl" --input-format atif --output-format storyline --quiet
run sl-export 0 "$P" export --from "$SL" --to "$T/sl-exp"
run sl-export-local 0 "$P" export --from "$T/sl" --to "$T/sl-exp-local"
diff -r "$T/sl-exp" "$T/sl-exp-local" >/dev/null && ok || bad "storyline export from S3 differs from the local root's"
q="select source, count(*), sum(length(message)) from steps group by source order by 1"
run sl-sql 0 "$P" sql "$SL" "$q" --format csv
run sl-sql-local 0 "$P" sql "$T/sl" "$q" --format csv
same sl-sql "$T/sl-sql.out" "$T/sl-sql-local.out"
key=$("$P" sql "$T/sl" "select trajectory_key from runs order by 1 limit 1" --format csv | tail -1)
run sl-get 0 "$P" get "$SL" "$key" --compact
run sl-get-local 0 "$P" get "$T/sl" "$key" --compact
same sl-get "$T/sl-get.out" "$T/sl-get-local.out"
for t in runs steps tool_calls; do
    run "o-sl-$t" 0 node "$ORACLE" dump "$SL/$t.lance"
    run "sl-$t" 0 "$P" lance dump "$SL/$t.lance"
    cmp_dumps "storyline $t" "$T/o-sl-$t.out" "$T/sl-$t.out"
done
run sl-reimport 0 "$P" import --from tests/data/atif --to "$SL" --input-format atif --output-format storyline --quiet
run sl-inspect 0 "$P" inspect "$SL"
has sl-inspect "$T/sl-inspect.out" '^table steps +version 2 rows 51 files-bytes [1-9]'

# --- a Compact JSONL dataset on S3: the same dataset as locally, offloaded records included
CJIN=$T/cjin
mkdir -p "$CJIN/sub"
cp tests/data/json/lance_events.jsonl tests/data/json/gemini_cli_trajectory.json "$CJIN/"
python3 -c 'import json
for i in range(40): print(json.dumps({"id": "big%d" % i, "blob": "x" * (3000 + 250 * i)}))' > "$CJIN/sub/big.jsonl"
: > "$CJIN/sub/empty.ndjson"
CJ=$U/cj.lance
run cj-import 0 "$P" import --from "$CJIN" --to "$CJ" --output-format compact-jsonl --offload-threshold 4096 --quiet
run cj-import-local 0 "$P" import --from "$CJIN" --to "$T/cj.lance" --output-format compact-jsonl --offload-threshold 4096 --quiet
run cj-export 0 "$P" export --from "$CJ" --to "$T/cj-out" --quiet
diff -r "$CJIN" "$T/cj-out" >/dev/null && ok || bad "compact-jsonl export from S3 differs from its input"
run cj-inspect 0 "$P" inspect "$CJ"
run cj-inspect-local 0 "$P" inspect "$T/cj.lance"
grep -E '^(rows|files|offloaded rows|offload objects|data file bytes):' "$T/cj-inspect.out" > "$T/cj-i1"
grep -E '^(rows|files|offloaded rows|offload objects|data file bytes):' "$T/cj-inspect-local.out" > "$T/cj-i2"
[ "$(wc -l < "$T/cj-i1")" = 5 ] && grep -q '^offload objects: [1-9]' "$T/cj-i1" && ok || bad "cj inspect: $(cat "$T/cj-i1")"
same cj-inspect "$T/cj-i1" "$T/cj-i2"
q="select count(*), count(distinct id), sum(length(record)), count(_offload_) from records"
run cj-sql 0 "$P" sql "$CJ" "$q" --format csv
run cj-sql-local 0 "$P" sql "$T/cj.lance" "$q" --format csv
same cj-sql "$T/cj-sql.out" "$T/cj-sql-local.out"
run o-cj 0 node "$ORACLE" dump "$CJ"
run cj-dump-local 0 "$P" lance dump "$T/cj.lance"
cmp_dumps "compact-jsonl on S3" "$T/o-cj.out" "$T/cj-dump-local.out"
run cj-again 1 "$P" import --from "$CJIN" --to "$CJ" --output-format compact-jsonl --quiet
has cj-again "$T/cj-again.err" 'already exists'
# --yes and sync --mirror replace it by Lance's overwrite: a new version of the new records only
echo '{"id":"added1"}' > "$CJIN/added.jsonl"
run cj-replace 0 "$P" import --from "$CJIN" --to "$CJ" --output-format compact-jsonl --offload-threshold 4096 --yes --quiet
rm "$CJIN/sub/empty.ndjson"; echo '{"id":"added2"}' >> "$CJIN/added.jsonl"
run cj-sync 0 "$P" sync --from "$CJIN" --mirror "$CJ" --offload-threshold 4096 --quiet
run cj-sync-inspect 0 "$P" inspect "$CJ"
has cj-sync-inspect "$T/cj-sync-inspect.out" '^lance version: 3$'
run cj-sync-export 0 "$P" export --from "$CJ" --to "$T/cj-out3" --quiet
diff -r "$CJIN" "$T/cj-out3" >/dev/null && ok || bad "compact-jsonl export after --yes and sync on S3 differs from its input"
run o-cj3 0 node "$ORACLE" dump "$CJ"
has o-cj3 "$T/o-cj3.out" '"added2"'
# an offloaded record's upload fails on every try: nothing is committed
s3_proxy
fault 500@/objects/ 500@/objects/ 500@/objects/ 500@/objects/ 500@/objects/
AWS_ENDPOINT_URL=$PX run cj-fail 1 "$P" import --from "$CJIN" --to "$U/cj-fail.lance" --output-format compact-jsonl --offload-threshold 4096 --quiet
has cj-fail "$T/cj-fail.err" 'HTTP 500'
"$P" objects ls "$U/cj-fail.lance/" > "$T/cj-fail-left"
grep -q -e '_versions/' -e 'data/' "$T/cj-fail-left" && bad "a failed import left: $(head -3 "$T/cj-fail-left")" || ok
run cj-fail-read 1 "$P" export --from "$U/cj-fail.lance" --to "$T/cj-fail-out" --quiet
has cj-fail-read "$T/cj-fail-read.err" 'not a Lance dataset'

# --- 8 writers create one dataset at once: one wins
pids=""
for w in $(seq 1 8); do
    ( "$P" lance write "$U/race.lance" --schema "$G/schema.json" < "$G/rows.jsonl" >"$T/r$w.out" 2>&1; echo $? > "$T/r$w.rc" ) &
    pids="$pids $!"
done
wait $pids
wins=0; for w in $(seq 1 8); do [ "$(cat "$T/r$w.rc")" = 0 ] && wins=$((wins + 1)); done
[ $wins = 1 ] && ok || bad "create race: $wins winners of 8"
run race-dump 0 "$P" lance dump "$U/race.lance"
has race-dump "$T/race-dump.out" '^\{"version":1,'

"$P" objects ls "$U/" 2>/dev/null | while read -r key; do "$P" objects rm "s3://$B/$key" >/dev/null 2>&1; done
echo "lance_s3: $n checks, $fail failed"
[ $fail = 0 ]
