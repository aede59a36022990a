/*
 * chunk.c — creation, filling and sealing of chunks (see chunk.h).
 *
 * Column arrays and validity bitmaps share one region from the NUMA-local
 * allocator, sized for the full capacity; its pages are only backed once
 * written, so a small chunk's unused tail costs address space, not memory.
 */
#include "storage/chunk.h"

#include <stdlib.h>
#include <string.h>

#include "storage/numa_alloc.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

void sto_chunk_free(sto_chunk *c)
{
    if (!c) return;
    sto_numa_free(c->mem, c->mem_bytes);
    free(c->cols);
    free(c->validity);
    free(c->stats);
    sto_heap_free(&c->heap);
    free(c);
}

sto_status sto_chunk_new(const sto_schema *schema, uint32_t capacity, sto_chunk **out)
{
    *out = NULL;
    sto_chunk *c = calloc(1, sizeof(*c));
    if (!c) return sto_error_oom();
    c->schema = schema;
    c->capacity = capacity == 0 || capacity > STO_CHUNK_ROWS ? STO_CHUNK_ROWS : capacity;
    sto_heap_init(&c->heap);
    uint32_t n = schema->ncols ? schema->ncols : 1;
    c->cols = calloc(n, sizeof(*c->cols));
    c->validity = calloc(n, sizeof(*c->validity));
    c->stats = calloc(n, sizeof(*c->stats));
    if (!c->cols || !c->validity || !c->stats) goto oom;
    /* Lay out every array and bitmap in one region: one allocation, and big
     * enough for huge pages when the chunk is full-sized. */
    size_t bitmap = align64(sto_bitmap_words(c->capacity) * sizeof(uint64_t)), total = 0;
    for (uint32_t i = 0; i < schema->ncols; i++) {
        total +=
            align64((size_t)c->capacity * sto_type_width((sto_type_id)schema->cols[i].type.id));
        if (!schema->cols[i].not_null) total += bitmap;
    }
    c->mem_bytes = total ? total : 64;
    c->mem = sto_numa_alloc(c->mem_bytes);
    if (!c->mem) goto oom;
    char *p = c->mem;
    for (uint32_t i = 0; i < schema->ncols; i++) {
        c->cols[i] = p;
        p += align64((size_t)c->capacity * sto_type_width((sto_type_id)schema->cols[i].type.id));
    }
    for (uint32_t i = 0; i < schema->ncols; i++) {
        if (schema->cols[i].not_null) continue;
        c->validity[i] = (uint64_t *)p;
        p += bitmap;
    }
    *out = c;
    return STO_OK;
oom:
    sto_chunk_free(c);
    return sto_error_oom();
}

bool sto_chunk_make_str(sto_chunk *c, const char *bytes, uint32_t len, sto_str *out)
{
    if (len <= STO_STR_INLINE_MAX) {
        *out = sto_str_make(bytes, len);
        return true;
    }
    const char *copy = sto_heap_copy(&c->heap, bytes, len);
    if (!copy) return false;
    *out = sto_str_make(copy, len);
    return true;
}

sto_status sto_chunk_append_row(sto_chunk *c, const sto_value *values)
{
    if (c->sealed || c->rows >= c->capacity)
        return sto_error(STO_INTERNAL_ERROR, "append to a full or sealed chunk");
    uint32_t r = c->rows;
    const sto_schema *s = c->schema;
    /* Check everything first so a rejected row leaves no partial writes. */
    for (uint32_t i = 0; i < s->ncols; i++) {
        const sto_column_def *col = &s->cols[i];
        if (values[i].is_null) {
            if (col->not_null)
                return sto_error(STO_NOT_NULL_VIOLATION,
                                 "null value in column \"%s\" violates not-null constraint",
                                 col->name);
            continue;
        }
        if (col->type.id == STO_TYPE_CHAR || col->type.id == STO_TYPE_VARCHAR) {
            uint32_t len = values[i].v.str.len;
            if (!sto_string_fit(col->type, sto_str_data(&values[i].v.str), &len)) {
                char tn[32];
                sto_type_format(col->type, tn, sizeof(tn));
                return sto_error(STO_STRING_DATA_RIGHT_TRUNCATION,
                                 "value too long for type %s (column \"%s\")", tn, col->name);
            }
        }
    }
    for (uint32_t i = 0; i < s->ncols; i++) {
        const sto_column_def *col = &s->cols[i];
        const sto_value *v = &values[i];
        if (c->validity[i]) {
            if (v->is_null) {
                sto_bitmap_clear(c->validity[i], r);
                memset((char *)c->cols[i] + (size_t)r * sto_type_width((sto_type_id)col->type.id),
                       0, sto_type_width((sto_type_id)col->type.id));
                continue;
            }
            sto_bitmap_set(c->validity[i], r);
        }
        switch ((sto_type_id)col->type.id) {
        case STO_TYPE_BOOLEAN:
            ((uint8_t *)c->cols[i])[r] = v->v.i64 != 0;
            break;
        case STO_TYPE_INTEGER:
        case STO_TYPE_DATE:
            ((int32_t *)c->cols[i])[r] = (int32_t)v->v.i64;
            break;
        case STO_TYPE_BIGINT:
        case STO_TYPE_DECIMAL:
            ((int64_t *)c->cols[i])[r] = v->v.i64;
            break;
        case STO_TYPE_DOUBLE:
            ((double *)c->cols[i])[r] = v->v.f64;
            break;
        case STO_TYPE_CHAR:
        case STO_TYPE_VARCHAR: {
            const char *bytes = sto_str_data(&v->v.str);
            uint32_t len = v->v.str.len;
            sto_string_fit(col->type, bytes, &len);
            if (!sto_chunk_make_str(c, bytes, len, &((sto_str *)c->cols[i])[r]))
                return sto_error_oom(); /* row not counted: earlier columns are garbage */
            break;
        }
        default:
            return sto_error(STO_INTERNAL_ERROR, "column \"%s\" has an unknown type", col->name);
        }
    }
    c->rows = r + 1;
    return STO_OK;
}

sto_value sto_chunk_get(const sto_chunk *c, uint32_t col, uint32_t row)
{
    sto_value v;
    memset(&v, 0, sizeof(v));
    if (!sto_chunk_is_valid(c, col, row)) {
        v.is_null = true;
        return v;
    }
    const void *a = c->cols[col];
    switch ((sto_type_id)c->schema->cols[col].type.id) {
    case STO_TYPE_BOOLEAN:
        v.v.i64 = ((const uint8_t *)a)[row];
        break;
    case STO_TYPE_INTEGER:
    case STO_TYPE_DATE:
        v.v.i64 = ((const int32_t *)a)[row];
        break;
    case STO_TYPE_BIGINT:
    case STO_TYPE_DECIMAL:
        v.v.i64 = ((const int64_t *)a)[row];
        break;
    case STO_TYPE_DOUBLE:
        v.v.f64 = ((const double *)a)[row];
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        v.v.str = ((const sto_str *)a)[row];
        break;
    default:
        v.is_null = true;
        break;
    }
    return v;
}

void sto_chunk_set_rows(sto_chunk *c, uint32_t rows)
{
    c->rows = rows <= c->capacity ? rows : c->capacity;
}

void sto_chunk_seal(sto_chunk *c)
{
    if (c->sealed) return;
    for (uint32_t i = 0; i < c->schema->ncols; i++)
        sto_stats_compute(&c->stats[i], c->schema->cols[i].type, c->cols[i], c->validity[i],
                          c->rows);
    c->sealed = true;
}

void sto_chunk_truncate(sto_chunk *c, uint32_t rows)
{
    if (rows >= c->rows) return;
    c->rows = rows;
    c->sealed = false;
    sto_chunk_seal(c);
}
