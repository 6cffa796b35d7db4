/* The relations of a Vortex projection as Arrow C streams (RFC-0006 §13.1; docs/sql.md
** "Arrow streams"): runs, steps or tool_calls, the columns asked for, one struct batch per
** cluster (narrow scans straight from the lanes) or per document (every other column set),
** with the values the SQL relations give. Built on the Vortex side (src/sql/vx_source.c's
** document source); the consumer pulls batches, which bounds memory to one of them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pchronicle/arrow.h"
#include "pchronicle-vortex/projection.h"
#include "sql/sql_int.h"

typedef struct vx_stream {
    pch_ctx *ctx;
    const pch_sql_doc_source *src;
    void *h;
    pch_storyline_table t;
    pch_lance_schema *schema;
    int cols[64];
    int n_cols;
    pch_sql_lanes *lanes;             /* narrow scan, or NULL: documents */
    pch_storyline_rowgen *gen;
    uint64_t pos;
    pch_error err;
    bool done;
} vx_stream;

static int st_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    vx_stream *x = s->private_data;
    return pch_sql__arrow_schema(x->schema, x->cols, x->n_cols, out, &x->err) < 0 ? EIO : 0;
}

static int st_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    vx_stream *x = s->private_data;
    const pch_lance_batch *b = NULL;
    memset(out, 0, sizeof *out);
    while (!x->done) {
        bool eof = false;
        int rc;
        if (x->lanes) {
            rc = x->src->lanes_next(x->lanes, &b, &eof, &x->err);
        } else {
            pch_storyline_rowgen_reset(x->gen);
            rc = x->src->next(x->h, &x->pos, x->gen, &eof, &x->err);
            if (rc == 0 && !eof) rc = pch_storyline_rowgen_batch(x->gen, x->t, &b, &x->err);
        }
        if (rc < 0) return EIO;
        if (eof) { x->done = true; break; }
        if (b && b->n_rows) return pch_sql__arrow_from_batch(b, x->cols, x->n_cols, x->ctx, out, &x->err) < 0 ? EIO : 0;
    }
    return 0;                         /* out->release NULL: the end of the stream */
}

static const char *st_error(struct ArrowArrayStream *s)
{
    vx_stream *x = s->private_data;
    return x->err.msg[0] ? x->err.msg : NULL;
}

static void st_release(struct ArrowArrayStream *s)
{
    vx_stream *x = s->private_data;
    if (!s->release) return;
    if (x->lanes) x->src->lanes_close(x->lanes);
    pch_storyline_rowgen_free(x->gen);
    if (x->h) x->src->close(x->h);
    pch_lance_schema_free(x->schema);
    pch_ctx_free(x->ctx);
    free(x);
    s->release = NULL;
}

int pch_vxp_arrow_relation(const char *root, const char *relation, const char *const *columns, size_t n_columns,
                           struct ArrowArrayStream *out, pch_error *err)
{
    vx_stream *x;
    uint64_t used = 0;
    int rc;
    memset(out, 0, sizeof *out);
    if (!(x = calloc(1, sizeof *x))) return pch_error_set(err, PCH_ENOMEM, "arrow: out of memory");
    if (strcmp(relation, "runs") == 0) x->t = PCH_STORYLINE_RUNS;
    else if (strcmp(relation, "steps") == 0) x->t = PCH_STORYLINE_STEPS;
    else if (strcmp(relation, "tool_calls") == 0) x->t = PCH_STORYLINE_TOOL_CALLS;
    else { free(x); return pch_error_set(err, PCH_EINVAL, "arrow: no relation %s (runs, steps or tool_calls)", relation); }
    x->src = pch_sql__vortex_source();
    if ((rc = pch_ctx_new(&x->ctx, NULL, NULL, err)) < 0) { free(x); return rc; }
    out->private_data = x;
    out->release = st_release;
    out->get_schema = st_schema;
    out->get_next = st_next;
    out->get_last_error = st_error;
    if ((rc = pch_storyline_table_schema(x->ctx, x->t, &x->schema, err)) < 0) goto fail;
    if (!columns) {
        for (size_t i = 0; i < x->schema->n_fields && i < 64; i++) x->cols[x->n_cols++] = (int)i;
    } else {
        for (size_t i = 0; i < n_columns; i++) {
            long fi = pch_lance_schema_find(x->schema, columns[i]);
            if (fi < 0 || fi >= 63 || x->n_cols == 64) {
                rc = pch_error_set(err, PCH_EINVAL, "arrow: %s has no column %s", relation, columns[i]);
                goto fail;
            }
            x->cols[x->n_cols++] = (int)fi;
        }
    }
    for (int i = 0; i < x->n_cols; i++) used |= (uint64_t)1 << x->cols[i];
    if ((rc = x->src->open(&x->h, x->ctx, root, err)) < 0) goto fail;
    if ((rc = x->src->lanes_open(x->h, x->t, used, NULL, 0, &x->lanes, err)) < 0) goto fail;
    if (!x->lanes &&
        (rc = pch_storyline_rowgen_new(&x->gen, x->ctx, 0, x->src->asset_mode(x->h), x->src->assets, x->h, err)) < 0)
        goto fail;
    return PCH_OK;
fail:
    st_release(out);
    return rc;
}
