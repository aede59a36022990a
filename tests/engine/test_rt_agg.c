/*
 * test_rt_agg.c — hash aggregation's tables and merge (engine/rt_agg.h).
 *
 * The unit part drives eng_rt_agg_find as generated code does (find the
 * group, update its states) from several workers, merges every partition
 * as finalize does, and compares each group's COUNT(*) and SUM with counts
 * and sums computed here. The key sequences are chosen to take each path
 * of the workers' tables: few groups (the table never spills), scattered
 * keys over more groups than the table holds (it spills again and again,
 * so a group has several entries in one worker), groups that keep coming
 * back (the table grows past ENG_AGG_TABLE_BYTES instead of spilling,
 * after at most two spills when they come back soon, never past
 * ENG_AGG_TABLE_BIG when they are many),
 * clustered keys (every group spilled once, from a table shrunk to L1
 * size), the same keys in several
 * workers, one worker alone (emitted without a merge table), hashes that
 * all fall in one partition and one piece of the merge's split and
 * collide, and merges in one table of entries and split into pieces. The
 * SQL part checks millions of groups, clustered and scattered keys, string
 * keys longer than the inline bytes, NULL keys, DISTINCT aggregates and a
 * sum that overflows in one of many groups, on 1 thread and the default,
 * against the same figures computed another way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/mem.h"
#include "engine/rt_agg.h"
#include "exec_check.h"
#include "test.h"

#define MAX_WORKERS 3

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef struct agg_run {
    eng_mem *mem;
    sto_type key_type;
    eng_agg_fn fns[2];
    eng_agg_layout layout;
    eng_agg_local locals[MAX_WORKERS];
    unsigned workers;
    uint64_t (*hash)(int64_t k); /* the group's hash, as the generated code made it */
} agg_run;

static uint64_t mixed(int64_t k)
{
    return mix((uint64_t)k);
}

/* GROUP BY k (BIGINT): COUNT(*), SUM(v) (BIGINT). */
static void run_open(agg_run *r, unsigned workers)
{
    memset(r, 0, sizeof(*r));
    REQUIRE(eng_mem_create("query", 0, NULL, &r->mem) == STO_OK);
    r->key_type = (sto_type){.id = STO_TYPE_BIGINT};
    r->fns[0] = (eng_agg_fn){.func = SQL_AGG_COUNT_STAR, .result = {.id = STO_TYPE_BIGINT}};
    r->fns[1] = (eng_agg_fn){
        .func = SQL_AGG_SUM, .arg = {.id = STO_TYPE_BIGINT}, .result = {.id = STO_TYPE_BIGINT}};
    r->layout = (eng_agg_layout){.nkeys = 1, .key_types = &r->key_type, .naggs = 2, .aggs = r->fns};
    eng_agg_layout_finish(&r->layout);
    r->workers = workers;
    r->hash = mixed;
    for (unsigned w = 0; w < workers; w++)
        eng_agg_local_init(&r->locals[w], &r->layout, (eng_rt_mem){r->mem, NULL, -1});
}

/* One row (k, v) into worker w, as the generated code adds it. */
static void add(agg_run *r, unsigned w, int64_t k, int64_t v)
{
    uint8_t key[32] __attribute__((aligned(16)));
    memset(key, 0, sizeof(key));
    memcpy(key, &k, 8);
    uint8_t *states = NULL;
    cg_error err = cg_error_none();
    REQUIRE(eng_rt_agg_find(&err, &r->locals[w], r->hash(k), key, &states) == CG_ERR_NONE);
    int64_t c;
    memcpy(&c, states + r->fns[0].offset, 8);
    c++;
    memcpy(states + r->fns[0].offset, &c, 8);
    __int128 s;
    memcpy(&s, states + r->fns[1].offset, 16);
    s += v;
    memcpy(states + r->fns[1].offset, &s, 16);
    states[r->fns[1].offset + 16] = 1;
}

/* Merges every partition and checks the groups against count[k], sum[k]
 * for k < nkeys (count 0: no group). */
static void run_check(agg_run *r, const int64_t *count, const int64_t *sum, int64_t nkeys)
{
    eng_agg_local *locals[MAX_WORKERS];
    for (unsigned w = 0; w < r->workers; w++)
        locals[w] = &r->locals[w];
    uint8_t *seen = calloc((size_t)nkeys, 1);
    REQUIRE(seen);
    uint64_t groups = 0, bad = 0;
    for (unsigned p = 0; p < ENG_AGG_PARTS; p++) {
        eng_rows_sink out;
        eng_rows_sink_init(&out, (eng_rt_mem){r->mem, NULL, -1}, cg_row_bytes(3));
        CHECK(eng_agg_merge_part(locals, r->workers, p, &out) == STO_OK);
        for (uint64_t i = 0; i < out.rows; i++) {
            const uint8_t *row = out.data + i * out.row_bytes;
            int64_t k, c, s;
            memcpy(&k, row, 8);
            memcpy(&c, row + CG_ROW_SLOT, 8);
            memcpy(&s, row + 2 * CG_ROW_SLOT, 8);
            if (k < 0 || k >= nkeys || seen[k] || count[k] != c || sum[k] != s) {
                if (bad++ < 5)
                    fprintf(stderr, "group %lld: count %lld sum %lld\n", (long long)k, (long long)c,
                            (long long)s);
            } else {
                seen[k] = 1;
            }
            /* the hash's top bits chose this partition */
            CHECK_EQ_INT(r->hash(k) >> (64 - ENG_AGG_PARTS_LOG), p);
            groups++;
        }
        eng_rows_sink_free(&out);
    }
    uint64_t want = 0;
    for (int64_t k = 0; k < nkeys; k++)
        want += count[k] > 0;
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(groups, want);
    free(seen);
    for (unsigned w = 0; w < r->workers; w++)
        eng_agg_local_free(&r->locals[w]);
    CHECK_EQ_INT(eng_mem_used(r->mem), 0);
    eng_mem_destroy(r->mem);
}

typedef struct ref {
    int64_t *count, *sum, n;
} ref;

static void ref_init(ref *f, int64_t n)
{
    f->count = calloc((size_t)n, 8);
    f->sum = calloc((size_t)n, 8);
    f->n = n;
    REQUIRE(f->count && f->sum);
}

static void ref_add(agg_run *r, ref *f, unsigned w, int64_t k, int64_t v)
{
    add(r, w, k, v);
    f->count[k]++;
    f->sum[k] += v;
}

static void ref_free(ref *f)
{
    free(f->count);
    free(f->sum);
}

/* How many times the workers' tables spilled; how many grew past
 * ENG_AGG_TABLE_BYTES. */
static void modes(const agg_run *r, uint64_t *spills, unsigned *big)
{
    *spills = 0;
    *big = 0;
    for (unsigned w = 0; w < r->workers; w++) {
        *spills += r->locals[w].spills;
        *big += (r->locals[w].mask + 1) * r->layout.entry_bytes > ENG_AGG_TABLE_BYTES;
    }
}

/* Few groups: the tables keep them all. */
static void test_few_groups(void)
{
    agg_run r;
    run_open(&r, 2);
    ref f;
    ref_init(&f, 7);
    for (int64_t i = 0; i < 100000; i++)
        ref_add(&r, &f, (unsigned)(i % 2), i % 7, i);
    uint64_t spills;
    unsigned big;
    modes(&r, &spills, &big);
    CHECK_EQ_INT(spills, 0);
    CHECK_EQ_INT(big, 0);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* Every fourth key twice in a row, the whole range of 400000 keys three
 * times: the table spills over and over, groups come back but are too
 * many for a table of ENG_AGG_TABLE_BIG, so a group ends with an entry
 * per pass, in every partition. */
static void test_spilled_tables(void)
{
    agg_run r;
    run_open(&r, 1);
    int64_t n = 400000;
    ref f;
    ref_init(&f, n);
    for (int pass = 0; pass < 3; pass++)
        for (int64_t k = 0; k < n; k++) {
            ref_add(&r, &f, 0, k, k + pass);
            if (k % 4 == 0) ref_add(&r, &f, 0, k, 1);
        }
    uint64_t spills;
    unsigned big;
    modes(&r, &spills, &big);
    CHECK(spills > 100);
    CHECK_EQ_INT(big, 0);
    for (unsigned p = 0; p < ENG_AGG_PARTS; p++)
        CHECK(r.locals[0].parts[p].entries > (uint64_t)n / ENG_AGG_PARTS);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* 15000 keys in scattered order, each met twenty times: the table spills
 * until its worker has seen the groups come back, then grows to hold all
 * of them (within ENG_AGG_TABLE_BIG); the merge folds each partition in
 * one table of entries. */
static void test_grown_tables(void)
{
    agg_run r;
    run_open(&r, 2);
    int64_t n = 15000;
    ref f;
    ref_init(&f, n);
    for (int64_t i = 0; i < 20 * n; i++)
        ref_add(&r, &f, (unsigned)(i & 1), (int64_t)(mix((uint64_t)i) % (uint64_t)n), i % 5);
    uint64_t spills;
    unsigned big;
    modes(&r, &spills, &big);
    CHECK(spills > 0);
    CHECK_EQ_INT(big, 2);
    for (unsigned w = 0; w < 2; w++)
        CHECK(r.locals[w].count > (uint64_t)n / 2);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* 60000 keys in scattered order, each met six times (q13's customers
 * over orders): the groups come back, but a table for all of them would
 * pass ENG_AGG_TABLE_BIG, so the tables keep spilling (one may grow within
 * that size while its sketch still counts fewer groups). */
static void test_not_grown_past_big(void)
{
    agg_run r;
    run_open(&r, 2);
    int64_t n = 60000;
    ref f;
    ref_init(&f, n);
    for (int64_t i = 0; i < 6 * n; i++)
        ref_add(&r, &f, (unsigned)(i & 1), (int64_t)(mix((uint64_t)i) % (uint64_t)n), i % 5);
    uint64_t spills;
    unsigned big;
    modes(&r, &spills, &big);
    CHECK(spills > 20);
    for (unsigned w = 0; w < 2; w++)
        CHECK((r.locals[w].mask + 1) * r.layout.entry_bytes <= ENG_AGG_TABLE_BIG);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* 6000 keys in scattered order, each met twenty times, 4096 groups to a
 * table of ENG_AGG_TABLE_BYTES (q15's suppliers): the sketch of every group
 * met (those spilled and those in the table) shows them coming back after
 * two spills, where counting the table's groups as new put the growth off
 * to the fourth spill. */
static void test_grown_early(void)
{
    agg_run r;
    run_open(&r, 1);
    int64_t n = 6000;
    ref f;
    ref_init(&f, n);
    for (int64_t i = 0; i < 20 * n; i++)
        ref_add(&r, &f, 0, (int64_t)(mix((uint64_t)i * 7) % (uint64_t)n), i % 11);
    uint64_t spills;
    unsigned big;
    modes(&r, &spills, &big);
    CHECK(spills > 0);
    CHECK(spills <= 2);
    CHECK_EQ_INT(big, 1);
    CHECK(r.locals[0].count > (uint64_t)n / 2);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* Clustered keys (q18's orders): each key's rows come together, so a
 * group is spilled once, and the table shrinks. The same keys then come again in that worker and
 * in two others. */
static void test_clustered(void)
{
    agg_run r;
    run_open(&r, 3);
    int64_t n = 600000;
    ref f;
    ref_init(&f, n);
    for (int64_t k = 0; k < n; k++)
        for (int64_t j = 0; j < 1 + k % 5; j++)
            ref_add(&r, &f, 0, k, k + j);
    uint64_t spills;
    unsigned big;
    modes(&r, &spills, &big);
    CHECK(spills > 10);
    CHECK_EQ_INT(big, 0);
    uint64_t entries = r.locals[0].count;
    for (unsigned p = 0; p < ENG_AGG_PARTS; p++)
        entries += r.locals[0].parts[p].entries;
    CHECK_EQ_INT(entries, n);
    /* no group came back after the spills: the table shrank to the few
     * groups at hand */
    CHECK(r.locals[0].hot);
    CHECK((r.locals[0].mask + 1) * r.layout.entry_bytes <= ENG_AGG_TABLE_BYTES / 8);
    for (int64_t k = 0; k < n; k += 3)
        ref_add(&r, &f, 0, k, 5);
    for (int64_t k = n - 1; k >= 0; k -= 2)
        ref_add(&r, &f, 1, k, -k);
    for (int64_t k = 0; k < 1000; k++)
        ref_add(&r, &f, 2, (k * 7919) % n, 1);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* One worker that never spilled: its entries are the groups. */
static void test_one_worker(void)
{
    agg_run r;
    run_open(&r, 2);
    ref f;
    ref_init(&f, 50000);
    for (int64_t i = 0; i < 200000; i++)
        ref_add(&r, &f, 1, (i * 31) % 50000, i % 13);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* Hashes that all fall in partition 3 and in one bucket of the merge's
 * split (the bits below the partition's are 0), and that collide in
 * groups of four keys: the merge tells colliding groups apart by their
 * keys, though its guess of the partition's groups is 32 times too low.
 * (The workers' tables hold them all in partition 3's run of slots, so
 * each lookup walks a long run: few keys keep the test fast.) */
static uint64_t skewed(int64_t k)
{
    uint64_t low = mix((uint64_t)(k / 4)) >> (ENG_AGG_PARTS_LOG + ENG_AGG_SUB_LOG);
    return ((uint64_t)3 << (64 - ENG_AGG_PARTS_LOG)) | low;
}

static void test_skewed_hashes(void)
{
    agg_run r;
    run_open(&r, 2);
    r.hash = skewed;
    int64_t n = 10000;
    ref f;
    ref_init(&f, n);
    /* each worker sees every key twice, far apart: tables spill, so
     * groups have entries in both workers and several in one */
    for (unsigned w = 0; w < 2; w++)
        for (int pass = 0; pass < 2; pass++)
            for (int64_t k = 0; k < n; k++)
                ref_add(&r, &f, w, (k * 7 + pass * 1001) % n, (int64_t)w - pass + k % 3);
    unsigned entries = 0;
    for (unsigned w = 0; w < 2; w++)
        entries += (unsigned)(r.locals[w].parts[3].entries + r.locals[w].count);
    CHECK((int64_t)entries > n);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* The merge's split into sub-partitions: more groups per partition than
 * one table of entries in L2 holds, several entries per group. */
static void test_split_merge(void)
{
    agg_run r;
    run_open(&r, 2);
    int64_t n = 400000;
    ref f;
    ref_init(&f, n);
    for (int64_t k = 0; k < n; k++)
        ref_add(&r, &f, (unsigned)(k & 1), k, k % 1000);
    for (int64_t k = n - 1; k >= 0; k -= 3)
        ref_add(&r, &f, (unsigned)((k >> 1) & 1), k, -1);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* --- SQL ------------------------------------------------------------------- */

static void test_sql(void)
{
    REQUIRE(exec_open());
    /* 2^21 rows: k = row number, four rows per order-like key (clustered,
     * as lineitem's l_orderkey) and a scattered key */
    CHECK_STREQ(Q("CREATE TABLE t (i BIGINT)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO t VALUES (0), (1), (2), (3)"), "INSERT 0 4");
    for (int i = 0; i < 19; i++) {
        char sql[128];
        snprintf(sql, sizeof(sql), "INSERT INTO t SELECT i + %lld FROM t", 4LL << i);
        Q(sql);
    }
    CHECK_STREQ(Q("SELECT count(*), sum(i) FROM t"), "2097152|2199022206976");
    /* 2^21 groups of one row: count and sums of the groups against the
     * table's */
    CHECK_STREQ(Q("SELECT count(*), sum(c), sum(s), min(c), max(c) FROM "
                  "(SELECT i, count(*) AS c, sum(i) AS s FROM t GROUP BY i) AS g"),
                "2097152|2097152|2199022206976|1|1");
    /* clustered: 524288 groups of 4 rows, i / 4 */
    CHECK_STREQ(Q("SELECT count(*), sum(c), min(c), max(c), sum(s) FROM "
                  "(SELECT i / 4 AS o, count(*) AS c, sum(i) AS s FROM t GROUP BY i / 4) AS g"),
                "524288|2097152|4|4|2199022206976");
    /* the sum of a group of four consecutive numbers is 16o + 6 */
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT i / 4 AS o, sum(i) AS s FROM t GROUP BY i / 4) "
                  "AS g WHERE s <> 16 * o + 6"),
                "0");
    /* q18's shape: HAVING over many groups keeps the few big ones */
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT i / 4 AS o FROM t GROUP BY i / 4 "
                  "HAVING sum(i) > 4194304) AS g"),
                "262144");
    /* scattered: 100003 groups, each key's rows far apart */
    CHECK_STREQ(Q("SELECT count(*), sum(c), min(c), max(c) FROM "
                  "(SELECT i % 100003 AS m, count(*) AS c FROM t GROUP BY i % 100003) AS g"),
                "100003|2097152|20|21");
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT i % 100003 AS m, count(*) AS c FROM t "
                  "GROUP BY i % 100003) AS g WHERE c <> (2097152 - m + 100002) / 100003"),
                "0");
    /* DISTINCT sets (their tables keep growing): every group of
     * i % 50021 over 400000 rows sees i % 5 take its 5 values */
    CHECK_STREQ(Q("SELECT count(*), min(d), max(d), sum(d) FROM (SELECT i % 50021 AS m, "
                  "count(DISTINCT i % 5) AS d FROM t WHERE i < 400000 GROUP BY i % 50021) AS g"),
                "50021|5|5|250105");
    /* SUM, COUNT and AVG of one DISTINCT argument, the sets of a group
     * coming from both workers and unioned in the merge: group m holds
     * m + 50021k, and 50021 = 6 (mod 7), so i % 7 takes all 7 values */
    CHECK_STREQ(Q("SELECT count(*), min(s), max(s), min(c), max(c), "
                  "sum(CASE WHEN a <> 3 THEN 1 ELSE 0 END) FROM (SELECT i % 50021 AS m, "
                  "sum(DISTINCT i % 7) AS s, count(DISTINCT i % 7) AS c, avg(DISTINCT i % 7) AS a "
                  "FROM t WHERE i < 400000 GROUP BY i % 50021) AS g"),
                "50021|21|21|7|7|0");
    /* string keys (longer than the 12 inline bytes) and a NULL group over
     * 300000 rows: 70001 string groups plus NULL's, each string group's
     * count equal to that of its integer key */
    const char *str_groups =
        "SELECT count(*), sum(c), sum(CASE WHEN s IS NULL THEN c END) FROM "
        "(SELECT s, count(*) AS c FROM (SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE "
        "'a-long-group-key-' || CAST(i % 70001 AS VARCHAR) END AS s FROM t WHERE i < 300000) "
        "AS x "
        "GROUP BY s) AS g";
    const char *str_vs_int =
        "SELECT count(*), sum(CASE WHEN a.c <> b.c THEN 1 ELSE 0 END) FROM "
        "(SELECT s, count(*) AS c FROM (SELECT 'a-long-group-key-' || CAST(i % 70001 AS "
        "VARCHAR) AS s FROM t WHERE i % 7 <> 0 AND i < 300000) AS x GROUP BY s) AS a JOIN "
        "(SELECT i % 70001 AS m, count(*) AS c FROM t WHERE i % 7 <> 0 AND i < 300000 "
        "GROUP BY i % 70001) "
        "AS b ON a.s = 'a-long-group-key-' || CAST(b.m AS VARCHAR)";
    CHECK_STREQ(Q(str_groups), "70002|300000|42858");
    CHECK_STREQ(Q(str_vs_int), "70001|0");
    /* NULL and non-NULL parts of a two-column key: (i % 3 or NULL, i % 5) */
    CHECK_STREQ(Q("SELECT count(*), sum(c) FROM (SELECT a, b, count(*) AS c FROM "
                  "(SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE i % 3 END AS a, i % 5 AS b "
                  "FROM t) AS x GROUP BY a, b) AS g"),
                "15|2097152");
    /* a sum that leaves BIGINT in one of 100003 groups: 22003, though
     * every other group's sum fits */
    CHECK_STREQ(Q("SELECT max(s) FROM (SELECT i % 100003 AS m, sum(CASE WHEN i = 123456 "
                  "THEN 9223372036854775807 ELSE i END) AS s FROM t GROUP BY i % 100003) AS g"),
                "ERROR 22003: bigint out of range");
    /* MIN, MAX and AVG over scattered groups: group m holds m, m + 100003,
     * ... (20 or 21 rows) */
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT i % 100003 AS m, min(i) AS lo, max(i) AS hi, "
                  "avg(i) AS a, count(*) AS c FROM t GROUP BY i % 100003) AS g WHERE lo <> m OR "
                  "hi <> m + (c - 1) * 100003 OR a <> (lo + hi) / 2.0"),
                "0");
    /* the same figures on one thread */
    CHECK_STREQ(Q("SET threads = 1"), "SET");
    CHECK_STREQ(Q(str_groups), "70002|300000|42858");
    CHECK_STREQ(Q(str_vs_int), "70001|0");
    CHECK_STREQ(Q("SELECT count(*), sum(c), min(c), max(c), sum(s) FROM "
                  "(SELECT i / 4 AS o, count(*) AS c, sum(i) AS s FROM t GROUP BY i / 4) AS g"),
                "524288|2097152|4|4|2199022206976");
    CHECK_STREQ(Q("SELECT count(*), sum(c), min(c), max(c) FROM "
                  "(SELECT i % 100003 AS m, count(*) AS c FROM t GROUP BY i % 100003) AS g"),
                "100003|2097152|20|21");
    exec_close();
}

int main(void)
{
    RUN(test_few_groups);
    RUN(test_spilled_tables);
    RUN(test_grown_tables);
    RUN(test_grown_early);
    RUN(test_not_grown_past_big);
    RUN(test_clustered);
    RUN(test_one_worker);
    RUN(test_skewed_hashes);
    RUN(test_split_merge);
    RUN(test_sql);
    return TEST_REPORT();
}
