#!/usr/bin/env bash
# BLAKE3 throughput, ours vs b3sum (the Debian package), on the same pseudo-random data in
# the same run. Not part of `make test`.
#   bench/blake3.sh            (BUILD=<dir> picks the build directory, MIB=<n> the size)
# Ours: bench/blake3_bench hashes the buffer in memory (best of 5, per implementation).
# b3sum: `b3sum FILE` on the page-cached file (best of 5; includes process start-up and
# mmap, about a millisecond), single-threaded (--num-threads 1) and with default threads.
# MB/s = 10^6 B/s by wall-clock and by CPU time (user+sys; steadier on a busy machine; not
# shown for multi-threaded b3sum, where it sums the threads).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MIB=${MIB:-256}
command -v b3sum >/dev/null || { echo "blake3.sh: b3sum not found (apt-get install b3sum)" >&2; exit 1; }

mkdir -p "$BUILD/bench"
make --no-print-directory BUILD="$BUILD" "$BUILD/libpchronicle.a" >"$BUILD/bench/blake3-build.log" 2>&1 ||
    { tail -30 "$BUILD/bench/blake3-build.log" >&2; exit 1; }
${CC:-cc} -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -O2 -o "$BUILD/bench/blake3_bench" \
    bench/blake3_bench.c "$BUILD/libpchronicle.a" -lzstd -lm -pthread

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-blake3-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
data="$tmp/data.bin"
"$BUILD/bench/blake3_bench" "$MIB" "$data" > "$tmp/ours.txt"
bytes=$(stat -c %s "$data")

ours_digest=$(awk '$1 == "digest" { print $2 }' "$tmp/ours.txt")
b3_digest=$(b3sum --no-names "$data")
[ "$ours_digest" = "$b3_digest" ] || { echo "blake3.sh: digest mismatch: ours $ours_digest b3sum $b3_digest" >&2; exit 1; }

best_b3sum() {  # "wall_s cpu_s": the best of 5 runs of `b3sum "$@" $data`, each
    local bw=999 bc=999 w c
    for _ in 1 2 3 4 5; do
        read -r w c < <( { TIMEFORMAT='%3R %3U %3S'; time b3sum "$@" "$data" >/dev/null; } 2>&1 |
                         awk '{ print $1, $2 + $3 }')
        bw=$(awk -v a="$bw" -v b="$w" 'BEGIN { print (b < a ? b : a) }')
        bc=$(awk -v a="$bc" -v b="$c" 'BEGIN { print (b < a ? b : a) }')
    done
    echo "$bw $bc"
}
mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { if (s > 0) printf "%.0f", b / s / 1e6; else print "inf" }'; }
b3sum "$data" >/dev/null   # warm the page cache
read -r st_w st_c < <(best_b3sum --num-threads 1)
read -r mt_w _ < <(best_b3sum)
st_wall=$(mbps "$st_w"); st_cpu=$(mbps "$st_c"); mt_wall=$(mbps "$mt_w")

echo "BLAKE3, $MIB MiB of pseudo-random data; MB/s = 10^6 B/s; ratios against b3sum --num-threads 1"
printf '%-30s %9s %9s %10s %10s\n' "hasher" "wall MB/s" "cpu MB/s" "wall ratio" "cpu ratio"
awk -v sw="$st_wall" -v sc="$st_cpu" '$1 == "blake3" {
    printf "%-30s %9s %9s %10.2f %10.2f\n", "pchronicle " $2 " " $3, $4, $5, $4 / sw, $5 / sc }' "$tmp/ours.txt"
printf '%-30s %9s %9s %10.2f %10.2f\n' "b3sum $(b3sum --version | awk '{print $2}') --num-threads 1" "$st_wall" "$st_cpu" 1 1
printf '%-30s %9s %9s %10.2f %10s\n' "b3sum (default, $(nproc) cpus)" "$mt_wall" "-" \
    "$(awk -v a="$mt_wall" -v b="$st_wall" 'BEGIN { print a / b }')" "-"
