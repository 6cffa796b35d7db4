#!/usr/bin/env bash
# CLI goldens for `pchronicle lance write|dump`, --help, --version and exit codes
# (docs/cli.md): exact stdout + stderr + exit status of each case is compared with
# tests/golden/cli/lance/<case>.out / .rc. PCH_GOLDEN_UPDATE=1 rewrites the expected files.
# Commands run inside a scratch directory so that paths in messages are stable.
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
CLI=${PCH_CLI:-$REPO/build/pchronicle}
case $CLI in /*) ;; *) CLI=$REPO/$CLI ;; esac
G=$REPO/tests/golden/cli/lance
[ -x "$CLI" ] || { echo "lance_cli: missing $CLI"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-lance-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0; n=0
check() {  # check NAME STDIN_FILE ARGS...   (stdout then stderr, then exit status)
    local name=$1 in=$2; shift 2
    local rc
    n=$((n + 1))
    "$CLI" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"; rc=$?
    cat "$tmp/err" >>"$tmp/out"
    if [ "${PCH_GOLDEN_UPDATE:-0}" = 1 ]; then
        cp "$tmp/out" "$G/$name.out"; echo "$rc" >"$G/$name.rc"; return
    fi
    if ! cmp -s "$tmp/out" "$G/$name.out" || [ "$rc" != "$(cat "$G/$name.rc")" ]; then
        echo "FAIL $name (exit $rc, want $(cat "$G/$name.rc"))"
        diff "$tmp/out" "$G/$name.out" | head -20
        fail=1
    fi
}
check version /dev/null --version
# the verb list grows as verbs are added: check only what this suite owns
out=$("$CLI" --help); rc=$?
{ [ $rc = 0 ] && grep -q '^  lance ' <<<"$out" && grep -q 'Exit status: 0 success, 1 error, 2 usage error' <<<"$out"; } ||
    { echo "FAIL --help (exit $rc)"; fail=1; }
"$CLI" >/dev/null 2>"$tmp/err"; rc=$?
{ [ $rc = 2 ] && grep -q '^usage: pchronicle' "$tmp/err"; } || { echo "FAIL no arguments must exit 2 with usage"; fail=1; }
check unknown_cmd /dev/null frobnicate
check lance_help /dev/null lance --help
check lance_no_sub /dev/null lance
check write_help /dev/null lance write --help
check write_no_schema /dev/null lance write ds.lance
check write_bad_opt /dev/null lance write ds.lance --schema "$G/schema.json" --frob
check write_both_modes /dev/null lance write ds.lance --schema "$G/schema.json" --append --overwrite
check write_bad_fv /dev/null lance write ds.lance --schema "$G/schema.json" --file-version 2.2
check write "$G/rows.jsonl" lance write ds.lance --schema "$G/schema.json"
check dump /dev/null lance dump ds.lance
check write_exists "$G/rows.jsonl" lance write ds.lance --schema "$G/schema.json"
check append "$G/more.jsonl" lance write ds.lance --append
check dump_v2 /dev/null lance dump ds.lance
check dump_v1 /dev/null lance dump ds.lance --version 1
check dump_v9 /dev/null lance dump ds.lance --version 9
check dump_bad_version /dev/null lance dump ds.lance --version x
check overwrite "$G/more.jsonl" lance write ds.lance --schema "$G/schema.json" --overwrite
check dump_v3 /dev/null lance dump ds.lance
check dump_missing /dev/null lance dump nowhere.lance
for b in unknown missing base64 int range dupkey syntax; do
    check "bad_$b" "$G/bad_$b.jsonl" lance write "bad_$b.lance" --schema "$G/schema.json"
    # a failed write leaves nothing behind that looks like a dataset
    if [ "${PCH_GOLDEN_UPDATE:-0}" != 1 ] && ls "bad_$b.lance/_versions/"*.manifest >/dev/null 2>&1; then
        echo "FAIL bad_$b: a manifest was published"; fail=1
    fi
    if [ "${PCH_GOLDEN_UPDATE:-0}" != 1 ] && [ -n "$(ls -A "bad_$b.lance/data" 2>/dev/null)" ]; then
        echo "FAIL bad_$b: data files were left behind"; fail=1
    fi
done
cp "$G/bad_schema.json" bad_schema.json
check bad_schema /dev/null lance write x.lance --schema bad_schema.json
# 2.0 files, several fragments, and the round trip dump -> write -> dump
"$CLI" lance dump ds.lance | tail -n +2 >rows3.jsonl
"$CLI" lance write ds20.lance --schema "$G/schema.json" --file-version 2.0 --max-rows-per-file 2 \
    <"$G/rows.jsonl" || { echo "FAIL write 2.0"; fail=1; }
"$CLI" lance dump ds20.lance | tail -n +2 >rows20.jsonl
"$CLI" lance dump ds.lance --version 1 | tail -n +2 >rows1.jsonl
cmp -s rows20.jsonl rows1.jsonl || { echo "FAIL: 2.0 multi-fragment dump differs"; diff rows20.jsonl rows1.jsonl | head; fail=1; }
[ "$(ls ds20.lance/data | wc -l)" = 2 ] || { echo "FAIL: expected 2 data files"; fail=1; }
"$CLI" lance write rt.lance --schema "$G/schema.json" <rows1.jsonl && "$CLI" lance dump rt.lance | tail -n +2 >rt.jsonl
cmp -s rt.jsonl rows1.jsonl || { echo "FAIL: dump -> write -> dump is not stable"; fail=1; }
[ "$fail" = 0 ] || exit 1
echo "lance_cli: $n cases ok"
