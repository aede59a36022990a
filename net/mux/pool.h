/*
 * pool.h — bounded pools of fixed-size, refcounted messages, one per NUMA node.
 *
 * Every byte the shuffle moves lives in a pool message: a worker takes one
 * from its node's pool, fills the payload, hands it to the multiplexer, and
 * the multiplexer returns it once the last transport that sends it is done.
 * A broadcast is filled once and referenced once per destination, so it is
 * serialized once. Pools never grow: a worker that finds its pool empty waits
 * until a send completes (backpressure), so memory is bounded by
 * count * size no matter how fast workers produce.
 *
 * A pool is one slab (placed on its node), so the verbs transport registers
 * it with the NIC in one piece. Each message keeps MUX_WIRE_HDR_SIZE bytes
 * in front of its payload for the frame header.
 */
#ifndef RACKDB_NET_MUX_POOL_H
#define RACKDB_NET_MUX_POOL_H

#include "storage/status.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mux_pool mux_pool;

typedef struct mux_msg mux_msg;
struct mux_msg {
    /* Public: what producers fill in and consumers read. */
    uint8_t *data;     /* payload, `cap` bytes */
    uint32_t cap;      /* payload capacity (the configured message size) */
    uint32_t len;      /* payload bytes used */
    uint32_t exchange; /* exchange id */
    int32_t src;       /* sending rank (set on receipt) */
    bool last;         /* the sender's last message of this exchange */

    /* Private to net/mux. */
    uint8_t *frame; /* header room: data - MUX_WIRE_HDR_SIZE */
    atomic_int refs;
    mux_pool *pool;
    mux_msg *next; /* free list, receive queues */
};

/* Called after a message's last reference went and it is free again, with
 * the sender rank it carried (the message itself may already be reused).
 * Running after the return matters: whoever the hook notifies may take the
 * message at once. */
typedef void (*mux_pool_hook)(void *arg, int32_t src);

/* A pool of `count` messages with `size` payload bytes each, on NUMA node
 * `node` (-1 = the caller's node). */
sto_status mux_pool_create(size_t count, size_t size, int node, mux_pool **out);

/* Frees the pool; every message must have come back. */
void mux_pool_destroy(mux_pool *p);

/* Sets the hook run on every return (the multiplexer returns credits with it). */
void mux_pool_set_hook(mux_pool *p, mux_pool_hook hook, void *arg);

/* A free message with one reference, or NULL when none is free. */
mux_msg *mux_pool_try_get(mux_pool *p);

/* Waits up to timeout_ms for a free message; NULL on timeout or after
 * mux_pool_interrupt. */
mux_msg *mux_pool_get(mux_pool *p, int timeout_ms);

/* Wakes every waiter and makes later waits return NULL at once. */
void mux_pool_interrupt(mux_pool *p);

/* Free messages now, and the pool's size. */
size_t mux_pool_free_count(mux_pool *p);
size_t mux_pool_count(mux_pool *p);

/* The slab holding every message's header room and payload. */
void *mux_pool_slab(mux_pool *p, size_t *bytes);

/* Adds n references (a broadcast adds one per extra destination). */
void mux_msg_retain(mux_msg *m, int n);

/* Drops one reference; the last one returns the message to its pool. */
void mux_msg_release(mux_msg *m);

#endif
