/*
 * test_exec_join.c — joins end to end through the C API: every join kind
 * the optimizer makes (INNER, CROSS, LEFT, RIGHT, FULL, SEMI, ANTI, MARK, SINGLE and
 * nested loops without an equality key) over small tables with NULL keys,
 * duplicate keys and empty sides, each run with threads 1 and 2 and with
 * join_algorithm forced to auto, hash, radix and sortmerge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_check.h"
#include "test.h"

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE a (k INTEGER, v VARCHAR(20))"), "CREATE TABLE");
    CHECK_STREQ(
        Q("INSERT INTO a VALUES (1, 'a1'), (2, 'a2'), (2, 'a2b'), (3, 'a3'), (NULL, 'anull')"),
        "INSERT 0 5");
    CHECK_STREQ(Q("CREATE TABLE b (k INTEGER, w INTEGER)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO b VALUES (2, 20), (2, 21), (3, 30), (4, 40), (NULL, 99)"),
                "INSERT 0 5");
    CHECK_STREQ(Q("CREATE TABLE e (k INTEGER)"), "CREATE TABLE");
    /* b's rows 25 times over (NULL keys and duplicates included): bigger
     * than a, so SEMI and ANTI joins of a with it build on a */
    CHECK_STREQ(Q("CREATE TABLE big AS SELECT b1.k, b1.w FROM b b1, b b2, b b3 WHERE b3.w < 25"),
                "SELECT 50");
    /* 12500 rows, 60% of them with key 7 (skew: more than one probe task
     * of a partition), the rest b's keys with NULLs and duplicates */
    CHECK_STREQ(Q("CREATE TABLE sk AS SELECT CASE WHEN x.w < 40 THEN 7 ELSE y.k END AS k, "
                  "x.w + y.w + z.w AS w FROM big x, big y, b z"),
                "SELECT 12500");
}

static void test_inner(void)
{
    CHECK_STREQ(QS("SELECT a.v, b.w FROM a JOIN b ON a.k = b.k"),
                "a2b|20\na2b|21\na2|20\na2|21\na3|30");
    CHECK_STREQ(QS("SELECT a.v, b.w FROM b JOIN a ON b.k = a.k WHERE b.w > 20"),
                "a2b|21\na2|21\na3|30");
    /* a string key and two keys; duplicates on both sides */
    CHECK_STREQ(Q("SELECT count(*) FROM a x JOIN a y ON x.k = y.k AND x.v = y.v"), "4");
    CHECK_STREQ(Q("SELECT count(*) FROM a x JOIN a y ON x.k = y.k"), "6");
    CHECK_STREQ(Q("SELECT count(*) FROM a x JOIN a y ON x.v = y.v"), "5");
    CHECK_STREQ(Q("SELECT count(*) FROM a, b"), "25");
    /* three tables */
    CHECK_STREQ(QS("SELECT x.v, y.v, b.w FROM a x JOIN a y ON x.k = y.k JOIN b ON b.k = y.k "
                   "WHERE x.k = 3"),
                "a3|a3|30");
}

/* Equalities implied by written ones (x.k = b.k AND b.k = y.k gives x.k =
 * y.k) let the optimizer join x with y directly; the result must be the
 * written one whatever the order: NULL keys never match, duplicates
 * multiply, an empty table empties it, and a table with two members of
 * one class (bb.k and bb.w) keeps their equality. */
static void test_implied_equalities(void)
{
    CHECK_STREQ(Q("SELECT count(*) FROM a x, b, a y WHERE x.k = b.k AND b.k = y.k"), "9");
    CHECK_STREQ(QS("SELECT x.v, y.v, b.w FROM a x, b, a y WHERE x.k = b.k AND b.k = y.k AND "
                   "b.w = 30"),
                "a3|a3|30");
    CHECK_STREQ(Q("SELECT count(*) FROM a x, b, a y, e WHERE x.k = b.k AND b.k = y.k AND y.k = "
                  "e.k"),
                "0");
    CHECK_STREQ(Q("SELECT count(*) FROM a, (SELECT k, CASE WHEN w = 20 THEN k ELSE w END AS w "
                  "FROM b) bb WHERE a.k = bb.k AND bb.w = a.k"),
                "2");
    CHECK_STREQ(Q("SELECT sum(b.w) FROM a x, b, a y, b z WHERE x.k = b.k AND y.k = z.k AND b.k "
                  "= z.k"),
                "358");
}

static void test_nested_loop(void)
{
    CHECK_STREQ(QS("SELECT a.v, b.w FROM a, b WHERE a.k < b.k AND b.w < 35"),
                "a1|20\na1|21\na1|30\na2b|30\na2|30");
    CHECK_STREQ(QS("SELECT v FROM a WHERE k > (SELECT avg(k) FROM b)"), "a3"); /* 2.75 */
    CHECK_STREQ(QS("SELECT v FROM a WHERE k > (SELECT max(k) FROM b)"), "");
    CHECK_STREQ(QS("SELECT v FROM a WHERE k >= (SELECT min(k) + 1 FROM b)"), "a3");
}

static void test_left(void)
{
    CHECK_STREQ(QS("SELECT a.v, b.w FROM a LEFT JOIN b ON a.k = b.k"),
                "a1|NULL\na2b|20\na2b|21\na2|20\na2|21\na3|30\nanull|NULL");
    CHECK_STREQ(QS("SELECT a.v, b.w FROM a LEFT JOIN b ON a.k = b.k AND b.w > 20"),
                "a1|NULL\na2b|21\na2|21\na3|30\nanull|NULL");
    CHECK_STREQ(Q("SELECT count(*), count(e.k) FROM a LEFT JOIN e ON a.k = e.k"), "5|0");
}

static void test_right_full(void)
{
    CHECK_STREQ(QS("SELECT a.v, b.w FROM a FULL JOIN b ON a.k = b.k"),
                "NULL|40\nNULL|99\na1|NULL\na2b|20\na2b|21\na2|20\na2|21\na3|30\nanull|NULL");
    CHECK_STREQ(QS("SELECT a.v, b.w FROM a RIGHT JOIN b ON a.k = b.k"),
                "NULL|40\nNULL|99\na2b|20\na2b|21\na2|20\na2|21\na3|30");
    CHECK_STREQ(QS("SELECT a.v, b.w FROM a FULL JOIN b ON a.k = b.k AND b.w > 20"),
                "NULL|20\nNULL|40\nNULL|99\na1|NULL\na2b|21\na2|21\na3|30\nanull|NULL");
    CHECK_STREQ(Q("SELECT count(*), count(b.k) FROM e FULL JOIN b ON e.k = b.k"), "5|4");
    CHECK_STREQ(Q("SELECT count(*) FROM a FULL JOIN e ON a.k = e.k"), "5");
}

static void test_semi_anti(void)
{
    CHECK_STREQ(QS("SELECT v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)"),
                "a2\na2b\na3");
    CHECK_STREQ(QS("SELECT v FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k)"),
                "a1\nanull");
    CHECK_STREQ(QS("SELECT v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.w > 25)"),
                "a3");
    CHECK_STREQ(QS("SELECT v FROM a WHERE NOT EXISTS (SELECT 1 FROM e WHERE e.k = a.k)"),
                "a1\na2\na2b\na3\nanull");
    CHECK_STREQ(QS("SELECT v FROM a WHERE EXISTS (SELECT 1 FROM e WHERE e.k = a.k)"), "");
    CHECK_STREQ(QS("SELECT v FROM a WHERE k IN (SELECT k FROM b)"), "a2\na2b\na3");
}

/* SEMI and ANTI joins whose left input is the smaller one build on it: the
 * probe of the right input flags the left rows it matches. */
static void test_semi_anti_build_left(void)
{
    const char *t = Q("EXPLAIN SELECT v FROM a WHERE EXISTS (SELECT 1 FROM big WHERE big.k = a.k)");
    CHECK(strstr(t, "SEMI PROBE (build side left: flags its matches)") != NULL);
    CHECK(strstr(t, "BUILD ROWS OF PIPELINE 1 A PROBE MATCHED") != NULL);
    CHECK_STREQ(QS("SELECT v FROM a WHERE EXISTS (SELECT 1 FROM big WHERE big.k = a.k)"),
                "a2\na2b\na3");
    CHECK_STREQ(QS("SELECT v FROM a WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = a.k)"),
                "a1\nanull");
    t = Q("EXPLAIN SELECT v FROM a WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = a.k)");
    CHECK(strstr(t, "ANTI PROBE (build side left: flags its matches)") != NULL);
    CHECK(strstr(t, "BUILD ROWS OF PIPELINE 1 NO PROBE MATCHED") != NULL);
    /* a residual decides the match */
    CHECK_STREQ(QS("SELECT v FROM a WHERE EXISTS (SELECT 1 FROM big WHERE big.k = a.k AND big.w > "
                   "a.k * 10)"),
                "a2\na2b");
    CHECK_STREQ(QS("SELECT v FROM a WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = a.k AND "
                   "big.w > a.k * 10)"),
                "a1\na3\nanull");
    /* empty sides */
    CHECK_STREQ(QS("SELECT k FROM e WHERE EXISTS (SELECT 1 FROM big WHERE big.k = e.k)"), "");
    CHECK_STREQ(QS("SELECT k FROM e WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = e.k)"), "");
    CHECK_STREQ(Q("SELECT count(*) FROM a WHERE EXISTS (SELECT 1 FROM big WHERE big.k = a.k AND "
                  "big.w > 1000)"),
                "0");
    CHECK_STREQ(Q("SELECT count(*) FROM a WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = a.k "
                  "AND big.w > 1000)"),
                "5");
}

/* Skewed keys: each join against the same join written without an equality
 * key (a nested loop over `x.k <= y.k AND x.k >= y.k`), which every
 * algorithm must agree with. */
static void test_skew(void)
{
    static const char *const pairs[][2] = {
        {"SELECT count(*), sum(x.w - y.w) FROM sk x JOIN big y ON x.k = y.k",
         "SELECT count(*), sum(x.w - y.w) FROM sk x JOIN big y ON x.k <= y.k AND x.k >= y.k"},
        {"SELECT count(*), sum(x.w), count(y.w) FROM sk x LEFT JOIN big y ON x.k = y.k",
         "SELECT count(*), sum(x.w), count(y.w) FROM sk x LEFT JOIN big y ON x.k <= y.k AND "
         "x.k >= y.k"},
        {"SELECT count(*), count(x.w), count(y.w) FROM big x FULL JOIN sk y ON x.k = y.k AND "
         "y.w > 150",
         "SELECT count(*), count(x.w), count(y.w) FROM big x FULL JOIN sk y ON x.k <= y.k AND "
         "x.k >= y.k AND y.w > 150"},
        {"SELECT count(*), sum(w) FROM sk x WHERE EXISTS (SELECT 1 FROM big y WHERE y.k = x.k AND "
         "y.w < x.w - 150)",
         "SELECT count(*), sum(w) FROM sk x WHERE EXISTS (SELECT 1 FROM big y WHERE y.k <= x.k "
         "AND y.k >= x.k AND y.w < x.w - 150)"},
        {"SELECT count(*), sum(w) FROM big x WHERE NOT EXISTS (SELECT 1 FROM sk y WHERE y.k = x.k "
         "AND y.w > 250)",
         "SELECT count(*), sum(w) FROM big x WHERE NOT EXISTS (SELECT 1 FROM sk y WHERE y.k <= x.k "
         "AND y.k >= x.k AND y.w > 250)"},
        {"SELECT count(*), sum(y.w) FROM big x JOIN sk y ON x.k = y.k",
         "SELECT count(*), sum(y.w) FROM big x JOIN sk y ON x.k <= y.k AND x.k >= y.k"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        char want[256];
        snprintf(want, sizeof(want), "%s", Q(pairs[i][1]));
        CHECK(strncmp(want, "ERROR", 5) != 0);
        CHECK_STREQ(Q(pairs[i][0]), want);
    }
}

static void test_mark(void)
{
    /* b has a NULL key: no match means unknown, never false */
    CHECK_STREQ(QS("SELECT v FROM a WHERE k NOT IN (SELECT k FROM b)"), "");
    CHECK_STREQ(QS("SELECT v FROM a WHERE k NOT IN (SELECT k FROM b WHERE k IS NOT NULL)"), "a1");
    CHECK_STREQ(QS("SELECT v FROM a WHERE k NOT IN (SELECT k FROM e)"), "a1\na2\na2b\na3\nanull");
    CHECK_STREQ(QS("SELECT v, k IN (SELECT k FROM b) FROM a"),
                "a1|NULL\na2b|t\na2|t\na3|t\nanull|NULL");
    CHECK_STREQ(QS("SELECT v, k IN (SELECT k FROM b WHERE k IS NOT NULL) FROM a"),
                "a1|f\na2b|t\na2|t\na3|t\nanull|NULL");
    CHECK_STREQ(QS("SELECT v, k IN (SELECT k FROM e) FROM a"), "a1|f\na2b|f\na2|f\na3|f\nanull|f");
}

static void test_single(void)
{
    CHECK_STREQ(QS("SELECT v, (SELECT w FROM b WHERE b.k = a.k AND b.w > 20) FROM a"),
                "a1|NULL\na2b|21\na2|21\na3|30\nanull|NULL");
    CHECK(strncmp(Q("SELECT v, (SELECT w FROM b WHERE b.k = a.k) FROM a"), "ERROR 21000", 11) == 0);
}

/* Which algorithm join_algorithm asked for: EXPLAIN names it beside the one
 * that runs (the shared table, for every algorithm today). */
/* What EXPLAIN says of the build of the current algorithm. */
static const char *build_text;

static void test_explain(void)
{
    const char *t = Q("EXPLAIN SELECT a.v, b.w FROM a JOIN b ON a.k = b.k");
    CHECK(strstr(t, build_text) != NULL);
    CHECK(strstr(Q("EXPLAIN SELECT a.v, b.w FROM a, b WHERE a.k < b.k"), "nested loop") != NULL);
    t = Q("EXPLAIN SELECT a.v, b.w FROM a JOIN b ON a.k = b.k");
    CHECK(strstr(t, "JOIN INNER PROBE") != NULL);
    t = Q("EXPLAIN ANALYZE SELECT a.v, b.w FROM a JOIN b ON a.k = b.k");
    CHECK(strstr(t, "JOIN INNER PROBE") != NULL);
    CHECK(strstr(t, "(actual rows 5)") != NULL);
    /* radix and sort-merge joins partition the probe side in a pipeline of
     * its own and say how: partitions or ranges, passes, time */
    bool radix = strstr(build_text, "radix") != NULL;
    bool sm = strstr(build_text, "SORT-MERGE") != NULL;
    CHECK((strstr(t, "RADIX JOIN PARTITION") != NULL) == radix);
    CHECK((strstr(t, "SORT-MERGE JOIN RANGE PARTITION, SORT") != NULL) == sm);
    if (radix) CHECK(strstr(t, "(1 partition, 1 pass, partitioned and built in ") != NULL);
    if (sm) CHECK(strstr(t, "(1 range, partitioned and sorted in ") != NULL);
}

int main(void)
{
    if (!exec_open()) return 1;
    RUN(setup);
    const char *algos[] = {"auto", "hash", "radix", "sortmerge"};
    for (int th = 1; th <= 2; th++)
        for (int a = 0; a < 4; a++) {
            CHECK(exec_set_run(th, algos[a]));
            build_text = a == 2   ? "HASH JOIN BUILD (radix partitioned)"
                         : a == 3 ? "SORT-MERGE JOIN BUILD (range partitioned, sorted)"
                                  : "HASH JOIN BUILD (shared table";
            RUN(test_inner);
            RUN(test_implied_equalities);
            RUN(test_nested_loop);
            RUN(test_left);
            RUN(test_right_full);
            RUN(test_semi_anti);
            RUN(test_semi_anti_build_left);
            RUN(test_skew);
            RUN(test_mark);
            RUN(test_single);
            RUN(test_explain);
        }
    exec_close();
    return TEST_REPORT();
}
