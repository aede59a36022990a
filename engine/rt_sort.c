/*
 * rt_sort.c — sorting runs of materialized rows and merging them.
 *
 * A run whose ORDER BY keys fit ENG_SORT_KEY_BYTES is sorted by
 * normalized keys (rt_sort_keys.h). Any other run is sorted as an array of
 * (prefix, row pointer) pairs: rows are wide, and the prefix — the first
 * key mapped to a 64-bit unsigned number whose order agrees with the key's
 * (NULLs, DESC and all) — decides most comparisons without touching the row
 * or following a string pointer. Only equal prefixes fall back to the full
 * comparison. Either way the rows are then copied once into sorted order.
 *
 * A top-k heap is ordered by eng_sort_compare with the worst row at index 0:
 * a run sorted best-first and stored in reverse is already such a heap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine/rt_sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/rt_sort_keys.h"

static int cmp_value(const eng_sort_key *k, const uint8_t *a, const uint8_t *b)
{
    switch (k->type.id) {
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR: {
        /* Row slots are packed: read strings through aligned copies. */
        sto_str x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return sto_str_cmp(&x, &y);
    }
    case STO_TYPE_DOUBLE: {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
        return x < y ? -1 : x > y;
    }
    case STO_TYPE_BOOLEAN:
        return (int)*a - (int)*b;
    case STO_TYPE_INTEGER:
    case STO_TYPE_DATE: {
        int32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x < y ? -1 : x > y;
    }
    default: {
        int64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x < y ? -1 : x > y;
    }
    }
}

int eng_sort_compare(const eng_sort_spec *s, const uint8_t *a, const uint8_t *b)
{
    for (uint32_t i = 0; i < s->nkeys; i++) {
        const eng_sort_key *k = &s->keys[i];
        uint32_t no = cg_row_null_offset(s->ncols, k->slot);
        bool an = a[no] != 0, bn = b[no] != 0;
        if (an || bn) {
            if (an && bn) continue;
            return (an ? -1 : 1) * (k->nulls_first ? 1 : -1);
        }
        int c = cmp_value(k, a + k->slot * CG_ROW_SLOT, b + k->slot * CG_ROW_SLOT);
        if (c) return k->desc ? -c : c;
    }
    return 0;
}

typedef struct sort_ref {
    uint64_t prefix;
    const uint8_t *row;
} sort_ref;

/* An order-preserving 64-bit image of the first key of a row: a < b implies
 * prefix(a) <= prefix(b). */
static uint64_t key_prefix(const eng_sort_spec *s, const uint8_t *row)
{
    const eng_sort_key *k = &s->keys[0];
    if (row[cg_row_null_offset(s->ncols, k->slot)]) return k->nulls_first ? 0 : UINT64_MAX;
    const uint8_t *p = row + k->slot * CG_ROW_SLOT;
    uint64_t v;
    switch (k->type.id) {
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR: {
        sto_str str;
        memcpy(&str, p, sizeof(str)); /* slots are packed: see cmp_value */
        const unsigned char *d = (const unsigned char *)sto_str_data(&str);
        v = 0;
        for (uint32_t i = 0; i < 8; i++)
            v = (v << 8) | (i < str.len ? d[i] : 0);
        break;
    }
    case STO_TYPE_DOUBLE:
        v = eng_sort_double_image(p);
        break;
    default:
        v = eng_sort_int_image(k->type.id, p);
        break;
    }
    /* Keep the ends free for NULLs, so a value never passes a NULL. */
    if (k->desc) v = ~v;
    if (v == 0 && k->nulls_first) v = 1;
    if (v == UINT64_MAX && !k->nulls_first) v = UINT64_MAX - 1;
    return v;
}

static int cmp_refs(const void *a, const void *b, void *arg)
{
    const sort_ref *x = a, *y = b;
    if (x->prefix != y->prefix) return x->prefix < y->prefix ? -1 : 1;
    return eng_sort_compare(arg, x->row, y->row);
}

sto_status eng_sort_run(const eng_sort_spec *s, eng_rows_sink *run, uint64_t keep)
{
    uint64_t n = run->rows;
    if (n < 2) return STO_OK;
    sort_ref *refs = malloc(n * sizeof(*refs));
    if (!refs) return sto_error_oom();
    /* normalized keys when they are short; refs then holds the order */
    const uint8_t **order = (const uint8_t **)refs;
    bool done = false;
    sto_status st = eng_sort_keys_order(s, run->data, n, run->row_bytes, order, &done);
    if (st) {
        free(refs);
        return st;
    }
    if (!done) {
        for (uint64_t i = 0; i < n; i++) {
            refs[i].row = run->data + i * run->row_bytes;
            refs[i].prefix = s->nkeys ? key_prefix(s, refs[i].row) : 0;
        }
        qsort_r(refs, n, sizeof(*refs), cmp_refs, (void *)s);
        for (uint64_t i = 0; i < n; i++)
            order[i] = refs[i].row; /* over refs[i / 2], read before */
    }
    if (keep > n) keep = n;
    uint8_t *data = NULL;
    eng_rt_mem m = {run->mem.mem, NULL, -1};
    st = eng_rt_alloc(&m, keep * run->row_bytes, (void **)&data);
    if (!st) {
        for (uint64_t i = 0; i < keep; i++)
            memcpy(data + i * run->row_bytes, order[i], run->row_bytes);
        eng_rt_free(&m, run->data, run->cap * run->row_bytes);
        run->data = data;
        run->rows = run->cap = keep;
    }
    free(refs);
    return st;
}

/* --- top-k ------------------------------------------------------------------ */

/* Restores the heap of n rows after its root was replaced; tmp is room for
 * one row outside the heap. */
static void sift_down(const eng_sort_spec *s, uint8_t *data, uint64_t n, uint32_t rb, uint8_t *tmp)
{
    uint64_t i = 0;
    memcpy(tmp, data, rb);
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && eng_sort_compare(s, data + (c + 1) * rb, data + c * rb) > 0) c++;
        if (eng_sort_compare(s, data + c * rb, tmp) <= 0) break;
        memcpy(data + i * rb, data + c * rb, rb);
        i = c;
    }
    memcpy(data + i * rb, tmp, rb);
}

/* The first time the sink is full: sorts its rows and keeps the best k,
 * worst first (a heap), in a buffer of k + 1 rows, which is full again after
 * every append from then on. */
static sto_status topk_build(eng_topk *t, eng_rows_sink *run)
{
    uint64_t n = run->rows, k = t->k;
    uint32_t rb = run->row_bytes;
    sort_ref *refs = malloc((n ? n : 1) * sizeof(*refs));
    if (!refs) return sto_error_oom();
    for (uint64_t i = 0; i < n; i++) {
        refs[i].row = run->data + i * rb;
        refs[i].prefix = t->spec->nkeys ? key_prefix(t->spec, refs[i].row) : 0;
    }
    qsort_r(refs, n, sizeof(*refs), cmp_refs, (void *)t->spec);
    uint64_t keep = k < n ? k : n;
    uint8_t *data = NULL;
    eng_rt_mem m = {run->mem.mem, NULL, -1};
    sto_status st = eng_rt_alloc(&m, (k + 1) * rb, (void **)&data);
    if (!st) {
        for (uint64_t i = 0; i < keep; i++)
            memcpy(data + i * rb, refs[keep - 1 - i].row, rb);
        eng_rt_free(&m, run->data, run->cap * rb);
        run->data = data;
        run->rows = keep;
        run->cap = k + 1;
        t->heap = true;
    }
    free(refs);
    return st;
}

static sto_status topk_compact(void *arg, eng_rows_sink *run)
{
    eng_topk *t = arg;
    if (!t->heap) return topk_build(t, run);
    /* rows == k + 1: rows [0, k) are the heap, row k the newest. */
    uint32_t rb = run->row_bytes;
    uint8_t *cand = run->data + t->k * rb;
    run->rows = t->k;
    if (t->k == 0 || eng_sort_compare(t->spec, cand, run->data) >= 0) return STO_OK;
    memcpy(run->data, cand, rb);
    sift_down(t->spec, run->data, t->k, rb, cand); /* slot k is free again */
    return STO_OK;
}

void eng_topk_attach(eng_topk *t, const eng_sort_spec *spec, uint64_t k, eng_rows_sink *s)
{
    *t = (eng_topk){spec, k, false};
    s->compact = topk_compact;
    s->compact_arg = t;
    s->compact_min = k + 1;
}

sto_status eng_sort_merge(const eng_sort_spec *s, eng_rows_sink *const *runs, unsigned n,
                          uint64_t limit, eng_mem *mem, eng_rowset *out)
{
    memset(out, 0, sizeof(*out));
    out->mem = mem;
    uint64_t total = 0;
    uint32_t rb = 0;
    for (unsigned i = 0; i < n; i++) {
        total += runs[i]->rows;
        if (runs[i]->row_bytes) rb = runs[i]->row_bytes;
    }
    if (limit < total) total = limit;
    out->row_bytes = rb;
    uint64_t *pos = calloc(n ? n : 1, sizeof(*pos));
    sto_status st = pos ? STO_OK : sto_error_oom();
    if (!st && total) {
        out->bytes = total * rb;
        st = eng_mem_alloc(mem, out->bytes, -1, (void **)&out->data);
        if (st) out->bytes = 0;
    }
    while (!st && out->rows < total) {
        int best = -1;
        const uint8_t *brow = NULL;
        for (unsigned i = 0; i < n; i++) {
            if (pos[i] >= runs[i]->rows) continue;
            const uint8_t *r = runs[i]->data + pos[i] * rb;
            if (best < 0 || eng_sort_compare(s, r, brow) < 0) {
                best = (int)i;
                brow = r;
            }
        }
        memcpy(out->data + out->rows * rb, brow, rb);
        out->rows++;
        pos[best]++;
    }
    free(pos);
    for (unsigned i = 0; i < n; i++)
        eng_rows_sink_free(runs[i]);
    if (st) eng_rowset_free(out);
    return st;
}
