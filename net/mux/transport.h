/*
 * transport.h — the small interface the multiplexer drives its links through.
 *
 * A transport owns the connections of one server to the n-1 others and moves
 * whole frames (wire.h) over them. The multiplexer thread is its only user:
 * it queues frames with send(), and calls poll() to make progress; poll()
 * reports through the sink what happened — a frame arrived, a queued data
 * message has left (so its reference can go back to the pool), a peer
 * failed. Receive buffers for data frames come from the multiplexer too
 * (rx_buffer), because it grants the credits that guarantee one exists. A
 * transport that must post receive buffers ahead (verbs) posts spares and,
 * when a data frame fills one, asks rx_buffer for its replacement: the
 * credit check is the same, only the buffer that is handed up differs.
 *
 * Two implementations: tcp.c (non-blocking sockets and epoll; always
 * available) and verbs.c (libibverbs RC queue pairs with a shared receive
 * queue; needs an RDMA device). open() connects the whole cluster, with the
 * hello handshake, before it returns.
 */
#ifndef RACKDB_NET_MUX_TRANSPORT_H
#define RACKDB_NET_MUX_TRANSPORT_H

#include "net/mux/cluster.h"
#include "net/mux/log.h"
#include "net/mux/pool.h"
#include "net/mux/wire.h"
#include "storage/status.h"

typedef struct mux_transport mux_transport;

/* Callbacks into the multiplexer; all run on the thread that calls poll(). */
typedef struct mux_transport_sink {
    void *arg;
    /* A buffer for the payload of a data frame from `peer`; NULL means the
     * peer sent more than its credits allow (a protocol violation). */
    mux_msg *(*rx_buffer)(void *arg, int peer, const mux_wire_hdr *h);
    /* A receive buffer outside every peer's credits, for transports that
     * post buffers before they know who will fill them (verbs: the shared
     * receive queue); at most cfg.spare_recv of them. */
    mux_msg *(*rx_spare)(void *arg);
    /* A complete frame: data frames bring their buffer (NULL when empty),
     * control frames their payload bytes (h->len of them). */
    void (*rx_frame)(void *arg, int peer, const mux_wire_hdr *h, mux_msg *m, const uint8_t *ctrl);
    /* The transport is done with a data message handed to send(). */
    void (*tx_done)(void *arg, int peer, mux_msg *m);
    /* The link to `peer` is gone; `why` names the peer and the cause, and
     * belongs to the callee. An orderly goodbye is not a failure. */
    void (*peer_failed)(void *arg, int peer, sto_status why);
} mux_transport_sink;

typedef struct mux_transport_ops {
    const char *name;
    /* Queues a frame. Data frames pass their message (its header room
     * already encoded); control frames pass h->len bytes in ctrl. */
    sto_status (*send)(mux_transport *t, int peer, const mux_wire_hdr *h, mux_msg *m,
                       const void *ctrl);
    /* Frames queued for `peer` that have not fully left yet. */
    size_t (*backlog)(mux_transport *t, int peer);
    /* Moves bytes, waiting up to timeout_ms for something to happen. */
    sto_status (*poll)(mux_transport *t, int timeout_ms);
    /* Makes a poll() in progress return; safe from any thread. */
    void (*wake)(mux_transport *t);
    /* Closes every link; releases messages still queued. */
    void (*destroy)(mux_transport *t);
} mux_transport_ops;

struct mux_transport {
    const mux_transport_ops *ops;
};

typedef struct mux_transport_cfg {
    const mux_cluster *cluster;
    int rank;
    size_t max_data;        /* largest data payload (the message size) */
    int connect_timeout_ms; /* how long open() retries until all peers are up */
    int socket_buffer;      /* SO_SNDBUF/SO_RCVBUF bytes (tcp) */
    mux_pool **pools;       /* every pool whose messages may be sent or received into */
    int npools;
    int spare_recv; /* buffers rx_spare can give (verbs posts them all) */
    mux_log_fn log;
    void *log_arg;
} mux_transport_cfg;

/* Connects the cluster over TCP. */
sto_status mux_tcp_open(const mux_transport_cfg *cfg, const mux_transport_sink *sink,
                        mux_transport **out);

/* Connects the cluster over RDMA verbs; fails at once, saying so, when the
 * machine has no RDMA device. */
sto_status mux_verbs_open(const mux_transport_cfg *cfg, const mux_transport_sink *sink,
                          mux_transport **out);

#endif
