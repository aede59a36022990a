/*
 * chunk.h — a horizontal slice of a table, up to STO_CHUNK_ROWS rows.
 *
 * A chunk holds, for each column of its schema, one contiguous, 64-byte
 * aligned array of `capacity` values of the type's width (sto_type_width);
 * nullable columns also hold a validity bitmap (see column.h). All of them
 * live in one region on the NUMA node of the thread that fills the chunk.
 * Strings longer than 12 bytes point into the chunk's own string heap (rows
 * with equal strings may share one copy), so a chunk is self-contained: it
 * can be built by one thread without locks, handed to a table, scanned,
 * written to a snapshot and freed as a unit.
 *
 * Life of a chunk: sto_chunk_new → fill (row-wise with sto_chunk_append_row,
 * or column-wise by writing the arrays directly and calling
 * sto_chunk_set_rows) → sto_chunk_seal (computes statistics; the filling
 * thread should do this so it runs in parallel) → sto_table_append_chunks,
 * after which the table owns it and it must not change.
 *
 * Scans (including JIT-compiled code) read `cols[i]`, `validity[i]` and
 * `rows` directly; the layout of this struct is part of the contract.
 */
#ifndef RACKDB_STORAGE_CHUNK_H
#define RACKDB_STORAGE_CHUNK_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/column.h"
#include "storage/stats.h"
#include "storage/status.h"
#include "storage/string_heap.h"
#include "storage/types.h"

#define STO_CHUNK_ROWS 65536u

typedef struct sto_chunk {
    const sto_schema *schema; /* borrowed: must outlive the chunk */
    uint32_t rows;            /* rows filled */
    uint32_t capacity;        /* rows the arrays hold, <= STO_CHUNK_ROWS */
    void **cols;              /* cols[i]: capacity values of column i */
    uint64_t **validity;      /* validity[i]: bitmap, NULL for NOT NULL columns */
    sto_string_heap heap;     /* bytes of long strings */
    sto_column_stats *stats;  /* per column, valid once sealed */
    bool sealed;
    void *mem;        /* the region holding every array and bitmap */
    size_t mem_bytes; /* its size, for freeing */
} sto_chunk;

/* A new, empty chunk for `capacity` rows (0 or more than STO_CHUNK_ROWS mean
 * STO_CHUNK_ROWS). Validity bitmaps start all-clear (NULL) and are set as
 * rows are appended. */
sto_status sto_chunk_new(const sto_schema *schema, uint32_t capacity, sto_chunk **out);

void sto_chunk_free(sto_chunk *c);

/* Typed access to column arrays. */
static inline void *sto_chunk_column(const sto_chunk *c, uint32_t col)
{
    return c->cols[col];
}
static inline uint64_t *sto_chunk_validity(const sto_chunk *c, uint32_t col)
{
    return c->validity[col];
}

/* True when row `row` of column `col` holds a value (not NULL). */
static inline bool sto_chunk_is_valid(const sto_chunk *c, uint32_t col, uint32_t row)
{
    return !c->validity[col] || sto_bitmap_get(c->validity[col], row);
}

static inline bool sto_chunk_full(const sto_chunk *c)
{
    return c->rows >= c->capacity;
}

/* Appends one row of values (one per column). Strings are copied into the
 * chunk and CHAR values lose their trailing blanks. Errors: a NULL in a NOT
 * NULL column (23502), a string longer than its CHAR(n)/VARCHAR(n) (22001),
 * a full chunk (XX000). */
sto_status sto_chunk_append_row(sto_chunk *c, const sto_value *values);

/* Reads one value back (strings point into the chunk). */
sto_value sto_chunk_get(const sto_chunk *c, uint32_t col, uint32_t row);

/* A string reference for `len` bytes owned by the chunk: inline when short,
 * otherwise copied into the chunk's heap. False when out of memory. */
bool sto_chunk_make_str(sto_chunk *c, const char *bytes, uint32_t len, sto_str *out);

/* Declares rows [0, rows) filled after column-wise writes. Nullable columns
 * must have had their validity bits set for those rows. */
void sto_chunk_set_rows(sto_chunk *c, uint32_t rows);

/* Computes per-column statistics and marks the chunk read-only. Idempotent. */
void sto_chunk_seal(sto_chunk *c);

/* Cuts the chunk back to its first `rows` rows and recomputes statistics. */
void sto_chunk_truncate(sto_chunk *c, uint32_t rows);

#endif
