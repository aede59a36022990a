/*
 * rt_result.c — per-worker row buffers, their concatenation, and the copy
 * of materialized rows into a statement's result chunks.
 */
#include "engine/rt_result.h"

#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/instance.h"

sto_status eng_rt_alloc(const eng_rt_mem *m, size_t bytes, void **out)
{
    if (m->cache) return eng_mem_cache_alloc(m->cache, bytes, m->node, out);
    return eng_mem_alloc(m->mem, bytes, m->node, out);
}

sto_status eng_rt_alloc_zero(const eng_rt_mem *m, size_t bytes, void **out)
{
    STO_TRY(eng_rt_alloc(m, bytes, out));
    if (*out) memset(*out, 0, bytes);
    return STO_OK;
}

void eng_rt_free(const eng_rt_mem *m, void *p, size_t bytes)
{
    if (p) eng_mem_free(m->mem, p, bytes);
}

/* --- per-worker sinks -------------------------------------------------------- */

void eng_rows_sink_init(eng_rows_sink *s, eng_rt_mem mem, uint32_t row_bytes)
{
    memset(s, 0, sizeof(*s));
    s->mem = mem;
    s->row_bytes = row_bytes;
}

void eng_rows_sink_free(eng_rows_sink *s)
{
    eng_rt_free(&s->mem, s->data, s->cap * s->row_bytes);
    free(s->segs);
    s->data = NULL;
    s->segs = NULL;
    s->rows = s->cap = s->nsegs = s->segcap = 0;
}

static sto_status grow(eng_rows_sink *s)
{
    uint64_t cap = s->cap * 2 > 1024 ? s->cap * 2 : 1024;
    uint8_t *data = NULL;
    STO_TRY(eng_rt_alloc(&s->mem, cap * s->row_bytes, (void **)&data));
    if (s->rows) memcpy(data, s->data, s->rows * s->row_bytes);
    eng_rt_free(&s->mem, s->data, s->cap * s->row_bytes);
    s->data = data;
    s->cap = cap;
    return STO_OK;
}

sto_status eng_rows_sink_reserve(eng_rows_sink *s, uint64_t rows)
{
    if (s->cap - s->rows >= rows) return STO_OK;
    uint64_t cap = s->rows + rows;
    uint8_t *data = NULL;
    STO_TRY(eng_rt_alloc(&s->mem, cap * s->row_bytes, (void **)&data));
    if (s->rows) memcpy(data, s->data, s->rows * s->row_bytes);
    eng_rt_free(&s->mem, s->data, s->cap * s->row_bytes);
    s->data = data;
    s->cap = cap;
    return STO_OK;
}

int32_t eng_rt_rows_append(cg_error *err, void *sink, uint8_t **row)
{
    eng_rows_sink *s = sink;
    if (s->rows == s->cap && s->compact && s->rows >= s->compact_min) {
        sto_status st = s->compact(s->compact_arg, s);
        if (st) {
            err->detail = st;
            return CG_ERR_RUNTIME;
        }
    }
    if (s->rows == s->cap) {
        sto_status st = grow(s);
        if (st) {
            err->detail = st;
            return CG_ERR_RUNTIME;
        }
    }
    *row = s->data + s->rows++ * s->row_bytes;
    return CG_ERR_NONE;
}

sto_status eng_rows_sink_mark(eng_rows_sink *s, uint64_t pos)
{
    if (s->nsegs && s->segs[s->nsegs - 1].first == s->rows) {
        s->segs[s->nsegs - 1].pos = pos; /* the previous morsel made no rows */
        return STO_OK;
    }
    if (s->nsegs == s->segcap) {
        uint64_t cap = s->segcap ? s->segcap * 2 : 64;
        eng_rows_seg *segs = realloc(s->segs, cap * sizeof(*segs));
        if (!segs) return sto_error_oom();
        s->segs = segs;
        s->segcap = cap;
    }
    s->segs[s->nsegs++] = (eng_rows_seg){pos, s->rows};
    return STO_OK;
}

/* --- rowsets ------------------------------------------------------------------ */

void eng_rowset_free(eng_rowset *r)
{
    if (r->data) eng_mem_free(r->mem, r->data, r->bytes);
    memset(r, 0, sizeof(*r));
}

typedef struct seg_ref {
    uint64_t pos;
    const uint8_t *rows;
    uint64_t count;
} seg_ref;

static int seg_cmp(const void *a, const void *b)
{
    const seg_ref *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

sto_status eng_rowset_gather(eng_rows_sink *const *sinks, unsigned n, bool ordered, eng_mem *mem,
                             eng_rowset *out)
{
    memset(out, 0, sizeof(*out));
    out->mem = mem;
    uint64_t total = 0, nsegs = 0;
    uint32_t rb = 0;
    for (unsigned i = 0; i < n; i++) {
        total += sinks[i]->rows;
        nsegs += sinks[i]->nsegs;
        if (sinks[i]->row_bytes) rb = sinks[i]->row_bytes;
    }
    out->row_bytes = rb;
    sto_status st = STO_OK;
    if (total) {
        out->bytes = total * rb;
        st = eng_mem_alloc(mem, out->bytes, -1, (void **)&out->data);
        if (st) {
            out->bytes = 0;
            goto done;
        }
    }
    if (ordered && nsegs) {
        seg_ref *refs = malloc(nsegs * sizeof(*refs));
        if (!refs) {
            st = sto_error_oom();
            goto done;
        }
        uint64_t k = 0;
        for (unsigned i = 0; i < n; i++) {
            const eng_rows_sink *s = sinks[i];
            for (uint64_t j = 0; j < s->nsegs; j++) {
                uint64_t end = j + 1 < s->nsegs ? s->segs[j + 1].first : s->rows;
                refs[k++] = (seg_ref){s->segs[j].pos, s->data + s->segs[j].first * rb,
                                      end - s->segs[j].first};
            }
        }
        qsort(refs, nsegs, sizeof(*refs), seg_cmp);
        for (uint64_t j = 0; j < nsegs; j++) {
            if (refs[j].count) memcpy(out->data + out->rows * rb, refs[j].rows, refs[j].count * rb);
            out->rows += refs[j].count;
        }
        free(refs);
    } else {
        for (unsigned i = 0; i < n; i++) {
            if (sinks[i]->rows)
                memcpy(out->data + out->rows * rb, sinks[i]->data, sinks[i]->rows * rb);
            out->rows += sinks[i]->rows;
        }
    }
done:
    for (unsigned i = 0; i < n; i++)
        eng_rows_sink_free(sinks[i]);
    if (st) eng_rowset_free(out);
    return st;
}

void eng_rowset_slice(eng_rowset *r, int64_t offset, int64_t limit)
{
    uint64_t off = offset > 0 ? (uint64_t)offset : 0;
    if (off >= r->rows) {
        r->rows = 0;
        return;
    }
    uint64_t keep = r->rows - off;
    if (limit >= 0 && (uint64_t)limit < keep) keep = (uint64_t)limit;
    if (off) memmove(r->data, r->data + off * r->row_bytes, keep * r->row_bytes);
    r->rows = keep;
}

/* --- into the result ------------------------------------------------------------ */

sto_value eng_row_value(const uint8_t *row, uint32_t ncols, uint32_t slot, sto_type t)
{
    sto_value v;
    memset(&v, 0, sizeof(v));
    if (row[cg_row_null_offset(ncols, slot)]) {
        v.is_null = true;
        return v;
    }
    const uint8_t *p = row + slot * CG_ROW_SLOT;
    switch (t.id) {
    case STO_TYPE_DOUBLE:
        memcpy(&v.v.f64, p, 8);
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        memcpy(&v.v.str, p, sizeof(sto_str));
        break;
    default:
        v.v.i64 = cg_row_slot_int(t.id, p);
        break;
    }
    return v;
}

sto_status eng_rowset_to_result(const eng_rowset *rs, uint32_t ncols, const uint32_t *slots,
                                eng_result *r, atomic_int *cancel)
{
    const sto_schema *schema = eng_result_schema(r);
    for (uint64_t start = 0; start < rs->rows; start += STO_CHUNK_ROWS) {
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
            return eng_canceled_error();
        uint32_t n =
            (uint32_t)(rs->rows - start < STO_CHUNK_ROWS ? rs->rows - start : STO_CHUNK_ROWS);
        sto_chunk *c = NULL;
        STO_TRY(sto_chunk_new(schema, n, &c));
        for (uint32_t j = 0; j < schema->ncols; j++) {
            sto_type t = schema->cols[j].type;
            size_t w = sto_type_width(t.id);
            uint8_t *col = c->cols[j];
            uint64_t *valid = c->validity[j];
            bool strings = t.id == STO_TYPE_CHAR || t.id == STO_TYPE_VARCHAR;
            for (uint32_t i = 0; i < n; i++) {
                const uint8_t *row = rs->data + (start + i) * rs->row_bytes;
                bool null = row[cg_row_null_offset(ncols, slots[j])] != 0;
                if (null) {
                    memset(col + (size_t)i * w, 0, w);
                    continue;
                }
                if (valid) sto_bitmap_set(valid, i);
                const uint8_t *p = row + slots[j] * CG_ROW_SLOT;
                if (strings) {
                    sto_str s;
                    memcpy(&s, p, sizeof(s));
                    if (!sto_chunk_make_str(c, sto_str_data(&s), s.len, &((sto_str *)col)[i])) {
                        sto_chunk_free(c);
                        return sto_error_oom();
                    }
                } else {
                    memcpy(col + (size_t)i * w, p, w);
                }
            }
        }
        sto_chunk_set_rows(c, n);
        STO_TRY(eng_result_append_chunk(r, c));
    }
    return STO_OK;
}
