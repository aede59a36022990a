/*
 * error_format.c — psql-style error text with a caret under the position.
 *
 * Positions are 1-based character positions (UTF-8 continuation bytes do not
 * count), as in sto_status. A position just past the end of the text (how
 * "syntax error at end of input" points) puts the caret after the last
 * character of the last line.
 */
#include "sql/error_format.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* psql's screen limits: lines wider than this are cut, and a cut on the
 * right keeps at least MIN_RIGHT_CUT characters after the caret. */
#define DISPLAY_SIZE  60
#define MIN_RIGHT_CUT 10

typedef struct out {
    char *buf;
    size_t size, len; /* len counts everything, written or not */
} out;

static void emit(out *o, const char *s, size_t n)
{
    if (o->len < o->size) {
        size_t room = o->size - 1 - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static void emitf(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emitf(out *o, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0) emit(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static bool is_char_start(char c)
{
    return ((unsigned char)c & 0xC0) != 0x80;
}

/* Byte offset of the character `index` characters after byte `from`,
 * stopping at `limit`. */
static size_t skip_chars(const char *s, size_t from, size_t limit, size_t index)
{
    size_t i = from;
    while (i < limit && index > 0) {
        i++;
        while (i < limit && !is_char_start(s[i]))
            i++;
        index--;
    }
    return i;
}

static bool is_line_end(char c)
{
    return c == '\n' || c == '\r';
}

/* The LINE and caret lines for a 1-based character position in text. */
static void format_position(out *o, const char *text, int position)
{
    size_t len = strlen(text);
    /* Find the byte of the position and the line it lies on. */
    size_t at = 0, line_start = 0;
    int line_no = 1;
    for (int chars = 1; at < len && chars < position; chars++) {
        if (text[at] == '\n' || (text[at] == '\r' && text[at + 1] != '\n')) {
            line_no++;
            line_start = at + 1;
        }
        at = skip_chars(text, at, len, 1);
    }
    if (at >= len && position > 1) {
        /* Past the end: point after the last character of the last line. */
        at = len;
    }
    size_t line_end = at;
    while (line_end < len && !is_line_end(text[line_end]))
        line_end++;
    /* At the very end of a text that ends in a newline, show the line before. */
    if (at == len && at == line_start && line_start > 0) {
        size_t prev_end = line_start - 1;
        if (prev_end > 0 && text[prev_end] == '\n' && text[prev_end - 1] == '\r') prev_end--;
        size_t prev_start = prev_end;
        while (prev_start > 0 && !is_line_end(text[prev_start - 1]))
            prev_start--;
        line_start = prev_start;
        line_end = at = prev_end;
        line_no--;
    }

    /* Measure in characters: the line's width and the caret's column. */
    size_t width = 0, col = 0;
    for (size_t i = line_start; i < line_end; i = skip_chars(text, i, line_end, 1)) {
        if (i < at) col++;
        width++;
    }

    /* Cut a window of at most DISPLAY_SIZE characters around the caret. */
    size_t beg = 0, end = width;
    bool cut_left = false, cut_right = false;
    if (width > DISPLAY_SIZE) {
        if (col + MIN_RIGHT_CUT <= DISPLAY_SIZE) {
            end = DISPLAY_SIZE;
            cut_right = true;
        } else {
            if (col + MIN_RIGHT_CUT < width) {
                end = col + MIN_RIGHT_CUT;
                cut_right = true;
            }
            if (end > DISPLAY_SIZE) {
                beg = end - DISPLAY_SIZE;
                cut_left = true;
            }
        }
    }

    char prefix[32];
    int prefix_len = snprintf(prefix, sizeof(prefix), "LINE %d: ", line_no);
    emit(o, prefix, (size_t)prefix_len);
    if (cut_left) emit(o, "...", 3);
    size_t from = skip_chars(text, line_start, line_end, beg);
    size_t to = skip_chars(text, line_start, line_end, end);
    for (size_t i = from; i < to; i++)
        emit(o, text[i] == '\t' ? " " : &text[i], 1);
    if (cut_right) emit(o, "...", 3);
    emit(o, "\n", 1);

    size_t indent = (size_t)prefix_len + (cut_left ? 3 : 0) + (col - beg);
    for (size_t i = 0; i < indent; i++)
        emit(o, " ", 1);
    emit(o, "^\n", 2);
}

size_t sql_format_error(const char *text, sto_status st, char *buf, size_t size)
{
    out o = {buf, size, 0};
    if (st) {
        emitf(&o, "ERROR:  ");
        emit(&o, st->message, strlen(st->message));
        emit(&o, "\n", 1);
        if (text && st->position > 0) format_position(&o, text, st->position);
    }
    if (size > 0) buf[o.len < size ? o.len : size - 1] = '\0';
    return o.len;
}
