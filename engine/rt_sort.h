/*
 * rt_sort.h — ORDER BY: per-worker sorted runs, then a k-way merge.
 *
 * A sort pipeline's sink materializes its input rows (plus the sort key
 * values that are not plain columns) per worker, in the row format of
 * codegen/pipeline.h. Finalize sorts each worker's rows on its own (in
 * parallel, one worker's run per finalize partition), keeping only the first
 * `keep` rows of each run when a LIMIT follows (top-k: no row beyond the
 * k-th of its run can be among the first k overall). With a LIMIT the same
 * cut is also made while the run fills, whenever its buffer is full (the
 * row sink's compact hook), so a top-k holds O(k) rows per worker. The runs
 * are then merged into one ordered rowset, stopping after the rows the
 * LIMIT keeps.
 *
 * Order: keys compare as ORDER BY says (cg_compare_vals' rules: NULLs
 * first or last as asked, DESC reverses non-NULL values, strings by bytes,
 * NaN above every number); rows equal on all keys keep no particular order.
 */
#ifndef RACKDB_ENGINE_RT_SORT_H
#define RACKDB_ENGINE_RT_SORT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/rt_result.h"
#include "storage/status.h"

typedef struct eng_sort_key {
    uint32_t slot;
    sto_type type;
    bool desc, nulls_first;
} eng_sort_key;

typedef struct eng_sort_spec {
    uint32_t ncols; /* of the rows */
    uint32_t nkeys;
    const eng_sort_key *keys;
} eng_sort_spec;

/* Order of two rows: <0, 0, >0. */
int eng_sort_compare(const eng_sort_spec *s, const uint8_t *a, const uint8_t *b);

/* Sorts run's rows and keeps the first `keep` of them. */
sto_status eng_sort_run(const eng_sort_spec *s, eng_rows_sink *run, uint64_t keep);

/* Merges sorted runs into out (rows [0, limit) of the merged order; limit
 * UINT64_MAX = all) and frees the runs' buffers. */
sto_status eng_sort_merge(const eng_sort_spec *s, eng_rows_sink *const *runs, unsigned n,
                          uint64_t limit, eng_mem *mem, eng_rowset *out);

#endif
