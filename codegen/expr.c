/*
 * expr.c — the expression compiler's core: the binding of column ids to
 * registers, constants, parameters, three-valued logic, comparisons,
 * arithmetic, CASE, COALESCE, NULLIF, IN lists and IS NULL. Casts, dates,
 * strings and key hashing live in the other expr_*.c files.
 *
 * Each sql_bexpr node becomes straight-line IR over its children's values.
 * Branches appear only where SQL's semantics or cost ask for them:
 *
 *   - CASE arms, later COALESCE arguments and the right side of AND/OR when
 *     it can fail (a checked operation, a cast, a function) are evaluated
 *     only when needed, so `CASE WHEN b <> 0 THEN a / b END` never divides
 *     by zero. Cheap, infallible right sides (comparisons of columns with
 *     constants: most filters) are combined branch-free.
 *   - A value flagged NULL has no meaningful bits, so checked operations
 *     first replace NULL inputs by harmless ones (cg_x_sanitize) and helpers
 *     are skipped for NULL inputs (cg_x_guard_*).
 *
 * NULL flags that are known false at compile time are NULL pointers and
 * generate no code; constant folding in the IR builder removes the rest of
 * what is known.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/expr_int.h"
#include "codegen/rt.h"

/* --- the binding ------------------------------------------------------------ */

sto_status cg_binding_init(cg_binding *b, const sql_plan_ctx *ctx, cg_load_fn load, void *arg)
{
    memset(b, 0, sizeof(*b));
    b->ncols = ctx ? ctx->ncols : 0;
    b->vals = calloc(b->ncols + 1, sizeof(*b->vals));
    b->log = calloc(b->ncols + 1, sizeof(*b->log));
    if (!b->vals || !b->log) {
        cg_binding_free(b);
        return sto_error_oom();
    }
    b->load = load;
    b->load_arg = arg;
    return STO_OK;
}

void cg_binding_free(cg_binding *b)
{
    free(b->vals);
    free(b->log);
    b->vals = NULL;
    b->log = NULL;
    b->ncols = b->nlog = 0;
}

void cg_binding_reset(cg_binding *b, bool keep_set)
{
    if (keep_set) {
        for (uint32_t i = 0; i < b->nlog; i++)
            b->vals[b->log[i]] = (cg_val){NULL, NULL};
    } else {
        memset(b->vals, 0, (b->ncols + 1) * sizeof(*b->vals));
    }
    b->nlog = 0;
}

uint32_t cg_x_region_begin(cg_x *x)
{
    return x->b->nlog;
}

void cg_x_region_end(cg_x *x, uint32_t mark)
{
    cg_binding *b = x->b;
    while (b->nlog > mark)
        b->vals[b->log[--b->nlog]] = (cg_val){NULL, NULL};
}

static sto_status column(cg_x *x, sql_colid id, cg_val *out)
{
    cg_binding *b = x->b;
    if (id == 0 || id > b->ncols)
        return sto_error(STO_INTERNAL_ERROR, "codegen: column #%u is not in the binding", id);
    if (!b->vals[id].v) {
        if (!b->load) return sto_error(STO_INTERNAL_ERROR, "codegen: column #%u has no value", id);
        cg_val v = b->load(b->load_arg, x->f, id);
        if (!v.v) return sto_error(STO_INTERNAL_ERROR, "codegen: column #%u failed to load", id);
        b->vals[id] = v;
        b->log[b->nlog++] = id;
    }
    *out = b->vals[id];
    return STO_OK;
}

/* --- small helpers -------------------------------------------------------------- */

LLVMValueRef cg_x_null_or(cg_x *x, LLVMValueRef a, LLVMValueRef b)
{
    if (!a) return b;
    if (!b) return a;
    return LLVMBuildOr(x->f->b, a, b, "");
}

LLVMValueRef cg_x_sanitize(cg_x *x, LLVMValueRef v, LLVMValueRef null, LLVMValueRef safe)
{
    if (!null) return v;
    return LLVMBuildSelect(x->f->b, null, safe, v, "");
}

LLVMValueRef cg_x_to_i1(cg_x *x, LLVMValueRef v8)
{
    /* a comparison's i1 widened a moment ago: the i1 itself, not a test of
     * the widened byte that the passes would only fold back (the widening,
     * if nothing else uses it, is dead code they drop) */
    if (LLVMIsAZExtInst(v8)) {
        LLVMValueRef narrow = LLVMGetOperand(v8, 0);
        if (LLVMTypeOf(narrow) == cg_i1(x->m)) return narrow;
    }
    return LLVMBuildICmp(x->f->b, LLVMIntNE, v8, LLVMConstInt(cg_i8(x->m), 0, 0), "");
}

LLVMValueRef cg_x_from_i1(cg_x *x, LLVMValueRef v1)
{
    return LLVMBuildZExt(x->f->b, v1, cg_i8(x->m), "");
}

sto_status cg_x_helper(cg_x *x, const char *name, void *addr, LLVMTypeRef ret, LLVMTypeRef *params,
                       unsigned nparams, LLVMValueRef *callee)
{
    return cg_extern(x->m, name, cg_fn_type(x->m, ret, params, nparams), addr, callee);
}

LLVMValueRef cg_x_slot(cg_x *x, LLVMTypeRef ty)
{
    return LLVMBuildAlloca(x->f->alloca, ty, "");
}

void cg_x_guard_begin(cg_x *x, LLVMValueRef null, cg_x_guard *g)
{
    g->null = null;
    if (!null) return;
    LLVMBasicBlockRef body = cg_block(x->f, "notnull");
    g->join = cg_block(x->f, "notnull.end");
    g->from = LLVMGetInsertBlock(x->f->b);
    LLVMBuildCondBr(x->f->b, null, g->join, body);
    LLVMPositionBuilderAtEnd(x->f->b, body);
}

LLVMValueRef cg_x_guard_end(cg_x *x, cg_x_guard *g, LLVMValueRef v)
{
    if (!g->null) return v;
    LLVMBasicBlockRef end = LLVMGetInsertBlock(x->f->b);
    LLVMBuildBr(x->f->b, g->join);
    LLVMPositionBuilderAtEnd(x->f->b, g->join);
    if (!v) return NULL;
    LLVMValueRef phi = LLVMBuildPhi(x->f->b, LLVMTypeOf(v), "");
    LLVMValueRef vals[2] = {LLVMConstNull(LLVMTypeOf(v)), v};
    LLVMBasicBlockRef blocks[2] = {g->from, end};
    LLVMAddIncoming(phi, vals, blocks, 2);
    return phi;
}

/* A join point for values arriving from up to cap blocks. */
typedef struct merge {
    LLVMBasicBlockRef join;
    unsigned n, cap;
    LLVMValueRef *vals, *nulls;
    LLVMBasicBlockRef *from;
    bool any_null;
} merge;

static sto_status merge_init(cg_x *x, merge *mg, unsigned cap, const char *name)
{
    memset(mg, 0, sizeof(*mg));
    mg->cap = cap;
    mg->vals = calloc(cap + 1, sizeof(*mg->vals));
    mg->nulls = calloc(cap + 1, sizeof(*mg->nulls));
    mg->from = calloc(cap + 1, sizeof(*mg->from));
    if (!mg->vals || !mg->nulls || !mg->from) {
        free(mg->vals);
        free(mg->nulls);
        free(mg->from);
        return sto_error_oom();
    }
    mg->join = cg_block(x->f, name);
    return STO_OK;
}

static void merge_free(merge *mg)
{
    free(mg->vals);
    free(mg->nulls);
    free(mg->from);
}

/* v arrives from the current block, which ends with a branch to the join
 * (cond: only when cond holds, else to `other`). */
static void merge_add_if(cg_x *x, merge *mg, cg_val v, LLVMValueRef cond, LLVMBasicBlockRef other)
{
    mg->vals[mg->n] = v.v;
    mg->nulls[mg->n] = v.null;
    mg->from[mg->n] = LLVMGetInsertBlock(x->f->b);
    mg->any_null |= v.null != NULL;
    mg->n++;
    if (cond)
        LLVMBuildCondBr(x->f->b, cond, mg->join, other);
    else
        LLVMBuildBr(x->f->b, mg->join);
}

static void merge_add(cg_x *x, merge *mg, cg_val v)
{
    merge_add_if(x, mg, v, NULL, NULL);
}

static cg_val merge_finish(cg_x *x, merge *mg, LLVMTypeRef ty)
{
    LLVMBuilderRef b = x->f->b;
    LLVMPositionBuilderAtEnd(b, mg->join);
    cg_val out = {LLVMBuildPhi(b, ty, ""), NULL};
    LLVMAddIncoming(out.v, mg->vals, mg->from, mg->n);
    if (mg->any_null) {
        LLVMValueRef f = LLVMConstInt(cg_i1(x->m), 0, 0);
        for (unsigned i = 0; i < mg->n; i++)
            if (!mg->nulls[i]) mg->nulls[i] = f;
        out.null = LLVMBuildPhi(b, cg_i1(x->m), "");
        LLVMAddIncoming(out.null, mg->nulls, mg->from, mg->n);
    }
    return out;
}

static bool is_int_like(uint8_t id)
{
    return id == STO_TYPE_BOOLEAN || id == STO_TYPE_INTEGER || id == STO_TYPE_BIGINT ||
           id == STO_TYPE_DECIMAL || id == STO_TYPE_DATE;
}

static bool is_short_const(const sql_bexpr *e)
{
    return e->kind == SQL_BEXPR_CONST &&
           (e->value.is_null || e->value.v.str.len <= STO_STR_INLINE_MAX);
}

/* Whether evaluating e may raise an error or costs more than a few
 * instructions: then the right side of AND/OR is only evaluated when it
 * matters. */
static bool may_fail(const sql_bexpr *e)
{
    switch (e->kind) {
    case SQL_BEXPR_CONST:
    case SQL_BEXPR_COLUMN:
    case SQL_BEXPR_PARAM:
        return false;
    case SQL_BEXPR_IS_NULL:
        return may_fail(e->is_null.arg);
    case SQL_BEXPR_IN_LIST:
        if (may_fail(e->in_list.arg)) return true;
        for (uint32_t i = 0; i < e->in_list.list.count; i++)
            if (may_fail(e->in_list.list.items[i])) return true;
        return sto_type_is_string(e->in_list.arg->type.id) && e->in_list.list.count > 2;
    case SQL_BEXPR_OP:
        switch (e->op.op) {
        case SQL_OP_AND:
        case SQL_OP_OR:
        case SQL_OP_NOT:
        case SQL_OP_EQ:
        case SQL_OP_NE:
        case SQL_OP_LT:
        case SQL_OP_LE:
        case SQL_OP_GT:
        case SQL_OP_GE:
        case SQL_OP_PLUS:
            for (int i = 0; i < 2; i++)
                if (e->op.args[i] && may_fail(e->op.args[i])) return true;
            /* comparing long strings may call a helper, except equality
             * with a short constant, which is two word compares */
            if (!e->op.args[0] || !sto_type_is_string(e->op.args[0]->type.id) ||
                e->op.op == SQL_OP_AND || e->op.op == SQL_OP_OR || e->op.op == SQL_OP_NOT)
                return false;
            return !((e->op.op == SQL_OP_EQ || e->op.op == SQL_OP_NE) &&
                     (is_short_const(e->op.args[0]) || is_short_const(e->op.args[1])));
        default:
            return true;
        }
    default:
        return true;
    }
}

/* --- constants and parameters ------------------------------------------------- */

static cg_val constant(cg_x *x, sto_type t, const sto_value *value)
{
    LLVMTypeRef ty = cg_type(x->m, t.id);
    if (value->is_null) return (cg_val){LLVMConstNull(ty), LLVMConstInt(cg_i1(x->m), 1, 0)};
    switch (t.id) {
    case STO_TYPE_DOUBLE:
        return (cg_val){cg_const_f64(x->m, value->v.f64), NULL};
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        return (cg_val){cg_const_value(x->m, t.id, &value->v.str), NULL};
    default:
        return (cg_val){cg_const_int(ty, value->v.i64), NULL};
    }
}

/* $n from the caller's const sto_value[] at b->params. */
static sto_status param(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    if (!x->b->params || e->param < 1 || (x->ctx && (uint32_t)e->param > x->ctx->nparams))
        return sto_error(STO_INTERNAL_ERROR, "codegen: $%d used but not bound", e->param);
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef i8 = cg_i8(x->m);
    LLVMValueRef base = LLVMBuildGEP2(
        b, i8, x->b->params,
        (LLVMValueRef[]){cg_const_i64(x->m, (int64_t)sizeof(sto_value) * (e->param - 1))}, 1, "");
    LLVMValueRef is_null = LLVMBuildLoad2(b, i8, base, "");
    out->null = cg_x_to_i1(x, is_null);
    LLVMValueRef vp = LLVMBuildGEP2(
        b, i8, base, (LLVMValueRef[]){cg_const_i64(x->m, offsetof(sto_value, v))}, 1, "");
    LLVMTypeRef ty = cg_type(x->m, e->type.id);
    switch (e->type.id) {
    case STO_TYPE_DOUBLE:
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
    case STO_TYPE_BIGINT:
    case STO_TYPE_DECIMAL:
        out->v = LLVMBuildLoad2(b, ty, vp, "");
        break;
    default: /* stored as i64 */
        out->v = LLVMBuildTrunc(b, LLVMBuildLoad2(b, cg_i64(x->m), vp, ""), ty, "");
        break;
    }
    return STO_OK;
}

/* --- comparisons -------------------------------------------------------------- */

static const LLVMIntPredicate int_pred[] = {
    [SQL_OP_EQ] = LLVMIntEQ,  [SQL_OP_NE] = LLVMIntNE,  [SQL_OP_LT] = LLVMIntSLT,
    [SQL_OP_LE] = LLVMIntSLE, [SQL_OP_GT] = LLVMIntSGT, [SQL_OP_GE] = LLVMIntSGE,
};

/* Doubles compare as PostgreSQL's float8: NaN equals NaN and is greater
 * than every other value. */
static LLVMValueRef double_compare(cg_x *x, sql_op op, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bl = x->f->b;
    LLVMValueRef na = LLVMBuildFCmp(bl, LLVMRealUNO, a, a, "");
    LLVMValueRef nb = LLVMBuildFCmp(bl, LLVMRealUNO, b, b, "");
    LLVMValueRef both = LLVMBuildAnd(bl, na, nb, "");
    switch (op) {
    case SQL_OP_EQ:
        return LLVMBuildOr(bl, LLVMBuildFCmp(bl, LLVMRealOEQ, a, b, ""), both, "");
    case SQL_OP_NE:
        return LLVMBuildNot(bl, double_compare(x, SQL_OP_EQ, a, b), "");
    case SQL_OP_LT: /* a < b, or b alone is NaN */
        return LLVMBuildOr(bl, LLVMBuildFCmp(bl, LLVMRealOLT, a, b, ""),
                           LLVMBuildAnd(bl, nb, LLVMBuildNot(bl, na, ""), ""), "");
    case SQL_OP_LE:
        return LLVMBuildOr(bl, LLVMBuildFCmp(bl, LLVMRealOLE, a, b, ""), nb, "");
    case SQL_OP_GT:
        return double_compare(x, SQL_OP_LT, b, a);
    default: /* GE */
        return double_compare(x, SQL_OP_LE, b, a);
    }
}

LLVMValueRef cg_x_compare(cg_x *x, sql_op op, sto_type t, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bl = x->f->b;
    switch (t.id) {
    case STO_TYPE_DOUBLE:
        return double_compare(x, op, a, b);
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        if (op == SQL_OP_EQ) return cg_x_str_eq(x, a, b);
        if (op == SQL_OP_NE) return LLVMBuildNot(bl, cg_x_str_eq(x, a, b), "");
        return LLVMBuildICmp(bl, int_pred[op], cg_x_str_cmp3(x, a, b), cg_const_i32(x->m, 0), "");
    default:
        return LLVMBuildICmp(bl, int_pred[op], a, b, "");
    }
}

/* A string whose NULL flag is set may hold garbage; helpers must never
 * follow its pointer, so NULL strings become the empty string first. */
static LLVMValueRef safe_value(cg_x *x, sto_type t, cg_val v)
{
    if (!v.null) return v.v;
    return cg_x_sanitize(x, v.v, v.null, LLVMConstNull(cg_type(x->m, t.id)));
}

/* Two DECIMAL operands at the same scale (the larger). */
static void align_scales(cg_x *x, sto_type *ta, LLVMValueRef *a, sto_type *tb, LLVMValueRef *b)
{
    if (ta->id != STO_TYPE_DECIMAL || tb->id != STO_TYPE_DECIMAL || ta->scale == tb->scale) return;
    if (ta->scale < tb->scale) {
        *a = cg_decimal_rescale(x->f, *a, ta->scale, tb->scale);
        ta->scale = tb->scale;
    } else {
        *b = cg_decimal_rescale(x->f, *b, tb->scale, ta->scale);
        tb->scale = ta->scale;
    }
}

static sto_status comparison(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    cg_val a, b;
    STO_TRY(cg_x_expr(x, e->op.args[0], &a));
    STO_TRY(cg_x_expr(x, e->op.args[1], &b));
    sto_type ta = e->op.args[0]->type, tb = e->op.args[1]->type;
    LLVMValueRef null = cg_x_null_or(x, a.null, b.null);
    LLVMValueRef va = safe_value(x, ta, a), vb = safe_value(x, tb, b);
    if (ta.id == STO_TYPE_DECIMAL && ta.scale != tb.scale) {
        va = cg_x_sanitize(x, va, null, cg_const_i64(x->m, 0));
        vb = cg_x_sanitize(x, vb, null, cg_const_i64(x->m, 0));
        align_scales(x, &ta, &va, &tb, &vb);
    }
    out->v = cg_x_from_i1(x, cg_x_compare(x, e->op.op, ta, va, vb));
    out->null = null;
    return STO_OK;
}

/* --- three-valued logic ------------------------------------------------------- */

/* is-true and is-false of a BOOLEAN value, as i1. */
static LLVMValueRef is_true(cg_x *x, cg_val v)
{
    LLVMValueRef t = cg_x_to_i1(x, v.v);
    if (!v.null) return t;
    return LLVMBuildAnd(x->f->b, t, LLVMBuildNot(x->f->b, v.null, ""), "");
}

static LLVMValueRef is_false(cg_x *x, cg_val v)
{
    LLVMValueRef f = LLVMBuildNot(x->f->b, cg_x_to_i1(x, v.v), "");
    if (!v.null) return f;
    return LLVMBuildAnd(x->f->b, f, LLVMBuildNot(x->f->b, v.null, ""), "");
}

/* a AND b / a OR b from the truth of both sides (PostgreSQL's tables):
 * AND is false if either is false, true if both are true, else NULL. */
static cg_val combine_logic(cg_x *x, bool is_and, cg_val a, cg_val b)
{
    LLVMBuilderRef bl = x->f->b;
    if (!a.null && !b.null) {
        LLVMValueRef v = is_and ? LLVMBuildAnd(bl, a.v, b.v, "") : LLVMBuildOr(bl, a.v, b.v, "");
        return (cg_val){v, NULL};
    }
    LLVMValueRef at = is_true(x, a), bt = is_true(x, b);
    LLVMValueRef af = is_false(x, a), bf = is_false(x, b);
    LLVMValueRef v, decided;
    if (is_and) {
        v = LLVMBuildAnd(bl, at, bt, "");
        decided = LLVMBuildOr(bl, v, LLVMBuildOr(bl, af, bf, ""), "");
    } else {
        v = LLVMBuildOr(bl, at, bt, "");
        decided = LLVMBuildOr(bl, v, LLVMBuildAnd(bl, af, bf, ""), "");
    }
    return (cg_val){cg_x_from_i1(x, v), LLVMBuildNot(bl, decided, "")};
}

static sto_status logic(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    bool is_and = e->op.op == SQL_OP_AND;
    cg_val a, b;
    STO_TRY(cg_x_expr(x, e->op.args[0], &a));
    if (!may_fail(e->op.args[1])) {
        STO_TRY(cg_x_expr(x, e->op.args[1], &b));
        *out = combine_logic(x, is_and, a, b);
        return STO_OK;
    }
    /* The right side runs only when the left does not decide. */
    LLVMValueRef decided = is_and ? is_false(x, a) : is_true(x, a);
    merge mg;
    STO_TRY(merge_init(x, &mg, 2, is_and ? "and.end" : "or.end"));
    LLVMBasicBlockRef rhs = cg_block(x->f, is_and ? "and.rhs" : "or.rhs");
    cg_val early = {LLVMConstInt(cg_i8(x->m), is_and ? 0 : 1, 0), NULL};
    merge_add_if(x, &mg, early, decided, rhs);
    LLVMPositionBuilderAtEnd(x->f->b, rhs);
    uint32_t mark = cg_x_region_begin(x);
    sto_status st = cg_x_expr(x, e->op.args[1], &b);
    cg_x_region_end(x, mark);
    if (st) {
        merge_free(&mg);
        return st;
    }
    merge_add(x, &mg, combine_logic(x, is_and, a, b));
    *out = merge_finish(x, &mg, cg_i8(x->m));
    merge_free(&mg);
    return STO_OK;
}

/* --- arithmetic ------------------------------------------------------------------- */

static sto_status arithmetic(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    cg_fn *f = x->f;
    sql_op op = e->op.op;
    cg_val a, b = {NULL, NULL};
    STO_TRY(cg_x_expr(x, e->op.args[0], &a));
    if (e->op.args[1]) STO_TRY(cg_x_expr(x, e->op.args[1], &b));
    sto_type rt = e->type, ta = e->op.args[0]->type;
    sto_type tb = e->op.args[1] ? e->op.args[1]->type : ta;
    LLVMTypeRef ty = cg_type(x->m, rt.id);
    out->null = cg_x_null_or(x, a.null, b.null);
    if (op == SQL_OP_PLUS) {
        out->v = a.v;
        return STO_OK;
    }
    /* NULL inputs become 0 (1 for a divisor) so no check fires for them. */
    bool fp = rt.id == STO_TYPE_DOUBLE;
    LLVMValueRef zero = fp ? cg_const_f64(x->m, 0) : cg_const_int(LLVMTypeOf(a.v), 0);
    LLVMValueRef va = cg_x_sanitize(x, a.v, out->null, zero);
    if (op == SQL_OP_NEG) {
        out->v = cg_neg(f, va, rt.id);
        return STO_OK;
    }
    LLVMValueRef one = fp ? cg_const_f64(x->m, 1) : cg_const_int(LLVMTypeOf(b.v), 1);
    LLVMValueRef vb = cg_x_sanitize(x, b.v, out->null, one);
    if (rt.id == STO_TYPE_DECIMAL) {
        int sa = ta.id == STO_TYPE_DECIMAL ? ta.scale : 0;
        int sb = tb.id == STO_TYPE_DECIMAL ? tb.scale : 0;
        va = cg_widen(f, va, ty);
        vb = cg_widen(f, vb, ty);
        switch (op) {
        case SQL_OP_MUL:
            out->v = cg_decimal_mul(f, va, sa, vb, sb, rt.scale);
            return STO_OK;
        case SQL_OP_DIV:
            out->v = cg_decimal_div(f, va, sa, vb, sb, rt.scale);
            return STO_OK;
        default: /* + - %: both at the result's scale */
            va = cg_decimal_rescale(f, va, sa, rt.scale);
            vb = cg_decimal_rescale(f, vb, sb, rt.scale);
            break;
        }
    } else if (!fp) {
        va = cg_widen(f, va, ty);
        vb = cg_widen(f, vb, ty);
    }
    switch (op) {
    case SQL_OP_ADD:
        out->v = cg_add(f, va, vb, rt.id);
        break;
    case SQL_OP_SUB:
        out->v = cg_sub(f, va, vb, rt.id);
        break;
    case SQL_OP_MUL:
        out->v = cg_mul(f, va, vb, rt.id);
        break;
    case SQL_OP_DIV:
        out->v = cg_div(f, va, vb, rt.id);
        break;
    case SQL_OP_MOD:
        out->v = cg_rem(f, va, vb, rt.id);
        break;
    default:
        return sto_error(STO_INTERNAL_ERROR, "codegen: operator %s is not arithmetic",
                         sql_op_spelling(op));
    }
    return STO_OK;
}

static sto_status operator(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    switch (e->op.op) {
    case SQL_OP_AND:
    case SQL_OP_OR:
        return logic(x, e, out);
    case SQL_OP_NOT: {
        cg_val a;
        STO_TRY(cg_x_expr(x, e->op.args[0], &a));
        out->v = LLVMBuildXor(x->f->b, a.v, LLVMConstInt(cg_i8(x->m), 1, 0), "");
        out->null = a.null;
        return STO_OK;
    }
    case SQL_OP_EQ:
    case SQL_OP_NE:
    case SQL_OP_LT:
    case SQL_OP_LE:
    case SQL_OP_GT:
    case SQL_OP_GE:
        return comparison(x, e, out);
    case SQL_OP_CONCAT:
        return cg_x_concat(x, e, out);
    default:
        return arithmetic(x, e, out);
    }
}

/* --- CASE, COALESCE, NULLIF ---------------------------------------------------------- */

/* Searched CASE: each condition is tested only when the ones before it were
 * not true, each arm runs only when chosen. */
static sto_status case_expr(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    merge mg_, *mg = &mg_;
    STO_TRY(merge_init(x, mg, e->case_.conds.count + 1, "case.end"));
    sto_status st = STO_OK;
    uint32_t outer = cg_x_region_begin(x);
    for (uint32_t i = 0; i < e->case_.conds.count && !st; i++) {
        LLVMValueRef c = NULL;
        st = cg_expr_compile_pred(x->f, x->ctx, e->case_.conds.items[i], x->b, &c);
        if (st) break;
        LLVMBasicBlockRef arm = cg_block(x->f, "case.arm");
        LLVMBasicBlockRef next = cg_block(x->f, "case.next");
        LLVMBuildCondBr(x->f->b, c, arm, next);
        LLVMPositionBuilderAtEnd(x->f->b, arm);
        uint32_t mark = cg_x_region_begin(x);
        cg_val r;
        st = cg_x_expr(x, e->case_.results.items[i], &r);
        cg_x_region_end(x, mark);
        if (!st) merge_add(x, mg, r);
        LLVMPositionBuilderAtEnd(x->f->b, next);
        /* later conditions only run when this one failed */
        if (i == 0) outer = cg_x_region_begin(x);
    }
    if (!st) {
        cg_val r;
        st = cg_x_expr(x, e->case_.else_result, &r);
        if (!st) merge_add(x, mg, r);
    }
    cg_x_region_end(x, outer);
    if (!st) *out = merge_finish(x, mg, cg_type(x->m, e->type.id));
    merge_free(mg);
    return st;
}

static sto_status coalesce(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    merge mg_, *mg = &mg_;
    STO_TRY(merge_init(x, mg, e->func.args.count, "coalesce.end"));
    sto_status st = STO_OK;
    uint32_t mark = cg_x_region_begin(x);
    for (uint32_t i = 0; i < e->func.args.count && !st; i++) {
        cg_val v;
        st = cg_x_expr(x, e->func.args.items[i], &v);
        if (st) break;
        if (!v.null || i + 1 == e->func.args.count) {
            merge_add(x, mg, v); /* never NULL, or the last chance */
            break;
        }
        /* taken only when not NULL */
        LLVMBasicBlockRef next = cg_block(x->f, "coalesce.next");
        merge_add_if(x, mg, (cg_val){v.v, NULL}, LLVMBuildNot(x->f->b, v.null, ""), next);
        LLVMPositionBuilderAtEnd(x->f->b, next);
        if (i == 0) mark = cg_x_region_begin(x);
    }
    cg_x_region_end(x, mark);
    if (!st) *out = merge_finish(x, mg, cg_type(x->m, e->type.id));
    merge_free(mg);
    return st;
}

/* GREATEST / LEAST: NULL arguments are skipped; NULL only when all are.
 * Every argument is evaluated (no argument can stop the others). */
static sto_status extremum(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    LLVMBuilderRef b = x->f->b;
    sql_op better = e->func.id == SQL_FUNC_GREATEST ? SQL_OP_GT : SQL_OP_LT;
    cg_val acc;
    STO_TRY(cg_x_expr(x, e->func.args.items[0], &acc));
    for (uint32_t i = 1; i < e->func.args.count; i++) {
        cg_val v;
        STO_TRY(cg_x_expr(x, e->func.args.items[i], &v));
        LLVMValueRef take = cg_x_compare(x, better, e->type, safe_value(x, e->type, v),
                                         safe_value(x, e->type, acc));
        if (v.null) take = LLVMBuildAnd(b, take, LLVMBuildNot(b, v.null, ""), "");
        if (acc.null) take = LLVMBuildOr(b, take, acc.null, "");
        acc.v = LLVMBuildSelect(b, take, v.v, acc.v, "");
        acc.null = acc.null && v.null ? LLVMBuildAnd(b, acc.null, v.null, "") : NULL;
    }
    *out = acc;
    return STO_OK;
}

/* NULLIF(a, b): NULL when a = b is true, else a. */
static sto_status nullif(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    cg_val a, b;
    STO_TRY(cg_x_expr(x, e->func.args.items[0], &a));
    STO_TRY(cg_x_expr(x, e->func.args.items[1], &b));
    sto_type ta = e->func.args.items[0]->type, tb = e->func.args.items[1]->type;
    LLVMValueRef va = safe_value(x, ta, a), vb = safe_value(x, tb, b);
    align_scales(x, &ta, &va, &tb, &vb);
    LLVMValueRef eq = cg_x_compare(x, SQL_OP_EQ, ta, va, vb);
    LLVMValueRef nulls = cg_x_null_or(x, a.null, b.null);
    if (nulls) eq = LLVMBuildAnd(x->f->b, eq, LLVMBuildNot(x->f->b, nulls, ""), "");
    out->v = a.v;
    out->null = cg_x_null_or(x, a.null, eq);
    return STO_OK;
}

/* --- IN lists and IS NULL ----------------------------------------------------------------- */

/* x IN (c1, c2, ...) over distinct non-NULL integer constants: one switch. */
static LLVMValueRef in_switch(cg_x *x, LLVMValueRef v, const sql_bexpr *e)
{
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef ty = LLVMTypeOf(v);
    LLVMBasicBlockRef found = cg_block(x->f, "in.found");
    LLVMBasicBlockRef missing = cg_block(x->f, "in.missing");
    LLVMBasicBlockRef join = cg_block(x->f, "in.end");
    uint32_t n = e->in_list.list.count;
    LLVMValueRef sw = LLVMBuildSwitch(b, v, missing, n);
    for (uint32_t i = 0; i < n; i++) {
        const sql_bexpr *c = e->in_list.list.items[i];
        if (c->value.is_null) continue;
        bool dup = false;
        for (uint32_t j = 0; j < i; j++) {
            const sql_bexpr *d = e->in_list.list.items[j];
            dup |= !d->value.is_null && d->value.v.i64 == c->value.v.i64;
        }
        if (!dup) LLVMAddCase(sw, cg_const_int(ty, c->value.v.i64), found);
    }
    LLVMPositionBuilderAtEnd(b, found);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, missing);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, join);
    LLVMValueRef phi = LLVMBuildPhi(b, cg_i1(x->m), "");
    LLVMValueRef vals[2] = {cg_const_bool(x->m, true), cg_const_bool(x->m, false)};
    LLVMBasicBlockRef from[2] = {found, missing};
    LLVMAddIncoming(phi, vals, from, 2);
    return phi;
}

/* x IN (list): true when some item equals x; otherwise NULL when x or an
 * item is NULL; otherwise false. NOT IN is its negation. */
static sto_status in_list(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    LLVMBuilderRef b = x->f->b;
    cg_val v;
    STO_TRY(cg_x_expr(x, e->in_list.arg, &v));
    sto_type t = e->in_list.arg->type;
    LLVMValueRef sv = safe_value(x, t, v);
    uint32_t n = e->in_list.list.count;
    bool all_const = is_int_like(t.id);
    bool has_null_const = false;
    for (uint32_t i = 0; i < n; i++) {
        const sql_bexpr *c = e->in_list.list.items[i];
        all_const &= c->kind == SQL_BEXPR_CONST;
        if (c->kind == SQL_BEXPR_CONST && c->value.is_null) has_null_const = true;
    }
    LLVMValueRef found = cg_const_bool(x->m, false), item_null = NULL;
    if (all_const && n >= 4) {
        found = in_switch(x, sv, e);
        if (has_null_const) item_null = cg_const_bool(x->m, true);
    } else {
        for (uint32_t i = 0; i < n; i++) {
            const sql_bexpr *ie = e->in_list.list.items[i];
            cg_val c;
            STO_TRY(cg_x_expr(x, ie, &c));
            sto_type ta = t, tc = ie->type;
            LLVMValueRef a = sv, cv = safe_value(x, tc, c);
            align_scales(x, &ta, &a, &tc, &cv);
            LLVMValueRef eq = cg_x_compare(x, SQL_OP_EQ, ta, a, cv);
            if (c.null) eq = LLVMBuildAnd(b, eq, LLVMBuildNot(b, c.null, ""), "");
            found = LLVMBuildOr(b, found, eq, "");
            item_null = cg_x_null_or(x, item_null, c.null);
        }
    }
    /* NULL unless found (and x itself not NULL) or nothing was NULL */
    LLVMValueRef null = NULL;
    if (item_null) null = LLVMBuildAnd(b, LLVMBuildNot(b, found, ""), item_null, "");
    null = cg_x_null_or(x, v.null, null);
    if (e->in_list.negated) found = LLVMBuildNot(b, found, "");
    out->v = cg_x_from_i1(x, found);
    out->null = null;
    return STO_OK;
}

static sto_status is_null(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    cg_val v;
    STO_TRY(cg_x_expr(x, e->is_null.arg, &v));
    LLVMValueRef n = v.null ? v.null : cg_const_bool(x->m, false);
    if (e->is_null.negated) n = LLVMBuildNot(x->f->b, n, "");
    out->v = cg_x_from_i1(x, n);
    out->null = NULL;
    return STO_OK;
}

/* --- numeric functions -------------------------------------------------------------------------
 */

static sto_status abs_func(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    cg_val a;
    STO_TRY(cg_x_expr(x, e->func.args.items[0], &a));
    out->null = a.null;
    LLVMBuilderRef b = x->f->b;
    if (e->type.id == STO_TYPE_DOUBLE) {
        LLVMTypeRef f64 = cg_f64(x->m);
        unsigned id = LLVMLookupIntrinsicID("llvm.fabs", 9);
        LLVMValueRef decl = LLVMGetIntrinsicDeclaration(cg_module_llvm(x->m), id, &f64, 1);
        out->v = LLVMBuildCall2(b, LLVMIntrinsicGetType(cg_module_context(x->m), id, &f64, 1), decl,
                                &a.v, 1, "");
        return STO_OK;
    }
    LLVMTypeRef ty = LLVMTypeOf(a.v);
    LLVMValueRef zero = cg_const_int(ty, 0);
    LLVMValueRef v = cg_x_sanitize(x, a.v, a.null, zero);
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, v, zero, "");
    /* negating only negative values: MIN is the one that overflows */
    LLVMValueRef minus = cg_neg(x->f, LLVMBuildSelect(b, neg, v, zero, ""), e->type.id);
    out->v = LLVMBuildSelect(b, neg, minus, v, "");
    return STO_OK;
}

static sto_status round_func(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    cg_val a, n = {NULL, NULL};
    const sql_bexpr *arg = e->func.args.items[0];
    STO_TRY(cg_x_expr(x, arg, &a));
    bool has_n = e->func.args.count > 1;
    if (has_n) STO_TRY(cg_x_expr(x, e->func.args.items[1], &n));
    out->null = cg_x_null_or(x, a.null, n.null);
    LLVMBuilderRef b = x->f->b;
    switch (e->type.id) {
    case STO_TYPE_DECIMAL: {
        /* the binder fixed the result's scale from the constant n */
        LLVMValueRef v = cg_x_sanitize(x, a.v, out->null, cg_const_i64(x->m, 0));
        out->v = cg_decimal_rescale(x->f, v, arg->type.scale, e->type.scale);
        return STO_OK;
    }
    case STO_TYPE_DOUBLE: {
        LLVMTypeRef f64 = cg_f64(x->m);
        if (!has_n) {
            unsigned id = LLVMLookupIntrinsicID("llvm.rint", 9);
            LLVMValueRef decl = LLVMGetIntrinsicDeclaration(cg_module_llvm(x->m), id, &f64, 1);
            out->v = LLVMBuildCall2(b, LLVMIntrinsicGetType(cg_module_context(x->m), id, &f64, 1),
                                    decl, &a.v, 1, "");
            return STO_OK;
        }
        LLVMValueRef fn;
        LLVMTypeRef params[] = {f64, cg_i32(x->m)};
        STO_TRY(
            cg_x_helper(x, "cg_rt_round_double", (void *)cg_rt_round_double, f64, params, 2, &fn));
        out->v = cg_call(x->f, fn, (LLVMValueRef[]){a.v, n.v}, 2);
        return STO_OK;
    }
    default: {
        if (!has_n) {
            out->v = a.v;
            return STO_OK;
        }
        LLVMTypeRef i64 = cg_i64(x->m);
        LLVMValueRef fn;
        LLVMTypeRef params[] = {cg_ptr(x->m), i64, cg_i32(x->m), cg_i32(x->m), cg_ptr(x->m)};
        STO_TRY(cg_x_helper(x, "cg_rt_round_int", (void *)cg_rt_round_int, cg_i32(x->m), params, 5,
                            &fn));
        LLVMValueRef slot = cg_x_slot(x, i64);
        cg_x_guard g;
        cg_x_guard_begin(x, out->null, &g);
        LLVMValueRef args[] = {x->f->err, cg_widen(x->f, a.v, i64), n.v,
                               cg_const_i32(x->m, e->type.id), slot};
        cg_call_checked(x->f, fn, args, 5);
        LLVMValueRef r = LLVMBuildLoad2(b, i64, slot, "");
        r = cg_x_guard_end(x, &g, r);
        out->v = LLVMBuildTrunc(b, r, cg_type(x->m, e->type.id), "");
        return STO_OK;
    }
    }
}

static sto_status function(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    if (sql_func_is_extract(e->func.id)) return cg_x_date_func(x, e, out);
    switch (e->func.id) {
    case SQL_FUNC_COALESCE:
        return coalesce(x, e, out);
    case SQL_FUNC_NULLIF:
        return nullif(x, e, out);
    case SQL_FUNC_ABS:
        return abs_func(x, e, out);
    case SQL_FUNC_ROUND:
        return round_func(x, e, out);
    case SQL_FUNC_GREATEST:
    case SQL_FUNC_LEAST:
        return extremum(x, e, out);
    case SQL_FUNC_FLOOR:
    case SQL_FUNC_CEIL:
    case SQL_FUNC_SIGN:
    case SQL_FUNC_SQRT:
    case SQL_FUNC_POWER:
    case SQL_FUNC_EXP:
    case SQL_FUNC_LN:
    case SQL_FUNC_LOG:
    case SQL_FUNC_PI:
        return cg_x_math_func(x, e, out);
    case SQL_FUNC_SUBSTRING:
    case SQL_FUNC_UPPER:
    case SQL_FUNC_LOWER:
    case SQL_FUNC_LENGTH:
    case SQL_FUNC_OCTET_LENGTH:
    case SQL_FUNC_STRPOS:
    case SQL_FUNC_BTRIM:
    case SQL_FUNC_LTRIM:
    case SQL_FUNC_RTRIM:
    case SQL_FUNC_REPLACE:
    case SQL_FUNC_LEFT:
    case SQL_FUNC_RIGHT:
    case SQL_FUNC_LIKE:
    case SQL_FUNC_NOT_LIKE:
    case SQL_FUNC_ILIKE:
    case SQL_FUNC_NOT_ILIKE:
        return cg_x_string_func(x, e, out);
    case SQL_FUNC_DATE_ADD_DAYS:
    case SQL_FUNC_DATE_SUB_DAYS:
    case SQL_FUNC_DATE_ADD_MONTHS:
    case SQL_FUNC_DATE_DIFF_DAYS:
        return cg_x_date_func(x, e, out);
    default:
        return sto_error(STO_FEATURE_NOT_SUPPORTED, "codegen: function %s is not supported",
                         sql_func_name(e->func.id));
    }
}

/* --- the dispatcher ------------------------------------------------------------------------------
 */

sto_status cg_x_expr(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    *out = (cg_val){NULL, NULL};
    switch (e->kind) {
    case SQL_BEXPR_CONST:
        *out = constant(x, e->type, &e->value);
        return STO_OK;
    case SQL_BEXPR_COLUMN:
        return column(x, e->column, out);
    case SQL_BEXPR_PARAM:
        return param(x, e, out);
    case SQL_BEXPR_OP:
        return operator(x, e, out);
    case SQL_BEXPR_FUNC:
        return function(x, e, out);
    case SQL_BEXPR_CASE:
        return case_expr(x, e, out);
    case SQL_BEXPR_CAST: {
        cg_val in;
        STO_TRY(cg_x_expr(x, e->cast.arg, &in));
        return cg_x_cast(x, e->cast.arg->type, e->type, in, out);
    }
    case SQL_BEXPR_IN_LIST:
        return in_list(x, e, out);
    case SQL_BEXPR_IS_NULL:
        return is_null(x, e, out);
    default:
        return sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "codegen: subquery expressions must be unnested before compilation");
    }
}

sto_status cg_expr_compile(cg_fn *f, const sql_plan_ctx *ctx, const sql_bexpr *e, cg_binding *b,
                           cg_val *out)
{
    cg_x x = {f, f->m, ctx, b};
    return cg_x_expr(&x, e, out);
}

/* As a predicate, AND and OR whose right side is expensive or can fail
 * test it only when the left did not decide (so such a filter also loads no
 * column it does not reach); cheap sides, such as comparisons of columns
 * with constants, are combined without branches: on unsorted data a
 * mispredicted branch costs more than a load and a compare. */
sto_status cg_expr_compile_pred(cg_fn *f, const sql_plan_ctx *ctx, const sql_bexpr *e,
                                cg_binding *b, LLVMValueRef *out)
{
    cg_x x = {f, f->m, ctx, b};
    if (e->kind == SQL_BEXPR_OP && (e->op.op == SQL_OP_AND || e->op.op == SQL_OP_OR)) {
        bool is_and = e->op.op == SQL_OP_AND;
        LLVMValueRef a;
        STO_TRY(cg_expr_compile_pred(f, ctx, e->op.args[0], b, &a));
        if (!may_fail(e->op.args[1])) {
            /* cheap: no branch to mispredict */
            LLVMValueRef c;
            STO_TRY(cg_expr_compile_pred(f, ctx, e->op.args[1], b, &c));
            *out = is_and ? LLVMBuildAnd(f->b, a, c, "") : LLVMBuildOr(f->b, a, c, "");
            return STO_OK;
        }
        LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
        LLVMBasicBlockRef rhs = cg_block(f, is_and ? "pred.and" : "pred.or");
        LLVMBasicBlockRef join = cg_block(f, "pred.end");
        if (is_and)
            LLVMBuildCondBr(f->b, a, rhs, join);
        else
            LLVMBuildCondBr(f->b, a, join, rhs);
        LLVMPositionBuilderAtEnd(f->b, rhs);
        uint32_t mark = cg_x_region_begin(&x);
        LLVMValueRef c;
        sto_status st = cg_expr_compile_pred(f, ctx, e->op.args[1], b, &c);
        cg_x_region_end(&x, mark);
        if (st) return st;
        LLVMBasicBlockRef rhs_end = LLVMGetInsertBlock(f->b);
        LLVMBuildBr(f->b, join);
        LLVMPositionBuilderAtEnd(f->b, join);
        *out = LLVMBuildPhi(f->b, cg_i1(f->m), "");
        LLVMValueRef vals[2] = {cg_const_bool(f->m, !is_and), c};
        LLVMBasicBlockRef blocks[2] = {from, rhs_end};
        LLVMAddIncoming(*out, vals, blocks, 2);
        return STO_OK;
    }
    cg_val v;
    STO_TRY(cg_x_expr(&x, e, &v));
    *out = is_true(&x, v);
    return STO_OK;
}
