/*
 * exchange.c — receive queues of exchanges (see exchange.h).
 *
 * Each node queue is a list under its own mutex, so workers of different
 * nodes do not contend; `pending` counts messages over all of them, and
 * `lasts` the servers whose stream ended. A worker reads `lasts` before
 * `pending`: the multiplexer queues a server's data before it counts that
 * server's last frame, so "all ended and nothing pending" is never seen too
 * early. Waiting uses one condition variable per exchange with a timeout,
 * so a missed wake costs at most one wait period.
 */
#include "net/mux/exchange.h"
#include "net/mux/clock.h"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct node_queue {
    pthread_mutex_t lock;
    mux_msg *head, *tail;
} node_queue;

struct mux_xq {
    uint32_t id;
    bool opened;
    int producers, done; /* under the set's lock */
    int nnodes, nservers;
    node_queue *q;
    atomic_long pending;
    atomic_int lasts;
    atomic_uchar *last_from; /* per server */
    pthread_mutex_t wlock;
    pthread_cond_t wcond;
    mux_xq *next;
};

struct mux_xset {
    pthread_mutex_t lock;
    mux_xq *list;
    int nservers, nnodes, default_producers;
};

sto_status mux_xset_create(int nservers, int nnodes, int default_producers, mux_xset **out)
{
    mux_xset *s = calloc(1, sizeof *s);
    *out = s;
    if (!s) return sto_error_oom();
    pthread_mutex_init(&s->lock, NULL);
    s->nservers = nservers;
    s->nnodes = nnodes;
    s->default_producers = default_producers;
    return STO_OK;
}

static void xq_free(mux_xq *q)
{
    for (int k = 0; k < q->nnodes; k++) {
        for (mux_msg *m = q->q[k].head, *next; m; m = next) {
            next = m->next;
            mux_msg_release(m);
        }
        pthread_mutex_destroy(&q->q[k].lock);
    }
    pthread_mutex_destroy(&q->wlock);
    pthread_cond_destroy(&q->wcond);
    free(q->q);
    free(q->last_from);
    free(q);
}

void mux_xset_destroy(mux_xset *s)
{
    if (!s) return;
    while (s->list) {
        mux_xq *q = s->list;
        s->list = q->next;
        xq_free(q);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Caller holds s->lock. */
static mux_xq *get_locked(mux_xset *s, uint32_t id)
{
    for (mux_xq *q = s->list; q; q = q->next)
        if (q->id == id) return q;
    mux_xq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->q = calloc((size_t)s->nnodes, sizeof *q->q);
    q->last_from = calloc((size_t)s->nservers, sizeof *q->last_from);
    if (!q->q || !q->last_from) {
        free(q->q);
        free(q->last_from);
        free(q);
        return NULL;
    }
    q->id = id;
    q->producers = s->default_producers;
    q->nnodes = s->nnodes;
    q->nservers = s->nservers;
    for (int k = 0; k < s->nnodes; k++)
        pthread_mutex_init(&q->q[k].lock, NULL);
    pthread_mutex_init(&q->wlock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->wcond, &ca);
    pthread_condattr_destroy(&ca);
    q->next = s->list;
    s->list = q;
    return q;
}

mux_xq *mux_xset_get(mux_xset *s, uint32_t id)
{
    pthread_mutex_lock(&s->lock);
    mux_xq *q = get_locked(s, id);
    pthread_mutex_unlock(&s->lock);
    return q;
}

sto_status mux_xset_open(mux_xset *s, uint32_t id, int producers)
{
    pthread_mutex_lock(&s->lock);
    mux_xq *q = get_locked(s, id);
    sto_status st = STO_OK;
    if (!q)
        st = sto_error_oom();
    else if (q->opened)
        st = sto_error(STO_INVALID_PARAMETER_VALUE, "exchange %u is already open", id);
    else {
        q->opened = true;
        q->producers = producers;
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

void mux_xset_close(mux_xset *s, uint32_t id)
{
    pthread_mutex_lock(&s->lock);
    for (mux_xq **pp = &s->list; *pp; pp = &(*pp)->next) {
        if ((*pp)->id != id) continue;
        mux_xq *q = *pp;
        *pp = q->next;
        pthread_mutex_unlock(&s->lock);
        xq_free(q);
        return;
    }
    pthread_mutex_unlock(&s->lock);
}

mux_xq *mux_xset_producer_done(mux_xset *s, uint32_t id, bool *all)
{
    pthread_mutex_lock(&s->lock);
    mux_xq *q = get_locked(s, id);
    *all = q && ++q->done == q->producers;
    pthread_mutex_unlock(&s->lock);
    return q;
}

static void signal_waiters(mux_xq *q)
{
    pthread_mutex_lock(&q->wlock);
    pthread_cond_broadcast(&q->wcond);
    pthread_mutex_unlock(&q->wlock);
}

void mux_xset_wake_all(mux_xset *s)
{
    pthread_mutex_lock(&s->lock);
    for (mux_xq *q = s->list; q; q = q->next)
        signal_waiters(q);
    pthread_mutex_unlock(&s->lock);
}

uint32_t mux_xq_id(const mux_xq *q)
{
    return q->id;
}

void mux_xq_push(mux_xq *q, int node, mux_msg *m)
{
    node_queue *nq = &q->q[node % q->nnodes];
    m->next = NULL;
    pthread_mutex_lock(&nq->lock);
    if (nq->tail)
        nq->tail->next = m;
    else
        nq->head = m;
    nq->tail = m;
    pthread_mutex_unlock(&nq->lock);
    atomic_fetch_add(&q->pending, 1);
    signal_waiters(q);
}

bool mux_xq_mark_last(mux_xq *q, int from)
{
    if (atomic_exchange(&q->last_from[from], 1)) return false;
    atomic_fetch_add(&q->lasts, 1);
    signal_waiters(q);
    return true;
}

static mux_msg *pop(node_queue *nq)
{
    pthread_mutex_lock(&nq->lock);
    mux_msg *m = nq->head;
    if (m) {
        nq->head = m->next;
        if (!nq->head) nq->tail = NULL;
        m->next = NULL;
    }
    pthread_mutex_unlock(&nq->lock);
    return m;
}

int mux_xq_take(mux_xq *q, int home, int wait_ms, const atomic_bool *stop, mux_msg **out)
{
    *out = NULL;
    for (;;) {
        int lasts = atomic_load(&q->lasts);
        if (atomic_load(&q->pending) > 0) {
            for (int i = 0; i < q->nnodes; i++) {
                mux_msg *m = pop(&q->q[(home + i) % q->nnodes]);
                if (m) {
                    atomic_fetch_sub(&q->pending, 1);
                    *out = m;
                    return 1;
                }
            }
            continue; /* another worker took it between the check and the pop */
        }
        if (lasts == q->nservers) return 0;
        break;
    }
    pthread_mutex_lock(&q->wlock);
    if (atomic_load(&q->pending) == 0 && atomic_load(&q->lasts) < q->nservers &&
        !(stop && atomic_load(stop))) {
        struct timespec until = mux_deadline(wait_ms);
        pthread_cond_timedwait(&q->wcond, &q->wlock, &until);
    }
    pthread_mutex_unlock(&q->wlock);
    return -1;
}
