/*
 * rt_hashtable.h — the non-partitioned hash join: one shared, pre-sized
 * table built in parallel straight over the workers' materialized tuples
 * (HyPer's morsel-driven join).
 *
 *   build pipeline ──► eng_join_mat per worker ──► eng_join_ht_prepare
 *   (count known: directory sized once) ──► eng_join_ht_insert_slice × N in
 *   parallel ──► probe pipelines call eng_join_ht_lookup(hash) per tuple
 *
 * The directory is an array of 64-bit words, a power of two of them (at
 * least the number of keyed entries, so chains stay short). A word holds a
 * chain head pointer in its low 48 bits and a 16-bit tag in the upper 16:
 * bit (hash >> 32) & 15 of every entry in the chain is set. A probe whose
 * tag bit is clear knows there is no match without touching an entry — most
 * misses of a selective join cost one directory read. Inserting swaps the
 * word with compare-and-swap (the new entry links to the old head), so
 * workers insert concurrently without locks; the entries themselves never
 * move (they stay in the workers' blocks).
 *
 * The same structure, filled single-threaded, is each radix partition's
 * table (rt_radix.h), so generated probe code is the same for both.
 * Generated code may inline eng_join_ht_lookup: it needs the words at
 * offsetof(eng_join_ht, dir) and offsetof(eng_join_ht, mask), the tag rule
 * below and ENG_JOIN_HT_PTR_MASK. Loads need no ordering: every insert has
 * finished before the first probe (the probe pipeline depends on the
 * insert pipeline, and the scheduler's hand-over orders memory).
 */
#ifndef RACKDB_ENGINE_RT_HASHTABLE_H
#define RACKDB_ENGINE_RT_HASHTABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/mem.h"
#include "engine/rt_join.h"
#include "engine/rt_join_keybits.h"
#include "storage/status.h"

#define ENG_JOIN_HT_PTR_MASK ((uint64_t)0x0000FFFFFFFFFFFF)

typedef struct eng_join_ht {
    uint64_t *dir;  /* tagged chain heads */
    uint64_t mask;  /* slots - 1 */
    uint64_t count; /* entries inserted (known before inserting) */
    eng_mem *mem;
    /* The optional semi-join filter (eng_join_ht_filter_init): filter_mask
     * + 1 words, a power of two; NULL lets every hash through. */
    uint64_t *filter;
    uint64_t filter_mask;
    /* The keyed entries to insert (spans over the mats), set by prepare. */
    eng_join_span *spans;
    unsigned n_spans;
    uint32_t stride;
    /* The optional exact bitmap of a dense integer key (rt_join_keybits.h;
     * eng_join_ht_keybits): keys.bits NULL when there is none. */
    eng_join_keybits keys;
} eng_join_ht;

/* The tag bit of a hash, in the directory word's upper 16 bits. */
static inline uint64_t eng_join_ht_tag(uint64_t hash)
{
    return (uint64_t)1 << (48 + ((hash >> 32) & 15));
}

/* The chain head for a hash, or NULL when its tag says no entry can match.
 * Chains may hold other hashes: compare e->hash, then the keys. */
static inline eng_join_entry *eng_join_ht_lookup(const eng_join_ht *ht, uint64_t hash)
{
    uint64_t w = __atomic_load_n(&ht->dir[hash & ht->mask], __ATOMIC_RELAXED);
    if (!(w & eng_join_ht_tag(hash))) return NULL;
    return (eng_join_entry *)(uintptr_t)(w & ENG_JOIN_HT_PTR_MASK);
}

/* --- the semi-join filter ------------------------------------------------------
 *
 * A register-blocked Bloom filter over the build side's hashes, built while
 * the entries are inserted: each hash sets 3 bits in one 64-bit word, so a
 * probe tests one word with one mask. It is ENG_JOIN_FILTER_BITS bits per
 * entry: 147K entries (q03's orders) make 256 KB that stay in L2, where the
 * 2 MB directory does not. A probe row whose bits are not all set has no
 * partner; it never loads the directory. The word is bits 40..63 of the
 * hash times an odd constant (so it depends on every bit of the hash, not
 * on the low bits that pick the directory slot); the 3 bits are hash bits
 * 36..41, 42..47 and 48..53, which neither the tag (32..35) nor the slot
 * uses. Generated code repeats these two rules. */

#define ENG_JOIN_FILTER_BITS 8u
#define ENG_JOIN_FILTER_MUL  0x9E3779B97F4A7C15ull

static inline uint64_t eng_join_filter_word(uint64_t hash, uint64_t mask)
{
    return ((hash * ENG_JOIN_FILTER_MUL) >> 40) & mask;
}

static inline uint64_t eng_join_filter_bits(uint64_t hash)
{
    return ((uint64_t)1 << ((hash >> 36) & 63)) | ((uint64_t)1 << ((hash >> 42) & 63)) |
           ((uint64_t)1 << ((hash >> 48) & 63));
}

/* Whether an entry with this hash may be in the table (always true without
 * a filter). */
static inline bool eng_join_ht_may_match(const eng_join_ht *ht, uint64_t hash)
{
    if (!ht->filter) return true;
    uint64_t bits = eng_join_filter_bits(hash);
    return (ht->filter[eng_join_filter_word(hash, ht->filter_mask)] & bits) == bits;
}

/* Gives a prepared table a filter, filled by the inserts that follow: an
 * empty one sized for ht->count entries; or none (filter NULL: generated
 * code then skips the test after one load and compare) when fewer than
 * ENG_JOIN_FILTER_MIN_ENTRIES entries came (a directory of 64 KB or less
 * stays in L2 beside what else the pipeline touches; q05's and q10's 46K
 * and 57K orders, whose 512 KB directories do not, ran 15-20% less CPU in
 * their probes with a filter) or when the words would not fit in 24 bits
 * of index. */
#define ENG_JOIN_FILTER_MIN_ENTRIES 8192u
sto_status eng_join_ht_filter_init(eng_join_ht *ht);

/* A table with only a filter (no directory), filled from the keyed entries
 * of mats[0..n) whatever their number: a radix or sort-merge join's probe
 * side drops the rows that fail it before they are materialized and
 * partitioned (cg_sink.join_filter), which pays at any size. Free it with
 * eng_join_ht_free. */
sto_status eng_join_ht_filter_mats(eng_join_ht *ht, eng_join_mat *const *mats, unsigned n,
                                   eng_mem *mem);

/* eng_join_ht_lookup by address, for generated code. */
eng_join_entry *eng_rt_join_ht_lookup(const void *ht, uint64_t hash);

/* Sizes the directory for `count` entries (allocated zeroed on mem, 53200
 * when it does not fit). On a machine with one NUMA node eng_mem takes
 * even a big directory from the process heap, which hands back pages an
 * earlier query already touched, where fresh pages cost a fault each
 * (about 3 us here: 1.4 ms of a 2 MB directory's build). */
sto_status eng_join_ht_init(eng_join_ht *ht, uint64_t count, eng_mem *mem, int node);

/* Step 1 of the shared join: collects the keyed entries of mats[0..n) and
 * sizes the directory for them. */
sto_status eng_join_ht_prepare(eng_join_ht *ht, eng_join_mat *const *mats, unsigned n,
                               eng_mem *mem);

/* Step 2: inserts slice s of n_slices of the prepared entries; slices run
 * concurrently. */
void eng_join_ht_insert_slice(eng_join_ht *ht, uint64_t s, uint64_t n_slices);

/* One entry, concurrently with other inserts. */
void eng_join_ht_insert(eng_join_ht *ht, eng_join_entry *e);

/* Prepared entries [begin, end), concurrently with other ranges; the
 * directory words a few entries ahead are prefetched, so the misses of
 * consecutive inserts overlap. */
void eng_join_ht_insert_range(eng_join_ht *ht, uint64_t begin, uint64_t end);

/* count entries at base (stride apart), single-threaded: no other thread
 * touches the table meanwhile. */
void eng_join_ht_insert_local(eng_join_ht *ht, uint8_t *base, uint32_t stride, uint64_t count);

/* RIGHT/FULL: emits slice s of n_slices of the prepared entries whose flag
 * is clear. */
int32_t eng_join_ht_unmatched_slice(cg_error *err, const eng_join_ht *ht, const eng_join_spec *spec,
                                    uint64_t s, uint64_t n_slices);

/* Gives a prepared table the exact bitmap of one key column when its
 * values are dense (rt_join_keybits.h). Column c of ncols has its value at
 * key_offsets[c] of every entry, key_bytes[c] wide (0: not an integer, no
 * candidate); of the dense candidates the one with the widest range is
 * taken (q09's (suppkey, partkey): the partkeys of green parts, not the
 * suppkeys that cover every supplier) and kept in ht->keys.col. With
 * `hits` (one column only), FLAG probes mark keys there (fold them with
 * eng_join_keybits_fold over ht->spans before emitting). */
sto_status eng_join_ht_keybits(eng_join_ht *ht, const uint32_t *key_offsets,
                               const unsigned *key_bytes, unsigned ncols, bool hits);

void eng_join_ht_free(eng_join_ht *ht);

#endif
