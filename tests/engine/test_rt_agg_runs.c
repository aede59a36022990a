/*
 * test_rt_agg_runs.c — ordered runs in front of the aggregation's tables
 * (engine/rt_agg_runs.c).
 *
 * The unit part plays the generated code: calls of rows (a morsel each)
 * go to workers; a row whose key is the open run's updates its states,
 * another asks eng_rt_agg_run_next for a run (or the table, once runs are
 * off), and every call ends with eng_rt_agg_run_end. Every partition is
 * then merged as finalize does, and each group's COUNT(*) and SUM are
 * compared with figures computed here. The key sequences take each path:
 * keys in order over calls that meet at their ends (finished runs are
 * emitted as groups), a group spread over several calls and workers,
 * calls whose key ranges overlap (finished runs merged with the tables),
 * keys that fall inside a call (runs turned off), calls without rows, a
 * single run per call, and negative and extreme keys. The SQL part checks
 * that a GROUP BY over a NOT NULL integer column in order gets the same
 * groups as the same GROUP BY with runs impossible (a nullable key).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/mem.h"
#include "engine/rt_agg.h"
#include "engine/rt_agg_int.h"
#include "exec_check.h"
#include "test.h"

#define WORKERS 2

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef struct agg {
    eng_mem *mem;
    sto_type key_type;
    eng_agg_fn fns[2];
    eng_agg_layout layout;
    eng_agg_local locals[WORKERS];
    /* the expected groups: keys base .. base + n - 1 */
    int64_t base, n;
    int64_t *count, *sum;
} agg;

/* GROUP BY k (BIGINT, runs on): COUNT(*), SUM(v) (BIGINT). */
static void agg_open(agg *a, int64_t base, int64_t n)
{
    memset(a, 0, sizeof(*a));
    REQUIRE(eng_mem_create("query", 0, NULL, &a->mem) == STO_OK);
    a->key_type = (sto_type){.id = STO_TYPE_BIGINT};
    a->fns[0] = (eng_agg_fn){.func = SQL_AGG_COUNT_STAR, .result = {.id = STO_TYPE_BIGINT}};
    a->fns[1] = (eng_agg_fn){
        .func = SQL_AGG_SUM, .arg = {.id = STO_TYPE_BIGINT}, .result = {.id = STO_TYPE_BIGINT}};
    a->layout = (eng_agg_layout){.nkeys = 1, .key_types = &a->key_type, .naggs = 2, .aggs = a->fns};
    eng_agg_layout_finish(&a->layout);
    CHECK(eng_agg_runs_fit(&a->layout, false, 1e6, 4e6));
    a->layout.runs = true;
    for (unsigned w = 0; w < WORKERS; w++)
        eng_agg_local_init(&a->locals[w], &a->layout, (eng_rt_mem){a->mem, NULL, -1});
    a->base = base;
    a->n = n;
    a->count = calloc((size_t)n, 8);
    a->sum = calloc((size_t)n, 8);
    REQUIRE(a->count && a->sum);
}

/* One call of worker w over rows (keys[i], i), as the generated code runs
 * it. */
static void call(agg *a, unsigned w, const int64_t *keys, size_t rows)
{
    eng_agg_local *l = &a->locals[w];
    cg_error err = cg_error_none();
    for (size_t i = 0; i < rows; i++) {
        int64_t k = keys[i], v = (int64_t)i;
        uint8_t key[32] __attribute__((aligned(16)));
        memset(key, 0, sizeof(key));
        memcpy(key, &k, 8);
        uint64_t h = mix((uint64_t)k);
        uint8_t *states = NULL;
        if (l->runs.states && l->runs.key == k) {
            states = l->runs.states;
        } else if (l->runs.on) {
            REQUIRE(eng_rt_agg_run_next(&err, l, h, k, key, &states) == CG_ERR_NONE);
        }
        if (!states) REQUIRE(eng_rt_agg_find(&err, l, h, key, &states) == CG_ERR_NONE);
        int64_t c;
        memcpy(&c, states + a->fns[0].offset, 8);
        c++;
        memcpy(states + a->fns[0].offset, &c, 8);
        __int128 s;
        memcpy(&s, states + a->fns[1].offset, 16);
        s += v;
        memcpy(states + a->fns[1].offset, &s, 16);
        states[a->fns[1].offset + 16] = 1;
        REQUIRE(k >= a->base && k < a->base + a->n);
        a->count[k - a->base]++;
        a->sum[k - a->base] += v;
    }
    REQUIRE(eng_rt_agg_run_end(&err, l) == CG_ERR_NONE);
}

/* Merges every partition, checks the groups and what the merge did with
 * the finished runs. */
static void agg_check(agg *a, eng_agg_runs_mode want_mode)
{
    eng_agg_local *locals[WORKERS];
    for (unsigned w = 0; w < WORKERS; w++)
        locals[w] = &a->locals[w];
    CHECK_EQ_INT(eng_agg_runs_check(locals, WORKERS), want_mode);
    uint8_t *seen = calloc((size_t)a->n, 1);
    REQUIRE(seen);
    uint64_t groups = 0, bad = 0;
    for (unsigned p = 0; p < ENG_AGG_PARTS; p++) {
        eng_rows_sink out;
        eng_rows_sink_init(&out, (eng_rt_mem){a->mem, NULL, -1}, cg_row_bytes(3));
        CHECK(eng_agg_merge_part(locals, WORKERS, p, &out) == STO_OK);
        for (uint64_t i = 0; i < out.rows; i++) {
            const uint8_t *row = out.data + i * out.row_bytes;
            int64_t k, c, s;
            memcpy(&k, row, 8);
            memcpy(&c, row + CG_ROW_SLOT, 8);
            memcpy(&s, row + 2 * CG_ROW_SLOT, 8);
            int64_t at = k - a->base;
            if (at < 0 || at >= a->n || seen[at] || a->count[at] != c || a->sum[at] != s) {
                if (bad++ < 5)
                    fprintf(stderr, "group %lld: count %lld sum %lld\n", (long long)k, (long long)c,
                            (long long)s);
            } else {
                seen[at] = 1;
            }
            groups++;
        }
        eng_rows_sink_free(&out);
    }
    uint64_t want = 0;
    for (int64_t k = 0; k < a->n; k++)
        want += a->count[k] > 0;
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(groups, want);
    free(seen);
    free(a->count);
    free(a->sum);
    for (unsigned w = 0; w < WORKERS; w++)
        eng_agg_local_free(&a->locals[w]);
    CHECK_EQ_INT(eng_mem_used(a->mem), 0);
    eng_mem_destroy(a->mem);
}

/* Keys in order, 1 to 4 rows each (lineitem's orders), cut into calls of
 * 1000 rows that go to the workers in turn: every call's first and last
 * run go to the tables, the rest are emitted as they are. */
static void test_in_order(void)
{
    agg a;
    int64_t n = 100000;
    agg_open(&a, 0, n);
    int64_t *keys = malloc((size_t)n * 4 * sizeof(*keys));
    REQUIRE(keys);
    size_t rows = 0;
    for (int64_t k = 0; k < n; k++)
        for (int64_t j = 0; j < 1 + (k * 7) % 4; j++)
            keys[rows++] = k;
    unsigned w = 0;
    for (size_t at = 0; at < rows; at += 1000, w ^= 1)
        call(&a, w, keys + at, rows - at < 1000 ? rows - at : 1000);
    /* only the calls' ends are in the tables */
    CHECK(a.locals[0].runs.count + a.locals[1].runs.count > (uint64_t)n * 9 / 10);
    CHECK(a.locals[0].count + a.locals[1].count <= 2 * (rows / 1000 + 1));
    CHECK_EQ_INT(a.locals[0].spills + a.locals[1].spills, 0);
    agg_check(&a, ENG_AGG_RUNS_GROUPS);
    free(keys);
}

/* One group over many calls of both workers, after other keys; calls of
 * one key only; a call without rows; calls that come in descending key
 * order (ranges may come in any order); negative keys. */
static void test_long_runs_and_edges(void)
{
    agg a;
    agg_open(&a, -50, 250);
    int64_t k[600];
    for (int64_t i = 0; i < 600; i++)
        k[i] = i < 50 ? 100 + i : 150;
    /* [150, 150] twice, then [100, 150] */
    call(&a, 1, k + 300, 250);
    call(&a, 0, k + 100, 200);
    call(&a, 1, k, 100);
    call(&a, 0, k + 550, 0);
    int64_t one[] = {151, 151};
    call(&a, 1, one, 2);
    int64_t neg[] = {-50, -50, -49, -10, -9, -9, -1, 0};
    call(&a, 0, neg, 8);
    /* the group of 150 is in both workers' tables, those of 101..149 and
     * -49..-1 are finished runs */
    CHECK_EQ_INT(a.locals[0].runs.count + a.locals[1].runs.count, 49 + 4);
    agg_check(&a, ENG_AGG_RUNS_GROUPS);
}

/* Two calls in order each, but over the same range (odd and even keys):
 * a finished run's group may have entries in the other call, so the
 * finished runs are merged with the tables. */
static void test_overlapping_calls(void)
{
    agg a;
    int64_t n = 40000;
    agg_open(&a, 0, n);
    int64_t *even = malloc((size_t)n / 2 * sizeof(*even));
    int64_t *odd = malloc((size_t)n * sizeof(*odd));
    REQUIRE(even && odd);
    for (int64_t i = 0; i < n / 2; i++)
        even[i] = 2 * i;
    for (int64_t i = 0; i < n / 2; i++)
        odd[2 * i] = odd[2 * i + 1] = 2 * i + 1;
    call(&a, 0, even, (size_t)n / 2);
    call(&a, 1, odd, (size_t)n);
    /* and the same keys again in the other worker: a group in three
     * places */
    call(&a, 1, even, (size_t)n / 2);
    agg_check(&a, ENG_AGG_RUNS_MERGE);
    free(even);
    free(odd);
}

/* Keys that fall inside a call: that worker turns runs off and its later
 * rows go to its table; the other worker's runs stay on, and all finished
 * runs are merged. */
static void test_falling_keys(void)
{
    agg a;
    int64_t n = 30011;
    agg_open(&a, 0, n);
    int64_t *keys = malloc((size_t)n * sizeof(*keys));
    REQUIRE(keys);
    for (int64_t i = 0; i < n; i++)
        keys[i] = i;
    call(&a, 1, keys, 5000);
    for (int64_t i = 0; i < n; i++)
        keys[i] = (i * 7919) % n;
    call(&a, 0, keys, (size_t)n);
    call(&a, 0, keys, 1000);
    CHECK(a.locals[0].runs.off);
    CHECK(!a.locals[0].runs.on);
    CHECK(a.locals[1].runs.on);
    agg_check(&a, ENG_AGG_RUNS_MERGE);
    free(keys);
}

/* Nothing at all, and only calls without rows. */
static void test_empty(void)
{
    agg a;
    agg_open(&a, 0, 1);
    call(&a, 0, NULL, 0);
    call(&a, 1, NULL, 0);
    agg_check(&a, ENG_AGG_RUNS_NONE);
}

/* What may fold runs: one integer-like key that is never NULL, no
 * DISTINCT sets, enough groups. */
static void test_fit(void)
{
    sto_type t = {.id = STO_TYPE_INTEGER};
    eng_agg_fn f = {.func = SQL_AGG_COUNT_STAR, .result = {.id = STO_TYPE_BIGINT}};
    eng_agg_layout l = {.nkeys = 1, .key_types = &t, .naggs = 1, .aggs = &f};
    eng_agg_layout_finish(&l);
    CHECK(eng_agg_runs_fit(&l, false, 1e6, 4e6));
    CHECK(!eng_agg_runs_fit(&l, true, 1e6, 4e6));
    CHECK(!eng_agg_runs_fit(&l, false, 10, 40));
    /* groups of one row (q11's parts) */
    CHECK(eng_agg_runs_fit(&l, false, 1e6, 1.2e6));
    CHECK(eng_agg_runs_fit(&l, false, 1e6, 1e6));
    t.id = STO_TYPE_VARCHAR;
    CHECK(!eng_agg_runs_fit(&l, false, 1e6, 4e6));
    t.id = STO_TYPE_DOUBLE;
    CHECK(!eng_agg_runs_fit(&l, false, 1e6, 4e6));
    t.id = STO_TYPE_DATE;
    CHECK(eng_agg_runs_fit(&l, false, 1e6, 4e6));
    f = (eng_agg_fn){.func = SQL_AGG_COUNT,
                     .distinct = true,
                     .arg = {.id = STO_TYPE_INTEGER},
                     .result = {.id = STO_TYPE_BIGINT}};
    eng_agg_layout_finish(&l);
    CHECK(!eng_agg_runs_fit(&l, false, 1e6, 4e6));
}

/* End to end: 2^20 rows of a NOT NULL key in order (4 rows a key, like
 * lineitem's orders) and of the same key nullable (no runs): the groups
 * agree, on 2 threads and 1; then keys out of order. */
static void test_sql(void)
{
    REQUIRE(exec_open());
    CHECK_STREQ(Q("CREATE TABLE t (i BIGINT NOT NULL)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO t VALUES (0), (1), (2), (3)"), "INSERT 0 4");
    for (int i = 0; i < 18; i++) {
        char sql[128];
        snprintf(sql, sizeof(sql), "INSERT INTO t SELECT i + %lld FROM t", 4LL << i);
        Q(sql);
    }
    CHECK_STREQ(Q("CREATE TABLE o AS SELECT CAST(i / 4 AS INTEGER) AS k, i AS v FROM t"),
                "SELECT 1048576");
    CHECK_STREQ(Q("CREATE TABLE o2 (k INTEGER NOT NULL, v BIGINT NOT NULL)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO o2 SELECT k, v FROM o"), "INSERT 0 1048576");
    CHECK_STREQ(Q("CREATE TABLE n (k INTEGER, v BIGINT)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO n SELECT k, v FROM o"), "INSERT 0 1048576");
    const char *runs = "SELECT count(*), sum(c), min(c), max(c), sum(s), "
                       "sum(CASE WHEN s <> 16 * k + 6 THEN 1 ELSE 0 END) FROM "
                       "(SELECT k, count(*) AS c, sum(v) AS s FROM o2 GROUP BY k) AS g";
    const char *nulls = "SELECT count(*), sum(c), min(c), max(c), sum(s), "
                        "sum(CASE WHEN s <> 16 * k + 6 THEN 1 ELSE 0 END) FROM "
                        "(SELECT k, count(*) AS c, sum(v) AS s FROM n GROUP BY k) AS g";
    const char *want = "262144|1048576|4|4|549755289600|0";
    /* runs for the NOT NULL key only */
    CHECK(explains(runs, "HASH AGGREGATE (ordered runs) GROUP k#"));
    CHECK(!explains(nulls, "(ordered runs)"));
    CHECK_STREQ(Q(runs), want);
    CHECK_STREQ(Q(nulls), want);
    /* q18's shape: HAVING keeps the groups whose sum passes */
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT k FROM o2 GROUP BY k "
                  "HAVING sum(v) > 4194304) AS g"),
                "0");
    CHECK_STREQ(Q("SELECT count(*), min(k) FROM (SELECT k FROM o2 GROUP BY k "
                  "HAVING sum(v) > 4000000) AS g"),
                "12144|250000");
    /* groups of one row each (t's i in order): every run is a group;
     * the sum of group i is i */
    const char *ones = "SELECT count(*), sum(c), sum(s), sum(CASE WHEN s <> i THEN 1 ELSE 0 END) "
                       "FROM (SELECT i, count(*) AS c, sum(i) AS s FROM t GROUP BY i) AS g";
    CHECK(explains(ones, "HASH AGGREGATE (ordered runs) GROUP i#"));
    CHECK_STREQ(Q(ones), "1048576|1048576|549755289600|0");
    /* keys out of order (the rows reversed): runs turn off, same groups */
    CHECK_STREQ(Q("CREATE TABLE r (k INTEGER NOT NULL, v BIGINT NOT NULL)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO r SELECT k, v FROM o2 ORDER BY v DESC"), "INSERT 0 1048576");
    CHECK_STREQ(Q("SELECT count(*), sum(c), min(c), max(c), sum(s) FROM "
                  "(SELECT k, count(*) AS c, sum(v) AS s FROM r GROUP BY k) AS g"),
                "262144|1048576|4|4|549755289600");
    CHECK_STREQ(Q("SET threads = 1"), "SET");
    CHECK_STREQ(Q(runs), want);
    CHECK_STREQ(Q(nulls), want);
    CHECK_STREQ(Q(ones), "1048576|1048576|549755289600|0");
    exec_close();
}

int main(void)
{
    RUN(test_fit);
    RUN(test_in_order);
    RUN(test_long_runs_and_edges);
    RUN(test_overlapping_calls);
    RUN(test_falling_keys);
    RUN(test_empty);
    RUN(test_sql);
    return TEST_REPORT();
}
