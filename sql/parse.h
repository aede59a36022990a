/*
 * parse.h — SQL text in, syntax trees out.
 *
 * sql_parse runs the hand-written tokenizer (sql/token.c) and the lemon
 * grammar (sql/grammar.y) over a text holding one or more ';'-separated
 * statements and returns their trees (sql/ast.h), allocated in the caller's
 * arena. It checks syntax only; the binder checks meaning.
 *
 * Errors carry a SQLSTATE and the 1-based character position they refer to:
 * 42601 for syntax errors (`syntax error at or near "fromm"`, `syntax error
 * at end of input`, `unterminated quoted string at or near "'abc"`, ...),
 * 53200 when memory runs out. sql_format_error (sql/error_format.h) turns
 * one into psql-style text with a caret under the position.
 */
#ifndef RACKDB_SQL_PARSE_H
#define RACKDB_SQL_PARSE_H

#include "sql/arena.h"
#include "sql/ast.h"
#include "storage/status.h"

/* Parses every statement of text (NUL-terminated). On success *out is the
 * list of statements in order (count 0 when text holds only blanks,
 * comments and ';'), allocated in arena. On error *out is NULL; whatever was
 * allocated stays in the arena until it is destroyed. */
sto_status sql_parse(sql_arena *arena, const char *text, sql_stmt_list **out);

#endif
