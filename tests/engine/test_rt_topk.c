/*
 * test_rt_topk.c — ORDER BY ... LIMIT as a heap per worker (rt_sort.h's
 * eng_topk), merged at the end.
 *
 * The unit part feeds random rows (an INTEGER key with NULLs and many ties,
 * a unique BIGINT id) round-robin into three row sinks with a top-k heap,
 * sorts and merges them as the executor does, and compares the keys of the
 * result with the first k of a full sort: ASC/DESC, NULLS FIRST/LAST, one or
 * two keys, k from 0 to beyond the input. It also checks that a worker's
 * sink never holds more than k + 1 rows once it has filled. The SQL part
 * checks LIMIT/OFFSET over a table large enough for the heaps to fill
 * against the same query without LIMIT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/rt_sort.h"
#include "exec_check.h"
#include "test.h"

#define NCOLS   2
#define WORKERS 3

static uint32_t rng_state = 12345;

static uint32_t rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

static void write_row(uint8_t *row, int32_t key, bool key_null, int64_t id)
{
    memset(row, 0, cg_row_bytes(NCOLS));
    memcpy(row, &key, sizeof(key));
    memcpy(row + CG_ROW_SLOT, &id, sizeof(id));
    row[cg_row_null_offset(NCOLS, 0)] = key_null;
}

static const eng_sort_spec *qsort_spec;

static int cmp_rows(const void *a, const void *b)
{
    return eng_sort_compare(qsort_spec, a, b);
}

/* One configuration: n rows with keys in [0, distinct) (and NULLs), k kept. */
static void check_topk(uint64_t n, uint32_t distinct, uint64_t k, bool desc, bool nulls_first,
                       bool by_id_too)
{
    eng_mem *mem = NULL;
    REQUIRE(eng_mem_create("topk", 0, NULL, &mem) == STO_OK);
    eng_sort_key keys[2] = {
        {0, sto_type_make(STO_TYPE_INTEGER), desc, nulls_first},
        {1, sto_type_make(STO_TYPE_BIGINT), false, false},
    };
    eng_sort_spec spec = {NCOLS, by_id_too ? 2 : 1, keys};
    uint32_t rb = cg_row_bytes(NCOLS);
    uint8_t *all = malloc((n ? n : 1) * rb);
    REQUIRE(all != NULL);

    eng_rows_sink sinks[WORKERS];
    eng_topk heaps[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        eng_rows_sink_init(&sinks[w], (eng_rt_mem){mem, NULL, -1}, rb);
        eng_topk_attach(&heaps[w], &spec, k, &sinks[w]);
    }
    bool bounded = true;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t r = rnd();
        bool null = r % 10 == 0;
        int32_t key = (int32_t)(r / 10 % distinct) - (int32_t)(distinct / 2);
        write_row(all + i * rb, key, null, (int64_t)i);
        eng_rows_sink *s = &sinks[i % WORKERS];
        cg_error err = cg_error_none();
        uint8_t *row = NULL;
        REQUIRE(eng_rt_rows_append(&err, s, &row) == CG_ERR_NONE);
        memcpy(row, all + i * rb, rb);
        if (heaps[i % WORKERS].heap && s->rows > k + 1) bounded = false;
    }
    CHECK(bounded);

    eng_rows_sink *runs[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        CHECK(eng_sort_run(&spec, &sinks[w], k) == STO_OK);
        runs[w] = &sinks[w];
    }
    eng_rowset out;
    REQUIRE(eng_sort_merge(&spec, runs, WORKERS, k, mem, &out) == STO_OK);

    qsort_spec = &spec;
    qsort(all, n, rb, cmp_rows);
    uint64_t want = k < n ? k : n;
    CHECK_EQ_INT((long long)out.rows, (long long)want);
    bool same = out.rows == want;
    /* Ties on the keys may come in any order: compare the keys, and check
     * that no id appears twice. */
    for (uint64_t i = 0; same && i < want; i++)
        same = eng_sort_compare(&spec, out.data + i * out.row_bytes, all + i * rb) == 0;
    CHECK(same);
    char *seen = calloc(n ? n : 1, 1);
    bool unique = seen != NULL;
    for (uint64_t i = 0; unique && i < out.rows; i++) {
        int64_t id;
        memcpy(&id, out.data + i * out.row_bytes + CG_ROW_SLOT, sizeof(id));
        unique = id >= 0 && (uint64_t)id < n && !seen[id];
        if (unique) seen[id] = 1;
    }
    CHECK(unique);
    if (!same || !unique)
        fprintf(stderr, "  n=%llu distinct=%u k=%llu desc=%d nulls_first=%d two_keys=%d\n",
                (unsigned long long)n, distinct, (unsigned long long)k, desc, nulls_first,
                by_id_too);
    free(seen);
    eng_rowset_free(&out);
    free(all);
    eng_mem_destroy(mem);
}

static void test_heap_matches_full_sort(void)
{
    const uint64_t ks[] = {0, 1, 2, 7, 100, 1500, 9000, 50000};
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
        for (int flags = 0; flags < 8; flags++)
            check_topk(20000, 50, ks[i], flags & 1, flags & 2, flags & 4);
}

static void test_heap_edge_inputs(void)
{
    check_topk(0, 5, 10, false, false, false);       /* no rows */
    check_topk(5, 5, 10, true, true, false);         /* fewer rows than k */
    check_topk(3000, 1, 20, false, false, false);    /* all keys equal (and NULLs) */
    check_topk(30000, 100000, 3, true, false, true); /* almost no ties */
    check_topk(4000, 3, 1025, false, true, true);    /* k near the sink's first size */
}

/* Table tk: 6144 rows, id unique, x with ties and NULLs, s strings (made
 * from b1024, ids 0..1023 by doubling). */
static void setup_sql(void)
{
    char sql[256];
    CHECK_STREQ(Q("CREATE TABLE b1024 (id BIGINT)"), "CREATE TABLE");
    CHECK_STREQ(Q("INSERT INTO b1024 VALUES (0), (1), (2), (3), (4), (5), (6), (7)"), "INSERT 0 8");
    for (int i = 0; i < 7; i++) {
        snprintf(sql, sizeof(sql), "INSERT INTO b1024 SELECT id + %d FROM b1024", 8 << i);
        Q(sql);
    }
    CHECK_STREQ(Q("SELECT count(*), min(id), max(id) FROM b1024"), "1024|0|1023");
    CHECK_STREQ(Q("CREATE TABLE tk (id BIGINT, x INTEGER, s VARCHAR)"), "CREATE TABLE");
    for (int i = 0; i < 6; i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO tk SELECT id + %d, CASE WHEN (id + %d) %% 11 = 0 THEN NULL "
                 "ELSE ((id + %d) * 7919) %% 37 END, 'str' || CAST((id + %d) %% 13 AS VARCHAR) "
                 "FROM b1024",
                 i * 1024, i * 1024, i * 1024, i * 1024);
        CHECK_STREQ(Q(sql), "INSERT 0 1024");
    }
}

/* The rows [offset, offset + limit) of `full`'s output, as text. */
static void expect_slice(const char *full, const char *limited, int offset, int limit)
{
    char *all = strdup(Q(full));
    REQUIRE(all != NULL);
    char *start = all;
    for (int i = 0; i < offset && start; i++) {
        start = strchr(start, '\n');
        if (start) start++;
    }
    char *end = start;
    for (int i = 0; i < limit && end; i++) {
        end = strchr(end, '\n');
        if (end && i + 1 < limit) end++;
    }
    if (end) *end = '\0';
    CHECK_STREQ(Q(limited), start ? start : "");
    free(all);
}

static void test_sql_limit_offset(void)
{
    expect_slice("SELECT id, x FROM tk ORDER BY x, id",
                 "SELECT id, x FROM tk ORDER BY x, id LIMIT 25", 0, 25);
    expect_slice("SELECT id, x FROM tk ORDER BY x DESC NULLS FIRST, id DESC",
                 "SELECT id, x FROM tk ORDER BY x DESC NULLS FIRST, id DESC LIMIT 40 OFFSET 520",
                 520, 40);
    expect_slice("SELECT id, x FROM tk ORDER BY x NULLS FIRST, id",
                 "SELECT id, x FROM tk ORDER BY x NULLS FIRST, id LIMIT 3 OFFSET 5", 5, 3);
    expect_slice("SELECT id, x FROM tk ORDER BY x DESC, id",
                 "SELECT id, x FROM tk ORDER BY x DESC, id LIMIT 2000 OFFSET 10", 10, 2000);
    expect_slice("SELECT s, id FROM tk ORDER BY s DESC, id",
                 "SELECT s, id FROM tk ORDER BY s DESC, id LIMIT 7 OFFSET 1", 1, 7);
    /* ties without a tie-breaker: only the keys are determined */
    expect_slice("SELECT x FROM tk ORDER BY x", "SELECT x FROM tk ORDER BY x LIMIT 100", 0, 100);
    CHECK_STREQ(Q("SELECT count(*) FROM (SELECT id FROM tk ORDER BY x LIMIT 10000) AS l"), "6144");
    CHECK_STREQ(Q("SELECT id FROM tk ORDER BY id DESC LIMIT 3 OFFSET 6144"), "");
    CHECK_STREQ(Q("SELECT id FROM tk ORDER BY x LIMIT 0"), "");
}

int main(void)
{
    RUN(test_heap_matches_full_sort);
    RUN(test_heap_edge_inputs);

    if (!exec_open()) return 1;
    RUN(setup_sql);
    const char *threads[] = {"1", "2"};
    for (int i = 0; i < 2; i++) {
        char sql[64];
        snprintf(sql, sizeof(sql), "SET threads = %s", threads[i]);
        CHECK_STREQ(Q(sql), "SET");
        RUN(test_sql_limit_offset);
    }
    exec_close();
    return TEST_REPORT();
}
