/* Lance 2.0 page encoders (lance-format.md §2.3, §2.5 column "2.0 page"): the legacy
** ArrayEncoding tree, Any type URL "/lance.encodings.ArrayEncoding".
**
**   fixed width, no nulls    → Nullable{no_nulls{Flat{bits, buffer 0}}}
**   fixed width, some nulls  → Nullable{some_nulls{validity Flat{1, buffer 0},
**                                                  values Flat{bits, buffer 1}}}
**   fixed width, all null    → Nullable{all_nulls{}}, no buffers
**   variable width           → Binary{indices Nullable{no_nulls{Flat{64, buffer 0}}},
**                                     bytes Flat{8, buffer 1}, null_adjustment A}
**
** Validity bitmaps and bool values are Arrow-style: bit i = row i, LSB first, 1 = valid/true.
** Binary buffer 0 holds n u64 end offsets (no leading 0); a null row stores
** previous_end + A with A = total_bytes + 1 (nulls folded into the offsets). */
#include "lance/lance_write_int.h"

enum { AE_FLAT = 1, AE_NULLABLE = 2, AE_BINARY = 6 };

/* ArrayEncoding{flat{bits_per_value, buffer{buffer_index}}} as field `field` */
static int put_ae_flat(pch_buf *b, uint32_t field, uint64_t bits, uint64_t buf_index)
{
    size_t m1, m2, m3;
    PCH_TRY(pch_pb_begin(b, field, &m1));
    PCH_TRY(pch_pb_begin(b, AE_FLAT, &m2));
    PCH_TRY(pch_pb_put_u64_nz(b, 1, bits));
    PCH_TRY(pch_pb_begin(b, 2, &m3));
    PCH_TRY(pch_pb_put_u64_nz(b, 1, buf_index));
    PCH_TRY(pch_pb_end(b, m3));
    PCH_TRY(pch_pb_end(b, m2));
    return pch_pb_end(b, m1);
}

/* ArrayEncoding{nullable{no_nulls{values: flat{bits, buffer 0}}}} as field `field` */
static int put_ae_nonull_flat(pch_buf *b, uint32_t field, uint64_t bits)
{
    size_t m1, m2, m3;
    PCH_TRY(pch_pb_begin(b, field, &m1));
    PCH_TRY(pch_pb_begin(b, AE_NULLABLE, &m2));
    PCH_TRY(pch_pb_begin(b, 1, &m3));
    PCH_TRY(put_ae_flat(b, 1, bits, 0));
    PCH_TRY(pch_pb_end(b, m3));
    PCH_TRY(pch_pb_end(b, m2));
    return pch_pb_end(b, m1);
}

static int pack_bits(pch_buf *dst, const uint8_t *bytes, size_t n)
{
    PCH_TRY(pch_buf_zero(dst, (n + 7) / 8));
    for (size_t i = 0; i < n; i++)
        if (bytes[i]) dst->data[i / 8] |= (uint8_t)(1u << (i % 8));
    return PCH_OK;
}

static int encode_fixed(pch_lance_page_out *o, const pch_lance_page_in *in, unsigned bits)
{
    pch_buf *ae = &o->scratch[0];
    pch_buf *vals;
    size_t m1, m2;
    pch_buf_clear(ae);
    if (in->n_nulls == in->n_rows) {                          /* all_nulls{} */
        PCH_TRY(pch_pb_begin(ae, AE_NULLABLE, &m1));
        PCH_TRY(pch_pb_begin(ae, 3, &m2));
        PCH_TRY(pch_pb_end(ae, m2));
        PCH_TRY(pch_pb_end(ae, m1));
        o->n_bufs = 0;
    } else if (in->n_nulls == 0) {
        PCH_TRY(pch_pb_begin(ae, AE_NULLABLE, &m1));
        PCH_TRY(pch_pb_begin(ae, 1, &m2));                    /* no_nulls */
        PCH_TRY(put_ae_flat(ae, 1, bits, 0));
        PCH_TRY(pch_pb_end(ae, m2));
        PCH_TRY(pch_pb_end(ae, m1));
        o->n_bufs = 1;
    } else {
        PCH_TRY(pch_pb_begin(ae, AE_NULLABLE, &m1));
        PCH_TRY(pch_pb_begin(ae, 2, &m2));                    /* some_nulls */
        PCH_TRY(put_ae_flat(ae, 1, 1, 0));                    /* validity */
        PCH_TRY(put_ae_flat(ae, 2, bits, 1));                 /* values */
        PCH_TRY(pch_pb_end(ae, m2));
        PCH_TRY(pch_pb_end(ae, m1));
        PCH_TRY(pack_bits(&o->bufs[0], in->validity, in->n_rows));
        o->n_bufs = 2;
    }
    if (o->n_bufs) {
        vals = &o->bufs[o->n_bufs - 1];
        if (bits == 1) PCH_TRY(pack_bits(vals, in->values, in->n_rows));
        else PCH_TRY(pch_buf_append(vals, in->values, in->n_rows * (bits / 8)));
    }
    return PCH_OK;
}

static int encode_binary(pch_lance_page_out *o, const pch_lance_page_in *in)
{
    pch_buf *ae = &o->scratch[0];
    uint64_t total = in->offsets[in->n_rows], adj = total + 1, end = 0;
    size_t m1;
    pch_buf_clear(ae);
    PCH_TRY(pch_buf_reserve(&o->bufs[0], in->n_rows * 8));
    for (size_t i = 0; i < in->n_rows; i++) {
        if (in->validity && !in->validity[i]) {
            PCH_TRY(pch_buf_put_le64(&o->bufs[0], end + adj));
        } else {
            end = in->offsets[i + 1];
            PCH_TRY(pch_buf_put_le64(&o->bufs[0], end));
        }
    }
    PCH_TRY(pch_buf_append(&o->bufs[1], in->data, (size_t)total));
    o->n_bufs = 2;
    PCH_TRY(pch_pb_begin(ae, AE_BINARY, &m1));
    PCH_TRY(put_ae_nonull_flat(ae, 1, 64));                   /* indices */
    PCH_TRY(put_ae_flat(ae, 2, 8, 1));                        /* bytes */
    PCH_TRY(pch_pb_put_u64(ae, 3, adj));                      /* null_adjustment */
    return pch_pb_end(ae, m1);
}

int pch_lance__encode_page_20(pch_lance_page_out *o, const pch_lance_page_in *in,
                              pch_error *err)
{
    unsigned bits = pch_lance__type_bits(in->type);
    int rc;
    if (in->n_rows == 0 || (bits == 0 && pch_lance__type_offset_bits(in->type) == 0))
        return pch_error_set(err, PCH_EINVAL, "lance writer: empty page or unknown type %d",
                             (int)in->type);
    for (size_t i = 0; i < PCH_LANCE_PAGE_MAX_BUFS; i++) pch_buf_clear(&o->bufs[i]);
    pch_buf_clear(&o->any);
    o->compressed = false;
    rc = bits ? encode_fixed(o, in, bits) : encode_binary(o, in);
    if (rc == 0) rc = pch_lance__pb_any(&o->any, "/lance.encodings.ArrayEncoding", &o->scratch[0]);
    if (rc) return pch_error_set(err, PCH_ENOMEM, "lance writer: out of memory");
    o->layout = bits ? "flat" : "binary";
    return PCH_OK;
}
