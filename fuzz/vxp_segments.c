/* Fuzz target: a segment digest table of the Vortex trajectory projection (pj_segs.c): any
** bytes are parsed against a data file size taken from the input, and every entry of a table
** that parses is then checked against bytes of the input (digest mismatches are errors, never
** crashes or reads outside the entry), and rows of a version-4 table (some taken from the
** input) are asked for their row digests. */
#include "vortex_fuzz.h"
#include "projection/pj_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pj_segtab *t = NULL;
    pch_error err;
    uint64_t file_bytes;
    if (size < 8) return 0;
    /* the claimed data file size: the table's own header field when the input has one, so
    ** that inputs reach the entry checks */
    file_bytes = size >= 16 ? pch_load_le64(data + 8) : pch_load_le64(data);
    if (pj_segtab_parse(&t, fz_ctx(), data, size, "fuzz.vortex", file_bytes, &err) == PCH_OK) {
        for (uint32_t i = 0; i < 4; i++) {
            /* a segment's bytes: the start of the input, as long as the entry says (bounded) */
            uint64_t off = 0, len = size < 64 ? size : 64;
            (void)pj_segtab_check(t, i, off, data, len, &err);
            (void)pj_segtab_check_block(t, i, i, data, len, &err);
            (void)pj_segtab_check_tail(t, i, data, len, &err);   /* version 3: the data file's tail */
        }
        for (uint32_t c = 0; c < 4; c++) {                         /* version 4: row digests */
            const uint8_t *row;
            if (pj_segtab_row_digest(t, (uint64_t)c * 63 + data[size - 1], &row, &err) == PCH_OK) (void)row[31];
        }
        pj_segtab_free(t);
    }
    return 0;
}
