/*
 * error_format.h — errors shown the way psql shows them.
 *
 * Turns an error status and the statement text it refers to into the text a
 * person reads in the shell:
 *
 *   ERROR:  column "l_shipdat" does not exist
 *   LINE 1: select l_shipdat from lineitem
 *                  ^
 *
 * Only the line holding the error position is shown, numbered within the
 * statement; a line longer than 60 characters is cut to a window around the
 * position with "..." marking the cuts, and tabs print as single spaces so
 * the caret stays aligned — all as psql does it. Without a position only
 * the ERROR line is produced.
 */
#ifndef RACKDB_SQL_ERROR_FORMAT_H
#define RACKDB_SQL_ERROR_FORMAT_H

#include <stddef.h>

#include "storage/status.h"

/* Writes the formatted error for st (which refers to text; text may be NULL
 * when there is none) into buf, snprintf-style: at most size bytes including
 * the NUL, every line ending in '\n'. Returns the length the whole output
 * has, so a caller can retry with a larger buffer when it is >= size. */
size_t sql_format_error(const char *text, sto_status st, char *buf, size_t size);

#endif
