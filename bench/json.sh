#!/usr/bin/env bash
# JSON parser benchmark (not part of make test): pChronicle's strict DOM parser beside
# cJSON and json-c on the same preloaded input in the same run (bench/json_bench.c).
#   (a) every .jsonl file under ../shared/corpus/jsonl, concatenated
#   (b) a synthetic agent-log file from bench/json_gen.py (deterministic; SIZE_MB, SEED)
# Environment: BUILD (library build dir, default build), SIZE_MB (150), RUNS (3),
# BENCH_DIR (scratch dir for the generated inputs, default $BUILD/bench-json).
# Needs libcjson-dev and libjson-c-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SIZE_MB=${SIZE_MB:-150}
RUNS=${RUNS:-3}
BENCH_DIR=${BENCH_DIR:-$BUILD/bench-json}
mkdir -p "$BENCH_DIR"

make --no-print-directory BUILD="$BUILD" "$BUILD/libpchronicle.a" >/dev/null
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Iinclude -Isrc -Wall -Wextra -o "$BENCH_DIR/json_bench" \
    bench/json_bench.c "$BUILD/libpchronicle.a" -lcjson -ljson-c -lzstd -lm -pthread

corpus=../shared/corpus/jsonl
if [ -d "$corpus" ]; then
    find "$corpus" -name '*.jsonl' -print0 | sort -z | xargs -0 cat > "$BENCH_DIR/corpus.jsonl"
    echo "== (a) shared corpus JSONL ($(wc -c < "$BENCH_DIR/corpus.jsonl") bytes)"
    "$BENCH_DIR/json_bench" "$BENCH_DIR/corpus.jsonl" "$RUNS"
else
    echo "== (a) skipped: $corpus not found" >&2
fi

synth="$BENCH_DIR/agentlog-${SIZE_MB}MB.jsonl"
[ -s "$synth" ] || python3 bench/json_gen.py "$synth" "$SIZE_MB"
echo "== (b) synthetic agent log"
"$BENCH_DIR/json_bench" "$synth" "$RUNS"
