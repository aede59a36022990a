/*
 * test_mux_tcp.c — one multiplexer (rank 0 of a two-server cluster) against
 * a hand-driven peer: this test plays rank 1 over a raw socket, so it can
 * send exactly the frames it wants and see exactly what arrives.
 *
 * Proves: the hello handshake (and refusal of another cluster's hello), the
 * initial credit grant, end-of-stream across servers, that the sender never
 * exceeds the credits it was granted and that a worker waits for a free
 * message when credits and pool run out (backpressure), that a peer sending
 * beyond its credits or a corrupt header is cut off with a logged error
 * naming it, and that a hello with the wrong cluster id is refused.
 */
#include "net/mux/mux.h"
#include "net/mux/wire.h"
#include "test.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(fd, (struct sockaddr *)&a, sizeof a);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

typedef struct logbuf {
    pthread_mutex_t lock;
    char text[8192];
} logbuf;

static void log_to_buf(void *arg, const char *line)
{
    logbuf *b = arg;
    pthread_mutex_lock(&b->lock);
    size_t used = strlen(b->text);
    snprintf(b->text + used, sizeof b->text - used, "%s\n", line);
    pthread_mutex_unlock(&b->lock);
}

static bool log_has(logbuf *b, const char *s)
{
    pthread_mutex_lock(&b->lock);
    bool r = strstr(b->text, s) != NULL;
    pthread_mutex_unlock(&b->lock);
    return r;
}

typedef struct fixture {
    mux_cluster cluster;
    mux_config cfg;
    logbuf log;
    mux_ctx *x;
    sto_status create_st;
    int peer; /* our socket, as rank 1 */
    int port0;
} fixture;

static void *create_thread(void *arg)
{
    fixture *f = arg;
    f->create_st = mux_create(&f->cfg, &f->x);
    return NULL;
}

static int connect_to(int port)
{
    for (int i = 0; i < 500; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
        usleep(10000);
    }
    return -1;
}

static bool read_full(int fd, void *buf, size_t n, int timeout_ms)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0) return false;
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

static void send_frame(int fd, const mux_wire_hdr *h, const void *payload)
{
    uint8_t b[MUX_WIRE_HDR_SIZE];
    mux_wire_encode(h, b);
    /* Writes after the multiplexer cut us off may fail; that is expected. */
    if (write(fd, b, sizeof b) == (ssize_t)sizeof b && h->len) {
        if (write(fd, payload, h->len) < 0) return;
    }
}

static void send_hello(int fd, uint64_t cluster_id, int rank)
{
    mux_wire_hdr h = {
        .type = MUX_FRAME_HELLO, .sender = (uint32_t)rank, .len = 4, .aux = cluster_id};
    uint8_t n[4] = {2, 0, 0, 0};
    send_frame(fd, &h, n);
}

/* Reads the next frame that is not a heartbeat; payload into buf. */
static bool next_frame(int fd, mux_wire_hdr *h, uint8_t *buf, size_t cap, int timeout_ms)
{
    for (;;) {
        uint8_t b[MUX_WIRE_HDR_SIZE];
        if (!read_full(fd, b, sizeof b, timeout_ms)) return false;
        sto_status st = mux_wire_decode(b, cap, h);
        if (st) {
            fprintf(stderr, "decode: %s\n", st->message);
            sto_status_free(st);
            return false;
        }
        if (h->len && !read_full(fd, buf, h->len, timeout_ms)) return false;
        if (h->type != MUX_FRAME_HEARTBEAT) return true;
    }
}

static bool setup_full(fixture *f, int credits, size_t pool, bool wrong_cluster_first, int nodes);

static bool setup(fixture *f, int credits, size_t pool, bool wrong_cluster_first)
{
    return setup_full(f, credits, pool, wrong_cluster_first, 0);
}

static bool setup_nodes(fixture *f, int credits, size_t pool, int nodes)
{
    return setup_full(f, credits, pool, false, nodes);
}

/* Starts rank 0 in a thread and completes the handshake as rank 1. */
static bool setup_full(fixture *f, int credits, size_t pool, bool wrong_cluster_first, int nodes)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->log.lock, NULL);
    f->port0 = free_port();
    char text[128];
    snprintf(text, sizeof text, "127.0.0.1:%d\n127.0.0.1:%d\n", f->port0, free_port());
    if (mux_cluster_parse(text, &f->cluster)) return false;
    mux_config_init(&f->cfg);
    f->cfg.cluster = &f->cluster;
    f->cfg.rank = 0;
    f->cfg.transport = MUX_TRANSPORT_TCP;
    f->cfg.msg_size = 4096;
    f->cfg.pool_msgs = pool;
    f->cfg.recv_credits = credits;
    f->cfg.schedule = false;
    f->cfg.heartbeat_ms = 10000;
    f->cfg.peer_timeout_ms = 30000;
    f->cfg.connect_timeout_ms = 10000;
    f->cfg.log = log_to_buf;
    f->cfg.log_arg = &f->log;
    f->cfg.numa_nodes = nodes;
    f->cfg.workers = nodes > 1 ? nodes : 1;
    pthread_t th;
    pthread_create(&th, NULL, create_thread, f);
    if (wrong_cluster_first) {
        int bad = connect_to(f->port0);
        send_hello(bad, f->cluster.id ^ 1, 1);
        uint8_t b[64];
        CHECK(!read_full(bad, b, 36, 5000)); /* refused: closed without an answer */
        close(bad);
    }
    f->peer = connect_to(f->port0);
    send_hello(f->peer, f->cluster.id, 1);
    uint8_t reply[36];
    bool ok = read_full(f->peer, reply, sizeof reply, 5000);
    pthread_join(th, NULL);
    if (!ok || f->create_st) return false;
    mux_wire_hdr h;
    sto_status st = mux_wire_decode(reply, 0, &h);
    CHECK(st == NULL && h.type == MUX_FRAME_HELLO && h.sender == 0 && h.aux == f->cluster.id);
    sto_status_free(st);
    /* The first frame after the hello grants us the receive credits. */
    uint8_t buf[64];
    ok = next_frame(f->peer, &h, buf, sizeof buf, 5000);
    CHECK(ok && h.type == MUX_FRAME_CREDIT && h.aux == (uint64_t)credits);
    return ok;
}

static void teardown(fixture *f)
{
    /* Say goodbye like a real peer so that destroy returns at once. */
    mux_wire_hdr bye = {.type = MUX_FRAME_BYE, .sender = 1};
    send_frame(f->peer, &bye, NULL);
    mux_destroy(f->x);
    close(f->peer);
    mux_cluster_free(&f->cluster);
}

static void handshake_and_end_of_stream(void)
{
    fixture f;
    REQUIRE(setup(&f, 4, 8, true));
    CHECK(log_has(&f.log, "hello from another cluster"));
    CHECK_STREQ(mux_transport_name(f.x), "tcp");
    REQUIRE(mux_exchange_open(f.x, 5, 1) == NULL);
    mux_wire_hdr grant = {.type = MUX_FRAME_CREDIT, .sender = 1, .aux = 4};
    send_frame(f.peer, &grant, NULL);
    /* Our side of exchange 5: one message, then the end. */
    mux_wire_hdr d = {.type = MUX_FRAME_DATA, .exchange = 5, .sender = 1, .len = 6};
    send_frame(f.peer, &d, "hello!");
    mux_wire_hdr last = {
        .type = MUX_FRAME_DATA, .flags = MUX_FLAG_LAST, .exchange = 5, .sender = 1};
    send_frame(f.peer, &last, NULL);
    /* Rank 0's worker sends one message to us and one to itself. */
    mux_msg *m;
    REQUIRE(mux_msg_get(f.x, 0, &m) == NULL);
    m->exchange = 5;
    m->len = 3;
    memcpy(m->data, "abc", 3);
    REQUIRE(mux_send(f.x, 0, m, MUX_BROADCAST) == NULL);
    REQUIRE(mux_exchange_done(f.x, 0, 5) == NULL);
    int got = 0, from_peer = 0, from_self = 0;
    for (;;) {
        mux_msg *r;
        sto_status st = mux_recv(f.x, 0, 5, &r);
        REQUIRE(st == NULL);
        if (!r) break;
        got++;
        if (r->src == 1 && r->len == 6 && !memcmp(r->data, "hello!", 6)) from_peer++;
        if (r->src == 0 && r->len == 3 && !memcmp(r->data, "abc", 3)) from_self++;
        mux_msg_release(r);
    }
    CHECK_EQ_INT(got, 2);
    CHECK_EQ_INT(from_peer, 1);
    CHECK_EQ_INT(from_self, 1);
    /* What reached us: the data message, then the last-message frame, and
     * (credits returned as the worker released ours) credit frames. */
    mux_wire_hdr h;
    uint8_t buf[4096];
    int data = 0, lasts = 0, credits = 0;
    while ((data < 1 || lasts < 1 || credits < 2) &&
           next_frame(f.peer, &h, buf, sizeof buf, 3000)) {
        if (h.type == MUX_FRAME_DATA && !(h.flags & MUX_FLAG_LAST)) {
            CHECK(h.len == 3 && !memcmp(buf, "abc", 3) && h.exchange == 5 && lasts == 0);
            data++;
        } else if (h.type == MUX_FRAME_DATA) {
            CHECK(h.len == 0 && h.exchange == 5);
            lasts++;
        } else if (h.type == MUX_FRAME_CREDIT) {
            credits += (int)h.aux;
        }
    }
    CHECK_EQ_INT(data, 1);
    CHECK_EQ_INT(lasts, 1);
    CHECK_EQ_INT(credits, 2); /* one per frame of ours, the empty last frame included */
    teardown(&f);
}

typedef struct getter {
    mux_ctx *x;
    atomic_int done;
    mux_msg *m;
} getter;

static void *get_thread(void *arg)
{
    getter *g = arg;
    sto_status st = mux_msg_get(g->x, 0, &g->m);
    sto_status_free(st);
    atomic_store(&g->done, 1);
    return NULL;
}

static void credits_and_backpressure(void)
{
    fixture f;
    REQUIRE(setup(&f, 4, 2, false));
    /* We grant no credits yet: rank 0 may not send. Its pool has 2
     * messages, so after two sends a third get must wait. */
    for (int i = 0; i < 2; i++) {
        mux_msg *m;
        REQUIRE(mux_msg_get(f.x, 0, &m) == NULL);
        m->exchange = 9;
        m->len = 100;
        memset(m->data, 'a' + i, 100);
        REQUIRE(mux_send(f.x, 0, m, 1) == NULL);
    }
    getter g = {.x = f.x};
    pthread_t th;
    pthread_create(&th, NULL, get_thread, &g);
    struct pollfd p = {.fd = f.peer, .events = POLLIN};
    CHECK(poll(&p, 1, 300) == 0);          /* nothing sent without credits */
    CHECK_EQ_INT(atomic_load(&g.done), 0); /* and the worker waits for a message */
    /* One credit: exactly one message comes, and its buffer frees the getter. */
    mux_wire_hdr c = {.type = MUX_FRAME_CREDIT, .sender = 1, .aux = 1};
    send_frame(f.peer, &c, NULL);
    mux_wire_hdr h;
    uint8_t buf[4096];
    REQUIRE(next_frame(f.peer, &h, buf, sizeof buf, 5000));
    CHECK(h.type == MUX_FRAME_DATA && h.len == 100 && buf[0] == 'a' && h.exchange == 9);
    pthread_join(th, NULL);
    CHECK_EQ_INT(atomic_load(&g.done), 1);
    CHECK(g.m != NULL);
    CHECK(poll(&p, 1, 300) == 0); /* the second waits for another credit */
    send_frame(f.peer, &c, NULL);
    REQUIRE(next_frame(f.peer, &h, buf, sizeof buf, 5000));
    CHECK(h.type == MUX_FRAME_DATA && buf[0] == 'b');
    if (g.m) mux_msg_release(g.m);
    teardown(&f);
}

static void beyond_credits_is_cut_off(void)
{
    fixture f;
    REQUIRE(setup(&f, 2, 4, false));
    REQUIRE(mux_exchange_open(f.x, 3, 1) == NULL);
    mux_wire_hdr d = {.type = MUX_FRAME_DATA, .exchange = 3, .sender = 1, .len = 10};
    for (int i = 0; i < 3; i++)
        send_frame(f.peer, &d, "0123456789");
    /* Nobody consumes, so the third frame exceeds the two credits. */
    sto_status st = NULL;
    for (int i = 0; i < 100 && !(st = mux_error(f.x)); i++)
        usleep(20000);
    REQUIRE(st != NULL);
    CHECK(strstr(st->message, "server 1 (127.0.0.1:") != NULL);
    CHECK(strstr(st->message, "beyond the granted credits") != NULL);
    sto_status_free(st);
    CHECK(log_has(&f.log, "closing connection to server 1"));
    /* Blocked and later calls report the same error. */
    mux_msg *m;
    st = mux_msg_get(f.x, 0, &m);
    CHECK(st != NULL && strstr(st->message, "server 1"));
    sto_status_free(st);
    teardown(&f);
}

/* A header that fails the check: corrupted (byte 10 flipped) or, when
 * `version` is set, of another protocol version. */
static void bad_header_is_cut_off(int version, const char *expect)
{
    fixture f;
    REQUIRE(setup(&f, 2, 4, false));
    uint8_t b[MUX_WIRE_HDR_SIZE];
    mux_wire_hdr d = {.type = MUX_FRAME_SYNC, .sender = 1};
    mux_wire_encode(&d, b);
    if (version)
        b[4] = (uint8_t)version;
    else
        b[10] ^= 0xff; /* crc no longer matches */
    CHECK(write(f.peer, b, sizeof b) == (ssize_t)sizeof b);
    /* A receiver blocked in mux_recv wakes with the error. */
    mux_msg *m = (mux_msg *)1;
    sto_status st = mux_recv(f.x, 0, 77, &m);
    REQUIRE(st != NULL);
    CHECK(m == NULL);
    CHECK(strstr(st->message, "malformed frame from server 1") != NULL);
    CHECK(strstr(st->message, expect) != NULL);
    CHECK_STREQ(st->sqlstate, STO_PROTOCOL_VIOLATION);
    sto_status_free(st);
    CHECK(log_has(&f.log, "closing connection to server 1"));
    teardown(&f);
}

static void corrupt_header_is_cut_off(void)
{
    bad_header_is_cut_off(0, "checksum");
}

static void wrong_version_is_cut_off(void)
{
    bad_header_is_cut_off(2, "wrong protocol version 2");
}

static void abort_reaches_peer(void)
{
    fixture f;
    REQUIRE(setup(&f, 2, 4, false));
    mux_abort(f.x, "cancelled by the user");
    mux_wire_hdr h;
    uint8_t buf[4096];
    bool got = false;
    while (!got && next_frame(f.peer, &h, buf, sizeof buf, 5000))
        if (h.type == MUX_FRAME_ABORT) got = true;
    CHECK(got);
    if (got) CHECK(h.len > 0 && memmem(buf, h.len, "cancelled by the user", 21) != NULL);
    sto_status st = mux_error(f.x);
    CHECK(st && strstr(st->message, "cancelled by the user"));
    sto_status_free(st);
    teardown(&f);
}

/* Two NUMA nodes' receive queues, one receiving worker (home node 1): it
 * must steal what landed on node 0's queue to see every message. */
static void stealing_across_nodes(void)
{
    fixture f;
    memset(&f, 0, sizeof f);
    REQUIRE(setup_nodes(&f, 8, 4, 2));
    REQUIRE(mux_exchange_open(f.x, 4, 1) == NULL);
    mux_wire_hdr d = {.type = MUX_FRAME_DATA, .exchange = 4, .sender = 1, .len = 1};
    for (int i = 0; i < 6; i++) {
        uint8_t b = (uint8_t)i;
        send_frame(f.peer, &d, &b);
    }
    mux_wire_hdr last = {
        .type = MUX_FRAME_DATA, .flags = MUX_FLAG_LAST, .exchange = 4, .sender = 1};
    send_frame(f.peer, &last, NULL);
    REQUIRE(mux_exchange_done(f.x, 0, 4) == NULL);
    int seen = 0, got = 0;
    for (;;) {
        mux_msg *r;
        sto_status st = mux_recv(f.x, 1, 4, &r);
        REQUIRE(st == NULL);
        if (!r) break;
        if (r->len == 1 && r->data[0] < 6) seen |= 1 << r->data[0];
        got++;
        mux_msg_release(r);
    }
    CHECK_EQ_INT(got, 6);
    CHECK_EQ_INT(seen, 0x3f);
    teardown(&f);
}

/* A server that never comes up: creation gives up after the connect timeout
 * and names it. */
static void missing_server_times_out(void)
{
    char text[128];
    snprintf(text, sizeof text, "127.0.0.1:%d\n127.0.0.1:%d\n127.0.0.1:%d\n", free_port(),
             free_port(), free_port());
    mux_cluster c;
    REQUIRE(mux_cluster_parse(text, &c) == NULL);
    mux_config cfg;
    mux_config_init(&cfg);
    cfg.cluster = &c;
    cfg.rank = 2; /* connects to ranks 0 and 1; neither listens */
    cfg.transport = MUX_TRANSPORT_TCP;
    cfg.msg_size = 4096;
    cfg.pool_msgs = 2;
    cfg.connect_timeout_ms = 300;
    mux_ctx *x = NULL;
    sto_status st = mux_create(&cfg, &x);
    REQUIRE(st != NULL);
    CHECK(x == NULL);
    CHECK(strstr(st->message, "servers 0, 1 did not connect within 300 ms") != NULL);
    CHECK_STREQ(st->sqlstate, STO_CONNECTION_FAILURE);
    sto_status_free(st);
    mux_cluster_free(&c);
}

static void verbs_without_device(void)
{
    mux_cluster c;
    REQUIRE(mux_cluster_parse("127.0.0.1:1\n", &c) == NULL);
    mux_config cfg;
    mux_config_init(&cfg);
    cfg.cluster = &c;
    cfg.transport = MUX_TRANSPORT_VERBS;
    mux_ctx *x = NULL;
    sto_status st = mux_create(&cfg, &x);
    /* These machines have no RDMA device; where one exists this passes
     * trivially by creating a one-server verbs cluster. */
    if (st) {
        CHECK_STREQ(st->message, "no RDMA device found; use --transport tcp");
        CHECK(x == NULL);
    }
    sto_status_free(st);
    mux_destroy(x);
    mux_transport_kind k;
    CHECK(mux_transport_parse("verbs", &k) == NULL && k == MUX_TRANSPORT_VERBS);
    st = mux_transport_parse("udp", &k);
    CHECK(st != NULL);
    sto_status_free(st);
    mux_cluster_free(&c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(handshake_and_end_of_stream);
    RUN(credits_and_backpressure);
    RUN(beyond_credits_is_cut_off);
    RUN(corrupt_header_is_cut_off);
    RUN(wrong_version_is_cut_off);
    RUN(abort_reaches_peer);
    RUN(stealing_across_nodes);
    RUN(missing_server_times_out);
    RUN(verbs_without_device);
    return TEST_REPORT();
}
