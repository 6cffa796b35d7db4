/* pchronicle-vortex rl ROOT (docs/training.md; RFC-0006 §13.5): the RL reader as JSON lines
** (one object per emitted step) or as the binary token stream a trainer can mmap. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vx_cli.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the RL binary stream copies little-endian lanes as they are: a little-endian host is assumed"
#endif
#include "pchronicle-vortex/projection.h"

static const char k_rl_usage[] =
    "usage: pchronicle-vortex rl ROOT [--format jsonl|binary|count] [--to FILE] [--source-id ID]\n"
    "                         [--run KEY]... [--model NAME] [--since TIME] [--until TIME]\n"
    "                         [--no-prompt-ids] [--threads N] [--stats] [--snapshot ID]\n"
    "Every step with completion_token_ids that is not copied context, in storage order, read\n"
    "from the token lanes only (docs/training.md):\n"
    "  jsonl (default): one object per step: source_id, run_id, trajectory_key, step_ordinal,\n"
    "    step_id, model_name, prompt_token_ids, completion_token_ids, logprobs, reward;\n"
    "  binary: the token/logprob stream with an offsets index (needs --to; layout in\n"
    "    docs/training.md), for a trainer to mmap;\n"
    "  count: read every step's ids and logprobs through the C API and print one summary\n"
    "    object (steps, token and logprob counts, a checksum): the reader's own speed.\n"
    "  --to FILE        write there (atomically: a temporary file renamed when complete;\n"
    "                   a device or pipe is written straight, never replaced)\n"
    "  --source-id ID   only this source;  --run KEY  only these runs (repeatable)\n"
    "  --model NAME     only steps of this model_name\n"
    "  --no-prompt-ids  do not read prompt_token_ids (null in the output)\n"
    "  --since/--until  step timestamp window [since, until): ISO-8601 or UTC milliseconds\n"
    "  --threads N      clusters decoded at once, a thread each (0, the default: one per\n"
    "                   CPU, at most 4); the output is the same for any N\n"
    "  --stats          steps, tokens, seconds and tokens/s to stderr\n"
    "  --snapshot ID    read that snapshot instead of CURRENT's (`pchronicle-vortex snapshots`)\n";

/* A growable byte string (the CLI uses public headers only). */
typedef struct sbuf { char *data; size_t len, cap; bool oom; } sbuf;

static void sb_append(sbuf *b, const void *p, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->len + n + 1) nc *= 2;
        char *d = realloc(b->data, nc);
        if (!d) { b->oom = true; return; }
        b->data = d;
        b->cap = nc;
    }
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
}
static void sb_putc(sbuf *b, char c) { sb_append(b, &c, 1); }
static void sb_str(sbuf *b, const char *s) { sb_append(b, s, strlen(s)); }
static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char t[64];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof t) { b->oom = true; return; }
    sb_append(b, t, (size_t)k);
}
static void sb_clear(sbuf *b) { b->len = 0; }
static void sb_free(sbuf *b) { free(b->data); memset(b, 0, sizeof *b); }

/* UTC milliseconds, or ISO-8601 UTC "YYYY-MM-DDTHH:MM:SS[.fff]Z". */
static int parse_time(const char *s, int64_t *ms)
{
    char *end;
    long long v;
    struct tm tm;
    int y, mo, d, h, mi, sec, n = 0;
    long frac = 0;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (*s && !*end && !errno) { *ms = v; return 0; }
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6) return -1;
    s += n;
    if (*s == '.') {
        int digits = 0;
        for (s++; *s >= '0' && *s <= '9'; s++, digits++)
            if (digits < 3) frac = frac * 10 + (*s - '0');
        if (!digits) return -1;
        for (; digits < 3; digits++) frac *= 10;
    }
    if (strcmp(s, "Z") != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900; tm.tm_mon = mo - 1; tm.tm_mday = d; tm.tm_hour = h; tm.tm_min = mi; tm.tm_sec = sec;
    *ms = (int64_t)timegm(&tm) * 1000 + frac;
    return 0;
}

/* Common options of the training verbs. */
typedef struct train_args {
    const char *root, *format, *to, *snapshot;
    pch_vxp_train_filter f;
    const char **runs;
    size_t n_runs;
    bool stats;
    const char *since, *until, *threads;
} train_args;

static int parse_train(int argc, char **argv, train_args *a, const char *verb, const char *usage)
{
    memset(a, 0, sizeof *a);
    if (!(a->runs = calloc((size_t)argc + 1, sizeof *a->runs))) return VX_EXIT_FAIL;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char **slot = NULL;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) { fputs(usage, stdout); return -1; }
        if (strcmp(o, "--stats") == 0) { a->stats = true; continue; }
        if (strcmp(o, "--no-prompt-ids") == 0) { a->f.skip_prompt_ids = true; continue; }
        if (strcmp(o, "--format") == 0) slot = &a->format;
        else if (strcmp(o, "--to") == 0) slot = &a->to;
        else if (strcmp(o, "--source-id") == 0) slot = &a->f.source_id;
        else if (strcmp(o, "--model") == 0) slot = &a->f.model;
        else if (strcmp(o, "--since") == 0) slot = &a->since;
        else if (strcmp(o, "--until") == 0) slot = &a->until;
        else if (strcmp(o, "--run") == 0) slot = &a->runs[a->n_runs++];
        else if (strcmp(o, "--threads") == 0) slot = &a->threads;
        else if (strcmp(o, "--snapshot") == 0) slot = &a->snapshot;
        else if (o[0] == '-' && o[1] == '-') {
            fprintf(stderr, "pchronicle-vortex %s: unknown option %s\n%s", verb, o, usage);
            return VX_EXIT_USAGE;
        } else if (!a->root) { a->root = o; continue; }
        else { fprintf(stderr, "pchronicle-vortex %s: expected one ROOT\n%s", verb, usage); return VX_EXIT_USAGE; }
        if (i + 1 >= argc) { fprintf(stderr, "pchronicle-vortex %s: %s needs a value\n%s", verb, o, usage); return VX_EXIT_USAGE; }
        *slot = argv[++i];
    }
    if (!a->root) { fprintf(stderr, "pchronicle-vortex %s: expected ROOT\n%s", verb, usage); return VX_EXIT_USAGE; }
    a->f.run_keys = a->runs;
    a->f.n_run_keys = a->n_runs;
    if (a->threads) {
        uint64_t t;
        if (vx_parse_size(a->threads, &t) < 0 || t > 4) {
            fprintf(stderr, "pchronicle-vortex %s: --threads takes 0..4\n%s", verb, usage);
            return VX_EXIT_USAGE;
        }
        a->f.threads = (unsigned)t;
    }
    if (a->since || a->until) {
        a->f.has_time = true;
        a->f.from_ms = INT64_MIN;
        a->f.to_ms = INT64_MAX;
        if ((a->since && parse_time(a->since, &a->f.from_ms) < 0) || (a->until && parse_time(a->until, &a->f.to_ms) < 0)) {
            fprintf(stderr, "pchronicle-vortex %s: --since/--until take ISO-8601 or UTC milliseconds\n%s", verb, usage);
            return VX_EXIT_USAGE;
        }
    }
    return 0;
}

/* ---- output: a FILE to stdout, to a temporary file renamed over --to, or straight into
** --to when that is no regular file (/dev/stdout, a pipe: a rename would replace it) ---- */

typedef struct sink { FILE *f; char *tmp; const char *to; bool direct; } sink;

static int sink_open(sink *s, const char *to)
{
    struct stat st;
    s->to = to;
    s->tmp = NULL;
    s->direct = false;
    if (!to) { s->f = stdout; return 0; }
    if (stat(to, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode) || !(s->f = fopen(to, "wb"))) {
            fprintf(stderr, "pchronicle-vortex: %s: %s\n", to, S_ISDIR(st.st_mode) ? "is a directory" : strerror(errno));
            return -1;
        }
        s->direct = true;
        return 0;
    }
    if (!(s->tmp = malloc(strlen(to) + 16))) return -1;
    sprintf(s->tmp, "%s.tmp-XXXXXX", to);
    int fd = mkstemp(s->tmp);
    if (fd < 0 || !(s->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "pchronicle-vortex: %s: %s\n", s->tmp, strerror(errno));
        if (fd >= 0) { close(fd); unlink(s->tmp); }
        free(s->tmp);
        s->tmp = NULL;
        return -1;
    }
    return 0;
}

/* ok: publish (flush, fsync, rename); else remove the temporary file. */
static int sink_close(sink *s, bool ok)
{
    int rc = 0;
    if (s->direct) return fclose(s->f) == 0 && ok ? 0 : -1;
    if (!s->tmp) return fflush(stdout) == 0 && ok ? 0 : -1;
    if (ok && (fflush(s->f) != 0 || fsync(fileno(s->f)) != 0)) ok = false;
    if (fclose(s->f) != 0) ok = false;
    if (ok && rename(s->tmp, s->to) != 0) { fprintf(stderr, "pchronicle-vortex: rename to %s: %s\n", s->to, strerror(errno)); ok = false; }
    if (!ok) { unlink(s->tmp); rc = -1; }
    free(s->tmp);
    return rc;
}

static void put_json_str(sbuf *b, const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sb_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\') { sb_putc(b, '\\'); sb_putc(b, (char)c); }
        else if (c < 0x20) { char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 }; sb_append(b, u, 6); }
        else sb_putc(b, (char)c);
    }
    sb_putc(b, '"');
}

static void put_u32s(sbuf *b, const uint8_t *p, size_t n)
{
    sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        char t[12], *e = t + sizeof t, *q = e;
        uint32_t v = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                     (uint32_t)p[4 * i + 3] << 24;
        do { *--q = (char)('0' + v % 10); v /= 10; } while (v);
        if (i) *--q = ',';
        sb_append(b, q, (size_t)(e - q));
    }
    sb_putc(b, ']');
}

static double logprob_at(const pch_vxp_rl_step *s, size_t i)
{
    if (s->logprob_bits == 32) { float f; memcpy(&f, s->logprobs + 4 * i, 4); return f; }
    double d;
    memcpy(&d, s->logprobs + 8 * i, 8);
    return d;
}

/* The sum of n little-endian words of w bytes (4 or 8): the count format's checksum reads
** every id and every logprob's bit pattern once this way. */
static uint64_t sum_words(const uint8_t *p, size_t n, unsigned w)
{
    uint64_t s = 0;
    if (w == 4)
        for (size_t k = 0; k < n; k++) { uint32_t v; memcpy(&v, p + 4 * k, 4); s += v; }
    else
        for (size_t k = 0; k < n; k++) { uint64_t v; memcpy(&v, p + 8 * k, 8); s += v; }
    return s;
}

static void rl_json(sbuf *b, const pch_vxp_rl_step *s)
{
    char t[40];
    sb_str(b, "{\"source_id\":");
    put_json_str(b, s->source_id, s->source_id_len);
    sb_str(b, ",\"run_id\":");
    put_json_str(b, s->run_key, s->run_key_len);
    sb_str(b, ",\"trajectory_key\":");
    put_json_str(b, s->trajectory_key, s->trajectory_key_len);
    sb_printf(b, ",\"step_ordinal\":%llu,\"step_id\":", (unsigned long long)s->step_ordinal);
    if (s->has_step_id) sb_printf(b, "%lld", (long long)s->step_id);
    else sb_str(b, "null");
    sb_str(b, ",\"model_name\":");
    if (s->model_name) put_json_str(b, s->model_name, s->model_name_len);
    else sb_str(b, "null");
    sb_str(b, ",\"prompt_token_ids\":");
    if (s->has_prompt) put_u32s(b, s->prompt_ids, s->n_prompt);
    else sb_str(b, "null");
    sb_str(b, ",\"completion_token_ids\":");
    put_u32s(b, s->completion_ids, s->n_completion);
    sb_str(b, ",\"logprobs\":");
    if (s->logprob_bits) {
        sb_putc(b, '[');
        for (size_t i = 0; i < s->n_logprobs; i++) {
            size_t k = pch_json_format_double(t, logprob_at(s, i));
            if (i) sb_putc(b, ',');
            sb_append(b, t, k);
        }
        sb_putc(b, ']');
    } else {
        sb_str(b, "null");
    }
    sb_str(b, ",\"reward\":");
    if (s->reward_json) sb_append(b, s->reward_json, s->reward_len);
    else sb_str(b, "null");
    sb_str(b, "}\n");
}

/* ---- the binary form (docs/training.md "RL binary stream") ---- */

#define RL_MAGIC "PCHRLv1\n"
#define RL_END "PCHRLEND"
typedef struct rl_entry {         /* one index entry, 48 bytes little-endian */
    uint64_t completion_off, prompt_off, logprobs_off, meta_off;
    uint32_t n_completion, n_prompt, meta_len, flags;
} rl_entry;

static int put_le(FILE *f, uint64_t v, int bytes)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    return fwrite(b, 1, (size_t)bytes, f) == (size_t)bytes ? 0 : -1;
}

int vx_cmd_rl(pch_ctx *ctx, int argc, char **argv)
{
    train_args a;
    pch_vxp_snapshot *snap = NULL;
    pch_vxp_rl_reader *r = NULL;
    pch_error err;
    sbuf line = { 0 }, meta = { 0 }, index = { 0 };
    sink out = { NULL, NULL, NULL, false };
    bool binary, count, ok = false;
    uint64_t steps = 0, tokens = 0, at = 8, prompt = 0, lps = 0, sum = 0;
    double t0 = vx_now_s();
    int rc = parse_train(argc, argv, &a, "rl", k_rl_usage);
    if (rc) { free(a.runs); return rc < 0 ? VX_EXIT_OK : rc; }
    binary = a.format && strcmp(a.format, "binary") == 0;
    count = a.format && strcmp(a.format, "count") == 0;
    if (a.format && !binary && !count && strcmp(a.format, "jsonl") != 0) {
        fprintf(stderr, "pchronicle-vortex rl: --format must be jsonl, binary or count\n%s", k_rl_usage);
        free(a.runs);
        return VX_EXIT_USAGE;
    }
    if (binary && !a.to) {
        fprintf(stderr, "pchronicle-vortex rl: --format binary needs --to FILE\n%s", k_rl_usage);
        free(a.runs);
        return VX_EXIT_USAGE;
    }
    pch_error_clear(&err);
    if (pch_vxp_snapshot_open_at(&snap, ctx, a.root, a.snapshot, &err) < 0 || pch_vxp_rl_open(&r, snap, &a.f, &err) < 0) {
        rc = vx_fail(a.root, &err);
        goto done;
    }
    if (sink_open(&out, a.to) < 0) { rc = VX_EXIT_FAIL; goto done; }
    if (binary && fwrite(RL_MAGIC, 1, 8, out.f) != 8) goto io;
    for (;;) {
        const pch_vxp_rl_step *st;
        size_t n;
        bool eof;
        if (pch_vxp_rl_next(r, &st, &n, &eof, &err) < 0) { rc = vx_fail(a.root, &err); goto done; }
        if (eof) break;
        for (size_t i = 0; i < n; i++) {
            steps++;
            tokens += st[i].n_completion;
            if (count) {            /* touch every id and logprob, as a trainer would */
                sum += sum_words(st[i].completion_ids, st[i].n_completion, 4) + sum_words(st[i].prompt_ids, st[i].n_prompt, 4);
                sum += sum_words(st[i].logprobs, st[i].n_logprobs, st[i].logprob_bits == 32 ? 4 : 8);
                prompt += st[i].n_prompt;
                lps += st[i].n_logprobs;
                continue;
            }
            if (!binary) {
                sb_clear(&line);
                rl_json(&line, &st[i]);
                if (line.oom || fwrite(line.data, 1, line.len, out.f) != line.len) goto io;
                continue;
            }
            /* body: completion ids, logprobs as f32, prompt ids; index and meta kept aside */
            rl_entry e;
            memset(&e, 0, sizeof e);
            e.completion_off = at;
            e.n_completion = (uint32_t)st[i].n_completion;
            if (fwrite(st[i].completion_ids, 4, st[i].n_completion, out.f) != st[i].n_completion) goto io;
            at += 4 * (uint64_t)st[i].n_completion;
            if (st[i].logprob_bits && st[i].n_logprobs != st[i].n_completion) {
                e.flags |= 4;       /* not one logprob per token: not written (JSON lines keep them) */
            } else if (st[i].logprob_bits) {
                e.flags |= 1;
                e.logprobs_off = at;
                for (size_t k = 0; k < st[i].n_logprobs; k++) {
                    float f = (float)logprob_at(&st[i], k);
                    if (fwrite(&f, 4, 1, out.f) != 1) goto io;
                }
                at += 4 * (uint64_t)st[i].n_logprobs;
            }
            if (st[i].has_prompt) {
                e.flags |= 2;
                e.prompt_off = at;
                e.n_prompt = (uint32_t)st[i].n_prompt;
                if (fwrite(st[i].prompt_ids, 4, st[i].n_prompt, out.f) != st[i].n_prompt) goto io;
                at += 4 * (uint64_t)st[i].n_prompt;
            }
            {                         /* the step's metadata: the JSON line without the arrays */
                pch_vxp_rl_step m = st[i];
                sb_clear(&line);
                m.n_completion = 0; m.has_prompt = false; m.logprob_bits = 0;
                rl_json(&line, &m);
            }
            e.meta_off = meta.len;
            e.meta_len = (uint32_t)line.len;
            sb_append(&meta, line.data, line.len);
            sb_append(&index, &e, sizeof e);
            if (meta.oom || index.oom) goto io;
        }
    }
    if (count && fprintf(out.f, "{\"steps\":%llu,\"completion_tokens\":%llu,\"prompt_tokens\":%llu,\"logprobs\":%llu,\"checksum\":%llu}\n",
                         (unsigned long long)steps, (unsigned long long)tokens, (unsigned long long)prompt,
                         (unsigned long long)lps, (unsigned long long)sum) < 0)
        goto io;
    if (binary) {
        uint64_t index_off = (at + 7) / 8 * 8, meta_off;
        static const uint8_t zero[8];
        if (fwrite(zero, 1, (size_t)(index_off - at), out.f) != (size_t)(index_off - at)) goto io;
        /* entries as little-endian fields (the struct is only the in-memory staging) */
        for (size_t k = 0; k < index.len / sizeof(rl_entry); k++) {
            rl_entry e;
            memcpy(&e, index.data + k * sizeof e, sizeof e);
            if (put_le(out.f, e.completion_off, 8) || put_le(out.f, e.prompt_off, 8) || put_le(out.f, e.logprobs_off, 8) ||
                put_le(out.f, e.meta_off, 8) || put_le(out.f, e.n_completion, 4) || put_le(out.f, e.n_prompt, 4) ||
                put_le(out.f, e.meta_len, 4) || put_le(out.f, e.flags, 4))
                goto io;
        }
        meta_off = index_off + 48 * (uint64_t)(index.len / sizeof(rl_entry));
        if ((meta.len && fwrite(meta.data, 1, meta.len, out.f) != meta.len) || put_le(out.f, steps, 8) ||
            put_le(out.f, index_off, 8) || put_le(out.f, meta_off, 8) || fwrite(RL_END, 1, 8, out.f) != 8)
            goto io;
    }
    ok = true;
    rc = VX_EXIT_OK;
    goto done;
io:
    fprintf(stderr, "pchronicle-vortex rl: write failed: %s\n", strerror(errno));
    rc = VX_EXIT_FAIL;
done:
    if (out.f && sink_close(&out, ok) < 0 && rc == VX_EXIT_OK) rc = VX_EXIT_FAIL;
    if (a.stats && rc == VX_EXIT_OK) {
        double s = vx_now_s() - t0;
        fprintf(stderr, "stats: steps=%llu completion_tokens=%llu seconds=%.3f tokens_per_s=%.0f\n",
                (unsigned long long)steps, (unsigned long long)tokens, s, s > 0 ? (double)tokens / s : 0.0);
    }
    pch_vxp_rl_free(r);
    pch_vxp_snapshot_free(snap);
    sb_free(&line);
    sb_free(&meta);
    sb_free(&index);
    free(a.runs);
    return rc;
}

/* ---- sft ---- */

static const char k_sft_usage[] =
    "usage: pchronicle-vortex sft ROOT [--format atif|messages|count] [--to FILE] [--source-id ID]\n"
    "                          [--run KEY]... [--model NAME] [--since TIME] [--until TIME]\n"
    "                          [--threads N] [--stats] [--snapshot ID]\n"
    "One JSON line per agent step that is not copied context and not a deterministic dispatch\n"
    "(llm_call_count 0), in storage order, read from the message and tool lanes:\n"
    "  atif (default): source_id, run_id, trajectory_key, step_ordinal, step_id, model_name,\n"
    "    messages (the conversation before the step: role, content, reasoning_content,\n"
    "    tool_calls {id, function_name, arguments}; observation results as role \"tool\")\n"
    "    and completion (the step's message);\n"
    "  messages: {\"messages\": [...], \"tools\": [...]} as chat trainers take it (OpenAI style:\n"
    "    tool_calls {id, type, function: {name, arguments}}, the step the last assistant\n"
    "    message, tools = the agent's tool_definitions).\n"
    "  count: read every example through the C API (the messages form, each conversation\n"
    "    held once), touch every message byte and print one summary object (examples,\n"
    "    messages, message and content bytes, a checksum): the reader's own speed.\n"
    "Filters, --threads, --snapshot and --to as for rl (docs/training.md). --stats: examples, message MiB (step\n"
    "messages and reasoning, each counted once) and MiB/s, clusters read and skipped.\n";

int vx_cmd_sft(pch_ctx *ctx, int argc, char **argv)
{
    train_args a;
    pch_vxp_snapshot *snap = NULL;
    pch_vxp_sft_reader *r = NULL;
    pch_error err;
    sink out = { NULL, NULL, NULL, false };
    bool ok = false, count;
    uint64_t examples = 0, messages = 0, checksum = 0;
    double t0 = vx_now_s();
    int rc = parse_train(argc, argv, &a, "sft", k_sft_usage);
    if (rc) { free(a.runs); return rc < 0 ? VX_EXIT_OK : rc; }
    if (a.format && strcmp(a.format, "atif") != 0 && strcmp(a.format, "messages") != 0 && strcmp(a.format, "count") != 0) {
        fprintf(stderr, "pchronicle-vortex sft: --format is atif, messages or count, not %s\n%s", a.format, k_sft_usage);
        free(a.runs);
        return VX_EXIT_USAGE;
    }
    count = a.format && strcmp(a.format, "count") == 0;
    pch_error_clear(&err);
    if (pch_vxp_snapshot_open_at(&snap, ctx, a.root, a.snapshot, &err) < 0 ||
        pch_vxp_sft_open_as(&r, snap, &a.f, a.format && strcmp(a.format, "atif") != 0 ? PCH_VXP_SFT_MESSAGES : PCH_VXP_SFT_ATIF,
                            &err) < 0) {
        rc = vx_fail(a.root, &err);
        goto done;
    }
    if (sink_open(&out, a.to) < 0) { rc = VX_EXIT_FAIL; goto done; }
    while (count) {
        const pch_vxp_sft_batch *b;
        bool eof;
        if (pch_vxp_sft_next_batch(r, &b, &eof, &err) < 0) { rc = vx_fail(a.root, &err); goto done; }
        if (eof) {
            fprintf(out.f, "{\"examples\":%llu,\"messages\":%llu,\"message_bytes\":%llu,\"content_bytes\":%llu,\"checksum\":%llu}\n",
                    (unsigned long long)examples, (unsigned long long)messages, (unsigned long long)pch_vxp_sft_message_bytes(r),
                    (unsigned long long)pch_vxp_sft_content_bytes(r), (unsigned long long)checksum);
            break;
        }
        /* the messages this batch adds, once; each example by its message's place */
        {
            size_t i = b->first_new ? b->message_end[b->first_new - 1] + 1 : 0, end = b->message_end[b->n_messages - 1];
            for (; i + 8 <= end; i += 8) {
                uint64_t w;
                memcpy(&w, b->messages + i, 8);
                checksum += w;
            }
            for (; i < end; i++) checksum += (unsigned char)b->messages[i];
        }
        for (size_t k = 0; k < b->n_examples; k++) checksum += b->message_end[b->examples[k].message];
        messages += b->n_messages - b->first_new;
        examples += b->n_examples;
    }
    for (; !count;) {
        const char *text;
        size_t len, n;
        bool eof;
        if (pch_vxp_sft_next(r, &text, &len, &n, &eof, &err) < 0) { rc = vx_fail(a.root, &err); goto done; }
        if (eof) break;
        examples += n;
        if (fwrite(text, 1, len, out.f) != len) {
            fprintf(stderr, "pchronicle-vortex sft: write failed: %s\n", strerror(errno));
            rc = VX_EXIT_FAIL;
            goto done;
        }
    }
    ok = true;
    rc = VX_EXIT_OK;
done:
    if (out.f && sink_close(&out, ok) < 0 && rc == VX_EXIT_OK) rc = VX_EXIT_FAIL;
    if (a.stats && rc == VX_EXIT_OK) {
        double s = vx_now_s() - t0, mib = (double)pch_vxp_sft_message_bytes(r) / 1048576.0;
        pch_vxp_lanes_stats ls;
        pch_vxp_sft_scan_stats(r, &ls);
        fprintf(stderr, "stats: examples=%llu message_mib=%.1f seconds=%.3f message_mib_per_s=%.1f clusters=%llu "
                "clusters_zone_pruned=%llu clusters_summary_pruned=%llu clusters_read=%llu\n",
                (unsigned long long)examples, mib, s, s > 0 ? mib / s : 0.0, (unsigned long long)ls.clusters,
                (unsigned long long)ls.clusters_zone_pruned, (unsigned long long)ls.clusters_summary_pruned,
                (unsigned long long)ls.clusters_read);
    }
    pch_vxp_sft_free(r);
    pch_vxp_snapshot_free(snap);
    free(a.runs);
    return rc;
}
