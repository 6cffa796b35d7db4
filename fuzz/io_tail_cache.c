/* Fuzz target: an entry of the local tail cache (src/io/rfile.c), which a reader loads from
** disk: any bytes are parsed as an entry and either check (lengths, digest) or are ignored. */
#include "io/io_int.h"
#include "io/rfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t sz, off;
    const uint8_t *tail;
    size_t len;
    if (pch_io_tail_parse(data, size, &sz, &off, &tail, &len)) {
        /* a checked entry is self-consistent: its tail ends the object, inside the input */
        if (off + len != sz || tail < data || tail + len != data + size) __builtin_trap();
    }
    return 0;
}
