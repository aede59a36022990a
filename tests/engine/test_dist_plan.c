/*
 * test_dist_plan.c — the distribution pass (engine/dist.h) on TPC-H
 * queries bound against SF 1 statistics (opt_catalog.h), for 3 servers.
 *
 * Every distributed plan must be well formed: a GATHER on the way to the
 * root, no exchange under another exchange without an operator between,
 * every exchange id distinct. Beyond that, each query's exchanges are
 * checked against what the rules say for its shape: a small side is
 * broadcast, two big sides are shuffled on their keys, an aggregation is
 * split around a shuffle (or a gather when ungrouped), and an input
 * already hashed on the group keys needs no exchange. RACKDB_DIST_PRINT=1
 * prints the plans.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "engine/dist.h"
#include "engine/opt_catalog.h"
#include "engine/optimize.h"

static opt_catalog cat;

typedef struct facts {
    int shuffles, broadcasts, gathers;
    int nested;       /* an exchange directly above an exchange */
    int dup_ids;      /* two exchanges with one id */
    int partial_aggs; /* aggregates right below a shuffle or gather */
    bool seen[256];
} facts;

static void inspect(const sql_lop *op, facts *f)
{
    if (!op) return;
    if (op->kind == SQL_LOP_EXCHANGE) {
        if (op->exchange.kind == SQL_EXCH_SHUFFLE) f->shuffles++;
        if (op->exchange.kind == SQL_EXCH_BROADCAST) f->broadcasts++;
        if (op->exchange.kind == SQL_EXCH_GATHER) f->gathers++;
        if (op->left->kind == SQL_LOP_EXCHANGE) f->nested++;
        if (op->left->kind == SQL_LOP_AGGREGATE) f->partial_aggs++;
        if (f->seen[op->exchange.id & 255]) f->dup_ids++;
        f->seen[op->exchange.id & 255] = true;
    }
    inspect(op->left, f);
    inspect(op->right, f);
}

/* Whether the result's path from the root (unary operators) has a GATHER
 * or the rows are in one place anyway (a replicated input). */
static bool gathered_on_top(const sql_lop *op)
{
    for (; op; op = op->right ? NULL : op->left)
        if (op->kind == SQL_LOP_EXCHANGE) return op->exchange.kind == SQL_EXCH_GATHER;
    return false;
}

/* The distributed plan of query q for n servers: its text and facts, and
 * the arena that holds it. */
typedef struct dist_plan {
    char *text;
    facts f;
    sql_arena *arena;
} dist_plan;

static void plan_done(dist_plan *d)
{
    free(d->text);
    sql_arena_destroy(d->arena);
}

/* Plans query q for n servers into *d; false (failure reported, nothing
 * to free) when it cannot. The plan's shape is checked on the way. */
static bool plan_query(int q, int n, dist_plan *d)
{
    memset(d, 0, sizeof(*d));
    char *text = ocat_query_text(q);
    if (!text) return false;
    d->arena = sql_arena_create();
    sql_plan *p = NULL;
    sto_status st = ocat_bind_text(&cat, NULL, d->arena, text, &p);
    free(text);
    eng_opt_settings s = eng_opt_settings_default();
    s.threads = 2;
    if (!st) st = eng_optimize(p, &s);
    if (!st) st = eng_distribute(p, n);
    if (st) {
        fprintf(stderr, "q%02d: %s\n", q, st->message);
        sto_status_free(st);
        plan_done(d);
        return false;
    }
    inspect(p->root, &d->f);
    CHECK(gathered_on_top(p->root));
    CHECK_EQ_INT(d->f.nested, 0);
    CHECK_EQ_INT(d->f.dup_ids, 0);
    d->text = eng_dist_explain(p);
    if (d->text && getenv("RACKDB_DIST_PRINT")) printf("-- q%02d, %d servers\n%s\n", q, n, d->text);
    if (!d->text) plan_done(d);
    return d->text != NULL;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* Q1: one grouped aggregation over lineitem: partial, shuffle on the group
 * keys, final; then the sort at the coordinator. No broadcast. */
static void test_q01(void)
{
    dist_plan d;
    REQUIRE(plan_query(1, 3, &d));
    CHECK_EQ_INT(d.f.shuffles, 1);
    CHECK_EQ_INT(d.f.broadcasts, 0);
    CHECK_EQ_INT(d.f.gathers, 1);
    CHECK_EQ_INT(d.f.partial_aggs, 1);
    CHECK(strstr(d.text, "SHUFFLE ON l_returnflag") != NULL);
    /* the sort is above the gather */
    CHECK(strstr(d.text, "SORT") < strstr(d.text, "GATHER"));
    plan_done(&d);
}

/* Q3: the filtered customers are small next to orders, and customers ⋈
 * orders small next to lineitem: broadcasts, not shuffles, for the joins;
 * the top-10 is cut on every server before the gather. */
static void test_q03(void)
{
    dist_plan d;
    REQUIRE(plan_query(3, 3, &d));
    CHECK(d.f.broadcasts >= 1);
    CHECK_EQ_INT(d.f.gathers, 1);
    CHECK_EQ_INT(count(d.text, "LIMIT 10"), 2);
    CHECK(strstr(d.text, "BROADCAST") != NULL);
    plan_done(&d);
}

/* Q5: region, nation, supplier are small: broadcast; the result is grouped
 * by n_name: pre-aggregated, shuffled on n_name. */
static void test_q05(void)
{
    dist_plan d;
    REQUIRE(plan_query(5, 3, &d));
    CHECK(d.f.broadcasts >= 1);
    CHECK(strstr(d.text, "SHUFFLE ON n_name") != NULL);
    CHECK_EQ_INT(d.f.partial_aggs >= 1, 1);
    CHECK_EQ_INT(d.f.gathers, 1);
    plan_done(&d);
}

/* Q13: customer LEFT JOIN orders: customers' unmatched rows are kept, so
 * customer must not be broadcast; both sides big: shuffled on the customer
 * key, and the count per customer is then local (hashed on c_custkey):
 * only the second aggregation (by count) shuffles. */
static void test_q13(void)
{
    dist_plan d;
    REQUIRE(plan_query(13, 3, &d));
    CHECK(strstr(d.text, "SHUFFLE ON c_custkey") != NULL);
    CHECK(strstr(d.text, "SHUFFLE ON o_custkey") != NULL);
    CHECK_EQ_INT(d.f.broadcasts, 0);
    CHECK_EQ_INT(d.f.shuffles, 3);
    CHECK_EQ_INT(d.f.gathers, 1);
    plan_done(&d);
}

/* Q18: lineitem grouped by l_orderkey (partial, shuffle, final), the
 * orders that qualify small enough to broadcast to the lineitem scan, the
 * top-100 cut on every server before the gather. */
static void test_q18(void)
{
    dist_plan d;
    REQUIRE(plan_query(18, 3, &d));
    CHECK(d.f.shuffles >= 2);
    CHECK_EQ_INT(d.f.gathers, 1);
    CHECK_EQ_INT(count(d.text, "LIMIT 100"), 2);
    plan_done(&d);
}

/* Every TPC-H query distributes, for 1 to 4 servers. */
static void test_all_queries(void)
{
    for (int n = 1; n <= 4; n++)
        for (int q = 1; q <= 22; q++) {
            dist_plan d;
            bool ok = plan_query(q, n, &d);
            CHECK(ok);
            if (ok) plan_done(&d);
        }
}

int main(void)
{
    if (!ocat_init(&cat)) {
        fprintf(stderr, "cannot load the TPC-H schema from %s\n", test_shared_dir());
        return 1;
    }
    RUN(test_q01);
    RUN(test_q03);
    RUN(test_q05);
    RUN(test_q13);
    RUN(test_q18);
    RUN(test_all_queries);
    ocat_free(&cat);
    return TEST_REPORT();
}
