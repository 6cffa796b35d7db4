#!/usr/bin/env bash
# Lance -> Vortex conversion against official Lance (docs/vortex.md "Tests"; issue 5): the
# official Lance 8.0 writer (npm @lancedb/lancedb 0.31.0, the oracle installed by
# scripts/bootstrap.sh) writes datasets from the specs of tests/compat/specs/gen_specs.py —
# every supported type (all integer widths with extremes, bool, float32/64, utf8/large_utf8,
# binary/large_binary, JSON), nulls at every density, all-null and constant columns, 300 B to
# 70 KiB values, per-field Lance encodings (zstd, lz4, fsst, byte-stream-split, full-zip), a
# few thousand rows — at storage versions 2.0 and 2.1, plus a three-fragment dataset (two
# appends). Each is converted with `pchronicle-vortex convert` (several option sets), checked
# with `pchronicle-vortex check`, and `pchronicle-vortex dump` must print the same header
# shape, the same rows as `pchronicle lance dump`, and the same rows as the oracle's dump
# (JSON columns are utf8 text on the Vortex side: tests/compat/vortex/convert_cmp.py).
# Fails loudly, never skips, when node or the oracle is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${PCH_BUILD:-build}
CLI=${PCH_CLI:-$PWD/$BUILD/pchronicle}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}
ORACLE=${PCH_CACHE:-$PWD/.cache}/lance-oracle/oracle.js
die() { echo "vortex_convert: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node is not installed (run scripts/bootstrap.sh)"
command -v python3 >/dev/null || die "python3 is not installed"
[ -f "$ORACLE" ] || die "the Lance oracle is missing at $ORACLE (run scripts/bootstrap.sh)"
[ -x "$CLI" ] || die "$CLI is not built"
[ -x "$VX" ] || die "$VX is not built"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-vortex-convert.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
python3 tests/compat/specs/gen_specs.py "$tmp" || die "spec generator failed"
# three fragments: the small spec's rows committed as a create and two appends
python3 - "$tmp" <<'PY' || die "fragment spec failed"
import json, sys
s = json.load(open(sys.argv[1] + "/small-2.1.json"))
r = s["rows"]
s["rows"], s["appends"] = r[:400], [r[400:700], r[700:]]
json.dump(s, open(sys.argv[1] + "/frags-2.1.json", "w"))
PY
n=0; bad=0
# spec | convert options
while IFS='|' read -r spec opts; do
    n=$((n + 1))
    ds="$tmp/$spec.lance"
    node "$ORACLE" write "$ds" "$tmp/$spec.json" >/dev/null 2>"$tmp/$spec.werr" ||
        { echo "FAIL $spec: oracle write failed"; head -c 2000 "$tmp/$spec.werr"; bad=$((bad + 1)); continue; }
    node "$ORACLE" dump "$ds" >"$tmp/$spec.oracle" 2>"$tmp/$spec.derr" ||
        { echo "FAIL $spec: oracle dump failed"; head -c 2000 "$tmp/$spec.derr"; bad=$((bad + 1)); continue; }
    "$CLI" lance dump "$ds" >"$tmp/$spec.lance.txt" 2>"$tmp/$spec.lerr" ||
        { echo "FAIL $spec: pchronicle lance dump failed: $(head -c 600 "$tmp/$spec.lerr")"; bad=$((bad + 1)); continue; }
    # shellcheck disable=SC2086
    "$VX" convert --from "$ds" --to "$tmp/$spec.vortex" $opts >/dev/null 2>"$tmp/$spec.cerr" ||
        { echo "FAIL $spec: convert $opts failed: $(head -c 600 "$tmp/$spec.cerr")"; bad=$((bad + 1)); continue; }
    "$VX" check "$tmp/$spec.vortex" >"$tmp/$spec.check" 2>&1 ||
        { echo "FAIL $spec: check failed: $(head -c 600 "$tmp/$spec.check")"; bad=$((bad + 1)); continue; }
    "$VX" dump "$tmp/$spec.vortex" >"$tmp/$spec.vortex.txt" 2>"$tmp/$spec.verr" ||
        { echo "FAIL $spec: dump failed: $(head -c 600 "$tmp/$spec.verr")"; bad=$((bad + 1)); continue; }
    if out=$(python3 tests/compat/vortex/convert_cmp.py "$tmp/$spec.lance.txt" "$tmp/$spec.vortex.txt" "$tmp/$spec.oracle"); then
        echo "ok   $spec [${opts:-defaults}] ($(tail -n 1 <<<"$out"), $(stat -c %s "$tmp/$spec.vortex") bytes)"
    else
        echo "FAIL $spec [${opts:-defaults}]:"; echo "$out" | sed 's/^/  /'
        bad=$((bad + 1))
    fi
done <<'CASES'
varied-2.1|
varied-2.0|--chunk-rows 700 --chunk-by dict_s --zone-len 256
small-2.0|--no-compress --no-dict --zone-len 0
knobs-2.1|--chunk-rows 1000
knobs-2.0|
big-2.1|--chunk-rows 16
big-2.0|--no-compress
frags-2.1|--chunk-rows 333
CASES
[ "$bad" -eq 0 ] || die "$bad of $n converted datasets differ"
echo "vortex_convert: $n official-Lance datasets (2.0 and 2.1) converted, same rows as pchronicle lance dump and the oracle"
