/*
 * ir.h — the building blocks the pipeline compiler writes LLVM IR with.
 *
 * A cg_module is one unit of compilation (typically: all pipelines of one
 * query). It owns its own LLVM context, so modules are built on different
 * threads without locks; cg_jit_compile() (jit.h) consumes it. Inside a module,
 * a cg_fn is one generated function under construction: a builder plus the
 * bookkeeping the helpers below need.
 *
 * The error-exit protocol. Every generated function has the C signature
 *
 *     int32_t fn(cg_error *err, <parameters given to cg_fn_begin>...)
 *
 * and returns CG_ERR_NONE (0) when it ran to the end. When a checked operation
 * fails (an overflow, a division by zero, a runtime helper reporting an
 * error) the generated code stores the error kind, the SQL type of the
 * operation and the row it was working on into *err and returns the kind at
 * once: a query never continues with a wrong value. The caller turns the
 * record into an sto_status with cg_error_status().
 *
 * The checks branch (marked cold) to the function's one exit block, which
 * takes the kind, type and row through phis, so the hot path pays one
 * predictable branch per checked operation and the code stays small. Loops
 * (cg_loop_begin/end) keep the current row index in the cg_fn, which is
 * what the exit reports.
 *
 * Runtime helpers are plain C functions in the engine. cg_extern() declares
 * one in the module and binds its name to its address; at compile time the
 * JIT defines that name once, engine-wide, as an absolute symbol, so generated
 * code calls the helper directly. Helpers that can fail return an int32_t
 * cg_error_kind and, for errors with their own message, leave an sto_status in
 * err->detail (call them through cg_call_checked with f->err as an argument).
 */
#ifndef RACKDB_CODEGEN_IR_H
#define RACKDB_CODEGEN_IR_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "storage/status.h"
#include "storage/types.h"

typedef struct cg_jit cg_jit;

/* --- errors raised by generated code ------------------------------------ */

/*  kind              SQLSTATE (status.h)          */
#define CG_ERROR_LIST(X)                                                                           \
    X(NONE, SUCCESS)                                                                               \
    X(OVERFLOW, NUMERIC_VALUE_OUT_OF_RANGE)                                                        \
    X(DIVISION_BY_ZERO, DIVISION_BY_ZERO)                                                          \
    X(RUNTIME, INTERNAL_ERROR)                                                                     \
    X(CANCELED, QUERY_CANCELED)

typedef enum cg_error_kind {
#define CG_ERROR_ENUM(kind, sqlstate) CG_ERR_##kind,
    CG_ERROR_LIST(CG_ERROR_ENUM)
#undef CG_ERROR_ENUM
        CG_ERR_COUNT
} cg_error_kind;

/* What generated code leaves behind when it stops on an error. The layout is
 * part of the protocol: generated code writes these fields by offset. */
typedef struct cg_error {
    int32_t kind;      /* cg_error_kind */
    int32_t type;      /* sto_type_id of the failing operation, -1 = none */
    int64_t row;       /* row index being processed, -1 = none */
    sto_status detail; /* a helper's own error (CG_ERR_RUNTIME), or NULL */
} cg_error;

/* A cleared record, ready to be passed to generated code. */
static inline cg_error cg_error_none(void)
{
    cg_error e = {CG_ERR_NONE, -1, -1, NULL};
    return e;
}

/* The error a record describes (NULL for CG_ERR_NONE), with PostgreSQL's
 * wording ("bigint out of range", "division by zero"). Takes over
 * err->detail. */
sto_status cg_error_status(cg_error *err);

/* --- modules ------------------------------------------------------------ */

typedef struct cg_module cg_module;

/* A new, empty module whose code will be compiled by `jit`. */
sto_status cg_module_create(cg_jit *jit, const char *name, cg_module **out);

/* Frees a module that will not be compiled (cg_jit_compile frees the rest). */
void cg_module_destroy(cg_module *m);

LLVMContextRef cg_module_context(const cg_module *m);
LLVMModuleRef cg_module_llvm(const cg_module *m);
cg_jit *cg_module_jit(const cg_module *m);

/* The LLVM type of a value of a SQL type (expands STO_TYPE_LIST): BOOLEAN i8,
 * INTEGER/DATE i32, BIGINT/DECIMAL i64, DOUBLE double, CHAR/VARCHAR the
 * 16-byte struct %sto_str = { i64, i64 }: the sto_str's two words, the
 * first len | prefix << 32, the second the inline bytes 5-12 or the
 * pointer. */
LLVMTypeRef cg_type(const cg_module *m, sto_type_id id);

/* The two words of a constant %sto_str; false when s is not a constant. */
bool cg_const_str_words(LLVMValueRef s, uint64_t *w0, uint64_t *w1);

/* Plain LLVM types of the module's context. */
LLVMTypeRef cg_i1(const cg_module *m);
LLVMTypeRef cg_i8(const cg_module *m);
LLVMTypeRef cg_i32(const cg_module *m);
LLVMTypeRef cg_i64(const cg_module *m);
LLVMTypeRef cg_i128(const cg_module *m); /* DECIMAL aggregates */
LLVMTypeRef cg_f64(const cg_module *m);
LLVMTypeRef cg_ptr(const cg_module *m);
LLVMTypeRef cg_void(const cg_module *m);

/* Bytes a value of type `ty` occupies in memory under the JIT's data layout. */
uint64_t cg_abi_size(const cg_module *m, LLVMTypeRef ty);

/* --- constants ---------------------------------------------------------- */

LLVMValueRef cg_const_bool(const cg_module *m, bool v); /* i1 */
LLVMValueRef cg_const_i32(const cg_module *m, int32_t v);
LLVMValueRef cg_const_i64(const cg_module *m, int64_t v);
LLVMValueRef cg_const_i128(const cg_module *m, __int128 v);
LLVMValueRef cg_const_f64(const cg_module *m, double v);
LLVMValueRef cg_const_int(LLVMTypeRef ty, int64_t v); /* any integer type */
/* An address known at compile time (query state, a hash table). */
LLVMValueRef cg_const_ptr(const cg_module *m, const void *p);
/* A value of a SQL type, read from its C representation at `value`. String
 * constants point to their bytes, which must outlive the compiled code. */
LLVMValueRef cg_const_value(const cg_module *m, sto_type_id id, const void *value);

/* --- functions ---------------------------------------------------------- */

/* A generated function under construction. The fields are for the compiler
 * that uses these helpers; `b` may be used directly for plain IR. */
typedef struct cg_fn {
    cg_module *m;
    LLVMValueRef fn;
    LLVMBuilderRef b;      /* positioned where code is being added */
    LLVMBuilderRef alloca; /* adds stack slots to the entry block */
    LLVMBasicBlockRef entry, body;
    LLVMValueRef err; /* the cg_error * parameter */
    LLVMValueRef row; /* i64 row index reported by checks; NULL reports -1 */
    unsigned nparams; /* parameters after err */
    /* the shared error exit and its phis (ir.c's fail_block); NULL: none yet */
    LLVMBasicBlockRef fail;
    LLVMValueRef fail_kind, fail_type, fail_row;
} cg_fn;

/* Starts `int32_t name(cg_error *err, params...)` in m. The name is what
 * cg_code_fn() (jit.h) finds it by; it must be unique within the module. */
sto_status cg_fn_begin(cg_fn *f, cg_module *m, const char *name, LLVMTypeRef *params,
                       unsigned nparams);

/* Parameter i of those given to cg_fn_begin (err is f->err). */
LLVMValueRef cg_fn_param(const cg_fn *f, unsigned i);

/* Returns CG_ERR_NONE from the current block. */
void cg_fn_return_ok(cg_fn *f);

/* Finishes the function: checks it is well formed and frees the builders.
 * On error the module must be destroyed, not compiled. */
sto_status cg_fn_end(cg_fn *f);

/* A new basic block at the end of the function. */
LLVMBasicBlockRef cg_block(cg_fn *f, const char *name);

/* br cond, then, otherwise, for a condition already combined without
 * branches (a conjunction of comparisons): marked unpredictable, so the code
 * generator keeps it one test rather than splitting it into a branch per
 * term, which on unsorted data mispredicts. */
void cg_br_combined(cg_fn *f, LLVMValueRef cond, LLVMBasicBlockRef then,
                    LLVMBasicBlockRef otherwise);

/* --- variables (stack slots; mem2reg turns them into registers in OPT) --- */

typedef struct cg_var {
    LLVMValueRef slot;
    LLVMTypeRef type;
} cg_var;

/* A variable of type `ty` in the entry block, set to `init` at the current
 * position (init may be NULL: uninitialized). */
cg_var cg_var_new(cg_fn *f, LLVMTypeRef ty, LLVMValueRef init, const char *name);
LLVMValueRef cg_var_get(cg_fn *f, cg_var v);
void cg_var_set(cg_fn *f, cg_var v, LLVMValueRef value);

/* --- memory ------------------------------------------------------------- */

/* Element `index` (i64) of an array of `ty` at `base`: its address, value. */
LLVMValueRef cg_elem_ptr(cg_fn *f, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef index);
LLVMValueRef cg_load_elem(cg_fn *f, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef index);
void cg_store_elem(cg_fn *f, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef index,
                   LLVMValueRef value);

/* --- error exits -------------------------------------------------------- */

/* If `cond` (i1) holds: record `kind` for SQL type `type` (-1: none) at the
 * current row and return. Continues in a new block where cond was false. */
void cg_fail_if(cg_fn *f, LLVMValueRef cond, cg_error_kind kind, int type);

/* --- checked arithmetic ------------------------------------------------- */
/* Operands have the same type: an integer type (i32, i64, i128) or double.
 * `type` is the SQL type of the operation, for the error message. Integer
 * overflow (llvm.s*.with.overflow) and a double result that becomes infinite
 * from finite operands raise CG_ERR_OVERFLOW (SQLSTATE 22003). */

LLVMValueRef cg_add(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type);
LLVMValueRef cg_sub(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type);
LLVMValueRef cg_mul(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type);
LLVMValueRef cg_neg(cg_fn *f, LLVMValueRef a, sto_type_id type);

/* a / b and a % b, truncating toward zero like SQL. b == 0 raises
 * CG_ERR_DIVISION_BY_ZERO (22012); MIN / -1 raises CG_ERR_OVERFLOW;
 * MIN % -1 is 0. */
LLVMValueRef cg_div(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type);
LLVMValueRef cg_rem(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type);

/* Integer widening (sign-extending) and checked narrowing. */
LLVMValueRef cg_widen(cg_fn *f, LLVMValueRef v, LLVMTypeRef to);
LLVMValueRef cg_narrow(cg_fn *f, LLVMValueRef v, LLVMTypeRef to, sto_type_id type);

/* --- DECIMAL ------------------------------------------------------------ */
/* Decimals are integers scaled by 10^scale: i64 in columns and expressions,
 * i128 in aggregates. Results have the width of the wider operand; whatever
 * does not fit raises CG_ERR_OVERFLOW ("numeric field overflow"). Digits
 * dropped by a smaller scale are rounded half away from zero, like
 * PostgreSQL's numeric. */

/* v at scale `from` as a value at scale `to`. */
LLVMValueRef cg_decimal_rescale(cg_fn *f, LLVMValueRef v, int from, int to);

/* a (scale sa) * b (scale sb) at scale rs; exact in i128 for i64 operands. */
LLVMValueRef cg_decimal_mul(cg_fn *f, LLVMValueRef a, int sa, LLVMValueRef b, int sb, int rs);

/* a (scale sa) / b (scale sb) at scale rs; b == 0 raises 22012. */
LLVMValueRef cg_decimal_div(cg_fn *f, LLVMValueRef a, int sa, LLVMValueRef b, int sb, int rs);

/* --- loops -------------------------------------------------------------- */

typedef struct cg_loop {
    LLVMValueRef index; /* i64, from begin up to end - 1 */
    LLVMValueRef end;
    LLVMBasicBlockRef body, exit;
    LLVMValueRef saved_row;
} cg_loop;

/* for (index = begin; index < end; index++) over i64 values: the body is
 * built between these two calls; f->row is the index inside it. The loop
 * is emitted rotated (a guard, then a body that tests at its end), the
 * form the code generator wants: FAST runs no loop-rotate pass. */
void cg_loop_begin(cg_fn *f, cg_loop *loop, LLVMValueRef begin, LLVMValueRef end);
void cg_loop_end(cg_fn *f, cg_loop *loop);

/* --- calls into the engine's C runtime ----------------------------------- */

/* A function type, for cg_extern. */
LLVMTypeRef cg_fn_type(const cg_module *m, LLVMTypeRef ret, LLVMTypeRef *params, unsigned nparams);

/* Declares C function `name` of type `fn_type` at `addr` and returns it, for
 * cg_call. Names are engine-wide: one name, one address for the JIT's life
 * (give helpers their C name, e.g. "eng_rt_ht_insert"). */
sto_status cg_extern(cg_module *m, const char *name, LLVMTypeRef fn_type, void *addr,
                     LLVMValueRef *out);

/* Calls a function from cg_extern (or one built in this module). */
LLVMValueRef cg_call(cg_fn *f, LLVMValueRef callee, LLVMValueRef *args, unsigned nargs);

/* Calls a helper that returns an int32_t cg_error_kind; a nonzero result ends
 * the generated function with that kind at the current row. */
void cg_call_checked(cg_fn *f, LLVMValueRef callee, LLVMValueRef *args, unsigned nargs);

/* --- what the JIT reads from a module ------------------------------------ */

/* Functions made with cg_fn_begin: how many, the i-th one's name as given,
 * and the symbol it has in the object code (prefixed to be unique JIT-wide). */
unsigned cg_module_fn_count(const cg_module *m);
const char *cg_module_fn_name(const cg_module *m, unsigned i);
const char *cg_module_fn_symbol(const cg_module *m, unsigned i);

/* Frees the module's LLVM context and IR, keeping the names above (the JIT
 * calls it once the object code exists). */
void cg_module_drop_ir(cg_module *m);

/* Helpers declared with cg_extern. */
unsigned cg_module_extern_count(const cg_module *m);
const char *cg_module_extern_name(const cg_module *m, unsigned i);
void *cg_module_extern_addr(const cg_module *m, unsigned i);

#endif
