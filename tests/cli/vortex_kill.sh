#!/usr/bin/env bash
# kill -9 at random points of pchronicle-vortex writers (RFC-0006 §15, §21.3; issue 19 item 6):
# builds, incremental syncs, compactions and vacuums of one root until 200 were killed (at
# most 500 runs), each sent SIGKILL after a random delay spread over its run (some finish
# first). Each sync follows a change of its input (one of two versions of a document swapped
# in). After every one: CURRENT names a snapshot that verifies (the old one, or the new one
# whole), and `get` reads it. Every 25 runs, and at the end, a vacuum that is let finish leaves
# no staging directory and exactly the files its kept snapshots list; at the end a sync that is
# let finish gives the export of a fresh build of the same input.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}   # run-tests.sh sets it to a valgrind wrapper
VG=${PCH_VALGRIND:-0}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-vxk.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0; fail=0
[ -x "$VX" ] || { echo "FAIL: $VX not built"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is required"; exit 1; }
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $*"; }
want=200; rounds=500
[ "$VG" = 1 ] && { want=6; rounds=12; }   # valgrind: a few
R=$T/root
I=$T/in; cp -r tests/data/atif "$I"
"$VX" build --from "$I" --to "$R" --quiet || { echo "FAIL base build"; exit 1; }
flip=0
swap() {      # the input changes: one document edited or back, one added or removed
    flip=$((1 - flip))
    python3 - "$I" "$flip" <<'PY'
import json, os, sys
root, f = sys.argv[1], int(sys.argv[2])
p = os.path.join(root, "exmp02_atif.json")
d = json.load(open(p)); d["steps"][0]["message"] = "version %d" % f; json.dump(d, open(p, "w"))
a = os.path.join(root, "added.json")
if f: json.dump(d, open(a, "w"))
elif os.path.exists(a): os.remove(a)
PY
}
# delays spread over each writer's own run, as timed here (a build of tests/data/atif takes
# 40-90 ms on two cores, a vacuum about 10): most are killed, some finish first
ms_of() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 + 1 )); }
build_ms=$(ms_of "$VX" build --from "$I" --to "$R" --quiet --hot-max 64 --cold-max 1024 --file-bytes 16K)
swap; sync_ms=$(ms_of "$VX" sync --from "$I" --to "$R" --quiet)
compact_ms=$(ms_of "$VX" compact "$R" --quiet)
vacuum_ms=$(ms_of "$VX" vacuum "$R" --keep 2 --min-age 0 --grace 0)
RANDOM=19     # the same kill points each run
exact() {     # after a vacuum that finished: only the kept snapshots' files, no staging dirs
    python3 - "$R" <<'PY'
import json, os, sys
root = sys.argv[1]
want = set()
for f in os.listdir(os.path.join(root, "manifests")):
    m = json.load(open(os.path.join(root, "manifests", f)))
    want.add("manifests/" + f)
    for k in ("data_files", "blob_packs", "trajectory_directory", "content_directory", "directory_runs", "documents", "key_index", "lane_report"):
        for e in m.get(k, []):
            want.add(e["path"])
            if isinstance(e.get("segments"), dict): want.add(e["segments"]["path"])
have = set()
for d in ("manifests", "data", "blobs", "directories"):
    for dp, _, fs in os.walk(os.path.join(root, d)):
        have |= {os.path.relpath(os.path.join(dp, f), root) for f in fs}
staging = [e for e in os.listdir(os.path.join(root, "staging")) if not e.startswith(".")]
sys.exit(0 if have == want and not staging else print(sorted(have ^ want)[:5], staging) or 1)
PY
}
killed=0; finished=0
for ((i = 1; killed < want && i <= rounds; i++)); do
    pick=$((RANDOM % 10))
    if [ $pick -lt 3 ]; then
        "$VX" build --from "$I" --to "$R" --quiet --hot-max 64 --cold-max 1024 --file-bytes 16K >/dev/null 2>&1 & pid=$!
        ms=$((RANDOM % (build_ms * 4 / 5 + 1)))
    elif [ $pick -lt 6 ]; then
        swap
        "$VX" sync --from "$I" --to "$R" --quiet >/dev/null 2>&1 & pid=$!
        ms=$((RANDOM % (sync_ms * 4 / 5 + 1)))
    elif [ $pick -lt 8 ]; then
        "$VX" compact "$R" --quiet >/dev/null 2>&1 & pid=$!
        ms=$((RANDOM % (compact_ms * 4 / 5 + 1)))
    else
        "$VX" vacuum "$R" --keep 2 --min-age 0 --grace 0 >/dev/null 2>&1 & pid=$!
        ms=$((RANDOM % (vacuum_ms * 4 / 5 + 1)))
    fi
    [ "$ms" -lt 1000 ] && sleep "$(printf '0.%03d' "$ms")" || sleep "$((ms / 1000))"
    if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); else finished=$((finished + 1)); fi
    wait "$pid" 2>/dev/null
    if "$VX" verify "$R" >"$T/v.out" 2>&1; then ok; else bad "after kill $i (+$ms ms): verify"; head -3 "$T/v.out"; fi
    [ "$("$VX" get "$R" mm-run-1 --compact 2>/dev/null | wc -l)" = 1 ] && ok || bad "after kill $i: get"
    if [ $((i % 25)) = 0 ]; then
        "$VX" vacuum "$R" --keep 2 --min-age 0 --grace 0 >/dev/null 2>&1 && ok || bad "vacuum after kill $i"
        exact && ok || bad "after kill $i and a vacuum: files other than the kept snapshots' (or staging left)"
    fi
done
"$VX" vacuum "$R" --keep 2 --min-age 0 --grace 0 >/dev/null 2>&1 && ok || bad "the last vacuum"
exact && ok || bad "after the last vacuum: files other than the kept snapshots' (or staging left)"
"$VX" sync --from "$I" --to "$R" --quiet && ok || bad "the sync after the kills"
"$VX" build --from "$I" --to "$T/fresh" --quiet && "$VX" export --from "$T/fresh" --output-format atif --to "$T/fe" >/dev/null 2>&1 &&
    "$VX" export --from "$R" --output-format atif --to "$T/re" >/dev/null 2>&1 && diff -r "$T/fe" "$T/re" >/dev/null && ok ||
    bad "after the kills and a sync, the export differs from a fresh build"
[ "$killed" -ge "$want" ] && ok || bad "only $killed of $((i - 1)) writers were killed before they finished ($want wanted)"
echo "vortex_kill: $killed writers killed, $finished finished first; $n checks, $fail failed"
[ "$fail" -eq 0 ]
