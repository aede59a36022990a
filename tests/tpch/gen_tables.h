/*
 * gen_tables.h — the eight empty TPC-H tables the in-memory generator tests
 * fill, made from tpch_table_schema, and their release.
 */
#ifndef RACKDB_TESTS_TPCH_GEN_TABLES_H
#define RACKDB_TESTS_TPCH_GEN_TABLES_H

#include "tpch/gen_table.h"

static void free_tables(sto_table *t[TPCH_TABLE_COUNT])
{
    for (int i = 0; i < TPCH_TABLE_COUNT; i++)
        sto_table_free(t[i]);
}

static sto_status new_tables(sto_table *t[TPCH_TABLE_COUNT])
{
    for (int i = 0; i < TPCH_TABLE_COUNT; i++) {
        sto_schema *s;
        STO_TRY(tpch_table_schema((tpch_table_id)i, &s));
        sto_status st = sto_table_new(s, &t[i]);
        sto_schema_free(s);
        if (st) return st;
    }
    return NULL;
}

#endif
