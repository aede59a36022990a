/*
 * stats.c — column statistics and the HyperLogLog sketch (see stats.h).
 *
 * HyperLogLog: a value's 64-bit hash picks a register with its top
 * STO_HLL_BITS bits; the register keeps the largest "position of the first
 * 1 bit" seen among the remaining bits. Many distinct values make long runs
 * of zeros likely, and the harmonic mean of 2^-register over all registers
 * estimates the count. Small counts, where many registers are still 0, use
 * linear counting instead (the standard correction).
 */
#include "storage/stats.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

void sto_stats_init(sto_column_stats *s)
{
    memset(s, 0, sizeof(*s));
}

uint64_t sto_hash_bytes(const void *p, size_t n)
{
    /* One multiply per 8-byte word; the finalizer spreads the result. */
    const unsigned char *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 29;
        b += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, b, n);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    }
    return sto_hash_u64(h);
}

uint64_t sto_hll_estimate(const sto_hll *h)
{
    const double m = STO_HLL_REGISTERS;
    double sum = 0;
    unsigned zeros = 0;
    for (unsigned i = 0; i < STO_HLL_REGISTERS; i++) {
        uint64_t bits = (uint64_t)(1023 - h->reg[i]) << 52; /* 2^-reg as a double */
        double inv;
        memcpy(&inv, &bits, 8);
        sum += inv;
        zeros += h->reg[i] == 0;
    }
    double alpha = 0.7213 / (1.0 + 1.079 / m);
    double e = alpha * m * m / sum;
    if (e <= 2.5 * m && zeros) e = m * log(m / zeros);
    return (uint64_t)(e + 0.5);
}

/* Walks the non-NULL rows of a column, calling BODY with `v` bound to each
 * value; shared by every fixed-width type so they all count the same way. */
#define FOR_EACH_VALID(ctype, values, validity, rows, BODY)                                        \
    do {                                                                                           \
        const ctype *vals_ = (const ctype *)(values);                                              \
        for (size_t r_ = 0; r_ < (rows); r_++) {                                                   \
            if ((validity) && !((validity)[r_ >> 6] >> (r_ & 63) & 1)) continue;                   \
            ctype v = vals_[r_];                                                                   \
            BODY;                                                                                  \
        }                                                                                          \
    } while (0)

/* The sketch's hash of a string, with fixed-size loads only: an inline
 * string is hashed from its 16-byte reference with the bytes past its
 * length masked off; a longer one from its length and three 8-byte words:
 * the first, the second (or the one before the last) and the last. That
 * covers every byte of strings up to 24 bytes; longer strings that agree on
 * their first 16 and last 8 bytes count once, which is fine for an estimate
 * and keeps sealing a chunk of long comments cheap. */
uint64_t sto_hash_str_sketch(const sto_str *v)
{
    if (v->len > STO_STR_INLINE_MAX) return sto_hash_str_bytes_sketch(v->u.ptr, v->len);
    /* a short string's bytes: the prefix, then the inline rest (12 bytes) */
    return sto_hash_str_bytes_sketch((const char *)v + offsetof(sto_str, prefix), v->len);
}

static void track_int(sto_column_stats *s, int64_t v)
{
    if (!s->has_minmax) {
        s->has_minmax = true;
        s->min.i = s->max.i = v;
    } else {
        if (v < s->min.i) s->min.i = v;
        if (v > s->max.i) s->max.i = v;
    }
}

void sto_stats_compute(sto_column_stats *s, sto_type t, const void *values,
                       const uint64_t *validity, size_t rows)
{
    sto_stats_init(s);
    s->rows = rows;
    size_t valid = 0;
    switch ((sto_type_id)t.id) {
    case STO_TYPE_BOOLEAN:
        FOR_EACH_VALID(uint8_t, values, validity, rows, {
            valid++;
            track_int(s, v);
            sto_hll_add(&s->hll, sto_hash_u64(v));
        });
        break;
    case STO_TYPE_INTEGER:
    case STO_TYPE_DATE:
        FOR_EACH_VALID(int32_t, values, validity, rows, {
            valid++;
            track_int(s, v);
            sto_hll_add(&s->hll, sto_hash_u64((uint64_t)(int64_t)v));
        });
        break;
    case STO_TYPE_BIGINT:
    case STO_TYPE_DECIMAL:
        FOR_EACH_VALID(int64_t, values, validity, rows, {
            valid++;
            track_int(s, v);
            sto_hll_add(&s->hll, sto_hash_u64((uint64_t)v));
        });
        break;
    case STO_TYPE_DOUBLE:
        FOR_EACH_VALID(double, values, validity, rows, {
            valid++;
            if (!s->has_minmax) {
                s->has_minmax = true;
                s->min.d = s->max.d = v;
            } else {
                if (v < s->min.d) s->min.d = v;
                if (v > s->max.d) s->max.d = v;
            }
            double z = v == 0 ? 0.0 : v; /* -0.0 and 0.0 are one value */
            uint64_t bits;
            memcpy(&bits, &z, 8);
            sto_hll_add(&s->hll, sto_hash_u64(bits));
        });
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        FOR_EACH_VALID(sto_str, values, validity, rows, {
            valid++;
            sto_hll_add(&s->hll, sto_hash_str_sketch(&v));
        });
        break;
    default:
        break;
    }
    s->null_count = rows - valid;
    s->distinct = sto_hll_estimate(&s->hll);
    if (s->distinct > valid) s->distinct = valid;
}

void sto_stats_merge(sto_column_stats *dst, const sto_column_stats *src, sto_type t)
{
    uint64_t valid = dst->rows - dst->null_count + src->rows - src->null_count;
    dst->rows += src->rows;
    dst->null_count += src->null_count;
    if (src->has_minmax) {
        if (!dst->has_minmax) {
            dst->has_minmax = true;
            dst->min = src->min;
            dst->max = src->max;
        } else if (t.id == STO_TYPE_DOUBLE) {
            if (src->min.d < dst->min.d) dst->min.d = src->min.d;
            if (src->max.d > dst->max.d) dst->max.d = src->max.d;
        } else {
            if (src->min.i < dst->min.i) dst->min.i = src->min.i;
            if (src->max.i > dst->max.i) dst->max.i = src->max.i;
        }
    }
    for (unsigned i = 0; i < STO_HLL_REGISTERS; i++)
        if (src->hll.reg[i] > dst->hll.reg[i]) dst->hll.reg[i] = src->hll.reg[i];
    dst->distinct = sto_hll_estimate(&dst->hll);
    if (dst->distinct > valid) dst->distinct = valid;
}
