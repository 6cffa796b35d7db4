#!/usr/bin/env bash
# ATIF → Storyline demo (docs/storyline.md, docs/sql.md): import the trajectories shipped in
# examples/atif/ into a Storyline root, query it with SQL, read one trajectory back and
# prove that the exported documents are the same JSON values as the inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CLI=$BUILD/pchronicle
W=$BUILD/demo-atif
[ -x "$CLI" ] || { echo "demo_atif: $CLI is not built (make)" >&2; exit 1; }
rm -rf "$W"
mkdir -p "$W"
step() { local t=$1; shift; printf '\n== %s\n$ %s\n' "$t" "$*"; "$@"; }
step "project the ATIF examples into Storyline tables" \
    "$CLI" import --input-format atif --output-format storyline --from examples/atif --to "$W/root"
step "what the root pins" "$CLI" inspect "$W/root"
step "steps and tool calls per trajectory (SQL)" "$CLI" sql "$W/root" \
    "SELECT r.trajectory_key, r.parent_trajectory_key AS parent, count(DISTINCT s.step_ordinal) AS steps,
            (SELECT count(*) FROM tool_calls c WHERE c.trajectory_key = r.trajectory_key) AS calls
       FROM runs r LEFT JOIN steps s ON s.trajectory_key = r.trajectory_key
      GROUP BY r.trajectory_key ORDER BY r.doc_path, r.preorder"
step "token usage by model (SQL)" "$CLI" sql "$W/root" \
    "SELECT coalesce(model_name, '-') AS model, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion
       FROM steps GROUP BY 1 ORDER BY 1" --format csv
step "one trajectory back as ATIF" "$CLI" get "$W/root" mm-run-1 --compact
step "export every document" "$CLI" export --from "$W/root" --output-format atif --to "$W/restored"
step "prove the exported documents equal the inputs (JSON values) and assets are restored" python3 - "$W/restored" <<'PY'
import json, os, sys
out = sys.argv[1]
n = 0
for d, _, fs in os.walk("examples/atif"):
    for f in fs:
        a = os.path.join(d, f); b = os.path.join(out, os.path.relpath(a, "examples/atif"))
        same = json.load(open(a)) == json.load(open(b)) if f.endswith(".json") else open(a, "rb").read() == open(b, "rb").read()
        if not same: sys.exit("differs: " + b)
        n += 1
print("%d files equal" % n)
PY
echo "demo_atif: OK"
