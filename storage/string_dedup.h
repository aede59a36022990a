/*
 * string_dedup.h — one stored copy of a long string that repeats in a chunk.
 *
 * Many string columns hold a few long values over and over (TPC-H's
 * l_shipinstruct is 'DELIVER IN PERSON' or 'TAKE BACK RETURN' in half its
 * rows, o_clerk one of 1,000 per scale factor). A sto_str longer than 12
 * bytes is a pointer, so rows with equal bytes can point at one copy in the
 * chunk's heap instead of a copy each; scans and generated code see the
 * same layout either way. A writer keeps one sto_dedup per string column
 * while it fills a chunk: a two-way set-associative table of the values
 * stored lately (by a hash of their length and first and last 8 bytes),
 * looked up before a copy is made. Once STO_DEDUP_TRIAL long strings have
 * been seen, a column with fewer than one repeat in 16 (comments, names
 * with a serial number) stops looking for the rest of the chunk, so unique
 * text costs a short trial per chunk.
 *
 * Flow: sto_dedup_init once per writer and column → sto_dedup_reset at each
 * new chunk → sto_dedup_store per long string → sto_dedup_free.
 */
#ifndef RACKDB_STORAGE_STRING_DEDUP_H
#define RACKDB_STORAGE_STRING_DEDUP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "storage/string_heap.h"
#include "storage/types.h"

#define STO_DEDUP_BITS  12   /* 4096 slots, 2048 sets of two */
#define STO_DEDUP_TRIAL 4096 /* long strings before a column may give up */

typedef struct sto_dedup_slot {
    const char *ptr; /* the stored copy; NULL: empty */
    uint32_t len;
} sto_dedup_slot;

typedef struct sto_dedup {
    sto_dedup_slot *slots; /* 1 << STO_DEDUP_BITS */
    uint32_t seen, hits;   /* long strings and repeats in this chunk */
    bool off;              /* gave up for this chunk */
} sto_dedup;

/* Whether a string column of type t can hold long strings (more than
 * STO_STR_INLINE_MAX bytes), the only ones a table saves anything on. */
static inline bool sto_dedup_applies(sto_type t)
{
    return sto_type_is_string((sto_type_id)t.id) && (!t.length || t.length > STO_STR_INLINE_MAX);
}

/* Prepares d (allocates its table); false when out of memory. */
bool sto_dedup_init(sto_dedup *d);
void sto_dedup_free(sto_dedup *d);

/* Forgets every value: the next chunk has a heap of its own. */
void sto_dedup_reset(sto_dedup *d);

static inline uint32_t sto_dedup_slot_of(const char *bytes, uint32_t len)
{
    uint64_t a, b;
    memcpy(&a, bytes, 8);
    memcpy(&b, bytes + len - 8, 8);
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ len;
    h *= 0x165667B19E3779F9ull;
    return (uint32_t)(h >> (64 - STO_DEDUP_BITS));
}

/* Equality of two long strings (len > STO_STR_INLINE_MAX) of equal length
 * with fixed-size compares where they cover it (most repeated values are
 * short: a call to memcmp per row showed in the loader's profile). */
static inline bool sto_dedup_equal(const char *x, const char *y, uint32_t len)
{
    if (len <= 16) {
        uint64_t x0, x1, y0, y1;
        memcpy(&x0, x, 8);
        memcpy(&y0, y, 8);
        memcpy(&x1, x + len - 8, 8);
        memcpy(&y1, y + len - 8, 8);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (len <= 32) return memcmp(x, y, 16) == 0 && memcmp(x + len - 16, y + len - 16, 16) == 0;
    return memcmp(x, y, len) == 0;
}

/* After the trial, whether the column repeats enough: one repeat in 16
 * long strings pays for the lookups. */
static inline void sto_dedup_judge(sto_dedup *d)
{
    if (d->seen >= STO_DEDUP_TRIAL && d->hits < d->seen / 16) d->off = true;
}

/* The stored bytes of a long string (len > STO_STR_INLINE_MAX) of this
 * column in heap h: an earlier equal one (*found set, when found is not
 * NULL) or a new copy; NULL when out of memory. */
static inline const char *sto_dedup_store(sto_dedup *d, sto_string_heap *h, const char *bytes,
                                          uint32_t len, bool *found)
{
    if (found) *found = false;
    if (d->off || !d->slots) return sto_heap_copy(h, bytes, len);
    /* two ways per set: two values that share a set do not evict each
     * other on every alternation (o_clerk: 1,000 values in 4,096 slots) */
    sto_dedup_slot *set = &d->slots[sto_dedup_slot_of(bytes, len) & ~1u];
    d->seen++;
    for (int k = 0; k < 2; k++) {
        if (set[k].ptr && set[k].len == len && sto_dedup_equal(set[k].ptr, bytes, len)) {
            d->hits++;
            if (found) *found = true;
            return set[k].ptr;
        }
    }
    sto_dedup_judge(d);
    const char *copy = sto_heap_copy(h, bytes, len);
    set[1] = set[0]; /* the older value leaves */
    set[0].ptr = copy;
    set[0].len = len;
    return copy;
}

#endif
