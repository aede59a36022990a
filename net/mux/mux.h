/*
 * mux.h — the multiplexer: one thread per server that owns every connection
 * to the other servers and moves exchange messages over them.
 *
 * Data flow. A worker takes a message from its NUMA node's pool
 * (mux_msg_get), fills the payload, and hands it over with mux_send: the
 * message goes into the worker's own lock-free queue, so workers never
 * contend with each other. The multiplexer thread drains those queues into
 * one send queue per destination and sends in round-robin phases (phase p:
 * server i sends to (i+p) mod n and receives from (i-p) mod n; a sync frame
 * closes each turn), or, with the schedule switched off, to everyone at
 * once. A broadcast is queued once per destination but serialized once; the
 * message returns to its pool after the last send completes. Messages to the
 * own server skip the network.
 *
 * On the receiving side a data frame lands in a buffer of the receive pool,
 * is queued on that buffer's NUMA node's queue of its exchange, and is taken
 * by mux_recv (own node first, then stealing from the others). Every server
 * grants each peer a fixed number of receive buffers (credits) and returns
 * one when a worker releases a received message, so no server is flooded and
 * both pools stay bounded: a worker that finds its pool empty waits.
 *
 * End of stream: each server calls mux_exchange_done once per producing
 * worker; after the last one the multiplexer sends a last-message frame to
 * every server. mux_recv reports the end once every server's last frame has
 * arrived and the queues are empty.
 *
 * Failure: a peer that closes its connection, sends a malformed frame, or
 * sends nothing (not even a heartbeat) for peer_timeout_ms fails the
 * multiplexer: every blocked and later call returns an error naming that
 * server, and the others are told with an abort frame.
 */
#ifndef RACKDB_NET_MUX_MUX_H
#define RACKDB_NET_MUX_MUX_H

#include "net/mux/cluster.h"
#include "net/mux/log.h"
#include "net/mux/pool.h"
#include "storage/status.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mux_ctx mux_ctx;

typedef enum {
    MUX_TRANSPORT_AUTO,  /* verbs when an RDMA device exists, else tcp */
    MUX_TRANSPORT_TCP,   /* non-blocking sockets + epoll */
    MUX_TRANSPORT_VERBS, /* libibverbs RC queue pairs; needs an RDMA device */
} mux_transport_kind;

typedef struct mux_config {
    const mux_cluster *cluster; /* servers; must outlive the multiplexer */
    int rank;                   /* this server's line in the cluster file */
    mux_transport_kind transport;
    size_t msg_size;        /* payload bytes per message (512 KiB) */
    size_t pool_msgs;       /* send-pool messages per NUMA node (64) */
    int recv_credits;       /* receive buffers granted to each peer (16) */
    int workers;            /* threads that call mux_msg_get/send/recv (1) */
    bool schedule;          /* round-robin phases (true) or send to all at once */
    int burst;              /* messages sent per phase turn (8) */
    int connect_timeout_ms; /* until all servers are connected (30000) */
    int heartbeat_ms;       /* heartbeat after this much silence (500) */
    int peer_timeout_ms;    /* a silent peer is declared failed (5000) */
    int socket_buffer;      /* tcp SO_SNDBUF/SO_RCVBUF (4 MiB) */
    int numa_nodes;         /* pools and receive queues; 0 = the machine's nodes */
    mux_log_fn log;         /* NULL = standard error */
    void *log_arg;
} mux_config;

/* Message sent to every server, this one included. */
#define MUX_BROADCAST (-1)

typedef struct mux_stats {
    uint64_t msgs_sent, bytes_sent; /* data frames handed to the transport */
    uint64_t msgs_recv, bytes_recv; /* data frames received from peers */
    uint64_t syncs_sent, rounds;    /* schedule progress */
} mux_stats;

/* Defaults for everything but cluster and rank. */
void mux_config_init(mux_config *c);

/* "tcp", "verbs" or "auto". */
sto_status mux_transport_parse(const char *name, mux_transport_kind *out);

/* Connects to every server (hello handshake included) and starts the
 * multiplexer thread. */
sto_status mux_create(const mux_config *cfg, mux_ctx **out);

/* Sends what is still queued, says goodbye to every server, stops the thread
 * and frees everything. Received messages must have been released. */
void mux_destroy(mux_ctx *x);

/* Prepares to receive exchange `id`; `producers` local workers will call
 * mux_exchange_done for it (0 = all workers). Frames that arrive before the
 * open are kept. */
sto_status mux_exchange_open(mux_ctx *x, uint32_t id, int producers);

/* Forgets an exchange; messages still queued for it are released. */
void mux_exchange_close(mux_ctx *x, uint32_t id);

/* An empty message from the worker's node pool, waiting while none is free. */
sto_status mux_msg_get(mux_ctx *x, int worker, mux_msg **out);

/* Hands a filled message (exchange and len set) to the multiplexer for
 * server `dest` or MUX_BROADCAST; the multiplexer owns the reference now. */
sto_status mux_send(mux_ctx *x, int worker, mux_msg *m, int dest);

/* The worker has sent its last message of the exchange. */
sto_status mux_exchange_done(mux_ctx *x, int worker, uint32_t id);

/* The next received message of the exchange (release it with
 * mux_msg_release), or *out = NULL once every server's stream has ended. */
sto_status mux_recv(mux_ctx *x, int worker, uint32_t id, mux_msg **out);

/* As mux_recv, but gives up after about wait_ms: then *out = NULL and
 * *pending = true (the stream has not ended), so a waiting thread can look
 * at other things (a cancel flag) between waits. */
sto_status mux_recv_for(mux_ctx *x, int worker, uint32_t id, int wait_ms, mux_msg **out,
                        bool *pending);

/* Fails the multiplexer here and on every other server with `reason`. */
void mux_abort(mux_ctx *x, const char *reason);

/* A copy of the error that failed the multiplexer, or NULL. */
sto_status mux_error(mux_ctx *x);

int mux_rank(const mux_ctx *x);
int mux_size(const mux_ctx *x);
int mux_workers(const mux_ctx *x); /* the configured worker count */
const char *mux_transport_name(const mux_ctx *x);
void mux_get_stats(mux_ctx *x, mux_stats *out);

#endif
