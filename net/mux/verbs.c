/*
 * verbs.c — the RDMA transport: libibverbs RC queue pairs set up with
 * librdmacm, two-sided Send/Recv on registered pool buffers.
 *
 * Start-up: ibv_get_device_list first — on a machine without an RDMA device
 * the transport fails at once with "no RDMA device found; use --transport
 * tcp". Otherwise rank i binds an rdma_cm listener to its cluster-file
 * address, connects to every lower rank and accepts every higher one; the
 * hello (cluster id, rank, cluster size) rides in the connection's private
 * data, so a wrong cluster is rejected before a queue pair carries anything.
 *
 * Resources, one each per server: a protection domain, a completion channel
 * and one completion queue for sends and receives (waits are event-driven:
 * the channel's fd sits in an epoll next to the rdma_cm channel and a wake
 * eventfd), and a shared receive queue that all queue pairs receive into, so
 * receive buffers scale with the credits, not with the number of peers.
 *
 * Buffers: every pool slab is registered once (verbs_regcache); a data frame
 * is sent straight from its message (header room + payload, one SGE).
 * Control frames are copied into buffers of a small registered pool. The
 * shared receive queue holds spare buffers from the multiplexer's receive
 * pools; when a data frame fills one, rx_buffer (which enforces the sender's
 * credits) supplies its replacement and the filled one goes up. Control
 * frames are handed up and their buffer reposted at once.
 *
 * Work requests are tracked in a verbs_wr table: ids map completions back to
 * messages, and sends per queue pair never exceed its depth; frames beyond
 * it wait in a per-peer ring (that ring plus the outstanding sends is the
 * backlog the multiplexer sees).
 */
#include "net/mux/clock.h"
#include "net/mux/transport.h"
#include "net/mux/verbs_regcache.h"
#include "net/mux/verbs_wr.h"
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define HELLO_BYTES  (MUX_WIRE_HDR_SIZE + 4)
#define SEND_DEPTH   64 /* sends in flight per queue pair */
#define CTRL_BUFFERS 512
#define RESOLVE_MS   2000
#define RETRY_MS     50

enum { KIND_CM = 1, KIND_CQ, KIND_WAKE };

typedef struct vframe {
    mux_msg *m;   /* data message, or a control-pool buffer */
    bool ctrl;    /* m belongs to the control pool */
    uint32_t len; /* header + payload */
} vframe;

typedef struct vpeer {
    int rank;
    struct rdma_cm_id *id;
    bool up, bye, connecting;
    int64_t retry_at;
    vframe *q; /* frames not yet posted (ring) */
    size_t qcap, qhead, qcount;
} vpeer;

typedef struct verbs_transport {
    mux_transport base;
    mux_transport_cfg cfg;
    mux_transport_sink sink;
    int n, rank;
    struct rdma_event_channel *ec;
    struct rdma_cm_id *listen_id;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *cc;
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    mux_regcache *rc;
    mux_wrtab *wt;
    mux_pool *ctrl;
    int srq_depth;
    int epfd, wakefd;
    int kind_cm, kind_cq, kind_wake;
    vpeer *peers;
} verbs_transport;

static const mux_endpoint *ep_of(verbs_transport *t, int rank)
{
    return &t->cfg.cluster->ep[rank];
}

static sto_status peer_error(verbs_transport *t, int rank, const char *what)
{
    const mux_endpoint *ep = ep_of(t, rank);
    return sto_error(STO_CONNECTION_FAILURE, "server %d (%s:%s) %s", rank, ep->host, ep->port,
                     what);
}

/* ---- registration ---------------------------------------------------------- */

static void *reg_mr(void *ctx, void *addr, size_t len, uint32_t *lkey)
{
    struct ibv_mr *mr = ibv_reg_mr(ctx, addr, len, IBV_ACCESS_LOCAL_WRITE);
    if (mr) *lkey = mr->lkey;
    return mr;
}

static void dereg_mr(void *ctx, void *handle)
{
    ibv_dereg_mr(handle);
}

/* ---- hello in the private data ------------------------------------------- */

static void encode_hello(verbs_transport *t, uint8_t out[HELLO_BYTES])
{
    mux_wire_hdr h = {
        .type = MUX_FRAME_HELLO, .sender = (uint32_t)t->rank, .len = 4, .aux = t->cfg.cluster->id};
    mux_wire_encode(&h, out);
    uint32_t n = (uint32_t)t->n;
    for (int i = 0; i < 4; i++)
        out[MUX_WIRE_HDR_SIZE + i] = (uint8_t)(n >> (8 * i));
}

static sto_status check_hello(verbs_transport *t, const void *data, size_t len, int *rank)
{
    if (!data || len < HELLO_BYTES)
        return sto_error(STO_PROTOCOL_VIOLATION, "connection without a hello");
    const uint8_t *in = data;
    mux_wire_hdr h;
    STO_TRY(mux_wire_decode(in, 0, &h));
    uint32_t n =
        (uint32_t)in[32] | (uint32_t)in[33] << 8 | (uint32_t)in[34] << 16 | (uint32_t)in[35] << 24;
    if (h.type != MUX_FRAME_HELLO || h.aux != t->cfg.cluster->id || n != (uint32_t)t->n)
        return sto_error(STO_PROTOCOL_VIOLATION, "hello from another cluster");
    if (h.sender >= (uint32_t)t->n || h.sender == (uint32_t)t->rank)
        return sto_error(STO_PROTOCOL_VIOLATION, "hello from invalid rank %u", h.sender);
    *rank = (int)h.sender;
    return STO_OK;
}

/* ---- posting ----------------------------------------------------------------- */

static bool post_recv(verbs_transport *t, mux_msg *m)
{
    uint32_t lkey;
    size_t len = MUX_WIRE_HDR_SIZE + m->cap;
    if (!mux_regcache_lookup(t->rc, m->frame, len, &lkey)) return false;
    mux_wr w = {.peer = -1, .kind = MUX_WR_RECV, .m = m};
    uint64_t id;
    if (!mux_wrtab_post(t->wt, &w, &id)) return false;
    struct ibv_sge sge = {.addr = (uintptr_t)m->frame, .length = (uint32_t)len, .lkey = lkey};
    struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_srq_recv(t->srq, &wr, &bad)) {
        mux_wrtab_unpost(t->wt, id);
        return false;
    }
    return true;
}

static void release_frame(verbs_transport *t, int peer, vframe *f)
{
    if (f->ctrl)
        mux_msg_release(f->m);
    else
        t->sink.tx_done(t->sink.arg, peer, f->m);
}

static void drained_send(void *arg, const mux_wr *wr)
{
    verbs_transport *t = arg;
    vframe f = {.m = wr->m, .ctrl = wr->m->pool == t->ctrl};
    release_frame(t, wr->peer, &f);
}

static void peer_down(verbs_transport *t, vpeer *p, sto_status why)
{
    if (!p->up && !p->connecting && !p->id) {
        sto_status_free(why);
        return;
    }
    bool was_up = p->up;
    p->up = false;
    p->connecting = false;
    while (p->qcount) {
        release_frame(t, p->rank, &p->q[p->qhead]);
        p->qhead = (p->qhead + 1) % p->qcap;
        p->qcount--;
    }
    mux_wrtab_drain(t->wt, p->rank, drained_send, t);
    if (p->id) {
        rdma_disconnect(p->id);
        if (p->id->qp) rdma_destroy_qp(p->id);
        rdma_destroy_id(p->id);
        p->id = NULL;
    }
    if (why && was_up)
        t->sink.peer_failed(t->sink.arg, p->rank, why);
    else
        sto_status_free(why);
}

static void post_sends(verbs_transport *t, vpeer *p)
{
    while (p->up && p->qcount) {
        vframe *f = &p->q[p->qhead];
        uint32_t lkey;
        if (!mux_regcache_lookup(t->rc, f->m->frame, f->len, &lkey)) {
            peer_down(t, p, peer_error(t, p->rank, "message buffer is not registered"));
            return;
        }
        mux_wr w = {.peer = p->rank, .kind = MUX_WR_SEND, .m = f->m};
        uint64_t id;
        if (!mux_wrtab_post(t->wt, &w, &id)) return; /* queue pair full: after completions */
        struct ibv_sge sge = {.addr = (uintptr_t)f->m->frame, .length = f->len, .lkey = lkey};
        struct ibv_send_wr wr = {.wr_id = id,
                                 .sg_list = &sge,
                                 .num_sge = 1,
                                 .opcode = IBV_WR_SEND,
                                 .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        int rc = ibv_post_send(p->id->qp, &wr, &bad);
        if (rc) {
            mux_wrtab_unpost(t->wt, id);
            char what[128];
            snprintf(what, sizeof what, "ibv_post_send failed: %s", strerror(rc));
            peer_down(t, p, peer_error(t, p->rank, what));
            return;
        }
        p->qhead = (p->qhead + 1) % p->qcap;
        p->qcount--;
    }
}

static sto_status verbs_send(mux_transport *base, int peer, const mux_wire_hdr *h, mux_msg *m,
                             const void *payload)
{
    verbs_transport *t = (verbs_transport *)base;
    vpeer *p = &t->peers[peer];
    vframe f = {.m = m, .len = MUX_WIRE_HDR_SIZE + h->len};
    if (!p->up) {
        if (m) t->sink.tx_done(t->sink.arg, peer, m);
        return peer_error(t, peer, "is not connected");
    }
    if (!m) {
        f.m = mux_pool_try_get(t->ctrl);
        if (!f.m) return sto_error(STO_OUT_OF_MEMORY, "out of control-frame buffers");
        f.ctrl = true;
        mux_wire_encode(h, f.m->frame);
        if (h->len) memcpy(f.m->data, payload, h->len);
    }
    if (p->qcount == p->qcap) {
        size_t cap = p->qcap ? 2 * p->qcap : 16;
        vframe *r = malloc(cap * sizeof *r);
        if (!r) {
            release_frame(t, peer, &f);
            return sto_error_oom();
        }
        for (size_t i = 0; i < p->qcount; i++)
            r[i] = p->q[(p->qhead + i) % p->qcap];
        free(p->q);
        p->q = r;
        p->qcap = cap;
        p->qhead = 0;
    }
    p->q[(p->qhead + p->qcount) % p->qcap] = f;
    p->qcount++;
    post_sends(t, p);
    return STO_OK;
}

static size_t verbs_backlog(mux_transport *base, int peer)
{
    verbs_transport *t = (verbs_transport *)base;
    return t->peers[peer].qcount + (size_t)mux_wrtab_outstanding(t->wt, peer);
}

/* ---- completions ------------------------------------------------------------- */

static vpeer *peer_by_qp(verbs_transport *t, uint32_t qp_num)
{
    for (int i = 0; i < t->n; i++)
        if (t->peers[i].id && t->peers[i].id->qp && t->peers[i].id->qp->qp_num == qp_num)
            return &t->peers[i];
    return NULL;
}

static void on_recv(verbs_transport *t, const struct ibv_wc *wc, mux_msg *m)
{
    vpeer *p = peer_by_qp(t, wc->qp_num);
    if (!p || !p->up) { /* a late frame of a closed connection */
        if (!post_recv(t, m)) mux_msg_release(m);
        return;
    }
    mux_wire_hdr h;
    sto_status st = mux_wire_decode(m->frame, t->cfg.max_data, &h);
    if (!st && (h.sender != (uint32_t)p->rank || MUX_WIRE_HDR_SIZE + h.len != wc->byte_len))
        st = sto_error(STO_PROTOCOL_VIOLATION, "frame length or sender does not match");
    mux_msg *repl = NULL;
    if (!st && h.type == MUX_FRAME_DATA && h.len > 0) {
        repl = t->sink.rx_buffer(t->sink.arg, p->rank, &h);
        if (!repl) st = sto_error(STO_PROTOCOL_VIOLATION, "data frame beyond the granted credits");
    }
    if (st) {
        if (!post_recv(t, m)) mux_msg_release(m);
        const mux_endpoint *ep = ep_of(t, p->rank);
        mux_logf(t->cfg.log, t->cfg.log_arg, "mux[%d]: closing connection to server %d (%s:%s): %s",
                 t->rank, p->rank, ep->host, ep->port, st->message);
        peer_down(t, p,
                  sto_status_wrap(st, "malformed frame from server %d (%s:%s)", p->rank, ep->host,
                                  ep->port));
        return;
    }
    if (h.type == MUX_FRAME_BYE) p->bye = true;
    if (repl) {
        if (!post_recv(t, repl)) mux_msg_release(repl);
        t->sink.rx_frame(t->sink.arg, p->rank, &h, m, NULL);
        return;
    }
    t->sink.rx_frame(t->sink.arg, p->rank, &h, NULL, m->data);
    if (!post_recv(t, m)) mux_msg_release(m);
}

static void drain_cq(verbs_transport *t)
{
    struct ibv_wc wc[32];
    int k;
    while ((k = ibv_poll_cq(t->cq, 32, wc)) > 0) {
        for (int i = 0; i < k; i++) {
            mux_wr wr;
            if (!mux_wrtab_complete(t->wt, wc[i].wr_id, &wr)) {
                mux_logf(t->cfg.log, t->cfg.log_arg, "mux[%d]: completion for unknown request",
                         t->rank);
                continue;
            }
            if (wr.kind == MUX_WR_RECV) {
                if (wc[i].status == IBV_WC_SUCCESS)
                    on_recv(t, &wc[i], wr.m);
                else
                    mux_msg_release(wr.m); /* flushed at shutdown */
                continue;
            }
            vpeer *p = &t->peers[wr.peer];
            vframe f = {.m = wr.m, .ctrl = wr.m->pool == t->ctrl};
            release_frame(t, wr.peer, &f);
            if (wc[i].status != IBV_WC_SUCCESS) {
                char what[160];
                snprintf(what, sizeof what, "send failed: %s", ibv_wc_status_str(wc[i].status));
                peer_down(t, p, p->bye ? NULL : peer_error(t, p->rank, what));
                continue;
            }
            post_sends(t, p);
        }
    }
}

/* ---- connection management ---------------------------------------------- */

static sto_status create_qp(verbs_transport *t, struct rdma_cm_id *id)
{
    struct ibv_qp_init_attr a = {.send_cq = t->cq,
                                 .recv_cq = t->cq,
                                 .srq = t->srq,
                                 .qp_type = IBV_QPT_RC,
                                 .cap = {.max_send_wr = SEND_DEPTH, .max_send_sge = 1}};
    if (rdma_create_qp(id, t->pd, &a))
        return sto_error(STO_CONNECTION_FAILURE, "rdma_create_qp: %s", strerror(errno));
    return STO_OK;
}

static void start_connect(verbs_transport *t, vpeer *p)
{
    const mux_endpoint *ep = ep_of(t, p->rank);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    p->retry_at = mux_now_ms() + RETRY_MS;
    if (getaddrinfo(ep->host, ep->port, &hints, &ai)) return;
    if (rdma_create_id(t->ec, &p->id, p, RDMA_PS_TCP) == 0 &&
        rdma_resolve_addr(p->id, NULL, ai->ai_addr, RESOLVE_MS) == 0)
        p->connecting = true;
    else if (p->id) {
        rdma_destroy_id(p->id);
        p->id = NULL;
    }
    freeaddrinfo(ai);
}

static void retry_later(vpeer *p)
{
    if (p->id) {
        if (p->id->qp) rdma_destroy_qp(p->id);
        rdma_destroy_id(p->id);
    }
    p->id = NULL;
    p->connecting = false;
    p->retry_at = mux_now_ms() + RETRY_MS;
}

/* Handles one rdma_cm event; returns 1 when a peer came up. */
static int on_cm_event(verbs_transport *t, struct rdma_cm_event *ev)
{
    struct rdma_cm_id *id = ev->id;
    vpeer *p = id->context;
    int up = 0;
    uint8_t hello[HELLO_BYTES];
    switch (ev->event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (rdma_resolve_route(id, RESOLVE_MS)) retry_later(p);
        break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        sto_status st = create_qp(t, id);
        if (st) {
            sto_status_free(st);
            retry_later(p);
            break;
        }
        encode_hello(t, hello);
        struct rdma_conn_param cp = {.private_data = hello,
                                     .private_data_len = HELLO_BYTES,
                                     .retry_count = 7,
                                     .rnr_retry_count = 7};
        if (rdma_connect(id, &cp)) retry_later(p);
        break;
    }
    case RDMA_CM_EVENT_CONNECT_REQUEST: {
        int rank = -1;
        sto_status st =
            check_hello(t, ev->param.conn.private_data, ev->param.conn.private_data_len, &rank);
        if (!st && (rank < t->rank || t->peers[rank].up || t->peers[rank].id))
            st = sto_error(STO_PROTOCOL_VIOLATION, "unexpected connection from rank %d", rank);
        if (!st) st = create_qp(t, id);
        if (st) {
            mux_logf(t->cfg.log, t->cfg.log_arg, "mux[%d]: rejecting RDMA connection: %s", t->rank,
                     st->message);
            sto_status_free(st);
            rdma_reject(id, NULL, 0);
            rdma_destroy_id(id);
            break;
        }
        vpeer *np = &t->peers[rank];
        id->context = np;
        np->id = id;
        np->connecting = true;
        encode_hello(t, hello);
        struct rdma_conn_param cp = {.private_data = hello,
                                     .private_data_len = HELLO_BYTES,
                                     .retry_count = 7,
                                     .rnr_retry_count = 7};
        if (rdma_accept(id, &cp)) {
            rdma_destroy_qp(id);
            rdma_destroy_id(id);
            np->id = NULL;
            np->connecting = false;
        }
        break;
    }
    case RDMA_CM_EVENT_ESTABLISHED: {
        if (!p) break;
        if (p->rank < t->rank) { /* we connected: check the answer */
            int rank = -1;
            sto_status st =
                check_hello(t, ev->param.conn.private_data, ev->param.conn.private_data_len, &rank);
            if (!st && rank != p->rank)
                st = sto_error(STO_PROTOCOL_VIOLATION, "expected rank %d, got %d", p->rank, rank);
            if (st) {
                mux_logf(t->cfg.log, t->cfg.log_arg, "mux[%d]: closing connection to server %d: %s",
                         t->rank, p->rank, st->message);
                sto_status_free(st);
                rdma_disconnect(id);
                retry_later(p);
                break;
            }
        }
        p->connecting = false;
        p->up = true;
        up = 1;
        break;
    }
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
        if (p && !p->up) {
            if (p->rank < t->rank)
                retry_later(p);
            else
                peer_down(t, p, NULL);
        }
        break;
    case RDMA_CM_EVENT_DISCONNECTED:
        if (p && p->up)
            peer_down(t, p, p->bye ? NULL : peer_error(t, p->rank, "closed the connection"));
        break;
    default:
        break;
    }
    return up;
}

static int cm_events(verbs_transport *t)
{
    int up = 0;
    struct rdma_cm_event *ev;
    while (rdma_get_cm_event(t->ec, &ev) == 0) {
        /* The event must be acked before its id may be destroyed; copy it. */
        struct rdma_cm_event copy = *ev;
        uint8_t pd[256];
        if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
            size_t len = ev->param.conn.private_data_len;
            if (len > sizeof pd) len = sizeof pd;
            memcpy(pd, ev->param.conn.private_data, len);
            copy.param.conn.private_data = pd;
            copy.param.conn.private_data_len = (uint8_t)len;
        }
        rdma_ack_cm_event(ev);
        up += on_cm_event(t, &copy);
    }
    return up;
}

/* ---- poll / wake / destroy ------------------------------------------------- */

static sto_status verbs_poll(mux_transport *base, int timeout_ms)
{
    verbs_transport *t = (verbs_transport *)base;
    drain_cq(t);
    struct epoll_event ev[8];
    int k = epoll_wait(t->epfd, ev, 8, timeout_ms);
    if (k < 0 && errno != EINTR) return sto_error(STO_IO_ERROR, "epoll_wait: %s", strerror(errno));
    for (int i = 0; i < k; i++) {
        int kind = *(int *)ev[i].data.ptr;
        if (kind == KIND_WAKE) {
            uint64_t v;
            if (read(t->wakefd, &v, sizeof v) < 0) { /* already drained */
            }
        } else if (kind == KIND_CM) {
            cm_events(t);
        } else {
            struct ibv_cq *cq;
            void *ctx;
            if (ibv_get_cq_event(t->cc, &cq, &ctx) == 0) {
                ibv_ack_cq_events(cq, 1);
                ibv_req_notify_cq(cq, 0);
            }
            drain_cq(t); /* also catches completions that raced the re-arm */
        }
    }
    return STO_OK;
}

static void verbs_wake(mux_transport *base)
{
    verbs_transport *t = (verbs_transport *)base;
    uint64_t one = 1;
    if (write(t->wakefd, &one, sizeof one) < 0) { /* a wake is pending anyway */
    }
}

static void drained_recv(void *arg, const mux_wr *wr)
{
    mux_msg_release(wr->m);
}

static void verbs_destroy(mux_transport *base)
{
    verbs_transport *t = (verbs_transport *)base;
    if (!t) return;
    for (int i = 0; t->peers && i < t->n; i++) {
        if (i == t->rank) continue;
        peer_down(t, &t->peers[i], NULL);
        free(t->peers[i].q);
    }
    if (t->wt) mux_wrtab_drain(t->wt, -1, drained_recv, t);
    if (t->srq) ibv_destroy_srq(t->srq);
    if (t->cq) ibv_destroy_cq(t->cq);
    if (t->cc) ibv_destroy_comp_channel(t->cc);
    mux_regcache_destroy(t->rc);
    if (t->pd) ibv_dealloc_pd(t->pd);
    if (t->listen_id) rdma_destroy_id(t->listen_id);
    if (t->ec) rdma_destroy_event_channel(t->ec);
    mux_wrtab_destroy(t->wt);
    mux_pool_destroy(t->ctrl);
    if (t->epfd >= 0) close(t->epfd);
    if (t->wakefd >= 0) close(t->wakefd);
    free(t->peers);
    free(t);
}

static const mux_transport_ops verbs_ops = {
    .name = "verbs",
    .send = verbs_send,
    .backlog = verbs_backlog,
    .poll = verbs_poll,
    .wake = verbs_wake,
    .destroy = verbs_destroy,
};

/* ---- setup ------------------------------------------------------------------ */

static sto_status setup_device(verbs_transport *t)
{
    const mux_endpoint *ep = ep_of(t, t->rank);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    t->ec = rdma_create_event_channel();
    if (!t->ec)
        return sto_error(STO_CONNECTION_FAILURE, "rdma_create_event_channel: %s", strerror(errno));
    /* cm_events reads until EAGAIN, during setup and after. */
    int fl = fcntl(t->ec->fd, F_GETFL);
    fcntl(t->ec->fd, F_SETFL, fl | O_NONBLOCK);
    if (rdma_create_id(t->ec, &t->listen_id, NULL, RDMA_PS_TCP))
        return sto_error(STO_CONNECTION_FAILURE, "rdma_create_id: %s", strerror(errno));
    if (getaddrinfo(ep->host, ep->port, &hints, &ai))
        return sto_error(STO_CONNECTION_FAILURE, "cannot resolve %s:%s", ep->host, ep->port);
    int rc = rdma_bind_addr(t->listen_id, ai->ai_addr);
    freeaddrinfo(ai);
    if (rc || rdma_listen(t->listen_id, 64))
        return sto_error(STO_CONNECTION_FAILURE, "server %d cannot listen on %s:%s: %s", t->rank,
                         ep->host, ep->port, strerror(errno));
    t->ctx = t->listen_id->verbs;
    if (!t->ctx)
        return sto_error(STO_CONNECTION_FAILURE,
                         "%s:%s is not an address of an RDMA device; use --transport tcp", ep->host,
                         ep->port);
    t->pd = ibv_alloc_pd(t->ctx);
    t->cc = t->pd ? ibv_create_comp_channel(t->ctx) : NULL;
    int cqe = t->srq_depth + (t->n - 1) * SEND_DEPTH + 16;
    t->cq = t->cc ? ibv_create_cq(t->ctx, cqe, NULL, t->cc, 0) : NULL;
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = (uint32_t)t->srq_depth, .max_sge = 1}};
    t->srq = t->cq ? ibv_create_srq(t->pd, &sa) : NULL;
    if (!t->srq || ibv_req_notify_cq(t->cq, 0))
        return sto_error(STO_CONNECTION_FAILURE, "cannot set up the RDMA device: %s",
                         strerror(errno));
    mux_reg_ops ops = {.ctx = t->pd, .reg = reg_mr, .dereg = dereg_mr};
    STO_TRY(mux_regcache_create(&ops, &t->rc));
    for (int i = 0; i < t->cfg.npools; i++) {
        size_t bytes;
        void *slab = mux_pool_slab(t->cfg.pools[i], &bytes);
        STO_TRY(mux_regcache_add(t->rc, slab, bytes));
    }
    size_t bytes;
    void *slab = mux_pool_slab(t->ctrl, &bytes);
    STO_TRY(mux_regcache_add(t->rc, slab, bytes));
    for (int i = 0; i < t->srq_depth; i++) {
        mux_msg *m = t->sink.rx_spare(t->sink.arg);
        if (!m) return sto_error(STO_OUT_OF_MEMORY, "no receive buffer for the shared queue");
        if (!post_recv(t, m)) {
            mux_msg_release(m);
            return sto_error(STO_CONNECTION_FAILURE, "ibv_post_srq_recv failed");
        }
    }
    return STO_OK;
}

static sto_status connect_all(verbs_transport *t)
{
    int64_t deadline = mux_now_ms() + t->cfg.connect_timeout_ms;
    int missing = t->n - 1;
    while (missing > 0) {
        int64_t now = mux_now_ms();
        if (now > deadline)
            return sto_error(STO_CONNECTION_FAILURE,
                             "server %d: not all servers connected within %d ms", t->rank,
                             t->cfg.connect_timeout_ms);
        for (int j = 0; j < t->rank; j++) {
            vpeer *p = &t->peers[j];
            if (!p->up && !p->connecting && now >= p->retry_at) start_connect(t, p);
        }
        struct pollfd pf = {.fd = t->ec->fd, .events = POLLIN};
        if (poll(&pf, 1, RETRY_MS) > 0) missing -= cm_events(t);
    }
    return STO_OK;
}

sto_status mux_verbs_open(const mux_transport_cfg *cfg, const mux_transport_sink *sink,
                          mux_transport **out)
{
    *out = NULL;
    int ndev = 0;
    struct ibv_device **devs = ibv_get_device_list(&ndev);
    if (devs) ibv_free_device_list(devs);
    if (!devs || ndev == 0)
        return sto_error(STO_CONNECTION_FAILURE, "no RDMA device found; use --transport tcp");
    if (!sink->rx_spare || cfg->spare_recv < 1)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "verbs needs spare receive buffers");
    verbs_transport *t = calloc(1, sizeof *t);
    if (!t) return sto_error_oom();
    t->base.ops = &verbs_ops;
    t->cfg = *cfg;
    t->sink = *sink;
    t->n = cfg->cluster->n;
    t->rank = cfg->rank;
    t->srq_depth = cfg->spare_recv;
    t->epfd = t->wakefd = -1;
    t->kind_cm = KIND_CM;
    t->kind_cq = KIND_CQ;
    t->kind_wake = KIND_WAKE;
    sto_status st = STO_OK;
    t->peers = calloc((size_t)t->n, sizeof *t->peers);
    if (!t->peers) {
        st = sto_error_oom();
        goto fail;
    }
    for (int i = 0; i < t->n; i++)
        t->peers[i].rank = i;
    st = mux_pool_create(CTRL_BUFFERS, MUX_WIRE_CTRL_MAX, -1, &t->ctrl);
    if (!st) st = mux_wrtab_create(t->srq_depth + t->n * SEND_DEPTH, t->n, SEND_DEPTH, &t->wt);
    if (!st) st = setup_device(t);
    if (!st) st = connect_all(t);
    if (st) goto fail;
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    t->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (t->epfd < 0 || t->wakefd < 0) {
        st = sto_error(STO_IO_ERROR, "epoll/eventfd: %s", strerror(errno));
        goto fail;
    }
    /* The completion channel is read until EAGAIN after epoll's wake-ups. */
    int fl = fcntl(t->cc->fd, F_GETFL);
    fcntl(t->cc->fd, F_SETFL, fl | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &t->kind_cm};
    epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->ec->fd, &ev);
    ev.data.ptr = &t->kind_cq;
    epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->cc->fd, &ev);
    ev.data.ptr = &t->kind_wake;
    epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->wakefd, &ev);
    *out = &t->base;
    return STO_OK;
fail:
    verbs_destroy(&t->base);
    return st;
}
