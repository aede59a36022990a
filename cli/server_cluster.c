/*
 * server_cluster.c — one server of a cluster: the control thread that keeps
 * the multiplexer up, the coordinator's side of a distributed statement and
 * the other ranks' side (server_cluster.h explains the flow).
 *
 * Control protocol, per statement q (all ranks count q alike from 1 each
 * time the multiplexer is made):
 *   stream CTRL(q, 0): rank 0 sends the work (a plan, or a statement text
 *     per rank) in pieces to every other rank; every rank marks its own
 *     end of the stream once it has what it needs, and reads to the end.
 *   the work: eng_dist_run(q) everywhere, or each rank runs its statement.
 *   stream CTRL(q, 1): every rank other than 0 sends rank 0 its status
 *     (SQLSTATE, message, bytes its exchanges sent); all read to the end.
 * A piece is a 16-byte header (magic "RKCT", kind, total length, offset)
 * and bytes; pieces may arrive in any order (receive queues are per NUMA
 * node), so each says where it goes.
 *
 * Failures. Any error inside eng_dist_run aborts the multiplexer on every
 * rank (engine/dist_run.c), and a dead or silent rank fails it too, naming
 * that rank; a guard thread then interrupts the statement running here, and
 * the coordinator answers the client with the multiplexer's error. Then every
 * rank's control thread drops the multiplexer and makes a new one, which
 * succeeds once every rank of the cluster file is back (a restarted server
 * rejoins this way, with the tables it loads or generates anew). Until then
 * the coordinator answers queries with 08006 and the reason.
 */
#include "cli/server_cluster.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "engine/dist.h"
#include "engine/exchange.h"
#include "engine/instance.h"
#include "sql/parse.h"
#include "sql/plan_wire.h"

#define CTRL_WORKER        ENG_DIST_MUX_CTRL /* the others: engine/exchange.h */
#define CTRL_BIT           0x80000000u
#define QUERY_ID_MAX       ((1u << 23) - 1)
#define CTRL_MAGIC         0x54434b52u /* "RKCT" */
#define PIECE_HDR          16
#define STATUS_FIXED       24
#define REJOIN_TIMEOUT_MS  3000 /* one attempt to make the multiplexer again */
#define STARTUP_TIMEOUT_MS 30000

enum { WORK_PLAN = 1, WORK_SQL = 2 };

struct cli_cluster {
    rackdb *db;
    mux_cluster cluster;
    mux_config cfg;
    int rank, n;

    pthread_t thread;
    bool thread_started;
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t cond;
    bool busy;    /* the coordinator runs one statement at a time */
    mux_ctx *mux; /* NULL while the cluster is not whole */
    bool stopping;
    uint32_t next_query;
    char why[512];                    /* why the cluster is not whole */
    unsigned long long shuffle_bytes; /* of the coordinator's last query */
    /* The session running a distributed statement here: the guard thread
     * interrupts it when the multiplexer fails, so that a long pipeline
     * stops at its next morsel instead of running on for nothing. */
    rackdb_session *running;
    bool interrupted;
    pthread_t guard;
    bool guard_started;
};

static uint32_t ctrl_id(uint32_t q, uint32_t k)
{
    return CTRL_BIT | (q << 8) | k;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void logf_cluster(const cli_cluster *c, const char *fmt, const char *detail)
{
    fprintf(stderr, "rackdb server: cluster rank %d: ", c->rank);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
}

/* --- pieces -------------------------------------------------------------------------- */

/* Sends bytes as pieces of `kind` on stream id to dest. */
static sto_status send_pieces(mux_ctx *x, uint32_t id, int dest, uint8_t kind, const uint8_t *b,
                              size_t len)
{
    if (len > UINT32_MAX) return sto_error(STO_PROGRAM_LIMIT_EXCEEDED, "plan too large to send");
    size_t off = 0;
    do {
        mux_msg *m = NULL;
        STO_TRY(mux_msg_get(x, CTRL_WORKER, &m));
        size_t n = m->cap - PIECE_HDR;
        if (n > len - off) n = len - off;
        put32(m->data, CTRL_MAGIC);
        m->data[4] = kind;
        m->data[5] = m->data[6] = m->data[7] = 0;
        put32(m->data + 8, (uint32_t)len);
        put32(m->data + 12, (uint32_t)off);
        if (n) memcpy(m->data + PIECE_HDR, b + off, n);
        m->len = (uint32_t)(PIECE_HDR + n);
        m->exchange = id;
        STO_TRY(mux_send(x, CTRL_WORKER, m, dest));
        off += n;
    } while (off < len);
    return STO_OK;
}

/* Reads the stream to its end, releasing what comes. */
static sto_status drain(mux_ctx *x, uint32_t id)
{
    for (;;) {
        mux_msg *m = NULL;
        STO_TRY(mux_recv(x, CTRL_WORKER, id, &m));
        if (!m) return STO_OK;
        mux_msg_release(m);
    }
}

/* Receives one piece-wise message from rank 0 on stream id: *bytes
 * (malloc'd), *len, *kind. */
static sto_status recv_pieces(mux_ctx *x, uint32_t id, uint8_t **bytes, size_t *len, uint8_t *kind)
{
    *bytes = NULL;
    *len = 0;
    size_t got = 0, total = 0;
    bool first = true;
    sto_status st = STO_OK;
    while (!st && (first || got < total)) {
        mux_msg *m = NULL;
        st = mux_recv(x, CTRL_WORKER, id, &m);
        if (st) break;
        if (!m) {
            st = sto_error(STO_PROTOCOL_VIOLATION, "control stream ended before its message");
            break;
        }
        if (m->len < PIECE_HDR || get32(m->data) != CTRL_MAGIC) {
            st = sto_error(STO_PROTOCOL_VIOLATION, "malformed control message from server %d",
                           m->src);
        } else {
            size_t t = get32(m->data + 8), off = get32(m->data + 12), n = m->len - PIECE_HDR;
            if (first) {
                total = t;
                *kind = m->data[4];
                *bytes = malloc(total ? total : 1);
                if (!*bytes) st = sto_error_oom();
                first = false;
            }
            if (!st && (t != total || off > total || n > total - off))
                st = sto_error(STO_PROTOCOL_VIOLATION, "control message pieces do not fit");
            if (!st) {
                memcpy(*bytes + off, m->data + PIECE_HDR, n);
                got += n;
            }
        }
        mux_msg_release(m);
    }
    if (st) {
        free(*bytes);
        *bytes = NULL;
        return st;
    }
    *len = total;
    return STO_OK;
}

/* --- statuses ------------------------------------------------------------------------- */

/* A rank's status: ok, or an error's SQLSTATE and message; and bytes sent. */
static sto_status send_status(mux_ctx *x, uint32_t q, sto_status result, uint64_t bytes)
{
    uint32_t id = ctrl_id(q, 1);
    STO_TRY(mux_exchange_open(x, id, 1));
    mux_msg *m = NULL;
    sto_status st = mux_msg_get(x, CTRL_WORKER, &m);
    if (!st) {
        const char *msg = result ? result->message : "";
        size_t n = strlen(msg);
        if (n > m->cap - STATUS_FIXED) n = m->cap - STATUS_FIXED;
        put32(m->data, CTRL_MAGIC);
        m->data[4] = result ? 0 : 1;
        memcpy(m->data + 5, result ? result->sqlstate : "00000", 5);
        m->data[10] = m->data[11] = 0;
        put64(m->data + 12, bytes);
        put32(m->data + 20, (uint32_t)n);
        memcpy(m->data + STATUS_FIXED, msg, n);
        m->len = (uint32_t)(STATUS_FIXED + n);
        m->exchange = id;
        st = mux_send(x, CTRL_WORKER, m, 0);
    }
    if (!st) st = mux_exchange_done(x, CTRL_WORKER, id);
    if (!st) st = drain(x, id);
    mux_exchange_close(x, id);
    return st;
}

/* The coordinator's side: every other rank's status. The first error
 * (naming its rank) wins; *bytes adds up what they sent. */
static sto_status collect_statuses(cli_cluster *c, mux_ctx *x, uint32_t q, uint64_t *bytes)
{
    uint32_t id = ctrl_id(q, 1);
    STO_TRY(mux_exchange_open(x, id, 1));
    sto_status st = mux_exchange_done(x, CTRL_WORKER, id), first = STO_OK;
    int seen = 0;
    while (!st) {
        mux_msg *m = NULL;
        st = mux_recv(x, CTRL_WORKER, id, &m);
        if (st || !m) break;
        if (m->len < STATUS_FIXED || get32(m->data) != CTRL_MAGIC ||
            get32(m->data + 20) > m->len - STATUS_FIXED) {
            if (!first)
                first =
                    sto_error(STO_PROTOCOL_VIOLATION, "malformed status from server %d", m->src);
        } else {
            seen++;
            *bytes += get64(m->data + 12);
            if (!m->data[4] && !first) {
                char state[6];
                memcpy(state, m->data + 5, 5);
                state[5] = '\0';
                first = sto_error(state, "server %d (%s:%s): %.*s", m->src,
                                  c->cluster.ep[m->src].host, c->cluster.ep[m->src].port,
                                  (int)get32(m->data + 20), (const char *)m->data + STATUS_FIXED);
            }
        }
        mux_msg_release(m);
    }
    mux_exchange_close(x, id);
    if (!st && !first && seen != c->n - 1)
        first = sto_error(STO_PROTOCOL_VIOLATION, "%d of %d servers reported", seen, c->n - 1);
    if (st) {
        sto_status_free(first);
        return st;
    }
    return first;
}

/* --- the ranks other than 0 ------------------------------------------------------------ */

/* Marks s as the session running a distributed statement (NULL: none). */
static void set_running(cli_cluster *c, rackdb_session *s)
{
    pthread_mutex_lock(&c->lock);
    c->running = s;
    c->interrupted = false;
    if (s) atomic_store(&s->cancel, 0);
    pthread_mutex_unlock(&c->lock);
}

/* Waits on c->cond (c->lock held) for at most ms milliseconds (< 1000):
 * the loops that call it also look at what no one signals, such as the
 * multiplexer's health. */
static void wait_cond(cli_cluster *c, long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += ms * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&c->cond, &c->lock, &ts);
}

/* The guard thread: interrupts the running statement once the multiplexer
 * has failed. */
static void *guard_main(void *arg)
{
    cli_cluster *c = arg;
    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        if (c->mux && c->running && !c->interrupted) {
            sto_status st = mux_error(c->mux);
            if (st) {
                rackdb_interrupt(c->running);
                c->interrupted = true;
                sto_status_free(st);
            }
        }
        wait_cond(c, 50);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* After a failed distributed run: the multiplexer's error (it names the
 * server that failed) rather than the interruption it caused here. */
static sto_status prefer_mux_error(mux_ctx *x, sto_status st)
{
    sto_status mst = st ? mux_error(x) : STO_OK;
    if (!mst) return st;
    sto_status_free(st);
    return mst;
}

typedef struct lookup_arg {
    eng_catalog *catalog;
} lookup_arg;

static sto_status local_table(void *arg, const char *name, sto_table **table, uint64_t *rows,
                              const sto_column_stats **stats)
{
    lookup_arg *a = arg;
    *table = eng_catalog_table(a->catalog, name);
    *rows = *table ? sto_table_rows(*table) : 0;
    *stats = *table ? (*table)->stats : NULL;
    return STO_OK;
}

static uint64_t bytes_sent(mux_ctx *x)
{
    mux_stats s;
    mux_get_stats(x, &s);
    return s.bytes_sent;
}

/* Runs a shipped plan: settings, then the plan against this rank's tables. */
static sto_status run_plan(cli_cluster *c, rackdb_session *s, mux_ctx *x, uint32_t q,
                           const uint8_t *b, size_t len, uint64_t *sent)
{
    if (len < 12) return sto_error(STO_PROTOCOL_VIOLATION, "plan message too short");
    s->settings.threads = (int)get32(b);
    s->settings.memory_limit = get64(b + 4);
    eng_catalog *cat = c->db->catalog;
    lookup_arg la = {cat};
    sql_plan *plan = NULL;
    /* The read lock keeps the GETs' tables alive from decoding to the end
     * of the run (eng_dist_run takes it again: readers may nest). */
    eng_catalog_read_lock(cat);
    sto_status st = sql_plan_decode(b + 12, len - 12, local_table, &la, &plan);
    if (st) {
        /* the others would wait for this rank's rows */
        char reason[600];
        snprintf(reason, sizeof(reason), "server %d cannot run the plan: %s", c->rank, st->message);
        mux_abort(x, reason);
    } else {
        uint64_t before = bytes_sent(x);
        rackdb_result *none = NULL;
        set_running(c, s);
        st = eng_dist_run(s, x, plan, q, 0, &none);
        set_running(c, NULL);
        rackdb_result_free(none);
        *sent = bytes_sent(x) - before;
    }
    eng_catalog_unlock(cat);
    sql_plan_decoded_free(plan);
    return st;
}

/* Serves statements until the multiplexer fails or the server stops. */
static void serve(cli_cluster *c, rackdb_session *s, mux_ctx *x)
{
    for (uint32_t q = 1;; q = q == QUERY_ID_MAX ? 1 : q + 1) {
        uint32_t id = ctrl_id(q, 0);
        uint8_t *b = NULL, kind = 0;
        size_t len = 0;
        sto_status st = mux_exchange_open(x, id, 1);
        if (!st) st = recv_pieces(x, id, &b, &len, &kind);
        if (!st) st = mux_exchange_done(x, CTRL_WORKER, id);
        if (!st) st = drain(x, id);
        mux_exchange_close(x, id);
        if (st) {
            pthread_mutex_lock(&c->lock);
            if (!c->stopping) logf_cluster(c, "the cluster failed: %s", st->message);
            pthread_mutex_unlock(&c->lock);
            sto_status_free(st);
            free(b);
            return;
        }
        uint64_t sent = 0;
        sto_status result = STO_OK;
        if (kind == WORK_PLAN) {
            result = run_plan(c, s, x, q, b, len, &sent);
        } else if (kind == WORK_SQL) {
            char *text = strndup((const char *)b, len);
            rackdb_result *r = NULL;
            rackdb_error *e = NULL;
            if (!text)
                result = sto_error_oom();
            else if (rackdb_exec(s, text, &r, &e) != RACKDB_OK)
                result = sto_error(rackdb_error_sqlstate(e), "%s", rackdb_error_message(e));
            rackdb_error_free(e);
            rackdb_result_free(r);
            free(text);
        } else {
            result = sto_error(STO_PROTOCOL_VIOLATION, "unknown control message kind %d", kind);
        }
        free(b);
        /* a failed plan aborted the multiplexer everywhere: nothing to report */
        sto_status dead = mux_error(x);
        if (dead) {
            logf_cluster(c, "the cluster failed: %s", dead->message);
            sto_status_free(dead);
            sto_status_free(result);
            return;
        }
        st = send_status(x, q, result, sent);
        sto_status_free(result);
        if (st) {
            logf_cluster(c, "the cluster failed: %s", st->message);
            sto_status_free(st);
            return;
        }
    }
}

/* --- the control thread --------------------------------------------------------------- */

static bool stopping(cli_cluster *c)
{
    pthread_mutex_lock(&c->lock);
    bool s = c->stopping;
    pthread_mutex_unlock(&c->lock);
    return s;
}

/* Makes the multiplexer again until it succeeds or the server stops. */
static mux_ctx *rejoin(cli_cluster *c)
{
    mux_config cfg = c->cfg;
    cfg.connect_timeout_ms = REJOIN_TIMEOUT_MS;
    bool logged = false;
    while (!stopping(c)) {
        mux_ctx *x = NULL;
        sto_status st = mux_create(&cfg, &x);
        if (!st) {
            logf_cluster(c, "%s", "the cluster is whole again");
            return x;
        }
        if (!logged) logf_cluster(c, "waiting for the cluster to be whole: %s", st->message);
        logged = true;
        pthread_mutex_lock(&c->lock);
        snprintf(c->why, sizeof(c->why), "%s", st->message);
        pthread_mutex_unlock(&c->lock);
        sto_status_free(st);
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* The coordinator waits while its multiplexer is healthy; queries run on
 * the clients' threads. */
static void watch(cli_cluster *c, mux_ctx *x)
{
    pthread_mutex_lock(&c->lock);
    for (;;) {
        if (c->stopping) break;
        sto_status st = mux_error(x);
        if (st) {
            logf_cluster(c, "the cluster failed: %s", st->message);
            snprintf(c->why, sizeof(c->why), "%s", st->message);
            sto_status_free(st);
            break;
        }
        wait_cond(c, 100);
    }
    pthread_mutex_unlock(&c->lock);
}

/* Takes the multiplexer out of use (waiting for a running query) and
 * destroys it. */
static void retire(cli_cluster *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->busy)
        pthread_cond_wait(&c->cond, &c->lock);
    mux_ctx *x = c->mux;
    c->mux = NULL;
    pthread_mutex_unlock(&c->lock);
    mux_destroy(x);
}

/* The coordinator's turn to run a statement on the cluster. */
static void acquire(cli_cluster *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->busy)
        pthread_cond_wait(&c->cond, &c->lock);
    c->busy = true;
    pthread_mutex_unlock(&c->lock);
}

static void release(cli_cluster *c)
{
    pthread_mutex_lock(&c->lock);
    c->busy = false;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void *control_main(void *arg)
{
    cli_cluster *c = arg;
    rackdb_session *s = NULL;
    rackdb_error *e = NULL;
    if (c->rank != 0 && rackdb_session_open(c->db, &s, &e) != RACKDB_OK) {
        logf_cluster(c, "cannot open a session: %s", rackdb_error_message(e));
        rackdb_error_free(e);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&c->lock);
        mux_ctx *x = c->mux;
        pthread_mutex_unlock(&c->lock);
        if (x) {
            if (c->rank == 0)
                watch(c, x);
            else
                serve(c, s, x);
            retire(c);
        }
        if (stopping(c)) break;
        x = rejoin(c);
        if (!x) break;
        pthread_mutex_lock(&c->lock);
        c->mux = x;
        c->next_query = 1;
        c->why[0] = '\0';
        pthread_mutex_unlock(&c->lock);
    }
    rackdb_session_close(s);
    return NULL;
}

/* --- start and stop ------------------------------------------------------------------- */

sto_status cli_cluster_start(rackdb *db, const cli_cluster_options *o, cli_cluster **out)
{
    *out = NULL;
    cli_cluster *c = calloc(1, sizeof(*c));
    if (!c) return sto_error_oom();
    c->db = db;
    c->rank = o->rank;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    sto_status st = mux_cluster_load(o->file, &c->cluster);
    if (!st && (o->rank < 0 || o->rank >= c->cluster.n))
        st = sto_error(STO_INVALID_PARAMETER_VALUE, "rank %d is not in %s (ranks 0..%d)", o->rank,
                       o->file, c->cluster.n - 1);
    if (!st) {
        c->n = c->cluster.n;
        mux_config_init(&c->cfg);
        c->cfg.cluster = &c->cluster;
        c->cfg.rank = o->rank;
        c->cfg.transport = o->transport;
        st = eng_dist_mux_workers(db, &c->cfg.workers);
        c->cfg.connect_timeout_ms = STARTUP_TIMEOUT_MS;
        if (o->peer_timeout_ms > 0) c->cfg.peer_timeout_ms = o->peer_timeout_ms;
        if (!st) st = mux_create(&c->cfg, &c->mux);
    }
    if (!st) {
        c->next_query = 1;
        if (pthread_create(&c->thread, NULL, control_main, c) != 0)
            st = sto_error(STO_INTERNAL_ERROR, "cannot start the cluster's control thread");
        else
            c->thread_started = true;
    }
    if (!st) {
        if (pthread_create(&c->guard, NULL, guard_main, c) != 0)
            st = sto_error(STO_INTERNAL_ERROR, "cannot start the cluster's guard thread");
        else
            c->guard_started = true;
    }
    if (st) {
        cli_cluster_stop(c);
        return st;
    }
    fprintf(stderr, "rackdb server: rank %d of a cluster of %d (%s), %s\n", c->rank, c->n,
            mux_transport_name(c->mux),
            c->rank == 0 ? "the coordinator: clients' queries run on every server"
                         : "queries go to rank 0");
    *out = c;
    return STO_OK;
}

void cli_cluster_stop(cli_cluster *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    /* A rank waiting for work is woken by failing its multiplexer; the
     * others see this rank leave. */
    if (c->mux) mux_abort(c->mux, "shutting down");
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    if (c->thread_started) pthread_join(c->thread, NULL);
    if (c->guard_started) pthread_join(c->guard, NULL);
    mux_destroy(c->mux);
    mux_cluster_free(&c->cluster);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* --- the coordinator ------------------------------------------------------------------ */

/* Sends the work of statement q, waits until every rank has it. `texts`:
 * per rank a statement (WORK_SQL), or NULL and `plan` for everyone. */
static sto_status send_work(cli_cluster *c, mux_ctx *x, uint32_t q, uint8_t kind,
                            const uint8_t *plan, size_t plan_len, char **texts)
{
    uint32_t id = ctrl_id(q, 0);
    STO_TRY(mux_exchange_open(x, id, 1));
    sto_status st = STO_OK;
    for (int r = 1; !st && r < c->n; r++) {
        if (texts)
            st = send_pieces(x, id, r, kind, (const uint8_t *)texts[r], strlen(texts[r]));
        else
            st = send_pieces(x, id, r, kind, plan, plan_len);
    }
    if (!st) st = mux_exchange_done(x, CTRL_WORKER, id);
    if (!st) st = drain(x, id);
    mux_exchange_close(x, id);
    return st;
}

/* The multiplexer for the next statement, or 08006 saying why there is none. */
static sto_status take_mux(cli_cluster *c, mux_ctx **x, uint32_t *q)
{
    pthread_mutex_lock(&c->lock);
    *x = c->mux;
    sto_status st = *x ? mux_error(*x) : STO_OK;
    if (!*x || st) {
        const char *why = st ? st->message : c->why[0] ? c->why : "connecting";
        sto_status e = sto_error(STO_CONNECTION_FAILURE,
                                 "the cluster is not whole (%s); the statement needs all %d "
                                 "servers",
                                 why, c->n);
        sto_status_free(st);
        st = e;
    } else {
        *q = c->next_query;
        c->next_query = c->next_query == QUERY_ID_MAX ? 1 : c->next_query + 1;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* A distributed query's run on the coordinator, on a thread of its own:
 * the client hears of a failed server as soon as the multiplexer knows,
 * even while the local pipelines still wind down (they stop at their next
 * morsel, which for a big nested-loop join can take seconds). The job has
 * its own session (the client's settings), so the client may go on; the
 * one of client and job that finishes last frees it, and the job gives up
 * the coordinator's turn when it ends. */
typedef struct query_job {
    cli_cluster *c;
    rackdb_session *s;
    mux_ctx *x;
    sql_plan *plan;
    uint32_t q;
    rackdb_result *out;
    sto_status st;
    uint64_t bytes;
    bool done, abandoned;
} query_job;

static void job_free(query_job *j)
{
    rackdb_result_free(j->out);
    sto_status_free(j->st);
    eng_dist_plan_free(j->plan);
    rackdb_session_close(j->s);
    free(j);
}

static void *job_main(void *arg)
{
    query_job *j = arg;
    cli_cluster *c = j->c;
    uint64_t before = bytes_sent(j->x);
    set_running(c, j->s);
    j->st = prefer_mux_error(j->x, eng_dist_run(j->s, j->x, j->plan, j->q, 0, &j->out));
    set_running(c, NULL);
    j->bytes = bytes_sent(j->x) - before;
    if (!j->st) j->st = collect_statuses(c, j->x, j->q, &j->bytes);
    pthread_mutex_lock(&c->lock);
    j->done = true;
    bool abandoned = j->abandoned;
    if (!j->st) c->shuffle_bytes = (unsigned long long)j->bytes;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    if (abandoned) job_free(j);
    release(c);
    return NULL;
}

/* Plans text, ships the plan and runs it; gives up the turn when done. */
static sto_status run_query(cli_cluster *c, rackdb_session *s, const char *text,
                            rackdb_result **out)
{
    query_job *j = calloc(1, sizeof(*j));
    rackdb_error *e = NULL;
    if (!j) {
        release(c);
        return sto_error_oom();
    }
    j->c = c;
    sto_status st = eng_dist_plan(s, text, c->n, &j->plan);
    if (!st && rackdb_session_open(c->db, &j->s, &e) != RACKDB_OK) {
        st = sto_error(rackdb_error_sqlstate(e), "%s", rackdb_error_message(e));
        rackdb_error_free(e);
    }
    uint8_t *wire = NULL, *msg = NULL;
    size_t wlen = 0;
    if (!st) {
        j->s->settings = s->settings;
        st = sql_plan_encode(j->plan, &wire, &wlen);
    }
    if (!st && !(msg = malloc(wlen + 12))) st = sto_error_oom();
    if (!st) {
        put32(msg, (uint32_t)(s->settings.threads > 0 ? s->settings.threads : 1));
        put64(msg + 4, s->settings.memory_limit);
        memcpy(msg + 12, wire, wlen);
    }
    free(wire);
    if (!st) st = take_mux(c, &j->x, &j->q);
    if (!st) st = send_work(c, j->x, j->q, WORK_PLAN, msg, wlen + 12, NULL);
    free(msg);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (!st && pthread_create(&t, &attr, job_main, j) != 0)
        st = sto_error(STO_INTERNAL_ERROR, "cannot start a thread for the query");
    pthread_attr_destroy(&attr);
    if (st) {
        job_free(j);
        release(c);
        return st;
    }
    /* Wait for the job, or for the multiplexer to fail; pass on a cancel. */
    pthread_mutex_lock(&c->lock);
    while (!j->done) {
        sto_status failed = mux_error(j->x);
        if (failed) {
            j->abandoned = true;
            pthread_mutex_unlock(&c->lock);
            return failed;
        }
        if (atomic_load(&s->cancel) && !atomic_load(&j->s->cancel)) {
            /* every rank must give up the query, and at once: the local
             * pipelines only look at their cancel flag between morsels */
            rackdb_interrupt(j->s);
            mux_abort(j->x, "canceling statement due to user request");
        }
        wait_cond(c, 50);
    }
    pthread_mutex_unlock(&c->lock);
    st = j->st;
    j->st = STO_OK;
    *out = st ? NULL : j->out;
    if (!st) j->out = NULL;
    job_free(j);
    return st;
}

/* CALL dbgen(args) as CALL dbgen(args, part = r+1, parts = n) on every rank. */
static sto_status run_dbgen(cli_cluster *c, rackdb_session *s, const char *text,
                            rackdb_result **out)
{
    const char *open = strchr(text, '('), *close = strrchr(text, ')');
    if (!open || !close || close < open)
        return sto_error(STO_SYNTAX_ERROR, "CALL dbgen needs its arguments in parentheses");
    char **texts = calloc((size_t)c->n, sizeof(*texts));
    sto_status st = texts ? STO_OK : sto_error_oom();
    for (int r = 0; !st && r < c->n; r++) {
        size_t n = (size_t)(close - text) + 64;
        texts[r] = malloc(n);
        if (!texts[r]) {
            st = sto_error_oom();
            break;
        }
        snprintf(texts[r], n, "%.*s, part = %d, parts = %d)", (int)(close - text), text, r + 1,
                 c->n);
    }
    mux_ctx *x = NULL;
    uint32_t q = 0;
    if (!st) st = take_mux(c, &x, &q);
    if (!st) st = send_work(c, x, q, WORK_SQL, NULL, 0, texts);
    if (!st) {
        rackdb_error *e = NULL;
        sto_status mine = STO_OK;
        if (rackdb_exec(s, texts[0], out, &e) != RACKDB_OK)
            mine = sto_error(rackdb_error_sqlstate(e), "%s", rackdb_error_message(e));
        rackdb_error_free(e);
        uint64_t bytes = 0;
        st = collect_statuses(c, x, q, &bytes);
        if (mine) {
            sto_status_free(st);
            st = mine;
        }
        if (st) {
            rackdb_result_free(*out);
            *out = NULL;
        }
    }
    for (int r = 0; texts && r < c->n; r++)
        free(texts[r]);
    free(texts);
    return st;
}

/* A one-column text result of `name`, one row per line of lines. */
static sto_status lines_result(const char *name, const char *lines, srv_result **out)
{
    uint32_t oid = 25; /* text */
    *out = srv_result_new(1, &name, &oid);
    bool ok = *out != NULL;
    for (const char *p = lines; ok && *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p, n);
        const char *cells[1] = {line};
        ok = line && srv_result_add_row(*out, cells);
        free(line);
        p += n + (eol ? 1 : 0);
    }
    if (!ok) {
        srv_result_free(*out);
        *out = NULL;
        return sto_error_oom();
    }
    srv_result_finish(*out);
    return STO_OK;
}

/* EXPLAIN of a query on the coordinator: the distributed plan. */
static sto_status explain(cli_cluster *c, rackdb_session *s, const char *query, srv_result **out)
{
    sql_plan *plan = NULL;
    STO_TRY(eng_dist_plan(s, query, c->n, &plan));
    char *text = eng_dist_explain(plan);
    sto_status st = text ? lines_result("QUERY PLAN", text, out) : sto_error_oom();
    if (!st) snprintf((*out)->tag, sizeof((*out)->tag), "EXPLAIN");
    free(text);
    eng_dist_plan_free(plan);
    return st;
}

bool cli_cluster_answer(cli_cluster *c, rackdb_session *s, const char *text, srv_result **out,
                        sto_status *err)
{
    *out = NULL;
    *err = STO_OK;
    sql_arena *arena = sql_arena_create();
    sql_stmt_list *stmts = NULL;
    if (!arena) {
        *err = sto_error_oom();
        return true;
    }
    sto_status pst = sql_parse(arena, text, &stmts);
    if (pst || stmts->count != 1) {
        /* the engine reports syntax errors the usual way */
        sto_status_free(pst);
        sql_arena_destroy(arena);
        return false;
    }
    const sql_stmt *stmt = stmts->items[0];
    bool query = stmt->kind == SQL_STMT_SELECT;
    bool dbgen = stmt->kind == SQL_STMT_CALL && strcasecmp(stmt->call.name, "dbgen") == 0;
    bool show = stmt->kind == SQL_STMT_SHOW && stmt->show.name &&
                strcasecmp(stmt->show.name, "shuffle_bytes") == 0;
    /* EXPLAIN (not ANALYZE) of a query: the plan the cluster would run */
    char *explained = NULL;
    if (c->rank == 0 && stmt->kind == SQL_STMT_EXPLAIN && !stmt->explain.analyze &&
        stmt->explain.stmt->kind == SQL_STMT_SELECT) {
        /* the query is what follows the keyword */
        size_t at = eng_blank_prefix(text, strlen(text));
        if (strncasecmp(text + at, "explain", 7) == 0) {
            explained = strdup(text + at + 7);
            if (!explained) *err = sto_error_oom();
        }
    }
    sql_arena_destroy(arena);
    if (explained || *err) {
        if (explained) *err = explain(c, s, explained, out);
        free(explained);
        return true;
    }
    if (!query && !dbgen && !show) return false;
    if (show) {
        char value[32];
        pthread_mutex_lock(&c->lock);
        snprintf(value, sizeof(value), "%llu", c->shuffle_bytes);
        pthread_mutex_unlock(&c->lock);
        *err = lines_result("shuffle_bytes", value, out);
        if (!*err) snprintf((*out)->tag, sizeof((*out)->tag), "SHOW");
        return true;
    }
    if (c->rank != 0) {
        *err = sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "this server is rank %d of a cluster: send queries to the coordinator, "
                         "rank 0 (%s:%s in the cluster file)",
                         c->rank, c->cluster.ep[0].host, c->cluster.ep[0].port);
        return true;
    }
    rackdb_result *r = NULL;
    acquire(c);
    if (query) {
        *err = run_query(c, s, text, &r); /* releases the turn itself */
    } else {
        *err = run_dbgen(c, s, text, &r);
        release(c);
    }
    if (*err) return true;
    *out = srv_result_from_engine(r);
    if (!*out) *err = sto_error_oom();
    return true;
}
