/*
 * test_optimize.c — each optimizer rule on small queries, parsed and bound
 * against the TPC-H schema with SF 1 statistics (tests/engine/opt_catalog.h),
 * checked through the optimized plan's structure: join kinds, where filters
 * sit, which columns scans read, estimates and physical choices.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "engine/opt_catalog.h"
#include "engine/opt_check.h"
#include "engine/opt_int.h"
#include "engine/optimize.h"

static opt_catalog cat;

/* test_explain: the plan printed with estimates. */
#define EXPLAIN_EXPECTED                                                                           \
    "OUTPUT r_name=r_name#2:CHAR(25), n_name=n_name#8:CHAR(25)?\n"                                 \
    "  PROJECT r_name#2:CHAR(25), n_name#8:CHAR(25)? = SUBPLAN 1(n_name#5)[outer r_regionkey#1]  " \
    "(est 4 rows)\n"                                                                               \
    "      subplan 1:\n"                                                                           \
    "        LIMIT 1  (est 1 rows)\n"                                                              \
    "          SORT n_name#5 ASC NULLS LAST  (est 5 rows)\n"                                       \
    "            PROJECT n_name#5:CHAR(25)  (est 5 rows)\n"                                        \
    "              FILTER (n_regionkey#6 = r_regionkey#1)  (est 5 rows)\n"                         \
    "                GET nation n_name#5:CHAR(25), n_regionkey#6:INTEGER  (est 25 rows)\n"         \
    "    FILTER (r_comment#3 <> 'x\n"                                                              \
    "y')  (est 4 rows)\n"                                                                          \
    "      GET region r_regionkey#1:INTEGER, r_name#2:CHAR(25), r_comment#3:VARCHAR(152)?  (est "  \
    "5 rows)\n"

typedef struct optimized {
    sql_arena *arena;
    sql_plan *plan;
    char *text; /* eng_plan_explain_logical */
} optimized;

static sql_plan *bind_sql(sql_arena *a, const char *sql)
{
    sql_stmt_list *l;
    sql_catalog iface = ocat_iface(&cat);
    sql_plan *plan = NULL;
    sto_status st = sql_parse(a, sql, &l);
    for (int i = 0; !st && i < l->count; i++)
        if (l->items[i]->kind == SQL_STMT_SELECT)
            st = sql_bind_query(a, &iface, l->items[i]->query, &plan);
    if (st) {
        fprintf(stderr, "%s: %s\n", sql, st->message);
        sto_status_free(st);
        return NULL;
    }
    return plan;
}

static optimized opt_with(const char *sql, const eng_opt_settings *s)
{
    optimized o = {sql_arena_create(), NULL, NULL};
    if (!o.arena) return o;
    o.plan = bind_sql(o.arena, sql);
    if (!o.plan) return o;
    sto_status st = eng_optimize(o.plan, s);
    if (st) {
        fprintf(stderr, "optimize %s: %s\n", sql, st->message);
        sto_status_free(st);
        o.plan = NULL;
        return o;
    }
    CHECK_EQ_INT(ocheck_plan(o.plan, sql), 0);
    o.text = eng_plan_explain_logical(o.plan);
    return o;
}

static optimized opt(const char *sql)
{
    eng_opt_settings s = eng_opt_settings_default();
    s.threads = 2;
    return opt_with(sql, &s);
}

static void done(optimized *o)
{
    free(o->text);
    sql_arena_destroy(o->arena);
}

/* The plan text has (or lacks) a line containing needle. */
static void check_has(const optimized *o, const char *needle, bool want)
{
    bool has = o->text && strstr(o->text, needle) != NULL;
    if (has != want)
        fprintf(stderr, "plan %s \"%s\":\n%s", want ? "lacks" : "has", needle,
                o->text ? o->text : "(none)");
    CHECK(has == want);
}

static int count_joins(const sql_lop *op, int kind)
{
    if (!op) return 0;
    int n = op->kind == SQL_LOP_JOIN && (kind < 0 || (int)op->join.kind == kind);
    return n + count_joins(op->left, kind) + count_joins(op->right, kind);
}

static const sql_lop *find_join(const sql_lop *op, sql_join_kind kind)
{
    if (!op) return NULL;
    if (op->kind == SQL_LOP_JOIN && op->join.kind == kind) return op;
    const sql_lop *l = find_join(op->left, kind);
    return l ? l : find_join(op->right, kind);
}

static const sql_lop *find_get(const sql_lop *op, const char *table)
{
    if (!op) return NULL;
    if (op->kind == SQL_LOP_GET && strcmp(op->get.table_name, table) == 0) return op;
    const sql_lop *l = find_get(op->left, table);
    return l ? l : find_get(op->right, table);
}

/* The operator whose input is `child`. */
static const sql_lop *parent_of(const sql_lop *root, const sql_lop *child)
{
    if (!root) return NULL;
    if (root->left == child || root->right == child) return root;
    const sql_lop *l = parent_of(root->left, child);
    return l ? l : parent_of(root->right, child);
}

static sql_walk find_subquery(sql_bexpr **slot, void *arg)
{
    (void)arg;
    return (*slot)->kind == SQL_BEXPR_SUBQUERY ? SQL_WALK_STOP : SQL_WALK_CONTINUE;
}

static int count_subqueries(const sql_lop *op)
{
    if (!op) return 0;
    int n = 0;
    sql_bexpr *e = NULL;
    if (op->kind == SQL_LOP_FILTER) e = op->filter.pred;
    if (op->kind == SQL_LOP_JOIN) e = op->join.cond;
    if (e && !sql_bexpr_walk(&e, find_subquery, NULL)) n++;
    if (op->kind == SQL_LOP_PROJECT)
        for (uint32_t i = 0; i < op->project.count; i++) {
            e = op->project.items[i].expr;
            if (!sql_bexpr_walk(&e, find_subquery, NULL)) n++;
        }
    if (op->kind == SQL_LOP_AGGREGATE) {
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++) {
            e = op->aggregate.groups[i].expr;
            if (!sql_bexpr_walk(&e, find_subquery, NULL)) n++;
        }
        for (uint32_t i = 0; i < op->aggregate.naggs; i++) {
            e = op->aggregate.aggs[i].arg;
            if (e && !sql_bexpr_walk(&e, find_subquery, NULL)) n++;
        }
    }
    if (op->kind == SQL_LOP_SORT)
        for (uint32_t i = 0; i < op->sort.count; i++) {
            e = op->sort.keys[i].expr;
            if (!sql_bexpr_walk(&e, find_subquery, NULL)) n++;
        }
    return n + count_subqueries(op->left) + count_subqueries(op->right);
}

/* ---------------------------------------------------------------- sets -- */

static void test_idsets(void)
{
    sql_arena *a = sql_arena_create();
    REQUIRE(a);
    sql_plan_ctx *ctx = sql_plan_ctx_new(a);
    REQUIRE(ctx);
    eng_idset x, y;
    eng_idset_init(&x);
    eng_idset_init(&y);
    CHECK(eng_idset_empty(&x));
    CHECK(eng_idset_add(ctx, &x, 3) && eng_idset_add(ctx, &x, 700));
    CHECK(eng_idset_add(ctx, &y, 3));
    CHECK(eng_idset_has(&x, 700) && !eng_idset_has(&x, 699) && !eng_idset_has(&x, 5000));
    CHECK(eng_idset_subset(&y, &x) && !eng_idset_subset(&x, &y));
    CHECK(eng_idset_intersects(&x, &y));
    eng_idset z;
    eng_idset_init(&z);
    CHECK(eng_idset_add_all(ctx, &z, &x));
    CHECK(eng_idset_subset(&z, &x) && eng_idset_subset(&x, &z));
    CHECK(!eng_idset_has(&z, 640) && !eng_idset_has(&z, 0)); /* no stray bits */
    sql_arena_destroy(a);
}

/* ------------------------------------------------------------ unnesting -- */

static void test_exists_becomes_semi_and_anti(void)
{
    optimized o = opt("select o_orderkey from orders where exists (select * from lineitem "
                      "where l_orderkey = o_orderkey and l_quantity > 40) and not exists "
                      "(select * from customer where c_custkey = o_custkey and c_acctbal < 0)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_SEMI), 1);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_ANTI), 1);
    check_has(&o, "JOIN SEMI (l_orderkey", true);
    check_has(&o, "JOIN ANTI (c_custkey", true);
    /* The subquery's own filter went into its side of the join. */
    check_has(&o, "FILTER (l_quantity", true);
    done(&o);
}

static void test_exists_under_or_is_mark(void)
{
    optimized o = opt("select o_orderkey from orders where o_totalprice > 500000.00 or exists "
                      "(select * from lineitem where l_orderkey = o_orderkey)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    const sql_lop *m = find_join(o.plan->root, SQL_JOINK_MARK);
    REQUIRE(m != NULL);
    CHECK(m->right->est_rows > 1);
    /* EXISTS is never NULL: the mark carries no NULL. */
    CHECK(!sql_plan_col(o.plan->ctx, m->join.mark)->nullable);
    check_has(&o, " OR mark#", true);
    done(&o);
}

static void test_in_and_not_in(void)
{
    /* IN: a semi join on the comparison. */
    optimized o = opt("select s_name from supplier where s_suppkey in (select ps_suppkey from "
                      "partsupp where ps_availqty < 10)");
    REQUIRE(o.plan);
    check_has(&o, "JOIN SEMI (s_suppkey#1 = ps_suppkey", true);
    done(&o);
    /* NOT IN over NOT NULL columns: an anti join. */
    o = opt("select s_name from supplier where s_suppkey not in (select ps_suppkey from "
            "partsupp)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_ANTI), 1);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_MARK), 0);
    done(&o);
    /* NOT IN where NULLs may appear (n_comment, r_comment are nullable):
     * an anti join would be wrong (x NOT IN (NULL) is NULL, not true); a mark
     * join keeps the three values and the filter keeps rows where the mark is
     * false. */
    o = opt("select n_name from nation where n_comment not in (select r_comment from region)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_ANTI), 0);
    const sql_lop *m = find_join(o.plan->root, SQL_JOINK_MARK);
    REQUIRE(m != NULL);
    CHECK(sql_plan_col(o.plan->ctx, m->join.mark)->nullable);
    check_has(&o, "JOIN MARK (n_comment#4 = r_comment#", true);
    check_has(&o, "FILTER (NOT mark#", true);
    done(&o);
}

static void test_quantified_comparisons(void)
{
    /* > ALL is NOT (<= ANY): with NOT NULL columns an anti join on <=. */
    optimized o = opt("select p_name from part where p_size > all (select ps_availqty from "
                      "partsupp where ps_partkey = p_partkey)");
    REQUIRE(o.plan);
    check_has(&o, "JOIN ANTI ((p_size#6 <= ps_availqty", true);
    done(&o);
    /* < ANY under OR: a mark join. */
    o = opt("select p_name from part where p_size = 1 or p_retailprice < any (select "
            "ps_supplycost from partsupp where ps_partkey = p_partkey)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    check_has(&o, "JOIN MARK ((p_retailprice#8 < ps_supplycost", true);
    done(&o);
}

static void test_scalar_subqueries(void)
{
    /* Uncorrelated aggregate: exactly one row, joined once. */
    optimized o = opt("select c_name from customer where c_acctbal > (select avg(c_acctbal) "
                      "from customer)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_SINGLE), 0);
    check_has(&o, "AGGREGATE AGGS avg", true);
    done(&o);
    /* Correlated, no aggregate: a SINGLE join (a second match is an error). */
    o = opt("select s_name, (select n_name from nation where n_nationkey = s_nationkey) from "
            "supplier");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    check_has(&o, "JOIN SINGLE (n_nationkey#8 = s_nationkey#4)", true);
    done(&o);
    /* Correlated aggregate (q17's shape): grouped by the correlation key and
     * joined; the comparison rejects NULLs, so the join is inner. */
    o = opt("select sum(l_extendedprice) from lineitem, part where p_partkey = l_partkey and "
            "p_brand = 'Brand#23' and "
            "l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = "
            "p_partkey)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_LEFT), 0);
    check_has(&o, "AGGREGATE GROUP l_partkey#", true);
    /* The join became inner, so the key is NOT NULL again. */
    check_has(&o, ":INTEGER AGGS avg", true);
    /* The grouped side is reduced to the parts the outer side has. */
    const sql_lop *sj = find_join(o.plan->root, SQL_JOINK_SEMI);
    REQUIRE(sj != NULL);
    CHECK(find_get(sj->left, "lineitem") && find_get(sj->right, "part"));
    done(&o);
    /* No reduction when the other side is as large as the groups. */
    o = opt("select count(*) from orders where o_totalprice > (select sum(l_extendedprice) "
            "from lineitem where l_orderkey = o_orderkey)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_SEMI), 0);
    done(&o);
}

/* A query without FROM reads a zero-column VALUES row: joining a subquery
 * to it must not copy from a missing column list (UBSan caught memcpy from
 * NULL in eng_lop_recompute_out). */
static void test_subquery_without_from(void)
{
    optimized o = opt("select (select max(n_nationkey) from nation)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    check_has(&o, "AGGREGATE AGGS max", true);
    done(&o);
    o = opt("select 1 where exists (select 1 from nation where n_nationkey > 3)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    done(&o);
    /* the building blocks: an operator without columns still has a column
     * array, and a join over it takes the other side's columns */
    sql_arena *a = sql_arena_create();
    REQUIRE(a);
    sql_plan *p = bind_sql(a, "select n_nationkey from nation");
    REQUIRE(p);
    sql_lop *none = sql_lop_new(p->ctx, SQL_LOP_VALUES, NULL, NULL, 0);
    REQUIRE(none);
    CHECK(none->out != NULL);
    CHECK_EQ_INT(none->nout, 0);
    sql_lop *j = eng_lop_join(p->ctx, SQL_JOINK_CROSS, none, p->root, NULL);
    REQUIRE(j);
    CHECK_EQ_INT(j->nout, p->root->nout);
    CHECK(j->out[0] == p->root->out[0]);
    sql_lop *f = eng_lop_filter(p->ctx, none, sql_bexpr_column(p->ctx, p->root->out[0], 0));
    REQUIRE(f);
    CHECK_EQ_INT(f->nout, 0);
    sql_arena_destroy(a);
}

static void test_count_bug(void)
{
    /* COUNT over no matching rows is 0, not NULL: orders without lineitems
     * must pass `0 = (select count(*) ...)`. The aggregate is grouped by the
     * key and LEFT joined; where no group matched, the empty group's value
     * (0) is used. */
    optimized o = opt("select o_orderkey from orders where 0 = (select count(*) from lineitem "
                      "where l_orderkey = o_orderkey)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    const sql_lop *lj = find_join(o.plan->root, SQL_JOINK_LEFT);
    REQUIRE(lj != NULL);
    check_has(&o, "AGGREGATE GROUP l_orderkey#", true);
    check_has(&o, "CASE WHEN (l_orderkey#", true);
    check_has(&o, " IS NULL) THEN 0 ELSE count#", true);
    done(&o);
    /* The same with a projection between the correlated filter and the
     * aggregate: the key must travel through it. */
    o = opt("select o_orderkey from orders where 0 = (select count(*) from (select l_quantity "
            "from lineitem where l_orderkey = o_orderkey) t)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    check_has(&o, " IS NULL) THEN 0 ELSE count#", true);
    done(&o);
    /* sum over no rows is NULL: no CASE needed, and the comparison above
     * rejects NULLs, so an inner join suffices. */
    o = opt("select o_orderkey from orders where o_totalprice < (select sum(l_extendedprice) "
            "from lineitem where l_orderkey = o_orderkey)");
    REQUIRE(o.plan);
    check_has(&o, "CASE", false);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_LEFT), 0);
    done(&o);
}

static void test_magic_set(void)
{
    /* A non-equality correlation under an aggregate cannot be lifted: the
     * magic set D (distinct outer values) is joined into the subquery, which
     * is then joined with the outer side on the correlated columns. */
    optimized o = opt("select s_name from supplier where s_acctbal > (select avg(c_acctbal) "
                      "from customer where c_nationkey = s_nationkey and c_acctbal < "
                      "s_acctbal)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 0);
    check_has(&o, "DISTINCT", true);
    check_has(&o, "JOIN LEFT", true); /* the count-bug join from D */
    if (getenv("SHOW")) fputs(o.text, stderr);
    done(&o);
    /* Subqueries that cannot be unnested stay, and the plan is still valid. */
    o = opt("select s_name from supplier where s_acctbal > (select c_acctbal from customer "
            "where c_nationkey = s_nationkey order by c_acctbal limit 1)");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 1);
    done(&o);
}

static void test_unnest_disabled(void)
{
    eng_opt_settings s = eng_opt_settings_default();
    s.disabled = ENG_OPT_NO_UNNEST;
    optimized o = opt_with("select o_orderkey from orders where exists (select * from "
                           "lineitem where l_orderkey = o_orderkey)",
                           &s);
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_subqueries(o.plan->root), 1);
    done(&o);
}

/* ------------------------------------------------------------ push-down -- */

static void test_comma_join_gets_key(void)
{
    optimized o = opt("select c_name, o_orderdate from customer, orders where c_custkey = "
                      "o_custkey and c_mktsegment = 'BUILDING'");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_CROSS), 0);
    const sql_lop *j = find_join(o.plan->root, SQL_JOINK_INNER);
    REQUIRE(j != NULL);
    check_has(&o, "JOIN INNER (c_custkey#1 = o_custkey#10)", true);
    /* The single-table conjunct sits right above customer's scan. */
    const sql_lop *get = find_get(o.plan->root, "customer");
    REQUIRE(get != NULL);
    const sql_lop *f = parent_of(o.plan->root, get);
    CHECK(f && f->kind == SQL_LOP_FILTER);
    CHECK(j->phys.algorithm == ENG_JOIN_ALGO_HASH);
    done(&o);
}

static void test_equivalence_classes(void)
{
    optimized o = opt("select l_quantity from lineitem, orders where l_orderkey = o_orderkey "
                      "and o_orderkey = 7");
    REQUIRE(o.plan);
    const sql_lop *get = find_get(o.plan->root, "lineitem");
    REQUIRE(get != NULL);
    const sql_lop *f = parent_of(o.plan->root, get);
    REQUIRE(f && f->kind == SQL_LOP_FILTER);
    char *s = sql_bexpr_to_string(o.plan->ctx, f->filter.pred);
    CHECK_STREQ(s, "(l_orderkey#1 = 7)");
    free(s);
    done(&o);
}

static void test_simplifications(void)
{
    /* x = x is x IS NOT NULL (TRUE for a NOT NULL column); TRUE conjuncts
     * disappear. */
    optimized o = opt("select n_name from nation where n_comment = n_comment and n_name = "
                      "n_name and 1 = 1");
    REQUIRE(o.plan);
    check_has(&o, "FILTER (n_comment#4 IS NOT NULL)", true);
    check_has(&o, "n_name#2 = n_name", false);
    done(&o);
    o = opt("select n_name from nation where 1 = 1");
    REQUIRE(o.plan);
    check_has(&o, "FILTER", false);
    done(&o);
}

static void test_outer_joins(void)
{
    /* Preserved side: pushed below. A NULL-rejecting conjunct on the inner
     * side makes the join INNER. */
    optimized o = opt("select c_name from customer left join orders on c_custkey = o_custkey "
                      "where c_acctbal > 0 and o_totalprice > 1000");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_LEFT), 0);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_INNER), 1);
    done(&o);
    /* IS NULL on the inner side keeps the outer join and stays above it;
     * the preserved side's filter goes below. */
    o = opt("select c_name from customer left join orders on c_custkey = o_custkey where "
            "o_orderkey is null and c_acctbal > 0");
    REQUIRE(o.plan);
    const sql_lop *lj = find_join(o.plan->root, SQL_JOINK_LEFT);
    REQUIRE(lj != NULL);
    const sql_lop *above = parent_of(o.plan->root, lj);
    REQUIRE(above != NULL);
    CHECK(above->kind == SQL_LOP_FILTER);
    CHECK(lj->left->kind == SQL_LOP_FILTER);
    done(&o);
    /* An ON conjunct over the inner side alone filters that side. */
    o = opt("select c_name from customer left join orders on c_custkey = o_custkey and "
            "o_orderstatus = 'F'");
    REQUIRE(o.plan);
    lj = find_join(o.plan->root, SQL_JOINK_LEFT);
    REQUIRE(lj != NULL);
    CHECK(lj->right->kind == SQL_LOP_FILTER);
    done(&o);
}

static void test_or_factoring(void)
{
    /* q19's shape: the key inside every OR branch becomes the join key and
     * each side gets the OR of its own conditions. */
    optimized o = opt("select l_quantity from lineitem, part where (p_partkey = l_partkey and "
                      "p_brand = 'Brand#12' and l_quantity < 5) or (p_partkey = l_partkey and "
                      "p_brand = 'Brand#23' and l_quantity > 40)");
    REQUIRE(o.plan);
    const sql_lop *j = find_join(o.plan->root, SQL_JOINK_INNER);
    REQUIRE(j != NULL);
    CHECK(j->phys.algorithm != ENG_JOIN_ALGO_NESTED_LOOP);
    check_has(&o, "FILTER ((p_brand#", true);
    check_has(&o, "FILTER ((l_quantity#", true);
    done(&o);
}

/* ------------------------------------------------------------- pruning -- */

static void test_pruning(void)
{
    optimized o = opt("select count(*) from lineitem where l_quantity < 5");
    REQUIRE(o.plan);
    const sql_lop *get = find_get(o.plan->root, "lineitem");
    REQUIRE(get != NULL);
    CHECK_EQ_INT(get->nout, 1);
    CHECK_EQ_INT(get->get.columns[0], 4); /* l_quantity */
    done(&o);
    /* count(*) alone still scans one (the narrowest) column. */
    o = opt("select count(*) from orders");
    REQUIRE(o.plan);
    get = find_get(o.plan->root, "orders");
    REQUIRE(get != NULL);
    CHECK_EQ_INT(get->nout, 1);
    done(&o);
    /* A join's keys are read but not passed beyond what is used. */
    o = opt("select n_name from nation, region where n_regionkey = r_regionkey");
    REQUIRE(o.plan);
    get = find_get(o.plan->root, "region");
    REQUIRE(get != NULL);
    CHECK_EQ_INT(get->nout, 1);
    done(&o);
}

/* ---------------------------------------------------------- join order -- */

static bool every_join_has_cond(const sql_lop *op)
{
    if (!op) return true;
    if (op->kind == SQL_LOP_JOIN && !op->join.cond) return false;
    return every_join_has_cond(op->left) && every_join_has_cond(op->right);
}

static void test_chain_without_cross_products(void)
{
    /* Written so that neighbours in the FROM list share no predicate. */
    optimized o = opt("select count(*) from region, part, supplier, partsupp, nation where "
                      "r_regionkey = n_regionkey and n_nationkey = s_nationkey and s_suppkey "
                      "= ps_suppkey and ps_partkey = p_partkey and r_name = 'ASIA'");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, -1), 4);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_CROSS), 0);
    CHECK(every_join_has_cond(o.plan->root));
    done(&o);
}

/* The smallest join containing both tables (NULL when none). */
static const sql_lop *join_over(const sql_lop *op, const char *a, const char *b)
{
    if (!op || !find_get(op, a) || !find_get(op, b)) return NULL;
    const sql_lop *l = join_over(op->left, a, b);
    if (l) return l;
    const sql_lop *r = join_over(op->right, a, b);
    return r ? r : (op->kind == SQL_LOP_JOIN ? op : NULL);
}

static int count_eq(const sql_bexpr *e)
{
    if (!e) return 0;
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_AND)
        return count_eq(e->op.args[0]) + count_eq(e->op.args[1]);
    return e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_EQ;
}

static void test_implied_equalities(void)
{
    /* TPC-H q05: c_nationkey = s_nationkey = n_nationkey lets customer
     * join the one ASIA region's nations before it meets orders and
     * lineitem, which no written equality allows. */
    optimized o = opt("select n_name from customer, orders, lineitem, supplier, nation, region "
                      "where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = "
                      "s_suppkey and c_nationkey = s_nationkey and s_nationkey = n_nationkey and "
                      "n_regionkey = r_regionkey and r_name = 'ASIA'");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, SQL_JOINK_CROSS), 0);
    CHECK(every_join_has_cond(o.plan->root));
    const sql_lop *cn = join_over(o.plan->root, "customer", "nation");
    REQUIRE(cn != NULL);
    CHECK(find_get(cn, "supplier") == NULL);
    CHECK(find_get(cn, "lineitem") == NULL);
    /* The join that brings in supplier needs one nation key equality, not
     * one per written or implied equality: with suppkey, two in all. */
    const sql_lop *ls = join_over(o.plan->root, "supplier", "customer");
    REQUIRE(ls != NULL);
    CHECK_EQ_INT(count_eq(ls->join.cond), 2);
    done(&o);
    /* A written chain keeps its estimate: the implied equality adds no
     * selectivity to a set its written ones already join. */
    o = opt("select count(*) from customer, supplier, nation where c_nationkey = s_nationkey and "
            "s_nationkey = n_nationkey");
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, -1), 2);
    const sql_lop *top = find_join(o.plan->root, SQL_JOINK_INNER);
    REQUIRE(top != NULL);
    /* 150K customers x 10K suppliers / 25 nations = 60M rows. */
    CHECK(top->est_rows > 3e7 && top->est_rows < 1.2e8);
    done(&o);
}

static void test_greedy_beyond_dp(void)
{
    /* 14 relations: more than the DP takes; the greedy order must still
     * follow the chain. */
    char sql[4096];
    int n = 14, len = snprintf(sql, sizeof(sql), "select count(*) from ");
    for (int i = 0; i < n; i++)
        len += snprintf(sql + len, sizeof(sql) - (size_t)len, "%snation n%d", i ? ", " : "", i);
    len += snprintf(sql + len, sizeof(sql) - (size_t)len, " where ");
    for (int i = 0; i + 1 < n; i++)
        len += snprintf(sql + len, sizeof(sql) - (size_t)len, "%sn%d.n_nationkey = n%d.n_nationkey",
                        i ? " and " : "", (i * 5) % n, ((i + 1) * 5) % n);
    optimized o = opt(sql);
    REQUIRE(o.plan);
    CHECK_EQ_INT(count_joins(o.plan->root, -1), n - 1);
    CHECK(every_join_has_cond(o.plan->root));
    done(&o);
}

static void test_build_side_and_algorithm(void)
{
    /* orders (1.5M) with customer (150K): customer builds; at 2 threads
     * 150K rows fit a shared table. */
    optimized o = opt("select o_orderkey from orders, customer where o_custkey = c_custkey");
    REQUIRE(o.plan);
    const sql_lop *j = find_join(o.plan->root, SQL_JOINK_INNER);
    REQUIRE(j != NULL);
    const sql_lop *build = j->phys.build_left ? j->left : j->right;
    CHECK(build->est_rows < 200000);
    CHECK_EQ_INT(j->phys.algorithm, ENG_JOIN_ALGO_HASH);
    CHECK(j->est_rows > 1000000 && j->est_rows < 2000000);
    done(&o);
    /* lineitem with orders: 1.5M rows to build stay under the shared-table
     * limit (8M rows per thread: the shared table beat radix 2x on this
     * join, optimize.h). */
    o = opt("select l_quantity from lineitem, orders where l_orderkey = o_orderkey");
    REQUIRE(o.plan);
    j = find_join(o.plan->root, SQL_JOINK_INNER);
    REQUIRE(j != NULL);
    CHECK_EQ_INT(j->phys.algorithm, ENG_JOIN_ALGO_HASH);
    done(&o);
    /* Forced algorithms are honoured; a join without an equality is a
     * nested loop whatever the setting. */
    eng_opt_settings s = eng_opt_settings_default();
    s.join_algorithm = ENG_JOIN_ALGO_SORTMERGE;
    o = opt_with("select l_quantity from lineitem, orders where l_orderkey = o_orderkey", &s);
    REQUIRE(o.plan);
    j = find_join(o.plan->root, SQL_JOINK_INNER);
    REQUIRE(j != NULL);
    CHECK_EQ_INT(j->phys.algorithm, ENG_JOIN_ALGO_SORTMERGE);
    check_has(&o, "sortmerge", true);
    done(&o);
    eng_settings session = {.threads = 8, .join_algorithm = ENG_JOIN_RADIX};
    eng_opt_settings from = eng_opt_settings_from(&session);
    CHECK_EQ_INT(from.threads, 8);
    CHECK_EQ_INT(from.join_algorithm, ENG_JOIN_ALGO_RADIX);
    o = opt_with("select n_name from nation, region where n_regionkey < r_regionkey", &s);
    REQUIRE(o.plan);
    j = find_join(o.plan->root, SQL_JOINK_INNER);
    REQUIRE(j != NULL);
    CHECK_EQ_INT(j->phys.algorithm, ENG_JOIN_ALGO_NESTED_LOOP);
    done(&o);
}

static void test_estimates(void)
{
    /* Range on a date column with min/max: a quarter of 1992-01-01 ..
     * 1998-08-02 is about 3.8% of the orders. */
    optimized o = opt("select o_orderkey from orders where o_orderdate >= date '1995-01-01' and "
                      "o_orderdate < date '1995-04-01'");
    REQUIRE(o.plan);
    const sql_lop *get = find_get(o.plan->root, "orders");
    REQUIRE(get != NULL);
    const sql_lop *f = parent_of(o.plan->root, get);
    REQUIRE(f && f->kind == SQL_LOP_FILTER);
    CHECK(f->est_rows > 50000 && f->est_rows < 65000);
    CHECK_EQ_INT((long long)get->est_rows, 1500000);
    done(&o);
    /* Equality on a column with 5 distinct values. */
    o = opt("select c_name from customer where c_mktsegment = 'BUILDING'");
    REQUIRE(o.plan);
    get = find_get(o.plan->root, "customer");
    REQUIRE(get != NULL);
    CHECK_EQ_INT((long long)parent_of(o.plan->root, get)->est_rows, 30000);
    done(&o);
}

/* Assorted shapes: every plan is valid (opt() runs the validator) and no
 * subquery that the rules cover is left. */
static void test_assorted_queries(void)
{
    static const struct {
        const char *sql;
        int subqueries_left;
    } cases[] = {
        {"select n_name from nation union select r_name from region", 0},
        {"select n_name, r_name from nation, region where n_regionkey = r_regionkey union all "
         "select c_name, c_phone from customer where c_acctbal < 0",
         0},
        {"select * from (values (1, 'a'), (2, 'b')) v(x, y) where x > 1", 0},
        {"with t as (select n_regionkey k, count(*) c from nation group by n_regionkey) select "
         "r_name, c from region, t where r_regionkey = k and c > 3",
         0},
        {"select distinct n_regionkey from nation where n_nationkey < 10 order by 1 limit 3", 0},
        {"select c_name from customer right join nation on c_nationkey = n_nationkey where "
         "n_name = 'PERU'",
         0},
        {"select n_name, r_name from nation full join region on n_regionkey = r_regionkey and "
         "r_name = 'ASIA' where n_nationkey < 5",
         0},
        {"select n_name, (select count(*) from customer where c_nationkey = n_nationkey) from "
         "nation",
         0},
        {"select n_name from nation where exists (select * from region where r_regionkey = "
         "n_regionkey and exists (select * from customer where c_nationkey = n_nationkey))",
         0},
        {"select n_name from nation where n_regionkey in (select r_regionkey from region where "
         "r_name like 'A%') or n_nationkey = 1",
         0},
        {"select s_name from supplier where s_acctbal > all (select c_acctbal from customer "
         "where c_nationkey = s_nationkey)",
         0},
        {"select s_name from supplier where s_acctbal >= any (select c_acctbal from customer) "
         "and s_suppkey not in (select ps_suppkey from partsupp where ps_availqty < 5)",
         0},
        {"select n_regionkey, count(*) from nation group by n_regionkey having count(*) > "
         "(select count(*) / 10 from customer)",
         0},
        {"select p_name from part where p_retailprice > (select avg(l_extendedprice) from "
         "lineitem where l_partkey = p_partkey and l_quantity > (select avg(l_quantity) from "
         "lineitem where l_partkey = p_partkey))",
         0},
        {"select case when exists (select * from orders where o_custkey = c_custkey) then 1 "
         "else 0 end from customer",
         0},
        {"select c_name from customer where not (c_custkey in (select o_custkey from orders)) "
         "or c_acctbal is null",
         0},
        {"select o_orderkey from orders where o_totalprice > (select max(o_totalprice) * 0.9 "
         "from orders o2 where o2.o_custkey = orders.o_custkey having count(*) > 2)",
         0},
        {"select count(*) from lineitem, orders, customer where l_orderkey = o_orderkey and "
         "o_custkey = c_custkey and l_quantity > c_acctbal",
         0},
        {"select l_orderkey from lineitem where l_quantity + l_tax > 5 and 2 > 1 and null is "
         "null and l_linenumber = l_linenumber",
         0},
        {"select n1.n_name from nation n1, nation n2, nation n3 where n1.n_nationkey = "
         "n2.n_nationkey + 1 and n2.n_nationkey = n3.n_nationkey and n3.n_name = n1.n_name",
         0},
        {"select (select count(*) from region) + 1 as a from nation order by (select count(*) "
         "from region) + 1",
         0},
        {"select n_regionkey, (select max(r_name) from region where r_regionkey = n_regionkey) "
         "from nation group by n_regionkey, (select max(r_name) from region where r_regionkey = "
         "n_regionkey)",
         0},
        {"select n_name from nation order by (select count(*) from customer where c_nationkey = "
         "n_nationkey) desc",
         0},
        {"select n_regionkey, sum((select count(*) from customer where c_nationkey = "
         "n_nationkey)) from nation group by n_regionkey",
         0},
        {"select r_name, (select n_name from nation where n_regionkey = r_regionkey order by "
         "n_name limit 1) from region",
         1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        optimized o = opt(cases[i].sql);
        if (!o.plan) fprintf(stderr, "failed: %s\n", cases[i].sql);
        CHECK(o.plan != NULL);
        if (o.plan) {
            int left = count_subqueries(o.plan->root);
            if (left != cases[i].subqueries_left)
                fprintf(stderr, "%s: %d subqueries left\n%s", cases[i].sql, left, o.text);
            CHECK_EQ_INT(left, cases[i].subqueries_left);
            if (getenv("RACKDB_SHOW_PLANS")) fprintf(stderr, "%s\n%s\n", cases[i].sql, o.text);
        }
        done(&o);
    }
}

/* EXPLAIN: every operator's first line carries its estimate, also with a
 * subplan printed under an operator and a string constant spanning lines. */
static void test_explain(void)
{
    optimized o = opt("select r_name, (select n_name from nation where n_regionkey = "
                      "r_regionkey order by n_name limit 1) from region where r_comment <> "
                      "'x\ny'");
    REQUIRE(o.plan);
    if (getenv("RACKDB_SHOW_PLANS")) fputs(o.text, stderr);
    CHECK_STREQ(o.text, EXPLAIN_EXPECTED);
    done(&o);
}

/* Every allocation failure during optimization ends in an out-of-memory
 * status (never a crash); eventually the optimizer gets all it needs. */
static void test_out_of_memory(void)
{
    const char *sql = "select s_name from supplier, nation where s_nationkey = n_nationkey and "
                      "s_acctbal > (select avg(c_acctbal) from customer where c_nationkey = "
                      "s_nationkey) and exists (select * from partsupp where ps_suppkey = "
                      "s_suppkey)";
    bool succeeded = false;
    int ooms = 0;
    for (long n = 0; n < 5000 && !succeeded; n += 7) {
        sql_arena *a = sql_arena_create();
        REQUIRE(a);
        sql_plan *p = bind_sql(a, sql);
        REQUIRE(p);
        sql_arena_fail_after(a, n);
        sto_status st = eng_optimize(p, NULL);
        if (st) CHECK_STREQ(st->sqlstate, STO_OUT_OF_MEMORY);
        ooms += st != NULL;
        succeeded = st == NULL;
        if (succeeded) CHECK_EQ_INT(ocheck_plan(p, "after out-of-memory retries"), 0);
        sto_status_free(st);
        sql_arena_destroy(a);
    }
    CHECK(succeeded);
    CHECK(ooms > 10);
}

int main(void)
{
    if (!ocat_init(&cat)) {
        fprintf(stderr, "cannot load the TPC-H schema from %s\n", test_shared_dir());
        return 1;
    }
    RUN(test_idsets);
    RUN(test_exists_becomes_semi_and_anti);
    RUN(test_exists_under_or_is_mark);
    RUN(test_in_and_not_in);
    RUN(test_quantified_comparisons);
    RUN(test_scalar_subqueries);
    RUN(test_subquery_without_from);
    RUN(test_count_bug);
    RUN(test_magic_set);
    RUN(test_unnest_disabled);
    RUN(test_comma_join_gets_key);
    RUN(test_equivalence_classes);
    RUN(test_simplifications);
    RUN(test_outer_joins);
    RUN(test_or_factoring);
    RUN(test_pruning);
    RUN(test_chain_without_cross_products);
    RUN(test_greedy_beyond_dp);
    RUN(test_implied_equalities);
    RUN(test_build_side_and_algorithm);
    RUN(test_estimates);
    RUN(test_assorted_queries);
    RUN(test_explain);
    RUN(test_out_of_memory);
    ocat_free(&cat);
    return TEST_REPORT();
}
