/*
 * test_agg_having.c — HAVING conjuncts tested by the aggregation as it
 * emits its groups (engine/physical_having.c, engine/rt_agg_having.c).
 *
 * The unit part tests eng_agg_having_pass on rows built here: every
 * comparison, integers, DECIMALs, DOUBLEs with NaN, and NULL slots. The SQL
 * part runs HAVING queries whose conjuncts move into the aggregation and
 * compares their answers with the same query written so that nothing
 * moves (`s + 0 > c` is not a column against a constant) and with counts
 * computed by hand: NULL aggregates, empty inputs, duplicate keys, a
 * conjunct that stays in the FILTER beside one that moves, the constant
 * on the left, the ordered runs of clustered keys (q18's shape) and the
 * hash tables of scattered ones, on 1 and 2 threads. EXPLAIN shows what
 * moved; an aggregation without GROUP BY, and one whose rows another
 * pipeline reads too, keep their FILTER.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/rt_agg.h"
#include "exec_check.h"
#include "test.h"

/* A row of two columns: slot 0 an int64 (or DOUBLE), slot 1 a BIGINT. */
static void put_row(uint8_t *row, int64_t a, bool a_null, int64_t b)
{
    memset(row, 0, cg_row_bytes(2));
    memcpy(row, &a, 8);
    memcpy(row + CG_ROW_SLOT, &b, 8);
    row[cg_row_null_offset(2, 0)] = a_null;
}

static bool pass1(sql_op op, sto_type t, int64_t k, const uint8_t *row)
{
    eng_agg_having h = {.slot = 0, .op = op, .type = t, .value.i = k};
    eng_agg_layout l = {.nkeys = 1, .naggs = 1, .nhaving = 1, .having = &h};
    return eng_agg_having_pass(&l, row);
}

static void test_compare_ints(void)
{
    uint8_t row[64] __attribute__((aligned(16)));
    sto_type big = sto_type_make(STO_TYPE_BIGINT);
    put_row(row, 300, false, 0);
    CHECK(!pass1(SQL_OP_GT, big, 300, row));
    CHECK(pass1(SQL_OP_GE, big, 300, row));
    CHECK(pass1(SQL_OP_EQ, big, 300, row));
    CHECK(!pass1(SQL_OP_NE, big, 300, row));
    CHECK(pass1(SQL_OP_LT, big, 301, row));
    CHECK(pass1(SQL_OP_LE, big, 300, row));
    CHECK(!pass1(SQL_OP_LT, big, 300, row));
    put_row(row, -5, false, 0);
    CHECK(pass1(SQL_OP_LT, big, 0, row));
    /* INTEGER and DATE slots hold 4 bytes: the rest of the slot is not read */
    uint8_t irow[64] __attribute__((aligned(16)));
    put_row(irow, (int64_t)0x7777777700000000LL | 42, false, 0);
    CHECK(pass1(SQL_OP_EQ, sto_type_make(STO_TYPE_INTEGER), 42, irow));
    CHECK(pass1(SQL_OP_EQ, sto_type_make(STO_TYPE_DATE), 42, irow));
    /* a NULL slot fails every comparison, <> too */
    put_row(row, 300, true, 0);
    CHECK(!pass1(SQL_OP_NE, big, 1, row));
    CHECK(!pass1(SQL_OP_EQ, big, 300, row));
}

static void test_compare_doubles(void)
{
    uint8_t row[64] __attribute__((aligned(16)));
    sto_type dbl = sto_type_make(STO_TYPE_DOUBLE);
    double vals[] = {1.5, NAN};
    eng_agg_having h = {.slot = 0, .op = SQL_OP_GT, .type = dbl, .value.d = 1.0};
    eng_agg_layout l = {.nkeys = 1, .naggs = 1, .nhaving = 1, .having = &h};
    int64_t bits;
    memcpy(&bits, &vals[0], 8);
    put_row(row, bits, false, 0);
    CHECK(eng_agg_having_pass(&l, row));
    h.op = SQL_OP_LT;
    CHECK(!eng_agg_having_pass(&l, row));
    /* NaN is above every number and equal to NaN, as PostgreSQL orders it */
    memcpy(&bits, &vals[1], 8);
    put_row(row, bits, false, 0);
    h.op = SQL_OP_GT;
    CHECK(eng_agg_having_pass(&l, row));
    h.value.d = NAN;
    h.op = SQL_OP_EQ;
    CHECK(eng_agg_having_pass(&l, row));
    h.op = SQL_OP_GT;
    CHECK(!eng_agg_having_pass(&l, row));
}

/* Every conjunct must hold. */
static void test_conjunction(void)
{
    uint8_t row[64] __attribute__((aligned(16)));
    sto_type big = sto_type_make(STO_TYPE_BIGINT);
    eng_agg_having h[2] = {{.slot = 0, .op = SQL_OP_GT, .type = big, .value.i = 10},
                           {.slot = 1, .op = SQL_OP_LT, .type = big, .value.i = 5}};
    eng_agg_layout l = {.nkeys = 1, .naggs = 1, .nhaving = 2, .having = h};
    put_row(row, 11, false, 4);
    CHECK(eng_agg_having_pass(&l, row));
    put_row(row, 11, false, 5);
    CHECK(!eng_agg_having_pass(&l, row));
    put_row(row, 10, false, 4);
    CHECK(!eng_agg_having_pass(&l, row));
    l.nhaving = 0;
    CHECK(eng_agg_having_pass(&l, row));
}

/* The answer of sql, copied (Q's buffer is reused). */
static char saved[1 << 16];
static const char *keep(const char *s)
{
    snprintf(saved, sizeof(saved), "%s", s);
    return saved;
}

/* q moves its HAVING into the aggregation, plain keeps it in a FILTER; both
 * give `want`. */
static void same(const char *q, const char *plain, const char *want)
{
    CHECK_STREQ(QS(q), want);
    CHECK_STREQ(QS(plain), want);
}

static void test_sql_answers(int threads)
{
    char set[32];
    snprintf(set, sizeof(set), "SET threads = %d", threads);
    CHECK_STREQ(Q(set), "SET");
    /* clustered keys (ordered runs): 2^18 rows, k = i / 4 */
    same("SELECT count(*), sum(s) FROM (SELECT i / 4 AS k, sum(i) AS s FROM t GROUP BY i / 4 "
         "HAVING sum(i) > 1000000) AS g",
         "SELECT count(*), sum(s) FROM (SELECT i / 4 AS k, sum(i) AS s FROM t GROUP BY i / 4 "
         "HAVING sum(i) + 0 > 1000000) AS g",
         keep(QS("SELECT count(*), sum(16 * k + 6) FROM (SELECT DISTINCT i / 4 AS k FROM t) AS g "
                 "WHERE 16 * k + 6 > 1000000")));
    /* the constant on the left; >=, <=, =, <> */
    same("SELECT count(*) FROM (SELECT i / 4 AS k FROM t GROUP BY i / 4 HAVING 1000000 < "
         "sum(i)) AS g",
         "SELECT count(*) FROM (SELECT i / 4 AS k FROM t GROUP BY i / 4 HAVING 1000000 < "
         "sum(i) + 0) AS g",
         "3036");
    same("SELECT k, s FROM (SELECT i / 4 AS k, sum(i) AS s FROM t GROUP BY i / 4 HAVING "
         "sum(i) = 166) AS g",
         "SELECT k, s FROM (SELECT i / 4 AS k, sum(i) AS s FROM t GROUP BY i / 4 HAVING "
         "sum(i) + 0 = 166) AS g",
         "10|166");
    /* an OR is not a conjunct that moves */
    CHECK_STREQ(QS("SELECT k, s FROM (SELECT i / 4 AS k, sum(i) AS s FROM t GROUP BY i / 4 "
                   "HAVING sum(i) = 166 OR sum(i) = 6) AS g"),
                "0|6\n10|166");
    same("SELECT count(*) FROM (SELECT i / 4 AS k FROM t GROUP BY i / 4 HAVING sum(i) <> 166 "
         "AND count(*) >= 4 AND max(i) <= 4000) AS g",
         "SELECT count(*) FROM (SELECT i / 4 AS k FROM t GROUP BY i / 4 HAVING sum(i) + 0 <> 166 "
         "AND count(*) + 0 >= 4 AND max(i) + 0 <= 4000) AS g",
         "999");
    /* scattered keys over the hash tables: k = i % 1009, 259 or 260 rows a
     * group; a conjunct that moves beside one that stays */
    same("SELECT count(*), sum(c) FROM (SELECT i % 1009 AS k, count(*) AS c FROM t "
         "GROUP BY i % 1009 HAVING count(*) > 259 AND min(i) + 1 > 500) AS g",
         "SELECT count(*), sum(c) FROM (SELECT i % 1009 AS k, count(*) AS c FROM t "
         "GROUP BY i % 1009 HAVING count(*) + 0 > 259 AND min(i) + 1 > 500) AS g",
         "313|81380");
    same("SELECT count(*), sum(c) FROM (SELECT i % 1009 AS k, count(*) AS c FROM t "
         "GROUP BY i % 1009 HAVING count(*) > 259 AND min(i) + 1 > 100) AS g",
         "SELECT count(*), sum(c) FROM (SELECT i % 1009 AS k, count(*) AS c FROM t "
         "GROUP BY i % 1009 HAVING count(*) + 0 > 259 AND min(i) + 1 > 100) AS g",
         "713|185380");
    /* more groups than a merge table of entries holds (the merge folds
     * pieces): k = i % 200003, two rows for k < 62141 */
    same("SELECT count(*), min(k), max(k) FROM (SELECT i % 200003 AS k FROM t "
         "GROUP BY i % 200003 HAVING count(*) = 2) AS g",
         "SELECT count(*), min(k), max(k) FROM (SELECT i % 200003 AS k FROM t "
         "GROUP BY i % 200003 HAVING count(*) + 0 = 2) AS g",
         "62141|0|62140");
    /* DISTINCT sets: i % 7 takes all 7 values in every group of i % 50 */
    same("SELECT count(*) FROM (SELECT i % 50 AS k FROM t GROUP BY i % 50 "
         "HAVING count(DISTINCT i % 7) = 7) AS g",
         "SELECT count(*) FROM (SELECT i % 50 AS k FROM t GROUP BY i % 50 "
         "HAVING count(DISTINCT i % 7) + 0 = 7) AS g",
         "50");
    /* NULL aggregates: groups whose values are all NULL have a NULL sum,
     * which passes neither `> -1` nor `<> 0` */
    same("SELECT count(*) FROM (SELECT i % 10 AS k FROM t GROUP BY i % 10 HAVING sum(CASE WHEN "
         "i % 10 < 3 THEN NULL ELSE 1 END) > -1) AS g",
         "SELECT count(*) FROM (SELECT i % 10 AS k FROM t GROUP BY i % 10 HAVING sum(CASE WHEN "
         "i % 10 < 3 THEN NULL ELSE 1 END) + 0 > -1) AS g",
         "7");
    same("SELECT count(*) FROM (SELECT i % 10 AS k FROM t GROUP BY i % 10 HAVING sum(CASE WHEN "
         "i % 10 < 3 THEN NULL ELSE 0 END) <> 0) AS g",
         "SELECT count(*) FROM (SELECT i % 10 AS k FROM t GROUP BY i % 10 HAVING sum(CASE WHEN "
         "i % 10 < 3 THEN NULL ELSE 0 END) + 0 <> 0) AS g",
         "0");
    /* DECIMAL sums and DOUBLE averages */
    same("SELECT k, s FROM (SELECT i / 1000 AS k, sum(CAST(i AS DECIMAL(12,2))) AS s "
         "FROM t GROUP BY i / 1000 HAVING sum(CAST(i AS DECIMAL(12,2))) < 499500.01) AS g",
         "SELECT k, s FROM (SELECT i / 1000 AS k, sum(CAST(i AS DECIMAL(12,2))) AS s "
         "FROM t GROUP BY i / 1000 HAVING sum(CAST(i AS DECIMAL(12,2))) + 0 < 499500.01) AS g",
         "0|499500.00");
    same("SELECT count(*) FROM (SELECT i / 1000 AS k FROM t GROUP BY i / 1000 "
         "HAVING avg(CAST(i AS DOUBLE)) >= 100000.0) AS g",
         "SELECT count(*) FROM (SELECT i / 1000 AS k FROM t GROUP BY i / 1000 "
         "HAVING avg(CAST(i AS DOUBLE)) + 0 >= 100000.0) AS g",
         "163");
    /* an empty input has no groups; a filter that keeps none */
    same("SELECT count(*) FROM (SELECT i % 7 AS k FROM t WHERE i < 0 GROUP BY i % 7 "
         "HAVING count(*) >= 0) AS g",
         "SELECT count(*) FROM (SELECT i % 7 AS k FROM t WHERE i < 0 GROUP BY i % 7 "
         "HAVING count(*) + 0 >= 0) AS g",
         "0");
    /* duplicate rows: every key twice */
    same("SELECT k, c FROM (SELECT i % 3 AS k, count(*) AS c FROM (SELECT i FROM t WHERE i < 6 "
         "UNION ALL SELECT i FROM t WHERE i < 6) AS d GROUP BY i % 3 HAVING count(*) = 4) AS g",
         "SELECT k, c FROM (SELECT i % 3 AS k, count(*) AS c FROM (SELECT i FROM t WHERE i < 6 "
         "UNION ALL SELECT i FROM t WHERE i < 6) AS d GROUP BY i % 3 HAVING count(*) + 0 = 4) "
         "AS g",
         "0|4\n1|4\n2|4");
    /* without GROUP BY the row of no input stays: count(*) = 0 passes */
    CHECK_STREQ(Q("SELECT count(*) FROM t WHERE i < 0 HAVING count(*) = 0"), "0");
    CHECK_STREQ(Q("SELECT count(*) FROM t WHERE i < 0 HAVING count(*) > 0"), "");
}

static void test_sql_plans(void)
{
    const char *q18 = "SELECT i / 4 AS k, sum(i) FROM t GROUP BY i / 4 HAVING sum(i) > 1000000";
    CHECK(explains(q18, "HAVING (sum#"));
    CHECK(!explains(q18, "FILTER"));
    CHECK(analyzes(q18, "(actual rows in 262144, out 3036"));
    /* the conjunct that is not a column against a constant stays */
    const char *both = "SELECT i % 1009 AS k FROM t GROUP BY i % 1009 "
                       "HAVING count(*) > 259 AND min(i) + 1 > 100";
    CHECK(explains(both, "HAVING (count#"));
    CHECK(explains(both, "FILTER ((min#"));
    CHECK(!explains("SELECT i % 7 AS k FROM t GROUP BY i % 7 HAVING sum(i) + 0 > 5", "HAVING"));
    /* no GROUP BY: the filter stays above the one row */
    CHECK(!explains("SELECT count(*) FROM t HAVING count(*) > 0", "HAVING"));
    /* an aggregation read twice (a total computed from the groups) keeps
     * every group for its other reader */
    const char *shared = "SELECT k, s FROM (SELECT i % 100 AS k, sum(i) AS s FROM t GROUP BY "
                         "i % 100) AS g WHERE s > (SELECT sum(s2) / 100 FROM (SELECT i % 100 AS "
                         "k2, sum(i) AS s2 FROM t GROUP BY i % 100) AS h)";
    CHECK(!explains(shared, "HAVING"));
    char counted[1024];
    snprintf(counted, sizeof(counted), "SELECT count(*) FROM (%s) AS x", shared);
    CHECK_STREQ(Q(counted), "50");
    /* two readers that filter alike: each keeps its FILTER */
    const char *twice = "SELECT count(*) FROM (SELECT i % 100 AS k, sum(i) AS s FROM t GROUP BY "
                        "i % 100) AS g WHERE s > 3 AND k IN (SELECT k2 FROM (SELECT i % 100 AS k2, "
                        "sum(i) AS s2 FROM t GROUP BY i % 100) AS h WHERE s2 > 3)";
    CHECK(!explains(twice, "HAVING"));
    CHECK_STREQ(Q(twice), "100");
}

static void test_sql(void)
{
    REQUIRE(exec_open());
    CHECK_STREQ(Q("CREATE TABLE t (i BIGINT)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO t VALUES (0), (1), (2), (3)"), "INSERT 0 4");
    for (int i = 0; i < 16; i++) {
        char sql[128];
        snprintf(sql, sizeof(sql), "INSERT INTO t SELECT i + %lld FROM t", 4LL << i);
        Q(sql);
    }
    CHECK_STREQ(Q("SELECT count(*) FROM t"), "262144");
    test_sql_answers(2);
    test_sql_answers(1);
    test_sql_plans();
    exec_close();
}

int main(void)
{
    RUN(test_compare_ints);
    RUN(test_compare_doubles);
    RUN(test_conjunction);
    RUN(test_sql);
    return TEST_REPORT();
}
