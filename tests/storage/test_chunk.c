/*
 * test_chunk.c — chunks: row-wise and column-wise filling, NULLs, short and
 * long strings, capacity, statistics (storage/chunk.c, column.c, stats.c).
 */
#include <stdio.h>

#include "storage/chunk.h"
#include "storage/numa_alloc.h"
#include "test.h"

static sto_schema *make_schema(void)
{
    const char *names[] = {"id", "price", "note", "code", "day", "ratio", "flag"};
    sto_type types[] = {sto_type_make(STO_TYPE_INTEGER),       sto_type_decimal(15, 2),
                        sto_type_string(STO_TYPE_VARCHAR, 40), sto_type_string(STO_TYPE_CHAR, 5),
                        sto_type_make(STO_TYPE_DATE),          sto_type_make(STO_TYPE_DOUBLE),
                        sto_type_make(STO_TYPE_BOOLEAN)};
    bool nn[] = {true, false, false, true, false, false, false};
    sto_schema *s = NULL;
    sto_status st = sto_schema_new(7, names, types, nn, &s);
    if (st) sto_status_free(st);
    return s;
}

static sto_value ival(int64_t v)
{
    sto_value x = {false, {.i64 = v}};
    return x;
}
static sto_value sval(const char *s)
{
    sto_value x = {false, {.str = sto_str_make(s, (uint32_t)strlen(s))}};
    return x;
}
static sto_value dval(double d)
{
    sto_value x = {false, {.f64 = d}};
    return x;
}
static sto_value null_val(void)
{
    sto_value x = {true, {.i64 = 0}};
    return x;
}

static void test_schema(void)
{
    sto_schema *s = make_schema();
    REQUIRE(s);
    CHECK_EQ_INT(s->ncols, 7);
    CHECK_EQ_INT(sto_schema_find(s, "note"), 2);
    CHECK_EQ_INT(sto_schema_find(s, "NOTE"), -1); /* names match exactly */
    CHECK_EQ_INT(sto_schema_find(s, "missing"), -1);
    sto_schema *c = NULL;
    sto_status st = sto_schema_copy(s, &c);
    CHECK(!st && c && sto_schema_equal(s, c));
    sto_schema_free(c);

    const char *dup[] = {"a", "a"};
    sto_type t2[] = {sto_type_make(STO_TYPE_INTEGER), sto_type_make(STO_TYPE_INTEGER)};
    st = sto_schema_new(2, dup, t2, NULL, &c);
    CHECK(st && strcmp(st->sqlstate, STO_DUPLICATE_COLUMN) == 0 && !c);
    sto_status_free(st);
    const char *cased[] = {"a", "A"}; /* "A" quoted in SQL: a different name */
    st = sto_schema_new(2, cased, t2, NULL, &c);
    CHECK(!st && c && sto_schema_find(c, "A") == 1);
    sto_schema_free(c);
    const char *one[] = {"d"};
    sto_type bad[] = {sto_type_decimal(19, 2)};
    st = sto_schema_new(1, one, bad, NULL, &c);
    CHECK(st && strcmp(st->sqlstate, STO_INVALID_PARAMETER_VALUE) == 0);
    sto_status_free(st);
    sto_schema_free(s);
}

static void test_rows_nulls_strings(void)
{
    sto_schema *s = make_schema();
    REQUIRE(s);
    sto_chunk *c = NULL;
    sto_status st = sto_chunk_new(s, 10, &c);
    REQUIRE(!st && c);
    CHECK_EQ_INT(c->capacity, 10);
    CHECK(c->validity[0] == NULL); /* NOT NULL: no bitmap */
    CHECK(c->validity[1] != NULL);

    char long_note[64];
    snprintf(long_note, sizeof(long_note), "a comment that is longer than twelve");
    sto_value r0[] = {ival(1),    ival(2471035), sval("short"), sval("AB   "),
                      ival(9000), dval(0.5),     ival(1)};
    sto_value r1[] = {ival(2),    null_val(), sval(long_note), sval("X"),
                      null_val(), null_val(), null_val()};
    CHECK(!sto_chunk_append_row(c, r0));
    CHECK(!sto_chunk_append_row(c, r1));
    long_note[0] = 'Z'; /* the chunk must hold its own copy */
    CHECK_EQ_INT(c->rows, 2);

    sto_value v = sto_chunk_get(c, 3, 0);
    CHECK(!v.is_null && v.v.str.len == 2 && memcmp(sto_str_data(&v.v.str), "AB", 2) == 0);
    v = sto_chunk_get(c, 2, 1);
    CHECK(!v.is_null && v.v.str.len == 36);
    CHECK(memcmp(sto_str_data(&v.v.str), "a comment that is longer than twelve", 36) == 0);
    CHECK(v.v.str.u.ptr != long_note);
    v = sto_chunk_get(c, 2, 0);
    CHECK(!v.is_null && v.v.str.len == 5 && memcmp(sto_str_data(&v.v.str), "short", 5) == 0);
    CHECK(sto_chunk_get(c, 1, 1).is_null);
    CHECK(sto_chunk_get(c, 4, 1).is_null);
    CHECK(!sto_chunk_get(c, 4, 0).is_null && sto_chunk_get(c, 4, 0).v.i64 == 9000);
    CHECK(sto_chunk_get(c, 5, 0).v.f64 == 0.5);
    CHECK(sto_chunk_get(c, 6, 0).v.i64 == 1);
    CHECK(sto_chunk_is_valid(c, 0, 1));

    /* Rejected rows leave the chunk as it was. */
    sto_value nullid[] = {null_val(), ival(1), sval("x"), sval("Y"), ival(1), dval(1), ival(0)};
    st = sto_chunk_append_row(c, nullid);
    CHECK(st && strcmp(st->sqlstate, STO_NOT_NULL_VIOLATION) == 0 && strstr(st->message, "\"id\""));
    sto_status_free(st);
    sto_value toolong[] = {ival(3), ival(1), sval("x"), sval("ABCDEF"), ival(1), dval(1), ival(0)};
    st = sto_chunk_append_row(c, toolong);
    CHECK(st && strcmp(st->sqlstate, STO_STRING_DATA_RIGHT_TRUNCATION) == 0);
    sto_status_free(st);
    /* Excess blanks are cut, not an error (CHAR and VARCHAR). */
    sto_value blanks[] = {ival(3), ival(1), sval("x"), sval("ABCDE      "),
                          ival(1), dval(1), ival(0)};
    CHECK(!sto_chunk_append_row(c, blanks));
    CHECK_EQ_INT(c->rows, 3);
    CHECK_EQ_INT(sto_chunk_get(c, 3, 2).v.str.len, 5);

    /* Statistics. */
    sto_chunk_seal(c);
    CHECK(c->sealed);
    CHECK_EQ_INT(c->stats[0].null_count, 0);
    CHECK(c->stats[0].has_minmax && c->stats[0].min.i == 1 && c->stats[0].max.i == 3);
    CHECK_EQ_INT(c->stats[1].null_count, 1);
    CHECK(c->stats[1].min.i == 1 && c->stats[1].max.i == 2471035);
    CHECK_EQ_INT(c->stats[0].distinct, 3);
    CHECK_EQ_INT(c->stats[3].distinct, 3);
    CHECK(!c->stats[3].has_minmax);
    CHECK_EQ_INT(c->stats[6].null_count, 1);
    CHECK(c->stats[5].min.d == 0.5 && c->stats[5].max.d == 1.0);
    st = sto_chunk_append_row(c, r0); /* sealed */
    CHECK(st && strcmp(st->sqlstate, STO_INTERNAL_ERROR) == 0);
    sto_status_free(st);

    sto_chunk_truncate(c, 1);
    CHECK_EQ_INT(c->rows, 1);
    CHECK(c->stats[0].max.i == 1 && c->stats[1].null_count == 0);
    sto_chunk_free(c);
    sto_schema_free(s);
}

static void test_capacity_and_columnwise(void)
{
    const char *names[] = {"k", "s"};
    sto_type types[] = {sto_type_make(STO_TYPE_BIGINT), sto_type_string(STO_TYPE_VARCHAR, 0)};
    bool nn[] = {true, true};
    sto_schema *s = NULL;
    REQUIRE(!sto_schema_new(2, names, types, nn, &s));
    sto_chunk *c = NULL;
    REQUIRE(!sto_chunk_new(s, 0, &c));
    CHECK_EQ_INT(c->capacity, STO_CHUNK_ROWS);
    /* Column-wise: write the arrays, then declare the rows. */
    int64_t *k = sto_chunk_column(c, 0);
    sto_str *str = sto_chunk_column(c, 1);
    char buf[64];
    for (uint32_t r = 0; r < STO_CHUNK_ROWS; r++) {
        k[r] = (int64_t)r * 3;
        int n = snprintf(buf, sizeof(buf), "%s-%u", r % 2 ? "odd value with a long tail" : "e", r);
        REQUIRE(sto_chunk_make_str(c, buf, (uint32_t)n, &str[r]));
    }
    sto_chunk_set_rows(c, STO_CHUNK_ROWS);
    CHECK(sto_chunk_full(c));
    sto_value one[] = {ival(1), sval("x")};
    sto_status st = sto_chunk_append_row(c, one);
    CHECK(st != NULL);
    sto_status_free(st);
    sto_chunk_seal(c);
    CHECK(c->stats[0].min.i == 0 && c->stats[0].max.i == (int64_t)(STO_CHUNK_ROWS - 1) * 3);
    /* HyperLogLog: about 3% error at 1024 registers; allow 10%. */
    CHECK(c->stats[0].distinct > 65536 * 9 / 10 && c->stats[0].distinct < 65536 * 11 / 10);
    CHECK(c->stats[1].distinct > 65536 * 9 / 10 && c->stats[1].distinct < 65536 * 11 / 10);
    sto_value v = sto_chunk_get(c, 1, 65535);
    CHECK(v.v.str.len == strlen("odd value with a long tail-65535"));
    CHECK(memcmp(sto_str_data(&v.v.str), "odd value with a long tail-65535", v.v.str.len) == 0);
    CHECK(c->heap.bytes_used > 0);
    sto_chunk_free(c);
    sto_schema_free(s);
}

static void test_hashes_and_sketch(void)
{
    char a[40] = "the same bytes at another address", b[40];
    memcpy(b, a, sizeof(a));
    CHECK(sto_hash_bytes(a, 33) == sto_hash_bytes(b, 33));
    CHECK(sto_hash_bytes(a, 33) != sto_hash_bytes(a, 32));
    b[20] ^= 1;
    CHECK(sto_hash_bytes(a, 33) != sto_hash_bytes(b, 33));
    CHECK(sto_hash_u64(1) != sto_hash_u64(2));
    /* Sketches: exact-ish for small counts, merging is a union. */
    sto_hll h1, h2;
    memset(&h1, 0, sizeof(h1));
    memset(&h2, 0, sizeof(h2));
    for (uint64_t i = 0; i < 100; i++)
        sto_hll_add(&h1, sto_hash_u64(i));
    for (uint64_t i = 50; i < 150; i++)
        sto_hll_add(&h2, sto_hash_u64(i));
    uint64_t e1 = sto_hll_estimate(&h1);
    CHECK(e1 >= 95 && e1 <= 105);
    for (unsigned i = 0; i < STO_HLL_REGISTERS; i++)
        if (h2.reg[i] > h1.reg[i]) h1.reg[i] = h2.reg[i];
    uint64_t e = sto_hll_estimate(&h1);
    CHECK(e >= 142 && e <= 158);
    for (uint64_t i = 0; i < 1000000; i++)
        sto_hll_add(&h1, sto_hash_u64(i));
    e = sto_hll_estimate(&h1);
    CHECK(e > 900000 && e < 1100000);
}

/* The sketch hash from a string's parts (what writers use while filling a
 * chunk) equals the hash of the stored sto_str at every length, and bytes
 * past a short string's end do not count. */
static void test_sketch_from_parts(void)
{
    const char text[] = "carefully final deposits detect slyly agai";
    char junk[64];
    memset(junk, 'x', sizeof(junk));
    for (uint32_t len = 0; len < sizeof(text) - 1; len++) {
        sto_str v = sto_str_make(text, len);
        uint64_t want = sto_hash_str_sketch(&v);
        uint64_t got;
        if (len > STO_STR_INLINE_MAX) {
            uint64_t w0, w1, w2;
            memcpy(&w0, text, 8);
            memcpy(&w1, text + (len >= 16 ? 8 : len - 8), 8);
            memcpy(&w2, text + len - 8, 8);
            got = sto_hash_sketch_words(len, w0, w1, w2);
        } else {
            uint64_t w0 = 0, w1 = 0;
            memcpy(junk, text, len); /* junk after the string's end */
            memcpy(&w0, junk, len < 4 ? len : 4);
            if (len > 4) memcpy(&w1, junk + 4, len - 4);
            got = sto_hash_sketch_words(len, w0, w1, 0);
        }
        CHECK(got == want);
        /* the same from the bytes alone, junk after a short one's end */
        CHECK(sto_hash_str_bytes_sketch(len > STO_STR_INLINE_MAX ? text : junk, len) == want);
        if (len > 0) {
            sto_str shorter = sto_str_make(text, len - 1);
            CHECK(sto_hash_str_sketch(&shorter) != want);
        }
    }
}

static void test_numa_alloc(void)
{
    size_t n = 3u << 20;
    unsigned char *p = sto_numa_alloc(n);
    REQUIRE(p);
    CHECK(p[0] == 0 && p[n - 1] == 0);
    memset(p, 7, n);
    CHECK(p[n / 2] == 7);
    sto_numa_free(p, n);
    int node = sto_numa_current_node();
    CHECK(node >= 0);
    p = sto_numa_alloc_onnode(4096, node);
    REQUIRE(p);
    p[4095] = 1;
    sto_numa_free(p, 4096);
}

int main(void)
{
    RUN(test_schema);
    RUN(test_rows_nulls_strings);
    RUN(test_capacity_and_columnwise);
    RUN(test_hashes_and_sketch);
    RUN(test_sketch_from_parts);
    RUN(test_numa_alloc);
    return TEST_REPORT();
}
