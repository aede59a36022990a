/*
 * types.c — the value-level behaviour of rackdb's SQL types (see types.h):
 * names and widths expanded from STO_TYPE_LIST, calendar arithmetic for
 * DATE, and the strict text parsers and printers every input path shares.
 * The loader has faster fused parsers for its hot path and falls back to
 * these to classify an error, so both must accept the same language.
 */
#include "storage/types.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

size_t sto_type_width(sto_type_id id)
{
    switch (id) {
#define STO_TYPE_WIDTH(id, name, ctype, bytes, oid, pgname)                                        \
    case STO_TYPE_##id:                                                                            \
        return bytes;
        STO_TYPE_LIST(STO_TYPE_WIDTH)
#undef STO_TYPE_WIDTH
    default:
        return 0;
    }
}

const char *sto_type_id_name(sto_type_id id)
{
    switch (id) {
#define STO_TYPE_NAME(id, name, ctype, bytes, oid, pgname)                                         \
    case STO_TYPE_##id:                                                                            \
        return name;
        STO_TYPE_LIST(STO_TYPE_NAME)
#undef STO_TYPE_NAME
    default:
        return "UNKNOWN";
    }
}

uint32_t sto_type_pg_oid(sto_type_id id)
{
    switch (id) {
#define STO_TYPE_OID(id, name, ctype, bytes, oid, pgname)                                          \
    case STO_TYPE_##id:                                                                            \
        return oid;
        STO_TYPE_LIST(STO_TYPE_OID)
#undef STO_TYPE_OID
    default:
        return 0;
    }
}

const char *sto_type_pg_name(sto_type_id id)
{
    switch (id) {
#define STO_TYPE_PG_NAME(id, name, ctype, bytes, oid, pgname)                                      \
    case STO_TYPE_##id:                                                                            \
        return pgname;
        STO_TYPE_LIST(STO_TYPE_PG_NAME)
#undef STO_TYPE_PG_NAME
    default:
        return "unknown";
    }
}

void sto_type_format(sto_type t, char *buf, size_t size)
{
    const char *name = sto_type_id_name((sto_type_id)t.id);
    if (t.id == STO_TYPE_DECIMAL)
        snprintf(buf, size, "%s(%u,%u)", name, t.precision, t.scale);
    else if ((t.id == STO_TYPE_CHAR || t.id == STO_TYPE_VARCHAR) && t.length > 0)
        snprintf(buf, size, "%s(%u)", name, t.length);
    else
        snprintf(buf, size, "%s", name);
}

int sto_str_cmp(const sto_str *a, const sto_str *b)
{
    uint32_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(sto_str_data(a), sto_str_data(b), n);
    if (c != 0) return c;
    return (a->len > b->len) - (a->len < b->len);
}

/* --- dates ---------------------------------------------------------------
 * Counting works on a calendar whose year starts on March 1st, so the leap
 * day is the last day of the year and month lengths repeat in a 5-month
 * pattern (153 days). 400-year eras have exactly 146097 days; day 0 of era 0
 * is 0000-03-01, which lies 719468 days before 1970-01-01. */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int32_t sto_date_from_ymd(int year, int month, int day)
{
    int64_t y = (int64_t)year - (month <= 2);
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;                         /* [0, 399] */
    int64_t mp = (month + 9) % 12;                       /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + day - 1;          /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return (int32_t)(era * 146097 + doe - 719468);
}

void sto_date_to_ymd(int32_t days, int *year, int *month, int *day)
{
    int64_t z = (int64_t)days + 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = (int)(yoe + era * 400 + (m <= 2));
    *month = m;
    *day = d;
}

static int days_in_month(int year, int month)
{
    static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2) {
        bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        return leap ? 29 : 28;
    }
    return len[month - 1];
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

bool sto_date_parse(const char *s, size_t len, int32_t *out)
{
    if (len != 10 || s[4] != '-' || s[7] != '-') return false;
    if (!all_digits(s, 4) || !all_digits(s + 5, 2) || !all_digits(s + 8, 2)) return false;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int m = (s[5] - '0') * 10 + (s[6] - '0');
    int d = (s[8] - '0') * 10 + (s[9] - '0');
    if (y < 1 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return false;
    *out = sto_date_from_ymd(y, m, d);
    return true;
}

int sto_date_format(int32_t days, char *buf)
{
    int y, m, d;
    sto_date_to_ymd(days, &y, &m, &d);
    if (y < 0 || y > 9999) { /* outside what parse accepts: keep to 10 bytes */
        memcpy(buf, "9999-12-31", 11);
        if (y < 0) memcpy(buf, "0000-01-01", 11);
        return 10;
    }
    buf[0] = (char)('0' + y / 1000);
    buf[1] = (char)('0' + y / 100 % 10);
    buf[2] = (char)('0' + y / 10 % 10);
    buf[3] = (char)('0' + y % 10);
    buf[4] = '-';
    buf[5] = (char)('0' + m / 10);
    buf[6] = (char)('0' + m % 10);
    buf[7] = '-';
    buf[8] = (char)('0' + d / 10);
    buf[9] = (char)('0' + d % 10);
    buf[10] = '\0';
    return 10;
}

/* --- numbers ------------------------------------------------------------- */

const int64_t sto_pow10[19] = {1LL,
                               10LL,
                               100LL,
                               1000LL,
                               10000LL,
                               100000LL,
                               1000000LL,
                               10000000LL,
                               100000000LL,
                               1000000000LL,
                               10000000000LL,
                               100000000000LL,
                               1000000000000LL,
                               10000000000000LL,
                               100000000000000LL,
                               1000000000000000LL,
                               10000000000000000LL,
                               100000000000000000LL,
                               1000000000000000000LL};

/* The spelling with an exponent ("1e2", "-1.25E-1"), off the fast path:
 * the significant digits are collected, the exponent moves the decimal
 * point, and the value is cut at `scale` fraction digits with rounding half
 * away from zero as without an exponent. */
static sto_parse_result decimal_parse_exp(const char *s, size_t len, int precision, int scale,
                                          int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (s[i] == '-' || s[i] == '+') neg = s[i++] == '-';
    /* digits[0, n): the significant digits, with `point` of them before the
     * decimal point (negative when zeros follow the point first) */
    char digits[STO_DECIMAL_MAX_PRECISION + 2];
    int n = 0;
    int64_t point = 0;
    bool seen_point = false;
    for (; i < len && ((s[i] >= '0' && s[i] <= '9') || (s[i] == '.' && !seen_point)); i++) {
        if (s[i] == '.') {
            seen_point = true;
        } else if (n == 0 && s[i] == '0') {
            if (seen_point) point--; /* a zero between the point and the digits */
        } else if (n < (int)sizeof(digits)) {
            digits[n++] = s[i];
            if (!seen_point) point++;
        } else if (!seen_point) {
            point++; /* past every digit the result can keep */
        }
    }
    i++; /* the 'e' */
    bool eneg = false;
    if (i < len && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    if (i == len) return STO_PARSE_INVALID;
    int64_t e = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        if (e < 100000) e = e * 10 + (s[i] - '0');
    if (i != len) return STO_PARSE_INVALID;
    if (n == 0) { /* zero with any exponent */
        *out = 0;
        return STO_PARSE_OK;
    }
    point += eneg ? -e : e;
    if (point > precision - scale) return STO_PARSE_OUT_OF_RANGE;
    /* the scaled value keeps the first point + scale digits */
    int64_t keep = point + scale;
    if (keep < 0) {
        *out = 0;
        return STO_PARSE_OK;
    }
    uint64_t v = 0;
    for (int64_t k = 0; k < keep; k++)
        v = v * 10 + (uint64_t)(k < n ? digits[k] - '0' : 0);
    if (keep < n && digits[keep] >= '5') v++;
    if (v >= (uint64_t)sto_pow10[precision]) return STO_PARSE_OUT_OF_RANGE;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return STO_PARSE_OK;
}

sto_parse_result sto_decimal_parse(const char *s, size_t len, int precision, int scale,
                                   int64_t *out)
{
    if (precision < 1 || precision > STO_DECIMAL_MAX_PRECISION || scale < 0 || scale > precision)
        return STO_PARSE_INVALID;
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    /* The integer part accumulates in unsigned arithmetic; anything past 18
     * significant digits is out of range for every DECIMAL anyway. */
    uint64_t ipart = 0;
    int idigits = 0, digits = 0;
    bool too_big = false;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        if (ipart == 0 && s[i] == '0') continue; /* leading zeros */
        if (++idigits > STO_DECIMAL_MAX_PRECISION)
            too_big = true;
        else
            ipart = ipart * 10 + (uint64_t)(s[i] - '0');
    }
    uint64_t fpart = 0;
    int fdigits = 0;
    bool round_up = false;
    if (i < len && s[i] == '.') {
        i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
            if (fdigits < scale) {
                fpart = fpart * 10 + (uint64_t)(s[i] - '0');
                fdigits++;
            } else if (fdigits == scale) {
                round_up = s[i] >= '5'; /* the first dropped digit decides */
                fdigits++;
            }
        }
    }
    if (digits > 0 && i < len && (s[i] == 'e' || s[i] == 'E'))
        return decimal_parse_exp(s, len, precision, scale, out);
    if (digits == 0 || i != len) return STO_PARSE_INVALID;
    if (too_big || idigits > precision - scale) return STO_PARSE_OUT_OF_RANGE;
    int kept = fdigits < scale ? fdigits : scale;
    uint64_t v = ipart * (uint64_t)sto_pow10[scale] + fpart * (uint64_t)sto_pow10[scale - kept];
    if (round_up) v++;
    if (v >= (uint64_t)sto_pow10[precision]) return STO_PARSE_OUT_OF_RANGE;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return STO_PARSE_OK;
}

int sto_decimal_format(int64_t value, int scale, char *buf)
{
    /* Digits are produced right to left from the magnitude in unsigned form,
     * which also covers INT64_MIN. */
    char tmp[24];
    int n = 0;
    uint64_t mag = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    for (int i = 0; i < scale; i++) {
        tmp[n++] = (char)('0' + mag % 10);
        mag /= 10;
    }
    if (scale > 0) tmp[n++] = '.';
    do {
        tmp[n++] = (char)('0' + mag % 10);
        mag /= 10;
    } while (mag);
    int len = 0;
    if (value < 0) buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

sto_parse_result sto_int_parse(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == len) return STO_PARSE_INVALID;
    uint64_t v = 0;
    bool overflow = false;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return STO_PARSE_INVALID;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            v = v * 10 + d;
    }
    if (overflow) return STO_PARSE_OUT_OF_RANGE;
    int64_t r;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return STO_PARSE_OUT_OF_RANGE;
        r = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX) return STO_PARSE_OUT_OF_RANGE;
        r = (int64_t)v;
    }
    if (r < min || r > max) return STO_PARSE_OUT_OF_RANGE;
    *out = r;
    return STO_PARSE_OK;
}

sto_parse_result sto_double_parse(const char *s, size_t len, double *out)
{
    char buf[128];
    if (len == 0 || len >= sizeof(buf)) return STO_PARSE_INVALID;
    /* strtod skips leading blanks; a whole field must not have any. */
    if (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')) return STO_PARSE_INVALID;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + len) return STO_PARSE_INVALID;
    if (errno == ERANGE && isinf(v)) return STO_PARSE_OUT_OF_RANGE;
    *out = v;
    return STO_PARSE_OK;
}
