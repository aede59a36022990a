/*
 * test_join_keybits.c — the exact key bitmap of a join
 * (engine/rt_join_keybits.c): the density rule at its edges, bits exactly
 * over the keys (4- and 8-byte, negative, duplicated, over several spans),
 * none for sparse keys or an empty build, whether every key came once
 * (what lets a unique bitmap decide an INNER join), hits folded into
 * exactly the entries of the hit keys, the widest dense one of several key columns
 * chosen, and every byte given back to the tracker.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mem.h"
#include "engine/rt_hashtable.h"
#include "engine/rt_join_keybits.h"
#include "test.h"

#define KEY_OFFSET (ENG_JOIN_ENTRY_HEAD + 16u)

/* n entries whose key (at KEY_OFFSET, key_bytes wide) is keys[i]. */
static uint8_t *make_entries(const int64_t *keys, uint64_t n, unsigned key_bytes, uint32_t *stride)
{
    *stride = eng_join_entry_stride(32);
    uint8_t *base = calloc(n ? n : 1, *stride);
    for (uint64_t i = 0; base && i < n; i++) {
        uint8_t *e = base + i * *stride;
        if (key_bytes == 4) {
            int32_t k = (int32_t)keys[i];
            memcpy(e + KEY_OFFSET, &k, 4);
        } else {
            memcpy(e + KEY_OFFSET, &keys[i], 8);
        }
    }
    return base;
}

static void test_dense_rule(void)
{
    CHECK(eng_join_keybits_dense(1, 1, 1));
    CHECK(eng_join_keybits_dense(-5, (int64_t)ENG_JOIN_KEYBITS_MIN_SPAN - 6, 1));
    CHECK(!eng_join_keybits_dense(-5, (int64_t)ENG_JOIN_KEYBITS_MIN_SPAN - 5, 1));
    /* 16 bits an entry */
    CHECK(eng_join_keybits_dense(1, 16 * 3000000, 3000000));
    CHECK(!eng_join_keybits_dense(1, 16 * 3000000 + 16, 3000000));
    CHECK(!eng_join_keybits_dense(2, 1, 10));
    CHECK(!eng_join_keybits_dense(INT64_MIN, INT64_MAX, UINT64_MAX));
    CHECK(!eng_join_keybits_dense(0, (int64_t)ENG_JOIN_KEYBITS_MAX_SPAN, UINT64_MAX));
}

/* keys over two spans, 4 or 8 bytes wide: the bits are exactly the keys,
 * and hits fold into exactly the entries of the hit keys. */
static void check_bits(unsigned key_bytes, int64_t offset)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    enum { N = 3000 };
    int64_t keys[N];
    for (int i = 0; i < N; i++)
        keys[i] = offset + (i * 37) % 5000 - 1000; /* duplicates, negatives */
    uint32_t stride;
    uint8_t *base = make_entries(keys, N, key_bytes, &stride);
    REQUIRE(base);
    eng_join_span spans[2] = {{base, 1000}, {base + 1000 * (size_t)stride, N - 1000}};
    eng_join_keybits kb;
    REQUIRE(eng_join_keybits_build(&kb, spans, 2, N, stride, KEY_OFFSET, key_bytes, true, mem) ==
            STO_OK);
    REQUIRE(kb.bits && kb.hits);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < N; i++) {
        lo = keys[i] < lo ? keys[i] : lo;
        hi = keys[i] > hi ? keys[i] : hi;
    }
    CHECK(kb.base == lo);
    CHECK_EQ_INT(kb.span, (uint64_t)(hi - lo + 1));
    for (int64_t k = lo - 70; k <= hi + 70; k++) {
        bool want = false;
        for (int i = 0; i < N && !want; i++)
            want = keys[i] == k;
        CHECK(eng_join_keybits_test(&kb, k) == want);
    }
    CHECK(!eng_join_keybits_test(&kb, INT64_MIN));
    CHECK(!eng_join_keybits_test(&kb, INT64_MAX));
    /* hit every key divisible by 3 (twice: the second finds the bit set) */
    for (int i = 0; i < N; i++)
        if (keys[i] % 3 == 0) {
            eng_join_keybits_hit(&kb, keys[i]);
            eng_join_keybits_hit(&kb, keys[i]);
        }
    eng_join_keybits_fold(&kb, spans, 2, stride);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += eng_join_entry_at(base, stride, (uint64_t)i)->matched != (keys[i] % 3 == 0);
    CHECK_EQ_INT(wrong, 0);
    eng_join_keybits_free(&kb);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    free(base);
    eng_mem_destroy(mem);
}

/* unique says whether any key came twice: a duplicate anywhere, in the
 * first or the last entry, or in another span, clears it. */
static void test_unique(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    enum { N = 2000 };
    int64_t keys[N];
    for (int dup = -1; dup < 4; dup++) {
        for (int i = 0; i < N; i++)
            keys[i] = 5 + (int64_t)i * 3; /* unique, every third value */
        if (dup == 0) keys[N - 1] = keys[0];
        if (dup == 1) keys[0] = keys[N - 1];
        if (dup == 2) keys[1500] = keys[10]; /* across the two spans */
        if (dup == 3) keys[7] = keys[8];
        for (unsigned key_bytes = 4; key_bytes <= 8; key_bytes += 4) {
            uint32_t stride;
            uint8_t *base = make_entries(keys, N, key_bytes, &stride);
            REQUIRE(base);
            eng_join_span spans[2] = {{base, 1000}, {base + 1000 * (size_t)stride, N - 1000}};
            eng_join_keybits kb;
            REQUIRE(eng_join_keybits_build(&kb, spans, 2, N, stride, KEY_OFFSET, key_bytes, false,
                                           mem) == STO_OK);
            REQUIRE(kb.bits);
            CHECK_EQ_INT(kb.unique, dup < 0);
            eng_join_keybits_free(&kb);
            free(base);
        }
    }
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
}

static void test_bits_and_hits(void)
{
    check_bits(4, 0);
    check_bits(8, 0);
    check_bits(8, (int64_t)1 << 40); /* only 8 bytes hold these */
}

/* No bitmap for keys too sparse, an empty build, or more entries than
 * are scanned; without hits requested there are none, and fold is a no-op. */
static void test_none(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    int64_t keys[4] = {1, 2, 3, (int64_t)1 << 33};
    uint32_t stride;
    uint8_t *base = make_entries(keys, 4, 8, &stride);
    REQUIRE(base);
    eng_join_span span = {base, 4};
    eng_join_keybits kb;
    REQUIRE(eng_join_keybits_build(&kb, &span, 1, 4, stride, KEY_OFFSET, 8, true, mem) == STO_OK);
    CHECK(kb.bits == NULL && kb.hits == NULL);
    REQUIRE(eng_join_keybits_build(&kb, &span, 0, 0, stride, KEY_OFFSET, 8, true, mem) == STO_OK);
    CHECK(kb.bits == NULL);
    /* dense, no hits asked for */
    span.count = 3;
    REQUIRE(eng_join_keybits_build(&kb, &span, 1, 3, stride, KEY_OFFSET, 8, false, mem) == STO_OK);
    CHECK(kb.bits != NULL && kb.hits == NULL);
    eng_join_keybits_fold(&kb, &span, 1, stride);
    CHECK(eng_join_entry_at(base, stride, 0)->matched == 0);
    CHECK(eng_join_keybits_test(&kb, 2) && !eng_join_keybits_test(&kb, 4) &&
          !eng_join_keybits_test(&kb, 0));
    eng_join_keybits_free(&kb);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    free(base);
    eng_mem_destroy(mem);
}

/* Through the shared table: eng_join_ht_keybits over prepared entries,
 * freed with the table. */
static void test_in_table(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    eng_join_mat mat;
    eng_join_mat_init(&mat, (eng_rt_mem){mem, NULL, -1}, 32);
    cg_error err;
    memset(&err, 0, sizeof(err));
    for (int32_t k = 100; k < 1100; k += 2) {
        uint8_t *row;
        REQUIRE(eng_rt_join_append(&err, &mat, (uint64_t)k * 0x9E3779B97F4A7C15ull, &row) == 0);
        memcpy(row + 16, &k, 4);
    }
    eng_join_mat *mats[1] = {&mat};
    eng_join_ht ht;
    REQUIRE(eng_join_ht_prepare(&ht, mats, 1, mem) == STO_OK);
    uint32_t offset = KEY_OFFSET;
    unsigned bytes = 4;
    REQUIRE(eng_join_ht_keybits(&ht, &offset, &bytes, 1, false) == STO_OK);
    REQUIRE(ht.keys.bits != NULL);
    CHECK(ht.keys.base == 100);
    CHECK_EQ_INT(ht.keys.span, 999);
    int wrong = 0;
    for (int64_t k = 0; k < 1200; k++)
        wrong += eng_join_keybits_test(&ht.keys, k) != (k >= 100 && k < 1100 && k % 2 == 0);
    CHECK_EQ_INT(wrong, 0);
    eng_join_ht_free(&ht);
    eng_join_mat_free(&mat);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
}

/* Two key columns: the bitmap covers the dense one with the widest range
 * (col 1: 0..99990 in steps of 10, not col 0: 0..9), and ht->keys.col
 * says so; with col 1 not a candidate, col 0; with neither, none. */
static void test_choose_column(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    eng_join_mat mat;
    eng_join_mat_init(&mat, (eng_rt_mem){mem, NULL, -1}, 48);
    cg_error err;
    memset(&err, 0, sizeof(err));
    for (int64_t i = 0; i < 10000; i++) {
        uint8_t *row;
        REQUIRE(eng_rt_join_append(&err, &mat, (uint64_t)i * 0x9E3779B97F4A7C15ull, &row) == 0);
        int32_t a = (int32_t)(i % 10);
        int64_t b = i * 10;
        memcpy(row + 16, &a, 4);
        memcpy(row + 32, &b, 8);
    }
    eng_join_mat *mats[1] = {&mat};
    uint32_t offsets[2] = {KEY_OFFSET, KEY_OFFSET + 16};
    const struct {
        unsigned bytes[2];
        bool some;
        uint32_t col;
        uint64_t span;
    } cases[] = {{{4, 8}, true, 1, 99991}, {{4, 0}, true, 0, 10}, {{0, 0}, false, 0, 0}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        eng_join_ht ht;
        REQUIRE(eng_join_ht_prepare(&ht, mats, 1, mem) == STO_OK);
        REQUIRE(eng_join_ht_keybits(&ht, offsets, cases[c].bytes, 2, true) == STO_OK);
        CHECK((ht.keys.bits != NULL) == cases[c].some);
        CHECK(ht.keys.hits == NULL); /* hits only over one key column */
        if (cases[c].some) {
            CHECK_EQ_INT(ht.keys.col, cases[c].col);
            CHECK_EQ_INT(ht.keys.span, cases[c].span);
            CHECK(eng_join_keybits_test(&ht.keys, cases[c].col ? 99990 : 9));
            CHECK(!eng_join_keybits_test(&ht.keys, cases[c].col ? 99989 : 10));
        }
        eng_join_ht_free(&ht);
    }
    eng_join_mat_free(&mat);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
}

int main(void)
{
    RUN(test_dense_rule);
    RUN(test_bits_and_hits);
    RUN(test_unique);
    RUN(test_none);
    RUN(test_in_table);
    RUN(test_choose_column);
    return TEST_REPORT();
}
