/*
 * expr_math.c — the numeric functions: FLOOR, CEIL and SIGN inline (on
 * DECIMAL's scaled integers as well as on DOUBLE), SQRT, POWER, EXP, LN and
 * LOG through one C helper that raises PostgreSQL's errors for arguments
 * outside the function's domain and for results that overflow or underflow.
 */
#include <math.h>

#include "codegen/expr_int.h"
#include "codegen/rt.h"

/* FLOOR / CEIL of a DECIMAL (to no fraction digits: the quotient by
 * 10^scale, moved down or up by one when the remainder points the other
 * way) or of a DOUBLE (the C library's). */
static sto_status floor_ceil(cg_x *x, const sql_bexpr *e, cg_val a, cg_val *out)
{
    LLVMBuilderRef b = x->f->b;
    bool up = e->func.id == SQL_FUNC_CEIL;
    sto_type t = e->func.args.items[0]->type;
    if (t.id == STO_TYPE_DOUBLE) {
        LLVMTypeRef d = cg_type(x->m, STO_TYPE_DOUBLE);
        LLVMTypeRef params[] = {d};
        LLVMValueRef fn;
        STO_TRY(up ? cg_x_helper(x, "ceil", (void *)ceil, d, params, 1, &fn)
                   : cg_x_helper(x, "floor", (void *)floor, d, params, 1, &fn));
        LLVMValueRef args[] = {a.v};
        out->v = cg_call(x->f, fn, args, 1);
        return STO_OK;
    }
    if (t.scale == 0) {
        out->v = a.v;
        return STO_OK;
    }
    LLVMTypeRef i64 = cg_i64(x->m);
    LLVMValueRef v = cg_widen(x->f, a.v, i64);
    LLVMValueRef unit = cg_const_i64(x->m, sto_pow10[t.scale]);
    LLVMValueRef q = LLVMBuildSDiv(b, v, unit, ""), r = LLVMBuildSRem(b, v, unit, "");
    LLVMValueRef off = LLVMBuildICmp(b, up ? LLVMIntSGT : LLVMIntSLT, r, cg_const_i64(x->m, 0), "");
    LLVMValueRef step = LLVMBuildZExt(b, off, i64, "");
    q = up ? LLVMBuildAdd(b, q, step, "") : LLVMBuildSub(b, q, step, "");
    out->v = LLVMBuildTrunc(b, q, cg_type(x->m, e->type.id), "");
    return STO_OK;
}

/* SIGN: -1, 0 or 1 (0 for NaN, as PostgreSQL). */
static void sign(cg_x *x, const sql_bexpr *e, cg_val a, cg_val *out)
{
    LLVMBuilderRef b = x->f->b;
    sto_type t = e->func.args.items[0]->type;
    LLVMValueRef pos, neg;
    if (t.id == STO_TYPE_DOUBLE) {
        LLVMValueRef zero = LLVMConstReal(LLVMTypeOf(a.v), 0.0);
        pos = LLVMBuildFCmp(b, LLVMRealOGT, a.v, zero, "");
        neg = LLVMBuildFCmp(b, LLVMRealOLT, a.v, zero, "");
    } else {
        LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a.v));
        pos = LLVMBuildICmp(b, LLVMIntSGT, a.v, zero, "");
        neg = LLVMBuildICmp(b, LLVMIntSLT, a.v, zero, "");
    }
    LLVMTypeRef rt = cg_type(x->m, e->type.id);
    LLVMValueRef one =
        e->type.id == STO_TYPE_DOUBLE ? LLVMConstReal(rt, 1.0) : LLVMConstInt(rt, 1, 0);
    LLVMValueRef minus =
        e->type.id == STO_TYPE_DOUBLE ? LLVMConstReal(rt, -1.0) : LLVMConstInt(rt, (uint64_t)-1, 1);
    LLVMValueRef zero = LLVMConstNull(rt);
    out->v = LLVMBuildSelect(b, pos, one, LLVMBuildSelect(b, neg, minus, zero, ""), "");
}

/* SQRT, POWER, EXP, LN, LOG over DOUBLE: cg_rt_math, skipped for NULL. */
static sto_status libm_call(cg_x *x, const sql_bexpr *e, cg_val *args, cg_val *out)
{
    int op = e->func.id == SQL_FUNC_SQRT    ? CG_MATH_SQRT
             : e->func.id == SQL_FUNC_POWER ? CG_MATH_POWER
             : e->func.id == SQL_FUNC_EXP   ? CG_MATH_EXP
             : e->func.id == SQL_FUNC_LN    ? CG_MATH_LN
                                            : CG_MATH_LOG10;
    LLVMTypeRef d = cg_type(x->m, STO_TYPE_DOUBLE), ptr = cg_ptr(x->m), i32 = cg_i32(x->m);
    LLVMTypeRef params[] = {ptr, i32, d, d, ptr};
    LLVMValueRef fn;
    STO_TRY(cg_x_helper(x, "cg_rt_math", (void *)cg_rt_math, i32, params, 5, &fn));
    LLVMValueRef slot = cg_x_slot(x, d);
    cg_x_guard g;
    cg_x_guard_begin(x, out->null, &g);
    LLVMValueRef call[] = {x->f->err, cg_const_i32(x->m, op), args[0].v,
                           e->func.args.count > 1 ? args[1].v : LLVMConstReal(d, 0.0), slot};
    cg_call_checked(x->f, fn, call, 5);
    out->v = cg_x_guard_end(x, &g, LLVMBuildLoad2(x->f->b, d, slot, ""));
    return STO_OK;
}

sto_status cg_x_math_func(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    if (e->func.id == SQL_FUNC_PI) {
        *out = (cg_val){LLVMConstReal(cg_type(x->m, STO_TYPE_DOUBLE), M_PI), NULL};
        return STO_OK;
    }
    cg_val args[2] = {{NULL, NULL}, {NULL, NULL}};
    out->null = NULL;
    for (uint32_t i = 0; i < e->func.args.count && i < 2; i++) {
        STO_TRY(cg_x_expr(x, e->func.args.items[i], &args[i]));
        out->null = cg_x_null_or(x, out->null, args[i].null);
    }
    switch (e->func.id) {
    case SQL_FUNC_FLOOR:
    case SQL_FUNC_CEIL:
        return floor_ceil(x, e, args[0], out);
    case SQL_FUNC_SIGN:
        sign(x, e, args[0], out);
        return STO_OK;
    default:
        return libm_call(x, e, args, out);
    }
}
