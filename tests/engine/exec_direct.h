/*
 * exec_direct.h — runs one SELECT through the executor itself (parse, bind,
 * optimize, physical plan, eng_exec_physical) instead of through
 * rackdb_query, so a test can set the eng_exec_env fields SQL cannot reach
 * (compile order, forced code switches, a paused compile pool, a raised
 * cancel flag) and read the run's per-pipeline figures. The rows come back
 * as the rackdb_result a query would give (eng_plan_result).
 *
 *   sql ─► plan ─► setup(env) ─► eng_exec_physical ─► done(env, st, stats)
 *                                        └─► rows ─► *out
 */
#ifndef RACKDB_TESTS_EXEC_DIRECT_H
#define RACKDB_TESTS_EXEC_DIRECT_H

#include "engine/executor.h"
#include "engine/instance.h"
#include "engine/optimize.h"
#include "rackdb.h"
#include "sql/bind.h"
#include "sql/parse.h"

typedef struct exec_direct_hooks {
    unsigned threads;
    /* before the run: set env fields, pause the pool, raise the cancel flag */
    void (*setup)(eng_exec_env *env, void *arg);
    /* after the run, whether or not it failed (st); stats are freed after */
    void (*done)(eng_exec_env *env, sto_status st, const eng_query_stats *stats, void *arg);
    void *arg;
} exec_direct_hooks;

/* Runs a bound, optimized plan the way a SELECT does, with h->threads
 * workers; *out has its rows (NULL on error). The caller holds the
 * catalog's read lock. */
static inline sto_status exec_direct_plan(rackdb_session *sess, const sql_plan *plan,
                                          const exec_direct_hooks *h, rackdb_result **out)
{
    eng_physical *ph = NULL;
    eng_exec_shared *shared = NULL;
    eng_mem *mem = NULL;
    eng_query_stats stats = {0};
    eng_rowset rows = {0};
    eng_exec_strings *strings = NULL;
    *out = NULL;
    sto_status st = eng_physical_build(plan, &ph);
    if (!st) st = eng_exec_shared_get(sess->db, &shared);
    if (!st) st = eng_mem_create("query", 0, shared->mem, &mem);
    if (!st) {
        eng_exec_env env = {shared, h->threads, mem, &sess->cancel, false};
        if (h->setup) h->setup(&env, h->arg);
        st = eng_exec_physical(&env, ph, &stats, &rows, &strings);
        if (h->done) h->done(&env, st, &stats, h->arg);
    }
    if (!st) st = eng_plan_result(plan, ph, &rows, 0, &sess->cancel, out);
    eng_rowset_free(&rows);
    eng_exec_strings_free(strings);
    eng_query_stats_free(&stats);
    eng_mem_destroy(mem);
    return st;
}

/* Plans and runs `sql` on `sess`'s database with h->threads workers; *out
 * has its rows (NULL on error). */
static inline sto_status exec_direct(rackdb_session *sess, const char *sql,
                                     const exec_direct_hooks *h, rackdb_result **out)
{
    eng_catalog *cat = sess->db->catalog;
    sql_arena *arena = sql_arena_create();
    sql_stmt_list *list = NULL;
    sql_plan *plan = NULL;
    *out = NULL;
    if (!arena) return sto_error_oom();
    eng_catalog_read_lock(cat);
    sto_status st = sql_parse(arena, sql, &list);
    sql_catalog ci = eng_catalog_iface(cat);
    if (!st) st = sql_bind_query(arena, &ci, list->items[0]->query, &plan);
    eng_opt_settings os = eng_opt_settings_default();
    os.threads = h->threads;
    if (!st) st = eng_optimize(plan, &os);
    if (!st) st = exec_direct_plan(sess, plan, h, out);
    eng_catalog_unlock(cat);
    sql_arena_destroy(arena);
    return st;
}

#endif
