/*
 * exchange.h — the receive side of exchanges: per-NUMA-node queues with
 * stealing, and end of stream.
 *
 * An exchange is one logical data stream of a query (a hash shuffle, a
 * broadcast, a gather) identified by a 32-bit id that all servers agree on.
 * The multiplexer thread pushes each received message onto the queue of the
 * NUMA node its buffer lives on; a worker takes from its own node's queue
 * first and steals from the others when that one is empty, so data is
 * consumed where it lies as long as there is any. The stream ends when every
 * server's last-message frame has arrived and the queues are empty.
 *
 * Frames may arrive before the local server opened the exchange; the set
 * creates the exchange on first touch, and the open fills in how many local
 * producers will report done.
 */
#ifndef RACKDB_NET_MUX_EXCHANGE_H
#define RACKDB_NET_MUX_EXCHANGE_H

#include "net/mux/pool.h"
#include "storage/status.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mux_xq mux_xq;     /* one exchange's receive state */
typedef struct mux_xset mux_xset; /* all exchanges of one multiplexer */

/* A set for a cluster of `nservers`, `nnodes` queues per exchange, and
 * `default_producers` local producers unless an open says otherwise. */
sto_status mux_xset_create(int nservers, int nnodes, int default_producers, mux_xset **out);

/* Frees every exchange, releasing the messages still queued. */
void mux_xset_destroy(mux_xset *s);

/* Finds or creates the exchange; NULL when out of memory. */
mux_xq *mux_xset_get(mux_xset *s, uint32_t id);

/* Marks the exchange open with `producers` local producers (> 0). */
sto_status mux_xset_open(mux_xset *s, uint32_t id, int producers);

/* Forgets the exchange; its queued messages are released. */
void mux_xset_close(mux_xset *s, uint32_t id);

/* One local producer is done; *all is set when it was the last. NULL when
 * out of memory. */
mux_xq *mux_xset_producer_done(mux_xset *s, uint32_t id, bool *all);

/* Wakes every waiting worker (the multiplexer failed). */
void mux_xset_wake_all(mux_xset *s);

uint32_t mux_xq_id(const mux_xq *q);

/* Queues a message on node `node`'s queue and wakes a waiter. */
void mux_xq_push(mux_xq *q, int node, mux_msg *m);

/* Server `from` sent its last message; false if it had already. */
bool mux_xq_mark_last(mux_xq *q, int from);

/* Takes a message, own node `home` first: 1 = *out is a message, 0 = end
 * of stream, -1 = none after waiting up to wait_ms (or after a wake, or
 * with *stop set). */
int mux_xq_take(mux_xq *q, int home, int wait_ms, const atomic_bool *stop, mux_msg **out);

#endif
