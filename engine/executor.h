/*
 * executor.h — running a query: bind, plan, compile, run the pipelines.
 *
 *   sql_query ─bind─► sql_plan ─(optimize)─► eng_physical (pipelines)
 *        ─► all pipelines but the first (and those reading a partitioned
 *           join) go to the instance's compile pool, which compiles them
 *           while earlier ones compile or run ─► for each pipeline, in
 *           order: take its code or compile it now (mode by its input
 *           size), run it as a sched job over its source's morsels on up to
 *           `threads` workers, finalize its sink (merge the workers'
 *           aggregation tables per partition, sort and merge the runs, or
 *           concatenate the rows) ─► the last pipeline's rows ─► eng_result
 *
 * Each pipeline's sink state is per worker (no locks in the hot loop);
 * what a pipeline produced is one contiguous row buffer that the next
 * pipeline scans. Memory for hash tables, sort runs and rows is reserved on
 * the query's tracker (memory_limit → 53200); the cancel flag is checked
 * before every morsel (57014). Generated code is freed when the query ends.
 *
 * The JIT and the worker pool belong to the instance and are made when the
 * first query runs (eng_exec_shared_get).
 */
#ifndef RACKDB_ENGINE_EXECUTOR_H
#define RACKDB_ENGINE_EXECUTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "codegen/compile_pool.h"
#include "codegen/jit.h"
#include "engine/exec_stmt.h"
#include "engine/mem.h"
#include "engine/physical.h"
#include "engine/rt_result.h"
#include "engine/sched.h"

/* What every query of an instance shares. */
typedef struct eng_exec_shared {
    cg_jit *jit;
    cg_compile_pool *compile; /* compiles a query's later pipelines ahead */
    eng_sched *sched;
    eng_mem *mem; /* the instance's tracker, parent of every query's */
} eng_exec_shared;

/* The instance's shared executor state, made on first use. */
sto_status eng_exec_shared_get(rackdb *db, eng_exec_shared **out);
void eng_exec_shared_free(eng_exec_shared *s);

/* What one query runs with. */
typedef struct eng_exec_env {
    eng_exec_shared *shared;
    unsigned threads;
    eng_mem *mem;
    atomic_int *cancel;
    bool analyze; /* count rows per operator (EXPLAIN ANALYZE) */
    /* A distributed plan's cluster (engine/exchange.h); NULL: one server,
     * where an EXCHANGE only drops its key columns. */
    struct eng_dist_env *dist;
    /* jit_compile_ahead = off: compile each pipeline just before it runs */
    bool serial_compile;
    bool jit_cache; /* reuse code compiled before from the same IR (jit.h) */
    /* A pipeline whose optimized code is still compiling starts with quick
     * code and takes the optimized code between morsels once it is ready;
     * jit_switch_after = N > 0 (tests) makes it run exactly N morsels with
     * the quick code, then wait for the optimized code. */
    unsigned jit_switch_after;
    /* Tests: start such a pipeline lean (executor.c's lean_start: all
     * workers but one on FAST code, the last waits for the OPT code) even
     * where RACKDB_JIT_LEAN_START or a spare core would not. */
    bool jit_lean_start;
} eng_exec_env;

/* Figures of one pipeline, for EXPLAIN ANALYZE and timing reports. */
typedef struct eng_pipe_stats {
    uint64_t rows_in, rows_out;
    /* compile_ms: how long the query waited for the pipeline's code (what
     * compiling added to its time); compile_work_ms: how long the compile
     * itself took, on whichever thread (codegen/compile_pool.h) */
    double compile_ms, compile_work_ms, run_ms;
    cg_mode mode;
    /* adaptive start: morsels run with FAST code while the OPT code
     * compiled, and whether the OPT code then took over (mode is OPT) */
    uint64_t fast_morsels;
    bool switched;
    bool lean; /* the adaptive start was a lean one (executor.c, lean_start) */
    unsigned workers;
    uint64_t morsels;
    unsigned ir_instructions;
    /* analyze: rows leaving step i (i < nsteps), rows into the sink at
     * [nsteps]; NULL otherwise. malloc'd. */
    uint64_t *step_rows;
    /* JOIN sink: building the shared table; PARTITION sink: partitioning
     * both sides and building the partitions' tables (0 parts: none) */
    double join_ms;
    uint64_t join_parts;
    unsigned join_passes;
    /* JOIN sink, shared table: what the run time gave the probe: a
     * semi-join filter, an exact key bitmap, one whose keys are unique */
    bool join_filter, join_keybits, join_unique;
} eng_pipe_stats;

typedef struct eng_query_stats {
    unsigned npipes;
    eng_pipe_stats *pipes;                      /* malloc'd */
    double compile_ms, compile_work_ms, run_ms; /* sums over the pipelines */
} eng_query_stats;

void eng_query_stats_free(eng_query_stats *s);

/* Runs the pipelines of ph; *rows are the result rows (in the last
 * pipeline's row format; ph->result_slots say where each column is).
 * String values point into tables or into *strings, which the caller frees
 * with eng_exec_strings_free once done with the rows. */
typedef struct eng_exec_strings eng_exec_strings;
sto_status eng_exec_physical(const eng_exec_env *env, const eng_physical *ph,
                             eng_query_stats *stats, eng_rowset *rows, eng_exec_strings **strings);
void eng_exec_strings_free(eng_exec_strings *s);

/* SELECT, EXPLAIN, CREATE TABLE AS and INSERT ... SELECT (exec_stmt.c's
 * exec_query). */
sto_status eng_exec_query(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out);

/* Runs a query into a new table (its output columns, all nullable), e.g.
 * for COPY (query) TO. Takes the catalog's read lock itself. */
sto_status eng_query_to_table(eng_stmt_ctx *ctx, const sql_query *query, sto_table **out);

/* The rows that ran ph, the physical plan of plan, as a new result with
 * the plan's column names and types (exec_query.c; also the coordinator's
 * result of a distributed plan). *out is NULL on error. */
sto_status eng_plan_result(const sql_plan *plan, const eng_physical *ph, const eng_rowset *rows,
                           double compile_ms, atomic_int *cancel, eng_result **out);

/* The physical plan as text (explain.c): one line per operator, indented
 * under the pipeline that runs it, with estimated rows; with stats (EXPLAIN
 * ANALYZE) also actual rows, time and compile time per pipeline. malloc'd. */
sto_status eng_explain_text(const eng_physical *ph, const eng_query_stats *stats, char **out);

#endif
