/*
 * bind_query.c — the binder's entry point and query levels: a SELECT
 * (bind_select.c), VALUES or a set operation, with its WITH list, and the
 * last pass that settles parameter types.
 *
 * Set operations bind both sides as levels of their own, cast each side's
 * columns to the common type under a PROJECT when needed, and produce fresh
 * ids; the output names are the left side's.
 */
#include <stdio.h>
#include <string.h>

#include "sql/bind_int.h"

bind_scope *sql_bind_new_scope(binder *b, bind_scope *parent, bool parent_hidden, bind_cte *ctes)
{
    bind_scope *s = sql_arena_alloc(b->arena, sizeof(*s));
    if (!s) return NULL;
    s->parent = parent;
    s->parent_hidden = parent_hidden;
    s->ctes = ctes;
    s->clause = CLAUSE_FROM;
    return s;
}

sql_lop *sql_bind_unary_op(binder *b, sql_lop_kind kind, sql_lop *input)
{
    sql_lop *op = sql_lop_new(b->ctx, kind, input, NULL, input->nout);
    if (op) memcpy(op->out, input->out, input->nout * sizeof(sql_colid));
    return op;
}

/* ------------------------------------------------------------ VALUES -- */

static sto_status bind_values(binder *b, bind_scope *s, const sql_query *q, bound_query *out)
{
    uint32_t nrows = (uint32_t)q->values.count;
    uint32_t ncols = (uint32_t)q->values.items[0]->count;
    s->clause = CLAUSE_VALUES;
    sql_lop *v = sql_lop_new(b->ctx, SQL_LOP_VALUES, NULL, NULL, ncols);
    if (!v) return sto_error_oom();
    v->values.nrows = nrows;
    v->values.rows = sql_arena_alloc(b->arena, nrows * sizeof(sql_bexpr_list));
    if (!v->values.rows) return sto_error_oom();
    for (uint32_t r = 0; r < nrows; r++) {
        const sql_expr_list *row = q->values.items[r];
        if ((uint32_t)row->count != ncols)
            return sto_error_at(STO_SYNTAX_ERROR, row->count ? row->items[0]->pos : q->pos,
                                "VALUES lists must all be the same length");
        if (!sql_bind_make_list(b, &v->values.rows[r], ncols)) return sto_error_oom();
        for (uint32_t c = 0; c < ncols; c++)
            STO_TRY(sql_bind_expr(b, s, row->items[c], &v->values.rows[r].items[c]));
    }
    const char **names = sql_arena_alloc(b->arena, (ncols ? ncols : 1) * sizeof(*names));
    if (!names) return sto_error_oom();
    for (uint32_t c = 0; c < ncols; c++) {
        sto_type t = v->values.rows[0].items[c]->type;
        bool nullable = false;
        for (uint32_t r = 1; r < nrows; r++) {
            const sql_bexpr *x = v->values.rows[r].items[c];
            if (!sql_types_common(t, x->type, &t))
                return sto_error_at(STO_DATATYPE_MISMATCH, x->pos,
                                    "VALUES types %s and %s cannot be matched", sql_type_pg_name(t),
                                    sql_type_pg_name(x->type));
        }
        if (t.id == BIND_TYPE_UNKNOWN) t = sto_type_string(STO_TYPE_VARCHAR, 0);
        for (uint32_t r = 0; r < nrows; r++) {
            STO_TRY(sql_types_coerce(b, &v->values.rows[r].items[c], t));
            nullable |= v->values.rows[r].items[c]->nullable;
        }
        char *name = sql_arena_alloc(b->arena, 24);
        if (!name) return sto_error_oom();
        snprintf(name, 24, "column%u", c + 1);
        names[c] = name;
        v->out[c] = sql_plan_new_col(b->ctx, t, nullable, name);
        if (!v->out[c]) return sto_error_oom();
    }
    out->root = v;
    out->ncols = ncols;
    out->cols = v->out;
    out->names = names;
    return STO_OK;
}

/* --------------------------------------------------------- set operations -- */

static const char *setop_name(sql_setop op)
{
    return op == SQL_SETOP_UNION ? "UNION" : op == SQL_SETOP_INTERSECT ? "INTERSECT" : "EXCEPT";
}

/* Whether column i of a set operation's side q is a bare NULL written in
 * its select list. PostgreSQL gives such a NULL the other side's type
 * (`SELECT NULL UNION SELECT 1` is an integer column), where a NULL
 * anywhere else would be text. */
static bool untyped_null(const sql_query *q, uint32_t i)
{
    if (q->kind != SQL_QUERY_SELECT || (int)i >= q->select.count) return false;
    for (int k = 0; k < q->select.count; k++)
        if (q->select.items[k]->expr->kind == SQL_EXPR_STAR) return false;
    const sql_expr *e = q->select.items[i]->expr;
    return e->kind == SQL_EXPR_LITERAL && e->lit.kind == SQL_LIT_NULL;
}

/* Casts the columns of side whose type differs from types[] under a new
 * PROJECT (one fresh id per column, so positions map one to one); the bare
 * NULLs of q become NULLs of the column's type. */
static sto_status cast_side(binder *b, bound_query *side, const sql_query *q, const sto_type *types)
{
    bool need = false;
    for (uint32_t i = 0; i < side->ncols && !need; i++) {
        sto_type t = sql_plan_col(b->ctx, side->cols[i])->type;
        need = t.id != types[i].id || t.scale != types[i].scale || untyped_null(q, i);
    }
    if (!need && side->root->nout == side->ncols) return STO_OK;
    sql_lop *p = sql_lop_new(b->ctx, SQL_LOP_PROJECT, side->root, NULL, side->ncols);
    if (!p) return sto_error_oom();
    p->project.count = side->ncols;
    p->project.items = sql_arena_alloc(b->arena, side->ncols * sizeof(sql_proj_item));
    if (!p->project.items) return sto_error_oom();
    for (uint32_t i = 0; i < side->ncols; i++) {
        sql_bexpr *x = untyped_null(q, i) ? sql_bexpr_null(b->ctx, types[i], 0)
                                          : sql_bexpr_column(b->ctx, side->cols[i], 0);
        if (!x) return sto_error_oom();
        if (x->kind == SQL_BEXPR_COLUMN) STO_TRY(sql_types_coerce(b, &x, types[i]));
        sql_colid id = x->kind == SQL_BEXPR_COLUMN
                           ? x->column
                           : sql_plan_new_col(b->ctx, x->type, x->nullable, side->names[i]);
        if (!id) return sto_error_oom();
        p->project.items[i].expr = x;
        p->project.items[i].id = p->out[i] = id;
    }
    side->root = p;
    side->cols = p->out;
    return STO_OK;
}

static sto_status bind_setop(binder *b, bind_scope *s, bind_cte *env, const sql_query *q,
                             bound_query *out)
{
    bound_query l, r;
    STO_TRY(sql_bind_level(b, s, false, env, q->left, &l, NULL));
    STO_TRY(sql_bind_level(b, s, false, env, q->right, &r, NULL));
    if (l.ncols != r.ncols)
        return sto_error_at(STO_SYNTAX_ERROR, q->right->pos,
                            "each %s query must have the same number of columns",
                            setop_name(q->setop));
    uint32_t n = l.ncols;
    sto_type *types = sql_arena_alloc(b->arena, (n ? n : 1) * sizeof(*types));
    if (!types) return sto_error_oom();
    for (uint32_t i = 0; i < n; i++) {
        sto_type lt = sql_plan_col(b->ctx, l.cols[i])->type;
        sto_type rt = sql_plan_col(b->ctx, r.cols[i])->type;
        bool lnull = untyped_null(q->left, i), rnull = untyped_null(q->right, i);
        if (lnull && !rnull) lt = rt;
        if (rnull && !lnull) rt = lt;
        if (!sql_types_common(lt, rt, &types[i]))
            return sto_error_at(STO_DATATYPE_MISMATCH, q->right->pos,
                                "%s types %s and %s cannot be matched", setop_name(q->setop),
                                sql_type_pg_name(lt), sql_type_pg_name(rt));
    }
    STO_TRY(cast_side(b, &l, q->left, types));
    STO_TRY(cast_side(b, &r, q->right, types));
    sql_lop *op = sql_lop_new(b->ctx, SQL_LOP_SETOP, l.root, r.root, n);
    if (!op) return sto_error_oom();
    op->setop.op = q->setop;
    op->setop.all = q->all;
    for (uint32_t i = 0; i < n; i++) {
        bool nullable =
            sql_plan_col(b->ctx, l.cols[i])->nullable || sql_plan_col(b->ctx, r.cols[i])->nullable;
        op->out[i] = sql_plan_new_col(b->ctx, types[i], nullable, l.names[i]);
        if (!op->out[i]) return sto_error_oom();
    }
    out->root = op;
    out->ncols = n;
    out->cols = op->out;
    out->names = l.names;
    return STO_OK;
}

/* -------------------------------------------------------------- driver -- */

sto_status sql_bind_level(binder *b, bind_scope *parent, bool parent_hidden, bind_cte *ctes,
                          const sql_query *q, bound_query *out, bind_scope **scope_out)
{
    bind_cte *env = ctes;
    for (int i = 0; i < q->with.count; i++) {
        const sql_cte *def = q->with.items[i];
        for (int k = 0; k < i; k++) {
            if (strcmp(q->with.items[k]->name, def->name) == 0)
                return sto_error_at(STO_DUPLICATE_TABLE, def->pos,
                                    "WITH query name \"%s\" specified more than once", def->name);
        }
        bind_cte *c = sql_arena_alloc(b->arena, sizeof(*c));
        if (!c) return sto_error_oom();
        c->def = def;
        c->env = env;
        c->next = env;
        env = c;
    }
    bind_scope *s = sql_bind_new_scope(b, parent, parent_hidden, env);
    if (!s) return sto_error_oom();
    if (scope_out) *scope_out = s;
    switch (q->kind) {
    case SQL_QUERY_SELECT:
        return sql_bind_select(b, s, q, out);
    case SQL_QUERY_VALUES:
        STO_TRY(bind_values(b, s, q, out));
        return sql_bind_order_outputs(b, s->parent, q, out);
    case SQL_QUERY_SETOP:
        STO_TRY(bind_setop(b, s, env, q, out));
        return sql_bind_order_outputs(b, s->parent, q, out);
    }
    return sto_error(STO_INTERNAL_ERROR, "unknown query kind");
}

/* ------------------------------------------- finishing: parameter types -- */

static void finish_lop(sql_plan_ctx *ctx, sql_lop *op);

/* Parameters bound before their type was known take it now; anything still
 * unknown becomes VARCHAR. */
static sql_walk finish_node(sql_bexpr **slot, void *arg)
{
    sql_plan_ctx *ctx = arg;
    sql_bexpr *e = *slot;
    if (e->kind == SQL_BEXPR_PARAM) {
        sto_type *t = &ctx->param_types[e->param - 1];
        if (t->id == BIND_TYPE_UNKNOWN) *t = sto_type_string(STO_TYPE_VARCHAR, 0);
        e->type = *t;
    }
    if (e->type.id == BIND_TYPE_UNKNOWN) e->type = sto_type_string(STO_TYPE_VARCHAR, 0);
    if (e->kind == SQL_BEXPR_SUBQUERY) finish_lop(ctx, e->subquery.plan);
    return SQL_WALK_CONTINUE;
}

static void finish_expr(sql_plan_ctx *ctx, sql_bexpr *e)
{
    sql_bexpr_walk(&e, finish_node, ctx);
}

static void finish_list(sql_plan_ctx *ctx, sql_bexpr_list *l)
{
    for (uint32_t i = 0; i < l->count; i++)
        finish_expr(ctx, l->items[i]);
}

static void finish_lop(sql_plan_ctx *ctx, sql_lop *op)
{
    if (!op) return;
    switch (op->kind) {
    case SQL_LOP_FILTER:
        finish_expr(ctx, op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++)
            finish_expr(ctx, op->project.items[i].expr);
        break;
    case SQL_LOP_JOIN:
        finish_expr(ctx, op->join.cond);
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            finish_expr(ctx, op->aggregate.groups[i].expr);
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            finish_expr(ctx, op->aggregate.aggs[i].arg);
        break;
    case SQL_LOP_SORT:
        for (uint32_t i = 0; i < op->sort.count; i++)
            finish_expr(ctx, op->sort.keys[i].expr);
        break;
    case SQL_LOP_VALUES:
        for (uint32_t r = 0; r < op->values.nrows; r++)
            finish_list(ctx, &op->values.rows[r]);
        break;
    default:
        break;
    }
    finish_lop(ctx, op->left);
    finish_lop(ctx, op->right);
}

sto_status sql_bind_query(sql_arena *arena, const sql_catalog *catalog, const sql_query *query,
                          sql_plan **out)
{
    *out = NULL;
    binder b = {.arena = arena, .catalog = catalog};
    b.ctx = sql_plan_ctx_new(arena);
    if (!b.ctx) return sto_error_oom();
    bound_query bq;
    STO_TRY(sql_bind_level(&b, NULL, false, NULL, query, &bq, NULL));
    STO_TRY(sql_bind_oom(&b));
    finish_lop(b.ctx, bq.root);
    for (uint32_t i = 1; i <= b.ctx->ncols; i++) {
        if (b.ctx->cols[i].type.id == BIND_TYPE_UNKNOWN)
            b.ctx->cols[i].type = sto_type_string(STO_TYPE_VARCHAR, 0);
    }
    sql_plan *plan = sql_arena_alloc(arena, sizeof(*plan));
    if (!plan) return sto_error_oom();
    plan->ctx = b.ctx;
    plan->root = bq.root;
    plan->ncols = bq.ncols;
    plan->cols = bq.cols;
    plan->names = bq.names;
    *out = plan;
    return STO_OK;
}
