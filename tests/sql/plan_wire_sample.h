/*
 * plan_wire_sample.h — a plan that holds every operator kind (EXCHANGE of
 * each kind included), every expression kind, constants of every type,
 * parameters and a shared subplan: the input of tests/sql/test_plan_wire.c
 * and the seed of the fuzz target tests/sql/fuzz_plan_wire.c. build()
 * makes it in a fresh arena (the static `arena`); the caller destroys it.
 */
#ifndef RACKDB_TESTS_PLAN_WIRE_SAMPLE_H
#define RACKDB_TESTS_PLAN_WIRE_SAMPLE_H

#include <stdint.h>
#include <string.h>

#include "sql/plan.h"

static sql_arena *arena;
static sql_plan_ctx *ctx;

static sql_bexpr *constant(sto_type t, int64_t i, double d, const char *s)
{
    sql_bexpr *e = sql_bexpr_new(ctx, SQL_BEXPR_CONST, t, false, 7);
    if (t.id == STO_TYPE_DOUBLE)
        e->value.v.f64 = d;
    else if (t.id == STO_TYPE_CHAR || t.id == STO_TYPE_VARCHAR)
        e->value.v.str = sto_str_make(s, (uint32_t)strlen(s));
    else
        e->value.v.i64 = i;
    return e;
}

static sql_bexpr *col(sql_colid id)
{
    return sql_bexpr_column(ctx, id, 3);
}

static sql_bexpr_list list2(sql_bexpr *a, sql_bexpr *b)
{
    sql_bexpr_list l = {2, sql_arena_alloc(arena, 2 * sizeof(sql_bexpr *))};
    l.items[0] = a;
    l.items[1] = b;
    return l;
}

static sql_lop *get(const char *table, sql_colid a, sql_colid b)
{
    sql_lop *g = sql_lop_new(ctx, SQL_LOP_GET, NULL, NULL, 2);
    g->out[0] = a;
    g->out[1] = b;
    g->get.table_name = table;
    g->get.alias = "t_alias";
    g->get.columns = sql_arena_alloc(arena, 2 * sizeof(uint32_t));
    g->get.columns[0] = 0;
    g->get.columns[1] = 1;
    g->get.rows = 1234;
    g->est_rows = 1234.5;
    return g;
}

/* A plan with every kind of operator and expression in it. */
__attribute__((unused)) static sql_plan *build(void)
{
    arena = sql_arena_create();
    ctx = sql_plan_ctx_new(arena);
    sto_type i32 = sto_type_make(STO_TYPE_INTEGER), dec = sto_type_decimal(15, 2);
    sto_type vc = sto_type_string(STO_TYPE_VARCHAR, 25), boolean = sto_type_make(STO_TYPE_BOOLEAN);
    sql_colid a = sql_plan_new_col(ctx, i32, false, "a");
    sql_colid b = sql_plan_new_col(ctx, dec, true, "b");
    sql_colid c = sql_plan_new_col(ctx, i32, false, "c");
    sql_colid d = sql_plan_new_col(ctx, vc, true, "d");
    sql_colid p = sql_plan_new_col(ctx, dec, false, "p");
    sql_colid mark = sql_plan_new_col(ctx, boolean, true, "mark");
    sql_colid sum = sql_plan_new_col(ctx, dec, true, "sum");
    sql_colid cnt = sql_plan_new_col(ctx, sto_type_make(STO_TYPE_BIGINT), false, "count");
    sql_colid v1 = sql_plan_new_col(ctx, i32, false, "column1");
    sql_colid u = sql_plan_new_col(ctx, i32, false, "u");
    ctx->nparams = 2;
    ctx->param_types = sql_arena_alloc(arena, 2 * sizeof(sto_type));
    ctx->param_types[0] = i32;
    ctx->param_types[1] = vc;

    /* a subplan referenced from two expressions */
    sql_lop *sub = get("inner_t", c, d);
    sql_bexpr *exists = sql_bexpr_new(ctx, SQL_BEXPR_SUBQUERY, boolean, false, 9);
    exists->subquery.kind = SQL_SUBQ_EXISTS;
    exists->subquery.plan = sub;
    exists->subquery.nouter = 1;
    exists->subquery.outer = sql_arena_alloc(arena, sizeof(sql_colid));
    exists->subquery.outer[0] = a;
    sql_bexpr *any = sql_bexpr_new(ctx, SQL_BEXPR_SUBQUERY, boolean, true, 10);
    any->subquery.kind = SQL_SUBQ_ANY;
    any->subquery.cmp = SQL_OP_EQ;
    any->subquery.left = col(a);
    any->subquery.plan = sub;
    any->subquery.col = c;

    sql_lop *left = get("lineitem", a, b);
    sql_bexpr *in = sql_bexpr_new(ctx, SQL_BEXPR_IN_LIST, boolean, false, 4);
    in->in_list.arg = col(a);
    in->in_list.list = list2(constant(i32, -5, 0, NULL), sql_bexpr_null(ctx, i32, 0));
    in->in_list.negated = true;
    sql_bexpr *isnull = sql_bexpr_new(ctx, SQL_BEXPR_IS_NULL, boolean, false, 5);
    isnull->is_null.arg = col(b);
    sql_bexpr *pred = sql_bexpr_op(ctx, SQL_OP_AND, boolean, in,
                                   sql_bexpr_op(ctx, SQL_OP_OR, boolean, isnull, exists, 0), 0);
    sql_lop *filter = sql_lop_new(ctx, SQL_LOP_FILTER, left, NULL, 2);
    filter->out[0] = a;
    filter->out[1] = b;
    filter->filter.pred = sql_bexpr_op(ctx, SQL_OP_AND, boolean, pred, any, 0);

    sql_lop *shuffle = sql_lop_new(ctx, SQL_LOP_EXCHANGE, filter, NULL, 2);
    memcpy(shuffle->out, filter->out, 2 * sizeof(sql_colid));
    shuffle->exchange.kind = SQL_EXCH_SHUFFLE;
    shuffle->exchange.nkeys = 1;
    shuffle->exchange.keys = sql_arena_alloc(arena, sizeof(sql_bexpr *));
    shuffle->exchange.keys[0] = col(a);
    shuffle->exchange.id = 1;

    sql_lop *right = get("orders", c, d);
    sql_lop *bcast = sql_lop_new(ctx, SQL_LOP_EXCHANGE, right, NULL, 2);
    memcpy(bcast->out, right->out, 2 * sizeof(sql_colid));
    bcast->exchange.kind = SQL_EXCH_BROADCAST;
    bcast->exchange.id = 2;

    sql_lop *join = sql_lop_new(ctx, SQL_LOP_JOIN, shuffle, bcast, 3);
    join->out[0] = a;
    join->out[1] = b;
    join->out[2] = mark;
    join->join.kind = SQL_JOINK_MARK;
    join->join.cond = sql_bexpr_op(ctx, SQL_OP_EQ, boolean, col(a), col(c), 11);
    join->join.mark = mark;
    join->phys.algorithm = 2;
    join->phys.build_left = true;
    join->est_rows = 99.25;

    /* CASE, CAST, FUNC, PARAM, constants of every type in a projection */
    sql_bexpr *cs = sql_bexpr_new(ctx, SQL_BEXPR_CASE, dec, true, 12);
    cs->case_.conds =
        list2(col(mark), sql_bexpr_op(ctx, SQL_OP_LT, boolean, col(a),
                                      sql_bexpr_new(ctx, SQL_BEXPR_PARAM, i32, true, 13), 0));
    cs->case_.conds.items[1]->op.args[1]->param = 1;
    sql_bexpr *cast = sql_bexpr_new(ctx, SQL_BEXPR_CAST, dec, false, 14);
    cast->cast.arg = col(a);
    cs->case_.results = list2(col(b), cast);
    cs->case_.else_result = constant(dec, 123456, 0, NULL);
    sql_bexpr *fn = sql_bexpr_new(ctx, SQL_BEXPR_FUNC, vc, true, 15);
    fn->func.id = SQL_FUNC_COUNT - 1;
    fn->func.args = list2(constant(vc, 0, 0, "a string longer than twelve bytes"),
                          constant(sto_type_string(STO_TYPE_CHAR, 3), 0, 0, "ab"));
    sql_lop *proj = sql_lop_new(ctx, SQL_LOP_PROJECT, join, NULL, 2);
    proj->project.count = 2;
    proj->project.items = sql_arena_alloc(arena, 2 * sizeof(sql_proj_item));
    proj->project.items[0] = (sql_proj_item){col(a), a};
    proj->project.items[1] = (sql_proj_item){cs, p};
    proj->out[0] = a;
    proj->out[1] = p;
    (void)fn;

    sql_lop *agg = sql_lop_new(ctx, SQL_LOP_AGGREGATE, proj, NULL, 3);
    agg->aggregate.ngroups = 1;
    agg->aggregate.groups = sql_arena_alloc(arena, sizeof(sql_proj_item));
    agg->aggregate.groups[0] = (sql_proj_item){col(a), a};
    agg->aggregate.naggs = 2;
    agg->aggregate.aggs = sql_arena_alloc(arena, 2 * sizeof(sql_agg_item));
    agg->aggregate.aggs[0] = (sql_agg_item){SQL_AGG_SUM, true, col(p), sum};
    agg->aggregate.aggs[1] = (sql_agg_item){SQL_AGG_COUNT_STAR, false, NULL, cnt};
    agg->out[0] = a;
    agg->out[1] = sum;
    agg->out[2] = cnt;

    /* VALUES with every constant type, UNIONed with a projection of agg */
    sql_lop *vals = sql_lop_new(ctx, SQL_LOP_VALUES, NULL, NULL, 1);
    vals->out[0] = v1;
    vals->values.nrows = 8;
    vals->values.rows = sql_arena_alloc(arena, 8 * sizeof(sql_bexpr_list));
    sql_bexpr *consts[8] = {
        constant(boolean, 1, 0, NULL),
        constant(i32, 2147483647, 0, NULL),
        constant(sto_type_make(STO_TYPE_BIGINT), INT64_MIN, 0, NULL),
        constant(dec, -99999, 0, NULL),
        constant(sto_type_make(STO_TYPE_DOUBLE), 0, 0.1 + 0.2, NULL),
        constant(sto_type_make(STO_TYPE_DATE), 10000, 0, NULL),
        constant(sto_type_string(STO_TYPE_CHAR, 1), 0, 0, ""),
        fn,
    };
    for (int r = 0; r < 8; r++) {
        vals->values.rows[r].count = 1;
        vals->values.rows[r].items = sql_arena_alloc(arena, sizeof(sql_bexpr *));
        vals->values.rows[r].items[0] = consts[r];
    }
    sql_lop *pa = sql_lop_new(ctx, SQL_LOP_PROJECT, agg, NULL, 1);
    pa->project.count = 1;
    pa->project.items = sql_arena_alloc(arena, sizeof(sql_proj_item));
    pa->project.items[0] = (sql_proj_item){col(a), a};
    pa->out[0] = a;
    sql_lop *setop = sql_lop_new(ctx, SQL_LOP_SETOP, pa, vals, 1);
    setop->out[0] = u;
    setop->setop.op = SQL_SETOP_EXCEPT;
    setop->setop.all = true;

    sql_lop *dist = sql_lop_new(ctx, SQL_LOP_DISTINCT, setop, NULL, 1);
    dist->out[0] = u;
    sql_lop *sort = sql_lop_new(ctx, SQL_LOP_SORT, dist, NULL, 1);
    sort->out[0] = u;
    sort->sort.count = 1;
    sort->sort.keys = sql_arena_alloc(arena, sizeof(sql_sort_key));
    sort->sort.keys[0] = (sql_sort_key){col(u), true, true};
    sql_lop *gather = sql_lop_new(ctx, SQL_LOP_EXCHANGE, sort, NULL, 1);
    gather->out[0] = u;
    gather->exchange.kind = SQL_EXCH_GATHER;
    gather->exchange.id = 3;
    sql_lop *limit = sql_lop_new(ctx, SQL_LOP_LIMIT, gather, NULL, 1);
    limit->out[0] = u;
    limit->limit.limit = 10;
    limit->limit.offset = 3;

    sql_plan *plan = sql_arena_alloc(arena, sizeof(*plan));
    plan->ctx = ctx;
    plan->root = limit;
    plan->ncols = 1;
    plan->cols = sql_arena_alloc(arena, sizeof(sql_colid));
    plan->cols[0] = u;
    plan->names = sql_arena_alloc(arena, sizeof(char *));
    plan->names[0] = "result";
    return sql_arena_failed(arena) ? NULL : plan;
}

#endif
