/*
 * expr_key.c — keys in generated code: the hash, equality and sort order of
 * lists of values, for hash joins, hash aggregation, DISTINCT and sorting.
 *
 * The hash folds one 64-bit word per value into a running state with a
 * multiply-xorshift step and finishes with MurmurHash3's 64-bit finalizer,
 * so both the high bits (radix partitioning) and the low bits (table slots)
 * are well mixed. Each value's word is a canonical form of the value: ints
 * sign-extended, -0.0 as 0.0 and one NaN, short strings as their masked
 * words, long strings as a hash of their bytes; a NULL is a fixed word.
 */
#include "codegen/expr_int.h"

#define HASH_SEED 0x6A09E667F3BCC908ull
#define HASH_NULL 0xB7E151628AED2A6Bull
#define HASH_MUL  0x9E3779B97F4A7C15ull

static LLVMValueRef c64(cg_x *x, uint64_t v)
{
    return LLVMConstInt(cg_i64(x->m), v, 0);
}

LLVMValueRef cg_x_hash_mix(cg_x *x, LLVMValueRef h, LLVMValueRef k)
{
    LLVMBuilderRef b = x->f->b;
    h = LLVMBuildMul(b, LLVMBuildXor(b, h, k, ""), c64(x, HASH_MUL), "");
    return LLVMBuildXor(b, h, LLVMBuildLShr(b, h, c64(x, 32), ""), "");
}

static LLVMValueRef finish(cg_x *x, LLVMValueRef h)
{
    LLVMBuilderRef b = x->f->b;
    h = LLVMBuildXor(b, h, LLVMBuildLShr(b, h, c64(x, 33), ""), "");
    h = LLVMBuildMul(b, h, c64(x, 0xFF51AFD7ED558CCDull), "");
    h = LLVMBuildXor(b, h, LLVMBuildLShr(b, h, c64(x, 33), ""), "");
    h = LLVMBuildMul(b, h, c64(x, 0xC4CEB9FE1A85EC53ull), "");
    return LLVMBuildXor(b, h, LLVMBuildLShr(b, h, c64(x, 33), ""), "");
}

/* The word a non-null value of type t hashes as. */
static LLVMValueRef key_word(cg_x *x, LLVMValueRef v, sto_type t)
{
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef i64 = cg_i64(x->m);
    switch (t.id) {
    case STO_TYPE_BOOLEAN:
        return LLVMBuildZExt(b, v, i64, "");
    case STO_TYPE_INTEGER:
    case STO_TYPE_DATE:
        return LLVMBuildSExt(b, v, i64, "");
    case STO_TYPE_DOUBLE: {
        LLVMValueRef zero = cg_const_f64(x->m, 0.0);
        v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, v, zero, ""), zero, v, "");
        LLVMValueRef bits = LLVMBuildBitCast(b, v, i64, "");
        return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""),
                               c64(x, 0x7FF8000000000000ull), bits, "");
    }
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        return cg_x_str_hash(x, v);
    default:
        return v;
    }
}

/* v, or zero of its type when flagged NULL (a NULL's bits are garbage). */
static LLVMValueRef zeroed(cg_x *x, cg_val v)
{
    return cg_x_sanitize(x, v.v, v.null, LLVMConstNull(LLVMTypeOf(v.v)));
}

LLVMValueRef cg_hash_vals(cg_fn *f, const cg_val *vals, const sto_type *types, unsigned n)
{
    cg_x x = {f, f->m, NULL, NULL};
    LLVMValueRef h = c64(&x, HASH_SEED);
    for (unsigned i = 0; i < n; i++) {
        LLVMValueRef k = key_word(&x, zeroed(&x, vals[i]), types[i]);
        if (vals[i].null) k = LLVMBuildSelect(f->b, vals[i].null, c64(&x, HASH_NULL), k, "");
        h = cg_x_hash_mix(&x, h, k);
    }
    return finish(&x, h);
}

LLVMValueRef cg_equal_vals(cg_fn *f, const cg_val *a, const cg_val *b, const sto_type *types,
                           unsigned n, bool nulls_equal)
{
    cg_x x = {f, f->m, NULL, NULL};
    LLVMBuilderRef bl = f->b;
    LLVMValueRef all = cg_const_bool(f->m, true);
    for (unsigned i = 0; i < n; i++) {
        LLVMValueRef eq = cg_x_compare(&x, SQL_OP_EQ, types[i], zeroed(&x, a[i]), zeroed(&x, b[i]));
        LLVMValueRef an = a[i].null, bn = b[i].null;
        if (an || bn) {
            LLVMValueRef f0 = cg_const_bool(f->m, false);
            if (!an) an = f0;
            if (!bn) bn = f0;
            LLVMValueRef neither = LLVMBuildNot(bl, LLVMBuildOr(bl, an, bn, ""), "");
            eq = LLVMBuildAnd(bl, eq, neither, "");
            if (nulls_equal) eq = LLVMBuildOr(bl, eq, LLVMBuildAnd(bl, an, bn, ""), "");
        }
        all = LLVMBuildAnd(bl, all, eq, "");
    }
    return all;
}

LLVMValueRef cg_compare_vals(cg_fn *f, cg_val a, cg_val b, sto_type type, bool desc,
                             bool nulls_first)
{
    cg_x x = {f, f->m, NULL, NULL};
    LLVMBuilderRef bl = f->b;
    LLVMTypeRef i32 = cg_i32(f->m);
    LLVMValueRef va = zeroed(&x, a), vb = zeroed(&x, b), c;
    if (type.id == STO_TYPE_CHAR || type.id == STO_TYPE_VARCHAR) {
        c = cg_x_str_cmp3(&x, va, vb);
    } else {
        LLVMValueRef lt = LLVMBuildZExt(bl, cg_x_compare(&x, SQL_OP_LT, type, va, vb), i32, "");
        LLVMValueRef gt = LLVMBuildZExt(bl, cg_x_compare(&x, SQL_OP_GT, type, va, vb), i32, "");
        c = LLVMBuildSub(bl, gt, lt, "");
    }
    if (desc) c = LLVMBuildNeg(bl, c, "");
    if (!a.null && !b.null) return c;
    LLVMValueRef f0 = cg_const_bool(f->m, false);
    LLVMValueRef an = a.null ? a.null : f0, bn = b.null ? b.null : f0;
    /* one NULL: it goes first or last; both: equal */
    LLVMValueRef first = cg_const_i32(f->m, nulls_first ? -1 : 1);
    LLVMValueRef null_c =
        LLVMBuildSelect(bl, an, LLVMBuildSelect(bl, bn, cg_const_i32(f->m, 0), first, ""),
                        LLVMBuildNeg(bl, first, ""), "");
    return LLVMBuildSelect(bl, LLVMBuildOr(bl, an, bn, ""), null_c, c, "");
}
