/*
 * plan.c — the plan context (column ids), node constructors, structural
 * equality and copying of bound expressions.
 *
 * The printer lives in plan_print.c.
 */
#include "sql/plan.h"

#include <string.h>

static const char *const join_kind_names[SQL_JOINK_COUNT] = {
#define SQL_JOIN_KIND_NAME(id, name) name,
    SQL_JOIN_KIND_LIST(SQL_JOIN_KIND_NAME)
#undef SQL_JOIN_KIND_NAME
};

const char *sql_join_kind_name(sql_join_kind k)
{
    return (unsigned)k < SQL_JOINK_COUNT ? join_kind_names[k] : "?";
}

sql_plan_ctx *sql_plan_ctx_new(sql_arena *arena)
{
    sql_plan_ctx *ctx = sql_arena_alloc(arena, sizeof(*ctx));
    if (!ctx) return NULL;
    ctx->arena = arena;
    return ctx;
}

sql_colid sql_plan_new_col(sql_plan_ctx *ctx, sto_type type, bool nullable, const char *name)
{
    if (ctx->ncols + 1 >= ctx->cap) {
        /* The arena cannot grow a block in place: copy into one twice the
         * size. The old arrays stay in the arena; the total waste is bounded
         * by the final size. */
        uint32_t cap = ctx->cap ? ctx->cap * 2 : 64;
        sql_col_info *cols = sql_arena_alloc(ctx->arena, cap * sizeof(*cols));
        if (!cols) return 0;
        if (ctx->cols) memcpy(cols, ctx->cols, (ctx->ncols + 1) * sizeof(*cols));
        ctx->cols = cols;
        ctx->cap = cap;
    }
    sql_colid id = ++ctx->ncols;
    ctx->cols[id].type = type;
    ctx->cols[id].nullable = nullable;
    ctx->cols[id].name = name ? name : "?column?";
    return id;
}

sql_bexpr *sql_bexpr_new(sql_plan_ctx *ctx, sql_bexpr_kind kind, sto_type type, bool nullable,
                         int pos)
{
    sql_bexpr *e = sql_arena_alloc(ctx->arena, sizeof(*e));
    if (!e) return NULL;
    e->kind = kind;
    e->type = type;
    e->nullable = nullable;
    e->pos = pos;
    return e;
}

sql_bexpr *sql_bexpr_column(sql_plan_ctx *ctx, sql_colid id, int pos)
{
    const sql_col_info *c = sql_plan_col(ctx, id);
    sql_bexpr *e = sql_bexpr_new(ctx, SQL_BEXPR_COLUMN, c->type, c->nullable, pos);
    if (e) e->column = id;
    return e;
}

sql_bexpr *sql_bexpr_op(sql_plan_ctx *ctx, sql_op op, sto_type type, sql_bexpr *a, sql_bexpr *b,
                        int pos)
{
    if (!a || (sql_op_arity(op) == 2 && !b)) return NULL;
    bool nullable = a->nullable || (b && b->nullable);
    sql_bexpr *e = sql_bexpr_new(ctx, SQL_BEXPR_OP, type, nullable, pos);
    if (!e) return NULL;
    e->op.op = op;
    e->op.args[0] = a;
    e->op.args[1] = b;
    return e;
}

sql_bexpr *sql_bexpr_null(sql_plan_ctx *ctx, sto_type type, int pos)
{
    sql_bexpr *e = sql_bexpr_new(ctx, SQL_BEXPR_CONST, type, true, pos);
    if (e) e->value.is_null = true;
    return e;
}

static bool copy_list(sql_plan_ctx *ctx, sql_bexpr_list *dst, const sql_bexpr_list *src)
{
    dst->count = src->count;
    dst->items = NULL;
    if (!src->count) return true;
    dst->items = sql_arena_alloc(ctx->arena, src->count * sizeof(*dst->items));
    if (!dst->items) return false;
    for (uint32_t i = 0; i < src->count; i++) {
        dst->items[i] = sql_bexpr_copy(ctx, src->items[i]);
        if (!dst->items[i]) return false;
    }
    return true;
}

sql_bexpr *sql_bexpr_copy(sql_plan_ctx *ctx, const sql_bexpr *e)
{
    if (!e) return NULL;
    sql_bexpr *c = sql_arena_alloc(ctx->arena, sizeof(*c));
    if (!c) return NULL;
    *c = *e;
    bool ok = true;
    switch (e->kind) {
    case SQL_BEXPR_CONST:
    case SQL_BEXPR_COLUMN:
    case SQL_BEXPR_PARAM:
        break;
    case SQL_BEXPR_OP:
        c->op.args[0] = sql_bexpr_copy(ctx, e->op.args[0]);
        ok = c->op.args[0] != NULL;
        if (ok && e->op.args[1]) {
            c->op.args[1] = sql_bexpr_copy(ctx, e->op.args[1]);
            ok = c->op.args[1] != NULL;
        }
        break;
    case SQL_BEXPR_FUNC:
        ok = copy_list(ctx, &c->func.args, &e->func.args);
        break;
    case SQL_BEXPR_CASE:
        ok = copy_list(ctx, &c->case_.conds, &e->case_.conds) &&
             copy_list(ctx, &c->case_.results, &e->case_.results) &&
             (c->case_.else_result = sql_bexpr_copy(ctx, e->case_.else_result)) != NULL;
        break;
    case SQL_BEXPR_CAST:
        ok = (c->cast.arg = sql_bexpr_copy(ctx, e->cast.arg)) != NULL;
        break;
    case SQL_BEXPR_IN_LIST:
        ok = (c->in_list.arg = sql_bexpr_copy(ctx, e->in_list.arg)) != NULL &&
             copy_list(ctx, &c->in_list.list, &e->in_list.list);
        break;
    case SQL_BEXPR_IS_NULL:
        ok = (c->is_null.arg = sql_bexpr_copy(ctx, e->is_null.arg)) != NULL;
        break;
    case SQL_BEXPR_SUBQUERY:
        if (e->subquery.left) {
            ok = (c->subquery.left = sql_bexpr_copy(ctx, e->subquery.left)) != NULL;
        }
        break;
    case SQL_BEXPR_KIND_COUNT:
        break;
    }
    return ok ? c : NULL;
}

static bool type_equal(sto_type a, sto_type b)
{
    return a.id == b.id && a.precision == b.precision && a.scale == b.scale && a.length == b.length;
}

static bool value_equal(sto_type t, const sto_value *a, const sto_value *b)
{
    if (a->is_null || b->is_null) return a->is_null == b->is_null;
    switch ((sto_type_id)t.id) {
    case STO_TYPE_DOUBLE:
        return a->v.f64 == b->v.f64;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        return sto_str_eq(&a->v.str, &b->v.str);
    default:
        return a->v.i64 == b->v.i64;
    }
}

typedef bool (*same_col_fn)(sql_colid a, sql_colid b, const void *arg);

static bool list_equal(const sql_bexpr_list *a, const sql_bexpr_list *b, same_col_fn same_col,
                       const void *arg)
{
    if (a->count != b->count) return false;
    for (uint32_t i = 0; i < a->count; i++) {
        if (!sql_bexpr_equal_as(a->items[i], b->items[i], same_col, arg)) return false;
    }
    return true;
}

bool sql_bexpr_equal(const sql_bexpr *a, const sql_bexpr *b)
{
    return sql_bexpr_equal_as(a, b, NULL, NULL);
}

bool sql_bexpr_equal_as(const sql_bexpr *a, const sql_bexpr *b, same_col_fn same_col,
                        const void *arg)
{
    if (!a || !b) return a == b;
    if (a == b && !same_col) return true;
    if (a->kind != b->kind || !type_equal(a->type, b->type)) return false;
    switch (a->kind) {
    case SQL_BEXPR_CONST:
        return value_equal(a->type, &a->value, &b->value);
    case SQL_BEXPR_COLUMN:
        return same_col ? same_col(a->column, b->column, arg) : a->column == b->column;
    case SQL_BEXPR_PARAM:
        return a->param == b->param;
    case SQL_BEXPR_OP:
        return a->op.op == b->op.op &&
               sql_bexpr_equal_as(a->op.args[0], b->op.args[0], same_col, arg) &&
               sql_bexpr_equal_as(a->op.args[1], b->op.args[1], same_col, arg);
    case SQL_BEXPR_FUNC:
        return a->func.id == b->func.id && list_equal(&a->func.args, &b->func.args, same_col, arg);
    case SQL_BEXPR_CASE:
        return list_equal(&a->case_.conds, &b->case_.conds, same_col, arg) &&
               list_equal(&a->case_.results, &b->case_.results, same_col, arg) &&
               sql_bexpr_equal_as(a->case_.else_result, b->case_.else_result, same_col, arg);
    case SQL_BEXPR_CAST:
        return sql_bexpr_equal_as(a->cast.arg, b->cast.arg, same_col, arg);
    case SQL_BEXPR_IN_LIST:
        return a->in_list.negated == b->in_list.negated &&
               sql_bexpr_equal_as(a->in_list.arg, b->in_list.arg, same_col, arg) &&
               list_equal(&a->in_list.list, &b->in_list.list, same_col, arg);
    case SQL_BEXPR_IS_NULL:
        return a->is_null.negated == b->is_null.negated &&
               sql_bexpr_equal_as(a->is_null.arg, b->is_null.arg, same_col, arg);
    case SQL_BEXPR_SUBQUERY:
        /* Two subqueries are the same only if they are the same node: each
         * one written is bound to its own subplan. */
        return false;
    case SQL_BEXPR_KIND_COUNT:
        break;
    }
    return false;
}

static bool walk_list(sql_bexpr_list *l, sql_walk (*fn)(sql_bexpr **, void *), void *arg)
{
    for (uint32_t i = 0; i < l->count; i++) {
        if (!sql_bexpr_walk(&l->items[i], fn, arg)) return false;
    }
    return true;
}

bool sql_bexpr_walk(sql_bexpr **slot, sql_walk (*fn)(sql_bexpr **slot, void *arg), void *arg)
{
    if (!*slot) return true;
    sql_walk w = fn(slot, arg);
    if (w == SQL_WALK_STOP) return false;
    if (w == SQL_WALK_SKIP) return true;
    sql_bexpr *e = *slot;
    switch (e->kind) {
    case SQL_BEXPR_OP:
        return sql_bexpr_walk(&e->op.args[0], fn, arg) && sql_bexpr_walk(&e->op.args[1], fn, arg);
    case SQL_BEXPR_FUNC:
        return walk_list(&e->func.args, fn, arg);
    case SQL_BEXPR_CASE:
        for (uint32_t i = 0; i < e->case_.conds.count; i++) {
            if (!sql_bexpr_walk(&e->case_.conds.items[i], fn, arg) ||
                !sql_bexpr_walk(&e->case_.results.items[i], fn, arg))
                return false;
        }
        return sql_bexpr_walk(&e->case_.else_result, fn, arg);
    case SQL_BEXPR_CAST:
        return sql_bexpr_walk(&e->cast.arg, fn, arg);
    case SQL_BEXPR_IN_LIST:
        return sql_bexpr_walk(&e->in_list.arg, fn, arg) && walk_list(&e->in_list.list, fn, arg);
    case SQL_BEXPR_IS_NULL:
        return sql_bexpr_walk(&e->is_null.arg, fn, arg);
    case SQL_BEXPR_SUBQUERY:
        return sql_bexpr_walk(&e->subquery.left, fn, arg);
    default:
        return true;
    }
}

sql_lop *sql_lop_new(sql_plan_ctx *ctx, sql_lop_kind kind, sql_lop *left, sql_lop *right,
                     uint32_t nout)
{
    sql_lop *op = sql_arena_alloc(ctx->arena, sizeof(*op));
    if (!op) return NULL;
    op->kind = kind;
    op->left = left;
    op->right = right;
    op->nout = nout;
    /* Never NULL, even for zero columns (SELECT 1 WHERE true reads no
     * table): callers copy out[] with memcpy, which must not see NULL. */
    op->out = sql_arena_alloc(ctx->arena, (nout ? nout : 1) * sizeof(*op->out));
    if (!op->out) return NULL;
    return op;
}
