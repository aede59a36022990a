/*
 * bench_jit.c — what the JIT costs and what its code is worth.
 *
 *   compile  microseconds to compile a small function and a ~200-instruction
 *            one in FAST and OPT mode (median of many compiles, with the
 *            verify / passes / codegen / link split)
 *   run      GB/s of the checked int64 column sum (codegen/ir.h's cg_add in a
 *            cg_loop) in both modes, against the same loop in C built with
 *            the project's flags (-O2), with and without overflow checks
 *   memory   resident set size before and after thousands of compile/free
 *            cycles
 *
 * Usage: bench_jit [rows]   (default 16M rows = 128 MB of int64)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/ir.h"
#include "codegen/jit.h"

#define COMPILES 40

static void die(sto_status st, const char *what)
{
    if (!st) return;
    fprintf(stderr, "bench_jit: %s: %s\n", what, st->message);
    exit(1);
}

/* --- the functions compiled ---------------------------------------------- */

typedef int32_t (*sum_fn)(cg_error *, const int64_t *, int64_t, int64_t, int64_t *);

/* sum(err, col, begin, end, *out): the checked column sum. */
static cg_module *build_sum(cg_jit *jit)
{
    cg_module *m;
    die(cg_module_create(jit, "sum", &m), "module");
    cg_fn f;
    LLVMTypeRef params[] = {cg_ptr(m), cg_i64(m), cg_i64(m), cg_ptr(m)};
    die(cg_fn_begin(&f, m, "sum", params, 4), "function");
    cg_var acc = cg_var_new(&f, cg_i64(m), cg_const_i64(m, 0), "acc");
    cg_loop loop;
    cg_loop_begin(&f, &loop, cg_fn_param(&f, 1), cg_fn_param(&f, 2));
    LLVMValueRef x = cg_load_elem(&f, cg_i64(m), cg_fn_param(&f, 0), loop.index);
    cg_var_set(&f, acc, cg_add(&f, cg_var_get(&f, acc), x, STO_TYPE_BIGINT));
    cg_loop_end(&f, &loop);
    LLVMBuildStore(f.b, cg_var_get(&f, acc), cg_fn_param(&f, 3));
    cg_fn_return_ok(&f);
    die(cg_fn_end(&f), "function");
    return m;
}

/* scale(err, x, *out): *out = x * 3, checked: the smallest useful function. */
static cg_module *build_small(cg_jit *jit)
{
    cg_module *m;
    die(cg_module_create(jit, "small", &m), "module");
    cg_fn f;
    LLVMTypeRef params[] = {cg_i64(m), cg_ptr(m)};
    die(cg_fn_begin(&f, m, "scale", params, 2), "function");
    LLVMValueRef r = cg_mul(&f, cg_fn_param(&f, 0), cg_const_i64(m, 3), STO_TYPE_BIGINT);
    LLVMBuildStore(f.b, r, cg_fn_param(&f, 1));
    cg_fn_return_ok(&f);
    die(cg_fn_end(&f), "function");
    return m;
}

/* A pipeline-like function of about 200 instructions: a loop over three
 * DECIMAL(15,2) columns computing a chain of checked expressions, summed into
 * an i128 aggregate (TPC-H Q1's shape, repeated). */
static cg_module *build_medium(cg_jit *jit)
{
    cg_module *m;
    die(cg_module_create(jit, "medium", &m), "module");
    cg_fn f;
    LLVMTypeRef params[] = {cg_ptr(m), cg_ptr(m), cg_ptr(m), cg_i64(m), cg_i64(m), cg_ptr(m)};
    die(cg_fn_begin(&f, m, "medium", params, 6), "function");
    cg_var acc = cg_var_new(&f, cg_i128(m), cg_const_i128(m, 0), "acc");
    cg_loop loop;
    cg_loop_begin(&f, &loop, cg_fn_param(&f, 3), cg_fn_param(&f, 4));
    LLVMValueRef price = cg_load_elem(&f, cg_i64(m), cg_fn_param(&f, 0), loop.index);
    LLVMValueRef disc = cg_load_elem(&f, cg_i64(m), cg_fn_param(&f, 1), loop.index);
    LLVMValueRef tax = cg_load_elem(&f, cg_i64(m), cg_fn_param(&f, 2), loop.index);
    LLVMValueRef one = cg_const_i64(m, 100);
    LLVMValueRef v = price;
    for (int i = 0; i < 2; i++) {
        LLVMValueRef d = cg_sub(&f, one, disc, STO_TYPE_DECIMAL);
        LLVMValueRef t = cg_add(&f, one, tax, STO_TYPE_DECIMAL);
        LLVMValueRef p = cg_decimal_mul(&f, v, 2, d, 2, 2);
        v = cg_decimal_mul(&f, p, 2, t, 2, 2);
    }
    LLVMValueRef sum =
        cg_add(&f, cg_var_get(&f, acc), cg_widen(&f, v, cg_i128(m)), STO_TYPE_DECIMAL);
    cg_var_set(&f, acc, sum);
    cg_loop_end(&f, &loop);
    LLVMBuildStore(f.b, cg_var_get(&f, acc), cg_fn_param(&f, 5));
    cg_fn_return_ok(&f);
    die(cg_fn_end(&f), "function");
    return m;
}

/* --- compile times --------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void bench_compile(cg_jit *jit, const char *name, cg_module *(*build)(cg_jit *),
                          cg_mode mode)
{
    int64_t total[COMPILES], passes[COMPILES], codegen[COMPILES], link[COMPILES];
    int64_t build_us[COMPILES];
    unsigned instructions = 0;
    size_t bytes = 0;
    for (int i = 0; i < COMPILES; i++) {
        int64_t t0 = cg_clock_us();
        cg_module *m = build(jit);
        build_us[i] = cg_clock_us() - t0;
        cg_code *code;
        die(cg_jit_compile(jit, m, mode, &code), "compile");
        const cg_compile_stats *s = cg_code_stats(code);
        total[i] = s->total_us;
        passes[i] = s->optimize_us;
        codegen[i] = s->codegen_us;
        link[i] = s->link_us;
        instructions = s->ir_instructions;
        bytes = s->object_bytes;
        die(cg_code_free(code), "free");
    }
    qsort(total, COMPILES, sizeof(int64_t), cmp_i64);
    qsort(passes, COMPILES, sizeof(int64_t), cmp_i64);
    qsort(codegen, COMPILES, sizeof(int64_t), cmp_i64);
    qsort(link, COMPILES, sizeof(int64_t), cmp_i64);
    qsort(build_us, COMPILES, sizeof(int64_t), cmp_i64);
    int h = COMPILES / 2;
    printf("compile %-7s %-4s %4u IR insts %6zu B obj: total %6lld us (build IR %4lld, "
           "passes %5lld, codegen %5lld, link %4lld) [min %lld, max %lld]\n",
           name, cg_mode_name(mode), instructions, bytes, (long long)total[h],
           (long long)build_us[h], (long long)passes[h], (long long)codegen[h], (long long)link[h],
           (long long)total[0], (long long)total[COMPILES - 1]);
}

/* --- run speed ------------------------------------------------------------- */

__attribute__((noinline)) static int c_sum_checked(const int64_t *col, int64_t begin, int64_t end,
                                                   int64_t *out)
{
    int64_t acc = 0;
    for (int64_t i = begin; i < end; i++)
        if (__builtin_add_overflow(acc, col[i], &acc)) return (int)i + 1;
    *out = acc;
    return 0;
}

__attribute__((noinline)) static int c_sum_plain(const int64_t *col, int64_t begin, int64_t end,
                                                 int64_t *out)
{
    int64_t acc = 0;
    for (int64_t i = begin; i < end; i++)
        acc += col[i];
    *out = acc;
    return 0;
}

static double best_seconds(int reps, int (*c)(const int64_t *, int64_t, int64_t, int64_t *),
                           sum_fn jit, const int64_t *col, int64_t rows, int64_t *result)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        int64_t t0 = cg_clock_us();
        cg_error err = cg_error_none();
        int rc = c ? c(col, 0, rows, result) : jit(&err, col, 0, rows, result);
        int64_t t1 = cg_clock_us();
        if (rc != 0) {
            fprintf(stderr, "bench_jit: sum failed\n");
            exit(1);
        }
        double s = (double)(t1 - t0) / 1e6;
        if (s < best) best = s;
    }
    return best;
}

static void bench_run(cg_jit *jit, int64_t rows)
{
    int64_t *col = malloc((size_t)rows * sizeof(int64_t));
    if (!col) {
        fprintf(stderr, "bench_jit: out of memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < rows; i++)
        col[i] = (i * 2654435761u) % 1000000 - 500000;
    double gb = (double)rows * sizeof(int64_t) / 1e9;
    int64_t expect = 0, got = 0;
    double c_plain = best_seconds(5, c_sum_plain, NULL, col, rows, &expect);
    double c_checked = best_seconds(5, c_sum_checked, NULL, col, rows, &got);
    printf("run  C -O2 unchecked loop   %7.2f GB/s  %5.2f ns/row\n", gb / c_plain,
           c_plain * 1e9 / rows);
    printf("run  C -O2 checked loop     %7.2f GB/s  %5.2f ns/row\n", gb / c_checked,
           c_checked * 1e9 / rows);
    for (int k = 0; k < 2; k++) {
        cg_mode mode = k ? CG_MODE_OPT : CG_MODE_FAST;
        cg_code *code;
        die(cg_jit_compile(jit, build_sum(jit), mode, &code), "compile");
        sum_fn fn = (sum_fn)cg_code_fn(code, "sum");
        double s = best_seconds(5, NULL, fn, col, rows, &got);
        printf("run  JIT %-4s checked loop   %7.2f GB/s  %5.2f ns/row  (%.2fx the checked C "
               "loop's time)%s\n",
               cg_mode_name(mode), gb / s, s * 1e9 / rows, s / c_checked,
               got == expect ? "" : "  WRONG RESULT");
        die(cg_code_free(code), "free");
    }
    free(col);
}

/* --- memory ---------------------------------------------------------------- */

static long rss_kb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void bench_memory(cg_jit *jit)
{
    for (int round = 0; round < 3; round++) {
        long before = rss_kb();
        int64_t t0 = cg_clock_us();
        for (int i = 0; i < 2000; i++) {
            cg_code *code;
            die(cg_jit_compile(jit, build_small(jit), CG_MODE_FAST, &code), "compile");
            die(cg_code_free(code), "free");
        }
        printf("memory  2000 compile/free cycles: RSS %ld kB -> %ld kB (%.0f us per cycle)\n",
               before, rss_kb(), (double)(cg_clock_us() - t0) / 2000);
    }
}

int main(int argc, char **argv)
{
    int64_t rows = argc > 1 ? atoll(argv[1]) : 16 * 1024 * 1024;
    cg_jit *jit;
    die(cg_jit_create(NULL, &jit), "jit");
    printf("target %s (%s)\n", cg_jit_cpu(jit), cg_jit_triple(jit));
    /* The first compile initializes LLVM's lazily built tables: not timed. */
    cg_code *warm;
    die(cg_jit_compile(jit, build_medium(jit), CG_MODE_OPT, &warm), "warm-up");
    die(cg_code_free(warm), "free");

    bench_compile(jit, "small", build_small, CG_MODE_FAST);
    bench_compile(jit, "small", build_small, CG_MODE_OPT);
    bench_compile(jit, "medium", build_medium, CG_MODE_FAST);
    bench_compile(jit, "medium", build_medium, CG_MODE_OPT);
    bench_compile(jit, "sum", build_sum, CG_MODE_FAST);
    bench_compile(jit, "sum", build_sum, CG_MODE_OPT);
    bench_run(jit, rows);
    bench_memory(jit);
    die(cg_jit_destroy(jit), "destroy");
    return 0;
}
