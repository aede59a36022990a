/*
 * table.h — an in-memory columnar table: a schema and a list of chunks.
 *
 * Data enters a table only as whole chunks: a loader or generator thread
 * fills and seals chunks of its own, then sto_table_append_chunks adds a
 * batch of them in one step — all of them or, on failure, none. Row-wise
 * inserts go through an appender that does the same with chunks it fills.
 * Because chunks are immutable once appended, a failed load is undone by
 * truncating back to the row count taken before it.
 *
 * Chunks may be partly filled (each loader thread's last chunk is), so scans
 * walk chunks and use each chunk's `rows`. The table keeps merged column
 * statistics for the optimizer, current after every append or truncate.
 *
 * Concurrency: appends from several threads are serialized by the table;
 * scans must not run while the table is being appended to or truncated (the
 * catalog orders writers and readers).
 */
#ifndef RACKDB_STORAGE_TABLE_H
#define RACKDB_STORAGE_TABLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/chunk.h"
#include "storage/column.h"
#include "storage/stats.h"
#include "storage/status.h"

typedef struct sto_table {
    sto_schema *schema; /* owned */
    sto_chunk **chunks; /* owned, in row order */
    size_t nchunks, chunk_cap;
    uint64_t rows;           /* sum of chunk rows */
    sto_column_stats *stats; /* per column, merged over all chunks */
    pthread_mutex_t lock;    /* serializes appends */
} sto_table;

/* A new, empty table with a copy of `schema`. */
sto_status sto_table_new(const sto_schema *schema, sto_table **out);

/* Frees the table, its schema and all its chunks. */
void sto_table_free(sto_table *t);

static inline const sto_schema *sto_table_schema(const sto_table *t)
{
    return t->schema;
}
static inline uint64_t sto_table_rows(const sto_table *t)
{
    return t->rows;
}
static inline size_t sto_table_nchunks(const sto_table *t)
{
    return t->nchunks;
}
static inline const sto_chunk *sto_table_chunk(const sto_table *t, size_t i)
{
    return t->chunks[i];
}
/* Merged statistics of column `col`. */
static inline const sto_column_stats *sto_table_stats(const sto_table *t, uint32_t col)
{
    return &t->stats[col];
}

/* A new chunk shaped like the table, for filling by the calling thread. */
sto_status sto_table_new_chunk(const sto_table *t, uint32_t capacity, sto_chunk **out);

/* Appends `n` chunks in order; seals any that are not sealed yet. On success
 * the table owns them; on failure (out of memory, a chunk built for another
 * schema) the table is unchanged and the caller still owns them. Empty
 * chunks are freed instead of kept. */
sto_status sto_table_append_chunks(sto_table *t, sto_chunk *const *chunks, size_t n);

/* Drops every row after the first `rows` (chunks beyond are freed, a chunk
 * straddling it is cut) and recomputes the statistics; undoes a change when
 * `rows` is the count taken before it. */
void sto_table_truncate(sto_table *t, uint64_t rows);

/* Reads one value by global row number (slow; for tests and small tools). */
sto_value sto_table_get(const sto_table *t, uint32_t col, uint64_t row);

/* --- row-wise appends ------------------------------------------------------ */

/* Collects rows into private chunks; commit appends them all at once, free
 * without commit discards them. */
typedef struct sto_appender sto_appender;

sto_status sto_appender_new(sto_table *t, sto_appender **out);
sto_status sto_appender_row(sto_appender *a, const sto_value *values);
sto_status sto_appender_commit(sto_appender *a);
void sto_appender_free(sto_appender *a);

#endif
