/* The object-store interface (include/pchronicle/io.h): opening a root, checking keys,
** coalescing ranged reads, the commit probe of RFC-0006 §10.2, and the small XML scanner the
** S3 backend reads its answers with. The backends are store_local.c and store_s3.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_int.h"

bool pch_store_is_s3(const char *uri)
{
    return uri && strncmp(uri, "s3://", 5) == 0;
}

int pch_store_key_check(const char *key, pch_error *err)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n > 1024) return pch_error_set(err, PCH_EINVAL, "object key must be 1 to 1024 bytes");
    if (key[0] == '/') return pch_error_set(err, PCH_EINVAL, "object key '%s' starts with '/'", key);
    for (const char *s = key; *s;) {
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
            return pch_error_set(err, PCH_EINVAL, "object key '%s' has an empty, '.' or '..' segment", key);
        s += len + (e != NULL);
        if (e && !*s) return pch_error_set(err, PCH_EINVAL, "object key '%s' ends with '/'", key);
    }
    return PCH_OK;
}

static void defaults(pch_store_options *o)
{
    if (!o->multipart_threshold) o->multipart_threshold = (uint64_t)64 << 20;
    if (!o->part_size) o->part_size = (uint64_t)16 << 20;
    if (!o->coalesce_gap) o->coalesce_gap = (uint64_t)256 << 10;
    if (!o->coalesce_max) o->coalesce_max = (uint64_t)16 << 20;
    if (!o->max_in_flight) o->max_in_flight = 8;
    if (!o->max_attempts) o->max_attempts = 5;
    if (!o->backoff_ms) o->backoff_ms = 100;
    if (!o->timeout_ms) o->timeout_ms = 60000;
    if (!o->connect_timeout_ms) o->connect_timeout_ms = 10000;
}

int pch_store_open(pch_ctx *ctx, const char *uri, const pch_store_options *opts, pch_store **out,
                   pch_error *err)
{
    *out = NULL;
    if (!uri || !*uri) return pch_error_set(err, PCH_EINVAL, "empty store location");
    if (opts && opts->version != PCH_STORE_OPTIONS_VERSION)
        return pch_error_set(err, PCH_EUNSUPPORTED, "store options version %u (this library: %u)",
                             opts->version, PCH_STORE_OPTIONS_VERSION);
    pch_store *st = pch_calloc(ctx, 1, sizeof *st);
    if (!st) return pch_error_set(err, PCH_ENOMEM, "out of memory");
    st->ctx = ctx;
    if (opts) st->opt = *opts;
    st->opt.version = PCH_STORE_OPTIONS_VERSION;
    defaults(&st->opt);
    if (st->opt.part_size < ((uint64_t)5 << 20)) st->opt.part_size = (uint64_t)5 << 20;
    int rc;
    if (!(st->uri = pch_strndup(ctx, uri, strlen(uri)))) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto fail; }
    rc = pch_store_is_s3(uri) ? pch_store_s3_init(st, err) : pch_store_local_init(st, err);
    if (rc) goto fail;
    *out = st;
    return PCH_OK;
fail:
    pch_store_close(st);
    return rc;
}

void pch_store_close(pch_store *st)
{
    if (!st) return;
    if (st->ops && st->ops->close) st->ops->close(st);
    pch_free(st->ctx, st->uri);
    pch_free(st->ctx, st->root);
    pch_free(st->ctx, st->bucket);
    pch_free(st->ctx, st);
}

const char *pch_store_uri(const pch_store *st) { return st->uri; }

void pch_store_get_stats(const pch_store *st, pch_store_stats *out) { *out = st->stats; }

int pch_store_get(pch_store *st, const char *key, uint64_t max, uint8_t **data, size_t *len,
                  pch_object_info *info, pch_error *err)
{
    *data = NULL; *len = 0;
    int rc = pch_store_key_check(key, err);
    return rc ? rc : st->ops->get(st, key, max, data, len, info, err);
}

int pch_store_head(pch_store *st, const char *key, pch_object_info *info, pch_error *err)
{
    int rc = pch_store_key_check(key, err);
    return rc ? rc : st->ops->head(st, key, info, err);
}

int pch_store_put(pch_store *st, const char *key, const void *data, size_t len, unsigned flags,
                  pch_error *err)
{
    int rc = pch_store_key_check(key, err);
    if (rc) return rc;
    if (flags & ~PCH_PUT_IF_ABSENT) return pch_error_set(err, PCH_EINVAL, "unknown put flags 0x%x", flags);
    return st->ops->put(st, key, data, len, flags, err);
}

int pch_store_put_file(pch_store *st, const char *key, const char *path, unsigned flags, pch_error *err)
{
    int rc = pch_store_key_check(key, err);
    if (rc) return rc;
    if (flags & ~PCH_PUT_IF_ABSENT) return pch_error_set(err, PCH_EINVAL, "unknown put flags 0x%x", flags);
    return st->ops->put_file(st, key, path, flags, err);
}

int pch_store_delete(pch_store *st, const char *key, pch_error *err)
{
    int rc = pch_store_key_check(key, err);
    return rc ? rc : st->ops->del(st, key, err);
}

int pch_store_list(pch_store *st, const char *prefix, int (*cb)(void *arg, const pch_object_info *info),
                   void *arg, pch_error *err)
{
    return st->ops->list(st, prefix ? prefix : "", cb, arg, err);
}

int pch_io_map_file(const char *path, void **map, size_t *len, pch_error *err)
{
    *map = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return pch_error_set_sys(err, PCH_EIO, errno, "open %s", path);
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return pch_error_set(err, PCH_EINVAL, "%s is not a regular file", path);
    }
    size_t n = (size_t)sb.st_size;
    void *m = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    int e = errno;
    close(fd);
    if (n && m == MAP_FAILED) return pch_error_set_sys(err, PCH_EIO, e, "mmap %s", path);
    *map = m;
    *len = n;
    return PCH_OK;
}

void pch_io_unmap(void *map, size_t len)
{
    if (map && len) munmap(map, len);
}

/* ---- coalescing ---- */

static int by_off(const void *a, const void *b, void *arg)
{
    const pch_store_range *r = arg;
    const pch_store_range *x = &r[*(const size_t *)a], *y = &r[*(const size_t *)b];
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

size_t pch_io_coalesce(const pch_store_range *ranges, size_t n, uint64_t gap, uint64_t max,
                       size_t *order, pch_io_span *spans)
{
    for (size_t i = 0; i < n; i++) order[i] = i;
    if (n > 1) qsort_r(order, n, sizeof *order, by_off, (void *)(uintptr_t)ranges);
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        const pch_store_range *r = &ranges[order[i]];
        uint64_t end = r->off + r->len;
        if (ns) {
            pch_io_span *s = &spans[ns - 1];
            uint64_t s_end = s->off + s->len;
            uint64_t new_end = end > s_end ? end : s_end;
            if (r->off <= s_end + gap && new_end - s->off <= max) {
                s->len = new_end - s->off;
                s->n++;
                continue;
            }
        }
        spans[ns++] = (pch_io_span){ r->off, r->len, i, 1 };
    }
    return ns;
}

int pch_store_read_ranges(pch_store *st, const char *key, pch_store_range *ranges, size_t n,
                          pch_error *err)
{
    int rc = pch_store_key_check(key, err);
    if (rc || n == 0) return rc;
    for (size_t i = 0; i < n; i++)
        if (ranges[i].off + ranges[i].len < ranges[i].off)
            return pch_error_set(err, PCH_EINVAL, "range overflows");
    size_t ns = 0;
    size_t *order = pch_malloc(st->ctx, n * sizeof *order);
    pch_io_span *spans = pch_malloc(st->ctx, n * sizeof *spans);
    uint8_t **bufs = pch_calloc(st->ctx, n, sizeof *bufs);
    if (!order || !spans || !bufs) { rc = pch_error_set(err, PCH_ENOMEM, "out of memory"); goto out; }
    ns = pch_io_coalesce(ranges, n, st->opt.coalesce_gap, st->opt.coalesce_max, order, spans);
    /* a span that is exactly one range reads straight into the caller's buffer */
    for (size_t s = 0; s < ns; s++) {
        if (spans[s].n == 1) { bufs[s] = ranges[order[spans[s].first]].dst; continue; }
        size_t len;
        if (!pch_u64_to_size(&len, spans[s].len) || !(bufs[s] = pch_malloc(st->ctx, len ? len : 1))) {
            rc = pch_error_set(err, PCH_ENOMEM, "out of memory for a %llu-byte read", (unsigned long long)spans[s].len);
            goto out;
        }
    }
    st->stats.ranges += n;
    for (size_t i = 0; i < n; i++) st->stats.bytes_useful += ranges[i].len;
    if ((rc = st->ops->read_spans(st, key, spans, ns, bufs, err)) < 0) goto out;
    for (size_t s = 0; s < ns; s++) {
        if (spans[s].n == 1) continue;
        for (size_t k = 0; k < spans[s].n; k++) {
            const pch_store_range *r = &ranges[order[spans[s].first + k]];
            if (r->len) memcpy(r->dst, bufs[s] + (r->off - spans[s].off), (size_t)r->len);
        }
    }
out:
    for (size_t s = 0; s < ns; s++)
        if (spans[s].n > 1) pch_free(st->ctx, bufs[s]);
    pch_free(st->ctx, bufs);
    pch_free(st->ctx, spans);
    pch_free(st->ctx, order);
    return rc;
}

/* ---- the commit probe (§10.2) ---- */

int pch_store_check_commit(pch_store *st, pch_error *err)
{
    uint8_t rnd[12];
    char hex[25], key[96], first[64], second[64];
    int rc = pch_random_bytes(rnd, sizeof rnd, err);
    if (rc) return rc;
    pch_hex_encode(hex, rnd, sizeof rnd);
    hex[24] = '\0';
    snprintf(key, sizeof key, "_pchronicle/commit-probe/%s", hex);
    snprintf(first, sizeof first, "first writer %s\n", hex);
    snprintf(second, sizeof second, "second writer %s\n", hex);
    if ((rc = pch_store_put(st, key, first, strlen(first), PCH_PUT_IF_ABSENT, err)) < 0)
        return pch_error_prefix(err, "commit probe of %s", st->uri);
    pch_error e2;
    rc = pch_store_put(st, key, second, strlen(second), PCH_PUT_IF_ABSENT, &e2);
    uint8_t *got = NULL;
    size_t got_len = 0;
    int rc2 = pch_store_get(st, key, 4096, &got, &got_len, NULL, err);
    bool kept = rc2 == 0 && got_len == strlen(first) && memcmp(got, first, got_len) == 0;
    pch_free(st->ctx, got);
    pch_error e3;
    (void)pch_store_delete(st, key, &e3);
    if (rc == PCH_EEXISTS && kept) return PCH_OK;
    if (rc == PCH_OK || (rc2 == 0 && !kept))
        return pch_error_set(err, PCH_EUNSUPPORTED,
                             "%s does not refuse a second create-if-absent of one key (a conditional "
                             "put was %s): a commit there could be lost, so writing is refused (reading "
                             "is allowed)", st->uri, rc == PCH_OK ? "accepted" : "let through");
    if (rc2 < 0) return pch_error_prefix(err, "commit probe of %s: reading the probe back", st->uri);
    *err = e2;
    return pch_error_prefix(err, "commit probe of %s", st->uri);
}

/* ---- XML ---- */

bool pch_xml_next(const char *xml, size_t len, size_t *pos, const char *tag, const char **content,
                  size_t *content_len)
{
    size_t tl = strlen(tag);
    char open[80], close[80];
    if (tl + 3 >= sizeof open) return false;
    snprintf(open, sizeof open, "<%s", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    size_t i = *pos;
    while (i < len) {
        const char *p = memmem(xml + i, len - i, open, tl + 1);
        if (!p) return false;
        size_t at = (size_t)(p - xml) + tl + 1;
        if (at < len && (xml[at] == '>' || xml[at] == ' ' || xml[at] == '/')) {
            const char *gt = memchr(xml + at, '>', len - at);
            if (!gt) return false;
            size_t cstart = (size_t)(gt - xml) + 1;
            if (gt[-1] == '/') {   /* <Tag/> */
                *content = xml + cstart; *content_len = 0; *pos = cstart;
                return true;
            }
            const char *c = memmem(xml + cstart, len - cstart, close, tl + 3);
            if (!c) return false;
            *content = xml + cstart;
            *content_len = (size_t)(c - (xml + cstart));
            *pos = (size_t)(c - xml) + tl + 3;
            return true;
        }
        i = at;
    }
    return false;
}

static int put_utf8(pch_buf *out, unsigned long cp)
{
    uint8_t u[4];
    size_t n;
    if (cp < 0x80) { u[0] = (uint8_t)cp; n = 1; }
    else if (cp < 0x800) { u[0] = (uint8_t)(0xC0 | (cp >> 6)); u[1] = (uint8_t)(0x80 | (cp & 63)); n = 2; }
    else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xE0 | (cp >> 12)); u[1] = (uint8_t)(0x80 | ((cp >> 6) & 63));
        u[2] = (uint8_t)(0x80 | (cp & 63)); n = 3;
    } else {
        u[0] = (uint8_t)(0xF0 | (cp >> 18)); u[1] = (uint8_t)(0x80 | ((cp >> 12) & 63));
        u[2] = (uint8_t)(0x80 | ((cp >> 6) & 63)); u[3] = (uint8_t)(0x80 | (cp & 63)); n = 4;
    }
    return pch_buf_append(out, u, n);
}

int pch_xml_unescape(pch_buf *out, const char *s, size_t n)
{
    static const struct { const char *name; char c; } ent[] = {
        { "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' }, { "quot;", '"' }, { "apos;", '\'' },
    };
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') { if (pch_buf_putc(out, (uint8_t)s[i])) return PCH_ENOMEM; continue; }
        const char *semi = memchr(s + i, ';', n - i);
        if (!semi) return PCH_ECORRUPT;
        size_t el = (size_t)(semi - (s + i)) + 1;   /* "&...;" */
        bool done = false;
        for (size_t k = 0; k < 5 && !done; k++)
            if (el - 1 == strlen(ent[k].name) && memcmp(s + i + 1, ent[k].name, el - 1) == 0) {
                if (pch_buf_putc(out, (uint8_t)ent[k].c)) return PCH_ENOMEM;
                done = true;
            }
        if (!done && el > 3 && s[i + 1] == '#') {
            unsigned long cp = 0;
            bool hexa = s[i + 2] == 'x' || s[i + 2] == 'X';
            size_t d = i + (hexa ? 3 : 2);
            if (d >= i + el - 1) return PCH_ECORRUPT;
            for (; d < i + el - 1; d++) {
                char c = s[d];
                int v = c >= '0' && c <= '9' ? c - '0'
                      : hexa && c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : hexa && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                if (v < 0) return PCH_ECORRUPT;
                cp = cp * (hexa ? 16 : 10) + (unsigned long)v;
                if (cp > 0x10FFFF) return PCH_ECORRUPT;
            }
            if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) return PCH_ECORRUPT;
            if (put_utf8(out, cp)) return PCH_ENOMEM;
            done = true;
        }
        if (!done) return PCH_ECORRUPT;
        i += el - 1;
    }
    return PCH_OK;
}
