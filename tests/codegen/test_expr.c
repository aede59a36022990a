/*
 * test_expr.c — the expression compiler (codegen/expr.h) end to end.
 *
 * Each test declares a few input columns (arrays plus validity bitmaps),
 * builds bound expressions with sql/plan.h's constructors, compiles a
 * function that evaluates the expression for every row and writes the
 * value and its NULL flag, runs it in both compile modes and compares with
 * values worked out here in C.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/jit.h"
#include "codegen/rt.h"
#include "sql/bind.h"
#include "sql/parse.h"
#include "sql/plan.h"
#include "test.h"

enum { MAX_ROWS = 64, MAX_COLS = 16 };

static const cg_mode modes[] = {CG_MODE_FAST, CG_MODE_OPT};

/* --- the environment: a plan context and input columns --------------------- */

typedef struct env {
    cg_jit *jit;
    sql_arena *arena;
    sql_plan_ctx *ctx;
    int64_t nrows;
    const void *data[MAX_COLS];
    uint64_t valid[MAX_COLS][1];
    const uint64_t *validp[MAX_COLS];
    sto_value params[4];
    cg_rt_strings strings;
    int loads; /* load callbacks made while compiling */
} env;

static void env_init(env *v, cg_jit *jit, int64_t nrows)
{
    memset(v, 0, sizeof(*v));
    v->jit = jit;
    v->arena = sql_arena_create();
    v->ctx = sql_plan_ctx_new(v->arena);
    v->nrows = nrows;
    cg_rt_strings_init(&v->strings);
}

static void env_free(env *v)
{
    cg_rt_strings_free(&v->strings);
    sql_arena_destroy(v->arena);
}

/* A column over data (nrows values of the type's C representation); nulls:
 * one character per row, 'n' for NULL, or NULL for a NOT NULL column. */
static sql_bexpr *column(env *v, sto_type t, const void *data, const char *nulls)
{
    sql_colid id = sql_plan_new_col(v->ctx, t, nulls != NULL, "c");
    if (id == 0 || id > MAX_COLS) {
        fprintf(stderr, "test environment: too many columns\n");
        test_failures_++;
        return NULL;
    }
    v->data[id - 1] = data;
    if (nulls) {
        v->valid[id - 1][0] = 0;
        for (int64_t r = 0; r < v->nrows; r++)
            if (nulls[r] != 'n') v->valid[id - 1][0] |= (uint64_t)1 << r;
        v->validp[id - 1] = v->valid[id - 1];
    }
    return sql_bexpr_column(v->ctx, id, 0);
}

static const sto_type T_BOOL = {STO_TYPE_BOOLEAN, 0, 0, 0};
static const sto_type T_INT = {STO_TYPE_INTEGER, 0, 0, 0};
static const sto_type T_BIG = {STO_TYPE_BIGINT, 0, 0, 0};
static const sto_type T_DBL = {STO_TYPE_DOUBLE, 0, 0, 0};
static const sto_type T_DATE = {STO_TYPE_DATE, 0, 0, 0};
static const sto_type T_STR = {STO_TYPE_VARCHAR, 0, 0, 0};

static sto_type dec(int p, int s)
{
    return sto_type_decimal(p, s);
}

static sql_bexpr *konst(env *v, sto_type t)
{
    return sql_bexpr_new(v->ctx, SQL_BEXPR_CONST, t, false, 0);
}

static sql_bexpr *k_int(env *v, int64_t x, sto_type t)
{
    sql_bexpr *e = konst(v, t);
    e->value.v.i64 = x;
    return e;
}

static sql_bexpr *K(env *v, int32_t x)
{
    return k_int(v, x, T_INT);
}

static sql_bexpr *k_dbl(env *v, double x)
{
    sql_bexpr *e = konst(v, T_DBL);
    e->value.v.f64 = x;
    return e;
}

static sql_bexpr *k_str(env *v, const char *s)
{
    sql_bexpr *e = konst(v, T_STR);
    size_t n = strlen(s);
    e->value.v.str = sto_str_make(sql_arena_strndup(v->arena, s, n), (uint32_t)n);
    return e;
}

static sql_bexpr *k_date(env *v, const char *s)
{
    int32_t d = 0;
    sto_date_parse(s, strlen(s), &d);
    return k_int(v, d, T_DATE);
}

static sql_bexpr *k_null(env *v, sto_type t)
{
    return sql_bexpr_null(v->ctx, t, 0);
}

static sql_bexpr *OP(env *v, sql_op op, sto_type t, sql_bexpr *a, sql_bexpr *b)
{
    return sql_bexpr_op(v->ctx, op, t, a, b, 0);
}

static sql_bexpr *CMP(env *v, sql_op op, sql_bexpr *a, sql_bexpr *b)
{
    return sql_bexpr_op(v->ctx, op, T_BOOL, a, b, 0);
}

static sql_bexpr *list_expr(env *v, sql_bexpr_list *l, int n, va_list ap)
{
    l->count = (uint32_t)n;
    l->items = sql_arena_alloc(v->arena, sizeof(*l->items) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        l->items[i] = va_arg(ap, sql_bexpr *);
    return NULL;
}

static sql_bexpr *FN(env *v, sql_func f, sto_type t, int n, ...)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_FUNC, t, true, 0);
    e->func.id = f;
    va_list ap;
    va_start(ap, n);
    list_expr(v, &e->func.args, n, ap);
    va_end(ap);
    return e;
}

static sql_bexpr *CAST(env *v, sto_type t, sql_bexpr *a)
{
    if (!a) return NULL;
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_CAST, t, a->nullable, 0);
    e->cast.arg = a;
    return e;
}

static sql_bexpr *IN(env *v, sql_bexpr *a, bool negated, int n, ...)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_IN_LIST, T_BOOL, true, 0);
    e->in_list.arg = a;
    e->in_list.negated = negated;
    va_list ap;
    va_start(ap, n);
    list_expr(v, &e->in_list.list, n, ap);
    va_end(ap);
    return e;
}

static sql_bexpr *ISNULL(env *v, sql_bexpr *a, bool negated)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_IS_NULL, T_BOOL, false, 0);
    e->is_null.arg = a;
    e->is_null.negated = negated;
    return e;
}

/* CASE WHEN c1 THEN r1 [WHEN c2 THEN r2] ELSE el END */
static sql_bexpr *CASE(env *v, sto_type t, int arms, ...)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_CASE, t, true, 0);
    e->case_.conds.count = e->case_.results.count = (uint32_t)arms;
    e->case_.conds.items = sql_arena_alloc(v->arena, sizeof(sql_bexpr *) * (size_t)arms);
    e->case_.results.items = sql_arena_alloc(v->arena, sizeof(sql_bexpr *) * (size_t)arms);
    va_list ap;
    va_start(ap, arms);
    for (int i = 0; i < arms; i++) {
        e->case_.conds.items[i] = va_arg(ap, sql_bexpr *);
        e->case_.results.items[i] = va_arg(ap, sql_bexpr *);
    }
    e->case_.else_result = va_arg(ap, sql_bexpr *);
    va_end(ap);
    return e;
}

static sql_bexpr *PARAM(env *v, int n, sto_type t)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_PARAM, t, true, 0);
    e->param = n;
    return e;
}

/* --- compiling and running ------------------------------------------------------ */

/* What one run produced: per row a NULL flag and the value widened to 16
 * bytes (integers as int64, doubles, strings). */
typedef struct result {
    int32_t kind;
    int64_t row;
    char sqlstate[6];
    char message[160];
    uint8_t null[MAX_ROWS];
    union {
        int64_t i;
        double d;
        sto_str s;
    } val[MAX_ROWS];
} result;

/* int32_t eval(cg_error *, const void **cols, const uint64_t **valid,
 *              int64_t nrows, void *vals, uint8_t *nulls,
 *              const sto_value *params, cg_rt_strings *strings) */
typedef int32_t (*eval_fn)(cg_error *, const void **, const uint64_t **, int64_t, void *, uint8_t *,
                           const sto_value *, cg_rt_strings *);

typedef struct loader {
    env *v;
    LLVMValueRef cols, valid, row;
} loader;

/* Column id of the current row: its array element and, when nullable, the
 * bit of its validity bitmap. */
static cg_val load_column(void *arg, cg_fn *f, sql_colid id)
{
    loader *l = arg;
    l->v->loads++;
    cg_module *m = f->m;
    const sql_col_info *c = sql_plan_col(l->v->ctx, id);
    LLVMValueRef idx = cg_const_i64(m, id - 1);
    LLVMValueRef base = cg_load_elem(f, cg_ptr(m), l->cols, idx);
    cg_val out = {cg_load_elem(f, cg_type(m, c->type.id), base, l->row), NULL};
    if (c->nullable) {
        LLVMBuilderRef b = f->b;
        LLVMValueRef bm = cg_load_elem(f, cg_ptr(m), l->valid, idx);
        LLVMValueRef word =
            cg_load_elem(f, cg_i64(m), bm, LLVMBuildLShr(b, l->row, cg_const_i64(m, 6), ""));
        LLVMValueRef bit = LLVMBuildAnd(
            b, LLVMBuildLShr(b, word, LLVMBuildAnd(b, l->row, cg_const_i64(m, 63), ""), ""),
            cg_const_i64(m, 1), "");
        out.null = LLVMBuildICmp(b, LLVMIntEQ, bit, cg_const_i64(m, 0), "");
    }
    return out;
}

/* The result value as the 16-byte slot format of `result`. */
static LLVMValueRef widen_result(cg_fn *f, LLVMValueRef v, sto_type t)
{
    switch (t.id) {
    case STO_TYPE_BOOLEAN:
        return LLVMBuildZExt(f->b, v, cg_i64(f->m), "");
    case STO_TYPE_INTEGER:
    case STO_TYPE_DATE:
        return LLVMBuildSExt(f->b, v, cg_i64(f->m), "");
    default:
        return v;
    }
}

static bool ok(sto_status st)
{
    if (st) fprintf(stderr, "unexpected error: %s: %s\n", st->sqlstate, st->message);
    sto_status_free(st);
    return st == STO_OK;
}

/* Builds eval for e (as a predicate when pred), in mode; NULL on failure,
 * with the compile error in *err_out when wanted. */
static cg_code *build(env *v, const sql_bexpr *e, bool pred, cg_mode mode, sto_status *err_out)
{
    cg_module *m = NULL;
    if (!ok(cg_module_create(v->jit, "expr", &m))) return NULL;
    LLVMTypeRef ptr = cg_ptr(m);
    LLVMTypeRef params[] = {ptr, ptr, cg_i64(m), ptr, ptr, ptr, ptr};
    cg_fn f;
    sto_status st = cg_fn_begin(&f, m, "eval", params, 7);
    if (st) {
        cg_module_destroy(m);
        if (err_out)
            *err_out = st;
        else
            ok(st);
        return NULL;
    }
    loader l = {v, cg_fn_param(&f, 0), cg_fn_param(&f, 1), NULL};
    cg_binding b;
    st = cg_binding_init(&b, v->ctx, load_column, &l);
    if (!st) {
        b.params = cg_fn_param(&f, 5);
        b.strings = cg_fn_param(&f, 6);
        cg_loop loop;
        cg_loop_begin(&f, &loop, cg_const_i64(m, 0), cg_fn_param(&f, 2));
        l.row = loop.index;
        cg_binding_reset(&b, false);
        cg_val r = {NULL, NULL};
        sto_type t = pred ? T_BOOL : e->type;
        if (pred) {
            st = cg_expr_compile_pred(&f, v->ctx, e, &b, &r.v);
            if (!st) r.v = LLVMBuildZExt(f.b, r.v, cg_i8(m), "");
        } else {
            st = cg_expr_compile(&f, v->ctx, e, &b, &r);
        }
        if (!st) {
            LLVMValueRef slot = LLVMBuildGEP2(
                f.b, cg_i8(m), cg_fn_param(&f, 3),
                (LLVMValueRef[]){LLVMBuildMul(f.b, loop.index, cg_const_i64(m, 16), "")}, 1, "");
            LLVMBuildStore(f.b, widen_result(&f, r.v, t), slot);
            LLVMValueRef null =
                r.null ? LLVMBuildZExt(f.b, r.null, cg_i8(m), "") : LLVMConstInt(cg_i8(m), 0, 0);
            cg_store_elem(&f, cg_i8(m), cg_fn_param(&f, 4), loop.index, null);
            cg_loop_end(&f, &loop);
            cg_fn_return_ok(&f);
        }
        cg_binding_free(&b);
    }
    sto_status end = cg_fn_end(&f);
    if (st || end) {
        cg_module_destroy(m);
        if (err_out && st) {
            *err_out = st;
            sto_status_free(end);
        } else {
            ok(st);
            ok(end);
        }
        return NULL;
    }
    cg_code *code = NULL;
    if (!ok(cg_jit_compile(v->jit, m, mode, &code))) return NULL;
    return code;
}

/* Compiles and runs e over the environment's rows. */
static bool run(env *v, const sql_bexpr *e, bool pred, cg_mode mode, result *r)
{
    memset(r, 0, sizeof(*r));
    if (!e) return false; /* building the tree failed */
    cg_code *code = build(v, e, pred, mode, NULL);
    if (!code) return false;
    eval_fn fn = (eval_fn)cg_code_fn(code, "eval");
    cg_error err = cg_error_none();
    cg_rt_strings_reset(&v->strings);
    r->kind = fn(&err, v->data, (const uint64_t **)v->validp, v->nrows, r->val, r->null, v->params,
                 &v->strings);
    r->row = err.row;
    sto_status st = cg_error_status(&err);
    if (st) {
        memcpy(r->sqlstate, st->sqlstate, 6);
        snprintf(r->message, sizeof(r->message), "%s", st->message);
    }
    sto_status_free(st);
    ok(cg_code_free(code));
    return true;
}

/* --- expectations ------------------------------------------------------------------ */

/* nulls: 'n' for an expected NULL per row, or NULL for none. */
static void expect_ints_(env *v, const sql_bexpr *e, bool pred, const int64_t *want,
                         const char *nulls, int line)
{
    for (int k = 0; k < CG_MODE_COUNT; k++) {
        result r;
        if (!run(v, e, pred, modes[k], &r)) {
            fprintf(stderr, "line %d: compile failed\n", line);
            test_failures_++;
            continue;
        }
        if (r.kind != CG_ERR_NONE) {
            fprintf(stderr, "line %d (%s): error %s %s at row %lld\n", line, cg_mode_name(modes[k]),
                    r.sqlstate, r.message, (long long)r.row);
            test_failures_++;
            continue;
        }
        for (int64_t i = 0; i < v->nrows; i++) {
            bool want_null = nulls && nulls[i] == 'n';
            if (r.null[i] != want_null || (!want_null && r.val[i].i != want[i])) {
                fprintf(stderr, "line %d (%s) row %lld: got %s%lld, want %s%lld\n", line,
                        cg_mode_name(modes[k]), (long long)i, r.null[i] ? "NULL " : "",
                        (long long)r.val[i].i, want_null ? "NULL " : "", (long long)want[i]);
                test_failures_++;
            }
        }
    }
}
#define expect_ints(v, e, want, nulls) expect_ints_(v, e, false, want, nulls, __LINE__)
#define expect_pred(v, e, want)        expect_ints_(v, e, true, want, NULL, __LINE__)

static void expect_doubles_(env *v, const sql_bexpr *e, const double *want, const char *nulls,
                            int line)
{
    for (int k = 0; k < CG_MODE_COUNT; k++) {
        result r;
        if (!run(v, e, false, modes[k], &r) || r.kind != CG_ERR_NONE) {
            fprintf(stderr, "line %d: failed (%s)\n", line, r.message);
            test_failures_++;
            continue;
        }
        for (int64_t i = 0; i < v->nrows; i++) {
            bool want_null = nulls && nulls[i] == 'n';
            bool same = want_null || r.val[i].d == want[i] || (isnan(r.val[i].d) && isnan(want[i]));
            if (r.null[i] != want_null || !same) {
                fprintf(stderr, "line %d (%s) row %lld: got %s%g, want %g\n", line,
                        cg_mode_name(modes[k]), (long long)i, r.null[i] ? "NULL " : "", r.val[i].d,
                        want[i]);
                test_failures_++;
            }
        }
    }
}
#define expect_doubles(v, e, want, nulls) expect_doubles_(v, e, want, nulls, __LINE__)

/* want[i] NULL: an expected SQL NULL. */
static void expect_strs_(env *v, const sql_bexpr *e, const char *const *want, int line)
{
    for (int k = 0; k < CG_MODE_COUNT; k++) {
        result r;
        if (!run(v, e, false, modes[k], &r) || r.kind != CG_ERR_NONE) {
            fprintf(stderr, "line %d: failed (%s)\n", line, r.message);
            test_failures_++;
            continue;
        }
        for (int64_t i = 0; i < v->nrows; i++) {
            const sto_str *s = &r.val[i].s;
            bool good =
                want[i] ? !r.null[i] && s->len == strlen(want[i]) &&
                              memcmp(sto_str_data(s), want[i], s->len) == 0 &&
                              (s->len <= STO_STR_INLINE_MAX || memcmp(s->prefix, want[i], 4) == 0)
                        : r.null[i];
            if (!good) {
                fprintf(stderr, "line %d (%s) row %lld: got %s'%.*s', want '%s'\n", line,
                        cg_mode_name(modes[k]), (long long)i, r.null[i] ? "NULL " : "",
                        r.null[i] ? 0 : (int)s->len, r.null[i] ? "" : sto_str_data(s),
                        want[i] ? want[i] : "NULL");
                test_failures_++;
            }
        }
    }
}
#define expect_strs(v, e, want) expect_strs_(v, e, want, __LINE__)

/* The run fails with sqlstate at row. */
static void expect_error_(env *v, const sql_bexpr *e, const char *sqlstate, int64_t row, int line)
{
    for (int k = 0; k < CG_MODE_COUNT; k++) {
        result r;
        if (!run(v, e, false, modes[k], &r)) {
            test_failures_++;
            continue;
        }
        if (r.kind == CG_ERR_NONE || strcmp(r.sqlstate, sqlstate) != 0 || r.row != row) {
            fprintf(stderr, "line %d (%s): got kind %d %s '%s' at row %lld, want %s at %lld\n",
                    line, cg_mode_name(modes[k]), r.kind, r.sqlstate, r.message, (long long)r.row,
                    sqlstate, (long long)row);
            test_failures_++;
        }
    }
}
#define expect_error(v, e, state, row) expect_error_(v, e, state, row, __LINE__)

static cg_jit *jit;

/* --- integers ------------------------------------------------------------------ */

static void test_integer_arithmetic(void)
{
    env v;
    env_init(&v, jit, 6);
    static const int32_t a[] = {7, -7, 0, 100, 5, 9};
    static const int32_t b[] = {2, 2, 3, -7, 0, 4};
    sql_bexpr *ca = column(&v, T_INT, a, "....n.");
    sql_bexpr *cb = column(&v, T_INT, b, NULL);
    const char *nulls = "....n.";
    int64_t add[6], sub[6], mul[6], quo[6], rem[6], neg[6];
    for (int i = 0; i < 6; i++) {
        add[i] = a[i] + b[i];
        sub[i] = a[i] - b[i];
        mul[i] = a[i] * b[i];
        quo[i] = b[i] ? a[i] / b[i] : 0; /* C truncates like SQL */
        rem[i] = b[i] ? a[i] % b[i] : 0;
        neg[i] = -a[i];
    }
    expect_ints(&v, OP(&v, SQL_OP_ADD, T_INT, ca, cb), add, nulls);
    expect_ints(&v, OP(&v, SQL_OP_SUB, T_INT, ca, cb), sub, nulls);
    expect_ints(&v, OP(&v, SQL_OP_MUL, T_INT, ca, cb), mul, nulls);
    /* row 4 divides NULL by 0: NULL, no error */
    expect_ints(&v, OP(&v, SQL_OP_DIV, T_INT, ca, cb), quo, nulls);
    expect_ints(&v, OP(&v, SQL_OP_MOD, T_INT, ca, cb), rem, nulls);
    expect_ints(&v, OP(&v, SQL_OP_NEG, T_INT, ca, NULL), neg, nulls);
    expect_ints(&v, OP(&v, SQL_OP_PLUS, T_INT, ca, NULL), ((int64_t[]){7, -7, 0, 100, 5, 9}),
                nulls);
    /* 9 / (b - 4): division by zero in row 5 */
    expect_error(&v, OP(&v, SQL_OP_DIV, T_INT, ca, OP(&v, SQL_OP_SUB, T_INT, cb, K(&v, 4))),
                 STO_DIVISION_BY_ZERO, 5);
    expect_error(&v, OP(&v, SQL_OP_MOD, T_INT, K(&v, 1), OP(&v, SQL_OP_SUB, T_INT, cb, K(&v, 3))),
                 STO_DIVISION_BY_ZERO, 2);
    env_free(&v);

    env_init(&v, jit, 4);
    static const int32_t big[] = {1, 2147483600, -5, 2147483647};
    sql_bexpr *cbig = column(&v, T_INT, big, NULL);
    expect_error(&v, OP(&v, SQL_OP_ADD, T_INT, cbig, K(&v, 100)), STO_NUMERIC_VALUE_OUT_OF_RANGE,
                 1);
    expect_error(&v, OP(&v, SQL_OP_MUL, T_INT, cbig, K(&v, -2)), STO_NUMERIC_VALUE_OUT_OF_RANGE, 1);
    static const int32_t mins[] = {3, 4, INT32_MIN, 0};
    sql_bexpr *cmin = column(&v, T_INT, mins, NULL);
    expect_error(&v, OP(&v, SQL_OP_DIV, T_INT, cmin, K(&v, -1)), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    expect_error(&v, OP(&v, SQL_OP_NEG, T_INT, cmin, NULL), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    expect_ints(&v, OP(&v, SQL_OP_MOD, T_INT, cmin, K(&v, -1)), ((int64_t[]){0, 0, 0, 0}), NULL);
    /* BIGINT */
    static const int64_t b64[] = {INT64_MAX - 1, 10, -3, 4};
    sql_bexpr *c64 = column(&v, T_BIG, b64, NULL);
    expect_ints(&v, OP(&v, SQL_OP_MUL, T_BIG, c64, k_int(&v, 1, T_BIG)), b64, NULL);
    expect_error(&v, OP(&v, SQL_OP_ADD, T_BIG, c64, k_int(&v, 2, T_BIG)),
                 STO_NUMERIC_VALUE_OUT_OF_RANGE, 0);
    expect_ints(&v, FN(&v, SQL_FUNC_ABS, T_BIG, 1, c64), ((int64_t[]){INT64_MAX - 1, 10, 3, 4}),
                NULL);
    expect_error(&v, FN(&v, SQL_FUNC_ABS, T_INT, 1, cmin), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    env_free(&v);
}

/* --- decimals --------------------------------------------------------------------- */

/* Scaled integer division rounded half away from zero, for expectations. */
static int64_t round_div(__int128 n, __int128 d)
{
    __int128 q = n / d, r = n % d;
    if (r < 0) r = -r;
    if (2 * r >= (d < 0 ? -d : d)) q += (n < 0) != (d < 0) ? -1 : 1;
    return (int64_t)q;
}

static void test_decimal(void)
{
    env v;
    env_init(&v, jit, 5);
    /* TPC-H Q1: l_extendedprice * (1 - l_discount) * (1 + l_tax) */
    static const int64_t price[] = {3307894, 10494950, 90100, 1, 4567812};
    static const int64_t disc[] = {4, 10, 0, 7, 9};
    static const int64_t tax[] = {2, 8, 6, 0, 5};
    sto_type d152 = dec(15, 2);
    sql_bexpr *p = column(&v, d152, price, NULL);
    sql_bexpr *d = column(&v, d152, disc, NULL);
    sql_bexpr *t = column(&v, d152, tax, ".n...");
    sql_bexpr *one = k_int(&v, 1, dec(10, 0));
    sql_bexpr *one_minus = OP(&v, SQL_OP_SUB, d152, one, d);
    sql_bexpr *one_plus = OP(&v, SQL_OP_ADD, d152, one, t);
    sql_bexpr *disc_price = OP(&v, SQL_OP_MUL, dec(18, 4), p, one_minus);
    sql_bexpr *charge = OP(&v, SQL_OP_MUL, dec(18, 6), disc_price, one_plus);
    int64_t want_dp[5], want_charge[5];
    for (int i = 0; i < 5; i++) {
        want_dp[i] = price[i] * (100 - disc[i]);
        want_charge[i] = want_dp[i] * (100 + tax[i]);
    }
    expect_ints(&v, disc_price, want_dp, NULL);
    expect_ints(&v, charge, want_charge, ".n...");

    /* scale mixing: DECIMAL(15,2) + DECIMAL(10,4) at scale 4, - and % too */
    static const int64_t q4[] = {12345, -5, 99999, 10000, 1};
    sql_bexpr *c4 = column(&v, dec(10, 4), q4, NULL);
    int64_t sum[5], diff[5], mod[5];
    for (int i = 0; i < 5; i++) {
        sum[i] = price[i] * 100 + q4[i];
        diff[i] = price[i] * 100 - q4[i];
        mod[i] = (price[i] * 100) % q4[i];
    }
    expect_ints(&v, OP(&v, SQL_OP_ADD, dec(18, 4), p, c4), sum, NULL);
    expect_ints(&v, OP(&v, SQL_OP_SUB, dec(18, 4), p, c4), diff, NULL);
    expect_ints(&v, OP(&v, SQL_OP_MOD, dec(18, 4), p, c4), mod, NULL);
    /* a product at a smaller scale than s1 + s2 rounds half away from 0 */
    int64_t prod2[5];
    for (int i = 0; i < 5; i++)
        prod2[i] = round_div((__int128)price[i] * q4[i], 10000);
    expect_ints(&v, OP(&v, SQL_OP_MUL, dec(18, 2), p, c4), prod2, NULL);
    /* DECIMAL division (the binder makes it DOUBLE; decimal nodes still work) */
    int64_t quo[5];
    for (int i = 0; i < 5; i++)
        quo[i] = round_div((__int128)price[i] * 1000000, q4[i]);
    expect_ints(&v, OP(&v, SQL_OP_DIV, dec(18, 4), p, c4), quo, NULL);
    /* comparisons between equal scales, and with an aligned scale */
    expect_ints(&v, CMP(&v, SQL_OP_LT, d, t), ((int64_t[]){0, 0, 1, 0, 0}), ".n...");
    expect_ints(&v, CMP(&v, SQL_OP_GT, p, c4), ((int64_t[]){1, 1, 1, 0, 1}), NULL);
    env_free(&v);

    env_init(&v, jit, 3);
    static const int64_t huge[] = {1, 5000000000000000000, -5000000000000000000};
    sql_bexpr *h = column(&v, dec(18, 2), huge, NULL);
    expect_error(&v, OP(&v, SQL_OP_ADD, dec(18, 2), h, h), STO_NUMERIC_VALUE_OUT_OF_RANGE, 1);
    expect_error(&v, OP(&v, SQL_OP_MUL, dec(18, 4), h, k_int(&v, 100, dec(5, 2))),
                 STO_NUMERIC_VALUE_OUT_OF_RANGE, 1);
    /* rescaling to a larger scale overflows too */
    expect_error(&v, OP(&v, SQL_OP_ADD, dec(18, 4), h, k_int(&v, 1, dec(10, 4))),
                 STO_NUMERIC_VALUE_OUT_OF_RANGE, 1);
    expect_error(&v, OP(&v, SQL_OP_DIV, dec(18, 2), h, k_int(&v, 0, dec(5, 2))),
                 STO_DIVISION_BY_ZERO, 0);
    /* ROUND(DECIMAL(18,2), 1), ABS */
    static const int64_t r2[] = {125, -125, 124};
    sql_bexpr *cr = column(&v, dec(18, 2), r2, NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_ROUND, dec(18, 1), 2, cr, K(&v, 1)), ((int64_t[]){13, -13, 12}),
                NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_ROUND, dec(18, 0), 1, cr), ((int64_t[]){1, -1, 1}), NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_ABS, dec(18, 2), 1, cr), ((int64_t[]){125, 125, 124}), NULL);
    env_free(&v);
}

/* --- doubles ----------------------------------------------------------------------- */

static void test_double(void)
{
    env v;
    env_init(&v, jit, 5);
    static const double a[] = {1.5, -2.25, 1e308, NAN, 0.0};
    static const double b[] = {2.0, 0.5, 10.0, 1.0, -0.0};
    sql_bexpr *ca = column(&v, T_DBL, a, NULL);
    sql_bexpr *cb = column(&v, T_DBL, b, "...n.");
    double sum[5], quo[5];
    for (int i = 0; i < 5; i++) {
        sum[i] = a[i] + b[i];
        quo[i] = b[i] != 0 ? a[i] / b[i] : 0;
    }
    expect_doubles(&v, OP(&v, SQL_OP_ADD, T_DBL, ca, cb), sum, "...n.");
    expect_error(&v, OP(&v, SQL_OP_MUL, T_DBL, ca, cb), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    expect_error(&v, OP(&v, SQL_OP_DIV, T_DBL, ca, cb), STO_DIVISION_BY_ZERO, 4);
    (void)quo;
    /* NaN equals NaN and sorts above every number (PostgreSQL's float8) */
    sql_bexpr *nan = k_dbl(&v, NAN);
    expect_ints(&v, CMP(&v, SQL_OP_EQ, ca, nan), ((int64_t[]){0, 0, 0, 1, 0}), NULL);
    expect_ints(&v, CMP(&v, SQL_OP_LT, ca, nan), ((int64_t[]){1, 1, 1, 0, 1}), NULL);
    expect_ints(&v, CMP(&v, SQL_OP_GE, ca, k_dbl(&v, 1e300)), ((int64_t[]){0, 0, 1, 1, 0}), NULL);
    expect_ints(&v, CMP(&v, SQL_OP_EQ, ca, cb), ((int64_t[]){0, 0, 0, 0, 1}), "...n.");
    expect_doubles(&v, FN(&v, SQL_FUNC_ABS, T_DBL, 1, ca), ((double[]){1.5, 2.25, 1e308, NAN, 0}),
                   NULL);
    static const double h[] = {2.5, 3.5, -2.5, 0.125, 1234.5678};
    sql_bexpr *ch = column(&v, T_DBL, h, NULL);
    expect_doubles(&v, FN(&v, SQL_FUNC_ROUND, T_DBL, 1, ch), ((double[]){2, 4, -2, 0, 1235}), NULL);
    expect_doubles(&v, FN(&v, SQL_FUNC_ROUND, T_DBL, 2, ch, K(&v, 2)),
                   ((double[]){2.5, 3.5, -2.5, 0.12, 1234.57}), NULL);
    env_free(&v);
}

/* --- three-valued logic ---------------------------------------------------------------- */

static void test_logic(void)
{
    env v;
    env_init(&v, jit, 9);
    /* all nine (a, b) pairs of true, false, NULL */
    static const uint8_t a[] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
    static const uint8_t b[] = {1, 0, 0, 1, 0, 0, 1, 0, 0};
    const char *an = "......nnn", *bn = "..n..n..n";
    sql_bexpr *ca = column(&v, T_BOOL, a, an);
    sql_bexpr *cb = column(&v, T_BOOL, b, bn);
    /* AND: T T→T, T F→F, T N→N, F *→F, N T→N, N F→F, N N→N */
    expect_ints(&v, OP(&v, SQL_OP_AND, T_BOOL, ca, cb), ((int64_t[]){1, 0, 0, 0, 0, 0, 0, 0, 0}),
                "..n...n.n");
    expect_ints(&v, OP(&v, SQL_OP_OR, T_BOOL, ca, cb), ((int64_t[]){1, 1, 1, 1, 0, 0, 1, 0, 0}),
                ".....n.nn");
    expect_ints(&v, OP(&v, SQL_OP_NOT, T_BOOL, ca, NULL), ((int64_t[]){0, 0, 0, 1, 1, 1, 0, 0, 0}),
                an);
    /* as predicates NULL is false */
    expect_pred(&v, OP(&v, SQL_OP_AND, T_BOOL, ca, cb), ((int64_t[]){1, 0, 0, 0, 0, 0, 0, 0, 0}));
    expect_pred(&v, OP(&v, SQL_OP_OR, T_BOOL, ca, cb), ((int64_t[]){1, 1, 1, 1, 0, 0, 1, 0, 0}));
    expect_pred(&v, OP(&v, SQL_OP_NOT, T_BOOL, ca, NULL), ((int64_t[]){0, 0, 0, 1, 1, 1, 0, 0, 0}));
    /* the same through the branching code, taken when the right side can
     * fail (here: casts) */
    sql_bexpr *cb2 = CAST(&v, T_BOOL, CAST(&v, T_INT, cb));
    expect_ints(&v, OP(&v, SQL_OP_AND, T_BOOL, ca, cb2), ((int64_t[]){1, 0, 0, 0, 0, 0, 0, 0, 0}),
                "..n...n.n");
    expect_ints(&v, OP(&v, SQL_OP_OR, T_BOOL, ca, cb2), ((int64_t[]){1, 1, 1, 1, 0, 0, 1, 0, 0}),
                ".....n.nn");
    expect_pred(&v, OP(&v, SQL_OP_AND, T_BOOL, ca, cb2), ((int64_t[]){1, 0, 0, 0, 0, 0, 0, 0, 0}));
    expect_pred(&v, OP(&v, SQL_OP_OR, T_BOOL, ca, cb2), ((int64_t[]){1, 1, 1, 1, 0, 0, 1, 0, 0}));
    /* IS [NOT] NULL */
    expect_ints(&v, ISNULL(&v, cb, false), ((int64_t[]){0, 0, 1, 0, 0, 1, 0, 0, 1}), NULL);
    expect_ints(&v, ISNULL(&v, cb, true), ((int64_t[]){1, 1, 0, 1, 1, 0, 1, 1, 0}), NULL);
    expect_ints(&v, ISNULL(&v, K(&v, 1), false), ((int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0}), NULL);
    env_free(&v);

    /* the right side of AND/OR runs only when the left does not decide */
    env_init(&v, jit, 4);
    static const int32_t x[] = {10, 7, 0, 4};
    static const int32_t y[] = {2, 0, 0, 2};
    sql_bexpr *cx = column(&v, T_INT, x, NULL);
    sql_bexpr *cy = column(&v, T_INT, y, NULL);
    sql_bexpr *nonzero = CMP(&v, SQL_OP_NE, cy, K(&v, 0));
    sql_bexpr *quot = CMP(&v, SQL_OP_GT, OP(&v, SQL_OP_DIV, T_INT, cx, cy), K(&v, 3));
    expect_ints(&v, OP(&v, SQL_OP_AND, T_BOOL, nonzero, quot), ((int64_t[]){1, 0, 0, 0}), NULL);
    expect_pred(&v, OP(&v, SQL_OP_AND, T_BOOL, nonzero, quot), ((int64_t[]){1, 0, 0, 0}));
    sql_bexpr *zero = CMP(&v, SQL_OP_EQ, cy, K(&v, 0));
    expect_ints(&v, OP(&v, SQL_OP_OR, T_BOOL, zero, quot), ((int64_t[]){1, 1, 1, 0}), NULL);
    expect_pred(&v, OP(&v, SQL_OP_OR, T_BOOL, zero, quot), ((int64_t[]){1, 1, 1, 0}));
    /* without the guard the division fails at row 1 */
    expect_error(&v, OP(&v, SQL_OP_AND, T_BOOL, CMP(&v, SQL_OP_GT, cx, K(&v, 0)), quot),
                 STO_DIVISION_BY_ZERO, 1);
    env_free(&v);
}

/* --- comparisons -------------------------------------------------------------------------- */

static void test_comparisons(void)
{
    env v;
    env_init(&v, jit, 4);
    static const int32_t a[] = {1, 5, 3, -2};
    static const int32_t b[] = {2, 5, 1, 0};
    sql_bexpr *ca = column(&v, T_INT, a, NULL);
    sql_bexpr *cb = column(&v, T_INT, b, "...n");
    const sql_op ops[] = {SQL_OP_EQ, SQL_OP_NE, SQL_OP_LT, SQL_OP_LE, SQL_OP_GT, SQL_OP_GE};
    for (int o = 0; o < 6; o++) {
        int64_t want[4];
        for (int i = 0; i < 4; i++) {
            int c = (a[i] > b[i]) - (a[i] < b[i]);
            bool r[] = {c == 0, c != 0, c<0, c <= 0, c> 0, c >= 0};
            want[i] = r[o];
        }
        expect_ints(&v, CMP(&v, ops[o], ca, cb), want, "...n");
    }
    /* dates compare as day numbers; BETWEEN arrives as two comparisons */
    static const int32_t days[] = {8766, 9131, 9500, 10000};
    sql_bexpr *d = column(&v, T_DATE, days, NULL);
    sql_bexpr *between = OP(&v, SQL_OP_AND, T_BOOL, CMP(&v, SQL_OP_GE, d, k_date(&v, "1994-01-01")),
                            CMP(&v, SQL_OP_LT, d, k_date(&v, "1995-01-01")));
    expect_ints(&v, between, ((int64_t[]){1, 0, 0, 0}), NULL);
    env_free(&v);
}

/* --- strings ---------------------------------------------------------------------------- */

static const char *const words[] = {
    "",
    "a",
    "ab",
    "abc",
    "abcd",
    "abce",
    "abcdefghijkl",
    "abcdefghijklm",
    "abcdefghijkm",
    "abcdefghijklmn",
    "zz",
    "abcdefghijklmo",
    "abcdefghijk",
    "Z",
    "abcd\xff",
    "abcdefghijklmnopqrstuvwxyz",
};
enum { NWORDS = 16 };

/* Strings from C text; bytes are copied to the arena. pad: fill unused
 * inline bytes with garbage (the code must mask them off). */
static sto_str make_str(env *v, const char *s, bool pad)
{
    size_t n = strlen(s);
    sto_str r = sto_str_make(sql_arena_strndup(v->arena, s, n), (uint32_t)n);
    if (pad && n <= STO_STR_INLINE_MAX) memset(r.prefix + n, 0x5A, STO_STR_INLINE_MAX - n);
    return r;
}

static int sign(int c)
{
    return (c > 0) - (c < 0);
}

static void test_string_compare(void)
{
    env v;
    env_init(&v, jit, MAX_ROWS);
    /* 64 pairs drawn from words, crossing the 12/13-byte boundary */
    sto_str *a = sql_arena_alloc(v.arena, sizeof(sto_str) * MAX_ROWS);
    sto_str *b = sql_arena_alloc(v.arena, sizeof(sto_str) * MAX_ROWS);
    int ia[MAX_ROWS], ib[MAX_ROWS];
    for (int r = 0; r < MAX_ROWS; r++) {
        ia[r] = (r * 7) % NWORDS;
        ib[r] = (r < NWORDS) ? r : (r * 5 + r / 4) % NWORDS;
        a[r] = make_str(&v, words[ia[r]], r % 2 == 0);
        b[r] = make_str(&v, words[ib[r]], r % 3 == 0);
    }
    sql_bexpr *ca = column(&v, T_STR, a, NULL);
    sql_bexpr *cb = column(&v, sto_type_string(STO_TYPE_CHAR, 20), b, NULL);
    const sql_op ops[] = {SQL_OP_EQ, SQL_OP_NE, SQL_OP_LT, SQL_OP_LE, SQL_OP_GT, SQL_OP_GE};
    for (int o = 0; o < 6; o++) {
        int64_t want[MAX_ROWS];
        for (int r = 0; r < MAX_ROWS; r++) {
            int c = sign(sto_str_cmp(&a[r], &b[r]));
            bool res[] = {c == 0, c != 0, c<0, c <= 0, c> 0, c >= 0};
            want[r] = res[o];
        }
        expect_ints(&v, CMP(&v, ops[o], ca, cb), want, NULL);
    }
    /* against constants: short, exactly 12, 13 bytes */
    const char *consts[] = {"abcd", "abcdefghijkl", "abcdefghijklm", ""};
    for (int k = 0; k < 4; k++) {
        sql_bexpr *c = k_str(&v, consts[k]);
        sto_str cs = sto_str_make(consts[k], (uint32_t)strlen(consts[k]));
        int64_t eq[MAX_ROWS], lt[MAX_ROWS], gt[MAX_ROWS];
        for (int r = 0; r < MAX_ROWS; r++) {
            eq[r] = sto_str_cmp(&a[r], &cs) == 0;
            lt[r] = sto_str_cmp(&a[r], &cs) < 0;
            gt[r] = sto_str_cmp(&cs, &a[r]) > 0;
        }
        expect_ints(&v, CMP(&v, SQL_OP_EQ, ca, c), eq, NULL);
        expect_ints(&v, CMP(&v, SQL_OP_EQ, c, ca), eq, NULL);
        expect_ints(&v, CMP(&v, SQL_OP_LT, ca, c), lt, NULL);
        expect_ints(&v, CMP(&v, SQL_OP_GT, c, ca), gt, NULL);
    }
    env_free(&v);
}

/* The reference LIKE: plain recursion over the pattern. */
static bool ref_like(const char *s, size_t n, const char *p, size_t m, int esc)
{
    if (m == 0) return n == 0;
    if (esc >= 0 && (unsigned char)p[0] == esc)
        return m > 1 && n > 0 && s[0] == p[1] && ref_like(s + 1, n - 1, p + 2, m - 2, esc);
    if (p[0] == '%') {
        for (size_t k = 0; k <= n; k++)
            if (ref_like(s + k, n - k, p + 1, m - 1, esc)) return true;
        return false;
    }
    return n > 0 && (p[0] == '_' || p[0] == s[0]) && ref_like(s + 1, n - 1, p + 1, m - 1, esc);
}

static void test_like(void)
{
    static const char *const subjects[] = {
        "",
        "PROMO BRUSHED TIN",
        "PROMO",
        "STANDARD POLISHED BRASS",
        "BRASS",
        "forest green lime",
        "forestgreen",
        "green",
        "gree",
        "carefully special requests wake",
        "special requests",
        "requests special",
        "Customer Complaints here",
        "Customer#000000001 Complaints",
        "a%b",
        "a_c",
        "abc",
        "abcdefghijklm",
        "xxspecialxxrequestsxx",
        "specialrequests",
        /* needles that overlap themselves or each other */
        "aaa",
        "aaaa",
        "aba",
        "abba",
        /* longer than the 32-byte search blocks: "special" straddles the
         * first block's end, "requests" ends the string */
        "0123456789012345678901234specialxx0123456789012345678901234requests",
    };
    enum { N = 25 };
    static const char *const patterns[] = {
        "PROMO%",
        "%BRASS",
        "%green%",
        "forest%",
        "%special%requests%",
        "%Customer%Complaints%",
        "abc",
        "a_c",
        "%",
        "",
        "a\\%b",
        "%s%s%",
        "_%",
        "%_",
        "a%c",
        "%e%e%e%",
        "abcdefghijklm",
        "abcdefghijkl%",
        "%ghijklm",
        "g%n",
        "__",
        "%special%requests",
        "%aa%aa%",
        "%ab%ba%",
        "a%%b",
        "%%",
        "%requests",
        "%aaa%",
    };
    enum { NP = 28 };
    env v;
    env_init(&v, jit, N);
    sto_str *s = sql_arena_alloc(v.arena, sizeof(sto_str) * N);
    for (int i = 0; i < N; i++)
        s[i] = make_str(&v, subjects[i], i % 2 == 1);
    sql_bexpr *cs = column(&v, T_STR, s, "........................n");
    const char *nulls = "........................n";
    for (int p = 0; p < NP; p++) {
        int64_t want[N], not_want[N];
        for (int i = 0; i < N; i++) {
            want[i] =
                ref_like(subjects[i], strlen(subjects[i]), patterns[p], strlen(patterns[p]), '\\');
            not_want[i] = !want[i];
        }
        expect_ints(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, patterns[p])), want, nulls);
        expect_ints(&v, FN(&v, SQL_FUNC_NOT_LIKE, T_BOOL, 2, cs, k_str(&v, patterns[p])), not_want,
                    nulls);
    }
    /* a few by hand, so the reference is checked too */
    expect_ints(
        &v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "%special%requests%")),
        ((int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1}),
        nulls);
    expect_ints(
        &v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "a\\%b")),
        ((int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
        nulls);
    /* the pieces of a pattern may not share bytes: "aaa" holds no two "aa" */
    expect_ints(
        &v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "%aa%aa%")),
        ((int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}),
        nulls);
    expect_ints(
        &v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "%ab%ba%")),
        ((int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}),
        nulls);
    /* ESCAPE '!' and an empty ESCAPE */
    expect_ints(
        &v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 3, cs, k_str(&v, "a!_c"), k_str(&v, "!")),
        ((int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
        nulls);
    expect_ints(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 3, cs, k_str(&v, "a\\%b"), k_str(&v, "")),
                ((int64_t[N]){0}), nulls);
    /* ILIKE and a pattern from a column take the general matcher */
    expect_ints(
        &v, FN(&v, SQL_FUNC_ILIKE, T_BOOL, 2, cs, k_str(&v, "%BRUSHED%")),
        ((int64_t[]){0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
        nulls);
    expect_ints(
        &v, FN(&v, SQL_FUNC_NOT_ILIKE, T_BOOL, 2, cs, k_str(&v, "promo%")),
        ((int64_t[]){1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
        nulls);
    expect_ints(
        &v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, k_str(&v, "abc"), cs),
        ((int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}),
        nulls);
    /* a pattern ending in the escape character */
    expect_error(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "abc\\")),
                 STO_INVALID_ESCAPE_SEQUENCE, 0);
    expect_error(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 3, cs, k_str(&v, "a"), k_str(&v, "ab")),
                 STO_INVALID_ESCAPE_SEQUENCE, 0);
    env_free(&v);
}

/* cg_rt_find against a naive search, over haystacks long enough for its
 * 32-byte steps, with needles that occur, nearly occur and do not. */
static void test_find(void)
{
    char hay[300], needle[16];
    uint64_t r = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t n = (size_t)(r >> 33) % 260, k = 1 + (size_t)(r >> 20) % 12;
        for (size_t i = 0; i < n; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            hay[i] = "abcs"[(r >> 40) % 4];
        }
        for (size_t i = 0; i < k; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            needle[i] = "abcs"[(r >> 40) % 4];
        }
        if (n >= k && iter % 2) /* copy a piece of the haystack */
            memcpy(needle, hay + (r >> 45) % (n - k + 1), k);
        int64_t want = -1;
        for (size_t i = 0; i + k <= n && want < 0; i++)
            if (memcmp(hay + i, needle, k) == 0) want = (int64_t)i;
        int64_t got = cg_rt_find(hay, n, needle, k);
        if (got != want) {
            fprintf(stderr, "find: n=%zu k=%zu got %lld want %lld\n", n, k, (long long)got,
                    (long long)want);
            test_failures_++;
            return;
        }
    }
    CHECK_EQ_INT(cg_rt_find("abc", 3, "", 0), 0);
}

/* LIKE over long strings: the inline anchors and the search of the middle
 * pieces against the reference matcher. */
static void test_like_long(void)
{
    env v;
    env_init(&v, jit, MAX_ROWS);
    static const char *const pieces[] = {"special", "requests", "sp", "ecial", "x", "  ", "req"};
    char *text[MAX_ROWS];
    sto_str *s = sql_arena_alloc(v.arena, sizeof(sto_str) * MAX_ROWS);
    uint64_t r = 99;
    for (int i = 0; i < MAX_ROWS; i++) {
        char buf[200];
        size_t n = 0;
        int parts = i % 9;
        for (int p = 0; p < parts; p++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            const char *w = pieces[(r >> 40) % 7];
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%.*s", w, (int)((r >> 50) % 9),
                                  "abcdefghi");
        }
        buf[n] = '\0';
        text[i] = sql_arena_strndup(v.arena, buf, n);
        s[i] = make_str(&v, text[i], false);
    }
    sql_bexpr *cs = column(&v, T_STR, s, NULL);
    static const char *const patterns[] = {"%special%requests%", "%requests",  "special%",
                                           "%ecial%req%x%",      "%sp%sp%sp%", "sp%a",
                                           "%specialabcdefgh%"};
    for (int p = 0; p < 7; p++) {
        int64_t want[MAX_ROWS];
        for (int i = 0; i < MAX_ROWS; i++)
            want[i] = ref_like(text[i], strlen(text[i]), patterns[p], strlen(patterns[p]), -1);
        int matches = 0;
        for (int i = 0; i < MAX_ROWS; i++)
            matches += (int)want[i];
        CHECK(matches > 0); /* the data exercises every pattern */
        expect_ints(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, patterns[p])), want, NULL);
    }
    env_free(&v);
}

static void test_string_functions(void)
{
    env v;
    env_init(&v, jit, 5);
    sto_str s[5];
    const char *text[] = {"hello world", "PROMO BRUSHED COPPER", "ab", "", "x"};
    for (int i = 0; i < 5; i++)
        s[i] = make_str(&v, text[i], true);
    sql_bexpr *cs = column(&v, T_STR, s, "...n.");
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 3, cs, K(&v, 2), K(&v, 3)),
                ((const char *[]){"ell", "ROM", "b", NULL, ""}));
    /* PostgreSQL: characters before position 1 count against the length */
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 3, cs, K(&v, 0), K(&v, 3)),
                ((const char *[]){"he", "PR", "ab", NULL, "x"}));
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 3, cs, K(&v, -5), K(&v, 3)),
                ((const char *[]){"", "", "", NULL, ""}));
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 2, cs, K(&v, 7)),
                ((const char *[]){"world", "BRUSHED COPPER", "", NULL, ""}));
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 3, cs, K(&v, 1), K(&v, 15)),
                ((const char *[]){"hello world", "PROMO BRUSHED C", "ab", NULL, "x"}));
    expect_error(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 3, cs, K(&v, 1), K(&v, -1)),
                 STO_DATA_EXCEPTION, 0);
    expect_strs(&v, OP(&v, SQL_OP_CONCAT, T_STR, cs, k_str(&v, "!")),
                ((const char *[]){"hello world!", "PROMO BRUSHED COPPER!", "ab!", NULL, "x!"}));
    expect_strs(&v, OP(&v, SQL_OP_CONCAT, T_STR, cs, cs),
                ((const char *[]){"hello worldhello world",
                                  "PROMO BRUSHED COPPERPROMO BRUSHED COPPER", "abab", NULL, "xx"}));
    expect_strs(&v, FN(&v, SQL_FUNC_UPPER, T_STR, 1, cs),
                ((const char *[]){"HELLO WORLD", "PROMO BRUSHED COPPER", "AB", NULL, "X"}));
    expect_strs(&v, FN(&v, SQL_FUNC_LOWER, T_STR, 1, cs),
                ((const char *[]){"hello world", "promo brushed copper", "ab", NULL, "x"}));
    expect_ints(&v, FN(&v, SQL_FUNC_LENGTH, T_INT, 1, cs), ((int64_t[]){11, 20, 2, 0, 1}), "...n.");
    env_free(&v);
}

/* UTF-8 text counts characters, as PostgreSQL in a UTF8 database; the
 * ASCII rows check that the fast path and the character path agree. */
static void test_utf8_strings(void)
{
    env v;
    env_init(&v, jit, 5);
    sto_str s[5];
    const char *text[] = {"h\xc3\xa9llo",
                          "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x83\x86\xe3\x82\xad",
                          "abcdefghijklmnopq\xc3\xa9", "", "ab "};
    for (int i = 0; i < 5; i++)
        s[i] = make_str(&v, text[i], false);
    sql_bexpr *cs = column(&v, T_STR, s, NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_LENGTH, T_INT, 1, cs), ((int64_t[]){5, 5, 18, 0, 3}), NULL);
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 3, cs, K(&v, 2), K(&v, 2)),
                ((const char *[]){"\xc3\xa9l", "\xe6\x9c\xac\xe8\xaa\x9e", "bc", "", "b "}));
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 2, cs, K(&v, 3)),
                ((const char *[]){"llo", "\xe8\xaa\x9e\xe3\x83\x86\xe3\x82\xad",
                                  "cdefghijklmnopq\xc3\xa9", "", " "}));
    /* the cut falls after the two-byte character at position 18 */
    expect_strs(&v, FN(&v, SQL_FUNC_SUBSTRING, T_STR, 3, cs, K(&v, 17), K(&v, 2)),
                ((const char *[]){"", "", "q\xc3\xa9", "", ""}));
    expect_ints(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "h_llo")),
                ((int64_t[]){1, 0, 0, 0, 0}), NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "_____")),
                ((int64_t[]){1, 1, 0, 0, 0}), NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "%_\xe3\x82\xad")),
                ((int64_t[]){0, 1, 0, 0, 0}), NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_LIKE, T_BOOL, 2, cs, k_str(&v, "%q_")),
                ((int64_t[]){0, 0, 1, 0, 0}), NULL);
    /* CHAR(n) cuts characters, not bytes, and drops trailing blanks, so
     * 'ab '::VARCHAR as CHAR(5) equals 'ab' */
    expect_strs(&v, CAST(&v, sto_type_string(STO_TYPE_CHAR, 5), cs),
                ((const char *[]){"h\xc3\xa9llo",
                                  "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x83\x86\xe3\x82\xad",
                                  "abcde", "", "ab"}));
    expect_ints(
        &v,
        OP(&v, SQL_OP_EQ, T_BOOL, CAST(&v, sto_type_string(STO_TYPE_CHAR, 5), cs), k_str(&v, "ab")),
        ((int64_t[]){0, 0, 0, 0, 1}), NULL);
    env_free(&v);
}

/* --- dates ----------------------------------------------------------------------------- */

static int32_t date_of(const char *s)
{
    int32_t d = 0;
    sto_date_parse(s, strlen(s), &d);
    return d;
}

static void test_dates(void)
{
    env v;
    env_init(&v, jit, MAX_ROWS);
    int32_t days[MAX_ROWS];
    for (int i = 0; i < MAX_ROWS; i++)
        days[i] = -800000 + i * 27731 + (i % 5) * 59; /* from 0160 to 6755, leap days too */
    days[0] = 0;
    days[1] = sto_date_from_ymd(2000, 2, 29);
    days[2] = sto_date_from_ymd(1900, 3, 1);
    days[3] = -1;
    days[4] = 2145042905; /* 5874897-12-31, PostgreSQL's last date */
    days[5] = -2440588;   /* 4714-11-24 BC */
    sql_bexpr *d = column(&v, T_DATE, days, NULL);
    int64_t y[MAX_ROWS], m[MAX_ROWS], dd[MAX_ROWS];
    for (int i = 0; i < MAX_ROWS; i++) {
        int yy, mm, d2;
        sto_date_to_ymd(days[i], &yy, &mm, &d2);
        y[i] = yy;
        m[i] = mm;
        dd[i] = d2;
    }
    expect_ints(&v, FN(&v, SQL_FUNC_EXTRACT_YEAR, T_INT, 1, d), y, NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_EXTRACT_MONTH, T_INT, 1, d), m, NULL);
    expect_ints(&v, FN(&v, SQL_FUNC_EXTRACT_DAY, T_INT, 1, d), dd, NULL);
    env_free(&v);

    env_init(&v, jit, 6);
    static const char *const in[] = {"2023-01-31", "2024-01-31", "2023-03-31",
                                     "1998-12-01", "2000-02-29", "1970-01-01"};
    int32_t dv[6];
    for (int i = 0; i < 6; i++)
        sto_date_parse(in[i], 10, &dv[i]);
    sql_bexpr *cd = column(&v, T_DATE, dv, ".....n");
    const char *nulls = ".....n";
#define D(s) (int64_t) date_of(s)
    int64_t plus1[] = {D("2023-02-28"), D("2024-02-29"), D("2023-04-30"),
                       D("1999-01-01"), D("2000-03-29"), 0};
    expect_ints(&v, FN(&v, SQL_FUNC_DATE_ADD_MONTHS, T_DATE, 2, cd, K(&v, 1)), plus1, nulls);
    int64_t minus1[] = {D("2022-12-31"), D("2023-12-31"), D("2023-02-28"),
                        D("1998-11-01"), D("2000-01-29"), 0};
    expect_ints(&v, FN(&v, SQL_FUNC_DATE_ADD_MONTHS, T_DATE, 2, cd, K(&v, -1)), minus1, nulls);
    int64_t plus12[] = {D("2024-01-31"), D("2025-01-31"), D("2024-03-31"),
                        D("1999-12-01"), D("2001-02-28"), 0};
    expect_ints(&v, FN(&v, SQL_FUNC_DATE_ADD_MONTHS, T_DATE, 2, cd, K(&v, 12)), plus12, nulls);
    int64_t minus25[] = {D("2020-12-31"), D("2021-12-31"), D("2021-02-28"),
                         D("1996-11-01"), D("1998-01-29"), 0};
    expect_ints(&v, FN(&v, SQL_FUNC_DATE_ADD_MONTHS, T_DATE, 2, cd, K(&v, -25)), minus25, nulls);
    int64_t plus90[6], minus90[6], diff[6];
    for (int i = 0; i < 6; i++) {
        plus90[i] = dv[i] + 90;
        minus90[i] = dv[i] - 90;
        diff[i] = dv[i] - D("1995-03-15");
    }
    expect_ints(&v, FN(&v, SQL_FUNC_DATE_ADD_DAYS, T_DATE, 2, cd, K(&v, 90)), plus90, nulls);
    expect_ints(&v, FN(&v, SQL_FUNC_DATE_SUB_DAYS, T_DATE, 2, cd, K(&v, 90)), minus90, nulls);
    expect_ints(&v, FN(&v, SQL_FUNC_DATE_DIFF_DAYS, T_INT, 2, cd, k_date(&v, "1995-03-15")), diff,
                nulls);
    expect_error(&v, FN(&v, SQL_FUNC_DATE_ADD_DAYS, T_DATE, 2, cd, K(&v, INT32_MAX)),
                 STO_NUMERIC_VALUE_OUT_OF_RANGE, 0);
    /* beyond PostgreSQL's last date */
    expect_error(&v, FN(&v, SQL_FUNC_DATE_ADD_MONTHS, T_DATE, 2, cd, K(&v, 71000000)),
                 STO_NUMERIC_VALUE_OUT_OF_RANGE, 0);
#undef D
    env_free(&v);
}

/* --- casts ------------------------------------------------------------------------------ */

static void test_numeric_casts(void)
{
    env v;
    env_init(&v, jit, 4);
    static const int32_t i[] = {7, -3, 2147483647, 0};
    sql_bexpr *ci = column(&v, T_INT, i, "...n");
    expect_ints(&v, CAST(&v, T_BIG, ci), ((int64_t[]){7, -3, 2147483647, 0}), "...n");
    expect_ints(&v, CAST(&v, dec(12, 2), ci), ((int64_t[]){700, -300, 214748364700, 0}), "...n");
    expect_error(&v, CAST(&v, dec(5, 2), ci), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    expect_doubles(&v, CAST(&v, T_DBL, ci), ((double[]){7, -3, 2147483647, 0}), "...n");
    expect_ints(&v, CAST(&v, T_BOOL, ci), ((int64_t[]){1, 1, 1, 0}), "...n");
    static const int64_t b[] = {5, -2147483648LL, 2147483648LL, 1};
    sql_bexpr *cb = column(&v, T_BIG, b, NULL);
    expect_error(&v, CAST(&v, T_INT, cb), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    /* DECIMAL → integer rounds half away from zero */
    static const int64_t d[] = {250, -250, 249, -251};
    sql_bexpr *cd = column(&v, dec(10, 2), d, NULL);
    expect_ints(&v, CAST(&v, T_INT, cd), ((int64_t[]){3, -3, 2, -3}), NULL);
    expect_ints(&v, CAST(&v, dec(10, 1), cd), ((int64_t[]){25, -25, 25, -25}), NULL);
    expect_ints(&v, CAST(&v, dec(12, 4), cd), ((int64_t[]){25000, -25000, 24900, -25100}), NULL);
    expect_doubles(&v, CAST(&v, T_DBL, cd), ((double[]){2.5, -2.5, 2.49, -2.51}), NULL);
    expect_error(&v, CAST(&v, dec(2, 2), cd), STO_NUMERIC_VALUE_OUT_OF_RANGE, 0);
    /* DOUBLE → integer rounds to even, like PostgreSQL's rint */
    static const double x[] = {2.5, 3.5, -2.5, 1e10};
    sql_bexpr *cx = column(&v, T_DBL, x, NULL);
    expect_ints(&v, CAST(&v, T_BIG, cx), ((int64_t[]){2, 4, -2, 10000000000}), NULL);
    expect_error(&v, CAST(&v, T_INT, cx), STO_NUMERIC_VALUE_OUT_OF_RANGE, 3);
    static const double y[] = {1.005, -0.125, 123.456, 0};
    sql_bexpr *cy = column(&v, T_DBL, y, "...n");
    expect_ints(&v, CAST(&v, dec(10, 2), cy), ((int64_t[]){101, -13, 12346, 0}), "...n");
    expect_error(&v, CAST(&v, dec(3, 2), cy), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    static const uint8_t t[] = {1, 0, 1, 0};
    sql_bexpr *ct = column(&v, T_BOOL, t, NULL);
    expect_ints(&v, CAST(&v, T_INT, ct), ((int64_t[]){1, 0, 1, 0}), NULL);
    env_free(&v);
}

static void test_text_casts(void)
{
    env v;
    env_init(&v, jit, 4);
    sto_str s[4] = {make_str(&v, " 42 ", false), make_str(&v, "-7", true),
                    make_str(&v, "12345678901", false), make_str(&v, "x", false)};
    sql_bexpr *cs = column(&v, T_STR, s, "..n.");
    /* row 3 'x' is not a number: everything before it converts */
    expect_error(&v, CAST(&v, T_INT, cs), STO_INVALID_TEXT_REPRESENTATION, 3);
    sto_str n[4] = {make_str(&v, " 42 ", false), make_str(&v, "-7", true),
                    make_str(&v, "12345678901", false), make_str(&v, "0", false)};
    sql_bexpr *cn = column(&v, T_STR, n, NULL);
    expect_error(&v, CAST(&v, T_INT, cn), STO_NUMERIC_VALUE_OUT_OF_RANGE, 2);
    expect_ints(&v, CAST(&v, T_BIG, cn), ((int64_t[]){42, -7, 12345678901, 0}), NULL);
    expect_ints(&v, CAST(&v, dec(15, 2), cn), ((int64_t[]){4200, -700, 1234567890100, 0}), NULL);
    expect_doubles(&v, CAST(&v, T_DBL, cn), ((double[]){42, -7, 12345678901.0, 0}), NULL);
    sto_str dd[4] = {make_str(&v, "1998-12-01", false), make_str(&v, " 2000-02-29", true),
                     make_str(&v, "1998-13-01", false), make_str(&v, "", false)};
    sql_bexpr *cdd = column(&v, T_STR, dd, NULL);
    expect_error(&v, CAST(&v, T_DATE, cdd), STO_INVALID_DATETIME_FORMAT, 2);
    sto_str bo[4] = {make_str(&v, "true", false), make_str(&v, "F", false),
                     make_str(&v, " yes", false), make_str(&v, "off", false)};
    sql_bexpr *cbo = column(&v, T_STR, bo, NULL);
    expect_ints(&v, CAST(&v, T_BOOL, cbo), ((int64_t[]){1, 0, 1, 0}), NULL);
    env_free(&v);

    env_init(&v, jit, 4);
    static const int32_t dates[] = {10561, 0, -1, 11016};
    sql_bexpr *cd = column(&v, T_DATE, dates, "..n.");
    expect_strs(&v, CAST(&v, T_STR, cd),
                ((const char *[]){"1998-12-01", "1970-01-01", NULL, "2000-02-29"}));
    sto_str ds[4] = {make_str(&v, "1998-12-01", false), make_str(&v, "1970-01-01", true),
                     make_str(&v, "1969-12-31", false), make_str(&v, "2000-02-29", false)};
    sql_bexpr *cds = column(&v, T_STR, ds, "..n.");
    expect_ints(&v, CAST(&v, T_DATE, cds), ((int64_t[]){10561, 0, 0, 11016}), "..n.");
    static const int64_t big[] = {42, -9223372036854775807LL - 1, 1234567890123, 0};
    sql_bexpr *cb = column(&v, T_BIG, big, NULL);
    expect_strs(&v, CAST(&v, T_STR, cb),
                ((const char *[]){"42", "-9223372036854775808", "1234567890123", "0"}));
    /* explicit casts to VARCHAR(n) cut */
    expect_strs(&v, CAST(&v, sto_type_string(STO_TYPE_VARCHAR, 3), cb),
                ((const char *[]){"42", "-92", "123", "0"}));
    static const int64_t d2[] = {123456, -5, 100, 0};
    sql_bexpr *cdec = column(&v, dec(12, 3), d2, NULL);
    expect_strs(&v, CAST(&v, T_STR, cdec),
                ((const char *[]){"123.456", "-0.005", "0.100", "0.000"}));
    static const double x[] = {0.1, 1e20, 100, -1.5e-5};
    sql_bexpr *cx = column(&v, T_DBL, x, NULL);
    expect_strs(&v, CAST(&v, T_STR, cx), ((const char *[]){"0.1", "1e+20", "100", "-1.5e-05"}));
    static const double x2[] = {123456789012345.6, 1.0 / 3, NAN, -INFINITY};
    sql_bexpr *cx2 = column(&v, T_DBL, x2, NULL);
    expect_strs(&v, CAST(&v, T_STR, cx2),
                ((const char *[]){"123456789012345.6", "0.3333333333333333", "NaN", "-Infinity"}));
    static const double x3[] = {1e15, 123456789012345.0, 0.0001, 0.00001};
    sql_bexpr *cx3 = column(&v, T_DBL, x3, NULL);
    expect_strs(&v, CAST(&v, T_STR, cx3),
                ((const char *[]){"1e+15", "123456789012345", "0.0001", "1e-05"}));
    static const double x4[] = {-0.0, 1.5e300, 2.5, -123.25};
    sql_bexpr *cx4 = column(&v, T_DBL, x4, NULL);
    expect_strs(&v, CAST(&v, T_STR, cx4), ((const char *[]){"-0", "1.5e+300", "2.5", "-123.25"}));
    static const uint8_t t[] = {1, 0, 1, 0};
    sql_bexpr *ct = column(&v, T_BOOL, t, "...n");
    expect_strs(&v, CAST(&v, T_STR, ct), ((const char *[]){"true", "false", "true", NULL}));
    /* VARCHAR → CHAR(n) cuts and drops trailing blanks; VARCHAR(n) keeps
     * them */
    sto_str pad[4] = {make_str(&v, "ab   ", false), make_str(&v, "abcdefgh", false),
                      make_str(&v, "ab  cdefghijklmnop", false), make_str(&v, "", false)};
    sql_bexpr *cp = column(&v, T_STR, pad, NULL);
    expect_strs(&v, CAST(&v, sto_type_string(STO_TYPE_CHAR, 4), cp),
                ((const char *[]){"ab", "abcd", "ab", ""}));
    expect_strs(&v, CAST(&v, sto_type_string(STO_TYPE_VARCHAR, 4), cp),
                ((const char *[]){"ab  ", "abcd", "ab  ", ""}));
    expect_strs(&v, CAST(&v, sto_type_string(STO_TYPE_VARCHAR, 14), cp),
                ((const char *[]){"ab   ", "abcdefgh", "ab  cdefghijkl", ""}));
    env_free(&v);
}

/* --- CASE, COALESCE, NULLIF, IN ------------------------------------------------------------- */

static void test_conditionals(void)
{
    env v;
    env_init(&v, jit, 5);
    static const int32_t a[] = {10, 7, 0, 4, 9};
    static const int32_t b[] = {2, 0, 0, 2, 3};
    sql_bexpr *ca = column(&v, T_INT, a, "...n.");
    sql_bexpr *cb = column(&v, T_INT, b, NULL);
    /* CASE WHEN b <> 0 THEN a / b WHEN a > 5 THEN -1 ELSE NULL END */
    sql_bexpr *e =
        CASE(&v, T_INT, 2, CMP(&v, SQL_OP_NE, cb, K(&v, 0)), OP(&v, SQL_OP_DIV, T_INT, ca, cb),
             CMP(&v, SQL_OP_GT, ca, K(&v, 5)), K(&v, -1), k_null(&v, T_INT));
    expect_ints(&v, e, ((int64_t[]){5, -1, 0, 0, 3}), "..nn.");
    /* a NULL condition is not true: the ELSE arm */
    sql_bexpr *e2 = CASE(&v, T_INT, 1, CMP(&v, SQL_OP_GT, ca, K(&v, 5)), K(&v, 1), K(&v, 2));
    expect_ints(&v, e2, ((int64_t[]){1, 1, 2, 2, 1}), NULL);
    /* COALESCE evaluates later arguments only when needed */
    sql_bexpr *co =
        FN(&v, SQL_FUNC_COALESCE, T_INT, 2, ca,
           OP(&v, SQL_OP_DIV, T_INT, K(&v, 1), OP(&v, SQL_OP_SUB, T_INT, cb, K(&v, 2))));
    expect_error(&v, co, STO_DIVISION_BY_ZERO, 3);
    sql_bexpr *co2 = FN(&v, SQL_FUNC_COALESCE, T_INT, 3, ca, k_null(&v, T_INT), K(&v, 99));
    expect_ints(&v, co2, ((int64_t[]){10, 7, 0, 99, 9}), NULL);
    sql_bexpr *co3 = FN(&v, SQL_FUNC_COALESCE, T_INT, 2, ca, k_null(&v, T_INT));
    expect_ints(&v, co3, ((int64_t[]){10, 7, 0, 0, 9}), "...n.");
    /* NULLIF */
    expect_ints(&v, FN(&v, SQL_FUNC_NULLIF, T_INT, 2, ca, K(&v, 7)), ((int64_t[]){10, 0, 0, 0, 9}),
                ".n.n.");
    /* a CASE with many arms: WHEN a = k THEN 10 k */
    enum { ARMS = 80 };
    sql_bexpr *big = CASE(&v, T_INT, 1, CMP(&v, SQL_OP_EQ, ca, K(&v, 0)), K(&v, 0), K(&v, -1));
    big->case_.conds.count = big->case_.results.count = ARMS;
    big->case_.conds.items = sql_arena_alloc(v.arena, sizeof(sql_bexpr *) * ARMS);
    big->case_.results.items = sql_arena_alloc(v.arena, sizeof(sql_bexpr *) * ARMS);
    for (int k = 0; k < ARMS; k++) {
        big->case_.conds.items[k] = CMP(&v, SQL_OP_EQ, ca, K(&v, k));
        big->case_.results.items[k] = K(&v, 10 * k);
    }
    expect_ints(&v, big, ((int64_t[]){100, 70, 0, -1, 90}), NULL);
    /* CASE over strings */
    sto_str s[5] = {make_str(&v, "short", false), make_str(&v, "a much longer string", false),
                    make_str(&v, "x", false), make_str(&v, "y", false), make_str(&v, "z", false)};
    sql_bexpr *cs = column(&v, T_STR, s, NULL);
    expect_strs(&v, CASE(&v, T_STR, 1, CMP(&v, SQL_OP_GT, cb, K(&v, 1)), cs, k_str(&v, "none")),
                ((const char *[]){"short", "none", "none", "y", "z"}));
    env_free(&v);
}

static void test_in_list(void)
{
    env v;
    env_init(&v, jit, 6);
    static const int32_t a[] = {1, 2, 3, 4, 5, 6};
    sql_bexpr *ca = column(&v, T_INT, a, ".....n");
    const char *n6 = ".....n";
    /* a switch over many constants */
    sql_bexpr *many = IN(&v, ca, false, 5, K(&v, 1), K(&v, 3), K(&v, 5), K(&v, 3), K(&v, 9));
    expect_ints(&v, many, ((int64_t[]){1, 0, 1, 0, 1, 0}), n6);
    sql_bexpr *many_not = IN(&v, ca, true, 5, K(&v, 1), K(&v, 3), K(&v, 5), K(&v, 3), K(&v, 9));
    expect_ints(&v, many_not, ((int64_t[]){0, 1, 0, 1, 0, 0}), n6);
    /* with a NULL item: no match is NULL */
    sql_bexpr *with_null =
        IN(&v, ca, false, 5, K(&v, 1), K(&v, 3), k_null(&v, T_INT), K(&v, 7), K(&v, 8));
    expect_ints(&v, with_null, ((int64_t[]){1, 0, 1, 0, 0, 0}), ".n.nnn");
    sql_bexpr *not_null = IN(&v, ca, true, 2, K(&v, 2), k_null(&v, T_INT));
    expect_ints(&v, not_null, ((int64_t[]){0, 0, 0, 0, 0, 0}), "n.nnnn");
    /* short lists, non-constant items */
    sql_bexpr *sh = IN(&v, ca, false, 2, K(&v, 4), OP(&v, SQL_OP_ADD, T_INT, ca, K(&v, 0)));
    expect_ints(&v, sh, ((int64_t[]){1, 1, 1, 1, 1, 0}), n6);
    /* strings */
    sto_str s[6] = {make_str(&v, "MAIL", false),  make_str(&v, "SHIP", true),
                    make_str(&v, "AIR", false),   make_str(&v, "a long string value", false),
                    make_str(&v, "TRUCK", false), make_str(&v, "", false)};
    sql_bexpr *cs = column(&v, T_STR, s, NULL);
    sql_bexpr *sin = IN(&v, cs, false, 3, k_str(&v, "MAIL"), k_str(&v, "SHIP"),
                        k_str(&v, "a long string value"));
    expect_ints(&v, sin, ((int64_t[]){1, 1, 0, 1, 0, 0}), NULL);
    /* DOUBLE items */
    static const double x[] = {0.5, 1, 2, 3, 4, 5};
    sql_bexpr *cx = column(&v, T_DBL, x, NULL);
    expect_ints(&v, IN(&v, cx, false, 4, k_dbl(&v, 0.5), k_dbl(&v, 4), k_dbl(&v, 9), k_dbl(&v, 7)),
                ((int64_t[]){1, 0, 0, 0, 1, 0}), NULL);
    env_free(&v);
}

static void test_params(void)
{
    env v;
    env_init(&v, jit, 3);
    static const int32_t a[] = {1, 2, 3};
    sql_bexpr *ca = column(&v, T_INT, a, NULL);
    v.params[0].v.i64 = 2;
    v.params[1].v.str = sto_str_make("a parameter string", 18);
    v.params[2].is_null = true;
    v.ctx->nparams = 3;
    expect_ints(&v, OP(&v, SQL_OP_MUL, T_INT, ca, PARAM(&v, 1, T_INT)), ((int64_t[]){2, 4, 6}),
                NULL);
    expect_strs(
        &v, PARAM(&v, 2, T_STR),
        ((const char *[]){"a parameter string", "a parameter string", "a parameter string"}));
    expect_ints(&v, OP(&v, SQL_OP_ADD, T_INT, ca, PARAM(&v, 3, T_INT)), ((int64_t[]){0, 0, 0}),
                "nnn");
    env_free(&v);
}

/* --- keys: hash, equality, sort order ------------------------------------------------------ */

/* int32_t keys(cg_error *, const void **cols, const uint64_t **valid,
 *              int64_t nrows, uint64_t *hash_a, uint64_t *hash_b,
 *              uint8_t *eq, uint8_t *eq_nulls, int32_t *cmp[4]):
 * for each row, hashes of column 1 and of column 2, their equality with
 * NULLs distinct and equal, and their order under the four NULLS/DESC
 * settings. */
typedef int32_t (*keys_fn)(cg_error *, const void **, const uint64_t **, int64_t, uint64_t *,
                           uint64_t *, uint8_t *, uint8_t *, int32_t *);

typedef struct key_out {
    uint64_t ha[MAX_ROWS], hb[MAX_ROWS];
    uint8_t eq[MAX_ROWS], eqn[MAX_ROWS];
    int32_t cmp[4][MAX_ROWS]; /* asc nulls last, asc nulls first, desc last, desc first */
} key_out;

static bool run_keys(env *v, sto_type ta, sto_type tb, cg_mode mode, key_out *o)
{
    cg_module *m = NULL;
    if (!ok(cg_module_create(v->jit, "keys", &m))) return false;
    LLVMTypeRef ptr = cg_ptr(m);
    LLVMTypeRef params[] = {ptr, ptr, cg_i64(m), ptr, ptr, ptr, ptr, ptr};
    cg_fn f;
    if (!ok(cg_fn_begin(&f, m, "keys", params, 8))) {
        cg_module_destroy(m);
        return false;
    }
    loader l = {v, cg_fn_param(&f, 0), cg_fn_param(&f, 1), NULL};
    cg_loop loop;
    cg_loop_begin(&f, &loop, cg_const_i64(m, 0), cg_fn_param(&f, 2));
    l.row = loop.index;
    cg_val a = load_column(&l, &f, 1), b = load_column(&l, &f, 2);
    cg_store_elem(&f, cg_i64(m), cg_fn_param(&f, 3), loop.index, cg_hash_vals(&f, &a, &ta, 1));
    cg_store_elem(&f, cg_i64(m), cg_fn_param(&f, 4), loop.index, cg_hash_vals(&f, &b, &tb, 1));
    LLVMValueRef eq = cg_equal_vals(&f, &a, &b, &ta, 1, false);
    LLVMValueRef eqn = cg_equal_vals(&f, &a, &b, &ta, 1, true);
    cg_store_elem(&f, cg_i8(m), cg_fn_param(&f, 5), loop.index,
                  LLVMBuildZExt(f.b, eq, cg_i8(m), ""));
    cg_store_elem(&f, cg_i8(m), cg_fn_param(&f, 6), loop.index,
                  LLVMBuildZExt(f.b, eqn, cg_i8(m), ""));
    for (int k = 0; k < 4; k++) {
        LLVMValueRef c = cg_compare_vals(&f, a, b, ta, k >= 2, k % 2 == 1);
        LLVMValueRef idx =
            LLVMBuildAdd(f.b, loop.index, cg_const_i64(m, (int64_t)k * MAX_ROWS), "");
        cg_store_elem(&f, cg_i32(m), cg_fn_param(&f, 7), idx, c);
    }
    cg_loop_end(&f, &loop);
    cg_fn_return_ok(&f);
    if (!ok(cg_fn_end(&f))) {
        cg_module_destroy(m);
        return false;
    }
    cg_code *code = NULL;
    if (!ok(cg_jit_compile(v->jit, m, mode, &code))) return false;
    keys_fn fn = (keys_fn)cg_code_fn(code, "keys");
    cg_error err = cg_error_none();
    int32_t kind = fn(&err, v->data, (const uint64_t **)v->validp, v->nrows, o->ha, o->hb, o->eq,
                      o->eqn, &o->cmp[0][0]);
    ok(cg_code_free(code));
    return kind == CG_ERR_NONE;
}

/* Checks the key functions for rows of (a, b) against C: eq[r] whether the
 * values are equal, cmp[r] their ascending order when both are non-null. */
static void check_keys(env *v, sto_type ta, sto_type tb, const char *an, const char *bn,
                       const int *want_cmp)
{
    for (int k = 0; k < CG_MODE_COUNT; k++) {
        key_out o;
        memset(&o, 0, sizeof(o));
        REQUIRE(run_keys(v, ta, tb, modes[k], &o));
        for (int64_t r = 0; r < v->nrows; r++) {
            bool na = an && an[r] == 'n', nb = bn && bn[r] == 'n';
            int c = want_cmp[r];
            if (na || nb) c = na && nb ? 0 : na ? 1 : -1; /* NULLS LAST */
            bool equal = !na && !nb && want_cmp[r] == 0;
            CHECK_EQ_INT(o.eq[r], equal);
            CHECK_EQ_INT(o.eqn[r], equal || (na && nb));
            if (equal || (na && nb)) CHECK(o.ha[r] == o.hb[r]);
            CHECK_EQ_INT(o.cmp[0][r], c);
            int first = (na || nb) ? -c : c; /* NULLS FIRST flips only NULL cases */
            CHECK_EQ_INT(o.cmp[1][r], first);
            int desc_last = (na || nb) ? c : -c;
            CHECK_EQ_INT(o.cmp[2][r], desc_last);
            CHECK_EQ_INT(o.cmp[3][r], -c);
            if (test_failures_) {
                fprintf(stderr, "  row %lld (%s)\n", (long long)r, cg_mode_name(modes[k]));
                return;
            }
        }
    }
}

static void test_keys(void)
{
    env v;
    env_init(&v, jit, 6);
    static const int32_t a[] = {1, 5, -3, 7, 0, 9};
    static const int32_t b[] = {1, 4, -3, 8, 2, 9};
    column(&v, T_INT, a, "....n.");
    column(&v, T_INT, b, "....nn");
    check_keys(&v, T_INT, T_INT, "....n.", "....nn", (const int[]){0, 1, 0, -1, 0, 0});
    env_free(&v);

    /* CHAR and VARCHAR with equal bytes hash equal, short and long, whatever
     * lies in the unused inline bytes */
    env_init(&v, jit, 6);
    const char *sa[] = {"BRAZIL", "abcdefghijklm", "abcdefghijkl", "x", "same long string!", ""};
    const char *sb[] = {"BRAZIL", "abcdefghijklm", "abcdefghijklz", "", "same long string!", ""};
    sto_str stra[6], strb[6];
    for (int i = 0; i < 6; i++) {
        stra[i] = make_str(&v, sa[i], true);
        strb[i] = make_str(&v, sb[i], false);
    }
    column(&v, sto_type_string(STO_TYPE_CHAR, 20), stra, NULL);
    column(&v, T_STR, strb, ".....n");
    int want[6];
    for (int i = 0; i < 6; i++)
        want[i] = sign(strcmp(sa[i], sb[i]));
    check_keys(&v, T_STR, T_STR, NULL, ".....n", want);
    env_free(&v);

    /* doubles: -0.0 = 0.0 with one hash, NaN = NaN and above all */
    env_init(&v, jit, 4);
    static const double da[] = {0.0, NAN, 1.5, NAN};
    static const double db[] = {-0.0, NAN, NAN, 2.0};
    column(&v, T_DBL, da, NULL);
    column(&v, T_DBL, db, NULL);
    check_keys(&v, T_DBL, T_DBL, NULL, NULL, (const int[]){0, 0, -1, 1});
    env_free(&v);

    /* the hash spreads: 64 consecutive integers, 64 distinct hashes in the
     * high and the low 16 bits alike */
    env_init(&v, jit, MAX_ROWS);
    int64_t seq[MAX_ROWS];
    for (int i = 0; i < MAX_ROWS; i++)
        seq[i] = i;
    column(&v, T_BIG, seq, NULL);
    column(&v, T_BIG, seq, NULL);
    key_out o;
    REQUIRE(run_keys(&v, T_BIG, T_BIG, CG_MODE_OPT, &o));
    int distinct_hi = 0, distinct_lo = 0;
    for (int i = 0; i < MAX_ROWS; i++) {
        bool hi = true, lo = true;
        for (int j = 0; j < i; j++) {
            hi &= (o.ha[i] >> 48) != (o.ha[j] >> 48);
            lo &= (o.ha[i] & 0xFFFF) != (o.ha[j] & 0xFFFF);
        }
        distinct_hi += hi;
        distinct_lo += lo;
    }
    CHECK(distinct_hi >= 60);
    CHECK(distinct_lo >= 60);
    env_free(&v);
}

/* --- the binding: lazy loads and branches ------------------------------------------------------
 */

static void test_lazy_columns(void)
{
    env v;
    env_init(&v, jit, 4);
    static const int32_t a[] = {1, -2, 3, -4};
    static const int32_t b[] = {10, 20, 30, 40};
    sql_bexpr *ca = column(&v, T_INT, a, NULL);
    sql_bexpr *cb = column(&v, T_INT, b, NULL);
    /* b is first used inside a CASE arm, then again after the CASE: the
     * load in the arm does not dominate the later use, so b loads again */
    sql_bexpr *e = OP(&v, SQL_OP_ADD, T_INT,
                      CASE(&v, T_INT, 1, CMP(&v, SQL_OP_GT, ca, K(&v, 0)), cb, K(&v, 0)), cb);
    v.loads = 0;
    expect_ints(&v, e, ((int64_t[]){20, 20, 60, 40}), NULL);
    CHECK_EQ_INT(v.loads, 2 * 3); /* a once, b twice; per mode */
    /* a column used twice unconditionally loads once */
    v.loads = 0;
    expect_ints(&v, OP(&v, SQL_OP_MUL, T_INT, ca, ca), ((int64_t[]){1, 4, 9, 16}), NULL);
    CHECK_EQ_INT(v.loads, 2 * 1);
    env_free(&v);
}

/* Values the caller already holds go straight into the binding; no load
 * callback is needed, and cg_binding_reset keeps them on request. */
typedef int32_t (*i32_fn)(cg_error *, int32_t *);

static void test_prefilled_binding(void)
{
    env v;
    env_init(&v, jit, 1);
    sql_bexpr *c = column(&v, T_INT, (const int32_t[]){0}, "n");
    for (int k = 0; k < CG_MODE_COUNT; k++) {
        cg_module *m = NULL;
        REQUIRE(ok(cg_module_create(jit, "prefilled", &m)));
        cg_fn f;
        LLVMTypeRef params[] = {cg_ptr(m)};
        REQUIRE(ok(cg_fn_begin(&f, m, "f", params, 1)));
        cg_binding b;
        REQUIRE(ok(cg_binding_init(&b, v.ctx, NULL, NULL)));
        b.vals[c->column] = (cg_val){cg_const_i32(m, 41), cg_const_bool(m, false)};
        cg_binding_reset(&b, true);
        cg_val out;
        CHECK(ok(cg_expr_compile(&f, v.ctx, OP(&v, SQL_OP_ADD, T_INT, c, K(&v, 1)), &b, &out)));
        LLVMBuildStore(f.b, out.v, cg_fn_param(&f, 0));
        cg_fn_return_ok(&f);
        cg_binding_reset(&b, false);
        CHECK(b.vals[c->column].v == NULL);
        cg_binding_free(&b);
        REQUIRE(ok(cg_fn_end(&f)));
        cg_code *code = NULL;
        REQUIRE(ok(cg_jit_compile(jit, m, modes[k], &code)));
        int32_t r = 0;
        cg_error err = cg_error_none();
        CHECK_EQ_INT(((i32_fn)cg_code_fn(code, "f"))(&err, &r), CG_ERR_NONE);
        CHECK_EQ_INT(r, 42);
        ok(cg_code_free(code));
    }
    env_free(&v);
}

static void test_compile_errors(void)
{
    env v;
    env_init(&v, jit, 1);
    sql_bexpr *sub = sql_bexpr_new(v.ctx, SQL_BEXPR_SUBQUERY, T_INT, true, 0);
    sto_status st = NULL;
    CHECK(build(&v, sub, false, CG_MODE_FAST, &st) == NULL);
    CHECK(st && strcmp(st->sqlstate, STO_FEATURE_NOT_SUPPORTED) == 0);
    sto_status_free(st);
    /* $1 without parameters is the caller's mistake, reported, not a crash */
    st = NULL;
    cg_module *m = NULL;
    REQUIRE(ok(cg_module_create(jit, "noparams", &m)));
    cg_fn f;
    REQUIRE(ok(cg_fn_begin(&f, m, "f", NULL, 0)));
    cg_binding b;
    REQUIRE(ok(cg_binding_init(&b, v.ctx, NULL, NULL)));
    cg_val out;
    st = cg_expr_compile(&f, v.ctx, PARAM(&v, 1, T_INT), &b, &out);
    CHECK(st != NULL);
    sto_status_free(st);
    /* || without a string arena */
    st = cg_expr_compile(&f, v.ctx, OP(&v, SQL_OP_CONCAT, T_STR, k_str(&v, "a"), k_str(&v, "b")),
                         &b, &out);
    CHECK(st != NULL);
    sto_status_free(st);
    cg_binding_free(&b);
    cg_fn_return_ok(&f);
    sto_status_free(cg_fn_end(&f));
    cg_module_destroy(m);
    env_free(&v);
}

/* --- random trees against a reference evaluator -------------------------------------------------
 * Random INTEGER/BOOLEAN trees with NULLs, overflow and division by zero,
 * compiled and compared row by row with a small interpreter of SQL's rules
 * here: the short-circuits, lazy arms and NULL handling must agree, errors
 * included (same kind, same row). */

enum { R_ROWS = 12 };
static const int32_t r_a[R_ROWS] = {0, 1, -1, 7, INT32_MAX, INT32_MIN, 3, 100000, -5, 2, 0, 46341};
static const int32_t r_b[R_ROWS] = {2, 0, -1, 3, 1, -1, 0, 100000, 5, -2, 9, 46341};
static const uint8_t r_p[R_ROWS] = {1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0};
static const char *const r_an = "..n......n..", *const r_bn = ".....n..n...",
                         *const r_pn = "n...n...n...";

typedef struct rval {
    int err; /* cg_error_kind, 0: none */
    bool null;
    int64_t v;
} rval;

typedef struct rgen {
    env *v;
    uint64_t seed;
    sql_bexpr *a, *b, *p;
} rgen;

static unsigned rnd(rgen *g, unsigned n)
{
    g->seed = g->seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((g->seed >> 33) % n);
}

static sql_bexpr *rand_bool(rgen *g, int depth);

static sql_bexpr *rand_int(rgen *g, int depth)
{
    env *v = g->v;
    unsigned k = depth <= 0 ? rnd(g, 3) : rnd(g, 14);
    switch (k) {
    case 0:
        return g->a;
    case 1:
        return g->b;
    case 2: {
        static const int32_t c[] = {0, 1, -1, 2, 3, 1000, INT32_MAX, INT32_MIN};
        unsigned i = rnd(g, 9);
        return i == 8 ? k_null(v, T_INT) : K(v, c[i]);
    }
    case 3:
    case 4:
    case 5:
    case 6:
    case 7: {
        static const sql_op ops[] = {SQL_OP_ADD, SQL_OP_SUB, SQL_OP_MUL, SQL_OP_DIV, SQL_OP_MOD};
        return OP(v, ops[k - 3], T_INT, rand_int(g, depth - 1), rand_int(g, depth - 1));
    }
    case 8:
        return OP(v, SQL_OP_NEG, T_INT, rand_int(g, depth - 1), NULL);
    case 9:
        return CASE(v, T_INT, 1, rand_bool(g, depth - 1), rand_int(g, depth - 1),
                    rand_int(g, depth - 1));
    case 10:
        return FN(v, SQL_FUNC_COALESCE, T_INT, 2, rand_int(g, depth - 1), rand_int(g, depth - 1));
    case 11:
        return FN(v, SQL_FUNC_NULLIF, T_INT, 2, rand_int(g, depth - 1), rand_int(g, depth - 1));
    case 12:
        return FN(v, SQL_FUNC_ABS, T_INT, 1, rand_int(g, depth - 1));
    default:
        return CASE(v, T_INT, 2, rand_bool(g, depth - 1), rand_int(g, depth - 1),
                    rand_bool(g, depth - 1), rand_int(g, depth - 1), rand_int(g, depth - 1));
    }
}

static sql_bexpr *rand_bool(rgen *g, int depth)
{
    env *v = g->v;
    unsigned k = depth <= 0 ? rnd(g, 2) : rnd(g, 9);
    switch (k) {
    case 0:
        return g->p;
    case 1: {
        static const sql_op ops[] = {SQL_OP_EQ, SQL_OP_NE, SQL_OP_LT,
                                     SQL_OP_LE, SQL_OP_GT, SQL_OP_GE};
        return CMP(v, ops[rnd(g, 6)], rand_int(g, depth - 1), rand_int(g, depth - 1));
    }
    case 2:
    case 3:
        return OP(v, k == 2 ? SQL_OP_AND : SQL_OP_OR, T_BOOL, rand_bool(g, depth - 1),
                  rand_bool(g, depth - 1));
    case 4:
        return OP(v, SQL_OP_NOT, T_BOOL, rand_bool(g, depth - 1), NULL);
    case 5:
        return ISNULL(v, rand_int(g, depth - 1), rnd(g, 2));
    case 6:
        return IN(v, rand_int(g, depth - 1), rnd(g, 2), 4, K(v, 0), K(v, 3), K(v, -1),
                  rnd(g, 2) ? k_null(v, T_INT) : K(v, 7));
    case 7:
        return IN(v, rand_int(g, depth - 1), rnd(g, 2), 2, rand_int(g, depth - 1), K(v, 2));
    default:
        return CASE(v, T_BOOL, 1, rand_bool(g, depth - 1), rand_bool(g, depth - 1),
                    rand_bool(g, depth - 1));
    }
}

static rval eval_ref(const rgen *g, const sql_bexpr *e, int r);

static rval rv(int64_t v)
{
    return (rval){0, false, v};
}

static rval rnull(void)
{
    return (rval){0, true, 0};
}

static rval rerr(int kind)
{
    return (rval){kind, false, 0};
}

/* x as an INTEGER result: overflow outside int32. */
static rval int_result(int64_t x)
{
    return x < INT32_MIN || x > INT32_MAX ? rerr(CG_ERR_OVERFLOW) : rv(x);
}

static rval eval_ref_op(const rgen *g, const sql_bexpr *e, int r)
{
    sql_op op = e->op.op;
    rval a = eval_ref(g, e->op.args[0], r);
    if (a.err) return a;
    if (op == SQL_OP_AND || op == SQL_OP_OR) {
        bool is_and = op == SQL_OP_AND;
        if (!a.null && a.v == (is_and ? 0 : 1)) return a; /* decided */
        rval b = eval_ref(g, e->op.args[1], r);
        if (b.err) return b;
        if (!b.null && b.v == (is_and ? 0 : 1)) return b;
        if (a.null || b.null) return rnull();
        return rv(is_and ? 1 : 0);
    }
    if (op == SQL_OP_NOT) return a.null ? a : rv(!a.v);
    if (op == SQL_OP_NEG) return a.null ? a : int_result(-a.v);
    rval b = eval_ref(g, e->op.args[1], r);
    if (b.err) return b;
    if (a.null || b.null) return rnull();
    switch (op) {
    case SQL_OP_EQ:
        return rv(a.v == b.v);
    case SQL_OP_NE:
        return rv(a.v != b.v);
    case SQL_OP_LT:
        return rv(a.v < b.v);
    case SQL_OP_LE:
        return rv(a.v <= b.v);
    case SQL_OP_GT:
        return rv(a.v > b.v);
    case SQL_OP_GE:
        return rv(a.v >= b.v);
    case SQL_OP_ADD:
        return int_result(a.v + b.v);
    case SQL_OP_SUB:
        return int_result(a.v - b.v);
    case SQL_OP_MUL:
        return int_result(a.v * b.v);
    case SQL_OP_DIV:
        return b.v == 0 ? rerr(CG_ERR_DIVISION_BY_ZERO) : int_result(a.v / b.v);
    default: /* MOD */
        return b.v == 0 ? rerr(CG_ERR_DIVISION_BY_ZERO) : rv(a.v % b.v);
    }
}

static rval eval_ref(const rgen *g, const sql_bexpr *e, int r)
{
    switch (e->kind) {
    case SQL_BEXPR_CONST:
        return e->value.is_null ? rnull() : rv(e->value.v.i64);
    case SQL_BEXPR_COLUMN:
        if (e == g->a) return r_an[r] == 'n' ? rnull() : rv(r_a[r]);
        if (e == g->b) return r_bn[r] == 'n' ? rnull() : rv(r_b[r]);
        return r_pn[r] == 'n' ? rnull() : rv(r_p[r]);
    case SQL_BEXPR_OP:
        return eval_ref_op(g, e, r);
    case SQL_BEXPR_CASE:
        for (uint32_t i = 0; i < e->case_.conds.count; i++) {
            rval c = eval_ref(g, e->case_.conds.items[i], r);
            if (c.err) return c;
            if (!c.null && c.v) return eval_ref(g, e->case_.results.items[i], r);
        }
        return eval_ref(g, e->case_.else_result, r);
    case SQL_BEXPR_IS_NULL: {
        rval a = eval_ref(g, e->is_null.arg, r);
        if (a.err) return a;
        return rv(a.null != e->is_null.negated);
    }
    case SQL_BEXPR_IN_LIST: {
        rval a = eval_ref(g, e->in_list.arg, r);
        if (a.err) return a;
        bool found = false, any_null = a.null;
        for (uint32_t i = 0; i < e->in_list.list.count; i++) {
            rval c = eval_ref(g, e->in_list.list.items[i], r);
            if (c.err) return c;
            if (c.null)
                any_null = true;
            else if (!a.null && c.v == a.v)
                found = true;
        }
        if (a.null || (!found && any_null)) return rnull();
        return rv(found != e->in_list.negated);
    }
    default: { /* FUNC */
        rval a = eval_ref(g, e->func.args.items[0], r);
        if (a.err) return a;
        switch (e->func.id) {
        case SQL_FUNC_COALESCE:
            return a.null ? eval_ref(g, e->func.args.items[1], r) : a;
        case SQL_FUNC_NULLIF: {
            rval b = eval_ref(g, e->func.args.items[1], r);
            if (b.err) return b;
            return !a.null && !b.null && a.v == b.v ? rnull() : a;
        }
        default: /* ABS */
            return a.null ? a : int_result(a.v < 0 ? -a.v : a.v);
        }
    }
    }
}

static void test_random_trees(void)
{
    env v;
    env_init(&v, jit, R_ROWS);
    rgen g = {&v, 20261121, NULL, NULL, NULL};
    g.a = column(&v, T_INT, r_a, r_an);
    g.b = column(&v, T_INT, r_b, r_bn);
    g.p = column(&v, T_BOOL, r_p, r_pn);
    int errors = 0, values = 0;
    for (int t = 0; t < 80; t++) {
        sql_bexpr *e = t % 2 ? rand_int(&g, 1 + t % 4) : rand_bool(&g, 1 + t % 4);
        rval want[R_ROWS];
        int err_row = -1;
        for (int r = 0; r < R_ROWS; r++) {
            want[r] = eval_ref(&g, e, r);
            if (want[r].err && err_row < 0) err_row = r;
        }
        for (int k = 0; k < CG_MODE_COUNT; k++) {
            if (modes[k] == CG_MODE_OPT && t % 4) continue; /* OPT compiles are slow */
            result res;
            REQUIRE(run(&v, e, false, modes[k], &res));
            bool good;
            if (err_row >= 0) {
                good = res.kind == want[err_row].err && res.row == err_row;
            } else {
                good = res.kind == CG_ERR_NONE;
                for (int r = 0; r < R_ROWS && good; r++)
                    good =
                        res.null[r] == want[r].null && (want[r].null || res.val[r].i == want[r].v);
            }
            if (!good) {
                char *text = sql_bexpr_to_string(v.ctx, e);
                fprintf(stderr, "tree %d (%s): %s\n  want %s at row %d, got kind %d at %lld\n", t,
                        cg_mode_name(modes[k]), text ? text : "?",
                        err_row >= 0 ? "error" : "values", err_row, res.kind, (long long)res.row);
                for (int r = 0; r < R_ROWS && err_row < 0; r++)
                    fprintf(stderr, "  row %d: want %s%lld got %s%lld\n", r,
                            want[r].null ? "NULL " : "", (long long)want[r].v,
                            res.null[r] ? "NULL " : "", (long long)res.val[r].i);
                free(text);
                test_failures_++;
                env_free(&v);
                return;
            }
        }
        if (err_row >= 0)
            errors++;
        else
            values++;
    }
    /* both outcomes occur, so neither half of the comparison is vacuous */
    CHECK(errors >= 5);
    CHECK(values >= 20);
    env_free(&v);
}

/* --- from SQL text: the binder's trees, compiled ---------------------------------------------- */

/* Table t: the columns and rows expressions written in SQL refer to. */
enum { T_ROWS = 4, T_COLS = 9 };
static const char *const t_names[T_COLS] = {"i", "j", "price", "disc", "tax", "d", "s", "c", "x"};
static const int32_t t_i[T_ROWS] = {3, 0, -7, 10};
static const int32_t t_j[T_ROWS] = {1, 2, 3, 4};
static const int64_t t_price[T_ROWS] = {3307894, 10494950, 90100, 1};
static const int64_t t_disc[T_ROWS] = {4, 10, 1, 7};
static const int64_t t_tax[T_ROWS] = {2, 8, 6, 0};
static const char *const t_d[T_ROWS] = {"2023-01-31", "1998-12-01", NULL, "2000-02-29"};
static const char *const t_s[T_ROWS] = {"abcdef", "xyz", NULL, "a much longer string value"};
static const char *const t_c[T_ROWS] = {"AB", "ABC", "AB", ""};
static const double t_x[T_ROWS] = {1.5, -3, 0.25, 1e10};

typedef struct table_t {
    sto_schema *schema;
    int32_t d[T_ROWS];
    sto_str s[T_ROWS], c[T_ROWS];
    const void *data[T_COLS];
    const char *nulls[T_COLS];
} table_t;

static bool lookup_t(void *ctx, const char *name, sql_table_info *out)
{
    table_t *t = ctx;
    if (strcmp(name, "t") != 0) return false;
    memset(out, 0, sizeof(*out));
    out->name = "t";
    out->schema = t->schema;
    return true;
}

static bool lookup_no_view(void *ctx, const char *name, sql_view_info *out)
{
    (void)ctx, (void)name, (void)out;
    return false;
}

static bool table_init(table_t *t)
{
    sto_type types[T_COLS] = {T_INT,
                              T_INT,
                              dec(15, 2),
                              dec(15, 2),
                              dec(15, 2),
                              T_DATE,
                              sto_type_string(STO_TYPE_VARCHAR, 40),
                              sto_type_string(STO_TYPE_CHAR, 10),
                              T_DBL};
    bool not_null[T_COLS] = {false, true, true, true, true, false, false, true, true};
    if (!ok(sto_schema_new(T_COLS, t_names, types, not_null, &t->schema))) return false;
    for (int r = 0; r < T_ROWS; r++) {
        t->d[r] = t_d[r] ? date_of(t_d[r]) : 0;
        t->s[r] = t_s[r] ? sto_str_make(t_s[r], (uint32_t)strlen(t_s[r])) : sto_str_make("", 0);
        t->c[r] = sto_str_make(t_c[r], (uint32_t)strlen(t_c[r]));
    }
    const void *data[T_COLS] = {t_i, t_j, t_price, t_disc, t_tax, t->d, t->s, t->c, t_x};
    const char *nulls[T_COLS] = {".n..", NULL, NULL, NULL, NULL, "..n.", "..n.", NULL, NULL};
    memcpy(t->data, data, sizeof(data));
    memcpy(t->nulls, nulls, sizeof(nulls));
    return true;
}

/* SELECT <text> FROM t, bound; the select item's expression, with the
 * environment's columns set up for the ids the binder gave t's columns. */
static sql_bexpr *bound(env *v, table_t *t, const char *text)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "SELECT %s FROM t", text);
    sql_stmt_list *l = NULL;
    sql_plan *plan = NULL;
    sql_catalog cat = {t, lookup_t, lookup_no_view};
    if (!ok(sql_parse(v->arena, sql, &l)) ||
        !ok(sql_bind_query(v->arena, &cat, l->items[0]->query, &plan))) {
        fprintf(stderr, "in: %s\n", sql);
        return NULL;
    }
    sql_lop *get = plan->root, *project = NULL;
    while (get && get->kind != SQL_LOP_GET) {
        if (get->kind == SQL_LOP_PROJECT && !project) project = get;
        get = get->left;
    }
    if (!get || !project) return NULL;
    v->ctx = plan->ctx;
    memset(v->validp, 0, sizeof(v->validp));
    for (uint32_t k = 0; k < get->nout; k++) {
        sql_colid id = get->out[k];
        uint32_t col = get->get.columns[k];
        v->data[id - 1] = t->data[col];
        if (t->nulls[col]) {
            v->valid[id - 1][0] = 0;
            for (int r = 0; r < T_ROWS; r++)
                if (t->nulls[col][r] != 'n') v->valid[id - 1][0] |= (uint64_t)1 << r;
            v->validp[id - 1] = v->valid[id - 1];
        }
    }
    return project->project.items[0].expr;
}

static void test_from_sql(void)
{
    table_t t;
    REQUIRE(table_init(&t));
    env v;
    env_init(&v, jit, T_ROWS);
    const char *n2 = "..n.", *n1 = ".n..";

    sql_bexpr *e = bound(&v, &t, "price * (1 - disc) * (1 + tax)");
    REQUIRE(e);
    CHECK(e->type.id == STO_TYPE_DECIMAL && e->type.scale == 6);
    int64_t charge[T_ROWS];
    for (int r = 0; r < T_ROWS; r++)
        charge[r] = t_price[r] * (100 - t_disc[r]) * (100 + t_tax[r]);
    expect_ints(&v, e, charge, NULL);

    expect_ints(&v, bound(&v, &t, "extract(year from d)"), ((int64_t[]){2023, 1998, 0, 2000}), n2);
    expect_ints(
        &v, bound(&v, &t, "d + interval '1' month"),
        ((int64_t[]){date_of("2023-02-28"), date_of("1999-01-01"), 0, date_of("2000-03-29")}), n2);
    expect_ints(
        &v, bound(&v, &t, "d - interval '3' day"),
        ((int64_t[]){date_of("2023-01-28"), date_of("1998-11-28"), 0, date_of("2000-02-26")}), n2);
    expect_ints(&v, bound(&v, &t, "d - date '1998-12-01'"),
                ((int64_t[]){date_of("2023-01-31") - 10561, 0, 0, date_of("2000-02-29") - 10561}),
                n2);
    expect_ints(&v, bound(&v, &t, "d >= date '1999-01-01' and d < '2024-01-01'"),
                ((int64_t[]){1, 0, 0, 1}), n2);
    expect_ints(&v, bound(&v, &t, "s like '%b%d%'"), ((int64_t[]){1, 0, 0, 0}), n2);
    expect_ints(&v, bound(&v, &t, "s not like 'a%'"), ((int64_t[]){0, 1, 0, 0}), n2);
    expect_strs(&v, bound(&v, &t, "substring(s from 2 for 3)"),
                ((const char *[]){"bcd", "yz", NULL, " mu"}));
    expect_strs(&v, bound(&v, &t, "s || '!'"),
                ((const char *[]){"abcdef!", "xyz!", NULL, "a much longer string value!"}));
    expect_strs(&v, bound(&v, &t, "upper(s)"),
                ((const char *[]){"ABCDEF", "XYZ", NULL, "A MUCH LONGER STRING VALUE"}));
    expect_ints(&v, bound(&v, &t, "length(s)"), ((int64_t[]){6, 3, 0, 26}), n2);
    expect_ints(&v, bound(&v, &t, "case when j > 2 then i / j else 0 end"),
                ((int64_t[]){0, 0, -2, 2}), NULL);
    expect_ints(&v, bound(&v, &t, "coalesce(i, j)"), ((int64_t[]){3, 2, -7, 10}), NULL);
    expect_ints(&v, bound(&v, &t, "i between 1 and 5"), ((int64_t[]){1, 0, 0, 0}), n1);
    expect_ints(&v, bound(&v, &t, "j in (1, 2, 3, 5)"), ((int64_t[]){1, 1, 1, 0}), NULL);
    expect_ints(&v, bound(&v, &t, "j not in (2, 7)"), ((int64_t[]){1, 0, 1, 1}), NULL);
    expect_ints(&v, bound(&v, &t, "c = 'AB  '"), ((int64_t[]){1, 0, 1, 0}), NULL);
    expect_ints(&v, bound(&v, &t, "cast(price as integer)"), ((int64_t[]){33079, 104950, 901, 0}),
                NULL);
    double quo[T_ROWS];
    for (int r = 0; r < T_ROWS; r++)
        quo[r] = ((double)t_price[r] / 100) / ((double)t_disc[r] / 100);
    expect_doubles(&v, bound(&v, &t, "price / disc"), quo, NULL);
    expect_ints(&v, bound(&v, &t, "nullif(j, 2)"), ((int64_t[]){1, 0, 3, 4}), ".n..");
    expect_ints(&v, bound(&v, &t, "i % j"), ((int64_t[]){0, 0, -1, 2}), n1);
    expect_ints(&v, bound(&v, &t, "round(price, 1)"), ((int64_t[]){330789, 1049495, 9010, 0}),
                NULL);
    expect_ints(&v, bound(&v, &t, "x * 2 > 1"), ((int64_t[]){1, 0, 0, 1}), NULL);
    expect_ints(&v, bound(&v, &t, "i * j + 1 > 3 or s is null"), ((int64_t[]){1, 0, 1, 1}), ".n..");
    expect_error(&v, bound(&v, &t, "j / (j - 3)"), STO_DIVISION_BY_ZERO, 2);
    expect_error(&v, bound(&v, &t, "cast(s as integer)"), STO_INVALID_TEXT_REPRESENTATION, 0);
    env_free(&v);
    sto_schema_free(t.schema);
}

int main(void)
{
    sto_status st = cg_jit_create(NULL, &jit);
    if (st) {
        fprintf(stderr, "cg_jit_create: %s\n", st->message);
        return 1;
    }
    RUN(test_integer_arithmetic);
    RUN(test_decimal);
    RUN(test_double);
    RUN(test_logic);
    RUN(test_comparisons);
    RUN(test_string_compare);
    RUN(test_like);
    RUN(test_find);
    RUN(test_like_long);
    RUN(test_string_functions);
    RUN(test_utf8_strings);
    RUN(test_dates);
    RUN(test_numeric_casts);
    RUN(test_text_casts);
    RUN(test_conditionals);
    RUN(test_in_list);
    RUN(test_params);
    RUN(test_keys);
    RUN(test_lazy_columns);
    RUN(test_prefilled_binding);
    RUN(test_compile_errors);
    RUN(test_random_trees);
    RUN(test_from_sql);
    st = cg_jit_destroy(jit);
    if (st) {
        fprintf(stderr, "cg_jit_destroy: %s\n", st->message);
        sto_status_free(st);
        return 1;
    }
    return TEST_REPORT();
}
