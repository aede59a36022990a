/*
 * test_physical_share.c — what a plan computes twice runs once
 * (engine/physical_share.c): an aggregation written twice (a view read by
 * the query and by its subquery, two equal derived tables) becomes one
 * pipeline read twice, and a total without GROUP BY (SUM, MIN, MAX) is
 * computed from the groups of a grouped aggregation over the same input.
 *
 * Joins written twice are made once too, outer and semi joins that end
 * their pipelines included.
 *
 * The data has a NULL group key, NULL values under the aggregates and
 * inputs that filters make empty (a sum over no groups is NULL, as over no
 * rows). COUNT is never taken from groups: over no rows it is 0. The
 * expected rows were checked against DuckDB 1.5.6; EXPLAIN shows the
 * sharing (pipeline counts, the aggregate over the groups' sums). Each
 * query runs with 1 and 2 threads.
 */
#include <stdio.h>
#include <string.h>

#include "exec_check.h"
#include "test.h"

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE it (ik INTEGER, q INTEGER, v INTEGER)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO it VALUES (1, 10, 1), (1, 20, 2), (1, 30, 3), (2, 5, 4), "
                  "(2, 15, 5), (2, NULL, 6), (3, 1, 7), (3, 100, 8), (NULL, 7, 9), "
                  "(NULL, 70, 10), (4, NULL, 11), (6, 1, 12)"),
                "INSERT 0 12");
    CHECK_STREQ(Q("CREATE VIEW rv (k, total) AS SELECT ik, sum(q) FROM it GROUP BY ik"),
                "CREATE VIEW");
    CHECK_STREQ(Q("CREATE TABLE pt (pk INTEGER, grp VARCHAR(5))"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO pt VALUES (1, 'a'), (2, 'a'), (2, 'a'), (3, 'b'), (4, 'a'), "
                  "(NULL, 'a'), (5, 'a')"),
                "INSERT 0 7");
}

/* How many pipelines the plan of sql has. */
static int pipelines(const char *sql)
{
    int n = 0;
    for (const char *p = explain_of(sql); (p = strstr(p, "PIPELINE ")); p++)
        n++;
    return n;
}

#define VIEW_Q                                                                                     \
    "SELECT k, total FROM rv WHERE total = (SELECT max(total) FROM rv) OR total IS NULL ORDER BY " \
    "k"
#define TWIN_Q                                                                                     \
    "SELECT a.ik, a.s, b.s FROM (SELECT ik, sum(v) AS s FROM it GROUP BY ik) a, "                  \
    "(SELECT ik, sum(v) AS s FROM it GROUP BY ik) b WHERE a.ik = b.ik - 1 ORDER BY 1"

static void test_same_aggregation(void)
{
    CHECK_STREQ(Q(VIEW_Q), "3|101\n4|NULL");
    /* scan → groups; groups → max → build; groups → probe → sort; result */
    CHECK_EQ_INT(pipelines(VIEW_Q), 5);
    CHECK_STREQ(Q(TWIN_Q), "1|6|15\n2|15|15\n3|15|11");
    CHECK_EQ_INT(pipelines(TWIN_Q), 4);
}

#define SUM_Q                                                                                      \
    "SELECT ik, sum(v) AS s FROM it GROUP BY ik HAVING sum(v) > (SELECT sum(v) FROM it) / 5 "      \
    "ORDER BY ik"
#define MINMAX_Q                                                                                   \
    "SELECT ik, max(q) FROM it GROUP BY ik HAVING max(q) = (SELECT max(q) FROM it) OR "            \
    "min(q) = (SELECT min(q) FROM it) ORDER BY ik"
#define FILTERED_Q                                                                                 \
    "SELECT ik, sum(v), min(q) FROM it WHERE q > 1 GROUP BY ik HAVING sum(v) * 4 > "               \
    "(SELECT sum(v) FROM it WHERE q > 1) AND min(q) > (SELECT min(q) FROM it WHERE q > 1) "        \
    "ORDER BY ik"
#define EMPTY_Q                                                                                    \
    "SELECT ik, sum(v) FROM it WHERE v > 100 GROUP BY ik HAVING sum(v) > "                         \
    "(SELECT sum(v) FROM it WHERE v > 100) ORDER BY ik"
#define EMPTY_TOTAL_Q                                                                              \
    "SELECT (SELECT sum(v) FROM it WHERE v > 100), (SELECT max(v) FROM it WHERE v > 100)"
#define COUNT_Q                                                                                    \
    "SELECT ik, count(*) FROM it GROUP BY ik HAVING count(*) > "                                   \
    "(SELECT count(*) FROM it WHERE ik > 100) ORDER BY ik"

static void test_total_from_groups(void)
{
    CHECK_STREQ(Q(SUM_Q), "NULL|19");
    CHECK(explains(SUM_Q, "AGGS sum(sum#"));
    CHECK_STREQ(Q(MINMAX_Q), "3|100\n6|1");
    CHECK(explains(MINMAX_Q, "AGGS max(max#") && explains(MINMAX_Q, "AGGS min(min#"));
    CHECK_STREQ(Q(FILTERED_Q), "NULL|19|7");
    CHECK(explains(FILTERED_Q, "AGGS sum(sum#"));
    CHECK_STREQ(Q(EMPTY_Q), "");
    CHECK(explains(EMPTY_Q, "AGGS sum(sum#"));
    CHECK_STREQ(Q(EMPTY_TOTAL_Q), "NULL|NULL");
    CHECK_STREQ(Q(COUNT_Q), "1|3\n2|3\n3|2\n4|1\n6|1\nNULL|2");
    CHECK(!explains(COUNT_Q, "AGGS sum(count"));
}

/* A join written twice: its rows are made once, also where the join itself
 * ends its pipeline (FULL: unmatched build rows; a semi join built on its
 * left side: the flagged ones). */
#define FULL_Q                                                                                     \
    "SELECT count(*), count(x.ik), count(y.pk) FROM "                                              \
    "(SELECT it.ik, p.pk FROM it FULL JOIN pt p ON p.pk = it.ik) x, "                              \
    "(SELECT it.ik, p.pk FROM it FULL JOIN pt p ON p.pk = it.ik) y WHERE x.pk = y.ik"
#define SEMI_Q                                                                                     \
    "SELECT x.pk, y.c FROM (SELECT p.pk FROM pt p WHERE EXISTS "                                   \
    "(SELECT 1 FROM it WHERE it.ik = p.pk AND it.q > 5)) x, (SELECT p.pk, count(*) AS c FROM "     \
    "pt p WHERE EXISTS (SELECT 1 FROM it WHERE it.ik = p.pk AND it.q > 5) GROUP BY p.pk) y "       \
    "WHERE x.pk = y.pk ORDER BY 1, 2"

static void test_same_join(void)
{
    CHECK_STREQ(Q(FULL_Q), "50|50|50");
    CHECK(explains(FULL_Q, "ROWS (read by more than one pipeline)"));
    CHECK_STREQ(Q(SEMI_Q), "1|1\n2|2\n2|2\n3|1");
    CHECK(explains(SEMI_Q, "ROWS (read by more than one pipeline)"));
}

int main(void)
{
    if (!exec_open()) return 1;
    RUN(setup);
    const char *threads[] = {"SET threads = 1", "SET threads = 2"};
    for (int i = 0; i < 2; i++) {
        CHECK_STREQ(Q(threads[i]), "SET");
        RUN(test_same_aggregation);
        RUN(test_total_from_groups);
        RUN(test_same_join);
    }
    exec_close();
    return TEST_REPORT();
}
