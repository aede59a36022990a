/*
 * literal.c — folding constant expressions and assigning them to columns.
 */
#include "engine/literal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/bind.h"

/* PostgreSQL's name of the type a constant has. */
static const char *const_type_name(const eng_const *c)
{
    switch (c->kind) {
    case ENG_CONST_BOOL:
        return "boolean";
    case ENG_CONST_INT:
        return "integer";
    case ENG_CONST_NUMERIC:
        return "numeric";
    case ENG_CONST_FLOAT:
        return "double precision";
    case ENG_CONST_DATE:
        return "date";
    case ENG_CONST_STRING:
        return "text";
    default:
        return "unknown";
    }
}

static sto_status not_constant(const sql_expr *e)
{
    return sto_error_at(STO_FEATURE_NOT_SUPPORTED, e->pos, "only constants are allowed here");
}

/* Text without the blanks around it, as PostgreSQL's input functions see it. */
static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

static sto_status const_from_literal(const sql_expr *e, eng_const *out)
{
    const sql_literal *l = &e->lit;
    switch (l->kind) {
    case SQL_LIT_NULL:
        out->kind = ENG_CONST_NULL;
        return STO_OK;
    case SQL_LIT_BOOL:
        out->kind = ENG_CONST_BOOL;
        out->b = l->boolean;
        return STO_OK;
    case SQL_LIT_INTEGER:
        out->kind = ENG_CONST_INT;
        out->i = l->integer;
        return STO_OK;
    case SQL_LIT_DECIMAL:
    case SQL_LIT_FLOAT:
        out->kind = l->kind == SQL_LIT_DECIMAL ? ENG_CONST_NUMERIC : ENG_CONST_FLOAT;
        out->text = l->text;
        out->len = (uint32_t)strlen(l->text);
        return STO_OK;
    case SQL_LIT_STRING:
        out->kind = ENG_CONST_STRING;
        out->text = l->text;
        out->len = (uint32_t)strlen(l->text);
        return STO_OK;
    case SQL_LIT_DATE: {
        int32_t days;
        const char *s = l->text;
        size_t len = strlen(s);
        trim(&s, &len);
        if (!sto_date_parse(s, len, &days)) return sql_date_error(s, len, e->pos);
        out->kind = ENG_CONST_DATE;
        out->i = days;
        return STO_OK;
    }
    case SQL_LIT_INTERVAL:
        break;
    }
    return sto_error_at(STO_FEATURE_NOT_SUPPORTED, e->pos,
                        "interval values cannot be stored in a column");
}

/* -x for a numeric constant. */
static sto_status negate(eng_const *c, int pos)
{
    switch (c->kind) {
    case ENG_CONST_INT:
        if (c->i == INT64_MIN)
            return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, pos, "bigint out of range");
        c->i = -c->i;
        return STO_OK;
    case ENG_CONST_NUMERIC:
    case ENG_CONST_FLOAT: {
        const char *t = c->text;
        int n = t[0] == '-' ? snprintf(c->buf, sizeof(c->buf), "%s", t + 1)
                            : snprintf(c->buf, sizeof(c->buf), "-%s", t[0] == '+' ? t + 1 : t);
        if (n < 0 || (size_t)n >= sizeof(c->buf))
            return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, pos, "numeric field overflow");
        c->text = c->buf;
        c->len = (uint32_t)n;
        return STO_OK;
    }
    case ENG_CONST_NULL:
        return STO_OK;
    default:
        return sto_error_at(STO_UNDEFINED_FUNCTION, pos, "operator does not exist: - %s",
                            const_type_name(c));
    }
}

/* Bytes of the first `chars` UTF-8 characters of s[0, len). */
static uint32_t utf8_prefix(const char *s, uint32_t len, uint32_t chars)
{
    uint32_t i = 0;
    for (uint32_t n = 0; i < len && n < chars; n++) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

/* An explicit cast: convert, then keep the result as a constant of the new
 * type. CHAR(n)/VARCHAR(n) casts cut the text to n characters. */
static sto_status cast(eng_const *c, sto_type t, int pos)
{
    if (c->kind == ENG_CONST_NULL) return STO_OK;
    sto_value v;
    sto_status st = eng_const_assign(c, t, NULL, &v);
    if (st) {
        if (!st->position) st->position = pos;
        return st;
    }
    switch ((sto_type_id)t.id) {
    case STO_TYPE_BOOLEAN:
        c->kind = ENG_CONST_BOOL;
        c->b = v.v.i64 != 0;
        break;
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
        c->kind = ENG_CONST_INT;
        c->i = v.v.i64;
        break;
    case STO_TYPE_DECIMAL:
        sto_decimal_format(v.v.i64, t.scale, c->buf);
        c->kind = ENG_CONST_NUMERIC;
        c->text = c->buf;
        c->len = (uint32_t)strlen(c->buf);
        break;
    case STO_TYPE_DOUBLE:
        snprintf(c->buf, sizeof(c->buf), "%.17g", v.v.f64);
        c->kind = ENG_CONST_FLOAT;
        c->text = c->buf;
        c->len = (uint32_t)strlen(c->buf);
        break;
    case STO_TYPE_DATE:
        c->kind = ENG_CONST_DATE;
        c->i = v.v.i64;
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR: {
        /* v's bytes live in c (text or buf), possibly inline in v itself. */
        uint32_t len = v.v.str.len;
        if (len <= STO_STR_INLINE_MAX) {
            memcpy(c->buf, sto_str_data(&v.v.str), len);
            c->text = c->buf;
        } else {
            c->text = sto_str_data(&v.v.str);
        }
        if (t.length) len = utf8_prefix(c->text, len, t.length);
        c->kind = ENG_CONST_STRING;
        c->len = len;
        break;
    }
    default:
        return sto_error_at(STO_FEATURE_NOT_SUPPORTED, pos, "unsupported cast");
    }
    return STO_OK;
}

sto_status eng_const_eval(const sql_expr *e, eng_const *out)
{
    memset(out, 0, sizeof(*out));
    out->pos = e->pos;
    switch (e->kind) {
    case SQL_EXPR_LITERAL:
        return const_from_literal(e, out);
    case SQL_EXPR_UNARY:
        if (e->unary.op != SQL_OP_NEG && e->unary.op != SQL_OP_PLUS) return not_constant(e);
        STO_TRY(eng_const_eval(e->unary.arg, out));
        out->pos = e->pos;
        if (e->unary.op == SQL_OP_NEG) return negate(out, e->pos);
        if (out->kind == ENG_CONST_STRING || out->kind == ENG_CONST_BOOL ||
            out->kind == ENG_CONST_DATE)
            return sto_error_at(STO_UNDEFINED_FUNCTION, e->pos, "operator does not exist: + %s",
                                const_type_name(out));
        return STO_OK;
    case SQL_EXPR_CAST:
        STO_TRY(eng_const_eval(e->cast.arg, out));
        out->pos = e->pos;
        return cast(out, e->cast.type, e->pos);
    default:
        return not_constant(e);
    }
}

/* --- assignment -------------------------------------------------------------- */

static sto_status mismatch(const eng_const *c, sto_type t, const char *column)
{
    if (column)
        return sto_error_at(STO_DATATYPE_MISMATCH, c->pos,
                            "column \"%s\" is of type %s but expression is of type %s", column,
                            sto_type_pg_name((sto_type_id)t.id), const_type_name(c));
    return sto_error_at(STO_DATATYPE_MISMATCH, c->pos, "cannot cast type %s to %s",
                        const_type_name(c), sto_type_pg_name((sto_type_id)t.id));
}

static sto_status invalid_text(const eng_const *c, sto_type t)
{
    /* Dates word it as PostgreSQL does: 22008 for a day that does not exist. */
    if (t.id == STO_TYPE_DATE) return sql_date_error(c->text, c->len, c->pos);
    return sto_error_at(STO_INVALID_TEXT_REPRESENTATION, c->pos,
                        "invalid input syntax for type %s: \"%.*s\"",
                        sto_type_pg_name((sto_type_id)t.id), (int)c->len, c->text);
}

static bool parse_bool(const char *s, size_t len, bool *out)
{
    static const struct {
        const char *word;
        bool value;
    } words[] = {{"true", true}, {"false", false}, {"yes", true}, {"no", false},
                 {"on", true},   {"off", false},   {"1", true},   {"0", false}};
    trim(&s, &len);
    if (!len) return false;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t wl = strlen(words[i].word);
        /* Any unique prefix of true/false/yes/no; "on"/"off" need 2 letters. */
        size_t min = words[i].word[0] == 'o' ? 2 : 1;
        if (len >= min && len <= wl && strncasecmp(s, words[i].word, len) == 0) {
            *out = words[i].value;
            return true;
        }
    }
    return false;
}

/* Integer range of an integer column type. */
static void int_range(sto_type t, int64_t *min, int64_t *max)
{
    if (t.id == STO_TYPE_INTEGER) {
        *min = INT32_MIN;
        *max = INT32_MAX;
    } else {
        *min = INT64_MIN;
        *max = INT64_MAX;
    }
}

static int64_t pow10_i64(int n)
{
    int64_t p = 1;
    while (n-- > 0)
        p *= 10;
    return p;
}

static sto_status assign_integer(const eng_const *c, sto_type t, sto_value *out)
{
    int64_t min, max, v;
    int_range(t, &min, &max);
    const char *what = t.id == STO_TYPE_INTEGER ? "integer" : "bigint";
    switch (c->kind) {
    case ENG_CONST_INT:
        v = c->i;
        break;
    case ENG_CONST_NUMERIC: {
        sto_parse_result r = sto_decimal_parse(c->text, c->len, 18, 0, &v);
        if (r == STO_PARSE_INVALID) return invalid_text(c, t);
        if (r == STO_PARSE_OUT_OF_RANGE)
            return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, c->pos, "%s out of range", what);
        break;
    }
    case ENG_CONST_FLOAT: {
        double d = strtod(c->text, NULL);
        d = rint(d);
        if (!(d >= (double)min && d <= (double)max))
            return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, c->pos, "%s out of range", what);
        v = (int64_t)d;
        break;
    }
    case ENG_CONST_STRING: {
        const char *s = c->text;
        size_t len = c->len;
        trim(&s, &len);
        sto_parse_result r = sto_int_parse(s, len, min, max, &v);
        if (r == STO_PARSE_INVALID) return invalid_text(c, t);
        if (r == STO_PARSE_OUT_OF_RANGE)
            return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, c->pos,
                                "value \"%.*s\" is out of range for type %s", (int)c->len, c->text,
                                what);
        break;
    }
    default:
        return mismatch(c, t, NULL);
    }
    if (v < min || v > max)
        return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, c->pos, "%s out of range", what);
    out->v.i64 = v;
    return STO_OK;
}

static sto_status assign_decimal(const eng_const *c, sto_type t, sto_value *out)
{
    int64_t v;
    switch (c->kind) {
    case ENG_CONST_INT: {
        int64_t limit = pow10_i64(t.precision - t.scale);
        if (c->i >= limit || c->i <= -limit) goto overflow;
        v = c->i * pow10_i64(t.scale);
        break;
    }
    case ENG_CONST_FLOAT: {
        double d = rint(strtod(c->text, NULL) * (double)pow10_i64(t.scale));
        double limit = (double)pow10_i64(t.precision);
        if (!(d > -limit && d < limit)) goto overflow;
        v = (int64_t)d;
        break;
    }
    case ENG_CONST_NUMERIC:
    case ENG_CONST_STRING: {
        const char *s = c->text;
        size_t len = c->len;
        trim(&s, &len);
        sto_parse_result r = sto_decimal_parse(s, len, t.precision, t.scale, &v);
        if (r == STO_PARSE_INVALID) return invalid_text(c, t);
        if (r == STO_PARSE_OUT_OF_RANGE) goto overflow;
        break;
    }
    default:
        return mismatch(c, t, NULL);
    }
    out->v.i64 = v;
    return STO_OK;
overflow:
    return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, c->pos,
                        "numeric field overflow: a value of type NUMERIC(%d,%d) must be less "
                        "than 10^%d in absolute value",
                        t.precision, t.scale, t.precision - t.scale);
}

/* A number or date written as text into c's spare buffer... but c is const:
 * strings made here go to `buf`, which the caller keeps alive. */
static sto_status assign_string(const eng_const *c, sto_type t, char *buf, size_t size,
                                sto_value *out)
{
    const char *text = c->text;
    size_t len = c->len;
    switch (c->kind) {
    case ENG_CONST_STRING:
    case ENG_CONST_NUMERIC:
    case ENG_CONST_FLOAT:
        break;
    case ENG_CONST_INT:
        len = (size_t)snprintf(buf, size, "%" PRId64, c->i);
        text = buf;
        break;
    case ENG_CONST_BOOL:
        text = c->b ? "true" : "false";
        len = strlen(text);
        break;
    case ENG_CONST_DATE:
        len = (size_t)sto_date_format((int32_t)c->i, buf);
        text = buf;
        break;
    default:
        return mismatch(c, t, NULL);
    }
    out->v.str = sto_str_make(text, (uint32_t)len);
    return STO_OK;
}

sto_status eng_const_assign(const eng_const *c, sto_type t, const char *column, sto_value *out)
{
    memset(out, 0, sizeof(*out));
    if (c->kind == ENG_CONST_NULL) {
        out->is_null = true;
        return STO_OK;
    }
    sto_status st = STO_OK;
    switch ((sto_type_id)t.id) {
    case STO_TYPE_BOOLEAN:
        if (c->kind == ENG_CONST_BOOL) {
            out->v.i64 = c->b;
        } else if (c->kind == ENG_CONST_STRING) {
            bool b;
            if (!parse_bool(c->text, c->len, &b)) return invalid_text(c, t);
            out->v.i64 = b;
        } else {
            st = mismatch(c, t, NULL);
        }
        break;
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
        st = assign_integer(c, t, out);
        break;
    case STO_TYPE_DECIMAL:
        st = assign_decimal(c, t, out);
        break;
    case STO_TYPE_DOUBLE:
        if (c->kind == ENG_CONST_INT) {
            out->v.f64 = (double)c->i;
        } else if (c->kind == ENG_CONST_NUMERIC || c->kind == ENG_CONST_FLOAT ||
                   c->kind == ENG_CONST_STRING) {
            const char *s = c->text;
            size_t len = c->len;
            trim(&s, &len);
            sto_parse_result r = sto_double_parse(s, len, &out->v.f64);
            if (r == STO_PARSE_INVALID) return invalid_text(c, t);
            if (r == STO_PARSE_OUT_OF_RANGE)
                return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, c->pos,
                                    "\"%.*s\" is out of range for type double precision",
                                    (int)c->len, c->text);
        } else {
            st = mismatch(c, t, NULL);
        }
        break;
    case STO_TYPE_DATE:
        if (c->kind == ENG_CONST_DATE) {
            out->v.i64 = c->i;
        } else if (c->kind == ENG_CONST_STRING) {
            const char *s = c->text;
            size_t len = c->len;
            trim(&s, &len);
            int32_t days;
            if (!sto_date_parse(s, len, &days)) return invalid_text(c, t);
            out->v.i64 = days;
        } else {
            st = mismatch(c, t, NULL);
        }
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        /* Non-string constants become text in the const's own buffer. */
        st = assign_string(c, t, (char *)c->buf, sizeof(c->buf), out);
        break;
    default:
        st = mismatch(c, t, NULL);
    }
    if (st && column && strcmp(st->sqlstate, STO_DATATYPE_MISMATCH) == 0) {
        sto_status_free(st);
        return mismatch(c, t, column);
    }
    return st;
}

void eng_const_text(const eng_const *c, char *buf, size_t size)
{
    switch (c->kind) {
    case ENG_CONST_NULL:
        snprintf(buf, size, "%s", "");
        break;
    case ENG_CONST_BOOL:
        snprintf(buf, size, "%s", c->b ? "on" : "off");
        break;
    case ENG_CONST_INT:
        snprintf(buf, size, "%" PRId64, c->i);
        break;
    case ENG_CONST_DATE: {
        char d[16];
        sto_date_format((int32_t)c->i, d);
        snprintf(buf, size, "%s", d);
        break;
    }
    default:
        snprintf(buf, size, "%.*s", (int)c->len, c->text);
    }
}
