#!/usr/bin/env bash
# `make bench`: every benchmark, each beside its peers in the same run, printing ratios.
# Not part of `make test` (speed is measured here, never asserted in tests).
#   BENCH=json,blake3,...   run a subset (default: every bench/<name>.sh listed below)
# Each script documents its own knobs (sizes, runs, scratch directories).
set -uo pipefail
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
all="json blake3 compact_jsonl storyline vortex"
want=${BENCH:-$all}
rc=0
for b in ${want//,/ }; do
    s=bench/$b.sh
    [ -f "$s" ] || { echo "bench: $s not found" >&2; rc=1; continue; }
    echo "################ $b ($(date -u +%H:%M:%S))"
    bash "$s" || { echo "bench: $b failed" >&2; rc=1; }
    echo
done
exit $rc
