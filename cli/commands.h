/*
 * commands.h — the rackdb subcommands that main.c dispatches to.
 *
 * Each takes the arguments after its own name's parent (argv[0] is the
 * subcommand's name, e.g. "gen" for `rackdb tpch gen ...`) and returns the
 * process exit status: 0 on success, non-zero with a message on stderr.
 */
#ifndef RACKDB_CLI_COMMANDS_H
#define RACKDB_CLI_COMMANDS_H

/* rackdb tpch gen --sf SF [--out DIR] [--tables t1,t2] [--parts N --part I]
 *                 [--threads N]: dbgen-identical .tbl files. */
int cli_tpch_gen(int argc, char **argv);

/* rackdb tpch run --sf SF [--queries 1,6] [--threads N] [--reps R] [--check]
 *                 [--queries-dir DIR] [--results DIR] [--json FILE]
 *                 [--data DIR]: runs TPC-H queries on data made in memory
 *                 (or loaded from .tbl files), prints timings, checks answers. */
int cli_tpch_run(int argc, char **argv);

/* rackdb server [--host ADDR] [--port N] [--password-file FILE]
 *               [--max-connections N] [DIR]: the PostgreSQL protocol server
 * (cli/server.c). argv[0] is "server". */
int cli_server(int argc, char **argv);

#endif
