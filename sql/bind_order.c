/*
 * bind_order.c — ORDER BY and LIMIT/OFFSET.
 *
 * An ORDER BY item that is an integer names an output by position, a bare
 * name that is an output's name names that output (PostgreSQL's rules);
 * for a SELECT anything else is an expression the SELECT binder computes
 * (bind_select.c), for VALUES and set operations an expression over the
 * outputs. NULLs sort as larger than any value unless NULLS FIRST/LAST says
 * otherwise. LIMIT and OFFSET must be constant integers.
 */
#include <stdio.h>
#include <string.h>

#include "sql/bind_int.h"

/* The value of a LIMIT or OFFSET expression: a constant, bound where no
 * column is visible; NULL leaves *out alone (no limit). */
static sto_status bind_limit_value(binder *b, bind_scope *parent, const sql_expr *e,
                                   bind_clause clause, int64_t *out)
{
    bind_scope *s = sql_bind_new_scope(b, parent, true, NULL);
    if (!s) return sto_error_oom();
    s->clause = clause;
    sql_bexpr *x;
    STO_TRY(sql_bind_expr(b, s, e, &x));
    const char *what = clause == CLAUSE_LIMIT ? "LIMIT" : "OFFSET";
    if (x->type.id != BIND_TYPE_UNKNOWN && !type_is_integer(x->type.id))
        return sto_error_at(STO_DATATYPE_MISMATCH, e->pos,
                            "argument of %s must be type bigint, not type %s", what,
                            sql_type_pg_name(x->type));
    STO_TRY(sql_types_coerce(b, &x, sto_type_make(STO_TYPE_BIGINT)));
    if (x->kind != SQL_BEXPR_CONST)
        return sto_error_at(STO_FEATURE_NOT_SUPPORTED, e->pos, "%s must be a constant", what);
    if (x->value.is_null) return STO_OK;
    if (x->value.v.i64 < 0)
        return sto_error_at(STO_INVALID_PARAMETER_VALUE, e->pos, "%s must not be negative", what);
    *out = x->value.v.i64;
    return STO_OK;
}

sto_status sql_bind_add_limit(binder *b, bind_scope *parent, const sql_query *q, sql_lop **input)
{
    if (!q->limit && !q->offset) return STO_OK;
    int64_t limit = -1, offset = 0;
    if (q->limit) STO_TRY(bind_limit_value(b, parent, q->limit, CLAUSE_LIMIT, &limit));
    if (q->offset) STO_TRY(bind_limit_value(b, parent, q->offset, CLAUSE_OFFSET, &offset));
    sql_lop *l = sql_bind_unary_op(b, SQL_LOP_LIMIT, *input);
    if (!l) return sto_error_oom();
    l->limit.limit = limit;
    l->limit.offset = offset;
    *input = l;
    return STO_OK;
}

bool sql_bind_nulls_first(const sql_order_item *o)
{
    if (o->nulls == SQL_NULLS_FIRST) return true;
    if (o->nulls == SQL_NULLS_LAST) return false;
    return o->desc; /* NULLs sort as larger than every value */
}

/* ORDER BY item naming an output: ordinal or bare output name. Returns the
 * output index, -1 when it is neither. */
sto_status sql_bind_order_output(const sql_expr *e, uint32_t n, const char *const *names,
                                 const bind_item *items, int *out)
{
    *out = -1;
    if (bind_is_ordinal(e)) {
        if (e->lit.integer < 1 || e->lit.integer > (int64_t)n)
            return sto_error_at(STO_INVALID_COLUMN_REFERENCE, e->pos,
                                "ORDER BY position %lld is not in select list",
                                (long long)e->lit.integer);
        *out = (int)e->lit.integer - 1;
        return STO_OK;
    }
    if (e->kind != SQL_EXPR_COLUMN || e->column.table) return STO_OK;
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(names[i], e->column.name) != 0) continue;
        if (*out >= 0) {
            /* Two outputs of one name are ambiguous unless they are the
             * same expression (select a, a ... order by a). */
            if (items && sql_bexpr_equal(items[*out].expr, items[i].expr)) continue;
            return sto_error_at(STO_AMBIGUOUS_COLUMN, e->pos, "ORDER BY \"%s\" is ambiguous",
                                e->column.name);
        }
        *out = (int)i;
    }
    return STO_OK;
}

/* ------------------------------------------ ORDER BY over outputs only -- */

/* VALUES and set operations: ORDER BY names outputs (ordinal, name, or an
 * expression over output names); then LIMIT. */
sto_status sql_bind_order_outputs(binder *b, bind_scope *parent, const sql_query *q,
                                  bound_query *bq)
{
    sql_lop *input = bq->root;
    if (q->order_by.count) {
        bind_scope *s = sql_bind_new_scope(b, parent, false, NULL);
        bind_rel *rel;
        if (!s) return sto_error_oom();
        STO_TRY(sql_bind_make_rel(b, NULL, bq->ncols, bq->cols, bq->names, NULL, 0, &rel));
        STO_TRY(sql_bind_add_rel(b, s, rel));
        s->clause = CLAUSE_ORDER_BY;
        sql_lop *sort = sql_bind_unary_op(b, SQL_LOP_SORT, input);
        if (!sort) return sto_error_oom();
        sort->sort.count = (uint32_t)q->order_by.count;
        sort->sort.keys = sql_arena_alloc(b->arena, sort->sort.count * sizeof(sql_sort_key));
        if (!sort->sort.keys) return sto_error_oom();
        for (uint32_t i = 0; i < sort->sort.count; i++) {
            const sql_order_item *oi = q->order_by.items[i];
            sql_sort_key *k = &sort->sort.keys[i];
            int idx;
            STO_TRY(sql_bind_order_output(oi->expr, bq->ncols, bq->names, NULL, &idx));
            if (idx >= 0) {
                k->expr = sql_bexpr_column(b->ctx, bq->cols[idx], oi->expr->pos);
                if (!k->expr) return sto_error_oom();
            } else {
                STO_TRY(sql_bind_expr(b, s, oi->expr, &k->expr));
                if (s->naggs)
                    return sto_error_at(STO_GROUPING_ERROR, oi->expr->pos,
                                        "aggregate functions are not allowed in ORDER BY of a "
                                        "set operation");
            }
            k->desc = oi->desc;
            k->nulls_first = sql_bind_nulls_first(oi);
        }
        input = sort;
    }
    STO_TRY(sql_bind_add_limit(b, parent, q, &input));
    bq->root = input;
    return STO_OK;
}
