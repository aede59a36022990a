/*
 * table.c — tables as lists of immutable chunks (see table.h).
 */
#include "storage/table.h"

#include <stdlib.h>
#include <string.h>

sto_status sto_table_new(const sto_schema *schema, sto_table **out)
{
    *out = NULL;
    sto_table *t = calloc(1, sizeof(*t));
    if (!t) return sto_error_oom();
    sto_status st = sto_schema_copy(schema, &t->schema);
    if (st) {
        free(t);
        return st;
    }
    t->stats = calloc(schema->ncols ? schema->ncols : 1, sizeof(*t->stats));
    if (!t->stats) {
        sto_schema_free(t->schema);
        free(t);
        return sto_error_oom();
    }
    pthread_mutex_init(&t->lock, NULL);
    *out = t;
    return STO_OK;
}

void sto_table_free(sto_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nchunks; i++)
        sto_chunk_free(t->chunks[i]);
    free(t->chunks);
    free(t->stats);
    sto_schema_free(t->schema);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

sto_status sto_table_new_chunk(const sto_table *t, uint32_t capacity, sto_chunk **out)
{
    return sto_chunk_new(t->schema, capacity, out);
}

static void merge_chunk_stats(sto_table *t, const sto_chunk *c)
{
    for (uint32_t i = 0; i < t->schema->ncols; i++)
        sto_stats_merge(&t->stats[i], &c->stats[i], t->schema->cols[i].type);
}

sto_status sto_table_append_chunks(sto_table *t, sto_chunk *const *chunks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (chunks[i]->schema != t->schema && !sto_schema_equal(chunks[i]->schema, t->schema))
            return sto_error(STO_DATATYPE_MISMATCH, "chunk does not match the table's columns");
    pthread_mutex_lock(&t->lock);
    if (t->nchunks + n > t->chunk_cap) {
        size_t cap = t->chunk_cap ? t->chunk_cap : 8;
        while (cap < t->nchunks + n)
            cap *= 2;
        sto_chunk **grown = realloc(t->chunks, cap * sizeof(*grown));
        if (!grown) {
            pthread_mutex_unlock(&t->lock);
            return sto_error_oom();
        }
        t->chunks = grown;
        t->chunk_cap = cap;
    }
    /* Nothing below can fail: the table takes every chunk. */
    for (size_t i = 0; i < n; i++) {
        sto_chunk *c = chunks[i];
        if (c->rows == 0) {
            sto_chunk_free(c);
            continue;
        }
        /* Chunks built against an equal copy of the schema now point at ours. */
        c->schema = t->schema;
        sto_chunk_seal(c);
        t->chunks[t->nchunks++] = c;
        t->rows += c->rows;
        merge_chunk_stats(t, c);
    }
    pthread_mutex_unlock(&t->lock);
    return STO_OK;
}

void sto_table_truncate(sto_table *t, uint64_t rows)
{
    if (rows >= t->rows) return;
    pthread_mutex_lock(&t->lock);
    uint64_t kept = 0;
    size_t keep = 0;
    while (keep < t->nchunks && kept + t->chunks[keep]->rows <= rows)
        kept += t->chunks[keep++]->rows;
    if (keep < t->nchunks && kept < rows) {
        sto_chunk_truncate(t->chunks[keep], (uint32_t)(rows - kept));
        kept = rows;
        keep++;
    }
    for (size_t i = keep; i < t->nchunks; i++)
        sto_chunk_free(t->chunks[i]);
    t->nchunks = keep;
    t->rows = kept;
    for (uint32_t i = 0; i < t->schema->ncols; i++)
        sto_stats_init(&t->stats[i]);
    for (size_t i = 0; i < t->nchunks; i++)
        merge_chunk_stats(t, t->chunks[i]);
    pthread_mutex_unlock(&t->lock);
}

sto_value sto_table_get(const sto_table *t, uint32_t col, uint64_t row)
{
    for (size_t i = 0; i < t->nchunks; i++) {
        if (row < t->chunks[i]->rows) return sto_chunk_get(t->chunks[i], col, (uint32_t)row);
        row -= t->chunks[i]->rows;
    }
    sto_value v;
    memset(&v, 0, sizeof(v));
    v.is_null = true;
    return v;
}

/* --- appender -------------------------------------------------------------- */

struct sto_appender {
    sto_table *table;
    sto_chunk **chunks;
    size_t n, cap;
};

sto_status sto_appender_new(sto_table *t, sto_appender **out)
{
    *out = calloc(1, sizeof(**out));
    if (!*out) return sto_error_oom();
    (*out)->table = t;
    return STO_OK;
}

sto_status sto_appender_row(sto_appender *a, const sto_value *values)
{
    if (a->n == 0 || sto_chunk_full(a->chunks[a->n - 1])) {
        if (a->n == a->cap) {
            size_t cap = a->cap ? a->cap * 2 : 4;
            sto_chunk **grown = realloc(a->chunks, cap * sizeof(*grown));
            if (!grown) return sto_error_oom();
            a->chunks = grown;
            a->cap = cap;
        }
        /* The first chunk starts small: most row-wise inserts are a few rows. */
        uint32_t capacity = a->n == 0 ? 1024 : STO_CHUNK_ROWS;
        STO_TRY(sto_chunk_new(a->table->schema, capacity, &a->chunks[a->n]));
        a->n++;
    }
    return sto_chunk_append_row(a->chunks[a->n - 1], values);
}

sto_status sto_appender_commit(sto_appender *a)
{
    STO_TRY(sto_table_append_chunks(a->table, a->chunks, a->n));
    a->n = 0; /* the table owns them now */
    return STO_OK;
}

void sto_appender_free(sto_appender *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->n; i++)
        sto_chunk_free(a->chunks[i]);
    free(a->chunks);
    free(a);
}
