/* ATIF parser, validator and normaliser (specs/atif.md §2 schema, §3 validation checklist;
** RFC-0006 §5.2 identity, §5.3 subagent flattening, §5.5 result lane, §5.6 projection
** state, §6.7 ordering).
**
** One pass over the parsed JSON tree both validates and builds the normalised model:
** every known field is kept as its exact compact JSON text, unknown keys are kept in input
** order, and typed views (step_id, timestamp ms, token counts…) are derived from them.
** Embedded subagent_trajectories are flattened in preorder. Findings carry a JSON pointer
** (RFC 6901). Invariant: a pch_atif_doc is only returned when there was no error finding;
** arrays keep input order (steps are never sorted, §6.7). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "atif/atif_int.h"
#include "json/json.h"

const char *const pch_atif__traj_keys[PCH_ATIF_T_N] = {
    "schema_version", "session_id", "trajectory_id", "agent", "steps", "notes",
    "final_metrics", "continued_trajectory_ref", "extra", "subagent_trajectories"
};
const char *const pch_atif__step_keys[PCH_ATIF_S_N] = {
    "step_id", "timestamp", "source", "model_name", "reasoning_effort", "message",
    "reasoning_content", "tool_calls", "observation", "metrics", "llm_call_count",
    "is_copied_context", "extra"
};
const char *const pch_atif__call_keys[PCH_ATIF_C_N] = {
    "tool_call_id", "function_name", "arguments", "extra"
};
const char *const pch_atif__result_keys[PCH_ATIF_R_N] = {
    "source_call_id", "content", "subagent_trajectory_ref", "extra"
};
const char *const pch_atif__agent_keys[5] = {
    "name", "version", "model_name", "tool_definitions", "extra"
};
static const char *const metrics_keys[] = {
    "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "prompt_token_ids",
    "completion_token_ids", "logprobs", "extra"
};
static const char *const final_keys[] = {
    "total_prompt_tokens", "total_completion_tokens", "total_cached_tokens",
    "total_cost_usd", "total_steps", "extra"
};
static const char *const ref_keys[] = { "trajectory_id", "trajectory_path", "session_id", "extra" };
static const char *const part_keys[] = { "type", "text", "source" };
static const char *const media_keys[] = { "media_type", "path", "duration_sec" };
static const char *const obs_keys[] = { "results" };

static const char *const schema_versions[] = {
    "ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4", "ATIF-v1.5",
    "ATIF-v1.6", "ATIF-v1.7", "ATIF-v1.8"
};
static const char *const image_types[] = { "image/jpeg", "image/png", "image/gif", "image/webp" };
static const char *const audio_types[] = {
    "audio/wav", "audio/mpeg", "audio/mp4", "audio/aac", "audio/ogg", "audio/flac",
    "audio/webm", "audio/aiff"
};
static const struct { const char *alias, *canon; } audio_aliases[] = {
    { "audio/mp3", "audio/mpeg" }, { "audio/mpga", "audio/mpeg" }, { "audio/x-mpeg", "audio/mpeg" },
    { "audio/x-wav", "audio/wav" }, { "audio/wave", "audio/wav" }, { "audio/vnd.wave", "audio/wav" },
    { "audio/x-m4a", "audio/mp4" }, { "audio/m4a", "audio/mp4" }, { "audio/x-aac", "audio/aac" },
    { "audio/x-flac", "audio/flac" }, { "audio/x-aiff", "audio/aiff" }
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_KEYS 16

const char *pch_atif__audio_canonical(const char *mt, size_t len)
{
    for (size_t i = 0; i < NELEM(audio_types); i++)
        if (strlen(audio_types[i]) == len && memcmp(audio_types[i], mt, len) == 0)
            return audio_types[i];
    for (size_t i = 0; i < NELEM(audio_aliases); i++)
        if (strlen(audio_aliases[i].alias) == len && memcmp(audio_aliases[i].alias, mt, len) == 0)
            return audio_aliases[i].canon;
    return NULL;
}

/* ---- validation state ---- */

typedef enum { SEV_ERR, SEV_DEV } sev;  /* DEV = producer deviation: warning unless strict */

typedef struct V {
    pch_ctx *ctx;
    const char *src;
    const char *file;
    bool strict;
    const char *source_id;
    const char *fingerprint;
    pch_atif_finding_cb cb;
    void *payload;
    pch_buf ptr;           /* current JSON pointer */
    pch_buf tmp;           /* serialisation scratch */
    size_t n_err, n_warn;
    int fatal;             /* PCH_ENOMEM / PCH_ECANCELED latched */
    char first_err[512];
    pch_atif_doc *doc;     /* NULL in validate-only mode */
    int minor;             /* schema minor version of the document root, -1 unknown */
    bool tokens;           /* keep typed token arrays (options.tokens) */
} V;

static void emit(V *v, sev s, const char *code, const char *suffix, const char *fmt, ...)
    PCH_PRINTF(5, 6);

static void emit(V *v, sev s, const char *code, const char *suffix, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    pch_atif_severity sv = (s == SEV_DEV && !v->strict) ? PCH_ATIF_WARNING : PCH_ATIF_ERROR;
    size_t mark = v->ptr.len;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (sv == PCH_ATIF_ERROR) {
        if (v->n_err == 0) {
            snprintf(v->first_err, sizeof v->first_err, "%s:%s%s%s: %s", v->file,
                     v->ptr.data ? (const char *)v->ptr.data : "", suffix ? "/" : "",
                     suffix ? suffix : "", msg);
        }
        v->n_err++;
    } else {
        v->n_warn++;
    }
    if (suffix) { pch_buf_putc(&v->ptr, '/'); pch_buf_append_str(&v->ptr, suffix); }
    if (v->ptr.oom) { v->fatal = PCH_ENOMEM; return; }
    if (v->cb && !v->fatal) {
        pch_atif_finding f = { sv, code, v->file, v->ptr.data ? (const char *)v->ptr.data : "", msg };
        if (v->cb(&f, v->payload) != 0) v->fatal = PCH_ECANCELED;
    }
    v->ptr.len = mark;
    if (v->ptr.data) v->ptr.data[mark] = 0;
}

/* Push a key (RFC 6901 escaping) or an index onto the pointer; returns the mark to pop. */
static size_t push_key(V *v, const char *k, size_t n)
{
    size_t mark = v->ptr.len;
    pch_buf_putc(&v->ptr, '/');
    for (size_t i = 0; i < n; i++) {
        if (k[i] == '~') pch_buf_append(&v->ptr, "~0", 2);
        else if (k[i] == '/') pch_buf_append(&v->ptr, "~1", 2);
        else pch_buf_putc(&v->ptr, (uint8_t)k[i]);
    }
    if (v->ptr.oom) v->fatal = PCH_ENOMEM;
    return mark;
}
static size_t push_idx(V *v, size_t i)
{
    size_t mark = v->ptr.len;
    if (pch_buf_printf(&v->ptr, "/%zu", i) < 0) v->fatal = PCH_ENOMEM;
    return mark;
}
static void pop(V *v, size_t mark)
{
    v->ptr.len = mark;
    if (v->ptr.data) v->ptr.data[mark] = 0;
}

/* ---- model helpers ---- */

static void *aalloc(V *v, size_t n, size_t size)
{
    size_t total;
    void *p;
    if (!v->doc) return NULL;
    if (!pch_mul_size(&total, n ? n : 1, size)) { v->fatal = PCH_ENOMEM; return NULL; }
    p = pch_arena_alloc(&v->doc->arena, total);
    if (!p) { v->fatal = PCH_ENOMEM; return NULL; }
    memset(p, 0, total);
    return p;
}

static const char *adup(V *v, const char *s, size_t n)
{
    char *p;
    if (!v->doc) return NULL;
    p = pch_arena_memdup(&v->doc->arena, s, n);
    if (!p) v->fatal = PCH_ENOMEM;
    return p;
}

static pch_atif_raw raw_of(V *v, const pch_json_value *val)
{
    pch_atif_raw r = { NULL, 0 };
    if (!v->doc || !val) return r;
    if (pch_json__is_compact(v->src + val->span_off, val->span_len)) {   /* already compact */
        r.ptr = adup(v, v->src + val->span_off, val->span_len);
        r.len = r.ptr ? val->span_len : 0;
        return r;
    }
    pch_buf_clear(&v->tmp);
    if (pch_json__write_value(&v->tmp, val, v->src) < 0) { v->fatal = PCH_ENOMEM; return r; }
    r.ptr = adup(v, (const char *)v->tmp.data, v->tmp.len);
    r.len = r.ptr ? v->tmp.len : 0;
    return r;
}

static const char *str_of(V *v, const pch_json_value *val)
{
    if (!val || val->kind != PCH_JSON_STRING) return NULL;
    return adup(v, val->u.str.ptr, val->u.str.len);
}

static bool is_null(const pch_json_value *x) { return !x || x->kind == PCH_JSON_NULL; }

static const char *kind_name(const pch_json_value *x)
{
    switch (x->kind) {
    case PCH_JSON_NULL: return "null";
    case PCH_JSON_FALSE: case PCH_JSON_TRUE: return "boolean";
    case PCH_JSON_NUMBER: return "number";
    case PCH_JSON_STRING: return "string";
    case PCH_JSON_ARRAY: return "array";
    case PCH_JSON_OBJECT: return "object";
    default: return "value";
    }
}

/* Split an object into its known fields (out[i], NULL = absent) and unknown members.
** Reports unknown keys (producer deviation) and duplicate keys (error). */
static void split(V *v, const pch_json_value *obj, const char *const *keys, size_t nk,
                  const pch_json_value **out, const pch_atif_member **unk_out,
                  uint32_t *n_unk_out, const char *what)
{
    pch_atif_member *unk = NULL;
    uint32_t nu = 0;
    for (size_t i = 0; i < nk; i++) out[i] = NULL;
    for (uint32_t m = 0; m < obj->n; m++) {
        const pch_json_member *mb = &obj->u.members[m];
        size_t i;
        for (i = 0; i < nk; i++)
            if (strlen(keys[i]) == mb->key_len && memcmp(keys[i], mb->key, mb->key_len) == 0)
                break;
        for (uint32_t j = 0; j < m; j++) {
            const pch_json_member *o = &obj->u.members[j];
            if (o->key_len == mb->key_len && memcmp(o->key, mb->key, mb->key_len) == 0) {
                size_t mk = push_key(v, mb->key, mb->key_len);
                emit(v, SEV_ERR, "duplicate-key", NULL, "duplicate key \"%.*s\"",
                     (int)(mb->key_len > 80 ? 80 : mb->key_len), mb->key);
                pop(v, mk);
                break;
            }
        }
        if (i < nk) {
            if (!out[i]) out[i] = &mb->value;
        } else {
            size_t mk = push_key(v, mb->key, mb->key_len);
            emit(v, SEV_DEV, "unknown-key", NULL, "unknown key \"%.*s\" in %s (custom data belongs in extra)",
                 (int)(mb->key_len > 80 ? 80 : mb->key_len), mb->key, what);
            pop(v, mk);
            nu++;
        }
    }
    if (unk_out) {
        *unk_out = NULL;
        *n_unk_out = 0;
        if (nu && v->doc) {
            unk = aalloc(v, nu, sizeof(*unk));
            if (!unk) return;
            nu = 0;
            for (uint32_t m = 0; m < obj->n; m++) {
                const pch_json_member *mb = &obj->u.members[m];
                size_t i;
                for (i = 0; i < nk; i++)
                    if (strlen(keys[i]) == mb->key_len && memcmp(keys[i], mb->key, mb->key_len) == 0)
                        break;
                if (i < nk) continue;
                unk[nu].key = adup(v, mb->key, mb->key_len);
                unk[nu].key_len = mb->key_len;
                unk[nu].value = raw_of(v, &mb->value);
                nu++;
            }
            *unk_out = unk;
            *n_unk_out = nu;
        }
    }
}

/* Type checks on an optional field: absent and null always pass. */
static bool want(V *v, const pch_json_value *x, const char *key, int kind, const char *tname)
{
    if (is_null(x)) return false;
    if (kind == PCH_JSON_TRUE) {
        if (x->kind == PCH_JSON_TRUE || x->kind == PCH_JSON_FALSE) return true;
    } else if (x->kind == kind) {
        return true;
    }
    emit(v, SEV_ERR, "type", key, "expected %s, got %s", tname, kind_name(x));
    return false;
}
static bool want_str(V *v, const pch_json_value *x, const char *key)
{ return want(v, x, key, PCH_JSON_STRING, "string"); }
static bool want_obj(V *v, const pch_json_value *x, const char *key)
{ return want(v, x, key, PCH_JSON_OBJECT, "object"); }
static bool want_arr(V *v, const pch_json_value *x, const char *key)
{ return want(v, x, key, PCH_JSON_ARRAY, "array"); }
static bool want_int(V *v, const pch_json_value *x, const char *key, bool nonneg)
{
    if (is_null(x)) return false;
    if (x->kind != PCH_JSON_NUMBER || !(x->num_flags & PCH_JSON_NUM_INT)) {
        emit(v, SEV_ERR, "type", key, "expected integer, got %s", kind_name(x));
        return false;
    }
    if (!(x->num_flags & PCH_JSON_NUM_I64) && !(x->num_flags & PCH_JSON_NUM_U64)) {
        emit(v, SEV_ERR, "type", key, "integer out of 64-bit range");
        return false;
    }
    if (nonneg && (x->num_flags & PCH_JSON_NUM_NEG) && x->u.num.i != 0) {
        emit(v, SEV_ERR, "range", key, "must be >= 0, got %" PRId64, x->u.num.i);
        return false;
    }
    return true;
}
static bool want_num(V *v, const pch_json_value *x, const char *key)
{ return want(v, x, key, PCH_JSON_NUMBER, "number"); }
static bool required(V *v, const pch_json_value *x, const char *key)
{
    if (x) return true;
    emit(v, SEV_ERR, "required", key, "missing required field");
    return false;
}
static int64_t int_val(const pch_json_value *x)
{
    if (x->num_flags & PCH_JSON_NUM_I64) return x->u.num.i;
    return INT64_MAX;  /* u64 above int64: saturate for typed views */
}

static bool streq(const pch_json_value *x, const char *s)
{
    return x && x->kind == PCH_JSON_STRING && x->u.str.len == strlen(s) &&
           memcmp(x->u.str.ptr, s, x->u.str.len) == 0;
}
static bool blank(const pch_json_value *x)
{
    if (is_null(x) || x->kind != PCH_JSON_STRING) return true;
    for (size_t i = 0; i < x->u.str.len; i++)
        if (x->u.str.ptr[i] != ' ' && x->u.str.ptr[i] != '\t' && x->u.str.ptr[i] != '\n' &&
            x->u.str.ptr[i] != '\r')
            return false;
    return true;
}

static void check_extra(V *v, const pch_json_value *x) { want_obj(v, x, "extra"); }

static void check_int_array(V *v, const pch_json_value *x, const char *key, bool ints)
{
    if (!want_arr(v, x, key)) return;
    for (uint32_t i = 0; i < x->n; i++) {
        const pch_json_value *e = &x->u.items[i];
        if (e->kind != PCH_JSON_NUMBER || (ints && !(e->num_flags & PCH_JSON_NUM_INT))) {
            size_t mk = push_key(v, key, strlen(key));
            char idx[24];
            snprintf(idx, sizeof idx, "%u", i);
            emit(v, SEV_ERR, "type", idx, "expected %s, got %s", ints ? "integer" : "number",
                 kind_name(e));
            pop(v, mk);
            return;
        }
    }
}

/* ---- ContentPart (specs/atif.md §2.6) ---- */

static void check_media(V *v, const pch_json_value *src, bool audio)
{
    const pch_json_value *f[NELEM(media_keys)];
    split(v, src, media_keys, NELEM(media_keys), f, NULL, NULL, audio ? "AudioSource" : "ImageSource");
    if (required(v, f[0], "media_type") && want_str(v, f[0], "media_type")) {
        const char *mt = f[0]->u.str.ptr;
        size_t n = f[0]->u.str.len;
        bool is_img = false, is_aud = pch_atif__audio_canonical(mt, n) != NULL;
        for (size_t i = 0; i < NELEM(image_types); i++)
            if (strlen(image_types[i]) == n && memcmp(image_types[i], mt, n) == 0) is_img = true;
        if (!audio && !is_img)
            emit(v, SEV_ERR, "media-type", "media_type",
                 is_aud ? "audio media type \"%.*s\" does not match part type image"
                        : "unsupported image media type \"%.*s\"", (int)(n > 60 ? 60 : n), mt);
        if (audio && !is_aud)
            emit(v, SEV_ERR, "media-type", "media_type",
                 is_img ? "image media type \"%.*s\" does not match part type audio"
                        : "unsupported audio media type \"%.*s\"", (int)(n > 60 ? 60 : n), mt);
    }
    if (required(v, f[1], "path")) want_str(v, f[1], "path");
    if (f[2]) {
        if (!audio) emit(v, SEV_ERR, "content-part", "duration_sec", "duration_sec is only allowed on AudioSource");
        else if (want_num(v, f[2], "duration_sec") && f[2]->u.num.d < 0)
            emit(v, SEV_ERR, "range", "duration_sec", "must be >= 0");
    }
}

static void check_part(V *v, const pch_json_value *p)
{
    const pch_json_value *f[NELEM(part_keys)];
    if (p->kind != PCH_JSON_OBJECT) {
        emit(v, SEV_ERR, "type", NULL, "content part must be an object, got %s", kind_name(p));
        return;
    }
    split(v, p, part_keys, NELEM(part_keys), f, NULL, NULL, "ContentPart");
    if (!required(v, f[0], "type") || !want_str(v, f[0], "type")) return;
    if (streq(f[0], "text")) {
        if (!is_null(f[2])) emit(v, SEV_ERR, "content-part", "source", "source is forbidden on a text part");
        if (required(v, f[1], "text")) {
            if (is_null(f[1])) emit(v, SEV_ERR, "content-part", "text", "text part needs text");
            else want_str(v, f[1], "text");
        }
    } else if (streq(f[0], "image") || streq(f[0], "audio")) {
        bool audio = streq(f[0], "audio");
        if (!is_null(f[1])) emit(v, SEV_ERR, "content-part", "text", "text is forbidden on a %s part", audio ? "audio" : "image");
        if (!f[2] || is_null(f[2])) emit(v, SEV_ERR, "content-part", "source", "%s part needs source", audio ? "audio" : "image");
        else if (want_obj(v, f[2], "source")) {
            size_t mk = push_key(v, "source", 6);
            check_media(v, f[2], audio);
            pop(v, mk);
        }
    } else {
        emit(v, SEV_ERR, "content-part", "type", "unknown content part type \"%.*s\"",
             (int)(f[0]->u.str.len > 40 ? 40 : f[0]->u.str.len), f[0]->u.str.ptr);
    }
}

/* message / content: string or array of ContentPart. */
static void check_content(V *v, const pch_json_value *x, const char *key)
{
    if (is_null(x) || x->kind == PCH_JSON_STRING) return;
    if (x->kind != PCH_JSON_ARRAY) {
        emit(v, SEV_ERR, "type", key, "expected string or array of content parts, got %s", kind_name(x));
        return;
    }
    size_t mk = push_key(v, key, strlen(key));
    for (uint32_t i = 0; i < x->n; i++) {
        size_t mi = push_idx(v, i);
        check_part(v, &x->u.items[i]);
        pop(v, mi);
    }
    pop(v, mk);
}

/* Keep a valid token array typed (pch_atif_tokens): the values the parse just read, so a
** consumer storing them typed does not parse their text again (issue: parse each value
** once; on `rl` the second parse was 13 % of a build's CPU). The caller checked that the
** step's metrics text is the document's own bytes, so that off/len name the array in it. */
static void keep_tokens(V *v, const pch_json_value *m, const pch_json_value *x, pch_atif_step *st, int which)
{
    pch_atif_tokens *t = &st->tokens[which];
    const bool ids = which < 2;
    void *data = NULL;
    if (!x || x->kind != PCH_JSON_ARRAY || x->span_off < m->span_off ||
        x->span_len > m->span_len - (x->span_off - m->span_off))
        return;
    for (uint32_t i = 0; i < x->n; i++) {
        const pch_json_value *e = &x->u.items[i];
        if (e->kind != PCH_JSON_NUMBER) return;
        if (ids ? (e->num_flags & (PCH_JSON_NUM_INT | PCH_JSON_NUM_NEG | PCH_JSON_NUM_U64)) !=
                          (PCH_JSON_NUM_INT | PCH_JSON_NUM_U64) || e->u.num.u > 0xffffffffull
                : (e->num_flags & PCH_JSON_NUM_INT) || !isfinite(e->u.num.d))
            return;
    }
    if (x->n) {
        if (!(data = pch_arena_alloc(&v->doc->arena, (size_t)x->n * (ids ? 4 : 8)))) { v->fatal = PCH_ENOMEM; return; }
        for (uint32_t i = 0; i < x->n; i++) {
            if (ids) ((uint32_t *)data)[i] = (uint32_t)x->u.items[i].u.num.u;
            else ((double *)data)[i] = x->u.items[i].u.num.d;
        }
    }
    t->typed = true;
    t->data = data;
    t->n = x->n;
    t->off = x->span_off - m->span_off;
    t->len = x->span_len;
}

static void check_metrics(V *v, const pch_json_value *m, pch_atif_step *st)
{
    const pch_json_value *f[NELEM(metrics_keys)];
    split(v, m, metrics_keys, NELEM(metrics_keys), f, NULL, NULL, "Metrics");
    for (int i = 0; i < 3; i++)
        if (want_int(v, f[i], metrics_keys[i], false) && st) {
            int64_t x = int_val(f[i]);
            if (i == 0) st->prompt_tokens = x;
            else if (i == 1) st->completion_tokens = x;
            else st->cached_tokens = x;
        }
    if (want_num(v, f[3], "cost_usd") && st) { st->has_cost_usd = true; st->cost_usd = f[3]->u.num.d; }
    check_int_array(v, f[4], "prompt_token_ids", true);
    check_int_array(v, f[5], "completion_token_ids", true);
    check_int_array(v, f[6], "logprobs", false);
    if (st && v->tokens && v->doc && (f[4] || f[5] || f[6])) {
        const pch_atif_raw *r = &st->f[PCH_ATIF_S_METRICS];   /* once a step, not once an array */
        if (r->ptr && r->len == m->span_len && memcmp(r->ptr, v->src + m->span_off, m->span_len) == 0)
            for (int i = 0; i < 3; i++) keep_tokens(v, m, f[4 + i], st, i);
    }
    check_extra(v, f[7]);
}

static void check_final(V *v, const pch_json_value *m)
{
    const pch_json_value *f[NELEM(final_keys)];
    split(v, m, final_keys, NELEM(final_keys), f, NULL, NULL, "FinalMetrics");
    want_int(v, f[0], "total_prompt_tokens", false);
    want_int(v, f[1], "total_completion_tokens", false);
    want_int(v, f[2], "total_cached_tokens", false);
    want_num(v, f[3], "total_cost_usd");
    want_int(v, f[4], "total_steps", true);
    check_extra(v, f[5]);
}

/* subagent_trajectory_ref entries (§2.9). embedded = the trajectory's own embedded ids. */
static void check_refs(V *v, const pch_json_value *refs, const pch_json_value *embedded,
                       uint32_t *warn)
{
    if (!want_arr(v, refs, "subagent_trajectory_ref")) return;
    size_t mk = push_key(v, "subagent_trajectory_ref", 23);
    for (uint32_t i = 0; i < refs->n; i++) {
        const pch_json_value *r = &refs->u.items[i], *f[NELEM(ref_keys)];
        size_t mi = push_idx(v, i);
        if (r->kind != PCH_JSON_OBJECT) {
            emit(v, SEV_ERR, "type", NULL, "subagent ref must be an object, got %s", kind_name(r));
            pop(v, mi);
            continue;
        }
        split(v, r, ref_keys, NELEM(ref_keys), f, NULL, NULL, "SubagentTrajectoryRef");
        want_str(v, f[0], "trajectory_id");
        want_str(v, f[1], "trajectory_path");
        want_str(v, f[2], "session_id");
        check_extra(v, f[3]);
        if (blank(f[0]) && blank(f[1])) {
            if (!blank(f[2]) && v->minor >= 0 && v->minor < 7)
                emit(v, SEV_DEV, "legacy-subagent-ref", NULL,
                     "ref resolved by session_id only (pre-v1.7 form; v1.7+ needs trajectory_id or trajectory_path)");
            if (!blank(f[2]) && v->minor >= 0 && v->minor < 7) *warn |= PCH_ATIF_W_LEGACY_SUBAGENT_REF;
            else
                emit(v, SEV_ERR, "subagent-ref", NULL, "ref needs trajectory_id or trajectory_path");
        } else if (blank(f[1]) && !blank(f[0])) {
            bool found = false;
            if (embedded && embedded->kind == PCH_JSON_ARRAY)
                for (uint32_t j = 0; j < embedded->n && !found; j++) {
                    const pch_json_value *t = &embedded->u.items[j];
                    const pch_json_value *id = t->kind == PCH_JSON_OBJECT ?
                        pch_json_get(t, "trajectory_id", 13) : NULL;
                    if (id && id->kind == PCH_JSON_STRING && id->u.str.len == f[0]->u.str.len &&
                        memcmp(id->u.str.ptr, f[0]->u.str.ptr, id->u.str.len) == 0)
                        found = true;
                }
            if (!found) *warn |= PCH_ATIF_W_UNRESOLVED_SUBAGENT_REF;
            if (!found)
                emit(v, SEV_DEV, "unresolved-subagent-ref", "trajectory_id",
                     "no embedded subagent trajectory \"%.*s\"",
                     (int)(f[0]->u.str.len > 80 ? 80 : f[0]->u.str.len), f[0]->u.str.ptr);
        }
        pop(v, mi);
    }
    pop(v, mk);
}

/* ---- steps ---- */

static void check_step(V *v, const pch_json_value *s, size_t idx, pch_atif_step *st,
                       const pch_json_value *embedded, uint32_t *warn)
{
    const pch_json_value *f[PCH_ATIF_S_N];
    bool agent = false;
    if (st) {
        st->ordinal = (uint32_t)idx;
        st->prompt_tokens = st->completion_tokens = st->cached_tokens = -1;
        st->is_copied_context = -1;
    }
    if (s->kind != PCH_JSON_OBJECT) {
        emit(v, SEV_ERR, "type", NULL, "step must be an object, got %s", kind_name(s));
        return;
    }
    split(v, s, pch_atif__step_keys, PCH_ATIF_S_N, f, st ? &st->unknown : NULL,
          st ? &st->n_unknown : NULL, "Step");
    if (st && st->n_unknown) *warn |= PCH_ATIF_W_UNKNOWN_KEYS;
    if (st)
        for (int i = 0; i < PCH_ATIF_S_N; i++)
            if (f[i] && ((i != PCH_ATIF_S_TOOL_CALLS && i != PCH_ATIF_S_OBSERVATION) || is_null(f[i])))
                st->f[i] = raw_of(v, f[i]);   /* a null tool_calls / observation is kept as written */

    /* step_id: positive integer; sequence 1,2,3… in array order (§3.3, RFC-0006 §6.7). */
    if (required(v, f[PCH_ATIF_S_STEP_ID], "step_id") &&
        want_int(v, f[PCH_ATIF_S_STEP_ID], "step_id", false)) {
        int64_t id = int_val(f[PCH_ATIF_S_STEP_ID]);
        if (st) st->step_id = id;
        if (id < 1) emit(v, SEV_ERR, "step-id", "step_id", "step_id must be >= 1, got %" PRId64, id);
        else if ((uint64_t)id != (uint64_t)idx + 1) {
            emit(v, SEV_DEV, "step-id-sequence", "step_id",
                 "step_id %" PRId64 " at position %zu (expected %zu)", id, idx, idx + 1);
            *warn |= PCH_ATIF_W_NON_MONOTONIC_STEP_ID;
        }
    } else if (is_null(f[PCH_ATIF_S_STEP_ID]) && f[PCH_ATIF_S_STEP_ID]) {
        emit(v, SEV_ERR, "required", "step_id", "step_id must not be null");
    }

    if (want_str(v, f[PCH_ATIF_S_TIMESTAMP], "timestamp")) {
        const pch_json_value *t = f[PCH_ATIF_S_TIMESTAMP];
        int64_t ms;
        if (pch_time_parse_iso8601(&ms, t->u.str.ptr, t->u.str.len, NULL) < 0)
            emit(v, SEV_ERR, "timestamp", "timestamp", "not an ISO 8601 timestamp: \"%.*s\"",
                 (int)(t->u.str.len > 60 ? 60 : t->u.str.len), t->u.str.ptr);
        else if (st) { st->has_timestamp = true; st->timestamp_ms = ms; }
        if (st) st->timestamp = str_of(v, t);
    }

    if (required(v, f[PCH_ATIF_S_SOURCE], "source")) {
        const pch_json_value *x = f[PCH_ATIF_S_SOURCE];
        pch_atif_source so = PCH_ATIF_SOURCE_UNKNOWN;
        if (streq(x, "system")) so = PCH_ATIF_SOURCE_SYSTEM;
        else if (streq(x, "user")) so = PCH_ATIF_SOURCE_USER;
        else if (streq(x, "agent")) so = PCH_ATIF_SOURCE_AGENT;
        else emit(v, SEV_ERR, "source", "source", "source must be \"system\", \"user\" or \"agent\"");
        agent = so == PCH_ATIF_SOURCE_AGENT;
        if (st) st->source = so;
    }

    /* Agent-only fields (§2.3). */
    static const int agent_only[] = { PCH_ATIF_S_MODEL_NAME, PCH_ATIF_S_REASONING_EFFORT,
        PCH_ATIF_S_REASONING_CONTENT, PCH_ATIF_S_TOOL_CALLS, PCH_ATIF_S_METRICS };
    if (streq(f[PCH_ATIF_S_SOURCE], "system") || streq(f[PCH_ATIF_S_SOURCE], "user"))
        for (size_t i = 0; i < NELEM(agent_only); i++)
            if (!is_null(f[agent_only[i]]))
                emit(v, SEV_ERR, "agent-only", pch_atif__step_keys[agent_only[i]],
                     "only allowed on agent steps (step %zu has source \"%s\")", idx + 1,
                     streq(f[PCH_ATIF_S_SOURCE], "system") ? "system" : "user");

    if (want_str(v, f[PCH_ATIF_S_MODEL_NAME], "model_name") && st)
        st->model_name = str_of(v, f[PCH_ATIF_S_MODEL_NAME]);
    if (!is_null(f[PCH_ATIF_S_REASONING_EFFORT]) &&
        f[PCH_ATIF_S_REASONING_EFFORT]->kind != PCH_JSON_STRING &&
        f[PCH_ATIF_S_REASONING_EFFORT]->kind != PCH_JSON_NUMBER)
        emit(v, SEV_ERR, "type", "reasoning_effort", "expected string or number, got %s",
             kind_name(f[PCH_ATIF_S_REASONING_EFFORT]));
    if (required(v, f[PCH_ATIF_S_MESSAGE], "message")) {
        if (is_null(f[PCH_ATIF_S_MESSAGE]))
            emit(v, SEV_ERR, "required", "message", "message must not be null (use \"\")");
        else check_content(v, f[PCH_ATIF_S_MESSAGE], "message");
    }
    if (want_str(v, f[PCH_ATIF_S_REASONING_CONTENT], "reasoning_content") && st)
        st->reasoning_content = str_of(v, f[PCH_ATIF_S_REASONING_CONTENT]);
    if (want_int(v, f[PCH_ATIF_S_LLM_CALL_COUNT], "llm_call_count", true)) {
        int64_t n = int_val(f[PCH_ATIF_S_LLM_CALL_COUNT]);
        if (st) { st->has_llm_call_count = true; st->llm_call_count = n; }
        if (n == 0 && agent) {
            if (!is_null(f[PCH_ATIF_S_METRICS]))
                emit(v, SEV_ERR, "llm-call-count", "metrics",
                     "llm_call_count 0 (deterministic dispatch) forbids metrics");
            if (!is_null(f[PCH_ATIF_S_REASONING_CONTENT]))
                emit(v, SEV_ERR, "llm-call-count", "reasoning_content",
                     "llm_call_count 0 (deterministic dispatch) forbids reasoning_content");
        }
    }
    if (want(v, f[PCH_ATIF_S_IS_COPIED_CONTEXT], "is_copied_context", PCH_JSON_TRUE, "boolean") && st)
        st->is_copied_context = f[PCH_ATIF_S_IS_COPIED_CONTEXT]->kind == PCH_JSON_TRUE;
    check_extra(v, f[PCH_ATIF_S_EXTRA]);
    if (want_obj(v, f[PCH_ATIF_S_METRICS], "metrics")) {
        size_t mk = push_key(v, "metrics", 7);
        check_metrics(v, f[PCH_ATIF_S_METRICS], st);
        pop(v, mk);
    }

    /* tool_calls */
    const pch_json_value *calls = f[PCH_ATIF_S_TOOL_CALLS];
    if (calls && !is_null(calls) && want_arr(v, calls, "tool_calls")) {
        pch_atif_tool_call *tc = NULL;
        size_t mk = push_key(v, "tool_calls", 10);
        if (st) {
            st->has_tool_calls = true;
            tc = aalloc(v, calls->n, sizeof(*tc));
            st->calls = tc;
            st->n_calls = tc ? calls->n : 0;
        }
        for (uint32_t i = 0; i < calls->n; i++) {
            const pch_json_value *c = &calls->u.items[i], *cf[PCH_ATIF_C_N];
            pch_atif_tool_call *t = tc ? &tc[i] : NULL;
            size_t mi = push_idx(v, i);
            if (c->kind != PCH_JSON_OBJECT) {
                emit(v, SEV_ERR, "type", NULL, "tool call must be an object, got %s", kind_name(c));
                pop(v, mi);
                continue;
            }
            split(v, c, pch_atif__call_keys, PCH_ATIF_C_N, cf, t ? &t->unknown : NULL,
                  t ? &t->n_unknown : NULL, "ToolCall");
            if (t) {
                t->ordinal = i;
                if (t->n_unknown) *warn |= PCH_ATIF_W_UNKNOWN_KEYS;
                for (int k = 0; k < PCH_ATIF_C_N; k++) if (cf[k]) t->f[k] = raw_of(v, cf[k]);
            }
            if (required(v, cf[0], "tool_call_id")) {
                if (is_null(cf[0])) emit(v, SEV_ERR, "required", "tool_call_id", "tool_call_id must not be null");
                else if (want_str(v, cf[0], "tool_call_id")) {
                    if (t) t->tool_call_id = str_of(v, cf[0]);
                    for (uint32_t j = 0; j < i; j++) {
                        const pch_json_value *o = calls->u.items[j].kind == PCH_JSON_OBJECT ?
                            pch_json_get(&calls->u.items[j], "tool_call_id", 12) : NULL;
                        if (o && o->kind == PCH_JSON_STRING && o->u.str.len == cf[0]->u.str.len &&
                            memcmp(o->u.str.ptr, cf[0]->u.str.ptr, o->u.str.len) == 0) {
                            emit(v, SEV_DEV, "duplicate-tool-call-id", "tool_call_id",
                                 "duplicate tool_call_id \"%.*s\" in step %zu",
                                 (int)(o->u.str.len > 80 ? 80 : o->u.str.len), o->u.str.ptr, idx + 1);
                            *warn |= PCH_ATIF_W_DUPLICATE_TOOL_CALL_ID;
                            break;
                        }
                    }
                }
            }
            if (required(v, cf[1], "function_name")) {
                if (is_null(cf[1])) emit(v, SEV_ERR, "required", "function_name", "function_name must not be null");
                else if (want_str(v, cf[1], "function_name") && t) t->function_name = str_of(v, cf[1]);
            }
            if (required(v, cf[2], "arguments") && cf[2]->kind != PCH_JSON_OBJECT)
                emit(v, SEV_ERR, "arguments", "arguments", "arguments must be a JSON object, got %s",
                     kind_name(cf[2]));
            check_extra(v, cf[3]);
            pop(v, mi);
        }
        pop(v, mk);
    } else if (calls && st) {
        st->f[PCH_ATIF_S_TOOL_CALLS] = raw_of(v, calls);   /* explicit null */
    }

    /* observation */
    const pch_json_value *obs = f[PCH_ATIF_S_OBSERVATION];
    if (obs && !is_null(obs) && want_obj(v, obs, "observation")) {
        const pch_json_value *of[1];
        size_t mk = push_key(v, "observation", 11);
        split(v, obs, obs_keys, 1, of, st ? &st->obs_unknown : NULL, st ? &st->n_obs_unknown : NULL,
              "Observation");
        if (st) {
            st->has_observation = true;
            if (st->n_obs_unknown) *warn |= PCH_ATIF_W_UNKNOWN_KEYS;
        }
        if (required(v, of[0], "results") && (is_null(of[0]) ?
            (emit(v, SEV_ERR, "required", "results", "results must be an array"), false) :
            want_arr(v, of[0], "results"))) {
            const pch_json_value *res = of[0];
            pch_atif_result *rs = NULL;
            size_t mr = push_key(v, "results", 7);
            if (st) {
                st->has_results = true;
                rs = aalloc(v, res->n, sizeof(*rs));
                st->results = rs;
                st->n_results = rs ? res->n : 0;
            }
            for (uint32_t i = 0; i < res->n; i++) {
                const pch_json_value *r = &res->u.items[i], *rf[PCH_ATIF_R_N];
                pch_atif_result *o = rs ? &rs[i] : NULL;
                size_t mi = push_idx(v, i);
                if (o) { o->ordinal = i; o->call_ordinal = -1; o->origin = PCH_ATIF_ORIGIN_OBSERVATION; }
                if (r->kind != PCH_JSON_OBJECT) {
                    emit(v, SEV_ERR, "type", NULL, "observation result must be an object, got %s", kind_name(r));
                    pop(v, mi);
                    continue;
                }
                split(v, r, pch_atif__result_keys, PCH_ATIF_R_N, rf, o ? &o->unknown : NULL,
                      o ? &o->n_unknown : NULL, "ObservationResult");
                if (o) {
                    if (o->n_unknown) *warn |= PCH_ATIF_W_UNKNOWN_KEYS;
                    for (int k = 0; k < PCH_ATIF_R_N; k++) if (rf[k]) o->f[k] = raw_of(v, rf[k]);
                }
                /* source_call_id names a tool call of the same step (§3.6). */
                if (want_str(v, rf[0], "source_call_id")) {
                    const pch_json_value *sc = rf[0];
                    int32_t found = -1;
                    if (o) o->source_call_id = str_of(v, sc);
                    if (calls && calls->kind == PCH_JSON_ARRAY)
                        for (uint32_t j = 0; j < calls->n && found < 0; j++) {
                            const pch_json_value *id = calls->u.items[j].kind == PCH_JSON_OBJECT ?
                                pch_json_get(&calls->u.items[j], "tool_call_id", 12) : NULL;
                            if (id && id->kind == PCH_JSON_STRING && id->u.str.len == sc->u.str.len &&
                                memcmp(id->u.str.ptr, sc->u.str.ptr, sc->u.str.len) == 0)
                                found = (int32_t)j;
                        }
                    if (found < 0)
                        emit(v, SEV_ERR, "source-call-id", "source_call_id",
                             "no tool call \"%.*s\" in step %zu",
                             (int)(sc->u.str.len > 80 ? 80 : sc->u.str.len), sc->u.str.ptr, idx + 1);
                    if (o) o->call_ordinal = found;
                }
                check_content(v, rf[1], "content");
                check_refs(v, rf[2], embedded, warn);
                check_extra(v, rf[3]);
                pop(v, mi);
            }
            pop(v, mr);
        }
        pop(v, mk);
    } else if (obs && st) {
        st->f[PCH_ATIF_S_OBSERVATION] = raw_of(v, obs);    /* explicit null */
    }
}

/* ---- trajectories ---- */

static int version_minor(const pch_json_value *x)
{
    if (!x || x->kind != PCH_JSON_STRING) return -1;
    for (size_t i = 0; i < NELEM(schema_versions); i++)
        if (streq(x, schema_versions[i])) return (int)i;
    return -1;
}

static int32_t new_traj(V *v)
{
    pch_atif_doc *d = v->doc;
    if (!d) return -1;
    if (d->n_traj == d->cap_traj) {
        size_t nc = d->cap_traj ? d->cap_traj * 2 : 4, bytes;
        if (!pch_mul_size(&bytes, nc, sizeof(pch_atif_trajectory))) { v->fatal = PCH_ENOMEM; return -1; }
        pch_atif_trajectory *n = pch_realloc(d->ctx, d->traj, bytes);
        if (!n) { v->fatal = PCH_ENOMEM; return -1; }
        d->traj = n;
        d->cap_traj = nc;
    }
    memset(&d->traj[d->n_traj], 0, sizeof(pch_atif_trajectory));
    d->traj[d->n_traj].parent = -1;
    d->traj[d->n_traj].parent_local_ordinal = -1;
    return (int32_t)d->n_traj++;
}
#define T(i) (v->doc->traj[(i)])

/* step_id unique within the trajectory (RFC-0006 §6.7): every step whose step_id an earlier
** step has is an error, in step order. The (step_id, index) pairs are sorted, not compared
** pairwise: a 40,000-step trajectory (the pathological corpus of bench/corpus/gen-kinds.js)
** spent 19 s of its build here. */
typedef struct step_sid { double d; uint32_t i; } step_sid;

static int cmp_sid(const void *pa, const void *pb)
{
    const step_sid *a = pa, *b = pb;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int cmp_sid_index(const void *pa, const void *pb)
{
    const step_sid *a = pa, *b = pb;
    return a->i < b->i ? -1 : a->i > b->i;
}

static void check_step_ids(V *v, const pch_json_value *steps)
{
    step_sid *ids, *dup;
    size_t n = 0, nd = 0;
    if (steps->n < 2) return;
    ids = pch_malloc(v->ctx, (size_t)steps->n * sizeof *ids);
    dup = pch_malloc(v->ctx, (size_t)steps->n * sizeof *dup);
    if (!ids || !dup) { v->fatal = PCH_ENOMEM; goto done; }
    for (uint32_t i = 0; i < steps->n; i++) {
        const pch_json_value *a = steps->u.items[i].kind == PCH_JSON_OBJECT ? pch_json_get(&steps->u.items[i], "step_id", 7) : NULL;
        if (a && a->kind == PCH_JSON_NUMBER) { ids[n].d = a->u.num.d; ids[n++].i = i; }
    }
    qsort(ids, n, sizeof *ids, cmp_sid);
    for (size_t k = 1; k < n; k++)
        if (ids[k].d == ids[k - 1].d) dup[nd++] = ids[k];
    qsort(dup, nd, sizeof *dup, cmp_sid_index);
    for (size_t k = 0; k < nd && !v->fatal; k++) {
        size_t mi = push_idx(v, dup[k].i);
        emit(v, SEV_ERR, "step-id", "step_id", "duplicate step_id %.0f", dup[k].d);
        pop(v, mi);
    }
done:
    pch_free(v->ctx, ids);
    pch_free(v->ctx, dup);
}

/* Embedded subagents' trajectory_id unique within their array (§3.10): a flag per entry whose
** non-blank id an earlier entry has (NULL when none can be, or out of memory: v->fatal), found
** by sorting (id, index) pairs rather than comparing every pair, as check_step_ids does. */
typedef struct sub_sid { const char *p; size_t n; uint32_t i; } sub_sid;

static int cmp_sub_sid(const void *pa, const void *pb)
{
    const sub_sid *a = pa, *b = pb;
    int c = memcmp(a->p, b->p, a->n < b->n ? a->n : b->n);
    if (c) return c;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static uint8_t *dup_sub_ids(V *v, const pch_json_value *subs)
{
    sub_sid *ids;
    uint8_t *dup;
    size_t n = 0;
    if (subs->n < 2) return NULL;
    ids = pch_malloc(v->ctx, (size_t)subs->n * sizeof *ids);
    dup = pch_calloc(v->ctx, subs->n, 1);
    if (!ids || !dup) { v->fatal = PCH_ENOMEM; pch_free(v->ctx, ids); pch_free(v->ctx, dup); return NULL; }
    for (uint32_t i = 0; i < subs->n; i++) {
        const pch_json_value *id = subs->u.items[i].kind == PCH_JSON_OBJECT ? pch_json_get(&subs->u.items[i], "trajectory_id", 13) : NULL;
        if (!blank(id)) { ids[n].p = id->u.str.ptr; ids[n].n = id->u.str.len; ids[n++].i = i; }
    }
    qsort(ids, n, sizeof *ids, cmp_sub_sid);
    for (size_t k = 1; k < n; k++)
        if (ids[k].n == ids[k - 1].n && memcmp(ids[k].p, ids[k - 1].p, ids[k].n) == 0) dup[ids[k].i] = 1;
    pch_free(v->ctx, ids);
    return dup;
}

static void check_traj(V *v, const pch_json_value *t, int32_t parent, int32_t local)
{
    const pch_json_value *f[PCH_ATIF_T_N];
    int32_t me = -1;
    uint32_t warn = 0;
    int saved_minor;
    if (v->fatal) return;
    if (t->kind != PCH_JSON_OBJECT) {
        emit(v, SEV_ERR, "type", NULL, "trajectory must be an object, got %s", kind_name(t));
        return;
    }
    if (v->doc) {
        me = new_traj(v);
        if (me < 0) return;
        T(me).parent = parent;
        T(me).parent_local_ordinal = local;
        T(me).preorder = (uint32_t)me;
    }
    {
        const pch_atif_member *unk = NULL;
        uint32_t nu = 0;
        split(v, t, pch_atif__traj_keys, PCH_ATIF_T_N, f, v->doc ? &unk : NULL, &nu, "Trajectory");
        if (me >= 0) {
            T(me).unknown = unk;
            T(me).n_unknown = nu;
            if (nu) warn |= PCH_ATIF_W_UNKNOWN_KEYS;
            for (int i = 0; i < PCH_ATIF_T_N; i++)
                if (f[i] && i != PCH_ATIF_T_AGENT && i != PCH_ATIF_T_STEPS &&
                    i != PCH_ATIF_T_SUBAGENT_TRAJECTORIES)
                    T(me).f[i] = raw_of(v, f[i]);
        }
    }
    const pch_json_value *sv = f[PCH_ATIF_T_SCHEMA_VERSION];
    if (!sv) {
        emit(v, SEV_DEV, "missing-schema-version", NULL, "missing schema_version (the RFC marks it required)");
        warn |= PCH_ATIF_W_MISSING_SCHEMA_VERSION;
    } else if (want_str(v, sv, "schema_version") && version_minor(sv) < 0) {
        emit(v, SEV_ERR, "schema-version", "schema_version", "unknown schema_version \"%.*s\"",
             (int)(sv->u.str.len > 40 ? 40 : sv->u.str.len), sv->u.str.ptr);
    } else if (is_null(sv)) {
        emit(v, SEV_ERR, "schema-version", "schema_version", "schema_version must not be null");
    }
    saved_minor = v->minor;
    v->minor = version_minor(sv);       /* refs follow their own document's version */
    if (want_str(v, f[PCH_ATIF_T_SESSION_ID], "session_id") && me >= 0)
        T(me).session_id = str_of(v, f[PCH_ATIF_T_SESSION_ID]);
    if (want_str(v, f[PCH_ATIF_T_TRAJECTORY_ID], "trajectory_id") && me >= 0)
        T(me).trajectory_id = str_of(v, f[PCH_ATIF_T_TRAJECTORY_ID]);
    if (me >= 0) T(me).schema_version = str_of(v, sv);
    want_str(v, f[PCH_ATIF_T_NOTES], "notes");
    if (want_str(v, f[PCH_ATIF_T_CONTINUED_TRAJECTORY_REF], "continued_trajectory_ref") && me >= 0)
        T(me).continued_trajectory_ref = str_of(v, f[PCH_ATIF_T_CONTINUED_TRAJECTORY_REF]);
    check_extra(v, f[PCH_ATIF_T_EXTRA]);
    if (want_obj(v, f[PCH_ATIF_T_FINAL_METRICS], "final_metrics")) {
        size_t mk = push_key(v, "final_metrics", 13);
        check_final(v, f[PCH_ATIF_T_FINAL_METRICS]);
        pop(v, mk);
    }

    /* agent */
    const pch_json_value *ag = f[PCH_ATIF_T_AGENT];
    if (required(v, ag, "agent")) {
        if (is_null(ag)) emit(v, SEV_ERR, "required", "agent", "agent must not be null");
        else if (want_obj(v, ag, "agent")) {
            const pch_json_value *af[5];
            const pch_atif_member *unk = NULL;
            uint32_t nu = 0;
            size_t mk = push_key(v, "agent", 5);
            split(v, ag, pch_atif__agent_keys, 5, af, v->doc ? &unk : NULL, &nu, "Agent");
            if (me >= 0) {
                T(me).has_agent = true;
                T(me).agent_unknown = unk;
                T(me).n_agent_unknown = nu;
                if (nu) warn |= PCH_ATIF_W_UNKNOWN_KEYS;
                for (int i = 0; i < 5; i++) if (af[i]) T(me).agent_f[i] = raw_of(v, af[i]);
            }
            for (int i = 0; i < 2; i++)
                if (required(v, af[i], pch_atif__agent_keys[i])) {
                    if (is_null(af[i])) emit(v, SEV_ERR, "required", pch_atif__agent_keys[i], "must not be null");
                    else want_str(v, af[i], pch_atif__agent_keys[i]);
                }
            want_str(v, af[2], "model_name");
            if (want_arr(v, af[3], "tool_definitions"))
                for (uint32_t i = 0; i < af[3]->n; i++)
                    if (af[3]->u.items[i].kind != PCH_JSON_OBJECT) {
                        size_t mt = push_key(v, "tool_definitions", 16);
                        char ix[24];
                        snprintf(ix, sizeof ix, "%u", i);
                        emit(v, SEV_ERR, "type", ix, "tool definition must be an object");
                        pop(v, mt);
                        break;
                    }
            check_extra(v, af[4]);
            if (me >= 0) {
                T(me).agent_name = str_of(v, af[0]);
                T(me).agent_version = str_of(v, af[1]);
                T(me).agent_model_name = str_of(v, af[2]);
            }
            pop(v, mk);
        }
    } else if (ag && me >= 0) {
        T(me).f[PCH_ATIF_T_AGENT] = raw_of(v, ag);
    }

    /* subagent_trajectories: ids non-null and unique (§3.10) */
    const pch_json_value *subs = f[PCH_ATIF_T_SUBAGENT_TRAJECTORIES];
    if (subs && is_null(subs) && me >= 0) T(me).f[PCH_ATIF_T_SUBAGENT_TRAJECTORIES] = raw_of(v, subs);
    if (!want_arr(v, subs, "subagent_trajectories")) subs = NULL;

    /* steps */
    const pch_json_value *steps = f[PCH_ATIF_T_STEPS];
    if (required(v, steps, "steps")) {
        if (is_null(steps)) emit(v, SEV_ERR, "required", "steps", "steps must not be null");
        else if (want_arr(v, steps, "steps")) {
            pch_atif_step *st = NULL;
            size_t mk = push_key(v, "steps", 5);
            if (steps->n == 0) emit(v, SEV_ERR, "steps-empty", NULL, "steps must hold at least one step");
            if (me >= 0) {
                st = aalloc(v, steps->n, sizeof(*st));
                T(me).has_steps = true;
                T(me).steps = st;
                T(me).n_steps = st ? steps->n : 0;
            }
            for (uint32_t i = 0; i < steps->n && !v->fatal; i++) {
                size_t mi = push_idx(v, i);
                check_step(v, &steps->u.items[i], i, st ? &st[i] : NULL, subs, &warn);
                pop(v, mi);
            }
            check_step_ids(v, steps);
            pop(v, mk);
        }
    } else if (steps && me >= 0) {
        T(me).f[PCH_ATIF_T_STEPS] = raw_of(v, steps);
    }

    if (subs) {
        size_t mk = push_key(v, "subagent_trajectories", 21);
        uint32_t *kids = NULL;
        if (me >= 0) {
            T(me).has_subagent_trajectories = true;
            kids = aalloc(v, subs->n, sizeof(uint32_t));
        }
        uint8_t *dup = dup_sub_ids(v, subs);
        for (uint32_t i = 0; i < subs->n && !v->fatal; i++) {
            const pch_json_value *c = &subs->u.items[i];
            size_t mi = push_idx(v, i);
            if (c->kind == PCH_JSON_OBJECT) {
                const pch_json_value *id = pch_json_get(c, "trajectory_id", 13);
                if (blank(id))
                    emit(v, SEV_ERR, "subagent-id", "trajectory_id",
                         "embedded subagent trajectory needs a trajectory_id");
                else if (dup && dup[i])
                    emit(v, SEV_ERR, "subagent-id", "trajectory_id",
                         "duplicate embedded trajectory_id \"%.*s\"",
                         (int)(id->u.str.len > 80 ? 80 : id->u.str.len), id->u.str.ptr);
            }
            if (kids && v->doc) kids[i] = (uint32_t)v->doc->n_traj;
            check_traj(v, c, me, (int32_t)i);
            pop(v, mi);
        }
        pch_free(v->ctx, dup);
        if (me >= 0 && kids) { T(me).children = kids; T(me).n_children = subs->n; }
        pop(v, mk);
    }

    if (me >= 0) {
        pch_atif_trajectory *tr = &T(me);
        if (!is_null(f[PCH_ATIF_T_CONTINUED_TRAJECTORY_REF])) tr->state = PCH_ATIF_STATE_TRUNCATED;
        else if (!is_null(f[PCH_ATIF_T_FINAL_METRICS])) tr->state = PCH_ATIF_STATE_TERMINAL;
        else tr->state = PCH_ATIF_STATE_OPEN;
        tr->warnings |= warn;
    }
    v->minor = saved_minor;
}

/* ---- keys (RFC-0006 §5.2) ---- */

static const char *gen_key(V *v, const char *kind, uint32_t preorder)
{
    char fp[65], buf[64];
    pch_buf b;
    const char *r;
    pch_blake3_hex(fp, v->fingerprint, strlen(v->fingerprint));
    pch_buf_init(&b, v->ctx);
    snprintf(buf, sizeof buf, "#%u", preorder);
    pch_buf_printf(&b, "%s:%.8s:%s%s", kind, fp, v->file, strcmp(kind, "run") == 0 ? "" : buf);
    if (b.oom) { v->fatal = PCH_ENOMEM; pch_buf_dispose(&b); return NULL; }
    r = adup(v, (const char *)b.data, b.len);
    pch_buf_dispose(&b);
    return r;
}

/* "<producer id>@<document path>": the trajectory key of a producer id (§5.2). */
static const char *qualify(V *v, const char *id)
{
    size_t a = strlen(id), b = strlen(v->file);
    char *r = pch_arena_alloc(&v->doc->arena, a + b + 2);
    if (!r) { v->fatal = PCH_ENOMEM; return NULL; }
    memcpy(r, id, a);
    r[a] = '@';
    memcpy(r + a + 1, v->file, b + 1);
    return r;
}

static void assign_keys(V *v)
{
    pch_atif_doc *d = v->doc;
    for (size_t i = 0; i < d->n_traj && !v->fatal; i++) {
        pch_atif_trajectory *t = &d->traj[i];
        t->source_id = v->source_id;
        t->doc_path = d->file;
        if (t->session_id && t->session_id[0]) t->run_key = t->session_id;
        else if (t->parent >= 0) {          /* embedded subagents inherit the run */
            t->run_key = d->traj[t->parent].run_key;
            t->run_key_generated = d->traj[t->parent].run_key_generated;
        } else {
            t->run_key = gen_key(v, "run", 0);
            t->run_key_generated = true;
        }
        const char *k = NULL;
        if (t->trajectory_id && t->trajectory_id[0]) k = t->trajectory_id;
        else if (t->parent < 0 && t->session_id && t->session_id[0]) k = t->session_id;
        /* A key depends on its own document only (§5.2; docs/atif.md "Stable keys"): a
        ** producer id names a trajectory together with the document's path, because other
        ** documents may carry the same id (session ids are run-scoped, and copies repeat
        ** trajectory ids). Whichever documents sit beside it, the key stays the same. */
        if (k && v->file[0]) k = qualify(v, k);
        /* unique inside the document */
        for (size_t j = 0; k && j < i; j++)
            if (strcmp(d->traj[j].trajectory_key, k) == 0) { k = NULL; t->warnings |= PCH_ATIF_W_KEY_COLLISION; }
        if (k) t->trajectory_key = k;
        else if (!v->fatal) {
            t->trajectory_key = gen_key(v, "traj", (uint32_t)i);
            t->trajectory_key_generated = true;
            t->warnings |= PCH_ATIF_W_GENERATED_KEY;
        }
    }
}

/* ---- public entry points ---- */

static int run(V *v, const char *text, size_t len, pch_error *err)
{
    pch_json_parser *p = NULL;
    const pch_json_value *root;
    pch_error jerr;
    int rc = pch_json_parser_new(&p, v->ctx, NULL, err);
    if (rc < 0) return rc;
    pch_error_clear(&jerr);
    rc = pch_json_parser_parse(p, text, len, &root, &jerr);
    if (rc < 0) {
        if (rc == PCH_ENOMEM) { pch_json_parser_free(p); return pch_error_set(err, rc, "%s", jerr.msg); }
        emit(v, SEV_ERR, "json", NULL, "%s", jerr.msg);
        pch_json_parser_free(p);
        return PCH_OK;
    }
    v->src = text;
    v->minor = -1;
    check_traj(v, root, -1, -1);
    if (!v->fatal && v->doc && v->n_err == 0) assign_keys(v);
    pch_json_parser_free(p);
    if (v->fatal == PCH_ENOMEM) return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
    if (v->fatal == PCH_ECANCELED) return pch_error_set(err, PCH_ECANCELED, "atif: stopped by the finding callback");
    return PCH_OK;
}

static void v_init(V *v, pch_ctx *ctx, const char *file, const pch_atif_options *opts,
                   pch_atif_finding_cb cb, void *payload)
{
    memset(v, 0, sizeof *v);
    v->ctx = ctx;
    v->file = file ? file : "";
    v->strict = opts && opts->strict;
    v->tokens = opts && opts->version >= 5 && opts->tokens;
    v->source_id = opts && opts->source_id ? opts->source_id : "";
    v->fingerprint = opts && opts->source_fingerprint ? opts->source_fingerprint : "";
    v->cb = cb;
    v->payload = payload;
    pch_buf_init(&v->ptr, ctx);
    pch_buf_init(&v->tmp, ctx);
    pch_buf_reserve(&v->ptr, 64);
}

int pch_atif_validate(pch_ctx *ctx, const char *text, size_t len, const char *file,
                      const pch_atif_options *opts, pch_atif_finding_cb findings, void *payload,
                      size_t *n_errors, size_t *n_warnings, pch_error *err)
{
    V v;
    int rc;
    v_init(&v, ctx, file, opts, findings, payload);
    rc = run(&v, text, len, err);
    if (n_errors) *n_errors = v.n_err;
    if (n_warnings) *n_warnings = v.n_warn;
    pch_buf_dispose(&v.ptr);
    pch_buf_dispose(&v.tmp);
    return rc;
}

int pch_atif_doc_parse(pch_atif_doc **out, pch_ctx *ctx, const char *text, size_t len,
                       const char *file, const pch_atif_options *opts,
                       pch_atif_finding_cb findings, void *payload, pch_error *err)
{
    V v;
    int rc;
    pch_atif_doc *d;
    *out = NULL;
    d = pch_calloc(ctx, 1, sizeof(*d));
    if (!d) return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
    d->ctx = ctx;
    pch_arena_init(&d->arena, ctx, 64 * 1024);
    v_init(&v, ctx, file, opts, findings, payload);
    v.doc = d;
    d->file = adup(&v, v.file, strlen(v.file));
    if (d->file) v.file = d->file;
    rc = run(&v, text, len, err);
    if (rc == PCH_OK && v.n_err)
        rc = pch_error_set(err, PCH_EINVAL, "%s", v.first_err);
    if (rc == PCH_OK && d->n_traj == 0)
        rc = pch_error_set(err, PCH_EINVAL, "%s: not an ATIF document", v.file);
    pch_buf_dispose(&v.ptr);
    pch_buf_dispose(&v.tmp);
    if (rc < 0) { pch_atif_doc_free(d); return rc; }
    *out = d;
    return PCH_OK;
}

void pch_atif_doc_free(pch_atif_doc *doc)
{
    if (!doc) return;
    pch_free(doc->ctx, doc->traj);
    pch_arena_dispose(&doc->arena);
    pch_free(doc->ctx, doc);
}

size_t pch_atif_doc_count(const pch_atif_doc *doc) { return doc ? doc->n_traj : 0; }

bool pch_atif_doc_source(const pch_atif_doc *doc, uint8_t digest[32], uint64_t *bytes)
{
    if (!doc || !doc->has_source) return false;
    memcpy(digest, doc->src_digest, 32);
    *bytes = doc->src_bytes;
    return true;
}

const pch_atif_trajectory *pch_atif_doc_get(const pch_atif_doc *doc, size_t i)
{
    return doc && i < doc->n_traj ? &doc->traj[i] : NULL;
}

int pch_atif_doc_set_key(pch_atif_doc *doc, size_t i, const char *run_key,
                         const char *trajectory_key, bool generated, pch_error *err)
{
    if (!doc || i >= doc->n_traj) return pch_error_set(err, PCH_EINVAL, "atif: no trajectory %zu", i);
    pch_atif_trajectory *t = &doc->traj[i];
    if (run_key) {
        t->run_key = pch_arena_memdup(&doc->arena, run_key, strlen(run_key));
        if (!t->run_key) return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
    }
    if (trajectory_key) {
        t->trajectory_key = pch_arena_memdup(&doc->arena, trajectory_key, strlen(trajectory_key));
        if (!t->trajectory_key) return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
        t->trajectory_key_generated = generated;
        if (generated) t->warnings |= PCH_ATIF_W_GENERATED_KEY | PCH_ATIF_W_KEY_COLLISION;
    }
    return PCH_OK;
}

const char *pch_atif_warning_name(uint32_t bit)
{
    switch (bit) {
    case PCH_ATIF_W_NON_MONOTONIC_STEP_ID: return "non_monotonic_step_id";
    case PCH_ATIF_W_UNKNOWN_KEYS: return "unknown_keys";
    case PCH_ATIF_W_DUPLICATE_TOOL_CALL_ID: return "duplicate_tool_call_id";
    case PCH_ATIF_W_UNRESOLVED_SUBAGENT_REF: return "unresolved_subagent_ref";
    case PCH_ATIF_W_GENERATED_KEY: return "generated_key";
    case PCH_ATIF_W_MISSING_SCHEMA_VERSION: return "missing_schema_version";
    case PCH_ATIF_W_LEGACY_SUBAGENT_REF: return "legacy_subagent_ref";
    case PCH_ATIF_W_UNRESOLVED_CONTINUATION: return "unresolved_continuation";
    case PCH_ATIF_W_KEY_COLLISION: return "key_collision";
    default: return NULL;
    }
}

const char *pch_atif_state_name(pch_atif_state s)
{
    switch (s) {
    case PCH_ATIF_STATE_OPEN: return "open";
    case PCH_ATIF_STATE_TERMINAL: return "terminal";
    case PCH_ATIF_STATE_TRUNCATED: return "truncated";
    case PCH_ATIF_STATE_INVALID: return "invalid";
    default: return "invalid";
    }
}

int pch_atif_path_check(const char *path, size_t len, pch_error *err)
{
    size_t seg = 0;
    if (len == 0) return pch_error_set(err, PCH_EINVAL, "atif: empty path");
    if (path[0] == '/') return pch_error_set(err, PCH_EINVAL, "atif: absolute path \"%.*s\"", (int)(len > 80 ? 80 : len), path);
    for (size_t i = 0; i < len; i++) {
        if (path[i] == '\0' || path[i] == '\\')
            return pch_error_set(err, PCH_EINVAL, "atif: path holds NUL or backslash");
        if (path[i] == ':' ) {
            /* "scheme:" before the first '/' is a URL (s3://, http://, file:) */
            bool slash = memchr(path, '/', i) != NULL;
            if (!slash) return pch_error_set(err, PCH_EINVAL, "atif: URL \"%.*s\" is not fetched", (int)(len > 80 ? 80 : len), path);
        }
        if (path[i] == '/' || i + 1 == len) {
            size_t end = path[i] == '/' ? i : i + 1, n = end - seg;
            if (n == 0) return pch_error_set(err, PCH_EINVAL, "atif: empty path segment in \"%.*s\"", (int)(len > 80 ? 80 : len), path);
            if ((n == 1 && path[seg] == '.') || (n == 2 && path[seg] == '.' && path[seg + 1] == '.'))
                return pch_error_set(err, PCH_EINVAL, "atif: path \"%.*s\" leaves the input root", (int)(len > 80 ? 80 : len), path);
            seg = i + 1;
        }
    }
    return PCH_OK;
}
