/* Staging directories (RFC-0006 §11.5, §15): a writer works under staging/<writer-id>/ and
** publishes by renaming out of it, so what stays there is unpublished scratch. A writer
** killed before it removes its own (SIGKILL, power loss) leaves it behind; nothing else
** refers to it, and the next writer removes it.
**
** Which directories are abandoned is decided by locks, never by age: each writer holds an
** exclusive flock(2) on its own directory for as long as it lives, and the kernel drops it
** when the process dies, however it dies. A directory whose lock can be taken belongs to no
** live writer. staging/.lock orders creation against the sweep: a writer makes and locks
** its directory under a shared lock, the sweep runs under an exclusive one, so it never
** finds a directory between its mkdir and its flock. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "projection/pj_int.h"

static _Thread_local uint64_t tree_bytes;
static int add_bytes(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path; (void)ftw;
    if (flag == FTW_F) tree_bytes += (uint64_t)st->st_size;
    return 0;
}

static int gate_open(pch_buf *p, const char *root, pch_error *err)
{
    int fd;
    pch_buf_clear(p);
    pch_buf_printf(p, "%s/staging/.lock", root);
    if (p->oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    fd = open((const char *)p->data, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "open %s", (const char *)p->data);
    return fd;
}

/* Remove (or, remove false, only count) every directory under staging/ that no live writer
** holds. */
static int sweep(pch_buf *p, const char *root, const char *own, bool remove, pj_stage_stats *st, pch_error *err)
{
    DIR *d;
    struct dirent *de;
    size_t base;
    pch_buf_clear(p);
    pch_buf_printf(p, "%s/staging/", root);
    if (p->oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    base = p->len;
    if (!(d = opendir((const char *)p->data))) return pch_error_set_sys(err, PCH_EIO, errno, "open %s", (const char *)p->data);
    while ((de = readdir(d))) {
        int fd;
        if (de->d_name[0] == '.' || strcmp(de->d_name, own) == 0) continue;   /* locks, ., .., ours */
        p->len = base;
        pch_buf_append_str(p, de->d_name);
        pch_buf_putc(p, 0);
        if (p->oom) { closedir(d); return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }
        fd = open((const char *)p->data, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;                                  /* not a directory */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            tree_bytes = 0;
            nftw((const char *)p->data, add_bytes, 16, FTW_PHYS);
            if (!remove || pch_remove_tree((const char *)p->data, NULL) == PCH_OK) {
                st->removed++;
                st->removed_bytes += tree_bytes;
            }
        }
        close(fd);
    }
    closedir(d);
    return PCH_OK;
}

int pj_stage_open(pch_ctx *ctx, const char *root, const char *stage, const char *writer_id, int *fd_out,
                  pj_stage_stats *st, pch_error *err)
{
    pch_buf p;
    int gate, fd = -1, rc;
    *fd_out = -1;
    memset(st, 0, sizeof *st);
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/staging", root);
    if (p.oom) { pch_buf_dispose(&p); return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }
    if ((rc = pch_mkdirs((const char *)p.data, err)) < 0 || (rc = gate = gate_open(&p, root, err)) < 0) {
        pch_buf_dispose(&p);
        return rc;
    }
    /* our directory, made and locked under the shared lock */
    if (flock(gate, LOCK_SH) != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "lock %s", (const char *)p.data);
    else if (mkdir(stage, 0755) != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "create %s", stage);
    else if ((fd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0)
        rc = pch_error_set_sys(err, PCH_EIO, errno, "lock %s", stage);
    else rc = PCH_OK;
    flock(gate, LOCK_UN);
    /* then everyone else's that no live writer holds */
    if (rc == PCH_OK) {
        if (flock(gate, LOCK_EX) != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "lock %s/staging/.lock", root);
        else rc = sweep(&p, root, writer_id, true, st, err);
        flock(gate, LOCK_UN);
    }
    close(gate);
    pch_buf_dispose(&p);
    if (rc < 0) {
        if (fd >= 0) close(fd);
        return rc;
    }
    *fd_out = fd;
    return PCH_OK;
}

void pj_stage_close(pch_ctx *ctx, const char *root, const char *stage, int fd, bool remove_gate)
{
    pch_buf p;
    if (stage) pch_remove_tree(stage, NULL);     /* unpublished work only, still locked */
    if (fd >= 0) close(fd);
    if (!remove_gate) return;
    /* a first build that failed leaves no root behind: the gate, then staging/ if empty */
    pch_buf_init(&p, ctx);
    pch_buf_printf(&p, "%s/staging/.lock", root);
    if (!p.oom) unlink((const char *)p.data);
    if (!p.oom && p.len > 6) { p.data[p.len - 6] = 0; rmdir((const char *)p.data); }
    pch_buf_dispose(&p);
}

int pj_stage_sweep(pch_ctx *ctx, const char *root, pj_stage_stats *st, pch_error *err)
{
    pch_buf p;
    int gate, rc;
    memset(st, 0, sizeof *st);
    pch_buf_init(&p, ctx);
    if ((rc = gate = gate_open(&p, root, err)) >= 0) {
        if (flock(gate, LOCK_EX) != 0) rc = pch_error_set_sys(err, PCH_EIO, errno, "lock %s", (const char *)p.data);
        else rc = sweep(&p, root, "", true, st, err);
        close(gate);
    }
    pch_buf_dispose(&p);
    return rc;
}

int pj_stage_count(pch_ctx *ctx, const char *root, pj_stage_stats *st)
{
    pch_buf p;
    pch_error e;
    int rc;
    memset(st, 0, sizeof *st);
    pch_buf_init(&p, ctx);
    rc = sweep(&p, root, "", false, st, &e);       /* read-only: no gate (a report, not a decision) */
    pch_buf_dispose(&p);
    return rc == PCH_EIO ? PCH_OK : rc;            /* no staging/: nothing abandoned */
}
