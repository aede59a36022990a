/*
 * footprint.h — how many bytes a table's data needs and how many it holds.
 *
 * The bytes a table needs are its values (rows x type width per column),
 * the validity bitmaps of nullable columns and the long-string bytes its
 * string heaps store. What it holds is more: each chunk's region is sized
 * for its capacity (a partly filled chunk's tail is address space, backed
 * only once written) and each heap's last block has room left. The loader,
 * the generator's progress output and the tests use these figures to see
 * where memory goes; nothing here touches the values themselves except
 * sto_column_footprint, which walks a column's strings.
 */
#ifndef RACKDB_STORAGE_FOOTPRINT_H
#define RACKDB_STORAGE_FOOTPRINT_H

#include <stdint.h>

#include "storage/chunk.h"
#include "storage/table.h"

typedef struct sto_footprint {
    uint64_t chunks;
    uint64_t rows;
    uint64_t value_bytes;    /* rows x width, summed over columns */
    uint64_t validity_bytes; /* bitmap words for the rows of nullable columns */
    uint64_t string_bytes;   /* long-string bytes stored in string heaps */
    uint64_t region_bytes;   /* chunk regions as allocated (capacity, 64-byte aligned) */
    uint64_t heap_bytes;     /* string heap blocks as allocated, headers included */
} sto_footprint;

/* Bytes the data needs: values, validity bitmaps and stored string bytes. */
static inline uint64_t sto_footprint_needed(const sto_footprint *f)
{
    return f->value_bytes + f->validity_bytes + f->string_bytes;
}

/* Bytes allocated for the data: regions and heap blocks. */
static inline uint64_t sto_footprint_held(const sto_footprint *f)
{
    return f->region_bytes + f->heap_bytes;
}

/* Adds chunk c's figures to *acc. */
void sto_chunk_footprint(const sto_chunk *c, sto_footprint *acc);

/* A table's figures (the sum over its chunks). */
void sto_table_footprint(const sto_table *t, sto_footprint *out);

/* Column `col` of a table alone: chunks and rows as above, value_bytes and
 * validity_bytes of this column, string_bytes the long strings' lengths
 * summed per row (a string stored once and shared by several rows counts
 * once per row); region_bytes and heap_bytes are 0 (regions and heaps are
 * shared by the columns of a chunk). */
void sto_column_footprint(const sto_table *t, uint32_t col, sto_footprint *out);

#endif
