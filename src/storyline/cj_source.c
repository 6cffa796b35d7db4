/* Compact-jsonl input of the Storyline import (RFC-0014 datasets whose records are ATIF
** documents). The dataset is read through its public API: restored byte for byte into a
** private staging directory beside nothing the user sees (removed afterwards), whose .json
** files are whole documents and whose .jsonl / .ndjson lines are one document each. The
** dataset's exact Lance version is reported for CURRENT's lineage (docs/storyline.md §3). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storyline/storyline.h"
#include "pchronicle/compact_jsonl.h"

typedef int (*doc_cb)(const char *path, const char *text, size_t len, void *payload);

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int walk(pch_ctx *ctx, const char *base, const char *rel, doc_cb cb, void *payload,
                pch_error *err)
{
    pch_buf dir, p, data;
    DIR *d;
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = PCH_OK;
    pch_buf_init(&dir, ctx);
    pch_buf_init(&p, ctx);
    pch_buf_init(&data, ctx);
    pch_buf_printf(&dir, "%s%s%s", base, rel[0] ? "/" : "", rel);
    if (dir.oom) { rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory"); goto done; }
    d = opendir((const char *)dir.data);
    if (!d) { rc = pch_error_set_sys(err, PCH_EIO, errno, "storyline: %s: cannot open", (const char *)dir.data); goto done; }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            char **nn = pch_realloc(ctx, names, nc * sizeof *nn);
            if (!nn) { rc = PCH_ENOMEM; break; }
            names = nn;
            cap = nc;
        }
        names[n] = pch_malloc(ctx, strlen(e->d_name) + 1);
        if (!names[n]) { rc = PCH_ENOMEM; break; }
        memcpy(names[n], e->d_name, strlen(e->d_name) + 1);
        n++;
    }
    closedir(d);
    if (rc < 0) { rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory"); goto done; }
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && rc == PCH_OK; i++) {
        struct stat st;
        pch_buf_clear(&p);
        pch_buf_printf(&p, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        pch_buf_clear(&dir);
        pch_buf_printf(&dir, "%s/%s", base, (const char *)p.data);
        if (p.oom || dir.oom) { rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory"); break; }
        if (lstat((const char *)dir.data, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) { rc = walk(ctx, base, (const char *)p.data, cb, payload, err); continue; }
        if (!S_ISREG(st.st_mode)) continue;
        bool whole = has_suffix(names[i], ".json");
        bool lines = has_suffix(names[i], ".jsonl") || has_suffix(names[i], ".ndjson");
        if (!whole && !lines) continue;
        pch_buf_clear(&data);
        rc = pch_file_read_all(&data, (const char *)dir.data, pch_ctx_limits(ctx)->max_line_bytes, err);
        if (rc < 0) break;
        if (whole) { rc = cb((const char *)p.data, data.data ? (const char *)data.data : "", data.len, payload); continue; }
        size_t off = 0, line = 0;
        while (off < data.len && rc == PCH_OK) {
            const char *s = (const char *)data.data + off;
            const char *nl = memchr(s, '\n', data.len - off);
            size_t len = nl ? (size_t)(nl - s) : data.len - off;
            line++;
            size_t k = 0;
            while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r')) k++;
            if (k < len) {
                pch_buf name;
                pch_buf_init(&name, ctx);
                pch_buf_printf(&name, "%s#L%zu", (const char *)p.data, line);
                rc = name.oom ? pch_error_set(err, PCH_ENOMEM, "storyline: out of memory")
                              : cb((const char *)name.data, s, len, payload);
                pch_buf_dispose(&name);
            }
            off += len + (nl ? 1 : 0);
        }
    }
done:
    for (size_t i = 0; i < n; i++) pch_free(ctx, names[i]);
    pch_free(ctx, names);
    pch_buf_dispose(&dir);
    pch_buf_dispose(&p);
    pch_buf_dispose(&data);
    return rc;
}

int pch_sl__cj_each(pch_ctx *ctx, const char *dataset, uint64_t *version_out, doc_cb cb,
                    void *payload, pch_error *err)
{
    pch_cj_stats st;
    pch_buf tmp;
    const char *td = getenv("TMPDIR");
    char *dir;
    size_t dlen;
    int rc;
    *version_out = 0;
    /* a private directory: the export locks its output's parent, and a shared TMPDIR would
    ** make concurrent imports (or any other writer there) fail on that lock */
    pch_buf_init(&tmp, ctx);
    pch_buf_printf(&tmp, "%s/pch-storyline-cj-XXXXXX", td && td[0] ? td : "/tmp");
    if (tmp.oom) { pch_buf_dispose(&tmp); return pch_error_set(err, PCH_ENOMEM, "storyline: out of memory"); }
    if (!mkdtemp((char *)tmp.data)) {
        rc = pch_error_set_sys(err, PCH_EIO, errno, "storyline: temporary directory %s", (const char *)tmp.data);
        pch_buf_dispose(&tmp);
        return rc;
    }
    dlen = tmp.len;
    pch_buf_append_str(&tmp, "/docs");
    if (tmp.oom) rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
    else {
        memset(&st, 0, sizeof st);
        rc = pch_cj_export(ctx, dataset, (const char *)tmp.data, NULL, &st, err);
    }
    if (rc == PCH_OK) {
        *version_out = st.version;
        rc = walk(ctx, (const char *)tmp.data, "", cb, payload, err);
    }
    dir = (char *)tmp.data;
    dir[dlen] = 0;
    pch_remove_tree(dir, NULL);
    pch_buf_dispose(&tmp);
    return rc;
}
