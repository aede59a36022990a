/*
 * test_result.c — results as the API hands them out: column metadata,
 * values as PostgreSQL-style text and typed, NULLs, rows spread over many
 * chunks (grown row by row and handed over whole).
 */
#include <math.h>
#include <stdlib.h>

#include "engine/result.h"
#include "test.h"

static sto_schema *all_types(void)
{
    const char *names[] = {"b", "i", "big", "dec", "dbl", "day", "ch", "vc"};
    sto_type types[] = {sto_type_make(STO_TYPE_BOOLEAN),   sto_type_make(STO_TYPE_INTEGER),
                        sto_type_make(STO_TYPE_BIGINT),    sto_type_decimal(15, 2),
                        sto_type_make(STO_TYPE_DOUBLE),    sto_type_make(STO_TYPE_DATE),
                        sto_type_string(STO_TYPE_CHAR, 4), sto_type_string(STO_TYPE_VARCHAR, 0)};
    bool not_null[8] = {false};
    sto_schema *s = NULL;
    sto_status st = sto_schema_new(8, names, types, not_null, &s);
    sto_status_free(st);
    return s;
}

static void test_metadata_and_values(void)
{
    sto_schema *s = all_types();
    REQUIRE(s);
    eng_result *r;
    REQUIRE(eng_result_new_rows(s, &r) == STO_OK);
    sto_schema_free(s);
    CHECK(rackdb_result_has_rows(r));
    CHECK_EQ_INT(rackdb_result_column_count(r), 8);
    CHECK_STREQ(rackdb_result_column_name(r, 3), "dec");
    CHECK_STREQ(rackdb_result_column_type(r, 3), "DECIMAL(15,2)");
    CHECK_STREQ(rackdb_result_column_type(r, 6), "CHAR(4)");
    CHECK_EQ_INT(rackdb_result_column_oid(r, 0), 16);
    CHECK_EQ_INT(rackdb_result_column_oid(r, 3), 1700);
    CHECK_EQ_INT(rackdb_result_column_oid(r, 5), 1082);
    CHECK_EQ_INT(rackdb_result_column_scale(r, 3), 2);
    CHECK(rackdb_result_column_is_numeric(r, 4));
    CHECK(!rackdb_result_column_is_numeric(r, 0));
    CHECK(!rackdb_result_column_is_numeric(r, 7));
    CHECK_STREQ(rackdb_result_tag(r), "SELECT 0");

    const char *long_text = "a string longer than twelve bytes";
    sto_value v[8];
    memset(v, 0, sizeof(v));
    v[0].v.i64 = 1;
    v[1].v.i64 = -42;
    v[2].v.i64 = 9000000000LL;
    v[3].v.i64 = -1234; /* -12.34 */
    v[4].v.f64 = 0.1;
    v[5].v.i64 = sto_date_from_ymd(1998, 12, 1);
    v[6].v.str = sto_str_make("ab", 2);
    v[7].v.str = sto_str_make(long_text, (uint32_t)strlen(long_text));
    REQUIRE(eng_result_append_row(r, v) == STO_OK);
    for (int i = 0; i < 8; i++)
        v[i].is_null = true;
    REQUIRE(eng_result_append_row(r, v) == STO_OK);
    CHECK_EQ_INT(rackdb_result_row_count(r), 2);
    CHECK_STREQ(rackdb_result_tag(r), "SELECT 2");

    CHECK_STREQ(rackdb_result_text(r, 0, 0), "t");
    CHECK_STREQ(rackdb_result_text(r, 0, 1), "-42");
    CHECK_STREQ(rackdb_result_text(r, 0, 2), "9000000000");
    CHECK_STREQ(rackdb_result_text(r, 0, 3), "-12.34");
    CHECK_STREQ(rackdb_result_text(r, 0, 4), "0.1");
    CHECK_STREQ(rackdb_result_text(r, 0, 5), "1998-12-01");
    CHECK_STREQ(rackdb_result_text(r, 0, 6), "ab");
    CHECK_STREQ(rackdb_result_text(r, 0, 7), long_text);
    CHECK(rackdb_result_bool(r, 0, 0));
    CHECK_EQ_INT(rackdb_result_int64(r, 0, 1), -42);
    CHECK_EQ_INT(rackdb_result_int64(r, 0, 2), 9000000000LL);
    CHECK_EQ_INT(rackdb_result_int64(r, 0, 3), -1234);
    CHECK(fabs(rackdb_result_double(r, 0, 3) + 12.34) < 1e-9);
    CHECK(rackdb_result_double(r, 0, 4) == 0.1);
    CHECK_EQ_INT(rackdb_result_date(r, 0, 5), sto_date_from_ymd(1998, 12, 1));
    CHECK_EQ_INT(rackdb_result_date(r, 0, 1), 0); /* not a date column */
    for (uint32_t c = 0; c < 8; c++) {
        CHECK(rackdb_result_is_null(r, 1, c));
        CHECK(rackdb_result_text(r, 1, c) == NULL);
        CHECK(!rackdb_result_is_null(r, 0, c));
    }
    /* Out of range reads as NULL rather than crashing. */
    CHECK(rackdb_result_text(r, 2, 0) == NULL);
    CHECK(rackdb_result_text(r, 0, 8) == NULL);
    CHECK(eng_result_set_tag(r, "SHOW") == STO_OK);
    CHECK_STREQ(rackdb_result_tag(r), "SHOW");
    rackdb_result_free(r);
}

static void test_doubles_print_shortest(void)
{
    const char *names[] = {"d"};
    sto_type types[] = {sto_type_make(STO_TYPE_DOUBLE)};
    bool nn[] = {true};
    sto_schema *s;
    REQUIRE(sto_schema_new(1, names, types, nn, &s) == STO_OK);
    eng_result *r;
    REQUIRE(eng_result_new_rows(s, &r) == STO_OK);
    sto_schema_free(s);
    double values[] = {1.0 / 3, 1e20, -2.5, 100, INFINITY, NAN};
    const char *texts[] = {"0.3333333333333333", "1e+20", "-2.5", "100", "Infinity", "NaN"};
    for (int i = 0; i < 6; i++) {
        sto_value v = {0};
        v.v.f64 = values[i];
        REQUIRE(eng_result_append_row(r, &v) == STO_OK);
    }
    for (int i = 0; i < 6; i++)
        CHECK_STREQ(rackdb_result_text(r, (uint64_t)i, 0), texts[i]);
    rackdb_result_free(r);
}

static void test_many_chunks(void)
{
    const char *names[] = {"n"};
    sto_type types[] = {sto_type_make(STO_TYPE_BIGINT)};
    bool nn[] = {true};
    sto_schema *s;
    REQUIRE(sto_schema_new(1, names, types, nn, &s) == STO_OK);
    eng_result *r;
    REQUIRE(eng_result_new_rows(s, &r) == STO_OK);
    /* 1000 rows appended one by one: several growing chunks. */
    for (int64_t i = 0; i < 1000; i++) {
        sto_value v = {0};
        v.v.i64 = i;
        REQUIRE(eng_result_append_row(r, &v) == STO_OK);
    }
    /* A whole chunk built outside and handed over (an executor's way). */
    sto_chunk *c;
    REQUIRE(sto_chunk_new(eng_result_schema(r), 100, &c) == STO_OK);
    int64_t *col = sto_chunk_column(c, 0);
    for (int i = 0; i < 100; i++)
        col[i] = 5000 + i;
    sto_chunk_set_rows(c, 100);
    REQUIRE(eng_result_append_chunk(r, c) == STO_OK);
    /* ... and rows after it go to a new chunk. */
    sto_value v = {0};
    v.v.i64 = -1;
    REQUIRE(eng_result_append_row(r, &v) == STO_OK);
    CHECK_EQ_INT(rackdb_result_row_count(r), 1101);
    CHECK_STREQ(rackdb_result_tag(r), "SELECT 1101");
    bool ok = true;
    for (uint64_t i = 0; i < 1000; i++)
        ok = ok && rackdb_result_int64(r, i, 0) == (int64_t)i;
    CHECK(ok);
    /* Random order, not just the sequential walk. */
    CHECK_EQ_INT(rackdb_result_int64(r, 1050, 0), 5050);
    CHECK_EQ_INT(rackdb_result_int64(r, 3, 0), 3);
    CHECK_EQ_INT(rackdb_result_int64(r, 1100, 0), -1);
    CHECK_EQ_INT(rackdb_result_int64(r, 999, 0), 999);
    CHECK_STREQ(rackdb_result_text(r, 1000, 0), "5000");
    rackdb_result_free(r);
    sto_schema_free(s);
}

static void test_tag_only(void)
{
    eng_result *r;
    REQUIRE(eng_result_new_tag(&r, "COPY %d", 60175) == STO_OK);
    CHECK_STREQ(rackdb_result_tag(r), "COPY 60175");
    CHECK(!rackdb_result_has_rows(r));
    CHECK_EQ_INT(rackdb_result_column_count(r), 0);
    CHECK_EQ_INT(rackdb_result_row_count(r), 0);
    CHECK(rackdb_result_column_name(r, 0) == NULL);
    CHECK(rackdb_result_text(r, 0, 0) == NULL);
    rackdb_result_free(r);
}

int main(void)
{
    RUN(test_metadata_and_values);
    RUN(test_doubles_print_shortest);
    RUN(test_many_chunks);
    RUN(test_tag_only);
    return TEST_REPORT();
}
