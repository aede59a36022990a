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

#include <stdint.h>

#include "engine/mem.h"
#include "engine/rt_join.h"
#include "storage/status.h"

#define ENG_JOIN_HT_PTR_MASK ((uint64_t)0x0000FFFFFFFFFFFF)

typedef struct eng_join_ht {
    uint64_t *dir;  /* tagged chain heads */
    uint64_t mask;  /* slots - 1 */
    uint64_t count; /* entries inserted (known before inserting) */
    eng_mem *mem;
    /* The keyed entries to insert (spans over the mats), set by prepare. */
    eng_join_span *spans;
    unsigned n_spans;
    uint32_t stride;
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

/* eng_join_ht_lookup by address, for generated code. */
eng_join_entry *eng_rt_join_ht_lookup(const void *ht, uint64_t hash);

/* Sizes the directory for `count` entries (allocated zeroed on mem, 53200
 * when it does not fit). */
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

/* count entries at base (stride apart), single-threaded: no other thread
 * touches the table meanwhile. */
void eng_join_ht_insert_local(eng_join_ht *ht, uint8_t *base, uint32_t stride, uint64_t count);

/* RIGHT/FULL: emits slice s of n_slices of the prepared entries whose flag
 * is clear. */
int32_t eng_join_ht_unmatched_slice(cg_error *err, const eng_join_ht *ht, const eng_join_spec *spec,
                                    uint64_t s, uint64_t n_slices);

void eng_join_ht_free(eng_join_ht *ht);

#endif
