/*
 * expr_cast.c — CAST between rackdb's types in generated code.
 *
 * Numeric casts are inline: integers widen and narrow with range checks,
 * DECIMAL changes scale with rounding half away from zero and checks the
 * target precision (PostgreSQL's numeric(p,s) rule), DOUBLE → integer rounds
 * to even (rint, as PostgreSQL) and checks the range. Casts from and to text
 * call the helpers of rt_cast.c, skipped for NULLs; explicit casts to
 * CHAR(n)/VARCHAR(n) cut longer strings, as PostgreSQL does.
 */
#include <math.h>

#include "codegen/expr_int.h"
#include "codegen/rt.h"

static bool is_integer(uint8_t id)
{
    return id == STO_TYPE_INTEGER || id == STO_TYPE_BIGINT;
}

static int64_t pow10_i64(int k)
{
    int64_t p = 1;
    for (int i = 0; i < k; i++)
        p *= 10;
    return p;
}

/* A DECIMAL(p, s) value must have at most p digits. */
static void check_precision(cg_x *x, LLVMValueRef v, int precision)
{
    if (precision <= 0 || precision > STO_DECIMAL_MAX_PRECISION) return;
    int64_t limit = pow10_i64(precision) - 1;
    /* -limit <= v <= limit as one unsigned comparison */
    LLVMValueRef shifted = LLVMBuildAdd(x->f->b, v, cg_const_i64(x->m, limit), "");
    LLVMValueRef bad =
        LLVMBuildICmp(x->f->b, LLVMIntUGT, shifted, cg_const_i64(x->m, 2 * limit), "");
    cg_fail_if(x->f, bad, CG_ERR_OVERFLOW, STO_TYPE_DECIMAL);
}

static LLVMValueRef call_f64_intrinsic(cg_x *x, const char *name, LLVMValueRef v)
{
    LLVMTypeRef f64 = cg_f64(x->m);
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(cg_module_llvm(x->m), id, &f64, 1);
    return LLVMBuildCall2(x->f->b, LLVMIntrinsicGetType(cg_module_context(x->m), id, &f64, 1), decl,
                          &v, 1, "");
}

/* DOUBLE → INTEGER/BIGINT: rint, then the range; NaN is out of range. */
static LLVMValueRef double_to_int(cg_x *x, LLVMValueRef v, sto_type to)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef r = call_f64_intrinsic(x, "llvm.rint", v);
    double lo = to.id == STO_TYPE_INTEGER ? -2147483648.0 : -9223372036854775808.0;
    double hi = to.id == STO_TYPE_INTEGER ? 2147483648.0 : 9223372036854775808.0;
    LLVMValueRef ok =
        LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGE, r, cg_const_f64(x->m, lo), ""),
                     LLVMBuildFCmp(b, LLVMRealOLT, r, cg_const_f64(x->m, hi), ""), "");
    cg_fail_if(x->f, LLVMBuildNot(b, ok, ""), CG_ERR_OVERFLOW, to.id);
    return LLVMBuildFPToSI(b, r, cg_type(x->m, to.id), "");
}

/* Numeric to numeric, for a non-NULL (or sanitized) value. */
static LLVMValueRef numeric_cast(cg_x *x, sto_type from, sto_type to, LLVMValueRef v)
{
    cg_fn *f = x->f;
    LLVMBuilderRef b = f->b;
    LLVMTypeRef ty = cg_type(x->m, to.id);
    int fs = from.id == STO_TYPE_DECIMAL ? from.scale : 0;
    switch (to.id) {
    case STO_TYPE_DOUBLE:
        if (from.id == STO_TYPE_DOUBLE) return v;
        v = LLVMBuildSIToFP(b, v, ty, "");
        /* exact for |v| < 2^53: one correctly rounded division */
        if (fs) v = LLVMBuildFDiv(b, v, cg_const_f64(x->m, (double)pow10_i64(fs)), "");
        return v;
    case STO_TYPE_DECIMAL:
        if (from.id == STO_TYPE_DOUBLE) return NULL; /* helper, see below */
        v = cg_decimal_rescale(f, cg_widen(f, v, ty), fs, to.scale);
        check_precision(x, v, to.precision);
        return v;
    default: /* INTEGER, BIGINT */
        if (from.id == STO_TYPE_DOUBLE) return double_to_int(x, v, to);
        if (fs) v = cg_decimal_rescale(f, v, fs, 0);
        if (LLVMGetIntTypeWidth(LLVMTypeOf(v)) < LLVMGetIntTypeWidth(ty)) return cg_widen(f, v, ty);
        return cg_narrow(f, v, ty, to.id);
    }
}

/* Calls helper `fn` (returning a cg_error_kind) with err first and an out
 * slot of type out_ty last, skipped when null; the loaded result. */
static LLVMValueRef call_with_out(cg_x *x, LLVMValueRef fn, LLVMValueRef null, LLVMValueRef *args,
                                  unsigned nargs, LLVMTypeRef out_ty, bool checked)
{
    LLVMValueRef slot = cg_x_slot(x, out_ty);
    cg_x_guard g;
    cg_x_guard_begin(x, null, &g);
    LLVMValueRef all[8];
    unsigned n = 0;
    if (checked) all[n++] = x->f->err;
    for (unsigned i = 0; i < nargs; i++)
        all[n++] = args[i];
    all[n++] = slot;
    if (checked)
        cg_call_checked(x->f, fn, all, n);
    else
        cg_call(x->f, fn, all, n);
    LLVMValueRef r = LLVMBuildLoad2(x->f->b, out_ty, slot, "");
    return cg_x_guard_end(x, &g, r);
}

static sto_status string_to(cg_x *x, sto_type to, cg_val in, cg_val *out)
{
    LLVMTypeRef ptr = cg_ptr(x->m), i32 = cg_i32(x->m);
    LLVMValueRef s = cg_x_str_spill(x, in.v);
    LLVMValueRef fn;
    out->null = in.null;
    switch (to.id) {
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT: {
        LLVMTypeRef p[] = {ptr, ptr, i32, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_str_to_int", (void *)cg_rt_str_to_int, i32, p, 4, &fn));
        LLVMValueRef args[] = {s, cg_const_i32(x->m, to.id)};
        LLVMValueRef r = call_with_out(x, fn, in.null, args, 2, cg_i64(x->m), true);
        out->v = LLVMBuildTrunc(x->f->b, r, cg_type(x->m, to.id), "");
        return STO_OK;
    }
    case STO_TYPE_DECIMAL: {
        LLVMTypeRef p[] = {ptr, ptr, i32, i32, ptr};
        STO_TRY(
            cg_x_helper(x, "cg_rt_str_to_decimal", (void *)cg_rt_str_to_decimal, i32, p, 5, &fn));
        LLVMValueRef args[] = {s, cg_const_i32(x->m, to.precision), cg_const_i32(x->m, to.scale)};
        out->v = call_with_out(x, fn, in.null, args, 3, cg_i64(x->m), true);
        return STO_OK;
    }
    case STO_TYPE_DOUBLE: {
        LLVMTypeRef p[] = {ptr, ptr, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_str_to_double", (void *)cg_rt_str_to_double, i32, p, 3, &fn));
        out->v = call_with_out(x, fn, in.null, &s, 1, cg_f64(x->m), true);
        return STO_OK;
    }
    case STO_TYPE_DATE: {
        LLVMTypeRef p[] = {ptr, ptr, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_str_to_date", (void *)cg_rt_str_to_date, i32, p, 3, &fn));
        out->v = call_with_out(x, fn, in.null, &s, 1, i32, true);
        return STO_OK;
    }
    case STO_TYPE_BOOLEAN: {
        LLVMTypeRef p[] = {ptr, ptr, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_str_to_bool", (void *)cg_rt_str_to_bool, i32, p, 3, &fn));
        out->v = call_with_out(x, fn, in.null, &s, 1, cg_i8(x->m), true);
        return STO_OK;
    }
    default:
        return sto_error(STO_INTERNAL_ERROR, "codegen: no cast from text to type %d", to.id);
    }
}

static sto_status to_string(cg_x *x, sto_type from, cg_val in, cg_val *out)
{
    LLVMTypeRef ptr = cg_ptr(x->m), i32 = cg_i32(x->m), i64 = cg_i64(x->m);
    LLVMTypeRef str = cg_type(x->m, STO_TYPE_VARCHAR);
    LLVMValueRef fn;
    out->null = in.null;
    if (from.id == STO_TYPE_BOOLEAN) {
        sto_str t = sto_str_make("true", 4), f = sto_str_make("false", 5);
        out->v = LLVMBuildSelect(x->f->b, cg_x_to_i1(x, in.v),
                                 cg_const_value(x->m, STO_TYPE_VARCHAR, &t),
                                 cg_const_value(x->m, STO_TYPE_VARCHAR, &f), "");
        return STO_OK;
    }
    if (from.id == STO_TYPE_DATE) {
        LLVMTypeRef p[] = {i32, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_date_to_str", (void *)cg_rt_date_to_str, cg_void(x->m), p, 2,
                            &fn));
        out->v = call_with_out(x, fn, in.null, &in.v, 1, str, false);
        return STO_OK;
    }
    if (!x->b->strings)
        return sto_error(STO_INTERNAL_ERROR, "codegen: a cast to text needs a string arena");
    LLVMValueRef args[3] = {x->b->strings};
    switch (from.id) {
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT: {
        LLVMTypeRef p[] = {ptr, ptr, i64, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_int_to_str", (void *)cg_rt_int_to_str, i32, p, 4, &fn));
        args[1] = cg_widen(x->f, in.v, i64);
        out->v = call_with_out(x, fn, in.null, args, 2, str, true);
        return STO_OK;
    }
    case STO_TYPE_DECIMAL: {
        LLVMTypeRef p[] = {ptr, ptr, i64, i32, ptr};
        STO_TRY(
            cg_x_helper(x, "cg_rt_decimal_to_str", (void *)cg_rt_decimal_to_str, i32, p, 5, &fn));
        args[1] = in.v;
        args[2] = cg_const_i32(x->m, from.scale);
        out->v = call_with_out(x, fn, in.null, args, 3, str, true);
        return STO_OK;
    }
    case STO_TYPE_DOUBLE: {
        LLVMTypeRef p[] = {ptr, ptr, cg_f64(x->m), ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_double_to_str", (void *)cg_rt_double_to_str, i32, p, 4, &fn));
        args[1] = in.v;
        out->v = call_with_out(x, fn, in.null, args, 2, str, true);
        return STO_OK;
    }
    default:
        return sto_error(STO_INTERNAL_ERROR, "codegen: no cast from type %d to text", from.id);
    }
}

/* Fits a string to CHAR(n)/VARCHAR(n): cut to n characters, and for CHAR
 * without trailing blanks. Only strings longer than n bytes (or any string
 * turning into CHAR) reach the helper. */
static sto_status fit_string(cg_x *x, sto_type from, sto_type to, cg_val in, cg_val *out)
{
    bool strip = to.id == STO_TYPE_CHAR && from.id != STO_TYPE_CHAR;
    *out = in;
    if (!to.length && !strip) return STO_OK;
    if (!strip && from.length && from.length <= to.length) return STO_OK;
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef ptr = cg_ptr(x->m), i32 = cg_i32(x->m), str = cg_type(x->m, STO_TYPE_VARCHAR);
    LLVMValueRef fn;
    LLVMTypeRef p[] = {ptr, i32, i32, ptr};
    STO_TRY(
        cg_x_helper(x, "cg_rt_str_truncate", (void *)cg_rt_str_truncate, cg_void(x->m), p, 4, &fn));
    LLVMValueRef v = in.null ? cg_x_sanitize(x, in.v, in.null, LLVMConstNull(str)) : in.v;
    LLVMValueRef need = cg_const_bool(x->m, true);
    if (!strip) {
        LLVMValueRef len = LLVMBuildTrunc(b, LLVMBuildExtractValue(b, v, 0, ""), i32, "");
        need = LLVMBuildICmp(b, LLVMIntUGT, len, cg_const_i32(x->m, (int32_t)to.length), "");
    }
    LLVMValueRef skip = LLVMBuildNot(b, need, "");
    cg_x_guard g;
    cg_x_guard_begin(x, strip ? NULL : skip, &g);
    LLVMValueRef args[] = {cg_x_str_spill(x, v), cg_const_i32(x->m, (int32_t)to.length),
                           cg_const_i32(x->m, to.id == STO_TYPE_CHAR)};
    LLVMValueRef slot = cg_x_slot(x, str);
    LLVMValueRef a4[] = {args[0], args[1], args[2], slot};
    cg_call(x->f, fn, a4, 4);
    LLVMValueRef r = LLVMBuildLoad2(b, str, slot, "");
    if (!strip) {
        /* the skipped path keeps the input */
        LLVMBasicBlockRef end = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, g.join);
        LLVMPositionBuilderAtEnd(b, g.join);
        LLVMValueRef phi = LLVMBuildPhi(b, str, "");
        LLVMValueRef vals[2] = {v, r};
        LLVMBasicBlockRef from_blocks[2] = {g.from, end};
        LLVMAddIncoming(phi, vals, from_blocks, 2);
        r = phi;
    }
    out->v = r;
    return STO_OK;
}

sto_status cg_x_cast(cg_x *x, sto_type from, sto_type to, cg_val in, cg_val *out)
{
    *out = in;
    LLVMBuilderRef b = x->f->b;
    bool from_num =
        is_integer(from.id) || from.id == STO_TYPE_DECIMAL || from.id == STO_TYPE_DOUBLE;
    bool to_num = is_integer(to.id) || to.id == STO_TYPE_DECIMAL || to.id == STO_TYPE_DOUBLE;
    if (from_num && to_num) {
        if (from.id == to.id && (from.id != STO_TYPE_DECIMAL ||
                                 (from.scale == to.scale && from.precision <= to.precision)))
            return STO_OK;
        LLVMValueRef zero = LLVMConstNull(cg_type(x->m, from.id));
        LLVMValueRef v = cg_x_sanitize(x, in.v, in.null, zero);
        if (to.id == STO_TYPE_DECIMAL && from.id == STO_TYPE_DOUBLE) {
            LLVMTypeRef ptr = cg_ptr(x->m), i32 = cg_i32(x->m);
            LLVMTypeRef p[] = {ptr, cg_f64(x->m), i32, i32, ptr};
            LLVMValueRef fn;
            STO_TRY(cg_x_helper(x, "cg_rt_double_to_decimal", (void *)cg_rt_double_to_decimal, i32,
                                p, 5, &fn));
            LLVMValueRef args[] = {in.v, cg_const_i32(x->m, to.precision),
                                   cg_const_i32(x->m, to.scale)};
            out->v = call_with_out(x, fn, in.null, args, 3, cg_i64(x->m), true);
            return STO_OK;
        }
        out->v = numeric_cast(x, from, to, v);
        return STO_OK;
    }
    if (sto_type_is_string(from.id) && sto_type_is_string(to.id))
        return fit_string(x, from, to, in, out);
    if (sto_type_is_string(from.id)) return string_to(x, to, in, out);
    if (sto_type_is_string(to.id)) {
        cg_val s;
        STO_TRY(to_string(x, from, in, &s));
        return fit_string(x, sto_type_string(STO_TYPE_VARCHAR, 0), to, s, out);
    }
    if (from.id == STO_TYPE_BOOLEAN && is_integer(to.id)) {
        out->v = LLVMBuildZExt(b, in.v, cg_type(x->m, to.id), "");
        return STO_OK;
    }
    if (is_integer(from.id) && to.id == STO_TYPE_BOOLEAN) {
        out->v =
            cg_x_from_i1(x, LLVMBuildICmp(b, LLVMIntNE, in.v, LLVMConstNull(LLVMTypeOf(in.v)), ""));
        return STO_OK;
    }
    if (from.id == to.id) return STO_OK;
    return sto_error(STO_FEATURE_NOT_SUPPORTED, "codegen: no cast from %s to %s",
                     sto_type_id_name(from.id), sto_type_id_name(to.id));
}
