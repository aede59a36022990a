/*
 * test_token.c — the SQL tokenizer: token kinds, spans, character positions,
 * values, comments, and lexical errors with their positions.
 */
#include <string.h>

#include "sql/token.h"
#include "test.h"

#define MAX_TOKENS 64

/* Tokenizes text into toks (ending with EOF); returns the count, or -1 on
 * a lexical error (whose status goes to *err). */
static int lex_all(const char *text, sql_token *toks, sto_status *err)
{
    sql_lexer lx;
    sql_lexer_init(&lx, text);
    *err = NULL;
    for (int n = 0; n < MAX_TOKENS; n++) {
        *err = sql_lexer_next(&lx, &toks[n]);
        if (*err) return -1;
        if (toks[n].type == SQL_TOKEN_EOF) return n + 1;
    }
    return MAX_TOKENS;
}

/* Checks that text tokenizes to exactly the given types (EOF implied). */
static void check_types(const char *text, const int *types, int count)
{
    sql_token toks[MAX_TOKENS];
    sto_status err;
    int n = lex_all(text, toks, &err);
    if (err) fprintf(stderr, "unexpected error for %s: %s\n", text, err->message);
    sto_status_free(err);
    CHECK_EQ_INT(n, count + 1);
    for (int i = 0; i < count && i < n; i++) {
        if (toks[i].type != types[i])
            fprintf(stderr, "%s: token %d is %d, expected %d\n", text, i, toks[i].type, types[i]);
        CHECK_EQ_INT(toks[i].type, types[i]);
    }
    if (n > 0) CHECK_EQ_INT(toks[n - 1].type, SQL_TOKEN_EOF);
}

#define TYPES(text, ...)                                                                           \
    do {                                                                                           \
        const int t_[] = {__VA_ARGS__};                                                            \
        check_types(text, t_, (int)(sizeof(t_) / sizeof(t_[0])));                                  \
    } while (0)

static void test_keywords_sorted_and_found(void)
{
    int n = sql_keyword_count();
    CHECK(n > 50);
    for (int i = 0; i < n; i++) {
        const char *k = sql_keyword_name(i);
        REQUIRE(k != NULL);
        if (i > 0) CHECK(strcmp(sql_keyword_name(i - 1), k) < 0);
        CHECK(sql_keyword_code(k, (int)strlen(k)) != TK_ID);
    }
    CHECK(sql_keyword_name(n) == NULL);
    CHECK_EQ_INT(sql_keyword_code("SeLeCt", 6), TK_SELECT);
    CHECK_EQ_INT(sql_keyword_code("select", 5), TK_ID); /* "selec" */
    CHECK_EQ_INT(sql_keyword_code("lineitem", 8), TK_ID);
    CHECK_EQ_INT(sql_keyword_code("averyveryverylongidentifier", 27), TK_ID);
}

/* The whole keyword set, so that losing or adding one is a visible change. */
static void test_keyword_set(void)
{
    const char *all =
        "all analyze and any as asc begin between both by call cascade case cast commit "
        "copy create cross date default desc distinct drop else end escape "
        "except exists explain extract false fetch first for from full group "
        "having if ilike in inner insert intersect interval into is join key "
        "last leading left like limit next not null nulls offset on only or order "
        "outer position precision primary restrict right rollback row rows select set show some "
        "start stdin stdout substring table then to trailing transaction trim true union "
        "using values varying view when where with work ";
    int n = 0;
    for (const char *w = all; *w;) {
        int len = (int)strcspn(w, " ");
        CHECK(sql_keyword_code(w, len) != TK_ID);
        n++;
        w += len;
        while (*w == ' ')
            w++;
    }
    CHECK_EQ_INT(n, sql_keyword_count());
}

static void test_token_kinds(void)
{
    TYPES("SELECT a, b.c FROM t;", TK_SELECT, TK_ID, TK_COMMA, TK_ID, TK_DOT, TK_ID, TK_FROM, TK_ID,
          TK_SEMI);
    TYPES("( ) * + - / % || = <> != < <= > >= :: =>", TK_LP, TK_RP, TK_STAR, TK_PLUS, TK_MINUS,
          TK_SLASH, TK_PERCENT, TK_CONCAT, TK_EQ, TK_NE, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE,
          TK_TYPECAST, TK_ARROW);
    TYPES("a::int", TK_ID, TK_TYPECAST, TK_ID);
    TYPES("1 12.5 .5 7. 1e3 2.5E-2 1e+9", TK_INTEGER, TK_NUMBER, TK_NUMBER, TK_NUMBER, TK_NUMBER,
          TK_NUMBER, TK_NUMBER);
    TYPES("1..2", TK_INTEGER, TK_DOT, TK_NUMBER); /* a range is not a number */
    TYPES("'abc' 'it''s' ''", TK_STRING, TK_STRING, TK_STRING);
    TYPES("\"Mixed Case\" \"a\"\"b\"", TK_ID, TK_ID);
    TYPES("$1 $23", TK_PARAM, TK_PARAM);
    TYPES("x-1", TK_ID, TK_MINUS, TK_INTEGER);
    TYPES("a_1$b _x", TK_ID, TK_ID);
    check_types("", NULL, 0);
}

static void test_comments_and_blanks(void)
{
    TYPES("-- a comment\nselect -- another\n 1", TK_SELECT, TK_INTEGER);
    TYPES("select /* one */ 1 /* two /* nested */ still two */ + 2", TK_SELECT, TK_INTEGER, TK_PLUS,
          TK_INTEGER);
    TYPES("\t\r\n\f\v select", TK_SELECT);
    TYPES("1 - -2", TK_INTEGER, TK_MINUS, TK_MINUS, TK_INTEGER);
    TYPES("1--2", TK_INTEGER);
    check_types("-- only a comment", NULL, 0);
    check_types("  /* x */ ", NULL, 0);
}

static void test_spans_and_positions(void)
{
    /* 'ü' is two bytes and one character: positions count characters. */
    const char *text = "select 'ü', x\n  from t";
    sql_token toks[MAX_TOKENS];
    sto_status err;
    int n = lex_all(text, toks, &err);
    REQUIRE(n == 7);
    CHECK_EQ_INT(toks[0].offset, 0);
    CHECK_EQ_INT(toks[0].len, 6);
    CHECK_EQ_INT(toks[0].pos, 1);
    CHECK_EQ_INT(toks[1].offset, 7);
    CHECK_EQ_INT(toks[1].len, 4); /* ' ü ' with ü as 2 bytes */
    CHECK_EQ_INT(toks[1].pos, 8);
    CHECK_EQ_INT(toks[2].type, TK_COMMA);
    CHECK_EQ_INT(toks[2].offset, 11);
    CHECK_EQ_INT(toks[2].pos, 11); /* one byte behind its offset + 1 */
    CHECK_EQ_INT(toks[3].pos, 13);
    CHECK_EQ_INT(toks[4].type, TK_FROM);
    CHECK_EQ_INT(toks[4].pos, 17);
    CHECK_EQ_INT(toks[6].type, SQL_TOKEN_EOF);
    CHECK_EQ_INT(toks[6].offset, (int)strlen(text));
    CHECK_EQ_INT(toks[6].len, 0);
    CHECK_EQ_INT(toks[6].pos, 23);
}

/* E'...' strings: backslash escapes, checked by the scanner. */
static void test_escape_strings(void)
{
    const char *text = "E'a\\tb\\n' e'it\\'s''' E'\\x41\\101\\u00e9\\q\\\\'";
    sql_token toks[MAX_TOKENS];
    sto_status err;
    int n = lex_all(text, toks, &err);
    REQUIRE(n == 4);
    CHECK_EQ_INT(toks[0].type, TK_STRING);
    CHECK_EQ_INT(toks[1].type, TK_STRING);
    CHECK_EQ_INT(toks[2].type, TK_STRING);
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    CHECK_STREQ(sql_token_string(a, text, &toks[0]), "a\tb\n");
    CHECK_STREQ(sql_token_string(a, text, &toks[1]), "it's'");
    CHECK_STREQ(sql_token_string(a, text, &toks[2]), "AA\xc3\xa9q\\");
    sql_arena_destroy(a);
    /* E alone, or E followed by a space, is a name */
    TYPES("e 'x'", TK_ID, TK_STRING);
}

static void test_values(void)
{
    const char *text = "LineItem \"MiXed\"\"Q\" 'it''s' 12.50 'ü'";
    sql_token toks[MAX_TOKENS];
    sto_status err;
    int n = lex_all(text, toks, &err);
    REQUIRE(n == 6);
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    CHECK_STREQ(sql_token_ident(a, text, &toks[0]), "lineitem");
    CHECK_STREQ(sql_token_ident(a, text, &toks[1]), "MiXed\"Q");
    CHECK_STREQ(sql_token_string(a, text, &toks[2]), "it's");
    CHECK_STREQ(sql_token_text(a, text, &toks[3]), "12.50");
    CHECK_STREQ(sql_token_string(a, text, &toks[4]), "ü");
    CHECK(!sql_arena_failed(a));
    sql_arena_destroy(a);
}

/* A lexical error: its message and 1-based character position. */
static void check_error(const char *text, const char *message, int position)
{
    sql_token toks[MAX_TOKENS];
    sto_status err;
    int n = lex_all(text, toks, &err);
    CHECK_EQ_INT(n, -1);
    REQUIRE(err != NULL);
    CHECK_STREQ(err->sqlstate, STO_SYNTAX_ERROR);
    CHECK_STREQ(err->message, message);
    CHECK_EQ_INT(err->position, position);
    sto_status_free(err);
}

static void test_errors(void)
{
    check_error("select 'abc", "unterminated quoted string at or near \"'abc\"", 8);
    check_error("select 'it''s", "unterminated quoted string at or near \"'it''s\"", 8);
    check_error("select \"abc", "unterminated quoted identifier at or near \"\"abc\"", 8);
    check_error("select 1 /* open", "unterminated /* comment at or near \"/* open\"", 10);
    check_error("/* a /* b */", "unterminated /* comment at or near \"/* a /* b */\"", 1);
    check_error("select 12abc", "trailing junk after numeric literal at or near \"12abc\"", 8);
    check_error("select 1e", "trailing junk after numeric literal at or near \"1e\"", 8);
    check_error("select 1.5x", "trailing junk after numeric literal at or near \"1.5x\"", 8);
    check_error("select $1a", "trailing junk after parameter at or near \"$1a\"", 8);
    check_error("select \"\"", "zero-length delimited identifier at or near \"\"\"\"", 8);
    check_error("select #", "syntax error at or near \"#\"", 8);
    check_error("select a | b", "syntax error at or near \"|\"", 10);
    check_error("select a : b", "syntax error at or near \":\"", 10);
    check_error("select a ! b", "syntax error at or near \"!\"", 10);
    check_error("select $", "syntax error at or near \"$\"", 8);
    check_error("select E'abc\\'", "unterminated quoted string at or near \"E'abc\\'\"", 8);
    check_error("select E'a\\0b'", "invalid escape in string at or near \"\\0\"", 11);
    check_error("select E'\\x00'", "invalid escape in string at or near \"\\x00\"", 10);
    check_error("select E'\\u12'", "invalid escape in string at or near \"\\u\"", 10);
    /* positions count characters, not bytes */
    check_error("select 'ü', 'x", "unterminated quoted string at or near \"'x\"", 13);
    check_error("select ü ?", "syntax error at or near \"?\"", 10);
    /* a long unterminated string is quoted only in part */
    char long_text[200];
    snprintf(long_text, sizeof(long_text), "'%0100d", 0);
    sql_token toks[MAX_TOKENS];
    sto_status err;
    CHECK_EQ_INT(lex_all(long_text, toks, &err), -1);
    REQUIRE(err != NULL);
    CHECK(strlen(err->message) < 100);
    sto_status_free(err);
}

int main(void)
{
    RUN(test_keywords_sorted_and_found);
    RUN(test_keyword_set);
    RUN(test_token_kinds);
    RUN(test_comments_and_blanks);
    RUN(test_spans_and_positions);
    RUN(test_escape_strings);
    RUN(test_values);
    RUN(test_errors);
    return TEST_REPORT();
}
