/*
 * mem.c — memory trackers, per-worker reservation caches and the allocation
 * helpers built on them (see mem.h).
 *
 * A reservation is an optimistic atomic add: add first, and if the new total
 * passes the limit, subtract again and fail. Two racing reservations may
 * both fail where one alone would have fit; that errs on the side of the
 * limit and costs no lock. Ancestors are charged after the tracker itself
 * and rolled back in reverse when one of them refuses.
 */
#include "engine/mem.h"

#include <numa.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mem_pool.h"
#include "storage/numa_alloc.h"

struct eng_mem {
    eng_mem *parent;
    eng_mem_pool *pool; /* a root's: big blocks its queries freed */
    _Atomic uint64_t used;
    _Atomic uint64_t peak;
    _Atomic uint64_t limit; /* 0 = unlimited */
    char name[32];
};

sto_status eng_mem_create(const char *name, uint64_t limit, eng_mem *parent, eng_mem **out)
{
    *out = NULL;
    eng_mem *m = calloc(1, sizeof(*m));
    if (!m) return sto_error_oom();
    m->parent = parent;
    atomic_init(&m->used, 0);
    atomic_init(&m->peak, 0);
    atomic_init(&m->limit, limit);
    snprintf(m->name, sizeof(m->name), "%s", name ? name : "query");
    if (!parent) {
        sto_status st = eng_mem_pool_create(0, &m->pool);
        if (st) {
            free(m);
            return st;
        }
    }
    *out = m;
    return STO_OK;
}

void eng_mem_destroy(eng_mem *m)
{
    if (!m) return;
    uint64_t left = atomic_load(&m->used);
    if (left && m->parent) eng_mem_release(m->parent, left);
    eng_mem_pool_destroy(m->pool);
    free(m);
}

void eng_mem_format(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"kB", "MB", "GB", "TB", "PB"};
    if (bytes < 1024) {
        snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
        return;
    }
    int u = 0;
    uint64_t div = 1024;
    while (u < 4 && bytes / div >= 1024) {
        div *= 1024;
        u++;
    }
    if (bytes % div == 0)
        snprintf(buf, size, "%llu%s", (unsigned long long)(bytes / div), units[u]);
    else
        snprintf(buf, size, "%.1f%s", (double)bytes / (double)div, units[u]);
}

static sto_status limit_error(const eng_mem *m, uint64_t needed, uint64_t limit)
{
    char need[32], lim[32];
    eng_mem_format(needed, need, sizeof(need));
    eng_mem_format(limit, lim, sizeof(lim));
    return sto_error(STO_OUT_OF_MEMORY, "out of memory: %s needs more than %s of memory_limit %s",
                     m->name, need, lim);
}

static void note_peak(eng_mem *m, uint64_t used)
{
    uint64_t peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
    while (used > peak && !atomic_compare_exchange_weak_explicit(
                              &m->peak, &peak, used, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* Charges one tracker; on refusal nothing stays charged on it. */
static sto_status charge(eng_mem *m, uint64_t bytes)
{
    uint64_t now = atomic_fetch_add_explicit(&m->used, bytes, memory_order_relaxed) + bytes;
    uint64_t limit = atomic_load_explicit(&m->limit, memory_order_relaxed);
    if (limit && now > limit) {
        atomic_fetch_sub_explicit(&m->used, bytes, memory_order_relaxed);
        return limit_error(m, now, limit);
    }
    note_peak(m, now);
    return STO_OK;
}

sto_status eng_mem_reserve(eng_mem *m, uint64_t bytes)
{
    if (!m || bytes == 0) return STO_OK;
    for (eng_mem *t = m; t; t = t->parent) {
        sto_status st = charge(t, bytes);
        if (st) {
            for (eng_mem *u = m; u != t; u = u->parent)
                atomic_fetch_sub_explicit(&u->used, bytes, memory_order_relaxed);
            return st;
        }
    }
    return STO_OK;
}

void eng_mem_release(eng_mem *m, uint64_t bytes)
{
    if (!bytes) return;
    for (eng_mem *t = m; t; t = t->parent)
        atomic_fetch_sub_explicit(&t->used, bytes, memory_order_relaxed);
}

void eng_mem_set_limit(eng_mem *m, uint64_t limit)
{
    atomic_store(&m->limit, limit);
}

uint64_t eng_mem_limit(const eng_mem *m)
{
    return atomic_load(&((eng_mem *)m)->limit);
}

uint64_t eng_mem_used(const eng_mem *m)
{
    return atomic_load(&((eng_mem *)m)->used);
}

uint64_t eng_mem_peak(const eng_mem *m)
{
    return atomic_load(&((eng_mem *)m)->peak);
}

/* ---- per-worker caches ---------------------------------------------------- */

void eng_mem_cache_init(eng_mem_cache *c, eng_mem *m)
{
    c->mem = m;
    c->avail = 0;
}

sto_status eng_mem_cache_reserve(eng_mem_cache *c, uint64_t bytes)
{
    if (!c->mem) return STO_OK;
    if (bytes <= c->avail) {
        c->avail -= bytes;
        return STO_OK;
    }
    /* Big requests bypass the cache: batching them would only overshoot. */
    if (bytes >= ENG_MEM_CACHE_BATCH) return eng_mem_reserve(c->mem, bytes);
    uint64_t missing = bytes - c->avail;
    sto_status batch = eng_mem_reserve(c->mem, ENG_MEM_CACHE_BATCH);
    if (!batch) {
        c->avail += ENG_MEM_CACHE_BATCH - bytes;
        return STO_OK;
    }
    sto_status_free(batch);
    /* A whole batch does not fit: ask for exactly what is missing, so the
     * limit is reached precisely and the error names the real need. */
    STO_TRY(eng_mem_reserve(c->mem, missing));
    c->avail = 0;
    return STO_OK;
}

void eng_mem_cache_release(eng_mem_cache *c, uint64_t bytes)
{
    if (!c->mem) return;
    c->avail += bytes;
    if (c->avail > 2 * ENG_MEM_CACHE_BATCH) {
        eng_mem_release(c->mem, c->avail - ENG_MEM_CACHE_BATCH);
        c->avail = ENG_MEM_CACHE_BATCH;
    }
}

void eng_mem_cache_flush(eng_mem_cache *c)
{
    if (c->mem && c->avail) eng_mem_release(c->mem, c->avail);
    c->avail = 0;
}

/* ---- allocation ------------------------------------------------------------ */

/* Whether a big block is placed on a NUMA node. With one node there is
 * nowhere else to put it, so it comes from the heap like a small one: the
 * allocator hands back pages an earlier query touched, where a fresh
 * mapping faults on every 4 KiB page (about 3 us each on this VM). libnuma
 * caches both answers. */
static bool placed(size_t bytes)
{
    return bytes >= ENG_MEM_BIG_BLOCK && numa_available() >= 0 && numa_max_node() > 0;
}

static eng_mem_pool *pool_of(const eng_mem *m)
{
    while (m && m->parent)
        m = m->parent;
    return m ? m->pool : NULL;
}

/* Blocks that a pool may keep are allocated at their size class whether
 * or not one is at hand, so any tracker's pool can take them back. */
static void *raw_alloc(const eng_mem *m, size_t bytes, int node)
{
    if (placed(bytes)) return sto_numa_alloc_onnode(bytes, node);
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (bytes >= ENG_MEM_POOL_MIN) {
        eng_mem_pool *pool = pool_of(m);
        void *kept = pool ? eng_mem_pool_take(pool, bytes) : NULL;
        if (kept) return kept;
        rounded = eng_mem_pool_class(bytes);
    }
    void *p = NULL;
    if (rounded < bytes || posix_memalign(&p, 64, rounded) != 0) return NULL;
    return p;
}

uint64_t eng_mem_pooled(const eng_mem *m)
{
    eng_mem_pool *pool = pool_of(m);
    return pool ? eng_mem_pool_bytes(pool) : 0;
}

static void raw_free(const eng_mem *m, void *p, size_t bytes)
{
    if (placed(bytes)) {
        sto_numa_free(p, bytes);
        return;
    }
    eng_mem_pool *pool = bytes >= ENG_MEM_POOL_MIN ? pool_of(m) : NULL;
    if (!pool || !eng_mem_pool_give(pool, p, bytes)) free(p);
}

static sto_status alloc_failed(size_t bytes)
{
    char b[32];
    eng_mem_format(bytes, b, sizeof(b));
    return sto_error(STO_OUT_OF_MEMORY, "out of memory: failed to allocate %s", b);
}

sto_status eng_mem_alloc(eng_mem *m, size_t bytes, int node, void **out)
{
    *out = NULL;
    if (bytes == 0) return STO_OK;
    STO_TRY(eng_mem_reserve(m, bytes));
    void *p = raw_alloc(m, bytes, node);
    if (!p) {
        eng_mem_release(m, bytes);
        return alloc_failed(bytes);
    }
    *out = p;
    return STO_OK;
}

sto_status eng_mem_alloc_zero(eng_mem *m, size_t bytes, int node, void **out)
{
    STO_TRY(eng_mem_alloc(m, bytes, node, out));
    /* Placed blocks come zeroed from sto_numa_alloc_onnode. */
    if (*out && !placed(bytes)) memset(*out, 0, bytes);
    return STO_OK;
}

void eng_mem_free(eng_mem *m, void *p, size_t bytes)
{
    if (!p) return;
    raw_free(m, p, bytes);
    if (m) eng_mem_release(m, bytes);
}

sto_status eng_mem_cache_alloc(eng_mem_cache *c, size_t bytes, int node, void **out)
{
    *out = NULL;
    if (bytes == 0) return STO_OK;
    STO_TRY(eng_mem_cache_reserve(c, bytes));
    void *p = raw_alloc(c->mem, bytes, node);
    if (!p) {
        eng_mem_cache_release(c, bytes);
        return alloc_failed(bytes);
    }
    *out = p;
    return STO_OK;
}

void eng_mem_cache_free(eng_mem_cache *c, void *p, size_t bytes)
{
    if (!p) return;
    raw_free(c->mem, p, bytes);
    eng_mem_cache_release(c, bytes);
}
