/*
 * rt_agg.h — hash aggregation: thread-local pre-aggregation into
 * partitioned hash tables, then a partition-wise parallel merge.
 *
 *   morsels (generated code, per worker)       finalize (per partition p)
 *   ─────────────────────────────────────      ─────────────────────────────
 *   key row + hash ─► eng_rt_agg_find ─► the    merge partition p of every
 *   group's states, updated inline by the      worker's table into one table,
 *   generated code (layout: pipeline.h)        then emit its groups as rows
 *
 * A group lives in an entry: its 64-bit hash, its key row (the row format
 * over the group keys) and its aggregate states. The hash's top bits choose
 * one of ENG_AGG_PARTS partitions, its low bits the slot in that
 * partition's open-addressing table of entry pointers; entries never move,
 * so generated code may keep the state pointer it got.
 *
 * A worker's table of a partition grows only up to ENG_AGG_LOCAL_CAP slots,
 * so all its tables stay in cache, unless its lookups often met a group
 * again (at least one in two, counted since it was last emptied): then
 * every entry a refill would add is one more for the merge to fold (200K
 * part keys in random order over lineitem), and it grows on up to
 * ENG_AGG_LOCAL_MAX. When a full table needs one more group it is
 * emptied instead (the entries stay where they are, appended to the
 * partition's blocks) and fills again: a group may then have several
 * entries, in one worker or in several. Few groups never fill a table.
 * When a table fills while its lookups rarely found a group that was not
 * new (q18's orders: the generated code meets a group's later rows at the
 * entry it remembers from the row before, so the table only ever sees new
 * groups), the table is dropped and the partition appends an entry per
 * lookup: the generated code sees no slots and calls find at once, and
 * no cache miss is spent on a table that does not reduce anything.
 * Either way no table grows past ENG_AGG_LOCAL_MAX slots. Only
 * aggregations with DISTINCT sets keep growing their tables: an entry
 * more costs them a set more, and the merge a union of sets.
 *
 * Finalize merges each partition on its own (in parallel), folding every
 * entry into the first entry of its group, then emits the groups walking
 * the entries in memory order into room reserved for exactly that many.
 * The fold works on pieces of a partition: the hash bits below the
 * partition's split it further (each worker counts its entries per
 * 1 << ENG_AGG_SUB_LOG values of those bits as it makes them: sub_count),
 * so the merge picks pieces of about 4K entries, writes every entry's
 * (hash, pointer) into its piece in one pass, and folds each piece in one
 * small table that stays in L2 and is cleared and used again (the entries
 * the pairs point to are prefetched a few pairs ahead). A partition that
 * only one worker filled and never emptied holds one entry per group and
 * is emitted as it is.
 *
 * DISTINCT aggregates keep a per-group set of the distinct values (the
 * state holds a pointer to it); the merge unions the sets and the result is
 * computed from the set. Output rows (row format over group ids then
 * aggregate ids) carry the final values: COUNT as BIGINT, SUM as BIGINT /
 * DECIMAL(18,s) (22003 when the 128-bit sum does not fit) or DOUBLE, AVG as
 * DOUBLE, MIN/MAX in the argument's type, NULL for groups without values.
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

/* The most slots of one worker's table of one partition (a power of two). */
#define ENG_AGG_LOCAL_CAP (1u << 13)

/* The most slots of a table that grows on past ENG_AGG_LOCAL_CAP because
 * its groups keep coming back. */
#define ENG_AGG_LOCAL_MAX (1u << 16)

/* The merge splits a partition into at most 1 << ENG_AGG_SUB_LOG pieces. */
#define ENG_AGG_SUB_LOG 8

/* An entry: the hash (uint64_t), a byte the merge sets when it folded the
 * entry into another of its group, padding to this, then the key row, then
 * the states. */
#define ENG_AGG_ENTRY_HEAD 16u

typedef struct eng_agg_fn {
    sql_agg func;
    bool distinct;
    sto_type arg;    /* argument type (COUNT(*): unused) */
    sto_type result; /* the aggregate's result type */
    uint32_t offset; /* of its state in the state area */
} eng_agg_fn;

/* What an aggregation's entries look like. */
typedef struct eng_agg_layout {
    uint32_t nkeys;
    sto_type *key_types;
    uint32_t naggs;
    eng_agg_fn *aggs;
    uint32_t key_bytes;   /* cg_row_bytes(nkeys) */
    uint32_t state_bytes; /* sum of the states */
    uint32_t entry_bytes; /* 16 (hash) + key_bytes + state_bytes */
    bool distinct_sets;   /* some aggregate keeps a set per group */
} eng_agg_layout;

/* Fills the offsets; key_types and aggs (func, distinct, arg, result) must
 * be set. */
void eng_agg_layout_finish(eng_agg_layout *l);

typedef struct eng_agg_block eng_agg_block;

/* One partition's table. */
typedef struct eng_agg_part {
    uint8_t **slots; /* entry pointers, cap a power of two */
    uint64_t cap, count;
    uint64_t entries; /* made since the start (count: in the table now) */
    uint64_t found;   /* lookups (find's and the generated code's) that met
                       * an old group since the table was last emptied */
    bool append;      /* no table: every find makes an entry */
    /* Entries made, by the ENG_AGG_SUB_LOG hash bits below the partition's:
     * the merge's histogram, counted as the entries are made. */
    uint32_t sub_count[1u << ENG_AGG_SUB_LOG];
    eng_agg_block *blocks; /* entry storage, newest first */
    uint8_t *free_ptr;
    size_t free_bytes;
} eng_agg_part;

/* A worker's pre-aggregation (the per-worker state of an aggregate sink). */
typedef struct eng_agg_local {
    const eng_agg_layout *layout;
    eng_rt_mem mem;
    eng_agg_part parts[ENG_AGG_PARTS];
} eng_agg_local;

void eng_agg_local_init(eng_agg_local *a, const eng_agg_layout *l, eng_rt_mem mem);
void eng_agg_local_free(eng_agg_local *a);

/* cg_agg_find_fn and cg_agg_distinct_fn. */
int32_t eng_rt_agg_find(cg_error *err, void *local, uint64_t hash, const uint8_t *key,
                        uint8_t **states);
int32_t eng_rt_agg_distinct(cg_error *err, void *local, uint8_t *state, uint32_t agg,
                            const uint8_t *value);

/* Merges partition `part` of locals[0..n) and appends one output row per
 * group to out (a sink of cg_row_bytes(nkeys + naggs) rows; mem is the
 * query's tracker). */
sto_status eng_agg_merge_part(eng_agg_local *const *locals, unsigned n, unsigned part,
                              eng_rows_sink *out);

/* The output row of an aggregation without GROUP BY over no rows at all
 * (COUNT 0, everything else NULL), appended to out. */
sto_status eng_agg_empty_row(const eng_agg_layout *l, eng_rows_sink *out);

#endif
