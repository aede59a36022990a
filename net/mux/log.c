/*
 * log.c — the one-line log helper of net/mux (see log.h).
 */
#include "net/mux/log.h"
#include <stdarg.h>
#include <stdio.h>

void mux_logf(mux_log_fn fn, void *arg, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (fn)
        fn(arg, line);
    else
        fprintf(stderr, "%s\n", line);
}
