/*
 * spsc.h — a bounded, lock-free single-producer single-consumer queue.
 *
 * Each worker owns one queue into the multiplexer thread: the worker is the
 * only producer and the multiplexer the only consumer, so a ring buffer with
 * one atomic index per side is enough, and no worker ever waits on a lock
 * another worker holds. A shared locked submission path is what made
 * single-endpoint shuffle designs contention-bound.
 *
 * Elements are fixed-size records copied in and out.
 */
#ifndef RACKDB_NET_MUX_SPSC_H
#define RACKDB_NET_MUX_SPSC_H

#include "storage/status.h"
#include <stdbool.h>
#include <stddef.h>

typedef struct mux_spsc mux_spsc;

/* A queue of at least `capacity` elements of elem_size bytes (rounded up to a
 * power of two). */
sto_status mux_spsc_create(size_t capacity, size_t elem_size, mux_spsc **out);
void mux_spsc_destroy(mux_spsc *q);

/* Producer side: copies *elem in; false when the queue is full. */
bool mux_spsc_push(mux_spsc *q, const void *elem);

/* Consumer side: copies the oldest element out; false when empty. */
bool mux_spsc_pop(mux_spsc *q, void *elem);

/* Elements queued now (exact for either side's own view). */
size_t mux_spsc_size(mux_spsc *q);

#endif
