/*
 * test_mem.c — memory trackers, reservation caches and the allocation
 * helpers (engine/mem.c).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "engine/mem.h"
#include "test.h"

static void test_format(void)
{
    char b[32];
    eng_mem_format(100, b, sizeof(b));
    CHECK_STREQ(b, "100 bytes");
    eng_mem_format(1024, b, sizeof(b));
    CHECK_STREQ(b, "1kB");
    eng_mem_format(1536, b, sizeof(b));
    CHECK_STREQ(b, "1.5kB");
    eng_mem_format(64ull << 20, b, sizeof(b));
    CHECK_STREQ(b, "64MB");
    eng_mem_format(8ull << 30, b, sizeof(b));
    CHECK_STREQ(b, "8GB");
    eng_mem_format(3ull << 40, b, sizeof(b));
    CHECK_STREQ(b, "3TB");
}

static void test_limit(void)
{
    eng_mem *m;
    REQUIRE(eng_mem_create("query", 1 << 20, NULL, &m) == STO_OK);
    CHECK_EQ_INT(eng_mem_limit(m), 1 << 20);
    CHECK(eng_mem_reserve(m, 600 << 10) == STO_OK);
    CHECK(eng_mem_reserve(m, 424 << 10) == STO_OK); /* exactly the limit */
    CHECK_EQ_INT(eng_mem_used(m), 1 << 20);
    sto_status st = eng_mem_reserve(m, 1);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->sqlstate, "53200");
    CHECK_STREQ(st->message, "out of memory: query needs more than 1.0MB of memory_limit 1MB");
    sto_status_free(st);
    CHECK_EQ_INT(eng_mem_used(m), 1 << 20); /* a refusal takes nothing */
    eng_mem_release(m, 1 << 20);
    CHECK_EQ_INT(eng_mem_used(m), 0);
    CHECK_EQ_INT(eng_mem_peak(m), 1 << 20);

    st = eng_mem_reserve(m, 3 << 20);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->message, "out of memory: query needs more than 3MB of memory_limit 1MB");
    sto_status_free(st);

    /* SET memory_limit: a new limit, or none. */
    eng_mem_set_limit(m, 4 << 20);
    CHECK(eng_mem_reserve(m, 3 << 20) == STO_OK);
    eng_mem_set_limit(m, 0);
    CHECK(eng_mem_reserve(m, 1ull << 40) == STO_OK);
    eng_mem_release(m, (1ull << 40) + (3 << 20));
    CHECK_EQ_INT(eng_mem_used(m), 0);
    CHECK(eng_mem_reserve(m, 0) == STO_OK);
    CHECK(eng_mem_reserve(NULL, 100) == STO_OK); /* no tracker, no accounting */
    eng_mem_destroy(m);
}

/* The instance tracker bounds the sum over queries. */
static void test_parent(void)
{
    eng_mem *inst, *q1, *q2;
    REQUIRE(eng_mem_create("instance", 1 << 20, NULL, &inst) == STO_OK);
    REQUIRE(eng_mem_create("query", 0, inst, &q1) == STO_OK);
    REQUIRE(eng_mem_create("query", 700 << 10, inst, &q2) == STO_OK);
    CHECK(eng_mem_reserve(q1, 600 << 10) == STO_OK);
    sto_status st = eng_mem_reserve(q2, 600 << 10);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->sqlstate, "53200");
    CHECK(strstr(st->message, "instance needs more than") != NULL);
    sto_status_free(st);
    CHECK_EQ_INT(eng_mem_used(q2), 0); /* rolled back on the query too */
    CHECK_EQ_INT(eng_mem_used(inst), 600 << 10);

    st = eng_mem_reserve(q2, 800 << 10); /* the query's own limit refuses first */
    REQUIRE(st != STO_OK);
    CHECK(strstr(st->message, "query needs more than 800kB of memory_limit 700kB") != NULL);
    sto_status_free(st);

    CHECK(eng_mem_reserve(q2, 400 << 10) == STO_OK);
    CHECK_EQ_INT(eng_mem_used(inst), 1000 << 10);
    /* A query that ends with reservations left gives them back. */
    eng_mem_destroy(q1);
    CHECK_EQ_INT(eng_mem_used(inst), 400 << 10);
    eng_mem_release(q2, 400 << 10);
    CHECK_EQ_INT(eng_mem_used(inst), 0);
    eng_mem_destroy(q2);
    eng_mem_destroy(inst);
}

static void test_cache(void)
{
    eng_mem *m;
    REQUIRE(eng_mem_create("query", 100 << 10, NULL, &m) == STO_OK); /* < one batch */
    eng_mem_cache c;
    eng_mem_cache_init(&c, m);
    /* 100-byte pieces up to the exact limit: the cache falls back to exact
     * reservations when a batch does not fit. */
    int ok = 0;
    sto_status st = STO_OK;
    while (!(st = eng_mem_cache_reserve(&c, 100)))
        ok++;
    CHECK_EQ_INT(ok, 1024);
    CHECK_STREQ(st->sqlstate, "53200");
    sto_status_free(st);
    CHECK_EQ_INT(eng_mem_used(m), 100 << 10);
    for (int i = 0; i < ok; i++)
        eng_mem_cache_release(&c, 100);
    eng_mem_cache_flush(&c);
    CHECK_EQ_INT(eng_mem_used(m), 0);

    /* Under a roomy limit, small pieces take whole batches. */
    eng_mem_set_limit(m, 64 << 20);
    CHECK(eng_mem_cache_reserve(&c, 64) == STO_OK);
    CHECK_EQ_INT(eng_mem_used(m), ENG_MEM_CACHE_BATCH);
    CHECK_EQ_INT(c.avail, ENG_MEM_CACHE_BATCH - 64);
    for (int i = 0; i < 10000; i++)
        CHECK(eng_mem_cache_reserve(&c, 100) == STO_OK);
    CHECK(eng_mem_used(m) >= 64 + 10000 * 100);
    CHECK(eng_mem_used(m) < 64 + 10000 * 100 + ENG_MEM_CACHE_BATCH);
    /* Big pieces go straight to the tracker. */
    uint64_t before = eng_mem_used(m);
    CHECK(eng_mem_cache_reserve(&c, 4 << 20) == STO_OK);
    CHECK_EQ_INT(eng_mem_used(m), before + (4 << 20));
    eng_mem_cache_release(&c, 4 << 20);
    CHECK(c.avail <= 2 * ENG_MEM_CACHE_BATCH); /* the surplus went back */
    for (int i = 0; i < 10000; i++)
        eng_mem_cache_release(&c, 100);
    eng_mem_cache_release(&c, 64);
    eng_mem_cache_flush(&c);
    CHECK_EQ_INT(eng_mem_used(m), 0);

    eng_mem_cache none = {0}; /* no tracker: nothing counted, nothing fails */
    CHECK(eng_mem_cache_reserve(&none, 1 << 30) == STO_OK);
    eng_mem_cache_release(&none, 1 << 30);
    eng_mem_cache_flush(&none);
    eng_mem_destroy(m);
}

static void test_alloc(void)
{
    eng_mem *m;
    REQUIRE(eng_mem_create("query", 8 << 20, NULL, &m) == STO_OK);
    void *small, *big, *zero;
    REQUIRE(eng_mem_alloc(m, 1000, 0, &small) == STO_OK);
    CHECK(((uintptr_t)small & 63) == 0);
    memset(small, 0xab, 1000);
    REQUIRE(eng_mem_alloc_zero(m, 3 << 20, 0, &big) == STO_OK); /* page-allocated */
    CHECK(((uintptr_t)big & 63) == 0);
    unsigned char *b = big;
    int nonzero = 0;
    for (size_t i = 0; i < (3u << 20); i += 4096)
        nonzero += b[i] != 0;
    CHECK_EQ_INT(nonzero, 0);
    memset(big, 1, 3 << 20);
    CHECK_EQ_INT(eng_mem_used(m), 1000 + (3 << 20));

    void *too_big = (void *)1;
    sto_status st = eng_mem_alloc(m, 5 << 20, -1, &too_big);
    REQUIRE(st != STO_OK);
    CHECK_STREQ(st->sqlstate, "53200");
    CHECK(too_big == NULL);
    sto_status_free(st);
    CHECK_EQ_INT(eng_mem_used(m), 1000 + (3 << 20));

    REQUIRE(eng_mem_alloc(m, 0, 0, &zero) == STO_OK);
    CHECK(zero == NULL);
    eng_mem_free(m, zero, 0);

    REQUIRE(eng_mem_alloc_zero(m, 200, -1, &zero) == STO_OK);
    int nz = 0;
    for (int i = 0; i < 200; i++)
        nz += ((unsigned char *)zero)[i] != 0;
    CHECK_EQ_INT(nz, 0);
    eng_mem_free(m, zero, 200);

    eng_mem_free(m, small, 1000);
    eng_mem_free(m, big, 3 << 20);
    CHECK_EQ_INT(eng_mem_used(m), 0);

    /* Through a cache, and with no tracker at all. */
    eng_mem_cache c;
    eng_mem_cache_init(&c, m);
    void *p;
    REQUIRE(eng_mem_cache_alloc(&c, 500, 0, &p) == STO_OK);
    memset(p, 0, 500);
    eng_mem_cache_free(&c, p, 500);
    eng_mem_cache_flush(&c);
    CHECK_EQ_INT(eng_mem_used(m), 0);
    REQUIRE(eng_mem_alloc(NULL, 2 << 20, 0, &p) == STO_OK);
    memset(p, 0, 2 << 20);
    eng_mem_free(NULL, p, 2 << 20);
    eng_mem_destroy(m);
}

/* ---- many threads on one tracker -------------------------------------------------- */

typedef struct hammer {
    eng_mem *m;
    int use_cache;
    uint64_t granted; /* bytes this thread got before the first refusal */
    int refusals;
} hammer;

static void *hammer_thread(void *arg)
{
    hammer *h = arg;
    eng_mem_cache c;
    eng_mem_cache_init(&c, h->m);
    uint64_t seed = (uint64_t)(uintptr_t)h * 2654435761u;
    uint64_t held = 0;
    for (int i = 0; i < 10000; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t bytes = 1 + (seed >> 33) % 4096;
        sto_status st =
            h->use_cache ? eng_mem_cache_reserve(&c, bytes) : eng_mem_reserve(h->m, bytes);
        if (st) {
            h->refusals++;
            sto_status_free(st);
            continue;
        }
        held += bytes;
        if (i % 3 == 0) { /* give some back as we go */
            if (h->use_cache)
                eng_mem_cache_release(&c, bytes);
            else
                eng_mem_release(h->m, bytes);
            held -= bytes;
        }
    }
    h->granted = held;
    if (h->use_cache) {
        eng_mem_cache_release(&c, held);
        eng_mem_cache_flush(&c);
    } else {
        eng_mem_release(h->m, held);
    }
    return NULL;
}

static void test_threads(void)
{
    for (int use_cache = 0; use_cache < 2; use_cache++) {
        for (int limited = 0; limited < 2; limited++) {
            eng_mem *inst, *q;
            uint64_t limit = limited ? 4 << 20 : 0;
            REQUIRE(eng_mem_create("instance", 0, NULL, &inst) == STO_OK);
            REQUIRE(eng_mem_create("query", limit, inst, &q) == STO_OK);
            hammer h[4];
            pthread_t t[4];
            for (int i = 0; i < 4; i++) {
                h[i] = (hammer){.m = q, .use_cache = use_cache};
                REQUIRE(pthread_create(&t[i], NULL, hammer_thread, &h[i]) == 0);
            }
            int refusals = 0;
            for (int i = 0; i < 4; i++) {
                pthread_join(t[i], NULL);
                refusals += h[i].refusals;
            }
            CHECK_EQ_INT(eng_mem_used(q), 0);
            CHECK_EQ_INT(eng_mem_used(inst), 0);
            if (limited) {
                /* Each thread alone keeps ~2/3 × 10000 × ~2 kB ≈ 13 MB: more than
                 * the 4 MB allowed, however the threads interleave. */
                CHECK(refusals > 0);
                CHECK(eng_mem_peak(q) <= limit);
            } else {
                CHECK_EQ_INT(refusals, 0);
            }
            eng_mem_destroy(q);
            eng_mem_destroy(inst);
        }
    }
}

int main(void)
{
    RUN(test_format);
    RUN(test_limit);
    RUN(test_parent);
    RUN(test_cache);
    RUN(test_alloc);
    RUN(test_threads);
    return TEST_REPORT();
}
