/*
 * test_plan_wire_tpch.c — sql/plan_wire.c on real plans: every TPC-H query
 * (SF 0.01, made in memory by CALL dbgen) is parsed, bound and optimized
 * the way a SELECT is, encoded, decoded against the catalog's tables, and
 *   - the decoded plan prints exactly like the original, and encoding it
 *     again gives the same bytes;
 *   - the decoded plan, cut into pipelines and run, gives the official
 *     answer ($RACKDB_SHARED/tpch/answers/sf0.01, numbers within 0.01).
 * Also: every proper prefix of an encoding and a wrong magic/version are
 * refused with an error (08P01 / XX001), not a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_direct.h"
#include "sql/plan_wire.h"
#include "test.h"
#include "tpch_check.h"

static rackdb *db;
static rackdb_session *sess;

static sto_status lookup(void *arg, const char *name, sto_table **table, uint64_t *rows,
                         const sto_column_stats **stats)
{
    eng_catalog *c = arg;
    *table = eng_catalog_table(c, name);
    *rows = *table ? sto_table_rows(*table) : 0;
    *stats = *table ? (*table)->stats : NULL;
    return STO_OK;
}

/* Runs a plan the way a SELECT does; *out has its rows. */
static sto_status run_plan(const sql_plan *plan, rackdb_result **out)
{
    exec_direct_hooks h = {.threads = 2};
    return exec_direct_plan(sess, plan, &h, out);
}

/* Damaged copies of a real encoding: every proper prefix, a wrong magic and
 * a wrong version must fail cleanly. */
static void check_damage(const uint8_t *bytes, size_t len)
{
    sql_plan *p = NULL;
    int refused = 0;
    size_t step = len / 200 + 1;
    for (size_t n = 0; n < len; n += step) {
        sto_status st = sql_plan_decode(bytes, n, NULL, NULL, &p);
        if (st && (!strcmp(st->sqlstate, "XX001") || !strcmp(st->sqlstate, "08P01")))
            refused++;
        else
            fprintf(stderr, "prefix of %zu bytes: %s\n", n, st ? st->sqlstate : "accepted");
        sto_status_free(st);
        sql_plan_decoded_free(st ? NULL : p);
    }
    CHECK_EQ_INT(refused, (int)((len + step - 1) / step));
    uint8_t *copy = malloc(len);
    REQUIRE(copy);
    memcpy(copy, bytes, len);
    copy[0] = 'X';
    sto_status st = sql_plan_decode(copy, len, NULL, NULL, &p);
    CHECK(st && !strcmp(st->sqlstate, "08P01"));
    sto_status_free(st);
    memcpy(copy, bytes, len);
    copy[4] = 99;
    st = sql_plan_decode(copy, len, NULL, NULL, &p);
    CHECK(st && !strcmp(st->sqlstate, "08P01") && strstr(st->message, "version 99"));
    sto_status_free(st);
    free(copy);
}

/* One SELECT: plan, round trip, compare printouts, run the decoded plan. */
static int check_select(int q, const char *text, const sql_stmt *stmt, char *answer)
{
    rackdb_session *s = sess;
    eng_catalog *cat = s->db->catalog;
    sql_arena *arena = sql_arena_create();
    sql_plan *plan = NULL, *back = NULL;
    uint8_t *bytes = NULL, *again = NULL;
    size_t len = 0, len2 = 0;
    char *p1 = NULL, *p2 = NULL;
    rackdb_result *r = NULL;
    int bad = 0;
    (void)text;
    eng_catalog_read_lock(cat);
    sql_catalog ci = eng_catalog_iface(cat);
    sto_status st = sql_bind_query(arena, &ci, stmt->query, &plan);
    eng_opt_settings os = eng_opt_settings_default();
    os.threads = 2;
    if (!st) st = eng_optimize(plan, &os);
    if (!st) st = sql_plan_encode(plan, &bytes, &len);
    if (!st) st = sql_plan_decode(bytes, len, lookup, cat, &back);
    if (!st) st = sql_plan_encode(back, &again, &len2);
    if (!st) {
        p1 = sql_plan_to_string(plan);
        p2 = sql_plan_to_string(back);
        CHECK(p1 && p2);
        if (p1 && p2 && strcmp(p1, p2) != 0) {
            fprintf(stderr, "q%02d: decoded plan prints differently:\n%s\n---\n%s\n", q, p1, p2);
            bad++;
        }
        if (len != len2 || memcmp(bytes, again, len) != 0) {
            fprintf(stderr, "q%02d: re-encoding differs (%zu vs %zu bytes)\n", q, len, len2);
            bad++;
        }
        if (q == 2) check_damage(bytes, len);
        st = run_plan(back, &r);
    }
    if (!st) bad += tc_compare(q, r, answer);
    if (!st && !bad)
        printf("q%02d: %zu bytes, %llu rows match\n", q, len,
               (unsigned long long)rackdb_result_row_count(r));
    eng_catalog_unlock(cat);
    if (st) {
        fprintf(stderr, "q%02d: %s %s\n", q, st->sqlstate, st->message);
        sto_status_free(st);
        bad++;
    }
    rackdb_result_free(r);
    free(p1);
    free(p2);
    free(bytes);
    free(again);
    sql_plan_decoded_free(back);
    sql_arena_destroy(arena);
    return bad;
}

/* Runs a query file: SELECTs through the round trip, other statements
 * (q15's view) as usual. */
static int check_query(int q)
{
    char *sql = tc_query_text(q);
    char *answer = tc_answer_text(q);
    sql_arena *arena = sql_arena_create();
    sql_stmt_list *list = NULL;
    int bad = 0;
    if (!sql || !answer || !arena || sql_parse(arena, sql, &list) != STO_OK) {
        fprintf(stderr, "q%02d: cannot read or parse\n", q);
        bad = 1;
    }
    for (int i = 0; !bad && i < list->count; i++) {
        const sql_stmt *stmt = list->items[i];
        if (stmt->kind == SQL_STMT_SELECT) {
            bad += check_select(q, sql, stmt, answer);
            continue;
        }
        char *one = strndup(sql + stmt->text_start, (size_t)(stmt->text_end - stmt->text_start));
        rackdb_result *r = NULL;
        rackdb_error *e = NULL;
        if (rackdb_exec(sess, one, &r, &e) != RACKDB_OK) {
            fprintf(stderr, "q%02d: %s\n", q, rackdb_error_message(e));
            rackdb_error_free(e);
            bad++;
        }
        rackdb_result_free(r);
        free(one);
    }
    sql_arena_destroy(arena);
    free(sql);
    free(answer);
    return bad;
}

static void test_all_queries(void)
{
    for (int q = 1; q <= 22; q++)
        CHECK_EQ_INT(check_query(q), 0);
}

int main(void)
{
    if (!tc_open_sf001(&db, &sess)) return 1;
    RUN(test_all_queries);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
