/*
 * test_string_dedup.c — repeated long strings stored once per chunk
 * (storage/string_dedup.c), alone and through the loader, with every byte
 * of the chunks accounted for (storage/footprint.c).
 */
#include <stdio.h>
#include <unistd.h>

#include "storage/footprint.h"
#include "storage/loader.h"
#include "storage/string_dedup.h"
#include "storage/table.h"
#include "test.h"

static const char *const instr[] = {"DELIVER IN PERSON", "TAKE BACK RETURN", "NONE", "COLLECT COD"};

static void test_repeats_share_one_copy(void)
{
    sto_string_heap h;
    sto_heap_init(&h);
    sto_dedup d;
    REQUIRE(sto_dedup_init(&d));
    const char *first[2] = {NULL, NULL};
    int bad = 0, found_count = 0;
    for (int i = 0; i < 3000; i++) {
        const char *v = instr[i % 2];
        bool found;
        const char *p = sto_dedup_store(&d, &h, v, (uint32_t)strlen(v), &found);
        REQUIRE(p);
        found_count += found;
        if (!first[i % 2]) first[i % 2] = p;
        bad += p != first[i % 2] || memcmp(p, v, strlen(v)) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(found_count, 2998);
    CHECK(first[0] != first[1]);
    CHECK_EQ_INT(h.bytes_used, 17 + 16);
    CHECK(!d.off);
    /* a new chunk's heap starts empty: after a reset nothing is found */
    sto_dedup_reset(&d);
    bool found = true;
    const char *p = sto_dedup_store(&d, &h, instr[0], 17, &found);
    CHECK(p && p != first[0] && !found);
    CHECK_EQ_INT(h.bytes_used, 17 + 16 + 17);
    sto_dedup_free(&d);
    sto_heap_free(&h);
}

/* Equal lengths, one byte different anywhere: never equal. */
static void test_equality_sees_every_byte(void)
{
    char a[80], b[80];
    int bad = 0;
    for (uint32_t len = STO_STR_INLINE_MAX + 1; len <= 70; len++) {
        for (uint32_t i = 0; i < len; i++)
            a[i] = b[i] = (char)('a' + (i * 7 + len) % 26);
        bad += !sto_dedup_equal(a, b, len);
        for (uint32_t i = 0; i < len; i++) {
            b[i] ^= 1;
            bad += sto_dedup_equal(a, b, len);
            b[i] ^= 1;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

/* Unique strings stop the lookups after the trial and are all copied. */
static void test_unique_strings_give_up(void)
{
    sto_string_heap h;
    sto_heap_init(&h);
    sto_dedup d;
    REQUIRE(sto_dedup_init(&d));
    char buf[32];
    int bad = 0;
    for (int i = 0; i < 3 * STO_DEDUP_TRIAL; i++) {
        snprintf(buf, sizeof(buf), "unique value %07d", i); /* 20 bytes */
        const char *p = sto_dedup_store(&d, &h, buf, 20, NULL);
        REQUIRE(p);
        bad += memcmp(p, buf, 20) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(d.off);
    CHECK_EQ_INT(d.seen, STO_DEDUP_TRIAL);
    CHECK_EQ_INT(h.bytes_used, 3 * STO_DEDUP_TRIAL * 20);
    sto_dedup_free(&d);
    sto_heap_free(&h);
}

#define LOAD_ROWS 70000 /* more than one chunk per thread */

static char path[] = "/tmp/test_string_dedup.XXXXXX";

static void note_of(int i, char *buf, size_t size)
{
    snprintf(buf, size, "note %d about row %d", i * 7, i);
}

static bool write_file(void)
{
    int fd = mkstemp(path);
    if (fd < 0) return false;
    FILE *f = fdopen(fd, "w");
    if (!f) return false;
    char note[64];
    for (int i = 0; i < LOAD_ROWS; i++) {
        note_of(i, note, sizeof(note));
        if (i % 10 == 3)
            fprintf(f, "%d|%s||\n", i, instr[i % 4]); /* a NULL note */
        else
            fprintf(f, "%d|%s|%s|\n", i, instr[i % 4], note);
    }
    return fclose(f) == 0;
}

static sto_table *new_table(void)
{
    const char *names[] = {"id", "instr", "note"};
    sto_type types[] = {sto_type_make(STO_TYPE_INTEGER), sto_type_string(STO_TYPE_CHAR, 25),
                        sto_type_string(STO_TYPE_VARCHAR, 44)};
    bool nn[] = {true, true, false};
    sto_schema *s = NULL;
    sto_table *t = NULL;
    sto_status st = sto_schema_new(3, names, types, nn, &s);
    if (!st) st = sto_table_new(s, &t);
    sto_status_free(st);
    sto_schema_free(s);
    return t;
}

/* Loaded with 1 and 2 threads: every value reads back as written; in every
 * chunk the two long instructions are stored once each, so the heap holds
 * exactly their bytes and the notes' (unique, each copied); the table's
 * footprint is exactly rows x widths, one bitmap and those heap bytes. */
static void test_loader_shares_repeats(void)
{
    for (int threads = 1; threads <= 2; threads++) {
        sto_table *t = new_table();
        REQUIRE(t);
        sto_load_options opt = {sto_text_format_tbl(), threads, 1, NULL};
        uint64_t rows = 0;
        sto_status st = sto_load_file(t, path, &opt, &rows);
        CHECK(st == NULL);
        sto_status_free(st);
        REQUIRE(rows == LOAD_ROWS);
        int bad = 0;
        uint64_t row = 0, validity = 0, heap_used = 0;
        char note[64];
        for (size_t k = 0; k < sto_table_nchunks(t); k++) {
            const sto_chunk *c = sto_table_chunk(t, k);
            const char *seen[4] = {NULL, NULL, NULL, NULL};
            uint64_t notes = 0, copies = 0;
            for (uint32_t r = 0; r < c->rows; r++, row++) {
                int i = (int)sto_chunk_get(c, 0, r).v.i64;
                bad += i != (int)row;
                sto_value v = sto_chunk_get(c, 1, r);
                const char *want = instr[i % 4];
                bad += v.is_null || v.v.str.len != strlen(want) ||
                       memcmp(sto_str_data(&v.v.str), want, strlen(want)) != 0;
                if (v.v.str.len > STO_STR_INLINE_MAX) {
                    if (!seen[i % 4]) {
                        seen[i % 4] = v.v.str.u.ptr;
                        copies += v.v.str.len;
                    }
                    bad += seen[i % 4] != v.v.str.u.ptr;
                }
                v = sto_chunk_get(c, 2, r);
                if (i % 10 == 3) {
                    bad += !v.is_null;
                    continue;
                }
                note_of(i, note, sizeof(note));
                bad += v.is_null || v.v.str.len != strlen(note) ||
                       memcmp(sto_str_data(&v.v.str), note, strlen(note)) != 0;
                if (v.v.str.len > STO_STR_INLINE_MAX) notes += v.v.str.len;
            }
            CHECK_EQ_INT(copies, 17 + 16);
            CHECK_EQ_INT(c->heap.bytes_used, copies + notes);
            heap_used += c->heap.bytes_used;
            validity += sto_bitmap_words(c->rows) * 8;
        }
        CHECK_EQ_INT(bad, 0);
        sto_footprint f;
        sto_table_footprint(t, &f);
        CHECK_EQ_INT(f.rows, LOAD_ROWS);
        CHECK_EQ_INT(f.chunks, sto_table_nchunks(t));
        CHECK_EQ_INT(f.value_bytes, (uint64_t)LOAD_ROWS * (4 + 16 + 16));
        CHECK_EQ_INT(f.validity_bytes, validity);
        CHECK_EQ_INT(f.string_bytes, heap_used);
        CHECK(f.heap_bytes >= f.string_bytes);
        /* the column's own figure counts a shared string once per row */
        sto_footprint cf;
        sto_column_footprint(t, 1, &cf);
        CHECK_EQ_INT(cf.string_bytes, (uint64_t)LOAD_ROWS / 4 * (17 + 16));
        sto_table_free(t);
    }
}

int main(void)
{
    RUN(test_repeats_share_one_copy);
    RUN(test_equality_sees_every_byte);
    RUN(test_unique_strings_give_up);
    if (write_file()) {
        RUN(test_loader_shares_repeats);
    } else {
        fprintf(stderr, "cannot write %s\n", path);
        test_failed_++;
    }
    unlink(path);
    return TEST_REPORT();
}
