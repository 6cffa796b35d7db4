/* Fuzz target: Lance data file open + column metadata + decoding every column (pch_lance__file_read).
** Seeds: data files of tests/data/lance and tests/golden-errors/lance. */
#include "lance_file_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return pch_fuzz_lance_file(data, size, 1);
}
