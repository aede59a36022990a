/*
 * gen_table.c — the in-memory table sink (see gen_table.h).
 */
#include "tpch/gen_table.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "storage/string_dedup.h"
#include "tpch/text.h"

sto_status tpch_table_schema(tpch_table_id t, sto_schema **out)
{
    const tpch_table_info *info = tpch_table_info_get(t);
    const char *names[32];
    sto_type types[32];
    bool not_null[32];
    for (int c = 0; c < info->column_count; c++) {
        names[c] = info->columns[c].name;
        types[c] = info->columns[c].type;
        /* schema.sql leaves only the nation and region comments nullable */
        not_null[c] = !((t == TPCH_NATION || t == TPCH_REGION) && c == info->column_count - 1);
    }
    return sto_schema_new((uint32_t)info->column_count, names, types, not_null, out);
}

/* Can a column of type `have` hold the generator's values of column `want`? */
static bool column_fits(sto_type have, const tpch_column *want)
{
    switch (want->type.id) {
    case STO_TYPE_INTEGER:
        return have.id == STO_TYPE_INTEGER || have.id == STO_TYPE_BIGINT;
    case STO_TYPE_DECIMAL:
        return have.id == STO_TYPE_DECIMAL && have.scale == 2;
    case STO_TYPE_DATE:
        return have.id == STO_TYPE_DATE;
    default:
        return have.id == STO_TYPE_CHAR || have.id == STO_TYPE_VARCHAR;
    }
}

static sto_status check_schema(const sto_table *t, tpch_table_id id)
{
    const tpch_table_info *info = tpch_table_info_get(id);
    const sto_schema *s = sto_table_schema(t);
    if ((int)s->ncols != info->column_count)
        return sto_error(STO_DATATYPE_MISMATCH, "table for %s has %u columns, TPC-H has %d",
                         info->name, s->ncols, info->column_count);
    for (int c = 0; c < info->column_count; c++)
        if (!column_fits(s->cols[c].type, &info->columns[c]))
            return sto_error(STO_DATATYPE_MISMATCH, "column %d (%s) of %s cannot hold %s", c + 1,
                             s->cols[c].name, info->name, info->columns[c].name);
    return NULL;
}

/* --- writing rows into chunks ---------------------------------------------------- */

/* The widest TPC-H table (lineitem) has 16 columns. */
#define MAX_COLUMNS 16

#define COUNT_OF(a) (int)(sizeof(a) / sizeof((a)[0]))

/* Per column of a target table, decided once per call: how a value is stored. */
typedef enum write_kind { WRITE_I32, WRITE_I64, WRITE_STR } write_kind;

/* What table_row does with a column's value: the kind and whether the
 * value is counted in a range bitmap (tpch_column_range) or hashed. */
typedef enum write_op { OP_I32, OP_I32_RANGED, OP_I64, OP_I64_RANGED, OP_STR } write_op;

typedef struct column_plan {
    write_kind kind;
    write_op op;
    sto_type type;
    /* integers of a small known range (tpch_column_range) are counted in a
     * bitmap of the range and hashed once per distinct value per chunk */
    bool ranged;
    int64_t lo;
    uint64_t span;  /* hi - lo + 1 */
    bool is_char;   /* CHAR drops trailing blanks */
    uint32_t bound; /* strings of up to this many bytes fit without a check */
} column_plan;

/* Tables whose column ops match the generator's own schema (schema.sql,
 * tpch_table_schema) get a row writer with the column loop unrolled and
 * each op fixed at compile time: at SF 1 the per-column dispatch of the
 * general loop was a good part of the sink's own time. */
typedef enum row_shape {
    SHAPE_GENERAL,
    SHAPE_PART,
    SHAPE_PARTSUPP,
    SHAPE_CUSTOMER,
    SHAPE_ORDERS,
    SHAPE_LINEITEM
} row_shape;

typedef struct table_plan {
    int ncols;
    bool nullable; /* some column has a validity bitmap to set */
    row_shape shape;
    column_plan col[MAX_COLUMNS];
} table_plan;

static const write_op part_ops[] = {OP_I32,        OP_STR, OP_STR, OP_STR, OP_STR,
                                    OP_I32_RANGED, OP_STR, OP_I64, OP_STR};
static const write_op partsupp_ops[] = {OP_I32, OP_I32, OP_I32_RANGED, OP_I64, OP_STR};
static const write_op customer_ops[] = {OP_I32, OP_STR, OP_STR, OP_I32_RANGED,
                                        OP_STR, OP_I64, OP_STR, OP_STR};
static const write_op orders_ops[] = {OP_I32, OP_I32, OP_STR,        OP_I64, OP_I32_RANGED,
                                      OP_STR, OP_STR, OP_I32_RANGED, OP_STR};
static const write_op lineitem_ops[] = {OP_I32,        OP_I32, OP_I32,        OP_I32_RANGED,
                                        OP_I64_RANGED, OP_I64, OP_I64_RANGED, OP_I64_RANGED,
                                        OP_STR,        OP_STR, OP_I32_RANGED, OP_I32_RANGED,
                                        OP_I32_RANGED, OP_STR, OP_STR,        OP_STR};

static const struct {
    tpch_table_id table;
    row_shape shape;
    const write_op *ops;
    int count;
} shapes[] = {
    {TPCH_PART, SHAPE_PART, part_ops, COUNT_OF(part_ops)},
    {TPCH_PARTSUPP, SHAPE_PARTSUPP, partsupp_ops, COUNT_OF(partsupp_ops)},
    {TPCH_CUSTOMER, SHAPE_CUSTOMER, customer_ops, COUNT_OF(customer_ops)},
    {TPCH_ORDERS, SHAPE_ORDERS, orders_ops, COUNT_OF(orders_ops)},
    {TPCH_LINEITEM, SHAPE_LINEITEM, lineitem_ops, COUNT_OF(lineitem_ops)},
};

/* The unrolled writer for table id's plan, or SHAPE_GENERAL. */
static row_shape shape_of(tpch_table_id id, const table_plan *p)
{
    if (p->nullable) return SHAPE_GENERAL;
    for (int k = 0; k < COUNT_OF(shapes); k++) {
        if (shapes[k].table != id || shapes[k].count != p->ncols) continue;
        for (int i = 0; i < p->ncols; i++)
            if (p->col[i].op != shapes[k].ops[i]) return SHAPE_GENERAL;
        return shapes[k].shape;
    }
    return SHAPE_GENERAL;
}

static void plan_table(tpch_table_id id, const sto_table *t, table_plan *p)
{
    const sto_schema *s = sto_table_schema(t);
    p->ncols = (int)s->ncols;
    p->nullable = false;
    for (uint32_t i = 0; i < s->ncols; i++) {
        column_plan *c = &p->col[i];
        p->nullable = p->nullable || !s->cols[i].not_null;
        c->type = s->cols[i].type;
        c->is_char = c->type.id == STO_TYPE_CHAR;
        c->bound = c->type.length ? c->type.length : UINT32_MAX;
        if (c->type.id == STO_TYPE_INTEGER || c->type.id == STO_TYPE_DATE)
            c->kind = WRITE_I32;
        else if (c->type.id == STO_TYPE_BIGINT || c->type.id == STO_TYPE_DECIMAL)
            c->kind = WRITE_I64;
        else
            c->kind = WRITE_STR;
        int64_t lo, hi;
        c->ranged = c->kind != WRITE_STR && tpch_column_range(id, (int)i, &lo, &hi) && hi >= lo &&
                    hi - lo < (1 << 16);
        c->lo = c->ranged ? lo : 0;
        c->span = c->ranged ? (uint64_t)(hi - lo + 1) : 0;
        c->op = c->kind == WRITE_STR   ? OP_STR
                : c->kind == WRITE_I32 ? (c->ranged ? OP_I32_RANGED : OP_I32)
                                       : (c->ranged ? OP_I64_RANGED : OP_I64);
    }
    p->shape = shape_of(id, p);
}

/* A listed string (tpch_value.listed) already stored in the chunk being
 * filled: later rows share its bytes and skip the sketch, which counts a
 * value once however often it is added. */
#define LIST_SLOTS 256 /* > the longest list; entries are TPCH_STR_SLACK apart */

typedef struct list_slot {
    const char *src;
    uint32_t epoch;
    sto_str stored;
} list_slot;

/* One worker's chunk being filled for one table, with the statistics that
 * sealing would compute gathered as the rows arrive: min/max here, the
 * distinct-value sketches straight in the chunk's stats. */
typedef struct table_writer {
    const table_plan *plan;
    sto_chunk *chunk;      /* NULL: none open */
    int64_t expected_left; /* rows this task is still expected to write */
    uint32_t backed;       /* rows of the open chunk backed by populate_rows */
    uint32_t to_back;      /* rows of it expected to be written */
    uint32_t epoch;        /* tells this chunk's list slots from older ones */
    const tpch_gen *text;  /* comments point into its pool instead of being copied; NULL: copy */
    bool keeps_text;       /* the open chunk holds a reference to the pool */
    const char *heap_lo, *heap_hi; /* heap bytes of the open chunk backed by back_heap */
    int64_t min[MAX_COLUMNS], max[MAX_COLUMNS];
    /* hashed columns: the previous row's value, already counted (a
     * lineitem's order key repeats for its lines, a partsupp's part key
     * for its four suppliers); INT64_MIN, which no column holds, at first */
    int64_t last[MAX_COLUMNS];
    uint64_t *seen[MAX_COLUMNS];   /* ranged columns: values present in the chunk */
    list_slot *slots[MAX_COLUMNS]; /* allocated at a column's first listed value */
    /* long strings that are neither listed nor comments (o_clerk, names):
     * repeats within the chunk stored once; allocated at the column's first
     * such string, NULL when memory is short (every string copied) */
    sto_dedup *dedup[MAX_COLUMNS];
} table_writer;

typedef struct chunk_list {
    sto_chunk **items;
    size_t count, cap;
} chunk_list;

typedef struct task {
    unsigned tables; /* of one unit table */
    int64_t first, last;
    chunk_list out[TPCH_TABLE_COUNT];
} task;

typedef struct table_sink {
    tpch_sink base;
    sto_table *const *tables;
    task *task;
    table_writer w[TPCH_TABLE_COUNT];
} table_sink;

static sto_status push_chunk(chunk_list *l, sto_chunk *c)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sto_chunk **items = realloc(l->items, cap * sizeof(*items));
        if (!items) return sto_error_oom();
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = c;
    return NULL;
}

/* Seals the open chunk with the statistics gathered while filling it: the
 * same numbers sto_chunk_seal would compute, without a second pass. */
static void finish_chunk(table_writer *w)
{
    sto_chunk *c = w->chunk;
    if (!c) return;
    for (int i = 0; i < w->plan->ncols; i++) {
        sto_column_stats *s = &c->stats[i];
        const column_plan *p = &w->plan->col[i];
        if (p->ranged) {
            /* each value present, hashed once, and the ends of the range */
            for (uint64_t k = 0; k < (p->span + 63) / 64; k++) {
                for (uint64_t bits = w->seen[i][k]; bits; bits &= bits - 1) {
                    int64_t x = p->lo + (int64_t)(k * 64 + (uint64_t)__builtin_ctzll(bits));
                    if (x < w->min[i]) w->min[i] = x;
                    if (x > w->max[i]) w->max[i] = x;
                    sto_hll_add(&s->hll, sto_hash_u64((uint64_t)x));
                }
            }
        }
        s->rows = c->rows;
        s->null_count = 0;
        s->has_minmax = p->kind != WRITE_STR && c->rows > 0;
        if (s->has_minmax) {
            s->min.i = w->min[i];
            s->max.i = w->max[i];
        }
        s->distinct = sto_hll_estimate(&s->hll);
        if (s->distinct > c->rows) s->distinct = c->rows;
    }
    c->sealed = true;
    w->chunk = NULL;
}

/* Rows backed per populate_rows call: a window of every column small enough
 * (under 600 KiB for lineitem) that the lines the kernel just zeroed are
 * still in cache when the rows are written, instead of being read back
 * from memory as a whole chunk's worth would be. */
#define BACK_ROWS 4096

/* Backs rows [from, to) of every column with memory now, one call per
 * column rather than one page fault per 4 KiB as rows arrive; the filling
 * thread does it, so the pages land on its NUMA node. Best effort: where
 * the kernel cannot (before Linux 5.14), rows fault in as usual. */
static void populate_rows(sto_chunk *c, uint32_t from, uint32_t to)
{
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = 4096;
    for (uint32_t i = 0; i < c->schema->ncols && to > from; i++) {
        size_t width = sto_type_width(c->schema->cols[i].type.id);
        uintptr_t start = (uintptr_t)c->cols[i] + (uintptr_t)from * width;
        uintptr_t end = (uintptr_t)c->cols[i] + (uintptr_t)to * width;
        start &= ~(page - 1);
        end = (end + page - 1) & ~(page - 1);
        if (madvise((void *)start, end - start, MADV_POPULATE_WRITE) != 0) return;
    }
#else
    (void)c;
    (void)from;
    (void)to;
#endif
}

static sto_status open_chunk(table_sink *s, tpch_table_id t)
{
    table_writer *w = &s->w[t];
    finish_chunk(w);
    sto_chunk *c;
    STO_TRY(sto_table_new_chunk(s->tables[t], STO_CHUNK_ROWS, &c));
    sto_status st = push_chunk(&s->task->out[t], c);
    if (st) {
        sto_chunk_free(c);
        return st;
    }
    /* a full chunk of comments takes megabytes: start with big heap blocks */
    c->heap.next_size = (size_t)1 << 20;
    w->backed = w->to_back = 0;
    if (w->expected_left > 0) {
        w->to_back = w->expected_left < c->capacity ? (uint32_t)w->expected_left : c->capacity;
        w->expected_left -= w->to_back;
    }
    for (int i = 0; i < w->plan->ncols; i++) {
        w->min[i] = INT64_MAX;
        w->max[i] = INT64_MIN;
        w->last[i] = INT64_MIN;
        if (w->seen[i]) memset(w->seen[i], 0, (w->plan->col[i].span + 63) / 64 * 8);
        if (w->dedup[i]) sto_dedup_reset(w->dedup[i]);
    }
    w->epoch++;
    w->keeps_text = false;
    w->heap_lo = w->heap_hi = NULL;
    w->chunk = c;
    return NULL;
}

/* A string reference for `len` bytes at `s` (TPCH_STR_SLACK readable) owned
 * by chunk c: short ones inline from two fixed loads, long ones copied into
 * the chunk's heap with fixed-size moves where they fit. */
static inline bool store_str(sto_chunk *c, const char *s, uint32_t len, sto_str *out)
{
    out->len = len;
    if (len <= STO_STR_INLINE_MAX) {
        uint64_t w0, w1;
        memcpy(&w0, s, 8);
        memcpy(&w1, s + 8, 8);
        w0 &= sto_low_bytes_mask(len);
        w1 &= sto_low_bytes_mask(len > 8 ? len - 8 : 0);
        memcpy(out->prefix, &w0, 4);
        memcpy(out->u.rest, (const char *)&w0 + 4, 4);
        memcpy(out->u.rest + 4, &w1, 4);
        return true;
    }
    char *d = sto_heap_alloc(&c->heap, len);
    if (!d) return false;
    if (len <= 16) {
        memcpy(d, s, 8);
        memcpy(d + len - 8, s + len - 8, 8);
    } else if (len <= 32) {
        memcpy(d, s, 16);
        memcpy(d + len - 16, s + len - 16, 16);
    } else if (len <= 64) { /* most orders comments */
        memcpy(d, s, 32);
        memcpy(d + len - 32, s + len - 32, 32);
    } else {
        memcpy(d, s, len);
    }
    memcpy(out->prefix, d, 4);
    out->u.ptr = d;
    return true;
}

/* A reference to `len` bytes at `s` in the generator's text pool, which
 * the open chunk keeps alive from its first such string on; false when the
 * chunk cannot keep it (the caller copies instead). */
static bool point_at_pool(table_writer *w, const char *s, uint32_t len, sto_str *out)
{
    if (!w->keeps_text) {
        void *text = tpch_gen_text_retain(w->text);
        if (!sto_heap_keep(&w->chunk->heap, tpch_gen_text_release, text)) {
            tpch_gen_text_release(text);
            return false;
        }
        w->keeps_text = true;
    }
    out->len = len;
    memcpy(out->prefix, s, 4);
    out->u.ptr = s;
    return true;
}

/* Heap bytes backed per back_heap call: the same trade as BACK_ROWS. */
#define BACK_HEAP_BYTES (64 * 1024)

/* Backs the open chunk's string heap from the string just stored at d
 * onwards, a window at a time, as populate_rows does for the columns: a
 * full chunk's comments take megabytes of fresh heap, and a fault per
 * 4 KiB cost about a quarter more than one call per window (measured:
 * 300 MiB in 0.22-0.25 s faulting, 0.17-0.19 s populating). */
static inline void back_heap(table_writer *w, const char *d)
{
    if (d >= w->heap_lo && d < w->heap_hi) return;
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = 4096;
    const sto_string_heap *h = &w->chunk->heap;
    uintptr_t start = (uintptr_t)d & ~(page - 1);
    uintptr_t end = (uintptr_t)h->end < (uintptr_t)d + BACK_HEAP_BYTES
                        ? (uintptr_t)h->end
                        : (uintptr_t)d + BACK_HEAP_BYTES;
    end &= ~(page - 1); /* whole pages inside the block only */
    if (end > start) madvise((void *)start, end - start, MADV_POPULATE_WRITE);
    w->heap_lo = d;
    w->heap_hi = end > (uintptr_t)d ? (const char *)end : d + 1;
#else
    (void)w;
    (void)d;
#endif
}

/* Column i's table of stored long strings, made at its first use; NULL
 * when memory is short. */
static sto_dedup *writer_dedup(table_writer *w, int i)
{
    if (w->dedup[i]) return w->dedup[i];
    sto_dedup *d = malloc(sizeof(*d));
    if (!d) return NULL;
    if (!sto_dedup_init(d)) {
        free(d);
        return NULL;
    }
    return w->dedup[i] = d;
}

/* Stores string value v in column i of the open chunk and adds it to the
 * column's sketch (once per chunk for listed strings and repeated long
 * ones). */
static __attribute__((noinline)) sto_status put_string_new(table_writer *w, int i,
                                                           const tpch_value *v, sto_str *dst)
{
    sto_chunk *c = w->chunk;
    list_slot *slot = NULL;
    if (v->listed) {
        if (!w->slots[i]) w->slots[i] = calloc(LIST_SLOTS, sizeof(list_slot)); /* NULL: no reuse */
        if (w->slots[i]) {
            slot = &w->slots[i][((uintptr_t)v->s / TPCH_STR_SLACK) % LIST_SLOTS];
            if (slot->src == v->s && slot->epoch == w->epoch) {
                *dst = slot->stored;
                return NULL;
            }
        }
    }
    const column_plan *p = &w->plan->col[i];
    uint32_t len = v->len;
    if ((len > p->bound || (p->is_char && len > 0 && v->s[len - 1] == ' ')) &&
        !sto_string_fit(p->type, v->s, &len))
        return sto_error(STO_STRING_DATA_RIGHT_TRUNCATION, "value too long for column %s",
                         c->schema->cols[i].name);
    if (!v->listed && !v->pooled && len > STO_STR_INLINE_MAX) {
        sto_dedup *d = writer_dedup(w, i);
        if (d && !d->off) {
            bool found;
            const char *stored = sto_dedup_store(d, &c->heap, v->s, len, &found);
            if (!stored) return sto_error_oom();
            *dst = sto_str_make(stored, len);
            if (found) return NULL; /* its hash is in the sketch already */
            back_heap(w, stored);
            sto_hll_add(&c->stats[i].hll, sto_hash_str_bytes_sketch(v->s, len));
            return NULL;
        }
    }
    if (v->pooled && w->text && len > STO_STR_INLINE_MAX && point_at_pool(w, v->s, len, dst)) {
        /* stored as a reference into the pool */
    } else if (!store_str(c, v->s, len, dst)) {
        return sto_error_oom();
    } else if (len > STO_STR_INLINE_MAX) {
        back_heap(w, dst->u.ptr);
    }
    /* hashed from the source, which the copy has just loaded, rather than
     * from the copy: reading back bytes just stored by overlapping moves
     * stalls on store forwarding (v->s has TPCH_STR_SLACK readable bytes) */
    sto_hll_add(&c->stats[i].hll, sto_hash_str_bytes_sketch(v->s, len));
    if (slot) {
        slot->src = v->s;
        slot->epoch = w->epoch;
        slot->stored = *dst;
    }
    return NULL;
}

/* put_string_new, except that a listed string already stored in the chunk
 * (most of them: a handful of values per list) is reused right here. */
static inline sto_status put_string(table_writer *w, int i, const tpch_value *v, sto_str *dst)
{
    if (v->listed && w->slots[i]) {
        const list_slot *slot = &w->slots[i][((uintptr_t)v->s / TPCH_STR_SLACK) % LIST_SLOTS];
        if (slot->src == v->s && slot->epoch == w->epoch) {
            *dst = slot->stored;
            return NULL;
        }
    }
    return put_string_new(w, i, v, dst);
}

/* Adds integer x of a ranged column i to the chunk's statistics: a bit
 * of the range's bitmap, or (never for generated values) the general way. */
static inline void track_ranged(table_writer *w, int i, int64_t x, sto_hll *h)
{
    const column_plan *p = &w->plan->col[i];
    uint64_t k = (uint64_t)(x - p->lo);
    if (k < p->span) {
        w->seen[i][k / 64] |= (uint64_t)1 << (k % 64);
        return;
    }
    if (x < w->min[i]) w->min[i] = x;
    if (x > w->max[i]) w->max[i] = x;
    sto_hll_add(h, sto_hash_u64((uint64_t)x));
}

/* Adds integer x of another column i: min/max and the sketch, skipped when
 * it repeats the previous row's value (counted already). */
static inline void track_hashed(table_writer *w, int i, int64_t x, sto_hll *h)
{
    if (x == w->last[i]) return;
    w->last[i] = x;
    if (x < w->min[i]) w->min[i] = x;
    if (x > w->max[i]) w->max[i] = x;
    sto_hll_add(h, sto_hash_u64((uint64_t)x));
}

/* Writes column values v[0..n) into row `row` of chunk c, column i by
 * ops[i]. Inlined with a constant ops list (the table shapes) the loop
 * unrolls and every switch folds away. */
static inline __attribute__((always_inline)) sto_status write_columns(table_writer *w, sto_chunk *c,
                                                                      uint32_t row,
                                                                      const tpch_value *v,
                                                                      const write_op *ops, int n)
{
#pragma GCC unroll 16
    for (int i = 0; i < n; i++) {
        int64_t x = v[i].i;
        switch (ops[i]) {
        case OP_I32:
            ((int32_t *)c->cols[i])[row] = (int32_t)x;
            track_hashed(w, i, (int32_t)x, &c->stats[i].hll);
            break;
        case OP_I32_RANGED:
            ((int32_t *)c->cols[i])[row] = (int32_t)x;
            track_ranged(w, i, (int32_t)x, &c->stats[i].hll);
            break;
        case OP_I64:
            ((int64_t *)c->cols[i])[row] = x;
            track_hashed(w, i, x, &c->stats[i].hll);
            break;
        case OP_I64_RANGED:
            ((int64_t *)c->cols[i])[row] = x;
            track_ranged(w, i, x, &c->stats[i].hll);
            break;
        case OP_STR:
            STO_TRY(put_string(w, i, &v[i], &((sto_str *)c->cols[i])[row]));
            break;
        }
    }
    return NULL;
}

/* Any plan: ops read from the plan, validity bits set. */
static __attribute__((noinline)) sto_status write_general(table_writer *w, sto_chunk *c,
                                                          uint32_t row, const tpch_value *v)
{
    const table_plan *plan = w->plan;
    write_op ops[MAX_COLUMNS];
    for (int i = 0; i < plan->ncols; i++)
        ops[i] = plan->col[i].op;
    STO_TRY(write_columns(w, c, row, v, ops, plan->ncols));
    if (plan->nullable) /* generated values are never NULL */
        for (int i = 0; i < plan->ncols; i++)
            if (c->validity[i]) sto_bitmap_set(c->validity[i], row);
    return NULL;
}

static sto_status table_row(tpch_sink *self, tpch_table_id t, const tpch_value *v)
{
    table_sink *s = (table_sink *)self;
    table_writer *w = &s->w[t];
    if (!w->chunk || sto_chunk_full(w->chunk)) STO_TRY(open_chunk(s, t));
    sto_chunk *c = w->chunk;
    uint32_t row = c->rows;
    if (row == w->backed && row < w->to_back) {
        w->backed = row + BACK_ROWS < w->to_back ? row + BACK_ROWS : w->to_back;
        populate_rows(c, row, w->backed);
    }
    sto_status st;
    switch (w->plan->shape) {
    case SHAPE_LINEITEM:
        st = write_columns(w, c, row, v, lineitem_ops, COUNT_OF(lineitem_ops));
        break;
    case SHAPE_ORDERS:
        st = write_columns(w, c, row, v, orders_ops, COUNT_OF(orders_ops));
        break;
    case SHAPE_PARTSUPP:
        st = write_columns(w, c, row, v, partsupp_ops, COUNT_OF(partsupp_ops));
        break;
    case SHAPE_PART:
        st = write_columns(w, c, row, v, part_ops, COUNT_OF(part_ops));
        break;
    case SHAPE_CUSTOMER:
        st = write_columns(w, c, row, v, customer_ops, COUNT_OF(customer_ops));
        break;
    default:
        st = write_general(w, c, row, v);
        break;
    }
    if (st) return st;
    c->rows = row + 1;
    return NULL;
}

static void sink_free(table_sink *s)
{
    for (int t = 0; t < TPCH_TABLE_COUNT; t++)
        for (int i = 0; i < MAX_COLUMNS; i++) {
            free(s->w[t].slots[i]);
            free(s->w[t].seen[i]);
            if (s->w[t].dedup[i]) sto_dedup_free(s->w[t].dedup[i]);
            free(s->w[t].dedup[i]);
        }
}

/* Rows a table gets per unit: partsupp four, lineitem four on average
 * (one to seven, uniformly). */
static int64_t rows_per_unit(tpch_table_id t)
{
    return t == TPCH_PARTSUPP || t == TPCH_LINEITEM ? 4 : 1;
}

typedef struct job {
    const tpch_gen *g;
    sto_table *const *targets;
    table_plan plans[TPCH_TABLE_COUNT];
    task *tasks;
    int ntasks;
    int next;
    sto_status error;
    const atomic_int *cancel; /* NULL: not cancelable */
    bool point_text;          /* comments point into the text pool */
    pthread_mutex_t lock;
} job;

static void *job_worker(void *arg)
{
    job *j = arg;
    table_sink sink;
    memset(&sink, 0, sizeof(sink));
    sink.base.row = table_row;
    sink.tables = j->targets;
    bool ok = true;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        sink.w[t].plan = &j->plans[t];
        sink.w[t].text = j->point_text ? j->g : NULL;
        for (int i = 0; i < j->plans[t].ncols; i++) {
            const column_plan *p = &j->plans[t].col[i];
            if (!p->ranged) continue;
            sink.w[t].seen[i] = calloc((p->span + 63) / 64, sizeof(uint64_t));
            ok = ok && sink.w[t].seen[i];
        }
    }
    if (!ok) {
        pthread_mutex_lock(&j->lock);
        if (!j->error) j->error = sto_error_oom();
        pthread_mutex_unlock(&j->lock);
    }
    for (;;) {
        pthread_mutex_lock(&j->lock);
        if (!j->error && j->cancel && atomic_load_explicit(j->cancel, memory_order_relaxed))
            j->error = sto_error(STO_QUERY_CANCELED, "canceling statement due to user request");
        int i = j->error ? j->ntasks : j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->ntasks) break;
        task *k = &j->tasks[i];
        sink.task = k;
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            sink.w[t].expected_left = k->tables & TPCH_BIT(t)
                                          ? (k->last - k->first) * rows_per_unit((tpch_table_id)t)
                                          : 0;
        sto_status st = tpch_gen_rows(j->g, k->tables, k->first, k->last, &sink.base);
        /* a task's chunks are its own: seal the open ones before the next task */
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            finish_chunk(&sink.w[t]);
        if (st) {
            pthread_mutex_lock(&j->lock);
            if (!j->error)
                j->error = st;
            else
                sto_status_free(st);
            pthread_mutex_unlock(&j->lock);
        }
    }
    sink_free(&sink);
    return NULL;
}

/* Units per task: a few chunks of rows of the larger table, small enough
 * that the last tasks even out the threads' finishing times. */
static int64_t task_units(tpch_table_id unit_table)
{
    switch (unit_table) {
    case TPCH_PART:
        return 32768; /* a part chunk, 32768 rows, and two partsupp chunks */
    case TPCH_ORDERS:
        return 65536;
    default:
        return 32768;
    }
}

/* The unit tables in the order their tasks are handed out: the costliest
 * per unit first, so the cheap ones fill the gaps at the end. */
static const tpch_table_id unit_order[] = {TPCH_ORDERS,   TPCH_PART,   TPCH_CUSTOMER,
                                           TPCH_SUPPLIER, TPCH_NATION, TPCH_REGION};

/* The tasks for the tables of `tables`, one unit table after another. */
static sto_status plan_tasks(const tpch_gen *g, unsigned tables, int parts, int part, job *j)
{
    int64_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t u = 0; u < sizeof(unit_order) / sizeof(unit_order[0]); u++) {
            tpch_table_id unit = unit_order[u];
            unsigned mask = 0;
            for (int t = 0; t < TPCH_TABLE_COUNT; t++)
                if ((tables & TPCH_BIT(t)) &&
                    tpch_table_info_get((tpch_table_id)t)->unit_table == unit)
                    mask |= TPCH_BIT(t);
            if (!mask) continue;
            int64_t first = 0, last = tpch_gen_units(g, unit);
            if (unit != TPCH_NATION && unit != TPCH_REGION)
                tpch_split_units(last, parts, part, &first, &last);
            for (int64_t f = first, per = task_units(unit); f < last; f += per, count++) {
                if (pass == 0) continue;
                task *k = &j->tasks[count];
                k->tables = mask;
                k->first = f;
                k->last = f + per < last ? f + per : last;
            }
        }
        if (pass == 0) {
            if (count > INT32_MAX) return sto_error_oom();
            j->tasks = calloc(count > 0 ? (size_t)count : 1, sizeof(task));
            if (!j->tasks) return sto_error_oom();
            j->ntasks = (int)count;
            count = 0;
        }
    }
    return NULL;
}

/* Generates the tables of `tables` with all threads taking tasks from one
 * list, then appends every table's chunks in task order: all or none. */
static sto_status gen_all(const tpch_gen *g, unsigned tables, int parts, int part, int threads,
                          sto_table *const targets[], const atomic_int *cancel, bool point_text)
{
    job j;
    memset(&j, 0, sizeof(j));
    j.g = g;
    j.targets = targets;
    j.cancel = cancel;
    j.point_text = point_text;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++)
        if (tables & TPCH_BIT(t)) plan_table((tpch_table_id)t, targets[t], &j.plans[t]);
    STO_TRY(plan_tasks(g, tables, parts, part, &j));
    pthread_mutex_init(&j.lock, NULL);
    pthread_t tid[256];
    int started = 0;
    if (threads > j.ntasks) threads = j.ntasks > 0 ? j.ntasks : 1;
    for (int i = 1; i < threads && i < 256; i++)
        if (pthread_create(&tid[started], NULL, job_worker, &j) == 0) started++;
    job_worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j.lock);

    /* all chunks of a table in task order, appended in one step per table;
     * a failure after some tables took theirs is undone by the caller */
    sto_status st = j.error;
    for (int t = 0; !st && t < TPCH_TABLE_COUNT; t++) {
        if (!(tables & TPCH_BIT(t))) continue;
        chunk_list all = {0};
        for (int i = 0; !st && i < j.ntasks; i++)
            for (size_t k = 0; !st && k < j.tasks[i].out[t].count; k++)
                st = push_chunk(&all, j.tasks[i].out[t].items[k]);
        if (!st) st = sto_table_append_chunks(targets[t], all.items, all.count);
        if (!st) /* the table owns them now */
            for (int i = 0; i < j.ntasks; i++)
                j.tasks[i].out[t].count = 0;
        free(all.items);
    }
    for (int i = 0; i < j.ntasks; i++) {
        for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
            for (size_t k = 0; k < j.tasks[i].out[t].count; k++)
                sto_chunk_free(j.tasks[i].out[t].items[k]);
            free(j.tasks[i].out[t].items);
        }
    }
    free(j.tasks);
    return st;
}

sto_status tpch_gen_tables(const tpch_gen *g, unsigned tables, int parts, int part, int threads,
                           sto_table *const targets[TPCH_TABLE_COUNT])
{
    return tpch_gen_tables_cancelable(g, tables, parts, part, threads, targets, NULL);
}

sto_status tpch_gen_tables_cancelable(const tpch_gen *g, unsigned tables, int parts, int part,
                                      int threads, sto_table *const targets[TPCH_TABLE_COUNT],
                                      const atomic_int *cancel)
{
    tpch_tables_options opt = {parts, part, threads, cancel, TPCH_TEXT_COPY};
    return tpch_gen_tables_with(g, tables, &opt, targets);
}

sto_status tpch_gen_tables_with(const tpch_gen *g, unsigned tables, const tpch_tables_options *opt,
                                sto_table *const targets[TPCH_TABLE_COUNT])
{
    int parts = opt->parts < 1 ? 1 : opt->parts, part = opt->part;
    if (part < 1 || part > parts)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "part %d is outside 1..%d", part, parts);
    int threads = opt->threads < 1 ? 1 : opt->threads;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        if (!(tables & TPCH_BIT(t))) continue;
        if (!targets[t])
            return sto_error(STO_INTERNAL_ERROR, "no table given for %s",
                             tpch_table_info_get((tpch_table_id)t)->name);
        STO_TRY(check_schema(targets[t], (tpch_table_id)t));
    }
    /* Tables filled before a later append fails stay filled; note their
     * row counts so a failure undoes everything. */
    uint64_t before[TPCH_TABLE_COUNT] = {0};
    for (int t = 0; t < TPCH_TABLE_COUNT; t++)
        if (tables & TPCH_BIT(t)) before[t] = sto_table_rows(targets[t]);
    sto_status st = gen_all(g, tables, parts, part, threads, targets, opt->cancel,
                            opt->text == TPCH_TEXT_POINT);
    if (st)
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            if (tables & TPCH_BIT(t)) sto_table_truncate(targets[t], before[t]);
    return st;
}
