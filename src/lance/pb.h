/* Protocol Buffers wire format (proto3) for the Lance messages (lance-format.md Appendix D).
** Hand-written: encoding appends to a pch_buf; decoding walks a message with a bounds-checked
** cursor and never trusts a length. Rules the encoder follows (lance-format.md §5.2):
** implicit-presence defaults are omitted by the caller, negative int32/int64 are 10-byte
** varints (no zigzag), repeated scalars are packed; the decoder accepts packed and unpacked. */
#ifndef PCH_LANCE_PB_H
#define PCH_LANCE_PB_H

#include "core/core.h"

enum { PCH_PB_VARINT = 0, PCH_PB_I64 = 1, PCH_PB_LEN = 2, PCH_PB_I32 = 5 };

/* ---- encoding ---- */
int pch_pb_put_varint(pch_buf *b, uint64_t v);
int pch_pb_put_tag(pch_buf *b, uint32_t field, int wire);
/* Varint field (uint64/uint32/int32/int64/bool/enum); always written. */
int pch_pb_put_u64(pch_buf *b, uint32_t field, uint64_t v);
/* Omitted when v == 0 (proto3 implicit presence). */
int pch_pb_put_u64_nz(pch_buf *b, uint32_t field, uint64_t v);
int pch_pb_put_i64(pch_buf *b, uint32_t field, int64_t v);   /* written even if 0 */
int pch_pb_put_bytes(pch_buf *b, uint32_t field, const void *p, size_t n);
int pch_pb_put_str(pch_buf *b, uint32_t field, const char *s); /* omitted when empty */
/* Packed repeated varints. Omitted when n == 0. */
int pch_pb_put_packed_u64(pch_buf *b, uint32_t field, const uint64_t *v, size_t n);
int pch_pb_put_packed_i32(pch_buf *b, uint32_t field, const int32_t *v, size_t n);
/* Nested message: begin reserves a 5-byte length slot; end back-patches it (a 5-byte
** non-minimal varint is valid protobuf, but we shift to keep lengths minimal). */
int pch_pb_begin(pch_buf *b, uint32_t field, size_t *mark);
int pch_pb_end(pch_buf *b, size_t mark);

/* ---- decoding ---- */
typedef struct pch_pb_field {
    uint32_t num;
    int wire;
    uint64_t v;          /* VARINT, I64, I32 value */
    const uint8_t *ptr;  /* LEN payload */
    size_t len;
} pch_pb_field;

/* Next field of the message in r. Returns 1 with *f filled, 0 at the end, or a negative
** PCH_ECORRUPT (message names `what`) on malformed bytes (bad varint, length past end,
** wire types 3/4/6/7, field number 0). */
int pch_pb_next(pch_rd *r, pch_pb_field *f, const char *what, pch_error *err);
/* Value of varint field `num` in the message (p, n) — the last occurrence wins, as in
** protobuf; 0 when absent. Errors: PCH_ECORRUPT on malformed bytes (names `where`). */
int pch_pb_get_u64(const uint8_t *p, size_t n, uint32_t num, uint64_t *out, const char *where,
                   pch_error *err);
/* Read a varint at r. false on truncation or > 10 bytes. */
bool pch_pb_read_varint(pch_rd *r, uint64_t *out);
/* Iterate a packed-or-single repeated varint field: call for each occurrence with f;
** appends decoded values to a growable u64 array. */
int pch_pb_collect_u64(const pch_pb_field *f, pch_ctx *ctx, uint64_t **arr, size_t *n,
                       size_t *cap, const char *what, pch_error *err);

#endif
