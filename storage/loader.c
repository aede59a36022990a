/*
 * loader.c — parallel parsing of delimited text into chunks (see loader.h).
 *
 * The steps, each a function below:
 *   1. map the file (or take the caller's buffer) and skip a header line;
 *   2. split: cut the text into one range per thread at record boundaries
 *      (for CSV, boundaries where the count of quotes before them is even,
 *      so a newline inside a quoted field is never taken for one);
 *   3. parse: each thread turns its range into sealed chunks of its own,
 *      parsing numbers and dates in place while it walks the bytes; on bad
 *      input it stops and records the error with the byte offset of the
 *      record and the column;
 *   4. finish: if any thread failed, the error of the earliest range wins
 *      (so the message does not depend on the thread count), the line number
 *      is found by counting newlines up to the record, and every chunk is
 *      freed; otherwise all chunks are appended to the table in file order,
 *      in one step that either takes all of them or none.
 *
 * The parsers of numbers here are fast paths for the common spelling. When
 * one does not match, the field is handed to the strict parser of types.c,
 * which either accepts it (e.g. a DECIMAL that needs rounding) or says why
 * not; the two therefore accept exactly the same inputs.
 */
#include "storage/loader.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/string_dedup.h"

#define DEFAULT_MIN_BYTES_PER_THREAD (1u << 20)
#define MAX_THREADS                  256

sto_text_format sto_text_format_tbl(void)
{
    sto_text_format f = {'|', false, false, true, true};
    return f;
}

sto_text_format sto_text_format_csv(bool header)
{
    sto_text_format f = {',', header, true, false, false};
    return f;
}

/* Dates between these years are parsed with a table of month starts. */
#define DATE_TABLE_FIRST_YEAR 1900
#define DATE_TABLE_YEARS      300

/* What one load shares between its threads (read-only while they run). */
typedef struct load_job {
    const sto_table *table;
    const sto_schema *schema;
    const char *name; /* file name for messages */
    const char *data;
    size_t len;
    sto_text_format fmt;
    /* month_start[y][m]: day number of the first of month m+1 of year
     * DATE_TABLE_FIRST_YEAR + y; [y][12] is the next year's first day.
     * NULL when the table has no DATE column. */
    int32_t (*month_start)[13];
    const atomic_bool *cancel;
    /* data is a read-only private mapping of the file: pages behind each
     * thread's position may be dropped (see release_behind) */
    bool mapped;
} load_job;

/* One thread's range and results. */
typedef struct load_worker {
    const load_job *job;
    size_t begin, end;
    sto_chunk **chunks;
    size_t nchunks, cap;
    uint64_t rows;
    char *scratch; /* unescaped CSV or text-format field */
    size_t scratch_cap;
    /* per column: repeated long strings of the open chunk stored once
     * (NULL when out of memory: every string is copied) */
    sto_dedup *dedup;
    /* On error: the status (message without location), the record's byte
     * offset and the 0-based column (ncols = after the last one). */
    sto_status err;
    size_t err_offset;
    uint32_t err_col;
    pthread_t thread;
} load_worker;

/* --- fast parsers ------------------------------------------------------------
 * Each reads from p, never at or past `le` (the end of the line), and returns
 * the position after the value, or NULL when the field is not in the common
 * form; the caller then checks that a delimiter or the line end follows. */

static inline bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool is_digit(char c)
{
    return (unsigned)(c - '0') < 10;
}

static inline const char *fast_int(const char *p, const char *le, int64_t *out)
{
    bool neg = false;
    if (p < le && *p == '-') {
        neg = true;
        p++;
    }
    const char *d = p;
    uint64_t v = 0;
    while (p < le && is_digit(*p) && p - d < 18)
        v = v * 10 + (uint64_t)(*p++ - '0');
    if (p == d || (p < le && is_digit(*p))) return NULL;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return p;
}

/* "-?digits(.digits)?" with at most `scale` fraction digits and at most
 * precision - scale integer digits (so no range check is needed after). */
static inline const char *fast_decimal(const char *p, const char *le, int precision, int scale,
                                       int64_t *out)
{
    bool neg = false;
    if (p < le && *p == '-') {
        neg = true;
        p++;
    }
    const char *d = p;
    int64_t v = 0;
    while (p < le && is_digit(*p))
        v = v * 10 + (*p++ - '0');
    int idigits = (int)(p - d);
    if (idigits == 0 || idigits > precision - scale) return NULL;
    int f = 0;
    if (p < le && *p == '.') {
        p++;
        while (p < le && is_digit(*p) && f < scale) {
            v = v * 10 + (*p++ - '0');
            f++;
        }
        if (f == 0 || (p < le && is_digit(*p))) return NULL;
    }
    v *= sto_pow10[scale - f];
    *out = neg ? -v : v;
    return p;
}

/* "YYYY-MM-DD" in the years the month table covers; other years and any
 * error go to the strict parser. p has 10 readable bytes. */
static inline bool fast_date(const load_job *job, const char *p, int32_t *out)
{
    if (p[4] != '-' || p[7] != '-') return false;
    unsigned y0 = (unsigned)(p[0] - '0'), y1 = (unsigned)(p[1] - '0'), y2 = (unsigned)(p[2] - '0'),
             y3 = (unsigned)(p[3] - '0'), m0 = (unsigned)(p[5] - '0'), m1 = (unsigned)(p[6] - '0'),
             d0 = (unsigned)(p[8] - '0'), d1 = (unsigned)(p[9] - '0');
    if (y0 > 9 || y1 > 9 || y2 > 9 || y3 > 9 || m0 > 9 || m1 > 9 || d0 > 9 || d1 > 9) return false;
    unsigned y = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
    unsigned m = m0 * 10 + m1, d = d0 * 10 + d1;
    unsigned yi = y - DATE_TABLE_FIRST_YEAR;
    if (yi >= DATE_TABLE_YEARS || m - 1 > 11 || d == 0) return false;
    const int32_t *ms = job->month_start[yi];
    if ((int32_t)d > ms[m] - ms[m - 1]) return false;
    *out = ms[m - 1] + (int32_t)d - 1;
    return true;
}

/* --- errors ------------------------------------------------------------------- */

static sto_status field_error(load_worker *w, const char *rec, uint32_t col, const char *code,
                              const char *what, const char *f, size_t flen)
{
    w->err_offset = (size_t)(rec - w->job->data);
    w->err_col = col;
    int shown = flen > 64 ? 64 : (int)flen;
    w->err = sto_error(code, "%s: \"%.*s%s\"", what, shown, f, flen > 64 ? "..." : "");
    return w->err;
}

static sto_status record_error(load_worker *w, const char *rec, uint32_t col, const char *code,
                               const char *what)
{
    w->err_offset = (size_t)(rec - w->job->data);
    w->err_col = col;
    w->err = sto_error(code, "%s", what);
    return w->err;
}

/* --- one field ------------------------------------------------------------------ */

/* Parses a non-empty field [f, fe) of column `col` the strict way into row r
 * of chunk c; used for strings, quoted fields, and whatever the fast paths
 * did not take. */
static sto_status store_text(load_worker *w, sto_chunk *c, uint32_t col, uint32_t r,
                             const char *rec, const char *f, size_t flen)
{
    const sto_column_def *def = &w->job->schema->cols[col];
    void *a = c->cols[col];
    char tn[80];
    /* PostgreSQL's input functions for numbers, dates and booleans skip white
     * space around the value (messages still show the field as written) */
    const char *orig = f;
    size_t orig_len = flen;
    if (def->type.id != STO_TYPE_CHAR && def->type.id != STO_TYPE_VARCHAR) {
        while (flen > 0 && is_blank(*f)) {
            f++;
            flen--;
        }
        while (flen > 0 && is_blank(f[flen - 1]))
            flen--;
    }
    switch ((sto_type_id)def->type.id) {
    case STO_TYPE_BOOLEAN: {
        static const char *const yes[] = {"t", "true", "y", "yes", "on", "1"};
        static const char *const no[] = {"f", "false", "n", "no", "off", "0"};
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
            if (flen == strlen(yes[i]) && strncasecmp(f, yes[i], flen) == 0) {
                ((uint8_t *)a)[r] = 1;
                return STO_OK;
            }
            if (flen == strlen(no[i]) && strncasecmp(f, no[i], flen) == 0) {
                ((uint8_t *)a)[r] = 0;
                return STO_OK;
            }
        }
        return field_error(w, rec, col, STO_INVALID_TEXT_REPRESENTATION,
                           "invalid input syntax for type BOOLEAN", orig, orig_len);
    }
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT: {
        bool i32 = def->type.id == STO_TYPE_INTEGER;
        int64_t v;
        sto_parse_result pr =
            sto_int_parse(f, flen, i32 ? INT32_MIN : INT64_MIN, i32 ? INT32_MAX : INT64_MAX, &v);
        if (pr == STO_PARSE_OK) {
            if (i32)
                ((int32_t *)a)[r] = (int32_t)v;
            else
                ((int64_t *)a)[r] = v;
            return STO_OK;
        }
        snprintf(tn, sizeof(tn), "value out of range for type %s", i32 ? "INTEGER" : "BIGINT");
        if (pr == STO_PARSE_OUT_OF_RANGE)
            return field_error(w, rec, col, STO_NUMERIC_VALUE_OUT_OF_RANGE, tn, orig, orig_len);
        snprintf(tn, sizeof(tn), "invalid input syntax for type %s", i32 ? "INTEGER" : "BIGINT");
        return field_error(w, rec, col, STO_INVALID_TEXT_REPRESENTATION, tn, orig, orig_len);
    }
    case STO_TYPE_DECIMAL: {
        int64_t v;
        sto_parse_result pr = sto_decimal_parse(f, flen, def->type.precision, def->type.scale, &v);
        if (pr == STO_PARSE_OK) {
            ((int64_t *)a)[r] = v;
            return STO_OK;
        }
        char ty[32];
        sto_type_format(def->type, ty, sizeof(ty));
        if (pr == STO_PARSE_OUT_OF_RANGE) {
            snprintf(tn, sizeof(tn), "value out of range for type %s", ty);
            return field_error(w, rec, col, STO_NUMERIC_VALUE_OUT_OF_RANGE, tn, orig, orig_len);
        }
        return field_error(w, rec, col, STO_INVALID_TEXT_REPRESENTATION,
                           "invalid input syntax for type DECIMAL", orig, orig_len);
    }
    case STO_TYPE_DOUBLE: {
        double v;
        sto_parse_result pr = sto_double_parse(f, flen, &v);
        if (pr == STO_PARSE_OK) {
            ((double *)a)[r] = v;
            return STO_OK;
        }
        if (pr == STO_PARSE_OUT_OF_RANGE)
            return field_error(w, rec, col, STO_NUMERIC_VALUE_OUT_OF_RANGE,
                               "value out of range for type DOUBLE", orig, orig_len);
        return field_error(w, rec, col, STO_INVALID_TEXT_REPRESENTATION,
                           "invalid input syntax for type DOUBLE", orig, orig_len);
    }
    case STO_TYPE_DATE: {
        int32_t v;
        if (sto_date_parse(f, flen, &v)) {
            ((int32_t *)a)[r] = v;
            return STO_OK;
        }
        /* Well-formed digits naming a day that does not exist is a range
         * error in PostgreSQL's terms; anything else is a format error. */
        bool shaped = flen == 10 && f[4] == '-' && f[7] == '-';
        for (size_t i = 0; shaped && i < 10; i++)
            if (i != 4 && i != 7 && !is_digit(f[i])) shaped = false;
        if (shaped)
            return field_error(w, rec, col, STO_DATETIME_FIELD_OVERFLOW,
                               "date field value out of range", orig, orig_len);
        return field_error(w, rec, col, STO_INVALID_DATETIME_FORMAT,
                           "invalid input syntax for type DATE", orig, orig_len);
    }
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR: {
        uint32_t len = flen > UINT32_MAX ? UINT32_MAX : (uint32_t)flen;
        if (flen > UINT32_MAX || !sto_string_fit(def->type, f, &len)) {
            sto_type_format(def->type, tn, sizeof(tn));
            char what[128];
            snprintf(what, sizeof(what), "value too long for type %s", tn);
            return field_error(w, rec, col, STO_STRING_DATA_RIGHT_TRUNCATION, what, orig, orig_len);
        }
        if (!sto_chunk_make_str(c, f, len, &((sto_str *)a)[r])) return w->err = sto_error_oom();
        return STO_OK;
    }
    default:
        return record_error(w, rec, col, STO_INTERNAL_ERROR, "column of unknown type");
    }
}

/* Reads a quoted CSV field starting at the opening quote *p. The unescaped
 * content is left in w->scratch (or points into the input when it has no
 * escapes); returns the position after the closing quote, NULL if none. */
static const char *read_quoted(load_worker *w, const char *p, const char *end, const char **f,
                               size_t *flen)
{
    const char *s = p + 1;
    const char *q = memchr(s, '"', (size_t)(end - s));
    if (!q) return NULL;
    if (q + 1 >= end || q[1] != '"') { /* no escapes: the common case */
        *f = s;
        *flen = (size_t)(q - s);
        return q + 1;
    }
    size_t n = 0;
    for (;;) {
        size_t piece = (size_t)(q - s) + 1; /* keep one quote of the pair */
        if (n + piece > w->scratch_cap) {
            size_t cap = w->scratch_cap ? w->scratch_cap : 256;
            while (cap < n + piece)
                cap *= 2;
            char *grown = realloc(w->scratch, cap);
            if (!grown) {
                w->err = sto_error_oom();
                return NULL;
            }
            w->scratch = grown;
            w->scratch_cap = cap;
        }
        memcpy(w->scratch + n, s, piece);
        n += piece;
        s = q + 2;
        q = memchr(s, '"', (size_t)(end - s));
        if (!q) return NULL;
        if (q + 1 >= end || q[1] != '"') break;
    }
    size_t piece = (size_t)(q - s);
    if (n + piece > w->scratch_cap) {
        char *grown = realloc(w->scratch, n + piece);
        if (!grown) {
            w->err = sto_error_oom();
            return NULL;
        }
        w->scratch = grown;
        w->scratch_cap = n + piece;
    }
    memcpy(w->scratch + n, s, piece);
    *f = w->scratch;
    *flen = n + piece;
    return q + 1;
}

/* Room for n bytes in w->scratch; false when memory ran out. */
static bool scratch_reserve(load_worker *w, size_t n)
{
    if (n <= w->scratch_cap) return true;
    size_t cap = w->scratch_cap ? w->scratch_cap : 256;
    while (cap < n)
        cap *= 2;
    char *grown = realloc(w->scratch, cap);
    if (!grown) {
        w->err = sto_error_oom();
        return false;
    }
    w->scratch = grown;
    w->scratch_cap = cap;
    return true;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads a field of PostgreSQL's text format from p up to the first
 * unescaped delimiter or le, decoding its escapes into w->scratch (*f, *flen);
 * *is_null when the field is exactly \N. Returns the field's end, NULL
 * when memory ran out. */
static const char *read_escaped(load_worker *w, const char *p, const char *le, char delim,
                                const char **f, size_t *flen, bool *is_null)
{
    *is_null = le - p >= 2 && p[0] == '\\' && p[1] == 'N' && (p + 2 == le || p[2] == delim);
    if (*is_null) return p + 2;
    /* decoding never makes a field longer */
    if (!scratch_reserve(w, (size_t)(le - p))) return NULL;
    char *o = w->scratch;
    while (p < le && *p != delim) {
        char c = *p++;
        if (c != '\\' || p == le) {
            *o++ = c;
            continue;
        }
        c = *p++;
        switch (c) {
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'v':
            *o++ = '\v';
            break;
        case 'x':
            if (p < le && hex_value(*p) >= 0) {
                int v = hex_value(*p++);
                if (p < le && hex_value(*p) >= 0) v = v * 16 + hex_value(*p++);
                *o++ = (char)v;
            } else {
                *o++ = 'x';
            }
            break;
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0';
                for (int k = 0; k < 2 && p < le && *p >= '0' && *p <= '7'; k++)
                    v = v * 8 + (*p++ - '0');
                *o++ = (char)v;
            } else {
                *o++ = c; /* \\, \<delimiter> and any other byte stand for themselves */
            }
        }
    }
    *f = w->scratch;
    *flen = (size_t)(o - w->scratch);
    return p;
}

/* --- one range ------------------------------------------------------------------ */

static sto_status next_chunk(load_worker *w, sto_chunk **c)
{
    if (*c) sto_chunk_seal(*c);
    if (w->nchunks == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        sto_chunk **grown = realloc(w->chunks, cap * sizeof(*grown));
        if (!grown) return sto_error_oom();
        w->chunks = grown;
        w->cap = cap;
    }
    STO_TRY(sto_chunk_new(w->job->schema, STO_CHUNK_ROWS, c));
    w->chunks[w->nchunks++] = *c;
    for (uint32_t i = 0; w->dedup && i < w->job->schema->ncols; i++)
        sto_dedup_reset(&w->dedup[i]);
    return STO_OK;
}

/* Parses one record starting at `rec` into row r of c; returns the start of
 * the next record via *next. */
static sto_status parse_record(load_worker *w, sto_chunk *c, uint32_t r, const char *rec,
                               const char *end, const char **next)
{
    const load_job *job = w->job;
    const sto_schema *s = job->schema;
    const char delim = job->fmt.delimiter;
    const bool csv = job->fmt.csv, trailing = job->fmt.trailing_delimiter;
    const bool text = !csv && !job->fmt.raw; /* PostgreSQL's text format */
    const char *nl = memchr(rec, '\n', (size_t)(end - rec));
    const char *le = nl ? nl : end;
    *next = nl ? nl + 1 : end;
    if (le > rec && le[-1] == '\r') le--;
    /* a text record without a backslash has nothing to decode and takes the
     * fast paths below, like the other formats */
    const bool escapes = text && memchr(rec, '\\', (size_t)(le - rec));

    const char *p = rec;
    bool ended = false;
    for (uint32_t col = 0; col < s->ncols; col++) {
        const sto_column_def *def = &s->cols[col];
        if (ended) {
            char what[160];
            snprintf(what, sizeof(what), "missing data for column \"%s\"", def->name);
            return record_error(w, rec, col, STO_BAD_COPY_FILE_FORMAT, what);
        }
        void *a = c->cols[col];
        const char *fe = NULL; /* end of the field: at a delimiter or le */
        const char *f;
        size_t flen;
        bool is_null = false;
        if (escapes) {
            fe = read_escaped(w, p, le, delim, &f, &flen, &is_null);
            if (!fe) return w->err;
        }
        if (escapes && !is_null) {
            if (c->validity[col]) sto_bitmap_set(c->validity[col], r);
            STO_TRY(store_text(w, c, col, r, rec, f, flen));
        } else if (csv && p < le && *p == '"') {
            const char *after = read_quoted(w, p, end, &f, &flen);
            if (!after) {
                if (w->err) return w->err;
                return record_error(w, rec, col, STO_BAD_COPY_FILE_FORMAT,
                                    "unterminated CSV quoted field");
            }
            if (after > le) { /* the field held newlines: the record goes on */
                nl = memchr(after, '\n', (size_t)(end - after));
                le = nl ? nl : end;
                *next = nl ? nl + 1 : end;
                if (le > after && le[-1] == '\r') le--;
            }
            if (after < le && *after != delim)
                return record_error(w, rec, col, STO_BAD_COPY_FILE_FORMAT,
                                    "unexpected characters after a quoted field");
            if (c->validity[col]) sto_bitmap_set(c->validity[col], r);
            STO_TRY(store_text(w, c, col, r, rec, f, flen));
            fe = after;
        } else if (is_null || (!text && (p == le || *p == delim))) { /* NULL */
            if (def->not_null) {
                char what[160];
                snprintf(what, sizeof(what),
                         "null value in column \"%s\" violates not-null constraint", def->name);
                return record_error(w, rec, col, STO_NOT_NULL_VIOLATION, what);
            }
            size_t width = sto_type_width((sto_type_id)def->type.id);
            memset((char *)a + (size_t)r * width, 0, width);
            sto_bitmap_clear(c->validity[col], r);
            if (!is_null) fe = p;
        } else {
            if (c->validity[col]) sto_bitmap_set(c->validity[col], r);
            int64_t v;
            switch ((sto_type_id)def->type.id) {
            case STO_TYPE_INTEGER:
                fe = fast_int(p, le, &v);
                if (fe && (fe == le || *fe == delim) && v >= INT32_MIN && v <= INT32_MAX)
                    ((int32_t *)a)[r] = (int32_t)v;
                else
                    fe = NULL;
                break;
            case STO_TYPE_BIGINT:
                fe = fast_int(p, le, &v);
                if (fe && (fe == le || *fe == delim))
                    ((int64_t *)a)[r] = v;
                else
                    fe = NULL;
                break;
            case STO_TYPE_DECIMAL:
                fe = fast_decimal(p, le, def->type.precision, def->type.scale, &v);
                if (fe && (fe == le || *fe == delim))
                    ((int64_t *)a)[r] = v;
                else
                    fe = NULL;
                break;
            case STO_TYPE_DATE: {
                int32_t d;
                if (le - p >= 10 && (p + 10 == le || p[10] == delim) && fast_date(job, p, &d)) {
                    ((int32_t *)a)[r] = d;
                    fe = p + 10;
                }
                break;
            }
            case STO_TYPE_CHAR:
            case STO_TYPE_VARCHAR: {
                const char *dp = p < le ? memchr(p, delim, (size_t)(le - p)) : NULL;
                const char *se = dp ? dp : le;
                if (def->type.id == STO_TYPE_CHAR)
                    while (se > p && se[-1] == ' ')
                        se--;
                uint32_t len = (uint32_t)(se - p);
                if (def->type.length && len > def->type.length) break; /* the slow path decides */
                sto_str *out = &((sto_str *)a)[r];
                if (len <= STO_STR_INLINE_MAX) {
                    memset(out, 0, sizeof(*out));
                    out->len = len;
                    memcpy(out->prefix, p, len);
                } else {
                    const char *copy = w->dedup
                                           ? sto_dedup_store(&w->dedup[col], &c->heap, p, len, NULL)
                                           : sto_heap_copy(&c->heap, p, len);
                    if (!copy) return w->err = sto_error_oom();
                    out->len = len;
                    memcpy(out->prefix, p, 4);
                    out->u.ptr = copy;
                }
                fe = dp ? dp : le;
                break;
            }
            default:
                break;
            }
            if (!fe) { /* whatever the fast paths left */
                const char *dp = memchr(p, delim, (size_t)(le - p));
                fe = dp ? dp : le;
                STO_TRY(store_text(w, c, col, r, rec, p, (size_t)(fe - p)));
            }
        }
        if (fe >= le) {
            ended = true;
        } else {
            p = fe + 1;
            if (trailing && p == le) ended = true;
        }
    }
    if (!ended)
        return record_error(w, rec, s->ncols, STO_BAD_COPY_FILE_FORMAT,
                            "extra data after last expected column");
    return STO_OK;
}

/* Drops the mapped file's pages in [*from, p) rounded in to whole pages
 * from the process's resident memory, once a thread has parsed them. The
 * text is read once, and without this a load holds every page of its file
 * until it ends: at SF 10 lineitem.tbl (7.7 GB) sat beside the tables it
 * became. The pages stay in the page cache (reclaimable, and a second load
 * of the file still finds them); anything that reads them again (an error
 * message counting lines) faults them back in from the file. */
static void release_behind(const load_job *job, const char **from, const char *p)
{
    const uintptr_t page = 4096;
    if (!job->mapped) return;
    uintptr_t lo = ((uintptr_t)*from + page - 1) & ~(page - 1);
    uintptr_t hi = (uintptr_t)p & ~(page - 1);
    if (hi <= lo) return;
    madvise((void *)lo, hi - lo, MADV_DONTNEED);
    *from = (const char *)hi;
}

/* Sets up w->dedup for the string columns that can hold long values; leaves
 * it NULL (copying every string) when memory is short. */
static void dedup_init(load_worker *w)
{
    const sto_schema *s = w->job->schema;
    w->dedup = calloc(s->ncols, sizeof(*w->dedup));
    for (uint32_t i = 0; w->dedup && i < s->ncols; i++) {
        if (!sto_dedup_applies(s->cols[i].type)) continue;
        if (!sto_dedup_init(&w->dedup[i])) {
            for (uint32_t j = 0; j < i; j++)
                sto_dedup_free(&w->dedup[j]);
            free(w->dedup);
            w->dedup = NULL;
        }
    }
}

static void dedup_free(load_worker *w)
{
    for (uint32_t i = 0; w->dedup && i < w->job->schema->ncols; i++)
        sto_dedup_free(&w->dedup[i]);
    free(w->dedup);
    w->dedup = NULL;
}

static void *parse_range(void *arg)
{
    load_worker *w = arg;
    dedup_init(w);
    const char *p = w->job->data + w->begin;
    const char *end = w->job->data + w->end;
    const char *released = p; /* pages before it are dropped */
    sto_chunk *c = NULL;
    const atomic_bool *cancel = w->job->cancel;
    while (p < end) {
        if (!c || sto_chunk_full(c)) {
            release_behind(w->job, &released, p);
            sto_status st = cancel && atomic_load_explicit(cancel, memory_order_relaxed)
                                ? sto_error(STO_QUERY_CANCELED, "canceling load on user request")
                                : next_chunk(w, &c);
            if (st) {
                w->err = st;
                w->err_offset = (size_t)(p - w->job->data);
                w->err_col = 0;
                return NULL;
            }
        }
        const char *next;
        if (parse_record(w, c, c->rows, p, end, &next)) return NULL;
        c->rows++;
        w->rows++;
        p = next;
    }
    if (c) sto_chunk_seal(c);
    release_behind(w->job, &released, p);
    return NULL;
}

/* --- splitting --------------------------------------------------------------------- */

/* Counts quotes in [p, e). */
static size_t count_quotes(const char *p, const char *e)
{
    size_t n = 0;
    while (p < e && (p = memchr(p, '"', (size_t)(e - p)))) {
        n++;
        p++;
    }
    return n;
}

/* Chooses range starts: bounds[0] = start, bounds[n] = len, each bound the
 * first byte of a record. Returns how many ranges are non-empty. */
static int split(const load_job *job, size_t start, int n, size_t *bounds)
{
    const char *d = job->data;
    size_t len = job->len;
    bool quotes = job->fmt.csv && memchr(d + start, '"', len - start) != NULL;
    size_t cursor = start; /* quotes before cursor are counted in `parity` */
    size_t parity = 0;
    bounds[0] = start;
    for (int k = 1; k < n; k++) {
        size_t pos = start + (len - start) / (size_t)n * (size_t)k;
        if (pos < bounds[k - 1]) pos = bounds[k - 1];
        for (;;) {
            const char *nl = pos < len ? memchr(d + pos, '\n', len - pos) : NULL;
            if (!nl) {
                pos = len;
                break;
            }
            size_t at = (size_t)(nl - d);
            if (quotes) {
                parity += count_quotes(d + cursor, nl);
                cursor = at;
                if (parity & 1) {
                    pos = at + 1;
                    continue;
                }
            }
            pos = at + 1;
            break;
        }
        bounds[k] = pos;
    }
    bounds[n] = len;
    return n;
}

/* 1-based line of the byte at `offset`. */
static uint64_t line_of(const char *d, size_t offset)
{
    uint64_t line = 1;
    const char *p = d, *e = d + offset;
    while (p < e && (p = memchr(p, '\n', (size_t)(e - p)))) {
        line++;
        p++;
    }
    return line;
}

static sto_status load_text(sto_table *t, const char *name, const char *data, size_t len,
                            bool mapped, const sto_load_options *opt, uint64_t *rows_loaded)
{
    if (rows_loaded) *rows_loaded = 0;
    load_job job = {.table = t,
                    .schema = sto_table_schema(t),
                    .name = name,
                    .data = data,
                    .len = len,
                    .fmt = opt->format,
                    .cancel = opt->cancel,
                    .mapped = mapped};
    if (job.schema->ncols == 0)
        return sto_error(STO_FEATURE_NOT_SUPPORTED, "%s: cannot load a table without columns",
                         name);
    if (job.fmt.delimiter == '\n' || job.fmt.delimiter == '\r' ||
        (job.fmt.csv && job.fmt.delimiter == '"'))
        return sto_error(STO_INVALID_PARAMETER_VALUE, "%s: invalid delimiter", name);
    for (uint32_t i = 0; i < job.schema->ncols; i++) {
        if (job.schema->cols[i].type.id != STO_TYPE_DATE || job.month_start) continue;
        job.month_start = malloc(sizeof(int32_t[DATE_TABLE_YEARS][13]));
        if (!job.month_start) return sto_error_oom();
        for (int y = 0; y < DATE_TABLE_YEARS; y++)
            for (int m = 0; m < 13; m++)
                job.month_start[y][m] =
                    m < 12 ? sto_date_from_ymd(DATE_TABLE_FIRST_YEAR + y, m + 1, 1)
                           : sto_date_from_ymd(DATE_TABLE_FIRST_YEAR + y + 1, 1, 1);
    }
    size_t start = 0;
    if (job.fmt.header) {
        const char *nl = memchr(data, '\n', len);
        start = nl ? (size_t)(nl - data) + 1 : len;
    }

    int n = opt->threads > 0 ? opt->threads : 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    size_t min_bytes =
        opt->min_bytes_per_thread ? opt->min_bytes_per_thread : DEFAULT_MIN_BYTES_PER_THREAD;
    size_t most = (len - start) / min_bytes;
    if ((size_t)n > most) n = most > 0 ? (int)most : 1;

    size_t bounds[MAX_THREADS + 1];
    split(&job, start, n, bounds);
    load_worker *w = calloc((size_t)n, sizeof(*w));
    if (!w) {
        free(job.month_start);
        return sto_error_oom();
    }
    int started = 0;
    sto_status st = STO_OK;
    for (int k = 0; k < n; k++) {
        w[k].job = &job;
        w[k].begin = bounds[k];
        w[k].end = bounds[k + 1];
    }
    /* Range 0 runs on the calling thread; if a thread cannot be started
     * its range runs here too. */
    for (int k = 1; k < n; k++) {
        if (pthread_create(&w[k].thread, NULL, parse_range, &w[k]) != 0) break;
        started = k;
    }
    parse_range(&w[0]);
    for (int k = 1; k <= started; k++)
        pthread_join(w[k].thread, NULL);
    for (int k = started + 1; k < n; k++)
        parse_range(&w[k]);

    for (int k = 0; k < n && !st; k++) {
        if (!w[k].err) continue;
        st = w[k].err;
        w[k].err = NULL;
        if (st != sto_error_oom() && strcmp(st->sqlstate, STO_QUERY_CANCELED) != 0) {
            uint64_t line = line_of(data, w[k].err_offset);
            uint32_t col = w[k].err_col;
            if (col < job.schema->ncols)
                st = sto_status_wrap(st, "%s: line %llu, column %u (%s)", name,
                                     (unsigned long long)line, col + 1, job.schema->cols[col].name);
            else
                st = sto_status_wrap(st, "%s: line %llu, column %u", name, (unsigned long long)line,
                                     col + 1);
        }
    }
    uint64_t rows = 0;
    size_t total = 0;
    for (int k = 0; k < n; k++) {
        sto_status_free(w[k].err);
        rows += w[k].rows;
        total += w[k].nchunks;
    }
    sto_chunk **all = NULL;
    if (!st && total) {
        all = malloc(total * sizeof(*all));
        if (!all) st = sto_error_oom();
    }
    if (!st && total) {
        size_t i = 0;
        for (int k = 0; k < n; k++)
            for (size_t j = 0; j < w[k].nchunks; j++)
                all[i++] = w[k].chunks[j];
        st = sto_table_append_chunks(t, all, total);
        if (!st)
            for (int k = 0; k < n; k++)
                w[k].nchunks = 0; /* owned by the table now */
    }
    for (int k = 0; k < n; k++) {
        for (size_t j = 0; j < w[k].nchunks; j++)
            sto_chunk_free(w[k].chunks[j]);
        free(w[k].chunks);
        free(w[k].scratch);
        dedup_free(&w[k]);
    }
    free(all);
    free(w);
    free(job.month_start);
    if (!st && rows_loaded) *rows_loaded = rows;
    return st;
}

sto_status sto_load_buffer(sto_table *t, const char *name, const char *data, size_t len,
                           const sto_load_options *opt, uint64_t *rows_loaded)
{
    return load_text(t, name, data, len, false, opt, rows_loaded);
}

sto_status sto_load_file(sto_table *t, const char *path, const sto_load_options *opt,
                         uint64_t *rows_loaded)
{
    if (rows_loaded) *rows_loaded = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return sto_error(e == ENOENT ? STO_UNDEFINED_FILE : STO_IO_ERROR,
                         "could not open file \"%s\" for reading: %s", path, strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return sto_error(STO_IO_ERROR, "could not stat file \"%s\": %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return sto_error(STO_IO_ERROR, "could not read file \"%s\": not a regular file", path);
    }
    size_t len = (size_t)sb.st_size;
    const char *name = path;
    if (len == 0) {
        close(fd);
        return sto_load_buffer(t, name, "", 0, opt, rows_loaded);
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return sto_error(STO_IO_ERROR, "could not read file \"%s\": %s", path, strerror(e));
    madvise(map, len, MADV_SEQUENTIAL);
    sto_status st = load_text(t, name, map, len, true, opt, rows_loaded);
    munmap(map, len);
    return st;
}
