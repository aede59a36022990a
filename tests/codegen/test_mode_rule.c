/*
 * test_mode_rule.c — the compile mode rule (codegen/opt.h): OPT exactly when
 * the run time its code saves on the pipeline's rows exceeds what it costs
 * to compile beyond FAST.
 */
#include <math.h>

#include "codegen/opt.h"
#include "test.h"

/* TPC-H Q1's aggregation at SF 1 on two workers: eight aggregates over
 * checked DECIMAL arithmetic, about 25 ns of CPU saved per row, ~370 IR
 * instructions. */
static const cg_mode_work ARITHMETIC = {6e6, 2, 25.0, 370};

static void test_arithmetic_over_many_rows_is_opt(void)
{
    CHECK(cg_mode_choose(&ARITHMETIC) == CG_MODE_OPT);
    /* 3 M rows per worker x 25 ns = 75 ms saved against ~14 ms of compile */
    CHECK(cg_mode_opt_saving_us(&ARITHMETIC) > 70000 && cg_mode_opt_saving_us(&ARITHMETIC) < 80000);
}

static void test_few_rows_are_fast(void)
{
    cg_mode_work w = ARITHMETIC;
    w.rows = 60000; /* SF 0.01 */
    CHECK(cg_mode_choose(&w) == CG_MODE_FAST);
    w.rows = 25;
    CHECK(cg_mode_choose(&w) == CG_MODE_FAST);
}

/* Rows that wait on memory (a probe of a large table, then a few copied
 * columns) save little per row: a large module over 6 M rows stays FAST,
 * as do many mid-sized pipelines of a join-heavy query. */
static void test_memory_bound_rows_are_fast(void)
{
    cg_mode_work probe = {6e6, 2, 3.3, 420}; /* Q5's lineitem pipeline */
    CHECK(cg_mode_choose(&probe) == CG_MODE_FAST);
    cg_mode_work dims = {1.5e6, 2, 3.0, 250}; /* a scan of orders into a join */
    CHECK(cg_mode_choose(&dims) == CG_MODE_FAST);
    /* the same rows with arithmetic to do pay for OPT */
    probe.row_saving_ns = 8;
    CHECK(cg_mode_choose(&probe) == CG_MODE_OPT);
}

/* A larger module costs more to compile: the same rows and saving turn
 * FAST when the module grows. */
static void test_size_counts(void)
{
    CHECK(cg_mode_opt_extra_us(0) == CG_OPT_EXTRA_FIXED_US);
    CHECK(cg_mode_opt_extra_us(100) ==
          CG_OPT_EXTRA_FIXED_US + 100 * CG_OPT_EXTRA_US_PER_INSTRUCTION);
    CHECK(cg_mode_opt_extra_us(-5) == CG_OPT_EXTRA_FIXED_US);
    cg_mode_work w = {4e6, 2, 5.0, 200};
    CHECK(cg_mode_choose(&w) == CG_MODE_OPT);
    w.ir_instructions = 2000;
    CHECK(cg_mode_choose(&w) == CG_MODE_FAST);
}

/* The rows are shared by the workers, the compile is not: more workers
 * make each one's share of the saving smaller. */
static void test_threads(void)
{
    cg_mode_work w = {6e6, 1, 3.0, 300};
    CHECK(cg_mode_choose(&w) == CG_MODE_OPT);
    w.threads = 16;
    CHECK(cg_mode_choose(&w) == CG_MODE_FAST);
    w.threads = 0; /* counts as one */
    CHECK(cg_mode_choose(&w) == CG_MODE_OPT);
    CHECK(cg_mode_opt_saving_us(&w) == 6e6 * 3.0 / 1e3);
}

/* At the break-even point FAST wins (it compiles sooner); one row more
 * tips it. Nonsense inputs are FAST. */
static void test_edges(void)
{
    double extra = cg_mode_opt_extra_us(100);
    cg_mode_work w = {extra, 1, 1000.0, 100}; /* saves exactly `extra` us */
    CHECK(cg_mode_opt_saving_us(&w) == extra);
    CHECK(cg_mode_choose(&w) == CG_MODE_FAST);
    w.rows += 1;
    CHECK(cg_mode_choose(&w) == CG_MODE_OPT);
    cg_mode_work zero = {0, 2, 25.0, 100};
    CHECK(cg_mode_choose(&zero) == CG_MODE_FAST);
    cg_mode_work negative = {-1e9, 2, 25.0, 100};
    CHECK(cg_mode_choose(&negative) == CG_MODE_FAST);
    cg_mode_work nan_rows = {NAN, 2, 25.0, 100};
    CHECK(cg_mode_choose(&nan_rows) == CG_MODE_FAST);
    cg_mode_work no_saving = {1e12, 2, 0.0, 100};
    CHECK(cg_mode_choose(&no_saving) == CG_MODE_FAST);
    cg_mode_work loss = {1e12, 2, -1.0, 100};
    CHECK(cg_mode_choose(&loss) == CG_MODE_FAST);
}

/* More rows never turn OPT back into FAST. */
static void test_monotonic_in_rows(void)
{
    cg_mode_work w = {1000, 2, 4.0, 300};
    cg_mode last = cg_mode_choose(&w);
    int flips = 0;
    for (int i = 0; i < 40; i++) {
        w.rows *= 1.6;
        cg_mode m = cg_mode_choose(&w);
        CHECK(m >= last);
        flips += m != last;
        last = m;
    }
    CHECK_EQ_INT(flips, 1);
    CHECK(last == CG_MODE_OPT);
}

int main(void)
{
    RUN(test_arithmetic_over_many_rows_is_opt);
    RUN(test_few_rows_are_fast);
    RUN(test_memory_bound_rows_are_fast);
    RUN(test_size_counts);
    RUN(test_threads);
    RUN(test_edges);
    RUN(test_monotonic_in_rows);
    return TEST_REPORT();
}
