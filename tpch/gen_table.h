/*
 * gen_table.h — generates TPC-H tables straight into in-memory sto_tables.
 *
 * The second sink of the generator (the first writes .tbl files): rows go
 * column by column into chunks of the target table. Each table is cut into
 * tasks of whole units; worker threads take tasks, fill chunks of their own
 * and keep them per task; when all tasks are done the chunks are appended
 * in task order, so the table's rows are in dbgen's order and a failure
 * leaves every table as it was. Values equal what loading dbgen's .tbl
 * files gives (CHAR values without trailing blanks, DECIMALs in hundredths).
 *
 * Chunks arrive sealed: their statistics (min/max, distinct sketches) are
 * gathered while rows are written, equal to what sto_chunk_seal computes
 * but without a second pass over the data. Strings from fixed lists are
 * stored once per chunk; comments are copied into the chunk's string heap
 * (or, on request, point into the generator's text pool, which the chunks
 * then keep alive); column and heap memory is backed a window ahead of the
 * writer (see gen_table.c).
 */
#ifndef RACKDB_TPCH_GEN_TABLE_H
#define RACKDB_TPCH_GEN_TABLE_H

#include <stdatomic.h>

#include "storage/table.h"
#include "tpch/gen.h"

/* A schema for table t: tpch_table_info's columns, NOT NULL except
 * n_comment and r_comment (as schema.sql declares them). */
sto_status tpch_table_schema(tpch_table_id t, sto_schema **out);

/* Appends the rows of every table in the mask `tables` to targets[t] (indexed
 * by tpch_table_id; entries outside the mask are not touched) using up to
 * `threads` threads; parts/part select dbgen's -C/-S part (1, 1 = all).
 * Each target table needs tpch_table_info's column count and kinds:
 * INTEGER or BIGINT for keys and counts, DECIMAL with scale 2, DATE, CHAR or
 * VARCHAR. */
sto_status tpch_gen_tables(const tpch_gen *g, unsigned tables, int parts, int part, int threads,
                           sto_table *const targets[TPCH_TABLE_COUNT]);

/* The same, polling *cancel (when not NULL) between tasks: once it is
 * non-zero the call fails with 57014 and leaves the tables as they were. */
sto_status tpch_gen_tables_cancelable(const tpch_gen *g, unsigned tables, int parts, int part,
                                      int threads, sto_table *const targets[TPCH_TABLE_COUNT],
                                      const atomic_int *cancel);

/* How comments are stored. Copying (the default) lays each chunk's
 * comments out in row order, so a scan of them (LIKE in Q13, Q16) reads
 * memory sequentially. Pointing into the generator's 300 MiB text pool
 * saves writing them again at generation, but every later scan then reads
 * the pool at random offsets: at SF 1, `o_comment LIKE '%special%'` took
 * 134 ms instead of 36. Each pointing chunk keeps the pool alive (past
 * tpch_gen_free) until it is freed. */
typedef enum tpch_text_mode {
    TPCH_TEXT_COPY,  /* copy into the chunks' string heaps */
    TPCH_TEXT_POINT, /* point into the pool */
} tpch_text_mode;

typedef struct tpch_tables_options {
    int parts, part; /* dbgen's -C/-S; 1, 1 = all */
    int threads;
    const atomic_int *cancel; /* NULL: not cancelable */
    tpch_text_mode text;
} tpch_tables_options;

/* tpch_gen_tables with every option. */
sto_status tpch_gen_tables_with(const tpch_gen *g, unsigned tables, const tpch_tables_options *opt,
                                sto_table *const targets[TPCH_TABLE_COUNT]);

#endif
