/*
 * test_backing.c — tpch/backing.h: a region is backed ahead of its writer
 * a step at a time, in huge pages until they come dear (here forced by the
 * threshold: 0 makes every step dear, a huge one none), then in 4 KiB
 * pages, and every byte stays writable and keeps what was written.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "test.h"
#include "tpch/backing.h"

#define MIB ((size_t)1 << 20)

/* A 2 MiB-aligned region of `size` bytes inside a fresh mapping. */
static char *map_region(size_t size, void **mapping, size_t *mapped)
{
    *mapped = size + 2 * MIB;
    void *m = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    *mapping = m;
    char *r = (char *)(((uintptr_t)m + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));
#ifdef MADV_HUGEPAGE
    madvise(r, size, MADV_HUGEPAGE);
#endif
    return r;
}

/* Writes the region in 64 KiB pieces, backing each ahead first, and
 * reads every piece back. */
static int write_through(tpch_backing *b, char *r, size_t size)
{
    int bad = 0;
    for (size_t at = 0; at < size; at += 64 * 1024) {
        tpch_backing_ahead(b, r + at + 64 * 1024);
        if (b->next < r + at + 64 * 1024 && b->next != b->end) bad++;
        memset(r + at, (int)(at / (64 * 1024)) & 0xff, 64 * 1024);
    }
    for (size_t at = 0; at < size; at += 64 * 1024)
        if (r[at] != (char)((at / (64 * 1024)) & 0xff) ||
            r[at + 64 * 1024 - 1] != (char)((at / (64 * 1024)) & 0xff))
            bad++;
    return bad;
}

static void test_cheap_huge_pages_stay_huge(void)
{
    void *m;
    size_t mapped, size = 12 * MIB;
    char *r = map_region(size, &m, &mapped);
    REQUIRE(r != NULL);
    tpch_backing b;
    tpch_backing_init(&b, r, r + size, INT64_MAX);
    CHECK_EQ_INT(write_through(&b, r, size), 0);
    CHECK(b.next == b.end);
    CHECK(!b.small);
#ifdef MADV_POPULATE_WRITE
    CHECK_EQ_INT(b.huge_steps, 6); /* 12 MiB in steps of 2 */
    CHECK_EQ_INT(b.dear_steps, 0);
#endif
    munmap(m, mapped);
}

static void test_dear_huge_pages_turn_small(void)
{
    void *m;
    size_t mapped, size = 12 * MIB;
    char *r = map_region(size, &m, &mapped);
    REQUIRE(r != NULL);
    tpch_backing b;
    tpch_backing_init(&b, r, r + size, 0);
    CHECK_EQ_INT(write_through(&b, r, size), 0);
    CHECK(b.next == b.end);
#ifdef MADV_POPULATE_WRITE
    /* the second dear step turns the rest to 4 KiB pages */
    CHECK(b.small);
    CHECK_EQ_INT(b.huge_steps, 2);
    CHECK_EQ_INT(b.dear_steps, 2);
#endif
    munmap(m, mapped);
}

static void test_unaligned_ends_and_far_targets(void)
{
    void *m;
    size_t mapped, size = 5 * MIB + 12345;
    char *r = map_region(6 * MIB, &m, &mapped);
    REQUIRE(r != NULL);
    tpch_backing b;
    /* starts inside a page and a huge page, ends inside another */
    tpch_backing_init(&b, r + 3 * MIB + 100, r + size, 0);
    tpch_backing_ahead(&b, r + 3 * MIB + 200);
    CHECK(b.next >= r + 3 * MIB + 200);
    CHECK(b.next <= r + 4 * MIB);
    tpch_backing_ahead(&b, r + 100 * MIB); /* past the end: stops there */
    CHECK(b.next == b.end);
    memset(r + 3 * MIB + 100, 7, size - 3 * MIB - 100);
    CHECK(r[size - 1] == 7);
    tpch_backing_ahead(&b, r + 200 * MIB); /* nothing left to do */
    CHECK(b.next == b.end);
    munmap(m, mapped);
}

int main(void)
{
    RUN(test_cheap_huge_pages_stay_huge);
    RUN(test_dear_huge_pages_turn_small);
    RUN(test_unaligned_ends_and_far_targets);
    return TEST_REPORT();
}
