/*
 * test_error_classes.c — one end-to-end test per error class of the SQL
 * front end (issue: syntax, unknown table / column / function, ambiguous
 * column, type mismatch, nested aggregate, non-grouped column, wrong number
 * of arguments, division by zero and numeric overflow at run time).
 *
 * Each statement goes through the public C API (include/rackdb.h) of a
 * fresh in-memory instance, as an application or the shell sends it; the
 * error must carry PostgreSQL's SQLSTATE, its message and its position, and
 * sql_format_error must show it as psql does. Every expected text below is
 * what psql printed for the same statement against PostgreSQL 15.18 (the
 * LINE/caret block included; run-time errors have no position there, and
 * none here). The binder's finer cases live in test_bind_errors.c, the
 * parser's in test_parse_errors.c, SQL-level ones in slt/errors.test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "rackdb.h"
#include "sql/error_format.h"

static rackdb *db;
static rackdb_session *sess;

/* Runs sql (one statement) and checks the error it must raise: SQLSTATE,
 * message, position, and the psql-style text. */
static void check(const char *sql, const char *sqlstate, const char *message, int position,
                  const char *shown)
{
    rackdb_error *e = NULL;
    rackdb_result *r = NULL;
    rackdb_code rc = rackdb_exec(sess, sql, &r, &e);
    rackdb_result_free(r);
    if (rc != RACKDB_ERROR) {
        fprintf(stderr, "%s: succeeded, expected %s\n", sql, sqlstate);
        CHECK(0);
        return;
    }
    if (strcmp(rackdb_error_sqlstate(e), sqlstate) != 0 ||
        strcmp(rackdb_error_message(e), message) != 0 || rackdb_error_position(e) != position)
        fprintf(stderr, "%s:\n  got %s \"%s\" at %d\n", sql, rackdb_error_sqlstate(e),
                rackdb_error_message(e), rackdb_error_position(e));
    CHECK_STREQ(rackdb_error_sqlstate(e), sqlstate);
    CHECK_STREQ(rackdb_error_message(e), message);
    CHECK_EQ_INT(rackdb_error_position(e), position);
    CHECK_STREQ(rackdb_error_statement(e), sql);
    sto_status st = sto_error_at(rackdb_error_sqlstate(e), rackdb_error_position(e), "%s",
                                 rackdb_error_message(e));
    char buf[1024];
    sql_format_error(rackdb_error_statement(e), st, buf, sizeof(buf));
    CHECK_STREQ(buf, shown);
    sto_status_free(st);
    rackdb_error_free(e);
}

static void run(const char *sql)
{
    rackdb_error *e = NULL;
    if (rackdb_exec(sess, sql, NULL, &e) != RACKDB_OK) {
        fprintf(stderr, "%s: %s\n", sql, rackdb_error_message(e));
        rackdb_error_free(e);
        CHECK(0);
    }
}

static void test_syntax(void)
{
    check("SELECT * FORM t", "42601", "syntax error at or near \"FORM\"", 10,
          "ERROR:  syntax error at or near \"FORM\"\n"
          "LINE 1: SELECT * FORM t\n"
          "                 ^\n");
}

static void test_unknown_names(void)
{
    check("SELECT k FROM nosuch", "42P01", "relation \"nosuch\" does not exist", 15,
          "ERROR:  relation \"nosuch\" does not exist\n"
          "LINE 1: SELECT k FROM nosuch\n"
          "                      ^\n");
    check("SELECT kk FROM t", "42703", "column \"kk\" does not exist", 8,
          "ERROR:  column \"kk\" does not exist\n"
          "LINE 1: SELECT kk FROM t\n"
          "               ^\n");
    check("SELECT foo(k) FROM t", "42883", "function foo(integer) does not exist", 8,
          "ERROR:  function foo(integer) does not exist\n"
          "LINE 1: SELECT foo(k) FROM t\n"
          "               ^\n");
}

static void test_ambiguous_column(void)
{
    check("SELECT k FROM t a, t b", "42702", "column reference \"k\" is ambiguous", 8,
          "ERROR:  column reference \"k\" is ambiguous\n"
          "LINE 1: SELECT k FROM t a, t b\n"
          "               ^\n");
}

static void test_type_mismatch(void)
{
    check("SELECT d + true FROM t", "42883", "operator does not exist: date + boolean", 10,
          "ERROR:  operator does not exist: date + boolean\n"
          "LINE 1: SELECT d + true FROM t\n"
          "                 ^\n");
    check("SELECT k FROM t WHERE s", "42804",
          "argument of WHERE must be type boolean, not type character varying", 23,
          "ERROR:  argument of WHERE must be type boolean, not type character varying\n"
          "LINE 1: SELECT k FROM t WHERE s\n"
          "                              ^\n");
}

static void test_aggregate_misuse(void)
{
    check("SELECT sum(count(*)) FROM t", "42803", "aggregate function calls cannot be nested", 12,
          "ERROR:  aggregate function calls cannot be nested\n"
          "LINE 1: SELECT sum(count(*)) FROM t\n"
          "                   ^\n");
    check("SELECT s, count(*) FROM t", "42803",
          "column \"t.s\" must appear in the GROUP BY clause or be used in an aggregate function",
          8,
          "ERROR:  column \"t.s\" must appear in the GROUP BY clause or be used in an aggregate "
          "function\n"
          "LINE 1: SELECT s, count(*) FROM t\n"
          "               ^\n");
}

static void test_argument_count(void)
{
    check("SELECT upper(s, s) FROM t", "42883",
          "function upper(character varying, character varying) does not exist", 8,
          "ERROR:  function upper(character varying, character varying) does not exist\n"
          "LINE 1: SELECT upper(s, s) FROM t\n"
          "               ^\n");
    check("SELECT substring(s) FROM t", "42883",
          "function substring(character varying) does not exist", 8,
          "ERROR:  function substring(character varying) does not exist\n"
          "LINE 1: SELECT substring(s) FROM t\n"
          "               ^\n");
}

/* Run-time errors: the values are only known while rows flow, so they come
 * from the compiled code, without a position (as in PostgreSQL). */
static void test_run_time(void)
{
    check("SELECT k / (k - k) FROM t", "22012", "division by zero", 0,
          "ERROR:  division by zero\n");
    check("SELECT 1 FROM t WHERE k > 1 / (k - 2)", "22012", "division by zero", 0,
          "ERROR:  division by zero\n");
    check("SELECT k * 2147483647 FROM t", "22003", "integer out of range", 0,
          "ERROR:  integer out of range\n");
    check("SELECT CAST(k AS BIGINT) * 9223372036854775807 FROM t", "22003", "bigint out of range",
          0, "ERROR:  bigint out of range\n");
    check("SELECT sum(k + 2147483646) FROM t", "22003", "integer out of range", 0,
          "ERROR:  integer out of range\n");
}

int main(void)
{
    rackdb_error *e = NULL;
    if (rackdb_open(NULL, &db, &e) != RACKDB_OK ||
        rackdb_session_open(db, &sess, &e) != RACKDB_OK) {
        fprintf(stderr, "cannot open an instance: %s\n", e ? rackdb_error_message(e) : "?");
        return 1;
    }
    run("CREATE TABLE t (k INTEGER, s VARCHAR(10), d DATE)");
    run("INSERT INTO t VALUES (2, 'a', DATE '2000-01-01')");
    RUN(test_syntax);
    RUN(test_unknown_names);
    RUN(test_ambiguous_column);
    RUN(test_type_mismatch);
    RUN(test_aggregate_misuse);
    RUN(test_argument_count);
    RUN(test_run_time);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
