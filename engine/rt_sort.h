/*
 * rt_sort.h — ORDER BY: per-worker sorted runs, then a k-way merge.
 *
 * A sort pipeline's sink materializes its input rows (plus the sort key
 * values that are not plain columns) per worker, in the row format of
 * codegen/pipeline.h. Finalize sorts each worker's rows on its own (in
 * parallel, one worker's run per finalize partition), keeping only the first
 * `keep` rows of each run when a LIMIT follows (top-k: no row beyond the
 * k-th of its run can be among the first k overall). The runs are then
 * merged into one ordered rowset, stopping after the rows the LIMIT keeps.
 *
 * Top-k (ORDER BY ... LIMIT k, k = offset + limit): each worker keeps its k
 * best rows as a binary heap with the worst of them at the root, so a row
 * costs one comparison with the root when it does not qualify and
 * O(log k) when it does, and a worker holds k + 1 rows whatever its input.
 * The heap lives in the worker's row sink (eng_topk is its compact hook):
 * generated code appends each row into slot k, and the next append (or
 * finalize, which sorts the run) decides whether it replaces the root.
 * Until the sink first fills, rows are simply appended.
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

/* One worker's top-k state (see above); lives as long as its sink. */
typedef struct eng_topk {
    const eng_sort_spec *spec;
    uint64_t k;
    bool heap; /* rows [0, k) of the sink are a heap, slot k the newest row */
} eng_topk;

/* Makes sink s keep only the best k rows of what is appended to it. */
void eng_topk_attach(eng_topk *t, const eng_sort_spec *spec, uint64_t k, eng_rows_sink *s);

/* Merges sorted runs into out (rows [0, limit) of the merged order; limit
 * UINT64_MAX = all) and frees the runs' buffers. */
sto_status eng_sort_merge(const eng_sort_spec *s, eng_rows_sink *const *runs, unsigned n,
                          uint64_t limit, eng_mem *mem, eng_rowset *out);

#endif
