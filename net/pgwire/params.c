/*
 * params.c — $n substitution (see params.h).
 *
 * The scanner knows just enough SQL lexing to tell where a $n is a
 * parameter: '...' strings (with '' inside), "..." identifiers, -- comments
 * to the end of the line and nested C-style (slash-star) comments. A $ directly after
 * an identifier character is part of that identifier.
 */
#include "net/pgwire/params.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "net/pgwire/protocol.h"
#include "storage/types.h"

/* Calls visit(arg, start, end, n) for each parameter token sql[start, end).
 * Returns the first non-NULL status visit returns. */
typedef sto_status (*visit_fn)(void *arg, size_t start, size_t end, long n);

static sto_status scan(const char *sql, visit_fn visit, void *arg)
{
    size_t i = 0;
    while (sql[i]) {
        char c = sql[i];
        if (c == '\'' || c == '"') {
            for (i++; sql[i]; i++) {
                if (sql[i] == c) {
                    if (sql[i + 1] == c)
                        i++;
                    else
                        break;
                }
            }
            if (sql[i]) i++;
        } else if (c == '-' && sql[i + 1] == '-') {
            while (sql[i] && sql[i] != '\n')
                i++;
        } else if (c == '/' && sql[i + 1] == '*') {
            int depth = 1;
            for (i += 2; sql[i] && depth; i++) {
                if (sql[i] == '/' && sql[i + 1] == '*')
                    depth++, i++;
                else if (sql[i] == '*' && sql[i + 1] == '/')
                    depth--, i++;
            }
        } else if (isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80) {
            /* an identifier or number, $ included */
            while (isalnum((unsigned char)sql[i]) || sql[i] == '_' || sql[i] == '$' ||
                   (unsigned char)sql[i] >= 0x80)
                i++;
        } else if (c == '$' && isdigit((unsigned char)sql[i + 1])) {
            size_t start = i++;
            long n = 0;
            while (isdigit((unsigned char)sql[i])) {
                if (n < 100000) n = n * 10 + (sql[i] - '0');
                i++;
            }
            STO_TRY(visit(arg, start, i, n));
        } else {
            i++;
        }
    }
    return STO_OK;
}

static sto_status visit_max(void *arg, size_t start, size_t end, long n)
{
    (void)start, (void)end;
    long *max = arg;
    if (n > *max) *max = n;
    return STO_OK;
}

int pgw_param_max(const char *sql)
{
    long max = 0;
    scan(sql, visit_max, &max);
    return max > 65535 ? 65535 : (int)max;
}

static bool ieq(const char *a, const char *b)
{
    return strcasecmp(a, b) == 0;
}

static sto_status bad_value(const char *type, const char *text)
{
    return sto_error(STO_INVALID_TEXT_REPRESENTATION, "invalid input syntax for type %s: \"%s\"",
                     type, text);
}

/* A string literal: '...' with quotes doubled. */
static sto_status append_quoted(pgw_buf *b, const char *text)
{
    pgw_buf_append_str(b, "'");
    for (const char *p = text; *p; p++) {
        if (*p == '\'') pgw_buf_append_str(b, "'");
        pgw_buf_append(b, p, 1);
    }
    pgw_buf_append_str(b, "'");
    return STO_OK;
}

/* Copy of text without leading and trailing blanks (PostgreSQL's input
 * functions accept them around numbers, booleans and dates). */
static char *trimmed(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = strlen(text);
    while (n && isspace((unsigned char)text[n - 1]))
        n--;
    return strndup(text, n);
}

static bool is_number(const char *s, bool allow_fraction)
{
    if (*s == '-' || *s == '+') s++;
    size_t digits = 0;
    while (isdigit((unsigned char)*s))
        s++, digits++;
    if (allow_fraction && *s == '.') {
        s++;
        while (isdigit((unsigned char)*s))
            s++, digits++;
    }
    return digits && !*s;
}

/* The literal for one value of type oid. */
static sto_status append_literal(pgw_buf *b, const pgw_param *p)
{
    if (!p->text) {
        pgw_buf_append_str(b, "NULL");
        return STO_OK;
    }
    const char *type = NULL;
    int64_t lo = 0, hi = 0, v;
    switch (p->oid) {
    case PGW_OID_INT2:
        type = "smallint", lo = INT16_MIN, hi = INT16_MAX;
        break;
    case PGW_OID_INT4:
        type = "integer", lo = INT32_MIN, hi = INT32_MAX;
        break;
    case PGW_OID_INT8:
        type = "bigint", lo = INT64_MIN, hi = INT64_MAX;
        break;
    case PGW_OID_OID:
        type = "oid", lo = 0, hi = UINT32_MAX;
        break;
    case PGW_OID_NUMERIC:
    case PGW_OID_FLOAT4:
    case PGW_OID_FLOAT8:
    case PGW_OID_BOOL:
    case PGW_OID_DATE:
        break;
    default:
        return append_quoted(b, p->text);
    }
    char *t = trimmed(p->text);
    if (!t) return sto_error_oom();
    sto_status st = STO_OK;
    if (type) {
        if (sto_int_parse(t, strlen(t), lo, hi, &v) != STO_PARSE_OK)
            st = bad_value(type, p->text);
        else if (v < 0)
            pgw_buf_append_str(b, "("), pgw_buf_append_str(b, t), pgw_buf_append_str(b, ")");
        else
            pgw_buf_append_str(b, t);
    } else if (p->oid == PGW_OID_NUMERIC) {
        if (!is_number(t, true))
            st = bad_value("numeric", p->text);
        else
            pgw_buf_append_str(b, "("), pgw_buf_append_str(b, t), pgw_buf_append_str(b, ")");
    } else if (p->oid == PGW_OID_FLOAT4 || p->oid == PGW_OID_FLOAT8) {
        char *end;
        strtod(t, &end);
        if (end == t || *end)
            st = bad_value("double precision", p->text);
        else
            pgw_buf_append_str(b, "CAST("), append_quoted(b, t),
                pgw_buf_append_str(b, " AS DOUBLE PRECISION)");
    } else if (p->oid == PGW_OID_BOOL) {
        static const char *const yes[] = {"t", "true", "y", "yes", "on", "1"};
        static const char *const no[] = {"f", "false", "n", "no", "off", "0"};
        int which = -1;
        for (int i = 0; i < 6; i++) {
            if (ieq(t, yes[i])) which = 1;
            if (ieq(t, no[i])) which = 0;
        }
        if (which < 0)
            st = bad_value("boolean", p->text);
        else
            pgw_buf_append_str(b, which ? "TRUE" : "FALSE");
    } else { /* date */
        int32_t days;
        if (!sto_date_parse(t, strlen(t), &days))
            st = bad_value("date", p->text);
        else
            pgw_buf_append_str(b, "DATE "), append_quoted(b, t);
    }
    free(t);
    return st;
}

typedef struct subst {
    const char *sql;
    size_t copied; /* sql[0, copied) is in out */
    int n;
    const pgw_param *params;
    pgw_buf out;
} subst;

static sto_status visit_subst(void *arg, size_t start, size_t end, long n)
{
    subst *s = arg;
    if (n < 1 || n > s->n)
        return sto_error_at(STO_PROTOCOL_VIOLATION, (int)start + 1, "there is no parameter $%ld",
                            n);
    pgw_buf_append(&s->out, s->sql + s->copied, start - s->copied);
    /* blanks around the literal keep it from gluing to neighbours */
    pgw_buf_append_str(&s->out, " ");
    STO_TRY(append_literal(&s->out, &s->params[n - 1]));
    pgw_buf_append_str(&s->out, " ");
    s->copied = end;
    return STO_OK;
}

sto_status pgw_substitute(const char *sql, int n, const pgw_param *params, char **out)
{
    *out = NULL;
    subst s = {sql, 0, n, params, {0}};
    sto_status st = scan(sql, visit_subst, &s);
    if (!st) {
        pgw_buf_append(&s.out, sql + s.copied, strlen(sql + s.copied) + 1);
        st = pgw_buf_status(&s.out);
    }
    if (st) {
        pgw_buf_free(&s.out);
        return st;
    }
    *out = s.out.data;
    return STO_OK;
}
