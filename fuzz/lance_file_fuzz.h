/* Shared body of the whole-file Lance fuzz targets: the input is a complete data file,
** exposed through a memfd so the reader's pread path is exercised unchanged. */
#ifndef PCH_LANCE_FILE_FUZZ_H
#define PCH_LANCE_FILE_FUZZ_H

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lance/lance_read_int.h"

static int pch_fuzz_lance_file(const uint8_t *data, size_t size, int read_columns)
{
    char path[64];
    int fd = memfd_create("lance-fuzz", MFD_CLOEXEC);
    pch_ctx *ctx = NULL;
    pch_limits lim = { 0 };
    pch_lance_file *f = NULL;
    pch_error err;

    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) { close(fd); return 0; }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    lim.max_page_bytes = (size_t)64 << 20;
    if (pch_ctx_new(&ctx, NULL, &lim, NULL) == 0 && pch_lance__file_open(&f, ctx, path, 0, &err) == 0) {
        const pch_lance_schema *s = pch_lance__file_schema(f);
        uint64_t n = pch_lance__file_num_rows(f);
        for (uint32_t c = 0; read_columns && c < pch_lance__file_num_columns(f); c++) {
            pch_lance_colbuf cb;
            pch_lance__colbuf_init(&cb, ctx, s->fields[c].type);
            pch_lance__file_read(f, c, s->fields[c].type, 0, n, &cb, &err);
            if (n > 2) pch_lance__file_read(f, c, s->fields[c].type, n / 2, 1, &cb, &err);
            pch_lance__colbuf_dispose(&cb);
        }
        pch_lance__file_free(f);
    }
    pch_ctx_free(ctx);
    close(fd);
    return 0;
}

#endif
