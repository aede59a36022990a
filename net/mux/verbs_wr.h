/*
 * verbs_wr.h — bookkeeping of posted RDMA work requests.
 *
 * A completion carries only the 64-bit id the request was posted with. The
 * table hands out those ids (slot index plus a generation, so that a stale
 * or duplicated completion is recognized instead of releasing a message
 * twice), remembers what each request was for (peer, kind, message), and
 * limits how many sends are outstanding per queue pair, which must never
 * exceed the depth the queue pair was created with. When a peer fails, its
 * outstanding requests are drained so that their messages go back to the
 * pool. No device is involved, so all of this is unit-tested.
 */
#ifndef RACKDB_NET_MUX_VERBS_WR_H
#define RACKDB_NET_MUX_VERBS_WR_H

#include "net/mux/pool.h"
#include "storage/status.h"
#include <stdbool.h>
#include <stdint.h>

enum { MUX_WR_SEND = 1, MUX_WR_RECV = 2 };

typedef struct mux_wr {
    int peer; /* -1 for receives on the shared queue */
    int kind; /* MUX_WR_* */
    mux_msg *m;
} mux_wr;

typedef struct mux_wrtab mux_wrtab;

/* A table of `slots` requests for `npeers` queue pairs of send depth
 * `depth` each. */
sto_status mux_wrtab_create(int slots, int npeers, int depth, mux_wrtab **out);
void mux_wrtab_destroy(mux_wrtab *t);

/* Reserves an id for a request; false when the table is full or (for sends)
 * the peer's queue pair is at its depth. */
bool mux_wrtab_post(mux_wrtab *t, const mux_wr *wr, uint64_t *id);

/* Gives a reserved id back when posting it failed. */
void mux_wrtab_unpost(mux_wrtab *t, uint64_t id);

/* Looks up and frees the request of a completion; false for an id that is
 * not outstanding (stale, duplicated or corrupt). */
bool mux_wrtab_complete(mux_wrtab *t, uint64_t id, mux_wr *out);

/* Sends outstanding on a peer's queue pair. */
int mux_wrtab_outstanding(const mux_wrtab *t, int peer);

/* Frees every outstanding request of `peer` (-1: the receives), calling fn
 * for each; returns how many. */
int mux_wrtab_drain(mux_wrtab *t, int peer, void (*fn)(void *arg, const mux_wr *wr), void *arg);

#endif
