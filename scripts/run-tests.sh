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
    local log="$BUILD/test-logs/$name.log" t0=$SECONDS
    mkdir -p "$(dirname "$log")"
    if "$@" >"$log" 2>&1; then
        passed=$((passed + 1)); printf 'ok    %s  (%s)  %ds\n' "$name" "$(tail -n 1 "$log")" $((SECONDS - t0))
    else
        failed=$((failed + 1)); failures+=("$name")
        printf 'FAIL  %s  %ds\n' "$name" $((SECONDS - t0)); tail -n 40 "$log" | sed 's/^/      /'
    fi
}
# The S3 test server (tests/s3/rgw.sh): one radosgw for the whole run, on 127.0.0.1, stopped
# by its PIDs when the run ends; the S3 suites (tests/cli/s3_*.sh) find it through
# PCH_RGW_ENV. If it does not start, that is a failure, and each S3 suite then tries to start
# one of its own and fails loudly too: they never skip.
rgw_dir=$(mktemp -d "${TMPDIR:-/tmp}/pch-rgw.XXXXXX")
vg_pid=""
trap '[ -n "$vg_pid" ] && { pkill -P "$vg_pid"; kill "$vg_pid"; } 2>/dev/null; tests/s3/rgw.sh stop "$rgw_dir" >/dev/null 2>&1' EXIT
trap 'exit 143' INT TERM    # so that the EXIT trap stops the server when the run is killed
mkdir -p "$BUILD/test-logs"
t0=$SECONDS
if tests/s3/rgw.sh start "$rgw_dir" >"$BUILD/test-logs/rgw.log" 2>&1; then
    export PCH_RGW_ENV=$rgw_dir/env
    passed=$((passed + 1)); printf 'ok    s3/radosgw  (%s)  %ds\n' "$(tail -n 1 "$BUILD/test-logs/rgw.log")" $((SECONDS - t0))
else
    failed=$((failed + 1)); failures+=("s3/radosgw")
    printf 'FAIL  s3/radosgw\n'; tail -n 40 "$BUILD/test-logs/rgw.log" | sed 's/^/      /'
fi
export PCH_BUILD="$BUILD" PCH_CLI="$PWD/$BUILD/pchronicle"
# valgrind over the CLI suites (release build only: sanitizer builds can't run under it),
# started before the release pass and run beside it: one suite at a time while the release
# pass runs (it keeps a core of its own: some suites time their steps), then VG_JOBS at a
# time (one per core by default). Each suite gets wrappers and logs of its own; results print
# in order after the release pass. The wrapper keeps stderr clean (logs go to files) so
# goldens still compare exactly; any memory error or definite leak fails the suite.
vg=$PWD/$BUILD/valgrind
vg_suites=()
if [ "$MODE" = release ] && command -v valgrind >/dev/null; then
    rm -rf "$vg"; mkdir -p "$vg" "$BUILD/test-logs/valgrind"
    long=(); short=()
    for s in tests/cli/*.sh; do
        [ -f "$s" ] || continue
        grep -q "PCH_VALGRIND_SKIP" "$s" && continue
        vg_suites+=("$s")
        # suites marked PCH_VALGRIND_LONG start first, so that the short ones fill the gaps
        if grep -q "PCH_VALGRIND_LONG" "$s"; then long+=("$s"); else short+=("$s"); fi
    done
    vg_check() {  # vg_check SCRIPT LOGDIR: run it with the CLI under valgrind, then scan the logs
        local logs=$2
        PCH_CLI="$logs/pchronicle" PCH_VORTEX_CLI="$logs/pchronicle-vortex" PCH_VALGRIND=1 bash "$1" || return 1
        if grep -l . "$logs"/*.log 2>/dev/null | head -5 | grep -q .; then
            grep -h -A20 . "$logs"/*.log | head -60; return 1
        fi
        echo "valgrind clean"
    }
    (
        jobs_all=${VG_JOBS:-$(nproc 2>/dev/null || echo 1)}
        for s in "${long[@]}" "${short[@]}"; do
            n=$(basename "$s" .sh); d="$vg/$n"; mkdir -p "$d"
            for prog in pchronicle pchronicle-vortex; do
                [ -x "$BUILD/$prog" ] || continue
                cat >"$d/$prog" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \\
    --log-file="$d/$prog.%p.log" "$PWD/$BUILD/$prog" "\$@"
WRAP
                chmod +x "$d/$prog"
            done
            while :; do
                max=1; [ -e "$vg/.release-done" ] && max=$jobs_all
                [ "$(jobs -rp | wc -l)" -lt "$max" ] && break
                sleep 1
            done
            log="$BUILD/test-logs/valgrind/$n.log"
            ( t0=$SECONDS
              if vg_check "$s" "$d" >"$log" 2>&1; then echo ok >"$d/status"; else echo fail >"$d/status"; fi
              echo $((SECONDS - t0)) >"$d/seconds" ) &
        done
        wait
    ) &
    vg_pid=$!
fi
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
if [ "$MODE" = release ]; then
    if ! command -v valgrind >/dev/null; then
        failed=$((failed + 1)); failures+=("valgrind"); echo "FAIL  valgrind: not installed (scripts/bootstrap.sh installs it)"
    else
        touch "$vg/.release-done"
        t0=$SECONDS
        wait "$vg_pid"
        echo "(valgrind pass: ${#vg_suites[@]} suites, $((SECONDS - t0)) s after the release pass)"
        for s in "${vg_suites[@]}"; do
            n=$(basename "$s" .sh); log="$BUILD/test-logs/valgrind/$n.log"
            secs=$(cat "$vg/$n/seconds" 2>/dev/null)
            if [ "$(cat "$vg/$n/status" 2>/dev/null)" = ok ]; then
                passed=$((passed + 1)); printf 'ok    %s  (%s)  %ss\n' "valgrind/$n" "$(tail -n 1 "$log")" "$secs"
            else
                failed=$((failed + 1)); failures+=("valgrind/$n")
                printf 'FAIL  %s  %ss\n' "valgrind/$n" "$secs"; tail -n 40 "$log" | sed 's/^/      /'
            fi
        done
    fi
fi
echo
[ "$failed" -gt 0 ] && printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
