/*
 * test_parse_errors.c — what a person sees when SQL is wrong: the message,
 * the SQLSTATE and the exact position of syntax and lexical errors, and the
 * psql-style rendering of sql_format_error (one line, several lines, long
 * lines, tabs, end of input, no position, small buffers).
 */
#include <stdlib.h>
#include <string.h>

#include "sql/error_format.h"
#include "sql/parse.h"
#include "test.h"

/* Parses sql, expects an error with this SQLSTATE, message and position. */
static void check_error(const char *sql, const char *sqlstate, const char *message, int position)
{
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    sql_stmt_list *l = NULL;
    sto_status st = sql_parse(a, sql, &l);
    if (!st) fprintf(stderr, "no error for: %s\n", sql);
    REQUIRE(st != NULL);
    if (strcmp(st->message, message) != 0 || st->position != position)
        fprintf(stderr, "for: %s\n", sql);
    CHECK_STREQ(st->sqlstate, sqlstate);
    CHECK_STREQ(st->message, message);
    CHECK_EQ_INT(st->position, position);
    CHECK(l == NULL);
    sto_status_free(st);
    sql_arena_destroy(a);
}

static void test_syntax_errors(void)
{
    check_error("selec 1", STO_SYNTAX_ERROR, "syntax error at or near \"selec\"", 1);
    check_error("select a,\n b fromm t", STO_SYNTAX_ERROR, "syntax error at or near \"t\"", 20);
    check_error("select * from t where a = = 1", STO_SYNTAX_ERROR, "syntax error at or near \"=\"",
                27);
    check_error("select a as from t", STO_SYNTAX_ERROR, "syntax error at or near \"from\"", 13);
    check_error("select 1)", STO_SYNTAX_ERROR, "syntax error at or near \")\"", 9);
    check_error("select 1 +;", STO_SYNTAX_ERROR, "syntax error at or near \";\"", 11);
    check_error("select f(x, *) from t", STO_SYNTAX_ERROR, "syntax error at or near \"*\"", 13);
    check_error("select 1 from t order by 1 order by 2", STO_SYNTAX_ERROR,
                "syntax error at or near \"order\"", 28);
    check_error("select a < b = c", STO_SYNTAX_ERROR, "syntax error at or near \"=\"", 14);
    check_error("select 'a' 'b'", STO_SYNTAX_ERROR, "syntax error at or near \"'b'\"", 12);
    check_error("select 1; selec 2", STO_SYNTAX_ERROR, "syntax error at or near \"selec\"", 11);
    check_error("select interval '3 days'", STO_SYNTAX_ERROR, "syntax error at end of input", 25);
}

static void test_end_of_input(void)
{
    check_error("select a from t where x = 1 +", STO_SYNTAX_ERROR, "syntax error at end of input",
                30);
    check_error("select (1", STO_SYNTAX_ERROR, "syntax error at end of input", 10);
    check_error("select a from", STO_SYNTAX_ERROR, "syntax error at end of input", 14);
    /* trailing blanks and comments do not move the position */
    check_error("select a from   -- done\n\n", STO_SYNTAX_ERROR, "syntax error at end of input",
                14);
    check_error("create table t (a int", STO_SYNTAX_ERROR, "syntax error at end of input", 22);
}

static void test_lexical_errors(void)
{
    check_error("select 'abc", STO_SYNTAX_ERROR, "unterminated quoted string at or near \"'abc\"",
                8);
    check_error("select a from t /* open", STO_SYNTAX_ERROR,
                "unterminated /* comment at or near \"/* open\"", 17);
    check_error("select \"abc", STO_SYNTAX_ERROR,
                "unterminated quoted identifier at or near \"\"abc\"", 8);
    check_error("select 12abc", STO_SYNTAX_ERROR,
                "trailing junk after numeric literal at or near \"12abc\"", 8);
    check_error("select 0.5.6", STO_SYNTAX_ERROR, "syntax error at or near \".6\"", 11);
    check_error("select #", STO_SYNTAX_ERROR, "syntax error at or near \"#\"", 8);
    /* a syntax error before a lexical one is the one reported */
    check_error("select ) 'abc", STO_SYNTAX_ERROR, "syntax error at or near \")\"", 8);
    /* positions are in characters */
    check_error("select 'ü' ü ü", STO_SYNTAX_ERROR, "syntax error at or near \"ü\"", 14);
}

static void test_semantic_errors_from_parser(void)
{
    check_error("create table t (a foo)", STO_UNDEFINED_OBJECT, "type \"foo\" does not exist", 19);
    check_error("select cast(a as decimal(40,2))", STO_FEATURE_NOT_SUPPORTED,
                "DECIMAL precision 40 is not supported (1 to 18)", 18);
    check_error("select cast(a as decimal(5,6))", STO_INVALID_PARAMETER_VALUE,
                "DECIMAL scale 6 must be between 0 and precision 5", 18);
    check_error("select a::int(3)", STO_SYNTAX_ERROR,
                "type modifier is not allowed for type \"int\"", 11);
    check_error("select a::char(0)", STO_INVALID_PARAMETER_VALUE,
                "length for type char must be at least 1", 11);
    check_error("select a::int precision", STO_SYNTAX_ERROR,
                "syntax error at or near \"precision\"", 15);
    check_error("select interval '1' hour", STO_FEATURE_NOT_SUPPORTED,
                "interval unit \"hour\" is not supported", 21);
    check_error("select interval 'x' day", STO_INVALID_DATETIME_FORMAT,
                "invalid input syntax for type interval: \"x\"", 17);
    check_error("select extract(hour from d)", STO_FEATURE_NOT_SUPPORTED,
                "EXTRACT field \"hour\" is not supported", 16);
    check_error("(select 1 order by 1) order by 2", STO_SYNTAX_ERROR,
                "multiple ORDER BY clauses not allowed", 32);
    check_error("(select 1 limit 1) limit 2", STO_SYNTAX_ERROR,
                "multiple LIMIT clauses not allowed", 26);
    check_error("values (1), (1, 2)", STO_SYNTAX_ERROR, "VALUES lists must all be the same length",
                14);
    check_error("select $0", STO_SYNTAX_ERROR, "parameter number $0 is out of range (1..65535)", 8);
    check_error("create table t (a int, b int, primary key (a), primary key (b))", STO_SYNTAX_ERROR,
                "multiple primary keys for table are not allowed", 61);
    check_error("create table t (a int not null null)", STO_SYNTAX_ERROR,
                "conflicting NULL/NOT NULL declarations for column \"a\"", 17);
}

/* sql_format_error on a status made by hand and on real parse errors. */
static void check_format(const char *text, int position, const char *expected)
{
    sto_status st =
        sto_error_at(STO_UNDEFINED_COLUMN, position, "column \"%s\" does not exist", "l_shipdat");
    char buf[1024];
    size_t n = sql_format_error(text, st, buf, sizeof(buf));
    CHECK_STREQ(buf, expected);
    CHECK_EQ_INT(n, strlen(expected));
    sto_status_free(st);
}

static void test_format_one_line(void)
{
    check_format("select l_shipdat from lineitem", 8,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 1: select l_shipdat from lineitem\n"
                 "               ^\n");
    /* no position: the message only */
    check_format("select l_shipdat from lineitem", 0,
                 "ERROR:  column \"l_shipdat\" does not exist\n");
    check_format(NULL, 5, "ERROR:  column \"l_shipdat\" does not exist\n");
    /* multibyte characters before the caret take one column each */
    check_format("select 'äöü', l_shipdat", 15,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 1: select 'äöü', l_shipdat\n"
                 "                      ^\n");
}

static void test_format_multi_line(void)
{
    const char *q = "select\n\tl_returnflag,\n\tl_shipdat\nfrom\n\tlineitem";
    check_format(q, 24,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 3:  l_shipdat\n"
                 "         ^\n");
    /* CR LF line ends count once */
    check_format("select\r\n  a,\r\n  l_shipdat\r\n", 17,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 3:   l_shipdat\n"
                 "          ^\n");
    /* the first line of several */
    check_format("select x\nfrom t", 8,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 1: select x\n"
                 "               ^\n");
}

static void test_format_long_lines(void)
{
    /* 77 characters: a caret near the start cuts the right end, ... */
    const char *line =
        "select aaaaaaaaaa, bbbbbbbbbb, cccccccccc, dddddddddd, eeeeeeeeee, ffffffffff";
    check_format(line, 8,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 1: select aaaaaaaaaa, bbbbbbbbbb, cccccccccc, dddddddddd, eeeee...\n"
                 "               ^\n");
    /* ... one near the end cuts the left, ... */
    check_format(line, 71,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 1: ..., bbbbbbbbbb, cccccccccc, dddddddddd, eeeeeeeeee, ffffffffff\n"
                 "                                                                ^\n");
    /* ... and one in the middle of a very long line cuts both. */
    char longer[200];
    snprintf(longer, sizeof(longer), "select %s, %s", line, line);
    check_format(longer, 90,
                 "ERROR:  column \"l_shipdat\" does not exist\n"
                 "LINE 1: ...ccccccccc, dddddddddd, eeeeeeeeee, ffffffffff, select aaaaaa...\n"
                 "                                                             ^\n");
}

static void test_format_parse_errors(void)
{
    const char *sql = "select a\nfrom t\nwhere x = 1 +";
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    sql_stmt_list *l;
    sto_status st = sql_parse(a, sql, &l);
    REQUIRE(st != NULL);
    char buf[512];
    sql_format_error(sql, st, buf, sizeof(buf));
    CHECK_STREQ(buf, "ERROR:  syntax error at end of input\n"
                     "LINE 3: where x = 1 +\n"
                     "                     ^\n");
    sto_status_free(st);

    const char *sql2 = "select l_returnflag\n  fromm lineitem\n";
    st = sql_parse(a, sql2, &l);
    REQUIRE(st != NULL);
    sql_format_error(sql2, st, buf, sizeof(buf));
    CHECK_STREQ(buf, "ERROR:  syntax error at or near \"lineitem\"\n"
                     "LINE 2:   fromm lineitem\n"
                     "                ^\n");
    sto_status_free(st);
    sql_arena_destroy(a);
}

/* A small buffer gets a truncated, terminated prefix and the full length. */
static void test_format_small_buffer(void)
{
    sto_status st = sto_error_at(STO_SYNTAX_ERROR, 1, "syntax error at or near \"x\"");
    char full[256], small[10];
    size_t n = sql_format_error("x", st, full, sizeof(full));
    size_t m = sql_format_error("x", st, small, sizeof(small));
    CHECK_EQ_INT(n, m);
    CHECK_EQ_INT(n, strlen(full));
    CHECK_EQ_INT(strlen(small), sizeof(small) - 1);
    CHECK(strncmp(small, full, sizeof(small) - 1) == 0);
    CHECK_EQ_INT(sql_format_error("x", st, NULL, 0), n);
    CHECK_EQ_INT(sql_format_error("x", NULL, full, sizeof(full)), 0);
    CHECK_STREQ(full, "");
    sto_status_free(st);
}

int main(void)
{
    RUN(test_syntax_errors);
    RUN(test_end_of_input);
    RUN(test_lexical_errors);
    RUN(test_semantic_errors_from_parser);
    RUN(test_format_one_line);
    RUN(test_format_multi_line);
    RUN(test_format_long_lines);
    RUN(test_format_parse_errors);
    RUN(test_format_small_buffer);
    return TEST_REPORT();
}
