/*
 * backing.c — backs a region ahead of its writer, in huge pages while they
 * come cheap (see backing.h).
 */
#include "tpch/backing.h"

#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE_STEP  ((uintptr_t)2 << 20)
#define SMALL_STEP ((uintptr_t)1 << 20)
#define PAGE       ((uintptr_t)4096)

/* When the rest of a region gets 4 KiB pages: once at least two huge pages
 * came dear and they are more than 3 in 8 of those backed so far. A huge
 * page costs 0.2 ms or 5 to 12 ms, seldom between, and one run may get
 * both kinds (the free blocks the guest has reported and those it has not
 * yet: 6% to 54% dear in three runs a minute apart); 4 KiB pages cost
 * 2.5 to 3 ms per 2 MiB (TPCH_BACKING_DEAR_NS), which huge pages beat
 * while fewer than about 3 in 8 are dear. */
static bool dear_enough(const tpch_backing *b)
{
    return b->dear_steps >= 2 && b->dear_steps * 8 > b->huge_steps * 3;
}

static int64_t thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void tpch_backing_init(tpch_backing *b, char *start, char *end, int64_t dear_ns)
{
    b->next = (char *)((uintptr_t)start & ~(PAGE - 1));
    b->end = end;
    b->dear_ns = dear_ns;
    b->small = false;
    b->huge_steps = 0;
    b->dear_steps = 0;
    b->huge_bytes = 0;
    b->ns = 0;
}

void tpch_backing_step(tpch_backing *b, const char *upto)
{
#ifdef MADV_POPULATE_WRITE
    while (b->next < upto && b->next < b->end) {
        uintptr_t step = b->small ? SMALL_STEP : HUGE_STEP;
        /* whole steps of the address space, so each huge page is backed
         * by one call */
        char *to = (char *)(((uintptr_t)b->next + step) & ~(step - 1));
        if (to > b->end) to = b->end;
        char *from = b->next;
        int64_t t0 = thread_ns();
        if (madvise(b->next, (size_t)(to - b->next), MADV_POPULATE_WRITE) != 0) {
            b->next = b->end; /* not here (before Linux 5.14): pages fault in on touch */
            return;
        }
        int64_t ns = thread_ns() - t0;
        b->ns += ns;
        b->next = to;
        if (b->small) continue;
        b->huge_steps++;
        b->huge_bytes += (size_t)(to - from);
        if (ns > b->dear_ns) b->dear_steps++;
        if (dear_enough(b) && to < b->end) {
            b->small = true;
            madvise(to, (size_t)(b->end - to), MADV_NOHUGEPAGE);
        }
    }
#else
    (void)upto;
    b->next = b->end;
#endif
}
