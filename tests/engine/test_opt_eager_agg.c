/*
 * test_opt_eager_agg.c — COUNTs over a left join's null-supplying side are
 * counted per join key below the join and summed above it
 * (engine/opt_eager_agg.c), with the same rows as the join-then-count plan.
 *
 * The tables hold what could break the rewrite: preserved-side keys without
 * a match (count 0), a key twice on the preserved side (no uniqueness),
 * NULL join keys on both sides, matched rows whose counted column is NULL,
 * rows the ON clause filters out (NOT LIKE, and a NULL comment for which
 * NOT LIKE is NULL), and an empty side. The expected rows were computed
 * with SQLite. EXPLAIN shows which queries take the rewrite (their
 * aggregate reads sum(coalesce(...))) and which must not: COUNT(*), SUM,
 * a COUNT that is not NULL on padded rows, DISTINCT, a group key of the
 * null-supplying side, and an ON conjunct over the preserved side. Each
 * query runs with 1 and 2 threads.
 */
#include <stdio.h>
#include <string.h>

#include "exec_check.h"
#include "test.h"

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE c (ck INTEGER, name VARCHAR(5))"), "CREATE TABLE");
    CHECK_STREQ(Q("CREATE TABLE o (ok INTEGER, ck INTEGER, cm VARCHAR(20))"), "CREATE TABLE");
    CHECK_STREQ(Q("CREATE TABLE e (ck INTEGER, v INTEGER)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO c VALUES (1, 'a'), (2, 'b'), (2, 'b2'), (3, 'c'), (NULL, 'n'), "
                  "(4, 'd')"),
                "INSERT 0 6");
    CHECK_STREQ(Q("INSERT INTO o VALUES (10, 1, 'x'), (11, 1, 'a special one'), (12, 1, 'y'), "
                  "(13, 2, 'x'), (NULL, 2, 'x'), (14, 3, 'special'), (15, NULL, 'x'), "
                  "(16, NULL, 'x'), (17, 5, 'x'), (18, 2, NULL)"),
                "INSERT 0 10");
}

/* Whether the plan of sql sums pre-aggregated counts (the rewrite fired). */
static int eager(const char *sql)
{
    return explains(sql, "sum(coalesce(");
}

#define KEY_Q                                                                                      \
    "SELECT c.ck, count(o.ok) FROM c LEFT JOIN o ON c.ck = o.ck AND o.cm NOT LIKE '%special%' "    \
    "GROUP BY c.ck"
#define Q13_Q                                                                                      \
    "SELECT cnt, count(*) FROM (SELECT c.ck, count(o.ok) FROM c LEFT JOIN o ON c.ck = o.ck AND "   \
    "o.cm NOT LIKE '%special%' GROUP BY c.ck) AS t (ck, cnt) GROUP BY cnt ORDER BY 2 DESC, 1 DESC"
#define NAME_Q                                                                                     \
    "SELECT c.name, count(o.ok), count(o.cm) FROM c LEFT JOIN o ON c.ck = o.ck GROUP BY c.name"
#define EXPR_Q   "SELECT c.ck, count(o.ok + 1) FROM c LEFT JOIN o ON o.ck = c.ck GROUP BY c.ck"
#define NOKEY_Q  "SELECT count(o.ok) FROM c LEFT JOIN o ON c.ck = o.ck"
#define EMPTYR_Q "SELECT c.ck, count(e.v) FROM c LEFT JOIN e ON c.ck = e.ck GROUP BY c.ck"
#define EMPTYL_Q                                                                                   \
    "SELECT c.ck, count(o.ok) FROM c LEFT JOIN o ON c.ck = o.ck WHERE c.name = 'zzz' GROUP BY "    \
    "c.ck"

static void test_rewritten(void)
{
    CHECK_STREQ(QS(KEY_Q), "1|2\n2|2\n3|0\n4|0\nNULL|0");
    CHECK(eager(KEY_Q));
    CHECK_STREQ(Q(Q13_Q), "0|3\n2|2");
    CHECK(eager(Q13_Q));
    CHECK_STREQ(QS(NAME_Q), "a|3|3\nb2|2|2\nb|2|2\nc|1|1\nd|0|0\nn|0|0");
    CHECK(eager(NAME_Q));
    CHECK_STREQ(QS(EXPR_Q), "1|3\n2|4\n3|1\n4|0\nNULL|0");
    CHECK(eager(EXPR_Q));
    CHECK_STREQ(Q(NOKEY_Q), "8");
    CHECK(eager(NOKEY_Q));
    CHECK_STREQ(QS(EMPTYR_Q), "1|0\n2|0\n3|0\n4|0\nNULL|0");
    CHECK(eager(EMPTYR_Q));
    CHECK_STREQ(Q(EMPTYL_Q), "");
}

#define STAR_Q "SELECT c.ck, count(*) FROM c LEFT JOIN o ON c.ck = o.ck GROUP BY c.ck"
#define SUM_Q  "SELECT c.ck, sum(o.ok) FROM c LEFT JOIN o ON c.ck = o.ck GROUP BY c.ck"
#define NONSTRICT_Q                                                                                \
    "SELECT c.ck, count(coalesce(o.ok, 0)) FROM c LEFT JOIN o ON c.ck = o.ck GROUP BY c.ck"
#define RGROUP_Q "SELECT o.ck, count(o.ok) FROM c LEFT JOIN o ON c.ck = o.ck GROUP BY o.ck"
#define DISTINCT_Q                                                                                 \
    "SELECT c.ck, count(DISTINCT o.cm) FROM c LEFT JOIN o ON c.ck = o.ck GROUP BY c.ck"
#define LONLY_Q                                                                                    \
    "SELECT c.name, count(o.ok) FROM c LEFT JOIN o ON c.ck = o.ck AND c.name <> 'a' "              \
    "GROUP BY c.name"

static void test_not_rewritten(void)
{
    /* COUNT(*) counts the padded row of an unmatched key as 1. */
    CHECK_STREQ(QS(STAR_Q), "1|3\n2|6\n3|1\n4|1\nNULL|1");
    CHECK(!eager(STAR_Q));
    CHECK_STREQ(QS(SUM_Q), "1|33\n2|62\n3|14\n4|NULL\nNULL|NULL");
    CHECK(!eager(SUM_Q));
    CHECK_STREQ(QS(NONSTRICT_Q), "1|3\n2|6\n3|1\n4|1\nNULL|1");
    CHECK(!eager(NONSTRICT_Q));
    CHECK_STREQ(QS(RGROUP_Q), "1|3\n2|4\n3|1\nNULL|0");
    CHECK(!eager(RGROUP_Q));
    CHECK_STREQ(QS(DISTINCT_Q), "1|3\n2|1\n3|1\n4|0\nNULL|0");
    CHECK(!eager(DISTINCT_Q));
    CHECK_STREQ(QS(LONLY_Q), "a|0\nb2|2\nb|2\nc|1\nd|0\nn|0");
    CHECK(!eager(LONLY_Q));
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
