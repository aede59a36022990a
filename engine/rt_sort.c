/*
 * rt_sort.c — sorting runs of materialized rows and merging them.
 *
 * A run is sorted as an array of row pointers (rows are wide; moving
 * pointers is cheaper), then the rows are copied once into sorted order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine/rt_sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"

static int cmp_value(const eng_sort_key *k, const uint8_t *a, const uint8_t *b)
{
    switch (k->type.id) {
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        return sto_str_cmp((const sto_str *)a, (const sto_str *)b);
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

static int cmp_ptrs(const void *a, const void *b, void *arg)
{
    return eng_sort_compare(arg, *(const uint8_t *const *)a, *(const uint8_t *const *)b);
}

sto_status eng_sort_run(const eng_sort_spec *s, eng_rows_sink *run, uint64_t keep)
{
    uint64_t n = run->rows;
    if (n < 2) return STO_OK;
    const uint8_t **ptrs = malloc(n * sizeof(*ptrs));
    if (!ptrs) return sto_error_oom();
    for (uint64_t i = 0; i < n; i++)
        ptrs[i] = run->data + i * run->row_bytes;
    qsort_r(ptrs, n, sizeof(*ptrs), cmp_ptrs, (void *)s);
    if (keep > n) keep = n;
    uint8_t *data = NULL;
    eng_rt_mem m = {run->mem.mem, NULL, -1};
    sto_status st = eng_rt_alloc(&m, keep * run->row_bytes, (void **)&data);
    if (!st) {
        for (uint64_t i = 0; i < keep; i++)
            memcpy(data + i * run->row_bytes, ptrs[i], run->row_bytes);
        eng_rt_free(&m, run->data, run->cap * run->row_bytes);
        run->data = data;
        run->rows = run->cap = keep;
    }
    free(ptrs);
    return st;
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
