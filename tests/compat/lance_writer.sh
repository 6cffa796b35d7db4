#!/usr/bin/env bash
# Official-reader check of the Lance data file writer (src/lance/file_writer.c, encode_2x.c;
# lance-format.md §2): build/tests/lance_writer_test --gen writes datasets covering every
# type, nulls none/some/all/in blocks, empty and multi-MiB values, multi-chunk and
# multi-page columns, 200,000 rows, zstd on and off, files 2.1 and 2.0, with the expected
# rows beside each; the official Lance 8.0 reader (npm @lancedb/lancedb 0.31.0, the oracle
# installed by scripts/bootstrap.sh) must print exactly those rows and that schema.
# Fails loudly, never skips, when node or the oracle is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${PCH_BUILD:-build}
ORACLE=${PCH_CACHE:-$PWD/.cache}/lance-oracle/oracle.js
GEN=$BUILD/tests/lance_writer_test
die() { echo "lance_writer: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node is not installed (run scripts/bootstrap.sh)"
[ -f "$ORACLE" ] || die "the Lance oracle is missing at $ORACLE (run scripts/bootstrap.sh)"
[ -x "$GEN" ] || die "$GEN is not built (make BUILD=$BUILD $GEN)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-lance-writer-compat.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
"$GEN" --gen "$tmp" >"$tmp/cases" || die "generator failed"
n=0; bad=0
while read -r c; do
    n=$((n + 1))
    if ! node "$ORACLE" dump "$tmp/$c" >"$tmp/$c.got" 2>"$tmp/$c.err"; then
        echo "FAIL $c: the official reader rejected the dataset:"; head -c 3000 "$tmp/$c.err"; echo
        bad=$((bad + 1)); continue
    fi
    rows=$(wc -l <"$tmp/$c.expected.jsonl")
    head -n 1 "$tmp/$c.got" >"$tmp/$c.header"
    if ! grep -qF "\"version\":1,\"num_rows\":$rows," "$tmp/$c.header" ||
       ! grep -qF "$(cat "$tmp/$c.expected.fields")" "$tmp/$c.header"; then
        echo "FAIL $c: header differs"; echo "  got:  $(head -c 1500 "$tmp/$c.header")"
        echo "  want: rows $rows, $(cat "$tmp/$c.expected.fields")"
        bad=$((bad + 1)); continue
    fi
    if ! tail -n +2 "$tmp/$c.got" | cmp -s - "$tmp/$c.expected.jsonl"; then
        echo "FAIL $c: rows differ (first differing lines, got vs want):"
        tail -n +2 "$tmp/$c.got" | diff - "$tmp/$c.expected.jsonl" | head -n 6 | cut -c 1-600
        bad=$((bad + 1)); continue
    fi
    echo "ok   $c ($rows rows)"
done <"$tmp/cases"
[ "$n" -gt 0 ] || die "the generator produced no datasets"
[ "$bad" -eq 0 ] || die "$bad of $n datasets not read back identically by official Lance"
echo "lance_writer: $n datasets read back identically by official Lance 8.0"
