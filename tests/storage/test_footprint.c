/*
 * test_footprint.c — the bytes a chunk and a table need and hold, counted
 * exactly (storage/footprint.c, storage/string_heap.c's block sizes).
 */
#include <stdio.h>

#include "storage/footprint.h"
#include "storage/table.h"
#include "test.h"

static sto_schema *make_schema(void)
{
    const char *names[] = {"id", "name", "price"};
    sto_type types[] = {sto_type_make(STO_TYPE_INTEGER), sto_type_make(STO_TYPE_VARCHAR),
                        sto_type_decimal(15, 2)};
    bool nn[] = {true, false, true};
    sto_schema *s = NULL;
    sto_status st = sto_schema_new(3, names, types, nn, &s);
    sto_status_free(st);
    return s;
}

static uint64_t align64(uint64_t n)
{
    return (n + 63) & ~(uint64_t)63;
}

/* 100 rows in a chunk for 1000: a NULL name every tenth row, 20-byte names
 * in the other even rows, 5-byte (inline) names in the odd ones. */
static void test_chunk_accounted_exactly(void)
{
    sto_schema *s = make_schema();
    REQUIRE(s);
    sto_chunk *c = NULL;
    REQUIRE(sto_chunk_new(s, 1000, &c) == NULL);
    uint64_t long_bytes = 0;
    for (int i = 0; i < 100; i++) {
        sto_value v[3] = {{false, {.i64 = i}}, {false, {.i64 = 0}}, {false, {.i64 = i * 100}}};
        const char *name = i % 2 ? "short" : "a name of 20 bytes..";
        if (i % 10 == 0)
            v[1].is_null = true;
        else
            v[1].v.str = sto_str_make(name, (uint32_t)strlen(name));
        if (!v[1].is_null && strlen(name) > STO_STR_INLINE_MAX) long_bytes += strlen(name);
        sto_status st = sto_chunk_append_row(c, v);
        CHECK(st == NULL);
        sto_status_free(st);
    }
    CHECK_EQ_INT(long_bytes, 40 * 20);
    sto_footprint f = {0};
    sto_chunk_footprint(c, &f);
    CHECK_EQ_INT(f.chunks, 1);
    CHECK_EQ_INT(f.rows, 100);
    CHECK_EQ_INT(f.value_bytes, 100 * (4 + 16 + 8));
    CHECK_EQ_INT(f.validity_bytes, 2 * 8); /* one bitmap of two words */
    CHECK_EQ_INT(f.string_bytes, long_bytes);
    CHECK_EQ_INT(sto_footprint_needed(&f), 100 * 28 + 16 + long_bytes);
    /* the region is sized for the capacity; the heap is one first block,
     * 16 KiB with its header, one of the allocator's size classes */
    CHECK_EQ_INT(f.region_bytes,
                 align64(1000 * 4) + align64(1000 * 16) + align64(1000 * 8) + align64(16 * 8));
    CHECK_EQ_INT(f.heap_bytes, 16 << 10);
    CHECK_EQ_INT(sto_footprint_held(&f), f.region_bytes + f.heap_bytes);

    /* the table's figures are the sum of its chunks', its columns' each
     * column's own */
    sto_table *t = NULL;
    REQUIRE(sto_table_new(s, &t) == NULL);
    REQUIRE(sto_table_append_chunks(t, &c, 1) == NULL);
    sto_footprint tf;
    sto_table_footprint(t, &tf);
    CHECK(memcmp(&tf, &f, sizeof(f)) == 0);
    sto_footprint cf;
    sto_column_footprint(t, 1, &cf);
    CHECK_EQ_INT(cf.value_bytes, 100 * 16);
    CHECK_EQ_INT(cf.validity_bytes, 16);
    CHECK_EQ_INT(cf.string_bytes, long_bytes);
    CHECK_EQ_INT(cf.region_bytes + cf.heap_bytes, 0);
    sto_column_footprint(t, 2, &cf);
    CHECK_EQ_INT(cf.value_bytes, 100 * 8);
    CHECK_EQ_INT(cf.validity_bytes + cf.string_bytes, 0);
    sto_table_free(t);
    sto_schema_free(s);
}

/* Heap blocks double from 16 KiB to 1 MiB, each exactly its size with the
 * header; a string larger than a block gets a block of its own. */
static void test_heap_blocks_are_size_classes(void)
{
    sto_string_heap h;
    sto_heap_init(&h);
    char piece[1000];
    memset(piece, 'x', sizeof(piece));
    uint64_t stored = 0;
    while (h.bytes_reserved < ((16u + 32 + 64 + 128 + 256 + 512 + 1024) << 10)) {
        REQUIRE(sto_heap_copy(&h, piece, sizeof(piece)));
        stored += sizeof(piece);
    }
    CHECK_EQ_INT(h.bytes_used, stored);
    CHECK_EQ_INT(h.bytes_reserved, (16u + 32 + 64 + 128 + 256 + 512 + 1024) << 10);
    REQUIRE(sto_heap_copy(&h, piece, sizeof(piece)));
    size_t before = h.bytes_reserved;
    /* a string of 3 MiB: a block of its own, header included */
    char *big = calloc(3u << 20, 1);
    REQUIRE(big);
    const char *p = sto_heap_copy(&h, big, 3u << 20);
    CHECK(p != NULL);
    CHECK(h.bytes_reserved - before > (3u << 20));
    CHECK(h.bytes_reserved - before < (3u << 20) + 64);
    free(big);
    sto_heap_free(&h);
    CHECK_EQ_INT(h.bytes_reserved, 0);
}

int main(void)
{
    RUN(test_chunk_accounted_exactly);
    RUN(test_heap_blocks_are_size_classes);
    return TEST_REPORT();
}
