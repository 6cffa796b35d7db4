/* pchronicle-vortex inspect FILE: versions, segments, dtype, per-lane bytes, the layout tree
** with encodings per flat segment and the first zones of every zone map.
** pchronicle-vortex check FILE: open with strict validation and decode every segment. */
#include "vx_cli.h"

int vx_cmd_inspect(pch_ctx *ctx, int argc, char **argv)
{
    pch_vx_file *f = NULL;
    pch_error err;
    int rc;
    if (argc != 1 || argv[0][0] == '-') return vx_usage("inspect: FILE required");
    if (pch_vx_file_open(&f, ctx, argv[0], &err) < 0) return vx_fail("inspect", &err);
    rc = pch_vx_file_inspect(f, stdout, &err) < 0 ? vx_fail("inspect", &err) : VX_EXIT_OK;
    pch_vx_file_free(f);
    return rc;
}

int vx_cmd_check(pch_ctx *ctx, int argc, char **argv)
{
    pch_vx_file *f = NULL;
    pch_error err;
    int rc;
    if (argc != 1 || argv[0][0] == '-') return vx_usage("check: FILE required");
    if (pch_vx_file_open(&f, ctx, argv[0], &err) < 0) return vx_fail("check", &err);
    rc = pch_vx_file_check(f, &err) < 0 ? vx_fail("check", &err) : VX_EXIT_OK;
    if (rc == VX_EXIT_OK) printf("ok: %llu rows\n", (unsigned long long)pch_vx_file_row_count(f));
    pch_vx_file_free(f);
    return rc;
}
