/*
 * test_catalog.c — tables and views by name: create/drop semantics, the
 * SQLSTATEs PostgreSQL clients expect, case-insensitive lookup, the
 * binder's interface and the CREATE TABLE text .schema prints.
 */
#include <stdlib.h>

#include "engine/catalog.h"
#include "test.h"

/* A table with columns (id INTEGER NOT NULL, name VARCHAR(20)). */
static sto_table *make_table(void)
{
    const char *names[] = {"id", "name"};
    sto_type types[] = {sto_type_make(STO_TYPE_INTEGER), sto_type_string(STO_TYPE_VARCHAR, 20)};
    bool not_null[] = {true, false};
    sto_schema *schema;
    if (sto_schema_new(2, names, types, not_null, &schema)) return NULL;
    sto_table *t = NULL;
    sto_status st = sto_table_new(schema, &t);
    sto_schema_free(schema);
    sto_status_free(st);
    return t;
}

static void check_state(sto_status st, const char *sqlstate)
{
    CHECK(st != NULL);
    if (st) CHECK_STREQ(st->sqlstate, sqlstate);
    sto_status_free(st);
}

static void test_create_and_lookup(void)
{
    eng_catalog *c;
    REQUIRE(eng_catalog_new(&c) == STO_OK);
    sto_table *t = make_table();
    REQUIRE(t);
    bool created = false;
    CHECK(eng_catalog_create_table(c, "orders", t, false, 0, &created) == STO_OK);
    CHECK(created);
    CHECK(eng_catalog_table(c, "orders") == t);
    CHECK(eng_catalog_table(c, "ORDERS") == NULL); /* exact: "ORDERS" is another name */
    CHECK(eng_catalog_table(c, "order") == NULL);
    CHECK_EQ_INT(eng_catalog_table_count(c), 1);
    CHECK_STREQ(eng_catalog_table_name(c, 0), "orders");

    /* Taken: 42P07 with the position given; IF NOT EXISTS: no error. */
    sto_table *t2 = make_table();
    sto_status st = eng_catalog_create_table(c, "orders", t2, false, 14, &created);
    REQUIRE(st);
    CHECK_STREQ(st->sqlstate, "42P07");
    CHECK_EQ_INT(st->position, 14);
    CHECK_STREQ(st->message, "relation \"orders\" already exists");
    sto_status_free(st);
    CHECK(eng_catalog_create_table(c, "orders", t2, true, 0, &created) == STO_OK);
    CHECK(!created);
    sto_table_free(t2); /* not taken: still ours */
    eng_catalog_free(c);
}

static void test_drop(void)
{
    eng_catalog *c;
    REQUIRE(eng_catalog_new(&c) == STO_OK);
    REQUIRE(eng_catalog_create_table(c, "a", make_table(), false, 0, NULL) == STO_OK);
    REQUIRE(eng_catalog_create_table(c, "b", make_table(), false, 0, NULL) == STO_OK);
    bool dropped = false;
    check_state(eng_catalog_drop_table(c, "A", false, 0, NULL), "42P01");
    CHECK(eng_catalog_drop_table(c, "a", false, 0, &dropped) == STO_OK);
    CHECK(dropped);
    CHECK(eng_catalog_table(c, "a") == NULL);
    CHECK_EQ_INT(eng_catalog_table_count(c), 1);
    CHECK_STREQ(eng_catalog_table_name(c, 0), "b");
    check_state(eng_catalog_drop_table(c, "a", false, 0, NULL), "42P01");
    CHECK(eng_catalog_drop_table(c, "a", true, 0, &dropped) == STO_OK);
    CHECK(!dropped);
    eng_catalog_free(c);
}

static void test_views_share_names(void)
{
    eng_catalog *c;
    REQUIRE(eng_catalog_new(&c) == STO_OK);
    REQUIRE(eng_catalog_create_table(c, "t", make_table(), false, 0, NULL) == STO_OK);
    const char *cols[] = {"x", "y"};
    CHECK(eng_catalog_create_view(c, "v", "select id, name from t", 2, cols, 0) == STO_OK);
    CHECK(eng_catalog_view(c, "V") == NULL);
    const eng_view *v = eng_catalog_view(c, "v");
    REQUIRE(v);
    CHECK_STREQ(v->sql, "select id, name from t");
    CHECK_EQ_INT(v->ncols, 2);
    CHECK_STREQ(v->column_names[1], "y");
    /* One name space: a view cannot take a table's name and vice versa. */
    check_state(eng_catalog_create_view(c, "t", "select 1", 0, NULL, 0), "42P07");
    sto_table *t2 = make_table();
    check_state(eng_catalog_create_table(c, "v", t2, false, 0, NULL), "42P07");
    check_state(eng_catalog_replace_table(c, "v", t2, 0), "42P07");
    sto_table_free(t2);
    /* Wrong kind of object for the DROP: 42809. */
    check_state(eng_catalog_drop_table(c, "v", true, 0, NULL), "42809");
    check_state(eng_catalog_drop_view(c, "t", true, 0, NULL), "42809");
    check_state(eng_catalog_drop_view(c, "nope", false, 0, NULL), "42P01");
    CHECK(eng_catalog_drop_view(c, "v", false, 0, NULL) == STO_OK);
    CHECK(eng_catalog_view(c, "v") == NULL);
    CHECK_EQ_INT(eng_catalog_view_count(c), 0);
    eng_catalog_free(c);
}

static void test_replace(void)
{
    eng_catalog *c;
    REQUIRE(eng_catalog_new(&c) == STO_OK);
    sto_table *t1 = make_table(), *t2 = make_table();
    CHECK(eng_catalog_replace_table(c, "x", t1, 0) == STO_OK); /* adds */
    CHECK(eng_catalog_replace_table(c, "x", t2, 0) == STO_OK); /* replaces, frees t1 */
    CHECK(eng_catalog_table(c, "x") == t2);
    CHECK_EQ_INT(eng_catalog_table_count(c), 1);
    eng_catalog_free(c);
}

static void test_binder_iface(void)
{
    eng_catalog *c;
    REQUIRE(eng_catalog_new(&c) == STO_OK);
    sto_table *t = make_table();
    REQUIRE(eng_catalog_create_table(c, "people", t, false, 0, NULL) == STO_OK);
    REQUIRE(eng_catalog_create_view(c, "pv", "select * from people", 0, NULL, 0) == STO_OK);
    sql_catalog iface = eng_catalog_iface(c);
    sql_table_info ti;
    CHECK(!iface.lookup_table(iface.ctx, "PEOPLE", &ti));
    CHECK(iface.lookup_table(iface.ctx, "people", &ti));
    CHECK(ti.table == t);
    CHECK_STREQ(ti.name, "people");
    CHECK_EQ_INT(ti.schema->ncols, 2);
    CHECK_STREQ(ti.schema->cols[1].name, "name");
    CHECK(ti.schema->cols[0].not_null);
    CHECK_EQ_INT(ti.rows, 0);
    CHECK(ti.stats != NULL);
    CHECK(!iface.lookup_table(iface.ctx, "pv", &ti));
    sql_view_info vi;
    CHECK(iface.lookup_view(iface.ctx, "pv", &vi));
    CHECK_STREQ(vi.sql, "select * from people");
    CHECK_EQ_INT(vi.ncols, 0);
    CHECK(!iface.lookup_view(iface.ctx, "people", &vi));
    eng_catalog_free(c);
}

/* A view records what it reads (through other views too); DROP refuses to
 * orphan it (2BP01) and CASCADE drops the readers first. */
static void test_view_dependencies(void)
{
    eng_catalog *c;
    REQUIRE(eng_catalog_new(&c) == STO_OK);
    REQUIRE(eng_catalog_create_table(c, "people", make_table(), false, 0, NULL) == STO_OK);
    REQUIRE(eng_catalog_create_table(c, "other", make_table(), false, 0, NULL) == STO_OK);
    REQUIRE(eng_catalog_create_table(c, "Mixed", make_table(), false, 0, NULL) == STO_OK);
    REQUIRE(eng_catalog_create_view(c, "v1", "select id from people", 0, NULL, 0) == STO_OK);
    REQUIRE(eng_catalog_create_view(c, "v2", "with people as (select 1 as id) select id from v1", 0,
                                    NULL, 0) == STO_OK);
    REQUIRE(eng_catalog_create_view(c, "v3", "select * from \"Mixed\"", 0, NULL, 0) == STO_OK);
    const eng_view *v2 = eng_catalog_view(c, "v2");
    REQUIRE(v2);
    CHECK_EQ_INT(v2->ndeps, 2); /* v1 and, through it, people; not the CTE */
    CHECK_STREQ(v2->deps[0], "v1");
    CHECK_STREQ(v2->deps[1], "people");
    CHECK_EQ_INT(eng_catalog_view(c, "v3")->ndeps, 1);
    CHECK_STREQ(eng_catalog_view(c, "v3")->deps[0], "Mixed");

    sto_status st = eng_catalog_drop_table(c, "people", false, 12, NULL);
    REQUIRE(st);
    CHECK_STREQ(st->sqlstate, "2BP01");
    CHECK_STREQ(st->message, "cannot drop table people because other objects depend on it");
    CHECK_EQ_INT(st->position, 12);
    sto_status_free(st);
    check_state(eng_catalog_drop_view(c, "v1", false, 0, NULL), "2BP01");
    check_state(eng_catalog_check_dependents(c, "v1", 0), "2BP01");
    CHECK(eng_catalog_check_dependents(c, "other", 0) == STO_OK);
    CHECK(eng_catalog_check_dependents(c, "v2", 0) == STO_OK);
    CHECK(eng_catalog_table(c, "people") != NULL);
    CHECK_EQ_INT(eng_catalog_view_count(c), 3);
    /* a table nobody reads drops */
    CHECK(eng_catalog_drop_table(c, "other", false, 0, NULL) == STO_OK);

    uint32_t n = 0;
    CHECK(eng_catalog_drop_dependents(c, "people", &n) == STO_OK);
    CHECK_EQ_INT(n, 2);
    CHECK(eng_catalog_view(c, "v1") == NULL && eng_catalog_view(c, "v2") == NULL);
    CHECK(eng_catalog_view(c, "v3") != NULL);
    CHECK(eng_catalog_drop_table(c, "people", false, 0, NULL) == STO_OK);
    /* a view whose query no longer binds is still stored (snapshots) */
    CHECK(eng_catalog_create_view(c, "gone", "select * from people", 0, NULL, 0) == STO_OK);
    CHECK_EQ_INT(eng_catalog_view(c, "gone")->ndeps, 0);
    eng_catalog_free(c);
}

static void test_ddl_text(void)
{
    eng_catalog *c;
    REQUIRE(eng_catalog_new(&c) == STO_OK);
    REQUIRE(eng_catalog_create_table(c, "My Table", make_table(), false, 0, NULL) == STO_OK);
    CHECK(eng_catalog_table_ddl(c, "my table") == NULL); /* names match exactly */
    char *ddl = eng_catalog_table_ddl(c, "My Table");
    CHECK_STREQ(ddl, "CREATE TABLE \"My Table\" (\n"
                     "    id INTEGER NOT NULL,\n"
                     "    name VARCHAR(20)\n"
                     ");");
    free(ddl);
    CHECK(eng_catalog_table_ddl(c, "missing") == NULL);
    eng_catalog_free(c);
}

int main(void)
{
    RUN(test_create_and_lookup);
    RUN(test_drop);
    RUN(test_views_share_names);
    RUN(test_replace);
    RUN(test_binder_iface);
    RUN(test_view_dependencies);
    RUN(test_ddl_text);
    return TEST_REPORT();
}
