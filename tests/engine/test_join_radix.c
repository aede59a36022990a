/*
 * test_join_radix.c — the radix-partitioned join's steps
 * (engine/rt_radix.c) one by one, one and two partitioning passes, the
 * probe tasks that split a hot partition, and every join kind through it
 * against the nested-loop reference.
 */
#include "join_check.h"
#include "test.h"

static eng_sched *pools[3];

/* One mat of n entries with 8-byte rows holding i and hashes from jmix
 * (hot: 60% share one hash). */
static void fill(eng_join_mat *m, eng_mem *mem, uint64_t n, uint64_t seed, bool hot)
{
    eng_join_mat_init(m, (eng_rt_mem){mem, NULL, -1}, 8);
    cg_error err = cg_error_none();
    for (uint64_t i = 0; i < n; i++) {
        uint8_t *row;
        uint64_t h = hot && i % 5 < 3 ? jmix(seed) : jmix(i * 977 + seed);
        if (eng_rt_join_append(&err, m, h, &row)) abort();
        memcpy(row, &i, 8);
    }
}

/* Runs the steps single-threaded and checks the partitioned sides. */
static void check_partitioning(int bits, uint64_t nb, uint64_t np, bool hot)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    eng_join_mat b[2], p[2];
    eng_join_mat *bp[2] = {&b[0], &b[1]}, *pp[2] = {&p[0], &p[1]};
    fill(&b[0], mem, nb / 2, 1, false);
    fill(&b[1], mem, nb - nb / 2, 2, false);
    fill(&p[0], mem, np / 3, 3, hot);
    fill(&p[1], mem, np - np / 3, 4, hot);
    eng_radix_join rj;
    unsigned slices = 5;
    REQUIRE(eng_radix_init(&rj, bp, 2, pp, 2, slices, bits, mem) == STO_OK);
    CHECK_EQ_INT(rj.bits1 + rj.bits2, bits);
    CHECK(rj.bits1 <= ENG_RADIX_MAX_BITS);
    for (unsigned s = 0; s < slices; s++) {
        eng_radix_histogram(&rj, &rj.build, s);
        eng_radix_histogram(&rj, &rj.probe, s);
    }
    eng_radix_prefix(&rj);
    for (unsigned s = 0; s < slices; s++) {
        CHECK(eng_radix_scatter(&rj, &rj.build, s) == STO_OK);
        CHECK(eng_radix_scatter(&rj, &rj.probe, s) == STO_OK);
    }
    for (uint64_t q = 0; q < ((uint64_t)1 << rj.bits1); q++) {
        eng_radix_refine(&rj, &rj.build, q);
        eng_radix_refine(&rj, &rj.probe, q);
    }
    eng_radix_side *sides[2] = {&rj.build, &rj.probe};
    uint64_t counts[2] = {nb, np};
    for (int si = 0; si < 2; si++) {
        eng_radix_side *side = sides[si];
        CHECK_EQ_INT(side->part[rj.parts], counts[si]);
        /* Every entry sits in the partition of its top bits, and each row
         * of a mat appears once. */
        uint64_t misplaced = 0, sum = 0;
        for (uint64_t q = 0; q < rj.parts; q++) {
            CHECK(side->part[q] <= side->part[q + 1]);
            for (uint64_t i = side->part[q]; i < side->part[q + 1]; i++) {
                eng_join_entry *e = eng_join_entry_at(side->out, side->stride, i);
                uint64_t want = bits ? e->hash >> (64 - bits) : 0;
                misplaced += want != q;
                uint64_t id;
                memcpy(&id, eng_join_row(e), 8);
                sum += id;
            }
        }
        CHECK_EQ_INT(misplaced, 0);
        uint64_t half = si ? np / 3 : nb / 2, rest = counts[si] - half;
        CHECK_EQ_INT(sum, half * (half - 1) / 2 + rest * (rest - 1) / 2);
    }
    /* Build: every build entry is found through its partition's table. */
    for (uint64_t q = 0; q < rj.parts; q++)
        CHECK(eng_radix_build(&rj, q) == STO_OK);
    uint64_t found = 0;
    for (uint64_t i = 0; i < nb; i++) {
        eng_join_entry *want = eng_join_entry_at(rj.build.out, rj.build.stride, i);
        const eng_join_ht *ht = &rj.tables[bits ? want->hash >> (64 - bits) : 0];
        for (eng_join_entry *e = eng_join_ht_lookup(ht, want->hash); e; e = e->next)
            found += e == want;
    }
    CHECK_EQ_INT(found, nb);
    /* Tasks cover the probe side once; none is bigger than the bound. */
    REQUIRE(eng_radix_tasks(&rj) == STO_OK);
    uint64_t covered = 0, biggest = 0;
    uint64_t avg = (np + rj.parts - 1) / rj.parts;
    uint64_t bound = 2 * avg > ENG_RADIX_TASK_MIN ? 2 * avg : ENG_RADIX_TASK_MIN;
    for (uint64_t t = 0; t < rj.n_tasks; t++) {
        eng_radix_task *k = &rj.tasks[t];
        CHECK(k->begin >= rj.probe.part[k->part] && k->end <= rj.probe.part[k->part + 1]);
        covered += k->end - k->begin;
        if (k->end - k->begin > biggest) biggest = k->end - k->begin;
    }
    CHECK_EQ_INT(covered, np);
    CHECK(biggest <= bound);
    if (hot) CHECK(rj.n_tasks >= 3 * np / 5 / bound); /* the hot partition is split */
    eng_radix_free(&rj);
    for (int i = 0; i < 2; i++) {
        eng_join_mat_free(&b[i]);
        eng_join_mat_free(&p[i]);
    }
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
}

static void test_one_pass(void)
{
    check_partitioning(0, 1000, 2000, false);
    check_partitioning(6, 20000, 30000, false);
    check_partitioning(10, 20000, 30000, false);
}

static void test_two_passes(void)
{
    check_partitioning(13, 30000, 30000, false);
    check_partitioning(ENG_RADIX_MAX_BITS + 1, 5000, 7000, false);
}

static void test_skew_tasks(void)
{
    check_partitioning(4, 5000, 60000, true);
}

/* The plan chooses enough bits for cache-sized build partitions. */
static void test_choose_bits(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    eng_join_mat b, p;
    eng_join_mat *bp = &b, *pp = &p;
    fill(&b, mem, 200000, 1, false);
    fill(&p, mem, 10, 2, false);
    eng_radix_join rj;
    REQUIRE(eng_radix_init(&rj, &bp, 1, &pp, 1, 1, -1, mem) == STO_OK);
    uint64_t bytes = 200000ull * b.stride;
    CHECK((ENG_RADIX_PART_BYTES << (rj.bits1 + rj.bits2)) >= bytes);
    CHECK((ENG_RADIX_PART_BYTES << (rj.bits1 + rj.bits2 - 1)) < bytes);
    eng_radix_free(&rj);
    eng_join_mat_free(&b);
    eng_join_mat_free(&p);
    eng_mem_destroy(mem);
}

static void test_kinds(void)
{
    CHECK_EQ_INT(jcheck_cases(pools, JALG_RADIX, 3, 0), 0);
    CHECK_EQ_INT(jcheck_cases(pools, JALG_RADIX, 12, 0), 0); /* two passes */
}

/* The write-combine buffers mirror the output's cache lines: for rows of
 * every width (strides of 32 to 256 bytes: several tuples to a flush, a
 * tuple across a line, tuples copied straight) and with and without
 * non-temporal stores, every byte of every row arrives, in the partition
 * of its top bits, with the neighbouring slices' regions intact. */
static void test_scatter_widths(void)
{
    static const uint32_t widths[] = {8, 16, 24, 40, 56, 104, 136, 232};
    for (unsigned w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
        for (int stream = 0; stream < 2; stream++) {
            uint32_t rb = widths[w];
            eng_mem *mem;
            REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
            eng_join_mat m[2];
            eng_join_mat *mp[2] = {&m[0], &m[1]};
            uint64_t n = 30011;
            for (int k = 0; k < 2; k++) {
                eng_join_mat_init(&m[k], (eng_rt_mem){mem, NULL, -1}, rb);
                cg_error err = cg_error_none();
                for (uint64_t i = k; i < n; i += 2) {
                    uint8_t *row;
                    REQUIRE(eng_rt_join_append(&err, &m[k], jmix(i + 7), &row) == 0);
                    for (uint32_t b = 0; b < rb; b++)
                        row[b] = (uint8_t)(i * 31 + b * 7);
                    memcpy(row, &i, 8);
                }
            }
            eng_radix_join rj;
            unsigned slices = 7;
            REQUIRE(eng_radix_init(&rj, mp, 2, mp, 2, slices, 9, mem) == STO_OK);
            rj.stream = stream;
            for (unsigned s = 0; s < slices; s++)
                eng_radix_histogram(&rj, &rj.build, s);
            eng_radix_prefix(&rj);
            /* even slices first: a slice that wrote over the first line
             * of its region would spoil the tail of the one before it,
             * already written (workers take slices in any order) */
            for (unsigned s = 0; s < slices; s += 2)
                CHECK(eng_radix_scatter(&rj, &rj.build, s) == STO_OK);
            for (unsigned s = 1; s < slices; s += 2)
                CHECK(eng_radix_scatter(&rj, &rj.build, s) == STO_OK);
            uint64_t misplaced = 0, bad_bytes = 0, ids = 0;
            for (uint64_t q = 0; q < rj.parts; q++)
                for (uint64_t i = rj.build.part[q]; i < rj.build.part[q + 1]; i++) {
                    eng_join_entry *e = eng_join_entry_at(rj.build.out, rj.build.stride, i);
                    misplaced += e->hash >> (64 - 9) != q;
                    uint64_t id;
                    memcpy(&id, eng_join_row(e), 8);
                    misplaced += e->hash != jmix(id + 7);
                    for (uint32_t b = 8; b < rb; b++)
                        bad_bytes += eng_join_row(e)[b] != (uint8_t)(id * 31 + b * 7);
                    ids += id;
                }
            CHECK_EQ_INT(rj.build.part[rj.parts], n);
            CHECK_EQ_INT(misplaced, 0);
            CHECK_EQ_INT(bad_bytes, 0);
            CHECK_EQ_INT(ids, n * (n - 1) / 2);
            eng_radix_free(&rj);
            eng_join_mat_free(&m[0]);
            eng_join_mat_free(&m[1]);
            eng_mem_destroy(mem);
        }
}

int main(void)
{
    jpools(pools);
    RUN(test_one_pass);
    RUN(test_two_passes);
    RUN(test_scatter_widths);
    RUN(test_skew_tasks);
    RUN(test_choose_bits);
    RUN(test_kinds);
    jpools_free(pools);
    return TEST_REPORT();
}
