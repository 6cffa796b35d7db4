/* POSIX file helpers and atomic publish (ARCHITECTURE.md §8, STYLE.md §8; libgit2
** git_filebuf_commit). A publish writes "<dir>/.<name>.tmp-<pid>-<rand>" (never ending in
** ".manifest", lance-format.md §1.7), fsyncs it, then renames it over the target (replace)
** or hard-links it to the target (create-if-absent: EEXIST means another writer won), and
** fsyncs the parent directory. On any failure the staging file is removed and the target
** is untouched. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

int pch_file_read_all(pch_buf *out, const char *path, size_t max, pch_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pch_error_set_sys(err, errno == ENOENT ? PCH_ENOTFOUND : PCH_EIO, errno,
                                 "open %s", path);
    struct stat st;
    int rc = PCH_OK;
    if (fstat(fd, &st) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "stat %s", path); goto done; }
    if ((uint64_t)st.st_size > max) {
        rc = pch_error_set(err, PCH_ELIMIT, "%s: %lld bytes exceeds the limit of %zu", path,
                           (long long)st.st_size, max);
        goto done;
    }
    if ((rc = pch_buf_reserve(out, (size_t)st.st_size)) < 0) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory reading %s", path);
        goto done;
    }
    for (;;) {
        if (out->len == out->cap - 1 && (rc = pch_buf_reserve(out, 65536)) < 0) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory reading %s", path);
            goto done;
        }
        ssize_t n = read(fd, out->data + out->len, out->cap - 1 - out->len);
        if (n < 0) {
            if (errno == EINTR) continue;
            rc = pch_error_set_sys(err, PCH_EIO, errno, "read %s", path);
            goto done;
        }
        if (n == 0) break;
        out->len += (size_t)n;
        if (out->len > max) {
            rc = pch_error_set(err, PCH_ELIMIT, "%s: exceeds the limit of %zu bytes", path, max);
            goto done;
        }
    }
    out->data[out->len] = 0;
done:
    close(fd);
    return rc;
}

int pch_write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = pch_fault("write") ? -1 : write(fd, p, len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int split_path(const char *path, char *dir, size_t dir_cap, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dir_cap, ".");
        *base = path;
    } else if (slash == path) {
        snprintf(dir, dir_cap, "/");
        *base = slash + 1;
    } else {
        if ((size_t)(slash - path) >= dir_cap) return -1;
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        *base = slash + 1;
    }
    return 0;
}

int pch_fsync_dir(const char *dir, pch_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "open directory %s", dir);
    int rc = PCH_OK;
    if (pch_fault("fsync") || (fsync(fd) != 0 && errno != EINVAL))
        rc = pch_error_set_sys(err, PCH_EIO, errno, "fsync directory %s", dir);
    close(fd);
    return rc;
}

int pch_check_replaceable(const char *path, pch_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return pch_error_set(err, PCH_EINVAL, "%s exists and is not a regular file: it is not replaced", path);
    return PCH_OK;
}

static int publish(const char *path, const void *data, size_t len, bool exclusive,
                   pch_error *err)
{
    char *dir = malloc(PATH_MAX), *tmp = malloc(PATH_MAX);
    const char *base;
    int rc = PCH_OK, fd = -1;
    bool staged = false;
    if (!dir || !tmp) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto done; }
    if ((rc = pch_check_replaceable(path, err)) < 0) goto done;
    if (split_path(path, dir, PATH_MAX, &base) != 0 || !*base) {
        rc = pch_error_set(err, PCH_EINVAL, "bad path %s", path);
        goto done;
    }
    uint32_t r;
    if ((rc = pch_random_bytes(&r, sizeof r, err)) < 0) goto done;
    if (snprintf(tmp, PATH_MAX, "%s/.%s.tmp-%ld-%08x", dir, base, (long)getpid(), r) >= PATH_MAX) {
        rc = pch_error_set(err, PCH_EINVAL, "path too long: %s", path);
        goto done;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "create %s", tmp); goto done; }
    staged = true;
    if (pch_write_all(fd, data, len) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "write %s", tmp); goto done; }
    if (pch_fault("fsync") || fsync(fd) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "fsync %s", tmp); goto done; }
    if (close(fd) != 0) { fd = -1; rc = pch_error_set_sys(err, PCH_EIO, errno, "close %s", tmp); goto done; }
    fd = -1;
    if (exclusive) {
        if (pch_fault("link") || link(tmp, path) != 0) {
            if (errno == EEXIST) rc = pch_error_set(err, PCH_EEXISTS, "%s already exists", path);
            else rc = pch_error_set_sys(err, PCH_EIO, errno, "link %s", path);
            goto done;
        }
        unlink(tmp);
        staged = false;
    } else {
        if (pch_fault("rename") || rename(tmp, path) != 0) { rc = pch_error_set_sys(err, PCH_EIO, errno, "rename to %s", path); goto done; }
        staged = false;
    }
    rc = pch_fsync_dir(dir, err);
done:
    if (fd >= 0) close(fd);
    if (staged) unlink(tmp);
    free(dir);
    free(tmp);
    return rc;
}

int pch_file_publish(const char *path, const void *data, size_t len, pch_error *err)
{
    return publish(path, data, len, false, err);
}

int pch_file_publish_new(const char *path, const void *data, size_t len, pch_error *err)
{
    return publish(path, data, len, true, err);
}

/* mkdir -p: the directory itself first (usually its parent exists), then, on ENOENT, its
** parents from the deepest existing one down; so a tree of N files written in path order
** costs about one mkdir per new directory, not one per path component and file. */
int pch_mkdirs(const char *path, pch_error *err)
{
    struct stat st;
    size_t n = strlen(path);
    char *p;
    int rc = PCH_OK;
    if (mkdir(path, 0755) == 0) return PCH_OK;
    if (errno == EEXIST) {
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return pch_error_set(err, PCH_EIO, "%s is not a directory", path);
        return PCH_OK;
    }
    if (errno != ENOENT || n == 0) return pch_error_set_sys(err, PCH_EIO, errno, "mkdir %s", path);
    if (!(p = malloc(n + 1))) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    memcpy(p, path, n + 1);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    {
        char *slash = strrchr(p, '/');
        if (slash && slash != p) {
            *slash = '\0';
            rc = pch_mkdirs(p, err);
            *slash = '/';
        }
    }
    if (rc == PCH_OK && mkdir(p, 0755) != 0 && errno != EEXIST) rc = pch_error_set_sys(err, PCH_EIO, errno, "mkdir %s", p);
    if (rc == PCH_OK && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) rc = pch_error_set(err, PCH_EIO, "%s is not a directory", path);
    free(p);
    return rc;
}

int pch_remove_tree(const char *path, pch_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return PCH_OK;
        return pch_error_set_sys(err, PCH_EIO, errno, "stat %s", path);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) != 0 && errno != ENOENT)
            return pch_error_set_sys(err, PCH_EIO, errno, "unlink %s", path);
        return PCH_OK;
    }
    DIR *d = opendir(path);
    if (!d) return pch_error_set_sys(err, PCH_EIO, errno, "opendir %s", path);
    struct dirent *e;
    int rc = PCH_OK;
    pch_buf sub;
    pch_buf_init(&sub, NULL);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (pch_path_join(&sub, path, e->d_name) < 0) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); break; }
        if ((rc = pch_remove_tree((const char *)sub.data, err)) < 0) break;
    }
    closedir(d);
    pch_buf_dispose(&sub);
    if (rc == PCH_OK && rmdir(path) != 0 && errno != ENOENT)
        rc = pch_error_set_sys(err, PCH_EIO, errno, "rmdir %s", path);
    return rc;
}

int pch_path_join(pch_buf *out, const char *a, const char *b)
{
    pch_buf_clear(out);
    PCH_TRY(pch_buf_append_str(out, a));
    if (out->len && out->data[out->len - 1] != '/') PCH_TRY(pch_buf_putc(out, '/'));
    return pch_buf_append_str(out, b);
}

int pch_random_bytes(void *out, size_t n, pch_error *err)
{
    uint8_t *p = out;
    while (n) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return pch_error_set_sys(err, PCH_EIO, errno, "getrandom");
        }
        p += r;
        n -= (size_t)r;
    }
    return PCH_OK;
}
