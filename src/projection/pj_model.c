/* Physical model of a trajectory data file (RFC-0006 §6): one row per trajectory (one per
** page of consecutive steps for a trajectory above the cluster target, §7.2), lane
** groups as struct layouts (§7.1), step lanes as lists tied to the trajectory by their
** offsets, tool-call / result / content-part lanes as lists of lists (second-level
** offsets). "Typed core + JSON escape" (§6.6): a field goes to its typed lane only when the
** typed value writes back as the same JSON value; anything else (extra, unknown members,
** values of an unexpected JSON kind) is kept in the escape lane of its object, so the
** reconstruction is JSON-equal to the input for every document. Step order is input order
** (§6.7); null, empty and absent stay distinct (§6.4). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "projection/pj_int.h"

#define PJ_G_NAME(g, name) name,
const char *const pj_group_names[PJ_G_N] = { PJ_GROUPS(PJ_G_NAME) };
#define PJ_L_NAME(g, l, name, type) name,
const char *const pj_lane_names[PJ_L_N] = { PJ_LANES(PJ_L_NAME) };
#define PJ_L_GROUP(g, l, name, type) PJ_G_##g,
const uint8_t pj_lane_group[PJ_L_N] = { PJ_LANES(PJ_L_GROUP) };
#define PJ_L_TYPE(g, l, name, type) type,
static const char *const lane_types[PJ_L_N] = { PJ_LANES(PJ_L_TYPE) };
/* Field index of each lane inside its group, computed once from the table. */
static uint8_t lane_field[PJ_L_N];
static int lane_field_ready;
uint8_t pj_lane_field(int lane)
{
    if (!lane_field_ready) {
        uint8_t next[PJ_G_N] = { 0 };
        for (int l = 0; l < PJ_L_N; l++) lane_field[l] = next[pj_lane_group[l]]++;
        lane_field_ready = 1;
    }
    return lane_field[lane];
}

int pj_data_dtype(pch_ctx *ctx, pch_vx_dtype **out, pch_error *err)
{
    pch_buf s;
    int rc;
    pch_buf_init(&s, ctx);
    for (int g = 0; g < PJ_G_N; g++) {
        bool first = true;
        pch_buf_printf(&s, "%s%s:struct<", g ? "," : "", pj_group_names[g]);
        for (int l = 0; l < PJ_L_N; l++) {
            if (pj_lane_group[l] != g) continue;
            pch_buf_printf(&s, "%s%s:%s", first ? "" : ",", pj_lane_names[l], lane_types[l]);
            first = false;
        }
        pch_buf_putc(&s, '>');
    }
    if (s.oom) { pch_buf_dispose(&s); return pch_error_set(err, PCH_ENOMEM, "projection: out of memory"); }
    rc = pch_vx_dtype_parse(out, ctx, (const char *)s.data, err);
    pch_buf_dispose(&s);
    return rc;
}

/* ------------------------------------------------------------------ numbers */

/* The JSON text is an integer in canonical form (what "%lld" prints). */
static bool int_text(const char *p, size_t n, int64_t *v)
{
    /* Canonical int64 text only ("-?(0|[1-9][0-9]*)", no "-0"): anything else keeps its text,
    ** so the document writes back byte for byte. Hand-rolled: strtoll + snprintf to prove
    ** the round trip were ~4 % of a build's CPU (two calls per step). */
    size_t i = 0;
    bool neg = false;
    uint64_t x = 0;
    if (n == 0 || n > 20) return false;
    if (p[0] == '-') { neg = true; i = 1; }
    if (i == n || p[i] < '0' || p[i] > '9') return false;
    if (p[i] == '0') {
        if (n != i + 1 || neg) return false;
        *v = 0;
        return true;
    }
    for (; i < n; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 9) return false;
        if (x > (UINT64_MAX - d) / 10) return false;
        x = x * 10 + d;
    }
    if (neg ? x > (uint64_t)INT64_MAX + 1 : x > (uint64_t)INT64_MAX) return false;
    *v = !neg ? (int64_t)x : x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x;
    return true;
}

/* A real (fraction or exponent), finite: typed as f64, written back by fmt_double. */
static bool real_text(const char *p, size_t n, double *v)
{
    char tmp[64];
    bool real = false;
    if (n == 0 || n >= sizeof tmp) return false;
    for (size_t i = 0; i < n; i++) if (p[i] == '.' || p[i] == 'e' || p[i] == 'E') real = true;
    if (!real) return false;
    memcpy(tmp, p, n);
    tmp[n] = 0;
    *v = strtod(tmp, NULL);
    return isfinite(*v);
}

/* ------------------------------------------------------------------ writer side */

typedef struct app {
    pch_vx_builder *lane[PJ_L_N];
    pch_vx_builder *group[PJ_G_N];
    pch_json_parser *jp;
    pj_content *content;
    const pch_vxp_build_options *o;
    const char *doc_path;
    pch_buf esc;                 /* escape object being built */
    pch_buf tmp;
    pch_buf cids;                /* the step's completion ids (u32) */
    pch_buf mem;                 /* the metrics object's members (mmember) */
    pch_error *err;
    uint64_t logical;
    bool external;
    /* the prompt ids of the page's steps: the form is chosen, and the prompt lanes written,
    ** when the page is complete (put_prompts, §8.2) */
    pch_buf pids;                /* u32, back to back */
    struct pj_pstep { size_t off; uint32_t n; bool has; } *ps;
    size_t n_ps, cap_ps;
    const pch_atif_step *step;   /* the step whose metrics put_metrics reads */
} app;

#define B(l) (a->lane[PJ_##l])
static uint64_t fnv1a64(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) { h ^= (uint8_t)s[i]; h *= 0x100000001b3ull; }
    return h;
}
uint64_t pj_bloom_bits(const char *s, size_t n)
{
    uint64_t h = fnv1a64(s, n);
    return (1ull << (h & 63)) | (1ull << ((h >> 6) & 63));
}

#define TRY(x) do { int t_rc_ = (x); if (t_rc_ < 0) return t_rc_; } while (0)
static int oom(app *a) { return pch_error_set(a->err, PCH_ENOMEM, "projection: out of memory"); }

static pch_vx_builder *elem(pch_vx_builder *b) { return pch_vx_builder_child(b, 0); }

static int put_str(app *a, pch_vx_builder *b, const char *s, size_t n)
{
    a->logical += n;
    return pch_vx_builder_append_bytes(b, s, n, a->err);
}
static int put_cstr(app *a, pch_vx_builder *b, const char *s)
{
    if (!s) return pch_vx_builder_append_null(b, a->err);
    return put_str(a, b, s, strlen(s));
}
static int put_null(app *a, pch_vx_builder *b) { return pch_vx_builder_append_null(b, a->err); }

/* escape object: "{" k:v,... "}" ; empty → null lane value */
static void esc_begin(app *a) { pch_buf_clear(&a->esc); }
static int esc_add(app *a, const char *k, size_t kn, const char *v, size_t vn)
{
    if (pch_buf_putc(&a->esc, a->esc.len ? ',' : '{') < 0) return oom(a);
    if (pch_json__write_string(&a->esc, k, kn) < 0) return pch_error_set(a->err, PCH_EINVAL, "projection: key is not UTF-8");
    if (pch_buf_putc(&a->esc, ':') < 0 || pch_buf_append(&a->esc, v, vn) < 0) return oom(a);
    return PCH_OK;
}
static int esc_raw(app *a, const char *k, const pch_atif_raw *r)
{
    return r->ptr ? esc_add(a, k, strlen(k), r->ptr, r->len) : PCH_OK;
}
static int esc_unknown(app *a, const pch_atif_member *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) TRY(esc_add(a, m[i].key, m[i].key_len, m[i].value.ptr, m[i].value.len));
    return PCH_OK;
}
static int esc_end(app *a, pch_vx_builder *b)
{
    if (!a->esc.len) return put_null(a, b);
    if (pch_buf_putc(&a->esc, '}') < 0) return oom(a);
    return put_str(a, b, (const char *)a->esc.data, a->esc.len);
}

static bool is_str(const pch_atif_raw *r) { return r->ptr && r->len >= 2 && r->ptr[0] == '"'; }

/* Decode a JSON string raw value (parser-owned memory, valid until the next parse). */
static int decode_str(app *a, const pch_atif_raw *r, const char **p, size_t *n)
{
    const pch_json_value *v;
    /* the ATIF parser wrote r (or checked it, as written): without an escape its content is
    ** the bytes between the quotes */
    if (r->len >= 2 && r->ptr[0] == '"' && r->ptr[r->len - 1] == '"' && !memchr(r->ptr + 1, '\\', r->len - 2)) {
        *p = r->ptr + 1;
        *n = r->len - 2;
        return PCH_OK;
    }
    if (pch_json_parser_parse(a->jp, r->ptr, r->len, &v, a->err) < 0) return a->err ? a->err->code : PCH_EINVAL;
    if (v->kind != PCH_JSON_STRING) return pch_error_set(a->err, PCH_EINVAL, "projection: expected a string");
    *p = v->u.str.ptr;
    *n = v->u.str.len;
    return PCH_OK;
}

/* One content value into hot / cold / ref lanes (§9.1). */
static int put_content(app *a, pch_vx_builder *hot, pch_vx_builder *cold, pch_vx_builder *ref,
                       const char *p, size_t n, uint8_t logical_type)
{
    pj_tier tier;
    uint8_t id[32];
    TRY(pj_content_put(a->content, p, n, logical_type, NULL, &tier, id, a->err));
    if (tier == PJ_TIER_HOT) {
        TRY(put_str(a, hot, p, n)); TRY(put_null(a, cold)); return put_null(a, ref);
    }
    if (tier == PJ_TIER_COLD) {
        TRY(put_null(a, hot)); TRY(put_str(a, cold, p, n)); return put_null(a, ref);
    }
    a->external = true;
    a->logical += n;
    TRY(put_null(a, hot)); TRY(put_null(a, cold));
    return pch_vx_builder_append_bytes(ref, id, 32, a->err);
}
static int put_no_content(app *a, pch_vx_builder *hot, pch_vx_builder *cold, pch_vx_builder *ref)
{
    TRY(put_null(a, hot)); TRY(put_null(a, cold)); return put_null(a, ref);
}

/* A content field: string → TEXT, other JSON → JSON text; kind lane gets the kind. */
static int put_value(app *a, const pch_atif_raw *r, pch_vx_builder *kind, pch_vx_builder *hot,
                     pch_vx_builder *cold, pch_vx_builder *ref)
{
    if (!r->ptr) {
        TRY(pch_vx_builder_append_uint(kind, PJ_CK_ABSENT, a->err));
        return put_no_content(a, hot, cold, ref);
    }
    if (is_str(r)) {
        const char *p = NULL;
        size_t n = 0;
        TRY(decode_str(a, r, &p, &n));
        TRY(pch_vx_builder_append_uint(kind, PJ_CK_TEXT, a->err));
        return put_content(a, hot, cold, ref, p, n, PJ_CK_TEXT);
    }
    TRY(pch_vx_builder_append_uint(kind, PJ_CK_JSON, a->err));
    return put_content(a, hot, cold, ref, r->ptr, r->len, PJ_CK_JSON);
}

/* Per-step value builder of a step lane (list<X>), and the item builder of a
** list<list<X>> lane (its per-step list is S(l)). */
#define S(l) elem(B(l))
#define S2(l) elem(S(l))

/* Read an asset confined to the input root (§9.6, §16.2), store it externally and record
** its content id and path on the step. Parts without a source path are left alone. */
static int embed_asset(app *a, const pch_json_value *part)
{
    const pch_json_value *source = pch_json_get(part, "source", 6), *path, *mt;
    pch_buf file, full;
    pj_tier tier;
    uint8_t id[32];
    char media[128] = "";
    char *slash;
    int rc;
    if (part->kind != PCH_JSON_OBJECT || !source || source->kind != PCH_JSON_OBJECT) return PCH_OK;
    path = pch_json_get(source, "path", 4);
    mt = pch_json_get(source, "media_type", 10);
    if (!path || path->kind != PCH_JSON_STRING) return PCH_OK;
    if (mt && mt->kind == PCH_JSON_STRING && mt->u.str.len < sizeof media && !memchr(mt->u.str.ptr, 0, mt->u.str.len)) {
        memcpy(media, mt->u.str.ptr, mt->u.str.len);
        media[mt->u.str.len] = 0;
    }
    if (pch_atif_path_check(path->u.str.ptr, path->u.str.len, a->err) < 0)
        return pch_error_prefix(a->err, "embed-assets: asset of %s", a->doc_path);
    pch_buf_init(&full, NULL);
    pch_buf_init(&file, NULL);
    pch_buf_append_str(&full, a->o->assets_root ? a->o->assets_root : ".");
    pch_buf_putc(&full, '/');
    pch_buf_append_str(&full, a->doc_path);
    if (full.oom) { pch_buf_dispose(&full); return oom(a); }
    slash = strrchr((char *)full.data, '/');
    full.len = (size_t)(slash - (char *)full.data) + 1;
    pch_buf_append(&full, path->u.str.ptr, path->u.str.len);
    if (full.oom) { pch_buf_dispose(&full); return oom(a); }
    rc = pch_file_read_all(&file, (const char *)full.data, (size_t)1 << 31, a->err);
    if (rc < 0) {
        pch_error_prefix(a->err, "embed-assets: asset '%.*s' of %s", (int)path->u.str.len, path->u.str.ptr, a->doc_path);
        pch_buf_dispose(&full);
        return rc;
    }
    pch_buf_dispose(&full);
    /* assets are always external (§9.3: image/audio → external, identity unless zstd pays) */
    rc = pj_content_put(a->content, file.data, file.len, PJ_CK_PARTS, media, &tier, id, a->err);
    pch_buf_dispose(&file);
    TRY(rc);
    a->external = true;
    TRY(pch_vx_builder_append_bytes(elem(elem(a->lane[PJ_STEPS_ASSET_ID])), id, 32, a->err));
    return pch_vx_builder_append_bytes(elem(elem(a->lane[PJ_STEPS_ASSET_PATH])), path->u.str.ptr, path->u.str.len, a->err);
}

/* Assets of a parts array given as raw JSON (observation result content). */
static int embed_parts(app *a, const pch_atif_raw *r)
{
    const pch_json_value *v;
    if (a->o->assets != PCH_VXP_ASSETS_EMBED || !r->ptr || r->ptr[0] != '[') return PCH_OK;
    if (pch_json_parser_parse(a->jp, r->ptr, r->len, &v, a->err) < 0) return a->err->code;
    for (uint32_t i = 0; i < v->n; i++) TRY(embed_asset(a, &v->u.items[i]));
    return PCH_OK;
}

/* message: string → TEXT; array → PARTS (typed text parts, other parts as JSON); else JSON. */
static int put_message(app *a, const pch_atif_raw *r)
{
    static const int part_lanes[] = { PJ_MESSAGE_PART_KIND, PJ_MESSAGE_PART_HOT, PJ_MESSAGE_PART_COLD,
                                      PJ_MESSAGE_PART_REF, PJ_MESSAGE_PART_ESCAPE };
    pch_vx_builder *pk = S2(MESSAGE_PART_KIND), *ph = S2(MESSAGE_PART_HOT), *pc = S2(MESSAGE_PART_COLD),
                   *pr = S2(MESSAGE_PART_REF), *pe = S2(MESSAGE_PART_ESCAPE);
    if (!r->ptr || r->ptr[0] != '[') {
        TRY(put_value(a, r, S(MESSAGE_KIND), S(MESSAGE_HOT), S(MESSAGE_COLD), S(MESSAGE_REF)));
    } else {
        const pch_json_value *v;
        if (pch_json_parser_parse(a->jp, r->ptr, r->len, &v, a->err) < 0) return a->err->code;
        TRY(pch_vx_builder_append_uint(S(MESSAGE_KIND), PJ_CK_PARTS, a->err));
        TRY(put_no_content(a, S(MESSAGE_HOT), S(MESSAGE_COLD), S(MESSAGE_REF)));
        for (uint32_t i = 0; i < v->n; i++) {
            const pch_json_value *part = &v->u.items[i], *ty = NULL, *tx = NULL;
            if (part->kind == PCH_JSON_OBJECT && part->n == 2) {
                ty = pch_json_get(part, "type", 4);
                tx = pch_json_get(part, "text", 4);
                if (!ty || ty->kind != PCH_JSON_STRING || ty->u.str.len != 4 || memcmp(ty->u.str.ptr, "text", 4) != 0 ||
                    !tx || tx->kind != PCH_JSON_STRING)
                    tx = NULL;
            }
            if (tx) {
                TRY(pch_vx_builder_append_uint(pk, PJ_PK_TEXT, a->err));
                TRY(put_content(a, ph, pc, pr, tx->u.str.ptr, tx->u.str.len, PJ_CK_TEXT));
                TRY(put_null(a, pe));
            } else {
                TRY(pch_vx_builder_append_uint(pk, PJ_PK_OTHER, a->err));
                TRY(put_no_content(a, ph, pc, pr));
                TRY(put_str(a, pe, r->ptr + part->span_off, part->span_len));
                if (a->o->assets == PCH_VXP_ASSETS_EMBED) TRY(embed_asset(a, part));
            }
        }
    }
    for (size_t k = 0; k < sizeof part_lanes / sizeof part_lanes[0]; k++)
        TRY(pch_vx_builder_append_valid(elem(a->lane[part_lanes[k]]), a->err));
    return PCH_OK;
}

static bool same_text(const char *a, size_t an, const char *b)
{
    return b && strlen(b) == an && memcmp(a, b, an) == 0;
}

static int put_calls(app *a, const pch_atif_step *s, uint64_t *tool_bloom)
{
    static const int lanes[] = { PJ_TOOLS_CALL_ID, PJ_TOOLS_FUNCTION, PJ_TOOLS_ARGS_HOT, PJ_TOOLS_ARGS_COLD,
                                 PJ_TOOLS_ARGS_REF, PJ_TOOLS_CALL_ESCAPE };
    for (uint32_t i = 0; i < s->n_calls; i++) {
        const pch_atif_tool_call *c = &s->calls[i];
        bool id_typed = c->tool_call_id && is_str(&c->f[PCH_ATIF_C_TOOL_CALL_ID]);
        bool fn_typed = c->function_name && is_str(&c->f[PCH_ATIF_C_FUNCTION_NAME]);
        TRY(id_typed ? put_cstr(a, S2(TOOLS_CALL_ID), c->tool_call_id) : put_null(a, S2(TOOLS_CALL_ID)));
        TRY(fn_typed ? put_cstr(a, S2(TOOLS_FUNCTION), c->function_name) : put_null(a, S2(TOOLS_FUNCTION)));
        if (fn_typed) {
            *tool_bloom |= pj_bloom_bits(c->function_name, strlen(c->function_name));
        }
        if (c->f[PCH_ATIF_C_ARGUMENTS].ptr)
            TRY(put_content(a, S2(TOOLS_ARGS_HOT), S2(TOOLS_ARGS_COLD), S2(TOOLS_ARGS_REF),
                            c->f[PCH_ATIF_C_ARGUMENTS].ptr, c->f[PCH_ATIF_C_ARGUMENTS].len, PJ_CK_JSON));
        else
            TRY(put_no_content(a, S2(TOOLS_ARGS_HOT), S2(TOOLS_ARGS_COLD), S2(TOOLS_ARGS_REF)));
        esc_begin(a);
        if (!id_typed) TRY(esc_raw(a, "tool_call_id", &c->f[PCH_ATIF_C_TOOL_CALL_ID]));
        if (!fn_typed) TRY(esc_raw(a, "function_name", &c->f[PCH_ATIF_C_FUNCTION_NAME]));
        TRY(esc_raw(a, "extra", &c->f[PCH_ATIF_C_EXTRA]));
        TRY(esc_unknown(a, c->unknown, c->n_unknown));
        TRY(esc_end(a, S2(TOOLS_CALL_ESCAPE)));
    }
    for (size_t k = 0; k < sizeof lanes / sizeof lanes[0]; k++) {
        pch_vx_builder *l = elem(a->lane[lanes[k]]);
        if (k == 0 && !s->has_tool_calls) TRY(put_null(a, l));   /* tool_calls absent */
        else TRY(pch_vx_builder_append_valid(l, a->err));
    }
    return PCH_OK;
}

static int put_results(app *a, const pch_atif_step *s)
{
    static const int lanes[] = { PJ_TOOLS_RES_CALL, PJ_TOOLS_RES_ORIGIN, PJ_TOOLS_RES_KIND, PJ_TOOLS_RES_HOT,
                                 PJ_TOOLS_RES_COLD, PJ_TOOLS_RES_REF, PJ_TOOLS_RES_ESCAPE };
    TRY(pch_vx_builder_append_uint(S(TOOLS_OBS_KIND), !s->has_observation ? 0 : s->has_results ? 1 : 2, a->err));
    esc_begin(a);
    TRY(esc_unknown(a, s->obs_unknown, s->n_obs_unknown));
    TRY(esc_end(a, S(TOOLS_OBS_ESCAPE)));
    for (uint32_t i = 0; i < s->n_results; i++) {
        const pch_atif_result *r = &s->results[i];
        const pch_atif_raw *sc = &r->f[PCH_ATIF_R_SOURCE_CALL_ID];
        bool implied = false;
        if (r->call_ordinal >= 0 && (uint32_t)r->call_ordinal < s->n_calls && is_str(sc) && r->source_call_id) {
            const pch_atif_tool_call *c = &s->calls[r->call_ordinal];
            implied = c->tool_call_id && is_str(&c->f[PCH_ATIF_C_TOOL_CALL_ID]) &&
                      strcmp(c->tool_call_id, r->source_call_id) == 0;
        }
        TRY(r->call_ordinal >= 0 ? pch_vx_builder_append_uint(S2(TOOLS_RES_CALL), (uint64_t)r->call_ordinal, a->err)
                                 : put_null(a, S2(TOOLS_RES_CALL)));
        TRY(pch_vx_builder_append_uint(S2(TOOLS_RES_ORIGIN), (uint64_t)r->origin, a->err));
        TRY(put_value(a, &r->f[PCH_ATIF_R_CONTENT], S2(TOOLS_RES_KIND), S2(TOOLS_RES_HOT), S2(TOOLS_RES_COLD),
                      S2(TOOLS_RES_REF)));
        TRY(embed_parts(a, &r->f[PCH_ATIF_R_CONTENT]));
        esc_begin(a);
        if (!implied) TRY(esc_raw(a, "source_call_id", sc));
        TRY(esc_raw(a, "subagent_trajectory_ref", &r->f[PCH_ATIF_R_SUBAGENT_TRAJECTORY_REF]));
        TRY(esc_raw(a, "extra", &r->f[PCH_ATIF_R_EXTRA]));
        TRY(esc_unknown(a, r->unknown, r->n_unknown));
        TRY(esc_end(a, S2(TOOLS_RES_ESCAPE)));
    }
    for (size_t k = 0; k < sizeof lanes / sizeof lanes[0]; k++)
        TRY(pch_vx_builder_append_valid(elem(a->lane[lanes[k]]), a->err));
    return PCH_OK;
}

/* The step's prompt ids: the n ids just appended to a->pids (has = false: none), kept for
** put_prompts. */
static int stash_prompt(app *a, bool has, size_t n)
{
    struct pj_pstep *p;
    if (a->n_ps == a->cap_ps) {
        size_t nc = a->cap_ps ? a->cap_ps * 2 : 64;
        struct pj_pstep *np = realloc(a->ps, nc * sizeof *np);
        if (!np) return oom(a);
        a->ps = np;
        a->cap_ps = nc;
    }
    p = &a->ps[a->n_ps++];
    p->has = has;
    p->n = (uint32_t)n;
    p->off = a->pids.len - 4 * n;
    a->logical += 4ull * n;
    return PCH_OK;
}

static const uint32_t *pids_at(const app *a, size_t i) { return (const uint32_t *)(const void *)(a->pids.data + a->ps[i].off); }

/* The prompt lanes of the page's steps (§8.2): each prompt with ids is a checkpoint (the
** plain list) or, when it shares at least half of its ids with the row's previous prompt
** and fewer than PJ_PROMPT_CHECKPOINT prompts came since the last checkpoint, the prefix
** form based on that previous prompt (a chain of at most PJ_PROMPT_CHECKPOINT - 1 links);
** the row keeps the plain lists unless the form stores at most 80 % of the ids. */
static int put_prompts(app *a)
{
    int64_t *base = NULL;
    uint32_t *prefix = NULL;
    uint64_t total = 0, stored = 0;
    int64_t prev = -1;               /* the row's previous prompt */
    unsigned since = 0;              /* prompts since the last checkpoint */
    bool use;
    int rc = PCH_OK;
    if (a->n_ps && (!(base = malloc(a->n_ps * sizeof *base)) || !(prefix = malloc(a->n_ps * sizeof *prefix)))) {
        free(base);
        return oom(a);
    }
    for (size_t i = 0; i < a->n_ps; i++) {
        const struct pj_pstep *p = &a->ps[i];
        base[i] = -1;
        prefix[i] = 0;
        if (!p->has) continue;
        total += p->n;
        if (prev >= 0 && since < PJ_PROMPT_CHECKPOINT) {
            const uint32_t *x = pids_at(a, i), *c = pids_at(a, (size_t)prev);
            uint32_t k = 0, m = p->n < a->ps[prev].n ? p->n : a->ps[prev].n;
            while (k < m && x[k] == c[k]) k++;
            if (k > 0 && 2ull * k >= p->n && p->n - k <= PJ_PROMPT_SUFFIX_MAX) {
                base[i] = prev;
                prefix[i] = k;
                stored += p->n - k;
                since++;
                prev = (int64_t)i;
                continue;
            }
        }
        prev = (int64_t)i;             /* a checkpoint */
        since = 1;
        stored += p->n;
    }
    use = a->o->prompt_prefix && total > 0 && stored * 5 <= total * 4;
#define CKP(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    for (size_t i = 0; i < a->n_ps; i++) {
        const struct pj_pstep *p = &a->ps[i];
        bool pf = use && base[i] >= 0;
        if (!p->has) {
            CKP(put_null(a, S(TOKENS_PROMPT_IDS)));
            CKP(put_null(a, S(TOKENS_PROMPT_LEN)));
        } else {
            CKP(pch_vx_builder_append_uint(S(TOKENS_PROMPT_LEN), p->n, a->err));
            if (pf) {
                CKP(put_null(a, S(TOKENS_PROMPT_IDS)));
            } else {
                CKP(pch_vx_builder_append_u32s(elem(S(TOKENS_PROMPT_IDS)), pids_at(a, i), p->n, a->err));
                CKP(pch_vx_builder_append_valid(S(TOKENS_PROMPT_IDS), a->err));
            }
        }
        if (pf) {
            CKP(pch_vx_builder_append_uint(S(TOKENS_PROMPT_BASE), (uint64_t)base[i], a->err));
            CKP(pch_vx_builder_append_uint(S(TOKENS_PROMPT_PREFIX), prefix[i], a->err));
            CKP(pch_vx_builder_append_u32s(elem(S(TOKENS_PROMPT_SUFFIX)), pids_at(a, i) + prefix[i], p->n - prefix[i], a->err));
            CKP(pch_vx_builder_append_valid(S(TOKENS_PROMPT_SUFFIX), a->err));
        } else {
            CKP(put_null(a, S(TOKENS_PROMPT_BASE)));
            CKP(put_null(a, S(TOKENS_PROMPT_PREFIX)));
            CKP(put_null(a, S(TOKENS_PROMPT_SUFFIX)));
        }
    }
#undef CKP
done:
    free(base);
    free(prefix);
    a->n_ps = 0;
    pch_buf_clear(&a->pids);
    return rc;
}

/* A member of the metrics object: the key (decoded) and the value's text; dom is the parsed
** value when the members came from the parser (metrics_members' fallback), else NULL. */
typedef struct mmember {
    const char *key;
    size_t key_len;
    const char *val;
    size_t val_len;
    const pch_json_value *dom;
    int typed;                   /* 0, or 1 + which token array was read into its buffer:
                                 ** prompt ids, completion ids, logprobs (typed_member) */
} mmember;

static bool key_is(const mmember *x, const char *k)
{
    size_t n = strlen(k);
    return x->key_len == n && memcmp(x->key, k, n) == 0;
}

static size_t skip_ws_at(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* End of the JSON value starting at s[i] (text the ATIF parser has checked); SIZE_MAX if the
** text ends first. Containers are skipped by depth, strings by their escapes. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
    size_t depth = 0;
    while (i < n) {
        char c = s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i += s[i] == '\\' ? 2 : 1) {}
            if (i >= n) return SIZE_MAX;
            i++;
            if (!depth) return i;
            continue;
        }
        if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            if (!depth) return i;
            if (--depth == 0) return i + 1;
        } else if (!depth && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            return i;
        }
        i++;
    }
    return depth ? SIZE_MAX : i;
}

/* A token array member (prompt_token_ids, completion_token_ids, logprobs) read straight
** into its buffer (a->pids after the page's earlier prompts, a->cids, a->tmp), replacing
** what a member of the same name left there. x->val[0 .. rest) is the text from the value
** on; typed: x->typed set and x->val_len the array's length. */
static int typed_member(app *a, mmember *x, size_t rest, size_t pids0)
{
    pch_json__array_kind kind = PCH_JSON__ARRAY_U32;
    pch_buf *buf;
    size_t base = 0, before, used;
    int r, which;
    x->typed = 0;
    if (x->val[0] != '[') return PCH_OK;
    if (key_is(x, "prompt_token_ids")) { buf = &a->pids; base = pids0; which = 1; }
    else if (key_is(x, "completion_token_ids")) { buf = &a->cids; which = 2; }
    else if (key_is(x, "logprobs")) { buf = &a->tmp; kind = PCH_JSON__ARRAY_REAL; which = 3; }
    else return PCH_OK;
    before = buf->len;
    {   /* the values the ATIF parser read, when it kept this very member typed (the same
        ** acceptance as pch_json__number_array's): its text is not parsed again */
        const pch_atif_tokens *t = a->step ? &a->step->tokens[which - 1] : NULL;
        if (t && t->typed && t->len <= rest && x->val == a->step->f[PCH_ATIF_S_METRICS].ptr + t->off) {
            if (t->n && pch_buf_append(buf, t->data, (size_t)t->n * (kind == PCH_JSON__ARRAY_U32 ? 4 : 8)) < 0) return oom(a);
            used = t->len;
            r = 1;
            goto typed;
        }
    }
    if ((r = pch_json__number_array(a->jp, x->val, rest, kind, buf, &used)) < 0) return oom(a);
    if (!r) return PCH_OK;
typed:
    if (buf->len > before) memmove(buf->data + base, buf->data + before, buf->len - before);   /* "[]": no data yet */
    buf->len = base + (buf->len - before);
    x->typed = which;
    x->val_len = used;
    return PCH_OK;
}

/* The members of the metrics object m, in order, into a->mem (mmember). The text was
** checked by the ATIF parser, so one scan finds each member's key and value span without
** building the values: the token arrays are read once, typed, by put_metrics (issue: parse
** each value once). A key with an escape (or a text the scan does not follow) sends the
** object through the parser instead. */
static int metrics_members(app *a, const pch_atif_raw *m, size_t pids0, size_t *n_out)
{
    const char *s = m->ptr;
    size_t n = m->len, i = skip_ws_at(s, n, 0), cnt = 0;
    pch_buf_clear(&a->mem);
    if (i >= n || s[i] != '{') goto parse;
    i = skip_ws_at(s, n, i + 1);
    if (i < n && s[i] == '}') goto done;
    for (;;) {
        mmember x;
        size_t k0, e;
        if (i >= n || s[i] != '"') goto parse;
        for (k0 = ++i; i < n && s[i] != '"' && s[i] != '\\'; i++) {}
        if (i >= n || s[i] != '"') goto parse;
        x.key = s + k0;
        x.key_len = i - k0;
        i = skip_ws_at(s, n, i + 1);
        if (i >= n || s[i] != ':') goto parse;
        i = skip_ws_at(s, n, i + 1);
        if (i >= n) goto parse;
        x.val = s + i;
        x.dom = NULL;
        TRY(typed_member(a, &x, n - i, pids0));
        if (x.typed) {
            e = i + x.val_len;
        } else {
            if ((e = skip_value(s, n, i)) == SIZE_MAX || e == i) goto parse;
            x.val_len = e - i;
        }
        if (pch_buf_append(&a->mem, &x, sizeof x) < 0) return oom(a);
        cnt++;
        i = skip_ws_at(s, n, e);
        if (i < n && s[i] == ',') { i = skip_ws_at(s, n, i + 1); continue; }
        if (i < n && s[i] == '}') break;
        goto parse;
    }
done:
    *n_out = cnt;
    return PCH_OK;
parse: {
        const pch_json_value *v;
        pch_buf_clear(&a->mem);
        a->pids.len = pids0;
        pch_buf_clear(&a->cids);
        pch_buf_clear(&a->tmp);
        if (pch_json_parser_parse(a->jp, s, n, &v, a->err) < 0) return a->err->code;
        if (v->kind != PCH_JSON_OBJECT) return pch_error_set(a->err, PCH_EINVAL, "projection: metrics is not an object");
        for (uint32_t k = 0; k < v->n; k++) {
            const pch_json_member *mb = &v->u.members[k];
            mmember x = { mb->key, mb->key_len, s + mb->value.span_off, mb->value.span_len, &mb->value, 0 };
            TRY(typed_member(a, &x, x.val_len, pids0));
            if (x.typed && x.val_len != mb->value.span_len) return pch_error_set(a->err, PCH_EINVAL, "projection: metrics array");
            if (pch_buf_append(&a->mem, &x, sizeof x) < 0) return oom(a);
        }
        *n_out = v->n;
        return PCH_OK;
    }
}

/* Does the metrics member `extra` hold a `reward` (an object with that key)? */
static int extra_has_reward(app *a, const mmember *x, bool *has)
{
    const pch_json_value *v = x->dom;
    *has = false;
    if (x->val[0] != '{') return PCH_OK;
    if (!v && pch_json_parser_parse(a->jp, x->val, x->val_len, &v, a->err) < 0) return a->err->code;
    *has = v->kind == PCH_JSON_OBJECT && pch_json_get(v, "reward", 6) != NULL;
    return PCH_OK;
}

/* 32 when every logprob is exactly a float32 (the f32 lane writes the same double back),
** else 64. */
static int real_width(const double *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fabs(d[i]) > 3.4e38 || (double)(float)d[i] != d[i]) return 64;
    return 32;
}

static int put_metrics(app *a, const pch_atif_step *s, uint64_t *ptok, uint64_t *ctok, uint32_t *warn,
                       uint8_t *flags)
{
    const pch_atif_raw *m = &s->f[PCH_ATIF_S_METRICS];
    const mmember *mem;
    int64_t tok[3];
    bool has_tok[3] = { false, false, false }, has_arr[3] = { false, false, false };   /* prompt, completion, logprobs */
    bool has_cost = false;
    double cost = 0;
    size_t n_mem = 0, pids0 = a->pids.len, n_ids[2] = { 0, 0 }, n_lp = 0;
    int lpw = 0;
    static const char *const tok_keys[3] = { "prompt_tokens", "completion_tokens", "cached_tokens" };
    if (!m->ptr || m->ptr[0] != '{') {   /* absent, or not an object: the step escape keeps it */
        TRY(pch_vx_builder_append_uint(S(TOKENS_METRICS_KIND), 0, a->err));
        for (int l = PJ_TOKENS_PROMPT_TOKENS; l <= PJ_TOKENS_LOGPROBS64; l++)
            if (l != PJ_TOKENS_PROMPT_IDS) TRY(put_null(a, elem(a->lane[l])));
        TRY(stash_prompt(a, false, 0));
        return put_null(a, S(TOKENS_METRICS_ESCAPE));
    }
    pch_buf_clear(&a->cids);
    pch_buf_clear(&a->tmp);
    a->step = s;
    TRY(metrics_members(a, m, pids0, &n_mem));
    a->step = NULL;
    mem = (const mmember *)(const void *)a->mem.data;
    esc_begin(a);
    for (size_t i = 0; i < n_mem; i++) {
        const mmember *x = &mem[i];
        bool num = x->val[0] == '-' || (x->val[0] >= '0' && x->val[0] <= '9');
        int k = -1;
        if (x->typed) {          /* read by metrics_members into its lane's buffer */
            has_arr[x->typed - 1] = true;
            continue;
        }
        for (int t = 0; t < 3; t++)
            if (key_is(x, tok_keys[t])) k = t;
        if (k >= 0 && num && int_text(x->val, x->val_len, &tok[k])) { has_tok[k] = true; continue; }
        if (key_is(x, "cost_usd") && num && real_text(x->val, x->val_len, &cost)) { has_cost = true; continue; }
        TRY(esc_add(a, x->key, x->key_len, x->val, x->val_len));
        if (key_is(x, "extra")) {
            bool reward;
            TRY(extra_has_reward(a, x, &reward));
            if (reward) *flags |= PJ_SUM_HAS_REWARD;
        }
    }
    n_ids[0] = (a->pids.len - pids0) / 4;
    n_ids[1] = a->cids.len / 4;
    n_lp = a->tmp.len / 8;
    TRY(pch_vx_builder_append_uint(S(TOKENS_METRICS_KIND), 1, a->err));
    for (int t = 0; t < 3; t++)
        TRY(has_tok[t] ? pch_vx_builder_append_int(elem(a->lane[PJ_TOKENS_PROMPT_TOKENS + t]), tok[t], a->err)
                       : put_null(a, elem(a->lane[PJ_TOKENS_PROMPT_TOKENS + t])));
    if (has_tok[0] && tok[0] > 0) *ptok += (uint64_t)tok[0];
    if (has_tok[1] && tok[1] > 0) *ctok += (uint64_t)tok[1];
    TRY(has_cost ? pch_vx_builder_append_float(S(TOKENS_COST_USD), cost, a->err) : put_null(a, S(TOKENS_COST_USD)));
    TRY(stash_prompt(a, has_arr[0], n_ids[0]));
    if (has_arr[1]) {
        TRY(pch_vx_builder_append_u32s(elem(S(TOKENS_COMPLETION_IDS)), (const uint32_t *)(const void *)a->cids.data,
                                       n_ids[1], a->err));
        a->logical += 4ull * n_ids[1];
        TRY(pch_vx_builder_append_valid(S(TOKENS_COMPLETION_IDS), a->err));
    } else {
        TRY(put_null(a, S(TOKENS_COMPLETION_IDS)));
    }
    if (has_arr[0] || has_arr[1]) *flags |= PJ_SUM_HAS_TOKEN_IDS;
    if (has_arr[2]) {
        pch_vx_builder *l;
        lpw = real_width((const double *)(const void *)a->tmp.data, n_lp);
        l = lpw == 32 ? S(TOKENS_LOGPROBS32) : S(TOKENS_LOGPROBS64);
        TRY(pch_vx_builder_append_doubles(elem(l), (const double *)(const void *)a->tmp.data, n_lp, a->err));
        a->logical += (uint64_t)n_lp * (lpw / 8);
        TRY(pch_vx_builder_append_valid(l, a->err));
        TRY(put_null(a, lpw == 32 ? S(TOKENS_LOGPROBS64) : S(TOKENS_LOGPROBS32)));
        *flags |= PJ_SUM_HAS_LOGPROBS;
        /* §6.5: logprobs align with completion_token_ids; a mismatch is kept and flagged */
        if (has_arr[1] && n_ids[1] != n_lp) *warn |= PJ_W_LOGPROB_LENGTH;
    } else {
        TRY(put_null(a, S(TOKENS_LOGPROBS32)));
        TRY(put_null(a, S(TOKENS_LOGPROBS64)));
    }
    return esc_end(a, S(TOKENS_METRICS_ESCAPE));
}

static const char *const source_names[4] = { NULL, "system", "user", "agent" };

static int put_step(app *a, const pch_atif_step *s, pj_traj_info *info, uint8_t *mask, uint64_t *model_bloom,
                    uint64_t *tool_bloom, uint32_t *copied, uint64_t *ptok, uint64_t *ctok, uint32_t *warn,
                    uint8_t *flags)
{
    const pch_atif_raw *f = s->f;
    int64_t v;
    uint8_t src = 0;
    bool ts_typed = false;
    bool step_id_typed = f[PCH_ATIF_S_STEP_ID].ptr && int_text(f[PCH_ATIF_S_STEP_ID].ptr, f[PCH_ATIF_S_STEP_ID].len, &v);
    bool llm_typed = f[PCH_ATIF_S_LLM_CALL_COUNT].ptr &&
                     int_text(f[PCH_ATIF_S_LLM_CALL_COUNT].ptr, f[PCH_ATIF_S_LLM_CALL_COUNT].len, &v);
    bool copied_typed = f[PCH_ATIF_S_IS_COPIED_CONTEXT].ptr && s->is_copied_context >= 0;
    bool model_typed = is_str(&f[PCH_ATIF_S_MODEL_NAME]) && s->model_name;
    bool effort_typed = is_str(&f[PCH_ATIF_S_REASONING_EFFORT]);

    TRY(step_id_typed ? pch_vx_builder_append_int(S(STEPS_STEP_ID), s->step_id, a->err) : put_null(a, S(STEPS_STEP_ID)));
    /* timestamp: UTC ms, plus the original text only where the ms do not write it back */
    if (is_str(&f[PCH_ATIF_S_TIMESTAMP]) && s->timestamp) {
        ts_typed = true;
        if (s->has_timestamp) {
            char iso[32];
            pch_time_format_iso8601(iso, s->timestamp_ms);
            TRY(pch_vx_builder_append_int(S(STEPS_TS_MS), s->timestamp_ms, a->err));
            TRY(strcmp(iso, s->timestamp) == 0 ? put_null(a, S(STEPS_TS_TEXT)) : put_cstr(a, S(STEPS_TS_TEXT), s->timestamp));
            if (!info->has_ts || s->timestamp_ms < info->min_ts) info->min_ts = s->timestamp_ms;
            if (!info->has_ts || s->timestamp_ms > info->max_ts) info->max_ts = s->timestamp_ms;
            info->has_ts = true;
        } else {
            TRY(put_null(a, S(STEPS_TS_MS)));
            TRY(put_cstr(a, S(STEPS_TS_TEXT), s->timestamp));
        }
    } else {
        TRY(put_null(a, S(STEPS_TS_MS)));
        TRY(put_null(a, S(STEPS_TS_TEXT)));
    }
    if (is_str(&f[PCH_ATIF_S_SOURCE]))
        for (uint8_t k = 1; k < 4; k++) if (same_text(f[PCH_ATIF_S_SOURCE].ptr + 1, f[PCH_ATIF_S_SOURCE].len - 2, source_names[k])) src = k;
    TRY(pch_vx_builder_append_uint(S(STEPS_SOURCE), src, a->err));
    if (src) *mask |= (uint8_t)(1u << src);
    else if (f[PCH_ATIF_S_SOURCE].ptr) *mask |= 1;    /* has_other */
    TRY(model_typed ? put_cstr(a, S(STEPS_MODEL_NAME), s->model_name) : put_null(a, S(STEPS_MODEL_NAME)));
    if (model_typed) {
        *model_bloom |= pj_bloom_bits(s->model_name, strlen(s->model_name));
    }
    if (effort_typed) {
        const char *p = NULL;
        size_t n = 0;
        TRY(decode_str(a, &f[PCH_ATIF_S_REASONING_EFFORT], &p, &n));
        TRY(put_str(a, S(STEPS_REASONING_EFFORT), p, n));
    } else {
        TRY(put_null(a, S(STEPS_REASONING_EFFORT)));
    }
    TRY(llm_typed ? pch_vx_builder_append_int(S(STEPS_LLM_CALL_COUNT), s->llm_call_count, a->err)
                  : put_null(a, S(STEPS_LLM_CALL_COUNT)));
    TRY(copied_typed ? pch_vx_builder_append_bool(S(STEPS_COPIED), s->is_copied_context == 1, a->err)
                     : put_null(a, S(STEPS_COPIED)));
    if (s->is_copied_context == 1) (*copied)++;

    /* message and reasoning content */
    TRY(put_message(a, &f[PCH_ATIF_S_MESSAGE]));
    TRY(put_value(a, &f[PCH_ATIF_S_REASONING_CONTENT], S(MESSAGE_RKIND), S(MESSAGE_RHOT), S(MESSAGE_RCOLD),
                  S(MESSAGE_RREF)));
    TRY(put_calls(a, s, tool_bloom));
    TRY(put_results(a, s));
    TRY(put_metrics(a, s, ptok, ctok, warn, flags));

    /* the step's escape object: untyped known fields, extra, unknown members */
    esc_begin(a);
    if (!step_id_typed) TRY(esc_raw(a, "step_id", &f[PCH_ATIF_S_STEP_ID]));
    if (!ts_typed) TRY(esc_raw(a, "timestamp", &f[PCH_ATIF_S_TIMESTAMP]));
    if (!src) TRY(esc_raw(a, "source", &f[PCH_ATIF_S_SOURCE]));
    if (!model_typed) TRY(esc_raw(a, "model_name", &f[PCH_ATIF_S_MODEL_NAME]));
    if (!effort_typed) TRY(esc_raw(a, "reasoning_effort", &f[PCH_ATIF_S_REASONING_EFFORT]));
    if (f[PCH_ATIF_S_METRICS].ptr && f[PCH_ATIF_S_METRICS].ptr[0] != '{') TRY(esc_raw(a, "metrics", &f[PCH_ATIF_S_METRICS]));
    if (!llm_typed) TRY(esc_raw(a, "llm_call_count", &f[PCH_ATIF_S_LLM_CALL_COUNT]));
    if (!copied_typed) TRY(esc_raw(a, "is_copied_context", &f[PCH_ATIF_S_IS_COPIED_CONTEXT]));
    if (!s->has_tool_calls) TRY(esc_raw(a, "tool_calls", &f[PCH_ATIF_S_TOOL_CALLS]));     /* null */
    if (!s->has_observation) TRY(esc_raw(a, "observation", &f[PCH_ATIF_S_OBSERVATION]));
    TRY(esc_raw(a, "extra", &f[PCH_ATIF_S_EXTRA]));
    TRY(esc_unknown(a, s->unknown, s->n_unknown));
    TRY(esc_end(a, S(STEPS_ESCAPE)));
    TRY(pch_vx_builder_append_valid(S(STEPS_ASSET_ID), a->err));
    TRY(pch_vx_builder_append_valid(S(STEPS_ASSET_PATH), a->err));
    info->calls += s->n_calls;
    info->results += s->n_results;
    return PCH_OK;
}

/* Raw JSON bytes of a step (its members' spans): the measure of a page of a huge trajectory. */
static uint64_t members_bytes(const pch_atif_raw *f, int nf, const pch_atif_member *u, uint32_t nu)
{
    uint64_t n = 0;
    for (int k = 0; k < nf; k++) n += f[k].len;
    for (uint32_t k = 0; k < nu; k++) n += u[k].key_len + u[k].value.len;
    return n;
}

static uint64_t step_bytes(const pch_atif_step *s)
{
    /* tool calls and results are parsed member by member (the step keeps no raw span of them) */
    uint64_t n = members_bytes(s->f, PCH_ATIF_S_N, s->unknown, s->n_unknown);
    for (uint32_t k = 0; k < s->n_calls; k++)
        n += members_bytes(s->calls[k].f, PCH_ATIF_C_N, s->calls[k].unknown, s->calls[k].n_unknown);
    for (uint32_t k = 0; k < s->n_results; k++)
        n += members_bytes(s->results[k].f, PCH_ATIF_R_N, s->results[k].unknown, s->results[k].n_unknown);
    return n;
}

/* Pages of a trajectory (RFC-0006 §7.2: a trajectory above the cluster target is its own
** cluster and its child lanes are paged): consecutive step ranges of at most page_bytes raw
** step bytes each (a larger single step is a page of its own). starts[p] = first step of
** page p; returns the number of pages (1 for an ordinary trajectory). */
static uint32_t page_starts(const pch_atif_trajectory *t, uint64_t page_bytes, uint32_t *starts)
{
    uint32_t np = 1;
    uint64_t acc = 0;
    if (starts) starts[0] = 0;
    for (uint32_t s = 0; s < t->n_steps; s++) {
        uint64_t b = step_bytes(&t->steps[s]);
        if (acc && acc + b > page_bytes) {
            if (starts) starts[np] = s;
            np++;
            acc = 0;
        }
        acc += b;
    }
    return np;
}

/* Identity, run and lineage lanes of one row (§6.2). Continuation pages repeat the keys and
** the document place, and leave the trajectory's own values to the first page. */
static int put_identity(app *a, const pch_atif_doc *doc, const pch_atif_trajectory *t, uint32_t page,
                        uint32_t pages, bool typed[6])
{
    uint8_t kf = 0;
    const pch_atif_trajectory *par = t->parent >= 0 ? pch_atif_doc_get(doc, (size_t)t->parent) : NULL;
    static const int str_lanes[6] = { PJ_ID_SCHEMA_VERSION, PJ_ID_SESSION_ID, PJ_ID_TRAJECTORY_ID,
                                      PJ_ID_AGENT_NAME, PJ_ID_AGENT_VERSION, PJ_ID_AGENT_MODEL_NAME };
    const char *strs[6] = { t->schema_version, t->session_id, t->trajectory_id, t->agent_name, t->agent_version,
                            t->agent_model_name };
    TRY(put_cstr(a, B(ID_SOURCE_ID), t->source_id ? t->source_id : ""));
    TRY(put_cstr(a, B(ID_RUN_KEY), t->run_key));
    TRY(put_cstr(a, B(ID_TRAJECTORY_KEY), t->trajectory_key));
    if (t->run_key_generated) kf |= PJ_KEY_RUN_GENERATED;
    if (t->trajectory_key_generated) kf |= PJ_KEY_TRAJ_GENERATED;
    if (t->has_agent) kf |= PJ_KEY_HAS_AGENT;
    if (t->has_steps) kf |= PJ_KEY_HAS_STEPS;
    if (t->has_subagent_trajectories) kf |= PJ_KEY_HAS_SUBAGENTS;
    TRY(pch_vx_builder_append_uint(B(ID_KEY_FLAGS), kf, a->err));
    TRY(put_cstr(a, B(ID_DOC_PATH), a->doc_path));
    TRY(pch_vx_builder_append_uint(B(ID_PREORDER), t->preorder, a->err));
    TRY(par ? put_cstr(a, B(ID_PARENT_RUN_KEY), par->run_key) : put_null(a, B(ID_PARENT_RUN_KEY)));
    TRY(par ? put_cstr(a, B(ID_PARENT_TRAJECTORY_KEY), par->trajectory_key) : put_null(a, B(ID_PARENT_TRAJECTORY_KEY)));
    TRY(par ? pch_vx_builder_append_uint(B(ID_PARENT_LOCAL_ORDINAL), (uint64_t)t->parent_local_ordinal, a->err)
            : put_null(a, B(ID_PARENT_LOCAL_ORDINAL)));
    for (uint32_t c = 0; page == 0 && c < t->n_children; c++) {
        const pch_atif_trajectory *ch = pch_atif_doc_get(doc, t->children[c]);
        TRY(put_cstr(a, elem(B(ID_CHILD_RUN_KEYS)), ch->run_key));
        TRY(put_cstr(a, elem(B(ID_CHILD_TRAJECTORY_KEYS)), ch->trajectory_key));
    }
    TRY(pch_vx_builder_append_valid(B(ID_CHILD_RUN_KEYS), a->err));
    TRY(pch_vx_builder_append_valid(B(ID_CHILD_TRAJECTORY_KEYS), a->err));
    typed[0] = is_str(&t->f[PCH_ATIF_T_SCHEMA_VERSION]) && t->schema_version;
    typed[1] = is_str(&t->f[PCH_ATIF_T_SESSION_ID]) && t->session_id;
    typed[2] = is_str(&t->f[PCH_ATIF_T_TRAJECTORY_ID]) && t->trajectory_id;
    typed[3] = t->has_agent && is_str(&t->agent_f[0]) && t->agent_name;
    typed[4] = t->has_agent && is_str(&t->agent_f[1]) && t->agent_version;
    typed[5] = t->has_agent && is_str(&t->agent_f[2]) && t->agent_model_name;
    for (int k = 0; k < 6; k++) TRY(put_cstr(a, a->lane[str_lanes[k]], page == 0 && typed[k] ? strs[k] : NULL));
    TRY(pch_vx_builder_append_uint(B(ID_STATE), (uint64_t)t->state, a->err));
    TRY(pch_vx_builder_append_uint(B(ID_PAGE_INDEX), page, a->err));
    return pch_vx_builder_append_uint(B(ID_PAGE_COUNT), pages, a->err);
}

/* The trajectory escape (§6.4): untyped known fields, the agent's other members, unknowns. */
static int put_traj_escape(app *a, const pch_atif_trajectory *t, const bool typed[6], uint8_t *flags)
{
    int rc = PCH_OK;
    esc_begin(a);
    if (!typed[0]) TRY(esc_raw(a, "schema_version", &t->f[PCH_ATIF_T_SCHEMA_VERSION]));
    if (!typed[1]) TRY(esc_raw(a, "session_id", &t->f[PCH_ATIF_T_SESSION_ID]));
    if (!typed[2]) TRY(esc_raw(a, "trajectory_id", &t->f[PCH_ATIF_T_TRAJECTORY_ID]));
    if (t->has_agent) {
        pch_buf saved;
        static const char *const ak[5] = { "name", "version", "model_name", "tool_definitions", "extra" };
        bool at[5] = { typed[3], typed[4], typed[5], false, false };
        pch_buf_init(&saved, NULL);
        pch_buf_move(&a->esc, &saved);         /* build the agent remainder in a->esc */
        for (int k = 0; k < 5 && rc >= 0; k++) if (!at[k]) rc = esc_raw(a, ak[k], &t->agent_f[k]);
        if (rc >= 0) rc = esc_unknown(a, t->agent_unknown, t->n_agent_unknown);
        if (rc >= 0 && !a->esc.len) rc = pch_buf_append(&a->esc, "{", 1);
        rc = rc < 0 ? rc : pch_buf_putc(&a->esc, '}');
        pch_buf_move(&a->esc, &a->tmp);
        pch_buf_move(&saved, &a->esc);
        if (rc < 0) return oom(a);
        TRY(esc_add(a, "agent", 5, (const char *)a->tmp.data, a->tmp.len));
    }
    if (!t->has_agent) TRY(esc_raw(a, "agent", &t->f[PCH_ATIF_T_AGENT]));
    if (!t->has_steps) TRY(esc_raw(a, "steps", &t->f[PCH_ATIF_T_STEPS]));
    if (!t->has_subagent_trajectories) TRY(esc_raw(a, "subagent_trajectories", &t->f[PCH_ATIF_T_SUBAGENT_TRAJECTORIES]));
    TRY(esc_raw(a, "notes", &t->f[PCH_ATIF_T_NOTES]));
    TRY(esc_raw(a, "final_metrics", &t->f[PCH_ATIF_T_FINAL_METRICS]));
    if (t->f[PCH_ATIF_T_FINAL_METRICS].ptr && memmem(t->f[PCH_ATIF_T_FINAL_METRICS].ptr, t->f[PCH_ATIF_T_FINAL_METRICS].len, "\"reward\"", 8))
        *flags |= PJ_SUM_HAS_REWARD;
    TRY(esc_raw(a, "continued_trajectory_ref", &t->f[PCH_ATIF_T_CONTINUED_TRAJECTORY_REF]));
    TRY(esc_raw(a, "extra", &t->f[PCH_ATIF_T_EXTRA]));
    TRY(esc_unknown(a, t->unknown, t->n_unknown));
    return esc_end(a, B(ID_ESCAPE));
}

int pj_model_append(pch_vx_builder *root, pj_content *content, pch_json_parser *jp,
                    const pch_atif_doc *doc, size_t i, const pch_vxp_build_options *o,
                    pj_row_cb row_cb, void *payload, pj_traj_info *info, pch_error *err)
{
    const pch_atif_trajectory *t = pch_atif_doc_get(doc, i);
    app aa, *a = &aa;
    uint32_t np, *starts = NULL;
    int rc = PCH_OK;
    memset(a, 0, sizeof *a);
    memset(info, 0, sizeof *info);
    if (!t) return pch_error_set(err, PCH_EINVAL, "projection: no trajectory %zu", i);
    a->content = content;
    a->o = o;
    a->err = err;
    a->doc_path = t->doc_path ? t->doc_path : "";
    for (int g = 0; g < PJ_G_N; g++) a->group[g] = pch_vx_builder_child(root, (uint32_t)g);
    for (int l = 0; l < PJ_L_N; l++) a->lane[l] = pch_vx_builder_child(a->group[pj_lane_group[l]], pj_lane_field(l));
    a->jp = jp;
    pch_buf_init(&a->esc, NULL);
    pch_buf_init(&a->tmp, NULL);
    pch_buf_init(&a->cids, NULL);
    pch_buf_init(&a->mem, NULL);
    pch_buf_init(&a->pids, NULL);
    np = page_starts(t, o->cluster_bytes, NULL);
    if (!(starts = malloc(((size_t)np + 1) * sizeof *starts))) return oom(a);
    page_starts(t, o->cluster_bytes, starts);
    starts[np] = t->n_steps;

#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    /* one row per page; every lane of a row is complete before row_cb, which may close the
    ** cluster between two pages */
    for (uint32_t pg = 0; pg < np; pg++) {
        pj_traj_info pi;
        uint8_t mask = 0, flags = 0;
        uint64_t model_bloom = 0, tool_bloom = 0, ptok = 0, ctok = 0, logical0 = a->logical;
        uint32_t copied = 0, warn = pg == 0 ? t->warnings : 0;
        bool typed[6], external0 = a->external;
        memset(&pi, 0, sizeof pi);
        a->external = false;
        CK(put_identity(a, doc, t, pg, np, typed));
        for (uint32_t s = starts[pg]; s < starts[pg + 1]; s++)
            CK(put_step(a, &t->steps[s], &pi, &mask, &model_bloom, &tool_bloom, &copied, &ptok, &ctok, &warn, &flags));
        CK(put_prompts(a));
        for (int l = 0; l < PJ_L_N; l++)
            if (pj_lane_group[l] >= PJ_G_STEPS) CK(pch_vx_builder_append_valid(a->lane[l], err));
        pi.steps = starts[pg + 1] - starts[pg];
        CK(pch_vx_builder_append_uint(B(ID_WARNINGS), warn, err));
        CK(pch_vx_builder_append_uint(B(ID_REVISION), 0, err));
        if (pg == 0) CK(put_traj_escape(a, t, typed, &flags));
        else CK(put_null(a, B(ID_ESCAPE)));
        /* summary (§14.2) of the page's steps; a trajectory's is the union of its pages' */
        if (a->external) flags |= PJ_SUM_HAS_EXTERNAL;
        pi.logical_bytes = a->logical - logical0;
        pi.tokens = ptok + ctok;
        CK(pch_vx_builder_append_uint(B(SUMMARY_STEP_COUNT), pi.steps, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_TOOL_CALL_COUNT), pi.calls, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_RESULT_COUNT), pi.results, err));
        CK(pi.has_ts ? pch_vx_builder_append_int(B(SUMMARY_MIN_TS), pi.min_ts, err) : put_null(a, B(SUMMARY_MIN_TS)));
        CK(pi.has_ts ? pch_vx_builder_append_int(B(SUMMARY_MAX_TS), pi.max_ts, err) : put_null(a, B(SUMMARY_MAX_TS)));
        CK(pch_vx_builder_append_uint(B(SUMMARY_SOURCE_MASK), mask, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_MODEL_BLOOM), model_bloom, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_TOOL_BLOOM), tool_bloom, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_COPIED_STEPS), copied, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_PROMPT_TOKENS), ptok, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_COMPLETION_TOKENS), ctok, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_FLAGS), flags, err));
        CK(pch_vx_builder_append_uint(B(SUMMARY_LOGICAL_BYTES), pi.logical_bytes, err));
        for (int g = 0; g < PJ_G_N; g++) CK(pch_vx_builder_append_valid(a->group[g], err));
        CK(pch_vx_builder_append_valid(root, err));
        a->external = a->external || external0;
        /* the trajectory's totals for the directory */
        info->steps += pi.steps;
        info->calls += pi.calls;
        info->results += pi.results;
        info->logical_bytes += pi.logical_bytes;
        info->tokens += pi.tokens;
        if (pi.has_ts) {
            if (!info->has_ts || pi.min_ts < info->min_ts) info->min_ts = pi.min_ts;
            if (!info->has_ts || pi.max_ts > info->max_ts) info->max_ts = pi.max_ts;
            info->has_ts = true;
        }
        info->pages = np;
        if (row_cb) CK(row_cb(payload, &pi, pg + 1 < np, err));
    }
#undef CK
done:
    free(starts);
    free(a->ps);
    pch_buf_dispose(&a->esc);
    pch_buf_dispose(&a->tmp);
    pch_buf_dispose(&a->cids);
    pch_buf_dispose(&a->mem);
    pch_buf_dispose(&a->pids);
    return rc;
}

/* ------------------------------------------------------------------ reader side */

int pj_rows_bind(pj_rows *r, const pch_vx_array *root, pch_error *err)
{
    const pch_vx_dtype *d = root->dtype;
    memset(r, 0, sizeof *r);
    if (!d || d->kind != PCH_VX_STRUCT) return pch_error_set(err, PCH_ECORRUPT, "projection: rows are not a struct");
    for (uint32_t i = 0; i < d->n_fields; i++) {
        const char *name = d->names[i];
        const pch_vx_array *c = root->children[i];
        const char *dot = strchr(name, '.');
        for (int g = 0; g < PJ_G_N; g++) {
            size_t gl = strlen(pj_group_names[g]);
            if (!dot && strcmp(name, pj_group_names[g]) == 0) {
                r->g[g] = c;
                if (c->dtype->kind != PCH_VX_STRUCT) return pch_error_set(err, PCH_ECORRUPT, "projection: group %s is not a struct", name);
                for (uint32_t k = 0; k < c->dtype->n_fields; k++)
                    for (int l = 0; l < PJ_L_N; l++)
                        if (pj_lane_group[l] == g && strcmp(c->dtype->names[k], pj_lane_names[l]) == 0) r->l[l] = c->children[k];
            } else if (dot && (size_t)(dot - name) == gl && memcmp(name, pj_group_names[g], gl) == 0) {
                for (int l = 0; l < PJ_L_N; l++)
                    if (pj_lane_group[l] == g && strcmp(dot + 1, pj_lane_names[l]) == 0) r->l[l] = c;
            }
        }
    }
    return PCH_OK;
}

static bool ok(const pch_vx_array *a, uint64_t i) { return a && i < a->len && pch_vx_array_is_valid(a, i); }

static uint64_t load_u(const pch_vx_array *a, uint64_t i)
{
    switch (a->dtype->ptype) {
    case PCH_VX_U8: case PCH_VX_I8: return a->data[i];
    case PCH_VX_U16: case PCH_VX_I16: return pch_load_le16(a->data + 2 * i);
    case PCH_VX_U32: case PCH_VX_I32: return pch_load_le32(a->data + 4 * i);
    default: return pch_load_le64(a->data + 8 * i);
    }
}
static double load_f(const pch_vx_array *a, uint64_t i)
{
    if (a->dtype->ptype == PCH_VX_F32) { float f; memcpy(&f, a->data + 4 * i, 4); return f; }
    double d; memcpy(&d, a->data + 8 * i, 8); return d;
}
static bool str_at(const pch_vx_array *a, uint64_t i, const char **p, size_t *n)
{
    if (!ok(a, i)) return false;
    *p = (const char *)a->data + a->offsets[i];
    *n = (size_t)(a->offsets[i + 1] - a->offsets[i]);
    return true;
}

typedef struct rd {
    const pj_rows *r;
    pch_buf *out;
    pj_blobs *blobs;
    pch_vxp_hydration mode;
    pch_vxp_query_stats *st;
    pch_json_parser *jp[2];    /* escape objects: [0] current object, [1] nested (metrics) */
    pch_buf scratch;
    pch_buf prompts;           /* the row's rebuilt prefix-form prompts (§8.2) */
    pj_prompt *pcache;         /* per step of the row being written (pj_prompt_ids) */
    size_t pcache_cap;
    pch_error *err;
} rd;

#define OUT(x) do { if ((x) < 0) return pch_error_set(d->err, PCH_ENOMEM, "projection: out of memory"); } while (0)
static int corrupt(rd *d, const char *what) { return pch_error_set(d->err, PCH_ECORRUPT, "projection: %s", what); }

/* Range of list row i of lane a (which must have been read). */
static int range(rd *d, const pch_vx_array *a, uint64_t i, uint64_t *b, uint64_t *e)
{
    *b = *e = 0;
    if (!a || a->dtype->kind != PCH_VX_LIST || i >= a->len) return corrupt(d, "lane missing or not a list");
    *b = (uint64_t)a->offsets[i];
    *e = (uint64_t)a->offsets[i + 1];
    return PCH_OK;
}
static const pch_vx_array *items(const pch_vx_array *a) { return a && a->n_children ? a->children[0] : NULL; }

static int key(rd *d, bool *first, const char *k)
{
    if (!*first) OUT(pch_buf_putc(d->out, ','));
    *first = false;
    OUT(pch_json__write_string(d->out, k, strlen(k)));
    OUT(pch_buf_putc(d->out, ':'));
    return PCH_OK;
}
static int put_json_str(rd *d, const char *p, size_t n)
{
    if (pch_json__write_string(d->out, p, n) < 0) return corrupt(d, "string lane is not UTF-8");
    return PCH_OK;
}
/* Text of a utf8 lane: the Vortex reader checked it to be UTF-8 when it decoded the lane. */
static int put_lane_str(rd *d, const char *p, size_t n)
{
    OUT(pch_json__write_utf8(d->out, p, n));
    return PCH_OK;
}
/* A raw JSON text from a lane: validated before it is copied into the document. */
static int put_raw_json(rd *d, const char *p, size_t n)
{
    if (pch_json_validate(NULL, p, n, NULL, NULL, NULL, NULL) < 0) return corrupt(d, "JSON lane value is not valid JSON");
    OUT(pch_buf_append(d->out, p, n));
    return PCH_OK;
}

/* Parse an escape object (or NULL when the lane value is null). */
static int escape(rd *d, int slot, const pch_vx_array *a, uint64_t i, const pch_json_value **v, const char **src)
{
    const char *p;
    size_t n;
    *v = NULL;
    *src = NULL;
    if (!a || !str_at(a, i, &p, &n)) return PCH_OK;
    if (pch_json_parser_parse(d->jp[slot], p, n, v, d->err) < 0 || (*v)->kind != PCH_JSON_OBJECT)
        return pch_error_set(d->err, PCH_ECORRUPT, "projection: escape lane value is not a JSON object");
    *src = p;
    return PCH_OK;
}
static int esc_put(rd *d, bool *first, const pch_json_value *e, const char *src, const char *k)
{
    const pch_json_value *v = e ? pch_json_get(e, k, strlen(k)) : NULL;
    if (!v) return PCH_OK;
    PCH_TRY(key(d, first, k));
    if (pch_json__write_value(d->out, v, src) < 0) return corrupt(d, "escape value");
    return PCH_OK;
}
static bool known(const char *k, size_t n, const char *const *keys, size_t nk)
{
    for (size_t i = 0; i < nk; i++) if (strlen(keys[i]) == n && memcmp(keys[i], k, n) == 0) return true;
    return false;
}
/* Members of e whose keys are not schema keys (unknown members), in stored order. */
static int esc_rest(rd *d, bool *first, const pch_json_value *e, const char *src, const char *const *keys, size_t nk)
{
    if (!e) return PCH_OK;
    for (uint32_t i = 0; i < e->n; i++) {
        const pch_json_member *m = &e->u.members[i];
        if (known(m->key, m->key_len, keys, nk)) continue;
        if (!*first) OUT(pch_buf_putc(d->out, ','));
        *first = false;
        OUT(pch_json__write_string(d->out, m->key, m->key_len));
        OUT(pch_buf_putc(d->out, ':'));
        if (pch_json__write_value(d->out, &m->value, src) < 0) return corrupt(d, "escape value");
    }
    return PCH_OK;
}

/* One content value at item i of the leaf arrays hot / cold / ref (§9.1); TEXT → a JSON
** string, JSON → the validated text. Preview (§13.6): cold values are cut to a preview and
** external ones are not read; both become an explicit preview object. */
static int content(rd *d, const pch_vx_array *hot, const pch_vx_array *cold, const pch_vx_array *ref,
                   uint64_t i, bool text)
{
    const char *p;
    size_t n;
    if (str_at(hot, i, &p, &n)) {
        d->st->bytes_decoded += n;
        return text ? put_lane_str(d, p, n) : put_raw_json(d, p, n);
    }
    if (str_at(cold, i, &p, &n)) {
        d->st->bytes_decoded += n;
        if (d->mode == PCH_VXP_PREVIEW) {
            size_t k = n < 256 ? n : 256;
            while (k < n && k > 0 && ((uint8_t)p[k] & 0xc0) == 0x80) k--;   /* UTF-8 boundary */
            OUT(pch_buf_printf(d->out, "{\"pchronicle_preview\":\"cold\",\"bytes\":%zu,\"preview\":", n));
            if (pch_json__write_string(d->out, p, k) < 0) return corrupt(d, "cold value is not UTF-8");
            OUT(pch_buf_putc(d->out, '}'));
            return PCH_OK;
        }
        return text ? put_lane_str(d, p, n) : put_raw_json(d, p, n);
    }
    if (str_at(ref, i, &p, &n)) {
        if (n != 32) return corrupt(d, "content id is not 32 bytes");
        if (d->mode == PCH_VXP_METADATA && text) {   /* late hydration: never read (§13.6) */
            OUT(pch_buf_append(d->out, "\"\"", 2));
            return PCH_OK;
        }
        if (d->mode == PCH_VXP_PREVIEW || !d->blobs) {
            char hex[65];
            pch_hex_encode(hex, (const uint8_t *)p, 32);
            OUT(pch_buf_printf(d->out, "{\"pchronicle_preview\":\"external\",\"content_id\":\"blake3:%s\"}", hex));
            return PCH_OK;
        }
        pch_buf_clear(&d->scratch);
        PCH_TRY(pj_blobs_get(d->blobs, (const uint8_t *)p, &d->scratch, d->st, d->err));
        return text ? put_json_str(d, (const char *)d->scratch.data, d->scratch.len)
                    : put_raw_json(d, (const char *)d->scratch.data, d->scratch.len);
    }
    return corrupt(d, "content value has no hot, cold or external part");
}
static bool has_content(const pch_vx_array *hot, const pch_vx_array *cold, const pch_vx_array *ref, uint64_t i)
{
    return ok(hot, i) || ok(cold, i) || ok(ref, i);
}

#define L1(x) items(d->r->l[PJ_##x])
#define L2(x) items(items(d->r->l[PJ_##x]))

/* message / reasoning / result content by kind (absent: nothing written). */
static int content_kind(rd *d, bool *first, const char *k, uint64_t kind, const pch_vx_array *hot,
                        const pch_vx_array *cold, const pch_vx_array *ref, uint64_t i)
{
    if (kind == PJ_CK_ABSENT) return PCH_OK;
    if (kind != PJ_CK_TEXT && kind != PJ_CK_JSON) return corrupt(d, "unknown content kind");
    PCH_TRY(key(d, first, k));
    return content(d, hot, cold, ref, i, kind == PJ_CK_TEXT);
}

static const char *const step_keys[] = {
    "step_id", "timestamp", "source", "model_name", "reasoning_effort", "message",
    "reasoning_content", "tool_calls", "observation", "metrics", "llm_call_count",
    "is_copied_context", "extra" };
static const char *const call_keys[] = { "tool_call_id", "function_name", "arguments", "extra" };
static const char *const result_keys[] = { "source_call_id", "content", "subagent_trajectory_ref", "extra" };
static const char *const metrics_keys[] = { "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd",
                                            "prompt_token_ids", "completion_token_ids", "logprobs" };
static const char *const traj_keys[] = {
    "schema_version", "session_id", "trajectory_id", "agent", "steps", "notes",
    "final_metrics", "continued_trajectory_ref", "extra", "subagent_trajectories" };
static const char *const agent_keys[] = { "name", "version", "model_name", "tool_definitions", "extra" };
#define NK(a) (sizeof(a) / sizeof((a)[0]))

/* A list lane item view: lane l at step s must span [b, e) of its items. */
static int sub(rd *d, int l, uint64_t s, uint64_t want_b, uint64_t want_e)
{
    uint64_t b = 0, e = 0;
    PCH_TRY(range(d, items(d->r->l[l]), s, &b, &e));
    if (b != want_b || e != want_e) return corrupt(d, "lanes of one level disagree on their offsets");
    return PCH_OK;
}

static int write_parts(rd *d, uint64_t s)
{
    uint64_t b, e;
    PCH_TRY(range(d, L1(MESSAGE_PART_KIND), s, &b, &e));
    for (int l = PJ_MESSAGE_PART_HOT; l <= PJ_MESSAGE_PART_ESCAPE; l++) PCH_TRY(sub(d, l, s, b, e));
    OUT(pch_buf_putc(d->out, '['));
    for (uint64_t q = b; q < e; q++) {
        const pch_vx_array *pk = L2(MESSAGE_PART_KIND);
        if (q > b) OUT(pch_buf_putc(d->out, ','));
        if (load_u(pk, q) == PJ_PK_TEXT) {
            OUT(pch_buf_append_str(d->out, "{\"type\":\"text\",\"text\":"));
            PCH_TRY(content(d, L2(MESSAGE_PART_HOT), L2(MESSAGE_PART_COLD), L2(MESSAGE_PART_REF), q, true));
            OUT(pch_buf_putc(d->out, '}'));
        } else {
            const char *p;
            size_t n;
            if (!str_at(L2(MESSAGE_PART_ESCAPE), q, &p, &n)) return corrupt(d, "content part without its JSON");
            PCH_TRY(put_raw_json(d, p, n));
        }
    }
    OUT(pch_buf_putc(d->out, ']'));
    return PCH_OK;
}

static int write_calls(rd *d, uint64_t s)
{
    const pj_rows *r = d->r;
    const pch_vx_array *ids = items(r->l[PJ_TOOLS_CALL_ID]);
    uint64_t b, e;
    PCH_TRY(range(d, ids, s, &b, &e));
    for (int l = PJ_TOOLS_FUNCTION; l <= PJ_TOOLS_CALL_ESCAPE; l++) {
        if (!r->l[l]) continue;
        uint64_t lb, le;
        PCH_TRY(range(d, items(r->l[l]), s, &lb, &le));
        if (le - lb != e - b) return corrupt(d, "tool-call lanes disagree on their counts");
        if (lb != b) return corrupt(d, "tool-call lanes disagree on their offsets");
    }
    OUT(pch_buf_putc(d->out, '['));
    for (uint64_t c = b; c < e; c++) {
        const pch_json_value *esc;
        const char *src, *p;
        size_t n;
        bool first = true;
        if (c > b) OUT(pch_buf_putc(d->out, ','));
        OUT(pch_buf_putc(d->out, '{'));
        PCH_TRY(escape(d, 1, L2(TOOLS_CALL_ESCAPE), c, &esc, &src));
        if (str_at(items(ids), c, &p, &n)) { PCH_TRY(key(d, &first, "tool_call_id")); PCH_TRY(put_json_str(d, p, n)); }
        else PCH_TRY(esc_put(d, &first, esc, src, "tool_call_id"));
        if (str_at(L2(TOOLS_FUNCTION), c, &p, &n)) { PCH_TRY(key(d, &first, "function_name")); PCH_TRY(put_json_str(d, p, n)); }
        else PCH_TRY(esc_put(d, &first, esc, src, "function_name"));
        if (has_content(L2(TOOLS_ARGS_HOT), L2(TOOLS_ARGS_COLD), L2(TOOLS_ARGS_REF), c)) {
            PCH_TRY(key(d, &first, "arguments"));
            PCH_TRY(content(d, L2(TOOLS_ARGS_HOT), L2(TOOLS_ARGS_COLD), L2(TOOLS_ARGS_REF), c, false));
        }
        PCH_TRY(esc_put(d, &first, esc, src, "extra"));
        PCH_TRY(esc_rest(d, &first, esc, src, call_keys, NK(call_keys)));
        OUT(pch_buf_putc(d->out, '}'));
    }
    OUT(pch_buf_putc(d->out, ']'));
    return PCH_OK;
}

static int write_results(rd *d, uint64_t s)
{
    const pch_vx_array *ord = L1(TOOLS_RES_CALL);
    uint64_t b, e;
    PCH_TRY(range(d, ord, s, &b, &e));
    for (int l = PJ_TOOLS_RES_ORIGIN; l <= PJ_TOOLS_RES_ESCAPE; l++) PCH_TRY(sub(d, l, s, b, e));
    OUT(pch_buf_putc(d->out, '['));
    for (uint64_t q = b; q < e; q++) {
        const pch_json_value *esc;
        const char *src;
        bool first = true;
        if (q > b) OUT(pch_buf_putc(d->out, ','));
        OUT(pch_buf_putc(d->out, '{'));
        PCH_TRY(escape(d, 1, L2(TOOLS_RES_ESCAPE), q, &esc, &src));
        if (esc && pch_json_get(esc, "source_call_id", 14)) {
            PCH_TRY(esc_put(d, &first, esc, src, "source_call_id"));
        } else if (ok(L2(TOOLS_RES_CALL), q)) {
            /* implied: the id of the correlated call of this step (§5.5) */
            uint64_t c = load_u(L2(TOOLS_RES_CALL), q), cb, ce;
            const char *p;
            size_t n;
            PCH_TRY(range(d, L1(TOOLS_CALL_ID), s, &cb, &ce));
            if (c >= ce - cb || !str_at(L2(TOOLS_CALL_ID), cb + c, &p, &n)) return corrupt(d, "result call ordinal out of range");
            PCH_TRY(key(d, &first, "source_call_id"));
            PCH_TRY(put_json_str(d, p, n));
        }
        PCH_TRY(content_kind(d, &first, "content", load_u(L2(TOOLS_RES_KIND), q), L2(TOOLS_RES_HOT),
                             L2(TOOLS_RES_COLD), L2(TOOLS_RES_REF), q));
        PCH_TRY(esc_put(d, &first, esc, src, "subagent_trajectory_ref"));
        PCH_TRY(esc_put(d, &first, esc, src, "extra"));
        PCH_TRY(esc_rest(d, &first, esc, src, result_keys, NK(result_keys)));
        OUT(pch_buf_putc(d->out, '}'));
    }
    OUT(pch_buf_putc(d->out, ']'));
    return PCH_OK;
}

/* "[a,b,...]" of n unsigned values (get(i)) written in place: token-id lists are most of an
** `rl` document (printf per id was a quarter of a warm point read). */
#define WRITE_UINTS(d, n, get)                                                                  \
    do {                                                                                        \
        OUT(pch_buf_reserve((d)->out, 21 * (size_t)(n) + 2));                                   \
        char *o_ = (char *)(d)->out->data + (d)->out->len;                                      \
        size_t w_ = 0;                                                                          \
        o_[w_++] = '[';                                                                         \
        for (uint64_t i_ = 0; i_ < (n); i_++) {                                                 \
            if (i_) o_[w_++] = ',';                                                             \
            w_ += pch_json__fmt_u64(o_ + w_, (get));                                            \
        }                                                                                       \
        o_[w_++] = ']';                                                                         \
        (d)->out->len += w_;                                                                    \
    } while (0)

static int write_int_list(rd *d, const pch_vx_array *lane, uint64_t s)
{
    uint64_t b, e;
    const pch_vx_array *it = items(lane);
    PCH_TRY(range(d, lane, s, &b, &e));
    WRITE_UINTS(d, e - b, load_u(it, b + i_));
    return PCH_OK;
}

/* A float32 value as JSON: "%.17g" reads back as the same double (not the shortest-digits
** search, which dominated RL reads; and printf's own "%.17g" was half of a warm point read of
** an `rl` document: pch_json__fmt_g17_f32 writes the same bytes without it); a real keeps a
** '.' or exponent. */
static size_t fmt_f32_value(char t[32], double v)
{
    int n = (int)pch_json__fmt_g17_f32(t, v);
    if (!n) n = snprintf(t, 32, "%.17g", v);
    if (n > 0 && n < 29 && !strpbrk(t, ".eEn")) { t[n++] = '.'; t[n++] = '0'; t[n] = 0; }
    return n > 0 ? (size_t)n : 0;
}

static int write_real_list(rd *d, const pch_vx_array *lane, uint64_t s)
{
    uint64_t b, e;
    const pch_vx_array *it = items(lane);
    bool f32 = it && it->dtype->kind == PCH_VX_PRIMITIVE && it->dtype->ptype == PCH_VX_F32;
    char t[32];
    PCH_TRY(range(d, lane, s, &b, &e));
    OUT(pch_buf_putc(d->out, '['));
    for (uint64_t i = b; i < e; i++) {
        double v = load_f(it, i);
        size_t n;
        if (!isfinite(v)) return corrupt(d, "non-finite logprob");
        n = f32 ? fmt_f32_value(t, v) : pch_json__fmt_double(t, v);
        if (i > b) OUT(pch_buf_putc(d->out, ','));
        OUT(pch_buf_append(d->out, t, n));
    }
    OUT(pch_buf_putc(d->out, ']'));
    return PCH_OK;
}

static int prompt_corrupt(pch_error *err, const char *what) { return pch_error_set(err, PCH_ECORRUPT, "projection: %s", what); }

/* Step s of the row (list index; row steps from sb) into cache[s - sb]: the plain list in
** place, or its base rebuilt first (a chain no longer than PJ_PROMPT_CHAIN_MAX), its prefix
** copied and its suffix appended to scratch. */
static int prompt_rebuild(const pj_rows *r, uint64_t sb, uint64_t s, pch_buf *scratch, pj_prompt *cache, unsigned depth,
                          pch_error *err)
{
    const pch_vx_array *plain = items(r->l[PJ_TOKENS_PROMPT_IDS]), *base = items(r->l[PJ_TOKENS_PROMPT_BASE]),
                       *pre = items(r->l[PJ_TOKENS_PROMPT_PREFIX]), *suf = items(r->l[PJ_TOKENS_PROMPT_SUFFIX]),
                       *len = items(r->l[PJ_TOKENS_PROMPT_LEN]);
    pj_prompt *out = &cache[s - sb], *bp;
    uint64_t b, e, bi, k, want;
    if (out->done) return PCH_OK;
    memset(out, 0, sizeof *out);
    if (ok(plain, s)) {
        if (ok(base, s) || ok(pre, s) || ok(suf, s)) return prompt_corrupt(err, "a prompt in both the plain and the prefix form");
        b = (uint64_t)plain->offsets[s];
        e = (uint64_t)plain->offsets[s + 1];
        if (!ok(len, s) || load_u(len, s) != e - b) return prompt_corrupt(err, "a prompt's ids disagree with prompt_ids_len");
        out->has = true;
        out->ids = items(plain)->data + 4 * b;
        out->n = (size_t)(e - b);
        out->done = true;
        return PCH_OK;
    }
    if (!ok(base, s)) {
        if (ok(pre, s) || ok(suf, s) || ok(len, s)) return prompt_corrupt(err, "a prompt's prefix lanes are incomplete");
        out->done = true;
        return PCH_OK;
    }
    /* §8.2: the base is an earlier prompt of the same row, at most PJ_PROMPT_CHAIN_MAX links
    ** from a checkpoint */
    bi = load_u(base, s);
    if (!ok(pre, s) || !ok(suf, s) || !ok(len, s) || bi >= s - sb) return prompt_corrupt(err, "a prompt's base is not an earlier step of its row");
    if (depth >= PJ_PROMPT_CHAIN_MAX) return prompt_corrupt(err, "a prompt's chain of bases is longer than the checkpoint interval allows");
    PCH_TRY(prompt_rebuild(r, sb, sb + bi, scratch, cache, depth + 1, err));
    out = &cache[s - sb];
    bp = &cache[bi];
    if (!bp->has) return prompt_corrupt(err, "a prompt's base has no prompt ids");
    k = load_u(pre, s);
    b = (uint64_t)suf->offsets[s];
    e = (uint64_t)suf->offsets[s + 1];
    want = load_u(len, s);
    if (k > bp->n || k + (e - b) != want)
        return prompt_corrupt(err, "a prompt's prefix length or count disagrees with its base and prompt_ids_len");
    if (pch_buf_reserve(scratch, (size_t)(4 * want)) < 0) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    out->has = out->rebuilt = out->done = true;
    out->off = scratch->len;
    out->n = (size_t)want;
    /* after the reserve: a rebuilt base lives in scratch, which may just have moved */
    memcpy(scratch->data + scratch->len, bp->rebuilt ? scratch->data + bp->off : bp->ids, (size_t)(4 * k));
    memcpy(scratch->data + scratch->len + 4 * k, items(suf)->data + 4 * b, (size_t)(4 * (e - b)));
    scratch->len += (size_t)(4 * want);
    return PCH_OK;
}

int pj_prompt_ids(const pj_rows *r, uint64_t sb, uint64_t s, pch_buf *scratch, pj_prompt *cache, pch_error *err)
{
    if (!items(r->l[PJ_TOKENS_PROMPT_IDS]) || !items(r->l[PJ_TOKENS_PROMPT_BASE]) || !items(r->l[PJ_TOKENS_PROMPT_PREFIX]) ||
        !items(r->l[PJ_TOKENS_PROMPT_SUFFIX]) || !items(r->l[PJ_TOKENS_PROMPT_LEN]) || s < sb)
        return pch_error_set(err, PCH_EINVAL, "projection: the prompt lanes were not read");
    return prompt_rebuild(r, sb, s, scratch, cache, 0, err);
}

static int write_metrics(rd *d, uint64_t sb, uint64_t s)
{
    const pch_json_value *esc;
    const char *src;
    bool first = true;
    char t[32];
    OUT(pch_buf_putc(d->out, '{'));
    for (int k = 0; k < 3; k++) {
        const pch_vx_array *a = items(d->r->l[PJ_TOKENS_PROMPT_TOKENS + k]);
        if (ok(a, s)) {
            PCH_TRY(key(d, &first, metrics_keys[k]));
            OUT(pch_buf_printf(d->out, "%" PRId64, (int64_t)load_u(a, s)));
        }
    }
    if (ok(L1(TOKENS_COST_USD), s)) {
        double v = load_f(L1(TOKENS_COST_USD), s);
        if (!isfinite(v)) return corrupt(d, "non-finite cost_usd");
        PCH_TRY(key(d, &first, "cost_usd"));
        OUT(pch_buf_append(d->out, t, pch_json__fmt_double(t, v)));
    }
    if (d->mode != PJ_FULL_NO_TOKENS) {
        const pj_prompt *pr = &d->pcache[s - sb];
        PCH_TRY(pj_prompt_ids(d->r, sb, s, &d->prompts, d->pcache, d->err));
        if (pr->has) {
            const uint8_t *ids = pr->rebuilt ? d->prompts.data + pr->off : pr->ids;
            PCH_TRY(key(d, &first, "prompt_token_ids"));
            WRITE_UINTS(d, pr->n, pch_load_le32(ids + 4 * i_));
        }
        if (ok(L1(TOKENS_COMPLETION_IDS), s)) { PCH_TRY(key(d, &first, "completion_token_ids")); PCH_TRY(write_int_list(d, L1(TOKENS_COMPLETION_IDS), s)); }
        if (ok(L1(TOKENS_LOGPROBS32), s)) { PCH_TRY(key(d, &first, "logprobs")); PCH_TRY(write_real_list(d, L1(TOKENS_LOGPROBS32), s)); }
        else if (ok(L1(TOKENS_LOGPROBS64), s)) { PCH_TRY(key(d, &first, "logprobs")); PCH_TRY(write_real_list(d, L1(TOKENS_LOGPROBS64), s)); }
    }
    PCH_TRY(escape(d, 1, L1(TOKENS_METRICS_ESCAPE), s, &esc, &src));
    PCH_TRY(esc_rest(d, &first, esc, src, NULL, 0));
    OUT(pch_buf_putc(d->out, '}'));
    return PCH_OK;
}

static const char *const source_text[4] = { NULL, "\"system\"", "\"user\"", "\"agent\"" };

static int write_step(rd *d, uint64_t sb, uint64_t s)
{
    const pch_json_value *esc;
    const char *src, *p;
    size_t n;
    bool first = true;
    uint64_t k;
    PCH_TRY(escape(d, 0, L1(STEPS_ESCAPE), s, &esc, &src));
    OUT(pch_buf_putc(d->out, '{'));
    if (ok(L1(STEPS_STEP_ID), s)) {
        PCH_TRY(key(d, &first, "step_id"));
        OUT(pch_buf_printf(d->out, "%" PRId64, (int64_t)load_u(L1(STEPS_STEP_ID), s)));
    } else PCH_TRY(esc_put(d, &first, esc, src, "step_id"));
    if (str_at(L1(STEPS_TS_TEXT), s, &p, &n)) {
        PCH_TRY(key(d, &first, "timestamp"));
        PCH_TRY(put_json_str(d, p, n));
    } else if (ok(L1(STEPS_TS_MS), s)) {
        char iso[32];
        pch_time_format_iso8601(iso, (int64_t)load_u(L1(STEPS_TS_MS), s));
        PCH_TRY(key(d, &first, "timestamp"));
        PCH_TRY(put_json_str(d, iso, strlen(iso)));
    } else PCH_TRY(esc_put(d, &first, esc, src, "timestamp"));
    k = load_u(L1(STEPS_SOURCE), s);
    if (k > 3) return corrupt(d, "step source code out of range");
    if (k) { PCH_TRY(key(d, &first, "source")); OUT(pch_buf_append_str(d->out, source_text[k])); }
    else PCH_TRY(esc_put(d, &first, esc, src, "source"));
    if (str_at(L1(STEPS_MODEL_NAME), s, &p, &n)) { PCH_TRY(key(d, &first, "model_name")); PCH_TRY(put_json_str(d, p, n)); }
    else PCH_TRY(esc_put(d, &first, esc, src, "model_name"));
    if (str_at(L1(STEPS_REASONING_EFFORT), s, &p, &n)) { PCH_TRY(key(d, &first, "reasoning_effort")); PCH_TRY(put_json_str(d, p, n)); }
    else PCH_TRY(esc_put(d, &first, esc, src, "reasoning_effort"));
    /* message */
    k = load_u(L1(MESSAGE_KIND), s);
    if (k == PJ_CK_PARTS) { PCH_TRY(key(d, &first, "message")); PCH_TRY(write_parts(d, s)); }
    else {
        uint64_t pb, pe;
        PCH_TRY(range(d, L1(MESSAGE_PART_KIND), s, &pb, &pe));
        if (pe != pb) return corrupt(d, "content parts on a message that is not a parts list");
        PCH_TRY(content_kind(d, &first, "message", k, L1(MESSAGE_HOT), L1(MESSAGE_COLD), L1(MESSAGE_REF), s));
    }
    PCH_TRY(content_kind(d, &first, "reasoning_content", load_u(L1(MESSAGE_RKIND), s), L1(MESSAGE_RHOT),
                         L1(MESSAGE_RCOLD), L1(MESSAGE_RREF), s));
    if (ok(L1(TOOLS_CALL_ID), s)) { PCH_TRY(key(d, &first, "tool_calls")); PCH_TRY(write_calls(d, s)); }
    else {
        uint64_t cb, ce;
        PCH_TRY(range(d, L1(TOOLS_FUNCTION), s, &cb, &ce));
        if (ce != cb) return corrupt(d, "tool calls on a step without tool_calls");
        PCH_TRY(esc_put(d, &first, esc, src, "tool_calls"));
    }
    k = load_u(L1(TOOLS_OBS_KIND), s);
    if (k > 2) return corrupt(d, "observation kind out of range");
    if (k) {
        const pch_json_value *oe;
        const char *os;
        bool of = true;
        PCH_TRY(key(d, &first, "observation"));
        OUT(pch_buf_putc(d->out, '{'));
        if (k == 1) { PCH_TRY(key(d, &of, "results")); PCH_TRY(write_results(d, s)); }
        PCH_TRY(escape(d, 1, L1(TOOLS_OBS_ESCAPE), s, &oe, &os));
        PCH_TRY(esc_rest(d, &of, oe, os, NULL, 0));
        OUT(pch_buf_putc(d->out, '}'));
        /* the step escape parser may have been reused: parse it again */
        PCH_TRY(escape(d, 0, L1(STEPS_ESCAPE), s, &esc, &src));
    } else {
        PCH_TRY(esc_put(d, &first, esc, src, "observation"));
    }
    k = load_u(L1(TOKENS_METRICS_KIND), s);
    if (k > 1) return corrupt(d, "metrics kind out of range");
    if (k == 1) { PCH_TRY(key(d, &first, "metrics")); PCH_TRY(write_metrics(d, sb, s)); }
    else PCH_TRY(esc_put(d, &first, esc, src, "metrics"));
    if (ok(L1(STEPS_LLM_CALL_COUNT), s)) {
        PCH_TRY(key(d, &first, "llm_call_count"));
        OUT(pch_buf_printf(d->out, "%" PRId64, (int64_t)load_u(L1(STEPS_LLM_CALL_COUNT), s)));
    } else PCH_TRY(esc_put(d, &first, esc, src, "llm_call_count"));
    if (ok(L1(STEPS_COPIED), s)) {
        const pch_vx_array *c = L1(STEPS_COPIED);
        PCH_TRY(key(d, &first, "is_copied_context"));
        OUT(pch_buf_append_str(d->out, (c->data[s >> 3] >> (s & 7)) & 1 ? "true" : "false"));
    } else PCH_TRY(esc_put(d, &first, esc, src, "is_copied_context"));
    /* the step escape may have been replaced by nested parses: parse it again for the rest */
    PCH_TRY(escape(d, 0, L1(STEPS_ESCAPE), s, &esc, &src));
    PCH_TRY(esc_put(d, &first, esc, src, "extra"));
    PCH_TRY(esc_rest(d, &first, esc, src, step_keys, NK(step_keys)));
    OUT(pch_buf_putc(d->out, '}'));
    return PCH_OK;
}

static void rd_close(rd *d)
{
    pch_json_parser_free(d->jp[0]);
    pch_json_parser_free(d->jp[1]);
    pch_buf_dispose(&d->scratch);
    pch_buf_dispose(&d->prompts);
    free(d->pcache);
}

/* A zeroed prompt cache of n entries for the next row (pj_prompt_ids). */
int pj_prompt_cache(pj_prompt **cache, size_t *cap, size_t n)
{
    if (n > *cap) {
        pj_prompt *c = realloc(*cache, n * sizeof *c);
        if (!c) return PCH_ENOMEM;
        *cache = c;
        *cap = n;
    }
    if (n) memset(*cache, 0, n * sizeof **cache);
    return PCH_OK;
}

static int rd_open(rd *d, pch_vxp_query_stats *dummy, pch_buf *out, const pj_rows *r, uint64_t row, pj_blobs *blobs,
                   pch_vxp_hydration mode, pch_vxp_query_stats *st, pch_error *err)
{
    memset(d, 0, sizeof *d);
    memset(dummy, 0, sizeof *dummy);
    d->r = r;
    d->out = out;
    d->blobs = blobs;
    d->mode = mode;
    d->st = st ? st : dummy;
    d->err = err;
    for (int l = 0; l < PJ_L_N; l++)
        if (!r->l[l]) return pch_error_set(err, PCH_EINVAL, "projection: lane %s.%s was not read", pj_group_names[pj_lane_group[l]], pj_lane_names[l]);
    if (row >= r->l[PJ_ID_RUN_KEY]->len) return pch_error_set(err, PCH_EINVAL, "projection: row %" PRIu64 " out of range", row);
    pch_buf_init(&d->scratch, NULL);
    pch_buf_init(&d->prompts, NULL);
    if (pch_json_parser_new(&d->jp[0], NULL, NULL, err) < 0 || pch_json_parser_new(&d->jp[1], NULL, NULL, err) < 0) {
        rd_close(d);
        return PCH_ENOMEM;
    }
    return PCH_OK;
}

/* The step range of a row; every step lane must agree with step_id on it. */
static int step_range(rd *d, uint64_t row, uint64_t *sb, uint64_t *se)
{
    PCH_TRY(range(d, d->r->l[PJ_STEPS_STEP_ID], row, sb, se));
    for (int l = 0; l < PJ_L_N; l++) {
        uint64_t b, e;
        if (pj_lane_group[l] < PJ_G_STEPS) continue;
        PCH_TRY(range(d, d->r->l[l], row, &b, &e));
        if (b != *sb || e != *se)
            return pch_error_set(d->err, PCH_ECORRUPT, "projection: lane %s disagrees with step_id on the steps of row %" PRIu64, pj_lane_names[l], row);
    }
    return PCH_OK;
}

/* Steps [sb, se) as array items, each after a comma unless it is the array's first. */
static int write_steps(rd *d, uint64_t sb, uint64_t se, bool *first)
{
    pch_buf_clear(&d->prompts);
    if (pj_prompt_cache(&d->pcache, &d->pcache_cap, (size_t)(se - sb)) < 0)
        return pch_error_set(d->err, PCH_ENOMEM, "projection: out of memory");
    for (uint64_t s = sb; s < se; s++) {
        if (!*first && pch_buf_putc(d->out, ',') < 0) return PCH_ENOMEM;
        *first = false;
        PCH_TRY(write_step(d, sb, s));
    }
    return PCH_OK;
}

int pj_model_write_page(pch_buf *out, const pj_rows *r, uint64_t row, const char *traj_key, size_t traj_len,
                        uint32_t page, uint32_t pages, bool *first, pj_blobs *blobs, pch_vxp_hydration mode,
                        pch_vxp_query_stats *st, pch_error *err)
{
    rd dd, *d = &dd;
    pch_vxp_query_stats dummy;
    const char *kp;
    size_t kn;
    uint64_t sb, se;
    int rc;
    PCH_TRY(rd_open(d, &dummy, out, r, row, blobs, mode, st, err));
    if (!str_at(r->l[PJ_ID_TRAJECTORY_KEY], row, &kp, &kn) || kn != traj_len || memcmp(kp, traj_key, kn) != 0 ||
        load_u(r->l[PJ_ID_PAGE_INDEX], row) != page || load_u(r->l[PJ_ID_PAGE_COUNT], row) != pages)
        rc = pch_error_set(err, PCH_ECORRUPT, "projection: row %" PRIu64 " is not page %u of %u of trajectory %.*s", row, page, pages, (int)traj_len, traj_key);
    else if ((rc = step_range(d, row, &sb, &se)) == PCH_OK)
        rc = write_steps(d, sb, se, first);
    if (rc == PCH_ENOMEM && (!err || err->code != PCH_ENOMEM)) pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    rd_close(d);
    return rc;
}

int pj_model_write_json(pch_buf *out, const pj_rows *r, uint64_t row, pj_blobs *blobs,
                        pch_vxp_hydration mode, pch_vxp_query_stats *st, pj_child_cb child_cb,
                        pj_page_cb page_cb, void *payload, pch_error *err)
{
    rd dd, *d = &dd;
    const pch_json_value *esc;
    const char *src, *p;
    size_t n;
    bool first = true;
    uint64_t flags, sb, se, page, pages;
    pch_vxp_query_stats dummy;
    int rc = PCH_OK;
    PCH_TRY(rd_open(d, &dummy, out, r, row, blobs, mode, st, err));
#define CK(x) do { if ((rc = (x)) < 0) goto done; } while (0)
    flags = load_u(r->l[PJ_ID_KEY_FLAGS], row);
    CK(escape(d, 0, r->l[PJ_ID_ESCAPE], row, &esc, &src));
    CK(pch_buf_putc(out, '{') < 0 ? PCH_ENOMEM : PCH_OK);
    if (str_at(r->l[PJ_ID_SCHEMA_VERSION], row, &p, &n)) { CK(key(d, &first, "schema_version")); CK(put_json_str(d, p, n)); }
    else CK(esc_put(d, &first, esc, src, "schema_version"));
    if (str_at(r->l[PJ_ID_SESSION_ID], row, &p, &n)) { CK(key(d, &first, "session_id")); CK(put_json_str(d, p, n)); }
    else CK(esc_put(d, &first, esc, src, "session_id"));
    if (str_at(r->l[PJ_ID_TRAJECTORY_ID], row, &p, &n)) { CK(key(d, &first, "trajectory_id")); CK(put_json_str(d, p, n)); }
    else CK(esc_put(d, &first, esc, src, "trajectory_id"));
    if (flags & PJ_KEY_HAS_AGENT) {
        const pch_json_value *ag = pch_json_get(esc, "agent", 5);
        bool af = true;
        static const int al[3] = { PJ_ID_AGENT_NAME, PJ_ID_AGENT_VERSION, PJ_ID_AGENT_MODEL_NAME };
        CK(key(d, &first, "agent"));
        CK(pch_buf_putc(out, '{') < 0 ? PCH_ENOMEM : PCH_OK);
        if (ag && ag->kind != PCH_JSON_OBJECT) { rc = corrupt(d, "agent escape is not an object"); goto done; }
        for (int k = 0; k < 5; k++) {
            if (k < 3 && str_at(r->l[al[k]], row, &p, &n)) { CK(key(d, &af, agent_keys[k])); CK(put_json_str(d, p, n)); }
            else CK(esc_put(d, &af, ag, src, agent_keys[k]));
        }
        CK(esc_rest(d, &af, ag, src, agent_keys, NK(agent_keys)));
        CK(pch_buf_putc(out, '}') < 0 ? PCH_ENOMEM : PCH_OK);
    } else {
        CK(esc_put(d, &first, esc, src, "agent"));
    }
    CK(step_range(d, row, &sb, &se));
    page = load_u(r->l[PJ_ID_PAGE_INDEX], row);
    pages = load_u(r->l[PJ_ID_PAGE_COUNT], row);
    if (page != 0 || pages == 0 || pages > UINT32_MAX) { rc = corrupt(d, "trajectory row is not the first page of its trajectory"); goto done; }
    if (flags & PJ_KEY_HAS_STEPS) {
        bool first_step = true;
        CK(key(d, &first, "steps"));
        CK(pch_buf_putc(out, '[') < 0 ? PCH_ENOMEM : PCH_OK);
        CK(write_steps(d, sb, se, &first_step));
        if (pages > 1) {
            /* the other pages of a huge trajectory (§7.2), in later rows and clusters */
            const char *kp;
            size_t kn;
            if (!page_cb) { rc = pch_error_set(err, PCH_EINVAL, "projection: a paged trajectory needs a page reader"); goto done; }
            if (!str_at(r->l[PJ_ID_TRAJECTORY_KEY], row, &kp, &kn)) { rc = corrupt(d, "null trajectory key"); goto done; }
            CK(page_cb(out, kp, kn, (uint32_t)pages, &first_step, payload, err));
        }
        CK(pch_buf_putc(out, ']') < 0 ? PCH_ENOMEM : PCH_OK);
    } else if (se != sb || pages != 1) {
        rc = corrupt(d, "steps on a trajectory without steps");
        goto done;
    } else {
        CK(esc_put(d, &first, esc, src, "steps"));
    }
    /* the escape parser was reused by the steps: parse the trajectory escape again */
    CK(escape(d, 0, r->l[PJ_ID_ESCAPE], row, &esc, &src));
    CK(esc_put(d, &first, esc, src, "notes"));
    CK(esc_put(d, &first, esc, src, "final_metrics"));
    CK(esc_put(d, &first, esc, src, "continued_trajectory_ref"));
    CK(esc_put(d, &first, esc, src, "extra"));
    if (flags & PJ_KEY_HAS_SUBAGENTS) {
        uint64_t cb, ce, rb, re;
        CK(range(d, r->l[PJ_ID_CHILD_TRAJECTORY_KEYS], row, &cb, &ce));
        CK(range(d, r->l[PJ_ID_CHILD_RUN_KEYS], row, &rb, &re));
        if (re - rb != ce - cb) { rc = corrupt(d, "child key lanes disagree"); goto done; }
        CK(key(d, &first, "subagent_trajectories"));
        CK(pch_buf_putc(out, '[') < 0 ? PCH_ENOMEM : PCH_OK);
        for (uint64_t c = 0; c < ce - cb; c++) {
            const char *rp, *tp;
            size_t rn, tn;
            if (c) CK(pch_buf_putc(out, ',') < 0 ? PCH_ENOMEM : PCH_OK);
            if (!str_at(items(r->l[PJ_ID_CHILD_RUN_KEYS]), rb + c, &rp, &rn) ||
                !str_at(items(r->l[PJ_ID_CHILD_TRAJECTORY_KEYS]), cb + c, &tp, &tn)) { rc = corrupt(d, "null child key"); goto done; }
            if (!child_cb) { rc = pch_error_set(err, PCH_EINVAL, "projection: subagents need a resolver"); goto done; }
            CK(child_cb(out, rp, rn, tp, tn, payload, err));
        }
        CK(pch_buf_putc(out, ']') < 0 ? PCH_ENOMEM : PCH_OK);
    } else {
        CK(esc_put(d, &first, esc, src, "subagent_trajectories"));
    }
    CK(esc_rest(d, &first, esc, src, traj_keys, NK(traj_keys)));
    CK(pch_buf_putc(out, '}') < 0 ? PCH_ENOMEM : PCH_OK);
#undef CK
done:
    if (rc == PCH_ENOMEM && (!err || err->code != PCH_ENOMEM)) pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    rd_close(d);
    return rc;
}

/* ---------------------------------------------------------------- chat messages (§13.5)
**
** The SFT reader's view of a step (docs/training.md "SFT"), written from the message,
** reasoning and tool lanes of a cluster alone: no document is rebuilt and no other lane is
** needed. Values are the document's own (hydrated and checked as a Full point read does);
** the two dialects differ only in the shape of a tool call. */

struct pj_chat {
    rd d;
    pch_vxp_query_stats st;
    pch_buf args;                 /* a tool call's arguments before they become a string */
    uint64_t content_bytes;       /* every content value written */
    uint64_t message_bytes;       /* of which step messages and reasoning */
};

int pj_chat_new(pj_chat **out, pj_blobs *blobs, pch_error *err)
{
    pj_chat *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    c->d.blobs = blobs;
    c->d.mode = PCH_VXP_FULL;
    c->d.st = &c->st;
    pch_buf_init(&c->d.scratch, NULL);
    pch_buf_init(&c->d.prompts, NULL);
    pch_buf_init(&c->args, NULL);
    if (pch_json_parser_new(&c->d.jp[0], NULL, NULL, err) < 0 || pch_json_parser_new(&c->d.jp[1], NULL, NULL, err) < 0) {
        pj_chat_free(c);
        return PCH_ENOMEM;
    }
    *out = c;
    return PCH_OK;
}

void pj_chat_free(pj_chat *c)
{
    if (!c) return;
    rd_close(&c->d);
    pch_buf_dispose(&c->args);
    free(c);
}

uint64_t pj_chat_content_bytes(const pj_chat *c) { return c->content_bytes; }
uint64_t pj_chat_message_bytes(const pj_chat *c) { return c->message_bytes; }

static rd *chat_rd(pj_chat *c, pch_buf *out, const pj_rows *r, pch_error *err)
{
    c->d.r = r;
    c->d.out = out;
    c->d.err = err;
    return &c->d;
}

/* A content value counted as message text (pch_vxp_sft_message_bytes). */
static int chat_content(pj_chat *c, const pch_vx_array *hot, const pch_vx_array *cold, const pch_vx_array *ref,
                        uint64_t i, bool text)
{
    size_t before = c->d.out->len;
    PCH_TRY(content(&c->d, hot, cold, ref, i, text));
    c->content_bytes += c->d.out->len - before;
    return PCH_OK;
}

/* A step member the builder kept in the step escape (an untyped value), or null. */
/* Member k of the escape object at item i of lane (parsed with parser slot), or null. */
static int escaped_or_null(rd *d, int slot, const pch_vx_array *lane, uint64_t i, const char *k)
{
    const pch_json_value *esc, *v;
    const char *src;
    PCH_TRY(escape(d, slot, lane, i, &esc, &src));
    if (!esc || !(v = pch_json_get(esc, k, strlen(k)))) { OUT(pch_buf_append_str(d->out, "null")); return PCH_OK; }
    if (pch_json__write_value(d->out, v, src) < 0) return corrupt(d, "escape value");
    return PCH_OK;
}

static int chat_escaped(rd *d, uint64_t s, const char *k) { return escaped_or_null(d, 0, L1(STEPS_ESCAPE), s, k); }

int pj_chat_escaped(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t s, const char *k, pch_error *err)
{
    return chat_escaped(chat_rd(c, out, r, err), s, k);
}

/* A tool call's id or function name: the typed lane, else the call escape, else null. */
static int chat_call_field(rd *d, const pch_vx_array *lane, uint64_t c, const char *k)
{
    const char *p;
    size_t n;
    if (str_at(lane, c, &p, &n)) return put_json_str(d, p, n);
    return escaped_or_null(d, 1, L2(TOOLS_CALL_ESCAPE), c, k);
}

/* OpenAI's "arguments" is a string holding JSON: a string value is that string, any other
** value its JSON text (as the document wrote it) as a string. */
static int chat_arguments(pj_chat *c, uint64_t q)
{
    rd *d = &c->d;
    pch_buf *out = d->out;
    if (!has_content(L2(TOOLS_ARGS_HOT), L2(TOOLS_ARGS_COLD), L2(TOOLS_ARGS_REF), q)) {
        OUT(pch_buf_append_str(out, "null"));
        return PCH_OK;
    }
    pch_buf_clear(&c->args);
    d->out = &c->args;
    int rc = content(d, L2(TOOLS_ARGS_HOT), L2(TOOLS_ARGS_COLD), L2(TOOLS_ARGS_REF), q, false);
    d->out = out;
    PCH_TRY(rc);
    if (c->args.oom) return corrupt(d, "out of memory");
    c->content_bytes += c->args.len;
    /* content() validated the text as JSON, so it is UTF-8: only its escapes are looked at */
    if (c->args.len && c->args.data[0] == '"') OUT(pch_buf_append(out, c->args.data, c->args.len));
    else OUT(pch_json__write_utf8(out, (const char *)c->args.data, c->args.len));
    return PCH_OK;
}

static int chat_calls(pj_chat *c, uint64_t s, pj_chat_dialect dia)
{
    rd *d = &c->d;
    const pch_vx_array *ids = items(d->r->l[PJ_TOOLS_CALL_ID]);
    uint64_t b, e;
    PCH_TRY(range(d, ids, s, &b, &e));
    for (int l = PJ_TOOLS_FUNCTION; l <= PJ_TOOLS_CALL_ESCAPE; l++) {
        uint64_t lb, le;
        PCH_TRY(range(d, items(d->r->l[l]), s, &lb, &le));
        if (lb != b || le != e) return corrupt(d, "tool-call lanes disagree on their offsets");
    }
    if (dia == PJ_CHAT_OPENAI && e == b) return PCH_OK;       /* OpenAI has no empty tool_calls */
    OUT(pch_buf_append_str(d->out, ",\"tool_calls\":["));
    for (uint64_t q = b; q < e; q++) {
        if (q > b) OUT(pch_buf_putc(d->out, ','));
        OUT(pch_buf_append_str(d->out, "{\"id\":"));
        PCH_TRY(chat_call_field(d, items(ids), q, "tool_call_id"));
        if (dia == PJ_CHAT_OPENAI) {
            OUT(pch_buf_append_str(d->out, ",\"type\":\"function\",\"function\":{\"name\":"));
            PCH_TRY(chat_call_field(d, L2(TOOLS_FUNCTION), q, "function_name"));
            OUT(pch_buf_append_str(d->out, ",\"arguments\":"));
            PCH_TRY(chat_arguments(c, q));
            OUT(pch_buf_append_str(d->out, "}}"));
        } else {
            OUT(pch_buf_append_str(d->out, ",\"function_name\":"));
            PCH_TRY(chat_call_field(d, L2(TOOLS_FUNCTION), q, "function_name"));
            OUT(pch_buf_append_str(d->out, ",\"arguments\":"));
            if (has_content(L2(TOOLS_ARGS_HOT), L2(TOOLS_ARGS_COLD), L2(TOOLS_ARGS_REF), q))
                PCH_TRY(chat_content(c, L2(TOOLS_ARGS_HOT), L2(TOOLS_ARGS_COLD), L2(TOOLS_ARGS_REF), q, false));
            else OUT(pch_buf_append_str(d->out, "null"));
            OUT(pch_buf_putc(d->out, '}'));
        }
    }
    OUT(pch_buf_putc(d->out, ']'));
    return PCH_OK;
}

static const char *const chat_roles[4] = { NULL, "\"system\"", "\"user\"", "\"assistant\"" };

int pj_chat_message(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t s, pj_chat_dialect dia, pch_error *err)
{
    rd *d = chat_rd(c, out, r, err);
    uint64_t k = load_u(L1(STEPS_SOURCE), s), pb, pe, before = c->content_bytes;
    bool first = false;
    if (k > 3) return corrupt(d, "step source code out of range");
    OUT(pch_buf_append_str(out, "{\"role\":"));
    if (k) OUT(pch_buf_append_str(out, chat_roles[k]));
    else PCH_TRY(chat_escaped(d, s, "source"));
    OUT(pch_buf_append_str(out, ",\"content\":"));
    k = load_u(L1(MESSAGE_KIND), s);
    PCH_TRY(range(d, L1(MESSAGE_PART_KIND), s, &pb, &pe));
    if (k == PJ_CK_PARTS) {
        size_t at = out->len;
        PCH_TRY(write_parts(d, s));
        c->content_bytes += out->len - at;
    } else if (pe != pb) {
        return corrupt(d, "content parts on a message that is not a parts list");
    } else if (k == PJ_CK_ABSENT) {
        OUT(pch_buf_append_str(out, "null"));
    } else if (k == PJ_CK_TEXT || k == PJ_CK_JSON) {
        PCH_TRY(chat_content(c, L1(MESSAGE_HOT), L1(MESSAGE_COLD), L1(MESSAGE_REF), s, k == PJ_CK_TEXT));
    } else {
        return corrupt(d, "unknown content kind");
    }
    k = load_u(L1(MESSAGE_RKIND), s);
    if (k != PJ_CK_ABSENT) {
        if (k != PJ_CK_TEXT && k != PJ_CK_JSON) return corrupt(d, "unknown content kind");
        PCH_TRY(key(d, &first, "reasoning_content"));
        PCH_TRY(chat_content(c, L1(MESSAGE_RHOT), L1(MESSAGE_RCOLD), L1(MESSAGE_RREF), s, k == PJ_CK_TEXT));
    }
    c->message_bytes += c->content_bytes - before;
    if (ok(L1(TOOLS_CALL_ID), s)) {
        PCH_TRY(chat_calls(c, s, dia));
    } else {
        uint64_t cb, ce;
        PCH_TRY(range(d, L1(TOOLS_FUNCTION), s, &cb, &ce));
        if (ce != cb) return corrupt(d, "tool calls on a step without tool_calls");
    }
    OUT(pch_buf_putc(out, '}'));
    return PCH_OK;
}

int pj_chat_results(pj_chat *c, const pj_rows *r, uint64_t s, uint64_t *b, uint64_t *e, pch_error *err)
{
    rd *d = chat_rd(c, NULL, r, err);
    uint64_t k = load_u(L1(TOOLS_OBS_KIND), s);
    PCH_TRY(range(d, L1(TOOLS_RES_CALL), s, b, e));
    for (int l = PJ_TOOLS_RES_ORIGIN; l <= PJ_TOOLS_RES_ESCAPE; l++) PCH_TRY(sub(d, l, s, *b, *e));
    if (k > 2) return corrupt(d, "observation kind out of range");
    if (k != 1 && *e != *b) return corrupt(d, "observation results on a step whose observation has none");
    return PCH_OK;
}

int pj_chat_result(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t s, uint64_t q, pch_error *err)
{
    rd *d = chat_rd(c, out, r, err);
    const pch_json_value *esc, *v;
    const char *src;
    uint64_t k = load_u(L2(TOOLS_RES_KIND), q);
    OUT(pch_buf_append_str(out, "{\"role\":\"tool\",\"tool_call_id\":"));
    PCH_TRY(escape(d, 1, L2(TOOLS_RES_ESCAPE), q, &esc, &src));
    if (esc && (v = pch_json_get(esc, "source_call_id", 14))) {
        if (pch_json__write_value(out, v, src) < 0) return corrupt(d, "escape value");
    } else if (ok(L2(TOOLS_RES_CALL), q)) {
        /* implied: the id of the correlated call of this step (§5.5) */
        uint64_t cn = load_u(L2(TOOLS_RES_CALL), q), cb, ce;
        const char *p;
        size_t n;
        PCH_TRY(range(d, L1(TOOLS_CALL_ID), s, &cb, &ce));
        if (cn >= ce - cb || !str_at(L2(TOOLS_CALL_ID), cb + cn, &p, &n)) return corrupt(d, "result call ordinal out of range");
        PCH_TRY(put_json_str(d, p, n));
    } else {
        OUT(pch_buf_append_str(out, "null"));
    }
    OUT(pch_buf_append_str(out, ",\"content\":"));
    if (k == PJ_CK_ABSENT) OUT(pch_buf_append_str(out, "null"));
    else if (k == PJ_CK_TEXT || k == PJ_CK_JSON) PCH_TRY(chat_content(c, L2(TOOLS_RES_HOT), L2(TOOLS_RES_COLD), L2(TOOLS_RES_REF), q, k == PJ_CK_TEXT));
    else return corrupt(d, "unknown content kind");
    OUT(pch_buf_putc(out, '}'));
    return PCH_OK;
}

int pj_chat_tools(pj_chat *c, pch_buf *out, const pj_rows *r, uint64_t row, pch_error *err)
{
    rd *d = chat_rd(c, out, r, err);
    const pch_json_value *esc, *ag, *v = NULL;
    const char *src;
    if (load_u(r->l[PJ_ID_KEY_FLAGS], row) & PJ_KEY_HAS_AGENT) {
        PCH_TRY(escape(d, 0, r->l[PJ_ID_ESCAPE], row, &esc, &src));
        if ((ag = pch_json_get(esc, "agent", 5)) && ag->kind == PCH_JSON_OBJECT) v = pch_json_get(ag, "tool_definitions", 16);
    }
    if (!v || v->kind != PCH_JSON_ARRAY) { OUT(pch_buf_append_str(out, "[]")); return PCH_OK; }
    if (pch_json__write_value(out, v, src) < 0) return corrupt(d, "escape value");
    return PCH_OK;
}

/* ---------------------------------------------------------------- content columns (§13.6)
**
** The SQL relations' `message` column read from the message lanes of a lane scan: the value
** a Full point read writes for the step (external values hydrated from the blob packs and
** checked), rendered as the relation renders the Storyline column — canonical JSON text
** (JSONB → text: keys sorted, compact). A text message is already in that form. */

static const int k_message_lanes[] = {
    PJ_MESSAGE_KIND, PJ_MESSAGE_HOT, PJ_MESSAGE_COLD, PJ_MESSAGE_REF, PJ_MESSAGE_PART_KIND,
    PJ_MESSAGE_PART_HOT, PJ_MESSAGE_PART_COLD, PJ_MESSAGE_PART_REF, PJ_MESSAGE_PART_ESCAPE
};
#define N_MESSAGE_LANES (sizeof k_message_lanes / sizeof k_message_lanes[0])

struct pch_vxp_content {
    pj_chat *chat;
    pj_rows rows;                 /* only the message lanes are set */
    pch_json_parser *jp;
    pch_buf raw, jsonb, text;
};

static char g_msg_path[N_MESSAGE_LANES][48];
static const char *g_msg_list[N_MESSAGE_LANES];
static pthread_once_t g_msg_once = PTHREAD_ONCE_INIT;

static void message_paths(void)
{
    for (size_t i = 0; i < N_MESSAGE_LANES; i++) {
        int l = k_message_lanes[i];
        snprintf(g_msg_path[i], sizeof g_msg_path[i], "%s.%s", pj_group_names[pj_lane_group[l]], pj_lane_names[l]);
        g_msg_list[i] = g_msg_path[i];
    }
}

size_t pch_vxp_message_lanes(const char *const **paths)
{
    pthread_once(&g_msg_once, message_paths);
    *paths = g_msg_list;
    return N_MESSAGE_LANES;
}

int pch_vxp_content_open(pch_vxp_content **out, pch_vxp_snapshot *s, pch_error *err)
{
    pch_vxp_content *c = calloc(1, sizeof *c);
    pj_blobs *blobs;
    int rc;
    *out = NULL;
    if (!c) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    pch_buf_init(&c->raw, NULL);
    pch_buf_init(&c->jsonb, NULL);
    pch_buf_init(&c->text, NULL);
    if ((rc = pj_snapshot_blobs(s, &blobs, err)) < 0 || (rc = pj_chat_new(&c->chat, blobs, err)) < 0 ||
        (rc = pch_json_parser_new(&c->jp, NULL, NULL, err)) < 0) {
        pch_vxp_content_free(c);
        return rc;
    }
    *out = c;
    return PCH_OK;
}

void pch_vxp_content_free(pch_vxp_content *c)
{
    if (!c) return;
    pj_chat_free(c->chat);
    pch_json_parser_free(c->jp);
    pch_buf_dispose(&c->raw);
    pch_buf_dispose(&c->jsonb);
    pch_buf_dispose(&c->text);
    free(c);
}

void pch_vxp_content_stats(const pch_vxp_content *c, uint64_t *blobs_hydrated, uint64_t *bytes_decoded)
{
    *blobs_hydrated = c ? c->chat->st.blobs_hydrated : 0;
    *bytes_decoded = c ? c->chat->st.bytes_decoded : 0;
}

int pch_vxp_message_text(pch_vxp_content *c, const pch_vx_array *const *lanes, uint64_t step, const char **text,
                         size_t *len, pch_error *err)
{
    rd *d;
    const pch_vx_array *kinds;
    uint64_t k, pb, pe;
    const pch_json_value *v;
    *text = NULL;
    *len = 0;
    for (size_t i = 0; i < N_MESSAGE_LANES; i++) c->rows.l[k_message_lanes[i]] = lanes[i];
    pch_buf_clear(&c->raw);
    d = chat_rd(c->chat, &c->raw, &c->rows, err);
    kinds = L1(MESSAGE_KIND);
    if (!kinds || kinds->dtype->kind != PCH_VX_PRIMITIVE || step >= kinds->len) return corrupt(d, "message_kind lane missing or short");
    k = load_u(kinds, step);
    if (k == PJ_CK_PARTS) {
        PCH_TRY(write_parts(d, step));
    } else {
        PCH_TRY(range(d, L1(MESSAGE_PART_KIND), step, &pb, &pe));
        if (pe != pb) return corrupt(d, "content parts on a message that is not a parts list");
        if (k == PJ_CK_ABSENT) return PCH_OK;       /* no message: SQL NULL */
        if (k != PJ_CK_TEXT && k != PJ_CK_JSON) return corrupt(d, "unknown content kind");
        PCH_TRY(content(d, L1(MESSAGE_HOT), L1(MESSAGE_COLD), L1(MESSAGE_REF), step, k == PJ_CK_TEXT));
    }
    if (c->raw.oom) return pch_error_set(err, PCH_ENOMEM, "projection: out of memory");
    if (k == PJ_CK_TEXT) {              /* its JSON string, escaped as JSONB → text escapes one */
        *text = (const char *)c->raw.data;
        *len = c->raw.len;
        return PCH_OK;
    }
    /* parts or other JSON: through JSONB, as the Storyline column holds it */
    if (pch_json_parser_parse(c->jp, (const char *)c->raw.data, c->raw.len, &v, err) < 0) return err->code;
    pch_buf_clear(&c->jsonb);
    pch_buf_clear(&c->text);
    PCH_TRY(pch_jsonb__encode(&c->jsonb, v, (const char *)c->raw.data, err));
    PCH_TRY(pch_jsonb__to_json(&c->text, c->jsonb.data, c->jsonb.len, err));
    *text = (const char *)c->text.data;
    *len = c->text.len;
    return PCH_OK;
}

/* §15: offsets of one level agree across lanes, kinds in range, token/logprob lengths. */
size_t pj_model_check(const pj_rows *r, const char *file, pch_vxp_finding_cb cb, void *payload)
{
    size_t n = 0;
    char msg[256];
    const pch_vx_array *sid = r->l[PJ_STEPS_STEP_ID];
    if (!sid) return 0;
    for (int l = 0; l < PJ_L_N; l++) {
        const pch_vx_array *a = r->l[l];
        if (pj_lane_group[l] < PJ_G_STEPS || !a) continue;
        if (a->len != sid->len || memcmp(a->offsets, sid->offsets, (size_t)(a->len + 1) * 8) != 0) {
            snprintf(msg, sizeof msg, "lane %s.%s: step offsets disagree with steps.step_id",
                     pj_group_names[pj_lane_group[l]], pj_lane_names[l]);
            cb(file, msg, payload);
            n++;
        }
    }
    /* second level: tool-call lanes share offsets, result lanes share offsets */
    {
        static const int groups[3][2] = { { PJ_TOOLS_CALL_ID, PJ_TOOLS_CALL_ESCAPE },
                                          { PJ_TOOLS_RES_CALL, PJ_TOOLS_RES_ESCAPE },
                                          { PJ_MESSAGE_PART_KIND, PJ_MESSAGE_PART_ESCAPE } };
        for (int g = 0; g < 3; g++) {
            const pch_vx_array *first = items(r->l[groups[g][0]]);
            if (!first) continue;
            for (int l = groups[g][0] + 1; l <= groups[g][1]; l++) {
                const pch_vx_array *a = items(r->l[l]);
                if (!a) continue;
                if (a->len != first->len || memcmp(a->offsets, first->offsets, (size_t)(a->len + 1) * 8) != 0) {
                    snprintf(msg, sizeof msg, "lane %s: item offsets disagree with %s", pj_lane_names[l], pj_lane_names[groups[g][0]]);
                    cb(file, msg, payload);
                    n++;
                }
            }
        }
    }
    /* prompt-prefix form (§8.2): every prompt rebuilt and its count checked against
    ** prompt_ids_len, each base a checkpoint earlier in its row */
    if (r->l[PJ_TOKENS_PROMPT_IDS] && r->l[PJ_TOKENS_PROMPT_BASE] && r->l[PJ_TOKENS_PROMPT_PREFIX] &&
        r->l[PJ_TOKENS_PROMPT_SUFFIX] && r->l[PJ_TOKENS_PROMPT_LEN]) {
        pch_buf scratch;
        pj_prompt *cache = NULL;
        size_t cap = 0;
        pch_error e;
        pch_buf_init(&scratch, NULL);
        for (uint64_t t = 0; t < sid->len; t++) {
            pch_buf_clear(&scratch);
            if (pj_prompt_cache(&cache, &cap, (size_t)(sid->offsets[t + 1] - sid->offsets[t])) < 0) {
                cb(file, "out of memory checking the prompt lanes", payload);
                n++;
                break;
            }
            for (int64_t s = sid->offsets[t]; s < sid->offsets[t + 1]; s++) {
                if (pj_prompt_ids(r, (uint64_t)sid->offsets[t], (uint64_t)s, &scratch, cache, &e) < 0) {
                    snprintf(msg, sizeof msg, "trajectory row %" PRIu64 " step %" PRId64 ": %.160s", t, s - sid->offsets[t], e.msg);
                    cb(file, msg, payload);
                    n++;
                    break;          /* the row's later prompts may build on this one */
                }
            }
        }
        free(cache);
        pch_buf_dispose(&scratch);
    }
    /* token / logprob relation: logprobs align with completion ids unless flagged */
    {
        const pch_vx_array *ci = r->l[PJ_TOKENS_COMPLETION_IDS], *l32 = r->l[PJ_TOKENS_LOGPROBS32],
                           *l64 = r->l[PJ_TOKENS_LOGPROBS64], *w = r->l[PJ_ID_WARNINGS];
        if (ci && l32 && l64 && w && sid) {
            for (uint64_t t = 0; t < sid->len; t++) {
                bool flagged = (load_u(w, t) & PJ_W_LOGPROB_LENGTH) != 0;
                for (int64_t s = sid->offsets[t]; s < sid->offsets[t + 1]; s++) {
                    const pch_vx_array *lp = ok(items(l32), (uint64_t)s) ? items(l32) : ok(items(l64), (uint64_t)s) ? items(l64) : NULL;
                    const pch_vx_array *c = items(ci);
                    if (!lp || !ok(c, (uint64_t)s)) continue;
                    if (lp->offsets[s + 1] - lp->offsets[s] != c->offsets[s + 1] - c->offsets[s] && !flagged) {
                        snprintf(msg, sizeof msg, "trajectory row %" PRIu64 " step %" PRId64 ": logprobs and completion_token_ids differ in length without the warning flag",
                                 t, s - sid->offsets[t]);
                        cb(file, msg, payload);
                        n++;
                    }
                }
            }
        }
    }
    return n;
}

void pj_model_page_info(const pj_rows *r, uint64_t row, uint64_t *page, uint64_t *pages, const char **key, size_t *key_len)
{
    *page = load_u(r->l[PJ_ID_PAGE_INDEX], row);
    *pages = load_u(r->l[PJ_ID_PAGE_COUNT], row);
    if (!str_at(r->l[PJ_ID_TRAJECTORY_KEY], row, key, key_len)) { *key = ""; *key_len = 0; }
}

int pj_page_seq_next(pj_page_seq *q, uint64_t page, uint64_t pages, const char *key, size_t key_len, bool *cont,
                     char *msg, size_t cap)
{
    bool same = key_len < sizeof q->key && strlen(q->key) == key_len && memcmp(q->key, key, key_len) == 0;
    int rc = PCH_OK;
    *cont = page > 0;
    if (pages == 0 || page >= pages) {
        snprintf(msg, cap, "page %" PRIu64 " of %" PRIu64, page, pages);
        return PCH_ECORRUPT;
    }
    if (page == 0) {
        if (q->next < q->pages) {
            snprintf(msg, cap, "trajectory %s: pages %" PRIu64 "..%" PRIu64 " are missing", q->key, q->next, q->pages - 1);
            rc = PCH_ECORRUPT;
        }
        snprintf(q->key, sizeof q->key, "%.*s", (int)(key_len < sizeof q->key ? key_len : 0), key);
        q->next = 1;
        q->pages = pages;
        return rc;
    }
    if (!same || page != q->next || pages != q->pages) {
        snprintf(msg, cap, "page %" PRIu64 " of %" PRIu64 " of %.*s does not continue the trajectory before it", page, pages,
                 (int)(key_len < 256 ? key_len : 256), key);
        rc = PCH_ECORRUPT;
    }
    q->next = page + 1;
    return rc;
}

int pj_page_seq_end(pj_page_seq *q, char *msg, size_t cap)
{
    if (q->next >= q->pages) return PCH_OK;
    snprintf(msg, cap, "trajectory %s: pages %" PRIu64 "..%" PRIu64 " are missing", q->key, q->next, q->pages - 1);
    return PCH_ECORRUPT;
}

int pj_model_pages(const pj_rows *r, uint64_t row, uint64_t *pages, pch_error *err)
{
    const pch_vx_array *pi = r->l[PJ_ID_PAGE_INDEX], *pc = r->l[PJ_ID_PAGE_COUNT];
    if (!pi || !pc || row >= pi->len || row >= pc->len) return pch_error_set(err, PCH_EINVAL, "projection: page lanes not read");
    *pages = load_u(pc, row);
    if (load_u(pi, row) != 0 || *pages == 0 || *pages > UINT32_MAX)
        return pch_error_set(err, PCH_ECORRUPT, "projection: row %" PRIu64 " is not the first page of a trajectory", row);
    return PCH_OK;
}

int pj_model_assets(const pj_rows *r, uint64_t row,
                    int (*cb)(const uint8_t id[32], const char *path, size_t path_len, void *payload),
                    void *payload, pch_error *err)
{
    const pch_vx_array *ids = r->l[PJ_STEPS_ASSET_ID], *paths = r->l[PJ_STEPS_ASSET_PATH];
    if (!ids || !paths || row >= ids->len || row >= paths->len) return pch_error_set(err, PCH_EINVAL, "projection: asset lanes not read");
    if (ids->offsets[row] != paths->offsets[row] || ids->offsets[row + 1] != paths->offsets[row + 1])
        return pch_error_set(err, PCH_ECORRUPT, "projection: asset lanes disagree on their steps");
    for (int64_t s = ids->offsets[row]; s < ids->offsets[row + 1]; s++) {
        const pch_vx_array *il = ids->children[0], *pl = paths->children[0];
        if (il->offsets[s] != pl->offsets[s] || il->offsets[s + 1] != pl->offsets[s + 1])
            return pch_error_set(err, PCH_ECORRUPT, "projection: asset lanes disagree on their items");
        for (int64_t k = il->offsets[s]; k < il->offsets[s + 1]; k++) {
            const pch_vx_array *iv = il->children[0], *pv = pl->children[0];
            if (iv->offsets[k + 1] - iv->offsets[k] != 32) return pch_error_set(err, PCH_ECORRUPT, "projection: asset content id is not 32 bytes");
            PCH_TRY(cb(iv->data + iv->offsets[k], (const char *)pv->data + pv->offsets[k], (size_t)(pv->offsets[k + 1] - pv->offsets[k]), payload));
        }
    }
    return PCH_OK;
}
