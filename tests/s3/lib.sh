# Sourced by the S3 suites (tests/cli/s3_*.sh) after they set T (their scratch directory):
# the S3 server's settings, a fault proxy, and the check helpers they share.
#   s3_server          use the run's radosgw (PCH_RGW_ENV from scripts/run-tests.sh) or start one
#                      of this suite's own (stopped by s3_cleanup); exports the AWS_* settings,
#                      B (the bucket) and PRE (a key prefix of this run's own)
#   s3_proxy [HOLD]    start tests/s3/faultproxy.py in front of the server: PX is its URL,
#                      fault LINE... sets the faults of the next requests
#   s3_cleanup         stop what s3_server and s3_proxy started (the suites' EXIT trap)
own_rgw=""; proxy=""
n=0; fail=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $*"; }
run() {
    local name=$1 want=$2 rc; shift 2
    "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"; rc=$?
    if [ "$rc" = "$want" ]; then ok; return 0; fi
    bad "$name: exit $rc, expected $want"; head -n 5 "$T/$name.err" | sed 's/^/    /'; return 1
}
has() { if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no line matching /$3/ in:"; head -n 8 "$2" | sed 's/^/    /'; fi; }
same() { if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; fi; }
s3_cleanup() {
    [ -n "$proxy" ] && kill "$proxy" 2>/dev/null
    [ -n "$own_rgw" ] && tests/s3/rgw.sh stop "$own_rgw"
    proxy=""; own_rgw=""
}
s3_server() {
    command -v curl >/dev/null || { echo "FAIL: curl is required (scripts/bootstrap.sh installs it)"; exit 1; }
    if [ -n "${PCH_RGW_ENV:-}" ]; then
        [ -f "$PCH_RGW_ENV" ] || { echo "FAIL: PCH_RGW_ENV=$PCH_RGW_ENV does not exist"; exit 1; }
    else
        own_rgw=$T/rgw
        tests/s3/rgw.sh start "$own_rgw" >"$T/rgw.log" 2>&1 || { echo "FAIL: radosgw did not start:"; tail -20 "$T/rgw.log"; exit 1; }
        PCH_RGW_ENV=$own_rgw/env
    fi
    . "$PCH_RGW_ENV"
    B=$PCH_S3_BUCKET
    PRE=$(basename "$0" .sh)-$$-$RANDOM
    export PCH_OBJECT_CACHE=$T/object-cache   # the suite's own tail cache, not the user's
}
s3_proxy() {
    [ -n "${1:-}" ] && echo "$1" > "$T/hold"
    python3 tests/s3/faultproxy.py "${AWS_ENDPOINT_URL##*:}" "$T/proxy.port" "$T/sched" "$T/proxy.log" "$T/hold" & proxy=$!
    for _ in $(seq 1 100); do [ -s "$T/proxy.port" ] && break; sleep 0.05; done
    [ -s "$T/proxy.port" ] || { echo "FAIL: the fault proxy did not start"; exit 1; }
    PX=http://127.0.0.1:$(cat "$T/proxy.port")
}
fault() { printf '%s\n' "$@" > "$T/sched"; }
