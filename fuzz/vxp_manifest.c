/* Fuzz target: CURRENT and the snapshot manifest of the Vortex trajectory projection
** (RFC-0006 §10.2, §10.3, §16.2). Input: CURRENT's bytes, a NUL, the manifest's bytes. Both
** must be accepted or rejected with an error, never crash; a manifest is also parsed against
** a fixed CURRENT so that its lists are reached even when the CURRENT part is broken. */
#include <string.h>

#include "vortex_fuzz.h"
#include "projection/pj_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t clen = nul ? (size_t)(nul - data) : size;
    const char *mtext = nul ? (const char *)nul + 1 : "";
    size_t mlen = nul ? size - clen - 1 : 0;
    pj_current cur;
    pch_json_parser *p = NULL;
    const pch_json_value *m = NULL;
    pch_error err;
    if (pj_current_parse(fz_ctx(), (const char *)data, clen, &cur, &err) < 0) {
        memset(&cur, 0, sizeof cur);
        strcpy(cur.snapshot_id, "01a2329b05a9-26005ebd");
        strcpy(cur.manifest, "manifests/01a2329b05a9-26005ebd.json");
    }
    if (pj_manifest_parse(fz_ctx(), &cur, mtext, mlen, &p, &m, &err) == 0) {
        /* every list entry was checked: walk them as the reader does */
        static const char *const lists[] = { "data_files", "trajectory_directory", "content_directory", "blob_packs",
                                             "directory_runs", "documents", "key_index", "lane_report" };
        for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
            const pch_json_value *l = pj_json_member(m, lists[k], PCH_JSON_ARRAY);
            char path[256];
            for (uint32_t i = 0; l && i < l->n; i++)
                if (!pj_json_str(&l->u.items[i], "path", path, sizeof path) || pj_path_check(path, strlen(path), NULL) != 0) abort();
        }
    }
    pch_json_parser_free(p);
    return 0;
}
