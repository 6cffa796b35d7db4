#!/usr/bin/env bash
# Incremental sync benchmark (issue 19 "Performance"; RFC-0006 §11.2, §12.2, §12.3, §12.4; not part
# of make test). On the shared generator's `scaled` corpus:
#   1. a full build (wall s, ATIF MiB/s, bytes on disk), then warm point reads (`bench-get` over
#      N sampled keys: p50/p95) and three narrow scans (`bench-sql`: p50 of each) — the
#      compacted state's figures;
#   2. ROUNDS syncs, each after changing PCT % of the documents (a third edited, a third
#      removed, a third added as copies), none compacted: each sync's wall s and bytes written
#      (`sync --json`) against the full build's;
#   2b. SWEEP (default "5 20"): from the same full build, one sync after changing each of those
#      percentages of the documents (a hard-linked copy of the root and the input each; the
#      same three kinds of change): the sync cost against the changed share (`sweep` in
#      results.json);
#   3. `compact` (wall s; throughput over the ATIF bytes of the documents it holds); then the
#      same point reads and scans of the state after the last sync (L0 runs and deleted rows in
#      place, kept as a hard-linked copy) and of the compacted root, alternately, three rounds
#      (medians); then `vacuum --keep 1 --min-age 0 --grace 0` and the root's bytes against a
#      fresh build of the final input, and the same reads of both, alternately (`final`,
#      `vacuumed` in results.json: the scan amplification compaction leaves, RFC-0006 §22.4).
# The input is a hard-linked copy of the corpus; a change writes a new file and renames it over
# the link (the corpus itself is never modified). Keys are sampled among documents no round
# touches. Prints one markdown table with the goals; raw figures in $OUT/results.json.
#
#   bench/vortex_sync.sh                      CORPUS=/tmp/traj-corpus/scaled/docs ROUNDS=8 PCT=1
#   BUILD=build OUT=/tmp/vortex-sync N=200 bench/vortex_sync.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
CORPUS=${CORPUS:-/tmp/traj-corpus/scaled/docs}
OUT=${OUT:-/tmp/vortex-sync}
ROUNDS=${ROUNDS:-8}; PCT=${PCT:-1}; N=${N:-200}; REPEAT=${REPEAT:-20}; SWEEP=${SWEEP-"5 20"}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS (../shared/bench/traj/gen-corpus.js, or bench/vortex_traj.sh STAGES=corpus)"; exit 1; }
say() { printf '[vortex_sync %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
rm -rf "$OUT"; mkdir -p "$OUT/bin"
cp "$BUILD/pchronicle-vortex" "$OUT/bin/"; VX=$OUT/bin/pchronicle-vortex
IN=$OUT/in/$(basename "$(dirname "$CORPUS")"); R=$OUT/root
mkdir -p "$(dirname "$IN")"
cp -al "$CORPUS" "$IN"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }
du_b() { du -sb "$1" | cut -f1; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# the documents each round changes (seeded), and keys among the others
SWEEP=$SWEEP python3 - "$IN" "$ROUNDS" "$PCT" "$N" "$OUT" <<'PY'
import json, os, random, sys
root, rounds, pct, n, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
docs = sorted(os.path.relpath(os.path.join(dp, f), root) for dp, _, fs in os.walk(root) for f in fs if f.endswith(".json"))
rnd = random.Random(19)
per = max(3, int(len(docs) * pct / 100))
order = docs[:]; rnd.shuffle(order)
plan = []
for r in range(rounds):
    chunk = order[r * per:(r + 1) * per]
    third = len(chunk) // 3
    plan.append({"edit": chunk[:third], "remove": chunk[third:2 * third], "copy": chunk[2 * third:]})
touched = set(d for p in plan for k in p for d in p[k])
json.dump(plan, open(os.path.join(out, "plan.json"), "w"))
# the sweep's changes: for each percentage, its own seeded sample of the documents
sweep = {}
for sp in os.environ.get("SWEEP", "").split():
    srnd = random.Random("sweep-" + sp)
    chunk = srnd.sample(docs, max(3, int(len(docs) * float(sp) / 100)))
    third = len(chunk) // 3
    sweep[sp] = {"edit": chunk[:third], "remove": chunk[third:2 * third], "copy": chunk[2 * third:]}
json.dump(sweep, open(os.path.join(out, "sweep-plan.json"), "w"))
keys = []
for d in order[rounds * per:]:
    if len(keys) >= n: break
    j = json.load(open(os.path.join(root, d)))
    k = j.get("trajectory_id") or j.get("session_id")
    if k: keys.append("%s@%s" % (k, d))
open(os.path.join(out, "keys.txt"), "w").write("\n".join(keys) + "\n")
print(len(docs), per, file=sys.stderr)
PY
cat >"$OUT/scans.sql" <<'SQL'
SELECT source, count(*) FROM steps GROUP BY source
SELECT function_name, count(*) FROM tool_calls GROUP BY function_name
SELECT count(*) FROM steps WHERE timestamp_ms >= 1769000000000 AND timestamp_ms < 1769500000000
SQL
reads() {   # reads TAG [ROOT]: warm point reads and narrow scans of ROOT ($R) into $OUT/TAG-*.json
    "$VX" bench-get "${2:-$R}" --keys "$OUT/keys.txt" --key-kind trajectory --warmup 1 --repeat 3 >"$OUT/$1-get.json"
    "$VX" bench-sql "${2:-$R}" --queries "$OUT/scans.sql" --repeat "$REPEAT" >"$OUT/$1-sql.json"
}
mutate() {  # mutate ROUND [INPUT PLAN KEY]: the plan's edits (a message), removals and copies, each by rename
    python3 - "${2:-$IN}" "${3:-$OUT/plan.json}" "$1" "${4:-}" <<'PY'
import json, os, sys
root, plan, r = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
p = plan[sys.argv[4]] if sys.argv[4] else plan[r]
def put(path, d):
    tmp = path + ".tmp"
    json.dump(d, open(tmp, "w")); os.rename(tmp, path)
for d in p["edit"]:
    j = json.load(open(os.path.join(root, d)))
    if j.get("steps"): j["steps"][0]["message"] = "edited in round %d" % r
    else: j.setdefault("extra", {})["round"] = r
    put(os.path.join(root, d), j)
for d in p["remove"]: os.remove(os.path.join(root, d))
for d in p["copy"]:
    put(os.path.join(root, os.path.dirname(d), "copy%d-" % r + os.path.basename(d)), json.load(open(os.path.join(root, d))))
PY
}

# the input read once first: the build is timed on a warm page cache, as the syncs are (a
# build that reads 2 GB from disk would make every ratio over it look better than it is)
find "$IN" -type f -exec cat {} + >/dev/null
say "full build (load $(load1))"
in_bytes=$(du -sb --apparent-size "$IN" | cut -f1)
t0=$(now); "$VX" build --from "$IN" --to "$R" --quiet --json >"$OUT/build.json"; t1=$(now)
build_s=$(secs "$t0" "$t1"); build_bytes=$(du_b "$R")
say "build: $build_s s, $build_bytes B"
reads base
# the sweep: one sync of each changed share from this build (copies by hard link: a sync
# writes new files and renames CURRENT, and mutate renames over the input's links)
: >"$OUT/sweep.jsonl"
k=0
for sp in $SWEEP; do
    k=$((k + 1))
    rm -rf "$OUT/sw-in" "$OUT/sw-root"; cp -al "$IN" "$OUT/sw-in"; cp -al "$R" "$OUT/sw-root"
    mutate $((900 + k)) "$OUT/sw-in" "$OUT/sweep-plan.json" "$sp"
    t0=$(now); j=$("$VX" sync --from "$OUT/sw-in" --to "$OUT/sw-root" --json); t1=$(now)
    printf '{"pct":%s,"wall_s":%s,"sync":%s}\n' "$sp" "$(secs "$t0" "$t1")" "$j" >>"$OUT/sweep.jsonl"
    say "sweep $sp %: $(secs "$t0" "$t1") s: $j"
done
rm -rf "$OUT/sw-in" "$OUT/sw-root"
: >"$OUT/syncs.jsonl"
for ((r = 0; r < ROUNDS; r++)); do
    mutate $r
    t0=$(now); "$VX" sync --from "$IN" --to "$R" --json >>"$OUT/syncs.jsonl"; t1=$(now)
    say "sync $((r + 1)): $(secs "$t0" "$t1") s: $(tail -n 1 "$OUT/syncs.jsonl")"
done
"$VX" inspect "$R" | grep -E '^(maint|lastsync)' >"$OUT/inspect-l0.txt"
# the state after the syncs kept (hard links: no writer changes a published file), so that its
# reads and the compacted root's alternate, three rounds each: a burst of load on the machine
# then falls on both sides, and each figure is the median of its three
cp -al "$R" "$OUT/l0root"
t0=$(now); "$VX" compact "$R" --json >"$OUT/compact.json"; t1=$(now); compact_s=$(secs "$t0" "$t1")
say "compact: $compact_s s"
for k in 1 2 3; do reads "l0-$k" "$OUT/l0root"; reads "compacted-$k"; done
rm -rf "$OUT/l0root"
"$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0 >"$OUT/vacuum.txt" 2>&1
vac_bytes=$(du_b "$R")
# the same state compacted whole (--full: every file rewritten), timed and vacuumed too
t0=$(now); "$VX" compact "$R" --full --json >"$OUT/compact-full.json"; t1=$(now); full_s=$(secs "$t0" "$t1")
say "compact --full: $full_s s"
"$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0 >>"$OUT/vacuum.txt" 2>&1
full_bytes=$(du_b "$R")
final_in=$(du -sb --apparent-size "$IN" | cut -f1)
"$VX" build --from "$IN" --to "$OUT/fresh" --quiet; fresh_bytes=$(du_b "$OUT/fresh")
# the same reads of a fresh build of the final input, beside the compacted root again (after
# vacuum): what compaction leaves over a root built once from the same documents (§22.4)
for k in 1 2 3; do reads "final-$k" "$OUT/fresh"; reads "vacuumed-$k"; done
python3 - "$OUT" "$build_s" "$build_bytes" "$in_bytes" "$compact_s" "$final_in" "$vac_bytes" "$fresh_bytes" "$full_s" "$full_bytes" "$(load1)" <<'PY'
import json, os, sys
out = sys.argv[1]
build_s, build_bytes, in_bytes, compact_s, final_in, vac_bytes, fresh_bytes, full_s, full_bytes = (float(x) for x in sys.argv[2:11])
load = sys.argv[11]
cj = json.loads(open(os.path.join(out, "compact.json")).readline())
cf = json.loads(open(os.path.join(out, "compact-full.json")).readline())
bj = json.loads(open(os.path.join(out, "build.json")).readline())
sweep = [json.loads(l) for l in open(os.path.join(out, "sweep.jsonl")) if l.strip()]
syncs = [json.loads(l) for l in open(os.path.join(out, "syncs.jsonl"))]
def med(xs):
    xs = sorted(xs); return xs[len(xs) // 2]
def tags(tag):   # the alternating rounds' files, or the one
    return [tag + "-%d" % k for k in (1, 2, 3)] if os.path.exists(os.path.join(out, tag + "-1-get.json")) else [tag]
def get(tag):
    ds = [json.load(open(os.path.join(out, t + "-get.json")))["total"] for t in tags(tag)]
    return med([d["p50_ms"] for d in ds]), med([d["p95_ms"] for d in ds])
def sql(tag):
    rs = [[json.loads(l)["p50_ms"] for l in open(os.path.join(out, t + "-sql.json")) if l.strip()] for t in tags(tag)]
    return [med(col) for col in zip(*rs)]
g = {t: get(t) for t in ("base", "l0", "compacted", "final", "vacuumed")}
q = {t: sql(t) for t in ("base", "l0", "compacted", "final", "vacuumed")}
ss = max(s["seconds"] for s in syncs); sb = max(s["bytes_written"] for s in syncs)
rows = [
    ("sync time (worst of %d) ÷ full build" % len(syncs), "%.2f s ÷ %.1f s = %.1f %%" % (ss, build_s, 100 * ss / build_s), "≤ 5 %", 100 * ss / build_s <= 5),
    ("sync bytes written (worst) ÷ full build's", "%.1f MB ÷ %.1f MB = %.2f %%" % (sb / 1e6, build_bytes / 1e6, 100 * sb / build_bytes), "≤ 5 %", 100 * sb / build_bytes <= 5),
    ("point read p95 after the syncs ÷ compacted", "%.2f ÷ %.2f ms = %.2f×" % (g["l0"][1], g["compacted"][1], g["l0"][1] / g["compacted"][1]), "≤ 1.5×", g["l0"][1] / g["compacted"][1] <= 1.5),
]
for i, name in enumerate(("steps by source", "tool calls by function", "steps in a time window")):
    a, b = q["l0"][i], q["compacted"][i]
    rows.append(("narrow scan (%s) after the syncs ÷ compacted" % name, "%.2f ÷ %.2f ms = %.2f×" % (a, b, a / b), "≤ 1.2×", a / b <= 1.2))
bt = in_bytes / 1048576 / build_s; ct = final_in / 1048576 / compact_s
rows.append(("compaction (%d files rewritten, %d kept) throughput ÷ full build's" % (cj["files_rewritten"], cj["files_kept"]),
             "%.1f ÷ %.1f MiB/s of ATIF held = %.2f×" % (ct, bt, ct / bt), "≥ 1×", ct >= bt))
rows.append(("bytes after it and vacuum ÷ a fresh build", "%.1f ÷ %.1f MB = %.3f×" % (vac_bytes / 1e6, fresh_bytes / 1e6, vac_bytes / fresh_bytes), "within 5 %", abs(vac_bytes / fresh_bytes - 1) <= 0.05))
# write amplification (bytes written per ATIF byte read, `--json` of each): the build's, the
# syncs' (all of them together), the compaction's; and over the root's life, everything the
# build, the syncs and the compaction wrote per byte the compacted root holds (after vacuum)
sw = sum(s["bytes_written"] for s in syncs); sr = sum(s["bytes_read"] for s in syncs)
life = (bj["bytes_written"] + sw + cj["bytes_written"]) / vac_bytes
rows.append(("write amplification: build / syncs / compaction (bytes written ÷ ATIF bytes read)",
             "%.3f / %.3f / %.3f" % (bj["write_amplification"], sw / sr if sr else 0, cj["write_amplification"]), "—", True))
rows.append(("bytes the build, the %d syncs and the compaction wrote ÷ the compacted root's" % len(syncs),
             "%.1f MB ÷ %.1f MB = %.2f×" % ((bj["bytes_written"] + sw + cj["bytes_written"]) / 1e6, vac_bytes / 1e6, life), "—", True))
for w in sweep:
    y = w["sync"]
    rows.append(("a sync of %s %% of the documents changed ÷ full build (time, bytes written)" % w["pct"],
                 "%.2f s, %.1f MB = %.1f %%, %.1f %%" % (y["seconds"], y["bytes_written"] / 1e6, 100 * y["seconds"] / build_s, 100 * y["bytes_written"] / build_bytes), "—", True))
ft = final_in / 1048576 / full_s
rows.append(("compact --full (every file rewritten) throughput ÷ full build's", "%.1f ÷ %.1f MiB/s = %.2f×" % (ft, bt, ft / bt), "≥ 1×", ft >= bt))
rows.append(("bytes after --full and vacuum ÷ a fresh build", "%.1f ÷ %.1f MB = %.3f×" % (full_bytes / 1e6, fresh_bytes / 1e6, full_bytes / fresh_bytes), "within 5 %", abs(full_bytes / fresh_bytes - 1) <= 0.05))
print("| figure | measured | goal | met |")
print("| --- | --- | --- | --- |")
for r in rows: print("| %s | %s | %s | %s |" % (r[0], r[1], r[2], "—" if r[2] == "—" else "yes" if r[3] else "**no**"))
print("\npoint reads p50/p95 ms: fresh build %.2f/%.2f, after the syncs %.2f/%.2f, compacted %.2f/%.2f; scans p50 ms fresh %s, after the syncs %s, compacted %s; load at the end %s"
      % (g["base"] + g["l0"] + g["compacted"] + (q["base"], q["l0"], q["compacted"], load)))
json.dump({"build_s": build_s, "build_bytes": build_bytes, "input_bytes": in_bytes, "build": bj, "syncs": syncs, "sweep": sweep,
           "compact": cj, "compact_full": cf, "lifetime_write_amplification": life, "get": g, "sql": q,
           "compact_s": compact_s, "final_input_bytes": final_in, "vacuum_bytes": vac_bytes, "fresh_bytes": fresh_bytes,
           "compact_full_s": full_s, "full_bytes": full_bytes, "loadavg_end": load}, open(os.path.join(out, "results.json"), "w"), indent=1)
PY
