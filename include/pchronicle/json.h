/* Strict JSON (RFC 8259) parser and writer, and the Lance JSONB binary format.
**
** Parser: rejects trailing commas, comments, NaN/Infinity, leading zeros, lone surrogates,
** invalid UTF-8 and raw control characters; keeps integers exact (int64/uint64 plus the
** original number text via the value's span), keeps "\u0000" (strings carry a length),
** reports byte offset/line/column on errors and enforces depth/size limits.
**
** Values live in memory owned by the parser; they are valid until the next
** pch_json_parser_parse() or pch_json_parser_free() on the same parser. Strings without
** escapes point into the parsed text (zero copy), so the text must also stay alive and
** unchanged while values are used. Do not modify.
** Thread rule: one thread at a time per parser. */
#ifndef PCHRONICLE_JSON_H
#define PCHRONICLE_JSON_H

#include "pchronicle/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pch_json_kind {
    PCH_JSON_NULL = 0,
    PCH_JSON_FALSE,
    PCH_JSON_TRUE,
    PCH_JSON_NUMBER,
    PCH_JSON_STRING,
    PCH_JSON_ARRAY,
    PCH_JSON_OBJECT
} pch_json_kind;

/* Number flags (pch_json_value.num_flags). */
#define PCH_JSON_NUM_INT 0x01   /* no fraction, no exponent */
#define PCH_JSON_NUM_I64 0x02   /* integer that fits int64: num.i is exact */
#define PCH_JSON_NUM_U64 0x04   /* integer that fits uint64: num.u is exact */
#define PCH_JSON_NUM_NEG 0x08   /* starts with '-' (including -0) */

typedef struct pch_json_value pch_json_value;
typedef struct pch_json_member pch_json_member;

struct pch_json_value {
    uint8_t kind;          /* pch_json_kind */
    uint8_t num_flags;     /* PCH_JSON_NUM_* for numbers */
    uint32_t n;            /* number of items (array) or members (object) */
    size_t span_off;       /* byte offset of the value's text in the input */
    size_t span_len;       /* byte length of the value's text (number text, quoted string…) */
    union {
        struct { const char *ptr; size_t len; } str;  /* decoded UTF-8, may contain NUL; not NUL-terminated */
        struct { int64_t i; uint64_t u; double d; } num; /* d always set (may be ±inf) */
        pch_json_value *items;                        /* array: n values */
        pch_json_member *members;                     /* object: n members, input order */
    } u;
};

struct pch_json_member {
    const char *key;       /* decoded UTF-8 key, may contain NUL; not NUL-terminated */
    size_t key_len;
    pch_json_value value;
};

typedef struct pch_json_parse_options {
    unsigned version;      /* PCH_JSON_PARSE_OPTIONS_VERSION */
    uint32_t max_depth;    /* 0 = the context's max_json_depth */
    size_t max_bytes;      /* 0 = the context's max_line_bytes */
} pch_json_parse_options;
#define PCH_JSON_PARSE_OPTIONS_VERSION 1
#define PCH_JSON_PARSE_OPTIONS_INIT { PCH_JSON_PARSE_OPTIONS_VERSION, 0, 0 }

/* Where a parse failed: byte offset, 1-based line and column (column counts bytes). */
typedef struct pch_json_pos {
    size_t offset;
    size_t line;
    size_t column;
} pch_json_pos;

typedef struct pch_json_parser pch_json_parser;

/* Create a reusable parser. opts may be NULL. Errors: PCH_ENOMEM. */
PCH_API int pch_json_parser_new(pch_json_parser **out, pch_ctx *ctx,
                                const pch_json_parse_options *opts, pch_error *err);
PCH_API void pch_json_parser_free(pch_json_parser *p);

/* Parse exactly one JSON text (surrounding whitespace allowed). *root is borrowed: valid
** until the next parse or free. Errors: PCH_EINVAL (syntax, with "line L column C (byte
** O): what" in err->msg), PCH_ELIMIT (depth/size), PCH_ENOMEM. */
PCH_API int pch_json_parser_parse(pch_json_parser *p, const char *text, size_t len,
                                  const pch_json_value **root, pch_error *err);

/* Position of the last parse error of p (zeroed if the last parse succeeded). */
PCH_API void pch_json_parser_error_pos(const pch_json_parser *p, pch_json_pos *out);

/* Check that text is one valid JSON text without building values (same rules, limits
** and error messages as parse). kind_out (may be NULL) receives the top-level kind. */
PCH_API int pch_json_validate(pch_ctx *ctx, const char *text, size_t len,
                              const pch_json_parse_options *opts, pch_json_kind *kind_out,
                              pch_json_pos *pos_out, pch_error *err);

/* Find a member by key in an object value (first match, byte comparison). NULL if absent
** or v is not an object. */
PCH_API const pch_json_value *pch_json_get(const pch_json_value *v, const char *key,
                                           size_t key_len);

/* Serialize v as compact JSON (no spaces; numbers as their original text when
** available via src, else their canonical form). *out is allocated with the context
** allocator (free with pch_free); NUL-terminated; *len_out excludes the NUL.
** src = the text v was parsed from (for number spans), or NULL. */
PCH_API int pch_json_serialize(pch_ctx *ctx, const pch_json_value *v, const char *src,
                               char **out, size_t *len_out, pch_error *err);

/* Shortest decimal text that reads back as d ("1.0", "0.001", "1e-7"; NaN/Infinity/-Infinity
** for non-finite values). out holds 32 bytes; returns the length (NUL-terminated). */
PCH_API size_t pch_json_format_double(char out[32], double d);

/* Decode strict RFC 4648 base64 (standard alphabet, padding required, non-canonical
** trailing bits rejected): the {"base64":"..."} form in which dumps print binary values.
** out must hold n / 4 * 3 bytes; *out_len receives the decoded length. Errors: PCH_EINVAL
** (the message says what and where). */
PCH_API int pch_json_base64_decode(const char *in, size_t n, uint8_t *out, size_t *out_len,
                                   pch_error *err);

/* ---- Lance JSON physical format: Databend JSONB (lance-format.md §3.2) ---- */

/* Encode v as canonical JSONB (keys sorted bytewise, duplicates rejected with PCH_EINVAL,
** integers in the narrowest width, other numbers as float64). *out allocated with the
** context allocator. src as for pch_json_serialize. */
PCH_API int pch_jsonb_encode(pch_ctx *ctx, const pch_json_value *v, const char *src,
                             uint8_t **out, size_t *len_out, pch_error *err);

/* Validate JSONB bytes and render them as compact JSON text (what Lance's scans give
** back: keys in stored order; floats in shortest round-trip form such as 1.0 and 3.5; the
** NaN/±Inf tags as NaN, Infinity, -Infinity). PCH_ECORRUPT on malformed bytes,
** PCH_EUNSUPPORTED for extension values and 256-bit decimals (valid, but no JSON text). */
PCH_API int pch_jsonb_to_json(pch_ctx *ctx, const uint8_t *jsonb, size_t len, char **out,
                              size_t *len_out, pch_error *err);

#ifdef __cplusplus
}
#endif
#endif
