/*
 * result.h — the outcome of one statement, as the public API hands it out.
 *
 * A result is either a command tag alone ("CREATE TABLE", "COPY 60175") or a
 * set of rows plus a tag ("SELECT 3", "SHOW"). Rows are kept the way tables
 * keep them: a schema and a list of sealed sto_chunks, so an executor can
 * hand over the chunks its final pipeline fills without copying, and small
 * producers (SHOW, EXPLAIN) append rows one at a time. The public accessors
 * in include/rackdb.h (rackdb_result_*) read this struct; nothing else does.
 */
#ifndef RACKDB_ENGINE_RESULT_H
#define RACKDB_ENGINE_RESULT_H

#include <stdint.h>

#include "rackdb.h"
#include "storage/chunk.h"
#include "storage/column.h"
#include "storage/status.h"

typedef struct rackdb_result eng_result;

/* A result with a command tag and no rows. */
sto_status eng_result_new_tag(eng_result **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A result with rows of `schema` (copied). The tag defaults to "SELECT n"
 * once rows are in; eng_result_set_tag overrides it (SHOW). */
sto_status eng_result_new_rows(const sto_schema *schema, eng_result **out);

/* Replaces the command tag. */
sto_status eng_result_set_tag(eng_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends one row (strings are copied). */
sto_status eng_result_append_row(eng_result *r, const sto_value *values);

/* Hands a filled chunk built on this result's schema (eng_result_schema) to
 * the result, which seals and owns it from then on, also on failure. */
sto_status eng_result_append_chunk(eng_result *r, sto_chunk *chunk);

const sto_schema *eng_result_schema(const eng_result *r);

/* Records how long the statement took. */
void eng_result_set_elapsed(eng_result *r, double ms);

/* Records how long compiling the query's pipelines took (part of elapsed). */
void eng_result_set_compile_ms(eng_result *r, double ms);

/* Formats a non-NULL value of type t in PostgreSQL's text output format
 * ("t", "12.50", "1998-09-02", shortest round-trip doubles) into buf like
 * snprintf: returns the full length, writes at most size-1 bytes and a NUL. */
size_t eng_value_format(sto_type t, const sto_value *v, char *buf, size_t size);

#endif
