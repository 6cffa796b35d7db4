/* ATIF writer: rebuilds a document from the normalised model (specs/atif.md §2; RFC-0006
** §5.3 "reader restores recursive subagent_trajectories"). Known fields are written in
** schema order from their kept JSON text, unknown keys after them in input order, and
** embedded subagents recursively in their local-ordinal order. The result is the same JSON
** value as the input (key order and whitespace aside); nothing is re-sorted (§6.7). */
#include "atif/atif_int.h"
#include "json/json.h"

static int put_key(pch_buf *b, bool *first, const char *k, size_t n)
{
    if (!*first) PCH_TRY(pch_buf_putc(b, ','));
    *first = false;
    PCH_TRY(pch_json__write_string(b, k, n));
    return pch_buf_putc(b, ':');
}

static int put_raw(pch_buf *b, bool *first, const char *k, const pch_atif_raw *r)
{
    if (!r->ptr) return PCH_OK;
    PCH_TRY(put_key(b, first, k, strlen(k)));
    return pch_buf_append(b, r->ptr, r->len);
}

static int put_unknown(pch_buf *b, bool *first, const pch_atif_member *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        PCH_TRY(put_key(b, first, m[i].key, m[i].key_len));
        PCH_TRY(pch_buf_append(b, m[i].value.ptr, m[i].value.len));
    }
    return PCH_OK;
}

static int write_call(pch_buf *b, const pch_atif_tool_call *c)
{
    bool first = true;
    PCH_TRY(pch_buf_putc(b, '{'));
    for (int k = 0; k < PCH_ATIF_C_N; k++) PCH_TRY(put_raw(b, &first, pch_atif__call_keys[k], &c->f[k]));
    PCH_TRY(put_unknown(b, &first, c->unknown, c->n_unknown));
    return pch_buf_putc(b, '}');
}

static int write_result(pch_buf *b, const pch_atif_result *r)
{
    bool first = true;
    PCH_TRY(pch_buf_putc(b, '{'));
    for (int k = 0; k < PCH_ATIF_R_N; k++) PCH_TRY(put_raw(b, &first, pch_atif__result_keys[k], &r->f[k]));
    PCH_TRY(put_unknown(b, &first, r->unknown, r->n_unknown));
    return pch_buf_putc(b, '}');
}

static int write_step(pch_buf *b, const pch_atif_step *s)
{
    bool first = true;
    PCH_TRY(pch_buf_putc(b, '{'));
    for (int k = 0; k < PCH_ATIF_S_N; k++) {
        const char *key = pch_atif__step_keys[k];
        if (k == PCH_ATIF_S_TOOL_CALLS && s->has_tool_calls) {
            PCH_TRY(put_key(b, &first, key, strlen(key)));
            PCH_TRY(pch_buf_putc(b, '['));
            for (uint32_t i = 0; i < s->n_calls; i++) {
                if (i) PCH_TRY(pch_buf_putc(b, ','));
                PCH_TRY(write_call(b, &s->calls[i]));
            }
            PCH_TRY(pch_buf_putc(b, ']'));
        } else if (k == PCH_ATIF_S_OBSERVATION && s->has_observation) {
            bool of = true;
            PCH_TRY(put_key(b, &first, key, strlen(key)));
            PCH_TRY(pch_buf_putc(b, '{'));
            if (s->has_results) {
                PCH_TRY(put_key(b, &of, "results", 7));
                PCH_TRY(pch_buf_putc(b, '['));
                for (uint32_t i = 0; i < s->n_results; i++) {
                    if (i) PCH_TRY(pch_buf_putc(b, ','));
                    PCH_TRY(write_result(b, &s->results[i]));
                }
                PCH_TRY(pch_buf_putc(b, ']'));
            }
            PCH_TRY(put_unknown(b, &of, s->obs_unknown, s->n_obs_unknown));
            PCH_TRY(pch_buf_putc(b, '}'));
        } else {
            PCH_TRY(put_raw(b, &first, key, &s->f[k]));
        }
    }
    PCH_TRY(put_unknown(b, &first, s->unknown, s->n_unknown));
    return pch_buf_putc(b, '}');
}

static int write_traj(pch_buf *b, const pch_atif_doc *d, size_t i, unsigned depth)
{
    const pch_atif_trajectory *t = &d->traj[i];
    bool first = true;
    if (depth > pch_ctx_limits(d->ctx)->max_json_depth) return PCH_ELIMIT;
    PCH_TRY(pch_buf_putc(b, '{'));
    for (int k = 0; k < PCH_ATIF_T_N; k++) {
        const char *key = pch_atif__traj_keys[k];
        if (k == PCH_ATIF_T_AGENT && t->has_agent) {
            bool af = true;
            PCH_TRY(put_key(b, &first, key, strlen(key)));
            PCH_TRY(pch_buf_putc(b, '{'));
            for (int a = 0; a < 5; a++) PCH_TRY(put_raw(b, &af, pch_atif__agent_keys[a], &t->agent_f[a]));
            PCH_TRY(put_unknown(b, &af, t->agent_unknown, t->n_agent_unknown));
            PCH_TRY(pch_buf_putc(b, '}'));
        } else if (k == PCH_ATIF_T_STEPS && t->has_steps) {
            PCH_TRY(put_key(b, &first, key, strlen(key)));
            PCH_TRY(pch_buf_putc(b, '['));
            for (uint32_t s = 0; s < t->n_steps; s++) {
                if (s) PCH_TRY(pch_buf_putc(b, ','));
                PCH_TRY(write_step(b, &t->steps[s]));
            }
            PCH_TRY(pch_buf_putc(b, ']'));
        } else if (k == PCH_ATIF_T_SUBAGENT_TRAJECTORIES && t->has_subagent_trajectories) {
            PCH_TRY(put_key(b, &first, key, strlen(key)));
            PCH_TRY(pch_buf_putc(b, '['));
            for (uint32_t c = 0; c < t->n_children; c++) {
                if (c) PCH_TRY(pch_buf_putc(b, ','));
                PCH_TRY(write_traj(b, d, t->children[c], depth + 1));
            }
            PCH_TRY(pch_buf_putc(b, ']'));
        } else {
            PCH_TRY(put_raw(b, &first, key, &t->f[k]));
        }
    }
    PCH_TRY(put_unknown(b, &first, t->unknown, t->n_unknown));
    return pch_buf_putc(b, '}');
}

int pch_atif__write(pch_buf *out, const pch_atif_doc *doc, size_t i, pch_error *err)
{
    size_t mark = out->len;
    int rc;
    if (!doc || i >= doc->n_traj) return pch_error_set(err, PCH_EINVAL, "atif: no trajectory %zu", i);
    rc = write_traj(out, doc, i, 0);
    if (rc < 0) {
        out->len = mark;
        if (out->data) out->data[mark] = 0;
        if (rc == PCH_ELIMIT) return pch_error_set(err, rc, "atif: subagent nesting too deep");
        return pch_error_set(err, rc, "atif: out of memory writing a document");
    }
    return PCH_OK;
}

/* Re-indent compact JSON: strings are copied verbatim, structure gets newlines and two
** spaces per level, "key": value with one space, empty containers stay "{}" / "[]". */
int pch_atif__pretty(pch_buf *out, const char *s, size_t len)
{
    size_t depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '"') {
            size_t j = i + 1;
            while (j < len && s[j] != '"') j += (s[j] == '\\') ? 2 : 1;
            if (j >= len) j = len - 1;
            PCH_TRY(pch_buf_append(out, s + i, j - i + 1));
            i = j;
        } else if (c == '{' || c == '[') {
            char close = c == '{' ? '}' : ']';
            PCH_TRY(pch_buf_putc(out, (uint8_t)c));
            if (i + 1 < len && s[i + 1] == close) { PCH_TRY(pch_buf_putc(out, (uint8_t)close)); i++; continue; }
            depth++;
            PCH_TRY(pch_buf_putc(out, '\n'));
            for (size_t d = 0; d < depth; d++) PCH_TRY(pch_buf_append(out, "  ", 2));
        } else if (c == '}' || c == ']') {
            if (depth) depth--;
            PCH_TRY(pch_buf_putc(out, '\n'));
            for (size_t d = 0; d < depth; d++) PCH_TRY(pch_buf_append(out, "  ", 2));
            PCH_TRY(pch_buf_putc(out, (uint8_t)c));
        } else if (c == ',') {
            PCH_TRY(pch_buf_append(out, ",\n", 2));
            for (size_t d = 0; d < depth; d++) PCH_TRY(pch_buf_append(out, "  ", 2));
        } else if (c == ':') {
            PCH_TRY(pch_buf_append(out, ": ", 2));
        } else {
            PCH_TRY(pch_buf_putc(out, (uint8_t)c));
        }
    }
    return PCH_OK;
}

int pch_atif_doc_write(const pch_atif_doc *doc, size_t i, bool pretty, char **out,
                       size_t *len_out, pch_error *err)
{
    pch_buf b, p;
    int rc;
    *out = NULL;
    if (len_out) *len_out = 0;
    if (!doc) return pch_error_set(err, PCH_EINVAL, "atif: no document");
    pch_buf_init(&b, doc->ctx);
    rc = pch_atif__write(&b, doc, i, err);
    if (rc < 0) { pch_buf_dispose(&b); return rc; }
    if (pretty) {
        pch_buf_init(&p, doc->ctx);
        if (pch_atif__pretty(&p, (const char *)b.data, b.len) < 0 || pch_buf_putc(&p, '\n') < 0) {
            pch_buf_dispose(&p);
            pch_buf_dispose(&b);
            return pch_error_set(err, PCH_ENOMEM, "atif: out of memory");
        }
        pch_buf_dispose(&b);
        pch_buf_move(&p, &b);
    }
    if (pch_buf_reserve(&b, 0) < 0) { pch_buf_dispose(&b); return pch_error_set(err, PCH_ENOMEM, "atif: out of memory"); }
    *out = (char *)pch_buf_detach(&b, len_out);
    return PCH_OK;
}
