/*
 * stmt_split.c — finding where one SQL statement ends in a text.
 *
 * Statements are separated by `;`, but a `;` inside a string ('it''s;'),
 * an E'...' string with backslash escapes, a quoted identifier ("a;b"), a
 * dollar-quoted string ($$...$$, $tag$...$tag$), a line comment (-- ...) or
 * a block comment (/ * ... * /, nested as in PostgreSQL) does not end one.
 * The same scan tells a shell whether its input is complete, and lets
 * rackdb_next run one statement at a time so that an error in the third
 * statement does not stop the first two.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "engine/instance.h"
#include "rackdb.h"

/* Past a quoted run opened at text[i] by `q`; `backslash` for E'' strings.
 * *closed is false when the text ends before the closing quote. */
static size_t skip_quoted(const char *text, size_t len, size_t i, char q, bool backslash,
                          bool *closed)
{
    for (i++; i < len; i++) {
        if (backslash && text[i] == '\\') {
            i++;
        } else if (text[i] == q) {
            if (i + 1 < len && text[i + 1] == q) {
                i++; /* a doubled quote stands for one */
            } else {
                *closed = true;
                return i + 1;
            }
        }
    }
    *closed = false;
    return len;
}

/* Past a block comment opened at text[i]. */
static size_t skip_block_comment(const char *text, size_t len, size_t i, bool *closed)
{
    int depth = 0;
    while (i + 1 < len) {
        if (text[i] == '/' && text[i + 1] == '*') {
            depth++;
            i += 2;
        } else if (text[i] == '*' && text[i + 1] == '/') {
            i += 2;
            if (--depth == 0) {
                *closed = true;
                return i;
            }
        } else {
            i++;
        }
    }
    *closed = false;
    return len;
}

/* At text[i] == '$': the length of a dollar-quote tag ($$ or $name$), or 0
 * when this `$` does not open one (a parameter like $1). */
static size_t dollar_tag(const char *text, size_t len, size_t i)
{
    size_t j = i + 1;
    if (j < len && isdigit((unsigned char)text[j])) return 0;
    while (j < len && (isalnum((unsigned char)text[j]) || text[j] == '_'))
        j++;
    return j < len && text[j] == '$' ? j - i + 1 : 0;
}

/* Where the token starting at text[i] ends, for the kinds that can hide a
 * `;` (other characters are tokens of one byte here); *closed is false when
 * the text ends inside it. */
static size_t skip_token(const char *text, size_t len, size_t i, bool *closed)
{
    char c = text[i];
    *closed = true;
    if (c == '\'' || c == '"') {
        /* E'...' (not the end of an identifier like "name'") takes escapes. */
        bool backslash = c == '\'' && i > 0 && (text[i - 1] == 'E' || text[i - 1] == 'e') &&
                         (i < 2 || !(isalnum((unsigned char)text[i - 2]) || text[i - 2] == '_'));
        return skip_quoted(text, len, i, c, backslash, closed);
    }
    if (c == '-' && i + 1 < len && text[i + 1] == '-') {
        const char *nl = memchr(text + i, '\n', len - i);
        return nl ? (size_t)(nl - text) + 1 : len;
    }
    if (c == '/' && i + 1 < len && text[i + 1] == '*')
        return skip_block_comment(text, len, i, closed);
    if (c == '$') {
        size_t tag = dollar_tag(text, len, i);
        if (tag) {
            for (size_t j = i + tag; j + tag <= len; j++)
                if (memcmp(text + j, text + i, tag) == 0) return j + tag;
            *closed = false;
            return len;
        }
    }
    return i + 1;
}

size_t rackdb_statement_length(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (text[i] == ';') return i + 1;
        bool closed;
        i = skip_token(text, len, i, &closed);
        if (!closed) return 0;
    }
    return 0;
}

size_t eng_blank_prefix(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)text[i];
        if (isspace(c)) {
            i++;
        } else if (c == '-' && i + 1 < len && text[i + 1] == '-') {
            bool closed;
            i = skip_token(text, len, i, &closed);
        } else if (c == '/' && i + 1 < len && text[i + 1] == '*') {
            bool closed;
            size_t end = skip_token(text, len, i, &closed);
            if (!closed) break; /* not blank: the parser reports it */
            i = end;
        } else {
            break;
        }
    }
    return i;
}

bool rackdb_is_blank(const char *text, size_t len)
{
    return eng_blank_prefix(text, len) == len;
}
