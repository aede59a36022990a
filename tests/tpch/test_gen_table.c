/*
 * test_gen_table.c — generating TPC-H straight into in-memory tables gives
 * exactly what loading the generated .tbl files gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_tables.h"
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

/* Chunks come sealed with the statistics the generator gathered while
 * filling them: exactly what a sealing pass over the chunk computes (the
 * same min/max, row and NULL counts, sketch registers and distinct
 * estimates), and the table's merged statistics follow from them. */
static void test_statistics_equal_sealing(void)
{
    REQUIRE(gen);
    sto_table *mem[TPCH_TABLE_COUNT] = {0};
    REQUIRE(new_tables(mem) == NULL);
    REQUIRE(tpch_gen_tables(gen, TPCH_ALL_TABLES, 1, 1, 2, mem) == NULL);
    int bad = 0, checked = 0;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        const sto_schema *s = sto_table_schema(mem[t]);
        for (size_t k = 0; k < sto_table_nchunks(mem[t]); k++) {
            const sto_chunk *c = sto_table_chunk(mem[t], k);
            CHECK(c->sealed);
            for (uint32_t i = 0; i < s->ncols; i++) {
                sto_column_stats want;
                sto_stats_compute(&want, s->cols[i].type, c->cols[i], c->validity[i], c->rows);
                const sto_column_stats *got = &c->stats[i];
                bool same =
                    got->rows == want.rows && got->null_count == want.null_count &&
                    got->has_minmax == want.has_minmax && got->distinct == want.distinct &&
                    memcmp(got->hll.reg, want.hll.reg, sizeof(want.hll.reg)) == 0 &&
                    (!want.has_minmax || (got->min.i == want.min.i && got->max.i == want.max.i));
                if (!same && bad++ < 3)
                    fprintf(stderr, "%s chunk %zu column %s: statistics differ\n",
                            tpch_table_info_get((tpch_table_id)t)->name, k, s->cols[i].name);
                checked++;
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(checked >= 8 * 3);
    /* the small ranges the generator declares hold every value */
    int ranged = 0;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        for (int i = 0; i < tpch_table_info_get((tpch_table_id)t)->column_count; i++) {
            int64_t lo, hi;
            if (!tpch_column_range((tpch_table_id)t, i, &lo, &hi)) continue;
            const sto_column_stats *s = sto_table_stats(mem[t], (uint32_t)i);
            CHECK(s->has_minmax && s->min.i >= lo && s->max.i <= hi);
            ranged++;
        }
    }
    CHECK(ranged >= 10);
    /* table-level: o_orderdate spans dbgen's order dates, l_linenumber 1..7 */
    const sto_column_stats *od = sto_table_stats(mem[TPCH_ORDERS], 4);
    CHECK(od->has_minmax);
    CHECK_EQ_INT(od->min.i, 8035); /* 1992-01-01 */
    CHECK(od->max.i <= 8035 + 2406 - 1);
    const sto_column_stats *ln = sto_table_stats(mem[TPCH_LINEITEM], 3);
    CHECK_EQ_INT(ln->min.i, 1);
    CHECK_EQ_INT(ln->max.i, 7);
    CHECK_EQ_INT(ln->distinct, 7);
    free_tables(mem);
}

/* Columns declared other than the generator's own types: BIGINT keys and
 * VARCHAR for CHAR take the same values; a string column too short for the
 * generated values fails with 22001 and leaves the table empty. */
static void test_other_column_types(void)
{
    REQUIRE(gen);
    const tpch_table_info *info = tpch_table_info_get(TPCH_PART);
    const char *names[16];
    sto_type types[16];
    bool not_null[16];
    for (int c = 0; c < info->column_count; c++) {
        names[c] = info->columns[c].name;
        types[c] = info->columns[c].type;
        not_null[c] = false;
        if (types[c].id == STO_TYPE_INTEGER) types[c] = sto_type_make(STO_TYPE_BIGINT);
        if (types[c].id == STO_TYPE_CHAR) types[c].id = STO_TYPE_VARCHAR;
    }
    sto_schema *s;
    REQUIRE(sto_schema_new((uint32_t)info->column_count, names, types, not_null, &s) == NULL);
    sto_table *t[TPCH_TABLE_COUNT] = {0}, *plain[TPCH_TABLE_COUNT] = {0};
    REQUIRE(sto_table_new(s, &t[TPCH_PART]) == NULL);
    REQUIRE(new_tables(plain) == NULL);
    REQUIRE(tpch_gen_tables(gen, TPCH_BIT(TPCH_PART), 1, 1, 2, t) == NULL);
    REQUIRE(tpch_gen_tables(gen, TPCH_BIT(TPCH_PART), 1, 1, 2, plain) == NULL);
    CHECK_EQ_INT(sto_table_rows(t[TPCH_PART]), 2000);
    int bad = 0;
    for (uint32_t c = 0; c < (uint32_t)info->column_count; c++)
        for (uint64_t r = 0; r < sto_table_rows(t[TPCH_PART]); r++)
            bad += !values_equal(types[c], sto_table_get(t[TPCH_PART], c, r),
                                 sto_table_get(plain[TPCH_PART], c, r));
    CHECK_EQ_INT(bad, 0);
    sto_table_free(t[TPCH_PART]);
    sto_schema_free(s);

    types[4] = sto_type_make(STO_TYPE_VARCHAR); /* p_type, values up to 25 bytes */
    types[4].length = 5;
    REQUIRE(sto_schema_new((uint32_t)info->column_count, names, types, not_null, &s) == NULL);
    REQUIRE(sto_table_new(s, &t[TPCH_PART]) == NULL);
    sto_status st = tpch_gen_tables(gen, TPCH_BIT(TPCH_PART), 1, 1, 2, t);
    CHECK(st != NULL);
    if (st) CHECK_STREQ(st->sqlstate, "22001");
    sto_status_free(st);
    CHECK_EQ_INT(sto_table_rows(t[TPCH_PART]), 0);
    sto_table_free(t[TPCH_PART]);
    sto_schema_free(s);
    free_tables(plain);
}

/* Comments may point into the generator's text pool instead of being
 * copied: the tables then hold the same values and statistics as copied
 * ones, keep the pool alive after the generator is freed (read here after
 * tpch_gen_free; the ASan build would catch a freed pool), and their
 * chunks' string heaps stay empty where comments are the only long
 * strings (partsupp). */
static void test_comments_point_into_pool(void)
{
    REQUIRE(gen);
    tpch_gen *own;
    REQUIRE(tpch_gen_create(0.01, 2, &own) == NULL);
    sto_table *pointed[TPCH_TABLE_COUNT] = {0}, *copied[TPCH_TABLE_COUNT] = {0};
    REQUIRE(new_tables(pointed) == NULL);
    REQUIRE(new_tables(copied) == NULL);
    tpch_tables_options point = {1, 1, 2, NULL, TPCH_TEXT_POINT};
    tpch_tables_options copy = {1, 1, 2, NULL, TPCH_TEXT_COPY};
    REQUIRE(tpch_gen_tables_with(own, TPCH_ALL_TABLES, &point, pointed) == NULL);
    REQUIRE(tpch_gen_tables_with(gen, TPCH_ALL_TABLES, &copy, copied) == NULL);
    tpch_gen_free(own);

    int bad = 0;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        const sto_schema *s = sto_table_schema(pointed[t]);
        CHECK_EQ_INT(sto_table_rows(pointed[t]), sto_table_rows(copied[t]));
        CHECK_EQ_INT(sto_table_nchunks(pointed[t]), sto_table_nchunks(copied[t]));
        if (sto_table_rows(pointed[t]) != sto_table_rows(copied[t])) continue;
        for (uint32_t c = 0; c < s->ncols; c++)
            for (uint64_t r = 0; r < sto_table_rows(pointed[t]); r++)
                bad += !values_equal(s->cols[c].type, sto_table_get(pointed[t], c, r),
                                     sto_table_get(copied[t], c, r));
        for (size_t k = 0; k < sto_table_nchunks(pointed[t]) &&
                           sto_table_nchunks(pointed[t]) == sto_table_nchunks(copied[t]);
             k++)
            for (uint32_t c = 0; c < s->ncols; c++)
                bad +=
                    memcmp(sto_table_chunk(pointed[t], k)->stats[c].hll.reg,
                           sto_table_chunk(copied[t], k)->stats[c].hll.reg, sizeof(sto_hll)) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    for (size_t k = 0; k < sto_table_nchunks(pointed[TPCH_PARTSUPP]); k++) {
        const sto_chunk *p = sto_table_chunk(pointed[TPCH_PARTSUPP], k);
        const sto_chunk *c = sto_table_chunk(copied[TPCH_PARTSUPP], k);
        CHECK_EQ_INT(p->heap.bytes_used, 0);
        CHECK(p->heap.release != NULL);
        CHECK(c->heap.bytes_used > 0);
        CHECK(c->heap.release == NULL);
    }
    free_tables(pointed);
    free_tables(copied);
}

/* The tables of the generator's own schema are written by unrolled
 * writers, any other schema by the general loop: both give the same rows
 * and the same statistics, here for orders and lineitem with nullable
 * BIGINT keys and nullable VARCHAR strings (the general loop, which also
 * sets validity bits). */
static void test_general_writer_matches_unrolled(void)
{
    REQUIRE(gen);
    static const tpch_table_id ids[] = {TPCH_ORDERS, TPCH_LINEITEM};
    sto_table *general[TPCH_TABLE_COUNT] = {0}, *plain[TPCH_TABLE_COUNT] = {0};
    sto_schema *schemas[2] = {NULL, NULL};
    unsigned mask = 0;
    for (int k = 0; k < 2; k++) {
        const tpch_table_info *info = tpch_table_info_get(ids[k]);
        const char *names[16];
        sto_type types[16];
        bool not_null[16];
        for (int c = 0; c < info->column_count; c++) {
            names[c] = info->columns[c].name;
            types[c] = info->columns[c].type;
            not_null[c] = false;
            if (types[c].id == STO_TYPE_INTEGER) types[c] = sto_type_make(STO_TYPE_BIGINT);
            if (types[c].id == STO_TYPE_CHAR) types[c].id = STO_TYPE_VARCHAR;
        }
        REQUIRE(sto_schema_new((uint32_t)info->column_count, names, types, not_null, &schemas[k]) ==
                NULL);
        REQUIRE(sto_table_new(schemas[k], &general[ids[k]]) == NULL);
        mask |= TPCH_BIT(ids[k]);
    }
    REQUIRE(new_tables(plain) == NULL);
    REQUIRE(tpch_gen_tables(gen, mask, 1, 1, 2, general) == NULL);
    REQUIRE(tpch_gen_tables(gen, mask, 1, 1, 2, plain) == NULL);
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        sto_table *g = general[ids[k]], *p = plain[ids[k]];
        CHECK(sto_table_rows(g) > 0);
        CHECK_EQ_INT(sto_table_rows(g), sto_table_rows(p));
        CHECK_EQ_INT(sto_table_nchunks(g), sto_table_nchunks(p));
        if (sto_table_rows(g) != sto_table_rows(p) || sto_table_nchunks(g) != sto_table_nchunks(p))
            continue;
        const sto_schema *s = sto_table_schema(g);
        for (uint32_t c = 0; c < s->ncols; c++)
            for (uint64_t r = 0; r < sto_table_rows(g); r++)
                bad +=
                    !values_equal(s->cols[c].type, sto_table_get(g, c, r), sto_table_get(p, c, r));
        for (size_t n = 0; n < sto_table_nchunks(g); n++) {
            const sto_chunk *gc = sto_table_chunk(g, n), *pc = sto_table_chunk(p, n);
            for (uint32_t c = 0; c < s->ncols; c++) {
                const sto_column_stats *a = &gc->stats[c], *b = &pc->stats[c];
                bad += a->rows != b->rows || a->null_count != 0 || a->distinct != b->distinct ||
                       a->has_minmax != b->has_minmax ||
                       (a->has_minmax && (a->min.i != b->min.i || a->max.i != b->max.i)) ||
                       memcmp(a->hll.reg, b->hll.reg, sizeof(sto_hll)) != 0;
                /* every row valid: the general loop set the bits */
                for (uint32_t r = 0; r < gc->rows; r++)
                    bad += !sto_chunk_is_valid(gc, c, r);
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    for (int k = 0; k < 2; k++) {
        sto_table_free(general[ids[k]]);
        sto_schema_free(schemas[k]);
    }
    free_tables(plain);
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Every byte of every chunk's string heap belongs to exactly one stored
 * string: the heap holds the sum of the lengths of the distinct long
 * strings its rows point at. Repeated long strings (o_clerk, one of 1,000
 * per scale factor; listed ones like l_shipinstruct) are stored once per
 * chunk, so o_clerk's distinct copies are far fewer than its rows. */
static void test_heap_bytes_are_distinct_strings(void)
{
    REQUIRE(gen);
    sto_table *t[TPCH_TABLE_COUNT] = {0};
    REQUIRE(new_tables(t) == NULL);
    REQUIRE(tpch_gen_tables(gen, TPCH_ALL_TABLES, 1, 1, 2, t) == NULL);
    int bad = 0;
    uint64_t clerk_rows = 0, clerk_copies = 0;
    for (int k = 0; k < TPCH_TABLE_COUNT; k++) {
        const sto_schema *s = sto_table_schema(t[k]);
        for (size_t n = 0; n < sto_table_nchunks(t[k]); n++) {
            const sto_chunk *c = sto_table_chunk(t[k], n);
            /* (pointer, length) of each long string, sorted by pointer */
            uintptr_t *refs = malloc((size_t)c->rows * s->ncols * 2 * sizeof(*refs));
            REQUIRE(refs);
            size_t nrefs = 0;
            for (uint32_t col = 0; col < s->ncols; col++) {
                if (!sto_type_is_string((sto_type_id)s->cols[col].type.id)) continue;
                const sto_str *v = c->cols[col];
                for (uint32_t r = 0; r < c->rows; r++) {
                    if (v[r].len <= STO_STR_INLINE_MAX) continue;
                    refs[2 * nrefs] = (uintptr_t)v[r].u.ptr;
                    refs[2 * nrefs + 1] = v[r].len;
                    nrefs++;
                }
            }
            qsort(refs, nrefs, 2 * sizeof(*refs), cmp_ptr);
            uint64_t bytes = 0;
            for (size_t i = 0; i < nrefs; i++) {
                if (i > 0 && refs[2 * i] == refs[2 * i - 2]) {
                    bad += refs[2 * i + 1] != refs[2 * i - 1]; /* one copy, one length */
                    continue;
                }
                bad += i > 0 && refs[2 * i] < refs[2 * i - 2] + refs[2 * i - 1]; /* overlap */
                bytes += refs[2 * i + 1];
            }
            CHECK_EQ_INT(c->heap.bytes_used, bytes);
            free(refs);
            if (k != TPCH_ORDERS) continue;
            int clerk = sto_schema_find(s, "o_clerk");
            REQUIRE(clerk >= 0);
            const sto_str *v = c->cols[clerk];
            uintptr_t *ptrs = malloc((size_t)c->rows * sizeof(*ptrs));
            REQUIRE(ptrs);
            for (uint32_t r = 0; r < c->rows; r++)
                ptrs[r] = (uintptr_t)v[r].u.ptr;
            qsort(ptrs, c->rows, sizeof(*ptrs), cmp_ptr);
            for (uint32_t r = 0; r < c->rows; r++)
                clerk_copies += r == 0 || ptrs[r] != ptrs[r - 1];
            clerk_rows += c->rows;
            free(ptrs);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(clerk_rows, 15000);
    /* 1,000 clerks; a few stored twice where three share a table set */
    CHECK(clerk_copies >= 1000 && clerk_copies < 1500);
    if (clerk_copies >= 1500)
        fprintf(stderr, "  o_clerk: %llu copies\n", (unsigned long long)clerk_copies);
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
    RUN(test_statistics_equal_sealing);
    RUN(test_other_column_types);
    RUN(test_comments_point_into_pool);
    RUN(test_general_writer_matches_unrolled);
    RUN(test_heap_bytes_are_distinct_strings);
    tpch_gen_free(gen);
    rmdir(dir);
    return TEST_REPORT();
}
