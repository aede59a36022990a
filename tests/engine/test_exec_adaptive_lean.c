/*
 * test_exec_adaptive_lean.c — the lean adaptive start (engine/executor.c's
 * lean_start): with two workers and the OPT code not ready, one worker
 * compiles FAST code and runs morsels with it while the other waits for
 * the OPT code, compiling it itself when no pool thread has started it.
 *
 * Every pipeline is OPT (RACKDB_JIT_MODE=opt, read when the JIT is made)
 * and the lean start is forced (eng_exec_env.jit_lean_start). With the
 * compile pool paused and jit_switch_after = 2, what happens is fixed: the
 * FAST worker runs exactly two morsels, then both workers wait for the OPT
 * code, which one of them compiles. Checked: the rows equal those of the
 * same plan compiled OPT on one thread; the JIT compiled each code once
 * (one OPT and at most one FAST module per pipeline); with the pool
 * running and the switch left to its timing the rows are the same again;
 * an error raised by the FAST or the OPT code and a cancelled query end
 * the statement with their SQLSTATE, and nothing leaks (ASan build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/compile_pool.h"
#include "exec_direct.h"
#include "test.h"
#include "tpch_check.h"

static rackdb *db;
static rackdb_session *sess;

static const char *AGG_QUERY =
    "SELECT l_returnflag, l_linestatus, count(*), "
    "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), "
    "sum(l_quantity * (1 - l_discount) * (2 + l_tax)), "
    "min(l_extendedprice * l_discount + l_tax), max(l_extendedprice * l_discount - l_tax) "
    "FROM lineitem WHERE l_shipdate <= DATE '1998-09-01' "
    "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus";

/* Every order has a line 1, so the first morsel divides by zero. */
static const char *ERR_QUERY = "SELECT sum(l_quantity / (l_linenumber - 1)) FROM lineitem";

typedef struct how {
    unsigned threads;
    bool serial, lean, paused, cancelled;
    unsigned switch_after;
} how;

/* What a run did: its figures, and how many modules the JIT compiled. */
typedef struct ran {
    eng_pipe_stats pipes[8];
    unsigned npipes;
    uint64_t compiled;
} ran;

/* A run as `how` says, and what it did. */
typedef struct lean_run {
    how h;
    cg_jit_counters before;
    ran *rn;
} lean_run;

static void setup(eng_exec_env *env, void *arg)
{
    lean_run *l = arg;
    env->serial_compile = l->h.serial;
    env->jit_switch_after = l->h.switch_after;
    env->jit_lean_start = l->h.lean;
    cg_jit_get_counters(env->shared->jit, &l->before);
    if (l->h.paused) cg_compile_pool_pause(env->shared->compile, true);
    if (l->h.cancelled) atomic_store(&sess->cancel, 1);
}

static void done(eng_exec_env *env, sto_status st, const eng_query_stats *stats, void *arg)
{
    (void)st;
    lean_run *l = arg;
    atomic_store(&sess->cancel, 0);
    if (l->h.paused) cg_compile_pool_pause(env->shared->compile, false);
    cg_jit_counters after;
    cg_jit_get_counters(env->shared->jit, &after);
    l->rn->compiled = after.compiled - l->before.compiled;
    l->rn->npipes = stats->npipes < 8 ? stats->npipes : 8;
    for (unsigned i = 0; i < l->rn->npipes; i++) {
        l->rn->pipes[i] = stats->pipes[i];
        l->rn->pipes[i].step_rows = NULL; /* freed with stats */
    }
}

/* Plans and runs `sql` as `h` says; *out has its rows. */
static sto_status run(const char *sql, how h, rackdb_result **out, ran *rn)
{
    memset(rn, 0, sizeof(*rn));
    lean_run l = {.h = h, .rn = rn};
    exec_direct_hooks hooks = {h.threads, setup, done, &l};
    return exec_direct(sess, sql, &hooks, out);
}

/* Modules a run should have compiled: one per pipeline, but for a lean
 * start its FAST code if a morsel ran it and its OPT code if a worker took
 * it (a task nobody took on a paused pool is dropped uncompiled). */
static uint64_t expected_compiles(const ran *rn)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < rn->npipes; i++) {
        const eng_pipe_stats *s = &rn->pipes[i];
        bool lean = s->lean;
        n += lean ? (uint64_t)(s->fast_morsels > 0) + (uint64_t)s->switched : 1;
    }
    return n;
}

static void test_lean_start_paused_pool(void)
{
    rackdb_result *want = NULL, *got = NULL;
    ran r0, r1;
    sto_status st = run(AGG_QUERY, (how){.threads = 1, .serial = true}, &want, &r0);
    REQUIRE(!st);
    CHECK(r0.pipes[0].mode == CG_MODE_OPT);
    CHECK(r0.pipes[0].fast_morsels == 0 && !r0.pipes[0].switched && !r0.pipes[0].lean);
    CHECK(rackdb_result_row_count(want) == 4);
    CHECK_EQ_INT((int)r0.compiled, (int)r0.npipes);

    st = run(AGG_QUERY, (how){.threads = 2, .lean = true, .paused = true, .switch_after = 2}, &got,
             &r1);
    REQUIRE(!st);
    const eng_pipe_stats *s = &r1.pipes[0];
    CHECK(s->lean);
    CHECK(s->switched);
    CHECK(s->mode == CG_MODE_OPT);
    CHECK_EQ_INT((int)s->fast_morsels, 2);
    CHECK(s->morsels > 2);
    CHECK(s->compile_ms < s->compile_work_ms); /* the query did not wait */
    CHECK_EQ_INT((int)r1.compiled, (int)expected_compiles(&r1));
    CHECK_EQ_INT(tc_cells_differ(want, got), 0);
    rackdb_result_free(want);
    rackdb_result_free(got);
}

/* With the pool running and no fixed switch, the rows are the same. */
static void test_lean_start_timing(void)
{
    rackdb_result *want = NULL, *got = NULL;
    ran r0, r1;
    REQUIRE(!run(AGG_QUERY, (how){.threads = 1, .serial = true}, &want, &r0));
    for (int i = 0; i < 3; i++) {
        sto_status st = run(AGG_QUERY, (how){.threads = 2, .lean = true}, &got, &r1);
        REQUIRE(!st);
        CHECK_EQ_INT(tc_cells_differ(want, got), 0);
        CHECK(!r1.pipes[0].switched || r1.pipes[0].mode == CG_MODE_OPT);
        CHECK(r1.pipes[0].lean || r1.pipes[0].fast_morsels == 0);
        rackdb_result_free(got);
        got = NULL;
    }
    rackdb_result_free(want);
}

static void expect_error(how h, const char *query, const char *sqlstate)
{
    rackdb_result *got = NULL;
    ran rn;
    sto_status st = run(query, h, &got, &rn);
    CHECK(st != NULL);
    if (st) CHECK_STREQ(st->sqlstate, sqlstate);
    sto_status_free(st);
    rackdb_result_free(got);
}

/* The first FAST morsel divides by zero; so does the OPT code when the
 * FAST worker runs none (switch_after = 0 with the pool paused: the FAST
 * worker's first morsel may also come before the OPT code, so either
 * code may raise it). A cancelled query stops before its first morsel and
 * drops the OPT compile, running or not. */
static void test_lean_start_errors(void)
{
    expect_error((how){.threads = 2, .lean = true, .paused = true, .switch_after = 2}, ERR_QUERY,
                 "22012");
    expect_error((how){.threads = 2, .lean = true, .paused = true}, ERR_QUERY, "22012");
    expect_error((how){.threads = 2, .lean = true}, ERR_QUERY, "22012");
    expect_error((how){.threads = 2, .lean = true, .cancelled = true}, AGG_QUERY, "57014");
    expect_error((how){.threads = 2, .lean = true, .paused = true, .cancelled = true}, AGG_QUERY,
                 "57014");
}

int main(void)
{
    setenv("RACKDB_JIT_MODE", "opt", 1); /* read when the JIT is created */
    if (!tc_open_sf001(&db, &sess)) return 1;
    RUN(test_lean_start_paused_pool);
    RUN(test_lean_start_timing);
    RUN(test_lean_start_errors);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
