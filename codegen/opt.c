/*
 * opt.c — compile modes: which passes run and at which code generation level
 * (see opt.h).
 */
#include "codegen/opt.h"

#include <time.h>

#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* OPT's IR passes. A pipeline is one function whose hot part is one loop
 * of straight-line code with rare exits (checks, helper calls), and no
 * calls to inline: what pays is promoting the binding's allocas to
 * registers (sroa), folding and merging what the generator emitted
 * naively (early-cse, instcombine: range checks become one compare),
 * tidying the blocks (simplifycfg) and hoisting loop-invariant loads (licm
 * on the rotated loop: the generator emits its row loops rotated,
 * loop-rotate is there for the inner loops of joins and aggregates).
 * default<O2> spends most of its time on inlining, vectorizers, unrolling,
 * GVN and jump threading, which find little to do here: on the 22 TPC-H
 * queries at SF 1 its passes took about 4x as long, for object code within
 * a few percent of the same size. Without loop-rotate and the second
 * instcombine the 31 OPT modules of the 22 queries took 8 % less CPU, but
 * the generated code 5 % more perf samples over four interleaved pairs of
 * runs, within the noise of a shared machine: not taken (docs/codegen.md,
 * "Where compile time goes"). instcombine named in a pipeline text checks
 * that it reached a fixpoint and aborts the process when not (the default
 * pipelines turn that off): turn it off. */
#define OPT_PASSES                                                                                 \
    "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg,"                 \
    "loop-mssa(loop-rotate,licm),instcombine<no-verify-fixpoint>,simplifycfg)"

/* FAST's IR passes: the first four of OPT's list. They cost about as much
 * as they save FastISel (they shrink the IR it walks), and they turn the
 * generator's allocas into registers and fold its naive expressions, which
 * FastISel does not: TPC-H Q22's substring-IN filter over customer ran in
 * 2.6 ms instead of 10 (2 threads, SF 1), and the 22 queries' geometric
 * mean went from 63.1 and 61.4 ms to 56.8 and 59.6 ms in two interleaved
 * pairs of runs (load 1.3-1.5). */
#define FAST_PASSES "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg)"

double cg_mode_opt_extra_us(double ir_instructions)
{
    return CG_OPT_EXTRA_FIXED_US +
           CG_OPT_EXTRA_US_PER_INSTRUCTION * (ir_instructions > 0 ? ir_instructions : 0);
}

double cg_mode_opt_saving_us(const cg_mode_work *w)
{
    if (!(w->rows > 0) || !(w->row_saving_ns > 0)) return 0;
    return w->rows / (w->threads > 1 ? w->threads : 1) * w->row_saving_ns / 1e3;
}

cg_mode cg_mode_choose(const cg_mode_work *w)
{
    return cg_mode_opt_saving_us(w) > cg_mode_opt_extra_us(w->ir_instructions) ? CG_MODE_OPT
                                                                               : CG_MODE_FAST;
}

const char *cg_mode_name(cg_mode mode)
{
    return mode == CG_MODE_OPT ? "opt" : "fast";
}

LLVMCodeGenOptLevel cg_mode_codegen_level(cg_mode mode)
{
    /* At LLVMCodeGenLevelNone the code generator turns FastISel on by itself. */
    return mode == CG_MODE_OPT ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelNone;
}

int64_t cg_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t cg_thread_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

sto_status cg_llvm_error(LLVMErrorRef err, const char *what)
{
    char *msg = LLVMGetErrorMessage(err); /* consumes err */
    sto_status st = sto_error(STO_INTERNAL_ERROR, "%s: %s", what, msg ? msg : "unknown error");
    LLVMDisposeErrorMessage(msg);
    return st;
}

sto_status cg_run_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, cg_mode mode,
                         int64_t *elapsed_us)
{
    *elapsed_us = 0;
    int64_t start = cg_clock_us();
    LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err =
        LLVMRunPasses(mod, mode == CG_MODE_OPT ? OPT_PASSES : FAST_PASSES, tm, options);
    LLVMDisposePassBuilderOptions(options);
    *elapsed_us = cg_clock_us() - start;
    return err ? cg_llvm_error(err, "codegen: optimization passes failed") : STO_OK;
}
