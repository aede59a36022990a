/*
 * mem.h — memory accounting for queries: reserve before you allocate.
 *
 * Every query owns an eng_mem tracker whose limit is the session's
 * memory_limit; its parent is the instance-wide tracker, so the sum over all
 * running queries is bounded too. Code that is about to allocate first
 * reserves the bytes: the reservation climbs the chain (query → instance)
 * with atomic adds, and if any level would pass its limit nothing is taken
 * and the caller gets SQLSTATE 53200 "out of memory: query needs more than X
 * of memory_limit Y" instead of a failed (or overcommitted) allocation.
 * Releasing walks the same chain down.
 *
 * Workers that reserve many small pieces (hash-table nodes, string copies)
 * go through an eng_mem_cache: a per-worker budget taken from the tracker in
 * batches, so the shared counters are touched once per batch instead of once
 * per piece. A cache holds at most a few batches it does not use, so a
 * query may fail up to that much before its exact limit; when a whole batch
 * no longer fits the cache asks for exactly what it needs.
 *
 * The allocation helpers reserve and allocate in one step: blocks come from
 * the C heap (64-byte aligned), except big ones on a machine with several
 * NUMA nodes, which are whole pages placed on the given node
 * (storage/numa_alloc.h). Freeing takes the size, releases
 * the reservation and returns the memory. A root tracker (the instance's)
 * keeps freed blocks of ENG_MEM_POOL_MIN bytes or more in its pool
 * (engine/mem_pool.h) and hands them to the next allocation of about that
 * size under any tracker below it: their pages are already faulted in.
 */
#ifndef RACKDB_ENGINE_MEM_H
#define RACKDB_ENGINE_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"

typedef struct eng_mem eng_mem;

/* Blocks of at least this many bytes are page-allocated on a NUMA node
 * (when there are several). */
#define ENG_MEM_BIG_BLOCK ((size_t)1 << 20)

/* What an eng_mem_cache takes from its tracker at once. */
#define ENG_MEM_CACHE_BATCH ((uint64_t)256 << 10)

/* A new tracker. `name` says whose memory it is in errors ("query",
 * "instance"); `limit` is in bytes, 0 = unlimited; `parent` may be NULL. */
sto_status eng_mem_create(const char *name, uint64_t limit, eng_mem *parent, eng_mem **out);

/* Destroys a tracker; whatever is still reserved is given back to the
 * parent, so a leak in one query does not shrink the instance for good. */
void eng_mem_destroy(eng_mem *m);

/* Reserves `bytes` on m and every ancestor, or nothing and 53200. */
sto_status eng_mem_reserve(eng_mem *m, uint64_t bytes);

/* Gives back bytes reserved earlier on m. */
void eng_mem_release(eng_mem *m, uint64_t bytes);

/* Changes the limit (SET memory_limit); 0 = unlimited. Reservations already
 * made stay; new ones see the new limit. */
void eng_mem_set_limit(eng_mem *m, uint64_t limit);

uint64_t eng_mem_limit(const eng_mem *m);
uint64_t eng_mem_used(const eng_mem *m);
uint64_t eng_mem_peak(const eng_mem *m); /* the most `used` has been */
/* Bytes the pool of m's root keeps for reuse (reserved by no one). */
uint64_t eng_mem_pooled(const eng_mem *m);

/* Writes a byte count the way memory_limit is written ("64MB", "1.5GB",
 * "100 bytes") into buf. */
void eng_mem_format(uint64_t bytes, char *buf, size_t size);

/* A worker's batched view of a tracker. Owned by one thread; zero-initialize
 * it or use eng_mem_cache_init, and flush it before the tracker goes. */
typedef struct eng_mem_cache {
    eng_mem *mem;   /* the tracker batches come from (NULL = no accounting) */
    uint64_t avail; /* reserved on mem, not yet handed out */
} eng_mem_cache;

void eng_mem_cache_init(eng_mem_cache *c, eng_mem *m);
sto_status eng_mem_cache_reserve(eng_mem_cache *c, uint64_t bytes);
void eng_mem_cache_release(eng_mem_cache *c, uint64_t bytes);
/* Returns the unused budget to the tracker. */
void eng_mem_cache_flush(eng_mem_cache *c);

/* Reserves `bytes` on m (NULL = no accounting) and allocates them: 64-byte
 * aligned; blocks of ENG_MEM_BIG_BLOCK or more are pages on NUMA node `node`
 * (-1 = the calling thread's node). Contents are unspecified. *out is NULL
 * for 0 bytes. */
sto_status eng_mem_alloc(eng_mem *m, size_t bytes, int node, void **out);

/* The same with zeroed contents. */
sto_status eng_mem_alloc_zero(eng_mem *m, size_t bytes, int node, void **out);

/* Frees a block from eng_mem_alloc*; `bytes` must be the size asked for. */
void eng_mem_free(eng_mem *m, void *p, size_t bytes);

/* The same two through a worker's cache. */
sto_status eng_mem_cache_alloc(eng_mem_cache *c, size_t bytes, int node, void **out);
void eng_mem_cache_free(eng_mem_cache *c, void *p, size_t bytes);

#endif
