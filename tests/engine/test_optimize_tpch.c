/*
 * test_optimize_tpch.c — the optimizer on the 22 TPC-H queries, bound
 * against a catalog that reports scale-factor-1 row counts and statistics.
 *
 * Each optimized plan, printed with its estimates, must equal
 * tests/engine/plans/qNN.plan (RACKDB_UPDATE_GOLDEN=1 rewrites them; review
 * the diff). Independently of the golden text, every plan must have no
 * SUBQUERY expression left, no cross product with more than one row on
 * both sides, and an estimate on every operator.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "engine/opt_catalog.h"
#include "engine/opt_check.h"
#include "engine/optimize.h"

static opt_catalog cat;

static sql_walk find_subquery(sql_bexpr **slot, void *arg)
{
    (void)arg;
    return (*slot)->kind == SQL_BEXPR_SUBQUERY ? SQL_WALK_STOP : SQL_WALK_CONTINUE;
}

static bool expr_has_subquery(sql_bexpr *e)
{
    return e && !sql_bexpr_walk(&e, find_subquery, NULL);
}

/* Counts SUBQUERY expressions, bad cross products and missing estimates. */
typedef struct plan_facts {
    int subqueries, big_crosses, unestimated, joins;
} plan_facts;

static void inspect(const sql_lop *op, plan_facts *f)
{
    if (!op) return;
    if (op->est_rows < 1) f->unestimated++;
    switch (op->kind) {
    case SQL_LOP_FILTER:
        f->subqueries += expr_has_subquery(op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++)
            f->subqueries += expr_has_subquery(op->project.items[i].expr);
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            f->subqueries += expr_has_subquery(op->aggregate.groups[i].expr);
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            f->subqueries += expr_has_subquery(op->aggregate.aggs[i].arg);
        break;
    case SQL_LOP_SORT:
        for (uint32_t i = 0; i < op->sort.count; i++)
            f->subqueries += expr_has_subquery(op->sort.keys[i].expr);
        break;
    case SQL_LOP_JOIN:
        f->joins++;
        f->subqueries += expr_has_subquery(op->join.cond);
        if (!op->join.cond && op->left->est_rows > 1 && op->right->est_rows > 1) f->big_crosses++;
        break;
    default:
        break;
    }
    inspect(op->left, f);
    inspect(op->right, f);
}

static void test_tpch_plans(void)
{
    const char *src = getenv("RACKDB_SOURCE");
    if (!src) src = ".";
    bool update = getenv("RACKDB_UPDATE_GOLDEN") != NULL;
    eng_opt_settings s = eng_opt_settings_default();
    s.threads = 2;
    for (int q = 1; q <= 22; q++) {
        char *text = ocat_query_text(q);
        REQUIRE(text != NULL);
        sql_arena *a = sql_arena_create();
        sql_plan *p = NULL;
        sto_status st = ocat_bind_text(&cat, NULL, a, text, &p);
        free(text);
        if (st) fprintf(stderr, "q%02d: %s\n", q, st->message);
        CHECK(st == NULL && p != NULL);
        sto_status_free(st);
        if (!p) {
            sql_arena_destroy(a);
            continue;
        }
        st = eng_optimize(p, &s);
        CHECK(st == NULL);
        sto_status_free(st);
        char what[16];
        snprintf(what, sizeof(what), "q%02d", q);
        CHECK_EQ_INT(ocheck_plan(p, what), 0);
        plan_facts f = {0};
        inspect(p->root, &f);
        if (f.subqueries || f.big_crosses || f.unestimated)
            fprintf(stderr, "q%02d: %d subqueries, %d cross products, %d unestimated\n", q,
                    f.subqueries, f.big_crosses, f.unestimated);
        CHECK_EQ_INT(f.subqueries, 0);
        CHECK_EQ_INT(f.big_crosses, 0);
        CHECK_EQ_INT(f.unestimated, 0);
        char *got = eng_plan_explain_logical(p);
        CHECK(got != NULL);
        char path[1024];
        snprintf(path, sizeof(path), "%s/tests/engine/plans/q%02d.plan", src, q);
        if (got && update) {
            FILE *fp = fopen(path, "w");
            CHECK(fp != NULL);
            if (fp) {
                fputs(got, fp);
                fclose(fp);
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

/* With any set of rules switched off, and any forced join algorithm, the
 * plans stay well formed. */
static void test_rule_combinations(void)
{
    for (int q = 1; q <= 22; q++) {
        char *text = ocat_query_text(q);
        REQUIRE(text != NULL);
        for (unsigned bits = 0; bits < 32; bits++) {
            sql_arena *a = sql_arena_create();
            sql_plan *p = NULL;
            sto_status st = ocat_bind_text(&cat, NULL, a, text, &p);
            CHECK(st == NULL && p != NULL);
            sto_status_free(st);
            if (p) {
                eng_opt_settings s = eng_opt_settings_default();
                s.disabled = bits;
                s.threads = 1 + (int)(bits % 3);
                s.join_algorithm = (eng_join_algo)(bits % 4);
                st = eng_optimize(p, &s);
                CHECK(st == NULL);
                sto_status_free(st);
                char what[32];
                snprintf(what, sizeof(what), "q%02d rules off %#x", q, bits);
                CHECK_EQ_INT(ocheck_plan(p, what), 0);
                char *ex = eng_plan_explain_logical(p);
                CHECK(ex != NULL);
                free(ex);
            }
            sql_arena_destroy(a);
        }
        free(text);
    }
}

int main(void)
{
    if (!ocat_init(&cat)) {
        fprintf(stderr, "cannot load the TPC-H schema from %s\n", test_shared_dir());
        return 1;
    }
    RUN(test_tpch_plans);
    RUN(test_rule_combinations);
    ocat_free(&cat);
    return TEST_REPORT();
}
