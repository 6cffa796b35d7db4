/* Fuzz target: Lance data file footer, offset tables, FileDescriptor and column metadata (pch_lance__file_open).
** Seeds: data files of tests/data/lance and tests/golden-errors/lance. */
#include "lance_file_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return pch_fuzz_lance_file(data, size, 0);
}
