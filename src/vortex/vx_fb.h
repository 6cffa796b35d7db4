/* FlatBuffers for the Vortex file format (vortex-format.md §2, §12.2), written here: no C
** FlatBuffers library ships with Debian 12.
**
** Builder: back-to-front, like the reference builders. Every object is placed so that its
** alignment holds relative to the END of the buffer; finish() pads the front so the total
** size is a multiple of the largest alignment used, which makes every alignment hold
** relative to the START as well (what the official verifier checks, §12.2). No file
** identifier, no size prefix (finish_minimal, §1.3).
**
** Reader/verifier: every accessor is bounds-, alignment- and vtable-checked, so a walk of
** a whole schema with these accessors is a verification (vortex-format.md §12.2: alignment
** from the buffer start, vtable bounds, NUL-terminated UTF-8 strings, depth 64 and
** 1,000,000 tables). Nothing here asserts on input bytes. */
#ifndef PCH_VX_FB_H
#define PCH_VX_FB_H

#include "core/core.h"

#define PCH_VX_FB_MAX_DEPTH 64
#define PCH_VX_FB_MAX_TABLES 1000000u
#define PCH_VX_FB_MAX_FIELDS 16

/* ---- builder ---- */
typedef struct pch_vx_fbb {
    pch_ctx *ctx;
    uint8_t *buf;        /* data lives in buf[cap - size, cap) */
    size_t cap;
    size_t size;
    size_t minalign;
    int oom;             /* latched first failure (ENOMEM or ELIMIT) */
    int in_table;
    size_t table_start;  /* size when the current table began */
    uint32_t n_fields;
    uint16_t field_slot[PCH_VX_FB_MAX_FIELDS];
    uint32_t field_off[PCH_VX_FB_MAX_FIELDS];
} pch_vx_fbb;

void pch_vx_fbb_init(pch_vx_fbb *b, pch_ctx *ctx);
void pch_vx_fbb_dispose(pch_vx_fbb *b);
void pch_vx_fbb_reset(pch_vx_fbb *b);
/* Objects are referred to by their end-relative offset (uint32, 0 = none). */
uint32_t pch_vx_fbb_string(pch_vx_fbb *b, const char *s, size_t len);
uint32_t pch_vx_fbb_bytes(pch_vx_fbb *b, const void *p, size_t len);          /* [ubyte] */
/* Vector of n elements of elem_size bytes each (scalars or structs, already little-endian
** in data), aligned to elem_align. */
uint32_t pch_vx_fbb_vector(pch_vx_fbb *b, const void *data, size_t n, size_t elem_size,
                           size_t elem_align);
uint32_t pch_vx_fbb_offsets(pch_vx_fbb *b, const uint32_t *offs, size_t n); /* [table|string] */
void pch_vx_fbb_start(pch_vx_fbb *b);
/* Scalars: skipped when equal to def unless force. */
void pch_vx_fbb_u8(pch_vx_fbb *b, unsigned slot, uint8_t v, uint8_t def, int force);
void pch_vx_fbb_u16(pch_vx_fbb *b, unsigned slot, uint16_t v, uint16_t def, int force);
void pch_vx_fbb_u32(pch_vx_fbb *b, unsigned slot, uint32_t v, uint32_t def, int force);
void pch_vx_fbb_u64(pch_vx_fbb *b, unsigned slot, uint64_t v, uint64_t def, int force);
void pch_vx_fbb_off(pch_vx_fbb *b, unsigned slot, uint32_t off);  /* off 0 = skipped */
uint32_t pch_vx_fbb_end(pch_vx_fbb *b);
/* Finish with root table; out views the builder's memory (valid until the next builder
** call). Returns PCH_ENOMEM / PCH_ELIMIT if any step failed. */
int pch_vx_fbb_finish(pch_vx_fbb *b, uint32_t root, pch_bytes *out, pch_error *err);

/* ---- verifying reader ---- */
/* A paged buffer: buf has len bytes of room, but only the ranges need() made present may be
** read. Every accessor calls it for the bytes it is about to read (NULL: all present). */
typedef int (*pch_vx_fb_need_fn)(void *payload, size_t off, size_t len, pch_error *err);

typedef struct pch_vx_fbv {
    const uint8_t *buf;
    size_t len;
    uint32_t tables;     /* tables visited so far */
    const char *what;    /* name for messages ("footer", "layout", ...) */
    pch_error *err;
    pch_vx_fb_need_fn need;
    void *need_payload;
} pch_vx_fbv;

typedef struct pch_vx_fbt {
    pch_vx_fbv *v;
    size_t pos;          /* table start */
    size_t vt;           /* vtable start */
    uint16_t vt_len;
    uint16_t tab_len;
    unsigned depth;
} pch_vx_fbt;

typedef struct pch_vx_fbvec {
    size_t pos;          /* first element */
    uint32_t n;
} pch_vx_fbvec;

/* Root table of a whole buffer (depth 1). */
int pch_vx_fb_root(pch_vx_fbt *out, pch_vx_fbv *v, const uint8_t *buf, size_t len,
                   const char *what, pch_error *err);
/* Same over a paged buffer: need (with payload) makes bytes present before they are read. */
int pch_vx_fb_root_paged(pch_vx_fbt *out, pch_vx_fbv *v, const uint8_t *buf, size_t len,
                         const char *what, pch_vx_fb_need_fn need, void *payload, pch_error *err);
/* Bytes [off, off + len) of v present (a caller reading vector elements itself). */
int pch_vx_fb_need(const pch_vx_fbv *v, size_t off, size_t len);
/* Field presence and scalar reads with defaults; errors on misaligned/out-of-table field. */
int pch_vx_fb_has(const pch_vx_fbt *t, unsigned slot);
int pch_vx_fb_u8(const pch_vx_fbt *t, unsigned slot, uint8_t def, uint8_t *out);
int pch_vx_fb_u16(const pch_vx_fbt *t, unsigned slot, uint16_t def, uint16_t *out);
int pch_vx_fb_u32(const pch_vx_fbt *t, unsigned slot, uint32_t def, uint32_t *out);
int pch_vx_fb_u64(const pch_vx_fbt *t, unsigned slot, uint64_t def, uint64_t *out);
/* Sub-table; *present 0 when absent (out zeroed). required: absent is an error. */
int pch_vx_fb_table(const pch_vx_fbt *t, unsigned slot, int required, pch_vx_fbt *out,
                    int *present);
/* Vector of elem_size-byte scalars/structs aligned to elem_align. Absent = n 0, *present 0. */
int pch_vx_fb_vector(const pch_vx_fbt *t, unsigned slot, size_t elem_size, size_t elem_align,
                     pch_vx_fbvec *out, int *present);
/* Same, making only its length present: a paged reader needs the elements it reads itself
** (pch_vx_fb_need), e.g. one segment spec of thousands. */
int pch_vx_fb_vector_lazy(const pch_vx_fbt *t, unsigned slot, size_t elem_size, size_t elem_align,
                          pch_vx_fbvec *out, int *present);
/* Vector of tables: element i via pch_vx_fb_vec_table. */
int pch_vx_fb_vec_table(const pch_vx_fbt *t, const pch_vx_fbvec *vec, uint32_t i,
                        pch_vx_fbt *out);
/* String (UTF-8, NUL-terminated checked). ptr borrowed from the buffer. */
int pch_vx_fb_string(const pch_vx_fbt *t, unsigned slot, int required, const char **ptr,
                     size_t *len, int *present);
int pch_vx_fb_vec_string(const pch_vx_fbt *t, const pch_vx_fbvec *vec, uint32_t i,
                         const char **ptr, size_t *len);

/* Exported for the array/dtype code: UTF-8 validity (RFC 3629, no surrogates). */
bool pch_vx_utf8_valid(const uint8_t *p, size_t n);
/* Every row of a varbin (offsets[0..rows], from 0) is valid UTF-8: true when the whole buffer
** is and every offset falls on a character boundary (no row can then start or end inside a
** character); false when that does not hold, and the caller checks row by row (a null row
** may hold any bytes). */
bool pch_vx_utf8_rows_valid(const uint8_t *data, const int64_t *offsets, uint64_t rows);

#endif
