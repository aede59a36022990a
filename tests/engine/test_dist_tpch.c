/*
 * test_dist_tpch.c — the 22 TPC-H queries at SF 0.01 as distributed plans
 * (eng_dist_plan + eng_dist_run) on a cluster of one server: a real
 * multiplexer over loopback whose messages to its own server skip the
 * network. The pass inserts the exchanges two servers would need, so every
 * row of every exchange is encoded into messages, handed through the
 * multiplexer and decoded again; the rows must equal the official answers.
 * Also: rows of no columns, NULLs, long strings, DISTINCT aggregates and
 * OFFSET through exchanges (against the plain executor), a distributed plan
 * without a cluster, the destination hash, errors, and cancel.
 */
#include <signal.h>

#include "test.h"

#include "engine/dist_check.h"
#include "engine/exchange.h"
#include "engine/executor.h"

static rackdb *db;
static rackdb_session *sess;
static mux_ctx *mux;

/* Runs query file q through the distributed path; returns mismatches. */
static int run_query(int q, uint64_t *sent)
{
    char *text = tc_query_text(q);
    if (!text) {
        fprintf(stderr, "cannot read query %d\n", q);
        return 1;
    }
    int bad = 0, selects = 0;
    mux_stats before, after;
    mux_get_stats(mux, &before);
    const char *p = text;
    for (char *stmt; (stmt = dc_next_select(sess, &p, &bad));) {
        selects++;
        sql_plan *plan = NULL;
        rackdb_result *r = NULL;
        sto_status st = eng_dist_plan(sess, stmt, 1, &plan);
        if (!st) st = eng_dist_run(sess, mux, plan, (uint32_t)q, 0, &r);
        if (st) {
            fprintf(stderr, "q%02d: %s\n", q, st->message);
            sto_status_free(st);
            bad++;
        } else if (!r) {
            fprintf(stderr, "q%02d: no result at the coordinator\n", q);
            bad++;
        } else {
            bad += tc_check_answer(q, r);
        }
        rackdb_result_free(r);
        eng_dist_plan_free(plan);
        free(stmt);
    }
    mux_get_stats(mux, &after);
    *sent = after.bytes_sent - before.bytes_sent;
    free(text);
    return bad + (selects != 1);
}

static void test_tpch_one_server(void)
{
    for (int q = 1; q <= 22; q++) {
        uint64_t sent = 0;
        int bad = run_query(q, &sent);
        if (bad) fprintf(stderr, "q%02d: %d mismatches\n", q, bad);
        CHECK_EQ_INT(bad, 0);
        /* one server: nothing goes over the network */
        CHECK(sent == 0);
    }
}

/* A plan made for three servers runs on one: every shuffle key hashes to
 * server 0. Same rows as the plain executor. */
static void test_plan_for_three_on_one(void)
{
    const char *sql = "SELECT o_orderpriority, count(*), avg(o_totalprice) FROM orders, customer "
                      "WHERE o_custkey = c_custkey GROUP BY o_orderpriority ORDER BY 1";
    sql_plan *plan = NULL;
    sto_status st = eng_dist_plan(sess, sql, 3, &plan);
    REQUIRE(st == NULL);
    char *text = eng_dist_explain(plan);
    REQUIRE(text != NULL);
    CHECK(strstr(text, "EXCHANGE") != NULL);
    free(text);
    rackdb_result *want = NULL, *got = NULL;
    rackdb_error *e = NULL;
    REQUIRE(rackdb_exec(sess, sql, &want, &e) == RACKDB_OK);
    st = eng_dist_run(sess, mux, plan, 900, 0, &got);
    CHECK(st == NULL);
    sto_status_free(st);
    REQUIRE(got != NULL);
    CHECK_EQ_INT((int)rackdb_result_row_count(got), (int)rackdb_result_row_count(want));
    for (uint64_t i = 0; i < rackdb_result_row_count(want); i++)
        for (uint32_t c = 0; c < 3; c++) {
            char a[64];
            snprintf(a, sizeof(a), "%s", rackdb_result_text(want, i, c));
            CHECK(tc_field_matches(rackdb_result_text(got, i, c), a));
        }
    rackdb_result_free(want);
    rackdb_result_free(got);
    eng_dist_plan_free(plan);
}

/* Queries whose exchanges carry rows of no columns, NULLs and long strings,
 * against the plain executor's answers. */
static void test_odd_rows(void)
{
    const char *queries[] = {
        "SELECT count(*) FROM nation, region",
        "SELECT count(*) FROM nation n1, nation n2 WHERE n1.n_regionkey = n2.n_regionkey",
        "SELECT r_name, max(CASE WHEN n_nationkey > 20 THEN n_comment END), count(n_name) "
        "FROM region LEFT JOIN nation ON n_regionkey = r_regionkey AND n_nationkey > 5 "
        "GROUP BY r_name ORDER BY r_name",
        "SELECT DISTINCT o_orderstatus, o_orderpriority FROM orders ORDER BY 1, 2",
        "SELECT c_mktsegment, count(DISTINCT c_nationkey), avg(c_acctbal) FROM customer "
        "GROUP BY c_mktsegment ORDER BY 1",
        "SELECT p_name FROM part ORDER BY p_retailprice DESC, p_partkey LIMIT 3 OFFSET 2",
    };
    for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++) {
        sql_plan *plan = NULL;
        rackdb_result *want = NULL, *got = NULL;
        rackdb_error *e = NULL;
        sto_status st = eng_dist_plan(sess, queries[k], 3, &plan);
        if (!st) st = eng_dist_run(sess, mux, plan, 800 + (uint32_t)k, 0, &got);
        if (st) fprintf(stderr, "%s: %s\n", queries[k], st->message);
        CHECK(st == NULL && got != NULL);
        sto_status_free(st);
        REQUIRE(rackdb_exec(sess, queries[k], &want, &e) == RACKDB_OK);
        if (got) {
            CHECK_EQ_INT((int)rackdb_result_row_count(got), (int)rackdb_result_row_count(want));
            uint32_t nc = rackdb_result_column_count(want);
            for (uint64_t i = 0;
                 i < rackdb_result_row_count(want) && i < rackdb_result_row_count(got); i++)
                for (uint32_t c = 0; c < nc; c++) {
                    bool wn = rackdb_result_is_null(want, i, c),
                         gn = rackdb_result_is_null(got, i, c);
                    CHECK(wn == gn);
                    if (wn || gn) continue;
                    char a[256];
                    snprintf(a, sizeof(a), "%s", rackdb_result_text(want, i, c));
                    if (!tc_field_matches(rackdb_result_text(got, i, c), a))
                        fprintf(stderr, "%s: row %llu col %u: %s vs %s\n", queries[k],
                                (unsigned long long)i, c, rackdb_result_text(got, i, c), a);
                    CHECK(tc_field_matches(rackdb_result_text(got, i, c), a));
                }
        }
        rackdb_result_free(want);
        rackdb_result_free(got);
        eng_dist_plan_free(plan);
    }
}

/* Without a cluster (eng_exec_env.dist NULL) an EXCHANGE keeps its rows
 * and drops its key columns: Q3's distributed plan through the plain
 * executor gives Q3's answer. */
static void test_exchanges_without_cluster(void)
{
    char *text = tc_query_text(3);
    REQUIRE(text != NULL);
    sql_plan *plan = NULL;
    sto_status st = eng_dist_plan(sess, text, 3, &plan);
    free(text);
    REQUIRE(st == NULL);
    eng_physical *ph = NULL;
    eng_exec_shared *shared = NULL;
    eng_mem *mem = NULL;
    REQUIRE(eng_physical_build(plan, &ph) == NULL);
    char *explain = NULL;
    REQUIRE(eng_explain_text(ph, NULL, &explain) == NULL);
    CHECK(strstr(explain, "EXCHANGE 3 SHUFFLE ON l_orderkey") != NULL);
    CHECK(strstr(explain, "GATHER") != NULL);
    free(explain);
    REQUIRE(eng_exec_shared_get(db, &shared) == NULL);
    REQUIRE(eng_mem_create("query", 0, shared->mem, &mem) == NULL);
    eng_exec_env env = {shared, 2, mem, &sess->cancel, false, NULL};
    eng_query_stats stats;
    eng_rowset rows;
    eng_exec_strings *strings = NULL;
    st = eng_exec_physical(&env, ph, &stats, &rows, &strings);
    CHECK(st == NULL);
    sto_status_free(st);
    if (!st) {
        CHECK_EQ_INT((int)rows.rows, 10);
        uint32_t nc = plan->ncols;
        sto_value key = eng_row_value(rows.data, nc, ph->result_slots[0],
                                      sql_plan_col(plan->ctx, plan->cols[0])->type);
        CHECK_EQ_INT((int)key.v.i64, 47714); /* the answer's first row */
    }
    eng_rowset_free(&rows);
    eng_exec_strings_free(strings);
    eng_query_stats_free(&stats);
    eng_mem_destroy(mem);
    eng_dist_plan_free(plan);
}

static void test_errors(void)
{
    sql_plan *plan = NULL;
    sto_status st = eng_dist_plan(sess, "SELECT * FROM no_such_table", 2, &plan);
    CHECK(st != NULL && plan == NULL);
    sto_status_free(st);
    st = eng_dist_plan(sess, "CREATE TABLE t (a INTEGER)", 2, &plan);
    CHECK(st != NULL && plan == NULL);
    if (st) CHECK_STREQ(st->sqlstate, STO_FEATURE_NOT_SUPPORTED);
    sto_status_free(st);
    st = eng_dist_plan(sess, "SELECT 1", 2, &plan);
    REQUIRE(st == NULL);
    rackdb_result *r = NULL;
    st = eng_dist_run(sess, mux, plan, 901, 5, &r); /* no server 5 */
    CHECK(st != NULL && r == NULL);
    sto_status_free(st);
    /* literal rows are on every server: no exchange at all */
    char *text = eng_dist_explain(plan);
    CHECK(text && !strstr(text, "EXCHANGE"));
    free(text);
    st = eng_dist_run(sess, mux, plan, 902, 0, &r);
    CHECK(st == NULL && r != NULL && rackdb_result_row_count(r) == 1);
    sto_status_free(st);
    rackdb_result_free(r);
    eng_dist_plan_free(plan);
    /* a second pass over a distributed plan is refused */
    st = eng_dist_plan(sess, "SELECT count(*) FROM nation", 2, &plan);
    REQUIRE(st == NULL);
    st = eng_distribute(plan, 2);
    CHECK(st != NULL);
    sto_status_free(st);
    eng_dist_plan_free(plan);
}

/* A canceled query fails with 57014 and aborts the multiplexer, so no
 * other server would wait for this one's rows (runs last: the multiplexer
 * stays failed). */
static void test_cancel(void)
{
    sql_plan *plan = NULL;
    sto_status st =
        eng_dist_plan(sess, "SELECT l_orderkey, count(*) FROM lineitem GROUP BY 1", 1, &plan);
    REQUIRE(st == NULL);
    rackdb_interrupt(sess);
    rackdb_result *r = NULL;
    st = eng_dist_run(sess, mux, plan, 950, 0, &r);
    atomic_store(&sess->cancel, 0);
    CHECK(st != NULL && r == NULL);
    if (st) CHECK_STREQ(st->sqlstate, STO_QUERY_CANCELED);
    sto_status_free(st);
    st = mux_error(mux);
    CHECK(st != NULL);
    sto_status_free(st);
    st = eng_dist_run(sess, mux, plan, 951, 0, &r);
    CHECK(st != NULL && r == NULL);
    sto_status_free(st);
    eng_dist_plan_free(plan);
}

/* Runs sql as a plan for two servers on m; *got is the result or NULL. */
static sto_status run_on(mux_ctx *m, const char *sql, uint32_t qid, rackdb_result **got,
                         eng_dist_stats *stats)
{
    sql_plan *plan = NULL;
    *got = NULL;
    memset(stats, 0, sizeof(*stats));
    sto_status st = eng_dist_plan(sess, sql, 2, &plan);
    if (!st) st = eng_dist_run_stats(sess, m, plan, qid, 0, got, stats);
    eng_dist_plan_free(plan);
    return st;
}

/* Streaming exchanges on a multiplexer whose pools hold 4 messages of
 * 4 KiB: the shuffle below moves about 3 MB, so the workers' messages are
 * recycled hundreds of times (a worker waits for a free one: backpressure)
 * and the answer is still the plain executor's. The workers sent most rows
 * while their pipeline ran. Then a worker fails in the middle of an
 * exchange (division by zero in rows near the end of lineitem, after
 * batches went out): the query fails with that error, and the multiplexer
 * is failed, so any other server would stop waiting (runs last on it). */
static void test_stream_backpressure(void)
{
    char text[64];
    snprintf(text, sizeof(text), "127.0.0.1:%d\n", dc_free_port());
    mux_cluster cl;
    mux_ctx *small = NULL;
    int workers = 0;
    sto_status st = eng_dist_mux_workers(db, &workers);
    if (!st) st = dc_mux_sized(text, 0, workers, 4096, 4, &cl, &small);
    REQUIRE(st == NULL);
    const char *sql = "SELECT count(*), sum(l_linenumber), max(l_comment) FROM "
                      "(SELECT DISTINCT l_orderkey, l_linenumber, l_comment FROM lineitem) t";
    rackdb_result *want = NULL, *got = NULL;
    rackdb_error *e = NULL;
    REQUIRE(rackdb_exec(sess, sql, &want, &e) == RACKDB_OK);
    eng_dist_stats ds;
    st = run_on(small, sql, 700, &got, &ds);
    if (st) fprintf(stderr, "%s: %s\n", sql, st->message);
    CHECK(st == NULL && got != NULL);
    sto_status_free(st);
    for (uint32_t c = 0; got && c < 3; c++)
        CHECK_STREQ(rackdb_result_text(got, 0, c), rackdb_result_text(want, 0, c));
    CHECK(ds.rows_received >= 60175);
    CHECK(ds.rows_received == ds.rows_streamed + ds.rows_at_end);
    CHECK(ds.rows_streamed > ds.rows_at_end);
    rackdb_result_free(want);
    rackdb_result_free(got);

    const char *bad = "SELECT l_linenumber, count(DISTINCT l_comment) FROM lineitem "
                      "WHERE 1 / (CASE WHEN l_orderkey > 55000 THEN 0 ELSE 1 END) = 1 "
                      "GROUP BY l_linenumber";
    st = run_on(small, bad, 701, &got, &ds);
    CHECK(st != NULL && got == NULL);
    if (st) CHECK_STREQ(st->sqlstate, STO_DIVISION_BY_ZERO);
    sto_status_free(st);
    CHECK(ds.rows_streamed > 0);
    st = mux_error(small);
    CHECK(st != NULL);
    sto_status_free(st);
    mux_destroy(small);
    mux_cluster_free(&cl);
}

/* Replicated tables: marked in the catalog, a plan moves none of their
 * rows. A query over them alone has no exchange at all (each server's
 * answer is the whole answer: the coordinator's is returned, nothing is
 * gathered and counted twice); a join with a chunked table leaves them
 * where they are; the answers stay the plain executor's. */
static void test_replicated(void)
{
    eng_catalog *c = db->catalog;
    eng_catalog_write_lock(c);
    CHECK(!eng_catalog_replicated(c, "nation"));
    REQUIRE(eng_catalog_set_replicated(c, "nation", true) == NULL);
    REQUIRE(eng_catalog_set_replicated(c, "region", true) == NULL);
    sto_status st = eng_catalog_set_replicated(c, "no_such_table", true);
    CHECK(st != NULL);
    sto_status_free(st);
    eng_catalog_unlock(c);
    const char *alone = "SELECT r_name, count(*) FROM nation, region "
                        "WHERE n_regionkey = r_regionkey GROUP BY r_name ORDER BY 1";
    const char *joined = "SELECT n_name, sum(s_acctbal) FROM supplier, nation "
                         "WHERE s_nationkey = n_nationkey GROUP BY n_name ORDER BY 1";
    const char *queries[] = {alone, joined};
    for (int k = 0; k < 2; k++) {
        sql_plan *plan = NULL;
        REQUIRE(eng_dist_plan(sess, queries[k], 3, &plan) == NULL);
        char *text = eng_dist_explain(plan);
        REQUIRE(text != NULL);
        if (k == 0) CHECK(strstr(text, "EXCHANGE") == NULL);
        /* the only exchanges move supplier's partial sums and the result */
        if (k == 1) CHECK(strstr(text, "BROADCAST") == NULL);
        free(text);
        rackdb_result *want = NULL, *got = NULL;
        rackdb_error *e = NULL;
        REQUIRE(rackdb_exec(sess, queries[k], &want, &e) == RACKDB_OK);
        st = eng_dist_run(sess, mux, plan, 850 + (uint32_t)k, 0, &got);
        CHECK(st == NULL && got != NULL);
        sto_status_free(st);
        if (got) {
            CHECK_EQ_INT((int)rackdb_result_row_count(got), (int)rackdb_result_row_count(want));
            for (uint64_t i = 0; i < rackdb_result_row_count(want); i++)
                for (uint32_t col = 0; col < 2; col++) {
                    char a[64];
                    snprintf(a, sizeof(a), "%s", rackdb_result_text(want, i, col));
                    CHECK(tc_field_matches(rackdb_result_text(got, i, col), a));
                }
        }
        rackdb_result_free(want);
        rackdb_result_free(got);
        eng_dist_plan_free(plan);
    }
    /* a table replaced (CALL dbgen again, without parts) is chunked again */
    eng_catalog_write_lock(c);
    CHECK(eng_catalog_replicated(c, "nation"));
    REQUIRE(eng_catalog_set_replicated(c, "nation", false) == NULL);
    REQUIRE(eng_catalog_set_replicated(c, "region", false) == NULL);
    eng_catalog_unlock(c);
}

/* Whether `table` of an instance opened on dir is replicated; -1 when
 * the instance cannot be opened or has no such table. */
static int replicated_after_open(const char *dir, const char *table, const char *sql)
{
    rackdb *d = NULL;
    rackdb_session *s = NULL;
    rackdb_error *e = NULL;
    rackdb_result *r = NULL;
    int rc = -1;
    if (rackdb_open(dir, &d, &e) == RACKDB_OK && rackdb_session_open(d, &s, &e) == RACKDB_OK &&
        (!sql || rackdb_exec(s, sql, &r, &e) == RACKDB_OK)) {
        eng_catalog_read_lock(d->catalog);
        if (eng_catalog_table(d->catalog, table)) rc = eng_catalog_replicated(d->catalog, table);
        eng_catalog_unlock(d->catalog);
    }
    if (e) fprintf(stderr, "%s: %s\n", dir, rackdb_error_message(e));
    rackdb_error_free(e);
    rackdb_result_free(r);
    if (s) rackdb_session_close(s);
    if (d) rackdb_close(d);
    return rc;
}

/* CALL dbgen with parts marks nation and region replicated, and an
 * instance on a directory keeps that across a restart (a cluster server
 * restarted on its DIR plans them as before); a dropped table's mark goes,
 * a dbgen without parts makes them chunked again. */
static void test_replicated_persisted(void)
{
    char dir[] = "/tmp/rackdb-dist-placement-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    CHECK_EQ_INT(replicated_after_open(dir, "nation", "CALL dbgen(sf = 0.01, part = 2, parts = 3)"),
                 1);
    CHECK_EQ_INT(replicated_after_open(dir, "nation", NULL), 1);
    CHECK_EQ_INT(replicated_after_open(dir, "region", NULL), 1);
    CHECK_EQ_INT(replicated_after_open(dir, "orders", NULL), 0);
    CHECK_EQ_INT(replicated_after_open(dir, "nation", "INSERT INTO region SELECT * FROM region"),
                 1);
    CHECK_EQ_INT(replicated_after_open(dir, "region", NULL), 1);
    CHECK_EQ_INT(replicated_after_open(dir, "nation", "DROP TABLE region"), 1);
    CHECK_EQ_INT(replicated_after_open(dir, "nation", "CREATE TABLE region (r INTEGER)"), 1);
    CHECK_EQ_INT(replicated_after_open(dir, "region", NULL), 0);
    CHECK_EQ_INT(replicated_after_open(dir, "nation", "CALL dbgen(sf = 0.01)"), 0);
    CHECK_EQ_INT(replicated_after_open(dir, "nation", NULL), 0);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* Shuffle destinations depend on key values only, not on their width. */
static void test_dest_hash(void)
{
    uint8_t a[64], b[64];
    memset(a, 0, sizeof(a));
    memset(b, 0xab, sizeof(b));
    int32_t x = 123456;
    int64_t y = 123456;
    memcpy(a, &x, 4);
    memcpy(b, &y, 8);
    a[16] = b[16] = 0; /* not NULL (one column: null byte at 16) */
    sto_type ti = sto_type_make(STO_TYPE_INTEGER), tb = sto_type_make(STO_TYPE_BIGINT);
    for (int n = 1; n <= 5; n++)
        CHECK_EQ_INT(eng_exchange_dest(a, 1, 0, 1, &ti, n), eng_exchange_dest(b, 1, 0, 1, &tb, n));
    /* keys spread: 1000 keys over 3 servers, none gets nothing */
    int count[3] = {0, 0, 0};
    for (int64_t k = 0; k < 1000; k++) {
        memcpy(b, &k, 8);
        count[eng_exchange_dest(b, 1, 0, 1, &tb, 3)]++;
    }
    CHECK(count[0] > 200 && count[1] > 200 && count[2] > 200);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!tc_open_sf001(&db, &sess)) return 1;
    dc_exec(sess, "SET threads = 2");
    char cluster_text[64];
    snprintf(cluster_text, sizeof(cluster_text), "127.0.0.1:%d\n", dc_free_port());
    mux_cluster cluster;
    int workers = 0;
    sto_status st = eng_dist_mux_workers(db, &workers);
    if (!st) st = dc_mux(cluster_text, 0, workers, &cluster, &mux);
    if (st) {
        fprintf(stderr, "mux: %s\n", st->message);
        return 1;
    }
    RUN(test_dest_hash);
    RUN(test_tpch_one_server);
    RUN(test_plan_for_three_on_one);
    RUN(test_odd_rows);
    RUN(test_exchanges_without_cluster);
    RUN(test_replicated);
    RUN(test_replicated_persisted);
    RUN(test_stream_backpressure);
    RUN(test_errors);
    RUN(test_cancel);
    mux_destroy(mux);
    mux_cluster_free(&cluster);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
