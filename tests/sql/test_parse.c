/*
 * test_parse.c — the parser end to end: SQL text → AST → S-expression,
 * compared with the expected tree for every statement kind and the
 * expression and query constructs; precedence; source positions and
 * statement text ranges; all 22 TPC-H queries as written; and every
 * out-of-memory point of a parse reported as 53200 without leaks.
 */
#include <stdlib.h>
#include <string.h>

#include "sql/parse.h"
#include "test.h"

/* Parses sql (one statement) and compares its printed tree with expected. */
static void check_tree(const char *sql, const char *expected)
{
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    sql_stmt_list *l = NULL;
    sto_status st = sql_parse(a, sql, &l);
    if (st) {
        fprintf(stderr, "parse of %s failed: %s\n", sql, st->message);
        sto_status_free(st);
        CHECK(0);
    } else {
        CHECK_EQ_INT(l->count, 1);
        if (l->count == 1) {
            char *got = sql_stmt_to_string(l->items[0]);
            if (!got || strcmp(got, expected) != 0) fprintf(stderr, "for: %s\n", sql);
            CHECK_STREQ(got, expected);
            free(got);
        }
    }
    sql_arena_destroy(a);
}

static void test_select_clauses(void)
{
    check_tree("SELECT a, b AS x, c y FROM t WHERE a > 1 GROUP BY a, b HAVING count(*) > 2 "
               "ORDER BY 1, x DESC, c ASC NULLS FIRST, d DESC NULLS LAST LIMIT 10 OFFSET 5",
               "(select (items a (as b x) (as c y)) (from t) (where (> a 1)) (group-by a b) "
               "(having (> (count *) 2)) (order-by 1 (desc x) (asc c nulls-first) "
               "(desc d nulls-last)) (limit 10) (offset 5))");
    check_tree("select distinct a from t", "(select distinct (items a) (from t))");
    check_tree("select all a from t", "(select (items a) (from t))");
    check_tree("select 1", "(select (items 1))");
    check_tree("select *, t.*, \"T\".a from t", "(select (items * t.* \"T\".a) (from t))");
    check_tree("select a from t fetch first 5 rows only", "(select (items a) (from t) (limit 5))");
    check_tree("select a from t offset 10 rows fetch next row only",
               "(select (items a) (from t) (limit 1) (offset 10))");
    check_tree("select a from t offset 3 limit 2",
               "(select (items a) (from t) (limit 2) (offset 3))");
    check_tree("select a from t limit $1", "(select (items a) (from t) (limit $1))");
    check_tree("select a from t limit all", "(select (items a) (from t))");
    check_tree("select a from t limit all offset 2", "(select (items a) (from t) (offset 2))");
}

static void test_from_clause(void)
{
    check_tree("select * from a, b x, c as y, d as z (p, q)",
               "(select (items *) (from a (as b x) (as c y) (as d z (p q))))");
    check_tree("select * from a join b using (x, y) left join c on a.x = c.x cross join d, "
               "(select 1) as s(a) full outer join e on true right join f on false",
               "(select (items *) (from (cross-join (left-join (join a b (using x y)) c "
               "(on (= a.x c.x))) d) (right-join (full-join (as (select (items 1)) s (a)) e "
               "(on true)) f (on false))))");
    check_tree("select * from a inner join b on 1 = 1 left outer join c on 2 = 2 right outer "
               "join d on 3 = 3",
               "(select (items *) (from (right-join (left-join (join a b (on (= 1 1))) c "
               "(on (= 2 2))) d (on (= 3 3)))))");
    check_tree("select * from (a join b on true) join c on false",
               "(select (items *) (from (join (join a b (on true)) c (on false))))");
    check_tree("select * from (select 1)", "(select (items *) (from (select (items 1))))");
    check_tree("select a from ((select 1) union (select 2)) as u",
               "(select (items a) (from (as (union (select (items 1)) (select (items 2))) u)))");
    check_tree("with x (a) as (select 1), y as (select 2) select * from x, y",
               "(select (with (x (columns a) (select (items 1))) (y (select (items 2)))) "
               "(items *) (from x y))");
}

static void test_set_operations(void)
{
    check_tree("select 1 union select 2 intersect select 3",
               "(union (select (items 1)) (intersect (select (items 2)) (select (items 3))))");
    check_tree("select 1 intersect select 2 union select 3",
               "(union (intersect (select (items 1)) (select (items 2))) (select (items 3)))");
    check_tree("select 1 union select 2 union all select 3",
               "(union-all (union (select (items 1)) (select (items 2))) (select (items 3)))");
    check_tree("select 1 except all select 2 except distinct select 3",
               "(except (except-all (select (items 1)) (select (items 2))) (select (items 3)))");
    check_tree("select 1 union (select 2 union select 3)",
               "(union (select (items 1)) (union (select (items 2)) (select (items 3))))");
    check_tree("(select 1 limit 1) union (select 2) order by 1 limit 3",
               "(union (select (items 1) (limit 1)) (select (items 2)) (order-by 1) (limit 3))");
    check_tree("select a from t union select b from u order by 1",
               "(union (select (items a) (from t)) (select (items b) (from u)) (order-by 1))");
    check_tree("with w as (select 1) select * from w union all select 2",
               "(union-all (with (w (select (items 1)))) (select (items *) (from w)) "
               "(select (items 2)))");
    check_tree("values (1, 'a'), (2, null)", "(values (1 'a') (2 null))");
    check_tree("values (1) order by 1", "(values (1) (order-by 1))");
    check_tree("((select 1))", "(select (items 1))");
}

static void test_expressions(void)
{
    check_tree("select 1, 0.06, .5, 7., 1e3, 2.5E-2, 99999999999999999999, 'it''s', '', "
               "true, false, null, date '1998-12-01', interval '90' day, "
               "interval '3' month, interval '-1' year, interval '90' day (3), $2",
               "(select (items 1 0.06 .5 7. 1e3 2.5E-2 99999999999999999999 'it''s' '' true "
               "false null (date '1998-12-01') (interval 90 day) (interval 3 month) "
               "(interval -1 year) (interval 90 day) $2))");
    check_tree("select a, t.a, \"Mixed\", LineItem.L_Tax from t",
               "(select (items a t.a \"Mixed\" lineitem.l_tax) (from t))");
    check_tree("select x not in (1, 2), y in (select 1), z not in (select 2) from t",
               "(select (items (not-in x (list 1 2)) (in y (select (items 1))) "
               "(not-in z (select (items 2)))) (from t))");
    check_tree("select exists (select 1), (select 1), ((select 2)), ((1))",
               "(select (items (exists (select (items 1))) (subquery (select (items 1))) "
               "(subquery (select (items 2))) 1))");
    check_tree("select x = any (select 1), y <> all (select 2), z < some (select 3), "
               "w >= all (select 4) from t",
               "(select (items (= any x (select (items 1))) (<> all y (select (items 2))) "
               "(< any z (select (items 3))) (>= all w (select (items 4)))) (from t))");
    check_tree("select case a when 1 then 'x' when 2 then 'y' end, "
               "case when a > 0 then 1 else 0 end from t",
               "(select (items (case a (when 1 'x') (when 2 'y')) "
               "(case (when (> a 0) 1) (else 0))) (from t))");
    check_tree("select a like 'x' escape '!', a not like 'y', a ilike 'z', a not ilike 'w' "
               "escape '#' from t",
               "(select (items (like a 'x' (escape '!')) (not-like a 'y') (ilike a 'z') "
               "(not-ilike a 'w' (escape '#'))) (from t))");
    check_tree("select a is null, a is not null, a between 1 and 2, a not between 3 and 4 from t",
               "(select (items (is-null a) (is-not-null a) (between a 1 2) "
               "(not-between a 3 4)) (from t))");
    check_tree("select cast(a as decimal(15,2)), a::int, b::double precision, "
               "c::character varying(10), d::char, e::text, cast(f as numeric), "
               "g::bigint, h::varchar(3), i::character(2), j::date, k::boolean, l::real",
               "(select (items (cast a DECIMAL(15,2)) (cast a INTEGER) (cast b DOUBLE) "
               "(cast c VARCHAR(10)) (cast d CHAR(1)) (cast e VARCHAR) (cast f DECIMAL) "
               "(cast g BIGINT) (cast h VARCHAR(3)) (cast i CHAR(2)) (cast j DATE) "
               "(cast k BOOLEAN) (cast l DOUBLE)))");
    check_tree("select count(*), count(a), count(distinct a), sum(all b), avg(c), min(d), "
               "max(e), f(), coalesce(a, 0), nullif(a, b) from t",
               "(select (items (count *) (count a) (count distinct a) (sum b) (avg c) (min d) "
               "(max e) (f) (coalesce a 0) (nullif a b)) (from t))");
    check_tree("select extract(year from d), extract(MONTH from d), extract(day from d), "
               "substring(s from 1 for 2), substring(s from 3), substring(s, 1, 2) from t",
               "(select (items (extract year d) (extract month d) (extract day d) "
               "(substring s 1 2) (substring s 3) (substring s 1 2)) (from t))");
    check_tree("select -a, +b, not c, a || 'x' from t",
               "(select (items (- a) (+ b) (not c) (|| a 'x')) (from t))");
}

static void test_precedence(void)
{
    check_tree("select 1 + 2 * 3 - 4 / 5 % 6", "(select (items (- (+ 1 (* 2 3)) (% (/ 4 5) 6))))");
    check_tree("select a or b and not c", "(select (items (or a (and b (not c)))))");
    check_tree("select not a = b", "(select (items (not (= a b))))");
    check_tree("select a = b is null", "(select (items (is-null (= a b))))");
    check_tree("select -a::int", "(select (items (- (cast a INTEGER))))");
    check_tree("select - a * 3", "(select (items (* (- a) 3)))");
    /* a minus before a number is part of the constant (PostgreSQL): so
     * -2147483648 is an INTEGER and -9223372036854775808 a BIGINT */
    check_tree("select - 2 * 3", "(select (items (* -2 3)))");
    check_tree("select -2147483648, -9223372036854775808, -(5), - -1, -1.5",
               "(select (items -2147483648 -9223372036854775808 -5 1 (- 1.5)))");
    check_tree("select a || b = c", "(select (items (= (|| a b) c)))");
    check_tree("select a + b || c", "(select (items (|| (+ a b) c)))");
    check_tree("select a between 1 and 2 and b", "(select (items (and (between a 1 2) b)))");
    check_tree("select a + 1 between b - 1 and c * 2",
               "(select (items (between (+ a 1) (- b 1) (* c 2))))");
    check_tree("select a like b || 'x'", "(select (items (like a (|| b 'x'))))");
    check_tree("select not exists (select 1) and a in (1)",
               "(select (items (and (not (exists (select (items 1)))) (in a (list 1)))))");
    check_tree("select (a + b) * c", "(select (items (* (+ a b) c)))");
    check_tree("select date '1998-12-01' - interval '90' day (3)",
               "(select (items (- (date '1998-12-01') (interval 90 day))))");
}

static void test_contextual_keywords(void)
{
    /* DATE, INTERVAL, EXTRACT, SUBSTRING and the non-reserved keywords are
     * names where they are not used as keywords. */
    check_tree("select date, interval, extract, substring, year, value, key, first from t",
               "(select (items date interval extract substring year value key first) (from t))");
    check_tree("select date + 1 from t where interval > 2",
               "(select (items (+ date 1)) (from t) (where (> interval 2)))");
    check_tree("create table t (date date, key int, value int, first text)",
               "(create-table t (columns (date DATE) (key INTEGER) (value INTEGER) "
               "(first VARCHAR)))");
    check_tree("select count(*) as count_order, a as desc from nulls n",
               "(select (items (as (count *) count_order) (as a desc)) (from (as nulls n)))");
    check_tree("select position, trim, leading, trailing, both from t",
               "(select (items position trim leading trailing both) (from t))");
}

static void test_special_calls(void)
{
    /* POSITION and TRIM have their own syntax; LEFT and RIGHT are join
     * keywords that also name functions. */
    check_tree("select position('a' in s), position(x in (y)) from t",
               "(select (items (position s 'a') (position y x)) (from t))");
    check_tree("select trim(s), trim(c from s), trim(from s), trim(leading from s), "
               "trim(trailing 'x' from s), trim(both c from s)",
               "(select (items (btrim s) (btrim s c) (btrim s) (ltrim s) (rtrim s 'x') "
               "(btrim s c)))");
    check_tree("select left(s, 2), right(s, 3) from a left join b on true",
               "(select (items (left s 2) (right s 3)) (from (left-join a b (on true))))");
}

static void test_statements(void)
{
    check_tree("create table if not exists lineitem (l_orderkey bigint not null, "
               "l_quantity decimal(15,2), l_comment varchar(44) null, c char(1), d date, "
               "f double, g real, h boolean, i int primary key, j integer, k numeric, "
               "l character(3), m character varying(5), n text, o float, "
               "primary key (l_orderkey, i))",
               "(create-table lineitem if-not-exists (columns (l_orderkey BIGINT not-null) "
               "(l_quantity DECIMAL(15,2)) (l_comment VARCHAR(44)) (c CHAR(1)) (d DATE) "
               "(f DOUBLE) (g DOUBLE) (h BOOLEAN) (i INTEGER not-null primary-key) (j INTEGER) "
               "(k DECIMAL(18,3)) (l CHAR(3)) (m VARCHAR(5)) (n VARCHAR) (o DOUBLE)) "
               "(primary-key l_orderkey i))");
    check_tree("CREATE TABLE t2 AS SELECT * FROM t",
               "(create-table-as t2 (select (items *) (from t)))");
    check_tree("drop table if exists t", "(drop-table t if-exists)");
    check_tree("drop table t", "(drop-table t)");
    check_tree("create view v (a, b) as select 1, 2",
               "(create-view v (columns a b) (select (items 1 2)))");
    check_tree("drop view if exists v", "(drop-view v if-exists)");
    check_tree("drop view v", "(drop-view v)");
    check_tree("drop table t cascade", "(drop-table t cascade)");
    check_tree("drop view if exists v cascade", "(drop-view v if-exists cascade)");
    check_tree("drop table t restrict", "(drop-table t)");
    /* CASCADE and RESTRICT are unreserved: still usable as names */
    check_tree("drop table cascade", "(drop-table cascade)");
    check_tree("insert into t values (1, 'a'), (2, null)", "(insert t (values (1 'a') (2 null)))");
    check_tree("insert into t (a, b) select x, y from u",
               "(insert t (columns a b) (select (items x y) (from u)))");
    check_tree("insert into t (select 1)", "(insert t (select (items 1)))");
    check_tree("copy lineitem from '/tmp/l.tbl' with (delimiter '|', header false, format csv)",
               "(copy-from lineitem '/tmp/l.tbl' (options (delimiter '|') (header false) "
               "(format 'csv')))");
    check_tree("copy lineitem (a, b) from '/tmp/l.tbl' (header)",
               "(copy-from lineitem (columns a b) '/tmp/l.tbl' (options (header)))");
    check_tree("copy t from 'x' delimiter '|' csv header",
               "(copy-from t 'x' (options (delimiter '|') (format 'csv') (header)))");
    check_tree("copy t from 'x' with delimiter as ',' null ''",
               "(copy-from t 'x' (options (delimiter ',') (null '')))");
    check_tree("copy t from 'x' (null 'NA', header on, format text)",
               "(copy-from t 'x' (options (null 'NA') (header 'on') (format 'text')))");
    check_tree("copy t from 'x' (delimiter E'\\t')",
               "(copy-from t 'x' (options (delimiter '\t')))");
    check_tree("copy t to '/tmp/out.csv' (format csv, header true)",
               "(copy-to t '/tmp/out.csv' (options (format 'csv') (header true)))");
    check_tree("copy t from stdin", "(copy-from t stdin)");
    check_tree("copy t (a) to stdout with (format csv)",
               "(copy-to t (columns a) stdout (options (format 'csv')))");
    check_tree("select stdin, stdout from t", "(select (items stdin stdout) (from t))");
    check_tree("copy (select * from t) to 'o.tbl'",
               "(copy-to (select (items *) (from t)) 'o.tbl')");
    check_tree("call dbgen(sf = 0.1)", "(call dbgen (sf 0.1))");
    check_tree("call dbgen(sf => 1, 'x')", "(call dbgen (sf 1) 'x')");
    check_tree("call f()", "(call f)");
    check_tree("explain select 1", "(explain (select (items 1)))");
    check_tree("explain analyze select * from t", "(explain analyze (select (items *) (from t)))");
    check_tree("set threads = 4", "(set threads 4)");
    check_tree("set search_path to public", "(set search_path 'public')");
    check_tree("set x to default", "(set x default)");
    check_tree("SET DateStyle = 'ISO'", "(set datestyle 'ISO')");
    check_tree("set extra_float_digits = -3", "(set extra_float_digits -3)");
    check_tree("show threads", "(show threads)");
    check_tree("show all", "(show all)");
    check_tree("begin", "(begin)");
    check_tree("begin transaction", "(begin)");
    check_tree("start transaction", "(begin)");
    check_tree("commit work", "(commit)");
    check_tree("end", "(commit)");
    check_tree("rollback", "(rollback)");
}

/* Statement kinds, create-table details and view text, checked on the
 * tree itself rather than its printout. */
static void test_statement_fields(void)
{
    const char *sql = "  create view v as\n  select a\n  from t ;\n"
                      "create table t (a int not null, b decimal(12,2) primary key)";
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    sql_stmt_list *l = NULL;
    sto_status st = sql_parse(a, sql, &l);
    CHECK(st == NULL);
    sto_status_free(st);
    REQUIRE(l && l->count == 2);
    sql_stmt *v = l->items[0];
    CHECK_EQ_INT(v->kind, SQL_STMT_CREATE_VIEW);
    CHECK_STREQ(sql_stmt_kind_name(v->kind), "CREATE VIEW");
    CHECK_STREQ(v->create_view.query_text, "select a\n  from t");
    CHECK_EQ_INT(v->text_start, 2);
    CHECK_EQ_INT(v->text_end, (int)(strstr(sql, " ;") - sql));
    CHECK_EQ_INT(v->pos, 3);
    CHECK_EQ_INT(v->create_view.name_pos, 15);
    sql_stmt *t = l->items[1];
    CHECK_EQ_INT(t->kind, SQL_STMT_CREATE_TABLE);
    CHECK_EQ_INT(t->text_start, (int)(strstr(sql, "create table") - sql));
    CHECK_EQ_INT(t->text_end, (int)strlen(sql));
    REQUIRE(t->create_table.columns.count == 2);
    sql_column_def *c0 = t->create_table.columns.items[0];
    sql_column_def *c1 = t->create_table.columns.items[1];
    CHECK_STREQ(c0->name, "a");
    CHECK_EQ_INT(c0->type.id, STO_TYPE_INTEGER);
    CHECK(c0->not_null && !c0->primary_key);
    CHECK_EQ_INT(c1->type.id, STO_TYPE_DECIMAL);
    CHECK_EQ_INT(c1->type.precision, 12);
    CHECK_EQ_INT(c1->type.scale, 2);
    CHECK(c1->not_null && c1->primary_key);
    sql_arena_destroy(a);
}

/* Positions: columns at their first character, operators at the operator,
 * counted in characters. */
static void test_positions(void)
{
    const char *sql = "select 'é', x.b\n  + c from t where d = $1";
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    sql_stmt_list *l = NULL;
    sto_status st = sql_parse(a, sql, &l);
    CHECK(st == NULL);
    sto_status_free(st);
    REQUIRE(l && l->count == 1);
    sql_query *q = l->items[0]->query;
    CHECK_EQ_INT(l->items[0]->pos, 1);
    CHECK_EQ_INT(q->pos, 1);
    REQUIRE(q->select.count == 2);
    sql_expr *lit = q->select.items[0]->expr;
    CHECK_EQ_INT(lit->kind, SQL_EXPR_LITERAL);
    CHECK_STREQ(lit->lit.text, "é");
    CHECK_EQ_INT(lit->pos, 8);
    sql_expr *plus = q->select.items[1]->expr;
    REQUIRE(plus->kind == SQL_EXPR_BINARY);
    CHECK_EQ_INT(plus->binary.op, SQL_OP_ADD);
    CHECK_EQ_INT(plus->pos, 19);
    CHECK_EQ_INT(plus->height, 2);
    CHECK_EQ_INT(plus->binary.left->pos, 13); /* x.b: at the qualifier */
    CHECK_STREQ(plus->binary.left->column.table, "x");
    CHECK_EQ_INT(plus->binary.right->pos, 21);
    REQUIRE(q->from.count == 1);
    CHECK_EQ_INT(q->from.items[0]->pos, 28);
    sql_expr *eq = q->where;
    REQUIRE(eq && eq->kind == SQL_EXPR_BINARY);
    CHECK_EQ_INT(eq->pos, 38);
    CHECK_EQ_INT(eq->binary.right->kind, SQL_EXPR_PARAM);
    CHECK_EQ_INT(eq->binary.right->param.index, 1);
    sql_arena_destroy(a);
}

static void test_statement_lists(void)
{
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    sql_stmt_list *l = NULL;
    sto_status st = sql_parse(a, "", &l);
    CHECK(st == NULL);
    CHECK(l && l->count == 0);
    st = sql_parse(a, " -- nothing\n ; ; /* at all */", &l);
    CHECK(st == NULL);
    CHECK(l && l->count == 0);
    st = sql_parse(a, ";;select 1;;select 2; begin", &l);
    CHECK(st == NULL);
    REQUIRE(l && l->count == 3);
    CHECK_EQ_INT(l->items[0]->kind, SQL_STMT_SELECT);
    CHECK_EQ_INT(l->items[0]->text_start, 2);
    CHECK_EQ_INT(l->items[0]->text_end, 10);
    CHECK_EQ_INT(l->items[1]->text_start, 12);
    CHECK_EQ_INT(l->items[2]->kind, SQL_STMT_BEGIN);
    CHECK_EQ_INT(l->items[2]->text_start, 22);
    CHECK_EQ_INT(l->items[2]->text_end, 27);
    /* a statement is where its first token is, even a set operation */
    st = sql_parse(a, "\n (select 1) union select 2", &l);
    CHECK(st == NULL);
    REQUIRE(l && l->count == 1);
    CHECK_EQ_INT(l->items[0]->pos, 3);
    CHECK_EQ_INT(l->items[0]->query->pos, 14);
    sql_arena_destroy(a);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 16);
    size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

static void test_tpch_queries(void)
{
    char path[512];
    for (int q = 1; q <= 22; q++) {
        snprintf(path, sizeof(path), "%s/tpch/queries/q%02d.sql", test_shared_dir(), q);
        char *text = read_file(path);
        if (!text) fprintf(stderr, "cannot read %s\n", path);
        REQUIRE(text != NULL);
        sql_arena *a = sql_arena_create();
        REQUIRE(a != NULL);
        sql_stmt_list *l = NULL;
        sto_status st = sql_parse(a, text, &l);
        if (st) fprintf(stderr, "q%02d: %s (position %d)\n", q, st->message, st->position);
        CHECK(st == NULL);
        sto_status_free(st);
        if (l) {
            CHECK_EQ_INT(l->count, q == 15 ? 3 : 1);
            for (int i = 0; i < l->count; i++) {
                sql_stmt_kind want = SQL_STMT_SELECT;
                if (q == 15 && i == 0) want = SQL_STMT_CREATE_VIEW;
                if (q == 15 && i == 2) want = SQL_STMT_DROP_VIEW;
                CHECK_EQ_INT(l->items[i]->kind, want);
                char *s = sql_stmt_to_string(l->items[i]);
                CHECK(s != NULL && strchr(s, '?') == NULL); /* no missing node */
                free(s);
            }
        }
        sql_arena_destroy(a);
        free(text);
    }
}

/* Two TPC-H queries compared in full. */
static void test_tpch_trees(void)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tpch/queries/q01.sql", test_shared_dir());
    char *text = read_file(path);
    REQUIRE(text != NULL);
    check_tree(text, "(select (items l_returnflag l_linestatus (as (sum l_quantity) sum_qty) "
                     "(as (sum l_extendedprice) sum_base_price) "
                     "(as (sum (* l_extendedprice (- 1 l_discount))) sum_disc_price) "
                     "(as (sum (* (* l_extendedprice (- 1 l_discount)) (+ 1 l_tax))) sum_charge) "
                     "(as (avg l_quantity) avg_qty) (as (avg l_extendedprice) avg_price) "
                     "(as (avg l_discount) avg_disc) (as (count *) count_order)) (from lineitem) "
                     "(where (<= l_shipdate (- (date '1998-12-01') (interval 90 day)))) "
                     "(group-by l_returnflag l_linestatus) (order-by l_returnflag l_linestatus))");
    free(text);
    snprintf(path, sizeof(path), "%s/tpch/queries/q13.sql", test_shared_dir());
    text = read_file(path);
    REQUIRE(text != NULL);
    check_tree(text, "(select (items c_count (as (count *) custdist)) (from (as (select (items "
                     "c_custkey (count o_orderkey)) (from (left-join customer orders (on (and (= "
                     "c_custkey o_custkey) (not-like o_comment '%special%requests%'))))) "
                     "(group-by c_custkey)) c_orders (c_custkey c_count))) (group-by c_count) "
                     "(order-by (desc custdist) (desc c_count)))");
    free(text);
}

/* Fails the parse of text at every allocation in turn: each failure must
 * give 53200 (and nothing else), and destroying the arena must free all
 * (ASan checks). Returns how many failure points there were. */
static int check_all_oom_points(const char *text)
{
    int failures = 0;
    for (long n = 0; n < 100000; n++) {
        sql_arena *a = sql_arena_create();
        if (!a) return -1;
        sql_arena_fail_after(a, n);
        sql_stmt_list *l = NULL;
        sto_status st = sql_parse(a, text, &l);
        sql_arena_destroy(a);
        if (!st) {
            CHECK(l != NULL);
            return failures;
        }
        failures++;
        CHECK_STREQ(st->sqlstate, STO_OUT_OF_MEMORY);
        CHECK(l == NULL);
        sto_status_free(st);
    }
    CHECK(0); /* never succeeded */
    return failures;
}

static void test_out_of_memory(void)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tpch/queries/q15.sql", test_shared_dir());
    char *text = read_file(path);
    REQUIRE(text != NULL);
    CHECK(check_all_oom_points(text) > 50);
    free(text);
    /* every statement kind and the builders' error paths */
    CHECK(check_all_oom_points(
              "create table if not exists t (a int not null primary key, b decimal(15,2), "
              "c varchar(3), primary key (a)); create table u as select 1; drop table t;"
              "create view v (x) as select a from t; drop view if exists v;"
              "insert into t (a, b) values (1, 2.5), (2, null); insert into t select * from u;"
              "copy t (a) from 'f' with (delimiter '|', header false, format csv);"
              "copy t from 'f' delimiter ',' csv header; copy (select 1) to 'g';"
              "call dbgen(sf = 0.1, 'x'); explain analyze select 1; set x to on; set y = -1;"
              "show all; show x; begin; commit; rollback;"
              "with w (c) as (select 1) select distinct w.*, count(*) n, sum(distinct c), "
              "case c when 1 then 'a' else E'b\\t' end, cast(c as char(2)), c::text, "
              "extract(year from date '1998-01-01' + interval '1' month), "
              "substring('abc' from 1 for 2), coalesce(c, $1) "
              "from w left join (select 1) as s (k) on k = c cross join t x "
              "where c between 1 and 2 and c not in (1, 2) and c in (select 1) and "
              "exists (select 1) and c >= all (select 1) and c like 'a%' escape '!' and "
              "c is not null and not c ilike 'b' or -c < +c || 'x' "
              "group by 1 having count(*) > 0 union all (select 1 limit 1) "
              "intersect values (1) except select 2 order by 1 desc nulls last "
              "offset 1 rows fetch first 2 rows only") > 100);
}

/* Deep trees are refused before passes over them could overflow the stack. */
static void test_depth_limits(void)
{
    size_t n = 3000;
    char *sql = malloc(n * 30);
    REQUIRE(sql != NULL);
    strcpy(sql, "select 1");
    for (size_t i = 0; i < n; i++)
        strcat(sql, "+1");
    sql_arena *a = sql_arena_create();
    REQUIRE(a != NULL);
    sql_stmt_list *l = NULL;
    sto_status st = sql_parse(a, sql, &l);
    REQUIRE(st != NULL);
    CHECK_STREQ(st->sqlstate, "54001");
    sto_status_free(st);

    strcpy(sql, "select ");
    for (size_t i = 0; i < n; i++)
        strcat(sql, "(");
    st = sql_parse(a, sql, &l);
    REQUIRE(st != NULL);
    CHECK_STREQ(st->sqlstate, "54001");
    sto_status_free(st);

    /* Chains of 200 (each allowed) inside 30 nested subqueries make a tree
     * 6000 deep: refused by the whole-tree check, at the outermost node
     * past the limit. */
    strcpy(sql, "select 1");
    for (int level = 0; level < 30; level++) {
        char *inner = strdup(sql);
        REQUIRE(inner != NULL);
        strcpy(sql, "select (");
        strcat(sql, inner);
        strcat(sql, ")");
        for (int i = 0; i < 200; i++)
            strcat(sql, "+1");
        free(inner);
    }
    st = sql_parse(a, sql, &l);
    REQUIRE(st != NULL);
    CHECK_STREQ(st->sqlstate, "54001");
    CHECK_STREQ(st->message, "statement is nested too deeply (more than 4000 levels)");
    CHECK(st->position > 0);
    sto_status_free(st);

    /* 500 levels are fine */
    strcpy(sql, "select 1");
    for (size_t i = 0; i < 500; i++)
        strcat(sql, "+1");
    st = sql_parse(a, sql, &l);
    CHECK(st == NULL);
    sto_status_free(st);
    sql_arena_destroy(a);
    free(sql);
}

int main(void)
{
    RUN(test_select_clauses);
    RUN(test_from_clause);
    RUN(test_set_operations);
    RUN(test_expressions);
    RUN(test_precedence);
    RUN(test_contextual_keywords);
    RUN(test_special_calls);
    RUN(test_statements);
    RUN(test_statement_fields);
    RUN(test_positions);
    RUN(test_statement_lists);
    RUN(test_tpch_queries);
    RUN(test_tpch_trees);
    RUN(test_out_of_memory);
    RUN(test_depth_limits);
    return TEST_REPORT();
}
