/*
 * error_print.h — statement errors the way psql shows them.
 *
 *   ERROR:  relation "nation" does not exist
 *   LINE 1: SELECT * FROM nation;
 *                         ^
 *
 * The LINE/caret part appears when the error has a position in its
 * statement's text (sql_format_error does the formatting).
 */
#ifndef RACKDB_CLI_ERROR_PRINT_H
#define RACKDB_CLI_ERROR_PRINT_H

#include <stdio.h>

#include "rackdb.h"

void cli_print_error(FILE *f, const rackdb_error *e);

#endif
