/*
 * rt_hashtable.c — the shared join hash table (rt_hashtable.h).
 */
#include "engine/rt_hashtable.h"

#include <stdlib.h>
#include <string.h>

eng_join_entry *eng_rt_join_ht_lookup(const void *ht, uint64_t hash)
{
    return eng_join_ht_lookup(ht, hash);
}

sto_status eng_join_ht_init(eng_join_ht *ht, uint64_t count, eng_mem *mem, int node)
{
    memset(ht, 0, sizeof(*ht));
    uint64_t slots = 1;
    while (slots < count)
        slots <<= 1;
    ht->mem = mem;
    ht->count = count;
    ht->mask = slots - 1;
    return eng_mem_alloc_zero(mem, slots * sizeof(uint64_t), node, (void **)&ht->dir);
}

sto_status eng_join_ht_prepare(eng_join_ht *ht, eng_join_mat *const *mats, unsigned n, eng_mem *mem)
{
    uint64_t count = 0;
    for (unsigned i = 0; i < n; i++)
        count += mats[i]->count;
    STO_TRY(eng_join_ht_init(ht, count, mem, -1));
    ht->stride = n ? mats[0]->stride : 0;
    sto_status st = eng_join_mat_spans(mats, n, false, &ht->spans, &ht->n_spans);
    if (st) eng_join_ht_free(ht);
    return st;
}

void eng_join_ht_insert(eng_join_ht *ht, eng_join_entry *e)
{
    uint64_t *slot = &ht->dir[e->hash & ht->mask];
    uint64_t tag = eng_join_ht_tag(e->hash);
    uint64_t old = __atomic_load_n(slot, __ATOMIC_RELAXED);
    uint64_t neu;
    do {
        e->next = (eng_join_entry *)(uintptr_t)(old & ENG_JOIN_HT_PTR_MASK);
        neu = (uint64_t)(uintptr_t)e | (old & ~ENG_JOIN_HT_PTR_MASK) | tag;
        /* Release: a prober that sees the new head sees e->next too. */
    } while (
        !__atomic_compare_exchange_n(slot, &old, neu, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void eng_join_ht_insert_local(eng_join_ht *ht, uint8_t *base, uint32_t stride, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        eng_join_entry *e = eng_join_entry_at(base, stride, i);
        uint64_t *slot = &ht->dir[e->hash & ht->mask];
        e->next = (eng_join_entry *)(uintptr_t)(*slot & ENG_JOIN_HT_PTR_MASK);
        *slot = (uint64_t)(uintptr_t)e | (*slot & ~ENG_JOIN_HT_PTR_MASK) | eng_join_ht_tag(e->hash);
    }
}

static void insert_visit(void *arg, uint8_t *base, uint64_t lo, uint64_t hi)
{
    eng_join_ht *ht = arg;
    for (uint64_t i = lo; i < hi; i++)
        eng_join_ht_insert(ht, eng_join_entry_at(base, ht->stride, i));
}

void eng_join_ht_insert_slice(eng_join_ht *ht, uint64_t s, uint64_t n_slices)
{
    uint64_t begin, end;
    eng_join_slice(ht->count, s, n_slices, &begin, &end);
    eng_join_spans_visit(ht->spans, ht->n_spans, begin, end, insert_visit, ht);
}

typedef struct unmatched_arg {
    cg_error *err;
    const eng_join_spec *spec;
    uint32_t stride;
    int32_t rc;
} unmatched_arg;

static void unmatched_visit(void *arg, uint8_t *base, uint64_t lo, uint64_t hi)
{
    unmatched_arg *a = arg;
    if (a->rc) return;
    a->rc = eng_join_emit_unmatched(a->err, a->spec, base + lo * a->stride, a->stride, hi - lo);
}

int32_t eng_join_ht_unmatched_slice(cg_error *err, const eng_join_ht *ht, const eng_join_spec *spec,
                                    uint64_t s, uint64_t n_slices)
{
    uint64_t begin, end;
    eng_join_slice(ht->count, s, n_slices, &begin, &end);
    unmatched_arg a = {err, spec, ht->stride, 0};
    eng_join_spans_visit(ht->spans, ht->n_spans, begin, end, unmatched_visit, &a);
    return a.rc;
}

void eng_join_ht_free(eng_join_ht *ht)
{
    if (ht->dir) eng_mem_free(ht->mem, ht->dir, (ht->mask + 1) * sizeof(uint64_t));
    free(ht->spans);
    memset(ht, 0, sizeof(*ht));
}
