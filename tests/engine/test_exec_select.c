/*
 * test_exec_select.c — single-table queries end to end through the C API:
 * compiled pipelines over small hand-made tables with NULLs, each run with
 * threads = 1 and threads = 2 (results must not depend on the worker
 * count): filters, projections, every aggregate (DISTINCT too), GROUP BY
 * with one, many and 200K groups, ORDER BY on several keys with NULLS
 * FIRST/LAST, LIMIT/OFFSET and top-k, DISTINCT, VALUES, INSERT ... SELECT,
 * CREATE TABLE AS, COPY (query) TO, run-time errors, memory_limit and
 * EXPLAIN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_check.h"
#include "test.h"

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE t (id INTEGER NOT NULL, g VARCHAR(10), x INTEGER, d DECIMAL(10,2), "
                  "f DOUBLE, dt DATE, s VARCHAR(40))"),
                "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO t VALUES "
                  "(1, 'a', 10, 1.50, 0.5, DATE '2020-01-01', 'short'),"
                  "(2, 'b', NULL, 2.25, 1.25, DATE '2020-02-01', 'a string longer than twelve'),"
                  "(3, 'a', 30, NULL, NULL, NULL, NULL),"
                  "(4, NULL, 40, 4.00, 2.0, DATE '2019-12-31', 'x'),"
                  "(5, 'b', 10, -1.10, -3.5, DATE '2021-06-15', 'another long string value'),"
                  "(6, 'c', NULL, 0.00, 0.0, DATE '2020-01-01', '')"),
                "INSERT 0 6");
}

static void test_filter_project(void)
{
    CHECK_STREQ(QS("SELECT id, x + 1 FROM t WHERE x > 10"), "3|31\n4|41");
    CHECK_STREQ(QS("SELECT id FROM t WHERE x IS NULL"), "2\n6");
    CHECK_STREQ(QS("SELECT id, d * 2, s FROM t WHERE g = 'b'"),
                "2|4.50|a string longer than twelve\n5|-2.20|another long string value");
    CHECK_STREQ(QS("SELECT id FROM t WHERE dt < DATE '2020-01-15' AND f >= 0"), "1\n4\n6");
    CHECK_STREQ(QS("SELECT id, f FROM t WHERE id = 2"), "2|1.25");
    CHECK_STREQ(QS("SELECT id FROM t WHERE id > 100"), "");
}

static void test_aggregates(void)
{
    CHECK_STREQ(Q("SELECT count(*), count(x), sum(x), min(x), max(x), avg(x) FROM t"),
                "6|4|90|10|40|22.5");
    CHECK_STREQ(Q("SELECT sum(d), min(d), max(d), sum(f), min(s), max(s), min(dt), max(dt) FROM t"),
                "6.65|-1.10|4.00|0.25||x|2019-12-31|2021-06-15");
    CHECK_STREQ(Q("SELECT count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x), count(DISTINCT g) "
                  "FROM t"),
                "3|80|26.666666666666668|3");
    CHECK_STREQ(Q("SELECT count(*), sum(x), max(s) FROM t WHERE id > 100"), "0|NULL|NULL");
    CHECK_STREQ(QS("SELECT g, count(*), sum(x), avg(d) FROM t GROUP BY g"),
                "NULL|1|40|4\na|2|40|1.5\nb|2|10|0.575\nc|1|NULL|0");
    CHECK_STREQ(QS("SELECT g, count(DISTINCT x) FROM t GROUP BY g"), "NULL|1\na|2\nb|1\nc|0");
    CHECK_STREQ(QS("SELECT g FROM t GROUP BY g HAVING count(*) > 1"), "a\nb");
    CHECK_STREQ(QS("SELECT x % 20, count(*) FROM t WHERE x IS NOT NULL GROUP BY x % 20"),
                "0|1\n10|3");
}

/* 200,000 rows 0..199999 in table big, made by doubling with INSERT ...
 * SELECT (so the engine writes its own test data). */
static void make_big(void)
{
    char sql[256];
    CHECK_STREQ(Q("CREATE TABLE big AS SELECT 1 AS k"), "SELECT 1");
    CHECK_STREQ(Q("DROP TABLE big"), "DROP TABLE");
    CHECK_STREQ(Q("CREATE TABLE big (k BIGINT)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO big VALUES (0), (1), (2), (3), (4)"), "INSERT 0 5");
    for (int i = 0; i < 15; i++) {
        snprintf(sql, sizeof(sql), "INSERT INTO big SELECT k + %lld FROM big", 5LL << i);
        Q(sql);
    }
    CHECK_STREQ(Q("SELECT count(*), count(DISTINCT k), min(k), max(k) FROM big"),
                "163840|163840|0|163839");
    CHECK_STREQ(Q("INSERT INTO big SELECT k + 163840 FROM big WHERE k < 36160"), "INSERT 0 36160");
}

static void test_many_groups(void)
{
    CHECK_STREQ(Q("SELECT count(*), sum(k) FROM big"), "200000|19999900000");
    CHECK_STREQ(Q("SELECT count(*), sum(c), min(c), max(c) FROM "
                  "(SELECT k, count(*) AS c FROM big GROUP BY k) AS g"),
                "200000|200000|1|1");
    CHECK_STREQ(Q("SELECT count(*), count(DISTINCT k % 1000) FROM big"), "200000|1000");
    CHECK_STREQ(Q("SELECT k, count(*) FROM big GROUP BY k ORDER BY k DESC LIMIT 3"),
                "199999|1\n199998|1\n199997|1");
    CHECK_STREQ(Q("SELECT k FROM big ORDER BY k DESC LIMIT 3 OFFSET 2"), "199997\n199996\n199995");
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT k FROM big WHERE k % 2 = 0 LIMIT 10) AS l"), "10");
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT k FROM big LIMIT 5 OFFSET 199998) AS l"), "2");
    CHECK_STREQ(Q("SELECT k % 7, count(*) FROM big GROUP BY k % 7 ORDER BY 1"),
                "0|28572\n1|28572\n2|28572\n3|28571\n4|28571\n5|28571\n6|28571");
    CHECK_STREQ(Q("SELECT max(k) FROM (SELECT k FROM big ORDER BY k) AS s"), "199999");
}

static void test_order_limit(void)
{
    CHECK_STREQ(Q("SELECT id, x FROM t ORDER BY x, id"), "1|10\n5|10\n3|30\n4|40\n2|NULL\n6|NULL");
    CHECK_STREQ(Q("SELECT id, x FROM t ORDER BY x NULLS FIRST, id DESC"),
                "6|NULL\n2|NULL\n5|10\n1|10\n3|30\n4|40");
    CHECK_STREQ(Q("SELECT id, x FROM t ORDER BY x DESC, id"),
                "2|NULL\n6|NULL\n4|40\n3|30\n1|10\n5|10");
    CHECK_STREQ(Q("SELECT id, g FROM t ORDER BY g DESC NULLS LAST, id LIMIT 3"), "6|c\n2|b\n5|b");
    CHECK_STREQ(Q("SELECT id FROM t ORDER BY id LIMIT 2 OFFSET 3"), "4\n5");
    CHECK_STREQ(Q("SELECT id FROM t ORDER BY id OFFSET 5"), "6");
    CHECK_STREQ(Q("SELECT id FROM t ORDER BY id LIMIT 0"), "");
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT id FROM t LIMIT 4) AS l"), "4");
    CHECK_STREQ(Q("SELECT s FROM t ORDER BY s NULLS FIRST"),
                "NULL\n\na string longer than twelve\nanother long string value\nshort\nx");
    CHECK_STREQ(Q("SELECT id, f FROM t ORDER BY f DESC NULLS LAST, id LIMIT 2"), "4|2\n2|1.25");
    CHECK_STREQ(Q("SELECT id * 10 AS y FROM t ORDER BY -id LIMIT 2"), "60\n50");
}

static void test_distinct_values(void)
{
    CHECK_STREQ(QS("SELECT DISTINCT g FROM t"), "NULL\na\nb\nc");
    CHECK_STREQ(QS("SELECT DISTINCT x, g FROM t WHERE id < 6"),
                "10|a\n10|b\n30|a\n40|NULL\nNULL|b");
    CHECK_STREQ(Q("VALUES (1, 'one'), (2, NULL), (3, 'three')"), "1|one\n2|NULL\n3|three");
    CHECK_STREQ(Q("SELECT 1 + 2, 'x'"), "3|x");
    CHECK_STREQ(Q("SELECT column1 * 2 FROM (VALUES (1), (5)) AS v ORDER BY 1 DESC"), "10\n2");
}

static void test_insert_ctas(void)
{
    CHECK_STREQ(Q("CREATE TABLE t2 AS SELECT id, g, d FROM t WHERE x IS NOT NULL"), "SELECT 4");
    CHECK_STREQ(Q("SELECT id, g, d FROM t2 ORDER BY id"),
                "1|a|1.50\n3|a|NULL\n4|NULL|4.00\n5|b|-1.10");
    CHECK(strncmp(Q("INSERT INTO t2 SELECT id + 100, s, f FROM t WHERE id = 2"), "ERROR 22001",
                  11) == 0);
    CHECK_STREQ(Q("INSERT INTO t2 (id, d) SELECT x, x FROM t WHERE x IS NOT NULL"), "INSERT 0 4");
    CHECK_STREQ(Q("SELECT count(*), sum(d) FROM t2"), "8|94.40");
    CHECK(strncmp(Q("INSERT INTO t (id, g) SELECT x, g FROM t"), "ERROR 23502", 11) == 0);
    CHECK_STREQ(Q("SELECT count(*) FROM t"), "6");
    CHECK_STREQ(Q("CREATE TABLE t2 AS SELECT 1"), "ERROR 42P07: relation \"t2\" already exists");
    CHECK_STREQ(Q("DROP TABLE t2"), "DROP TABLE");
}

/* COPY (query) TO: the rows written as CSV, read back with COPY FROM. */
static void test_copy_query(void)
{
    char path[128], sql[512];
    snprintf(path, sizeof(path), "/tmp/rackdb_test_exec_copy_%d.csv", (int)getpid());
    snprintf(sql, sizeof(sql),
             "COPY (SELECT id * 10, g FROM t WHERE id <= 3 ORDER BY id DESC) TO '%s' "
             "(FORMAT csv)",
             path);
    CHECK_STREQ(Q(sql), "COPY 3");
    CHECK_STREQ(Q("CREATE TABLE back (k INTEGER, g VARCHAR(10))"), "CREATE TABLE");
    snprintf(sql, sizeof(sql), "COPY back FROM '%s' (FORMAT csv)", path);
    CHECK_STREQ(Q(sql), "COPY 3");
    CHECK_STREQ(Q("SELECT k, g FROM back"), "30|a\n20|b\n10|a");
    CHECK_STREQ(Q("DROP TABLE back"), "DROP TABLE");
    snprintf(sql, sizeof(sql), "COPY (SELECT 1 / (id - id) FROM t) TO '%s'", path);
    CHECK_STREQ(Q(sql), "ERROR 22012: division by zero");
    unlink(path);
}

static void test_errors(void)
{
    CHECK_STREQ(Q("SELECT id / (x - 10) FROM t WHERE x IS NOT NULL"),
                "ERROR 22012: division by zero");
    CHECK_STREQ(Q("SELECT x * 2000000000 FROM t"), "ERROR 22003: integer out of range");
    CHECK_STREQ(Q("SELECT sum(k * 4611686018427387904) FROM big"),
                "ERROR 22003: bigint out of range");
    CHECK_STREQ(Q("CREATE TABLE bad AS SELECT 1 / (id - id) FROM t"),
                "ERROR 22012: division by zero");
    CHECK_STREQ(Q("SELECT * FROM bad"), "ERROR 42P01: relation \"bad\" does not exist");
    CHECK_STREQ(Q("SET memory_limit = '1MB'"), "SET");
    CHECK(strncmp(Q("SELECT k, count(*) FROM big GROUP BY k"), "ERROR 53200", 11) == 0);
    CHECK(strncmp(Q("SELECT k FROM big ORDER BY k"), "ERROR 53200", 11) == 0);
    /* top-k keeps O(k) rows per worker: fits where the full sort did not */
    CHECK_STREQ(Q("SELECT k FROM big ORDER BY k DESC LIMIT 2"), "199999\n199998");
    CHECK_STREQ(Q("SET memory_limit TO DEFAULT"), "SET");
    CHECK_STREQ(Q("SELECT count(*) FROM big"), "200000");
}

static void test_explain(void)
{
    const char *plan = Q("EXPLAIN SELECT g, sum(x) FROM t WHERE id > 1 GROUP BY g ORDER BY g");
    CHECK(strstr(plan, "PIPELINE 1: scan t -> aggregate") != NULL);
    CHECK(strstr(plan, "FILTER") != NULL);
    CHECK(strstr(plan, "SORT") != NULL);
    plan = Q("EXPLAIN ANALYZE SELECT g, sum(x) FROM t WHERE id > 1 GROUP BY g");
    CHECK(strstr(plan, "actual rows in 6, out 4") != NULL);
    /* per operator: 5 rows pass the filter, 4 groups come out */
    const char *filter = strstr(plan, "FILTER (id#1 > 1)");
    CHECK(filter && strstr(filter, "(actual rows 5)") &&
          strstr(filter, "(actual rows 5)") < strchr(filter, '\n'));
    CHECK(strstr(plan, "(actual rows in 5, out 4)") != NULL);
    CHECK(strstr(plan, "compile") != NULL);
}

static void run_all(const char *threads)
{
    char sql[64];
    snprintf(sql, sizeof(sql), "SET threads = %s", threads);
    CHECK_STREQ(Q(sql), "SET");
}

int main(void)
{
    if (!exec_open()) return 1;
    RUN(setup);
    const char *threads[] = {"1", "2"};
    for (int i = 0; i < 2; i++) {
        run_all(threads[i]);
        RUN(test_filter_project);
        RUN(test_aggregates);
        RUN(test_order_limit);
        RUN(test_distinct_values);
        RUN(test_insert_ctas);
        RUN(test_copy_query);
        if (i == 0) RUN(make_big);
        RUN(test_many_groups);
        RUN(test_errors);
        RUN(test_explain);
    }
    exec_close();
    return TEST_REPORT();
}
