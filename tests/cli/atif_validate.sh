#!/usr/bin/env bash
# CLI goldens for `pchronicle validate --input-format atif` (exact stdout and exit code).
# PCH_GOLDEN_UPDATE=1 rewrites the expected files.
set -u
cd "$(dirname "$0")/../.."
CLI=${PCH_CLI:-build/pchronicle}
G=tests/golden/atif
[ -x "$CLI" ] || { echo "missing $CLI"; exit 1; }
fail=0
check() {  # check NAME ARGS...
    local name=$1; shift
    local out rc
    out=$("$CLI" validate --input-format atif "$@" 2>&1); rc=$?
    if [ "${PCH_GOLDEN_UPDATE:-0}" = 1 ]; then
        printf '%s\n' "$out" > "$G/$name.out"; echo "$rc" > "$G/$name.rc"; return
    fi
    if [ "$out" != "$(cat "$G/$name.out")" ] || [ "$rc" != "$(cat "$G/$name.rc")" ]; then
        echo "FAIL $name (exit $rc)"; diff <(printf '%s\n' "$out") "$G/$name.out" | head -20; fail=1
    fi
}
check validate_default "$G/lint"
check validate_strict --strict "$G/lint/deviations.json"
check validate_json --json "$G/lint"
check validate_ok "$G/lint/deviations.json" tests/data/atif
# usage errors exit 2
"$CLI" validate "$G/lint" >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: missing --input-format must exit 2"; fail=1; }
"$CLI" validate --input-format atif >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: no PATH must exit 2"; fail=1; }
# a missing file is a finding, exit 1
"$CLI" validate --input-format atif "$G/nope.json" >/dev/null 2>&1; [ $? = 1 ] || { echo "FAIL: missing file must exit 1"; fail=1; }
# the shared corpus validates (default mode) when it is present beside the repo
if [ -d ../shared/corpus/atif ]; then
    "$CLI" validate --input-format atif ../shared/corpus/atif > /tmp/atif_corpus_lint.$$ 2>&1
    rc=$?; if [ $rc != 0 ]; then echo "FAIL: corpus lint exit $rc"; head /tmp/atif_corpus_lint.$$; fail=1; fi
    rm -f /tmp/atif_corpus_lint.$$
fi
[ $fail = 0 ] && echo "atif_validate: ok"
exit $fail
