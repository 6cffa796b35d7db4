#!/usr/bin/env bash
# make demo: the compact-JSONL job (RFC-0014) on the example agent logs in examples/jsonl/.
#   1. import the tree into a Lance dataset (ids from $.uuid, extra JSON columns type/role),
#   2. inspect it,
#   3. run a JSON filter on it: through the official Lance reader when the pinned oracle is
#      installed (scripts/bootstrap.sh; `make test` installs it), which shows that our files
#      are plain Lance that its json_get_string() filters work on; otherwise the demo says so,
#   4. export it back and prove the restored tree is byte-identical (diff -r).
# BUILD selects the build directory (default build). Scratch files go to $BUILD/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
CLI=$BUILD/pchronicle
ORACLE=${PCH_CACHE:-$PWD/.cache}/lance-oracle/oracle.js
[ -x "$CLI" ] || { echo "demo: $CLI is not built (make BUILD=$BUILD)" >&2; exit 1; }
W=$BUILD/demo
rm -rf "$W"; mkdir -p "$W"
step() { local t=$1; shift; printf '\n== %s\n$ %s\n' "$t" "$*"; "$@"; }

step "import examples/jsonl (JSON/JSONL agent logs) into a compact-jsonl Lance dataset" \
    "$CLI" import --from examples/jsonl --to "$W/logs.lance" --output-format compact-jsonl \
    --column 'uuid=$.uuid' --column 'type=$.type' --column 'role=$.message.role' --offload-threshold 16384
step "inspect it" "$CLI" inspect "$W/logs.lance"

echo
echo "== JSON filters: rows whose data.type is \"user\"; rows whose role column is \"assistant\""
if command -v node >/dev/null && [ -f "$ORACLE" ]; then
    for w in "json_get_string(data, 'type') = 'user'" "json_extract(role, '\$') = '\"assistant\"'"; do
        echo "\$ node oracle.js dump $W/logs.lance --where \"$w\"   (official Lance 8.0 reader)"
        node "$ORACLE" dump "$W/logs.lance" --where "$w" | python3 -c '
import json, sys
hdr = json.loads(sys.stdin.readline())
print("   matched %d of %d rows" % (hdr["matched_rows"], hdr["num_rows"]))
for line in list(sys.stdin)[:3]:
    r = json.loads(line)
    print("   %-40s %-22s %s" % (r["id"][:40], r["timestamp"][:22], r["filename"]))'
    done
else
    echo "   (skipped: the official Lance oracle is not installed; run scripts/bootstrap.sh)"
fi

step "export it back" "$CLI" export --from "$W/logs.lance" --to "$W/restored" --output-format compact-jsonl
mkdir -p "$W/expected"
(cd examples/jsonl && find . -type f \( -iname '*.json' -o -iname '*.jsonl' -o -iname '*.ndjson' \) -exec cp --parents {} "$W/expected" \;)
step "prove the restored files are byte-identical to the inputs" diff -r "$W/expected" "$W/restored"
echo "demo: OK - $(find "$W/restored" -type f | wc -l) files restored byte for byte"
BUILD="$BUILD" scripts/demo_atif.sh
