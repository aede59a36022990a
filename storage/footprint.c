/*
 * footprint.c — bytes needed and held by chunks and tables (see footprint.h).
 */
#include "storage/footprint.h"

#include <string.h>

static uint64_t column_value_bytes(const sto_chunk *c, uint32_t col)
{
    return (uint64_t)c->rows * sto_type_width((sto_type_id)c->schema->cols[col].type.id);
}

static uint64_t column_validity_bytes(const sto_chunk *c, uint32_t col)
{
    return c->validity[col] ? sto_bitmap_words(c->rows) * sizeof(uint64_t) : 0;
}

void sto_chunk_footprint(const sto_chunk *c, sto_footprint *acc)
{
    acc->chunks++;
    acc->rows += c->rows;
    for (uint32_t i = 0; i < c->schema->ncols; i++) {
        acc->value_bytes += column_value_bytes(c, i);
        acc->validity_bytes += column_validity_bytes(c, i);
    }
    acc->string_bytes += c->heap.bytes_used;
    acc->region_bytes += c->mem_bytes;
    acc->heap_bytes += c->heap.bytes_reserved;
}

void sto_table_footprint(const sto_table *t, sto_footprint *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < t->nchunks; i++)
        sto_chunk_footprint(t->chunks[i], out);
}

void sto_column_footprint(const sto_table *t, uint32_t col, sto_footprint *out)
{
    memset(out, 0, sizeof(*out));
    if (col >= t->schema->ncols) return;
    bool strings = sto_type_is_string((sto_type_id)t->schema->cols[col].type.id);
    for (size_t i = 0; i < t->nchunks; i++) {
        const sto_chunk *c = t->chunks[i];
        out->chunks++;
        out->rows += c->rows;
        out->value_bytes += column_value_bytes(c, col);
        out->validity_bytes += column_validity_bytes(c, col);
        if (!strings) continue;
        const sto_str *s = c->cols[col];
        for (uint32_t r = 0; r < c->rows; r++)
            if (s[r].len > STO_STR_INLINE_MAX && sto_chunk_is_valid(c, col, r))
                out->string_bytes += s[r].len;
    }
}
