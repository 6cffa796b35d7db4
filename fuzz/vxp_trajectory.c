/* Fuzz target: a trajectory data file of the Vortex projection (RFC-0006 §6): any bytes are
** opened as a Vortex file, scanned in row ranges, bound to the lanes, structure-checked and
** rebuilt as ATIF JSON (content that would need a blob pack becomes a preview); the result
** must be valid JSON whenever the rebuild succeeds. */
#include "vortex_fuzz.h"
#include "projection/pj_int.h"

static void no_finding(const char *file, const char *msg, void *payload) { (void)file; (void)msg; (void)payload; }

static int null_child(pch_buf *out, const char *r, size_t rn, const char *t, size_t tn, void *payload, pch_error *err)
{
    (void)r; (void)rn; (void)t; (void)tn; (void)payload; (void)err;
    return pch_buf_append(out, "null", 4) < 0 ? PCH_ENOMEM : PCH_OK;
}

static int no_pages(pch_buf *out, const char *t, size_t tn, uint32_t pages, bool *first, void *payload, pch_error *err)
{
    (void)out; (void)t; (void)tn; (void)pages; (void)first; (void)payload; (void)err;
    return PCH_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pch_vx_file *f = NULL;
    pch_error err;
    pch_buf out;
    if (pch_vx_file_open_mem(&f, fz_ctx(), data, size, &err) != 0) return 0;
    pch_buf_init(&out, fz_ctx());
    for (uint64_t b = 0, rows = pch_vx_file_row_count(f); b < rows && b < 4096; b += 64) {
        pch_vx_scan_options so = PCH_VX_SCAN_OPTIONS_INIT;
        pch_vx_array *a = NULL;
        pch_vx_dtype *dt = NULL;
        pj_rows r;
        so.row_begin = b;
        so.row_end = b + 64 < rows ? b + 64 : rows;
        if (pch_vx_file_scan(f, &so, &a, &dt, &err) == 0 && pj_rows_bind(&r, a, &err) == 0) {
            pj_model_check(&r, "fuzz", no_finding, NULL);
            for (uint64_t i = 0; i < a->len; i++) {
                uint64_t page = 0, pages = 0;
                const char *k = "";
                size_t kn = 0;
                bool first = true;
                pch_buf_clear(&out);
                if (r.l[PJ_ID_PAGE_INDEX] && r.l[PJ_ID_PAGE_COUNT] && r.l[PJ_ID_TRAJECTORY_KEY])
                    pj_model_page_info(&r, i, &page, &pages, &k, &kn);
                if (page) {   /* a continuation page: its steps as an array */
                    if (pch_buf_putc(&out, '[') == 0 &&
                        pj_model_write_page(&out, &r, i, k, kn, (uint32_t)page, (uint32_t)pages, &first, NULL,
                                            PCH_VXP_PREVIEW, NULL, &err) == 0 &&
                        pch_buf_putc(&out, ']') == 0 &&
                        pch_json_validate(fz_ctx(), (const char *)out.data, out.len, NULL, NULL, NULL, &err) != 0)
                        abort();
                    continue;
                }
                if (pj_model_write_json(&out, &r, i, NULL, (i & 1) ? PCH_VXP_PREVIEW : PCH_VXP_FULL, NULL, null_child,
                                        no_pages, NULL, &err) == 0 &&
                    pch_json_validate(fz_ctx(), (const char *)out.data, out.len, NULL, NULL, NULL, &err) != 0)
                    abort();
            }
        }
        pch_vx_array_free(a);
        pch_vx_dtype_free(dt);
    }
    pch_buf_dispose(&out);
    pch_vx_file_free(f);
    return 0;
}
