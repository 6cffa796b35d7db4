/* ISO-8601 / RFC 3339 timestamps ↔ UTC milliseconds (ATIF timestamps, RFC-0006 §5),
** wall and monotonic clocks. Pure arithmetic (days-from-civil), no locale, no tz database. */
#include <time.h>

#include "core/core.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool digits(const char *s, size_t len, size_t at, size_t n, int64_t *out)
{
    int64_t v = 0;
    if (at + n > len) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
}

static int bad(pch_error *err, const char *s, size_t len, const char *why)
{
    return pch_error_set(err, PCH_EINVAL, "timestamp \"%.*s\": %s", (int)(len > 64 ? 64 : len), s, why);
}

int pch_time_parse_iso8601(int64_t *ms_out, const char *s, size_t len, pch_error *err)
{
    int64_t y, mo, d, h = 0, mi = 0, sec = 0, frac_ms = 0, off_min = 0;
    size_t i = 0;
    *ms_out = 0;
    if (!digits(s, len, 0, 4, &y) || len < 10 || s[4] != '-' || !digits(s, len, 5, 2, &mo) ||
        s[7] != '-' || !digits(s, len, 8, 2, &d))
        return bad(err, s, len, "expected YYYY-MM-DD");
    static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1]) return bad(err, s, len, "date out of range");
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return bad(err, s, len, "date out of range");
    i = 10;
    if (i < len && (s[i] == 'T' || s[i] == 't' || s[i] == ' ')) {
        if (!digits(s, len, i + 1, 2, &h) || i + 3 >= len || s[i + 3] != ':' ||
            !digits(s, len, i + 4, 2, &mi))
            return bad(err, s, len, "expected HH:MM after the date");
        i += 6;
        if (i < len && s[i] == ':') {
            if (!digits(s, len, i + 1, 2, &sec)) return bad(err, s, len, "expected seconds");
            i += 3;
            if (i < len && (s[i] == '.' || s[i] == ',')) {
                size_t n = 0;
                i++;
                while (i < len && s[i] >= '0' && s[i] <= '9') {
                    if (n < 3) frac_ms = frac_ms * 10 + (s[i] - '0');
                    n++; i++;
                }
                if (n == 0) return bad(err, s, len, "empty fraction");
                for (size_t k = n; k < 3; k++) frac_ms *= 10;
            }
        }
        if (h > 23 || mi > 59 || sec > 60) return bad(err, s, len, "time out of range");
        if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
            i++;
        } else if (i < len && (s[i] == '+' || s[i] == '-')) {
            int sign = s[i] == '-' ? -1 : 1;
            int64_t oh, om;
            if (!digits(s, len, i + 1, 2, &oh)) return bad(err, s, len, "bad zone offset");
            i += 3;
            if (i < len && s[i] == ':') i++;
            if (!digits(s, len, i, 2, &om)) return bad(err, s, len, "bad zone offset");
            i += 2;
            if (oh > 23 || om > 59) return bad(err, s, len, "zone offset out of range");
            off_min = sign * (oh * 60 + om);
        }
    }
    if (i != len) return bad(err, s, len, "trailing characters");
    int64_t days = days_from_civil(y, mo, d);
    *ms_out = ((days * 86400 + h * 3600 + mi * 60 + sec - off_min * 60) * 1000) + frac_ms;
    return PCH_OK;
}

void pch_time_format_iso8601(char out[32], int64_t ms)
{
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t rem = ms - days * 86400000;
    /* civil_from_days */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp + (mp < 10 ? 3 : -9);
    y += m <= 2;
    if (y >= 0 && y <= 9999) {
        /* the common case by hand: a build formats every step's timestamp to see whether
        ** its text is the canonical one (snprintf was ~2 % of a build's CPU) */
        static const char fmt[] = "0000-00-00T00:00:00.000Z";
        int64_t hh = rem / 3600000, mi = rem / 60000 % 60, ss = rem / 1000 % 60, ms3 = rem % 1000;
        memcpy(out, fmt, sizeof fmt);
        out[0] = (char)('0' + y / 1000); out[1] = (char)('0' + y / 100 % 10);
        out[2] = (char)('0' + y / 10 % 10); out[3] = (char)('0' + y % 10);
        out[5] = (char)('0' + m / 10); out[6] = (char)('0' + m % 10);
        out[8] = (char)('0' + d / 10); out[9] = (char)('0' + d % 10);
        out[11] = (char)('0' + hh / 10); out[12] = (char)('0' + hh % 10);
        out[14] = (char)('0' + mi / 10); out[15] = (char)('0' + mi % 10);
        out[17] = (char)('0' + ss / 10); out[18] = (char)('0' + ss % 10);
        out[20] = (char)('0' + ms3 / 100); out[21] = (char)('0' + ms3 / 10 % 10); out[22] = (char)('0' + ms3 % 10);
        return;
    }
    char tmp[96];
    snprintf(tmp, sizeof tmp, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ", (long long)y,
             (long long)m, (long long)d, (long long)(rem / 3600000),
             (long long)(rem / 60000 % 60), (long long)(rem / 1000 % 60), (long long)(rem % 1000));
    memcpy(out, tmp, 31);
    out[31] = '\0';
}

int64_t pch_time_now_ms(void) { return pch_time_now_ns() / 1000000; }

int64_t pch_time_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double pch_time_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
