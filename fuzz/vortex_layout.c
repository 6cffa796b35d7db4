/* Fuzz target: the Layout FlatBuffer (vortex-format.md §2.1, §5) spliced into a valid
** template file; even inputs use the template's dtype, odd inputs splice the DType region
** instead (§2.4), so both trees are exercised. */
#include "vortex_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    return fz_splice_target(data + 1, size - 1, (data[0] & 1) ? 0 : 1);
}
