/*
 * error.c — the public error object: a status plus the statement text.
 *
 * Errors outlive the statement that raised them (a shell prints them after
 * the next line is read, a server sends them after cleanup), so the object
 * keeps its own copy of the text the position points into. When even that
 * copy cannot be made, a static out-of-memory error stands in; free leaves
 * it alone.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/instance.h"

struct rackdb_error {
    sto_status status;
    char *statement;
};

/* Handed out when no error object can be allocated; its NULL status reads
 * as the shared out-of-memory status. */
static const struct rackdb_error oom_error = {NULL, (char *)""};

static sto_status status_of(const rackdb_error *e)
{
    return e->status ? e->status : sto_error_oom();
}

sto_status eng_canceled_error(void)
{
    return sto_error(STO_QUERY_CANCELED, "canceling statement due to user request");
}

rackdb_error *eng_error_from_status(sto_status st, const char *stmt, size_t stmt_len)
{
    if (!st) st = sto_error(STO_INTERNAL_ERROR, "unknown error");
    rackdb_error *e = malloc(sizeof(*e));
    char *copy = malloc(stmt ? stmt_len + 1 : 1);
    if (!e || !copy) {
        free(e);
        free(copy);
        sto_status_free(st);
        return (rackdb_error *)&oom_error;
    }
    if (stmt) memcpy(copy, stmt, stmt_len);
    copy[stmt ? stmt_len : 0] = '\0';
    e->status = st;
    e->statement = copy;
    return e;
}

void rackdb_error_free(rackdb_error *e)
{
    if (!e || e == &oom_error) return;
    sto_status_free(e->status);
    free(e->statement);
    free(e);
}

const char *rackdb_error_sqlstate(const rackdb_error *e)
{
    return status_of(e)->sqlstate;
}

const char *rackdb_error_message(const rackdb_error *e)
{
    return status_of(e)->message;
}

int rackdb_error_position(const rackdb_error *e)
{
    return status_of(e)->position;
}

const char *rackdb_error_statement(const rackdb_error *e)
{
    return e->statement;
}

rackdb_error_class rackdb_error_class_of(const rackdb_error *e)
{
    const char *s = status_of(e)->sqlstate;
    if (strcmp(s, STO_QUERY_CANCELED) == 0) return RACKDB_ERR_CANCELED;
    if (strncmp(s, "42", 2) == 0) return RACKDB_ERR_SYNTAX;
    if (strncmp(s, "22", 2) == 0 || strncmp(s, "23", 2) == 0) return RACKDB_ERR_DATA;
    if (strncmp(s, "0A", 2) == 0) return RACKDB_ERR_UNSUPPORTED;
    if (strncmp(s, "53", 2) == 0) return RACKDB_ERR_RESOURCE;
    if (strncmp(s, "58", 2) == 0) return RACKDB_ERR_IO;
    if (strncmp(s, "XX", 2) == 0) return RACKDB_ERR_INTERNAL;
    return RACKDB_ERR_OTHER;
}
