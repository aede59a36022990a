/*
 * rt_sortmerge.h — the sort-merge join: both inputs range-partitioned on a
 * 64-bit sort key, each range radix-sorted
 * and the two sorted ranges joined by one linear scan.
 *
 *   materialize  build and probe pipelines fill per-worker eng_join_mats
 *   plan         eng_sm_init, then eng_sm_sample: splitters from a sample of
 *                both inputs, so ranges hold about equal numbers of tuples
 *   histogram    eng_sm_histogram per input slice: tuples per range
 *   prefix sums  eng_sm_prefix
 *   partition    eng_sm_scatter per slice: (key, entry) pairs to their range;
 *                each slice's pairs form one run inside the range
 *   sort         eng_sm_sort_range per range: the range's runs radix-sorted
 *                as one (LSD, 8-bit digits counted in one pass, digits
 *                equal in every key skipped) into its sorted array
 *   merge join   eng_sm_tasks, then eng_sm_join_task per task (a range's
 *                probe pairs, cut like radix probe tasks so a hot range is
 *                shared by workers), eng_sm_unmatched per range
 *
 * The sort key of a tuple is what norm() says — an order-preserving fixed-
 * width form of the join key (a signed integer with its sign bit flipped,
 * a date) when there is one, so the join's output comes out in key order
 * for a merge or ORDER BY above it; or, for composite and string keys,
 * its hash (norm = NULL): equal keys still have equal sort keys, and the
 * scan hands each group of equal sort keys to the probe state machine,
 * which compares the real keys. Only the pairs move; entries stay where
 * the build/probe pipelines put them.
 */
#ifndef RACKDB_ENGINE_RT_SORTMERGE_H
#define RACKDB_ENGINE_RT_SORTMERGE_H

#include <stdint.h>

#include "engine/mem.h"
#include "engine/rt_join.h"
#include "storage/status.h"

/* An order-preserving fixed-width key of a row: equal join keys must give
 * equal values. */
typedef uint64_t (*eng_join_norm_fn)(void *ctx, const uint8_t *row);

typedef struct eng_sm_pair {
    uint64_t key;
    eng_join_entry *e;
} eng_sm_pair;

typedef struct eng_sm_side {
    eng_join_span *spans;
    unsigned n_spans;
    uint64_t count;
    uint32_t stride;
    eng_join_norm_fn norm; /* NULL = the hash */
    eng_sm_pair *pairs;    /* range-partitioned runs */
    eng_sm_pair *sorted;   /* each range sorted */
    uint64_t *hist;        /* [slice][range]: counts, then offsets */
    uint64_t *range;       /* [range + 1]: where each range begins */
} eng_sm_side;

typedef struct eng_sm_task {
    uint64_t range, begin, end; /* probe pairs [begin, end) of a range */
} eng_sm_task;

typedef struct eng_sm_join {
    eng_mem *mem;
    void *ctx; /* for norm */
    unsigned slices;
    uint64_t ranges;
    uint64_t *splitters; /* ranges - 1, ascending; range = #splitters <= key */
    eng_sm_side build, probe;
    eng_sm_task *tasks;
    uint64_t n_tasks;
} eng_sm_join;

/* Plan: ranges = 0 chooses (about 64K pairs per range). */
sto_status eng_sm_init(eng_sm_join *sm, eng_join_mat *const *build, unsigned n_build,
                       eng_join_mat *const *probe, unsigned n_probe, eng_join_norm_fn norm_build,
                       eng_join_norm_fn norm_probe, void *ctx, unsigned slices, uint64_t ranges,
                       eng_mem *mem);

/* Chooses the splitters from a sample of both sides. */
sto_status eng_sm_sample(eng_sm_join *sm);

void eng_sm_histogram(eng_sm_join *sm, eng_sm_side *side, unsigned s);
void eng_sm_prefix(eng_sm_join *sm);
sto_status eng_sm_scatter(eng_sm_join *sm, eng_sm_side *side, unsigned s);

/* Sorts range r of a side into side->sorted. */
sto_status eng_sm_sort_range(eng_sm_join *sm, eng_sm_side *side, uint64_t r);

/* Cuts the probe side's ranges into merge-join tasks. */
sto_status eng_sm_tasks(eng_sm_join *sm);

/* Joins task t's probe pairs with their range of the build side. */
int32_t eng_sm_join_task(cg_error *err, const eng_sm_join *sm, uint64_t t,
                         const eng_join_spec *spec, const eng_join_build_info *info);

/* RIGHT/FULL: the unmatched build entries of range r. */
int32_t eng_sm_unmatched(cg_error *err, const eng_sm_join *sm, uint64_t r,
                         const eng_join_spec *spec);

void eng_sm_free(eng_sm_join *sm);

/* --- in compiled pipelines ---------------------------------------------------
 * A query runs the merge join inside a pipeline: the probe side's entries
 * are gathered in sorted order (eng_sm_gather_range), so a pipeline reads
 * them as rows, task by task; each run of equal sort keys of the build side
 * is linked through the entries' next pointers (eng_sm_link_range), so the
 * generated probe walks a run as it walks a hash chain; and a per-worker
 * cursor over the task's build range (eng_rt_sm_lookup) turns the probe
 * row's sort key — its hash — into the head of its run, moving forward as
 * the sorted probe rows do. */

typedef struct eng_sm_cursor {
    const eng_sm_pair *begin, *at, *end;
} eng_sm_cursor;

/* Links the entries of each run of equal keys in build range r. */
void eng_sm_link_range(eng_sm_join *sm, uint64_t r);

/* Copies the probe entries of range r, in sorted order, to dst (probe.count
 * entries of probe.stride bytes; index i holds probe.sorted[i]'s entry). */
void eng_sm_gather_range(eng_sm_join *sm, uint64_t r, uint8_t *dst);

/* The cursor for task t: the build range of its probe pairs. */
void eng_sm_cursor_for(const eng_sm_join *sm, uint64_t t, eng_sm_cursor *c);

/* The first build entry of the run whose key is `key`, or NULL; keys asked
 * in ascending order cost amortized O(1), others a binary search. */
void *eng_rt_sm_lookup(void *cursor, uint64_t key);

#endif
