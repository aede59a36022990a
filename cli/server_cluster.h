/*
 * server_cluster.h — `rackdb server --cluster FILE --rank I`: one server of
 * a cluster, and on rank 0 the coordinator.
 *
 * Every rank keeps a multiplexer (net/mux) to all the others, made and,
 * after any failure, made again by a control thread: "the cluster is whole"
 * exactly when that multiplexer is up. Rank 0 is the coordinator: its
 * clients' queries run on the whole cluster.
 *
 *   client ─SELECT─► rank 0: eng_dist_plan (parse, bind, optimize, insert
 *     exchanges) ─sql_plan_encode─► plan message, query id q, to every rank
 *     over the control stream of q ─► every rank: sql_plan_decode against
 *     its own tables ─► eng_dist_run(q) on all ranks at once (the exchanges
 *     move rows between them) ─► every rank reports its status and the
 *     bytes it sent ─► rank 0 answers the client with the gathered rows.
 *
 * CALL dbgen(sf = X) goes to every rank as CALL dbgen(sf = X, part = r+1,
 * parts = n): each generates its own chunk. Every other statement (DDL,
 * views, INSERT, COPY, SET, SHOW, EXPLAIN) runs on the coordinator alone;
 * its session's threads and memory_limit travel with each plan. The ranks
 * other than 0 take no queries (an error names the coordinator).
 *
 * Control streams use multiplexer exchange ids with the top bit set:
 * 0x80000000 | q << 8 | 0 (the plan or statement) and | 1 (the statuses),
 * q = 1 .. 2^23-1, counted from 1 again each time the multiplexer is made.
 * The data exchanges of query q are (q << 8) | id (engine/exchange.h), so
 * the two never meet. Control messages are the multiplexer's worker
 * ENG_DIST_MUX_CTRL (the exchange code uses the others: engine/exchange.h).
 */
#ifndef RACKDB_CLI_SERVER_CLUSTER_H
#define RACKDB_CLI_SERVER_CLUSTER_H

#include <stdbool.h>

#include "cli/server.h"
#include "net/mux/mux.h"
#include "rackdb.h"
#include "storage/status.h"

typedef struct cli_cluster cli_cluster;

typedef struct cli_cluster_options {
    const char *file; /* the cluster file */
    int rank;
    mux_transport_kind transport;
    int peer_timeout_ms; /* a silent server is failed after this (0: mux default) */
} cli_cluster_options;

/* Loads the cluster file, makes the multiplexer once (so that a wrong
 * rank, a missing RDMA device or a busy port fail start-up with a clear
 * message) and starts the control thread that keeps it up. */
sto_status cli_cluster_start(rackdb *db, const cli_cluster_options *o, cli_cluster **out);

/* Stops the control thread (a rank waiting for work leaves the cluster,
 * which the others see as a failure) and frees everything. */
void cli_cluster_stop(cli_cluster *c);

/* Runs `text` (one statement) when it is the cluster's business: a query
 * or CALL dbgen on the coordinator, a query refused elsewhere, SHOW
 * shuffle_bytes (what the last distributed query of this server moved
 * between servers, summed over the servers). True when handled: then *out
 * (or *err) is the answer. */
bool cli_cluster_answer(cli_cluster *c, rackdb_session *s, const char *text, srv_result **out,
                        sto_status *err);

#endif
