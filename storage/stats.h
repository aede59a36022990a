/*
 * stats.h — per-column statistics for the optimizer.
 *
 * Each chunk gathers, per column, the null count, min/max of numeric and date
 * columns, and a HyperLogLog sketch of the distinct values when it is sealed
 * (sto_chunk_seal, done by the thread that filled it). A table merges the
 * chunk statistics of all its chunks; because sketches merge by taking the
 * register-wise maximum, the table's distinct estimate after appending or
 * truncating chunks is exact with respect to the sketches that remain.
 * Min/max double as zone maps: a scan may skip a chunk whose range misses
 * its predicate.
 */
#ifndef RACKDB_STORAGE_STATS_H
#define RACKDB_STORAGE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/types.h"

/* HyperLogLog with 2^10 registers: about 3% standard error, 1 KiB. */
#define STO_HLL_BITS      10
#define STO_HLL_REGISTERS (1u << STO_HLL_BITS)

typedef struct sto_hll {
    uint8_t reg[STO_HLL_REGISTERS];
} sto_hll;

/* Min/max in the column's own domain: i for every integer-like type
 * (BOOLEAN, INTEGER, BIGINT, DECIMAL scaled, DATE), d for DOUBLE. */
typedef union sto_stat_value {
    int64_t i;
    double d;
} sto_stat_value;

typedef struct sto_column_stats {
    uint64_t rows;       /* rows covered, NULLs included */
    uint64_t null_count; /* NULL rows */
    bool has_minmax;     /* false for strings and all-NULL columns */
    sto_stat_value min, max;
    uint64_t distinct; /* estimated distinct non-NULL values */
    sto_hll hll;
} sto_column_stats;

/* Resets to "no rows". */
void sto_stats_init(sto_column_stats *s);

/* Gathers statistics of `rows` values of type `t` from a column array and
 * its validity bitmap (NULL = no NULLs). */
void sto_stats_compute(sto_column_stats *s, sto_type t, const void *values,
                       const uint64_t *validity, size_t rows);

/* Folds `src` into `dst` (same column type). */
void sto_stats_merge(sto_column_stats *dst, const sto_column_stats *src, sto_type t);

/* 64-bit hashes the sketches use; exported so the engine can share them.
 * The integer hash and sto_hll_add are inline: writers that gather
 * statistics while they fill a chunk (tpch/gen_table.c) call them per value. */
static inline uint64_t sto_hash_u64(uint64_t x)
{
    /* A multiply-xorshift finalizer: every input bit reaches every output bit. */
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    return x;
}
uint64_t sto_hash_bytes(const void *p, size_t n);

/* The hash sto_stats_compute gives a CHAR/VARCHAR value (fixed-size loads
 * only; long strings are hashed from their length and three 8-byte words). */
uint64_t sto_hash_str_sketch(const sto_str *v);

/* The low k bytes of a word set, k in 0..8 and up (8 and up: all). */
static inline uint64_t sto_low_bytes_mask(uint32_t k)
{
    return k >= 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * k)) - 1);
}

/* sto_hash_str_sketch from its parts, so that writers can hash a string
 * from bytes already in registers or in cache rather than reloading the
 * copy they just stored (a load straddling two fresh stores stalls). A
 * short string (len <= STO_STR_INLINE_MAX) contributes w0 = its first
 * min(len, 4) bytes and w1 = its bytes 4..len, both zero-padded; a long
 * one its first 8 bytes, bytes 8..16 (or the 8 before its last 8 when
 * shorter than 16) and its last 8 bytes. */
static inline uint64_t sto_hash_sketch_words(uint32_t len, uint64_t w0, uint64_t w1, uint64_t w2)
{
    uint64_t h = (w0 ^ ((uint64_t)len << 32)) * 0xc4ceb9fe1a85ec53ULL;
    h = (h ^ (h >> 29) ^ w1) * 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 31) ^ w2) * 0xd6e8feb86659fd93ULL;
    return sto_hash_u64(h);
}

/* The sketch hash of the string of `len` bytes at p: p must have 12
 * readable bytes when the string is short (len <= STO_STR_INLINE_MAX;
 * bytes past len do not count), which an sto_str's prefix and inline rest
 * have. */
static inline uint64_t sto_hash_str_bytes_sketch(const char *p, uint32_t len)
{
    uint64_t w0, w1, w2 = 0;
    if (len <= STO_STR_INLINE_MAX) {
        __builtin_memcpy(&w0, p, 8);
        __builtin_memcpy(&w1, p + 4, 8);
        w0 &= sto_low_bytes_mask(len < 4 ? len : 4);
        w1 &= sto_low_bytes_mask(len > 4 ? len - 4 : 0);
    } else {
        __builtin_memcpy(&w0, p, 8);
        __builtin_memcpy(&w1, p + (len >= 16 ? 8 : len - 8), 8);
        __builtin_memcpy(&w2, p + len - 8, 8);
    }
    return sto_hash_sketch_words(len, w0, w1, w2);
}

/* Adds a hash to a sketch; estimates its distinct count. */
static inline void sto_hll_add(sto_hll *h, uint64_t hash)
{
    uint32_t idx = (uint32_t)(hash >> (64 - STO_HLL_BITS));
    uint64_t rest = hash << STO_HLL_BITS;
    /* rest has 64 - BITS meaningful bits; an all-zero rest ranks maximal. */
    uint8_t rank = rest ? (uint8_t)(__builtin_clzll(rest) + 1) : (uint8_t)(64 - STO_HLL_BITS + 1);
    if (rank > h->reg[idx]) h->reg[idx] = rank;
}
uint64_t sto_hll_estimate(const sto_hll *h);

#endif
