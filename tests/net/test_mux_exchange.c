/*
 * test_mux_exchange.c — receive queues of exchanges: own node first, then
 * stealing; end of stream only when every server ended and nothing is
 * left; duplicate last frames; waiting; concurrent takers.
 */
#include "net/mux/exchange.h"
#include "test.h"
#include <pthread.h>

static void steal_and_end(void)
{
    mux_xset *s;
    mux_pool *p;
    REQUIRE(mux_xset_create(3, 2, 1, &s) == NULL); /* 3 servers, 2 nodes */
    REQUIRE(mux_pool_create(8, 16, -1, &p) == NULL);
    mux_xq *q = mux_xset_get(s, 7);
    REQUIRE(q && mux_xq_id(q) == 7);
    CHECK(mux_xset_get(s, 7) == q); /* found, not created again */
    mux_msg *a = mux_pool_try_get(p), *b = mux_pool_try_get(p), *c = mux_pool_try_get(p);
    mux_xq_push(q, 0, a);
    mux_xq_push(q, 1, b);
    mux_xq_push(q, 0, c);
    mux_msg *m;
    /* A node-1 worker takes its own node's message first, then steals. */
    CHECK_EQ_INT(mux_xq_take(q, 1, 0, NULL, &m), 1);
    CHECK(m == b);
    CHECK_EQ_INT(mux_xq_take(q, 1, 0, NULL, &m), 1);
    CHECK(m == a); /* node 0's queue, in arrival order */
    /* Two of three servers ended: not the end yet, even with queues empty. */
    CHECK(mux_xq_mark_last(q, 0));
    CHECK(mux_xq_mark_last(q, 2));
    CHECK(!mux_xq_mark_last(q, 2)); /* duplicate */
    CHECK_EQ_INT(mux_xq_take(q, 0, 0, NULL, &m), 1);
    CHECK(m == c);
    CHECK_EQ_INT(mux_xq_take(q, 0, 10, NULL, &m), -1); /* waited, nothing */
    CHECK(mux_xq_mark_last(q, 1));
    CHECK_EQ_INT(mux_xq_take(q, 0, 0, NULL, &m), 0);
    CHECK(m == NULL);
    mux_msg_release(a);
    mux_msg_release(b);
    mux_msg_release(c);
    /* Closing (or destroying) releases what is still queued. */
    mux_xq_push(mux_xset_get(s, 8), 0, mux_pool_try_get(p));
    mux_xq_push(mux_xset_get(s, 9), 1, mux_pool_try_get(p));
    CHECK_EQ_INT(mux_pool_free_count(p), 6);
    mux_xset_close(s, 8);
    CHECK_EQ_INT(mux_pool_free_count(p), 7);
    mux_xset_destroy(s);
    CHECK_EQ_INT(mux_pool_free_count(p), 8);
    mux_pool_destroy(p);
}

static void open_and_producers(void)
{
    mux_xset *s;
    REQUIRE(mux_xset_create(2, 1, 4, &s) == NULL);
    bool all;
    /* Before an open, the default of 4 producers applies. */
    CHECK(mux_xset_producer_done(s, 1, &all) && !all);
    REQUIRE(mux_xset_open(s, 2, 2) == NULL);
    sto_status st = mux_xset_open(s, 2, 2);
    CHECK(st != NULL);
    sto_status_free(st);
    CHECK(mux_xset_producer_done(s, 2, &all) && !all);
    CHECK(mux_xset_producer_done(s, 2, &all) && all);
    mux_xset_destroy(s);
}

typedef struct taker {
    mux_xq *q;
    int home, got;
    atomic_bool *stop;
} taker;

static void *take_all(void *arg)
{
    taker *t = arg;
    for (;;) {
        mux_msg *m;
        int r = mux_xq_take(t->q, t->home, 100, t->stop, &m);
        if (r == 0) return NULL;
        if (r == 1) {
            t->got++;
            mux_msg_release(m);
        }
    }
}

/* Four takers on two nodes drain 2000 pushes; each message is taken once and
 * all of them see the end. */
static void concurrent_takers(void)
{
    mux_xset *s;
    mux_pool *p;
    REQUIRE(mux_xset_create(1, 2, 1, &s) == NULL);
    REQUIRE(mux_pool_create(64, 16, -1, &p) == NULL);
    mux_xq *q = mux_xset_get(s, 1);
    taker t[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (taker){.q = q, .home = i % 2};
        pthread_create(&th[i], NULL, take_all, &t[i]);
    }
    for (int i = 0; i < 2000; i++) {
        mux_msg *m = mux_pool_get(p, 5000);
        REQUIRE(m);
        mux_xq_push(q, i % 3 == 0, m);
    }
    mux_xq_mark_last(q, 0);
    int total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        total += t[i].got;
    }
    CHECK_EQ_INT(total, 2000);
    CHECK_EQ_INT(mux_pool_free_count(p), 64);
    mux_xset_destroy(s);
    mux_pool_destroy(p);
}

static void stop_flag_ends_wait(void)
{
    mux_xset *s;
    REQUIRE(mux_xset_create(2, 1, 1, &s) == NULL);
    atomic_bool stop = true;
    mux_msg *m;
    /* With the stop flag set the call returns without sleeping 10 s. */
    CHECK_EQ_INT(mux_xq_take(mux_xset_get(s, 3), 0, 10000, &stop, &m), -1);
    mux_xset_destroy(s);
}

int main(void)
{
    RUN(steal_and_end);
    RUN(open_and_producers);
    RUN(concurrent_takers);
    RUN(stop_flag_ends_wait);
    return TEST_REPORT();
}
