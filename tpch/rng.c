/*
 * rng.c — skip-ahead for the TPC-H random streams (see rng.h).
 */
#include "tpch/rng.h"

static const int64_t stream_seeds[TPCH_STREAM_COUNT] = {
#define TPCH_STREAM_SEED(name, seed, per_unit) seed,
    TPCH_STREAM_LIST(TPCH_STREAM_SEED)
#undef TPCH_STREAM_SEED
};

static const int64_t stream_per_unit[TPCH_STREAM_COUNT] = {
#define TPCH_STREAM_PER_UNIT(name, seed, per_unit) per_unit,
    TPCH_STREAM_LIST(TPCH_STREAM_PER_UNIT)
#undef TPCH_STREAM_PER_UNIT
};

int64_t tpch_rng_power(int64_t n)
{
    int64_t result = 1, base = TPCH_RNG_MULTIPLIER;
    while (n > 0) {
        if (n & 1) result = tpch_rng_mulmod(result, base);
        base = tpch_rng_mulmod(base, base);
        n >>= 1;
    }
    return result;
}

int64_t tpch_rng_skip(int64_t seed, int64_t n)
{
    return tpch_rng_mulmod(seed, tpch_rng_power(n));
}

int64_t tpch_stream_seed(tpch_stream_id id)
{
    return stream_seeds[id];
}

int64_t tpch_stream_per_unit(tpch_stream_id id)
{
    return stream_per_unit[id];
}

void tpch_stream_init(tpch_stream *s, tpch_stream_id id, int64_t unit)
{
    s->unit_step = tpch_rng_power(stream_per_unit[id]);
    s->unit_seed = tpch_rng_skip(stream_seeds[id], unit * stream_per_unit[id]);
    s->seed = s->unit_seed;
}
