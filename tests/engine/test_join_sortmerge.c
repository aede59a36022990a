/*
 * test_join_sortmerge.c — the sort-merge join's steps
 * (engine/rt_sortmerge.c): splitters, range partitioning, sorted runs and
 * their merge, merge-join tasks, and every join kind through it against the
 * nested-loop reference, with the normalized integer key and with the hash
 * as sort key.
 */
#include "join_check.h"
#include "test.h"

static eng_sched *pools[3];

static uint64_t norm_row(void *ctx, const uint8_t *row)
{
    (void)ctx;
    int64_t k;
    memcpy(&k, row, 8);
    return (uint64_t)k ^ ((uint64_t)1 << 63);
}

/* Rows hold a signed key; duplicates and a hot key when asked. */
static void fill(eng_join_mat *m, eng_mem *mem, uint64_t n, uint64_t seed, bool hot)
{
    eng_join_mat_init(m, (eng_rt_mem){mem, NULL, -1}, 8);
    cg_error err = cg_error_none();
    uint64_t s = seed;
    for (uint64_t i = 0; i < n; i++) {
        uint8_t *row;
        int64_t k = hot && i % 2 ? 42 : (int64_t)(jrand(&s) % 5000) - 2500;
        if (eng_rt_join_append(&err, m, jmix((uint64_t)k), &row)) abort();
        memcpy(row, &k, 8);
    }
}

static void check_sorting(uint64_t ranges, bool normalized, bool hot)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    eng_join_mat b[2], p[2];
    eng_join_mat *bp[2] = {&b[0], &b[1]}, *pp[2] = {&p[0], &p[1]};
    fill(&b[0], mem, 7000, 11, hot);
    fill(&b[1], mem, 3000, 12, false);
    fill(&p[0], mem, 20000, 13, hot);
    fill(&p[1], mem, 1, 14, false);
    eng_sm_join sm;
    unsigned slices = 6;
    eng_join_norm_fn norm = normalized ? norm_row : NULL;
    REQUIRE(eng_sm_init(&sm, bp, 2, pp, 2, norm, norm, NULL, slices, ranges, mem) == STO_OK);
    REQUIRE(eng_sm_sample(&sm) == STO_OK);
    for (uint64_t i = 1; i + 1 < sm.ranges; i++)
        CHECK(sm.splitters[i - 1] <= sm.splitters[i]);
    for (unsigned s = 0; s < slices; s++) {
        eng_sm_histogram(&sm, &sm.build, s);
        eng_sm_histogram(&sm, &sm.probe, s);
    }
    eng_sm_prefix(&sm);
    for (unsigned s = 0; s < slices; s++) {
        CHECK(eng_sm_scatter(&sm, &sm.build, s) == STO_OK);
        CHECK(eng_sm_scatter(&sm, &sm.probe, s) == STO_OK);
    }
    for (uint64_t r = 0; r < sm.ranges; r++) {
        CHECK(eng_sm_sort_range(&sm, &sm.build, r) == STO_OK);
        CHECK(eng_sm_sort_range(&sm, &sm.probe, r) == STO_OK);
    }
    eng_sm_side *sides[2] = {&sm.build, &sm.probe};
    for (int si = 0; si < 2; si++) {
        eng_sm_side *side = sides[si];
        uint64_t unsorted = 0, wrong_key = 0, key_sum = 0, entry_sum = 0;
        for (uint64_t i = 0; i < side->count; i++) {
            eng_sm_pair *q = &side->sorted[i];
            if (i && q->key < side->sorted[i - 1].key) unsorted++;
            uint64_t want = normalized ? norm_row(NULL, eng_join_row(q->e)) : q->e->hash;
            wrong_key += q->key != want;
            key_sum += q->key;
        }
        /* The same multiset of keys as the input. */
        for (uint64_t r = 0; r < sm.ranges; r++)
            for (uint64_t i = side->range[r]; i < side->range[r + 1]; i++)
                entry_sum += side->pairs[i].key;
        CHECK_EQ_INT(unsorted, 0); /* ranges ascend too: the whole side is sorted */
        CHECK_EQ_INT(wrong_key, 0);
        CHECK_EQ_INT(key_sum, entry_sum);
        CHECK_EQ_INT(side->range[sm.ranges], side->count);
    }
    REQUIRE(eng_sm_tasks(&sm) == STO_OK);
    uint64_t covered = 0;
    for (uint64_t t = 0; t < sm.n_tasks; t++)
        covered += sm.tasks[t].end - sm.tasks[t].begin;
    CHECK_EQ_INT(covered, sm.probe.count);
    if (hot) CHECK(sm.n_tasks >= 3); /* the range of the hot key is split */
    eng_sm_free(&sm);
    for (int i = 0; i < 2; i++) {
        eng_join_mat_free(&b[i]);
        eng_join_mat_free(&p[i]);
    }
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
}

static void test_sorting(void)
{
    check_sorting(1, true, false);
    check_sorting(9, true, false);
    check_sorting(9, false, false);
    check_sorting(0, false, false);
}

static void test_skew(void)
{
    check_sorting(8, true, true);
}

static void test_kinds(void)
{
    CHECK_EQ_INT(jcheck_cases(pools, JALG_SORTMERGE, -1, 0), 0);
    CHECK_EQ_INT(jcheck_cases(pools, JALG_SORTMERGE, -1, 7), 0);
}

int main(void)
{
    jpools(pools);
    RUN(test_sorting);
    RUN(test_skew);
    RUN(test_kinds);
    jpools_free(pools);
    return TEST_REPORT();
}
