/* RFC-0014 "文件集合": the input file set. A directory is walked recursively without
** following symlinks; regular files ending in .json/.jsonl/.ndjson (any case) are kept,
** everything else ignored; the result is sorted by the byte order of the normalised
** relative names ("dir/sub/file.jsonl"). Depends on src/core only. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "compact_jsonl/cj_int.h"

static int add_file(pch_cj_filelist *l, const char *rel, const char *abs, uint64_t size,
                    pch_error *err)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64, bytes;
        if (!pch_mul_size(&bytes, ncap, sizeof *l->v))
            return pch_error_set(err, PCH_ENOMEM, "too many input files");
        pch_cj_file *nv = pch_realloc(l->ctx, l->v, bytes);
        if (!nv) return pch_error_set(err, PCH_ENOMEM, "out of memory listing input files");
        l->v = nv;
        l->cap = ncap;
    }
    pch_cj_file *f = &l->v[l->n];
    f->rel = pch_strndup(l->ctx, rel, strlen(rel));
    f->abs = pch_strndup(l->ctx, abs, strlen(abs));
    f->size = size;
    if (!f->rel || !f->abs) {
        pch_free(l->ctx, f->rel);
        pch_free(l->ctx, f->abs);
        return pch_error_set(err, PCH_ENOMEM, "out of memory listing input files");
    }
    l->n++;
    return PCH_OK;
}

static bool is_staging_name(const char *name)
{
    return name[0] == '.' && strstr(name, ".staging-") != NULL;
}

/* abs and rel are the directory's paths (rel "" for the root). */
static int walk_dir(pch_cj_filelist *l, pch_buf *abs, pch_buf *rel, dev_t skip_dev,
                    ino_t skip_ino, unsigned depth, pch_error *err)
{
    if (depth > 256) return pch_error_set(err, PCH_ELIMIT, "%s: directories nested too deeply", (char *)abs->data);
    DIR *d = opendir((const char *)abs->data);
    if (!d) return pch_error_set_sys(err, PCH_EIO, errno, "open directory %s", (const char *)abs->data);
    int rc = PCH_OK;
    size_t abs_len = abs->len, rel_len = rel->len;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno) rc = pch_error_set_sys(err, PCH_EIO, errno, "read directory %s", (const char *)abs->data);
            break;
        }
        const char *name = de->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || is_staging_name(name)) continue;
        abs->len = abs_len;
        rel->len = rel_len;
        if ((abs_len && abs->data[abs_len - 1] != '/' && pch_buf_putc(abs, '/') < 0) ||
            pch_buf_append_str(abs, name) < 0 ||
            (rel_len && pch_buf_putc(rel, '/') < 0) || pch_buf_append_str(rel, name) < 0) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory walking %s", (const char *)abs->data);
            break;
        }
        struct stat st;
        if (lstat((const char *)abs->data, &st) != 0) {
            rc = pch_error_set_sys(err, PCH_EIO, errno, "stat %s", (const char *)abs->data);
            break;
        }
        if (S_ISDIR(st.st_mode)) {
            if (st.st_dev == skip_dev && st.st_ino == skip_ino) continue;
            rc = walk_dir(l, abs, rel, skip_dev, skip_ino, depth + 1, err);
            if (rc < 0) break;
        } else if (S_ISREG(st.st_mode) && pch_cj__has_input_ext(name)) {
            if (!pch_cj__valid_utf8(rel->data, rel->len)) {
                rc = pch_error_set(err, PCH_EINVAL, "%s: file name is not valid utf-8", (const char *)abs->data);
                break;
            }
            rc = add_file(l, (const char *)rel->data, (const char *)abs->data, (uint64_t)st.st_size, err);
            if (rc < 0) break;
        }
        /* symlinks, other extensions, devices, sockets, fifos: ignored */
    }
    abs->len = abs_len;
    rel->len = rel_len;
    if (abs->data) abs->data[abs_len] = 0;
    if (rel->data) rel->data[rel_len] = 0;
    closedir(d);
    return rc;
}

static int cmp_rel(const void *a, const void *b)
{
    return strcmp(((const pch_cj_file *)a)->rel, ((const pch_cj_file *)b)->rel);
}

int pch_cj__walk(pch_cj_filelist *out, pch_ctx *ctx, const char *root, dev_t skip_dev,
                 ino_t skip_ino, pch_error *err)
{
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    struct stat st;
    if (lstat(root, &st) != 0)
        return pch_error_set_sys(err, errno == ENOENT ? PCH_ENOTFOUND : PCH_EIO, errno, "input %s", root);
    if (S_ISREG(st.st_mode)) {
        const char *slash = strrchr(root, '/');
        const char *base = slash ? slash + 1 : root;
        if (!pch_cj__has_input_ext(base))
            return pch_error_set(err, PCH_EINVAL, "input %s: not a .json, .jsonl or .ndjson file", root);
        if (!pch_cj__valid_utf8((const uint8_t *)base, strlen(base)))
            return pch_error_set(err, PCH_EINVAL, "input %s: file name is not valid utf-8", root);
        int rc = add_file(out, base, root, (uint64_t)st.st_size, err);
        if (rc < 0) pch_cj__filelist_dispose(out);
        return rc;
    }
    if (!S_ISDIR(st.st_mode))
        return pch_error_set(err, PCH_EINVAL, "input %s: not a regular file or directory (symlinks are not followed)", root);
    pch_buf abs, rel;
    pch_buf_init(&abs, ctx);
    pch_buf_init(&rel, ctx);
    int rc = PCH_OK;
    if (pch_buf_append_str(&abs, root) < 0 || pch_buf_reserve(&rel, 256) < 0) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory walking %s", root);
        goto done;
    }
    rel.data[0] = 0;
    rc = walk_dir(out, &abs, &rel, skip_dev, skip_ino, 0, err);
    if (rc == PCH_OK && out->n > 1) qsort(out->v, out->n, sizeof *out->v, cmp_rel);
done:
    pch_buf_dispose(&abs);
    pch_buf_dispose(&rel);
    if (rc < 0) pch_cj__filelist_dispose(out);
    return rc;
}

void pch_cj__filelist_dispose(pch_cj_filelist *l)
{
    if (!l || !l->ctx) return;
    for (size_t i = 0; i < l->n; i++) {
        pch_free(l->ctx, l->v[i].rel);
        pch_free(l->ctx, l->v[i].abs);
    }
    pch_free(l->ctx, l->v);
    pch_ctx *ctx = l->ctx;
    memset(l, 0, sizeof *l);
    l->ctx = ctx;
}
