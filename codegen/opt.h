/*
 * opt.h — how hard the code generator works on a module: the compile modes.
 *
 * Compiling is part of a query's running time, so the engine picks per
 * pipeline how much to spend on it. FAST mode runs four cheap IR passes and
 * LLVM's O0 code generator (which selects instructions with FastISel), a
 * millisecond or two for a typical pipeline. OPT mode runs a short list of
 * IR passes chosen for generated pipelines (opt.c says which and why; about
 * a quarter of `default<O2>`'s time) and the optimizing code generator for
 * the JIT's target machine; it costs about 1 ms plus 35 us per IR
 * instruction more, and its code runs up to several times faster per row.
 * cg_mode_choose() weighs the two: OPT only where the rows make up for the
 * compile.
 *
 * Data flow: the pipeline's rows, work per row and size → cg_mode_choose() →
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

/* What compiling one pipeline OPT rather than FAST buys and costs. The
 * engine fills it from the pipeline's description (engine/jit_cost.h): how
 * many rows the code will see, on how many workers, how much CPU time OPT
 * code saves per row (arithmetic and aggregate updates gain most; rows that
 * wait on memory, in probes of large tables, gain little), and how large the
 * module is. */
typedef struct cg_mode_work {
    double rows;            /* rows the pipeline reads */
    unsigned threads;       /* workers sharing them (0 counts as 1) */
    double row_saving_ns;   /* CPU time OPT code saves per row read */
    double ir_instructions; /* the module's size as built (or an estimate) */
} cg_mode_work;

/* What OPT costs to compile beyond FAST, in microseconds of the compiling
 * thread: a fixed part and a part per IR instruction as built. Calibrated
 * on the 22 TPC-H queries' modules (docs/codegen.md, "The mode rule"). */
#define CG_OPT_EXTRA_FIXED_US           1100.0
#define CG_OPT_EXTRA_US_PER_INSTRUCTION 35.0

/* The extra compile time of OPT over FAST for a module of that size (us). */
double cg_mode_opt_extra_us(double ir_instructions);

/* The wall time OPT code saves over FAST code on the pipeline's rows (us):
 * the rows are shared by the workers, the compile runs on one thread. */
double cg_mode_opt_saving_us(const cg_mode_work *w);

/* OPT when it saves more run time than it costs compile time, else FAST. */
cg_mode cg_mode_choose(const cg_mode_work *w);

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
