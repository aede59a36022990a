/*
 * test_join_hashtable.c — the shared, non-partitioned join table
 * (engine/rt_hashtable.c): tags, chains, concurrent inserts, the semi-join
 * filter, and every join kind through it against the nested-loop reference.
 */
#include <pthread.h>

#include "join_check.h"
#include "test.h"

static eng_sched *pools[3];

/* n entries with hash i * mult, each in its own 24-byte-headed slot. */
static uint8_t *make_entries(uint64_t n, uint64_t mult, uint32_t *stride)
{
    *stride = eng_join_entry_stride(8);
    uint8_t *base = calloc(n, *stride);
    for (uint64_t i = 0; i < n; i++) {
        eng_join_entry *e = eng_join_entry_at(base, *stride, i);
        e->hash = jmix(i * mult + 1);
        memcpy(eng_join_row(e), &i, 8);
    }
    return base;
}

static void test_tags_and_chains(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    uint32_t stride;
    uint64_t n = 1000;
    uint8_t *base = make_entries(n, 1, &stride);
    eng_join_ht ht;
    REQUIRE(eng_join_ht_init(&ht, n, mem, -1) == STO_OK);
    CHECK_EQ_INT(ht.mask + 1, 1024);
    eng_join_ht_insert_local(&ht, base, stride, n);
    /* Every entry is in the chain of its hash. */
    uint64_t found = 0, tag_misses = 0;
    for (uint64_t i = 0; i < n; i++) {
        eng_join_entry *want = eng_join_entry_at(base, stride, i);
        for (eng_join_entry *e = eng_join_ht_lookup(&ht, want->hash); e; e = e->next)
            if (e == want) found++;
    }
    CHECK_EQ_INT(found, n);
    /* Hashes that are not there: the tag turns most away at the directory. */
    for (uint64_t i = 0; i < 10000; i++) {
        uint64_t h = jmix(i + 5000000);
        eng_join_entry *e = eng_join_ht_lookup(&ht, h);
        if (!e) tag_misses++;
        for (; e; e = e->next)
            CHECK(e->hash != h);
    }
    CHECK(tag_misses > 5000);
    /* The tag bits of a word are the union of its chain's tags. */
    for (uint64_t s = 0; s <= ht.mask; s++) {
        uint64_t tags = 0;
        for (eng_join_entry *e = (eng_join_entry *)(uintptr_t)(ht.dir[s] & ENG_JOIN_HT_PTR_MASK); e;
             e = e->next)
            tags |= eng_join_ht_tag(e->hash);
        CHECK((ht.dir[s] & ~ENG_JOIN_HT_PTR_MASK) == tags);
    }
    eng_join_ht_free(&ht);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
    free(base);
}

typedef struct ins_arg {
    eng_join_ht *ht;
    uint8_t *base;
    uint32_t stride;
    uint64_t begin, end;
} ins_arg;

static void *insert_thread(void *p)
{
    ins_arg *a = p;
    for (uint64_t i = a->begin; i < a->end; i++)
        eng_join_ht_insert(a->ht, eng_join_entry_at(a->base, a->stride, i));
    return NULL;
}

/* Four threads insert at once (few slots: lots of CAS conflicts); every
 * entry ends up in exactly one chain, once. */
static void test_concurrent_insert(void)
{
    uint32_t stride;
    uint64_t n = 200000;
    uint8_t *base = make_entries(n, 1, &stride);
    eng_join_ht ht;
    REQUIRE(eng_join_ht_init(&ht, 64, NULL, -1) == STO_OK);
    pthread_t t[4];
    ins_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (ins_arg){&ht, base, stride, n * i / 4, n * (i + 1) / 4};
        pthread_create(&t[i], NULL, insert_thread, &a[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    uint8_t *seen = calloc(n, 1);
    uint64_t total = 0;
    for (uint64_t s = 0; s <= ht.mask; s++)
        for (eng_join_entry *e = (eng_join_entry *)(uintptr_t)(ht.dir[s] & ENG_JOIN_HT_PTR_MASK); e;
             e = e->next) {
            uint64_t id;
            memcpy(&id, eng_join_row(e), 8);
            CHECK((e->hash & ht.mask) == s);
            if (id < n) seen[id]++;
            total++;
        }
    CHECK_EQ_INT(total, n);
    uint64_t once = 0;
    for (uint64_t i = 0; i < n; i++)
        once += seen[i] == 1;
    CHECK_EQ_INT(once, n);
    free(seen);
    eng_join_ht_free(&ht);
    free(base);
}

/* The prepare + slice steps over mats cover every keyed entry once and no
 * NULL-keyed one. */
static void test_prepare_slices(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    eng_join_mat m[3];
    eng_join_mat *mp[3] = {&m[0], &m[1], &m[2]};
    cg_error err = cg_error_none();
    uint64_t n = 0;
    for (int w = 0; w < 3; w++) {
        eng_join_mat_init(&m[w], (eng_rt_mem){mem, NULL, -1}, 8);
        for (uint64_t i = 0; i < 5000u * (w + 1); i++) {
            uint8_t *row;
            if (i % 10 == 3) {
                CHECK(eng_rt_join_append_null(&err, &m[w], &row) == 0);
            } else {
                CHECK(eng_rt_join_append(&err, &m[w], jmix(n), &row) == 0);
                n++;
            }
            memcpy(row, &i, 8);
        }
    }
    eng_join_build_info info = eng_join_mat_info(mp, 3);
    CHECK_EQ_INT(info.rows, 30000);
    CHECK_EQ_INT(info.null_rows, 3000);
    eng_join_ht ht;
    REQUIRE(eng_join_ht_prepare(&ht, mp, 3, mem) == STO_OK);
    CHECK_EQ_INT(ht.count, n);
    for (uint64_t s = 0; s < 7; s++)
        eng_join_ht_insert_slice(&ht, s, 7);
    uint64_t total = 0;
    for (uint64_t s = 0; s <= ht.mask; s++)
        for (eng_join_entry *e = (eng_join_entry *)(uintptr_t)(ht.dir[s] & ENG_JOIN_HT_PTR_MASK); e;
             e = e->next)
            total++;
    CHECK_EQ_INT(total, n);
    eng_join_ht_free(&ht);
    for (int w = 0; w < 3; w++)
        eng_join_mat_free(&m[w]);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
}

/* The semi-join filter, filled by four threads inserting at once: every
 * inserted hash passes it (no false negatives), most absent ones do not,
 * and its words are charged to the query's tracker and given back. */
static void test_filter(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    uint32_t stride;
    uint64_t n = 100000;
    uint8_t *base = make_entries(n, 3, &stride);
    eng_join_ht ht;
    REQUIRE(eng_join_ht_init(&ht, n, mem, -1) == STO_OK);
    uint64_t dir_bytes = eng_mem_used(mem);
    REQUIRE(eng_join_ht_filter_init(&ht) == STO_OK);
    CHECK(ht.filter != NULL);
    /* 100000 entries × 8 bits = 12500 words, rounded up to a power of two */
    CHECK_EQ_INT(ht.filter_mask + 1, 16384);
    CHECK_EQ_INT(eng_mem_used(mem), dir_bytes + (ht.filter_mask + 1) * 8);
    pthread_t t[4];
    ins_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (ins_arg){&ht, base, stride, n * i / 4, n * (i + 1) / 4};
        pthread_create(&t[i], NULL, insert_thread, &a[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    uint64_t passed = 0;
    for (uint64_t i = 0; i < n; i++)
        passed += eng_join_ht_may_match(&ht, eng_join_entry_at(base, stride, i)->hash);
    CHECK_EQ_INT(passed, n);
    /* hashes of keys that are not there (the entries hold 3i + 1) */
    uint64_t false_pos = 0, absent = 100000;
    for (uint64_t i = 0; i < absent; i++)
        false_pos += eng_join_ht_may_match(&ht, jmix(i * 3 + 2));
    CHECK(false_pos < absent / 10);
    eng_join_ht_free(&ht);
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
    free(base);
}

/* Below ENG_JOIN_FILTER_MIN_ENTRIES entries (the directory fits in L2) and
 * over an empty build side the filter passes every hash: a probe compiled
 * to test it finds exactly what the directory holds. */
static void test_filter_pass_all(void)
{
    uint64_t counts[] = {0, 1000, ENG_JOIN_FILTER_MIN_ENTRIES - 1};
    for (unsigned c = 0; c < 3; c++) {
        uint32_t stride;
        uint64_t n = counts[c];
        uint8_t *base = make_entries(n ? n : 1, 1, &stride);
        eng_join_ht ht;
        REQUIRE(eng_join_ht_init(&ht, n, NULL, -1) == STO_OK);
        REQUIRE(eng_join_ht_filter_init(&ht) == STO_OK);
        CHECK(ht.filter == NULL);
        CHECK_EQ_INT(ht.filter_mask, 0);
        eng_join_ht_insert_local(&ht, base, stride, n);
        uint64_t passed = 0, found = 0;
        for (uint64_t i = 0; i < 10000; i++) {
            uint64_t h = jmix(i + 1);
            passed += eng_join_ht_may_match(&ht, h);
            for (eng_join_entry *e = eng_join_ht_lookup(&ht, h); e; e = e->next)
                found += e->hash == h;
        }
        CHECK_EQ_INT(passed, 10000);
        CHECK_EQ_INT(found, n < 10000 ? n : 10000);
        eng_join_ht_free(&ht);
        free(base);
    }
}

/* A filter-only table over workers' materialized entries (what radix and
 * sort-merge joins test their probe side on): every keyed entry passes at
 * any count, even below ENG_JOIN_FILTER_MIN_ENTRIES; an empty build side
 * passes nothing; the tracker ends at zero. */
static void test_filter_mats(void)
{
    eng_mem *mem;
    REQUIRE(eng_mem_create("query", 0, NULL, &mem) == STO_OK);
    uint64_t sizes[] = {0, 3000};
    for (unsigned c = 0; c < 2; c++) {
        eng_join_mat m[2];
        eng_join_mat *mp[2] = {&m[0], &m[1]};
        cg_error err = cg_error_none();
        for (int w = 0; w < 2; w++) {
            eng_join_mat_init(&m[w], (eng_rt_mem){mem, NULL, -1}, 8);
            for (uint64_t i = 0; i < sizes[c]; i++) {
                uint8_t *row;
                if (i % 7 == 0)
                    CHECK(eng_rt_join_append_null(&err, &m[w], &row) == 0);
                else
                    CHECK(eng_rt_join_append(&err, &m[w], jmix(w * 100000 + i), &row) == 0);
                memcpy(row, &i, 8);
            }
        }
        eng_join_ht ht;
        REQUIRE(eng_join_ht_filter_mats(&ht, mp, 2, mem) == STO_OK);
        CHECK(ht.dir == NULL);
        CHECK(ht.filter != NULL);
        uint64_t passed = 0, keyed = 0, false_pos = 0;
        for (int w = 0; w < 2; w++)
            for (uint64_t i = 0; i < sizes[c]; i++)
                if (i % 7) {
                    keyed++;
                    passed += eng_join_ht_may_match(&ht, jmix(w * 100000 + i));
                }
        CHECK_EQ_INT(passed, keyed);
        for (uint64_t i = 0; i < 10000; i++)
            false_pos += eng_join_ht_may_match(&ht, jmix(5000000 + i));
        if (sizes[c] == 0) CHECK_EQ_INT(false_pos, 0);
        CHECK(false_pos < 1000);
        eng_join_ht_free(&ht);
        for (int w = 0; w < 2; w++)
            eng_join_mat_free(&m[w]);
    }
    CHECK_EQ_INT(eng_mem_used(mem), 0);
    eng_mem_destroy(mem);
}

static void test_kinds(void)
{
    CHECK_EQ_INT(jcheck_cases(pools, JALG_SHARED, -1, 0), 0);
}

int main(void)
{
    jpools(pools);
    RUN(test_tags_and_chains);
    RUN(test_concurrent_insert);
    RUN(test_prepare_slices);
    RUN(test_filter);
    RUN(test_filter_pass_all);
    RUN(test_filter_mats);
    RUN(test_kinds);
    jpools_free(pools);
    return TEST_REPORT();
}
