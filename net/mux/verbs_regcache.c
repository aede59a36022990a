/*
 * verbs_regcache.c — the registration cache (see verbs_regcache.h).
 */
#include "net/mux/verbs_regcache.h"
#include <stdlib.h>
#include <string.h>

typedef struct region {
    uintptr_t start, end; /* [start, end) */
    uint32_t lkey;
    void *handle;
} region;

struct mux_regcache {
    mux_reg_ops ops;
    region *r; /* sorted by start, disjoint */
    size_t n, cap;
};

sto_status mux_regcache_create(const mux_reg_ops *ops, mux_regcache **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return sto_error_oom();
    (*out)->ops = *ops;
    return STO_OK;
}

void mux_regcache_destroy(mux_regcache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++)
        c->ops.dereg(c->ops.ctx, c->r[i].handle);
    free(c->r);
    free(c);
}

/* Index of the first region whose end is above addr. */
static size_t first_ending_after(const mux_regcache *c, uintptr_t addr)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->r[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool mux_regcache_lookup(const mux_regcache *c, const void *addr, size_t len, uint32_t *lkey)
{
    uintptr_t a = (uintptr_t)addr;
    size_t i = first_ending_after(c, a);
    if (i == c->n || c->r[i].start > a || a + len > c->r[i].end) return false;
    *lkey = c->r[i].lkey;
    return true;
}

sto_status mux_regcache_add(mux_regcache *c, void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr, e = a + len;
    if (len == 0 || e < a) return sto_error(STO_INVALID_PARAMETER_VALUE, "empty or wrapping range");
    size_t i = first_ending_after(c, a);
    if (i < c->n && c->r[i].start < e) {
        if (c->r[i].start <= a && e <= c->r[i].end) return STO_OK; /* already covered */
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "memory range overlaps a registered region only in part");
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        region *r = realloc(c->r, cap * sizeof *r);
        if (!r) return sto_error_oom();
        c->r = r;
        c->cap = cap;
    }
    uint32_t lkey = 0;
    void *h = c->ops.reg(c->ops.ctx, addr, len, &lkey);
    if (!h)
        return sto_error(STO_OUT_OF_MEMORY, "cannot register %zu bytes with the RDMA device", len);
    memmove(&c->r[i + 1], &c->r[i], (c->n - i) * sizeof *c->r);
    c->r[i] = (region){a, e, lkey, h};
    c->n++;
    return STO_OK;
}

size_t mux_regcache_count(const mux_regcache *c)
{
    return c->n;
}
