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

/* What a query's pipelines use (rt_sortmerge.h, "in compiled pipelines"):
 * linked runs, gathered probe entries, and the cursor, which must find the
 * head of every key's run — in ascending order and out of it — and NULL for
 * keys the build range lacks. */
static void check_pipeline_helpers(eng_sm_join *sm, eng_mem *mem)
{
    const eng_sm_pair *bs = sm->build.sorted, *ps = sm->probe.sorted;
    uint64_t bad_links = 0, bad_gather = 0, bad_lookup = 0, hits = 0;
    for (uint64_t r = 0; r < sm->ranges; r++) {
        eng_sm_link_range(sm, r);
        for (uint64_t i = sm->build.range[r]; i < sm->build.range[r + 1]; i++) {
            if (i > sm->build.range[r] && bs[i - 1].key == bs[i].key) continue;
            uint64_t run = 0, j = i;
            for (eng_join_entry *e = bs[i].e; e; e = e->next, j++)
                bad_links += j >= sm->build.range[r + 1] || bs[j].e != e || bs[j].key != bs[i].key;
            run = j - i;
            bad_links += i + run < sm->build.range[r + 1] && bs[i + run].key == bs[i].key;
        }
    }
    uint8_t *g = NULL;
    size_t gbytes = sm->probe.count * sm->probe.stride;
    REQUIRE(eng_mem_alloc(mem, gbytes, -1, (void **)&g) == STO_OK);
    for (uint64_t r = 0; r < sm->ranges; r++)
        eng_sm_gather_range(sm, r, g);
    for (uint64_t i = 0; i < sm->probe.count; i++)
        bad_gather += memcmp(g + i * sm->probe.stride, ps[i].e, sm->probe.stride) != 0;
    eng_mem_free(mem, g, gbytes);
    for (uint64_t t = 0; t < sm->n_tasks; t++) {
        const eng_sm_task *k = &sm->tasks[t];
        uint64_t lo = sm->build.range[k->range], hi = sm->build.range[k->range + 1];
        eng_sm_cursor c;
        eng_sm_cursor_for(sm, t, &c);
        /* ascending (the probe pairs), then every third one backwards */
        for (int pass = 0; pass < 2; pass++)
            for (uint64_t n = 0; n < k->end - k->begin; n += pass ? 3 : 1) {
                uint64_t i = pass ? k->end - 1 - n : k->begin + n;
                uint64_t key = ps[i].key + (pass && n % 2); /* also keys in no run */
                uint64_t a = lo, z = hi;                    /* the first pair with bs.key >= key */
                while (a < z) {
                    uint64_t mid = a + (z - a) / 2;
                    if (bs[mid].key < key)
                        a = mid + 1;
                    else
                        z = mid;
                }
                const eng_join_entry *want = a < hi && bs[a].key == key ? bs[a].e : NULL;
                bad_lookup += eng_rt_sm_lookup(&c, key) != want;
                hits += want != NULL;
            }
    }
    CHECK_EQ_INT(bad_links, 0);
    CHECK_EQ_INT(bad_gather, 0);
    CHECK_EQ_INT(bad_lookup, 0);
    CHECK(hits > 0);
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
    check_pipeline_helpers(&sm, mem);
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
