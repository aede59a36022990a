/*
 * token.c — the hand-written SQL scanner.
 *
 * The scanner works on bytes and counts characters alongside: every byte
 * that does not continue a UTF-8 sequence starts a character, so `pos` in
 * tokens and errors is a character position, as PostgreSQL clients expect.
 * Bytes >= 0x80 are allowed in identifiers, strings and comments, so UTF-8
 * names work unquoted.
 */
#include "sql/token.h"

#include <ctype.h>
#include <string.h>

/* Every keyword, sorted by name (binary search; a test checks the order). */
#define SQL_KEYWORD_LIST(X)                                                                        \
    X("all", TK_ALL)                                                                               \
    X("analyze", TK_ANALYZE)                                                                       \
    X("and", TK_AND)                                                                               \
    X("any", TK_ANY)                                                                               \
    X("as", TK_AS)                                                                                 \
    X("asc", TK_ASC)                                                                               \
    X("begin", TK_BEGIN)                                                                           \
    X("between", TK_BETWEEN)                                                                       \
    X("both", TK_BOTH)                                                                             \
    X("by", TK_BY)                                                                                 \
    X("call", TK_CALL)                                                                             \
    X("cascade", TK_CASCADE)                                                                       \
    X("case", TK_CASE)                                                                             \
    X("cast", TK_CAST)                                                                             \
    X("commit", TK_COMMIT)                                                                         \
    X("copy", TK_COPY)                                                                             \
    X("create", TK_CREATE)                                                                         \
    X("cross", TK_CROSS)                                                                           \
    X("date", TK_DATE)                                                                             \
    X("default", TK_DEFAULT)                                                                       \
    X("desc", TK_DESC)                                                                             \
    X("distinct", TK_DISTINCT)                                                                     \
    X("drop", TK_DROP)                                                                             \
    X("else", TK_ELSE)                                                                             \
    X("end", TK_END)                                                                               \
    X("escape", TK_ESCAPE)                                                                         \
    X("except", TK_EXCEPT)                                                                         \
    X("exists", TK_EXISTS)                                                                         \
    X("explain", TK_EXPLAIN)                                                                       \
    X("extract", TK_EXTRACT)                                                                       \
    X("false", TK_FALSE)                                                                           \
    X("fetch", TK_FETCH)                                                                           \
    X("first", TK_FIRST)                                                                           \
    X("for", TK_FOR)                                                                               \
    X("from", TK_FROM)                                                                             \
    X("full", TK_FULL)                                                                             \
    X("group", TK_GROUP)                                                                           \
    X("having", TK_HAVING)                                                                         \
    X("if", TK_IF)                                                                                 \
    X("ilike", TK_ILIKE)                                                                           \
    X("in", TK_IN)                                                                                 \
    X("inner", TK_INNER)                                                                           \
    X("insert", TK_INSERT)                                                                         \
    X("intersect", TK_INTERSECT)                                                                   \
    X("interval", TK_INTERVAL)                                                                     \
    X("into", TK_INTO)                                                                             \
    X("is", TK_IS)                                                                                 \
    X("join", TK_JOIN)                                                                             \
    X("key", TK_KEY)                                                                               \
    X("last", TK_LAST)                                                                             \
    X("leading", TK_LEADING)                                                                       \
    X("left", TK_LEFT)                                                                             \
    X("like", TK_LIKE)                                                                             \
    X("limit", TK_LIMIT)                                                                           \
    X("next", TK_NEXT)                                                                             \
    X("not", TK_NOT)                                                                               \
    X("null", TK_NULL)                                                                             \
    X("nulls", TK_NULLS)                                                                           \
    X("offset", TK_OFFSET)                                                                         \
    X("on", TK_ON)                                                                                 \
    X("only", TK_ONLY)                                                                             \
    X("or", TK_OR)                                                                                 \
    X("order", TK_ORDER)                                                                           \
    X("outer", TK_OUTER)                                                                           \
    X("position", TK_POSITION)                                                                     \
    X("precision", TK_PRECISION)                                                                   \
    X("primary", TK_PRIMARY)                                                                       \
    X("restrict", TK_RESTRICT)                                                                     \
    X("right", TK_RIGHT)                                                                           \
    X("rollback", TK_ROLLBACK)                                                                     \
    X("row", TK_ROW)                                                                               \
    X("rows", TK_ROWS)                                                                             \
    X("select", TK_SELECT)                                                                         \
    X("set", TK_SET)                                                                               \
    X("show", TK_SHOW)                                                                             \
    X("some", TK_SOME)                                                                             \
    X("start", TK_START)                                                                           \
    X("stdin", TK_STDIN)                                                                           \
    X("stdout", TK_STDOUT)                                                                         \
    X("substring", TK_SUBSTRING)                                                                   \
    X("table", TK_TABLE)                                                                           \
    X("then", TK_THEN)                                                                             \
    X("to", TK_TO)                                                                                 \
    X("trailing", TK_TRAILING)                                                                     \
    X("transaction", TK_TRANSACTION)                                                               \
    X("trim", TK_TRIM)                                                                             \
    X("true", TK_TRUE)                                                                             \
    X("union", TK_UNION)                                                                           \
    X("using", TK_USING)                                                                           \
    X("values", TK_VALUES)                                                                         \
    X("varying", TK_VARYING)                                                                       \
    X("view", TK_VIEW)                                                                             \
    X("when", TK_WHEN)                                                                             \
    X("where", TK_WHERE)                                                                           \
    X("with", TK_WITH)                                                                             \
    X("work", TK_WORK)

typedef struct keyword {
    const char *name;
    int code;
} keyword;

static const keyword keywords[] = {
#define KEYWORD_ENTRY(name, code) {name, code},
    SQL_KEYWORD_LIST(KEYWORD_ENTRY)
#undef KEYWORD_ENTRY
};

#define KEYWORD_COUNT   ((int)(sizeof(keywords) / sizeof(keywords[0])))
#define KEYWORD_MAX_LEN 16

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

int sql_keyword_code(const char *word, int len)
{
    char low[KEYWORD_MAX_LEN + 1];
    if (len <= 0 || len > KEYWORD_MAX_LEN) return TK_ID;
    for (int i = 0; i < len; i++)
        low[i] = ascii_lower(word[i]);
    low[len] = '\0';
    int lo = 0, hi = KEYWORD_COUNT - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(low, keywords[mid].name);
        if (c == 0) return keywords[mid].code;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return TK_ID;
}

int sql_keyword_count(void)
{
    return KEYWORD_COUNT;
}

const char *sql_keyword_name(int i)
{
    return (i >= 0 && i < KEYWORD_COUNT) ? keywords[i].name : NULL;
}

/* ------------------------------------------------------------- scanning -- */

static bool is_ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_ident_char(unsigned char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

void sql_lexer_init(sql_lexer *lx, const char *text)
{
    lx->text = text;
    lx->offset = 0;
    lx->pos = 1;
}

/* Moves the lexer to byte offset `to`, counting the characters passed. */
static void advance_to(sql_lexer *lx, int to)
{
    for (int i = lx->offset; i < to; i++)
        if (((unsigned char)lx->text[i] & 0xC0) != 0x80) lx->pos++;
    lx->offset = to;
}

/* Up to 40 bytes of the text from `offset`, cut at a character boundary:
 * PostgreSQL quotes the whole rest of an unterminated token; a bounded
 * excerpt keeps messages readable. */
static int excerpt_len(const char *text, int offset)
{
    int n = 0;
    while (text[offset + n] && n < 40)
        n++;
    while (n > 0 && text[offset + n] && ((unsigned char)text[offset + n] & 0xC0) == 0x80)
        n--;
    return n;
}

static sto_status lex_error(const sql_lexer *lx, int offset, int len, const char *what)
{
    /* The position of byte `offset`: lx->pos counts up to lx->offset. */
    int pos = lx->pos;
    for (int i = lx->offset; i < offset; i++)
        if (((unsigned char)lx->text[i] & 0xC0) != 0x80) pos++;
    return sto_error_at(STO_SYNTAX_ERROR, pos, "%s at or near \"%.*s\"", what, len,
                        lx->text + offset);
}

/* Skips blanks and comments. An unterminated block comment is an error. */
static sto_status skip_blanks(sql_lexer *lx)
{
    const char *t = lx->text;
    int i = lx->offset;
    for (;;) {
        unsigned char c = (unsigned char)t[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            i++;
        } else if (c == '-' && t[i + 1] == '-') {
            while (t[i] && t[i] != '\n')
                i++;
        } else if (c == '/' && t[i + 1] == '*') {
            int start = i, depth = 1;
            i += 2;
            while (depth > 0) {
                if (!t[i]) {
                    advance_to(lx, start);
                    return lex_error(lx, start, excerpt_len(t, start), "unterminated /* comment");
                }
                if (t[i] == '*' && t[i + 1] == '/') {
                    depth--;
                    i += 2;
                } else if (t[i] == '/' && t[i + 1] == '*') {
                    depth++;
                    i += 2;
                } else {
                    i++;
                }
            }
        } else {
            break;
        }
    }
    advance_to(lx, i);
    return STO_OK;
}

/* A quoted token ('string' or "identifier") starting at i; a doubled quote
 * inside stands for one. Returns the offset just past the closing quote, or
 * -1 when the text ends first. */
static int scan_quoted(const char *t, int i, char quote)
{
    i++;
    for (;;) {
        if (!t[i]) return -1;
        if (t[i] == quote) {
            if (t[i + 1] == quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i++;
    }
}

/* A number: digits [. digits] [e [+-] digits], or . digits [...]. Sets *type
 * to TK_INTEGER (digits only) or TK_NUMBER. Returns the end offset. */
static int scan_number(const char *t, int i, int *type)
{
    *type = TK_INTEGER;
    while (is_digit((unsigned char)t[i]))
        i++;
    if (t[i] == '.' && t[i + 1] != '.') {
        *type = TK_NUMBER;
        i++;
        while (is_digit((unsigned char)t[i]))
            i++;
    }
    if (t[i] == 'e' || t[i] == 'E') {
        int j = i + 1;
        if (t[j] == '+' || t[j] == '-') j++;
        if (is_digit((unsigned char)t[j])) {
            *type = TK_NUMBER;
            while (is_digit((unsigned char)t[j]))
                j++;
            i = j;
        }
        /* else: "1e" — the 'e' is trailing junk, reported by the caller */
    }
    return i;
}

/* What one backslash escape of an E'...' string stands for: the escape's
 * length in bytes and the byte it makes (-1 for \u, which makes UTF-8). */
static int escape_at(const char *s, int *value)
{
    /* s points just after the backslash */
    switch (s[0]) {
    case 'b':
        *value = '\b';
        return 1;
    case 'f':
        *value = '\f';
        return 1;
    case 'n':
        *value = '\n';
        return 1;
    case 'r':
        *value = '\r';
        return 1;
    case 't':
        *value = '\t';
        return 1;
    case 'x': {
        int n = 0, v = 0;
        while (n < 2 && isxdigit((unsigned char)s[1 + n])) {
            char h = s[1 + n];
            v = v * 16 + (isdigit((unsigned char)h) ? h - '0' : (h | 0x20) - 'a' + 10);
            n++;
        }
        if (n == 0) break; /* "\x" alone is an x */
        *value = v;
        return 1 + n;
    }
    case 'u': {
        int v = 0;
        for (int n = 1; n <= 4; n++) {
            char h = s[n];
            if (!isxdigit((unsigned char)h)) return 0;
            v = v * 16 + (isdigit((unsigned char)h) ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        *value = -1 - v; /* a code point, encoded by the caller */
        return 5;
    }
    default:
        if (s[0] >= '0' && s[0] <= '7') {
            int n = 0, v = 0;
            while (n < 3 && s[n] >= '0' && s[n] <= '7')
                v = v * 8 + (s[n++] - '0');
            *value = v & 0xFF;
            return n;
        }
        break;
    }
    *value = (unsigned char)s[0]; /* any other character stands for itself */
    return 1;
}

/* E'...' (PostgreSQL's escape string): backslash escapes as in C plus
 * \xHH, \ooo and \uXXXX; '' is a quote too. A zero byte cannot be in a
 * string, so an escape that makes one is an error, as is a bad \u. */
static sto_status scan_escape_string(sql_lexer *lx, int start, int *end)
{
    const char *t = lx->text;
    int i = start + 2;
    for (;;) {
        if (!t[i]) return lex_error(lx, start, excerpt_len(t, start), "unterminated quoted string");
        if (t[i] == '\\') {
            if (!t[i + 1])
                return lex_error(lx, start, excerpt_len(t, start), "unterminated quoted string");
            int value, n = escape_at(t + i + 1, &value);
            if (n == 0 || value == 0 || value == -1 ||
                (value < -1 && -1 - value >= 0xD800 && -1 - value <= 0xDFFF))
                return lex_error(lx, i, n ? 1 + n : 2, "invalid escape in string");
            i += 1 + n;
        } else if (t[i] == '\'') {
            if (t[i + 1] != '\'') break;
            i += 2;
        } else {
            i++;
        }
    }
    *end = i + 1;
    return STO_OK;
}

sto_status sql_lexer_next(sql_lexer *lx, sql_token *tok)
{
    STO_TRY(skip_blanks(lx));
    const char *t = lx->text;
    int i = lx->offset;
    unsigned char c = (unsigned char)t[i];
    int type, end = i + 1;

    tok->offset = i;
    tok->pos = lx->pos;
    if (c == '\0') {
        tok->type = SQL_TOKEN_EOF;
        tok->len = 0;
        return STO_OK;
    }

    if ((c == 'e' || c == 'E') && t[i + 1] == '\'') {
        sto_status st = scan_escape_string(lx, i, &end);
        if (st) return st;
        type = TK_STRING;
    } else if (is_ident_start(c)) {
        while (is_ident_char((unsigned char)t[end]))
            end++;
        type = sql_keyword_code(t + i, end - i);
    } else if (is_digit(c) || (c == '.' && is_digit((unsigned char)t[i + 1]))) {
        end = scan_number(t, i, &type);
        if (is_ident_char((unsigned char)t[end])) {
            int junk = end;
            while (is_ident_char((unsigned char)t[junk]))
                junk++;
            return lex_error(lx, i, junk - i, "trailing junk after numeric literal");
        }
    } else if (c == '\'' || c == '"') {
        end = scan_quoted(t, i, (char)c);
        if (end < 0) {
            return lex_error(lx, i, excerpt_len(t, i),
                             c == '\'' ? "unterminated quoted string"
                                       : "unterminated quoted identifier");
        }
        if (c == '"' && end == i + 2)
            return lex_error(lx, i, 2, "zero-length delimited identifier");
        type = c == '\'' ? TK_STRING : TK_ID;
    } else if (c == '$' && is_digit((unsigned char)t[i + 1])) {
        while (is_digit((unsigned char)t[end]))
            end++;
        if (is_ident_char((unsigned char)t[end])) {
            int junk = end;
            while (is_ident_char((unsigned char)t[junk]))
                junk++;
            return lex_error(lx, i, junk - i, "trailing junk after parameter");
        }
        type = TK_PARAM;
    } else {
        char d = t[i + 1];
        switch (c) {
        case ';':
            type = TK_SEMI;
            break;
        case '(':
            type = TK_LP;
            break;
        case ')':
            type = TK_RP;
            break;
        case ',':
            type = TK_COMMA;
            break;
        case '.':
            type = TK_DOT;
            break;
        case '*':
            type = TK_STAR;
            break;
        case '+':
            type = TK_PLUS;
            break;
        case '-':
            type = TK_MINUS;
            break;
        case '/':
            type = TK_SLASH;
            break;
        case '%':
            type = TK_PERCENT;
            break;
        case '=':
            type = TK_EQ;
            if (d == '>') type = TK_ARROW, end++;
            break;
        case '<':
            type = TK_LT;
            if (d == '=')
                type = TK_LE, end++;
            else if (d == '>')
                type = TK_NE, end++;
            break;
        case '>':
            type = TK_GT;
            if (d == '=') type = TK_GE, end++;
            break;
        case '!':
            if (d != '=') return lex_error(lx, i, 1, "syntax error");
            type = TK_NE, end++;
            break;
        case '|':
            if (d != '|') return lex_error(lx, i, 1, "syntax error");
            type = TK_CONCAT, end++;
            break;
        case ':':
            if (d != ':') return lex_error(lx, i, 1, "syntax error");
            type = TK_TYPECAST, end++;
            break;
        default: {
            /* One whole character, so the message shows it intact. */
            int n = 1;
            while (t[i + n] && ((unsigned char)t[i + n] & 0xC0) == 0x80 && n < 4)
                n++;
            return lex_error(lx, i, n, "syntax error");
        }
        }
    }
    tok->type = type;
    tok->len = end - i;
    advance_to(lx, end);
    return STO_OK;
}

/* ---------------------------------------------------------------- values -- */

char *sql_token_text(sql_arena *a, const char *text, const sql_token *tok)
{
    return sql_arena_strndup(a, text + tok->offset, (size_t)tok->len);
}

/* Copies a quoted token's body, turning each doubled quote into one. */
static char *unquote(sql_arena *a, const char *text, const sql_token *tok)
{
    const char *s = text + tok->offset;
    char quote = s[0];
    char *out = sql_arena_alloc(a, (size_t)tok->len);
    if (!out) return NULL;
    int n = 0;
    for (int i = 1; i < tok->len - 1; i++) {
        out[n++] = s[i];
        if (s[i] == quote) i++;
    }
    out[n] = '\0';
    return out;
}

char *sql_token_ident(sql_arena *a, const char *text, const sql_token *tok)
{
    if (text[tok->offset] == '"') return unquote(a, text, tok);
    char *out = sql_token_text(a, text, tok);
    if (!out) return NULL;
    for (char *p = out; *p; p++)
        *p = ascii_lower(*p);
    return out;
}

/* The value of an E'...' string (already checked by the scanner). */
static char *unescape(sql_arena *a, const char *text, const sql_token *tok)
{
    const char *s = text + tok->offset + 2;
    const char *stop = text + tok->offset + tok->len - 1;
    char *out = sql_arena_alloc(a, (size_t)tok->len);
    if (!out) return NULL;
    int n = 0;
    while (s < stop) {
        if (*s == '\'') {
            out[n++] = '\'';
            s += 2;
        } else if (*s == '\\') {
            int value, len = escape_at(s + 1, &value);
            s += 1 + len;
            if (value >= 0) {
                out[n++] = (char)value;
                continue;
            }
            unsigned cp = (unsigned)(-1 - value); /* UTF-8, at most 3 bytes for \uXXXX */
            if (cp < 0x80) {
                out[n++] = (char)cp;
            } else if (cp < 0x800) {
                out[n++] = (char)(0xC0 | (cp >> 6));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else {
                out[n++] = (char)(0xE0 | (cp >> 12));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
        } else {
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    return out;
}

char *sql_token_string(sql_arena *a, const char *text, const sql_token *tok)
{
    char first = text[tok->offset];
    return first == 'e' || first == 'E' ? unescape(a, text, tok) : unquote(a, text, tok);
}
