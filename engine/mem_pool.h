/*
 * mem_pool.h — big blocks kept for reuse instead of going back to the
 * system, so a query gets pages an earlier one (or an earlier operator)
 * already faulted in.
 *
 * Why: a fresh page costs a fault, zeroing and memory-cgroup accounting
 * (about 3 µs a 4 KiB page on the development VM), and jemalloc, which the
 * rackdb program links, hands blocks of 8 MB and more back to the system
 * as soon as they are freed. A radix join of 16M × 16M tuples writes 2.5
 * GB of partitions: with fresh pages on every run the kernel took more
 * CPU time than the join.
 *
 *   eng_mem_free (block ≥ ENG_MEM_POOL_MIN) ─► pool (up to its cap; the
 *   eng_mem_alloc (block ≥ ENG_MEM_POOL_MIN) ◄─  oldest blocks leave first)
 *                                    └─ none that fits: the C heap
 *
 * The pool belongs to a root tracker (the instance's; engine/mem.c finds
 * it from any query tracker below) and lives as long as it. Pooled blocks
 * are reserved by no one: the limits count the blocks queries hold, and
 * the pool's cap bounds what it keeps besides. Requests are rounded up to
 * size classes an eighth of a power of two apart, so repeated queries find
 * their blocks again; a request takes the newest block of its class or of
 * the next two. A kept block holds its own links, so the pool keeps any
 * number of them. Under AddressSanitizer kept blocks are poisoned.
 */
#ifndef RACKDB_ENGINE_MEM_POOL_H
#define RACKDB_ENGINE_MEM_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"

typedef struct eng_mem_pool eng_mem_pool;

/* Blocks smaller than this come and go through the C heap, whose arenas
 * keep their pages anyway. */
#define ENG_MEM_POOL_MIN ((size_t)1 << 20)

/* A pool that keeps at most `cap` bytes (0: $RACKDB_MEM_POOL_MB megabytes
 * when set, 0 turning the pool off; else a quarter of the machine's
 * memory, at most 8 GB: a 16M x 16M radix join frees 3.8 GB of blocks). */
sto_status eng_mem_pool_create(uint64_t cap, eng_mem_pool **out);

/* Frees every kept block and the pool. */
void eng_mem_pool_destroy(eng_mem_pool *p);

/* The capacity a request of `bytes` is given (its size class). */
size_t eng_mem_pool_class(size_t bytes);

/* A kept block of at least eng_mem_pool_class(bytes) bytes (64-byte
 * aligned, contents left over), or NULL. */
void *eng_mem_pool_take(eng_mem_pool *p, size_t bytes);

/* Keeps a block of eng_mem_pool_class(bytes) bytes or more (from
 * eng_mem_pool_take or posix_memalign); false when it is not kept and the
 * caller frees it. */
bool eng_mem_pool_give(eng_mem_pool *p, void *block, size_t bytes);

/* Bytes kept now, and the cap. */
uint64_t eng_mem_pool_bytes(eng_mem_pool *p);
uint64_t eng_mem_pool_cap(const eng_mem_pool *p);

#endif
