/*
 * test_exec_compile_ahead.c — how pipelines get their code: the 22 TPC-H
 * queries at SF 0.01 give the official answers with pipelines compiled
 * ahead on the instance's compile pool (jit_compile_ahead = on, the
 * default), each just before it runs (off), and with the code cache
 * (jit_cache = on), where a second run of the same query takes every
 * pipeline's code from the cache. The instance's counters show which path
 * ran; a query failing in its first pipeline while later ones are queued
 * or compiling leaves no code behind; both settings round-trip through
 * SET / SHOW / SET ... TO DEFAULT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/executor.h"
#include "engine/instance.h"
#include "test.h"
#include "tpch_check.h"

static rackdb *db;
static rackdb_session *sess;

static void exec_ok(const char *sql)
{
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (rackdb_exec(sess, sql, &r, &e) != RACKDB_OK) {
        fprintf(stderr, "%s: %s\n", sql, rackdb_error_message(e));
        rackdb_error_free(e);
        CHECK(false);
        return;
    }
    rackdb_result_free(r);
}

/* SHOW name's value into buf. */
static void show(const char *name, char *buf, size_t size)
{
    char sql[64];
    snprintf(sql, sizeof(sql), "SHOW %s", name);
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    buf[0] = '\0';
    if (rackdb_exec(sess, sql, &r, &e) != RACKDB_OK) {
        rackdb_error_free(e);
        return;
    }
    if (rackdb_result_row_count(r) == 1) snprintf(buf, size, "%s", rackdb_result_text(r, 0, 0));
    rackdb_result_free(r);
}

/* Runs every statement of query q; mismatches of its last rows against the
 * answer (1 on an error). */
static int run_query(int q)
{
    char *sql = tc_query_text(q);
    if (!sql) return 1;
    rackdb_result *rows = NULL;
    rackdb_error *e = NULL;
    int bad = 0;
    const char *next = sql;
    for (;;) { /* q15: a view, the query, DROP VIEW */
        rackdb_result *one = NULL;
        rackdb_code c = rackdb_next(sess, &next, &one, &e);
        if (c == RACKDB_DONE) break;
        if (c != RACKDB_OK) {
            fprintf(stderr, "q%02d: %s\n", q, rackdb_error_message(e));
            rackdb_error_free(e);
            bad = 1;
            break;
        }
        if (one && rackdb_result_has_rows(one)) {
            rackdb_result_free(rows);
            rows = one;
        } else {
            rackdb_result_free(one);
        }
    }
    if (!bad) bad = rows ? tc_check_answer(q, rows) : 1;
    rackdb_result_free(rows);
    free(sql);
    return bad;
}

static void all_queries(const char *label)
{
    for (int q = 1; q <= 22; q++) {
        int bad = run_query(q);
        if (bad) fprintf(stderr, "  q%02d failed (%s)\n", q, label);
        CHECK_EQ_INT(bad, 0);
    }
}

static uint64_t pool_compiles(void)
{
    cg_compile_pool_counters c;
    cg_compile_pool_get_counters(db->exec->compile, &c);
    return c.by_pool + c.by_caller;
}

static void test_ahead_and_serial(void)
{
    exec_ok("SET threads = 2");
    all_queries("ahead, 2 threads");
    REQUIRE(db->exec);
    uint64_t ahead = pool_compiles();
    /* every TPC-H query has a scan pipeline after its first */
    CHECK(ahead >= 22);

    exec_ok("SET jit_compile_ahead = off");
    all_queries("serial, 2 threads");
    CHECK_EQ_INT(pool_compiles(), ahead);
    exec_ok("SET jit_compile_ahead TO DEFAULT");

#if !defined(__SANITIZE_ADDRESS__) /* ten times slower there: 2 threads only */
    exec_ok("SET threads = 1");
    all_queries("ahead, 1 thread");
    CHECK(pool_compiles() > ahead);
#endif
    exec_ok("SET threads TO DEFAULT");

    cg_jit_counters jc;
    cg_jit_get_counters(db->exec->jit, &jc);
    CHECK_EQ_INT(jc.live_code, 0);
    CHECK_EQ_INT(jc.cache_entries, 0);
    CHECK_EQ_INT(jc.cache_hits, 0);
}

/* Queries whose code bakes in no address that changes from run to run:
 * scans of tables (whose chunk arrays stay put) into aggregates and sorts,
 * and VALUES. (A join's code points at that query's own hash table, so
 * its IR, and its key in the cache, differ every time.) */
static const int cacheable[] = {1, 6};

static void cached_run(const char *label)
{
    for (size_t i = 0; i < sizeof(cacheable) / sizeof(cacheable[0]); i++) {
        int bad = run_query(cacheable[i]);
        if (bad) fprintf(stderr, "  q%02d failed (%s)\n", cacheable[i], label);
        CHECK_EQ_INT(bad, 0);
    }
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    REQUIRE(rackdb_exec(sess, "SELECT 1 + 1, 'x'", &r, &e) == RACKDB_OK);
    CHECK_STREQ(rackdb_result_text(r, 0, 0), "2");
    CHECK_STREQ(rackdb_result_text(r, 0, 1), "x");
    rackdb_result_free(r);
}

static void test_cache(void)
{
    cg_jit_counters before, first, second;
    cg_jit_get_counters(db->exec->jit, &before);
    exec_ok("SET jit_cache = on");
    cached_run("cache, first run");
    cg_jit_get_counters(db->exec->jit, &first);
    CHECK(first.cache_misses > before.cache_misses);
    CHECK(first.cache_entries > 0);
    cached_run("cache, second run");
    cg_jit_get_counters(db->exec->jit, &second);
    /* the second run compiles nothing new: every pipeline hits... */
    CHECK_EQ_INT(second.compiled, first.compiled);
    CHECK_EQ_INT(second.cache_misses, first.cache_misses);
    uint64_t lookups =
        first.cache_hits + first.cache_misses - before.cache_hits - before.cache_misses;
    CHECK_EQ_INT(second.cache_hits - first.cache_hits, lookups);
    /* ...and no code outlives its query but what the cache holds */
    CHECK_EQ_INT(second.live_code, second.cache_entries);

    /* All 22 give the same answers with the cache (joins miss, harmlessly). */
#if !defined(__SANITIZE_ADDRESS__)
    all_queries("cache on");
#endif
    cg_jit_counters all;
    cg_jit_get_counters(db->exec->jit, &all);
    CHECK(all.cache_entries <= CG_CODE_CACHE_MAX);
    CHECK_EQ_INT(all.live_code, all.cache_entries);

    /* Off again: compiled anew, the cache untouched. */
    exec_ok("SET jit_cache = off");
    CHECK_EQ_INT(run_query(1), 0);
    cg_jit_counters off;
    cg_jit_get_counters(db->exec->jit, &off);
    CHECK(off.compiled > all.compiled);
    CHECK_EQ_INT(off.cache_hits, all.cache_hits);
    CHECK_EQ_INT(off.cache_misses, all.cache_misses);

    /* Emptied: nothing left, and the next cached run compiles again. */
    cg_jit_cache_clear(db->exec->jit);
    cg_jit_get_counters(db->exec->jit, &off);
    CHECK_EQ_INT(off.cache_entries, 0);
    CHECK_EQ_INT(off.live_code, 0);
    exec_ok("SET jit_cache = on");
    cached_run("cache, after clearing");
    cg_jit_counters again;
    cg_jit_get_counters(db->exec->jit, &again);
    CHECK(again.compiled > off.compiled);
    exec_ok("SET jit_cache = off");
}

/* The first pipeline to run fails while the others are queued or being
 * compiled: the error comes back, and their code is dropped. */
static void test_error_with_queued_compiles(void)
{
    const char *sql = "SELECT count(*) FROM orders, lineitem, customer "
                      "WHERE o_orderkey = l_orderkey AND c_custkey = o_custkey "
                      "AND o_totalprice / (o_orderkey - o_orderkey) > 0 "
                      "AND l_quantity / (l_orderkey - l_orderkey) > 0 "
                      "AND c_acctbal / (c_custkey - c_custkey) > 0";
    for (int i = 0; i < 5; i++) {
        rackdb_result *r = NULL;
        rackdb_error *e = NULL;
        CHECK_EQ_INT(rackdb_exec(sess, sql, &r, &e), RACKDB_ERROR);
        if (e) CHECK_STREQ(rackdb_error_sqlstate(e), "22012");
        rackdb_error_free(e);
        rackdb_result_free(r);
    }
    cg_jit_counters jc;
    cg_jit_get_counters(db->exec->jit, &jc);
    CHECK_EQ_INT(jc.live_code, 0);
    CHECK_EQ_INT(run_query(3), 0);
}

static void test_settings(void)
{
    char v[32];
    show("jit_compile_ahead", v, sizeof(v));
    CHECK_STREQ(v, "on");
    show("jit_cache", v, sizeof(v));
    CHECK_STREQ(v, "off");
    exec_ok("SET jit_cache TO true");
    show("jit_cache", v, sizeof(v));
    CHECK_STREQ(v, "on");
    exec_ok("SET jit_compile_ahead = OFF");
    show("jit_compile_ahead", v, sizeof(v));
    CHECK_STREQ(v, "off");
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    CHECK_EQ_INT(rackdb_exec(sess, "SET jit_cache = sometimes", &r, &e), RACKDB_ERROR);
    if (e) CHECK_STREQ(rackdb_error_sqlstate(e), "22023");
    rackdb_error_free(e);
    show("jit_cache", v, sizeof(v));
    CHECK_STREQ(v, "on");
    exec_ok("SET jit_cache TO DEFAULT");
    exec_ok("SET jit_compile_ahead TO DEFAULT");
    show("jit_cache", v, sizeof(v));
    CHECK_STREQ(v, "off");
    show("jit_compile_ahead", v, sizeof(v));
    CHECK_STREQ(v, "on");
}

int main(void)
{
    if (!tc_open_sf001(&db, &sess)) return 1;
    RUN(test_settings);
    RUN(test_ahead_and_serial);
    RUN(test_error_with_queued_compiles);
    RUN(test_cache);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
