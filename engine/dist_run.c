/*
 * dist_run.c — planning a query for a cluster and running a distributed
 * plan on one of its servers (dist.h).
 *
 * Planning is the ordinary path (parse, bind against the catalog, optimize
 * with the session's settings) followed by the distribution pass. Running
 * cuts the plan into pipelines as for one server; the executor hands every
 * EXCHANGE sink's rows to engine/exchange.c with the cluster in
 * eng_exec_env.dist. The coordinator copies the last pipeline's rows into a
 * result; the other servers' last pipelines read no rows that count.
 */
#include <string.h>

#include "engine/dist.h"
#include "engine/exchange.h"
#include "engine/executor.h"
#include "engine/instance.h"
#include "engine/optimize.h"
#include "sql/bind.h"
#include "sql/parse.h"

void eng_dist_plan_free(sql_plan *plan)
{
    if (plan) sql_arena_destroy(plan->ctx->arena);
}

sto_status eng_dist_plan(rackdb_session *s, const char *sql, int nservers, sql_plan **out)
{
    *out = NULL;
    sql_arena *arena = sql_arena_create();
    if (!arena) return sto_error_oom();
    sql_stmt_list *stmts = NULL;
    sql_plan *plan = NULL;
    sto_status st = sql_parse(arena, sql, &stmts);
    if (!st && (stmts->count != 1 || stmts->items[0]->kind != SQL_STMT_SELECT))
        st = sto_error(STO_FEATURE_NOT_SUPPORTED,
                       "a distributed plan is made for exactly one SELECT statement");
    if (!st) {
        eng_catalog *c = s->db->catalog;
        eng_catalog_read_lock(c);
        sql_catalog cat = eng_catalog_iface(c);
        st = sql_bind_query(arena, &cat, stmts->items[0]->query, &plan);
        eng_opt_settings os = eng_opt_settings_from(&s->settings);
        if (!st) st = eng_optimize(plan, &os);
        if (!st) st = eng_distribute_placed(plan, nservers, c);
        eng_catalog_unlock(c);
    }
    if (st) {
        sql_arena_destroy(arena);
        return st;
    }
    *out = plan;
    return STO_OK;
}

char *eng_dist_explain(const sql_plan *plan)
{
    return eng_plan_explain_logical(plan);
}

sto_status eng_dist_mux_workers(rackdb *db, int *out)
{
    eng_exec_shared *shared = NULL;
    STO_TRY(eng_exec_shared_get(db, &shared));
    *out = ENG_DIST_MUX_WORKER0 + (int)eng_sched_threads(shared->sched);
    return STO_OK;
}

sto_status eng_dist_run(rackdb_session *s, mux_ctx *mux, const sql_plan *plan, uint32_t query_id,
                        int coordinator, rackdb_result **out)
{
    return eng_dist_run_stats(s, mux, plan, query_id, coordinator, out, NULL);
}

sto_status eng_dist_run_stats(rackdb_session *s, mux_ctx *mux, const sql_plan *plan,
                              uint32_t query_id, int coordinator, rackdb_result **out,
                              eng_dist_stats *dstats)
{
    *out = NULL;
    if (coordinator < 0 || coordinator >= mux_size(mux))
        return sto_error(STO_INVALID_PARAMETER_VALUE, "no server %d in a cluster of %d",
                         coordinator, mux_size(mux));
    if (mux_workers(mux) < ENG_DIST_MUX_CTRL)
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "a distributed query needs a multiplexer of %d workers, not %d",
                         ENG_DIST_MUX_CTRL, mux_workers(mux));
    eng_exec_shared *shared = NULL;
    STO_TRY(eng_exec_shared_get(s->db, &shared));
    eng_mem *mem = NULL;
    STO_TRY(eng_mem_create("query", s->settings.memory_limit, shared->mem, &mem));
    eng_catalog *c = s->db->catalog;
    eng_catalog_read_lock(c);
    eng_physical *ph = NULL;
    sto_status st = eng_physical_build(plan, &ph);
    /* Above the GATHER (the plan has at most one, on the result's path) only
     * the coordinator has rows: elsewhere an ungrouped aggregate would make
     * a row of nothing (count 0) and what follows might fail on it. Those
     * servers stop once the gather has been sent. */
    for (unsigned i = 0; !st && mux_rank(mux) != coordinator && i < ph->npipes; i++)
        if (ph->pipes[i].sink == ENG_SINK_EXCHANGE &&
            ph->pipes[i].sink_op->exchange.kind == SQL_EXCH_GATHER)
            ph->npipes = i + 1;
    eng_dist_env dist;
    eng_dist_env_init(&dist, mux, query_id, coordinator);
    unsigned threads = s->settings.threads > 0 ? (unsigned)s->settings.threads : 1;
    unsigned pool = eng_sched_threads(shared->sched);
    if (threads > pool) threads = pool;
    eng_exec_env env = {shared, threads, mem, &s->cancel, false, &dist};
    eng_query_stats stats;
    memset(&stats, 0, sizeof(stats));
    eng_rowset rows;
    memset(&rows, 0, sizeof(rows));
    eng_exec_strings *strings = NULL;
    if (st) {
        /* the others run the plan's exchanges: they must not wait for us */
        mux_abort(mux, st->message);
    } else {
        st = eng_exec_physical(&env, ph, &stats, &rows, &strings);
        /* a failure here (not the multiplexer's) would leave the others
         * waiting for this server's rows */
        if (st) mux_abort(mux, st->message);
    }
    if (!st && mux_rank(mux) == coordinator) {
        st = eng_plan_result(plan, ph, &rows, stats.compile_ms, &s->cancel, out);
    }
    eng_rowset_free(&rows);
    eng_exec_strings_free(strings);
    eng_query_stats_free(&stats);
    if (dstats)
        *dstats = (eng_dist_stats){atomic_load(&dist.rows_streamed), dist.rows_at_end,
                                   dist.rows_received};
    eng_dist_env_free(&dist);
    eng_catalog_unlock(c);
    eng_mem_destroy(mem);
    return st;
}
