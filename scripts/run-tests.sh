#!/usr/bin/env bash
# Runs every suite of `make test` and prints one closing line "N passed, N failed".
# BUILD is the build directory (build, build-asan, build-ubsan). Each suite counts as one
# test per unit-test binary, corpus replay, CLI test script and compatibility check.
set -u
BUILD=${BUILD:-build}
MODE=${MODE:-release}
cd "$(dirname "$0")/.."
passed=0; failed=0; failures=()
run() {  # run NAME CMD...
    local name=$1; shift
    local log="$BUILD/test-logs/$name.log"
    mkdir -p "$(dirname "$log")"
    if "$@" >"$log" 2>&1; then
        passed=$((passed + 1)); printf 'ok    %s  (%s)\n' "$name" "$(tail -n 1 "$log")"
    else
        failed=$((failed + 1)); failures+=("$name")
        printf 'FAIL  %s\n' "$name"; tail -n 40 "$log" | sed 's/^/      /'
    fi
}
export PCH_BUILD="$BUILD" PCH_CLI="$PWD/$BUILD/pchronicle"
for t in "$BUILD"/tests/*_test; do
    [ -x "$t" ] || continue
    run "unit/$(basename "$t")" "$t"
done
for r in "$BUILD"/fuzz/*_replay; do
    [ -x "$r" ] || continue
    n=$(basename "$r" _replay)
    if [ -d "fuzz/corpus/$n" ]; then
        run "fuzz-replay/$n" "$r" "fuzz/corpus/$n"
    else
        failed=$((failed + 1)); failures+=("fuzz-replay/$n"); echo "FAIL  fuzz-replay/$n: no corpus fuzz/corpus/$n"
    fi
done
for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    run "cli/$(basename "$s" .sh)" bash "$s"
done
for s in tests/compat/*.sh; do
    [ -f "$s" ] || continue
    run "compat/$(basename "$s" .sh)" bash "$s"
done
echo
[ "$failed" -gt 0 ] && printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
