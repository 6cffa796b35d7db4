/* Interface of src/json to the rest of the library: pch_buf-based writers for hot paths
** and the Lance JSONB codec (lance-format.md §3.2, Appendix C). The public API is in
** include/pchronicle/json.h; these variants append to a caller's pch_buf instead of
** allocating. Every function appends only on success: on error out->len is restored. */
#ifndef PCH_JSON_JSON_H
#define PCH_JSON_JSON_H

#include "core/core.h"
#include "pchronicle/json.h"

/* Append s[0..len) as a quoted JSON string: '"' '\\' and C0 controls escaped (\b \f \n \r
** \t, others \u00xx, lower-case hex), everything else copied (no '/' or non-ASCII
** escaping, as serde_json). s must be valid UTF-8 (checked: PCH_EINVAL otherwise).
** Errors: PCH_EINVAL, PCH_ENOMEM. */
int pch_json__write_string(pch_buf *out, const char *s, size_t len);
/* The same for text already checked to be valid UTF-8 (it is not checked again). */
int pch_json__write_utf8(pch_buf *out, const char *s, size_t len);

/* Append v as compact JSON (no whitespace, members in stored order). Numbers are copied
** from their span in src when src != NULL (exact original text), else written in canonical
** form (integers exact, reals as pch_json__fmt_double; an integer beyond 64 bits without
** src is written from its double). Errors: PCH_EINVAL (non-finite real without src, bad
** UTF-8 in a string), PCH_ELIMIT (nesting deeper than the context's max_json_depth),
** PCH_ENOMEM. */
int pch_json__write_value(pch_buf *out, const pch_json_value *v, const char *src);

/* v in decimal ("-9223372036854775808" at most); out must hold 24 bytes; returns the length
** (out is NUL-terminated). */
size_t pch_json__fmt_i64(char out[24], int64_t v);
/* The same for an unsigned value ("18446744073709551615" at most). */
size_t pch_json__fmt_u64(char out[24], uint64_t v);

/* Shortest decimal text that reads back as d (round trip), laid out like Rust's ryu /
** serde_json / Databend jsonb: "1.0", "3.5", "0.001", "1e-7", "1.2345e20", "-0.0".
** Non-finite values give "NaN", "Infinity", "-Infinity". out must hold 32 bytes; returns
** the length (out is NUL-terminated). */
size_t pch_json__fmt_double(char out[32], double d);

/* printf's "%.17g" of d when d holds a float32 value that is a multiple of 2^-44, not 0, below
** 2^127 in magnitude (logprobs down to about -1e-6 at full precision): the same bytes, without
** printf (RL reads print millions of logprobs). Returns 0 when d is not such a value; the
** caller then prints it itself. out must hold 32 bytes. */
size_t pch_json__fmt_g17_f32(char out[32], double d);

/* Is s[0..n), the source text of a parsed value, already what pch_json__write_value writes
** for it? True when it has no whitespace between tokens and every escape in its strings is
** one the writer emits (\" \\ \b \f \n \r \t, \u00xx in lower-case hex for the other
** C0 controls): numbers are copied from their span and other string bytes are written as
** they are, so callers may copy the text instead of writing the value again. */
bool pch_json__is_compact(const char *s, size_t n);

/* One JSON array of numbers read straight into typed values, no pch_json_value per element
** (the projection's token and logprob arrays, RFC-0006 §6.5). text[0..len) is the array
** with optional surrounding whitespace; numbers follow the parser's rules and doubles its
** exact conversion. U32: every element a non-negative integer below 2^32 (no '-', fraction
** or exponent), appended to out as uint32_t. REAL: every element a finite number with a
** fraction or an exponent, appended as double. With used == NULL the text must end with the
** array; else the array may be followed by anything and *used is its length (from text[0]).
** Returns 1 with the values appended, 0 when the text is not such an array (out unchanged;
** the caller keeps the text), or PCH_ENOMEM. p's scratch is used; values already returned
** by pch_json_parser_parse stay valid. */
typedef enum pch_json__array_kind { PCH_JSON__ARRAY_U32 = 1, PCH_JSON__ARRAY_REAL = 2 } pch_json__array_kind;
int pch_json__number_array(pch_json_parser *p, const char *text, size_t len, pch_json__array_kind kind, pch_buf *out,
                           size_t *used);

/* Append the canonical JSONB encoding of v (lance-format.md §3.2): object keys sorted
** bytewise, duplicate keys rejected (PCH_EINVAL), integers in the narrowest width (0x00
** for zero including -0, 0x50 unsigned BE for positive, 0x40 signed BE for negative),
** every other number float64 (0x60; ±inf as 0x20/0x30). A top-level scalar gets the SCALAR
** header. src is unused for now (numbers are taken from the parsed value) and may be NULL.
** Errors: PCH_EINVAL, PCH_ELIMIT (a length above 2^28-1, a count above 2^29-1, nesting
** deeper than max_json_depth), PCH_ENOMEM. */
int pch_jsonb__encode(pch_buf *out, const pch_json_value *v, const char *src, pch_error *err);

/* Validate JSONB bytes completely (headers, jentry types, lengths summing exactly to the
** container, number tags and widths, UTF-8 of strings, nesting depth) and append their
** compact JSON rendering (keys in stored order, numbers as Lance prints them). Errors:
** PCH_ECORRUPT (malformed), PCH_EUNSUPPORTED (valid extension values and 256-bit decimals,
** which have no JSON rendering here), PCH_ELIMIT (depth), PCH_ENOMEM. */
int pch_jsonb__to_json(pch_buf *out, const uint8_t *p, size_t len, pch_error *err);

/* Validate JSONB bytes without rendering (same checks as pch_jsonb__to_json, except that
** extension values and 256-bit decimals are accepted). Errors: PCH_ECORRUPT, PCH_ELIMIT. */
int pch_jsonb__validate(const uint8_t *p, size_t len, pch_error *err);

#endif
