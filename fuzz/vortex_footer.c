/* Fuzz target: the Footer FlatBuffer (array/layout specs, segment map; vortex-format.md
** §1.5) spliced into a valid template file, which is then opened and read in full. */
#include "vortex_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_splice_target(data, size, 3);
}
