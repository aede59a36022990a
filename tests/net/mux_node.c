/*
 * mux_node.c — one rank of a multi-process multiplexer test or benchmark.
 *
 * Every rank runs this program with the same cluster file and its own rank.
 * Sender threads produce `--mb` MB of messages (all-to-all shuffle: message
 * q of worker w goes to rank (q + w + rank) mod n; with --broadcast every
 * message goes to every rank); receiver threads take messages until the end
 * of stream and check each one: a tag at the front names its origin, and a
 * CRC-32C of the body must match. At the end every expected message must
 * have arrived exactly once. Prints one "rank R ok ..." line (exit 0), or
 * the error (exit 1 = wrong data, 3 = multiplexer error naming the cause).
 */
#include "net/mux/cluster.h"
#include "net/mux/mux.h"
#include "storage/crc32c.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_MAGIC 0x4d55584eu
#define TAG_BYTES 32

typedef struct opts {
    const char *cluster, *transport;
    int rank, workers, credits, burst, timeout_ms, heartbeat_ms, connect_ms, delay_us, alarm_s;
    double mb;
    size_t msg_kb, pool;
    bool schedule, broadcast, verify;
} opts;

typedef struct node {
    opts o;
    mux_ctx *x;
    int n;
    uint64_t msgs_per_worker; /* messages each sender worker produces */
    atomic_uchar *seen;       /* [src][worker][seq] */
    atomic_ullong recv_msgs, recv_bytes, bad, crc_xor;
    sto_status err;
    pthread_mutex_t err_lock;
} node;

static uint64_t tag_index(node *nd, int src, int worker, uint64_t seq)
{
    return ((uint64_t)src * (uint64_t)nd->o.workers + (uint64_t)worker) * nd->msgs_per_worker + seq;
}

static int dest_of(node *nd, int src, int worker, uint64_t seq)
{
    return (int)((seq + (uint64_t)worker + (uint64_t)src) % (uint64_t)nd->n);
}

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void fill_body(uint8_t *p, size_t len, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        memcpy(p + i, &s, 8);
    }
    for (; i < len; i++)
        p[i] = (uint8_t)(s >> (8 * (i & 7)));
}

static void record_error(node *nd, sto_status st)
{
    pthread_mutex_lock(&nd->err_lock);
    if (!nd->err)
        nd->err = st;
    else
        sto_status_free(st);
    pthread_mutex_unlock(&nd->err_lock);
}

typedef struct worker_arg {
    node *nd;
    int w;
} worker_arg;

static void *sender(void *arg)
{
    worker_arg *a = arg;
    node *nd = a->nd;
    uint32_t len = (uint32_t)(nd->o.msg_kb * 1024);
    for (uint64_t q = 0; q < nd->msgs_per_worker; q++) {
        mux_msg *m;
        sto_status st = mux_msg_get(nd->x, a->w, &m);
        if (st) {
            record_error(nd, st);
            return NULL;
        }
        m->exchange = 1;
        m->len = len;
        uint8_t *p = m->data;
        put32(p, TAG_MAGIC);
        put32(p + 4, (uint32_t)nd->o.rank);
        put32(p + 8, (uint32_t)a->w);
        put32(p + 12, (uint32_t)q);
        put32(p + 16, len);
        uint32_t crc = 0;
        if (nd->o.verify) {
            fill_body(p + TAG_BYTES, len - TAG_BYTES, tag_index(nd, nd->o.rank, a->w, q));
            crc = sto_crc32c(0, p + TAG_BYTES, len - TAG_BYTES);
        }
        put32(p + 20, crc);
        int dest = nd->o.broadcast ? MUX_BROADCAST : dest_of(nd, nd->o.rank, a->w, q);
        st = mux_send(nd->x, a->w, m, dest);
        if (st) {
            record_error(nd, st);
            return NULL;
        }
        if (nd->o.delay_us) usleep((useconds_t)nd->o.delay_us);
    }
    sto_status st = mux_exchange_done(nd->x, a->w, 1);
    if (st) record_error(nd, st);
    return NULL;
}

static void *receiver(void *arg)
{
    worker_arg *a = arg;
    node *nd = a->nd;
    for (;;) {
        mux_msg *m;
        sto_status st = mux_recv(nd->x, a->w, 1, &m);
        if (st) {
            record_error(nd, st);
            return NULL;
        }
        if (!m) return NULL;
        const uint8_t *p = m->data;
        int src = (int)get32(p + 4), w = (int)get32(p + 8);
        uint64_t q = get32(p + 12);
        bool ok = m->len >= TAG_BYTES && get32(p) == TAG_MAGIC && src == m->src && src < nd->n &&
                  w < nd->o.workers && q < nd->msgs_per_worker && get32(p + 16) == m->len;
        if (ok && nd->o.verify)
            ok = sto_crc32c(0, p + TAG_BYTES, m->len - TAG_BYTES) == get32(p + 20);
        if (ok && !nd->o.broadcast) ok = dest_of(nd, src, w, q) == nd->o.rank;
        if (ok && atomic_fetch_add(&nd->seen[tag_index(nd, src, w, q)], 1) != 0) ok = false;
        if (!ok) {
            atomic_fetch_add(&nd->bad, 1);
            fprintf(stderr, "rank %d: bad message from %d (worker %d seq %llu, %u bytes)\n",
                    nd->o.rank, m->src, w, (unsigned long long)q, m->len);
        }
        atomic_fetch_xor(&nd->crc_xor, get32(p + 20));
        atomic_fetch_add(&nd->recv_msgs, 1);
        atomic_fetch_add(&nd->recv_bytes, m->len);
        mux_msg_release(m);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    fprintf(stderr, "usage: mux_node --cluster FILE --rank R [--mb N] [--msg-kb K] [--workers W]\n"
                    "  [--no-schedule] [--broadcast] [--no-verify] [--transport tcp|verbs|auto]\n"
                    "  [--timeout-ms T] [--heartbeat-ms H] [--connect-ms C] [--delay-us D]\n"
                    "  [--pool N] [--credits C] [--burst B] [--alarm SECONDS]\n");
    exit(2);
}

static void log_line(void *arg, const char *line)
{
    fprintf(stderr, "%s\n", line);
}

int main(int argc, char **argv)
{
    opts o = {.rank = -1,
              .workers = 2,
              .mb = 8,
              .msg_kb = 512,
              .schedule = true,
              .verify = true,
              .transport = "tcp",
              .timeout_ms = 5000,
              .heartbeat_ms = 250,
              .connect_ms = 20000,
              .pool = 16,
              .credits = 8,
              .burst = 8};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && ++i)
        if (ARG("--cluster"))
            o.cluster = v;
        else if (ARG("--rank"))
            o.rank = atoi(v);
        else if (ARG("--mb"))
            o.mb = atof(v);
        else if (ARG("--msg-kb"))
            o.msg_kb = (size_t)atol(v);
        else if (ARG("--workers"))
            o.workers = atoi(v);
        else if (ARG("--transport"))
            o.transport = v;
        else if (ARG("--timeout-ms"))
            o.timeout_ms = atoi(v);
        else if (ARG("--heartbeat-ms"))
            o.heartbeat_ms = atoi(v);
        else if (ARG("--connect-ms"))
            o.connect_ms = atoi(v);
        else if (ARG("--delay-us"))
            o.delay_us = atoi(v);
        else if (ARG("--alarm"))
            o.alarm_s = atoi(v);
        else if (ARG("--pool"))
            o.pool = (size_t)atol(v);
        else if (ARG("--credits"))
            o.credits = atoi(v);
        else if (ARG("--burst"))
            o.burst = atoi(v);
        else if (!strcmp(a, "--no-schedule"))
            o.schedule = false;
        else if (!strcmp(a, "--broadcast"))
            o.broadcast = true;
        else if (!strcmp(a, "--no-verify"))
            o.verify = false;
        else
            usage();
#undef ARG
    }
    if (!o.cluster || o.rank < 0 || o.workers < 1 || o.msg_kb < 1) usage();
    /* Tests must end even when a peer hangs forever: SIGALRM's default
     * action terminates the process. */
    if (o.alarm_s > 0) alarm((unsigned)o.alarm_s);

    mux_cluster c;
    sto_status st = mux_cluster_load(o.cluster, &c);
    if (st) {
        fprintf(stderr, "rank %d: error: %s\n", o.rank, st->message);
        return 3;
    }
    mux_config cfg;
    mux_config_init(&cfg);
    cfg.cluster = &c;
    cfg.rank = o.rank;
    cfg.msg_size = o.msg_kb * 1024;
    cfg.workers = o.workers;
    cfg.pool_msgs = o.pool;
    cfg.recv_credits = o.credits;
    cfg.burst = o.burst;
    cfg.schedule = o.schedule;
    cfg.peer_timeout_ms = o.timeout_ms;
    cfg.heartbeat_ms = o.heartbeat_ms;
    cfg.connect_timeout_ms = o.connect_ms;
    cfg.log = log_line;
    st = mux_transport_parse(o.transport, &cfg.transport);
    node nd = {.o = o, .n = c.n};
    pthread_mutex_init(&nd.err_lock, NULL);
    if (!st) st = mux_create(&cfg, &nd.x);
    if (st) {
        fprintf(stderr, "rank %d: error: %s\n", o.rank, st->message);
        sto_status_free(st);
        mux_cluster_free(&c);
        return 3;
    }
    /* Fault tests wait for this line in every rank's log before they strike,
     * so that the fault lands mid-shuffle rather than during setup. */
    fprintf(stderr, "rank %d connected\n", o.rank);
    uint64_t total = (uint64_t)(o.mb * 1048576.0 / (double)(o.msg_kb * 1024) + 0.5);
    if (total < (uint64_t)o.workers) total = (uint64_t)o.workers;
    nd.msgs_per_worker = (total + (uint64_t)o.workers - 1) / (uint64_t)o.workers;
    size_t nseen = (size_t)c.n * (size_t)o.workers * nd.msgs_per_worker;
    nd.seen = calloc(nseen, sizeof *nd.seen);
    if (!nd.seen || (st = mux_exchange_open(nd.x, 1, 0))) {
        fprintf(stderr, "rank %d: error: %s\n", o.rank, st ? st->message : "out of memory");
        return 3;
    }

    double t0 = now_s();
    pthread_t *th = calloc((size_t)o.workers * 2, sizeof *th);
    worker_arg *args = calloc((size_t)o.workers, sizeof *args);
    for (int w = 0; w < o.workers; w++) {
        args[w] = (worker_arg){&nd, w};
        pthread_create(&th[w], NULL, sender, &args[w]);
        pthread_create(&th[o.workers + w], NULL, receiver, &args[w]);
    }
    for (int w = 0; w < 2 * o.workers; w++)
        pthread_join(th[w], NULL);
    double secs = now_s() - t0;

    int rc = 0;
    if (!nd.err) {
        /* Every message meant for this rank must have arrived exactly once. */
        uint64_t missing = 0;
        for (int s = 0; s < c.n; s++)
            for (int w = 0; w < o.workers; w++)
                for (uint64_t q = 0; q < nd.msgs_per_worker; q++)
                    if ((o.broadcast || dest_of(&nd, s, w, q) == o.rank) &&
                        atomic_load(&nd.seen[tag_index(&nd, s, w, q)]) != 1)
                        missing++;
        if (missing || atomic_load(&nd.bad)) {
            fprintf(stderr, "rank %d: %llu messages missing, %llu bad\n", o.rank,
                    (unsigned long long)missing, (unsigned long long)atomic_load(&nd.bad));
            rc = 1;
        }
    }
    mux_stats ms;
    mux_get_stats(nd.x, &ms);
    if (nd.err) {
        fprintf(stderr, "rank %d: error: %s\n", o.rank, nd.err->message);
        sto_status_free(nd.err);
        rc = 3;
    } else if (rc == 0) {
        printf("rank %d ok: received %llu messages, %llu bytes, checksum %08llx; sent %llu bytes "
               "over the network in %.3f s; rounds %llu; transport %s\n",
               o.rank, (unsigned long long)atomic_load(&nd.recv_msgs),
               (unsigned long long)atomic_load(&nd.recv_bytes),
               (unsigned long long)atomic_load(&nd.crc_xor), (unsigned long long)ms.bytes_sent,
               secs, (unsigned long long)ms.rounds, mux_transport_name(nd.x));
        fflush(stdout);
    }
    mux_destroy(nd.x);
    mux_cluster_free(&c);
    free(nd.seen);
    free(th);
    free(args);
    return rc;
}
