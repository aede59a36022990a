/*
 * test_exec_adaptive.c — adaptive start (engine/executor.c): a pipeline
 * whose OPT code is still compiling on the compile pool starts with FAST
 * code and switches to the OPT code between morsels. With
 * jit_switch_after = 2 and one thread, the first pipeline (a heavy
 * aggregation over SF 0.01 lineitem, OPT through RACKDB_JIT_MODE) runs
 * exactly two morsels with FAST code and the rest with OPT code; its rows
 * equal those of the same plan compiled OPT from the start (no compile
 * pool). With two threads and the switch left to the pool's timing, the
 * rows are the same again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_direct.h"
#include "test.h"
#include "tpch_check.h"

static rackdb *db;
static rackdb_session *sess;

/* A heavy aggregation. 60,000 rows do not pay for OPT code by the mode
 * rule (engine/jit_cost.h), so main() sets RACKDB_JIT_MODE=opt, which makes
 * every pipeline OPT (codegen/jit.h). */
static const char *QUERY =
    "SELECT l_returnflag, l_linestatus, count(*), "
    "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), "
    "sum(l_extendedprice * (1 - l_discount) * (1 - l_tax)), "
    "sum(l_extendedprice * (2 - l_discount) * (1 + l_tax)), "
    "sum(l_extendedprice * (2 - l_discount) * (2 - l_tax)), "
    "sum(l_quantity * (1 - l_discount) * (1 + l_tax)), "
    "sum(l_quantity * (1 + l_discount) * (3 - l_tax)), "
    "sum(l_quantity * (2 + l_discount) * (1 + l_tax)), "
    "sum(l_quantity * (1 - l_discount) * (2 + l_tax)), "
    "sum(l_extendedprice * (3 - l_discount) * (1 + l_tax)), "
    "sum(l_extendedprice * (1 - l_discount) * (3 + l_tax)), "
    "sum(l_extendedprice * (4 - l_discount) * (4 + l_tax)), "
    "sum(l_extendedprice * (5 - l_discount) * (5 + l_tax)), "
    "sum(l_extendedprice * (6 - l_discount) * (6 + l_tax)), "
    "min(l_extendedprice * l_discount + l_tax), max(l_extendedprice * l_discount - l_tax) "
    "FROM lineitem WHERE l_shipdate <= DATE '1998-09-01' "
    "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus";

/* The env settings of one run, and the first pipeline's figures. */
typedef struct adaptive_run {
    bool serial;
    unsigned switch_after;
    eng_pipe_stats first;
} adaptive_run;

static void setup(eng_exec_env *env, void *arg)
{
    const adaptive_run *a = arg;
    env->serial_compile = a->serial;
    env->jit_switch_after = a->switch_after;
}

static void done(eng_exec_env *env, sto_status st, const eng_query_stats *stats, void *arg)
{
    (void)env;
    adaptive_run *a = arg;
    if (!st && stats->npipes) a->first = stats->pipes[0];
    a->first.step_rows = NULL; /* freed with stats */
}

/* Plans and runs QUERY with the given env settings; *out has its rows,
 * *first the first pipeline's figures. */
static sto_status run(unsigned threads, bool serial, unsigned switch_after, rackdb_result **out,
                      eng_pipe_stats *first)
{
    adaptive_run a = {.serial = serial, .switch_after = switch_after};
    exec_direct_hooks h = {threads, setup, done, &a};
    sto_status st = exec_direct(sess, QUERY, &h, out);
    *first = a.first;
    if (st) fprintf(stderr, "%s %s\n", st->sqlstate, st->message);
    return st;
}

static void test_switch_mid_run(void)
{
    rackdb_result *want = NULL, *got = NULL, *two = NULL;
    eng_pipe_stats s0, s1, s2;
    sto_status st = run(1, true, 0, &want, &s0);
    REQUIRE(!st);
    CHECK(s0.mode == CG_MODE_OPT);
    CHECK(!s0.switched && s0.fast_morsels == 0);
    CHECK(rackdb_result_row_count(want) == 4);

    st = run(1, false, 2, &got, &s1);
    REQUIRE(!st);
    CHECK(s1.switched);
    CHECK(s1.mode == CG_MODE_OPT);
    CHECK_EQ_INT((int)s1.fast_morsels, 2);
    CHECK(s1.morsels > 2);
    CHECK_EQ_INT(tc_cells_differ(want, got), 0);

    st = run(2, false, 0, &two, &s2);
    REQUIRE(!st);
    CHECK_EQ_INT(tc_cells_differ(want, two), 0);
    rackdb_result_free(want);
    rackdb_result_free(got);
    rackdb_result_free(two);
}

int main(void)
{
    setenv("RACKDB_JIT_MODE", "opt", 1); /* read when the JIT is created */
    if (!tc_open_sf001(&db, &sess)) return 1;
    RUN(test_switch_mid_run);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
