/*
 * rt_result.h — materialized rows: what flows between pipelines and out of
 * the last one into the statement's result.
 *
 * A pipeline whose sink is a row buffer (codegen/pipeline.h's row format:
 * 16-byte slots, then NULL bytes) appends rows into a per-worker
 * eng_rows_sink through eng_rt_rows_append, which generated code calls by
 * address. The executor notes, per morsel, where the morsel's rows start
 * (eng_rows_sink_mark), so when the input was ordered (a sorted row buffer)
 * the workers' rows can be put back into input order. eng_rowset_gather
 * then concatenates all workers' rows into one contiguous eng_rowset, the
 * next pipeline's source. eng_rowset_to_result copies chosen slots of a
 * rowset into result chunks, copying strings into the chunks' heaps.
 *
 * Memory: buffers are reserved through the worker's eng_mem_cache while a
 * morsel runs and released on the query's tracker when freed, so a result
 * larger than memory_limit fails with 53200.
 */
#ifndef RACKDB_ENGINE_RT_RESULT_H
#define RACKDB_ENGINE_RT_RESULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "codegen/ir.h"
#include "engine/mem.h"
#include "engine/result.h"
#include "storage/status.h"

/* Where runtime structures get memory: the worker's cache while a morsel
 * runs (cache set), the query's tracker otherwise. Frees go to mem. */
typedef struct eng_rt_mem {
    eng_mem *mem;
    eng_mem_cache *cache;
    int node;
} eng_rt_mem;

sto_status eng_rt_alloc(const eng_rt_mem *m, size_t bytes, void **out);
sto_status eng_rt_alloc_zero(const eng_rt_mem *m, size_t bytes, void **out);
void eng_rt_free(const eng_rt_mem *m, void *p, size_t bytes);

/* Rows of one morsel: they start at row `first` of the sink, and the
 * morsel began at input position `pos`. */
typedef struct eng_rows_seg {
    uint64_t pos, first;
} eng_rows_seg;

/* One worker's rows (the per-worker state of a row sink). */
typedef struct eng_rows_sink {
    eng_rt_mem mem;
    uint32_t row_bytes;
    uint8_t *data;
    uint64_t rows, cap;
    eng_rows_seg *segs;
    uint64_t nsegs, segcap;
    /* Optional: called when the buffer is full and holds at least
     * compact_min rows, before it grows; may drop rows (top-k). */
    sto_status (*compact)(void *arg, struct eng_rows_sink *s);
    void *compact_arg;
    uint64_t compact_min;
} eng_rows_sink;

void eng_rows_sink_init(eng_rows_sink *s, eng_rt_mem mem, uint32_t row_bytes);
void eng_rows_sink_free(eng_rows_sink *s);

/* Makes room for `rows` more rows in one allocation, for a producer that
 * knows how many it will append (the doublings of append copy each row
 * about twice). */
sto_status eng_rows_sink_reserve(eng_rows_sink *s, uint64_t rows);

/* cg_rows_append_fn: room for one more row. */
int32_t eng_rt_rows_append(cg_error *err, void *sink, uint8_t **row);

/* Records that the morsel at input position pos starts at the sink's
 * current row count. */
sto_status eng_rows_sink_mark(eng_rows_sink *s, uint64_t pos);

/* Rows in one contiguous array, owned. */
typedef struct eng_rowset {
    uint8_t *data;
    uint64_t rows;
    uint32_t row_bytes;
    size_t bytes; /* allocated */
    eng_mem *mem;
} eng_rowset;

void eng_rowset_free(eng_rowset *r);

/* Concatenates the rows of n sinks into *out (in input order when ordered,
 * using the sinks' segments) and frees the sinks' buffers. */
sto_status eng_rowset_gather(eng_rows_sink *const *sinks, unsigned n, bool ordered, eng_mem *mem,
                             eng_rowset *out);

/* Keeps rows [offset, offset + limit) (limit < 0: all after offset). */
void eng_rowset_slice(eng_rowset *r, int64_t offset, int64_t limit);

/* Appends the rowset's rows to result r, whose schema's column j is slot
 * slots[j] of a row of ncols columns. Checks the cancel flag per chunk. */
sto_status eng_rowset_to_result(const eng_rowset *rs, uint32_t ncols, const uint32_t *slots,
                                eng_result *r, atomic_int *cancel);

/* Row i's value in slot `slot` (of ncols) as an sto_value of type t
 * (strings point into the row's referents). */
sto_value eng_row_value(const uint8_t *row, uint32_t ncols, uint32_t slot, sto_type t);

#endif
