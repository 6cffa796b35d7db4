/* Fault injection for tests (RFC-0006 §15, §21.3; tests/cli/vortex_faults.sh). Only a build
** with PCH_FAULT_INJECTION has it (`make fault`: build-fault/); release builds compile
** pch_fault to `false`. There, PCH_FAULT_AT=N makes the N-th durable-write operation of the
** process (a write(2) of file data, fsync, link, rename, and vacuum's unlink) fail with EIO,
** and PCH_FAULT_COUNT=FILE writes how many such operations the process made, at exit: a test
** counts a writer's operations once, then fails each in turn. */
#include "core/core.h"

#ifdef PCH_FAULT_INJECTION
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long n_ops;
static long fail_at = -1;            /* -1: not read yet; 0: never */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void report(void)
{
    const char *f = getenv("PCH_FAULT_COUNT");
    FILE *o = f && *f ? fopen(f, "w") : NULL;
    if (o) { fprintf(o, "%ld\n", (long)atomic_load(&n_ops)); fclose(o); }
}

static void setup(void)
{
    const char *a = getenv("PCH_FAULT_AT");
    fail_at = a && *a ? strtol(a, NULL, 10) : 0;
    atexit(report);
}

bool pch_fault(const char *op)
{
    long k;
    pthread_once(&once, setup);
    k = atomic_fetch_add(&n_ops, 1) + 1;
    if (k != fail_at) return false;
    fprintf(stderr, "pch-fault: %s, operation %ld, fails with EIO\n", op, k);
    errno = EIO;
    return true;
}
#else
typedef int pch_fault_unused;        /* an ISO C translation unit is never empty */
#endif
