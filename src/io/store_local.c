/* The local-directory backend of include/pchronicle/io.h: a key is a path under the root.
** Puts are atomic publishes (temporary file, fsync, rename; create-if-absent by link(2):
** src/core/file.c), so a reader sees a whole object or none, as on S3. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_int.h"

static int key_path(pch_store *st, const char *key, pch_buf *out, pch_error *err)
{
    if (pch_path_join(out, st->root, key) < 0) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    return PCH_OK;
}

static void fill_info(pch_object_info *info, const struct stat *sb)
{
    if (!info) return;
    info->size = (uint64_t)sb->st_size;
    info->mtime_ms = (int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000;
    snprintf(info->etag, sizeof info->etag, "%llx-%llx", (unsigned long long)sb->st_size,
             (unsigned long long)sb->st_mtim.tv_sec * 1000000000ull + (unsigned long long)sb->st_mtim.tv_nsec);
}

static int open_key(pch_store *st, const char *key, struct stat *sb, pch_error *err)
{
    pch_buf p;
    pch_buf_init(&p, st->ctx);
    int rc = key_path(st, key, &p, err);
    if (rc) return rc;
    int fd = open((const char *)p.data, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = errno == ENOENT ? pch_error_set(err, PCH_ENOTFOUND, "%s: no such object", (const char *)p.data)
                             : pch_error_set_sys(err, PCH_EIO, errno, "open %s", (const char *)p.data);
    } else if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
        rc = pch_error_set(err, PCH_EINVAL, "%s is not a regular file", (const char *)p.data);
        close(fd);
    } else {
        rc = fd;
    }
    pch_buf_dispose(&p);
    st->stats.requests++;
    return rc;
}

static int pread_all(int fd, uint8_t *dst, size_t len, uint64_t off, pch_error *err)
{
    while (len) {
        ssize_t r = pread(fd, dst, len, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return pch_error_set_sys(err, PCH_EIO, errno, "read");
        if (r == 0) return pch_error_set(err, PCH_ECORRUPT, "object shorter than expected");
        dst += r; len -= (size_t)r; off += (uint64_t)r;
    }
    return PCH_OK;
}

static int l_get(pch_store *st, const char *key, uint64_t max, uint8_t **data, size_t *len,
                 pch_object_info *info, pch_error *err)
{
    struct stat sb;
    int fd = open_key(st, key, &sb, err), rc;
    if (fd < 0) return fd;
    st->stats.gets++;
    if ((uint64_t)sb.st_size > max) {
        close(fd);
        return pch_error_set(err, PCH_ELIMIT, "object %s is %lld bytes, above the limit of %llu", key,
                             (long long)sb.st_size, (unsigned long long)max);
    }
    size_t n = (size_t)sb.st_size;
    uint8_t *b = pch_malloc(st->ctx, n ? n : 1);
    if (!b) { close(fd); return pch_error_set(err, PCH_ENOMEM, "out of memory"); }
    if ((rc = pread_all(fd, b, n, 0, err)) < 0) { pch_free(st->ctx, b); close(fd); return pch_error_prefix(err, "%s", key); }
    close(fd);
    st->stats.bytes_requested += n;
    *data = b; *len = n;
    fill_info(info, &sb);
    return PCH_OK;
}

static int l_read_spans(pch_store *st, const char *key, const pch_io_span *spans, size_t n_spans,
                        uint8_t **bufs, pch_error *err)
{
    struct stat sb;
    int fd = open_key(st, key, &sb, err), rc = PCH_OK;
    if (fd < 0) return fd;
    for (size_t i = 0; i < n_spans && rc == PCH_OK; i++) {
        if (spans[i].off + spans[i].len > (uint64_t)sb.st_size) {
            rc = pch_error_set(err, PCH_ECORRUPT, "%s: range %llu+%llu is past the object's end (%lld bytes)", key,
                               (unsigned long long)spans[i].off, (unsigned long long)spans[i].len, (long long)sb.st_size);
            break;
        }
        st->stats.gets++;
        st->stats.requests++;
        st->stats.bytes_requested += spans[i].len;
        if ((rc = pread_all(fd, bufs[i], (size_t)spans[i].len, spans[i].off, err)) < 0) pch_error_prefix(err, "%s", key);
    }
    close(fd);
    return rc;
}

static int l_head(pch_store *st, const char *key, pch_object_info *info, pch_error *err)
{
    struct stat sb;
    int fd = open_key(st, key, &sb, err);
    if (fd < 0) return fd;
    close(fd);
    st->stats.heads++;
    fill_info(info, &sb);
    return PCH_OK;
}

static int parent_dirs(pch_buf *path, pch_error *err)
{
    char *s = (char *)path->data, *slash = strrchr(s, '/');
    if (!slash || slash == s) return PCH_OK;
    *slash = '\0';
    int rc = pch_mkdirs(s, err);
    *slash = '/';
    return rc;
}

static int l_put(pch_store *st, const char *key, const void *data, size_t len, unsigned flags, pch_error *err)
{
    pch_buf p;
    pch_buf_init(&p, st->ctx);
    int rc = key_path(st, key, &p, err);
    if (rc == PCH_OK) rc = parent_dirs(&p, err);
    if (rc == PCH_OK) {
        const char *path = (const char *)p.data;
        rc = (flags & PCH_PUT_IF_ABSENT) ? pch_file_publish_new(path, data, len, err)
                                         : pch_file_publish(path, data, len, err);
    }
    st->stats.requests++;
    if (rc == PCH_OK) { st->stats.puts++; st->stats.bytes_written += len; }
    pch_buf_dispose(&p);
    return rc;
}

static int l_put_file(pch_store *st, const char *key, const char *path, unsigned flags, pch_error *err)
{
    void *map;
    size_t n;
    PCH_TRY(pch_io_map_file(path, &map, &n, err));
    int rc = l_put(st, key, n ? map : "", n, flags, err);
    pch_io_unmap(map, n);
    return rc;
}

static int l_del(pch_store *st, const char *key, pch_error *err)
{
    pch_buf p;
    pch_buf_init(&p, st->ctx);
    int rc = key_path(st, key, &p, err);
    if (rc == PCH_OK && unlink((const char *)p.data) != 0 && errno != ENOENT)
        rc = pch_error_set_sys(err, PCH_EIO, errno, "unlink %s", (const char *)p.data);
    st->stats.requests++;
    st->stats.deletes++;
    pch_buf_dispose(&p);
    return rc;
}

typedef struct keylist {
    char **keys;
    size_t n, cap;
} keylist;

static int keys_add(pch_ctx *ctx, keylist *k, const char *s, size_t n)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        char **nk = pch_realloc(ctx, k->keys, cap * sizeof *nk);
        if (!nk) return PCH_ENOMEM;
        k->keys = nk; k->cap = cap;
    }
    if (!(k->keys[k->n] = pch_strndup(ctx, s, n))) return PCH_ENOMEM;
    k->n++;
    return PCH_OK;
}

/* Collect every regular file under dir (rel is its key prefix) whose key starts with prefix. */
static int walk(pch_store *st, pch_buf *dir, size_t rel_off, const char *prefix, keylist *out, pch_error *err)
{
    DIR *d = opendir((const char *)dir->data);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR) return PCH_OK;
        return pch_error_set_sys(err, PCH_EIO, errno, "opendir %s", (const char *)dir->data);
    }
    int rc = PCH_OK;
    size_t base = dir->len;
    struct dirent *e;
    while (rc == PCH_OK && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp-")) continue;   /* a publish in progress */
        dir->len = base;
        if (pch_buf_putc(dir, '/') || pch_buf_append_str(dir, e->d_name)) { rc = PCH_ENOMEM; break; }
        const char *key = (const char *)dir->data + rel_off;
        size_t kl = dir->len - rel_off, pl = strlen(prefix);
        /* descend only where the prefix can still match */
        size_t cmp = kl < pl ? kl : pl;
        if (memcmp(key, prefix, cmp) != 0) continue;
        struct stat sb;
        if (stat((const char *)dir->data, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) rc = walk(st, dir, rel_off, prefix, out, err);
        else if (S_ISREG(sb.st_mode) && kl >= pl) rc = keys_add(st->ctx, out, key, kl) ? PCH_ENOMEM : PCH_OK;
    }
    dir->len = base;
    if (dir->data) dir->data[base] = '\0';
    closedir(d);
    if (rc == PCH_ENOMEM) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    return rc;
}

static int strp_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int l_list(pch_store *st, const char *prefix, int (*cb)(void *arg, const pch_object_info *info),
                  void *arg, pch_error *err)
{
    keylist k = { 0 };
    pch_buf dir;
    pch_buf_init(&dir, st->ctx);
    int rc = pch_buf_append_str(&dir, st->root) ? pch_error_set(err, PCH_ENOMEM, "out of memory") : PCH_OK;
    while (rc == PCH_OK && dir.len > 1 && dir.data[dir.len - 1] == '/') dir.data[--dir.len] = '\0';
    st->stats.requests++;
    st->stats.lists++;
    if (rc == PCH_OK) rc = walk(st, &dir, dir.len + 1, prefix, &k, err);
    if (rc == PCH_OK && k.n > 1) qsort(k.keys, k.n, sizeof *k.keys, strp_cmp);
    for (size_t i = 0; rc == PCH_OK && i < k.n; i++) {
        pch_object_info info = { .key = k.keys[i] };
        pch_buf_clear(&dir);
        if (key_path(st, k.keys[i], &dir, err)) { rc = PCH_ENOMEM; break; }
        struct stat sb;
        if (stat((const char *)dir.data, &sb) != 0) continue;   /* removed meanwhile */
        fill_info(&info, &sb);
        rc = cb(arg, &info);
    }
    for (size_t i = 0; i < k.n; i++) pch_free(st->ctx, k.keys[i]);
    pch_free(st->ctx, k.keys);
    pch_buf_dispose(&dir);
    return rc;
}

static void l_close(pch_store *st) { (void)st; }

static const pch_store_ops local_ops = {
    l_get, l_read_spans, l_head, l_put, l_put_file, l_del, l_list, l_close,
};

int pch_store_local_init(pch_store *st, pch_error *err)
{
    size_t n = strlen(st->uri);
    while (n > 1 && st->uri[n - 1] == '/') n--;
    if (!(st->root = pch_strndup(st->ctx, st->uri, n))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    st->ops = &local_ops;
    return PCH_OK;
}
