/*
 * persist.h — keeping an instance's directory in step with its catalog.
 *
 * When an instance lives in a directory, every statement that changes data
 * or the catalog writes the new state there before it reports success: the
 * tables through a storage snapshot (storage/snapshot.h: the changed tables
 * written under fresh names, the others' files kept, then the MANIFEST
 * switched atomically), the views as a
 * small SQL file (views.sql: CREATE VIEW statements) written to a temporary
 * name, fsynced and renamed. The state to write is passed in as "the
 * catalog, minus one name, plus some new tables", so a statement can make
 * its change durable first and only then apply it to the catalog: when
 * writing fails, the catalog is untouched and the statement fails.
 *
 * All functions are no-ops (success) when dir is NULL (an in-memory
 * instance). Callers hold the catalog's write lock.
 */
#ifndef RACKDB_ENGINE_PERSIST_H
#define RACKDB_ENGINE_PERSIST_H

#include <stddef.h>

#include "engine/catalog.h"
#include "storage/status.h"
#include "storage/table.h"

/* Writes the catalog's tables without `skip` (may be NULL), with `nadd`
 * tables added (one of the same name as a catalog table replaces it). Only
 * the added tables are written; the rest keep their files. A statement that
 * changed a catalog table in place (INSERT, COPY) passes that table itself
 * as an added one. A call naming nothing (skip NULL, nadd 0) writes every
 * table, for callers that cannot say what changed. */
sto_status eng_persist_tables(const char *dir, const eng_catalog *c, const char *skip, size_t nadd,
                              const char *const *add_names, sto_table *const *add_tables);

/* Writes which tables are replicated (eng_catalog_replicated) to
 * dir/replicated; eng_persist_tables keeps it in step with the tables it
 * writes (a replaced or dropped table is no longer listed), and
 * eng_persist_load marks them again. */
sto_status eng_persist_placement(const char *dir, const eng_catalog *c);

/* Writes the catalog's views without `skip` (may be NULL) to dir/views.sql. */
sto_status eng_persist_views(const char *dir, const eng_catalog *c, const char *skip);

/* Reads the tables and views of dir into an empty catalog. A directory with
 * no snapshot yet (new or empty) loads nothing. */
sto_status eng_persist_load(const char *dir, eng_catalog *c);

#endif
