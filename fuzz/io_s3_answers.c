/* Fuzz target: what an S3 server answers, read by the object-store layer (src/io): any bytes
** as a ListObjectsV2 document (entries, keys, sizes, ETags, times, continuation), as XML text
** to unescape, and as an error document's <Code>/<Message>; each is parsed or rejected. */
#include "io/io_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_entry(void *arg, const pch_object_info *info)
{
    size_t *n = arg;
    *n += strlen(info->key) + (size_t)(info->size & 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pch_ctx *ctx;
    if (!ctx && pch_ctx_new(&ctx, NULL, NULL, NULL) != 0) return 0;
    const char *x = (const char *)data;
    pch_buf token, text;
    pch_buf_init(&token, ctx);
    pch_buf_init(&text, ctx);
    bool more;
    size_t n = 0, skip = size ? data[0] % 8 : 0;
    pch_error err;
    (void)pch_s3_parse_list(ctx, x, size, skip, on_entry, &n, &more, &token, &err);
    (void)pch_xml_unescape(&text, x, size);
    size_t pos = 0, cl;
    const char *c;
    while (pch_xml_next(x, size, &pos, "Code", &c, &cl)) n += cl;
    pch_buf_dispose(&token);
    pch_buf_dispose(&text);
    return 0;
}
