/* Fuzz target: the JSONB decoder (src/json/jsonb.c, lance-format.md §3.2) on hostile bytes.
** pch_jsonb__validate must agree with pch_jsonb__to_json (which additionally refuses to
** render extensions and 256-bit decimals); a failed render leaves the buffer untouched. */
#include <stdlib.h>
#include <string.h>

#include "json/json_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_buf out;
    pch_error err;
    pch_buf_init(&out, NULL);
    if (pch_buf_append(&out, "x", 1) != PCH_OK) return 0;
    int rc = pch_jsonb__to_json(&out, data, size, &err);
    int vrc = pch_jsonb__validate(data, size, &err);
    if (rc == PCH_EUNSUPPORTED ? vrc != PCH_OK : (rc != vrc && rc != PCH_ENOMEM)) abort();
    if (rc != PCH_OK && out.len != 1) abort();
    if (rc == PCH_OK && pch_json__utf8_check(out.data, out.len) != out.len) abort();
    pch_buf_dispose(&out);
    return 0;
}
