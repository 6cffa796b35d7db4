/* Fuzz target: a trajectory directory shard of the Vortex trajectory projection (RFC-0006
** §10.4): any bytes are opened as a Vortex file, scanned and decoded into directory entries
** (types, NUL-free keys, sort order and uniqueness, row bounds, cluster ranges), or rejected. */
#include "vortex_fuzz.h"
#include "projection/pj_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_error err;
    (void)pj_dir_decode_mem(fz_ctx(), data, size, &err);
    return 0;
}
