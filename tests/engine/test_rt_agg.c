/*
 * test_rt_agg.c — hash aggregation's tables and merge (engine/rt_agg.h).
 *
 * The unit part drives eng_rt_agg_find as generated code does (find the
 * group, update its states) from several workers, merges every partition
 * as finalize does, and compares each group's COUNT(*) and SUM with counts
 * and sums computed here. The key sequences are chosen to take each path
 * of the bounded local tables: few groups (tables never fill), a group's
 * rows meeting it again now and then (full tables are emptied and fill
 * again, so a group has several entries in one worker), groups that keep
 * coming back (full tables grow on), groups that are always new when the
 * table fills (the table is dropped and every find appends), the same
 * keys in several workers, one worker alone (emitted without a merge
 * table), hashes that all fall in one piece of the merge's split and
 * collide, and a merge split into many pieces. The SQL part checks
 * millions of groups, clustered and scattered keys, string keys longer
 * than the inline bytes, NULL keys, and DISTINCT aggregates (whose tables
 * keep growing), on 1 thread and the default, against the same figures
 * computed another way.
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

/* Which mode each worker's partitions ended in. */
static void modes(const agg_run *r, unsigned *appending, unsigned *emptied)
{
    *appending = *emptied = 0;
    for (unsigned w = 0; w < r->workers; w++)
        for (unsigned p = 0; p < ENG_AGG_PARTS; p++) {
            const eng_agg_part *part = &r->locals[w].parts[p];
            *appending += part->append;
            *emptied += !part->append && part->entries > part->count;
        }
}

/* Few groups: every table keeps them all. */
static void test_few_groups(void)
{
    agg_run r;
    run_open(&r, 2);
    ref f;
    ref_init(&f, 7);
    for (int64_t i = 0; i < 100000; i++)
        ref_add(&r, &f, (unsigned)(i % 2), i % 7, i);
    unsigned appending, emptied;
    modes(&r, &appending, &emptied);
    CHECK_EQ_INT(appending + emptied, 0);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* Every fourth key twice in a row, the whole key range three times: the
 * tables fill while a quarter of the finds meet an old group (too few to
 * grow on, enough not to be dropped), so they are emptied and a group
 * ends with an entry per pass. */
static void test_emptied_tables(void)
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
    unsigned appending, emptied;
    modes(&r, &appending, &emptied);
    CHECK_EQ_INT(appending, 0);
    CHECK_EQ_INT(emptied, ENG_AGG_PARTS);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* 200000 keys in scattered order, each met eight times: a partition's
 * table fills (6250 groups) while its groups keep coming back, so it grows
 * past ENG_AGG_LOCAL_CAP instead of being emptied, and every group has
 * one entry. */
static void test_grown_tables(void)
{
    agg_run r;
    run_open(&r, 1);
    int64_t n = 200000;
    ref f;
    ref_init(&f, n);
    for (int64_t i = 0; i < 8 * n; i++)
        ref_add(&r, &f, 0, (int64_t)(mix((uint64_t)i) % (uint64_t)n), i % 5);
    unsigned appending, emptied, grown = 0;
    modes(&r, &appending, &emptied);
    for (unsigned p = 0; p < ENG_AGG_PARTS; p++)
        grown += r.locals[0].parts[p].cap > ENG_AGG_LOCAL_CAP;
    CHECK_EQ_INT(appending + emptied, 0);
    CHECK_EQ_INT(grown, ENG_AGG_PARTS);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* Every key new when the table fills (q18's pattern once the generated
 * code has met the repeated rows): the tables are dropped. The same keys
 * then come again in that worker and in two others. */
static void test_appending(void)
{
    agg_run r;
    run_open(&r, 3);
    int64_t n = 600000;
    ref f;
    ref_init(&f, n);
    for (int64_t k = 0; k < n; k++)
        ref_add(&r, &f, 0, k, k);
    for (int64_t k = 0; k < n; k += 3)
        ref_add(&r, &f, 0, k, 5);
    for (int64_t k = n - 1; k >= 0; k -= 2)
        ref_add(&r, &f, 1, k, -k);
    for (int64_t k = 0; k < 1000; k++)
        ref_add(&r, &f, 2, (k * 7919) % n, 1);
    unsigned appending, emptied;
    modes(&r, &appending, &emptied);
    CHECK(appending >= 2 * ENG_AGG_PARTS);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* One worker that never filled a table: its entries are the groups. */
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
 * groups of four keys: the merge folds every entry in one big table and
 * tells colliding groups apart by their keys. */
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
    int64_t n = 150000;
    ref f;
    ref_init(&f, n);
    /* each worker sees every key twice, far apart: tables are emptied or
     * dropped, so groups have entries in both workers and several in one */
    for (unsigned w = 0; w < 2; w++)
        for (int pass = 0; pass < 2; pass++)
            for (int64_t k = 0; k < n; k++)
                ref_add(&r, &f, w, (k * 7 + pass * 1001) % n, (int64_t)w - pass + k % 3);
    unsigned entries = 0;
    for (unsigned w = 0; w < 2; w++)
        entries += (unsigned)r.locals[w].parts[3].entries;
    CHECK((int64_t)entries > n);
    run_check(&r, f.count, f.sum, f.n);
    ref_free(&f);
}

/* The merge's split into sub-partitions: entries spread over many of
 * them, several entries per group in each worker (one pass per worker
 * appends, the other finds). */
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
    RUN(test_emptied_tables);
    RUN(test_grown_tables);
    RUN(test_appending);
    RUN(test_one_worker);
    RUN(test_skewed_hashes);
    RUN(test_split_merge);
    RUN(test_sql);
    return TEST_REPORT();
}
