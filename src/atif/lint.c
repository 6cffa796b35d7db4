/* `pchronicle validate --input-format atif`: a linter over files and directories
** (specs/atif.md §3). Directories are walked recursively in byte order of names, only
** regular *.json files are read, symbolic links are not followed (input-root confinement,
** RFC-0006 §16.2). One output line per finding; I/O failures are findings too. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "atif/atif.h"
#include "json/json.h"

typedef struct lint_state {
    pch_ctx *ctx;
    const pch_atif_lint_options *opts;
    FILE *out;
    size_t n_err;
    int io_fail;
    pch_buf line;
} lint_state;

static int on_finding(const pch_atif_finding *f, void *payload)
{
    lint_state *ls = payload;
    pch_buf *b = &ls->line;
    pch_buf_clear(b);
    if (f->severity == PCH_ATIF_ERROR) ls->n_err++;
    if (ls->opts->json) {
        pch_buf_append_str(b, "{\"file\":");
        pch_json__write_string(b, f->file, strlen(f->file));
        pch_buf_append_str(b, ",\"pointer\":");
        pch_json__write_string(b, f->pointer, strlen(f->pointer));
        pch_buf_append_str(b, f->severity == PCH_ATIF_ERROR ? ",\"severity\":\"error\",\"code\":"
                                                            : ",\"severity\":\"warning\",\"code\":");
        pch_json__write_string(b, f->code, strlen(f->code));
        pch_buf_append_str(b, ",\"message\":");
        if (pch_json__write_string(b, f->message, strlen(f->message)) < 0)
            pch_buf_append_str(b, "\"(message not UTF-8)\"");
        pch_buf_append_str(b, "}\n");
    } else {
        pch_buf_printf(b, "%s:%s%s %s%s\n", f->file, f->pointer, f->pointer[0] ? ":" : "",
                       f->severity == PCH_ATIF_WARNING ? "warning: " : "", f->message);
    }
    if (b->oom) return 1;
    if (fwrite(b->data, 1, b->len, ls->out) != b->len) { ls->io_fail = 1; return 1; }
    return 0;
}

static void io_finding(lint_state *ls, const char *file, const char *msg)
{
    pch_atif_finding f = { PCH_ATIF_ERROR, "io", file, "", msg };
    on_finding(&f, ls);
}

static int lint_file(lint_state *ls, const char *path)
{
    pch_buf data;
    pch_error e;
    pch_atif_options o = PCH_ATIF_OPTIONS_INIT;
    int rc;
    o.strict = ls->opts->strict;
    pch_buf_init(&data, ls->ctx);
    pch_error_clear(&e);
    rc = pch_file_read_all(&data, path, pch_ctx_limits(ls->ctx)->max_line_bytes, &e);
    if (rc < 0) {
        io_finding(ls, path, e.msg);
        pch_buf_dispose(&data);
        return rc == PCH_ENOMEM ? rc : PCH_OK;
    }
    rc = pch_atif_validate(ls->ctx, data.data ? (const char *)data.data : "", data.len, path, &o,
                           on_finding, ls, NULL, NULL, &e);
    pch_buf_dispose(&data);
    if (rc == PCH_ECANCELED && !ls->io_fail) rc = PCH_ENOMEM;
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with_json(const char *n)
{
    size_t l = strlen(n);
    return l > 5 && strcmp(n + l - 5, ".json") == 0;
}

/* dir's entries in byte order of names (hidden ones skipped), and dir open for fstatat */
static int list_dir(pch_ctx *ctx, const char *dir, DIR **dp, char ***out, size_t *n_out, pch_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    *dp = NULL;
    *out = NULL;
    *n_out = 0;
    if (!d) return pch_error_set_sys(err, PCH_EIO, errno, "open directory %s", dir);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;   /* ".", "..", hidden and staging files */
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            char **nn = pch_realloc(ctx, names, nc * sizeof(*names));
            if (!nn) goto oom;
            names = nn;
            cap = nc;
        }
        if (!(names[n] = pch_malloc(ctx, strlen(de->d_name) + 1))) goto oom;
        strcpy(names[n], de->d_name);
        n++;
    }
    if (n > 1) qsort(names, n, sizeof(*names), cmp_str);
    *dp = d;
    *out = names;
    *n_out = n;
    return PCH_OK;
oom:
    for (size_t i = 0; i < n; i++) pch_free(ctx, names[i]);
    pch_free(ctx, names);
    closedir(d);
    return pch_error_set(err, PCH_ENOMEM, "out of memory");
}

static void list_free(pch_ctx *ctx, DIR *d, char **names, size_t n)
{
    for (size_t i = 0; i < n; i++) pch_free(ctx, names[i]);
    pch_free(ctx, names);
    if (d) closedir(d);
}

/* Entries [from, to) of a listing, subdirectories whole. */
static int walk_entries(pch_ctx *ctx, const char *dir, DIR *d, char **names, size_t from, size_t to,
                        int (*cb)(const char *path, const struct stat *st, void *payload), void *payload, pch_error *err)
{
    int rc = PCH_OK;
    pch_buf path;
    pch_buf_init(&path, ctx);
    for (size_t i = from; i < to && rc == PCH_OK; i++) {
        struct stat st;
        if (pch_path_join(&path, dir, names[i]) < 0) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); break; }
        /* relative to the open directory: no path walk per file (a sync stats every file) */
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) rc = pch_atif__walk(ctx, (const char *)path.data, cb, payload, err);
        else if (S_ISREG(st.st_mode) && ends_with_json(names[i])) rc = cb((const char *)path.data, &st, payload);
    }
    pch_buf_dispose(&path);
    return rc;
}

int pch_atif__walk(pch_ctx *ctx, const char *dir, int (*cb)(const char *path, const struct stat *st, void *payload),
                   void *payload, pch_error *err)
{
    DIR *d;
    char **names;
    size_t n;
    int rc;
    PCH_TRY(list_dir(ctx, dir, &d, &names, &n, err));
    rc = walk_entries(ctx, dir, d, names, 0, n, cb, payload, err);
    list_free(ctx, d, names, n);
    return rc;
}

typedef struct walk_half {
    pch_ctx *ctx;
    const char *dir;
    DIR *d;
    char **names;
    size_t from, to;
    int (*cb)(const char *path, const struct stat *st, void *payload);
    void *payload;
    pch_error *err;
    int rc;
} walk_half;

static void *walk_half_main(void *arg)
{
    walk_half *h = arg;
    h->rc = walk_entries(h->ctx, h->dir, h->d, h->names, h->from, h->to, h->cb, h->payload, h->err);
    return NULL;
}

int pch_atif__walk2(pch_ctx *ctx, const char *dir, int (*cb)(const char *path, const struct stat *st, void *payload),
                    void *payload0, void *payload1, pch_error *err0, pch_error *err1)
{
    DIR *d;
    char **names;
    size_t n;
    walk_half h;
    pthread_t th;
    int rc;
    PCH_TRY(list_dir(ctx, dir, &d, &names, &n, err0));
    if (n == 1) {   /* one subdirectory (an input under one folder): split below it */
        struct stat st;
        pch_buf sub;
        pch_buf_init(&sub, ctx);
        if (fstatat(dirfd(d), names[0], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
            rc = pch_path_join(&sub, dir, names[0]) < 0 ? pch_error_set(err0, PCH_ENOMEM, "out of memory")
                                                       : pch_atif__walk2(ctx, (const char *)sub.data, cb, payload0, payload1, err0, err1);
            pch_buf_dispose(&sub);
            list_free(ctx, d, names, n);
            return rc;
        }
        pch_buf_dispose(&sub);
    }
    h = (walk_half){ ctx, dir, d, names, n / 2, n, cb, payload1, err1, PCH_OK };
    if (n < 2 || pthread_create(&th, NULL, walk_half_main, &h) != 0) {
        rc = walk_entries(ctx, dir, d, names, 0, n, cb, payload0, err0);   /* all of it here */
    } else {
        rc = walk_entries(ctx, dir, d, names, 0, n / 2, cb, payload0, err0);
        pthread_join(th, NULL);
        if (rc == PCH_OK && h.rc < 0) {
            *err0 = *err1;
            rc = h.rc;
        }
    }
    list_free(ctx, d, names, n);
    return rc;
}

static int walk_cb(const char *path, const struct stat *st, void *payload)
{
    (void)st;
    return lint_file(payload, path);
}

int pch_atif_lint(pch_ctx *ctx, const char *const *paths, size_t n_paths,
                  const pch_atif_lint_options *opts, FILE *out, size_t *n_errors_out,
                  pch_error *err)
{
    lint_state ls;
    pch_atif_lint_options def = PCH_ATIF_LINT_OPTIONS_INIT;
    int rc = PCH_OK;
    memset(&ls, 0, sizeof ls);
    ls.ctx = ctx;
    ls.opts = opts ? opts : &def;
    ls.out = out;
    pch_buf_init(&ls.line, ctx);
    for (size_t i = 0; i < n_paths && rc == PCH_OK; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            char m[160];
            snprintf(m, sizeof m, "cannot open: %s", strerror(errno));
            io_finding(&ls, paths[i], m);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            pch_error e;
            pch_error_clear(&e);
            rc = pch_atif__walk(ctx, paths[i], walk_cb, &ls, &e);
            if (rc == PCH_EIO) { io_finding(&ls, paths[i], e.msg); rc = PCH_OK; }
            else if (rc < 0) pch_error_set(err, rc, "%s", e.msg);
        } else {
            rc = lint_file(&ls, paths[i]);
            if (rc < 0) pch_error_set(err, rc, "atif lint: out of memory");
        }
    }
    pch_buf_dispose(&ls.line);
    if (n_errors_out) *n_errors_out = ls.n_err;
    if (ls.io_fail) return pch_error_set(err, PCH_EIO, "atif lint: writing output failed");
    return rc;
}
