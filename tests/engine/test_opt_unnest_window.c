/*
 * test_opt_unnest_window.c — a correlated AVG/MIN/MAX over the outer
 * query's own tables becomes the aggregate over the outer join grouped by
 * the correlation (engine/opt_unnest_window.c), whose rows the physical
 * planner then makes once (engine/physical_share.c).
 *
 * The tables hold what could break the rewrite: a part key twice (each
 * item row then repeats twice in the outer join: AVG, MIN, MAX and
 * DISTINCT do not care, SUM and COUNT would), NULL keys on both sides,
 * NULL values under the aggregate, parts without items and items without
 * parts. The expected rows were checked against DuckDB 1.5.6. EXPLAIN shows
 * which queries take the rewrite (a ROWS sink read twice) and which must
 * not: SUM, an outer filter on the subquery's table that the subquery does
 * not have, a subquery filter the outer query does not have, and a table
 * that appears twice. Each query runs with 1 and 2 threads.
 */
#include <stdio.h>
#include <string.h>

#include "exec_check.h"
#include "test.h"

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE pt (pk INTEGER, grp VARCHAR(5))"), "CREATE TABLE");
    CHECK_STREQ(Q("CREATE TABLE it (ik INTEGER, q INTEGER, v INTEGER)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO pt VALUES (1, 'a'), (2, 'a'), (2, 'a'), (3, 'b'), (4, 'a'), "
                  "(NULL, 'a'), (5, 'a')"),
                "INSERT 0 7");
    CHECK_STREQ(Q("INSERT INTO it VALUES (1, 10, 1), (1, 20, 2), (1, 30, 3), (2, 5, 4), "
                  "(2, 15, 5), (2, NULL, 6), (3, 1, 7), (3, 100, 8), (NULL, 7, 9), "
                  "(NULL, 70, 10), (4, NULL, 11), (6, 1, 12)"),
                "INSERT 0 12");
}

/* Whether the plan of sql reads a join's rows twice (the rewrite fired). */
static int shared(const char *sql)
{
    return explains(sql, "ROWS (read by more than one pipeline)");
}

#define AVG_Q                                                                                      \
    "SELECT p.pk, i.q, i.v FROM pt p, it i WHERE p.pk = i.ik AND p.grp = 'a' AND "                 \
    "i.q < (SELECT avg(i2.q) FROM it i2 WHERE i2.ik = p.pk) ORDER BY 1, 2, 3"
#define MIN_Q                                                                                      \
    "SELECT p.pk, i.q, i.v FROM pt p, it i WHERE p.pk = i.ik AND p.grp = 'a' AND "                 \
    "i.q = (SELECT min(i2.q) FROM it i2 WHERE i2.ik = p.pk) ORDER BY 1, 2, 3"
#define AGG_Q                                                                                      \
    "SELECT sum(i.v), count(*) FROM it i, pt p WHERE i.ik = p.pk AND p.grp = 'a' AND "             \
    "i.q > 0.5 * (SELECT avg(i2.q) FROM it i2 WHERE i2.ik = p.pk)"
#define DISTINCT_Q                                                                                 \
    "SELECT p.pk, i.q FROM pt p, it i WHERE p.pk = i.ik AND "                                      \
    "i.q > (SELECT count(DISTINCT i2.q) FROM it i2 WHERE i2.ik = p.pk) ORDER BY 1, 2"
#define EMPTY_Q                                                                                    \
    "SELECT p.pk, i.q FROM pt p, it i WHERE p.pk = i.ik AND p.grp = 'zzz' AND "                    \
    "i.q < (SELECT avg(i2.q) FROM it i2 WHERE i2.ik = p.pk) ORDER BY 1, 2"

static void test_rewritten(void)
{
    CHECK_STREQ(Q(AVG_Q), "1|10|1\n2|5|4\n2|5|4");
    CHECK(shared(AVG_Q));
    CHECK_STREQ(Q(MIN_Q), "1|10|1\n2|5|4\n2|5|4");
    CHECK(shared(MIN_Q));
    CHECK_STREQ(Q(AGG_Q), "15|4");
    CHECK(shared(AGG_Q));
    CHECK_STREQ(Q(DISTINCT_Q), "1|10\n1|20\n1|30\n2|5\n2|5\n2|15\n2|15\n3|100");
    CHECK(shared(DISTINCT_Q));
    CHECK_STREQ(Q(EMPTY_Q), "");
}

#define SUM_Q                                                                                      \
    "SELECT p.pk, i.q, i.v FROM pt p, it i WHERE p.pk = i.ik AND p.grp = 'a' AND "                 \
    "i.q * 3 < (SELECT sum(i2.q) FROM it i2 WHERE i2.ik = p.pk) ORDER BY 1, 2, 3"
#define OUTER_ONLY_Q                                                                               \
    "SELECT p.pk, i.q, i.v FROM pt p, it i WHERE p.pk = i.ik AND i.v > 1 AND "                     \
    "i.q <= (SELECT avg(i2.q) FROM it i2 WHERE i2.ik = p.pk) ORDER BY 1, 2, 3"
#define INNER_ONLY_Q                                                                               \
    "SELECT p.pk, i.q, i.v FROM pt p, it i WHERE p.pk = i.ik AND "                                 \
    "i.q >= (SELECT max(i2.q) FROM it i2 WHERE i2.ik = p.pk AND i2.v < 3) ORDER BY 1, 2, 3"
#define TWICE_Q                                                                                    \
    "SELECT p.pk, i.v FROM pt p, it i, pt p2 WHERE p.pk = i.ik AND p2.pk = p.pk AND "              \
    "p2.grp = 'a' AND i.q > (SELECT avg(i2.q) FROM it i2, pt p3 WHERE i2.ik = p.pk AND "           \
    "p3.pk = i2.ik AND p3.grp = 'a') ORDER BY 1, 2"

static void test_not_rewritten(void)
{
    /* pk 2 appears twice: a SUM over the outer join would double. */
    CHECK_STREQ(Q(SUM_Q), "1|10|1\n2|5|4\n2|5|4");
    CHECK(!shared(SUM_Q));
    CHECK_STREQ(Q(OUTER_ONLY_Q), "1|20|2\n2|5|4\n2|5|4\n3|1|7");
    CHECK(!shared(OUTER_ONLY_Q));
    CHECK_STREQ(Q(INNER_ONLY_Q), "1|20|2\n1|30|3");
    CHECK(!shared(INNER_ONLY_Q));
    CHECK_STREQ(Q(TWICE_Q), "1|3\n2|5\n2|5\n2|5\n2|5");
}

int main(void)
{
    if (!exec_open()) return 1;
    RUN(setup);
    const char *threads[] = {"SET threads = 1", "SET threads = 2"};
    for (int i = 0; i < 2; i++) {
        CHECK_STREQ(Q(threads[i]), "SET");
        RUN(test_rewritten);
        RUN(test_not_rewritten);
    }
    exec_close();
    return TEST_REPORT();
}
