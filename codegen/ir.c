/*
 * ir.c — IR builder helpers: modules, functions, checked arithmetic, decimal
 * scaling, loops and runtime calls (see ir.h for the error-exit protocol).
 */
#include "codegen/ir.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>

#include "codegen/jit.h"

/* Generated code writes cg_error by field number of this LLVM struct. */
_Static_assert(offsetof(cg_error, kind) == 0, "cg_error layout");
_Static_assert(offsetof(cg_error, type) == 4, "cg_error layout");
_Static_assert(offsetof(cg_error, row) == 8, "cg_error layout");
_Static_assert(offsetof(cg_error, detail) == 16, "cg_error layout");
_Static_assert(sizeof(sto_str) == 16, "sto_str layout");

enum { ERR_FIELD_KIND, ERR_FIELD_TYPE, ERR_FIELD_ROW };

typedef struct fn_entry {
    char *name;   /* as the caller knows it */
    char *symbol; /* prefixed, unique in the JIT */
} fn_entry;

typedef struct extern_entry {
    char *name;
    void *addr;
} extern_entry;

struct cg_module {
    cg_jit *jit;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    char prefix[32];
    LLVMTypeRef types[STO_TYPE_COUNT];
    LLVMTypeRef i1, i8, i32, i64, i128, f64, ptr, void_, str, error;
    unsigned prof_kind;
    LLVMValueRef cold_weights; /* !prof branch_weights for error branches */
    LLVMAttributeRef nounwind;
    fn_entry *fns;
    unsigned nfns, capfns;
    extern_entry *externs;
    unsigned nexterns, capexterns;
};

/* --- errors ------------------------------------------------------------- */

static const char *const error_sqlstates[CG_ERR_COUNT] = {
#define CG_ERROR_STATE(kind, sqlstate) [CG_ERR_##kind] = STO_##sqlstate,
    CG_ERROR_LIST(CG_ERROR_STATE)
#undef CG_ERROR_STATE
};

/* PostgreSQL's words for an overflow in each type. */
static const char *overflow_message(int type)
{
    switch (type) {
    case STO_TYPE_INTEGER:
        return "integer out of range";
    case STO_TYPE_BIGINT:
        return "bigint out of range";
    case STO_TYPE_DECIMAL:
        return "numeric field overflow";
    case STO_TYPE_DOUBLE:
        return "value out of range: overflow";
    case STO_TYPE_DATE:
        return "date out of range";
    default:
        return "value out of range";
    }
}

sto_status cg_error_status(cg_error *err)
{
    if (err->detail) {
        sto_status st = err->detail;
        err->detail = NULL;
        return st;
    }
    switch (err->kind) {
    case CG_ERR_NONE:
        return STO_OK;
    case CG_ERR_OVERFLOW:
        return sto_error(error_sqlstates[err->kind], "%s", overflow_message(err->type));
    case CG_ERR_DIVISION_BY_ZERO:
        return sto_error(error_sqlstates[err->kind], "division by zero");
    case CG_ERR_CANCELED:
        return sto_error(error_sqlstates[err->kind], "canceling statement due to user request");
    case CG_ERR_RUNTIME:
        return sto_error(error_sqlstates[err->kind], "a runtime helper failed at row %lld",
                         (long long)err->row);
    default:
        return sto_error(STO_INTERNAL_ERROR, "generated code returned unknown error %d",
                         (int)err->kind);
    }
}

/* --- modules ------------------------------------------------------------ */

/* The C types of STO_TYPE_LIST as LLVM types. */
#define CG_LLVM_uint8_t(m) (m)->i8
#define CG_LLVM_int32_t(m) (m)->i32
#define CG_LLVM_int64_t(m) (m)->i64
#define CG_LLVM_double(m)  (m)->f64
#define CG_LLVM_sto_str(m) (m)->str

static void init_types(cg_module *m)
{
    LLVMContextRef c = m->ctx;
    m->i1 = LLVMInt1TypeInContext(c);
    m->i8 = LLVMInt8TypeInContext(c);
    m->i32 = LLVMInt32TypeInContext(c);
    m->i64 = LLVMInt64TypeInContext(c);
    m->i128 = LLVMInt128TypeInContext(c);
    m->f64 = LLVMDoubleTypeInContext(c);
    m->ptr = LLVMPointerTypeInContext(c, 0);
    m->void_ = LLVMVoidTypeInContext(c);

    /* Two words, as the generated code reads a string (expr_string.c): a
     * struct of the C fields made every load or store of a string one per
     * field, and SROA rebuilt the words from them with shifts and ors (half
     * of the IR of a pipeline grouping by strings). */
    m->str = LLVMStructCreateNamed(c, "sto_str");
    LLVMTypeRef str_fields[] = {m->i64, m->i64};
    LLVMStructSetBody(m->str, str_fields, 2, 0);

    m->error = LLVMStructCreateNamed(c, "cg_error");
    LLVMTypeRef err_fields[] = {m->i32, m->i32, m->i64, m->ptr};
    LLVMStructSetBody(m->error, err_fields, 4, 0);

#define CG_TYPE_INIT(id, name, ctype, bytes, oid, pgname)                                          \
    m->types[STO_TYPE_##id] = CG_LLVM_##ctype(m);
    STO_TYPE_LIST(CG_TYPE_INIT)
#undef CG_TYPE_INIT

    /* Error exits are taken about never; saying so lets the optimizer and
     * the block placement keep them off the hot path. */
    m->prof_kind = LLVMGetMDKindIDInContext(c, "prof", 4);
    LLVMMetadataRef w[] = {
        LLVMMDStringInContext2(c, "branch_weights", 14),
        LLVMValueAsMetadata(LLVMConstInt(m->i32, 1, 0)),
        LLVMValueAsMetadata(LLVMConstInt(m->i32, 1u << 20, 0)),
    };
    m->cold_weights = LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, w, 3));
    m->nounwind = LLVMCreateEnumAttribute(c, LLVMGetEnumAttributeKindForName("nounwind", 8), 0);
}

sto_status cg_module_create(cg_jit *jit, const char *name, cg_module **out)
{
    *out = NULL;
    cg_module *m = calloc(1, sizeof(*m));
    if (!m) return sto_error_oom();
    m->jit = jit;
    m->ctx = LLVMContextCreate();
    m->mod = LLVMModuleCreateWithNameInContext(name, m->ctx);
    LLVMSetTarget(m->mod, cg_jit_triple(jit));
    LLVMSetDataLayout(m->mod, cg_jit_data_layout(jit));
    snprintf(m->prefix, sizeof(m->prefix), "cg%llu_",
             (unsigned long long)cg_jit_next_module_id(jit));
    init_types(m);
    *out = m;
    return STO_OK;
}

void cg_module_drop_ir(cg_module *m)
{
    if (m->mod) LLVMDisposeModule(m->mod);
    if (m->ctx) LLVMContextDispose(m->ctx);
    m->mod = NULL;
    m->ctx = NULL;
}

void cg_module_destroy(cg_module *m)
{
    if (!m) return;
    cg_module_drop_ir(m);
    for (unsigned i = 0; i < m->nfns; i++) {
        free(m->fns[i].name);
        free(m->fns[i].symbol);
    }
    free(m->fns);
    for (unsigned i = 0; i < m->nexterns; i++)
        free(m->externs[i].name);
    free(m->externs);
    free(m);
}

LLVMContextRef cg_module_context(const cg_module *m)
{
    return m->ctx;
}

LLVMModuleRef cg_module_llvm(const cg_module *m)
{
    return m->mod;
}

cg_jit *cg_module_jit(const cg_module *m)
{
    return m->jit;
}

LLVMTypeRef cg_type(const cg_module *m, sto_type_id id)
{
    return (unsigned)id < STO_TYPE_COUNT ? m->types[id] : NULL;
}

LLVMTypeRef cg_i1(const cg_module *m)
{
    return m->i1;
}
LLVMTypeRef cg_i8(const cg_module *m)
{
    return m->i8;
}
LLVMTypeRef cg_i32(const cg_module *m)
{
    return m->i32;
}
LLVMTypeRef cg_i64(const cg_module *m)
{
    return m->i64;
}
LLVMTypeRef cg_i128(const cg_module *m)
{
    return m->i128;
}
LLVMTypeRef cg_f64(const cg_module *m)
{
    return m->f64;
}
LLVMTypeRef cg_ptr(const cg_module *m)
{
    return m->ptr;
}
LLVMTypeRef cg_void(const cg_module *m)
{
    return m->void_;
}

uint64_t cg_abi_size(const cg_module *m, LLVMTypeRef ty)
{
    return LLVMABISizeOfType(LLVMGetModuleDataLayout(m->mod), ty);
}

/* Makes room for one more element in a growing array. */
static bool grow(void **items, unsigned *cap, unsigned count, size_t size)
{
    if (count < *cap) return true;
    unsigned ncap = *cap ? *cap * 2 : 8;
    void *p = realloc(*items, (size_t)ncap * size);
    if (!p) return false;
    *items = p;
    *cap = ncap;
    return true;
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* --- constants ---------------------------------------------------------- */

LLVMValueRef cg_const_int(LLVMTypeRef ty, int64_t v)
{
    if (LLVMGetIntTypeWidth(ty) > 64) {
        uint64_t words[2] = {(uint64_t)v, v < 0 ? UINT64_MAX : 0};
        return LLVMConstIntOfArbitraryPrecision(ty, 2, words);
    }
    return LLVMConstInt(ty, (unsigned long long)v, 1);
}

LLVMValueRef cg_const_bool(const cg_module *m, bool v)
{
    return LLVMConstInt(m->i1, v, 0);
}

LLVMValueRef cg_const_i32(const cg_module *m, int32_t v)
{
    return cg_const_int(m->i32, v);
}

LLVMValueRef cg_const_i64(const cg_module *m, int64_t v)
{
    return cg_const_int(m->i64, v);
}

static LLVMValueRef const_wide(LLVMTypeRef ty, unsigned __int128 v)
{
    uint64_t words[2] = {(uint64_t)v, (uint64_t)(v >> 64)};
    return LLVMConstIntOfArbitraryPrecision(ty, 2, words);
}

LLVMValueRef cg_const_i128(const cg_module *m, __int128 v)
{
    return const_wide(m->i128, (unsigned __int128)v);
}

LLVMValueRef cg_const_f64(const cg_module *m, double v)
{
    return LLVMConstReal(m->f64, v);
}

LLVMValueRef cg_const_ptr(const cg_module *m, const void *p)
{
    return LLVMConstIntToPtr(LLVMConstInt(m->i64, (uintptr_t)p, 0), m->ptr);
}

/* A string reference constant with exactly the bytes of *s, as its two
 * words. */
static LLVMValueRef const_str(const cg_module *m, const sto_str *s)
{
    uint64_t w[2];
    memcpy(w, s, sizeof(w));
    LLVMValueRef fields[] = {LLVMConstInt(m->i64, w[0], 0), LLVMConstInt(m->i64, w[1], 0)};
    return LLVMConstNamedStruct(m->str, fields, 2);
}

bool cg_const_str_words(LLVMValueRef s, uint64_t *w0, uint64_t *w1)
{
    if (!LLVMIsConstant(s)) return false;
    LLVMValueRef a = LLVMGetAggregateElement(s, 0);
    LLVMValueRef b = LLVMGetAggregateElement(s, 1);
    if (!a || !b || !LLVMIsAConstantInt(a) || !LLVMIsAConstantInt(b)) return false;
    *w0 = LLVMConstIntGetZExtValue(a);
    *w1 = LLVMConstIntGetZExtValue(b);
    return true;
}

#define CG_CONST_uint8_t(m, p) LLVMConstInt((m)->i8, *(const uint8_t *)(p), 0)
#define CG_CONST_int32_t(m, p) cg_const_int((m)->i32, *(const int32_t *)(p))
#define CG_CONST_int64_t(m, p) cg_const_int((m)->i64, *(const int64_t *)(p))
#define CG_CONST_double(m, p)  LLVMConstReal((m)->f64, *(const double *)(p))
#define CG_CONST_sto_str(m, p) const_str((m), (const sto_str *)(p))

LLVMValueRef cg_const_value(const cg_module *m, sto_type_id id, const void *value)
{
    switch (id) {
#define CG_CONST_CASE(id, name, ctype, bytes, oid, pgname)                                         \
    case STO_TYPE_##id:                                                                            \
        return CG_CONST_##ctype(m, value);
        STO_TYPE_LIST(CG_CONST_CASE)
#undef CG_CONST_CASE
    default:
        return NULL;
    }
}

/* --- functions ---------------------------------------------------------- */

sto_status cg_fn_begin(cg_fn *f, cg_module *m, const char *name, LLVMTypeRef *params,
                       unsigned nparams)
{
    memset(f, 0, sizeof(*f));
    for (unsigned i = 0; i < m->nfns; i++)
        if (strcmp(m->fns[i].name, name) == 0)
            return sto_error(STO_INTERNAL_ERROR, "codegen: function %s defined twice", name);
    if (!grow((void **)&m->fns, &m->capfns, m->nfns, sizeof(*m->fns))) return sto_error_oom();
    size_t symlen = strlen(m->prefix) + strlen(name) + 1;
    char *symbol = malloc(symlen);
    char *copy = dup_string(name);
    LLVMTypeRef *all = malloc(sizeof(*all) * (nparams + 1));
    if (!symbol || !copy || !all) {
        free(symbol);
        free(copy);
        free(all);
        return sto_error_oom();
    }
    snprintf(symbol, symlen, "%s%s", m->prefix, name);
    m->fns[m->nfns++] = (fn_entry){copy, symbol};

    all[0] = m->ptr;
    for (unsigned i = 0; i < nparams; i++)
        all[i + 1] = params[i];
    LLVMTypeRef fnty = LLVMFunctionType(m->i32, all, nparams + 1, 0);
    free(all);

    f->m = m;
    f->nparams = nparams;
    f->fn = LLVMAddFunction(m->mod, symbol, fnty);
    /* Without unwinding there are no .eh_frame sections to register per
     * query, and C helpers never throw. */
    LLVMAddAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex, m->nounwind);
    f->err = LLVMGetParam(f->fn, 0);
    LLVMSetValueName2(f->err, "err", 3);
    f->entry = LLVMAppendBasicBlockInContext(m->ctx, f->fn, "entry");
    f->body = LLVMAppendBasicBlockInContext(m->ctx, f->fn, "body");
    f->alloca = LLVMCreateBuilderInContext(m->ctx);
    LLVMPositionBuilderAtEnd(f->alloca, f->entry);
    f->b = LLVMCreateBuilderInContext(m->ctx);
    LLVMPositionBuilderAtEnd(f->b, f->body);
    return STO_OK;
}

LLVMValueRef cg_fn_param(const cg_fn *f, unsigned i)
{
    return i < f->nparams ? LLVMGetParam(f->fn, i + 1) : NULL;
}

void cg_fn_return_ok(cg_fn *f)
{
    LLVMBuildRet(f->b, LLVMConstInt(f->m->i32, CG_ERR_NONE, 0));
}

sto_status cg_fn_end(cg_fn *f)
{
    if (!f->b) return STO_OK;
    LLVMPositionBuilderAtEnd(f->alloca, f->entry);
    LLVMBuildBr(f->alloca, f->body);
    LLVMDisposeBuilder(f->alloca);
    LLVMDisposeBuilder(f->b);
    f->alloca = f->b = NULL;
    if (LLVMVerifyFunction(f->fn, LLVMReturnStatusAction))
        return sto_error(STO_INTERNAL_ERROR, "codegen: generated function %s is malformed",
                         LLVMGetValueName2(f->fn, &(size_t){0}));
    return STO_OK;
}

LLVMBasicBlockRef cg_block(cg_fn *f, const char *name)
{
    return LLVMAppendBasicBlockInContext(f->m->ctx, f->fn, name);
}

/* --- variables and memory ------------------------------------------------ */

cg_var cg_var_new(cg_fn *f, LLVMTypeRef ty, LLVMValueRef init, const char *name)
{
    cg_var v = {LLVMBuildAlloca(f->alloca, ty, name), ty};
    if (init) LLVMBuildStore(f->b, init, v.slot);
    return v;
}

void cg_br_combined(cg_fn *f, LLVMValueRef cond, LLVMBasicBlockRef then,
                    LLVMBasicBlockRef otherwise)
{
    LLVMContextRef c = cg_module_context(f->m);
    LLVMValueRef br = LLVMBuildCondBr(f->b, cond, then, otherwise);
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c, "unpredictable", 13),
                    LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, NULL, 0)));
}

LLVMValueRef cg_var_get(cg_fn *f, cg_var v)
{
    return LLVMBuildLoad2(f->b, v.type, v.slot, "");
}

void cg_var_set(cg_fn *f, cg_var v, LLVMValueRef value)
{
    LLVMBuildStore(f->b, value, v.slot);
}

LLVMValueRef cg_elem_ptr(cg_fn *f, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef index)
{
    return LLVMBuildInBoundsGEP2(f->b, ty, base, &index, 1, "");
}

LLVMValueRef cg_load_elem(cg_fn *f, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef index)
{
    return LLVMBuildLoad2(f->b, ty, cg_elem_ptr(f, ty, base, index), "");
}

void cg_store_elem(cg_fn *f, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef index,
                   LLVMValueRef value)
{
    LLVMBuildStore(f->b, value, cg_elem_ptr(f, ty, base, index));
}

/* --- error exits -------------------------------------------------------- */

static void store_error_field(cg_fn *f, unsigned field, LLVMValueRef v)
{
    LLVMValueRef p = LLVMBuildStructGEP2(f->b, f->m->error, f->err, field, "");
    LLVMBuildStore(f->b, v, p);
}

/* The function's one error exit, made on first use: phis of the kind, the
 * type and the row each check passes, the three stores, the return. One
 * shared exit rather than one per check: a pipeline has dozens of checks,
 * and each private exit was seven instructions and a return for the code
 * generator to work through (Q1's scan had nine). */
static LLVMBasicBlockRef fail_block(cg_fn *f)
{
    if (f->fail) return f->fail;
    cg_module *m = f->m;
    LLVMBasicBlockRef here = LLVMGetInsertBlock(f->b);
    f->fail = cg_block(f, "fail");
    LLVMPositionBuilderAtEnd(f->b, f->fail);
    f->fail_kind = LLVMBuildPhi(f->b, m->i32, "fail.kind");
    f->fail_type = LLVMBuildPhi(f->b, m->i32, "fail.type");
    f->fail_row = LLVMBuildPhi(f->b, m->i64, "fail.row");
    store_error_field(f, ERR_FIELD_KIND, f->fail_kind);
    store_error_field(f, ERR_FIELD_TYPE, f->fail_type);
    store_error_field(f, ERR_FIELD_ROW, f->fail_row);
    LLVMBuildRet(f->b, f->fail_kind);
    LLVMPositionBuilderAtEnd(f->b, here);
    return f->fail;
}

/* The error exit: if cond, record (kind, type, row) and return kind. */
static void fail_with(cg_fn *f, LLVMValueRef cond, LLVMValueRef kind, int type)
{
    cg_module *m = f->m;
    /* a check the builder folded to false (a constant divisor, constant
     * operands that cannot overflow) costs no branch */
    if (LLVMIsAConstantInt(cond) && LLVMConstIntGetZExtValue(cond) == 0) return;
    LLVMBasicBlockRef fail = fail_block(f);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef cont = cg_block(f, "cont");
    LLVMValueRef br = LLVMBuildCondBr(f->b, cond, fail, cont);
    LLVMSetMetadata(br, m->prof_kind, m->cold_weights);
    LLVMValueRef type_v = cg_const_int(m->i32, type);
    LLVMValueRef row_v = f->row ? f->row : cg_const_int(m->i64, -1);
    LLVMAddIncoming(f->fail_kind, &kind, &from, 1);
    LLVMAddIncoming(f->fail_type, &type_v, &from, 1);
    LLVMAddIncoming(f->fail_row, &row_v, &from, 1);
    LLVMPositionBuilderAtEnd(f->b, cont);
}

void cg_fail_if(cg_fn *f, LLVMValueRef cond, cg_error_kind kind, int type)
{
    fail_with(f, cond, LLVMConstInt(f->m->i32, (unsigned)kind, 0), type);
}

/* --- checked arithmetic ------------------------------------------------- */

static bool is_float(LLVMValueRef v)
{
    return LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMDoubleTypeKind;
}

static unsigned width_of(LLVMValueRef v)
{
    return LLVMGetIntTypeWidth(LLVMTypeOf(v));
}

static LLVMValueRef call_intrinsic(cg_fn *f, const char *name, LLVMValueRef *args, unsigned nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef ty = LLVMTypeOf(args[0]);
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(f->m->mod, id, &ty, 1);
    LLVMTypeRef fnty = LLVMIntrinsicGetType(f->m->ctx, id, &ty, 1);
    return LLVMBuildCall2(f->b, fnty, decl, args, nargs, "");
}

/* a OP b of two constants of at most 64 bits, when it fits their type:
 * the rescaling of DECIMAL literals (`1 - l_discount` multiplies 1 by 100)
 * needs no check at run time. */
static bool fold_checked(const char *intrinsic, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *out)
{
    if (!LLVMIsAConstantInt(a) || !LLVMIsAConstantInt(b)) return false;
    unsigned w = width_of(a);
    if (w > 64) return false;
    long long x = LLVMConstIntGetSExtValue(a), y = LLVMConstIntGetSExtValue(b), r;
    bool overflow;
    if (strstr(intrinsic, "sadd"))
        overflow = __builtin_saddll_overflow(x, y, &r);
    else if (strstr(intrinsic, "ssub"))
        overflow = __builtin_ssubll_overflow(x, y, &r);
    else
        overflow = __builtin_smulll_overflow(x, y, &r);
    if (overflow || (w < 64 && (r < -(1ll << (w - 1)) || r >= (1ll << (w - 1))))) return false;
    *out = LLVMConstInt(LLVMTypeOf(a), (unsigned long long)r, 1);
    return true;
}

/* a OP b through llvm.<op>.with.overflow, leaving on overflow. */
static LLVMValueRef int_checked(cg_fn *f, const char *intrinsic, LLVMValueRef a, LLVMValueRef b,
                                sto_type_id type)
{
    LLVMValueRef folded;
    if (fold_checked(intrinsic, a, b, &folded)) return folded;
    LLVMValueRef args[2] = {a, b};
    LLVMValueRef pair = call_intrinsic(f, intrinsic, args, 2);
    LLVMValueRef result = LLVMBuildExtractValue(f->b, pair, 0, "");
    LLVMValueRef overflow = LLVMBuildExtractValue(f->b, pair, 1, "");
    cg_fail_if(f, overflow, CG_ERR_OVERFLOW, type);
    return result;
}

/* A double result overflowed when it is infinite though its operands were
 * not (an infinite operand stays legal, as in PostgreSQL). */
static LLVMValueRef float_checked(cg_fn *f, LLVMValueRef r, LLVMValueRef a, LLVMValueRef b,
                                  sto_type_id type)
{
    LLVMValueRef inf = LLVMConstReal(f->m->f64, INFINITY);
    LLVMValueRef cond =
        LLVMBuildFCmp(f->b, LLVMRealOEQ, call_intrinsic(f, "llvm.fabs", &r, 1), inf, "");
    LLVMValueRef ops[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (!ops[i]) continue;
        LLVMValueRef finite =
            LLVMBuildFCmp(f->b, LLVMRealONE, call_intrinsic(f, "llvm.fabs", &ops[i], 1), inf, "");
        cond = LLVMBuildAnd(f->b, cond, finite, "");
    }
    cg_fail_if(f, cond, CG_ERR_OVERFLOW, type);
    return r;
}

LLVMValueRef cg_add(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type)
{
    if (is_float(a)) return float_checked(f, LLVMBuildFAdd(f->b, a, b, ""), a, b, type);
    return int_checked(f, "llvm.sadd.with.overflow", a, b, type);
}

LLVMValueRef cg_sub(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type)
{
    if (is_float(a)) return float_checked(f, LLVMBuildFSub(f->b, a, b, ""), a, b, type);
    return int_checked(f, "llvm.ssub.with.overflow", a, b, type);
}

LLVMValueRef cg_mul(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type)
{
    if (is_float(a)) return float_checked(f, LLVMBuildFMul(f->b, a, b, ""), a, b, type);
    return int_checked(f, "llvm.smul.with.overflow", a, b, type);
}

LLVMValueRef cg_neg(cg_fn *f, LLVMValueRef a, sto_type_id type)
{
    if (is_float(a)) return LLVMBuildFNeg(f->b, a, "");
    return int_checked(f, "llvm.ssub.with.overflow", cg_const_int(LLVMTypeOf(a), 0), a, type);
}

/* The most negative value of an integer type. */
static LLVMValueRef int_min(LLVMTypeRef ty)
{
    unsigned w = LLVMGetIntTypeWidth(ty);
    if (w > 64) return const_wide(ty, (unsigned __int128)1 << 127);
    return LLVMConstInt(ty, 1ull << (w - 1), 0);
}

static LLVMValueRef is_zero(cg_fn *f, LLVMValueRef v)
{
    LLVMTypeRef ty = LLVMTypeOf(v);
    if (is_float(v)) return LLVMBuildFCmp(f->b, LLVMRealOEQ, v, LLVMConstReal(ty, 0.0), "");
    return LLVMBuildICmp(f->b, LLVMIntEQ, v, cg_const_int(ty, 0), "");
}

static LLVMValueRef eq_const(cg_fn *f, LLVMValueRef v, LLVMValueRef c)
{
    return LLVMBuildICmp(f->b, LLVMIntEQ, v, c, "");
}

/* Leaves with overflow for MIN / -1, which has no result (and traps on x86). */
static void fail_if_min_by_minus_one(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type)
{
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef cond =
        LLVMBuildAnd(f->b, eq_const(f, a, int_min(ty)), eq_const(f, b, cg_const_int(ty, -1)), "");
    cg_fail_if(f, cond, CG_ERR_OVERFLOW, type);
}

LLVMValueRef cg_div(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type)
{
    cg_fail_if(f, is_zero(f, b), CG_ERR_DIVISION_BY_ZERO, type);
    if (is_float(a)) return float_checked(f, LLVMBuildFDiv(f->b, a, b, ""), a, NULL, type);
    fail_if_min_by_minus_one(f, a, b, type);
    return LLVMBuildSDiv(f->b, a, b, "");
}

LLVMValueRef cg_rem(cg_fn *f, LLVMValueRef a, LLVMValueRef b, sto_type_id type)
{
    cg_fail_if(f, is_zero(f, b), CG_ERR_DIVISION_BY_ZERO, type);
    if (is_float(a)) return LLVMBuildFRem(f->b, a, b, "");
    /* x % -1 is 0 for every x; dividing by 1 instead gives that without
     * the MIN / -1 trap. */
    LLVMTypeRef ty = LLVMTypeOf(b);
    LLVMValueRef safe =
        LLVMBuildSelect(f->b, eq_const(f, b, cg_const_int(ty, -1)), cg_const_int(ty, 1), b, "");
    return LLVMBuildSRem(f->b, a, safe, "");
}

LLVMValueRef cg_widen(cg_fn *f, LLVMValueRef v, LLVMTypeRef to)
{
    if (width_of(v) >= LLVMGetIntTypeWidth(to)) return v;
    return LLVMBuildSExt(f->b, v, to, "");
}

LLVMValueRef cg_narrow(cg_fn *f, LLVMValueRef v, LLVMTypeRef to, sto_type_id type)
{
    if (width_of(v) <= LLVMGetIntTypeWidth(to)) return v;
    LLVMValueRef narrow = LLVMBuildTrunc(f->b, v, to, "");
    LLVMValueRef back = LLVMBuildSExt(f->b, narrow, LLVMTypeOf(v), "");
    cg_fail_if(f, LLVMBuildICmp(f->b, LLVMIntNE, back, v, ""), CG_ERR_OVERFLOW, type);
    return narrow;
}

/* --- DECIMAL ------------------------------------------------------------ */

/* The largest k with 10^k representable in a signed integer of width w. */
static int max_pow10(unsigned w)
{
    return w >= 128 ? 38 : w >= 64 ? 18 : 9;
}

static LLVMValueRef pow10_const(LLVMTypeRef ty, int k)
{
    unsigned __int128 p = 1;
    for (int i = 0; i < k; i++)
        p *= 10;
    return const_wide(ty, p);
}

/* n / d rounded half away from zero. d != 0 and (n, d) != (MIN, -1). The
 * comparison |r| >= |d| - |r| runs unsigned, so |MIN| needs no special case. */
static LLVMValueRef round_div(cg_fn *f, LLVMValueRef n, LLVMValueRef d)
{
    LLVMBuilderRef b = f->b;
    LLVMTypeRef ty = LLVMTypeOf(n);
    LLVMValueRef zero = cg_const_int(ty, 0);
    LLVMValueRef q = LLVMBuildSDiv(b, n, d, "");
    LLVMValueRef r = LLVMBuildSRem(b, n, d, "");
    LLVMValueRef ar = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, r, zero, ""),
                                      LLVMBuildSub(b, zero, r, ""), r, "");
    LLVMValueRef ad = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, d, zero, ""),
                                      LLVMBuildSub(b, zero, d, ""), d, "");
    LLVMValueRef up = LLVMBuildICmp(b, LLVMIntUGE, ar, LLVMBuildSub(b, ad, ar, ""), "");
    LLVMValueRef negative = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, n, d, ""), zero, "");
    LLVMValueRef step = LLVMBuildSelect(b, negative, cg_const_int(ty, -1), cg_const_int(ty, 1), "");
    return LLVMBuildAdd(b, q, LLVMBuildSelect(b, up, step, zero, ""), "");
}

LLVMValueRef cg_decimal_rescale(cg_fn *f, LLVMValueRef v, int from, int to)
{
    LLVMTypeRef ty = LLVMTypeOf(v);
    unsigned w = width_of(v);
    if (to == from) return v;
    if (to > from) {
        int k = to - from;
        if (k > max_pow10(w)) { /* only 0 survives such a scale-up */
            cg_fail_if(f, LLVMBuildNot(f->b, is_zero(f, v), ""), CG_ERR_OVERFLOW, STO_TYPE_DECIMAL);
            return cg_const_int(ty, 0);
        }
        return cg_mul(f, v, pow10_const(ty, k), STO_TYPE_DECIMAL);
    }
    int k = from - to;
    if (k <= max_pow10(w)) return round_div(f, v, pow10_const(ty, k));
    if (w >= 128) return cg_const_int(ty, 0); /* |v| < 10^38 / 2 */
    LLVMValueRef wide = cg_widen(f, v, f->m->i128);
    return LLVMBuildTrunc(f->b, cg_decimal_rescale(f, wide, from, to), ty, "");
}

/* Widens a and b to the wider of their types, which is returned. */
static LLVMTypeRef common_width(cg_fn *f, LLVMValueRef *a, LLVMValueRef *b)
{
    LLVMTypeRef ty = width_of(*a) >= width_of(*b) ? LLVMTypeOf(*a) : LLVMTypeOf(*b);
    *a = cg_widen(f, *a, ty);
    *b = cg_widen(f, *b, ty);
    return ty;
}

LLVMValueRef cg_decimal_mul(cg_fn *f, LLVMValueRef a, int sa, LLVMValueRef b, int sb, int rs)
{
    LLVMTypeRef ty = common_width(f, &a, &b);
    int natural = sa + sb;
    if (rs >= natural) return cg_decimal_rescale(f, cg_mul(f, a, b, STO_TYPE_DECIMAL), natural, rs);
    if (LLVMGetIntTypeWidth(ty) < 128) {
        /* The product of two i64 always fits in i128: exact before rounding. */
        LLVMValueRef wide =
            LLVMBuildNSWMul(f->b, cg_widen(f, a, f->m->i128), cg_widen(f, b, f->m->i128), "");
        return cg_narrow(f, cg_decimal_rescale(f, wide, natural, rs), ty, STO_TYPE_DECIMAL);
    }
    return cg_decimal_rescale(f, cg_mul(f, a, b, STO_TYPE_DECIMAL), natural, rs);
}

LLVMValueRef cg_decimal_div(cg_fn *f, LLVMValueRef a, int sa, LLVMValueRef b, int sb, int rs)
{
    cg_fail_if(f, is_zero(f, b), CG_ERR_DIVISION_BY_ZERO, STO_TYPE_DECIMAL);
    LLVMTypeRef ty = common_width(f, &a, &b);
    LLVMValueRef n = cg_widen(f, a, f->m->i128);
    LLVMValueRef d = cg_widen(f, b, f->m->i128);
    /* a/10^sa / (b/10^sb) * 10^rs = a * 10^(rs - sa + sb) / b */
    int e = rs - sa + sb;
    if (e > 0) n = cg_decimal_rescale(f, n, 0, e);
    if (e < 0) d = cg_decimal_rescale(f, d, 0, -e);
    if (LLVMGetIntTypeWidth(ty) >= 128) fail_if_min_by_minus_one(f, n, d, STO_TYPE_DECIMAL);
    return cg_narrow(f, round_div(f, n, d), ty, STO_TYPE_DECIMAL);
}

/* --- loops -------------------------------------------------------------- */

void cg_loop_begin(cg_fn *f, cg_loop *loop, LLVMValueRef begin, LLVMValueRef end)
{
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
    loop->body = cg_block(f, "loop.body");
    loop->exit = cg_block(f, "loop.exit");
    loop->end = end;
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, begin, end, ""), loop->body, loop->exit);

    LLVMPositionBuilderAtEnd(f->b, loop->body);
    loop->index = LLVMBuildPhi(f->b, f->m->i64, "row");
    LLVMAddIncoming(loop->index, &begin, &pre, 1);
    loop->saved_row = f->row;
    f->row = loop->index;
}

void cg_loop_end(cg_fn *f, cg_loop *loop)
{
    LLVMValueRef next = LLVMBuildNSWAdd(f->b, loop->index, cg_const_int(f->m->i64, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(f->b);
    LLVMAddIncoming(loop->index, &next, &latch, 1);
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, next, loop->end, ""), loop->body,
                    loop->exit);
    LLVMPositionBuilderAtEnd(f->b, loop->exit);
    f->row = loop->saved_row;
}

/* --- runtime calls ------------------------------------------------------ */

LLVMTypeRef cg_fn_type(const cg_module *m, LLVMTypeRef ret, LLVMTypeRef *params, unsigned nparams)
{
    return LLVMFunctionType(ret, params, nparams, 0);
}

sto_status cg_extern(cg_module *m, const char *name, LLVMTypeRef fn_type, void *addr,
                     LLVMValueRef *out)
{
    *out = NULL;
    for (unsigned i = 0; i < m->nexterns; i++) {
        if (strcmp(m->externs[i].name, name) != 0) continue;
        if (m->externs[i].addr != addr)
            return sto_error(STO_INTERNAL_ERROR, "codegen: helper %s declared with two addresses",
                             name);
        *out = LLVMGetNamedFunction(m->mod, name);
        if (LLVMGlobalGetValueType(*out) != fn_type)
            return sto_error(STO_INTERNAL_ERROR, "codegen: helper %s declared with two types",
                             name);
        return STO_OK;
    }
    if (strncmp(name, "cg", 2) == 0 && name[2] >= '0' && name[2] <= '9')
        return sto_error(STO_INTERNAL_ERROR,
                         "codegen: helper name %s looks like a generated symbol", name);
    if (LLVMGetNamedFunction(m->mod, name))
        return sto_error(STO_INTERNAL_ERROR, "codegen: %s is already defined", name);
    if (!grow((void **)&m->externs, &m->capexterns, m->nexterns, sizeof(*m->externs)))
        return sto_error_oom();
    char *copy = dup_string(name);
    if (!copy) return sto_error_oom();
    m->externs[m->nexterns++] = (extern_entry){copy, addr};
    *out = LLVMAddFunction(m->mod, name, fn_type);
    LLVMAddAttributeAtIndex(*out, LLVMAttributeFunctionIndex, m->nounwind);
    return STO_OK;
}

LLVMValueRef cg_call(cg_fn *f, LLVMValueRef callee, LLVMValueRef *args, unsigned nargs)
{
    return LLVMBuildCall2(f->b, LLVMGlobalGetValueType(callee), callee, args, nargs, "");
}

void cg_call_checked(cg_fn *f, LLVMValueRef callee, LLVMValueRef *args, unsigned nargs)
{
    LLVMValueRef status = cg_call(f, callee, args, nargs);
    LLVMValueRef failed = LLVMBuildICmp(f->b, LLVMIntNE, status, LLVMConstInt(f->m->i32, 0, 0), "");
    fail_with(f, failed, status, -1);
}

/* --- what the JIT reads ------------------------------------------------- */

unsigned cg_module_fn_count(const cg_module *m)
{
    return m->nfns;
}

const char *cg_module_fn_name(const cg_module *m, unsigned i)
{
    return i < m->nfns ? m->fns[i].name : NULL;
}

const char *cg_module_fn_symbol(const cg_module *m, unsigned i)
{
    return i < m->nfns ? m->fns[i].symbol : NULL;
}

unsigned cg_module_extern_count(const cg_module *m)
{
    return m->nexterns;
}

const char *cg_module_extern_name(const cg_module *m, unsigned i)
{
    return i < m->nexterns ? m->externs[i].name : NULL;
}

void *cg_module_extern_addr(const cg_module *m, unsigned i)
{
    return i < m->nexterns ? m->externs[i].addr : NULL;
}
