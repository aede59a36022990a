/*
 * catalog_iface.h — what the binder may ask the catalog, and nothing more.
 *
 * sql/ sits below engine/ and must not include it, yet the binder has to
 * resolve table and view names. The engine therefore hands the binder an
 * sql_catalog: a context pointer and lookup functions. The engine implements
 * it over its catalog (engine/catalog.c), tests may implement it over a few
 * hand-made schemas. Everything a lookup returns is borrowed from the
 * catalog and stays valid while the statement holds the catalog's read lock,
 * i.e. for the whole bind/plan/execute of one statement.
 *
 * Names are compared exactly (PostgreSQL's rule); the parser has already
 * lowercased unquoted identifiers and kept quoted ones as written.
 */
#ifndef RACKDB_SQL_CATALOG_IFACE_H
#define RACKDB_SQL_CATALOG_IFACE_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/column.h"
#include "storage/stats.h"
#include "storage/table.h"

/* A base table: its columns (names, types, NOT NULL), statistics and the
 * storage the planner scans. */
typedef struct sql_table_info {
    const char *name;              /* as created */
    const sto_schema *schema;      /* column names, types, nullability */
    uint64_t rows;                 /* current row count */
    const sto_column_stats *stats; /* per column (schema->ncols), merged */
    sto_table *table;              /* the data, for scans */
} sql_table_info;

/* A view: the query text it stands for, bound in place of its name, and the
 * column names given in CREATE VIEW v (a, b) AS ... (ncols = 0: the query's
 * own names). */
typedef struct sql_view_info {
    const char *name;
    const char *sql;
    uint32_t ncols;
    const char *const *column_names;
} sql_view_info;

typedef struct sql_catalog {
    void *ctx;
    /* True and *out filled when a table of that name exists. */
    bool (*lookup_table)(void *ctx, const char *name, sql_table_info *out);
    /* True and *out filled when a view of that name exists. */
    bool (*lookup_view)(void *ctx, const char *name, sql_view_info *out);
} sql_catalog;

#endif
