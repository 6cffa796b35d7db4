/* Fuzz target: a whole Vortex file (trailer, postscript, regions, everything after) — the
** input is taken as the complete file; `open` parses the trailer and postscript first
** (vortex-format.md §1.2). Reads every column of anything that opens. */
#include "vortex_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)1 << 20)) return 0;
    fz_read_all(data, size);
    return 0;
}
