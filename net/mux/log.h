/*
 * log.h — how net/mux reports what it closes or drops.
 *
 * Library code has no global logger: whoever creates a multiplexer passes a
 * log callback (NULL = standard error), and every module here writes through
 * it, one line per event.
 */
#ifndef RACKDB_NET_MUX_LOG_H
#define RACKDB_NET_MUX_LOG_H

typedef void (*mux_log_fn)(void *arg, const char *line);

/* Formats one line and hands it to fn (or writes it to stderr). */
void mux_logf(mux_log_fn fn, void *arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
