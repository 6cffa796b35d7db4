/* Read benchmark of bench/vortex.sh: scans a Vortex file (pchronicle-vortex API) and a Lance
** dataset (public Lance scanner) RUNS times, all columns and one narrow column, and prints
** seconds per scan, rows and bytes fetched (bench/vortex.sh makes the table). Not part of
** make test.
**   vortex_bench FILE.vortex LANCE_DATASET NARROW_COLUMN [RUNS]                           */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pchronicle/lance.h"
#include "pchronicle-vortex/vortex.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pch_ctx *g_ctx;   /* bench program: one context */

static int vx_scan(const char *path, const char *col, uint64_t *rows, unsigned long long *bytes_read)
{
    pch_vx_file *f = NULL;
    pch_vx_array *a = NULL;
    pch_vx_dtype *dt = NULL;
    pch_vx_scan_options o = PCH_VX_SCAN_OPTIONS_INIT;
    pch_vx_io_stats st;
    pch_error err;
    const char *cols[1] = { col };
    if (pch_vx_file_open(&f, g_ctx, path, &err) < 0) { fprintf(stderr, "vortex: %s\n", err.msg); return -1; }
    if (col) { o.columns = cols; o.n_columns = 1; }
    if (pch_vx_file_scan(f, &o, &a, &dt, &err) < 0) { fprintf(stderr, "vortex: %s\n", err.msg); pch_vx_file_free(f); return -1; }
    pch_vx_file_io_stats(f, &st);
    *rows = a->len;
    *bytes_read = (unsigned long long)st.bytes_read;
    pch_vx_array_free(a);
    pch_vx_dtype_free(dt);
    pch_vx_file_free(f);
    return 0;
}

static int lance_scan(const char *path, long col, uint64_t *rows)
{
    pch_lance_dataset *ds = NULL;
    pch_lance_scanner *sc = NULL;
    const pch_lance_batch *b;
    pch_error err;
    size_t c = (size_t)col;
    int rc;
    *rows = 0;
    if (pch_lance_dataset_open(&ds, g_ctx, path, 0, &err) < 0) { fprintf(stderr, "lance: %s\n", err.msg); return -1; }
    if (pch_lance_scanner_open(&sc, ds, col >= 0 ? &c : NULL, col >= 0 ? 1 : 0, 8192, &err) < 0) { fprintf(stderr, "lance: %s\n", err.msg); pch_lance_dataset_free(ds); return -1; }
    while ((rc = pch_lance_scanner_next(sc, &b, &err)) == 0) *rows += b->n_rows;
    pch_lance_scanner_free(sc);
    pch_lance_dataset_free(ds);
    return rc == PCH_ITEROVER ? 0 : (fprintf(stderr, "lance: %s\n", err.msg), -1);
}

/* One line per scan mode, tab-separated for bench/vortex.sh:
**   <mode> <sec/scan> <rows> <bytes fetched>     mode = vortex_all vortex_one lance_all lance_one
** A warm-up scan precedes the timed runs of each mode (page cache, lazy library set-up). */
int main(int argc, char **argv)
{
    int runs = argc > 4 ? atoi(argv[4]) : 3;
    unsigned long long rd = 0;
    uint64_t rows = 0;
    long lcol = -1;
    if (argc < 4) { fprintf(stderr, "usage: vortex_bench FILE.vortex LANCE_DATASET NARROW_COLUMN [RUNS]\n"); return 2; }
    if (runs < 1) runs = 1;
    if (pch_ctx_new(&g_ctx, NULL, NULL, NULL) < 0) return 1;
    {
        pch_lance_dataset *ds = NULL;
        pch_error err;
        if (pch_lance_dataset_open(&ds, g_ctx, argv[2], 0, &err) == 0) {
            lcol = pch_lance_schema_find(pch_lance_dataset_schema(ds), argv[3]);
            pch_lance_dataset_free(ds);
        }
        if (lcol < 0) { fprintf(stderr, "lance: no column %s\n", argv[3]); return 1; }
    }
    for (int narrow = 0; narrow < 2; narrow++) {
        const char *col = narrow ? argv[3] : NULL;
        if (vx_scan(argv[1], col, &rows, &rd) < 0) return 1;
        double t0 = now();
        for (int r = 0; r < runs; r++) if (vx_scan(argv[1], col, &rows, &rd) < 0) return 1;
        printf("vortex_%s\t%.6f\t%llu\t%llu\n", narrow ? "one" : "all", (now() - t0) / runs,
               (unsigned long long)rows, rd);
        if (lance_scan(argv[2], narrow ? lcol : -1, &rows) < 0) return 1;
        t0 = now();
        for (int r = 0; r < runs; r++) if (lance_scan(argv[2], narrow ? lcol : -1, &rows) < 0) return 1;
        printf("lance_%s\t%.6f\t%llu\t-\n", narrow ? "one" : "all", (now() - t0) / runs, (unsigned long long)rows);
    }
    pch_ctx_free(g_ctx);
    return 0;
}
