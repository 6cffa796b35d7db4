#!/usr/bin/env bash
# pchronicle-vortex CLI tests: convert/dump/inspect/check compared with golden output
# (stdout, stderr and exit code exactly), rejection of the pre-stable fixture, and the
# independent flatc structure check (tests/vortex/structure_check.py) over every file this
# script and the vortex_file_test round trips write. `make golden-update`-style refresh:
# PCH_GOLDEN_UPDATE=1 bash tests/cli/vortex_cli.sh rewrites tests/vortex/cli/*.out.
set -u
cd "$(dirname "$0")/../.."
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}   # run-tests.sh sets it to a valgrind wrapper
G=tests/vortex/cli
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0; n=0

check() {  # check NAME CMD... : compare stdout+stderr+rc with $G/NAME.out
    local name=$1; shift
    n=$((n + 1))
    local got="$T/$name.got"
    ( "$@" ) >"$got" 2>&1
    echo "rc=$?" >>"$got"
    if [ "${PCH_GOLDEN_UPDATE:-}" = 1 ]; then cp "$got" "$G/$name.out"; return; fi
    if ! diff -u "$G/$name.out" "$got" >"$T/$name.diff"; then
        echo "FAIL $name"; head -40 "$T/$name.diff"; fail=$((fail + 1))
    fi
}

command -v flatc >/dev/null || { echo "FAIL: flatc (Debian flatbuffers-compiler) is required"; exit 1; }
[ -x "$VX" ] || { echo "FAIL: $VX not built"; exit 1; }
[ -x "$BUILD/pchronicle-vortex" ] || { echo "FAIL: $BUILD/pchronicle-vortex not built"; exit 1; }

check convert "$VX" convert --from "$G/rows.jsonl" --to "$T/a.vortex" --schema "@$G/rows.schema" --chunk-rows 1 --chunk-by traj
check dump "$VX" dump "$T/a.vortex"
check dump_cols "$VX" dump "$T/a.vortex" --columns meta.cost,traj --rows 1..3
check dump_empty "$VX" dump "$T/a.vortex" --rows 2..2
check inspect "$VX" inspect "$T/a.vortex"
check check "$VX" check "$T/a.vortex"
# per-lane compressor report (encode seconds masked: not reproducible)
check convert_report bash -c 'set -o pipefail; "$1" convert --from "$2/rows.jsonl" --to "$3/r.vortex" --schema "@$2/rows.schema" --report |
    awk "NR > 1 { \$7 = \"-\" } { print }"' _ "$VX" "$G" "$T"
check convert_infer "$VX" convert --from "$G/rows.jsonl" --to "$T/b.vortex" --no-compress --zone-len 0
check dump_infer "$VX" dump "$T/b.vortex"
check convert_bad_schema "$VX" convert --from "$G/rows.jsonl" --to "$T/c.vortex" --schema 'traj:i64'
# an atomic writer never renames over something that is not a regular file (a pipe here;
# /dev/null is the case that matters)
mkfifo "$T/pipe.vortex"
n=$((n + 1))
if "$VX" convert --from "$G/rows.jsonl" --to "$T/pipe.vortex" >"$T/pipe.err" 2>&1 || [ ! -p "$T/pipe.vortex" ] ||
   ! grep -q 'exists and is not a regular file' "$T/pipe.err"; then
    echo "FAIL convert over a pipe: $(cat "$T/pipe.err")"; fail=$((fail + 1))
fi
rm -f "$T/pipe.vortex"     # (the structure check below opens every *.vortex here)
check legacy "$VX" dump tests/data/vortex/legacy-pre036-example.vortex
check missing "$VX" inspect tests/data/vortex/nope.vortex
check usage "$VX" frobnicate
cp tests/data/vortex/worked_example.vortex "$T/"

# differential: Lance dataset (our Lance writer) -> convert -> same rows as `pchronicle lance dump`
if [ -x "$BUILD/pchronicle" ]; then
    n=$((n + 1))
    if "$BUILD/pchronicle" lance write "$T/flat.lance" --schema "$G/flat_lance_schema.json" <"$G/flat.jsonl" >/dev/null 2>"$T/lw.err" &&
       "$VX" convert --from "$T/flat.lance" --to "$T/flat.vortex" >/dev/null 2>"$T/cv.err" &&
       "$BUILD/pchronicle" lance dump "$T/flat.lance" | tail -n +2 >"$T/lance.rows" &&
       "$VX" dump "$T/flat.vortex" | tail -n +2 >"$T/vortex.rows" &&
       cmp -s "$T/lance.rows" "$T/vortex.rows" && [ -s "$T/vortex.rows" ] &&
       # same header shape: the Lance header minus the dataset version, large_utf8 -> utf8
       "$BUILD/pchronicle" lance dump "$T/flat.lance" | head -n 1 | sed 's/^{"version":[0-9]*,/{/; s/"large_utf8"/"utf8"/g' >"$T/lance.hdr" &&
       "$VX" dump "$T/flat.vortex" | head -n 1 | cmp -s - "$T/lance.hdr"; then :; else
        echo "FAIL lance->vortex differential"; cat "$T/lw.err" "$T/cv.err" 2>/dev/null | head; diff "$T/lance.rows" "$T/vortex.rows" | head; "$VX" dump "$T/flat.vortex" | head -n 1 | diff "$T/lance.hdr" - ; fail=$((fail + 1))
    fi
else
    echo "FAIL: $BUILD/pchronicle not built (needed for the Lance differential)"; fail=$((fail + 1))
fi

# the pchronicle program links no Vortex code (ARCHITECTURE.md §3)
if [ -x "$BUILD/pchronicle" ] && nm "$BUILD/pchronicle" 2>/dev/null | grep -qi 'pch_vx_'; then
    echo "FAIL: pchronicle links Vortex symbols"; fail=$((fail + 1))
fi

# structure check over everything written here and by the unit test's round trips
if [ -x "$BUILD/tests/vortex_file_test" ]; then
    mkdir -p "$T/rt"
    PCH_VX_DUMP_DIR="$T/rt" "$BUILD/tests/vortex_file_test" >/dev/null 2>&1 || { echo "FAIL: vortex_file_test"; fail=$((fail + 1)); }
    cp "$T"/rt/*.vortex "$T/" 2>/dev/null
fi
if [ -x "$BUILD/tests/vortex_fsst_test" ]; then
    mkdir -p "$T/fsst"
    PCH_VX_DUMP_DIR="$T/fsst" "$BUILD/tests/vortex_fsst_test" >/dev/null 2>&1 || { echo "FAIL: vortex_fsst_test"; fail=$((fail + 1)); }
    cp "$T"/fsst/*.vortex "$T/" 2>/dev/null
fi
if ! python3 tests/vortex/structure_check.py "$T"/*.vortex >"$T/structure.log" 2>&1; then
    echo "FAIL structure check"; grep -v '^ok' "$T/structure.log" | head -20; fail=$((fail + 1))
fi
files=$(grep -c '^ok' "$T/structure.log")
echo "vortex_cli: $n golden checks, $files files structure-checked, $fail failed"
[ "$fail" -eq 0 ]
