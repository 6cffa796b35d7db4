/* Fuzz target: the document list of a Vortex trajectory projection snapshot (RFC-0006 §11.2:
** per-document digests kept in the snapshot): any bytes are opened as a Vortex file and
** decoded into document records (schema, sorted unique paths, 32-byte digests, known states),
** or rejected. */
#include "vortex_fuzz.h"
#include "projection/pj_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_error err;
    pj_docrec *recs = NULL;
    size_t n = 0;
    if (pj_docs_decode_mem(fz_ctx(), data, size, "fuzz", &recs, &n, &err) == PCH_OK) pj_docs_free(recs, n);
    return 0;
}
