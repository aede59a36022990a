/*
 * rt_agg.c — the hash tables of hash aggregation, their merge and the
 * final aggregate values. The design is described in rt_agg.h.
 */
#include "engine/rt_agg.h"

#include "engine/rt_agg_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_HEAD   ENG_AGG_ENTRY_HEAD /* padded so states stay 16-byte aligned */
#define ENTRY_FOLDED 9                  /* the byte the merge sets */
#define BLOCK_BYTES  ((size_t)64 << 10)
#define BLOCK_HEAD   32 /* keeps entries 16-byte aligned */

struct eng_agg_block {
    eng_agg_block *next;
    size_t bytes; /* the whole block, header included */
    size_t used;  /* bytes of entries after the header */
};

void eng_agg_layout_finish(eng_agg_layout *l)
{
    l->key_bytes = cg_row_bytes(l->nkeys);
    uint32_t off = 0;
    for (uint32_t i = 0; i < l->naggs; i++) {
        l->aggs[i].offset = off;
        off += cg_agg_state_bytes(l->aggs[i].func, l->aggs[i].distinct, l->aggs[i].arg);
    }
    l->state_bytes = off;
    l->distinct_sets = false;
    for (uint32_t i = 0; i < l->naggs; i++)
        l->distinct_sets |= cg_agg_is_distinct_set(l->aggs[i].func, l->aggs[i].distinct);
    l->entry_bytes = ENTRY_HEAD + l->key_bytes + l->state_bytes;
}

static inline uint8_t *entry_key(uint8_t *e)
{
    return e + ENTRY_HEAD;
}

static inline uint8_t *entry_states(const eng_agg_layout *l, uint8_t *e)
{
    return e + ENTRY_HEAD + l->key_bytes;
}

/* --- values of one slot: equality, order, hash ------------------------------ */

static int64_t slot_int(sto_type t, const uint8_t *p)
{
    return cg_row_slot_int(t.id, p);
}

static double slot_double(const uint8_t *p)
{
    double d;
    memcpy(&d, p, 8);
    return d;
}

/* Row slots are packed, so a string slot may not be aligned for sto_str:
 * read it through a copy (inline bytes travel with it). */
static sto_str slot_str(const uint8_t *p)
{
    sto_str s;
    memcpy(&s, p, sizeof(s));
    return s;
}

static bool value_equal(sto_type t, const uint8_t *a, const uint8_t *b)
{
    if (sto_type_is_string(t.id)) {
        sto_str x = slot_str(a), y = slot_str(b);
        return sto_str_eq(&x, &y);
    }
    if (t.id == STO_TYPE_DOUBLE) {
        double x = slot_double(a), y = slot_double(b);
        return x == y || (isnan(x) && isnan(y));
    }
    return slot_int(t, a) == slot_int(t, b);
}

/* <0, 0, >0; NaN above every number, as PostgreSQL orders it. */
static int value_cmp(sto_type t, const uint8_t *a, const uint8_t *b)
{
    if (sto_type_is_string(t.id)) {
        sto_str x = slot_str(a), y = slot_str(b);
        return sto_str_cmp(&x, &y);
    }
    if (t.id == STO_TYPE_DOUBLE) {
        double x = slot_double(a), y = slot_double(b);
        if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
        return x < y ? -1 : x > y;
    }
    int64_t x = slot_int(t, a), y = slot_int(t, b);
    return x < y ? -1 : x > y;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static uint64_t value_hash(sto_type t, const uint8_t *p)
{
    if (sto_type_is_string(t.id)) {
        sto_str s = slot_str(p);
        const unsigned char *d = (const unsigned char *)sto_str_data(&s);
        uint64_t h = 0xcbf29ce484222325ULL;
        for (uint32_t i = 0; i < s.len; i++)
            h = (h ^ d[i]) * 0x100000001b3ULL;
        return mix(h ^ s.len);
    }
    if (t.id == STO_TYPE_DOUBLE) {
        double d = slot_double(p);
        if (d == 0) d = 0; /* -0.0 */
        if (isnan(d)) d = NAN;
        uint64_t bits;
        memcpy(&bits, &d, 8);
        return mix(bits);
    }
    return mix((uint64_t)slot_int(t, p));
}

static bool keys_equal(const eng_agg_layout *l, const uint8_t *a, const uint8_t *b)
{
    for (uint32_t i = 0; i < l->nkeys; i++) {
        uint32_t no = cg_row_null_offset(l->nkeys, i);
        if (a[no] || b[no]) {
            if (a[no] != b[no]) return false;
            continue;
        }
        if (!value_equal(l->key_types[i], a + i * CG_ROW_SLOT, b + i * CG_ROW_SLOT)) return false;
    }
    return true;
}

/* --- distinct sets ---------------------------------------------------------------- */

/* A DISTINCT aggregate's state (16 bytes: cg_agg_state_bytes) holds its
 * set's address at 0 and, here, the set's count, kept as the set grows, so
 * the rows of COUNT(DISTINCT) are written without reading the sets. */
#define DSET_COUNT_AT 8

typedef struct dset {
    uint64_t cap, count;
    size_t bytes;
    uint8_t *used; /* cap flags */
    uint8_t *vals; /* cap 16-byte slots */
} dset;

/* Room for a set of `bytes` (a multiple of 16) in arena r, zeroed. */
static sto_status arena_alloc(eng_agg_arena *r, const eng_rt_mem *m, size_t bytes, void **out)
{
    if (r->free < bytes) {
        size_t block = BLOCK_BYTES;
        if (block < BLOCK_HEAD + bytes) block = BLOCK_HEAD + bytes;
        eng_agg_block *b = NULL;
        STO_TRY(eng_rt_alloc_zero(m, block, (void **)&b));
        b->next = r->blocks;
        b->bytes = block;
        r->blocks = b;
        r->ptr = (uint8_t *)b + BLOCK_HEAD;
        r->free = block - BLOCK_HEAD;
    }
    *out = r->ptr;
    r->ptr += bytes;
    r->free -= bytes;
    return STO_OK;
}

static void arena_free(eng_agg_arena *r, const eng_rt_mem *m)
{
    for (eng_agg_block *b = r->blocks, *next; b; b = next) {
        next = b->next;
        eng_rt_free(m, b, b->bytes);
    }
    memset(r, 0, sizeof(*r));
}

static sto_status dset_new(eng_agg_arena *r, const eng_rt_mem *m, uint64_t cap, dset **out)
{
    size_t bytes = (sizeof(dset) + cap + cap * CG_ROW_SLOT + 15) & ~(size_t)15;
    dset *s = NULL;
    STO_TRY(arena_alloc(r, m, bytes, (void **)&s));
    s->cap = cap;
    s->bytes = bytes;
    s->vals = (uint8_t *)(s + 1);
    s->used = s->vals + cap * CG_ROW_SLOT;
    *out = s;
    return STO_OK;
}

static void dset_put(dset *s, sto_type t, const uint8_t *v)
{
    uint64_t mask = s->cap - 1, i = value_hash(t, v) & mask;
    while (s->used[i]) {
        if (value_equal(t, s->vals + i * CG_ROW_SLOT, v)) return;
        i = (i + 1) & mask;
    }
    s->used[i] = 1;
    memcpy(s->vals + i * CG_ROW_SLOT, v, CG_ROW_SLOT);
    s->count++;
}

/* Adds v to *sp (a new set when NULL); a full set is copied into one twice
 * its size, and the old copy stays in the arena until it goes. */
static sto_status dset_add(eng_agg_arena *r, const eng_rt_mem *m, dset **sp, sto_type t,
                           const uint8_t *v)
{
    dset *s = *sp;
    if (!s) STO_TRY(dset_new(r, m, 8, sp));
    s = *sp;
    if ((s->count + 1) * 2 > s->cap) {
        dset *n = NULL;
        STO_TRY(dset_new(r, m, s->cap * 2, &n));
        for (uint64_t i = 0; i < s->cap; i++)
            if (s->used[i]) dset_put(n, t, s->vals + i * CG_ROW_SLOT);
        *sp = s = n;
    }
    dset_put(s, t, v);
    return STO_OK;
}

/* --- spill buffers ------------------------------------------------------------------ */

void eng_agg_local_init(eng_agg_local *a, const eng_agg_layout *l, eng_rt_mem mem)
{
    memset(a, 0, sizeof(*a));
    a->layout = l;
    a->mem = mem;
    a->hll_sum = 1u << ENG_AGG_HLL_LOG;
    a->hll_zeros = 1u << ENG_AGG_HLL_LOG;
    a->runs.on = l->runs;
}

/* Entries of a block: [block_first, block_end) in steps of entry_bytes. */
static inline uint8_t *block_first(eng_agg_block *b)
{
    return (uint8_t *)b + BLOCK_HEAD;
}

static inline uint8_t *block_end(eng_agg_block *b)
{
    return (uint8_t *)b + BLOCK_HEAD + b->used;
}

static inline uint64_t entry_hash(const uint8_t *e)
{
    uint64_t h;
    memcpy(&h, e, 8);
    return h;
}

static inline unsigned hash_part(uint64_t h)
{
    return (unsigned)(h >> (64 - ENG_AGG_PARTS_LOG));
}

/* The merge's split of a partition: the ENG_AGG_SUB_LOG bits below the
 * partition's. */
static inline unsigned hash_sub(uint64_t h)
{
    return (unsigned)((h << ENG_AGG_PARTS_LOG) >> (64 - ENG_AGG_SUB_LOG));
}

static void part_free(const eng_rt_mem *m, eng_agg_part *p)
{
    for (eng_agg_block *b = p->blocks, *next; b; b = next) {
        next = b->next;
        eng_rt_free(m, b, b->bytes);
    }
    memset(p, 0, sizeof(*p));
}

static inline uint64_t table_slots(const eng_agg_local *a)
{
    return a->table ? a->mask + 1 : 0;
}

static inline uint8_t *table_entry(const eng_agg_local *a, uint64_t i)
{
    return a->table + i * a->layout->entry_bytes;
}

void eng_agg_local_free(eng_agg_local *a)
{
    eng_rt_free(&a->mem, a->table, a->table_bytes);
    a->table = NULL;
    for (unsigned i = 0; i < ENG_AGG_PARTS; i++)
        part_free(&a->mem, &a->parts[i]);
    arena_free(&a->sets, &a->mem);
    eng_agg_runs_free(a);
}

/* Room for one more entry at the end of p's buffer. */
static sto_status part_append(const eng_agg_layout *l, const eng_rt_mem *m, eng_agg_part *p,
                              uint8_t **out)
{
    size_t need = l->entry_bytes;
    if (p->free_bytes < need) {
        size_t bytes = BLOCK_BYTES;
        if (bytes < BLOCK_HEAD + need * 4) bytes = BLOCK_HEAD + need * 4;
        eng_agg_block *b = NULL;
        STO_TRY(eng_rt_alloc(m, bytes, (void **)&b));
        b->next = p->blocks;
        b->bytes = bytes;
        b->used = 0;
        p->blocks = b;
        p->free_ptr = block_first(b);
        p->free_bytes = bytes - BLOCK_HEAD;
    }
    *out = p->free_ptr;
    p->free_ptr += need;
    p->free_bytes -= need;
    p->blocks->used += need;
    p->entries++;
    return STO_OK;
}

sto_status eng_agg_part_append(eng_agg_local *a, eng_agg_part *p, uint64_t hash, uint8_t **out)
{
    STO_TRY(part_append(a->layout, &a->mem, p, out));
    p->sub_count[hash_sub(hash)]++;
    return STO_OK;
}

void eng_agg_part_pop(eng_agg_local *a, eng_agg_part *p, uint64_t hash)
{
    size_t bytes = a->layout->entry_bytes;
    p->free_ptr -= bytes;
    p->free_bytes += bytes;
    p->blocks->used -= bytes;
    p->entries--;
    p->sub_count[hash_sub(hash)]--;
}

void eng_agg_part_free(const eng_rt_mem *m, eng_agg_part *p)
{
    part_free(m, p);
}

/* --- the worker's table ---------------------------------------------------------------- */

/* The table's first size, in slots (at least ENG_AGG_PARTS: every
 * partition owns a range of them). */
#define TABLE_MIN_SLOTS 256u

/* The table of a worker whose spills met no group again (below this many
 * entries per group) takes at most this many bytes (L1). */
#define TABLE_HOT_BYTES (ENG_AGG_TABLE_BYTES / 32)
#define HOT_REUSE       1.1

static inline uint64_t home_slot(const eng_agg_local *a, uint64_t h)
{
    return ((uint64_t)hash_part(h) << a->part_shift) | (h & a->low_mask);
}

/* Linear probing over entries kept in the slots of t (mask: slots - 1),
 * from slot i: the slot of (hash, key)'s group, or the empty slot where it
 * goes. The worker's table and the merge's share it. */
static uint8_t *entries_probe(const eng_agg_layout *l, uint8_t *t, uint64_t mask, uint64_t i,
                              uint64_t hash, const uint8_t *key)
{
    for (;; i = (i + 1) & mask) {
        uint8_t *e = t + i * l->entry_bytes;
        if (!e[ENG_AGG_ENTRY_USED]) return e;
        if (entry_hash(e) == hash && keys_equal(l, entry_key(e), key)) return e;
    }
}

/* The slot of (hash, key) in the worker's table. */
static uint8_t *table_probe(const eng_agg_local *a, uint64_t hash, const uint8_t *key)
{
    return entries_probe(a->layout, a->table, a->mask, home_slot(a, hash), hash, key);
}

/* Makes the table's memory at t `slots` slots (a power of two). */
static void table_shape(eng_agg_local *a, uint8_t *t, uint64_t slots)
{
    unsigned log = 0;
    while (((uint64_t)1 << log) < slots)
        log++;
    a->table = t;
    a->limit = slots / 2;
    a->mask = slots - 1;
    a->part_shift = log - ENG_AGG_PARTS_LOG;
    a->low_mask = (slots >> ENG_AGG_PARTS_LOG) - 1;
}

/* A table of `slots` slots (a power of two) with the entries of the old
 * one. */
static sto_status table_resize(eng_agg_local *a, uint64_t slots)
{
    const eng_agg_layout *l = a->layout;
    size_t bytes = slots * l->entry_bytes;
    uint8_t *t = NULL;
    STO_TRY(eng_rt_alloc_zero(&a->mem, bytes, (void **)&t));
    eng_agg_local n = *a; /* the new table, to place entries */
    table_shape(&n, t, slots);
    for (uint64_t i = 0; i < table_slots(a); i++) {
        uint8_t *e = table_entry(a, i);
        if (!e[ENG_AGG_ENTRY_USED]) continue;
        memcpy(table_probe(&n, entry_hash(e), entry_key(e)), e, l->entry_bytes);
    }
    eng_rt_free(&a->mem, a->table, a->table_bytes);
    table_shape(a, t, slots);
    a->table_bytes = bytes;
    return STO_OK;
}

/* 2^-r for a register's value. */
static inline double pow2_neg(unsigned r)
{
    return 1.0 / (double)((uint64_t)1 << r);
}

/* HyperLogLog over the groups' hashes: the register from the low bits,
 * the rank from the run of zeros above them. */
static void hll_add_to(uint8_t *regs, double *sum, uint32_t *zeros, uint64_t h)
{
    uint64_t rest = h >> ENG_AGG_HLL_LOG;
    uint8_t rank = (uint8_t)(rest ? __builtin_ctzll(rest) + 1 : 64 - ENG_AGG_HLL_LOG + 1);
    uint8_t *r = &regs[h & ((1u << ENG_AGG_HLL_LOG) - 1)];
    if (*r >= rank) return;
    *sum += pow2_neg(rank) - pow2_neg(*r);
    *zeros -= !*r;
    *r = rank;
}

static void hll_add(eng_agg_local *a, uint64_t h)
{
    hll_add_to(a->hll, &a->hll_sum, &a->hll_zeros, h);
}

/* Appends every entry of the table to its partition's buffer and empties
 * the table. */
static sto_status table_spill(eng_agg_local *a)
{
    const eng_agg_layout *l = a->layout;
    for (uint64_t i = 0; i < table_slots(a); i++) {
        uint8_t *e = table_entry(a, i);
        if (!e[ENG_AGG_ENTRY_USED]) continue;
        uint64_t h = entry_hash(e);
        eng_agg_part *p = &a->parts[hash_part(h)];
        uint8_t *to = NULL;
        STO_TRY(part_append(l, &a->mem, p, &to));
        memcpy(to, e, l->entry_bytes);
        p->sub_count[hash_sub(h)]++;
        hll_add(a, h);
        e[ENG_AGG_ENTRY_USED] = 0;
        a->count--;
        a->spilled++;
    }
    a->spills++;
    return STO_OK;
}

/* The HyperLogLog estimate from the sum of 2^-register and the zero
 * registers. */
static double hll_from(double sum, unsigned zeros)
{
    const double m = 1u << ENG_AGG_HLL_LOG;
    double e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (e < 2.5 * m && zeros) e = m * log(m / zeros);
    return e;
}

/* About how many distinct hashes the registers saw. */
static double hll_estimate(const uint8_t *regs)
{
    double sum = 0;
    unsigned zeros = 0;
    for (unsigned i = 0; i < (1u << ENG_AGG_HLL_LOG); i++) {
        sum += pow2_neg(regs[i]);
        zeros += !regs[i];
    }
    return hll_from(sum, zeros);
}

/* About how many groups the worker has met: those it spilled (the sketch,
 * kept up to date as the registers change rather than summed each time)
 * and those in its table, which are mostly the same groups again when
 * groups come back: counting them apart would double them and put off
 * the growth that makes them one entry each (q15: 10K suppliers over
 * 80-byte entries, 4K to a table, spilled seven times before it grew;
 * now once). */
static double hll_groups(const eng_agg_local *a)
{
    uint8_t regs[1u << ENG_AGG_HLL_LOG];
    memcpy(regs, a->hll, sizeof(regs));
    double sum = a->hll_sum;
    uint32_t zeros = a->hll_zeros;
    for (uint64_t i = 0; i < table_slots(a); i++) {
        const uint8_t *e = table_entry(a, i);
        if (e[ENG_AGG_ENTRY_USED]) hll_add_to(regs, &sum, &zeros, entry_hash(e));
    }
    return hll_from(sum, zeros);
}

/* The full table doubles while it fits ENG_AGG_TABLE_BYTES (or holds
 * DISTINCT sets), grows to hold every group met when they come back
 * (rt_agg.h), or else is spilled. */
static sto_status table_make_room(eng_agg_local *a)
{
    const eng_agg_layout *l = a->layout;
    uint64_t slots = table_slots(a);
    if (!slots) return table_resize(a, TABLE_MIN_SLOTS);
    if (l->distinct_sets || (!a->hot && slots * 2 * l->entry_bytes <= ENG_AGG_TABLE_BYTES))
        return table_resize(a, slots * 2);
    double made = (double)(a->spilled + a->count);
    /* The groups met: the union of the spilled sketch and the table's
     * hashes, at least the larger of the two and at most their sum. The
     * union costs a pass over the table, taken only when those bounds
     * leave the growth open: q13's 100K customers over orders spill a
     * table of 8K groups 180 times and never grow (the groups are too many
     * for ENG_AGG_TABLE_BIG), and the passes took a twentieth of the
     * query's CPU. A table that stays small (groups come together) takes
     * the sum: its groups are all new. */
    double spilled = hll_from(a->hll_sum, a->hll_zeros);
    double low = spilled > (double)a->count ? spilled : (double)a->count;
    uint64_t least = slots * 2;
    while ((double)least < low * 2)
        least *= 2;
    if (made >= ENG_AGG_REUSE * low && least * l->entry_bytes <= ENG_AGG_TABLE_BIG) {
        double groups = a->hot ? spilled + (double)a->count : hll_groups(a);
        if (made >= ENG_AGG_REUSE * groups) {
            uint64_t want = slots * 2;
            while ((double)want < groups * 2)
                want *= 2;
            if (want * l->entry_bytes <= ENG_AGG_TABLE_BIG) {
                a->hot = false;
                return table_resize(a, want);
            }
        }
    }
    STO_TRY(table_spill(a));
    /* No group came back after the spills: a group's rows come together
     * (q18's lineitems of an order), and a table in L1 holds the groups
     * at hand as well as a big one; when groups start to come back, it
     * grows again. The sketch now holds the table's hashes too. */
    bool hot = a->spills > 1 && made < HOT_REUSE * hll_from(a->hll_sum, a->hll_zeros);
    if (hot && !a->hot) {
        uint64_t small = TABLE_MIN_SLOTS;
        while (small * 2 * l->entry_bytes <= TABLE_HOT_BYTES)
            small *= 2;
        if (small < slots) table_shape(a, a->table, small);
    }
    a->hot = hot;
    return STO_OK;
}

/* The entry of (hash, key) in the table; a new one when missing. */
static sto_status table_find(eng_agg_local *a, uint64_t hash, const uint8_t *key, uint8_t **out)
{
    const eng_agg_layout *l = a->layout;
    uint8_t *e = a->table ? table_probe(a, hash, key) : NULL;
    if (e && e[ENG_AGG_ENTRY_USED]) {
        *out = e;
        return STO_OK;
    }
    if (a->count >= a->limit) {
        STO_TRY(table_make_room(a));
        e = table_probe(a, hash, key);
    }
    memset(e, 0, l->entry_bytes);
    memcpy(e, &hash, 8);
    e[ENG_AGG_ENTRY_USED] = 1;
    memcpy(entry_key(e), key, l->key_bytes);
    a->count++;
    *out = e;
    return STO_OK;
}

static sto_status merge_states(const eng_agg_layout *l, eng_agg_arena *r, const eng_rt_mem *m,
                               uint8_t *dst, uint8_t *src);

sto_status eng_agg_table_fold(eng_agg_local *a, uint8_t *e)
{
    uint8_t *d = NULL;
    STO_TRY(table_find(a, entry_hash(e), entry_key(e), &d));
    return merge_states(a->layout, NULL, &a->mem, entry_states(a->layout, d),
                        entry_states(a->layout, e));
}

int32_t eng_rt_agg_find(cg_error *err, void *local, uint64_t hash, const uint8_t *key,
                        uint8_t **states)
{
    eng_agg_local *a = local;
    uint8_t *e = NULL;
    sto_status st = table_find(a, hash, key, &e);
    if (st) {
        err->detail = st;
        return CG_ERR_RUNTIME;
    }
    *states = entry_states(a->layout, e);
    return CG_ERR_NONE;
}

int32_t eng_rt_agg_distinct(cg_error *err, void *local, uint8_t *state, uint32_t agg,
                            const uint8_t *value)
{
    eng_agg_local *a = local;
    dset *s;
    memcpy(&s, state, sizeof(s));
    sto_status st = dset_add(&a->sets, &a->mem, &s, a->layout->aggs[agg].arg, value);
    memcpy(state, &s, sizeof(s));
    if (s) memcpy(state + DSET_COUNT_AT, &s->count, 8);
    if (st) {
        err->detail = st;
        return CG_ERR_RUNTIME;
    }
    return CG_ERR_NONE;
}

/* --- merging and final values ------------------------------------------------------- */

static __int128 load_i128(const uint8_t *p)
{
    __int128 v;
    memcpy(&v, p, 16);
    return v;
}

static int64_t load_i64(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Adds src's states into dst's (the entries of one group). src's distinct
 * sets are emptied into dst's or moved over; a dst set that grows does so
 * in r (NULL where there are no sets: fold_direct). */
static sto_status merge_states(const eng_agg_layout *l, eng_agg_arena *r, const eng_rt_mem *m,
                               uint8_t *dst, uint8_t *src)
{
    for (uint32_t k = 0; k < l->naggs; k++) {
        const eng_agg_fn *a = &l->aggs[k];
        uint8_t *d = dst + a->offset, *s = src + a->offset;
        if (cg_agg_is_distinct_set(a->func, a->distinct)) {
            dset *ds, *ss;
            memcpy(&ds, d, sizeof(ds));
            memcpy(&ss, s, sizeof(ss));
            if (!ss) continue;
            if (!ds) {
                memcpy(d, s, DSET_COUNT_AT + 8);
                memset(s, 0, DSET_COUNT_AT + 8);
                continue;
            }
            for (uint64_t i = 0; i < ss->cap; i++)
                if (ss->used[i]) STO_TRY(dset_add(r, m, &ds, a->arg, ss->vals + i * CG_ROW_SLOT));
            memcpy(d, &ds, sizeof(ds));
            memcpy(d + DSET_COUNT_AT, &ds->count, 8);
            continue;
        }
        switch (a->func) {
        case SQL_AGG_COUNT_STAR:
        case SQL_AGG_COUNT: {
            int64_t c = load_i64(d) + load_i64(s);
            memcpy(d, &c, 8);
            break;
        }
        case SQL_AGG_SUM:
        case SQL_AGG_AVG:
            if (a->arg.id == STO_TYPE_DOUBLE) {
                double x = slot_double(d) + slot_double(s);
                memcpy(d, &x, 8);
                if (a->func == SQL_AGG_SUM) {
                    d[8] |= s[8];
                } else {
                    int64_t c = load_i64(d + 8) + load_i64(s + 8);
                    memcpy(d + 8, &c, 8);
                }
            } else {
                __int128 x = load_i128(d) + load_i128(s);
                memcpy(d, &x, 16);
                if (a->func == SQL_AGG_SUM) {
                    d[16] |= s[16];
                } else {
                    int64_t c = load_i64(d + 16) + load_i64(s + 16);
                    memcpy(d + 16, &c, 8);
                }
            }
            break;
        case SQL_AGG_MIN:
        case SQL_AGG_MAX: {
            if (!s[16]) break;
            int c = d[16] ? value_cmp(a->arg, s, d) : 0;
            if (!d[16] || (a->func == SQL_AGG_MIN ? c < 0 : c > 0)) memcpy(d, s, 17);
            break;
        }
        default:
            break;
        }
    }
    return STO_OK;
}

static double pow10_of(int scale)
{
    double p = 1;
    for (int i = 0; i < scale; i++)
        p *= 10;
    return p;
}

/* Stores an integer sum as the result type (BIGINT or DECIMAL(18,s)). The
 * int128 accumulator is exact; the result is exact too whenever it fits the
 * int64 every BIGINT and DECIMAL value lives in (a DECIMAL is an overflow only
 * then, as for + and *: docs/sql.md), else a clean 22003. */
static sto_status put_int_sum(sto_type result, __int128 v, uint8_t *out)
{
    if (result.id == STO_TYPE_DOUBLE) {
        double d = (double)v;
        memcpy(out, &d, 8);
        return STO_OK;
    }
    if (v > INT64_MAX || v < INT64_MIN)
        return sto_error(STO_NUMERIC_VALUE_OUT_OF_RANGE, result.id == STO_TYPE_DECIMAL
                                                             ? "numeric field overflow"
                                                             : "bigint out of range");
    int64_t x = (int64_t)v;
    memcpy(out, &x, 8);
    return STO_OK;
}

/* The final value of aggregate a from its state into slot `out`; *null
 * when the aggregate is NULL. */
static sto_status final_value(const eng_agg_fn *a, const uint8_t *s, uint8_t *out, uint8_t *null)
{
    *null = 0;
    memset(out, 0, CG_ROW_SLOT);
    bool dbl = a->arg.id == STO_TYPE_DOUBLE;
    if (cg_agg_is_distinct_set(a->func, a->distinct)) {
        int64_t n = load_i64(s + DSET_COUNT_AT); /* no miss on the set for COUNT */
        if (a->func == SQL_AGG_COUNT) {
            memcpy(out, &n, 8);
            return STO_OK;
        }
        dset *set;
        memcpy(&set, s, sizeof(set));
        if (!n) {
            *null = 1;
            return STO_OK;
        }
        __int128 isum = 0;
        double dsum = 0;
        for (uint64_t i = 0; i < set->cap; i++) {
            if (!set->used[i]) continue;
            const uint8_t *v = set->vals + i * CG_ROW_SLOT;
            if (dbl)
                dsum += slot_double(v);
            else
                isum += slot_int(a->arg, v);
        }
        if (a->func == SQL_AGG_SUM) {
            if (dbl)
                memcpy(out, &dsum, 8);
            else
                return put_int_sum(a->result, isum, out);
            return STO_OK;
        }
        double scale = a->arg.id == STO_TYPE_DECIMAL ? pow10_of(a->arg.scale) : 1;
        double avg = dbl ? dsum / (double)n : (double)((long double)isum / n) / scale;
        memcpy(out, &avg, 8);
        return STO_OK;
    }
    switch (a->func) {
    case SQL_AGG_COUNT_STAR:
    case SQL_AGG_COUNT:
        memcpy(out, s, 8);
        return STO_OK;
    case SQL_AGG_SUM:
        if (!s[dbl ? 8 : 16]) {
            *null = 1;
            return STO_OK;
        }
        if (dbl) {
            memcpy(out, s, 8);
            return STO_OK;
        }
        return put_int_sum(a->result, load_i128(s), out);
    case SQL_AGG_AVG: {
        int64_t n = load_i64(s + (dbl ? 8 : 16));
        if (!n) {
            *null = 1;
            return STO_OK;
        }
        double scale = a->arg.id == STO_TYPE_DECIMAL ? pow10_of(a->arg.scale) : 1;
        double avg = dbl ? slot_double(s) / (double)n
                         : (double)((long double)load_i128(s) / n / (long double)scale);
        memcpy(out, &avg, 8);
        return STO_OK;
    }
    case SQL_AGG_MIN:
    case SQL_AGG_MAX:
        if (!s[16])
            *null = 1;
        else
            memcpy(out, s, CG_ROW_SLOT);
        return STO_OK;
    default:
        return sto_error(STO_INTERNAL_ERROR, "unknown aggregate %d", (int)a->func);
    }
}

/* Writes the output row of one group (key row + states) at row, a row of
 * out->row_bytes bytes. */
static sto_status emit_at(const eng_agg_layout *l, const uint8_t *key, const uint8_t *states,
                          uint8_t *row, uint32_t row_bytes)
{
    uint32_t ncols = l->nkeys + l->naggs;
    memset(row, 0, row_bytes);
    for (uint32_t i = 0; i < l->nkeys; i++) {
        memcpy(row + i * CG_ROW_SLOT, key + i * CG_ROW_SLOT, CG_ROW_SLOT);
        row[cg_row_null_offset(ncols, i)] = key[cg_row_null_offset(l->nkeys, i)];
    }
    for (uint32_t k = 0; k < l->naggs; k++) {
        uint32_t slot = l->nkeys + k;
        STO_TRY(final_value(&l->aggs[k], states + l->aggs[k].offset, row + slot * CG_ROW_SLOT,
                            &row[cg_row_null_offset(ncols, slot)]));
    }
    return STO_OK;
}

/* 1 when the row just written at the end of the output is kept, 0 when it
 * fails the HAVING conjuncts: the next row is written over it. */
static inline uint64_t kept(const eng_agg_layout *l, const uint8_t *row)
{
    return !l->nhaving || eng_agg_having_pass(l, row);
}

/* Appends the output row of one group. */
static sto_status emit(const eng_agg_layout *l, const uint8_t *key, const uint8_t *states,
                       eng_rows_sink *out)
{
    uint8_t *row;
    cg_error err = cg_error_none();
    if (eng_rt_rows_append(&err, out, &row)) return err.detail;
    return emit_at(l, key, states, row, out->row_bytes);
}

/* The merge's table: the hash beside the entry pointer, so a probe reads
 * one slot and touches an entry only on equal hashes. */
typedef struct merge_slot {
    uint64_t hash;
    uint8_t *entry;
} merge_slot;

/* Entries the merge folds in one table: twice as many 16-byte slots are
 * 128 KB, which stay in L2 while the entries stream past. */
#define MERGE_SUB_ENTRIES 4096u

/* A partition whose groups' table would take at most this many bytes is
 * folded in one table of entries in place (fold_direct). */
#define MERGE_DIRECT_BYTES ((size_t)512 << 10)

/* How many pairs ahead the fold fetches entries. */
#define FOLD_AHEAD 8

static uint64_t pow2_at_least(uint64_t n)
{
    uint64_t c = 16;
    while (c < n)
        c *= 2;
    return c;
}

/* Walks the entries of partition `part` in one worker: its spilled ones,
 * then its table's (the partition's range of slots, and on past it while
 * the slots are taken: linear probing may have pushed entries there). */
typedef struct part_walk {
    const eng_agg_local *a;
    unsigned part;
    eng_agg_block *b;
    uint8_t *e;          /* the next in block b */
    eng_agg_block *runs; /* the finished runs' blocks, walked after b's */
    uint64_t slot, end;  /* the next slot; the range ends at end */
} part_walk;

/* runs: the worker's finished runs are merged (ENG_AGG_RUNS_MERGE): the
 * walk takes those of the partition after the spilled entries. */
static void walk_start(part_walk *w, const eng_agg_local *a, unsigned part, bool runs)
{
    w->a = a;
    w->part = part;
    w->b = a->parts[part].blocks;
    w->runs = runs ? a->runs.parts[part].blocks : NULL;
    if (!w->b) {
        w->b = w->runs;
        w->runs = NULL;
    }
    w->e = w->b ? block_first(w->b) : NULL;
    uint64_t range = table_slots(a) >> ENG_AGG_PARTS_LOG;
    w->slot = part * range;
    w->end = w->slot + range;
}

static uint8_t *walk_next(part_walk *w)
{
    const eng_agg_layout *l = w->a->layout;
    while (w->b) {
        if (w->e < block_end(w->b)) {
            uint8_t *e = w->e;
            w->e += l->entry_bytes;
            return e;
        }
        w->b = w->b->next;
        if (!w->b) {
            w->b = w->runs;
            w->runs = NULL;
        }
        w->e = w->b ? block_first(w->b) : NULL;
    }
    /* the table is at most half full: the run past the range ends */
    while (w->a->table) {
        uint8_t *e = table_entry(w->a, w->slot & w->a->mask);
        bool past = w->slot >= w->end;
        w->slot++;
        if (!e[ENG_AGG_ENTRY_USED]) {
            if (past) return NULL;
            continue;
        }
        if (hash_part(entry_hash(e)) == w->part) return e;
    }
    return NULL;
}

/* The merge of a partition with more entries than groups, in two steps.
 * A partition of q18's orders holds ~47K entries: one table for all of
 * them would be 2 MB, zeroed, and every fold a cache miss. So the entries
 * are first split by the hash bits below the partition's into
 * sub-partitions of about MERGE_SUB_ENTRIES (hist: the entries per
 * ENG_AGG_SUB_LOG bits), their (hash, entry) pairs written out in one
 * pass, and each sub-partition is folded in one small table that is
 * cleared and used again. A fold reads the hash from the pair; an entry's
 * key and states are read only when its hash was met before (the entry is
 * fetched ahead all the same). *groups: the groups. */
static sto_status fold_part(const eng_agg_layout *l, eng_agg_arena *sets, const eng_rt_mem *m,
                            eng_agg_local *const *locals, unsigned n, unsigned part,
                            const uint64_t *hist, uint64_t total, bool runs, uint64_t *groups)
{
    unsigned sub_log = 0;
    while (sub_log < ENG_AGG_SUB_LOG && (total >> sub_log) > MERGE_SUB_ENTRIES)
        sub_log++;
    uint64_t nsub = (uint64_t)1 << sub_log;
    unsigned shift = ENG_AGG_SUB_LOG - sub_log; /* hist bucket -> sub-partition */
    /* start[s]: where sub-partition s's pairs go next */
    uint64_t start[(1u << ENG_AGG_SUB_LOG) + 1] = {0};
    for (unsigned c = 0; c < (1u << ENG_AGG_SUB_LOG); c++)
        start[(c >> shift) + 1] += hist[c];
    uint64_t most = 0;
    for (uint64_t s = 0; s < nsub; s++) {
        if (start[s + 1] > most) most = start[s + 1];
        start[s + 1] += start[s];
    }
    merge_slot *pairs = NULL, *slots = NULL;
    uint64_t slots_cap = pow2_at_least(most * 2);
    STO_TRY(eng_rt_alloc(m, total * sizeof(*pairs), (void **)&pairs));
    sto_status st = eng_rt_alloc(m, slots_cap * sizeof(*slots), (void **)&slots);
    for (unsigned i = 0; !st && i < n; i++) {
        part_walk w;
        walk_start(&w, locals[i], part, runs);
        for (uint8_t *e; (e = walk_next(&w));) {
            uint64_t h = entry_hash(e);
            uint64_t s = sub_log ? (h << ENG_AGG_PARTS_LOG) >> (64 - sub_log) : 0;
            pairs[start[s]++] = (merge_slot){h, e};
        }
    }
    /* now sub-partition s's pairs are [start[s - 1], start[s]) */
    for (uint64_t s = 0, from = 0; !st && s < nsub; from = start[s], s++) {
        uint64_t count = start[s] - from;
        if (!count) continue;
        uint64_t cap = pow2_at_least(count * 2), mask = cap - 1;
        memset(slots, 0, cap * sizeof(*slots));
        for (uint64_t j = from; !st && j < start[s]; j++) {
            /* the pairs come in hash order, their entries from anywhere:
             * an entry of a group met before is read, so fetch it early */
            if (j + FOLD_AHEAD < start[s]) __builtin_prefetch(pairs[j + FOLD_AHEAD].entry);
            uint64_t h = pairs[j].hash;
            uint8_t *e = pairs[j].entry;
            for (uint64_t k = h & mask;; k = (k + 1) & mask) {
                uint8_t *d = slots[k].entry;
                if (!d) {
                    slots[k] = pairs[j];
                    ++*groups;
                    break;
                }
                if (slots[k].hash == h && keys_equal(l, entry_key(d), entry_key(e))) {
                    e[ENTRY_FOLDED] = 1;
                    st = merge_states(l, sets, m, entry_states(l, d), entry_states(l, e));
                    break;
                }
            }
        }
    }
    eng_rt_free(m, slots, slots_cap * sizeof(*slots));
    eng_rt_free(m, pairs, total * sizeof(*pairs));
    return st;
}

/* A merge table of entries in place. */
typedef struct merge_table {
    uint8_t *t;
    uint64_t slots, count;
} merge_table;

static inline uint8_t *merge_entry(const eng_agg_layout *l, const merge_table *mt, uint64_t i)
{
    return mt->t + i * l->entry_bytes;
}

/* The slot of e's group in mt: the group's entry, or the free slot for it. */
static uint8_t *merge_probe(const eng_agg_layout *l, const merge_table *mt, uint8_t *e)
{
    uint64_t h = entry_hash(e), mask = mt->slots - 1;
    return entries_probe(l, mt->t, mask, h & mask, h, entry_key(e));
}

static sto_status merge_table_resize(const eng_agg_layout *l, const eng_rt_mem *m, merge_table *mt,
                                     uint64_t slots)
{
    merge_table n = {NULL, slots, mt->count};
    STO_TRY(eng_rt_alloc_zero(m, slots * l->entry_bytes, (void **)&n.t));
    for (uint64_t i = 0; i < mt->slots; i++) {
        uint8_t *e = merge_entry(l, mt, i);
        if (e[ENG_AGG_ENTRY_USED]) memcpy(merge_probe(l, &n, e), e, l->entry_bytes);
    }
    eng_rt_free(m, mt->t, mt->slots * l->entry_bytes);
    *mt = n;
    return STO_OK;
}

/* The merge of a partition whose groups fit the L2 cache (`guess`: about
 * how many): every entry, read in memory order, is folded into its
 * group's entry in one table of entries in place (which grows when the
 * guess was low), and the groups are emitted from there. Not for DISTINCT
 * sets: the table's copy of an entry would share the entry's sets. */
static sto_status fold_direct(const eng_agg_layout *l, const eng_rt_mem *m,
                              eng_agg_local *const *locals, unsigned n, unsigned part,
                              uint64_t guess, bool runs, eng_rows_sink *out)
{
    merge_table mt = {NULL, pow2_at_least(guess * 2), 0};
    STO_TRY(eng_rt_alloc_zero(m, mt.slots * l->entry_bytes, (void **)&mt.t));
    sto_status st = STO_OK;
    for (unsigned i = 0; !st && i < n; i++) {
        part_walk w;
        walk_start(&w, locals[i], part, runs);
        for (uint8_t *e; !st && (e = walk_next(&w));) {
            if ((mt.count + 1) * 2 > mt.slots) {
                st = merge_table_resize(l, m, &mt, mt.slots * 2);
                if (st) break;
            }
            uint8_t *d = merge_probe(l, &mt, e);
            if (d[ENG_AGG_ENTRY_USED]) {
                st = merge_states(l, NULL, m, entry_states(l, d), entry_states(l, e));
            } else {
                memcpy(d, e, l->entry_bytes);
                d[ENG_AGG_ENTRY_USED] = 1;
                mt.count++;
            }
        }
    }
    if (!st) st = eng_rows_sink_reserve(out, mt.count);
    /* Room for every group is reserved: the rows are written in place. */
    uint32_t rb = out->row_bytes;
    for (uint64_t i = 0; !st && i < mt.slots; i++) {
        uint8_t *e = merge_entry(l, &mt, i);
        if (!e[ENG_AGG_ENTRY_USED]) continue;
        uint8_t *row = out->data + out->rows * rb;
        st = emit_at(l, entry_key(e), entry_states(l, e), row, rb);
        out->rows += kept(l, row);
    }
    eng_rt_free(m, mt.t, mt.slots * l->entry_bytes);
    return st;
}

/* The merge of the partition's entries in the tables and spills (and the
 * finished runs, when `runs`). */
static sto_status merge_hashed(eng_agg_local *const *locals, unsigned n, unsigned part, bool runs,
                               eng_rows_sink *out)
{
    const eng_agg_layout *l = locals[0]->layout;
    /* The merge allocates on the finalizing thread: no cache. */
    eng_rt_mem m = {locals[0]->mem.mem, NULL, -1};
    /* the histogram of the entries by the bits below the partition's:
     * counted by the workers as they spilled, here for their tables */
    uint64_t hist[1u << ENG_AGG_SUB_LOG] = {0};
    uint64_t total = 0;
    unsigned filled = 0;
    bool spilled = false;
    for (unsigned i = 0; i < n; i++) {
        const eng_agg_part *p = &locals[i]->parts[part];
        const eng_agg_part *r = &locals[i]->runs.parts[part];
        uint64_t before = total;
        for (unsigned c = 0; c < (1u << ENG_AGG_SUB_LOG); c++)
            hist[c] += p->sub_count[c] + (runs ? r->sub_count[c] : 0);
        total += p->entries + (runs ? r->entries : 0);
        part_walk w;
        walk_start(&w, locals[i], part, runs);
        w.b = w.runs = NULL; /* the spilled ones and the runs are counted */
        for (uint8_t *e; (e = walk_next(&w)); total++)
            hist[hash_sub(entry_hash(e))]++;
        filled += total > before;
        spilled |= total > before && (locals[i]->spills || runs);
    }
    if (!total) return STO_OK;
    uint64_t groups = total;
    if ((filled > 1 || spilled) && !l->distinct_sets) {
        /* the groups of the partition: those the workers' sketches saw
         * (all they spilled) plus those in their tables, spread evenly */
        uint8_t regs[1u << ENG_AGG_HLL_LOG] = {0};
        uint64_t in_tables = 0;
        for (unsigned i = 0; i < n; i++) {
            for (unsigned r = 0; r < (1u << ENG_AGG_HLL_LOG); r++)
                if (locals[i]->hll[r] > regs[r]) regs[r] = locals[i]->hll[r];
            in_tables += locals[i]->count;
        }
        uint64_t guess = (uint64_t)(hll_estimate(regs) * 1.1 + (double)in_tables) / ENG_AGG_PARTS;
        if (guess > total) guess = total;
        if (guess * 2 * l->entry_bytes <= MERGE_DIRECT_BYTES)
            return fold_direct(l, &m, locals, n, part, guess, runs, out);
    }
    /* the sets the fold grows: read until the rows are out */
    eng_agg_arena sets = {0};
    sto_status st = STO_OK;
    if (filled > 1 || spilled) {
        groups = 0;
        st = fold_part(l, &sets, &m, locals, n, part, hist, total, runs, &groups);
    }
    if (!st) st = eng_rows_sink_reserve(out, groups);
    /* Room for every group is reserved: the rows are written in place. */
    uint32_t rb = out->row_bytes;
    for (unsigned i = 0; !st && i < n; i++) {
        part_walk w;
        walk_start(&w, locals[i], part, runs);
        for (uint8_t *e; !st && (e = walk_next(&w));) {
            if (e[ENTRY_FOLDED]) continue;
            uint8_t *row = out->data + out->rows * rb;
            st = emit_at(l, entry_key(e), entry_states(l, e), row, rb);
            out->rows += !st && kept(l, row);
        }
    }
    arena_free(&sets, &m);
    return st;
}

sto_status eng_agg_merge_part(eng_agg_local *const *locals, unsigned n, unsigned part,
                              eng_rows_sink *out)
{
    if (!n) return STO_OK;
    const eng_agg_layout *l = locals[0]->layout;
    /* every partition's merge checks the runs alike: nothing is shared */
    eng_agg_runs_mode runs = eng_agg_runs_check(locals, n);
    STO_TRY(merge_hashed(locals, n, part, runs == ENG_AGG_RUNS_MERGE, out));
    if (runs != ENG_AGG_RUNS_GROUPS) return STO_OK;
    /* each finished run is its group's only entry */
    uint64_t rows = 0;
    for (unsigned i = 0; i < n; i++)
        rows += locals[i]->runs.parts[part].entries;
    STO_TRY(eng_rows_sink_reserve(out, rows));
    uint32_t rb = out->row_bytes, eb = l->entry_bytes;
    for (unsigned i = 0; i < n; i++)
        for (eng_agg_block *b = locals[i]->runs.parts[part].blocks; b; b = b->next)
            for (uint8_t *e = block_first(b); e < block_end(b); e += eb) {
                uint8_t *row = out->data + out->rows * rb;
                STO_TRY(emit_at(l, entry_key(e), entry_states(l, e), row, rb));
                out->rows += kept(l, row);
            }
    return STO_OK;
}

sto_status eng_agg_empty_row(const eng_agg_layout *l, eng_rows_sink *out)
{
    uint8_t *zero = calloc(1, l->key_bytes + l->state_bytes + 16);
    if (!zero) return sto_error_oom();
    sto_status st = emit(l, zero, zero + l->key_bytes, out);
    free(zero);
    return st;
}
