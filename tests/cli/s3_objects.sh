#!/usr/bin/env bash
# The object-store layer against a real S3 server (issue 20 items 1, 2, 5; docs/object-storage.md):
# a one-node Ceph radosgw (tests/s3/rgw.sh; scripts/run-tests.sh starts one per run and passes
# its settings in PCH_RGW_ENV, a standalone run starts its own). `pchronicle objects`:
#   - put/cat/stat/ls/rm round trips, byte for byte, checked against curl --aws-sigv4 (an
#     independent SigV4 client) in both directions;
#   - multipart above a threshold (3 parts), read back, whole and across part boundaries;
#   - ranged reads: nearby ranges coalesced (GETs counted by --stats), far ones not;
#   - create-if-absent: a second put of one key exits 3 and keeps the first bytes; rounds of
#     16 concurrent writers on one key with exactly one winner each; check-commit passes;
#   - errors: wrong secret -> one 403 line; missing object -> exit 1; no connection -> retried,
#     then one line naming the attempts; a local directory store for the same verbs;
#   - injected faults (tests/s3/faultproxy.py between us and the server): 500/503/429, resets,
#     truncated bodies and stalls retried to the right bytes; an answer lost after a
#     create-if-absent PUT succeeded resolved by reading the object back; a 4xx never
#     retried; a PUT that keeps failing leaves no object; a multipart upload whose parts keep
#     failing is aborted.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
P=${PCH_CLI:-$PWD/$BUILD/pchronicle}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-s3o.XXXXXX") || exit 1
. tests/s3/lib.sh
trap 's3_cleanup; rm -rf "$T"' EXIT
VG=${PCH_VALGRIND:-0}
[ -x "$P" ] || { echo "FAIL: $P not built"; exit 1; }
s3_server
U=s3://$B/$PRE
stat_of() { grep -o "$2=[0-9]*" "$T/$1.err" | cut -d= -f2; }
# curl_s3 METHOD KEY [FILE]: an independent SigV4 client for the same server
curl_s3() {
    local h
    if [ -n "${3:-}" ]; then h=$(sha256sum "$3" | cut -d' ' -f1); else h=$(printf '' | sha256sum | cut -d' ' -f1); fi
    curl -s -o "$T/curl.out" -w '%{http_code}' --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
        --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -X "$1" -H "x-amz-content-sha256: $h" \
        ${3:+--data-binary "@$3"} "$AWS_ENDPOINT_URL/$B/$PRE/$2"
}

head -c 300000 /dev/urandom > "$T/small"
head -c 11534336 /dev/urandom > "$T/big"      # 11 MiB: 3 parts of 5 MiB, 5 MiB, 1 MiB
printf 'x' > "$T/one"; : > "$T/empty"

# --- round trips, both ways against curl
run put-small 0 "$P" objects put "$T/small" "$U/a/small" && ok
run cat-small 0 "$P" objects cat "$U/a/small" && same cat-small "$T/cat-small.out" "$T/small"
code=$(curl_s3 GET a/small); [ "$code" = 200 ] && ok || bad "curl GET: $code"
same curl-get "$T/curl.out" "$T/small"
code=$(curl_s3 PUT b/by-curl "$T/small"); [ "$code" = 200 ] && ok || bad "curl PUT: $code"
run cat-curl 0 "$P" objects cat "$U/b/by-curl" && same cat-curl "$T/cat-curl.out" "$T/small"
run put-empty 0 "$P" objects put "$T/empty" "$U/a/empty"
run cat-empty 0 "$P" objects cat "$U/a/empty" && same cat-empty "$T/cat-empty.out" "$T/empty"
run put-space 0 "$P" objects put "$T/one" "$U/a/with space+plus=é"
run cat-space 0 "$P" objects cat "$U/a/with space+plus=é" && same cat-space "$T/cat-space.out" "$T/one"
run stat 0 "$P" objects stat "$U/a/small" && has stat "$T/stat.out" '^size 300000$'
run ls 0 "$P" objects ls "$U/" --long
has ls "$T/ls.out" "300000 .* $PRE/a/small\$"
has ls "$T/ls.out" "$PRE/b/by-curl\$"
has ls "$T/ls.out" "$PRE/a/with space\\+plus=é\$"
[ "$(wc -l < "$T/ls.out")" = 4 ] && ok || bad "ls: $(wc -l < "$T/ls.out") keys, expected 4"
run ls-prefix 0 "$P" objects ls "$U/a/s"
[ "$(cat "$T/ls-prefix.out")" = "$PRE/a/small" ] && ok || bad "ls prefix: $(cat "$T/ls-prefix.out")"

# --- multipart: 3 parts, read back whole and across the part boundary (5 MiB)
run put-big 0 "$P" objects put "$T/big" "$U/big" --multipart-threshold 6000000 --part-size 5242880 --stats
[ "$(stat_of put-big puts)" = 3 ] && ok || bad "multipart: $(stat_of put-big puts) parts, expected 3"
run cat-big 0 "$P" objects cat "$U/big" && same cat-big "$T/cat-big.out" "$T/big"
run stat-big 0 "$P" objects stat "$U/big" && has stat-big "$T/stat-big.out" '^etag .*-3$'
run cat-across 0 "$P" objects cat "$U/big" --ranges 5242870:20
dd if="$T/big" bs=1 skip=5242870 count=20 status=none > "$T/across.want"
same cat-across "$T/cat-across.out" "$T/across.want"
# a failing multipart upload is aborted: no object, no upload left behind
run put-mp-absent 1 "$P" objects put "$T/big" "$U/big2" --if-absent --multipart-threshold 6000000
has put-mp-absent "$T/put-mp-absent.err" 'not atomic on every S3 server'

# --- ranged reads and coalescing (GETs counted)
python3 - "$T/small" "$T/ranges.want" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
out = b""
for off, n in ((100, 10), (150, 20), (0, 5), (200000, 7), (299990, 10)):
    out += d[off:off + n]
open(sys.argv[2], "wb").write(out)
PY
run ranges 0 "$P" objects cat "$U/a/small" --ranges 100:10,150:20,0:5,200000:7,299990:10 --coalesce-gap 1000 --stats
same ranges "$T/ranges.out" "$T/ranges.want"
[ "$(stat_of ranges gets)" = 3 ] && ok || bad "coalescing: $(stat_of ranges gets) GETs, expected 3 ({0,100,150}, 200000, 299990)"
[ "$(stat_of ranges ranges)" = 5 ] && ok || bad "ranges counted: $(stat_of ranges ranges)"
[ "$(stat_of ranges bytes_useful)" = 52 ] && ok || bad "bytes_useful: $(stat_of ranges bytes_useful)"
[ "$(stat_of ranges bytes_requested)" = 187 ] && ok || bad "bytes_requested: $(stat_of ranges bytes_requested), expected 170+7+10"
run ranges-far 0 "$P" objects cat "$U/a/small" --ranges 100:10,150:20 --coalesce-gap 10 --stats
[ "$(stat_of ranges-far gets)" = 2 ] && ok || bad "gap 10: $(stat_of ranges-far gets) GETs, expected 2"
run range-past 1 "$P" objects cat "$U/a/small" --ranges 299990:20
has range-past "$T/range-past.err" 'HTTP 416|with 10 of 20 bytes'

# --- create-if-absent and the commit probe
run once 0 "$P" objects put "$T/small" "$U/once" --if-absent
run twice 3 "$P" objects put "$T/one" "$U/once" --if-absent
has twice "$T/twice.err" 'already exists'
run once-kept 0 "$P" objects cat "$U/once" && same once-kept "$T/once-kept.out" "$T/small"
run check-commit 0 "$P" objects check-commit "$U/probe"
has check-commit "$T/check-commit.out" 'refuses a second create-if-absent'
run probe-clean 0 "$P" objects ls "$U/probe"
[ ! -s "$T/probe-clean.out" ] && ok || bad "the commit probe left $(cat "$T/probe-clean.out")"
rounds=5; [ "$VG" = 1 ] && rounds=1
for r in $(seq 1 $rounds); do
    pids=""
    for w in $(seq 1 16); do
        printf 'writer %d round %d\n' "$w" "$r" > "$T/w$w"
        ( "$P" objects put "$T/w$w" "$U/race/$r" --if-absent >/dev/null 2>"$T/w$w.err"; echo $? > "$T/w$w.rc" ) &
        pids="$pids $!"
    done
    wait $pids
    wins=0; lost=0; winner=""
    for w in $(seq 1 16); do
        case $(cat "$T/w$w.rc") in 0) wins=$((wins + 1)); winner=$w ;; 3) lost=$((lost + 1)) ;; esac
    done
    if [ $wins = 1 ] && [ $lost = 15 ]; then ok; else bad "race round $r: $wins winners, $lost refused (of 16)"; fi
    "$P" objects cat "$U/race/$r" > "$T/race.out" 2>/dev/null
    [ -n "$winner" ] && same "race round $r content" "$T/race.out" "$T/w$winner"
done

# --- errors
AWS_SECRET_ACCESS_KEY=wrong run wrong-secret 1 "$P" objects ls "$U/"
has wrong-secret "$T/wrong-secret.err" 'access denied \(HTTP 403'
[ "$(wc -l < "$T/wrong-secret.err")" = 1 ] && ok || bad "wrong secret: $(wc -l < "$T/wrong-secret.err") lines on stderr"
run missing 1 "$P" objects cat "$U/missing"
has missing "$T/missing.err" 'HTTP 404'
AWS_ENDPOINT_URL=http://127.0.0.1:1 run refused 1 "$P" objects cat "$U/a/small" --max-attempts 3 --backoff-ms 1 --stats
has refused "$T/refused.err" 'after 3 attempts'
[ "$(stat_of refused retries)" = 2 ] && ok || bad "refused: $(stat_of refused retries) retries, expected 2"
env -u AWS_ACCESS_KEY_ID "$P" objects ls "$U/" >/dev/null 2>"$T/nokey.err" && bad "no key: accepted" || ok
has nokey "$T/nokey.err" 'AWS_ACCESS_KEY_ID'
run bad-bucket 1 "$P" objects ls "s3://No_Such/x"
run usage 2 "$P" objects frob x
run rm 0 "$P" objects rm "$U/once"
run rm-again 0 "$P" objects rm "$U/once"
run gone 1 "$P" objects cat "$U/once"

# --- injected faults
s3_proxy
F="--backoff-ms 1 --max-attempts 3 --stats"
for f in 500 503 429 reset truncate; do
    fault "$f"
    AWS_ENDPOINT_URL=$PX run "f-$f" 0 "$P" objects cat "$U/a/small" $F && same "f-$f" "$T/f-$f.out" "$T/small"
    [ "$(stat_of "f-$f" retries)" = 1 ] && ok || bad "fault $f: $(stat_of "f-$f" retries) retries, expected 1"
done
fault truncate
AWS_ENDPOINT_URL=$PX run f-range-trunc 0 "$P" objects cat "$U/a/small" --ranges 0:5000 $F
head -c 5000 "$T/small" > "$T/head5000"; same f-range-trunc "$T/f-range-trunc.out" "$T/head5000"
fault stall
AWS_ENDPOINT_URL=$PX run f-stall 0 "$P" objects cat "$U/a/small" $F --timeout-ms 2000
[ "$(stat_of f-stall retries)" = 1 ] && ok || bad "stall: $(stat_of f-stall retries) retries"
# the first try of a create-if-absent PUT succeeds but its answer is lost: ours, so exit 0
fault fwd-reset
AWS_ENDPOINT_URL=$PX run f-lost-answer 0 "$P" objects put "$T/small" "$U/lost" --if-absent $F
[ "$(stat_of f-lost-answer retries)" = 1 ] && ok || bad "lost answer: $(stat_of f-lost-answer retries) retries"
run f-lost-kept 0 "$P" objects cat "$U/lost" && same f-lost-kept "$T/f-lost-kept.out" "$T/small"
# ... and when another writer's object was there first: refused (exit 3), theirs kept
fault fwd-reset
AWS_ENDPOINT_URL=$PX run f-lost-theirs 3 "$P" objects put "$T/one" "$U/lost" --if-absent $F
run f-theirs-kept 0 "$P" objects cat "$U/lost" && same f-theirs-kept "$T/f-theirs-kept.out" "$T/small"
# a 4xx is not retried
fault pass
AWS_SECRET_ACCESS_KEY=wrong AWS_ENDPOINT_URL=$PX run f-403 1 "$P" objects cat "$U/a/small" $F
[ "$(stat_of f-403 requests)" = 1 ] && ok || bad "403: $(stat_of f-403 requests) requests, expected 1"
# a PUT that fails on every try: exit 1 naming the attempts, no object
fault 500 500 500
AWS_ENDPOINT_URL=$PX run f-put-fails 1 "$P" objects put "$T/small" "$U/never" $F
has f-put-fails "$T/f-put-fails.err" 'HTTP 500 \(after 3 attempts\)'
run f-put-none 1 "$P" objects cat "$U/never"
# a multipart upload whose parts fail on every try is aborted: no object, no upload left
fault pass 500 500 500 500 500 500 500 500 500 pass
AWS_ENDPOINT_URL=$PX run f-mp 1 "$P" objects put "$T/big" "$U/mp-fails" --multipart-threshold 6000000 --part-size 5242880 $F
run f-mp-none 1 "$P" objects cat "$U/mp-fails"
grep -q "^DELETE .*uploadId=.* -> pass" "$T/proxy.log" && ok || bad "multipart: no abort (DELETE ?uploadId) was sent"
h=$(printf '' | sha256sum | cut -d' ' -f1)
curl -s -o "$T/uploads.xml" --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: $h" "$AWS_ENDPOINT_URL/$B?uploads"
grep -q "$PRE/mp-fails" "$T/uploads.xml" && bad "multipart: an upload of $PRE/mp-fails is left" || ok
fault
kill $proxy 2>/dev/null; wait $proxy 2>/dev/null; proxy=""

# --- the same verbs on a local directory
L=$T/local
run l-put 0 "$P" objects put "$T/small" "$L/x/small" --if-absent
run l-twice 3 "$P" objects put "$T/one" "$L/x/small" --if-absent
run l-cat 0 "$P" objects cat "$L/x/small" && same l-cat "$T/l-cat.out" "$T/small"
run l-ranges 0 "$P" objects cat "$L/x/small" --ranges 100:10,150:20,0:5,200000:7,299990:10 && same l-ranges "$T/l-ranges.out" "$T/ranges.want"
run l-ls 0 "$P" objects ls "$L"
[ "$(cat "$T/l-ls.out")" = "x/small" ] && ok || bad "local ls: $(cat "$T/l-ls.out")"
run l-check 0 "$P" objects check-commit "$L"

# clean up this run's keys
"$P" objects ls "$U/" 2>/dev/null | while read -r k; do "$P" objects rm "s3://$B/$k" >/dev/null 2>&1; done
echo "s3_objects: $n checks, $fail failed"
[ $fail = 0 ]
