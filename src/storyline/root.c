/* Storyline root: CURRENT parsing (docs/storyline.md §3), the pinned table versions, late
** object hydration (RFC-0006 §13.6: content is read only when a reader asks for it) and
** `inspect`. CURRENT is the only mutable file of a root; everything it names is immutable. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "io/rfile.h"
#include "storyline/storyline.h"
#include "pchronicle/io.h"
#include "json/json.h"

typedef struct obj_ent {
    char id[65];
    uint64_t row;             /* row index in the objects table */
    uint8_t *data;            /* hydrated bytes (context allocator), NULL until asked for */
    size_t len;
} obj_ent;

struct pch_storyline_root {
    pch_ctx *ctx;
    char *path;
    pch_buf current;                                /* CURRENT text */
    pch_lance_dataset *ds[PCH_STORYLINE_N_TABLES];
    uint64_t version[PCH_STORYLINE_N_TABLES];
    bool objects_loaded;                            /* objs holds every id (no bytes) */
    obj_ent *objs; size_t n_objs;                   /* sorted by id */
};

bool pch_storyline_is_root(const char *path)
{
    char buf[4096];
    struct stat st;
    if (!path || snprintf(buf, sizeof buf, "%s/CURRENT", path) >= (int)sizeof buf) return false;
    if (pch_rfile_is_remote(path)) {   /* a root on object storage: one GET of its CURRENT */
        pch_buf cur;
        pch_error e;
        pch_buf_init(&cur, NULL);
        bool yes = pch_rfile_read_all(NULL, &cur, buf, (size_t)1 << 20, &e) == PCH_OK &&
                   strstr((const char *)cur.data, "\"" PCH_SL_FORMAT "\"") != NULL;
        pch_buf_dispose(&cur);
        return yes;
    }
    if (stat(buf, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    FILE *f = fopen(buf, "rb");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, "\"" PCH_SL_FORMAT "\"") != NULL;
}

int pch_sl__read_current(pch_buf *out, const char *root, pch_error *err)
{
    pch_buf p;
    int rc;
    pch_buf_init(&p, out->ctx);
    rc = pch_path_join(&p, root, "CURRENT");
    if (rc == PCH_OK) rc = pch_rfile_read_all(out->ctx, out, (const char *)p.data, (size_t)1 << 20, err);
    else rc = pch_error_set(err, rc, "storyline: out of memory");
    pch_buf_dispose(&p);
    return rc;
}

static bool json_u64(const pch_json_value *v, uint64_t *out)
{
    if (!v || v->kind != PCH_JSON_NUMBER || !(v->num_flags & PCH_JSON_NUM_U64)) return false;
    *out = v->u.num.u;
    return true;
}

int pch_storyline_open(pch_storyline_root **out, pch_ctx *ctx, const char *root, pch_error *err)
{
    pch_storyline_root *r;
    pch_json_parser *jp = NULL;
    const pch_json_value *doc, *v, *tables;
    pch_buf path;
    int rc;
    *out = NULL;
    r = pch_calloc(ctx, 1, sizeof *r);
    if (!r) return pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
    r->ctx = ctx;
    pch_buf_init(&r->current, ctx);
    pch_buf_init(&path, ctx);
    r->path = pch_malloc(ctx, strlen(root) + 1);
    if (!r->path) { rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory"); goto done; }
    memcpy(r->path, root, strlen(root) + 1);
    rc = pch_sl__read_current(&r->current, root, err);
    if (rc < 0) {
        if (rc == PCH_ENOTFOUND || rc == PCH_EIO) rc = pch_error_set(err, PCH_ENOTFOUND, "storyline: %s: no CURRENT (not a storyline root)", root);
        goto done;
    }
    rc = pch_json_parser_new(&jp, ctx, NULL, err);
    if (rc < 0) goto done;
    rc = pch_json_parser_parse(jp, (const char *)r->current.data, r->current.len, &doc, err);
    if (rc < 0) { rc = pch_error_set(err, PCH_ECORRUPT, "storyline: %s/CURRENT: %s", root, err ? err->msg : "bad json"); goto done; }
    v = pch_json_get(doc, "format", 6);
    if (!v || v->kind != PCH_JSON_STRING || v->u.str.len != strlen(PCH_SL_FORMAT) ||
        memcmp(v->u.str.ptr, PCH_SL_FORMAT, v->u.str.len) != 0) {
        rc = pch_error_set(err, PCH_ECORRUPT, "storyline: %s/CURRENT: format is not %s", root, PCH_SL_FORMAT);
        goto done;
    }
    {
        uint64_t fv;
        if (!json_u64(pch_json_get(doc, "format_version", 14), &fv)) {
            rc = pch_error_set(err, PCH_ECORRUPT, "storyline: %s/CURRENT: no format_version", root);
            goto done;
        }
        if (fv != PCH_SL_FORMAT_VERSION) {
            rc = pch_error_set(err, PCH_EUNSUPPORTED, "storyline: %s/CURRENT: format_version %llu", root, (unsigned long long)fv);
            goto done;
        }
    }
    tables = pch_json_get(doc, "tables", 6);
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) {
        const char *tn = pch_storyline_table_name((pch_storyline_table)t);
        const pch_json_value *tv = pch_json_get(tables, tn, strlen(tn));
        if (!tv || !json_u64(pch_json_get(tv, "version", 7), &r->version[t]) || r->version[t] == 0) {
            rc = pch_error_set(err, PCH_ECORRUPT, "storyline: %s/CURRENT: no version for table %s", root, tn);
            goto done;
        }
        rc = pch_path_join(&path, root, pch_sl__dir((pch_storyline_table)t));
        if (rc < 0) { rc = pch_error_set(err, rc, "storyline: out of memory"); goto done; }
        rc = pch_lance_dataset_open(&r->ds[t], ctx, (const char *)path.data, r->version[t], err);
        if (rc < 0) { pch_error_prefix(err, "storyline: table %s: ", tn); goto done; }
    }
    rc = PCH_OK;
done:
    pch_json_parser_free(jp);
    pch_buf_dispose(&path);
    if (rc < 0) pch_storyline_close(r);
    else *out = r;
    return rc;
}

void pch_storyline_close(pch_storyline_root *r)
{
    if (!r) return;
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) pch_lance_dataset_free(r->ds[t]);
    pch_buf_dispose(&r->current);
    for (size_t i = 0; i < r->n_objs; i++) pch_free(r->ctx, r->objs[i].data);
    pch_free(r->ctx, r->objs);
    pch_free(r->ctx, r->path);
    pch_free(r->ctx, r);
}

pch_lance_dataset *pch_storyline_dataset(pch_storyline_root *r, pch_storyline_table t)
{
    return (r && (unsigned)t < PCH_STORYLINE_N_TABLES) ? r->ds[t] : NULL;
}

const char *pch_sl__root_current(const pch_storyline_root *r, size_t *len)
{
    *len = r->current.len;
    return (const char *)r->current.data;
}

pch_ctx *pch_sl__root_ctx(const pch_storyline_root *r) { return r->ctx; }

static int cmp_obj(const void *a, const void *b)
{
    return strcmp(((const obj_ent *)a)->id, ((const obj_ent *)b)->id);
}

/* Objects are hydrated one by one (RFC-0006 §13.6): the first request scans only the
** object_id column into a sorted id -> row index; each requested object is then read as a
** single-row selection (only the pages holding that row are decoded) and kept, so a view
** stays valid until pch_storyline_close. */
static int load_object_index(pch_storyline_root *r, pch_error *err)
{
    pch_sl_cursor c;
    static const int want[] = { O_OBJECT_ID };
    size_t cap = 0;
    uint64_t at = 0;
    int rc;
    rc = pch_sl__cursor_open(&c, r, PCH_STORYLINE_OBJECTS, want, 1, err);
    if (rc < 0) return rc;
    while ((rc = pch_sl__cursor_next(&c, err)) == 1) {
        const char *id;
        size_t idn;
        if (!pch_sl__get_str(&c, O_OBJECT_ID, &id, &idn) || idn != 64) {
            rc = pch_error_set(err, PCH_ECORRUPT, "storyline: objects: malformed row %llu", (unsigned long long)at);
            break;
        }
        if (r->n_objs == cap) {
            size_t nc = cap ? cap * 2 : 64, bytes;
            obj_ent *ne;
            if (!pch_mul_size(&bytes, nc, sizeof *ne) || !(ne = pch_realloc(r->ctx, r->objs, bytes))) {
                rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
                break;
            }
            r->objs = ne;
            cap = nc;
        }
        memset(&r->objs[r->n_objs], 0, sizeof r->objs[r->n_objs]);
        memcpy(r->objs[r->n_objs].id, id, 64);
        r->objs[r->n_objs].row = at++;
        r->n_objs++;
    }
    pch_sl__cursor_close(&c);
    if (rc < 0) return rc;
    qsort(r->objs, r->n_objs, sizeof *r->objs, cmp_obj);
    for (size_t i = 1; i < r->n_objs; i++)
        if (strcmp(r->objs[i - 1].id, r->objs[i].id) == 0)
            return pch_error_set(err, PCH_ECORRUPT, "storyline: objects: id %s twice", r->objs[i].id);
    r->objects_loaded = true;
    return PCH_OK;
}

/* Read the bytes of one object (its row only); the id column is read again and checked. */
static int hydrate(pch_storyline_root *r, obj_ent *e, pch_error *err)
{
    pch_sl_cursor c;
    static const int want[] = { O_OBJECT_ID, O_DATA };
    const char *id, *d;
    size_t idn, dn;
    int rc = pch_sl__cursor_open_rows(&c, r, PCH_STORYLINE_OBJECTS, want, 2, &e->row, 1, err);
    if (rc == PCH_OK) {
        rc = pch_sl__cursor_next(&c, err);
        if (rc == 1) {
            rc = PCH_OK;
            if (!pch_sl__get_str(&c, O_OBJECT_ID, &id, &idn) || idn != 64 || memcmp(id, e->id, 64) != 0 ||
                !pch_sl__get_str(&c, O_DATA, &d, &dn))
                rc = pch_error_set(err, PCH_ECORRUPT, "storyline: objects: row %llu is not object %s",
                                   (unsigned long long)e->row, e->id);
            else if (!(e->data = pch_malloc(r->ctx, dn ? dn : 1)))
                rc = pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
            else {
                if (dn) memcpy(e->data, d, dn);
                e->len = dn;
            }
        } else if (rc == 0) {
            rc = pch_error_set(err, PCH_ECORRUPT, "storyline: objects: row %llu missing", (unsigned long long)e->row);
        }
    }
    pch_sl__cursor_close(&c);
    return rc;
}

int pch_sl__object_view(pch_storyline_root *r, const char *id, size_t id_len, const char **p,
                        size_t *n, pch_error *err)
{
    obj_ent key, *hit;
    if (!r->objects_loaded) PCH_TRY(load_object_index(r, err));
    if (id_len != 64) return pch_error_set(err, PCH_ECORRUPT, "storyline: bad object id");
    memcpy(key.id, id, 64);
    key.id[64] = 0;
    hit = bsearch(&key, r->objs, r->n_objs, sizeof *r->objs, cmp_obj);
    if (!hit) return pch_error_set(err, PCH_ENOTFOUND, "storyline: object %s missing", key.id);
    if (!hit->data) PCH_TRY(hydrate(r, hit, err));
    *p = (const char *)hit->data;
    *n = hit->len;
    return PCH_OK;
}

int pch_storyline_object(pch_storyline_root *r, const char *object_id, char **out,
                         size_t *len_out, pch_error *err)
{
    const char *p;
    size_t n;
    *out = NULL;
    if (len_out) *len_out = 0;
    PCH_TRY(pch_sl__object_view(r, object_id, strlen(object_id), &p, &n, err));
    *out = pch_malloc(r->ctx, n + 1);
    if (!*out) return pch_error_set(err, PCH_ENOMEM, "storyline: out of memory");
    memcpy(*out, p, n);
    (*out)[n] = 0;
    if (len_out) *len_out = n;
    return PCH_OK;
}

static int add_size(void *arg, const pch_object_info *info)
{
    if (strncmp(info->key, "data/", 5) == 0 || strncmp(info->key, "_versions/", 10) == 0) *(uint64_t *)arg += info->size;
    return 0;
}

static uint64_t dir_bytes(const char *path)
{
    /* Bytes of the data files and manifests of one table (all versions on disk). */
    char cmdless[4096];
    uint64_t total = 0;
    if (pch_store_is_s3(path)) {   /* on object storage: the sizes the listing gives */
        pch_store *st = NULL;
        pch_error e;
        if (pch_store_open(NULL, path, NULL, &st, &e) == PCH_OK) (void)pch_store_list(st, "", add_size, &total, &e);
        pch_store_close(st);
        return total;
    }
    const char *subs[] = { "data", "_versions" };
    for (int i = 0; i < 2; i++) {
        DIR *d;
        struct dirent *e;
        if (snprintf(cmdless, sizeof cmdless, "%s/%s", path, subs[i]) >= (int)sizeof cmdless) continue;
        d = opendir(cmdless);
        if (!d) continue;
        while ((e = readdir(d)) != NULL) {
            char f[4096 + 256];
            struct stat st;
            if (e->d_name[0] == '.') continue;
            snprintf(f, sizeof f, "%s/%s", cmdless, e->d_name);
            if (stat(f, &st) == 0 && S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
        }
        closedir(d);
    }
    return total;
}

int pch_storyline_inspect(pch_ctx *ctx, const char *root, FILE *out, pch_error *err)
{
    pch_storyline_root *r;
    PCH_TRY(pch_storyline_open(&r, ctx, root, err));
    fprintf(out, "format: %s %d\n", PCH_SL_FORMAT, PCH_SL_FORMAT_VERSION);
    for (int t = 0; t < PCH_STORYLINE_N_TABLES; t++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", root, pch_sl__dir((pch_storyline_table)t));
        fprintf(out, "table %-10s version %llu rows %llu files-bytes %llu\n",
                pch_storyline_table_name((pch_storyline_table)t),
                (unsigned long long)r->version[t],
                (unsigned long long)pch_lance_dataset_num_rows(r->ds[t]),
                (unsigned long long)dir_bytes(p));
    }
    fprintf(out, "CURRENT: %.*s\n", (int)r->current.len, (const char *)r->current.data);
    pch_storyline_close(r);
    return PCH_OK;
}
