/*
 * rt_agg.h — hash aggregation: per worker, one pre-aggregation table that
 * spills to hash partitions, then a partition-wise parallel merge.
 *
 *   morsels (generated code, per worker)        finalize (per partition p)
 *   ──────────────────────────────────────      ─────────────────────────────
 *   key row + hash ─► the worker's table ─┐     fold partition p of every
 *     (probed inline; eng_rt_agg_find     │     worker (its spilled entries
 *      for a group it does not hold)      │     and its table's) into one
 *   full table ─► spilled, entry by entry ┘     group each, emit the groups
 *     to its partition's buffer                 as rows
 *
 * A group lives in an entry: its 64-bit hash, a byte that says the table
 * slot is taken, a byte the merge sets when it folded the entry into
 * another of its group, then its key row (the row format over the group
 * keys) and its aggregate states. The hash's top ENG_AGG_PARTS_LOG bits
 * choose its partition.
 *
 * A worker's table holds its entries in place (open addressing, linear
 * probing), so a row that meets its group in the table costs one cache
 * line, and the generated code walks it itself. The home slot of a hash
 * is its partition's bits followed by its low bits: each partition owns
 * one contiguous range of slots, which the merge reads directly. The table
 * starts small and doubles while its groups fit ENG_AGG_TABLE_BYTES (the
 * L2 cache). When it is full at that size, it is spilled: every entry is
 * appended to its partition's buffer (64 KB blocks, written in order) and
 * the table fills again. Groups whose rows come together (lineitem's
 * orders) or that are few never miss the cache; scattered keys over many
 * groups cost a sequential write per row instead of cache misses.
 *
 * When the spills met no group again (the rows of a group come together),
 * the table shrinks to ENG_AGG_TABLE_BYTES / 32 (L1): it holds the groups
 * at hand as well as a big one, and a new group's slot is never a cache
 * miss. It grows again when groups come back.
 *
 * Spilling only pays when the merge has little to fold: when groups keep
 * coming back after a spill, each spill gives them one more entry. So each
 * worker estimates how many groups it has met (a HyperLogLog sketch over
 * the hashes it spilled, joined at each full table with the hashes in the
 * table); when it has made at least ENG_AGG_REUSE times that many entries
 * and a table for all of them fits ENG_AGG_TABLE_BIG, the full table grows
 * to hold them instead (q15's 10K suppliers over a quarter's lineitems
 * grow after one spill; q13's 100K customers over orders stay spilled). Aggregations with DISTINCT
 * sets always grow: an entry more costs them a set more, and the merge a
 * union of sets.
 *
 * Finalize merges each partition on its own (in parallel) and emits its
 * groups into room reserved for exactly that many. When the partition's
 * groups (guessed from the union of the workers' sketches) fit a table of
 * entries in L2, every entry is folded, in memory order, into such a table
 * and the groups come from there. Otherwise every entry is folded into the
 * first entry of its group, working on pieces of the partition:
 * the hash bits below the partition's split it further (each worker
 * counts its spilled entries per 1 << ENG_AGG_SUB_LOG values of those bits
 * as it spills them: sub_count; the merge counts the table's), so the
 * merge picks pieces of about 4K entries, writes every entry's (hash,
 * pointer) into its piece in one pass, and folds each piece in one small
 * table that stays in L2 and is cleared and used again. A partition that
 * only one worker filled and never spilled holds one entry per group and
 * is emitted as it is.
 *
 * DISTINCT aggregates keep a per-group set of the distinct values (the
 * state holds a pointer to it, into the worker's eng_agg_arena); the merge
 * unions the sets (growing ones in an arena of its own, freed once the
 * partition's rows are out) and the result is computed from the set. Output rows (row format over
 * group ids then aggregate ids) carry the final values: COUNT as BIGINT, SUM as BIGINT /
 * DECIMAL(18,s) (22003 when the 128-bit sum does not fit) or DOUBLE, AVG as
 * DOUBLE, MIN/MAX in the argument's type, NULL for groups without values.
 * A row that fails the aggregation's HAVING conjuncts (eng_agg_having) is
 * written and taken back, so the groups that fail take no room.
 */
#ifndef RACKDB_ENGINE_RT_AGG_H
#define RACKDB_ENGINE_RT_AGG_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/pipeline.h"
#include "engine/rt_result.h"
#include "storage/status.h"

#define ENG_AGG_PARTS_LOG 5
#define ENG_AGG_PARTS     (1u << ENG_AGG_PARTS_LOG)

/* The bytes a worker's table may grow to before it spills (L2). */
#define ENG_AGG_TABLE_BYTES ((size_t)1 << 20)

/* The bytes it may grow to when its groups come back after spills: a
 * worker's share of L3. Beyond that every row of a group met again is a
 * miss to memory, and spilling (a sequential write per row, a merge in
 * L2-sized pieces) costs less: q13's 100K customers over orders took
 * about a quarter more CPU time in two 16 MB tables than spilled. */
#define ENG_AGG_TABLE_BIG ((size_t)4 << 20)

/* Groups come back when a worker inserted this many times as many
 * entries as it met groups. Rows of a group that come together make about
 * one entry per group (the sketch errs by ~3%), so a fifth more is a
 * clear sign; every spill before the growth costs a copy of the table and
 * the merge a fold per entry. */
#define ENG_AGG_REUSE 1.2

/* The HyperLogLog sketch of a worker's groups has 1 << this many
 * registers. */
#define ENG_AGG_HLL_LOG 10

/* The merge splits a partition into at most 1 << ENG_AGG_SUB_LOG pieces. */
#define ENG_AGG_SUB_LOG 8

/* An entry: the hash (uint64_t), the byte that says a table slot is
 * taken (ENG_AGG_ENTRY_USED), the byte the merge sets when it folded the
 * entry into another of its group, padding to this, then the key row, then
 * the states. */
#define ENG_AGG_ENTRY_HEAD 16u
#define ENG_AGG_ENTRY_USED 8u

typedef struct eng_agg_fn {
    sql_agg func;
    bool distinct;
    sto_type arg;    /* argument type (COUNT(*): unused) */
    sto_type result; /* the aggregate's result type */
    uint32_t offset; /* of its state in the state area */
} eng_agg_fn;

/* A HAVING conjunct the merge tests on each group's output row before it
 * keeps the row (engine/physical_having.c moves them from the FILTER
 * above the aggregation): output slot `slot` (keys, then aggregates), of
 * type `type` (integer-like: compared as int64, or DOUBLE, where NaN is
 * equal to NaN and above every number), `op` (EQ..GE) the constant. A
 * NULL slot fails. Groups that fail are never written out: q18's 1.5M
 * orders, of which 57 pass `sum(l_quantity) > 300`. */
typedef struct eng_agg_having {
    uint32_t slot;
    sql_op op;
    sto_type type;
    union {
        int64_t i;
        double d;
    } value;
} eng_agg_having;

/* What an aggregation's entries look like. */
typedef struct eng_agg_layout {
    /* Fold runs of equal keys before the table (engine/rt_agg_runs.c):
     * set by the planner through eng_agg_runs_fit. */
    bool runs;
    uint32_t nkeys;
    sto_type *key_types;
    uint32_t naggs;
    eng_agg_fn *aggs;
    uint32_t key_bytes;   /* cg_row_bytes(nkeys) */
    uint32_t state_bytes; /* sum of the states */
    uint32_t entry_bytes; /* 16 (hash) + key_bytes + state_bytes */
    bool distinct_sets;   /* some aggregate keeps a set per group */
    /* HAVING conjuncts tested before a group's row is kept (only with
     * GROUP BY: without it the row of no rows would need them too) */
    uint32_t nhaving;
    const eng_agg_having *having;
} eng_agg_layout;

/* Fills the offsets; key_types and aggs (func, distinct, arg, result) must
 * be set. */
void eng_agg_layout_finish(eng_agg_layout *l);

typedef struct eng_agg_block eng_agg_block;

/* Where the DISTINCT sets of a worker's groups (or of one merge) live:
 * blocks that are freed together, so a set that grows leaves its old copy
 * behind, and no set is freed one by one (18K groups' sets in q16). */
typedef struct eng_agg_arena {
    eng_agg_block *blocks; /* newest first */
    uint8_t *ptr;
    size_t free;
} eng_agg_arena;

/* One partition's spilled entries. */
typedef struct eng_agg_part {
    uint64_t entries; /* spilled */
    /* Spilled entries, by the ENG_AGG_SUB_LOG hash bits below the
     * partition's: the merge's histogram, counted as they are spilled. */
    uint32_t sub_count[1u << ENG_AGG_SUB_LOG];
    eng_agg_block *blocks; /* newest first */
    uint8_t *free_ptr;
    size_t free_bytes;
} eng_agg_part;

/* Ordered runs (engine/rt_agg_runs.c): when the rows come in key order,
 * each worker folds the run of the key at hand into an entry of its own
 * (no hash, no table) and, when the key changes, leaves the finished
 * entry in its partition's buffer of runs, as spilled entries are kept.
 *
 *   a call's rows:  k1 k1 | k2 k2 k2 | k3 | ... | kn kn
 *                   first   interior runs       last
 *                   └──── to the table ────────────┘ (they may go on in
 *                                                     the neighbouring calls)
 *
 * Keys must rise from run to run inside a call (else the worker turns runs
 * off and its rows go to the table from then on), and the calls' key
 * ranges [first, last] must not overlap but at their ends: then an
 * interior run is its group's only entry anywhere and is emitted as it
 * is. The merge checks the ranges of every worker's calls; when they
 * overlap, or some worker turned runs off, the interior runs are merged
 * like spilled entries. q18's 6M lineitems of 1.5M orders (in l_orderkey
 * order) then make 1.5M entries that are never folded, and no table
 * spills. */
typedef struct eng_agg_range {
    int64_t first, last;
} eng_agg_range;

typedef struct eng_agg_runs {
    /* read by the generated code (cg_sink.runs) */
    uint8_t *states; /* the open run's states; NULL when none is open */
    int64_t key;     /* the open run's key */
    uint8_t on;      /* 0 once the keys fell: the table takes every row */
    /* the runtime's */
    bool first;         /* the open run began the call */
    bool off;           /* the keys fell in some call */
    int64_t call_first; /* the call's first key */
    unsigned open_part; /* the open run's partition */
    uint64_t count;     /* finished runs */
    /* the finished runs by partition, as the spilled entries are */
    eng_agg_part parts[ENG_AGG_PARTS];
    eng_agg_range *ranges; /* one per call that had rows */
    uint64_t nranges, ranges_cap;
} eng_agg_runs;

/* A worker's pre-aggregation (the per-worker state of an aggregate sink).
 * The generated code reads table, mask, part_shift and low_mask, and adds
 * a group itself (count + 1) while count < limit (cg_sink.probe). */
typedef struct eng_agg_local {
    const eng_agg_layout *layout;
    eng_rt_mem mem;
    uint8_t *table;      /* mask + 1 entries in place; NULL before the first */
    uint64_t mask;       /* slots - 1 */
    uint64_t part_shift; /* home slot: (partition << part_shift) | (hash & low_mask) */
    uint64_t low_mask;
    uint64_t count;     /* groups in the table */
    uint64_t limit;     /* the generated code adds groups while count < limit */
    uint64_t spilled;   /* entries spilled since the start */
    size_t table_bytes; /* allocated for the table */
    bool hot;           /* spills met no group twice: the table stays small */
    uint64_t spills;    /* times the table was spilled */
    uint8_t hll[1u << ENG_AGG_HLL_LOG];
    double hll_sum;     /* of 2^-register, kept as registers change */
    uint32_t hll_zeros; /* registers still 0 */
    eng_agg_part parts[ENG_AGG_PARTS];
    eng_agg_arena sets;
    eng_agg_runs runs;
} eng_agg_local;

void eng_agg_local_init(eng_agg_local *a, const eng_agg_layout *l, eng_rt_mem mem);
void eng_agg_local_free(eng_agg_local *a);

/* cg_agg_find_fn and cg_agg_distinct_fn. */
int32_t eng_rt_agg_find(cg_error *err, void *local, uint64_t hash, const uint8_t *key,
                        uint8_t **states);
int32_t eng_rt_agg_distinct(cg_error *err, void *local, uint8_t *state, uint32_t agg,
                            const uint8_t *value);

/* Whether an aggregation folds runs of equal keys (layout.runs): one
 * integer-like key that is never NULL, no DISTINCT sets, and about
 * `groups` groups expected (few groups stay in the table anyway) of
 * `rows` input rows, several a group. */
bool eng_agg_runs_fit(const eng_agg_layout *l, bool key_nullable, double groups, double rows);

/* cg_agg_run_next_fn and cg_agg_run_end_fn. */
int32_t eng_rt_agg_run_next(cg_error *err, void *local, uint64_t hash, int64_t key,
                            const uint8_t *key_row, uint8_t **states);
int32_t eng_rt_agg_run_end(cg_error *err, void *local);

/* Merges partition `part` of locals[0..n) and appends one output row per
 * group to out (a sink of cg_row_bytes(nkeys + naggs) rows; mem is the
 * query's tracker). */
sto_status eng_agg_merge_part(eng_agg_local *const *locals, unsigned n, unsigned part,
                              eng_rows_sink *out);

/* Whether an output row (keys, then aggregates) passes l's HAVING
 * conjuncts (true when there are none). */
bool eng_agg_having_pass(const eng_agg_layout *l, const uint8_t *row);

/* The output row of an aggregation without GROUP BY over no rows at all
 * (COUNT 0, everything else NULL), appended to out. */
sto_status eng_agg_empty_row(const eng_agg_layout *l, eng_rows_sink *out);

#endif
