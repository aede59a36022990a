/*
 * types_rules.c — implicit casts, common types and arithmetic result types.
 *
 * Numeric types widen along INTEGER → BIGINT → DECIMAL → DOUBLE; an integer
 * that meets a DECIMAL becomes DECIMAL(10,0) (INTEGER) or DECIMAL(18,0)
 * (BIGINT). DECIMAL results follow PostgreSQL's scale rules with precision
 * capped at 18 (values must fit an int64 at run time; the executor reports
 * overflow):
 *   a + b, a - b   scale max(s1,s2), precision max(p1-s1,p2-s2)+scale+1
 *   a * b          scale s1+s2, precision p1+p2; when p1+p2 > 18 the scale
 *                  drops to max(18 - integer digits, min(s1+s2, 6)) and the
 *                  exact product is rounded to it (int128 at run time)
 *   a / b          DOUBLE when either side is DECIMAL or DOUBLE; integer
 *                  division (truncating) for INTEGER/BIGINT
 *   a % b          integers only
 * CHAR compared with VARCHAR compares as CHAR (the VARCHAR side is cast,
 * losing its trailing blanks, as PostgreSQL's bpchar); a string constant
 * meets a DATE by being read as a date at bind time. DATE arithmetic:
 * date ± integer days, date - date (INTEGER days), date ± INTERVAL.
 */
#include <stdio.h>

#include "sql/bind_int.h"

const char *sql_type_pg_name(sto_type t)
{
    return sto_type_pg_name((sto_type_id)t.id);
}

sto_status sql_date_error(const char *s, size_t len, int position)
{
    bool shaped = len == 10 && s[4] == '-' && s[7] == '-';
    for (size_t i = 0; shaped && i < len; i++)
        shaped = i == 4 || i == 7 || (s[i] >= '0' && s[i] <= '9');
    if (shaped)
        return sto_error_at(STO_DATETIME_FIELD_OVERFLOW, position,
                            "date/time field value out of range: \"%.*s\"", (int)len, s);
    return sto_error_at(STO_INVALID_DATETIME_FORMAT, position,
                        "invalid input syntax for type date: \"%.*s\"", (int)len, s);
}

sto_type sql_types_int_as_decimal(uint8_t id)
{
    return sto_type_decimal(id == STO_TYPE_INTEGER ? 10 : 18, 0);
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static int numeric_rank(uint8_t id)
{
    switch (id) {
    case STO_TYPE_INTEGER:
        return 1;
    case STO_TYPE_BIGINT:
        return 2;
    case STO_TYPE_DECIMAL:
        return 3;
    case STO_TYPE_DOUBLE:
        return 4;
    default:
        return 0;
    }
}

static sto_type as_decimal(sto_type t)
{
    return t.id == STO_TYPE_DECIMAL ? t : sql_types_int_as_decimal(t.id);
}

bool sql_types_common(sto_type a, sto_type b, sto_type *out)
{
    if (a.id == BIND_TYPE_UNKNOWN) {
        *out = b;
        return true;
    }
    if (b.id == BIND_TYPE_UNKNOWN) {
        *out = a;
        return true;
    }
    if (type_is_numeric(a.id) && type_is_numeric(b.id)) {
        int r = imax(numeric_rank(a.id), numeric_rank(b.id));
        if (r == 3) {
            sto_type da = as_decimal(a), db = as_decimal(b);
            int s = imax(da.scale, db.scale);
            int p = imin(STO_DECIMAL_MAX_PRECISION,
                         imax(da.precision - da.scale, db.precision - db.scale) + s);
            *out = sto_type_decimal(p, s);
        } else {
            *out = numeric_rank(a.id) >= numeric_rank(b.id) ? a : b;
        }
        return true;
    }
    if (sto_type_is_string(a.id) && sto_type_is_string(b.id)) {
        if (a.id == b.id) {
            *out = a.length >= b.length && b.length ? a : b;
            if (!a.length) *out = a;
        } else {
            uint32_t len = a.length && b.length ? (a.length > b.length ? a.length : b.length) : 0;
            *out = sto_type_string(STO_TYPE_VARCHAR, len);
        }
        return true;
    }
    if (a.id == b.id) {
        *out = a;
        return true;
    }
    return false;
}

/* A string constant meeting a date. */
static bool is_string_const(const sql_bexpr *e)
{
    return e->kind == SQL_BEXPR_CONST && sto_type_is_string(e->type.id);
}

static bool same_type(sto_type a, sto_type b)
{
    return a.id == b.id && a.precision == b.precision && a.scale == b.scale && a.length == b.length;
}

static sto_status make_cast(binder *b, sql_bexpr **e, sto_type t, int pos)
{
    sql_bexpr *c = sql_bexpr_new(b->ctx, SQL_BEXPR_CAST, t, (*e)->nullable, pos);
    if (!c) return sto_error_oom();
    c->cast.arg = *e;
    *e = c;
    return sql_fold_expr(b, e);
}

static void set_param_type(binder *b, sql_bexpr *e, sto_type t)
{
    e->type = t;
    if (e->kind == SQL_BEXPR_PARAM && e->param >= 1 && (uint32_t)e->param <= b->ctx->nparams)
        b->ctx->param_types[e->param - 1] = t;
}

sto_status sql_types_coerce(binder *b, sql_bexpr **e, sto_type t)
{
    sql_bexpr *x = *e;
    if (x->type.id == BIND_TYPE_UNKNOWN) {
        set_param_type(b, x, t);
        return STO_OK;
    }
    if (same_type(x->type, t)) return STO_OK;
    if (type_is_numeric(x->type.id) && type_is_numeric(t.id)) {
        /* A DECIMAL's precision is only a bound: a change of scale needs a
         * cast, a change of precision does not. */
        if (x->type.id == t.id && (t.id != STO_TYPE_DECIMAL || x->type.scale == t.scale))
            return STO_OK;
        return make_cast(b, e, t, x->pos);
    }
    if (sto_type_is_string(x->type.id) && sto_type_is_string(t.id)) return STO_OK;
    if (is_string_const(x) && !sto_type_is_string(t.id)) return make_cast(b, e, t, x->pos);
    if (x->type.id == t.id) return STO_OK;
    return sto_error_at(STO_DATATYPE_MISMATCH, x->pos, "cannot cast type %s to %s",
                        sql_type_pg_name(x->type), sql_type_pg_name(t));
}

/* The DECIMAL a cast to DECIMAL / NUMERIC without a precision gives x: a
 * DECIMAL stays as it is, an integer gets its digits, a numeric string
 * constant the scale it is written with, anything else the column default. */
static sto_type unconstrained_decimal(const sql_bexpr *x)
{
    if (x->type.id == STO_TYPE_DECIMAL) return x->type;
    if (type_is_integer(x->type.id)) return sql_types_int_as_decimal(x->type.id);
    if (is_string_const(x) && !x->value.is_null) {
        const char *p = sto_str_data(&x->value.v.str);
        const char *dot = memchr(p, '.', x->value.v.str.len);
        if (dot) {
            int digits = 0;
            for (const char *q = dot + 1; q < p + x->value.v.str.len && *q >= '0' && *q <= '9'; q++)
                digits++;
            if (digits <= STO_DECIMAL_MAX_PRECISION)
                return sto_type_decimal(STO_DECIMAL_MAX_PRECISION, digits);
        } else {
            return sto_type_decimal(STO_DECIMAL_MAX_PRECISION, 0);
        }
    }
    return sto_type_decimal(STO_DECIMAL_MAX_PRECISION, SQL_DECIMAL_DEFAULT_SCALE);
}

sto_status sql_types_cast(binder *b, sql_bexpr **e, sto_type t, int pos)
{
    sql_bexpr *x = *e;
    if (t.id == STO_TYPE_DECIMAL && t.precision == 0) t = unconstrained_decimal(x);
    if (x->type.id == BIND_TYPE_UNKNOWN) {
        set_param_type(b, x, t);
        return STO_OK;
    }
    if (same_type(x->type, t)) return STO_OK;
    uint8_t from = x->type.id;
    bool ok = (type_is_numeric(from) && type_is_numeric(t.id)) || sto_type_is_string(from) ||
              sto_type_is_string(t.id) || (from == STO_TYPE_BOOLEAN && type_is_integer(t.id)) ||
              (type_is_integer(from) && t.id == STO_TYPE_BOOLEAN) || from == t.id;
    if (!ok)
        return sto_error_at(STO_DATATYPE_MISMATCH, pos, "cannot cast type %s to %s",
                            sql_type_pg_name(x->type), sql_type_pg_name(t));
    return make_cast(b, e, t, pos);
}

/* CHAR values are stored without trailing blanks and compare as bytes, so
 * a string constant compared with a CHAR loses its trailing blanks too
 * (PostgreSQL's bpchar semantics: 'AIR  ' = 'AIR'). */
static sto_status trim_for_char(binder *b, sql_bexpr *c, sto_type other)
{
    if (other.id != STO_TYPE_CHAR || !is_string_const(c) || c->value.is_null) return STO_OK;
    const char *bytes = sto_str_data(&c->value.v.str);
    uint32_t len = c->value.v.str.len;
    while (len > 0 && bytes[len - 1] == ' ')
        len--;
    if (len == c->value.v.str.len) return STO_OK;
    char *copy = sql_arena_strndup(b->arena, bytes, len);
    if (!copy) return sto_error_oom();
    c->value.v.str = sto_str_make(copy, len);
    return STO_OK;
}

/* A CHAR value compared with a non-constant VARCHAR (a string constant was
 * already trimmed by trim_for_char and keeps comparing as VARCHAR). */
static bool char_meets_varchar(const sql_bexpr *c, const sql_bexpr *v)
{
    return c->type.id == STO_TYPE_CHAR && sto_type_is_string(v->type.id) &&
           v->type.id != STO_TYPE_CHAR && !is_string_const(v);
}

sto_status sql_types_unify(binder *b, sql_bexpr **l, sql_bexpr **r, const char *opname, int pos)
{
    STO_TRY(trim_for_char(b, *l, (*r)->type));
    STO_TRY(trim_for_char(b, *r, (*l)->type));
    sto_type lt = (*l)->type, rt = (*r)->type, t;
    /* A string constant meeting another type is read as that type, like
     * PostgreSQL's unknown-typed literals: d = '1998-12-01', k = '5'. */
    if (!sto_type_is_string(lt.id) && lt.id != BIND_TYPE_UNKNOWN && is_string_const(*r)) {
        t = lt;
    } else if (!sto_type_is_string(rt.id) && rt.id != BIND_TYPE_UNKNOWN && is_string_const(*l)) {
        t = rt;
    } else if (char_meets_varchar(*l, *r) || char_meets_varchar(*r, *l)) {
        /* PostgreSQL resolves bpchar = varchar as bpchar = bpchar (more
         * exact matches), so the VARCHAR side's trailing blanks stop
         * counting: cast it to CHAR of its own length, which strips them. */
        sql_bexpr **v = (*l)->type.id == STO_TYPE_CHAR ? r : l;
        return make_cast(b, v, sto_type_string(STO_TYPE_CHAR, (*v)->type.length), (*v)->pos);
    } else if (!sql_types_common(lt, rt, &t)) {
        return sto_error_at(STO_UNDEFINED_FUNCTION, pos, "operator does not exist: %s %s %s",
                            sql_type_pg_name(lt), opname, sql_type_pg_name(rt));
    }
    if (t.id == BIND_TYPE_UNKNOWN) return STO_OK;
    STO_TRY(sql_types_coerce(b, l, t));
    return sql_types_coerce(b, r, t);
}

sto_status sql_types_resolve_unknown(binder *b, sql_bexpr **e)
{
    if ((*e)->type.id == BIND_TYPE_UNKNOWN)
        set_param_type(b, *e, sto_type_string(STO_TYPE_VARCHAR, 0));
    return STO_OK;
}

static sto_status arith_error(sql_op op, sto_type l, sto_type r, int pos)
{
    static const char *const spell[SQL_OP_COUNT] = {
#define SQL_OP_SPELL(id, spelling, arity) spelling,
        SQL_OP_LIST(SQL_OP_SPELL)
#undef SQL_OP_SPELL
    };
    return sto_error_at(STO_UNDEFINED_FUNCTION, pos, "operator does not exist: %s %s %s",
                        sql_type_pg_name(l), spell[op], sql_type_pg_name(r));
}

/* date ± integer, date - date. */
static sto_status date_arith(binder *b, sql_op op, sql_bexpr *l, sql_bexpr *r, int pos,
                             sql_bexpr **out)
{
    sto_type lt = l->type, rt = r->type;
    sql_bexpr *args[2] = {l, r};
    if (lt.id == STO_TYPE_DATE && type_is_integer(rt.id) && (op == SQL_OP_ADD || op == SQL_OP_SUB))
        return sql_bind_make_func(
            b, op == SQL_OP_ADD ? SQL_FUNC_DATE_ADD_DAYS : SQL_FUNC_DATE_SUB_DAYS, args, 2, pos,
            out);
    if (type_is_integer(lt.id) && rt.id == STO_TYPE_DATE && op == SQL_OP_ADD) {
        args[0] = r;
        args[1] = l;
        return sql_bind_make_func(b, SQL_FUNC_DATE_ADD_DAYS, args, 2, pos, out);
    }
    if (lt.id == STO_TYPE_DATE && op == SQL_OP_SUB &&
        (rt.id == STO_TYPE_DATE || is_string_const(r))) {
        STO_TRY(sql_types_coerce(b, &args[1], lt));
        return sql_bind_make_func(b, SQL_FUNC_DATE_DIFF_DAYS, args, 2, pos, out);
    }
    return arith_error(op, lt, rt, pos);
}

sto_status sql_types_arith(binder *b, sql_op op, sql_bexpr *l, sql_bexpr *r, int pos,
                           sql_bexpr **out)
{
    /* An unknown side takes the other side's type (text for ||). */
    if (op == SQL_OP_CONCAT) {
        STO_TRY(sql_types_resolve_unknown(b, &l));
        STO_TRY(sql_types_resolve_unknown(b, &r));
    }
    if (l->type.id == BIND_TYPE_UNKNOWN && r->type.id != BIND_TYPE_UNKNOWN)
        STO_TRY(sql_types_coerce(b, &l, r->type));
    if (r->type.id == BIND_TYPE_UNKNOWN && l->type.id != BIND_TYPE_UNKNOWN)
        STO_TRY(sql_types_coerce(b, &r, l->type));
    if (l->type.id == BIND_TYPE_UNKNOWN) {
        STO_TRY(sql_types_coerce(b, &l, sto_type_make(STO_TYPE_INTEGER)));
        STO_TRY(sql_types_coerce(b, &r, sto_type_make(STO_TYPE_INTEGER)));
    }
    sto_type lt = l->type, rt = r->type;
    if (op == SQL_OP_CONCAT) {
        /* as PostgreSQL's text || anynonarray: one string side makes the
         * other side text */
        if (sto_type_is_string(lt.id) != sto_type_is_string(rt.id)) {
            STO_TRY(sql_types_cast(b, sto_type_is_string(lt.id) ? &r : &l,
                                   sto_type_string(STO_TYPE_VARCHAR, 0), pos));
            lt = l->type;
            rt = r->type;
        }
        if (!sto_type_is_string(lt.id) || !sto_type_is_string(rt.id))
            return arith_error(op, lt, rt, pos);
        uint32_t len = lt.length && rt.length ? lt.length + rt.length : 0;
        *out = sql_bexpr_op(b->ctx, op, sto_type_string(STO_TYPE_VARCHAR, len), l, r, pos);
        return *out ? sql_fold_expr(b, out) : sto_error_oom();
    }
    if (lt.id == STO_TYPE_DATE || rt.id == STO_TYPE_DATE) return date_arith(b, op, l, r, pos, out);
    if (!type_is_numeric(lt.id) || !type_is_numeric(rt.id)) return arith_error(op, lt, rt, pos);

    sto_type t;
    sql_types_common(lt, rt, &t);
    sto_type result = t;
    if (t.id == STO_TYPE_DECIMAL) {
        sto_type a = as_decimal(lt), c = as_decimal(rt);
        int s, p;
        switch (op) {
        case SQL_OP_ADD:
        case SQL_OP_SUB:
            s = imax(a.scale, c.scale);
            p = imax(a.precision - a.scale, c.precision - c.scale) + s + 1;
            result = sto_type_decimal(imin(p, STO_DECIMAL_MAX_PRECISION), s);
            break;
        case SQL_OP_MUL:
            s = a.scale + c.scale;
            p = a.precision + c.precision;
            if (p > STO_DECIMAL_MAX_PRECISION) {
                /* 18 digits cannot hold both the integer digits and
                 * s1+s2 fraction digits: give up fraction digits first,
                 * down to 6 (the product is rounded to them). */
                int int_digits = p - s;
                s = imax(STO_DECIMAL_MAX_PRECISION - int_digits, imin(s, 6));
                p = STO_DECIMAL_MAX_PRECISION;
            }
            result = sto_type_decimal(p, s);
            break;
        case SQL_OP_MOD:
            s = imax(a.scale, c.scale);
            p = imax(a.precision - a.scale, c.precision - c.scale) + s;
            result = sto_type_decimal(imin(p, STO_DECIMAL_MAX_PRECISION), s);
            break;
        default: /* DIV */
            t = result = sto_type_make(STO_TYPE_DOUBLE);
            break;
        }
    }
    if (op == SQL_OP_DIV && t.id == STO_TYPE_DOUBLE) t = result = sto_type_make(STO_TYPE_DOUBLE);
    if (op == SQL_OP_MOD && t.id == STO_TYPE_DOUBLE) return arith_error(op, lt, rt, pos);
    /* Operands share the type id; DECIMALs keep their own scale. */
    if (t.id == STO_TYPE_DECIMAL) {
        if (l->type.id != STO_TYPE_DECIMAL) STO_TRY(sql_types_coerce(b, &l, as_decimal(lt)));
        if (r->type.id != STO_TYPE_DECIMAL) STO_TRY(sql_types_coerce(b, &r, as_decimal(rt)));
    } else {
        STO_TRY(sql_types_coerce(b, &l, t));
        STO_TRY(sql_types_coerce(b, &r, t));
    }
    *out = sql_bexpr_op(b->ctx, op, result, l, r, pos);
    if (!*out) return sto_error_oom();
    return sql_fold_expr(b, out);
}
