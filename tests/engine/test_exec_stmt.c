/*
 * test_exec_stmt.c — the public C API end to end: statements run one at a
 * time, command tags, errors with SQLSTATE / position / statement text,
 * COPY in and out of files, INSERT with typed and checked constants,
 * settings, and an instance on a directory surviving close and reopen.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rackdb.h"
#include "test.h"

static char tmpdir[256];

static void path_in_tmp(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    path_in_tmp(path, sizeof(path), name);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The whole file as a malloc'd string. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    if (buf) fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

/* Runs sql; returns the last result's tag (static copy) or NULL on error. */
static const char *tag_of(rackdb_session *s, const char *sql)
{
    static char tag[128];
    rackdb_result *r;
    rackdb_error *e;
    if (rackdb_exec(s, sql, &r, &e) != RACKDB_OK) {
        fprintf(stderr, "unexpected error for %s: %s\n", sql, rackdb_error_message(e));
        rackdb_error_free(e);
        return NULL;
    }
    snprintf(tag, sizeof(tag), "%s", r ? rackdb_result_tag(r) : "(none)");
    rackdb_result_free(r);
    return tag;
}

/* Runs sql expecting an error; returns its SQLSTATE (static copy). */
static const char *error_of(rackdb_session *s, const char *sql)
{
    static char state[8];
    rackdb_result *r = NULL;
    rackdb_error *e = NULL;
    if (rackdb_exec(s, sql, &r, &e) == RACKDB_OK) {
        rackdb_result_free(r);
        return "none";
    }
    snprintf(state, sizeof(state), "%s", rackdb_error_sqlstate(e));
    rackdb_error_free(e);
    return state;
}

/* Rows of table `name` as rackdb_tables reports them, -1 when missing. */
static long long table_rows(rackdb *db, const char *name)
{
    rackdb_result *r;
    rackdb_error *e;
    if (rackdb_tables(db, &r, &e) != RACKDB_OK) {
        rackdb_error_free(e);
        return -2;
    }
    long long rows = -1;
    for (uint64_t i = 0; i < rackdb_result_row_count(r); i++)
        if (strcmp(rackdb_result_text(r, i, 0), name) == 0) rows = rackdb_result_int64(r, i, 2);
    rackdb_result_free(r);
    return rows;
}

static void open_memory(rackdb **db, rackdb_session **s)
{
    rackdb_error *e = NULL;
    *db = NULL;
    *s = NULL;
    if (rackdb_open(NULL, db, &e) != RACKDB_OK || rackdb_session_open(*db, s, &e) != RACKDB_OK)
        rackdb_error_free(e);
}

static void test_statements_one_at_a_time(void)
{
    rackdb *db;
    rackdb_session *s;
    open_memory(&db, &s);
    REQUIRE(s);
    const char *sql = "create table a (x int);\n  ;  -- nothing\n"
                      "create table a (y int);\n"
                      "create table b (z int)";
    rackdb_result *r;
    rackdb_error *e;
    CHECK_EQ_INT(rackdb_next(s, &sql, &r, &e), RACKDB_OK);
    CHECK_STREQ(rackdb_result_tag(r), "CREATE TABLE");
    CHECK(!rackdb_result_has_rows(r));
    CHECK_EQ_INT(rackdb_result_column_count(r), 0);
    rackdb_result_free(r);
    /* The empty statement is skipped; the duplicate fails with its own text. */
    CHECK_EQ_INT(rackdb_next(s, &sql, &r, &e), RACKDB_ERROR);
    REQUIRE(e);
    CHECK_STREQ(rackdb_error_sqlstate(e), "42P07");
    CHECK_STREQ(rackdb_error_message(e), "relation \"a\" already exists");
    CHECK_STREQ(rackdb_error_statement(e), "create table a (y int);");
    CHECK_EQ_INT(rackdb_error_position(e), 14);
    CHECK_EQ_INT(rackdb_error_class_of(e), RACKDB_ERR_SYNTAX);
    rackdb_error_free(e);
    /* The caller may go on after an error. */
    CHECK_EQ_INT(rackdb_next(s, &sql, &r, &e), RACKDB_OK);
    CHECK_STREQ(rackdb_result_tag(r), "CREATE TABLE");
    rackdb_result_free(r);
    CHECK_EQ_INT(rackdb_next(s, &sql, &r, &e), RACKDB_DONE);
    CHECK_EQ_INT(table_rows(db, "b"), 0);

    /* rackdb_exec stops at the first error. */
    CHECK_STREQ(error_of(s, "create table c (x int); selec 1; create table d (x int)"), "42601");
    CHECK_EQ_INT(table_rows(db, "c"), 0);
    CHECK_EQ_INT(table_rows(db, "d"), -1);
    rackdb_session_close(s);
    rackdb_close(db);
}

static void test_statement_splitting(void)
{
    const char *t1 = "select ';' from t; x";
    CHECK_EQ_INT(rackdb_statement_length(t1, strlen(t1)), 18);
    const char *t2 = "select 'it''s;' -- ; comment\n, \"a;b\" /* ; /* nested; */ ; */ ;";
    CHECK_EQ_INT(rackdb_statement_length(t2, strlen(t2)), strlen(t2));
    const char *t3 = "select 'open;";
    CHECK_EQ_INT(rackdb_statement_length(t3, strlen(t3)), 0);
    const char *t4 = "select E'\\';' ;";
    CHECK_EQ_INT(rackdb_statement_length(t4, strlen(t4)), strlen(t4));
    const char *t5 = "select $$;$$, $tag$ ; $tag$;";
    CHECK_EQ_INT(rackdb_statement_length(t5, strlen(t5)), strlen(t5));
    const char *t6 = "select 1 /* open ;";
    CHECK_EQ_INT(rackdb_statement_length(t6, strlen(t6)), 0);
    CHECK(rackdb_is_blank(" -- x\n /* y */ \n", 16));
    CHECK(!rackdb_is_blank(" -- x\n y", 8));
}

static void test_copy(void)
{
    rackdb *db;
    rackdb_session *s;
    open_memory(&db, &s);
    REQUIRE(s);
    write_file("people.csv", "id,name,born,score\n1,\"Smith, Jo\",1990-05-01,12.50\n"
                             "2,Ann,,3\n3,Zed,2001-12-31,-0.25\n");
    write_file("bad.csv", "id,name,born,score\n4,x,2000-01-01,1\n5,y,2000-13-01,1\n");
    write_file("people.tbl", "7|Bo|1980-01-01|1.00|\n8|Cy|1981-02-02|2.00|\n");
    char sql[1024], out[512];
    CHECK_STREQ(tag_of(s, "create table people (id integer not null, name varchar(20), "
                          "born date, score decimal(10,2))"),
                "CREATE TABLE");
    snprintf(sql, sizeof(sql), "copy people from '%s/people.csv' (format csv, header)", tmpdir);
    CHECK_STREQ(tag_of(s, sql), "COPY 3");
    /* A bad date on line 3: the whole COPY fails and the table keeps 3 rows. */
    snprintf(sql, sizeof(sql), "copy people from '%s/bad.csv' (format csv, header true)", tmpdir);
    rackdb_result *r;
    rackdb_error *e;
    CHECK_EQ_INT(rackdb_exec(s, sql, &r, &e), RACKDB_ERROR);
    REQUIRE(e);
    CHECK_STREQ(rackdb_error_sqlstate(e), "22008");
    CHECK(strstr(rackdb_error_message(e), "bad.csv") != NULL);
    CHECK(strstr(rackdb_error_message(e), "line 3") != NULL);
    rackdb_error_free(e);
    CHECK_EQ_INT(table_rows(db, "people"), 3);
    /* A .tbl file is read in dbgen's format without options. */
    snprintf(sql, sizeof(sql), "copy people from '%s/people.tbl'", tmpdir);
    CHECK_STREQ(tag_of(s, sql), "COPY 2");
    CHECK_EQ_INT(table_rows(db, "people"), 5);
    /* Out again as CSV: the same values, NULL empty, "" for the empty string. */
    path_in_tmp(out, sizeof(out), "out.csv");
    snprintf(sql, sizeof(sql), "copy people to '%s' (format csv, header)", out);
    CHECK_STREQ(tag_of(s, sql), "COPY 5");
    char *text = read_file(out);
    CHECK_STREQ(text, "id,name,born,score\n1,\"Smith, Jo\",1990-05-01,12.50\n2,Ann,,3.00\n"
                      "3,Zed,2001-12-31,-0.25\n7,Bo,1980-01-01,1.00\n8,Cy,1981-02-02,2.00\n");
    free(text);
    /* Text format with a delimiter. */
    snprintf(sql, sizeof(sql), "copy people to '%s' (delimiter '|')", out);
    CHECK_STREQ(tag_of(s, sql), "COPY 5");
    text = read_file(out);
    CHECK(text && strncmp(text, "1|Smith, Jo|1990-05-01|12.50\n", 29) == 0);
    free(text);
    /* Errors. */
    CHECK_STREQ(error_of(s, "copy nosuch from '/tmp/x.csv'"), "42P01");
    snprintf(sql, sizeof(sql), "copy people from '%s/missing.csv' (format csv)", tmpdir);
    CHECK_STREQ(error_of(s, sql), "58P01");
    CHECK_STREQ(error_of(s, "copy people from '/tmp/x.csv' (format xml)"), "22023");
    CHECK_STREQ(error_of(s, "copy people from '/tmp/x.csv' (delimiter 'ab')"), "22023");
    CHECK_STREQ(error_of(s, "copy people from '/tmp/x.csv' (quote '\"')"), "42601");
    rackdb_session_close(s);
    rackdb_close(db);
}

static void test_insert(void)
{
    rackdb *db;
    rackdb_session *s;
    open_memory(&db, &s);
    REQUIRE(s);
    CHECK_STREQ(tag_of(s, "create table t (i integer not null, b bigint, d decimal(6,2), "
                          "f double, dt date, ok boolean, c char(3), v varchar(5))"),
                "CREATE TABLE");
    CHECK_STREQ(tag_of(s, "insert into t values (1, -5, 12.345, 1e3, date '1998-12-01', true, "
                          "'ab ', 'hello'), (2, null, -3, 2.5, '2000-02-29', 'no', null, ''), "
                          "(3, '7', '1.5', '4', '1999-01-01'::date, 'on', 'x', 42)"),
                "INSERT 0 3");
    CHECK_STREQ(tag_of(s, "insert into t (v, i) values ('z', 4)"), "INSERT 0 1");
    CHECK_EQ_INT(table_rows(db, "t"), 4);
    char out[512], sql[1024];
    path_in_tmp(out, sizeof(out), "t.csv");
    snprintf(sql, sizeof(sql), "copy t to '%s' (format csv)", out);
    CHECK_STREQ(tag_of(s, sql), "COPY 4");
    char *text = read_file(out);
    CHECK_STREQ(text, "1,-5,12.35,1000,1998-12-01,t,ab,hello\n"
                      "2,,-3.00,2.5,2000-02-29,f,,\"\"\n"
                      "3,7,1.50,4,1999-01-01,t,x,42\n"
                      "4,,,,,,,z\n");
    free(text);
    /* Every failure leaves the table as it was. */
    CHECK_STREQ(error_of(s, "insert into t (i) values ('abc')"), "22P02");
    CHECK_STREQ(error_of(s, "insert into t (i) values (3000000000)"), "22003");
    CHECK_STREQ(error_of(s, "insert into t (i, d) values (1, 12345.6)"), "22003");
    CHECK_STREQ(error_of(s, "insert into t (i, dt) values (1, '1999-02-30')"), "22008");
    CHECK_STREQ(error_of(s, "insert into t (i, dt) values (1, 'yesterday')"), "22007");
    CHECK_STREQ(error_of(s, "insert into t (i, v) values (1, 'toolong')"), "22001");
    CHECK_STREQ(error_of(s, "insert into t (v) values ('x')"), "23502");
    CHECK_STREQ(error_of(s, "insert into t (i, ok) values (1, 5)"), "42804");
    CHECK_STREQ(error_of(s, "insert into t (i) values (1), (2), ('x')"), "22P02");
    CHECK_STREQ(error_of(s, "insert into t (i) values (1), (2147483647 + 1)"), "22003");
    CHECK_STREQ(error_of(s, "insert into t (i, nope) values (1, 2)"), "42703");
    CHECK_STREQ(error_of(s, "insert into t (i) values (1, 2)"), "42601");
    CHECK_STREQ(error_of(s, "insert into nope values (1)"), "42P01");
    CHECK_EQ_INT(table_rows(db, "t"), 4);

    /* Rows with expressions run through the executor. */
    CHECK_STREQ(error_of(s, "insert into t (i) values (1 + 2), (-(4))"), "none");
    CHECK_EQ_INT(table_rows(db, "t"), 6);

    /* The error points at the offending value. */
    const char *bad = "insert into t (i) values ('abc')";
    rackdb_result *r;
    rackdb_error *e;
    CHECK_EQ_INT(rackdb_exec(s, bad, &r, &e), RACKDB_ERROR);
    CHECK_EQ_INT(rackdb_error_position(e), 27);
    CHECK_STREQ(rackdb_error_message(e), "invalid input syntax for type integer: \"abc\"");
    rackdb_error_free(e);
    rackdb_session_close(s);
    rackdb_close(db);
}

/* The single value a SHOW returns. */
static char *show(rackdb_session *s, const char *name)
{
    static char value[64];
    char sql[128];
    snprintf(sql, sizeof(sql), "show %s", name);
    rackdb_result *r;
    rackdb_error *e;
    if (rackdb_exec(s, sql, &r, &e) != RACKDB_OK) {
        rackdb_error_free(e);
        return NULL;
    }
    snprintf(value, sizeof(value), "%s",
             rackdb_result_row_count(r) == 1 ? rackdb_result_text(r, 0, 0) : "?");
    rackdb_result_free(r);
    return value;
}

static void test_settings(void)
{
    rackdb *db;
    rackdb_session *s;
    open_memory(&db, &s);
    REQUIRE(s);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld", cores);
    CHECK_STREQ(show(s, "threads"), buf);
    CHECK_STREQ(tag_of(s, "set threads = 3"), "SET");
    CHECK_STREQ(show(s, "threads"), "3");
    CHECK_STREQ(tag_of(s, "set threads to '12'"), "SET");
    CHECK_STREQ(show(s, "THREADS"), "12");
    CHECK_STREQ(tag_of(s, "set threads to default"), "SET");
    CHECK_STREQ(show(s, "threads"), buf);
    CHECK_STREQ(error_of(s, "set threads = 0"), "22023");
    CHECK_STREQ(error_of(s, "set threads = 1025"), "22023");
    CHECK_STREQ(tag_of(s, "set join_algorithm = radix"), "SET");
    CHECK_STREQ(show(s, "join_algorithm"), "radix");
    CHECK_STREQ(error_of(s, "set join_algorithm = 'nested'"), "22023");
    CHECK_STREQ(tag_of(s, "set memory_limit = '512MB'"), "SET");
    CHECK_STREQ(show(s, "memory_limit"), "512MB");
    CHECK_STREQ(tag_of(s, "set memory_limit = '8 gb'"), "SET");
    CHECK_STREQ(show(s, "memory_limit"), "8GB");
    CHECK_STREQ(error_of(s, "set memory_limit = 'lots'"), "22023");
    CHECK_STREQ(error_of(s, "set nosuch = 1"), "42704");
    CHECK_STREQ(error_of(s, "show nosuch"), "42704");

    rackdb_result *r;
    rackdb_error *e;
    CHECK_EQ_INT(rackdb_exec(s, "show all", &r, &e), RACKDB_OK);
    REQUIRE(r);
    CHECK_STREQ(rackdb_result_tag(r), "SHOW");
    CHECK_EQ_INT(rackdb_result_column_count(r), 3);
    CHECK_STREQ(rackdb_result_column_name(r, 1), "setting");
    CHECK_STREQ(rackdb_result_column_type(r, 1), "VARCHAR");
    CHECK_EQ_INT(rackdb_result_column_oid(r, 1), 1043);
    CHECK_EQ_INT(rackdb_result_row_count(r), 5);
    CHECK_STREQ(rackdb_result_text(r, 1, 0), "join_algorithm");
    CHECK_STREQ(rackdb_result_text(r, 1, 1), "radix");
    rackdb_result_free(r);

    /* Settings belong to the session. */
    rackdb_session *s2;
    REQUIRE(rackdb_session_open(db, &s2, &e) == RACKDB_OK);
    CHECK_STREQ(show(s2, "join_algorithm"), "auto");
    CHECK_EQ_INT(rackdb_session_set(s2, "threads", "2", &e), RACKDB_OK);
    CHECK_STREQ(show(s2, "threads"), "2");
    CHECK_EQ_INT(rackdb_session_set(s2, "threads", "x", &e), RACKDB_ERROR);
    CHECK_STREQ(rackdb_error_sqlstate(e), "22023");
    rackdb_error_free(e);
    rackdb_session_close(s2);
    rackdb_session_close(s);
    rackdb_close(db);
}

static void test_queries_and_transactions(void)
{
    rackdb *db;
    rackdb_session *s;
    open_memory(&db, &s);
    REQUIRE(s);
    rackdb_result *r;
    rackdb_error *e = NULL;
    /* Queries are bound against the catalog first: name errors carry the
     * binder's SQLSTATE and point into the statement's own text. */
    CHECK_EQ_INT(rackdb_exec(s, "  select nope", &r, &e), RACKDB_ERROR);
    REQUIRE(e);
    CHECK_STREQ(rackdb_error_sqlstate(e), "42703");
    CHECK_STREQ(rackdb_error_message(e), "column \"nope\" does not exist");
    CHECK_EQ_INT(rackdb_error_class_of(e), RACKDB_ERR_SYNTAX);
    CHECK_EQ_INT(rackdb_error_position(e), 8);
    CHECK_STREQ(rackdb_error_statement(e), "select nope");
    rackdb_error_free(e);
    CHECK_STREQ(tag_of(s, "create table q (a int)"), "CREATE TABLE");
    CHECK_STREQ(error_of(s, "select a from nosuch"), "42P01");
    CHECK_STREQ(error_of(s, "select b from q"), "42703");
    CHECK_STREQ(error_of(s, "explain select b from q"), "42703");
    CHECK_STREQ(error_of(s, "insert into q select b from q"), "42703");
    CHECK_STREQ(tag_of(s, "begin"), "BEGIN");
    CHECK_STREQ(tag_of(s, "commit"), "COMMIT");
    CHECK_STREQ(tag_of(s, "rollback"), "ROLLBACK");
    CHECK_STREQ(error_of(s, "call nosuch()"), "42883");
    /* An interrupt between statements does not cancel the next one. */
    rackdb_interrupt(s);
    CHECK_STREQ(tag_of(s, "create table after_interrupt (x int)"), "CREATE TABLE");
    rackdb_session_close(s);
    rackdb_close(db);
}

static void test_views_and_drop(void)
{
    rackdb *db;
    rackdb_session *s;
    open_memory(&db, &s);
    REQUIRE(s);
    CHECK_STREQ(tag_of(s, "create table t (x int)"), "CREATE TABLE");
    CHECK_STREQ(tag_of(s, "create view v (a) as select x from t where x > 1"), "CREATE VIEW");
    CHECK_STREQ(error_of(s, "create view v as select 1"), "42P07");
    CHECK_STREQ(error_of(s, "create view w as select nope from t"), "42703");
    CHECK_STREQ(error_of(s, "create view w as select x from nosuch"), "42P01");
    CHECK_STREQ(error_of(s, "create view w (a, b) as select x from t"), "42601");
    CHECK_STREQ(error_of(s, "drop view w"), "42P01"); /* none of them was created */
    CHECK_STREQ(error_of(s, "create table v (y int)"), "42P07");
    CHECK_STREQ(error_of(s, "drop table v"), "42809");
    CHECK_STREQ(error_of(s, "insert into v values (1)"), "42809");
    char *schema;
    rackdb_error *e;
    CHECK_EQ_INT(rackdb_schema(db, "v", &schema, &e), RACKDB_OK);
    CHECK_STREQ(schema, "CREATE VIEW v (a) AS select x from t where x > 1;\n");
    rackdb_free(schema);
    CHECK_EQ_INT(rackdb_schema(db, "nope", &schema, &e), RACKDB_ERROR);
    CHECK_STREQ(rackdb_error_sqlstate(e), "42P01");
    rackdb_error_free(e);
    CHECK_STREQ(tag_of(s, "drop view v"), "DROP VIEW");
    CHECK_STREQ(error_of(s, "drop view v"), "42P01");
    CHECK_STREQ(tag_of(s, "drop view if exists v"), "DROP VIEW");
    CHECK_STREQ(tag_of(s, "drop table t"), "DROP TABLE");
    CHECK_STREQ(error_of(s, "drop table t"), "42P01");
    CHECK_STREQ(tag_of(s, "drop table if exists t"), "DROP TABLE");
    CHECK_STREQ(tag_of(s, "create table if not exists u (x int)"), "CREATE TABLE");
    CHECK_STREQ(tag_of(s, "create table if not exists u (y int)"), "CREATE TABLE");
    CHECK_EQ_INT(rackdb_schema(db, NULL, &schema, &e), RACKDB_OK);
    CHECK_STREQ(schema, "CREATE TABLE u (\n    x INTEGER\n);\n");
    rackdb_free(schema);
    rackdb_session_close(s);
    rackdb_close(db);
}

static void test_directory_persistence(void)
{
    char dir[512], sql[1024], out1[512], out2[512];
    path_in_tmp(dir, sizeof(dir), "db/nested");
    rackdb *db;
    rackdb_session *s;
    rackdb_error *e;
    REQUIRE(rackdb_open(dir, &db, &e) == RACKDB_OK);
    REQUIRE(rackdb_session_open(db, &s, &e) == RACKDB_OK);
    /* A second instance on the same directory is refused. */
    rackdb *other;
    CHECK_EQ_INT(rackdb_open(dir, &other, &e), RACKDB_ERROR);
    CHECK(strstr(rackdb_error_message(e), "in use") != NULL);
    rackdb_error_free(e);

    write_file("n.tbl", "0|ALGERIA|0| haggle|\n1|ARGENTINA|1|al foxes|\n2|BRAZIL|1||\n");
    CHECK_STREQ(tag_of(s, "create table nation (n_nationkey integer not null, n_name char(25) "
                          "not null, n_regionkey integer not null, n_comment varchar(152))"),
                "CREATE TABLE");
    snprintf(sql, sizeof(sql), "copy nation from '%s/n.tbl'", tmpdir);
    CHECK_STREQ(tag_of(s, sql), "COPY 3");
    CHECK_STREQ(tag_of(s, "insert into nation values (3, 'CANADA', 1, null)"), "INSERT 0 1");
    CHECK_STREQ(tag_of(s, "create table gone (x int)"), "CREATE TABLE");
    CHECK_STREQ(tag_of(s, "drop table gone"), "DROP TABLE");
    CHECK_STREQ(tag_of(s, "create view nv as select n_name from nation"), "CREATE VIEW");
    path_in_tmp(out1, sizeof(out1), "before.tbl");
    snprintf(sql, sizeof(sql), "copy nation to '%s'", out1);
    CHECK_STREQ(tag_of(s, sql), "COPY 4");
    char *schema1;
    REQUIRE(rackdb_schema(db, NULL, &schema1, &e) == RACKDB_OK);
    rackdb_session_close(s);
    rackdb_close(db);

    /* Reopened: the same tables, rows, views. */
    REQUIRE(rackdb_open(dir, &db, &e) == RACKDB_OK);
    REQUIRE(rackdb_session_open(db, &s, &e) == RACKDB_OK);
    CHECK_EQ_INT(table_rows(db, "nation"), 4);
    CHECK_EQ_INT(table_rows(db, "gone"), -1);
    char *schema2;
    REQUIRE(rackdb_schema(db, NULL, &schema2, &e) == RACKDB_OK);
    CHECK_STREQ(schema2, schema1);
    path_in_tmp(out2, sizeof(out2), "after.tbl");
    snprintf(sql, sizeof(sql), "copy nation to '%s'", out2);
    CHECK_STREQ(tag_of(s, sql), "COPY 4");
    char *a = read_file(out1), *b = read_file(out2);
    CHECK_STREQ(b, a);
    CHECK(a && strstr(a, "3|CANADA|1||\n") != NULL);
    free(a);
    free(b);
    rackdb_free(schema1);
    rackdb_free(schema2);
    /* A failed statement changes nothing on disk either. */
    CHECK_STREQ(error_of(s, "insert into nation values (9, 'X', 1, null), (10, null, 1, null)"),
                "23502");
    rackdb_session_close(s);
    rackdb_close(db);
    REQUIRE(rackdb_open(dir, &db, &e) == RACKDB_OK);
    CHECK_EQ_INT(table_rows(db, "nation"), 4);
    rackdb_close(db);

    /* A directory with someone else's files is not taken over. */
    char foreign[512];
    path_in_tmp(foreign, sizeof(foreign), "foreign");
    mkdir(foreign, 0755);
    write_file("foreign/notes.txt", "mine\n");
    CHECK_EQ_INT(rackdb_open(foreign, &db, &e), RACKDB_ERROR);
    rackdb_error_free(e);
}

/* Two sessions on one instance, each in its own thread, inserting into its
 * own table while listing the catalog: every row arrives, none twice. */
typedef struct worker_arg {
    rackdb *db;
    const char *table;
    int failures;
} worker_arg;

static void *insert_worker(void *p)
{
    worker_arg *a = p;
    rackdb_session *s;
    rackdb_error *e;
    if (rackdb_session_open(a->db, &s, &e) != RACKDB_OK) {
        rackdb_error_free(e);
        a->failures++;
        return NULL;
    }
    char sql[128];
    for (int i = 0; i < 200; i++) {
        snprintf(sql, sizeof(sql), "insert into %s values (%d, 'row %d')", a->table, i, i);
        if (rackdb_exec(s, sql, NULL, &e) != RACKDB_OK) {
            rackdb_error_free(e);
            a->failures++;
        }
        rackdb_result *r;
        if (rackdb_tables(a->db, &r, &e) != RACKDB_OK) {
            rackdb_error_free(e);
            a->failures++;
        } else {
            rackdb_result_free(r);
        }
    }
    rackdb_session_close(s);
    return NULL;
}

static void test_concurrent_sessions(void)
{
    rackdb *db;
    rackdb_session *s;
    open_memory(&db, &s);
    REQUIRE(s);
    CHECK_STREQ(tag_of(s, "create table t1 (k int, v varchar(20)); "
                          "create table t2 (k int, v varchar(20))"),
                "CREATE TABLE");
    worker_arg args[2] = {{db, "t1", 0}, {db, "t2", 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        REQUIRE(pthread_create(&threads[i], NULL, insert_worker, &args[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    CHECK_EQ_INT(args[0].failures + args[1].failures, 0);
    CHECK_EQ_INT(table_rows(db, "t1"), 200);
    CHECK_EQ_INT(table_rows(db, "t2"), 200);
    rackdb_session_close(s);
    rackdb_close(db);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "%s/rackdb-test-exec-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_statements_one_at_a_time);
    RUN(test_statement_splitting);
    RUN(test_copy);
    RUN(test_insert);
    RUN(test_settings);
    RUN(test_queries_and_transactions);
    RUN(test_views_and_drop);
    RUN(test_directory_persistence);
    RUN(test_concurrent_sessions);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return TEST_REPORT();
}
