/*
 * snapshot.h — saving tables to disk and reading them back.
 *
 * A snapshot is a directory holding one columnar file per table and a
 * MANIFEST naming them. A table file starts with a header (magic, format
 * version, schema, row and chunk counts) protected by a CRC32C, followed by
 * each chunk column by column: values (strings as lengths plus bytes),
 * validity bitmaps, each block with its own CRC32C. Every length read back
 * is checked against the file size before it is used, so a truncated or
 * damaged file is reported (XX001, naming the file) and never crashes.
 *
 * Saving is atomic as a whole and incremental: only the tables a save is
 * told changed are written, each under a fresh name (generation number) to
 * a temporary name, fsynced and renamed; the others keep the files the
 * current MANIFEST names. Then the new MANIFEST (per table: file, row
 * count, file size) goes through the same steps, the directory is fsynced,
 * and only then are files the new MANIFEST does not name removed (an older
 * save's, a dropped table's, an interrupted save's leftovers). A crash at
 * any point leaves the previous snapshot or the new one readable.
 */
#ifndef RACKDB_STORAGE_SNAPSHOT_H
#define RACKDB_STORAGE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/status.h"
#include "storage/table.h"

/* Saves `n` tables under their names into `dir` (created if missing),
 * replacing any snapshot there. Names must be non-empty and contain no
 * control characters. */
sto_status sto_snapshot_save(const char *dir, const char *const *names, sto_table *const *tables,
                             size_t n);

/* Like sto_snapshot_save, but writes only the tables with changed[i] true
 * (changed NULL: all). An unchanged table keeps its current file, unless the
 * current MANIFEST lacks it or its file is missing or disagrees with the
 * MANIFEST (rows, size): then it is written too. Tables the current MANIFEST
 * has but `names` lacks are dropped from the snapshot. */
sto_status sto_snapshot_save_changed(const char *dir, const char *const *names,
                                     sto_table *const *tables, const bool *changed, size_t n);

/* One table read back from a snapshot. */
typedef struct sto_snapshot_entry {
    char *name;
    sto_table *table;
} sto_snapshot_entry;

/* Reads every table of the snapshot in `dir`, in the order saved. On success
 * *entries (n of them) belongs to the caller: free with
 * sto_snapshot_entries_free. On failure nothing is returned. */
sto_status sto_snapshot_open(const char *dir, sto_snapshot_entry **entries, size_t *n);

/* Frees names and tables of entries returned by sto_snapshot_open. */
void sto_snapshot_entries_free(sto_snapshot_entry *entries, size_t n);

/* Writes / reads a single table file, the building blocks of the above.
 * The write goes to `path` itself and is fsynced, not renamed into place:
 * atomic replacement is sto_snapshot_save's job. */
sto_status sto_table_save_file(const sto_table *t, const char *path);
sto_status sto_table_load_file(const char *path, sto_table **out);

#endif
