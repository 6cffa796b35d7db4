/* Minimal in-repo unit test harness (sds testhelp.h spirit; STYLE.md §11).
** A test file defines `static void test_<module>__<case>(void)` functions and a main that
** calls PCH_RUN for each, then returns pch_test_report(). `-s module::case` (or a prefix)
** selects tests. The last line printed is "<file>: N passed, N failed". */
#ifndef PCH_TEST_HARNESS_H
#define PCH_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

#include "pchronicle/error.h"

static int pch_t_passed, pch_t_failed, pch_t_cur_failed;
static const char *pch_t_filter;
static const char *pch_t_name = "tests";

#define PCH_CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    pch_t_cur_failed = 1; return; } } while (0)
#define PCH_CHECK_MSG(cond, ...) do { if (!(cond)) { \
    fprintf(stderr, "  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
    pch_t_cur_failed = 1; return; } } while (0)
#define PCH_CHECK_EQ_INT(a, b) do { long long pa_ = (long long)(a), pb_ = (long long)(b); \
    if (pa_ != pb_) { fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n", \
    __FILE__, __LINE__, #a, #b, pa_, pb_); pch_t_cur_failed = 1; return; } } while (0)
#define PCH_CHECK_EQ_STR(a, b) do { const char *pa_ = (a), *pb_ = (b); \
    if (!pa_ || !pb_ || strcmp(pa_, pb_) != 0) { fprintf(stderr, \
    "  FAIL %s:%d: %s == %s (\"%s\" != \"%s\")\n", __FILE__, __LINE__, #a, #b, \
    pa_ ? pa_ : "(null)", pb_ ? pb_ : "(null)"); pch_t_cur_failed = 1; return; } } while (0)
#define PCH_CHECK_OK(expr, errp) do { int rc_ = (expr); if (rc_ != 0) { \
    const pch_error *e_ = (errp); \
    fprintf(stderr, "  FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, rc_, \
    e_ ? e_->msg : ""); pch_t_cur_failed = 1; return; } } while (0)

static void pch_test_init(int argc, char **argv, const char *name)
{
    pch_t_name = name;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-s") == 0) pch_t_filter = argv[i + 1];
}

#define PCH_RUN(fn) do { \
    const char *full_ = #fn; \
    if (strncmp(full_, "test_", 5) == 0) full_ += 5; \
    char sel_[256]; snprintf(sel_, sizeof sel_, "%s", full_); \
    char *sep_ = strstr(sel_, "__"); \
    if (sep_) { memmove(sep_ + 2, sep_ + 2, strlen(sep_ + 2) + 1); sep_[0] = ':'; sep_[1] = ':'; } \
    if (!pch_t_filter || strncmp(sel_, pch_t_filter, strlen(pch_t_filter)) == 0) { \
        pch_t_cur_failed = 0; fn(); \
        if (pch_t_cur_failed) { pch_t_failed++; fprintf(stderr, "not ok %s\n", sel_); } \
        else { pch_t_passed++; } } } while (0)

static int pch_test_report(void)
{
    printf("%s: %d passed, %d failed\n", pch_t_name, pch_t_passed, pch_t_failed);
    return pch_t_failed ? 1 : 0;
}

#endif
