/* pchronicle objects: the object-store layer (include/pchronicle/io.h) from the command
** line, for a local directory or s3://bucket/prefix alike (docs/object-storage.md): list,
** read (whole or ranged, coalesced), write (create-if-absent, multipart), remove, stat, and the
** commit probe of RFC-0006 §10.2. --stats prints the store's counters (§20.2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pchronicle/ctx.h"
#include "pchronicle/io.h"

static const char k_usage[] =
    "usage: pchronicle objects ls LOCATION [--long]\n"
    "       pchronicle objects cat OBJECT [--ranges OFF:LEN[,OFF:LEN...]]\n"
    "       pchronicle objects put FILE OBJECT [--if-absent]\n"
    "       pchronicle objects rm OBJECT\n"
    "       pchronicle objects stat OBJECT\n"
    "       pchronicle objects check-commit LOCATION\n"
    "LOCATION is a directory or s3://bucket[/prefix]; OBJECT a file path or s3://bucket/key.\n"
    "ls prints every key below LOCATION (--long: size, ETag and time too). cat writes the\n"
    "object, or the given byte ranges in the order given, to stdout (nearby ranges are read\n"
    "with one request). put uploads FILE whole (multipart above --multipart-threshold);\n"
    "--if-absent fails with exit status 3 if OBJECT exists. check-commit proves that LOCATION\n"
    "refuses a second create-if-absent of one key, which every writer of pChronicle needs.\n"
    "S3 settings come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,\n"
    "AWS_REGION and AWS_ENDPOINT_URL (path-style when set).\n"
    "options (every subcommand):\n"
    "  --stats                   print the request and byte counters on stderr\n"
    "  --multipart-threshold N   bytes (default 64 MiB)   --part-size N (default 16 MiB)\n"
    "  --coalesce-gap N          bytes (default 256 KiB)  --coalesce-max N (default 16 MiB)\n"
    "  --max-in-flight N         (default 8)              --max-attempts N (default 5)\n"
    "  --backoff-ms N            (default 100)            --timeout-ms N (default 60000)\n";

#define EXIT_EXISTS 3

/* Split OBJECT into the store's location and the key: the key is what follows the last '/'
** (s3://bucket/key: the bucket is the location, the rest the key). */
static int split_object(const char *obj, char **loc, const char **key)
{
    const char *start = obj, *slash;
    if (pch_store_is_s3(obj)) {
        start = obj + 5;
        slash = strchr(start, '/');
    } else {
        slash = strrchr(obj, '/');
    }
    if (!slash || !slash[1]) {
        if (pch_store_is_s3(obj)) return -1;
        *loc = strdup(".");
        *key = obj;
        return *loc ? 0 : -1;
    }
    size_t n = (size_t)(slash - obj);
    if (n == 0) n = 1;   /* "/file": the root directory */
    if (!(*loc = strndup(obj, n))) return -1;
    *key = slash + 1;
    return 0;
}

static int print_entry(void *arg, const pch_object_info *info)
{
    const bool *lng = arg;
    if (*lng) printf("%12llu  %-34s  %lld  %s\n", (unsigned long long)info->size, info->etag[0] ? info->etag : "-",
                     (long long)info->mtime_ms, info->key);
    else printf("%s\n", info->key);
    return 0;
}

static bool parse_ranges(const char *s, pch_store_range **out, size_t *n)
{
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    pch_store_range *r = calloc(cap, sizeof *r);
    if (!r) return false;
    size_t k = 0;
    const char *p = s;
    while (*p) {
        char *end;
        unsigned long long off = strtoull(p, &end, 10);
        if (end == p || *end != ':') { free(r); return false; }
        p = end + 1;
        unsigned long long len = strtoull(p, &end, 10);
        if (end == p || (*end && *end != ',') || len > ((size_t)1 << 31)) { free(r); return false; }
        r[k].off = off;
        r[k].len = len;
        k++;
        p = *end ? end + 1 : end;
    }
    *out = r;
    *n = k;
    return k > 0;
}

static void print_stats(const pch_store *st)
{
    pch_store_stats s;
    pch_store_get_stats(st, &s);
    fprintf(stderr, "gets=%llu ranges=%llu bytes_requested=%llu bytes_useful=%llu puts=%llu heads=%llu lists=%llu "
            "deletes=%llu requests=%llu retries=%llu bytes_written=%llu\n",
            (unsigned long long)s.gets, (unsigned long long)s.ranges, (unsigned long long)s.bytes_requested,
            (unsigned long long)s.bytes_useful, (unsigned long long)s.puts, (unsigned long long)s.heads,
            (unsigned long long)s.lists, (unsigned long long)s.deletes, (unsigned long long)s.requests,
            (unsigned long long)s.retries, (unsigned long long)s.bytes_written);
}

static bool opt_u64(const char *v, const char *name, unsigned long long max, uint64_t *out)
{
    unsigned long long x;
    if (!v) return true;
    if (!pch_cli_parse_u64(v, max, &x) || x == 0) {
        pch_cli_usage_error(k_usage, "--%s: expected a positive integer up to %llu", name, max);
        return false;
    }
    *out = x;
    return true;
}

static int run(pch_ctx *ctx, const char *sub, const char **pos, int n_pos, bool lng, bool if_absent,
               const char *ranges, bool stats, const pch_store_options *o)
{
    static const struct { const char *name; int args; } subs[] = {
        { "ls", 1 }, { "cat", 1 }, { "put", 2 }, { "rm", 1 }, { "stat", 1 }, { "check-commit", 1 },
    };
    int want = -1;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(sub, subs[i].name) == 0) want = subs[i].args;
    if (want < 0) return pch_cli_usage_error(k_usage, "unknown subcommand '%s'", sub);
    if (n_pos != want) return pch_cli_usage_error(k_usage, "objects %s takes %d argument%s", sub, want, want > 1 ? "s" : "");
    if (ranges && strcmp(sub, "cat") != 0) return pch_cli_usage_error(k_usage, "--ranges is for cat");
    if (if_absent && strcmp(sub, "put") != 0) return pch_cli_usage_error(k_usage, "--if-absent is for put");

    const char *target = strcmp(sub, "put") == 0 ? pos[1] : pos[0];
    bool whole = strcmp(sub, "ls") == 0 || strcmp(sub, "check-commit") == 0;
    char *loc = NULL;
    const char *key = NULL;
    const char *prefix = "";
    if (whole && pch_store_is_s3(target)) {   /* ls s3://bucket/pre: the bucket, prefix "pre" */
        const char *slash = strchr(target + 5, '/');
        loc = slash && strcmp(sub, "ls") == 0 ? strndup(target, (size_t)(slash - target)) : strdup(target);
        if (slash && strcmp(sub, "ls") == 0) prefix = slash + 1;
    } else if (whole) {
        loc = strdup(target);
    } else if (split_object(target, &loc, &key) != 0) {
        return pch_cli_usage_error(k_usage, "'%s' names no object", target);
    }
    if (!loc) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }

    pch_store *st = NULL;
    pch_error err;
    int rc = PCH_OK;
    bool wfail = false;
    if ((rc = pch_store_open(ctx, loc, o, &st, &err)) != 0) { free(loc); return pch_cli_fail(&err); }
    if (strcmp(sub, "ls") == 0) {
        rc = pch_store_list(st, prefix, print_entry, &lng, &err);
    } else if (strcmp(sub, "check-commit") == 0) {
        if ((rc = pch_store_check_commit(st, &err)) == 0) printf("%s refuses a second create-if-absent: writers may commit here\n", loc);
    } else if (strcmp(sub, "cat") == 0 && ranges) {
        pch_store_range *r = NULL;
        size_t n = 0;
        if (!parse_ranges(ranges, &r, &n)) {
            pch_store_close(st);
            free(loc);
            return pch_cli_usage_error(k_usage, "--ranges: expected OFF:LEN[,OFF:LEN...]");
        }
        size_t total = 0;
        for (size_t i = 0; i < n; i++) total += (size_t)r[i].len;
        uint8_t *buf = malloc(total ? total : 1);
        size_t at = 0;
        for (size_t i = 0; buf && i < n; i++) { r[i].dst = buf + at; at += (size_t)r[i].len; }
        if (!buf) rc = pch_error_set(&err, PCH_ENOMEM, "out of memory");
        else if ((rc = pch_store_read_ranges(st, key, r, n, &err)) == 0 && fwrite(buf, 1, total, stdout) != total)
            wfail = true;
        free(buf);
        free(r);
    } else if (strcmp(sub, "cat") == 0) {
        uint8_t *d = NULL;
        size_t len = 0;
        if ((rc = pch_store_get(st, key, (uint64_t)1 << 40, &d, &len, NULL, &err)) == 0 && fwrite(d, 1, len, stdout) != len)
            wfail = true;
        pch_free(ctx, d);
    } else if (strcmp(sub, "put") == 0) {
        rc = pch_store_put_file(st, key, pos[0], if_absent ? PCH_PUT_IF_ABSENT : 0, &err);
    } else if (strcmp(sub, "rm") == 0) {
        rc = pch_store_delete(st, key, &err);
    } else {
        pch_object_info info;
        if ((rc = pch_store_head(st, key, &info, &err)) == 0)
            printf("size %llu\netag %s\nmtime_ms %lld\n", (unsigned long long)info.size, info.etag, (long long)info.mtime_ms);
    }
    if (fflush(stdout) != 0) wfail = true;
    if (stats) print_stats(st);
    pch_store_close(st);
    free(loc);
    if (rc < 0) {
        pch_cli_fail(&err);
        return rc == PCH_EEXISTS ? EXIT_EXISTS : PCH_CLI_EXIT_ERROR;
    }
    if (wfail) { pch_cli_error("cannot write to stdout"); return PCH_CLI_EXIT_ERROR; }
    return PCH_CLI_EXIT_OK;
}

int pch_cmd_objects(int argc, char **argv)
{
    bool lng = false, if_absent = false, stats = false;
    const char *ranges = NULL, *v[8] = { NULL };
    const pch_cli_opt opts[] = {
        { "long", false, NULL, &lng },
        { "if-absent", false, NULL, &if_absent },
        { "stats", false, NULL, &stats },
        { "ranges", true, &ranges, NULL },
        { "multipart-threshold", true, &v[0], NULL },
        { "part-size", true, &v[1], NULL },
        { "coalesce-gap", true, &v[2], NULL },
        { "coalesce-max", true, &v[3], NULL },
        { "max-in-flight", true, &v[4], NULL },
        { "max-attempts", true, &v[5], NULL },
        { "backoff-ms", true, &v[6], NULL },
        { "timeout-ms", true, &v[7], NULL },
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos) { pch_cli_error("out of memory"); return PCH_CLI_EXIT_ERROR; }
    int n_pos = 0;
    int prc = pch_cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], pos, &n_pos, k_usage);
    if (prc == PCH_CLI_HELP) { fputs(k_usage, stdout); free(pos); return PCH_CLI_EXIT_OK; }
    if (prc != 0) { free(pos); return prc; }
    if (n_pos < 1) { free(pos); return pch_cli_usage_error(k_usage, "missing subcommand"); }
    pch_store_options o = { .version = PCH_STORE_OPTIONS_VERSION };
    uint64_t u[8] = { 0 };
    const unsigned long long max[8] = { 1ull << 40, 5ull << 30, 1ull << 30, 1ull << 32, 64, 100, 60000, 3600000 };
    static const char *const names[8] = { "multipart-threshold", "part-size", "coalesce-gap", "coalesce-max",
                                          "max-in-flight", "max-attempts", "backoff-ms", "timeout-ms" };
    for (int i = 0; i < 8; i++)
        if (!opt_u64(v[i], names[i], max[i], &u[i])) { free(pos); return PCH_CLI_EXIT_USAGE; }
    o.multipart_threshold = u[0]; o.part_size = u[1]; o.coalesce_gap = u[2]; o.coalesce_max = u[3];
    o.max_in_flight = (unsigned)u[4]; o.max_attempts = (unsigned)u[5]; o.backoff_ms = (unsigned)u[6];
    o.timeout_ms = (unsigned)u[7];
    pch_ctx *ctx = NULL;
    pch_error err;
    if (pch_ctx_new(&ctx, NULL, NULL, &err) != 0) { free(pos); return pch_cli_fail(&err); }
    int rc = run(ctx, pos[0], pos + 1, n_pos - 1, lng, if_absent, ranges, stats, &o);
    pch_ctx_free(ctx);
    free(pos);
    return rc;
}
