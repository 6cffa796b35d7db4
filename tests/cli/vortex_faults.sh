#!/usr/bin/env bash
# Injected faults at every durable-write boundary of a pchronicle-vortex writer (RFC-0006
# §15, §21.3; issue 19 item 6). build-fault/pchronicle-vortex (`make fault`, built by `make
# test`) fails its N-th write, fsync, link, rename or vacuum unlink with EIO when PCH_FAULT_AT=N
# (src/core/fault.c). A build into a root that has a snapshot is counted once, then failed at
# every one of its operations in turn — blob packs, content directory, data files and their
# segment tables, trajectory directory, manifest, CURRENT — and after each: the old snapshot is
# intact (CURRENT's bytes unchanged, or, when only the last fsync of the directory failed, the
# new snapshot complete), `verify` passes, and the failed writer left nothing in staging/. Then
# vacuum is failed at each of its removals: the root stays healthy and a vacuum run again
# leaves exactly the files of the kept snapshots. Then an incremental sync (edits, a key
# change, a removal, an addition) and a compaction are failed at each of their operations in
# turn, with the same checks; run again without a fault, both agree with a fresh build. And
# a machine without libcurl: S3 use fails with one line, local roots work.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}   # run-tests.sh sets it to a valgrind wrapper
VXF=${PCH_FAULT_CLI:-$PWD/build-fault/pchronicle-vortex}
VG=${PCH_VALGRIND:-0}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-vxf.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0; fail=0
[ -x "$VX" ] || { echo "FAIL: $VX not built"; exit 1; }
[ -x "$VXF" ] || { echo "FAIL: $VXF not built (make fault)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is required"; exit 1; }
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $*"; }
staging_dirs() { find "$1/staging" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }
cur() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["snapshot_id"])' "$1/CURRENT"; }

# the hook is there, and off without PCH_FAULT_AT
PCH_FAULT_AT=1 "$VXF" build --from tests/data/atif/multimodal --to "$T/probe" --quiet 2>"$T/probe.err" && bad "a fault at operation 1 did not fail the build" || ok
grep -q "pch-fault: .*operation 1, fails with EIO" "$T/probe.err" && ok || bad "no fault report: $(head -2 "$T/probe.err")"
[ ! -e "$T/probe/CURRENT" ] && ok || bad "a first build that failed published CURRENT"

# a machine without libcurl (the library is loaded on the first S3 use, src/io/dl.c): an s3://
# root fails with one line naming the package, before any request; local roots still work
PCH_FAULT_NO_LIBCURL=1 AWS_ACCESS_KEY_ID=k AWS_SECRET_ACCESS_KEY=s AWS_ENDPOINT_URL=http://127.0.0.1:9 \
    "$VXF" get s3://no-bucket/root --trajectory-key k >"$T/nolib.out" 2>"$T/nolib.err" && bad "an S3 read without libcurl succeeded" || ok
grep -q 'libcurl.so.4 is not installed (Debian: libcurl4)' "$T/nolib.err" && [ "$(wc -l < "$T/nolib.err")" = 1 ] && ok ||
    bad "without libcurl: $(head -3 "$T/nolib.err")"
PCH_FAULT_NO_LIBCURL=1 "$VXF" build --from tests/data/atif/multimodal --to "$T/nolib-local" --quiet &&
    PCH_FAULT_NO_LIBCURL=1 "$VXF" verify "$T/nolib-local" >/dev/null 2>&1 && ok || bad "a local root without libcurl failed"

# the root: one snapshot; the faulted build adds tests/data/atif with every tier (small hot and
# cold thresholds: blob packs and the content directory) and several data files and shards
R=$T/root
"$VXF" build --from tests/data/atif/multimodal --to "$R" --quiet || { echo "FAIL base build"; exit 1; }
base=$(cat "$R/CURRENT")
args=(build --from tests/data/atif --to "$R" --quiet --hot-max 64 --cold-max 1024 --file-bytes 16K --shard-rows 4)
cp -a "$R" "$T/count-root"
PCH_FAULT_COUNT=$T/count "$VXF" build --from tests/data/atif --to "$T/count-root" --quiet --hot-max 64 --cold-max 1024 \
    --file-bytes 16K --shard-rows 4 || { echo "FAIL the counting build"; exit 1; }
ops=$(cat "$T/count")
[ "$ops" -gt 20 ] && ok || bad "only $ops operations counted"
step=1; [ "$VG" = 1 ] && step=$(( (ops + 5) / 6 ))
committed=0
for ((k = 1; k <= ops; k += step)); do
    PCH_FAULT_AT=$k "$VXF" "${args[@]}" 2>"$T/f.err"; rc=$?
    now=$(cat "$R/CURRENT")
    if [ "$rc" = 0 ]; then
        bad "a fault at operation $k of $ops did not fail the build"
    elif ! grep -q "pch-fault:" "$T/f.err"; then
        bad "operation $k: the build failed without the injected fault: $(head -2 "$T/f.err")"
    elif [ "$now" != "$base" ]; then
        # only a fault after CURRENT's rename (its directory's fsync) may leave the new
        # snapshot published: then it must be whole
        committed=$((committed + 1))
        docs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["counts"]["documents"])' "$R/manifests/$(cur "$R").json")
        [ "$docs" = 10 ] && [ "$k" -gt $((ops - 3)) ] && ok || bad "operation $k of $ops: CURRENT moved to a snapshot of $docs documents"
        printf '%s' "$base" >"$R/CURRENT"              # back to the old snapshot for the next fault
    else ok
    fi
    "$VXF" verify "$R" >"$T/v.out" 2>&1 && ok || { bad "operation $k of $ops: verify after the fault"; head -3 "$T/v.out"; }
    [ "$(staging_dirs "$R")" = 0 ] && ok || bad "operation $k: the failed build left $(ls "$R/staging")"
done
[ "$committed" -le 2 ] && ok || bad "$committed faults left a new CURRENT"
# the same build without a fault succeeds over whatever the failures left
"$VXF" "${args[@]}" && ok || bad "the build after the faults"
"$VX" verify "$R" >/dev/null 2>&1 && ok || bad "verify after the build (under the release CLI)"
[ "$("$VX" get "$R" mm-run-1 --compact 2>/dev/null | wc -l)" = 1 ] && ok || bad "get after the faults"

# vacuum failed at each removal: the root stays healthy; a vacuum again finishes the job
V=$T/vac-template; cp -a "$R" "$V"
cp -a "$V" "$T/vac-count"; PCH_FAULT_COUNT=$T/vcount "$VXF" vacuum "$T/vac-count" --keep 1 --min-age 0 --grace 0 >/dev/null 2>&1
vops=$(cat "$T/vcount")
[ "$vops" -ge 3 ] && ok || bad "vacuum made only $vops operations"
keep=$(cur "$V")
for ((k = 1; k <= vops; k++)); do
    c=$T/vac-$k; rm -rf "$c"; cp -a "$V" "$c"
    PCH_FAULT_AT=$k "$VXF" vacuum "$c" --keep 1 --min-age 0 --grace 0 >/dev/null 2>"$T/vf.err"
    "$VXF" verify "$c" >/dev/null 2>&1 && ok || bad "vacuum fault at operation $k: verify"
    "$VXF" vacuum "$c" --keep 1 --min-age 0 --grace 0 >/dev/null 2>&1 && ok || bad "vacuum again after a fault at $k"
    left=$(cd "$c" && find manifests data blobs directories -type f | sort)
    want=$(python3 - "$c" "$keep" <<'PY'
import json, os, sys
root, i = sys.argv[1:3]
m = json.load(open(os.path.join(root, "manifests", i + ".json")))
out = {"manifests/%s.json" % i}
for k in ("data_files", "blob_packs", "trajectory_directory", "content_directory", "directory_runs", "documents", "key_index", "lane_report"):
    for f in m.get(k, []):
        out.add(f["path"])
        if isinstance(f.get("segments"), dict): out.add(f["segments"]["path"])
print("\n".join(sorted(out)))
PY
)
    [ "$left" = "$want" ] && ok || bad "vacuum fault at operation $k, then vacuum: files other than the kept snapshot's"
done

# sync and compaction failed at each of their operations (issue 19 item 6): the same checks,
# and the writer run again without a fault publishes the snapshot a fresh build agrees with
I=$T/in; cp -r tests/data/atif "$I"
S=$T/sroot
"$VXF" build --from "$I" --to "$S" --quiet --hot-max 64 --cold-max 1024 --file-bytes 16K --shard-rows 4 || { echo "FAIL sync base build"; exit 1; }
python3 - "$I" <<'PY'
import json, os, sys
root = sys.argv[1]
docs = sorted(os.path.relpath(os.path.join(dp, f), root) for dp, _, fs in os.walk(root) for f in fs if f.endswith(".json"))
d = json.load(open(os.path.join(root, docs[0]))); d["steps"][0]["message"] = "x" * 3000; json.dump(d, open(os.path.join(root, docs[0]), "w"))
d = json.load(open(os.path.join(root, docs[1]))); d["session_id"] = d.get("session_id", "s") + "-new"; json.dump(d, open(os.path.join(root, docs[1]), "w"))
os.remove(os.path.join(root, docs[2]))
json.dump(json.load(open(os.path.join(root, docs[3]))), open(os.path.join(root, "added.json"), "w"))
PY
fault_loop() {    # fault_loop NAME ARGS...: the writer's operations failed in turn on root $S
    local name=$1 base ops k rc now moved=0; shift
    base=$(cat "$S/CURRENT")
    rm -rf "$T/c-$name"; cp -a "$S" "$T/c-$name"
    PCH_FAULT_COUNT=$T/count-$name "$VXF" "$@" --to "$T/c-$name" >/dev/null 2>&1 || true
    [ "$name" = compact ] && { rm -rf "$T/c-$name"; cp -a "$S" "$T/c-$name"; PCH_FAULT_COUNT=$T/count-$name "$VXF" compact "$T/c-$name" --quiet; }
    ops=$(cat "$T/count-$name")
    [ "$ops" -gt 5 ] && ok || bad "$name: only $ops operations counted"
    local step=1; [ "$VG" = 1 ] && step=$(( (ops + 4) / 5 ))
    for ((k = 1; k <= ops; k += step)); do
        if [ "$name" = compact ]; then PCH_FAULT_AT=$k "$VXF" compact "$S" --quiet 2>"$T/f.err"; rc=$?
        else PCH_FAULT_AT=$k "$VXF" "$@" --to "$S" 2>"$T/f.err"; rc=$?; fi
        now=$(cat "$S/CURRENT")
        if [ "$rc" = 0 ]; then bad "$name: a fault at operation $k of $ops did not fail it"
        elif ! grep -q "pch-fault:" "$T/f.err"; then bad "$name: operation $k failed without the injected fault: $(head -2 "$T/f.err")"
        elif [ "$now" != "$base" ]; then
            moved=$((moved + 1))
            [ "$k" -gt $((ops - 3)) ] && ok || bad "$name: operation $k of $ops left a new CURRENT"
            "$VXF" verify "$S" >/dev/null 2>&1 && ok || bad "$name: the snapshot a late fault published does not verify"
            printf '%s' "$base" >"$S/CURRENT"
        else ok
        fi
        "$VXF" verify "$S" >"$T/v.out" 2>&1 && ok || { bad "$name: operation $k of $ops: verify after the fault"; head -3 "$T/v.out"; }
        [ "$(staging_dirs "$S")" = 0 ] && ok || bad "$name: operation $k: the failed writer left $(ls "$S/staging")"
    done
    [ "$moved" -le 2 ] && ok || bad "$name: $moved faults left a new CURRENT"
    echo "$name: $ops operations" >>"$T/summary"
}
fault_loop sync sync --from "$I" --quiet
"$VXF" sync --from "$I" --to "$S" --quiet && ok || bad "the sync after the faults"
"$VX" build --from "$I" --to "$T/fresh" --quiet
for r in "$S" "$T/fresh"; do "$VX" export --from "$r" --output-format atif --to "$r.export" >/dev/null 2>&1; done
diff -r "$S.export" "$T/fresh.export" >/dev/null && ok || bad "after the sync faults, the export differs from a fresh build"
fault_loop compact
"$VXF" compact "$S" --quiet && ok || bad "the compaction after the faults"
rm -rf "$S.export"; "$VX" export --from "$S" --output-format atif --to "$S.export" >/dev/null 2>&1
diff -r "$S.export" "$T/fresh.export" >/dev/null && ok || bad "after the compaction faults, the export differs from a fresh build"

echo "vortex_faults: $ops build operations, $vops vacuum operations, $(tr '\n' ' ' <"$T/summary")failed in turn; $n checks, $fail failed"
[ "$fail" -eq 0 ]
