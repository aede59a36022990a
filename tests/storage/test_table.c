/*
 * test_table.c — tables: appending chunks and rows across chunk boundaries,
 * all-or-nothing appends, truncation, merged statistics (storage/table.c).
 */
#include <pthread.h>
#include <stdio.h>

#include "storage/table.h"
#include "test.h"

static sto_table *make_table(void)
{
    const char *names[] = {"k", "label", "maybe"};
    sto_type types[] = {sto_type_make(STO_TYPE_INTEGER), sto_type_string(STO_TYPE_VARCHAR, 0),
                        sto_type_make(STO_TYPE_BIGINT)};
    bool nn[] = {true, true, false};
    sto_schema *s = NULL;
    sto_table *t = NULL;
    if (sto_schema_new(3, names, types, nn, &s)) return NULL;
    sto_status st = sto_table_new(s, &t);
    sto_schema_free(s);
    sto_status_free(st);
    return t;
}

/* Row r: k = r, label = "L<r>" padded long for odd r, maybe NULL when r % 7 == 0. */
static sto_status append_rows(sto_table *t, uint64_t from, uint64_t n)
{
    sto_appender *a;
    STO_TRY(sto_appender_new(t, &a));
    char buf[64];
    sto_status st = STO_OK;
    for (uint64_t r = from; r < from + n && !st; r++) {
        int len = snprintf(buf, sizeof(buf), r % 2 ? "L%llu with a longer tail" : "L%llu",
                           (unsigned long long)r);
        sto_value v[3];
        memset(v, 0, sizeof(v));
        v[0].v.i64 = (int64_t)r;
        v[1].v.str = sto_str_make(buf, (uint32_t)len);
        v[2].is_null = r % 7 == 0;
        v[2].v.i64 = (int64_t)r * 10;
        st = sto_appender_row(a, v);
    }
    if (!st) st = sto_appender_commit(a);
    sto_appender_free(a);
    return st;
}

static int check_rows(const sto_table *t, uint64_t n)
{
    int bad = 0;
    char buf[64];
    if (sto_table_rows(t) != n) return 1;
    uint64_t r = 0;
    for (size_t k = 0; k < sto_table_nchunks(t); k++) {
        const sto_chunk *c = sto_table_chunk(t, k);
        const int32_t *key = c->cols[0];
        const sto_str *lab = c->cols[1];
        const int64_t *m = c->cols[2];
        for (uint32_t i = 0; i < c->rows; i++, r++) {
            int len = snprintf(buf, sizeof(buf), r % 2 ? "L%llu with a longer tail" : "L%llu",
                               (unsigned long long)r);
            if (key[i] != (int32_t)r) bad++;
            if (lab[i].len != (uint32_t)len || memcmp(sto_str_data(&lab[i]), buf, len) != 0) bad++;
            bool valid = sto_chunk_is_valid(c, 2, i);
            if (valid != (r % 7 != 0) || (valid && m[i] != (int64_t)r * 10)) bad++;
        }
    }
    return bad + (r != n);
}

static void test_chunk_boundaries(void)
{
    const uint64_t sizes[] = {0, 1, 65535, 65536, 65537, 3 * 65536 + 5};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        sto_table *t = make_table();
        REQUIRE(t);
        sto_status st = append_rows(t, 0, sizes[i]);
        CHECK(!st);
        sto_status_free(st);
        CHECK_EQ_INT(sto_table_rows(t), sizes[i]);
        CHECK_EQ_INT(check_rows(t, sizes[i]), 0);
        for (size_t k = 0; k < sto_table_nchunks(t); k++)
            CHECK(sto_table_chunk(t, k)->rows <= STO_CHUNK_ROWS && sto_table_chunk(t, k)->rows > 0);
        if (sizes[i] == 65537) {
            sto_value v = sto_table_get(t, 0, 65536);
            CHECK(!v.is_null && v.v.i64 == 65536);
            CHECK(sto_table_get(t, 2, 65534).is_null); /* 65534 = 7 * 9362 */
            CHECK(sto_table_get(t, 0, 65537).is_null); /* past the end */
        }
        sto_table_free(t);
    }
}

static void test_stats_and_truncate(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    REQUIRE(!append_rows(t, 0, 70000));
    const sto_column_stats *s0 = sto_table_stats(t, 0), *s2 = sto_table_stats(t, 2);
    CHECK_EQ_INT(s0->rows, 70000);
    CHECK(s0->has_minmax && s0->min.i == 0 && s0->max.i == 69999);
    CHECK_EQ_INT(s2->null_count, 10000); /* multiples of 7 below 70000 */
    CHECK(s2->min.i == 10 && s2->max.i == 699990);
    CHECK(s0->distinct > 63000 && s0->distinct < 77000);
    CHECK(sto_table_stats(t, 1)->distinct > 63000);

    /* A second batch, then undo it by truncating to the count before. */
    uint64_t before = sto_table_rows(t);
    size_t chunks_before = sto_table_nchunks(t);
    REQUIRE(!append_rows(t, 70000, 100000));
    CHECK_EQ_INT(sto_table_rows(t), 170000);
    CHECK(sto_table_stats(t, 0)->max.i == 169999);
    sto_table_truncate(t, before);
    CHECK_EQ_INT(sto_table_rows(t), 70000);
    CHECK_EQ_INT(sto_table_nchunks(t), chunks_before);
    CHECK_EQ_INT(check_rows(t, 70000), 0);
    CHECK(sto_table_stats(t, 0)->max.i == 69999 && sto_table_stats(t, 2)->null_count == 10000);

    /* Truncating inside a chunk cuts it. */
    sto_table_truncate(t, 65540);
    CHECK_EQ_INT(check_rows(t, 65540), 0);
    CHECK(sto_table_stats(t, 0)->max.i == 65539);
    CHECK_EQ_INT(sto_table_stats(t, 0)->rows, 65540);
    sto_table_truncate(t, 0);
    CHECK_EQ_INT(sto_table_rows(t), 0);
    CHECK_EQ_INT(sto_table_nchunks(t), 0);
    CHECK(!sto_table_stats(t, 0)->has_minmax);
    REQUIRE(!append_rows(t, 0, 10));
    CHECK_EQ_INT(check_rows(t, 10), 0);
    sto_table_free(t);
}

static void test_append_all_or_nothing(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    REQUIRE(!append_rows(t, 0, 5));
    /* A chunk of another shape makes the whole batch fail. */
    const char *names[] = {"other"};
    sto_type types[] = {sto_type_make(STO_TYPE_DOUBLE)};
    sto_schema *s = NULL;
    REQUIRE(!sto_schema_new(1, names, types, NULL, &s));
    sto_chunk *good = NULL, *bad = NULL;
    REQUIRE(!sto_table_new_chunk(t, 100, &good));
    REQUIRE(!sto_chunk_new(s, 100, &bad));
    sto_value v[3];
    memset(v, 0, sizeof(v));
    v[1].v.str = sto_str_make("L5 with a longer tail", 21); /* row 5 as append_rows makes it */
    v[0].v.i64 = 5;
    v[2].v.i64 = 50;
    REQUIRE(!sto_chunk_append_row(good, v));
    sto_chunk *batch[] = {good, bad};
    sto_status st = sto_table_append_chunks(t, batch, 2);
    CHECK(st && strcmp(st->sqlstate, STO_DATATYPE_MISMATCH) == 0);
    sto_status_free(st);
    CHECK_EQ_INT(sto_table_rows(t), 5);
    CHECK_EQ_INT(check_rows(t, 5), 0);
    /* The good chunk alone goes in; it is sealed on the way. */
    CHECK(!sto_table_append_chunks(t, &good, 1));
    CHECK(good->sealed);
    CHECK_EQ_INT(check_rows(t, 6), 0);
    sto_chunk_free(bad);
    sto_schema_free(s);

    /* An appender freed without commit leaves no trace. */
    sto_appender *a = NULL;
    REQUIRE(!sto_appender_new(t, &a));
    v[0].v.i64 = 99;
    CHECK(!sto_appender_row(a, v));
    sto_appender_free(a);
    CHECK_EQ_INT(sto_table_rows(t), 6);
    sto_table_free(t);
}

typedef struct {
    sto_table *t;
    int id;
} appender_arg;

static void *append_thread(void *p)
{
    appender_arg *a = p;
    for (int i = 0; i < 20; i++) {
        sto_chunk *c = NULL;
        if (sto_table_new_chunk(a->t, 16, &c)) return NULL;
        sto_value v[3];
        memset(v, 0, sizeof(v));
        v[0].v.i64 = a->id;
        v[1].v.str = sto_str_make("t", 1);
        v[2].is_null = true;
        sto_status st = sto_chunk_append_row(c, v);
        if (!st) st = sto_table_append_chunks(a->t, &c, 1);
        if (st) {
            sto_status_free(st);
            sto_chunk_free(c);
        }
    }
    return NULL;
}

static void test_concurrent_appends(void)
{
    sto_table *t = make_table();
    REQUIRE(t);
    pthread_t th[4];
    appender_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].t = t;
        args[i].id = i;
        pthread_create(&th[i], NULL, append_thread, &args[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(sto_table_rows(t), 80);
    CHECK_EQ_INT(sto_table_nchunks(t), 80);
    CHECK_EQ_INT(sto_table_stats(t, 2)->null_count, 80);
    CHECK(sto_table_stats(t, 0)->min.i == 0 && sto_table_stats(t, 0)->max.i == 3);
    sto_table_free(t);
}

int main(void)
{
    RUN(test_chunk_boundaries);
    RUN(test_stats_and_truncate);
    RUN(test_append_all_or_nothing);
    RUN(test_concurrent_appends);
    return TEST_REPORT();
}
