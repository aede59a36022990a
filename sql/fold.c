/*
 * fold.c — constant folding at bind time.
 *
 * `date '1998-12-01' - interval '90' day` should reach the executor as one
 * DATE constant, and `1 - l_discount` as a DECIMAL constant minus a column,
 * so the binder folds every CAST, arithmetic operator and date function
 * whose inputs are all constants. Errors are raised here exactly when
 * PostgreSQL raises them for constants too: division by zero, integer
 * overflow, a DECIMAL that does not fit, text that is not a date. Anything
 * not listed here (comparisons, string functions, ...) is left for run time.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sql/bind_int.h"

static const int64_t pow10_table[19] = {1,
                                        10,
                                        100,
                                        1000,
                                        10000,
                                        100000,
                                        1000000,
                                        10000000,
                                        100000000,
                                        1000000000,
                                        10000000000,
                                        100000000000,
                                        1000000000000,
                                        10000000000000,
                                        100000000000000,
                                        1000000000000000,
                                        10000000000000000,
                                        100000000000000000,
                                        1000000000000000000};

static sto_status out_of_range(uint8_t id, int pos)
{
    if (id == STO_TYPE_INTEGER)
        return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, pos, "integer out of range");
    if (id == STO_TYPE_BIGINT)
        return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, pos, "bigint out of range");
    return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, pos, "numeric field overflow");
}

/* Checks v fits type t (int32, int64, precision digits). */
static sto_status check_range(sto_type t, int64_t v, int pos)
{
    if (t.id == STO_TYPE_INTEGER && (v < INT32_MIN || v > INT32_MAX))
        return out_of_range(t.id, pos);
    if (t.id == STO_TYPE_DECIMAL && t.precision < 19) {
        int64_t lim = pow10_table[t.precision];
        if (v <= -lim || v >= lim) return out_of_range(t.id, pos);
    }
    return STO_OK;
}

/* v scaled by 10^from → scaled by 10^to, rounding half away from zero. */
static bool rescale(int64_t v, int from, int to, int64_t *out)
{
    if (to >= from) return !__builtin_mul_overflow(v, pow10_table[to - from], out);
    int64_t d = pow10_table[from - to];
    int64_t q = v / d, r = v % d;
    if (r * 2 >= d) q++;
    if (r * 2 <= -d) q--;
    *out = q;
    return true;
}

static int scale_of(sto_type t)
{
    return t.id == STO_TYPE_DECIMAL ? t.scale : 0;
}

static double as_double(sto_type t, const sto_value *v)
{
    if (t.id == STO_TYPE_DOUBLE) return v->v.f64;
    return (double)v->v.i64 / (double)pow10_table[scale_of(t)];
}

/* Turns e into the constant v of e's own type. */
static void become_const(sql_bexpr *e, sto_value v)
{
    e->kind = SQL_BEXPR_CONST;
    e->value = v;
    e->nullable = v.is_null;
}

/* Text as a value's input function sees it: PostgreSQL's int4in, numeric_in,
 * float8in and date_in skip blanks around the value (so does the run-time
 * cast, codegen/rt_cast.c). */
static const char *trim_blanks(const char *s, size_t *len)
{
    size_t n = *len;
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    *len = n;
    return s;
}

/* An explicit cast to CHAR(n)/VARCHAR(n) cuts the text to n characters
 * (PostgreSQL truncates on explicit casts and only errs on assignment), and
 * CHAR drops trailing blanks, as stored CHAR values do; the same rules as
 * codegen's cg_rt_str_truncate. */
static sto_status fit_string(binder *b, sto_type from, sto_type to, sto_value *v)
{
    const char *p = sto_str_data(&v->v.str);
    uint32_t len = v->v.str.len, chars = 0, i = 0;
    if (to.length) {
        for (; i < len; i++) {
            if (((uint8_t)p[i] & 0xC0) == 0x80) continue; /* UTF-8 continuation byte */
            if (chars == to.length) break;
            chars++;
        }
        len = i;
    }
    if (to.id == STO_TYPE_CHAR && from.id != STO_TYPE_CHAR)
        while (len > 0 && p[len - 1] == ' ')
            len--;
    if (len == v->v.str.len) return STO_OK;
    char *copy = sql_arena_strndup(b->arena, p, len);
    if (!copy) return sto_error_oom();
    v->v.str = sto_str_make(copy, len);
    return STO_OK;
}

/* Date text that sto_date_parse refused: the SQLSTATE from the trimmed text's
 * shape (sql_date_error), the message quoting the text as written, as
 * PostgreSQL's date_in does. */
static sto_status date_error(const char *text, size_t len, const char *trimmed, size_t tlen,
                             int pos)
{
    sto_status st = sql_date_error(trimmed, tlen, pos);
    if (st == sto_error_oom()) return st;
    bool range = strcmp(st->sqlstate, STO_DATETIME_FIELD_OVERFLOW) == 0;
    sto_status_free(st);
    if (range)
        return sto_error_at(STO_DATETIME_FIELD_OVERFLOW, pos,
                            "date/time field value out of range: \"%.*s\"", (int)len, text);
    return sto_error_at(STO_INVALID_DATETIME_FORMAT, pos,
                        "invalid input syntax for type date: \"%.*s\"", (int)len, text);
}

static sto_status fold_cast(binder *b, sql_bexpr *e)
{
    const sql_bexpr *a = e->cast.arg;
    sto_type from = a->type, to = e->type;
    sto_value v = {0};
    if (a->value.is_null) {
        v.is_null = true;
        become_const(e, v);
        return STO_OK;
    }
    int pos = e->pos;
    if (sto_type_is_string(from.id)) {
        const char *text = sto_str_data(&a->value.v.str);
        size_t len = a->value.v.str.len;
        const char *s = trim_blanks(text, &len);
        sto_parse_result r = STO_PARSE_OK;
        switch (to.id) {
        case STO_TYPE_CHAR:
        case STO_TYPE_VARCHAR:
            v = a->value;
            STO_TRY(fit_string(b, from, to, &v));
            break;
        case STO_TYPE_DATE: {
            int32_t d;
            if (!sto_date_parse(s, len, &d))
                return date_error(text, a->value.v.str.len, s, len, a->pos);
            v.v.i64 = d;
            break;
        }
        case STO_TYPE_INTEGER:
            r = sto_int_parse(s, len, INT32_MIN, INT32_MAX, &v.v.i64);
            break;
        case STO_TYPE_BIGINT:
            r = sto_int_parse(s, len, INT64_MIN, INT64_MAX, &v.v.i64);
            break;
        case STO_TYPE_DECIMAL:
            r = sto_decimal_parse(s, len, to.precision, to.scale, &v.v.i64);
            break;
        case STO_TYPE_DOUBLE:
            r = sto_double_parse(s, len, &v.v.f64);
            break;
        default:
            return STO_OK; /* boolean text: left for run time */
        }
        if (r == STO_PARSE_INVALID)
            return sto_error_at(STO_INVALID_TEXT_REPRESENTATION, a->pos,
                                "invalid input syntax for type %s: \"%.*s\"", sql_type_pg_name(to),
                                (int)a->value.v.str.len, text);
        if (r == STO_PARSE_OUT_OF_RANGE && to.id != STO_TYPE_DECIMAL)
            return sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, a->pos,
                                "%s\"%.*s\" is out of range for type %s",
                                to.id == STO_TYPE_DOUBLE ? "" : "value ", (int)a->value.v.str.len,
                                text, sql_type_pg_name(to));
        if (r == STO_PARSE_OUT_OF_RANGE) return out_of_range(to.id, pos);
        become_const(e, v);
        return STO_OK;
    }
    if (!type_is_numeric(from.id) || !type_is_numeric(to.id)) return STO_OK;
    if (to.id == STO_TYPE_DOUBLE) {
        v.v.f64 = as_double(from, &a->value);
    } else if (from.id == STO_TYPE_DOUBLE) {
        /* To an integer PostgreSQL rounds half to even (rint); to a DECIMAL
         * half away from zero. */
        double d = a->value.v.f64 * (double)pow10_table[scale_of(to)];
        d = to.id == STO_TYPE_DECIMAL ? round(d) : rint(d);
        if (!(d > -9.2e18 && d < 9.2e18)) return out_of_range(to.id, pos);
        v.v.i64 = (int64_t)d;
    } else {
        if (!rescale(a->value.v.i64, scale_of(from), scale_of(to), &v.v.i64))
            return out_of_range(to.id, pos);
    }
    if (to.id != STO_TYPE_DOUBLE) STO_TRY(check_range(to, v.v.i64, pos));
    become_const(e, v);
    return STO_OK;
}

static sto_status div_zero(int pos)
{
    return sto_error_at(STO_DIVISION_BY_ZERO, pos, "division by zero");
}

static sto_status fold_op(binder *b, sql_bexpr *e)
{
    (void)b;
    sql_op op = e->op.op;
    const sql_bexpr *l = e->op.args[0], *r = e->op.args[1];
    sto_type t = e->type;
    sto_value v = {0};
    int pos = e->pos;
    if (op != SQL_OP_NEG && op != SQL_OP_PLUS && op != SQL_OP_ADD && op != SQL_OP_SUB &&
        op != SQL_OP_MUL && op != SQL_OP_DIV && op != SQL_OP_MOD)
        return STO_OK;
    if (!type_is_numeric(t.id)) return STO_OK;
    if (l->value.is_null || (r && r->value.is_null)) {
        v.is_null = true;
        become_const(e, v);
        return STO_OK;
    }
    if (t.id == STO_TYPE_DOUBLE) {
        double x = as_double(l->type, &l->value), y = r ? as_double(r->type, &r->value) : 0;
        switch (op) {
        case SQL_OP_NEG:
            v.v.f64 = -x;
            break;
        case SQL_OP_PLUS:
            v.v.f64 = x;
            break;
        case SQL_OP_ADD:
            v.v.f64 = x + y;
            break;
        case SQL_OP_SUB:
            v.v.f64 = x - y;
            break;
        case SQL_OP_MUL:
            v.v.f64 = x * y;
            break;
        case SQL_OP_DIV:
            if (y == 0) return div_zero(pos);
            v.v.f64 = x / y;
            break;
        default:
            return STO_OK;
        }
        become_const(e, v);
        return STO_OK;
    }
    /* Integers and DECIMALs: scaled int64 arithmetic at the result scale. */
    int s = scale_of(t);
    int64_t x = l->value.v.i64, y = r ? r->value.v.i64 : 0;
    bool ovf = false;
    switch (op) {
    case SQL_OP_NEG:
        ovf = __builtin_sub_overflow((int64_t)0, x, &v.v.i64);
        if (!ovf) ovf = !rescale(v.v.i64, scale_of(l->type), s, &v.v.i64);
        break;
    case SQL_OP_PLUS:
        ovf = !rescale(x, scale_of(l->type), s, &v.v.i64);
        break;
    case SQL_OP_ADD:
    case SQL_OP_SUB:
        ovf = !rescale(x, scale_of(l->type), s, &x) || !rescale(y, scale_of(r->type), s, &y);
        if (!ovf)
            ovf = op == SQL_OP_ADD ? __builtin_add_overflow(x, y, &v.v.i64)
                                   : __builtin_sub_overflow(x, y, &v.v.i64);
        break;
    case SQL_OP_MUL: {
        /* The exact product has scale s1 + s2; round it to the result's. */
        __int128 prod = (__int128)x * y;
        int drop = scale_of(l->type) + scale_of(r->type) - s;
        if (drop > 0) {
            __int128 d = pow10_table[drop], q = prod / d, rem = prod % d;
            if (rem * 2 >= d) q++;
            if (rem * 2 <= -d) q--;
            prod = q;
        }
        ovf = prod > INT64_MAX || prod < INT64_MIN;
        v.v.i64 = (int64_t)prod;
        break;
    }
    case SQL_OP_DIV:
    case SQL_OP_MOD:
        if (t.id == STO_TYPE_DECIMAL) return STO_OK; /* (MOD of decimals: run time) */
        if (y == 0) return div_zero(pos);
        if (x == INT64_MIN && y == -1) {
            ovf = op == SQL_OP_DIV;
            v.v.i64 = 0;
        } else {
            v.v.i64 = op == SQL_OP_DIV ? x / y : x % y;
        }
        break;
    default:
        return STO_OK;
    }
    if (ovf) return out_of_range(t.id, pos);
    STO_TRY(check_range(t, v.v.i64, pos));
    become_const(e, v);
    return STO_OK;
}

static int32_t add_months(int32_t date, int64_t months)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d;
    sto_date_to_ymd(date, &y, &m, &d);
    int64_t total = (int64_t)y * 12 + (m - 1) + months;
    y = (int)(total >= 0 ? total / 12 : -((-total + 11) / 12));
    m = (int)(total - (int64_t)y * 12) + 1;
    int last = mdays[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
    if (d > last) d = last;
    return sto_date_from_ymd(y, m, d);
}

static sto_status fold_func(binder *b, sql_bexpr *e)
{
    (void)b;
    sql_func f = e->func.id;
    if (f != SQL_FUNC_DATE_ADD_DAYS && f != SQL_FUNC_DATE_SUB_DAYS &&
        f != SQL_FUNC_DATE_ADD_MONTHS && f != SQL_FUNC_DATE_DIFF_DAYS)
        return STO_OK;
    const sql_bexpr *a = e->func.args.items[0], *c = e->func.args.items[1];
    sto_value v = {0};
    if (a->value.is_null || c->value.is_null) {
        v.is_null = true;
        become_const(e, v);
        return STO_OK;
    }
    int64_t x = a->value.v.i64, y = c->value.v.i64, r;
    switch (f) {
    case SQL_FUNC_DATE_ADD_DAYS:
        r = x + y;
        break;
    case SQL_FUNC_DATE_SUB_DAYS:
        r = x - y;
        break;
    case SQL_FUNC_DATE_ADD_MONTHS:
        if (y > 120000 || y < -120000)
            return sto_error_at(STO_DATETIME_FIELD_OVERFLOW, e->pos, "date out of range");
        r = add_months((int32_t)x, y);
        break;
    default:
        r = x - y;
        break;
    }
    if (r < INT32_MIN / 2 || r > INT32_MAX / 2)
        return sto_error_at(STO_DATETIME_FIELD_OVERFLOW, e->pos, "date out of range");
    v.v.i64 = r;
    become_const(e, v);
    return STO_OK;
}

static bool is_const(const sql_bexpr *e)
{
    return e && e->kind == SQL_BEXPR_CONST;
}

sto_status sql_fold_expr(binder *b, sql_bexpr **ep)
{
    sql_bexpr *e = *ep;
    switch (e->kind) {
    case SQL_BEXPR_CAST:
        if (is_const(e->cast.arg)) return fold_cast(b, e);
        break;
    case SQL_BEXPR_OP:
        if (is_const(e->op.args[0]) && (!e->op.args[1] || is_const(e->op.args[1])))
            return fold_op(b, e);
        break;
    case SQL_BEXPR_FUNC:
        for (uint32_t i = 0; i < e->func.args.count; i++) {
            if (!is_const(e->func.args.items[i])) return STO_OK;
        }
        return fold_func(b, e);
    default:
        break;
    }
    return STO_OK;
}
