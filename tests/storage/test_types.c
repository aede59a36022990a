/*
 * test_types.c — type metadata, dates, decimals and number parsing
 * (storage/types.c).
 */
#include "storage/types.h"
#include "test.h"

static void test_type_table(void)
{
    CHECK_EQ_INT(sto_type_width(STO_TYPE_BOOLEAN), 1);
    CHECK_EQ_INT(sto_type_width(STO_TYPE_INTEGER), 4);
    CHECK_EQ_INT(sto_type_width(STO_TYPE_DECIMAL), 8);
    CHECK_EQ_INT(sto_type_width(STO_TYPE_DATE), 4);
    CHECK_EQ_INT(sto_type_width(STO_TYPE_VARCHAR), sizeof(sto_str));
    CHECK_STREQ(sto_type_id_name(STO_TYPE_DOUBLE), "DOUBLE");
    CHECK_EQ_INT(sto_type_pg_oid(STO_TYPE_DATE), 1082);
    CHECK_EQ_INT(sto_type_pg_oid(STO_TYPE_CHAR), 1042);
    char buf[32];
    sto_type_format(sto_type_decimal(15, 2), buf, sizeof(buf));
    CHECK_STREQ(buf, "DECIMAL(15,2)");
    sto_type_format(sto_type_string(STO_TYPE_CHAR, 25), buf, sizeof(buf));
    CHECK_STREQ(buf, "CHAR(25)");
    sto_type_format(sto_type_string(STO_TYPE_VARCHAR, 0), buf, sizeof(buf));
    CHECK_STREQ(buf, "VARCHAR");
    sto_type_format(sto_type_make(STO_TYPE_BIGINT), buf, sizeof(buf));
    CHECK_STREQ(buf, "BIGINT");
}

static void test_str_cmp(void)
{
    sto_str a = sto_str_make("abc", 3), b = sto_str_make("abd", 3), c = sto_str_make("ab", 2);
    const char *long1 = "a long string past twelve bytes",
               *long2 = "a long string past twelve bytez";
    sto_str l1 = sto_str_make(long1, (uint32_t)strlen(long1));
    sto_str l2 = sto_str_make(long2, (uint32_t)strlen(long2));
    CHECK(sto_str_cmp(&a, &b) < 0);
    CHECK(sto_str_cmp(&b, &a) > 0);
    CHECK(sto_str_cmp(&c, &a) < 0); /* prefix sorts first */
    CHECK(sto_str_cmp(&a, &a) == 0);
    CHECK(sto_str_cmp(&l1, &l2) < 0);
    CHECK(!sto_str_eq(&l1, &l2));
    char copy[64];
    strcpy(copy, long1);
    sto_str l3 = sto_str_make(copy, (uint32_t)strlen(copy));
    CHECK(sto_str_eq(&l1, &l3));
    CHECK(sto_str_cmp(&l1, &l3) == 0);
}

static void test_dates(void)
{
    CHECK_EQ_INT(sto_date_from_ymd(1970, 1, 1), 0);
    CHECK_EQ_INT(sto_date_from_ymd(1969, 12, 31), -1);
    CHECK_EQ_INT(sto_date_from_ymd(2000, 3, 1), 11017);
    CHECK_EQ_INT(sto_date_from_ymd(1992, 1, 1), 8035);
    CHECK_EQ_INT(sto_date_from_ymd(1998, 12, 31), 10591);
    CHECK_EQ_INT(sto_date_from_ymd(1600, 1, 1), -135140);
    /* Every day from 1900 to 2100 round-trips and is one after the previous. */
    int32_t prev = sto_date_from_ymd(1899, 12, 31);
    int y, m, d, bad = 0;
    for (int32_t day = prev + 1; day <= sto_date_from_ymd(2100, 12, 31); day++) {
        sto_date_to_ymd(day, &y, &m, &d);
        if (sto_date_from_ymd(y, m, d) != day || day != prev + 1) bad++;
        prev = day;
    }
    CHECK_EQ_INT(bad, 0);
    sto_date_to_ymd(-719162, &y, &m, &d); /* 0001-01-01 */
    CHECK(y == 1 && m == 1 && d == 1);

    int32_t v;
    CHECK(sto_date_parse("1996-02-29", 10, &v));
    CHECK_EQ_INT(v, sto_date_from_ymd(1996, 2, 29));
    CHECK(sto_date_parse("2000-02-29", 10, &v));  /* divisible by 400: leap */
    CHECK(!sto_date_parse("1900-02-29", 10, &v)); /* by 100 only: not leap */
    CHECK(!sto_date_parse("1995-02-29", 10, &v));
    CHECK(!sto_date_parse("1995-04-31", 10, &v));
    CHECK(!sto_date_parse("1995-13-01", 10, &v));
    CHECK(!sto_date_parse("1995-00-10", 10, &v));
    CHECK(!sto_date_parse("1995-01-00", 10, &v));
    CHECK(!sto_date_parse("1995/01/01", 10, &v));
    CHECK(!sto_date_parse("1995-1-01", 9, &v));
    CHECK(!sto_date_parse("abc", 3, &v));
    CHECK(!sto_date_parse("", 0, &v));
    CHECK(!sto_date_parse("0000-01-01", 10, &v));

    char buf[11];
    CHECK_EQ_INT(sto_date_format(sto_date_from_ymd(1992, 1, 2), buf), 10);
    CHECK_STREQ(buf, "1992-01-02");
    sto_date_format(sto_date_from_ymd(1998, 12, 1), buf);
    CHECK_STREQ(buf, "1998-12-01");
    sto_date_format(-1, buf);
    CHECK_STREQ(buf, "1969-12-31");
}

static sto_parse_result dec(const char *s, int p, int sc, int64_t *v)
{
    return sto_decimal_parse(s, strlen(s), p, sc, v);
}

static void test_decimals(void)
{
    int64_t v = 0;
    CHECK(dec("24710.35", 15, 2, &v) == STO_PARSE_OK && v == 2471035);
    CHECK(dec("-0.04", 15, 2, &v) == STO_PARSE_OK && v == -4);
    CHECK(dec("+7", 15, 2, &v) == STO_PARSE_OK && v == 700);
    CHECK(dec("17", 15, 2, &v) == STO_PARSE_OK && v == 1700);
    CHECK(dec("0.5", 15, 2, &v) == STO_PARSE_OK && v == 50);
    CHECK(dec(".5", 15, 2, &v) == STO_PARSE_OK && v == 50);
    CHECK(dec("5.", 15, 2, &v) == STO_PARSE_OK && v == 500);
    CHECK(dec("000123.4", 5, 1, &v) == STO_PARSE_OK && v == 1234);
    /* Rounding half away from zero. */
    CHECK(dec("1.005", 15, 2, &v) == STO_PARSE_OK && v == 101);
    CHECK(dec("1.0049", 15, 2, &v) == STO_PARSE_OK && v == 100);
    CHECK(dec("-1.005", 15, 2, &v) == STO_PARSE_OK && v == -101);
    CHECK(dec("2.5", 3, 0, &v) == STO_PARSE_OK && v == 3);
    CHECK(dec("-2.5", 3, 0, &v) == STO_PARSE_OK && v == -3);
    /* Range: integer digits <= precision - scale, also after rounding. */
    CHECK(dec("999.99", 5, 2, &v) == STO_PARSE_OK && v == 99999);
    CHECK(dec("1000", 5, 2, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(dec("999.995", 5, 2, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(dec("-999.995", 5, 2, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(dec("999999999999999999", 18, 0, &v) == STO_PARSE_OK && v == 999999999999999999LL);
    CHECK(dec("1000000000000000000", 18, 0, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(dec("123456789012345678901234567890", 18, 2, &v) == STO_PARSE_OUT_OF_RANGE);
    /* An exponent moves the point (PostgreSQL's numeric input), with the
     * same rounding and range rules. */
    CHECK(dec("1e5", 15, 2, &v) == STO_PARSE_OK && v == 10000000);
    CHECK(dec("1e2", 5, 0, &v) == STO_PARSE_OK && v == 100);
    CHECK(dec("1E+2", 5, 0, &v) == STO_PARSE_OK && v == 100);
    CHECK(dec("-1.25e-1", 5, 3, &v) == STO_PARSE_OK && v == -125);
    CHECK(dec("-1.25e-1", 5, 2, &v) == STO_PARSE_OK && v == -13);
    CHECK(dec("0.0005e1", 5, 2, &v) == STO_PARSE_OK && v == 1);
    CHECK(dec("0.0004e1", 5, 2, &v) == STO_PARSE_OK && v == 0);
    CHECK(dec("12345e-3", 6, 3, &v) == STO_PARSE_OK && v == 12345);
    CHECK(dec(".5e1", 3, 0, &v) == STO_PARSE_OK && v == 5);
    CHECK(dec("5.e-1", 3, 0, &v) == STO_PARSE_OK && v == 1);
    CHECK(dec("0e99999999", 3, 0, &v) == STO_PARSE_OK && v == 0);
    CHECK(dec("1e-99999999", 3, 2, &v) == STO_PARSE_OK && v == 0);
    CHECK(dec("9.9999e2", 5, 2, &v) == STO_PARSE_OK && v == 99999);
    CHECK(dec("9.99995e2", 5, 2, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(dec("1e3", 5, 2, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(dec("1e99999999", 18, 0, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(dec("0.000000000000000000000012345678901234567e40", 18, 0, &v) == STO_PARSE_OK &&
          v == 123456789012345670LL);
    /* Not numbers. */
    CHECK(dec("abc", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("-", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec(".", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("1.2.3", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("1e", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("e5", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("1e+", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("1e5x", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("1e5.0", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec(" 1", 15, 2, &v) == STO_PARSE_INVALID);
    CHECK(dec("--1", 15, 2, &v) == STO_PARSE_INVALID);

    char buf[22];
    CHECK_EQ_INT(sto_decimal_format(2471035, 2, buf), 8);
    CHECK_STREQ(buf, "24710.35");
    sto_decimal_format(-4, 2, buf);
    CHECK_STREQ(buf, "-0.04");
    sto_decimal_format(0, 2, buf);
    CHECK_STREQ(buf, "0.00");
    sto_decimal_format(42, 0, buf);
    CHECK_STREQ(buf, "42");
    sto_decimal_format(INT64_MIN, 0, buf);
    CHECK_STREQ(buf, "-9223372036854775808");
    sto_decimal_format(-999999999999999999LL, 18, buf);
    CHECK_STREQ(buf, "-0.999999999999999999");
}

static sto_parse_result ip(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
    return sto_int_parse(s, strlen(s), lo, hi, v);
}

static void test_ints_and_doubles(void)
{
    int64_t v = 0;
    CHECK(ip("123", INT32_MIN, INT32_MAX, &v) == STO_PARSE_OK && v == 123);
    CHECK(ip("-2147483648", INT32_MIN, INT32_MAX, &v) == STO_PARSE_OK && v == INT32_MIN);
    CHECK(ip("2147483648", INT32_MIN, INT32_MAX, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(ip("-9223372036854775808", INT64_MIN, INT64_MAX, &v) == STO_PARSE_OK && v == INT64_MIN);
    CHECK(ip("9223372036854775808", INT64_MIN, INT64_MAX, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(ip("99999999999999999999999", INT64_MIN, INT64_MAX, &v) == STO_PARSE_OUT_OF_RANGE);
    CHECK(ip("abc", INT64_MIN, INT64_MAX, &v) == STO_PARSE_INVALID);
    CHECK(ip("", INT64_MIN, INT64_MAX, &v) == STO_PARSE_INVALID);
    CHECK(ip("-", INT64_MIN, INT64_MAX, &v) == STO_PARSE_INVALID);
    CHECK(ip("12a", INT64_MIN, INT64_MAX, &v) == STO_PARSE_INVALID);
    CHECK(ip("1.0", INT64_MIN, INT64_MAX, &v) == STO_PARSE_INVALID);

    double d = 0;
    CHECK(sto_double_parse("1.5", 3, &d) == STO_PARSE_OK && d == 1.5);
    CHECK(sto_double_parse("-2e3", 4, &d) == STO_PARSE_OK && d == -2000.0);
    CHECK(sto_double_parse("1e999", 5, &d) == STO_PARSE_OUT_OF_RANGE);
    CHECK(sto_double_parse("abc", 3, &d) == STO_PARSE_INVALID);
    CHECK(sto_double_parse("", 0, &d) == STO_PARSE_INVALID);
    CHECK(sto_double_parse(" 1", 2, &d) == STO_PARSE_INVALID);
    CHECK(sto_double_parse("1.5x", 4, &d) == STO_PARSE_INVALID);
    CHECK(sto_double_parse("1.59", 3, &d) == STO_PARSE_OK && d == 1.5); /* len bounds it */
}

int main(void)
{
    RUN(test_type_table);
    RUN(test_str_cmp);
    RUN(test_dates);
    RUN(test_decimals);
    RUN(test_ints_and_doubles);
    return TEST_REPORT();
}
