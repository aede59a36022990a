/*
 * test_gen_cancel.c — tpch_gen_tables_cancelable: a raised cancel flag stops
 * generation with 57014 and leaves every target table as it was; a flag that
 * stays down changes nothing.
 */
#include <stdatomic.h>

#include "gen_tables.h"
#include "test.h"
#include "tpch/gen_table.h"

static void test_canceled(void)
{
    tpch_gen *g = NULL;
    REQUIRE(tpch_gen_create(0.01, 2, &g) == NULL);
    sto_table *t[TPCH_TABLE_COUNT] = {0};
    REQUIRE(new_tables(t) == NULL);
    atomic_int cancel;
    atomic_init(&cancel, 1);
    sto_status st = tpch_gen_tables_cancelable(g, TPCH_ALL_TABLES, 1, 1, 2, t, &cancel);
    CHECK(st && !strcmp(st->sqlstate, "57014"));
    sto_status_free(st);
    for (int i = 0; i < TPCH_TABLE_COUNT; i++)
        CHECK_EQ_INT(sto_table_rows(t[i]), 0);

    atomic_store(&cancel, 0);
    st = tpch_gen_tables_cancelable(g, TPCH_BIT(TPCH_NATION) | TPCH_BIT(TPCH_REGION), 1, 1, 2, t,
                                    &cancel);
    CHECK(st == NULL);
    sto_status_free(st);
    CHECK_EQ_INT(sto_table_rows(t[TPCH_NATION]), 25);
    CHECK_EQ_INT(sto_table_rows(t[TPCH_REGION]), 5);
    free_tables(t);
    tpch_gen_free(g);
}

int main(void)
{
    RUN(test_canceled);
    return TEST_REPORT();
}
