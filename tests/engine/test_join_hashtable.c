/*
 * test_join_hashtable.c — the shared, non-partitioned join table
 * (engine/rt_hashtable.c): tags, chains, concurrent inserts, and every join
 * kind through it against the nested-loop reference.
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
    RUN(test_kinds);
    jpools_free(pools);
    return TEST_REPORT();
}
