/*
 * expr.h — bound SQL expressions (sql/plan.h) compiled to LLVM IR.
 *
 * The pipeline compiler keeps the current tuple in registers and asks this
 * module for the IR that computes an expression over it. Nothing is
 * interpreted per tuple: every operator becomes inline IR, and only work not
 * worth inlining (a LIKE with '_', building a new string, parsing text)
 * calls a C helper of codegen/rt.h by its address.
 *
 * Data flow:
 *
 *   sql_bexpr tree ──cg_expr_compile──► IR at f->b, result in a cg_val
 *        ▲                     │
 *        │                     └─ column ids are looked up in a cg_binding,
 *   pipeline compiler             which loads a column the first time it is
 *   (owns the binding)            used (so a filter whose costly conditions
 *                                 are branched around skips their columns)
 *
 * Values. A cg_val holds a value of the expression's SQL type in the LLVM
 * type cg_type() gives (BOOLEAN i8 0/1, INTEGER/DATE i32, BIGINT/DECIMAL
 * i64 scaled, DOUBLE double, CHAR/VARCHAR the 16-byte %sto_str struct) and
 * an i1 null flag. A NULL flag pointer means "known not null", so NOT NULL
 * columns and constants cost nothing. When the flag is true, v is undefined.
 *
 * Errors. Checks (overflow 22003, division by zero 22012, invalid text
 * 22P02, ...) leave the generated function through the cg_error protocol of
 * ir.h, reporting f->row. What SQL does not evaluate raises nothing: an
 * untaken CASE arm, COALESCE arguments after a non-NULL one, and the right
 * side of AND/OR once the left side decides (when that side can fail; sides
 * that cannot fail are evaluated branch-free).
 *
 * Strings made at run time (||, UPPER, casts to text longer than 12 bytes)
 * are allocated in a cg_rt_strings arena (codegen/rt.h) whose address the
 * caller puts in the binding; they live until the caller resets the arena
 * (per morsel), so a sink that keeps a string must copy it. SUBSTRING never
 * allocates: it points into its argument's bytes or stores inline.
 *
 * Compile errors (an expression kind the generator cannot handle, such as a
 * subquery not yet unnested, or a missing string arena) come back as sto_status;
 * the function under construction must then be discarded.
 */
#ifndef RACKDB_CODEGEN_EXPR_H
#define RACKDB_CODEGEN_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "codegen/ir.h"
#include "sql/plan.h"
#include "storage/status.h"
#include "storage/types.h"

/* A SQL value in registers. null: i1, or NULL when known not null. */
typedef struct cg_val {
    LLVMValueRef v;
    LLVMValueRef null;
} cg_val;

/* Emits the IR that loads column `id` of the current tuple at f->b. */
typedef cg_val (*cg_load_fn)(void *arg, cg_fn *f, sql_colid id);

/* Where the columns of the current tuple come from.
 *
 * vals[id] is the value of column id (vals[id].v == NULL: not available
 * yet). A caller may fill slots itself before compiling (values it already
 * holds in registers); for a missing one, the compiler calls load() once and
 * caches the result. A load emitted inside a branch that is not always taken
 * (the right side of AND/OR, a CASE arm, ...) does not dominate the code
 * after the branch, so the compiler forgets such cached values when it leaves
 * the branch; values loaded unconditionally stay cached and may be used by
 * code the caller emits afterwards. */
typedef struct cg_binding {
    uint32_t ncols; /* ids 1..ncols are valid */
    cg_val *vals;   /* [ncols + 1], owned */
    sql_colid *log; /* ids loaded lazily, in order (internal) */
    uint32_t nlog;
    cg_load_fn load; /* may be NULL: every used id must be in vals */
    void *load_arg;
    /* ptr to the query's parameters: const sto_value[nparams], $1 at [0];
     * NULL when the expression has no parameters. */
    LLVMValueRef params;
    /* ptr to the worker's cg_rt_strings arena; NULL when none (an expression
     * that makes new long strings then fails to compile). */
    LLVMValueRef strings;
} cg_binding;

/* A binding for the ids of ctx (all slots empty), loading through `load`
 * (may be NULL). */
sto_status cg_binding_init(cg_binding *b, const sql_plan_ctx *ctx, cg_load_fn load, void *arg);
void cg_binding_free(cg_binding *b);

/* Forgets every cached value, e.g. when the caller moves to a new tuple
 * (keeps the slots the caller set itself only if keep_set is true). */
void cg_binding_reset(cg_binding *b, bool keep_set);

/* --- expressions ---------------------------------------------------------- */

/* Emits IR computing e for the current tuple; *out is its value. */
sto_status cg_expr_compile(cg_fn *f, const sql_plan_ctx *ctx, const sql_bexpr *e, cg_binding *b,
                           cg_val *out);

/* A BOOLEAN e as an i1 "is true" (NULL counts as false): what filters and
 * join conditions test. */
sto_status cg_expr_compile_pred(cg_fn *f, const sql_plan_ctx *ctx, const sql_bexpr *e,
                                cg_binding *b, LLVMValueRef *out);

/* --- keys: hashing, equality, ordering -------------------------------------
 * For hash joins, hash aggregation, DISTINCT, set operations and sorts. All
 * values of one key position must have the same type (DECIMALs the same
 * scale): equal values of one type hash equal, whatever their storage form
 * (CHAR and VARCHAR with the same bytes hash equal; -0.0 and 0.0 too). */

/* A 64-bit hash (i64) of n values. A NULL hashes as a fixed constant. The
 * high and low bits are both usable (partitioning takes high bits, table
 * slots low bits). */
LLVMValueRef cg_hash_vals(cg_fn *f, const cg_val *vals, const sto_type *types, unsigned n);

/* i1: a[i] = b[i] for all i. nulls_equal: NULL matches NULL (GROUP BY,
 * DISTINCT); otherwise NULL matches nothing (join keys). */
LLVMValueRef cg_equal_vals(cg_fn *f, const cg_val *a, const cg_val *b, const sto_type *types,
                           unsigned n, bool nulls_equal);

/* i32 -1, 0, 1: the order of a and b under one ORDER BY key. NULLs come
 * first or last as nulls_first says, whatever desc says; desc reverses the
 * order of non-null values. Strings order by bytes (memcmp, shorter first);
 * doubles put NaN above every number, as PostgreSQL does. */
LLVMValueRef cg_compare_vals(cg_fn *f, cg_val a, cg_val b, sto_type type, bool desc,
                             bool nulls_first);

#endif
