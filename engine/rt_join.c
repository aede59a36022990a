/*
 * rt_join.c — the build side's per-worker materialization (eng_join_mat)
 * and the spans the algorithms read it through.
 *
 * A worker appends entries to a list of blocks that grow geometrically (a
 * few entries for tiny inputs, up to just under a megabyte) and never move, so
 * the shared hash table can point straight into them. Entries whose key has
 * a NULL live in a list of their own: no algorithm ever partitions, sorts
 * or inserts them, only the final scan of RIGHT/FULL joins reads them.
 */
#include "engine/rt_join.h"

#include <stdlib.h>
#include <string.h>

struct eng_join_block {
    eng_join_block *next;
    uint64_t count, cap;
    uint64_t pad[5]; /* entries start on a cache line */
};

/* Blocks double from FIRST_BLOCK_ENTRIES entries up to BLOCK_MAX_BYTES. A
 * block mapped fresh faults on every page it fills (147K entries of q03's
 * orders: 9.2 MB, about 7 ms of faults on this machine), so they stayed
 * below ENG_MEM_BIG_BLOCK, where the process heap hands a query the pages
 * an earlier one freed, until the instance's pool (engine/mem_pool.h) kept
 * big blocks too: jemalloc's decay gave back a good part of the 1 MB
 * blocks of a 16M-tuple join between two runs. */
#define FIRST_BLOCK_ENTRIES 64u
#define BLOCK_MAX_BYTES     ((uint64_t)8 << 20)

static const char *const kind_names[] = {
#define KIND_NAME(kind, name, keeps, flags) name,
    ENG_JOIN_KIND_LIST(KIND_NAME)
#undef KIND_NAME
};

static const bool kind_flags[] = {
#define KIND_FLAGS(kind, name, keeps, flags) flags,
    ENG_JOIN_KIND_LIST(KIND_FLAGS)
#undef KIND_FLAGS
};

const char *eng_join_kind_name(eng_join_kind k)
{
    return k < ENG_JOIN_KIND_COUNT ? kind_names[k] : "?";
}

bool eng_join_kind_flags_build(eng_join_kind k)
{
    return k < ENG_JOIN_KIND_COUNT && kind_flags[k];
}

void eng_join_mat_init(eng_join_mat *m, eng_rt_mem mem, uint32_t row_bytes)
{
    memset(m, 0, sizeof(*m));
    m->mem = mem;
    m->row_bytes = row_bytes;
    m->stride = eng_join_entry_stride(row_bytes);
    m->next_block = FIRST_BLOCK_ENTRIES;
}

static void free_blocks(eng_join_mat *m, eng_join_block *b)
{
    while (b) {
        eng_join_block *next = b->next;
        eng_rt_free(&m->mem, b, sizeof(*b) + b->cap * m->stride);
        b = next;
    }
}

void eng_join_mat_free(eng_join_mat *m)
{
    free_blocks(m, m->keyed);
    free_blocks(m, m->nulls);
    m->keyed = m->keyed_tail = m->nulls = m->nulls_tail = NULL;
    m->count = m->null_count = 0;
}

/* A new block at the end of a list; its size doubles up to a few MB. */
static sto_status add_block(eng_join_mat *m, eng_join_block **head, eng_join_block **tail)
{
    uint64_t cap = m->next_block;
    eng_join_block *b;
    STO_TRY(eng_rt_alloc(&m->mem, sizeof(*b) + cap * m->stride, (void **)&b));
    b->next = NULL;
    b->count = 0;
    b->cap = cap;
    if (*tail)
        (*tail)->next = b;
    else
        *head = b;
    *tail = b;
    if (sizeof(*b) + cap * 2 * m->stride <= BLOCK_MAX_BYTES) m->next_block = cap * 2;
    return STO_OK;
}

static int32_t append(cg_error *err, eng_join_mat *m, eng_join_block **head, eng_join_block **tail,
                      uint64_t hash, uint8_t **row)
{
    eng_join_block *b = *tail;
    if (!b || b->count == b->cap) {
        sto_status st = add_block(m, head, tail);
        if (st) {
            err->detail = st;
            return CG_ERR_RUNTIME;
        }
        b = *tail;
    }
    eng_join_entry *e = eng_join_entry_at((uint8_t *)(b + 1), m->stride, b->count++);
    e->next = NULL;
    e->hash = hash;
    e->matched = 0;
    *row = eng_join_row(e);
    return CG_ERR_NONE;
}

int32_t eng_rt_join_append(cg_error *err, void *mat, uint64_t hash, uint8_t **row)
{
    eng_join_mat *m = mat;
    int32_t rc = append(err, m, &m->keyed, &m->keyed_tail, hash, row);
    if (!rc) m->count++;
    return rc;
}

int32_t eng_rt_join_append_null(cg_error *err, void *mat, uint8_t **row)
{
    eng_join_mat *m = mat;
    int32_t rc = append(err, m, &m->nulls, &m->nulls_tail, 0, row);
    if (!rc) m->null_count++;
    return rc;
}

sto_status eng_join_mat_spans(eng_join_mat *const *mats, unsigned n, bool null, eng_join_span **out,
                              unsigned *n_out)
{
    unsigned count = 0;
    for (unsigned i = 0; i < n; i++)
        for (eng_join_block *b = null ? mats[i]->nulls : mats[i]->keyed; b; b = b->next)
            if (b->count) count++;
    eng_join_span *spans = malloc((count ? count : 1) * sizeof(*spans));
    if (!spans) return sto_error_oom();
    count = 0;
    for (unsigned i = 0; i < n; i++)
        for (eng_join_block *b = null ? mats[i]->nulls : mats[i]->keyed; b; b = b->next)
            if (b->count) spans[count++] = (eng_join_span){(uint8_t *)(b + 1), b->count};
    *out = spans;
    *n_out = count;
    return STO_OK;
}

void eng_join_spans_visit(const eng_join_span *spans, unsigned n, uint64_t begin, uint64_t end,
                          eng_join_visit_fn fn, void *arg)
{
    uint64_t at = 0;
    unsigned i = 0;
    /* Skip whole spans before begin. */
    while (i < n && at + spans[i].count <= begin)
        at += spans[i++].count;
    for (; i < n && at < end; at += spans[i++].count) {
        uint64_t lo = begin > at ? begin - at : 0;
        uint64_t hi = end - at < spans[i].count ? end - at : spans[i].count;
        if (lo < hi) fn(arg, spans[i].base, lo, hi);
    }
}

eng_join_build_info eng_join_mat_info(eng_join_mat *const *mats, unsigned n)
{
    eng_join_build_info info = {0, 0};
    for (unsigned i = 0; i < n; i++) {
        info.rows += mats[i]->count + mats[i]->null_count;
        info.null_rows += mats[i]->null_count;
    }
    return info;
}

int32_t eng_join_mat_emit_nulls(cg_error *err, const eng_join_spec *spec, eng_join_mat *const *mats,
                                unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        for (eng_join_block *b = mats[i]->nulls; b; b = b->next) {
            int32_t rc =
                eng_join_emit_unmatched(err, spec, (uint8_t *)(b + 1), mats[i]->stride, b->count);
            if (rc) return rc;
        }
    return CG_ERR_NONE;
}

int32_t eng_join_mat_probe_nulls(cg_error *err, const eng_join_spec *spec,
                                 const eng_join_build_info *build, eng_join_mat *const *mats,
                                 unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        for (eng_join_block *b = mats[i]->nulls; b; b = b->next)
            for (uint64_t j = 0; j < b->count; j++) {
                eng_join_entry *e = eng_join_entry_at((uint8_t *)(b + 1), mats[i]->stride, j);
                int32_t rc = eng_join_probe_chain(err, spec, build, 0, eng_join_row(e), true, NULL);
                if (rc) return rc;
            }
    return CG_ERR_NONE;
}
