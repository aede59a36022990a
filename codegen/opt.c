/*
 * opt.c — compile modes: which passes run and at which code generation level
 * (see opt.h).
 */
#include "codegen/opt.h"

#include <time.h>

#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

cg_mode cg_mode_for_rows(double estimated_rows, int threads)
{
    double per_thread = estimated_rows / (threads > 1 ? threads : 1);
    return per_thread >= CG_OPT_MIN_ROWS_PER_THREAD ? CG_MODE_OPT : CG_MODE_FAST;
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
    if (mode != CG_MODE_OPT) return STO_OK; /* FAST runs no passes */
    int64_t start = cg_clock_us();
    LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(mod, "default<O2>", tm, options);
    LLVMDisposePassBuilderOptions(options);
    *elapsed_us = cg_clock_us() - start;
    return err ? cg_llvm_error(err, "codegen: optimization passes failed") : STO_OK;
}
