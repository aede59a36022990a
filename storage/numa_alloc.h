/*
 * numa_alloc.h — memory for large column arrays on the caller's NUMA node.
 *
 * Column arrays are written once by the loading thread and then scanned by
 * the worker pinned to the same node, so they are placed on the node of the
 * thread that allocates them (libnuma's local policy). Without NUMA support
 * (numa_available() < 0) the same calls fall back to 64-byte-aligned heap
 * memory. Pages are touched, and thus physically placed, by whoever writes
 * them first; the allocator never pre-faults.
 */
#ifndef RACKDB_STORAGE_NUMA_ALLOC_H
#define RACKDB_STORAGE_NUMA_ALLOC_H

#include <stddef.h>

/* `bytes` of memory on the calling thread's node (or aligned heap memory);
 * NULL when out of memory. Contents are zero. */
void *sto_numa_alloc(size_t bytes);

/* The same on a given node (-1 = the caller's node). */
void *sto_numa_alloc_onnode(size_t bytes, int node);

/* Frees memory from sto_numa_alloc*; `bytes` must be the size asked for. */
void sto_numa_free(void *p, size_t bytes);

/* The node the calling thread runs on (0 without NUMA support). */
int sto_numa_current_node(void);

#endif
