/* Fuzz target: the Lance 2.1 miniblock page layout decoder (lance_read_int.h
** pch_lance__decode_page_v21); input framing in lance_page_fuzz.h. */
#include "lance_page_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return pch_fuzz_lance_page(data, size, 1, 1);
}
