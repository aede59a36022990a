/*
 * test_exec_join_keyunique.c — an INNER join decided by the exact key
 * bitmap (codegen/pipeline.h cg_probe.keybits_unique) end to end: when the
 * build side yields nothing but its integer key and the run time finds its
 * keys dense and unique, a set bit is the one match and no entry is read
 * (the build key's value is the probe key's). Build sides with duplicate
 * keys (the directory then decides), NULL keys on both sides, probe keys
 * below, inside and above the build range, negative keys, an empty build
 * side and BIGINT keys too sparse for a bitmap must all give the answers
 * counted here in C from the same formulas, under join_algorithm auto and
 * hash (1 thread) and radix and sortmerge (no bitmap), 2 threads. EXPLAIN
 * shows the plan's choice, EXPLAIN ANALYZE what the run time built.
 *
 * Data (inserted from the formulas below):
 *   p  20000 rows, i = 0..19999: k = (i * 7919) % 30000 - 3000 (NULL when
 *      i % 101 = 0), b = k * 1000003 as BIGINT, v = i % 3
 *   u   8000 rows, j = 0..7999: k = 2j (NULL when j % 97 = 0): unique
 *   d   8000 rows, j = 0..7999: k = 2 (j % 4000) (NULL when j % 89 = 0):
 *      every key twice
 *   e   no rows
 *   (u, d, e also have b = k * 1000003 and w = j % 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_check.h"
#include "test.h"

#define NP 20000
#define NB 8000

static bool p_null(int i)
{
    return i % 101 == 0;
}
static long p_key(int i)
{
    return (long)(i * 7919L % 30000) - 3000;
}

typedef enum btab { B_UNIQUE, B_DUPS, B_EMPTY } btab;
static const char *const btab_name[] = {"u", "d", "e"};

static bool b_null(btab t, int j)
{
    return t == B_UNIQUE ? j % 97 == 0 : j % 89 == 0;
}
static long b_key(btab t, int j)
{
    return t == B_UNIQUE ? 2L * j : 2L * (j % 4000);
}
static int b_rows(btab t)
{
    return t == B_EMPTY ? 0 : NB;
}

/* which: a btab, or -1 for the probe side p. */
static bool row_null(int t, int i)
{
    return t < 0 ? p_null(i) : b_null((btab)t, i);
}
static long row_key(int t, int i)
{
    return t < 0 ? p_key(i) : b_key((btab)t, i);
}

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE p (k INTEGER, b BIGINT, v INTEGER)"), "CREATE TABLE");
    for (int t = 0; t < 3; t++) {
        char sql[96];
        snprintf(sql, sizeof(sql), "CREATE TABLE %s (k INTEGER, b BIGINT, w INTEGER)",
                 btab_name[t]);
        CHECK_STREQ(Q(sql), "CREATE TABLE");
        CHECK(exec_insert_keyed(btab_name[t], b_rows((btab)t), t, row_null, row_key, 5));
    }
    CHECK(exec_insert_keyed("p", NP, -1, row_null, row_key, 3));
}

/* The queries: the build side y gives only its key (count and a probe
 * column; the build key itself; grouped by a probe column). */
typedef enum qkind { Q_COUNT, Q_KEYSUM, Q_GROUPS } qkind;
#define NQ 3

static void case_sql(qkind q, btab t, const char *col, char *buf, size_t size)
{
    const char *y = btab_name[t];
    switch (q) {
    case Q_COUNT:
        snprintf(buf, size, "SELECT count(*), sum(x.v) FROM p x JOIN %s y ON x.%s = y.%s", y, col,
                 col);
        break;
    case Q_KEYSUM:
        snprintf(buf, size,
                 "SELECT count(*), sum(y.%s), min(y.%s) FROM p x JOIN %s y ON x.%s = y.%s", col,
                 col, y, col, col);
        break;
    case Q_GROUPS:
        snprintf(buf, size,
                 "SELECT x.v, count(*), sum(y.%s) FROM p x JOIN %s y ON x.%s = y.%s GROUP BY x.v "
                 "ORDER BY x.v",
                 col, y, col, col);
        break;
    }
}

/* The answer of one case, counted from the formulas (col b is k * 1000003:
 * the same matches). */
static void expected(qkind q, btab t, bool big, char *buf, size_t size)
{
    static int count[16000];
    memset(count, 0, sizeof(count));
    for (int j = 0; j < b_rows(t); j++)
        if (!b_null(t, j)) count[b_key(t, j)]++;
    long n = 0, sumv = 0, sumk = 0, mink = -1, gn[3] = {0}, gk[3] = {0};
    for (int i = 0; i < NP; i++) {
        long k = p_key(i);
        if (p_null(i) || k < 0 || k >= 16000 || !count[k]) continue;
        long m = count[k], kv = big ? k * 1000003L : k;
        n += m;
        sumv += m * (i % 3);
        sumk += m * kv;
        if (mink < 0 || kv < mink) mink = kv;
        gn[i % 3] += m;
        gk[i % 3] += m * kv;
    }
    if (q == Q_COUNT) {
        if (n)
            snprintf(buf, size, "%ld|%ld", n, sumv);
        else
            snprintf(buf, size, "0|NULL");
    } else if (q == Q_KEYSUM) {
        if (n)
            snprintf(buf, size, "%ld|%ld|%ld", n, sumk, mink);
        else
            snprintf(buf, size, "0|NULL|NULL");
    } else {
        size_t len = 0;
        buf[0] = '\0';
        for (int v = 0; v < 3; v++)
            if (gn[v])
                len += (size_t)snprintf(buf + len, size - len, "%s%d|%ld|%ld", len ? "\n" : "", v,
                                        gn[v], gk[v]);
    }
}

/* Every case's answer under every algorithm and thread count. */
static void test_answers(void)
{
    const struct {
        int threads;
        const char *algo;
    } runs[] = {{2, "auto"}, {1, "hash"}, {2, "radix"}, {2, "sortmerge"}};
    static char want[2][NQ][3][256];
    for (int c = 0; c < 2; c++)
        for (int q = 0; q < NQ; q++)
            for (int t = 0; t < 3; t++)
                expected((qkind)q, (btab)t, c == 1, want[c][q][t], sizeof(want[c][q][t]));
    /* the data has matches, some with duplicates */
    CHECK(strcmp(want[0][Q_COUNT][B_UNIQUE], "0|NULL") != 0);
    CHECK(strcmp(want[0][Q_COUNT][B_DUPS], want[0][Q_COUNT][B_UNIQUE]) != 0);
    for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
        CHECK(exec_set_run(runs[r].threads, runs[r].algo));
        for (int c = 0; c < 2; c++)
            for (int q = 0; q < NQ; q++)
                for (int t = 0; t < 3; t++) {
                    char sql[512];
                    case_sql((qkind)q, (btab)t, c ? "b" : "k", sql, sizeof(sql));
                    const char *got = Q(sql);
                    if (strcmp(got, want[c][q][t]) != 0)
                        fprintf(stderr, "threads %d, %s: %s\n  got %s, want %s\n", runs[r].threads,
                                runs[r].algo, sql, got, want[c][q][t]);
                    CHECK_STREQ(got, want[c][q][t]);
                }
    }
    Q("SET threads = 2");
    Q("SET join_algorithm = auto");
}

/* The plan asks for the unique decision only where the build side gives
 * its key alone; the run time takes it only over unique dense keys. */
static void test_plans(void)
{
    char sql[512];
    for (int t = 0; t < 3; t++) {
        case_sql(Q_KEYSUM, (btab)t, "k", sql, sizeof(sql));
        CHECK(explains(sql, "INNER PROBE (key bitmap decides if unique) (tested in batches) k#"));
    }
    /* a build column other than the key: the entry must be read */
    CHECK(!explains("SELECT count(*), sum(y.w) FROM p x JOIN u y ON x.k = y.k", "if unique"));
    /* a residual: the entry must be read */
    CHECK(!explains("SELECT count(*) FROM p x JOIN u y ON x.k = y.k AND x.v < y.k", "if unique"));
    /* two keys */
    CHECK(!explains("SELECT count(*) FROM p x JOIN u y ON x.k = y.k AND x.b = y.b", "if unique"));
    /* LEFT: unmatched rows need the directory's answer too */
    CHECK(!explains("SELECT count(*) FROM p x LEFT JOIN u y ON x.k = y.k", "if unique"));

    case_sql(Q_COUNT, B_UNIQUE, "k", sql, sizeof(sql));
    CHECK(analyzes(sql, "; key bitmap, unique keys)"));
    case_sql(Q_COUNT, B_DUPS, "k", sql, sizeof(sql));
    CHECK(analyzes(sql, "; key bitmap)"));
    CHECK(!analyzes(sql, "unique keys"));
    /* BIGINT keys 1000003 apart: no bitmap at all */
    case_sql(Q_COUNT, B_UNIQUE, "b", sql, sizeof(sql));
    CHECK(explains(sql, "if unique"));
    CHECK(!analyzes(sql, "; key bitmap"));

    Q("SET join_algorithm = radix");
    case_sql(Q_COUNT, B_UNIQUE, "k", sql, sizeof(sql));
    CHECK(!explains(sql, "key bitmap"));
    Q("SET join_algorithm = auto");
}

int main(void)
{
    /* the batch pre-test is planned for large probes only (engine/physical.c) */
    setenv("RACKDB_PRETEST_MIN_ROWS", "0", 1);
    if (!exec_open()) return 1;
    setup();
    RUN(test_plans);
    RUN(test_answers);
    exec_close();
    return TEST_REPORT();
}
