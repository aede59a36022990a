/*
 * test_exec_setop.c — UNION / INTERSECT / EXCEPT [ALL] through the
 * executor (engine/physical_setop.c, engine/exec_setop.c): the pipelines
 * EXPLAIN shows (each side's row sink, the right one appended to the left
 * one's, then DISTINCT or the counting aggregation), the rows they count
 * under EXPLAIN ANALYZE, groups kept many times (INTERSECT ALL / EXCEPT ALL
 * with large counts), memory_limit on the appended rows, and both thread
 * counts. tests/sql/slt/set_operations.test covers the SQL semantics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_check.h"
#include "test.h"

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE a (k INTEGER, s VARCHAR(20))"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO a VALUES (1, 'one'), (2, 'two'), (2, 'two'), (NULL, NULL)"),
                "INSERT 0 4");
    CHECK_STREQ(Q("CREATE TABLE b (k INTEGER, s VARCHAR(20))"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO b VALUES (2, 'two'), (3, 'three'), (NULL, NULL)"), "INSERT 0 3");
    /* 2^17 rows of k = 0..7, each 16384 times */
    CHECK_STREQ(Q("CREATE TABLE big (k BIGINT)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO big VALUES (0), (1), (2), (3), (4), (5), (6), (7)"), "INSERT 0 8");
    for (int i = 0; i < 14; i++)
        Q("INSERT INTO big SELECT k FROM big");
    CHECK_STREQ(Q("SELECT count(*), count(DISTINCT k) FROM big"), "131072|8");
}

static void test_explain(void)
{
    const char *plan = Q("EXPLAIN SELECT k FROM a UNION ALL SELECT k FROM b");
    CHECK(strstr(plan, "PIPELINE 1: scan a -> set operation input") != NULL);
    CHECK(strstr(plan, "PIPELINE 2: scan b -> set operation input") != NULL);
    CHECK(strstr(plan, "UNION ALL RIGHT INPUT, APPENDED TO THE ROWS OF PIPELINE 1") != NULL);
    CHECK(strstr(plan, "PIPELINE 3: rows of pipeline 2 -> result") != NULL);
    CHECK(strstr(plan, "DISTINCT") == NULL);

    plan = Q("EXPLAIN SELECT k FROM a UNION SELECT k FROM b");
    CHECK(strstr(plan, "PIPELINE 3: rows of pipeline 2 -> distinct") != NULL);

    plan = Q("EXPLAIN SELECT k, s FROM a INTERSECT ALL SELECT k, s FROM b");
    CHECK(strstr(plan, "INTERSECT ALL LEFT INPUT (tagged left_row)") != NULL);
    CHECK(strstr(plan, "PIPELINE 3: rows of pipeline 2 -> aggregate") != NULL);
    CHECK(strstr(plan, "AGGS count(left_row") != NULL);
    CHECK(strstr(plan, "KEEP EACH GROUP min(left_rows, right_rows) times (INTERSECT ALL)") != NULL);

    plan = Q("EXPLAIN SELECT k FROM a EXCEPT SELECT k FROM b");
    CHECK(strstr(plan, "once where left_rows > 0 and right_rows = 0 (EXCEPT)") != NULL);
}

static void test_analyze(void)
{
    /* 4 + 3 rows appended, 4 groups (1, 2, 3, NULL), 2 of them on both sides */
    const char *plan = Q("EXPLAIN ANALYZE SELECT k FROM a INTERSECT SELECT k FROM b");
    CHECK(strstr(plan, "PIPELINE 2: scan b -> set operation input") != NULL);
    CHECK(strstr(plan, "(actual rows in 7, out 4,") != NULL);
    CHECK(strstr(plan, "PIPELINE 4: rows of pipeline 3 -> result") != NULL);
    CHECK(strstr(plan, "RESULT k  (actual rows in 2, out 2)") != NULL);
}

static void test_results(void)
{
    CHECK_STREQ(QS("SELECT k, s FROM a INTERSECT ALL SELECT k, s FROM b"), "2|two\nNULL|NULL");
    CHECK_STREQ(QS("SELECT k, s FROM a EXCEPT ALL SELECT k, s FROM b"), "1|one\n2|two");
    CHECK_STREQ(QS("SELECT s FROM b EXCEPT SELECT s FROM a"), "three");
    CHECK_STREQ(Q("SELECT k FROM a UNION SELECT k FROM b ORDER BY k NULLS FIRST"), "NULL\n1\n2\n3");
}

static void test_many(void)
{
    /* each k is 16384 times on the left and 2 * 16384 times (k < 4) on the
     * right: INTERSECT ALL keeps 16384 copies of 4 groups, EXCEPT ALL the
     * left's 16384 copies of the 4 groups with k >= 4 */
    const char *right = "SELECT k FROM big WHERE k < 4 UNION ALL SELECT k FROM big WHERE k < 4";
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(*), sum(k), count(DISTINCT k) FROM (SELECT k FROM big INTERSECT ALL "
             "(%s)) t",
             right);
    CHECK_STREQ(Q(sql), "65536|98304|4");
    snprintf(sql, sizeof(sql),
             "SELECT count(*), min(k), max(k) FROM (SELECT k FROM big EXCEPT ALL (%s)) t", right);
    CHECK_STREQ(Q(sql), "65536|4|7");
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM (SELECT k FROM big EXCEPT ALL SELECT k FROM big) t");
    CHECK_STREQ(Q(sql), "0");
    CHECK_STREQ(Q("SELECT count(*), sum(k) FROM (SELECT k FROM big UNION ALL SELECT k + 8 FROM big "
                  "UNION ALL SELECT k FROM big WHERE k = 7) t"),
                "278528|2080768");
}

static void test_memory_limit(void)
{
    CHECK_STREQ(Q("SET memory_limit = '1MB'"), "SET");
    CHECK(strncmp(Q("SELECT count(*) FROM (SELECT k FROM big UNION ALL SELECT k FROM big) t"),
                  "ERROR 53200", 11) == 0);
    CHECK_STREQ(Q("SET memory_limit TO DEFAULT"), "SET");
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT k FROM big UNION ALL SELECT k FROM big) t"),
                "262144");
}

int main(void)
{
    if (!exec_open()) return 1;
    RUN(setup);
    const char *threads[] = {"SET threads = 1", "SET threads = 2"};
    for (int i = 0; i < 2; i++) {
        CHECK_STREQ(Q(threads[i]), "SET");
        RUN(test_explain);
        RUN(test_analyze);
        RUN(test_results);
        RUN(test_many);
        RUN(test_memory_limit);
    }
    exec_close();
    return TEST_REPORT();
}
