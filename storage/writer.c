/*
 * writer.c — tables out as delimited text (see writer.h).
 *
 * Rows are formatted chunk by chunk into a 64 KiB buffer that is flushed to
 * the stream when nearly full, so the cost per field is a few stores and no
 * stdio call. Raw (.tbl) text has no way to escape a delimiter or a line
 * break inside a value, nor to tell an empty string from NULL; such a value
 * stops the write with an error instead of producing a file that would load
 * back differently. PostgreSQL's text format escapes them and writes NULL as
 * \N, so every value round-trips.
 */
#include "storage/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_BUF        (64u << 10)
#define MAX_FIXED_TEXT 64 /* longest non-string field text (a DOUBLE) */

typedef struct text_out {
    FILE *f;
    char *buf;
    size_t used;
    bool failed;
} text_out;

static void out_flush(text_out *o)
{
    if (o->used && !o->failed && fwrite(o->buf, 1, o->used, o->f) != o->used) o->failed = true;
    o->used = 0;
}

static inline void out_reserve(text_out *o, size_t n)
{
    if (o->used + n > OUT_BUF) out_flush(o);
}

static void out_bytes(text_out *o, const char *p, size_t n)
{
    if (n > OUT_BUF / 2) { /* a huge string goes straight to the stream */
        out_flush(o);
        if (!o->failed && fwrite(p, 1, n, o->f) != n) o->failed = true;
        return;
    }
    out_reserve(o, n);
    memcpy(o->buf + o->used, p, n);
    o->used += n;
}

static inline void out_char(text_out *o, char c)
{
    out_reserve(o, 1);
    o->buf[o->used++] = c;
}

static bool needs_quotes(const char *s, size_t n, char delim)
{
    if (n == 0) return true; /* "" is the empty string; nothing is NULL */
    for (size_t i = 0; i < n; i++)
        if (s[i] == delim || s[i] == '"' || s[i] == '\n' || s[i] == '\r') return true;
    return false;
}

static void out_quoted(text_out *o, const char *s, size_t n)
{
    out_char(o, '"');
    const char *q;
    while ((q = memchr(s, '"', n))) {
        out_bytes(o, s, (size_t)(q - s) + 1);
        out_char(o, '"');
        n -= (size_t)(q - s) + 1;
        s = q + 1;
    }
    out_bytes(o, s, n);
    out_char(o, '"');
}

/* A string in PostgreSQL's text format: backslash, the delimiter and the
 * control characters that would end or cut a field are escaped. Most values
 * need none of it and go out in one copy. */
static void out_escaped(text_out *o, const char *s, size_t n, char delim)
{
    size_t i = 0, from = 0;
    for (; i < n; i++) {
        char c = s[i], e;
        switch (c) {
        case '\\':
            e = '\\';
            break;
        case '\n':
            e = 'n';
            break;
        case '\r':
            e = 'r';
            break;
        case '\t':
            e = 't';
            break;
        case '\b':
            e = 'b';
            break;
        case '\f':
            e = 'f';
            break;
        case '\v':
            e = 'v';
            break;
        default:
            if (c != delim) continue;
            e = c;
        }
        out_bytes(o, s + from, i - from);
        out_char(o, '\\');
        out_char(o, e);
        from = i + 1;
    }
    out_bytes(o, s + from, n - from);
}

/* Formats one non-NULL fixed-width value; returns its length. */
static int format_fixed(const sto_column_def *def, const void *a, uint32_t r, char *buf)
{
    switch ((sto_type_id)def->type.id) {
    case STO_TYPE_BOOLEAN:
        buf[0] = ((const uint8_t *)a)[r] ? 't' : 'f';
        return 1;
    case STO_TYPE_INTEGER:
        return sto_decimal_format(((const int32_t *)a)[r], 0, buf);
    case STO_TYPE_BIGINT:
        return sto_decimal_format(((const int64_t *)a)[r], 0, buf);
    case STO_TYPE_DECIMAL:
        return sto_decimal_format(((const int64_t *)a)[r], def->type.scale, buf);
    case STO_TYPE_DOUBLE:
        return snprintf(buf, MAX_FIXED_TEXT, "%.17g", ((const double *)a)[r]);
    case STO_TYPE_DATE:
        return sto_date_format(((const int32_t *)a)[r], buf);
    default:
        return 0;
    }
}

sto_status sto_write_stream(const sto_table *t, FILE *f, const sto_text_format *fmt,
                            uint64_t *rows_written)
{
    if (rows_written) *rows_written = 0;
    const sto_schema *s = sto_table_schema(t);
    const char delim = fmt->delimiter;
    const bool text = !fmt->csv && !fmt->raw; /* PostgreSQL's text format */
    text_out o = {f, malloc(OUT_BUF), 0, false};
    if (!o.buf) return sto_error_oom();
    if (fmt->header) {
        for (uint32_t c = 0; c < s->ncols; c++) {
            const char *name = s->cols[c].name;
            if (fmt->csv && needs_quotes(name, strlen(name), delim))
                out_quoted(&o, name, strlen(name));
            else
                out_bytes(&o, name, strlen(name));
            if (c + 1 < s->ncols || fmt->trailing_delimiter) out_char(&o, delim);
        }
        out_char(&o, '\n');
    }
    uint64_t rows = 0;
    sto_status st = STO_OK;
    for (size_t k = 0; k < sto_table_nchunks(t) && !st; k++) {
        const sto_chunk *ch = sto_table_chunk(t, k);
        for (uint32_t r = 0; r < ch->rows && !st; r++) {
            for (uint32_t c = 0; c < s->ncols; c++) {
                const sto_column_def *def = &s->cols[c];
                if (sto_chunk_is_valid(ch, c, r)) {
                    if (def->type.id == STO_TYPE_CHAR || def->type.id == STO_TYPE_VARCHAR) {
                        const sto_str *v = &((const sto_str *)ch->cols[c])[r];
                        const char *p = sto_str_data(v);
                        if (fmt->csv && needs_quotes(p, v->len, delim)) {
                            out_quoted(&o, p, v->len);
                        } else if (text) {
                            out_escaped(&o, p, v->len, delim);
                        } else if (!fmt->csv &&
                                   (v->len == 0 || memchr(p, delim, v->len) ||
                                    memchr(p, '\n', v->len) || memchr(p, '\r', v->len))) {
                            st = sto_error(STO_BAD_COPY_FILE_FORMAT,
                                           "row %llu, column \"%s\": an empty string or one "
                                           "holding the delimiter or a line break cannot be "
                                           "written without CSV quoting",
                                           (unsigned long long)rows + 1, def->name);
                            break;
                        } else {
                            out_bytes(&o, p, v->len);
                        }
                    } else {
                        out_reserve(&o, MAX_FIXED_TEXT);
                        o.used += (size_t)format_fixed(def, ch->cols[c], r, o.buf + o.used);
                    }
                } else if (text) {
                    out_bytes(&o, "\\N", 2);
                }
                if (c + 1 < s->ncols || fmt->trailing_delimiter) out_char(&o, delim);
            }
            out_char(&o, '\n');
            rows++;
        }
    }
    out_flush(&o);
    free(o.buf);
    if (!st && (o.failed || fflush(f) != 0))
        st = sto_error(errno == ENOSPC ? STO_DISK_FULL : STO_IO_ERROR, "could not write: %s",
                       strerror(errno));
    if (!st && rows_written) *rows_written = rows;
    return st;
}

/* fsyncs the directory holding `path`, so a rename in it is durable. */
static sto_status sync_parent(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return sto_error_oom();
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (fd < 0) return sto_error(STO_IO_ERROR, "could not open directory of \"%s\"", path);
    int rc = fsync(fd);
    close(fd);
    if (rc != 0) return sto_error(STO_IO_ERROR, "could not fsync directory of \"%s\"", path);
    return STO_OK;
}

sto_status sto_write_file(const sto_table *t, const char *path, const sto_text_format *fmt,
                          uint64_t *rows_written)
{
    if (rows_written) *rows_written = 0;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) return sto_error_oom();
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return sto_error(e == ENOENT ? STO_UNDEFINED_FILE : STO_IO_ERROR,
                         "could not create file \"%s\": %s", path, strerror(e));
    }
    fchmod(fd, 0644);
    sto_status st = STO_OK;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        st = sto_error_oom();
        goto fail;
    }
    st = sto_write_stream(t, f, fmt, rows_written);
    if (!st && fsync(fileno(f)) != 0)
        st = sto_error(STO_IO_ERROR, "could not fsync \"%s\": %s", tmp, strerror(errno));
    if (fclose(f) != 0 && !st)
        st = sto_error(STO_IO_ERROR, "could not write \"%s\": %s", tmp, strerror(errno));
    if (st) goto fail;
    if (rename(tmp, path) != 0) {
        st = sto_error(STO_IO_ERROR, "could not rename \"%s\" to \"%s\": %s", tmp, path,
                       strerror(errno));
        goto fail;
    }
    free(tmp);
    return sync_parent(path);
fail:
    unlink(tmp);
    free(tmp);
    if (st && rows_written) *rows_written = 0;
    if (st) st = sto_status_wrap(st, "COPY TO \"%s\"", path);
    return st;
}
