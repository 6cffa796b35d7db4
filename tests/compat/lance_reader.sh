#!/usr/bin/env bash
# Differential check of the Lance data file reader (src/lance/file_reader.c, decode_*.c;
# lance-format.md §2): official Lance 8.0 (npm @lancedb/lancedb 0.31.0, the oracle installed
# by scripts/bootstrap.sh) writes datasets from the specs that tests/compat/specs/gen_specs.py
# generates — 5,000 rows of every integer width (small ranges → bit-packing, extremes),
# bools, floats, repeated strings (dictionary), long text (FSST), binary, JSON, all-null and
# constant columns, null densities; values of 300 B–70 KiB (full-zip, zstd); per-field
# knobs (zstd, lz4, fsst, byte-stream-split, full-zip) — at storage versions 2.0 and 2.1.
# `$PCH_CLI lance dump` must print the same rows as the oracle's `dump` (headers differ in
# format and are not compared; see lance_reader_cmp.py). Fails loudly, never skips.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${PCH_BUILD:-build}
CLI=${PCH_CLI:-$PWD/$BUILD/pchronicle}
ORACLE=${PCH_CACHE:-$PWD/.cache}/lance-oracle/oracle.js
die() { echo "lance_reader: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node is not installed (run scripts/bootstrap.sh)"
command -v python3 >/dev/null || die "python3 is not installed"
[ -f "$ORACLE" ] || die "the Lance oracle is missing at $ORACLE (run scripts/bootstrap.sh)"
[ -x "$CLI" ] || die "$CLI is not built"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-lance-reader-compat.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
python3 tests/compat/specs/gen_specs.py "$tmp" || die "spec generator failed"
n=0; bad=0
for spec in varied-2.1 varied-2.0 big-2.1 big-2.0 knobs-2.1 knobs-2.0; do
    n=$((n + 1))
    ds="$tmp/$spec.lance"
    node "$ORACLE" write "$ds" "$tmp/$spec.json" >/dev/null 2>"$tmp/$spec.werr" ||
        { echo "FAIL $spec: oracle write failed"; head -c 2000 "$tmp/$spec.werr"; bad=$((bad + 1)); continue; }
    node "$ORACLE" dump "$ds" >"$tmp/$spec.want" 2>"$tmp/$spec.derr" ||
        { echo "FAIL $spec: oracle dump failed"; head -c 2000 "$tmp/$spec.derr"; bad=$((bad + 1)); continue; }
    if ! "$CLI" lance dump "$ds" >"$tmp/$spec.got" 2>"$tmp/$spec.err"; then
        echo "FAIL $spec: pchronicle lance dump failed: $(head -c 600 "$tmp/$spec.err")"
        bad=$((bad + 1)); continue
    fi
    if out=$(python3 tests/compat/lance_reader_cmp.py "$tmp/$spec.want" "$tmp/$spec.got"); then
        echo "ok   $spec ($out)"
    else
        echo "FAIL $spec:"; echo "$out" | sed 's/^/  /'
        bad=$((bad + 1))
    fi
done
[ "$bad" -eq 0 ] || die "$bad of $n datasets read differently from official Lance"
echo "lance_reader: $n oracle-written datasets (2.0 and 2.1) read identically"
