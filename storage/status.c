/*
 * status.c — construction and release of error values (see status.h).
 */
#include "storage/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read-only: handed out when there is no memory left to describe an error. */
static const struct {
    char sqlstate[6];
    int position;
    char message[16];
} oom_status = {"53200", 0, "out of memory"};

sto_status sto_error_oom(void)
{
    return (sto_status)&oom_status;
}

sto_status sto_error_v(const char *sqlstate, int position, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (len < 0) len = 0;
    sto_status st = malloc(sizeof(*st) + (size_t)len + 1);
    if (!st) return sto_error_oom();
    memcpy(st->sqlstate, sqlstate, 5);
    st->sqlstate[5] = '\0';
    st->position = position;
    vsnprintf(st->message, (size_t)len + 1, fmt, ap);
    return st;
}

sto_status sto_error(const char *sqlstate, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sto_status st = sto_error_v(sqlstate, 0, fmt, ap);
    va_end(ap);
    return st;
}

sto_status sto_error_at(const char *sqlstate, int position, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sto_status st = sto_error_v(sqlstate, position, fmt, ap);
    va_end(ap);
    return st;
}

sto_status sto_status_wrap(sto_status st, const char *fmt, ...)
{
    if (!st || st == sto_error_oom()) return st;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    sto_status wrapped = sto_error_at(st->sqlstate, st->position, "%s: %s", prefix, st->message);
    if (wrapped == sto_error_oom()) return st;
    sto_status_free(st);
    return wrapped;
}

void sto_status_free(sto_status st)
{
    if (st && st != sto_error_oom()) free(st);
}
