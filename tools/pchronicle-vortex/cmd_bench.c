/* pchronicle-vortex benchmark (RFC-0006 §20, §22.2, §22.3): the query matrix of §22.3 on one
** projection root, local or s3://, each query warm (this process: the snapshot or SQL session
** opened once, the query repeated) and cold (a new process of this program per run, as a user
** runs it): p50/p95/p99, CPU, peak RSS, bytes read and decoded, GETs, ranges and bytes on
** object storage. With --storyline, the same point reads and SQL as cold `pchronicle`
** processes on our Storyline Lance tables of the same documents. The peers' columns (official
** Lance, DuckDB/Parquet) and the operations that change a root (sync, compaction, vacuum) are
** make bench-report's (bench/report/README.md). Uses only public headers. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vx_cli.h"
#include "pchronicle/sql.h"
#include "pchronicle-vortex/projection.h"

static const char usage[] =
    "usage: pchronicle-vortex benchmark ROOT [--keys N] [--repeat R] [--cold N] [--storyline SL_ROOT]\n"
    "                                    [--only ID,ID...] [--json FILE] [--quiet]\n"
    "  The RFC-0006 §22.3 query matrix on ROOT (a projection root, local or s3://): exact-key\n"
    "  point reads (full and Preview), run and session candidate lookups, narrow step scans\n"
    "  (by source; a time window by model), tool calls (grouped by function; one function),\n"
    "  content lanes not projected and projected, a content predicate, SFT and RL reads.\n"
    "  Each query warm (this process, opened once, repeated R times over N keys; default 20\n"
    "  keys, R 3) and cold (a new process per run, N runs, default 5): p50/p95/p99 ms, CPU ms,\n"
    "  peak RSS and, from the cold runs' --stats, bytes read and decoded and, on S3, GETs,\n"
    "  ranges and bytes requested (the GETs include CURRENT and the manifest). Keys, the time\n"
    "  window (the middle tenth of the steps' times), the model and the function (the most\n"
    "  frequent) come from the root itself.\n"
    "  --storyline SL_ROOT: the point reads and SQL also as cold `pchronicle` processes on our\n"
    "  Storyline tables of the same documents (local or s3://; their --stats too). --only: those\n"
    "  query ids. --json FILE (- for stdout): every figure as JSON. Sync, compaction and vacuum\n"
    "  change a root and are measured by make bench-report (bench/vortex_sync.sh); the peers\n"
    "  too (bench/report/README.md).\n";

enum { Q_POINT, Q_LOOKUP_RUN, Q_LOOKUP_SESSION, Q_SQL, Q_TRAIN };

typedef struct stat3 { size_t n; double p50, p95, p99; } stat3;

typedef struct bquery {
    const char *id, *what;
    int kind;
    bool preview;
    const char *train;                 /* Q_TRAIN: "sft" or "rl" */
    char sql[2400];                    /* the longest: 84 bytes and a quoted name (at most 1,100) */
    /* results */
    stat3 warm, cold, sl;
    double warm_cpu_ms, cold_cpu_ms, cold_rss_mib, sl_rss_mib;
    /* cold, means per run (-1: not printed); gets, ranges and s3_bytes (bytes requested)
    ** only on object storage; sl_*: the Storyline runs' (`pchronicle --stats`) */
    double bytes_read, bytes_decoded, gets, ranges, s3_bytes;
    double sl_bytes_read, sl_gets, sl_ranges, sl_s3_bytes;
    uint64_t rows;                     /* SQL rows; lookups: candidates of the first key */
} bquery;

typedef struct bkey { char *run, *traj, *session; } bkey;

typedef struct bench {
    pch_ctx *ctx;
    const char *root, *sl_root;
    char self[4096], pchronicle[4200], errf[4096];
    bkey *keys;
    size_t n_keys, n_sess;             /* keys; keys with a session id (first n_sess) */
    uint64_t repeat, cold;
    bool quiet;
    int spawn_fd;                      /* socket to the spawner (cold runs) */
    pch_error err;
} bench;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static stat3 summarize(double *v, size_t n)
{
    stat3 s = { n, 0, 0, 0 };
#define AT(p) v[(size_t)((p) * (double)(n - 1) + 0.5)]
    if (!n) return s;
    qsort(v, n, sizeof *v, cmp_d);
    s.p50 = AT(0.50);
    s.p95 = AT(0.95);
    s.p99 = AT(0.99);
#undef AT
    return s;
}

static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* SQL text with the value v quoted ('' for each '). */
static void sql_quote(char *out, size_t cap, const char *v)
{
    size_t o = 0;
    if (cap < 3) { if (cap) *out = 0; return; }
    out[o++] = '\'';
    for (; *v && o + 3 < cap; v++) {
        if (*v == '\'') out[o++] = '\'';
        out[o++] = *v;
    }
    out[o++] = '\'';
    out[o] = 0;
}

/* Rows of one SQL statement as JSON lines, in memory (the keys, the window, the names). */
static int sql_lines(bench *b, pch_vxp_sql *q, const char *sql, char **text, size_t *len)
{
    FILE *m = open_memstream(text, len);
    int rc;
    if (!m) return pch_error_set(&b->err, PCH_ENOMEM, "out of memory");
    rc = pch_vxp_sql_exec(q, sql, PCH_SQL_JSONL, m, &b->err);
    fclose(m);
    return rc;
}

static char *json_str(const pch_json_value *o, const char *k)
{
    const pch_json_value *v = pch_json_get(o, k, strlen(k));
    char *s;
    if (!v || v->kind != PCH_JSON_STRING || memchr(v->u.str.ptr, 0, v->u.str.len)) return NULL;
    if (!(s = malloc(v->u.str.len + 1))) return NULL;
    memcpy(s, v->u.str.ptr, v->u.str.len);
    s[v->u.str.len] = 0;
    return s;
}

/* The first row's member k as text (numbers as their text); "" when absent or null. */
static void first_value(pch_json_parser *jp, const char *text, const char *k, char *out, size_t cap, pch_error *err)
{
    const pch_json_value *r, *v;
    size_t l = text ? strcspn(text, "\n") : 0;
    *out = 0;
    if (!l || pch_json_parser_parse(jp, text, l, &r, err) < 0 || !(v = pch_json_get(r, k, strlen(k)))) return;
    if (v->kind == PCH_JSON_STRING) snprintf(out, cap, "%.*s", (int)v->u.str.len, v->u.str.ptr);
    else if (v->kind == PCH_JSON_NUMBER) snprintf(out, cap, "%.*s", (int)v->span_len, text + v->span_off);
}

/* Keys (every k-th document root, sessions first), the time window, the model and the function:
** the matrix's parameters, from the root itself. */
static int prepare(bench *b, bquery *qs, size_t nq, size_t want)
{
    pch_vxp_sql *q = NULL;
    pch_json_parser *jp = NULL;
    char *text = NULL, lo[64] = "", hi[64] = "", model[512] = "", fn[512] = "", qm[1100], qf[1100];
    size_t len = 0, n = 0;
    int rc;
    if ((rc = pch_vxp_sql_open(&q, b->root, PCH_VXP_SQL_AUTO, &b->err)) < 0) return rc;
    if ((rc = pch_json_parser_new(&jp, b->ctx, NULL, &b->err)) < 0) goto done;
    if ((rc = sql_lines(b, q, "SELECT run_id, trajectory_key, session_id FROM runs WHERE preorder = 0", &text, &len)) < 0) goto done;
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        n += l > 0;
        p = e ? e + 1 : p + l;
    }
    if (!n) { rc = pch_error_set(&b->err, PCH_EINVAL, "%s has no trajectories to read", b->root); goto done; }
    if (want > n) want = n;
    if (!(b->keys = calloc(want, sizeof *b->keys))) { rc = pch_error_set(&b->err, PCH_ENOMEM, "out of memory"); goto done; }
    {
        size_t i = 0, k = 0;
        for (const char *p = text; *p && k < want;) {
            const char *e = strchr(p, '\n');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            const pch_json_value *r;
            /* row i is taken when it is the next of `want` spread evenly over the n rows */
            if (l && i++ == (size_t)((double)k * (double)n / (double)want)) {
                bkey *kk = &b->keys[k++];
                if ((rc = pch_json_parser_parse(jp, p, l, &r, &b->err)) < 0) goto done;
                kk->run = json_str(r, "run_id");
                kk->traj = json_str(r, "trajectory_key");
                kk->session = json_str(r, "session_id");
                if (!kk->run || !kk->traj) { rc = pch_error_set(&b->err, PCH_EINVAL, "runs: a root without run_id or trajectory_key"); goto done; }
            }
            p = e ? e + 1 : p + l;
        }
        b->n_keys = k;
    }
    for (size_t i = 0; i < b->n_keys; i++)      /* keys with a session id first */
        if (b->keys[i].session) { bkey t = b->keys[b->n_sess]; b->keys[b->n_sess++] = b->keys[i]; b->keys[i] = t; }
    free(text); text = NULL;
    if ((rc = sql_lines(b, q, "SELECT min(timestamp_ms) AS lo, max(timestamp_ms) AS hi FROM steps", &text, &len)) < 0) goto done;
    first_value(jp, text, "lo", lo, sizeof lo, &b->err);
    first_value(jp, text, "hi", hi, sizeof hi, &b->err);
    free(text); text = NULL;
    if ((rc = sql_lines(b, q, "SELECT model_name, count(*) AS n FROM steps WHERE model_name IS NOT NULL GROUP BY model_name ORDER BY n DESC, model_name LIMIT 1", &text, &len)) < 0) goto done;
    first_value(jp, text, "model_name", model, sizeof model, &b->err);
    free(text); text = NULL;
    if ((rc = sql_lines(b, q, "SELECT function_name, count(*) AS n FROM tool_calls GROUP BY function_name ORDER BY n DESC, function_name LIMIT 1", &text, &len)) < 0) goto done;
    first_value(jp, text, "function_name", fn, sizeof fn, &b->err);
    sql_quote(qm, sizeof qm, model);
    sql_quote(qf, sizeof qf, fn);
    for (size_t i = 0; i < nq; i++) {
        bquery *x = &qs[i];
        if (strcmp(x->id, "scan_time_model") == 0) {
            long long a = *lo ? strtoll(lo, NULL, 10) : 0, z = *hi ? strtoll(hi, NULL, 10) : 0, w = (z - a) / 10;
            snprintf(x->sql, sizeof x->sql, "SELECT model_name, count(*) FROM steps WHERE timestamp_ms >= %lld AND timestamp_ms < %lld GROUP BY model_name",
                     a + (z - a) / 2 - w / 2, a + (z - a) / 2 - w / 2 + w + 1);
        } else if (strcmp(x->id, "tool_filter") == 0) {
            snprintf(x->sql, sizeof x->sql, "SELECT count(*) FROM tool_calls WHERE function_name = %s", qf);
        } else if (strcmp(x->id, "content_off") == 0) {
            snprintf(x->sql, sizeof x->sql, "SELECT trajectory_key, step_ordinal, source FROM steps WHERE model_name = %s", qm);
        } else if (strcmp(x->id, "content_on") == 0) {
            snprintf(x->sql, sizeof x->sql, "SELECT trajectory_key, step_ordinal, source, message FROM steps WHERE model_name = %s", qm);
        }
    }
    rc = PCH_OK;
done:
    free(text);
    pch_json_parser_free(jp);
    pch_vxp_sql_close(q);
    return rc;
}

/* ------------------------------------------------------------------ warm: this process */

static int warm_point(bench *b, pch_vxp_snapshot *s, bquery *x, double *lat, size_t *n_lat)
{
    const size_t nk = x->kind == Q_LOOKUP_SESSION ? b->n_sess : b->n_keys;
    for (uint64_t r = 0; r < b->repeat; r++)
        for (size_t k = 0; k < nk; k++) {
            const bkey *kk = &b->keys[k];
            uint64_t idx[64];
            size_t n = 0, len = 0;
            char *doc = NULL;
            double t0 = vx_now_s();
            int rc;
            if (x->kind == Q_POINT) rc = pch_vxp_lookup_in_run(s, kk->run, kk->traj, idx, 64, &n, &b->err);
            else rc = pch_vxp_lookup_as(s, x->kind == Q_LOOKUP_RUN ? PCH_VXP_KEY_RUN : PCH_VXP_KEY_SESSION,
                                        x->kind == Q_LOOKUP_RUN ? kk->run : kk->session, idx, 64, &n, &b->err);
            if (rc < 0) return pch_error_prefix(&b->err, "%s: %s", x->id, kk->traj);
            if (!n) return pch_error_set(&b->err, PCH_ENOTFOUND, "%s: no candidate for %s", x->id, kk->traj);
            if (x->kind == Q_POINT) {
                if (pch_vxp_get(s, idx[0], x->preview ? PCH_VXP_PREVIEW : PCH_VXP_FULL, false, &doc, &len, &b->err) < 0)
                    return pch_error_prefix(&b->err, "%s: %s", x->id, kk->traj);
                pch_free(b->ctx, doc);
            }
            if (r == 0 && k == 0) x->rows = n;
            lat[(*n_lat)++] = (vx_now_s() - t0) * 1e3;
        }
    return PCH_OK;
}

static int warm(bench *b, bquery *x, pch_vxp_snapshot *s, pch_vxp_sql *q, FILE *sink)
{
    size_t cap = (size_t)b->repeat * (b->n_keys + 1), n = 0;
    double *lat = calloc(cap, sizeof *lat), c0;
    int rc = PCH_OK;
    if (!lat) return pch_error_set(&b->err, PCH_ENOMEM, "out of memory");
    if (x->kind == Q_SQL && (rc = pch_vxp_sql_exec(q, x->sql, PCH_SQL_DISCARD, sink, &b->err)) < 0) goto done;   /* warm-up */
    c0 = cpu_ms();
    if (x->kind == Q_SQL) {
        x->rows = pch_vxp_sql_rows(q);
        for (uint64_t r = 0; r < b->repeat; r++) {
            double t0 = vx_now_s();
            if ((rc = pch_vxp_sql_exec(q, x->sql, PCH_SQL_DISCARD, sink, &b->err)) < 0) goto done;
            lat[n++] = (vx_now_s() - t0) * 1e3;
        }
    } else if ((rc = warm_point(b, s, x, lat, &n)) < 0) {
        goto done;
    }
    x->warm_cpu_ms = n ? (cpu_ms() - c0) / (double)n : 0;
    x->warm = summarize(lat, n);
done:
    free(lat);
    return rc;
}

/* ------------------------------------------------------------------ cold: a process a run */

/* The figure NAME=number on a line of text that starts with `line` (-1: none): get prints
** "stats: ..." lines and, on S3, a "stats: s3 ..." line, in either order. */
static double stat_of(const char *text, const char *line, const char *name)
{
    size_t nl = strlen(name), ll = strlen(line);
    const char *e;
    for (const char *p = text; p && *p; p = e ? e + 1 : NULL) {
        e = strchr(p, '\n');
        if (strncmp(p, line, ll) != 0) continue;
        for (const char *q = p; (q = strstr(q, name)) && (!e || q < e); q += nl)
            if ((q == p || q[-1] == ' ') && q[nl] == '=') return strtod(q + nl + 1, NULL);
    }
    return -1;
}

/* The cold runs' processes are started by a spawner forked before anything is read: a child's
** peak RSS (wait4's ru_maxrss) starts from the size of the process that forked it, and this
** one grows with the warm queries. Request: a u32 byte count, then the arguments, each
** NUL-terminated; reply: struct spawned. */
typedef struct spawned { int status; double ms, cpu_ms, rss_mib; } spawned;

static int full_io(int fd, void *p, size_t n, bool wr)
{
    for (uint8_t *c = p; n;) {
        ssize_t k = wr ? write(fd, c, n) : read(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static void spawner(int fd, const char *errf)
{
    char *buf = NULL;
    uint32_t len;
    while (full_io(fd, &len, 4, false) == 0) {
        char *nb = realloc(buf, (size_t)len + 1), *av[32];
        spawned r;
        struct rusage ru;
        double t0;
        pid_t pid;
        int ac = 0, st = 0;
        if (!nb || full_io(fd, nb, len, false) < 0) break;
        memset(&r, 0, sizeof r);   /* padding included: the reply is written whole */
        r.status = -1;
        buf = nb;
        buf[len] = 0;
        for (char *p = buf; p < buf + len && ac < 31; p += strlen(p) + 1) av[ac++] = p;
        av[ac] = NULL;
        t0 = vx_now_s();
        if ((pid = fork()) == 0) {
            int dn = open("/dev/null", O_WRONLY), ef = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (dn < 0 || ef < 0 || dup2(dn, 1) < 0 || dup2(ef, 2) < 0) _exit(126);
            execv(av[0], av);
            _exit(127);
        }
        if (pid > 0 && wait4(pid, &st, 0, &ru) == pid) {
            r.ms = (vx_now_s() - t0) * 1e3;
            r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            r.cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
            r.rss_mib = (double)ru.ru_maxrss / 1024.0;
        }
        if (full_io(fd, &r, sizeof r, true) < 0) break;
    }
    free(buf);
    _exit(0);
}

/* Run argv through the spawner (stdout to /dev/null, stderr to b->errf): exit status 0 (or
** 3 when ok3), its wall ms, CPU ms and peak RSS (MiB); *errtext: its stderr (malloc'd). */
static int spawn(bench *b, const char **argv, bool ok3, double *ms, double *cpu, double *rss, char **errtext)
{
    spawned r;
    uint32_t len = 0;
    char *req;
    FILE *f;
    *errtext = NULL;
    for (int i = 0; argv[i]; i++) len += (uint32_t)strlen(argv[i]) + 1;
    if (!(req = malloc(len ? len : 1))) return pch_error_set(&b->err, PCH_ENOMEM, "out of memory");
    for (int i = 0, o = 0; argv[i]; i++) { memcpy(req + o, argv[i], strlen(argv[i]) + 1); o += (int)strlen(argv[i]) + 1; }
    if (full_io(b->spawn_fd, &len, 4, true) < 0 || full_io(b->spawn_fd, req, len, true) < 0 || full_io(b->spawn_fd, &r, sizeof r, false) < 0) {
        free(req);
        return pch_error_set(&b->err, PCH_EIO, "benchmark: the process spawner stopped");
    }
    free(req);
    *ms = r.ms;
    *cpu = r.cpu_ms;
    *rss = r.rss_mib;
    if ((f = fopen(b->errf, "r"))) {
        size_t cap = 0;
        if (getdelim(errtext, &cap, 0, f) < 0) { free(*errtext); *errtext = NULL; }
        fclose(f);
    }
    if (r.status != 0 && !(ok3 && r.status == 3)) {
        const char *t = *errtext ? *errtext : "";
        size_t l = strlen(t);
        return pch_error_set(&b->err, PCH_EIO, "%s %s exited with %d: %.300s", argv[0], argv[1], r.status, l > 300 ? t + l - 300 : t);
    }
    return PCH_OK;
}

/* Runs of x as processes: ours (sl false) or `pchronicle` on the Storyline root. */
static int cold(bench *b, bquery *x, bool sl)
{
    const size_t nk = x->kind == Q_LOOKUP_SESSION ? b->n_sess : b->n_keys;
    double *lat = calloc(b->cold + 1, sizeof *lat), cpu_sum = 0, rss = 0;
    double sum[5] = { -1, -1, -1, -1, -1 };   /* bytes_read, bytes_decoded, gets, ranges, bytes_requested */
    static const char *const line[5] = { "stats: ", "stats: ", "stats: s3 ", "stats: s3 ", "stats: s3 " };
    static const char *const field[5] = { "bytes_read", "bytes_decoded", "gets", "ranges", "bytes_requested" };
    int rc = PCH_OK;
    if (!lat) return pch_error_set(&b->err, PCH_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < b->cold && rc == PCH_OK; i++) {
        const bkey *kk = nk ? &b->keys[i % nk] : NULL;
        const char *av[16];
        char *et = NULL;
        int a = 0;
        double ms = 0, cpu = 0, r = 0;
        av[a++] = sl ? b->pchronicle : b->self;
        if (x->kind == Q_SQL) {
            av[a++] = "sql"; av[a++] = (sl ? b->sl_root : b->root); av[a++] = x->sql;
            av[a++] = "--format"; av[a++] = "csv";
        } else if (x->kind == Q_TRAIN) {
            av[a++] = x->train; av[a++] = b->root; av[a++] = "--format"; av[a++] = "count";
        } else {
            av[a++] = "get"; av[a++] = (sl ? b->sl_root : b->root);
            if (x->kind == Q_POINT) { av[a++] = "--run-id"; av[a++] = kk->run; av[a++] = "--trajectory-key"; av[a++] = kk->traj; }
            else if (x->kind == Q_LOOKUP_RUN) { av[a++] = "--run-id"; av[a++] = kk->run; }
            else { av[a++] = "--session-id"; av[a++] = kk->session; }
            av[a++] = "--compact";
            if (x->preview) av[a++] = "--preview";
        }
        av[a++] = "--stats";
        av[a] = NULL;
        rc = spawn(b, av, x->kind == Q_LOOKUP_RUN || x->kind == Q_LOOKUP_SESSION, &ms, &cpu, &r, &et);
        if (rc == PCH_OK) {
            lat[i] = ms;
            cpu_sum += cpu;
            if (r > rss) rss = r;
            /* get and sql print bytes_read (and our get bytes_decoded); a process that made
            ** S3 requests prints its GETs, ranges and bytes requested; a figure not printed
            ** stays unknown (-1) */
            for (int k = 0; k < 5; k++) {
                double v = stat_of(et, line[k], field[k]);
                if (v >= 0) sum[k] = (sum[k] < 0 ? 0 : sum[k]) + v;
            }
        }
        free(et);
    }
    for (int k = 0; k < 5; k++) if (sum[k] >= 0) sum[k] /= (double)b->cold;
    if (rc == PCH_OK && sl) {
        x->sl = summarize(lat, b->cold);
        x->sl_rss_mib = rss;
        x->sl_bytes_read = sum[0];
        x->sl_gets = sum[2]; x->sl_ranges = sum[3]; x->sl_s3_bytes = sum[4];
    } else if (rc == PCH_OK) {
        x->cold = summarize(lat, b->cold);
        x->cold_cpu_ms = cpu_sum / (double)b->cold;
        x->cold_rss_mib = rss;
        x->bytes_read = sum[0];
        x->bytes_decoded = sum[1];
        x->gets = sum[2]; x->ranges = sum[3]; x->s3_bytes = sum[4];
    }
    free(lat);
    return rc;
}

/* ------------------------------------------------------------------ output */

static void put_stat(FILE *o, const char *name, const stat3 *s)
{
    fprintf(o, ",\"%s\":{\"n\":%zu,\"p50_ms\":%.3f,\"p95_ms\":%.3f,\"p99_ms\":%.3f", name, s->n, s->p50, s->p95, s->p99);
}

/* ,"name":value (null when unknown, < 0) */
static void put_opt(FILE *o, const char *name, double v, int digits)
{
    if (v < 0) fprintf(o, ",\"%s\":null", name);
    else fprintf(o, ",\"%s\":%.*f", name, digits, v);
}

static void write_json(FILE *o, const bench *b, const char *snap, uint64_t traj, const bquery *qs, size_t nq, const bool *on)
{
    char load[64] = "";
    FILE *l = fopen("/proc/loadavg", "r");
    if (l) { if (!fgets(load, sizeof load, l)) *load = 0; fclose(l); }
    load[strcspn(load, "\n")] = 0;
    fputs("{\"root\":", o);
    vx_put_json_string(o, b->root);
    fputs(",\"snapshot\":", o);
    vx_put_json_string(o, snap);
    fprintf(o, ",\"trajectories\":%" PRIu64 ",\"keys\":%zu,\"session_keys\":%zu,\"repeat\":%" PRIu64 ",\"cold_runs\":%" PRIu64 ",\"load\":",
            traj, b->n_keys, b->n_sess, b->repeat, b->cold);
    vx_put_json_string(o, load);
    if (b->sl_root) { fputs(",\"storyline\":", o); vx_put_json_string(o, b->sl_root); }
    fputs(",\"queries\":[", o);
    for (size_t i = 0, k = 0; i < nq; i++) {
        const bquery *x = &qs[i];
        if (!on[i]) continue;
        fprintf(o, "%s{\"id\":\"%s\",\"what\":", k++ ? "," : "", x->id);
        vx_put_json_string(o, x->what);
        if (x->kind == Q_SQL) { fputs(",\"sql\":", o); vx_put_json_string(o, x->sql); }
        fprintf(o, ",\"rows\":%" PRIu64, x->rows);
        if (x->warm.n) { put_stat(o, "warm", &x->warm); fprintf(o, ",\"cpu_ms\":%.3f}", x->warm_cpu_ms); }
        if (x->cold.n) {
            put_stat(o, "cold", &x->cold);
            fprintf(o, ",\"cpu_ms\":%.3f,\"peak_rss_mib\":%.1f", x->cold_cpu_ms, x->cold_rss_mib);
            put_opt(o, "bytes_read", x->bytes_read, 0);
            put_opt(o, "bytes_decoded", x->bytes_decoded, 0);
            put_opt(o, "gets", x->gets, 2);
            put_opt(o, "ranges", x->ranges, 2);
            put_opt(o, "bytes_requested", x->s3_bytes, 0);
            fputc('}', o);
        }
        if (x->sl.n) {
            put_stat(o, "storyline_cold", &x->sl);
            fprintf(o, ",\"peak_rss_mib\":%.1f", x->sl_rss_mib);
            put_opt(o, "bytes_read", x->sl_bytes_read, 0);
            put_opt(o, "gets", x->sl_gets, 2);
            put_opt(o, "ranges", x->sl_ranges, 2);
            put_opt(o, "bytes_requested", x->sl_s3_bytes, 0);
            fputc('}', o);
        }
        fputc('}', o);
    }
    fputs("]}\n", o);
}

static void write_table(const bench *b, const bquery *qs, size_t nq, const bool *on)
{
    printf("%-16s %-26s %-19s %8s %8s %12s %7s%s\n", "query", "warm p50/p95/p99 ms", "cold p50/p95 ms", "CPU ms", "RSS MiB", "bytes read",
           "GETs", b->sl_root ? "  Storyline cold p50/p95 ms" : "");
    for (size_t i = 0; i < nq; i++) {
        const bquery *x = &qs[i];
        char w[64] = "—", c[64] = "—", s[64] = "—", br[32] = "—", g[32] = "—";
        if (!on[i]) continue;
        if (x->warm.n) snprintf(w, sizeof w, "%.2f / %.2f / %.2f", x->warm.p50, x->warm.p95, x->warm.p99);
        if (x->cold.n) snprintf(c, sizeof c, "%.2f / %.2f", x->cold.p50, x->cold.p95);
        if (x->sl.n) snprintf(s, sizeof s, "%.2f / %.2f", x->sl.p50, x->sl.p95);
        if (x->bytes_read >= 0) snprintf(br, sizeof br, "%.0f", x->bytes_read);
        if (x->gets >= 0) snprintf(g, sizeof g, "%.1f", x->gets);
        printf("%-16s %-26s %-19s %8.1f %8.1f %12s %7s%s%s\n", x->id, w, c, x->cold_cpu_ms, x->cold_rss_mib, br, g,
               b->sl_root ? "  " : "", b->sl_root ? s : "");
    }
}

/* ------------------------------------------------------------------ the command */

int vx_cmd_benchmark(pch_ctx *ctx, int argc, char **argv)
{
    static const bquery matrix[] = {
        { "point_full", "exact-key point read (run id + trajectory key), full reconstruction", Q_POINT, false, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "point_preview", "the same, Preview hydration (§13.6)", Q_POINT, true, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "lookup_run", "run candidate lookup (--run-id)", Q_LOOKUP_RUN, false, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "lookup_session", "session candidate lookup (--session-id)", Q_LOOKUP_SESSION, false, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "scan_source", "narrow step scan: steps by source", Q_SQL, false, NULL, "SELECT source, count(*) FROM steps GROUP BY source", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "scan_time_model", "narrow step scan: a time window by model", Q_SQL, false, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "tool_group", "tool calls grouped by function", Q_SQL, false, NULL, "SELECT function_name, count(*) FROM tool_calls GROUP BY function_name", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "tool_filter", "tool calls of one function", Q_SQL, false, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "content_off", "steps of one model, content lanes not projected", Q_SQL, false, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "content_on", "the same steps with their message projected", Q_SQL, false, NULL, "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "content_pred", "a content predicate (message LIKE '%error%')", Q_SQL, false, NULL, "SELECT count(*) FROM steps WHERE message LIKE '%error%'", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "sft", "SFT read (copied context as the reader takes it), the C API", Q_TRAIN, false, "sft", "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { "rl", "RL token and logprob scan", Q_TRAIN, false, "rl", "", {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
    };
    enum { NQ = sizeof matrix / sizeof matrix[0] };
    bquery qs[NQ];
    bool on[NQ];
    bench b;
    const char *json = NULL, *only = NULL;
    uint64_t want = 20;
    pch_vxp_snapshot *s = NULL;
    pch_vxp_sql *q = NULL;
    FILE *sink = NULL;
    ssize_t sl;
    pid_t spawner_pid;
    int rc = PCH_OK, fd;
    memcpy(qs, matrix, sizeof qs);
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    b.repeat = 3;
    b.cold = 5;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *num = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(usage, stdout); return VX_EXIT_OK; }
        if (strcmp(a, "--quiet") == 0) { b.quiet = true; continue; }
        if (a[0] != '-') {
            if (b.root) { fprintf(stderr, "pchronicle-vortex benchmark: unexpected %s\n%s", a, usage); return VX_EXIT_USAGE; }
            b.root = a;
            continue;
        }
        if (strcmp(a, "--keys") == 0) num = &want;
        else if (strcmp(a, "--repeat") == 0) num = &b.repeat;
        else if (strcmp(a, "--cold") == 0) num = &b.cold;
        else if (strcmp(a, "--storyline") != 0 && strcmp(a, "--json") != 0 && strcmp(a, "--only") != 0) {
            fprintf(stderr, "pchronicle-vortex benchmark: unknown option %s\n%s", a, usage);
            return VX_EXIT_USAGE;
        }
        if (!v) { fprintf(stderr, "pchronicle-vortex benchmark: %s needs a value\n%s", a, usage); return VX_EXIT_USAGE; }
        i++;
        if (num && (vx_parse_size(v, num) < 0 || *num < (num == &b.cold ? 0u : 1u) || *num > 100000)) {
            fprintf(stderr, "pchronicle-vortex benchmark: %s takes a count of 1..100000%s\n", a, num == &b.cold ? " (or 0: no cold runs)" : "");
            return VX_EXIT_USAGE;
        }
        if (strcmp(a, "--storyline") == 0) b.sl_root = v;
        else if (strcmp(a, "--json") == 0) json = v;
        else if (strcmp(a, "--only") == 0) only = v;
    }
    if (!b.root) { fprintf(stderr, "pchronicle-vortex benchmark: expected ROOT\n%s", usage); return VX_EXIT_USAGE; }
    for (size_t i = 0; i < NQ; i++) on[i] = !only;
    for (const char *p = only; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        size_t l = strcspn(p, ","), i = 0;
        while (i < NQ && !(strlen(qs[i].id) == l && strncmp(p, qs[i].id, l) == 0)) i++;
        if (i == NQ) { fprintf(stderr, "pchronicle-vortex benchmark: --only: no query '%.*s'\n%s", (int)l, p, usage); return VX_EXIT_USAGE; }
        on[i] = true;
    }
    /* this program (the cold runs) and pchronicle beside it (the Storyline side) */
    if ((sl = readlink("/proc/self/exe", b.self, sizeof b.self - 1)) <= 0) { fprintf(stderr, "pchronicle-vortex benchmark: cannot find this program (/proc/self/exe)\n"); return VX_EXIT_FAIL; }
    b.self[sl] = 0;
    snprintf(b.pchronicle, sizeof b.pchronicle, "%.*s/pchronicle", (int)(strrchr(b.self, '/') - b.self), b.self);
    if (b.sl_root && access(b.pchronicle, X_OK) != 0) { fprintf(stderr, "pchronicle-vortex benchmark: --storyline needs %s\n", b.pchronicle); return VX_EXIT_FAIL; }
    snprintf(b.errf, sizeof b.errf, "%s/pch-bench-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if ((fd = mkstemp(b.errf)) < 0) { fprintf(stderr, "pchronicle-vortex benchmark: %s: %s\n", b.errf, strerror(errno)); return VX_EXIT_FAIL; }
    close(fd);
    {
        int sv[2];
        pid_t sp;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || (sp = fork()) < 0) {
            fprintf(stderr, "pchronicle-vortex benchmark: cannot start the process spawner: %s\n", strerror(errno));
            unlink(b.errf);
            return VX_EXIT_FAIL;
        }
        if (sp == 0) { close(sv[0]); spawner(sv[1], b.errf); }
        close(sv[1]);
        b.spawn_fd = sv[0];
        spawner_pid = sp;
    }
    pch_error_clear(&b.err);
#define CK(e) do { if ((rc = (e)) < 0) goto done; } while (0)
    CK(prepare(&b, qs, NQ, (size_t)want));
    CK(pch_vxp_snapshot_open(&s, ctx, b.root, &b.err));
    CK(pch_vxp_sql_open(&q, b.root, PCH_VXP_SQL_AUTO, &b.err));
    if (!(sink = fopen("/dev/null", "w"))) { rc = pch_error_set_sys(&b.err, PCH_EIO, errno, "/dev/null"); goto done; }
    for (size_t i = 0; i < NQ; i++) {
        bquery *x = &qs[i];
        if (!on[i] || (x->kind == Q_LOOKUP_SESSION && !b.n_sess)) continue;
        if (!b.quiet) fprintf(stderr, "benchmark: %s\n", x->id);
        if (x->kind != Q_TRAIN) CK(warm(&b, x, s, q, sink));
        if (b.cold) CK(cold(&b, x, false));
        /* the Storyline tables hold content inline: no Preview there, and no training reader */
        if (b.sl_root && b.cold && x->kind != Q_TRAIN && !x->preview) CK(cold(&b, x, true));
    }
    write_table(&b, qs, NQ, on);
    if (json) {
        FILE *o = strcmp(json, "-") == 0 ? stdout : fopen(json, "w");
        if (!o) { rc = pch_error_set_sys(&b.err, PCH_EIO, errno, "%s", json); goto done; }
        write_json(o, &b, pch_vxp_snapshot_id(s), pch_vxp_snapshot_trajectories(s), qs, NQ, on);
        if (o != stdout && fclose(o) != 0) { rc = pch_error_set_sys(&b.err, PCH_EIO, errno, "%s", json); goto done; }
    }
#undef CK
done:
    if (sink) fclose(sink);
    pch_vxp_sql_close(q);
    pch_vxp_snapshot_free(s);
    for (size_t i = 0; i < b.n_keys; i++) { free(b.keys[i].run); free(b.keys[i].traj); free(b.keys[i].session); }
    free(b.keys);
    close(b.spawn_fd);                 /* the spawner's read fails: it exits */
    waitpid(spawner_pid, NULL, 0);
    unlink(b.errf);
    return rc < 0 ? vx_fail("benchmark", &b.err) : VX_EXIT_OK;
}
