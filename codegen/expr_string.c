/*
 * expr_string.c — CHAR/VARCHAR in generated code: comparisons, hashing,
 * LIKE, SUBSTRING, ||, UPPER, LOWER, LENGTH, STRPOS, TRIM, REPLACE, LEFT, RIGHT.
 *
 * A %sto_str is 16 bytes: len, a 4-byte prefix, then 8 more inline bytes or
 * a pointer. The code reads it as two 64-bit words, w0 = len | prefix << 32
 * and w1, so most decisions take one or two integer comparisons:
 *
 *   equality   w0 (length and first bytes) decides most pairs; strings of
 *              up to 12 bytes also compare w1; only long strings with equal
 *              heads call a memcmp helper.
 *   order      the big-endian prefix decides most pairs; short strings
 *              finish with w1; the rest calls a helper.
 *   hash       short strings hash their words, long ones their bytes.
 *
 * Bytes past a short string's end are masked off everywhere, so nothing
 * depends on how the producer padded them.
 *
 * LIKE with a constant pattern is compiled per pattern. A pattern of
 * literal pieces separated by '%' (after ESCAPE processing) checks its
 * anchored first and last pieces inline (a length test and a few word
 * compares: 'PROMO%', '%BRASS') and finds the middle pieces left to right
 * with memmem ('%green%', '%special%requests%'); the leftmost match of each
 * piece is always the right one, so no backtracking is needed. Patterns with
 * '_', ILIKE and patterns known only at run time go to the general matcher
 * cg_rt_like.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/expr_int.h"
#include "codegen/rt.h"

LLVMValueRef cg_x_str_spill(cg_x *x, LLVMValueRef s)
{
    LLVMValueRef slot = cg_x_slot(x, cg_type(x->m, STO_TYPE_VARCHAR));
    LLVMBuildStore(x->f->b, s, slot);
    return slot;
}

void cg_x_str_words(cg_x *x, LLVMValueRef s, LLVMValueRef *w0, LLVMValueRef *w1)
{
    uint64_t c0, c1;
    if (cg_const_str_words(s, &c0, &c1)) {
        *w0 = LLVMConstInt(cg_i64(x->m), c0, 0);
        *w1 = LLVMConstInt(cg_i64(x->m), c1, 0);
        return;
    }
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef i64 = cg_i64(x->m);
    LLVMTypeRef ty = LLVMTypeOf(s);
    if (LLVMGetTypeKind(ty) == LLVMStructTypeKind && LLVMCountStructElementTypes(ty) == 2 &&
        LLVMStructGetTypeAtIndex(ty, 0) == i64 && LLVMStructGetTypeAtIndex(ty, 1) == i64) {
        /* the two words without a trip through the stack: a spill's
         * store, address and two loads per use were about 3 % of the
         * 22 TPC-H queries' IR as built */
        *w0 = LLVMBuildExtractValue(b, s, 0, "");
        *w1 = LLVMBuildExtractValue(b, s, 1, "");
        return;
    }
    LLVMValueRef slot = cg_x_str_spill(x, s);
    *w0 = LLVMBuildLoad2(b, i64, slot, "");
    LLVMValueRef p1 =
        LLVMBuildGEP2(b, cg_i8(x->m), slot, (LLVMValueRef[]){cg_const_i64(x->m, 8)}, 1, "");
    *w1 = LLVMBuildLoad2(b, i64, p1, "");
}

/* The constant length of s, if s is a constant. */
static bool const_len(LLVMValueRef s, uint32_t *len)
{
    uint64_t w0, w1;
    if (!cg_const_str_words(s, &w0, &w1)) return false;
    *len = (uint32_t)w0;
    return true;
}

static LLVMValueRef c64(cg_x *x, int64_t v)
{
    return cg_const_i64(x->m, v);
}

static uint64_t byte_mask_c(uint32_t k)
{
    return k >= 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * k)) - 1);
}

static LLVMValueRef umin(cg_x *x, LLVMValueRef a, int64_t c)
{
    LLVMBuilderRef b = x->f->b;
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, a, c64(x, c), ""), a, c64(x, c), "");
}

/* masks()'s results for lengths 0..12, m0 then m1 (a longer string keeps
 * every bit; only its short-string path, whose result is not used, reads
 * them) */
#define STR_BYTE_MASK(k) ((((uint64_t)1 << (4 * (k))) << (4 * (k))) - 1) /* k in 0..8 */
#define STR_M0(n)        (0xFFFFFFFFull | STR_BYTE_MASK((n) < 4 ? (n) : 4) << 32)
#define STR_M1(n)        STR_BYTE_MASK((n) > 4 ? (n)-4 : 0)
#define STR_MASKS(n)     STR_M0(n), STR_M1(n)
static const uint64_t str_masks[2 * (STO_STR_INLINE_MAX + 1)] = {
    STR_MASKS(0),  STR_MASKS(1),  STR_MASKS(2), STR_MASKS(3), STR_MASKS(4),
    STR_MASKS(5),  STR_MASKS(6),  STR_MASKS(7), STR_MASKS(8), STR_MASKS(9),
    STR_MASKS(10), STR_MASKS(11), STR_MASKS(12)};
_Static_assert(STR_M0(3) == 0x00FFFFFFFFFFFFFFull && STR_M1(4) == 0 && STR_M1(5) == 0xFF &&
                   STR_M1(12) == ~0ull,
               "str_masks");

/* Masks keeping what belongs to a string of length len (i64): m0 for w0
 * (length and prefix bytes), m1 for w1 (meaningful only when len <= 12). */
static void masks(cg_x *x, LLVMValueRef len, LLVMValueRef *m0, LLVMValueRef *m1)
{
    LLVMBuilderRef b = x->f->b;
    uint64_t c0, c1;
    if (LLVMIsAConstantInt(len)) {
        uint32_t n = (uint32_t)LLVMConstIntGetZExtValue(len);
        c0 = 0xFFFFFFFFull | byte_mask_c(n < 4 ? n : 4) << 32;
        c1 = byte_mask_c(n > 4 ? (n - 4 > 8 ? 8 : n - 4) : 0);
        *m0 = LLVMConstInt(cg_i64(x->m), c0, 0);
        *m1 = LLVMConstInt(cg_i64(x->m), c1, 0);
        return;
    }
    /* two loads from a table rather than ~17 instructions of shifts and
     * selects per string: Q10's seven-key aggregation hashes and compares
     * five strings, and its code generation time grows with the IR */
    LLVMTypeRef i64 = cg_i64(x->m);
    LLVMValueRef row = LLVMBuildShl(b, umin(x, len, STO_STR_INLINE_MAX), c64(x, 1), "");
    LLVMValueRef row1 = LLVMBuildOr(b, row, c64(x, 1), "");
    LLVMValueRef table = cg_const_ptr(x->m, str_masks);
    *m0 = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i64, table, &row, 1, ""), "");
    *m1 = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i64, table, &row1, 1, ""), "");
    /* the table never changes: stores of the pipeline cannot alias it */
    LLVMContextRef ctx = cg_module_context(x->m);
    unsigned kind = LLVMGetMDKindIDInContext(ctx, "invariant.load", 14);
    LLVMValueRef empty = LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, NULL, 0));
    LLVMSetMetadata(*m0, kind, empty);
    LLVMSetMetadata(*m1, kind, empty);
}

static LLVMValueRef len_of(cg_x *x, LLVMValueRef w0)
{
    return LLVMBuildAnd(x->f->b, w0, c64(x, 0xFFFFFFFF), "");
}

static LLVMValueRef helper_call(cg_x *x, const char *name, void *addr, LLVMTypeRef ret,
                                LLVMTypeRef *params, unsigned n, LLVMValueRef *args, sto_status *st)
{
    LLVMValueRef fn;
    *st = cg_x_helper(x, name, addr, ret, params, n, &fn);
    if (*st) return NULL;
    return cg_call(x->f, fn, args, n);
}

/* An i1 phi at the current block over (value, block) pairs. */
static LLVMValueRef phi_i1(cg_x *x, LLVMValueRef *vals, LLVMBasicBlockRef *from, unsigned n)
{
    LLVMValueRef phi = LLVMBuildPhi(x->f->b, cg_i1(x->m), "");
    LLVMAddIncoming(phi, vals, from, n);
    return phi;
}

LLVMValueRef cg_x_str_eq(cg_x *x, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bl = x->f->b;
    LLVMValueRef a0, a1, b0, b1, m0, m1;
    cg_x_str_words(x, a, &a0, &a1);
    cg_x_str_words(x, b, &b0, &b1);
    uint32_t known;
    bool is_const = const_len(b, &known) || const_len(a, &known);
    LLVMValueRef len = is_const ? c64(x, known) : len_of(x, a0);
    masks(x, len, &m0, &m1);
    LLVMValueRef head = LLVMBuildICmp(bl, LLVMIntEQ, LLVMBuildAnd(bl, a0, m0, ""),
                                      LLVMBuildAnd(bl, b0, m0, ""), "");
    LLVMValueRef tail = LLVMBuildICmp(
        bl, LLVMIntEQ, LLVMBuildAnd(bl, LLVMBuildXor(bl, a1, b1, ""), m1, ""), c64(x, 0), "");
    LLVMValueRef fast = LLVMBuildAnd(bl, head, tail, "");
    if (is_const && known <= STO_STR_INLINE_MAX) return fast;

    /* long strings with equal heads: compare the bytes after the prefix */
    LLVMValueRef is_long = is_const
                               ? cg_const_bool(x->m, true)
                               : LLVMBuildICmp(bl, LLVMIntUGT, len, c64(x, STO_STR_INLINE_MAX), "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(bl);
    LLVMBasicBlockRef slow = cg_block(x->f, "streq.long");
    LLVMBasicBlockRef join = cg_block(x->f, "streq.end");
    LLVMBuildCondBr(bl, LLVMBuildAnd(bl, head, is_long, ""), slow, join);
    LLVMPositionBuilderAtEnd(bl, slow);
    LLVMTypeRef ptr = cg_ptr(x->m), i64 = cg_i64(x->m), i8 = cg_i8(x->m);
    LLVMValueRef four = c64(x, 4);
    LLVMValueRef pa = LLVMBuildGEP2(bl, i8, LLVMBuildIntToPtr(bl, a1, ptr, ""), &four, 1, "");
    LLVMValueRef pb = LLVMBuildGEP2(bl, i8, LLVMBuildIntToPtr(bl, b1, ptr, ""), &four, 1, "");
    LLVMTypeRef params[] = {ptr, ptr, i64};
    LLVMValueRef args[] = {pa, pb, LLVMBuildSub(bl, len, four, "")};
    sto_status st;
    LLVMValueRef r =
        helper_call(x, "cg_rt_mem_eq", (void *)cg_rt_mem_eq, cg_i32(x->m), params, 3, args, &st);
    sto_status_free(st); /* cannot fail: one name, one address */
    LLVMValueRef slow_eq =
        r ? LLVMBuildICmp(bl, LLVMIntNE, r, cg_const_i32(x->m, 0), "") : cg_const_bool(x->m, false);
    LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(bl);
    LLVMBuildBr(bl, join);
    LLVMPositionBuilderAtEnd(bl, join);
    LLVMValueRef vals[] = {fast, slow_eq};
    LLVMBasicBlockRef blocks[] = {from, slow_end};
    return phi_i1(x, vals, blocks, 2);
}

static LLVMValueRef bswap(cg_x *x, LLVMValueRef v)
{
    LLVMTypeRef ty = LLVMTypeOf(v);
    unsigned id = LLVMLookupIntrinsicID("llvm.bswap", 10);
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(cg_module_llvm(x->m), id, &ty, 1);
    return LLVMBuildCall2(x->f->b, LLVMIntrinsicGetType(cg_module_context(x->m), id, &ty, 1), decl,
                          &v, 1, "");
}

/* -1/0/1 of two unsigned integers. */
static LLVMValueRef ucmp3(cg_x *x, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bl = x->f->b;
    LLVMValueRef lt = LLVMBuildZExt(bl, LLVMBuildICmp(bl, LLVMIntULT, a, b, ""), cg_i32(x->m), "");
    LLVMValueRef gt = LLVMBuildZExt(bl, LLVMBuildICmp(bl, LLVMIntUGT, a, b, ""), cg_i32(x->m), "");
    return LLVMBuildSub(bl, gt, lt, "");
}

LLVMValueRef cg_x_str_cmp3(cg_x *x, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bl = x->f->b;
    LLVMValueRef a0, a1, b0, b1, am0, am1, bm0, bm1;
    cg_x_str_words(x, a, &a0, &a1);
    cg_x_str_words(x, b, &b0, &b1);
    LLVMValueRef la = len_of(x, a0), lb = len_of(x, b0);
    masks(x, la, &am0, &am1);
    masks(x, lb, &bm0, &bm1);
    /* prefixes as big-endian numbers: their order is the bytes' order, and
     * masked-off bytes (zero) sort a shorter string first */
    LLVMValueRef pa = bswap(
        x, LLVMBuildTrunc(bl, LLVMBuildLShr(bl, LLVMBuildAnd(bl, a0, am0, ""), c64(x, 32), ""),
                          cg_i32(x->m), ""));
    LLVMValueRef pb = bswap(
        x, LLVMBuildTrunc(bl, LLVMBuildLShr(bl, LLVMBuildAnd(bl, b0, bm0, ""), c64(x, 32), ""),
                          cg_i32(x->m), ""));
    LLVMValueRef c_pre = ucmp3(x, pa, pb);
    LLVMValueRef ta = bswap(x, LLVMBuildAnd(bl, a1, am1, ""));
    LLVMValueRef tb = bswap(x, LLVMBuildAnd(bl, b1, bm1, ""));
    LLVMValueRef c_tail = ucmp3(x, ta, tb);
    LLVMValueRef c_len = ucmp3(x, la, lb);
    LLVMValueRef zero = cg_const_i32(x->m, 0);
    LLVMValueRef c_short =
        LLVMBuildSelect(bl, LLVMBuildICmp(bl, LLVMIntNE, c_tail, zero, ""), c_tail, c_len, "");
    LLVMValueRef pre_differs = LLVMBuildICmp(bl, LLVMIntNE, c_pre, zero, "");
    LLVMValueRef fast_val = LLVMBuildSelect(bl, pre_differs, c_pre, c_short, "");
    LLVMValueRef both_short =
        LLVMBuildAnd(bl, LLVMBuildICmp(bl, LLVMIntULE, la, c64(x, STO_STR_INLINE_MAX), ""),
                     LLVMBuildICmp(bl, LLVMIntULE, lb, c64(x, STO_STR_INLINE_MAX), ""), "");
    LLVMValueRef fast = LLVMBuildOr(bl, pre_differs, both_short, "");
    if (LLVMIsAConstantInt(fast) && LLVMConstIntGetZExtValue(fast)) return fast_val;

    LLVMBasicBlockRef from = LLVMGetInsertBlock(bl);
    LLVMBasicBlockRef slow = cg_block(x->f, "strcmp.slow");
    LLVMBasicBlockRef join = cg_block(x->f, "strcmp.end");
    LLVMBuildCondBr(bl, fast, join, slow);
    LLVMPositionBuilderAtEnd(bl, slow);
    LLVMTypeRef ptr = cg_ptr(x->m);
    LLVMTypeRef params[] = {ptr, ptr};
    LLVMValueRef args[] = {cg_x_str_spill(x, a), cg_x_str_spill(x, b)};
    sto_status st;
    LLVMValueRef r =
        helper_call(x, "cg_rt_str_cmp", (void *)cg_rt_str_cmp, cg_i32(x->m), params, 2, args, &st);
    sto_status_free(st);
    if (!r) r = zero;
    LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(bl);
    LLVMBuildBr(bl, join);
    LLVMPositionBuilderAtEnd(bl, join);
    LLVMValueRef phi = LLVMBuildPhi(bl, cg_i32(x->m), "");
    LLVMValueRef vals[] = {fast_val, r};
    LLVMBasicBlockRef blocks[] = {from, slow_end};
    LLVMAddIncoming(phi, vals, blocks, 2);
    return phi;
}

LLVMValueRef cg_x_str_hash(cg_x *x, LLVMValueRef s)
{
    LLVMBuilderRef bl = x->f->b;
    LLVMValueRef w0, w1, m0, m1;
    cg_x_str_words(x, s, &w0, &w1);
    LLVMValueRef len = len_of(x, w0);
    masks(x, len, &m0, &m1);
    LLVMValueRef short_h =
        cg_x_hash_mix(x, LLVMBuildAnd(bl, w0, m0, ""), LLVMBuildAnd(bl, w1, m1, ""));
    LLVMBasicBlockRef from = LLVMGetInsertBlock(bl);
    LLVMBasicBlockRef slow = cg_block(x->f, "strhash.long");
    LLVMBasicBlockRef join = cg_block(x->f, "strhash.end");
    LLVMBuildCondBr(bl, LLVMBuildICmp(bl, LLVMIntUGT, len, c64(x, STO_STR_INLINE_MAX), ""), slow,
                    join);
    LLVMPositionBuilderAtEnd(bl, slow);
    LLVMTypeRef params[] = {cg_ptr(x->m), cg_i64(x->m)};
    LLVMValueRef args[] = {LLVMBuildIntToPtr(bl, w1, cg_ptr(x->m), ""), len};
    sto_status st;
    LLVMValueRef r = helper_call(x, "cg_rt_hash_bytes", (void *)cg_rt_hash_bytes, cg_i64(x->m),
                                 params, 2, args, &st);
    sto_status_free(st);
    if (!r) r = c64(x, 0);
    LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(bl);
    LLVMBuildBr(bl, join);
    LLVMPositionBuilderAtEnd(bl, join);
    LLVMValueRef phi = LLVMBuildPhi(bl, cg_i64(x->m), "");
    LLVMValueRef vals[] = {short_h, r};
    LLVMBasicBlockRef blocks[] = {from, slow_end};
    LLVMAddIncoming(phi, vals, blocks, 2);
    return phi;
}

/* --- string values in memory ------------------------------------------------ */

/* The bytes (ptr) and length (i64) of a non-null string. */
static void str_bytes(cg_x *x, LLVMValueRef s, LLVMValueRef *data, LLVMValueRef *len)
{
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef i8 = cg_i8(x->m), ptr = cg_ptr(x->m);
    LLVMValueRef slot = cg_x_str_spill(x, s);
    *len = LLVMBuildZExt(b, LLVMBuildLoad2(b, cg_i32(x->m), slot, ""), cg_i64(x->m), "");
    LLVMValueRef inl = LLVMBuildGEP2(b, i8, slot, (LLVMValueRef[]){c64(x, 4)}, 1, "");
    LLVMValueRef pp = LLVMBuildGEP2(b, i8, slot, (LLVMValueRef[]){c64(x, 8)}, 1, "");
    LLVMValueRef out = LLVMBuildLoad2(b, ptr, pp, "");
    LLVMValueRef is_short = LLVMBuildICmp(b, LLVMIntULE, *len, c64(x, STO_STR_INLINE_MAX), "");
    *data = LLVMBuildSelect(b, is_short, inl, out, "");
}

/* A private constant array holding bytes, for needles the code compares
 * against: it lives as long as the compiled code. */
static LLVMValueRef global_bytes(cg_x *x, const char *bytes, size_t n)
{
    LLVMContextRef ctx = cg_module_context(x->m);
    LLVMValueRef init = LLVMConstStringInContext(ctx, bytes, (unsigned)n, 1);
    LLVMValueRef g = LLVMAddGlobal(cg_module_llvm(x->m), LLVMTypeOf(init), "like.bytes");
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    return g;
}

/* i1: the n bytes at p equal `bytes`. Inline loads for short needles. */
static LLVMValueRef bytes_equal(cg_x *x, LLVMValueRef p, const char *bytes, size_t n,
                                sto_status *st)
{
    LLVMBuilderRef b = x->f->b;
    *st = STO_OK;
    if (n > 16) {
        LLVMTypeRef params[] = {cg_ptr(x->m), cg_ptr(x->m), cg_i64(x->m)};
        LLVMValueRef args[] = {p, global_bytes(x, bytes, n), c64(x, (int64_t)n)};
        LLVMValueRef r =
            helper_call(x, "cg_rt_mem_eq", (void *)cg_rt_mem_eq, cg_i32(x->m), params, 3, args, st);
        if (!r) return NULL;
        return LLVMBuildICmp(b, LLVMIntNE, r, cg_const_i32(x->m, 0), "");
    }
    LLVMValueRef diff = c64(x, 0);
    size_t i = 0;
    while (i < n) {
        unsigned w = n - i >= 8 ? 8 : n - i >= 4 ? 4 : n - i >= 2 ? 2 : 1;
        LLVMTypeRef ty = LLVMIntTypeInContext(cg_module_context(x->m), 8 * w);
        LLVMValueRef at =
            LLVMBuildGEP2(b, cg_i8(x->m), p, (LLVMValueRef[]){c64(x, (int64_t)i)}, 1, "");
        LLVMValueRef load = LLVMBuildLoad2(b, ty, at, "");
        LLVMSetAlignment(load, 1);
        uint64_t want = 0;
        memcpy(&want, bytes + i, w);
        LLVMValueRef d = LLVMBuildXor(b, load, LLVMConstInt(ty, want, 0), "");
        diff = LLVMBuildOr(b, diff, LLVMBuildZExt(b, d, cg_i64(x->m), ""), "");
        i += w;
    }
    return LLVMBuildICmp(b, LLVMIntEQ, diff, c64(x, 0), "");
}

/* --- LIKE ------------------------------------------------------------------------ */

/* A constant pattern split at its unescaped '%': pieces[0] is anchored at the
 * start, pieces[n-1] at the end (n == 1: the whole string). */
typedef struct like_plan {
    unsigned n;
    char **pieces;
    size_t *lens;
    char *buf;
} like_plan;

static void like_plan_free(like_plan *p)
{
    free(p->pieces);
    free(p->lens);
    free(p->buf);
}

/* false: the pattern needs the general matcher ('_', a dangling escape) or
 * memory ran out. */
static bool like_plan_make(const char *pat, size_t m, int esc, like_plan *p)
{
    memset(p, 0, sizeof(*p));
    p->buf = malloc(m + 1);
    p->pieces = malloc((m + 1) * sizeof(*p->pieces));
    p->lens = malloc((m + 1) * sizeof(*p->lens));
    if (!p->buf || !p->pieces || !p->lens) return false;
    char *o = p->buf;
    p->pieces[0] = o;
    p->n = 1;
    for (size_t i = 0; i < m; i++) {
        char c = pat[i];
        if (esc >= 0 && (unsigned char)c == esc) {
            if (i + 1 == m) return false;
            *o++ = pat[++i];
        } else if (c == '_') {
            return false;
        } else if (c == '%') {
            p->lens[p->n - 1] = (size_t)(o - p->pieces[p->n - 1]);
            p->pieces[p->n++] = o;
        } else {
            *o++ = c;
        }
    }
    p->lens[p->n - 1] = (size_t)(o - p->pieces[p->n - 1]);
    return true;
}

/* i1: the string (data, len) matches a '%'-only plan with n >= 2 pieces. */
static sto_status like_inline(cg_x *x, const like_plan *p, LLVMValueRef data, LLVMValueRef len,
                              LLVMValueRef *out)
{
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef i8 = cg_i8(x->m), i64 = cg_i64(x->m), ptr = cg_ptr(x->m);
    size_t first = p->lens[0], last = p->lens[p->n - 1], need = first + last;
    for (unsigned i = 1; i + 1 < p->n; i++)
        need += p->lens[i];
    LLVMBasicBlockRef join = cg_block(x->f, "like.end");
    LLVMValueRef vals[64];
    LLVMBasicBlockRef from[64];
    unsigned nin = 0;
    sto_status st = STO_OK;

    /* a failed test jumps to join with false */
#define LIKE_TEST(cond)                                                                            \
    do {                                                                                           \
        LLVMBasicBlockRef next_ = cg_block(x->f, "like.next");                                     \
        vals[nin] = cg_const_bool(x->m, false);                                                    \
        from[nin++] = LLVMGetInsertBlock(b);                                                       \
        LLVMBuildCondBr(b, (cond), next_, join);                                                   \
        LLVMPositionBuilderAtEnd(b, next_);                                                        \
    } while (0)

    if (need > 0) LIKE_TEST(LLVMBuildICmp(b, LLVMIntUGE, len, c64(x, (int64_t)need), ""));
    LLVMValueRef ok = cg_const_bool(x->m, true);
    if (first) {
        LLVMValueRef eq = bytes_equal(x, data, p->pieces[0], first, &st);
        if (st) return st;
        ok = LLVMBuildAnd(b, ok, eq, "");
    }
    LLVMValueRef limit = LLVMBuildSub(b, len, c64(x, (int64_t)last), "");
    if (last) {
        LLVMValueRef at = LLVMBuildGEP2(b, i8, data, &limit, 1, "");
        LLVMValueRef eq = bytes_equal(x, at, p->pieces[p->n - 1], last, &st);
        if (st) return st;
        ok = LLVMBuildAnd(b, ok, eq, "");
    }
    LLVMValueRef pos = c64(x, (int64_t)first);
    for (unsigned i = 1; i + 1 < p->n; i++) {
        if (!p->lens[i]) continue; /* '%%' */
        LIKE_TEST(ok);
        ok = cg_const_bool(x->m, true);
        LLVMTypeRef params[] = {ptr, i64, ptr, i64};
        LLVMValueRef args[] = {
            LLVMBuildGEP2(b, i8, data, &pos, 1, ""), LLVMBuildSub(b, limit, pos, ""),
            global_bytes(x, p->pieces[i], p->lens[i]), c64(x, (int64_t)p->lens[i])};
        LLVMValueRef at =
            helper_call(x, "cg_rt_find", (void *)cg_rt_find, i64, params, 4, args, &st);
        if (st) return st;
        LIKE_TEST(LLVMBuildICmp(b, LLVMIntSGE, at, c64(x, 0), ""));
        pos = LLVMBuildAdd(b, LLVMBuildAdd(b, pos, at, ""), c64(x, (int64_t)p->lens[i]), "");
    }
#undef LIKE_TEST
    vals[nin] = ok;
    from[nin++] = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, join);
    *out = phi_i1(x, vals, from, nin);
    return STO_OK;
}

static bool is_const_str(const sql_bexpr *e)
{
    return e->kind == SQL_BEXPR_CONST &&
           (e->type.id == STO_TYPE_CHAR || e->type.id == STO_TYPE_VARCHAR);
}

static sto_status like(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    LLVMBuilderRef b = x->f->b;
    sql_func fid = e->func.id;
    bool negated = fid == SQL_FUNC_NOT_LIKE || fid == SQL_FUNC_NOT_ILIKE;
    bool ci = fid == SQL_FUNC_ILIKE || fid == SQL_FUNC_NOT_ILIKE;
    const sql_bexpr *pe = e->func.args.items[1];
    const sql_bexpr *ee = e->func.args.count > 2 ? e->func.args.items[2] : NULL;
    cg_val s, pat, esc = {NULL, NULL};
    STO_TRY(cg_x_expr(x, e->func.args.items[0], &s));
    STO_TRY(cg_x_expr(x, pe, &pat));
    if (ee) STO_TRY(cg_x_expr(x, ee, &esc));
    out->null = cg_x_null_or(x, cg_x_null_or(x, s.null, pat.null), esc.null);
    LLVMTypeRef str = cg_type(x->m, STO_TYPE_VARCHAR);
    LLVMValueRef sv = cg_x_sanitize(x, s.v, s.null, LLVMConstNull(str));
    LLVMValueRef match = NULL;

    bool constant = is_const_str(pe) && !pe->value.is_null && !ci &&
                    (!ee || (is_const_str(ee) && !ee->value.is_null && ee->value.v.str.len <= 1));
    like_plan plan = {0};
    if (constant) {
        int ch = '\\';
        if (ee) ch = ee->value.v.str.len ? (unsigned char)sto_str_data(&ee->value.v.str)[0] : -1;
        const sto_str *ps = &pe->value.v.str;
        /* 2 tests per piece must fit like_inline's phi */
        constant = like_plan_make(sto_str_data(ps), ps->len, ch, &plan) && plan.n <= 24;
    }
    if (constant && plan.n == 1) {
        /* no wildcard: plain equality */
        sto_str lit = sto_str_make(plan.pieces[0], (uint32_t)plan.lens[0]);
        LLVMValueRef c = plan.lens[0] <= STO_STR_INLINE_MAX
                             ? cg_const_value(x->m, STO_TYPE_VARCHAR, &lit)
                             : NULL;
        if (c) {
            match = cg_x_str_eq(x, sv, c);
        } else {
            LLVMValueRef data, len;
            str_bytes(x, sv, &data, &len);
            LLVMValueRef same_len =
                LLVMBuildICmp(b, LLVMIntEQ, len, cg_const_i64(x->m, (int64_t)plan.lens[0]), "");
            LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
            LLVMBasicBlockRef cmp = cg_block(x->f, "like.eq");
            LLVMBasicBlockRef join = cg_block(x->f, "like.eq.end");
            LLVMBuildCondBr(b, same_len, cmp, join);
            LLVMPositionBuilderAtEnd(b, cmp);
            sto_status st;
            LLVMValueRef eq = bytes_equal(x, data, plan.pieces[0], plan.lens[0], &st);
            if (st) {
                like_plan_free(&plan);
                return st;
            }
            LLVMBasicBlockRef cmp_end = LLVMGetInsertBlock(b);
            LLVMBuildBr(b, join);
            LLVMPositionBuilderAtEnd(b, join);
            LLVMValueRef vals[] = {cg_const_bool(x->m, false), eq};
            LLVMBasicBlockRef blocks[] = {from, cmp_end};
            match = phi_i1(x, vals, blocks, 2);
        }
    } else if (constant) {
        LLVMValueRef data, len;
        str_bytes(x, sv, &data, &len);
        sto_status st = like_inline(x, &plan, data, len, &match);
        if (st) {
            like_plan_free(&plan);
            return st;
        }
    }
    like_plan_free(&plan);
    if (!match) {
        /* the general matcher, skipped for NULL inputs */
        LLVMTypeRef ptr = cg_ptr(x->m), i32 = cg_i32(x->m), i8 = cg_i8(x->m);
        LLVMValueRef fn;
        LLVMTypeRef params[] = {ptr, ptr, ptr, ptr, i32, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_like", (void *)cg_rt_like, i32, params, 6, &fn));
        LLVMValueRef slot = cg_x_slot(x, i8);
        cg_x_guard g;
        cg_x_guard_begin(x, out->null, &g);
        LLVMValueRef args[] = {x->f->err,
                               cg_x_str_spill(x, s.v),
                               cg_x_str_spill(x, pat.v),
                               ee ? cg_x_str_spill(x, esc.v) : LLVMConstNull(ptr),
                               cg_const_i32(x->m, ci),
                               slot};
        cg_call_checked(x->f, fn, args, 6);
        LLVMValueRef r = LLVMBuildLoad2(b, i8, slot, "");
        r = cg_x_guard_end(x, &g, r);
        match = cg_x_to_i1(x, r);
    }
    if (negated) match = LLVMBuildNot(b, match, "");
    out->v = cg_x_from_i1(x, match);
    return STO_OK;
}

/* --- functions that make strings ------------------------------------------------ */

/* Calls a string-making helper (err first, out slot last), skipped when
 * null; the result string. */
static LLVMValueRef make_string(cg_x *x, LLVMValueRef fn, LLVMValueRef null, LLVMValueRef *args,
                                unsigned nargs)
{
    LLVMTypeRef str = cg_type(x->m, STO_TYPE_VARCHAR);
    LLVMValueRef slot = cg_x_slot(x, str);
    cg_x_guard g;
    cg_x_guard_begin(x, null, &g);
    LLVMValueRef all[8];
    unsigned n = 0;
    all[n++] = x->f->err;
    for (unsigned i = 0; i < nargs; i++)
        all[n++] = args[i];
    all[n++] = slot;
    cg_call_checked(x->f, fn, all, n);
    LLVMValueRef r = LLVMBuildLoad2(x->f->b, str, slot, "");
    return cg_x_guard_end(x, &g, r);
}

sto_status cg_x_concat(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    cg_val a, c;
    STO_TRY(cg_x_expr(x, e->op.args[0], &a));
    STO_TRY(cg_x_expr(x, e->op.args[1], &c));
    if (!x->b->strings) return sto_error(STO_INTERNAL_ERROR, "codegen: || needs a string arena");
    LLVMTypeRef ptr = cg_ptr(x->m);
    LLVMValueRef fn;
    LLVMTypeRef params[] = {ptr, ptr, ptr, ptr, ptr};
    STO_TRY(cg_x_helper(x, "cg_rt_concat", (void *)cg_rt_concat, cg_i32(x->m), params, 5, &fn));
    out->null = cg_x_null_or(x, a.null, c.null);
    LLVMValueRef args[] = {x->b->strings, cg_x_str_spill(x, a.v), cg_x_str_spill(x, c.v)};
    out->v = make_string(x, fn, out->null, args, 3);
    return STO_OK;
}

sto_status cg_x_string_func(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    sql_func fid = e->func.id;
    if (fid == SQL_FUNC_LIKE || fid == SQL_FUNC_NOT_LIKE || fid == SQL_FUNC_ILIKE ||
        fid == SQL_FUNC_NOT_ILIKE)
        return like(x, e, out);
    cg_val args[3] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
    uint32_t n = e->func.args.count;
    for (uint32_t i = 0; i < n && i < 3; i++)
        STO_TRY(cg_x_expr(x, e->func.args.items[i], &args[i]));
    out->null = NULL;
    for (uint32_t i = 0; i < n && i < 3; i++)
        out->null = cg_x_null_or(x, out->null, args[i].null);
    LLVMTypeRef ptr = cg_ptr(x->m), i32 = cg_i32(x->m), i64 = cg_i64(x->m);
    LLVMValueRef fn;
    switch (fid) {
    case SQL_FUNC_LENGTH: {
        /* characters, not bytes; the helper's ASCII check is one pass over
         * at most a few words for typical strings */
        LLVMTypeRef params[] = {ptr};
        STO_TRY(
            cg_x_helper(x, "cg_rt_char_length", (void *)cg_rt_char_length, i32, params, 1, &fn));
        LLVMValueRef sv =
            cg_x_sanitize(x, args[0].v, out->null, LLVMConstNull(cg_type(x->m, STO_TYPE_VARCHAR)));
        LLVMValueRef a[] = {cg_x_str_spill(x, sv)};
        out->v = cg_call(x->f, fn, a, 1);
        return STO_OK;
    }
    case SQL_FUNC_UPPER:
    case SQL_FUNC_LOWER: {
        if (!x->b->strings)
            return sto_error(STO_INTERNAL_ERROR, "codegen: %s needs a string arena",
                             sql_func_name(fid));
        LLVMTypeRef params[] = {ptr, ptr, ptr, i32, ptr};
        STO_TRY(
            cg_x_helper(x, "cg_rt_change_case", (void *)cg_rt_change_case, i32, params, 5, &fn));
        LLVMValueRef a[] = {x->b->strings, cg_x_str_spill(x, args[0].v),
                            cg_const_i32(x->m, fid == SQL_FUNC_UPPER)};
        out->v = make_string(x, fn, out->null, a, 3);
        return STO_OK;
    }
    case SQL_FUNC_OCTET_LENGTH: {
        LLVMValueRef w0, w1;
        cg_x_str_words(x, args[0].v, &w0, &w1);
        out->v = LLVMBuildTrunc(x->f->b, w0, i32, ""); /* len is w0's low half */
        return STO_OK;
    }
    case SQL_FUNC_STRPOS: {
        LLVMTypeRef params[] = {ptr, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_strpos", (void *)cg_rt_strpos, i32, params, 2, &fn));
        LLVMValueRef none = LLVMConstNull(cg_type(x->m, STO_TYPE_VARCHAR));
        LLVMValueRef a[] = {cg_x_str_spill(x, cg_x_sanitize(x, args[0].v, out->null, none)),
                            cg_x_str_spill(x, cg_x_sanitize(x, args[1].v, out->null, none))};
        out->v = cg_call(x->f, fn, a, 2);
        return STO_OK;
    }
    case SQL_FUNC_BTRIM:
    case SQL_FUNC_LTRIM:
    case SQL_FUNC_RTRIM: {
        LLVMTypeRef params[] = {ptr, ptr, ptr, i32, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_trim", (void *)cg_rt_trim, i32, params, 5, &fn));
        int sides = fid == SQL_FUNC_LTRIM   ? CG_TRIM_LEADING
                    : fid == SQL_FUNC_RTRIM ? CG_TRIM_TRAILING
                                            : CG_TRIM_BOTH;
        LLVMValueRef a[] = {cg_x_str_spill(x, args[0].v),
                            n > 1 ? cg_x_str_spill(x, args[1].v) : LLVMConstNull(ptr),
                            cg_const_i32(x->m, sides)};
        out->v = make_string(x, fn, out->null, a, 3);
        return STO_OK;
    }
    case SQL_FUNC_REPLACE: {
        if (!x->b->strings)
            return sto_error(STO_INTERNAL_ERROR, "codegen: replace needs a string arena");
        LLVMTypeRef params[] = {ptr, ptr, ptr, ptr, ptr, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_replace", (void *)cg_rt_replace, i32, params, 6, &fn));
        LLVMValueRef a[] = {x->b->strings, cg_x_str_spill(x, args[0].v),
                            cg_x_str_spill(x, args[1].v), cg_x_str_spill(x, args[2].v)};
        out->v = make_string(x, fn, out->null, a, 4);
        return STO_OK;
    }
    case SQL_FUNC_LEFT:
    case SQL_FUNC_RIGHT: {
        LLVMTypeRef params[] = {ptr, ptr, i64, i32, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_left_right", (void *)cg_rt_left_right, i32, params, 5, &fn));
        LLVMValueRef a[] = {cg_x_str_spill(x, args[0].v), cg_widen(x->f, args[1].v, i64),
                            cg_const_i32(x->m, fid == SQL_FUNC_RIGHT)};
        out->v = make_string(x, fn, out->null, a, 3);
        return STO_OK;
    }
    case SQL_FUNC_SUBSTRING: {
        LLVMTypeRef params[] = {ptr, ptr, i64, i64, i32, ptr};
        STO_TRY(cg_x_helper(x, "cg_rt_substr", (void *)cg_rt_substr, i32, params, 6, &fn));
        LLVMValueRef start = cg_widen(x->f, args[1].v, i64);
        LLVMValueRef count = n > 2 ? cg_widen(x->f, args[2].v, i64) : cg_const_i64(x->m, 0);
        LLVMValueRef a[] = {cg_x_str_spill(x, args[0].v), start, count, cg_const_i32(x->m, n > 2)};
        out->v = make_string(x, fn, out->null, a, 4);
        return STO_OK;
    }
    default:
        return sto_error(STO_INTERNAL_ERROR, "codegen: %s is not a string function",
                         sql_func_name(fid));
    }
}
