/*
 * opt.h — how hard the code generator works on a module: the compile modes.
 *
 * Compiling is part of a query's running time, so the engine picks per query
 * how much to spend on it. A pipeline that will see few rows is compiled in
 * FAST mode: four cheap IR passes and LLVM's O0 code generator (which
 * selects instructions with FastISel), a millisecond or two for a typical
 * pipeline. A pipeline over many rows is compiled in OPT mode: a
 * short list of IR passes chosen for generated pipelines (opt.c says which
 * and why; about a quarter of `default<O2>`'s time) and the optimizing code
 * generator for the JIT's target machine; it costs milliseconds and runs
 * several times faster per row.
 *
 * Data flow: the physical planner's row estimate → cg_mode_for_rows() →
 * cg_jit_compile() (jit.h), which calls cg_run_passes() here and creates its
 * target machines at cg_mode_codegen_level(); each step's time lands in the
 * compiled query's statistics.
 */
#ifndef RACKDB_CODEGEN_OPT_H
#define RACKDB_CODEGEN_OPT_H

#include <stdint.h>

#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Types.h>

#include "storage/status.h"

/* In order of effort: a later mode's code is at least as fast. */
typedef enum cg_mode {
    CG_MODE_FAST, /* four cheap IR passes, O0 code generation with FastISel */
    CG_MODE_OPT,  /* opt.c's pass list and the optimizing code generator */
} cg_mode;

#define CG_MODE_COUNT 2

/* Rows per worker thread from which OPT pays for itself. FAST code costs
 * about 1.5 ns more per row than OPT code on the checked column sum (more on
 * heavier expressions); OPT costs about 2 ms more to compile for a tiny
 * function and 20 ms for one of ~200 instructions, on one thread, while the
 * rows are shared by all workers (bench/jit/bench_jit measures both): the
 * break-even lies at a few million rows per worker. */
#define CG_OPT_MIN_ROWS_PER_THREAD 4000000.0

/* The mode for a pipeline expected to process `estimated_rows` rows on
 * `threads` workers. */
cg_mode cg_mode_for_rows(double estimated_rows, int threads);

/* "fast" or "opt", for EXPLAIN and timing reports. */
const char *cg_mode_name(cg_mode mode);

/* The code generator's optimization level for a mode. */
LLVMCodeGenOptLevel cg_mode_codegen_level(cg_mode mode);

/* Runs the mode's IR pass pipeline over `mod`, using `tm` for
 * target information, and stores the microseconds it took in *elapsed_us. */
sto_status cg_run_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, cg_mode mode,
                         int64_t *elapsed_us);

/* A monotonic clock in microseconds, for compile-time statistics. */
int64_t cg_clock_us(void);

/* The calling thread's CPU time in microseconds: unlike the clock, not
 * inflated when other threads share the cores. */
int64_t cg_thread_cpu_us(void);

/* An LLVM error as an sto_status (XX000, "<what>: <LLVM's message>"); consumes
 * `err`. */
sto_status cg_llvm_error(LLVMErrorRef err, const char *what);

#endif
