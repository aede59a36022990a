/*
 * verbs_regcache.h — which memory is registered with the RDMA device.
 *
 * Every buffer a work request points at must lie inside a memory region
 * registered with the protection domain, and the request must carry that
 * region's local key. Registration pins pages and costs a system call, so
 * the verbs transport registers each pool slab once and then finds the key
 * of any message by address: a sorted array of disjoint regions and a binary
 * search. The registration calls themselves are passed in, so the cache is
 * tested without a device.
 */
#ifndef RACKDB_NET_MUX_VERBS_REGCACHE_H
#define RACKDB_NET_MUX_VERBS_REGCACHE_H

#include "storage/status.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mux_reg_ops {
    void *ctx;
    /* Registers [addr, addr+len); returns a handle (NULL on failure) and the
     * local key. */
    void *(*reg)(void *ctx, void *addr, size_t len, uint32_t *lkey);
    void (*dereg)(void *ctx, void *handle);
} mux_reg_ops;

typedef struct mux_regcache mux_regcache;

sto_status mux_regcache_create(const mux_reg_ops *ops, mux_regcache **out);

/* Deregisters every region and frees the cache. */
void mux_regcache_destroy(mux_regcache *c);

/* Registers a range unless one region already covers it. A range that
 * partly overlaps a registered region is an error. */
sto_status mux_regcache_add(mux_regcache *c, void *addr, size_t len);

/* The local key of the region covering all of [addr, addr+len); false when
 * no single region does. */
bool mux_regcache_lookup(const mux_regcache *c, const void *addr, size_t len, uint32_t *lkey);

/* Registered regions. */
size_t mux_regcache_count(const mux_regcache *c);

#endif
