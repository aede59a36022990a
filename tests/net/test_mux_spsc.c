/*
 * test_mux_spsc.c — the worker-to-multiplexer queue: order, bounds, and a
 * producer and a consumer thread passing 200000 elements.
 */
#include "net/mux/spsc.h"
#include "test.h"
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

static void single_thread(void)
{
    mux_spsc *q;
    REQUIRE(mux_spsc_create(5, sizeof(uint64_t), &q) == NULL); /* rounds to 8 */
    uint64_t v;
    CHECK(!mux_spsc_pop(q, &v));
    int pushed = 0;
    for (uint64_t i = 0; i < 100; i++) {
        if (!mux_spsc_push(q, &i)) break;
        pushed++;
    }
    CHECK_EQ_INT(pushed, 8);
    CHECK_EQ_INT(mux_spsc_size(q), 8);
    for (uint64_t i = 0; i < 8; i++) {
        CHECK(mux_spsc_pop(q, &v));
        CHECK(v == i);
    }
    CHECK(!mux_spsc_pop(q, &v));
    /* Wrap around many times. */
    for (uint64_t i = 0; i < 1000; i++) {
        CHECK(mux_spsc_push(q, &i));
        CHECK(mux_spsc_pop(q, &v) && v == i);
    }
    mux_spsc_destroy(q);
}

typedef struct rec {
    uint64_t seq, check;
} rec;

#define N_ELEMS 200000u

static void *producer(void *arg)
{
    mux_spsc *q = arg;
    for (uint64_t i = 0; i < N_ELEMS; i++) {
        rec r = {i, i * 0x9E3779B97F4A7C15ull};
        while (!mux_spsc_push(q, &r))
            sched_yield(); /* two cores are shared in CI */
    }
    return NULL;
}

static void two_threads(void)
{
    mux_spsc *q;
    REQUIRE(mux_spsc_create(64, sizeof(rec), &q) == NULL);
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, producer, q) == 0);
    uint64_t next = 0, bad = 0;
    while (next < N_ELEMS) {
        rec r;
        if (!mux_spsc_pop(q, &r)) {
            sched_yield();
            continue;
        }
        if (r.seq != next || r.check != next * 0x9E3779B97F4A7C15ull) bad++;
        next++;
    }
    pthread_join(th, NULL);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(next, N_ELEMS);
    CHECK_EQ_INT(mux_spsc_size(q), 0);
    mux_spsc_destroy(q);
}

int main(void)
{
    RUN(single_thread);
    RUN(two_threads);
    return TEST_REPORT();
}
