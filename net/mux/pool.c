/*
 * pool.c — the bounded message pool (see pool.h).
 *
 * The free list is a plain list under a mutex: messages are hundreds of
 * kilobytes, so a get or a return per message is far too rare to contend.
 * (The per-message hot path, worker to multiplexer, is the lock-free queue
 * in spsc.c.) Waiters sleep on a condition variable and are woken by each
 * return.
 */
#include "net/mux/pool.h"
#include "net/mux/clock.h"
#include "net/mux/wire.h"
#include "storage/numa_alloc.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct mux_pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    mux_msg *free;
    size_t nfree, count, stride;
    bool interrupted;
    mux_pool_hook hook;
    void *hook_arg;
    uint8_t *slab;
    size_t slab_bytes;
    mux_msg *msgs;
};

sto_status mux_pool_create(size_t count, size_t size, int node, mux_pool **out)
{
    *out = NULL;
    if (count == 0 || size == 0 || size > UINT32_MAX - 4096)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "message pool of %zu x %zu bytes", count,
                         size);
    mux_pool *p = calloc(1, sizeof *p);
    if (!p) return sto_error_oom();
    /* Header room plus payload, rounded to a cache line so that payloads
     * start aligned and neighbours never share a line. */
    p->stride = (MUX_WIRE_HDR_SIZE + size + 63) & ~(size_t)63;
    p->count = count;
    p->slab_bytes = p->stride * count;
    p->msgs = calloc(count, sizeof *p->msgs);
    p->slab = p->msgs ? sto_numa_alloc_onnode(p->slab_bytes, node) : NULL;
    if (!p->slab) {
        free(p->msgs);
        free(p);
        return sto_error(STO_OUT_OF_MEMORY, "message pool of %zu x %zu bytes", count, size);
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->freed, &ca);
    pthread_condattr_destroy(&ca);
    for (size_t i = count; i-- > 0;) {
        mux_msg *m = &p->msgs[i];
        m->frame = p->slab + i * p->stride;
        m->data = m->frame + MUX_WIRE_HDR_SIZE;
        m->cap = (uint32_t)size;
        m->pool = p;
        m->next = p->free;
        p->free = m;
    }
    p->nfree = count;
    *out = p;
    return STO_OK;
}

void mux_pool_destroy(mux_pool *p)
{
    if (!p) return;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->freed);
    sto_numa_free(p->slab, p->slab_bytes);
    free(p->msgs);
    free(p);
}

void mux_pool_set_hook(mux_pool *p, mux_pool_hook hook, void *arg)
{
    p->hook = hook;
    p->hook_arg = arg;
}

static mux_msg *take_locked(mux_pool *p)
{
    mux_msg *m = p->free;
    p->free = m->next;
    p->nfree--;
    m->next = NULL;
    m->len = 0;
    m->exchange = 0;
    m->src = -1;
    m->last = false;
    atomic_store_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

mux_msg *mux_pool_try_get(mux_pool *p)
{
    pthread_mutex_lock(&p->lock);
    mux_msg *m = p->free && !p->interrupted ? take_locked(p) : NULL;
    pthread_mutex_unlock(&p->lock);
    return m;
}

mux_msg *mux_pool_get(mux_pool *p, int timeout_ms)
{
    struct timespec until = mux_deadline(timeout_ms);
    mux_msg *m = NULL;
    pthread_mutex_lock(&p->lock);
    while (!p->free && !p->interrupted) {
        if (pthread_cond_timedwait(&p->freed, &p->lock, &until) == ETIMEDOUT) break;
    }
    if (p->free && !p->interrupted) m = take_locked(p);
    pthread_mutex_unlock(&p->lock);
    return m;
}

void mux_pool_interrupt(mux_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->interrupted = true;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

size_t mux_pool_free_count(mux_pool *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->nfree;
    pthread_mutex_unlock(&p->lock);
    return n;
}

size_t mux_pool_count(mux_pool *p)
{
    return p->count;
}

void *mux_pool_slab(mux_pool *p, size_t *bytes)
{
    *bytes = p->slab_bytes;
    return p->slab;
}

void mux_msg_retain(mux_msg *m, int n)
{
    atomic_fetch_add_explicit(&m->refs, n, memory_order_relaxed);
}

void mux_msg_release(mux_msg *m)
{
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
    mux_pool *p = m->pool;
    int32_t src = m->src;
    pthread_mutex_lock(&p->lock);
    m->next = p->free;
    p->free = m;
    p->nfree++;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->lock);
    if (p->hook) p->hook(p->hook_arg, src);
}
