/*
 * physical.h — the logical plan cut into pipelines.
 *
 * A pipeline is source → steps → sink, run morsel by morsel on every
 * worker and compiled into one function (codegen/pipeline.h). Operators
 * that need all their input before they can emit anything — aggregation,
 * DISTINCT, sort, and LIMIT (which needs to know what came first) — are
 * pipeline breakers: they end the pipeline that feeds them (as its sink)
 * and start the next one (as its source, reading the rows they
 * materialized). Filters and projections are steps: they run inside the
 * pipeline of their input, so a scan, its filter and the aggregation that
 * consumes it are one loop.
 *
 *   SORT                         pipeline 2: rows of 1 → sort, limit → rows
 *     AGGREGATE                  pipeline 1: rows of 0 → agg sink
 *       FILTER                   pipeline 0: scan → filter → agg sink
 *         GET
 *
 * Pipelines are listed in the order they must run (every pipeline's input
 * comes before it); the last one's output rows are the query's result, in
 * order when it reads a sorted input. A join is a hash-build sink (ending
 * the build side's pipeline, listed before the probe side's) and a probe
 * step inside the probe side's pipeline; RIGHT and FULL joins also end the
 * probe pipeline, so the unmatched build rows can follow its rows.
 */
#ifndef RACKDB_ENGINE_PHYSICAL_H
#define RACKDB_ENGINE_PHYSICAL_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/pipeline.h"
#include "engine/rt_agg.h"
#include "engine/rt_sort.h"
#include "sql/plan.h"
#include "storage/status.h"

typedef enum eng_source_kind {
    ENG_SOURCE_TABLE,  /* scan a base table (GET) */
    ENG_SOURCE_PIPE,   /* rows made by an earlier pipeline */
    ENG_SOURCE_VALUES, /* literal rows */
} eng_source_kind;

typedef enum eng_sink_kind {
    ENG_SINK_ROWS, /* materialize rows (the result, LIMIT, CTAS) */
    ENG_SINK_SORT, /* materialize, then sort (and keep the first rows) */
    ENG_SINK_AGG,  /* hash aggregation (also DISTINCT) */
    ENG_SINK_JOIN, /* a join's build side: materialized entries, then a table */
} eng_sink_kind;

typedef struct eng_pipe {
    unsigned id;
    /* source */
    eng_source_kind source;
    const sql_lop *source_op; /* GET or VALUES; NULL for PIPE */
    unsigned input;           /* PIPE: the pipeline whose rows are read */
    bool ordered;             /* PIPE: the input is sorted; keep its order */
    uint32_t nin;
    sql_colid *in_ids;   /* what the source yields (PIPE: slot i) */
    uint32_t *col_index; /* TABLE: schema column of in_ids[i] */
    bool *not_null;      /* TABLE: no validity bitmap */
    /* steps */
    uint32_t nsteps;
    cg_step *steps;
    const sql_lop **step_ops;
    /* sink */
    eng_sink_kind sink;
    const sql_lop *sink_op; /* AGGREGATE, DISTINCT, SORT, LIMIT; NULL: result */
    uint32_t nout;
    sql_colid *out_ids; /* the ids of the output rows' first nout slots */
    uint32_t nexprs;    /* ROWS, SORT: expressions per row (nout + sort keys) */
    const sql_bexpr **exprs;
    eng_sort_key *sort_keys; /* SORT */
    uint32_t nsort_keys;
    int64_t limit, offset; /* on the output: limit -1 = all */
    eng_agg_layout agg;    /* AGG */
    cg_agg_slot *agg_slots;
    const sql_bexpr **agg_keys;
    double est_rows; /* rows entering the pipeline, as estimated */
    /* JOIN: the probe step that reads the table this pipeline builds (its
     * run-time cells are set by the executor), its key count (the last
     * join_nkeys exprs) and the algorithm the table is built for. */
    cg_probe *probe;
    uint32_t join_nkeys;
    int join_algorithm;
    /* RIGHT/FULL: the probe pipeline ends in a ROWS sink over the join's
     * ids (sink_op is the JOIN) and the build entries of pipeline
     * unmatched_from - 1 that no probe matched are appended, the probe
     * side's columns NULL; 0 = none. */
    unsigned unmatched_from;
} eng_pipe;

typedef struct eng_physical {
    const sql_plan *plan;
    unsigned npipes;
    eng_pipe *pipes;        /* in run order; the last one makes the result */
    uint32_t *result_slots; /* plan->ncols: slot of each output column */
} eng_physical;

/* Cuts plan into pipelines. Everything is allocated in the plan's arena.
 * Operators the executor cannot run yet fail with 0A000. */
sto_status eng_physical_build(const sql_plan *plan, eng_physical **out);

/* A short name for a pipeline ("scan lineitem → aggregate"), into buf. */
void eng_pipe_describe(const eng_physical *ph, const eng_pipe *p, char *buf, size_t size);

#endif
