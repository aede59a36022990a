/*
 * rng.h — TPC-H's random number streams (clause 4.2.2 / dbgen's RNG).
 *
 * Every generated column draws from its own stream of the Park–Miller
 * "minimum standard" generator, x' = 16807 x mod (2^31 - 1), started from a
 * fixed seed. A stream is charged a fixed number of draws per generated unit
 * (one part, supplier, customer or order; a part's four partsupp rows and an
 * order's up to seven lineitems belong to that unit) whether or not the unit
 * used them all. So the state of any stream at the start of unit u is
 * seed * 16807^(u * draws_per_unit) mod (2^31 - 1), computed by fast
 * exponentiation: any thread can start generating at any row.
 *
 * A uniform integer in [lo, hi] is lo + floor(x / (2^31 - 1) * (hi - lo + 1))
 * in double arithmetic, exactly as dbgen computes it, so values match bit
 * for bit.
 */
#ifndef RACKDB_TPCH_RNG_H
#define RACKDB_TPCH_RNG_H

#include <stdint.h>

#define TPCH_RNG_MODULUS    2147483647
#define TPCH_RNG_MULTIPLIER 16807

/* The streams: name, starting seed, draws charged per unit. Order follows
 * dbgen's stream numbers so a stream can be named by its position too. */
#define TPCH_STREAM_LIST(X)                                                                        \
    X(P_MFG, 1, 1)                                                                                 \
    X(P_BRND, 46831694, 1)                                                                         \
    X(P_TYPE, 1841581359, 1)                                                                       \
    X(P_SIZE, 1193163244, 1)                                                                       \
    X(P_CNTR, 727633698, 1)                                                                        \
    X(TEXT_POOL, 933588178, 1)                                                                     \
    X(P_CMNT, 804159733, 2)                                                                        \
    X(PS_QTY, 1671059989, 4)                                                                       \
    X(PS_SCST, 1051288424, 4)                                                                      \
    X(PS_CMNT, 1961692154, 8)                                                                      \
    X(O_SUPP, 1227283347, 1)                                                                       \
    X(O_CLRK, 1171034773, 1)                                                                       \
    X(O_CMNT, 276090261, 2)                                                                        \
    X(O_ODATE, 1066728069, 1)                                                                      \
    X(L_QTY, 209208115, 7)                                                                         \
    X(L_DCNT, 554590007, 7)                                                                        \
    X(L_TAX, 721958466, 7)                                                                         \
    X(L_SHIP, 1371272478, 7)                                                                       \
    X(L_SMODE, 675466456, 7)                                                                       \
    X(L_PKEY, 1808217256, 7)                                                                       \
    X(L_SKEY, 2095021727, 7)                                                                       \
    X(L_SDTE, 1769349045, 7)                                                                       \
    X(L_CDTE, 904914315, 7)                                                                        \
    X(L_RDTE, 373135028, 7)                                                                        \
    X(L_RFLG, 717419739, 7)                                                                        \
    X(L_CMNT, 1095462486, 14)                                                                      \
    X(C_ADDR, 881155353, 9)                                                                        \
    X(C_NTRG, 1489529863, 1)                                                                       \
    X(C_PHNE, 1521138112, 3)                                                                       \
    X(C_ABAL, 298370230, 1)                                                                        \
    X(C_MSEG, 1140279430, 1)                                                                       \
    X(C_CMNT, 1335826707, 2)                                                                       \
    X(S_ADDR, 706178559, 9)                                                                        \
    X(S_NTRG, 110356601, 1)                                                                        \
    X(S_PHNE, 884434366, 3)                                                                        \
    X(S_ABAL, 962338209, 1)                                                                        \
    X(S_CMNT, 1341315363, 2)                                                                       \
    X(P_NAME, 709314158, 92)                                                                       \
    X(O_PRIO, 591449447, 1)                                                                        \
    X(HVAR, 431918286, 1)                                                                          \
    X(O_CKEY, 851767375, 1)                                                                        \
    X(N_CMNT, 606179079, 2)                                                                        \
    X(R_CMNT, 1500869201, 2)                                                                       \
    X(O_LCNT, 1434868289, 1)                                                                       \
    X(BBB_JUNK, 263032577, 1)                                                                      \
    X(BBB_TYPE, 753643799, 1)                                                                      \
    X(BBB_CMNT, 202794285, 1)                                                                      \
    X(BBB_OFFSET, 715851524, 1)

typedef enum tpch_stream_id {
#define TPCH_STREAM_ENUM(name, seed, per_unit) TPCH_STREAM_##name,
    TPCH_STREAM_LIST(TPCH_STREAM_ENUM)
#undef TPCH_STREAM_ENUM
        TPCH_STREAM_COUNT
} tpch_stream_id;

/* One stream positioned inside a unit: `seed` moves with every draw,
 * `unit_seed` is where the current unit started, `unit_step` is the
 * multiplier that jumps from one unit's start to the next. */
typedef struct tpch_stream {
    int64_t seed;
    int64_t unit_seed;
    int64_t unit_step;
} tpch_stream;

/* 16807^n mod (2^31 - 1). */
int64_t tpch_rng_power(int64_t n);

/* The seed after n more draws. */
int64_t tpch_rng_skip(int64_t seed, int64_t n);

/* Positions stream `id` at the start of unit `unit` (0-based). */
void tpch_stream_init(tpch_stream *s, tpch_stream_id id, int64_t unit);

/* Starting seed and draws per unit of a stream. */
int64_t tpch_stream_seed(tpch_stream_id id);
int64_t tpch_stream_per_unit(tpch_stream_id id);

/* a * b mod (2^31 - 1) for a, b < 2^31, folding instead of dividing: a
 * 64-bit division costs more than the rest of a unit's stream step. */
static inline int64_t tpch_rng_mulmod(int64_t a, int64_t b)
{
    uint64_t x = (uint64_t)a * (uint64_t)b; /* < 2^62 */
    x = (x & TPCH_RNG_MODULUS) + (x >> 31); /* < 2^32 */
    x = (x & TPCH_RNG_MODULUS) + (x >> 31); /* <= 2^31 */
    if (x >= TPCH_RNG_MODULUS) x -= TPCH_RNG_MODULUS;
    return (int64_t)x;
}

static inline int64_t tpch_rng_next(int64_t seed)
{
    /* 2^31 - 1 is a Mersenne prime: fold the high bits instead of dividing. */
    uint64_t x = (uint64_t)seed * TPCH_RNG_MULTIPLIER;
    x = (x & TPCH_RNG_MODULUS) + (x >> 31);
    if (x >= TPCH_RNG_MODULUS) x -= TPCH_RNG_MODULUS;
    return (int64_t)x;
}

/* dbgen's uniform integer in [lo, hi] for a seed: lo + floor(seed / M *
 * (hi - lo + 1)), evaluated in doubles. The exact integer quotient is the
 * same number unless seed * range / M lies within the doubles' rounding
 * error (< 2^-20 for ranges up to 2^32, i.e. a remainder within 2^11 of 0
 * or M) of an integer; only then is the double expression evaluated. This
 * spares a floating-point division on almost every draw. */
static inline int64_t tpch_uniform(int64_t seed, int64_t lo, int64_t hi)
{
    uint64_t range = (uint64_t)(hi - lo + 1);
    uint64_t x = (uint64_t)seed * range, q;
    if (range < ((uint64_t)1 << 31)) {
        /* x = q (2^31 - 1) + r < 2^31 (2^31 - 1) is q 2^31 + (r - q), so
         * adding x >> 31 (q or q - 1) and 1 before shifting gives q: the
         * division by a constant (a multiply-high and its fix-ups) was
         * 18% of the instructions of generating orders and lines */
        q = (x + (x >> 31) + 1) >> 31;
    } else if (range <= ((uint64_t)1 << 32)) {
        q = x / TPCH_RNG_MODULUS;
    } else {
        q = 0, x = 0; /* the double expression below */
    }
    uint64_t r = x - q * TPCH_RNG_MODULUS;
    if (r - 4096 <= TPCH_RNG_MODULUS - 8192) return lo + (int64_t)q;
    return lo + (int64_t)(((double)seed / (double)TPCH_RNG_MODULUS) * (double)(hi - lo + 1));
}

/* The same in plain doubles, as dbgen writes it (for tests). */
static inline int64_t tpch_uniform_double(int64_t seed, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(((double)seed / (double)TPCH_RNG_MODULUS) * (double)(hi - lo + 1));
}

/* A uniform integer in [lo, hi] from stream s. */
static inline int64_t tpch_draw(tpch_stream *s, int64_t lo, int64_t hi)
{
    s->seed = tpch_rng_next(s->seed);
    return tpch_uniform(s->seed, lo, hi);
}

/* Moves the stream to the start of the next unit, however many draws the
 * current one used. */
static inline void tpch_stream_next_unit(tpch_stream *s)
{
    s->unit_seed = tpch_rng_mulmod(s->unit_seed, s->unit_step);
    s->seed = s->unit_seed;
}

#endif
