/* BLAKE3 throughput (src/core/blake3.c): hashes a buffer of pseudo-random bytes with every
** implementation this CPU runs (portable, SSE4.1, AVX2, AVX-512), one-shot and in 64 KiB
** updates, and prints MB/s (10^6 bytes per second, best of several runs) by wall-clock and
** by process CPU time (the latter is steadier on a shared machine).
**   blake3_bench [MiB (default 256)] [path: also write the data there, for b3sum; "-": no]
**                [impl: only this one (portable, sse4.1, avx2, avx512), for profiling]
** Prints "blake3 <impl> <mode> <wall MB/s> <cpu MB/s>" lines and finally "digest <hex>" (the one-shot
** 32-byte digest, so the caller can check it against b3sum on the same file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

#define RUNS 5

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct speed { double wall, cpu; } speed;   /* MB/s */

static speed run(int impl, const uint8_t *data, size_t len, size_t step, uint8_t out[32])
{
    double best_wall = 1e30, best_cpu = 1e30;
    for (int r = 0; r < RUNS; r++) {
        pch_blake3 h;
        const double t0 = pch_time_mono(), c0 = cpu_seconds();
        pch_blake3__init_impl(&h, impl);
        if (step == 0) {
            pch_blake3_update(&h, data, len);
        } else {
            for (size_t off = 0; off < len; off += step)
                pch_blake3_update(&h, data + off, len - off < step ? len - off : step);
        }
        pch_blake3_final(&h, out, 32);
        const double dt = pch_time_mono() - t0, dc = cpu_seconds() - c0;
        if (dt < best_wall) best_wall = dt;
        if (dc < best_cpu) best_cpu = dc;
    }
    speed s = { (double)len / best_wall / 1e6, (double)len / best_cpu / 1e6 };
    return s;
}

int main(int argc, char **argv)
{
    const size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 256;
    const size_t len = mib << 20;
    uint8_t *data = malloc(len ? len : 1);
    uint8_t out[32], first[32];
    char hex[65];
    uint64_t seed = 42;
    int best_impl, have_first = 0;
    pch_blake3 probe;

    if (!data) { fprintf(stderr, "blake3_bench: out of memory\n"); return 1; }
    for (size_t i = 0; i < len; i += 8) {
        const uint64_t v = splitmix(&seed);
        memcpy(data + i, &v, len - i < 8 ? len - i : 8);
    }
    if (argc > 2 && strcmp(argv[2], "-") != 0) {
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "blake3_bench: cannot write %s\n", argv[2]);
            return 1;
        }
    }
    best_impl = pch_blake3__init_impl(&probe, PCH_BLAKE3_IMPL_AVX512);
    printf("# %zu MiB, best of %d runs\n", mib, RUNS);
    for (int impl = best_impl; impl >= PCH_BLAKE3_IMPL_PORTABLE; impl--) {
        if (argc > 3 && strcmp(argv[3], pch_blake3__impl_name(impl)) != 0) continue;
        const speed oneshot = run(impl, data, len, 0, out);
        if (!have_first) { memcpy(first, out, sizeof first); have_first = 1; }
        else if (memcmp(first, out, sizeof out) != 0) {
            fprintf(stderr, "blake3_bench: %s digest differs\n", pch_blake3__impl_name(impl));
            return 1;
        }
        const speed streamed = run(impl, data, len, 65536, out);
        printf("blake3 %-8s one-shot %8.0f %8.0f\n", pch_blake3__impl_name(impl), oneshot.wall,
               oneshot.cpu);
        printf("blake3 %-8s 64KiB    %8.0f %8.0f\n", pch_blake3__impl_name(impl), streamed.wall,
               streamed.cpu);
    }
    if (!have_first) { fprintf(stderr, "blake3_bench: no such implementation\n"); return 1; }
    pch_hex_encode(hex, first, sizeof first);
    printf("digest %s\n", hex);
    free(data);
    return 0;
}
