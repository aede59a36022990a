/*
 * catalog.h — the named tables and views of an instance.
 *
 * A table entry owns its sto_table (schema, chunks and merged statistics
 * live there); a view entry owns the query text it stands for and the
 * column names given when it was created. Tables and views share one name
 * space, as in PostgreSQL: a view cannot take a table's name.
 *
 * Names are matched exactly, as PostgreSQL does: the parser has already
 * lowercased unquoted identifiers, and a quoted one keeps its case. Errors
 * carry PostgreSQL's SQLSTATEs: 42P07 when a name is taken, 42P01 when a
 * table or view is missing, 42809 when DROP TABLE names a view or DROP VIEW a
 * table, 2BP01 when a DROP would leave a view reading a missing relation.
 *
 * Locking: a statement that only reads (a query, SHOW, COPY TO) holds the
 * read lock from binding to its last row; DDL, COPY FROM, INSERT and CALL
 * hold the write lock. The lock functions are the caller's business: the
 * functions below assume the right lock is held.
 */
#ifndef RACKDB_ENGINE_CATALOG_H
#define RACKDB_ENGINE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/catalog_iface.h"
#include "storage/status.h"
#include "storage/table.h"

typedef struct eng_catalog eng_catalog;

/* A view as stored. */
typedef struct eng_view {
    char *name;
    char *sql;      /* the query, as written */
    uint32_t ncols; /* CREATE VIEW v (a, b): 2; 0 when not written */
    char **column_names;
    /* The tables and views its query reads (directly or through other
     * views), as found when it was created: DROP refuses to orphan it. */
    uint32_t ndeps;
    char **deps;
} eng_view;

sto_status eng_catalog_new(eng_catalog **out);
void eng_catalog_free(eng_catalog *c);

void eng_catalog_read_lock(eng_catalog *c);
void eng_catalog_write_lock(eng_catalog *c);
void eng_catalog_unlock(eng_catalog *c);

/* Adds table `t` under `name`. On success the catalog owns t. When the name
 * is taken: with if_not_exists, *created = false and success (the caller
 * still owns t); otherwise 42P07. `position` goes on errors. */
sto_status eng_catalog_create_table(eng_catalog *c, const char *name, sto_table *t,
                                    bool if_not_exists, int position, bool *created);

/* Adds or replaces the table `name` (CALL dbgen). The old table is freed.
 * Fails with 42P07 when a view has that name. */
sto_status eng_catalog_replace_table(eng_catalog *c, const char *name, sto_table *t, int position);

/* Removes and frees the table. Missing: with if_exists *dropped = false and
 * success, else 42P01. A view of that name: 42809. A view reading it:
 * 2BP01 (RESTRICT; see eng_catalog_drop_dependents for CASCADE). */
sto_status eng_catalog_drop_table(eng_catalog *c, const char *name, bool if_exists, int position,
                                  bool *dropped);

/* Adds a view (name, query text, optional column names; all copied). The
 * query is bound against the catalog to record what the view reads; a query
 * that no longer binds (a snapshot's view whose table is gone) is stored
 * with the dependencies found. */
sto_status eng_catalog_create_view(eng_catalog *c, const char *name, const char *sql,
                                   uint32_t ncols, const char *const *column_names, int position);

/* Like eng_catalog_drop_table, for views: 2BP01 while another view reads
 * it. */
sto_status eng_catalog_drop_view(eng_catalog *c, const char *name, bool if_exists, int position,
                                 bool *dropped);

/* 2BP01 "cannot drop <kind> <name> because other objects depend on it" when
 * a view reads the table or view `name`, else success. DROP calls it before
 * touching anything (the snapshot on disk included). */
sto_status eng_catalog_check_dependents(const eng_catalog *c, const char *name, int position);

/* DROP ... CASCADE: drops every view that reads `name`, directly or through
 * other views (*ndropped counts them; may be NULL). `name` itself stays. */
sto_status eng_catalog_drop_dependents(eng_catalog *c, const char *name, uint32_t *ndropped);

/* Lookups; NULL when missing. */
sto_table *eng_catalog_table(const eng_catalog *c, const char *name);
const eng_view *eng_catalog_view(const eng_catalog *c, const char *name);

/* Placement on a cluster (docs/cluster.md): a table is chunked (each
 * server holds some of its rows; what CREATE TABLE and a replace make) or
 * replicated (each server holds every row, e.g. TPC-H's nation and region
 * from CALL dbgen with parts). The distribution pass reads it. */
bool eng_catalog_replicated(const eng_catalog *c, const char *name);
sto_status eng_catalog_set_replicated(eng_catalog *c, const char *name, bool replicated);

/* Iteration in creation order (for .tables, snapshots, SHOW TABLES). */
size_t eng_catalog_table_count(const eng_catalog *c);
const char *eng_catalog_table_name(const eng_catalog *c, size_t i);
sto_table *eng_catalog_table_at(const eng_catalog *c, size_t i);
size_t eng_catalog_view_count(const eng_catalog *c);
const eng_view *eng_catalog_view_at(const eng_catalog *c, size_t i);

/* The binder's view of this catalog (sql/catalog_iface.h). */
sql_catalog eng_catalog_iface(eng_catalog *c);

/* CREATE TABLE text for a table, as .schema prints it; malloc'd, NULL when
 * missing or out of memory. */
char *eng_catalog_table_ddl(const eng_catalog *c, const char *name);

#endif
