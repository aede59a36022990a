/*
 * test_compile_pool.c — the compile pool's order of work (compile_pool.h):
 * pool threads take queued OPT tasks before FAST ones, each first come,
 * first served, and leave held tasks alone until released, in the mode
 * given at release; a task nobody started is compiled by the caller that
 * finishes it, or withdrawn; a caller waiting for a task a pool thread
 * compiles fills the wait with FAST tasks only, never an OPT one. Pausing
 * the pool fixes which thread may compile what, so each check holds
 * whatever the timing. Every compiled pipeline is called and must append
 * its one row.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/compile_pool.h"
#include "test.h"

static bool ok(sto_status st)
{
    if (st) fprintf(stderr, "unexpected error: %s\n", st->message);
    sto_status_free(st);
    return st == STO_OK;
}

/* The row sink the pipelines append to: counts rows into a buffer. */
typedef struct sink {
    uint64_t rows;
    uint8_t row[16];
} sink;

/* A worker state with the sink not at its start, as in the engine. */
typedef struct wstate {
    uint64_t pad;
    sink s;
} wstate;

static int32_t append(cg_error *err, void *sink_state, uint8_t **row)
{
    (void)err;
    sink *s = sink_state;
    s->rows++;
    *row = s->row;
    return 0;
}

/* One VALUES row of no columns into a row sink: the smallest pipeline. */
static const sql_bexpr_list no_exprs;

static cg_pipeline_desc one_row(void)
{
    cg_pipeline_desc d;
    memset(&d, 0, sizeof(d));
    d.name = "pipeline";
    d.source.kind = CG_SOURCE_VALUES;
    d.source.nrows = 1;
    d.source.rows = &no_exprs;
    d.sink.kind = CG_SINK_ROWS;
    d.sink.state_offset = offsetof(wstate, s);
    d.sink.append = append;
    return d;
}

/* Runs the code: it must append exactly one row. */
static bool runs(const cg_pipeline_code *code)
{
    wstate state;
    memset(&state, 0, sizeof(state));
    cg_error err = cg_error_none();
    return code->fn && code->fn(&err, NULL, &state, 0, 1) == 0 && state.s.rows == 1;
}

/* Waits (at most 30 s) until t is done. */
static bool wait_done(cg_compile_task *t)
{
    for (int i = 0; i < 30000; i++) {
        if (cg_compile_task_done(t)) return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return false;
}

static bool wait_started(cg_compile_task *t)
{
    for (int i = 0; i < 30000; i++) {
        if (cg_compile_task_started(t)) return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return false;
}

/* Finishes t: its code must be of `mode` and run. */
static void finish_ok(cg_compile_task *t, cg_mode mode)
{
    cg_pipeline_code code;
    CHECK(ok(cg_compile_task_finish(t, &code)));
    CHECK_EQ_INT((int)code.mode, (int)mode);
    CHECK(code.code && cg_code_stats(code.code)->mode == mode);
    CHECK(runs(&code));
    cg_pipeline_code_free(&code);
}

static cg_jit *jit;

static cg_compile_pool *new_pool(void)
{
    cg_compile_pool *pool = NULL;
    CHECK(ok(cg_compile_pool_create(jit, 1, &pool)));
    return pool;
}

static cg_compile_pool_counters counters(cg_compile_pool *pool)
{
    cg_compile_pool_counters c;
    cg_compile_pool_get_counters(pool, &c);
    return c;
}

/* A, H (held), B queued while paused: the pool thread compiles A and B and
 * skips H, which is ahead of B, until H is released, in the mode the
 * release names. */
static void test_held_tasks_wait_for_release(void)
{
    cg_compile_pool *pool = new_pool();
    REQUIRE(pool);
    cg_pipeline_desc d = one_row();
    cg_compile_task *a = NULL, *h = NULL, *b = NULL;
    cg_compile_pool_pause(pool, true);
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_FAST, &a)));
    REQUIRE(ok(cg_compile_submit_held(pool, &d, CG_MODE_FAST, &h)));
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_FAST, &b)));
    CHECK(!cg_compile_task_started(a));
    cg_compile_pool_pause(pool, false);
    CHECK(wait_done(a));
    CHECK(wait_done(b));
    /* first come, first served would have started H before B */
    CHECK(!cg_compile_task_started(h));
    cg_compile_task_release(h, CG_MODE_OPT);
    CHECK_EQ_INT((int)cg_compile_task_mode(h), (int)CG_MODE_OPT);
    CHECK(wait_done(h));
    finish_ok(a, CG_MODE_FAST);
    finish_ok(b, CG_MODE_FAST);
    finish_ok(h, CG_MODE_OPT);
    cg_compile_pool_counters c = counters(pool);
    CHECK_EQ_INT((int)c.by_pool, 3);
    CHECK_EQ_INT((int)c.by_caller, 0);
    cg_compile_pool_destroy(pool);
}

/* F1 (FAST), O (OPT), F2 (FAST) queued while paused: the one pool thread
 * starts O first, then F1 and F2 in their order. */
static void test_pool_starts_opt_first(void)
{
    cg_compile_pool *pool = new_pool();
    REQUIRE(pool);
    cg_pipeline_desc d = one_row();
    cg_compile_task *f1 = NULL, *o = NULL, *f2 = NULL;
    cg_compile_pool_pause(pool, true);
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_FAST, &f1)));
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_OPT, &o)));
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_FAST, &f2)));
    CHECK(cg_compile_task_start_seq(o) == 0);
    cg_compile_pool_pause(pool, false);
    CHECK(wait_done(f1));
    CHECK(wait_done(o));
    CHECK(wait_done(f2));
    CHECK(cg_compile_task_start_seq(o) == 1);
    CHECK(cg_compile_task_start_seq(f1) == 2);
    CHECK(cg_compile_task_start_seq(f2) == 3);
    finish_ok(f1, CG_MODE_FAST);
    finish_ok(o, CG_MODE_OPT);
    finish_ok(f2, CG_MODE_FAST);
    cg_compile_pool_counters c = counters(pool);
    CHECK_EQ_INT((int)c.by_pool, 3);
    cg_compile_pool_destroy(pool);
}

/* A held task nobody released is compiled by the caller finishing it, in
 * the mode it was queued with; so is a queued task no thread took. */
static void test_caller_compiles_unstarted(void)
{
    cg_compile_pool *pool = new_pool();
    REQUIRE(pool);
    cg_pipeline_desc d = one_row();
    cg_compile_task *a = NULL, *h = NULL;
    cg_compile_pool_pause(pool, true);
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_FAST, &a)));
    REQUIRE(ok(cg_compile_submit_held(pool, &d, CG_MODE_OPT, &h)));
    finish_ok(h, CG_MODE_OPT);
    finish_ok(a, CG_MODE_FAST);
    cg_compile_pool_counters c = counters(pool);
    CHECK_EQ_INT((int)c.by_caller, 2);
    CHECK_EQ_INT((int)c.by_pool, 0);
    cg_compile_pool_destroy(pool);
}

/* Withdrawing takes back a task nobody started, and only such a task. */
static void test_withdraw(void)
{
    cg_compile_pool *pool = new_pool();
    REQUIRE(pool);
    cg_pipeline_desc d = one_row();
    cg_compile_task *a = NULL, *b = NULL, *h = NULL;
    cg_compile_pool_pause(pool, true);
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_OPT, &a)));
    REQUIRE(ok(cg_compile_submit_held(pool, &d, CG_MODE_OPT, &h)));
    CHECK(cg_compile_task_withdraw(a));
    CHECK(cg_compile_task_withdraw(h));
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_FAST, &b)));
    cg_compile_pool_pause(pool, false);
    CHECK(wait_done(b));
    CHECK(!cg_compile_task_withdraw(b));
    finish_ok(b, CG_MODE_FAST);
    cg_compile_pool_counters c = counters(pool);
    CHECK_EQ_INT((int)c.cancelled, 2);
    CHECK_EQ_INT((int)c.by_pool, 1);
    cg_compile_pool_destroy(pool);
}

/* While the pool thread compiles T, a caller finishing T may compile the
 * queued FAST task F, but never the queued OPT task O ahead of it: an OPT
 * compile it cannot leave would keep it from T's code long after T is
 * done. (Whether F gets compiled depends on how soon T is done.) */
static void test_waiting_caller_helps_with_fast_only(void)
{
    cg_compile_pool *pool = new_pool();
    REQUIRE(pool);
    cg_pipeline_desc d = one_row();
    cg_compile_task *t = NULL, *o = NULL, *f = NULL;
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_OPT, &t)));
    CHECK(wait_started(t));
    cg_compile_pool_pause(pool, true);
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_OPT, &o)));
    REQUIRE(ok(cg_compile_submit(pool, &d, CG_MODE_FAST, &f)));
    finish_ok(t, CG_MODE_OPT);
    CHECK(!cg_compile_task_started(o));
    cg_compile_pool_counters c = counters(pool);
    CHECK_EQ_INT((int)c.by_caller, cg_compile_task_started(f) ? 1 : 0);
    finish_ok(o, CG_MODE_OPT);
    finish_ok(f, CG_MODE_FAST);
    cg_compile_pool_destroy(pool);
}

int main(void)
{
    unsetenv("RACKDB_JIT_OPT_FIRST"); /* the order under test */
    if (!ok(cg_jit_create(NULL, &jit))) return 1;
    RUN(test_held_tasks_wait_for_release);
    RUN(test_pool_starts_opt_first);
    RUN(test_caller_compiles_unstarted);
    RUN(test_withdraw);
    RUN(test_waiting_caller_helps_with_fast_only);
    CHECK(ok(cg_jit_destroy(jit)));
    return TEST_REPORT();
}
