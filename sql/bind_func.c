/*
 * bind_func.c — calls: scalar functions of SQL_FUNC_LIST and aggregates.
 *
 * sql_bind_make_func holds each scalar function's typing rule (argument types,
 * implicit casts, result type and nullability). sql_bind_agg_call collects an
 * aggregate into its query level's aggregate list and stands a column
 * reference to the aggregate's result in its place; the query binder then
 * builds the AGGREGATE operator from that list.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sql/bind_int.h"

static sto_status no_such_function(const char *name, sql_bexpr **args, uint32_t nargs, int pos)
{
    char buf[256];
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < nargs && n < sizeof(buf) - 40; i++) {
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : "",
                              sql_type_pg_name(args[i]->type));
    }
    return sto_error_at(STO_UNDEFINED_FUNCTION, pos, "function %s(%s) does not exist", name, buf);
}

static bool any_nullable(sql_bexpr **args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (args[i]->nullable) return true;
    }
    return false;
}

/* Argument i must be a string (unknown ones become VARCHAR). */
static bool want_string(binder *b, sql_bexpr **arg)
{
    if ((*arg)->type.id == BIND_TYPE_UNKNOWN)
        return sql_types_coerce(b, arg, sto_type_string(STO_TYPE_VARCHAR, 0)) == STO_OK;
    return sto_type_is_string((*arg)->type.id);
}

/* Argument must be INTEGER (BIGINT and unknown are cast). */
static bool want_int(binder *b, sql_bexpr **arg)
{
    uint8_t id = (*arg)->type.id;
    if (id != BIND_TYPE_UNKNOWN && !type_is_integer(id)) return false;
    return sql_types_coerce(b, arg, sto_type_make(STO_TYPE_INTEGER)) == STO_OK;
}

sto_status sql_bind_make_func(binder *b, sql_func f, sql_bexpr **in, uint32_t nargs, int pos,
                              sql_bexpr **out)
{
    sql_bexpr **args = sql_arena_alloc(b->arena, (nargs ? nargs : 1) * sizeof(*args));
    if (!args) return sto_error_oom();
    memcpy(args, in, nargs * sizeof(*args));
    const char *name = sql_func_name(f);
    if (sql_func_is_extract(f)) name = "extract"; /* as the user wrote it */
    int max = sql_func_max_args(f);
    if ((int)nargs < sql_func_min_args(f) || (max >= 0 && (int)nargs > max))
        return no_such_function(name, args, nargs, pos);
    if (f == SQL_FUNC_MOD) return sql_types_arith(b, SQL_OP_MOD, args[0], args[1], pos, out);

    sto_type t = sto_type_make(STO_TYPE_BOOLEAN);
    bool nullable = any_nullable(args, nargs);
    bool ok = true;
    switch (f) {
    case SQL_FUNC_COALESCE:
    case SQL_FUNC_GREATEST:
    case SQL_FUNC_LEAST:
        /* NULL only when every argument is: these skip NULL arguments */
        t = args[0]->type;
        for (uint32_t i = 1; i < nargs; i++) {
            if (!sql_types_common(t, args[i]->type, &t)) {
                char upper[16];
                size_t k = 0;
                for (; name[k] && k + 1 < sizeof(upper); k++)
                    upper[k] = (char)toupper((unsigned char)name[k]);
                upper[k] = 0;
                return sto_error_at(STO_DATATYPE_MISMATCH, args[i]->pos,
                                    "%s types %s and %s cannot be matched", upper,
                                    sql_type_pg_name(t), sql_type_pg_name(args[i]->type));
            }
        }
        if (t.id == BIND_TYPE_UNKNOWN) t = sto_type_string(STO_TYPE_VARCHAR, 0);
        nullable = true;
        for (uint32_t i = 0; i < nargs; i++) {
            STO_TRY(sql_types_coerce(b, &args[i], t));
            if (!args[i]->nullable) nullable = false;
        }
        break;
    case SQL_FUNC_NULLIF: {
        sql_bexpr *x = args[0], *y = args[1];
        STO_TRY(sql_types_unify(b, &x, &y, "=", pos));
        args[0] = x;
        args[1] = y;
        STO_TRY(sql_types_resolve_unknown(b, &args[0]));
        STO_TRY(sql_types_resolve_unknown(b, &args[1]));
        t = args[0]->type;
        nullable = true;
        break;
    }
    case SQL_FUNC_SUBSTRING:
        ok = want_string(b, &args[0]) && want_int(b, &args[1]) &&
             (nargs < 3 || want_int(b, &args[2]));
        t = sto_type_string(STO_TYPE_VARCHAR, ok ? args[0]->type.length : 0);
        break;
    case SQL_FUNC_ABS:
        ok = type_is_numeric(args[0]->type.id);
        t = args[0]->type;
        break;
    case SQL_FUNC_ROUND:
        ok = type_is_numeric(args[0]->type.id) && (nargs < 2 || want_int(b, &args[1]));
        t = args[0]->type;
        if (ok && t.id == STO_TYPE_DECIMAL) {
            /* round(x, n) with a constant n keeps n fraction digits. */
            int s = 0;
            if (nargs == 2) {
                if (args[1]->kind != SQL_BEXPR_CONST || args[1]->value.is_null)
                    return sto_error_at(STO_FEATURE_NOT_SUPPORTED, args[1]->pos,
                                        "round(numeric, n) needs a constant n");
                s = (int)args[1]->value.v.i64;
                if (s < 0) s = 0;
                if (s > t.scale) s = t.scale;
            }
            int p = t.precision - t.scale + s + 1;
            t = sto_type_decimal(p > STO_DECIMAL_MAX_PRECISION ? STO_DECIMAL_MAX_PRECISION : p, s);
        }
        break;
    case SQL_FUNC_UPPER:
    case SQL_FUNC_LOWER:
        ok = want_string(b, &args[0]);
        t = sto_type_string(STO_TYPE_VARCHAR, ok ? args[0]->type.length : 0);
        break;
    case SQL_FUNC_LENGTH:
        ok = want_string(b, &args[0]);
        t = sto_type_make(STO_TYPE_INTEGER);
        break;
    case SQL_FUNC_STRPOS:
        ok = want_string(b, &args[0]) && want_string(b, &args[1]);
        t = sto_type_make(STO_TYPE_INTEGER);
        break;
    case SQL_FUNC_BTRIM:
    case SQL_FUNC_LTRIM:
    case SQL_FUNC_RTRIM:
        ok = want_string(b, &args[0]) && (nargs < 2 || want_string(b, &args[1]));
        t = sto_type_string(STO_TYPE_VARCHAR, ok ? args[0]->type.length : 0);
        break;
    case SQL_FUNC_REPLACE:
        ok = want_string(b, &args[0]) && want_string(b, &args[1]) && want_string(b, &args[2]);
        t = sto_type_string(STO_TYPE_VARCHAR, 0);
        break;
    case SQL_FUNC_LEFT:
    case SQL_FUNC_RIGHT:
        ok = want_string(b, &args[0]) && want_int(b, &args[1]);
        t = sto_type_string(STO_TYPE_VARCHAR, ok ? args[0]->type.length : 0);
        break;
    case SQL_FUNC_OCTET_LENGTH:
        ok = want_string(b, &args[0]);
        t = sto_type_make(STO_TYPE_INTEGER);
        break;
    case SQL_FUNC_SQRT:
    case SQL_FUNC_POWER:
    case SQL_FUNC_EXP:
    case SQL_FUNC_LN:
    case SQL_FUNC_LOG:
    case SQL_FUNC_PI:
        /* computed in DOUBLE PRECISION (PostgreSQL would keep a NUMERIC
         * argument's type) */
        for (uint32_t i = 0; ok && i < nargs; i++) {
            ok = args[i]->type.id == BIND_TYPE_UNKNOWN || type_is_numeric(args[i]->type.id);
            if (ok) STO_TRY(sql_types_coerce(b, &args[i], sto_type_make(STO_TYPE_DOUBLE)));
        }
        t = sto_type_make(STO_TYPE_DOUBLE);
        break;
    case SQL_FUNC_SIGN:
    case SQL_FUNC_FLOOR:
    case SQL_FUNC_CEIL:
        /* as in PostgreSQL: DECIMAL stays DECIMAL (no fraction digits; for
         * floor and ceil one more integer digit), everything else becomes
         * DOUBLE PRECISION */
        if (args[0]->type.id == BIND_TYPE_UNKNOWN || type_is_integer(args[0]->type.id))
            STO_TRY(sql_types_coerce(b, &args[0], sto_type_make(STO_TYPE_DOUBLE)));
        ok = type_is_numeric(args[0]->type.id);
        t = args[0]->type;
        if (ok && t.id == STO_TYPE_DECIMAL && f == SQL_FUNC_SIGN) {
            t = sto_type_decimal(1, 0);
        } else if (ok && t.id == STO_TYPE_DECIMAL && t.scale > 0) {
            int p = t.precision - t.scale + 1;
            t = sto_type_decimal(p > STO_DECIMAL_MAX_PRECISION ? STO_DECIMAL_MAX_PRECISION : p, 0);
        }
        break;
    case SQL_FUNC_LIKE:
    case SQL_FUNC_NOT_LIKE:
    case SQL_FUNC_ILIKE:
    case SQL_FUNC_NOT_ILIKE:
        ok = want_string(b, &args[0]) && want_string(b, &args[1]) &&
             (nargs < 3 || want_string(b, &args[2]));
        if (!ok) {
            return sto_error_at(STO_UNDEFINED_FUNCTION, pos, "operator does not exist: %s %s %s",
                                sql_type_pg_name(args[0]->type),
                                f == SQL_FUNC_LIKE || f == SQL_FUNC_NOT_LIKE ? "~~" : "~~*",
                                sql_type_pg_name(args[1]->type));
        }
        break;
    case SQL_FUNC_EXTRACT_YEAR:
    case SQL_FUNC_EXTRACT_MONTH:
    case SQL_FUNC_EXTRACT_DAY:
    case SQL_FUNC_EXTRACT_QUARTER:
    case SQL_FUNC_EXTRACT_WEEK:
    case SQL_FUNC_EXTRACT_DOW:
    case SQL_FUNC_EXTRACT_ISODOW:
    case SQL_FUNC_EXTRACT_DOY:
    case SQL_FUNC_EXTRACT_ISOYEAR:
        if (args[0]->type.id == BIND_TYPE_UNKNOWN)
            STO_TRY(sql_types_coerce(b, &args[0], sto_type_make(STO_TYPE_DATE)));
        ok = args[0]->type.id == STO_TYPE_DATE;
        t = sto_type_make(STO_TYPE_INTEGER);
        break;
    case SQL_FUNC_DATE_ADD_DAYS:
    case SQL_FUNC_DATE_SUB_DAYS:
    case SQL_FUNC_DATE_ADD_MONTHS:
        ok = args[0]->type.id == STO_TYPE_DATE && want_int(b, &args[1]);
        t = sto_type_make(STO_TYPE_DATE);
        break;
    case SQL_FUNC_DATE_DIFF_DAYS:
        ok = args[0]->type.id == STO_TYPE_DATE && args[1]->type.id == STO_TYPE_DATE;
        t = sto_type_make(STO_TYPE_INTEGER);
        break;
    case SQL_FUNC_MOD: /* bound as the % operator above */
    case SQL_FUNC_COUNT:
        ok = false;
        break;
    }
    if (!ok) return no_such_function(name, args, nargs, pos);

    sql_bexpr *e = sql_bexpr_new(b->ctx, SQL_BEXPR_FUNC, t, nullable, pos);
    if (!e) return sto_error_oom();
    e->func.id = f;
    e->func.args.count = nargs;
    e->func.args.items = args;
    *out = e;
    return sql_fold_expr(b, out);
}

static const char *clause_name(bind_clause c)
{
    switch (c) {
    case CLAUSE_FROM:
        return "FROM clause of their own query level";
    case CLAUSE_WHERE:
        return "WHERE";
    case CLAUSE_JOIN:
        return "JOIN conditions";
    case CLAUSE_GROUP_BY:
        return "GROUP BY";
    case CLAUSE_VALUES:
        return "VALUES";
    case CLAUSE_LIMIT:
        return "LIMIT";
    case CLAUSE_OFFSET:
        return "OFFSET";
    default:
        return "this context";
    }
}

static sto_status bind_args(binder *b, bind_scope *s, const sql_expr_list *in, sql_bexpr ***out)
{
    *out = sql_arena_alloc(b->arena, (in->count ? (size_t)in->count : 1) * sizeof(**out));
    if (!*out) return sto_error_oom();
    for (int i = 0; i < in->count; i++)
        STO_TRY(sql_bind_expr(b, s, in->items[i], &(*out)[i]));
    return STO_OK;
}

sto_status sql_bind_agg_call(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    sql_agg func;
    if (!sql_agg_lookup(e->func.name, &func)) return STO_OK; /* not an aggregate */
    if (s->clause != CLAUSE_SELECT && s->clause != CLAUSE_HAVING && s->clause != CLAUSE_ORDER_BY)
        return sto_error_at(STO_GROUPING_ERROR, e->pos, "aggregate functions are not allowed in %s",
                            clause_name(s->clause));
    if (s->in_agg_arg)
        return sto_error_at(STO_GROUPING_ERROR, e->pos,
                            "aggregate function calls cannot be nested");
    sql_bexpr *arg = NULL;
    if (e->func.star) {
        if (func != SQL_AGG_COUNT)
            return sto_error_at(STO_UNDEFINED_FUNCTION, e->pos, "function %s(*) does not exist",
                                e->func.name);
        func = SQL_AGG_COUNT_STAR;
    } else {
        s->in_agg_arg = true;
        sql_bexpr **args;
        sto_status st = bind_args(b, s, &e->func.args, &args);
        s->in_agg_arg = false;
        STO_TRY(st);
        if (e->func.args.count != 1)
            return no_such_function(e->func.name, args, (uint32_t)e->func.args.count, e->pos);
        arg = args[0];
        STO_TRY(sql_types_resolve_unknown(b, &arg));
    }

    /* Result type. */
    sto_type t = sto_type_make(STO_TYPE_BIGINT);
    bool nullable = true;
    switch (func) {
    case SQL_AGG_COUNT_STAR:
    case SQL_AGG_COUNT:
        nullable = false;
        break;
    case SQL_AGG_SUM:
        if (type_is_integer(arg->type.id))
            t = sto_type_make(STO_TYPE_BIGINT);
        else if (arg->type.id == STO_TYPE_DECIMAL)
            t = sto_type_decimal(STO_DECIMAL_MAX_PRECISION, arg->type.scale);
        else if (arg->type.id == STO_TYPE_DOUBLE)
            t = arg->type;
        else
            return no_such_function("sum", &arg, 1, e->pos);
        break;
    case SQL_AGG_AVG:
        if (!type_is_numeric(arg->type.id)) return no_such_function("avg", &arg, 1, e->pos);
        t = sto_type_make(STO_TYPE_DOUBLE);
        break;
    case SQL_AGG_MIN:
    case SQL_AGG_MAX:
        if (arg->type.id == STO_TYPE_BOOLEAN)
            return no_such_function(sql_agg_name(func), &arg, 1, e->pos);
        t = arg->type;
        break;
    default:
        break;
    }

    /* The same aggregate written twice is computed once. */
    sql_colid id = 0;
    for (uint32_t i = 0; i < s->naggs; i++) {
        const sql_agg_item *a = &s->aggs[i];
        if (a->func == func && a->distinct == e->func.distinct && sql_bexpr_equal(a->arg, arg)) {
            id = a->id;
            break;
        }
    }
    if (!id) {
        if (s->naggs == s->capaggs) {
            uint32_t cap = s->capaggs ? s->capaggs * 2 : 8;
            sql_agg_item *aggs = sql_arena_alloc(b->arena, cap * sizeof(*aggs));
            if (!aggs) return sto_error_oom();
            if (s->naggs) memcpy(aggs, s->aggs, s->naggs * sizeof(*aggs));
            s->aggs = aggs;
            s->capaggs = cap;
        }
        id = sql_plan_new_col(b->ctx, t, nullable, sql_agg_name(func));
        if (!id) return sto_error_oom();
        sql_agg_item *a = &s->aggs[s->naggs++];
        a->func = func;
        a->distinct = e->func.distinct;
        a->arg = arg;
        a->id = id;
    }
    *out = sql_bexpr_column(b->ctx, id, e->pos);
    return *out ? STO_OK : sto_error_oom();
}

sto_status sql_bind_func_call(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out)
{
    *out = NULL;
    STO_TRY(sql_bind_agg_call(b, s, e, out));
    if (*out) return STO_OK;
    sql_bexpr **args;
    STO_TRY(bind_args(b, s, &e->func.args, &args));
    sql_func f;
    if (!sql_func_lookup(e->func.name, &f) || e->func.star || e->func.distinct)
        return no_such_function(e->func.name, args, (uint32_t)e->func.args.count, e->pos);
    return sql_bind_make_func(b, f, args, (uint32_t)e->func.args.count, e->pos, out);
}
