/*
 * exec_setop.c — appending a set operation's inputs and keeping its
 * counted groups (exec_setop.h).
 *
 * Both steps are single passes of memcpy over rowsets that are already
 * contiguous. The append makes one buffer of left rows then right rows (the
 * reading pipeline needs one buffer to cut into morsels); keeping groups
 * compacts the aggregation's output in place when every group is kept at
 * most once, and otherwise (INTERSECT ALL, EXCEPT ALL) writes a new buffer
 * sized by the sum of the counts, so memory is reserved before any row
 * moves and a result past memory_limit fails cleanly.
 */
#include "engine/exec_setop.h"

#include <string.h>

#include "engine/instance.h"

/* Rows between cancel checks. */
#define CHECK_EVERY 65536u

static bool canceled(atomic_int *cancel, uint64_t row)
{
    return cancel && row % CHECK_EVERY == 0 && atomic_load_explicit(cancel, memory_order_relaxed);
}

/* *right = left's rows, then right's; left is emptied. */
static sto_status append(eng_rowset *left, eng_rowset *right)
{
    if (!left->rows) {
        eng_rowset_free(left);
        return STO_OK;
    }
    if (!right->rows) {
        uint32_t rb = right->row_bytes;
        eng_rowset_free(right);
        *right = *left;
        right->row_bytes = rb ? rb : left->row_bytes;
        memset(left, 0, sizeof(*left));
        return STO_OK;
    }
    if (left->row_bytes != right->row_bytes)
        return sto_error(STO_INTERNAL_ERROR, "set operation inputs have rows of %u and %u bytes",
                         left->row_bytes, right->row_bytes);
    uint32_t rb = right->row_bytes;
    uint64_t rows = left->rows + right->rows;
    size_t bytes = (size_t)rows * rb;
    void *data;
    STO_TRY(eng_mem_alloc(right->mem, bytes, -1, &data));
    memcpy(data, left->data, (size_t)left->rows * rb);
    memcpy((uint8_t *)data + (size_t)left->rows * rb, right->data, (size_t)right->rows * rb);
    eng_mem *mem = right->mem;
    eng_rowset_free(left);
    eng_rowset_free(right);
    *right = (eng_rowset){data, rows, rb, bytes, mem};
    return STO_OK;
}

/* How often a group seen m times on the left and n on the right stays. */
static uint64_t keep_count(const sql_lop *op, uint64_t m, uint64_t n)
{
    if (op->setop.op == SQL_SETOP_INTERSECT) {
        uint64_t k = m < n ? m : n;
        return op->setop.all ? k : k > 0;
    }
    if (!op->setop.all) return m > 0 && n == 0;
    return m > n ? m - n : 0;
}

static uint64_t count_at(const uint8_t *row, uint32_t ncols, uint32_t slot)
{
    sto_value v = eng_row_value(row, ncols, slot, sto_type_make(STO_TYPE_BIGINT));
    return v.is_null || v.v.i64 < 0 ? 0 : (uint64_t)v.v.i64;
}

/* Keeps each row of r (groups, then the two counts) keep_count times. */
static sto_status keep_groups(const eng_pipe *p, eng_rowset *r, atomic_int *cancel)
{
    uint32_t ncols = p->agg.nkeys + p->agg.naggs, ml = ncols - 2, nl = ncols - 1;
    uint32_t rb = r->row_bytes;
    uint64_t total = 0;
    bool at_most_once = true;
    for (uint64_t i = 0; i < r->rows; i++) {
        if (canceled(cancel, i)) return eng_canceled_error();
        const uint8_t *row = r->data + (size_t)i * rb;
        uint64_t k = keep_count(p->count_setop, count_at(row, ncols, ml), count_at(row, ncols, nl));
        total += k;
        if (k > 1) at_most_once = false;
    }
    if (at_most_once) {
        uint64_t w = 0;
        for (uint64_t i = 0; i < r->rows; i++) {
            const uint8_t *row = r->data + (size_t)i * rb;
            if (!keep_count(p->count_setop, count_at(row, ncols, ml), count_at(row, ncols, nl)))
                continue;
            if (w != i) memcpy(r->data + (size_t)w * rb, row, rb);
            w++;
        }
        r->rows = w;
        return STO_OK;
    }
    size_t bytes = (size_t)total * rb;
    uint8_t *data;
    STO_TRY(eng_mem_alloc(r->mem, bytes, -1, (void **)&data));
    uint64_t w = 0;
    for (uint64_t i = 0; i < r->rows; i++) {
        const uint8_t *row = r->data + (size_t)i * rb;
        uint64_t k = keep_count(p->count_setop, count_at(row, ncols, ml), count_at(row, ncols, nl));
        for (uint64_t c = 0; c < k; c++, w++) {
            if (canceled(cancel, w)) {
                eng_mem_free(r->mem, data, bytes);
                return eng_canceled_error();
            }
            memcpy(data + (size_t)w * rb, row, rb);
        }
    }
    eng_mem *mem = r->mem;
    eng_rowset_free(r);
    *r = (eng_rowset){data, total, rb, bytes, mem};
    return STO_OK;
}

sto_status eng_exec_setop_rows(const eng_pipe *p, eng_rowset *outs, unsigned i, atomic_int *cancel)
{
    if (p->concat_from) STO_TRY(append(&outs[p->concat_from - 1], &outs[i]));
    if (p->count_setop) return keep_groups(p, &outs[i], cancel);
    return STO_OK;
}
