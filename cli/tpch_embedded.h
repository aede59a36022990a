/*
 * tpch_embedded.h — the TPC-H queries and reference answers compiled into
 * the program (cli/tpch_embedded.c), for `rackdb tpch run`.
 */
#ifndef RACKDB_CLI_TPCH_EMBEDDED_H
#define RACKDB_CLI_TPCH_EMBEDDED_H

#define CLI_TPCH_QUERIES 22

/* dbgen's CREATE TABLE statements for the eight tables. */
extern const char cli_tpch_schema[];

/* The text of query n at [n - 1] (the specification's validation
 * parameters; q15 is create view / select / drop view). */
extern const char *const cli_tpch_queries[CLI_TPCH_QUERIES];

/* The answer of query 1..22 at scale factor sf ("0.01", "0.1" or "1"),
 * rows joined by '\n', fields by '|'; NULL when there is none. */
const char *cli_tpch_answer(const char *sf, int query);

#endif
