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

#endif
