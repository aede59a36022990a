/*
 * test_plan.c — the logical plan's own machinery without the binder: column
 * ids, constructors, structural equality, copying, the expression walker
 * and the printer's exact format.
 */
#include <stdlib.h>
#include <string.h>

#include "sql/plan.h"
#include "test.h"

static sql_bexpr *int_const(sql_plan_ctx *ctx, int64_t v)
{
    sql_bexpr *e = sql_bexpr_new(ctx, SQL_BEXPR_CONST, sto_type_make(STO_TYPE_INTEGER), false, 0);
    if (e) e->value.v.i64 = v;
    return e;
}

static void test_ids(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan_ctx *ctx = sql_plan_ctx_new(a);
    REQUIRE(ctx != NULL);
    /* enough ids to make the table grow several times */
    for (uint32_t i = 1; i <= 1000; i++) {
        sql_colid id = sql_plan_new_col(ctx, sto_type_make(STO_TYPE_BIGINT), i % 2, "c");
        CHECK_EQ_INT(id, i);
    }
    CHECK_EQ_INT(ctx->ncols, 1000);
    CHECK(sql_plan_col(ctx, 7)->nullable);
    CHECK(!sql_plan_col(ctx, 8)->nullable);
    CHECK(sql_plan_col(ctx, 999)->type.id == STO_TYPE_BIGINT);
    sql_colid unnamed = sql_plan_new_col(ctx, sto_type_make(STO_TYPE_DATE), false, NULL);
    CHECK_STREQ(sql_plan_col(ctx, unnamed)->name, "?column?");
    sql_arena_destroy(a);
}

static sql_walk count_columns(sql_bexpr **slot, void *arg)
{
    if ((*slot)->kind == SQL_BEXPR_COLUMN) ++*(int *)arg;
    return SQL_WALK_CONTINUE;
}

typedef struct swap {
    sql_plan_ctx *ctx;
    sql_colid from;
} swap;

/* Replaces references to one column by the constant 7. */
static sql_walk column_to_seven(sql_bexpr **slot, void *arg)
{
    swap *s = arg;
    if ((*slot)->kind == SQL_BEXPR_COLUMN && (*slot)->column == s->from) {
        *slot = int_const(s->ctx, 7);
        return SQL_WALK_SKIP;
    }
    return SQL_WALK_CONTINUE;
}

static sql_walk stop_at_const(sql_bexpr **slot, void *arg)
{
    ++*(int *)arg;
    return (*slot)->kind == SQL_BEXPR_CONST ? SQL_WALK_STOP : SQL_WALK_CONTINUE;
}

static void test_expressions(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan_ctx *ctx = sql_plan_ctx_new(a);
    sto_type i32 = sto_type_make(STO_TYPE_INTEGER), b = sto_type_make(STO_TYPE_BOOLEAN);
    sql_colid x = sql_plan_new_col(ctx, i32, false, "x");
    sql_colid y = sql_plan_new_col(ctx, i32, true, "y");
    /* (x + y) > 3 AND y IS NOT NULL */
    sql_bexpr *sum = sql_bexpr_op(ctx, SQL_OP_ADD, i32, sql_bexpr_column(ctx, x, 1),
                                  sql_bexpr_column(ctx, y, 5), 3);
    sql_bexpr *gt = sql_bexpr_op(ctx, SQL_OP_GT, b, sum, int_const(ctx, 3), 7);
    sql_bexpr *isnull = sql_bexpr_new(ctx, SQL_BEXPR_IS_NULL, b, false, 0);
    REQUIRE(gt && isnull);
    isnull->is_null.arg = sql_bexpr_column(ctx, y, 20);
    isnull->is_null.negated = true;
    sql_bexpr *pred = sql_bexpr_op(ctx, SQL_OP_AND, b, gt, isnull, 12);
    REQUIRE(pred != NULL);
    CHECK(pred->nullable); /* y may be NULL */
    CHECK(!isnull->nullable);

    char *s = sql_bexpr_to_string(ctx, pred);
    CHECK_STREQ(s, "(((x#1 + y#2) > 3) AND (y#2 IS NOT NULL))");
    free(s);

    sql_bexpr *copy = sql_bexpr_copy(ctx, pred);
    REQUIRE(copy != NULL);
    CHECK(copy != pred && copy->op.args[0] != pred->op.args[0]);
    CHECK(sql_bexpr_equal(copy, pred));
    copy->op.args[0]->op.args[1]->value.v.i64 = 4;
    CHECK(!sql_bexpr_equal(copy, pred));

    int n = 0;
    CHECK(sql_bexpr_walk(&pred, count_columns, &n));
    CHECK_EQ_INT(n, 3);
    swap sw = {ctx, y};
    CHECK(sql_bexpr_walk(&pred, column_to_seven, &sw));
    s = sql_bexpr_to_string(ctx, pred);
    CHECK_STREQ(s, "(((x#1 + 7) > 3) AND (7 IS NOT NULL))");
    free(s);
    n = 0;
    CHECK(!sql_bexpr_walk(&pred, stop_at_const, &n));
    CHECK_EQ_INT(n, 5); /* AND, >, +, x, 7 */

    sql_bexpr *null = sql_bexpr_null(ctx, sto_type_decimal(15, 2), 0);
    s = sql_bexpr_to_string(ctx, null);
    CHECK_STREQ(s, "NULL::DECIMAL(15,2)");
    free(s);
    sql_arena_destroy(a);
}

/* A hand-built plan printed in the documented format. */
static void test_printer(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan_ctx *ctx = sql_plan_ctx_new(a);
    sto_type i32 = sto_type_make(STO_TYPE_INTEGER), b = sto_type_make(STO_TYPE_BOOLEAN);
    sql_lop *get = sql_lop_new(ctx, SQL_LOP_GET, NULL, NULL, 2);
    REQUIRE(get != NULL);
    get->get.table_name = "t";
    get->get.alias = "u";
    get->out[0] = sql_plan_new_col(ctx, i32, false, "a");
    get->out[1] = sql_plan_new_col(ctx, sto_type_string(STO_TYPE_VARCHAR, 10), true, "s");
    sql_lop *vals = sql_lop_new(ctx, SQL_LOP_VALUES, NULL, NULL, 1);
    REQUIRE(vals != NULL);
    vals->out[0] = sql_plan_new_col(ctx, i32, false, "column1");
    vals->values.nrows = 2;
    vals->values.rows = sql_arena_alloc(a, 2 * sizeof(sql_bexpr_list));
    for (int r = 0; r < 2; r++) {
        vals->values.rows[r].count = 1;
        vals->values.rows[r].items = sql_arena_alloc(a, sizeof(sql_bexpr *));
        vals->values.rows[r].items[0] = int_const(ctx, r + 1);
    }
    sql_lop *join = sql_lop_new(ctx, SQL_LOP_JOIN, get, vals, 3);
    REQUIRE(join != NULL);
    join->join.kind = SQL_JOINK_MARK;
    join->join.mark = sql_plan_new_col(ctx, b, true, "mark");
    join->join.cond = sql_bexpr_op(ctx, SQL_OP_EQ, b, sql_bexpr_column(ctx, get->out[0], 0),
                                   sql_bexpr_column(ctx, vals->out[0], 0), 0);
    join->out[0] = get->out[0];
    join->out[1] = get->out[1];
    join->out[2] = join->join.mark;
    sql_lop *sort = sql_lop_new(ctx, SQL_LOP_SORT, join, NULL, 3);
    memcpy(sort->out, join->out, 3 * sizeof(sql_colid));
    sort->sort.count = 1;
    sort->sort.keys = sql_arena_alloc(a, sizeof(sql_sort_key));
    sort->sort.keys[0].expr = sql_bexpr_column(ctx, get->out[1], 0);
    sort->sort.keys[0].desc = true;
    sort->sort.keys[0].nulls_first = true;
    sql_lop *limit = sql_lop_new(ctx, SQL_LOP_LIMIT, sort, NULL, 3);
    memcpy(limit->out, sort->out, 3 * sizeof(sql_colid));
    limit->limit.limit = 10;
    limit->limit.offset = 5;
    const char *names[] = {"a", "m"};
    sql_colid cols[] = {get->out[0], join->join.mark};
    sql_plan plan = {ctx, limit, 2, cols, names};
    char *s = sql_plan_to_string(&plan);
    CHECK_STREQ(s, "OUTPUT a=a#1:INTEGER, m=mark#4:BOOLEAN?\n"
                   "  LIMIT 10 OFFSET 5\n"
                   "    SORT s#2 DESC NULLS FIRST\n"
                   "      JOIN MARK (a#1 = column1#3) MARK mark#4:BOOLEAN?\n"
                   "        GET t AS u a#1:INTEGER, s#2:VARCHAR(10)?\n"
                   "        VALUES column1#3:INTEGER ROWS (1), (2)\n");
    free(s);
    CHECK_STREQ(sql_join_kind_name(SQL_JOINK_SINGLE), "SINGLE");
    sql_arena_destroy(a);
}

static void test_function_lists(void)
{
    sql_func f;
    sql_agg g;
    CHECK(sql_func_lookup("coalesce", &f) && f == SQL_FUNC_COALESCE);
    CHECK(sql_func_lookup("substr", &f) && f == SQL_FUNC_SUBSTRING);
    CHECK(!sql_func_lookup("like", &f));          /* internal: only from syntax */
    CHECK(!sql_func_lookup("date_add_days", &f)); /* internal */
    CHECK(!sql_func_lookup("nope", &f));
    CHECK_EQ_INT(sql_func_min_args(SQL_FUNC_SUBSTRING), 2);
    CHECK_EQ_INT(sql_func_max_args(SQL_FUNC_SUBSTRING), 3);
    CHECK_EQ_INT(sql_func_max_args(SQL_FUNC_COALESCE), -1);
    CHECK_STREQ(sql_func_name(SQL_FUNC_EXTRACT_YEAR), "extract year");
    CHECK(sql_agg_lookup("count", &g) && g == SQL_AGG_COUNT);
    CHECK(sql_agg_lookup("avg", &g) && g == SQL_AGG_AVG);
    CHECK(!sql_agg_lookup("coalesce", &g));
    CHECK_STREQ(sql_agg_name(SQL_AGG_COUNT_STAR), "count");
}

int main(void)
{
    RUN(test_function_lists);
    RUN(test_ids);
    RUN(test_expressions);
    RUN(test_printer);
    return TEST_REPORT();
}
