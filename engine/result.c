/*
 * result.c — statement results: command tags, rows in chunks, and the
 * rackdb_result_* accessors of the public API.
 *
 * Rows appended one at a time go into chunks that start small and double up
 * to STO_CHUNK_ROWS, so a SHOW with one row does not allocate 64K-row column
 * arrays. Random access by row number finds the chunk by binary search over
 * the chunks' first rows, remembering the last chunk hit because printers
 * walk rows in order.
 */
#include "engine/result.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_CHUNK_ROWS 64u

struct rackdb_result {
    char *tag;          /* explicit tag, or NULL: "SELECT <rows>" */
    char auto_tag[32];  /* "SELECT <rows>", kept current */
    sto_schema *schema; /* NULL for tag-only results */
    char (*type_names)[40];
    sto_chunk **chunks;
    uint64_t *starts; /* starts[i]: global number of chunk i's first row */
    size_t nchunks, chunk_cap;
    uint64_t rows;
    size_t cursor; /* chunk of the last lookup */
    double elapsed_ms;
    double compile_ms; /* JIT compile time of a query (executor) */
    char *text;        /* buffer behind rackdb_result_text */
    size_t text_cap;
};

static char *vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static eng_result *result_alloc(void)
{
    eng_result *r = calloc(1, sizeof(*r));
    if (r) snprintf(r->auto_tag, sizeof(r->auto_tag), "SELECT 0");
    return r;
}

sto_status eng_result_new_tag(eng_result **out, const char *fmt, ...)
{
    eng_result *r = result_alloc();
    if (!r) return sto_error_oom();
    va_list ap;
    va_start(ap, fmt);
    r->tag = vformat(fmt, ap);
    va_end(ap);
    if (!r->tag) {
        free(r);
        return sto_error_oom();
    }
    *out = r;
    return STO_OK;
}

sto_status eng_result_new_rows(const sto_schema *schema, eng_result **out)
{
    eng_result *r = result_alloc();
    if (!r) return sto_error_oom();
    sto_status st = sto_schema_copy(schema, &r->schema);
    if (st) {
        free(r);
        return st;
    }
    r->type_names = calloc(schema->ncols ? schema->ncols : 1, sizeof(*r->type_names));
    if (!r->type_names) {
        rackdb_result_free(r);
        return sto_error_oom();
    }
    for (uint32_t i = 0; i < schema->ncols; i++)
        sto_type_format(schema->cols[i].type, r->type_names[i], sizeof(r->type_names[i]));
    *out = r;
    return STO_OK;
}

sto_status eng_result_set_tag(eng_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *tag = vformat(fmt, ap);
    va_end(ap);
    if (!tag) return sto_error_oom();
    free(r->tag);
    r->tag = tag;
    return STO_OK;
}

const sto_schema *eng_result_schema(const eng_result *r)
{
    return r->schema;
}

void eng_result_set_elapsed(eng_result *r, double ms)
{
    r->elapsed_ms = ms;
}

void eng_result_set_compile_ms(eng_result *r, double ms)
{
    r->compile_ms = ms;
}

/* Adds a chunk at the end; the caller keeps it on failure. */
static sto_status push_chunk(eng_result *r, sto_chunk *c)
{
    if (r->nchunks == r->chunk_cap) {
        size_t cap = r->chunk_cap ? 2 * r->chunk_cap : 4;
        sto_chunk **chunks = realloc(r->chunks, cap * sizeof(*chunks));
        if (!chunks) return sto_error_oom();
        r->chunks = chunks;
        uint64_t *starts = realloc(r->starts, cap * sizeof(*starts));
        if (!starts) return sto_error_oom();
        r->starts = starts;
        r->chunk_cap = cap;
    }
    r->starts[r->nchunks] = r->rows;
    r->chunks[r->nchunks++] = c;
    r->rows += c->rows;
    snprintf(r->auto_tag, sizeof(r->auto_tag), "SELECT %" PRIu64, r->rows);
    return STO_OK;
}

sto_status eng_result_append_row(eng_result *r, const sto_value *values)
{
    if (!r->schema) return sto_error(STO_INTERNAL_ERROR, "result has no columns");
    sto_chunk *last = r->nchunks ? r->chunks[r->nchunks - 1] : NULL;
    if (!last || last->sealed || sto_chunk_full(last)) {
        uint32_t cap = last ? last->capacity * 2 : FIRST_CHUNK_ROWS;
        if (cap > STO_CHUNK_ROWS) cap = STO_CHUNK_ROWS;
        sto_chunk *c;
        STO_TRY(sto_chunk_new(r->schema, cap, &c));
        sto_status st = push_chunk(r, c);
        if (st) {
            sto_chunk_free(c);
            return st;
        }
        last = c;
    }
    STO_TRY(sto_chunk_append_row(last, values));
    r->rows++;
    snprintf(r->auto_tag, sizeof(r->auto_tag), "SELECT %" PRIu64, r->rows);
    return STO_OK;
}

sto_status eng_result_append_chunk(eng_result *r, sto_chunk *chunk)
{
    if (!r->schema || chunk->schema->ncols != r->schema->ncols) {
        sto_chunk_free(chunk);
        return sto_error(STO_INTERNAL_ERROR, "chunk does not match the result's columns");
    }
    sto_chunk_seal(chunk);
    sto_status st = push_chunk(r, chunk);
    if (st) sto_chunk_free(chunk);
    return st;
}

void rackdb_result_free(rackdb_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nchunks; i++)
        sto_chunk_free(r->chunks[i]);
    free(r->chunks);
    free(r->starts);
    free(r->type_names);
    sto_schema_free(r->schema);
    free(r->tag);
    free(r->text);
    free(r);
}

/* --- formatting -------------------------------------------------------------- */

/* Shortest text that reads back as the same double, laid out as PostgreSQL
 * prints it: plain digits for decimal exponents -4..14, else d.ddde+XX. */
static size_t format_double(double d, char *buf, size_t size)
{
    if (isnan(d)) return (size_t)snprintf(buf, size, "NaN");
    if (isinf(d)) return (size_t)snprintf(buf, size, d > 0 ? "Infinity" : "-Infinity");
    if (d == 0) return (size_t)snprintf(buf, size, signbit(d) ? "-0" : "0");
    char tmp[40];
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(tmp, sizeof(tmp), "%.*e", digits - 1, d);
        if (strtod(tmp, NULL) == d) break;
    }
    snprintf(tmp, sizeof(tmp), "%.*e", digits - 1, d);
    int exp10 = atoi(strchr(tmp, 'e') + 1);
    if (exp10 < -4 || exp10 >= 15) return (size_t)snprintf(buf, size, "%s", tmp);
    int decimals = digits - 1 - exp10;
    return (size_t)snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, d);
}

size_t eng_value_format(sto_type t, const sto_value *v, char *buf, size_t size)
{
    char tmp[40];
    switch ((sto_type_id)t.id) {
    case STO_TYPE_BOOLEAN:
        return (size_t)snprintf(buf, size, "%s", v->v.i64 ? "t" : "f");
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
        return (size_t)snprintf(buf, size, "%" PRId64, v->v.i64);
    case STO_TYPE_DECIMAL:
        sto_decimal_format(v->v.i64, t.scale, tmp);
        return (size_t)snprintf(buf, size, "%s", tmp);
    case STO_TYPE_DOUBLE:
        return format_double(v->v.f64, buf, size);
    case STO_TYPE_DATE:
        sto_date_format((int32_t)v->v.i64, tmp);
        return (size_t)snprintf(buf, size, "%s", tmp);
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR: {
        size_t len = v->v.str.len;
        if (size) {
            size_t n = len < size - 1 ? len : size - 1;
            memcpy(buf, sto_str_data(&v->v.str), n);
            buf[n] = '\0';
        }
        return len;
    }
    case STO_TYPE_COUNT:
        break;
    }
    return (size_t)snprintf(buf, size, "?");
}

/* --- the public accessors ------------------------------------------------------ */

const char *rackdb_result_tag(const rackdb_result *r)
{
    return r->tag ? r->tag : r->auto_tag;
}

bool rackdb_result_has_rows(const rackdb_result *r)
{
    return r->schema != NULL;
}

double rackdb_result_elapsed_ms(const rackdb_result *r)
{
    return r->elapsed_ms;
}

double rackdb_result_compile_ms(const rackdb_result *r)
{
    return r->compile_ms;
}

uint32_t rackdb_result_column_count(const rackdb_result *r)
{
    return r->schema ? r->schema->ncols : 0;
}

uint64_t rackdb_result_row_count(const rackdb_result *r)
{
    return r->rows;
}

const char *rackdb_result_column_name(const rackdb_result *r, uint32_t col)
{
    return r->schema && col < r->schema->ncols ? r->schema->cols[col].name : NULL;
}

const char *rackdb_result_column_type(const rackdb_result *r, uint32_t col)
{
    return r->schema && col < r->schema->ncols ? r->type_names[col] : NULL;
}

uint32_t rackdb_result_column_oid(const rackdb_result *r, uint32_t col)
{
    if (!r->schema || col >= r->schema->ncols) return 0;
    return sto_type_pg_oid((sto_type_id)r->schema->cols[col].type.id);
}

int rackdb_result_column_scale(const rackdb_result *r, uint32_t col)
{
    if (!r->schema || col >= r->schema->ncols) return 0;
    return r->schema->cols[col].type.id == STO_TYPE_DECIMAL ? r->schema->cols[col].type.scale : 0;
}

bool rackdb_result_column_is_numeric(const rackdb_result *r, uint32_t col)
{
    if (!r->schema || col >= r->schema->ncols) return false;
    switch ((sto_type_id)r->schema->cols[col].type.id) {
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
    case STO_TYPE_DECIMAL:
    case STO_TYPE_DOUBLE:
        return true;
    default:
        return false;
    }
}

/* The chunk holding global row `row` and the row inside it; false when out
 * of range. */
static bool locate(const rackdb_result *r, uint64_t row, uint32_t col, const sto_chunk **c,
                   uint32_t *local)
{
    if (!r->schema || row >= r->rows || col >= r->schema->ncols) return false;
    size_t i = r->cursor < r->nchunks ? r->cursor : 0;
    if (!(row >= r->starts[i] && row < r->starts[i] + r->chunks[i]->rows)) {
        size_t lo = 0, hi = r->nchunks; /* last chunk with start <= row */
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (r->starts[mid] <= row)
                lo = mid;
            else
                hi = mid;
        }
        i = lo;
        /* Empty chunks share their start with the next one. */
        while (i + 1 < r->nchunks && row >= r->starts[i] + r->chunks[i]->rows)
            i++;
        ((rackdb_result *)r)->cursor = i;
    }
    *c = r->chunks[i];
    *local = (uint32_t)(row - r->starts[i]);
    return true;
}

/* The value at (row, col); is_null set for NULLs and for out-of-range cells. */
static sto_value value_at(const rackdb_result *r, uint64_t row, uint32_t col)
{
    const sto_chunk *c;
    uint32_t local;
    sto_value v;
    memset(&v, 0, sizeof(v));
    v.is_null = true;
    if (!locate(r, row, col, &c, &local)) return v;
    if (!sto_chunk_is_valid(c, col, local)) return v;
    return sto_chunk_get(c, col, local);
}

bool rackdb_result_is_null(const rackdb_result *r, uint64_t row, uint32_t col)
{
    return value_at(r, row, col).is_null;
}

const char *rackdb_result_text(rackdb_result *r, uint64_t row, uint32_t col)
{
    sto_value v = value_at(r, row, col);
    if (v.is_null) return NULL;
    sto_type t = r->schema->cols[col].type;
    size_t need = eng_value_format(t, &v, r->text, r->text_cap);
    if (need >= r->text_cap) {
        size_t cap = need + 1 > 64 ? need + 1 : 64;
        char *text = realloc(r->text, cap);
        if (!text) return NULL;
        r->text = text;
        r->text_cap = cap;
        eng_value_format(t, &v, r->text, r->text_cap);
    }
    return r->text;
}

int64_t rackdb_result_int64(const rackdb_result *r, uint64_t row, uint32_t col)
{
    sto_value v = value_at(r, row, col);
    if (v.is_null) return 0;
    if (r->schema->cols[col].type.id == STO_TYPE_DOUBLE) return (int64_t)v.v.f64;
    if (r->schema->cols[col].type.id >= STO_TYPE_CHAR) return 0;
    return v.v.i64;
}

double rackdb_result_double(const rackdb_result *r, uint64_t row, uint32_t col)
{
    sto_value v = value_at(r, row, col);
    if (v.is_null) return 0;
    sto_type t = r->schema->cols[col].type;
    switch ((sto_type_id)t.id) {
    case STO_TYPE_DOUBLE:
        return v.v.f64;
    case STO_TYPE_DECIMAL: {
        double scale = 1;
        for (int i = 0; i < t.scale; i++)
            scale *= 10;
        return (double)v.v.i64 / scale;
    }
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        return 0;
    default:
        return (double)v.v.i64;
    }
}

bool rackdb_result_bool(const rackdb_result *r, uint64_t row, uint32_t col)
{
    return rackdb_result_int64(r, row, col) != 0;
}

int32_t rackdb_result_date(const rackdb_result *r, uint64_t row, uint32_t col)
{
    if (r->schema && col < r->schema->ncols && r->schema->cols[col].type.id != STO_TYPE_DATE)
        return 0;
    return (int32_t)rackdb_result_int64(r, row, col);
}
