#!/usr/bin/env bash
# Snapshots, retention and vacuum of a pchronicle-vortex root (RFC-0006 §12.4; docs/vortex-projection.md
# "Snapshots, retention and vacuum"): three snapshots of one root; vacuum keeps what CURRENT,
# --keep, --min-age, a pin or an open reader (a shared flock on the manifest) retains and
# removes exactly the files no retained manifest lists, old orphans only after the grace
# period; --dry-run removes nothing; a pin file or manifest that does not load, or a lost
# CURRENT, refuses the whole vacuum; usage errors exit 2. The files left afterwards are
# exactly those the kept manifests list. Also: --snapshot for sql, rl and sft, and inspect's
# footprint before and after.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}   # run-tests.sh sets it to a valgrind wrapper
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-vxm.XXXXXX") || exit 1
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
cur() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["snapshot_id"])' "$R/CURRENT"; }
# listed ROOT ID...: every file the manifests of those snapshots list, and the manifests
listed() {
    python3 - "$@" <<'PY'
import json, os, sys
root = sys.argv[1]
for i in sys.argv[2:]:
    m = json.load(open(os.path.join(root, "manifests", i + ".json")))
    print("manifests/%s.json" % i)
    for k in ("data_files", "blob_packs", "trajectory_directory", "content_directory", "directory_runs", "documents", "key_index", "lane_report"):
        for f in m.get(k, []):
            print(f["path"])
            if isinstance(f.get("segments"), dict): print(f["segments"]["path"])
PY
}
present() { (cd "$R" && find manifests data blobs directories -type f 2>/dev/null); }

R=$T/root
run b1 0 "$VX" build --from tests/data/atif/multimodal --to "$R" --quiet; s1=$(cur)
run b2 0 "$VX" build --from tests/data/atif --to "$R" --quiet; s2=$(cur)
run b3 0 "$VX" build --from tests/data/atif/context-summarization --to "$R" --quiet; s3=$(cur)

# inspect ends with the footprint: three snapshots, bytes only the older ones reach
run fp-3 0 "$VX" inspect "$R"
has fp-3 "$T/fp-3.out" "^footprint: 3 snapshots \(0 unreadable, 0 pins\); current [1-9][0-9]* B; older snapshots only [1-9][0-9]* B; unreferenced 0 files 0 B; abandoned staging 0 dirs 0 B$"
# every reading verb reads an older snapshot by id (s1: one document, one trajectory, 3 steps)
run snap-sql 0 "$VX" sql "$R" "SELECT count(*) FROM runs" --format csv --snapshot "$s1"
[ "$(tail -n 1 "$T/snap-sql.out")" = 1 ] && ok || bad "sql --snapshot: $(cat "$T/snap-sql.out")"
run snap-sql-sqlite 0 "$VX" sql "$R" "SELECT count(*) FROM steps" --format csv --snapshot "$s1" --engine sqlite
[ "$(tail -n 1 "$T/snap-sql-sqlite.out")" = 3 ] && ok || bad "sql --snapshot --engine sqlite: $(cat "$T/snap-sql-sqlite.out")"
run snap-sql-now 0 "$VX" sql "$R" "SELECT count(*) FROM runs" --format csv
[ "$(tail -n 1 "$T/snap-sql-now.out")" != 1 ] && ok || bad "sql without --snapshot read the older snapshot"
run snap-rl 0 "$VX" rl "$R" --format count --snapshot "$s1"
has snap-rl "$T/snap-rl.out" '^\{"steps":1,'
run snap-sft 0 "$VX" sft "$R" --format count --snapshot "$s1"
has snap-sft "$T/snap-sft.out" '^\{"examples":1,'
run snap-sql-bad 1 "$VX" sql "$R" "SELECT 1" --snapshot nope
has snap-sql-bad "$T/snap-sql-bad.err" "'nope' is not a snapshot id"

# usage
run usage-keep 2 "$VX" vacuum "$R" --keep x
run usage-age 2 "$VX" vacuum "$R" --min-age 5y
run usage-root 2 "$VX" vacuum
run usage-pin 2 "$VX" pin "$R" --name x

# the defaults keep everything this young
run default 0 "$VX" vacuum "$R"
has default "$T/default.err" "3 snapshots kept, 0 removed; 0 files"
# a dry run says what would go and removes nothing
before=$(present | sort)
run dry 0 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0 --dry-run
has dry "$T/dry.out" "^would remove $s1 "
has dry "$T/dry.out" "^would remove $s2 "
has dry "$T/dry.out" "^keep $s3 \(CURRENT\)"
[ "$(present | sort)" = "$before" ] && ok || bad "a dry run removed files"

# a pin keeps s2; s1 goes, with exactly the files only it listed
run pin-bad 1 "$VX" pin "$R" --snapshot "$s2" --name ../x
run pin-missing 1 "$VX" pin "$R" --snapshot 000000000000-00000000 --name golden
run pin 0 "$VX" pin "$R" --snapshot "$s2" --name golden
run snaps 0 "$VX" snapshots "$R"
has snaps "$T/snaps.out" "^$s2 .*pinned:golden$"
run vac1 0 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
has vac1 "$T/vac1.out" "^remove $s1 "
has vac1 "$T/vac1.out" "^keep $s2 \(golden\)"
[ "$(present | sort)" = "$(listed "$R" "$s2" "$s3" | sort -u)" ] && ok ||
    bad "after vacuum the files are not exactly those of the kept snapshots: $(diff <(present | sort) <(listed "$R" "$s2" "$s3" | sort -u) | head -5)"
run vac1-verify 0 "$VX" verify "$R"
run vac1-verify-pinned 0 "$VX" verify "$R" --snapshot "$s2"
run vac1-gone 1 "$VX" get "$R" mm-run-1 --snapshot "$s1"
has vac1-gone "$T/vac1-gone.err" "no snapshot $s1"

# orphans: an old one goes, a young one stays within the grace period
mkdir -p "$R/data/default"
head -c 5000 /dev/zero >"$R/data/default/old-orphan.vortex"; touch -d '2 hours ago' "$R/data/default/old-orphan.vortex"
head -c 5000 /dev/zero >"$R/data/default/young-orphan.vortex"
run orphans 0 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 1h
has orphans "$T/orphans.out" "^remove data/default/old-orphan.vortex \(reached by no retained snapshot, 5000 bytes\)"
has orphans "$T/orphans.out" "^keep data/default/young-orphan.vortex \(unreferenced, younger than the grace period"
[ ! -e "$R/data/default/old-orphan.vortex" ] && [ -e "$R/data/default/young-orphan.vortex" ] && ok || bad "orphans: wrong files removed"

# an open reader holds its snapshot (a shared lock on its manifest): kept until it lets go
run unpin 0 "$VX" unpin "$R" --name golden
run unpin-again 1 "$VX" unpin "$R" --name golden
flock -s -o "$R/manifests/$s2.json" sleep 60 & holder=$!
for _ in $(seq 50); do flock -n -x "$R/manifests/$s2.json" true || break; sleep 0.1; done
run held 0 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
has held "$T/held.out" "^keep $s2 \(held by an open reader\)"
pkill -P "$holder" sleep; kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null; holder=""
run released 0 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
has released "$T/released.out" "^remove $s2 "
[ "$(present | sort)" = "$(listed "$R" "$s3" | sort -u)" ] && ok || bad "after the last vacuum: files other than CURRENT's snapshot's"
run released-verify 0 "$VX" verify "$R"
run released-get 0 "$VX" get "$R" NORMALIZED_SESSION_ID --compact

# refusals remove nothing: a pin that does not parse, a manifest that does not load, no CURRENT
run b4 0 "$VX" build --from tests/data/atif/multimodal --to "$R" --quiet; s4=$(cur)
mkdir -p "$R/pins"; echo '{"format":"nope"}' >"$R/pins/broken.json"
before=$(present | sort)
run refuse-pin 1 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
has refuse-pin "$T/refuse-pin.err" "vacuum refused: pins/broken.json"
rm "$R/pins/broken.json"
echo garbage >"$R/manifests/000000000001-00000000.json"
run refuse-manifest 1 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
has refuse-manifest "$T/refuse-manifest.err" "vacuum refused: manifest of snapshot 000000000001-00000000 does not load"
rm "$R/manifests/000000000001-00000000.json"
mv "$R/CURRENT" "$T/CURRENT.saved"
run refuse-current 1 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
has refuse-current "$T/refuse-current.err" "vacuum refused: source unavailable"
mv "$T/CURRENT.saved" "$R/CURRENT"
[ "$(present | sort)" = "$before" ] && ok || bad "a refused vacuum removed files"
# and the staging directories of writers that died
mkdir -p "$R/staging/00dead"; head -c 1000 /dev/zero >"$R/staging/00dead/x"
run staging 0 "$VX" vacuum "$R" --keep 1 --min-age 0 --grace 0
has staging "$T/staging.err" "1 staging directories removed"
[ ! -e "$R/staging/00dead" ] && [ "$(present | sort)" = "$(listed "$R" "$s4" | sort -u)" ] && ok || bad "the final vacuum"
run final-verify 0 "$VX" verify "$R"
run fp-1 0 "$VX" inspect "$R"
has fp-1 "$T/fp-1.out" "^footprint: 1 snapshots \(0 unreadable, 0 pins\); current [1-9][0-9]* B; older snapshots only 0 B; unreferenced 0 files 0 B; abandoned staging 0 dirs 0 B$"

# a manifest written under another key rule (lineage.trajectory_keys) is refused, digests
# made consistent: its keys may not be what this reader's rule makes
K=$T/keyrule; rm -rf "$K"; cp -a "$R" "$K"
python3 - "$K" <<'PY' && ok || bad "could not write a manifest under another key rule"
import json, os, subprocess, sys
root = sys.argv[1]
c = json.load(open(os.path.join(root, "CURRENT")))
p = os.path.join(root, c["manifest"])
m = open(p, "rb").read()
m2 = m.replace(b'"trajectory_keys":"document"', b'"trajectory_keys":"first-claimant"')
assert m2 != m
open(p, "wb").write(m2)
c["manifest_digest"] = "blake3:" + subprocess.run(["b3sum", "--no-names", p], capture_output=True, check=True).stdout.decode().split()[0]
open(os.path.join(root, "CURRENT"), "w").write(json.dumps(c) + "\n")
PY
run keyrule 1 "$VX" get "$K" mm-run-1
has keyrule "$T/keyrule.err" 'lineage.trajectory_keys is not "document"'

echo "vortex_maintenance: $n checks, $fail failed"
[ "$fail" -eq 0 ]
