/*
 * test_rt_sort_keys.c — sorting runs by normalized keys (rt_sort_keys.h).
 *
 * Random rows of six columns (INTEGER with NULLs and ties, BIGINT over the
 * whole range, DOUBLE with NaN, -0.0 and NULLs, VARCHAR of 0-30 bytes from
 * an alphabet with 0x00 and 0xff and shared prefixes, CHAR of one length,
 * BOOLEAN) are sorted by eng_sort_keys_order under many key lists, each
 * key ASC or DESC, NULLS FIRST or LAST. The test checks that the
 * normalized path ran, that the order is a permutation of the rows, and
 * that every neighbouring pair is in order by eng_sort_compare (the
 * comparison sort's definition of the order). Runs with long strings must
 * fall back (done = false), and eng_sort_run must order them as well.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/mem.h"
#include "engine/rt_sort.h"
#include "engine/rt_sort_keys.h"
#include "test.h"

#define NCOLS 6

static uint32_t rng_state = 777;

static uint32_t rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

static const sto_type col_types[NCOLS] = {
    {STO_TYPE_INTEGER, 0, 0, 0}, {STO_TYPE_BIGINT, 0, 0, 0}, {STO_TYPE_DOUBLE, 0, 0, 0},
    {STO_TYPE_VARCHAR, 0, 0, 0}, {STO_TYPE_CHAR, 0, 0, 0},   {STO_TYPE_BOOLEAN, 0, 0, 0},
};

/* Bytes the string refs of the rows point into. */
static char *pool;
static size_t pool_used;

static sto_str random_str(uint32_t max_len, uint32_t fixed_len)
{
    static const char alphabet[] = {'\0', 'a', 'b', 'c', (char)0xff};
    uint32_t len = fixed_len ? fixed_len : rnd() % (max_len + 1);
    char *p = pool + pool_used;
    /* a shared start makes long equal prefixes common */
    uint32_t shared = rnd() % 2 ? len : 0;
    for (uint32_t i = 0; i < len; i++)
        p[i] = i < shared && i < 10 ? 'b' : alphabet[rnd() % sizeof(alphabet)];
    pool_used += len;
    return sto_str_make(p, len);
}

static void fill_rows(uint8_t *data, uint64_t n, uint32_t rb, uint32_t max_len)
{
    for (uint64_t i = 0; i < n; i++) {
        uint8_t *row = data + i * rb;
        memset(row, 0, rb);
        int32_t a = (int32_t)(rnd() % 40) - 20;
        int64_t b = (int64_t)(((uint64_t)rnd() << 40) ^ ((uint64_t)rnd() << 16) ^ rnd());
        if (rnd() % 2 && b != INT64_MIN) b = -b;
        double c = (double)(rnd() % 50) / 4 - 6;
        if (rnd() % 20 == 0) c = -0.0;
        if (rnd() % 25 == 0) c = NAN;
        sto_str d = random_str(max_len, 0), e = random_str(0, 7);
        uint8_t f = rnd() % 2;
        memcpy(row, &a, 4);
        memcpy(row + CG_ROW_SLOT, &b, 8);
        memcpy(row + 2 * CG_ROW_SLOT, &c, 8);
        memcpy(row + 3 * CG_ROW_SLOT, &d, sizeof(d));
        memcpy(row + 4 * CG_ROW_SLOT, &e, sizeof(e));
        row[5 * CG_ROW_SLOT] = f;
        row[cg_row_null_offset(NCOLS, 0)] = rnd() % 8 == 0;
        row[cg_row_null_offset(NCOLS, 2)] = rnd() % 10 == 0;
        row[cg_row_null_offset(NCOLS, 3)] = rnd() % 12 == 0;
    }
}

/* order is a permutation of the rows, and sorted by eng_sort_compare. */
static bool order_ok(const eng_sort_spec *s, const uint8_t *data, uint64_t n, uint32_t rb,
                     const uint8_t **order)
{
    char *seen = calloc(n ? n : 1, 1);
    bool ok = seen != NULL;
    for (uint64_t i = 0; ok && i < n; i++) {
        uint64_t at = (uint64_t)(order[i] - data) / rb;
        ok = order[i] >= data && at < n && !seen[at];
        if (ok) seen[at] = 1;
        if (ok && i > 0) ok = eng_sort_compare(s, order[i - 1], order[i]) <= 0;
    }
    free(seen);
    return ok;
}

static void check_keys(const uint8_t *data, uint64_t n, uint32_t rb, const uint32_t *slots,
                       uint32_t nkeys, unsigned flags)
{
    eng_sort_key keys[NCOLS];
    for (uint32_t k = 0; k < nkeys; k++)
        keys[k] = (eng_sort_key){slots[k], col_types[slots[k]], (flags >> (2 * k)) & 1,
                                 (flags >> (2 * k + 1)) & 1};
    eng_sort_spec spec = {NCOLS, nkeys, keys};
    const uint8_t **order = malloc((n ? n : 1) * sizeof(*order));
    REQUIRE(order != NULL);
    bool done = false;
    CHECK(eng_sort_keys_order(&spec, data, n, rb, order, &done) == STO_OK);
    CHECK(done);
    bool ok = done && order_ok(&spec, data, n, rb, order);
    CHECK(ok);
    if (!ok) {
        fprintf(stderr, "  n=%llu flags=%x keys:", (unsigned long long)n, flags);
        for (uint32_t k = 0; k < nkeys; k++)
            fprintf(stderr, " %u", slots[k]);
        fprintf(stderr, "\n");
    }
    free(order);
}

static void test_normalized_orders(void)
{
    const uint64_t n = 3000;
    uint32_t rb = cg_row_bytes(NCOLS);
    uint8_t *data = malloc(n * rb);
    pool = malloc(n * 40);
    pool_used = 0;
    REQUIRE(data != NULL && pool != NULL);
    fill_rows(data, n, rb, 30);
    static const uint32_t lists[][4] = {
        {0},    {1},    {2},       {3},       {4},          {5},
        {0, 1}, {3, 0}, {5, 2, 1}, {4, 3, 0}, {2, 0, 5, 1}, {0, 5, 4, 3},
    };
    static const uint32_t lens[] = {1, 1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4};
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
        for (unsigned flags = 0; flags < (1u << (2 * lens[l])); flags += 1 + (lens[l] > 2) * 3)
            check_keys(data, n, rb, lists[l], lens[l], flags);
    /* few rows, one row, none */
    const uint32_t two[] = {3, 1};
    check_keys(data, 17, rb, two, 2, 1);
    check_keys(data, 1, rb, two, 2, 2);
    check_keys(data, 0, rb, two, 2, 0);
    free(pool);
    free(data);
}

/* Strings longer than ENG_SORT_KEY_BYTES: the comparison sort orders the
 * run (eng_sort_run), the normalized path declines. */
static void test_long_strings_fall_back(void)
{
    const uint64_t n = 2000;
    uint32_t rb = cg_row_bytes(NCOLS);
    uint8_t *data = malloc(n * rb);
    pool = malloc(n * 100);
    pool_used = 0;
    REQUIRE(data != NULL && pool != NULL);
    fill_rows(data, n, rb, 90);
    eng_sort_key keys[2] = {{3, col_types[3], true, false}, {0, col_types[0], false, true}};
    eng_sort_spec spec = {NCOLS, 2, keys};
    const uint8_t **order = malloc(n * sizeof(*order));
    REQUIRE(order != NULL);
    bool done = true;
    CHECK(eng_sort_keys_order(&spec, data, n, rb, order, &done) == STO_OK);
    CHECK(!done);

    eng_mem *mem = NULL;
    REQUIRE(eng_mem_create("sortkeys", 0, NULL, &mem) == STO_OK);
    eng_rows_sink run;
    eng_rows_sink_init(&run, (eng_rt_mem){mem, NULL, -1}, rb);
    for (uint64_t i = 0; i < n; i++) {
        cg_error err = cg_error_none();
        uint8_t *row = NULL;
        REQUIRE(eng_rt_rows_append(&err, &run, &row) == CG_ERR_NONE);
        memcpy(row, data + i * rb, rb);
    }
    CHECK(eng_sort_run(&spec, &run, n) == STO_OK);
    CHECK_EQ_INT((long long)run.rows, (long long)n);
    bool sorted = true;
    for (uint64_t i = 1; i < run.rows; i++)
        sorted &= eng_sort_compare(&spec, run.data + (i - 1) * rb, run.data + i * rb) <= 0;
    CHECK(sorted);
    eng_rows_sink_free(&run);
    eng_mem_destroy(mem);
    free(order);
    free(pool);
    free(data);
}

int main(void)
{
    RUN(test_normalized_orders);
    RUN(test_long_strings_fall_back);
    return TEST_REPORT();
}
