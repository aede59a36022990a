/*
 * test_bind.c — the binder end to end: SQL text → parse → bind → plan,
 * checked through the plan's structure and its printed form.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "bind_catalog.h"

static test_catalog cat;

/* Parses and runs every statement of sql against the test catalog (CREATE
 * VIEW / DROP VIEW change the view store, SELECTs are bound); *plan is the
 * last SELECT's plan, allocated in a. */
static sto_status bind_text(sql_arena *a, const char *sql, sql_plan **plan)
{
    sql_stmt_list *l;
    sql_catalog iface = tcat_iface(&cat);
    *plan = NULL;
    STO_TRY(sql_parse(a, sql, &l));
    for (int i = 0; i < l->count; i++) {
        const sql_stmt *s = l->items[i];
        if (s->kind == SQL_STMT_CREATE_VIEW) tcat_add_view(&cat, s);
        if (s->kind == SQL_STMT_DROP_VIEW) tcat_drop_view(&cat, s->drop.name);
        if (s->kind == SQL_STMT_SELECT) STO_TRY(sql_bind_query(a, &iface, s->query, plan));
    }
    return STO_OK;
}

/* Binds sql (which must succeed) in a; NULL after printing the error. */
static sql_plan *bind_ok(sql_arena *a, const char *sql)
{
    sql_plan *p = NULL;
    sto_status st = bind_text(a, sql, &p);
    if (st) {
        fprintf(stderr, "bind of %s failed: %s %s at %d\n", sql, st->sqlstate, st->message,
                st->position);
        sto_status_free(st);
        return NULL;
    }
    if (!p) fprintf(stderr, "no SELECT in %s\n", sql);
    return p;
}

/* Output column i has this name, type (as sto_type_format spells it) and
 * nullability. */
static void check_out(const sql_plan *p, uint32_t i, const char *name, const char *type,
                      bool nullable)
{
    if (i >= p->ncols) {
        fprintf(stderr, "no output column %u (of %u)\n", i, p->ncols);
        CHECK(0);
        return;
    }
    char buf[64];
    const sql_col_info *c = sql_plan_col(p->ctx, p->cols[i]);
    sto_type_format(c->type, buf, sizeof(buf));
    CHECK_STREQ(p->names[i], name);
    CHECK_STREQ(buf, type);
    if (c->nullable != nullable) fprintf(stderr, "column %s: nullable %d\n", name, c->nullable);
    CHECK(c->nullable == nullable);
}

/* The printed plan contains every one of the NULL-terminated needles. */
static void check_plan_has(const sql_plan *p, const char *const *needles)
{
    char *s = sql_plan_to_string(p);
    REQUIRE(s != NULL);
    for (; *needles; needles++) {
        if (!strstr(s, *needles)) {
            fprintf(stderr, "plan lacks \"%s\":\n%s", *needles, s);
            CHECK(0);
        }
    }
    free(s);
}

static const sql_lop *find_op(const sql_lop *op, sql_lop_kind kind)
{
    if (!op) return NULL;
    if (op->kind == kind) return op;
    const sql_lop *l = find_op(op->left, kind);
    return l ? l : find_op(op->right, kind);
}

static char *read_query(int q)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tpch/queries/q%02d.sql", test_shared_dir(), q);
    return tcat_read_file(path);
}

/* Every TPC-H query binds and prints; a few facts per query. */
static void test_tpch_all_bind(void)
{
    for (int q = 1; q <= 22; q++) {
        char *text = read_query(q);
        REQUIRE(text != NULL);
        sql_arena *a = sql_arena_create();
        sql_plan *p = bind_ok(a, text);
        if (!p) fprintf(stderr, "q%02d did not bind\n", q);
        CHECK(p != NULL);
        if (p) {
            char *s = sql_plan_to_string(p);
            CHECK(s != NULL && strncmp(s, "OUTPUT ", 7) == 0);
            free(s);
            CHECK(p->ncols > 0 && p->root->nout == p->ncols);
            for (uint32_t i = 0; i < p->ncols; i++)
                CHECK(p->root->out[i] == p->cols[i]);
        }
        sql_arena_destroy(a);
        free(text);
    }
}

/* Each TPC-H plan printed equals tests/sql/plans/qNN.plan: a change to the
 * binder's output shows up as a diff here. RACKDB_UPDATE_GOLDEN=1 rewrites
 * the files instead (then review them with git diff). */
static void test_tpch_golden_plans(void)
{
    const char *src = getenv("RACKDB_SOURCE");
    if (!src) src = ".";
    bool update = getenv("RACKDB_UPDATE_GOLDEN") != NULL;
    for (int q = 1; q <= 22; q++) {
        char *text = read_query(q);
        REQUIRE(text != NULL);
        sql_arena *a = sql_arena_create();
        sql_plan *p = bind_ok(a, text);
        free(text);
        char *got = p ? sql_plan_to_string(p) : NULL;
        CHECK(got != NULL);
        char path[1024];
        snprintf(path, sizeof(path), "%s/tests/sql/plans/q%02d.plan", src, q);
        if (got && update) {
            FILE *f = fopen(path, "w");
            CHECK(f != NULL);
            if (f) {
                fputs(got, f);
                fclose(f);
            }
        } else if (got) {
            char *want = tcat_read_file(path);
            if (!want) fprintf(stderr, "missing %s\n", path);
            if (want && strcmp(want, got) != 0)
                fprintf(stderr, "q%02d plan differs from %s; got:\n%s", q, path, got);
            CHECK(want && strcmp(want, got) == 0);
            free(want);
        }
        free(got);
        sql_arena_destroy(a);
    }
}

static void test_tpch_q01_types(void)
{
    char *text = read_query(1);
    REQUIRE(text != NULL);
    sql_arena *a = sql_arena_create();
    sql_plan *p = bind_ok(a, text);
    free(text);
    if (p) {
        CHECK_EQ_INT(p->ncols, 10);
        check_out(p, 0, "l_returnflag", "CHAR(1)", false);
        check_out(p, 2, "sum_qty", "DECIMAL(18,2)", false);
        check_out(p, 4, "sum_disc_price", "DECIMAL(18,4)", false);
        check_out(p, 5, "sum_charge", "DECIMAL(18,6)", false);
        check_out(p, 6, "avg_qty", "DOUBLE", false);
        check_out(p, 9, "count_order", "BIGINT", false);
        /* date '1998-12-01' - interval '90' day folded at bind time. */
        static const char *const needles[] = {"FILTER (l_shipdate#11 <= DATE '1998-09-02')",
                                              "count(*)", "SORT l_returnflag#9 ASC NULLS LAST",
                                              NULL};
        check_plan_has(p, needles);
        const sql_lop *agg = find_op(p->root, SQL_LOP_AGGREGATE);
        REQUIRE(agg != NULL);
        CHECK_EQ_INT(agg->aggregate.ngroups, 2);
        CHECK_EQ_INT(agg->aggregate.naggs, 8);
        CHECK(agg->aggregate.aggs[7].func == SQL_AGG_COUNT_STAR);
    }
    sql_arena_destroy(a);
}

static void test_tpch_facts(void)
{
    sql_arena *a = sql_arena_create();
    char *text;
    sql_plan *p;

    /* q08: decimal / decimal is DOUBLE. */
    text = read_query(8);
    p = bind_ok(a, text);
    free(text);
    if (p) {
        check_out(p, 0, "o_year", "INTEGER", false);
        check_out(p, 1, "mkt_share", "DOUBLE", true);
    }
    /* q13: derived-table column aliases; count is BIGINT. */
    text = read_query(13);
    p = bind_ok(a, text);
    free(text);
    if (p) {
        check_out(p, 0, "c_count", "BIGINT", false);
        check_out(p, 1, "custdist", "BIGINT", false);
        static const char *const n13[] = {"JOIN LEFT", "not like(o_comment#", NULL};
        check_plan_has(p, n13);
    }
    /* q15: the view, bound at each of its two references. */
    text = read_query(15);
    p = bind_ok(a, text);
    free(text);
    if (p) {
        check_out(p, 4, "total_revenue", "DECIMAL(18,4)", false);
        static const char *const n15[] = {"DATE '1996-04-01'", "subplan 1:", "max(sum#", NULL};
        check_plan_has(p, n15);
        CHECK_EQ_INT(cat.nviews, 0); /* dropped again */
    }
    /* q17: correlated scalar subquery lists its free variable. */
    text = read_query(17);
    p = bind_ok(a, text);
    free(text);
    if (p) {
        static const char *const n17[] = {"[outer p_partkey#", "0.2::DOUBLE", NULL};
        check_plan_has(p, n17);
    }
    /* q22: NOT EXISTS stays a subquery expression under NOT. */
    text = read_query(22);
    p = bind_ok(a, text);
    free(text);
    if (p) {
        check_out(p, 0, "cntrycode", "VARCHAR(15)", false);
        static const char *const n22[] = {"(NOT EXISTS(SUBPLAN", "[outer c_custkey#", NULL};
        check_plan_has(p, n22);
    }
    sql_arena_destroy(a);
}

static void test_order_by(void)
{
    sql_arena *a = sql_arena_create();
    /* alias, ordinal and an input column not in the select list */
    sql_plan *p = bind_ok(a, "select n_name as x, n_nationkey from nation "
                             "order by x desc, 2, n_regionkey nulls first");
    if (p) {
        CHECK_EQ_INT(p->ncols, 2);
        CHECK(p->root->kind == SQL_LOP_PROJECT); /* drops the hidden column */
        const sql_lop *sort = find_op(p->root, SQL_LOP_SORT);
        REQUIRE(sort != NULL);
        CHECK_EQ_INT(sort->sort.count, 3);
        CHECK(sort->sort.keys[0].expr->column == p->cols[0]);
        CHECK(sort->sort.keys[0].desc && sort->sort.keys[0].nulls_first);
        CHECK(sort->sort.keys[1].expr->column == p->cols[1]);
        CHECK(!sort->sort.keys[1].desc && !sort->sort.keys[1].nulls_first);
        CHECK(sort->sort.keys[2].nulls_first);
        const sql_lop *proj = sort->left;
        CHECK(proj->kind == SQL_LOP_PROJECT && proj->nout == 3);
        CHECK(sort->sort.keys[2].expr->column == proj->out[2]);
        check_out(p, 0, "x", "CHAR(25)", false);
    }
    /* ORDER BY an aggregate that is also selected reuses it */
    p = bind_ok(a, "select n_regionkey, count(*) as c from nation group by n_regionkey "
                   "order by count(*) desc");
    if (p) {
        const sql_lop *sort = find_op(p->root, SQL_LOP_SORT);
        REQUIRE(sort != NULL);
        CHECK(sort->sort.keys[0].expr->column == p->cols[1]);
        CHECK(p->root->kind == SQL_LOP_SORT);
    }
    /* an expression over grouped columns, not selected */
    p = bind_ok(a, "select count(*) from nation group by n_regionkey order by n_regionkey + 1");
    if (p) {
        static const char *const n[] = {"?order?#", "(n_regionkey#3 + 1)", NULL};
        check_plan_has(p, n);
    }
    /* LIMIT / OFFSET */
    p = bind_ok(a, "select n_name from nation order by 1 limit 5 offset 2");
    if (p) {
        CHECK(p->root->kind == SQL_LOP_LIMIT);
        CHECK_EQ_INT(p->root->limit.limit, 5);
        CHECK_EQ_INT(p->root->limit.offset, 2);
    }
    sql_arena_destroy(a);
}

static void test_group_by(void)
{
    sql_arena *a = sql_arena_create();
    /* by output alias and by ordinal; an expression key matched in the
     * select list */
    sql_plan *p = bind_ok(a, "select n_regionkey * 2 as r, count(*) from nation group by r");
    if (p) {
        check_out(p, 0, "r", "INTEGER", false);
        check_out(p, 1, "count", "BIGINT", false);
    }
    p = bind_ok(a, "select n_regionkey * 2, sum(n_nationkey) from nation group by 1 "
                   "having sum(n_nationkey) > 3");
    if (p) {
        check_out(p, 1, "sum", "BIGINT", false);
        static const char *const n[] = {"FILTER (sum#", NULL};
        check_plan_has(p, n);
    }
    p = bind_ok(a, "select extract(year from o_orderdate), count(*) from orders "
                   "group by extract(year from o_orderdate)");
    if (p) check_out(p, 0, "extract", "INTEGER", false);
    /* scalar aggregates may be NULL; grouped ones only if their input is */
    p = bind_ok(a, "select sum(n_nationkey), min(n_comment), count(n_comment) from nation");
    if (p) {
        check_out(p, 0, "sum", "BIGINT", true);
        check_out(p, 1, "min", "VARCHAR(152)", true);
        check_out(p, 2, "count", "BIGINT", false);
    }
    /* sum(distinct), avg of integers */
    p = bind_ok(a, "select avg(distinct n_regionkey) from nation");
    if (p) {
        check_out(p, 0, "avg", "DOUBLE", true);
        static const char *const n[] = {"avg(DISTINCT n_regionkey#3)", NULL};
        check_plan_has(p, n);
    }
    sql_arena_destroy(a);
}

static void test_ctes_and_derived_tables(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan *p = bind_ok(a, "with t (k, nm) as (select n_nationkey, n_name from nation), "
                             "u as (select k from t where k > 3) "
                             "select t1.nm, u.k from t t1, u where t1.k = u.k");
    if (p) {
        check_out(p, 0, "nm", "CHAR(25)", false);
        check_out(p, 1, "k", "INTEGER", false);
        /* each reference is its own scan with its own ids */
        char *s = sql_plan_to_string(p);
        REQUIRE(s != NULL);
        const char *first = strstr(s, "GET nation");
        CHECK(first && strstr(first + 1, "GET nation"));
        free(s);
    }
    p = bind_ok(a, "select x.a + x.b from (select n_nationkey, n_regionkey from nation) "
                   "as x (a, b)");
    if (p) check_out(p, 0, "?column?", "INTEGER", false);
    /* USING: the merged column answers to its bare name */
    p = bind_ok(a, "select n_regionkey from nation join (select r_regionkey as n_regionkey "
                   "from region) r using (n_regionkey)");
    if (p) check_out(p, 0, "n_regionkey", "INTEGER", false);
    /* outer joins make the padded side nullable */
    p = bind_ok(a, "select c_custkey, o_orderkey from customer left join orders "
                   "on c_custkey = o_custkey");
    if (p) {
        check_out(p, 0, "c_custkey", "INTEGER", false);
        check_out(p, 1, "o_orderkey", "INTEGER", true);
    }
    sql_arena_destroy(a);
}

static void test_set_operations_and_values(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan *p = bind_ok(a, "select n_nationkey as k from nation union all select 1.5 "
                             "order by k desc limit 3");
    if (p) {
        check_out(p, 0, "k", "DECIMAL(11,1)", false);
        static const char *const n[] = {"SETOP UNION ALL", "CAST(n_nationkey#1 AS DECIMAL(11,1))",
                                        "LIMIT 3", NULL};
        check_plan_has(p, n);
    }
    p = bind_ok(a, "select r_name from region intersect select n_name from nation except "
                   "select 'x'");
    if (p) {
        static const char *const n[] = {"SETOP EXCEPT", "SETOP INTERSECT", NULL};
        check_plan_has(p, n);
    }
    p = bind_ok(a, "values (1, 'a'), (2.5, null)");
    if (p) {
        check_out(p, 0, "column1", "DECIMAL(11,1)", false);
        check_out(p, 1, "column2", "VARCHAR", true);
    }
    sql_arena_destroy(a);
}

static void test_typing_and_folding(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan *p = bind_ok(a, "select date '1996-01-31' + interval '1' month, "
                             "date '1998-12-01' - interval '1' year, date '2000-03-01' - 1, "
                             "date '2000-03-01' - date '2000-01-01', 0.06 - 0.01, 7 / 2, "
                             "1 + 2 * 3, 3000000000, -(5)");
    if (p) {
        static const char *const n[] = {"DATE '1996-02-29'",
                                        "DATE '1997-12-01'",
                                        "DATE '2000-02-29'",
                                        "= 60",
                                        "= 0.05",
                                        "= 3,",
                                        "= 7,",
                                        "= 3000000000",
                                        "= -5",
                                        NULL};
        check_plan_has(p, n);
        check_out(p, 4, "?column?", "DECIMAL(3,2)", false);
        check_out(p, 7, "?column?", "BIGINT", false);
    }
    /* products keep s1+s2 fraction digits while 18 digits allow, at least 6 */
    p = bind_ok(a, "select 1.5 * 0.25, cast(1 as decimal(15,2)) * 0.123456789, "
                   "l_quantity * 0.0001000000, l_tax * l_tax * l_tax * l_tax from lineitem");
    if (p) {
        check_out(p, 0, "?column?", "DECIMAL(4,3)", false);
        check_out(p, 1, "?column?", "DECIMAL(18,6)", false);
        check_out(p, 2, "?column?", "DECIMAL(18,6)", false);
        check_out(p, 3, "?column?", "DECIMAL(18,6)", false);
        static const char *const n[] = {"= 0.375,", "= 0.123457,", NULL};
        check_plan_has(p, n);
    }
    /* string literals take the other side's type */
    p = bind_ok(a, "select n_name from nation where n_nationkey = '5' and "
                   "n_comment like 'a%' escape '!'");
    if (p) {
        static const char *const n[] = {"(n_nationkey#1 = 5)", "like(n_comment#4, 'a%', '!')",
                                        NULL};
        check_plan_has(p, n);
    }
    p = bind_ok(a, "select o_orderkey from orders where o_orderdate >= '1995-01-01' and "
                   "o_orderdate between date '1995-01-01' and '1995-12-31'");
    if (p) {
        static const char *const n[] = {"(o_orderdate#5 >= DATE '1995-01-01')",
                                        "(o_orderdate#5 <= DATE '1995-12-31')", NULL};
        check_plan_has(p, n);
    }
    /* CHAR comparisons ignore trailing blanks of constants */
    p = bind_ok(a, "select n_name from nation where n_name = 'BRAZIL   ' or "
                   "n_name in ('PERU  ', 'CHINA')");
    if (p) {
        static const char *const n[] = {"(n_name#2 = 'BRAZIL')", "IN ('PERU', 'CHINA')", NULL};
        check_plan_has(p, n);
    }
    /* CHAR = VARCHAR compares as CHAR (PostgreSQL's bpchar = bpchar): the
     * VARCHAR side is cast, which drops its trailing blanks */
    p = bind_ok(a, "select n_name from nation where n_name = n_comment and n_comment <> n_name");
    if (p) {
        static const char *const n[] = {"(n_name#2 = CAST(n_comment#4 AS CHAR(152)))",
                                        "(CAST(n_comment#4 AS CHAR(152)) <> n_name#2)", NULL};
        check_plan_has(p, n);
    }
    /* ... but the common type elsewhere (CASE, UNION) stays VARCHAR */
    p = bind_ok(a, "select case when true then n_name else n_comment end from nation");
    if (p) check_out(p, 0, "case", "VARCHAR(152)", true);
    /* decimal arithmetic scales */
    p = bind_ok(a, "select l_extendedprice * l_discount, l_quantity + 1, l_tax * 2.5, "
                   "l_quantity / 2, coalesce(l_quantity, 0), case when true then 1 "
                   "else l_tax end, cast(l_quantity as integer), abs(l_tax), "
                   "round(l_extendedprice, 1), substring(l_comment from 2 for 3) from lineitem");
    if (p) {
        check_out(p, 0, "?column?", "DECIMAL(18,4)", false);
        check_out(p, 1, "?column?", "DECIMAL(16,2)", false);
        check_out(p, 2, "?column?", "DECIMAL(17,3)", false);
        check_out(p, 3, "?column?", "DOUBLE", false);
        check_out(p, 4, "coalesce", "DECIMAL(15,2)", false);
        check_out(p, 5, "case", "DECIMAL(15,2)", false);
        check_out(p, 6, "l_quantity", "INTEGER", false);
        check_out(p, 7, "abs", "DECIMAL(15,2)", false);
        check_out(p, 8, "round", "DECIMAL(15,1)", false);
        check_out(p, 9, "substring", "VARCHAR(44)", false);
    }
    /* parameters take their type from the context */
    p = bind_ok(a, "select n_name from nation where n_nationkey = $1 and n_name = $2 "
                   "and n_regionkey < $1");
    if (p) {
        CHECK_EQ_INT(p->ctx->nparams, 2);
        CHECK(p->ctx->param_types[0].id == STO_TYPE_INTEGER);
        CHECK(p->ctx->param_types[1].id == STO_TYPE_CHAR);
    }
    /* IN (subquery) is = ANY with the subplan's column cast when needed */
    p = bind_ok(a, "select n_name from nation where n_nationkey in (select 1.5) and "
                   "n_regionkey not in (1, 2)");
    if (p) {
        static const char *const n[] = {"= ANY(SUBPLAN 1(", "NOT IN (1, 2)", NULL};
        check_plan_has(p, n);
    }
    sql_arena_destroy(a);
}

static void test_shapes(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan *p = bind_ok(a, "select distinct n_name, n_name from nation order by n_name");
    if (p) {
        CHECK_EQ_INT(p->ncols, 2);
        CHECK(p->cols[0] != p->cols[1]); /* a column selected twice gets a second id */
        CHECK(find_op(p->root, SQL_LOP_DISTINCT) != NULL);
    }
    p = bind_ok(a, "select * from nation join region on n_regionkey = r_regionkey");
    if (p) {
        CHECK_EQ_INT(p->ncols, 7);
        const sql_lop *j = find_op(p->root, SQL_LOP_JOIN);
        REQUIRE(j != NULL);
        CHECK(j->join.kind == SQL_JOINK_INNER && j->join.cond != NULL);
    }
    p = bind_ok(a, "select * from nation join (select r_regionkey as n_regionkey, r_name "
                   "from region) r using (n_regionkey)");
    if (p) {
        CHECK_EQ_INT(p->ncols, 5); /* the right side's n_regionkey is merged away */
        check_out(p, 4, "r_name", "CHAR(25)", false);
    }
    p = bind_ok(a, "select count(*) from nation");
    if (p) {
        const sql_lop *v = find_op(p->root, SQL_LOP_VALUES);
        CHECK(v == NULL); /* FROM nation, not the no-FROM row */
    }
    p = bind_ok(a, "select 1 + 1 as two");
    if (p) {
        const sql_lop *v = find_op(p->root, SQL_LOP_VALUES);
        REQUIRE(v != NULL);
        CHECK_EQ_INT(v->values.nrows, 1);
        CHECK_EQ_INT(v->nout, 0);
        check_out(p, 0, "two", "INTEGER", false);
    }
    /* set operation ORDER BY over an expression of its outputs */
    p = bind_ok(a, "select n_nationkey as k from nation union select r_regionkey from region "
                   "order by k + 1 desc");
    if (p) {
        CHECK(p->root->kind == SQL_LOP_SORT && p->root->left->kind == SQL_LOP_SETOP);
        CHECK(p->root->sort.keys[0].expr->kind == SQL_BEXPR_OP);
        CHECK(p->root->sort.keys[0].desc);
    }
    sql_arena_destroy(a);
}

static void test_correlation(void)
{
    sql_arena *a = sql_arena_create();
    /* two levels deep: the middle subquery's free variables include what
     * the innermost one takes from the outermost query */
    sql_plan *p = bind_ok(a, "select n_name from nation where exists (select 1 from region "
                             "where exists (select 1 from supplier where s_nationkey = "
                             "n_nationkey and r_regionkey = n_regionkey))");
    if (p) {
        const sql_lop *f = find_op(p->root, SQL_LOP_FILTER);
        REQUIRE(f != NULL);
        const sql_bexpr *outer = f->filter.pred;
        REQUIRE(outer->kind == SQL_BEXPR_SUBQUERY && outer->subquery.kind == SQL_SUBQ_EXISTS);
        CHECK_EQ_INT(outer->subquery.nouter, 2); /* n_nationkey, n_regionkey */
        const sql_lop *f2 = find_op(outer->subquery.plan, SQL_LOP_FILTER);
        REQUIRE(f2 != NULL);
        const sql_bexpr *inner = f2->filter.pred;
        REQUIRE(inner->kind == SQL_BEXPR_SUBQUERY);
        CHECK_EQ_INT(inner->subquery.nouter, 3); /* + r_regionkey */
        for (uint32_t i = 1; i < inner->subquery.nouter; i++)
            CHECK(inner->subquery.outer[i - 1] < inner->subquery.outer[i]);
    }
    /* a correlated subquery in HAVING uses a grouped column */
    p = bind_ok(a, "select n_regionkey from nation group by n_regionkey having count(*) > "
                   "(select count(*) from region where r_regionkey = n_regionkey)");
    if (p) {
        static const char *const n[] = {"[outer n_regionkey#3]", NULL};
        check_plan_has(p, n);
    }
    /* ANY / ALL keep their comparison and left operand */
    p = bind_ok(a, "select n_name from nation where n_nationkey > all (select r_regionkey "
                   "from region) or n_nationkey < any (select 2)");
    if (p) {
        static const char *const n[] = {"(n_nationkey#1 > ALL(SUBPLAN 1(r_regionkey#",
                                        "(n_nationkey#1 < ANY(SUBPLAN 2(", NULL};
        check_plan_has(p, n);
    }
    sql_arena_destroy(a);
}

static void test_views(void)
{
    sql_arena *a = sql_arena_create();
    sql_plan *p = bind_ok(a, "create view v1 (k, r) as select n_nationkey, n_regionkey from "
                             "nation; create view v2 as select k * 10 as kk from v1 where r = 1; "
                             "select kk, x.k from v2, v1 x where kk = x.k");
    if (p) {
        check_out(p, 0, "kk", "INTEGER", false);
        check_out(p, 1, "k", "INTEGER", false);
        char *s = sql_plan_to_string(p);
        REQUIRE(s != NULL);
        const char *first = strstr(s, "GET nation");
        CHECK(first && strstr(first + 1, "GET nation")); /* v1 twice: directly and in v2 */
        free(s);
    }
    tcat_drop_view(&cat, "v1");
    tcat_drop_view(&cat, "v2");
    CHECK_EQ_INT(cat.nviews, 0);
    sql_arena_destroy(a);
}

/* Binds q with every n-th allocation of the bind arena failing, for a
 * spread of n; each attempt must fail with 53200 (never crash or leak — the
 * ASan build checks that) until n is large enough to succeed. Returns the
 * number of failed attempts, -1 when it never succeeded. */
static int bind_under_memory_pressure(const sql_query *q)
{
    sql_catalog iface = tcat_iface(&cat);
    int failures = 0;
    for (long n = 0; n < 1000000; n += 1 + n / 32) {
        sql_arena *a = sql_arena_create();
        sql_arena_fail_after(a, n);
        sql_plan *p;
        sto_status st = sql_bind_query(a, &iface, q, &p);
        if (!st) {
            char *text = sql_plan_to_string(p);
            CHECK(text != NULL);
            free(text);
            sql_arena_destroy(a);
            return failures;
        }
        if (strcmp(st->sqlstate, "53200") != 0)
            fprintf(stderr, "after %ld allocations: %s %s\n", n, st->sqlstate, st->message);
        CHECK_STREQ(st->sqlstate, "53200");
        failures++;
        sto_status_free(st);
        sql_arena_destroy(a);
    }
    return -1;
}

static void test_out_of_memory(void)
{
    for (int qn = 1; qn <= 22; qn++) {
        char *text = read_query(qn);
        REQUIRE(text != NULL);
        sql_arena *ast = sql_arena_create();
        sql_stmt_list *l;
        sto_status st = sql_parse(ast, text, &l);
        free(text);
        REQUIRE(st == NULL);
        for (int i = 0; i < l->count; i++) {
            const sql_stmt *s = l->items[i];
            if (s->kind == SQL_STMT_CREATE_VIEW) tcat_add_view(&cat, s);
            if (s->kind == SQL_STMT_DROP_VIEW) tcat_drop_view(&cat, s->drop.name);
            if (s->kind != SQL_STMT_SELECT) continue;
            int failures = bind_under_memory_pressure(s->query);
            if (failures < 5) fprintf(stderr, "q%02d: %d failures\n", qn, failures);
            CHECK(failures >= 5);
        }
        sql_arena_destroy(ast);
    }
}

/* Prints the plan (or error) of sql: `test_bind FILE-OR-SQL` for a look. */
static void dump(const char *sql)
{
    sql_arena *a = sql_arena_create();
    sql_plan *p;
    sto_status st = bind_text(a, sql, &p);
    if (st) {
        printf("ERROR %s at %d: %s\n", st->sqlstate, st->position, st->message);
        sto_status_free(st);
    } else if (p) {
        char *s = sql_plan_to_string(p);
        printf("%s", s);
        free(s);
    }
    sql_arena_destroy(a);
}

int main(int argc, char **argv)
{
    if (!tcat_init(&cat)) {
        fprintf(stderr, "cannot load the TPC-H schema\n");
        return 1;
    }
    if (argc > 1) {
        char *text = tcat_read_file(argv[1]);
        dump(text ? text : argv[1]);
        free(text);
        tcat_free(&cat);
        return 0;
    }
    RUN(test_tpch_all_bind);
    RUN(test_tpch_golden_plans);
    RUN(test_tpch_q01_types);
    RUN(test_tpch_facts);
    RUN(test_order_by);
    RUN(test_group_by);
    RUN(test_ctes_and_derived_tables);
    RUN(test_set_operations_and_values);
    RUN(test_typing_and_folding);
    RUN(test_shapes);
    RUN(test_correlation);
    RUN(test_views);
    RUN(test_out_of_memory);
    tcat_free(&cat);
    return TEST_REPORT();
}
