/*
 * opt_fold.c — constant folding of what the binder left, and boolean
 * simplification.
 *
 * The binder already folds casts, arithmetic and date functions over
 * constants, raising exactly the errors PostgreSQL raises for them. What is
 * left for here never raises: comparisons of two constants, NULL flowing
 * through strict operators, AND/OR/NOT over TRUE/FALSE, IS [NOT] NULL of a
 * constant, COALESCE, GREATEST, LEAST and CASE arms that are decided, and `x = x`, which is
 * `x IS NOT NULL` (or TRUE for a NOT NULL column). A FILTER left with TRUE
 * disappears.
 */
#include <string.h>

#include "engine/opt_int.h"

static sql_bexpr *null_of(sql_plan_ctx *ctx, const sql_bexpr *e)
{
    sql_bexpr *n = sql_bexpr_null(ctx, e->type, e->pos);
    return n ? n : (sql_bexpr *)e;
}

static bool is_null_const(const sql_bexpr *e)
{
    return e->kind == SQL_BEXPR_CONST && e->value.is_null;
}

static bool is_value_const(const sql_bexpr *e)
{
    return e->kind == SQL_BEXPR_CONST && !e->value.is_null;
}

/* -1, 0, 1; false when the constants cannot be compared here. */
static bool compare_consts(const sql_bexpr *a, const sql_bexpr *b, int *out)
{
    if (a->type.id != b->type.id) return false;
    switch (a->type.id) {
    case STO_TYPE_BOOLEAN:
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
    case STO_TYPE_DATE:
        *out = (a->value.v.i64 > b->value.v.i64) - (a->value.v.i64 < b->value.v.i64);
        return true;
    case STO_TYPE_DECIMAL:
        if (a->type.scale != b->type.scale) return false;
        *out = (a->value.v.i64 > b->value.v.i64) - (a->value.v.i64 < b->value.v.i64);
        return true;
    case STO_TYPE_DOUBLE:
        if (a->value.v.f64 != a->value.v.f64 || b->value.v.f64 != b->value.v.f64) return false;
        *out = (a->value.v.f64 > b->value.v.f64) - (a->value.v.f64 < b->value.v.f64);
        return true;
    case STO_TYPE_VARCHAR:
        *out = sto_str_cmp(&a->value.v.str, &b->value.v.str);
        *out = (*out > 0) - (*out < 0);
        return true;
    default:
        return false;
    }
}

static sql_bexpr *fold_op(sql_plan_ctx *ctx, sql_bexpr *e)
{
    sql_bexpr *a = e->op.args[0], *b = e->op.args[1];
    switch (e->op.op) {
    case SQL_OP_AND:
        if (eng_expr_is_bool_const(a, true)) return b;
        if (eng_expr_is_bool_const(b, true)) return a;
        if (eng_expr_is_bool_const(a, false) || eng_expr_is_bool_const(b, false))
            return eng_bool_const(ctx, false);
        return e;
    case SQL_OP_OR:
        if (eng_expr_is_bool_const(a, false)) return b;
        if (eng_expr_is_bool_const(b, false)) return a;
        if (eng_expr_is_bool_const(a, true) || eng_expr_is_bool_const(b, true))
            return eng_bool_const(ctx, true);
        return e;
    case SQL_OP_NOT:
        if (is_null_const(a)) return null_of(ctx, e);
        if (is_value_const(a)) return eng_bool_const(ctx, a->value.v.i64 == 0);
        /* NOT NOT x is x in three-valued logic too. */
        if (a->kind == SQL_BEXPR_OP && a->op.op == SQL_OP_NOT) return a->op.args[0];
        return e;
    default:
        break;
    }
    if (is_null_const(a) || (b && is_null_const(b))) return null_of(ctx, e);
    if (sql_op_is_comparison(e->op.op)) {
        int c;
        if (is_value_const(a) && is_value_const(b) && compare_consts(a, b, &c))
            return eng_bool_const(ctx, sql_op_compare_holds(e->op.op, c));
        if (a->kind == SQL_BEXPR_COLUMN && b->kind == SQL_BEXPR_COLUMN && a->column == b->column) {
            bool reflexive =
                e->op.op == SQL_OP_EQ || e->op.op == SQL_OP_LE || e->op.op == SQL_OP_GE;
            bool dbl = a->type.id == STO_TYPE_DOUBLE; /* NaN = NaN is true in SQL, keep it */
            if (reflexive && !dbl) {
                if (!sql_plan_col(ctx, a->column)->nullable) return eng_bool_const(ctx, true);
                return eng_expr_is_null(ctx, a, true);
            }
        }
    }
    return e;
}

static sql_bexpr *fold_node(sql_plan_ctx *ctx, sql_bexpr *e)
{
    switch (e->kind) {
    case SQL_BEXPR_OP:
        return fold_op(ctx, e);
    case SQL_BEXPR_CAST:
        return is_null_const(e->cast.arg) ? null_of(ctx, e) : e;
    case SQL_BEXPR_IS_NULL:
        if (e->is_null.arg->kind == SQL_BEXPR_CONST)
            return eng_bool_const(ctx, e->is_null.arg->value.is_null != e->is_null.negated);
        if (!e->is_null.arg->nullable && e->is_null.arg->kind == SQL_BEXPR_COLUMN)
            return eng_bool_const(ctx, e->is_null.negated);
        return e;
    case SQL_BEXPR_FUNC:
        if (e->func.id == SQL_FUNC_COALESCE) {
            uint32_t n = 0;
            for (uint32_t i = 0; i < e->func.args.count; i++) {
                sql_bexpr *x = e->func.args.items[i];
                if (is_null_const(x)) continue;
                e->func.args.items[n++] = x;
                if (!x->nullable) break; /* later arguments are never reached */
            }
            if (n == 0) return null_of(ctx, e);
            e->func.args.count = n;
            return n == 1 && e->func.args.items[0]->type.id == e->type.id ? e->func.args.items[0]
                                                                          : e;
        }
        if (e->func.id == SQL_FUNC_GREATEST || e->func.id == SQL_FUNC_LEAST) {
            /* they skip NULL arguments, as COALESCE does, but read them all */
            uint32_t n = 0;
            for (uint32_t i = 0; i < e->func.args.count; i++)
                if (!is_null_const(e->func.args.items[i]))
                    e->func.args.items[n++] = e->func.args.items[i];
            if (n == 0) return null_of(ctx, e);
            e->func.args.count = n;
            return e;
        }
        if (e->func.id == SQL_FUNC_NULLIF) return e;
        for (uint32_t i = 0; i < e->func.args.count; i++)
            if (is_null_const(e->func.args.items[i])) return null_of(ctx, e);
        return e;
    case SQL_BEXPR_CASE: {
        uint32_t n = 0;
        for (uint32_t i = 0; i < e->case_.conds.count; i++) {
            sql_bexpr *c = e->case_.conds.items[i];
            if (eng_expr_is_bool_const(c, false) || is_null_const(c)) continue;
            if (eng_expr_is_bool_const(c, true) && n == 0) return e->case_.results.items[i];
            e->case_.conds.items[n] = c;
            e->case_.results.items[n++] = e->case_.results.items[i];
            if (eng_expr_is_bool_const(c, true)) break;
        }
        e->case_.conds.count = e->case_.results.count = n;
        return n == 0 ? e->case_.else_result : e;
    }
    default:
        return e;
    }
}

/* Post-order so that folded children can fold their parent. */
static sql_bexpr *fold_rec(sql_plan_ctx *ctx, sql_bexpr *e)
{
    if (!e) return e;
    switch (e->kind) {
    case SQL_BEXPR_OP:
        e->op.args[0] = fold_rec(ctx, e->op.args[0]);
        if (e->op.args[1]) e->op.args[1] = fold_rec(ctx, e->op.args[1]);
        break;
    case SQL_BEXPR_FUNC:
        for (uint32_t i = 0; i < e->func.args.count; i++)
            e->func.args.items[i] = fold_rec(ctx, e->func.args.items[i]);
        break;
    case SQL_BEXPR_CASE:
        for (uint32_t i = 0; i < e->case_.conds.count; i++) {
            e->case_.conds.items[i] = fold_rec(ctx, e->case_.conds.items[i]);
            e->case_.results.items[i] = fold_rec(ctx, e->case_.results.items[i]);
        }
        e->case_.else_result = fold_rec(ctx, e->case_.else_result);
        break;
    case SQL_BEXPR_CAST:
        e->cast.arg = fold_rec(ctx, e->cast.arg);
        break;
    case SQL_BEXPR_IN_LIST:
        e->in_list.arg = fold_rec(ctx, e->in_list.arg);
        for (uint32_t i = 0; i < e->in_list.list.count; i++)
            e->in_list.list.items[i] = fold_rec(ctx, e->in_list.list.items[i]);
        break;
    case SQL_BEXPR_IS_NULL:
        e->is_null.arg = fold_rec(ctx, e->is_null.arg);
        break;
    case SQL_BEXPR_SUBQUERY:
        if (e->subquery.left) e->subquery.left = fold_rec(ctx, e->subquery.left);
        eng_opt_fold_plan(ctx, &e->subquery.plan);
        break;
    default:
        break;
    }
    sql_bexpr *r = fold_node(ctx, e);
    return r ? r : e;
}

sql_bexpr *eng_opt_fold_expr(sql_plan_ctx *ctx, sql_bexpr *e)
{
    return fold_rec(ctx, e);
}

void eng_opt_fold_plan(sql_plan_ctx *ctx, sql_lop **slot)
{
    sql_lop *op = *slot;
    if (!op) return;
    if (op->left) eng_opt_fold_plan(ctx, &op->left);
    if (op->right) eng_opt_fold_plan(ctx, &op->right);
    switch (op->kind) {
    case SQL_LOP_FILTER:
        op->filter.pred = fold_rec(ctx, op->filter.pred);
        if (eng_expr_is_bool_const(op->filter.pred, true)) *slot = op->left;
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++)
            op->project.items[i].expr = fold_rec(ctx, op->project.items[i].expr);
        break;
    case SQL_LOP_JOIN:
        op->join.cond = fold_rec(ctx, op->join.cond);
        if (eng_expr_is_bool_const(op->join.cond, true)) op->join.cond = NULL;
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            op->aggregate.groups[i].expr = fold_rec(ctx, op->aggregate.groups[i].expr);
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            op->aggregate.aggs[i].arg = fold_rec(ctx, op->aggregate.aggs[i].arg);
        break;
    case SQL_LOP_SORT:
        for (uint32_t i = 0; i < op->sort.count; i++)
            op->sort.keys[i].expr = fold_rec(ctx, op->sort.keys[i].expr);
        break;
    default:
        break;
    }
}
