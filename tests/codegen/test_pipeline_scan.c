/*
 * test_pipeline_scan.c — the scan loop of a compiled pipeline
 * (codegen/pipeline.h) over hand-made chunks, in both compile modes.
 *
 * A pipeline whose first step is a filter runs in batches: the filter over
 * a batch of rows into a selection vector, then the later steps and the
 * sink for the selected rows (unless the planner expects nearly every row
 * to pass: then in one loop; every test runs both ways). These tests compare what such pipelines
 * append to a row sink with what C works out from the same rows, over
 * calls that start and end inside batches, cover exactly one batch, one
 * row, no row, a chunk of one row and the last partial batch of a chunk,
 * over chunks and over a row buffer (a ROWS source);
 * with NULLs in the filtered column, filters that pass every row and no
 * row, two filters in a row, the EXPLAIN ANALYZE counters, the NULL bytes
 * of the rows appended, and errors raised by the filter and by the sink
 * (SQLSTATE and the row reported).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/jit.h"
#include "codegen/pipeline.h"
#include "codegen/rt.h"
#include "sql/plan.h"
#include "storage/chunk.h"
#include "storage/column.h"
#include "test.h"

static const cg_mode modes[] = {CG_MODE_FAST, CG_MODE_OPT};
static const sto_type T_BOOL = {STO_TYPE_BOOLEAN, 0, 0, 0};
static const sto_type T_INT = {STO_TYPE_INTEGER, 0, 0, 0};
static const sto_type T_BIG = {STO_TYPE_BIGINT, 0, 0, 0};
static const sto_type T_STR = {STO_TYPE_VARCHAR, 0, 0, 0};

/* The table: chunk sizes chosen around the batch size (1024 rows). Column
 * a BIGINT NOT NULL holds the row's number in the table; b INTEGER is NULL
 * where a % 7 == 3, else a % 100; s VARCHAR is NULL where a % 5 == 0, else
 * a short (inline) string for odd a and a long one for even a. */
enum { NCHUNKS = 4, MAX_SEL = 8192 };
/* As a "chunk" number: chunk 0's rows copied into a row buffer (the row
 * format of codegen/pipeline.h), read by a ROWS source. */
enum { ROWS_INPUT = NCHUNKS, ROW_BYTES = 64 };
static const uint32_t chunk_rows[NCHUNKS] = {3000, 1, 0, 1025};

static cg_jit *jit;
static sto_schema *schema;
static sto_chunk *chunks[NCHUNKS];
static int64_t first_a[NCHUNKS + 1]; /* a of each chunk's first row */
static uint8_t *rows_input;

static bool b_null(int64_t a)
{
    return a % 7 == 3;
}

static bool s_null(int64_t a)
{
    return a % 5 == 0;
}

static void s_text(int64_t a, char *buf, size_t size)
{
    snprintf(buf, size, a % 2 ? "s%lld" : "a long string, number %lld", (long long)a);
}

static void make_table(void)
{
    const char *names[] = {"a", "b", "s"};
    const sto_type types[] = {T_BIG, T_INT, T_STR};
    const bool not_null[] = {true, false, false};
    sto_status st = sto_schema_new(3, names, types, not_null, &schema);
    REQUIRE(st == STO_OK);
    int64_t a = 0;
    for (int c = 0; c < NCHUNKS; c++) {
        REQUIRE(sto_chunk_new(schema, chunk_rows[c] ? chunk_rows[c] : 1, &chunks[c]) == STO_OK);
        first_a[c] = a;
        for (uint32_t r = 0; r < chunk_rows[c]; r++, a++) {
            char text[64];
            s_text(a, text, sizeof(text));
            sto_value v[3] = {{false, {.i64 = a}},
                              {b_null(a), {.i64 = a % 100}},
                              {s_null(a), {.str = sto_str_make(text, (uint32_t)strlen(text))}}};
            REQUIRE(sto_chunk_append_row(chunks[c], v) == STO_OK);
        }
        sto_chunk_seal(chunks[c]);
    }
    /* ROWS_INPUT: chunk 0 as rows (strings still point into the chunk) */
    rows_input = calloc(chunk_rows[0], ROW_BYTES);
    REQUIRE(rows_input);
    for (uint32_t r = 0; r < chunk_rows[0]; r++) {
        uint8_t *row = rows_input + (size_t)r * ROW_BYTES;
        for (uint32_t i = 0; i < 3; i++) {
            sto_value v = sto_chunk_get(chunks[0], i, r);
            row[3 * CG_ROW_SLOT + i] = v.is_null;
            if (i == 1) {
                int32_t x = (int32_t)v.v.i64;
                memcpy(row + CG_ROW_SLOT, &x, 4);
            } else {
                memcpy(row + i * CG_ROW_SLOT, &v.v, i == 2 ? sizeof(sto_str) : 8);
            }
        }
    }
}

/* --- the row sink --------------------------------------------------------- */

enum { SINK_COLS = 3 };

typedef struct worker {
    cg_rt_strings strings;
    uint64_t counters[4];
    uint32_t nrows;
    uint8_t rows[MAX_SEL][64]; /* cg_row_bytes(3) == 64 */
} worker;

_Static_assert(sizeof(((worker *)0)->rows[0]) == 64, "row size of three columns");

static int32_t append(cg_error *err, void *sink_state, uint8_t **row)
{
    worker *w = sink_state;
    if (w->nrows >= MAX_SEL) {
        err->kind = CG_ERR_RUNTIME;
        err->detail = sto_error(STO_INTERNAL_ERROR, "test sink full");
        return CG_ERR_RUNTIME;
    }
    *row = w->rows[w->nrows++];
    return CG_ERR_NONE;
}

/* --- expressions ------------------------------------------------------------ */

typedef struct env {
    sql_arena *arena;
    sql_plan_ctx *ctx;
    sql_colid a, b, s;
} env;

static void env_init(env *v)
{
    v->arena = sql_arena_create();
    v->ctx = sql_plan_ctx_new(v->arena);
    v->a = sql_plan_new_col(v->ctx, T_BIG, false, "a");
    v->b = sql_plan_new_col(v->ctx, T_INT, true, "b");
    v->s = sql_plan_new_col(v->ctx, T_STR, true, "s");
}

static sql_bexpr *col(env *v, sql_colid id)
{
    return sql_bexpr_column(v->ctx, id, 0);
}

static sql_bexpr *k(env *v, int64_t x, sto_type t)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_CONST, t, false, 0);
    e->value.v.i64 = x;
    return e;
}

static sql_bexpr *kstr(env *v, const char *text)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_CONST, T_STR, false, 0);
    size_t n = strlen(text);
    e->value.v.str = sto_str_make(sql_arena_strndup(v->arena, text, n), (uint32_t)n);
    return e;
}

static sql_bexpr *op(env *v, sql_op o, sto_type t, sql_bexpr *x, sql_bexpr *y)
{
    return sql_bexpr_op(v->ctx, o, t, x, y, 0);
}

static sql_bexpr *cmp(env *v, sql_op o, sql_bexpr *x, sql_bexpr *y)
{
    return op(v, o, T_BOOL, x, y);
}

/* CASE WHEN c THEN r ELSE el END */
static sql_bexpr *case1(env *v, sto_type t, sql_bexpr *c, sql_bexpr *r, sql_bexpr *el)
{
    sql_bexpr *e = sql_bexpr_new(v->ctx, SQL_BEXPR_CASE, t, false, 0);
    e->case_.conds.count = e->case_.results.count = 1;
    e->case_.conds.items = sql_arena_alloc(v->arena, sizeof(sql_bexpr *));
    e->case_.results.items = sql_arena_alloc(v->arena, sizeof(sql_bexpr *));
    e->case_.conds.items[0] = c;
    e->case_.results.items[0] = r;
    e->case_.else_result = el;
    return e;
}

/* --- one pipeline ----------------------------------------------------------- */

typedef struct scan {
    int nfilters;
    double pass_share; /* of the first filter: below 0.9 it runs batched */
    const sql_bexpr *filter[2];
    const sql_bexpr *sink[SINK_COLS]; /* values appended per row */
} scan;

typedef struct outcome {
    int32_t rc;
    char sqlstate[6];
    int64_t err_row;
} outcome;

/* Compiles s in mode and runs it over rows [lo, hi) of chunk c, appending
 * to w (whose rows and counters are kept across calls). */
static bool run_scan(env *v, const scan *s, cg_mode mode, int c, uint32_t lo, uint32_t hi,
                     worker *w, outcome *o)
{
    static const uint32_t col_index[] = {0, 1, 2};
    static const bool not_null[] = {true, false, false};
    sql_colid ids[] = {v->a, v->b, v->s};
    cg_step steps[2];
    memset(steps, 0, sizeof(steps));
    for (int i = 0; i < s->nfilters; i++) {
        steps[i].kind = CG_STEP_FILTER;
        steps[i].pred = s->filter[i];
        steps[i].pass_share = i == 0 ? s->pass_share : 0;
    }
    cg_pipeline_desc d;
    memset(&d, 0, sizeof(d));
    d.name = "scan";
    d.ctx = v->ctx;
    d.source.kind = c == ROWS_INPUT ? CG_SOURCE_ROWS : CG_SOURCE_CHUNKS;
    d.source.ncols = 3;
    d.source.ids = ids;
    d.source.chunks = chunks;
    d.source.col_index = col_index;
    d.source.not_null = not_null;
    d.source.rows_cell = &rows_input;
    d.source.row_bytes = ROW_BYTES;
    d.nsteps = (uint32_t)s->nfilters;
    d.steps = steps;
    d.sink.kind = CG_SINK_ROWS;
    d.sink.state_offset = 0; /* append() gets the worker */
    d.sink.ncols = SINK_COLS;
    d.sink.exprs = s->sink;
    d.sink.append = append;
    d.strings_offset = (uint32_t)offsetof(worker, strings);
    d.count_rows = true;
    d.counters_offset = (uint32_t)offsetof(worker, counters);

    cg_pipeline_code code;
    sto_status st = cg_pipeline_compile(jit, &d, mode, &code);
    if (st) {
        fprintf(stderr, "compile: %s\n", st->message);
        sto_status_free(st);
        return false;
    }
    cg_error err = cg_error_none();
    uint64_t base = c == ROWS_INPUT ? 0 : (uint64_t)c << 32;
    o->rc = code.fn(&err, NULL, w, base | lo, base | hi);
    o->err_row = err.row;
    memset(o->sqlstate, 0, sizeof(o->sqlstate));
    sto_status es = cg_error_status(&err);
    if (es) memcpy(o->sqlstate, es->sqlstate, 5);
    sto_status_free(es);
    cg_pipeline_code_free(&code);
    return true;
}

/* The sink of these tests appends a, b and s. */
static int64_t row_a(const worker *w, uint32_t i)
{
    int64_t x;
    memcpy(&x, w->rows[i], 8);
    return x;
}

static bool row_b_null(const worker *w, uint32_t i)
{
    return w->rows[i][cg_row_null_offset(SINK_COLS, 1)] != 0;
}

static int32_t row_b(const worker *w, uint32_t i)
{
    int32_t x;
    memcpy(&x, w->rows[i] + CG_ROW_SLOT, 4);
    return x;
}

/* Whether the row's s holds what row a of the table has. */
static bool row_s_ok(const worker *w, uint32_t i, int64_t a)
{
    bool null = w->rows[i][cg_row_null_offset(SINK_COLS, 2)] != 0;
    if (null || s_null(a)) return null == s_null(a);
    sto_str got;
    memcpy(&got, w->rows[i] + 2 * CG_ROW_SLOT, sizeof(got));
    char text[64];
    s_text(a, text, sizeof(text));
    return got.len == strlen(text) && memcmp(sto_str_data(&got), text, got.len) == 0;
}

/* Which rows a C version of a filter keeps. */
typedef bool (*keep_fn)(int64_t a);

/* Runs s over [lo, hi) of chunk c in both modes and checks that exactly
 * the rows keep() accepts came out, in order, with their b values, and
 * that the counters saw them. */
static void expect_rows_(env *v, const scan *s, keep_fn keep, int c, uint32_t lo, uint32_t hi,
                         int line)
{
    for (int m = 0; m < 2; m++) {
        worker *w = calloc(1, sizeof(*w));
        REQUIRE(w);
        cg_rt_strings_init(&w->strings);
        outcome o;
        bool ran = run_scan(v, s, modes[m], c, lo, hi, w, &o);
        CHECK(ran);
        if (ran && o.rc != 0) {
            fprintf(stderr, "line %d (%s): error %s at row %lld\n", line, cg_mode_name(modes[m]),
                    o.sqlstate, (long long)o.err_row);
            test_failures_++;
        }
        uint32_t want = 0;
        bool same = ran && o.rc == 0;
        for (uint32_t r = lo; same && r < hi; r++) {
            int64_t a = first_a[c] + r;
            if (!keep(a)) continue;
            same = want < w->nrows && row_a(w, want) == a && row_b_null(w, want) == b_null(a) &&
                   (b_null(a) || row_b(w, want) == a % 100) && row_s_ok(w, want, a);
            want++;
        }
        if (same)
            same = want == w->nrows && w->counters[s->nfilters] == want &&
                   (s->nfilters != 1 || w->counters[0] == want);
        if (!same) {
            fprintf(stderr, "line %d (%s): chunk %d rows [%u, %u): %u rows out, %u wanted\n", line,
                    cg_mode_name(modes[m]), c, lo, hi, w->nrows, want);
            test_failures_++;
        }
        cg_rt_strings_free(&w->strings);
        free(w);
    }
}
#define expect_rows(v, s, keep, c, lo, hi) expect_rows_(v, s, keep, c, lo, hi, __LINE__)

/* Every call shape over the table: a whole chunk, ranges that start and
 * end inside batches, exactly one batch, one row, none, the one-row chunk,
 * the empty chunk, and the last chunk whose second batch has one row. */
static void expect_everywhere_(env *v, const scan *s, keep_fn keep, int line)
{
    static const struct {
        int c;
        uint32_t lo, hi;
    } calls[] = {{0, 0, 3000},
                 {0, 5, 2050},
                 {0, 1024, 2048},
                 {0, 1023, 1025},
                 {0, 1024, 1025},
                 {0, 2999, 3000},
                 {0, 7, 7},
                 {1, 0, 1},
                 {2, 0, 0},
                 {3, 0, 1025},
                 {3, 1000, 1025},
                 {3, 1024, 1025},
                 {ROWS_INPUT, 0, 3000},
                 {ROWS_INPUT, 5, 2050},
                 {ROWS_INPUT, 1023, 1025}};
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        expect_rows_(v, s, keep, calls[i].c, calls[i].lo, calls[i].hi, line);
}
#define expect_everywhere(v, s, keep) expect_everywhere_(v, s, keep, __LINE__)

static bool keep_sparse(int64_t a)
{
    return a % 97 == 5;
}
static bool keep_all(int64_t a)
{
    (void)a;
    return true;
}
static bool keep_none(int64_t a)
{
    (void)a;
    return false;
}
static bool keep_b_over_50(int64_t a)
{
    return !b_null(a) && a % 100 > 50;
}
static bool keep_b_null(int64_t a)
{
    return b_null(a);
}
static bool keep_s7(int64_t a)
{
    return a == 7;
}
static bool keep_s2998(int64_t a)
{
    return a == 2998;
}
static bool keep_two(int64_t a)
{
    return a % 2 == 0 && !b_null(a) && a % 100 < 10;
}

/* The first filter's pass_share in the scans below: 0 (batches) or 0.95
 * (one loop); the results must not depend on it. */
static double first_share;

static void sink_ab(env *v, scan *s)
{
    s->sink[0] = col(v, v->a);
    s->sink[1] = col(v, v->b);
    s->sink[2] = col(v, v->s);
}

static void test_filters(void)
{
    env v;
    env_init(&v);
    scan s = {1, first_share, {NULL, NULL}, {NULL, NULL, NULL}};
    sink_ab(&v, &s);

    s.filter[0] = cmp(&v, SQL_OP_EQ, op(&v, SQL_OP_MOD, T_BIG, col(&v, v.a), k(&v, 97, T_BIG)),
                      k(&v, 5, T_BIG));
    expect_everywhere(&v, &s, keep_sparse);
    s.filter[0] = cmp(&v, SQL_OP_GE, col(&v, v.a), k(&v, 0, T_BIG));
    expect_everywhere(&v, &s, keep_all);
    s.filter[0] = cmp(&v, SQL_OP_LT, col(&v, v.a), k(&v, 0, T_BIG));
    expect_everywhere(&v, &s, keep_none);
    /* NULL > 50 is NULL: the row is dropped */
    s.filter[0] = cmp(&v, SQL_OP_GT, col(&v, v.b), k(&v, 50, T_INT));
    expect_everywhere(&v, &s, keep_b_over_50);
    sql_bexpr *isnull = sql_bexpr_new(v.ctx, SQL_BEXPR_IS_NULL, T_BOOL, false, 0);
    isnull->is_null.arg = col(&v, v.b);
    isnull->is_null.negated = false;
    s.filter[0] = isnull;
    expect_everywhere(&v, &s, keep_b_null);

    /* strings: an inline one and a long one compared with constants */
    s.filter[0] = cmp(&v, SQL_OP_EQ, col(&v, v.s), kstr(&v, "s7"));
    expect_everywhere(&v, &s, keep_s7);
    s.filter[0] = cmp(&v, SQL_OP_EQ, col(&v, v.s), kstr(&v, "a long string, number 2998"));
    expect_everywhere(&v, &s, keep_s2998);

    /* a second filter runs on the rows the first selected */
    s.nfilters = 2;
    s.filter[0] = cmp(&v, SQL_OP_EQ, op(&v, SQL_OP_MOD, T_BIG, col(&v, v.a), k(&v, 2, T_BIG)),
                      k(&v, 0, T_BIG));
    s.filter[1] = cmp(&v, SQL_OP_LT, col(&v, v.b), k(&v, 10, T_INT));
    expect_everywhere(&v, &s, keep_two);
    sql_arena_destroy(v.arena);
}

/* The NULL bytes of a row: those of NOT NULL values are zeros that go out
 * together when their offsets are consecutive (a, a, a: bytes 48-50), the
 * others one by one (a, b, a: b's byte between two zeros), and no store
 * reaches past the last column's byte into the row's padding (byte 51). */
static void test_null_bytes(void)
{
    env v;
    env_init(&v);
    scan s = {0, 0, {NULL, NULL}, {NULL, NULL, NULL}};
    for (int shape = 0; shape < 2; shape++) {
        s.sink[0] = col(&v, v.a);
        s.sink[1] = col(&v, shape ? v.b : v.a);
        s.sink[2] = col(&v, v.a);
        for (int m = 0; m < 2; m++) {
            worker *w = calloc(1, sizeof(*w));
            REQUIRE(w);
            memset(w->rows, 0xAA, sizeof(w->rows));
            cg_rt_strings_init(&w->strings);
            outcome o;
            CHECK(run_scan(&v, &s, modes[m], 0, 0, chunk_rows[0], w, &o));
            CHECK_EQ_INT(o.rc, 0);
            CHECK_EQ_INT(w->nrows, chunk_rows[0]);
            uint32_t bad = 0;
            for (uint32_t r = 0; r < w->nrows; r++) {
                const uint8_t *row = w->rows[r];
                bool b_is_null = shape && b_null(first_a[0] + r);
                if (row_a(w, r) != first_a[0] + r || row[cg_row_null_offset(SINK_COLS, 0)] != 0 ||
                    row[cg_row_null_offset(SINK_COLS, 1)] != b_is_null ||
                    row[cg_row_null_offset(SINK_COLS, 2)] != 0 ||
                    row[cg_row_null_offset(SINK_COLS, 2) + 1] != 0xAA)
                    bad++;
            }
            if (bad)
                fprintf(stderr, "null bytes, shape %d (%s): %u bad rows\n", shape,
                        cg_mode_name(modes[m]), bad);
            CHECK_EQ_INT(bad, 0);
            cg_rt_strings_free(&w->strings);
            free(w);
        }
    }
    sql_arena_destroy(v.arena);
}

/* Errors keep their SQLSTATE and the row (within the chunk) they happened
 * at, whether the filter or a later step raises them. */
static void expect_error_(env *v, const scan *s, const char *sqlstate, int64_t row, int line)
{
    for (int m = 0; m < 2; m++) {
        worker *w = calloc(1, sizeof(*w));
        REQUIRE(w);
        cg_rt_strings_init(&w->strings);
        outcome o;
        bool ran = run_scan(v, s, modes[m], 0, 0, 3000, w, &o);
        if (!ran || o.rc == 0 || strcmp(o.sqlstate, sqlstate) != 0 || o.err_row != row) {
            fprintf(stderr, "line %d (%s): rc %d %s at row %lld, want %s at %lld\n", line,
                    cg_mode_name(modes[m]), ran ? o.rc : -1, o.sqlstate, (long long)o.err_row,
                    sqlstate, (long long)row);
            test_failures_++;
        }
        cg_rt_strings_free(&w->strings);
        free(w);
    }
}
#define expect_error(v, s, state, row) expect_error_(v, s, state, row, __LINE__)

/* The scan over rows 0..2999 succeeds in both modes with nrows rows, the
 * first and the last with these values of a. */
static void expect_no_error(env *v, const scan *s, int64_t nrows, int64_t first, int64_t last)
{
    worker *w = calloc(1, sizeof(*w));
    REQUIRE(w);
    cg_rt_strings_init(&w->strings);
    for (int m = 0; m < 2; m++) {
        w->nrows = 0;
        outcome o;
        CHECK(run_scan(v, s, modes[m], 0, 0, 3000, w, &o));
        CHECK_EQ_INT(o.rc, 0);
        CHECK_EQ_INT(w->nrows, nrows);
        CHECK_EQ_INT(row_a(w, 0), first);
        CHECK_EQ_INT(row_a(w, nrows - 1), last);
    }
    cg_rt_strings_free(&w->strings);
    free(w);
}

static void test_errors(void)
{
    env v;
    env_init(&v);
    scan s = {1, first_share, {NULL, NULL}, {NULL, NULL, NULL}};
    sink_ab(&v, &s);
    /* in the filter: 100 / (a - 2100) fails at row 2100, in the third batch */
    s.filter[0] = cmp(&v, SQL_OP_GT,
                      op(&v, SQL_OP_DIV, T_BIG, k(&v, 100, T_BIG),
                         op(&v, SQL_OP_SUB, T_BIG, col(&v, v.a), k(&v, 2100, T_BIG))),
                      k(&v, 0, T_BIG));
    expect_error(&v, &s, "22012", 2100);
    /* in the sink, for a selected row: a > 2500 selects 2501..2999, and
     * 1000 / (a - 2600) fails at 2600 */
    s.filter[0] = cmp(&v, SQL_OP_GT, col(&v, v.a), k(&v, 2500, T_BIG));
    s.sink[0] = op(&v, SQL_OP_DIV, T_BIG, k(&v, 1000, T_BIG),
                   op(&v, SQL_OP_SUB, T_BIG, col(&v, v.a), k(&v, 2600, T_BIG)));
    expect_error(&v, &s, "22012", 2600);
    /* ... and not for a row the filter dropped: a > 2600 */
    s.filter[0] = cmp(&v, SQL_OP_GT, col(&v, v.a), k(&v, 2600, T_BIG));
    expect_no_error(&v, &s, 399, 1000 / (2601 - 2600), 1000 / (2999 - 2600));
    sql_arena_destroy(v.arena);
}

/* Overflow (22003) stops the query at the first row whose value does not
 * fit, wherever the checked operation is: the filter, the values the sink
 * takes, a CASE arm that is taken; an arm that is not taken never fails.
 * a is the row index, and a + (INT64_MAX - n) overflows from row n + 1 on. */
static sql_bexpr *plus_near_max(env *v, int64_t n)
{
    return op(v, SQL_OP_ADD, T_BIG, col(v, v->a), k(v, INT64_MAX - n, T_BIG));
}

static void test_overflow(void)
{
    env v;
    env_init(&v);
    scan s = {1, first_share, {NULL, NULL}, {NULL, NULL, NULL}};
    sink_ab(&v, &s);
    /* in the filter, in the first batch */
    s.filter[0] = cmp(&v, SQL_OP_GT, plus_near_max(&v, 807), k(&v, 0, T_BIG));
    expect_error(&v, &s, "22003", 808);
    /* in a value the sink takes, for a row the filter selected */
    s.filter[0] = cmp(&v, SQL_OP_GT, col(&v, v.a), k(&v, 2500, T_BIG));
    s.sink[0] = plus_near_max(&v, 2600);
    expect_error(&v, &s, "22003", 2601);
    /* in a CASE arm, from the first row that takes it */
    s.sink[0] = case1(&v, T_BIG, cmp(&v, SQL_OP_GT, col(&v, v.a), k(&v, 2700, T_BIG)),
                      plus_near_max(&v, 2600), k(&v, 0, T_BIG));
    expect_error(&v, &s, "22003", 2701);
    /* not in an arm no row takes: rows 2501..2999 pass, all with 0 */
    s.sink[0] = case1(&v, T_BIG, cmp(&v, SQL_OP_LT, col(&v, v.a), k(&v, 2500, T_BIG)),
                      plus_near_max(&v, 2600), k(&v, 0, T_BIG));
    expect_no_error(&v, &s, 499, 0, 0);
    sql_arena_destroy(v.arena);
}

int main(void)
{
    sto_status st = cg_jit_create(NULL, &jit);
    if (st) {
        fprintf(stderr, "cg_jit_create: %s\n", st->message);
        sto_status_free(st);
        return 1;
    }
    RUN(make_table);
    RUN(test_filters);
    RUN(test_null_bytes);
    RUN(test_errors);
    RUN(test_overflow);
    first_share = 0.95;
    RUN(test_filters);
    RUN(test_null_bytes);
    RUN(test_errors);
    RUN(test_overflow);
    for (int c = 0; c < NCHUNKS; c++)
        sto_chunk_free(chunks[c]);
    sto_schema_free(schema);
    free(rows_input);
    sto_status_free(cg_jit_destroy(jit));
    return TEST_REPORT();
}
