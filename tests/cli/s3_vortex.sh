#!/usr/bin/env bash
# (PCH_VALGRIND_LONG: the valgrind pass of scripts/run-tests.sh starts this suite first.)
# A Vortex projection root on S3 (issue 20 items 2, 3; docs/object-storage.md "Vortex roots on
# S3"), against the run's radosgw (tests/s3/lib.sh):
#   - `build --to s3://...` of tests/data/atif: export, every get, the relations through sql,
#     rl, sft and verify give what the same build on a local root gives, byte for byte;
#   - a cold get reads with at most 5 GETs (CURRENT, manifest, directory shard, the data
#     file's tail, its cluster, those two asked for at once; no segment table), printed by
#     --stats; a flipped byte in the data object's cluster or tail fails the read with the
#     digest's message and no output, and is not kept in the tail cache (the repaired object
#     then reads through it); an
#     object shorter than its manifest says fails with both sizes; a cold narrow scan reads
#     the manifest once and each cluster with one request; on a root of many clusters a scan
#     fetches several clusters' reads at once (--explain says how many), a pruned one only
#     the clusters its summaries keep, each answer the local root's (rl and sft too, whose
#     workers read ahead their own clusters); a read-ahead whose
#     requests fail fails the scan with the server's error;
#   - a second build commits sequence 2 with the first as its parent; a CURRENT that lags
#     behind the commits (a writer that died after committing) is followed, not forked;
#   - 16 builds that race on one root (held at the server until all 16 commit at once):
#     exactly one wins, 15 fail with "stale commit", the root verifies;
#   - a server that lets a second create-if-absent through is refused for writing, nothing
#     uploaded; wrong credentials give one 403 line; a 503 during the upload is retried;
#   - sync (nothing changed, an edit and a removal, after a lagging CURRENT) and compaction
#     commit the next sequence and give what they give on a local root; two syncs from one
#     parent: one commits, the other fails with "stale commit";
#   - snapshots lists them; a pin keeps one through vacuum, unpin lets it go; vacuum --dry-run
#     removes nothing; vacuum keeps CURRENT's snapshot and the newest commit's (a CURRENT
#     that lags), removes the rest and the files only they reached, never a commit record;
#   - the tail cache: a second get reads the small objects and the data tail from local disk
#     (at most 2 GETs, the same answer); damaged entries are ignored; PCH_OBJECT_CACHE=off
#     writes none;
#   - repair says it is not supported there yet.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}
P=${PCH_CLI:-$PWD/$BUILD/pchronicle}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-s3v.XXXXXX") || exit 1
. tests/s3/lib.sh
trap 's3_cleanup; rm -rf "$T"' EXIT
VG=${PCH_VALGRIND:-0}
[ -x "$VX" ] || { echo "FAIL: $VX not built"; exit 1; }
s3_server
R=s3://$B/$PRE/root
L=$T/local
IN=tests/data/atif
stat_of() { grep -o "$2=[0-9]*" "$T/$1.err" | tail -1 | cut -d= -f2; }
# the local root is the reference: under valgrind it is built and read unwrapped (the local
# paths run under valgrind in the vortex_* suites)
VXL=$VX; [ "$VG" = 1 ] && VXL=$PWD/$BUILD/pchronicle-vortex
seq_of() { "$P" objects cat "$1/CURRENT" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("sequence"))'; }

# --- build on S3 and locally; every read gives the same
run build 0 "$VX" build --from "$IN" --to "$R" --quiet
run build-local 0 "$VXL" build --from "$IN" --to "$L" --quiet
[ "$(seq_of "$R")" = 1 ] && ok || bad "first build: sequence $(seq_of "$R"), expected 1"
# repeated content is stored once on a local root by default (--dedup-min 256) and not on
# object storage, where each external value a point read hydrates is a request of its own
mjson() { python3 -c 'import json,sys; print(json.load(sys.stdin)["manifest"])'; }
ddmin() { python3 -c 'import json,sys; print(json.load(sys.stdin)["layout"]["dedup_min_bytes"])'; }
d_s3=$("$P" objects cat "$R/$("$P" objects cat "$R/CURRENT" | mjson)" | ddmin)
d_local=$(ddmin < "$L/$(mjson < "$L/CURRENT")")
[ "$d_s3" = 0 ] && [ "$d_local" = 256 ] && ok || bad "default dedup-min: S3 root $d_s3 (want 0), local root $d_local (want 256)"
run verify 0 "$VX" verify "$R"
has verify "$T/verify.err" 'healthy'
run export 0 "$VX" export --from "$R" --output-format atif --to "$T/exp-s3"
run export-local 0 "$VXL" export --from "$L" --output-format atif --to "$T/exp-local"
diff -r "$T/exp-s3" "$T/exp-local" >/dev/null && ok || bad "export from S3 differs from the local root's"
"$VXL" sql "$L" "select trajectory_key from runs order by trajectory_key" --format csv | tail -n +2 > "$T/keys"
[ "$(wc -l < "$T/keys")" -ge 10 ] && ok || bad "keys: $(wc -l < "$T/keys")"
maxgets=0; k=0
[ "$VG" = 1 ] && { head -3 "$T/keys" > "$T/keys3"; mv "$T/keys3" "$T/keys"; }   # valgrind: 3 keys
while read -r key; do
    k=$((k + 1))
    PCH_OBJECT_CACHE=off run "get$k" 0 "$VX" get "$R" --trajectory-key "$key" --compact --stats
    "$VXL" get "$L" --trajectory-key "$key" --compact > "$T/getl$k.out" 2>/dev/null
    same "get $key" "$T/get$k.out" "$T/getl$k.out"
    g=$(stat_of "get$k" gets); [ "${g:-99}" -gt "$maxgets" ] && maxgets=${g:-99}
done < "$T/keys"
[ "$maxgets" -le 5 ] && ok || bad "a cold get made $maxgets GETs (at most 5)"
# no segment table on this path: the tail and the cluster are each checked whole against the
# manifest's digests (docs/object-storage.md)
has "a cold get reads no segment table" "$T/get1.err" 'segment_tables=0/0 '

# a narrow scan reads the manifest once (the SQL module opens the snapshot per relation),
# each data file's segment table and exact tail once, and one coalesced read per cluster
PCH_OBJECT_CACHE=off run scan-gets 0 "$VX" sql "$R" "select source, count(*) from steps group by source" --stats
shape=$("$P" objects cat "$R/$("$P" objects cat "$R/CURRENT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["manifest"])')" |
        python3 -c 'import json,sys; m = json.load(sys.stdin); print(len(m["data_files"]), sum(len(d["cluster_rows"]) for d in m["data_files"]))')
want=$((2 + 2 * ${shape% *} + ${shape#* }))
g=$(stat_of scan-gets gets)
[ "${g:-99}" -le "$want" ] && ok || bad "a cold narrow scan made ${g:-?} GETs (files and clusters: $shape; at most $want)"
# read-ahead (docs/object-storage.md "Narrow scans on S3"): a scan of a root of many clusters
# fetches the reads of several clusters at once, concurrently; a pruned scan first their
# summary lanes, then only the clusters they keep; every answer the local root's
RM=s3://$B/$PRE/many
run build-many 0 "$VX" build --from "$IN" --to "$RM" --cluster-bytes 4096 --quiet
run build-many-local 0 "$VXL" build --from "$IN" --to "$T/many" --cluster-bytes 4096 --quiet
fn=$("$VXL" sql "$T/many" "select function_name from tool_calls group by function_name order by count(*) desc, function_name limit 1" --format csv | tail -1)
k=0
for q in "select source, count(*) from steps group by source order by source" \
         "select trajectory_key, count(*) from tool_calls where function_name = '$fn' group by trajectory_key order by trajectory_key" \
         "select count(*) from tool_calls where function_name = 'no-such-function'"; do
    k=$((k + 1))
    PCH_OBJECT_CACHE=off run "ahead$k" 0 "$VX" sql "$RM" "$q" --format csv
    "$VXL" sql "$T/many" "$q" --format csv > "$T/aheadl$k.out" 2>/dev/null
    same "read-ahead scan $k" "$T/ahead$k.out" "$T/aheadl$k.out"
    PCH_OBJECT_CACHE=off "$VX" sql "$RM" "$q" --explain > "$T/ahead$k.x" 2>&1
    "$VXL" sql "$T/many" "$q" --explain > "$T/aheadl$k.x" 2>&1
    dec=$(grep -o '[0-9]* decoded' "$T/ahead$k.x" | head -1 | cut -d' ' -f1)
    got=$(grep -o 'fetched ahead, concurrently: [0-9]*' "$T/ahead$k.x" | head -1 | grep -o '[0-9]*$')
    decl=$(grep -o '[0-9]* decoded' "$T/aheadl$k.x" | head -1 | cut -d' ' -f1)
    [ -n "$dec" ] && [ "$dec" = "$decl" ] && [ "${got:-0}" = "$dec" ] && ok ||
        bad "scan $k: ${got:-0} clusters fetched ahead, ${dec:-?} decoded (locally ${decl:-?}): $(cat "$T/ahead$k.x")"
    # 12 clusters: the first scan spans two rounds of read-ahead; the last is pruned by summaries
    [ $k != 1 ] || [ "${dec:-0}" -ge 9 ] && ok || bad "scan 1 decoded ${dec:-?} clusters of 12"
    [ $k != 3 ] || grep -q ' [1-9][0-9]* pruned by summaries' "$T/ahead$k.x" && ok || bad "scan 3 pruned nothing by summaries"
    ! grep -q 'fetched ahead' "$T/aheadl$k.x" && ok || bad "a local scan says it fetched ahead"
done
# the training readers' workers read ahead their own clusters (every W-th): the same lines
for tr in "rl --format jsonl" "sft --format messages" "sft --format atif"; do
    k=$((k + 1))
    PCH_OBJECT_CACHE=off run "ahead$k" 0 "$VX" ${tr%% *} "$RM" ${tr#* }
    "$VXL" ${tr%% *} "$T/many" ${tr#* } > "$T/aheadl$k.out" 2>/dev/null
    [ -s "$T/aheadl$k.out" ] && ok || bad "$tr on the local root printed nothing"
    same "read-ahead $tr" "$T/ahead$k.out" "$T/aheadl$k.out"
done
# `benchmark` on the S3 root: its cold runs' GETs come from their --stats (a point read's
# include CURRENT and the manifest, at most 5 as above), ranges and bytes requested; beside
# our Storyline tables of the same documents on the same server (`pchronicle --stats`)
SL=s3://$B/$PRE/storyline
run bench-sl 0 "$P" import --from "$IN" --input-format atif --output-format storyline --to "$SL"
PCH_OBJECT_CACHE=off run bench-s3 0 "$VX" benchmark "$R" --storyline "$SL" --only point_full,scan_source --keys 2 --repeat 1 --cold 2 --json "$T/bench.json" --quiet
python3 -c 'import json, sys
q = {x["id"]: x for x in json.load(open(sys.argv[1]))["queries"]}
assert 3 <= q["point_full"]["cold"]["gets"] <= 5, q["point_full"]
assert q["scan_source"]["cold"]["gets"] >= 3 and q["scan_source"]["cold"]["bytes_read"] > 0, q["scan_source"]
for i in ("point_full", "scan_source"):
    for side in ("cold", "storyline_cold"):
        c = q[i][side]
        # ranges: the byte ranges the reader asked for, before they were coalesced into GETs
        assert c["gets"] >= 1 and c["ranges"] >= 1 and c["bytes_requested"] > 0, (i, side, c)
    assert q[i]["storyline_cold"]["bytes_read"] > 0, q[i]' "$T/bench.json" &&
    ok || bad "benchmark on S3: GETs, ranges or bytes not reported: $(cat "$T/bench.json")"

# --- a damaged data object: a flipped byte in the cluster, then in the tail, fails the read
# with the digest's message, never a wrong answer (a root of its own)
RD=s3://$B/$PRE/damaged
run dmg-build 0 "$VXL" build --from "$IN" --to "$RD" --quiet
dobj=s3://$B/$("$P" objects ls "$RD" | grep '/data/.*\.vortex$' | head -1)
"$P" objects cat "$dobj" > "$T/dmg.vortex" 2>/dev/null || bad "could not fetch $dobj"
tail_at=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["data_files"][0]["tail"][0])' \
    <("$P" objects cat "$RD/$("$P" objects cat "$RD/CURRENT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["manifest"])')"))
flip() { python3 -c 'import sys; p, at = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[at] ^= 0x20; open(sys.argv[3], "wb").write(b)' "$T/dmg.vortex" "$1" "$T/dmg-put.vortex"; }
flip 100; "$P" objects put "$T/dmg-put.vortex" "$dobj" >/dev/null 2>&1 || bad "could not put the damaged object"
PCH_OBJECT_CACHE=$T/dmg-cache run dmg-cluster 1 "$VX" get "$RD" --trajectory-key "$(head -1 "$T/keys")" --compact
has "a damaged cluster on S3 fails the point read" "$T/dmg-cluster.err" 'cluster \(bytes 4\.\.[0-9]+\) has digest'
[ ! -s "$T/dmg-cluster.out" ] && ok || bad "a damaged cluster still wrote $(head -c 200 "$T/dmg-cluster.out")"
flip $((tail_at + 8)); "$P" objects put "$T/dmg-put.vortex" "$dobj" >/dev/null 2>&1 || bad "could not put the damaged object"
PCH_OBJECT_CACHE=$T/dmg-cache2 run dmg-tail 1 "$VX" get "$RD" --trajectory-key "$(head -1 "$T/keys")" --compact
has "a damaged footer on S3 fails the point read" "$T/dmg-tail.err" 'footer and dictionaries \(bytes [0-9]+\.\.[0-9]+\) has digest'
# an object of another size than the manifest says (truncated): one clear error
head -c -1 "$T/dmg.vortex" > "$T/dmg-short.vortex"
"$P" objects put "$T/dmg-short.vortex" "$dobj" >/dev/null 2>&1 || bad "could not put the truncated object"
PCH_OBJECT_CACHE=off run dmg-short 1 "$VX" get "$RD" --trajectory-key "$(head -1 "$T/keys")" --compact
has "a truncated data object fails with its size" "$T/dmg-short.err" 'is [0-9]+ bytes, its manifest says [0-9]+'
# nothing damaged was kept in the tail caches (the first one kept the tail it checked, a
# second one saw the damaged tail): with the object repaired they answer
"$P" objects put "$T/dmg.vortex" "$dobj" >/dev/null 2>&1 || bad "could not put the repaired object"
PCH_OBJECT_CACHE=$T/dmg-cache2 run dmg-fixed 0 "$VX" get "$RD" --trajectory-key "$(head -1 "$T/keys")" --compact
same "a repaired object reads through the same tail cache" "$T/dmg-fixed.out" "$T/get1.out"
PCH_OBJECT_CACHE=$T/dmg-cache run dmg-fixed1 0 "$VX" get "$RD" --trajectory-key "$(head -1 "$T/keys")" --compact
same "a repaired object reads through the first tail cache" "$T/dmg-fixed1.out" "$T/get1.out"

# --- the tail cache: a second process on this machine reads the manifest, directory shard,
# segment table and data tail from local disk, and gives the same answer
TC=$T/tail-cache
key1=$(head -1 "$T/keys")
PCH_OBJECT_CACHE=$TC run tc-first 0 "$VX" get "$R" --trajectory-key "$key1" --compact --stats
PCH_OBJECT_CACHE=$TC run tc-warm 0 "$VX" get "$R" --trajectory-key "$key1" --compact --stats
same tail-cache "$T/tc-warm.out" "$T/get1.out"
g1=$(stat_of tc-first gets); g2=$(stat_of tc-warm gets); h2=$(stat_of tc-warm cache_hits)
[ "${g2:-99}" -le 2 ] && [ "${g2:-99}" -lt "${g1:-0}" ] && [ "${h2:-0}" -ge 3 ] && ok ||
    bad "tail cache: $g1 GETs cold, $g2 warm with $h2 hits (want at most 2 warm, 3 hits)"
# an entry that does not check (a flipped byte) is ignored: the same answer, from the server
for f in "$TC"/*.tail; do printf 'X' | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null; done
PCH_OBJECT_CACHE=$TC run tc-damaged 0 "$VX" get "$R" --trajectory-key "$key1" --compact --stats
same tail-cache-damaged "$T/tc-damaged.out" "$T/get1.out"
[ "$(stat_of tc-damaged cache_hits)" = 0 ] && [ "$(stat_of tc-damaged gets)" = "$g1" ] && ok ||
    bad "damaged tail-cache entries: $(grep 's3 gets' "$T/tc-damaged.err")"
PCH_OBJECT_CACHE=off HOME=$T/home XDG_CACHE_HOME= run tc-off 0 "$VX" get "$R" --trajectory-key "$key1" --compact
[ ! -e "$T/home" ] && ok || bad "PCH_OBJECT_CACHE=off wrote $(find "$T/home" | head -3)"
for q in "select source, count(*) from steps group by source order by 1" \
         "select function_name, count(*) from tool_calls group by 1 order by 1" \
         "select * from runs order by trajectory_key" \
         "select count(*), sum(length(message)) from steps"; do
    k=$((k + 1))
    run "sql$k" 0 "$VX" sql "$R" "$q" --format csv
    "$VXL" sql "$L" "$q" --format csv > "$T/sqll$k.out" 2>/dev/null
    same "sql: $q" "$T/sql$k.out" "$T/sqll$k.out"
done
for v in rl sft; do
    run "$v" 0 "$VX" $v "$R" --format count
    "$VXL" $v "$L" --format count > "$T/$v-local.out" 2>/dev/null
    same "$v" "$T/$v.out" "$T/$v-local.out"
done
run inspect 0 "$VX" inspect "$R"
has inspect "$T/inspect.out" '^counts +documents=10'

# --- a second snapshot, and a CURRENT that lags behind the commits
first=$("$P" objects cat "$R/CURRENT")
run build2 0 "$VX" build --from "$IN" --to "$R" --quiet
[ "$(seq_of "$R")" = 2 ] && ok || bad "second build: sequence $(seq_of "$R")"
printf '%s' "$first" > "$T/old-current"
run lag 0 "$P" objects put "$T/old-current" "$R/CURRENT"
run read-lagging 0 "$VX" verify "$R"                  # readers see the older snapshot, whole
run build3 0 "$VX" build --from "$IN" --to "$R" --quiet
[ "$(seq_of "$R")" = 3 ] && ok || bad "build after a lagging CURRENT: sequence $(seq_of "$R"), expected 3"
"$P" objects ls "$R/commits/" > "$T/commits"
[ "$(wc -l < "$T/commits")" = 3 ] && ok || bad "commits: $(cat "$T/commits")"

# --- sync and compaction on S3 give the snapshots they give on a local root
R5=s3://$B/$PRE/sync
LS=$T/local-sync
IN2=$T/in2
cp -r "$IN" "$IN2"
edit() { python3 -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); d.setdefault("extra",{})["edit"]=sys.argv[2]; json.dump(d,open(p,"w"))' "$@"; }
run sync-build 0 "$VX" build --from "$IN2" --to "$R5" --quiet
run sync-build-local 0 "$VXL" build --from "$IN2" --to "$LS" --quiet
run sync-none 0 "$VX" sync --from "$IN2" --to "$R5"
has sync-none "$T/sync-none.err" 'nothing changed'
[ "$(seq_of "$R5")" = 1 ] && ok || bad "a sync with nothing changed committed: sequence $(seq_of "$R5")"
edit "$IN2/exmp02_atif.json" one
rm "$IN2/tool-calls.input.json"
run sync1 0 "$VX" sync --from "$IN2" --to "$R5"
has sync1 "$T/sync1.err" '1 changed, 1 removed'
"$VXL" sync --from "$IN2" --to "$LS" --quiet
[ "$(seq_of "$R5")" = 2 ] && ok || bad "sync: sequence $(seq_of "$R5"), expected 2"
# a CURRENT that lags: the sync builds on the newest commit, not on CURRENT
printf '%s' "$("$P" objects cat "$R5/commits/00000000000000000001.json")" > "$T/old-current5"
run lag5 0 "$P" objects put "$T/old-current5" "$R5/CURRENT"
edit "$IN2/harbor_multiagent_v1_7.json" two
run sync2 0 "$VX" sync --from "$IN2" --to "$R5"
has sync2 "$T/sync2.err" '1 changed, 0 removed'
"$VXL" sync --from "$IN2" --to "$LS" --quiet
[ "$(seq_of "$R5")" = 3 ] && ok || bad "sync after a lagging CURRENT: sequence $(seq_of "$R5"), expected 3"
run compact5 0 "$VX" compact "$R5"
"$VXL" compact "$LS" >/dev/null 2>&1
[ "$(seq_of "$R5")" = 4 ] && ok || bad "compact: sequence $(seq_of "$R5"), expected 4"
run sync-verify 0 "$VX" verify "$R5"
run sync-export 0 "$VX" export --from "$R5" --output-format atif --to "$T/exp-sync"
run sync-export-local 0 "$VXL" export --from "$LS" --output-format atif --to "$T/exp-sync-local"
diff -r "$T/exp-sync" "$T/exp-sync-local" >/dev/null && ok || bad "export after sync and compaction on S3 differs from the local root's"
[ "$VG" = 1 ] || for q in "select trajectory_key, n_steps, extra from runs order by 1" "select source, count(*) from steps group by 1 order by 1"; do
    k=$((k + 1))
    run "sql$k" 0 "$VX" sql "$R5" "$q" --format csv
    "$VXL" sql "$LS" "$q" --format csv > "$T/sqll$k.out" 2>/dev/null
    same "after sync, sql: $q" "$T/sql$k.out" "$T/sqll$k.out"
done
# --- 16 writers race on one root: all reach the commit before any is let through
s3_proxy 16
R2=s3://$B/$PRE/race
writers=16; [ "$VG" = 1 ] && writers=4 && echo "$writers" > "$T/hold"
pids=""
for w in $(seq 1 $writers); do
    ( AWS_ENDPOINT_URL=$PX "$VX" build --from "$IN" --to "$R2" --quiet >"$T/w$w.out" 2>&1; echo $? > "$T/w$w.rc" ) &
    pids="$pids $!"
done
wait $pids
wins=0; stale=0
for w in $(seq 1 $writers); do
    [ "$(cat "$T/w$w.rc")" = 0 ] && wins=$((wins + 1))
    grep -q "stale commit" "$T/w$w.out" && stale=$((stale + 1))
done
if [ $wins = 1 ] && [ $stale = $((writers - 1)) ]; then ok; else bad "race: $wins winners, $stale stale commits of $writers"; head -3 "$T/w1.out"; fi
[ "$(seq_of "$R2")" = 1 ] && ok || bad "race: sequence $(seq_of "$R2")"
run race-verify 0 "$VX" verify "$R2"
# two syncs from one parent: one commits, the other is stale and publishes nothing
edit "$IN2/exmp02_atif.json" three
echo 2 > "$T/hold"
for w in 1 2; do
    ( AWS_ENDPOINT_URL=$PX "$VX" sync --from "$IN2" --to "$R5" --quiet >"$T/s$w.out" 2>&1; echo $? > "$T/s$w.rc" ) &
    pids="$pids $!"
done
wait $pids
rcs="$(cat "$T/s1.rc") $(cat "$T/s2.rc")"
{ [ "$rcs" = "0 1" ] || [ "$rcs" = "1 0" ]; } && cat "$T/s1.out" "$T/s2.out" | grep -q "stale commit" && ok || bad "two syncs: exit $rcs; $(cat "$T/s1.out" "$T/s2.out" | head -2)"
[ "$(seq_of "$R5")" = 5 ] && ok || bad "two syncs: sequence $(seq_of "$R5"), expected 5"
run sync-race-verify 0 "$VX" verify "$R5"
"$VXL" sync --from "$IN2" --to "$LS" --quiet
rm -f "$T/hold"
# a cold point read asks for the data file's tail and its cluster at once: on a file this
# small the store coalesces them into one GET (two, one after the other, before)
: > "$T/proxy.log"
fault
PCH_OBJECT_CACHE=off AWS_ENDPOINT_URL=$PX run get-both 0 "$VX" get "$R" --trajectory-key "$(head -1 "$T/keys")" --compact --stats
same "the point read through the proxy" "$T/get-both.out" "$T/getl1.out"
[ "$(grep -c '/data/.*\.vortex ' "$T/proxy.log")" = 1 ] && ok ||
    bad "the tail and the cluster were not fetched with one request: $(grep '/data/' "$T/proxy.log")"
has "a cold point read of a small root: 4 GETs" "$T/get-both.err" 'gets=4 '

# --- snapshots, pins and vacuum on S3
id_of() { "$P" objects cat "$R5/commits/$(printf %020d "$1").json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot_id"])'; }
first=$(id_of 1)
run snaps 0 "$VX" snapshots "$R5"
# five commits, and the manifest of the sync that lost the race (unreferenced; vacuum's to remove)
[ "$(grep -c '^[0-9a-f]\{12\}-' "$T/snaps.out")" = 6 ] && ok || bad "snapshots: $(cat "$T/snaps.out")"
has snaps "$T/snaps.out" "^$(id_of 5) .*CURRENT"
run pin 0 "$VX" pin "$R5" --snapshot "$first" --name p1
has pinned <("$VX" snapshots "$R5" 2>&1) "^$first .*pinned:p1"
"$P" objects ls "$R5/" > "$T/objs-before"
run vac-dry 0 "$VX" vacuum "$R5" --keep 0 --min-age 0 --grace 0 --dry-run
"$P" objects ls "$R5/" > "$T/objs-dry"
cmp -s "$T/objs-before" "$T/objs-dry" && ok || bad "vacuum --dry-run removed objects"
# CURRENT one commit behind: vacuum keeps the newest commit's snapshot as well as CURRENT's
"$P" objects cat "$R5/commits/00000000000000000004.json" > "$T/cur4"
run lag-vac 0 "$P" objects put "$T/cur4" "$R5/CURRENT"
run vac1 0 "$VX" vacuum "$R5" --keep 0 --min-age 0 --grace 0
has vac1 "$T/vac1.out" "^keep $first \(p1\)"
has vac1 "$T/vac1.out" "^keep $(id_of 4) \(CURRENT\)"
has vac1 "$T/vac1.out" "^keep $(id_of 5) \(the newest commit\)"
has vac1 "$T/vac1.out" "^remove $(id_of 2) "
has vac1 "$T/vac1.out" '^remove data/'
"$P" objects cat "$R5/commits/00000000000000000005.json" > "$T/cur5"
run unlag-vac 0 "$P" objects put "$T/cur5" "$R5/CURRENT"
run vac1-verify 0 "$VX" verify "$R5"
run vac1-pinned 0 "$VX" verify "$R5" --snapshot "$first"
run vac1-export 0 "$VX" export --from "$R5" --output-format atif --to "$T/exp-vac"
"$VXL" export --from "$LS" --output-format atif --to "$T/exp-vac-local" >/dev/null 2>&1
diff -r "$T/exp-vac" "$T/exp-vac-local" >/dev/null && ok || bad "export after vacuum on S3 differs from the local root's"
run unpin 0 "$VX" unpin "$R5" --name p1
run unpin-again 1 "$VX" unpin "$R5" --name p1
has unpin-again "$T/unpin-again.err" "no pin 'p1'"
run vac2 0 "$VX" vacuum "$R5" --keep 0 --min-age 0 --grace 0
has vac2 "$T/vac2.out" "^remove $first "
[ "$("$P" objects ls "$R5/manifests/" | wc -l)" = 1 ] && ok || bad "after vacuum: $("$P" objects ls "$R5/manifests/")"
[ "$("$P" objects ls "$R5/commits/" | wc -l)" = 5 ] && ok || bad "vacuum removed commit records"
run vac2-inspect 0 "$VX" inspect "$R5"
has vac2-inspect "$T/vac2-inspect.out" '^footprint: 1 snapshots .*older snapshots only 0 B; unreferenced 0 files'
run vac2-verify 0 "$VX" verify "$R5"
if [ "$VG" != 1 ]; then
    run vac-default 0 "$VX" vacuum "$R5"
    has vac-default "$T/vac-default.err" '1 snapshots kept, 0 removed; 0 files'
fi

# --- a server that ignores If-None-Match is refused for writing; faults; credentials
R3=s3://$B/$PRE/unsafe
fault pass ok200
AWS_ENDPOINT_URL=$PX run unsafe 1 "$VX" build --from "$IN" --to "$R3" --quiet
has unsafe "$T/unsafe.err" 'does not refuse a second create-if-absent'
run unsafe-empty 0 "$P" objects ls "$R3/"
[ ! -s "$T/unsafe-empty.out" ] && ok || bad "the refused writer left: $(head -3 "$T/unsafe-empty.out")"
R4=s3://$B/$PRE/retried
fault pass pass pass pass pass 503 pass 503
AWS_ENDPOINT_URL=$PX run retried 0 "$VX" build --from "$IN" --to "$R4" --quiet
run retried-verify 0 "$VX" verify "$R4"
# the commit object's PUT fails on every try: the build fails, CURRENT and the commits stay
before=$("$P" objects cat "$R4/CURRENT")
fault 500@/commits/ 500@/commits/ 500@/commits/ 500@/commits/ 500@/commits/
AWS_ENDPOINT_URL=$PX run commit-fails 1 "$VX" build --from "$IN" --to "$R4" --quiet
has commit-fails "$T/commit-fails.err" 'HTTP 500 \(after 5 attempts\)'
[ "$("$P" objects cat "$R4/CURRENT")" = "$before" ] && ok || bad "a failed commit changed CURRENT"
"$P" objects ls "$R4/commits/" > "$T/r4-commits"
[ "$(wc -l < "$T/r4-commits")" = 1 ] && ok || bad "a failed commit left: $(cat "$T/r4-commits")"
run after-fail-verify 0 "$VX" verify "$R4"
# a read-ahead whose requests fail on every try fails the scan with the server's error and
# prints nothing; the same scan then answers (nothing of the failed fetch is kept)
fault pass@.vortex $(for _ in $(seq 1 48); do printf '500@.vortex '; done)
PCH_OBJECT_CACHE=off AWS_ENDPOINT_URL=$PX run ahead-fails 1 "$VX" sql "$RM" "select source, count(*) from steps group by source order by source" --format csv
has ahead-fails "$T/ahead-fails.err" 'HTTP 500 \(after 5 attempts\)'
[ ! -s "$T/ahead-fails.out" ] && ok || bad "a failed read-ahead still printed $(head -c 200 "$T/ahead-fails.out")"
fault
PCH_OBJECT_CACHE=off AWS_ENDPOINT_URL=$PX run ahead-after 0 "$VX" sql "$RM" "select source, count(*) from steps group by source order by source" --format csv
same "the scan after a failed read-ahead" "$T/ahead-after.out" "$T/aheadl1.out"
AWS_SECRET_ACCESS_KEY=wrong run denied 1 "$VX" build --from "$IN" --to "$R4" --quiet
has denied "$T/denied.err" 'access denied \(HTTP 403'
[ "$(wc -l < "$T/denied.err")" = 1 ] && ok || bad "wrong secret: $(wc -l < "$T/denied.err") lines"
AWS_SECRET_ACCESS_KEY=wrong run denied-read 1 "$VX" get "$R" --trajectory-key "$(head -1 "$T/keys")"
has denied-read "$T/denied-read.err" 'access denied \(HTTP 403'
run missing 1 "$VX" get "s3://$B/$PRE/nothing" x
has missing "$T/missing.err" 'no CURRENT'

# --- not there yet: says so
run repair 1 "$VX" repair "$R" --manifest "$(id_of 5)"
has repair "$T/repair.err" 'not supported yet' 

"$P" objects ls "s3://$B/$PRE/" 2>/dev/null | while read -r key; do "$P" objects rm "s3://$B/$key" >/dev/null 2>&1; done
echo "s3_vortex: $n checks, $fail failed"
[ $fail = 0 ]
