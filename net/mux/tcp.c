/*
 * tcp.c — the TCP transport: one non-blocking socket per peer, one epoll.
 *
 * Setup (mux_tcp_open): rank i listens on its cluster-file port, connects to
 * every rank below it and accepts every rank above it, retrying refused
 * connects until all peers are up or the connect timeout passes. The first
 * frame on each connection is a hello carrying the cluster id, the sender's
 * rank and the cluster size; the acceptor checks it and answers with its own.
 * Anything else — garbage, a wrong version, a hello from another cluster —
 * gets the connection closed and a log line, and setup goes on.
 *
 * After setup the listening socket stays open so that late or stray
 * connections are read, judged and closed with a log line instead of piling
 * up in the backlog.
 *
 * Sending: frames wait in a per-peer ring and go out with sendmsg (several
 * frames per call); EPOLLOUT is armed only while a socket is full. Data
 * frames go out straight from the pool message (header room + payload, one
 * contiguous buffer). Receiving: the 32-byte header is read first and
 * checked, then the payload is read directly into a pool buffer the
 * multiplexer provides (data) or into a small buffer (control).
 */
#include "net/mux/clock.h"
#include "net/mux/transport.h"
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { KIND_LISTEN = 1, KIND_WAKE, KIND_PEER, KIND_STRAY };

#define HELLO_BYTES   (MUX_WIRE_HDR_SIZE + 4)
#define STRAY_WAIT_MS 5000
#define READ_BUDGET   (8u << 20) /* bytes read from one peer per poll */
#define RETRY_MS      20

typedef struct tx_entry {
    mux_msg *m;                     /* data frame, or NULL for control */
    uint8_t hdr[MUX_WIRE_HDR_SIZE]; /* control frames' header */
    uint8_t *ctrl;                  /* control payload (malloc'd) */
    size_t total, off;
} tx_entry;

typedef struct tcp_peer {
    int kind; /* KIND_PEER; epoll data points here */
    int rank, fd;
    bool up, bye, want_out;
    tx_entry *tx; /* ring */
    size_t txcap, txhead, txcount;
    /* receive state */
    uint8_t hdr[MUX_WIRE_HDR_SIZE];
    size_t hgot;
    mux_wire_hdr h;
    bool in_payload;
    uint8_t *dst;
    size_t need, got;
    mux_msg *rxm;
    uint8_t ctrl[MUX_WIRE_CTRL_MAX];
} tcp_peer;

typedef struct stray {
    int kind; /* KIND_STRAY */
    int fd;
    uint8_t buf[HELLO_BYTES];
    size_t got;
    char addr[80];
    int64_t since_ms;
    struct stray *next;
} stray;

typedef struct tcp_transport {
    mux_transport base;
    mux_transport_cfg cfg;
    mux_transport_sink sink;
    int n, rank;
    int epfd, lfd, wakefd;
    int listen_kind, wake_kind;
    tcp_peer *peers;
    stray *strays;
} tcp_transport;

static const mux_endpoint *ep_of(tcp_transport *t, int rank)
{
    return &t->cfg.cluster->ep[rank];
}

static void format_addr(const struct sockaddr_storage *sa, char *out, size_t len)
{
    char host[64] = "?", port[16] = "?";
    getnameinfo((const struct sockaddr *)sa, sizeof *sa, host, sizeof host, port, sizeof port,
                NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out, len, "%s:%s", host, port);
}

/* Large buffers keep a 512 KB message in flight per syscall; NODELAY keeps
 * the small sync and credit frames from waiting behind Nagle. */
static void tune_socket(tcp_transport *t, int fd)
{
    int one = 1, buf = t->cfg.socket_buffer;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (buf > 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    }
}

static void encode_hello(tcp_transport *t, uint8_t out[HELLO_BYTES])
{
    mux_wire_hdr h = {
        .type = MUX_FRAME_HELLO, .sender = (uint32_t)t->rank, .len = 4, .aux = t->cfg.cluster->id};
    mux_wire_encode(&h, out);
    uint32_t n = (uint32_t)t->n;
    for (int i = 0; i < 4; i++)
        out[MUX_WIRE_HDR_SIZE + i] = (uint8_t)(n >> (8 * i));
}

/* Checks a received hello; *rank gets the sender's rank. */
static sto_status check_hello(tcp_transport *t, const uint8_t in[HELLO_BYTES], int *rank)
{
    mux_wire_hdr h;
    STO_TRY(mux_wire_decode(in, 0, &h));
    if (h.type != MUX_FRAME_HELLO || h.len != 4)
        return sto_error(STO_PROTOCOL_VIOLATION, "expected a hello frame, got %s",
                         mux_frame_type_name(h.type));
    if (h.aux != t->cfg.cluster->id)
        return sto_error(STO_PROTOCOL_VIOLATION,
                         "hello from another cluster (id %016llx, expected %016llx)",
                         (unsigned long long)h.aux, (unsigned long long)t->cfg.cluster->id);
    const uint8_t *p = in + MUX_WIRE_HDR_SIZE;
    uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (n != (uint32_t)t->n)
        return sto_error(STO_PROTOCOL_VIOLATION, "hello for a cluster of %u servers (expected %d)",
                         n, t->n);
    if (h.sender >= (uint32_t)t->n || h.sender == (uint32_t)t->rank)
        return sto_error(STO_PROTOCOL_VIOLATION, "hello from invalid rank %u", h.sender);
    *rank = (int)h.sender;
    return STO_OK;
}

/* Reads into buf until `want` bytes are there. 1 = complete, 0 = not yet,
 * -1 = closed or failed (errno kept; 0 for end of stream). */
static int read_some(int fd, uint8_t *buf, size_t *got, size_t want)
{
    while (*got < want) {
        ssize_t r = read(fd, buf + *got, want - *got);
        if (r > 0) {
            *got += (size_t)r;
            continue;
        }
        if (r == 0) {
            errno = 0;
            return -1;
        }
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
    return 1;
}

/* ---- sending ------------------------------------------------------------- */

static void complete_entry(tcp_transport *t, tcp_peer *p, tx_entry *e)
{
    if (e->m)
        t->sink.tx_done(t->sink.arg, p->rank, e->m);
    else
        free(e->ctrl);
    e->m = NULL;
    e->ctrl = NULL;
}

static void set_events(tcp_transport *t, tcp_peer *p, bool out)
{
    if (p->want_out == out || p->fd < 0) return;
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = p};
    epoll_ctl(t->epfd, EPOLL_CTL_MOD, p->fd, &ev);
    p->want_out = out;
}

static void peer_down(tcp_transport *t, tcp_peer *p, sto_status why)
{
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    p->up = false;
    while (p->txcount) {
        complete_entry(t, p, &p->tx[p->txhead]);
        p->txhead = (p->txhead + 1) % p->txcap;
        p->txcount--;
    }
    if (p->rxm) mux_msg_release(p->rxm);
    p->rxm = NULL;
    if (why) t->sink.peer_failed(t->sink.arg, p->rank, why);
}

static sto_status peer_error(tcp_transport *t, tcp_peer *p, const char *what, int err)
{
    const mux_endpoint *ep = ep_of(t, p->rank);
    if (err == 0)
        return sto_error(STO_CONNECTION_FAILURE, "server %d (%s:%s) closed the connection", p->rank,
                         ep->host, ep->port);
    return sto_error(STO_CONNECTION_FAILURE, "server %d (%s:%s): %s: %s", p->rank, ep->host,
                     ep->port, what, strerror(err));
}

static void flush_peer(tcp_transport *t, tcp_peer *p)
{
    while (p->txcount && p->fd >= 0) {
        struct iovec iov[64];
        int k = 0;
        for (size_t i = 0; i < p->txcount && k < 62; i++) {
            tx_entry *e = &p->tx[(p->txhead + i) % p->txcap];
            size_t off = e->off;
            if (e->m) {
                iov[k++] = (struct iovec){e->m->frame + off, e->total - off};
                continue;
            }
            if (off < MUX_WIRE_HDR_SIZE) {
                iov[k++] = (struct iovec){e->hdr + off, MUX_WIRE_HDR_SIZE - off};
                off = MUX_WIRE_HDR_SIZE;
            }
            if (e->total > off)
                iov[k++] = (struct iovec){e->ctrl + (off - MUX_WIRE_HDR_SIZE), e->total - off};
        }
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t w = sendmsg(p->fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                set_events(t, p, true);
                return;
            }
            /* After a goodbye the peer may close first; that is no failure. */
            peer_down(t, p, p->bye ? NULL : peer_error(t, p, "send", errno));
            return;
        }
        size_t left = (size_t)w;
        while (left && p->txcount) {
            tx_entry *e = &p->tx[p->txhead];
            size_t part = e->total - e->off < left ? e->total - e->off : left;
            e->off += part;
            left -= part;
            if (e->off == e->total) {
                complete_entry(t, p, e);
                p->txhead = (p->txhead + 1) % p->txcap;
                p->txcount--;
            }
        }
    }
    set_events(t, p, false);
}

static sto_status tcp_send(mux_transport *base, int peer, const mux_wire_hdr *h, mux_msg *m,
                           const void *ctrl)
{
    tcp_transport *t = (tcp_transport *)base;
    tcp_peer *p = &t->peers[peer];
    if (!p->up) {
        if (m) t->sink.tx_done(t->sink.arg, peer, m);
        const mux_endpoint *ep = ep_of(t, peer);
        return sto_error(STO_CONNECTION_FAILURE, "server %d (%s:%s) is not connected", peer,
                         ep->host, ep->port);
    }
    if (p->txcount == p->txcap) {
        size_t cap = p->txcap ? 2 * p->txcap : 16;
        tx_entry *r = malloc(cap * sizeof *r);
        if (!r) {
            if (m) t->sink.tx_done(t->sink.arg, peer, m);
            return sto_error_oom();
        }
        for (size_t i = 0; i < p->txcount; i++)
            r[i] = p->tx[(p->txhead + i) % p->txcap];
        free(p->tx);
        p->tx = r;
        p->txcap = cap;
        p->txhead = 0;
    }
    tx_entry e = {.m = m, .total = MUX_WIRE_HDR_SIZE + h->len};
    if (!m) {
        mux_wire_encode(h, e.hdr);
        if (h->len) {
            e.ctrl = malloc(h->len);
            if (!e.ctrl) return sto_error_oom();
            memcpy(e.ctrl, ctrl, h->len);
        }
    }
    p->tx[(p->txhead + p->txcount) % p->txcap] = e;
    p->txcount++;
    if (!p->want_out) flush_peer(t, p);
    return STO_OK;
}

static size_t tcp_backlog(mux_transport *base, int peer)
{
    return ((tcp_transport *)base)->peers[peer].txcount;
}

/* ---- receiving ----------------------------------------------------------- */

static void deliver(tcp_transport *t, tcp_peer *p)
{
    mux_msg *m = p->rxm;
    p->rxm = NULL;
    p->in_payload = false;
    p->hgot = 0;
    t->sink.rx_frame(t->sink.arg, p->rank, &p->h, m, m ? NULL : p->ctrl);
}

static void read_peer(tcp_transport *t, tcp_peer *p)
{
    size_t budget = READ_BUDGET;
    while (p->up && budget) {
        if (!p->in_payload) {
            int r = read_some(p->fd, p->hdr, &p->hgot, MUX_WIRE_HDR_SIZE);
            if (r == 0) return;
            if (r < 0) {
                if (errno == 0 && p->bye)
                    peer_down(t, p, NULL);
                else
                    peer_down(t, p, peer_error(t, p, "receive", errno));
                return;
            }
            sto_status st = mux_wire_decode(p->hdr, t->cfg.max_data, &p->h);
            if (!st && p->h.sender != (uint32_t)p->rank)
                st = sto_error(STO_PROTOCOL_VIOLATION, "frame claims to come from rank %u",
                               p->h.sender);
            if (!st && p->h.type == MUX_FRAME_HELLO)
                st = sto_error(STO_PROTOCOL_VIOLATION, "hello after setup");
            if (!st && p->h.type == MUX_FRAME_DATA && p->h.len > 0) {
                p->rxm = t->sink.rx_buffer(t->sink.arg, p->rank, &p->h);
                if (!p->rxm)
                    st = sto_error(STO_PROTOCOL_VIOLATION, "data frame beyond the granted credits");
            }
            if (st) {
                const mux_endpoint *ep = ep_of(t, p->rank);
                mux_logf(t->cfg.log, t->cfg.log_arg,
                         "mux[%d]: closing connection to server %d (%s:%s): %s", t->rank, p->rank,
                         ep->host, ep->port, st->message);
                peer_down(t, p,
                          sto_status_wrap(st, "malformed frame from server %d (%s:%s)", p->rank,
                                          ep->host, ep->port));
                return;
            }
            if (p->h.type == MUX_FRAME_BYE) p->bye = true;
            p->in_payload = true;
            p->dst = p->rxm ? p->rxm->data : p->ctrl;
            p->need = p->h.len;
            p->got = 0;
        }
        size_t before = p->got;
        int r = read_some(p->fd, p->dst, &p->got, p->need);
        budget -= budget < p->got - before ? budget : p->got - before;
        if (r == 0) return;
        if (r < 0) {
            peer_down(t, p, peer_error(t, p, "receive", errno));
            return;
        }
        deliver(t, p);
    }
}

/* ---- strays: connections after setup ------------------------------------- */

static void stray_close(tcp_transport *t, stray *s, const char *why)
{
    mux_logf(t->cfg.log, t->cfg.log_arg, "mux[%d]: closing connection from %s: %s", t->rank,
             s->addr, why);
    close(s->fd);
    for (stray **pp = &t->strays; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    free(s);
}

static void accept_strays(tcp_transport *t)
{
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(t->lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        stray *s = calloc(1, sizeof *s);
        if (!s) {
            close(fd);
            continue;
        }
        s->kind = KIND_STRAY;
        s->fd = fd;
        s->since_ms = mux_now_ms();
        format_addr(&sa, s->addr, sizeof s->addr);
        s->next = t->strays;
        t->strays = s;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
        epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev);
    }
}

static void read_stray(tcp_transport *t, stray *s)
{
    int r = read_some(s->fd, s->buf, &s->got, HELLO_BYTES);
    if (r == 0 && s->got < MUX_WIRE_HDR_SIZE) return;
    if (r < 0 && s->got < MUX_WIRE_HDR_SIZE) {
        stray_close(t, s, "closed before sending a complete frame header");
        return;
    }
    mux_wire_hdr h;
    sto_status st = mux_wire_decode(s->buf, 0, &h);
    if (st) {
        stray_close(t, s, st->message);
        sto_status_free(st);
        return;
    }
    if (r == 0) return; /* a well-formed header; wait for the hello's payload */
    int rank = -1;
    st = r > 0 ? check_hello(t, s->buf, &rank) : NULL;
    char why[300];
    snprintf(why, sizeof why, "%s", st ? st->message : "unexpected connection after setup");
    if (!st && rank >= 0)
        snprintf(why, sizeof why, "unexpected hello from rank %d after setup", rank);
    sto_status_free(st);
    stray_close(t, s, why);
}

/* ---- poll ---------------------------------------------------------------- */

static sto_status tcp_poll(mux_transport *base, int timeout_ms)
{
    tcp_transport *t = (tcp_transport *)base;
    struct epoll_event ev[32];
    int k = epoll_wait(t->epfd, ev, 32, timeout_ms);
    if (k < 0) {
        if (errno == EINTR) return STO_OK;
        return sto_error(STO_IO_ERROR, "epoll_wait: %s", strerror(errno));
    }
    for (int i = 0; i < k; i++) {
        int kind = *(int *)ev[i].data.ptr;
        if (kind == KIND_WAKE) {
            uint64_t v;
            if (read(t->wakefd, &v, sizeof v) < 0) { /* drained by another wake */
            }
        } else if (kind == KIND_LISTEN) {
            accept_strays(t);
        } else if (kind == KIND_STRAY) {
            read_stray(t, ev[i].data.ptr);
        } else {
            tcp_peer *p = ev[i].data.ptr;
            if (p->up && (ev[i].events & EPOLLOUT)) flush_peer(t, p);
            if (p->up && (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) read_peer(t, p);
        }
    }
    int64_t now = mux_now_ms();
    for (stray *s = t->strays, *next; s; s = next) {
        next = s->next;
        if (now - s->since_ms > STRAY_WAIT_MS) stray_close(t, s, "no hello within 5 s");
    }
    return STO_OK;
}

static void tcp_wake(mux_transport *base)
{
    tcp_transport *t = (tcp_transport *)base;
    uint64_t one = 1;
    if (write(t->wakefd, &one, sizeof one) < 0) { /* counter full: a wake is pending anyway */
    }
}

static void tcp_destroy(mux_transport *base)
{
    tcp_transport *t = (tcp_transport *)base;
    if (!t) return;
    for (int i = 0; t->peers && i < t->n; i++) {
        if (i == t->rank) continue;
        peer_down(t, &t->peers[i], NULL);
        free(t->peers[i].tx);
    }
    while (t->strays)
        stray_close(t, t->strays, "shutting down");
    if (t->lfd >= 0) close(t->lfd);
    if (t->wakefd >= 0) close(t->wakefd);
    if (t->epfd >= 0) close(t->epfd);
    free(t->peers);
    free(t);
}

static const mux_transport_ops tcp_ops = {
    .name = "tcp",
    .send = tcp_send,
    .backlog = tcp_backlog,
    .poll = tcp_poll,
    .wake = tcp_wake,
    .destroy = tcp_destroy,
};

/* ---- setup --------------------------------------------------------------- */

static sto_status resolve(const mux_endpoint *ep, bool passive, struct addrinfo **out)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = passive ? AI_PASSIVE : 0};
    int rc = getaddrinfo(ep->host, ep->port, &hints, out);
    if (rc)
        return sto_error(STO_CONNECTION_FAILURE, "cannot resolve %s:%s: %s", ep->host, ep->port,
                         gai_strerror(rc));
    return STO_OK;
}

static sto_status open_listener(tcp_transport *t)
{
    const mux_endpoint *ep = ep_of(t, t->rank);
    struct addrinfo *ai;
    STO_TRY(resolve(ep, true, &ai));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    int err = 0;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0)
        err = errno;
    freeaddrinfo(ai);
    if (err) {
        if (fd >= 0) close(fd);
        return sto_error(STO_CONNECTION_FAILURE, "server %d cannot listen on %s:%s: %s", t->rank,
                         ep->host, ep->port, strerror(err));
    }
    t->lfd = fd;
    return STO_OK;
}

/* One connection being set up: outgoing (to a lower rank) or accepted. */
typedef struct pending {
    int fd;
    int rank;         /* the peer for outgoing; -1 until known for accepted */
    bool connecting;  /* outgoing, connect() in progress */
    bool hello_sent;  /* outgoing, waiting for the answer */
    int64_t retry_at; /* outgoing, not connected: when to try again */
    uint8_t buf[HELLO_BYTES];
    size_t got;
    char addr[80];
} pending;

static void pending_close(pending *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->got = 0;
    c->connecting = c->hello_sent = false;
}

static bool send_hello(tcp_transport *t, int fd)
{
    uint8_t hello[HELLO_BYTES];
    encode_hello(t, hello);
    return send(fd, hello, sizeof hello, MSG_NOSIGNAL) == (ssize_t)sizeof hello;
}

static void start_connect(tcp_transport *t, pending *c)
{
    const mux_endpoint *ep = ep_of(t, c->rank);
    struct addrinfo *ai;
    sto_status st = resolve(ep, false, &ai);
    if (st) {
        sto_status_free(st);
        c->retry_at = mux_now_ms() + RETRY_MS;
        return;
    }
    c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd >= 0) {
        tune_socket(t, c->fd);
        if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS)
            c->connecting = true;
        else
            pending_close(c);
    }
    freeaddrinfo(ai);
    if (c->fd < 0) c->retry_at = mux_now_ms() + RETRY_MS;
}

static void make_peer_up(tcp_transport *t, int rank, int fd)
{
    tcp_peer *p = &t->peers[rank];
    p->fd = fd;
    p->up = true;
}

static sto_status connect_all(tcp_transport *t)
{
    int n = t->n, r = t->rank;
    int nout = r, npend = nout;
    int cap = nout + 64;
    pending *pend = calloc((size_t)cap, sizeof *pend);
    struct pollfd *pfd = calloc((size_t)cap + 1, sizeof *pfd);
    sto_status st = STO_OK;
    if (!pend || !pfd) {
        st = sto_error_oom();
        goto done;
    }
    for (int j = 0; j < nout; j++)
        pend[j] = (pending){.fd = -1, .rank = j};
    int64_t deadline = mux_now_ms() + t->cfg.connect_timeout_ms;
    int missing = n - 1;
    while (missing > 0) {
        int64_t now = mux_now_ms();
        if (now > deadline) {
            char who[256] = "";
            size_t used = 0;
            for (int j = 0; j < n && used < sizeof who - 16; j++)
                if (j != r && !t->peers[j].up)
                    used += (size_t)snprintf(who + used, sizeof who - used, "%s%d",
                                             used ? ", " : "", j);
            st = sto_error(STO_CONNECTION_FAILURE,
                           "server %d: servers %s did not connect within %d ms", r, who,
                           t->cfg.connect_timeout_ms);
            goto done;
        }
        for (int j = 0; j < nout; j++)
            if (!t->peers[j].up && pend[j].fd < 0 && now >= pend[j].retry_at)
                start_connect(t, &pend[j]);
        int np = 0;
        pfd[np++] = (struct pollfd){.fd = t->lfd, .events = POLLIN};
        for (int i = 0; i < npend; i++)
            pfd[np++] =
                (struct pollfd){.fd = pend[i].fd, .events = pend[i].connecting ? POLLOUT : POLLIN};
        poll(pfd, (nfds_t)np, RETRY_MS);
        if (pfd[0].revents & POLLIN) {
            for (;;) {
                struct sockaddr_storage sa;
                socklen_t sl = sizeof sa;
                int fd = accept4(t->lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) break;
                if (npend == cap) {
                    close(fd);
                    break;
                }
                tune_socket(t, fd);
                pend[npend] = (pending){.fd = fd, .rank = -1};
                format_addr(&sa, pend[npend].addr, sizeof pend[npend].addr);
                npend++;
            }
        }
        for (int i = 0; i < npend && i + 1 < np; i++) {
            pending *c = &pend[i];
            short rev = pfd[i + 1].revents;
            if (c->fd < 0 || !rev) continue;
            if (c->connecting) {
                int err = 0;
                socklen_t el = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (err) { /* not listening yet: try again shortly */
                    pending_close(c);
                    c->retry_at = mux_now_ms() + RETRY_MS;
                    continue;
                }
                c->connecting = false;
                if (!send_hello(t, c->fd)) {
                    pending_close(c);
                    c->retry_at = mux_now_ms() + RETRY_MS;
                    continue;
                }
                c->hello_sent = true;
                continue;
            }
            int rr = read_some(c->fd, c->buf, &c->got, HELLO_BYTES);
            if (rr == 0) continue;
            int rank = -1;
            sto_status bad = rr < 0 ? sto_error(STO_PROTOCOL_VIOLATION, "closed during the hello")
                                    : check_hello(t, c->buf, &rank);
            bool outgoing = i < nout;
            if (!bad && outgoing && rank != c->rank)
                bad = sto_error(STO_PROTOCOL_VIOLATION, "expected rank %d, got rank %d", c->rank,
                                rank);
            if (!bad && !outgoing && (rank < r || t->peers[rank].up))
                bad = sto_error(STO_PROTOCOL_VIOLATION, "unexpected hello from rank %d", rank);
            if (!bad && !outgoing && !send_hello(t, c->fd))
                bad = sto_error(STO_CONNECTION_FAILURE, "cannot answer the hello");
            if (bad) {
                if (outgoing) {
                    mux_logf(t->cfg.log, t->cfg.log_arg,
                             "mux[%d]: closing connection to server %d (%s:%s): %s", r, c->rank,
                             ep_of(t, c->rank)->host, ep_of(t, c->rank)->port, bad->message);
                    pending_close(c);
                    c->retry_at = mux_now_ms() + 10 * RETRY_MS;
                } else {
                    mux_logf(t->cfg.log, t->cfg.log_arg, "mux[%d]: closing connection from %s: %s",
                             r, c->addr, bad->message);
                    pending_close(c);
                }
                sto_status_free(bad);
                continue;
            }
            make_peer_up(t, rank, c->fd);
            c->fd = -1;
            missing--;
        }
        /* Forget finished accepted slots so the array does not fill up. */
        int w = nout;
        for (int i = nout; i < npend; i++)
            if (pend[i].fd >= 0) pend[w++] = pend[i];
        npend = w;
    }
done:
    for (int i = 0; pend && i < npend; i++)
        pending_close(&pend[i]);
    free(pend);
    free(pfd);
    return st;
}

sto_status mux_tcp_open(const mux_transport_cfg *cfg, const mux_transport_sink *sink,
                        mux_transport **out)
{
    *out = NULL;
    tcp_transport *t = calloc(1, sizeof *t);
    if (!t) return sto_error_oom();
    t->base.ops = &tcp_ops;
    t->cfg = *cfg;
    t->sink = *sink;
    t->n = cfg->cluster->n;
    t->rank = cfg->rank;
    t->lfd = t->wakefd = t->epfd = -1;
    t->listen_kind = KIND_LISTEN;
    t->wake_kind = KIND_WAKE;
    sto_status st = STO_OK;
    t->peers = calloc((size_t)t->n, sizeof *t->peers);
    if (!t->peers) {
        st = sto_error_oom();
        goto fail;
    }
    for (int i = 0; i < t->n; i++)
        t->peers[i] = (tcp_peer){.kind = KIND_PEER, .rank = i, .fd = -1};
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    t->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (t->epfd < 0 || t->wakefd < 0) {
        st = sto_error(STO_IO_ERROR, "epoll/eventfd: %s", strerror(errno));
        goto fail;
    }
    st = open_listener(t);
    if (!st) st = connect_all(t);
    if (st) goto fail;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &t->listen_kind};
    epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->lfd, &ev);
    ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = &t->wake_kind};
    epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->wakefd, &ev);
    for (int i = 0; i < t->n; i++) {
        tcp_peer *p = &t->peers[i];
        if (i == t->rank) continue;
        ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = p};
        if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, p->fd, &ev) < 0) {
            st = sto_error(STO_IO_ERROR, "epoll_ctl: %s", strerror(errno));
            goto fail;
        }
    }
    *out = &t->base;
    return STO_OK;
fail:
    tcp_destroy(&t->base);
    return st;
}
