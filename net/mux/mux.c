/*
 * mux.c — the multiplexer thread and the worker-facing API (see mux.h).
 *
 * Threads. Workers touch only their own submission queue (lock-free), the
 * pools and the receive queues of exchanges. Everything that talks to the
 * transport — send queues, credits, the phase schedule, heartbeats — belongs
 * to the multiplexer thread alone and needs no lock. The thread sleeps in
 * the transport's poll(); workers wake it only when it is asleep
 * (`sleeping`), so a busy shuffle pays no wake-up syscall per message.
 *
 * The loop, each turn: drain submission queues into per-destination send
 * queues (local messages go straight to receive queues); return credits for
 * released receive buffers; check heartbeats and timeouts; send what the
 * schedule and the credits allow; poll the transport.
 *
 * The schedule as a state machine, per round r and phase p = 1..n-1:
 *   SENDING    send up to `burst` queued messages to (i+p) mod n while credits
 *              last, then a SYNC frame: my turn towards that server is over;
 *   WAITING    until the SYNC of phase p arrives from (i-p) mod n (FIFO links
 *              mean its data for this phase has arrived too); then p+1.
 * A server with nothing to send still runs the phases (its syncs are what its
 * partners wait for), but paces an idle round to one per millisecond.
 *
 * Shutdown: stop accepting work, send what is queued, send BYE to every
 * server, and leave once every server has said BYE too (or failed), so that
 * no socket closes while its peer still talks to it.
 */
#include "net/mux/mux.h"
#include "net/mux/clock.h"
#include "net/mux/exchange.h"
#include "net/mux/schedule.h"
#include "net/mux/spsc.h"
#include "net/mux/transport.h"
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_MSG_SIZE (512u << 10)
#define TX_DEPTH         4 /* data frames per peer inside the transport */
#define IDLE_ROUND_MS    1
#define STOP_WAIT_MS     3000
/* After a failure, how long stopping waits for the abort frames to leave:
 * they queue behind data already in the socket, and a peer that never hears
 * the reason reports only "closed the connection", hiding the cause. Only
 * peers that still answer are waited for (a stopped one never drains), so
 * the wait ends as soon as they have the frame; the bound is for a peer
 * that answers but reads slowly (sanitizer builds on a loaded machine). */
#define ABORT_FLUSH_MS 3000

enum { SUB_MSG, SUB_DONE };

typedef struct submission {
    mux_msg *m;
    int32_t dest;
    uint32_t exchange;
    uint32_t kind;
} submission;

typedef struct qent {
    mux_msg *m; /* NULL: an empty last-message frame */
    uint32_t exchange;
    bool last;
} qent;

typedef struct sendq {
    qent *e;
    size_t cap, head, count;
} sendq;

typedef struct peer_state {
    bool up, bye;
    int credits;     /* data frames we may still send to it */
    int rx_held;     /* its frames whose credit we have not returned */
    atomic_int owed; /* released receive buffers whose credit is due */
    int64_t last_rx_ms, last_tx_ms;
    uint64_t syncs_from;
    sendq q;
} peer_state;

struct mux_ctx {
    mux_config cfg;
    int n, rank, nnodes;
    mux_transport *t;
    mux_pool **send_pools, **recv_pools; /* per node */
    mux_spsc **subq;                     /* per worker */
    peer_state *peers;
    pthread_t thread;
    bool thread_started;
    atomic_int sleeping;
    atomic_bool stopping;

    mux_xset *exchanges;

    pthread_mutex_t flock;
    sto_status failure;
    atomic_bool failed;
    bool fail_handled, fail_from_peer; /* mux thread */

    /* schedule, mux thread only */
    int phase;
    uint64_t round;
    bool waiting_sync;
    int sent_in_phase;
    bool round_active;
    int64_t idle_until_ms;
    int recv_rr;

    pthread_mutex_t slock;
    mux_stats stats;
};

void mux_config_init(mux_config *c)
{
    memset(c, 0, sizeof *c);
    c->transport = MUX_TRANSPORT_AUTO;
    c->msg_size = DEFAULT_MSG_SIZE;
    c->pool_msgs = 64;
    c->recv_credits = 16;
    c->workers = 1;
    c->schedule = true;
    c->burst = 8;
    c->connect_timeout_ms = 30000;
    c->heartbeat_ms = 500;
    c->peer_timeout_ms = 5000;
    c->socket_buffer = 4 << 20;
}

sto_status mux_transport_parse(const char *name, mux_transport_kind *out)
{
    if (!strcmp(name, "tcp"))
        *out = MUX_TRANSPORT_TCP;
    else if (!strcmp(name, "verbs"))
        *out = MUX_TRANSPORT_VERBS;
    else if (!strcmp(name, "auto"))
        *out = MUX_TRANSPORT_AUTO;
    else
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "unknown transport \"%s\" (expected tcp, verbs or auto)", name);
    return STO_OK;
}

/* ---- failure ------------------------------------------------------------- */

/* Records the first failure (any thread); later ones are dropped. */
static void fail(mux_ctx *x, sto_status st)
{
    pthread_mutex_lock(&x->flock);
    if (!x->failure) {
        x->failure = st;
        st = NULL;
        atomic_store(&x->failed, true);
    }
    pthread_mutex_unlock(&x->flock);
    sto_status_free(st);
    for (int k = 0; k < x->nnodes; k++)
        mux_pool_interrupt(x->send_pools[k]);
    if (x->exchanges) mux_xset_wake_all(x->exchanges);
    if (x->t && atomic_exchange(&x->sleeping, 0)) x->t->ops->wake(x->t);
}

sto_status mux_error(mux_ctx *x)
{
    if (!atomic_load(&x->failed)) return STO_OK;
    pthread_mutex_lock(&x->flock);
    sto_status st = sto_error(x->failure->sqlstate, "%s", x->failure->message);
    pthread_mutex_unlock(&x->flock);
    return st;
}

void mux_abort(mux_ctx *x, const char *reason)
{
    fail(x, sto_error(STO_QUERY_CANCELED, "server %d aborted: %s", x->rank, reason));
}

static const mux_endpoint *ep_of(mux_ctx *x, int rank)
{
    return &x->cfg.cluster->ep[rank];
}

/* ---- exchanges ----------------------------------------------------------- */

static int node_of(mux_ctx *x, mux_msg *m)
{
    for (int k = 0; k < x->nnodes; k++)
        if (m->pool == x->send_pools[k] || m->pool == x->recv_pools[k]) return k;
    return 0;
}

/* Server `from` has sent its last message of the exchange. */
static void mark_last(mux_ctx *x, mux_xq *q, int from)
{
    if (!mux_xq_mark_last(q, from))
        mux_logf(x->cfg.log, x->cfg.log_arg,
                 "mux[%d]: duplicate last message from server %d for exchange %u ignored", x->rank,
                 from, mux_xq_id(q));
}

sto_status mux_exchange_open(mux_ctx *x, uint32_t id, int producers)
{
    if (producers < 0 || producers > x->cfg.workers)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "exchange %u: %d producers of %d workers", id,
                         producers, x->cfg.workers);
    return mux_xset_open(x->exchanges, id, producers ? producers : x->cfg.workers);
}

void mux_exchange_close(mux_ctx *x, uint32_t id)
{
    mux_xset_close(x->exchanges, id);
}

/* ---- worker side ----------------------------------------------------------- */

static int worker_node(mux_ctx *x, int worker)
{
    return worker % x->nnodes;
}

static void wake_mux(mux_ctx *x)
{
    if (atomic_exchange(&x->sleeping, 0) && x->t) x->t->ops->wake(x->t);
}

sto_status mux_msg_get(mux_ctx *x, int worker, mux_msg **out)
{
    *out = NULL;
    if (worker < 0 || worker >= x->cfg.workers)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "worker %d of %d", worker, x->cfg.workers);
    mux_pool *p = x->send_pools[worker_node(x, worker)];
    while (!atomic_load(&x->failed)) {
        mux_msg *m = mux_pool_get(p, 100);
        if (m) {
            *out = m;
            return STO_OK;
        }
    }
    return mux_error(x);
}

static sto_status submit(mux_ctx *x, int worker, const submission *s)
{
    if (worker < 0 || worker >= x->cfg.workers)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "worker %d of %d", worker, x->cfg.workers);
    while (!mux_spsc_push(x->subq[worker], s)) {
        if (atomic_load(&x->failed)) return mux_error(x);
        wake_mux(x);
        sched_yield();
    }
    wake_mux(x);
    return STO_OK;
}

sto_status mux_send(mux_ctx *x, int worker, mux_msg *m, int dest)
{
    if (dest != MUX_BROADCAST && (dest < 0 || dest >= x->n)) {
        mux_msg_release(m);
        return sto_error(STO_INVALID_PARAMETER_VALUE, "no server %d in a cluster of %d", dest,
                         x->n);
    }
    if (m->len > m->cap) {
        mux_msg_release(m);
        return sto_error(STO_INVALID_PARAMETER_VALUE, "message of %u bytes exceeds its %u", m->len,
                         m->cap);
    }
    if (atomic_load(&x->failed)) {
        mux_msg_release(m);
        return mux_error(x);
    }
    submission s = {.m = m, .dest = dest, .exchange = m->exchange, .kind = SUB_MSG};
    sto_status st = submit(x, worker, &s);
    if (st) mux_msg_release(m);
    return st;
}

sto_status mux_exchange_done(mux_ctx *x, int worker, uint32_t id)
{
    submission s = {.dest = -1, .exchange = id, .kind = SUB_DONE};
    return submit(x, worker, &s);
}

sto_status mux_recv(mux_ctx *x, int worker, uint32_t id, mux_msg **out)
{
    *out = NULL;
    if (worker < 0 || worker >= x->cfg.workers)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "worker %d of %d", worker, x->cfg.workers);
    mux_xq *q = mux_xset_get(x->exchanges, id);
    if (!q) return sto_error_oom();
    for (;;) {
        if (atomic_load(&x->failed)) return mux_error(x);
        if (mux_xq_take(q, worker_node(x, worker), 100, &x->failed, out) >= 0) return STO_OK;
    }
}

sto_status mux_recv_for(mux_ctx *x, int worker, uint32_t id, int wait_ms, mux_msg **out,
                        bool *pending)
{
    *out = NULL;
    *pending = false;
    if (worker < 0 || worker >= x->cfg.workers)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "worker %d of %d", worker, x->cfg.workers);
    mux_xq *q = mux_xset_get(x->exchanges, id);
    if (!q) return sto_error_oom();
    if (atomic_load(&x->failed)) return mux_error(x);
    if (mux_xq_take(q, worker_node(x, worker), wait_ms, &x->failed, out) >= 0) return STO_OK;
    if (atomic_load(&x->failed)) return mux_error(x);
    *pending = true;
    return STO_OK;
}

/* ---- multiplexer thread: queues and credits -------------------------------- */

static bool sendq_push(sendq *q, qent e)
{
    if (q->count == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        qent *r = malloc(cap * sizeof *r);
        if (!r) return false;
        for (size_t i = 0; i < q->count; i++)
            r[i] = q->e[(q->head + i) % q->cap];
        free(q->e);
        q->e = r;
        q->cap = cap;
        q->head = 0;
    }
    q->e[(q->head + q->count) % q->cap] = e;
    q->count++;
    return true;
}

static qent sendq_pop(sendq *q)
{
    qent e = q->e[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return e;
}

static void sendq_clear(sendq *q)
{
    while (q->count) {
        qent e = sendq_pop(q);
        if (e.m) mux_msg_release(e.m);
    }
}

/* Pool hook of receive pools: a worker released a received message. */
static void on_recv_release(void *arg, int32_t src)
{
    mux_ctx *x = arg;
    if (src >= 0 && src < x->n) {
        atomic_fetch_add(&x->peers[src].owed, 1);
        wake_mux(x);
    }
}

static void queue_for(mux_ctx *x, int dest, qent e)
{
    peer_state *p = &x->peers[dest];
    if (!p->up || p->bye) {
        if (e.m) mux_msg_release(e.m);
        fail(x, sto_error(STO_CONNECTION_FAILURE,
                          "server %d (%s:%s) left while data for it was pending", dest,
                          ep_of(x, dest)->host, ep_of(x, dest)->port));
        return;
    }
    if (!sendq_push(&p->q, e)) {
        if (e.m) mux_msg_release(e.m);
        fail(x, sto_error_oom());
    }
}

static void handle_submission(mux_ctx *x, submission *s)
{
    if (s->kind == SUB_DONE) {
        bool all;
        mux_xq *q = mux_xset_producer_done(x->exchanges, s->exchange, &all);
        if (!q) {
            fail(x, sto_error_oom());
            return;
        }
        if (!all) return;
        for (int d = 0; d < x->n; d++)
            if (d != x->rank) queue_for(x, d, (qent){.exchange = s->exchange, .last = true});
        mark_last(x, q, x->rank);
        return;
    }
    mux_msg *m = s->m;
    if (atomic_load(&x->failed)) {
        mux_msg_release(m);
        return;
    }
    m->src = x->rank;
    m->last = false;
    /* Serialized once: every destination sends these same bytes. */
    mux_wire_hdr h = {.type = MUX_FRAME_DATA,
                      .exchange = s->exchange,
                      .sender = (uint32_t)x->rank,
                      .len = m->len};
    mux_wire_encode(&h, m->frame);
    int first = s->dest == MUX_BROADCAST ? 0 : s->dest;
    int last = s->dest == MUX_BROADCAST ? x->n - 1 : s->dest;
    if (last > first) mux_msg_retain(m, last - first);
    for (int d = first; d <= last; d++) {
        if (d != x->rank) {
            queue_for(x, d, (qent){.m = m, .exchange = s->exchange});
            continue;
        }
        mux_xq *q = mux_xset_get(x->exchanges, s->exchange);
        if (!q) {
            mux_msg_release(m);
            fail(x, sto_error_oom());
            continue;
        }
        mux_xq_push(q, node_of(x, m), m);
    }
}

static bool drain_submissions(mux_ctx *x)
{
    bool any = false;
    submission s;
    for (int w = 0; w < x->cfg.workers; w++)
        while (mux_spsc_pop(x->subq[w], &s)) {
            handle_submission(x, &s);
            any = true;
        }
    return any;
}

static void send_ctrl(mux_ctx *x, int peer, int type, uint64_t aux, const void *payload,
                      uint32_t len)
{
    mux_wire_hdr h = {.type = (uint8_t)type, .sender = (uint32_t)x->rank, .len = len, .aux = aux};
    sto_status st = x->t->ops->send(x->t, peer, &h, NULL, payload);
    if (st) {
        fail(x, st);
        return;
    }
    x->peers[peer].last_tx_ms = mux_now_ms();
}

static void return_credits(mux_ctx *x)
{
    for (int i = 0; i < x->n; i++) {
        peer_state *p = &x->peers[i];
        if (i == x->rank) continue;
        int k = atomic_exchange(&p->owed, 0);
        if (!k) continue;
        p->rx_held -= k;
        if (p->up && !p->bye) send_ctrl(x, i, MUX_FRAME_CREDIT, (uint64_t)k, NULL, 0);
    }
}

/* How long a peer may stay silent. A worker gives another worker four
 * heartbeats longer than the coordinator (rank 0) gives anyone: the
 * coordinator hears from every server, so it names a silent one first and
 * its ABORT reaches the workers before their own timeouts. With equal
 * timeouts a worker whose last frame from the silent server was older
 * could fail first, and the coordinator would see only that worker's
 * connection close and name the wrong server. */
static int64_t peer_timeout_ms(const mux_ctx *x, int peer)
{
    int64_t t = x->cfg.peer_timeout_ms;
    if (x->rank != 0 && peer != 0) t += 4 * (int64_t)x->cfg.heartbeat_ms;
    return t;
}

/* Heard nothing for longer than the timeout: a failed or stopped peer. */
static bool silent(const mux_ctx *x, int peer, int64_t now)
{
    return now - x->peers[peer].last_rx_ms > peer_timeout_ms(x, peer);
}

static void check_peers(mux_ctx *x, int64_t now)
{
    for (int i = 0; i < x->n; i++) {
        peer_state *p = &x->peers[i];
        if (i == x->rank || !p->up || p->bye) continue;
        if (silent(x, i, now)) {
            fail(x, sto_error(STO_CONNECTION_FAILURE,
                              "server %d (%s:%s) did not answer for %lld ms", i, ep_of(x, i)->host,
                              ep_of(x, i)->port, (long long)peer_timeout_ms(x, i)));
            return;
        }
        if (now - p->last_tx_ms >= x->cfg.heartbeat_ms && x->t->ops->backlog(x->t, i) == 0)
            send_ctrl(x, i, MUX_FRAME_HEARTBEAT, 0, NULL, 0);
    }
}

/* ---- multiplexer thread: sending ----------------------------------------- */

static bool send_one(mux_ctx *x, int d)
{
    peer_state *p = &x->peers[d];
    qent e = sendq_pop(&p->q);
    p->credits--;
    sto_status st;
    if (e.m) {
        uint32_t len = e.m->len;
        mux_wire_hdr h = {.type = MUX_FRAME_DATA,
                          .exchange = e.exchange,
                          .sender = (uint32_t)x->rank,
                          .len = len};
        st = x->t->ops->send(x->t, d, &h, e.m, NULL);
        pthread_mutex_lock(&x->slock);
        x->stats.msgs_sent++;
        x->stats.bytes_sent += len;
        pthread_mutex_unlock(&x->slock);
    } else {
        mux_wire_hdr h = {.type = MUX_FRAME_DATA,
                          .flags = e.last ? MUX_FLAG_LAST : 0,
                          .exchange = e.exchange,
                          .sender = (uint32_t)x->rank};
        st = x->t->ops->send(x->t, d, &h, NULL, NULL);
    }
    p->last_tx_ms = mux_now_ms();
    x->round_active = true;
    if (st) {
        fail(x, st);
        return false;
    }
    return true;
}

static bool can_send(mux_ctx *x, int d)
{
    peer_state *p = &x->peers[d];
    return p->up && !p->bye && p->q.count && p->credits > 0 &&
           x->t->ops->backlog(x->t, d) < TX_DEPTH;
}

static void pump_unscheduled(mux_ctx *x)
{
    bool progress = true;
    while (progress && !atomic_load(&x->failed)) {
        progress = false;
        for (int d = 0; d < x->n; d++)
            if (d != x->rank && can_send(x, d)) progress = send_one(x, d);
    }
}

static bool queues_empty(mux_ctx *x)
{
    for (int d = 0; d < x->n; d++)
        if (x->peers[d].q.count) return false;
    return true;
}

/* Data queued for a server that said goodbye can never leave. */
static void drop_departed(mux_ctx *x)
{
    for (int d = 0; d < x->n; d++) {
        peer_state *p = &x->peers[d];
        if (p->q.count && (!p->up || p->bye)) {
            mux_logf(x->cfg.log, x->cfg.log_arg,
                     "mux[%d]: dropping %zu messages for server %d, which has left", x->rank,
                     p->q.count, d);
            sendq_clear(&p->q);
        }
    }
}

/* Runs the phase state machine as far as it can go without waiting. */
static void pump_scheduled(mux_ctx *x, int64_t now)
{
    int phases = mux_schedule_phases(x->n);
    while (phases && !atomic_load(&x->failed)) {
        int dest = mux_schedule_dest(x->rank, x->n, x->phase);
        int src = mux_schedule_src(x->rank, x->n, x->phase);
        if (!x->waiting_sync) {
            if (x->phase == 1 && x->sent_in_phase == 0 && now < x->idle_until_ms && queues_empty(x))
                return; /* idle pacing */
            while (x->sent_in_phase < x->cfg.burst && can_send(x, dest)) {
                if (!send_one(x, dest)) return;
                x->sent_in_phase++;
            }
            peer_state *p = &x->peers[dest];
            bool more =
                p->up && !p->bye && p->q.count && p->credits > 0 && x->sent_in_phase < x->cfg.burst;
            if (more) return; /* transport is full; go on after poll */
            if (p->up && !p->bye) {
                send_ctrl(x, dest, MUX_FRAME_SYNC, x->round, NULL, 0);
                pthread_mutex_lock(&x->slock);
                x->stats.syncs_sent++;
                pthread_mutex_unlock(&x->slock);
            }
            x->waiting_sync = true;
        }
        peer_state *s = &x->peers[src];
        if (s->up && !s->bye && s->syncs_from <= x->round) return;
        x->waiting_sync = false;
        x->sent_in_phase = 0;
        if (++x->phase > phases) {
            x->phase = 1;
            x->round++;
            pthread_mutex_lock(&x->slock);
            x->stats.rounds++;
            pthread_mutex_unlock(&x->slock);
            if (!x->round_active) x->idle_until_ms = now + IDLE_ROUND_MS;
            x->round_active = false;
        }
    }
}

/* ---- multiplexer thread: transport callbacks ----------------------------- */

static mux_msg *cb_rx_buffer(void *arg, int peer, const mux_wire_hdr *h)
{
    mux_ctx *x = arg;
    peer_state *p = &x->peers[peer];
    if (p->rx_held >= x->cfg.recv_credits) return NULL;
    for (int i = 0; i < x->nnodes; i++) {
        int k = (x->recv_rr + i) % x->nnodes;
        mux_msg *m = mux_pool_try_get(x->recv_pools[k]);
        if (m) {
            x->recv_rr = (k + 1) % x->nnodes;
            p->rx_held++;
            m->src = peer;
            return m;
        }
    }
    return NULL;
}

static mux_msg *cb_rx_spare(void *arg)
{
    mux_ctx *x = arg;
    for (int i = 0; i < x->nnodes; i++) {
        mux_msg *m = mux_pool_try_get(x->recv_pools[(x->recv_rr + i) % x->nnodes]);
        if (m) return m;
    }
    return NULL;
}

static void cb_rx_frame(void *arg, int peer, const mux_wire_hdr *h, mux_msg *m, const uint8_t *ctrl)
{
    mux_ctx *x = arg;
    peer_state *p = &x->peers[peer];
    p->last_rx_ms = mux_now_ms();
    switch ((mux_frame_type)h->type) {
    case MUX_FRAME_DATA: {
        x->round_active = true;
        if (!m) { /* an empty frame holds no buffer: its credit is due now */
            p->rx_held++;
            atomic_fetch_add(&p->owed, 1);
        } else {
            m->len = h->len;
            m->exchange = h->exchange;
            m->last = (h->flags & MUX_FLAG_LAST) != 0;
            m->src = peer;
            pthread_mutex_lock(&x->slock);
            x->stats.msgs_recv++;
            x->stats.bytes_recv += h->len;
            pthread_mutex_unlock(&x->slock);
        }
        mux_xq *q = mux_xset_get(x->exchanges, h->exchange);
        if (!q) {
            if (m) mux_msg_release(m);
            fail(x, sto_error_oom());
            return;
        }
        if (m) mux_xq_push(q, node_of(x, m), m);
        if (h->flags & MUX_FLAG_LAST) mark_last(x, q, peer);
        return;
    }
    case MUX_FRAME_SYNC:
        p->syncs_from++;
        return;
    case MUX_FRAME_CREDIT:
        p->credits += (int)h->aux;
        return;
    case MUX_FRAME_ABORT:
        x->fail_from_peer = true;
        fail(x, sto_error(STO_CONNECTION_FAILURE, "server %d (%s:%s) aborted: %.*s", peer,
                          ep_of(x, peer)->host, ep_of(x, peer)->port, (int)h->len,
                          (const char *)ctrl));
        return;
    case MUX_FRAME_BYE:
        p->bye = true;
        return;
    case MUX_FRAME_HEARTBEAT:
    case MUX_FRAME_HELLO:
        return;
    }
}

static void cb_tx_done(void *arg, int peer, mux_msg *m)
{
    mux_msg_release(m);
}

static void cb_peer_failed(void *arg, int peer, sto_status why)
{
    mux_ctx *x = arg;
    x->peers[peer].up = false;
    fail(x, why);
}

/* First turn after a failure: tell the others, drop what was queued. */
static void handle_failure(mux_ctx *x)
{
    x->fail_handled = true;
    if (!x->fail_from_peer) {
        char reason[MUX_WIRE_CTRL_MAX];
        pthread_mutex_lock(&x->flock);
        snprintf(reason, sizeof reason, "%s", x->failure->message);
        pthread_mutex_unlock(&x->flock);
        /* also to peers that said BYE: they have sent all they will, but
         * may still wait for others' rows, and would otherwise see only
         * this server's connection close */
        for (int i = 0; i < x->n; i++)
            if (i != x->rank && x->peers[i].up) {
                mux_wire_hdr h = {.type = MUX_FRAME_ABORT,
                                  .sender = (uint32_t)x->rank,
                                  .len = (uint32_t)strlen(reason)};
                sto_status st = x->t->ops->send(x->t, i, &h, NULL, reason);
                sto_status_free(st);
            }
    }
    for (int i = 0; i < x->n; i++)
        sendq_clear(&x->peers[i].q);
}

/* ---- multiplexer thread: main loop ---------------------------------------- */

static bool work_waiting(mux_ctx *x)
{
    for (int w = 0; w < x->cfg.workers; w++)
        if (mux_spsc_size(x->subq[w])) return true;
    for (int i = 0; i < x->n; i++)
        if (atomic_load(&x->peers[i].owed)) return true;
    if (atomic_load(&x->failed)) return !x->fail_handled;
    return atomic_load(&x->stopping);
}

static bool all_backlogs_empty(mux_ctx *x)
{
    for (int i = 0; i < x->n; i++)
        if (i != x->rank && x->peers[i].up && x->t->ops->backlog(x->t, i)) return false;
    return true;
}

/* After a failure: have the abort frames left for every peer that still
 * answers? At the deadline, says in the log what did not leave. */
static bool aborts_flushed(mux_ctx *x, int64_t now, int64_t deadline)
{
    bool done = true;
    for (int i = 0; i < x->n; i++) {
        if (i == x->rank || !x->peers[i].up || silent(x, i, now)) continue;
        size_t left = x->t->ops->backlog(x->t, i);
        if (left && now > deadline)
            mux_logf(x->cfg.log, x->cfg.log_arg,
                     "mux[%d]: closing with %zu frames not sent to server %d (%s:%s)", x->rank,
                     left, i, ep_of(x, i)->host, ep_of(x, i)->port);
        if (left) done = false;
    }
    return done || now > deadline;
}

static void *mux_main(void *arg)
{
    mux_ctx *x = arg;
    bool bye_sent = false;
    int64_t stop_deadline = 0, abort_deadline = 0;
    for (;;) {
        int64_t now = mux_now_ms();
        drain_submissions(x);
        if (atomic_load(&x->failed)) {
            if (!x->fail_handled) handle_failure(x);
        } else if (!bye_sent) { /* after the goodbye nothing more goes out */
            return_credits(x);
            check_peers(x, now);
            if (x->cfg.schedule)
                pump_scheduled(x, now);
            else
                pump_unscheduled(x);
        }
        if (atomic_load(&x->stopping) && atomic_load(&x->failed)) {
            if (!abort_deadline) abort_deadline = now + ABORT_FLUSH_MS;
            if (aborts_flushed(x, now, abort_deadline)) break;
        } else if (atomic_load(&x->stopping)) {
            if (!stop_deadline) stop_deadline = now + x->cfg.peer_timeout_ms + STOP_WAIT_MS;
            drop_departed(x);
            if (!bye_sent && queues_empty(x) && all_backlogs_empty(x)) {
                for (int i = 0; i < x->n; i++)
                    if (i != x->rank && x->peers[i].up) send_ctrl(x, i, MUX_FRAME_BYE, 0, NULL, 0);
                bye_sent = true;
            }
            bool all_bye = bye_sent && all_backlogs_empty(x);
            for (int i = 0; i < x->n; i++)
                if (i != x->rank && x->peers[i].up && !x->peers[i].bye) all_bye = false;
            if (all_bye || now > stop_deadline) break;
        }
        int timeout = 50;
        if (x->cfg.heartbeat_ms / 2 < timeout) timeout = x->cfg.heartbeat_ms / 2;
        if (x->cfg.schedule && x->idle_until_ms > now && x->idle_until_ms - now < timeout)
            timeout = (int)(x->idle_until_ms - now);
        atomic_store(&x->sleeping, 1);
        if (work_waiting(x)) timeout = 0;
        sto_status st = x->t->ops->poll(x->t, timeout);
        atomic_store(&x->sleeping, 0);
        if (st) fail(x, st);
    }
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------ */

static int count_nodes(void)
{
    if (numa_available() < 0) return 1;
    int n = numa_num_configured_nodes();
    return n > 0 ? n : 1;
}

/* Receive buffers beyond the credits: verbs keeps this many posted. */
static int recv_spare(const mux_ctx *x)
{
    return x->cfg.transport == MUX_TRANSPORT_TCP ? 0 : 2 * (x->n - 1) + 16;
}

static sto_status open_transport(mux_ctx *x)
{
    mux_pool *pools[2 * 64];
    int np = 0;
    for (int k = 0; k < x->nnodes && np + 2 <= (int)(sizeof pools / sizeof *pools); k++) {
        pools[np++] = x->send_pools[k];
        pools[np++] = x->recv_pools[k];
    }
    mux_transport_cfg tc = {.cluster = x->cfg.cluster,
                            .rank = x->rank,
                            .max_data = x->cfg.msg_size,
                            .connect_timeout_ms = x->cfg.connect_timeout_ms,
                            .socket_buffer = x->cfg.socket_buffer,
                            .pools = pools,
                            .npools = np,
                            .spare_recv = recv_spare(x),
                            .log = x->cfg.log,
                            .log_arg = x->cfg.log_arg};
    mux_transport_sink sink = {.arg = x,
                               .rx_buffer = cb_rx_buffer,
                               .rx_spare = cb_rx_spare,
                               .rx_frame = cb_rx_frame,
                               .tx_done = cb_tx_done,
                               .peer_failed = cb_peer_failed};
    switch (x->cfg.transport) {
    case MUX_TRANSPORT_TCP:
        return mux_tcp_open(&tc, &sink, &x->t);
    case MUX_TRANSPORT_VERBS:
        return mux_verbs_open(&tc, &sink, &x->t);
    case MUX_TRANSPORT_AUTO: {
        sto_status st = mux_verbs_open(&tc, &sink, &x->t);
        if (!st) return STO_OK;
        mux_logf(x->cfg.log, x->cfg.log_arg, "mux[%d]: %s; using tcp", x->rank, st->message);
        sto_status_free(st);
        return mux_tcp_open(&tc, &sink, &x->t);
    }
    }
    return sto_error(STO_INVALID_PARAMETER_VALUE, "unknown transport %d", (int)x->cfg.transport);
}

sto_status mux_create(const mux_config *cfg, mux_ctx **out)
{
    *out = NULL;
    const mux_cluster *c = cfg->cluster;
    if (!c || c->n < 1 || cfg->rank < 0 || cfg->rank >= c->n)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "rank %d is not in the cluster", cfg->rank);
    if (cfg->workers < 1 || cfg->recv_credits < 1 || cfg->burst < 1 || cfg->pool_msgs < 1 ||
        cfg->msg_size < 64 || cfg->msg_size > (256u << 20) || cfg->heartbeat_ms < 1 ||
        cfg->peer_timeout_ms <= cfg->heartbeat_ms)
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "multiplexer configuration out of range (workers %d, credits %d, "
                         "burst %d, pool %zu, message %zu bytes, heartbeat %d ms, timeout %d ms)",
                         cfg->workers, cfg->recv_credits, cfg->burst, cfg->pool_msgs, cfg->msg_size,
                         cfg->heartbeat_ms, cfg->peer_timeout_ms);
    mux_ctx *x = calloc(1, sizeof *x);
    if (!x) return sto_error_oom();
    x->cfg = *cfg;
    x->n = c->n;
    x->rank = cfg->rank;
    /* More nodes than the machine has (tests of stealing) are placed on the
     * caller's node. */
    int real_nodes = count_nodes();
    x->nnodes = cfg->numa_nodes > 0 ? cfg->numa_nodes : real_nodes;
    if (x->nnodes > 64) x->nnodes = 64;
    x->phase = 1;
    pthread_mutex_init(&x->flock, NULL);
    pthread_mutex_init(&x->slock, NULL);
    sto_status st = STO_OK;
    x->send_pools = calloc((size_t)x->nnodes, sizeof *x->send_pools);
    x->recv_pools = calloc((size_t)x->nnodes, sizeof *x->recv_pools);
    x->subq = calloc((size_t)cfg->workers, sizeof *x->subq);
    x->peers = calloc((size_t)x->n, sizeof *x->peers);
    if (!x->send_pools || !x->recv_pools || !x->subq || !x->peers) {
        st = sto_error_oom();
        goto fail;
    }
    /* Receive buffers: every peer's credits, spread over the nodes. */
    size_t recv_total =
        (size_t)cfg->recv_credits * (size_t)(x->n > 1 ? x->n - 1 : 1) + (size_t)recv_spare(x);
    size_t recv_per_node = (recv_total + (size_t)x->nnodes - 1) / (size_t)x->nnodes;
    for (int k = 0; k < x->nnodes && !st; k++) {
        int node = k < real_nodes ? k : -1;
        st = mux_pool_create(cfg->pool_msgs, cfg->msg_size, node, &x->send_pools[k]);
        if (!st) st = mux_pool_create(recv_per_node, cfg->msg_size, node, &x->recv_pools[k]);
        if (!st) mux_pool_set_hook(x->recv_pools[k], on_recv_release, x);
    }
    if (!st) st = mux_xset_create(x->n, x->nnodes, cfg->workers, &x->exchanges);
    size_t subcap = cfg->pool_msgs * (size_t)x->nnodes + 64;
    for (int w = 0; w < cfg->workers && !st; w++)
        st = mux_spsc_create(subcap, sizeof(submission), &x->subq[w]);
    if (st) goto fail;
    int64_t now = mux_now_ms();
    for (int i = 0; i < x->n; i++) {
        x->peers[i].up = i != x->rank;
        x->peers[i].last_rx_ms = x->peers[i].last_tx_ms = now;
    }
    st = open_transport(x);
    if (st) goto fail;
    now = mux_now_ms();
    for (int i = 0; i < x->n; i++) {
        x->peers[i].last_rx_ms = now;
        if (i != x->rank) send_ctrl(x, i, MUX_FRAME_CREDIT, (uint64_t)cfg->recv_credits, NULL, 0);
    }
    if (atomic_load(&x->failed)) {
        st = mux_error(x);
        goto fail;
    }
    if (pthread_create(&x->thread, NULL, mux_main, x)) {
        st = sto_error(STO_INTERNAL_ERROR, "cannot start the multiplexer thread");
        goto fail;
    }
    x->thread_started = true;
    *out = x;
    return STO_OK;
fail:
    mux_destroy(x);
    return st;
}

void mux_destroy(mux_ctx *x)
{
    if (!x) return;
    if (x->thread_started) {
        atomic_store(&x->stopping, true);
        if (x->t) x->t->ops->wake(x->t);
        pthread_join(x->thread, NULL);
    }
    for (int i = 0; x->peers && i < x->n; i++)
        sendq_clear(&x->peers[i].q);
    if (x->t) x->t->ops->destroy(x->t);
    x->t = NULL;
    submission s;
    for (int w = 0; x->subq && w < x->cfg.workers; w++) {
        while (x->subq[w] && mux_spsc_pop(x->subq[w], &s))
            if (s.m) mux_msg_release(s.m);
        mux_spsc_destroy(x->subq[w]);
    }
    mux_xset_destroy(x->exchanges);
    x->exchanges = NULL;
    for (int i = 0; x->peers && i < x->n; i++)
        free(x->peers[i].q.e);
    for (int k = 0; k < x->nnodes; k++) {
        if (x->send_pools) mux_pool_destroy(x->send_pools[k]);
        if (x->recv_pools) mux_pool_destroy(x->recv_pools[k]);
    }
    free(x->send_pools);
    free(x->recv_pools);
    free(x->subq);
    free(x->peers);
    sto_status_free(x->failure);
    pthread_mutex_destroy(&x->flock);
    pthread_mutex_destroy(&x->slock);
    free(x);
}

int mux_rank(const mux_ctx *x)
{
    return x->rank;
}

int mux_size(const mux_ctx *x)
{
    return x->n;
}

int mux_workers(const mux_ctx *x)
{
    return x->cfg.workers;
}

const char *mux_transport_name(const mux_ctx *x)
{
    return x->t ? x->t->ops->name : "none";
}

void mux_get_stats(mux_ctx *x, mux_stats *out)
{
    pthread_mutex_lock(&x->slock);
    *out = x->stats;
    pthread_mutex_unlock(&x->slock);
}
