/*
 * test_mem_pool.c — the instance's pool of big blocks (engine/mem_pool.c)
 * and how the allocation helpers of engine/mem.c use it: a block one
 * query frees is the next query's, a zeroed allocation from the pool is
 * zero, the cap is kept, accounting is untouched, and a radix join run
 * twice under one instance gets its partition buffers back and the same
 * result with no more blocks kept.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "engine/mem.h"
#include "engine/mem_pool.h"
#include "engine/rt_radix.h"
#include "test.h"

#define MB ((size_t)1 << 20)

static void test_classes(void)
{
    /* at least what is asked, at most a quarter more; four classes per
     * power of two */
    for (size_t b = MB; b < ((size_t)64 << 30); b = b * 9 / 8 + 4093) {
        size_t c = eng_mem_pool_class(b);
        CHECK(c >= b);
        CHECK(c - b <= b / 4 + 64);
        CHECK_EQ_INT(eng_mem_pool_class(c), c);
    }
    CHECK_EQ_INT(eng_mem_pool_class(8 * MB), 8 * MB);
    CHECK_EQ_INT(eng_mem_pool_class(8 * MB + 1), 10 * MB);
    CHECK_EQ_INT(eng_mem_pool_class(640 * MB), 640 * MB);
}

/* Two queries under one instance: the second gets the first's block. */
static void test_reuse_across_queries(void)
{
    eng_mem *inst, *q1, *q2;
    REQUIRE(eng_mem_create("instance", 0, NULL, &inst) == STO_OK);
    REQUIRE(eng_mem_create("query", 0, inst, &q1) == STO_OK);
    void *a;
    REQUIRE(eng_mem_alloc(q1, 3 * MB, -1, &a) == STO_OK);
    CHECK_EQ_INT((uintptr_t)a % 64, 0);
    memset(a, 0xab, 3 * MB);
    CHECK_EQ_INT(eng_mem_used(q1), 3 * MB);
    CHECK_EQ_INT(eng_mem_pooled(q1), 0);
    eng_mem_free(q1, a, 3 * MB);
    CHECK_EQ_INT(eng_mem_used(q1), 0);
    CHECK_EQ_INT(eng_mem_used(inst), 0); /* kept, but reserved by no one */
    CHECK_EQ_INT(eng_mem_pooled(inst), eng_mem_pool_class(3 * MB));
    eng_mem_destroy(q1);

    REQUIRE(eng_mem_create("query", 0, inst, &q2) == STO_OK);
    void *b;
    /* a little less than before, same class: the same block, zeroed */
    REQUIRE(eng_mem_alloc_zero(q2, 3 * MB - 4096, -1, &b) == STO_OK);
    CHECK(b == a);
    CHECK_EQ_INT(eng_mem_pooled(q2), 0);
    CHECK_EQ_INT(eng_mem_used(inst), 3 * MB - 4096);
    const uint8_t *z = b;
    size_t nonzero = 0;
    for (size_t i = 0; i < 3 * MB - 4096; i++)
        nonzero += z[i] != 0;
    CHECK_EQ_INT(nonzero, 0);
    /* small blocks never go to the pool */
    void *s;
    REQUIRE(eng_mem_alloc(q2, 64 << 10, -1, &s) == STO_OK);
    eng_mem_free(q2, s, 64 << 10);
    CHECK_EQ_INT(eng_mem_pooled(q2), 0);
    eng_mem_free(q2, b, 3 * MB - 4096);
    eng_mem_destroy(q2);
    CHECK_EQ_INT(eng_mem_used(inst), 0);
    eng_mem_destroy(inst); /* frees what the pool keeps (ASan: no leak) */
}

/* A much bigger request does not take a small block, and a small one
 * not a much bigger block. */
static void test_fit(void)
{
    eng_mem_pool *p;
    REQUIRE(eng_mem_pool_create(64 * MB, &p) == STO_OK);
    CHECK_EQ_INT(eng_mem_pool_cap(p), 64 * MB);
    void *a = NULL;
    REQUIRE(posix_memalign(&a, 64, eng_mem_pool_class(2 * MB)) == 0);
    CHECK(eng_mem_pool_give(p, a, 2 * MB));
    CHECK(eng_mem_pool_take(p, 4 * MB) == NULL);
    CHECK(eng_mem_pool_take(p, MB) == NULL);
    CHECK(eng_mem_pool_take(p, 2 * MB) == a);
    CHECK(eng_mem_pool_take(p, 2 * MB) == NULL);
    CHECK_EQ_INT(eng_mem_pool_bytes(p), 0);
    free(a);
    eng_mem_pool_destroy(p);
}

/* The pool keeps at most its cap: the oldest blocks leave first, and a
 * block bigger than the cap is not kept at all. */
static void test_cap(void)
{
    eng_mem_pool *p;
    REQUIRE(eng_mem_pool_create(10 * MB, &p) == STO_OK);
    void *b[4];
    for (int i = 0; i < 4; i++) {
        REQUIRE(posix_memalign(&b[i], 64, 4 * MB) == 0);
        CHECK(eng_mem_pool_give(p, b[i], 4 * MB));
        CHECK(eng_mem_pool_bytes(p) <= 10 * MB);
    }
    CHECK_EQ_INT(eng_mem_pool_bytes(p), 8 * MB);
    void *big = NULL;
    REQUIRE(posix_memalign(&big, 64, 16 * MB) == 0);
    CHECK(!eng_mem_pool_give(p, big, 16 * MB));
    free(big);
    /* b[0] and b[1] were given back to the system; the newest comes first */
    CHECK(eng_mem_pool_take(p, 4 * MB) == b[3]);
    CHECK(eng_mem_pool_take(p, 4 * MB) == b[2]);
    CHECK(eng_mem_pool_take(p, 4 * MB) == NULL);
    free(b[2]);
    free(b[3]);
    eng_mem_pool_destroy(p);
}

typedef struct churn_arg {
    eng_mem *inst;
    int fails;
} churn_arg;

/* Each thread is a query allocating, filling, checking and freeing blocks
 * of a few sizes: no block is handed to two holders at once. */
static void *churn(void *arg)
{
    churn_arg *c = arg;
    eng_mem *q;
    if (eng_mem_create("query", 0, c->inst, &q)) {
        c->fails++;
        return NULL;
    }
    for (int i = 0; i < 200; i++) {
        size_t bytes = MB + (size_t)(i % 5) * 700000;
        uint8_t *p;
        if (eng_mem_alloc(q, bytes, -1, (void **)&p)) {
            c->fails++;
            break;
        }
        uint8_t tag = (uint8_t)(i * 7 + (int)(uintptr_t)c % 251);
        for (size_t o = 0; o < bytes; o += 4096)
            p[o] = tag;
        for (size_t o = 0; o < bytes; o += 4096)
            c->fails += p[o] != tag;
        eng_mem_free(q, p, bytes);
    }
    if (eng_mem_used(q)) c->fails++;
    eng_mem_destroy(q);
    return NULL;
}

static void test_threads(void)
{
    eng_mem *inst;
    REQUIRE(eng_mem_create("instance", 0, NULL, &inst) == STO_OK);
    pthread_t t[4];
    churn_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (churn_arg){inst, 0};
        REQUIRE(pthread_create(&t[i], NULL, churn, &a[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ_INT(a[i].fails, 0);
    }
    CHECK_EQ_INT(eng_mem_used(inst), 0);
    CHECK(eng_mem_pooled(inst) > 0);
    eng_mem_destroy(inst);
}

/* --- a radix join's buffers, run twice under one instance ------------------ */

static void fill(eng_join_mat *m, uint64_t n, uint64_t seed)
{
    cg_error err = cg_error_none();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = (i * 2654435761u + seed) % (n / 2 + 1), h = k * 0x9E3779B97F4A7C15ULL;
        uint8_t *row;
        REQUIRE(eng_rt_join_append(&err, m, h, &row) == 0);
        memcpy(row, &k, 8);
        memcpy(row + 8, &i, 8);
    }
}

/* The checksum of every partition: sum over entries of hash × (position
 * of the partition + 1) and of their payloads. */
static uint64_t radix_once(eng_mem *inst)
{
    eng_mem *q;
    if (eng_mem_create("query", 0, inst, &q)) return 0;
    eng_join_mat b, p;
    eng_join_mat_init(&b, (eng_rt_mem){q, NULL, -1}, 16);
    eng_join_mat_init(&p, (eng_rt_mem){q, NULL, -1}, 16);
    fill(&b, 150000, 1);
    fill(&p, 200000, 2);
    eng_join_mat *bp[1] = {&b}, *pp[1] = {&p};
    eng_radix_join rj;
    if (eng_radix_init(&rj, bp, 1, pp, 1, 4, 12, q)) return 0;
    for (unsigned s = 0; s < 4; s++) {
        eng_radix_histogram(&rj, &rj.build, s);
        eng_radix_histogram(&rj, &rj.probe, s);
    }
    eng_radix_prefix(&rj);
    for (unsigned s = 0; s < 4; s++) {
        CHECK(eng_radix_scatter(&rj, &rj.build, s) == STO_OK);
        CHECK(eng_radix_scatter(&rj, &rj.probe, s) == STO_OK);
    }
    for (uint64_t x = 0; x < ((uint64_t)1 << rj.bits1); x++) {
        eng_radix_refine(&rj, &rj.build, x);
        eng_radix_refine(&rj, &rj.probe, x);
    }
    uint64_t sum = 0;
    eng_radix_side *sides[2] = {&rj.build, &rj.probe};
    for (int k = 0; k < 2; k++)
        for (uint64_t part = 0; part < rj.parts; part++)
            for (uint64_t i = sides[k]->part[part]; i < sides[k]->part[part + 1]; i++) {
                eng_join_entry *e = eng_join_entry_at(sides[k]->out, sides[k]->stride, i);
                CHECK_EQ_INT(e->hash >> (64 - 12), part);
                uint64_t pay;
                memcpy(&pay, eng_join_row(e) + 8, 8);
                sum += e->hash * (part + 1) + pay * (uint64_t)(k + 1);
            }
    eng_radix_free(&rj);
    eng_join_mat_free(&b);
    eng_join_mat_free(&p);
    CHECK_EQ_INT(eng_mem_used(q), 0);
    eng_mem_destroy(q);
    return sum;
}

static void test_radix_twice(void)
{
    eng_mem *inst;
    REQUIRE(eng_mem_create("instance", 0, NULL, &inst) == STO_OK);
    uint64_t a = radix_once(inst);
    uint64_t kept = eng_mem_pooled(inst); /* partition buffers, big blocks */
    CHECK(kept >= (size_t)14 * MB);
    uint64_t b = radix_once(inst);
    CHECK_EQ_INT(a, b);
    /* the second run took its big blocks from the pool: had it mapped
     * fresh ones, the pool would now hold both runs' */
    CHECK(eng_mem_pooled(inst) <= kept);
    CHECK(eng_mem_pooled(inst) > 0);
    eng_mem_destroy(inst);
}

int main(void)
{
    RUN(test_classes);
    RUN(test_reuse_across_queries);
    RUN(test_fit);
    RUN(test_cap);
    RUN(test_threads);
    RUN(test_radix_twice);
    return TEST_REPORT();
}
