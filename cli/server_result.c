/*
 * server_result.c — one shape for the results the server sends: the
 * engine's results are read through the public API; results the server
 * builds itself (catalog answers) are rows of text cells.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/server.h"

srv_result *srv_result_from_engine(rackdb_result *r)
{
    srv_result *res = calloc(1, sizeof(*res));
    if (!res) {
        rackdb_result_free(r);
        return NULL;
    }
    res->engine = r;
    snprintf(res->tag, sizeof(res->tag), "%s", rackdb_result_tag(r));
    res->has_rows = rackdb_result_has_rows(r);
    res->ncols = rackdb_result_column_count(r);
    return res;
}

srv_result *srv_result_new_tag(const char *tag)
{
    srv_result *res = calloc(1, sizeof(*res));
    if (res) snprintf(res->tag, sizeof(res->tag), "%s", tag);
    return res;
}

srv_result *srv_result_new(uint32_t ncols, const char *const *names, const uint32_t *oids)
{
    srv_result *res = calloc(1, sizeof(*res));
    if (!res) return NULL;
    res->has_rows = true;
    res->ncols = ncols;
    res->names = calloc(ncols, sizeof(char *));
    res->oids = calloc(ncols, sizeof(uint32_t));
    if (!res->names || !res->oids) goto fail;
    for (uint32_t i = 0; i < ncols; i++) {
        if (!(res->names[i] = strdup(names[i]))) goto fail;
        res->oids[i] = oids[i];
    }
    snprintf(res->tag, sizeof(res->tag), "SELECT 0");
    return res;
fail:
    srv_result_free(res);
    return NULL;
}

bool srv_result_add_row(srv_result *r, const char *const *cells)
{
    char **grown = realloc(r->cells, (r->nrows + 1) * r->ncols * sizeof(char *) + 1);
    if (!grown) return false;
    r->cells = grown;
    char **row = r->cells + r->nrows * r->ncols;
    for (uint32_t i = 0; i < r->ncols; i++) {
        row[i] = NULL;
        if (cells[i] && !(row[i] = strdup(cells[i]))) {
            for (uint32_t j = 0; j < i; j++)
                free(row[j]);
            return false;
        }
    }
    r->nrows++;
    return true;
}

void srv_result_finish(srv_result *r)
{
    snprintf(r->tag, sizeof(r->tag), "SELECT %llu", (unsigned long long)r->nrows);
}

void srv_result_free(srv_result *r)
{
    if (!r) return;
    if (r->engine) rackdb_result_free(r->engine);
    if (r->names)
        for (uint32_t i = 0; i < r->ncols; i++)
            free(r->names[i]);
    for (uint64_t i = 0; r->cells && i < r->nrows * r->ncols; i++)
        free(r->cells[i]);
    free(r->names);
    free(r->oids);
    free(r->cells);
    free(r);
}

uint64_t srv_result_rows(const srv_result *r)
{
    return r->engine ? rackdb_result_row_count(r->engine) : r->nrows;
}

const char *srv_result_name(const srv_result *r, uint32_t col)
{
    return r->engine ? rackdb_result_column_name(r->engine, col) : r->names[col];
}

uint32_t srv_result_oid(const srv_result *r, uint32_t col)
{
    return r->engine ? rackdb_result_column_oid(r->engine, col) : r->oids[col];
}

/* PostgreSQL's typmod: numeric(p,s) -> (p << 16 | s) + 4, char(n)/varchar(n)
 * -> n + 4, -1 otherwise. The engine names its types "DECIMAL(15,2)". */
int32_t srv_result_typmod(const srv_result *r, uint32_t col)
{
    if (!r->engine) return -1;
    const char *t = rackdb_result_column_type(r->engine, col);
    const char *paren = t ? strchr(t, '(') : NULL;
    if (!paren) return -1;
    int a = 0, b = 0;
    int n = sscanf(paren, "(%d,%d)", &a, &b);
    if (n == 2) return (int32_t)(((uint32_t)a << 16 | (uint32_t)b) + 4);
    if (n == 1) return a + 4;
    return -1;
}

const char *srv_result_text(srv_result *r, uint64_t row, uint32_t col)
{
    if (r->engine) return rackdb_result_text(r->engine, row, col);
    return r->cells[row * r->ncols + col];
}
