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

#include "engine/executor.h"
#include "engine/instance.h"
#include "engine/optimize.h"
#include "rackdb.h"
#include "sql/bind.h"
#include "sql/parse.h"
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

/* Plans and runs QUERY with the given env settings; *out has its rows,
 * *first the first pipeline's figures. */
static sto_status run(unsigned threads, bool serial, unsigned switch_after, rackdb_result **out,
                      eng_pipe_stats *first)
{
    eng_catalog *cat = sess->db->catalog;
    sql_arena *arena = sql_arena_create();
    sql_stmt_list *list = NULL;
    sql_plan *plan = NULL;
    eng_physical *ph = NULL;
    eng_exec_shared *shared = NULL;
    eng_mem *mem = NULL;
    eng_query_stats stats = {0};
    eng_rowset rows = {0};
    eng_exec_strings *strings = NULL;
    sto_schema *schema = NULL;
    const char **names = NULL;
    char(*tmp)[16] = NULL;
    sto_type *types = NULL;
    *out = NULL;
    memset(first, 0, sizeof(*first));
    if (!arena) return sto_error_oom();
    eng_catalog_read_lock(cat);
    sto_status st = sql_parse(arena, QUERY, &list);
    sql_catalog ci = eng_catalog_iface(cat);
    if (!st) st = sql_bind_query(arena, &ci, list->items[0]->query, &plan);
    eng_opt_settings os = eng_opt_settings_default();
    os.threads = threads;
    if (!st) st = eng_optimize(plan, &os);
    if (!st) st = eng_physical_build(plan, &ph);
    if (!st) st = eng_exec_shared_get(sess->db, &shared);
    if (!st) st = eng_mem_create("query", 0, shared->mem, &mem);
    if (!st) {
        eng_exec_env env = {shared, threads, mem, &sess->cancel, false};
        env.serial_compile = serial;
        env.jit_switch_after = switch_after;
        st = eng_exec_physical(&env, ph, &stats, &rows, &strings);
        if (!st && stats.npipes) *first = stats.pipes[0];
    }
    uint32_t n = plan ? plan->ncols : 0;
    names = calloc(n ? n : 1, sizeof(*names));
    tmp = calloc(n ? n : 1, sizeof(*tmp));
    types = calloc(n ? n : 1, sizeof(*types));
    if (!st && (!names || !tmp || !types)) st = sto_error_oom();
    for (uint32_t i = 0; !st && i < n; i++) {
        snprintf(tmp[i], sizeof(tmp[i]), "c%u", i + 1);
        names[i] = tmp[i];
        types[i] = sql_plan_col(plan->ctx, plan->cols[i])->type;
    }
    if (!st) st = sto_schema_new(n, names, types, NULL, &schema);
    if (!st) st = eng_result_new_rows(schema, out);
    if (!st) st = eng_rowset_to_result(&rows, n, ph->result_slots, *out, &sess->cancel);
    eng_catalog_unlock(cat);
    first->step_rows = NULL; /* freed with stats */
    eng_rowset_free(&rows);
    eng_exec_strings_free(strings);
    eng_query_stats_free(&stats);
    eng_mem_destroy(mem);
    sto_schema_free(schema);
    free(names);
    free(tmp);
    free(types);
    sql_arena_destroy(arena);
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
