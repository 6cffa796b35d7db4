/* pchronicle: the command-line program (docs/cli.md). main() dispatches to a verb from the
** table below; each verb is implemented in cmd_<verb>.c using only the public API. This
** file also implements the shared helpers declared in cli.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cj_cli.h"
#include "storyline_cli.h"
#include "pchronicle/common.h"
#include "pchronicle/io.h"
#include "pchronicle/lance.h"

/* Add new verbs here (keep the list sorted as it should appear in --help). */
static const pch_cli_verb k_verbs[] = {
    { "export", "restore a compact-jsonl dataset byte for byte, or a Storyline root as ATIF", pch_cmd_export },
    { "get", "print one trajectory of a Storyline root as ATIF JSON", pch_cmd_get },
    { "import", "import a JSON/JSONL tree (compact-jsonl) or ATIF documents (storyline)", pch_cmd_import },
    { "inspect", "summarise a compact-jsonl dataset or a Storyline root", pch_cmd_inspect },
    { "lance", "write and dump Lance datasets", pch_cmd_lance },
    { "objects", "list, read, write and probe objects in a directory or an S3 bucket", pch_cmd_objects },
    { "sql", "run SQL over a Storyline root or any Lance dataset (compact-jsonl: records)", pch_cmd_sql },
    { "sync", "mirror a JSON/JSONL tree into a compact-jsonl dataset (--watch)", pch_cmd_sync },
    { "validate", "lint ATIF trajectory documents (--input-format atif)", pch_cmd_validate },
};
#define N_VERBS (sizeof k_verbs / sizeof k_verbs[0])

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: pchronicle <command> [options] [args]\n"
            "       pchronicle --help | --version\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < N_VERBS; i++)
        fprintf(out, "  %-10s %s\n", k_verbs[i].name, k_verbs[i].summary);
    fprintf(out,
            "\n"
            "Run 'pchronicle <command> --help' for a command's options.\n"
            "Exit status: 0 success, 1 error, 2 usage error.\n");
}

static void verror(const char *fmt, va_list ap)
{
    fputs("pchronicle: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void pch_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(fmt, ap);
    va_end(ap);
}

int pch_cli_fail(const pch_error *err)
{
    if (err && err->msg[0]) pch_cli_error("%s", err->msg);
    else pch_cli_error("%s", pch_status_name(err ? err->code : PCH_EINVAL));
    return PCH_CLI_EXIT_ERROR;
}

int pch_cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(fmt, ap);
    va_end(ap);
    if (usage) fputs(usage, stderr);
    return PCH_CLI_EXIT_USAGE;
}

double pch_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pch_cli_print_stats(double t0)
{
    pch_store_stats o;
    fprintf(stderr, "stats: bytes_read=%llu seconds=%.3f\n", (unsigned long long)pch_lance_bytes_read(), pch_cli_now() - t0);
    pch_store_process_stats(&o);
    if (o.requests)
        fprintf(stderr, "stats: s3 gets=%llu ranges=%llu bytes_requested=%llu bytes_useful=%llu requests=%llu retries=%llu cache_hits=%llu\n",
                (unsigned long long)o.gets, (unsigned long long)o.ranges, (unsigned long long)o.bytes_requested,
                (unsigned long long)o.bytes_useful, (unsigned long long)o.requests, (unsigned long long)o.retries,
                (unsigned long long)o.cache_hits);
}

bool pch_cli_parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
    unsigned long long v = 0;
    if (!*s) return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (max - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

int pch_cli_parse(int argc, char **argv, const pch_cli_opt *opts, size_t n_opts,
                  const char **pos, int *n_pos, const char *usage)
{
    bool only_pos = false;
    *n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') { pos[(*n_pos)++] = a; continue; }
        if (strcmp(a, "--") == 0) { only_pos = true; continue; }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return PCH_CLI_HELP;
        if (a[1] != '-') return pch_cli_usage_error(usage, "unknown option '%s'", a);
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        const pch_cli_opt *o = NULL;
        for (size_t k = 0; k < n_opts; k++)
            if (strlen(opts[k].name) == nl && strncmp(opts[k].name, name, nl) == 0) o = &opts[k];
        if (!o) return pch_cli_usage_error(usage, "unknown option '--%.*s'", (int)nl, name);
        if (o->has_arg) {
            if (eq) *o->value = eq + 1;
            else if (i + 1 < argc) *o->value = argv[++i];
            else return pch_cli_usage_error(usage, "option '--%s' needs a value", o->name);
        } else {
            if (eq) return pch_cli_usage_error(usage, "option '--%s' takes no value", o->name);
            *o->flag = true;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return PCH_CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        print_usage(stdout);
        return PCH_CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("pchronicle %s\n", PCH_VERSION_STRING);
        return PCH_CLI_EXIT_OK;
    }
    for (size_t i = 0; i < N_VERBS; i++)
        if (strcmp(cmd, k_verbs[i].name) == 0) {
            int rc = k_verbs[i].run(argc - 1, argv + 1);
            if (fflush(stdout) != 0 && rc == PCH_CLI_EXIT_OK) {
                pch_cli_error("error writing to standard output");
                rc = PCH_CLI_EXIT_ERROR;
            }
            return rc;
        }
    if (cmd[0] == '-') pch_cli_error("unknown option '%s'", cmd);
    else pch_cli_error("unknown command '%s'", cmd);
    fputs("Run 'pchronicle --help' for the list of commands.\n", stderr);
    return PCH_CLI_EXIT_USAGE;
}
