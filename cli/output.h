/*
 * output.h — printing statement results in the shell's output modes.
 *
 * The shell hands every result that has rows to cli_print_result together
 * with the current mode:
 *   table     aligned columns like psql: header, a rule, numbers right-
 *             aligned, NULL blank, "(N rows)" footer
 *   csv       RFC 4180: header line, fields quoted when they hold a comma,
 *             quote or line break; NULL is an empty field, an empty string
 *             is ""
 *   json      an array of objects, one per row: numbers and booleans
 *             unquoted, NULL as null
 *   markdown  a pipe table with a header rule; numeric columns right-aligned
 * Widths count UTF-8 characters, not bytes, so non-ASCII text lines up.
 */
#ifndef RACKDB_CLI_OUTPUT_H
#define RACKDB_CLI_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "rackdb.h"

typedef enum cli_mode {
    CLI_MODE_TABLE,
    CLI_MODE_CSV,
    CLI_MODE_JSON,
    CLI_MODE_MARKDOWN,
} cli_mode;

/* "table" → CLI_MODE_TABLE; false for unknown names. */
bool cli_mode_parse(const char *name, cli_mode *out);
const char *cli_mode_name(cli_mode mode);

/* Prints the rows of r; false when memory ran out. */
bool cli_print_result(FILE *f, rackdb_result *r, cli_mode mode);

#endif
