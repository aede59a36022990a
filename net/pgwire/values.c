/*
 * values.c — binary <-> text conversion of wire values (see values.h).
 *
 * Layouts (all big-endian): bool 1 byte; int2/int4/int8 two's complement;
 * float4/float8 IEEE bits; date int32 days since 2000-01-01; numeric a header
 * of four int16 (ndigits, weight, sign, dscale) and ndigits base-10000
 * digits, the first worth 10000^weight.
 */
#include "net/pgwire/values.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/types.h"

#define PG_EPOCH_DAYS      10957 /* 2000-01-01 in days since 1970-01-01 */
#define NUMERIC_POS        0x0000
#define NUMERIC_NEG        0x4000
#define NUMERIC_NAN        0xC000
#define NUMERIC_MAX_DIGITS 1000 /* base-10000 digits; PostgreSQL allows fewer */

bool pgw_binary_supported(uint32_t oid)
{
    switch (oid) {
    case PGW_OID_BOOL:
    case PGW_OID_INT2:
    case PGW_OID_INT4:
    case PGW_OID_INT8:
    case PGW_OID_OID:
    case PGW_OID_FLOAT4:
    case PGW_OID_FLOAT8:
    case PGW_OID_NUMERIC:
    case PGW_OID_DATE:
    case PGW_OID_TEXT:
    case PGW_OID_VARCHAR:
    case PGW_OID_BPCHAR:
    case PGW_OID_NAME:
    case PGW_OID_UNKNOWN:
        return true;
    default:
        return false;
    }
}

static bool is_string_type(uint32_t oid)
{
    return oid == PGW_OID_TEXT || oid == PGW_OID_VARCHAR || oid == PGW_OID_BPCHAR ||
           oid == PGW_OID_NAME || oid == PGW_OID_UNKNOWN || oid == 0;
}

static uint64_t load_be(const char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | (uint8_t)p[i];
    return v;
}

static void store_be(pgw_buf *out, uint64_t v, size_t n)
{
    char b[8];
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(v >> (8 * (n - 1 - i)));
    pgw_buf_append(out, b, n);
}

static sto_status bad_binary(uint32_t oid, size_t len)
{
    return sto_error(STO_INVALID_TEXT_REPRESENTATION,
                     "invalid binary value of %zu bytes for type oid %u", len, oid);
}

static void append_fmt(pgw_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append_fmt(pgw_buf *out, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0) pgw_buf_append(out, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Shortest text that reads back as the same double. */
static void append_double(pgw_buf *out, double d)
{
    if (isnan(d)) {
        pgw_buf_append_str(out, "NaN");
        return;
    }
    if (isinf(d)) {
        pgw_buf_append_str(out, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) break;
    }
    pgw_buf_append_str(out, tmp);
}

static sto_status numeric_to_text(const char *p, size_t len, pgw_buf *out)
{
    if (len < 8) return bad_binary(PGW_OID_NUMERIC, len);
    int ndigits = (int16_t)load_be(p, 2), weight = (int16_t)load_be(p + 2, 2);
    unsigned sign = (unsigned)load_be(p + 4, 2);
    int dscale = (int16_t)load_be(p + 6, 2);
    if (ndigits < 0 || ndigits > NUMERIC_MAX_DIGITS || len != 8 + 2 * (size_t)ndigits ||
        dscale < 0 || dscale > 4 * NUMERIC_MAX_DIGITS ||
        (sign != NUMERIC_POS && sign != NUMERIC_NEG && sign != NUMERIC_NAN))
        return bad_binary(PGW_OID_NUMERIC, len);
    if (sign == NUMERIC_NAN) {
        pgw_buf_append_str(out, "NaN");
        return STO_OK;
    }
    int16_t digits[NUMERIC_MAX_DIGITS];
    for (int i = 0; i < ndigits; i++) {
        digits[i] = (int16_t)load_be(p + 8 + 2 * i, 2);
        if (digits[i] < 0 || digits[i] > 9999) return bad_binary(PGW_OID_NUMERIC, len);
    }
    if (weight > NUMERIC_MAX_DIGITS || weight < -NUMERIC_MAX_DIGITS)
        return bad_binary(PGW_OID_NUMERIC, len);
    if (sign == NUMERIC_NEG && ndigits > 0) pgw_buf_append_str(out, "-");
    /* digit i is worth 10000^(weight - i) */
    if (weight < 0) {
        pgw_buf_append_str(out, "0");
    } else {
        for (int w = weight; w >= 0; w--) {
            int i = weight - w;
            int d = i < ndigits ? digits[i] : 0;
            append_fmt(out, w == weight ? "%d" : "%04d", d);
        }
    }
    if (dscale > 0) {
        pgw_buf_append_str(out, ".");
        int written = 0;
        for (int i = weight + 1; written < dscale; i++) {
            int d = i >= 0 && i < ndigits ? digits[i] : 0;
            char four[8];
            snprintf(four, sizeof(four), "%04d", d);
            int take = dscale - written < 4 ? dscale - written : 4;
            pgw_buf_append(out, four, (size_t)take);
            written += take;
        }
    }
    return STO_OK;
}

sto_status pgw_binary_to_text(uint32_t oid, const char *data, size_t len, pgw_buf *out)
{
    if (is_string_type(oid)) {
        if (memchr(data, '\0', len))
            return sto_error(STO_INVALID_TEXT_REPRESENTATION,
                             "invalid byte sequence for encoding \"UTF8\": 0x00");
        pgw_buf_append(out, data, len);
        return STO_OK;
    }
    switch (oid) {
    case PGW_OID_BOOL:
        if (len != 1 || (uint8_t)data[0] > 1) return bad_binary(oid, len);
        pgw_buf_append_str(out, data[0] ? "true" : "false");
        return STO_OK;
    case PGW_OID_INT2:
        if (len != 2) return bad_binary(oid, len);
        append_fmt(out, "%d", (int)(int16_t)load_be(data, 2));
        return STO_OK;
    case PGW_OID_INT4:
        if (len != 4) return bad_binary(oid, len);
        append_fmt(out, "%" PRId32, (int32_t)load_be(data, 4));
        return STO_OK;
    case PGW_OID_OID:
        if (len != 4) return bad_binary(oid, len);
        append_fmt(out, "%" PRIu32, (uint32_t)load_be(data, 4));
        return STO_OK;
    case PGW_OID_INT8:
        if (len != 8) return bad_binary(oid, len);
        append_fmt(out, "%" PRId64, (int64_t)load_be(data, 8));
        return STO_OK;
    case PGW_OID_FLOAT4: {
        if (len != 4) return bad_binary(oid, len);
        uint32_t bits = (uint32_t)load_be(data, 4);
        float f;
        memcpy(&f, &bits, 4);
        append_double(out, f);
        return STO_OK;
    }
    case PGW_OID_FLOAT8: {
        if (len != 8) return bad_binary(oid, len);
        uint64_t bits = load_be(data, 8);
        double d;
        memcpy(&d, &bits, 8);
        append_double(out, d);
        return STO_OK;
    }
    case PGW_OID_DATE: {
        if (len != 4) return bad_binary(oid, len);
        int64_t days = (int64_t)(int32_t)load_be(data, 4) + PG_EPOCH_DAYS;
        if (days < -1000000 || days > 3000000) return bad_binary(oid, len);
        char buf[32];
        sto_date_format((int32_t)days, buf);
        pgw_buf_append_str(out, buf);
        return STO_OK;
    }
    case PGW_OID_NUMERIC:
        return numeric_to_text(data, len, out);
    default:
        return sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "binary format for type oid %u is not supported", oid);
    }
}

static sto_status bad_text(const char *type, const char *text)
{
    return sto_error(STO_INVALID_TEXT_REPRESENTATION, "invalid input syntax for type %s: \"%s\"",
                     type, text);
}

/* "[-]digits[.digits]" -> numeric's binary form. */
static sto_status numeric_to_binary(const char *text, pgw_buf *out)
{
    const char *s = text;
    bool neg = false;
    if (*s == '-' || *s == '+') neg = *s++ == '-';
    const char *int_start = s;
    while (*s >= '0' && *s <= '9')
        s++;
    size_t int_len = (size_t)(s - int_start);
    const char *frac_start = s, *frac_end = s;
    if (*s == '.') {
        frac_start = ++s;
        while (*s >= '0' && *s <= '9')
            s++;
        frac_end = s;
    }
    size_t frac_len = (size_t)(frac_end - frac_start);
    if (*s || int_len + frac_len == 0 || int_len > 4 * 200 || frac_len > 4 * 200) {
        if (strcmp(text, "NaN") == 0) {
            store_be(out, 0, 2), store_be(out, 0, 2), store_be(out, NUMERIC_NAN, 2);
            store_be(out, 0, 2);
            return STO_OK;
        }
        return bad_text("numeric", text);
    }
    /* Groups of four decimal digits aligned at the point. */
    size_t int_groups = (int_len + 3) / 4, frac_groups = (frac_len + 3) / 4;
    size_t n = int_groups + frac_groups;
    int16_t digits[400];
    size_t lead = int_groups * 4 - int_len; /* zeros padded in front */
    for (size_t g = 0; g < n; g++) {
        int d = 0;
        for (size_t k = 0; k < 4; k++) {
            size_t pos = g * 4 + k; /* position in the padded digit string */
            int c = 0;
            if (pos >= lead && pos < lead + int_len)
                c = int_start[pos - lead] - '0';
            else if (pos >= int_groups * 4 && pos - int_groups * 4 < frac_len)
                c = frac_start[pos - int_groups * 4] - '0';
            d = d * 10 + c;
        }
        digits[g] = (int16_t)d;
    }
    int weight = (int)int_groups - 1;
    size_t first = 0, last = n;
    while (first < n && digits[first] == 0)
        first++, weight--;
    while (last > first && digits[last - 1] == 0)
        last--;
    size_t nd = last - first;
    if (nd == 0) weight = 0;
    store_be(out, nd, 2);
    store_be(out, (uint64_t)(uint16_t)(int16_t)weight, 2);
    store_be(out, neg && nd ? NUMERIC_NEG : NUMERIC_POS, 2);
    store_be(out, frac_len, 2);
    for (size_t i = first; i < last; i++)
        store_be(out, (uint64_t)digits[i], 2);
    return STO_OK;
}

sto_status pgw_text_to_binary(uint32_t oid, const char *text, pgw_buf *out)
{
    if (is_string_type(oid)) {
        pgw_buf_append_str(out, text);
        return STO_OK;
    }
    size_t len = strlen(text);
    int64_t v;
    switch (oid) {
    case PGW_OID_BOOL:
        if (strcmp(text, "t") && strcmp(text, "f")) return bad_text("boolean", text);
        pgw_put_u8(out, text[0] == 't');
        return STO_OK;
    case PGW_OID_INT2:
        if (sto_int_parse(text, len, INT16_MIN, INT16_MAX, &v)) return bad_text("smallint", text);
        store_be(out, (uint64_t)v, 2);
        return STO_OK;
    case PGW_OID_INT4:
        if (sto_int_parse(text, len, INT32_MIN, INT32_MAX, &v)) return bad_text("integer", text);
        store_be(out, (uint64_t)v, 4);
        return STO_OK;
    case PGW_OID_OID:
        if (sto_int_parse(text, len, 0, UINT32_MAX, &v)) return bad_text("oid", text);
        store_be(out, (uint64_t)v, 4);
        return STO_OK;
    case PGW_OID_INT8:
        if (sto_int_parse(text, len, INT64_MIN, INT64_MAX, &v)) return bad_text("bigint", text);
        store_be(out, (uint64_t)v, 8);
        return STO_OK;
    case PGW_OID_FLOAT4:
    case PGW_OID_FLOAT8: {
        char *end;
        double d = strtod(text, &end);
        if (end == text || *end) return bad_text("double precision", text);
        uint64_t bits;
        if (oid == PGW_OID_FLOAT4) {
            float f = (float)d;
            uint32_t b32;
            memcpy(&b32, &f, 4);
            store_be(out, b32, 4);
        } else {
            memcpy(&bits, &d, 8);
            store_be(out, bits, 8);
        }
        return STO_OK;
    }
    case PGW_OID_DATE: {
        int32_t days;
        if (!sto_date_parse(text, len, &days)) return bad_text("date", text);
        store_be(out, (uint64_t)(uint32_t)(days - PG_EPOCH_DAYS), 4);
        return STO_OK;
    }
    case PGW_OID_NUMERIC:
        return numeric_to_binary(text, out);
    default:
        return sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "binary format for type oid %u is not supported", oid);
    }
}
