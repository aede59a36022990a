/*
 * test_digits.c — tpch/digits.h against printf, and the .tbl writer's
 * money and strings of every length (tpch_tbl_format_row) against printf.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "tpch/digits.h"
#include "tpch/gen_files.h"

/* A few hundred thousand values of every length, and the edges. */
static uint64_t sample(int i)
{
    static const uint64_t edges[] = {
        0,         1,          9,          10,         99,         100,      999,
        1000,      9999,       10000,      99999,      100000,     9999999,  10000000,
        99999999,  100000000,  100000001,  999999999,  1000000000, 12345678, 123456789,
        600000000, 6000000000, UINT64_MAX, UINT32_MAX, 4294967296, 43698,    43699,
    };
    int n = (int)(sizeof(edges) / sizeof(edges[0]));
    if (i < n) return edges[i];
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    return x >> (x % 61); /* spread over all lengths */
}

static void test_eight_digits_match_printf(void)
{
    int bad = 0;
    for (int i = 0; i < 300000; i++) {
        uint32_t n = (uint32_t)(sample(i) % 100000000);
        char want[16], got[8 + TPCH_DIGITS_SLACK];
        snprintf(want, sizeof(want), "%08u", n);
        tpch_put_fixed(got, n, 8);
        if (memcmp(got, want, 8) != 0) bad++;
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_fixed_width(void)
{
    for (int width = 1; width <= 8; width++) {
        uint32_t limit = 1;
        for (int i = 0; i < width; i++)
            limit *= 10;
        uint32_t values[] = {0, 1, 7, limit / 10, limit / 2, limit - 1};
        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
            char want[16], got[8 + TPCH_DIGITS_SLACK];
            snprintf(want, sizeof(want), "%0*u", width, values[i]);
            memset(got, 'x', sizeof(got));
            tpch_put_fixed(got, values[i], width);
            CHECK(memcmp(got, want, (size_t)width) == 0);
        }
    }
}

/* A customer row with a given balance and comment, as .tbl text. */
static size_t customer_row(int64_t balance, const char *comment, char *out)
{
    static char text[8][512];
    const char *strings[] = {"Customer#000000001", "IVhzIApeRb ot,c,E", "25-989-741-2988",
                             "BUILDING", comment};
    for (int i = 0; i < 5; i++)
        snprintf(text[i], sizeof(text[i]), "%s", strings[i]);
    tpch_value v[8] = {
        {.i = 1},
        {.s = text[0], .len = (uint32_t)strlen(text[0])},
        {.s = text[1], .len = (uint32_t)strlen(text[1])},
        {.i = 15},
        {.s = text[2], .len = (uint32_t)strlen(text[2])},
        {.i = balance},
        {.s = text[3], .len = (uint32_t)strlen(text[3])},
        {.s = text[4], .len = (uint32_t)strlen(text[4])},
    };
    return tpch_tbl_format_row(TPCH_CUSTOMER, v, out);
}

static void test_money(void)
{
    static const int64_t cents[] = {0,         5,          10,        99,       100,       -1,
                                    -5,        -99,        -100,      -99999,   71156,     999999,
                                    123456789, 9999999999, 100000000, 99999999, -100000000};
    for (size_t i = 0; i < sizeof(cents) / sizeof(cents[0]); i++) {
        char got[TPCH_TBL_ROW_MAX], want[256];
        int64_t c = cents[i];
        uint64_t a = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
        int n = snprintf(want, sizeof(want),
                         "1|Customer#000000001|IVhzIApeRb ot,c,E|15|25-989-741-2988|%s%" PRIu64
                         ".%02u|BUILDING|to the even, regular platelets|\n",
                         c < 0 ? "-" : "", a / 100, (unsigned)(a % 100));
        size_t len = customer_row(c, "to the even, regular platelets", got);
        CHECK_EQ_INT((int64_t)len, n);
        CHECK(memcmp(got, want, (size_t)n) == 0);
    }
}

/* Integers and money of every length, both signs, as printf spells them
 * (the writer's numbers below 10^8 take another path than longer ones). */
static void test_integers_match_printf(void)
{
    int bad = 0;
    for (int i = 0; i < 300000; i++) {
        int64_t key = (int64_t)(sample(i) >> 1), nation = (int64_t)(sample(i + 7) % 1000000000);
        int64_t cents = (int64_t)(sample(i + 13) >> 2);
        if (i & 1) nation = -nation;
        if (i & 2) cents = -cents;
        static char text[4][64];
        snprintf(text[0], sizeof(text[0]), "Customer#000000001");
        snprintf(text[1], sizeof(text[1]), "x");
        snprintf(text[2], sizeof(text[2]), "BUILDING");
        snprintf(text[3], sizeof(text[3]), "c");
        tpch_value v[8] = {
            {.i = key},
            {.s = text[0], .len = 18},
            {.s = text[1], .len = 1},
            {.i = nation},
            {.s = text[1], .len = 1},
            {.i = cents},
            {.s = text[2], .len = 8},
            {.s = text[3], .len = 1},
        };
        char got[TPCH_TBL_ROW_MAX], want[256];
        uint64_t a = cents < 0 ? (uint64_t)0 - (uint64_t)cents : (uint64_t)cents;
        int n = snprintf(want, sizeof(want),
                         "%" PRId64 "|Customer#000000001|x|%" PRId64 "|x|%s%" PRIu64
                         ".%02u|BUILDING|c|\n",
                         key, nation, cents < 0 ? "-" : "", a / 100, (unsigned)(a % 100));
        size_t len = tpch_tbl_format_row(TPCH_CUSTOMER, v, got);
        if ((int)len != n || memcmp(got, want, (size_t)n) != 0) bad++;
    }
    CHECK_EQ_INT(bad, 0);
}

/* Strings of every length up to 300 come out whole (fixed-size block
 * copies, the last overlapping the one before). */
static void test_strings_of_every_length(void)
{
    char comment[301];
    for (int i = 0; i < 300; i++)
        comment[i] = (char)('a' + i % 26);
    for (int len = 0; len <= 300; len++) {
        char text[301], got[TPCH_TBL_ROW_MAX], want[512];
        memcpy(text, comment, (size_t)len);
        text[len] = '\0';
        int n = snprintf(want, sizeof(want),
                         "1|Customer#000000001|IVhzIApeRb ot,c,E|15|25-989-741-2988|7.11|"
                         "BUILDING|%s|\n",
                         text);
        size_t got_len = customer_row(711, text, got);
        CHECK_EQ_INT((int64_t)got_len, n);
        CHECK(memcmp(got, want, (size_t)n) == 0);
    }
}

int main(void)
{
    RUN(test_eight_digits_match_printf);
    RUN(test_fixed_width);
    RUN(test_money);
    RUN(test_integers_match_printf);
    RUN(test_strings_of_every_length);
    return TEST_REPORT();
}
