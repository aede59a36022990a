/*
 * tpch_cluster.h — the local cluster behind `rackdb tpch run --servers N`.
 *
 * cli_tpch_cluster_start writes a cluster file of N loopback endpoints on
 * free ports, starts N `rackdb server --cluster FILE --rank i` processes
 * (this very program), waits until the coordinator (rank 0) takes clients
 * and connects to it with libpq. Statements then go to the coordinator,
 * which runs queries on all N servers; results come back as rackdb_result
 * (every column as text) so the runner checks them as it checks its own.
 * cli_tpch_cluster_stop ends the servers (SIGTERM, then SIGKILL after 10 s)
 * and waits for them; they also die with the runner (PR_SET_PDEATHSIG), and
 * Ctrl-C reaches them as it reaches the runner, so none is left behind.
 */
#ifndef RACKDB_CLI_TPCH_CLUSTER_H
#define RACKDB_CLI_TPCH_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rackdb.h"

typedef struct cli_tpch_cluster cli_tpch_cluster;

/* Starts n servers; false with a message in err. */
bool cli_tpch_cluster_start(int n, cli_tpch_cluster **out, char *err, size_t errsize);

/* Runs every statement of sql on the coordinator; *rows gets the last
 * result with rows (NULL if none), *ms the time of all of them (client
 * side). False with the message in err; *unsupported says 0A000. */
bool cli_tpch_cluster_run(cli_tpch_cluster *c, const char *sql, rackdb_result **rows, double *ms,
                          char *err, size_t errsize, bool *unsupported);

/* What the last query moved between servers (SHOW shuffle_bytes). */
uint64_t cli_tpch_cluster_shuffle_bytes(cli_tpch_cluster *c);

/* Stops the servers; true when every one exited cleanly. */
bool cli_tpch_cluster_stop(cli_tpch_cluster *c);

#endif
