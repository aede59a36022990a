/*
 * column.h — table schemas, single values and validity bitmaps.
 *
 * A schema names the columns of a table, their sto_type and whether they may
 * hold NULL. Every chunk and table of that shape points at one schema, so the
 * loader, the generator, the catalog and the code generator agree on column
 * order and widths. A column's values live in one contiguous array per chunk
 * (see chunk.h); a nullable column also carries a validity bitmap: bit r of
 * word r/64 is set when row r holds a value and clear when it is NULL.
 * NOT NULL columns have no bitmap at all.
 */
#ifndef RACKDB_STORAGE_COLUMN_H
#define RACKDB_STORAGE_COLUMN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"
#include "storage/types.h"

/* One column of a schema. */
typedef struct sto_column_def {
    char *name;    /* owned by the schema, NUL-terminated */
    sto_type type; /* full type incl. precision/scale/length */
    bool not_null; /* NOT NULL: no validity bitmap */
} sto_column_def;

/* An immutable list of columns. Built once, shared by reference. */
typedef struct sto_schema {
    uint32_t ncols;
    sto_column_def *cols;
} sto_schema;

/* A new schema with `ncols` columns; names are copied. Fails on duplicate
 * names (42701), an invalid DECIMAL precision/scale (22023) or no memory. */
sto_status sto_schema_new(uint32_t ncols, const char *const *names, const sto_type *types,
                          const bool *not_null, sto_schema **out);

/* A deep copy of a schema. */
sto_status sto_schema_copy(const sto_schema *s, sto_schema **out);

void sto_schema_free(sto_schema *s);

/* Index of the column named exactly `name`, or -1 (SQL identifiers arrive
 * already case-folded: unquoted ones lowercased, quoted ones as written). */
int sto_schema_find(const sto_schema *s, const char *name);

/* True when both schemas have the same column names, types and nullability. */
bool sto_schema_equal(const sto_schema *a, const sto_schema *b);

/* Fits string bytes to a CHAR(n)/VARCHAR(n) column: CHAR loses trailing
 * blanks; a value with more than n characters (UTF-8) is cut to n when the
 * excess is all blanks and rejected (false) otherwise. *len is updated. */
bool sto_string_fit(sto_type t, const char *s, uint32_t *len);

/* One value of any type, as the row-wise appender takes it. INTEGER, DATE,
 * BOOLEAN, BIGINT and DECIMAL (scaled) use i64; DOUBLE uses f64; CHAR and
 * VARCHAR use str, whose bytes are copied into the chunk on append. */
typedef struct sto_value {
    bool is_null;
    union {
        int64_t i64;
        double f64;
        sto_str str;
    } v;
} sto_value;

/* --- validity bitmaps ---------------------------------------------------- */

/* 64-bit words a bitmap for `rows` rows needs. */
static inline size_t sto_bitmap_words(size_t rows)
{
    return (rows + 63) / 64;
}

static inline bool sto_bitmap_get(const uint64_t *bm, size_t row)
{
    return (bm[row >> 6] >> (row & 63)) & 1;
}

static inline void sto_bitmap_set(uint64_t *bm, size_t row)
{
    bm[row >> 6] |= (uint64_t)1 << (row & 63);
}

static inline void sto_bitmap_clear(uint64_t *bm, size_t row)
{
    bm[row >> 6] &= ~((uint64_t)1 << (row & 63));
}

#endif
