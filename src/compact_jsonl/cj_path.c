/* RFC-0014 "JSON path 子集": the path grammar
**     path = "$" / "$" 1*(member [index]);  member = "." identifier;
**     identifier = (ALPHA / "_") *(ALPHA / DIGIT / "_");  index = "[" 1*DIGIT "]"
** and its evaluation over parsed JSON values. No wildcard, slice, filter, recursive
** descent, quoted member, negative index or second index in one segment. Depends on
** src/core only (the value structs are declared in pchronicle/json.h). */
#include "compact_jsonl/cj_int.h"

static bool is_alpha(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }

bool pch_cj__is_identifier(const char *s, size_t len)
{
    if (len == 0 || !(is_alpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < len; i++) {
        int c = (unsigned char)s[i];
        if (!(is_alpha(c) || is_digit(c) || c == '_')) return false;
    }
    return true;
}

bool pch_cj__is_reserved(const char *name)
{
    static const char *const reserved[] = { "filename", "data", "_raw_", "_offload_" };
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(name, reserved[i]) == 0) return true;
    return false;
}

/* Render the path for messages: printable ASCII as is, anything else as '?'. */
static void show(char *out, size_t cap, const char *s, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; i < len && j + 4 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (len > 0 && j + 4 >= cap) { out[j++] = '.'; out[j++] = '.'; out[j++] = '.'; }
    out[j] = '\0';
}

static int bad(pch_error *err, const char *path, size_t len, size_t at, const char *what)
{
    char shown[96];
    show(shown, sizeof shown, path, len);
    return pch_error_set(err, PCH_EINVAL, "json path '%s': byte %zu: %s", shown, at + 1, what);
}

/* Syntax check only; counts the steps. */
static int scan(const char *s, size_t len, size_t *n_steps, pch_error *err)
{
    size_t i = 0, n = 0;
    if (len == 0) return bad(err, s, len, 0, "empty path (expected '$')");
    if (s[0] != '$') return bad(err, s, len, 0, "path must start with '$'");
    i = 1;
    while (i < len) {
        char c = s[i];
        if (c == '[')
            return bad(err, s, len, i, n == 0 ? "an index must follow a member ('$.name[0]')"
                                               : "only one index per segment");
        if (c != '.') {
            if (c == '*') return bad(err, s, len, i, "wildcards are not supported");
            return bad(err, s, len, i, "expected '.' member");
        }
        i++;
        if (i < len && s[i] == '.') return bad(err, s, len, i, "recursive descent is not supported");
        if (i < len && (s[i] == '\'' || s[i] == '"'))
            return bad(err, s, len, i, "quoted members are not supported");
        if (i < len && s[i] == '*') return bad(err, s, len, i, "wildcards are not supported");
        size_t start = i;
        if (i >= len || !(is_alpha((unsigned char)s[i]) || s[i] == '_'))
            return bad(err, s, len, i, "expected an identifier (letter or '_')");
        while (i < len && (is_alpha((unsigned char)s[i]) || is_digit((unsigned char)s[i]) || s[i] == '_')) i++;
        (void)start;
        n++;
        if (i < len && s[i] == '[') {
            i++;
            if (i < len && s[i] == '-') return bad(err, s, len, i, "negative indexes are not supported");
            if (i < len && (s[i] == '*' || s[i] == '?' || s[i] == ':'))
                return bad(err, s, len, i, "wildcards, filters and slices are not supported");
            if (i >= len || !is_digit((unsigned char)s[i])) return bad(err, s, len, i, "expected digits in index");
            uint64_t v = 0;
            while (i < len && is_digit((unsigned char)s[i])) {
                v = v * 10 + (uint64_t)(s[i] - '0');
                if (v > UINT32_MAX) return bad(err, s, len, i, "index too large");
                i++;
            }
            if (i >= len) return bad(err, s, len, i, "missing ']'");
            if (s[i] == ',' || s[i] == ':') return bad(err, s, len, i, "only one index per segment");
            if (s[i] != ']') return bad(err, s, len, i, "expected ']'");
            i++;
            if (i < len && s[i] == '[') return bad(err, s, len, i, "only one index per segment");
        }
    }
    *n_steps = n;
    return PCH_OK;
}

int pch_cj__path_parse(pch_cj_path *out, pch_ctx *ctx, const char *path, size_t len,
                       pch_error *err)
{
    memset(out, 0, sizeof *out);
    if (memchr(path, '\0', len)) return bad(err, path, len, (size_t)((const char *)memchr(path, '\0', len) - path), "NUL byte");
    size_t n = 0;
    PCH_TRY(scan(path, len, &n, err));
    size_t text_len;
    if (!pch_add_size(&text_len, len, 1)) return pch_error_set(err, PCH_ENOMEM, "json path too long");
    char *text = pch_malloc(ctx, text_len);
    pch_cj_path_step *steps = n ? pch_calloc(ctx, n, sizeof *steps) : NULL;
    if (!text || (n && !steps)) {
        pch_free(ctx, text);
        pch_free(ctx, steps);
        return pch_error_set(err, PCH_ENOMEM, "out of memory parsing json path");
    }
    memcpy(text, path, len);
    text[len] = '\0';
    size_t i = 1, k = 0;
    while (i < len) {
        i++;                                    /* '.' */
        size_t start = i;
        while (i < len && text[i] != '.' && text[i] != '[') i++;
        steps[k].name = text + start;
        steps[k].name_len = i - start;
        if (i < len && text[i] == '[') {
            i++;
            uint32_t v = 0;
            while (text[i] != ']') v = v * 10 + (uint32_t)(text[i++] - '0');
            i++;
            steps[k].has_index = true;
            steps[k].index = v;
        }
        k++;
    }
    out->text = text;
    out->steps = steps;
    out->n_steps = n;
    out->ctx = ctx;
    return PCH_OK;
}

void pch_cj__path_dispose(pch_cj_path *p)
{
    if (!p || !p->ctx) return;
    pch_free(p->ctx, p->text);
    pch_free(p->ctx, p->steps);
    memset(p, 0, sizeof *p);
}

const pch_json_value *pch_cj__path_eval(const pch_cj_path *p, const pch_json_value *root)
{
    const pch_json_value *v = root;
    for (size_t k = 0; v && k < p->n_steps; k++) {
        const pch_cj_path_step *st = &p->steps[k];
        if (v->kind != PCH_JSON_OBJECT) return NULL;
        const pch_json_value *found = NULL;
        for (uint32_t m = 0; m < v->n; m++) {
            const pch_json_member *mem = &v->u.members[m];
            if (mem->key_len == st->name_len && memcmp(mem->key, st->name, st->name_len) == 0) {
                found = &mem->value;
                break;
            }
        }
        v = found;
        if (v && st->has_index) {
            if (v->kind != PCH_JSON_ARRAY || st->index >= v->n) return NULL;
            v = &v->u.items[st->index];
        }
    }
    return v;
}

int pch_cj_path_check(const char *path, pch_error *err)
{
    if (!path) return pch_error_set(err, PCH_EINVAL, "json path is NULL");
    size_t n;
    return scan(path, strlen(path), &n, err);
}
