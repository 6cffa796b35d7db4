#!/usr/bin/env bash
# Official-Lance compatibility suite of the Lance TABLE layer and `pchronicle lance`
# (docs/lance.md; lance-format.md §1, §3, §4). The oracle is npm @lancedb/lancedb 0.31.0
# (= Lance 8.0.0), installed by scripts/bootstrap.sh into ${PCH_CACHE:-.cache}/lance-oracle.
# Fails loudly when node, python3, the oracle or the CLI is missing: never skips.
#
#  (a) official Lance reads what `pchronicle lance write` produced, rows equal to ours and to
#      the input: 200,000 rows x every type with nulls everywhere in several fragments; values
#      of 0 B .. 5 MiB (files 2.1 and 2.0); an appended second version
#  (b) official JSON filters (json_get_int, json_get_string, json_extract, json_exists,
#      json_array_contains, json_array_length, json_get_float, json_get_bool, json_get) match
#      the same rows on JSON we wrote as on the same documents written by official Lance
#  (c) we read datasets official Lance wrote at storage versions 2.1 and 2.0 (generated now,
#      plus the fixtures in tests/data/lance) with identical rows
#  (d) official Lance appends (table.add) to a dataset we wrote; we read the result
# Test data: tests/compat/lance_compat_gen.py (deterministic); comparison:
# tests/compat/lance_compat_cmp.py; appends: tests/compat/lance_append.js.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
BUILD=${PCH_BUILD:-build}
CLI=${PCH_CLI:-$REPO/$BUILD/pchronicle}
ORACLE_DIR=${PCH_CACHE:-$REPO/.cache}/lance-oracle
ORACLE=$ORACLE_DIR/oracle.js
die() { echo "lance_compat: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node is not installed (run scripts/bootstrap.sh)"
command -v python3 >/dev/null || die "python3 is not installed"
[ -f "$ORACLE" ] && [ -d "$ORACLE_DIR/node_modules/@lancedb/lancedb" ] ||
    die "the Lance oracle is missing at $ORACLE_DIR (run scripts/bootstrap.sh)"
[ -x "$CLI" ] || die "$CLI is not built"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-lance-compat.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
CMP="python3 tests/compat/lance_compat_cmp.py"
python3 tests/compat/lance_compat_gen.py "$tmp" || die "test data generator failed"
bad=0; n=0
fail() { echo "FAIL $*"; bad=$((bad + 1)); }
ok() { echo "ok   $*"; }
oracle_dump() {  # oracle_dump DATASET OUT [--where SQL]
    local ds=$1 out=$2; shift 2
    node "$ORACLE" dump "$ds" "$@" >"$out" 2>"$out.err" || { head -c 2000 "$out.err"; return 1; }
}
ours_write() {  # ours_write CASE DATASET [options]
    local c=$1 ds=$2; shift 2
    "$CLI" lance write "$ds" --schema "$tmp/$c.schema.json" "$@" <"$tmp/$c.jsonl" 2>"$ds.err" ||
        { head -c 2000 "$ds.err"; return 1; }
}
# compare: oracle dump vs our dump, and our dump vs the input
check_ours() {  # check_ours LABEL CASE DATASET
    local label=$1 c=$2 ds=$3 out
    n=$((n + 1))
    oracle_dump "$ds" "$ds.oracle" || { fail "$label: the official reader rejected our dataset"; return; }
    "$CLI" lance dump "$ds" >"$ds.ours" 2>"$ds.ours.err" || { fail "$label: our dump: $(head -c 500 "$ds.ours.err")"; return; }
    out=$($CMP "$ds.oracle" "$ds.ours") || { fail "$label: official reader vs ours:"; echo "$out" | sed 's/^/    /'; return; }
    if [ -n "$c" ]; then
        out=$($CMP --input "$tmp/$c.jsonl" "$ds.ours") || { fail "$label: input vs ours:"; echo "$out" | sed 's/^/    /'; return; }
    fi
    ok "$label ($out)"
}

# ---- (a) official Lance reads what we wrote
ds=$tmp/big.lance
if ours_write big "$ds" --max-rows-per-file 60000; then
    nfrag=$(ls "$ds/data" | wc -l)
    [ "$nfrag" = 4 ] || fail "big: expected 4 data files, found $nfrag"
    check_ours "a: big 200,000 rows x 17 columns, 4 fragments (2.1)" big "$ds"
else fail "a: big: pchronicle lance write failed"; fi
for fv in 2.1 2.0; do
    ds=$tmp/huge-$fv.lance
    if ours_write huge "$ds" --file-version "$fv" --max-rows-per-file 5; then
        check_ours "a: values of 0 B .. 5 MiB, 3 fragments ($fv)" huge "$ds"
    else fail "a: huge $fv: pchronicle lance write failed"; fi
done
ds=$tmp/mixed-ours-2.0.lance
if ours_write mixed "$ds" --file-version 2.0 --max-rows-per-file 5000 &&
   "$CLI" lance write "$ds" --append <"$tmp/extra.jsonl" 2>"$ds.err"; then
    check_ours "a: 2.0 dataset with an appended version (15,000 rows)" "" "$ds"
    grep -q '"version":2,"num_rows":15000' "$ds.oracle" || fail "a: appended version not seen by the official reader"
else fail "a: mixed 2.0 + append: pchronicle lance write failed: $(head -c 300 "$ds.err")"; fi

# ---- (b) JSON filters: our JSONB vs official JSONB
n=$((n + 1))
ours=$tmp/jsonf-ours.lance; theirs=$tmp/jsonf-theirs.lance
if ! ours_write jsonf "$ours"; then fail "b: pchronicle lance write failed"
elif ! node "$ORACLE" write "$theirs" "$tmp/jsonf.spec.json" 2>"$tmp/jw.err" >/dev/null; then
    fail "b: oracle write failed: $(head -c 1000 "$tmp/jw.err")"
else
    fb=0; k=0
    while IFS= read -r where; do
        k=$((k + 1))
        oracle_dump "$ours" "$tmp/w$k.ours" --where "$where" || { fb=1; echo "    filter failed on ours: $where"; continue; }
        oracle_dump "$theirs" "$tmp/w$k.theirs" --where "$where" || { fb=1; echo "    filter failed on official: $where"; continue; }
        mo=$(head -n 1 "$tmp/w$k.ours" | python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_rows"])')
        mt=$(head -n 1 "$tmp/w$k.theirs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_rows"])')
        if [ "$mo" != "$mt" ] || ! cmp -s <(tail -n +2 "$tmp/w$k.ours") <(tail -n +2 "$tmp/w$k.theirs"); then
            fb=1; echo "    $where: $mo rows on ours, $mt on official"
        elif [ "$mo" = 0 ] || [ "$mo" = 3000 ]; then
            fb=1; echo "    $where: matches $mo rows (filter does not discriminate)"
        else
            echo "    $mo matches: $where"
        fi
    done <<'EOF'
json_get_int(doc, 'n') = 3
json_get_string(doc, 'kind') = 'beta'
json_extract(doc, '$.user.name') = '"bob"'
json_exists(doc, '$.user')
json_array_contains(doc, '$.tags', 'x')
json_array_length(doc, '$.tags') > 2
json_get_float(doc, 'score') > 0.5
json_get_bool(doc, 'flag') = true
json_get_int(json_get(doc, 'user'), 'age') < 30
json_get_int(doc, 'big') = 5000000000
doc IS NULL
EOF
    [ "$fb" = 0 ] && ok "b: $k JSON filters select the same rows on our and official JSONB" || fail "b: JSON filters differ"
    # and the JSON values themselves read back equal both ways
    "$CLI" lance dump "$theirs" >"$tmp/jt.ours" 2>/dev/null && oracle_dump "$ours" "$tmp/jo.oracle" &&
        $CMP --rows-only "$tmp/jo.oracle" "$tmp/jt.ours" >/dev/null ||
        fail "b: JSON documents differ between the two writers"
fi

# ---- (c) we read what official Lance wrote
for spec in mixed mixed-2.0; do
    n=$((n + 1))
    ds=$tmp/$spec-theirs.lance
    if ! node "$ORACLE" write "$ds" "$tmp/$spec.spec.json" >/dev/null 2>"$ds.err"; then
        fail "c: $spec: oracle write failed: $(head -c 1000 "$ds.err")"; continue
    fi
    oracle_dump "$ds" "$ds.oracle" || { fail "c: $spec: oracle dump failed"; continue; }
    "$CLI" lance dump "$ds" >"$ds.ours" 2>"$ds.ours.err" || { fail "c: $spec: our dump: $(head -c 500 "$ds.ours.err")"; continue; }
    if out=$($CMP "$ds.oracle" "$ds.ours") && out2=$($CMP --input "$tmp/mixed.jsonl" "$ds.ours"); then
        ok "c: official $spec (12,000 rows x 17 columns): $out"
    else fail "c: $spec:"; echo "$out ${out2:-}" | sed 's/^/    /'; fi
done
fx=tests/data/lance
[ -d "$fx" ] || die "fixtures $fx are missing"
for d in "$fx"/*.lance "$fx"/minimal/*.lance; do
    [ -d "$d/_versions" ] || continue
    n=$((n + 1))
    name=$(basename "$d" .lance)
    want=$fx/expected/$name.jsonl
    [ -f "$want" ] || want=$fx/expected/${name%-*}.jsonl          # minimal/<spec>-<mode>
    [ -f "$want" ] || { fail "c: fixture $name has no expected dump"; continue; }
    "$CLI" lance dump "$d" >"$tmp/fx.$name" 2>"$tmp/fx.err" || { fail "c: fixture $name: $(head -c 500 "$tmp/fx.err")"; continue; }
    # expected dumps predate schema-level metadata in the oracle output: compare rows
    out=$($CMP --rows-only "$want" "$tmp/fx.$name") && ok "c: fixture $name ($out)" || { fail "c: fixture $name"; echo "$out" | sed 's/^/    /'; }
done

# ---- (d) official Lance appends to a dataset we wrote
for fv in 2.1 2.0; do
    n=$((n + 1))
    ds=$tmp/append-$fv.lance
    if ! ours_write mixed "$ds" --file-version "$fv" --max-rows-per-file 7000; then fail "d: write $fv"; continue; fi
    if ! PCH_ORACLE_DIR=$ORACLE_DIR node tests/compat/lance_append.js "$ds" "$tmp/extra.spec.json" 2>"$ds.aerr"; then
        fail "d: official append to our $fv dataset: $(head -c 1500 "$ds.aerr")"; continue
    fi
    cat "$tmp/mixed.jsonl" "$tmp/extra.jsonl" >"$tmp/append.jsonl"
    oracle_dump "$ds" "$ds.oracle" || { fail "d: oracle dump"; continue; }
    "$CLI" lance dump "$ds" >"$ds.ours" 2>"$ds.oerr" || { fail "d: our dump after the official append: $(head -c 500 "$ds.oerr")"; continue; }
    grep -q '"version":2,"num_rows":15000' "$ds.ours" || fail "d: $fv: expected version 2 with 15,000 rows: $(head -c 200 "$ds.ours")"
    if out=$($CMP "$ds.oracle" "$ds.ours") && out2=$($CMP --input "$tmp/append.jsonl" "$ds.ours"); then
        ok "d: official Lance appended 3,000 rows to our $fv dataset; we read all 15,000 ($out)"
    else fail "d: $fv:"; echo "$out ${out2:-}" | sed 's/^/    /'; fi
    # and we append again on top of the official commit
    if "$CLI" lance write "$ds" --append <"$tmp/extra.jsonl" 2>"$ds.err2" && oracle_dump "$ds" "$ds.o3" &&
       grep -q '"version":3,"num_rows":18000' "$ds.o3"; then :; else fail "d: $fv: our append after the official one"; fi
done

[ "$bad" -eq 0 ] || die "$bad of $n checks failed"
echo "lance_compat: $n checks against official Lance 8.0 passed"
