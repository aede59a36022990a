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
 * comes before it; an aggregation or join a plan computes twice is made
 * once and read by more than one pipeline, see physical_share.c); the last
 * one's output rows are the query's result, in
 * order when it reads a sorted input. A join is a hash-build sink (ending
 * the build side's pipeline, listed before the probe side's) and a probe
 * step inside the probe side's pipeline; RIGHT and FULL joins also end the
 * probe pipeline, so the unmatched build rows can follow its rows.
 *
 * A radix-partitioned join (docs/joins.md) cuts the probe side too: its
 * pipeline ends in a PARTITION sink that materializes the probe rows (the
 * columns the join's parent may read, then the probe keys); the executor
 * then partitions both sides and builds a table per partition; a PARTS
 * pipeline reads the partitioned probe rows, one partition's task per
 * morsel, and its first step probes that partition's table:
 *
 *   JOIN (radix)          pipeline 0: build side → join build
 *     probe side          pipeline 1: probe side → partition
 *     build side          pipeline 2: partitions of 1 → probe → ...
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
    ENG_SOURCE_PARTS,  /* a partitioned join's probe entries, partition by
                        * partition (join_from) */
} eng_source_kind;

typedef enum eng_sink_kind {
    ENG_SINK_ROWS,      /* materialize rows (the result, LIMIT, CTAS) */
    ENG_SINK_SORT,      /* materialize, then sort (and keep the first rows) */
    ENG_SINK_AGG,       /* hash aggregation (also DISTINCT) */
    ENG_SINK_JOIN,      /* a join's build side: materialized entries, then a table */
    ENG_SINK_PARTITION, /* a partitioned join's probe side: materialized
                         * entries, then both sides partitioned (join_from) */
    /* an EXCHANGE (distributed plans): rows materialized like ROWS, then
     * sent to other servers (engine/exchange.h); the next pipeline reads
     * what every server sent. exprs: the nout columns, then the shuffle keys */
    ENG_SINK_EXCHANGE,
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
    /* AGG: the agg.nhaving conjuncts the merge tests (physical_having.c) */
    const sql_bexpr **agg_having;
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
    /* with unmatched_from: a SEMI join that built on its left input (the
     * probe flagged the matches) appends the flagged build entries instead
     * (and an ANTI one the others, as RIGHT joins do); the probe itself
     * yields no tuple */
    bool emit_matched;
    /* PARTITION sink: the join's build pipeline + 1 (0 = none); PARTS
     * source: the same for the join whose partitions are read. */
    unsigned join_from, parts_from;
    /* Set operations (physical_setop.c). concat_from: the rows of pipeline
     * concat_from - 1 come before this ROWS pipeline's own (UNION ALL of
     * two inputs); 0 = none. count_setop: an INTERSECT or EXCEPT whose
     * per-side row counts are this AGG pipeline's two aggregates; each group
     * is then kept as often as the set operation says (0, 1, or for ALL
     * the smaller count or the difference). */
    unsigned concat_from;
    const sql_lop *count_setop;
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

/* For a pipeline a set operation made (physical_setop.c): EXPLAIN's text
 * for its row sink, or the note after its aggregation saying which groups
 * it keeps, into buf; false for other pipelines. */
bool eng_phys_setop_note(const eng_pipe *p, char *buf, size_t size);

/* A short name for a pipeline ("scan lineitem → aggregate"), into buf. */
void eng_pipe_describe(const eng_physical *ph, const eng_pipe *p, char *buf, size_t size);

#endif
