/*
 * test_exec_parts_ahead.c — pipelines reading a partitioned join are
 * compiled ahead too (compile_ahead in engine/executor.c): with
 * join_algorithm = radix and = sortmerge, Q3 at SF 0.01 has 7 pipelines,
 * two of them reading a join's partitions; all but the first go to the
 * compile pool (its counters grow by 6, where they grew by 4 while
 * partition readers compiled when they ran), and the answer is the
 * official one either way.
 */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/compile_pool.h"
#include "engine/executor.h"
#include "engine/instance.h"
#include "test.h"
#include "tpch_check.h"

static rackdb *db;
static rackdb_session *sess;

static uint64_t pool_tasks(void)
{
    eng_exec_shared *shared = NULL;
    sto_status st = eng_exec_shared_get(db, &shared);
    if (st) {
        sto_status_free(st);
        return 0;
    }
    cg_compile_pool_counters c;
    cg_compile_pool_get_counters(shared->compile, &c);
    return c.by_pool + c.by_caller + c.cancelled;
}

/* Q3 under SET join_algorithm = alg: mismatches against the answer. */
static int run_q3(const char *alg, uint64_t *tasks)
{
    char set[64];
    snprintf(set, sizeof(set), "SET join_algorithm = %s", alg);
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (rackdb_exec(sess, set, &r, &e) != RACKDB_OK) {
        fprintf(stderr, "%s: %s\n", set, rackdb_error_message(e));
        rackdb_error_free(e);
        return 1;
    }
    rackdb_result_free(r);
    char *sql = tc_query_text(3);
    if (!sql) return 1;
    uint64_t before = pool_tasks();
    int bad = 0;
    if (rackdb_exec(sess, sql, &r, &e) != RACKDB_OK) {
        fprintf(stderr, "q03 (%s): %s\n", alg, rackdb_error_message(e));
        rackdb_error_free(e);
        bad = 1;
    } else {
        bad = tc_check_answer(3, r);
        rackdb_result_free(r);
    }
    *tasks = pool_tasks() - before;
    free(sql);
    return bad;
}

static void test_partition_readers_ahead(void)
{
    uint64_t tasks = 0;
    CHECK_EQ_INT(run_q3("radix", &tasks), 0);
    CHECK_EQ_INT((int)tasks, 6);
    CHECK_EQ_INT(run_q3("sortmerge", &tasks), 0);
    CHECK_EQ_INT((int)tasks, 6);
}

int main(void)
{
    if (!tc_open_sf001(&db, &sess)) return 1;
    RUN(test_partition_readers_ahead);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
