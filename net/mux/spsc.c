/*
 * spsc.c — the single-producer single-consumer ring (see spsc.h).
 *
 * `head` is written only by the consumer, `tail` only by the producer; each
 * side reads the other's index with acquire and publishes its own with
 * release, which orders the element copy before the index update. The two
 * indices sit on separate cache lines, and each side caches the other's last
 * seen index so that it touches the shared line only when the cache says the
 * ring looks full (producer) or empty (consumer).
 */
#include "net/mux/spsc.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct mux_spsc {
    _Alignas(64) atomic_size_t head; /* next element to pop */
    size_t tail_cache;               /* consumer's copy of tail */
    _Alignas(64) atomic_size_t tail; /* next free slot */
    size_t head_cache;               /* producer's copy of head */
    _Alignas(64) size_t mask, elem_size;
    unsigned char *slots;
};

sto_status mux_spsc_create(size_t capacity, size_t elem_size, mux_spsc **out)
{
    *out = NULL;
    size_t cap = 2;
    while (cap < capacity)
        cap <<= 1;
    mux_spsc *q = aligned_alloc(64, sizeof(mux_spsc));
    if (!q) return sto_error_oom();
    memset(q, 0, sizeof *q);
    q->slots = malloc(cap * elem_size);
    if (!q->slots) {
        free(q);
        return sto_error_oom();
    }
    q->mask = cap - 1;
    q->elem_size = elem_size;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    *out = q;
    return STO_OK;
}

void mux_spsc_destroy(mux_spsc *q)
{
    if (!q) return;
    free(q->slots);
    free(q);
}

bool mux_spsc_push(mux_spsc *q, const void *elem)
{
    size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    if (tail - q->head_cache > q->mask) {
        q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire);
        if (tail - q->head_cache > q->mask) return false;
    }
    memcpy(q->slots + (tail & q->mask) * q->elem_size, elem, q->elem_size);
    atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
    return true;
}

bool mux_spsc_pop(mux_spsc *q, void *elem)
{
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (head == q->tail_cache) {
        q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (head == q->tail_cache) return false;
    }
    memcpy(elem, q->slots + (head & q->mask) * q->elem_size, q->elem_size);
    atomic_store_explicit(&q->head, head + 1, memory_order_release);
    return true;
}

size_t mux_spsc_size(mux_spsc *q)
{
    return atomic_load_explicit(&q->tail, memory_order_acquire) -
           atomic_load_explicit(&q->head, memory_order_acquire);
}
