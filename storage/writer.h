/*
 * writer.h — COPY TO: a table written out as delimited text.
 *
 * The output has the format the loader reads (sto_text_format): dbgen style
 * with a delimiter after every field, CSV with an optional header line,
 * quoting only where needed, or PostgreSQL's text format. NULL is written as
 * an empty unquoted field (as \N in the text format); in CSV an empty string
 * is written as "", in the text format as an empty field, with backslash
 * escapes for backslashes, delimiters and control characters. The text goes to a temporary file in
 * the same directory, is fsynced and then renamed over `path`, so readers see
 * either the old file or the complete new one.
 */
#ifndef RACKDB_STORAGE_WRITER_H
#define RACKDB_STORAGE_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include "storage/loader.h"
#include "storage/status.h"
#include "storage/table.h"

/* Writes all rows of `t` to `path` atomically. `rows_written` may be NULL. */
sto_status sto_write_file(const sto_table *t, const char *path, const sto_text_format *fmt,
                          uint64_t *rows_written);

/* Writes all rows of `t` to an open stream (e.g. COPY TO STDOUT). */
sto_status sto_write_stream(const sto_table *t, FILE *out, const sto_text_format *fmt,
                            uint64_t *rows_written);

#endif
