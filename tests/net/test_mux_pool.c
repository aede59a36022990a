/*
 * test_mux_pool.c — the bounded message pool: exhaustion makes getters wait
 * until a release, broadcast refcounts, the release hook, interruption.
 */
#include "net/mux/pool.h"
#include "net/mux/wire.h"
#include "test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

static void basics(void)
{
    mux_pool *p;
    REQUIRE(mux_pool_create(4, 1000, -1, &p) == NULL);
    CHECK_EQ_INT(mux_pool_count(p), 4);
    CHECK_EQ_INT(mux_pool_free_count(p), 4);
    mux_msg *m[4];
    for (int i = 0; i < 4; i++) {
        m[i] = mux_pool_try_get(p);
        REQUIRE(m[i] != NULL);
        CHECK_EQ_INT(m[i]->cap, 1000);
        CHECK(m[i]->data == m[i]->frame + MUX_WIRE_HDR_SIZE);
        CHECK(((uintptr_t)m[i]->frame & 63) == 0);
        memset(m[i]->data, i, 1000); /* the whole payload is writable */
    }
    for (int i = 1; i < 4; i++)
        CHECK(m[i]->frame >= m[i - 1]->data + 1000 || m[i]->data + 1000 <= m[i - 1]->frame);
    CHECK(mux_pool_try_get(p) == NULL);
    CHECK_EQ_INT(mux_pool_free_count(p), 0);
    for (int i = 0; i < 4; i++)
        mux_msg_release(m[i]);
    CHECK_EQ_INT(mux_pool_free_count(p), 4);
    size_t bytes;
    CHECK(mux_pool_slab(p, &bytes) != NULL && bytes >= 4 * (1000 + MUX_WIRE_HDR_SIZE));
    mux_pool_destroy(p);

    sto_status st = mux_pool_create(0, 100, -1, &p);
    CHECK(st != NULL && p == NULL);
    sto_status_free(st);
}

static void refcount_broadcast(void)
{
    mux_pool *p;
    REQUIRE(mux_pool_create(1, 64, -1, &p) == NULL);
    mux_msg *m = mux_pool_try_get(p);
    REQUIRE(m);
    mux_msg_retain(m, 3); /* one reference per destination of four */
    for (int i = 0; i < 3; i++) {
        mux_msg_release(m);
        CHECK_EQ_INT(mux_pool_free_count(p), 0);
    }
    mux_msg_release(m);
    CHECK_EQ_INT(mux_pool_free_count(p), 1);
    mux_pool_destroy(p);
}

typedef struct waiter {
    mux_pool *p;
    atomic_int got;
    int timeout_ms;
    mux_msg *m;
} waiter;

static void *wait_for_msg(void *arg)
{
    waiter *w = arg;
    w->m = mux_pool_get(w->p, w->timeout_ms);
    atomic_store(&w->got, w->m ? 1 : -1);
    return NULL;
}

static void exhaustion_waits(void)
{
    mux_pool *p;
    REQUIRE(mux_pool_create(2, 64, -1, &p) == NULL);
    mux_msg *a = mux_pool_try_get(p), *b = mux_pool_try_get(p);
    REQUIRE(a && b);
    /* Empty pool: a timed get gives up. */
    CHECK(mux_pool_get(p, 20) == NULL);
    /* A waiter blocks until a release, then gets exactly that message. */
    waiter w = {.p = p, .timeout_ms = 10000};
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, wait_for_msg, &w) == 0);
    usleep(50 * 1000);
    CHECK_EQ_INT(atomic_load(&w.got), 0); /* still waiting: nothing free */
    mux_msg_release(a);
    pthread_join(th, NULL);
    CHECK_EQ_INT(atomic_load(&w.got), 1);
    CHECK(w.m == a);
    mux_msg_release(w.m);
    mux_msg_release(b);
    mux_pool_destroy(p);
}

static void interrupt_wakes(void)
{
    mux_pool *p;
    REQUIRE(mux_pool_create(1, 64, -1, &p) == NULL);
    mux_msg *a = mux_pool_try_get(p);
    waiter w = {.p = p, .timeout_ms = 10000};
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, wait_for_msg, &w) == 0);
    usleep(20 * 1000);
    mux_pool_interrupt(p);
    pthread_join(th, NULL);
    CHECK_EQ_INT(atomic_load(&w.got), -1);
    mux_msg_release(a);
    CHECK(mux_pool_try_get(p) == NULL); /* interrupted pools hand out nothing */
    mux_pool_destroy(p);
}

static void count_hook(void *arg, int32_t src)
{
    int *calls = arg;
    calls[0]++;
    calls[1] = src;
}

/* The hook runs after the return: the message can be taken again inside. */
typedef struct retake {
    mux_pool *p;
    mux_msg *again;
} retake;

static void retake_hook(void *arg, int32_t src)
{
    retake *r = arg;
    r->again = mux_pool_try_get(r->p);
}

static void release_hook(void)
{
    mux_pool *p;
    REQUIRE(mux_pool_create(2, 64, -1, &p) == NULL);
    int calls[2] = {0, -1};
    mux_pool_set_hook(p, count_hook, calls);
    mux_msg *m = mux_pool_try_get(p);
    m->src = 5;
    mux_msg_retain(m, 1);
    mux_msg_release(m);
    CHECK_EQ_INT(calls[0], 0); /* not on the last reference yet */
    mux_msg_release(m);
    CHECK_EQ_INT(calls[0], 1);
    CHECK_EQ_INT(calls[1], 5);
    mux_pool_destroy(p);

    REQUIRE(mux_pool_create(1, 64, -1, &p) == NULL);
    retake r = {.p = p};
    mux_pool_set_hook(p, retake_hook, &r);
    m = mux_pool_try_get(p);
    mux_msg_release(m);
    CHECK(r.again == m);
    mux_pool_set_hook(p, NULL, NULL);
    if (r.again) mux_msg_release(r.again);
    mux_pool_destroy(p);
}

/* Four threads take and return messages of a pool of 3; every message taken
 * comes back, and no holder sees its payload overwritten by another. */
typedef struct churn {
    mux_pool *p;
    int id;
    atomic_int *errors;
} churn;

static void *churn_run(void *arg)
{
    churn *c = arg;
    for (int i = 0; i < 2000; i++) {
        mux_msg *m = mux_pool_get(c->p, 5000);
        if (!m) {
            atomic_fetch_add(c->errors, 1);
            continue;
        }
        memset(m->data, c->id, 64);
        sched_yield(); /* give a wrongly sharing holder time to write */
        for (int k = 0; k < 64; k++)
            if (m->data[k] != (uint8_t)c->id) {
                atomic_fetch_add(c->errors, 1);
                break;
            }
        mux_msg_release(m);
    }
    return NULL;
}

static void concurrent_churn(void)
{
    mux_pool *p;
    REQUIRE(mux_pool_create(3, 64, -1, &p) == NULL);
    atomic_int errors = 0;
    churn c[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (churn){.p = p, .id = i, .errors = &errors};
        pthread_create(&th[i], NULL, churn_run, &c[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(atomic_load(&errors), 0);
    CHECK_EQ_INT(mux_pool_free_count(p), 3);
    mux_pool_destroy(p);
}

int main(void)
{
    RUN(basics);
    RUN(refcount_broadcast);
    RUN(exhaustion_waits);
    RUN(interrupt_wakes);
    RUN(release_hook);
    RUN(concurrent_churn);
    return TEST_REPORT();
}
