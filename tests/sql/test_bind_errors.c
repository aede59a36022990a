/*
 * test_bind_errors.c — every semantic error class the binder raises, with
 * PostgreSQL's SQLSTATE, its wording and the position of the offending
 * token (1-based character offset, as psql's caret shows it).
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "bind_catalog.h"

static test_catalog cat;

/* Binds sql and checks the error: SQLSTATE, message, and position = where
 * the `at` text first occurs in sql (at NULL: position 0), skipping `skip`
 * earlier occurrences. */
static void check_error_n(const char *sql, const char *sqlstate, const char *message,
                          const char *at, int skip)
{
    sql_arena *a = sql_arena_create();
    sql_stmt_list *l;
    sql_catalog iface = tcat_iface(&cat);
    sto_status st = sql_parse(a, sql, &l);
    if (st) {
        fprintf(stderr, "parse of %s failed: %s\n", sql, st->message);
        CHECK(0);
        sto_status_free(st);
        sql_arena_destroy(a);
        return;
    }
    sql_plan *p = NULL;
    st = sql_bind_query(a, &iface, l->items[0]->query, &p);
    if (!st) {
        fprintf(stderr, "bind of %s succeeded, expected %s\n", sql, message);
        CHECK(0);
    } else {
        int want_pos = 0;
        if (at) {
            const char *hit = strstr(sql, at);
            for (int i = 0; hit && i < skip; i++)
                hit = strstr(hit + 1, at);
            REQUIRE(hit != NULL);
            want_pos = (int)(hit - sql) + 1;
        }
        if (strcmp(st->sqlstate, sqlstate) != 0 || strcmp(st->message, message) != 0 ||
            st->position != want_pos)
            fprintf(stderr, "for: %s\n  got %s \"%s\" at %d\n", sql, st->sqlstate, st->message,
                    st->position);
        CHECK_STREQ(st->sqlstate, sqlstate);
        CHECK_STREQ(st->message, message);
        CHECK_EQ_INT(st->position, want_pos);
        sto_status_free(st);
    }
    sql_arena_destroy(a);
}

static void check_error(const char *sql, const char *sqlstate, const char *message, const char *at)
{
    check_error_n(sql, sqlstate, message, at, 0);
}

static void test_names(void)
{
    check_error("select l_shipdat from lineitem", "42703", "column \"l_shipdat\" does not exist",
                "l_shipdat");
    check_error("select * from foo", "42P01", "relation \"foo\" does not exist", "foo");
    /* a quoted name keeps its case and must match exactly; unquoted names
     * fold to lower case (NATION is nation) */
    check_error("select * from \"NATION\"", "42P01", "relation \"NATION\" does not exist",
                "\"NATION\"");
    check_error("select \"N_NAME\" from NATION", "42703", "column \"N_NAME\" does not exist",
                "\"N_NAME\"");
    check_error("select n_name from nation n1, nation n2", "42702",
                "column reference \"n_name\" is ambiguous", "n_name");
    check_error("select x.n_name from nation", "42P01", "missing FROM-clause entry for table \"x\"",
                "x.n_name");
    check_error("select n.foo from nation n", "42703", "column n.foo does not exist", "n.foo");
    check_error("select * from nation as n (a, b, c, d, e)", "42P10",
                "table \"n\" has 4 columns available but 5 columns specified", "n (");
    check_error("select * from nation join region using (nope)", "42703",
                "column \"nope\" specified in USING clause does not exist", "nope");
    /* a derived table cannot see its sibling FROM items (no LATERAL) */
    check_error("select * from nation, (select n_name) t", "42703",
                "column \"n_name\" does not exist", "n_name)");
    /* an error inside a view's query names the view and points at the
     * reference */
    sql_arena *va = sql_arena_create();
    sql_stmt_list *vl;
    sto_status vst = sql_parse(va, "create view bad as select nope from nation", &vl);
    REQUIRE(vst == NULL);
    tcat_add_view(&cat, vl->items[0]);
    sql_arena_destroy(va);
    check_error("select * from nation, bad", "42703",
                "in view \"bad\": column \"nope\" does not exist", "bad");
    tcat_drop_view(&cat, "bad");
    /* views and CTEs are resolved, but a CTE is only visible in its query */
    check_error_n("select * from (with cc as (select 1) select * from cc) x, cc", "42P01",
                  "relation \"cc\" does not exist", "cc", 2);
}

static void test_functions_and_operators(void)
{
    check_error("select foo(1)", "42883", "function foo(integer) does not exist", "foo");
    check_error("select substring(n_name) from nation", "42883",
                "function substring(character) does not exist", "substring");
    check_error("select extract(year from n_nationkey) from nation", "42883",
                "function extract(integer) does not exist", "extract");
    check_error("select sum(n_name) from nation", "42883", "function sum(character) does not exist",
                "sum");
    check_error("select coalesce(1, 2, 3, date '2000-01-01')", "42804",
                "COALESCE types integer and date cannot be matched", "date");
    check_error("select date '1998-01-01' + true", "42883",
                "operator does not exist: date + boolean", "+");
    check_error("select n_name = 1 from nation", "42883",
                "operator does not exist: character = integer", "=");
    check_error_n("select n_name from nation where n_name", "42804",
                  "argument of WHERE must be type boolean, not type character", "n_name", 1);
    check_error("select not 1", "42804", "argument of NOT must be type boolean, not type integer",
                "1");
    check_error("select 1 and true", "42804",
                "argument of AND must be type boolean, not type integer", "1");
    check_error("select case when true then 1 else date '2000-01-01' end", "42804",
                "CASE types date and integer cannot be matched", "1");
    check_error("select - date '2000-01-01'", "42883", "operator does not exist: - date", "-");
    check_error("select interval '1' day", "0A000",
                "INTERVAL values can only be added to or subtracted from a date", "interval");
}

static void test_constants(void)
{
    check_error("select 1 / 0", "22012", "division by zero", "/");
    check_error("select 2147483647 + 1", "22003", "integer out of range", "+");
    check_error("select 9223372036854775807 * 2", "22003", "bigint out of range", "*");
    /* well-formed but no such month or day: 22008, as in PostgreSQL;
     * malformed text: 22007 */
    check_error("select date '1998-13-01'", "22008",
                "date/time field value out of range: \"1998-13-01\"", "date");
    check_error("select date '1999-02-29'", "22008",
                "date/time field value out of range: \"1999-02-29\"", "date");
    check_error("select date '1999-2-28'", "22007",
                "invalid input syntax for type date: \"1999-2-28\"", "date");
    check_error("select -2147483648 * -1", "22003", "integer out of range", "*");
    check_error("select substring()", "42883", "function substring() does not exist", "substring");
    check_error("select * from nation where n_nationkey = 'abc'", "22P02",
                "invalid input syntax for type integer: \"abc\"", "'abc'");
    check_error("select * from orders where o_orderdate < '1995-02-30'", "22008",
                "date/time field value out of range: \"1995-02-30\"", "'1995");
    check_error("select * from orders where o_orderdate < 'soon'", "22007",
                "invalid input syntax for type date: \"soon\"", "'soon");
}

static void test_grouping(void)
{
    check_error("select 1 from nation where sum(n_nationkey) > 1", "42803",
                "aggregate functions are not allowed in WHERE", "sum");
    check_error("select 1 from nation group by sum(n_nationkey)", "42803",
                "aggregate functions are not allowed in GROUP BY", "sum");
    check_error("select * from nation join region on count(*) > 0", "42803",
                "aggregate functions are not allowed in JOIN conditions", "count");
    check_error("select sum(count(*)) from nation", "42803",
                "aggregate function calls cannot be nested", "count");
    check_error("select n_name, count(*) from nation", "42803",
                "column \"nation.n_name\" must appear in the GROUP BY clause or be used in an "
                "aggregate function",
                "n_name");
    check_error("select n_regionkey from nation group by n_regionkey having n_name > 'a'", "42803",
                "column \"nation.n_name\" must appear in the GROUP BY clause or be used in an "
                "aggregate function",
                "n_name");
    check_error("select count(*) from nation n group by n_regionkey order by n_name", "42803",
                "column \"n.n_name\" must appear in the GROUP BY clause or be used in an "
                "aggregate function",
                "n_name");
    check_error("select n_regionkey + 1 from nation group by n_regionkey + 2", "42803",
                "column \"nation.n_regionkey\" must appear in the GROUP BY clause or be used in "
                "an aggregate function",
                "n_regionkey");
    check_error("select n_regionkey, (select r_name from region where r_regionkey = "
                "n_nationkey) from nation group by n_regionkey",
                "42803",
                "column \"nation.n_nationkey\" must appear in the GROUP BY clause or be used in "
                "an aggregate function",
                "n_nationkey");
    check_error("select 1 as a from nation group by 2", "42P10",
                "GROUP BY position 2 is not in select list", "2");
}

static void test_order_by_and_shape(void)
{
    check_error("select n_name from nation order by 3", "42P10",
                "ORDER BY position 3 is not in select list", "3");
    check_error("select n_name from nation order by 0", "42P10",
                "ORDER BY position 0 is not in select list", "0");
    check_error("select distinct n_name from nation order by n_regionkey", "42P10",
                "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                "n_regionkey");
    check_error_n("select n_name as x, n_comment as x from nation order by x", "42702",
                  "ORDER BY \"x\" is ambiguous", "x", 2);
    check_error_n("select 1, 2 union select 1", "42601",
                  "each UNION query must have the same number of columns", "select 1", 1);
    check_error("select 1 union select date '2000-01-01'", "42804",
                "UNION types integer and date cannot be matched", "select date");
    check_error("select * from nation where n_nationkey = (select n_nationkey, n_name from "
                "nation)",
                "42601", "subquery has too many columns", "select n_nationkey");
    check_error("select * from nation where n_nationkey in (select n_nationkey, n_name from "
                "nation)",
                "42601", "subquery has too many columns", "in");
    check_error("values (1, 'a'), (2, date '2000-01-01')", "42804",
                "VALUES types character varying and date cannot be matched", "date");
    check_error("select 1 limit -1", "22023", "LIMIT must not be negative", "-1");
    check_error("select 1 limit 'a'", "42804",
                "argument of LIMIT must be type bigint, not type character varying", "'a'");
    check_error("select *", "42601", "SELECT * with no tables specified is not valid", "*");
}

/* Binds sql (one SELECT); returns its error (NULL: it bound). */
static sto_status bind_status(const char *sql)
{
    sql_arena *a = sql_arena_create();
    sql_stmt_list *l;
    sql_catalog iface = tcat_iface(&cat);
    sto_status st = sql_parse(a, sql, &l);
    sql_plan *p = NULL;
    if (!st) st = sql_bind_query(a, &iface, l->items[0]->query, &p);
    sql_arena_destroy(a);
    return st;
}

/* WITH a0 AS (...), a1 AS (SELECT ... FROM a0 p, a0 q, a0 r, a0 s), ... with
 * `levels` levels: 4^levels references to a0 in all. */
static char *cte_chain(int levels)
{
    size_t cap = 256 + (size_t)levels * 160;
    char *q = malloc(cap);
    if (!q) return NULL;
    int n = snprintf(q, cap, "with a0 as (select n_nationkey as x from nation)");
    for (int i = 1; i <= levels; i++)
        n += snprintf(q + n, cap - (size_t)n,
                      ", a%d as (select p.x from a%d p, a%d q, a%d r, a%d s where p.x = q.x)", i,
                      i - 1, i - 1, i - 1, i - 1);
    snprintf(q + n, cap - (size_t)n, " select count(*) from a%d", levels);
    return q;
}

/* Regression (found with tests/sql/fuzz_bind.c): every CTE reference binds its body
 * again, so a short chain of CTEs that each name the previous one four
 * times used to bind for hours (4^11 bodies from 600 bytes). The binder
 * stops past 4096 expansions with 54001, pointing at a reference. */
static void test_expansion_cap(void)
{
    char *q = cte_chain(5); /* 1365 bodies: binds */
    REQUIRE(q != NULL);
    sto_status st = bind_status(q);
    CHECK(st == NULL);
    sto_status_free(st);
    free(q);
    q = cte_chain(11);
    REQUIRE(q != NULL);
    st = bind_status(q);
    CHECK(st != NULL);
    if (st) {
        CHECK_STREQ(st->sqlstate, "54001");
        CHECK_STREQ(st->message, "statement too complex: its CTE and view references expand to "
                                 "more than 4096 copies");
        CHECK(st->position > 0 && st->position < (int)strlen(q));
        CHECK(strncmp(q + st->position - 1, "a", 1) == 0);
    }
    sto_status_free(st);
    free(q);
}

int main(void)
{
    if (!tcat_init(&cat)) {
        fprintf(stderr, "cannot load the TPC-H schema\n");
        return 1;
    }
    RUN(test_names);
    RUN(test_functions_and_operators);
    RUN(test_constants);
    RUN(test_grouping);
    RUN(test_order_by_and_shape);
    RUN(test_expansion_cap);
    tcat_free(&cat);
    return TEST_REPORT();
}
