/*
 * gen.c — per-table row generation (TPC-H clause 4.2.3, as dbgen 2.14.0 does
 * it). Each generator positions the streams of its columns at the first
 * unit, and after each unit moves every stream to the next unit's start, so
 * a unit always costs its streams the same draws (see rng.h).
 *
 * Row shapes worth knowing (all from the specification / dbgen):
 *   - part names are five distinct colors: dbgen shuffles the 92 colors
 *     with 92 draws and takes the first five, which only the first five
 *     draws decide;
 *   - p_retailprice = 90000 + (key/10 mod 20001) + 100 * (key mod 1000)
 *     hundredths;
 *   - ps_suppkey / l_suppkey = (p + i * (S/4 + (p-1)/S)) mod S + 1 for the
 *     part p's supplier i of S;
 *   - addresses are 10..40 characters from a 64-character alphabet, five
 *     characters per draw (6 bits each);
 *   - phones are "CC-AAA-EEE-NNNN" with CC = 10 + nation key;
 *   - order keys are sparse: 8 keys used out of every 32;
 *   - customers with key mod 3 == 0 place no orders;
 *   - ten suppliers per SF get "Customer ...Complaints/Recommends" in their
 *     comment.
 */
#include "tpch/gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tpch/digits.h"
#include "tpch/dists.h"
#include "tpch/rng.h"
#include "tpch/schema.h"
#include "tpch/text.h"

/* --- schema ---------------------------------------------------------------- */

/* Column kinds of schema.h as SQL types and .tbl spellings. */
#define KIND_INT(len)     {STO_TYPE_INTEGER, 0, 0, 0}, TPCH_TBL_INT
#define KIND_MONEY(len)   {STO_TYPE_DECIMAL, 15, 2, 0}, TPCH_TBL_MONEY
#define KIND_WHOLE(len)   {STO_TYPE_DECIMAL, 15, 2, 0}, TPCH_TBL_WHOLE
#define KIND_DATE(len)    {STO_TYPE_DATE, 0, 0, 0}, TPCH_TBL_DATE
#define KIND_CHAR(len)    {STO_TYPE_CHAR, 0, 0, len}, TPCH_TBL_STRING
#define KIND_VARCHAR(len) {STO_TYPE_VARCHAR, 0, 0, len}, TPCH_TBL_STRING

#define COLUMN_INFO(name, kind, len) {#name, KIND_##kind(len)},
#define TABLE_COLUMNS(id, list)      static const tpch_column id##_columns[] = {list(COLUMN_INFO)};
TPCH_TABLE_COLUMNS(TABLE_COLUMNS)
#undef TABLE_COLUMNS

#define COLS(a) (int)(sizeof(a) / sizeof((a)[0])), a
static const tpch_table_info table_infos[TPCH_TABLE_COUNT] = {
    [TPCH_PART] = {"part", COLS(PART_columns), TPCH_PART},
    [TPCH_PARTSUPP] = {"partsupp", COLS(PARTSUPP_columns), TPCH_PART},
    [TPCH_SUPPLIER] = {"supplier", COLS(SUPPLIER_columns), TPCH_SUPPLIER},
    [TPCH_CUSTOMER] = {"customer", COLS(CUSTOMER_columns), TPCH_CUSTOMER},
    [TPCH_ORDERS] = {"orders", COLS(ORDERS_columns), TPCH_ORDERS},
    [TPCH_LINEITEM] = {"lineitem", COLS(LINEITEM_columns), TPCH_ORDERS},
    [TPCH_NATION] = {"nation", COLS(NATION_columns), TPCH_NATION},
    [TPCH_REGION] = {"region", COLS(REGION_columns), TPCH_REGION},
};

const tpch_table_info *tpch_table_info_get(tpch_table_id t)
{
    return &table_infos[t];
}

bool tpch_table_by_name(const char *name, tpch_table_id *out)
{
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        if (strcasecmp(name, table_infos[t].name) == 0) {
            *out = (tpch_table_id)t;
            return true;
        }
    }
    return false;
}

/* dbgen's date range: 1992-01-01 plus 0..2556 days; 1995-06-17 is "today". */
#define START_DAYS      8035              /* 1992-01-01 */
#define CURRENT_DAYS    9298              /* 1995-06-17 */
#define ORDER_DATE_SPAN (2557 - 121 - 30) /* order dates leave room to ship and return */

/* Columns with small fixed ranges (tpch_column_range), by name. */
static const struct {
    tpch_table_id table;
    const char *column;
    int64_t lo, hi;
} column_ranges[] = {
    {TPCH_PART, "p_size", 1, 50},
    {TPCH_PARTSUPP, "ps_availqty", 1, 9999},
    {TPCH_SUPPLIER, "s_nationkey", 0, 24},
    {TPCH_CUSTOMER, "c_nationkey", 0, 24},
    {TPCH_ORDERS, "o_orderdate", START_DAYS, START_DAYS + ORDER_DATE_SPAN - 1},
    {TPCH_ORDERS, "o_shippriority", 0, 0},
    {TPCH_LINEITEM, "l_linenumber", 1, 7},
    {TPCH_LINEITEM, "l_quantity", 100, 5000},
    {TPCH_LINEITEM, "l_discount", 0, 10},
    {TPCH_LINEITEM, "l_tax", 0, 8},
    {TPCH_LINEITEM, "l_shipdate", START_DAYS, START_DAYS + 2556},
    {TPCH_LINEITEM, "l_commitdate", START_DAYS, START_DAYS + 2556},
    {TPCH_LINEITEM, "l_receiptdate", START_DAYS, START_DAYS + 2556},
    {TPCH_NATION, "n_regionkey", 0, 4},
};

bool tpch_column_range(tpch_table_id t, int column, int64_t *lo, int64_t *hi)
{
    if (column < 0 || column >= table_infos[t].column_count) return false;
    const char *name = table_infos[t].columns[column].name;
    for (size_t i = 0; i < sizeof(column_ranges) / sizeof(column_ranges[0]); i++) {
        if (column_ranges[i].table == t && strcmp(column_ranges[i].column, name) == 0) {
            *lo = column_ranges[i].lo;
            *hi = column_ranges[i].hi;
            return true;
        }
    }
    return false;
}

/* --- the generator ------------------------------------------------------- */

#define SUPP_PER_PART 4
#define MAX_LINES     7
#define COLOR_COUNT   92
#define NAME_COLORS   5 /* a part's name has five of them */

struct tpch_gen {
    int64_t scale; /* dbgen's integer scale (1 below SF 1) */
    int64_t units[TPCH_TABLE_COUNT];
    tpch_text_pool *pool;
    tpch_picker types, containers, segments, priorities, instructions, modes, rflags;
    tpch_picker nations, regions; /* for their padded names */
    int32_t region_of_nation[32];
    uint64_t supplier_inverse; /* floor((2^64 - 1) / suppliers), see divide() */
};

sto_status tpch_scale_check(double sf)
{
    if (!(sf > 0) || !isfinite(sf))
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "scale factor must be a finite number greater than 0");
    if (sf >= 30000)
        return sto_error(STO_FEATURE_NOT_SUPPORTED,
                         "scale factor %g is not supported (the limit is below 30000)", sf);
    return NULL;
}

sto_status tpch_gen_create(double sf, int threads, tpch_gen **out)
{
    *out = NULL;
    STO_TRY(tpch_scale_check(sf));
    tpch_gen *g = calloc(1, sizeof(*g));
    if (!g) return sto_error(STO_OUT_OF_MEMORY, "out of memory");

    static const int64_t base[TPCH_TABLE_COUNT] = {
        [TPCH_PART] = 200000,     [TPCH_PARTSUPP] = 200000, [TPCH_SUPPLIER] = 10000,
        [TPCH_CUSTOMER] = 150000, [TPCH_ORDERS] = 1500000,  [TPCH_LINEITEM] = 1500000,
    };
    if (sf < 1) {
        /* dbgen: scale stays 1 and base counts shrink by thousandths */
        g->scale = 1;
        int thousandths = (int)(1000 * sf);
        for (int t = 0; t < TPCH_NATION; t++) {
            g->units[t] = thousandths * base[t] / 1000;
            if (g->units[t] < 1) g->units[t] = 1;
        }
    } else {
        g->scale = (int64_t)sf;
        for (int t = 0; t < TPCH_NATION; t++)
            g->units[t] = base[t] * g->scale;
    }
    g->supplier_inverse = UINT64_MAX / (uint64_t)g->units[TPCH_SUPPLIER];
    g->units[TPCH_NATION] = tpch_dists[TPCH_DIST_NATIONS].count;
    g->units[TPCH_REGION] = tpch_dists[TPCH_DIST_REGIONS].count;

    tpch_picker_init(&g->types, TPCH_DIST_P_TYPES);
    tpch_picker_init(&g->containers, TPCH_DIST_P_CNTR);
    tpch_picker_init(&g->segments, TPCH_DIST_MSEGMNT);
    tpch_picker_init(&g->priorities, TPCH_DIST_O_OPRIO);
    tpch_picker_init(&g->instructions, TPCH_DIST_INSTRUCT);
    tpch_picker_init(&g->modes, TPCH_DIST_SMODE);
    tpch_picker_init(&g->rflags, TPCH_DIST_RFLAG);
    tpch_picker_init(&g->nations, TPCH_DIST_NATIONS);
    tpch_picker_init(&g->regions, TPCH_DIST_REGIONS);
    /* the nations list's weights add up to each nation's region key */
    int32_t sum = 0;
    for (int i = 0; i < tpch_dists[TPCH_DIST_NATIONS].count; i++) {
        sum += tpch_dists[TPCH_DIST_NATIONS].items[i].weight;
        g->region_of_nation[i] = sum;
    }

    sto_status st = tpch_text_pool_build(threads, &g->pool);
    if (st) {
        free(g);
        return st;
    }
    *out = g;
    return NULL;
}

void tpch_gen_free(tpch_gen *g)
{
    if (!g) return;
    tpch_text_pool_free(g->pool);
    free(g);
}

void *tpch_gen_text_retain(const tpch_gen *g)
{
    tpch_text_pool_retain(g->pool);
    return g->pool;
}

void tpch_gen_text_release(void *text)
{
    tpch_text_pool_free(text);
}

/* Average comment length of each table (dbgen draws 0.4 to 1.6 times it). */
#define PART_TEXT     14
#define PARTSUPP_TEXT 124
#define SUPPLIER_TEXT 63
#define CUSTOMER_TEXT 73
#define ORDERS_TEXT   49
#define LINEITEM_TEXT 27
#define CODE_TEXT     72

int64_t tpch_gen_units(const tpch_gen *g, tpch_table_id t)
{
    return g->units[t];
}

int64_t tpch_gen_rows_exact(const tpch_gen *g, tpch_table_id t)
{
    if (t == TPCH_LINEITEM) return -1;
    if (t == TPCH_PARTSUPP) return g->units[t] * SUPP_PER_PART;
    return g->units[t];
}

void tpch_split_units(int64_t units, int parts, int part, int64_t *first, int64_t *last)
{
    int64_t per = units / parts;
    *first = per * (part - 1);
    *last = part == parts ? units : *first + per;
}

/* --- helpers shared by the tables ------------------------------------------ */

/* Streams of one table family, positioned at a unit. Draws move s[id].seed;
 * the units' starts are kept apart, one after another, so moving all of
 * them to the next unit is a loop over vectors of four (an order moves 18
 * streams). */
typedef struct streams {
    tpch_stream s[TPCH_STREAM_COUNT];
    uint64_t unit_seed[TPCH_STREAM_COUNT + 3], unit_step[TPCH_STREAM_COUNT + 3];
    tpch_stream_id ids[TPCH_STREAM_COUNT];
    int count;
} streams;

static void streams_init(streams *st, const tpch_stream_id *ids, int count, int64_t unit)
{
    st->count = count;
    memset(st->unit_seed, 0, sizeof(st->unit_seed));
    memset(st->unit_step, 0, sizeof(st->unit_step));
    for (int i = 0; i < count; i++) {
        st->ids[i] = ids[i];
        tpch_stream_init(&st->s[ids[i]], ids[i], unit);
        st->unit_seed[i] = (uint64_t)st->s[ids[i]].unit_seed;
        st->unit_step[i] = (uint64_t)st->s[ids[i]].unit_step;
    }
}

/* tpch_stream_next_unit for every stream, four at a time: both factors
 * are below 2^31, so a 32 x 32 -> 64-bit multiply (vpmuludq) takes the
 * product. The arrays are padded to whole vectors with zeros. */
typedef uint64_t u64x4 __attribute__((vector_size(32)));

static inline void streams_next_unit(streams *st)
{
    const u64x4 low = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
    const u64x4 m = {TPCH_RNG_MODULUS, TPCH_RNG_MODULUS, TPCH_RNG_MODULUS, TPCH_RNG_MODULUS};
    for (int i = 0; i < st->count; i += 4) {
        u64x4 a, b;
        memcpy(&a, &st->unit_seed[i], sizeof(a));
        memcpy(&b, &st->unit_step[i], sizeof(b));
        u64x4 x = (a & low) * (b & low);
        x = (x & m) + (x >> 31);
        x = (x & m) + (x >> 31);
        x -= m & (u64x4)(x >= m);
        memcpy(&st->unit_seed[i], &x, sizeof(x));
    }
    for (int i = 0; i < st->count; i++)
        st->s[st->ids[i]].seed = (int64_t)st->unit_seed[i];
}

static inline tpch_value int_value(int64_t i)
{
    tpch_value v = {i, NULL, 0, 0, 0};
    return v;
}

static inline tpch_value str_value(const char *s, uint32_t len)
{
    tpch_value v = {0, s, len, 0, 0};
    return v;
}

/* An entry of a fixed list (see tpch_value.listed). */
static inline tpch_value list_value(const char *s, uint32_t len)
{
    tpch_value v = {0, s, len, 1, 0};
    return v;
}

static inline tpch_value pick_value(const tpch_picker *p, tpch_stream *s)
{
    int i = p->entry[tpch_draw(s, 1, p->total)];
    return list_value(p->pad[i], p->len[i]);
}

/* One-letter flags, padded so sinks may copy TPCH_STR_SLACK bytes. */
static const char letters[][TPCH_STR_SLACK] = {"N", "F", "O", "P"};
enum { LETTER_N, LETTER_F, LETTER_O, LETTER_P };

/* p_mfgr is "Manufacturer#m" and p_brand "Brand#mb" for m, b in 1..5:
 * few enough to spell out once (indexed by m and by 10 m + b). */
#define MFGR_LEN  14
#define BRAND_LEN 8
static const char mfgr_text[6][TPCH_STR_SLACK] = {
    "", "Manufacturer#1", "Manufacturer#2", "Manufacturer#3", "Manufacturer#4", "Manufacturer#5",
};
#define BRAND_ROW(m)                                                                               \
    "Brand#" #m "0", "Brand#" #m "1", "Brand#" #m "2", "Brand#" #m "3", "Brand#" #m "4",           \
        "Brand#" #m "5", "Brand#" #m "6", "Brand#" #m "7", "Brand#" #m "8", "Brand#" #m "9"
static const char brand_text[60][TPCH_STR_SLACK] = {
    BRAND_ROW(0), BRAND_ROW(1), BRAND_ROW(2), BRAND_ROW(3), BRAND_ROW(4), BRAND_ROW(5),
};
#undef BRAND_ROW

/* Comment bounds: dbgen draws lengths in [0.4 avg, 1.6 avg]. */
static inline tpch_value text_value(const tpch_gen *g, tpch_stream *s, int avg)
{
    uint32_t len;
    const char *p = tpch_text(g->pool, s, (int)(avg * 0.4), (int)(avg * 1.6), &len);
    tpch_value v = {0, p, len, 0, 1};
    return v;
}

/* A copy of a comment stream running LOOKAHEAD_UNITS units in front of
 * the generator, prefetching the comments it will take: each is a cache
 * miss somewhere in the 300 MiB pool, which the sink then reads (fetching
 * a partsupp comment costs more than generating the rest of the row). */
typedef struct text_lookahead {
    tpch_stream s;
    int per_unit; /* comments per unit */
    int min, max; /* their length bounds, as text_value draws them */
} text_lookahead;

static void lookahead_init(text_lookahead *la, tpch_stream_id id, int avg, int per_unit,
                           int64_t unit)
{
    tpch_stream_init(&la->s, id, unit);
    la->per_unit = per_unit;
    la->min = (int)(avg * 0.4);
    la->max = (int)(avg * 1.6);
}

/* Prefetches the comments of the unit the copy stands at and moves on. */
static inline void lookahead_unit(const tpch_gen *g, text_lookahead *la)
{
    for (int i = 0; i < la->per_unit; i++) {
        uint32_t len;
        const char *p = tpch_text(g->pool, &la->s, la->min, la->max, &len);
        __builtin_prefetch(p);
        __builtin_prefetch(p + len - 1);
    }
    tpch_stream_next_unit(&la->s);
}

/* Units a lookahead runs in front: enough prefetches in flight to cover
 * the miss latency, few enough that the lines stay in cache. */
#define LOOKAHEAD_UNITS 8

/* Writes n as exactly `width` digits (zero-padded) at out; stores up to
 * TPCH_DIGITS_SLACK bytes past them. */
static void put_digits(char *out, int64_t n, int width)
{
    if (width > 8) {
        put_digits(out, n / 100000000, width - 8);
        tpch_put_fixed(out + width - 8, (uint32_t)(n % 100000000), 8);
        return;
    }
    tpch_put_fixed(out, (uint32_t)n, width);
}

/* "<tag><key, 9 digits at least>", e.g. Customer#000000001. */
static uint32_t put_tagged_key(char *out, const char *tag, size_t tag_len, int64_t key)
{
    memcpy(out, tag, tag_len);
    int width = 9;
    for (int64_t k = key / 1000000000; k > 0; k /= 10)
        width++;
    put_digits(out + tag_len, key, width);
    return (uint32_t)(tag_len + (size_t)width);
}

static const char alphabet[65] = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,";

/* An address: 10..40 characters, each draw yielding five of them. dbgen
 * asks for a number in [0, 2^31 - 1] but computes that range's size in 32-bit
 * arithmetic, where it wraps to -2^31: the draws come out as negative
 * numbers, and their low bits (two's complement, arithmetic shifts) pick the
 * characters. */
static uint32_t put_address(char *out, tpch_stream *s)
{
    int64_t len = tpch_draw(s, 10, 40);
    int64_t bits = 0;
    for (int64_t i = 0; i < len; i++) {
        if (i % 5 == 0) {
            s->seed = tpch_rng_next(s->seed);
            bits = (int64_t)(((double)s->seed / (double)TPCH_RNG_MODULUS) * -2147483648.0);
        }
        out[i] = alphabet[bits & 63];
        bits >>= 6; /* arithmetic shift, as dbgen's signed 64-bit value */
    }
    return (uint32_t)len;
}

static uint32_t put_phone(char *out, int64_t nation, tpch_stream *s)
{
    int64_t area = tpch_draw(s, 100, 999);
    int64_t exchange = tpch_draw(s, 100, 999);
    int64_t number = tpch_draw(s, 1000, 9999);
    put_digits(out, 10 + nation, 2);
    out[2] = '-';
    put_digits(out + 3, area, 3);
    out[6] = '-';
    put_digits(out + 7, exchange, 3);
    out[10] = '-';
    put_digits(out + 11, number, 4);
    return 15;
}

/* x / d and x % d by a multiplication with inverse = floor((2^64 - 1) / d):
 * the high half of x * inverse is x / d or one less (a division would take
 * longer than the rest of a lineitem's supplier). */
static inline uint64_t divide(uint64_t x, uint64_t d, uint64_t inverse, uint64_t *rem)
{
    uint64_t q = (uint64_t)(((unsigned __int128)x * inverse) >> 64);
    uint64_t r = x - q * d;
    if (r >= d) {
        q++;
        r -= d;
    }
    *rem = r;
    return q;
}

static inline int64_t supplier_of_part(const tpch_gen *g, int64_t part, int64_t i)
{
    uint64_t s = (uint64_t)g->units[TPCH_SUPPLIER], inv = g->supplier_inverse, r;
    uint64_t step = s / SUPP_PER_PART + divide((uint64_t)part - 1, s, inv, &r);
    divide((uint64_t)part + (uint64_t)i * step, s, inv, &r);
    return (int64_t)r + 1;
}

static int64_t retail_price(int64_t part)
{
    return 90000 + (part / 10) % 20001 + 100 * (part % 1000);
}

/* --- part and partsupp ------------------------------------------------------ */

static sto_status gen_parts(const tpch_gen *g, unsigned tables, int64_t first, int64_t last,
                            tpch_sink *sink)
{
    static const tpch_stream_id ids[] = {
        TPCH_STREAM_P_MFG,   TPCH_STREAM_P_BRND,  TPCH_STREAM_P_TYPE, TPCH_STREAM_P_SIZE,
        TPCH_STREAM_P_CNTR,  TPCH_STREAM_P_CMNT,  TPCH_STREAM_P_NAME, TPCH_STREAM_PS_QTY,
        TPCH_STREAM_PS_SCST, TPCH_STREAM_PS_CMNT,
    };
    streams st;
    streams_init(&st, ids, (int)(sizeof(ids) / sizeof(ids[0])), first);
    tpch_stream *s = st.s;
    const tpch_dist *colors = &tpch_dists[TPCH_DIST_COLORS];
    char name[64 + TPCH_STR_SLACK];
    tpch_value v[9];
    text_lookahead part_text, ps_text;
    lookahead_init(&part_text, TPCH_STREAM_P_CMNT, PART_TEXT, 1, first);
    lookahead_init(&ps_text, TPCH_STREAM_PS_CMNT, PARTSUPP_TEXT, SUPP_PER_PART, first);
    for (int64_t unit = first; unit < last && unit < first + LOOKAHEAD_UNITS; unit++) {
        if (tables & TPCH_BIT(TPCH_PART)) lookahead_unit(g, &part_text);
        if (tables & TPCH_BIT(TPCH_PARTSUPP)) lookahead_unit(g, &ps_text);
    }
    for (int64_t unit = first; unit < last; unit++) {
        int64_t key = unit + 1;
        if (unit + LOOKAHEAD_UNITS < last) {
            if (tables & TPCH_BIT(TPCH_PART)) lookahead_unit(g, &part_text);
            if (tables & TPCH_BIT(TPCH_PARTSUPP)) lookahead_unit(g, &ps_text);
        }
        if (tables & TPCH_BIT(TPCH_PART)) {
            /* dbgen shuffles all 92 colors, but a swap at step i only
             * moves entries at i and after: the first five are settled
             * after five steps, and the stream skips the rest of its 92
             * draws at the next unit anyway */
            int perm[COLOR_COUNT];
            for (int i = 0; i < COLOR_COUNT; i++)
                perm[i] = i;
            for (int i = 0; i < NAME_COLORS; i++) {
                int j = (int)tpch_draw(&s[TPCH_STREAM_P_NAME], i, COLOR_COUNT - 1);
                int t = perm[j];
                perm[j] = perm[i];
                perm[i] = t;
            }
            uint32_t n = 0;
            for (int i = 0; i < NAME_COLORS; i++) {
                const char *c = colors->items[perm[i]].text;
                size_t l = strlen(c);
                if (i) name[n++] = ' ';
                memcpy(name + n, c, l);
                n += (uint32_t)l;
            }
            int64_t m = tpch_draw(&s[TPCH_STREAM_P_MFG], 1, 5);
            int64_t b = tpch_draw(&s[TPCH_STREAM_P_BRND], 1, 5);
            v[0] = int_value(key);
            v[1] = str_value(name, n);
            v[2] = list_value(mfgr_text[m], MFGR_LEN);
            v[3] = list_value(brand_text[m * 10 + b], BRAND_LEN);
            v[4] = pick_value(&g->types, &s[TPCH_STREAM_P_TYPE]);
            v[5] = int_value(tpch_draw(&s[TPCH_STREAM_P_SIZE], 1, 50));
            v[6] = pick_value(&g->containers, &s[TPCH_STREAM_P_CNTR]);
            v[7] = int_value(retail_price(key));
            v[8] = text_value(g, &s[TPCH_STREAM_P_CMNT], PART_TEXT);
            STO_TRY(sink->row(sink, TPCH_PART, v));
        }
        if (tables & TPCH_BIT(TPCH_PARTSUPP)) {
            for (int i = 0; i < SUPP_PER_PART; i++) {
                v[0] = int_value(key);
                v[1] = int_value(supplier_of_part(g, key, i));
                v[2] = int_value(tpch_draw(&s[TPCH_STREAM_PS_QTY], 1, 9999));
                v[3] = int_value(tpch_draw(&s[TPCH_STREAM_PS_SCST], 100, 100000));
                v[4] = text_value(g, &s[TPCH_STREAM_PS_CMNT], PARTSUPP_TEXT);
                STO_TRY(sink->row(sink, TPCH_PARTSUPP, v));
            }
        }
        streams_next_unit(&st);
    }
    return NULL;
}

/* --- supplier ------------------------------------------------------------------ */

static sto_status gen_suppliers(const tpch_gen *g, int64_t first, int64_t last, tpch_sink *sink)
{
    static const tpch_stream_id ids[] = {
        TPCH_STREAM_S_ADDR,   TPCH_STREAM_S_NTRG,   TPCH_STREAM_S_PHNE,
        TPCH_STREAM_S_ABAL,   TPCH_STREAM_S_CMNT,   TPCH_STREAM_BBB_JUNK,
        TPCH_STREAM_BBB_TYPE, TPCH_STREAM_BBB_CMNT, TPCH_STREAM_BBB_OFFSET,
    };
    streams st;
    streams_init(&st, ids, (int)(sizeof(ids) / sizeof(ids[0])), first);
    tpch_stream *s = st.s;
    char name[32 + TPCH_STR_SLACK], address[48 + TPCH_STR_SLACK], phone[16 + TPCH_STR_SLACK];
    char comment[128 + TPCH_STR_SLACK];
    tpch_value v[7];
    for (int64_t unit = first; unit < last; unit++) {
        int64_t key = unit + 1;
        int64_t nation = 0;
        v[0] = int_value(key);
        v[1] = str_value(name, put_tagged_key(name, "Supplier#", 9, key));
        v[2] = str_value(address, put_address(address, &s[TPCH_STREAM_S_ADDR]));
        nation = tpch_draw(&s[TPCH_STREAM_S_NTRG], 0, 24);
        v[3] = int_value(nation);
        v[4] = str_value(phone, put_phone(phone, nation, &s[TPCH_STREAM_S_PHNE]));
        v[5] = int_value(tpch_draw(&s[TPCH_STREAM_S_ABAL], -99999, 999999));
        v[6] = text_value(g, &s[TPCH_STREAM_S_CMNT], SUPPLIER_TEXT);

        /* Better Business Bureau comments, drawn for every row */
        int64_t clen = v[6].len;
        int64_t press = tpch_draw(&s[TPCH_STREAM_BBB_CMNT], 1, 10000);
        int64_t type = tpch_draw(&s[TPCH_STREAM_BBB_TYPE], 0, 100);
        int64_t noise = tpch_draw(&s[TPCH_STREAM_BBB_JUNK], 0, clen - 19);
        int64_t offset = tpch_draw(&s[TPCH_STREAM_BBB_OFFSET], 0, clen - (19 + noise));
        if (press <= 10) {
            memcpy(comment, v[6].s, (size_t)clen);
            memcpy(comment + offset, "Customer ", 9);
            memcpy(comment + offset + 9 + noise, type < 50 ? "Complaints" : "Recommends", 10);
            v[6].s = comment;
            v[6].pooled = 0;
        }
        STO_TRY(sink->row(sink, TPCH_SUPPLIER, v));
        streams_next_unit(&st);
    }
    return NULL;
}

/* --- customer -------------------------------------------------------------------- */

static sto_status gen_customers(const tpch_gen *g, int64_t first, int64_t last, tpch_sink *sink)
{
    static const tpch_stream_id ids[] = {
        TPCH_STREAM_C_ADDR, TPCH_STREAM_C_NTRG, TPCH_STREAM_C_PHNE,
        TPCH_STREAM_C_ABAL, TPCH_STREAM_C_MSEG, TPCH_STREAM_C_CMNT,
    };
    streams st;
    streams_init(&st, ids, (int)(sizeof(ids) / sizeof(ids[0])), first);
    tpch_stream *s = st.s;
    char name[32 + TPCH_STR_SLACK], address[48 + TPCH_STR_SLACK], phone[16 + TPCH_STR_SLACK];
    tpch_value v[8];
    text_lookahead text;
    lookahead_init(&text, TPCH_STREAM_C_CMNT, CUSTOMER_TEXT, 1, first);
    for (int64_t unit = first; unit < last && unit < first + LOOKAHEAD_UNITS; unit++)
        lookahead_unit(g, &text);
    for (int64_t unit = first; unit < last; unit++) {
        int64_t key = unit + 1;
        if (unit + LOOKAHEAD_UNITS < last) lookahead_unit(g, &text);
        v[0] = int_value(key);
        v[1] = str_value(name, put_tagged_key(name, "Customer#", 9, key));
        v[2] = str_value(address, put_address(address, &s[TPCH_STREAM_C_ADDR]));
        int64_t nation = tpch_draw(&s[TPCH_STREAM_C_NTRG], 0, 24);
        v[3] = int_value(nation);
        v[4] = str_value(phone, put_phone(phone, nation, &s[TPCH_STREAM_C_PHNE]));
        v[5] = int_value(tpch_draw(&s[TPCH_STREAM_C_ABAL], -99999, 999999));
        v[6] = pick_value(&g->segments, &s[TPCH_STREAM_C_MSEG]);
        v[7] = text_value(g, &s[TPCH_STREAM_C_CMNT], CUSTOMER_TEXT);
        STO_TRY(sink->row(sink, TPCH_CUSTOMER, v));
        streams_next_unit(&st);
    }
    return NULL;
}

/* --- orders and lineitem ------------------------------------------------------- */

/* Starts the cache misses of a comment somewhere in the 300 MiB pool. */
static inline void prefetch_text(const tpch_value *v)
{
    __builtin_prefetch(v->s);
    __builtin_prefetch(v->s + v->len - 1);
}

/* Orders are generated in batches and only then handed on: each comment is a
 * cache miss somewhere in the 300 MiB pool, and a batch gives the prefetches
 * issued at generation time a whole batch's work to arrive in. */
#define ORDER_BATCH 8

typedef struct order_batch {
    tpch_value order[ORDER_BATCH][9];
    tpch_value line[ORDER_BATCH][MAX_LINES][16];
    int lines[ORDER_BATCH];
    char clerk[ORDER_BATCH][16 + TPCH_STR_SLACK];
} order_batch;

/* One order and its lines into b->...[k]. An order's total price and status
 * come from its lines, so they are always drawn, but only what the order
 * needs when the lines themselves are not wanted (`lines_wanted`): each
 * stream jumps to the next unit's start anyway. */
static void gen_order(const tpch_gen *g, tpch_stream *s, int64_t unit, order_batch *b, int k,
                      bool lines_wanted)
{
    const int64_t customers = g->units[TPCH_CUSTOMER];
    const int64_t parts = g->units[TPCH_PART];
    const int64_t clerks = g->scale * 1000 > 1000 ? g->scale * 1000 : 1000;
    tpch_value *o = b->order[k];
    int64_t index = unit + 1;
    int64_t okey = ((index >> 3) << 5) | (index & 7);

    int64_t cust = tpch_draw(&s[TPCH_STREAM_O_CKEY], 1, customers);
    for (int delta = 1; cust % 3 == 0; delta = -delta) {
        cust += delta;
        if (cust > customers) cust = customers;
    }
    int64_t odate = tpch_draw(&s[TPCH_STREAM_O_ODATE], 0, ORDER_DATE_SPAN - 1);
    o[0] = int_value(okey);
    o[1] = int_value(cust);
    o[4] = int_value(START_DAYS + odate);
    o[5] = pick_value(&g->priorities, &s[TPCH_STREAM_O_PRIO]);
    o[6] = str_value(b->clerk[k], put_tagged_key(b->clerk[k], "Clerk#", 6,
                                                 tpch_draw(&s[TPCH_STREAM_O_CLRK], 1, clerks)));
    o[7] = int_value(0);
    o[8] = text_value(g, &s[TPCH_STREAM_O_CMNT], ORDERS_TEXT);

    int lines = (int)tpch_draw(&s[TPCH_STREAM_O_LCNT], 1, MAX_LINES);
    int64_t total = 0;
    int shipped = 0;
    for (int i = 0; i < lines; i++) {
        tpch_value *r = b->line[k][i];
        int64_t qty = tpch_draw(&s[TPCH_STREAM_L_QTY], 1, 50);
        int64_t discount = tpch_draw(&s[TPCH_STREAM_L_DCNT], 0, 10);
        int64_t tax = tpch_draw(&s[TPCH_STREAM_L_TAX], 0, 8);
        int64_t part = tpch_draw(&s[TPCH_STREAM_L_PKEY], 1, parts);
        int64_t price = retail_price(part) * qty;
        /* dbgen's order total: each line's price less discount plus tax,
         * truncated to cents at each step */
        total += ((price * (100 - discount)) / 100) * (100 + tax) / 100;
        int64_t ship = odate + tpch_draw(&s[TPCH_STREAM_L_SDTE], 1, 121);
        shipped += START_DAYS + ship <= CURRENT_DAYS;
        if (!lines_wanted) continue;
        r[13] = pick_value(&g->instructions, &s[TPCH_STREAM_L_SHIP]);
        r[14] = pick_value(&g->modes, &s[TPCH_STREAM_L_SMODE]);
        r[15] = text_value(g, &s[TPCH_STREAM_L_CMNT], LINEITEM_TEXT);
        int64_t supp = supplier_of_part(g, part, tpch_draw(&s[TPCH_STREAM_L_SKEY], 0, 3));
        int64_t commit = odate + tpch_draw(&s[TPCH_STREAM_L_CDTE], 30, 90);
        int64_t receipt = ship + tpch_draw(&s[TPCH_STREAM_L_RDTE], 1, 30);
        r[0] = int_value(okey);
        r[1] = int_value(part);
        r[2] = int_value(supp);
        r[3] = int_value(i + 1);
        r[4] = int_value(qty * 100);
        r[5] = int_value(price);
        r[6] = int_value(discount);
        r[7] = int_value(tax);
        /* returned or accepted once received by "today", else not yet */
        if (START_DAYS + receipt <= CURRENT_DAYS)
            r[8] = pick_value(&g->rflags, &s[TPCH_STREAM_L_RFLG]);
        else
            r[8] = list_value(letters[LETTER_N], 1);
        r[9] = list_value(letters[START_DAYS + ship <= CURRENT_DAYS ? LETTER_F : LETTER_O], 1);
        r[10] = int_value(START_DAYS + ship);
        r[11] = int_value(START_DAYS + commit);
        r[12] = int_value(START_DAYS + receipt);
    }
    /* F: every line shipped, O: none, P: some */
    int status = shipped == lines ? LETTER_F : shipped > 0 ? LETTER_P : LETTER_O;
    o[2] = list_value(letters[status], 1);
    o[3] = int_value(total);
    b->lines[k] = lines_wanted ? lines : 0;
}

static sto_status gen_orders(const tpch_gen *g, unsigned tables, int64_t first, int64_t last,
                             tpch_sink *sink)
{
    static const tpch_stream_id ids[] = {
        TPCH_STREAM_O_CKEY, TPCH_STREAM_O_ODATE, TPCH_STREAM_O_PRIO,  TPCH_STREAM_O_CLRK,
        TPCH_STREAM_O_CMNT, TPCH_STREAM_O_LCNT,  TPCH_STREAM_L_QTY,   TPCH_STREAM_L_DCNT,
        TPCH_STREAM_L_TAX,  TPCH_STREAM_L_SHIP,  TPCH_STREAM_L_SMODE, TPCH_STREAM_L_CMNT,
        TPCH_STREAM_L_PKEY, TPCH_STREAM_L_SKEY,  TPCH_STREAM_L_SDTE,  TPCH_STREAM_L_CDTE,
        TPCH_STREAM_L_RDTE, TPCH_STREAM_L_RFLG,
    };
    streams st;
    streams_init(&st, ids, (int)(sizeof(ids) / sizeof(ids[0])), first);
    order_batch *b = malloc(2 * sizeof(*b));
    if (!b) return sto_error_oom();
    /* Two batches in flight: the next one is generated (and its comments
     * prefetched) before the current one is handed on. */
    int n[2] = {0, 0}, cur = 0;
    int64_t unit = first;
    sto_status err = NULL;
    for (;;) {
        int next = cur ^ 1;
        n[next] = last - unit < ORDER_BATCH ? (int)(last - unit) : ORDER_BATCH;
        for (int k = 0; k < n[next]; k++) {
            gen_order(g, st.s, unit + k, &b[next], k, (tables & TPCH_BIT(TPCH_LINEITEM)) != 0);
            streams_next_unit(&st);
            /* spread over the batch: a burst of them stalls once the
             * core's outstanding misses are used up */
            prefetch_text(&b[next].order[k][8]);
            for (int i = 0; i < b[next].lines[k]; i++)
                prefetch_text(&b[next].line[k][i][15]);
        }
        unit += n[next];
        for (int k = 0; k < n[cur] && !err; k++) {
            if (tables & TPCH_BIT(TPCH_ORDERS)) err = sink->row(sink, TPCH_ORDERS, b[cur].order[k]);
            if (tables & TPCH_BIT(TPCH_LINEITEM))
                for (int i = 0; i < b[cur].lines[k] && !err; i++)
                    err = sink->row(sink, TPCH_LINEITEM, b[cur].line[k][i]);
        }
        cur = next;
        if (err || (n[cur] == 0)) break;
    }
    free(b);
    return err;
}

/* --- nation and region -------------------------------------------------------- */

static sto_status gen_codes(const tpch_gen *g, tpch_table_id t, int64_t first, int64_t last,
                            tpch_sink *sink)
{
    tpch_stream_id id = t == TPCH_NATION ? TPCH_STREAM_N_CMNT : TPCH_STREAM_R_CMNT;
    const tpch_picker *names = t == TPCH_NATION ? &g->nations : &g->regions;
    streams st;
    streams_init(&st, &id, 1, first);
    tpch_value v[4];
    for (int64_t unit = first; unit < last; unit++) {
        int n = 0;
        v[n++] = int_value(unit);
        v[n++] = list_value(names->pad[unit], names->len[unit]);
        if (t == TPCH_NATION) v[n++] = int_value(g->region_of_nation[unit]);
        v[n++] = text_value(g, &st.s[id], CODE_TEXT);
        STO_TRY(sink->row(sink, t, v));
        streams_next_unit(&st);
    }
    return NULL;
}

sto_status tpch_gen_rows(const tpch_gen *g, unsigned tables, int64_t first, int64_t last,
                         tpch_sink *sink)
{
    if (!tables) return NULL;
    tpch_table_id unit_table = TPCH_TABLE_COUNT;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        if (!(tables & TPCH_BIT(t))) continue;
        if (unit_table != TPCH_TABLE_COUNT && table_infos[t].unit_table != unit_table)
            return sto_error(STO_INTERNAL_ERROR, "tables of different units in one pass");
        unit_table = table_infos[t].unit_table;
    }
    if (first < 0) first = 0;
    if (last > g->units[unit_table]) last = g->units[unit_table];
    if (first >= last) return NULL;
    switch (unit_table) {
    case TPCH_PART:
        return gen_parts(g, tables, first, last, sink);
    case TPCH_SUPPLIER:
        return gen_suppliers(g, first, last, sink);
    case TPCH_CUSTOMER:
        return gen_customers(g, first, last, sink);
    case TPCH_ORDERS:
        return gen_orders(g, tables, first, last, sink);
    default:
        return gen_codes(g, unit_table, first, last, sink);
    }
}
