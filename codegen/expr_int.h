/*
 * expr_int.h — what the files of the expression compiler share (expr.c,
 * expr_cast.c, expr_date.c, expr_string.c, expr_key.c). Not for other
 * modules: they use codegen/expr.h.
 */
#ifndef RACKDB_CODEGEN_EXPR_INT_H
#define RACKDB_CODEGEN_EXPR_INT_H

#include "codegen/expr.h"

/* One compilation of an expression tree. */
typedef struct cg_x {
    cg_fn *f;
    cg_module *m;
    const sql_plan_ctx *ctx;
    cg_binding *b;
} cg_x;

/* The value of e. */
sto_status cg_x_expr(cg_x *x, const sql_bexpr *e, cg_val *out);

/* Code emitted between region_begin and region_end runs conditionally:
 * columns loaded in between are forgotten at the end (see cg_binding). */
uint32_t cg_x_region_begin(cg_x *x);
void cg_x_region_end(cg_x *x, uint32_t mark);

/* --- small IR helpers (expr.c) --- */

/* a OR b for null flags, either may be NULL (known not null). */
LLVMValueRef cg_x_null_or(cg_x *x, LLVMValueRef a, LLVMValueRef b);
/* v, or `safe` where null is set (so checks never see a NULL's garbage). */
LLVMValueRef cg_x_sanitize(cg_x *x, LLVMValueRef v, LLVMValueRef null, LLVMValueRef safe);
/* BOOLEAN i8 ↔ i1. */
LLVMValueRef cg_x_to_i1(cg_x *x, LLVMValueRef v8);
LLVMValueRef cg_x_from_i1(cg_x *x, LLVMValueRef v1);
/* A runtime helper of codegen/rt.h, declared in the module. */
sto_status cg_x_helper(cg_x *x, const char *name, void *addr, LLVMTypeRef ret, LLVMTypeRef *params,
                       unsigned nparams, LLVMValueRef *callee);
/* A stack slot of type ty in the entry block. */
LLVMValueRef cg_x_slot(cg_x *x, LLVMTypeRef ty);

/* Skipping work for NULL inputs: code between guard_begin and guard_end runs
 * only when `null` is false (no branch at all when null is NULL); guard_end
 * returns the value computed inside, or zero of its type when skipped. */
typedef struct cg_x_guard {
    LLVMValueRef null;
    LLVMBasicBlockRef from, join;
} cg_x_guard;
void cg_x_guard_begin(cg_x *x, LLVMValueRef null, cg_x_guard *g);
LLVMValueRef cg_x_guard_end(cg_x *x, cg_x_guard *g, LLVMValueRef v);

/* a OP b (a comparison of SQL_OP_LIST) for two non-null values of type t:
 * i1. */
LLVMValueRef cg_x_compare(cg_x *x, sql_op op, sto_type t, LLVMValueRef a, LLVMValueRef b);

/* --- casts (expr_cast.c) --- */
sto_status cg_x_cast(cg_x *x, sto_type from, sto_type to, cg_val in, cg_val *out);

/* --- dates (expr_date.c): EXTRACT_*, DATE_* functions --- */
sto_status cg_x_date_func(cg_x *x, const sql_bexpr *e, cg_val *out);
/* Year, month (1..12), day (1..31) of an i32 day number, as i32. */
void cg_x_civil_from_days(cg_x *x, LLVMValueRef days, LLVMValueRef *y, LLVMValueRef *m,
                          LLVMValueRef *d);

/* --- numbers (expr_math.c): FLOOR, CEIL, SIGN, SQRT, POWER, EXP, LN, LOG,
 * PI --- */
sto_status cg_x_math_func(cg_x *x, const sql_bexpr *e, cg_val *out);

/* --- strings (expr_string.c) --- */

/* The two 64-bit words of a %sto_str: w0 = len | prefix << 32, w1 = the
 * inline bytes 5..12 or the pointer. Constants are decoded at compile time. */
void cg_x_str_words(cg_x *x, LLVMValueRef s, LLVMValueRef *w0, LLVMValueRef *w1);
/* s stored in a fresh stack slot, for helpers taking const sto_str *. */
LLVMValueRef cg_x_str_spill(cg_x *x, LLVMValueRef s);
/* i32 -1/0/1 memcmp order of two non-null strings, and i1 equality. */
LLVMValueRef cg_x_str_cmp3(cg_x *x, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_x_str_eq(cg_x *x, LLVMValueRef a, LLVMValueRef b);
/* i64 hash input of a non-null string (see cg_hash_vals). */
LLVMValueRef cg_x_str_hash(cg_x *x, LLVMValueRef s);
/* The string functions and operators: LIKE family, SUBSTRING, UPPER,
 * LOWER, LENGTH, and || (e is the FUNC or OP node). */
sto_status cg_x_string_func(cg_x *x, const sql_bexpr *e, cg_val *out);
sto_status cg_x_concat(cg_x *x, const sql_bexpr *e, cg_val *out);

/* The i64 hash mixing step and finalizer (expr_key.c). */
LLVMValueRef cg_x_hash_mix(cg_x *x, LLVMValueRef h, LLVMValueRef k);

#endif
