/* RFC-0014 "Import": "本地 CLI 发布 MUST 通过同父目录 staging 后原子替换". A snapshot is
** written into "<parent>/.<base>.staging-<hex>", synced (one syncfs), and published with one rename:
** renameat2(RENAME_NOREPLACE) when the target is absent, renameat2(RENAME_EXCHANGE) to
** replace (the old tree then sits under the hidden staging name and is removed). A crash
** at any moment leaves either the old or the new complete tree at the target; stale
** hidden staging trees are removed by the next writer. Writers of one parent directory
** are serialised with flock() on that directory. An s3:// target (docs/object-storage.md)
** stages in a local temporary directory and is published by the Lance writer's commit;
** the offload objects are uploaded before it. Depends on src/core and src/io. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compact_jsonl/cj_int.h"
#include "pchronicle/io.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* One durability barrier for a whole staged tree: syncfs() writes back every dirty page and
** inode of the file system holding it, and (Linux >= 5.8) reports any writeback error that
** happened since this descriptor was opened. Per-file fsync cost one syscall and one journal
** commit per file and directory (3,327 for a 2,791-file export); the rename that publishes
** the tree comes after this barrier, so a crash still leaves the old or the new tree. */
int pch_cj__sync_tree(const char *path, pch_error *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = PCH_OK;
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "open directory %s", path);
    if (syncfs(fd) != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "syncfs %s", path);
    close(fd);
    return rc;
}

int pch_cj__clean_stale(const char *parent, const char *base, pch_error *err)
{
    DIR *d = opendir(parent);
    if (!d) return pch_error_set_sys(err, PCH_EIO, errno, "open directory %s", parent);
    pch_buf prefix, child;
    pch_buf_init(&prefix, NULL);
    pch_buf_init(&child, NULL);
    int rc = PCH_OK;
    if (pch_buf_printf(&prefix, ".%s.staging-", base) < 0) {
        rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
        goto done;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, (const char *)prefix.data, prefix.len) != 0) continue;
        pch_buf_clear(&child);
        if (pch_path_join(&child, parent, de->d_name) < 0) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
            goto done;
        }
        if ((rc = pch_remove_tree((const char *)child.data, err)) < 0) goto done;
    }
done:
    closedir(d);
    pch_buf_dispose(&prefix);
    pch_buf_dispose(&child);
    return rc;
}

int pch_cj__stage_begin(pch_cj_stage *st, pch_ctx *ctx, const char *target,
                        pch_cj_publish_mode mode, pch_error *err)
{
    memset(st, 0, sizeof *st);
    st->lock_fd = -1;
    st->ctx = ctx;
    st->mode = mode;
    pch_buf_init(&st->target, ctx);
    pch_buf_init(&st->parent, ctx);
    pch_buf_init(&st->base, ctx);
    pch_buf_init(&st->staging, ctx);
    size_t n = strlen(target);
    while (n > 1 && target[n - 1] == '/') n--;
    if (n == 0) return pch_error_set(err, PCH_EINVAL, "empty target path");
    if (pch_buf_append(&st->target, target, n) < 0) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if (pch_store_is_s3(target)) {
        /* object storage: no rename publishes a tree there; the Lance writer commits a new
        ** version by create-if-absent (a replacement is Lance's overwrite: a version with
        ** only the new fragments, readers of the old version keep reading it) */
        const char *tmp = getenv("TMPDIR");
        st->remote = true;
        if (pch_buf_printf(&st->staging, "%s/pch-cj-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
            return pch_error_set(err, PCH_ENOMEM, "out of memory");
        if (!mkdtemp((char *)st->staging.data))
            return pch_error_set_sys(err, PCH_EIO, errno, "create staging directory %s", (const char *)st->staging.data);
        return PCH_OK;
    }
    const char *t = (const char *)st->target.data;
    const char *slash = strrchr(t, '/');
    int rc;
    if (!slash) {
        rc = pch_buf_append_str(&st->parent, ".") | pch_buf_append_str(&st->base, t);
    } else {
        size_t plen = slash == t ? 1 : (size_t)(slash - t);
        rc = pch_buf_append(&st->parent, t, plen) | pch_buf_append_str(&st->base, slash + 1);
    }
    if (rc < 0) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    const char *base = (const char *)st->base.data;
    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || base[0] == '\0')
        return pch_error_set(err, PCH_EINVAL, "target %s: not a usable directory name", t);
    const char *parent = (const char *)st->parent.data;
    st->lock_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (st->lock_fd < 0)
        return pch_error_set_sys(err, PCH_EIO, errno, "target parent directory %s", parent);
    if (flock(st->lock_fd, LOCK_EX | LOCK_NB) != 0)
        return pch_error_set_sys(err, PCH_EIO, errno,
                                 "%s: another pchronicle writer holds the directory lock", parent);
    PCH_TRY(pch_cj__clean_stale(parent, base, err));
    struct stat sb;
    if (lstat(t, &sb) == 0) {
        if (mode == PCH_CJ_CREATE)
            return pch_error_set(err, PCH_EEXISTS, "%s already exists (replace it with --yes / --overwrite)", t);
        if (!S_ISDIR(sb.st_mode))
            return pch_error_set(err, PCH_EINVAL, "%s exists and is not a directory; refusing to replace it", t);
        st->target_exists = true;
        st->target_dev = sb.st_dev;
        st->target_ino = sb.st_ino;
    } else if (errno != ENOENT) {
        return pch_error_set_sys(err, PCH_EIO, errno, "stat %s", t);
    }
    uint8_t rnd[8];
    char hex[17];
    PCH_TRY(pch_random_bytes(rnd, sizeof rnd, err));
    pch_hex_encode(hex, rnd, sizeof rnd);
    if (pch_buf_printf(&st->staging, "%s/.%s.staging-%s", parent, base, hex) < 0)
        return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if (mkdir((const char *)st->staging.data, 0755) != 0)
        return pch_error_set_sys(err, PCH_EIO, errno, "create staging directory %s", (const char *)st->staging.data);
    return PCH_OK;
}

/* Upload every file under staging/<rel> as <rel>/... of the target, whole. */
static int upload_tree(pch_cj_stage *st, pch_store *to, pch_buf *rel, pch_error *err)
{
    pch_buf abs;
    DIR *d;
    struct dirent *de;
    size_t base = rel->len;
    int rc = PCH_OK;
    pch_buf_init(&abs, st->ctx);
    if (pch_path_join(&abs, (const char *)st->staging.data, (const char *)rel->data) < 0) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    d = opendir((const char *)abs.data);
    if (!d) {
        rc = errno == ENOENT ? PCH_OK : pch_error_set_sys(err, PCH_EIO, errno, "open directory %s", (const char *)abs.data);
        pch_buf_dispose(&abs);
        return rc;
    }
    while (rc == PCH_OK && (de = readdir(d)) != NULL) {
        struct stat sb;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        rel->len = base;
        pch_buf_clear(&abs);
        if (pch_buf_printf(rel, "/%s", de->d_name) < 0 ||
            pch_path_join(&abs, (const char *)st->staging.data, (const char *)rel->data) < 0) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory");
            break;
        }
        if (lstat((const char *)abs.data, &sb) != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "stat %s", (const char *)abs.data);
        else if (S_ISDIR(sb.st_mode)) rc = upload_tree(st, to, rel, err);
        else if ((rc = pch_store_put_file(to, (const char *)rel->data, (const char *)abs.data, 0, err)) < 0)
            pch_error_prefix(err, "upload %s", (const char *)rel->data);
    }
    rel->len = base;
    if (rel->data) rel->data[base] = 0;
    closedir(d);
    pch_buf_dispose(&abs);
    return rc;
}

int pch_cj__stage_upload(pch_cj_stage *st, const char *dir, pch_error *err)
{
    pch_store *to = NULL;
    pch_buf rel;
    int rc;
    if (!st->remote) return PCH_OK;
    pch_buf_init(&rel, st->ctx);
    if (pch_buf_append_str(&rel, dir) < 0) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    if ((rc = pch_store_open(st->ctx, (const char *)st->target.data, NULL, &to, err)) == PCH_OK) rc = upload_tree(st, to, &rel, err);
    pch_store_close(to);
    pch_buf_dispose(&rel);
    return rc;
}

int pch_cj__stage_publish(pch_cj_stage *st, pch_error *err)
{
    const char *stg = (const char *)st->staging.data, *t = (const char *)st->target.data;
    if (st->remote) return PCH_OK;    /* the Lance writer's commit published it */
    PCH_TRY(pch_cj__sync_tree(stg, err));
    struct stat sb;
    bool exists = lstat(t, &sb) == 0;
    if (exists && st->mode == PCH_CJ_CREATE)
        return pch_error_set(err, PCH_EEXISTS, "%s appeared while writing; not replaced", t);
    if (!exists) {
        if (renameat2(AT_FDCWD, stg, AT_FDCWD, t, RENAME_NOREPLACE) != 0)
            return pch_error_set_sys(err, errno == EEXIST ? PCH_EEXISTS : PCH_EIO, errno,
                                     "publish %s", t);
    } else {
        if (!S_ISDIR(sb.st_mode))
            return pch_error_set(err, PCH_EINVAL, "%s is not a directory; refusing to replace it", t);
        if (renameat2(AT_FDCWD, stg, AT_FDCWD, t, RENAME_EXCHANGE) != 0)
            return pch_error_set_sys(err, PCH_EIO, errno, "publish %s (atomic exchange)", t);
    }
    PCH_TRY(pch_fsync_dir((const char *)st->parent.data, err));
    /* the old tree (replace) now sits under the staging name; removed by stage_end */
    return PCH_OK;
}

void pch_cj__stage_end(pch_cj_stage *st)
{
    if (!st || !st->ctx) return;
    if (st->staging.len) {
        pch_remove_tree((const char *)st->staging.data, NULL);
        if (!st->remote) pch_fsync_dir((const char *)st->parent.data, NULL);
    }
    if (st->lock_fd >= 0) close(st->lock_fd);
    st->lock_fd = -1;
    pch_buf_dispose(&st->target);
    pch_buf_dispose(&st->parent);
    pch_buf_dispose(&st->base);
    pch_buf_dispose(&st->staging);
    st->ctx = NULL;
}
