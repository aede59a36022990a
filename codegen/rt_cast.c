/*
 * rt_cast.c — casts between text and the other types, and the numeric
 * conversions generated code does not inline, with PostgreSQL's results and
 * error messages.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/rt.h"

/* The bytes of s without leading and trailing blanks (PostgreSQL's input
 * functions skip white space around a value). */
static const char *trimmed(const sto_str *s, size_t *len)
{
    const char *p = sto_str_data(s);
    size_t n = s->len;
    while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
        n--;
    }
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n' || p[n - 1] == '\r'))
        n--;
    *len = n;
    return p;
}

static int32_t invalid(cg_error *err, const char *state, const char *type, const sto_str *s)
{
    err->detail = sto_error(state, "invalid input syntax for type %s: \"%.*s\"", type, (int)s->len,
                            sto_str_data(s));
    return CG_ERR_RUNTIME;
}

static int32_t out_of_range(cg_error *err, const char *type, const sto_str *s)
{
    err->detail =
        sto_error(STO_NUMERIC_VALUE_OUT_OF_RANGE, "value \"%.*s\" is out of range for type %s",
                  (int)s->len, sto_str_data(s), type);
    return CG_ERR_OVERFLOW;
}

int32_t cg_rt_str_to_int(cg_error *err, const sto_str *s, int32_t type_id, int64_t *out)
{
    bool big = type_id == STO_TYPE_BIGINT;
    const char *name = big ? "bigint" : "integer";
    size_t n;
    const char *p = trimmed(s, &n);
    switch (sto_int_parse(p, n, big ? INT64_MIN : INT32_MIN, big ? INT64_MAX : INT32_MAX, out)) {
    case STO_PARSE_OK:
        return CG_ERR_NONE;
    case STO_PARSE_OUT_OF_RANGE:
        return out_of_range(err, name, s);
    default:
        return invalid(err, STO_INVALID_TEXT_REPRESENTATION, name, s);
    }
}

int32_t cg_rt_str_to_decimal(cg_error *err, const sto_str *s, int32_t precision, int32_t scale,
                             int64_t *out)
{
    size_t n;
    const char *p = trimmed(s, &n);
    switch (sto_decimal_parse(p, n, precision, scale, out)) {
    case STO_PARSE_OK:
        return CG_ERR_NONE;
    case STO_PARSE_OUT_OF_RANGE:
        err->detail = sto_error(STO_NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow");
        return CG_ERR_OVERFLOW;
    default:
        return invalid(err, STO_INVALID_TEXT_REPRESENTATION, "numeric", s);
    }
}

int32_t cg_rt_str_to_double(cg_error *err, const sto_str *s, double *out)
{
    size_t n;
    const char *p = trimmed(s, &n);
    switch (sto_double_parse(p, n, out)) {
    case STO_PARSE_OK:
        return CG_ERR_NONE;
    case STO_PARSE_OUT_OF_RANGE:
        return out_of_range(err, "double precision", s);
    default:
        return invalid(err, STO_INVALID_TEXT_REPRESENTATION, "double precision", s);
    }
}

int32_t cg_rt_str_to_date(cg_error *err, const sto_str *s, int32_t *out)
{
    size_t n;
    const char *p = trimmed(s, &n);
    if (sto_date_parse(p, n, out)) return CG_ERR_NONE;
    return invalid(err, STO_INVALID_DATETIME_FORMAT, "date", s);
}

/* PostgreSQL's boolean input: a unique prefix of true/false/yes/no, on/off
 * (at least "on"/"of"), 1 or 0, in any case. */
int32_t cg_rt_str_to_bool(cg_error *err, const sto_str *s, uint8_t *out)
{
    static const struct {
        const char *word;
        size_t min;
        uint8_t value;
    } words[] = {{"true", 1, 1}, {"false", 1, 0}, {"yes", 1, 1}, {"no", 1, 0},
                 {"on", 2, 1},   {"off", 2, 0},   {"1", 1, 1},   {"0", 1, 0}};
    size_t n;
    const char *p = trimmed(s, &n);
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        if (n < words[w].min || n > strlen(words[w].word)) continue;
        if (strncasecmp(p, words[w].word, n) == 0) {
            *out = words[w].value;
            return CG_ERR_NONE;
        }
    }
    return invalid(err, STO_INVALID_TEXT_REPRESENTATION, "boolean", s);
}

/* --- to text ----------------------------------------------------------------- */

/* A string of the NUL-terminated text in buf. */
static int32_t text_result(cg_error *err, cg_rt_strings *arena, const char *buf, sto_str *out)
{
    size_t len = strlen(buf);
    if (len <= STO_STR_INLINE_MAX) {
        *out = sto_str_make(buf, (uint32_t)len);
        return CG_ERR_NONE;
    }
    char *p = cg_rt_strings_alloc(arena, len);
    if (!p) {
        err->detail = sto_error_oom();
        return CG_ERR_RUNTIME;
    }
    memcpy(p, buf, len);
    *out = sto_str_make(p, (uint32_t)len);
    return CG_ERR_NONE;
}

int32_t cg_rt_int_to_str(cg_error *err, cg_rt_strings *arena, int64_t v, sto_str *out)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return text_result(err, arena, buf, out);
}

int32_t cg_rt_decimal_to_str(cg_error *err, cg_rt_strings *arena, int64_t v, int32_t scale,
                             sto_str *out)
{
    char buf[24];
    sto_decimal_format(v, scale, buf);
    return text_result(err, arena, buf, out);
}

/* The fewest significant digits (1..17) that read back as v. */
static int shortest_digits(double v, char *buf, size_t size)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, size, "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v) return p;
    }
    return 17;
}

int32_t cg_rt_double_to_str(cg_error *err, cg_rt_strings *arena, double v, sto_str *out)
{
    char buf[40];
    if (isnan(v)) return text_result(err, arena, "NaN", out);
    if (isinf(v)) return text_result(err, arena, v > 0 ? "Infinity" : "-Infinity", out);
    if (v == 0) return text_result(err, arena, signbit(v) ? "-0" : "0", out);
    char e[40];
    int digits = shortest_digits(v, e, sizeof(e));
    /* e: [-]d[.ddd]e[+-]XX */
    char *ep = strchr(e, 'e');
    int exp = atoi(ep + 1);
    *ep = '\0';
    bool neg = e[0] == '-';
    char mant[20];
    size_t k = 0;
    for (const char *c = e + neg; *c; c++)
        if (*c != '.') mant[k++] = *c;
    mant[k] = '\0';
    char *o = buf;
    if (neg) *o++ = '-';
    if (exp < -4 || exp >= 15) { /* d.ddde+XX, two exponent digits at least */
        *o++ = mant[0];
        if (digits > 1) o += sprintf(o, ".%s", mant + 1);
        sprintf(o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) { /* 0.000ddd */
        o += sprintf(o, "0.");
        for (int i = 0; i < -exp - 1; i++)
            *o++ = '0';
        sprintf(o, "%s", mant);
    } else if (exp + 1 >= digits) { /* ddd000 */
        o += sprintf(o, "%s", mant);
        for (int i = 0; i < exp + 1 - digits; i++)
            *o++ = '0';
        *o = '\0';
    } else { /* ddd.ddd */
        sprintf(o, "%.*s.%s", exp + 1, mant, mant + exp + 1);
    }
    return text_result(err, arena, buf, out);
}

void cg_rt_date_to_str(int32_t days, sto_str *out)
{
    char buf[16];
    int n = sto_date_format(days, buf);
    *out = sto_str_make(buf, (uint32_t)n);
}

/* --- numbers --------------------------------------------------------------------- */

int32_t cg_rt_double_to_decimal(cg_error *err, double v, int32_t precision, int32_t scale,
                                int64_t *out)
{
    if (isnan(v) || isinf(v)) {
        err->detail = sto_error(STO_FEATURE_NOT_SUPPORTED, "cannot convert %s to numeric",
                                isnan(v) ? "NaN" : "infinity");
        return CG_ERR_RUNTIME;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%.15g", v);
    char fixed[400];
    /* sto_decimal_parse takes plain digits: expand any exponent */
    if (strchr(buf, 'e')) {
        snprintf(fixed, sizeof(fixed), "%.*f", scale + 1 < 340 ? scale + 1 : 340,
                 strtod(buf, NULL));
        if (fabs(v) >= 1e18) {
            err->detail = sto_error(STO_NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow");
            return CG_ERR_OVERFLOW;
        }
    } else {
        snprintf(fixed, sizeof(fixed), "%s", buf);
    }
    switch (sto_decimal_parse(fixed, strlen(fixed), precision, scale, out)) {
    case STO_PARSE_OK:
        return CG_ERR_NONE;
    default:
        err->detail = sto_error(STO_NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow");
        return CG_ERR_OVERFLOW;
    }
}

double cg_rt_round_double(double x, int32_t n)
{
    if (n > 300 || n < -300 || isnan(x) || isinf(x)) return x;
    double p = pow(10.0, n < 0 ? -n : n);
    if (n >= 0) {
        double y = x * p;
        if (isinf(y)) return x;
        return rint(y) / p;
    }
    return rint(x / p) * p;
}

int32_t cg_rt_round_int(cg_error *err, int64_t x, int32_t n, int32_t type_id, int64_t *out)
{
    if (n >= 0) {
        *out = x;
        return CG_ERR_NONE;
    }
    if (n < -19) {
        *out = 0;
        return CG_ERR_NONE;
    }
    __int128 p = 1;
    for (int i = 0; i < -n; i++)
        p *= 10;
    __int128 v = x, q = v / p, r = v % p;
    if (r < 0 ? -r * 2 >= p : r * 2 >= p) q += r < 0 ? -1 : 1;
    v = q * p;
    int64_t lo = type_id == STO_TYPE_INTEGER ? INT32_MIN : INT64_MIN;
    int64_t hi = type_id == STO_TYPE_INTEGER ? INT32_MAX : INT64_MAX;
    if (v < lo || v > hi) {
        err->detail = sto_error(STO_NUMERIC_VALUE_OUT_OF_RANGE, "%s out of range",
                                type_id == STO_TYPE_INTEGER ? "integer" : "bigint");
        return CG_ERR_OVERFLOW;
    }
    *out = (int64_t)v;
    return CG_ERR_NONE;
}
