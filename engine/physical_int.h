/*
 * physical_int.h — the physical planner's builder, shared by physical.c and
 * the operators it delegates to in files of their own (physical_setop.c).
 *
 * The builder collects pipelines in run order while open_pipe walks the
 * plan; these functions are physical.c's steps, exported under the eng_phys_
 * prefix so a delegate can open, close and read pipelines exactly as
 * physical.c does. Nothing outside the physical planner includes this.
 */
#ifndef RACKDB_ENGINE_PHYSICAL_INT_H
#define RACKDB_ENGINE_PHYSICAL_INT_H

#include "engine/physical.h"

typedef struct eng_phys_builder {
    const sql_plan *plan;
    sql_plan_ctx *ctx;
    eng_pipe *pipes; /* realloc'd: pointers into it die with the next pipeline */
    unsigned n, cap;
    /* Aggregations and shared joins planned so far and the pipelines
     * that make their rows (physical_share.c): a later copy reads them. */
    const sql_lop **shared_ops;
    unsigned *shared_pipes;
    unsigned nshared, cap_shared;
    /* Copies of shared joins: they read the shared rows when planned. */
    const sql_lop **replaced;
    unsigned nreplaced, cap_replaced;
    sql_colid *scratch; /* physical_share.c's column-id map */
    uint32_t nscratch;
} eng_phys_builder;

/* n zeroed-or-not elements of size bytes from the plan's arena (NULL: OOM). */
void *eng_phys_alloc(eng_phys_builder *b, size_t n, size_t size);

/* The pipeline open at op: its source and steps are set, its sink is not. */
sto_status eng_phys_open_pipe(eng_phys_builder *b, const sql_lop *op, unsigned *id);

/* A new pipeline reading the rows pipeline `input` makes. */
sto_status eng_phys_open_reader(eng_phys_builder *b, unsigned input, unsigned *id);

/* Ends pipeline id in a hash aggregation for op (AGGREGATE or DISTINCT). */
sto_status eng_phys_close_agg(eng_phys_builder *b, unsigned id, const sql_lop *op);

/* Column references to ids[0..n), with room for `extra` more. */
sto_status eng_phys_column_exprs(eng_phys_builder *b, const sql_colid *ids, uint32_t n,
                                 uint32_t extra, const sql_bexpr ***out);

/* Aggregation op (AGGREGATE or DISTINCT) planned once more: when the plan
 * computes it already (the same tree up to column ids), or it is a total
 * that a grouped aggregation of the same input can give, *done is set and
 * *id is a pipeline reading the result (physical_share.c). */
sto_status eng_phys_share_agg(eng_phys_builder *b, const sql_lop *op, unsigned *id, bool *done);

/* Join op planned once more, or a join the plan holds a copy of (with the
 * same or more columns): the rows are made by one pipeline that ends in a
 * ROWS sink, and every copy reads them (physical_share.c). */
sto_status eng_phys_share_rows(eng_phys_builder *b, const sql_lop *op, unsigned *id, bool *done);

/* A join planned as physical.c plans it: the probe side's pipeline is
 * left open. */
sto_status eng_phys_open_join(eng_phys_builder *b, const sql_lop *op, unsigned *id);

/* Records that pipeline `pipe` ends in op's aggregation. */
sto_status eng_phys_remember_agg(eng_phys_builder *b, const sql_lop *op, unsigned pipe);

/* Drops from every hash join's build rows the columns that nothing after
 * its probe step reads (physical_narrow.c); ph's pipelines are final. */
sto_status eng_phys_narrow_builds(eng_phys_builder *b, eng_physical *ph);

/* Moves the HAVING conjuncts that compare an output column with a
 * constant from the FILTER reading an aggregation into the aggregation
 * (physical_having.c); ph's pipelines are final. */
sto_status eng_phys_agg_having(eng_phys_builder *b, eng_physical *ph);

/* UNION / INTERSECT / EXCEPT [ALL] (physical_setop.c). */
sto_status eng_phys_setop(eng_phys_builder *b, const sql_lop *op, unsigned *id);

#endif
