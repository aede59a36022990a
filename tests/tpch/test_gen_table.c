/*
 * test_gen_table.c — generating TPC-H straight into in-memory tables gives
 * exactly what loading the generated .tbl files gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/loader.h"
#include "test.h"
#include "tpch/gen.h"
#include "tpch/gen_files.h"
#include "tpch/gen_table.h"

static tpch_gen *gen;
static char dir[] = "/tmp/tpch_gen_table.XXXXXX";

static bool values_equal(sto_type type, sto_value a, sto_value b)
{
    if (a.is_null || b.is_null) return a.is_null == b.is_null;
    if (type.id == STO_TYPE_CHAR || type.id == STO_TYPE_VARCHAR)
        return sto_str_eq(&a.v.str, &b.v.str);
    return a.v.i64 == b.v.i64;
}

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

static void test_memory_equals_loaded_files(void)
{
    REQUIRE(gen);
    sto_table *mem[TPCH_TABLE_COUNT] = {0}, *loaded[TPCH_TABLE_COUNT] = {0};
    REQUIRE(new_tables(mem) == NULL);
    REQUIRE(new_tables(loaded) == NULL);
    REQUIRE(tpch_gen_tables(gen, TPCH_ALL_TABLES, 1, 1, 2, mem) == NULL);

    tpch_files_options opt = {dir, TPCH_ALL_TABLES, 1, 1, 2, false};
    REQUIRE(tpch_gen_files(gen, &opt) == NULL);
    sto_load_options lo = {sto_text_format_tbl(), 2, 0};
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s.tbl", dir, tpch_table_info_get((tpch_table_id)t)->name);
        sto_status st = sto_load_file(loaded[t], path, &lo, NULL);
        if (st) fprintf(stderr, "load %s: %s\n", path, st->message);
        CHECK(st == NULL);
        sto_status_free(st);
        unlink(path);
    }
    static const uint64_t rows[TPCH_TABLE_COUNT] = {2000, 8000, 100, 1500, 15000, 60175, 25, 5};
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        const tpch_table_info *info = tpch_table_info_get((tpch_table_id)t);
        CHECK_EQ_INT(sto_table_rows(mem[t]), rows[t]);
        CHECK_EQ_INT(sto_table_rows(loaded[t]), sto_table_rows(mem[t]));
        if (sto_table_rows(loaded[t]) != sto_table_rows(mem[t])) continue;
        int bad = 0;
        for (uint32_t c = 0; c < (uint32_t)info->column_count; c++) {
            sto_type type = sto_table_schema(mem[t])->cols[c].type;
            for (uint64_t r = 0; r < sto_table_rows(mem[t]) && bad < 3; r++) {
                if (!values_equal(type, sto_table_get(mem[t], c, r),
                                  sto_table_get(loaded[t], c, r))) {
                    fprintf(stderr, "%s row %llu column %s differs\n", info->name,
                            (unsigned long long)r, info->columns[c].name);
                    bad++;
                }
            }
        }
        CHECK_EQ_INT(bad, 0);
    }
    free_tables(mem);
    free_tables(loaded);
}

/* Parts of a table, generated one after another, are the whole table. */
static void test_parts_add_up(void)
{
    REQUIRE(gen);
    sto_table *whole[TPCH_TABLE_COUNT] = {0}, *parts[TPCH_TABLE_COUNT] = {0};
    REQUIRE(new_tables(whole) == NULL);
    REQUIRE(new_tables(parts) == NULL);
    unsigned mask = TPCH_BIT(TPCH_ORDERS) | TPCH_BIT(TPCH_LINEITEM) | TPCH_BIT(TPCH_PARTSUPP);
    REQUIRE(tpch_gen_tables(gen, mask, 1, 1, 2, whole) == NULL);
    for (int p = 1; p <= 4; p++)
        REQUIRE(tpch_gen_tables(gen, mask, 4, p, 1, parts) == NULL);
    tpch_table_id ts[] = {TPCH_ORDERS, TPCH_LINEITEM, TPCH_PARTSUPP};
    for (int i = 0; i < 3; i++) {
        sto_table *a = whole[ts[i]], *b = parts[ts[i]];
        CHECK_EQ_INT(sto_table_rows(a), sto_table_rows(b));
        uint32_t ncols = sto_table_schema(a)->ncols;
        int bad = 0;
        for (uint64_t r = 0; r < sto_table_rows(a) && r < sto_table_rows(b) && !bad; r++)
            for (uint32_t c = 0; c < ncols; c++)
                if (!values_equal(sto_table_schema(a)->cols[c].type, sto_table_get(a, c, r),
                                  sto_table_get(b, c, r)))
                    bad++;
        CHECK_EQ_INT(bad, 0);
    }
    free_tables(whole);
    free_tables(parts);
}

/* A table of the wrong shape is refused and left as it was. */
static void test_wrong_schema_refused(void)
{
    REQUIRE(gen);
    sto_table *t[TPCH_TABLE_COUNT] = {0};
    REQUIRE(new_tables(t) == NULL);
    sto_schema *s;
    REQUIRE(tpch_table_schema(TPCH_REGION, &s) == NULL);
    sto_table *wrong;
    REQUIRE(sto_table_new(s, &wrong) == NULL);
    sto_schema_free(s);
    sto_table *nation = t[TPCH_NATION];
    t[TPCH_NATION] = wrong; /* region's columns where nation's belong */
    sto_status st = tpch_gen_tables(gen, TPCH_BIT(TPCH_NATION) | TPCH_BIT(TPCH_REGION), 1, 1, 1, t);
    CHECK(st != NULL);
    if (st) CHECK(strstr(st->message, "nation") != NULL);
    sto_status_free(st);
    CHECK_EQ_INT(sto_table_rows(wrong), 0);
    CHECK_EQ_INT(sto_table_rows(t[TPCH_REGION]), 0);
    t[TPCH_NATION] = nation;
    sto_table_free(wrong);
    free_tables(t);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    sto_status st = tpch_gen_create(0.01, 2, &gen);
    if (st) {
        fprintf(stderr, "tpch_gen_create: %s\n", st->message);
        sto_status_free(st);
    }
    RUN(test_memory_equals_loaded_files);
    RUN(test_parts_add_up);
    RUN(test_wrong_schema_refused);
    tpch_gen_free(gen);
    rmdir(dir);
    return TEST_REPORT();
}
