/*
 * test_explain_tpch.c — EXPLAIN of the 22 TPC-H queries, as golden files.
 *
 * Each query is bound against the TPC-H schema with scale-factor-1 row
 * counts and statistics (tests/engine/opt_catalog.h, no data), optimized
 * with the default settings of a plain single server (automatic join
 * algorithm, every rule on; 2 threads, CI's core count, as in
 * test_optimize_tpch.c), cut into pipelines and printed by eng_explain_text
 * exactly as EXPLAIN prints it. The text must equal
 * tests/engine/explain/qNN.txt; after an intended plan change
 *
 *   RACKDB_UPDATE_GOLDEN=1 ./tests/engine_test_explain_tpch
 *
 * rewrites the files, and the diff is reviewed like code (docs/testing.md).
 * Independently of the text, a join without an equality key must have a
 * one-row side or pair up to 10000 rows in all (no cross product, no nested
 * loop over big inputs), and every pipeline that does not scan a table must carry an
 * estimate (a scan pipeline's header shows the rows stored, none here).
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "engine/executor.h"
#include "engine/opt_catalog.h"
#include "engine/optimize.h"
#include "engine/physical.h"

static opt_catalog cat;
/* Empty tables for the scans to name (the physical planner wants storage;
 * no row is ever read). */
static sto_table *tables[OCAT_NTABLES];

static bool lookup_table(void *ctx, const char *name, sql_table_info *out)
{
    if (!ocat_lookup_table(ctx, name, out)) return false;
    for (size_t t = 0; t < OCAT_NTABLES; t++)
        if (strcmp(ocat_facts[t].table, name) == 0) out->table = tables[t];
    return true;
}

static bool tables_init(void)
{
    for (size_t t = 0; t < OCAT_NTABLES; t++) {
        const sto_schema *s = ocat_schema(&cat, ocat_facts[t].table);
        sto_status st = s ? sto_table_new(s, &tables[t]) : sto_error_oom();
        if (st) {
            sto_status_free(st);
            return false;
        }
    }
    return true;
}

/* The EXPLAIN text of query q, or NULL (the failure reported). */
static char *explain_query(int q, sql_arena *a, eng_physical **ph)
{
    char *sql = ocat_query_text(q);
    if (!sql) return NULL;
    sql_catalog iface = {&cat, lookup_table, ocat_lookup_view};
    sql_plan *p = NULL;
    sto_status st = ocat_bind_text(&cat, &iface, a, sql, &p);
    free(sql);
    eng_opt_settings s = eng_opt_settings_default();
    s.threads = 2;
    if (!st) st = eng_optimize(p, &s);
    if (!st) st = eng_physical_build(p, ph);
    char *text = NULL;
    if (!st) st = eng_explain_text(*ph, NULL, &text);
    if (st) fprintf(stderr, "q%02d: %s %s\n", q, st->sqlstate, st->message);
    sto_status_free(st);
    return text;
}

/* Cross products and unestimated pipelines in ph; prints what it finds. */
static int plan_faults(int q, const eng_physical *ph)
{
    int faults = 0;
    for (unsigned i = 0; i < ph->npipes; i++) {
        const eng_pipe *p = &ph->pipes[i];
        /* A scan pipeline's header shows the table's stored rows (none
         * here); its SCAN line carries the catalog's estimate. */
        if (p->source != ENG_SOURCE_TABLE && !(p->est_rows >= 1)) {
            fprintf(stderr, "q%02d: pipeline %u has no estimate\n", q, p->id);
            faults++;
        }
        /* A join without an equality key compares every pair of rows: fine
         * against a one-row scalar subquery (Q11, Q22) or between two
         * filtered nations (Q7), a cross product anywhere bigger. */
        const sql_lop *j = p->sink_op;
        if (p->sink == ENG_SINK_JOIN && p->join_nkeys == 0 && j && j->left && j->right &&
            j->left->est_rows > 1 && j->right->est_rows > 1 &&
            j->left->est_rows * j->right->est_rows > 10000) {
            fprintf(stderr, "q%02d: pipeline %u builds a keyless join of %.0f x %.0f rows\n", q,
                    p->id, j->left->est_rows, j->right->est_rows);
            faults++;
        }
    }
    return faults;
}

static void test_tpch_explain(void)
{
    const char *src = getenv("RACKDB_SOURCE");
    if (!src) src = ".";
    bool update = getenv("RACKDB_UPDATE_GOLDEN") != NULL;
    for (int q = 1; q <= 22; q++) {
        sql_arena *a = sql_arena_create();
        REQUIRE(a != NULL);
        eng_physical *ph = NULL;
        char *got = explain_query(q, a, &ph);
        CHECK(got != NULL);
        if (!got) {
            sql_arena_destroy(a);
            continue;
        }
        CHECK_EQ_INT(plan_faults(q, ph), 0);
        char path[1024];
        snprintf(path, sizeof(path), "%s/tests/engine/explain/q%02d.txt", src, q);
        if (update) {
            FILE *fp = fopen(path, "w");
            CHECK(fp != NULL);
            if (fp) {
                fputs(got, fp);
                fclose(fp);
            }
        } else {
            char *want = tcat_read_file(path);
            if (!want) fprintf(stderr, "missing %s\n", path);
            if (want && strcmp(want, got) != 0)
                fprintf(stderr,
                        "q%02d EXPLAIN differs from %s (RACKDB_UPDATE_GOLDEN=1 rewrites it; "
                        "review the diff); got:\n%s",
                        q, path, got);
            CHECK(want && strcmp(want, got) == 0);
            free(want);
        }
        free(got);
        sql_arena_destroy(a);
    }
}

int main(void)
{
    if (!ocat_init(&cat) || !tables_init()) {
        fprintf(stderr, "cannot load the TPC-H schema from %s\n", test_shared_dir());
        return 1;
    }
    RUN(test_tpch_explain);
    for (size_t t = 0; t < OCAT_NTABLES; t++)
        sto_table_free(tables[t]);
    ocat_free(&cat);
    return TEST_REPORT();
}
