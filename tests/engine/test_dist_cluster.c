/*
 * test_dist_cluster.c — the 22 TPC-H queries at SF 0.01 on clusters of 2 and
 * 3 servers, each server a process of its own on loopback holding only its
 * own chunk of the data (CALL dbgen(sf = 0.01, part = rank + 1, parts = n)).
 *
 * Rank 0 plans each query (eng_dist_plan), encodes the plan
 * (sql/plan_wire.h) and hands the bytes to the other ranks through a pipe;
 * they decode it against their own tables. Every rank then runs it
 * (eng_dist_run) over the multiplexer; rank 0, the coordinator, compares
 * the gathered rows with the official answers. Each rank prints the bytes
 * its multiplexer sent per query. Then a table only rank 0 has: the others
 * scan it as empty; and queries over the replicated nation and region. A
 * rank that hangs is killed after a bounded time and fails the test.
 * Faults: a server that dies mid-query, and a worker that fails
 * mid-exchange on one server.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "test.h"

#include "engine/dist_check.h"
#include "sql/plan_wire.h"
#include "storage/table.h"

#define MAX_SERVERS 4

static sto_status lookup(void *arg, const char *name, sto_table **table, uint64_t *rows,
                         const sto_column_stats **stats)
{
    rackdb *db = arg;
    *table = eng_catalog_table(db->catalog, name);
    *rows = *table ? sto_table_rows(*table) : 0;
    *stats = NULL;
    return STO_OK;
}

static bool write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        b += w;
        n -= (size_t)w;
    }
    return true;
}

static bool read_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n) {
        ssize_t r = read(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        b += r;
        n -= (size_t)r;
    }
    return true;
}

/* Rank 0's half of shipping a plan: plans sql for n servers and sends
 * every other rank the encoding's length, then (with_bytes) the encoding;
 * a length of 0 tells them rank 0 could not plan it. Failed writes are
 * added to *bad. */
static sto_status ship_plan(rackdb_session *s, int n, const int *to, const char *sql,
                            bool with_bytes, sql_plan **plan, int *bad)
{
    uint8_t *bytes = NULL;
    size_t nbytes = 0;
    sto_status st = eng_dist_plan(s, sql, n, plan);
    if (!st) st = sql_plan_encode(*plan, &bytes, &nbytes);
    uint64_t len64 = st ? 0 : nbytes;
    for (int r = 1; r < n; r++)
        if (!write_all(to[r], &len64, 8) ||
            (with_bytes && len64 && !write_all(to[r], bytes, nbytes)))
            (*bad)++;
    free(bytes);
    return st;
}

/* Rank 0: plans, ships and runs query q; returns mismatches. */
static int coordinate(rackdb_session *s, mux_ctx *mux, int n, const int *to, int q)
{
    char *text = tc_query_text(q);
    if (!text) return 1;
    int bad = 0;
    const char *p = text;
    for (char *stmt; (stmt = dc_next_select(s, &p, &bad));) {
        sql_plan *plan = NULL;
        sto_status st = ship_plan(s, n, to, stmt, true, &plan, &bad);
        rackdb_result *res = NULL;
        if (!st) st = eng_dist_run(s, mux, plan, (uint32_t)q, 0, &res);
        if (st) {
            fprintf(stderr, "q%02d: %s\n", q, st->message);
            sto_status_free(st);
            bad++;
        } else {
            bad += res ? tc_check_answer(q, res) : 1;
        }
        rackdb_result_free(res);
        eng_dist_plan_free(plan);
        free(stmt);
    }
    free(text);
    return bad;
}

/* Rank 0: a query over a table only rank 0 has; the others decode a GET
 * without a table and scan nothing. Returns mismatches with `want` (rows
 * joined by '\n', fields by '|'). */
static int coordinate_only0(rackdb_session *s, mux_ctx *mux, int n, const int *to, int qid,
                            const char *sql, const char *want)
{
    sql_plan *plan = NULL;
    int bad = 0;
    sto_status st = ship_plan(s, n, to, sql, true, &plan, &bad);
    rackdb_result *res = NULL;
    if (!st) st = eng_dist_run(s, mux, plan, (uint32_t)qid, 0, &res);
    if (st) {
        fprintf(stderr, "%s: %s\n", sql, st->message);
        sto_status_free(st);
        bad++;
    } else {
        char got[256] = "";
        for (uint64_t i = 0; res && i < rackdb_result_row_count(res); i++)
            for (uint32_t c = 0; c < rackdb_result_column_count(res); c++)
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
                         c ? "|" : (i ? "\n" : ""), rackdb_result_text(res, i, c));
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "%s: got %s, want %s\n", sql, got, want);
            bad++;
        }
    }
    rackdb_result_free(res);
    eng_dist_plan_free(plan);
    return bad;
}

/* Another rank: takes the plan from rank 0 and runs it. */
static int follow(rackdb *db, rackdb_session *s, mux_ctx *mux, int from, int q)
{
    uint64_t len = 0;
    if (!read_all(from, &len, 8)) return 1;
    if (!len) return 0; /* rank 0 could not plan it: it says so */
    uint8_t *bytes = malloc(len);
    if (!bytes || !read_all(from, bytes, len)) {
        free(bytes);
        return 1;
    }
    sql_plan *plan = NULL;
    rackdb_result *res = NULL;
    sto_status st = sql_plan_decode(bytes, len, lookup, db, &plan);
    if (!st) st = eng_dist_run(s, mux, plan, (uint32_t)q, 0, &res);
    int bad = 0;
    if (st) {
        fprintf(stderr, "rank %d q%02d: %s\n", mux_rank(mux), q, st->message);
        sto_status_free(st);
        bad++;
    }
    if (res) bad++; /* only the coordinator gets rows */
    rackdb_result_free(res);
    sql_plan_decoded_free(plan);
    free(bytes);
    return bad;
}

/* Opens server `rank` of n: its part of the SF 0.01 data (CALL dbgen with
 * part/parts) and its multiplexer. False, the failure printed, when that
 * fails. */
static bool rank_open(int rank, int n, const char *cluster_text, rackdb **db, rackdb_session **s,
                      mux_cluster *cluster, mux_ctx **mux)
{
    rackdb_error *e = NULL;
    rackdb_result *r = NULL;
    char gen[96];
    snprintf(gen, sizeof(gen), "CALL dbgen(sf = 0.01, part = %d, parts = %d)", rank + 1, n);
    if (rackdb_open(NULL, db, &e) != RACKDB_OK || rackdb_session_open(*db, s, &e) != RACKDB_OK ||
        rackdb_exec(*s, gen, &r, &e) != RACKDB_OK) {
        fprintf(stderr, "rank %d setup: %s\n", rank, e ? rackdb_error_message(e) : "?");
        return false;
    }
    rackdb_result_free(r);
    int workers = 0;
    sto_status st = eng_dist_mux_workers(*db, &workers);
    if (!st) st = dc_mux(cluster_text, rank, workers, cluster, mux);
    if (st) {
        fprintf(stderr, "rank %d mux: %s\n", rank, st->message);
        sto_status_free(st);
        return false;
    }
    return true;
}

/* One server of the cluster; the exit code says how many queries failed. */
static int run_rank(int rank, int n, const char *cluster_text, const int *to, int from)
{
    rackdb *db = NULL;
    rackdb_session *s = NULL;
    mux_cluster cluster;
    mux_ctx *mux = NULL;
    if (!rank_open(rank, n, cluster_text, &db, &s, &cluster, &mux)) return 100;
    dc_exec(s, "SET threads = 1");
    int failed = 0;
    uint64_t total = 0;
    for (int q = 1; q <= 22; q++) {
        mux_stats before, after;
        mux_get_stats(mux, &before);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int bad = rank == 0 ? coordinate(s, mux, n, to, q) : follow(db, s, mux, from, q);
        mux_get_stats(mux, &after);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        uint64_t sent = after.bytes_sent - before.bytes_sent;
        total += sent;
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        printf("servers %d rank %d q%02d sent %llu bytes in %.0f ms%s\n", n, rank, q,
               (unsigned long long)sent, ms, bad ? " FAILED" : "");
        failed += bad != 0;
    }
    printf("servers %d rank %d all queries sent %llu bytes\n", n, rank, (unsigned long long)total);
    /* a table only rank 0 has */
    if (rank == 0) {
        failed += dc_exec(s, "CREATE TABLE only0 (a INTEGER)");
        failed += dc_exec(s, "INSERT INTO only0 VALUES (1), (2), (3)");
        failed += coordinate_only0(s, mux, n, to, 100, "SELECT count(*), sum(a) FROM only0", "3|6");
        failed += coordinate_only0(s, mux, n, to, 101,
                                   "SELECT a FROM only0 ORDER BY a DESC LIMIT 2", "3\n2");
        /* above the gather only the coordinator computes: elsewhere the
         * count would be 0 and the division fail */
        failed += coordinate_only0(s, mux, n, to, 102, "SELECT 12 / count(*) FROM only0", "4");
        /* nation and region are replicated (every rank has them whole):
         * counted once, joined where they are, and a LEFT JOIN keeping
         * the replicated side */
        failed += coordinate_only0(s, mux, n, to, 103,
                                   "SELECT count(*), sum(n_regionkey) FROM nation", "25|50");
        failed += coordinate_only0(s, mux, n, to, 104,
                                   "SELECT r_name, count(*) FROM region, nation, supplier "
                                   "WHERE r_regionkey = n_regionkey AND n_nationkey = s_nationkey "
                                   "GROUP BY r_name ORDER BY r_name",
                                   "AFRICA|21\nAMERICA|20\nASIA|27\nEUROPE|20\nMIDDLE EAST|12");
        failed += coordinate_only0(s, mux, n, to, 105,
                                   "SELECT n_name, count(s_suppkey) FROM nation LEFT JOIN supplier "
                                   "ON s_nationkey = n_nationkey AND s_acctbal > 9000 "
                                   "GROUP BY n_name ORDER BY 2 DESC, 1 LIMIT 2",
                                   "ALGERIA|1\nBRAZIL|1");
    } else {
        for (int q = 100; q <= 105; q++)
            failed += follow(db, s, mux, from, q) != 0;
    }
    fflush(stdout);
    mux_destroy(mux);
    mux_cluster_free(&cluster);
    rackdb_session_close(s);
    rackdb_close(db);
    return failed;
}

/* The fault case: rank 1 takes the plan of Q9 and dies without a word
 * (as kill -9 would leave it); rank 0 must get an error naming server 1,
 * not hang. Exit code 0 when it did. */
static int run_rank_dies(int rank, int n, const char *cluster_text, const int *to, int from)
{
    rackdb *db = NULL;
    rackdb_session *s = NULL;
    mux_cluster cluster;
    mux_ctx *mux = NULL;
    if (!rank_open(rank, n, cluster_text, &db, &s, &cluster, &mux)) return 100;
    if (rank == 1) {
        uint64_t len = 0;
        read_all(from, &len, 8);
        _exit(0); /* no goodbye, no exchange done */
    }
    /* only the length: rank 1 reads no more before it dies */
    char *text = tc_query_text(9);
    sql_plan *plan = NULL;
    int unsent = 0;
    sto_status st = ship_plan(s, n, to, text, false, &plan, &unsent);
    rackdb_result *r = NULL;
    if (!st) st = eng_dist_run(s, mux, plan, 9, 0, &r);
    int rc = 1;
    if (st) {
        fprintf(stderr, "rank 0 got: %s\n", st->message);
        rc = strstr(st->message, "server 1") ? 0 : 2;
    }
    sto_status_free(st);
    rackdb_result_free(r);
    free(text);
    eng_dist_plan_free(plan);
    mux_destroy(mux);
    mux_cluster_free(&cluster);
    rackdb_session_close(s);
    rackdb_close(db);
    return rc;
}

/* A worker of rank 1 fails in the middle of an exchange: only rank 1
 * holds the lineitem rows of orders above 55000 (dbgen's chunks split the
 * orders by key), and there the filter divides by zero after the workers
 * have streamed rows. Rank 1 gets the division by zero; rank 0 an error
 * naming server 1 (its abort), not a hang. Exit code 0 when both did. */
static int run_rank_worker_fails(int rank, int n, const char *cluster_text, const int *to, int from)
{
    rackdb *db = NULL;
    rackdb_session *s = NULL;
    mux_cluster cluster;
    mux_ctx *mux = NULL;
    if (!rank_open(rank, n, cluster_text, &db, &s, &cluster, &mux)) return 100;
    dc_exec(s, "SET threads = 2");
    const char *sql = "SELECT l_linenumber, count(DISTINCT l_comment) FROM lineitem "
                      "WHERE 1 / (CASE WHEN l_orderkey > 55000 THEN 0 ELSE 1 END) = 1 "
                      "GROUP BY l_linenumber";
    sql_plan *plan = NULL;
    sto_status st = STO_OK;
    int rc = 1;
    if (rank == 0) {
        int unsent = 0;
        st = ship_plan(s, n, to, sql, true, &plan, &unsent);
        rackdb_result *r = NULL;
        if (!st && !unsent) st = eng_dist_run(s, mux, plan, 7, 0, &r);
        if (st) fprintf(stderr, "rank 0 got: %s\n", st->message);
        rc = st && strstr(st->message, "server 1") ? 0 : 2;
        rackdb_result_free(r);
        eng_dist_plan_free(plan);
    } else {
        uint64_t len = 0;
        uint8_t *bytes = NULL;
        if (read_all(from, &len, 8) && len && (bytes = malloc(len)) && read_all(from, bytes, len))
            st = sql_plan_decode(bytes, len, lookup, db, &plan);
        else
            st = sto_error(STO_INTERNAL_ERROR, "no plan from rank 0");
        eng_dist_stats ds;
        memset(&ds, 0, sizeof(ds));
        rackdb_result *r = NULL;
        if (!st) {
            st = eng_dist_run_stats(s, mux, plan, 7, 0, &r, &ds);
            if (st)
                fprintf(stderr, "rank 1 got: %s (%llu rows streamed before)\n", st->message,
                        (unsigned long long)ds.rows_streamed);
            rc = st && !strcmp(st->sqlstate, STO_DIVISION_BY_ZERO) ? 0 : 3;
        }
        rackdb_result_free(r);
        sql_plan_decoded_free(plan);
        free(bytes);
    }
    sto_status_free(st);
    mux_destroy(mux);
    mux_cluster_free(&cluster);
    rackdb_session_close(s);
    rackdb_close(db);
    return rc;
}

/* Starts n ranks and waits for them (at most limit_s seconds). */
static void run_cluster_with(int n, int limit_s,
                             int (*rank_fn)(int, int, const char *, const int *, int))
{
    char text[MAX_SERVERS * 32] = "";
    for (int r = 0; r < n; r++) {
        int port = dc_free_port();
        REQUIRE(port > 0);
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "127.0.0.1:%d\n", port);
    }
    int pipes[MAX_SERVERS][2];
    int to[MAX_SERVERS] = {-1, -1, -1, -1};
    for (int r = 1; r < n; r++) {
        REQUIRE(pipe(pipes[r]) == 0);
        to[r] = pipes[r][1];
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pids[MAX_SERVERS];
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        REQUIRE(pids[r] >= 0);
        if (pids[r] == 0) {
            for (int k = 1; k < n; k++) {
                if (k != r) close(pipes[k][0]);
                if (r != 0) close(pipes[k][1]);
            }
            int rc = rank_fn(r, n, text, to, r ? pipes[r][0] : -1);
            fflush(stdout);
            exit(rc > 100 ? 100 : rc); /* exit, not _exit: the leak check runs */
        }
    }
    for (int r = 1; r < n; r++) {
        close(pipes[r][0]);
        close(pipes[r][1]);
    }
    time_t start = time(NULL);
    int left = n, status[MAX_SERVERS];
    bool done[MAX_SERVERS] = {false};
    while (left) {
        for (int r = 0; r < n; r++) {
            if (done[r]) continue;
            if (waitpid(pids[r], &status[r], WNOHANG) == pids[r]) {
                done[r] = true;
                left--;
            }
        }
        if (left && time(NULL) - start > limit_s) {
            fprintf(stderr, "cluster of %d did not finish within %d s\n", n, limit_s);
            for (int r = 0; r < n; r++)
                if (!done[r]) kill(pids[r], SIGKILL);
        }
        if (left) usleep(20000);
    }
    for (int r = 0; r < n; r++) {
        bool ok = WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0;
        if (!ok)
            fprintf(stderr, "servers %d rank %d: %s %d\n", n, r,
                    WIFEXITED(status[r]) ? "failed queries" : "killed by signal",
                    WIFEXITED(status[r]) ? WEXITSTATUS(status[r]) : WTERMSIG(status[r]));
        CHECK(ok);
    }
}

static void run_cluster(int n, int limit_s)
{
    run_cluster_with(n, limit_s, run_rank);
}

/* A server that dies mid-query: an error naming it, within the bound. */
static void test_peer_dies(void)
{
    run_cluster_with(2, 60, run_rank_dies);
}

/* A worker failing mid-exchange fails the query on every server. */
static void test_worker_fails(void)
{
    run_cluster_with(2, 60, run_rank_worker_fails);
}

static void test_two_servers(void)
{
    run_cluster(2, 240);
}

static void test_three_servers(void)
{
    run_cluster(3, 240);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(test_two_servers);
    RUN(test_three_servers);
    RUN(test_peer_dies);
    RUN(test_worker_fails);
    return TEST_REPORT();
}
