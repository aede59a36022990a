/*
 * rt_join_keybits.h — an exact bitmap over a join's build keys when the key
 * is one integer column whose values are dense (TPC-H's custkey, partkey,
 * suppkey: 1..N), so a probe tests a bit instead of hashing.
 *
 *   build entries (shared table, prepared) ──► eng_join_keybits_build: min
 *   and max of the keys, then, when the range is dense, bit (key - base)
 *   of every key ──► probe pipelines (generated code) test the bit of
 *   their key before the directory ──► SEMI/ANTI joins without a residual
 *   decide there; a SEMI/ANTI join built on its left (FLAG probe) sets
 *   bit (key - base) of `hits` instead of the entries' flags ──►
 *   eng_join_keybits_fold copies `hits` into the entries' flags before the
 *   flagged (SEMI) or unflagged (ANTI) entries are emitted.
 *
 * The bitmap is exact: a probe key whose bit is clear, or outside
 * [base, base + span), has no build entry, and a key whose bit is set has
 * one. That is what lets SEMI and ANTI answer from the bit alone and a FLAG
 * probe mark keys instead of entries (every entry with that key would be
 * flagged anyway: without a residual a match is key equality). Other kinds
 * use the bit as a filter and go on to the directory on a hit.
 *
 * Why: q22 probes 1.5M orders into 42K customers; their 512 KB directory
 * and 2 MB of entries miss the L2 cache on every matching row, while the
 * bitmap over custkey 1..150000 is 19 KB. A range much wider than the
 * number of keys would make the bitmap bigger than the directory: then
 * there is none (bits NULL) and the compiled test costs one load and a
 * predictable branch.
 *
 * Generated code reads the fields at fixed offsets from the table
 * (eng_join_ht.keys): bits, hits, base, span. The key of an entry is read
 * at key_offset from the entry as a signed integer of key_bytes (4 or 8)
 * bytes, the width the probe key has too (the binder gives both sides of
 * an equality one type).
 */
#ifndef RACKDB_ENGINE_RT_JOIN_KEYBITS_H
#define RACKDB_ENGINE_RT_JOIN_KEYBITS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/mem.h"
#include "engine/rt_join.h"
#include "storage/status.h"

typedef struct eng_join_keybits {
    uint64_t *bits; /* bit (key - base) set: some build entry has the key; NULL: no bitmap */
    uint64_t *hits; /* FLAG probes: bit (key - base) set: some probe row had the key */
    int64_t base;   /* smallest build key */
    uint64_t span;  /* keys base .. base + span - 1 are covered */
    eng_mem *mem;
    uint32_t key_offset; /* of the key in an entry */
    unsigned key_bytes;  /* 4 or 8 */
    uint32_t col;        /* which of the join's key columns it covers */
    /* 1 when no two build entries have the same key: an INNER join whose
     * build side yields only its key then has exactly one match for a set
     * bit (cg_probe.keybits_unique) and needs no entry */
    uint32_t unique;
} eng_join_keybits;

/* A bitmap is made when span <= max(ENG_JOIN_KEYBITS_MIN_SPAN,
 * ENG_JOIN_KEYBITS_PER_ENTRY * entries): 16 bits an entry at most, a
 * quarter of a directory word (q22: 150000 bits for 42K customers); any
 * range up to 2^25 bits (4 MB) is worth it: its test is one load without
 * a hash, exact, and it lets a probe pipeline drop the rows without a
 * partner in its batch loop (codegen/pipeline.c produce_batched). The
 * probes that gain most scan lineitem in l_orderkey order against the
 * orders of a date range (46K of 6M keys at SF 1), so even a bitmap
 * larger than the L2 cache is read as a stream. At 2^21 bits those orders
 * had only the semi-join filter and every lineitem a hash: 2^23 made q05
 * 55-80 → 36-53 ms and q03 42-58 → 29-46 at SF 1, 2^25 q05 173-204 →
 * 76-123, q07 146-156 → 77-126 and q21 342-386 → 240-285 at SF 3 (three
 * and two interleaved runs, load about 2). At 2^18 bits q08 and q09 had
 * their part bitmaps at SF 1 (200K partkeys) but not at SF 3 (600K).
 * Builds beyond ENG_JOIN_KEYBITS_MAX_ENTRIES are not scanned for their
 * range (two passes over millions of entries cost more than the probe
 * saves). */
#define ENG_JOIN_KEYBITS_MIN_SPAN    ((uint64_t)1 << 25)
#define ENG_JOIN_KEYBITS_PER_ENTRY   16u
#define ENG_JOIN_KEYBITS_MAX_SPAN    ((uint64_t)1 << 30)
#define ENG_JOIN_KEYBITS_MAX_ENTRIES ((uint64_t)1 << 22)

/* Whether the span of keys [lo, hi] over `entries` keys is dense enough for
 * a bitmap (the rule above). */
bool eng_join_keybits_dense(int64_t lo, int64_t hi, uint64_t entries);

/* The smallest and largest key (at key_offset, key_bytes wide) of the
 * entries of spans[0..n); false when there are none. */
bool eng_join_keybits_range(const eng_join_span *spans, unsigned n, uint32_t stride,
                            uint32_t key_offset, unsigned key_bytes, int64_t *lo, int64_t *hi);

/* Builds kb over the `count` keyed entries of spans[0..n) (stride bytes
 * apart; the key at key_offset, key_bytes 4 or 8): the bitmap, and with
 * `hits` an empty hit map of the same size, when the keys are dense;
 * otherwise kb->bits stays NULL. kb->unique says whether every key came
 * once (a bit found set already is a duplicate). Memory comes from mem (53200 when over
 * the limit). kb is zeroed first. */
sto_status eng_join_keybits_build(eng_join_keybits *kb, const eng_join_span *spans, unsigned n,
                                  uint64_t count, uint32_t stride, uint32_t key_offset,
                                  unsigned key_bytes, bool hits, eng_mem *mem);

/* Whether key has a build entry (kb->bits must be set). */
static inline bool eng_join_keybits_test(const eng_join_keybits *kb, int64_t key)
{
    uint64_t d = (uint64_t)key - (uint64_t)kb->base;
    return d < kb->span && (kb->bits[d >> 6] >> (d & 63) & 1);
}

/* A FLAG probe's hit on key (whose bit is set), concurrently with others. */
static inline void eng_join_keybits_hit(eng_join_keybits *kb, int64_t key)
{
    uint64_t d = (uint64_t)key - (uint64_t)kb->base;
    uint64_t *w = &kb->hits[d >> 6], bit = (uint64_t)1 << (d & 63);
    if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit)) __atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
}

/* Sets the match flag of every entry of spans[0..n) whose key was hit (a
 * no-op without hits). Run after the probe pipeline, before the flagged or
 * unflagged entries are emitted. */
void eng_join_keybits_fold(const eng_join_keybits *kb, const eng_join_span *spans, unsigned n,
                           uint32_t stride);

void eng_join_keybits_free(eng_join_keybits *kb);

#endif
