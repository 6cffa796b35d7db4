/* Fuzz target for the text parsers of src/core: ISO-8601 timestamps (parse → format →
** parse must round-trip to the same millisecond), base64 (decode → encode must give the
** input back: the decoder accepts only canonical encodings) and hex. */
#include <stdlib.h>

#include "core/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t ms, ms2;
    if (pch_time_parse_iso8601(&ms, (const char *)data, size, NULL) == PCH_OK &&
        ms > -62135596800000LL && ms < 253402300799999LL) {
        char out[32];
        pch_time_format_iso8601(out, ms);
        if (pch_time_parse_iso8601(&ms2, out, strlen(out), NULL) != PCH_OK || ms2 != ms) abort();
    }
    pch_buf dec, enc;
    pch_buf_init(&dec, NULL);
    pch_buf_init(&enc, NULL);
    if (pch_base64_decode(&dec, (const char *)data, size, NULL) == PCH_OK) {
        if (pch_base64_encode(&enc, dec.data, dec.len) != PCH_OK) abort();
        if (enc.len != size || (size && memcmp(enc.data, data, size) != 0)) abort();
    }
    pch_buf_dispose(&dec);
    pch_buf_dispose(&enc);
    if (size >= 2) {
        uint8_t *bin = malloc(size / 2);
        if (bin && pch_hex_decode(bin, (const char *)data, size / 2)) {
            char *hex = malloc(size + 1);
            if (!hex) abort();
            pch_hex_encode(hex, bin, size / 2);
            for (size_t i = 0; i < size / 2 * 2; i++)
                if ((hex[i] | 0x20) != (data[i] | 0x20)) abort();
            free(hex);
        }
        free(bin);
    }
    return 0;
}
