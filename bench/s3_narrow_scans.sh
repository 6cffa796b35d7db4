#!/usr/bin/env bash
# GETs and bytes of narrow scans on S3, ours and official Lance's (issue 20 "Performance";
# RFC-0006 §20.2, §22.2: "local NVMe 与 S3 分开；报 GET/range/bytes").
#
#   bench/s3_narrow_scans.sh CORPUS_DIR
#
# Builds CORPUS_DIR (ATIF documents) as a Vortex projection and imports it as a Storyline root
# to fresh prefixes of the S3 server the AWS_* variables name (tests/s3/rgw.sh: `. DIR/env`),
# then, one cold process each (no tail cache):
#   ours   `pchronicle-vortex sql ROOT Q --stats` for "steps by source" and "tool calls by
#          function": its GETs, bytes requested and bytes the reader used (stats: s3 ...)
#   Lance  official Lance (the oracle of scripts/bootstrap.sh) reading only the same column of
#          steps / tool_calls (`oracle.js scan TABLE COLUMN`) through tests/s3/faultproxy.py,
#          which counts its GETs and the bytes of their answers; as our importer wrote the
#          tables, then compacted (`oracle.js index`, which also cleans up old versions)
# Removes the prefixes at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:?usage: bench/s3_narrow_scans.sh CORPUS_DIR}
BUILD=${PCH_BUILD:-build}
VX=$PWD/$BUILD/pchronicle-vortex
P=$PWD/$BUILD/pchronicle
ORACLE=${PCH_CACHE:-$PWD/.cache}/lance-oracle/oracle.js
: "${AWS_ENDPOINT_URL:?set the S3 variables (. DIR/env of tests/s3/rgw.sh)}"
BUCKET=${PCH_S3_BUCKET:-pch-test}
[ -x "$VX" ] || { echo "build first: make" >&2; exit 1; }
[ -f "$ORACLE" ] || { echo "the oracle is missing at $ORACLE (scripts/bootstrap.sh)" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-s3ns.XXXXXX")
R=s3://$BUCKET/bench-scan-$$
SL=s3://$BUCKET/bench-scan-sl-$$
px=""
cleanup() {
    [ -n "$px" ] && kill "$px" 2>/dev/null
    for p in "$R" "$SL"; do
        "$P" objects ls "$p/" 2>/dev/null | while read -r k; do "$P" objects rm "s3://$BUCKET/$k" >/dev/null 2>&1; done
    done
    rm -rf "$T"
}
trap cleanup EXIT
export PCH_OBJECT_CACHE=off
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# corpus $CORPUS: $(find "$CORPUS" -name '*.json' | wc -l) documents, $(du -sh "$CORPUS" | cut -f1)"
"$VX" build --from "$CORPUS" --to "$R" --quiet 2>/dev/null
"$P" import --from "$CORPUS" --to "$SL" --input-format atif --output-format storyline --quiet 2>/dev/null
: > "$T/sched"
python3 tests/s3/faultproxy.py "${AWS_ENDPOINT_URL##*:}" "$T/px.port" "$T/sched" "$T/px.log" & px=$!
for _ in $(seq 1 100); do [ -s "$T/px.port" ] && break; sleep 0.05; done
PX=http://127.0.0.1:$(cat "$T/px.port")
ours() {   # LABEL SQL
    "$VX" sql "$R" "$2" --format csv --stats >/dev/null 2>"$T/err"
    grep -o 'stats: s3 .*' "$T/err" | sed 's/[a-z_]*=//g; s/stats: s3 //' |
        awk -v l="$1" '{printf "| %s | ours (Vortex projection) | %d | %.2f MB | %.2f MB |\n", l, $1, $3 / 1e6, $4 / 1e6}'
}
lance() {  # LABEL TABLE COLUMN LAYOUT
    : > "$T/px.log"
    AWS_ENDPOINT_URL=$PX node "$ORACLE" scan "$SL/$2.lance" "$3" > "$T/o.out" 2>&1 || { echo "oracle scan failed: $(tail -2 "$T/o.out")" >&2; exit 1; }
    awk -v l="$1" -v w="$4" '/^GET / {g++; for (i = 1; i <= NF; i++) if ($i == "B" && $(i-1) ~ /^[0-9]+$/) b += $(i-1)}
        END {printf "| %s | official Lance, %s | %d | %.2f MB | |\n", l, w, g, b / 1e6}' "$T/px.log"
}
echo "| scan | system | GETs | bytes fetched | bytes the reader used |"
echo "| --- | --- | --- | --- | --- |"
ours "steps by source" "select source, count(*) from steps group by source"
ours "tool calls by function" "select function_name, count(*) from tool_calls group by function_name"
lance "steps by source" steps source "as written"
lance "tool calls by function" tool_calls function_name "as written"
for t in steps tool_calls; do node "$ORACLE" index "$SL/$t.lance" run_id trajectory_key 2>/dev/null; done
lance "steps by source" steps source "compacted"
lance "tool calls by function" tool_calls function_name "compacted"
