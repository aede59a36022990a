/*
 * fuzz_bind.c — libFuzzer target for the SQL front end: tokenizer, parser
 * and binder together.
 *
 * Every statement of the input is parsed; each query it holds (SELECT,
 * EXPLAIN [ANALYZE] SELECT, INSERT ... SELECT, CREATE TABLE AS, CREATE
 * VIEW, COPY (query) TO) is bound against the eight TPC-H tables with statistics of
 * scale factor 0.01 (tests/engine/opt_catalog.h's SF 1 facts divided by 100;
 * no data). CREATE VIEW and DROP VIEW change a small per-input view store,
 * so views that read views, drop themselves or refer to each other are
 * bound too. A bound plan is printed (every node and expression visited);
 * an error is rendered with sql_format_error (every position the binder can
 * produce goes through the caret code). Inputs that start with byte 0x01
 * use their second byte to make the arena fail after that many
 * allocations, which drives the binder's out-of-memory paths.
 *
 * Crashes, leaks (ASan), undefined behaviour (UBSan), hangs and the aborts
 * below (an out-of-memory error without an injected failure, a position
 * outside the statement, a success without a plan) are what the fuzzer
 * looks for. tests/sql/test_fuzz_bind.sh builds and runs it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "engine/opt_catalog.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The schema and statistics are built once (the fuzzer calls the target
 * millions of times); views live for one input. */
static opt_catalog tables;
static bool tables_ready;

#define FUZZ_MAX_VIEWS 4

typedef struct fuzz_catalog {
    int nviews;
    sql_view_info views[FUZZ_MAX_VIEWS];
} fuzz_catalog;

static bool lookup_table(void *ctx, const char *name, sql_table_info *out)
{
    (void)ctx;
    return ocat_lookup_table(&tables, name, out);
}

static bool lookup_view(void *ctx, const char *name, sql_view_info *out)
{
    fuzz_catalog *c = ctx;
    for (int i = 0; i < c->nviews; i++) {
        if (strcmp(c->views[i].name, name) == 0) {
            *out = c->views[i];
            return true;
        }
    }
    return false;
}

/* SF 1 → SF 0.01: rows and distinct counts scaled down, small domains
 * (nation, region, flags) kept. */
static bool tables_init(void)
{
    if (!ocat_init(&tables)) return false;
    for (size_t t = 0; t < OCAT_NTABLES; t++) {
        uint64_t rows = ocat_facts[t].rows >= 100 ? ocat_facts[t].rows / 100 : ocat_facts[t].rows;
        const sto_schema *s = ocat_schema(&tables, ocat_facts[t].table);
        for (uint32_t k = 0; k < s->ncols; k++) {
            sto_column_stats *st = &tables.stats[t][k];
            st->rows = rows;
            if (st->distinct > rows) st->distinct = rows;
        }
    }
    return true;
}

/* Aborts (a finding) unless st is a well-formed error for text. */
static void check_error(const fuzz_input *in, sto_status st)
{
    fuzz_check_error(in, st);
    if (strlen(st->sqlstate) != 5) abort();
    if (st->position < 0 || st->position > (int)in->size + 1) abort();
}

/* Binds q (may be NULL) and prints the plan; errors are checked and freed. */
static void bind_one(const fuzz_input *in, const sql_catalog *cat, const sql_query *q)
{
    if (!q) return;
    sql_plan *plan = NULL;
    sto_status st = sql_bind_query(in->arena, cat, q, &plan);
    if (st) {
        if (plan) abort();
        check_error(in, st);
        sto_status_free(st);
        return;
    }
    if (!plan || !plan->root) abort();
    free(sql_plan_to_string(plan));
}

static void add_view(fuzz_catalog *c, const sql_stmt *s)
{
    if (c->nviews == FUZZ_MAX_VIEWS) return;
    sql_view_info *v = &c->views[c->nviews++];
    v->name = s->create_view.name;
    v->sql = s->create_view.query_text;
    v->ncols = (uint32_t)s->create_view.columns.count;
    const char **names = NULL;
    if (v->ncols) names = calloc(v->ncols, sizeof(*names));
    for (uint32_t k = 0; names && k < v->ncols; k++)
        names[k] = s->create_view.columns.items[k]->name;
    if (v->ncols && !names) v->ncols = 0;
    v->column_names = names;
}

static void drop_view(fuzz_catalog *c, const char *name)
{
    for (int i = 0; i < c->nviews; i++) {
        if (strcmp(c->views[i].name, name) != 0) continue;
        free((void *)c->views[i].column_names);
        c->views[i] = c->views[--c->nviews];
        return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!tables_ready) {
        if (!tables_init()) abort(); /* RACKDB_SHARED must point at shared/ */
        tables_ready = true;
    }
    fuzz_input in;
    if (!fuzz_input_open(&in, data, size)) return 0;
    fuzz_catalog views = {0};
    sql_catalog cat = {&views, lookup_table, lookup_view};
    sql_stmt_list *stmts = NULL;
    sto_status st = sql_parse(in.arena, in.text, &stmts);
    if (st) {
        check_error(&in, st);
        sto_status_free(st);
        stmts = NULL;
    }
    for (int i = 0; stmts && i < stmts->count; i++) {
        const sql_stmt *s = stmts->items[i];
        switch (s->kind) {
        case SQL_STMT_SELECT:
            bind_one(&in, &cat, s->query);
            break;
        case SQL_STMT_EXPLAIN:
            if (s->explain.stmt && s->explain.stmt->kind == SQL_STMT_SELECT)
                bind_one(&in, &cat, s->explain.stmt->query);
            break;
        case SQL_STMT_INSERT:
            bind_one(&in, &cat, s->insert.query);
            break;
        case SQL_STMT_CREATE_TABLE_AS:
            bind_one(&in, &cat, s->create_table.query);
            break;
        case SQL_STMT_COPY_TO:
            bind_one(&in, &cat, s->copy.query);
            break;
        case SQL_STMT_CREATE_VIEW:
            bind_one(&in, &cat, s->create_view.query);
            if (!lookup_view(&views, s->create_view.name, &(sql_view_info){0})) add_view(&views, s);
            break;
        case SQL_STMT_DROP_VIEW:
            drop_view(&views, s->drop.name);
            break;
        default:
            break;
        }
    }
    while (views.nviews)
        drop_view(&views, views.views[0].name);
    fuzz_input_close(&in);
    return 0;
}
