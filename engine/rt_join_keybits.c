/*
 * rt_join_keybits.c — the exact key bitmap of a join (rt_join_keybits.h).
 */
#include "engine/rt_join_keybits.h"

#include <string.h>

bool eng_join_keybits_dense(int64_t lo, int64_t hi, uint64_t entries)
{
    if (hi < lo) return false;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0: the whole int64 range */
    if (span == 0 || span > ENG_JOIN_KEYBITS_MAX_SPAN) return false;
    return span <= ENG_JOIN_KEYBITS_MIN_SPAN || span / ENG_JOIN_KEYBITS_PER_ENTRY <= entries;
}

static int64_t key_at(const eng_join_keybits *kb, const uint8_t *entry)
{
    if (kb->key_bytes == 4) {
        int32_t v;
        memcpy(&v, entry + kb->key_offset, sizeof(v));
        return v;
    }
    int64_t v;
    memcpy(&v, entry + kb->key_offset, sizeof(v));
    return v;
}

bool eng_join_keybits_range(const eng_join_span *spans, unsigned n, uint32_t stride,
                            uint32_t key_offset, unsigned key_bytes, int64_t *lo, int64_t *hi)
{
    eng_join_keybits kb = {.key_offset = key_offset, .key_bytes = key_bytes};
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (unsigned s = 0; s < n; s++)
        for (uint64_t i = 0; i < spans[s].count; i++) {
            int64_t k = key_at(&kb, spans[s].base + i * stride);
            *lo = k < *lo ? k : *lo;
            *hi = k > *hi ? k : *hi;
        }
    return *lo <= *hi;
}

sto_status eng_join_keybits_build(eng_join_keybits *kb, const eng_join_span *spans, unsigned n,
                                  uint64_t count, uint32_t stride, uint32_t key_offset,
                                  unsigned key_bytes, bool hits, eng_mem *mem)
{
    memset(kb, 0, sizeof(*kb));
    kb->mem = mem;
    kb->key_offset = key_offset;
    kb->key_bytes = key_bytes;
    if (count == 0 || count > ENG_JOIN_KEYBITS_MAX_ENTRIES || (key_bytes != 4 && key_bytes != 8))
        return STO_OK;
    int64_t lo, hi;
    if (!eng_join_keybits_range(spans, n, stride, key_offset, key_bytes, &lo, &hi) ||
        !eng_join_keybits_dense(lo, hi, count))
        return STO_OK;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    size_t bytes = (size_t)((span + 63) / 64) * sizeof(uint64_t);
    STO_TRY(eng_mem_alloc_zero(mem, bytes, -1, (void **)&kb->bits));
    if (hits) {
        sto_status st = eng_mem_alloc_zero(mem, bytes, -1, (void **)&kb->hits);
        if (st) {
            eng_mem_free(mem, kb->bits, bytes);
            kb->bits = NULL;
            return st;
        }
    }
    kb->base = lo;
    kb->span = span;
    uint64_t dups = 0;
    for (unsigned s = 0; s < n; s++)
        for (uint64_t i = 0; i < spans[s].count; i++) {
            uint64_t d = (uint64_t)key_at(kb, spans[s].base + i * stride) - (uint64_t)lo;
            uint64_t bit = (uint64_t)1 << (d & 63);
            dups |= kb->bits[d >> 6] & bit;
            kb->bits[d >> 6] |= bit;
        }
    kb->unique = dups == 0;
    return STO_OK;
}

void eng_join_keybits_fold(const eng_join_keybits *kb, const eng_join_span *spans, unsigned n,
                           uint32_t stride)
{
    if (!kb->hits) return;
    for (unsigned s = 0; s < n; s++)
        for (uint64_t i = 0; i < spans[s].count; i++) {
            eng_join_entry *e = eng_join_entry_at(spans[s].base, stride, i);
            uint64_t d = (uint64_t)key_at(kb, (const uint8_t *)e) - (uint64_t)kb->base;
            if (kb->hits[d >> 6] >> (d & 63) & 1) e->matched = 1;
        }
}

void eng_join_keybits_free(eng_join_keybits *kb)
{
    size_t bytes = (size_t)((kb->span + 63) / 64) * sizeof(uint64_t);
    if (kb->bits) eng_mem_free(kb->mem, kb->bits, bytes);
    if (kb->hits) eng_mem_free(kb->mem, kb->hits, bytes);
    kb->bits = kb->hits = NULL;
    kb->span = 0;
}
