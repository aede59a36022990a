/*
 * backing.h — backs a fresh anonymous region with memory just ahead of one
 * sequential writer (the text pool's builders, tpch/text.c), in huge pages
 * while the kernel hands them out cheaply and in 4 KiB pages once it does
 * not.
 *
 * Why: on a virtual machine with free page reporting (this project's
 * machines) a huge page is a free 2 MiB block the guest may have handed
 * back to the host, and its first touch then costs one host fault per
 * 4 KiB: a huge page takes 0.2 ms to back or 5 to 12 ms, and one run
 * gets both kinds (docs/tpch_gen.md). 4 KiB pages cost about 1.2 ms per
 * 2 MiB every time, plus more TLB misses for whoever reads the region at
 * random later. So the writer backs the region a step at a time
 * (MADV_POPULATE_WRITE) and times each step in thread CPU time: once the
 * huge pages that came dear (costing more than 4 KiB pages would) are too
 * many, the rest of the region gets 4 KiB pages (MADV_NOHUGEPAGE).
 *
 * The region must have been mapped with MADV_HUGEPAGE and be written only
 * at or below what tpch_backing_ahead was last asked for; bytes past that
 * still fault in on touch, so backing is never needed for correctness.
 */
#ifndef RACKDB_TPCH_BACKING_H
#define RACKDB_TPCH_BACKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What 2 MiB costs in 4 KiB pages here, thread CPU time: backing them
 * (1.2 ms) and the TLB misses of the random reads that follow (1.5 to
 * 2 ms more, docs/tpch_gen.md). A huge page that took longer was dear. */
#define TPCH_BACKING_DEAR_NS 2500000

typedef struct tpch_backing {
    char *next;        /* backed below this */
    char *end;         /* of the region */
    int64_t dear_ns;   /* a huge page that took longer to back was dear */
    bool small;        /* huge pages came dear: 4 KiB pages from `next` on */
    int huge_steps;    /* steps backed in huge pages */
    int dear_steps;    /* of them, the dear ones */
    size_t huge_bytes; /* backed in huge pages */
    int64_t ns;        /* thread CPU time spent backing */
} tpch_backing;

/* Starts backing [start, end), nothing backed yet; `dear_ns` is normally
 * TPCH_BACKING_DEAR_NS (tests pass others). */
void tpch_backing_init(tpch_backing *b, char *start, char *end, int64_t dear_ns);

/* The slow path of tpch_backing_ahead. */
void tpch_backing_step(tpch_backing *b, const char *upto);

/* Backs the region up to at least `upto` (clamped to its end). */
static inline void tpch_backing_ahead(tpch_backing *b, const char *upto)
{
    if (upto > b->next && b->next < b->end) tpch_backing_step(b, upto);
}

#endif
