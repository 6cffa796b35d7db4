#!/usr/bin/env bash
# (PCH_VALGRIND_LONG: the valgrind pass of scripts/run-tests.sh starts this suite first.)
# Incremental sync and compaction of a pchronicle-vortex root (RFC-0006 §10.4, §11.2, §11.4,
# §12.2, §12.3; issue 19 items 2, 3, 5, 7): a root built from a copy of the shared corpus is
# synced through rounds of edits, deletions, additions, key changes, invalid documents and
# touched files. After every sync it verifies, and a fresh build of the same documents gives
# the same export (byte for byte), the same rows of every SQL relation (both engines) and the
# same RL and SFT reads; an unchanged document keeps its key; a removed one is gone; the
# pre-sync snapshot still reads as before. Nothing changed: no snapshot. Compaction changes no
# answer, leaves no L0, and a later sync starts from it; a tiered one keeps the files with few
# shadowed rows and rewrites the rest. Two writers racing: exactly one
# commits, the other fails "stale commit" and publishes nothing. Limits say "maintenance
# required"; --auto-compact compacts; --watch syncs once per quiet batch and stops on SIGINT.
# Usage and refusal paths.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}   # run-tests.sh sets it to a valgrind wrapper
VG=${PCH_VALGRIND:-0}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-vxs.XXXXXX") || exit 1
holder=""
trap '[ -n "$holder" ] && kill $holder 2>/dev/null; rm -rf "$T"' EXIT
n=0; fail=0
command -v python3 >/dev/null || { echo "FAIL: python3 is required"; exit 1; }
command -v flock >/dev/null || { echo "FAIL: flock (util-linux) is required"; exit 1; }
command -v b3sum >/dev/null || { echo "FAIL: b3sum is required (scripts/bootstrap.sh installs it)"; exit 1; }
[ -x "$VX" ] || { echo "FAIL: $VX not built"; exit 1; }
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $*"; }
run() {
    local name=$1 want=$2 rc; shift 2
    "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"; rc=$?
    if [ "$rc" = "$want" ]; then ok; return 0; fi
    bad "$name: exit $rc, expected $want"; head -n 5 "$T/$name.err" | sed 's/^/    /'; return 1
}
has() { if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no line matching /$3/ in:"; head -n 8 "$2" | sed 's/^/    /'; fi; }
cur() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["snapshot_id"])' "$1/CURRENT"; }
jget() { python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$1" "$2"; }

# the input: the shared corpus (under valgrind: the small test corpus), as a directory whose
# base name is the source id of both projections
# (under valgrind: one round, and each comparison reads each relation once, one engine)
if [ "$VG" = 1 ]; then CORPUS=tests/data/atif; ROUNDS=1; ENGINES=auto; else CORPUS=../shared/corpus/atif; ROUNDS=2; ENGINES="auto sqlite"; fi
[ -d "$CORPUS" ] || { echo "FAIL: $CORPUS is missing (../shared beside the repository)"; exit 1; }
IN=$T/src/in
mkdir -p "$T/src" && cp -r "$CORPUS" "$IN"
R=$T/root
run base 0 "$VX" build --from "$IN" --to "$R" --quiet --json
# write amplification (RFC-0006 §20.3, §22.2): bytes written per ATIF byte read, the same
# measure for build, sync and compaction; FILE's JSON must hold it and agree with its parts
wamp() {
    python3 - "$@" <<'PY' && ok || bad "$1: write amplification: $(cat "$2")"
import json, os, sys
tag, f, kind = sys.argv[1:4]
j = json.loads(open(f).readline())
rd = j["input_bytes"] if kind == "build" else j["bytes_read"]
assert rd > 0 and j["bytes_written"] > 0, (rd, j["bytes_written"])
assert abs(j["write_amplification"] - j["bytes_written"] / rd) < 1e-3, j
assert 0 <= j.get("encode_seconds", 0) and j["seconds"] > 0, j
if kind == "build":
    # what the build wrote is the snapshot on disk: its files less staging and locks
    disk = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(sys.argv[4]) if "/staging" not in d + "/"
               for n in ns if n != "CURRENT")
    assert j["bytes_written"] == disk, (j["bytes_written"], disk)
    assert 0 < j["encode_seconds"] < j["seconds"] * os.cpu_count(), j
PY
}
wamp build "$T/base.out" build "$R"
s0=$(cur "$R")

# same: the export, every relation (both engines), RL and SFT of root $1 equal a fresh build's
same() {
    local tag=$1 F=$T/fresh-$1
    if [ "$VG" = 1 ]; then case $tag in round1|compacted|tiered|tiered-reproject) ;; *) return ;; esac; fi
    rm -rf "$F" "$T/ea" "$T/eb"
    run "$tag-fresh" 0 "$VX" build --from "$IN" --to "$F" --quiet ${FRESH_ARGS:-} || return
    run "$tag-export-a" 0 "$VX" export --from "$R" --output-format atif --to "$T/ea"
    run "$tag-export-b" 0 "$VX" export --from "$F" --output-format atif --to "$T/eb"
    diff -r "$T/ea" "$T/eb" >"$T/$tag-export.diff" && ok || { bad "$tag: export differs from a fresh build"; head -5 "$T/$tag-export.diff"; }
    local k=0
    for q in "SELECT * FROM runs ORDER BY source_id, run_id, trajectory_key" \
             "SELECT * FROM steps ORDER BY source_id, run_id, trajectory_key, step_ordinal" \
             "SELECT * FROM tool_calls ORDER BY source_id, run_id, trajectory_key, step_ordinal, call_ordinal" \
             "SELECT * FROM observation_results ORDER BY source_id, run_id, trajectory_key, step_ordinal, result_index" \
             "SELECT source, count(*), sum(completion_tokens) FROM steps GROUP BY source ORDER BY source" \
             "SELECT function_name, count(*) FROM tool_calls GROUP BY function_name ORDER BY 2 DESC, 1" \
             "SELECT source, count(*), min(step_ordinal), max(step_ordinal) FROM steps WHERE step_ordinal >= 1 GROUP BY source ORDER BY 1" \
             "SELECT source, step_ordinal FROM steps WHERE step_ordinal < 3 ORDER BY source_id, run_id, trajectory_key, step_ordinal LIMIT 40"; do
        [ "$VG" = 1 ] && [ $k -ge 4 ] && break
        # both engines once (round 1); the later comparisons with the default engine
        local engines=auto; [ "$tag" = round1 ] && engines=$ENGINES
        for eng in $engines; do
            k=$((k + 1))
            "$VX" sql "$R" "$q" --format jsonl --engine $eng >"$T/qa" 2>"$T/qa.err" && "$VX" sql "$F" "$q" --format jsonl --engine $eng >"$T/qb" 2>&1 &&
                cmp -s "$T/qa" "$T/qb" && ok || { bad "$tag: relation query $k ($eng) differs: $q"; diff "$T/qa" "$T/qb" | head -4; head -2 "$T/qa.err"; }
        done
    done
    # the answers: RL's counts, SFT's examples, messages and checksum. SFT's message_bytes and
    # content_bytes count the text its reader wrote for its batches (work, not the answer):
    # after a --reproject compaction of the small corpus they differ from a fresh build's
    # while every `sft --format messages` line is the same
    for verb in rl sft; do
        "$VX" $verb "$R" --format count >"$T/ca" 2>&1 && "$VX" $verb "$F" --format count >"$T/cb" 2>&1 &&
            python3 -c 'import json,sys
a, b = (json.loads(open(f).readline()) for f in sys.argv[1:3])
for k in ("message_bytes", "content_bytes"): a.pop(k, None); b.pop(k, None)
sys.exit(a != b)' "$T/ca" "$T/cb" && ok ||
            bad "$tag: $verb differs: $(cat "$T/ca") / $(cat "$T/cb")"
    done
    run "$tag-verify" 0 "$VX" verify "$R"
}

# nothing changed: no snapshot, no file read
run sync-none 0 "$VX" sync --from "$IN" --to "$R" --json
[ "$(jget "$T/sync-none.out" published)" = False ] && [ "$(jget "$T/sync-none.out" read)" = 0 ] && [ "$(cur "$R")" = "$s0" ] && ok ||
    bad "a sync with nothing changed published or read: $(cat "$T/sync-none.out")"
find "$IN" -name "*.json" -exec touch {} +
run sync-touch 0 "$VX" sync --from "$IN" --to "$R" --json
[ "$(jget "$T/sync-touch.out" published)" = False ] && [ "$(jget "$T/sync-touch.out" read)" -gt 0 ] && [ "$(cur "$R")" = "$s0" ] && ok ||
    bad "touched files (same bytes) published a snapshot: $(cat "$T/sync-touch.out")"

# a key of a document no round changes (the last file in path order), as get prints it now
keep_doc=$(cd "$IN" && find . -name '*.json' | sort | tail -n 1)
keep_key=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("trajectory_id") or d["session_id"])' "$IN/$keep_doc")
"$VX" get "$R" "$keep_key" --compact >"$T/keep0" 2>/dev/null
# round r changes a different slice of the documents: edits (a message, a dropped step), a
# new session id (its keys change: tombstones), a removal, an addition, an invalid file
mutate() {
    python3 - "$IN" "$1" <<'PY'
import json, os, sys
root, r = sys.argv[1], int(sys.argv[2])
docs = sorted(os.path.relpath(os.path.join(dp, f), root) for dp, _, fs in os.walk(root) for f in fs if f.endswith(".json"))
docs = [d for d in docs if not d.startswith("added-") and d != "broken.json"][:-1]   # the last one never changes
def load(p):
    try: return json.load(open(os.path.join(root, p)))
    except Exception: return None
pick = docs[(r * 7) % len(docs):] + docs[:(r * 7) % len(docs)]
edits, done = 0, set()
for p in pick:
    d = load(p)
    if not isinstance(d, dict) or not d.get("steps") or p in done: continue
    if edits == 0:
        d["steps"][0]["message"] = "edited in round %d" % r
    elif edits == 1:
        if len(d["steps"]) > 1: d["steps"] = d["steps"][:-1]
        else: d.setdefault("extra", {})["round"] = r
    elif edits == 2:
        d["session_id"] = "%s-round%d" % (d.get("session_id", "s"), r)
    else:
        break
    json.dump(d, open(os.path.join(root, p), "w"), indent=1)
    done.add(p); edits += 1
for p in pick:
    if p not in done:
        d = load(p)
        os.remove(os.path.join(root, p)); done.add(p)
        if isinstance(d, dict) and (d.get("trajectory_id") or d.get("session_id")):
            print("%s@%s" % (d.get("trajectory_id") or d["session_id"], p))
        break
src = next((p for p in pick if p not in done and load(p) is not None), None)
if src: json.dump(load(src), open(os.path.join(root, "added-%d.json" % r), "w"))
if r % 2: open(os.path.join(root, "broken.json"), "w").write('{"schema_version": "ATIF-v1.4"')
elif os.path.exists(os.path.join(root, "broken.json")): os.remove(os.path.join(root, "broken.json"))
PY
}
for ((r = 1; r <= ROUNDS; r++)); do
    before=$(cur "$R")
    gone=$(mutate $r) || bad "round $r: could not change the input"
    sleep 0.01
    run "sync-$r" 0 "$VX" sync --from "$IN" --to "$R" --json || continue
    [ "$(jget "$T/sync-$r.out" published)" = True ] && [ "$(cur "$R")" != "$before" ] && ok || bad "round $r published nothing: $(cat "$T/sync-$r.out")"
    wamp "sync-$r" "$T/sync-$r.out" sync
    [ "$(jget "$T/sync-$r.out" changed)" -ge 2 ] && [ "$(jget "$T/sync-$r.out" added)" -ge 1 ] && [ "$(jget "$T/sync-$r.out" tombstones)" -ge 1 ] && ok ||
        bad "round $r: counts $(cat "$T/sync-$r.out")"
    same "round$r"
    # the snapshot before the sync still reads as it did
    run "old-$r" 0 "$VX" sql "$R" "SELECT count(*) FROM runs" --format csv --snapshot "$before"
    # the removed document's key is gone (and was there before)
    if [ -n "$gone" ]; then
        run "gone-before-$r" 0 "$VX" get "$R" --trajectory-key "$gone" --snapshot "$before" --compact
        run "gone-$r" 1 "$VX" get "$R" --trajectory-key "$gone"
    fi
    # an unchanged document keeps its key and reads the same
    "$VX" get "$R" "$keep_key" --compact >"$T/keep$r" 2>/dev/null && cmp -s "$T/keep0" "$T/keep$r" && ok || bad "round $r: the unchanged document's key or content moved"
done
run inspect-l0 0 "$VX" inspect "$R"
has inspect-l0 "$T/inspect-l0.out" "^maint +l0_runs=$ROUNDS l0_files=$ROUNDS .* shadowed_rows=[1-9][0-9]* active_density=0\.[0-9]+ shadowed_share=0\.[0-9]+ required=no$"
has inspect-lastsync "$T/inspect-l0.out" "^lastsync snapshot_id=$(cur "$R") added=[0-9]+ changed=[0-9]+ removed=[0-9]+ .*bytes_written=[1-9][0-9]* seconds="
# compaction: no answer changes, no L0 left, and a sync afterwards starts from it
pre=$(cur "$R")
run compact-needed 0 "$VX" compact "$R" --if-needed --l0-runs 0 --l0-files 0 --max-shadowed 0 --small-files 0 --json
[ "$(jget "$T/compact-needed.out" compacted)" = False ] && [ "$(cur "$R")" = "$pre" ] && ok || bad "compact --if-needed without a trigger ran: $(cat "$T/compact-needed.out")"
run compact 0 "$VX" compact "$R" --json
[ "$(jget "$T/compact.out" compacted)" = True ] && ok || bad "compact did not run: $(cat "$T/compact.out")"
wamp compact "$T/compact.out" compact
same compacted
# ... and its rows are in the order a fresh build writes them (the synced documents merged back
# among the others, not appended: a time window's zone maps prune as in a rebuild, §22.4)
q="SELECT doc_path, trajectory_key, n_steps FROM runs"
"$VX" sql "$R" "$q" --format csv >"$T/order-a" 2>&1 && "$VX" sql "$T/fresh-compacted" "$q" --format csv >"$T/order-b" 2>&1 &&
    cmp -s "$T/order-a" "$T/order-b" && ok || { bad "compacted: rows not in a fresh build's order"; diff "$T/order-a" "$T/order-b" | head -4; }
run inspect-c 0 "$VX" inspect "$R"
has inspect-c "$T/inspect-c.out" "^maint +l0_runs=0 l0_files=0 l0_directory_rows=0 l0_directory_memory=0 rows=[0-9]+ shadowed_rows=0 active_density=1\.0000"
run sync-after-compact 0 "$VX" sync --from "$IN" --to "$R" --json
[ "$(jget "$T/sync-after-compact.out" published)" = False ] && [ "$(jget "$T/sync-after-compact.out" read)" = 0 ] && ok ||
    bad "a sync right after compaction found changes: $(cat "$T/sync-after-compact.out")"
mutate 9 >/dev/null
run sync-9 0 "$VX" sync --from "$IN" --to "$R" --quiet
same after-compact
# vacuum then removes what only the older snapshots reached; every reader still agrees
run vacuum 0 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
same vacuumed

# limits: one L0 run allowed, the second sync says maintenance required; --auto-compact runs it
mutate 10 >/dev/null
run sync-limit-1 0 "$VX" sync --from "$IN" --to "$R" --max-l0-runs 1
mutate 11 >/dev/null
run sync-limit-2 0 "$VX" sync --from "$IN" --to "$R" --max-l0-runs 1
has sync-limit-2 "$T/sync-limit-2.err" "^maintenance required: .*pchronicle-vortex compact"
has sync-limit-due "$T/sync-limit-2.err" "^compaction due \(the snapshot says maintenance required\)"
run inspect-req 0 "$VX" inspect "$R"
has inspect-req "$T/inspect-req.out" "^maint +l0_runs=3 .* required=yes$"
mutate 12 >/dev/null
run sync-auto 0 "$VX" sync --from "$IN" --to "$R" --auto-compact --l0-runs 2 --json
[ "$(sed -n 2p "$T/sync-auto.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["compacted"])')" = True ] && ok ||
    bad "sync --auto-compact over a trigger did not compact: $(cat "$T/sync-auto.out")"
same auto

# one committer (§11.4): a sync and a compaction that both start from the same CURRENT, held at
# the commit lock until both are ready: exactly one commits, the other is a stale commit
mutate 13 >/dev/null
base=$(cur "$R")
exec 9>"$R/staging/.commit.lock"
flock -x 9
"$VX" sync --from "$IN" --to "$R" --quiet >"$T/race-a.out" 2>&1 & pa=$!
"$VX" compact "$R" --quiet >"$T/race-b.out" 2>&1 & pb=$!
sleep 2
flock -u 9; exec 9>&-
wait $pa; ra=$?; wait $pb; rb=$?
if [ $((ra + rb)) = 1 ] && grep -q "stale commit" "$T/race-a.out" "$T/race-b.out"; then ok; else bad "race: sync exit $ra, compact exit $rb: $(cat "$T/race-a.out" "$T/race-b.out")"; fi
[ "$(cur "$R")" != "$base" ] && ok || bad "race: nothing was committed"
run race-verify 0 "$VX" verify "$R"
run race-retry 0 "$VX" sync --from "$IN" --to "$R" --quiet
same race

# a tiered compaction: of a root with many small files, it rewrites the L0 files and the files
# with many shadowed rows, keeps the others with their deleted rows, and changes no answer
# (small files so that even the valgrind corpus spans several; the fresh builds use the same
# layout: the SFT checksum follows the pages)
R_MAIN=$R; R=$T/tiered; FRESH_ARGS="--file-bytes 16K --cluster-bytes 4K"
run tiered-build 0 "$VX" build --from "$IN" --to "$R" --quiet $FRESH_ARGS
mutate 14 >/dev/null
run tiered-sync 0 "$VX" sync --from "$IN" --to "$R" --quiet
run tiered-compact 0 "$VX" compact "$R" --rewrite-shadowed 100 --json   # only L0 and all-shadowed files
python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); sys.exit(not (d["files_rewritten"] > 0 and d["files_kept"] > 0))' "$T/tiered-compact.out" && ok ||
    bad "tiered compaction rewrote or kept no file: $(cat "$T/tiered-compact.out")"
run tiered-inspect 0 "$VX" inspect "$R"
has tiered-inspect "$T/tiered-inspect.out" "^maint +l0_runs=0 l0_files=0 .* shadowed_rows=[1-9]"
same tiered
mutate 15 >/dev/null
run tiered-sync-2 0 "$VX" sync --from "$IN" --to "$R" --quiet
same tiered-sync
run tiered-full 0 "$VX" compact "$R" --full --json
[ "$(jget "$T/tiered-full.out" files_kept)" = 0 ] && ok || bad "compact --full kept files: $(cat "$T/tiered-full.out")"
# rows are copied as they are (paged trajectories too, at these cluster sizes), not re-projected
[ "$(jget "$T/tiered-full.out" files_copied)" = "$(jget "$T/tiered-full.out" files_rewritten)" ] && ok ||
    bad "compact --full did not copy every rewritten file's rows: $(cat "$T/tiered-full.out")"
same tiered-full
# --reproject: each document rebuilt and projected again; the same answers
mutate 16 >/dev/null
run tiered-sync-3 0 "$VX" sync --from "$IN" --to "$R" --quiet
run tiered-reproject 0 "$VX" compact "$R" --full --reproject --json
[ "$(jget "$T/tiered-reproject.out" files_copied)" = 0 ] && [ "$(jget "$T/tiered-reproject.out" files_kept)" = 0 ] && ok ||
    bad "compact --reproject copied rows or kept files: $(cat "$T/tiered-reproject.out")"
same tiered-reproject
R=$R_MAIN; FRESH_ARGS=""

# --watch: one snapshot per quiet batch of changes (a burst of two files is one sync; a file in a
# directory made meanwhile is seen); SIGINT stops it with exit 0 and a healthy root
W=$T/watch; mkdir -p "$W"; cp -r tests/data/atif "$W/in"
run watch-base 0 "$VX" build --from "$W/in" --to "$W/r" --quiet
WAIT=3; [ "$VG" = 1 ] && WAIT=10    # a pass under valgrind takes seconds
"$VX" sync --from "$W/in" --to "$W/r" --watch --debounce-ms 300 --json >"$T/watch.out" 2>"$T/watch.err" & wp=$!
sleep $WAIT
cp "$W/in/exmp02_atif.json" "$W/in/burst-1.json"; cp "$W/in/exmp02_atif.json" "$W/in/burst-2.json"
sleep $WAIT
mkdir "$W/in/later"; cp "$W/in/exmp02_atif.json" "$W/in/later/late.json"
sleep $WAIT
kill -INT $wp; wait $wp; rc=$?
[ "$rc" = 0 ] && ok || bad "sync --watch stopped by SIGINT: exit $rc"
python3 - "$T/watch.out" <<'PY' && ok || bad "sync --watch: $(cat "$T/watch.out")"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])]
pub = [x for x in s if x["published"]]
assert not s[0]["published"], s                       # the first pass: nothing changed
assert sum(x["added"] for x in pub) == 3, pub          # burst-1, burst-2, later/late
assert any(x["added"] == 2 for x in pub), pub          # the burst was one snapshot
PY
run watch-verify 0 "$VX" verify "$W/r"
run watch-get 0 "$VX" get "$W/r" --trajectory-key "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print((d.get("trajectory_id") or d["session_id"]) + "@later/late.json")' "$W/in/later/late.json")"
run usage-watch-inside 2 "$VX" sync --from "$W" --to "$W/r" --watch

# refusals and usage
run usage-sync-no-to 2 "$VX" sync --from "$IN"
run usage-sync-option 2 "$VX" sync --from "$IN" --to "$R" --frobnicate
run sync-no-root 1 "$VX" sync --from "$IN" --to "$T/no-such-root"
has sync-no-root "$T/sync-no-root.err" "has no snapshot to sync: build it first"
run sync-source 1 "$VX" sync --from "$IN" --to "$R" --source-id other
has sync-source "$T/sync-source.err" "differs from the snapshot's"
run usage-compact 2 "$VX" compact
run usage-compact-pct 2 "$VX" compact "$R" --max-shadowed 101
run compact-no-root 1 "$VX" compact "$T/no-such-root"
for verb in sync compact; do run "help-$verb" 0 "$VX" $verb --help && has "help-$verb" "$T/help-$verb.out" '^usage: '; done
# a snapshot without a document list (built before sync existed) is refused, naming why
O=$T/old; cp -r "$R" "$O"
python3 - "$O" <<'PY'
import json, os, subprocess, sys
root = sys.argv[1]
cur = json.load(open(os.path.join(root, "CURRENT")))
p = os.path.join(root, cur["manifest"])
m = json.load(open(p)); m.pop("documents", None)
data = (json.dumps(m) + "\n").encode()
open(p, "wb").write(data)
cur["manifest_digest"] = "blake3:" + subprocess.run(["b3sum", "--no-names", p], capture_output=True, text=True).stdout.split()[0]
open(os.path.join(root, "CURRENT"), "w").write(json.dumps(cur))
PY
run sync-old 1 "$VX" sync --from "$IN" --to "$O"
has sync-old "$T/sync-old.err" "keeps no document list"
# a document list whose bytes changed on disk is refused (it is loaded while the walk runs:
# the loader's error, not the walk's, is the one reported), and CURRENT stays
O=$T/baddocs; cp -r "$R" "$O"
before=$(cat "$O/CURRENT")
python3 - "$O" <<'PY'
import json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, json.load(open(os.path.join(root, "CURRENT")))["manifest"])))
p = os.path.join(root, m["documents"][0]["path"])
b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0xff
open(p, "wb").write(bytes(b))
PY
run sync-baddocs 1 "$VX" sync --from "$IN" --to "$O"
has sync-baddocs "$T/sync-baddocs.err" "digest blake3:[0-9a-f]+, manifest says"
if [ "$(cat "$O/CURRENT")" = "$before" ]; then ok; else bad "sync-baddocs: CURRENT changed"; fi
# a v1 manifest that carries L0 runs is refused (a reader of v1 would read shadowed rows)
python3 - "$R" "$T/v1" <<'PY'
import json, os, shutil, subprocess, sys
root, out = sys.argv[1], sys.argv[2]
shutil.copytree(root, out)
cur = json.load(open(os.path.join(out, "CURRENT")))
p = os.path.join(out, cur["manifest"])
m = json.load(open(p)); m["format"] = "pchronicle-vortex-manifest/v1"; m["directory_runs"] = m.get("directory_runs") or [m["trajectory_directory"][0]]
open(p, "w").write(json.dumps(m))
cur["manifest_digest"] = "blake3:" + subprocess.run(["b3sum", "--no-names", p], capture_output=True, text=True).stdout.split()[0]
open(os.path.join(out, "CURRENT"), "w").write(json.dumps(cur))
PY
run v1-runs 1 "$VX" get "$T/v1" "$keep_key"
has v1-runs "$T/v1-runs.err" "manifest/v1 manifest with directory runs or deleted rows"

echo "vortex_sync: $ROUNDS rounds; $n checks, $fail failed"
[ "$fail" -eq 0 ]
