/*
 * dist.h — distributed query execution, engine side: plans with exchange
 * operators, run by every server of a cluster over the multiplexer.
 *
 *   SQL ─parse, bind, optimize─► sql_plan ─eng_distribute─► the same plan
 *       with EXCHANGE operators (SHUFFLE / BROADCAST / GATHER) wherever rows
 *       must move so that every operator sees what it needs, whatever rows
 *       each server holds ─► (shipped to every server) ─► eng_dist_run on
 *       every server: the usual pipelines, where an EXCHANGE ends the
 *       pipeline below it (its rows are serialized into mux messages, one
 *       open message per destination) and the pipeline above reads the
 *       rows every server sent (engine/exchange.h) ─► the coordinator gets
 *       the gathered result.
 *
 * Placement: a chunked table has some of its rows on every server (TPC-H:
 * dbgen chunk rank+1 of n), nothing assumed about which rows are where; a
 * replicated table (the catalog says which: TPC-H's nation and region) is
 * whole on every server. The rules of the pass are in docs/cluster.md
 * ("Distributed plans").
 */
#ifndef RACKDB_ENGINE_DIST_H
#define RACKDB_ENGINE_DIST_H

#include <stdint.h>

#include "engine/catalog.h"
#include "net/mux/mux.h"
#include "rackdb.h"
#include "sql/plan.h"
#include "storage/status.h"

/* Plans one query statement for a cluster of nservers servers: parse, bind,
 * optimize as usual, then insert EXCHANGE operators (eng_distribute). The plan
 * owns its arena; free with eng_dist_plan_free. */
sto_status eng_dist_plan(rackdb_session *s, const char *sql, int nservers, sql_plan **out);
void eng_dist_plan_free(sql_plan *plan);

/* The distribution pass alone (for tests and for EXPLAIN). With one server
 * it still inserts the exchanges two servers would need (they then loop back
 * inside the one server), so a one-server run exercises the exchange code. */
sto_status eng_distribute(sql_plan *plan, int nservers);

/* The same, knowing which tables are replicated (eng_catalog_replicated;
 * the caller holds the catalog's read lock). eng_distribute treats every
 * table as chunked. */
sto_status eng_distribute_placed(sql_plan *plan, int nservers, const eng_catalog *catalog);

/* How many multiplexer workers eng_dist_run wants on db's instance:
 * ENG_DIST_MUX_WORKER0 (engine/exchange.h) plus a worker per thread of the
 * instance's pool, so that every thread sends its own exchange rows. A
 * multiplexer with fewer still works; the rows of threads without one are
 * sent at each exchange's end instead of as they are made. */
sto_status eng_dist_mux_workers(rackdb *db, int *out);

/* Runs a distributed plan on this server over mux. Every server of the
 * cluster calls it with an equal plan and the same query_id (exchange ids are
 * derived from query_id and exchange.id: (query_id << 8) | exchange.id); the
 * server of rank `coordinator` gets the gathered result in *out, the others
 * get *out = NULL. The mux must have been created with workers >=
 * ENG_DIST_MUX_CTRL (exchange.h: who uses which worker; the caller may use
 * ENG_DIST_MUX_CTRL for its own streams). The catalog's
 * read lock is held while the plan runs (its GETs point at its tables).
 * query_id stays below 2^23, so data exchange ids never have the top bit
 * set: ids with it are the coordinator's control streams (cli/server_cluster.h,
 * mux worker ENG_DIST_MUX_CTRL). */
sto_status eng_dist_run(rackdb_session *s, mux_ctx *mux, const sql_plan *plan, uint32_t query_id,
                        int coordinator, rackdb_result **out);

/* What the exchanges of one eng_dist_run did on this server. */
typedef struct eng_dist_stats {
    uint64_t rows_streamed; /* sent by pipeline workers while they ran */
    uint64_t rows_at_end;   /* sent after a pipeline ended (engine/exchange.h) */
    uint64_t rows_received;
} eng_dist_stats;

/* eng_dist_run, and its exchanges' figures into *stats. */
sto_status eng_dist_run_stats(rackdb_session *s, mux_ctx *mux, const sql_plan *plan,
                              uint32_t query_id, int coordinator, rackdb_result **out,
                              eng_dist_stats *stats);

/* The plan as text with estimates (eng_plan_explain_logical), exchanges
 * included; malloc'd, NULL when memory is short. */
char *eng_dist_explain(const sql_plan *plan);

#endif
