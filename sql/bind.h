/*
 * bind.h — from syntax tree to logical plan: names resolved, types checked.
 *
 * The binder walks a query's AST (sql/ast.h) against the catalog
 * (sql/catalog_iface.h) and emits the logical plan of sql/plan.h:
 *
 *   FROM items      → GET / JOIN (comma lists become CROSS joins, left-deep
 *                     in written order; the optimizer reorders them)
 *   WHERE           → FILTER
 *   GROUP BY, aggregates → AGGREGATE, then HAVING → FILTER
 *   select list     → PROJECT (plus hidden columns ORDER BY needs)
 *   DISTINCT, ORDER BY, LIMIT/OFFSET → DISTINCT, SORT, LIMIT
 *   hidden columns  → a last PROJECT drops them
 *   set operations  → SETOP; VALUES → VALUES
 *   CTEs and views  → bound afresh at every reference (fresh column ids)
 *   subqueries in expressions stay SUBQUERY expressions with their subplan
 *
 * Typing follows PostgreSQL where rackdb's types allow; docs/sql.md states
 * the rules. Semantic errors carry PostgreSQL's SQLSTATE and wording and the
 * 1-based position of the offending token in the statement text.
 */
#ifndef RACKDB_SQL_BIND_H
#define RACKDB_SQL_BIND_H

#include "sql/arena.h"
#include "sql/ast.h"
#include "sql/catalog_iface.h"
#include "sql/plan.h"
#include "storage/status.h"

/* Binds query (a SELECT, VALUES or set operation with its WITH, ORDER BY and
 * LIMIT) into a plan allocated in arena (the AST's arena may be the same).
 * On error *out is NULL and the status says what and where. */
sto_status sql_bind_query(sql_arena *arena, const sql_catalog *catalog, const sql_query *query,
                          sql_plan **out);

/* The error for date text that sto_date_parse refused, as PostgreSQL words
 * it: 22008 "date/time field value out of range" when the text is shaped
 * YYYY-MM-DD (a month or day that does not exist: 1999-02-29), else 22007
 * "invalid input syntax for type date". */
sto_status sql_date_error(const char *s, size_t len, int position);

/* PostgreSQL's name of a type for messages: "integer", "numeric",
 * "character varying", ... */
const char *sql_type_pg_name(sto_type t);

#endif
