/*
 * exec_stmt.h — running one parsed statement.
 *
 * rackdb_next (engine/instance.c) splits the text, parses one statement and
 * hands its tree here. eng_exec_stmt dispatches on the statement kind:
 * DDL and data loading act on the catalog and storage directly (under the
 * catalog's write lock, checkpointing to the instance's directory before
 * they report success); SET/SHOW act on the session; queries go to the
 * query executor. The executor (binder, optimizer, JIT-compiled pipelines)
 * plugs in at exactly one place, exec_query in exec_stmt.c; until it
 * exists, queries fail with 0A000 naming what is missing.
 */
#ifndef RACKDB_ENGINE_EXEC_STMT_H
#define RACKDB_ENGINE_EXEC_STMT_H

#include "engine/instance.h"
#include "engine/result.h"
#include "sql/ast.h"
#include "storage/column.h"
#include "storage/status.h"

/* What a statement runs with. */
typedef struct eng_stmt_ctx {
    rackdb_session *session;
    const char *text; /* the statement text positions refer to */
} eng_stmt_ctx;

/* Runs stmt; on success *out is its result. */
sto_status eng_exec_stmt(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out);

/* A schema from CREATE TABLE's column list; PRIMARY KEY columns are NOT NULL
 * (the key itself is not enforced). */
sto_status eng_schema_from_defs(const sql_column_def_list *cols, const sql_ident_list *pk,
                                sto_schema **out);

/* CALL dbgen(sf = X): the eight TPC-H tables generated in memory, replacing
 * tables of the same names (engine/call_dbgen.c). */
sto_status eng_call_dbgen(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out);

/* The TPC-H schema (dbgen's DDL, /work/shared/tpch/schema.sql), embedded. */
extern const char eng_tpch_schema_sql[];

#endif
