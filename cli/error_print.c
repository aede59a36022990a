/*
 * error_print.c — psql-style error text for the shell, through
 * sql_format_error (which needs a sto_status: rebuilt here from the public
 * error object, whose insides the shell does not see).
 */
#include "cli/error_print.h"

#include <stdlib.h>
#include <string.h>

#include "sql/error_format.h"

void cli_print_error(FILE *f, const rackdb_error *e)
{
    sto_status st = sto_error_at(rackdb_error_sqlstate(e), rackdb_error_position(e), "%s",
                                 rackdb_error_message(e));
    const char *text = rackdb_error_statement(e);
    char small[512];
    size_t n = sql_format_error(text, st, small, sizeof(small));
    char *big = n >= sizeof(small) ? malloc(n + 1) : NULL;
    if (big) sql_format_error(text, st, big, n + 1);
    fputs(big ? big : small, f);
    free(big);
    sto_status_free(st);
    fflush(f);
}
