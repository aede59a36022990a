/*
 * jit_cost.h — the compile mode of a pipeline, from what its rows do.
 *
 * OPT code (codegen/opt.h) runs faster than FAST code, but costs more to
 * compile, and a query waits for its compiles. Whether OPT pays depends on
 * how much faster its code runs per row and on how long it takes to
 * compile, not on the row count alone: FastISel and the fast register
 * allocator keep every value in memory between blocks, which costs most
 * where a row does arithmetic (checked DECIMAL products, date functions,
 * string compares) and updates aggregates, and least where a row waits on
 * memory (a probe of a hash table larger than the caches) or is only
 * copied. This module reads a pipeline's description and estimates both
 * sides for cg_mode_choose():
 *
 *   eng_pipe (steps, sink, row estimates) → eng_jit_cost_of() → per-row
 *     saving of OPT, estimated module size → cg_mode_choose() with the
 *     rows at hand → FAST or OPT
 *
 * The weights are calibrated on the 22 TPC-H queries (docs/codegen.md,
 * "The mode rule").
 */
#ifndef RACKDB_ENGINE_JIT_COST_H
#define RACKDB_ENGINE_JIT_COST_H

#include "codegen/opt.h"
#include "engine/physical.h"

/* A pipeline's side of the mode rule. */
typedef struct eng_jit_cost {
    double row_saving_ns;   /* CPU time OPT saves per row the pipeline reads */
    double ir_instructions; /* estimated size of its module as built */
} eng_jit_cost;

/* Estimates both from p's steps, sink and row estimates. */
eng_jit_cost eng_jit_cost_of(const eng_pipe *p);

/* The mode for p reading `rows` rows on `threads` workers. */
cg_mode eng_jit_mode(const eng_pipe *p, double rows, unsigned threads);

#endif
