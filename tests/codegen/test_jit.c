/*
 * test_jit.c — the JIT end to end: IR built with codegen/ir.h, compiled in
 * both modes by codegen/jit.h, called, and freed again.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "codegen/ir.h"
#include "codegen/jit.h"
#include "test.h"

static const cg_mode modes[] = {CG_MODE_FAST, CG_MODE_OPT};

static cg_jit *new_jit(void)
{
    cg_jit *jit = NULL;
    sto_status st = cg_jit_create(NULL, &jit);
    if (st) fprintf(stderr, "cg_jit_create: %s\n", st->message);
    sto_status_free(st);
    return jit;
}

static void destroy_jit(cg_jit *jit)
{
    sto_status st = cg_jit_destroy(jit);
    CHECK(st == STO_OK);
    sto_status_free(st);
}

/* Compiles m, reporting any error; NULL on failure. */
static cg_code *compile(cg_jit *jit, cg_module *m, cg_mode mode)
{
    cg_code *code = NULL;
    sto_status st = cg_jit_compile(jit, m, mode, &code);
    if (st)
        fprintf(stderr, "compile (%s): %s: %s\n", cg_mode_name(mode), st->sqlstate, st->message);
    CHECK(st == STO_OK);
    sto_status_free(st);
    return code;
}

static void free_code(cg_code *code)
{
    sto_status st = cg_code_free(code);
    CHECK(st == STO_OK);
    sto_status_free(st);
}

static bool ok(sto_status st)
{
    if (st) fprintf(stderr, "unexpected error: %s\n", st->message);
    sto_status_free(st);
    return st == STO_OK;
}

/* --- column sum ----------------------------------------------------------- */

/* int32_t sum(cg_error *, const int64_t *col, int64_t begin, int64_t end,
 *             int64_t *out): *out = col[begin] + ... + col[end - 1], checked. */
typedef int32_t (*sum_fn)(cg_error *, const int64_t *, int64_t, int64_t, int64_t *);

static void build_sum(cg_module *m, const char *name)
{
    cg_fn f;
    LLVMTypeRef params[] = {cg_ptr(m), cg_i64(m), cg_i64(m), cg_ptr(m)};
    REQUIRE(ok(cg_fn_begin(&f, m, name, params, 4)));
    LLVMTypeRef i64 = cg_type(m, STO_TYPE_BIGINT);
    cg_var acc = cg_var_new(&f, i64, cg_const_i64(m, 0), "acc");
    cg_loop loop;
    cg_loop_begin(&f, &loop, cg_fn_param(&f, 1), cg_fn_param(&f, 2));
    LLVMValueRef x = cg_load_elem(&f, i64, cg_fn_param(&f, 0), loop.index);
    cg_var_set(&f, acc, cg_add(&f, cg_var_get(&f, acc), x, STO_TYPE_BIGINT));
    cg_loop_end(&f, &loop);
    LLVMBuildStore(f.b, cg_var_get(&f, acc), cg_fn_param(&f, 3));
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
}

static cg_code *compile_sum(cg_jit *jit, cg_mode mode)
{
    cg_module *m = NULL;
    if (!ok(cg_module_create(jit, "sum", &m))) return NULL;
    build_sum(m, "sum");
    return compile(jit, m, mode);
}

static void test_sum(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    int64_t col[1000];
    for (int i = 0; i < 1000; i++)
        col[i] = (i % 7 == 0 ? -1 : 1) * (int64_t)i * 1000003;
    int64_t expect = 0;
    for (int i = 10; i < 900; i++)
        expect += col[i];

    int64_t results[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        cg_code *code = compile_sum(jit, modes[k]);
        REQUIRE(code);
        sum_fn fn = (sum_fn)cg_code_fn(code, "sum");
        REQUIRE(fn);
        CHECK(cg_code_fn(code, "nothing") == NULL);
        cg_error err = cg_error_none();
        CHECK_EQ_INT(fn(&err, col, 10, 900, &results[k]), CG_ERR_NONE);
        CHECK_EQ_INT(results[k], expect);
        int64_t empty = 42;
        CHECK_EQ_INT(fn(&err, col, 5, 5, &empty), CG_ERR_NONE);
        CHECK_EQ_INT(empty, 0);
        /* the loop is emitted rotated (ir.h): its guard keeps a range that
         * ends before it begins from running the body once, and a single
         * row runs it exactly once */
        int64_t reversed = 42, one = 42;
        CHECK_EQ_INT(fn(&err, col, 7, 3, &reversed), CG_ERR_NONE);
        CHECK_EQ_INT(reversed, 0);
        CHECK_EQ_INT(fn(&err, col, 8, 9, &one), CG_ERR_NONE);
        CHECK_EQ_INT(one, col[8]);

        const cg_compile_stats *s = cg_code_stats(code);
        CHECK(s->mode == modes[k]);
        CHECK(s->total_us > 0);
        CHECK(s->codegen_us > 0);
        CHECK(s->ir_instructions > 5);
        CHECK(s->object_bytes > 0);
        CHECK(s->total_us >= s->codegen_us + s->optimize_us);
        CHECK(s->optimize_us > 0); /* both modes run IR passes (opt.c) */
        printf("sum %s: %u IR instructions, total %lld us (verify %lld, passes %lld, "
               "codegen %lld, link %lld), %zu object bytes\n",
               cg_mode_name(modes[k]), s->ir_instructions, (long long)s->total_us,
               (long long)s->verify_us, (long long)s->optimize_us, (long long)s->codegen_us,
               (long long)s->link_us, s->object_bytes);
        free_code(code);
    }
    CHECK_EQ_INT(results[0], results[1]);
    destroy_jit(jit);
}

static void test_sum_overflow(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    int64_t col[8] = {1, 2, 3, INT64_MAX - 6, 1, 5, 6, 7};
    for (int k = 0; k < 2; k++) {
        cg_code *code = compile_sum(jit, modes[k]);
        REQUIRE(code);
        sum_fn fn = (sum_fn)cg_code_fn(code, "sum");
        int64_t out = -1;
        cg_error err = cg_error_none();
        /* 1 + 2 + 3 + (MAX - 6) = MAX; adding col[4] overflows. */
        CHECK_EQ_INT(fn(&err, col, 0, 8, &out), CG_ERR_OVERFLOW);
        CHECK_EQ_INT(err.kind, CG_ERR_OVERFLOW);
        CHECK_EQ_INT(err.row, 4);
        CHECK_EQ_INT(err.type, STO_TYPE_BIGINT);
        CHECK_EQ_INT(out, -1); /* no partial result escapes */
        sto_status st = cg_error_status(&err);
        REQUIRE(st);
        CHECK_STREQ(st->sqlstate, "22003");
        CHECK_STREQ(st->message, "bigint out of range");
        sto_status_free(st);

        /* The same column without the last values sums to exactly MAX. */
        err = cg_error_none();
        CHECK_EQ_INT(fn(&err, col, 0, 4, &out), CG_ERR_NONE);
        CHECK_EQ_INT(out, INT64_MAX);
        CHECK(cg_error_status(&err) == STO_OK);

        /* Downward overflow. */
        int64_t low[3] = {INT64_MIN, 0, -1};
        err = cg_error_none();
        CHECK_EQ_INT(fn(&err, low, 0, 3, &out), CG_ERR_OVERFLOW);
        CHECK_EQ_INT(err.row, 2);
        free_code(code);
    }
    destroy_jit(jit);
}

/* --- calling C helpers --------------------------------------------------- */

typedef struct counter {
    int64_t calls;
    int64_t total;
} counter;

/* A runtime helper: counts its calls; 666 is an error with its own status. */
static int32_t count_value(cg_error *err, counter *c, int64_t v)
{
    if (v == 666) {
        err->detail = sto_error(STO_DATA_EXCEPTION, "the helper refused %lld", (long long)v);
        return CG_ERR_RUNTIME;
    }
    c->calls++;
    c->total += v;
    return CG_ERR_NONE;
}

static int64_t twice(int64_t v)
{
    return 2 * v;
}

/* int32_t visit(cg_error *, const int64_t *col, int64_t n, counter *c) */
typedef int32_t (*visit_fn)(cg_error *, const int64_t *, int64_t, counter *);

static cg_code *compile_visit(cg_jit *jit, cg_mode mode)
{
    cg_module *m = NULL;
    if (!ok(cg_module_create(jit, "visit", &m))) return NULL;
    LLVMTypeRef hparams[] = {cg_ptr(m), cg_ptr(m), cg_i64(m)};
    LLVMValueRef helper = NULL;
    sto_status st = cg_extern(m, "test_count_value", cg_fn_type(m, cg_i32(m), hparams, 3),
                              (void *)count_value, &helper);
    if (!ok(st)) {
        cg_module_destroy(m);
        return NULL;
    }
    cg_fn f;
    LLVMTypeRef params[] = {cg_ptr(m), cg_i64(m), cg_ptr(m)};
    if (!ok(cg_fn_begin(&f, m, "visit", params, 3))) {
        cg_module_destroy(m);
        return NULL;
    }
    cg_loop loop;
    cg_loop_begin(&f, &loop, cg_const_i64(m, 0), cg_fn_param(&f, 1));
    LLVMValueRef x = cg_load_elem(&f, cg_i64(m), cg_fn_param(&f, 0), loop.index);
    LLVMValueRef args[] = {f.err, cg_fn_param(&f, 2), x};
    cg_call_checked(&f, helper, args, 3);
    cg_loop_end(&f, &loop);
    cg_fn_return_ok(&f);
    if (!ok(cg_fn_end(&f))) {
        cg_module_destroy(m);
        return NULL;
    }
    return compile(jit, m, mode);
}

static void test_helper_call(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    int64_t col[100];
    for (int i = 0; i < 100; i++)
        col[i] = i;
    for (int k = 0; k < 2; k++) {
        cg_code *code = compile_visit(jit, modes[k]);
        REQUIRE(code);
        visit_fn fn = (visit_fn)cg_code_fn(code, "visit");
        REQUIRE(fn);
        counter c = {0, 0};
        cg_error err = cg_error_none();
        CHECK_EQ_INT(fn(&err, col, 100, &c), CG_ERR_NONE);
        CHECK_EQ_INT(c.calls, 100);
        CHECK_EQ_INT(c.total, 4950);

        /* A failing helper stops the loop at its row with its own error. */
        col[37] = 666;
        c = (counter){0, 0};
        err = cg_error_none();
        CHECK_EQ_INT(fn(&err, col, 100, &c), CG_ERR_RUNTIME);
        CHECK_EQ_INT(c.calls, 37);
        CHECK_EQ_INT(err.row, 37);
        sto_status st = cg_error_status(&err);
        REQUIRE(st);
        CHECK_STREQ(st->sqlstate, "22000");
        CHECK_STREQ(st->message, "the helper refused 666");
        CHECK(err.detail == NULL);
        sto_status_free(st);
        col[37] = 37;
        free_code(code);
    }
    /* The helper was bound once, not once per module. */
    cg_jit_counters n;
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.runtime_symbols, 1);

    /* A name bound engine-wide beforehand serves modules that only declare
     * it. */
    CHECK(ok(cg_jit_bind(jit, "test_twice", (void *)twice)));
    cg_module *m = NULL;
    REQUIRE(ok(cg_module_create(jit, "bound", &m)));
    LLVMTypeRef tparams[] = {cg_i64(m)};
    LLVMValueRef decl =
        LLVMAddFunction(cg_module_llvm(m), "test_twice", cg_fn_type(m, cg_i64(m), tparams, 1));
    LLVMTypeRef params[] = {cg_i64(m), cg_ptr(m)};
    cg_fn f;
    REQUIRE(ok(cg_fn_begin(&f, m, "call_twice", params, 2)));
    LLVMValueRef arg = cg_fn_param(&f, 0);
    LLVMBuildStore(f.b, cg_call(&f, decl, &arg, 1), cg_fn_param(&f, 1));
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
    cg_code *code = compile(jit, m, CG_MODE_FAST);
    REQUIRE(code);
    int32_t (*call_twice)(cg_error *, int64_t, int64_t *) =
        (int32_t(*)(cg_error *, int64_t, int64_t *))cg_code_fn(code, "call_twice");
    int64_t out = 0;
    cg_error err = cg_error_none();
    CHECK(call_twice && call_twice(&err, 21, &out) == 0 && out == 42);
    free_code(code);
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.runtime_symbols, 2);

    /* One name, one address. */
    CHECK(ok(cg_jit_bind(jit, "test_count_value", (void *)count_value)));
    sto_status st = cg_jit_bind(jit, "test_count_value", (void *)free_code);
    CHECK(st != STO_OK);
    sto_status_free(st);
    destroy_jit(jit);
}

/* --- division and other checks ------------------------------------------- */

/* int32_t op(cg_error *, int64_t a, int64_t b, int64_t *out) for one of the
 * checked operations. */
typedef int32_t (*binop_fn)(cg_error *, int64_t, int64_t, int64_t *);
typedef int32_t (*fbinop_fn)(cg_error *, double, double, double *);
typedef int32_t (*ibinop_fn)(cg_error *, int32_t, int32_t, int32_t *);

enum { OP_DIV, OP_REM, OP_ADD, OP_MUL, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"div", "rem", "add", "mul"};

static LLVMValueRef apply(cg_fn *f, int op, LLVMValueRef a, LLVMValueRef b, sto_type_id t)
{
    switch (op) {
    case OP_DIV:
        return cg_div(f, a, b, t);
    case OP_REM:
        return cg_rem(f, a, b, t);
    case OP_ADD:
        return cg_add(f, a, b, t);
    default:
        return cg_mul(f, a, b, t);
    }
}

/* One module with "<op>_<type>" for each op and the types BIGINT, INTEGER,
 * DOUBLE. */
static cg_code *compile_ops(cg_jit *jit, cg_mode mode)
{
    cg_module *m = NULL;
    if (!ok(cg_module_create(jit, "ops", &m))) return NULL;
    sto_type_id types[] = {STO_TYPE_BIGINT, STO_TYPE_INTEGER, STO_TYPE_DOUBLE};
    const char *type_names[] = {"BIGINT", "INTEGER", "DOUBLE"};
    for (int op = 0; op < OP_COUNT; op++) {
        for (int t = 0; t < 3; t++) {
            char name[32];
            snprintf(name, sizeof(name), "%s_%s", op_names[op], type_names[t]);
            LLVMTypeRef ty = cg_type(m, types[t]);
            LLVMTypeRef params[] = {ty, ty, cg_ptr(m)};
            cg_fn f;
            if (!ok(cg_fn_begin(&f, m, name, params, 3))) break;
            LLVMValueRef r = apply(&f, op, cg_fn_param(&f, 0), cg_fn_param(&f, 1), types[t]);
            LLVMBuildStore(f.b, r, cg_fn_param(&f, 2));
            cg_fn_return_ok(&f);
            CHECK(ok(cg_fn_end(&f)));
        }
    }
    return compile(jit, m, mode);
}

/* Runs a BIGINT op; returns the status, *out the value. */
static int32_t run64(cg_code *code, const char *name, int64_t a, int64_t b, int64_t *out,
                     cg_error *err)
{
    binop_fn fn = (binop_fn)cg_code_fn(code, name);
    *err = cg_error_none();
    return fn ? fn(err, a, b, out) : -1;
}

static void expect_error(cg_error *err, const char *sqlstate, const char *message)
{
    sto_status st = cg_error_status(err);
    CHECK(st != STO_OK);
    if (!st) return;
    CHECK_STREQ(st->sqlstate, sqlstate);
    if (message) CHECK_STREQ(st->message, message);
    sto_status_free(st);
}

static void test_division(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    for (int k = 0; k < 2; k++) {
        cg_code *code = compile_ops(jit, modes[k]);
        REQUIRE(code);
        int64_t out = 0;
        cg_error err;
        CHECK_EQ_INT(run64(code, "div_BIGINT", 7, 2, &out, &err), 0);
        CHECK_EQ_INT(out, 3);
        CHECK_EQ_INT(run64(code, "div_BIGINT", -7, 2, &out, &err), 0);
        CHECK_EQ_INT(out, -3);
        CHECK_EQ_INT(run64(code, "rem_BIGINT", -7, 2, &out, &err), 0);
        CHECK_EQ_INT(out, -1);
        CHECK_EQ_INT(run64(code, "rem_BIGINT", INT64_MIN, -1, &out, &err), 0);
        CHECK_EQ_INT(out, 0);

        out = 99;
        CHECK_EQ_INT(run64(code, "div_BIGINT", 7, 0, &out, &err), CG_ERR_DIVISION_BY_ZERO);
        CHECK_EQ_INT(out, 99);
        CHECK_EQ_INT(err.row, -1);
        expect_error(&err, "22012", "division by zero");
        CHECK_EQ_INT(run64(code, "rem_BIGINT", 7, 0, &out, &err), CG_ERR_DIVISION_BY_ZERO);
        expect_error(&err, "22012", NULL);
        CHECK_EQ_INT(run64(code, "div_BIGINT", INT64_MIN, -1, &out, &err), CG_ERR_OVERFLOW);
        expect_error(&err, "22003", "bigint out of range");
        CHECK_EQ_INT(run64(code, "mul_BIGINT", INT64_MAX / 2, 3, &out, &err), CG_ERR_OVERFLOW);
        CHECK_EQ_INT(run64(code, "mul_BIGINT", -3037000499, 3037000499, &out, &err), 0);
        CHECK_EQ_INT(out, -3037000499LL * 3037000499LL);

        ibinop_fn add32 = (ibinop_fn)cg_code_fn(code, "add_INTEGER");
        ibinop_fn div32 = (ibinop_fn)cg_code_fn(code, "div_INTEGER");
        REQUIRE(add32 && div32);
        int32_t o32 = 0;
        err = cg_error_none();
        CHECK_EQ_INT(add32(&err, INT32_MAX - 1, 1, &o32), 0);
        CHECK_EQ_INT(o32, INT32_MAX);
        CHECK_EQ_INT(add32(&err, INT32_MAX, 1, &o32), CG_ERR_OVERFLOW);
        expect_error(&err, "22003", "integer out of range");
        err = cg_error_none();
        CHECK_EQ_INT(div32(&err, INT32_MIN, -1, &o32), CG_ERR_OVERFLOW);
        err = cg_error_none();
        CHECK_EQ_INT(div32(&err, 1, 0, &o32), CG_ERR_DIVISION_BY_ZERO);

        fbinop_fn fdiv = (fbinop_fn)cg_code_fn(code, "div_DOUBLE");
        fbinop_fn fmul = (fbinop_fn)cg_code_fn(code, "mul_DOUBLE");
        REQUIRE(fdiv && fmul);
        double d = 0;
        err = cg_error_none();
        CHECK_EQ_INT(fdiv(&err, 1.0, 4.0, &d), 0);
        CHECK(d == 0.25);
        CHECK_EQ_INT(fdiv(&err, 1.0, 0.0, &d), CG_ERR_DIVISION_BY_ZERO);
        expect_error(&err, "22012", "division by zero");
        err = cg_error_none();
        CHECK_EQ_INT(fmul(&err, 1e200, 1e200, &d), CG_ERR_OVERFLOW);
        expect_error(&err, "22003", "value out of range: overflow");
        free_code(code);
    }
    destroy_jit(jit);
}

/* --- DECIMAL -------------------------------------------------------------- */

/* Decimal functions over i64 values: r(err, a, b, *out). */
typedef struct dec_case {
    const char *name;
    int kind; /* 0 rescale a (scale sa → rs), 1 a * b, 2 a / b */
    int sa, sb, rs;
} dec_case;

static const dec_case dec_cases[] = {
    {"up_2_4", 0, 2, 0, 4},    {"down_4_2", 0, 4, 0, 2},  {"down_4_0", 0, 4, 0, 0},
    {"up_0_2", 0, 0, 0, 2},    {"mul_2_1_3", 1, 2, 1, 3}, {"mul_2_1_2", 1, 2, 1, 2},
    {"mul_2_1_1", 1, 2, 1, 1}, {"mul_2_2_4", 1, 2, 2, 4}, {"div_2_2_4", 2, 2, 2, 4},
    {"div_2_0_2", 2, 2, 0, 2}, {"div_0_2_2", 2, 0, 2, 2},
};
#define N_DEC_CASES (sizeof(dec_cases) / sizeof(dec_cases[0]))

/* i128 aggregate helpers: agg(err, const __int128 *a, int64_t b, __int128 *out). */
typedef int32_t (*agg_fn)(cg_error *, const __int128 *, int64_t, __int128 *);
/* narrow(err, const __int128 *a, int64_t *out) */
typedef int32_t (*narrow_fn)(cg_error *, const __int128 *, int64_t *);

static void build_decimal(cg_module *m)
{
    for (size_t i = 0; i < N_DEC_CASES; i++) {
        const dec_case *c = &dec_cases[i];
        LLVMTypeRef params[] = {cg_i64(m), cg_i64(m), cg_ptr(m)};
        cg_fn f;
        if (!ok(cg_fn_begin(&f, m, c->name, params, 3))) return;
        LLVMValueRef a = cg_fn_param(&f, 0), b = cg_fn_param(&f, 1), r;
        if (c->kind == 0)
            r = cg_decimal_rescale(&f, a, c->sa, c->rs);
        else if (c->kind == 1)
            r = cg_decimal_mul(&f, a, c->sa, b, c->sb, c->rs);
        else
            r = cg_decimal_div(&f, a, c->sa, b, c->sb, c->rs);
        LLVMBuildStore(f.b, r, cg_fn_param(&f, 2));
        cg_fn_return_ok(&f);
        CHECK(ok(cg_fn_end(&f)));
    }
    /* i128: a (scale 2) rescaled to 4, times b (scale 2) at scale 6, divided by
     * b at scale 4. */
    const char *agg_names[] = {"agg_up", "agg_mul", "agg_div"};
    for (int k = 0; k < 3; k++) {
        LLVMTypeRef params[] = {cg_ptr(m), cg_i64(m), cg_ptr(m)};
        cg_fn f;
        if (!ok(cg_fn_begin(&f, m, agg_names[k], params, 3))) return;
        LLVMValueRef a = LLVMBuildLoad2(f.b, cg_i128(m), cg_fn_param(&f, 0), "");
        LLVMValueRef b = cg_fn_param(&f, 1), r;
        if (k == 0)
            r = cg_decimal_rescale(&f, a, 2, 4);
        else if (k == 1)
            r = cg_decimal_mul(&f, a, 2, b, 2, 6);
        else
            r = cg_decimal_div(&f, a, 2, b, 2, 4);
        LLVMBuildStore(f.b, r, cg_fn_param(&f, 2));
        cg_fn_return_ok(&f);
        CHECK(ok(cg_fn_end(&f)));
    }
    LLVMTypeRef params[] = {cg_ptr(m), cg_ptr(m)};
    cg_fn f;
    if (!ok(cg_fn_begin(&f, m, "narrow", params, 2))) return;
    LLVMValueRef a = LLVMBuildLoad2(f.b, cg_i128(m), cg_fn_param(&f, 0), "");
    LLVMBuildStore(f.b, cg_narrow(&f, a, cg_i64(m), STO_TYPE_DECIMAL), cg_fn_param(&f, 1));
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
}

static int32_t dec(cg_code *code, const char *name, int64_t a, int64_t b, int64_t *out)
{
    binop_fn fn = (binop_fn)cg_code_fn(code, name);
    cg_error err = cg_error_none();
    int32_t rc = fn ? fn(&err, a, b, out) : -1;
    sto_status_free(cg_error_status(&err));
    return rc;
}

static void test_decimal(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    for (int k = 0; k < 2; k++) {
        cg_module *m = NULL;
        REQUIRE(ok(cg_module_create(jit, "decimal", &m)));
        build_decimal(m);
        cg_code *code = compile(jit, m, modes[k]);
        REQUIRE(code);
        int64_t o = 0;
        /* 12.34 → 12.3400 */
        CHECK_EQ_INT(dec(code, "up_2_4", 1234, 0, &o), 0);
        CHECK_EQ_INT(o, 123400);
        /* 12.3450 → 12.35, -12.3450 → -12.35, 12.3449 → 12.34 */
        CHECK_EQ_INT(dec(code, "down_4_2", 123450, 0, &o), 0);
        CHECK_EQ_INT(o, 1235);
        CHECK_EQ_INT(dec(code, "down_4_2", -123450, 0, &o), 0);
        CHECK_EQ_INT(o, -1235);
        CHECK_EQ_INT(dec(code, "down_4_2", 123449, 0, &o), 0);
        CHECK_EQ_INT(o, 1234);
        CHECK_EQ_INT(dec(code, "down_4_0", -5000, 0, &o), 0); /* -0.5 → -1 */
        CHECK_EQ_INT(o, -1);
        CHECK_EQ_INT(dec(code, "down_4_0", 4999, 0, &o), 0);
        CHECK_EQ_INT(o, 0);
        CHECK_EQ_INT(dec(code, "up_0_2", INT64_MAX / 10, 0, &o), CG_ERR_OVERFLOW);
        CHECK_EQ_INT(dec(code, "up_0_2", -(INT64_MAX / 100), 0, &o), 0);
        CHECK_EQ_INT(o, -(INT64_MAX / 100) * 100);
        /* 12.34 * 1.5 = 18.510 → 18.51 → 18.5 */
        CHECK_EQ_INT(dec(code, "mul_2_1_3", 1234, 15, &o), 0);
        CHECK_EQ_INT(o, 18510);
        CHECK_EQ_INT(dec(code, "mul_2_1_2", 1234, 15, &o), 0);
        CHECK_EQ_INT(o, 1851);
        CHECK_EQ_INT(dec(code, "mul_2_1_1", 1234, 15, &o), 0);
        CHECK_EQ_INT(o, 185);
        /* 0.05 * 0.5 = 0.025 → 0.03; negative → -0.03 */
        CHECK_EQ_INT(dec(code, "mul_2_1_2", 5, 5, &o), 0);
        CHECK_EQ_INT(o, 3);
        CHECK_EQ_INT(dec(code, "mul_2_1_2", -5, 5, &o), 0);
        CHECK_EQ_INT(o, -3);
        /* Exact in i128 before rounding: 92233720368547758.07 * 0.1 */
        CHECK_EQ_INT(dec(code, "mul_2_1_2", INT64_MAX, 1, &o), 0);
        CHECK_EQ_INT(o, INT64_MAX / 10 + 1);
        CHECK_EQ_INT(dec(code, "mul_2_2_4", INT64_MAX / 100, 10000, &o), CG_ERR_OVERFLOW);
        /* 1.00 / 3.00 = 0.3333, 2.00 / 3.00 = 0.6667, -2 / 3 = -0.6667 */
        CHECK_EQ_INT(dec(code, "div_2_2_4", 100, 300, &o), 0);
        CHECK_EQ_INT(o, 3333);
        CHECK_EQ_INT(dec(code, "div_2_2_4", 200, 300, &o), 0);
        CHECK_EQ_INT(o, 6667);
        CHECK_EQ_INT(dec(code, "div_2_2_4", -200, 300, &o), 0);
        CHECK_EQ_INT(o, -6667);
        CHECK_EQ_INT(dec(code, "div_2_2_4", 200, 0, &o), CG_ERR_DIVISION_BY_ZERO);
        /* 10.00 / 4 = 2.50; 10 / 0.04 = 250.00 */
        CHECK_EQ_INT(dec(code, "div_2_0_2", 1000, 4, &o), 0);
        CHECK_EQ_INT(o, 250);
        CHECK_EQ_INT(dec(code, "div_0_2_2", 10, 4, &o), 0);
        CHECK_EQ_INT(o, 25000);

        /* i128 aggregates beyond the int64 range. */
        __int128 big = (__int128)INT64_MAX * 1000 + 7, r = 0;
        agg_fn up = (agg_fn)cg_code_fn(code, "agg_up");
        agg_fn mul = (agg_fn)cg_code_fn(code, "agg_mul");
        agg_fn div = (agg_fn)cg_code_fn(code, "agg_div");
        narrow_fn narrow = (narrow_fn)cg_code_fn(code, "narrow");
        REQUIRE(up && mul && div && narrow);
        cg_error err = cg_error_none();
        CHECK_EQ_INT(up(&err, &big, 0, &r), 0);
        CHECK(r == big * 100);
        CHECK_EQ_INT(mul(&err, &big, -250, &r), 0); /* scale 2+2 → 6 */
        CHECK(r == big * -250 * 100);
        CHECK_EQ_INT(div(&err, &big, 300, &r), 0); /* big/100 / 3.00 at scale 4 */
        __int128 q = big * 10000 / 300, rem = big * 10000 % 300;
        CHECK(r == q + (rem * 2 >= 300 ? 1 : 0));
        __int128 huge = (__int128)1 << 125;
        CHECK_EQ_INT(up(&err, &huge, 0, &r), CG_ERR_OVERFLOW);
        expect_error(&err, "22003", "numeric field overflow");
        int64_t n = 0;
        err = cg_error_none();
        CHECK_EQ_INT(narrow(&err, &big, &n), CG_ERR_OVERFLOW);
        __int128 small = -1234567;
        err = cg_error_none();
        CHECK_EQ_INT(narrow(&err, &small, &n), 0);
        CHECK_EQ_INT(n, -1234567);
        free_code(code);
    }
    destroy_jit(jit);
}

/* --- types and constants ------------------------------------------------- */

static void test_types(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    cg_module *m = NULL;
    REQUIRE(ok(cg_module_create(jit, "types", &m)));
#define CHECK_WIDTH(id, name, ctype, bytes, oid, pgname)                                           \
    CHECK_EQ_INT(cg_abi_size(m, cg_type(m, STO_TYPE_##id)), bytes);                                \
    CHECK_EQ_INT(cg_abi_size(m, cg_type(m, STO_TYPE_##id)), sizeof(ctype));
    STO_TYPE_LIST(CHECK_WIDTH)
#undef CHECK_WIDTH
    CHECK_EQ_INT(cg_abi_size(m, cg_i128(m)), sizeof(__int128));

    /* A function storing constants of every type into an array of 16-byte
     * slots; the bytes must equal the C values. */
    sto_str s_short = sto_str_make("hello", 5);
    static const char long_text[] = "a string longer than twelve";
    sto_str s_long = sto_str_make(long_text, sizeof(long_text) - 1);
    uint8_t b = 1;
    int32_t i = -123456, d = 19000;
    int64_t l = INT64_MIN + 3, dec = 123456789;
    double x = -2.5;
    const void *values[] = {&b, &i, &l, &dec, &x, &d, &s_short, &s_long};
    sto_type_id ids[] = {STO_TYPE_BOOLEAN, STO_TYPE_INTEGER, STO_TYPE_BIGINT, STO_TYPE_DECIMAL,
                         STO_TYPE_DOUBLE,  STO_TYPE_DATE,    STO_TYPE_CHAR,   STO_TYPE_VARCHAR};
    LLVMTypeRef params[] = {cg_ptr(m)};
    cg_fn f;
    REQUIRE(ok(cg_fn_begin(&f, m, "consts", params, 1)));
    for (int k = 0; k < 8; k++) {
        LLVMValueRef slot =
            cg_elem_ptr(&f, LLVMArrayType2(cg_i8(m), 16), cg_fn_param(&f, 0), cg_const_i64(m, k));
        LLVMBuildStore(f.b, cg_const_value(m, ids[k], values[k]), slot);
    }
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
    cg_code *code = compile(jit, m, CG_MODE_FAST);
    REQUIRE(code);
    int32_t (*fn)(cg_error *, void *) = (int32_t(*)(cg_error *, void *))cg_code_fn(code, "consts");
    REQUIRE(fn);
    _Alignas(16) unsigned char out[8][16];
    memset(out, 0xee, sizeof(out));
    cg_error err = cg_error_none();
    CHECK_EQ_INT(fn(&err, out), 0);
    size_t widths[] = {1, 4, 8, 8, 8, 4, 16, 16};
    for (int k = 0; k < 8; k++)
        CHECK(memcmp(out[k], values[k], widths[k]) == 0);
    CHECK(sto_str_eq((sto_str *)out[7], &s_long));
    free_code(code);
    destroy_jit(jit);
}

/* --- failures ------------------------------------------------------------- */

static void test_compile_errors(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);

    /* A function left without a terminator is caught before compiling. */
    cg_module *m = NULL;
    REQUIRE(ok(cg_module_create(jit, "broken", &m)));
    cg_fn f;
    REQUIRE(ok(cg_fn_begin(&f, m, "broken", NULL, 0)));
    sto_status st = cg_fn_end(&f);
    CHECK(st != STO_OK);
    sto_status_free(st);
    cg_code *code = NULL;
    st = cg_jit_compile(jit, m, CG_MODE_FAST, &code);
    CHECK(st != STO_OK);
    if (st) CHECK(strstr(st->message, "invalid IR") != NULL);
    sto_status_free(st);
    CHECK(code == NULL);

    /* A call to a symbol nobody bound fails to link, and leaves nothing. */
    REQUIRE(ok(cg_module_create(jit, "unbound", &m)));
    LLVMValueRef ghost = LLVMAddFunction(cg_module_llvm(m), "rackdb_test_no_such_helper",
                                         cg_fn_type(m, cg_void(m), NULL, 0));
    REQUIRE(ok(cg_fn_begin(&f, m, "caller", NULL, 0)));
    cg_call(&f, ghost, NULL, 0);
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
    st = cg_jit_compile(jit, m, CG_MODE_FAST, &code);
    CHECK(st != STO_OK);
    if (st) {
        CHECK_STREQ(st->sqlstate, "XX000");
        CHECK(strstr(st->message, "rackdb_test_no_such_helper") != NULL);
    }
    sto_status_free(st);

    cg_jit_counters n;
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.live_code, 0);
    CHECK_EQ_INT(n.compiled, 0);

    /* Two functions of one name in a module. */
    REQUIRE(ok(cg_module_create(jit, "twice", &m)));
    REQUIRE(ok(cg_fn_begin(&f, m, "f", NULL, 0)));
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
    cg_fn g;
    st = cg_fn_begin(&g, m, "f", NULL, 0);
    CHECK(st != STO_OK);
    sto_status_free(st);
    cg_module_destroy(m);
    destroy_jit(jit);
}

/* --- many queries --------------------------------------------------------- */

/* int32_t scale(cg_error *, int64_t x, int64_t *out): *out = x * factor. */
typedef int32_t (*scale_fn)(cg_error *, int64_t, int64_t *);

static cg_code *compile_scale(cg_jit *jit, int64_t factor, cg_mode mode)
{
    cg_module *m = NULL;
    if (!ok(cg_module_create(jit, "scale", &m))) return NULL;
    LLVMTypeRef params[] = {cg_i64(m), cg_ptr(m)};
    cg_fn f;
    if (!ok(cg_fn_begin(&f, m, "scale", params, 2))) {
        cg_module_destroy(m);
        return NULL;
    }
    LLVMValueRef r = cg_mul(&f, cg_fn_param(&f, 0), cg_const_i64(m, factor), STO_TYPE_BIGINT);
    LLVMBuildStore(f.b, r, cg_fn_param(&f, 1));
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
    return compile(jit, m, mode);
}

static void test_compile_free_cycles(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    cg_jit_counters before, n;
    cg_jit_get_counters(jit, &before);
    for (int i = 0; i < 200; i++) {
        cg_code *code = compile_scale(jit, i + 1, i % 4 == 3 ? CG_MODE_OPT : CG_MODE_FAST);
        REQUIRE(code);
        scale_fn fn = (scale_fn)cg_code_fn(code, "scale");
        REQUIRE(fn);
        int64_t out = 0;
        cg_error err = cg_error_none();
        CHECK_EQ_INT(fn(&err, 1000, &out), 0);
        CHECK_EQ_INT(out, 1000 * (i + 1));
        cg_jit_get_counters(jit, &n);
        CHECK_EQ_INT(n.live_code, 1);
        free_code(code);
        cg_jit_get_counters(jit, &n);
        CHECK_EQ_INT(n.live_code, 0);
        CHECK(n.idle_target_machines <= 2);
        CHECK_EQ_INT(n.runtime_symbols, before.runtime_symbols);
    }
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.compiled, 200);

    /* Several live at once, freed in another order. */
    cg_code *codes[10];
    for (int i = 0; i < 10; i++)
        codes[i] = compile_scale(jit, i, CG_MODE_FAST);
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.live_code, 10);
    for (int i = 0; i < 10; i += 2)
        free_code(codes[i]);
    for (int i = 1; i < 10; i += 2) {
        scale_fn fn = codes[i] ? (scale_fn)cg_code_fn(codes[i], "scale") : NULL;
        int64_t out = 0;
        cg_error err = cg_error_none();
        CHECK(fn && fn(&err, 3, &out) == 0 && out == 3 * i);
        free_code(codes[i]);
    }
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.live_code, 0);
    destroy_jit(jit);
}

typedef struct worker {
    cg_jit *jit;
    int id;
    int failures;
} worker;

static void *compile_worker(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 15; i++) {
        int64_t factor = w->id * 1000 + i;
        cg_code *code = compile_scale(w->jit, factor, i % 3 == 0 ? CG_MODE_OPT : CG_MODE_FAST);
        if (!code) {
            w->failures++;
            continue;
        }
        scale_fn fn = (scale_fn)cg_code_fn(code, "scale");
        int64_t out = 0;
        cg_error err = cg_error_none();
        if (!fn || fn(&err, 7, &out) != 0 || out != 7 * factor) w->failures++;
        sto_status st = cg_code_free(code);
        if (st) w->failures++;
        sto_status_free(st);
    }
    return NULL;
}

static void test_concurrent_compiles(void)
{
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    enum { THREADS = 4 };
    pthread_t threads[THREADS];
    worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){jit, i + 1, 0};
        CHECK(pthread_create(&threads[i], NULL, compile_worker, &workers[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK_EQ_INT(workers[i].failures, 0);
    }
    cg_jit_counters n;
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.live_code, 0);
    CHECK_EQ_INT(n.compiled, THREADS * 15);
    destroy_jit(jit);
}

static void test_modes(void)
{
    CHECK_STREQ(cg_mode_name(CG_MODE_FAST), "fast");
    CHECK_STREQ(cg_mode_name(CG_MODE_OPT), "opt");
    cg_jit *jit = new_jit();
    REQUIRE(jit);
    CHECK_STREQ(cg_jit_cpu(jit), "x86-64-v3");
    destroy_jit(jit);
    cg_jit_options native = {.native_cpu = true};
    REQUIRE(ok(cg_jit_create(&native, &jit)));
    cg_code *code = compile_sum(jit, CG_MODE_OPT);
    REQUIRE(code);
    int64_t col[4] = {1, 2, 3, 4}, out = 0;
    cg_error err = cg_error_none();
    CHECK_EQ_INT(((sum_fn)cg_code_fn(code, "sum"))(&err, col, 0, 4, &out), 0);
    CHECK_EQ_INT(out, 10);
    free_code(code);
    destroy_jit(jit);
}

int main(void)
{
    RUN(test_sum);
    RUN(test_sum_overflow);
    RUN(test_helper_call);
    RUN(test_division);
    RUN(test_decimal);
    RUN(test_types);
    RUN(test_compile_errors);
    RUN(test_compile_free_cycles);
    RUN(test_concurrent_compiles);
    RUN(test_modes);
    return TEST_REPORT();
}
