/* Hex (lowercase out, either case in) and base64 (RFC 4648 §4, standard alphabet, padded).
** Decoders validate every character and fail closed. */
#include "core/core.h"

static const char HEX[] = "0123456789abcdef";

void pch_hex_encode(char *out, const uint8_t *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = HEX[in[i] >> 4];
        out[2 * i + 1] = HEX[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool pch_hex_decode(uint8_t *out, const char *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(in[2 * i]), lo = hexval(in[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int pch_base64_encode(pch_buf *out, const uint8_t *in, size_t n)
{
    size_t groups = n / 3 + (n % 3 != 0), olen;
    if (!pch_mul_size(&olen, groups, 4)) return PCH_ENOMEM;
    PCH_TRY(pch_buf_reserve(out, olen));
    char *o = (char *)out->data + out->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63]; *o++ = B64[(v >> 6) & 63]; *o++ = B64[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63]; *o++ = '='; *o++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63]; *o++ = B64[(v >> 6) & 63]; *o++ = '=';
    }
    out->len += olen;
    out->data[out->len] = 0;
    return PCH_OK;
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

int pch_base64_decode_into(uint8_t *out, size_t *out_len, const char *in, size_t n,
                           pch_error *err)
{
    size_t k = 0;
    if (n % 4 != 0)
        return pch_error_set(err, PCH_EINVAL, "base64: length %zu is not a multiple of 4", n);
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            char c = in[i + j];
            if (c == '=' && i + 4 == n && j >= 2) { v[j] = 0; pad++; continue; }
            if (pad) return pch_error_set(err, PCH_EINVAL, "base64: bad padding at %zu", i + j);
            v[j] = b64val(c);
            if (v[j] < 0) return pch_error_set(err, PCH_EINVAL, "base64: bad character at %zu", i + j);
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        /* Non-canonical trailing bits are rejected: the encoding must be unique. */
        if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
            return pch_error_set(err, PCH_EINVAL, "base64: non-zero padding bits at %zu", i);
        out[k++] = (uint8_t)(w >> 16);
        if (pad < 2) out[k++] = (uint8_t)(w >> 8);
        if (pad < 1) out[k++] = (uint8_t)w;
    }
    *out_len = k;
    return PCH_OK;
}

int pch_base64_decode(pch_buf *out, const char *in, size_t n, pch_error *err)
{
    size_t k;
    PCH_TRY(pch_buf_reserve(out, n / 4 * 3));
    PCH_TRY(pch_base64_decode_into(out->data + out->len, &k, in, n, err));
    out->len += k;
    out->data[out->len] = 0;
    return PCH_OK;
}
