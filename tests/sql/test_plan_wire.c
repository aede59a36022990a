/*
 * test_plan_wire.c — sql/plan_wire.c on a hand-built plan that holds every
 * operator kind (EXCHANGE of each kind included), every expression kind,
 * constants of every type (NULL, long and short strings, a double that
 * needs 17 digits), parameters, a subplan shared by two expressions, join
 * choices and estimates: the decoded plan prints like the original,
 * re-encodes to the same bytes and shares what the original shared. Then
 * the table lookup (found, missing, failing, schema mismatch) and damaged
 * input: every prefix, a flipped byte at every position, bad tags and
 * references, each refused with XX001/08P01 and no crash (the fuzz target
 * tests/sql/fuzz_plan_wire.c explores further).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_wire_sample.h"
#include "sql/plan_wire.h"
#include "test.h"

/* The operator of `kind` nearest the root, looking left first. */
static const sql_lop *find(const sql_lop *op, sql_lop_kind kind)
{
    if (!op || op->kind == kind) return op;
    const sql_lop *l = find(op->left, kind);
    return l ? l : find(op->right, kind);
}

static void test_round_trip(void)
{
    sql_plan *plan = build();
    REQUIRE(plan);
    uint8_t *bytes = NULL, *again = NULL;
    size_t len = 0, len2 = 0;
    sql_plan *back = NULL;
    REQUIRE(sql_plan_encode(plan, &bytes, &len) == STO_OK);
    CHECK(memcmp(bytes, "RKPL", 4) == 0);
    REQUIRE(sql_plan_decode(bytes, len, NULL, NULL, &back) == STO_OK);
    char *p1 = sql_plan_to_string(plan), *p2 = sql_plan_to_string(back);
    CHECK_STREQ(p1, p2);
    CHECK(strstr(p2, "EXCHANGE 1 SHUFFLE ON a#1") != NULL);
    CHECK(strstr(p2, "EXCHANGE 2 BROADCAST") != NULL);
    CHECK(strstr(p2, "EXCHANGE 3 GATHER") != NULL);
    CHECK(strstr(p2, "0.30000000000000004::DOUBLE") != NULL);
    CHECK(strstr(p2, "'a string longer than twelve bytes'") != NULL);
    CHECK(strstr(p2, "-9223372036854775808") != NULL);
    CHECK(sql_plan_encode(back, &again, &len2) == STO_OK);
    CHECK(len == len2 && memcmp(bytes, again, len) == 0);

    /* what printing does not show */
    const sql_lop *j = find(back->root, SQL_LOP_JOIN);
    REQUIRE(j);
    CHECK_EQ_INT(j->phys.algorithm, 2);
    CHECK(j->phys.build_left);
    CHECK(j->est_rows == 99.25);
    const sql_lop *g = find(back->root, SQL_LOP_GET);
    REQUIRE(g);
    CHECK(g->get.table == NULL && g->get.rows == 1234 && g->est_rows == 1234.5);
    CHECK_STREQ(g->get.alias, "t_alias");
    CHECK_EQ_INT((int)back->ctx->nparams, 2);
    CHECK_EQ_INT(back->ctx->param_types[1].id, STO_TYPE_VARCHAR);
    CHECK_EQ_INT((int)back->ctx->param_types[1].length, 25);
    /* the shared subplan stays shared */
    const sql_bexpr *and = find(back->root, SQL_LOP_FILTER)->filter.pred;
    const sql_bexpr *any = and->op.args[1];
    const sql_bexpr *exists = and->op.args[0]->op.args[1]->op.args[1];
    CHECK_EQ_INT(any->kind, SQL_BEXPR_SUBQUERY);
    CHECK_EQ_INT(exists->kind, SQL_BEXPR_SUBQUERY);
    CHECK(any->subquery.plan == exists->subquery.plan);
    CHECK_EQ_INT(any->pos, 10);

    free(p1);
    free(p2);
    free(bytes);
    free(again);
    sql_plan_decoded_free(back);
    sql_arena_destroy(arena);
}

/* --- the table lookup --------------------------------------------------------------- */

typedef struct tables {
    sto_table *lineitem;
    int calls;
    bool fail;
} tables;

static sto_status lookup(void *arg, const char *name, sto_table **table, uint64_t *rows,
                         const sto_column_stats **stats)
{
    tables *t = arg;
    t->calls++;
    if (t->fail) return sto_error(STO_UNDEFINED_TABLE, "no table %s here", name);
    *table = strcmp(name, "lineitem") == 0 ? t->lineitem : NULL;
    *rows = *table ? 77 : 0;
    *stats = *table ? (*table)->stats : NULL;
    return STO_OK;
}

static sto_table *table_of(sto_type t0, sto_type t1)
{
    const char *names[] = {"x", "y"};
    sto_type types[] = {t0, t1};
    sto_schema *s = NULL;
    sto_table *t = NULL;
    if (sto_schema_new(2, names, types, NULL, &s) == STO_OK) sto_table_new(s, &t);
    sto_schema_free(s);
    return t;
}

static void test_lookup(void)
{
    sql_plan *plan = build();
    REQUIRE(plan);
    uint8_t *bytes = NULL;
    size_t len = 0;
    REQUIRE(sql_plan_encode(plan, &bytes, &len) == STO_OK);
    sql_arena_destroy(arena);

    tables t = {table_of(sto_type_make(STO_TYPE_INTEGER), sto_type_decimal(15, 2)), 0, false};
    REQUIRE(t.lineitem);
    sql_plan *back = NULL;
    REQUIRE(sql_plan_decode(bytes, len, lookup, &t, &back) == STO_OK);
    CHECK_EQ_INT(t.calls, 3); /* inner_t once although read twice, lineitem, orders */
    const sql_lop *g = find(back->root, SQL_LOP_GET);
    CHECK(g->get.table == t.lineitem && g->get.rows == 77 && g->get.stats == t.lineitem->stats);
    sql_plan_decoded_free(back);

    t.fail = true;
    sto_status st = sql_plan_decode(bytes, len, lookup, &t, &back);
    CHECK(st && strcmp(st->sqlstate, "42P01") == 0);
    sto_status_free(st);
    t.fail = false;

    sto_table_free(t.lineitem);
    t.lineitem = table_of(sto_type_make(STO_TYPE_DATE), sto_type_decimal(15, 2));
    st = sql_plan_decode(bytes, len, lookup, &t, &back);
    CHECK(st && strcmp(st->sqlstate, "XX001") == 0 && strstr(st->message, "lineitem.x"));
    sto_status_free(st);
    sto_table_free(t.lineitem);
    free(bytes);
}

/* --- damaged input --------------------------------------------------------------- */

static int refused(const uint8_t *b, size_t len)
{
    sql_plan *p = NULL;
    sto_status st = sql_plan_decode(b, len, NULL, NULL, &p);
    if (!st) {
        sql_plan_decoded_free(p);
        return 0;
    }
    int ok = strcmp(st->sqlstate, "XX001") == 0 || strcmp(st->sqlstate, "08P01") == 0;
    sto_status_free(st);
    return ok ? 1 : 0;
}

static void test_damage(void)
{
    sql_plan *plan = build();
    REQUIRE(plan);
    uint8_t *bytes = NULL;
    size_t len = 0;
    REQUIRE(sql_plan_encode(plan, &bytes, &len) == STO_OK);
    sql_arena_destroy(arena);
    int n = 0;
    for (size_t k = 0; k < len; k++)
        n += refused(bytes, k);
    CHECK_EQ_INT(n, (int)len);
    /* Flipping bytes: either refused or a plan that decodes and prints (a
     * flipped estimate or name is still a plan); never a crash. */
    uint8_t *copy = malloc(len);
    REQUIRE(copy);
    int accepted = 0;
    for (size_t k = 0; k < len; k++) {
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(copy, bytes, len);
            copy[k] ^= (uint8_t)(1u << bit);
            sql_plan *p = NULL;
            sto_status st = sql_plan_decode(copy, len, NULL, NULL, &p);
            if (!st) {
                char *s = sql_plan_to_string(p);
                CHECK(s != NULL);
                free(s);
                sql_plan_decoded_free(p);
                accepted++;
            }
            sto_status_free(st);
        }
    }
    CHECK(accepted < (int)len * 3);
    /* a trailing byte */
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, bytes, len);
    longer[len] = 0;
    CHECK_EQ_INT(refused(longer, len + 1), 1);
    free(longer);
    /* a self-referencing node: tag 2 (reference) to node 0 before any exists */
    static const uint8_t selfref[] = {'R', 'K', 'P', 'L', 1, 0, 0, 0, 0, 0, 0, 0,
                                      0,   0,   0,   0,   2, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ_INT(refused(selfref, sizeof(selfref)), 1);
    /* deep nesting: FILTER over FILTER over ... is cut off, not recursed */
    size_t deep = 16 + 30 * 5000;
    uint8_t *d = calloc(deep, 1);
    memcpy(d, "RKPL\1\0\0\0", 8);
    size_t at = 16;
    for (int i = 0; i < 5000; i++) {
        d[at] = 1;                   /* TAG_NEW */
        d[at + 1] = SQL_LOP_FILTER;  /* kind, nout 0, est 0, algo 0, build 0 */
        at += 1 + 1 + 4 + 8 + 4 + 1; /* then the left child follows */
    }
    CHECK_EQ_INT(refused(d, deep), 1);
    free(d);
    free(copy);
    free(bytes);
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_lookup);
    RUN(test_damage);
    return TEST_REPORT();
}
