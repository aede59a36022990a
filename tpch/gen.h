/*
 * gen.h — the TPC-H data generator: dbgen 2.14.0's rows, byte for byte.
 *
 * A tpch_gen holds what every row needs and never changes once built: the
 * scale factor's row counts, the value lists and the 300 MiB comment text
 * pool (tpch/text.h). Rows are produced per table over any range of *units*
 * [first, last): a unit is one row of the table that drives generation — a
 * part (with its four partsupp rows), a supplier, a customer, an order (with
 * its one to seven lineitems), a nation or a region. Every column draws from
 * its own random stream that can jump to any unit (tpch/rng.h), so threads
 * generate disjoint unit ranges independently and the result is the same as
 * one pass. Partsupp rows come from part units, lineitem rows from order
 * units; asking for both tables of a pair costs one pass.
 *
 * Rows are handed to a tpch_sink as typed values in the column order of the
 * TPC-H schema (tpch_table_info): integers and keys as int64, DECIMAL(15,2)
 * as int64 hundredths, DATE as days since 1970-01-01 (storage/types.h),
 * strings as bytes + length. Value pointers are valid only during the call.
 * Two sinks exist: the .tbl text writer (tpch/gen_files.h) and the
 * in-memory table writer (tpch/gen_table.h).
 *
 * A built tpch_gen is read-only: any number of threads may call
 * tpch_gen_rows on it at once.
 */
#ifndef RACKDB_TPCH_GEN_H
#define RACKDB_TPCH_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/status.h"
#include "storage/types.h"

/*  id         file name */
#define TPCH_TABLE_LIST(X)                                                                         \
    X(PART, "part")                                                                                \
    X(PARTSUPP, "partsupp")                                                                        \
    X(SUPPLIER, "supplier")                                                                        \
    X(CUSTOMER, "customer")                                                                        \
    X(ORDERS, "orders")                                                                            \
    X(LINEITEM, "lineitem")                                                                        \
    X(NATION, "nation")                                                                            \
    X(REGION, "region")

typedef enum tpch_table_id {
#define TPCH_TABLE_ENUM(id, name) TPCH_##id,
    TPCH_TABLE_LIST(TPCH_TABLE_ENUM)
#undef TPCH_TABLE_ENUM
        TPCH_TABLE_COUNT
} tpch_table_id;

#define TPCH_BIT(t)     (1u << (t))
#define TPCH_ALL_TABLES ((1u << TPCH_TABLE_COUNT) - 1)

/* How the .tbl text spells a column (dbgen prints l_quantity, a DECIMAL,
 * as a plain integer). */
typedef enum tpch_tbl_format {
    TPCH_TBL_INT,    /* i as a decimal integer */
    TPCH_TBL_MONEY,  /* i hundredths as [-]d.dd */
    TPCH_TBL_WHOLE,  /* i hundredths, printed as the integer i / 100 */
    TPCH_TBL_DATE,   /* i days since 1970-01-01 as YYYY-MM-DD */
    TPCH_TBL_STRING, /* s, len bytes */
} tpch_tbl_format;

typedef struct tpch_column {
    const char *name; /* lower case, as in schema.sql */
    sto_type type;
    tpch_tbl_format format;
} tpch_column;

typedef struct tpch_table_info {
    const char *name;
    int column_count;
    const tpch_column *columns;
    tpch_table_id unit_table; /* whose rows are this table's units */
} tpch_table_info;

const tpch_table_info *tpch_table_info_get(tpch_table_id t);

/* For the integer-like columns whose values lie in a small range whatever
 * the scale factor (sizes, quantities, discounts, dates, nation keys, ...):
 * true with that range [*lo, *hi] in the column's int64 units; false for
 * the others (keys, prices, strings). Sinks may count such values with a
 * bitmap instead of hashing every one. */
bool tpch_column_range(tpch_table_id t, int column, int64_t *lo, int64_t *hi);

/* Table id from its name ("lineitem", any case); false when unknown. */
bool tpch_table_by_name(const char *name, tpch_table_id *out);

/* Bytes readable at and after every string value's start, whatever its
 * length: sinks may copy short strings in one block of this size. */
#define TPCH_STR_SLACK 32

/* One column value of a generated row. `listed` marks a string taken from
 * a fixed list (a picked list entry, a flag, a manufacturer or brand): its
 * address always holds the same bytes while the generator lives and the
 * entries of one list lie TPCH_STR_SLACK bytes apart, so a sink may store
 * each such string once and recognize it by address. `pooled` marks a
 * comment that lies in the generator's text pool: its bytes stay put for as
 * long as the pool lives, which a sink may extend past the generator's
 * life (tpch_gen_text_retain) to keep pointing at them instead of copying. */
typedef struct tpch_value {
    int64_t i;
    const char *s;
    uint32_t len;
    uint16_t listed;
    uint16_t pooled;
} tpch_value;

/* Where rows go. `row` gets the values of one row of `table`; returning an
 * error stops generation and is passed on to the caller. */
typedef struct tpch_sink tpch_sink;
struct tpch_sink {
    sto_status (*row)(tpch_sink *self, tpch_table_id table, const tpch_value *values);
};

typedef struct tpch_gen tpch_gen;

/* Checks a scale factor the way dbgen accepts it: finite and > 0. Scale
 * factors below 1 scale row counts by floor(1000 * sf) / 1000; above 1 the
 * integer part counts (dbgen -s 2.5 is SF 2); 30000 and above need dbgen's
 * 64-bit streams, which this generator does not implement. */
sto_status tpch_scale_check(double sf);

/* Builds a generator for scale factor sf, using up to `threads` threads
 * for the text pool (the only costly step, ~0.3 s on 2 cores). */
sto_status tpch_gen_create(double sf, int threads, tpch_gen **out);
void tpch_gen_free(tpch_gen *g);

/* A new reference to the text pool that `pooled` values point into; the
 * pool outlives the generator until every reference is dropped with
 * tpch_gen_text_release (whose signature suits sto_heap_keep). */
void *tpch_gen_text_retain(const tpch_gen *g);
void tpch_gen_text_release(void *text);

/* Units of a table (parts for partsupp, orders for lineitem). */
int64_t tpch_gen_units(const tpch_gen *g, tpch_table_id t);

/* Rows a table gets: units, x4 for partsupp; lineitem's count is only known
 * by generating it, so this returns -1 for it. */
int64_t tpch_gen_rows_exact(const tpch_gen *g, tpch_table_id t);

/* Generates units [first, last) and hands every row of the tables in the
 * bitmask `tables` to the sink. All tables of the mask must share one unit
 * table (part+partsupp, orders+lineitem, or one other table). */
sto_status tpch_gen_rows(const tpch_gen *g, unsigned tables, int64_t first, int64_t last,
                         tpch_sink *sink);

/* dbgen's -C parts -S part split of `units` units: part (1-based) covers
 * [*first, *last); the last part also takes the remainder. */
void tpch_split_units(int64_t units, int parts, int part, int64_t *first, int64_t *last);

#endif
