/*
 * plan_wire.h — an optimized plan as bytes: how the coordinator of a cluster
 * ships the physical plan to every server.
 *
 * Flow: coordinator parses, binds, optimizes and distributes a query into a
 * sql_plan (sql/plan.h) → sql_plan_encode → bytes over the multiplexer →
 * every server: sql_plan_decode → a fresh plan in its own arena, whose GET
 * operators point at that server's local tables (found by name through a
 * callback) → the physical planner and the pipelines, exactly as at home.
 *
 * The byte string is self-contained: a magic ("RKPL") and a version, then
 * the plan context (every column id's type, nullability and name, the
 * parameters' types), then the operator tree with its expressions, the
 * optimizer's estimates and join choices, and the output columns and names.
 * Integers are little-endian. A subplan or expression reached twice (plans
 * may share subplans) is written once and referred to by index after that,
 * so the decoded plan shares exactly what the original shared.
 *
 * Decoding trusts nothing: every length, count, enum value, column id and
 * reference is checked, nesting is bounded, and a malformed string yields an
 * error — 08P01 for a wrong magic or version, XX001 for damaged contents —
 * never a crash. What it cannot check is meaning (a well-formed plan that
 * compares a DATE with a string): plans come from the cluster's own
 * coordinator, and the multiplexer only talks to the servers of the cluster
 * file.
 */
#ifndef RACKDB_SQL_PLAN_WIRE_H
#define RACKDB_SQL_PLAN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "sql/plan.h"
#include "storage/stats.h"
#include "storage/status.h"
#include "storage/table.h"

#define SQL_PLAN_WIRE_MAGIC   "RKPL"
#define SQL_PLAN_WIRE_VERSION 1u

/* The plan as bytes: *bytes is malloc'd (caller frees), *len its size. */
sto_status sql_plan_encode(const sql_plan *p, uint8_t **bytes, size_t *len);

/* How a decoder finds the local table a GET names: *table (NULL when this
 * server has no such table: the GET then scans nothing), its row count and
 * per-column stats (may be NULL). An error aborts the decode. */
typedef sto_status (*sql_table_lookup)(void *arg, const char *name, sto_table **table,
                                       uint64_t *rows, const sto_column_stats **stats);

/* A new plan from bytes, in a fresh arena it owns. lookup may be NULL (every
 * GET then has no table, as in tests without data). When a table is found,
 * the plan's column indexes and types must match its schema (else XX001). */
sto_status sql_plan_decode(const uint8_t *bytes, size_t len, sql_table_lookup lookup, void *arg,
                           sql_plan **out);

/* Frees a decoded plan and its arena. NULL is ignored. */
void sql_plan_decoded_free(sql_plan *p);

#endif
