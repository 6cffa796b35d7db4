/* RFC-0014 "文件集合": physical lines of .jsonl/.ndjson files (LF or CRLF, the last line
** with or without a terminator), the per-line pre-checks, and the file/path name rules.
** Depends on src/core only. */
#include "compact_jsonl/cj_int.h"

bool pch_cj__next_line(const uint8_t *p, size_t len, size_t *line_len)
{
    const uint8_t *nl = len ? memchr(p, '\n', len) : NULL;
    if (!nl) return false;
    *line_len = (size_t)(nl - p) + 1;
    return true;
}

size_t pch_cj__content_len(const uint8_t *line, size_t line_len)
{
    if (line_len && line[line_len - 1] == '\n') {
        line_len--;
        if (line_len && line[line_len - 1] == '\r') line_len--;
    }
    return line_len;
}

int pch_cj__check_line(const uint8_t *content, size_t len, bool first_line, size_t *col_out,
                       pch_error *err)
{
    *col_out = 1;
    if (first_line && len >= 3 && content[0] == 0xEF && content[1] == 0xBB && content[2] == 0xBF)
        return pch_error_set(err, PCH_EINVAL, "utf-8 byte order mark is not allowed");
    const uint8_t *nul = len ? memchr(content, 0, len) : NULL;
    if (nul) {
        *col_out = (size_t)(nul - content) + 1;
        return pch_error_set(err, PCH_EINVAL, "NUL byte");
    }
    for (size_t i = 0; i < len; i++) {
        uint8_t c = content[i];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return PCH_OK;
    }
    return pch_error_set(err, PCH_EINVAL, len ? "whitespace-only line" : "empty line");
}

static bool ends_with_ci(const char *s, size_t n, const char *suf)
{
    size_t m = strlen(suf);
    if (n < m) return false;
    for (size_t i = 0; i < m; i++) {
        char c = s[n - m + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != suf[i]) return false;
    }
    return true;
}

bool pch_cj__has_input_ext(const char *name)
{
    size_t n = strlen(name);
    return ends_with_ci(name, n, ".json") || ends_with_ci(name, n, ".jsonl") ||
           ends_with_ci(name, n, ".ndjson");
}

bool pch_cj__is_json_doc(const char *name) { return ends_with_ci(name, strlen(name), ".json"); }

bool pch_cj__valid_utf8(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { n = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { n = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { n = 3; cp = c & 0x07; }
        else return false;
        if (n > len - i - 1) return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

bool pch_cj__safe_relpath(const char *s, size_t len)
{
    if (len == 0 || s[0] == '/' || memchr(s, '\0', len)) return false;
    if (!pch_cj__valid_utf8((const uint8_t *)s, len)) return false;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '/') {
            size_t n = i - start;
            if (n == 0) return false;
            if (n == 1 && s[start] == '.') return false;
            if (n == 2 && s[start] == '.' && s[start + 1] == '.') return false;
            start = i + 1;
        }
    }
    return true;
}
